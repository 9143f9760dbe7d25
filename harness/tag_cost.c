/* tag_cost.c - what one enabled timing tag region costs.
 *
 * Times N back-to-back CG_TAG_BEGIN/CG_TAG_END pairs on one tag (compiled
 * with -DCG_TAGS) against the same loop without them, and prints the
 * difference per region in nanoseconds: the median of 11 trials. Then the
 * same with the trace mode on (runtime/tag_trace.c, verbosity "trace"):
 * NTRACE regions, every event kept in the buffer.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "cg.h"

#define N 2000000
#define TRIALS 11
#define NTRACE 200000 /* regions per trial with the trace on (2 events each) */

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(void)
{
    volatile int sink = 0;
    double with[TRIALS], without[TRIALS], traced[TRIALS];
    struct cg_tag_event *buf = malloc(2 * NTRACE * sizeof(*buf));
    size_t kept = 0;
    if (buf == NULL) {
        return 1;
    }
    for (int t = 0; t < TRIALS; t++) {
        double t0 = now_ns();
        for (int i = 0; i < N; i++) {
            CG_TAG_BEGIN(7);
            sink = sink + 1;
            CG_TAG_END(7);
        }
        double t1 = now_ns();
        for (int i = 0; i < N; i++) {
            sink = sink + 1;
        }
        double t2 = now_ns();
        with[t] = (t1 - t0) / N;
        without[t] = (t2 - t1) / N;
        cg_tag_trace_on(buf, 2 * NTRACE, 0);
        double t3 = now_ns();
        for (int i = 0; i < NTRACE; i++) {
            CG_TAG_BEGIN(7);
            sink = sink + 1;
            CG_TAG_END(7);
        }
        double t4 = now_ns();
        kept += cg_tag_trace_off(NULL);
        traced[t] = (t4 - t3) / NTRACE;
    }
    qsort(traced, TRIALS, sizeof(double), cmp);
    qsort(with, TRIALS, sizeof(double), cmp);
    qsort(without, TRIALS, sizeof(double), cmp);
    uint64_t ns = 0, calls = 0;
    cg_tag_read(7, &ns, &calls);
    printf("tag region cost: %.1f ns (median of %d trials of %d regions; loop alone %.1f ns)\n",
           with[TRIALS / 2] - without[TRIALS / 2], TRIALS, N, without[TRIALS / 2]);
    printf("with the trace on: %.1f ns (median of %d trials of %d regions, every event kept)\n",
           traced[TRIALS / 2] - without[TRIALS / 2], TRIALS, NTRACE);
    free(buf);
    return (calls == ((uint64_t)N + NTRACE) * TRIALS && kept == 2u * NTRACE * TRIALS) ? 0 : 1;
}
