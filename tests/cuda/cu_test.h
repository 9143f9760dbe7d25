/* tests/cuda/cu_test.h - what the GPU tests share: start-up with a reason to
 * skip, a collective RUN, test data unique per rank and position, a host
 * reference of the reduction with the kernel's exact semantics, and device
 * buffers with poisoned guard bands.
 *
 * The data and the host reference are in cu_ref.h.
 */
#ifndef CG_TESTS_CUDA_CU_TEST_H
#define CG_TESTS_CUDA_CU_TEST_H

#include "cg_cuda.h"
#include "check.h"
#include "cu_ref.h"
#include "ring.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

static int g_rank;        /* rank in MPI_COMM_WORLD */
static int g_size;        /* size of MPI_COMM_WORLD */
static char g_label[128]; /* appended to PASS / FAIL lines, e.g. "p=4 ipc" */

/* RUN (check.h), made collective: the failed checks of all ranks decide the
 * verdict, which rank 0 alone prints. */
#define RUN_ALL(name)                                                                  \
    do {                                                                               \
        int failed_ = 0;                                                               \
        check_failed_now = 0;                                                          \
        name();                                                                        \
        MPI_Allreduce(&check_failed_now, &failed_, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD); \
        if (failed_ != 0) {                                                            \
            check_tests_failed++;                                                      \
        } else {                                                                       \
            check_tests_passed++;                                                      \
        }                                                                              \
        if (g_rank == 0) {                                                             \
            fprintf(stdout, "%s %s %s\n", (failed_ != 0) ? "FAIL" : "PASS", #name, g_label); \
        }                                                                              \
        fflush(stdout);                                                                \
    } while (0)

/* A CUDA call inside a test: a failed check, and the test returns. */
#define CU_OK(call)                                                                    \
    do {                                                                               \
        cudaError_t cu_e_ = (call);                                                    \
        if (cu_e_ != cudaSuccess) {                                                    \
            CHECKF(cu_e_ == cudaSuccess, "rank %d: %s: %s", g_rank, #call,             \
                   cudaGetErrorString(cu_e_));                                         \
            return;                                                                    \
        }                                                                              \
    } while (0)

/* A runtime call inside a test: a failed check with cg_last_error(). */
#define CG_OK(call)                                                                    \
    do {                                                                               \
        int cg_rc_ = (call);                                                           \
        if (cg_rc_ != MPI_SUCCESS) {                                                   \
            CHECKF(cg_rc_ == MPI_SUCCESS, "rank %d: %s returned %d: %s", g_rank, #call, \
                   cg_rc_, cg_last_error());                                           \
            return;                                                                    \
        }                                                                              \
    } while (0)

/* MPI_Init, the launcher check, the GPU check and the device selection.
 * Returns 0 when the program should go on, 1 when it should finalize and
 * exit with status 0 (no GPU: a SKIP line says why), 2 on a failure (a FAIL
 * line says what). */
static int cu_test_start(int *argc, char ***argv, const char *prog)
{
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    const char *expect = getenv("CG_EXPECT_NP");
    if ((expect != NULL) && (atoi(expect) != g_size)) {
        printf("FAIL %s: %d ranks, expected %s (wrong launcher?)\n", prog, g_size, expect);
        return 2;
    }
    const char *why = NULL;
    if (cg_cu_gpu_count(&why) < 1) {
        if (g_rank == 0) {
            printf("SKIP %s: no GPU (%s)\n", prog, why);
        }
        return 1;
    }
    int dev = -1;
    if (cg_cu_select_device(MPI_COMM_WORLD, &dev) != MPI_SUCCESS) {
        printf("FAIL %s: rank %d: %s\n", prog, g_rank, cg_last_error());
        return 2;
    }
    return 0;
}

/* ---- device buffers with guard bands ---------------------------------------- */

#define CU_POISON 0xA5
#define CU_GUARD 256 /* poisoned bytes before and after every test buffer */

/* `bytes` usable bytes at `ptr`, `shift` bytes past a 256-aligned start
 * (shift = one element makes the buffer misaligned for 16-byte vectors). */
struct cu_buf {
    char *alloc;
    char *ptr;
    size_t bytes;
    size_t shift;
};

static inline cudaError_t cu_buf_alloc(cu_buf *b, size_t bytes, size_t shift)
{
    b->bytes = bytes;
    b->shift = shift;
    b->alloc = NULL;
    b->ptr = NULL;
    cudaError_t e = cudaMalloc((void **)&b->alloc, 2 * CU_GUARD + shift + bytes);
    if (e != cudaSuccess) {
        return e;
    }
    b->ptr = b->alloc + CU_GUARD + shift;
    e = cudaMemset(b->alloc, CU_POISON, 2 * CU_GUARD + shift + bytes);
    return (e != cudaSuccess) ? e : cudaDeviceSynchronize();
}

/* Host to device, finished when it returns. Why the device synchronisation:
 * cudaMemcpy from pageable memory may return before its DMA lands, and
 * cudaMemset is asynchronous; both go on the legacy default stream, which
 * the tests' non-blocking streams (and other processes' IPC copies) are not
 * ordered after. The runtime's contract is stream order on the call's
 * stream, so the tests make their set-up complete before the call. */
static inline cudaError_t cu_h2d(void *dst, const void *src, size_t bytes)
{
    cudaError_t e = cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice);
    return (e != cudaSuccess) ? e : cudaDeviceSynchronize();
}

static inline cudaError_t cu_fill(void *dst, int byte, size_t bytes)
{
    cudaError_t e = cudaMemset(dst, byte, bytes);
    return (e != cudaSuccess) ? e : cudaDeviceSynchronize();
}

static inline void cu_buf_free(cu_buf *b)
{
    if (b->alloc != NULL) {
        (void)cudaFree(b->alloc);
    }
    b->alloc = NULL;
    b->ptr = NULL;
}

/* Whether the guard bands (and the shift) are still poisoned. */
static inline int cu_buf_guards_ok(const cu_buf *b)
{
    std::vector<unsigned char> g(CU_GUARD + b->shift);
    if (cudaMemcpy(g.data(), b->alloc, g.size(), cudaMemcpyDeviceToHost) != cudaSuccess) {
        return 0;
    }
    for (unsigned char c : g) {
        if (c != CU_POISON) {
            return 0;
        }
    }
    g.resize(CU_GUARD);
    if (cudaMemcpy(g.data(), b->ptr + b->bytes, CU_GUARD, cudaMemcpyDeviceToHost) != cudaSuccess) {
        return 0;
    }
    for (unsigned char c : g) {
        if (c != CU_POISON) {
            return 0;
        }
    }
    return 1;
}

#endif
