/* tests/test_bench_data.c - the float16 and bfloat16 data of the harness
 * (harness/bench_data.c), which only the GPU mode measures, checked here
 * without a GPU:
 *
 *   - the conversion (encode16, decode16): all 65536 patterns of each format
 *     decode to their value, computed here another way (float16 from its
 *     fields with ldexp, bfloat16 as the float with those 16 high bits), and
 *     encode back; values between two neighbours round to the nearer, ties
 *     to even, past the largest to infinity; against the compiler's
 *     _Float16 where it has one, and the usual bit trick for bfloat16;
 *   - the expected results: for p = 1..8, each op, allreduce and
 *     reduce_scatter_block, bench_expected equals the inputs decoded to
 *     double, reduced in rank order, in reverse order and by pairs (all
 *     three equal), and encoded; over a whole period of the inputs, so for
 *     every count. Every order is exact: each input is a whole number of
 *     quanta and their magnitudes sum to at most 2^11 (float16) or 2^8
 *     (bfloat16) quanta (sum), the factors are +-1 and +-2 and their
 *     product finite (prod), and also at the largest p bench_data.c
 *     promises (2048 and 256; 75 and 635);
 *   - uniqueness, as bench_data.c documents it: at every position the p
 *     ranks' values differ; over positions 0 .. M/p - 1 all ranks' values
 *     differ; each rank's repeat with period exactly 2M (M odd: the
 *     largest odd number <= 2048 / p for float16 sums, <= 256 / p for
 *     bfloat16's, 30719 and 32511 for the others); no value is the poison
 *     0xA5A5, a zero, a subnormal or not finite;
 *   - bench_dtype_size, bench_dtype_name, bench_mpi_dtype (MPI_DATATYPE_NULL)
 *     and bench_compare on 16-bit elements;
 *   - a point's buffers (bench_buf_map) are fresh page-aligned zeroed
 *     mappings whatever the process freed before: after a 16 MiB malloc and
 *     free (which raises glibc's mmap threshold, so that a malloc of 256 KiB
 *     then comes from the heap, 16 bytes past a page boundary), as before.
 *
 * Includes the unit, to reach its static helpers (STYLE.md item 19). Uses
 * MPI's handles only, no MPI call: runs without a launcher. Built and run
 * by tests/run_harness.sh. Prints PASS / FAIL lines; exit status 0 when
 * nothing failed.
 */
#include "../harness/bench_data.c"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int g_failed;

static void check(int ok, const char *name, const char *detail)
{
    printf("%s %s%s%s\n", ok ? "PASS" : "FAIL", name, (!ok && detail != NULL) ? ": " : "",
           (!ok && detail != NULL) ? detail : "");
    g_failed += !ok;
}

static const char *tname(enum bench_dtype t)
{
    return (t == BENCH_FLOAT16) ? "float16" : "bfloat16";
}

/* ---- the conversion ------------------------------------------------------------- */

/* The value of pattern h, computed apart from decode16. */
static double reference_value(enum bench_dtype t, uint16_t h)
{
    if (t == BENCH_BFLOAT16) {
        uint32_t b = (uint32_t)h << 16;
        float f;
        memcpy(&f, &b, sizeof(f));
        return (double)f;
    }
    {
        int e = (h >> 10) & 31;
        int f = h & 1023;
        double v = (e == 31) ? ((f != 0) ? NAN : INFINITY)
                   : (e == 0) ? ldexp((double)f, -24)
                              : ldexp((double)(1024 + f), e - 25);
        return ((h & 0x8000u) != 0) ? -v : v;
    }
}

static void conversion_should_round_trip_every_pattern(enum bench_dtype t)
{
    char name[96];
    char detail[160] = "";
    int ok = 1;

    for (uint32_t h = 0; h <= 0xFFFFu && ok; h++) {
        double want = reference_value(t, (uint16_t)h);
        double got = decode16(t, (uint16_t)h);
        int same = isnan(want) ? isnan(got) : (got == want && signbit(got) == signbit(want));
        uint16_t back = encode16(t, got);
        if (!same) {
            snprintf(detail, sizeof(detail), "0x%04x decodes to %.17g, not %.17g", (unsigned)h,
                     got, want);
            ok = 0;
        } else if (isnan(got) ? !isnan(decode16(t, back)) : back != h) {
            snprintf(detail, sizeof(detail), "0x%04x encodes back as 0x%04x", (unsigned)h,
                     (unsigned)back);
            ok = 0;
        }
    }
    snprintf(name, sizeof(name), "bench_data_%s_decodes_every_pattern_and_encodes_it_back",
             tname(t));
    check(ok, name, detail);
}

