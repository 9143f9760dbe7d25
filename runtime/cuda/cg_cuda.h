/* cg_cuda.h - the collgen CUDA runtime: what generated GPU collectives link
 * against (runtime/cuda/README.md).
 *
 * The GPU twin of cg.h: device buffers, one CUDA stream per call given by the
 * caller, reductions as CUDA kernels, exchanges over NCCL point-to-point or
 * over CUDA IPC between processes of one node (several may share one GPU),
 * and timing tags as CUDA events. Block geometry (struct cg_geom, cg_buf,
 * cg_mod, ...) is cg.h's, unchanged: a cg_buf's base is a device pointer.
 *
 * Modules, one prefix each (all cg_cu_*): reduce.cu (kernels, cg_cu_reduce),
 * dtype.c (element types and ops, mapped from MPI and NCCL), device.c (GPU
 * detection and device selection), comm.c (the context cached on a
 * communicator, per-call state, device scratch), xchg.c (exchanges and
 * local block operations), ipc.c and nccl.c (the two transports), tag.c
 * (timing tags).
 *
 * Errors: as in cg.h, every function that can fail returns an MPI error code
 * (MPI_SUCCESS on success) and records one line readable with
 * cg_last_error(); a failed CUDA or NCCL call returns MPI_ERR_OTHER and
 * records "rank R: runtime/cuda/FILE:LINE: cudaXxx: <cudaGetErrorString>".
 * Nothing aborts or exits.
 *
 * Includable from C11 and C++. Define CG_CUDA_NO_NCCL to build without NCCL
 * (the NCCL transport and the NCCL mappings are then absent).
 */
#ifndef CG_CUDA_H
#define CG_CUDA_H

#include <mpi.h> /* before extern "C": a C++ build may pull MPI's C++ bindings */
#include <cuda_runtime_api.h>
#ifndef CG_CUDA_NO_NCCL
#include <nccl.h>
#endif
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#include "cg.h"

/* ---- element types and ops (dtype.c) ------------------------------------- */

typedef enum cg_cu_dtype {
    CG_CU_FLOAT32,
    CG_CU_FLOAT64,
    CG_CU_FLOAT16,  /* __half */
    CG_CU_BFLOAT16, /* __nv_bfloat16 */
    CG_CU_INT32,
    CG_CU_INT64,
    CG_CU_NDTYPES
} cg_cu_dtype;

typedef enum cg_cu_op {
    CG_CU_OP_NONE = -1, /* collectives that do not reduce */
    CG_CU_SUM,
    CG_CU_PROD,
    CG_CU_MIN,
    CG_CU_MAX,
    CG_CU_NOPS
} cg_cu_op;

size_t cg_cu_dtype_size(cg_cu_dtype dtype);       /* bytes; 0 when out of range */
const char *cg_cu_dtype_name(cg_cu_dtype dtype);  /* "float32", ...; "?" out of range */
const char *cg_cu_op_name(cg_cu_op op);           /* "sum", ...; "none", "?" */

/* MPI_FLOAT, MPI_DOUBLE, MPI_INT / MPI_INT32_T, MPI_LONG / MPI_LONG_LONG /
 * MPI_INT64_T (by size), and MPIX_C_FLOAT16 where the library has it;
 * MPI_ERR_TYPE otherwise. */
int cg_cu_dtype_from_mpi(MPI_Datatype type, cg_cu_dtype *dtype);
/* MPI_SUM, MPI_PROD, MPI_MIN, MPI_MAX; MPI_ERR_OP otherwise. */
int cg_cu_op_from_mpi(MPI_Op mop, cg_cu_op *op);
#ifndef CG_CUDA_NO_NCCL
int cg_cu_dtype_from_nccl(ncclDataType_t type, cg_cu_dtype *dtype); /* MPI_ERR_TYPE */
int cg_cu_op_from_nccl(ncclRedOp_t nop, cg_cu_op *op);              /* MPI_ERR_OP */
ncclDataType_t cg_cu_dtype_to_nccl(cg_cu_dtype dtype);
ncclRedOp_t cg_cu_op_to_nccl(cg_cu_op op);
#endif

