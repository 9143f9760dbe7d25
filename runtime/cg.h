/* cg.h - the collgen runtime: what every emitted collective links against.
 *
 * Memory management: the runtime owns every buffer it hands out (scratch space
 * lives in a context cached on the communicator and is freed when the
 * communicator is freed); callers own the buffers they pass in.
 *
 * Modules, one prefix each: cg_tag_* (tag.c, timing tags; tag_trace.c, their
 * trace mode), cg_geom_* (block geometry, inline below), cg_xchg_* / cg_send / cg_recv (xchg.c, exchanges),
 * cg_reduce* (reduce.c, typed kernels), cg_call_* / cg_comm_* (comm.c,
 * cached communicator context and per-call state), cg_begin_* / cg_buffers
 * (prologue.c, every generated function's set-up).
 *
 * Errors: every function that can fail returns an MPI error code
 * (MPI_SUCCESS on success) so that an emitted collective can return it as
 * the MPI call it replaces would. The runtime never aborts; it records a
 * one-line explanation readable with cg_last_error().
 */
#ifndef CG_H
#define CG_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include "cg_colls.h"

/* ---- integer helpers: the schedule language's semantics, in C ---------- */

/* a mod b, never negative (b > 0): (rank - 1) % p is the left neighbour. */
static inline int cg_mod(long a, long b)
{
    long r = a % b;
    return (int)(r < 0 ? r + b : r);
}

/* floor(a / b), b > 0. */
static inline int cg_div(long a, long b)
{
    long q = a / b;
    return (int)(((a % b) != 0 && ((a < 0) != (b < 0))) ? q - 1 : q);
}

/* Why the bit scan: the emitted code asks these in every call and in loop
 * conditions (cg_log2(cg_pof2(p))); a loop over the bits was a tenth of a
 * small barrier's own instructions. 0 for x <= 1, as the loops were. */
static inline int cg_log2(long x) /* floor(log2(x)), x >= 1 */
{
    return (x > 1) ? 63 - __builtin_clzll((unsigned long long)x) : 0;
}

static inline int cg_ceil_log2(long x) /* smallest k with 2^k >= x, x >= 1 */
{
    return (x > 1) ? 64 - __builtin_clzll((unsigned long long)x - 1) : 0;
}

static inline int cg_pof2(long x) /* largest power of two <= x, x >= 1 */
{
    return (int)(1L << cg_log2(x));
}

static inline int cg_pow(long b, long e) /* b^e, e >= 0 */
{
    long r = 1;
    while (e-- > 0) {
        r *= b;
    }
    return (int)r;
}

static inline int cg_min(long a, long b) { return (int)(a < b ? a : b); }
static inline int cg_max(long a, long b) { return (int)(a > b ? a : b); }
static inline int cg_ceil_div(long a, long b) { return cg_div(a + b - 1, b); }

static inline int cg_ceil_log(long b, long x) /* smallest k with b^k >= x; b >= 2, x >= 1 */
{
    int k = 0;
    for (long v = 1; v < x; k++) {
        v = (v > x / b) ? x : v * b;
    }
    return k;
}

/* Bit functions (long long arguments: a 64-bit let may be passed). Why the
 * mask: see gen/expr.c, NEGABINARY_MASK. */
static inline int cg_to_negabinary(long long x) /* base -2 digits of x, read in binary */
{
    const unsigned long long m = 0xAAAAAAAAAAAAAAAAull;
    return (int)(((unsigned long long)x + m) ^ m);
}

static inline int cg_from_negabinary(long long n) /* inverse of cg_to_negabinary, n >= 0 */
{
    const unsigned long long m = 0xAAAAAAAAAAAAAAAAull;
    return (int)(long long)(((unsigned long long)n ^ m) - m);
}

static inline int cg_bit_reverse(long long x, long long n) /* n low bits reversed, 0 <= x < 2^n */
{
    long long r = 0;
    for (long long i = 0; i < n; i++) {
        r |= ((x >> i) & 1) << (n - 1 - i);
    }
    return (int)r;
}

static inline int cg_ctz(long long x) { return __builtin_ctzll((unsigned long long)x); } /* x >= 1 */
static inline int cg_popcount(long long x) { return __builtin_popcountll((unsigned long long)x); }

/* ---- block geometry ------------------------------------------------------ */

/* `count` elements split into `nb` near-equal blocks: block i has
 * count / nb elements, plus one for the first count % nb blocks. A buffer of
 * more than nb blocks repeats the pattern: block j is block j % nb of copy
 * j / nb, so a scratch buffer of 2 * nb blocks holds two full vectors. */
