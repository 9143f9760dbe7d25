/* deposit.c - the second demo application of libcgtune.so
 * (harness/apps/README.md): a plain MPI program that knows nothing of
 * collgen, whose time goes into large allreduces.
 *
 *   deposit_app [CELLS [PARTICLES [STEPS]]]
 *
 * Particles on a periodic 1-D grid of CELLS cells, replicated-grid style
 * (as particle-in-cell and Monte-Carlo codes that keep the whole grid on
 * every rank): each rank owns PARTICLES particles; per step it counts them
 * per cell into its own copy of the grid, one MPI_Allreduce(MPI_SUM) of
 * CELLS doubles sums the copies, and every particle then moves one cell
 * down the summed density's slope (or, on a flat spot, by its own random
 * step), so each step depends on the reduced result. The grid's values are
 * counts, whole numbers far below 2^53: their sums are exact in any order,
 * so the output is the same whatever algorithm adds them. The sizes reach
 * the ranks by MPI_Bcast; the totals come back by MPI_Reduce. Stdout: a
 * checksum of the summed grid every 5 steps and at the end, printed so that
 * two runs can be compared with cmp; stderr: the steps' time.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* xorshift64*: each rank's own reproducible stream. */
static uint64_t next(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 2685821657736338717ull;
}

/* The grid's checksum: sum of count x (cell index + 1), modulo 2^64. */
static uint64_t checksum(const double *g, long cells)
{
    uint64_t c = 0;
    for (long i = 0; i < cells; i++) {
        c += (uint64_t)g[i] * (uint64_t)(i + 1);
    }
    return c;
}

int main(int argc, char **argv)
{
    int rank = 0, p = 1;
    long args[3] = { 1L << 20, 1L << 17, 40 };

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    if (rank == 0) {
        for (int i = 1; i < argc && i <= 3; i++) {
            args[i - 1] = atol(argv[i]);
        }
    }
    MPI_Bcast(args, 3, MPI_LONG, 0, MPI_COMM_WORLD);
    const long cells = args[0], np = args[1], steps = args[2];
    if ((cells < 3) || (cells > (1L << 28)) || (np < 1) || (np > (1L << 28)) || (steps < 1)) {
        if (rank == 0) {
            fprintf(stderr, "usage: deposit_app [CELLS 3..2^28 [PARTICLES 1..2^28 [STEPS >= 1]]]\n");
        }
        MPI_Finalize();
        return 2;
    }
    double *mine = malloc((size_t)cells * sizeof(double));
    double *sum = malloc((size_t)cells * sizeof(double));
    long *x = malloc((size_t)np * sizeof(long));
    if ((mine == NULL) || (sum == NULL) || (x == NULL)) {
        fprintf(stderr, "deposit_app: rank %d: out of memory for %ld cells and %ld particles\n",
                rank, cells, np);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    uint64_t s = 0x9e3779b97f4a7c15ull ^ ((uint64_t)rank * 0xbf58476d1ce4e5b9ull);
    for (long k = 0; k < np; k++) {
        x[k] = (long)(next(&s) % (uint64_t)cells);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (long t = 1; t <= steps; t++) {
        memset(mine, 0, (size_t)cells * sizeof(double));
        for (long k = 0; k < np; k++) {
            mine[x[k]] += 1.0;
        }
        MPI_Allreduce(mine, sum, (int)cells, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        for (long k = 0; k < np; k++) {
            long l = (x[k] + cells - 1) % cells, r = (x[k] + 1) % cells;
            long dir = (sum[l] < sum[r]) ? -1 : (sum[l] > sum[r]) ? 1 : 0;
            if (dir == 0) {
                dir = (next(&s) & 1) ? 1 : -1;
            }
            x[k] = (x[k] + cells + dir) % cells;
        }
        if ((rank == 0) && ((t % 5 == 0) || (t == steps))) {
            printf("step %ld: checksum %llu\n", t, (unsigned long long)checksum(sum, cells));
        }
    }
    double t1 = MPI_Wtime();
    /* The totals: every particle counted once, and the fullest cell. */
    double total = 0.0, most = 0.0, all[2] = { 0.0, 0.0 };
    for (long i = 0; i < cells; i++) {
        total += sum[i];
        most = (sum[i] > most) ? sum[i] : most;
    }
    double mine2[2] = { total, most };
    MPI_Reduce(mine2, all, 2, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("deposit: %ld cells, %ld particles on %d ranks, %ld steps: %.0f counted, "
               "fullest cell %.0f\n", cells, np * p, p, steps, all[0], all[1]);
        fprintf(stderr, "deposit_app: solve %.6f s (%ld steps, p = %d, cells = %ld)\n", t1 - t0,
                steps, p, cells);
    }
    free(mine);
    free(sum);
    free(x);
    MPI_Finalize();
    return 0;
}