/* Between each positive finite pattern h and the next (h + 1, or 2^(emax+1)
 * after the largest): a quarter of the way rounds to h, three quarters to
 * the next, the midpoint to the even one of the two (infinity counts as
 * even); and the same negated. */
static void conversion_should_round_to_nearest_even(enum bench_dtype t)
{
    uint32_t inf = (t == BENCH_FLOAT16) ? 0x7C00u : 0x7F80u;
    char name[96];
    char detail[200] = "";
    int ok = 1;

    for (uint32_t h = 0; h < inf && ok; h++) {
        double a = decode16(t, (uint16_t)h);
        double b = (h + 1 < inf) ? decode16(t, (uint16_t)(h + 1))
                                 : a + (a - decode16(t, (uint16_t)(h - 1)));
        uint16_t even = ((h & 1) == 0) ? (uint16_t)h : (uint16_t)(h + 1);
        const double at[3] = {a + ((b - a) / 4), (a + b) / 2, a + (3 * (b - a) / 4)};
        const uint16_t want[3] = {(uint16_t)h, even, (uint16_t)(h + 1)};
        for (int k = 0; k < 3 && ok; k++) {
            uint16_t got = encode16(t, at[k]);
            uint16_t neg = encode16(t, -at[k]);
            if (got != want[k] || neg != (want[k] | 0x8000u)) {
                snprintf(detail, sizeof(detail),
                         "%.17g (between 0x%04x and the next) encodes as 0x%04x / -0x%04x, not "
                         "0x%04x",
                         at[k], (unsigned)h, (unsigned)got, (unsigned)neg, (unsigned)want[k]);
                ok = 0;
            }
        }
    }
    if (ok && (encode16(t, 1e300) != inf || encode16(t, 1e-300) != 0 ||
               encode16(t, -0.0) != 0x8000u || !isnan(decode16(t, encode16(t, NAN))))) {
        snprintf(detail, sizeof(detail), "1e300, 1e-300, -0 or NaN");
        ok = 0;
    }
    snprintf(name, sizeof(name), "bench_data_%s_rounds_to_nearest_even", tname(t));
    check(ok, name, detail);
}

/* The compiler's conversion (float16: _Float16, where GCC has it) and the
 * usual bit trick (bfloat16: add 0x7FFF plus the lowest kept bit) on
 * pseudo-random values over every exponent. */
static void conversion_should_agree_with_the_usual_ones(enum bench_dtype t)
{
    char name[96];
    char detail[160] = "";
    int ok = 1;
    uint64_t x = 0x9E3779B97F4A7C15ULL;

    for (int n = 0; n < 400000 && ok; n++) {
        uint32_t fb;
        float f;
        uint16_t want;
        uint16_t got;
        x = (x * 6364136223846793005ULL) + 1442695040888963407ULL;
        fb = (uint32_t)(x >> 32);
        memcpy(&f, &fb, sizeof(f));
        if (isnan(f)) {
            continue;
        }
        got = encode16(t, (double)f);
        if (t == BENCH_BFLOAT16) {
            want = (uint16_t)((fb + 0x7FFFu + ((fb >> 16) & 1)) >> 16);
        } else {
#ifdef __FLT16_MAX__
            _Float16 h = (_Float16)(double)f;
            memcpy(&want, &h, sizeof(want));
#else
            want = got; /* no reference here: the exhaustive tests above stand */
#endif
        }
        if (got != want) {
            snprintf(detail, sizeof(detail), "%.9g encodes as 0x%04x, not 0x%04x", (double)f,
                     (unsigned)got, (unsigned)want);
            ok = 0;
        }
    }
    snprintf(name, sizeof(name), "bench_data_%s_encoding_agrees_with_%s", tname(t),
             (t == BENCH_BFLOAT16) ? "the_bit_trick" : "the_compiler");
    check(ok, name, detail);
}

