/* gpu_point.c - one point on the GPU: device buffers, the call (NCCL's
 * collective, or a generated GPU collective over the CUDA runtime), the
 * check against the host reference, and the timed repetitions.
 *
 * The steps are bench.c's, on device buffers:
 *  1. check: inputs unique per rank and position (bench_data.c: exact in
 *     every order of reduction), the output poisoned (0xA5 bytes), one call,
 *     the result copied back and compared with the exact result computed on
 *     the host from the known inputs ("reference": "formula"; there is no
 *     trusted GPU collective to compare with: NCCL is under test too).
 *     Integers must match exactly; float and double within a relative
 *     tolerance (counted apart when they differ at all). A wrong result is
 *     recorded as failed_check and not timed;
 *  2. timing: `warmup` calls, then repetitions of (synchronise the ranks on
 *     the host: the job's barrier; record a CUDA event on the stream; the
 *     call; another event; wait for it): the GPU time between the events,
 *     the slowest rank's per repetition, with bench's stopping rule (RSE of
 *     the median, budget, min and max repetitions), decided by rank 0.
 * Every failure is agreed on by all ranks (bench_comm.c's point-to-point
 * collectives) before the next collective step, so that no rank waits in a
 * call the others skipped.
 */
#define _POSIX_C_SOURCE 200809L
#include "bench_cuda.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Relative tolerances of the float and double comparisons. The inputs make
 * every result exact, so any difference is counted (check.elements_inexact)
 * even when it is within these. float16 and bfloat16 get 0 (the choice in
 * bc_run_point): their results are exact too (bench_data.c), and with 11
 * and 8 significand bits any tolerance would be whole units in the last
 * place, wide enough to hide a wrong sum; only a zero of the other sign
 * then passes, as inexact. */
#define TOL_FLOAT 1e-5
#define TOL_DOUBLE 1e-12

static int g_rank; /* for messages */

/* The GPU collectives, their names and NCCL's: the table's (cg_colls.h). */
int bc_coll_supported(enum cg_coll coll)
{
    return (int)coll >= 0 && coll < CG_COLL_COUNT_ && cg_colls[coll].nccl != NULL;
}

const char *bc_coll_name(enum cg_coll coll)
{
    return ((int)coll >= 0 && coll < CG_COLL_COUNT_) ? cg_colls[coll].name : "?";
}

const char *bc_nccl_func_name(enum cg_coll coll)
{
    return ((int)coll >= 0 && coll < CG_COLL_COUNT_) ? cg_colls[coll].nccl_log : NULL;
}

static cg_cu_dtype cu_dtype(enum bench_dtype t)
{
    switch (t) {
    case BENCH_INT32:
        return CG_CU_INT32;
    case BENCH_INT64:
        return CG_CU_INT64;
    case BENCH_FLOAT:
        return CG_CU_FLOAT32;
    case BENCH_FLOAT16:
        return CG_CU_FLOAT16;
    case BENCH_BFLOAT16:
        return CG_CU_BFLOAT16;
    case BENCH_DOUBLE:
        break;
    }
    return CG_CU_FLOAT64;
}

static cg_cu_op cu_op(enum bench_op op)
{
    switch (op) {
    case BENCH_SUM:
        return CG_CU_SUM;
    case BENCH_PROD:
        return CG_CU_PROD;
    case BENCH_MIN:
        return CG_CU_MIN;
    case BENCH_MAX:
        break;
    }
    return CG_CU_MAX;
}

/* ---- errors ------------------------------------------------------------------ */

/* "rank R: harness/gpu/gpu_point.c:LINE: cudaXxx: <message>", as runtime/cuda. */
static void cuda_fail(char *why, size_t len, cudaError_t e, int line, const char *call)
{
    (void)cudaGetLastError(); /* clears a non-sticky error */
    bench_fmt(why, len, "rank %d: harness/gpu/gpu_point.c:%d: %.*s: %s", g_rank, line,
              (int)strcspn(call, "("), call, cudaGetErrorString(e));
}

/* Checks a CUDA call: on failure, `why` says so, `rc` is -1 and control goes
 * to the enclosing function's `out:`. */
