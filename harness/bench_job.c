/* bench_job.c - the command line of bench and bench_cuda, and reading and
 * validating the job file (harness/FORMATS.md,
 * "Job file"). Anything the runner wrote wrong is a one-line message naming
 * the file and the field, and bench exits 2 before running anything.
 */
#define _POSIX_C_SOURCE 200809L
#include "bench.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/cli.h"

/* Timing defaults, for a job file that leaves them out. Why these: at 4
 * ranks on 2 cores, a quickstart-sized job (158 points: 4 collectives,
 * 8 B..4 MiB, native default and every generated schedule) took 5.9 s under
 * Open MPI and 9.1 s under MPICH with them, most points stopping on the RSE
 * target; the budget bounds the slowest at about a quarter of a second.
 * Why window (the runner's default too): with MPI_Barrier, Open MPI's
 * small bcasts measured 0.14 us at 4 ranks, the time the root leaves the
 * barrier ahead of the others, not the bcast; the window figure is on one
 * time line and cannot fall below a message's latency
 * (harness/measurements/2026-12-02-timing.md). */
#define DEFAULT_SYNC BENCH_SYNC_WINDOW
#define DEFAULT_WINDOW_US 100.0
#define DEFAULT_WARMUP 3
#define DEFAULT_MIN_REPS 10
#define DEFAULT_MAX_REPS 1000
#define DEFAULT_RSE 0.01
#define DEFAULT_BUDGET_S 0.25
/* PGMPITuneLib's values (seed 002): RSE 1% for t1, batches of 5 and 5. */
#define DEFAULT_NREP_T1_RSE 0.01
#define DEFAULT_NREP_B1 5
#define DEFAULT_NREP_B2 5
#define DEFAULT_NREP_RSE_B 0.05
#define DEFAULT_NREP_K 5
/* The clock sync (bench_clock.c): 16 offsets, each the fastest of 8
 * ping-pongs, back to back; again before a point after 1 s. */
#define DEFAULT_FITPOINTS 16
#define DEFAULT_EXCHANGES 8
#define DEFAULT_SPACING_US 0.0
#define DEFAULT_RESYNC_S 1.0

struct loader {
    char *msg;            /* where the error goes */
    size_t msglen;        /* its size */
    const char *path;     /* job file, for messages */
};

__attribute__((format(printf, 2, 3))) static int fail(struct loader *ld, const char *fmt, ...)
{
    char what[400];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(what, sizeof(what), fmt, ap);
    va_end(ap);
    snprintf(ld->msg, ld->msglen, "%s: %s", ld->path, what);
    return -1;
}

/* Every key of obj is in allowed (NULL-terminated). */
static int only_keys(struct loader *ld, const cJSON *obj, const char *where,
                     const char *const *allowed)
{
    for (const cJSON *it = obj->child; it != NULL; it = it->next) {
        const char *const *a = allowed;
        while (*a != NULL && strcmp(*a, it->string) != 0) {
            a++;
        }
        if (*a == NULL) {
            return fail(ld, "%sunknown key \"%s\"", where, it->string);
        }
    }
    return 0;
}

/* The typed getters are runtime/util/jsonio.h's (0 there, -1 absent or
 * null, -2 another type or out of range); these add the job file's
 * messages. A null string is an absent one, as it always was here; a null
 * number or boolean is an error ("must be ..."), so those check presence
 * first. */
static int get_string(struct loader *ld, const cJSON *obj, const char *where, const char *key,
                      int required, const char **out)
{
    int rc = cg_jget_str(obj, key, out);

    if (rc == -1 && required) {
        return fail(ld, "%smissing \"%s\"", where, key);
    }
    if (rc == -2) {
        return fail(ld, "%s\"%s\" must be a string", where, key);
    }
    return 0;
}

static int get_int(struct loader *ld, const cJSON *obj, const char *where, const char *key,
                   int required, long long lo, long long hi, long long *out)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, key);
    int rc = cg_jget_int(obj, key, lo, hi, out);

    if (it == NULL) {
        if (required) {
            return fail(ld, "%smissing \"%s\"", where, key);
        }
        return 0;
    }
    if (!cJSON_IsNumber(it)) {
        return fail(ld, "%s\"%s\" must be an integer", where, key);
    }
    if (rc != 0) {
        return fail(ld, "%s\"%s\" must be an integer in %lld..%lld, not %g", where, key, lo, hi,
                    it->valuedouble);
    }
    return 0;
}

