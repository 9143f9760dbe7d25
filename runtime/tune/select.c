/* select.c - reads and validates a selection file (harness/FORMATS.md,
 * "Selection (selection.json)") for libcgtune.so.
 *
 * The text is parsed by the generator's JSON reader (gen/json.c: cJSON plus
 * a position on every value), so every error names file:line:col. Any
 * error rejects the whole file: a partly applied selection would run a
 * mixture nobody measured. No MPI calls here (MPI's headers only, for the
 * registry's types), so the lookup benchmark links it without a job.
 */
#include "cgtune.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

const char *const cgt_reason_names[CGT_R_COUNT_] = {
#define X(ID, name, what) name,
    CGT_REASON_TABLE(X)
#undef X
};

struct loader {
    struct cg_diag *d;
    const char *file;
    cgt_find_fn find;
};

static void bad(struct loader *L, const struct cg_json *v, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void bad(struct loader *L, const struct cg_json *v, const char *fmt, ...)
{
    struct cg_pos none = { 0, 0 };
    va_list ap;
    va_start(ap, fmt);
    cg_verror(L->d, L->file, v != NULL ? v->pos : none, fmt, ap);
    va_end(ap);
}

/* An integer lo..hi in v (NULL: absent, not an error). */
static int get_int(struct loader *L, const struct cg_json *v, const char *what, long long lo,
                   long long hi, long long *out)
{
    if ((v->kind != CG_J_NUMBER) || !v->is_int) {
        bad(L, v, "%s must be an integer, not %s", what,
            v->kind == CG_J_NUMBER ? v->text : cg_json_kind_name(v->kind));
        return -1;
    }
    if ((v->ival < lo) || (v->ival > hi)) {
        bad(L, v, "%s = %lld is out of range (%lld..%lld)", what, (long long)v->ival, lo, hi);
        return -1;
    }
    *out = v->ival;
    return 0;
}

/* An inclusive range [lo, hi] of integers in min..max. */
static int get_range(struct loader *L, const struct cg_json *v, const char *what,
                     long long min, long long max, long long out[2])
{
    if ((v->kind != CG_J_ARRAY) || (v->nitems != 2)) {
        bad(L, v, "%s must be an inclusive range [lo, hi] of two integers", what);
        return -1;
    }
    if ((get_int(L, v->items[0], what, min, max, &out[0]) != 0) ||
        (get_int(L, v->items[1], what, min, max, &out[1]) != 0)) {
        return -1;
    }
    if (out[0] > out[1]) {
        bad(L, v, "%s [%lld, %lld] is empty (lo > hi)", what, out[0], out[1]);
        return -1;
    }
    return 0;
}

static const struct cg_json *string_member(struct loader *L, const struct cg_json *obj,
                                           const char *key, int required, const char *what)
{
    const struct cg_json *v = cg_json_get(obj, key);
    if (v == NULL) {
        if (required) {
            bad(L, obj, "%s has no \"%s\"", what, key);
        }
        return NULL;
    }
    if (v->kind != CG_J_STRING) {
        bad(L, v, "\"%s\" must be a string, not %s", key, cg_json_kind_name(v->kind));
        return NULL;
    }
    return v;
}

/* "generated:<schedule>", "baseline:<name>", "native:default", "native:<alg>". */
static int parse_impl(struct loader *L, const struct cg_json *v, struct cgt_rule *r)
{
    static const struct {
        const char *prefix;
        enum cgt_kind kind;
    } kinds[] = {
        { "generated:", CGT_GENERATED },
        { "baseline:", CGT_BASELINE },
        { "native:", CGT_NATIVE_ALG },
    };
    const char *s = v->str;

    if (strlen(s) >= sizeof(r->impl)) {
        bad(L, v, "implementation name too long (%zu characters)", strlen(s));
        return -1;
    }
    snprintf(r->impl, sizeof(r->impl), "%s", s);
    for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
        size_t n = strlen(kinds[i].prefix);
        if ((strncmp(s, kinds[i].prefix, n) != 0) || (s[n] == '\0')) {
            continue;
        }
        const char *name = s + n;
        r->kind = kinds[i].kind;
        if (r->kind == CGT_NATIVE_ALG) {
            if (strcmp(name, "default") == 0) {
                r->kind = CGT_NATIVE_DEFAULT;
            }
            return 0;
        }
        r->algo = L->find(r->kind, name);
        if (r->algo == NULL) {
            bad(L, v, "'%s' is not built into this libcgtune.so (no %s '%s' in %s)", s,
                r->kind == CGT_GENERATED ? "schedule" : "baseline", name,
                r->kind == CGT_GENERATED ? "emitted/registry.c: schedules/ at build time"
                                         : "harness/baselines");
            return -1;
        }
        if ((int)r->algo->coll != r->coll) {
            bad(L, v, "'%s' is a %s implementation; the rule is for %s", s,
                cg_colls[r->algo->coll].name, cg_colls[r->coll].name);
            return -1;
        }
        return 0;
    }
    bad(L, v, "unknown implementation '%s'; expected generated:<schedule>, baseline:<name>, "
        "native:default or native:<algorithm>", s);
    return -1;
}