/* ---- the reduction kernel (reduce.cu) ------------------------------------ */

/* into[i] = into[i] op from[i] (order CG_INTO_FROM) or from[i] op into[i]
 * (CG_FROM_INTO), i < n, enqueued on `stream`; returns once launched (no
 * synchronisation). 16-byte vector loads and stores where into and from are
 * equally aligned modulo 16 (scalar head and tail), scalar otherwise.
 * float16 and bfloat16 are computed in fp32 and rounded to nearest even once
 * per element. Integer sum and prod wrap. min(x, y) is (y < x ? y : x) and
 * max(x, y) is (y > x ? y : x), x the first operand, so that NaNs and signed
 * zeros follow `order`. into and from must not overlap. */
int cg_cu_reduce(void *into, const void *from, size_t n, cg_cu_dtype dtype, cg_cu_op op,
                 int order, cudaStream_t stream);

/* ---- GPUs (device.c) ------------------------------------------------------ */

/* Number of usable CUDA devices; 0 when there is none or the runtime cannot
 * reach a driver, with *why (when why is not NULL) set to the reason, such
 * as "cudaGetDeviceCount: CUDA driver version is insufficient for CUDA
 * runtime version". Does not use NCCL (ncclGetUniqueId succeeds without a
 * GPU). */
int cg_cu_gpu_count(const char **why);

/* Makes device (local rank % device count) current, the local rank being the
 * rank in MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED); collective on
 * comm. Stores the device in *device when not NULL. MPI_ERR_OTHER when
 * there is no GPU. */
int cg_cu_select_device(MPI_Comm comm, int *device);

/* ---- per-call state (comm.c) --------------------------------------------- */

enum cg_cu_transport {
    CG_CU_TRANSPORT_IPC,  /* CUDA IPC: every rank on one node */
    CG_CU_TRANSPORT_NCCL  /* NCCL point-to-point: one rank per GPU */
};

struct cg_cu_comm; /* cached per communicator (comm.c) */

struct cg_cu_call {
    MPI_Comm comm;           /* private duplicate of the caller's communicator */
    int rank;                /* rank in comm */
    int p;                   /* size of comm */
    cudaStream_t stream;     /* every operation of the call goes on it */
    cg_cu_dtype dtype;       /* element type */
    size_t esize;            /* bytes per element */
    cg_cu_op op;             /* reduction op (CG_CU_OP_NONE when none) */
    int transport;           /* enum cg_cu_transport */
    struct cg_cu_comm *cc;   /* cached context */
    int tag;                 /* tag of the current exchange */
    int nposts;              /* sends and receives posted in it */
    /* The caller's arguments, as the collective's cg_cu_begin_<coll>
     * recorded them for cg_cu_buffers (prologue.c). */
    int coll;                /* enum cg_coll (cg_colls.h); -1 after a plain cg_cu_call_begin */
    const void *sendbuf;     /* as passed (CG_CU_IN_PLACE too) */
    void *recvbuf;           /* as passed */
    size_t count;            /* the count argument: elements of the vector (allreduce,
                              * bcast) or of one of the p blocks */
    int root;                /* bcast; else 0 */
    int empty;               /* count is 0: the call has nothing to do */
    int result;              /* the call's result when the begin returned CG_DONE */
    const struct cg_topo *topo; /* CG_NEEDS_TOPOLOGY: this communicator's (regular) */
};

#define CG_CU_IN_PLACE MPI_IN_PLACE

/* Starts a call on `comm` (collective on the first call: creates the cached
 * context, see runtime/cuda/README.md) with the device current at that time;
 * later calls on the communicator must have the same device current. */
int cg_cu_call_begin(struct cg_cu_call *c, MPI_Comm comm, cg_cu_dtype dtype, cg_cu_op op,
                     cudaStream_t stream);
