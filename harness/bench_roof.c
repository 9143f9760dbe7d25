/* bench_roof.c - the roofline of a point, measured in the same launch as
 * the collectives it is a limit for (harness/README.md, "The roofline").
 *
 * Each rank of a collective of size_B bytes must at least
 *   receive  recv_B   = busbw factor x size_B   (the traffic a bandwidth-
 *                       optimal algorithm puts through each rank's link:
 *                       allreduce 2(p-1)/p, allgather (p-1)/p, bcast 1, ...),
 *   reduce   reduce_B = (p-1)/p x size_B        (the reducing collectives:
 *                       (p-1) x n element operations shared by p ranks),
 *   copy     copy_B   = size_B / p              (allgather, gather, scatter,
 *                       alltoall: its own block, which no message brings).
 * The limit is the time of those three measured here, each the fastest of a
 * few repetitions: one MPI_Sendrecv of recv_B bytes around the ring (every
 * rank sends to rank + 1 and receives from rank - 1 at once, as the
 * collective's busiest round does, and a single message is the transport's
 * best case; for bcast, reduce, gather and scatter, whose least traffic goes
 * one way, one MPI_Send from each even rank to the next instead), the
 * runtime's typed kernel over reduce_B bytes
 * (MPI_Reduce_local where there is none), and a memcpy of copy_B bytes.
 * limit_ns is their sum (an algorithm that does not overlap its transfers
 * with its reductions cannot beat it); overlap_limit_ns is the larger of the
 * transfer and the local work (no algorithm can beat that). Measured once
 * per (collective, count, datatype, op) in a launch.
 */
#define _POSIX_C_SOURCE 200809L

#include "bench.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cg.h"

#define ROOF_CACHE 64
#define ROOF_REPS 5
/* Why every point from 1 MiB (where the report compares implementations
 * with the limit, report_speed.c): on this VM Open MPI's large transfers
 * run at one of two speeds, 2x apart, that change within a launch every
 * few seconds (harness/measurements/2026-12-07-speed-mapped.md); a limit
 * measured at the launch's first point of a size could belong to the other
 * speed than a point run seconds later. Measured right before the point,
 * limit and point share the moment. Below, the limit is latency and cheap
 * enough to be cached. */
#define ROOF_EACH_B (1024.0 * 1024.0)

struct roof_key {
    enum cg_coll coll;
    size_t count;
    enum bench_dtype dtype;
    enum bench_op op;
};

static struct {
    struct roof_key key;
    struct bench_roof roof;
} roof_cache[ROOF_CACHE];
static int roof_cached;

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ((double)ts.tv_sec * 1e9) + (double)ts.tv_nsec;
}

/* The (p-1)/p x size_B every rank must reduce, for the collectives that do. */
static double reduce_factor(enum cg_coll coll, int p)
{
    return bench_coll_reduces(coll) ? ((double)(p - 1) / (double)p) : 0.0;
}

/* A collective without an op whose data comes in p blocks (shape uniform:
 * allgather, gather, alltoall; one: scatter) keeps its own block, which no
 * message brings: a copy of size_B / p. */
static double copy_factor(enum cg_coll coll, int p)
{
    const struct cg_coll_info *ci = &cg_colls[coll];
    int blocks = ci->shape == CG_SHAPE_UNIFORM || ci->shape == CG_SHAPE_ONE;
    return (!ci->reduces && blocks) ? 1.0 / (double)p : 0.0;
}

/* Whether the collective's least traffic goes one way: the rooted ones
 * (bcast, reduce, gather, scatter: a root's data, or data for a root, so
 * that a rank may only receive or only send), which a one-way transfer
 * measures; the others have every rank send and receive as much at once. */
static int one_way(enum cg_coll coll)
{
    return cg_colls[coll].rooted;
}

/* n bytes around the ring (one MPI_Sendrecv), or one way from each even
 * rank to the next (one_way), in pieces of at most INT_MAX. */
static int ring_bytes(const struct bench_ctx *ctx, int oneway, const char *s, char *r, size_t n)
{
    int right = (ctx->rank + 1) % ctx->p, left = (ctx->rank + ctx->p - 1) % ctx->p;
    while (n > 0) {
        int k = (n > (size_t)INT_MAX) ? INT_MAX : (int)n;
        int rc = MPI_SUCCESS;
        if (!oneway) {
            rc = MPI_Sendrecv(s, k, MPI_BYTE, right, 77, r, k, MPI_BYTE, left, 77, ctx->sync_comm,
                              MPI_STATUS_IGNORE);
        } else if ((ctx->rank % 2) == 0 && ctx->rank + 1 < ctx->p) {
            rc = MPI_Send(s, k, MPI_BYTE, ctx->rank + 1, 77, ctx->sync_comm);
        } else if ((ctx->rank % 2) == 1) {
            rc = MPI_Recv(r, k, MPI_BYTE, ctx->rank - 1, 77, ctx->sync_comm, MPI_STATUS_IGNORE);
        }
        if (rc != MPI_SUCCESS) {
            return rc;
        }
        s += k;
        r += k;
        n -= (size_t)k;
    }
    return MPI_SUCCESS;
}

/* The fastest of ROOF_REPS runs of one part, the slowest rank's time of
 * each (part 0: the ring; 1: the reduce; 2: the copy). */
