/* allgather.c - allgather baselines in plain MPI, written for collgen after
 * the published descriptions of the algorithms of Open MPI's coll_base
 * (README.md here). Signature: MPI_Allgather's with size_t counts;
 * MPI_IN_PLACE as sendbuf (this rank's block is then already in place).
 * Block j of recvbuf is rank j's. Errors are returned as soon as a call
 * fails.
 */
#include <string.h>

#include "common.h"

/* Copies the send block into recvbuf's block `to` with the send datatype:
 * MPI_Sendrecv on MPI_COMM_SELF, which converts between the two types. */
#include "tags.h" /* collgen tag: timing tags (CG_TAGS) */
static int copy_own_block(const void *sendbuf, size_t scount, MPI_Datatype stype, char *recvbuf,
                          size_t rcount, MPI_Datatype rtype, MPI_Aint rext, int to)
{
    CG_CTAG_FUNCTION(CG_CTAG_COPY_OWN_BLOCK);
    if (sendbuf == MPI_IN_PLACE) {
        return MPI_SUCCESS;
    }
    CG_CTAG_BEGIN(CG_CTAG_COPY_OWN_BLOCK__SENDRECV);
    CG_CTAG_BEGIN(CG_CTAG_COPY_OWN_BLOCK__SENDRECV__SENDRECV);
    return MPI_Sendrecv(sendbuf, (int)scount, stype, 0, 16,
                        recvbuf + (size_t)to * rcount * (size_t)rext, (int)rcount, rtype, 0, 16,
                        MPI_COMM_SELF, MPI_STATUS_IGNORE);
}

/* rank, size and the receive datatype's extent; MPI_ERR_COUNT when a
 * count, or blocks of them, would pass INT_MAX. */
static int start(size_t sendcount, size_t recvcount, int blocks, MPI_Datatype recvtype,
                 MPI_Comm comm, int *rank, int *size, MPI_Aint *ext)
{
    MPI_Aint lb;

    MPI_Comm_rank(comm, rank);
    MPI_Comm_size(comm, size);
    MPI_Type_get_extent(recvtype, &lb, ext);
    if (blocks < 0) {
        blocks = *size;
    }
    return (sendcount > INT_MAX || recvcount > INT_MAX / (size_t)blocks) ? MPI_ERR_COUNT
                                                                          : MPI_SUCCESS;
}

/* Ring (Open MPI's coll_base_allgather_intra_ring): in step k each rank
 * sends block rank - k to the right and receives block rank - k - 1 from
 * the left. */
int allgather_ring(const void *sendbuf, size_t sendcount, MPI_Datatype sendtype, void *recvbuf,
                   size_t recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    CG_CTAG_FUNCTION(CG_CTAG_ALLGATHER_RING);
    int rank, size, rc, k;
    MPI_Aint ext;
    char *rbuf = recvbuf;

    if ((rc = start(sendcount, recvcount, 1, recvtype, comm, &rank, &size, &ext)) !=
        MPI_SUCCESS) {
        return rc;
    }
    CG_CTAG_BEGIN(CG_CTAG_ALLGATHER_RING__COPY_OWN_BLOCK);
    CG_CTAG_BEGIN(CG_CTAG_ALLGATHER_RING__COPY_OWN_BLOCK__COPY_OWN_BLOCK);
    if ((rc = copy_own_block(sendbuf, sendcount, sendtype, rbuf, recvcount, recvtype, ext,
                             rank)) != MPI_SUCCESS) {
        return rc;
    }
    CG_CTAG_END(CG_CTAG_ALLGATHER_RING__COPY_OWN_BLOCK__COPY_OWN_BLOCK);
    CG_CTAG_END(CG_CTAG_ALLGATHER_RING__COPY_OWN_BLOCK);
    int right = (rank + 1) % size;
    int left = (rank - 1 + size) % size;
    size_t bytes = recvcount * (size_t)ext;
    CG_CTAG_BEGIN(CG_CTAG_ALLGATHER_RING__K);
    for (k = 0; k < size - 1; k++) {
        CG_CTAG_NEXT(CG_CTAG_ALLGATHER_RING__K__ROUND);
        int sb = (rank - k + size) % size;
        int rb = (rank - k - 1 + size) % size;
        CG_CTAG_BEGIN(CG_CTAG_ALLGATHER_RING__K__ROUND__SENDRECV);
        rc = MPI_Sendrecv(rbuf + (size_t)sb * bytes, (int)recvcount, recvtype, right, 17,
                          rbuf + (size_t)rb * bytes, (int)recvcount, recvtype, left, 17, comm,
                          MPI_STATUS_IGNORE);
        CG_CTAG_END(CG_CTAG_ALLGATHER_RING__K__ROUND__SENDRECV);
        if (rc != MPI_SUCCESS) return rc;
        CG_CTAG_END(CG_CTAG_ALLGATHER_RING__K__ROUND);
    }
    CG_CTAG_END(CG_CTAG_ALLGATHER_RING__K);
    return MPI_SUCCESS;
}

