/* compare.c - collgen compare BASE NEW: a regression check between two
 * campaigns (after an upgrade, a configuration change), harness/REPORT.md
 * "collgen compare".
 *
 *   1. read    both campaigns as collgen report does (report_data.c: records,
 *              raw files, campaign.json, run-<n>.json; launches merged)
 *   2. differ  what differs between their run metadata and campaign.json
 *              (library versions, knobs, environment, hosts, placement,
 *              timing), listed first since it explains the changes
 *   3. match   points by id (the id a point's launches share), ok on both
 *              sides; the ratio of medians NEW / BASE and its significance
 *              (cg_rep_test: the launch medians with several launches a
 *              side, else the raw repetitions)
 *   4. write   OUT/compare.txt (also printed), compare.md, compare.json
 *              (cJSON) and OUT/plots/ratio_*.png (plots.py --compare OUT),
 *              each as NAME.tmp renamed into place at the end
 *
 * Exit status: 0 no significant slowdown beyond the threshold; 3 at least
 * one (so that a CI job fails on it); 1 an output could not be written or
 * plots.py failed; 2 a usage error, a directory that is not a campaign, a
 * malformed record, campaigns of different record schema versions, or no
 * point in common.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "harness.h"
#include "report_data.h"
#include "report_stats.h"
#include "report_table.h"
#include "report_util.h"

static const char compare_usage[] =
    "usage: collgen compare BASE NEW [--threshold PCT] [--out DIR] [--no-plots] [--quiet]\n"
    "\n"
    "Compares two campaign directories written by 'collgen run' (BASE before an\n"
    "upgrade or a configuration change, NEW after): what differs between their\n"
    "run metadata first, then every point both measured (matched by point id),\n"
    "NEW's median over BASE's with a two-sided Mann-Whitney U test (on the\n"
    "launch medians when both ran several launches), and the points only one\n"
    "of them has.\n"
    "\n"
    "  --threshold PCT  a slowdown counts when NEW is at least PCT%% slower and\n"
    "                   the difference is significant (alpha 0.05); default 10\n"
    "  --out DIR        where compare.txt, compare.md, compare.json and plots/\n"
    "                   go (default NEW/compare-vs-<name of BASE>)\n"
    "  --no-plots       no plots\n"
    "  --quiet          print nothing but errors\n"
    "\n"
    "Exit status: 0 no significant slowdown beyond the threshold; 3 some; 1 an\n"
    "output could not be written; 2 bad arguments or campaigns, or no common point.\n";

struct cmp_opts {
    const char *base;  /* BASE */
    const char *new_;  /* NEW */
    const char *out;   /* --out, or NULL */
    double threshold;  /* --threshold as a fraction */
    int no_plots;      /* --no-plots */
    int quiet;         /* --quiet */
};

/* ---- what differs between the two runs ------------------------------------ */

/* One value of one field seen in BASE (side 1), NEW (2) or both (3). */
struct fact {
    char *where;  /* "campaign", or the library of the runs ("openmpi") */
    char *key;    /* dotted path ("mpi.library_version", "env.UCX_TLS") */
    char *value;  /* shown text */
    int sides;    /* bit 1 BASE, bit 2 NEW */
};

struct facts {
    struct fact *v;
    size_t n;
    size_t cap;
    int failed; /* out of memory */
};

static void facts_fini(struct facts *f)
{
    for (size_t i = 0; i < f->n; i++) {
        free(f->v[i].where);
        free(f->v[i].key);
        free(f->v[i].value);
    }
    free(f->v);
    memset(f, 0, sizeof *f);
}

static void fact_add(struct facts *f, const char *where, const char *key, const char *value,
                     int side)
{
    for (size_t i = 0; i < f->n; i++) {
        if (strcmp(f->v[i].where, where) == 0 && strcmp(f->v[i].key, key) == 0 &&
            strcmp(f->v[i].value, value) == 0) {
            f->v[i].sides |= side;
            return;
        }
    }
    if (f->n == f->cap) {
        size_t cap = (f->cap > 0) ? 2 * f->cap : 64;
        struct fact *v = realloc(f->v, cap * sizeof *v);
        if (v == NULL) {
            f->failed = 1;
            return;
        }
        f->v = v;
        f->cap = cap;
    }
    struct fact *x = &f->v[f->n];
    x->where = strdup(where);
    x->key = strdup(key);
    x->value = strdup(value);
    x->sides = side;
    if (x->where == NULL || x->key == NULL || x->value == NULL) {
        free(x->where);
        free(x->key);
        free(x->value);
        f->failed = 1;
        return;
    }
    f->n++;
}

/* A scalar as text; NULL for containers. */
static char *scalar_text(const cJSON *it)
{
    if (cJSON_IsString(it)) {
        return cg_rep_strf("%s", it->valuestring);
    }
    if (cJSON_IsBool(it)) {
        return cg_rep_strf("%s", cJSON_IsTrue(it) ? "true" : "false");
    }
    if (cJSON_IsNull(it)) {
        return cg_rep_strf("null");
    }
    if (cJSON_IsNumber(it)) {
        char num[64];
        cg_rep_fmt_number(num, sizeof num, it->valuedouble);
        return cg_rep_strf("%s", num);
    }
    return NULL;
}

/* Top-level keys of run-<n>.json that differ from run to run by nature
 * (ids, times, load), or that are summed up apart (placement, latency). */
static const char *const volatile_keys[] = {"schema_version", "run_id", "campaign",  "job_file",
                                            "started_utc",    "loadavg", "launch",   "latency",
                                            "placement",      "clock",   "test_skew", NULL};

/* Environment variables a launcher sets afresh for every launch (ids,
 * addresses, session paths, the job file's path): not a difference. */
static const char *const launch_env[] = {
    "env.OMPI_ARGV", "env.OMPI_FILE_LOCATION", "env.OMPI_MCA_ess_base_jobid",
    "env.OMPI_MCA_orte_hnp_uri", "env.OMPI_MCA_orte_jobfam_session_dir",
    "env.OMPI_MCA_orte_local_daemon_uri", "env.OMPI_MCA_orte_precondition_transports",
    "env.OMPI_MCA_orte_top_session_dir", "env.OMPI_MCA_initial_wdir", "env.SLURM_JOB_ID",
    "env.SLURM_JOBID", "env.SLURM_STEP_ID", "env.SLURM_STEPID", "env.SLURM_TASK_PID",
    "env.SLURM_JOB_NAME", "env.SLURM_SUBMIT_DIR", "env.MPIR_CVAR_CH3_INTERFACE_HOSTNAME", NULL};

