/* bench_clock.c - one clock for every rank of a job, the one-way latency
 * floor between ranks, and the wait for a synchronisation window
 * (harness/README.md, "Timing"; FORMATS.md, "Run metadata": clock, latency).
 *
 * The global clock is rank 0's CLOCK_MONOTONIC. Every other rank maps its
 * own onto it with a linear model, global = x + a + b x, x = its clock less
 * the epoch (rank 0's clock when the sync began, sent to all), fitted as in
 * ReproMPI's HCA scheme (Hunold and Carpen-Amarie, "Hierarchical Clock
 * Synchronization in MPI", 2018):
 *
 *  1. in round k = 0, 1, ... (2^k < p) every rank r whose lowest set bit
 *     is 2^k learns its clock against r - 2^k (its parent in a binomial
 *     tree): `fitpoints` offset measurements, each the fastest of
 *     `exchanges` ping-pongs (offset = the parent's clock - the midpoint of
 *     the round trip, Cristian's estimate, whose error is at most half the
 *     round trip), `spacing_us` apart, and a least-squares line through
 *     them, each weighted by 1 / its round trip squared. Pairs of one round
 *     are disjoint, so they measure at once;
 *  2. the slope is kept only when it is significant (|b| > 3 standard
 *     errors): a short fit cannot tell a drift from noise, and an invented
 *     slope would grow into an error between syncs. Otherwise the model is
 *     the mean offset (weighted alike);
 *  3. the models are composed down the tree (rank 0 first), so each rank
 *     ends with a model against rank 0;
 *  4. check: each rank measures its offset against rank 0 directly once
 *     more and compares it with what its model says (err_ns, recorded).
 *     At a resync the previous model is checked the same way first
 *     (drifted_ns: how far it had drifted since it was fitted).
 * Ranks of one host read one CLOCK_MONOTONIC: a pair on one host is not
 * fitted (its model is the identity, exactly), and a rank on rank 0's host
 * has the identity model and no check; what is fitted and checked is a
 * clock of another host. Measured on this 2-core machine under load, a fit
 * of two ranks of one host could be 100 us off; the identity is not. The
 * test hook (below) makes every pair fitted, since it skews a clock.
 *
 * Why weighted: an offset's error is at most half its round trip, and the
 * round trips of one fit are not alike when ranks share cores: one point in
 * a few hundred has all its exchanges preempted and a round trip tens of us
 * long (seen here, 4 ranks on 2 cores). Unweighted, that one point moved a
 * 92 ms fit's slope by 2e-4; weighted by 1 / rtt^2 (the inverse of its
 * error's variance, when the error is proportional to the round trip) it
 * counts as little as it is worth.
 *
 * Why CLOCK_MONOTONIC and not MPI_Wtime: Open MPI's MPI_Wtime counts from
 * each process's own start; CLOCK_MONOTONIC is one clock for the processes
 * of one machine (the model then finds a = b = 0 within its error) and is
 * steady across nodes, which the model is for.
 *
 * All of this runs on ctx->sync_comm, point-to-point, so that a job's knobs
 * (which force the library's collectives) never touch it.
 *
 * Test hook: CG_BENCH_CLOCK_SKEW=RANK:OFFSET_NS:DRIFT makes that rank's
 * clock read raw + OFFSET_NS + DRIFT (raw - raw0), raw0 its clock at
 * bench_clock_init; the run metadata says so (tests/run_timing.sh checks
 * that the fitted model undoes it).
 */
#define _POSIX_C_SOURCE 200809L
#include "bench.h"

#include <errno.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TAG_PING 7201  /* client -> parent: a request for the parent's time */
#define TAG_PONG 7202  /* parent -> client: its time (a double, x of its clock) */
#define TAG_MODEL 7203 /* parent -> client: its composed model (a, b) */
#define TAG_LAT 7204   /* the latency ping-pongs */
#define TAG_NAME 7205  /* a pair's host names */

#define WAIT_SPIN_NS 20000 /* the window wait spins for the last 20 us */
#define WAIT_LATE_NS 2000  /* and a rank that leaves it 2 us after the start began late */

#define LAT_WARMUP 4 /* round trips not counted */
#define LAT_REPS 40  /* round trips counted, per pair */

static struct {
    int active;        /* this rank's clock is skewed */
    int rank;          /* the hook's rank */
    double offset_ns;  /* its offset */
    double drift;      /* its drift */
    int64_t raw0;      /* its raw clock at init */
} skew;

