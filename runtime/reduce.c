/* reduce.c - local data movement: typed reduction kernels, cg_reduce and
 * cg_copy over wrapping block ranges, and cg_copy_typed.
 *
 * cg_reduce and cg_copy walk two element streams (each at most two runs)
 * in aligned pieces: a piece ends where either stream's run ends. Each piece
 * is then one plain loop, one memcpy or one MPI call.
 */
#include "cg_internal.h"

#include <limits.h>
#include <stdlib.h>

/* ---- typed kernels ------------------------------------------------------- */

/* Why clones: GCC 12 at -O3 for baseline x86-64 (SSE2) leaves int32 prod
 * and min, and every int64 kernel but sum, scalar or half-vectorised: 60 to
 * 80 GB/s in cache where double sum runs at 120 (3 streams of 64 KiB, best
 * of 200). An AVX2 clone of each kernel, picked once at load time by the
 * dynamic linker (an ifunc) where the CPU has AVX2, runs every type and op
 * at 100 to 157 GB/s there (harness/measurements/2026-12-06-speed-quiet.md).
 * The kernels are element-wise, so the clone computes the same bits: no
 * reassociation, and min/max keep their out < in ? out : in form. */
#if defined(__x86_64__) && defined(__has_attribute)
#if __has_attribute(target_clones)
#define CG_KERNEL_CLONES __attribute__((target_clones("avx2", "default")))
#endif
#endif
#ifndef CG_KERNEL_CLONES
#define CG_KERNEL_CLONES
#endif

/* One kernel: out[i] = EXPR for i < n.
 *
 * Why two loops: at -O2, GCC vectorises only loops that need no scalar
 * epilogue. The first loop's trip count is a multiple of 16 (a whole number
 * of vectors up to 512 bits of int32), so it vectorises at -O2; the second
 * does the last n % 16 elements. */
#define CG_KERNEL(NAME, T, EXPR)                                                 \
    CG_KERNEL_CLONES static void NAME(void *restrict vout, const void *restrict vin, \
                                      size_t n)                                 \
    {                                                                            \
        T *restrict out = vout;                                                  \
        const T *restrict in = vin;                                              \
        size_t nv = n & ~(size_t)15;                                             \
        size_t i = 0;                                                            \
        for (; i < nv; i++) {                                                    \
            out[i] = (EXPR);                                                     \
        }                                                                        \
        for (; i < n; i++) {                                                     \
            out[i] = (EXPR);                                                     \
        }                                                                        \
    }

/* The same with a separate destination: out[i] = a[i] op b[i], where a
 * plays the part of the inout operand (lazy.c: a reduce into a block that
 * still stands for sendbuf's reads sendbuf and writes out in one pass). */
#define CG_KERNEL3(NAME, T, EXPR)                                                \
    CG_KERNEL_CLONES static void NAME(void *restrict vout, const void *restrict va, \
                     const void *restrict vb, size_t n)                         \
    {                                                                            \
        T *restrict out = vout;                                                  \
        const T *restrict a = va;                                                \
        const T *restrict in = vb;                                               \
        size_t nv = n & ~(size_t)15;                                             \
        size_t i = 0;                                                            \
        for (; i < nv; i++) {                                                    \
            out[i] = (EXPR);                                                     \
        }                                                                        \
        for (; i < n; i++) {                                                     \
            out[i] = (EXPR);                                                     \
        }                                                                        \
    }

/* Why unsigned: MPI libraries add and multiply signed integers with
 * wrap-around (two's complement); in C that is only defined on unsigned
 * types, and the conversion back is modulo 2^N on every compiler we use.
 * min/max are written as MPI libraries write them, out < in ? out : in,
 * so that even signed zeros come out the same as MPI_Reduce_local's. */
