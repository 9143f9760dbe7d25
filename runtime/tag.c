/* tag.c - timing tags: per-rank accumulators indexed by generator-assigned
 * ids. CG_TAG_BEGIN/CG_TAG_END (cg.h) write them; the harness reads them.
 */
#define _POSIX_C_SOURCE 199309L /* clock_gettime, CLOCK_MONOTONIC */

#include "cg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

struct cg_tag_acc cg_tag_accs[CG_TAG_CAPACITY];
int cg_tag_off;

void cg_tag_enable(int on)
{
    cg_tag_off = !on;
}

/* Why process-wide: the tags are (cg_tag_accs); the clock is chosen once,
 * at the first reset, and its unit with it. */
int cg_tag_tsc;
static double cg_tag_ns_per_tick = 1.0;
static int cg_tag_clock_chosen;

uint64_t cg_tag_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ((uint64_t)ts.tv_sec * 1000000000u) + (uint64_t)ts.tv_nsec;
}

#if defined(__x86_64__)
/* A TSC reading and the monotonic clock at the same instant: the middle of
 * the tightest of 32 (tsc, clock, tsc) triples, so that a preemption inside
 * one does not count. */
static void cg_tag_pair(double *tick, double *ns)
{
    uint64_t best = UINT64_MAX;
    for (int i = 0; i < 32; i++) {
        uint64_t a = __rdtsc();
        uint64_t m = cg_tag_now();
        uint64_t b = __rdtsc();
        if (b - a < best) {
            best = b - a;
            *tick = 0.5 * ((double)a + (double)b);
            *ns = (double)m;
        }
    }
}

/* Whether Linux's clocksource is the TSC (invariant, synchronised). */
static int cg_tag_kernel_uses_tsc(void)
{
    char name[32] = "";
    FILE *f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "r");
    if (f == NULL) {
        return 0;
    }
    int ok = (fgets(name, sizeof name, f) != NULL) && (strncmp(name, "tsc", 3) == 0);
    fclose(f);
    return ok;
}
#endif

/* Picks the clock (cg.h, cg_tag_ticks): 2 ms of calibration, once. */
static void cg_tag_choose_clock(void)
{
    cg_tag_clock_chosen = 1;
#if defined(__x86_64__)
    if (!cg_tag_kernel_uses_tsc() || getenv("CG_TAG_CLOCK_GETTIME") != NULL) {
        return;
    }
    double t0 = 0, n0 = 0, t1 = 0, n1 = 0;
    cg_tag_pair(&t0, &n0);
    do {
        cg_tag_pair(&t1, &n1);
    } while (n1 - n0 < 2e6);
    if (t1 > t0) {
        cg_tag_ns_per_tick = (n1 - n0) / (t1 - t0);
        cg_tag_tsc = 1;
    }
#endif
}

void cg_tag_reset(void)
{
    if (!cg_tag_clock_chosen) {
        cg_tag_choose_clock();
    }
    memset(cg_tag_accs, 0, sizeof(cg_tag_accs));
}

int cg_tag_read(int id, uint64_t *ns, uint64_t *calls)
{
    if ((id < 0) || (id >= CG_TAG_CAPACITY)) {
        return -1;
    }
    *ns = cg_tag_tsc ? (uint64_t)(((double)cg_tag_accs[id].ns * cg_tag_ns_per_tick) + 0.5)
                     : cg_tag_accs[id].ns;
    *calls = cg_tag_accs[id].calls;
    return 0;
}
