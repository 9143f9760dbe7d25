/* tests/cuda/emitted_cuda_check.cu - every generated GPU collective
 * (emitted/cuda/, listed by cg_cu_algos[] in emitted/cuda/all.cu) against a
 * host reference, on p processes that may share one GPU (the transport the
 * runtime chooses: CUDA IPC on one node, unless CG_CUDA_TRANSPORT says nccl).
 *
 * Per schedule: the errors every rank finds alike (no op where it reduces,
 * a root out of range, overlapping buffers that are not in place); every
 * datatype (and every op where the collective reduces) at an odd count;
 * counts 0, 1, p - 1, p + 1, 2p + 1 and 65539; each of three
 * ways to pass the buffers: separate, NCCL's in place (the pointers an
 * in-place ncclAllReduce etc. passes) and CG_CU_IN_PLACE; buffers starting
 * one element past a 16-byte boundary or not; bcast from every root (with
 * sendbuf NULL at non-roots where not in place). Every byte of both buffers,
 * 256 guard bytes before and after included, is compared with what it must
 * hold: the result where the result goes, the input where it was, poison
 * elsewhere (outputs are poisoned before the call).
 *
 * The data are unique per rank and position wherever the type allows it:
 * copies (allgather, bcast, alltoall) and integer reductions use bit
 * patterns unique per (rank, position) (16-bit types: per rank and position
 * modulo 4096); fp32 and fp64 sums use integers (in quarters) unique per
 * (rank, position) and small enough that every partial sum is exact. Where
 * exactness leaves fewer values (fp16/bf16 sums, floating-point products:
 * signed powers of two, times 1 or 3 in fp32/fp64), values vary with rank
 * and position through a hash. So every reduction is exact in every order:
 * the reference (ranks folded in order with the kernel's arithmetic,
 * cu_ref.h) is bit for bit what any schedule must produce, whatever order it
 * combines contributions in. min and max see no NaN, infinity, zero or
 * subnormal.
 *
 * Built twice: with -DCG_TAGS (emitted/cuda/all.cu with tags) it runs a
 * shorter matrix and then checks the tags of each schedule: the call tag
 * counts the calls with data (not the count 0 one), no tag of another
 * schedule is entered, the GPU time of every tag of the schedule is within
 * the call tag's, and begins and ends balance. Without CG_TAGS: nothing is
 * recorded.
 *
 * Run: tests/mpirun.sh openmpi P build/cuda/emitted_cuda_check (P = 1, 2, 3,
 * 4, 8; at most 16), and the same with build/cuda/emitted_cuda_check_tags.
 * Without a GPU: "SKIP emitted_cuda_check: no GPU (cudaGetDeviceCount: ...)".
 */
#include "collgen_cuda.h"
#include "cu_test.h"

#include <cmath>
#include <string>

static cudaStream_t g_stream;
static int g_transport;

#define MAX_COUNT 65539 /* the largest count tried (odd) */
#define MAX_FAIL_LINES 4 /* failure lines per schedule and rank */

/* ---- data, exact in every order --------------------------------------------- */

enum data_kind {
    DATA_BITS,   /* bit patterns (copies, integer reductions) */
    DATA_SUM,    /* floating-point sum: small multiples of a power of two */
    DATA_PROD,   /* floating-point product: signed powers of two (times 1 or 3) */
    DATA_MINMAX  /* floating-point min/max: finite, normal, nonzero */
};

static data_kind kind_of(cg_cu_dtype t, cg_cu_op op)
{
    if ((op == CG_CU_OP_NONE) || (t == CG_CU_INT32) || (t == CG_CU_INT64)) {
        return DATA_BITS;
    }
    if (op == CG_CU_SUM) {
        return DATA_SUM;
    }
    return (op == CG_CU_PROD) ? DATA_PROD : DATA_MINMAX;
}

/* A bijection of the n-bit integers (1 <= n <= 64): odd multipliers and a
 * right xor-shift are each one-to-one modulo 2^n. */
static uint64_t bij(uint64_t x, int n, uint64_t salt)
{
    const uint64_t m = (n >= 64) ? ~0ull : ((1ull << n) - 1);
    x = (x + salt) & m;
    x = (x * 0x9e3779b97f4a7c15ull) & m;
    x ^= x >> ((n + 1) / 2);
    x = (x * 0xbf58476d1ce4e5b9ull) & m;
    return x;
}