/* Ends the call: releases what an error left posted. */
void cg_cu_call_end(struct cg_cu_call *c);

/* The node and lane structure of the call's communicator (runtime/topo.c:
 * shared memory or CG_PPN), detected on first use (collective) and cached
 * with the context; the topology schedules' fallback test. */
int cg_cu_topo(struct cg_cu_call *c, const struct cg_topo **topo);

/* Argument checks of generated collectives, after cg_cu_call_begin, with the
 * same answer on every rank when every rank passes the same arguments:
 * MPI_ERR_OP when a reducing collective is given CG_CU_OP_NONE;
 * MPI_ERR_ROOT when root is not a rank of the call's communicator. */
int cg_cu_check_op(const struct cg_cu_call *c);
int cg_cu_check_root(const struct cg_cu_call *c, int root);

/* The prologue of a generated GPU collective (prologue.c), as the MPI
 * runtime's (cg.h, "prologues"), and its end:
 *
 *   CG_CU_BEGIN(cg_cu_begin_<coll>(&c, <its arguments>, flags, fallback));
 *   [CG_CU_RETURN_ON(cg_param_value(...)); ... CG_CU_RETURN_ON(cg_cu_empty(&c));]
 *   ... p, rank, the schedule's lets, the call tag ...
 *   CG_TRY(cg_cu_buffers(&c, B, &in, &out, &tmp, scratch blocks));
 *   ... the phases ...
 * out:
 *   return cg_cu_call_finish(&c, rc);
 *
 * cg_cu_begin_<coll> (one per collective the GPU backend has, with its
 * NCCL-like signature, cg_colls.h) records the arguments, runs
 * cg_cu_call_begin, with CG_NEEDS_TOPOLOGY finds the topology and runs
 * `fallback` (a cg_cu_<coll>_fn cast to cg_any_fn) where it is not regular,
 * then checks the op of a reducing collective (MPI_ERR_OP for
 * CG_CU_OP_NONE) and a root (MPI_ERR_ROOT). It returns MPI_SUCCESS, an MPI
 * error code, or CG_DONE (count 0, or the fallback ran: c->result is the
 * call's result; CG_READS_PARAMS: count 0 is c->empty instead).
 * cg_cu_buffers lays `out` (and `in`) over the caller's device memory and
 * `tmp` (NULL: no scratch) of ntmp blocks in device scratch slot 0; an
 * input the result would overwrite (in place in MPI's form, sendbuf
 * CG_CU_IN_PLACE, or NCCL's, overlapping buffers) is copied into slot 1
 * first; allreduce and bcast copy sendbuf into recvbuf, allgather its
 * block. MPI_ERR_INTERN when nb or the buffers do not fit the collective.
 * cg_cu_call_finish ends the call and returns rc, or c->result for
 * CG_DONE. */
int cg_cu_begin_allreduce(struct cg_cu_call *c, CG_CU_ALLREDUCE_ARGS, int flags,
                          cg_any_fn fallback);
int cg_cu_begin_allgather(struct cg_cu_call *c, CG_CU_ALLGATHER_ARGS, int flags,
                          cg_any_fn fallback);
int cg_cu_begin_reduce_scatter_block(struct cg_cu_call *c, CG_CU_REDUCE_SCATTER_BLOCK_ARGS,
                                     int flags, cg_any_fn fallback);
int cg_cu_begin_bcast(struct cg_cu_call *c, CG_CU_BCAST_ARGS, int flags, cg_any_fn fallback);
int cg_cu_begin_alltoall(struct cg_cu_call *c, CG_CU_ALLTOALL_ARGS, int flags,
                         cg_any_fn fallback);
int cg_cu_buffers(struct cg_cu_call *c, long nb, struct cg_buf *in, struct cg_buf *out,
                  struct cg_buf *tmp, long ntmp);
