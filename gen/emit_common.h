/* emit_common.h - what the two emitters share (emit_mpi.c: C over MPI,
 * emit_cuda.c: CUDA C++ over runtime/cuda): the header comment with the
 * p = 4 table, the names the code mentions, lets, the loop per phase and one
 * comment and one block of runtime calls per step. The body of a schedule
 * reads the same in both backends; only the runtime's names differ (struct
 * cg_emit_api). The prologue is two runtime calls (runtime/prologue.c and
 * runtime/cuda/prologue.c), so the whole function is written here too; each
 * backend writes its own header comment and file.
 */
#ifndef CG_EMIT_COMMON_H
#define CG_EMIT_COMMON_H

#include <stddef.h>

#include "out.h"
#include "passes.h"

/* The runtime calls a step turns into; their arguments are the same in both
 * backends: (&c, peer, &buf, first, n) for a send or a receive, (&c, &to,
 * tfirst, &from, ffirst, n[, order]) for a reduce or a copy. */
struct cg_emit_api {
    const char *tag_begin;  /* "CG_TAG_BEGIN" */
    const char *tag_end;    /* "CG_TAG_END" */
    const char *xchg_begin; /* "cg_xchg_begin" */
    const char *send;       /* "cg_send" */
    const char *recv;       /* "cg_recv" */
    /* A receive whose reduce may read it from out (cg_recv_redirect);
     * NULL where the backend has none: it emits the plain receive. */
    const char *recv_to;    /* "cg_recv_to" */
    const char *xchg_wait;  /* "cg_xchg_wait" */
    const char *reduce;     /* "cg_reduce" */
    const char *copy;       /* "cg_copy" */
    /* Segmented exchanges ("segments"); NULL where the backend has none: it
     * emits such an exchange whole, and does not read "segments". */
    const char *xchg_begin_seg;  /* "cg_xchg_begin_seg" */
    const char *xchg_wait_reduce;/* "cg_xchg_wait_reduce": the fused reduce after one */
    /* The function around them (cg_emit_function). */
    const char *prefix;     /* "cg_": the generated functions' (and a fallback's) prefix */
    const char *args;       /* "CG_": the signature macro is <args><COLLECTIVE>_ARGS */
    const char *call;       /* "cg_call": the per-call state's struct */
    const char *begin;      /* "cg_begin_": the collective's prologue, <begin><collective> */
    const char *buffers;    /* "cg_buffers" */
    int gpu;                /* 1: the parameters are cg_colls[].cu_args, no commutative
                             * flag (every GPU op commutes), and the body is a block */
};

struct cg_emitter {
    struct cg_gen *g;              /* context */
    const struct cg_schedule *s;   /* what is emitted */
    struct cg_out *o;              /* where text goes */
    const struct cg_emit_api *api; /* the backend's runtime names */
    const char *base;              /* schedule file's base name, for comments */
    char upper[64];                /* schedule name in upper case */
    unsigned char used[256];       /* slots some expression mentions */
};

/* The header comment's lines that differ between backends. */
struct cg_emit_header {
    const char *function;    /* "cg_allreduce_ring" */
    const char *accepts;     /* after "Accepts:" */
    const char *returns;     /* after "Returns:" */
    const char *limitations; /* after "Limitations:"; NULL: no such line */
};

/* Fills *em and marks the names the emitted code mentions (-Wunused-variable
 * is an error in emitted code, so only those are declared). */
void cg_emitter_init(struct cg_emitter *em, struct cg_gen *g, const struct cg_schedule *s,
                     struct cg_out *o, const struct cg_emit_api *api);

/* An expression as C (or as the schedule wrote it, for comments). The text
 * lives in a rotating set of 8 buffers so that a few fit in one printf. */
const char *cg_emit_c_expr(const struct cg_expr *e);
const char *cg_emit_src_expr(const struct cg_expr *e);

/* src in upper case, cut to cap - 1 characters. */
void cg_emit_upper(char *dst, size_t cap, const char *src);

/* "CG_TAG_<SCHEDULE>", "..__<PHASE>" (leaf NULL) or "..__<PHASE>__<LEAF>"
 * (ph NULL: the call tag). */
void cg_emit_tag_name(const struct cg_emitter *em, char *buf, size_t cap,
                      const struct cg_phase *ph, const char *leaf);

/* The comment block above the function: the lines of h, summary, blocks and
 * the verifier's p = 4 table. */
void cg_emit_header_comment(struct cg_emitter *em, const struct cg_emit_header *h);

/* Ranged params: the file-scope `static struct cg_param` knobs (before the
 * function). */
void cg_emit_param_knobs(struct cg_emitter *em);

/* The function: its signature, the prologue (the runtime's
 * <begin><collective> and <buffers>, with the schedule's params, lets and
 * call tag between), every phase, and the single exit. */
void cg_emit_function(struct cg_emitter *em);

/* The names of a parameter list ("const void *sendbuf, ..., MPI_Comm comm"
 * -> "sendbuf, ..., comm") into buf. */
void cg_emit_arg_names(const char *params, char *buf, size_t cap);

/* Writes o to path (only when it changed); reports a failure as an error.
 * Returns 0 or -1. */
int cg_emit_write(struct cg_gen *g, const struct cg_out *o, const char *path);

#endif