static void put_float(cg_cu_dtype t, double v, void *dst)
{
    switch (t) {
    case CG_CU_FLOAT32: {
        float f = (float)v;
        memcpy(dst, &f, 4);
        break;
    }
    case CG_CU_FLOAT64:
        memcpy(dst, &v, 8);
        break;
    case CG_CU_FLOAT16: {
        __half h = __float2half_rn((float)v);
        memcpy(dst, &h, 2);
        break;
    }
    default: {
        __nv_bfloat16 h = __float2bfloat16_rn((float)v);
        memcpy(dst, &h, 2);
        break;
    }
    }
}

/* Element `pos` of rank `rank`'s input, for p ranks (see the header). */
static void gen(cg_cu_dtype t, data_kind kind, int p, int rank, size_t pos, uint64_t salt,
                void *dst)
{
    const size_t es = cg_cu_dtype_size(t);
    const uint64_t idx = (uint64_t)rank + 16u * (uint64_t)pos; /* unique for rank < 16 */
    const uint64_t h = cu_hash(idx * 0x632be59bd9b4e019ull + salt);
    switch (kind) {
    case DATA_BITS: {
        uint64_t b = bij(idx, (int)(8 * es), salt);
        memcpy(dst, &b, es); /* little-endian: the low bytes */
        break;
    }
    case DATA_SUM: {
        /* k quarters (fp16), halves (bf16) or quarters (fp32, fp64), with
         * p * max |k| within the significand: every partial sum is exact. */
        double v;
        if ((t == CG_CU_FLOAT64) || (t == CG_CU_FLOAT32)) {
            /* n bits with p * 2^(n - 1) <= 2^24 (fp32), 2^40 of 2^53 (fp64) */
            int bits = (t == CG_CU_FLOAT64) ? 40 : 25 - cg_ceil_log2(p);
            bits = (bits > 24) ? 24 : bits;
            v = ((double)bij(idx, bits, salt) - ldexp(1.0, bits - 1)) * 0.25;
        } else {
            const int64_t u = ((t == CG_CU_FLOAT16) ? 2048 : 256) / p;
            v = (double)((int64_t)(h % (uint64_t)(2 * u + 1)) - u) *
                ((t == CG_CU_FLOAT16) ? 0.25 : 0.5);
        }
        put_float(t, v, dst);
        break;
    }
    case DATA_PROD: {
        /* |product| within 2^(4p) (fp32, fp64) or 2^p (fp16, bf16: 2^15 < 65504) */
        const int wide = (t == CG_CU_FLOAT32) || (t == CG_CU_FLOAT64);
        const int e = wide ? (int)((h >> 2) % 9) - 4 : (p <= 15) ? (int)((h >> 2) % 3) - 1 : 0;
        const double m = (wide && (p <= 8) && ((h >> 1) & 1)) ? 3.0 : 1.0;
        put_float(t, ((h & 1) ? -1.0 : 1.0) * m * ldexp(1.0, e), dst);
        break;
    }
    default: {
        /* A bit pattern with the exponent's top bit cleared (finite) and a
         * zero exponent made 1 (normal, nonzero). */
        uint64_t b = bij(idx, (int)(8 * es), salt);
        int lo = (t == CG_CU_FLOAT16) ? 10 : (t == CG_CU_BFLOAT16) ? 7 : (t == CG_CU_FLOAT32) ? 23 : 52;
        int hi = (int)(8 * es) - 2; /* the exponent's top bit */
        b &= ~(1ull << hi);
        uint64_t emask = ((1ull << (hi + 1)) - 1) & ~((1ull << lo) - 1);
        if ((b & emask) == 0) {
            b |= 1ull << lo;
        }
        memcpy(dst, &b, es);
        break;
    }
    }
}

/* ---- one case ---------------------------------------------------------------- */

enum { MODE_SEPARATE, MODE_NCCL_IN_PLACE, MODE_CG_IN_PLACE, NMODES };
static const char *const mode_names[NMODES] = { "separate", "NCCL in place", "CG_CU_IN_PLACE" };

struct xcase {
    const struct cg_cu_algo *a;
    cg_cu_dtype t;
    cg_cu_op op;   /* CG_CU_OP_NONE for the copy collectives */
    size_t count;  /* the count argument */
    int mode;      /* MODE_* */
    int shift;     /* buffers start one element past 256-byte alignment */
    int root;      /* bcast */
};