int cg_cu_call_finish(struct cg_cu_call *c, int rc);
/* With CG_READS_PARAMS, once the params are read: CG_DONE (the call's
 * result MPI_SUCCESS) when the count is 0, else MPI_SUCCESS. */
int cg_cu_empty(struct cg_cu_call *c);

/* The generated GPU collective's first statement: declares rc, the call's
 * status, from cg_cu_begin_<coll>, and returns cg_cu_call_finish(&c, rc)
 * at once unless it is MPI_SUCCESS (an error, the fallback ran, count 0).
 * CG_CU_RETURN_ON does the same for the prologue's later steps (a param
 * read, cg_cu_empty). Like CG_TRY they name the function's `c` and `rc`.
 * Why a return and not CG_TRY's goto out, as the MPI backend's prologue
 * has: p, rank and the schedule's lets are declared with initialisers after
 * these, and C++ forbids a goto that jumps over initialisations into their
 * scope; the body's own CG_TRYs come after every one of them. */
#define CG_CU_BEGIN(begin) \
    int rc = (begin);      \
    CG_CU_RETURN_ON(rc)
#define CG_CU_RETURN_ON(expr)                     \
    do {                                          \
        if ((rc = (expr)) != MPI_SUCCESS) {       \
            return cg_cu_call_finish(&c, rc);     \
        }                                         \
    } while (0)

/* 1 when the byte ranges [a, a + abytes) and [b, b + bbytes) share a byte.
 * Generated collectives use it to recognise NCCL's in-place calls (recvbuf
 * inside sendbuf, or equal to it), which need the input copied first. */
static inline int cg_cu_overlap(const void *a, size_t abytes, const void *b, size_t bbytes)
{
    uintptr_t x = (uintptr_t)a, y = (uintptr_t)b;
    return (abytes > 0) && (bbytes > 0) && (x < y + bbytes) && (y < x + abytes);
}

/* Device scratch reused between calls: slot 0..3, at least `bytes` bytes,
 * valid until the next cg_cu_scratch on the slot or the end of the comm.
 * Growing it synchronises the device (cudaFree). NULL and *rc set on error. */
void *cg_cu_scratch(struct cg_cu_call *c, int slot, size_t bytes, int *rc);
/* Bytes of a buffer with geometry g and nblocks blocks. */
size_t cg_cu_buf_bytes(const struct cg_cu_call *c, const struct cg_geom *g, long nblocks);

/* The transport that calls on comm use (creating the context if needed). */
int cg_cu_comm_transport(MPI_Comm comm, int *transport);
const char *cg_cu_transport_name(int transport); /* "ipc", "nccl" */

/* ---- exchanges and local blocks (xchg.c, ipc.c, nccl.c) ------------------ */

/* One exchange step, as cg_xchg_*: post every send and receive, then wait.
 * Blocks [first, first + n) of b, wrapping modulo b->nblocks, form one
 * message. After cg_cu_xchg_wait returns, the step's data is in place in
 * stream order (nothing is synchronised with the host), and no later work
 * on the stream can overwrite a block before every peer that reads it has
 * read it. With the IPC transport, buffers that are sent from must be
 * cudaMalloc memory (they are exported with cudaIpcGetMemHandle). */
int cg_cu_xchg_begin(struct cg_cu_call *c, int tag);
int cg_cu_send(struct cg_cu_call *c, int to, const struct cg_buf *b, long first, long n);
int cg_cu_recv(struct cg_cu_call *c, int from, const struct cg_buf *b, long first, long n);
int cg_cu_xchg_wait(struct cg_cu_call *c);
/* The segmented exchange of an exchange step with "segments" (runtime/xchg.c's
 * cg_xchg_begin_seg): S is checked (1..CG_MAX_SEGMENTS, MPI_ERR_ARG
 * otherwise) and the exchange runs whole. Why whole: a step's messages go
 * in one NCCL group or one IPC copy each, queued on the call's stream with
 * the reduce kernel after them; the host has no reduction to overlap. */
