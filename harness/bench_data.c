/* bench_data.c - the inputs of a point, the exact result each rank must
 * hold, and the comparison.
 *
 * Why these values (the ideas of tests/emitted_check.c, made to hold for any
 * p rather than p <= 8): the check compares bit for bit, so every partial
 * result of every reduction order must be exact.
 * - sum, min, max, and the data of the collectives that do not reduce
 *   (allgather, bcast, gather, scatter, alltoall): distinct per rank
 *   and position, u = 1 + (rank * 1000003 + i * 7 [+ (rank + 1) << 32 for
 *   int64]) mod (M - 1), sign alternating with i, where M bounds the
 *   magnitude so that p values sum exactly: float 2^24 / p, double
 *   2^52 / p (double adds 0.5, so the fraction is checked too), int32
 *   (2^31 - 1) / p, int64 2^62 / p (no overflow, so every library's
 *   signed arithmetic agrees).
 * - prod: +-1 and +-2 (2 at one position in five per rank): any product is
 *   +-2^k, exact in float and double; int32 stays exact up to p = 150
 *   ranks (30 factors of two) and wraps the same way in every order after.
 *
 * float16 (IEEE binary16) and bfloat16, the GPU mode's 16-bit floats, are
 * bit patterns made here (encode16, decode16: plain C, no CUDA header;
 * rounding to nearest even). Their significands (11 and 8 bits) hold so
 * few values that the scheme above would repeat within a few elements, so:
 * - sign alternating with i; the magnitude is number
 *   n = (i + rank * s + salt * 7919) mod M of M magnitudes, s = M / p
 *   (at least 1). While p <= M, the p ranks hold p different values at
 *   every position, and the values of all ranks are pairwise different
 *   over positions 0 .. s - 1. Each rank's values repeat with period 2M,
 *   and M is odd, so that no power-of-two distance (where blocks of
 *   power-of-two counts meet) is a period of the inputs or of their sums:
 *   an even M (256 for float16 sums at p = 8) would let a block misplaced
 *   by M elements go unnoticed.
 * - sum: n + 1 quarters (float16) or halves (bfloat16), M the largest odd
 *   number <= 2^11 / p (float16) or 2^8 / p (bfloat16). Every partial sum
 *   is then at most 2^11 (2^8) quanta, which the significand holds exactly:
 *   exact in any order up to p = 2048 (float16) and p = 256 (bfloat16);
 *   p <= M up to p = 45 (float16) and p = 15 (bfloat16). At p = 8,
 *   M = 255 and 31: periods of 510 and 62 elements, the 8 ranks' values
 *   pairwise different over their first 31 and 3 positions.
 * - min, max, and the collectives that do not reduce: every normal value
 *   (finite, not zero, not subnormal) but those of magnitude 0x25A5, the
 *   poison's (outputs are poisoned with 0xA5 bytes before the checked
 *   call; a value equal to it would hide an element never written):
 *   M = 30719 (float16) and 32511 (bfloat16) whatever p. Min and max return
 *   one of their inputs, exact in any order; zeros and subnormals are left
 *   out because min(-0, +0) depends on the order and a kernel that flushes
 *   subnormals to zero would compare them as equal.
 * - prod: +-1 and +-2 as above: at most ceil(p / 5) factors of two meet at
 *   one position, exact while the product stays finite: up to p = 75 for
 *   float16 (2^15 <= 65504) and p = 635 for bfloat16 (2^127).
 */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS */
#include "bench.h"

#include <math.h>
#include <string.h>
#include <sys/mman.h>

MPI_Datatype bench_mpi_dtype(enum bench_dtype t)
{
    switch (t) {
    case BENCH_FLOAT16:
    case BENCH_BFLOAT16:
        /* MPI has no 16-bit float: MPIX_C_FLOAT16 is an MPICH extension
         * (Open MPI 4.1 has none), and no MPI has a bfloat16. */
        return MPI_DATATYPE_NULL;
    case BENCH_INT32:
        return MPI_INT32_T;
    case BENCH_INT64:
        return MPI_INT64_T;
    case BENCH_FLOAT:
        return MPI_FLOAT;
    case BENCH_DOUBLE:
        return MPI_DOUBLE;
    }
    return MPI_DATATYPE_NULL;
}