static int64_t raw_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ((int64_t)ts.tv_sec * 1000000000) + (int64_t)ts.tv_nsec;
}

int64_t bench_clock_of_raw(int64_t r)
{
    if (skew.active) {
        r += (int64_t)llround(skew.offset_ns + (skew.drift * (double)(r - skew.raw0)));
    }
    return r;
}

int64_t bench_clock_now(void)
{
    return bench_clock_of_raw(raw_ns());
}

int bench_clock_init(struct bench_ctx *ctx, char *msg, size_t msglen)
{
    const char *hook = getenv("CG_BENCH_CLOCK_SKEW");

    memset(&skew, 0, sizeof(skew));
    skew.rank = -1;
    if (hook != NULL && hook[0] != '\0') {
        char *end = NULL;
        long r;
        double off;
        double drift;
        errno = 0;
        r = strtol(hook, &end, 10);
        if (end == hook || *end != ':' || r < 0 || errno != 0) {
            goto bad;
        }
        hook = end + 1;
        off = strtod(hook, &end);
        if (end == hook || *end != ':' || !isfinite(off)) {
            goto bad;
        }
        hook = end + 1;
        drift = strtod(hook, &end);
        if (end == hook || *end != '\0' || !isfinite(drift) || fabs(drift) >= 0.1) {
            goto bad;
        }
        skew.rank = (int)r;
        skew.offset_ns = off;
        skew.drift = drift;
        skew.raw0 = raw_ns();
        skew.active = (ctx->rank == (int)r);
    }
    ctx->clock.skewed = (skew.rank >= 0);
    ctx->clock.skew_rank = skew.rank;
    ctx->clock.skew_offset_ns = skew.offset_ns;
    ctx->clock.skew_drift = skew.drift;
    ctx->clock.skew_raw0 = skew.raw0;
    return 0;
bad:
    bench_fmt(msg, msglen,
              "CG_BENCH_CLOCK_SKEW=\"%s\" is not RANK:OFFSET_NS:DRIFT (a rank, a number of "
              "ns, a drift below 0.1 in size)",
              getenv("CG_BENCH_CLOCK_SKEW"));
    return -1;
}

double bench_clock_global(const struct bench_ctx *ctx, int64_t local)
{
    const struct bench_clock *c = &ctx->clock;
    double x = (double)(local - c->epoch);

    return x + c->a + (c->b * x);
}

int64_t bench_clock_local_at(const struct bench_ctx *ctx, double global)
{
    const struct bench_clock *c = &ctx->clock;
    /* global = x (1 + b) + a */
    double x = (global - c->a) / (1.0 + c->b);

    return c->epoch + (int64_t)llround(x);
}

int bench_clock_wait(const struct bench_ctx *ctx, int64_t local_start)
{
    int64_t now = bench_clock_now();

    (void)ctx;
    if (now > local_start) {
        return 1;
    }
    /* Why yield until shortly before the start, then spin: a rank spinning
     * all the while keeps a core from a rank that has yet to receive the
     * announcement (4 ranks on 2 cores, or a shared machine); a yield
     * close to the start could hand the core away past it. */
    while ((now = bench_clock_now()) < local_start) {
        if (local_start - now > WAIT_SPIN_NS) {
            sched_yield();
        }
    }
    /* Left the wait well after the start: the core was taken meanwhile,
     * and the call began late (bench.c counts it: late_starts). */
    return (now - local_start > WAIT_LATE_NS) ? 2 : 0;
}

/* ---- offsets ----------------------------------------------------------------- */

static void pause_us(double us)
{
    if (us > 0.0) {
        long ns = (long)(us * 1000.0);
        struct timespec ts = {ns / 1000000000L, ns % 1000000000L};
        while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
        }
    }
}

/* The client's side of one offset measurement against `parent`: the
 * fastest of n ping-pongs. *x_mid: the midpoint on this rank's clock (x,
 * since the epoch); *off: the parent's x then, less x_mid; *rtt: its round
 * trip. The parent's clock is read through `parent_model` when the parent
 * answers with global time (the check), else raw. */