static int parse_params(struct loader *L, const struct cg_json *v, struct cgt_rule *r)
{
    if (v->kind != CG_J_OBJECT) {
        bad(L, v, "\"params\" must be an object of integers");
        return -1;
    }
    if ((r->kind != CGT_GENERATED) && (v->nitems > 0)) {
        bad(L, v, "\"params\" are for generated schedules; '%s' takes none", r->impl);
        return -1;
    }
    if (v->nitems > CGT_MAX_PARAMS) {
        bad(L, v, "more than %d params", CGT_MAX_PARAMS);
        return -1;
    }
    for (int i = 0; i < v->nitems; i++) {
        const struct cg_json *m = v->items[i];
        const struct cg_param_info *pi = NULL;
        long long val = 0;
        for (int k = 0; k < r->algo->nparams; k++) {
            if (strcmp(r->algo->params[k].name, m->key) == 0) {
                pi = &r->algo->params[k];
            }
        }
        if (pi == NULL) {
            struct cg_json at = *m;
            at.pos = m->key_pos;
            bad(L, &at, "schedule '%s' has no parameter '%s'%s", r->algo->name, m->key,
                r->algo->nparams == 0 ? " (it has none)" : "");
            return -1;
        }
        char what[96];
        snprintf(what, sizeof(what), "parameter '%s' (verified %d..%d)", pi->name, pi->lo,
                 pi->hi);
        if (get_int(L, m, what, pi->lo, pi->hi, &val) != 0) {
            return -1;
        }
        snprintf(r->params[r->nparams].name, sizeof(r->params[0].name), "%s", pi->name);
        r->params[r->nparams].value = (int)val;
        r->nparams++;
    }
    return 0;
}