static int launch_specific(const char *path)
{
    for (int k = 0; launch_env[k] != NULL; k++) {
        if (strcmp(path, launch_env[k]) == 0) {
            return 1;
        }
    }
    return 0;
}

/* Adds every scalar field of obj under prefix (arrays of scalars joined). */
static void flatten(struct facts *f, const cJSON *obj, const char *prefix, const char *where,
                    int side, int top)
{
    const cJSON *it;
    cJSON_ArrayForEach(it, obj)
    {
        int skip = 0;
        for (int k = 0; top && volatile_keys[k] != NULL; k++) {
            skip |= strcmp(it->string, volatile_keys[k]) == 0;
        }
        if (skip || (top == 0 && strcmp(it->string, "note") == 0)) {
            continue;
        }
        char *path = (prefix[0] != '\0') ? cg_rep_strf("%s.%s", prefix, it->string)
                                         : cg_rep_strf("%s", it->string);
        if (path == NULL) {
            f->failed = 1;
            return;
        }
        if (launch_specific(path)) {
            free(path);
            continue;
        }
        if (cJSON_IsObject(it)) {
            flatten(f, it, path, where, side, 0);
        } else if (cJSON_IsArray(it)) {
            struct cg_rep_buf b;
            cg_rep_buf_init(&b);
            const cJSON *e;
            int scalars = 1;
            cJSON_ArrayForEach(e, it)
            {
                char *t = scalar_text(e);
                if (t == NULL) {
                    scalars = 0;
                    break;
                }
                cg_rep_buf_printf(&b, "%s%s", (b.len > 0) ? ", " : "", t);
                free(t);
            }
            if (scalars) {
                char *t = cg_rep_buf_take(&b);
                fact_add(f, where, path, (t != NULL) ? t : "", side);
                free(t);
            } else {
                cg_rep_buf_fini(&b);
            }
        } else {
            char *t = scalar_text(it);
            if (t != NULL) {
                fact_add(f, where, path, t, side);
            }
            free(t);
        }
        free(path);
    }
}

/* The placement of a run, as one value: per rank its host, node-local
 * rank and how many CPUs it may run on (not the core it happened to start
 * on). */
static void placement_fact(struct facts *f, const cJSON *run, const char *where, int side)
{
    const cJSON *pl = cJSON_GetObjectItemCaseSensitive(run, "placement");
    const cJSON *e;
    struct cg_rep_buf b;
    if (!cJSON_IsArray(pl)) {
        return;
    }
    cg_rep_buf_init(&b);
    cJSON_ArrayForEach(e, pl)
    {
        const cJSON *host = cJSON_GetObjectItemCaseSensitive(e, "host");
        const cJSON *lr = cJSON_GetObjectItemCaseSensitive(e, "local_rank");
        const cJSON *aff = cJSON_GetObjectItemCaseSensitive(e, "affinity_cpus");
        cg_rep_buf_printf(&b, "%s%s/%d/%d", (b.len > 0) ? " " : "",
                          cJSON_IsString(host) ? host->valuestring : "?",
                          cJSON_IsNumber(lr) ? lr->valueint : -1,
                          cJSON_IsNumber(aff) ? aff->valueint : -1);
    }
    char *t = cg_rep_buf_take(&b);
    const cJSON *ranks = cJSON_GetObjectItemCaseSensitive(run, "ranks");
    char *key = cg_rep_strf("placement (p=%d: host/local rank/cpus per rank)",
                            cJSON_IsNumber(ranks) ? ranks->valueint : 0);
    if (t != NULL && key != NULL) {
        fact_add(f, where, key, t, side);
    } else {
        f->failed = 1;
    }
    free(t);
    free(key);
}

/* Every fact of one campaign: its campaign.json's test, platform and
 * resolved settings, and each run's metadata under its library. */
static void campaign_facts(struct facts *f, const struct cg_rep_campaign *c, int side)
{
    static const char *const campaign_keys[] = {"test", "platform", "resolved", NULL};
    for (int k = 0; c->campaign != NULL && campaign_keys[k] != NULL; k++) {
        const cJSON *o = cJSON_GetObjectItemCaseSensitive(c->campaign, campaign_keys[k]);
        const cJSON *it;
        cJSON_ArrayForEach(it, o)
        {
            /* The descriptors' text is summed up by its hash. */
            if (strcmp(it->string, "text") == 0 || strcmp(it->string, "file") == 0 ||
                strcmp(it->string, "description") == 0) {
                continue;
            }
            char *path = cg_rep_strf("%s.%s", campaign_keys[k], it->string);
            if (path == NULL) {
                f->failed = 1;
                return;
            }
            if (cJSON_IsObject(it)) {
                flatten(f, it, path, "campaign", side, 0);
            } else {
                char *t = scalar_text(it);
                if (t != NULL) {
                    fact_add(f, "campaign", path, t, side);
                }
                free(t);
            }
            free(path);
        }
    }
    for (size_t i = 0; i < c->nruns; i++) {
        const cJSON *run = c->runs[i].json;
        const cJSON *lib = cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(run, "mpi"), "library");
        const char *where = cJSON_IsString(lib) ? lib->valuestring : "?";
        flatten(f, run, "", where, side, 1);
        placement_fact(f, run, where, side);
        /* Of the clock, what is configured (not what each sync found). */
        const cJSON *clock = cJSON_GetObjectItemCaseSensitive(run, "clock");
        static const char *const clock_keys[] = {"method", "fitpoints", "exchanges",
                                                 "spacing_us", "resync_s", NULL};
        for (int k = 0; cJSON_IsObject(clock) && clock_keys[k] != NULL; k++) {
            char *t = scalar_text(cJSON_GetObjectItemCaseSensitive(clock, clock_keys[k]));
            char *key = cg_rep_strf("clock.%s", clock_keys[k]);
            if (t != NULL && key != NULL) {
                fact_add(f, where, key, t, side);
            }
            free(t);
            free(key);
        }
    }
}