/* A device buffer with guard bands, allocated once for every case, and a
 * host image of what each byte of it must hold. */
struct area {
    char *alloc;            /* CU_GUARD + 8 + cap + CU_GUARD bytes */
    size_t cap;
    std::vector<char> img;  /* guard, shift, span, guard */
    size_t pre;             /* bytes before the data: CU_GUARD + shift */
    size_t span;            /* data bytes in the image */
    char *ptr() const { return alloc + pre; }
};

static area g_s, g_r; /* sendbuf's and recvbuf's */

static void area_reset(area *a, size_t shift, size_t span)
{
    a->pre = CU_GUARD + shift;
    a->span = span;
    a->img.assign(a->pre + span + CU_GUARD, (char)CU_POISON);
}

static char *area_data(area *a, size_t off)
{
    return a->img.data() + a->pre + off;
}

static void describe(const xcase &k, char *buf, size_t cap)
{
    snprintf(buf, cap, "%s%s%s, count %zu, %s%s", cg_cu_dtype_name(k.t),
             (k.op == CG_CU_OP_NONE) ? "" : " ", (k.op == CG_CU_OP_NONE) ? "" : cg_cu_op_name(k.op),
             k.count, mode_names[k.mode], k.shift ? ", shifted by one element" : "");
    if (k.a->coll == CG_COLL_BCAST) {
        size_t n = strlen(buf);
        snprintf(buf + n, cap - n, ", root %d", k.root);
    }
}

/* The first byte of `got` that differs from `a`'s image, described; "" when
 * none does. */
static std::string first_difference(const area &a, const char *what, const std::vector<char> &got,
                                    size_t es, size_t out_off, size_t out_bytes)
{
    size_t n = a.img.size(), b = 0;
    if (memcmp(got.data(), a.img.data(), n) == 0) {
        return "";
    }
    while ((b < n) && (got[b] == a.img[b])) {
        b++;
    }
    char msg[300], h1[40], h2[40];
    if (b < a.pre) {
        snprintf(msg, sizeof(msg), "%s: byte %zu before the buffer was written", what, a.pre - b);
    } else if (b >= a.pre + a.span) {
        snprintf(msg, sizeof(msg), "%s: byte %zu past the data was written", what,
                 b - a.pre - a.span);
    } else {
        size_t e = (b - a.pre) / es, at = a.pre + e * es;
        int in_out = (e * es >= out_off) && (e * es < out_off + out_bytes);
        snprintf(msg, sizeof(msg), "%s element %zu (%s) is %s, expected %s", what, e,
                 in_out ? "of the result" : "not of the result: must be unchanged",
                 cu_hex(got.data() + at, es, h1), cu_hex(a.img.data() + at, es, h2));
    }
    return msg;
}

