/* cg_colls.h - the collectives: one row each, the only list of them.
 *
 * Everything that is a fact about a collective, rather than code, is a
 * column here; the generator (gen/ir.h), both runtimes (cg_algo.h,
 * prologue.c, algo.c; cuda/cg_cuda_algo.h, cuda/prologue.c), the harness
 * (through cg_algo.h and the helpers below) and, through
 * emitted/collectives.json that `collgen emit` writes from this table, the
 * plots read it. No includes and no MPI types outside macros, so that the
 * generator (which has no MPI) includes it too; C11 and C++.
 *
 * Columns of CG_COLL_TABLE(X), one X(...) per collective, in enum order:
 *   ID        CG_COLL_<ID> (and gen's CG_C_<ID>)
 *   id        the name as an identifier: cg_<id>_fn, the cg_algo union's
 *             member; as text (cg_colls[].name) the name written in
 *             schedules, records, reports and plots
 *   mpi       the MPI function a generated one replaces, and the native call
 *             it is checked and timed against: an identifier, so that code
 *             with MPI takes its address (the harness's native calls) and
 *             colls.c its name as text (cg_colls[].mpi); without MPI it is
 *             only ever stringified
 *   bufs      the caller's buffers and their roles: CG_BUFS_SEND_RECV
 *             (sendbuf read, recvbuf written), ONE (bcast's buffer), NONE
 *   combine   CG_COMBINE_OP: takes an MPI_Op; NONE: no op; UNION: barrier
 *             tokens (merged, no data)
 *   rooted    1: has a root
 *   shape     out's blocks: CG_SHAPE_SPLIT (B uneven blocks, B chosen by the
 *             schedule), UNIFORM (p equal blocks, block i rank i's), ONE (one
 *             of p equal blocks), TOKEN (one 1-byte token, no user data)
 *   input     in's blocks: CG_INPUT_NONE (no in: the input is copied into
 *             out), P (p blocks), B (as out)
 *   in_place  where MPI_IN_PLACE may go: CG_IN_PLACE_NONE, SEND (sendbuf, on
 *             every rank), SEND_AT_ROOT, RECV_AT_ROOT (scatter's recvbuf)
 *   size      what size_B of a record is: CG_SIZE_COUNT (the count argument x
 *             the datatype's size), P_COUNT (p times that: the whole
 *             vector), NONE (barrier: 0)
 *   busbw     bus bandwidth over algorithm bandwidth, nccl-tests' convention:
 *             CG_BUSBW_ONE (1), PM1 ((p - 1) / p), 2PM1 (2 (p - 1) / p),
 *             NONE (barrier moves no data: no bandwidth, NAN)
 *   ARGS      the MPI signature (counts as size_t): CG_<ID>_ARGS below
 *   CUARGS    the GPU one (NCCL's, runtime/cuda/cg_cuda_algo.h), or
 *             CG_NO_ARGS (void) where the GPU backend lacks the collective
 *   nccl      the NCCL function the GPU twin stands for ("ncclAllReduce"),
 *             NULL where there is none
 *   nccl_log  the collective's name in NCCL_DEBUG=INFO lines ("AllReduce"),
 *             NULL where NCCL logs none (its alltoall is grouped sends)
 *   result    what out holds on each rank after the call, by whose inputs:
 *             CG_RESULT_ALL (every rank's, on every rank), AT_ROOT (every
 *             rank's, at the root only), FROM_ROOT (the root's), PREFIX
 *             (ranks 0..r's on rank r), EXCL_PREFIX (ranks 0..r-1's; rank
 *             0's out is undefined), NONE (no data); with shape and input it
 *             gives the harness each rank's expected output and how much of
 *             out is checked (harness/bench_data.c, bench_expected)
 *
 * Adding a collective: a row here, its CG_<ID>_ARGS (and CG_CU_<ID>_ARGS),
 * and the code that truly differs per collective, which is kept to these
 * places (gen/README.md, "Adding a collective", lists them with its tests):
 * runtime/prologue.c (its begin function and its copies: MPI_IN_PLACE, non-root ranks,
 * type pairs), gen/verify.c (the initial and final symbolic states);
 * runtime/call.c (the native call of a call step) only for a callee; for the
 * GPU backend runtime/cuda/prologue.c and harness/gpu/gpu_point.c's calls.
 * The MPI harness reads the columns only (harness/bench.c calls by the
 * signature's shape, which bufs, combine and rooted give).
 */