static int get_double(struct loader *ld, const cJSON *obj, const char *where, const char *key,
                      double *out)
{
    double v;

    if (cJSON_GetObjectItemCaseSensitive(obj, key) == NULL) {
        return 0;
    }
    if (cg_jget_num(obj, key, &v) != 0 || !(v > 0.0)) {
        return fail(ld, "%s\"%s\" must be a positive number", where, key);
    }
    *out = v;
    return 0;
}

static int get_bool(struct loader *ld, const cJSON *obj, const char *where, const char *key,
                    int *out)
{
    if (cJSON_GetObjectItemCaseSensitive(obj, key) == NULL) {
        return 0;
    }
    if (cg_jget_bool(obj, key, out) != 0) {
        return fail(ld, "%s\"%s\" must be true or false", where, key);
    }
    return 0;
}

/* Index of s in names (NULL-terminated), or -1. */
static int lookup(const char *s, const char *const *names)
{
    for (int i = 0; names[i] != NULL; i++) {
        if (strcmp(s, names[i]) == 0) {
            return i;
        }
    }
    return -1;
}

/* A point id names a file under raw/: letters, digits, '.', '_', '+', '-',
 * and not starting with '.'. */
static int id_is_safe(const char *id)
{
    if (id[0] == '\0' || id[0] == '.' || strlen(id) > 200) {
        return 0;
    }
    for (const char *c = id; *c != '\0'; c++) {
        int ok = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
                 (*c >= '0' && *c <= '9') || *c == '.' || *c == '_' || *c == '+' || *c == '-';
        if (!ok) {
            return 0;
        }
    }
    return 1;
}

/* Splits an implementation's name into its base and "(name=value,...)":
 * "bcast_knomial(radix=4,segments=2)", "lane_pattern(k=2)". A name without
 * "(" has no parameters. Returns 0, or -1 when malformed. */
static int split_params(const char *name, struct bench_point *pt)
{
    const char *open = strchr(name, '(');
    size_t n = (open != NULL) ? (size_t)(open - name) : strlen(name);
    const char *c;

    if (n == 0 || n >= sizeof(pt->base)) {
        return -1;
    }
    memcpy(pt->base, name, n);
    pt->base[n] = '\0';
    pt->nparams = 0;
    if (open == NULL) {
        return 0;
    }
    c = open + 1;
    for (;;) {
        struct bench_param *bp;
        size_t k = strcspn(c, "=");
        char *end = NULL;
        long v;
        if (pt->nparams == BENCH_MAX_PARAMS || k == 0 || k >= sizeof(bp->name) ||
            c[k] != '=') {
            return -1;
        }
        bp = &pt->params[pt->nparams++];
        memcpy(bp->name, c, k);
        bp->name[k] = '\0';
        for (size_t q = 0; q < k; q++) {
            char ch = bp->name[q];
            if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '_' ||
                  (q > 0 && ch >= '0' && ch <= '9'))) {
                return -1;
            }
        }
        errno = 0;
        v = strtol(c + k + 1, &end, 10);
        if (errno != 0 || end == c + k + 1 || v < INT_MIN || v > INT_MAX) {
            return -1;
        }
        bp->value = (int)v;
        if (*end == ')' && end[1] == '\0') {
            return 0;
        }
        if (*end != ',') {
            return -1;
        }
        c = end + 1;
    }
}

static int load_point_knobs(struct loader *ld, const char *where, cJSON *knobs,
                            struct bench_point *pt);

