/* cg_cuda_algo.h - the signatures of generated GPU collectives and the table
 * of them that emitted/cuda/all.cu defines (the GPU twin of cg_algo.h).
 *
 * The signatures are NCCL's (ncclAllReduce, ncclAllGather, ncclReduceScatter,
 * ncclBroadcast, ncclAlltoAll): device buffers, counts as size_t, the caller's
 * stream last; with a cg_cu_dtype and a cg_cu_op for NCCL's types and an MPI
 * communicator for the ncclComm_t (the context, the transport's bootstrap
 * and its caches live on it, runtime/cuda/README.md). Every function enqueues
 * its work on `stream` and returns without waiting for the GPU: MPI_SUCCESS,
 * or an MPI error code with cg_last_error() saying why.
 *
 * In place, in both NCCL's form and MPI's: sendbuf CG_CU_IN_PLACE, or the
 * pointers NCCL's in-place calls pass (recvbuf == sendbuf; allgather:
 * sendbuf == recvbuf + rank * sendcount elements; reduce_scatter_block:
 * recvbuf == sendbuf + rank * recvcount elements). With CG_CU_IN_PLACE,
 * recvbuf holds the input as MPI_IN_PLACE says (allgather: in block rank;
 * reduce_scatter_block: all p blocks). bcast reads sendbuf at the root only.
 *
 * Why sendbuf / recvbuf and not NCCL's sendbuff / recvbuff: a schedule may
 * not name a parameter, let or round variable sendbuf or recvbuf (gen/check.c
 * reserves them, with count, root, datatype, op and comm), so the generated
 * code can use them after a schedule's names are in scope; `stream` is not
 * reserved, and the generated code uses it only before any of them.
 *
 * Includable from C11 and C++.
 */
#ifndef CG_CUDA_ALGO_H
#define CG_CUDA_ALGO_H

#include "cg_cuda.h"

#ifdef __cplusplus
extern "C" {
#endif

#include "cg_algo.h" /* enum cg_coll, cg_colls.h */

/* The signatures CG_CU_<COLL>_ARGS are the table's (cg_colls.h). */
typedef int (*cg_cu_allreduce_fn)(CG_CU_ALLREDUCE_ARGS);
typedef int (*cg_cu_allgather_fn)(CG_CU_ALLGATHER_ARGS);
typedef int (*cg_cu_reduce_scatter_block_fn)(CG_CU_REDUCE_SCATTER_BLOCK_ARGS);
typedef int (*cg_cu_bcast_fn)(CG_CU_BCAST_ARGS);
typedef int (*cg_cu_alltoall_fn)(CG_CU_ALLTOALL_ARGS);

/* One generated GPU collective. Why a field per collective rather than a
 * union: the table is initialised from C++ (all.cu), where a union member
 * other than the first needs C++20's designated initialisers. The function
 * fields are the table's rows with a GPU twin (cg_colls[].nccl), in table
 * order: emitted/cuda/all.cu fills them in that order. */
struct cg_cu_algo {
    const char *name;                                   /* schedule name, "allreduce_ring" */
    enum cg_coll coll;                                  /* which collective */
    const char *summary;                                /* one line from the schedule */
    const char *file;                                   /* schedule file, repository-relative */
    int tag_first;                                      /* tag ids [tag_first, tag_first + tag_count), */
    int tag_count;                                      /*   the MPI backend's (emitted/mpi/collgen.h) */
    cg_cu_allreduce_fn allreduce;                       /* the function, in its collective's field; */
    cg_cu_allgather_fn allgather;                       /*   the other fields are NULL */
    cg_cu_reduce_scatter_block_fn reduce_scatter_block;
    cg_cu_bcast_fn bcast;
    cg_cu_alltoall_fn alltoall;
    const struct cg_param_info *params;                 /* ranged params (the MPI twin's), */
    int nparams;                                        /*   set with cg_param_set as there */
};

extern const struct cg_cu_algo *const cg_cu_algos[]; /* every generated GPU collective, NULL last */
extern const int cg_cu_nalgos;                       /* entries before the NULL */

#ifdef __cplusplus
}
#endif

#endif
