/* gpu_record.c - the record of one point (a line of points.jsonl) and its
 * raw repetitions, in bench's format (harness/FORMATS.md), rank 0.
 *
 * What differs from build/<lib>/bench's records, all of it additive (collgen
 * report reads them unchanged):
 *   "backend": "cuda", and "transport": "nccl" for native points, the CUDA
 *   runtime's "ipc" or "nccl" for generated ones (null when nothing ran);
 *   effective.algorithm_source "nccl_debug" (what NCCL's tuning line said it
 *   ran; effective.nccl_tuning has the lines) or "unobservable";
 *   check.reference is always "formula", with check.tolerance and
 *   check.elements_inexact;
 *   timing.timer "cuda_event": every time is the GPU time between two CUDA
 *   events around the call on its stream;
 *   "tags" null: the GPU mode records no per-phase tags.
 * A point that never ran (skipped, or an error before its first call) has
 * effective null and an empty diff, as the runner's own records.
 */
#define _POSIX_C_SOURCE 200809L
#include "bench_cuda.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* nccl-tests' size (bench.c's size_B). */
static size_t size_B(int p, const struct bench_point *pt)
{
    size_t s = pt->count * bench_dtype_size(pt->dtype);

    switch (pt->coll) {
    case CG_COLL_ALLGATHER:
    case CG_COLL_REDUCE_SCATTER_BLOCK:
    case CG_COLL_GATHER:
    case CG_COLL_SCATTER:
    case CG_COLL_ALLTOALL:
        s *= (size_t)p;
        break;
    case CG_COLL_BARRIER:
        s = 0;
        break;
    default:
        break;
    }
    return s;
}

/* busbw = algbw x this (harness/README.md, "Bus bandwidth"). */
static double busbw_factor(int p, enum cg_coll coll)
{
    double pp = (double)p;

    switch (coll) {
    case CG_COLL_ALLREDUCE:
        return 2.0 * (pp - 1.0) / pp;
    case CG_COLL_ALLGATHER:
    case CG_COLL_REDUCE_SCATTER_BLOCK:
    case CG_COLL_GATHER:
    case CG_COLL_SCATTER:
    case CG_COLL_ALLTOALL:
        return (pp - 1.0) / pp;
    case CG_COLL_BARRIER:
        return NAN;
    default:
        break;
    }
    return 1.0;
}

double bc_busbw_GBps(int p, const struct bench_point *pt, double median_ns)
{
    return (median_ns > 0.0) ? (double)size_B(p, pt) / median_ns * busbw_factor(p, pt->coll)
                             : NAN;
}

static cJSON *str_or_null(const char *s)
{
    return (s != NULL && s[0] != '\0') ? cJSON_CreateString(s) : cJSON_CreateNull();
}

/* The job's knobs with each env value as this process sees it (bench's
 * observe_knobs without MPI_T: NCCL reads its variables from the
 * environment). */
static cJSON *observed_knobs(const struct bench_job *job)
{
    cJSON *copy = (job->knobs != NULL) ? cJSON_Duplicate(job->knobs, 1) : cJSON_CreateObject();
    cJSON *env;

    if (copy == NULL) {
        return NULL;
    }
    env = cJSON_GetObjectItemCaseSensitive(copy, "env");
    if (cJSON_IsObject(env)) {
        for (cJSON *item = env->child; item != NULL;) {
            cJSON *next = item->next;
            const char *val = getenv(item->string);
            char key[256];
            bench_fmt(key, sizeof(key), "%s", item->string);
            cJSON_ReplaceItemInObjectCaseSensitive(
                env, key, (val != NULL) ? cJSON_CreateString(val) : cJSON_CreateNull());
            item = next;
        }
    }
    return copy;
}

struct effective {
    char algorithm[160];  /* "" is null */
    char forced_by[512];  /* "" is null */
    const char *source;
};

