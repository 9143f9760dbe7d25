/* dtype.c - element types and ops of the CUDA runtime: sizes, names, and the
 * mappings from MPI's and NCCL's handles.
 */
#include "cg_cuda_internal.h"

static const size_t cg_cu_sizes[CG_CU_NDTYPES] = { 4, 8, 2, 2, 4, 8 };
static const char *const cg_cu_dtype_names[CG_CU_NDTYPES] = {
    "float32", "float64", "float16", "bfloat16", "int32", "int64"
};
static const char *const cg_cu_op_names[CG_CU_NOPS] = { "sum", "prod", "min", "max" };

size_t cg_cu_dtype_size(cg_cu_dtype dtype)
{
    return (((int)dtype >= 0) && (dtype < CG_CU_NDTYPES)) ? cg_cu_sizes[dtype] : 0;
}

const char *cg_cu_dtype_name(cg_cu_dtype dtype)
{
    return (((int)dtype >= 0) && (dtype < CG_CU_NDTYPES)) ? cg_cu_dtype_names[dtype] : "?";
}

const char *cg_cu_op_name(cg_cu_op op)
{
    if (op == CG_CU_OP_NONE) {
        return "none";
    }
    return (((int)op >= 0) && (op < CG_CU_NOPS)) ? cg_cu_op_names[op] : "?";
}

/* Why by size for the C integer types: MPI_INT, MPI_LONG and MPI_LONG_LONG
 * are 4 or 8 bytes depending on the platform; the kernels are by width. */
static int cg_cu_int_by_size(MPI_Datatype type, cg_cu_dtype *dtype)
{
    int size = 0;
    if (MPI_Type_size(type, &size) != MPI_SUCCESS) {
        return 0;
    }
    if (size == 4) {
        *dtype = CG_CU_INT32;
        return 1;
    }
    if (size == 8) {
        *dtype = CG_CU_INT64;
        return 1;
    }
    return 0;
}

int cg_cu_dtype_from_mpi(MPI_Datatype type, cg_cu_dtype *dtype)
{
    if (type == MPI_FLOAT) {
        *dtype = CG_CU_FLOAT32;
        return MPI_SUCCESS;
    }
    if (type == MPI_DOUBLE) {
        *dtype = CG_CU_FLOAT64;
        return MPI_SUCCESS;
    }
    if (type == MPI_INT32_T) {
        *dtype = CG_CU_INT32;
        return MPI_SUCCESS;
    }
    if (type == MPI_INT64_T) {
        *dtype = CG_CU_INT64;
        return MPI_SUCCESS;
    }
#ifdef MPIX_C_FLOAT16
    if (type == MPIX_C_FLOAT16) {
        *dtype = CG_CU_FLOAT16;
        return MPI_SUCCESS;
    }
#endif
    if (((type == MPI_INT) || (type == MPI_LONG) || (type == MPI_LONG_LONG)) &&
        cg_cu_int_by_size(type, dtype)) {
        return MPI_SUCCESS;
    }
    cg_set_error("collgen: this MPI datatype has no CUDA kernel (float, double, int32, int64 "
                 "and their C names are mapped)");
    return MPI_ERR_TYPE;
}

int cg_cu_op_from_mpi(MPI_Op mop, cg_cu_op *op)
{
    if (mop == MPI_SUM) {
        *op = CG_CU_SUM;
    } else if (mop == MPI_PROD) {
        *op = CG_CU_PROD;
    } else if (mop == MPI_MIN) {
        *op = CG_CU_MIN;
    } else if (mop == MPI_MAX) {
        *op = CG_CU_MAX;
    } else {
        cg_set_error("collgen: this MPI op has no CUDA kernel (MPI_SUM, MPI_PROD, MPI_MIN and "
                     "MPI_MAX are mapped)");
        return MPI_ERR_OP;
    }
    return MPI_SUCCESS;
}

#ifndef CG_CUDA_NO_NCCL
int cg_cu_dtype_from_nccl(ncclDataType_t type, cg_cu_dtype *dtype)
{
    switch (type) {
    case ncclFloat32:
        *dtype = CG_CU_FLOAT32;
        return MPI_SUCCESS;
    case ncclFloat64:
        *dtype = CG_CU_FLOAT64;
        return MPI_SUCCESS;
    case ncclFloat16:
        *dtype = CG_CU_FLOAT16;
        return MPI_SUCCESS;
    case ncclBfloat16:
        *dtype = CG_CU_BFLOAT16;
        return MPI_SUCCESS;
    case ncclInt32:
        *dtype = CG_CU_INT32;
        return MPI_SUCCESS;
    case ncclInt64:
        *dtype = CG_CU_INT64;
        return MPI_SUCCESS;
    default:
        cg_set_error("collgen: NCCL datatype %d has no CUDA kernel here", (int)type);
        return MPI_ERR_TYPE;
    }
}

int cg_cu_op_from_nccl(ncclRedOp_t nop, cg_cu_op *op)
{
    switch (nop) {
    case ncclSum:
        *op = CG_CU_SUM;
        return MPI_SUCCESS;
    case ncclProd:
        *op = CG_CU_PROD;
        return MPI_SUCCESS;
    case ncclMin:
        *op = CG_CU_MIN;
        return MPI_SUCCESS;
    case ncclMax:
        *op = CG_CU_MAX;
        return MPI_SUCCESS;
    default:
        cg_set_error("collgen: NCCL op %d has no CUDA kernel here (ncclAvg and custom ops are "
                     "not mapped)", (int)nop);
        return MPI_ERR_OP;
    }
}

ncclDataType_t cg_cu_dtype_to_nccl(cg_cu_dtype dtype)
{
    static const ncclDataType_t map[CG_CU_NDTYPES] = { ncclFloat32, ncclFloat64, ncclFloat16,
                                                       ncclBfloat16, ncclInt32, ncclInt64 };
    return (((int)dtype >= 0) && (dtype < CG_CU_NDTYPES)) ? map[dtype] : ncclInt8;
}

ncclRedOp_t cg_cu_op_to_nccl(cg_cu_op op)
{
    static const ncclRedOp_t map[CG_CU_NOPS] = { ncclSum, ncclProd, ncclMin, ncclMax };
    return (((int)op >= 0) && (op < CG_CU_NOPS)) ? map[op] : ncclSum;
}
#endif