struct cg_geom {
    size_t count; /* elements in one full vector */
    long nb;      /* blocks in one full vector (>= 1) */
};

/* Why the shortcuts: every exchange, copy and reduce asks these several
 * times, and a 64-bit division costs tens of cycles; a whole-vector buffer
 * (nb 1, most latency schedules) needs none, and a block inside the first
 * copy of the vector needs no j / nb. The results are the general
 * formula's. */
static inline size_t cg_geom_off(const struct cg_geom *g, long j) /* first element of block j */
{
    if (g->nb == 1) {
        return (size_t)j * g->count;
    }
    long cyc = 0, i = j;
    if ((j < 0) || (j >= g->nb)) {
        cyc = j / g->nb;
        i = j % g->nb;
    }
    size_t base = g->count / (size_t)g->nb, rem = g->count % (size_t)g->nb;
    return (size_t)cyc * g->count + (size_t)i * base + ((size_t)i < rem ? (size_t)i : rem);
}

static inline size_t cg_geom_len(const struct cg_geom *g, long j) /* elements in block j */
{
    if (g->nb == 1) {
        return g->count;
    }
    size_t base = g->count / (size_t)g->nb, rem = g->count % (size_t)g->nb;
    long i = ((j >= 0) && (j < g->nb)) ? j : (j % g->nb);
    return base + ((size_t)i < rem ? 1 : 0);
}

/* A buffer seen as blocks. Ranges of blocks wrap modulo nblocks. */
struct cg_buf {
    char *base;          /* first byte */
    struct cg_geom geom; /* how blocks map to elements */
    long nblocks;        /* blocks in this buffer */
};

/* ---- per-call state ------------------------------------------------------ */

struct cg_comm; /* cached per communicator (comm.c) */
struct cg_topo; /* node and lane structure (topo.c, below) */

struct cg_call {
    MPI_Comm comm;         /* private duplicate of the caller's communicator */
    int rank;              /* rank in comm */
    int p;                 /* size of comm */
    MPI_Datatype dtype;    /* element datatype (moving collectives: the basic type of the
                            * caller's signature, cg_sig) */
    MPI_Aint extent;       /* extent of dtype in bytes */
    MPI_Aint true_lb;      /* dtype's true lower bound and extent (cg_buf_bytes) */
    MPI_Aint true_extent;
    MPI_Op op;             /* reduction op (MPI_OP_NULL when none) */
    int kernel;            /* typed kernel index, or -1: MPI_Reduce_local */
    struct cg_comm *cc;    /* cached context (scratch, duplicate comm) */
    MPI_Request *reqs;     /* requests of the current exchange */
    int nreqs;             /* requests posted */
    int tag;               /* MPI tag of the current exchange */
    MPI_Datatype *types;   /* derived datatypes to free after the exchange */
    int ntypes;            /* how many */
    int nseg;              /* pieces per message of the current exchange (cg_xchg_begin_seg) */
    int nxrecv;            /* its receives recorded for cg_xchg_wait_reduce */
    /* The caller's arguments, as the collective's cg_begin_<coll> recorded
     * them for cg_buffers (prologue.c). */
    int coll;              /* enum cg_coll (cg_colls.h); -1 after a plain cg_call_begin */
    const void *sendbuf;   /* as passed (MPI_IN_PLACE too); bcast, barrier: NULL */
    void *recvbuf;         /* as passed; bcast: its buffer; barrier: NULL */
    size_t sendcount;      /* as passed; collectives with one count: it */
    size_t recvcount;      /* as passed; collectives with one count: it */
    MPI_Datatype sendtype; /* as passed; collectives with one datatype: it */
    MPI_Datatype recvtype; /* as passed; collectives with one datatype: it */
    int root;              /* rooted collectives; else 0 */
    size_t count;          /* elements of this rank's blocks: the vector (B blocks), or one
                            * of the p equal blocks; in dtype */
    int empty;             /* count is 0: the call has nothing to do */
    int result;            /* the call's result when the begin returned CG_DONE */
    int replayed;          /* the begin replayed the call's plan (plan.c) */
    const struct cg_topo *topo; /* CG_NEEDS_TOPOLOGY: this communicator's (regular) */
    /* Where the caller's output buffer is not dense in the blocks' basic
     * type (cg_sig), the blocks live in scratch and cg_call_finish unpacks
     * them into it. */
    void *unpack_to;       /* the caller's buffer; NULL: nothing to unpack */
    size_t unpack_count;   /* its elements */
    MPI_Datatype unpack_type; /* their datatype */
    void *unpack_from;     /* the packed blocks (c->count-sized blocks of c->dtype) */
    size_t unpack_nbasic;  /* basic elements there */
    char token;            /* barrier's one-byte block */
    int contiguous;        /* dtype is plain bytes (cg_type_is_contiguous), found once per call */
    /* The input copy done on first use (lazy.c): allreduce, scan and reduce
     * start with out = sendbuf, a gather's non-root with its own block of
     * out = sendbuf; instead of copying it, each such block of out stands
     * for sendbuf's until the schedule writes it. */
    char *lazy_out;        /* out's base (NULL: no input copy pending) */
    const char *lazy_in;   /* sendbuf, laid out like out (shifted: its block's offset) */
    struct cg_geom lazy_geom; /* out's geometry */
    long lazy_nblocks;     /* out's blocks */
    long lazy_pending;     /* blocks of out that still stand for sendbuf's */
    int lazy_flush;        /* copy the pending blocks at the end (out is the result) */
    /* A receive written straight into out (cg_recv_to, lazy.c): blocks
     * [borrow_ofirst, + borrow_n) of out, still standing for sendbuf's,
     * hold what the schedule receives into borrow_tmp's [borrow_tfirst,
     * + borrow_n) until the reduce that consumes it. */
    int borrow_on;         /* 1 while such a receive is recorded */
    int borrow_waited;     /* its exchange is complete */
    struct cg_buf borrow_tmp; /* the buffer the schedule names (tmp) */
    long borrow_tfirst;    /* its range */
    long borrow_ofirst;    /* where in out the data is */
    long borrow_n;         /* blocks on both sides */
};