static void effective_for(const struct bc_ctx *c, const struct bench_point *pt,
                          const struct bc_run *run, struct effective *e)
{
    const char *req_forced_by = c->base.job->knobs_forced_by;

    memset(e, 0, sizeof(*e));
    if (pt->kind == BENCH_GENERATED) {
        e->source = "generated";
        bench_fmt(e->algorithm, sizeof(e->algorithm), "%s", pt->name);
        bench_fmt(e->forced_by, sizeof(e->forced_by), "%s",
                  (req_forced_by != NULL) ? req_forced_by : "");
        return;
    }
    bc_nccl_effective(&run->tuning, pt->name, e->algorithm, sizeof(e->algorithm));
    if (e->algorithm[0] == '\0') {
        e->source = "unobservable";
        bench_fmt(e->forced_by, sizeof(e->forced_by), "%s",
                  (run->tuning.why_none[0] != '\0') ? run->tuning.why_none
                                                    : "NCCL said nothing about these calls");
        return;
    }
    e->source = "nccl_debug";
    if (strcmp(e->algorithm, pt->name) == 0) {
        /* What ran is what was asked: how it was forced is as requested. */
        bench_fmt(e->forced_by, sizeof(e->forced_by), "%s",
                  (req_forced_by != NULL) ? req_forced_by : "");
    } else {
        bench_fmt(e->forced_by, sizeof(e->forced_by),
                  "%s, from NCCL's tuning line (rank 0, %ld line%s): %s",
                  (strcmp(pt->name, "default") == 0) ? "NCCL's own choice" : "NCCL ran another",
                  run->tuning.lines, (run->tuning.lines == 1) ? "" : "s", run->tuning.first_line);
    }
}

static cJSON *tuning_json(const struct bc_ctx *c, const struct bc_run *run)
{
    const struct bc_nccl_tuning *t = &run->tuning;
    cJSON *o = cJSON_CreateObject();
    cJSON *seen = cJSON_CreateArray();

    if (o == NULL || seen == NULL) {
        cJSON_Delete(o);
        cJSON_Delete(seen);
        return NULL;
    }
    cJSON_AddItemToObject(o, "file", str_or_null(c->nccl_log));
    cJSON_AddItemToObject(o, "lines", cJSON_CreateNumber((double)t->lines));
    cJSON_AddItemToObject(o, "warnings", cJSON_CreateNumber((double)t->warnings));
    for (int k = 0; k < t->nseen; k++) {
        cJSON *s = cJSON_CreateObject();
        if (s == NULL) {
            continue;
        }
        cJSON_AddItemToObject(s, "algorithm", cJSON_CreateString(t->seen[k].algorithm));
        cJSON_AddItemToObject(s, "protocol", cJSON_CreateString(t->seen[k].protocol));
        cJSON_AddItemToObject(s, "calls", cJSON_CreateNumber((double)t->seen[k].calls));
        cJSON_AddItemToObject(s, "bytes", cJSON_CreateNumber((double)t->seen[k].bytes));
        cJSON_AddItemToObject(s, "channels", str_or_null(t->seen[k].channels));
        cJSON_AddItemToArray(seen, s);
    }
    cJSON_AddItemToObject(o, "seen", seen);
    return o;
}