#ifndef CG_COLLS_H
#define CG_COLLS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the signatures (macros: their types appear only where expanded) ---- */

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

#define CG_CU_ALLREDUCE_ARGS                                                          \
    const void *sendbuf, void *recvbuf, size_t count, cg_cu_dtype datatype, cg_cu_op op, \
        MPI_Comm comm, cudaStream_t stream
#define CG_CU_ALLGATHER_ARGS                                                          \
    const void *sendbuf, void *recvbuf, size_t sendcount, cg_cu_dtype datatype,        \
        MPI_Comm comm, cudaStream_t stream
#define CG_CU_REDUCE_SCATTER_BLOCK_ARGS                                               \
    const void *sendbuf, void *recvbuf, size_t recvcount, cg_cu_dtype datatype,        \
        cg_cu_op op, MPI_Comm comm, cudaStream_t stream
#define CG_CU_BCAST_ARGS                                                              \
    const void *sendbuf, void *recvbuf, size_t count, cg_cu_dtype datatype, int root,  \
        MPI_Comm comm, cudaStream_t stream
#define CG_CU_ALLTOALL_ARGS                                                           \
    const void *sendbuf, void *recvbuf, size_t count, cg_cu_dtype datatype,            \
        MPI_Comm comm, cudaStream_t stream
#define CG_NO_ARGS void

/* ---- the table ------------------------------------------------------------ */

