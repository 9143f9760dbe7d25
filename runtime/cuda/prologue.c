/* prologue.c - what every generated GPU collective does before its first
 * phase (cg_cuda.h, "The prologue"): cg_cu_begin_<coll>, one per collective
 * the GPU backend has, and cg_cu_buffers. The MPI runtime's prologue.c is
 * its twin; this one works on device memory, in NCCL's in-place forms as
 * well as MPI's (cg_cuda_algo.h).
 */
#include "cg_cuda_internal.h"

#include "cg_cuda_algo.h" /* cg_cu_<coll>_fn, for the fallbacks */

/* cg_cu_call_begin, the record, the topology, the argument checks and the
 * count. Returns MPI_SUCCESS, an error, or CG_DONE: for the fallback to run
 * (the call already ended) or a count of 0 (c->empty, unless
 * CG_READS_PARAMS). */
static int begin(struct cg_cu_call *c, int coll, const void *sendbuf, void *recvbuf,
                 size_t count, int root, MPI_Comm comm, cg_cu_dtype dtype, cg_cu_op op,
                 cudaStream_t stream, int flags, cg_any_fn fallback)
{
    int rc = MPI_SUCCESS;

    CG_CHECK(cg_cu_call_begin(c, comm, dtype, cg_colls[coll].reduces ? op : CG_CU_OP_NONE,
                              stream));
    c->coll = coll;
    c->sendbuf = sendbuf;
    c->recvbuf = recvbuf;
    c->count = count;
    c->root = root;
    if ((flags & CG_NEEDS_TOPOLOGY) != 0) {
        const struct cg_topo *topo = NULL;
        CG_CHECK(cg_cu_topo(c, &topo));
        CG_CHECK(cg_topo_fallback(topo, fallback));
        if (!topo->regular) {
            cg_cu_call_end(c);
            rc = CG_DONE;
            goto out;
        }
        c->topo = topo;
    }
    if (cg_colls[coll].reduces) {
        CG_CHECK(cg_cu_check_op(c));
    }
    if (cg_colls[coll].rooted) {
        CG_CHECK(cg_cu_check_root(c, root));
    }
    c->empty = (count == 0);
    if (c->empty && (flags & CG_READS_PARAMS) == 0) {
        rc = CG_DONE;
    }
out:
    return rc;
}

int cg_cu_call_finish(struct cg_cu_call *c, int rc)
{
    cg_cu_call_end(c);
    return (rc == CG_DONE) ? c->result : rc;
}

int cg_cu_empty(struct cg_cu_call *c)
{
    if (c->empty) {
        c->result = MPI_SUCCESS;
        return CG_DONE;
    }
    return MPI_SUCCESS;
}

/* Whether begin's CG_DONE is for the fallback, not for a count of 0. */
static int falls_back(const struct cg_cu_call *c, int rc)
{
    return (rc == CG_DONE) && !c->empty;
}

/* allreduce and reduce_scatter_block: one signature but for the count's
 * name (cg_cu_allreduce_fn is cg_cu_reduce_scatter_block_fn). */
static int begin_reducing(struct cg_cu_call *c, int coll, const void *sendbuf, void *recvbuf,
                          size_t count, cg_cu_dtype datatype, cg_cu_op op, MPI_Comm comm,
                          cudaStream_t stream, int flags, cg_any_fn fallback)
{
    int rc = begin(c, coll, sendbuf, recvbuf, count, 0, comm, datatype, op, stream, flags,
                   fallback);
    if (falls_back(c, rc)) {
        c->result = ((cg_cu_allreduce_fn)fallback)(sendbuf, recvbuf, count, datatype, op, comm,
                                                   stream);
    }
    return rc;
}

/* allgather and alltoall: one signature but for the count's name. */
static int begin_blocks(struct cg_cu_call *c, int coll, const void *sendbuf, void *recvbuf,
                        size_t count, cg_cu_dtype datatype, MPI_Comm comm, cudaStream_t stream,
                        int flags, cg_any_fn fallback)
{
    int rc = begin(c, coll, sendbuf, recvbuf, count, 0, comm, datatype, CG_CU_OP_NONE, stream,
                   flags, fallback);
    if (falls_back(c, rc)) {
        c->result = ((cg_cu_allgather_fn)fallback)(sendbuf, recvbuf, count, datatype, comm,
                                                   stream);
    }
    return rc;
}

int cg_cu_begin_allreduce(struct cg_cu_call *c, CG_CU_ALLREDUCE_ARGS, int flags,
                          cg_any_fn fallback)
{
    return begin_reducing(c, CG_COLL_ALLREDUCE, sendbuf, recvbuf, count, datatype, op, comm,
                          stream, flags, fallback);
}

int cg_cu_begin_allgather(struct cg_cu_call *c, CG_CU_ALLGATHER_ARGS, int flags,
                          cg_any_fn fallback)
{
    return begin_blocks(c, CG_COLL_ALLGATHER, sendbuf, recvbuf, sendcount, datatype, comm,
                        stream, flags, fallback);
}

