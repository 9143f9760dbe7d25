/* cg_internal.h - what the runtime's .c files share and nothing else sees:
 * the cached context's layout, the MPI check macro, and the walk of a
 * wrapping block range. Everything here is static inline or a type.
 */
#ifndef CG_INTERNAL_H
#define CG_INTERNAL_H

#include "cg.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define CG_NSCRATCH 4 /* scratch slots per context */
#define CG_NTYPEINFO 4 /* datatypes whose answers a context remembers (comm.c) */

/* What cg_call_begin asks MPI of a datatype, remembered per communicator
 * context for named datatypes only (comm.c, type_info, says why that is
 * safe); a derived handle is remembered as not named, with nothing else. */
struct cg_type_info {
    MPI_Datatype type;    /* the handle; MPI_DATATYPE_NULL: free slot */
    int named;            /* 1: a named datatype, the fields below are valid */
    MPI_Aint extent;      /* MPI_Type_get_extent */
    MPI_Aint true_lb;     /* MPI_Type_get_true_extent */
    MPI_Aint true_extent;
    int contiguous;       /* cg_type_is_contiguous */
};

/* A message of one run held back (xchg.c): the exchange's first, or its
 * latest send; posted before the next send (a receive: before any next
 * message), or else sent or received blocking at the wait. */
struct cg_held {
    int on;       /* 1 while one is held */
    int is_recv;
    int peer;
    char *ptr;    /* its run */
    int count;    /* elements of c->dtype */
};

/* ---- plans (plan.c) ------------------------------------------------------ */

#define CG_NPLANS 8          /* argument sets a context remembers */
#define CG_PLAN_MAX_OPS 4096 /* a call of more steps is not recorded */

/* One thing a recorded call did, with every operand resolved. */
enum cg_plan_kind {
    CG_OP_ISEND,        /* MPI_Isend(to, count, type, peer, tag) as request req */
    CG_OP_IRECV,        /* MPI_Irecv(to, count, type, peer, tag) as request req */
    CG_OP_SEND,         /* MPI_Send(to, count, type, peer, tag) */
    CG_OP_RECV,         /* MPI_Recv(to, count, type, peer, tag) */
    CG_OP_WAIT,         /* MPI_Wait(request req) */
    CG_OP_COPY,         /* memcpy(to, from, n bytes) */
    CG_OP_ZERO,         /* memset(to, 0, n bytes) */
    CG_OP_KERNEL,       /* cg_reduce_kernel_run(kernel, to, from, n) */
    CG_OP_KERNEL_SW,    /* cg_reduce_kernel_sw_run(kernel, to, from, n) */
    CG_OP_KERNEL3,      /* cg_reduce_kernel3_run(kernel, to, from, from2, n) */
    CG_OP_REDUCE_LOCAL  /* MPI_Reduce_local(from, to, n, type, op) */
};

struct cg_plan_op {
    int kind;          /* enum cg_plan_kind */
    int peer, count, tag; /* messages */
    int req;           /* ISEND, IRECV, WAIT: the request's slot in the context's array */
    int kernel;        /* KERNEL*: the typed kernel */
    size_t n;          /* COPY, ZERO: bytes; KERNEL*, REDUCE_LOCAL: elements */
    char *to;
    const char *from, *from2;
    MPI_Datatype type; /* messages, REDUCE_LOCAL */
    MPI_Op op;         /* REDUCE_LOCAL */
};

/* What a plan is for: the calling function and the caller's arguments.
 * Zeroed before it is filled, so that memcmp compares it. */
struct cg_plan_key {
    cg_any_fn fn;
    int coll, flags, root;
    const void *sendbuf;
    void *recvbuf;
    size_t sendcount, recvcount;
    MPI_Datatype sendtype, recvtype;
    MPI_Op op;
    unsigned gen;  /* the settings' generation (plan.c, cg_plan_touch) */
    unsigned pgen; /* the params' (cg_param_gen) */
};

/* The key as words, for its hash (plan.c); zeroed whole before the key's
 * fields are set, so that padding compares equal. */
