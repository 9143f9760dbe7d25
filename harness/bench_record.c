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

void bench_record_point(cJSON *o, const struct bench_point *pt, const char *algorithm,
                        const char *forced_by)
{
    cJSON_AddItemToObject(o, "algorithm", cg_json_string_or_null(algorithm));
    cJSON_AddItemToObject(o, "forced_by", cg_json_string_or_null(forced_by));
    cJSON_AddItemToObject(o, "count", cJSON_CreateNumber((double)pt->count));
    cJSON_AddItemToObject(o, "datatype", cg_json_string(bench_dtype_name(pt->dtype)));
    cJSON_AddItemToObject(o, "op", pt->op_given ? cg_json_string(bench_op_name(pt->op))
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
                              cg_json_string((vppn > 0) ? "virtual (CG_PPN)" : "real"));
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
                              cg_json_string(virt ? "virtual (CG_PPN)" : "real"));
        cJSON_AddItemToObject(o, "regular",
                              (t != NULL) ? cJSON_CreateBool(t->regular) : cJSON_CreateNull());
        cJSON_AddItemToObject(o, "irregular_why",
                              (t == NULL) ? cg_json_string_or_null(ctx->topo_error) : cg_json_string_or_null(t->why));
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

static void write_timing(struct cg_jw *w, const struct bench_job *job, const struct bench_record *r,
                         const struct bench_stats *st)
{
    cg_jw_obj(w, NULL);
    /* Which figure the statistics are of (FORMATS.md, "Timing figures"):
     * the window's latest end less its announced start, or the slowest
     * rank's own time from its exit of the barrier. */
    cg_jw_str(w, "aggregation", r->window ? "latest_end_minus_window_start" : "max_over_ranks_per_rep");
    cg_jw_str(w, "figure", r->window ? "window" : "max_rank_duration");
    cg_jw_str(w, "sync", bench_sync_name(job->timing.sync));
    cg_jw_str(w, "policy", r->nrep ? "nrep" : "rse");
    cg_jw_int(w, "n", r->n);
    cg_jw_int(w, "warmup", job->timing.warmup);
    cg_jw_str(w, "stop", r->stop);
    cg_jw_num(w, "min_ns", st->min_ns);
    cg_jw_num(w, "median_ns", st->median_ns);
    cg_jw_num(w, "mean_ns", st->mean_ns);
    cg_jw_num(w, "stdev_ns", st->stdev_ns);
    cg_jw_num(w, "p5_ns", st->p5_ns);
    cg_jw_num(w, "p25_ns", st->p25_ns);
    cg_jw_num(w, "p75_ns", st->p75_ns);
    cg_jw_num(w, "p95_ns", st->p95_ns);
    cg_jw_num(w, "ci95_median_lo_ns", st->ci_lo_ns);
    cg_jw_num(w, "ci95_median_hi_ns", st->ci_hi_ns);
    cg_jw_num(w, "rse", st->rse);
    /* The other figure of the same repetitions: the global span (barrier
     * and dissemination with a clock), null otherwise. */
    cg_jw_key(w, "span");
    if (r->span_times != NULL && r->n > 0) {
        struct bench_stats sp;
        uint64_t *sorted = malloc((size_t)r->n * sizeof(uint64_t));
        if (sorted == NULL) {
            w->oom = 1;
        } else {
            bench_stats_compute(r->span_times, r->n, sorted, &sp);
            free(sorted);
            cg_jw_obj(w, NULL);
            cg_jw_str(w, "figure", "global_span");
            cg_jw_num(w, "min_ns", sp.min_ns);
            cg_jw_num(w, "median_ns", sp.median_ns);
            cg_jw_num(w, "p25_ns", sp.p25_ns);
            cg_jw_num(w, "p75_ns", sp.p75_ns);
            cg_jw_end(w);
        }
    } else {
        cg_jw_null(w, NULL);
    }
    cg_jw_key(w, "invalid");
    if (r->window) {
        cg_jw_int(w, NULL, r->invalid);
    } else {
        cg_jw_null(w, NULL);
    }
    cg_jw_key(w, "late_starts");
    if (r->window) {
        cg_jw_int(w, NULL, r->late_starts);
    } else {
        cg_jw_null(w, NULL);
    }
    cg_jw_num(w, "window_ns", r->window ? r->window_ns : NAN);
    cg_jw_num(w, "clock_error_ns", r->clocked ? r->clock_error_ns : NAN);
    cg_jw_num(w, "clock_age_s", r->clocked ? r->clock_age_s : NAN);
    if (r->nrep) {
        cg_jw_obj(w, "nrep");
        cg_jw_num(w, "t1_s", r->nrep_t1_s);
        cg_jw_int(w, "t1_launches", r->nrep_t1_launches);
        cg_jw_num(w, "t_min_ns", r->nrep_tmin_ns);
        cg_jw_int(w, "batch", r->nrep_batch);
        cg_jw_int(w, "nrep", r->nrep_target);
        cg_jw_bool(w, "capped", r->nrep_capped);
        cg_jw_end(w);
    }
    if (r->timer != NULL) {
        cg_jw_str(w, "timer", r->timer);
    }
    cg_jw_end(w);
}

