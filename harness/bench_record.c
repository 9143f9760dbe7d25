/* bench_record.c - the record of one point (a line of points.jsonl) and its
 * raw file, written by rank 0 of both bench programs: build/<lib>/bench
 * (bench.c) and build/cuda/bench_cuda (harness/gpu/). Each program fills a
 * struct bench_record with what it measured and how it describes the
 * request and what ran (its own requested/effective blocks); the order of
 * the keys, the statistics, the bandwidths, the tags and the raw file are
 * written here once, so that the two kinds of records cannot drift apart
 * (harness/FORMATS.md).
 */
#define _POSIX_C_SOURCE 200809L
#include "bench.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cg.h" /* struct cg_topo */

/* Both from the table (runtime/cg_colls.h's size and busbw columns);
 * lane_pattern, no collective, counts its count and a factor of 1. */
size_t bench_size_B(int p, const struct bench_point *pt)
{
    size_t s = pt->count * bench_dtype_size(pt->dtype);
    return ((int)pt->coll < CG_COLL_COUNT_)
               ? (size_t)cg_coll_size_B((int)pt->coll, p, (double)pt->count,
                                        (double)bench_dtype_size(pt->dtype))
               : s;
}

double bench_busbw_factor(int p, enum cg_coll coll)
{
    return ((int)coll < CG_COLL_COUNT_) ? cg_coll_busbw_factor((int)coll, p) : 1.0;
}

const char *bench_tag_kind_name(enum cg_tag_kind k)
{
    switch (k) {
    case CG_TAG_KIND_CALL:
        return "call";
    case CG_TAG_KIND_PHASE:
        return "phase";
    case CG_TAG_KIND_ROUND:
        return "round";
    case CG_TAG_KIND_COMM:
        return "comm";
    case CG_TAG_KIND_REDUCE:
        return "reduce";
    case CG_TAG_KIND_COPY:
        return "copy";
    }
    return "unknown";
}

static cJSON *str_or_null(const char *s)
{
    return (s != NULL && s[0] != '\0') ? cJSON_CreateString(s) : cJSON_CreateNull();
}

void bench_record_point(cJSON *o, const struct bench_point *pt, const char *algorithm,
                        const char *forced_by)
{
    cJSON_AddItemToObject(o, "algorithm", str_or_null(algorithm));
    cJSON_AddItemToObject(o, "forced_by", str_or_null(forced_by));
    cJSON_AddItemToObject(o, "count", cJSON_CreateNumber((double)pt->count));
    cJSON_AddItemToObject(o, "datatype", cJSON_CreateString(bench_dtype_name(pt->dtype)));
    cJSON_AddItemToObject(o, "op", pt->op_given ? cJSON_CreateString(bench_op_name(pt->op))
                                                : cJSON_CreateNull());
    cJSON_AddItemToObject(o, "root", cJSON_CreateNumber(pt->root));
    cJSON_AddItemToObject(o, "in_place", cJSON_CreateBool(pt->in_place));
}

void bench_record_shape(cJSON *o, const struct bench_ctx *ctx, int effective)
{
    const struct bench_job *job = ctx->job;

    cJSON_AddItemToObject(o, "ranks", cJSON_CreateNumber(effective ? ctx->p : job->ranks));
    if (!effective) {
        int vppn = job->virtual_ranks_per_node;
        int ppn = (vppn > 0) ? vppn : job->ranks_per_node;
        cJSON_AddItemToObject(o, "ranks_per_node", cJSON_CreateNumber(ppn));
        cJSON_AddItemToObject(o, "node_shape",
                              cJSON_CreateString((vppn > 0) ? "virtual (CG_PPN)" : "real"));
        cJSON_AddItemToObject(o, "regular", cJSON_CreateBool(job->ranks % ppn == 0));
    } else {
        /* What the runtime's topology (runtime/topo.c, as the generated
         * topology schedules see it) says, not a copy of the request. */
        const struct cg_topo *t = ctx->topo;
        int virt = (t != NULL) ? (strcmp(t->source, "CG_PPN") == 0)
                               : (getenv("CG_PPN") != NULL && getenv("CG_PPN")[0] != '\0');
        cJSON_AddItemToObject(o, "ranks_per_node",
                              (t != NULL && virt) ? cJSON_CreateNumber(t->ppn)
                              : virt              ? cJSON_CreateNull()
                                                  : cJSON_CreateNumber(ctx->ranks_per_node));
        cJSON_AddItemToObject(o, "node_shape",
                              cJSON_CreateString(virt ? "virtual (CG_PPN)" : "real"));
        cJSON_AddItemToObject(o, "regular",
                              (t != NULL) ? cJSON_CreateBool(t->regular) : cJSON_CreateNull());
        cJSON_AddItemToObject(o, "irregular_why",
                              (t == NULL) ? str_or_null(ctx->topo_error) : str_or_null(t->why));
    }
}

