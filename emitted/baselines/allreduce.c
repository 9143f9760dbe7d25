/* allreduce.c - allreduce baselines in plain MPI, written for collgen after
 * the published descriptions of the algorithms of Open MPI's coll_base and
 * MPICH (README.md here). Signature: MPI_Allreduce's with a size_t count;
 * MPI_IN_PLACE as sendbuf; any count (counts under p leave blocks empty).
 * Errors are returned, in Open MPI's style: each call's code checked, a
 * goto to err_hndl. `collgen tag` times them (emitted/baselines/).
 */
#include <string.h>

#include "common.h"

/* What every allreduce here does first: rank, size and the datatype's
 * extent; MPI_ERR_OP for a non-commutative op where the algorithm needs a
 * commutative one, MPI_ERR_COUNT above INT_MAX; the input copied into
 * recvbuf unless in place. *done: nothing more to do (one rank, no
 * element). */
#include "tags.h" /* collgen tag: timing tags (CG_TAGS) */
static int start(const void *sendbuf, void *recvbuf, size_t count, MPI_Datatype datatype,
                 MPI_Op op, MPI_Comm comm, int needs_commutative, int *rank, int *size,
                 MPI_Aint *extent, int *done)
{
    CG_CTAG_FUNCTION(CG_CTAG_START);
    int commutative = 1;
    MPI_Aint lb;

    MPI_Comm_rank(comm, rank);
    MPI_Comm_size(comm, size);
    MPI_Type_get_extent(datatype, &lb, extent);
    if (needs_commutative) {
        MPI_Op_commutative(op, &commutative);
    }
    if (!commutative) {
        return MPI_ERR_OP;
    }
    if (count > INT_MAX) {
        return MPI_ERR_COUNT;
    }
    CG_CTAG_BEGIN(CG_CTAG_START__MEMCPY);
    if (sendbuf != MPI_IN_PLACE && count > 0) {
        CG_CTAG_BEGIN(CG_CTAG_START__MEMCPY__MEMCPY);
        memcpy(recvbuf, sendbuf, count * (size_t)*extent);
        CG_CTAG_END(CG_CTAG_START__MEMCPY__MEMCPY);
    }
    CG_CTAG_END(CG_CTAG_START__MEMCPY);
    *done = (*size == 1 || count == 0);
    return MPI_SUCCESS;
}

/* Ring (Open MPI's coll_base_allreduce_intra_ring). The vector is split
 * into p blocks. Reduce-scatter: in step k each rank sends block
 * rank - k to the right and receives block rank - k - 1 from the left,
 * which it reduces into its own copy; the receive of the next step is
 * posted before that reduction, into the other of two buffers, so that the
 * transfer overlaps it. After p - 1 steps rank holds the whole reduction of
 * block rank + 1. Allgather: p - 1 steps passing the finished blocks along
 * the ring. Needs a commutative op (blocks are reduced in ring order). */
