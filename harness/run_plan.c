/* run_plan.c - a validated test x platform -> the plan: jobs (one launch per
 * library, process count and knob setting) holding points (one collective
 * call measured with one implementation); and the templates that turn a job
 * into a command line or a batch script.
 *
 * Why one job per knob setting: MPI libraries read their algorithm
 * variables once, at MPI_Init, so native:<algorithm> needs its own launch.
 * native:default and every generated point run under the library's
 * defaults and share one launch.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "run_internal.h"
#include "run_baseline.h"

/* Most parameters of one schedule a test sweeps at once. */
#define CG_MAX_SWEPT 16

/* ---- templates ---------------------------------------------------------- */

void cg_vars_set(struct cg_vars *v, const char *name, const char *value)
{
    for (int i = 0; i < v->n; i++) {
        if (strcmp(v->name[i], name) == 0) {
            v->value[i] = value;
            return;
        }
    }
    if (v->n == CG_VARS_MAX) {
        cg_panic("too many template variables (%d)", CG_VARS_MAX);
    }
    v->name[v->n] = name;
    v->value[v->n] = value;
    v->n++;
}

char *cg_expand(struct cg_arena *a, const char *tmpl, const struct cg_vars *v)
{
    size_t cap = strlen(tmpl) + 1;
    for (const char *c = tmpl; (c = strchr(c, '{')) != NULL; c++) {
        for (int i = 0; i < v->n; i++) {
            cap += strlen(v->value[i]);
        }
    }
    char *out = cg_arena_alloc(a, cap), *w = out;
    for (const char *c = tmpl; *c; c++) {
        if (*c != '{') {
            *w++ = *c;
            continue;
        }
        const char *e = strchr(c, '}');
        if (e == NULL) {
            return NULL;
        }
        size_t n = (size_t)(e - c - 1);
        const char *val = NULL;
        for (int i = 0; i < v->n; i++) {
            if (strlen(v->name[i]) == n && strncmp(v->name[i], c + 1, n) == 0) {
                val = v->value[i];
            }
        }
        if (val == NULL) {
            return NULL;
        }
        size_t k = strlen(val);
        memcpy(w, val, k);
        w += k;
        c = e;
    }
    *w = '\0';
    return out;
}

static char *expand_or_panic(struct cg_arena *a, const char *tmpl, const struct cg_vars *v)
{
    char *s = cg_expand(a, tmpl, v);
    if (s == NULL) {
        cg_panic("template '%s' has a placeholder validation should have rejected", tmpl);
    }
    return s;
}

static char *upper(struct cg_arena *a, const char *s)
{
    char *u = cg_arena_strdup(a, s);
    for (char *c = u; *c; c++) {
        *c = (char)toupper((unsigned char)*c);
    }
    return u;
}

/* ---- points and jobs ----------------------------------------------------- */

const char *cg_point_coll_name(enum cg_coll coll)
{
    return coll == CG_PT_LANE_PATTERN ? "lane_pattern" : cg_colls[coll].name;
}

int cg_point_coll_by_name(const char *name)
{
    if (name == NULL) {
        return -1;
    }
    if (strcmp(name, "lane_pattern") == 0) {
        return (int)CG_PT_LANE_PATTERN;
    }
    return cg_coll_by_name(name);
}

/* Both from the table (runtime/cg_colls.h), as bench's records have them;
 * the lane pattern (no collective) counts its bytes and a factor of 1. */
int64_t cg_point_size_B(const struct cg_point *pt, int ranks)
{
    return ((int)pt->coll < CG_COLL_COUNT_)
               ? (int64_t)cg_coll_size_B((int)pt->coll, ranks, (double)pt->bytes, 1.0)
               : pt->bytes;
}

double cg_point_busbw_factor(enum cg_coll coll, int ranks)
{
    /* NAN for barrier: run.c writes null for it (factor >= 0 is false) */
    return ((int)coll < CG_COLL_COUNT_) ? cg_coll_busbw_factor((int)coll, ranks) : 1.0;
}

/* A growable array of anything, in the arena. */
static void *grow(struct cg_arena *a, void *old, int n, int *cap, size_t size)
{
    if (n < *cap) {
        return old;
    }
    int ncap = *cap ? *cap * 2 : 16;
    void *p = cg_arena_alloc(a, size * (size_t)ncap);
    if (n > 0) {
        memcpy(p, old, size * (size_t)n);
    }
    *cap = ncap;
    return p;
}

struct builder {
    struct cg_arena *a;            /* where the plan goes */
    struct cg_plan *plan;          /* what is built */
    int jcap;                      /* capacity of plan->jobs */
    int ncap;                      /* capacity of plan->notes */
    const struct cg_test *t;       /* the test */
    const struct cg_registry *reg; /* the schedules */
};

struct list {
    const char **s; /* strings */
    int n;          /* used */
    int cap;        /* allocated */
};

