/* bcast.c - bcast baselines in plain MPI, written for collgen after the
 * published descriptions of the algorithms of MPICH and Open MPI's
 * coll_base (README.md here). Signature: MPI_Bcast's with a size_t count.
 * Ranks are renumbered relative to the root (vrank 0 is the root). Errors
 * are returned, in MPICH's style: mpi_errno checked, a goto to fn_fail.
 */
#include "common.h"

/* rank, size and the datatype's extent; MPI_ERR_COUNT above INT_MAX. */
static int start(size_t count, MPI_Datatype datatype, MPI_Comm comm, int *rank, int *size,
                 MPI_Aint *extent)
{
    MPI_Aint lb;

    MPI_Comm_rank(comm, rank);
    MPI_Comm_size(comm, size);
    MPI_Type_get_extent(datatype, &lb, extent);
    return count > INT_MAX ? MPI_ERR_COUNT : MPI_SUCCESS;
}

/* Binomial tree (MPICH's MPIR_Bcast_intra_binomial): a rank receives the
 * whole buffer from the rank its lowest set bit away (vrank - mask), then
 * sends it to vrank + mask for each smaller mask, largest first, so that
 * the bigger subtrees start earlier. */
int bcast_binomial(void *buffer, size_t count, MPI_Datatype datatype, int root, MPI_Comm comm)
{
    int rank, size, mask, mpi_errno = MPI_SUCCESS;
    MPI_Aint extent;

    mpi_errno = start(count, datatype, comm, &rank, &size, &extent);
    if (mpi_errno || size == 1 || count == 0)
        return mpi_errno;
    int vrank = (rank - root + size) % size;

    mask = 1;
    while (mask < size) {
        if (vrank & mask) {
            int src = (rank - mask + size) % size;
            mpi_errno = MPI_Recv(buffer, (int)count, datatype, src, 12, comm, MPI_STATUS_IGNORE);
            if (mpi_errno) goto fn_fail;
            break;
        }
        mask <<= 1;
    }
    mask >>= 1;
    while (mask > 0) {
        if (vrank + mask < size) {
            int dst = (rank + mask) % size;
            mpi_errno = MPI_Send(buffer, (int)count, datatype, dst, 12, comm);
            if (mpi_errno) goto fn_fail;
        }
        mask >>= 1;
    }
    return MPI_SUCCESS;

fn_fail:
    return mpi_errno;
}

/* Pipeline (Open MPI's coll_base_bcast_intra_pipeline, a chain of one
 * child): the buffer is cut into segments of at most segment_bytes(); the
 * root sends them down the chain vrank 0 -> 1 -> ... -> p-1; every other
 * rank posts the receive of segment s + 1 before it waits for segment s
 * and passes it on, so that each link carries a segment while the next one
 * arrives. */