static int measure(const struct bench_ctx *ctx, int parent, long n, double *x_mid, double *off,
                   double *rtt)
{
    double best = INFINITY;
    char ping = 0;

    for (long e = 0; e < n; e++) {
        double t_parent = 0.0;
        double x1 = (double)(bench_clock_now() - ctx->clock.epoch);
        double x2;
        int rc = MPI_Send(&ping, 0, MPI_BYTE, parent, TAG_PING, ctx->sync_comm);
        if (rc == MPI_SUCCESS) {
            rc = MPI_Recv(&t_parent, 1, MPI_DOUBLE, parent, TAG_PONG, ctx->sync_comm,
                          MPI_STATUS_IGNORE);
        }
        if (rc != MPI_SUCCESS) {
            return rc;
        }
        x2 = (double)(bench_clock_now() - ctx->clock.epoch);
        if (x2 - x1 < best) {
            best = x2 - x1;
            *x_mid = (x1 + x2) / 2.0;
            *off = t_parent - *x_mid;
        }
    }
    *rtt = best;
    return MPI_SUCCESS;
}

/* The parent's side: n answers with its time, global (the check: rank 0,
 * whose global time is its clock) or its own x. */
static int answer(const struct bench_ctx *ctx, int client, long n, int global)
{
    char ping;

    for (long e = 0; e < n; e++) {
        double t;
        int rc = MPI_Recv(&ping, 0, MPI_BYTE, client, TAG_PING, ctx->sync_comm, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS) {
            return rc;
        }
        t = global ? bench_clock_global(ctx, bench_clock_now())
                   : (double)(bench_clock_now() - ctx->clock.epoch);
        rc = MPI_Send(&t, 1, MPI_DOUBLE, client, TAG_PONG, ctx->sync_comm);
        if (rc != MPI_SUCCESS) {
            return rc;
        }
    }
    return MPI_SUCCESS;
}

/* A fit point's weight: 1 / its round trip squared (a round trip below
 * 10 ns is a clock's resolution, not a better measurement). */
static double weight(double rtt)
{
    double r = rtt > 10.0 ? rtt : 10.0;
    return 1.0 / (r * r);
}

/* A least-squares line off = a + b x through the measurements, point i
 * weighted by weight(rtt[i]); b kept only when significant (see the top of
 * the file). *rms: the residual (unweighted). */
static void fit(const double *x, const double *off, const double *rtt, long n, double *a,
                double *b, double *rms, int *drift)
{
    double sw = 0.0;
    double mx = 0.0;
    double mo = 0.0;
    double sxx = 0.0;
    double sxo = 0.0;
    double rss = 0.0;

    for (long i = 0; i < n; i++) {
        sw += weight(rtt[i]);
        mx += weight(rtt[i]) * x[i];
        mo += weight(rtt[i]) * off[i];
    }
    mx /= sw;
    mo /= sw;
    for (long i = 0; i < n; i++) {
        sxx += weight(rtt[i]) * (x[i] - mx) * (x[i] - mx);
        sxo += weight(rtt[i]) * (x[i] - mx) * (off[i] - mo);
    }
    *b = (sxx > 0.0) ? sxo / sxx : 0.0;
    *a = mo - (*b * mx);
    for (long i = 0; i < n; i++) {
        double r = off[i] - (*a + (*b * x[i]));
        rss += weight(rtt[i]) * r * r;
    }
    *drift = 0;
    if (n >= 3 && sxx > 0.0) {
        double se = sqrt(rss / (double)(n - 2) / sxx);
        *drift = fabs(*b) > 3.0 * se;
    }
    if (!*drift) {
        *b = 0.0;
        *a = mo;
    }
    rss = 0.0;
    for (long i = 0; i < n; i++) {
        double r = off[i] - (*a + (*b * x[i]));
        rss += r * r;
    }
    *rms = sqrt(rss / (double)n);
}

/* What each rank sends rank 0 after a sync. */
struct clock_report {
    double a, b;          /* its model */
    double fit_rms;       /* its fit's residual */
    double err;           /* |direct offset - model| at the check */
    double rtt;           /* the check's round trip */
    double drifted;       /* the previous model's check error (NaN: none) */
    double drift;         /* 1: the slope was kept */
};

/* Every rank r > 0 measures its offset against rank 0 directly (rank 0
 * answering with its clock, which is global time) and compares it with its
 * model: *err = |model - measured| at the midpoint, *rtt the round trip. */