static void list_add_unique(struct cg_arena *a, struct list *l, const char *s)
{
    for (int i = 0; i < l->n; i++) {
        if (strcmp(l->s[i], s) == 0) {
            return;
        }
    }
    l->s = grow(a, l->s, l->n, &l->cap, sizeof(char *));
    l->s[l->n++] = s;
}

static void note(struct builder *b, const char *text)
{
    for (int i = 0; i < b->plan->nnotes; i++) {
        if (strcmp(b->plan->notes[i], text) == 0) {
            return;
        }
    }
    b->plan->notes = grow(b->a, b->plan->notes, b->plan->nnotes, &b->ncap, sizeof(char *));
    b->plan->notes[b->plan->nnotes++] = text;
}

/* generated:<schedule>, or one implementation per combination of the
 * values the test sweeps of its parameters ("params"), in the order given,
 * the last parameter varying fastest: generated:<schedule>(radix=2,...). */
static void add_generated(struct builder *b, struct list *shared, const struct cg_sched_entry *se)
{
    const struct cg_param_sweep *sw[CG_MAX_SWEPT];
    int n = 0;
    long combos = 1;
    for (int i = 0; i < b->t->npsweeps && n < CG_MAX_SWEPT; i++) {
        if (b->t->psweeps[i].sched == se) {
            sw[n++] = &b->t->psweeps[i];
            combos *= sw[n - 1]->nvalues;
        }
    }
    if (n == 0) {
        list_add_unique(b->a, shared, cg_arena_printf(b->a, "generated:%s", se->name));
        return;
    }
    for (long c = 0; c < combos; c++) {
        const char *args = "";
        long rest = c;
        for (int k = n - 1; k >= 0; k--) {
            args = cg_arena_printf(b->a, "%s=%d%s%s", sw[k]->param->name,
                                   sw[k]->values[rest % sw[k]->nvalues], *args ? "," : "", args);
            rest /= sw[k]->nvalues;
        }
        list_add_unique(b->a, shared, cg_arena_printf(b->a, "generated:%s(%s)", se->name, args));
    }
}

static int impl_applies(const struct cg_impl_req *im, const struct cg_library *lib)
{
    if (im->nlibs == 0) {
        return 1;
    }
    for (int i = 0; i < im->nlibs; i++) {
        if (strcmp(im->libs[i], lib->name) == 0) {
            return 1;
        }
    }
    return 0;
}

/* Splits a collective's implementations for one library and process count
 * into those of the default job (native:default, generated:*, bound:*) and
 * the algorithms to force, each in the order the test gives. */
static void resolve(struct builder *b, const struct cg_coll_req *cr, const struct cg_library *lib,
                    int ranks, struct list *shared, struct list *forced)
{
    for (int i = 0; i < cr->nimpls; i++) {
        const struct cg_impl_req *im = &cr->impls[i];
        if (!impl_applies(im, lib)) {
            continue;
        }
        switch (im->kind) {
        case CG_IMPL_NATIVE_DEFAULT:
            list_add_unique(b->a, shared, "native:default");
            break;
        case CG_IMPL_GENERATED:
        case CG_IMPL_GENERATED_ALL:
            for (int k = 0; k < b->reg->n; k++) {
                const struct cg_sched_entry *se = &b->reg->s[k];
                if (se->coll != cr->coll ||
                    (im->kind == CG_IMPL_GENERATED && strcmp(se->name, im->name) != 0)) {
                    continue;
                }
                /* A GPU library runs only the schedules with a CUDA twin. */
                if (strcmp(lib->backend, "nccl") == 0 && !se->gpu) {
                    note(b, cg_arena_printf(b->a, "%s leaves out %s for %s: it has call steps, "
                                            "so the GPU backend has no version of it",
                                            im->text, se->name, lib->name));
                    continue;
                }
                add_generated(b, shared, se);
            }
            break;
        case CG_IMPL_BASELINE:
        case CG_IMPL_BASELINE_ALL:
            for (int k = 0; k < cg_baseline_count(); k++) {
                if (cg_baseline_coll(k) == cr->coll && (im->kind == CG_IMPL_BASELINE_ALL ||
                                                        strcmp(cg_baseline_name(k), im->name) == 0)) {
                    list_add_unique(b->a, shared, cg_arena_printf(b->a, "baseline:%s",
                                                                  cg_baseline_name(k)));
                }
            }
            break;
        case CG_IMPL_BOUND:
            /* Validation let it through for allreduce only. */
            if (cr->coll == CG_COLL_ALLREDUCE) {
                list_add_unique(b->a, shared, cg_arena_printf(b->a, "bound:%s", im->name));
            }
            break;
        case CG_IMPL_NATIVE:
            list_add_unique(b->a, forced, im->name);
            break;
        case CG_IMPL_NATIVE_ALL: {
            const struct cg_lib_coll *lc = &lib->colls[cr->coll];
            for (int k = 0; k < lc->nalgos; k++) {
                char why[128];
                if (cg_algo_ranks_problem(&lc->algos[k], ranks, why, sizeof(why)) != NULL) {
                    note(b, cg_arena_printf(b->a,
                                            "native:* leaves out %s's %s algorithm %s at %d "
                                            "ranks: it %s",
                                            lib->name, cg_colls[cr->coll].name, lc->algos[k].name,
                                            ranks, why));
                    continue;
                }
                list_add_unique(b->a, forced, lc->algos[k].name);
            }
            if (lc->nalgos == 0) {
                note(b, cg_arena_printf(b->a, "native:* finds no %s algorithm of %s to force",
                                        cg_colls[cr->coll].name, lib->name));
            }
            break;
        }
        }
    }
}