void bench_raw_record_path(const struct bench_job *job, const char *id, char *out, size_t len)
{
    const char *slash = strrchr(job->out_points, '/');
    size_t dlen = (slash != NULL) ? (size_t)(slash - job->out_points) + 1 : 0;

    if (strncmp(job->out_raw_dir, job->out_points, dlen) == 0) {
        bench_fmt(out, len, "%s/%s.txt", job->out_raw_dir + dlen, id);
    } else {
        bench_fmt(out, len, "%s/%s.txt", job->out_raw_dir, id);
    }
}

/* raw/<id>.txt: a line per repetition, the slowest rank's time, then (all_times)
 * every rank's. */
static int write_raw(const struct bench_job *job, const struct bench_record *r, char *msg,
                     size_t msglen)
{
    int full = (r->all_times != NULL);
    size_t cap = ((size_t)r->n * (size_t)(full ? (r->all_p + 1) : 1) * 21) + 1;
    char *text = malloc(cap);
    char path[4096];
    size_t len = 0;
    int rc;

    bench_fmt(path, sizeof(path), "%s/%s.txt", job->out_raw_dir, r->pt->id);
    if (text == NULL) {
        bench_fmt(msg, msglen, "%s: out of memory", path);
        return -1;
    }
    text[0] = '\0';
    for (long i = 0; i < r->n; i++) {
        len += (size_t)snprintf(text + len, cap - len, "%llu", (unsigned long long)r->times[i]);
        for (int q = 0; full && q < r->all_p; q++) {
            len += (size_t)snprintf(
                text + len, cap - len, " %llu",
                (unsigned long long)r->all_times[((size_t)i * (size_t)r->all_p) + (size_t)q]);
        }
        text[len++] = '\n';
    }
    rc = cg_write_atomic(path, text, len);
    if (rc != 0) {
        bench_fmt(msg, msglen, "%s: %s", path, strerror(errno));
    }
    free(text);
    return rc;
}

static void write_timing(struct jw *w, const struct bench_job *job, const struct bench_record *r,
                         const struct bench_stats *st)
{
    jw_obj(w);
    /* Which figure the statistics are of (FORMATS.md, "Timing figures"):
     * the window's latest end less its announced start, or the slowest
     * rank's own time from its exit of the barrier. */
    jw_key(w, "aggregation");
    jw_str(w, r->window ? "latest_end_minus_window_start" : "max_over_ranks_per_rep");
    jw_key(w, "figure");
    jw_str(w, r->window ? "window" : "max_rank_duration");
    jw_key(w, "sync");
    jw_str(w, bench_sync_name(job->timing.sync));
    jw_key(w, "policy");
    jw_str(w, r->nrep ? "nrep" : "rse");
    jw_key(w, "n");
    jw_int(w, r->n);
    jw_key(w, "warmup");
    jw_int(w, job->timing.warmup);
    jw_key(w, "stop");
    jw_str(w, r->stop);
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
    /* The other figure of the same repetitions: the global span (barrier
     * and dissemination with a clock), null otherwise. */
    jw_key(w, "span");
    if (r->span_times != NULL && r->n > 0) {
        struct bench_stats sp;
        uint64_t *sorted = malloc((size_t)r->n * sizeof(uint64_t));
        if (sorted == NULL) {
            w->oom = 1;
        } else {
            bench_stats_compute(r->span_times, r->n, sorted, &sp);
            free(sorted);
            jw_obj(w);
            jw_key(w, "figure");
            jw_str(w, "global_span");
            jw_key(w, "min_ns");
            jw_num(w, sp.min_ns);
            jw_key(w, "median_ns");
            jw_num(w, sp.median_ns);
            jw_key(w, "p25_ns");
            jw_num(w, sp.p25_ns);
            jw_key(w, "p75_ns");
            jw_num(w, sp.p75_ns);
            jw_obj_end(w);
        }
    } else {
        jw_null(w);
    }
    jw_key(w, "invalid");
    if (r->window) {
        jw_int(w, r->invalid);
    } else {
        jw_null(w);
    }
    jw_key(w, "late_starts");
    if (r->window) {
        jw_int(w, r->late_starts);
    } else {
        jw_null(w);
    }
    jw_key(w, "window_ns");
    jw_num(w, r->window ? r->window_ns : NAN);
    jw_key(w, "clock_error_ns");
    jw_num(w, r->clocked ? r->clock_error_ns : NAN);
    jw_key(w, "clock_age_s");
    jw_num(w, r->clocked ? r->clock_age_s : NAN);
    if (r->nrep) {
        jw_key(w, "nrep");
        jw_obj(w);
        jw_key(w, "t1_s");
        jw_num(w, r->nrep_t1_s);
        jw_key(w, "t1_launches");
        jw_int(w, r->nrep_t1_launches);
        jw_key(w, "t_min_ns");
        jw_num(w, r->nrep_tmin_ns);
        jw_key(w, "batch");
        jw_int(w, r->nrep_batch);
        jw_key(w, "nrep");
        jw_int(w, r->nrep_target);
        jw_key(w, "capped");
        jw_bool(w, r->nrep_capped);
        jw_obj_end(w);
    }
    if (r->timer != NULL) {
        jw_key(w, "timer");
        jw_str(w, r->timer);
    }
    jw_obj_end(w);
}