MPI_Op bench_mpi_op(enum bench_op op)
{
    switch (op) {
    case BENCH_SUM:
        return MPI_SUM;
    case BENCH_PROD:
        return MPI_PROD;
    case BENCH_MIN:
        return MPI_MIN;
    case BENCH_MAX:
        return MPI_MAX;
    }
    return MPI_OP_NULL;
}

size_t bench_dtype_size(enum bench_dtype t)
{
    switch (t) {
    case BENCH_FLOAT16:
    case BENCH_BFLOAT16:
        return 2;
    case BENCH_INT32:
    case BENCH_FLOAT:
        return 4;
    case BENCH_INT64:
    case BENCH_DOUBLE:
        break;
    }
    return 8;
}

const char *bench_dtype_name(enum bench_dtype t)
{
    static const char *const names[] = {"int32", "int64",   "float",
                                        "double", "float16", "bfloat16"};
    return names[t];
}

const char *bench_op_name(enum bench_op op)
{
    static const char *const names[] = {"sum", "prod", "min", "max"};
    return names[op];
}

int bench_coll_reduces(enum cg_coll coll)
{
    return (int)coll < CG_COLL_COUNT_ && cg_colls[coll].reduces; /* lane_pattern: no */
}

/* ---- float16 and bfloat16 ---------------------------------------------------- */

/* The two formats differ only in their field widths: 1 sign bit, then 5
 * exponent and 10 fraction bits (float16), or 8 and 7 (bfloat16). */
static int frac_bits(enum bench_dtype t)
{
    return (t == BENCH_FLOAT16) ? 10 : 7;
}

static int exp_bits(enum bench_dtype t)
{
    return (t == BENCH_FLOAT16) ? 5 : 8;
}

#define SIGN16 0x8000u
#define POISON16_MAGNITUDE 0x25A5u /* 0xA5A5, a poisoned output element, without its sign */

/* 2^e for -1022 <= e <= 1023, made from its bits (exact, and no libm). */
static double pow2(int e)
{
    uint64_t b = (uint64_t)(e + 1023) << 52;
    double d;

    memcpy(&d, &b, sizeof(d));
    return d;
}

/* The value of bit pattern h. */
static double decode16(enum bench_dtype t, uint16_t h)
{
    int m = frac_bits(t);
    int bias = (1 << (exp_bits(t) - 1)) - 1;
    unsigned ones = (1u << exp_bits(t)) - 1; /* the exponent field of inf and NaN */
    unsigned field = ((unsigned)h >> m) & ones;
    unsigned frac = (unsigned)h & ((1u << m) - 1);
    double v;

    if (field == ones) {
        v = (frac != 0) ? NAN : INFINITY;
    } else if (field == 0) {
        v = (double)frac * pow2(1 - bias - m); /* subnormal */
    } else {
        v = (double)(frac | (1u << m)) * pow2((int)field - bias - m);
    }
    return ((h & SIGN16) != 0) ? -v : v;
}

/* v rounded to the nearest bit pattern, ties to even (IEEE's default, as
 * CUDA's __float2half_rn and __float2bfloat16_rn); past the largest finite
 * value, infinity. */