/* The values of (where, key) on one side, joined; "(none)" when absent. */
static char *side_values(const struct facts *f, const char *where, const char *key, int side)
{
    struct cg_rep_buf b;
    cg_rep_buf_init(&b);
    for (size_t i = 0; i < f->n; i++) {
        const struct fact *x = &f->v[i];
        if ((x->sides & side) && strcmp(x->where, where) == 0 && strcmp(x->key, key) == 0) {
            cg_rep_buf_printf(&b, "%s%s", (b.len > 0) ? " | " : "", x->value);
        }
    }
    if (b.len == 0) {
        cg_rep_buf_add(&b, "(none)");
    }
    return cg_rep_buf_take(&b);
}

/* The median one-way latency floor over a campaign's runs; NAN when none. */
static double floor_median(const struct cg_rep_campaign *c)
{
    double *v = malloc((c->nruns + 1) * sizeof *v);
    size_t n = 0;
    double m = NAN;
    if (v == NULL) {
        return NAN;
    }
    for (size_t i = 0; i < c->nruns; i++) {
        const cJSON *fl = cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(c->runs[i].json, "latency"), "floor_ns");
        if (cJSON_IsNumber(fl)) {
            v[n++] = fl->valuedouble;
        }
    }
    for (size_t i = 1; i < n; i++) {
        for (size_t k = i; k > 0 && v[k - 1] > v[k]; k--) {
            double t = v[k];
            v[k] = v[k - 1];
            v[k - 1] = t;
        }
    }
    if (n > 0) {
        m = (n % 2 == 1) ? v[n / 2] : (v[(n / 2) - 1] + v[n / 2]) / 2.0;
    }
    free(v);
    return m;
}

/* ---- the points ---------------------------------------------------------- */

enum verdict { V_SLOWER, V_SLOWER_SMALL, V_FASTER, V_SAME, V_UNTESTED, V_BELOW_FLOOR };
static const char *const verdict_words[] = {"SLOWER", "slower (within threshold)", "faster",
                                            "same", "untested (raw missing)", "below floor"};

struct pair {
    const struct cg_rep_record *b; /* BASE's */
    const struct cg_rep_record *n; /* NEW's */
    double ratio;                  /* NEW / BASE */
    double p;                      /* the test, NAN untested */
    const char *how;               /* "launch medians" or "repetitions" */
    enum verdict verdict;
};

static int cmp_base_id(const void *pa, const void *pb)
{
    const struct cg_rep_record *a = *(const struct cg_rep_record *const *)pa;
    const struct cg_rep_record *b = *(const struct cg_rep_record *const *)pb;
    return strcmp(a->base_id, b->base_id);
}

/* Every record of c that stands for a point (ok or not: the first of its
 * id and launches), sorted by base_id. */
static const struct cg_rep_record **points_of(const struct cg_rep_campaign *c, size_t *n)
{
    const struct cg_rep_record **v = malloc((c->nrecs + 1) * sizeof *v);
    *n = 0;
    if (v == NULL) {
        return NULL;
    }
    for (size_t i = 0; i < c->nrecs; i++) {
        const struct cg_rep_record *r = &c->recs[i];
        if (r->duplicate_of == 0 && r->merged_into == 0) {
            v[(*n)++] = r;
        }
    }
    qsort(v, *n, sizeof *v, cmp_base_id);
    /* A point whose launches all failed has one record per launch: keep
     * the first; one with an ok launch has it first (merged ones drop out). */
    size_t k = 0;
    for (size_t i = 0; i < *n; i++) {
        if (k > 0 && strcmp(v[k - 1]->base_id, v[i]->base_id) == 0) {
            if (!cg_rep_is_ok(v[k - 1]) && cg_rep_is_ok(v[i])) {
                v[k - 1] = v[i];
            }
            continue;
        }
        v[k++] = v[i];
    }
    *n = k;
    return v;
}

static int cmp_pair(const void *pa, const void *pb)
{
    const struct pair *a = pa;
    const struct pair *b = pb;
    int s = cg_rep_cmp_group(a->n, b->n);
    if (s != 0) {
        return s;
    }
    if (a->n->size_B != b->n->size_B) {
        return (a->n->size_B > b->n->size_B) - (a->n->size_B < b->n->size_B);
    }
    if ((s = strcmp(a->n->kind, b->n->kind)) != 0) {
        return s;
    }
    return strcmp(a->n->name, b->n->name);
}

struct result {
    struct pair *pairs;                    /* common points, ok on both sides */
    size_t npairs;
    const struct cg_rep_record **only_base; /* points BASE has and NEW lacks */
    size_t nonly_base;
    const struct cg_rep_record **only_new;  /* and the other way round */
    size_t nonly_new;
    const struct cg_rep_record **bad_b;     /* common points not ok on a side: BASE's, */
    const struct cg_rep_record **bad_n;     /*   NEW's */
    size_t nbad;
    size_t nslower;                         /* V_SLOWER */
};

static void result_fini(struct result *r)
{
    free(r->pairs);
    free(r->only_base);
    free(r->only_new);
    free(r->bad_b);
    free(r->bad_n);
    memset(r, 0, sizeof *r);
}

static int match(const struct cg_rep_campaign *base, const struct cg_rep_campaign *new_,
                 double threshold, struct result *res)
{
    size_t nb = 0;
    size_t nn = 0;
    const struct cg_rep_record **vb = points_of(base, &nb);
    const struct cg_rep_record **vn = points_of(new_, &nn);
    size_t cap = nb + nn + 1;
    memset(res, 0, sizeof *res);
    res->pairs = malloc(cap * sizeof *res->pairs);
    res->only_base = malloc(cap * sizeof *res->only_base);
    res->only_new = malloc(cap * sizeof *res->only_new);
    res->bad_b = malloc(cap * sizeof *res->bad_b);
    res->bad_n = malloc(cap * sizeof *res->bad_n);
    if (vb == NULL || vn == NULL || res->pairs == NULL || res->only_base == NULL ||
        res->only_new == NULL || res->bad_b == NULL || res->bad_n == NULL) {
        free(vb);
        free(vn);
        return -1;
    }
    size_t i = 0;
    size_t k = 0;
    while (i < nb || k < nn) {
        int s = (i == nb) ? 1 : (k == nn) ? -1 : strcmp(vb[i]->base_id, vn[k]->base_id);
        if (s < 0) {
            res->only_base[res->nonly_base++] = vb[i++];
            continue;
        }
        if (s > 0) {
            res->only_new[res->nonly_new++] = vn[k++];
            continue;
        }
        const struct cg_rep_record *b = vb[i++];
        const struct cg_rep_record *n = vn[k++];
        if (!cg_rep_is_ok(b) || !cg_rep_is_ok(n)) {
            res->bad_b[res->nbad] = b;
            res->bad_n[res->nbad++] = n;
            continue;
        }
        struct pair *x = &res->pairs[res->npairs++];
        x->b = b;
        x->n = n;
        x->ratio = (b->median_ns > 0.0) ? n->median_ns / b->median_ns : NAN;
        if (cg_rep_test(n, b, &x->p, &x->how) != 0) {
            free(vb);
            free(vn);
            return -1;
        }
        if (b->below_floor || n->below_floor) {
            x->verdict = V_BELOW_FLOOR;
        } else if (isnan(x->p)) {
            x->verdict = V_UNTESTED;
        } else if (!(x->p < CG_REP_ALPHA) || isnan(x->ratio)) {
            x->verdict = V_SAME;
        } else if (x->ratio >= 1.0 + threshold) {
            x->verdict = V_SLOWER;
            res->nslower++;
        } else if (x->ratio > 1.0) {
            x->verdict = V_SLOWER_SMALL;
        } else {
            x->verdict = V_FASTER;
        }
    }
    qsort(res->pairs, res->npairs, sizeof *res->pairs, cmp_pair);
    free(vb);
    free(vn);
    return 0;
}