/* "roofline" (schema 3): the point's roofline, measured in its launch
 * (bench_roof.c), or null. */
static void write_roofline(struct jw *w, const struct bench_roof *roof)
{
    if (!roof->measured) {
        jw_null(w);
        return;
    }
    double part_B[3] = { roof->recv_B, roof->reduce_B, roof->copy_B };
    double part_ns[3] = { roof->p2p_ns, roof->reduce_ns, roof->copy_ns };
    static const char *const names[3] = { "p2p", "reduce", "copy" };
    jw_obj(w);
    jw_key(w, "recv_B");
    jw_num(w, roof->recv_B);
    jw_key(w, "reduce_B");
    jw_num(w, roof->reduce_B);
    jw_key(w, "copy_B");
    jw_num(w, roof->copy_B);
    for (int i = 0; i < 3; i++) {
        char key[32];
        snprintf(key, sizeof key, "%s_ns", names[i]);
        jw_key(w, key);
        jw_num(w, part_ns[i]);
        snprintf(key, sizeof key, "%s_GBps", names[i]);
        jw_key(w, key);
        if (part_B[i] > 0 && part_ns[i] > 0) {
            jw_num(w, part_B[i] / part_ns[i]);
        } else {
            jw_null(w);
        }
    }
    jw_key(w, "limit_ns");
    jw_num(w, roof->limit_ns);
    jw_key(w, "overlap_limit_ns");
    jw_num(w, roof->overlap_limit_ns);
    jw_obj_end(w);
}

/* The checks of a timed point (harness/README.md, "Validity"): its median
 * against the job's one-way latency floor (p > 1), and whether the ranks
 * shared cores. */
static void write_validity(struct jw *w, const struct bench_record *r, const struct bench_stats *st)
{
    int below = r->validity_known && r->p > 1 && isfinite(r->latency_floor_ns) &&
                st->median_ns < r->latency_floor_ns;

    jw_obj(w);
    jw_key(w, "latency_floor_ns");
    jw_num(w, r->validity_known ? r->latency_floor_ns : NAN);
    jw_key(w, "below_latency_floor");
    jw_bool(w, below);
    jw_key(w, "oversubscribed");
    if (r->validity_known && r->oversubscribed >= 0) {
        jw_bool(w, r->oversubscribed);
    } else {
        jw_null(w);
    }
    jw_key(w, "host_ranks");
    if (r->validity_known && r->host_ranks > 0) {
        jw_int(w, r->host_ranks);
    } else {
        jw_null(w);
    }
    jw_key(w, "host_cores");
    if (r->validity_known && r->host_cores > 0) {
        jw_int(w, r->host_cores);
    } else {
        jw_null(w);
    }
    jw_obj_end(w);
}