/* "p4", "p8n2" across nodes, "p8vppn4" as virtual nodes of 4 ranks
 * (CG_PPN=4). */
static const char *ranks_tag(struct cg_arena *a, const struct cg_job *job)
{
    const char *t = job->nodes > 1 ? cg_arena_printf(a, "p%dn%d", job->ranks, job->nodes)
                                   : cg_arena_printf(a, "p%d", job->ranks);
    return job->vppn > 0 ? cg_arena_printf(a, "%svppn%d", t, job->vppn) : t;
}

/* Letters, digits, '_', '.' and '-' only: ids name files under raw/. */
static char *id_safe(struct cg_arena *a, const char *s)
{
    char *o = cg_arena_strdup(a, s);
    for (char *c = o; *c; c++) {
        if (!(isalnum((unsigned char)*c) || *c == '_' || *c == '.' || *c == '-')) {
            *c = '_';
        }
    }
    return o;
}

/* An implementation in a point id: generated:bcast_knomial(radix=4,x=2)
 * -> generated_bcast_knomial.radix_4.x_2. */
static char *impl_id(struct cg_arena *a, const char *impl)
{
    char *o = cg_arena_strdup(a, impl), *w = o;
    for (const char *c = impl; *c; c++) {
        if (*c == ')') {
            continue;
        }
        *w++ = (*c == '(' || *c == ',') ? '.' : *c == '=' ? '_' : *c;
    }
    *w = '\0';
    return id_safe(a, o);
}

/* The ranks per node a job's topology has: the virtual shape, else the
 * real one. */
static int job_ppn(const struct cg_job *job)
{
    return job->vppn > 0 ? job->vppn : job->ranks_per_node;
}

static void add_points(struct builder *b, struct cg_job *job, int *pcap,
                       const struct cg_coll_req *cr, const struct list *impls, const char *suffix)
{
    const struct cg_coll_info *info = &cg_colls[cr->coll];
    int nops = info->reduces ? cr->nops : 1;
    /* Barrier moves no data: one point of 0 B with the first datatype,
     * whatever sizes and datatypes the test lists (descriptors/README.md). */
    int barrier = cr->coll == CG_COLL_BARRIER;
    int nsizes = barrier ? 1 : cr->nsizes;
    int ndtypes = barrier ? 1 : cr->ndtypes;
    if (barrier && (cr->nsizes > 1 || cr->ndtypes > 1 || (cr->nsizes == 1 && cr->sizes[0] != 0))) {
        note(b, "barrier moves no data: it is measured once per library, process count and "
                "implementation (size 0 B, count 0), whatever the sizes and datatypes listed");
    }
    int nnodes = job->ranks / job_ppn(job);
    for (int s = 0; s < nsizes; s++) {
        for (int d = 0; d < ndtypes; d++) {
            for (int o = 0; o < nops; o++) {
                for (int r = 0; r < cr->nroots; r++) {
                    for (int ip = 0; ip < cr->nin_place; ip++) {
                        for (int i = 0; i < impls->n; i++) {
                            if (strncmp(impls->s[i], "micro:", 6) == 0 && cr->roots[r] >= nnodes) {
                                /* Roots are ranks of the lane communicators. */
                                note(b, cg_arena_printf(
                                            b->a,
                                            "micro:multi_collective leaves out %s at root %d "
                                            "at p=%d with %d ranks per node: a lane has %d "
                                            "ranks",
                                            info->name, cr->roots[r], job->ranks, job_ppn(job),
                                            nnodes));
                                continue;
                            }
                            job->points =
                                grow(b->a, job->points, job->npoints, pcap, sizeof(*job->points));
                            struct cg_point *pt = &job->points[job->npoints++];
                            memset(pt, 0, sizeof(*pt));
                            pt->coll = cr->coll;
                            pt->impl = impls->s[i];
                            pt->dtype = cr->dtypes[d];
                            pt->op = cr->ops[o];
                            pt->root = cr->roots[r];
                            pt->in_place = cr->in_place[ip];
                            pt->bytes = barrier ? 0 : cr->sizes[s];
                            pt->count = pt->bytes / cg_dtype_sizes[pt->dtype];
                            pt->id = cg_arena_printf(
                                b->a, "%s-%s-%s-%s-%s-%s-r%d-ip%d-%lldB%s", info->name,
                                job->library, ranks_tag(b->a, job),
                                impl_id(b->a, pt->impl), cg_dtype_names[pt->dtype],
                                cg_redop_names[pt->op], pt->root, pt->in_place,
                                (long long)pt->bytes, suffix);
                        }
                    }
                }
            }
        }
    }
}