/* ---- the document -------------------------------------------------------- */

static void impl_name(char *out, size_t n, const struct cg_rep_record *r)
{
    snprintf(out, n, "%s:%s", r->kind, r->name);
}

static void fmt_us_l(char *out, size_t n, const struct cg_rep_record *r)
{
    char us[24];
    cg_rep_fmt_us(us, sizeof us, r->median_ns);
    if (r->nlaunch > 1) {
        snprintf(out, n, "%.23s (%d launches)", us, r->nlaunch);
    } else {
        snprintf(out, n, "%.23s", us);
    }
}

static const char *const diff_heads[] = {"where", "what", "BASE", "NEW"};
static const char *const pair_heads[] = {"size", "implementation", "BASE us", "NEW us",
                                         "NEW/BASE", "p", "test", "verdict"};
static const char *const slow_heads[] = {"point", "BASE us", "NEW us", "NEW/BASE", "p"};
static const char *const one_heads[] = {"point", "status", "collective", "library", "p",
                                        "size", "implementation"};
static const char *const bad_heads[] = {"point", "BASE status", "NEW status", "reason"};

static int differences(struct cg_rep_doc *d, const struct facts *f)
{
    struct cg_rep_table *t = cg_rep_table_new(4, diff_heads, "llll");
    if (t == NULL) {
        return -1;
    }
    for (size_t i = 0; i < f->n; i++) {
        const struct fact *x = &f->v[i];
        int first = 1;
        for (size_t k = 0; k < i && first; k++) {
            first = !(strcmp(f->v[k].where, x->where) == 0 && strcmp(f->v[k].key, x->key) == 0);
        }
        if (!first) {
            continue;
        }
        char *bv = side_values(f, x->where, x->key, 1);
        char *nv = side_values(f, x->where, x->key, 2);
        int rc = 0;
        if (bv == NULL || nv == NULL) {
            rc = -1;
        } else if (strcmp(bv, nv) != 0) {
            /* Values are in first-seen order: compare as sets too. */
            int same = 1;
            for (size_t k = 0; k < f->n && same; k++) {
                const struct fact *y = &f->v[k];
                if (strcmp(y->where, x->where) == 0 && strcmp(y->key, x->key) == 0) {
                    same = (y->sides == 3);
                }
            }
            if (!same) {
                const char *row[] = {x->where, x->key, bv, nv};
                rc = cg_rep_table_row(t, row);
            }
        }
        free(bv);
        free(nv);
        if (rc != 0) {
            cg_rep_table_free(t);
            return -1;
        }
    }
    cg_rep_doc_add(d, CG_REP_HEADING, 2, "What differs between the two runs");
    if (t->nrows == 0) {
        cg_rep_table_free(t);
        cg_rep_doc_add(d, CG_REP_PARA, 0,
                       "Nothing in their run metadata and campaign.json (library versions, "
                       "knobs, environment, hosts, placement, timing) differs.");
        return 0;
    }
    cg_rep_doc_add(d, CG_REP_PARA, 0,
                   "Fields of run-<n>.json (per library) and campaign.json whose values differ; "
                   "these explain changes before the algorithms do:");
    cg_rep_doc_add_table(d, t);
    return 0;
}

static int slowdowns(struct cg_rep_doc *d, const struct result *res, double threshold)
{
    char *title = cg_rep_strf("Slowdowns beyond %.0f%% (significant)", 100.0 * threshold);
    if (title == NULL) {
        return -1;
    }
    cg_rep_doc_add(d, CG_REP_HEADING, 2, title);
    free(title);
    if (res->nslower == 0) {
        cg_rep_doc_add(d, CG_REP_PARA, 0, "None.");
        return 0;
    }
    struct cg_rep_table *t = cg_rep_table_new(5, slow_heads, "lrrrr");
    if (t == NULL) {
        return -1;
    }
    for (size_t i = 0; i < res->npairs; i++) {
        const struct pair *x = &res->pairs[i];
        if (x->verdict != V_SLOWER) {
            continue;
        }
        char bu[48], nu[48], ratio[32], pv[32];
        fmt_us_l(bu, sizeof bu, x->b);
        fmt_us_l(nu, sizeof nu, x->n);
        snprintf(ratio, sizeof ratio, "%.3f", x->ratio);
        cg_rep_fmt_p(pv, sizeof pv, x->p);
        const char *row[] = {x->n->base_id, bu, nu, ratio, pv};
        if (cg_rep_table_row(t, row) != 0) {
            cg_rep_table_free(t);
            return -1;
        }
    }
    cg_rep_doc_add_table(d, t);
    return 0;
}

/* The factor by which the two launches' transport (roofline.p2p_ns) at a
 * point may differ before its ratio is flagged; collgen tune's
 * --max-launch-skew default, for the same reason
 * (harness/measurements/2026-12-03-tune-e2e.md). */
#define LAUNCH_SKEW 1.5

static int launch_skewed(const struct pair *x)
{
    double a = x->b->roof_p2p_ns, b = x->n->roof_p2p_ns;
    return x->b->nlaunch <= 1 && x->n->nlaunch <= 1 && a > 0.0 && b > 0.0 &&
           (a > LAUNCH_SKEW * b || b > LAUNCH_SKEW * a);
}

