/* reduce.cu - the reduction kernel: into[i] = into[i] op from[i] (or from op
 * into) for fp32, fp64, fp16, bf16, int32, int64 x sum, prod, min, max.
 *
 * One kernel per (type, op, order), grid-stride over three parts: a scalar
 * head up to the first 16-byte boundary of `into`, a body of 16-byte vectors
 * (uint4 loads and stores, four vectors of each operand in flight per
 * thread), and a scalar tail. When into and from are not equally aligned
 * modulo 16 the body is empty and the head is everything: 16-byte accesses
 * need both sides aligned, and a scalar loop is still coalesced.
 *
 * fp16 and bf16 are widened to fp32, combined, and rounded back to nearest
 * even once per element (__float2half_rn, __float2bfloat16_rn); min and max
 * of fp16/bf16 are exact that way. Integer sum and prod wrap (computed in the
 * unsigned type, as MPI libraries and runtime/reduce.c do).
 */
#include "cg_cuda.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <stdio.h>

namespace {

constexpr int kThreads = 256;     /* threads per block */
constexpr int kBlocksPerSm = 4;   /* blocks per multiprocessor at most */
constexpr int kMaxDevices = 64;   /* devices whose multiprocessor count is cached */

/* The type arithmetic happens in: fp32 for the 16-bit floats. */
template <typename T> struct Wide { typedef T type; };
template <> struct Wide<__half> { typedef float type; };
template <> struct Wide<__nv_bfloat16> { typedef float type; };

__device__ __forceinline__ float widen(__half x) { return __half2float(x); }
__device__ __forceinline__ float widen(__nv_bfloat16 x) { return __bfloat162float(x); }
template <typename T> __device__ __forceinline__ T widen(T x) { return x; }

template <typename T> __device__ __forceinline__ T narrow(typename Wide<T>::type x) { return x; }
template <> __device__ __forceinline__ __half narrow<__half>(float x) { return __float2half_rn(x); }
template <> __device__ __forceinline__ __nv_bfloat16 narrow<__nv_bfloat16>(float x)
{
    return __float2bfloat16_rn(x);
}

/* Wrapping integer arithmetic through the unsigned type. */
template <typename T> struct Unsigned { typedef T type; };
template <> struct Unsigned<int32_t> { typedef uint32_t type; };
template <> struct Unsigned<int64_t> { typedef uint64_t type; };

template <typename W, int OP> __device__ __forceinline__ W combine(W x, W y)
{
    typedef typename Unsigned<W>::type U;
    if (OP == CG_CU_SUM) {
        return (W)((U)x + (U)y);
    } else if (OP == CG_CU_PROD) {
        return (W)((U)x * (U)y);
    } else if (OP == CG_CU_MIN) {
        return (y < x) ? y : x;
    } else {
        return (y > x) ? y : x;
    }
}

/* One element: a is into's value, b is from's. */
template <typename T, int OP, int ORDER> __device__ __forceinline__ T apply(T a, T b)
{
    typedef typename Wide<T>::type W;
    W x = widen(a), y = widen(b);
    return narrow<T>((ORDER == CG_INTO_FROM) ? combine<W, OP>(x, y) : combine<W, OP>(y, x));
}

template <typename T, int OP, int ORDER>
__device__ __forceinline__ uint4 apply_vec(uint4 a, uint4 b)
{
    constexpr int V = 16 / sizeof(T);
    T ta[V], tb[V];
    memcpy(ta, &a, 16);
    memcpy(tb, &b, 16);
#pragma unroll
    for (int k = 0; k < V; k++) {
        ta[k] = apply<T, OP, ORDER>(ta[k], tb[k]);
    }
    uint4 r;
    memcpy(&r, ta, 16);
    return r;
}

/* Elements [0, head) and [head + nvec * V, n) one at a time; the nvec
 * vectors between them 16 bytes at a time. */
template <typename T, int OP, int ORDER>
__global__ void __launch_bounds__(kThreads)
reduce_kernel(T *__restrict__ into, const T *__restrict__ from, size_t head, size_t nvec, size_t n)
{
    constexpr int V = 16 / sizeof(T);
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    const size_t tid = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    uint4 *__restrict__ iv = reinterpret_cast<uint4 *>(into + head);
    const uint4 *__restrict__ fv = reinterpret_cast<const uint4 *>(from + head);

    size_t i = tid;
    for (; i + 3 * stride < nvec; i += 4 * stride) {
        uint4 a0 = iv[i], a1 = iv[i + stride], a2 = iv[i + 2 * stride], a3 = iv[i + 3 * stride];
        uint4 b0 = fv[i], b1 = fv[i + stride], b2 = fv[i + 2 * stride], b3 = fv[i + 3 * stride];
        iv[i] = apply_vec<T, OP, ORDER>(a0, b0);
        iv[i + stride] = apply_vec<T, OP, ORDER>(a1, b1);
        iv[i + 2 * stride] = apply_vec<T, OP, ORDER>(a2, b2);
        iv[i + 3 * stride] = apply_vec<T, OP, ORDER>(a3, b3);
    }
    for (; i < nvec; i += stride) {
        iv[i] = apply_vec<T, OP, ORDER>(iv[i], fv[i]);
    }

    const size_t body_end = head + nvec * V;
    const size_t nscalar = head + (n - body_end);
    for (size_t k = tid; k < nscalar; k += stride) {
        size_t e = (k < head) ? k : body_end + (k - head);
        into[e] = apply<T, OP, ORDER>(into[e], from[e]);
    }
}

/* Multiprocessors of the current device, cached per device. */
int sm_count(int *sms)
{
    static int cache[kMaxDevices];
    int dev = 0;
    cudaError_t e = cudaGetDevice(&dev);
    if (e != cudaSuccess) {
        return (int)e;
    }
    if ((dev >= 0) && (dev < kMaxDevices) && (cache[dev] > 0)) {
        *sms = cache[dev];
        return 0;
    }
    e = cudaDeviceGetAttribute(sms, cudaDevAttrMultiProcessorCount, dev);
    if (e != cudaSuccess) {
        return (int)e;
    }
    if ((dev >= 0) && (dev < kMaxDevices)) {
        cache[dev] = *sms;
    }
    return 0;
}

template <typename T, int OP, int ORDER>
cudaError_t launch(void *into, const void *from, size_t n, cudaStream_t stream, int sms)
{
    constexpr size_t V = 16 / sizeof(T);
    T *ip = static_cast<T *>(into);
    const T *fp = static_cast<const T *>(from);
    uintptr_t ia = reinterpret_cast<uintptr_t>(into), fa = reinterpret_cast<uintptr_t>(from);
    size_t head = n, nvec = 0;

    if (((ia - fa) % 16 == 0) && (ia % sizeof(T) == 0)) {
        size_t to_boundary = ((16 - ia % 16) % 16) / sizeof(T);
        head = (to_boundary < n) ? to_boundary : n;
        nvec = (n - head) / V;
    }
    size_t units = (nvec > head + (n - head - nvec * V)) ? nvec : head + (n - head - nvec * V);
    size_t blocks = (units + kThreads - 1) / kThreads;
    size_t cap = (size_t)sms * kBlocksPerSm;
    if (blocks > cap) {
        blocks = cap;
    }
    if (blocks < 1) {
        blocks = 1;
    }
    reduce_kernel<T, OP, ORDER><<<(unsigned)blocks, kThreads, 0, stream>>>(ip, fp, head, nvec, n);
    return cudaGetLastError();
}

template <typename T, int OP>
cudaError_t launch_order(void *into, const void *from, size_t n, int order, cudaStream_t stream,
                         int sms)
{
    return (order == CG_INTO_FROM) ? launch<T, OP, CG_INTO_FROM>(into, from, n, stream, sms)
                                   : launch<T, OP, CG_FROM_INTO>(into, from, n, stream, sms);
}

template <typename T>
cudaError_t launch_op(void *into, const void *from, size_t n, cg_cu_op op, int order,
                      cudaStream_t stream, int sms)
{
    switch (op) {
    case CG_CU_SUM:
        return launch_order<T, CG_CU_SUM>(into, from, n, order, stream, sms);
    case CG_CU_PROD:
        return launch_order<T, CG_CU_PROD>(into, from, n, order, stream, sms);
    case CG_CU_MIN:
        return launch_order<T, CG_CU_MIN>(into, from, n, order, stream, sms);
    default:
        return launch_order<T, CG_CU_MAX>(into, from, n, order, stream, sms);
    }
}

void record_cuda_error(cudaError_t e, int line, const char *call)
{
    int init = 0, fin = 0, rank = -1;
    if ((MPI_Initialized(&init) == MPI_SUCCESS) && init && (MPI_Finalized(&fin) == MPI_SUCCESS) &&
        !fin) {
        (void)MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    }
    (void)cudaGetLastError();
    cg_set_error("rank %d: runtime/cuda/reduce.cu:%d: %s: %s", rank, line, call,
                 cudaGetErrorString(e));
}

} // namespace