/* ---- the data ------------------------------------------------------------------- */

static struct bench_point point(enum bench_dtype t, enum cg_coll coll, enum bench_op op,
                                size_t count)
{
    struct bench_point pt;
    memset(&pt, 0, sizeof(pt));
    pt.id = "test";
    pt.coll = coll;
    pt.dtype = t;
    pt.op = op;
    pt.op_given = 1;
    pt.count = count;
    return pt;
}

static uint16_t input(const struct bench_point *pt, int p, int rank, size_t i)
{
    uint16_t h;
    bench_value(pt, p, rank, i, &h);
    return h;
}

/* M of bench_data.c's top comment, for the test's families. */
static uint64_t documented_m(enum bench_dtype t, enum bench_op op, int reduces, int p)
{
    if (reduces && op == BENCH_SUM) {
        uint64_t m = ((t == BENCH_FLOAT16) ? 2048u : 256u) / (uint64_t)p;
        return ((m & 1) != 0) ? m : ((m > 1) ? m - 1 : 1);
    }
    return (t == BENCH_FLOAT16) ? 30719 : 32511;
}

static double apply(enum bench_op op, double a, double b)
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

static int representable(enum bench_dtype t, double v)
{
    return decode16(t, encode16(t, v)) == v;
}

/* The reduction of v[0..n) by halves, recursively: ((v0 op v1) op (v2 op v3)) for
 * four; clears *exact when a step's result is not representable. */
static double by_pairs(enum bench_op op, const double *v, int n, int *exact, enum bench_dtype t)
{
    double r;
    if (n == 1) {
        return v[0];
    }
    r = apply(op, by_pairs(op, v, n / 2, exact, t),
              by_pairs(op, v + (n / 2), n - (n / 2), exact, t));
    *exact = *exact && representable(t, r);
    return r;
}

/* Position i's inputs of p ranks: every order of their reduction is exact
 * (the sufficient conditions of the file's comment); the reduction in
 * three orders (rank, reverse, pairs), all equal and exact at every step.
 * Returns 0 and the result in *out, or -1 with why. */
static int reduce_independently(const struct bench_point *pt, int p, size_t i, double *out,
                                char *why, size_t len)
{
    double v[4096];
    double fwd;
    double rev;
    double mag = 0.0;
    int exact = 1;
    double quantum = (pt->dtype == BENCH_FLOAT16) ? 0.25 : 0.5;
    double limit = (pt->dtype == BENCH_FLOAT16) ? 2048.0 : 256.0;

    if (p < 1 || p > (int)(sizeof(v) / sizeof(v[0]))) {
        snprintf(why, len, "p = %d is outside this test's 1..%zu", p, sizeof(v) / sizeof(v[0]));
        return -1;
    }
    for (int r = 0; r < p; r++) {
        v[r] = decode16(pt->dtype, input(pt, p, r, i));
        if (pt->op == BENCH_SUM) {
            double k = fabs(v[r]) / quantum;
            exact = exact && (k == (double)(uint64_t)k);
            mag += k;
        } else if (pt->op == BENCH_PROD) {
            exact = exact && (fabs(v[r]) == 1.0 || fabs(v[r]) == 2.0);
            mag = (r == 0) ? fabs(v[r]) : mag * fabs(v[r]);
        }
    }
    if (pt->op == BENCH_SUM && (!exact || mag > limit)) {
        snprintf(why, len, "position %zu: %g quanta (limit %g), or not whole quanta", i, mag,
                 limit);
        return -1;
    }
    if (pt->op == BENCH_PROD && (!exact || !representable(pt->dtype, mag))) {
        snprintf(why, len, "position %zu: product %g is not finite, or a factor not +-1, +-2", i,
                 mag);
        return -1;
    }
    fwd = v[0];
    rev = v[p - 1];
    for (int r = 1; r < p; r++) {
        fwd = apply(pt->op, fwd, v[r]);
        rev = apply(pt->op, rev, v[p - 1 - r]);
        exact = exact && representable(pt->dtype, fwd) && representable(pt->dtype, rev);
    }
    if (!exact || fwd != rev || by_pairs(pt->op, v, p, &exact, pt->dtype) != fwd || !exact) {
        snprintf(why, len, "position %zu: orders give %.17g and %.17g, or a step is inexact", i,
                 fwd, rev);
        return -1;
    }
    *out = fwd;
    return 0;
}