static uint16_t encode16(enum bench_dtype t, double v)
{
    int m = frac_bits(t);
    int bias = (1 << (exp_bits(t) - 1)) - 1;
    unsigned ones = (1u << exp_bits(t)) - 1;
    unsigned sign = signbit(v) ? SIGN16 : 0;
    double a = fabs(v);
    uint64_t bits;
    uint64_t n;
    double q;
    double rest;
    int e;

    if (isnan(v)) {
        return (uint16_t)(sign | (ones << m) | (1u << (m - 1))); /* a quiet NaN */
    }
    memcpy(&bits, &a, sizeof(bits));
    if ((bits >> 52) == 0) {
        return (uint16_t)sign; /* zero, or below 2^-1022: far below half the smallest subnormal */
    }
    e = (int)(bits >> 52) - 1023; /* a = 1.f x 2^e */
    if (isinf(a) || e > (int)ones - 1 - bias) {
        return (uint16_t)(sign | (ones << m)); /* at least 2^(largest exponent + 1) */
    }
    if (e < 1 - bias) {
        e = 1 - bias; /* subnormal: the smallest exponent's spacing */
    }
    q = a / pow2(e - m); /* exact: the pattern's significand, as a real number */
    n = (uint64_t)q;
    rest = q - (double)n;
    if (rest > 0.5 || (rest == 0.5 && (n & 1) != 0)) {
        n++;
    }
    if (n == (2ULL << m)) {
        n >>= 1; /* rounded up to the next power of two */
        e++;
    }
    if (n < (1ULL << m)) {
        return (uint16_t)(sign | (unsigned)n); /* subnormal */
    }
    if (e + bias >= (int)ones) {
        return (uint16_t)(sign | (ones << m));
    }
    return (uint16_t)(sign | ((unsigned)(e + bias) << m) | (unsigned)(n - (1ULL << m)));
}

/* Largest magnitude of a value (see the top of the file), at least 2;
 * float16 and bfloat16: in quanta of their sums, and the largest odd
 * number not above it is their M. */
static uint64_t magnitude_bound(enum bench_dtype t, int p)
{
    uint64_t m = 2;
    uint64_t pp = (p > 0) ? (uint64_t)p : 1;

    switch (t) {
    case BENCH_INT32:
        m = 2147483647ULL / pp;
        break;
    case BENCH_INT64:
        m = (1ULL << 62) / pp;
        break;
    case BENCH_FLOAT:
        m = (1ULL << 24) / pp;
        break;
    case BENCH_DOUBLE:
        m = (1ULL << 52) / pp;
        break;
    case BENCH_FLOAT16:
        m = (1ULL << 11) / pp;
        break;
    case BENCH_BFLOAT16:
        m = (1ULL << 8) / pp;
        break;
    }
    return (m < 2) ? 2 : m;
}

/* float16 and bfloat16, every op but prod: the bits of element i of
 * rank's input (see the top of the file). */
static uint16_t value16(const struct bench_point *pt, int p, int rank, size_t i)
{
    int sum = bench_coll_reduces(pt->coll) && pt->op == BENCH_SUM;
    int m = frac_bits(pt->dtype);
    unsigned sign = ((i & 1) != 0) ? SIGN16 : 0;
    uint64_t count;
    uint64_t stride;
    uint64_t n;
    unsigned bits;

    if (sum) {
        uint64_t bound = magnitude_bound(pt->dtype, p);
        count = ((bound & 1) != 0) ? bound : bound - 1;
    } else {
        /* The normal magnitudes, exponent fields 1 .. all ones - 1
         * (0x0400..0x7BFF for float16, 0x0080..0x7F7F for bfloat16), but
         * the poison's. */
        count = ((((uint64_t)1 << exp_bits(pt->dtype)) - 2) << m) - 1;
    }
    stride = count / (uint64_t)((p > 0) ? p : 1);
    stride = (stride > 0) ? stride : 1;
    n = ((uint64_t)i + ((uint64_t)rank * stride) + (pt->salt * 7919ULL)) % count;
    if (sum) {
        double quantum = (pt->dtype == BENCH_FLOAT16) ? 0.25 : 0.5;
        return (uint16_t)(sign | encode16(pt->dtype, (double)(n + 1) * quantum));
    }
    bits = (1u << m) + (unsigned)n; /* from the smallest normal, exponent field 1 */
    if (bits >= POISON16_MAGNITUDE) {
        bits++;
    }
    return (uint16_t)(sign | bits);
}