#define CG_COLL_TABLE(X)                                                                    \
    X(ALLREDUCE, allreduce, MPI_Allreduce, CG_BUFS_SEND_RECV, CG_COMBINE_OP, 0,             \
      CG_SHAPE_SPLIT, CG_INPUT_NONE, CG_IN_PLACE_SEND, CG_SIZE_COUNT, CG_BUSBW_2PM1,        \
      CG_ALLREDUCE_ARGS, CG_CU_ALLREDUCE_ARGS, "ncclAllReduce", "AllReduce",                \
      CG_RESULT_ALL)                                                                        \
    X(ALLGATHER, allgather, MPI_Allgather, CG_BUFS_SEND_RECV, CG_COMBINE_NONE, 0,           \
      CG_SHAPE_UNIFORM, CG_INPUT_NONE, CG_IN_PLACE_SEND, CG_SIZE_P_COUNT, CG_BUSBW_PM1,     \
      CG_ALLGATHER_ARGS, CG_CU_ALLGATHER_ARGS, "ncclAllGather", "AllGather",                \
      CG_RESULT_ALL)                                                                        \
    X(REDUCE_SCATTER_BLOCK, reduce_scatter_block, MPI_Reduce_scatter_block,                 \
      CG_BUFS_SEND_RECV, CG_COMBINE_OP, 0, CG_SHAPE_ONE, CG_INPUT_P, CG_IN_PLACE_SEND,      \
      CG_SIZE_P_COUNT, CG_BUSBW_PM1, CG_REDUCE_SCATTER_BLOCK_ARGS,                          \
      CG_CU_REDUCE_SCATTER_BLOCK_ARGS, "ncclReduceScatter", "ReduceScatter",                \
      CG_RESULT_ALL)                                                                        \
    X(BCAST, bcast, MPI_Bcast, CG_BUFS_ONE, CG_COMBINE_NONE, 1, CG_SHAPE_SPLIT,             \
      CG_INPUT_NONE, CG_IN_PLACE_NONE, CG_SIZE_COUNT, CG_BUSBW_ONE, CG_BCAST_ARGS,          \
      CG_CU_BCAST_ARGS, "ncclBroadcast", "Broadcast", CG_RESULT_FROM_ROOT)                  \
    X(REDUCE, reduce, MPI_Reduce, CG_BUFS_SEND_RECV, CG_COMBINE_OP, 1, CG_SHAPE_SPLIT,      \
      CG_INPUT_NONE, CG_IN_PLACE_SEND_AT_ROOT, CG_SIZE_COUNT, CG_BUSBW_ONE,                 \
      CG_REDUCE_ARGS, CG_NO_ARGS, NULL, NULL, CG_RESULT_AT_ROOT)                            \
    X(GATHER, gather, MPI_Gather, CG_BUFS_SEND_RECV, CG_COMBINE_NONE, 1,                    \
      CG_SHAPE_UNIFORM, CG_INPUT_NONE, CG_IN_PLACE_SEND_AT_ROOT, CG_SIZE_P_COUNT,           \
      CG_BUSBW_PM1, CG_GATHER_ARGS, CG_NO_ARGS, NULL, NULL, CG_RESULT_AT_ROOT)              \
    X(SCATTER, scatter, MPI_Scatter, CG_BUFS_SEND_RECV, CG_COMBINE_NONE, 1,                 \
      CG_SHAPE_ONE, CG_INPUT_P, CG_IN_PLACE_RECV_AT_ROOT, CG_SIZE_P_COUNT,                  \
      CG_BUSBW_PM1, CG_SCATTER_ARGS, CG_NO_ARGS, NULL, NULL, CG_RESULT_FROM_ROOT)           \
    X(ALLTOALL, alltoall, MPI_Alltoall, CG_BUFS_SEND_RECV, CG_COMBINE_NONE, 0,              \
      CG_SHAPE_UNIFORM, CG_INPUT_P, CG_IN_PLACE_SEND, CG_SIZE_P_COUNT, CG_BUSBW_PM1,        \
      CG_ALLTOALL_ARGS, CG_CU_ALLTOALL_ARGS, "ncclAlltoAll", NULL, CG_RESULT_ALL)           \
    X(SCAN, scan, MPI_Scan, CG_BUFS_SEND_RECV, CG_COMBINE_OP, 0, CG_SHAPE_SPLIT,            \
      CG_INPUT_NONE, CG_IN_PLACE_SEND, CG_SIZE_COUNT, CG_BUSBW_ONE, CG_SCAN_ARGS,           \
      CG_NO_ARGS, NULL, NULL, CG_RESULT_PREFIX)                                             \
    X(EXSCAN, exscan, MPI_Exscan, CG_BUFS_SEND_RECV, CG_COMBINE_OP, 0, CG_SHAPE_SPLIT,      \
      CG_INPUT_B, CG_IN_PLACE_SEND, CG_SIZE_COUNT, CG_BUSBW_ONE, CG_EXSCAN_ARGS,            \
      CG_NO_ARGS, NULL, NULL, CG_RESULT_EXCL_PREFIX)                                        \
    X(BARRIER, barrier, MPI_Barrier, CG_BUFS_NONE, CG_COMBINE_UNION, 0, CG_SHAPE_TOKEN,     \
      CG_INPUT_NONE, CG_IN_PLACE_NONE, CG_SIZE_NONE, CG_BUSBW_NONE, CG_BARRIER_ARGS,        \
      CG_NO_ARGS, NULL, NULL, CG_RESULT_NONE)

/* ---- the columns' values --------------------------------------------------- */

enum cg_coll {
#define X(id, ...) CG_COLL_##id,
    CG_COLL_TABLE(X)
#undef X
    CG_COLL_COUNT_
};

/* The caller's buffers. */
enum cg_bufs {
    CG_BUFS_SEND_RECV, /* sendbuf is read, recvbuf written */
    CG_BUFS_ONE,       /* one buffer, read at the root and written elsewhere (bcast) */
    CG_BUFS_NONE       /* no data (barrier) */
};

/* How a collective combines data in reduce steps. */
enum cg_combine {
    CG_COMBINE_NONE,  /* no op: reduce steps are errors */
    CG_COMBINE_OP,    /* the user's MPI_Op, once per contribution, in rank order unless commutative */
    CG_COMBINE_UNION  /* barrier tokens: an idempotent union, overlapping sets are fine */
};

/* How many blocks `out` has and who chooses (B is the schedule's "blocks"). */
enum cg_shape {
    CG_SHAPE_SPLIT,   /* B blocks of uneven size, B chosen by the schedule; moves keep j % B */
    CG_SHAPE_UNIFORM, /* p equal blocks, block i belonging to rank i; out has p blocks */
    CG_SHAPE_ONE,     /* p equal blocks, but out is one of them (reduce_scatter_block, scatter) */
    CG_SHAPE_TOKEN    /* one 1-byte block, no user data (barrier) */
};