/* Points whose two launches moved the same bytes at speeds more than
 * LAUNCH_SKEW apart: their NEW/BASE may be the launch, not the change. */
static int skewed(struct cg_rep_doc *d, const struct result *res)
{
    static const char *const heads[] = {"point", "NEW/BASE", "verdict", "BASE p2p us",
                                        "NEW p2p us", "NEW/BASE p2p"};
    cg_rep_doc_add(d, CG_REP_HEADING, 2, "Points whose launches' transport differed");
    struct cg_rep_table *t = cg_rep_table_new(6, heads, "lrlrrr");
    if (t == NULL) {
        return -1;
    }
    for (size_t i = 0; i < res->npairs; i++) {
        const struct pair *x = &res->pairs[i];
        if (!launch_skewed(x)) {
            continue;
        }
        char ratio[32], bu[48], nu[48], q[32];
        snprintf(ratio, sizeof ratio, "%.3f", x->ratio);
        cg_rep_fmt_us(bu, sizeof bu, x->b->roof_p2p_ns);
        cg_rep_fmt_us(nu, sizeof nu, x->n->roof_p2p_ns);
        snprintf(q, sizeof q, "%.3f", x->n->roof_p2p_ns / x->b->roof_p2p_ns);
        const char *row[] = {x->n->base_id, ratio, verdict_words[x->verdict], bu, nu, q};
        if (cg_rep_table_row(t, row) != 0) {
            cg_rep_table_free(t);
            return -1;
        }
    }
    if (t->nrows == 0) {
        cg_rep_table_free(t);
        cg_rep_doc_add(d, CG_REP_PARA, 0, "None (or no roofline in the records).");
        return 0;
    }
    char *s = cg_rep_strf("At these points the one-message transport measured in each "
                          "record's own launch (roofline p2p) differs by more than %.1fx: "
                          "their NEW/BASE may say more about the launches than about the "
                          "change (repeated launches, \"launches\": N, settle it):",
                          LAUNCH_SKEW);
    if (s == NULL) {
        cg_rep_table_free(t);
        return -1;
    }
    cg_rep_doc_add(d, CG_REP_PARA, 0, s);
    free(s);
    cg_rep_doc_add_table(d, t);
    return 0;
}

static int pair_tables(struct cg_rep_doc *d, const struct result *res)
{
    cg_rep_doc_add(d, CG_REP_HEADING, 2, "Every common point");
    size_t i = 0;
    while (i < res->npairs) {
        size_t j = i + 1;
        while (j < res->npairs && cg_rep_cmp_group(res->pairs[j].n, res->pairs[i].n) == 0) {
            j++;
        }
        char *title = cg_rep_group_title(res->pairs[i].n);
        struct cg_rep_table *t = cg_rep_table_new(8, pair_heads, "rlrrrrll");
        if (title == NULL || t == NULL) {
            free(title);
            cg_rep_table_free(t);
            return -1;
        }
        cg_rep_doc_add(d, CG_REP_HEADING, 3, title);
        free(title);
        for (size_t k = i; k < j; k++) {
            const struct pair *x = &res->pairs[k];
            char size[32], impl[160], bu[48], nu[48], ratio[32], pv[32];
            cg_rep_fmt_size(size, sizeof size, x->n->size_B);
            impl_name(impl, sizeof impl, x->n);
            fmt_us_l(bu, sizeof bu, x->b);
            fmt_us_l(nu, sizeof nu, x->n);
            snprintf(ratio, sizeof ratio, "%.3f", x->ratio);
            cg_rep_fmt_p(pv, sizeof pv, x->p);
            const char *row[] = {size, impl, bu, nu, ratio, pv, x->how, verdict_words[x->verdict]};
            if (cg_rep_table_row(t, row) != 0) {
                cg_rep_table_free(t);
                return -1;
            }
        }
        cg_rep_doc_add_table(d, t);
        i = j;
    }
    return 0;
}

static int one_side(struct cg_rep_doc *d, const char *heading, const struct cg_rep_record *const *v,
                    size_t n)
{
    cg_rep_doc_add(d, CG_REP_HEADING, 2, heading);
    if (n == 0) {
        cg_rep_doc_add(d, CG_REP_PARA, 0, "None.");
        return 0;
    }
    struct cg_rep_table *t = cg_rep_table_new(7, one_heads, "lllllrl");
    if (t == NULL) {
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        char p[16], size[32], impl[160];
        snprintf(p, sizeof p, "%d", v[i]->ranks);
        cg_rep_fmt_size(size, sizeof size, v[i]->size_B);
        impl_name(impl, sizeof impl, v[i]);
        const char *row[] = {v[i]->base_id, v[i]->status, v[i]->collective, v[i]->library,
                             p,             size,         impl};
        if (cg_rep_table_row(t, row) != 0) {
            cg_rep_table_free(t);
            return -1;
        }
    }
    cg_rep_doc_add_table(d, t);
    return 0;
}

static int not_ok(struct cg_rep_doc *d, const struct result *res)
{
    cg_rep_doc_add(d, CG_REP_HEADING, 2, "Common points not ok on a side (not compared)");
    if (res->nbad == 0) {
        cg_rep_doc_add(d, CG_REP_PARA, 0, "None.");
        return 0;
    }
    struct cg_rep_table *t = cg_rep_table_new(4, bad_heads, "llll");
    if (t == NULL) {
        return -1;
    }
    for (size_t i = 0; i < res->nbad; i++) {
        const struct cg_rep_record *b = res->bad_b[i];
        const struct cg_rep_record *n = res->bad_n[i];
        const char *why = !cg_rep_is_ok(n) ? n->reason : b->reason;
        char reason[300];
        snprintf(reason, sizeof reason, "%s", (why != NULL) ? why : "(no reason given)");
        for (char *q = reason; *q != '\0'; q++) {
            if (*q == '\n' || *q == '\r' || *q == '\t') {
                *q = ' ';
            }
        }
        const char *row[] = {n->base_id, b->status, n->status, reason};
        if (cg_rep_table_row(t, row) != 0) {
            cg_rep_table_free(t);
            return -1;
        }
    }
    cg_rep_doc_add_table(d, t);
    return 0;
}

