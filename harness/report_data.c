/* report_data.c - reads a campaign directory (report_data.h).
 *
 * Everything is checked before the report writes anything: a record that
 * lacks a field the report needs, a line that is not JSON, a raw file with a
 * line that is not a time, all stop the report with the file and line
 * (exit 2). Only two things are tolerated, and both are shown in the report:
 * an ok record whose raw file is absent (its ratios are not tested) and a
 * point_id that appears twice (the first record is used).
 */
#include "report_data.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "report_util.h"
#include "jsonio.h" /* cg_jget_* */
#include "util.h" /* cg_slurp */

/* Where a record's errors are reported. */
struct where {
    FILE *err;        /* sink */
    const char *file; /* DIR/points.jsonl */
    int line;         /* 1-based */
};

static void bad(const struct where *w, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void bad(const struct where *w, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(w->err, "%s:%d: error: ", w->file, w->line);
    vfprintf(w->err, fmt, ap);
    fputc('\n', w->err);
    va_end(ap);
}

/* Members are read by dotted path ("timing.median_ns") with
 * runtime/util/jsonio.h's getters; these add the record's messages. */
static int need_string(const struct where *w, const cJSON *rec, const char *path,
                       const char **out)
{
    const char *s = NULL;
    if (cg_jget_str(rec, path, &s) != 0 || s[0] == '\0') {
        bad(w, "the record has no '%s' (a non-empty string)", path);
        return -1;
    }
    *out = s;
    return 0;
}

static int need_number(const struct where *w, const cJSON *rec, const char *path,
                       const char *why, double *out)
{
    double v = -1.0;
    if (cg_jget_num(rec, path, &v) != 0 || v < 0.0) {
        bad(w, "the record has no '%s' (a number >= 0)%s", path, why);
        return -1;
    }
    *out = v;
    return 0;
}

static const char *opt_string(const cJSON *rec, const char *path, const char *dflt)
{
    const char *s = dflt;
    (void)cg_jget_str(rec, path, &s); /* absent, null or not a string: dflt */
    return s;
}

static int diff_lists(const cJSON *rec, const char *key)
{
    const cJSON *d = cg_jget_path(rec, "diff");
    const cJSON *it;
    cJSON_ArrayForEach(it, d)
    {
        if (cJSON_IsString(it) && strcmp(it->valuestring, key) == 0) {
            return 1;
        }
    }
    return 0;
}

/* "lane_pattern(k=2)" -> pattern "lane_pattern", k 2; 0, or -1 when the
 * name is not a micro-benchmark's. */
static int micro_name(const char *name, const char **pattern, int *k)
{
    static const char *const patterns[] = {"lane_pattern", "multi_collective"};
    for (size_t i = 0; i < sizeof patterns / sizeof patterns[0]; i++) {
        size_t n = strlen(patterns[i]);
        if (strncmp(name, patterns[i], n) != 0 || strncmp(name + n, "(k=", 3) != 0) {
            continue;
        }
        const char *d = name + n + 3;
        char *end = NULL;
        if (*d < '1' || *d > '9') {
            return -1;
        }
        errno = 0;
        long v = strtol(d, &end, 10);
        if (errno != 0 || v < 1 || v > 1000000 || strcmp(end, ")") != 0) {
            return -1;
        }
        *pattern = patterns[i];
        *k = (int)v;
        return 0;
    }
    return -1;
}

/* The fields of a micro-benchmark record (kind micro, FORMATS.md); 0 or -1
 * (reported). */
static int fill_micro(const struct where *w, struct cg_rep_record *r)
{
    const cJSON *rec = r->json;
    if (micro_name(r->name, &r->micro, &r->micro_k) != 0) {
        bad(w, "a micro-benchmark's name must be lane_pattern(k=<lanes>) or "
               "multi_collective(k=<lanes>) with lanes a whole number >= 1, not '%s'",
            r->name);
        return -1;
    }
    int lane = strcmp(r->micro, "lane_pattern") == 0;
    if (lane != (strcmp(r->collective, "lane_pattern") == 0)) {
        bad(w, "micro:%s must have collective %s, not '%s'", r->name,
            lane ? "'lane_pattern'" : "the collective its lanes run", r->collective);
        return -1;
    }
    const cJSON *params = cg_jget_path(rec, "requested.params");
    if (params != NULL && !cJSON_IsNull(params)) {
        const cJSON *k = cJSON_IsObject(params) ? cg_jget_path(params, "k") : NULL;
        if (!cJSON_IsNumber(k) || k->valuedouble != (double)r->micro_k) {
            bad(w, "'requested.params' of micro:%s must be {\"k\": %d}", r->name, r->micro_k);
            return -1;
        }
    }
    return 0;
}

/* The node shape asked for (requested.node_shape, ranks_per_node, regular)
 * and whether the runtime found it regular (effective.regular,
 * irregular_why); 0 or -1 (reported). */
static int fill_shape(const struct where *w, struct cg_rep_record *r)
{
    const cJSON *rec = r->json;
    const cJSON *shape = cg_jget_path(rec, "requested.node_shape");
    if (cJSON_IsString(shape)) {
        if (strcmp(shape->valuestring, "virtual (CG_PPN)") == 0) {
            r->virtual_shape = 1;
        } else if (strcmp(shape->valuestring, "real") != 0) {
            bad(w, "'requested.node_shape' must be \"real\" or \"virtual (CG_PPN)\", not '%s'",
                shape->valuestring);
            return -1;
        }
    } else if (shape != NULL && !cJSON_IsNull(shape)) {
        bad(w, "'requested.node_shape' must be a string or null");
        return -1;
    }
    const cJSON *rpn = cg_jget_path(rec, "requested.ranks_per_node");
    if (cJSON_IsNumber(rpn)) {
        double v = rpn->valuedouble;
        if (v < 1.0 || v != floor(v) || v > 1e9) {
            bad(w, "'requested.ranks_per_node' must be a whole number >= 1");
            return -1;
        }
        r->ranks_per_node = (int)v;
    } else if (rpn != NULL && !cJSON_IsNull(rpn)) {
        bad(w, "'requested.ranks_per_node' must be a number or null");
        return -1;
    }
    if (r->virtual_shape && r->ranks_per_node == 0) {
        bad(w, "a record of node_shape \"virtual (CG_PPN)\" needs 'requested.ranks_per_node'");
        return -1;
    }
    const cJSON *reg = cg_jget_path(rec, "effective.regular");
    if (!cJSON_IsBool(reg)) {
        reg = cg_jget_path(rec, "requested.regular");
    }
    r->irregular = cJSON_IsFalse(reg);
    r->irregular_why = opt_string(rec, "effective.irregular_why", NULL);
    return 0;
}

/* "launch" (schema 2): which of how many launches, and the id they share. */
static int fill_launch(const struct where *w, struct cg_rep_record *r)
{
    const cJSON *l = cg_jget_path(r->json, "launch");
    r->base_id = r->point_id;
    r->launch = 1;
    r->launches = 1;
    if (l == NULL || cJSON_IsNull(l)) {
        return 0;
    }
    const cJSON *idx = cg_jget_path(l, "index");
    const cJSON *of = cg_jget_path(l, "of");
    const cJSON *id = cg_jget_path(l, "point_id");
    if (!cJSON_IsObject(l) || !cJSON_IsNumber(idx) || !cJSON_IsNumber(of) ||
        !cJSON_IsString(id) || id->valuestring[0] == '\0' || of->valuedouble < 1.0 ||
        of->valuedouble > 1e5 || idx->valuedouble < 1.0 || idx->valuedouble > of->valuedouble ||
        idx->valuedouble != floor(idx->valuedouble) || of->valuedouble != floor(of->valuedouble)) {
        bad(w, "'launch' must be {\"index\": k, \"of\": n, \"point_id\": \"...\"} with "
               "1 <= k <= n");
        return -1;
    }
    r->launch = (int)idx->valuedouble;
    r->launches = (int)of->valuedouble;
    r->base_id = id->valuestring;
    return 0;
}

/* "validity" and the timing figure (schema 2; ok records). */
static int fill_validity(const struct where *w, struct cg_rep_record *r)
{
    r->figure = opt_string(r->json, "timing.figure", "max_rank_duration");
    r->sync = opt_string(r->json, "timing.sync", NULL);
    const cJSON *v = cg_jget_path(r->json, "validity");
    if (v == NULL || cJSON_IsNull(v)) {
        return 0;
    }
    if (!cJSON_IsObject(v)) {
        bad(w, "'validity' must be an object or null");
        return -1;
    }
    const cJSON *below = cg_jget_path(v, "below_latency_floor");
    const cJSON *floor_ns = cg_jget_path(v, "latency_floor_ns");
    const cJSON *over = cg_jget_path(v, "oversubscribed");
    const cJSON *hr = cg_jget_path(v, "host_ranks");
    const cJSON *hc = cg_jget_path(v, "host_cores");
    if ((below != NULL && !cJSON_IsBool(below)) ||
        (over != NULL && !cJSON_IsBool(over) && !cJSON_IsNull(over)) ||
        (floor_ns != NULL && !cJSON_IsNumber(floor_ns) && !cJSON_IsNull(floor_ns))) {
        bad(w, "'validity' needs below_latency_floor (true or false), oversubscribed (true, "
               "false or null) and latency_floor_ns (a number or null)");
        return -1;
    }
    r->below_floor = cJSON_IsTrue(below);
    r->floor_ns = cJSON_IsNumber(floor_ns) ? floor_ns->valuedouble : NAN;
    r->oversubscribed = cJSON_IsBool(over) ? cJSON_IsTrue(over) : -1;
    r->host_ranks = cJSON_IsNumber(hr) ? (int)hr->valuedouble : 0;
    r->host_cores = cJSON_IsNumber(hc) ? (int)hc->valuedouble : 0;
    return 0;
}

/* Pulls the fields out of one parsed record; 0 or -1 (reported). */
static int fill_record(const struct where *w, struct cg_rep_record *r)
{
    static const char *const statuses[] = {"ok", "failed_check", "error", "timeout",
                                           "skipped", NULL};
    const cJSON *rec = r->json;
    if (!cJSON_IsObject(rec)) {
        bad(w, "a record must be a JSON object");
        return -1;
    }
    const cJSON *sv = cg_jget_path(rec, "schema_version");
    if (!cJSON_IsNumber(sv)) {
        bad(w, "the record has no 'schema_version' (a number)");
        return -1;
    }
    if (sv->valuedouble != 1.0 && sv->valuedouble != 2.0 && sv->valuedouble != 3.0) {
        char num[32];
        cg_rep_fmt_number(num, sizeof num, sv->valuedouble);
        bad(w, "schema_version %s is not supported (collgen report reads 1, 2 and 3)", num);
        return -1;
    }
    r->schema = (int)sv->valuedouble;
    if (need_string(w, rec, "status", &r->status) != 0 ||
        need_string(w, rec, "point_id", &r->point_id) != 0 ||
        need_string(w, rec, "collective", &r->collective) != 0 ||
        need_string(w, rec, "library", &r->library) != 0 ||
        need_string(w, rec, "kind", &r->kind) != 0 ||
        need_string(w, rec, "name", &r->name) != 0) {
        return -1;
    }
    int known = 0;
    for (int i = 0; statuses[i] != NULL; i++) {
        known |= (strcmp(r->status, statuses[i]) == 0);
    }
    if (!known) {
        bad(w, "status '%s' is not one of ok, failed_check, error, timeout, skipped",
            r->status);
        return -1;
    }
    if (strcmp(r->kind, "native") != 0 && strcmp(r->kind, "generated") != 0 &&
        strcmp(r->kind, "bound") != 0 && strcmp(r->kind, "micro") != 0 &&
        strcmp(r->kind, "baseline") != 0) {
        bad(w, "kind '%s' is not native, generated, baseline, bound or micro", r->kind);
        return -1;
    }
    if (strcmp(r->kind, "micro") == 0) {
        if (fill_micro(w, r) != 0) {
            return -1;
        }
    } else if (strcmp(r->collective, "lane_pattern") == 0) {
        bad(w, "collective 'lane_pattern' is for kind micro (micro:lane_pattern), not '%s'",
            r->kind);
        return -1;
    }
    double ranks = 0.0;
    if (need_number(w, rec, "requested.ranks", "", &ranks) != 0 ||
        need_number(w, rec, "size_B", "", &r->size_B) != 0) {
        return -1;
    }
    if (ranks < 1.0 || ranks != floor(ranks) || ranks > 1e9) {
        bad(w, "'requested.ranks' must be a whole number >= 1");
        return -1;
    }
    r->ranks = (int)ranks;
    if (fill_shape(w, r) != 0) {
        return -1;
    }
    r->reason = opt_string(rec, "reason", NULL);
    r->datatype = opt_string(rec, "requested.datatype", "");
    r->op = opt_string(rec, "requested.op", "");
    const cJSON *root = cg_jget_path(rec, "requested.root");
    r->root = cJSON_IsNumber(root) ? root->valueint : 0;
    r->in_place = cJSON_IsTrue(cg_jget_path(rec, "requested.in_place"));
    r->algorithm_source = opt_string(rec, "effective.algorithm_source", NULL);
    /* Why apart: "unobservable" says the library cannot tell, not that it
     * ran something else; such records are summed up in one note per
     * library and collective instead of being marked as fallbacks. */
    if (r->algorithm_source != NULL && strcmp(r->algorithm_source, "unobservable") == 0) {
        r->unobservable = strcmp(r->kind, "native") == 0 && strcmp(r->name, "default") != 0;
        r->unobservable_why = opt_string(rec, "effective.forced_by", NULL);
    } else if (diff_lists(rec, "algorithm")) {
        r->effective_algorithm = opt_string(rec, "effective.algorithm", "unknown");
    }
    r->algbw_GBps = NAN;
    r->busbw_GBps = NAN;
    if (fill_launch(w, r) != 0) {
        return -1;
    }
    r->floor_ns = NAN;
    r->oversubscribed = -1;
    r->nlaunch = 1;
    r->roof_limit_ns = NAN;
    r->roof_overlap_ns = NAN;
    r->roof_p2p_ns = NAN;
    {
        /* Schema 3 (bench_roof.c); absent before, null where not measured. */
        const cJSON *roof = cg_jget_path(rec, "roofline");
        if (roof != NULL && !cJSON_IsNull(roof)) {
            const cJSON *lim = cJSON_IsObject(roof) ? cg_jget_path(roof, "limit_ns") : NULL;
            const cJSON *ovl = cJSON_IsObject(roof) ? cg_jget_path(roof, "overlap_limit_ns") : NULL;
            if (!cJSON_IsNumber(lim) || !cJSON_IsNumber(ovl)) {
                bad(w, "'roofline' must be null or an object with limit_ns and "
                       "overlap_limit_ns (numbers)");
                return -1;
            }
            r->roof_limit_ns = lim->valuedouble;
            r->roof_overlap_ns = ovl->valuedouble;
            const cJSON *p2p = cg_jget_path(roof, "p2p_ns");
            if (cJSON_IsNumber(p2p) && p2p->valuedouble > 0.0) {
                r->roof_p2p_ns = p2p->valuedouble;
            }
        }
    }
    if (strcmp(r->status, "ok") != 0) {
        return 0;
    }
    if (fill_validity(w, r) != 0) {
        return -1;
    }
    const char *why = "; a record with status ok needs it";
    if (need_number(w, rec, "timing.median_ns", why, &r->median_ns) != 0 ||
        need_number(w, rec, "timing.p25_ns", why, &r->p25_ns) != 0 ||
        need_number(w, rec, "timing.p75_ns", why, &r->p75_ns) != 0) {
        return -1;
    }
    const cJSON *reps = cg_jget_path(rec, "timing.n");
    const cJSON *stop = cg_jget_path(rec, "timing.stop");
    r->reps = (cJSON_IsNumber(reps) && reps->valuedouble >= 0.0) ? (long)reps->valuedouble : 0;
    r->stop = cJSON_IsString(stop) ? stop->valuestring : NULL;
    const cJSON *algbw = cg_jget_path(rec, "bandwidth.algbw_GBps");
    const cJSON *busbw = cg_jget_path(rec, "bandwidth.busbw_GBps");
    if (cJSON_IsNumber(algbw)) {
        r->algbw_GBps = algbw->valuedouble;
    }
    if (cJSON_IsNumber(busbw)) {
        r->busbw_GBps = busbw->valuedouble;
    }
    const cJSON *raw = cg_jget_path(rec, "raw");
    if (cJSON_IsString(raw)) {
        const char *p = raw->valuestring;
        /* Why: the path comes from a file; keep the report inside DIR. */
        if (p[0] == '\0' || p[0] == '/' || strcmp(p, "..") == 0 || strncmp(p, "../", 3) == 0 ||
            strstr(p, "/../") != NULL ||
            (strlen(p) >= 3 && strcmp(p + strlen(p) - 3, "/..") == 0)) {
            bad(w, "'raw' must be a path inside the campaign directory, not '%s'", p);
            return -1;
        }
        r->raw_path = p;
    } else if (!cJSON_IsNull(raw) && raw != NULL) {
        bad(w, "'raw' must be a string or null");
        return -1;
    }
    return 0;
}

/* Reads a raw file: one repetition per line, the first column a time in ns.
 * Returns 0, 1 when the file is absent, -1 on anything else (reported),
 * -2 out of memory. */
static int load_raw(FILE *err, const char *dir, struct cg_rep_record *r)
{
    char *path = cg_rep_strf("%s/%s", dir, r->raw_path);
    if (path == NULL) {
        return -2;
    }
    size_t len = 0;
    char *text = cg_slurp(path, &len);
    if (text == NULL) {
        int e = errno;
        if (e == ENOENT) {
            free(path);
            return 1;
        }
        fprintf(err, "%s: error: cannot read: %s\n", path, strerror(e));
        free(path);
        return (e == ENOMEM) ? -2 : -1;
    }
    size_t cap = 64;
    double *v = malloc(cap * sizeof *v);
    if (v == NULL) {
        free(text);
        free(path);
        return -2;
    }
    size_t n = 0;
    int line = 0;
    int rc = 0;
    char *p = text;
    while (*p != '\0' && rc == 0) {
        char *nl = strchr(p, '\n');
        char *next = (nl != NULL) ? nl + 1 : p + strlen(p);
        if (nl != NULL) {
            *nl = '\0';
        }
        line++;
        char *q = p;
        while (*q == ' ' || *q == '\t' || *q == '\r') {
            q++;
        }
        if (*q != '\0') {
            char *end = NULL;
            errno = 0;
            double t = strtod(q, &end);
            if (end == q || errno != 0 || !isfinite(t) || t < 0.0 ||
                (*end != '\0' && *end != ' ' && *end != '\t' && *end != '\r')) {
                size_t shown = strcspn(q, " \t\r");
                fprintf(err, "%s:%d: error: expected a time in ns (a number >= 0), found '%.*s'\n",
                        path, line, (int)(shown > 40 ? 40 : shown), q);
                rc = -1;
                break;
            }
            if (n == cap) {
                double *bigger = realloc(v, 2 * cap * sizeof *v);
                if (bigger == NULL) {
                    rc = -2;
                    break;
                }
                v = bigger;
                cap *= 2;
            }
            v[n++] = t;
        }
        p = next;
    }
    free(text);
    free(path);
    if (rc != 0) {
        free(v);
        return rc;
    }
    r->raw = v;
    r->nraw = n;
    return 0;
}

/* Parses a whole JSON file; NULL with the error reported, or *absent = 1
 * when it does not exist. */
static cJSON *load_json_file(FILE *err, const char *path, int *absent, int *oom)
{
    size_t len = 0;
    char *text = cg_slurp(path, &len);
    *absent = 0;
    *oom = 0;
    if (text == NULL) {
        if (errno == ENOENT) {
            *absent = 1;
        } else if (errno == ENOMEM) {
            *oom = 1;
        } else {
            fprintf(err, "%s: error: cannot read: %s\n", path, strerror(errno));
        }
        return NULL;
    }
    const char *end = NULL;
    cJSON *j = cJSON_ParseWithOpts(text, &end, 1);
    if (j == NULL) {
        int line = 1;
        int col = 1;
        for (const char *q = text; end != NULL && q < end && *q != '\0'; q++) {
            if (*q == '\n') {
                line++;
                col = 1;
            } else {
                col++;
            }
        }
        fprintf(err, "%s:%d:%d: error: not valid JSON\n", path, line, col);
    } else if (!cJSON_IsObject(j)) {
        fprintf(err, "%s:1:1: error: expected a JSON object\n", path);
        cJSON_Delete(j);
        j = NULL;
    }
    free(text);
    return j;
}

static int cmp_runs(const void *a, const void *b)
{
    int x = ((const struct cg_rep_run *)a)->id;
    int y = ((const struct cg_rep_run *)b)->id;
    return (x > y) - (x < y);
}

/* Reads every run-<n>.json of dir; 0, 2 (reported) or 1 (memory). */
static int load_runs(struct cg_rep_campaign *c, FILE *err)
{
    DIR *d = opendir(c->dir);
    if (d == NULL) {
        fprintf(err, "%s: error: cannot list: %s\n", c->dir, strerror(errno));
        return 2;
    }
    int rc = 0;
    size_t cap = 0;
    struct dirent *e;
    while (rc == 0 && (e = readdir(d)) != NULL) {
        int id = 0;
        int used = 0;
        if (sscanf(e->d_name, "run-%d.json%n", &id, &used) != 1 ||
            used != (int)strlen(e->d_name) || id < 0) {
            continue;
        }
        char *path = cg_rep_strf("%s/%s", c->dir, e->d_name);
        if (path == NULL) {
            rc = 1;
            break;
        }
        int absent = 0;
        int oom = 0;
        cJSON *j = load_json_file(err, path, &absent, &oom);
        free(path);
        if (j == NULL) {
            rc = oom ? 1 : 2;
            break;
        }
        if (c->nruns == cap) {
            size_t ncap = (cap != 0) ? 2 * cap : 16;
            struct cg_rep_run *bigger = realloc(c->runs, ncap * sizeof *bigger);
            if (bigger == NULL) {
                cJSON_Delete(j);
                rc = 1;
                break;
            }
            c->runs = bigger;
            cap = ncap;
        }
        c->runs[c->nruns].id = id;
        c->runs[c->nruns].json = j;
        c->nruns++;
    }
    closedir(d);
    if (c->nruns > 1) {
        qsort(c->runs, c->nruns, sizeof *c->runs, cmp_runs);
    }
    return rc;
}

struct by_id {
    const char *id; /* point_id */
    size_t index;   /* into recs */
};

static int cmp_by_id(const void *a, const void *b)
{
    const struct by_id *x = a;
    const struct by_id *y = b;
    int s = strcmp(x->id, y->id);
    if (s != 0) {
        return s;
    }
    return (x->index > y->index) - (x->index < y->index);
}

/* Marks every record whose point_id an earlier line already had. */
static int mark_duplicates(struct cg_rep_campaign *c)
{
    if (c->nrecs < 2) {
        return 0;
    }
    struct by_id *v = malloc(c->nrecs * sizeof *v);
    if (v == NULL) {
        return 1;
    }
    for (size_t i = 0; i < c->nrecs; i++) {
        v[i].id = c->recs[i].point_id;
        v[i].index = i;
    }
    qsort(v, c->nrecs, sizeof *v, cmp_by_id);
    /* Equal ids sort by index, so the first of each run is the earliest line. */
    size_t first = 0;
    for (size_t i = 1; i < c->nrecs; i++) {
        if (strcmp(v[first].id, v[i].id) == 0) {
            c->recs[v[i].index].duplicate_of = c->recs[v[first].index].line;
        } else {
            first = i;
        }
    }
    free(v);
    return 0;
}

int cg_rep_cmp_shape(const struct cg_rep_record *a, const struct cg_rep_record *b)
{
    if (a->virtual_shape != b->virtual_shape) {
        return a->virtual_shape - b->virtual_shape;
    }
    return (a->ranks_per_node > b->ranks_per_node) - (a->ranks_per_node < b->ranks_per_node);
}

void cg_rep_shape_label(char *out, size_t n, const struct cg_rep_record *r)
{
    const char *what = r->virtual_shape ? "CG_PPN=" : "real";
    int k = r->ranks_per_node;
    if (k <= 0) {
        snprintf(out, n, "real");
    } else if (r->irregular || r->ranks % k != 0) {
        if (r->virtual_shape) {
            snprintf(out, n, "%s%d: irregular", what, k);
        } else {
            snprintf(out, n, "%s: irregular", what);
        }
    } else {
        int nodes = r->ranks / k;
        if (r->virtual_shape) {
            snprintf(out, n, "%s%d: %d node%s x %d", what, k, nodes, (nodes == 1) ? "" : "s", k);
        } else {
            snprintf(out, n, "%s: %d node%s x %d", what, nodes, (nodes == 1) ? "" : "s", k);
        }
    }
}

/* Marks every record when two records of one process count have different
 * node shapes, or a record ran under a virtual one (CG_PPN): then the
 * tables, the guideline report and the profile name the shape (it is part
 * of their keys all the same). A campaign on real nodes only, one shape
 * per process count, reads as it did before node shapes. */
static int mark_shapes(struct cg_rep_campaign *c)
{
    size_t *first = malloc((c->nrecs + 1) * sizeof *first); /* a record per process count */
    if (first == NULL) {
        return 1;
    }
    size_t nfirst = 0;
    int vary = 0;
    for (size_t i = 0; i < c->nrecs && !vary; i++) {
        const struct cg_rep_record *r = &c->recs[i];
        size_t k = 0;
        while (k < nfirst && c->recs[first[k]].ranks != r->ranks) {
            k++;
        }
        if (k == nfirst) {
            first[nfirst++] = i;
        } else {
            vary = cg_rep_cmp_shape(&c->recs[first[k]], r) != 0;
        }
        vary |= r->virtual_shape;
    }
    free(first);
    for (size_t i = 0; i < c->nrecs; i++) {
        c->recs[i].shape_shown = vary;
    }
    return 0;
}

/* Splits points.jsonl into records; 0, 1 (memory) or 2 (reported). */
static int load_points(struct cg_rep_campaign *c, FILE *err)
{
    char *path = cg_rep_strf("%s/points.jsonl", c->dir);
    if (path == NULL) {
        return 1;
    }
    size_t len = 0;
    char *text = cg_slurp(path, &len);
    if (text == NULL) {
        int e = errno;
        fprintf(err, "%s: error: cannot read: %s%s\n", path, strerror(e),
                (e == ENOENT) ? " (is this a campaign directory? collgen run writes one)" : "");
        free(path);
        return (e == ENOMEM) ? 1 : 2;
    }
    if (strlen(text) != len) {
        fprintf(err, "%s: error: the file holds a NUL byte (not JSON lines)\n", path);
        free(text);
        free(path);
        return 2;
    }
    int rc = 0;
    size_t cap = 0;
    struct where w = {err, path, 0};
    char *p = text;
    while (*p != '\0') {
        char *nl = strchr(p, '\n');
        char *next = (nl != NULL) ? nl + 1 : p + strlen(p);
        if (nl != NULL) {
            *nl = '\0';
        }
        w.line++;
        if (p[strspn(p, " \t\r")] == '\0') {
            p = next;
            continue; /* blank lines carry nothing */
        }
        const char *end = NULL;
        cJSON *j = cJSON_ParseWithOpts(p, &end, 1);
        if (j == NULL) {
            long col = (end != NULL && end >= p) ? (long)(end - p) + 1 : 1;
            fprintf(err, "%s:%d:%ld: error: not valid JSON (a record is one JSON object per line)\n",
                    path, w.line, col);
            rc = 2;
            break;
        }
        if (c->nrecs == cap) {
            size_t ncap = (cap != 0) ? 2 * cap : 64;
            struct cg_rep_record *bigger = realloc(c->recs, ncap * sizeof *bigger);
            if (bigger == NULL) {
                cJSON_Delete(j);
                rc = 1;
                break;
            }
            c->recs = bigger;
            cap = ncap;
        }
        struct cg_rep_record *r = &c->recs[c->nrecs++];
        memset(r, 0, sizeof *r);
        r->line = w.line;
        r->json = j;
        if (fill_record(&w, r) != 0) {
            rc = 2;
            break;
        }
        p = next;
    }
    free(text);
    free(path);
    return rc;
}

/* Reads dir's records, raw files, campaign.json and run files into c,
 * without marking repeats or merging launches (cg_rep_load, pooling). */
static int load_dir(struct cg_rep_campaign *c, const char *dir, FILE *err)
{
    memset(c, 0, sizeof *c);
    c->dir = dir;
    struct stat st;
    if (stat(dir, &st) != 0) {
        fprintf(err, "%s: error: cannot open the campaign directory: %s\n", dir, strerror(errno));
        return 2;
    }
    if (!S_ISDIR(st.st_mode)) {
        fprintf(err, "%s: error: not a directory (collgen report reads a campaign directory)\n",
                dir);
        return 2;
    }
    int rc = load_points(c, err);
    if (rc != 0) {
        return rc;
    }
    for (size_t i = 0; i < c->nrecs; i++) {
        struct cg_rep_record *r = &c->recs[i];
        if (r->raw_path == NULL) {
            r->raw_missing = cg_rep_is_ok(r);
            continue;
        }
        int got = load_raw(err, dir, r);
        if (got == 1) {
            r->raw_missing = 1;
        } else if (got == -1) {
            return 2;
        } else if (got == -2) {
            return 1;
        }
    }
    char *path = cg_rep_strf("%s/campaign.json", dir);
    if (path == NULL) {
        return 1;
    }
    int absent = 0;
    int oom = 0;
    c->campaign = load_json_file(err, path, &absent, &oom);
    free(path);
    if (c->campaign == NULL && !absent) {
        return oom ? 1 : 2;
    }
    return load_runs(c, err);
}

/* Repeats, node shapes, launches: what the tables need of all records. */
static int finish_load(struct cg_rep_campaign *c)
{
    if (mark_duplicates(c) != 0 || mark_shapes(c) != 0 || cg_rep_merge_launches(c) != 0) {
        return 1;
    }
    return 0;
}

int cg_rep_load(struct cg_rep_campaign *c, const char *dir, FILE *err)
{
    int rc = load_dir(c, dir, err);
    return (rc != 0) ? rc : finish_load(c);
}

/* The descriptor a campaign ran: campaign.json's test.name and, where it
 * has one, test.fnv1a64; NULL name when there is no campaign.json. */
static void test_of(const struct cg_rep_campaign *c, const char **name, const char **hash)
{
    *name = NULL;
    *hash = NULL;
    if (c->campaign != NULL) {
        (void)cg_jget_str(c->campaign, "test.name", name);
        (void)cg_jget_str(c->campaign, "test.fnv1a64", hash);
    }
}

/* The launches a campaign ran: the largest launch.of of its records. */
static int launches_of(const struct cg_rep_campaign *c)
{
    int n = 1;
    for (size_t i = 0; i < c->nrecs; i++) {
        n = (c->recs[i].launches > n) ? c->recs[i].launches : n;
    }
    return n;
}

/* Sets obj[key] to item, replacing what is there. 1 done (item is obj's);
 * 0 item NULL or not set (then freed). */
static int set_item(cJSON *obj, const char *key, cJSON *item)
{
    if (item == NULL) {
        return 0;
    }
    int ok = (cJSON_GetObjectItemCaseSensitive(obj, key) != NULL)
                 ? cJSON_ReplaceItemInObjectCaseSensitive(obj, key, item)
                 : cJSON_AddItemToObject(obj, key, item);
    if (!ok) {
        cJSON_Delete(item);
    }
    return ok ? 1 : 0;
}

/* Record r of the pooled campaign as launch `launch` of `of`, at pooled line
 * `line`: its launch block says so (a single-launch record gets one, its id
 * the shared one), and its point id becomes "<shared id>-L<launch>", since
 * every source has a launch of the same id. In the JSON too, so that the
 * CSV says the same. 0, or 1 out of memory. */
static int renumber(struct cg_rep_record *r, int launch, int of, int line)
{
    cJSON *lb = cJSON_GetObjectItemCaseSensitive(r->json, "launch");
    if (!cJSON_IsObject(lb)) {
        lb = cJSON_CreateObject();
        if (lb == NULL) {
            return 1;
        }
        if (!set_item(lb, "point_id", cJSON_CreateString(r->point_id))) {
            cJSON_Delete(lb);
            return 1;
        }
        if (!set_item(r->json, "launch", lb)) {
            return 1; /* freed */
        }
    }
    if (!set_item(lb, "index", cJSON_CreateNumber(launch)) ||
        !set_item(lb, "of", cJSON_CreateNumber(of))) {
        return 1;
    }
    r->base_id = cJSON_GetObjectItemCaseSensitive(lb, "point_id")->valuestring;
    char *id = cg_rep_strf("%s-L%d", r->base_id, launch);
    if (id == NULL || !set_item(r->json, "point_id", cJSON_CreateString(id))) {
        free(id);
        return 1;
    }
    free(id);
    r->point_id = cJSON_GetObjectItemCaseSensitive(r->json, "point_id")->valuestring;
    r->launch = launch;
    r->launches = of;
    r->line = line;
    return 0;
}

int cg_rep_load_pool(struct cg_rep_campaign *c, const char *const *dirs, size_t n,
                     const char *out_dir, FILE *err)
{
    memset(c, 0, sizeof *c);
    c->dir = out_dir;
    struct cg_rep_campaign *parts = calloc(n, sizeof *parts);
    int *launches = calloc(n, sizeof *launches);
    if (parts == NULL || launches == NULL) {
        free(parts);
        free(launches);
        return 1;
    }
    int rc = 0;
    size_t nrecs = 0;
    int total = 0;
    const char *name0 = NULL, *hash0 = NULL;
    for (size_t k = 0; k < n && rc == 0; k++) {
        rc = load_dir(&parts[k], dirs[k], err);
        if (rc != 0) {
            break;
        }
        const char *name = NULL, *hash = NULL;
        test_of(&parts[k], &name, &hash);
        if (name == NULL) {
            fprintf(err, "%s: error: no campaign.json with test.name: campaigns pool only when "
                         "they ran one descriptor, and this one does not say which\n", dirs[k]);
            rc = 2;
        } else if (k == 0) {
            name0 = name;
            hash0 = hash;
        } else if (strcmp(name, name0) != 0 ||
                   (hash != NULL && hash0 != NULL && strcmp(hash, hash0) != 0)) {
            fprintf(err, "%s: error: it ran descriptor '%s'%s%s%s, %s ran '%s'%s%s%s: campaigns "
                         "pool only when they ran one descriptor (collgen compare shows what "
                         "differs)\n", dirs[k], name, hash ? " (fnv1a64 " : "", hash ? hash : "",
                    hash ? ")" : "", dirs[0], name0, hash0 ? " (fnv1a64 " : "",
                    hash0 ? hash0 : "", hash0 ? ")" : "");
            rc = 2;
        }
        launches[k] = launches_of(&parts[k]);
        total += launches[k];
        nrecs += parts[k].nrecs;
    }
    if (rc == 0) {
        c->recs = calloc(nrecs + 1, sizeof *c->recs);
        rc = (c->recs == NULL) ? 1 : 0;
    }
    /* The records of every source, in order, as launches of the pooled
     * campaign: source k's launch i is launch (launches before k) + i. */
    int first = 0, line = 0;
    for (size_t k = 0; k < n && rc == 0; k++) {
        for (size_t i = 0; i < parts[k].nrecs && rc == 0; i++) {
            struct cg_rep_record *r = &c->recs[c->nrecs];
            *r = parts[k].recs[i];
            c->nrecs++;
            memset(&parts[k].recs[i], 0, sizeof parts[k].recs[i]); /* owned by c now */
            rc = renumber(r, first + r->launch, total, ++line);
        }
        first += launches[k];
        parts[k].nrecs = 0;
    }
    if (rc == 0) {
        c->campaign = parts[0].campaign; /* the context: the first source's */
        c->runs = parts[0].runs;
        c->nruns = parts[0].nruns;
        parts[0].campaign = NULL;
        parts[0].runs = NULL;
        parts[0].nruns = 0;
        c->sources = dirs;
        c->source_launches = launches;
        c->nsources = n;
        launches = NULL;
        rc = finish_load(c);
    }
    for (size_t k = 0; k < n; k++) {
        cg_rep_campaign_fini(&parts[k]);
    }
    free(parts);
    free(launches);
    return rc;
}

void cg_rep_campaign_fini(struct cg_rep_campaign *c)
{
    for (size_t i = 0; i < c->nrecs; i++) {
        cJSON_Delete(c->recs[i].json);
        free(c->recs[i].raw);
        free(c->recs[i].launch_median_ns);
    }
    free(c->recs);
    for (size_t i = 0; i < c->nruns; i++) {
        cJSON_Delete(c->runs[i].json);
    }
    free(c->runs);
    cJSON_Delete(c->campaign);
    free(c->source_launches);
    memset(c, 0, sizeof *c);
}

int cg_rep_is_ok(const struct cg_rep_record *r)
{
    return strcmp(r->status, "ok") == 0;
}

int cg_rep_is_shown(const struct cg_rep_record *r)
{
    return cg_rep_is_ok(r) && r->duplicate_of == 0 && r->merged_into == 0;
}

const char *cg_rep_campaign_id(const struct cg_rep_campaign *c)
{
    const cJSON *j = NULL;
    if (c->campaign != NULL) {
        j = cJSON_GetObjectItemCaseSensitive(c->campaign, "campaign");
    }
    if (!cJSON_IsString(j) && c->nrecs > 0) {
        j = cJSON_GetObjectItemCaseSensitive(c->recs[0].json, "campaign");
    }
    return cJSON_IsString(j) ? j->valuestring : "?";
}