/* "roofline" (schema 3): the point's roofline, measured in its launch
 * (bench_roof.c), or null. */
static void write_roofline(struct cg_jw *w, const struct bench_roof *roof)
{
    if (!roof->measured) {
        cg_jw_null(w, NULL);
        return;
    }
    double part_B[3] = { roof->recv_B, roof->reduce_B, roof->copy_B };
    double part_ns[3] = { roof->p2p_ns, roof->reduce_ns, roof->copy_ns };
    static const char *const names[3] = { "p2p", "reduce", "copy" };
    cg_jw_obj(w, NULL);
    cg_jw_num(w, "recv_B", roof->recv_B);
    cg_jw_num(w, "reduce_B", roof->reduce_B);
    cg_jw_num(w, "copy_B", roof->copy_B);
    for (int i = 0; i < 3; i++) {
        char key[32];
        snprintf(key, sizeof key, "%s_ns", names[i]);
        cg_jw_num(w, key, part_ns[i]);
        snprintf(key, sizeof key, "%s_GBps", names[i]);
        cg_jw_key(w, key);
        if (part_B[i] > 0 && part_ns[i] > 0) {
            cg_jw_num(w, NULL, part_B[i] / part_ns[i]);
        } else {
            cg_jw_null(w, NULL);
        }
    }
    cg_jw_num(w, "limit_ns", roof->limit_ns);
    cg_jw_num(w, "overlap_limit_ns", roof->overlap_limit_ns);
    cg_jw_end(w);
}

/* The checks of a timed point (harness/README.md, "Validity"): its median
 * against the job's one-way latency floor (p > 1), and whether the ranks
 * shared cores. */
static void write_validity(struct cg_jw *w, const struct bench_record *r, const struct bench_stats *st)
{
    int below = r->validity_known && r->p > 1 && isfinite(r->latency_floor_ns) &&
                st->median_ns < r->latency_floor_ns;

    cg_jw_obj(w, NULL);
    cg_jw_num(w, "latency_floor_ns", r->validity_known ? r->latency_floor_ns : NAN);
    cg_jw_bool(w, "below_latency_floor", below);
    cg_jw_key(w, "oversubscribed");
    if (r->validity_known && r->oversubscribed >= 0) {
        cg_jw_bool(w, NULL, r->oversubscribed);
    } else {
        cg_jw_null(w, NULL);
    }
    cg_jw_key(w, "host_ranks");
    if (r->validity_known && r->host_ranks > 0) {
        cg_jw_int(w, NULL, r->host_ranks);
    } else {
        cg_jw_null(w, NULL);
    }
    cg_jw_key(w, "host_cores");
    if (r->validity_known && r->host_cores > 0) {
        cg_jw_int(w, NULL, r->host_cores);
    } else {
        cg_jw_null(w, NULL);
    }
    cg_jw_end(w);
}