/* Schedule requirements, passed to cg_call_begin. */
#define CG_NEEDS_COMMUTATIVE 1

/* Starts a call on `comm`: looks up or creates the cached context (a
 * duplicate with MPI_ERRORS_RETURN, cached as an attribute), checks that
 * `op` is commutative when flags has CG_NEEDS_COMMUTATIVE (MPI_ERR_OP
 * otherwise, with cg_last_error() saying why), and picks the typed kernel.
 * op may be MPI_OP_NULL for collectives that do not reduce. */
int cg_call_begin(struct cg_call *c, MPI_Comm comm, MPI_Datatype dtype, MPI_Op op,
                  int flags);
/* Ends the call (releases per-call state; cached scratch stays). */
void cg_call_end(struct cg_call *c);

/* This process's rank in `comm`, for the rooted collectives whose datatype
 * depends on it (gather: recvtype at the root, sendtype elsewhere), which
 * must be known before cg_call_begin. MPI_ERR_COMM for MPI_COMM_NULL. */
int cg_comm_rank(MPI_Comm comm, int *rank);

/* Scratch space reused between calls: slot 0..3, at least `bytes` bytes,
 * valid until the next cg_scratch on the same slot or the end of the comm.
 * Returns NULL (and sets *rc to MPI_ERR_NO_MEM) when memory runs out. */
void *cg_scratch(struct cg_call *c, int slot, size_t bytes, int *rc);

/* Bytes of a buffer with geometry g and nblocks blocks (extent-scaled). */
size_t cg_buf_bytes(const struct cg_call *c, const struct cg_geom *g, long nblocks);

/* ---- exchanges (xchg.c) -------------------------------------------------- */

/* One exchange step: post every send and receive, then wait for all.
 * Blocks [first, first + n) of b, wrapping modulo b->nblocks, form one
 * message (a derived datatype when the range wraps); messages longer than
 * INT_MAX elements are split the same way on both sides. */
int cg_xchg_begin(struct cg_call *c, int tag);
int cg_send(struct cg_call *c, int to, const struct cg_buf *b, long first, long n);
int cg_recv(struct cg_call *c, int from, const struct cg_buf *b, long first, long n);
/* A receive into blocks [first, first + n) of tmp that the reduce step
 * right after the exchange reduces into blocks [ofirst, ofirst + n) of out,
 * and that nothing else reads (the generator proved it: cg_recv_redirect,
 * gen/check.c). Where those blocks of out still stand for sendbuf's (lazy.c)
 * and the op has a typed kernel, the message lands in out itself and that
 * reduce becomes out = sendbuf op out in place, as Open MPI's reduce does
 * with its accumulation buffer: no pass over tmp, two streams instead of
 * three. Elsewhere it is cg_recv. */
int cg_recv_to(struct cg_call *c, int from, const struct cg_buf *tmp, long first, long n,
               const struct cg_buf *out, long ofirst);
/* Measuring hook: cg_recv_to_enable(0) makes every cg_recv_to a cg_recv
 * (the code as before it), process-wide, until cg_recv_to_enable(1), so
 * that one process can time a collective both ways, interleaved
 * (harness/measurements/2026-12-07-recv-to.md). On by default. */