static int check(const struct bench_ctx *ctx, const int *fitted, double *err, double *rtt)
{
    long n = ctx->job->timing.clock.exchanges;

    *err = 0.0;
    *rtt = 0.0;
    for (int r = 1; r < ctx->p; r++) {
        if (!fitted[r]) {
            continue; /* rank 0's own clock: nothing to check */
        }
        if (ctx->rank == 0) {
            int rc = answer(ctx, r, n, 1);
            if (rc != MPI_SUCCESS) {
                return rc;
            }
        } else if (ctx->rank == r) {
            double x_mid = 0.0;
            double off = 0.0;
            int rc = measure(ctx, 0, n, &x_mid, &off, rtt);
            if (rc != MPI_SUCCESS) {
                return rc;
            }
            /* off is global - x at x_mid; the model says a + b x_mid. */
            *err = fabs(ctx->clock.a + (ctx->clock.b * x_mid) - off);
        }
    }
    return MPI_SUCCESS;
}

/* Whether this rank and `peer` read one clock: the same host (and no
 * test hook). Both sides of a pair call it and get the same answer. */
static int same_clock(const struct bench_ctx *ctx, int peer, const char *mine, int *same)
{
    char theirs[MPI_MAX_PROCESSOR_NAME + 1];
    int rc;

    memset(theirs, 0, sizeof(theirs));
    rc = MPI_Sendrecv(mine, MPI_MAX_PROCESSOR_NAME + 1, MPI_CHAR, peer, TAG_NAME, theirs,
                      MPI_MAX_PROCESSOR_NAME + 1, MPI_CHAR, peer, TAG_NAME, ctx->sync_comm,
                      MPI_STATUS_IGNORE);
    *same = (rc == MPI_SUCCESS) && !ctx->clock.skewed && strcmp(mine, theirs) == 0;
    return rc;
}

