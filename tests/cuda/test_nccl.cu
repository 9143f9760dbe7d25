/* tests/cuda/test_nccl.cu - the NCCL transport and the native NCCL
 * baselines, one rank per GPU (NCCL refuses two ranks on one GPU, so p = 1 on
 * a machine with one GPU; any p up to the number of GPUs works):
 *   - exchange steps to self and around the ring through NCCL, with wrapped
 *     ranges on either side (staged) and unwrapped ones (direct);
 *   - the ring allreduce and allgather (ring.cu) over NCCL;
 *   - ncclAllReduce, ncclAllGather, ncclReduceScatter and ncclBroadcast
 *     against the host reference, and timed once each.
 *
 * Run: tests/mpirun.sh openmpi 1 build/cuda/test_nccl
 */
#include "cu_test.h"

#ifndef CG_CUDA_NO_NCCL

static cudaStream_t g_stream;
static MPI_Comm g_comm = MPI_COMM_NULL; /* a duplicate whose context uses NCCL */

static void transport_should_be_nccl_when_asked(void)
{
    int t = -1;
    CG_OK(cg_cu_comm_transport(g_comm, &t));
    CHECK(t == CG_CU_TRANSPORT_NCCL);
}

/* 4 blocks of 101 int64 elements; to rank + 1 (itself at p = 1):
 *   src [3, 5) (wraps) -> dst [6, 8);  src [0, 2) -> dst [7, 9) (wraps) */
static void nccl_exchange_should_stage_wrapped_ranges(void)
{
    const size_t bl = 101;
    const struct cg_geom g = { 4 * bl, 4 };
    cu_buf s, d1, d2;
    std::vector<int64_t> hs(4 * bl), h1(8 * bl), h2(8 * bl);
    CU_OK(cu_buf_alloc(&s, 4 * bl * 8, 0));
    CU_OK(cu_buf_alloc(&d1, 8 * bl * 8, 8));
    CU_OK(cu_buf_alloc(&d2, 8 * bl * 8, 0));
    for (size_t i = 0; i < 4 * bl; i++) {
        hs[i] = ((int64_t)g_rank << 32) | (int64_t)i;
    }
    CU_OK(cu_h2d(s.ptr, hs.data(), hs.size() * 8));
    struct cg_buf src = { s.ptr, g, 4 }, dst1 = { d1.ptr, g, 8 }, dst2 = { d2.ptr, g, 8 };
    const int to = cg_mod(g_rank + 1, g_size), from = cg_mod(g_rank - 1, g_size);
    for (int iter = 0; iter < 2; iter++) {
        struct cg_cu_call c;
        CG_OK(cg_cu_call_begin(&c, g_comm, CG_CU_INT64, CG_CU_OP_NONE, g_stream));
        CG_OK(cg_cu_xchg_begin(&c, 2));
        CG_OK(cg_cu_send(&c, to, &src, 3, 2));
        CG_OK(cg_cu_recv(&c, from, &dst1, 6, 2));
        CG_OK(cg_cu_send(&c, to, &src, 0, 2));
        CG_OK(cg_cu_recv(&c, from, &dst2, 7, 2));
        CG_OK(cg_cu_xchg_wait(&c));
        cg_cu_call_end(&c);
        CU_OK(cudaStreamSynchronize(g_stream));
    }
    CU_OK(cudaMemcpy(h1.data(), d1.ptr, h1.size() * 8, cudaMemcpyDeviceToHost));
    CU_OK(cudaMemcpy(h2.data(), d2.ptr, h2.size() * 8, cudaMemcpyDeviceToHost));
    size_t bad = 0;
    for (size_t i = 0; i < bl; i++) {
        int64_t f = (int64_t)from << 32;
        bad += h1[6 * bl + i] != (f | (int64_t)(3 * bl + i));
        bad += h1[7 * bl + i] != (f | (int64_t)(0 * bl + i));
        bad += h2[7 * bl + i] != (f | (int64_t)(0 * bl + i));
        bad += h2[0 * bl + i] != (f | (int64_t)(1 * bl + i));
    }
    CHECKF(bad == 0, "rank %d: %zu elements wrong", g_rank, bad);
    CHECK(cu_buf_guards_ok(&s) && cu_buf_guards_ok(&d1) && cu_buf_guards_ok(&d2));
    cu_buf_free(&s);
    cu_buf_free(&d1);
    cu_buf_free(&d2);
}