void cg_recv_to_enable(int on);
/* Measuring hook, process-wide: which messages of one run an exchange holds
 * back (xchg.c). 2 (the default): its first, and its latest send, so that
 * the receives after a send post before it and its last send is MPI_Send at
 * the wait. 1: its first only (posting order is schedule order). 0: none,
 * every message posted at once (an exchange of one message is then
 * MPI_Isend or MPI_Irecv + MPI_Wait, not MPI_Send or MPI_Recv). */
void cg_xchg_hold_enable(int level);
int cg_xchg_wait(struct cg_call *c);

/* Strided ranges (strided.c): blocks first + i * stride (mod b->nblocks),
 * i < n, all different (the verifier proved it), as one message. */
int cg_send_strided(struct cg_call *c, int to, const struct cg_buf *b, long first, long n,
                    long stride);
int cg_recv_strided(struct cg_call *c, int from, const struct cg_buf *b, long first, long n,
                    long stride);
/* A segmented exchange (an exchange step with "segments"): like
 * cg_xchg_begin, but every message of the step is cut into `segments`
 * pieces by element position (piece j of an L-element range is elements
 * L*j/S .. L*(j+1)/S - 1, the same cut on both ends), each a message of its
 * own. 1..CG_MAX_SEGMENTS (MPI_ERR_ARG otherwise). Completed by
 * cg_xchg_wait, or by cg_xchg_wait_reduce. */
int cg_xchg_begin_seg(struct cg_call *c, int tag, int segments);
/* Completes a segmented exchange and reduces, as cg_reduce would, n blocks
 * of `from` into `into`, where one of the two ranges (from, else into) is
 * exactly one receive of the exchange: waits for its piece j, reduces piece
 * j while the later pieces arrive, then waits for everything else. The
 * generator proved that no other message of the exchange overlaps `into`,
 * nor a receive `from` (gen/sim.c). MPI_ERR_INTERN when neither range is a
 * receive of it. */
int cg_xchg_wait_reduce(struct cg_call *c, const struct cg_buf *into, long ifirst,
                        const struct cg_buf *from, long ffirst, long n, int order);

/* Testing hook: the largest message in elements before splitting
 * (default INT_MAX). */
void cg_xchg_set_max_elems(size_t max_elems);
/* Testing hook: a message of several pieces (a wrapping or strided range)
 * of at most `bytes` bytes (at most CG_PACK_ARENA) is packed into the
 * context's arena of CG_PACK_ARENA bytes, while the exchange leaves room
 * there, and sent as one run; 0 packs none (every such message an hindexed
 * type). Process-wide. */
#define CG_XCHG_PACK_DEFAULT 32768
#define CG_PACK_ARENA 65536
void cg_xchg_set_pack_max(size_t bytes);

/* ---- local data movement (reduce.c) -------------------------------------- */

#define CG_INTO_FROM 0 /* into = into op from (into's data comes first) */
#define CG_FROM_INTO 1 /* into = from op into (from's data comes first) */

/* Reduces n blocks of `from` (starting at block ffirst) into n blocks of
 * `into` (starting at ifirst), both wrapping, element streams aligned.
 * Typed kernels for int32, int64, float, double x sum, prod, min, max;
 * anything else through MPI_Reduce_local, which respects `order`. */
int cg_reduce(struct cg_call *c, const struct cg_buf *into, long ifirst,
              const struct cg_buf *from, long ffirst, long n, int order);

/* Copies n blocks (wrapping on both sides). */
int cg_copy(struct cg_call *c, const struct cg_buf *to, long tfirst,
            const struct cg_buf *from, long ffirst, long n);

/* The same over strided ranges (strided.c): block i of each side is
 * first + i * stride (mod its blocks). */
int cg_reduce_strided(struct cg_call *c, const struct cg_buf *into, long ifirst, long istride,
                      const struct cg_buf *from, long ffirst, long fstride, long n, int order);
int cg_copy_strided(struct cg_call *c, const struct cg_buf *to, long tfirst, long tstride,
                    const struct cg_buf *from, long ffirst, long fstride, long n);

/* Zeroes the bytes of n blocks of b from block first (wrapping): a fill
 * step. The datatype must be contiguous (MPI_ERR_TYPE otherwise), since
 * zeros are written over whole extents. */
int cg_fill(struct cg_call *c, const struct cg_buf *b, long first, long n);

/* Copies scount x stype at src to dcount x dtype at dst (the MPI type
 * signatures must match): memcpy when both are the same contiguous type,
 * otherwise through MPI_Sendrecv on MPI_COMM_SELF. */
int cg_copy_typed(const void *src, size_t scount, MPI_Datatype stype, void *dst,
                  size_t dcount, MPI_Datatype dtype);

/* ---- type signatures (signature.c) --------------------------------------- */

/* What a datatype's type signature is made of. MPI lets ranks pass
 * different (count, datatype) pairs for one message when the signatures
 * match, so the collectives that move data without an op count their
 * blocks in `basic` elements (prologue.c): the same on every rank. */
struct cg_sig {
    MPI_Datatype basic; /* the one basic type of the signature; MPI_BYTE when it has
                         * several (or none) */
    size_t per;         /* basic elements in one element (bytes for MPI_BYTE) */
    int dense;          /* 1: n elements are n * per basic elements, in signature order,
                         * packed from the first one's address: usable as they are */
};

/* Reads type (MPI_Type_get_envelope / _contents, down to named types).
 * MPI_ERR_TYPE for MPI_DATATYPE_NULL. */
int cg_type_sig(MPI_Datatype type, struct cg_sig *s);

/* Copies n elements of `type` at buf to nbasic elements of `basic` at
 * packed (unpack 0), or back (unpack 1), leaving the holes of buf as they
 * are: memcpy where type is dense, else MPI_Sendrecv on MPI_COMM_SELF in
 * pieces of whole elements. MPI_ERR_TYPE when the two do not hold the same
 * number of basic elements. */
int cg_sig_copy(void *buf, size_t n, MPI_Datatype type, void *packed, size_t nbasic,
                MPI_Datatype basic, int unpack);

/* Typed kernels, exposed for tests: out[i] = out[i] op in[i] (CG_INTO_FROM
 * order). Returns -1 when (dtype, op) has no typed kernel. */
int cg_reduce_kernel_index(MPI_Datatype dtype, MPI_Op op);
void cg_reduce_kernel_run(int kernel, void *inout, const void *in, size_t n);
/* The same with the operands' roles swapped: inout[i] = in[i] op inout[i]. */
void cg_reduce_kernel_sw_run(int kernel, void *inout, const void *in, size_t n);
/* The same into a third buffer: out[i] = a[i] op b[i] (a in inout's part). */
void cg_reduce_kernel3_run(int kernel, void *out, const void *a, const void *b, size_t n);

/* ---- call steps (call.c) ------------------------------------------------- */

/* Any generated collective, cast back to its cg_<coll>_fn where it is called
 * (call.c, a prologue's fallback). */
typedef void (*cg_any_fn)(void);

/* A call step: collective `coll` (enum cg_coll) on c->comm, the MPI
 * library's (fn NULL) or the generated fn, with c's datatype and op, on
 * views [first, first + n) of the caller's buffers (sb NULL: no "send"
 * view). Views equal to the callee's in-place form are passed as
 * MPI_IN_PLACE; uneven blocks make native equal-block collectives their
 * v-variants. Returns MPI_SUCCESS or an MPI error code. */
int cg_call_coll(struct cg_call *c, int coll, cg_any_fn fn, int root, const struct cg_buf *sb,
                 long sfirst, long sn, const struct cg_buf *rb, long rfirst, long rn);
/* The same on `comm`, a sub-communicator from cg_call_split (root and the
 * views' groups are in its ranks). */
int cg_call_coll_in(struct cg_call *c, MPI_Comm comm, int coll, cg_any_fn fn, int root,
                    const struct cg_buf *sb, long sfirst, long sn, const struct cg_buf *rb,
                    long rfirst, long rn);
/* The same with "op": "bor": the callee reduces the views as bytes
 * (MPI_BYTE, MPI_BOR), which is exact when every position holds one rank's
 * data and zeros elsewhere (zero-filled mock-ups). Needs a contiguous
 * datatype and views of equal blocks (MPI_ERR_TYPE / MPI_ERR_ARG). */
int cg_call_coll_bor(struct cg_call *c, int coll, cg_any_fn fn, int root,
                     const struct cg_buf *sb, long sfirst, long sn, const struct cg_buf *rb,
                     long rfirst, long rn);
int cg_call_coll_bor_in(struct cg_call *c, MPI_Comm comm, int coll, cg_any_fn fn, int root,
                        const struct cg_buf *sb, long sfirst, long sn, const struct cg_buf *rb,
                        long rfirst, long rn);
/* The sub-communicator of this rank's colour for call step `site`
 * ("<schedule>/<phase>/<step>", a string that lives as long as the program)
 * in round `instance`: MPI_Comm_split of c->comm (key: rank) on first use,
 * then cached with the context until the caller's communicator is freed. */