/* Sets up, calls and checks one case; returns "" or what went wrong. */
static std::string run_case(const xcase &k, uint64_t salt)
{
    const int p = g_size, r = g_rank;
    const size_t es = cg_cu_dtype_size(k.t), n = k.count;
    const enum cg_coll coll = k.a->coll;
    const data_kind kind = kind_of(k.t, k.op);
    const size_t in_elems =
        ((coll == CG_COLL_REDUCE_SCATTER_BLOCK) || (coll == CG_COLL_ALLTOALL)) ? (size_t)p * n : n;
    const size_t out_elems =
        ((coll == CG_COLL_ALLGATHER) || (coll == CG_COLL_ALLTOALL)) ? (size_t)p * n : n;
    const size_t span = ((in_elems > out_elems) ? in_elems : out_elems) * es;
    const size_t shift = k.shift ? es : 0;
    std::vector<char> in(in_elems * es);
    for (size_t i = 0; i < in_elems; i++) {
        gen(k.t, kind, p, r, i, salt, in.data() + i * es);
    }
    area_reset(&g_s, shift, span);
    area_reset(&g_r, shift, span);

    /* Where the input goes and what is passed; the result goes to `res`. */
    const void *sendbuf = g_s.ptr();
    void *recvbuf = g_r.ptr();
    area *load = (k.mode == MODE_SEPARATE) ? &g_s : &g_r;
    size_t load_off = 0;
    area *res = &g_r;
    size_t res_off = 0;
    int loads = 1;
    switch (coll) {
    case CG_COLL_ALLGATHER:
        if (k.mode != MODE_SEPARATE) {
            load_off = (size_t)r * n * es;
            sendbuf = g_r.ptr() + load_off;
        }
        break;
    case CG_COLL_REDUCE_SCATTER_BLOCK:
        if (k.mode == MODE_NCCL_IN_PLACE) {
            load = &g_s; /* the input in sendbuf, recvbuf its block rank */
            res = &g_s;
            res_off = (size_t)r * n * es;
            recvbuf = g_s.ptr() + res_off;
        }
        break;
    case CG_COLL_BCAST:
        loads = (r == k.root);
        if ((k.mode == MODE_SEPARATE) && (r != k.root)) {
            sendbuf = NULL; /* not significant */
        }
        break;
    default:
        break;
    }
    if (k.mode == MODE_NCCL_IN_PLACE) {
        if (coll != CG_COLL_ALLGATHER && coll != CG_COLL_REDUCE_SCATTER_BLOCK) {
            sendbuf = recvbuf;
        }
    } else if (k.mode == MODE_CG_IN_PLACE) {
        sendbuf = CG_CU_IN_PLACE;
    }
    if (loads && (in_elems > 0)) {
        memcpy(area_data(load, load_off), in.data(), in.size());
    }
    if ((cu_h2d(g_s.alloc, g_s.img.data(), g_s.img.size()) != cudaSuccess) ||
        (cu_h2d(g_r.alloc, g_r.img.data(), g_r.img.size()) != cudaSuccess)) {
        return std::string("set-up: ") + cudaGetErrorString(cudaGetLastError());
    }

    int rc = MPI_ERR_OTHER;
    switch (coll) {
    case CG_COLL_ALLREDUCE:
        rc = k.a->allreduce(sendbuf, recvbuf, n, k.t, k.op, MPI_COMM_WORLD, g_stream);
        break;
    case CG_COLL_ALLGATHER:
        rc = k.a->allgather(sendbuf, recvbuf, n, k.t, MPI_COMM_WORLD, g_stream);
        break;
    case CG_COLL_REDUCE_SCATTER_BLOCK:
        rc = k.a->reduce_scatter_block(sendbuf, recvbuf, n, k.t, k.op, MPI_COMM_WORLD, g_stream);
        break;
    case CG_COLL_BCAST:
        rc = k.a->bcast(sendbuf, recvbuf, n, k.t, k.root, MPI_COMM_WORLD, g_stream);
        break;
    case CG_COLL_ALLTOALL:
        rc = k.a->alltoall(sendbuf, recvbuf, n, k.t, MPI_COMM_WORLD, g_stream);
        break;
    default:
        return "no such collective in the table";
    }
    if (rc != MPI_SUCCESS) {
        return std::string("returned an error: ") + cg_last_error();
    }
    cudaError_t e = cudaStreamSynchronize(g_stream);
    if (e != cudaSuccess) {
        return std::string("cudaStreamSynchronize: ") + cudaGetErrorString(e);
    }

    /* The result, from the inputs of every rank. */
    char *out = area_data(res, res_off);
    char one[8];
    for (size_t i = 0; i < out_elems; i++) {
        char *o = out + i * es;
        switch (coll) {
        case CG_COLL_ALLREDUCE:
        case CG_COLL_REDUCE_SCATTER_BLOCK: {
            size_t pos = (coll == CG_COLL_ALLREDUCE) ? i : (size_t)r * n + i;
            gen(k.t, kind, p, 0, pos, salt, o);
            for (int q = 1; q < p; q++) {
                gen(k.t, kind, p, q, pos, salt, one);
                cu_ref1(k.t, k.op, CG_INTO_FROM, o, one);
            }
            break;
        }
        case CG_COLL_ALLGATHER:
            gen(k.t, kind, p, (int)(i / n), i % n, salt, o);
            break;
        case CG_COLL_BCAST:
            gen(k.t, kind, p, k.root, i, salt, o);
            break;
        default: /* alltoall: block q from rank q's block r */
            gen(k.t, kind, p, (int)(i / n), (size_t)r * n + i % n, salt, o);
            break;
        }
    }

    std::vector<char> got;
    const area *areas[2] = { &g_s, &g_r };
    const char *names[2] = { "sendbuf area", "recvbuf area" };
    for (int b = 0; b < 2; b++) {
        got.resize(areas[b]->img.size());
        e = cudaMemcpy(got.data(), areas[b]->alloc, got.size(), cudaMemcpyDeviceToHost);
        if (e != cudaSuccess) {
            return std::string("cudaMemcpy: ") + cudaGetErrorString(e);
        }
        std::string d = first_difference(*areas[b], names[b], got, es,
                                         (areas[b] == res) ? res_off : 0,
                                         (areas[b] == res) ? out_elems * es : 0);
        if (!d.empty()) {
            return d;
        }
    }
    return "";
}