int bcast_pipeline(void *buffer, size_t count, MPI_Datatype datatype, int root, MPI_Comm comm)
{
    int rank, size, seg, mpi_errno = MPI_SUCCESS;
    MPI_Aint extent;
    MPI_Request reqs[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    char *buf = buffer;

    mpi_errno = start(count, datatype, comm, &rank, &size, &extent);
    if (mpi_errno || size == 1 || count == 0)
        return mpi_errno;
    int vrank = (rank - root + size) % size;
    int prev = (rank - 1 + size) % size;
    int next = (rank + 1) % size;
    size_t per_seg = segment_bytes() / (size_t)(extent > 0 ? extent : 1);
    if (per_seg == 0)
        per_seg = 1;
    int nseg = (int)((count + per_seg - 1) / per_seg);

    if (vrank == 0) {
        for (seg = 0; seg < nseg; seg++) {
            size_t first = (size_t)seg * per_seg;
            size_t n = count - first < per_seg ? count - first : per_seg;
            mpi_errno = MPI_Send(buf + first * (size_t)extent, (int)n, datatype, next, 13, comm);
            if (mpi_errno) goto fn_fail;
        }
        return MPI_SUCCESS;
    }
    mpi_errno = MPI_Irecv(buf, (int)(count < per_seg ? count : per_seg), datatype, prev, 13, comm,
                          &reqs[0]);
    if (mpi_errno) goto fn_fail;
    for (seg = 0; seg < nseg; seg++) {
        size_t first = (size_t)seg * per_seg;
        size_t n = count - first < per_seg ? count - first : per_seg;
        if (seg + 1 < nseg) {
            size_t nfirst = first + per_seg;
            size_t nn = count - nfirst < per_seg ? count - nfirst : per_seg;
            mpi_errno = MPI_Irecv(buf + nfirst * (size_t)extent, (int)nn, datatype, prev, 13, comm,
                                  &reqs[(seg + 1) % 2]);
            if (mpi_errno) goto fn_fail;
        }
        mpi_errno = MPI_Wait(&reqs[seg % 2], MPI_STATUS_IGNORE);
        if (mpi_errno) goto fn_fail;
        if (vrank < size - 1) {
            mpi_errno = MPI_Send(buf + first * (size_t)extent, (int)n, datatype, next, 13, comm);
            if (mpi_errno) goto fn_fail;
        }
    }
    return MPI_SUCCESS;

fn_fail:
    return mpi_errno;
}

/* Scatter + ring allgather (MPICH's MPIR_Bcast_intra_scatter_ring_allgather,
 * Van de Geijn's bcast): the buffer is cut into p blocks, block v going to
 * vrank v. Scatter down a binomial tree: a rank receives from vrank - mask
 * (mask its lowest set bit) the blocks of its subtree, [vrank, vrank +
 * mask), and sends each child vrank + m (m < mask) the blocks [vrank + m,
 * vrank + 2m). Allgather around the ring of vranks: p - 1 steps, each
 * passing on the block received in the step before. */
int bcast_scatter_allgather(void *buffer, size_t count, MPI_Datatype datatype, int root,
                            MPI_Comm comm)
{
    int rank, size, mask, ag_step, mpi_errno = MPI_SUCCESS;
    MPI_Aint extent;
    char *buf = buffer;

    mpi_errno = start(count, datatype, comm, &rank, &size, &extent);
    if (mpi_errno || size == 1 || count == 0)
        return mpi_errno;
    int vrank = (rank - root + size) % size;

    /* Scatter: receive this subtree's blocks. */
    mask = 1;
    while (mask < size) {
        if (vrank & mask) {
            int hi = vrank + mask < size ? vrank + mask : size;
            size_t first = block_off(count, size, vrank);
            size_t n = block_off(count, size, hi) - first;
            int src = (rank - mask + size) % size;
            mpi_errno = MPI_Recv(buf + first * (size_t)extent, (int)n, datatype, src, 14, comm,
                                 MPI_STATUS_IGNORE);
            if (mpi_errno) goto fn_fail;
            break;
        }
        mask <<= 1;
    }
    /* ... and pass each child its part. */
    mask >>= 1;
    while (mask > 0) {
        if (vrank + mask < size) {
            int hi = vrank + 2 * mask < size ? vrank + 2 * mask : size;
            size_t first = block_off(count, size, vrank + mask);
            size_t n = block_off(count, size, hi) - first;
            int dst = (rank + mask) % size;
            mpi_errno = MPI_Send(buf + first * (size_t)extent, (int)n, datatype, dst, 14, comm);
            if (mpi_errno) goto fn_fail;
        }
        mask >>= 1;
    }

    /* Allgather around the ring of vranks. */
    int right = (rank + 1) % size;
    int left = (rank - 1 + size) % size;
    for (ag_step = 0; ag_step < size - 1; ag_step++) {
        int sb = (vrank - ag_step + size) % size;
        int rb = (vrank - ag_step - 1 + size) % size;
        mpi_errno = MPI_Sendrecv(buf + block_off(count, size, sb) * (size_t)extent,
                                 (int)block_len(count, size, sb), datatype, right, 15,
                                 buf + block_off(count, size, rb) * (size_t)extent,
                                 (int)block_len(count, size, rb), datatype, left, 15, comm,
                                 MPI_STATUS_IGNORE);
        if (mpi_errno) goto fn_fail;
    }
    return MPI_SUCCESS;

fn_fail:
    return mpi_errno;
}