int cg_call_split(struct cg_call *c, const char *site, long instance, int color, MPI_Comm *sub);

/* ---- prologues (prologue.c) --------------------------------------------- */

/* What every generated collective does before its first phase, in two calls,
 * and how it ends:
 *
 *   int rc = MPI_SUCCESS;
 *   CG_TRY(cg_begin_<coll>(&c, <the collective's arguments>, flags, fallback,
 *                          CG_SITE(<the function>)));
 *   ... p, rank, the schedule's lets, the call tag ...
 *   CG_TRY(cg_buffers(&c, B, &in, &out, &tmp, scratch blocks));
 *   ... the phases ...
 * out:
 *   return cg_call_finish(&c, rc);
 *
 * cg_begin_<coll> (one per collective, with its MPI signature) records the
 * arguments in c, picks the datatype this rank's blocks are counted in
 * (gather: recvtype at the root, sendtype elsewhere; scatter: sendtype at a
 * root called in place), runs cg_call_begin's checks (CG_NEEDS_COMMUTATIVE
 * in flags: MPI_ERR_OP for a non-commutative op), and with
 * CG_NEEDS_TOPOLOGY finds the node and lane structure (c->topo): where the
 * communicator is not regular it ends the call and runs `fallback` (a
 * cg_<coll>_fn of the same collective, cast to cg_any_fn) on the same
 * arguments. It returns MPI_SUCCESS (go on), an MPI error code, or CG_DONE:
 * the call is complete without its phases, because the count is 0 (never
 * for barrier), the fallback ran or the call's plan was replayed (plan.c);
 * c->result is then the call's result.
 * With CG_READS_PARAMS a count of 0 is not CG_DONE but c->empty, which the
 * caller tests after reading its params (a bad value is an error even
 * then). cg_call_finish is safe on c whatever the begin returned. */
#define CG_NEEDS_TOPOLOGY 2
#define CG_READS_PARAMS 4
#define CG_DONE (-1) /* no MPI error code is negative */

/* Who is calling a begin: the generated function itself, and whether it
 * was built with timing tags (CG_TAGS). A call's plan (plan.c) is replayed
 * only for the function that recorded it, and never while that function's
 * tags are on: a replay runs no emitted code, so it would record no tag.
 * CG_SITE_NONE (a test, a hand-written caller) never records nor replays. */
struct cg_site {
    cg_any_fn fn; /* NULL: no plans */
    int tagged;   /* built with CG_TAGS */
};
#ifdef CG_TAGS
#define CG_SITE(fn) ((struct cg_site){ (cg_any_fn)(fn), 1 })
#else
#define CG_SITE(fn) ((struct cg_site){ (cg_any_fn)(fn), 0 })
#endif
#define CG_SITE_NONE ((struct cg_site){ NULL, 0 })

#define X(ID, id, mpi, bufs, combine, rooted, shape, input, in_place, size, busbw, args, ...) \
    int cg_begin_##id(struct cg_call *c, args, int flags, cg_any_fn fallback,                 \
                      struct cg_site site);
CG_COLL_TABLE(X)
#undef X

/* ---- plans (plan.c) ------------------------------------------------------ */

/* A call's plan: what a generated call did, recorded once and replayed by
 * later calls of the same function with the same arguments on the same
 * communicator (every pointer, count, datatype, root and op equal): its
 * messages (MPI_Isend, MPI_Irecv, MPI_Send, MPI_Recv, MPI_Wait in the same
 * order, on the same addresses, peers and tags), its copies and its
 * reductions, without the prologue, the lazy input's bookkeeping or the
 * walk over block ranges that found them. plan.c says when that is safe
 * and when a call is not recorded.
 *
 * Modes, process-wide (a measuring and testing hook; also the environment
 * variable CG_PLANS=0, 1 or eager, read at the first call): */
#define CG_PLANS_OFF 0   /* never record nor replay */
#define CG_PLANS_ON 1    /* record a call whose arguments were seen before (default) */
#define CG_PLANS_EAGER 2 /* record every call that can be (tests: the next call replays) */
void cg_plan_mode(int mode);
/* Plans replayed by the calling thread so far (tests, measurements). */
unsigned long cg_plan_replays(void);

/* Ends the call (cg_call_end) and returns its result: rc, or for CG_DONE
 * what the begin left in c->result. */
int cg_call_finish(struct cg_call *c, int rc);