/* ---- the matrix ---------------------------------------------------------------- */

static int reduces(const struct cg_cu_algo *a)
{
    return (a->coll == CG_COLL_ALLREDUCE) || (a->coll == CG_COLL_REDUCE_SCATTER_BLOCK);
}

/* Every case for one schedule; `quick` (the tags build): the counts and the
 * roots only. */
static std::vector<xcase> cases_for(const struct cg_cu_algo *a, int quick)
{
    const int p = g_size;
    const int red = reduces(a);
    std::vector<xcase> v;
    if (!quick) {
        for (int t = 0; t < CG_CU_NDTYPES; t++) {
            for (int op = 0; op < (red ? (int)CG_CU_NOPS : 1); op++) {
                xcase k = { a, (cg_cu_dtype)t, red ? (cg_cu_op)op : CG_CU_OP_NONE, 1001,
                            (t + op) % NMODES, op % 2, t % p };
                v.push_back(k);
            }
        }
    }
    const cg_cu_dtype red_types[NMODES] = { CG_CU_FLOAT32, CG_CU_BFLOAT16, CG_CU_INT64 };
    const cg_cu_op red_ops[NMODES] = { CG_CU_SUM, CG_CU_MAX, CG_CU_PROD };
    const cg_cu_dtype copy_types[NMODES] = { CG_CU_FLOAT16, CG_CU_INT32, CG_CU_FLOAT64 };
    std::vector<size_t> counts = { 0, 1, (size_t)p + 1, 1001 };
    if (!quick) {
        counts = { 0, 1, (size_t)p - 1, (size_t)p + 1, 2 * (size_t)p + 1, MAX_COUNT };
    }
    for (size_t count : counts) {
        for (int m = 0; m < NMODES; m++) {
            xcase k = { a, red ? red_types[m] : copy_types[m], red ? red_ops[m] : CG_CU_OP_NONE,
                        count, m, (int)((count + (size_t)m) % 2), (int)((count + (size_t)m) % (size_t)p) };
            v.push_back(k);
        }
    }
    if (a->coll == CG_COLL_BCAST) {
        const size_t bcounts[2] = { 7, 1001 };
        for (int root = 0; root < p; root++) {
            for (int j = 0; j < (quick ? 1 : 2); j++) {
                int m = (root + j) % NMODES;
                xcase k = { a, copy_types[(root + 2 * j) % NMODES], CG_CU_OP_NONE, bcounts[j], m,
                            (root + j) % 2, root };
                v.push_back(k);
            }
        }
    }
    return v;
}

/* ---- tags ------------------------------------------------------------------------ */

#ifdef CG_TAGS
/* Three calls with data and one with count 0; then what the tags hold. */
static int check_tags(const struct cg_cu_algo *a, std::string *why)
{
    const int red = reduces(a);
    cg_cu_tag_reset();
    for (int j = 0; j < 4; j++) {
        xcase k = { a, CG_CU_FLOAT32, red ? CG_CU_SUM : CG_CU_OP_NONE, (j < 3) ? (size_t)4099 : 0,
                    j % NMODES, 0, j % g_size };
        std::string d = run_case(k, 0x7a95 + (uint64_t)j);
        if (!d.empty()) {
            *why = "tags call " + std::to_string(j) + ": " + d;
            return 0;
        }
    }
    if (cg_cu_tag_collect() != 0) {
        *why = std::string("cg_cu_tag_collect: ") + cg_last_error();
        return 0;
    }
    uint64_t call_ns = 0, call_calls = 0;
    cg_cu_tag_read(a->tag_first, &call_ns, &call_calls);
    char msg[300];
    if ((call_calls != 3) || (call_ns == 0)) {
        snprintf(msg, sizeof(msg), "call tag %d: %llu calls, %llu ns; expected 3 calls (count 0 "
                 "enters no tag) and some time", a->tag_first, (unsigned long long)call_calls,
                 (unsigned long long)call_ns);
        *why = msg;
        return 0;
    }
    for (int id = 0; id < CG_NTAGS; id++) {
        uint64_t ns = 0, calls = 0;
        if (cg_cu_tag_read(id, &ns, &calls) != 0) {
            *why = std::string("cg_cu_tag_read: ") + cg_last_error();
            return 0;
        }
        int mine = (id >= a->tag_first) && (id < a->tag_first + a->tag_count);
        if (!mine && (calls != 0)) {
            snprintf(msg, sizeof(msg), "tag %d of another schedule entered %llu times", id,
                     (unsigned long long)calls);
            *why = msg;
            return 0;
        }
        /* Nested in the call tag: no more GPU time than it, but for the
         * events' resolution (about 0.5 us per event pair). */
        if (mine && (ns > call_ns + 2000 * (calls + 3))) {
            snprintf(msg, sizeof(msg), "tag %d: %llu ns in %llu entries, more than the call "
                     "tag's %llu ns", id, (unsigned long long)ns, (unsigned long long)calls,
                     (unsigned long long)call_ns);
            *why = msg;
            return 0;
        }
    }
    cg_cu_tag_reset();
    return 1;
}
#endif

/* ---- argument errors ---------------------------------------------------------------- */

/* Errors every rank finds alike, before any exchange: no op where the
 * collective reduces, a root out of range, buffers that overlap other than
 * in NCCL's in-place forms. Returns "" or what went wrong. */
static std::string argument_errors(const struct cg_cu_algo *a)
{
    const size_t n = 1001, es = 4;
    char *s = g_s.alloc + CU_GUARD, *r = g_r.alloc + CU_GUARD;
    char msg[300];
    int rc = MPI_SUCCESS, want = MPI_SUCCESS;
    switch (a->coll) {
    case CG_COLL_ALLREDUCE:
        rc = a->allreduce(s, r, n, CG_CU_FLOAT32, CG_CU_OP_NONE, MPI_COMM_WORLD, g_stream);
        want = MPI_ERR_OP;
        if (rc == want) {
            rc = a->allreduce(r + es, r, n, CG_CU_FLOAT32, CG_CU_SUM, MPI_COMM_WORLD, g_stream);
            want = MPI_ERR_BUFFER;
        }
        break;
    case CG_COLL_REDUCE_SCATTER_BLOCK:
        rc = a->reduce_scatter_block(s, r, n, CG_CU_FLOAT32, CG_CU_OP_NONE, MPI_COMM_WORLD,
                                     g_stream);
        want = MPI_ERR_OP;
        break;
    case CG_COLL_BCAST:
        rc = a->bcast(s, r, n, CG_CU_FLOAT32, g_size, MPI_COMM_WORLD, g_stream);
        want = MPI_ERR_ROOT;
        if (rc == want) {
            rc = a->bcast(s, r, n, CG_CU_FLOAT32, -1, MPI_COMM_WORLD, g_stream);
        }
        break;
    case CG_COLL_ALLGATHER:
        rc = a->allgather(r + ((size_t)g_rank * n + 1) * es, r, n, CG_CU_FLOAT32, MPI_COMM_WORLD,
                          g_stream);
        want = MPI_ERR_BUFFER;
        break;
    default:
        return "";
    }
    cudaError_t e = cudaStreamSynchronize(g_stream);
    if (rc != want) {
        snprintf(msg, sizeof(msg), "returned %d, expected %d: %s", rc, want, cg_last_error());
        return msg;
    }
    return (e == cudaSuccess) ? "" : cudaGetErrorString(e);
}

/* ---- main ------------------------------------------------------------------------ */

static int alloc_area(area *a, size_t cap)
{
    a->cap = cap;
    return cudaMalloc((void **)&a->alloc, 2 * CU_GUARD + 8 + cap) == cudaSuccess;
}

