/* tests/cuda/ring.h - hand-written GPU ring collectives (ring.cu), the shape
 * the CUDA emitter will generate: the MPI collective's signature on device
 * buffers, with a cg_cu_dtype / cg_cu_op instead of MPI handles and the
 * caller's stream last. Every operation is enqueued on the stream; the call
 * returns without waiting for the GPU.
 */
#ifndef CG_TESTS_CUDA_RING_H
#define CG_TESTS_CUDA_RING_H

#include "cg_cuda.h"

#ifdef __cplusplus
extern "C" {
#endif

/* schedules/allreduce/ring.json on device buffers; sendbuf may be
 * CG_CU_IN_PLACE (recvbuf holds the input). */
int cg_cu_allreduce_ring(const void *sendbuf, void *recvbuf, size_t count, cg_cu_dtype dtype,
                         cg_cu_op op, MPI_Comm comm, cudaStream_t stream);

/* schedules/allgather/ring.json on device buffers; sendbuf may be
 * CG_CU_IN_PLACE (block `rank` of recvbuf holds the input); sendcount must
 * equal recvcount. */
int cg_cu_allgather_ring(const void *sendbuf, size_t sendcount, void *recvbuf, size_t recvcount,
                         cg_cu_dtype dtype, MPI_Comm comm, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif
