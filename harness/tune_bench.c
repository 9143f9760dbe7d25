/* tune_bench.c - what libcgtune.so adds to a call: the lookup (a benchmark,
 * not a test; harness/measurements/2026-12-03-tune.md).
 *
 *   tune_bench [--help] [ITERATIONS]
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
#include <getopt.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "util/cli.h"

static const char usage[] = "usage: tune_bench [ITERATIONS]\n"
                            "Nanoseconds per MPI_Allreduce of one int, best of 300 trials of\n"
                            "ITERATIONS calls (default 20000).\n";

int main(int argc, char **argv)
{
    static const struct option longs[] = {
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    long iters = 20000;
    double best = 1e30;
    int rank = 0, x = 1, y = 0, opt, rc = 0;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    opterr = 0;
    while (rc == 0 && (opt = getopt_long(argc, argv, ":h", longs, NULL)) != -1) {
        if (opt == 'h') {
            if (rank == 0) {
                fputs(usage, stdout);
            }
            rc = -1;
        } else {
            rc = (rank == 0) ? cg_cli_bad_option("tune_bench", opt, argv) : 2;
        }
    }
    if (rc == 0 && optind < argc) {
        char *end = NULL;
        iters = strtol(argv[optind], &end, 10);
        if (optind + 1 < argc || end == argv[optind] || *end != '\0' || iters < 1) {
            if (rank == 0) {
                fprintf(stderr, "tune_bench: error: ITERATIONS must be one number >= 1, not '%s' "
                                "(tune_bench --help)\n", argv[optind]);
            }
            rc = 2;
        }
    }
    if (rc != 0) {
        MPI_Finalize();
        return (rc < 0) ? 0 : rc;
    }
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