#define CG_KERNELS(NAME, T, U)                                                   \
    CG_KERNEL(NAME##_sum, T, (T)((U)out[i] + (U)in[i]))                          \
    CG_KERNEL(NAME##_prod, T, (T)((U)out[i] * (U)in[i]))                         \
    CG_KERNEL(NAME##_min, T, (out[i] < in[i]) ? out[i] : in[i])                  \
    CG_KERNEL(NAME##_max, T, (out[i] > in[i]) ? out[i] : in[i])                  \
    CG_KERNEL(NAME##_sum_sw, T, (T)((U)in[i] + (U)out[i]))                       \
    CG_KERNEL(NAME##_prod_sw, T, (T)((U)in[i] * (U)out[i]))                      \
    CG_KERNEL(NAME##_min_sw, T, (in[i] < out[i]) ? in[i] : out[i])               \
    CG_KERNEL(NAME##_max_sw, T, (in[i] > out[i]) ? in[i] : out[i])               \
    CG_KERNEL3(NAME##_sum3, T, (T)((U)a[i] + (U)in[i]))                          \
    CG_KERNEL3(NAME##_prod3, T, (T)((U)a[i] * (U)in[i]))                         \
    CG_KERNEL3(NAME##_min3, T, (a[i] < in[i]) ? a[i] : in[i])                    \
    CG_KERNEL3(NAME##_max3, T, (a[i] > in[i]) ? a[i] : in[i])

CG_KERNELS(cg_reduce_i32, int32_t, uint32_t)
CG_KERNELS(cg_reduce_i64, int64_t, uint64_t)
CG_KERNELS(cg_reduce_f32, float, float)
CG_KERNELS(cg_reduce_f64, double, double)

typedef void (*cg_reduce_kernel_fn)(void *restrict out, const void *restrict in, size_t n);

/* Indexed by type class * 4 + op class (cg_reduce_kernel_index). */
static const cg_reduce_kernel_fn cg_reduce_kernels[] = {
    cg_reduce_i32_sum, cg_reduce_i32_prod, cg_reduce_i32_min, cg_reduce_i32_max,
    cg_reduce_i64_sum, cg_reduce_i64_prod, cg_reduce_i64_min, cg_reduce_i64_max,
    cg_reduce_f32_sum, cg_reduce_f32_prod, cg_reduce_f32_min, cg_reduce_f32_max,
    cg_reduce_f64_sum, cg_reduce_f64_prod, cg_reduce_f64_min, cg_reduce_f64_max,
};

#define CG_NKERNELS ((int)(sizeof(cg_reduce_kernels) / sizeof(cg_reduce_kernels[0])))

/* The same with the operands' roles swapped: out[i] = in[i] op out[i]
 * (xchg.c, cg_recv_to: the received value already sits in out, and
 * sendbuf's, the inout operand, comes in as `in`), written in the same
 * operand order as the others so that every result is bit for bit the
 * same (signed zeros in min and max included). */
static const cg_reduce_kernel_fn cg_reduce_kernels_sw[] = {
    cg_reduce_i32_sum_sw, cg_reduce_i32_prod_sw, cg_reduce_i32_min_sw, cg_reduce_i32_max_sw,
    cg_reduce_i64_sum_sw, cg_reduce_i64_prod_sw, cg_reduce_i64_min_sw, cg_reduce_i64_max_sw,
    cg_reduce_f32_sum_sw, cg_reduce_f32_prod_sw, cg_reduce_f32_min_sw, cg_reduce_f32_max_sw,
    cg_reduce_f64_sum_sw, cg_reduce_f64_prod_sw, cg_reduce_f64_min_sw, cg_reduce_f64_max_sw,
};

typedef void (*cg_reduce_kernel3_fn)(void *restrict out, const void *restrict a,
                                     const void *restrict b, size_t n);

/* Indexed as cg_reduce_kernels. */
static const cg_reduce_kernel3_fn cg_reduce_kernels3[] = {
    cg_reduce_i32_sum3, cg_reduce_i32_prod3, cg_reduce_i32_min3, cg_reduce_i32_max3,
    cg_reduce_i64_sum3, cg_reduce_i64_prod3, cg_reduce_i64_min3, cg_reduce_i64_max3,
    cg_reduce_f32_sum3, cg_reduce_f32_prod3, cg_reduce_f32_min3, cg_reduce_f32_max3,
    cg_reduce_f64_sum3, cg_reduce_f64_prod3, cg_reduce_f64_min3, cg_reduce_f64_max3,
};

static int cg_reduce_type_class(MPI_Datatype t)
{
    if ((t == MPI_INT32_T) || ((sizeof(int) == 4) && (t == MPI_INT))) {
        return 0;
    }
    if ((t == MPI_INT64_T) || ((sizeof(long long) == 8) && (t == MPI_LONG_LONG)) ||
        ((sizeof(long) == 8) && (t == MPI_LONG))) {
        return 1;
    }
    if (t == MPI_FLOAT) {
        return 2;
    }
    if (t == MPI_DOUBLE) {
        return 3;
    }
    return -1;
}

static int cg_reduce_op_class(MPI_Op op)
{
    if (op == MPI_SUM) {
        return 0;
    }
    if (op == MPI_PROD) {
        return 1;
    }
    if (op == MPI_MIN) {
        return 2;
    }
    if (op == MPI_MAX) {
        return 3;
    }
    return -1;
}

int cg_reduce_op_commutes(MPI_Op op)
{
    return cg_reduce_op_class(op) >= 0;
}

int cg_reduce_kernel_index(MPI_Datatype dtype, MPI_Op op)
{
    int t = cg_reduce_type_class(dtype);
    int o = cg_reduce_op_class(op);
    return ((t < 0) || (o < 0)) ? -1 : ((t * 4) + o);
}

void cg_reduce_kernel_run(int kernel, void *inout, const void *in, size_t n)
{
    if ((kernel >= 0) && (kernel < CG_NKERNELS)) {
        cg_reduce_kernels[kernel](inout, in, n);
    }
}

void cg_reduce_kernel_sw_run(int kernel, void *inout, const void *in, size_t n)
{
    if ((kernel >= 0) && (kernel < CG_NKERNELS)) {
        cg_reduce_kernels_sw[kernel](inout, in, n);
    }
}

void cg_reduce_kernel3_run(int kernel, void *out, const void *a, const void *b, size_t n)
{
    if ((kernel >= 0) && (kernel < CG_NKERNELS)) {
        cg_reduce_kernels3[kernel](out, a, b, n);
    }
}

/* ---- walking two ranges ---------------------------------------------------- */

/* Works on one aligned piece: n elements at `to` and at `from`. */
typedef int (*cg_piece_fn)(struct cg_call *c, char *to, const char *from, size_t n, int arg);

/* Calls fn on aligned pieces of blocks [tfirst, tfirst + n) of `to` and
 * [ffirst, ffirst + n) of `from`, which must hold as many elements. */
static int cg_walk_window(struct cg_call *c, const struct cg_buf *to, long tfirst,
                          const struct cg_buf *from, long ffirst, long n, cg_piece_fn fn,
                          int arg, size_t lo, size_t hi);

/* Why a direct path: most copies and reduces are one run of blocks on
 * each side, as long as each other (a block, or the whole vector); the
 * window's runs and its loop give fn the same one piece. Anything else, a
 * bad range included, takes the general walk. */
static int cg_walk(struct cg_call *c, const struct cg_buf *to, long tfirst,
                   const struct cg_buf *from, long ffirst, long n, cg_piece_fn fn, int arg)
{
    size_t toff = 0, tlen = 0, foff = 0, flen = 0;

    if (cg_range_run(to, tfirst, n, &toff, &tlen) && cg_range_run(from, ffirst, n, &foff, &flen) &&
        (tlen == flen)) {
        if (tlen == 0) {
            return MPI_SUCCESS;
        }
        return fn(c, to->base + (MPI_Aint)toff * c->extent,
                  from->base + (MPI_Aint)foff * c->extent, tlen, arg);
    }
    return cg_walk_window(c, to, tfirst, from, ffirst, n, fn, arg, 0, SIZE_MAX);
}

/* The same on elements [lo, hi) of the two streams only (a segmented
 * exchange's piece, xchg.c). */
static int cg_walk_window(struct cg_call *c, const struct cg_buf *to, long tfirst,
                          const struct cg_buf *from, long ffirst, long n, cg_piece_fn fn,
                          int arg, size_t lo, size_t hi)
{
    int rc = MPI_SUCCESS;
    struct cg_seg tseg[2], fseg[2];
    int ntseg = 0, nfseg = 0;
    int t = 0, f = 0;       /* runs being consumed */
    size_t tu = 0, fu = 0;  /* elements of tseg[t], fseg[f] already done */

    CG_CHECK(cg_range_segs(to, tfirst, n, tseg, &ntseg));
    CG_CHECK(cg_range_segs(from, ffirst, n, fseg, &nfseg));
    if (cg_segs_len(tseg, ntseg) != cg_segs_len(fseg, nfseg)) {
        cg_set_error("collgen: blocks [%ld, %ld + %ld) hold %zu elements, blocks [%ld, %ld + %ld) "
                     "hold %zu",
                     tfirst, tfirst, n, cg_segs_len(tseg, ntseg), ffirst, ffirst, n,
                     cg_segs_len(fseg, nfseg));
        rc = MPI_ERR_ARG;
        goto out;
    }
    if ((lo > 0) || (hi < SIZE_MAX)) {
        cg_segs_window(tseg, &ntseg, lo, hi);
        cg_segs_window(fseg, &nfseg, lo, hi);
    }
    while ((t < ntseg) && (f < nfseg)) {
        size_t take = tseg[t].len - tu;
        if ((fseg[f].len - fu) < take) {
            take = fseg[f].len - fu;
        }
        char *tp = to->base + (MPI_Aint)(tseg[t].off + tu) * c->extent;
        const char *fp = from->base + (MPI_Aint)(fseg[f].off + fu) * c->extent;
        CG_CHECK(fn(c, tp, fp, take, arg));
        tu += take;
        fu += take;
        if (tu == tseg[t].len) {
            t++;
            tu = 0;
        }
        if (fu == fseg[f].len) {
            f++;
            fu = 0;
        }
    }
out:
    return rc;
}

/* ---- cg_reduce ------------------------------------------------------------ */

/* Why: into = into op from through MPI_Reduce_local (which computes
 * inout = in op inout) needs `from` in a buffer it may overwrite. Staging
 * in slices of about this many bytes keeps scratch slot 3 small and the
 * three passes over a slice in cache. */
#define CG_REDUCE_STAGE_BYTES ((size_t)1 << 20)

/* arg: the order, plus CG_FROM_INPUT when into still stands for sendbuf
 * (lazy.c): then into = sendbuf's same elements op from, typed kernels only;
 * or plus CG_FROM_SWAPPED when into holds the received operand and `from`
 * is sendbuf's view (cg_recv_to): into = from op into, typed kernels only. */
#define CG_FROM_INPUT 2
#define CG_FROM_SWAPPED 4

/* cg_reduce_window's and cg_walk's arg for one of CG_LAZY_*. */
static int cg_reduce_arg(int order, int lazy)
{
    return order | ((lazy == CG_LAZY_INPUT) ? CG_FROM_INPUT : 0) |
           ((lazy == CG_LAZY_SWAPPED) ? CG_FROM_SWAPPED : 0);
}

static int cg_reduce_piece(struct cg_call *c, char *into, const char *from, size_t n, int arg)
{
    int rc = MPI_SUCCESS;
    int order = arg & ~(CG_FROM_INPUT | CG_FROM_SWAPPED);

    if ((arg & CG_FROM_SWAPPED) != 0) {
        cg_reduce_kernel_sw_run(c->kernel, into, from, n);
        cg_plan_note_reduce(CG_OP_KERNEL_SW, c->kernel, into, from, NULL, n, MPI_DATATYPE_NULL,
                            MPI_OP_NULL);
    } else if ((arg & CG_FROM_INPUT) != 0) {
        const char *in = c->lazy_in + (into - c->lazy_out);
        cg_reduce_kernel3_run(c->kernel, into, in, from, n);
        cg_plan_note_reduce(CG_OP_KERNEL3, c->kernel, into, in, from, n, MPI_DATATYPE_NULL,
                            MPI_OP_NULL);
    } else if (c->kernel >= 0) {
        cg_reduce_kernel_run(c->kernel, into, from, n);
        cg_plan_note_reduce(CG_OP_KERNEL, c->kernel, into, from, NULL, n, MPI_DATATYPE_NULL,
                            MPI_OP_NULL);
    } else if (order == CG_FROM_INTO) {
        while (n > 0) {
            size_t k = (n < INT_MAX) ? n : INT_MAX;
            CG_CHECK_MPI(MPI_Reduce_local(from, into, (int)k, c->dtype, c->op));
            cg_plan_note_reduce(CG_OP_REDUCE_LOCAL, -1, into, from, NULL, k, c->dtype, c->op);
            into += (MPI_Aint)k * c->extent;
            from += (MPI_Aint)k * c->extent;
            n -= k;
        }
    } else {
        size_t stage = CG_REDUCE_STAGE_BYTES / (size_t)c->extent;
        if (stage < 1) {
            stage = 1;
        }
        if (stage > INT_MAX) {
            stage = INT_MAX;
        }
        if (stage > n) {
            stage = n;
        }
        struct cg_geom one = { stage, 1 };
        char *tmp = cg_scratch(c, 3, cg_buf_bytes(c, &one, 1), &rc);
        if (tmp == NULL) {
            goto out;
        }
        while (n > 0) {
            size_t k = (n < stage) ? n : stage;
            CG_CHECK(cg_copy_typed(from, k, c->dtype, tmp, k, c->dtype));
            CG_CHECK_MPI(MPI_Reduce_local(into, tmp, (int)k, c->dtype, c->op));
            cg_plan_note_reduce(CG_OP_REDUCE_LOCAL, -1, tmp, into, NULL, k, c->dtype, c->op);
            CG_CHECK(cg_copy_typed(tmp, k, c->dtype, into, k, c->dtype));
            into += (MPI_Aint)k * c->extent;
            from += (MPI_Aint)k * c->extent;
            n -= k;
        }
    }
out:
    return rc;
}

int cg_reduce(struct cg_call *c, const struct cg_buf *into, long ifirst,
              const struct cg_buf *from, long ffirst, long n, int order)
{
    if ((order != CG_INTO_FROM) && (order != CG_FROM_INTO)) {
        cg_set_error("collgen: cg_reduce order %d is neither CG_INTO_FROM nor CG_FROM_INTO", order);
        return MPI_ERR_ARG;
    }
    int rc = MPI_SUCCESS;
    int lazy = CG_LAZY_NONE;
    struct cg_buf view;

    if (c->borrow_on) {
        /* The consumer of a receive written straight into out (cg_recv_to):
         * `from` stands in `into`, and sendbuf's view comes as `from`. */
        CG_CHECK(cg_lazy_take(c, into, ifirst, from, ffirst, n, &view, &lazy));
        if (lazy == CG_LAZY_SWAPPED) {
            from = &view;
            ffirst = ifirst;
        }
    }
    if (cg_lazy_on(c) && (lazy == CG_LAZY_NONE)) {
        int from_in = 0;
        CG_CHECK(cg_lazy_read(c, from, ffirst, n, &view, &from));
        CG_CHECK(cg_lazy_into(c, into, ifirst, n, &from_in));
        lazy = from_in ? CG_LAZY_INPUT : CG_LAZY_NONE;
    }
    rc = cg_walk(c, into, ifirst, from, ffirst, n, cg_reduce_piece, cg_reduce_arg(order, lazy));
out:
    return rc;
}

int cg_reduce_window(struct cg_call *c, const struct cg_buf *into, long ifirst,
                     const struct cg_buf *from, long ffirst, long n, int order, int lazy,
                     size_t lo, size_t hi)
{
    return cg_walk_window(c, into, ifirst, from, ffirst, n, cg_reduce_piece,
                          cg_reduce_arg(order, lazy), lo, hi);
}

/* ---- copies ---------------------------------------------------------------- */

static int cg_copy_piece(struct cg_call *c, char *to, const char *from, size_t n, int contiguous)
{
    /* Why: scatter's root in place copies its own block of sendbuf onto
     * itself; memcpy of a region onto itself is undefined behaviour. */
    if (to == from) {
        return MPI_SUCCESS;
    }
    if (contiguous) {
        cg_memcpy(to, from, n * (size_t)c->extent);
        return MPI_SUCCESS;
    }
    return cg_copy_typed(from, n, c->dtype, to, n, c->dtype);
}

int cg_copy(struct cg_call *c, const struct cg_buf *to, long tfirst,
            const struct cg_buf *from, long ffirst, long n)
{
    int rc = MPI_SUCCESS;
    struct cg_buf view;

    if (cg_lazy_on(c)) {
        CG_CHECK(cg_lazy_read(c, from, ffirst, n, &view, &from));
        CG_CHECK(cg_lazy_write(c, to, tfirst, n));
    }
    CG_CHECK(cg_walk(c, to, tfirst, from, ffirst, n, cg_copy_piece, c->contiguous));
out:
    return rc;
}

int cg_copy_raw(struct cg_call *c, const struct cg_buf *to, long tfirst,
                const struct cg_buf *from, long ffirst, long n)
{
    return cg_walk(c, to, tfirst, from, ffirst, n, cg_copy_piece, c->contiguous);
}

int cg_copy_typed(const void *src, size_t scount, MPI_Datatype stype, void *dst,
                  size_t dcount, MPI_Datatype dtype)
{
    int rc = MPI_SUCCESS;
    const char *s = src;
    char *d = dst;

    if ((src == dst) || ((scount == 0) && (dcount == 0))) {
        goto out;
    }
    if ((stype == dtype) && (scount == dcount)) {
        int contiguous = 0;
        MPI_Aint lb = 0, extent = 0;
        CG_CHECK(cg_type_is_contiguous(stype, &contiguous));
        CG_CHECK_MPI(MPI_Type_get_extent(stype, &lb, &extent));
        if (contiguous) {
            cg_memcpy(d, s, scount * (size_t)extent);
            goto out;
        }
        cg_plan_refuse(); /* a copy through MPI: derived types, never recorded */
        while (scount > 0) {
            size_t k = (scount < INT_MAX) ? scount : INT_MAX;
            CG_CHECK_MPI(MPI_Sendrecv(s, (int)k, stype, 0, 0, d, (int)k, dtype, 0, 0,
                                      MPI_COMM_SELF, MPI_STATUS_IGNORE));
            s += (MPI_Aint)k * extent;
            d += (MPI_Aint)k * extent;
            scount -= k;
        }
    } else {
        MPI_Count ssize = 0, dsize = 0;
        CG_CHECK_MPI(MPI_Type_size_x(stype, &ssize));
        CG_CHECK_MPI(MPI_Type_size_x(dtype, &dsize));
        if ((MPI_Count)scount * ssize != (MPI_Count)dcount * dsize) {
            cg_set_error("collgen: copy of %zu elements of %lld bytes into %zu elements of %lld "
                         "bytes: the type signatures differ",
                         scount, (long long)ssize, dcount, (long long)dsize);
            rc = MPI_ERR_TYPE;
            goto out;
        }
        if ((scount > INT_MAX) || (dcount > INT_MAX)) {
            cg_set_error("collgen: a copy between different datatypes is limited to INT_MAX "
                         "elements (%zu and %zu asked)",
                         scount, dcount);
            rc = MPI_ERR_COUNT;
            goto out;
        }
        cg_plan_refuse();
        CG_CHECK_MPI(MPI_Sendrecv(s, (int)scount, stype, 0, 0, d, (int)dcount, dtype, 0, 0,
                                  MPI_COMM_SELF, MPI_STATUS_IGNORE));
    }
out:
    return rc;
}

int cg_fill(struct cg_call *c, const struct cg_buf *b, long first, long n)
{
    int rc = MPI_SUCCESS;
    int nseg = 0;
    struct cg_seg seg[2];

    if (!c->contiguous) {
        cg_set_error("collgen: a fill step (zero-filled mock-up) needs a contiguous datatype: "
                     "zeros are written over whole extents");
        rc = MPI_ERR_TYPE;
        goto out;
    }
    CG_CHECK(cg_lazy_write(c, b, first, n));
    CG_CHECK(cg_range_segs(b, first, n, seg, &nseg));
    for (int i = 0; i < nseg; i++) {
        cg_memzero(b->base + seg[i].off * (size_t)c->extent, seg[i].len * (size_t)c->extent);
    }
out:
    return rc;
}