/* Positions to check: a whole period of the inputs (2M; prod's is 15, twice),
 * so that every count is covered. */
static size_t period(enum bench_dtype t, enum bench_op op, int p)
{
    return (op == BENCH_PROD) ? 30 : (size_t)(2 * documented_m(t, op, 1, p));
}

static void expected_should_equal_an_independent_reduction(enum bench_dtype t)
{
    static const enum bench_op ops[] = {BENCH_SUM, BENCH_PROD, BENCH_MIN, BENCH_MAX};
    char name[96];
    char detail[256] = "";
    int ok = 1;
    uint16_t *got = NULL;

    for (int p = 1; p <= 8 && ok; p++) {
        for (int k = 0; k < 4 && ok; k++) {
            size_t n = period(t, ops[k], p);
            /* allreduce: n elements; reduce_scatter_block: p blocks of n / p (and
             * rounded up, so that the blocks cover the period). */
            size_t block = (n + (size_t)p - 1) / (size_t)p;
            struct bench_point ar = point(t, CG_COLL_ALLREDUCE, ops[k], n);
            struct bench_point rs = point(t, CG_COLL_REDUCE_SCATTER_BLOCK, ops[k], block);
            free(got);
            got = malloc(n * sizeof(uint16_t));
            if (got == NULL) {
                ok = 0;
                snprintf(detail, sizeof(detail), "out of memory");
                break;
            }
            bench_expected(&ar, p, p - 1, got, n);
            for (size_t i = 0; i < n && ok; i++) {
                double want;
                if (reduce_independently(&ar, p, i, &want, detail, sizeof(detail)) != 0) {
                    ok = 0;
                } else if (got[i] != encode16(t, want)) {
                    snprintf(detail, sizeof(detail),
                             "allreduce p=%d %s position %zu: 0x%04x, independently 0x%04x", p,
                             bench_op_name(ops[k]), i, (unsigned)got[i],
                             (unsigned)encode16(t, want));
                    ok = 0;
                }
            }
            for (int r = 0; r < p && ok; r++) {
                bench_expected(&rs, p, r, got, block);
                for (size_t i = 0; i < block && ok; i++) {
                    double want;
                    size_t at = ((size_t)r * block) + i;
                    if (reduce_independently(&rs, p, at, &want, detail, sizeof(detail)) != 0 ||
                        got[i] != encode16(t, want)) {
                        snprintf(detail, sizeof(detail),
                                 "reduce_scatter_block p=%d %s rank %d element %zu differs", p,
                                 bench_op_name(ops[k]), r, i);
                        ok = 0;
                    }
                }
            }
        }
    }
    free(got);
    snprintf(name, sizeof(name),
             "bench_data_%s_expected_equals_an_independent_reduction_p1_to_8_every_op", tname(t));
    check(ok, name, detail);
}

/* The largest p whose exactness bench_data.c promises: sums at 2048
 * (float16) and 256 (bfloat16) ranks, products at 75 and 635, over a whole
 * period; and one rank more breaks the sum's bound (so the limit is tight). */