static int time_part(const struct bench_ctx *ctx, const struct bench_point *pt, int part,
                     size_t bytes, char *a, char *b, double *best_ns)
{
    MPI_Datatype dt = bench_mpi_dtype(pt->dtype);
    MPI_Op op = bench_mpi_op(pt->op);
    size_t esize = bench_dtype_size(pt->dtype);
    size_t elems = bytes / esize;
    int kernel = cg_reduce_kernel_index(dt, op);
    int rc = MPI_SUCCESS;

    *best_ns = 0.0;
    if (bytes == 0) {
        return MPI_SUCCESS;
    }
    *best_ns = INFINITY;
    for (int k = 0; k < ROOF_REPS + 1; k++) { /* the first run faults the pages in */
        double t = 0.0;
        if ((rc = bench_sync(ctx)) != MPI_SUCCESS) {
            return rc;
        }
        double t0 = now_ns();
        if (part == 0) {
            rc = ring_bytes(ctx, one_way(pt->coll), a, b, bytes);
        } else if (part == 1 && kernel >= 0) {
            cg_reduce_kernel_run(kernel, b, a, elems);
        } else if (part == 1) {
            for (size_t done = 0; done < elems && rc == MPI_SUCCESS;) {
                int n = (elems - done > (size_t)INT_MAX) ? INT_MAX : (int)(elems - done);
                rc = MPI_Reduce_local(a + (done * esize), b + (done * esize), n, dt, op);
                done += (size_t)n;
            }
        } else {
            memcpy(b, a, bytes);
        }
        t = now_ns() - t0;
        if (rc != MPI_SUCCESS) {
            return rc;
        }
        if ((rc = hx_allreduce(ctx, &t, 1, HX_DOUBLE, HX_MAX)) != MPI_SUCCESS) {
            return rc;
        }
        if (k > 0 && t < *best_ns) {
            *best_ns = t;
        }
    }
    return MPI_SUCCESS;
}

/* Whole elements in `bytes`, rounded up (with slack for 2(p-1)/p's rounding). */
static size_t elems_of(double bytes, size_t esize)
{
    return (size_t)ceil((bytes / (double)esize) - 1e-9);
}

int bench_roof_measure(const struct bench_ctx *ctx, const struct bench_point *pt,
                       struct bench_roof *roof)
{
    struct roof_key key = { pt->coll, pt->count, pt->dtype, pt->op };
    double size_B = (double)bench_size_B(ctx->p, pt);
    double factor = bench_busbw_factor(ctx->p, pt->coll);
    size_t esize = bench_dtype_size(pt->dtype);
    int rc = MPI_SUCCESS;

    memset(roof, 0, sizeof(*roof));
    if (pt->coll == CG_COLL_BARRIER || !isfinite(factor)) {
        return MPI_SUCCESS; /* no data: no roofline */
    }
    /* Why field by field: every rank must find the same entries (a rank
     * that measures alone waits for the others forever), and memcmp would
     * compare the struct's padding too. */
    for (int i = 0; i < roof_cached && size_B < ROOF_EACH_B; i++) {
        const struct roof_key *k = &roof_cache[i].key;
        if (k->coll == key.coll && k->count == key.count && k->dtype == key.dtype &&
            k->op == key.op) {
            *roof = roof_cache[i].roof;
            return MPI_SUCCESS;
        }
    }
    /* Whole elements (a rank moves or reduces whole ones: rounded up), so
     * that the reduce runs on real data. */
    size_t recv_B = (ctx->p > 1) ? elems_of(factor * size_B, esize) * esize : 0;
    size_t reduce_B = elems_of(reduce_factor(pt->coll, ctx->p) * size_B, esize) * esize;
    size_t copy_B = elems_of(copy_factor(pt->coll, ctx->p) * size_B, esize) * esize;
    size_t room = recv_B;
    room = (reduce_B > room) ? reduce_B : room;
    room = (copy_B > room) ? copy_B : room;
    /* Mapped like the point's buffers (bench_buf_map), so that neither
     * moves the other's placement. */
    char *a = bench_buf_map(room), *b = bench_buf_map(room);
    int bad = (a == NULL || b == NULL);
    if (hx_allreduce(ctx, &bad, 1, HX_INT, HX_MAX) != MPI_SUCCESS || bad) {
        bench_buf_unmap(a, room);
        bench_buf_unmap(b, room);
        return MPI_ERR_NO_MEM;
    }
    /* The collective's own input values (bench_value: this rank's, position
     * by position), which the point's check already combines without
     * overflow traps or NaNs, so that the kernel sees the data the
     * collective's does. Why written at all: a fresh page never written
     * maps the kernel's one shared zero page, always in cache; the limit
     * then put a 64 MiB allreduce's reduce at 1.5 ms where the collective's
     * kernel over its own buffers takes 6.5 ms (harness/measurements/
     * 2026-12-06-speed-quiet.md). */
    for (size_t i = 0; i < room / esize; i++) {
        bench_value(pt, ctx->p, ctx->rank, i, a + (i * esize));
        bench_value(pt, ctx->p, (ctx->rank + 1) % ctx->p, i, b + (i * esize));
    }
    double t[3] = { 0.0, 0.0, 0.0 };
    size_t bytes[3] = { recv_B, reduce_B, copy_B };
    for (int part = 0; part < 3 && rc == MPI_SUCCESS; part++) {
        rc = time_part(ctx, pt, part, bytes[part], a, b, &t[part]);
    }
    bench_buf_unmap(a, room);
    bench_buf_unmap(b, room);
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    roof->measured = 1;
    roof->recv_B = (double)recv_B;
    roof->reduce_B = (double)reduce_B;
    roof->copy_B = (double)copy_B;
    roof->p2p_ns = t[0];
    roof->reduce_ns = t[1];
    roof->copy_ns = t[2];
    roof->limit_ns = t[0] + t[1] + t[2];
    roof->overlap_limit_ns = fmax(t[0], t[1] + t[2]);
    if (roof_cached < ROOF_CACHE && size_B < ROOF_EACH_B) {
        roof_cache[roof_cached].key = key;
        roof_cache[roof_cached].roof = *roof;
        roof_cached++;
    }
    return MPI_SUCCESS;
}