/* The lane counts micro-benchmark m runs in a job (its "k", or 1 .. ranks
 * per node), noting those the job's node shape cannot hold. Returns how
 * many were put in k (room for ppn or m->nk entries). */
static int micro_lanes(struct builder *b, const struct cg_micro_req *m, enum cg_micro_kind kind,
                       const struct cg_job *job, int *k)
{
    int ppn = job_ppn(job), n = 0;
    if (job->ranks % ppn != 0) {
        note(b, cg_arena_printf(b->a,
                                "the micro-benchmarks need a regular node shape: left out at "
                                "p=%d with %d ranks per node",
                                job->ranks, ppn));
        return 0;
    }
    if (m->nk == 0) {
        for (int i = 1; i <= ppn; i++) {
            k[n++] = i;
        }
        return n;
    }
    for (int i = 0; i < m->nk; i++) {
        if (m->k[i] > ppn) {
            note(b, cg_arena_printf(b->a,
                                    "micro:%s leaves out k=%d at p=%d: the node shape has %d "
                                    "ranks per node",
                                    cg_micro_names[kind], m->k[i], job->ranks, ppn));
            continue;
        }
        k[n++] = m->k[i];
    }
    return n;
}

/* The points of micro:lane_pattern, after the collectives' in the job with
 * the library's defaults. */
static void add_lane_points(struct builder *b, struct cg_job *job, int *pcap, const char *suffix)
{
    const struct cg_micro_req *m = &b->t->micro[CG_MICRO_LANE_PATTERN];
    if (!m->present) {
        return;
    }
    int *k = cg_arena_alloc(b->a, sizeof(int) * (size_t)(job_ppn(job) + m->nk + 1));
    int nk = micro_lanes(b, m, CG_MICRO_LANE_PATTERN, job, k);
    for (int s = 0; s < m->nsizes; s++) {
        for (int d = 0; d < m->ndtypes; d++) {
            for (int i = 0; i < nk; i++) {
                job->points = grow(b->a, job->points, job->npoints, pcap, sizeof(*job->points));
                struct cg_point *pt = &job->points[job->npoints++];
                memset(pt, 0, sizeof(*pt));
                pt->coll = CG_PT_LANE_PATTERN;
                pt->impl = cg_arena_printf(b->a, "micro:lane_pattern(k=%d)", k[i]);
                pt->dtype = m->dtypes[d];
                pt->op = CG_OP_SUM;
                pt->bytes = m->sizes[s];
                pt->count = pt->bytes / cg_dtype_sizes[pt->dtype];
                pt->id = cg_arena_printf(b->a, "lane_pattern-%s-%s-%s-%s-%s-r0-ip0-%lldB%s",
                                         job->library, ranks_tag(b->a, job),
                                         impl_id(b->a, pt->impl), cg_dtype_names[pt->dtype],
                                         cg_redop_names[pt->op], (long long)pt->bytes, suffix);
            }
        }
    }
}

static struct cg_job *new_job(struct builder *b, const struct cg_library *lib, int ranks, int rpn,
                              int vppn)
{
    struct cg_plan *pl = b->plan;
    pl->jobs = grow(b->a, pl->jobs, pl->njobs, &b->jcap, sizeof(*pl->jobs));
    struct cg_job *job = &pl->jobs[pl->njobs];
    memset(job, 0, sizeof(*job));
    job->library = lib->name;
    job->backend = lib->backend;
    job->ranks = ranks;
    job->ranks_per_node = rpn;
    job->nodes = ranks / rpn;
    job->vppn = vppn;
    job->forced_coll = -1;
    return job;
}

static void kv_add(struct cg_arena *a, struct cg_kv **kv, int *n, int *cap, const char *key,
                   const char *value)
{
    for (int i = 0; i < *n; i++) {
        if (strcmp((*kv)[i].key.s, key) == 0) {
            (*kv)[i].value.s = value; /* later sources win */
            return;
        }
    }
    *kv = grow(a, *kv, *n, cap, sizeof(**kv));
    memset(&(*kv)[*n], 0, sizeof(**kv));
    (*kv)[*n].key.s = key;
    (*kv)[*n].value.s = value;
    (*n)++;
}

/* The knob variables of one sweep setting (values[i] for the i-th sweep of
 * this library), and the id suffix that tells the settings apart. */
struct setting {
    struct cg_kv *env;   /* knob variables */
    int nenv;            /* entries */
    int cap;             /* allocated */
    struct cg_kv *names; /* knob name -> value */
    int nnames;          /* entries */
    int ncap;            /* allocated */
    const char *suffix;  /* "-segment_size_65536..." */
};

