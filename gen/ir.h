/* ir.h - the schedule IR: the one contract between the generator's passes.
 *
 * parse fills these structs from JSON (every node carries its source
 * position, expressions are trees with unbound names); check binds names to
 * environment slots, checks identifiers, shapes and the collective's rules,
 * and sets `checked`. verify, analyse and the emitters only read a checked IR.
 * Buffers are (buffer id, block range), never pointers, so an IR can be
 * simulated, dumped and compared.
 */
#ifndef CG_IR_H
#define CG_IR_H

#include "../runtime/cg_colls.h"
#include "base.h"
#include "expr.h"

/* The closed list of step kinds, with their one-line semantics. */
#define CG_OPS(X)                                                          \
    X(EXCHANGE, "exchange", "post this step's sends and receives, then wait for all") \
    X(REDUCE, "reduce", "into[i] = into[i] op from[i] (or from op into), order stated") \
    X(COPY, "copy", "to[i] = from[i]")                                     \
    X(CALL, "call", "run another collective (native or generated) on the whole communicator, on views of the buffers") \
    X(FILL, "fill", "to[i] = zero bytes (what a bitwise-or call leaves unchanged)")

enum cg_op_kind {
#define X(id, name, doc) CG_STEP_##id,
    CG_OPS(X)
#undef X
    CG_STEP_KINDS_
};

extern const char *const cg_op_names[CG_STEP_KINDS_];

/* The collectives: runtime/cg_colls.h's table, the one list of them (name,
 * MPI function, combine, root, shape of out and in, signature, ...), which
 * check, sim, verify, analyse and the emitters read as cg_colls[]. The
 * generator's names for its rows are CG_C_<ID>, equal to the runtime's
 * CG_COLL_<ID>. */
enum cg_coll_kind {
#define X(id, ...) CG_C_##id = CG_COLL_##id,
    CG_COLL_TABLE(X)
#undef X
    CG_C_COUNT_ = CG_COLL_COUNT_
};

enum cg_bufid { CG_BUF_IN, CG_BUF_OUT, CG_BUF_TMP, CG_BUF_COUNT_ };
extern const char *const cg_buf_names[CG_BUF_COUNT_];

enum cg_range_kind {
    CG_RANGE_BLOCK, /* {"block": first}: one block, 0 <= first < nblocks */
    CG_RANGE_SPAN,  /* {"first": first, "count": count[, "stride": stride]}: wraps modulo nblocks */
    CG_RANGE_ALL    /* "all": every block of the buffer */
};

/* A block range of one buffer. */
struct cg_ref {
    enum cg_bufid buf;       /* which buffer */
    enum cg_range_kind kind; /* how the range is given */
    struct cg_expr *first;   /* BLOCK and SPAN */
    struct cg_expr *count;   /* SPAN */
    struct cg_pos pos;       /* the "buf" object */
    struct cg_expr *stride;  /* SPAN with "stride": blocks first + i * stride; NULL: contiguous */
};

/* One send or receive of an exchange step. */
struct cg_xfer {
    struct cg_expr *when; /* posted only when true (NULL: always) */
    struct cg_expr *peer; /* "to" for a send, "from" for a receive */
    struct cg_ref ref;    /* what is sent, or where it lands */
    struct cg_pos pos;    /* the send/recv object */
};

/* The value of a zero-filled block in the verifier (struct val's lb). */
#define CG_LB_ZERO 0x7fffffff

/* The communicator a call step runs on. */
#define CG_GROUP_ALL 0   /* the whole communicator */
#define CG_GROUP_COLOR 1 /* ranks of equal "color" (MPI_Comm_split, per step and round) */
#define CG_GROUP_NODE 2  /* this node's ranks (topology; split once per communicator) */
#define CG_GROUP_LANE 3  /* the ranks with this local index, one per node (topology) */

#define CG_ORDER_INTO_FROM 0 /* into = into op from */
#define CG_ORDER_FROM_INTO 1 /* into = from op into */