#define CG_PLAN_KEY_WORDS ((sizeof(struct cg_plan_key) + 7) / 8)
union cg_plan_words {
    struct cg_plan_key key;
    uint64_t w[CG_PLAN_KEY_WORDS];
};

enum cg_plan_state {
    CG_PLAN_EMPTY,     /* free slot */
    CG_PLAN_SEEN,      /* the key was called once: the next such call records */
    CG_PLAN_RECORDING, /* the call in progress records into it */
    CG_PLAN_READY,     /* replayed by calls with its key */
    CG_PLAN_NEVER      /* the key's calls cannot be recorded (plan.c says which) */
};

struct cg_plan {
    int state;                /* enum cg_plan_state */
    uint64_t hash;            /* of key, compared first */
    struct cg_plan_key key;
    unsigned scratch_gen;     /* the context's scratch_gen it was recorded in */
    struct cg_plan_op *ops;   /* allocated cap, nops used */
    int nops, cap;
    int nreqs;                /* request slots its messages use */
    int bad;                  /* recording: 2 refused (never), else 0 */
    const struct cg_call *owner; /* recording: the call */
};

/* The plan the calling thread is recording into, or NULL: the hooks below
 * add to it. Why thread-local and not in struct cg_call: the leaves that
 * move data (cg_copy_typed, cg_sig_copy) are not given the call. */
extern _Thread_local struct cg_plan *cg_rec;

void cg_plan_note(const struct cg_plan_op *op);
/* What a recording call did that a plan cannot replay (a derived datatype
 * built for a message, a call step, a copy through MPI): not recorded. */
void cg_plan_refuse(void);

/* memcpy and memset that a recording call notes. */
static inline void cg_memcpy(void *to, const void *from, size_t n)
{
    memcpy(to, from, n);
    if (__builtin_expect(cg_rec != NULL, 0)) {
        struct cg_plan_op o = { .kind = CG_OP_COPY, .n = n, .to = to, .from = from };
        cg_plan_note(&o);
    }
}

static inline void cg_memzero(void *to, size_t n)
{
    memset(to, 0, n);
    if (__builtin_expect(cg_rec != NULL, 0)) {
        struct cg_plan_op o = { .kind = CG_OP_ZERO, .n = n, .to = to };
        cg_plan_note(&o);
    }
}

/* A message posted, sent or received, or waited for. */
static inline void cg_plan_note_msg(int kind, void *ptr, int count, MPI_Datatype type, int peer,
                                    int tag, int req)
{
    if (__builtin_expect(cg_rec != NULL, 0)) {
        struct cg_plan_op o = { .kind = kind, .peer = peer, .count = count, .tag = tag,
                                .req = req, .to = ptr, .type = type };
        cg_plan_note(&o);
    }
}

/* A typed kernel or MPI_Reduce_local run. */
static inline void cg_plan_note_reduce(int kind, int kernel, void *to, const void *from,
                                       const void *from2, size_t n, MPI_Datatype type,
                                       MPI_Op op)
{
    if (__builtin_expect(cg_rec != NULL, 0)) {
        struct cg_plan_op o = { .kind = kind, .kernel = kernel, .n = n, .to = to,
                                .from = from, .from2 = from2, .type = type, .op = op };
        cg_plan_note(&o);
    }
}

/* The begin's half (prologue.c): replays the call's plan when there is
 * one (CG_DONE, c->result its result, c ended), else says in *rec the
 * slot this call records into (NULL: none). hint: comm's context where the
 * caller has it, else NULL; key: the caller's arguments (its gen and pgen
 * are set here). */
int cg_plan_lookup(struct cg_call *c, MPI_Comm comm, struct cg_comm *hint,
                   union cg_plan_words *key, struct cg_site site, struct cg_plan **rec);
/* Starts recording the call begun on c into rec. */
void cg_plan_record(struct cg_call *c, struct cg_plan *rec);
/* The call on c ends with rc: its recording, if any, becomes a plan or is
 * dropped (cg_call_finish, cg_call_end). */
void cg_plan_end(const struct cg_call *c, int rc);
/* Settings that change what a call does have changed: no plan recorded
 * before matches (the exchange hooks, cg_plan_mode). */