static void build_setting(struct builder *b, const struct cg_library *lib, long index,
                          struct setting *st)
{
    memset(st, 0, sizeof(*st));
    st->suffix = "";
    const struct cg_test *t = b->t;
    for (int i = 0; i < t->nsweeps; i++) {
        const struct cg_knob_sweep *sw = &t->sweeps[i];
        if (sw->lib != lib) {
            continue;
        }
        const char *val = sw->values[index % sw->nvalues];
        index /= sw->nvalues;
        kv_add(b->a, &st->names, &st->nnames, &st->ncap, sw->knob->name, val);
        st->suffix = cg_arena_printf(b->a, "%s-%s_%s", st->suffix, id_safe(b->a, sw->knob->name),
                                     id_safe(b->a, val));
        for (int c = 0; c < t->ncolls; c++) {
            struct cg_vars v = { .n = 0 };
            cg_vars_set(&v, "collective", cg_colls[t->colls[c].coll].name);
            cg_vars_set(&v, "COLLECTIVE", upper(b->a, cg_colls[t->colls[c].coll].name));
            kv_add(b->a, &st->env, &st->nenv, &st->cap, expand_or_panic(b->a, sw->knob->env.s, &v),
                   val);
        }
    }
}

/* The variables that force `spec` (algorithm_env with the algorithm's
 * name and id), added to *env, and the "VAR=value ..." that says so. */
static const char *force_env(struct builder *b, const struct cg_library *lib,
                             const struct cg_coll_req *cr, const struct cg_algo_spec *spec,
                             struct cg_kv **env, int *n, int *cap)
{
    struct cg_arena *a = b->a;
    struct cg_vars v = { .n = 0 };
    cg_vars_set(&v, "collective", cg_colls[cr->coll].name);
    cg_vars_set(&v, "COLLECTIVE", upper(a, cg_colls[cr->coll].name));
    cg_vars_set(&v, "name", spec->name);
    cg_vars_set(&v, "id", spec->id != NULL ? spec->id : "");
    const char *forced_by = "";
    for (int e = 0; e < lib->nforce_env; e++) {
        const char *key = expand_or_panic(a, lib->force_env[e].key.s, &v);
        const char *val = expand_or_panic(a, lib->force_env[e].value.s, &v);
        kv_add(a, env, n, cap, key, val);
        forced_by = cg_arena_printf(a, "%s%s%s=%s", forced_by, *forced_by ? " " : "", key, val);
    }
    return forced_by;
}

/* Whether key is one of the library's launch-only variables. */
static int launch_key(const struct cg_library *lib, const char *key)
{
    for (int i = 0; i < lib->nlaunch_keys; i++) {
        if (strcmp(lib->launch_keys[i], key) == 0) {
            return 1;
        }
    }
    return 0;
}

/* The forced algorithms of one collective as points of the generated
 * points' job (forced_natives same_launch): each native:<algorithm> point
 * add_points made gets how bench forces it; the job's environment gets the
 * launch-only variables. */
static void force_in_job(struct builder *b, const struct cg_library *lib, struct cg_job *job,
                         int first, const struct cg_coll_req *cr, int *kcap)
{
    struct cg_arena *a = b->a;
    for (int i = first; i < job->npoints; i++) {
        struct cg_point *pt = &job->points[i];
        if (strncmp(pt->impl, "native:", 7) != 0 || strcmp(pt->impl, "native:default") == 0) {
            continue;
        }
        const struct cg_algo_spec *spec = cg_library_algo(lib, cr->coll, pt->impl + 7);
        if (spec == NULL) {
            cg_panic("algorithm %s vanished after validation", pt->impl);
        }
        struct cg_point_force *f = cg_arena_alloc(a, sizeof(*f));
        memset(f, 0, sizeof(*f));
        int cap = 0;
        f->algorithm = spec->name;
        f->forced_by = force_env(b, lib, cr, spec, &f->env, &f->nenv, &cap);
        f->write = cg_arena_alloc(a, sizeof(*f->write) * (size_t)(f->nenv + 1));
        for (int e = 0; e < f->nenv; e++) {
            if (launch_key(lib, f->env[e].key.s)) {
                kv_add(a, &job->knob_env, &job->nknob_env, kcap, f->env[e].key.s,
                       f->env[e].value.s);
            } else {
                f->write[f->nwrite++] = f->env[e].key.s;
            }
        }
        f->new_comm = lib->new_comm;
        pt->force = f;
    }
}

/* The environment a job adds: platform, library, test, then knobs; values
 * may still hold job placeholders ({timeout_s}, ...), expanded per launch. */
