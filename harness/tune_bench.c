/* tune_bench.c - what libcgtune.so adds to a call: the lookup (a benchmark,
 * not a test; harness/measurements/2026-12-03-tune.md).
 *
 *   tune_bench [ITERATIONS]
 *
 * Times MPI_Allreduce of one int on MPI_COMM_WORLD, ITERATIONS times
 * (default 20,000, a few milliseconds: shorter than a scheduler's time
 * slice, so that on a shared machine some trials run undisturbed), as the
 * best of 300 trials, and prints nanoseconds per call. Run it once plainly and once with LD_PRELOAD=libcgtune.so and a
 * selection whose rule for the call is native:default (the call is then
 * the lookup plus the same PMPI_Allreduce): the difference is the lookup's
 * cost. At p = 1 the library's own call is a copy, so the difference is
 * not lost in the noise of a network.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    long iters = argc > 1 ? atol(argv[1]) : 20000;
    double best = 1e30;
    int rank = 0, x = 1, y = 0;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    for (int t = 0; t < 300; t++) {
        double t0 = MPI_Wtime();
        for (long i = 0; i < iters; i++) {
            MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        }
        double dt = (MPI_Wtime() - t0) / (double)iters;
        if (dt < best) {
            best = dt;
        }
    }
    if (rank == 0) {
        printf("tune_bench: MPI_Allreduce(1 int): %.1f ns per call (best of 300 x %ld)\n",
               best * 1e9, iters);
    }
    MPI_Finalize();
    return 0;
}
