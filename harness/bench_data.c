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
 */
#include "bench.h"

#include <math.h>
#include <string.h>

MPI_Datatype bench_mpi_dtype(enum bench_dtype t)
{
    switch (t) {
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
    return (t == BENCH_INT32 || t == BENCH_FLOAT) ? 4 : 8;
}

const char *bench_dtype_name(enum bench_dtype t)
{
    static const char *const names[] = {"int32", "int64", "float", "double"};
    return names[t];
}

const char *bench_op_name(enum bench_op op)
{
    static const char *const names[] = {"sum", "prod", "min", "max"};
    return names[op];
}

int bench_coll_reduces(enum cg_coll coll)
{
    return coll == CG_COLL_ALLREDUCE || coll == CG_COLL_REDUCE_SCATTER_BLOCK ||
           coll == CG_COLL_REDUCE || coll == CG_COLL_SCAN || coll == CG_COLL_EXSCAN;
}

/* Largest magnitude of a value (see the top of the file), at least 2. */
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
    }
    return (m < 2) ? 2 : m;
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
    }
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
        float a, b;
        memcpy(&a, acc, sizeof(a));
        memcpy(&b, v, sizeof(b));
        if (op == BENCH_SUM) {
            a = a + b;
        } else if (op == BENCH_PROD) {
            a = a * b;
        } else if (op == BENCH_MIN) {
            a = (b < a) ? b : a;
        } else {
            a = (b > a) ? b : a;
        }
        memcpy(acc, &a, sizeof(a));
        break;
    }
    case BENCH_DOUBLE: {
        double a, b;
        memcpy(&a, acc, sizeof(a));
        memcpy(&b, v, sizeof(b));
        if (op == BENCH_SUM) {
            a = a + b;
        } else if (op == BENCH_PROD) {
            a = a * b;
        } else if (op == BENCH_MIN) {
            a = (b < a) ? b : a;
        } else {
            a = (b > a) ? b : a;
        }
        memcpy(acc, &a, sizeof(a));
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

/* The reduction over all ranks of input element `at`, written at dst. */
static void reduce_at(const struct bench_point *pt, int p, size_t at, unsigned char *dst)
{
    reduce_upto(pt, p, p - 1, at, dst);
}

void bench_expected(const struct bench_point *pt, int p, int rank, void *dst, size_t out_elems)
{
    unsigned char *out = dst;
    size_t size = bench_dtype_size(pt->dtype);

    switch (pt->coll) {
    case CG_COLL_ALLREDUCE:
    case CG_COLL_REDUCE: /* the root's result (out_elems is 0 elsewhere) */
        for (size_t i = 0; i < out_elems; i++) {
            reduce_at(pt, p, i, out + (i * size));
        }
        break;
    case CG_COLL_REDUCE_SCATTER_BLOCK:
        for (size_t i = 0; i < out_elems; i++) {
            reduce_at(pt, p, ((size_t)rank * pt->count) + i, out + (i * size));
        }
        break;
    case CG_COLL_SCAN: /* ranks 0..rank */
        for (size_t i = 0; i < out_elems; i++) {
            reduce_upto(pt, p, rank, i, out + (i * size));
        }
        break;
    case CG_COLL_EXSCAN: /* ranks 0..rank-1; rank 0's is undefined (out_elems 0) */
        for (size_t i = 0; i < out_elems && rank > 0; i++) {
            reduce_upto(pt, p, rank - 1, i, out + (i * size));
        }
        break;
    case CG_COLL_ALLGATHER:
    case CG_COLL_GATHER: /* block r is rank r's input */
        for (size_t i = 0; i < out_elems; i++) {
            bench_value(pt, p, (int)(i / pt->count), i % pt->count, out + (i * size));
        }
        break;
    case CG_COLL_SCATTER: /* block `rank` of the root's input */
        for (size_t i = 0; i < out_elems; i++) {
            bench_value(pt, p, pt->root, ((size_t)rank * pt->count) + i, out + (i * size));
        }
        break;
    case CG_COLL_ALLTOALL: /* block s is block `rank` of rank s's input */
        for (size_t i = 0; i < out_elems; i++) {
            bench_value(pt, p, (int)(i / pt->count), ((size_t)rank * pt->count) + (i % pt->count),
                        out + (i * size));
        }
        break;
    case CG_COLL_BARRIER: /* no data */
        break;
    case CG_COLL_BCAST:
    default:
        for (size_t i = 0; i < out_elems; i++) {
            bench_value(pt, p, pt->root, i, out + (i * size));
        }
        break;
    }
}

static double as_double(enum bench_dtype t, const unsigned char *src)
{
    switch (t) {
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
        e = fabs(as_double(t, g + (i * size)) - as_double(t, w + (i * size)));
        if (!isfinite(e)) {
            e = INFINITY; /* a NaN compares false below: make it the largest */
        }
        if (e > *max_error) {
            *max_error = e; /* -0 against +0 is wrong by 0: counted, error 0 */
        }
    }
}