static void data_should_stay_exact_up_to_the_documented_p(enum bench_dtype t)
{
    int psum = (t == BENCH_FLOAT16) ? 2048 : 256;
    int pprod = (t == BENCH_FLOAT16) ? 75 : 635;
    struct bench_point sum = point(t, CG_COLL_ALLREDUCE, BENCH_SUM, 1);
    struct bench_point prod = point(t, CG_COLL_ALLREDUCE, BENCH_PROD, 1);
    char name[96];
    char detail[256] = "";
    int ok = 1;
    double r;

    for (int p = psum / 8; p <= psum && ok; p *= 2) {
        for (size_t i = 0; i < period(t, BENCH_SUM, p) && ok; i++) {
            ok = reduce_independently(&sum, p, i, &r, detail, sizeof(detail)) == 0;
        }
    }
    for (size_t i = 0; i < period(t, BENCH_PROD, pprod) && ok; i++) {
        ok = reduce_independently(&prod, pprod, i, &r, detail, sizeof(detail)) == 0;
    }
    if (ok && reduce_independently(&sum, psum + 1, 0, &r, detail, sizeof(detail)) == 0) {
        snprintf(detail, sizeof(detail), "p = %d is exact too: the documented limit is not tight",
                 psum + 1);
        ok = 0;
    }
    snprintf(name, sizeof(name), "bench_data_%s_stays_exact_up_to_p_%d_sum_and_%d_prod", tname(t),
             psum, pprod);
    check(ok, name, detail);
}

/* Uniqueness and period, for sum (allreduce) and the others (min, and the
 * data of allgather, a collective that does not reduce). */
static void inputs_should_differ_within_the_documented_period(enum bench_dtype t)
{
    static unsigned char seen[65536];
    char name[96];
    char detail[256] = "";
    int ok = 1;

    for (int f = 0; f < 3 && ok; f++) {
        enum cg_coll coll = (f == 2) ? CG_COLL_ALLGATHER : CG_COLL_ALLREDUCE;
        enum bench_op op = (f == 0) ? BENCH_SUM : BENCH_MIN;
        for (int p = 1; p <= 8 && ok; p++) {
            struct bench_point pt = point(t, coll, op, 1);
            uint64_t m = documented_m(t, op, f != 2, p);
            size_t s = (size_t)(m / (uint64_t)p);
            /* Each rank: 2M different values, then the same again. */
            for (int r = 0; r < p && ok; r++) {
                memset(seen, 0, sizeof(seen));
                for (size_t i = 0; i < 2 * m && ok; i++) {
                    uint16_t h = input(&pt, p, r, i);
                    int field = (t == BENCH_FLOAT16) ? ((h >> 10) & 31) : ((h >> 7) & 255);
                    int top = (t == BENCH_FLOAT16) ? 31 : 255;
                    if (seen[h] || h == 0xA5A5u || field == 0 || field == top ||
                        input(&pt, p, r, i + (2 * m)) != h) {
                        snprintf(detail, sizeof(detail),
                                 "%s p=%d rank %d position %zu: 0x%04x repeats within 2M = %llu, "
                                 "is the poison, zero, subnormal or not finite, or the period is "
                                 "not 2M",
                                 f == 0 ? "sum" : f == 1 ? "min" : "allgather", p, r, i,
                                 (unsigned)h, (unsigned long long)(2 * m));
                        ok = 0;
                    }
                    seen[h] = 1;
                }
            }
            /* Every position: p different values; positions 0..s-1: all
             * ranks' values different. */
            for (size_t i = 0; i < 2 * m && ok; i++) {
                for (int r = 0; r < p && ok; r++) {
                    for (int q = 0; q < r && ok; q++) {
                        if (input(&pt, p, r, i) == input(&pt, p, q, i)) {
                            snprintf(detail, sizeof(detail),
                                     "p=%d position %zu: ranks %d and %d hold the same value", p,
                                     i, q, r);
                            ok = 0;
                        }
                    }
                }
            }
            memset(seen, 0, sizeof(seen));
            for (int r = 0; r < p && ok; r++) {
                for (size_t i = 0; i < s && ok; i++) {
                    uint16_t h = input(&pt, p, r, i);
                    if (seen[h]) {
                        snprintf(detail, sizeof(detail),
                                 "p=%d: rank %d position %zu repeats a value of positions 0..%zu",
                                 p, r, i, s - 1);
                        ok = 0;
                    }
                    seen[h] = 1;
                }
            }
            if (ok && (m & 1) == 0) {
                snprintf(detail, sizeof(detail), "p=%d: M = %llu is even", p,
                         (unsigned long long)m);
                ok = 0;
            }
        }
    }
    snprintf(name, sizeof(name), "bench_data_%s_inputs_differ_within_the_documented_period",
             tname(t));
    check(ok, name, detail);
}