/* The requested block, or the effective one when e is given. */
static cJSON *block(const struct bc_ctx *c, const struct bench_point *pt,
                    const struct effective *e, const struct bc_run *run)
{
    const struct bench_job *job = c->base.job;
    cJSON *o = cJSON_CreateObject();

    if (o == NULL) {
        return NULL;
    }
    if (e == NULL) {
        cJSON_AddItemToObject(o, "algorithm", cJSON_CreateString(pt->name));
        cJSON_AddItemToObject(o, "forced_by", str_or_null(job->knobs_forced_by));
    } else {
        cJSON_AddItemToObject(o, "algorithm", str_or_null(e->algorithm));
        cJSON_AddItemToObject(o, "forced_by", str_or_null(e->forced_by));
    }
    cJSON_AddItemToObject(o, "count", cJSON_CreateNumber((double)pt->count));
    cJSON_AddItemToObject(o, "datatype", cJSON_CreateString(bench_dtype_name(pt->dtype)));
    cJSON_AddItemToObject(o, "op", pt->op_given ? cJSON_CreateString(bench_op_name(pt->op))
                                                : cJSON_CreateNull());
    cJSON_AddItemToObject(o, "root", cJSON_CreateNumber(pt->root));
    cJSON_AddItemToObject(o, "in_place", cJSON_CreateBool(pt->in_place));
    cJSON_AddItemToObject(o, "ranks", cJSON_CreateNumber((e != NULL) ? c->base.p : job->ranks));
    cJSON_AddItemToObject(o, "ranks_per_node",
                          cJSON_CreateNumber((e != NULL) ? c->base.ranks_per_node
                                                         : job->ranks_per_node));
    if (e == NULL) {
        cJSON_AddItemToObject(o, "knobs", (job->knobs != NULL) ? cJSON_Duplicate(job->knobs, 1)
                                                               : cJSON_CreateObject());
        cJSON_AddItemToObject(o, "reps", (job->timing.min_reps == job->timing.max_reps)
                                             ? cJSON_CreateNumber((double)job->timing.min_reps)
                                             : cJSON_CreateNull());
    } else {
        cJSON *k = observed_knobs(job);
        cJSON_AddItemToObject(o, "knobs", (k != NULL) ? k : cJSON_CreateNull());
        cJSON_AddItemToObject(o, "reps", (run->stop != NULL) ? cJSON_CreateNumber((double)run->n)
                                                             : cJSON_CreateNull());
        cJSON_AddItemToObject(o, "algorithm_source", cJSON_CreateString(e->source));
        if (pt->kind == BENCH_NATIVE) {
            cJSON *t = tuning_json(c, run);
            cJSON_AddItemToObject(o, "nccl_tuning", (t != NULL) ? t : cJSON_CreateNull());
        }
    }
    return o;
}

/* The raw file as the record names it: relative to points.jsonl's directory
 * when raw_dir is under it (bench.c's raw_record_path). */
static void raw_record_path(const struct bench_job *job, const char *id, char *out, size_t len)
{
    const char *slash = strrchr(job->out_points, '/');
    size_t dlen = (slash != NULL) ? (size_t)(slash - job->out_points) + 1 : 0;

    if (strncmp(job->out_raw_dir, job->out_points, dlen) == 0) {
        bench_fmt(out, len, "%s/%s.txt", job->out_raw_dir + dlen, id);
    } else {
        bench_fmt(out, len, "%s/%s.txt", job->out_raw_dir, id);
    }
}

static int write_raw(const struct bc_ctx *c, const struct bench_point *pt,
                     const struct bc_run *run, char *msg, size_t msglen)
{
    int full = c->base.job->verbosity_full && run->all_times != NULL;
    size_t cap = ((size_t)run->n * (size_t)(full ? (c->base.p + 1) : 1) * 21) + 1;
    char *text = malloc(cap);
    char path[4096];
    size_t len = 0;
    int rc;

    bench_fmt(path, sizeof(path), "%s/%s.txt", c->base.job->out_raw_dir, pt->id);
    if (text == NULL) {
        bench_fmt(msg, msglen, "%s: out of memory", path);
        return -1;
    }
    text[0] = '\0';
    for (long i = 0; i < run->n; i++) {
        len += (size_t)snprintf(text + len, cap - len, "%llu", (unsigned long long)run->times[i]);
        for (int r = 0; full && r < c->base.p; r++) {
            len += (size_t)snprintf(
                text + len, cap - len, " %llu",
                (unsigned long long)run->all_times[((size_t)i * (size_t)c->base.p) + (size_t)r]);
        }
        text[len++] = '\n';
    }
    rc = bench_write_atomic(path, text, len);
    if (rc != 0) {
        bench_fmt(msg, msglen, "%s: %s", path, strerror(errno));
    }
    free(text);
    return rc;
}