static int parse_rule(struct loader *L, const struct cg_json *o, struct cgt_rule *r)
{
    static const char *const known[] = { "collective", "p", "ppn", "bytes", "implementation",
                                         "params", NULL };
    const struct cg_json *v = NULL;
    long long rg[2];
    int errors = L->d->errors;

    memset(r, 0, sizeof(*r));
    r->line = o->pos.line;
    r->col = o->pos.col;
    r->p_lo = 1;
    r->p_hi = INT_MAX;
    r->b_lo = 0;
    r->b_hi = ULLONG_MAX;
    if (o->kind != CG_J_OBJECT) {
        bad(L, o, "a rule must be an object, not %s", cg_json_kind_name(o->kind));
        return -1;
    }
    if (cg_json_check_keys(L->d, L->file, o, "a rule", known) > 0) {
        return -1;
    }
    if ((v = string_member(L, o, "collective", 1, "the rule")) == NULL) {
        return -1;
    }
    r->coll = cg_coll_lookup(v->str);
    if (r->coll < 0) {
        bad(L, v, "unknown collective '%s' (the 11 of runtime/cg_colls.h: allreduce, allgather, "
            "reduce_scatter_block, bcast, reduce, gather, scatter, alltoall, scan, exscan, "
            "barrier)", v->str);
        return -1;
    }
    if ((v = cg_json_get(o, "p")) != NULL) {
        if (get_range(L, v, "\"p\"", 1, INT_MAX, rg) != 0) {
            return -1;
        }
        r->p_lo = (int)rg[0];
        r->p_hi = (int)rg[1];
    }
    if ((v = cg_json_get(o, "ppn")) != NULL) {
        if (get_range(L, v, "\"ppn\"", 1, INT_MAX, rg) != 0) {
            return -1;
        }
        r->has_ppn = 1;
        r->ppn_lo = (int)rg[0];
        r->ppn_hi = (int)rg[1];
    }
    if ((v = cg_json_get(o, "bytes")) != NULL) {
        if (get_range(L, v, "\"bytes\"", 0, INT64_MAX, rg) != 0) {
            return -1;
        }
        r->b_lo = (unsigned long long)rg[0];
        r->b_hi = (unsigned long long)rg[1];
    } else {
        bad(L, o, "the rule has no \"bytes\" range (use [0, %lld] for every size)",
            (long long)INT64_MAX);
        return -1;
    }
    if ((v = string_member(L, o, "implementation", 1, "the rule")) == NULL) {
        return -1;
    }
    if (parse_impl(L, v, r) != 0) {
        return -1;
    }
    if ((v = cg_json_get(o, "params")) != NULL) {
        if (parse_params(L, v, r) != 0) {
            return -1;
        }
    }
    return L->d->errors > errors ? -1 : 0;
}

static int overlaps(const struct cgt_rule *a, const struct cgt_rule *b)
{
    if ((a->coll != b->coll) || (a->p_hi < b->p_lo) || (b->p_hi < a->p_lo) ||
        (a->b_hi < b->b_lo) || (b->b_hi < a->b_lo)) {
        return 0;
    }
    /* A rule without a ppn range holds every ppn (and irregular communicators). */
    if (a->has_ppn && b->has_ppn && ((a->ppn_hi < b->ppn_lo) || (b->ppn_hi < a->ppn_lo))) {
        return 0;
    }
    return 1;
}

static unsigned long long fnv1a64(const char *p, size_t n)
{
    unsigned long long h = 1469598103934665603ULL;
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)p[i];
        h *= 1099511628211ULL;
    }
    return h;
}

static int cmp_coll(const void *a, const void *b)
{
    const struct cgt_rule *x = a, *y = b;
    if (x->coll != y->coll) {
        return x->coll < y->coll ? -1 : 1;
    }
    /* file order within a collective: line, then column */
    if (x->line != y->line) {
        return x->line < y->line ? -1 : 1;
    }
    return (x->col > y->col) - (x->col < y->col);
}

int cgt_selection_load(const char *path, const char *flavour, cgt_find_fn find, FILE *msgs,
                       struct cgt_selection *s)
{
    static const char *const known[] = { "schema", "kind", "library", "campaign",
                                         "campaign_hash", "rules", NULL };
    struct cg_arena arena = { 0 };
    struct cg_diag d;
    struct loader L = { &d, path, find };
    const struct cg_json *root = NULL, *v = NULL, *rules = NULL;
    char *text = NULL;
    size_t len = 0;
    long long schema = 0;
    int nr = 0;