#define BC_CUDA(call)                                                    \
    do {                                                                 \
        cudaError_t bc_e_ = (call);                                      \
        if (bc_e_ != cudaSuccess) {                                      \
            cuda_fail(why, whylen, bc_e_, __LINE__, #call);              \
            rc = -1;                                                     \
            goto out;                                                    \
        }                                                                \
    } while (0)

#ifndef CG_CUDA_NO_NCCL
static void nccl_fail(char *why, size_t len, ncclResult_t r, ncclComm_t comm, const char *call)
{
    const char *last = ncclGetLastError(comm);
    bench_fmt(why, len, "rank %d: %s: %s%s%s%s", g_rank, call, ncclGetErrorString(r),
              (last != NULL && last[0] != '\0') ? " (" : "", (last != NULL) ? last : "",
              (last != NULL && last[0] != '\0') ? ")" : "");
}
#endif

/* Collective: whether any rank has local_bad; if so, reason gets the lowest
 * such rank's local_reason (bench.c's agree). */
int bc_agree(const struct bc_ctx *c, int local_bad, const char *local_reason, char *reason)
{
    int first = local_bad ? c->base.rank : c->base.p;
    char buf[BENCH_REASON_LEN];

    if (hx_allreduce(&c->base, &first, 1, HX_INT, HX_MIN) != MPI_SUCCESS) {
        snprintf(reason, BENCH_REASON_LEN, "the harness's own allreduce failed");
        return 1;
    }
    if (first == c->base.p) {
        return 0;
    }
    memset(buf, 0, sizeof(buf));
    if (c->base.rank == first) {
        snprintf(buf, sizeof(buf), "%s", local_reason);
    }
    if (hx_bcast(&c->base, buf, (int)sizeof(buf), first) != MPI_SUCCESS) {
        snprintf(reason, BENCH_REASON_LEN, "the harness's own bcast failed");
        return 1;
    }
    snprintf(reason, BENCH_REASON_LEN, "%s", buf);
    return 1;
}

/* ---- NCCL's communicator and the runtime's transport ----------------------------- */

#ifndef CG_CUDA_NO_NCCL
/* What each rank tells the others before NCCL is asked: where its GPU is. */
struct gpu_where {
    char host[MPI_MAX_PROCESSOR_NAME + 1];
    char bus[32];
};
#endif

/* Collective, once per job (at the first native point): the NCCL
 * communicator of all ranks, one per GPU. Why the check first: NCCL refuses
 * two ranks on one GPU ("Duplicate GPU detected") and may leave the others
 * waiting; saying so on every rank is clearer. */
static int nccl_ready(struct bc_ctx *c)
{
    if (c->nccl_state != 0) {
        return c->nccl_state > 0;
    }
#ifdef CG_CUDA_NO_NCCL
    c->nccl_state = -1;
    snprintf(c->nccl_why, sizeof(c->nccl_why),
             "bench_cuda was built without NCCL (CG_CUDA_NO_NCCL: runtime/cuda/flags.sh found "
             "no nccl.h and libnccl.so.2): no native point can run");
    return 0;
#else
    {
        struct gpu_where me;
        struct gpu_where *all = NULL;
        char local[BENCH_REASON_LEN] = "";
        char why[BENCH_REASON_LEN] = "";
        size_t whylen = sizeof(why);
        ncclUniqueId id;
        ncclResult_t r;
        int len = 0;
        int rc = 0;
        int bad = 0;

        memset(&me, 0, sizeof(me));
        memset(&id, 0, sizeof(id));
        if (MPI_Get_processor_name(me.host, &len) != MPI_SUCCESS) {
            snprintf(me.host, sizeof(me.host), "unknown");
        }
        {
            cudaError_t e = cudaDeviceGetPCIBusId(me.bus, (int)sizeof(me.bus), c->device);
            if (e != cudaSuccess) {
                cuda_fail(local, sizeof(local), e, __LINE__, "cudaDeviceGetPCIBusId");
                bad = 1;
            }
        }
        if (c->base.rank == 0) {
            all = calloc((size_t)c->base.p, sizeof(*all));
            if (all == NULL) {
                snprintf(local, sizeof(local), "rank 0: out of memory");
                bad = 1;
            }
        }
        if (hx_gather(&c->base, &me, (int)sizeof(me), all) != MPI_SUCCESS) {
            snprintf(local, sizeof(local), "the harness's own gather failed");
            bad = 1;
        }
        if (c->base.rank == 0 && !bad) {
            for (int a = 0; a < c->base.p && !bad; a++) {
                for (int b2 = a + 1; b2 < c->base.p && !bad; b2++) {
                    if (strcmp(all[a].host, all[b2].host) == 0 &&
                        strcmp(all[a].bus, all[b2].bus) == 0) {
                        bench_fmt(local, sizeof(local),
                                  "NCCL refuses two ranks on one GPU (\"Duplicate GPU "
                                  "detected\"): ranks %d and %d both use GPU %s on %s; native "
                                  "NCCL points need one rank per GPU (generated points run "
                                  "over the CUDA runtime's IPC transport instead)",
                                  a, b2, all[a].bus, all[a].host);
                        bad = 1;
                    }
                }
            }
        }
        free(all);
        if (bc_agree(c, bad, local, c->nccl_why)) {
            c->nccl_state = -1;
            return 0;
        }
        if (c->base.rank == 0) {
            r = ncclGetUniqueId(&id);
            if (r != ncclSuccess) {
                nccl_fail(local, sizeof(local), r, NULL, "ncclGetUniqueId");
                bad = 1;
            }
        }
        if (hx_bcast(&c->base, &id, (int)sizeof(id), 0) != MPI_SUCCESS) {
            snprintf(local, sizeof(local), "the harness's own bcast failed");
            bad = 1;
        }
        if (bc_agree(c, bad, local, c->nccl_why)) {
            c->nccl_state = -1;
            return 0;
        }
        BC_CUDA(cudaSetDevice(c->device));
        r = ncclCommInitRank(&c->nccl, c->base.p, id, c->base.rank);
        if (r != ncclSuccess) {
            nccl_fail(why, whylen, r, NULL, "ncclCommInitRank");
            c->nccl = NULL;
            rc = -1;
        }
    out:
        if (bc_agree(c, rc != 0, why, c->nccl_why)) {
            if (c->nccl != NULL) {
                (void)ncclCommAbort(c->nccl); /* the others failed: nothing to wait for */
                c->nccl = NULL;
            }
            c->nccl_state = -1;
            return 0;
        }
        c->nccl_state = 1;
        return 1;
    }
#endif
}

/* Collective: the runtime's transport on base.comm (made at the first call:
 * IPC when every rank is on one node, NCCL otherwise, unless
 * CG_CUDA_TRANSPORT says). 0, or -1 with reason (every rank). */
static int transport_ready(struct bc_ctx *c, char *reason)
{
    char local[BENCH_REASON_LEN] = "";
    int t = -1;
    int rc;

    if (c->transport >= 0) {
        return 0;
    }
    cg_set_error("%s", "");
    rc = cg_cu_comm_transport(c->base.comm, &t);
    if (rc != MPI_SUCCESS) {
        bench_fmt(local, sizeof(local), "the CUDA runtime's context (cg_cu_comm_transport): %s",
                  cg_last_error()[0] != '\0' ? cg_last_error() : "failed");
    }
    if (bc_agree(c, rc != MPI_SUCCESS, local, reason)) {
        return -1;
    }
    c->transport = t;
    return 0;
}

/* ---- buffers ----------------------------------------------------------------------- */

struct bc_bufs {
    unsigned char *h_send;  /* this rank's input (bcast: the root's data, at the root) */
    unsigned char *h_ref;   /* the exact result (res_elems) */
    unsigned char *h_res;   /* the result read back (res_elems) */
    unsigned char *d_send;  /* device input */
    unsigned char *d_out;   /* device output (and in-place input) */
    size_t in_elems;        /* elements of the input */
    size_t out_elems;       /* elements of d_out */
    size_t res_elems;       /* elements of the result */
    size_t res_off;         /* where the result starts in d_out, elements */
    size_t ip_off;          /* in place: where the input goes in d_out, elements */
    size_t ip_elems;        /* in place: elements of the input there (0: not in place) */
    int pooled;             /* d_send and d_out are the job's (not freed here) */
};

/* Element counts (bench_elems: from the table, as bench's); -1 when they
 * overflow. */
static int size_bufs(const struct bc_ctx *c, const struct bench_point *pt, const struct bc_run *run,
                     struct bc_bufs *b)
{
    struct bench_elems e;
    int in_place = pt->in_place && cg_colls[pt->coll].in_place != CG_IN_PLACE_NONE;

    if (bench_elems(pt, c->base.p, c->base.rank, &e) != 0) {
        return -1;
    }
    b->in_elems = e.in;
    b->out_elems = e.out;
    b->res_elems = e.res;
    b->res_off = 0;
    b->ip_off = in_place ? bench_in_place_off(pt, c->base.rank) : 0;
    b->ip_elems = in_place ? e.in : 0;
    /* NCCL's in-place reduce-scatter leaves rank r's block where it was,
     * recvbuff = sendbuff + r * count; MPI's (and the generated code's
     * CG_CU_IN_PLACE) at the start. */
    if (pt->coll == CG_COLL_REDUCE_SCATTER_BLOCK && in_place && run->algo == NULL) {
        b->res_off = (size_t)c->base.rank * pt->count;
    }
    return 0;
}

static void free_bufs(struct bc_bufs *b)
{
    free(b->h_send);
    free(b->h_ref);
    free(b->h_res);
    if (b->d_send != NULL && !b->pooled) {
        (void)cudaFree(b->d_send);
    }
    if (b->d_out != NULL && !b->pooled) {
        (void)cudaFree(b->d_out);
    }
    (void)cudaGetLastError();
    memset(b, 0, sizeof(*b));
}

/* Collective, once: device buffers for the job's largest point. Why once
 * rather than per point: with the IPC transport, peers keep the sender's
 * buffers open (runtime/cuda/ipc.c caches them), and CUDA leaves freeing an
 * exported buffer before every importer closed it undefined. Failing (too
 * large for the device) leaves the pool empty: points then allocate their
 * own. */
static void make_pool(struct bc_ctx *c)
{
    const struct bench_job *job = c->base.job;
    size_t send_max = 0;
    size_t out_max = 0;
    char ignored[BENCH_REASON_LEN];
    int bad = 0;

    if (c->pool_tried) {
        return;
    }
    c->pool_tried = 1;
    for (int i = 0; i < job->npoints; i++) {
        const struct bench_point *pt = &job->points[i];
        struct bc_bufs b;
        struct bc_run none;
        size_t size = bench_dtype_size(pt->dtype);
        memset(&b, 0, sizeof(b));
        memset(&none, 0, sizeof(none));
        if (!bc_coll_supported(pt->coll) || size_bufs(c, pt, &none, &b) != 0) {
            continue;
        }
        send_max = (b.in_elems * size > send_max) ? b.in_elems * size : send_max;
        out_max = (b.out_elems * size > out_max) ? b.out_elems * size : out_max;
    }
    send_max = (send_max > 0) ? send_max : 256;
    out_max = (out_max > 0) ? out_max : 256;
    if (cudaSetDevice(c->device) != cudaSuccess ||
        cudaMalloc((void **)&c->pool_send, send_max) != cudaSuccess ||
        cudaMalloc((void **)&c->pool_out, out_max) != cudaSuccess) {
        (void)cudaGetLastError();
        bad = 1;
    }
    if (bc_agree(c, bad, "", ignored)) {
        if (c->pool_send != NULL) {
            (void)cudaFree(c->pool_send);
        }
        if (c->pool_out != NULL) {
            (void)cudaFree(c->pool_out);
        }
        (void)cudaGetLastError();
        c->pool_send = NULL;
        c->pool_out = NULL;
        return;
    }
    c->pool_send_bytes = send_max;
    c->pool_out_bytes = out_max;
}

/* Puts the in-place input into d_out (after poisoning it when asked), on
 * the stream, and waits for it. */
static int prepare_out(struct bc_ctx *c, const struct bench_point *pt, struct bc_bufs *b,
                       int poison, char *why, size_t whylen)
{
    size_t size = bench_dtype_size(pt->dtype);
    int rc = 0;

    if (poison) {
        BC_CUDA(cudaMemsetAsync(b->d_out, BC_POISON, b->out_elems * size, c->stream));
    }
    if (b->ip_elems > 0) {
        BC_CUDA(cudaMemcpyAsync(b->d_out + (b->ip_off * size), b->d_send, b->ip_elems * size,
                                cudaMemcpyDeviceToDevice, c->stream));
    }
    BC_CUDA(cudaStreamSynchronize(c->stream));
out:
    return rc;
}

/* ---- the call ---------------------------------------------------------------------- */

/* Enqueues the implementation once on c->stream. 0, or -1 with why. */
static int call_impl(struct bc_ctx *c, const struct bench_point *pt, const struct bc_run *run,
                     const struct bc_bufs *b, char *why, size_t whylen)
{
    size_t size = bench_dtype_size(pt->dtype);
    unsigned char *out = b->d_out;
    const unsigned char *send = b->d_send;
    int in_place = pt->in_place && cg_colls[pt->coll].in_place != CG_IN_PLACE_NONE;

    if (run->algo != NULL) {
        const struct cg_cu_algo *a = run->algo;
        cg_cu_dtype dt = cu_dtype(pt->dtype);
        cg_cu_op op = bench_coll_reduces(pt->coll) ? cu_op(pt->op) : CG_CU_OP_NONE;
        const void *sb = in_place ? CG_CU_IN_PLACE : (const void *)send;
        int rc = MPI_ERR_OTHER;

        cg_set_error("%s", "");
        switch (pt->coll) {
        case CG_COLL_ALLREDUCE:
            rc = a->allreduce(sb, out, pt->count, dt, op, c->base.comm, c->stream);
            break;
        case CG_COLL_ALLGATHER:
            rc = a->allgather(sb, out, pt->count, dt, c->base.comm, c->stream);
            break;
        case CG_COLL_REDUCE_SCATTER_BLOCK:
            rc = a->reduce_scatter_block(sb, out, pt->count, dt, op, c->base.comm, c->stream);
            break;
        case CG_COLL_BCAST:
            rc = a->bcast(send, out, pt->count, dt, pt->root, c->base.comm, c->stream);
            break;
        case CG_COLL_ALLTOALL:
            rc = a->alltoall(sb, out, pt->count, dt, c->base.comm, c->stream);
            break;
        default:
            break;
        }
        if (rc != MPI_SUCCESS) {
            char text[MPI_MAX_ERROR_STRING];
            int tlen = 0;
            if (MPI_Error_string(rc, text, &tlen) != MPI_SUCCESS) {
                snprintf(text, sizeof(text), "error code %d", rc);
            }
            bench_fmt(why, whylen, "%s returned %s on rank %d%s%s%s", pt->impl, text, g_rank,
                      cg_last_error()[0] != '\0' ? " (" : "", cg_last_error(),
                      cg_last_error()[0] != '\0' ? ")" : "");
            return -1;
        }
        return 0;
    }
#ifdef CG_CUDA_NO_NCCL
    (void)size;
    (void)c;
    bench_fmt(why, whylen, "rank %d: built without NCCL", g_rank);
    return -1;
#else
    {
        ncclDataType_t ndt = cg_cu_dtype_to_nccl(cu_dtype(pt->dtype));
        ncclRedOp_t nop = cg_cu_op_to_nccl(cu_op(pt->op));
        size_t blk = pt->count * size;
        size_t me = (size_t)c->base.rank;
        ncclResult_t r = ncclSuccess;
        const char *what = "?";

        switch (pt->coll) {
        case CG_COLL_ALLREDUCE:
            what = "ncclAllReduce";
            r = ncclAllReduce(in_place ? out : send, out, pt->count, ndt, nop, c->nccl, c->stream);
            break;
        case CG_COLL_ALLGATHER:
            what = "ncclAllGather";
            r = ncclAllGather(in_place ? out + (me * blk) : send, out, pt->count, ndt, c->nccl,
                              c->stream);
            break;
        case CG_COLL_REDUCE_SCATTER_BLOCK:
            what = "ncclReduceScatter";
            r = in_place ? ncclReduceScatter(out, out + (me * blk), pt->count, ndt, nop, c->nccl,
                                             c->stream)
                         : ncclReduceScatter(send, out, pt->count, ndt, nop, c->nccl, c->stream);
            break;
        case CG_COLL_BCAST:
            what = "ncclBroadcast";
            r = ncclBroadcast(send, out, pt->count, ndt, pt->root, c->nccl, c->stream);
            break;
        case CG_COLL_ALLTOALL: {
            /* Not in place (bc_run_point skips that). Every send and receive
             * in one group, which ncclGroupEnd launches together. */
            ncclResult_t r2;
            what = "ncclGroupStart";
            r = ncclGroupStart();
            if (r == ncclSuccess) {
                for (int q = 0; q < c->base.p; q++) {
                    r2 = ncclSend(send + ((size_t)q * blk), pt->count, ndt, q, c->nccl, c->stream);
                    if (r2 != ncclSuccess && r == ncclSuccess) {
                        r = r2;
                        what = "ncclSend";
                    }
                    r2 = ncclRecv(out + ((size_t)q * blk), pt->count, ndt, q, c->nccl, c->stream);
                    if (r2 != ncclSuccess && r == ncclSuccess) {
                        r = r2;
                        what = "ncclRecv";
                    }
                }
                r2 = ncclGroupEnd();
                if (r2 != ncclSuccess && r == ncclSuccess) {
                    r = r2;
                    what = "ncclGroupEnd";
                }
            }
            break;
        }
        default:
            r = ncclInvalidArgument;
            break;
        }
        if (r != ncclSuccess) {
            nccl_fail(why, whylen, r, c->nccl, what);
            return -1;
        }
        return 0;
    }
#endif
}

/* ---- check ------------------------------------------------------------------------- */

/* Compares n elements: integers exactly, floats within tol relative to the
 * expected value (both finite; bench_as_double decodes float16 and
 * bfloat16). */
static void compare(enum bench_dtype t, const unsigned char *got, const unsigned char *want,
                    size_t n, double tol, uint64_t *wrong, uint64_t *inexact, double *max_error)
{
    size_t size = bench_dtype_size(t);
    int is_float = (t == BENCH_FLOAT || t == BENCH_DOUBLE || t == BENCH_FLOAT16 ||
                    t == BENCH_BFLOAT16);

    *wrong = 0;
    *inexact = 0;
    *max_error = 0.0;
    if (n == 0 || memcmp(got, want, n * size) == 0) {
        return;
    }
    for (size_t i = 0; i < n; i++) {
        double g, w, e;
        if (memcmp(got + (i * size), want + (i * size), size) == 0) {
            continue;
        }
        g = bench_as_double(t, got + (i * size));
        w = bench_as_double(t, want + (i * size));
        e = fabs(g - w);
        if (!isfinite(e)) {
            e = INFINITY;
        }
        if (is_float && isfinite(g) && isfinite(w) && e <= tol * fabs(w)) {
            (*inexact)++;
        } else {
            (*wrong)++;
        }
        if (e > *max_error) {
            *max_error = e;
        }
    }
}

/* The rank whose result the test hook corrupts (bench.c's CG_BENCH_CORRUPT). */
static int corrupt_here(const struct bc_ctx *c, const struct bc_run *run)
{
    return c->base.corrupt != NULL && run->algo != NULL &&
           strcmp(c->base.corrupt, run->algo->name) == 0 && c->base.rank == c->base.p - 1;
}

static int check_point(struct bc_ctx *c, const struct bench_point *pt, struct bc_bufs *b,
                       struct bc_run *run)
{
    size_t size = bench_dtype_size(pt->dtype);
    char why[BENCH_REASON_LEN] = "";
    size_t whylen = sizeof(why);
    uint64_t sums[3];
    double max_error = 0.0;
    int rc = 0;

    bench_expected(pt, c->base.p, c->base.rank, b->h_ref, b->res_elems);
    rc = prepare_out(c, pt, b, 1, why, whylen);
    if (rc == 0) {
        run->ran = 1;
        rc = call_impl(c, pt, run, b, why, whylen);
    }
    if (rc == 0) {
        BC_CUDA(cudaMemcpyAsync(b->h_res, b->d_out + (b->res_off * size), b->res_elems * size,
                                cudaMemcpyDeviceToHost, c->stream));
        BC_CUDA(cudaStreamSynchronize(c->stream));
    }
out:
    if (bc_agree(c, rc != 0, why, run->reason)) {
        run->status = "error";
        return -1;
    }
    if (corrupt_here(c, run) && b->res_elems > 0) {
        b->h_res[size - 1] ^= 0x40; /* the most significant byte of the first element */
    }
    compare(pt->dtype, b->h_res, b->h_ref, b->res_elems, run->tolerance, &sums[0], &sums[1],
            &max_error);
    sums[2] = (sums[0] > 0);
    if (hx_allreduce(&c->base, sums, 3, HX_U64, HX_SUM) != MPI_SUCCESS ||
        hx_allreduce(&c->base, &max_error, 1, HX_DOUBLE, HX_MAX) != MPI_SUCCESS) {
        run->status = "error";
        snprintf(run->reason, sizeof(run->reason), "the harness's own allreduce failed");
        return -1;
    }
    run->checked = 1;
    run->wrong = sums[0];
    run->inexact = sums[1];
    run->ranks_wrong = (int)sums[2];
    run->max_error = max_error;
    if (run->wrong > 0) {
        run->status = "failed_check";
        bench_fmt(run->reason, sizeof(run->reason),
                  "%llu element%s wrong on %d of %d ranks (max error %g) against the formula "
                  "reference",
                  (unsigned long long)run->wrong, (run->wrong == 1) ? "" : "s", run->ranks_wrong,
                  c->base.p, max_error);
        return -1;
    }
    return 0;
}

/* ---- timing ------------------------------------------------------------------------ */

/* One repetition on this rank: the GPU time of the call, in ns, and when
 * tag_ns is given (tags on) each of the schedule's tags in it: the GPU time
 * between its CUDA events, summed over its pairs in the call. */
static int one_rep(struct bc_ctx *c, const struct bench_point *pt, struct bc_run *run,
                   struct bc_bufs *b, int refresh, uint64_t *ns, uint64_t *tag_ns, char *why,
                   size_t whylen)
{
    float ms = 0.0f;
    int rc = 0;
    int src;

    if (refresh) {
        rc = prepare_out(c, pt, b, 0, why, whylen);
        if (rc != 0) {
            goto out;
        }
    }
    /* The stream is idle here: the begin event fires as soon as it is
     * recorded, after every rank has left the host synchronisation. */
    src = bench_sync(&c->base);
    if (src != MPI_SUCCESS) {
        bench_fmt(why, whylen, "rank %d: the synchronisation failed (MPI error %d)", g_rank, src);
        rc = -1;
        goto out;
    }
    if (tag_ns != NULL) {
        cg_cu_tag_reset();
    }
    BC_CUDA(cudaEventRecord(c->ev_begin, c->stream));
    rc = call_impl(c, pt, run, b, why, whylen);
    if (rc != 0) {
        (void)cudaStreamSynchronize(c->stream);
        goto out;
    }
    BC_CUDA(cudaEventRecord(c->ev_end, c->stream));
    BC_CUDA(cudaEventSynchronize(c->ev_end));
    BC_CUDA(cudaEventElapsedTime(&ms, c->ev_begin, c->ev_end));
    *ns = (ms > 0.0f) ? (uint64_t)llround((double)ms * 1e6) : 0;
    for (int k = 0; tag_ns != NULL && k < run->ntags; k++) {
        uint64_t calls = 0;
        if (cg_cu_tag_read(run->algo->tag_first + k, &tag_ns[k], &calls) != 0) {
            bench_fmt(why, whylen, "rank %d: reading the timing tags failed: %s", g_rank,
                      cg_last_error());
            rc = -1;
            goto out;
        }
    }
out:
    return rc;
}

/* The tags of a generated point, in repetitions of their own after the
 * timed ones (which ran with the tags off: each tag costs two
 * cudaEventRecord calls of host time, which a short GPU collective may
 * wait for). min(n, BC_TAG_REPS) repetitions, tags on; per repetition each
 * tag's slowest rank into run->tag_times. 0, or -1 with the point's error
 * recorded. */
#define BC_TAG_REPS 30
static int tag_point(struct bc_ctx *c, const struct bench_point *pt, struct bc_bufs *b,
                     struct bc_run *run, int refresh)
{
    long reps = (run->n < BC_TAG_REPS) ? run->n : BC_TAG_REPS;
    int nval = 1 + run->ntags; /* max over the ranks: a failure flag, then each tag */
    uint64_t *vals = calloc((size_t)nval, sizeof(uint64_t));
    char why[BENCH_REASON_LEN] = "";
    int bad = (vals == NULL);
    int rc = 0;

    if (c->base.rank == 0) {
        run->tag_times = calloc((size_t)reps * (size_t)run->ntags, sizeof(uint64_t));
        bad = bad || run->tag_times == NULL;
    }
    if (bc_agree(c, bad, "out of memory for the tags", run->reason)) {
        run->status = "error";
        free(vals);
        return -1;
    }
    cg_cu_tag_enable(1);
    for (long t = 0; t < reps; t++) {
        uint64_t ns = 0;
        memset(vals, 0, (size_t)nval * sizeof(uint64_t));
        rc = one_rep(c, pt, run, b, refresh, &ns, vals + 1, why, sizeof(why));
        vals[0] = (rc != 0);
        if (hx_allreduce(&c->base, vals, nval, HX_U64, HX_MAX) != MPI_SUCCESS) {
            run->status = "error";
            snprintf(run->reason, sizeof(run->reason), "the harness's own allreduce failed");
            break;
        }
        if (vals[0] != 0) {
            bc_agree(c, rc != 0, why, run->reason);
            run->status = "error";
            break;
        }
        if (c->base.rank == 0) {
            memcpy(run->tag_times + ((size_t)t * (size_t)run->ntags), vals + 1,
                   (size_t)run->ntags * sizeof(uint64_t));
        }
        run->tag_n = t + 1;
    }
    cg_cu_tag_enable(0);
    free(vals);
    return (strcmp(run->status, "ok") == 0) ? 0 : -1;
}

static int time_point(struct bc_ctx *c, const struct bench_point *pt, struct bc_bufs *b,
                      struct bc_run *run)
{
    const struct bench_timing *tm = &c->base.job->timing;
    uint64_t *scratch = NULL;
    struct bench_online online;
    char why[BENCH_REASON_LEN] = "";
    size_t whylen = sizeof(why);
    uint64_t vals[2]; /* per repetition, max over the ranks: the time, a failure flag */
    enum bench_decision decision = BENCH_GO_ON;
    int bad = 0;
    int rc = 0;
    double start;
    /* bench.c's reason: in place, a reduction's output is the next call's
     * input; every repetition must compute what the checked call did. */
    int refresh = b->ip_elems > 0 && bench_coll_reduces(pt->coll);

    memset(&online, 0, sizeof(online));
    if (c->base.rank == 0) {
        run->times = calloc((size_t)tm->max_reps, sizeof(uint64_t));
        scratch = calloc((size_t)tm->max_reps, sizeof(uint64_t));
        online.sorted = scratch;
        if (c->base.job->verbosity_full) {
            run->all_times = calloc((size_t)tm->max_reps * (size_t)c->base.p, sizeof(uint64_t));
        }
        bad = run->times == NULL || scratch == NULL ||
              (c->base.job->verbosity_full && run->all_times == NULL);
    }
    if (bc_agree(c, bad, "out of memory for the repetitions", run->reason)) {
        run->status = "error";
        free(scratch);
        return -1;
    }

    for (long w = 0; w < tm->warmup && rc == 0; w++) {
        if (refresh) {
            rc = prepare_out(c, pt, b, 0, why, whylen);
        }
        if (rc == 0) {
            rc = call_impl(c, pt, run, b, why, whylen);
        }
    }
    if (rc == 0) {
        BC_CUDA(cudaStreamSynchronize(c->stream));
    }
out:
    if (bc_agree(c, rc != 0, why, run->reason)) {
        run->status = "error";
        free(scratch);
        return -1;
    }

    start = MPI_Wtime();
    run->n = 0;
    while (decision == BENCH_GO_ON) {
        uint64_t ns = 0;
        rc = one_rep(c, pt, run, b, refresh, &ns, NULL, why, whylen);
        vals[0] = ns;
        vals[1] = (rc != 0);
        if (hx_allreduce(&c->base, vals, 2, HX_U64, HX_MAX) != MPI_SUCCESS ||
            (c->base.job->verbosity_full &&
             hx_gather(&c->base, &ns, (int)sizeof(ns),
                       (c->base.rank == 0)
                           ? run->all_times + ((size_t)run->n * (size_t)c->base.p)
                           : NULL) != MPI_SUCCESS)) {
            run->status = "error";
            snprintf(run->reason, sizeof(run->reason),
                     "the harness's own allreduce or gather failed");
            break;
        }
        if (vals[1] != 0) {
            bc_agree(c, rc != 0, why, run->reason);
            run->status = "error";
            break;
        }
        if (c->base.rank == 0) {
            run->times[run->n] = vals[0];
        }
        run->n++;
        if (c->base.rank == 0) {
            bench_online_add(&online, vals[0]);
            decision = bench_decide(tm, &online, MPI_Wtime() - start);
        }
        if (hx_bcast(&c->base, &decision, (int)sizeof(decision), 0) != MPI_SUCCESS) {
            run->status = "error";
            snprintf(run->reason, sizeof(run->reason), "the harness's own bcast failed");
            break;
        }
    }
    free(scratch);
    if (strcmp(run->status, "ok") != 0) {
        return -1;
    }
    run->stop = bench_stop_name(decision);
    if (run->ntags > 0 && run->n > 0 && tag_point(c, pt, b, run, refresh) != 0) {
        run->stop = NULL; /* an error point carries no timing */
        return -1;
    }
    return 0;
}

/* ---- one point --------------------------------------------------------------------- */

static const struct cg_cu_algo *find_algo(const char *name)
{
    for (int i = 0; i < cg_cu_nalgos; i++) {
        if (strcmp(cg_cu_algos[i]->name, name) == 0) {
            return cg_cu_algos[i];
        }
    }
    return NULL;
}

static void skip(struct bc_run *run, const char *why)
{
    run->status = "skipped";
    snprintf(run->reason, sizeof(run->reason), "%s", why);
}

static void run_point(struct bc_ctx *c, const struct bench_point *pt, struct bc_run *run)
{
    struct bc_bufs b;
    size_t size = bench_dtype_size(pt->dtype);
    char why[BENCH_REASON_LEN] = "";
    size_t whylen = sizeof(why);
    long nccl_from = -1;
    int rc = 0;
    int bad;

    g_rank = c->base.rank;
    memset(&b, 0, sizeof(b));
    run->status = "ok";
    run->tolerance = (pt->dtype == BENCH_FLOAT) ? TOL_FLOAT
                     : (pt->dtype == BENCH_DOUBLE) ? TOL_DOUBLE
                                                   : 0.0;
    /* What can be said from the job alone (the same on every rank). */
    if (!bc_coll_supported(pt->coll)) {
        char t[BENCH_REASON_LEN];
        bench_fmt(t, sizeof(t),
                  "the GPU mode measures allreduce, allgather, reduce_scatter_block, bcast and "
                  "alltoall (NCCL's collectives that the CUDA emitter writes), not %s",
                  bc_coll_name(pt->coll));
        skip(run, t);
        return;
    }
    if (pt->kind != BENCH_NATIVE && pt->kind != BENCH_GENERATED) {
        char t[BENCH_REASON_LEN];
        bench_fmt(t, sizeof(t),
                  "%s: the GPU mode runs native:<algorithm> (NCCL) and generated:<schedule> "
                  "points only (bounds and the like are MPI code: build/<lib>/bench)",
                  pt->impl);
        skip(run, t);
        return;
    }
    if (pt->kind == BENCH_GENERATED) {
        run->algo = find_algo(pt->base);
        if (run->algo == NULL) {
            run->status = "error";
            bench_fmt(run->reason, sizeof(run->reason),
                      "no generated GPU collective named \"%s\" in this build "
                      "(emitted/cuda/all.cu; schedules with call steps have none)",
                      pt->base);
            return;
        }
        if (run->algo->coll != pt->coll) {
            run->status = "error";
            bench_fmt(run->reason, sizeof(run->reason), "schedule \"%s\" implements %s, not %s",
                      pt->name, bc_coll_name(run->algo->coll), bc_coll_name(pt->coll));
            run->algo = NULL;
            return;
        }
        run->ntags = run->algo->tag_count;
        /* The same on every rank: a refusal needs no agreement. */
        if (bench_params_apply(run->algo->name, run->algo->params, run->algo->nparams, pt,
                               &run->params, run->reason, sizeof(run->reason)) != 0) {
            run->status = "error";
            return;
        }
        if (transport_ready(c, run->reason) != 0) {
            run->status = "error";
            return;
        }
        run->transport = cg_cu_transport_name(c->transport);
    } else {
        if (pt->in_place && pt->coll == CG_COLL_ALLTOALL) {
            skip(run, "NCCL has no in-place alltoall: ncclSend/ncclRecv on one buffer would "
                      "overwrite blocks not yet sent");
            return;
        }
        if (!nccl_ready(c)) {
            skip(run, c->nccl_why);
            return;
        }
        run->transport = "nccl";
    }

    make_pool(c);
    if (size_bufs(c, pt, run, &b) != 0) {
        run->status = "error";
        bench_fmt(run->reason, sizeof(run->reason), "count %zu: buffer sizes overflow",
                  pt->count);
        return;
    }
    b.h_send = calloc((b.in_elems > 0) ? b.in_elems : 1, size);
    b.h_ref = calloc((b.res_elems > 0) ? b.res_elems : 1, size);
    b.h_res = calloc((b.res_elems > 0) ? b.res_elems : 1, size);
    bad = (b.h_send == NULL || b.h_ref == NULL || b.h_res == NULL);
    if (bad) {
        bench_fmt(why, whylen, "rank %d: out of host memory for %zu elements", g_rank,
                  b.in_elems + (2 * b.res_elems));
        rc = -1;
    } else {
        int from_root = cg_colls[pt->coll].result == CG_RESULT_FROM_ROOT; /* bcast */
        int mine = from_root ? (c->base.rank == pt->root) : 1;
        int from = from_root ? pt->root : c->base.rank;
        for (size_t i = 0; mine && i < b.in_elems; i++) {
            bench_value(pt, c->base.p, from, i, b.h_send + (i * size));
        }
        BC_CUDA(cudaSetDevice(c->device));
        if (c->pool_send != NULL && b.in_elems * size <= c->pool_send_bytes &&
            b.out_elems * size <= c->pool_out_bytes) {
            b.d_send = c->pool_send;
            b.d_out = c->pool_out;
            b.pooled = 1;
        } else {
            BC_CUDA(cudaMalloc((void **)&b.d_send, ((b.in_elems > 0) ? b.in_elems : 1) * size));
            BC_CUDA(cudaMalloc((void **)&b.d_out, ((b.out_elems > 0) ? b.out_elems : 1) * size));
        }
        /* On the stream, and waited for: a cudaMemcpy from pageable memory
         * may return before its DMA lands, and the legacy stream does not
         * order with a non-blocking one. */
        BC_CUDA(cudaMemcpyAsync(b.d_send, b.h_send, b.in_elems * size, cudaMemcpyHostToDevice,
                                c->stream));
        BC_CUDA(cudaStreamSynchronize(c->stream));
    }
out:
    if (bc_agree(c, rc != 0, why, run->reason)) {
        run->status = "error";
        free_bufs(&b);
        return;
    }
    if (pt->kind == BENCH_NATIVE && c->base.rank == 0) {
        nccl_from = bc_nccl_debug_offset(c);
    }
    if (check_point(c, pt, &b, run) == 0) {
        time_point(c, pt, &b, run);
    }
    if (pt->kind == BENCH_NATIVE && c->base.rank == 0 && run->ran) {
        bc_nccl_debug_parse(c->nccl_log, nccl_from, bc_nccl_func_name(pt->coll), c->base.p,
                            &run->tuning);
    }
    free_bufs(&b);
}

void bc_run_point(struct bc_ctx *c, const struct bench_point *pt, struct bc_run *run)
{
    run_point(c, pt, run);
    /* A parameter set for this point is not left for other programs' calls
     * (every generated point sets all of its schedule's anyway). */
    if (run->algo != NULL) {
        bench_params_clear(run->algo->name, run->algo->params, run->algo->nparams);
    }
}

void bc_free_run(struct bc_run *run)
{
    free(run->times);
    free(run->all_times);
    free(run->tag_times);
    memset(run, 0, sizeof(*run));
}
