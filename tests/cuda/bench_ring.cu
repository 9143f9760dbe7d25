/* tests/cuda/bench_ring.cu - the generated ring allreduce and allgather
 * (emitted/cuda/allreduce_ring.cu, allgather_ring.cu: the code collgen writes
 * from schedules/allreduce/ring.json and schedules/allgather/ring.json), then
 * the generated Rabenseifner allreduce and recursive-doubling allgather, over
 * the transport the runtime picks (IPC for processes of one node), from
 * 1 MiB to 1 GiB, as bus bandwidth against a device-to-device copy measured
 * in the same run.
 *
 *   tests/mpirun.sh openmpi 8 build/cuda/bench_ring [MAX_MIB [BUDGET_S]]
 *
 * S is the collective's size in bytes: the allreduce's vector (float32 sum,
 * out of place), the allgather's whole output (S / p bytes per rank). Time
 * per call: barrier, a first call (warm-up, also sizing the repetitions to
 * about 0.25 s), barrier, repetitions, stream synchronisation, barrier, by
 * MPI_Wtime on rank 0. algbw = S / t; busbw, as NCCL's tests count it, is
 * algbw * 2(p-1)/p for allreduce and algbw * (p-1)/p for allgather. The copy
 * bandwidth is S_max / t of a cudaMemcpy of S_max bytes by rank 0 alone (the
 * bytes copied, not read plus written). When p processes share one GPU they
 * share its memory bandwidth too: busbw is then the whole GPU's work. Sizes
 * stop early when BUDGET_S (default 120) has passed (the rings come first).
 * Tags are compiled out (build/cuda/emitted/all.o).
 *
 * Prints "BENCH ring ..." lines from rank 0; without a GPU, one SKIP line.
 */
#include "cu_test.h"
#include "collgen_cuda.h"

#include <algorithm>

static int bench_main(size_t max_mib, double budget)
{
    const size_t maxb = max_mib << 20;
    const int p = g_size;
    char *sb = NULL, *rb = NULL;
    cudaStream_t s;
    int transport = -1;
    double copy_gbs = 0;
    double start = MPI_Wtime();

    if ((cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess) ||
        (cudaMalloc((void **)&sb, maxb) != cudaSuccess) || (cudaMalloc((void **)&rb, maxb) != cudaSuccess) ||
        (cudaMemset(sb, 0, maxb) != cudaSuccess) || (cudaMemset(rb, 0, maxb) != cudaSuccess)) {
        printf("FAIL bench_ring: rank %d: allocation of 2 x %zu MiB: %s\n", g_rank, max_mib,
               cudaGetErrorString(cudaGetLastError()));
        return 1;
    }
    if (cg_cu_comm_transport(MPI_COMM_WORLD, &transport) != MPI_SUCCESS) {
        printf("FAIL bench_ring: rank %d: %s\n", g_rank, cg_last_error());
        return 1;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (g_rank == 0) {
        cudaEvent_t e0, e1;
        std::vector<double> t;
        (void)cudaEventCreate(&e0);
        (void)cudaEventCreate(&e1);
        for (int i = 0; i < 8; i++) {
            (void)cudaEventRecord(e0, s);
            (void)cudaMemcpyAsync(rb, sb, maxb, cudaMemcpyDeviceToDevice, s);
            (void)cudaEventRecord(e1, s);
            (void)cudaEventSynchronize(e1);
            float ms = 0;
            (void)cudaEventElapsedTime(&ms, e0, e1);
            if (i >= 2) {
                t.push_back(ms);
            }
        }
        std::sort(t.begin(), t.end());
        copy_gbs = (double)maxb / (t[t.size() / 2] * 1e-3) / 1e9;
        printf("BENCH copy bytes=%zu copy_GBps=%.1f (bytes copied per second; traffic is twice)\n",
               maxb, copy_gbs);
    }
    MPI_Bcast(&copy_gbs, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);

    /* The generated collectives measured, in order: coll 0 allreduce, 1 allgather. */
    struct impl {
        int coll;
        const char *name;
        cg_cu_allreduce_fn allreduce;
        cg_cu_allgather_fn allgather;
    };
    const struct impl impls[] = {
        {0, "allreduce_ring", cgcu_allreduce_ring, NULL},
        {1, "allgather_ring", NULL, cgcu_allgather_ring},
        {0, "allreduce_rabenseifner", cgcu_allreduce_rabenseifner, NULL},
        {1, "allgather_recursive_doubling", NULL, cgcu_allgather_recursive_doubling},
    };
    for (const struct impl &im : impls) {
        const int coll = im.coll;
        for (size_t bytes = (size_t)1 << 20; bytes <= maxb; bytes *= 4) {
            int stop = (MPI_Wtime() - start > budget);
            MPI_Bcast(&stop, 1, MPI_INT, 0, MPI_COMM_WORLD);
            if (stop) {
                if (g_rank == 0) {
                    printf("# bench_ring: budget of %.0f s spent; %s stops before %zu bytes\n",
                           budget, im.name, bytes);
                }
                break;
            }
            size_t count = bytes / 4;           /* allreduce: float32 elements */
            size_t per = bytes / 4 / (size_t)p; /* allgather: per rank */
            int reps = 1, rc = MPI_SUCCESS;
            double t = 0;
            for (int phase = 0; phase < 2; phase++) {
                MPI_Barrier(MPI_COMM_WORLD);
                double t0 = MPI_Wtime();
                for (int i = 0; (i < reps) && (rc == MPI_SUCCESS); i++) {
                    rc = coll ? im.allgather(sb, rb, per, CG_CU_FLOAT32, MPI_COMM_WORLD, s)
                              : im.allreduce(sb, rb, count, CG_CU_FLOAT32, CG_CU_SUM,
                                             MPI_COMM_WORLD, s);
                }
                (void)cudaStreamSynchronize(s);
                MPI_Barrier(MPI_COMM_WORLD);
                t = (MPI_Wtime() - t0) / reps;
                if (rc != MPI_SUCCESS) {
                    printf("FAIL bench_ring: %s: rank %d: %s\n", im.name, g_rank, cg_last_error());
                    return 1;
                }
                reps = (int)std::min(20.0, std::max(2.0, 0.25 / std::max(t, 1e-6)));
                MPI_Bcast(&reps, 1, MPI_INT, 0, MPI_COMM_WORLD);
            }
            size_t moved = coll ? per * 4 * (size_t)p : bytes;
            double alg = (double)moved / t / 1e9;
            double bus = alg * (coll ? (double)(p - 1) / p : 2.0 * (p - 1) / p);
            if (g_rank == 0) {
                printf("BENCH ring coll=%s impl=%s transport=%s p=%d bytes=%zu time_ms=%.3f "
                       "algbw_GBps=%.2f busbw_GBps=%.2f busbw_over_copy=%.3f\n",
                       coll ? "allgather" : "allreduce", im.name, cg_cu_transport_name(transport), p, moved,
                       t * 1e3, alg, bus, bus / copy_gbs);
                fflush(stdout);
            }
        }
    }
    (void)cudaFree(sb);
    (void)cudaFree(rb);
    (void)cudaStreamDestroy(s);
    return 0;
}

int main(int argc, char **argv)
{
    int st = cu_test_start(&argc, &argv, "bench_ring");
    if (st != 0) {
        MPI_Finalize();
        return (st == 1) ? 0 : 1;
    }
    size_t max_mib = (argc > 1) ? (size_t)strtoull(argv[1], NULL, 10) : 1024;
    double budget = (argc > 2) ? atof(argv[2]) : 120.0;
    int rc = bench_main(max_mib, budget);
    MPI_Finalize();
    return rc;
}