void cg_plan_touch(void);
/* cg_param_set's generation (param.c), also in a plan's key: a plan was
 * recorded with the params of its time. */
unsigned cg_param_gen(void);
/* Frees a context's plans (comm.c). */
void cg_plan_free_all(struct cg_plan *plans);
/* The context cached on comm, or NULL when it has none yet (comm.c). */
int cg_comm_context(MPI_Comm comm, struct cg_comm **cc);

/* Cached per communicator as an attribute (comm.c); freed with it. The
 * arrays grow on demand and never shrink, so that a call in steady state
 * allocates nothing. */
struct cg_comm {
    MPI_Comm comm;                    /* private duplicate, MPI_ERRORS_RETURN */
    int rank;                         /* rank in comm */
    int p;                            /* size of comm */
    void *scratch[CG_NSCRATCH];       /* scratch slots (cg_scratch) */
    size_t scratch_bytes[CG_NSCRATCH];/* bytes allocated per slot */
    MPI_Request *reqs;                /* requests of the current exchange */
    unsigned char *is_recv;           /* 1 where reqs[i] is a receive */
    int reqs_cap;                     /* entries allocated in reqs and is_recv */
    MPI_Datatype *types;              /* derived types of the current exchange */
    int types_cap;                    /* entries allocated in types */
    struct cg_split *splits;          /* call steps' sub-communicators (call.c) */
    int nsplits, splits_cap;          /* used, allocated */
    struct cg_topo topo;              /* node and lane structure (topo.c) */
    struct cg_xrecv *xrecv;           /* receives of the current segmented exchange (xchg.c) */
    int xrecv_cap;                    /* entries allocated in xrecv */
    unsigned char *lazy;              /* per block of out: 1 while it stands for sendbuf's (lazy.c) */
    long lazy_cap;                    /* entries allocated in lazy */
    struct cg_type_info typeinfo[CG_NTYPEINFO]; /* datatypes seen (comm.c, type_info) */
    int typeinfo_next;                /* the slot the next new datatype takes */
    char *pack;                       /* CG_PACK_ARENA bytes: small messages of several pieces,
                                       * packed (xchg.c); NULL until the first */
    size_t pack_used;                 /* bytes of it the current exchange holds */
    struct cg_unpack *unpack;         /* the current exchange's packed receives */
    int nunpack, unpack_cap;          /* used, allocated */
    struct cg_seg *upiece;            /* their pieces, each receive's consecutive */
    int nupiece, upiece_cap;          /* used, allocated */
    struct cg_held held;              /* a message of the exchange not posted yet (xchg.c) */
    unsigned scratch_gen;             /* advanced whenever a scratch slot moves (cg_scratch) */
    struct cg_plan plans[CG_NPLANS];  /* calls recorded (plan.c) */
    int plan_next;                    /* the slot a new key takes */
    int plan_last;                    /* the slot the last lookup found or took */
};

/* A packed receive (xchg.c): when request `req` completes, its npieces
 * pieces (upiece[piece ..]) of the buffer at base are filled in stream
 * order from pack + at. req -1: done. */
struct cg_unpack {
    int req;
    int npieces;
    int piece;
    char *base;
    size_t at;
};


/* A call step's sub-communicator, split once per (site, instance) and kept
 * with the context: every rank runs every call step instance, so every rank
 * has it cached, or none has. The site names the schedule too, since every
 * schedule called on one communicator shares its context. */
struct cg_split {
    const char *site; /* the call step, "<schedule>/<phase>/<step>" (a literal) */
    long instance; /* its round value (0 without rounds) */
    MPI_Comm comm; /* MPI_Comm_split of the private duplicate */
};

/* Records "rank R: runtime/FILE:LINE: MPI_Xxx: <MPI_Error_string>" for a
 * failed MPI call; `call` is the call's text, of which only the function
 * name is kept. */