    memset(s, 0, sizeof(*s));
    cg_diag_init(&d, msgs);
    snprintf(s->path, sizeof(s->path), "%s", path);
    text = cg_read_file(&arena, &d, path, &len);
    if (text == NULL) {
        goto out;
    }
    s->hash = fnv1a64(text, len);
    root = cg_json_parse(&arena, &d, path, text, len);
    if (root == NULL) {
        goto out;
    }
    if (root->kind != CG_J_OBJECT) {
        bad(&L, root, "a selection is a JSON object, not %s", cg_json_kind_name(root->kind));
        goto out;
    }
    if (cg_json_check_keys(&d, path, root, "a selection", known) > 0) {
        goto out;
    }
    if ((v = cg_json_get(root, "schema")) == NULL) {
        bad(&L, root, "the selection has no \"schema\" (expected 1)");
        goto out;
    }
    if (get_int(&L, v, "\"schema\"", 1, 1, &schema) != 0) {
        goto out;
    }
    if ((v = string_member(&L, root, "kind", 1, "the selection")) == NULL) {
        goto out;
    }
    if (strcmp(v->str, "collgen-selection") != 0) {
        bad(&L, v, "\"kind\" is '%s'; a selection's is 'collgen-selection'", v->str);
        goto out;
    }
    if ((v = string_member(&L, root, "library", 1, "the selection")) == NULL) {
        goto out;
    }
    if ((strcmp(v->str, "openmpi") != 0) && (strcmp(v->str, "mpich") != 0)) {
        bad(&L, v, "\"library\" is '%s'; expected 'openmpi' or 'mpich'", v->str);
        goto out;
    }
    snprintf(s->library, sizeof(s->library), "%s", v->str);
    if (strcmp(v->str, flavour) != 0) {
        /* Why a warning: generated schedules run the same under either
         * library, only the timings that chose them were another's. */
        fprintf(d.sink, "%s:%d:%d: warning: the campaign measured %s; this libcgtune.so is "
                "built for %s (the choices are used, the timings behind them are %s's)\n",
                path, v->pos.line, v->pos.col, v->str, flavour, v->str);
    }
    if ((v = string_member(&L, root, "campaign", 0, "the selection")) != NULL) {
        snprintf(s->campaign, sizeof(s->campaign), "%s", v->str);
    }
    if ((v = string_member(&L, root, "campaign_hash", 0, "the selection")) != NULL) {
        snprintf(s->campaign_hash, sizeof(s->campaign_hash), "%s", v->str);
    }
    if (d.errors > 0) {
        goto out;
    }
    if ((rules = cg_json_get(root, "rules")) == NULL) {
        bad(&L, root, "the selection has no \"rules\" (an array; [] passes every call)");
        goto out;
    }
    if (rules->kind != CG_J_ARRAY) {
        bad(&L, rules, "\"rules\" must be an array, not %s", cg_json_kind_name(rules->kind));
        goto out;
    }
    s->rules = calloc((size_t)rules->nitems + 1, sizeof(*s->rules));
    if (s->rules == NULL) {
        bad(&L, rules, "out of memory for %d rules", rules->nitems);
        goto out;
    }
    for (int i = 0; i < rules->nitems; i++) {
        if (parse_rule(&L, rules->items[i], &s->rules[nr]) == 0) {
            nr++;
        }
    }
    if (d.errors > 0) {
        goto out;
    }
    for (int i = 0; i < nr; i++) {
        for (int j = 0; j < i; j++) {
            if (overlaps(&s->rules[i], &s->rules[j])) {
                const struct cgt_rule *a = &s->rules[j], *b = &s->rules[i];
                struct cg_pos at = { b->line, b->col }, first = { a->line, a->col };
                cg_error(&d, path, at,
                         "this %s rule (%s) overlaps the one at line %d (%s): rules of one "
                         "collective must not share a (p, ppn, bytes) point",
                         cg_colls[b->coll].name, b->impl, a->line, a->impl);
                cg_note(&d, path, first, "the other rule");
            }
        }
    }
    if (d.errors > 0) {
        goto out;
    }
    qsort(s->rules, (size_t)nr, sizeof(*s->rules), cmp_coll);
    s->nrules = nr;
    for (int i = nr - 1; i >= 0; i--) {
        s->first[s->rules[i].coll] = i;
        s->n[s->rules[i].coll]++;
        s->needs_ppn[s->rules[i].coll] |= s->rules[i].has_ppn;
    }
out:
    if (d.errors > 0) {
        unsigned long long h = s->hash;
        cgt_selection_free(s);
        snprintf(s->path, sizeof(s->path), "%s", path);
        s->hash = h;
    }
    cg_arena_fini(&arena);
    return d.errors;
}

void cgt_selection_free(struct cgt_selection *s)
{
    free(s->rules);
    memset(s, 0, sizeof(*s));
}
