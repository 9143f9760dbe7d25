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
 *   "tags": generated points, each tag's GPU time (CUDA events around the
 *   schedule's phases, rounds and steps; the slowest rank's per repetition,
 *   its median) as build/<lib>/bench writes them; null for NCCL's.
 * The record itself is written by bench_record.c, as bench's are.
 * A point that never ran (skipped, or an error before its first call) has
 * effective null and an empty diff, as the runner's own records.
 */
#define _POSIX_C_SOURCE 200809L
#include "bench_cuda.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

double bc_busbw_GBps(int p, const struct bench_point *pt, double median_ns)
{
    return (median_ns > 0.0)
               ? (double)bench_size_B(p, pt) / median_ns * bench_busbw_factor(p, pt->coll)
               : NAN;
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
                env, key, (val != NULL) ? cg_json_string(val) : cJSON_CreateNull());
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
    cJSON_AddItemToObject(o, "file", cg_json_string_or_null(c->nccl_log));
    cJSON_AddItemToObject(o, "lines", cJSON_CreateNumber((double)t->lines));
    cJSON_AddItemToObject(o, "warnings", cJSON_CreateNumber((double)t->warnings));
    for (int k = 0; k < t->nseen; k++) {
        cJSON *s = cJSON_CreateObject();
        if (s == NULL) {
            continue;
        }
        cJSON_AddItemToObject(s, "algorithm", cg_json_string(t->seen[k].algorithm));
        cJSON_AddItemToObject(s, "protocol", cg_json_string(t->seen[k].protocol));
        cJSON_AddItemToObject(s, "calls", cJSON_CreateNumber((double)t->seen[k].calls));
        cJSON_AddItemToObject(s, "bytes", cJSON_CreateNumber((double)t->seen[k].bytes));
        cJSON_AddItemToObject(s, "channels", cg_json_string_or_null(t->seen[k].channels));
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
        bench_record_point(o, pt, pt->name, job->knobs_forced_by);
    } else {
        bench_record_point(o, pt, e->algorithm, e->forced_by);
    }
    bench_record_shape(o, &c->base, e != NULL);
    {
        const struct cg_cu_algo *a = run->algo;
        cJSON_AddItemToObject(o, "params",
                              bench_params_json(pt, a != NULL, (a != NULL) ? a->params : NULL,
                                                (a != NULL) ? a->nparams : 0,
                                                (e != NULL) ? &run->params : NULL));
    }
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
        cJSON_AddItemToObject(o, "algorithm_source", cg_json_string(e->source));
        if (pt->kind == BENCH_NATIVE) {
            cJSON *t = tuning_json(c, run);
            cJSON_AddItemToObject(o, "nccl_tuning", (t != NULL) ? t : cJSON_CreateNull());
        }
    }
    return o;
}

int bc_write_record(const struct bc_ctx *c, const struct bench_point *pt, const struct bc_run *run,
                    char *msg, size_t msglen)
{
    struct effective eff;
    struct bench_record r;
    cJSON *req;
    cJSON *effb = NULL;
    char kind[32];
    int rc;

    req = block(c, pt, NULL, run);
    if (run->ran) {
        effective_for(c, pt, run, &eff);
        effb = block(c, pt, &eff, run);
    }
    /* The impl's prefix, as the runner's own records have it. */
    bench_fmt(kind, sizeof(kind), "%.*s", (int)strcspn(pt->impl, ":"), pt->impl);

    memset(&r, 0, sizeof(r));
    r.pt = pt;
    r.p = c->base.p;
    r.status = run->status;
    r.reason = run->reason;
    r.collective = bc_coll_name(pt->coll);
    r.backend = "cuda";
    r.kind = kind;
    r.has_transport = 1;
    r.transport = run->ran ? run->transport : NULL;
    r.schedule_file = (run->algo != NULL) ? run->algo->file : NULL;
    r.requested = req;
    r.effective = effb;
    r.n = run->n;
    r.stop = run->stop;
    r.times = run->times;
    r.all_times = c->base.job->verbosity_full ? run->all_times : NULL;
    r.all_p = c->base.p;
    r.timer = "cuda_event";
    r.checked = run->checked;
    r.reference = "formula";
    r.wrong = run->wrong;
    r.max_error = run->max_error;
    r.has_tolerance = 1;
    r.inexact = run->inexact;
    r.tolerance = run->tolerance;
    r.tag_first = (run->algo != NULL) ? run->algo->tag_first : 0;
    r.ntags = run->ntags;
    r.tag_n = run->tag_n;
    r.tag_times = run->tag_times;
    r.share_of_call_tag = 1; /* tags timed in repetitions of their own (gpu_point.c) */
    rc = bench_record_write(c->base.job, &r, msg, msglen);
    cJSON_Delete(req);
    cJSON_Delete(effb);
    return rc;
}