void bench_value(const struct bench_point *pt, int p, int rank, size_t i, void *dst)
{
    uint64_t r = (uint64_t)rank;
    uint64_t ii = (uint64_t)i;
    int neg;
    uint64_t u;

    /* pt->salt (0 but for the lanes of micro:multi_collective) shifts the
     * values so that two lanes' data differ. */
    if (bench_coll_reduces(pt->coll) && pt->op == BENCH_PROD) {
        u = (((r * 7) + ii + pt->salt) % 5 == 0) ? 2 : 1;
        neg = ((r + (2 * ii) + pt->salt) % 3) == 0;
    } else if (pt->dtype == BENCH_FLOAT16 || pt->dtype == BENCH_BFLOAT16) {
        uint16_t h = value16(pt, p, rank, i);
        memcpy(dst, &h, sizeof(h));
        return;
    } else {
        uint64_t m = magnitude_bound(pt->dtype, p);
        uint64_t base = (r * 1000003ULL) + (ii * 7) + (pt->salt * 7919ULL);
        if (pt->dtype == BENCH_INT64) {
            base += (r + 1) << 32;
        }
        u = 1 + (base % (m - 1));
        neg = (int)(i & 1);
    }
    switch (pt->dtype) {
    case BENCH_INT32: {
        int32_t v = neg ? -(int32_t)u : (int32_t)u;
        memcpy(dst, &v, sizeof(v));
        break;
    }
    case BENCH_INT64: {
        int64_t v = neg ? -(int64_t)u : (int64_t)u;
        memcpy(dst, &v, sizeof(v));
        break;
    }
    case BENCH_FLOAT: {
        float v = neg ? -(float)u : (float)u;
        memcpy(dst, &v, sizeof(v));
        break;
    }
    case BENCH_DOUBLE: {
        double v = (double)u;
        if (!(bench_coll_reduces(pt->coll) && pt->op == BENCH_PROD)) {
            v += 0.5;
        }
        v = neg ? -v : v;
        memcpy(dst, &v, sizeof(v));
        break;
    }
    case BENCH_FLOAT16:
    case BENCH_BFLOAT16: { /* prod: the other ops returned above */
        uint16_t h = encode16(pt->dtype, neg ? -(double)u : (double)u);
        memcpy(dst, &h, sizeof(h));
        break;
    }
    }
}

/* a op b for the floating-point types. */
static double combine_real(enum bench_op op, double a, double b)
{
    switch (op) {
    case BENCH_SUM:
        return a + b;
    case BENCH_PROD:
        return a * b;
    case BENCH_MIN:
        return (b < a) ? b : a;
    case BENCH_MAX:
        break;
    }
    return (b > a) ? b : a;
}

/* acc = acc op v, both of type t. Integer sum and product in the unsigned
 * type: the wrapped result MPI libraries compute, without undefined
 * behaviour here. */
static void combine(enum bench_dtype t, enum bench_op op, void *acc, const void *v)
{
    switch (t) {
    case BENCH_INT32: {
        int32_t a, b;
        memcpy(&a, acc, sizeof(a));
        memcpy(&b, v, sizeof(b));
        if (op == BENCH_SUM) {
            a = (int32_t)((uint32_t)a + (uint32_t)b);
        } else if (op == BENCH_PROD) {
            a = (int32_t)((uint32_t)a * (uint32_t)b);
        } else if (op == BENCH_MIN) {
            a = (b < a) ? b : a;
        } else {
            a = (b > a) ? b : a;
        }
        memcpy(acc, &a, sizeof(a));
        break;
    }
    case BENCH_INT64: {
        int64_t a, b;
        memcpy(&a, acc, sizeof(a));
        memcpy(&b, v, sizeof(b));
        if (op == BENCH_SUM) {
            a = (int64_t)((uint64_t)a + (uint64_t)b);
        } else if (op == BENCH_PROD) {
            a = (int64_t)((uint64_t)a * (uint64_t)b);
        } else if (op == BENCH_MIN) {
            a = (b < a) ? b : a;
        } else {
            a = (b > a) ? b : a;
        }
        memcpy(acc, &a, sizeof(a));
        break;
    }
    case BENCH_FLOAT: {
        /* In double, then rounded: for one sum or product of two floats the
         * same as float arithmetic (53 >= 2 x 24 + 2 bits: no double
         * rounding). */
        float a, b;
        memcpy(&a, acc, sizeof(a));
        memcpy(&b, v, sizeof(b));
        a = (float)combine_real(op, a, b);
        memcpy(acc, &a, sizeof(a));
        break;
    }
    case BENCH_DOUBLE: {
        double a, b;
        memcpy(&a, acc, sizeof(a));
        memcpy(&b, v, sizeof(b));
        a = combine_real(op, a, b);
        memcpy(acc, &a, sizeof(a));
        break;
    }
    case BENCH_FLOAT16:
    case BENCH_BFLOAT16: {
        /* In double, rounded once, as the GPU kernels do in fp32: with
         * these inputs every partial result is exact either way. */
        uint16_t ha, hb;
        memcpy(&ha, acc, sizeof(ha));
        memcpy(&hb, v, sizeof(hb));
        ha = encode16(t, combine_real(op, decode16(t, ha), decode16(t, hb)));
        memcpy(acc, &ha, sizeof(ha));
        break;
    }
    }
}

