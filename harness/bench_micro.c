/* bench_micro.c - the harness's micro-benchmarks (harness/README.md,
 * "Micro-benchmarks"), which bench checks, times and records like any
 * other point (kind "micro"):
 *
 *   micro:lane_pattern(k=K)      on a regular communicator of n ranks per
 *       node, the ranks of local index 0..K-1 of every node each send their
 *       part of c elements (c/K, the first ones one more when K does not
 *       divide c) to the rank of the same local index on the next node
 *       (node + 1 mod nodes) and receive the previous node's: does a node
 *       move c elements K times as fast with K lanes?
 *   micro:multi_collective(k=K)  the lane communicators of local index
 *       0..K-1 run the point's native collective at the same time, the
 *       other lanes idle: how many concurrent collectives cost no more
 *       than one?
 *
 * Both need the topology regular (runtime/topo.c: CG_PPN, or shared
 * memory) and K <= ranks per node. The data are distinct per rank and
 * position (bench_data.c; a lane's collective's inputs are salted with its
 * local index, so that lanes differ too), every receive buffer is poisoned
 * before the checked call, and the check compares bit for bit with the
 * formula. Each repetition's time is the slowest rank's, idle ranks
 * included (their time is about 0).
 */
#define _POSIX_C_SOURCE 200809L
#include "bench.h"

#include <string.h>

#include "cg.h"

const char *bench_coll_name(enum cg_coll coll)
{
    return (coll == BENCH_COLL_LANE_PATTERN) ? "lane_pattern" : cg_coll_name(coll);
}

int bench_micro_prepare(const struct bench_ctx *ctx, const struct bench_point *pt,
                        struct bench_micro_run *m, char *reason, size_t len)
{
    const struct cg_topo *t = ctx->topo;

    memset(m, 0, sizeof(*m));
    if (t == NULL) {
        bench_fmt(reason, len, "%s needs the node and lane structure, which could not be found: %s",
                  pt->impl, ctx->topo_error);
        return -1;
    }
    if (!t->regular) {
        bench_fmt(reason, len,
                  "%s needs a regular topology (every node holding the same number of "
                  "consecutive ranks); here %s",
                  pt->impl, t->why);
        return -1;
    }
    if (pt->lanes > t->ppn) {
        bench_fmt(reason, len, "%s takes %d ranks of each node, and the nodes hold %d (%s)",
                  pt->impl, pt->lanes, t->ppn, t->source);
        return -1;
    }
    m->idle = (t->local >= pt->lanes);
    if (pt->micro == BENCH_MICRO_LANE_PATTERN) {
        size_t c = pt->count;
        size_t k = (size_t)pt->lanes;
        size_t l = (size_t)t->local;
        if (!m->idle) {
            m->first = (c * l) / k;
            m->n = ((c * (l + 1)) / k) - m->first;
            m->to = (((t->node + 1) % t->nnodes) * t->ppn) + t->local;
            m->from = (((t->node + t->nnodes - 1) % t->nnodes) * t->ppn) + t->local;
        }
        return 0;
    }
    /* multi_collective: the lane is the communicator, its ranks the nodes. */
    if (pt->root >= t->nnodes) {
        bench_fmt(reason, len, "%s: root %d is not a rank of a lane (%d ranks, one per node)",
                  pt->impl, pt->root, t->nnodes);
        return -1;
    }
    m->lane = *ctx;
    m->lane.comm = t->lane_comm;
    m->lane.rank = t->node;
    m->lane.p = t->nnodes;
    m->lpt = *pt;
    m->lpt.salt = (uint64_t)t->local + 1;
    return 0;
}

int bench_lane_exchange(const struct bench_ctx *ctx, const struct bench_point *pt,
                        const struct bench_micro_run *m, const void *send, void *out)
{
    MPI_Datatype dt = bench_mpi_dtype(pt->dtype);

    return MPI_Sendrecv(send, (int)m->n, dt, m->to, 0, out, (int)m->n, dt, m->from, 0, ctx->comm,
                        MPI_STATUS_IGNORE);
}

void bench_lane_input(const struct bench_ctx *ctx, const struct bench_point *pt,
                      const struct bench_micro_run *m, void *dst)
{
    unsigned char *d = dst;
    size_t size = bench_dtype_size(pt->dtype);

    for (size_t i = 0; i < m->n; i++) {
        bench_value(pt, ctx->p, ctx->rank, m->first + i, d + (i * size));
    }
}

void bench_lane_expected(const struct bench_ctx *ctx, const struct bench_point *pt,
                         const struct bench_micro_run *m, void *dst)
{
    unsigned char *d = dst;
    size_t size = bench_dtype_size(pt->dtype);

    /* The sender has this rank's local index, so the same part. */
    for (size_t i = 0; i < m->n; i++) {
        bench_value(pt, ctx->p, m->from, m->first + i, d + (i * size));
    }
}