static int load_point(struct loader *ld, const cJSON *it, int index, struct bench_point *pt)
{
    static const char *const keys[] = {"id",       "seq", "collective", "impl",     "count",
                                       "datatype", "op",  "root",       "in_place", "knobs",
                                       NULL};
    static const char *const dtypes[] = {"int32",   "int64",    "float", "double",
                                         "float16", "bfloat16", NULL};
    static const char *const ops[] = {"sum", "prod", "min", "max", NULL};
    char where[64];
    const char *coll = NULL;
    const char *dtype = NULL;
    const char *op = NULL;
    long long v;
    int c;

    snprintf(where, sizeof(where), "points[%d]: ", index);
    if (!cJSON_IsObject(it)) {
        return fail(ld, "%smust be an object", where);
    }
    if (only_keys(ld, it, where, keys) != 0 ||
        get_string(ld, it, where, "id", 1, &pt->id) != 0 ||
        get_int(ld, it, where, "seq", 1, 0, LLONG_MAX / 2, &v) != 0) {
        return -1;
    }
    pt->seq = (long)v;
    if (!id_is_safe(pt->id)) {
        return fail(ld, "%sid \"%s\" is not a safe file name (letters, digits, . _ + -)", where,
                    pt->id);
    }
    if (get_string(ld, it, where, "collective", 1, &coll) != 0 ||
        get_string(ld, it, where, "impl", 1, &pt->impl) != 0 ||
        get_string(ld, it, where, "datatype", 1, &dtype) != 0 ||
        get_string(ld, it, where, "op", 0, &op) != 0) {
        return -1;
    }
    c = cg_coll_lookup(coll); /* the table's names (runtime/cg_colls.h) are the file's */
    if (c < 0 && strcmp(coll, "lane_pattern") == 0) {
        c = (int)BENCH_COLL_LANE_PATTERN;
    }
    if (c < 0) {
        char names[256] = "";
        for (int k = 0; k < CG_COLL_COUNT_; k++) {
            size_t len = strlen(names);
            snprintf(names + len, sizeof(names) - len, "%s%s", k > 0 ? ", " : "", cg_colls[k].name);
        }
        return fail(ld, "%scollective \"%s\" is not one of %s (or lane_pattern, of "
                        "micro:lane_pattern)", where, coll, names);
    }
    pt->coll = (enum cg_coll)c;
    c = lookup(dtype, dtypes);
    if (c < 0) {
        return fail(ld,
                    "%sdatatype \"%s\" is not one of int32, int64, float, double, float16, "
                    "bfloat16",
                    where, dtype);
    }
    _Static_assert(BENCH_DOUBLE == 3 && BENCH_BFLOAT16 == 5,
                   "dtypes[] follows enum bench_dtype");
    pt->dtype = (enum bench_dtype)c;
    if (op == NULL && bench_coll_reduces(pt->coll)) {
        return fail(ld, "%smissing \"op\" (a %s reduces)", where, coll);
    }
    pt->op = BENCH_SUM;
    pt->op_given = (op != NULL);
    if (op != NULL) {
        c = lookup(op, ops);
        if (c < 0) {
            return fail(ld, "%sop \"%s\" is not one of sum, prod, min, max", where, op);
        }
        pt->op = (enum bench_op)c;
    }
    v = 0;
    if (get_int(ld, it, where, "count", 1, 0, LLONG_MAX / 2, &v) != 0) {
        return -1;
    }
    pt->count = (size_t)v;
    v = 0;
    if (get_int(ld, it, where, "root", 0, 0, INT_MAX, &v) != 0) {
        return -1;
    }
    pt->root = (int)v;
    pt->in_place = 0;
    if (get_bool(ld, it, where, "in_place", &pt->in_place) != 0) {
        return -1;
    }
    if (strncmp(pt->impl, "native:", 7) == 0 && pt->impl[7] != '\0') {
        pt->kind = BENCH_NATIVE;
        pt->name = pt->impl + 7;
    } else if (strncmp(pt->impl, "generated:", 10) == 0 && pt->impl[10] != '\0' &&
               strcmp(pt->impl + 10, "*") != 0) {
        pt->kind = BENCH_GENERATED;
        pt->name = pt->impl + 10;
        if (split_params(pt->name, pt) != 0) {
            return fail(ld, "%simpl \"%s\" is not generated:<schedule> or "
                            "generated:<schedule>(<param>=<integer>,...)", where, pt->impl);
        }
    } else if (strncmp(pt->impl, "baseline:", 9) == 0 && pt->impl[9] != '\0' &&
               strcmp(pt->impl + 9, "*") != 0) {
        pt->kind = BENCH_GENERATED; /* checked, timed and tagged like one */
        pt->baseline = 1;
        pt->name = pt->impl + 9;
    } else if (strncmp(pt->impl, "micro:", 6) == 0) {
        pt->kind = BENCH_MICRO;
        pt->name = pt->impl + 6;
        if (split_params(pt->name, pt) != 0 || pt->nparams != 1 ||
            strcmp(pt->params[0].name, "k") != 0 || pt->params[0].value < 1 ||
            (strcmp(pt->base, "lane_pattern") != 0 && strcmp(pt->base, "multi_collective") != 0)) {
            return fail(ld, "%simpl \"%s\" is not micro:lane_pattern(k=<lanes>) or "
                            "micro:multi_collective(k=<lanes>)", where, pt->impl);
        }
        pt->micro = (pt->base[0] == 'l') ? BENCH_MICRO_LANE_PATTERN : BENCH_MICRO_MULTI_COLLECTIVE;
        pt->lanes = pt->params[0].value;
        if ((pt->micro == BENCH_MICRO_LANE_PATTERN) != (pt->coll == BENCH_COLL_LANE_PATTERN) ||
            pt->coll == CG_COLL_BARRIER ||
            (pt->micro == BENCH_MICRO_LANE_PATTERN && pt->in_place)) {
            return fail(ld, "%s%s does not go with collective \"%s\"%s", where, pt->impl, coll,
                        pt->in_place ? " in place" : "");
        }
    } else if (strncmp(pt->impl, "bound:", 6) == 0 && pt->impl[6] != '\0') {
        /* Which bounds exist, and where they apply, is checked per point
         * (bench.c), so that a wrong one is a record, not a lost job. */
        pt->kind = BENCH_BOUND;
        pt->name = pt->impl + 6;
    } else {
        return fail(ld, "%simpl \"%s\" is not native:default, native:<algorithm>, "
                        "generated:<schedule>, baseline:<name>, bound:<name> or "
                        "micro:<name>(k=<lanes>) (the runner expands generated:* and baseline:*)",
                    where, pt->impl);
    }
    if (pt->base[0] == '\0') {
        snprintf(pt->base, sizeof(pt->base), "%.63s", pt->name);
    }
    if (pt->coll == BENCH_COLL_LANE_PATTERN && pt->kind != BENCH_MICRO) {
        return fail(ld, "%scollective \"lane_pattern\" is micro:lane_pattern's only", where);
    }
    {
        cJSON *pk = cJSON_GetObjectItemCaseSensitive(it, "knobs");
        if (pk != NULL && load_point_knobs(ld, where, pk, pt) != 0) {
            return -1;
        }
    }
    return 0;
}