static void ring_over_nccl_should_match_the_host_reference(void)
{
    const size_t count = 100003;
    const size_t p = (size_t)g_size;
    std::vector<int32_t> in(count), want(count, 0), got(count);
    for (size_t i = 0; i < count; i++) {
        in[i] = (int32_t)(i * 3 + (size_t)g_rank * 1000003u);
        for (size_t q = 0; q < p; q++) {
            want[i] += (int32_t)(i * 3 + q * 1000003u);
        }
    }
    cu_buf b, ag;
    CU_OK(cu_buf_alloc(&b, count * 4, 4));
    CU_OK(cu_buf_alloc(&ag, p * count * 4, 0));
    CU_OK(cu_h2d(b.ptr, in.data(), count * 4));
    CG_OK(cg_cu_allreduce_ring(CG_CU_IN_PLACE, b.ptr, count, CG_CU_INT32, CG_CU_SUM, g_comm,
                               g_stream));
    CU_OK(cudaStreamSynchronize(g_stream));
    CU_OK(cudaMemcpy(got.data(), b.ptr, count * 4, cudaMemcpyDeviceToHost));
    CHECK(cu_first_diff(got.data(), want.data(), count, 4) == count);
    CU_OK(cu_h2d(b.ptr, in.data(), count * 4));
    CG_OK(cg_cu_allgather_ring(b.ptr, count, ag.ptr, count, CG_CU_INT32, g_comm, g_stream));
    CU_OK(cudaStreamSynchronize(g_stream));
    std::vector<int32_t> all(p * count);
    CU_OK(cudaMemcpy(all.data(), ag.ptr, p * count * 4, cudaMemcpyDeviceToHost));
    size_t bad = 0;
    for (size_t q = 0; q < p; q++) {
        for (size_t i = 0; i < count; i++) {
            bad += all[q * count + i] != (int32_t)(i * 3 + q * 1000003u);
        }
    }
    CHECKF(bad == 0, "%zu elements wrong", bad);
    cu_buf_free(&b);
    cu_buf_free(&ag);
}

/* ---- native baselines ------------------------------------------------------ */

static ncclComm_t g_nccl;

static double time_ms(cudaEvent_t a, cudaEvent_t b)
{
    float ms = 0.0f;
    (void)cudaEventElapsedTime(&ms, a, b);
    return (double)ms;
}

static void native_nccl_collectives_should_match_the_host_reference(void)
{
    const size_t n = 1 << 20; /* per rank */
    const size_t p = (size_t)g_size;
    cu_buf a, b;
    std::vector<int32_t> in(p * n), got(p * n);
    cudaEvent_t e0, e1;
    CU_OK(cu_buf_alloc(&a, p * n * 4, 0));
    CU_OK(cu_buf_alloc(&b, p * n * 4, 0));
    CU_OK(cudaEventCreate(&e0));
    CU_OK(cudaEventCreate(&e1));
    for (size_t i = 0; i < p * n; i++) {
        in[i] = (int32_t)(i % 100003) + g_rank;
    }
    int32_t rank_sum = (int32_t)(p * (p - 1) / 2);

    /* allreduce (sum) */
    CU_OK(cu_h2d(a.ptr, in.data(), n * 4));
    CU_OK(cudaEventRecord(e0, g_stream));
    CHECK(ncclAllReduce(a.ptr, b.ptr, n, ncclInt32, ncclSum, g_nccl, g_stream) == ncclSuccess);
    CU_OK(cudaEventRecord(e1, g_stream));
    CU_OK(cudaStreamSynchronize(g_stream));
    double t_ar = time_ms(e0, e1);
    CU_OK(cudaMemcpy(got.data(), b.ptr, n * 4, cudaMemcpyDeviceToHost));
    size_t bad = 0;
    for (size_t i = 0; i < n; i++) {
        bad += got[i] != (int32_t)(p * (size_t)(i % 100003)) + rank_sum;
    }
    CHECKF(bad == 0, "ncclAllReduce: %zu wrong", bad);

    /* allgather */
    CU_OK(cudaEventRecord(e0, g_stream));
    CHECK(ncclAllGather(a.ptr, b.ptr, n, ncclInt32, g_nccl, g_stream) == ncclSuccess);
    CU_OK(cudaEventRecord(e1, g_stream));
    CU_OK(cudaStreamSynchronize(g_stream));
    double t_ag = time_ms(e0, e1);
    CU_OK(cudaMemcpy(got.data(), b.ptr, p * n * 4, cudaMemcpyDeviceToHost));
    bad = 0;
    for (size_t q = 0; q < p; q++) {
        for (size_t i = 0; i < n; i++) {
            bad += got[q * n + i] != (int32_t)(i % 100003) + (int32_t)q;
        }
    }
    CHECKF(bad == 0, "ncclAllGather: %zu wrong", bad);

    /* reduce-scatter (max) */
    CU_OK(cu_h2d(a.ptr, in.data(), p * n * 4));
    CU_OK(cudaEventRecord(e0, g_stream));
    CHECK(ncclReduceScatter(a.ptr, b.ptr, n, ncclInt32, ncclMax, g_nccl, g_stream) == ncclSuccess);
    CU_OK(cudaEventRecord(e1, g_stream));
    CU_OK(cudaStreamSynchronize(g_stream));
    double t_rs = time_ms(e0, e1);
    CU_OK(cudaMemcpy(got.data(), b.ptr, n * 4, cudaMemcpyDeviceToHost));
    bad = 0;
    for (size_t i = 0; i < n; i++) {
        size_t j = (size_t)g_rank * n + i;
        bad += got[i] != (int32_t)(j % 100003) + (int32_t)(p - 1);
    }
    CHECKF(bad == 0, "ncclReduceScatter: %zu wrong", bad);

    /* broadcast from the last rank */
    int root = g_size - 1;
    CU_OK(cudaEventRecord(e0, g_stream));
    CHECK(ncclBroadcast(a.ptr, b.ptr, n, ncclInt32, root, g_nccl, g_stream) == ncclSuccess);
    CU_OK(cudaEventRecord(e1, g_stream));
    CU_OK(cudaStreamSynchronize(g_stream));
    double t_bc = time_ms(e0, e1);
    CU_OK(cudaMemcpy(got.data(), b.ptr, n * 4, cudaMemcpyDeviceToHost));
    bad = 0;
    for (size_t i = 0; i < n; i++) {
        bad += got[i] != (int32_t)(i % 100003) + root;
    }
    CHECKF(bad == 0, "ncclBroadcast: %zu wrong", bad);
    if (g_rank == 0) {
        printf("# native NCCL p=%d, %zu int32 per rank (first call, includes set-up): allreduce "
               "%.3f ms, allgather %.3f ms, reduce_scatter %.3f ms, broadcast %.3f ms\n",
               g_size, n, t_ar, t_ag, t_rs, t_bc);
    }
    (void)cudaEventDestroy(e0);
    (void)cudaEventDestroy(e1);
    cu_buf_free(&a);
    cu_buf_free(&b);
}