static void write_timing(struct jw *w, const struct bench_job *job, const struct bc_run *run,
                         const struct bench_stats *st)
{
    jw_obj(w);
    jw_key(w, "aggregation");
    jw_str(w, "max_over_ranks_per_rep");
    jw_key(w, "sync");
    jw_str(w, (job->timing.sync == BENCH_SYNC_DISSEMINATION) ? "dissemination" : "barrier");
    jw_key(w, "n");
    jw_int(w, run->n);
    jw_key(w, "warmup");
    jw_int(w, job->timing.warmup);
    jw_key(w, "stop");
    jw_str(w, run->stop);
    jw_key(w, "min_ns");
    jw_num(w, st->min_ns);
    jw_key(w, "median_ns");
    jw_num(w, st->median_ns);
    jw_key(w, "mean_ns");
    jw_num(w, st->mean_ns);
    jw_key(w, "stdev_ns");
    jw_num(w, st->stdev_ns);
    jw_key(w, "p5_ns");
    jw_num(w, st->p5_ns);
    jw_key(w, "p25_ns");
    jw_num(w, st->p25_ns);
    jw_key(w, "p75_ns");
    jw_num(w, st->p75_ns);
    jw_key(w, "p95_ns");
    jw_num(w, st->p95_ns);
    jw_key(w, "ci95_median_lo_ns");
    jw_num(w, st->ci_lo_ns);
    jw_key(w, "ci95_median_hi_ns");
    jw_num(w, st->ci_hi_ns);
    jw_key(w, "rse");
    jw_num(w, st->rse);
    jw_key(w, "timer");
    jw_str(w, "cuda_event");
    jw_obj_end(w);
}