static int load_nrep(struct loader *ld, const cJSON *n, struct bench_nrep_params *np)
{
    static const char *const keys[] = {"t1_rse", "b1", "b2", "rse_b", "k", "t1_from",
                                       "estimate_out", NULL};
    const char *where = "timing: nrep: ";
    long long v;

    if (n == NULL) {
        return 0;
    }
    if (!cJSON_IsObject(n)) {
        return fail(ld, "timing: \"nrep\" must be an object");
    }
    if (only_keys(ld, n, where, keys) != 0 || get_double(ld, n, where, "t1_rse", &np->t1_rse) != 0 ||
        get_double(ld, n, where, "rse_b", &np->rse_b) != 0 ||
        get_string(ld, n, where, "estimate_out", 0, &np->estimate_out) != 0) {
        return -1;
    }
    v = np->b1;
    if (get_int(ld, n, where, "b1", 0, 1, 1000000, &v) != 0) {
        return -1;
    }
    np->b1 = (long)v;
    v = np->b2;
    if (get_int(ld, n, where, "b2", 0, 0, 1000000, &v) != 0) {
        return -1;
    }
    np->b2 = (long)v;
    v = np->k;
    if (get_int(ld, n, where, "k", 0, 1, 10000000, &v) != 0) {
        return -1;
    }
    np->k = (long)v;
    np->t1_from = cJSON_GetObjectItemCaseSensitive(n, "t1_from");
    if (np->t1_from != NULL) {
        if (!cJSON_IsArray(np->t1_from)) {
            return fail(ld, "%s\"t1_from\" must be an array of file names", where);
        }
        for (const cJSON *it = np->t1_from->child; it != NULL; it = it->next) {
            if (!cJSON_IsString(it)) {
                return fail(ld, "%s\"t1_from\" must be an array of file names", where);
            }
        }
    }
    return 0;
}

static int load_clock(struct loader *ld, const cJSON *c, struct bench_clock_params *cp)
{
    static const char *const keys[] = {"fitpoints", "exchanges", "spacing_us", "resync_s", NULL};
    const char *where = "timing: clock: ";
    const cJSON *sp;
    long long v;

    if (c == NULL) {
        return 0;
    }
    if (!cJSON_IsObject(c)) {
        return fail(ld, "timing: \"clock\" must be an object");
    }
    if (only_keys(ld, c, where, keys) != 0 ||
        get_double(ld, c, where, "resync_s", &cp->resync_s) != 0) {
        return -1;
    }
    v = cp->fitpoints;
    if (get_int(ld, c, where, "fitpoints", 0, 1, 100000, &v) != 0) {
        return -1;
    }
    cp->fitpoints = (long)v;
    v = cp->exchanges;
    if (get_int(ld, c, where, "exchanges", 0, 1, 100000, &v) != 0) {
        return -1;
    }
    cp->exchanges = (long)v;
    /* 0 is allowed here (back to back), which get_double refuses. */
    sp = cJSON_GetObjectItemCaseSensitive(c, "spacing_us");
    if (sp != NULL) {
        if (!cJSON_IsNumber(sp) || !(sp->valuedouble >= 0.0) || sp->valuedouble > 1e7) {
            return fail(ld, "%s\"spacing_us\" must be a number in 0..1e7", where);
        }
        cp->spacing_us = sp->valuedouble;
    }
    return 0;
}