struct cg_step {
    enum cg_op_kind kind;  /* what it does */
    const char *name;      /* identifier, unique in the phase */
    struct cg_expr *when;  /* runs only when true (NULL: always) */
    struct cg_xfer *sends; /* EXCHANGE: posted in this order */
    int nsends;            /* EXCHANGE */
    struct cg_xfer *recvs; /* EXCHANGE: posted in this order */
    int nrecvs;            /* EXCHANGE */
    struct cg_expr *segments; /* EXCHANGE "segments": S, each message cut into S pieces
                               * (NULL: whole messages); see seg_fused() in sim.c */
    struct cg_ref dst;     /* REDUCE "into", COPY "to" */
    struct cg_ref src;     /* REDUCE and COPY "from" */
    int order;             /* REDUCE: CG_ORDER_* */
    /* CALL: the callee's collective; "use" (NULL: native, else a schedule
     * name, resolved into `callee` by cg_resolve, resolve.c); its root; the views
     * (dst: "recv", or bcast's "buffer"; src: "send"); which are present. */
    int call_coll;                    /* enum cg_coll_kind */
    const char *call_use;             /* NULL: "native" */
    const struct cg_schedule *callee; /* generated callee, after resolution */
    struct cg_expr *call_root;        /* rooted callees */
    struct cg_expr *call_color;       /* "group": {"color": e}; NULL: the whole communicator */
    int call_group;                   /* CG_GROUP_*: which ranks form the callee's communicator */
    int call_bor;                     /* "op": "bor": the callee reduces bytes with MPI_BOR */
    int call_has_src, call_has_dst;   /* views present */
    struct cg_pos use_pos;            /* the "use" value */
    struct cg_pos pos;     /* the step object */
    const char **comment;  /* "comment": its lines as written (emit_common.c prints them sanitised) */
    int ncomment;          /* how many */
    int index;             /* position in the schedule, all phases (MPI tag) */
    int tag_id;            /* timing tag, relative to the schedule's first */
};

struct cg_let {
    const char *name;     /* identifier */
    struct cg_expr *expr; /* its value */
    int slot;             /* environment slot */
    int used;             /* some expression mentions it (check) */
    int wide;             /* its value is 64-bit: emitted as int64_t (check) */
    struct cg_pos pos;    /* the key */
};

/* A table ("tables"): per-rank integers computed once, after the top-level
 * lets, element by element: value (with var = 0, 1, ..., size - 1) may read
 * the elements computed before it and earlier tables. Its elements live in
 * environment slots base .. base + max - 1 (after every named slot), its
 * length so far in `slot`, which an INDEX node names. */
struct cg_table {
    const char *name;      /* identifier */
    struct cg_expr *size;  /* elements: 0..max */
    int64_t max;           /* capacity: a constant 1..CG_TABLE_MAX */
    const char *var;       /* the index's name in value */
    struct cg_expr *value; /* element var */
    int slot;              /* environment slot: the length computed so far */
    int var_slot;          /* the index's slot */
    int base;              /* slot of element 0 */
    int used;              /* some expression reads it (check) */
    struct cg_pos pos;     /* the key */
    struct cg_pos max_pos; /* the "max" value */
    struct cg_pos var_pos; /* the "var" value */
    /* A group ("columns"): tables of one size and index filled in one loop,
     * element i of each column in turn; tables[first .. first + ncols - 1].
     * A plain table is a group of one. */
    const char *group;     /* the group's label (NULL: a plain table) */
    int first;             /* index of the group's first column */
    int ncols;             /* columns in the group (on every column) */
};

/* The most elements of one table, and of all a schedule's tables together;
 * element slots start at CG_TABLE_SLOT0, past every named slot (check.c
 * hands out at most 256). */
#define CG_TABLE_MAX 4096
#define CG_TABLES_TOTAL_MAX 16384
#define CG_TABLE_SLOT0 256

enum cg_rounds_kind {
    CG_ROUNDS_NONE,   /* the phase runs once */
    CG_ROUNDS_COUNT,  /* var = 0 .. count - 1 */
    CG_ROUNDS_UP,     /* var = from .. to (inclusive) */
    CG_ROUNDS_DOWN    /* var = from down to down_to (inclusive) */
};

struct cg_phase {
    const char *name;          /* identifier, unique in the schedule */
    struct cg_pos pos;         /* the phase object */
    struct cg_expr *when;      /* ranks for which false skip the phase */
    enum cg_rounds_kind rounds;/* how it loops */
    const char *var;           /* round variable */
    int var_slot;              /* its slot */
    int var_used;              /* mentioned by some expression of the phase */
    struct cg_expr *from;      /* UP, DOWN: first value; COUNT: NULL */
    struct cg_expr *to;        /* COUNT: count; UP: last; DOWN: last */
    struct cg_pos rounds_pos;  /* the rounds object */
    struct cg_let *lets;       /* evaluated per round, in order */
    int nlets;                 /* how many */
    struct cg_step *steps;     /* in order */
    int nsteps;                /* how many */
    const char **comment;      /* "comment": its lines as written (printed sanitised) */
    int ncomment;              /* how many */
    int tag_id;                /* phase tag (relative) */
    int round_tag_id;          /* round tag (relative), -1 without rounds */
};

