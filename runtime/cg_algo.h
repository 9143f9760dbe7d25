/* cg_algo.h - the registry of generated algorithms (filled in by the
 * generator in emitted/registry.c), and the function types of generated
 * collectives: the MPI collective's signature (cg_colls.h), with counts as
 * size_t.
 */
#ifndef CG_ALGO_H
#define CG_ALGO_H

#include <mpi.h>
#include <stddef.h>

/* enum cg_coll (CG_COLL_ALLREDUCE, ...) and the signatures CG_<COLL>_ARGS
 * are the table's: cg_colls.h. */
#include "cg_colls.h"

/* The generated function of each collective: cg_allreduce_fn, ... */
#define X(ID, id, mpi, bufs, combine, rooted, shape, input, in_place, size, busbw, args, ...) \
    typedef int (*cg_##id##_fn)(args);
CG_COLL_TABLE(X)
#undef X

enum cg_tag_kind {
    CG_TAG_KIND_CALL,   /* the whole collective */
    CG_TAG_KIND_PHASE,  /* one phase, all its rounds */
    CG_TAG_KIND_ROUND,  /* one round of a phase (entered once per round) */
    CG_TAG_KIND_COMM,   /* an exchange step */
    CG_TAG_KIND_REDUCE, /* a reduce step */
    CG_TAG_KIND_COPY    /* a copy step */
};

struct cg_tag_info {
    const char *name;      /* "schedule/phase/round/step" path */
    enum cg_tag_kind kind; /* what the region covers */
    int parent;            /* enclosing tag id, -1 for a call tag */
};

/* A tunable parameter of a schedule: the emitted code reads it at run time
 * (cg_param_value in cg.h: cg_param_set, then CG_PARAM_<schedule>_<name>,
 * then the default); every value lo..hi was verified. lo == hi: fixed. */
struct cg_param_info {
    const char *name; /* "radix" */
    int dflt;         /* default */
    int lo, hi;       /* verified range */
};

/* The topology a schedule needs (its "topology" key). */
struct cg_topo_info {
    int needed;           /* 1: runs on node and lane communicators */
    const char *fallback; /* schedule run on a communicator that is not regular */
};

struct cg_algo {
    const char *name;      /* schedule name, e.g. "allreduce_ring" */
    enum cg_coll coll;     /* which collective */
    const char *summary;   /* one line from the schedule */
    const char *file;      /* schedule file, repository-relative */
    int commutative_only;  /* 1: returns MPI_ERR_OP for a non-commutative op */
    int contiguous_only;   /* 1: zero-fills bytes, which needs a contiguous datatype with one
                            * layout on every rank: what the prologue of a collective without
                            * an op gives it (basic elements, packed where not dense) */
    int tag_first;         /* tag ids [tag_first, tag_first + tag_count) */
    int tag_count;         /* number of tags of this schedule */
    union {
#define X(ID, id, ...) cg_##id##_fn id;
        CG_COLL_TABLE(X)
#undef X
        void (*any)(void); /* whichever it is, to be cast to its collective's type
                            * (the harness calls by the signature's shape) */
    } fn;                  /* the generated function, by collective */
    const struct cg_param_info *params; /* tunable parameters (NULL when none) */
    int nparams;           /* entries in params */
    struct cg_topo_info topo; /* node/lane topology (topo.needed 0: flat) */
};

extern const struct cg_algo *const cg_algos[]; /* every generated algorithm */
extern const int cg_nalgos;                    /* entries in cg_algos */
extern const struct cg_tag_info cg_tag_infos[];/* by tag id */
extern const int cg_ntags;                     /* entries in cg_tag_infos */

const char *cg_coll_name(enum cg_coll coll);   /* cg_colls[coll].name, "unknown" out of range */

#endif