#endif /* CG_CUDA_NO_NCCL */

int main(int argc, char **argv)
{
    int st = cu_test_start(&argc, &argv, "test_nccl");
    if (st != 0) {
        MPI_Finalize();
        return (st == 1) ? 0 : 1;
    }
#ifdef CG_CUDA_NO_NCCL
    if (g_rank == 0) {
        printf("SKIP test_nccl: built without NCCL (CG_CUDA_NO_NCCL)\n");
    }
    MPI_Finalize();
    return 0;
#else
    if (cg_cu_gpu_count(NULL) < g_size) {
        if (g_rank == 0) {
            printf("SKIP test_nccl: %d ranks on %d GPU(s): NCCL needs one rank per GPU\n", g_size,
                   cg_cu_gpu_count(NULL));
        }
        MPI_Finalize();
        return 0;
    }
    snprintf(g_label, sizeof(g_label), "(p=%d nccl)", g_size);
    if (cudaStreamCreateWithFlags(&g_stream, cudaStreamNonBlocking) != cudaSuccess) {
        printf("FAIL test_nccl: cudaStreamCreate\n");
        MPI_Finalize();
        return 1;
    }
    MPI_Comm_dup(MPI_COMM_WORLD, &g_comm);
    setenv("CG_CUDA_TRANSPORT", "nccl", 1);
    int t = -1;
    int rc = cg_cu_comm_transport(g_comm, &t); /* the context reads the variable once */
    unsetenv("CG_CUDA_TRANSPORT");
    if (rc != MPI_SUCCESS) {
        printf("FAIL test_nccl: rank %d: %s\n", g_rank, cg_last_error());
        MPI_Finalize();
        return 1;
    }
    ncclUniqueId id;
    if (g_rank == 0) {
        (void)ncclGetUniqueId(&id);
    }
    MPI_Bcast(&id, (int)sizeof(id), MPI_BYTE, 0, MPI_COMM_WORLD);
    if (ncclCommInitRank(&g_nccl, g_size, id, g_rank) != ncclSuccess) {
        printf("FAIL test_nccl: rank %d: ncclCommInitRank\n", g_rank);
        MPI_Finalize();
        return 1;
    }
    RUN_ALL(transport_should_be_nccl_when_asked);
    RUN_ALL(nccl_exchange_should_stage_wrapped_ranges);
    RUN_ALL(ring_over_nccl_should_match_the_host_reference);
    RUN_ALL(native_nccl_collectives_should_match_the_host_reference);
    (void)ncclCommDestroy(g_nccl);
    MPI_Comm_free(&g_comm);
    (void)cudaStreamDestroy(g_stream);
    MPI_Finalize();
    return check_exit();
#endif
}