int bc_write_record(const struct bc_ctx *c, const struct bench_point *pt, const struct bc_run *run,
                    char *msg, size_t msglen)
{
    const struct bench_job *job = c->base.job;
    struct effective eff;
    struct bench_stats st;
    cJSON *req;
    cJSON *effb = NULL;
    struct jw w;
    int timed = (run->stop != NULL && run->n > 0);
    char raw[4096];
    char hash[17];
    int rc = 0;

    memset(&st, 0, sizeof(st));
    req = block(c, pt, NULL, run);
    if (run->ran) {
        effective_for(c, pt, run, &eff);
        effb = block(c, pt, &eff, run);
    }
    if (timed) {
        uint64_t *sorted = malloc((size_t)run->n * sizeof(uint64_t));
        if (sorted == NULL) {
            cJSON_Delete(req);
            cJSON_Delete(effb);
            bench_fmt(msg, msglen, "out of memory for the statistics");
            return -1;
        }
        bench_stats_compute(run->times, run->n, sorted, &st);
        free(sorted);
        if (write_raw(c, pt, run, msg, msglen) != 0) {
            cJSON_Delete(req);
            cJSON_Delete(effb);
            return -1;
        }
    }

    jw_init(&w);
    jw_obj(&w);
    jw_key(&w, "schema_version");
    jw_int(&w, 1);
    jw_key(&w, "campaign");
    jw_str(&w, job->campaign);
    jw_key(&w, "run_id");
    jw_int(&w, job->run_id);
    jw_key(&w, "point_id");
    jw_str(&w, pt->id);
    jw_key(&w, "seq");
    jw_int(&w, pt->seq);
    jw_key(&w, "status");
    jw_str(&w, run->status);
    jw_key(&w, "reason");
    jw_str(&w, (strcmp(run->status, "ok") != 0) ? run->reason : NULL);
    jw_key(&w, "collective");
    jw_str(&w, bc_coll_name(pt->coll));
    jw_key(&w, "backend");
    jw_str(&w, "cuda");
    jw_key(&w, "library");
    jw_str(&w, job->library);
    jw_key(&w, "transport");
    jw_str(&w, run->ran ? run->transport : NULL);
    jw_key(&w, "kind");
    {
        /* The impl's prefix, as the runner's own records have it. */
        char kind[32];
        bench_fmt(kind, sizeof(kind), "%.*s", (int)strcspn(pt->impl, ":"), pt->impl);
        jw_str(&w, kind);
    }
    jw_key(&w, "name");
    jw_str(&w, pt->name);
    jw_key(&w, "schedule_file");
    jw_str(&w, (run->algo != NULL) ? run->algo->file : NULL);
    jw_key(&w, "schedule_hash");
    jw_str(&w, (run->algo != NULL && bench_fnv1a64_file(run->algo->file, hash) == 0) ? hash
                                                                                     : NULL);
    jw_key(&w, "requested");
    jw_json(&w, req);
    jw_key(&w, "effective");
    jw_json(&w, effb);
    jw_key(&w, "diff");
    jw_arr(&w);
    for (const cJSON *it = (req != NULL && effb != NULL) ? req->child : NULL; it != NULL;
         it = it->next) {
        const cJSON *e = cJSON_GetObjectItemCaseSensitive(effb, it->string);
        if (!cJSON_IsNull(it) && (e == NULL || !cJSON_Compare(it, e, 1))) {
            jw_str(&w, it->string);
        }
    }
    jw_arr_end(&w);
    jw_key(&w, "size_B");
    jw_uint(&w, size_B(c->base.p, pt));
    jw_key(&w, "timing");
    if (timed) {
        write_timing(&w, job, run, &st);
    } else {
        jw_null(&w);
    }
    jw_key(&w, "bandwidth");
    if (timed && st.median_ns > 0.0) {
        double algbw = (double)size_B(c->base.p, pt) / st.median_ns; /* bytes per ns = GB/s */
        double factor = busbw_factor(c->base.p, pt->coll);
        jw_obj(&w);
        jw_key(&w, "algbw_GBps");
        jw_num(&w, algbw);
        jw_key(&w, "busbw_GBps");
        jw_num(&w, algbw * factor);
        jw_key(&w, "busbw_factor");
        jw_num(&w, factor);
        jw_obj_end(&w);
    } else {
        jw_null(&w);
    }
    jw_key(&w, "check");
    if (run->checked) {
        jw_obj(&w);
        jw_key(&w, "reference");
        jw_str(&w, "formula");
        jw_key(&w, "elements_wrong");
        jw_uint(&w, run->wrong);
        jw_key(&w, "max_error");
        jw_num(&w, run->max_error);
        jw_key(&w, "verdict");
        jw_str(&w, (run->wrong == 0) ? "ok" : "wrong");
        jw_key(&w, "elements_inexact");
        jw_uint(&w, run->inexact);
        jw_key(&w, "tolerance");
        jw_num(&w, run->tolerance);
        jw_obj_end(&w);
    } else {
        jw_null(&w);
    }
    jw_key(&w, "tags");
    jw_null(&w);
    jw_key(&w, "raw");
    if (timed) {
        raw_record_path(job, pt->id, raw, sizeof(raw));
        jw_str(&w, raw);
    } else {
        jw_null(&w);
    }
    jw_obj_end(&w);
    cJSON_Delete(req);
    cJSON_Delete(effb);
    if (w.oom) {
        jw_free(&w);
        bench_fmt(msg, msglen, "out of memory writing the record");
        return -1;
    }
    {
        /* The newline goes in the same write as the record. */
        char *line = malloc(w.len + 1);
        if (line == NULL) {
            jw_free(&w);
            bench_fmt(msg, msglen, "out of memory writing the record");
            return -1;
        }
        memcpy(line, w.buf, w.len);
        line[w.len] = '\n';
        if (bench_append_line(job->out_points, line, w.len + 1) != 0) {
            bench_fmt(msg, msglen, "%s: %s", job->out_points, strerror(errno));
            rc = -1;
        }
        free(line);
    }
    jw_free(&w);
    return rc;
}