/* The buffers of the call begun on c, in blocks: `out` (always) and `in`
 * (the collectives whose table row has an input) over the caller's memory,
 * `tmp` (NULL when the schedule declares no scratch) of ntmp blocks in
 * scratch slot 0. nb is B, the schedule's blocks (p for p equal blocks, 1
 * for barrier's token; MPI_ERR_INTERN when it does not fit the collective).
 * Makes the copies that MPI_IN_PLACE, non-root ranks and mismatched type
 * pairs need (scratch slot 1): a reduce or gather outside the root works in
 * scratch, since recvbuf is significant only at the root; an input the result
 * overwrites in place, or one in another datatype than the blocks', is
 * copied. */
int cg_buffers(struct cg_call *c, long nb, struct cg_buf *in, struct cg_buf *out,
               struct cg_buf *tmp, long ntmp);

/* ---- topology (topo.c) --------------------------------------------------- */

/* The node and lane structure of a communicator (topo.c says how it is
 * found, and how CG_PPN overrides it). Valid while the communicator lives. */
struct cg_topo {
    int detected;       /* filled in */
    int handles;        /* node_comm and lane_comm are valid handles (or NULL) */
    int regular;        /* every node holds ppn consecutive ranks */
    int ppn;            /* ranks per node (regular), or this node's ranks */
    int nnodes;         /* p / ppn (regular) */
    int node;           /* rank / ppn (regular) */
    int local;          /* rank % ppn (regular) */
    MPI_Comm node_comm; /* this node's ranks, by rank (regular; else MPI_COMM_NULL) */
    MPI_Comm lane_comm; /* the ranks with this local index, by rank (regular) */
    const char *source; /* "shared_memory" or "CG_PPN" */
    char why[160];      /* why it is not regular ("" when it is) */
};

/* The topology of c's communicator, detected on first use (a collective
 * operation: every rank must ask) and cached with its context. */
int cg_topo(struct cg_call *c, const struct cg_topo **topo);
/* The same for any communicator (the harness's lane benchmarks). */
int cg_topo_of(MPI_Comm comm, const struct cg_topo **topo);
/* Detects the topology of `comm` (rank `rank` of `p`) into *t: a collective
 * operation; the node and lane communicators are split from comm. Uncached
 * (cg_topo caches it); freed with cg_topo_free. Used by both runtimes. */
int cg_topo_detect(MPI_Comm comm, int rank, int p, struct cg_topo *t);
/* Frees a detected topology's communicators (safe on a zeroed struct). */
void cg_topo_free(struct cg_topo *t);

/* ---- tunable parameters (param.c) --------------------------------------- */

/* A schedule's "params" knob with a verified range. The emitted code keeps
 * one static cg_param per knob and reads its value with cg_param_value. */
struct cg_param {
    const char *schedule; /* "bcast_knomial" */
    const char *name;     /* "radix" */
    int dflt, lo, hi;     /* default and the verified range lo..hi */
    unsigned gen;         /* generation of the cached value */
    int value;            /* cached value */
};

/* The knob's value: set by cg_param_set, else the environment variable
 * CG_PARAM_<schedule>_<name> (e.g. CG_PARAM_bcast_knomial_radix=4), else
 * the default. A value outside lo..hi, or a malformed one, is MPI_ERR_ARG
 * with cg_last_error() saying which. Every rank must use the same value. */
int cg_param_value(struct cg_param *k, int *value);
/* Sets a knob for later calls (schedule and name as in the JSON); value
 * INT_MIN removes the setting. Not thread-safe. Returns MPI_ERR_ARG when
 * the table of settings is full (64 entries). */
int cg_param_set(const char *schedule, const char *name, int value);

/* ---- errors -------------------------------------------------------------- */

/* The last error the runtime recorded on this thread, "" when none. */
const char *cg_last_error(void);
void cg_set_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* A schedule's table ("tables", schedules/README.md) has n elements in an
 * array of max: MPI_SUCCESS, or MPI_ERR_INTERN with the reason recorded
 * where n is outside 0..max (a process count the verifier did not run). */
static inline int cg_table_fits(long n, long max, const char *table)
{
    if (n >= 0 && n <= max) {
        return MPI_SUCCESS;
    }
    cg_set_error("table '%s' needs %ld elements; the schedule's \"max\" is %ld", table, n, max);
    return MPI_ERR_INTERN;
}

/* Returns from the enclosing emitted function's error path. */
#define CG_TRY(expr)                         \
    do {                                     \
        if ((rc = (expr)) != MPI_SUCCESS) {  \
            goto out;                        \
        }                                    \
    } while (0)

/* ---- timing tags (tag.c) ------------------------------------------------- */

