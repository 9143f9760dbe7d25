/* tests/cuda/ring.cu - the ring allreduce and ring allgather on device
 * buffers, written by hand the way the CUDA emitter will write them from
 * schedules/allreduce/ring.json and schedules/allgather/ring.json: the same
 * loops as emitted/mpi/allreduce_ring.c and allgather_ring.c, with cg_cu_*
 * calls in place of cg_*, and CUDA-event tags with the MPI backend's ids.
 * Host code only: everything is enqueued on the caller's stream.
 */
#include "ring.h"

extern "C" {
#include "collgen.h" /* tag ids; after cg_cuda.h, so that cg.h has C linkage */
}

int cg_cu_allreduce_ring(const void *sendbuf, void *recvbuf, size_t count, cg_cu_dtype dtype,
                         cg_cu_op op, MPI_Comm comm, cudaStream_t stream)
{
    struct cg_cu_call c;
    int rc = MPI_SUCCESS;

    rc = cg_cu_call_begin(&c, comm, dtype, op, stream);
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    if (0 == count) {
        goto out;
    }
    {
        const int p = c.p;
        const int rank = c.rank;
        CG_CU_TAG_BEGIN(CG_TAG_ALLREDUCE_RING);
        const struct cg_geom geom = { count, p };
        struct cg_buf out = { (char *)recvbuf, geom, geom.nb };
        struct cg_buf tmp = { NULL, geom, p };

        if (sendbuf != CG_CU_IN_PLACE) {
            CG_TRY(cg_cu_copy(&c, recvbuf, sendbuf, count * c.esize));
        }
        tmp.base = (char *)cg_cu_scratch(&c, 0, cg_cu_buf_bytes(&c, &geom, tmp.nblocks), &rc);
        if (rc != MPI_SUCCESS) {
            goto out;
        }

        /* ring.json:9 phase reduce_scatter: p - 1 rounds */
        CG_CU_TAG_BEGIN(CG_TAG_ALLREDUCE_RING__REDUCE_SCATTER);
        for (int r = 0; r < p - 1; r++) {
            CG_CU_TAG_BEGIN(CG_TAG_ALLREDUCE_RING__REDUCE_SCATTER__ROUND);

            /* ring.json:12 reduce_scatter: exchange
             *   send out block (rank - r) % p to rank (rank + 1) % p
             *   receive tmp block (rank - r - 1) % p from rank (rank - 1) % p
             */
            CG_CU_TAG_BEGIN(CG_TAG_ALLREDUCE_RING__REDUCE_SCATTER__EXCHANGE);
            CG_TRY(cg_cu_xchg_begin(&c, 1));
            CG_TRY(cg_cu_send(&c, cg_mod(rank + 1, p), &out, cg_mod(rank - r, p), 1));
            CG_TRY(cg_cu_recv(&c, cg_mod(rank - 1, p), &tmp, cg_mod(rank - r - 1, p), 1));
            CG_TRY(cg_cu_xchg_wait(&c));
            CG_CU_TAG_END(CG_TAG_ALLREDUCE_RING__REDUCE_SCATTER__EXCHANGE);

            /* ring.json:15 reduce_scatter: out block (rank - r - 1) % p = out block (rank - r - 1) % p op tmp block (rank - r - 1) % p */
            CG_CU_TAG_BEGIN(CG_TAG_ALLREDUCE_RING__REDUCE_SCATTER__REDUCE);
            CG_TRY(cg_cu_reduce_blocks(&c, &out, cg_mod(rank - r - 1, p), &tmp,
                                       cg_mod(rank - r - 1, p), 1, CG_INTO_FROM));
            CG_CU_TAG_END(CG_TAG_ALLREDUCE_RING__REDUCE_SCATTER__REDUCE);
            CG_CU_TAG_END(CG_TAG_ALLREDUCE_RING__REDUCE_SCATTER__ROUND);
        }
        CG_CU_TAG_END(CG_TAG_ALLREDUCE_RING__REDUCE_SCATTER);

        /* ring.json:18 phase allgather: p - 1 rounds */
        CG_CU_TAG_BEGIN(CG_TAG_ALLREDUCE_RING__ALLGATHER);
        for (int r = 0; r < p - 1; r++) {
            CG_CU_TAG_BEGIN(CG_TAG_ALLREDUCE_RING__ALLGATHER__ROUND);

            /* ring.json:21 allgather: exchange
             *   send out block (rank + 1 - r) % p to rank (rank + 1) % p
             *   receive out block (rank - r) % p from rank (rank - 1) % p
             */
            CG_CU_TAG_BEGIN(CG_TAG_ALLREDUCE_RING__ALLGATHER__EXCHANGE);
            CG_TRY(cg_cu_xchg_begin(&c, 3));
            CG_TRY(cg_cu_send(&c, cg_mod(rank + 1, p), &out, cg_mod(rank + 1 - r, p), 1));
            CG_TRY(cg_cu_recv(&c, cg_mod(rank - 1, p), &out, cg_mod(rank - r, p), 1));
            CG_TRY(cg_cu_xchg_wait(&c));
            CG_CU_TAG_END(CG_TAG_ALLREDUCE_RING__ALLGATHER__EXCHANGE);
            CG_CU_TAG_END(CG_TAG_ALLREDUCE_RING__ALLGATHER__ROUND);
        }
        CG_CU_TAG_END(CG_TAG_ALLREDUCE_RING__ALLGATHER);

        CG_CU_TAG_END(CG_TAG_ALLREDUCE_RING);
    }
out:
    cg_cu_call_end(&c);
    return rc;
}