static void write_bandwidth(struct cg_jw *w, const struct bench_record *r, const struct bench_stats *st)
{
    const struct bench_point *pt = r->pt;

    if (pt->coll == CG_COLL_BARRIER) {
        /* No data moves: no bandwidth (cg_jw_num writes NaN as null). */
        cg_jw_obj(w, NULL);
        cg_jw_null(w, "algbw_GBps");
        cg_jw_null(w, "busbw_GBps");
        cg_jw_null(w, "busbw_factor");
        cg_jw_end(w);
    } else if (st->median_ns > 0.0) {
        double algbw = (double)bench_size_B(r->p, pt) / st->median_ns; /* bytes per ns = GB/s */
        double factor = bench_busbw_factor(r->p, pt->coll);
        cg_jw_obj(w, NULL);
        cg_jw_num(w, "algbw_GBps", algbw);
        cg_jw_num(w, "busbw_GBps", algbw * factor);
        cg_jw_num(w, "busbw_factor", factor);
        cg_jw_end(w);
    } else {
        cg_jw_null(w, NULL);
    }
}

static void write_check(struct cg_jw *w, const struct bench_record *r)
{
    cg_jw_obj(w, NULL);
    cg_jw_str(w, "reference", r->reference);
    cg_jw_uint(w, "elements_wrong", r->wrong);
    cg_jw_num(w, "max_error", r->max_error); /* null when not finite */
    cg_jw_str(w, "verdict", (r->wrong == 0) ? "ok" : "wrong");
    if (r->has_tolerance) {
        cg_jw_uint(w, "elements_inexact", r->inexact);
        cg_jw_num(w, "tolerance", r->tolerance);
    }
    cg_jw_end(w);
}

/* The median of each tag over its repetitions (each repetition's value is
 * the slowest rank's), and its share of the median call time (or of the
 * call tag's median: share_of_call_tag). */
static void write_tags(struct cg_jw *w, const struct bench_record *r, const struct bench_stats *st)
{
    uint64_t *col = malloc((size_t)r->tag_n * sizeof(uint64_t));
    uint64_t *scratch = malloc((size_t)r->tag_n * sizeof(uint64_t));

    if (col == NULL || scratch == NULL) {
        w->oom = 1;
    } else {
        double base = st->median_ns;
        cg_jw_arr(w, NULL);
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
            cg_jw_obj(w, NULL);
            cg_jw_str(w, "name", info->name);
            cg_jw_str(w, "kind", bench_tag_kind_name(info->kind));
            cg_jw_num(w, "median_ns", med);
            cg_jw_num(w, "share", (base > 0.0) ? med / base : NAN);
            cg_jw_end(w);
        }
        cg_jw_end(w);
    }
    free(col);
    free(scratch);
}