static int build_doc(struct cg_rep_doc *d, const struct cmp_opts *o,
                     const struct cg_rep_campaign *base, const struct cg_rep_campaign *new_,
                     const struct facts *f, const struct result *res)
{
    char *title = cg_rep_strf("collgen compare: %s (BASE) against %s (NEW)",
                              cg_rep_campaign_id(base), cg_rep_campaign_id(new_));
    double fb = floor_median(base);
    double fn = floor_median(new_);
    char fbs[32] = "-", fns[32] = "-";
    if (title == NULL) {
        return -1;
    }
    cg_rep_doc_add(d, CG_REP_HEADING, 1, title);
    free(title);
    if (!isnan(fb)) {
        cg_rep_fmt_us(fbs, sizeof fbs, fb);
    }
    if (!isnan(fn)) {
        cg_rep_fmt_us(fns, sizeof fns, fn);
    }
    char *summary = cg_rep_strf(
        "BASE %s, NEW %s: %zu common point%s compared, %zu significantly slower by %.0f%% or "
        "more (exit status %d); %zu only in BASE, %zu only in NEW, %zu not ok on a side. "
        "One-way latency floor (median over the runs): BASE %s us, NEW %s us.",
        o->base, o->new_, res->npairs, (res->npairs == 1) ? "" : "s", res->nslower,
        100.0 * o->threshold, (res->nslower > 0) ? 3 : 0, res->nonly_base, res->nonly_new,
        res->nbad, fbs, fns);
    if (summary == NULL) {
        return -1;
    }
    cg_rep_doc_add(d, CG_REP_PARA, 0, summary);
    free(summary);
    if (differences(d, f) != 0 || slowdowns(d, res, o->threshold) != 0 ||
        skewed(d, res) != 0 || pair_tables(d, res) != 0 ||
        one_side(d, "Only in BASE", res->only_base, res->nonly_base) != 0 ||
        one_side(d, "Only in NEW", res->only_new, res->nonly_new) != 0 || not_ok(d, res) != 0) {
        return -1;
    }
    char *legend = cg_rep_strf(
        "Points are matched by point id (the id a point's launches share). NEW/BASE: NEW's "
        "median over BASE's (each the median of its launch medians when it ran in several "
        "launches).\n"
        "p, test: the two-sided Mann-Whitney U test of NEW against BASE, on the launch medians "
        "when both ran at least two launches (a launch, not a repetition, is the unit that "
        "was repeated; exact up to 20 launches a side), else on the raw repetitions; alpha = "
        "%.2f.\n"
        "verdict: SLOWER when NEW is at least %.0f%% slower (NEW/BASE >= %.2f) and the test "
        "is significant (such points make the exit status 3); slower (within threshold) "
        "when significant but less; faster when significantly faster; same when not "
        "significant; below floor when either median is below its job's one-way latency "
        "floor (a timing artefact, never a slowdown); untested when a raw file is missing.",
        CG_REP_ALPHA, 100.0 * o->threshold, 1.0 + o->threshold);
    if (legend == NULL) {
        return -1;
    }
    cg_rep_doc_add(d, CG_REP_HEADING, 2, "How to read this");
    cg_rep_doc_add(d, CG_REP_LIST, 0, legend);
    free(legend);
    return d->failed ? -1 : 0;
}

/* compare.json, for plots.py --compare and for scripts (cJSON). */
static char *compare_json(const struct cmp_opts *o, const struct cg_rep_campaign *base,
                          const struct cg_rep_campaign *new_, const struct facts *f,
                          const struct result *res)
{
    cJSON *root = cJSON_CreateObject();
    cJSON *diffs = cJSON_CreateArray();
    cJSON *points = cJSON_CreateArray();
    cJSON *ob = cJSON_CreateArray();
    cJSON *on = cJSON_CreateArray();
    cJSON *bad = cJSON_CreateArray();
    char *text = NULL;
    if (root == NULL || diffs == NULL || points == NULL || ob == NULL || on == NULL ||
        bad == NULL) {
        goto done;
    }
    cJSON_AddNumberToObject(root, "schema_version", 1);
    cJSON_AddStringToObject(root, "written_by", "collgen compare");
    cJSON_AddStringToObject(root, "base", o->base);
    cJSON_AddStringToObject(root, "base_campaign", cg_rep_campaign_id(base));
    cJSON_AddStringToObject(root, "new", o->new_);
    cJSON_AddStringToObject(root, "new_campaign", cg_rep_campaign_id(new_));
    cJSON_AddNumberToObject(root, "threshold", o->threshold);
    cJSON_AddNumberToObject(root, "alpha", CG_REP_ALPHA);
    cJSON_AddNumberToObject(root, "slowdowns", (double)res->nslower);
    for (size_t i = 0; i < f->n; i++) {
        const struct fact *x = &f->v[i];
        int first = 1;
        int same = 1;
        for (size_t k = 0; k < f->n; k++) {
            const struct fact *y = &f->v[k];
            if (strcmp(y->where, x->where) == 0 && strcmp(y->key, x->key) == 0) {
                first &= !(k < i);
                same &= (y->sides == 3);
            }
        }
        if (!first || same) {
            continue;
        }
        cJSON *e = cJSON_CreateObject();
        cJSON *bv = cJSON_CreateArray();
        cJSON *nv = cJSON_CreateArray();
        for (size_t k = 0; k < f->n; k++) {
            const struct fact *y = &f->v[k];
            if (strcmp(y->where, x->where) == 0 && strcmp(y->key, x->key) == 0) {
                if (y->sides & 1) {
                    cJSON_AddItemToArray(bv, cJSON_CreateString(y->value));
                }
                if (y->sides & 2) {
                    cJSON_AddItemToArray(nv, cJSON_CreateString(y->value));
                }
            }
        }
        cJSON_AddStringToObject(e, "where", x->where);
        cJSON_AddStringToObject(e, "what", x->key);
        cJSON_AddItemToObject(e, "base", bv);
        cJSON_AddItemToObject(e, "new", nv);
        cJSON_AddItemToArray(diffs, e);
    }
    cJSON_AddItemToObject(root, "differences", diffs);
    diffs = NULL;
    for (size_t i = 0; i < res->npairs; i++) {
        const struct pair *x = &res->pairs[i];
        cJSON *e = cJSON_CreateObject();
        char impl[160];
        impl_name(impl, sizeof impl, x->n);
        cJSON_AddStringToObject(e, "point_id", x->n->base_id);
        cJSON_AddStringToObject(e, "collective", x->n->collective);
        cJSON_AddStringToObject(e, "library", x->n->library);
        cJSON_AddNumberToObject(e, "ranks", x->n->ranks);
        cJSON_AddStringToObject(e, "datatype", x->n->datatype);
        cJSON_AddStringToObject(e, "op", x->n->op);
        cJSON_AddNumberToObject(e, "root", x->n->root);
        cJSON_AddBoolToObject(e, "in_place", x->n->in_place);
        cJSON_AddNumberToObject(e, "size_B", x->n->size_B);
        cJSON_AddStringToObject(e, "implementation", impl);
        cJSON_AddNumberToObject(e, "base_median_ns", x->b->median_ns);
        cJSON_AddNumberToObject(e, "new_median_ns", x->n->median_ns);
        cJSON_AddNumberToObject(e, "base_launches", x->b->nlaunch);
        cJSON_AddNumberToObject(e, "new_launches", x->n->nlaunch);
        cJSON_AddItemToObject(e, "ratio",
                              isfinite(x->ratio) ? cJSON_CreateNumber(x->ratio) : cJSON_CreateNull());
        cJSON_AddItemToObject(e, "p_value",
                              isfinite(x->p) ? cJSON_CreateNumber(x->p) : cJSON_CreateNull());
        cJSON_AddStringToObject(e, "test", x->how);
        cJSON_AddStringToObject(e, "verdict", verdict_words[x->verdict]);
        cJSON_AddBoolToObject(e, "launch_skewed", launch_skewed(x));
        cJSON_AddItemToArray(points, e);
    }
    cJSON_AddItemToObject(root, "points", points);
    points = NULL;
    for (size_t i = 0; i < res->nonly_base; i++) {
        cJSON_AddItemToArray(ob, cJSON_CreateString(res->only_base[i]->base_id));
    }
    for (size_t i = 0; i < res->nonly_new; i++) {
        cJSON_AddItemToArray(on, cJSON_CreateString(res->only_new[i]->base_id));
    }
    for (size_t i = 0; i < res->nbad; i++) {
        cJSON *e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "point_id", res->bad_n[i]->base_id);
        cJSON_AddStringToObject(e, "base_status", res->bad_b[i]->status);
        cJSON_AddStringToObject(e, "new_status", res->bad_n[i]->status);
        cJSON_AddItemToArray(bad, e);
    }
    cJSON_AddItemToObject(root, "only_in_base", ob);
    cJSON_AddItemToObject(root, "only_in_new", on);
    cJSON_AddItemToObject(root, "not_ok", bad);
    ob = on = bad = NULL;
    text = cJSON_Print(root);