/* Tag ids are assigned by the generator (emitted/mpi/collgen.h); names,
 * kinds and parents are in the generated registry. Each tag accumulates, per
 * rank, the time spent inside it and how often it was entered. Compiled out
 * (no code, no symbol referenced) unless CG_TAGS is defined. */
#define CG_TAG_CAPACITY 4096

struct cg_tag_acc {
    uint64_t ns;    /* total time inside, in ticks of cg_tag_ticks (cg_tag_read: ns) */
    uint64_t calls; /* times entered */
    uint64_t t0;    /* start of the open region (ticks) */
};

extern struct cg_tag_acc cg_tag_accs[CG_TAG_CAPACITY];

/* Monotonic clock in nanoseconds. Out of line (tag.c) because
 * clock_gettime is POSIX, which a -std=c11 file including cg.h cannot see. */
uint64_t cg_tag_now(void);

/* Trace mode (tag_trace.c): while cg_tag_tracing is set, every BEGIN and
 * END also appends {time, id, begin or end} to the buffer given to
 * cg_tag_trace_on, read from cg_tag_now() (the global clock's base; the
 * accumulator may count TSC ticks). Off, it costs one load and a branch
 * not taken. */
struct cg_tag_event {
    uint64_t ns;  /* cg_tag_now() at the begin or end */
    int32_t id;   /* tag id */
    int32_t end;  /* 0 begin, 1 end */
};

extern int cg_tag_tracing; /* 1 between cg_tag_trace_on and cg_tag_trace_off */

/* Appends one event; once the buffer is full, counts it as dropped. */
void cg_tag_trace_event(int id, int end, uint64_t ns);
/* Records into buf[n..cap) from now on (buf[0..n) are kept). */
void cg_tag_trace_on(struct cg_tag_event *buf, size_t cap, size_t n);
/* Stops recording. Returns the events in the buffer; *dropped (may be
 * NULL): events not kept since the buffer was full, since the last on. */
size_t cg_tag_trace_off(uint64_t *dropped);

/* The clock tag regions read. Why the time-stamp counter: a region is two
 * reads, and clock_gettime's 25 ns each made a tagged ring allreduce at
 * p = 4 (18 regions) a microsecond slower than the code it measures;
 * rdtsc is about 7 ns. cg_tag_reset turns it on where the kernel's own
 * clock is the TSC (so it is invariant and synchronised across cores) and
 * measures ticks per nanosecond; cg_tag_read converts. Elsewhere, and
 * before the first reset, regions read cg_tag_now. */
extern int cg_tag_tsc;
#if defined(__x86_64__) && !defined(__CUDACC__)
#include <x86intrin.h>
static inline uint64_t cg_tag_ticks(void)
{
    return cg_tag_tsc ? (uint64_t)__rdtsc() : cg_tag_now();
}
#else
static inline uint64_t cg_tag_ticks(void)
{
    return cg_tag_now();
}
#endif

/* Code built with tags records them unless switched off (cg_tag_enable;
 * on by default, process-wide): off, a region costs one load and a branch.
 * Why a switch: bench times a generated point with the tags off and reads
 * them in repetitions of its own (harness/FORMATS.md, "tags"), since a
 * region's two clock reads are a tenth of a small call's time. Switch only
 * between calls, never with a region open. */
extern int cg_tag_off;
void cg_tag_enable(int on);

#ifdef CG_TAGS
#define CG_TAG_BEGIN(id)                                                                 \
    (__builtin_expect(cg_tag_off, 0)                                                     \
         ? (void)0                                                                       \
         : (cg_tag_accs[(id)].t0 = cg_tag_ticks(),                                       \
            __builtin_expect(cg_tag_tracing, 0) ? cg_tag_trace_event((id), 0, cg_tag_now()) \
                                                : (void)0))
#define CG_TAG_END(id)                                                \
    do {                                                              \
        if (!__builtin_expect(cg_tag_off, 0)) {                       \
            struct cg_tag_acc *cg_a_ = &cg_tag_accs[(id)];            \
            cg_a_->ns += cg_tag_ticks() - cg_a_->t0;                  \
            cg_a_->calls++;                                           \
            if (__builtin_expect(cg_tag_tracing, 0)) {                \
                cg_tag_trace_event((id), 1, cg_tag_now());            \
            }                                                         \
        }                                                             \
    } while (0)
#else
#define CG_TAG_BEGIN(id) ((void)0)
#define CG_TAG_END(id) ((void)0)
#endif

/* Zeroes every tag of this rank (and, the first time, picks the clock). */
void cg_tag_reset(void);
/* Reads tag `id` of this rank. Returns 0, or -1 for an id out of range. */
int cg_tag_read(int id, uint64_t *ns, uint64_t *calls);

#endif