int cg_cu_begin_reduce_scatter_block(struct cg_cu_call *c, CG_CU_REDUCE_SCATTER_BLOCK_ARGS,
                                     int flags, cg_any_fn fallback)
{
    return begin_reducing(c, CG_COLL_REDUCE_SCATTER_BLOCK, sendbuf, recvbuf, recvcount, datatype,
                          op, comm, stream, flags, fallback);
}

int cg_cu_begin_bcast(struct cg_cu_call *c, CG_CU_BCAST_ARGS, int flags, cg_any_fn fallback)
{
    int rc = begin(c, CG_COLL_BCAST, sendbuf, recvbuf, count, root, comm, datatype,
                   CG_CU_OP_NONE, stream, flags, fallback);
    if (falls_back(c, rc)) {
        c->result = ((cg_cu_bcast_fn)fallback)(sendbuf, recvbuf, count, datatype, root, comm,
                                               stream);
    }
    return rc;
}

int cg_cu_begin_alltoall(struct cg_cu_call *c, CG_CU_ALLTOALL_ARGS, int flags,
                         cg_any_fn fallback)
{
    return begin_blocks(c, CG_COLL_ALLTOALL, sendbuf, recvbuf, count, datatype, comm, stream,
                        flags, fallback);
}

/* The copies each collective's buffers need on the device. */
static int copies(struct cg_cu_call *c, const struct cg_geom *g, struct cg_buf *in,
                  struct cg_buf *out)
{
    int rc = MPI_SUCCESS;
    const void *sendbuf = c->sendbuf;
    void *recvbuf = c->recvbuf;

    switch ((enum cg_coll)c->coll) {
    case CG_COLL_ALLREDUCE:
        /* In place: sendbuf is CG_CU_IN_PLACE, or recvbuf itself (NCCL's
         * form, no copy: cg_cu_copy skips a copy onto itself). */
        if (sendbuf != CG_CU_IN_PLACE) {
            CG_CHECK(cg_cu_copy(c, recvbuf, sendbuf, c->count * c->esize));
        }
        break;
    case CG_COLL_BCAST:
        /* sendbuf is read at the root only; in place: CG_CU_IN_PLACE, or
         * recvbuf itself. */
        if ((c->rank == c->root) && (sendbuf != CG_CU_IN_PLACE)) {
            CG_CHECK(cg_cu_copy(c, recvbuf, sendbuf, c->count * c->esize));
        }
        break;
    case CG_COLL_ALLGATHER:
        /* In place: sendbuf is CG_CU_IN_PLACE, or block rank of recvbuf
         * (NCCL's form, no copy). */
        if (sendbuf != CG_CU_IN_PLACE) {
            char *mine = out->base + cg_geom_off(g, c->rank) * c->esize;
            CG_CHECK(cg_cu_copy(c, mine, sendbuf, c->count * c->esize));
        }
        break;
    case CG_COLL_ALLTOALL:
    case CG_COLL_REDUCE_SCATTER_BLOCK: {
        /* In place (sendbuf CG_CU_IN_PLACE: the input is in recvbuf; or the
         * two overlap, as in NCCL's form), the result overwrites the input:
         * work on a copy. */
        size_t in_bytes = g->count * c->esize;
        size_t out_bytes = (c->coll == CG_COLL_ALLTOALL) ? in_bytes : c->count * c->esize;
        if ((sendbuf == CG_CU_IN_PLACE) || cg_cu_overlap(sendbuf, in_bytes, recvbuf, out_bytes)) {
            in->base = (char *)cg_cu_scratch(c, 1, cg_cu_buf_bytes(c, g, c->p), &rc);
            if (rc != MPI_SUCCESS) {
                goto out;
            }
            CG_CHECK(cg_cu_copy(c, in->base, (sendbuf == CG_CU_IN_PLACE) ? recvbuf : sendbuf,
                                in_bytes));
        }
        break;
    }
    default:
        cg_set_error("collgen: the GPU backend has no %s", cg_colls[c->coll].name);
        rc = MPI_ERR_INTERN;
        break;
    }
out:
    return rc;
}

int cg_cu_buffers(struct cg_cu_call *c, long nb, struct cg_buf *in, struct cg_buf *out,
                  struct cg_buf *tmp, long ntmp)
{
    int rc = MPI_SUCCESS;
    struct cg_geom g;

    if ((c->cc == NULL) || (c->coll < 0) || (c->coll >= CG_COLL_COUNT_)) {
        cg_set_error("collgen: cg_cu_buffers without a begun call");
        return MPI_ERR_INTERN;
    }
    CG_CHECK(cg_layout(c->coll, c->p, c->count, nb, c->sendbuf, c->recvbuf, NULL, in, out, tmp,
                       ntmp, &g));
    CG_CHECK(copies(c, &g, in, out));
    if (tmp != NULL) {
        tmp->base = (char *)cg_cu_scratch(c, 0, cg_cu_buf_bytes(c, &g, ntmp), &rc);
    }
out:
    return rc;
}