static void sizes_names_mpi_types_and_compare(void)
{
    uint16_t a[4] = {0x3C00u, 0x4000u, 0xC200u, 0x3800u}; /* float16 1, 2, -3, 0.5 */
    uint16_t b[4] = {0x3C00u, 0x4000u, 0xC400u, 0x3800u}; /* -4 for -3 */
    uint64_t wrong = 0;
    double max_error = 0.0;

    check(bench_dtype_size(BENCH_FLOAT16) == 2 && bench_dtype_size(BENCH_BFLOAT16) == 2 &&
              strcmp(bench_dtype_name(BENCH_FLOAT16), "float16") == 0 &&
              strcmp(bench_dtype_name(BENCH_BFLOAT16), "bfloat16") == 0,
          "bench_data_16_bit_types_have_size_2_and_their_names", NULL);
    check(bench_mpi_dtype(BENCH_FLOAT16) == MPI_DATATYPE_NULL &&
              bench_mpi_dtype(BENCH_BFLOAT16) == MPI_DATATYPE_NULL &&
              bench_mpi_dtype(BENCH_DOUBLE) != MPI_DATATYPE_NULL,
          "bench_data_16_bit_types_have_no_mpi_datatype", NULL);
    bench_compare(BENCH_FLOAT16, a, b, 4, &wrong, &max_error);
    check(wrong == 1 && max_error == 1.0, "bench_data_compare_counts_a_wrong_float16_and_its_error",
          NULL);
    b[2] = 0xC200u;
    b[3] = 0x3F00u; /* bfloat16 0.5 against 0x3800's 2^-15 */
    bench_compare(BENCH_BFLOAT16, a, b, 4, &wrong, &max_error);
    check(wrong == 1 && max_error == 0.5 - ldexp(1.0, -15),
          "bench_data_compare_counts_a_wrong_bfloat16_and_its_error", NULL);
}

/* The placement artefact of harness/measurements/2026-12-07-speed-launches.md:
 * what a job allocated and freed before must not move a point's buffers. */
static void buffers_should_be_fresh_pages_whatever_was_freed_before(void)
{
    long page = sysconf(_SC_PAGESIZE);
    const size_t sizes[] = {1, 4096, 262144, 262144 + 24};
    int ok = 1;
    char detail[160] = "";

    for (int round = 0; round < 2; round++) {
        if (round == 1) {
            char *big = malloc((size_t)16 << 20);
            if (big != NULL) {
                memset(big, 1, (size_t)16 << 20);
            }
            free(big);
        }
        for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
            unsigned char *b = bench_buf_map(sizes[k]);
            int zero = (b != NULL);
            for (size_t i = 0; zero && i < sizes[k]; i++) {
                zero = (b[i] == 0);
            }
            if (b == NULL || ((uintptr_t)b % (uintptr_t)page) != 0 || !zero) {
                snprintf(detail, sizeof detail, "%zu bytes after %s: %p, zeroed %d", sizes[k],
                         round ? "a 16 MiB free" : "nothing", (void *)b, zero);
                ok = 0;
            }
            if (b != NULL) {
                memset(b, 0x5A, sizes[k]); /* written, then given back */
            }
            bench_buf_unmap(b, sizes[k]);
        }
    }
    bench_buf_unmap(NULL, 0); /* nothing to give back: no effect */
    check(ok, "bench_buffers_are_fresh_page_aligned_mappings_whatever_was_freed_before", detail);
}

int main(void)
{
    static const enum bench_dtype types[] = {BENCH_FLOAT16, BENCH_BFLOAT16};

    for (int k = 0; k < 2; k++) {
        conversion_should_round_trip_every_pattern(types[k]);
        conversion_should_round_to_nearest_even(types[k]);
        conversion_should_agree_with_the_usual_ones(types[k]);
        expected_should_equal_an_independent_reduction(types[k]);
        data_should_stay_exact_up_to_the_documented_p(types[k]);
        inputs_should_differ_within_the_documented_period(types[k]);
    }
    sizes_names_mpi_types_and_compare();
    buffers_should_be_fresh_pages_whatever_was_freed_before();
    return g_failed ? 1 : 0;
}