/* The reduction over ranks 0..last of input element `at`, in rank order,
 * written at dst (last >= 0). */
static void reduce_upto(const struct bench_point *pt, int p, int last, size_t at,
                        unsigned char *dst)
{
    unsigned char v[8];

    bench_value(pt, p, 0, at, dst);
    for (int r = 1; r <= last; r++) {
        bench_value(pt, p, r, at, v);
        combine(pt->dtype, pt->op, dst, v);
    }
}

/* From the table's shape, input and result columns: in is p blocks (the
 * root's only, for a rooted collective: scatter) or one; out as its shape
 * (one block, or p in place where sendbuf is MPI_IN_PLACE:
 * reduce_scatter_block); res the part of out that holds a result on this
 * rank (none off the root for reduce and gather, on exscan's rank 0, for
 * barrier). */
int bench_elems(const struct bench_point *pt, int p, int rank, struct bench_elems *e)
{
    size_t pp = (size_t)p;
    size_t n = pt->count;
    int at_root = (rank == pt->root);

    if (n > (SIZE_MAX / bench_dtype_size(pt->dtype)) / pp / 2) {
        return -1;
    }
    e->in = e->out = e->res = n;
    if ((int)pt->coll >= CG_COLL_COUNT_) {
        return 0; /* lane_pattern: count each */
    }
    const struct cg_coll_info *ci = &cg_colls[pt->coll];
    if (ci->shape == CG_SHAPE_TOKEN) {
        e->in = e->out = e->res = 0; /* no data */
        return 0;
    }
    if (ci->input == CG_INPUT_P) {
        e->in = (ci->rooted && !at_root) ? 0 : pp * n;
    }
    /* Why p blocks at every rank for gather: a non-root's recvbuf is not
     * significant, but a wrong implementation that wrote it anyway should
     * not write past a buffer. */
    if (ci->shape == CG_SHAPE_UNIFORM ||
        (ci->shape == CG_SHAPE_ONE && pt->in_place && ci->in_place == CG_IN_PLACE_SEND)) {
        e->out = pp * n;
    }
    e->res = (ci->shape == CG_SHAPE_UNIFORM) ? pp * n : n;
    if ((ci->result == CG_RESULT_AT_ROOT && !at_root) ||
        (ci->result == CG_RESULT_EXCL_PREFIX && rank == 0)) {
        e->res = 0;
    }
    return 0;
}

size_t bench_in_place_off(const struct bench_point *pt, int rank)
{
    const struct cg_coll_info *ci = &cg_colls[pt->coll];
    return (ci->shape == CG_SHAPE_UNIFORM && ci->input == CG_INPUT_NONE)
               ? (size_t)rank * pt->count
               : 0;
}

/* Read from the table (runtime/cg_colls.h), not written per collective:
 * element i of rank `rank`'s out comes from input element `at` of rank
 * `from`, or is the reduction of input element `at` over ranks 0..last.
 * Out's shape says which block i is in: p blocks, block b rank b's
 * (uniform: allgather, gather; alltoall's block b is block `rank` of rank
 * b's p-block input), or one block, block `rank` of the p-block input
 * (one: reduce_scatter_block, scatter), or the input itself (split). The
 * result column says whose: the root's (bcast, scatter), or which ranks a
 * reduction runs over (scan 0..rank, exscan 0..rank-1, else all). */
