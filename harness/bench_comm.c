/* bench_comm.c - the harness's own collectives (agreements, the slowest
 * rank per repetition, the stop decision, gathers), over point-to-point on
 * ctx->sync_comm.
 *
 * Why not MPI_Allreduce and friends: a job's knobs force the library's
 * algorithm for every call of that collective in the process, the
 * harness's included. Forcing MPICH's allreduce to reduce_scatter_allgather
 * with MPIR_CVAR_COLLECTIVE_FALLBACK=error made the harness's own 1-element
 * MPI_Allreduce fail (it needs count >= pof2(p)), and a forced algorithm
 * would otherwise also decide how the harness's traffic between
 * repetitions behaves. Binomial trees of MPI_Send and MPI_Recv do not
 * depend on any knob; every rank calls these in the same order, and each
 * operation has its own tag, so messages match by MPI's non-overtaking
 * order.
 */
#include "bench.h"

#include <stdlib.h>
#include <string.h>

#define TAG_REDUCE 7101 /* reduce toward rank 0 */
#define TAG_BCAST 7102  /* broadcast from the root */
#define TAG_GATHER 7103 /* gather to rank 0 */

static size_t type_size(enum hx_type t)
{
    return (t == HX_INT) ? sizeof(int) : 8;
}

static MPI_Datatype type_mpi(enum hx_type t)
{
    switch (t) {
    case HX_U64:
        return MPI_UINT64_T;
    case HX_INT:
        return MPI_INT;
    case HX_DOUBLE:
        return MPI_DOUBLE;
    }
    return MPI_DATATYPE_NULL;
}

/* acc[i] = acc[i] op in[i]. */
static void combine(void *acc, const void *in, int n, enum hx_type t, enum hx_op op)
{
    for (int i = 0; i < n; i++) {
        switch (t) {
        case HX_U64: {
            uint64_t *a = (uint64_t *)acc + i;
            uint64_t b = ((const uint64_t *)in)[i];
            *a = (op == HX_SUM) ? *a + b : (op == HX_MAX) ? ((b > *a) ? b : *a)
                                                          : ((b < *a) ? b : *a);
            break;
        }
        case HX_INT: {
            int *a = (int *)acc + i;
            int b = ((const int *)in)[i];
            *a = (op == HX_SUM) ? *a + b : (op == HX_MAX) ? ((b > *a) ? b : *a)
                                                          : ((b < *a) ? b : *a);
            break;
        }
        case HX_DOUBLE: {
            double *a = (double *)acc + i;
            double b = ((const double *)in)[i];
            /* MAX keeps an infinity (an unbounded error) once it is seen. */
            *a = (op == HX_SUM) ? *a + b : (op == HX_MAX) ? ((b > *a) ? b : *a)
                                                          : ((b < *a) ? b : *a);
            break;
        }
        }
    }
}

int hx_bcast(const struct bench_ctx *ctx, void *buf, int bytes, int root)
{
    int p = ctx->p;
    int vr = (ctx->rank - root + p) % p;
    int mask = 1;
    int rc;

    for (; mask < p; mask <<= 1) {
        if ((vr & mask) != 0) {
            rc = MPI_Recv(buf, bytes, MPI_BYTE, (vr - mask + root) % p, TAG_BCAST, ctx->sync_comm,
                          MPI_STATUS_IGNORE);
            if (rc != MPI_SUCCESS) {
                return rc;
            }
            break;
        }
    }
    for (mask >>= 1; mask > 0; mask >>= 1) {
        if (vr + mask < p) {
            rc = MPI_Send(buf, bytes, MPI_BYTE, (vr + mask + root) % p, TAG_BCAST, ctx->sync_comm);
            if (rc != MPI_SUCCESS) {
                return rc;
            }
        }
    }
    return MPI_SUCCESS;
}

int hx_reduce(const struct bench_ctx *ctx, void *buf, int n, enum hx_type t, enum hx_op op)
{
    size_t bytes = (size_t)n * type_size(t);
    void *tmp = malloc((bytes > 0) ? bytes : 1);
    int rc = MPI_SUCCESS;

    if (tmp == NULL) {
        return MPI_ERR_NO_MEM;
    }
    /* Binomial reduce to rank 0: children are rank + 2^k below its lowest
     * set bit. */
    for (int mask = 1; mask < ctx->p; mask <<= 1) {
        if ((ctx->rank & mask) != 0) {
            rc = MPI_Send(buf, n, type_mpi(t), ctx->rank - mask, TAG_REDUCE, ctx->sync_comm);
            break;
        }
        if (ctx->rank + mask < ctx->p) {
            rc = MPI_Recv(tmp, n, type_mpi(t), ctx->rank + mask, TAG_REDUCE, ctx->sync_comm,
                          MPI_STATUS_IGNORE);
            if (rc != MPI_SUCCESS) {
                break;
            }
            combine(buf, tmp, n, t, op);
        }
    }
    free(tmp);
    return rc;
}

int hx_allreduce(const struct bench_ctx *ctx, void *buf, int n, enum hx_type t, enum hx_op op)
{
    int rc = hx_reduce(ctx, buf, n, t, op);

    if (rc != MPI_SUCCESS) {
        return rc;
    }
    return hx_bcast(ctx, buf, (int)((size_t)n * type_size(t)), 0);
}

int hx_gather(const struct bench_ctx *ctx, const void *mine, int bytes, void *out)
{
    size_t b = (size_t)bytes;
    unsigned char *acc = malloc(((size_t)ctx->p * b) + 1);
    int have = 1; /* blocks in acc: this rank's subtree so far, in rank order */
    int rc = MPI_SUCCESS;

    if (acc == NULL) {
        return MPI_ERR_NO_MEM;
    }
    memcpy(acc, mine, b);
    /* Binomial gather: the subtree of rank r is ranks r .. r + 2^k - 1, so
     * blocks arrive already in rank order. */
    for (int mask = 1; mask < ctx->p; mask <<= 1) {
        if ((ctx->rank & mask) != 0) {
            rc = MPI_Send(acc, have * bytes, MPI_BYTE, ctx->rank - mask, TAG_GATHER,
                          ctx->sync_comm);
            break;
        }
        if (ctx->rank + mask < ctx->p) {
            int n = ctx->p - (ctx->rank + mask);
            n = (n < mask) ? n : mask;
            rc = MPI_Recv(acc + ((size_t)have * b), n * bytes, MPI_BYTE, ctx->rank + mask,
                          TAG_GATHER, ctx->sync_comm, MPI_STATUS_IGNORE);
            if (rc != MPI_SUCCESS) {
                break;
            }
            have += n;
        }
    }
    if (rc == MPI_SUCCESS && ctx->rank == 0 && out != NULL) {
        memcpy(out, acc, (size_t)ctx->p * b);
    }
    free(acc);
    return rc;
}