static inline void cg_error_mpi(int code, const char *file, int line, const char *call)
{
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    int rank = -1;
    const char *base = strrchr(file, '/');

    if (MPI_Error_string(code, text, &len) != MPI_SUCCESS) {
        snprintf(text, sizeof(text), "MPI error code %d", code);
    }
    if (MPI_Comm_rank(MPI_COMM_WORLD, &rank) != MPI_SUCCESS) {
        rank = -1;
    }
    cg_set_error("rank %d: runtime/%s:%d: %.*s: %s", rank, (base != NULL) ? (base + 1) : file,
                 line, (int)strcspn(call, "("), call, text);
}

/* Checks an MPI call: on failure, records it, stores the code in the
 * enclosing function's `rc` and jumps to its `out:` label. */
#define CG_CHECK_MPI(call)                                          \
    do {                                                            \
        int cg_mpi_rc_ = (call);                                    \
        if (cg_mpi_rc_ != MPI_SUCCESS) {                            \
            cg_error_mpi(cg_mpi_rc_, __FILE__, __LINE__, #call);    \
            rc = cg_mpi_rc_;                                        \
            goto out;                                               \
        }                                                           \
    } while (0)

/* Propagates a runtime return code to the enclosing function's `out:`. */
#define CG_CHECK(expr)                          \
    do {                                        \
        if ((rc = (expr)) != MPI_SUCCESS) {     \
            goto out;                           \
        }                                       \
    } while (0)

/* MPI_ERR_INTERN (recorded) when a topology schedule on a communicator that
 * is not regular has no fallback (layout.c). */
int cg_topo_fallback(const struct cg_topo *topo, cg_any_fn fallback);

/* The buffers of a generated collective as the table lays them out
 * (layout.c), for both runtimes' cg_buffers: the geometry into *g, out and
 * in (NULL for a collective without one) over recvbuf and sendbuf (out
 * over token for barrier), tmp (NULL: none) of ntmp blocks, base NULL.
 * MPI_ERR_INTERN (recorded) when nb or the buffers given do not fit coll. */
int cg_layout(int coll, long p, size_t count, long nb, const void *sendbuf, void *recvbuf,
              char *token, struct cg_buf *in, struct cg_buf *out, struct cg_buf *tmp, long ntmp,
              struct cg_geom *g);

/* ---- the input copy done on first use (lazy.c) ----
 *
 * Every function is a no-op unless c->lazy_pending > 0 and b is out (its
 * base, geometry and blocks); a buffer of out's base but another shape
 * makes every pending block out's own first. */

/* Called by cg_buffers in place of copying `in` (laid out like *out) into
 * out: every block of out stands for in's until written. flush: the
 * pending blocks are copied at the end of a successful call (out is the
 * result, not scratch). */
int cg_lazy_start(struct cg_call *c, const struct cg_buf *out, const void *in, int flush);
/* The same for blocks [first, first + n) of out only, which `in` holds
 * alone (gather: a non-root's own block is its sendbuf); the other blocks
 * are out's own from the start. */
int cg_lazy_start_range(struct cg_call *c, const struct cg_buf *out, const void *in, long first,
                        long n, int flush);
/* Blocks [first, first + n) of b are about to be read: *use is a view of
 * `in` (in *view) when every one of them is pending, else b, after the
 * pending ones among them were copied. */
int cg_lazy_read(struct cg_call *c, const struct cg_buf *b, long first, long n,
                 struct cg_buf *view, const struct cg_buf **use);
/* The blocks are about to be overwritten whole: none is pending any more. */
int cg_lazy_write(struct cg_call *c, const struct cg_buf *b, long first, long n);
/* The blocks are about to be reduced into: *from_in is 1 when every one was
 * pending (the reduce reads in's data in their place and writes out's; they
 * are no longer pending), else 0 after the pending ones were copied. */
int cg_lazy_into(struct cg_call *c, const struct cg_buf *b, long first, long n, int *from_in);
/* Copies every pending block (before a call step, at the end). */
int cg_lazy_flush(struct cg_call *c);

/* How a reduce reads the lazy input (lazy.c, reduce.c). */
#define CG_LAZY_NONE 0    /* as the buffers say */
#define CG_LAZY_INPUT 1   /* into stands for sendbuf's: into = sendbuf op from */
#define CG_LAZY_SWAPPED 2 /* into holds from's data (cg_recv_to), from is sendbuf's view */

/* cg_recv_to's choice: *borrow is 1 when blocks [ofirst, ofirst + n) of out all stand
 * for sendbuf's, the op has a typed kernel, no other such receive is
 * recorded and both ranges hold as many elements; it is then recorded
 * (c->borrow_*) and the blocks stay pending, so that every read of them
 * still finds sendbuf's data. */
int cg_lazy_borrow(struct cg_call *c, const struct cg_buf *tmp, long tfirst, long n,
                   const struct cg_buf *out, long ofirst, int *borrow);
/* The reduce of n blocks of `from` (at ffirst) into `into` (at ifirst):
 * *lazy is CG_LAZY_SWAPPED when it consumes the recorded receive (into is
 * out's borrowed range, from the tmp range the schedule named): the blocks
 * are out's own from now on, *view is sendbuf's view of out to reduce in
 * from the same blocks, and the record is gone. CG_LAZY_NONE otherwise. */
int cg_lazy_take(struct cg_call *c, const struct cg_buf *into, long ifirst,
                 const struct cg_buf *from, long ffirst, long n, struct cg_buf *view, int *lazy);
/* A copy between equally long ranges that bypasses the lazy state (the
 * bytes as they are in memory; reduce.c). */
int cg_copy_raw(struct cg_call *c, const struct cg_buf *to, long tfirst,
                const struct cg_buf *from, long ffirst, long n);

static inline int cg_lazy_on(const struct cg_call *c)
{
    return c->lazy_pending > 0;
}

/* A receive of a segmented exchange (xchg.c): the range it lands in, and
 * where its pieces' requests are: piece j is reqs[req[j] .. req[j + 1]). */
struct cg_xrecv {
    const char *base;            /* the buffer's base */
    struct cg_geom geom;         /* its geometry */
    long nblocks;                /* its blocks */
    long first;                  /* the range: first block, modulo nblocks */
    long n;                      /* blocks */
    int req[CG_MAX_SEGMENTS + 1];/* request index where each piece starts, then the end */
};

/* Reduces elements [lo, hi) of the element streams of blocks
 * [ifirst, ifirst + n) of into and [ffirst, ffirst + n) of from, as
 * cg_reduce does the whole (reduce.c); lazy: CG_LAZY_INPUT where into
 * still stands for sendbuf's blocks (cg_lazy_into said so),
 * CG_LAZY_SWAPPED where cg_lazy_take said so. */
int cg_reduce_window(struct cg_call *c, const struct cg_buf *into, long ifirst,
                     const struct cg_buf *from, long ffirst, long n, int order, int lazy,
                     size_t lo, size_t hi);

/* 1 when op is one of the predefined ops with a typed kernel (MPI_SUM,
 * MPI_PROD, MPI_MIN, MPI_MAX), all commutative, so that cg_call_begin need
 * not ask MPI_Op_commutative (reduce.c). */
int cg_reduce_op_commutes(MPI_Op op);

/* A run of elements: where it starts in its buffer and how long it is. */
struct cg_seg {
    size_t off; /* first element, from the buffer's base */
    size_t len; /* elements */
};

/* Blocks [first, first + n) of b, wrapping modulo b->nblocks, as at most two
 * non-empty element runs in stream order. Sets *nseg (0, 1 or 2). Returns
 * MPI_ERR_ARG when the range is longer than the buffer. */
static inline int cg_range_segs(const struct cg_buf *b, long first, long n, struct cg_seg seg[2],
                                int *nseg)
{
    *nseg = 0;
    if ((b->nblocks < 1) || (n < 0) || (n > b->nblocks)) {
        cg_set_error("collgen: block range [%ld, %ld + %ld) does not fit a %ld-block buffer",
                     first, first, n, b->nblocks);
        return MPI_ERR_ARG;
    }
    if (n == 0) {
        return MPI_SUCCESS;
    }
    long f = cg_mod(first, b->nblocks);
    long end = f + n;
    long stop = (end <= b->nblocks) ? end : b->nblocks;
    size_t off = cg_geom_off(&b->geom, f);
    size_t len = cg_geom_off(&b->geom, stop) - off;
    if (len > 0) {
        seg[*nseg].off = off;
        seg[*nseg].len = len;
        (*nseg)++;
    }
    if (end > b->nblocks) {
        len = cg_geom_off(&b->geom, end - b->nblocks);
        if (len > 0) {
            seg[*nseg].off = 0;
            seg[*nseg].len = len;
            (*nseg)++;
        }
    }
    return MPI_SUCCESS;
}

/* Blocks [first, first + n) of b as one run that does not wrap: 1 and its
 * offset and length in elements, or 0 (it wraps, or the range is bad: the
 * caller's general path reports it). The direct paths of the exchanges,
 * copies and reduces (xchg.c, reduce.c). */
static inline int cg_range_run(const struct cg_buf *b, long first, long n, size_t *off,
                               size_t *len)
{
    if ((n < 1) || (n > b->nblocks)) {
        return 0;
    }
    long f = ((first >= 0) && (first < b->nblocks)) ? first : cg_mod(first, b->nblocks);
    if (f > b->nblocks - n) {
        return 0;
    }
    *off = cg_geom_off(&b->geom, f);
    *len = cg_geom_off(&b->geom, f + n) - *off;
    return 1;
}

/* Posts the element stream of nseg runs of b as messages to or from peer,
 * cut at max_elems as every exchange is (xchg.c); strided.c's ranges. */
int cg_xchg_segs(struct cg_call *c, int peer, const struct cg_buf *b, const struct cg_seg *seg,
                 int nseg, int is_recv);
/* Strided ranges (strided.c, cuda/xchg.c): block i of blocks first + i *
 * stride, as an index of b, and the check that the range fits b. */
static inline long cg_strided_blk(const struct cg_buf *b, long first, long stride, long i)
{
    return cg_mod(first + (i * stride), b->nblocks);
}

static inline int cg_strided_check(const struct cg_buf *b, long n, long stride)
{
    if ((b->nblocks < 1) || (n < 0) || (n > b->nblocks) || (stride < 1)) {
        cg_set_error("collgen: a strided range of %ld blocks, stride %ld, does not fit a "
                     "%ld-block buffer", n, stride, b->nblocks);
        return MPI_ERR_ARG;
    }
    return MPI_SUCCESS;
}

/* Keeps the part of a list of runs that is elements [lo, hi) of its
 * stream. */
static inline void cg_segs_window(struct cg_seg *seg, int *nseg, size_t lo, size_t hi)
{
    int kept = 0;
    size_t at = 0; /* stream position of seg[i] */
    for (int i = 0; i < *nseg; i++) {
        size_t a = (lo > at) ? lo : at;
        size_t b = (hi < at + seg[i].len) ? hi : (at + seg[i].len);
        if (a < b) {
            struct cg_seg piece = { seg[i].off + (a - at), b - a };
            at += seg[i].len;
            seg[kept++] = piece;
        } else {
            at += seg[i].len;
        }
    }
    *nseg = kept;
}

/* Elements in a list of runs. */
static inline size_t cg_segs_len(const struct cg_seg *seg, int nseg)
{
    size_t total = 0;
    for (int i = 0; i < nseg; i++) {
        total += seg[i].len;
    }
    return total;
}

/* Whether n elements of `type` are n * extent plain bytes from the first
 * element's address, so that memcpy moves them. */
static inline int cg_type_is_contiguous(MPI_Datatype type, int *yes)
{
    int rc = MPI_SUCCESS;
    MPI_Count size = 0;
    MPI_Aint lb = 0, extent = 0, true_lb = 0, true_extent = 0;

    *yes = 0;
    CG_CHECK_MPI(MPI_Type_size_x(type, &size));
    CG_CHECK_MPI(MPI_Type_get_extent(type, &lb, &extent));
    CG_CHECK_MPI(MPI_Type_get_true_extent(type, &true_lb, &true_extent));
    *yes = ((size == (MPI_Count)extent) && (lb == 0) && (true_lb == 0) && (true_extent == extent));
out:
    return rc;
}

#endif