struct cg_param {
    const char *name;  /* identifier */
    int64_t value;     /* default */
    int64_t lo, hi;    /* verified range (lo == hi == value: a fixed constant) */
    int ranged;        /* given as {"default", "min", "max"}: read at run time */
    int slot;          /* environment slot */
    struct cg_pos pos; /* the key */
};

/* The most combinations of ranged param values a schedule may have (each
 * is verified for every p, root and ppn). */
#define CG_MAX_PARAM_COMBOS 64

/* Slots 0..6 of every environment. */
#define CG_SLOT_P 0
#define CG_SLOT_RANK 1
#define CG_SLOT_ROOT 2
#define CG_SLOT_PPN 3    /* topology schedules: ranks per node */
#define CG_SLOT_NNODES 4 /* p / ppn */
#define CG_SLOT_NODE 5   /* rank / ppn */
#define CG_SLOT_LOCAL 6  /* rank % ppn */
#define CG_SLOT_FIRST_FREE 7

struct cg_schedule {
    const char *file;          /* path as given (repository-relative) */
    const char *name;          /* identifier: "<collective>_<algorithm>" */
    enum cg_coll_kind coll;    /* which collective */
    const char *summary;       /* one line, printable ASCII */
    int commutative;           /* requires a commutative op */
    struct cg_expr *blocks;    /* B: blocks of out (and in) */
    struct cg_pos blocks_pos;  /* where "blocks" is (or the schedule) */
    struct cg_expr *scratch;   /* blocks of tmp (NULL: no tmp) */
    struct cg_param *params;   /* tunable knobs with defaults */
    int nparams;               /* how many */
    int topology;              /* "topology": runs on node and lane communicators */
    const char *fallback;      /* "topology": {"fallback": name}: for irregular communicators */
    struct cg_pos fallback_pos;/* the fallback's name */
    const struct cg_schedule *fallback_s; /* resolved (cg_resolve, resolve.c) */
    struct cg_let *lets;       /* evaluated once per rank, in order */
    int nlets;                 /* how many */
    struct cg_table *tables;   /* computed once per rank after the lets, in order */
    int ntables;               /* how many */
    struct cg_phase *phases;   /* in order */
    int nphases;               /* how many */
    int nslots;                /* environment size (with tables: CG_TABLE_SLOT0 + their elements) */
    const char **slot_names;   /* by slot (for dumps) */
    struct cg_pos pos;         /* the top-level object */
    int ntags;                 /* timing tags: call + phases + rounds + steps */
    int checked;               /* set by check */
};

/* The passes (one file each). */
int cg_parse(struct cg_gen *g, struct cg_arena *arena, const char *path, struct cg_schedule *s);
/* The same on text already read (path names it in diagnostics). */
int cg_parse_text(struct cg_gen *g, struct cg_arena *arena, const char *path, const char *text,
                  size_t len, struct cg_schedule *s);
int cg_check(struct cg_gen *g, struct cg_arena *arena, struct cg_schedule *s);

/* The views a call step to `coll` takes: 1 for "send" (src), 2 for "recv"
 * (dst), 4 for "buffer" (dst, bcast). */
int cg_call_views(enum cg_coll_kind coll);

/* Whether step si of ph is a reduce that completes the segmented exchange
 * before it (that exchange has "segments"): the emitter fuses the two
 * (cg_xchg_wait_reduce), and the simulator proves the fusion sound
 * (sim.c, seg_check_fused). */
int cg_step_fused(const struct cg_phase *ph, int si);

/* Whether receive k of exchange step si of ph may land in out instead of
 * tmp: the index of the reduce step that consumes it (into out, from that
 * receive's range, written alike, right after the exchange and running
 * exactly when the receive does), where tmp is only ever a landing place
 * for receives that such reduces consume; -1 otherwise. The emitter then
 * writes cg_recv_to (runtime/xchg.c), and the verifier proves that nothing
 * reads the receive's tmp range after its consumer (verify.c). */
int cg_recv_redirect(const struct cg_schedule *s, const struct cg_phase *ph, int si, int k);
/* Whether reduce step j of ph consumes such a receive. */
int cg_step_consumes(const struct cg_schedule *s, const struct cg_phase *ph, int j);

/* Whether s has a call step. */
int cg_has_calls(const struct cg_schedule *s);
/* Whether s zero-fills (fill steps, bitwise-or calls): contiguous datatypes only. */
int cg_zero_fills(const struct cg_schedule *s);

#endif
