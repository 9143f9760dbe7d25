/* common.h - what the baselines share: how a vector splits into blocks, and
 * the segment size of the segmented ones. Plain C and MPI. */
#ifndef BASELINE_COMMON_H
#define BASELINE_COMMON_H

#include <limits.h>
#include <mpi.h>
#include <stddef.h>
#include <stdlib.h>

/* count elements in nb near-equal blocks: block i has count / nb elements,
 * one more for the first count % nb (as Open MPI's ring splits them). */
static inline size_t block_off(size_t count, int nb, int i)
{
    size_t base = count / (size_t)nb;
    size_t rem = count % (size_t)nb;
    return (size_t)i * base + ((size_t)i < rem ? (size_t)i : rem);
}

static inline size_t block_len(size_t count, int nb, int i)
{
    return count / (size_t)nb + ((size_t)i < count % (size_t)nb ? 1 : 0);
}

/* The segment size in bytes of the segmented baselines: BASELINE_SEGSIZE
 * from the environment (the tests make it small), else 1 MiB. */
static inline size_t segment_bytes(void)
{
    const char *s = getenv("BASELINE_SEGSIZE");
    long v = (s != NULL) ? strtol(s, NULL, 10) : 0;
    return (v > 0) ? (size_t)v : ((size_t)1 << 20);
}

/* The largest power of two not above p (p >= 1). */
static inline int pof2_below(int p)
{
    int k = 1;
    while (k * 2 <= p) {
        k *= 2;
    }
    return k;
}

#endif