void bench_expected(const struct bench_point *pt, int p, int rank, void *dst, size_t out_elems)
{
    unsigned char *out = dst;
    size_t size = bench_dtype_size(pt->dtype);
    size_t n = pt->count;

    if ((int)pt->coll >= CG_COLL_COUNT_) {
        return; /* lane_pattern: bench_lane_expected */
    }
    const struct cg_coll_info *ci = &cg_colls[pt->coll];
    int last = (ci->result == CG_RESULT_PREFIX)        ? rank
               : (ci->result == CG_RESULT_EXCL_PREFIX) ? rank - 1
                                                       : p - 1;
    if (ci->result == CG_RESULT_NONE || last < 0) {
        return; /* no data (barrier), or none defined (exscan's rank 0: out_elems is 0) */
    }
    for (size_t i = 0; i < out_elems; i++) {
        int from = pt->root;
        size_t at = i;
        if (ci->shape == CG_SHAPE_UNIFORM) {
            from = (int)(i / n);
            at = ((ci->input == CG_INPUT_P) ? (size_t)rank * n : 0) + (i % n);
        } else if (ci->shape == CG_SHAPE_ONE) {
            at = ((size_t)rank * n) + i;
        }
        if (ci->reduces) {
            reduce_upto(pt, p, last, at, out + (i * size));
        } else {
            bench_value(pt, p, from, at, out + (i * size));
        }
    }
}

double bench_as_double(enum bench_dtype t, const void *src)
{
    switch (t) {
    case BENCH_FLOAT16:
    case BENCH_BFLOAT16: {
        uint16_t h;
        memcpy(&h, src, sizeof(h));
        return decode16(t, h);
    }
    case BENCH_INT32: {
        int32_t v;
        memcpy(&v, src, sizeof(v));
        return (double)v;
    }
    case BENCH_INT64: {
        int64_t v;
        memcpy(&v, src, sizeof(v));
        return (double)v;
    }
    case BENCH_FLOAT: {
        float v;
        memcpy(&v, src, sizeof(v));
        return (double)v;
    }
    case BENCH_DOUBLE: {
        double v;
        memcpy(&v, src, sizeof(v));
        return v;
    }
    }
    return NAN;
}

void bench_compare(enum bench_dtype t, const void *got, const void *want, size_t n,
                   uint64_t *wrong, double *max_error)
{
    const unsigned char *g = got;
    const unsigned char *w = want;
    size_t size = bench_dtype_size(t);

    *wrong = 0;
    *max_error = 0.0;
    if (n == 0 || memcmp(g, w, n * size) == 0) {
        return;
    }
    for (size_t i = 0; i < n; i++) {
        double e;
        if (memcmp(g + (i * size), w + (i * size), size) == 0) {
            continue;
        }
        (*wrong)++;
        e = fabs(bench_as_double(t, g + (i * size)) - bench_as_double(t, w + (i * size)));
        if (!isfinite(e)) {
            e = INFINITY; /* a NaN compares false below: make it the largest */
        }
        if (e > *max_error) {
            *max_error = e; /* -0 against +0 is wrong by 0: counted, error 0 */
        }
    }
}

/* Why bench maps its buffers itself rather than malloc: glibc's malloc
 * raises its mmap threshold each time it frees a mapped chunk (up to
 * 32 MiB), so a job's later points got 256 KiB buffers from the heap
 * where its earlier points, and other jobs, got fresh page-aligned
 * mappings; the same call then ran 2-3x slower in one job than in
 * another (harness/measurements/2026-12-07-speed-launches.md). A mapping
 * per buffer places every point's buffers alike whatever ran before, and
 * leaves the libraries' own allocator (the temporaries a native collective
 * takes per call) as an application would find it. */
void *bench_buf_map(size_t bytes)
{
    void *p = mmap(NULL, (bytes > 0) ? bytes : 1, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return (p == MAP_FAILED) ? NULL : p;
}

void bench_buf_unmap(void *p, size_t bytes)
{
    if (p != NULL) {
        munmap(p, (bytes > 0) ? bytes : 1);
    }
}