static int load_timing(struct loader *ld, const cJSON *t, struct bench_timing *tm)
{
    static const char *const keys[] = {"sync",     "warmup", "min_reps",  "max_reps", "rse_target",
                                       "budget_s", "window_us", "policy", "nrep",     "clock",
                                       NULL};
    const char *where = "timing: ";
    const char *sync = NULL;
    const char *policy = NULL;
    long long v;

    tm->sync = DEFAULT_SYNC;
    tm->warmup = DEFAULT_WARMUP;
    tm->min_reps = DEFAULT_MIN_REPS;
    tm->max_reps = DEFAULT_MAX_REPS;
    tm->rse_target = DEFAULT_RSE;
    tm->budget_s = DEFAULT_BUDGET_S;
    tm->window_us = DEFAULT_WINDOW_US;
    tm->policy = BENCH_POLICY_RSE;
    tm->nrep.t1_rse = DEFAULT_NREP_T1_RSE;
    tm->nrep.b1 = DEFAULT_NREP_B1;
    tm->nrep.b2 = DEFAULT_NREP_B2;
    tm->nrep.rse_b = DEFAULT_NREP_RSE_B;
    tm->nrep.k = DEFAULT_NREP_K;
    tm->clock.fitpoints = DEFAULT_FITPOINTS;
    tm->clock.exchanges = DEFAULT_EXCHANGES;
    tm->clock.spacing_us = DEFAULT_SPACING_US;
    tm->clock.resync_s = DEFAULT_RESYNC_S;
    if (t == NULL) {
        return 0;
    }
    if (!cJSON_IsObject(t)) {
        return fail(ld, "\"timing\" must be an object");
    }
    if (only_keys(ld, t, where, keys) != 0 || get_string(ld, t, where, "sync", 0, &sync) != 0 ||
        get_string(ld, t, where, "policy", 0, &policy) != 0) {
        return -1;
    }
    if (sync != NULL) {
        if (strcmp(sync, "barrier") == 0) {
            tm->sync = BENCH_SYNC_BARRIER;
        } else if (strcmp(sync, "dissemination") == 0) {
            tm->sync = BENCH_SYNC_DISSEMINATION;
        } else if (strcmp(sync, "window") == 0) {
            tm->sync = BENCH_SYNC_WINDOW;
        } else {
            return fail(ld, "%ssync \"%s\" is not barrier, dissemination or window", where, sync);
        }
    }
    if (policy != NULL) {
        if (strcmp(policy, "rse") == 0) {
            tm->policy = BENCH_POLICY_RSE;
        } else if (strcmp(policy, "nrep") == 0) {
            tm->policy = BENCH_POLICY_NREP;
        } else {
            return fail(ld, "%spolicy \"%s\" is not rse or nrep", where, policy);
        }
    }
    v = tm->warmup;
    if (get_int(ld, t, where, "warmup", 0, 0, 1000000, &v) != 0) {
        return -1;
    }
    tm->warmup = (long)v;
    v = tm->min_reps;
    if (get_int(ld, t, where, "min_reps", 0, 1, 10000000, &v) != 0) {
        return -1;
    }
    tm->min_reps = (long)v;
    v = tm->max_reps;
    if (get_int(ld, t, where, "max_reps", 0, 1, 10000000, &v) != 0) {
        return -1;
    }
    tm->max_reps = (long)v;
    if (tm->max_reps < tm->min_reps) {
        return fail(ld, "%smax_reps (%ld) is below min_reps (%ld)", where, tm->max_reps,
                    tm->min_reps);
    }
    if (get_double(ld, t, where, "rse_target", &tm->rse_target) != 0 ||
        get_double(ld, t, where, "budget_s", &tm->budget_s) != 0 ||
        get_double(ld, t, where, "window_us", &tm->window_us) != 0 ||
        load_nrep(ld, cJSON_GetObjectItemCaseSensitive(t, "nrep"), &tm->nrep) != 0 ||
        load_clock(ld, cJSON_GetObjectItemCaseSensitive(t, "clock"), &tm->clock) != 0) {
        return -1;
    }
    return 0;
}