int main(int argc, char **argv)
{
#ifdef CG_TAGS
    const char *prog = "emitted_cuda_check_tags";
    const int quick = 1;
#else
    const char *prog = "emitted_cuda_check";
    const int quick = 0;
#endif
    int st = cu_test_start(&argc, &argv, prog);
    if (st != 0) {
        MPI_Finalize();
        return (st == 1) ? 0 : 1;
    }
    const size_t cap = (size_t)g_size * MAX_COUNT * 8;
    if ((g_size > 16) || (cudaStreamCreateWithFlags(&g_stream, cudaStreamNonBlocking) != cudaSuccess) ||
        !alloc_area(&g_s, cap) || !alloc_area(&g_r, cap) ||
        (cg_cu_comm_transport(MPI_COMM_WORLD, &g_transport) != MPI_SUCCESS)) {
        printf("FAIL %s: rank %d: set-up (p <= 16 needed): %s\n", prog, g_rank, cg_last_error());
        MPI_Finalize();
        return 1;
    }
    const char *extra = getenv("CG_CU_TEST_LABEL");
    snprintf(g_label, sizeof(g_label), "(p=%d %s%s%s%s)", g_size, cg_cu_transport_name(g_transport),
             quick ? " tags" : "", (extra != NULL) ? " " : "", (extra != NULL) ? extra : "");
    double t0 = MPI_Wtime();
    long total = 0;
    int failed_any = 0;

    /* The table itself: every GPU schedule, its function in its field. */
    {
        int bad = (cg_cu_nalgos < 1);
        for (int i = 0; i < cg_cu_nalgos; i++) {
            bad |= (cg_cu_algos[i] == NULL);
        }
        bad |= (cg_cu_algos[cg_cu_nalgos] != NULL);
        if (g_rank == 0) {
            printf("%s emitted_cuda_table_lists_the_gpu_schedules: %d %s\n", bad ? "FAIL" : "PASS",
                   cg_cu_nalgos, g_label);
        }
        failed_any |= bad;
    }

    for (int i = 0; i < cg_cu_nalgos; i++) {
        const struct cg_cu_algo *a = cg_cu_algos[i];
        double t1 = MPI_Wtime();
        std::vector<xcase> cases = cases_for(a, quick);
        int lines = 0, failed = 0;
        std::string err = argument_errors(a);
        if (!err.empty()) {
            failed++;
            lines++;
            printf("  rank %d: %s: argument errors: %s\n", g_rank, a->name, err.c_str());
        }
        for (size_t j = 0; j < cases.size(); j++) {
            const xcase &k = cases[j];
            uint64_t salt = cu_hash(((uint64_t)i << 40) ^ ((uint64_t)j << 20) ^ 0x5eed);
            std::string d = run_case(k, salt);
            if (!d.empty()) {
                failed++;
                if (lines++ < MAX_FAIL_LINES) {
                    char what[200];
                    describe(k, what, sizeof(what));
                    printf("  rank %d: %s: %s: %s\n", g_rank, a->name, what, d.c_str());
                }
            }
        }
#ifdef CG_TAGS
        std::string why;
        if (!check_tags(a, &why)) {
            failed++;
            printf("  rank %d: %s: tags: %s\n", g_rank, a->name, why.c_str());
        }
#else
        uint64_t ns = 1, calls = 1;
        if ((cg_cu_tag_read(a->tag_first, &ns, &calls) != 0) || (ns != 0) || (calls != 0)) {
            failed++;
            printf("  rank %d: %s: tags off, yet the call tag holds %llu calls\n", g_rank, a->name,
                   (unsigned long long)calls);
        }
#endif
        fflush(stdout);
        int all = 0;
        MPI_Allreduce(&failed, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        total += (long)cases.size();
        failed_any |= (all != 0);
        if (g_rank == 0) {
            printf("%s emitted_cuda %s %s: %zu cases%s, %.2f s\n", (all != 0) ? "FAIL" : "PASS",
                   a->name, g_label, cases.size(), quick ? " and the tags" : "",
                   MPI_Wtime() - t1);
        }
        fflush(stdout);
    }
    if (g_rank == 0) {
        printf("# %s p=%d: %ld cases, %.1f s\n", prog, g_size, total, MPI_Wtime() - t0);
    }
    MPI_Barrier(MPI_COMM_WORLD); /* no peer reads these any more (nor would after its sync) */
    (void)cudaStreamDestroy(g_stream);
    (void)cudaFree(g_s.alloc);
    (void)cudaFree(g_r.alloc);
    MPI_Finalize();
    return failed_any ? 1 : 0;
}