static void job_env(struct builder *b, const struct cg_platform *p, const struct cg_library *lib,
                    struct cg_job *job)
{
    int cap = 0;
    for (int i = 0; i < p->nenv; i++) {
        kv_add(b->a, &job->env, &job->nenv, &cap, p->env[i].key.s, p->env[i].value.s);
    }
    for (int i = 0; i < lib->nenv; i++) {
        kv_add(b->a, &job->env, &job->nenv, &cap, lib->env[i].key.s, lib->env[i].value.s);
    }
    for (int i = 0; i < b->t->nenv; i++) {
        kv_add(b->a, &job->env, &job->nenv, &cap, b->t->env[i].key.s, b->t->env[i].value.s);
    }
    for (int i = 0; i < job->nknob_env; i++) {
        kv_add(b->a, &job->env, &job->nenv, &cap, job->knob_env[i].key.s, job->knob_env[i].value.s);
    }
    /* The node shape the runtime's topology takes (runtime/topo.c). */
    if (job->vppn > 0) {
        kv_add(b->a, &job->env, &job->nenv, &cap, "CG_PPN",
               cg_arena_printf(b->a, "%d", job->vppn));
    }
}

static int cmp_point_id(const void *x, const void *y)
{
    return strcmp((*(const struct cg_point *const *)x)->id,
                  (*(const struct cg_point *const *)y)->id);
}

int cg_plan_build(struct cg_plan *plan, struct cg_arena *a, struct cg_diag *d,
                  const struct cg_test *t, const struct cg_platform *p,
                  const struct cg_registry *reg)
{
    memset(plan, 0, sizeof(*plan));
    struct builder b = { a, plan, 0, 0, t, reg };
    for (int li = 0; li < t->nlibs; li++) {
        const struct cg_library *lib = t->libs[li];
        long nsettings = 1;
        for (int i = 0; i < t->nsweeps; i++) {
            if (t->sweeps[i].lib == lib) {
                nsettings *= t->sweeps[i].nvalues;
            }
        }
        for (int ri = 0; ri < t->nranks; ri++) {
            int ranks = t->ranks[ri];
            int rpn = t->ranks_per_node > 0 ? t->ranks_per_node : ranks;
            for (int vi = 0; vi < t->nvppn; vi++) {
                int vppn = t->vppn[vi];
                if (vppn > 0 && ranks % vppn != 0) {
                    note(&b, cg_arena_printf(a,
                                             "virtual_ranks_per_node %d does not divide %d "
                                             "ranks: CG_PPN=%d makes an irregular topology "
                                             "(the last node holds %d), where topology "
                                             "schedules run their fallback",
                                             vppn, ranks, vppn, ranks % vppn));
                }
                for (long si = 0; si < nsettings; si++) {
                    struct setting st;
                    build_setting(&b, lib, si, &st);
                    /* The defaults: native:default, the generated schedules, the
                     * bound and the micro-benchmarks. */
                    struct cg_job *job = new_job(&b, lib, ranks, rpn, vppn);
                    int pcap = 0;
                    job->settings = st.names;
                    job->nsettings = st.nnames;
                    struct list *forced =
                        cg_arena_alloc(a, sizeof(struct list) * (size_t)t->ncolls);
                    const struct cg_micro_req *multi = &t->micro[CG_MICRO_MULTI_COLLECTIVE];
                    int *lanes =
                        cg_arena_alloc(a, sizeof(int) * (size_t)(job_ppn(job) + multi->nk + 1));
                    int nlanes = multi->present ? micro_lanes(&b, multi, CG_MICRO_MULTI_COLLECTIVE,
                                                              job, lanes)
                                                : 0;
                    /* Why the knob variables are copied: forced points of
                     * the same launch add their launch-only variables. */
                    int kcap = 0;
                    struct cg_kv *kenv = NULL;
                    int nkenv = 0;
                    for (int e = 0; e < st.nenv; e++) {
                        kv_add(a, &kenv, &nkenv, &kcap, st.env[e].key.s, st.env[e].value.s);
                    }
                    job->knob_env = kenv;
                    job->nknob_env = nkenv;
                    int same_launch = t->forced_same_launch && lib->at_run_time;
                    for (int c = 0; c < t->ncolls; c++) {
                        struct list shared = { 0 };
                        resolve(&b, &t->colls[c], lib, ranks, &shared, &forced[c]);
                        for (int k = 0; k < nlanes && multi->colls[t->colls[c].coll]; k++) {
                            list_add_unique(a, &shared,
                                            cg_arena_printf(a, "micro:multi_collective(k=%d)",
                                                            lanes[k]));
                        }
                        if (same_launch) {
                            /* Beside the generated points of each size, in
                             * one process: a launch's speed is then the
                             * same for both (harness/README.md, "Forced in
                             * the same launch"). */
                            for (int k = 0; k < forced[c].n; k++) {
                                list_add_unique(a, &shared,
                                                cg_arena_printf(a, "native:%s", forced[c].s[k]));
                            }
                            forced[c].n = 0;
                        }
                        int first = job->npoints;
                        add_points(&b, job, &pcap, &t->colls[c], &shared, st.suffix);
                        if (same_launch) {
                            force_in_job(&b, lib, job, first, &t->colls[c], &kcap);
                        }
                    }
                    add_lane_points(&b, job, &pcap, st.suffix);
                    if (job->npoints > 0) {
                        job_env(&b, p, lib, job);
                        job->index = ++plan->njobs;
                    }
                    /* One job per forced algorithm. */
                    for (int c = 0; c < t->ncolls; c++) {
                        const struct cg_coll_req *cr = &t->colls[c];
                        for (int k = 0; k < forced[c].n; k++) {
                            const struct cg_algo_spec *spec =
                                cg_library_algo(lib, cr->coll, forced[c].s[k]);
                            if (spec == NULL) {
                                cg_panic("algorithm %s vanished after validation", forced[c].s[k]);
                            }
                            job = new_job(&b, lib, ranks, rpn, vppn);
                            pcap = 0;
                            job->algorithm = spec->name;
                            job->forced_coll = cr->coll;
                            job->settings = st.names;
                            job->nsettings = st.nnames;
                            int fcap = 0;
                            const char *forced_by = force_env(&b, lib, cr, spec, &job->knob_env,
                                                              &job->nknob_env, &fcap);
                            for (int e = 0; e < st.nenv; e++) {
                                kv_add(a, &job->knob_env, &job->nknob_env, &fcap, st.env[e].key.s,
                                       st.env[e].value.s);
                            }
                            job->forced_by = forced_by;
                            struct list one = { 0 };
                            list_add_unique(a, &one, cg_arena_printf(a, "native:%s", spec->name));
                            add_points(&b, job, &pcap, cr, &one, st.suffix);
                            job_env(&b, p, lib, job);
                            job->index = ++plan->njobs;
                        }
                    }
                }
            }
        }
    }
    cg_plan_launches(plan, a, t->launches);
    int seq = 0;
    for (int j = 0; j < plan->njobs; j++) {
        for (int i = 0; i < plan->jobs[j].npoints; i++) {
            plan->jobs[j].points[i].seq = ++seq;
        }
    }
    plan->npoints = seq;
    struct cg_pos none = { 0, 0 };
    if (seq == 0) {
        cg_error(d, t->file, none, "the test expands to no points on platform %s", p->name);
        return -1;
    }
    /* Ids must be unique: raw files and resume are keyed on them. */
    struct cg_point **all = malloc(sizeof(*all) * (size_t)seq);
    if (all == NULL) {
        cg_panic("out of memory");
    }
    int k = 0;
    for (int j = 0; j < plan->njobs; j++) {
        for (int i = 0; i < plan->jobs[j].npoints; i++) {
            all[k++] = &plan->jobs[j].points[i];
        }
    }
    qsort(all, (size_t)seq, sizeof(*all), cmp_point_id);
    int bad = 0;
    for (int i = 1; i < seq; i++) {
        if (strcmp(all[i - 1]->id, all[i]->id) == 0) {
            cg_error(d, t->file, none,
                     "two points would share the id %s (knob values that differ "
                     "only in characters ids cannot hold?)",
                     all[i]->id);
            bad = 1;
            break;
        }
    }
    free(all);
    return bad ? -1 : 0;
}