static void write_bandwidth(struct jw *w, const struct bench_record *r, const struct bench_stats *st)
{
    const struct bench_point *pt = r->pt;

    if (pt->coll == CG_COLL_BARRIER) {
        /* No data moves: no bandwidth (jw_num writes NaN as null). */
        jw_obj(w);
        jw_key(w, "algbw_GBps");
        jw_null(w);
        jw_key(w, "busbw_GBps");
        jw_null(w);
        jw_key(w, "busbw_factor");
        jw_null(w);
        jw_obj_end(w);
    } else if (st->median_ns > 0.0) {
        double algbw = (double)bench_size_B(r->p, pt) / st->median_ns; /* bytes per ns = GB/s */
        double factor = bench_busbw_factor(r->p, pt->coll);
        jw_obj(w);
        jw_key(w, "algbw_GBps");
        jw_num(w, algbw);
        jw_key(w, "busbw_GBps");
        jw_num(w, algbw * factor);
        jw_key(w, "busbw_factor");
        jw_num(w, factor);
        jw_obj_end(w);
    } else {
        jw_null(w);
    }
}

static void write_check(struct jw *w, const struct bench_record *r)
{
    jw_obj(w);
    jw_key(w, "reference");
    jw_str(w, r->reference);
    jw_key(w, "elements_wrong");
    jw_uint(w, r->wrong);
    jw_key(w, "max_error");
    jw_num(w, r->max_error); /* null when not finite */
    jw_key(w, "verdict");
    jw_str(w, (r->wrong == 0) ? "ok" : "wrong");
    if (r->has_tolerance) {
        jw_key(w, "elements_inexact");
        jw_uint(w, r->inexact);
        jw_key(w, "tolerance");
        jw_num(w, r->tolerance);
    }
    jw_obj_end(w);
}

/* The median of each tag over its repetitions (each repetition's value is
 * the slowest rank's), and its share of the median call time (or of the
 * call tag's median: share_of_call_tag). */
static void write_tags(struct jw *w, const struct bench_record *r, const struct bench_stats *st)
{
    uint64_t *col = malloc((size_t)r->tag_n * sizeof(uint64_t));
    uint64_t *scratch = malloc((size_t)r->tag_n * sizeof(uint64_t));

    if (col == NULL || scratch == NULL) {
        w->oom = 1;
    } else {
        double base = st->median_ns;
        jw_arr(w);
        for (int k = 0; k < r->ntags; k++) {
            const struct cg_tag_info *info = (r->tag_infos != NULL) ? &r->tag_infos[k]
                                                                    : &cg_tag_infos[r->tag_first + k];
            double med;
            for (long i = 0; i < r->tag_n; i++) {
                col[i] = r->tag_times[((size_t)i * (size_t)r->ntags) + (size_t)k];
            }
            med = bench_median_u64(col, r->tag_n, scratch);
            if (k == 0 && r->share_of_call_tag) {
                base = med; /* tag 0 is the call tag */
            }
            jw_obj(w);
            jw_key(w, "name");
            jw_str(w, info->name);
            jw_key(w, "kind");
            jw_str(w, bench_tag_kind_name(info->kind));
            jw_key(w, "median_ns");
            jw_num(w, med);
            jw_key(w, "share");
            jw_num(w, (base > 0.0) ? med / base : NAN);
            jw_obj_end(w);
        }
        jw_arr_end(w);
    }
    free(col);
    free(scratch);
}

