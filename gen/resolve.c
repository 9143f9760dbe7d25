/* resolve.c - pass 2b: call steps and fallbacks bound to the schedules they
 * name.
 *
 * After check (which knows one schedule) and before verify (which simulates
 * a callee's collective, and tests a fallback as a schedule of its own): a
 * call step's "use" and a topology schedule's "fallback" name a generated
 * schedule, found among those loaded (load.h), else under
 * schedules/<collective>/, else anywhere under schedules/ (so that a callee
 * of the wrong collective is found and reported as such). The callees
 * loaded here belong to the set and are freed with it.
 *
 * Owns: unknown callees and fallbacks, a callee or fallback of another
 * collective, self calls, nested calls, a callee or fallback that needs a
 * commutative op the caller does not require, a generated callee of p equal
 * blocks called from a schedule of uneven blocks, and a fallback that needs
 * a topology itself.
 */
#include <string.h>

#include "load.h"
#include "passes.h"

/* The generated schedule `name` of collective coll (for where to look
 * first), or NULL. */
static const struct cg_schedule *find(struct cg_gen *g, struct cg_set *set, const char *name,
                                      enum cg_coll_kind coll)
{
    const struct cg_schedule *s = cg_set_find(set, name);
    if (s == NULL) {
        char dir[256];
        snprintf(dir, sizeof(dir), "schedules/%s", cg_colls[coll].name);
        s = cg_set_load_named(g, set, dir, name);
    }
    if (s == NULL) {
        s = cg_set_load_named(g, set, "schedules", name);
    }
    return s;
}

static void resolve_call(struct cg_gen *g, struct cg_set *set, struct cg_schedule *s,
                         struct cg_step *st)
{
    enum cg_coll_kind cc = (enum cg_coll_kind)st->call_coll;
    if (strcmp(st->call_use, s->name) == 0) {
        cg_error(&g->diag, s->file, st->use_pos, "schedule '%s' calls itself", s->name);
        return;
    }
    const struct cg_schedule *callee = find(g, set, st->call_use, cc);
    if (callee == NULL) {
        cg_error(&g->diag, s->file, st->use_pos,
                 "call step: no schedule '%s' (looked under schedules/); \"use\" names "
                 "a %s schedule or \"native\"", st->call_use, cg_colls[cc].name);
    } else if (callee->coll != cc) {
        cg_error(&g->diag, s->file, st->use_pos,
                 "call step: schedule '%s' is a %s schedule, but this step calls %s",
                 st->call_use, cg_colls[callee->coll].name, cg_colls[cc].name);
    } else if (cg_has_calls(callee)) {
        cg_error(&g->diag, s->file, st->use_pos,
                 "call step: '%s' has call steps itself; nested calls are not supported",
                 st->call_use);
    } else if (callee->commutative && !s->commutative) {
        cg_error(&g->diag, s->file, st->use_pos,
                 "call step: '%s' needs a commutative op; add \"requires\": "
                 "{\"commutative\": true}", st->call_use);
    } else if (cg_colls[s->coll].shape == CG_SHAPE_SPLIT &&
               (cg_colls[cc].shape == CG_SHAPE_UNIFORM || cg_colls[cc].shape == CG_SHAPE_ONE)) {
        cg_error(&g->diag, s->file, st->use_pos,
                 "call step: blocks of %s have uneven sizes, which a generated %s "
                 "cannot take (it needs p equal blocks); use \"native\", which falls "
                 "back to the v-variant", cg_colls[s->coll].name, cg_colls[cc].name);
    } else {
        st->callee = callee;
    }
}

static void resolve_fallback(struct cg_gen *g, struct cg_set *set, struct cg_schedule *s)
{
    const struct cg_schedule *fb = find(g, set, s->fallback, s->coll);
    if (fb == NULL) {
        cg_error(&g->diag, s->file, s->fallback_pos,
                 "fallback: no schedule '%s' (looked under schedules/); it names a %s "
                 "schedule without \"topology\", run where the communicator is not regular",
                 s->fallback, cg_colls[s->coll].name);
    } else if (fb->coll != s->coll) {
        cg_error(&g->diag, s->file, s->fallback_pos,
                 "fallback: schedule '%s' is a %s schedule; this one is %s", s->fallback,
                 cg_colls[fb->coll].name, cg_colls[s->coll].name);
    } else if (fb->topology) {
        cg_error(&g->diag, s->file, s->fallback_pos,
                 "fallback: '%s' needs a topology itself; a fallback must run on any "
                 "communicator", s->fallback);
    } else if (fb->commutative && !s->commutative) {
        cg_error(&g->diag, s->file, s->fallback_pos,
                 "fallback: '%s' needs a commutative op; add \"requires\": "
                 "{\"commutative\": true}", s->fallback);
    } else {
        s->fallback_s = fb;
    }
}

int cg_resolve(struct cg_gen *g, struct cg_set *set, struct cg_schedule *s)
{
    int before = g->diag.errors;
    for (int pi = 0; pi < s->nphases; pi++) {
        for (int k = 0; k < s->phases[pi].nsteps; k++) {
            struct cg_step *st = &s->phases[pi].steps[k];
            if (st->kind == CG_STEP_CALL && st->call_use != NULL) {
                resolve_call(g, set, s, st);
            }
        }
    }
    if (s->topology && s->fallback != NULL) {
        resolve_fallback(g, set, s);
    }
    return g->diag.errors > before ? -1 : 0;
}
