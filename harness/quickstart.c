/* quickstart.c - the main job until the campaign harness exists: run every
 * generated collective once beside the native MPI collective, check that
 * both give the same bytes, and print a short table of times.
 *
 * Times are the median over 5 repetitions (after one warm-up) of the
 * slowest rank, each repetition started after a barrier. They are one
 * small sample on a shared machine: a sanity check, not a benchmark.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collgen.h"

#ifndef CG_FLAVOUR
#define CG_FLAVOUR "unknown"
#endif

#define REPS 5

enum { NATIVE, GENERATED };

static size_t elems(const struct cg_algo *a, int p)
{
    return a->coll == CG_COLL_ALLGATHER || a->coll == CG_COLL_REDUCE_SCATTER_BLOCK
               ? 8192 * (size_t)p
               : 65536;
}

static int run(const struct cg_algo *a, int which, const double *in, double *out, int p)
{
    size_t n = elems(a, p);
    switch (a->coll) {
    case CG_COLL_ALLREDUCE:
        return which == NATIVE ? MPI_Allreduce(in, out, (int)n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD)
                               : a->fn.allreduce(in, out, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    case CG_COLL_ALLGATHER:
        return which == NATIVE
                   ? MPI_Allgather(in, (int)(n / (size_t)p), MPI_DOUBLE, out, (int)(n / (size_t)p),
                                   MPI_DOUBLE, MPI_COMM_WORLD)
                   : a->fn.allgather(in, n / (size_t)p, MPI_DOUBLE, out, n / (size_t)p, MPI_DOUBLE,
                                     MPI_COMM_WORLD);
    case CG_COLL_REDUCE_SCATTER_BLOCK:
        return which == NATIVE
                   ? MPI_Reduce_scatter_block(in, out, (int)(n / (size_t)p), MPI_DOUBLE, MPI_SUM,
                                              MPI_COMM_WORLD)
                   : a->fn.reduce_scatter_block(in, out, n / (size_t)p, MPI_DOUBLE, MPI_SUM,
                                                MPI_COMM_WORLD);
    case CG_COLL_BCAST:
        memcpy(out, in, n * sizeof(double));
        return which == NATIVE ? MPI_Bcast(out, (int)n, MPI_DOUBLE, 0, MPI_COMM_WORLD)
                               : a->fn.bcast(out, n, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    default:
        return MPI_ERR_OTHER;
    }
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* Median over REPS of the slowest rank, in microseconds. */
static double time_it(const struct cg_algo *a, int which, const double *in, double *out, int p)
{
    double t[REPS];
    run(a, which, in, out, p);
    for (int i = 0; i < REPS; i++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        run(a, which, in, out, p);
        double dt = MPI_Wtime() - t0;
        MPI_Allreduce(&dt, &t[i], 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    }
    qsort(t, REPS, sizeof(double), cmp_double);
    return t[REPS / 2] * 1e6;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, p, failed = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    const char *want = getenv("CG_EXPECT_NP");
    if (want != NULL && atoi(want) != p) {
        fprintf(stderr, "quickstart: started as %d ranks, expected %s: wrong launcher?\n", p, want);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    size_t most = 65536;
    for (int i = 0; i < cg_nalgos; i++) {
        most = elems(cg_algos[i], p) > most ? elems(cg_algos[i], p) : most;
    }
    double *in = malloc(sizeof(double) * most);
    double *ref = malloc(sizeof(double) * most);
    double *got = malloc(sizeof(double) * most);
    if (in == NULL || ref == NULL || got == NULL) {
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    for (size_t i = 0; i < most; i++) {
        in[i] = (double)((rank + 1) * 1000 + (int)(i % 997));
    }
    if (rank == 0) {
        char version[MPI_MAX_LIBRARY_VERSION_STRING];
        int len = 0;
        MPI_Get_library_version(version, &len);
        char *nl = strchr(version, '\n');
        if (nl != NULL) {
            *nl = '\0';
        }
        printf("%s, p = %d: %s\n", CG_FLAVOUR, p, version);
        printf("%-40s %-8s %10s %13s %7s\n", "generated algorithm", "result", "native us",
               "generated us", "ratio");
    }
    for (int i = 0; i < cg_nalgos; i++) {
        const struct cg_algo *a = cg_algos[i];
        size_t n = elems(a, p), outn = a->coll == CG_COLL_REDUCE_SCATTER_BLOCK ? n / (size_t)p : n;
        memset(ref, 0xA5, sizeof(double) * most);
        memset(got, 0x5A, sizeof(double) * most);
        int rc1 = run(a, NATIVE, in, ref, p);
        int rc2 = run(a, GENERATED, in, got, p);
        int bad = rc1 != MPI_SUCCESS || rc2 != MPI_SUCCESS ||
                  memcmp(ref, got, sizeof(double) * outn) != 0;
        MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        double tn = time_it(a, NATIVE, in, ref, p);
        double tg = time_it(a, GENERATED, in, got, p);
        if (rank == 0) {
            printf("%-40s %-8s %10.1f %13.1f %7.2f\n", a->name, bad ? "WRONG" : "same", tn, tg,
                   tg / tn);
        }
        failed += bad;
    }
    if (rank == 0) {
        printf("(doubles, MPI_SUM: allreduce and bcast 65536 elements, allgather and "
               "reduce_scatter_block 8192 per rank;\n bcast from root 0; median of %d "
               "repetitions of the slowest rank; ratio = generated / native)\n", REPS);
    }
    free(in);
    free(ref);
    free(got);
    MPI_Finalize();
    return failed ? 1 : 0;
}