/* A knobs object, the job's or a point's (where: "knobs: " or
 * "points[i]: knobs: "). */
static int load_knobs_obj(struct loader *ld, const char *where, const cJSON *knobs,
                          const char **algorithm, const char **forced_by)
{
    const cJSON *env;

    if (!cJSON_IsObject(knobs)) {
        return fail(ld, "%smust be an object", where);
    }
    if (get_string(ld, knobs, where, "algorithm", 0, algorithm) != 0 ||
        get_string(ld, knobs, where, "forced_by", 0, forced_by) != 0) {
        return -1;
    }
    env = cJSON_GetObjectItemCaseSensitive(knobs, "env");
    if (env != NULL) {
        if (!cJSON_IsObject(env)) {
            return fail(ld, "%s\"env\" must be an object", where);
        }
        for (const cJSON *e = env->child; e != NULL; e = e->next) {
            if (!cJSON_IsString(e)) {
                return fail(ld, "%senv \"%s\" must be a string", where, e->string);
            }
        }
    }
    return 0;
}

static int load_knobs(struct loader *ld, struct bench_job *job)
{
    if (job->knobs == NULL || cJSON_IsNull(job->knobs)) {
        job->knobs = NULL;
        return 0;
    }
    return load_knobs_obj(ld, "knobs: ", job->knobs, &job->knobs_algorithm,
                          &job->knobs_forced_by);
}

/* A point's own knobs: a native algorithm forced in the launch of other
 * points, through MPI_T (FORMATS.md). */
static int load_point_knobs(struct loader *ld, const char *where, cJSON *knobs,
                            struct bench_point *pt)
{
    static const char *const rkeys[] = {"mpi_t", "new_communicator", NULL};
    char w[96];
    const cJSON *rt;
    const cJSON *env;

    snprintf(w, sizeof(w), "%sknobs: ", where);
    if (pt->kind != BENCH_NATIVE || strcmp(pt->name, "default") == 0) {
        return fail(ld, "%sonly a native:<algorithm> point is forced by knobs of its own", where);
    }
    if (load_knobs_obj(ld, w, knobs, &pt->knobs_algorithm, &pt->knobs_forced_by) != 0) {
        return -1;
    }
    rt = cJSON_GetObjectItemCaseSensitive(knobs, "at_run_time");
    if (!cJSON_IsObject(rt)) {
        return fail(ld, "%smissing \"at_run_time\" (an object with mpi_t, new_communicator)", w);
    }
    snprintf(w, sizeof(w), "%sknobs: at_run_time: ", where);
    if (only_keys(ld, rt, w, rkeys) != 0 || get_bool(ld, rt, w, "new_communicator", &pt->new_comm)) {
        return -1;
    }
    pt->mpit = cJSON_GetObjectItemCaseSensitive(rt, "mpi_t");
    if (!cJSON_IsArray(pt->mpit)) {
        return fail(ld, "%smissing \"mpi_t\" (the env variables written through MPI_T)", w);
    }
    env = cJSON_GetObjectItemCaseSensitive(knobs, "env");
    for (const cJSON *e = pt->mpit->child; e != NULL; e = e->next) {
        if (!cJSON_IsString(e) || !cJSON_IsString(cJSON_GetObjectItemCaseSensitive(env, e->valuestring))) {
            return fail(ld, "%smpi_t names %s%s%s, which is not a variable of knobs.env", w,
                        cJSON_IsString(e) ? "\"" : "", cJSON_IsString(e) ? e->valuestring : "a non-string",
                        cJSON_IsString(e) ? "\"" : "");
        }
    }
    pt->knobs = knobs;
    return 0;
}