int bench_clock_sync(struct bench_ctx *ctx)
{
    struct bench_clock *c = &ctx->clock;
    const struct bench_clock_params *cp = &ctx->job->timing.clock;
    struct clock_report me;
    struct clock_report *all = NULL;
    double start = MPI_Wtime();
    double fit_rms = 0.0;
    int drift = 0;
    int rounds = 0;
    int rc;
    char host[MPI_MAX_PROCESSOR_NAME + 1];
    char host0[MPI_MAX_PROCESSOR_NAME + 1];
    int len = 0;
    int on_host0;
    int *fitted = calloc((size_t)ctx->p, sizeof(int));

    if (fitted == NULL) {
        return MPI_ERR_NO_MEM;
    }
    memset(host, 0, sizeof(host));
    if (MPI_Get_processor_name(host, &len) != MPI_SUCCESS) {
        snprintf(host, sizeof(host), "?");
    }
    memcpy(host0, host, sizeof(host0));
    rc = hx_bcast(ctx, host0, (int)sizeof(host0), 0);
    /* Which ranks have a model to fit and check: those not on rank 0's
     * host (every rank but 0 under the test hook); rank 0 learns it. */
    on_host0 = !ctx->clock.skewed && strcmp(host, host0) == 0;
    {
        int mine = !on_host0;
        if (rc == MPI_SUCCESS) {
            rc = hx_gather(ctx, &mine, (int)sizeof(int), fitted);
        }
        if (rc == MPI_SUCCESS) {
            rc = hx_bcast(ctx, fitted, (int)sizeof(int) * ctx->p, 0);
        }
        fitted[0] = 0;
    }
    if (rc != MPI_SUCCESS) {
        free(fitted);
        return rc;
    }

    memset(&me, 0, sizeof(me));
    me.drifted = NAN;
    if (c->synced && ctx->p > 1) {
        double e = 0.0;
        double t = 0.0;
        rc = check(ctx, fitted, &e, &t);
        if (rc != MPI_SUCCESS) {
            free(fitted);
            return rc;
        }
        me.drifted = e;
    }
    /* The epoch: rank 0's clock now, for every rank (x stays small, so that
     * doubles keep sub-ns precision whatever the machine's uptime). */
    {
        int64_t epoch = bench_clock_now();
        rc = hx_bcast(ctx, &epoch, (int)sizeof(epoch), 0);
        if (rc != MPI_SUCCESS) {
            return rc;
        }
        c->epoch = epoch;
    }
    c->a = 0.0;
    c->b = 0.0;
    while ((1 << rounds) < ctx->p) {
        rounds++;
    }
    {
        double *x = malloc((size_t)cp->fitpoints * sizeof(double));
        double *off = malloc((size_t)cp->fitpoints * sizeof(double));
        double *rtts = malloc((size_t)cp->fitpoints * sizeof(double));
        int bad = (x == NULL || off == NULL || rtts == NULL);
        if (hx_allreduce(ctx, &bad, 1, HX_INT, HX_MAX) != MPI_SUCCESS || bad) {
            free(x);
            free(off);
            free(rtts);
            return MPI_ERR_NO_MEM;
        }
        /* 1. learn every parent-child pair that does not share a clock. */
        for (int k = 0; k < rounds; k++) {
            int d = 1 << k;
            int same = 0;
            if ((ctx->rank & ((2 * d) - 1)) == d) {
                rc = same_clock(ctx, ctx->rank - d, host, &same);
                for (long i = 0; i < cp->fitpoints && !same && rc == MPI_SUCCESS; i++) {
                    if (i > 0) {
                        pause_us(cp->spacing_us);
                    }
                    rc = measure(ctx, ctx->rank - d, cp->exchanges, &x[i], &off[i], &rtts[i]);
                }
                if (rc == MPI_SUCCESS && !same) {
                    fit(x, off, rtts, cp->fitpoints, &c->a, &c->b, &fit_rms, &drift);
                }
            } else if ((ctx->rank % (2 * d)) == 0 && ctx->rank + d < ctx->p) {
                rc = same_clock(ctx, ctx->rank + d, host, &same);
                if (rc == MPI_SUCCESS && !same) {
                    rc = answer(ctx, ctx->rank + d, cp->fitpoints * cp->exchanges, 0);
                }
            }
            if (rc != MPI_SUCCESS) {
                free(x);
                free(off);
                free(rtts);
                free(fitted);
                return rc;
            }
        }
        free(x);
        free(off);
        free(rtts);
    }
    /* 2. compose down the tree: a child's model maps its x onto its
     * parent's x; the parent's maps that onto global time. */
    for (int k = rounds - 1; k >= 0; k--) {
        int d = 1 << k;
        if ((ctx->rank & ((2 * d) - 1)) == d) {
            double pm[2];
            double a1 = c->a;
            double b1 = c->b;
            rc = MPI_Recv(pm, 2, MPI_DOUBLE, ctx->rank - d, TAG_MODEL, ctx->sync_comm,
                          MPI_STATUS_IGNORE);
            if (rc != MPI_SUCCESS) {
                free(fitted);
                return rc;
            }
            c->a = ((1.0 + pm[1]) * a1) + pm[0];
            c->b = ((1.0 + b1) * (1.0 + pm[1])) - 1.0;
            if (on_host0) {
                /* Rank 0's own clock, whatever path the tree took. */
                c->a = 0.0;
                c->b = 0.0;
            }
        } else if ((ctx->rank % (2 * d)) == 0 && ctx->rank + d < ctx->p) {
            double pm[2] = {c->a, c->b};
            rc = MPI_Send(pm, 2, MPI_DOUBLE, ctx->rank + d, TAG_MODEL, ctx->sync_comm);
            if (rc != MPI_SUCCESS) {
                free(fitted);
                return rc;
            }
        }
    }
    /* 3. check. */
    rc = check(ctx, fitted, &me.err, &me.rtt);
    if (rc != MPI_SUCCESS) {
        free(fitted);
        return rc;
    }
    me.a = c->a;
    me.b = c->b;
    me.fit_rms = fit_rms;
    me.drift = drift;
    if (ctx->rank == 0) {
        all = calloc((size_t)ctx->p, sizeof(*all));
        if (c->rank_a == NULL) {
            c->rank_a = calloc((size_t)ctx->p, sizeof(double));
            c->rank_b = calloc((size_t)ctx->p, sizeof(double));
        }
    }
    rc = hx_gather(ctx, &me, (int)sizeof(me), all);
    if (rc != MPI_SUCCESS) {
        free(all);
        free(fitted);
        return rc;
    }
    c->fitted_ranks = 0;
    for (int r = 0; r < ctx->p; r++) {
        c->fitted_ranks += fitted[r];
    }
    free(fitted);
    c->synced = 1;
    c->nsyncs++;
    if (ctx->rank == 0 && all != NULL) {
        c->err_ns = 0.0;
        c->rtt_ns = 0.0;
        c->fit_rms_ns = 0.0;
        c->drift_ranks = 0;
        c->drifted_ns = (c->nsyncs > 1) ? 0.0 : NAN;
        for (int r = 0; r < ctx->p; r++) {
            c->err_ns = fmax(c->err_ns, all[r].err);
            c->rtt_ns = fmax(c->rtt_ns, all[r].rtt);
            c->fit_rms_ns = fmax(c->fit_rms_ns, all[r].fit_rms);
            c->drift_ranks += (all[r].drift != 0.0);
            if (c->nsyncs > 1 && isfinite(all[r].drifted)) {
                c->drifted_ns = fmax(c->drifted_ns, all[r].drifted);
            }
            if (c->rank_a != NULL && c->rank_b != NULL) {
                c->rank_a[r] = all[r].a;
                c->rank_b[r] = all[r].b;
            }
        }
        c->synced_at = MPI_Wtime();
        c->seconds = c->synced_at - start;
    }
    free(all);
    return MPI_SUCCESS;
}