int cg_cu_allgather_ring(const void *sendbuf, size_t sendcount, void *recvbuf, size_t recvcount,
                         cg_cu_dtype dtype, MPI_Comm comm, cudaStream_t stream)
{
    struct cg_cu_call c;
    int rc = MPI_SUCCESS;

    rc = cg_cu_call_begin(&c, comm, dtype, CG_CU_OP_NONE, stream);
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    if ((sendbuf != CG_CU_IN_PLACE) && (sendcount != recvcount)) {
        cg_set_error("collgen: allgather: sendcount %zu differs from recvcount %zu", sendcount,
                     recvcount);
        rc = MPI_ERR_COUNT;
        goto out;
    }
    if (0 == recvcount) {
        goto out;
    }
    {
        const int p = c.p;
        const int rank = c.rank;
        CG_CU_TAG_BEGIN(CG_TAG_ALLGATHER_RING);
        const struct cg_geom geom = { (size_t)p * recvcount, p };
        struct cg_buf out = { (char *)recvbuf, geom, p };

        if (sendbuf != CG_CU_IN_PLACE) {
            char *mine = out.base + cg_geom_off(&geom, rank) * c.esize;
            CG_TRY(cg_cu_copy(&c, mine, sendbuf, recvcount * c.esize));
        }

        /* ring.json:7 phase ring: p - 1 rounds */
        CG_CU_TAG_BEGIN(CG_TAG_ALLGATHER_RING__RING);
        for (int r = 0; r < p - 1; r++) {
            CG_CU_TAG_BEGIN(CG_TAG_ALLGATHER_RING__RING__ROUND);

            /* ring.json:9 ring: exchange
             *   send out block (rank - r) % p to rank (rank + 1) % p
             *   receive out block (rank - r - 1) % p from rank (rank - 1) % p
             */
            CG_CU_TAG_BEGIN(CG_TAG_ALLGATHER_RING__RING__EXCHANGE);
            CG_TRY(cg_cu_xchg_begin(&c, 1));
            CG_TRY(cg_cu_send(&c, cg_mod(rank + 1, p), &out, cg_mod(rank - r, p), 1));
            CG_TRY(cg_cu_recv(&c, cg_mod(rank - 1, p), &out, cg_mod(rank - r - 1, p), 1));
            CG_TRY(cg_cu_xchg_wait(&c));
            CG_CU_TAG_END(CG_TAG_ALLGATHER_RING__RING__EXCHANGE);
            CG_CU_TAG_END(CG_TAG_ALLGATHER_RING__RING__ROUND);
        }
        CG_CU_TAG_END(CG_TAG_ALLGATHER_RING__RING);

        CG_CU_TAG_END(CG_TAG_ALLGATHER_RING);
    }
out:
    cg_cu_call_end(&c);
    return rc;
}
