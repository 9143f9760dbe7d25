/* cg.c - the demo application of libcgtune.so (harness/apps/README.md): a
 * plain MPI program that knows nothing of collgen.
 *
 *   cg_app [N [MAXIT]]
 *
 * Conjugate gradients on the 2-D Poisson problem (the 5-point Laplacian of
 * an N x N grid, right-hand side 1), rows split evenly over the ranks. Each
 * iteration: MPI_Allgather of the search direction (every rank's panel of
 * it, so each rank has its neighbours' values), two dot products by
 * MPI_Allreduce; the problem's size reaches the ranks by MPI_Bcast from rank
 * 0. Stdout: the residual every 25 iterations and the result, printed so
 * that two runs can be compared with cmp; stderr: the solve's time.
 */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    int rank = 0, p = 1;
    int args[2] = { 128, 400 };

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    if (rank == 0) {
        if (argc > 1) {
            args[0] = atoi(argv[1]);
        }
        if (argc > 2) {
            args[1] = atoi(argv[2]);
        }
    }
    MPI_Bcast(args, 2, MPI_INT, 0, MPI_COMM_WORLD);
    const int n = args[0], maxit = args[1];
    if ((n < 2) || (maxit < 1)) {
        if (rank == 0) {
            fprintf(stderr, "usage: cg_app [N >= 2 [MAXIT >= 1]]\n");
        }
        MPI_Finalize();
        return 2;
    }
    const long N = (long)n * n;
    const long m = (N + p - 1) / p; /* this rank's panel (the last ones padded) */
    const long lo = rank * m;
    double *x = calloc((size_t)m, sizeof(double));
    double *r = malloc((size_t)m * sizeof(double));
    double *d = malloc((size_t)m * sizeof(double));
    double *q = malloc((size_t)m * sizeof(double));
    double *full = malloc((size_t)m * (size_t)p * sizeof(double));
    double rr = 0.0, rr_local = 0.0;

    for (long i = 0; i < m; i++) {
        r[i] = (lo + i < N) ? 1.0 : 0.0; /* b = 1, x0 = 0 */
        d[i] = r[i];
        rr_local += r[i] * r[i];
    }
    MPI_Allreduce(&rr_local, &rr, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    const double rr0 = rr;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    int it = 0;
    for (it = 1; it <= maxit; it++) {
        MPI_Allgather(d, (int)m, MPI_DOUBLE, full, (int)m, MPI_DOUBLE, MPI_COMM_WORLD);
        double dq_local = 0.0, dq = 0.0;
        for (long i = 0; i < m; i++) {
            long g = lo + i;
            if (g >= N) {
                q[i] = 0.0;
                continue;
            }
            long row = g / n, col = g % n;
            double v = 4.0 * full[g];
            v -= col > 0 ? full[g - 1] : 0.0;
            v -= col < n - 1 ? full[g + 1] : 0.0;
            v -= row > 0 ? full[g - n] : 0.0;
            v -= row < n - 1 ? full[g + n] : 0.0;
            q[i] = v;
            dq_local += d[i] * v;
        }
        MPI_Allreduce(&dq_local, &dq, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        const double alpha = rr / dq;
        double rr_new_local = 0.0, rr_new = 0.0;
        for (long i = 0; i < m; i++) {
            x[i] += alpha * d[i];
            r[i] -= alpha * q[i];
            rr_new_local += r[i] * r[i];
        }
        MPI_Allreduce(&rr_new_local, &rr_new, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        const double beta = rr_new / rr;
        rr = rr_new;
        for (long i = 0; i < m; i++) {
            d[i] = r[i] + beta * d[i];
        }
        if ((rank == 0) && (it % 25 == 0)) {
            printf("iteration %4d  residual %.10e\n", it, sqrt(rr / rr0));
        }
        if (sqrt(rr / rr0) < 1e-10) {
            break;
        }
    }
    double t1 = MPI_Wtime();
    /* the answer: sum and the largest entry of x, gathered at rank 0 */
    double sum_local = 0.0, sum = 0.0, mx_local = 0.0, mx = 0.0;
    for (long i = 0; i < m; i++) {
        sum_local += x[i];
        mx_local = x[i] > mx_local ? x[i] : mx_local;
    }
    MPI_Reduce(&sum_local, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(&mx_local, &mx, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("n %d  ranks %d  iterations %d  residual %.10e  sum(x) %.12e  max(x) %.12e\n", n,
               p, it > maxit ? maxit : it, sqrt(rr / rr0), sum, mx);
        fprintf(stderr, "cg_app: solve %.6f s (%d iterations, p = %d, n = %d)\n", t1 - t0,
                it > maxit ? maxit : it, p, n);
    }
    free(x);
    free(r);
    free(d);
    free(q);
    free(full);
    MPI_Finalize();
    return 0;
}