/* Bruck (Open MPI's coll_base_allgather_intra_bruck): the blocks are kept
 * shifted, this rank's at position 0. In the step with distance d = 1, 2,
 * 4, ... each rank sends its first min(d, p - d) blocks to rank - d and
 * appends as many from rank + d; after ceil(log2 p) steps position i holds
 * rank (rank + i)'s block, and a rotation by rank puts every block at its
 * place. The blocks must be contiguous (the rotation copies bytes). */
int allgather_bruck(const void *sendbuf, size_t sendcount, MPI_Datatype sendtype, void *recvbuf,
                    size_t recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    CG_CTAG_FUNCTION(CG_CTAG_ALLGATHER_BRUCK);
    int rank, size, rc, distance;
    MPI_Aint ext;
    char *rbuf = recvbuf;

    if ((rc = start(sendcount, recvcount, -1, recvtype, comm, &rank, &size, &ext)) !=
        MPI_SUCCESS) {
        return rc;
    }
    size_t bytes = recvcount * (size_t)ext;
    CG_CTAG_BEGIN(CG_CTAG_ALLGATHER_BRUCK__MEMCPY);
    CG_CTAG_BEGIN(CG_CTAG_ALLGATHER_BRUCK__MEMCPY__MEMCPY);
    if (sendbuf == MPI_IN_PLACE) {
        if (rank != 0 && bytes > 0) {
            memcpy(rbuf, rbuf + (size_t)rank * bytes, bytes);
        }
    } else if ((rc = copy_own_block(sendbuf, sendcount, sendtype, rbuf, recvcount, recvtype, ext,
                                    0)) != MPI_SUCCESS) {
        return rc;
    }
    CG_CTAG_END(CG_CTAG_ALLGATHER_BRUCK__MEMCPY__MEMCPY);
    CG_CTAG_END(CG_CTAG_ALLGATHER_BRUCK__MEMCPY);

    CG_CTAG_BEGIN(CG_CTAG_ALLGATHER_BRUCK__DISTANCE);
    for (distance = 1; distance < size; distance <<= 1) {
        CG_CTAG_NEXT(CG_CTAG_ALLGATHER_BRUCK__DISTANCE__ROUND);
        int to = (rank - distance + size) % size;
        int from = (rank + distance) % size;
        int blocks = (distance <= size - distance) ? distance : size - distance;
        CG_CTAG_BEGIN(CG_CTAG_ALLGATHER_BRUCK__DISTANCE__ROUND__SENDRECV);
        rc = MPI_Sendrecv(rbuf, blocks * (int)recvcount, recvtype, to, 18,
                          rbuf + (size_t)distance * bytes, blocks * (int)recvcount, recvtype, from,
                          18, comm, MPI_STATUS_IGNORE);
        CG_CTAG_END(CG_CTAG_ALLGATHER_BRUCK__DISTANCE__ROUND__SENDRECV);
        if (rc != MPI_SUCCESS) return rc;
        CG_CTAG_END(CG_CTAG_ALLGATHER_BRUCK__DISTANCE__ROUND);
    }
    CG_CTAG_END(CG_CTAG_ALLGATHER_BRUCK__DISTANCE);

    /* Rotate: positions 0 .. p-rank-1 hold blocks rank .. p-1, the rest
     * blocks 0 .. rank-1. */
    CG_CTAG_BEGIN(CG_CTAG_ALLGATHER_BRUCK__MEMCPY_2);
    if (rank != 0 && bytes > 0) {
        char *tmp = malloc((size_t)(size - rank) * bytes);
        if (tmp == NULL) {
            return MPI_ERR_NO_MEM;
        }
        CG_CTAG_BEGIN(CG_CTAG_ALLGATHER_BRUCK__MEMCPY_2__MEMCPY);
        memcpy(tmp, rbuf, (size_t)(size - rank) * bytes);
        CG_CTAG_END(CG_CTAG_ALLGATHER_BRUCK__MEMCPY_2__MEMCPY);
        CG_CTAG_BEGIN(CG_CTAG_ALLGATHER_BRUCK__MEMCPY_2__MEMMOVE);
        memmove(rbuf, rbuf + (size_t)(size - rank) * bytes, (size_t)rank * bytes);
        CG_CTAG_END(CG_CTAG_ALLGATHER_BRUCK__MEMCPY_2__MEMMOVE);
        CG_CTAG_BEGIN(CG_CTAG_ALLGATHER_BRUCK__MEMCPY_2__MEMCPY_2);
        memcpy(rbuf + (size_t)rank * bytes, tmp, (size_t)(size - rank) * bytes);
        CG_CTAG_END(CG_CTAG_ALLGATHER_BRUCK__MEMCPY_2__MEMCPY_2);
        free(tmp);
    }
    CG_CTAG_END(CG_CTAG_ALLGATHER_BRUCK__MEMCPY_2);
    return MPI_SUCCESS;
}

