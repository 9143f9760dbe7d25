/* tests/cuda/bench_reduce.cu - the reduction kernel's bandwidth against a
 * device-to-device cudaMemcpy measured in the same run.
 *
 *   build/cuda/bench_reduce [MiB]      (default 1024: buffers of 1 GiB)
 *
 * Bandwidth counts the bytes each moves through memory: a copy of N bytes
 * reads N and writes N (2N), a reduction of N bytes reads into and from and
 * writes into (3N). Each is timed with CUDA events around one launch, 3
 * warm-ups then 10 timed runs; the median is reported. The fraction is the
 * kernel's bandwidth over the copy's (target: at least 0.85). One extra row
 * has `into` shifted by 4 bytes from `from` (the scalar path).
 *
 * Prints "BENCH reduce ..." lines (harness/device_check.sh collects them);
 * without a GPU, one SKIP line.
 */
#include "cg_cuda.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

static double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

#define OK(call)                                                                       \
    do {                                                                               \
        cudaError_t e_ = (call);                                                       \
        if (e_ != cudaSuccess) {                                                       \
            printf("FAIL bench_reduce: %s: %s\n", #call, cudaGetErrorString(e_));      \
            return 1;                                                                  \
        }                                                                              \
    } while (0)

int main(int argc, char **argv)
{
    const char *why = NULL;
    if (cg_cu_gpu_count(&why) < 1) {
        printf("SKIP bench_reduce: no GPU (%s)\n", why);
        return 0;
    }
    size_t mib = (argc > 1) ? (size_t)strtoull(argv[1], NULL, 10) : 1024;
    size_t bytes = mib << 20;
    char *a = NULL, *b = NULL;
    cudaStream_t s;
    cudaEvent_t e0, e1;
    cudaDeviceProp prop;
    OK(cudaSetDevice(0));
    OK(cudaGetDeviceProperties(&prop, 0));
    OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    OK(cudaEventCreate(&e0));
    OK(cudaEventCreate(&e1));
    OK(cudaMalloc((void **)&a, bytes + 256));
    OK(cudaMalloc((void **)&b, bytes + 256));
    OK(cudaMemset(a, 0, bytes + 256));
    OK(cudaMemset(b, 0, bytes + 256));

    /* the copy */
    std::vector<double> t;
    for (int i = 0; i < 13; i++) {
        OK(cudaEventRecord(e0, s));
        OK(cudaMemcpyAsync(a, b, bytes, cudaMemcpyDeviceToDevice, s));
        OK(cudaEventRecord(e1, s));
        OK(cudaEventSynchronize(e1));
        float ms = 0;
        OK(cudaEventElapsedTime(&ms, e0, e1));
        if (i >= 3) {
            t.push_back(ms);
        }
    }
    double copy_ms = median(t);
    double copy_gbs = 2.0 * (double)bytes / (copy_ms * 1e-3) / 1e9;
    printf("# %s, %d SMs; buffers of %zu MiB\n", prop.name, prop.multiProcessorCount, mib);
    printf("BENCH copy bytes=%zu time_ms=%.4f traffic_GBps=%.1f\n", bytes, copy_ms, copy_gbs);

    double worst = 1e9;
    const char *worst_name = "";
    static char names[64][48];
    int nn = 0;
    for (int dt = 0; dt <= CG_CU_NDTYPES; dt++) {
        for (int op = 0; op < CG_CU_NOPS; op++) {
            /* dt == CG_CU_NDTYPES: the misaligned float32 row, sum only */
            int misaligned = (dt == CG_CU_NDTYPES);
            if (misaligned && (op != CG_CU_SUM)) {
                continue;
            }
            cg_cu_dtype d = misaligned ? CG_CU_FLOAT32 : (cg_cu_dtype)dt;
            size_t n = bytes / cg_cu_dtype_size(d);
            char *into = misaligned ? (a + 4) : a;
            t.clear();
            for (int i = 0; i < 13; i++) {
                OK(cudaEventRecord(e0, s));
                if (cg_cu_reduce(into, b, n, d, (cg_cu_op)op, CG_INTO_FROM, s) != MPI_SUCCESS) {
                    printf("FAIL bench_reduce: %s\n", cg_last_error());
                    return 1;
                }
                OK(cudaEventRecord(e1, s));
                OK(cudaEventSynchronize(e1));
                float ms = 0;
                OK(cudaEventElapsedTime(&ms, e0, e1));
                if (i >= 3) {
                    t.push_back(ms);
                }
            }
            double ms = median(t);
            double gbs = 3.0 * (double)bytes / (ms * 1e-3) / 1e9;
            double frac = gbs / copy_gbs;
            printf("BENCH reduce dtype=%s op=%s%s bytes=%zu time_ms=%.4f traffic_GBps=%.1f "
                   "frac_of_copy=%.3f\n",
                   cg_cu_dtype_name(d), cg_cu_op_name((cg_cu_op)op),
                   misaligned ? " misaligned=1" : "", bytes, ms, gbs, frac);
            if (!misaligned && (frac < worst) && (nn < 64)) {
                snprintf(names[nn], sizeof(names[nn]), "%s %s", cg_cu_dtype_name(d),
                         cg_cu_op_name((cg_cu_op)op));
                worst = frac;
                worst_name = names[nn++];
            }
        }
    }
    printf("BENCH reduce_worst frac_of_copy=%.3f at=\"%s\" target=0.85 %s\n", worst, worst_name,
           (worst >= 0.85) ? "met" : "NOT met");
    (void)cudaFree(a);
    (void)cudaFree(b);
    return 0;
}