/* ---- rendering one launch ----------------------------------------------- */

/* Quoted for a POSIX shell when it needs to be. */
static char *shell_quote(struct cg_arena *a, const char *s)
{
    int plain = *s != '\0';
    for (const char *c = s; *c; c++) {
        if (!(isalnum((unsigned char)*c) || strchr("_./:=,+@%^-", *c) != NULL)) {
            plain = 0;
        }
    }
    if (plain) {
        return cg_arena_strdup(a, s);
    }
    size_t n = 3;
    for (const char *c = s; *c; c++) {
        n += *c == '\'' ? 4 : 1;
    }
    char *o = cg_arena_alloc(a, n), *w = o;
    *w++ = '\'';
    for (const char *c = s; *c; c++) {
        if (*c == '\'') {
            memcpy(w, "'\\''", 4);
            w += 4;
        } else {
            *w++ = *c;
        }
    }
    *w++ = '\'';
    *w = '\0';
    return o;
}

/* Slurm's --time: [D-]HH:MM:SS. */
static char *time_limit(struct cg_arena *a, int seconds)
{
    int days = seconds / 86400, rest = seconds % 86400;
    if (days > 0) {
        return cg_arena_printf(a, "%d-%02d:%02d:%02d", days, rest / 3600, rest / 60 % 60,
                               rest % 60);
    }
    return cg_arena_printf(a, "%02d:%02d:%02d", rest / 3600, rest / 60 % 60, rest % 60);
}