/* How many blocks the read-only `in` has. */
enum cg_input {
    CG_INPUT_NONE,    /* no `in`: the runtime copies the input into `out` */
    CG_INPUT_P,       /* p blocks (reduce_scatter_block, alltoall; scatter: at the root) */
    CG_INPUT_B        /* B blocks, as `out` (exscan) */
};

/* Where MPI_IN_PLACE may be passed. */
enum cg_in_place {
    CG_IN_PLACE_NONE,         /* nowhere (bcast has one buffer; barrier none) */
    CG_IN_PLACE_SEND,         /* sendbuf, on every rank */
    CG_IN_PLACE_SEND_AT_ROOT, /* sendbuf, at the root only (reduce, gather) */
    CG_IN_PLACE_RECV_AT_ROOT  /* recvbuf, at the root only (scatter) */
};

/* What a benchmark record's size_B is. */
enum cg_size {
    CG_SIZE_COUNT,   /* the count argument x the datatype's size */
    CG_SIZE_P_COUNT, /* p times that: the whole vector of p blocks */
    CG_SIZE_NONE     /* no data: 0 */
};

/* Bus bandwidth over algorithm bandwidth (nccl-tests' factors). */
enum cg_busbw {
    CG_BUSBW_ONE,  /* 1: bcast, reduce; scan and exscan by convention (nccl-tests has none) */
    CG_BUSBW_PM1,  /* (p - 1) / p: allgather, reduce_scatter_block, gather, scatter, alltoall */
    CG_BUSBW_2PM1, /* 2 (p - 1) / p: allreduce */
    CG_BUSBW_NONE  /* barrier: no data, no bandwidth (NAN; records write null) */
};

/* What out holds after the call, and where (the harness's expected results). */
enum cg_result {
    CG_RESULT_ALL,         /* every rank's inputs, on every rank */
    CG_RESULT_AT_ROOT,     /* every rank's inputs, at the root only (reduce, gather) */
    CG_RESULT_FROM_ROOT,   /* the root's input (bcast, scatter) */
    CG_RESULT_PREFIX,      /* ranks 0..r's, on rank r (scan) */
    CG_RESULT_EXCL_PREFIX, /* ranks 0..r-1's, on rank r; undefined on rank 0 (exscan) */
    CG_RESULT_NONE         /* no data (barrier) */
};

struct cg_coll_info {
    const char *name;           /* "allreduce" */
    const char *mpi;            /* "MPI_Allreduce" */
    enum cg_bufs bufs;          /* the caller's buffers */
    int reduces;                /* takes an MPI_Op (combine == CG_COMBINE_OP) */
    enum cg_combine combine;    /* what a reduce step does */
    int rooted;                 /* has a root */
    enum cg_shape shape;        /* blocks of out, and who chooses B */
    enum cg_input input;        /* blocks of the read-only in */
    enum cg_in_place in_place;  /* where MPI_IN_PLACE may go */
    enum cg_size size;          /* a record's size_B */
    enum cg_busbw busbw;        /* bus bandwidth factor */
    const char *args;           /* the MPI parameter list, as text */
    const char *cu_args;        /* the GPU one, "void" where there is no GPU twin */
    const char *nccl;           /* the NCCL function of the GPU twin, or NULL */
    const char *nccl_log;       /* its name in NCCL debug lines, or NULL */
    enum cg_result result;      /* what out holds after the call, and where */
};

/* The most pieces an exchange step's "segments" may cut a message into:
 * the verifier's bound (gen/sim.c) and cg_xchg_begin_seg's (runtime/xchg.c),
 * here because both sides include this header and nothing else in common. */
#define CG_MAX_SEGMENTS 64

/* The table, by enum cg_coll (runtime/colls.c, linked into the generator
 * and both runtimes). */
extern const struct cg_coll_info cg_colls[CG_COLL_COUNT_];

/* The collective named `name` (enum cg_coll), or -1. */
int cg_coll_lookup(const char *name);

/* size_B of one call: count elements of elem_size bytes at p ranks. */
double cg_coll_size_B(int coll, int p, double count, double elem_size);

/* Bus bandwidth over algorithm bandwidth at p ranks; NAN for barrier (no
 * data: a record's busbw is null). */
double cg_coll_busbw_factor(int coll, int p);

#ifdef __cplusplus
}
#endif

#endif