/* ---- the latency floor ------------------------------------------------------ */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a;
    double y = *(const double *)b;
    return (x > y) - (x < y);
}

int bench_latency_measure(struct bench_ctx *ctx)
{
    struct bench_latency *l = &ctx->lat;
    double times[LAT_REPS];
    double mine[2] = {NAN, NAN}; /* median, min of RTT / 2 */
    double *all = NULL;
    char byte = 0;
    int rc = MPI_SUCCESS;

    if (ctx->p < 2) {
        return MPI_SUCCESS;
    }
    /* Rank r starts each round trip, rank 0 echoes: pairs one after
     * another, so that no other pair's traffic shares the cores. */
    for (int r = 1; r < ctx->p && rc == MPI_SUCCESS; r++) {
        for (int i = 0; i < LAT_WARMUP + LAT_REPS && rc == MPI_SUCCESS; i++) {
            if (ctx->rank == r) {
                int64_t t0 = bench_clock_now();
                rc = MPI_Send(&byte, 0, MPI_BYTE, 0, TAG_LAT, ctx->sync_comm);
                if (rc == MPI_SUCCESS) {
                    rc = MPI_Recv(&byte, 0, MPI_BYTE, 0, TAG_LAT, ctx->sync_comm,
                                  MPI_STATUS_IGNORE);
                }
                if (i >= LAT_WARMUP) {
                    times[i - LAT_WARMUP] = (double)(bench_clock_now() - t0) / 2.0;
                }
            } else if (ctx->rank == 0) {
                rc = MPI_Recv(&byte, 0, MPI_BYTE, r, TAG_LAT, ctx->sync_comm, MPI_STATUS_IGNORE);
                if (rc == MPI_SUCCESS) {
                    rc = MPI_Send(&byte, 0, MPI_BYTE, r, TAG_LAT, ctx->sync_comm);
                }
            }
        }
    }
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    if (ctx->rank > 0) {
        qsort(times, LAT_REPS, sizeof(double), cmp_double);
        mine[0] = (times[(LAT_REPS / 2) - 1] + times[LAT_REPS / 2]) / 2.0;
        mine[1] = times[0];
    }
    if (ctx->rank == 0) {
        all = calloc((size_t)ctx->p * 2, sizeof(double));
        l->median_ns = calloc((size_t)ctx->p, sizeof(double));
        l->min_ns = calloc((size_t)ctx->p, sizeof(double));
    }
    rc = hx_gather(ctx, mine, (int)sizeof(mine), all);
    if (rc == MPI_SUCCESS && ctx->rank == 0 && all != NULL && l->median_ns != NULL &&
        l->min_ns != NULL) {
        l->floor_ns = INFINITY;
        for (int r = 1; r < ctx->p; r++) {
            l->median_ns[r] = all[2 * r];
            l->min_ns[r] = all[(2 * r) + 1];
            /* Why the fastest, not the median: no collective can complete
             * in less than the fastest message seen, whatever the load; a
             * median taken while the machine was busy would flag honest
             * records (seen here: a floor of 13 us at load 12 against a
             * 7.7 us allreduce). */
            l->floor_ns = fmin(l->floor_ns, l->min_ns[r]);
        }
        l->measured = 1;
    }
    free(all);
    return rc;
}

void bench_clock_free(struct bench_ctx *ctx)
{
    free(ctx->clock.rank_a);
    free(ctx->clock.rank_b);
    free(ctx->lat.median_ns);
    free(ctx->lat.min_ns);
    ctx->clock.rank_a = NULL;
    ctx->clock.rank_b = NULL;
    ctx->lat.median_ns = NULL;
    ctx->lat.min_ns = NULL;
}