int cg_launch_render(struct cg_launch *l, struct cg_arena *a, const struct cg_platform *p,
                     const struct cg_job *job, int run_id, const char *dir, const char *campaign,
                     int timeout_s)
{
    memset(l, 0, sizeof(*l));
    const struct cg_library *lib = cg_platform_library(p, job->library);
    if (lib == NULL || lib->launch == NULL) {
        return -1;
    }
    l->run_id = run_id;
    l->job_file = cg_arena_printf(a, "%s/jobs/job-%d.json", dir, run_id);
    l->log_file = cg_arena_printf(a, "%s/logs/job-%d.log", dir, run_id);
    struct cg_vars v = { .n = 0 };
    cg_vars_set(&v, "library", lib->name);
    l->program = expand_or_panic(a, lib->program.s, &v);
    cg_vars_set(&v, "program", l->program);
    cg_vars_set(&v, "ranks", cg_arena_printf(a, "%d", job->ranks));
    cg_vars_set(&v, "ranks_per_node", cg_arena_printf(a, "%d", job->ranks_per_node));
    cg_vars_set(&v, "nodes", cg_arena_printf(a, "%d", job->nodes));
    cg_vars_set(&v, "job", l->job_file);
    cg_vars_set(&v, "run_id", cg_arena_printf(a, "%d", run_id));
    cg_vars_set(&v, "campaign", campaign);
    cg_vars_set(&v, "timeout_s", cg_arena_printf(a, "%d", timeout_s));
    cg_vars_set(&v, "time_limit", time_limit(a, timeout_s));
    cg_vars_set(&v, "log", l->log_file);
    cg_vars_set(&v, "out_dir", dir);
    l->env = cg_arena_alloc(a, sizeof(*l->env) * (size_t)(job->nenv + 1));
    for (int i = 0; i < job->nenv; i++) {
        l->env[i].key.s = job->env[i].key.s;
        l->env[i].value.s = expand_or_panic(a, job->env[i].value.s, &v);
    }
    l->nenv = job->nenv;
    char **launch = cg_arena_alloc(a, sizeof(char *) * (size_t)(lib->nlaunch + 1));
    for (int i = 0; i < lib->nlaunch; i++) {
        launch[i] = expand_or_panic(a, lib->launch[i].s, &v);
    }
    if (p->launcher == CG_LAUNCH_LOCAL) {
        l->argv = launch;
        l->argc = lib->nlaunch;
        return 0;
    }
    /* Slurm: a batch script with the set-up lines, the environment and the
     * launch line; submitted by the `submit` template, which waits. */
    l->script_file = cg_arena_printf(a, "%s/jobs/job-%d.sbatch", dir, run_id);
    struct cg_vars sv = v;
    for (int i = 0; i < p->nvars; i++) {
        cg_vars_set(&sv, p->vars[i].key.s, expand_or_panic(a, p->vars[i].value.s, &v));
    }
    char *text = cg_arena_strdup(a, "");
    for (int i = 0; i < p->nscript; i++) {
        const char *line = p->script[i].s;
        if (strcmp(line, "{setup}") == 0) {
            for (int k = 0; k < p->nsetup; k++) {
                text = cg_arena_printf(a, "%s%s\n", text, expand_or_panic(a, p->setup[k].s, &sv));
            }
            for (int k = 0; k < lib->nsetup; k++) {
                text = cg_arena_printf(a, "%s%s\n", text, expand_or_panic(a, lib->setup[k].s, &sv));
            }
        } else if (strcmp(line, "{env}") == 0) {
            for (int k = 0; k < l->nenv; k++) {
                text = cg_arena_printf(a, "%sexport %s=%s\n", text, l->env[k].key.s,
                                       shell_quote(a, l->env[k].value.s));
            }
        } else if (strcmp(line, "{launch}") == 0) {
            for (int k = 0; k < lib->nlaunch; k++) {
                text = cg_arena_printf(a, "%s%s%s", text, k ? " " : "", shell_quote(a, launch[k]));
            }
            text = cg_arena_printf(a, "%s\n", text);
        } else {
            text = cg_arena_printf(a, "%s%s\n", text, expand_or_panic(a, line, &sv));
        }
    }
    l->script_text = text;
    /* The script exports the job's variables; sbatch gets those that name
     * the job and its output (they override the script's #SBATCH lines), so
     * that the runner finds the job in the queue (run_slurm.c) and reads
     * its output for the reason it failed; and no requeue, which would
     * measure its points a second time. */
    l->slurm_name = (char *)cg_slurm_job_name(a, campaign, run_id);
    l->slurm_log = cg_arena_printf(a, "%s/logs/job-%d.slurm.log", dir, run_id);
    l->env = cg_arena_alloc(a, sizeof(*l->env) * 3);
    l->env[0].key.s = "SBATCH_JOB_NAME";
    l->env[0].value.s = l->slurm_name;
    l->env[1].key.s = "SBATCH_OUTPUT";
    l->env[1].value.s = l->slurm_log;
    l->env[2].key.s = "SBATCH_NO_REQUEUE";
    l->env[2].value.s = "yes";
    l->nenv = 3;
    struct cg_vars subv = { .n = 0 };
    cg_vars_set(&subv, "script", l->script_file);
    l->argv = cg_arena_alloc(a, sizeof(char *) * (size_t)(p->nsubmit + 1));
    for (int i = 0; i < p->nsubmit; i++) {
        l->argv[i] = expand_or_panic(a, p->submit[i].s, &subv);
    }
    l->argc = p->nsubmit;
    return 0;
}