int bench_record_write(const struct bench_job *job, const struct bench_record *r, char *msg,
                       size_t msglen)
{
    const struct bench_point *pt = r->pt;
    struct bench_stats st;
    struct jw w;
    int timed = (r->stop != NULL && r->n > 0);
    char raw[4096];
    char hash[17];
    int rc = 0;

    memset(&st, 0, sizeof(st));
    if (timed) {
        uint64_t *sorted = malloc((size_t)r->n * sizeof(uint64_t));
        if (sorted == NULL) {
            bench_fmt(msg, msglen, "out of memory for the statistics");
            return -1;
        }
        bench_stats_compute(r->times, r->n, sorted, &st);
        free(sorted);
        if (write_raw(job, r, msg, msglen) != 0) {
            return -1;
        }
    }

    jw_init(&w);
    jw_obj(&w);
    jw_key(&w, "schema_version");
    jw_int(&w, BENCH_RECORD_SCHEMA);
    jw_key(&w, "campaign");
    jw_str(&w, job->campaign);
    jw_key(&w, "run_id");
    jw_int(&w, job->run_id);
    jw_key(&w, "point_id");
    jw_str(&w, pt->id);
    jw_key(&w, "seq");
    jw_int(&w, pt->seq);
    /* Repeated launches: which one this is, and the id of the point the
     * launches share (the id less "-L<k>"). */
    jw_key(&w, "launch");
    jw_obj(&w);
    jw_key(&w, "index");
    jw_int(&w, job->launch);
    jw_key(&w, "of");
    jw_int(&w, job->launches);
    jw_key(&w, "point_id");
    {
        char base[256];
        size_t n = strlen(pt->id);
        char suffix[32];
        snprintf(suffix, sizeof(suffix), "-L%d", job->launch);
        if (job->launches > 1 && n > strlen(suffix) && n < sizeof(base) &&
            strcmp(pt->id + n - strlen(suffix), suffix) == 0) {
            memcpy(base, pt->id, n - strlen(suffix));
            base[n - strlen(suffix)] = '\0';
            jw_str(&w, base);
        } else {
            jw_str(&w, pt->id);
        }
    }
    jw_obj_end(&w);
    jw_key(&w, "status");
    jw_str(&w, r->status);
    jw_key(&w, "reason");
    jw_str(&w, (strcmp(r->status, "ok") != 0) ? r->reason : NULL);
    jw_key(&w, "collective");
    jw_str(&w, r->collective);
    jw_key(&w, "backend");
    jw_str(&w, r->backend);
    jw_key(&w, "library");
    jw_str(&w, job->library);
    if (r->has_transport) {
        jw_key(&w, "transport");
        jw_str(&w, r->transport);
    }
    jw_key(&w, "kind");
    jw_str(&w, r->kind);
    jw_key(&w, "name");
    jw_str(&w, pt->name);
    jw_key(&w, "schedule_file");
    jw_str(&w, r->schedule_file);
    jw_key(&w, "schedule_hash");
    jw_str(&w, (r->schedule_file != NULL && cg_fnv1a64_file(r->schedule_file, hash) == 0)
                   ? hash
                   : NULL);
    jw_key(&w, "requested");
    jw_json(&w, r->requested);
    jw_key(&w, "effective");
    jw_json(&w, r->effective);
    /* diff: keys whose values differ; a key the request leaves null (reps:
     * the stopping rule decides) has nothing to differ from. Nothing ran
     * (effective null): nothing to compare. */
    jw_key(&w, "diff");
    jw_arr(&w);
    for (const cJSON *it = (r->requested != NULL && r->effective != NULL) ? r->requested->child
                                                                          : NULL;
         it != NULL; it = it->next) {
        const cJSON *e = cJSON_GetObjectItemCaseSensitive(r->effective, it->string);
        if (!cJSON_IsNull(it) && (e == NULL || !cJSON_Compare(it, e, 1))) {
            jw_str(&w, it->string);
        }
    }
    jw_arr_end(&w);
    jw_key(&w, "size_B");
    jw_uint(&w, bench_size_B(r->p, pt));
    jw_key(&w, "timing");
    if (timed) {
        write_timing(&w, job, r, &st);
    } else {
        jw_null(&w);
    }
    jw_key(&w, "validity");
    if (timed) {
        write_validity(&w, r, &st);
    } else {
        jw_null(&w);
    }
    jw_key(&w, "bandwidth");
    if (timed) {
        write_bandwidth(&w, r, &st);
    } else {
        jw_null(&w);
    }
    /* Schema 3: the roofline measured in this launch (bench_roof.c). */
    jw_key(&w, "roofline");
    if (r->roof != NULL) {
        write_roofline(&w, r->roof);
    } else {
        jw_null(&w);
    }
    jw_key(&w, "check");
    if (r->checked) {
        write_check(&w, r);
    } else {
        jw_null(&w);
    }
    jw_key(&w, "tags");
    if (timed && r->ntags > 0 && r->tag_n > 0 && r->tag_times != NULL) {
        write_tags(&w, r, &st);
    } else {
        jw_null(&w);
    }
    jw_key(&w, "raw");
    if (timed) {
        bench_raw_record_path(job, pt->id, raw, sizeof(raw));
        jw_str(&w, raw);
    } else {
        jw_null(&w);
    }
    jw_obj_end(&w);
    if (w.oom) {
        jw_free(&w);
        bench_fmt(msg, msglen, "out of memory writing the record");
        return -1;
    }
    {
        /* The newline goes in the same write as the record: a reader never
         * sees half a line, whatever happens after. */
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