extern "C" int cg_cu_reduce(void *into, const void *from, size_t n, cg_cu_dtype dtype, cg_cu_op op,
                            int order, cudaStream_t stream)
{
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
    int sms = 0;
    int err = sm_count(&sms);
    if (err != 0) {
        record_cuda_error((cudaError_t)err, __LINE__, "cudaDeviceGetAttribute");
        return MPI_ERR_OTHER;
    }
    cudaError_t e = cudaSuccess;
    switch (dtype) {
    case CG_CU_FLOAT32:
        e = launch_op<float>(into, from, n, op, order, stream, sms);
        break;
    case CG_CU_FLOAT64:
        e = launch_op<double>(into, from, n, op, order, stream, sms);
        break;
    case CG_CU_FLOAT16:
        e = launch_op<__half>(into, from, n, op, order, stream, sms);
        break;
    case CG_CU_BFLOAT16:
        e = launch_op<__nv_bfloat16>(into, from, n, op, order, stream, sms);
        break;
    case CG_CU_INT32:
        e = launch_op<int32_t>(into, from, n, op, order, stream, sms);
        break;
    default:
        e = launch_op<int64_t>(into, from, n, op, order, stream, sms);
        break;
    }
    if (e != cudaSuccess) {
        record_cuda_error(e, __LINE__, "cudaLaunchKernel");
        return MPI_ERR_OTHER;
    }
    return MPI_SUCCESS;
}
