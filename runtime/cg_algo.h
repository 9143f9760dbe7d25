/* cg_algo.h - the registry of generated algorithms (filled in by the
 * generator in emitted/registry.c), and the signatures of generated
 * collectives: the MPI collective's, with counts as size_t.
 */
#ifndef CG_ALGO_H
#define CG_ALGO_H

#include <mpi.h>
#include <stddef.h>

enum cg_coll {
    CG_COLL_ALLREDUCE,
    CG_COLL_ALLGATHER,
    CG_COLL_REDUCE_SCATTER_BLOCK,
    CG_COLL_BCAST,
    CG_COLL_REDUCE,
    CG_COLL_GATHER,
    CG_COLL_SCATTER,
    CG_COLL_ALLTOALL,
    CG_COLL_SCAN,
    CG_COLL_EXSCAN,
    CG_COLL_BARRIER,
    CG_COLL_COUNT_
};

#define CG_ALLREDUCE_ARGS \
    const void *sendbuf, void *recvbuf, size_t count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm
#define CG_ALLGATHER_ARGS                                                             \
    const void *sendbuf, size_t sendcount, MPI_Datatype sendtype, void *recvbuf,       \
        size_t recvcount, MPI_Datatype recvtype, MPI_Comm comm
#define CG_REDUCE_SCATTER_BLOCK_ARGS                                                  \
    const void *sendbuf, void *recvbuf, size_t recvcount, MPI_Datatype datatype,       \
        MPI_Op op, MPI_Comm comm
#define CG_BCAST_ARGS void *buffer, size_t count, MPI_Datatype datatype, int root, MPI_Comm comm
#define CG_REDUCE_ARGS                                                                \
    const void *sendbuf, void *recvbuf, size_t count, MPI_Datatype datatype, MPI_Op op, \
        int root, MPI_Comm comm
#define CG_GATHER_ARGS                                                                \
    const void *sendbuf, size_t sendcount, MPI_Datatype sendtype, void *recvbuf,       \
        size_t recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm
#define CG_SCATTER_ARGS                                                               \
    const void *sendbuf, size_t sendcount, MPI_Datatype sendtype, void *recvbuf,       \
        size_t recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm
#define CG_ALLTOALL_ARGS                                                              \
    const void *sendbuf, size_t sendcount, MPI_Datatype sendtype, void *recvbuf,       \
        size_t recvcount, MPI_Datatype recvtype, MPI_Comm comm
#define CG_SCAN_ARGS \
    const void *sendbuf, void *recvbuf, size_t count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm
#define CG_EXSCAN_ARGS \
    const void *sendbuf, void *recvbuf, size_t count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm
#define CG_BARRIER_ARGS MPI_Comm comm

typedef int (*cg_allreduce_fn)(CG_ALLREDUCE_ARGS);
typedef int (*cg_allgather_fn)(CG_ALLGATHER_ARGS);
typedef int (*cg_reduce_scatter_block_fn)(CG_REDUCE_SCATTER_BLOCK_ARGS);
typedef int (*cg_bcast_fn)(CG_BCAST_ARGS);
typedef int (*cg_reduce_fn)(CG_REDUCE_ARGS);
typedef int (*cg_gather_fn)(CG_GATHER_ARGS);
typedef int (*cg_scatter_fn)(CG_SCATTER_ARGS);
typedef int (*cg_alltoall_fn)(CG_ALLTOALL_ARGS);
typedef int (*cg_scan_fn)(CG_SCAN_ARGS);
typedef int (*cg_exscan_fn)(CG_EXSCAN_ARGS);
typedef int (*cg_barrier_fn)(CG_BARRIER_ARGS);

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
    int contiguous_only;   /* 1: zero-fills bytes: MPI_ERR_TYPE for a non-contiguous datatype
                            * (the same datatype layout is needed on every rank) */
    int tag_first;         /* tag ids [tag_first, tag_first + tag_count) */
    int tag_count;         /* number of tags of this schedule */
    union {
        cg_allreduce_fn allreduce;
        cg_allgather_fn allgather;
        cg_reduce_scatter_block_fn reduce_scatter_block;
        cg_bcast_fn bcast;
        cg_reduce_fn reduce;
        cg_gather_fn gather;
        cg_scatter_fn scatter;
        cg_alltoall_fn alltoall;
        cg_scan_fn scan;
        cg_exscan_fn exscan;
        cg_barrier_fn barrier;
    } fn;                  /* the generated function, by collective */
    const struct cg_param_info *params; /* tunable parameters (NULL when none) */
    int nparams;           /* entries in params */
    struct cg_topo_info topo; /* node/lane topology (topo.needed 0: flat) */
};

extern const struct cg_algo *const cg_algos[]; /* every generated algorithm */
extern const int cg_nalgos;                    /* entries in cg_algos */
extern const struct cg_tag_info cg_tag_infos[];/* by tag id */
extern const int cg_ntags;                     /* entries in cg_tag_infos */

const char *cg_coll_name(enum cg_coll coll);   /* "allreduce", ... */

#endif