int bench_job_load(const char *path, struct bench_job *job, char *msg, size_t msglen)
{
    static const char *const keys[] = {"schema_version", "campaign",  "run_id", "library",
                                       "ranks",          "ranks_per_node", "knobs", "timing",
                                       "verbosity",      "points",    "out",
                                       "virtual_ranks_per_node", "launch", NULL};
    static const char *const out_keys[] = {"points", "raw_dir", "run_meta", "trace_dir", NULL};
    struct loader ld = {msg, msglen, path};
    char *text = NULL;
    size_t len = 0;
    const cJSON *pts;
    const cJSON *out;
    const char *verbosity = NULL;
    long long v;
    int i;

    memset(job, 0, sizeof(*job));
    job->path = path;
    text = cg_slurp(path, &len);
    if (text == NULL) {
        if (errno == ENOMEM || errno == EIO) {
            return fail(&ld, "%s", (errno == ENOMEM) ? "out of memory reading it" : "read error");
        }
        return fail(&ld, "cannot open: %s", strerror(errno));
    }
    if (strlen(text) != len) {
        free(text);
        return fail(&ld, "not valid JSON (a NUL byte inside)");
    }
    job->doc = cJSON_ParseWithOpts(text, NULL, 1);
    if (job->doc == NULL) {
        const char *at = cJSON_GetErrorPtr();
        long off = (at != NULL && at >= text && at <= text + len) ? (long)(at - text) : -1;
        long line = 1;
        long col = 1;
        for (long k = 0; k < off; k++) {
            if (text[k] == '\n') {
                line++;
                col = 1;
            } else {
                col++;
            }
        }
        free(text);
        if (off < 0) {
            return fail(&ld, "not valid JSON");
        }
        return fail(&ld, "%ld:%ld: not valid JSON", line, col);
    }
    free(text);
    if (!cJSON_IsObject(job->doc)) {
        return fail(&ld, "the top level must be an object");
    }
    if (only_keys(&ld, job->doc, "", keys) != 0 ||
        get_int(&ld, job->doc, "", "schema_version", 1, 0, 1000, &v) != 0) {
        return -1;
    }
    if (v != 1) {
        return fail(&ld, "schema_version %lld is not 1, the version this bench reads", v);
    }
    if (get_string(&ld, job->doc, "", "campaign", 1, &job->campaign) != 0 ||
        get_int(&ld, job->doc, "", "run_id", 1, 0, LONG_MAX, &v) != 0) {
        return -1;
    }
    job->run_id = (long)v;
    if (get_string(&ld, job->doc, "", "library", 1, &job->library) != 0 ||
        get_int(&ld, job->doc, "", "ranks", 1, 1, INT_MAX, &v) != 0) {
        return -1;
    }
    job->ranks = (int)v;
    v = job->ranks;
    if (get_int(&ld, job->doc, "", "ranks_per_node", 0, 1, INT_MAX, &v) != 0) {
        return -1;
    }
    job->ranks_per_node = (int)v;
    v = 0;
    if (!cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(job->doc, "virtual_ranks_per_node")) &&
        get_int(&ld, job->doc, "", "virtual_ranks_per_node", 0, 1, 1000000, &v) != 0) {
        return -1;
    }
    job->virtual_ranks_per_node = (int)v;
    job->launch = 1;
    job->launches = 1;
    {
        /* Repeated launches (the test's "launches"): this one's index. */
        const cJSON *l = cJSON_GetObjectItemCaseSensitive(job->doc, "launch");
        static const char *const lkeys[] = {"index", "of", NULL};
        if (l != NULL && !cJSON_IsNull(l)) {
            long long of = 1;
            long long index = 1;
            if (!cJSON_IsObject(l)) {
                return fail(&ld, "\"launch\" must be an object {\"index\", \"of\"}");
            }
            if (only_keys(&ld, l, "launch: ", lkeys) != 0 ||
                get_int(&ld, l, "launch: ", "of", 1, 1, 100000, &of) != 0 ||
                get_int(&ld, l, "launch: ", "index", 1, 1, of, &index) != 0) {
                return -1;
            }
            job->launch = (int)index;
            job->launches = (int)of;
        }
    }
    job->knobs = cJSON_GetObjectItemCaseSensitive(job->doc, "knobs");
    if (load_knobs(&ld, job) != 0 ||
        load_timing(&ld, cJSON_GetObjectItemCaseSensitive(job->doc, "timing"), &job->timing) != 0 ||
        get_string(&ld, job->doc, "", "verbosity", 0, &verbosity) != 0) {
        return -1;
    }
    if (verbosity != NULL && strcmp(verbosity, "minimal") != 0 && strcmp(verbosity, "full") != 0 &&
        strcmp(verbosity, "trace") != 0) {
        return fail(&ld, "verbosity \"%s\" is not minimal, full or trace", verbosity);
    }
    job->verbosity_trace = (verbosity != NULL && strcmp(verbosity, "trace") == 0);
    job->verbosity_full = job->verbosity_trace || (verbosity != NULL && strcmp(verbosity, "full") == 0);
    out = cJSON_GetObjectItemCaseSensitive(job->doc, "out");
    if (!cJSON_IsObject(out)) {
        return fail(&ld, "missing \"out\" (an object with points, raw_dir, run_meta)");
    }
    if (only_keys(&ld, out, "out: ", out_keys) != 0 ||
        get_string(&ld, out, "out: ", "points", 1, &job->out_points) != 0 ||
        get_string(&ld, out, "out: ", "raw_dir", 1, &job->out_raw_dir) != 0 ||
        get_string(&ld, out, "out: ", "run_meta", 1, &job->out_run_meta) != 0 ||
        get_string(&ld, out, "out: ", "trace_dir", job->verbosity_trace, &job->out_trace_dir) != 0) {
        return -1;
    }
    pts = cJSON_GetObjectItemCaseSensitive(job->doc, "points");
    if (!cJSON_IsArray(pts)) {
        return fail(&ld, "missing \"points\" (an array)");
    }
    job->npoints = cJSON_GetArraySize(pts);
    job->points = calloc((size_t)(job->npoints > 0 ? job->npoints : 1), sizeof(*job->points));
    if (job->points == NULL) {
        return fail(&ld, "out of memory");
    }
    i = 0;
    for (const cJSON *it = pts->child; it != NULL; it = it->next, i++) {
        if (load_point(&ld, it, i, &job->points[i]) != 0) {
            return -1;
        }
        if (job->points[i].root >= job->ranks) {
            return fail(&ld, "points[%d]: root %d is not below ranks (%d)", i,
                        job->points[i].root, job->ranks);
        }
    }
    return 0;
}