int allreduce_ring(const void *sendbuf, void *recvbuf, size_t count, MPI_Datatype datatype,
                   MPI_Op op, MPI_Comm comm)
{
    CG_CTAG_FUNCTION(CG_CTAG_ALLREDUCE_RING);
    int rank, size, done, err = MPI_SUCCESS, rs_step, ag_step, inbi;
    MPI_Aint extent;
    MPI_Request reqs[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    char *rbuf = recvbuf, *inbuf[2] = {NULL, NULL};

    CG_CTAG_BEGIN(CG_CTAG_ALLREDUCE_RING__START);
    CG_CTAG_BEGIN(CG_CTAG_ALLREDUCE_RING__START__START);
    err = start(sendbuf, recvbuf, count, datatype, op, comm, 1, &rank, &size, &extent, &done);
    CG_CTAG_END(CG_CTAG_ALLREDUCE_RING__START__START);
    CG_CTAG_END(CG_CTAG_ALLREDUCE_RING__START);
    if (MPI_SUCCESS != err || done) { goto err_hndl; }
    size_t max_block = block_len(count, size, 0);
    inbuf[0] = malloc(max_block * (size_t)extent);
    inbuf[1] = malloc(max_block * (size_t)extent);
    if (inbuf[0] == NULL || inbuf[1] == NULL) { err = MPI_ERR_NO_MEM; goto err_hndl; }
    int send_to = (rank + 1) % size;
    int recv_from = (rank + size - 1) % size;

    /* Reduce-scatter. Step s receives block rank - s - 1 into one buffer
     * while, from step 1 on, the block received in the step before is
     * reduced from the other buffer and passed on. */
    inbi = 1;
    CG_CTAG_BEGIN(CG_CTAG_ALLREDUCE_RING__RS_STEP);
    for (rs_step = 0; rs_step < size - 1; rs_step++) {
        CG_CTAG_NEXT(CG_CTAG_ALLREDUCE_RING__RS_STEP__ROUND);
        int prev = (rank - rs_step + size) % size;     /* passed on: ours, then the last one in */
        int next = (rank - rs_step - 1 + size) % size; /* arrives in this step */
        inbi ^= 1;
        CG_CTAG_BEGIN(CG_CTAG_ALLREDUCE_RING__RS_STEP__ROUND__IRECV);
        err = MPI_Irecv(inbuf[inbi], (int)block_len(count, size, next), datatype, recv_from, 1,
                        comm, &reqs[inbi]);
        CG_CTAG_END(CG_CTAG_ALLREDUCE_RING__RS_STEP__ROUND__IRECV);
        if (MPI_SUCCESS != err) { goto err_hndl; }
        if (rs_step > 0) {
            CG_CTAG_BEGIN(CG_CTAG_ALLREDUCE_RING__RS_STEP__ROUND__WAIT);
            err = MPI_Wait(&reqs[inbi ^ 1], MPI_STATUS_IGNORE);
            CG_CTAG_END(CG_CTAG_ALLREDUCE_RING__RS_STEP__ROUND__WAIT);
            if (MPI_SUCCESS != err) { goto err_hndl; }
            CG_CTAG_BEGIN(CG_CTAG_ALLREDUCE_RING__RS_STEP__ROUND__REDUCE_LOCAL);
            err = MPI_Reduce_local(inbuf[inbi ^ 1],
                                   rbuf + block_off(count, size, prev) * (size_t)extent,
                                   (int)block_len(count, size, prev), datatype, op);
            CG_CTAG_END(CG_CTAG_ALLREDUCE_RING__RS_STEP__ROUND__REDUCE_LOCAL);
            if (MPI_SUCCESS != err) { goto err_hndl; }
        }
        CG_CTAG_BEGIN(CG_CTAG_ALLREDUCE_RING__RS_STEP__ROUND__SEND);
        err = MPI_Send(rbuf + block_off(count, size, prev) * (size_t)extent,
                       (int)block_len(count, size, prev), datatype, send_to, 1, comm);
        CG_CTAG_END(CG_CTAG_ALLREDUCE_RING__RS_STEP__ROUND__SEND);
        if (MPI_SUCCESS != err) { goto err_hndl; }
        CG_CTAG_END(CG_CTAG_ALLREDUCE_RING__RS_STEP__ROUND);
    }
    CG_CTAG_END(CG_CTAG_ALLREDUCE_RING__RS_STEP);

    /* The last block to arrive completes block rank + 1. */
    int b = (rank + 1) % size;
    CG_CTAG_BEGIN(CG_CTAG_ALLREDUCE_RING__WAIT);
    CG_CTAG_BEGIN(CG_CTAG_ALLREDUCE_RING__WAIT__WAIT);
    err = MPI_Wait(&reqs[inbi], MPI_STATUS_IGNORE);
    CG_CTAG_END(CG_CTAG_ALLREDUCE_RING__WAIT__WAIT);
    if (MPI_SUCCESS != err) { goto err_hndl; }
    CG_CTAG_BEGIN(CG_CTAG_ALLREDUCE_RING__WAIT__REDUCE_LOCAL);
    err = MPI_Reduce_local(inbuf[inbi], rbuf + block_off(count, size, b) * (size_t)extent,
                           (int)block_len(count, size, b), datatype, op);
    CG_CTAG_END(CG_CTAG_ALLREDUCE_RING__WAIT__REDUCE_LOCAL);
    CG_CTAG_END(CG_CTAG_ALLREDUCE_RING__WAIT);
    if (MPI_SUCCESS != err) { goto err_hndl; }

    /* Allgather: step s sends block rank + 1 - s, receives block rank - s. */
    CG_CTAG_BEGIN(CG_CTAG_ALLREDUCE_RING__AG_STEP);
    for (ag_step = 0; ag_step < size - 1; ag_step++) {
        CG_CTAG_NEXT(CG_CTAG_ALLREDUCE_RING__AG_STEP__ROUND);
        int sb = (rank + 1 - ag_step + size) % size;
        int rb = (rank - ag_step + size) % size;
        CG_CTAG_BEGIN(CG_CTAG_ALLREDUCE_RING__AG_STEP__ROUND__SENDRECV);
        err = MPI_Sendrecv(rbuf + block_off(count, size, sb) * (size_t)extent,
                           (int)block_len(count, size, sb), datatype, send_to, 2,
                           rbuf + block_off(count, size, rb) * (size_t)extent,
                           (int)block_len(count, size, rb), datatype, recv_from, 2, comm,
                           MPI_STATUS_IGNORE);
        CG_CTAG_END(CG_CTAG_ALLREDUCE_RING__AG_STEP__ROUND__SENDRECV);
        if (MPI_SUCCESS != err) { goto err_hndl; }
        CG_CTAG_END(CG_CTAG_ALLREDUCE_RING__AG_STEP__ROUND);
    }
    CG_CTAG_END(CG_CTAG_ALLREDUCE_RING__AG_STEP);
    free(inbuf[0]);
    free(inbuf[1]);
    return MPI_SUCCESS;

err_hndl:
    CG_CTAG_UNWIND(CG_CTAG_ALLREDUCE_RING);
    free(inbuf[0]);
    free(inbuf[1]);
    return err;
}

/* Segmented ring (Open MPI's coll_base_allreduce_intra_ring_segmented):
 * each of the p blocks is cut into nseg near-equal segments, nseg chosen so
 * that a segment holds at most segment_bytes(); the ring's reduce-scatter
 * runs once per segment index (each step moves one segment of one block),
 * which keeps the messages and the temporary buffers small; the allgather
 * then moves whole blocks, as in the ring. */
int allreduce_segmented_ring(const void *sendbuf, void *recvbuf, size_t count,
                             MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    CG_CTAG_FUNCTION(CG_CTAG_ALLREDUCE_SEGMENTED_RING);
    int rank, size, done, err = MPI_SUCCESS, seg, rs_step, ag_step;
    MPI_Aint extent;
    char *rbuf = recvbuf, *tmp = NULL;

    CG_CTAG_BEGIN(CG_CTAG_ALLREDUCE_SEGMENTED_RING__START);
    CG_CTAG_BEGIN(CG_CTAG_ALLREDUCE_SEGMENTED_RING__START__START);
    err = start(sendbuf, recvbuf, count, datatype, op, comm, 1, &rank, &size, &extent, &done);
    CG_CTAG_END(CG_CTAG_ALLREDUCE_SEGMENTED_RING__START__START);
    CG_CTAG_END(CG_CTAG_ALLREDUCE_SEGMENTED_RING__START);
    if (MPI_SUCCESS != err || done) { goto err_hndl; }
    size_t max_block = block_len(count, size, 0);
    size_t per_seg = segment_bytes() / (size_t)(extent > 0 ? extent : 1);
    if (per_seg == 0) {
        per_seg = 1;
    }
    int nseg = (int)((max_block + per_seg - 1) / per_seg);
    if (nseg < 1) {
        nseg = 1;
    }
    tmp = malloc(block_len(max_block, nseg, 0) * (size_t)extent + 1);
    if (tmp == NULL) { err = MPI_ERR_NO_MEM; goto err_hndl; }
    int send_to = (rank + 1) % size;
    int recv_from = (rank + size - 1) % size;

    CG_CTAG_BEGIN(CG_CTAG_ALLREDUCE_SEGMENTED_RING__SEG);
    for (seg = 0; seg < nseg; seg++) {
        CG_CTAG_NEXT(CG_CTAG_ALLREDUCE_SEGMENTED_RING__SEG__ROUND);
        for (rs_step = 0; rs_step < size - 1; rs_step++) {
            CG_CTAG_NEXT(CG_CTAG_ALLREDUCE_SEGMENTED_RING__SEG__ROUND__RS_STEP);
            int sb = (rank - rs_step + size) % size;
            int rb = (rank - rs_step - 1 + 2 * size) % size;
            size_t sblock = block_len(count, size, sb);
            size_t rblock = block_len(count, size, rb);
            char *sptr = rbuf + (block_off(count, size, sb) + block_off(sblock, nseg, seg)) *
                                    (size_t)extent;
            char *rptr = rbuf + (block_off(count, size, rb) + block_off(rblock, nseg, seg)) *
                                    (size_t)extent;
            int rlen = (int)block_len(rblock, nseg, seg);
            CG_CTAG_BEGIN(CG_CTAG_ALLREDUCE_SEGMENTED_RING__SEG__ROUND__RS_STEP__SENDRECV);
            err = MPI_Sendrecv(sptr, (int)block_len(sblock, nseg, seg), datatype, send_to, 3, tmp,
                               rlen, datatype, recv_from, 3, comm, MPI_STATUS_IGNORE);
            CG_CTAG_END(CG_CTAG_ALLREDUCE_SEGMENTED_RING__SEG__ROUND__RS_STEP__SENDRECV);
            if (MPI_SUCCESS != err) { goto err_hndl; }
            CG_CTAG_BEGIN(CG_CTAG_ALLREDUCE_SEGMENTED_RING__SEG__ROUND__RS_STEP__REDUCE_LOCAL);
            err = MPI_Reduce_local(tmp, rptr, rlen, datatype, op);
            CG_CTAG_END(CG_CTAG_ALLREDUCE_SEGMENTED_RING__SEG__ROUND__RS_STEP__REDUCE_LOCAL);
            if (MPI_SUCCESS != err) { goto err_hndl; }
            CG_CTAG_END(CG_CTAG_ALLREDUCE_SEGMENTED_RING__SEG__ROUND__RS_STEP);
        }
        CG_CTAG_END(CG_CTAG_ALLREDUCE_SEGMENTED_RING__SEG__ROUND);
    }
    CG_CTAG_END(CG_CTAG_ALLREDUCE_SEGMENTED_RING__SEG);

    CG_CTAG_BEGIN(CG_CTAG_ALLREDUCE_SEGMENTED_RING__AG_STEP);
    for (ag_step = 0; ag_step < size - 1; ag_step++) {
        CG_CTAG_NEXT(CG_CTAG_ALLREDUCE_SEGMENTED_RING__AG_STEP__ROUND);
        int sb = (rank + 1 - ag_step + size) % size;
        int rb = (rank - ag_step + size) % size;
        CG_CTAG_BEGIN(CG_CTAG_ALLREDUCE_SEGMENTED_RING__AG_STEP__ROUND__SENDRECV);
        err = MPI_Sendrecv(rbuf + block_off(count, size, sb) * (size_t)extent,
                           (int)block_len(count, size, sb), datatype, send_to, 4,
                           rbuf + block_off(count, size, rb) * (size_t)extent,
                           (int)block_len(count, size, rb), datatype, recv_from, 4, comm,
                           MPI_STATUS_IGNORE);
        CG_CTAG_END(CG_CTAG_ALLREDUCE_SEGMENTED_RING__AG_STEP__ROUND__SENDRECV);
        if (MPI_SUCCESS != err) { goto err_hndl; }
        CG_CTAG_END(CG_CTAG_ALLREDUCE_SEGMENTED_RING__AG_STEP__ROUND);
    }
    CG_CTAG_END(CG_CTAG_ALLREDUCE_SEGMENTED_RING__AG_STEP);
    free(tmp);
    return MPI_SUCCESS;

err_hndl:
    CG_CTAG_UNWIND(CG_CTAG_ALLREDUCE_SEGMENTED_RING);
    free(tmp);
    return err;
}

/* The fold of recursive doubling and Rabenseifner, with pof2 the largest
 * power of two not above p and rem = p - pof2: of the first 2 rem ranks
 * each even one hands its vector to the odd one above it, which reduces it
 * into its own (the lower rank's data first, tmp holding it) and goes on
 * for both. *newrank: the rank's number among the pof2 that go on, -1 for
 * one that handed its data over. */
static int fold(char *rbuf, char *tmp, size_t count, MPI_Datatype datatype, MPI_Op op,
                MPI_Comm comm, int rank, int rem, int *newrank)
{
    CG_CTAG_FUNCTION(CG_CTAG_FOLD);
    int err;

    if (rank >= 2 * rem) {
        *newrank = rank - rem;
        return MPI_SUCCESS;
    }
    CG_CTAG_BEGIN(CG_CTAG_FOLD__SEND);
    if (rank % 2 == 0) {
        *newrank = -1;
        CG_CTAG_BEGIN(CG_CTAG_FOLD__SEND__SEND);
        return MPI_Send(rbuf, (int)count, datatype, rank + 1, 5, comm);
    }
    CG_CTAG_END(CG_CTAG_FOLD__SEND);
    *newrank = rank / 2;
    CG_CTAG_BEGIN(CG_CTAG_FOLD__RECV);
    CG_CTAG_BEGIN(CG_CTAG_FOLD__RECV__RECV);
    err = MPI_Recv(tmp, (int)count, datatype, rank - 1, 5, comm, MPI_STATUS_IGNORE);
    CG_CTAG_END(CG_CTAG_FOLD__RECV__RECV);
    if (MPI_SUCCESS != err) { return err; }
    CG_CTAG_BEGIN(CG_CTAG_FOLD__RECV__REDUCE_LOCAL);
    return MPI_Reduce_local(tmp, rbuf, (int)count, datatype, op);
}

/* The unfold: each odd rank of the first 2 rem sends the result down to
 * its even partner. */
static int unfold(char *rbuf, size_t count, MPI_Datatype datatype, MPI_Comm comm, int rank,
                  int rem)
{
    CG_CTAG_FUNCTION(CG_CTAG_UNFOLD);
    if (rank >= 2 * rem) {
        return MPI_SUCCESS;
    }
    CG_CTAG_BEGIN(CG_CTAG_UNFOLD__SEND);
    if (rank % 2 == 1) {
        CG_CTAG_BEGIN(CG_CTAG_UNFOLD__SEND__SEND);
        return MPI_Send(rbuf, (int)count, datatype, rank - 1, 7, comm);
    }
    CG_CTAG_END(CG_CTAG_UNFOLD__SEND);
    CG_CTAG_BEGIN(CG_CTAG_UNFOLD__RECV);
    CG_CTAG_BEGIN(CG_CTAG_UNFOLD__RECV__RECV);
    return MPI_Recv(rbuf, (int)count, datatype, rank + 1, 7, comm, MPI_STATUS_IGNORE);
}

/* Recursive doubling (Open MPI's coll_base_allreduce_intra_recursivedoubling).
 * With pof2 the largest power of two not above p and rem = p - pof2, the
 * first 2 rem ranks pair up: each even one sends its vector to the odd one
 * above it, which reduces it (lower rank first) and takes part for both.
 * The pof2 remaining ranks then exchange whole vectors with the rank at
 * distance 1, 2, 4, ... (in their own numbering) and reduce, the lower
 * rank's data first, so a non-commutative op is fine. Finally each odd rank
 * of the first 2 rem sends the result down to its even partner. */
int allreduce_recursive_doubling(const void *sendbuf, void *recvbuf, size_t count,
                                 MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    CG_CTAG_FUNCTION(CG_CTAG_ALLREDUCE_RECURSIVE_DOUBLING);
    int rank, size, done, err = MPI_SUCCESS, newrank, distance;
    MPI_Aint extent;
    char *tmp = NULL;

    CG_CTAG_BEGIN(CG_CTAG_ALLREDUCE_RECURSIVE_DOUBLING__START);
    CG_CTAG_BEGIN(CG_CTAG_ALLREDUCE_RECURSIVE_DOUBLING__START__START);
    err = start(sendbuf, recvbuf, count, datatype, op, comm, 0, &rank, &size, &extent, &done);
    CG_CTAG_END(CG_CTAG_ALLREDUCE_RECURSIVE_DOUBLING__START__START);
    CG_CTAG_END(CG_CTAG_ALLREDUCE_RECURSIVE_DOUBLING__START);
    if (MPI_SUCCESS != err || done) { goto err_hndl; }
    char *acc = recvbuf;  /* the running result */
    char *spare = tmp = malloc(count * (size_t)extent);
    if (tmp == NULL) { err = MPI_ERR_NO_MEM; goto err_hndl; }
    int pof2 = pof2_below(size);
    int rem = size - pof2;

    CG_CTAG_BEGIN(CG_CTAG_ALLREDUCE_RECURSIVE_DOUBLING__FOLD);
    CG_CTAG_BEGIN(CG_CTAG_ALLREDUCE_RECURSIVE_DOUBLING__FOLD__FOLD);
    err = fold(acc, spare, count, datatype, op, comm, rank, rem, &newrank);
    CG_CTAG_END(CG_CTAG_ALLREDUCE_RECURSIVE_DOUBLING__FOLD__FOLD);
    CG_CTAG_END(CG_CTAG_ALLREDUCE_RECURSIVE_DOUBLING__FOLD);
    if (MPI_SUCCESS != err) { goto err_hndl; }

    CG_CTAG_BEGIN(CG_CTAG_ALLREDUCE_RECURSIVE_DOUBLING__DISTANCE);
    if (newrank >= 0) {
        for (distance = 1; distance < pof2; distance <<= 1) {
            CG_CTAG_NEXT(CG_CTAG_ALLREDUCE_RECURSIVE_DOUBLING__DISTANCE__ROUND);
            int newremote = newrank ^ distance;
            int remote = (newremote < rem) ? newremote * 2 + 1 : newremote + rem;
            CG_CTAG_BEGIN(CG_CTAG_ALLREDUCE_RECURSIVE_DOUBLING__DISTANCE__ROUND__SENDRECV);
            err = MPI_Sendrecv(acc, (int)count, datatype, remote, 6, spare, (int)count,
                               datatype, remote, 6, comm, MPI_STATUS_IGNORE);
            CG_CTAG_END(CG_CTAG_ALLREDUCE_RECURSIVE_DOUBLING__DISTANCE__ROUND__SENDRECV);
            if (MPI_SUCCESS != err) { goto err_hndl; }
            if (remote < rank) {
                /* acc = remote's op acc */
                CG_CTAG_BEGIN(CG_CTAG_ALLREDUCE_RECURSIVE_DOUBLING__DISTANCE__ROUND__REDUCE_LOCAL);
                err = MPI_Reduce_local(spare, acc, (int)count, datatype, op);
                CG_CTAG_END(CG_CTAG_ALLREDUCE_RECURSIVE_DOUBLING__DISTANCE__ROUND__REDUCE_LOCAL);
            } else {
                /* spare = acc op remote's; the buffers trade places */
                CG_CTAG_BEGIN(CG_CTAG_ALLREDUCE_RECURSIVE_DOUBLING__DISTANCE__ROUND__REDUCE_LOCAL_2);
                err = MPI_Reduce_local(acc, spare, (int)count, datatype, op);
                CG_CTAG_END(CG_CTAG_ALLREDUCE_RECURSIVE_DOUBLING__DISTANCE__ROUND__REDUCE_LOCAL_2);
                char *t = acc;
                acc = spare;
                spare = t;
            }
            if (MPI_SUCCESS != err) { goto err_hndl; }
            CG_CTAG_END(CG_CTAG_ALLREDUCE_RECURSIVE_DOUBLING__DISTANCE__ROUND);
        }
        if (acc != (char *)recvbuf) {
            CG_CTAG_BEGIN(CG_CTAG_ALLREDUCE_RECURSIVE_DOUBLING__DISTANCE__MEMCPY);
            memcpy(recvbuf, acc, count * (size_t)extent);
            CG_CTAG_END(CG_CTAG_ALLREDUCE_RECURSIVE_DOUBLING__DISTANCE__MEMCPY);
        }
    }
    CG_CTAG_END(CG_CTAG_ALLREDUCE_RECURSIVE_DOUBLING__DISTANCE);

    CG_CTAG_BEGIN(CG_CTAG_ALLREDUCE_RECURSIVE_DOUBLING__UNFOLD);
    CG_CTAG_BEGIN(CG_CTAG_ALLREDUCE_RECURSIVE_DOUBLING__UNFOLD__UNFOLD);
    err = unfold(recvbuf, count, datatype, comm, rank, rem);
    CG_CTAG_END(CG_CTAG_ALLREDUCE_RECURSIVE_DOUBLING__UNFOLD__UNFOLD);
    CG_CTAG_END(CG_CTAG_ALLREDUCE_RECURSIVE_DOUBLING__UNFOLD);
    if (MPI_SUCCESS != err) { goto err_hndl; }
    free(tmp);
    return MPI_SUCCESS;

err_hndl:
    CG_CTAG_UNWIND(CG_CTAG_ALLREDUCE_RECURSIVE_DOUBLING);
    free(tmp);
    return err;
}

/* Rabenseifner's reduce-scatter + allgather (MPICH's
 * reduce_scatter_allgather, Open MPI's rabenseifner). The same fold as
 * recursive doubling leaves pof2 ranks; the vector is cut into pof2 blocks.
 * Reduce-scatter by recursive halving: at distance 1, 2, 4, ... each rank
 * keeps one half of its current window of blocks (the lower half if it is
 * the lower rank of the pair), sends the other half to its partner and
 * reduces the half it receives, until it holds one reduced block. The
 * allgather retraces the steps backwards, each exchanging what it holds
 * for the partner's half of the window. Then the unfold. Needs a
 * commutative op. */
int allreduce_reduce_scatter_allgather(const void *sendbuf, void *recvbuf, size_t count,
                                       MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    CG_CTAG_FUNCTION(CG_CTAG_ALLREDUCE_REDUCE_SCATTER_ALLGATHER);
    int rank, size, done, err = MPI_SUCCESS, newrank, rs_step, ag_step, nsteps = 0;
    int lo_at[32], hi_at[32]; /* the window before each halving step */
    MPI_Aint extent;
    char *rbuf = recvbuf, *tmp = NULL;

    CG_CTAG_BEGIN(CG_CTAG_ALLREDUCE_REDUCE_SCATTER_ALLGATHER__START);
    CG_CTAG_BEGIN(CG_CTAG_ALLREDUCE_REDUCE_SCATTER_ALLGATHER__START__START);
    err = start(sendbuf, recvbuf, count, datatype, op, comm, 1, &rank, &size, &extent, &done);
    CG_CTAG_END(CG_CTAG_ALLREDUCE_REDUCE_SCATTER_ALLGATHER__START__START);
    CG_CTAG_END(CG_CTAG_ALLREDUCE_REDUCE_SCATTER_ALLGATHER__START);
    if (MPI_SUCCESS != err || done) { goto err_hndl; }
    tmp = malloc(count * (size_t)extent);
    if (tmp == NULL) { err = MPI_ERR_NO_MEM; goto err_hndl; }
    int pof2 = pof2_below(size);
    int rem = size - pof2;
    while ((1 << nsteps) < pof2) {
        nsteps++;
    }

    CG_CTAG_BEGIN(CG_CTAG_ALLREDUCE_REDUCE_SCATTER_ALLGATHER__FOLD);
    CG_CTAG_BEGIN(CG_CTAG_ALLREDUCE_REDUCE_SCATTER_ALLGATHER__FOLD__FOLD);
    err = fold(rbuf, tmp, count, datatype, op, comm, rank, rem, &newrank);
    CG_CTAG_END(CG_CTAG_ALLREDUCE_REDUCE_SCATTER_ALLGATHER__FOLD__FOLD);
    CG_CTAG_END(CG_CTAG_ALLREDUCE_REDUCE_SCATTER_ALLGATHER__FOLD);
    if (MPI_SUCCESS != err) { goto err_hndl; }

    int lo = 0, hi = pof2; /* the blocks this rank holds */
    CG_CTAG_BEGIN(CG_CTAG_ALLREDUCE_REDUCE_SCATTER_ALLGATHER__RS_STEP);
    if (newrank >= 0) {
        for (rs_step = 0; rs_step < nsteps; rs_step++) {
            CG_CTAG_NEXT(CG_CTAG_ALLREDUCE_REDUCE_SCATTER_ALLGATHER__RS_STEP__ROUND);
            int newremote = newrank ^ (1 << rs_step);
            int remote = (newremote < rem) ? newremote * 2 + 1 : newremote + rem;
            int mid = (lo + hi) / 2;
            int keep_lo = (newrank < newremote) ? lo : mid;
            int keep_hi = (newrank < newremote) ? mid : hi;
            int send_lo = (newrank < newremote) ? mid : lo;
            int send_hi = (newrank < newremote) ? hi : mid;
            size_t keep_off = block_off(count, pof2, keep_lo);
            size_t keep_n = block_off(count, pof2, keep_hi) - keep_off;
            size_t send_off = block_off(count, pof2, send_lo);
            size_t send_n = block_off(count, pof2, send_hi) - send_off;
            lo_at[rs_step] = lo;
            hi_at[rs_step] = hi;
            CG_CTAG_BEGIN(CG_CTAG_ALLREDUCE_REDUCE_SCATTER_ALLGATHER__RS_STEP__ROUND__SENDRECV);
            err = MPI_Sendrecv(rbuf + send_off * (size_t)extent, (int)send_n, datatype, remote, 9,
                               tmp + keep_off * (size_t)extent, (int)keep_n, datatype, remote, 9,
                               comm, MPI_STATUS_IGNORE);
            CG_CTAG_END(CG_CTAG_ALLREDUCE_REDUCE_SCATTER_ALLGATHER__RS_STEP__ROUND__SENDRECV);
            if (MPI_SUCCESS != err) { goto err_hndl; }
            CG_CTAG_BEGIN(CG_CTAG_ALLREDUCE_REDUCE_SCATTER_ALLGATHER__RS_STEP__ROUND__REDUCE_LOCAL);
            err = MPI_Reduce_local(tmp + keep_off * (size_t)extent,
                                   rbuf + keep_off * (size_t)extent, (int)keep_n, datatype, op);
            CG_CTAG_END(CG_CTAG_ALLREDUCE_REDUCE_SCATTER_ALLGATHER__RS_STEP__ROUND__REDUCE_LOCAL);
            if (MPI_SUCCESS != err) { goto err_hndl; }
            lo = keep_lo;
            hi = keep_hi;
            CG_CTAG_END(CG_CTAG_ALLREDUCE_REDUCE_SCATTER_ALLGATHER__RS_STEP__ROUND);
        }
    }
    CG_CTAG_END(CG_CTAG_ALLREDUCE_REDUCE_SCATTER_ALLGATHER__RS_STEP);

    CG_CTAG_BEGIN(CG_CTAG_ALLREDUCE_REDUCE_SCATTER_ALLGATHER__AG_STEP);
    if (newrank >= 0) {
        for (ag_step = nsteps - 1; ag_step >= 0; ag_step--) {
            CG_CTAG_NEXT(CG_CTAG_ALLREDUCE_REDUCE_SCATTER_ALLGATHER__AG_STEP__ROUND);
            int newremote = newrank ^ (1 << ag_step);
            int remote = (newremote < rem) ? newremote * 2 + 1 : newremote + rem;
            int mid = (lo_at[ag_step] + hi_at[ag_step]) / 2;
            int other_lo = (newrank < newremote) ? mid : lo_at[ag_step];
            int other_hi = (newrank < newremote) ? hi_at[ag_step] : mid;
            size_t mine_off = block_off(count, pof2, lo);
            size_t mine_n = block_off(count, pof2, hi) - mine_off;
            size_t other_off = block_off(count, pof2, other_lo);
            size_t other_n = block_off(count, pof2, other_hi) - other_off;
            CG_CTAG_BEGIN(CG_CTAG_ALLREDUCE_REDUCE_SCATTER_ALLGATHER__AG_STEP__ROUND__SENDRECV);
            err = MPI_Sendrecv(rbuf + mine_off * (size_t)extent, (int)mine_n, datatype, remote, 10,
                               rbuf + other_off * (size_t)extent, (int)other_n, datatype, remote,
                               10, comm, MPI_STATUS_IGNORE);
            CG_CTAG_END(CG_CTAG_ALLREDUCE_REDUCE_SCATTER_ALLGATHER__AG_STEP__ROUND__SENDRECV);
            if (MPI_SUCCESS != err) { goto err_hndl; }
            lo = lo_at[ag_step];
            hi = hi_at[ag_step];
            CG_CTAG_END(CG_CTAG_ALLREDUCE_REDUCE_SCATTER_ALLGATHER__AG_STEP__ROUND);
        }
    }
    CG_CTAG_END(CG_CTAG_ALLREDUCE_REDUCE_SCATTER_ALLGATHER__AG_STEP);

    CG_CTAG_BEGIN(CG_CTAG_ALLREDUCE_REDUCE_SCATTER_ALLGATHER__UNFOLD);
    CG_CTAG_BEGIN(CG_CTAG_ALLREDUCE_REDUCE_SCATTER_ALLGATHER__UNFOLD__UNFOLD);
    err = unfold(rbuf, count, datatype, comm, rank, rem);
    CG_CTAG_END(CG_CTAG_ALLREDUCE_REDUCE_SCATTER_ALLGATHER__UNFOLD__UNFOLD);
    CG_CTAG_END(CG_CTAG_ALLREDUCE_REDUCE_SCATTER_ALLGATHER__UNFOLD);
    if (MPI_SUCCESS != err) { goto err_hndl; }
    free(tmp);
    return MPI_SUCCESS;

err_hndl:
    CG_CTAG_UNWIND(CG_CTAG_ALLREDUCE_REDUCE_SCATTER_ALLGATHER);
    free(tmp);
    return err;
}