int cg_cu_xchg_begin_seg(struct cg_cu_call *c, int tag, int segments);
/* The fused end of such an exchange and the reduce after it:
 * cg_cu_xchg_wait, then cg_cu_reduce_blocks. */
int cg_cu_xchg_wait_reduce(struct cg_cu_call *c, const struct cg_buf *into, long ifirst,
                           const struct cg_buf *from, long ffirst, long n, int order);

/* into blocks op= from blocks (wrapping, element streams aligned), on the
 * call's stream, with the call's dtype and op. */
int cg_cu_reduce_blocks(struct cg_cu_call *c, const struct cg_buf *into, long ifirst,
                        const struct cg_buf *from, long ffirst, long n, int order);
/* Copies n blocks (wrapping on both sides), device to device. */
int cg_cu_copy_blocks(struct cg_cu_call *c, const struct cg_buf *to, long tfirst,
                      const struct cg_buf *from, long ffirst, long n);
/* Strided ranges (xchg.c): blocks first + i * stride (mod the buffer's
 * blocks), i < n, posted or combined block by block. */
int cg_cu_send_strided(struct cg_cu_call *c, int to, const struct cg_buf *b, long first, long n,
                       long stride);
int cg_cu_recv_strided(struct cg_cu_call *c, int from, const struct cg_buf *b, long first,
                       long n, long stride);
int cg_cu_reduce_blocks_strided(struct cg_cu_call *c, const struct cg_buf *into, long ifirst,
                                long istride, const struct cg_buf *from, long ffirst,
                                long fstride, long n, int order);
int cg_cu_copy_blocks_strided(struct cg_cu_call *c, const struct cg_buf *to, long tfirst,
                              long tstride, const struct cg_buf *from, long ffirst, long fstride,
                              long n);
/* Copies `bytes` bytes device to device on the call's stream; nothing when
 * to == from (an in-place call), MPI_ERR_BUFFER when the two ranges
 * overlap otherwise. */
int cg_cu_copy(struct cg_cu_call *c, void *to, const void *from, size_t bytes);

/* ---- timing tags as CUDA events (tag.c) ---------------------------------- */

/* CG_CU_TAG_BEGIN(id) / CG_CU_TAG_END(id) record a pair of CUDA events on the
 * stream of the call in progress on this thread (cg_cu_call_begin sets it),
 * with the MPI backend's ids (emitted/mpi/collgen.h). They are read after
 * the call: cg_cu_tag_read waits for the events and adds their elapsed time
 * and one call per pair to the tag. Compiled out (no code, no symbol
 * referenced) unless CG_TAGS is defined. Not thread-safe (one table per
 * process, as the MPI backend's). */
void cg_cu_tag_begin(int id);
void cg_cu_tag_end(int id);

#ifdef CG_TAGS
#define CG_CU_TAG_BEGIN(id) cg_cu_tag_begin((id))
#define CG_CU_TAG_END(id) cg_cu_tag_end((id))
#else
#define CG_CU_TAG_BEGIN(id) ((void)0)
#define CG_CU_TAG_END(id) ((void)0)
#endif

/* Waits for every recorded pair and accumulates it. MPI_ERR_OTHER when a
 * CUDA call failed (recorded), MPI_ERR_ARG for an END without its BEGIN. */
int cg_cu_tag_collect(void);
/* Collects, then reads tag `id`: total ns and completed pairs. -1 for an id
 * out of range or a failed collection. */
int cg_cu_tag_read(int id, uint64_t *ns, uint64_t *calls);
/* Collects and zeroes every tag. */
void cg_cu_tag_reset(void);
/* Frees the event pool (events are otherwise kept for reuse). */
void cg_cu_tag_free(void);
/* Code built with tags records them unless switched off here (on by
 * default; process-wide): off, CG_CU_TAG_BEGIN/END return at once. Switch
 * only between calls, never with a tag open. */
void cg_cu_tag_enable(int on);

#ifdef __cplusplus
}
#endif

#endif
