/* tests/cuda/mock_reduce.cu - cg_cu_reduce for the mock CUDA runtime
 * (mock_cuda.c): the host reference (cu_ref.h) applied at once on host
 * memory, with runtime/cuda/reduce.cu's argument checks. Host code only; the
 * kernel itself is tested on a GPU (test_reduce).
 */
#include "cu_ref.h"

extern "C" int cg_cu_reduce(void *into, const void *from, size_t n, cg_cu_dtype dtype, cg_cu_op op,
                            int order, cudaStream_t stream)
{
    (void)stream;
    if (((int)dtype < 0) || (dtype >= CG_CU_NDTYPES)) {
        cg_set_error("collgen: cg_cu_reduce: no such element type (%d)", (int)dtype);
        return MPI_ERR_TYPE;
    }
    if (((int)op < 0) || (op >= CG_CU_NOPS)) {
        cg_set_error("collgen: cg_cu_reduce: no such op (%d)", (int)op);
        return MPI_ERR_OP;
    }
    if ((order != CG_INTO_FROM) && (order != CG_FROM_INTO)) {
        cg_set_error("collgen: cg_cu_reduce: order must be CG_INTO_FROM or CG_FROM_INTO, not %d",
                     order);
        return MPI_ERR_ARG;
    }
    if (n == 0) {
        return MPI_SUCCESS;
    }
    if ((into == NULL) || (from == NULL)) {
        cg_set_error("collgen: cg_cu_reduce: NULL buffer for %zu elements", n);
        return MPI_ERR_BUFFER;
    }
    const size_t es = cg_cu_dtype_size(dtype);
    for (size_t i = 0; i < n; i++) {
        cu_ref1(dtype, op, order, (char *)into + i * es, (const char *)from + i * es);
    }
    return MPI_SUCCESS;
}
