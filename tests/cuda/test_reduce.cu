/* tests/cuda/test_reduce.cu - the reduction kernel against the host
 * reference (cu_test.h), bit for bit: every dtype x op x order, counts 0, 1,
 * 17 and 1000003, three alignments (both 256-aligned; both shifted by one
 * element, so the vector body starts after a scalar head; only `into`
 * shifted, so into and from differ modulo 16 and the kernel must go scalar),
 * `from` unchanged, guard bands around both untouched.
 *
 * Run on 1 rank: tests/mpirun.sh openmpi 1 build/cuda/test_reduce
 */
#include "cu_test.h"

static const size_t kCounts[] = { 0, 1, 17, 1000003 };
static const size_t kMaxCount = 1000003;

static cudaStream_t g_stream;

/* One dtype x op: both orders, every count and alignment. */
static void check_kernel(cg_cu_dtype t, cg_cu_op op)
{
    const size_t es = cg_cu_dtype_size(t);
    std::vector<char> into0(kMaxCount * es), from0(kMaxCount * es), want(kMaxCount * es),
        got(kMaxCount * es), back(kMaxCount * es);
    char hex1[40], hex2[40];

    for (int order = CG_INTO_FROM; order <= CG_FROM_INTO; order++) {
        for (int align = 0; align < 3; align++) {
            for (size_t n : kCounts) {
                uint64_t salt = ((uint64_t)t << 40) ^ ((uint64_t)op << 32) ^ (n * 7 + (size_t)order);
                cu_gen_n(t, 0, n, salt, into0.data());
                cu_gen_n(t, 1, n, salt, from0.data());
                memcpy(want.data(), into0.data(), n * es);
                for (size_t i = 0; i < n; i++) {
                    cu_ref1(t, op, order, want.data() + i * es, from0.data() + i * es);
                }
                cu_buf a, b;
                CU_OK(cu_buf_alloc(&a, n * es, (align >= 1) ? es : 0));
                CU_OK(cu_buf_alloc(&b, n * es, (align == 1) ? es : 0));
                CU_OK(cu_h2d(a.ptr, into0.data(), n * es));
                CU_OK(cu_h2d(b.ptr, from0.data(), n * es));
                int rc = cg_cu_reduce(a.ptr, b.ptr, n, t, op, order, g_stream);
                CHECKF(rc == MPI_SUCCESS, "%s", cg_last_error());
                CU_OK(cudaStreamSynchronize(g_stream));
                CU_OK(cudaMemcpy(got.data(), a.ptr, n * es, cudaMemcpyDeviceToHost));
                CU_OK(cudaMemcpy(back.data(), b.ptr, n * es, cudaMemcpyDeviceToHost));
                size_t d = cu_first_diff(got.data(), want.data(), n, es);
                CHECKF(d == n, "%s %s order %d align %d n %zu: element %zu is %s, expected %s",
                       cg_cu_dtype_name(t), cg_cu_op_name(op), order, align, n, d,
                       (d < n) ? cu_hex(got.data() + d * es, es, hex1) : "",
                       (d < n) ? cu_hex(want.data() + d * es, es, hex2) : "");
                CHECKF(cu_first_diff(back.data(), from0.data(), n, es) == n,
                       "%s %s n %zu: from changed", cg_cu_dtype_name(t), cg_cu_op_name(op), n);
                CHECKF(cu_buf_guards_ok(&a) && cu_buf_guards_ok(&b),
                       "%s %s order %d align %d n %zu: a write outside the buffer",
                       cg_cu_dtype_name(t), cg_cu_op_name(op), order, align, n);
                cu_buf_free(&a);
                cu_buf_free(&b);
            }
        }
    }
}

#define KERNEL_TEST(T, O)                                                          \
    static void kernel_##T##_##O##_should_match_the_host_reference(void)          \
    {                                                                              \
        check_kernel(CG_CU_##T, CG_CU_##O);                                        \
    }

#define KERNEL_TESTS(T) KERNEL_TEST(T, SUM) KERNEL_TEST(T, PROD) KERNEL_TEST(T, MIN) KERNEL_TEST(T, MAX)

KERNEL_TESTS(FLOAT32)
KERNEL_TESTS(FLOAT64)
KERNEL_TESTS(FLOAT16)
KERNEL_TESTS(BFLOAT16)
KERNEL_TESTS(INT32)
KERNEL_TESTS(INT64)

#define RUN_KERNEL(T)                                            \
    RUN_ALL(kernel_##T##_SUM_should_match_the_host_reference);   \
    RUN_ALL(kernel_##T##_PROD_should_match_the_host_reference);  \
    RUN_ALL(kernel_##T##_MIN_should_match_the_host_reference);   \
    RUN_ALL(kernel_##T##_MAX_should_match_the_host_reference)

/* The kernel runs on the stream given, without waiting: work queued behind a
 * long kernel on another stream is not waited for, and a launch returns
 * before the kernel finishes (checked through stream order alone). */
static void reduce_should_run_in_stream_order(void)
{
    const size_t n = 1 << 22;
    cu_buf a, b;
    std::vector<int32_t> got(n);
    CU_OK(cu_buf_alloc(&a, n * 4, 0));
    CU_OK(cu_buf_alloc(&b, n * 4, 0));
    CU_OK(cudaMemsetAsync(a.ptr, 0, n * 4, g_stream));
    CU_OK(cudaMemsetAsync(b.ptr, 0, n * 4, g_stream));
    /* b = 1 everywhere (int32 0x01010101), then a += b three times */
    CU_OK(cudaMemsetAsync(b.ptr, 1, n * 4, g_stream));
    for (int k = 0; k < 3; k++) {
        CG_OK(cg_cu_reduce(a.ptr, b.ptr, n, CG_CU_INT32, CG_CU_SUM, CG_INTO_FROM, g_stream));
    }
    CU_OK(cudaMemcpyAsync(got.data(), a.ptr, n * 4, cudaMemcpyDeviceToHost, g_stream));
    CU_OK(cudaStreamSynchronize(g_stream));
    size_t bad = 0;
    for (size_t i = 0; i < n; i++) {
        bad += (got[i] != 3 * 0x01010101);
    }
    CHECKF(bad == 0, "%zu elements wrong", bad);
    cu_buf_free(&a);
    cu_buf_free(&b);
}

int main(int argc, char **argv)
{
    int st = cu_test_start(&argc, &argv, "test_reduce");
    if (st != 0) {
        MPI_Finalize();
        return (st == 1) ? 0 : 1;
    }
    snprintf(g_label, sizeof(g_label), "(kernel)");
    if (cudaStreamCreateWithFlags(&g_stream, cudaStreamNonBlocking) != cudaSuccess) {
        printf("FAIL test_reduce: cudaStreamCreate\n");
        MPI_Finalize();
        return 1;
    }
    RUN_KERNEL(FLOAT32);
    RUN_KERNEL(FLOAT64);
    RUN_KERNEL(FLOAT16);
    RUN_KERNEL(BFLOAT16);
    RUN_KERNEL(INT32);
    RUN_KERNEL(INT64);
    RUN_ALL(reduce_should_run_in_stream_order);
    (void)cudaStreamDestroy(g_stream);
    MPI_Finalize();
    return check_exit();
}
