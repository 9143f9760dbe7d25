/* bench_time.c - synchronisation before a repetition, and the statistics of
 * the repetitions (FORMATS.md, "Record": timing).
 */
#include "bench.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define DISSEMINATION_TAG 4242 /* tags DISSEMINATION_TAG + round on sync_comm */

/* The dissemination barrier (Hensgen, Finkel and Manber): in round k every
 * rank sends a 0-byte message 2^k ranks ahead and receives one from 2^k
 * ranks behind; after ceil(log2 p) rounds every rank has heard, through
 * some chain, from every other one. Why our own rather than MPI_Barrier:
 * ReproMPI offers it because its exit times are more even across ranks than
 * some libraries' barriers, and because its cost does not depend on the
 * library under test. */
static int dissemination_barrier(MPI_Comm comm, int rank, int p)
{
    char dummy = 0;
    int round = 0;

    for (int dist = 1; dist < p; dist <<= 1, round++) {
        int to = (rank + dist) % p;
        int from = (rank - dist + p) % p;
        int rc = MPI_Sendrecv(&dummy, 0, MPI_BYTE, to, DISSEMINATION_TAG + round, &dummy, 0,
                              MPI_BYTE, from, DISSEMINATION_TAG + round, comm,
                              MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS) {
            return rc;
        }
    }
    return MPI_SUCCESS;
}

int bench_sync(const struct bench_ctx *ctx)
{
    /* Window sync is bench.c's own loop; anything else that asks (the
     * barrier's check, bench_cuda, which has no window) gets the
     * dissemination barrier. */
    if (ctx->job->timing.sync != BENCH_SYNC_BARRIER) {
        return dissemination_barrier(ctx->sync_comm, ctx->rank, ctx->p);
    }
    return MPI_Barrier(ctx->sync_comm);
}

const char *bench_sync_name(enum bench_sync s)
{
    return (s == BENCH_SYNC_WINDOW)          ? "window"
           : (s == BENCH_SYNC_DISSEMINATION) ? "dissemination"
                                             : "barrier";
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a;
    uint64_t y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Median of sorted values: the middle one, or the mean of the two middle. */
static double median_sorted(const uint64_t *s, long n)
{
    if (n <= 0) {
        return NAN;
    }
    if (n % 2 == 1) {
        return (double)s[n / 2];
    }
    return ((double)s[(n / 2) - 1] + (double)s[n / 2]) / 2.0;
}

double bench_median_u64(const uint64_t *v, long n, uint64_t *scratch)
{
    memcpy(scratch, v, (size_t)n * sizeof(*v));
    qsort(scratch, (size_t)n, sizeof(*scratch), cmp_u64);
    return median_sorted(scratch, n);
}

/* Value at 1-based rank k of the sorted values, k clamped to [1, n]. */
static double at_rank(const uint64_t *s, long n, long k)
{
    if (k < 1) {
        k = 1;
    }
    if (k > n) {
        k = n;
    }
    return (double)s[k - 1];
}

/* Nearest-rank percentile: the smallest value with at least q of the
 * values at or below it, rank ceil(q * n). */
static double percentile(const uint64_t *s, long n, double q)
{
    return at_rank(s, n, (long)ceil(q * (double)n));
}

void bench_stats_compute(const uint64_t *times, long n, uint64_t *sorted, struct bench_stats *s)
{
    double sum = 0.0;
    double sq = 0.0;
    double half_width;

    memset(s, 0, sizeof(*s));
    s->n = n;
    if (n <= 0) {
        s->rse = NAN;
        return;
    }
    memcpy(sorted, times, (size_t)n * sizeof(*times));
    qsort(sorted, (size_t)n, sizeof(*sorted), cmp_u64);
    s->min_ns = (double)sorted[0];
    s->median_ns = median_sorted(sorted, n);
    for (long i = 0; i < n; i++) {
        sum += (double)sorted[i];
    }
    s->mean_ns = sum / (double)n;
    for (long i = 0; i < n; i++) {
        double d = (double)sorted[i] - s->mean_ns;
        sq += d * d;
    }
    s->stdev_ns = (n > 1) ? sqrt(sq / (double)(n - 1)) : 0.0;
    s->p5_ns = percentile(sorted, n, 0.05);
    s->p25_ns = percentile(sorted, n, 0.25);
    s->p75_ns = percentile(sorted, n, 0.75);
    s->p95_ns = percentile(sorted, n, 0.95);
    /* 95% CI of the median from order statistics (Le Boudec, "Performance
     * Evaluation of Computer and Communication Systems", Thm. 2.1): ranks
     * floor(n/2 - 0.98 sqrt(n)) and ceil(n/2 + 1 + 0.98 sqrt(n)), 1-based;
     * for n < 6 the interval is the whole range. */
    half_width = 0.98 * sqrt((double)n);
    s->ci_lo_ns = at_rank(sorted, n, (long)floor(((double)n / 2.0) - half_width));
    s->ci_hi_ns = at_rank(sorted, n, (long)ceil(((double)n / 2.0) + 1.0 + half_width));
    /* Relative standard error of the median: the median's standard error
     * for a normal sample is sqrt(pi/2) = 1.2533 times the mean's. */
    s->rse = (s->median_ns > 0.0) ? (1.2533 * s->stdev_ns / sqrt((double)n) / s->median_ns)
                                  : NAN;
}

void bench_online_add(struct bench_online *o, uint64_t t)
{
    long lo = 0;
    long hi = o->n;
    double delta;

    /* Insertion after any equal value: binary search, then one memmove. */
    while (lo < hi) {
        long mid = lo + ((hi - lo) / 2);
        if (o->sorted[mid] <= t) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    memmove(o->sorted + lo + 1, o->sorted + lo, (size_t)(o->n - lo) * sizeof(*o->sorted));
    o->sorted[lo] = t;
    o->n++;
    delta = (double)t - o->mean;
    o->mean += delta / (double)o->n;
    o->m2 += delta * ((double)t - o->mean);
}

double bench_online_rse(const struct bench_online *o)
{
    double median;
    double stdev;

    if (o->n < 2) {
        return NAN;
    }
    median = median_sorted(o->sorted, o->n);
    stdev = sqrt(o->m2 / (double)(o->n - 1));
    return (median > 0.0) ? (1.2533 * stdev / sqrt((double)o->n) / median) : NAN;
}

enum bench_decision bench_decide(const struct bench_timing *tm, const struct bench_online *o,
                                 double elapsed)
{
    if (o->n >= tm->min_reps) {
        double rse = bench_online_rse(o);
        if (isfinite(rse) && rse < tm->rse_target) {
            return BENCH_STOP_RSE;
        }
        if (elapsed >= tm->budget_s) {
            return BENCH_STOP_BUDGET;
        }
    }
    return (o->n >= tm->max_reps) ? BENCH_STOP_MAX : BENCH_GO_ON;
}

const char *bench_stop_name(enum bench_decision d)
{
    return (d == BENCH_STOP_RSE)      ? "rse"
           : (d == BENCH_STOP_BUDGET) ? "budget"
           : (d == BENCH_STOP_NREP)   ? "nrep"
                                      : "max_reps";
}