int bench_record_write(const struct bench_job *job, const struct bench_record *r, char *msg,
                       size_t msglen)
{
    const struct bench_point *pt = r->pt;
    struct bench_stats st;
    struct cg_jw w;
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

    cg_jw_init(&w);
    cg_jw_obj(&w, NULL);
    cg_jw_int(&w, "schema_version", BENCH_RECORD_SCHEMA);
    cg_jw_str(&w, "campaign", job->campaign);
    cg_jw_int(&w, "run_id", job->run_id);
    cg_jw_str(&w, "point_id", pt->id);
    cg_jw_int(&w, "seq", pt->seq);
    /* Repeated launches: which one this is, and the id of the point the
     * launches share (the id less "-L<k>"). */
    cg_jw_obj(&w, "launch");
    cg_jw_int(&w, "index", job->launch);
    cg_jw_int(&w, "of", job->launches);
    cg_jw_key(&w, "point_id");
    {
        char base[256];
        size_t n = strlen(pt->id);
        char suffix[32];
        snprintf(suffix, sizeof(suffix), "-L%d", job->launch);
        if (job->launches > 1 && n > strlen(suffix) && n < sizeof(base) &&
            strcmp(pt->id + n - strlen(suffix), suffix) == 0) {
            memcpy(base, pt->id, n - strlen(suffix));
            base[n - strlen(suffix)] = '\0';
            cg_jw_str(&w, NULL, base);
        } else {
            cg_jw_str(&w, NULL, pt->id);
        }
    }
    cg_jw_end(&w);
    cg_jw_str(&w, "status", r->status);
    cg_jw_str(&w, "reason", (strcmp(r->status, "ok") != 0) ? r->reason : NULL);
    cg_jw_str(&w, "collective", r->collective);
    cg_jw_str(&w, "backend", r->backend);
    cg_jw_str(&w, "library", job->library);
    if (r->has_transport) {
        cg_jw_str(&w, "transport", r->transport);
    }
    cg_jw_str(&w, "kind", r->kind);
    cg_jw_str(&w, "name", pt->name);
    cg_jw_str(&w, "schedule_file", r->schedule_file);
    cg_jw_str(&w, "schedule_hash", (r->schedule_file != NULL && cg_fnv1a64_file(r->schedule_file, hash) == 0)
                   ? hash
                   : NULL);
    cg_jw_copy(&w, "requested", r->requested);
    cg_jw_copy(&w, "effective", r->effective);
    /* diff: keys whose values differ; a key the request leaves null (reps:
     * the stopping rule decides) has nothing to differ from. Nothing ran
     * (effective null): nothing to compare. */
    cg_jw_arr(&w, "diff");
    for (const cJSON *it = (r->requested != NULL && r->effective != NULL) ? r->requested->child
                                                                          : NULL;
         it != NULL; it = it->next) {
        const cJSON *e = cJSON_GetObjectItemCaseSensitive(r->effective, it->string);
        if (!cJSON_IsNull(it) && (e == NULL || !cJSON_Compare(it, e, 1))) {
            cg_jw_str(&w, NULL, it->string);
        }
    }
    cg_jw_end(&w);
    cg_jw_uint(&w, "size_B", bench_size_B(r->p, pt));
    cg_jw_key(&w, "timing");
    if (timed) {
        write_timing(&w, job, r, &st);
    } else {
        cg_jw_null(&w, NULL);
    }
    cg_jw_key(&w, "validity");
    if (timed) {
        write_validity(&w, r, &st);
    } else {
        cg_jw_null(&w, NULL);
    }
    cg_jw_key(&w, "bandwidth");
    if (timed) {
        write_bandwidth(&w, r, &st);
    } else {
        cg_jw_null(&w, NULL);
    }
    /* Schema 3: the roofline measured in this launch (bench_roof.c). */
    cg_jw_key(&w, "roofline");
    if (r->roof != NULL) {
        write_roofline(&w, r->roof);
    } else {
        cg_jw_null(&w, NULL);
    }
    cg_jw_key(&w, "check");
    if (r->checked) {
        write_check(&w, r);
    } else {
        cg_jw_null(&w, NULL);
    }
    cg_jw_key(&w, "tags");
    if (timed && r->ntags > 0 && r->tag_n > 0 && r->tag_times != NULL) {
        write_tags(&w, r, &st);
    } else {
        cg_jw_null(&w, NULL);
    }
    cg_jw_key(&w, "raw");
    if (timed) {
        bench_raw_record_path(job, pt->id, raw, sizeof(raw));
        cg_jw_str(&w, NULL, raw);
    } else {
        cg_jw_null(&w, NULL);
    }
    cg_jw_end(&w);
    {
        /* The newline goes in the same write as the record: a reader never
         * sees half a line, whatever happens after. */
        size_t len = 0;
        char *line = cg_jw_text(&w, 0, &len);
        cg_jw_free(&w);
        if (line == NULL) {
            bench_fmt(msg, msglen, "out of memory writing the record");
            return -1;
        }
        if (bench_append_line(job->out_points, line, len) != 0) {
            bench_fmt(msg, msglen, "%s: %s", job->out_points, strerror(errno));
            rc = -1;
        }
        free(line);
    }
    return rc;
}