done:
    cJSON_Delete(root);
    cJSON_Delete(diffs);
    cJSON_Delete(points);
    cJSON_Delete(ob);
    cJSON_Delete(on);
    cJSON_Delete(bad);
    if (text != NULL) {
        /* cJSON's buffer is freed with cJSON_free; hand back a malloc'd one. */
        char *copy = cg_rep_strf("%s\n", text);
        cJSON_free(text);
        return copy;
    }
    return NULL;
}

/* ---- the command ---------------------------------------------------------- */

static int parse_args(int argc, char **argv, struct cmp_opts *o)
{
    static const struct option longs[] = {
        { "threshold", required_argument, NULL, 't' },
        { "out", required_argument, NULL, 'o' },
        { "no-plots", no_argument, NULL, 'P' },
        { "quiet", no_argument, NULL, 'q' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    int opt;
    memset(o, 0, sizeof *o);
    o->threshold = 0.10;
    opterr = 0;
    optind = 1;
    while ((opt = getopt_long(argc, argv, ":h", longs, NULL)) != -1) {
        switch (opt) {
        case 't': {
            const char *v = optarg;
            char *end = NULL;
            errno = 0;
            double t = strtod(v, &end);
            if (end != NULL && *end == '%') {
                end++;
            }
            if (end == v || *end != '\0' || errno != 0 || !(t > 0.0) || t >= 1000.0) {
                fprintf(stderr,
                        "collgen compare: error: --threshold '%s' is not a percentage above 0 "
                        "and below 1000 (10 means NEW 10%% slower)\n",
                        v);
                return -1;
            }
            o->threshold = t / 100.0;
            break;
        }
        case 'o':
            o->out = optarg;
            break;
        case 'P':
            o->no_plots = 1;
            break;
        case 'q':
            o->quiet = 1;
            break;
        case 'h':
            fputs(compare_usage, stdout);
            return 1;
        default:
            (void)cg_cli_bad_option("collgen compare", opt, argv);
            return -1;
        }
    }
    if (argc - optind > 2) {
        fprintf(stderr, "collgen compare: error: more than two campaigns ('%s')\n",
                argv[optind + 2]);
        return -1;
    }
    if (argc - optind != 2) {
        fprintf(stderr, "collgen compare: error: give BASE and NEW, two campaign directories "
                        "(collgen compare --help)\n");
        return -1;
    }
    o->base = argv[optind];
    o->new_ = argv[optind + 1];
    return 0;
}

/* A copy of path without trailing slashes; NULL out of memory. */
static char *trimmed(const char *path)
{
    char *s = strdup(path);
    for (size_t n = (s != NULL) ? strlen(s) : 0; n > 1 && s[n - 1] == '/'; n--) {
        s[n - 1] = '\0';
    }
    return s;
}

/* Loads one side; 0, or an exit status (2 not a campaign, 1 out of memory). */
static int load_side(struct cg_rep_campaign *c, const char *dir, const char *side)
{
    struct stat st;
    char *pts = cg_rep_strf("%s/points.jsonl", dir);
    if (pts == NULL) {
        return 1;
    }
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode) || access(pts, F_OK) != 0) {
        fprintf(stderr,
                "collgen compare: error: %s %s is not a campaign directory (%s; collgen run "
                "writes points.jsonl there)\n",
                side, dir,
                (stat(dir, &st) != 0)  ? strerror(errno)
                : !S_ISDIR(st.st_mode) ? "not a directory"
                                       : "it has no points.jsonl");
        free(pts);
        memset(c, 0, sizeof *c);
        return 2;
    }
    free(pts);
    int rc = cg_rep_load(c, dir, stderr);
    if (rc == 1) {
        fprintf(stderr, "collgen compare: out of memory\n");
    }
    return rc;
}