void bench_job_free(struct bench_job *job)
{
    cJSON_Delete(job->doc);
    free(job->points);
    memset(job, 0, sizeof(*job));
}

int bench_size_ok(const struct bench_job *job, int rank, int p, const char *program)
{
    const char *want_env = getenv("CG_EXPECT_NP");
    int want = job->ranks;

    if (want_env != NULL && atoi(want_env) != p) {
        want = atoi(want_env);
    }
    if (p == job->ranks && want == p) {
        return 1;
    }
    if (rank == 0) {
        fprintf(stderr,
                "%s: started as %d ranks, expected %d: wrong launcher? (a binary built for "
                "one MPI started by the other's launcher runs every rank alone)\n",
                program, p, want);
    }
    return 0;
}

/* The command line, PROG [--help] JOBFILE: 0 to go on, argv[optind] the
 * job file; 1 after --help (usage printed); 2 after a usage error (rank 0
 * says what is wrong). */
static int read_args(int argc, char **argv, const char *prog, const char *usage)
{
    static const struct option longs[] = {
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    int rank = 0;
    int opt;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    opterr = 0;
    optind = 1;
    while ((opt = getopt_long(argc, argv, ":h", longs, NULL)) != -1) {
        if (opt == 'h') {
            if (rank == 0) {
                fputs(usage, stdout);
            }
            return 1;
        }
        if (rank == 0) {
            (void)cg_cli_bad_option(prog, opt, argv);
        }
        return 2;
    }
    if (optind != argc - 1) {
        if (rank == 0) {
            fprintf(stderr, "%s: error: give one JOBFILE (%s --help)\n", prog, prog);
        }
        return 2;
    }
    return 0;
}

int bench_start(int *argc, char ***argv, const char *prog, const char *usage,
                struct bench_job *job, int *rank, int *size)
{
    char msg[1024];
    int rc;

    memset(job, 0, sizeof(*job));
    if (MPI_Init(argc, argv) != MPI_SUCCESS) {
        fprintf(stderr, "%s: MPI_Init failed\n", prog);
        return 3;
    }
    MPI_Comm_rank(MPI_COMM_WORLD, rank);
    MPI_Comm_size(MPI_COMM_WORLD, size);
    rc = read_args(*argc, *argv, prog, usage);
    if (rc == 0 && bench_job_load((*argv)[optind], job, msg, sizeof(msg)) != 0) {
        if (*rank == 0) {
            fprintf(stderr, "%s\n", msg);
        }
        bench_job_free(job);
        rc = 2;
    } else if (rc == 0 && !bench_size_ok(job, *rank, *size, prog)) {
        bench_job_free(job);
        rc = 3;
    }
    if (rc == 0) {
        return -1;
    }
    MPI_Finalize();
    return (rc == 1) ? 0 : rc; /* --help: 0 */
}