/* Recursive doubling (Open MPI's coll_base_allgather_intra_recursivedoubling):
 * at distance d = 1, 2, 4, ... rank exchanges the d blocks of its aligned
 * group, [rank & ~(d - 1), + d), with rank ^ d, which holds the
 * neighbouring group. Powers of two only; otherwise Bruck, as Open MPI
 * falls back to it. */
int allgather_recursive_doubling(const void *sendbuf, size_t sendcount, MPI_Datatype sendtype,
                                 void *recvbuf, size_t recvcount, MPI_Datatype recvtype,
                                 MPI_Comm comm)
{
    CG_CTAG_FUNCTION(CG_CTAG_ALLGATHER_RECURSIVE_DOUBLING);
    int rank, size, rc, distance;
    MPI_Aint ext;
    char *rbuf = recvbuf;

    if ((rc = start(sendcount, recvcount, -1, recvtype, comm, &rank, &size, &ext)) !=
        MPI_SUCCESS) {
        return rc;
    }
    CG_CTAG_BEGIN(CG_CTAG_ALLGATHER_RECURSIVE_DOUBLING__ALLGATHER_BRUCK);
    if ((size & (size - 1)) != 0) {
        CG_CTAG_BEGIN(CG_CTAG_ALLGATHER_RECURSIVE_DOUBLING__ALLGATHER_BRUCK__ALLGATHER_BRUCK);
        return allgather_bruck(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    }
    CG_CTAG_END(CG_CTAG_ALLGATHER_RECURSIVE_DOUBLING__ALLGATHER_BRUCK);
    CG_CTAG_BEGIN(CG_CTAG_ALLGATHER_RECURSIVE_DOUBLING__COPY_OWN_BLOCK);
    CG_CTAG_BEGIN(CG_CTAG_ALLGATHER_RECURSIVE_DOUBLING__COPY_OWN_BLOCK__COPY_OWN_BLOCK);
    if ((rc = copy_own_block(sendbuf, sendcount, sendtype, rbuf, recvcount, recvtype, ext,
                             rank)) != MPI_SUCCESS) {
        return rc;
    }
    CG_CTAG_END(CG_CTAG_ALLGATHER_RECURSIVE_DOUBLING__COPY_OWN_BLOCK__COPY_OWN_BLOCK);
    CG_CTAG_END(CG_CTAG_ALLGATHER_RECURSIVE_DOUBLING__COPY_OWN_BLOCK);
    size_t bytes = recvcount * (size_t)ext;
    CG_CTAG_BEGIN(CG_CTAG_ALLGATHER_RECURSIVE_DOUBLING__DISTANCE);
    for (distance = 1; distance < size; distance <<= 1) {
        CG_CTAG_NEXT(CG_CTAG_ALLGATHER_RECURSIVE_DOUBLING__DISTANCE__ROUND);
        int remote = rank ^ distance;
        int mine = rank & ~(distance - 1);
        int theirs = remote & ~(distance - 1);
        CG_CTAG_BEGIN(CG_CTAG_ALLGATHER_RECURSIVE_DOUBLING__DISTANCE__ROUND__SENDRECV);
        rc = MPI_Sendrecv(rbuf + (size_t)mine * bytes, distance * (int)recvcount, recvtype, remote,
                          19, rbuf + (size_t)theirs * bytes, distance * (int)recvcount, recvtype,
                          remote, 19, comm, MPI_STATUS_IGNORE);
        CG_CTAG_END(CG_CTAG_ALLGATHER_RECURSIVE_DOUBLING__DISTANCE__ROUND__SENDRECV);
        if (rc != MPI_SUCCESS) return rc;
        CG_CTAG_END(CG_CTAG_ALLGATHER_RECURSIVE_DOUBLING__DISTANCE__ROUND);
    }
    CG_CTAG_END(CG_CTAG_ALLGATHER_RECURSIVE_DOUBLING__DISTANCE);
    return MPI_SUCCESS;
}

/* Neighbor exchange (Open MPI's coll_base_allgather_intra_neighborexchange,
 * after Chen et al.): ranks pair up (2q, 2q + 1) and first swap their
 * blocks, so each holds its pair's two. Then p/2 - 1 steps, alternately
 * with the neighbour on the other side and the pair partner: each sends
 * the two blocks it received last and receives two new ones, the pairs
 * arriving from alternate sides, nearest first. Even p only; otherwise the
 * ring, as Open MPI falls back to it. */
int allgather_neighbor_exchange(const void *sendbuf, size_t sendcount, MPI_Datatype sendtype,
                                void *recvbuf, size_t recvcount, MPI_Datatype recvtype,
                                MPI_Comm comm)
{
    CG_CTAG_FUNCTION(CG_CTAG_ALLGATHER_NEIGHBOR_EXCHANGE);
    int rank, size, rc, i;
    MPI_Aint ext;
    char *rbuf = recvbuf;

    if ((rc = start(sendcount, recvcount, 2, recvtype, comm, &rank, &size, &ext)) !=
        MPI_SUCCESS) {
        return rc;
    }
    CG_CTAG_BEGIN(CG_CTAG_ALLGATHER_NEIGHBOR_EXCHANGE__ALLGATHER_RING);
    if (size % 2 != 0) {
        CG_CTAG_BEGIN(CG_CTAG_ALLGATHER_NEIGHBOR_EXCHANGE__ALLGATHER_RING__ALLGATHER_RING);
        return allgather_ring(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    }
    CG_CTAG_END(CG_CTAG_ALLGATHER_NEIGHBOR_EXCHANGE__ALLGATHER_RING);
    CG_CTAG_BEGIN(CG_CTAG_ALLGATHER_NEIGHBOR_EXCHANGE__COPY_OWN_BLOCK);
    CG_CTAG_BEGIN(CG_CTAG_ALLGATHER_NEIGHBOR_EXCHANGE__COPY_OWN_BLOCK__COPY_OWN_BLOCK);
    if ((rc = copy_own_block(sendbuf, sendcount, sendtype, rbuf, recvcount, recvtype, ext,
                             rank)) != MPI_SUCCESS) {
        return rc;
    }
    CG_CTAG_END(CG_CTAG_ALLGATHER_NEIGHBOR_EXCHANGE__COPY_OWN_BLOCK__COPY_OWN_BLOCK);
    CG_CTAG_END(CG_CTAG_ALLGATHER_NEIGHBOR_EXCHANGE__COPY_OWN_BLOCK);
    size_t bytes = recvcount * (size_t)ext;
    int even = rank % 2 == 0;
    int neighbor[2];
    neighbor[0] = even ? (rank + 1) % size : rank - 1;     /* the pair partner */
    neighbor[1] = even ? (rank - 1 + size) % size : (rank + 1) % size;
    int dir = even ? -1 : 1; /* the side the first new pair comes from */
    int half = size / 2;
    int pair = rank / 2;

    CG_CTAG_BEGIN(CG_CTAG_ALLGATHER_NEIGHBOR_EXCHANGE__SENDRECV);
    CG_CTAG_BEGIN(CG_CTAG_ALLGATHER_NEIGHBOR_EXCHANGE__SENDRECV__SENDRECV);
    rc = MPI_Sendrecv(rbuf + (size_t)rank * bytes, (int)recvcount, recvtype, neighbor[0], 20,
                      rbuf + (size_t)neighbor[0] * bytes, (int)recvcount, recvtype, neighbor[0], 20,
                      comm, MPI_STATUS_IGNORE);
    CG_CTAG_END(CG_CTAG_ALLGATHER_NEIGHBOR_EXCHANGE__SENDRECV__SENDRECV);
    CG_CTAG_END(CG_CTAG_ALLGATHER_NEIGHBOR_EXCHANGE__SENDRECV);
    if (rc != MPI_SUCCESS) return rc;

    int send_pair = pair;
    CG_CTAG_BEGIN(CG_CTAG_ALLGATHER_NEIGHBOR_EXCHANGE__I);
    for (i = 1; i < half; i++) {
        CG_CTAG_NEXT(CG_CTAG_ALLGATHER_NEIGHBOR_EXCHANGE__I__ROUND);
        int k = (i + 1) / 2;
        int recv_pair = (i % 2 == 1) ? pair + dir * k : pair - dir * k;
        recv_pair = ((recv_pair % half) + half) % half;
        int peer = neighbor[i % 2];
        CG_CTAG_BEGIN(CG_CTAG_ALLGATHER_NEIGHBOR_EXCHANGE__I__ROUND__SENDRECV);
        rc = MPI_Sendrecv(rbuf + (size_t)(2 * send_pair) * bytes, 2 * (int)recvcount, recvtype,
                          peer, 21, rbuf + (size_t)(2 * recv_pair) * bytes, 2 * (int)recvcount,
                          recvtype, peer, 21, comm, MPI_STATUS_IGNORE);
        CG_CTAG_END(CG_CTAG_ALLGATHER_NEIGHBOR_EXCHANGE__I__ROUND__SENDRECV);
        if (rc != MPI_SUCCESS) return rc;
        send_pair = recv_pair;
        CG_CTAG_END(CG_CTAG_ALLGATHER_NEIGHBOR_EXCHANGE__I__ROUND);
    }
    CG_CTAG_END(CG_CTAG_ALLGATHER_NEIGHBOR_EXCHANGE__I);
    return MPI_SUCCESS;
}