/* The one timing of c's records by schema_version (1, or 2 for 2 and 3,
 * which differ only by 3's "roofline"), 0 when they have none, -1 mixed. */
static int schema_of(const struct cg_rep_campaign *c)
{
    int v = 0;
    for (size_t i = 0; i < c->nrecs; i++) {
        int s = (c->recs[i].schema >= 2) ? 2 : c->recs[i].schema;
        if (v != 0 && s != v) {
            return -1;
        }
        v = s;
    }
    return v;
}

static int write_out(const char *dir, const char *name, const char *text, char **tmp)
{
    *tmp = cg_rep_strf("%s/%s.tmp", dir, name);
    if (*tmp == NULL) {
        return -1;
    }
    FILE *f = fopen(*tmp, "wb");
    if (f == NULL) {
        fprintf(stderr, "%s: error: cannot write: %s\n", *tmp, strerror(errno));
        return -1;
    }
    size_t len = strlen(text);
    int ok = fwrite(text, 1, len, f) == len;
    ok &= fclose(f) == 0;
    if (!ok) {
        fprintf(stderr, "%s: error: cannot write: %s\n", *tmp, strerror(errno));
        return -1;
    }
    return 0;
}

int cg_compare_main(int argc, char **argv)
{
    struct cmp_opts o;
    struct cg_rep_campaign base;
    struct cg_rep_campaign new_;
    struct facts f;
    struct result res;
    struct cg_rep_doc doc;
    static const char *const names[] = {"compare.txt", "compare.md", "compare.json"};
    char *tmp[3] = {NULL, NULL, NULL};
    char *texts[3] = {NULL, NULL, NULL};
    char *bdir = NULL;
    char *ndir = NULL;
    char *out = NULL;
    int rc = parse_args(argc, argv, &o);

    if (rc != 0) {
        return (rc == 1) ? 0 : 2;
    }
    memset(&base, 0, sizeof base);
    memset(&new_, 0, sizeof new_);
    memset(&f, 0, sizeof f);
    memset(&res, 0, sizeof res);
    cg_rep_doc_init(&doc);
    bdir = trimmed(o.base);
    ndir = trimmed(o.new_);
    if (bdir == NULL || ndir == NULL) {
        rc = 1;
        goto done;
    }
    o.base = bdir;
    o.new_ = ndir;
    if ((rc = load_side(&base, o.base, "BASE")) != 0 ||
        (rc = load_side(&new_, o.new_, "NEW")) != 0) {
        goto done;
    }
    {
        int sb = schema_of(&base);
        int sn = schema_of(&new_);
        if (sb < 0 || sn < 0 || (sb != 0 && sn != 0 && sb != sn)) {
            fprintf(stderr,
                    "collgen compare: error: BASE's records are of schema_version %s and NEW's "
                    "of %s: they time differently (harness/FORMATS.md, \"Record\"), so their "
                    "medians do not compare; measure both with the same collgen\n",
                    (sb < 0) ? "1 and 2 mixed" : (sb == 1) ? "1" : "2",
                    (sn < 0) ? "1 and 2 mixed" : (sn == 1) ? "1" : "2");
            rc = 2;
            goto done;
        }
    }
    campaign_facts(&f, &base, 1);
    campaign_facts(&f, &new_, 2);
    if (f.failed || match(&base, &new_, o.threshold, &res) != 0) {
        rc = 1;
        fprintf(stderr, "collgen compare: out of memory\n");
        goto done;
    }
    if (res.npairs == 0 && res.nbad == 0) {
        fprintf(stderr,
                "collgen compare: error: %s and %s have no point in common (points are "
                "matched by point id: %zu in BASE, %zu in NEW); they measured different "
                "things\n",
                o.base, o.new_, res.nonly_base, res.nonly_new);
        rc = 2;
        goto done;
    }
    if (o.out != NULL) {
        out = trimmed(o.out);
    } else {
        const char *slash = strrchr(o.base, '/');
        out = cg_rep_strf("%s/compare-vs-%s", o.new_, (slash != NULL) ? slash + 1 : o.base);
    }
    if (out == NULL || build_doc(&doc, &o, &base, &new_, &f, &res) != 0 ||
        (texts[0] = cg_rep_render_text(&doc)) == NULL ||
        (texts[1] = cg_rep_render_markdown(&doc)) == NULL ||
        (texts[2] = compare_json(&o, &base, &new_, &f, &res)) == NULL) {
        fprintf(stderr, "collgen compare: out of memory\n");
        rc = 1;
        goto done;
    }
    if (mkdir(out, 0755) != 0 && errno != EEXIST) {
        fprintf(stderr, "%s: error: cannot create: %s\n", out, strerror(errno));
        rc = 1;
        goto done;
    }
    rc = 1;
    for (int i = 0; i < 3; i++) {
        if (write_out(out, names[i], texts[i], &tmp[i]) != 0) {
            goto done;
        }
    }
    for (int i = 0; i < 3; i++) {
        char *path = cg_rep_strf("%s/%s", out, names[i]);
        if (path == NULL || rename(tmp[i], path) != 0) {
            fprintf(stderr, "%s: error: cannot rename: %s\n", tmp[i], strerror(errno));
            free(path);
            goto done;
        }
        free(path);
        free(tmp[i]);
        tmp[i] = NULL;
    }
    rc = (res.nslower > 0) ? 3 : 0;
    if (!o.no_plots) {
        char why[512] = "";
        enum cg_rep_plots pl = cg_rep_make_plots(out, "--compare", why, sizeof why);
        if (pl != CG_REP_PLOTS_MADE) {
            fprintf(stderr, "collgen compare: plots not made: %s\n", why);
            if (pl == CG_REP_PLOTS_FAILED) {
                rc = 1;
            }
        }
    }
    if (!o.quiet) {
        fputs(texts[0], stdout);
        printf("\ncollgen compare: wrote %s/compare.txt, %s/compare.md, %s/compare.json%s\n", out,
               out, out, o.no_plots ? "" : " and its plots/");
    }
done:
    for (int i = 0; i < 3; i++) {
        if (tmp[i] != NULL) {
            unlink(tmp[i]);
        }
        free(tmp[i]);
        free(texts[i]);
    }
    cg_rep_doc_fini(&doc);
    result_fini(&res);
    facts_fini(&f);
    cg_rep_campaign_fini(&base);
    cg_rep_campaign_fini(&new_);
    free(bdir);
    free(ndir);
    free(out);
    return rc;
}
