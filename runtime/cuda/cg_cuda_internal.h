/* cg_cuda_internal.h - what the .c files of runtime/cuda/ share and nothing else sees: the
 * cached context's layout, the CUDA and NCCL check macros, and the pieces
 * two element streams cut each other into. C11 only (reduce.cu does not
 * include it).
 */
#ifndef CG_CUDA_INTERNAL_H
#define CG_CUDA_INTERNAL_H

#include "cg_cuda.h"
#include "../cg_internal.h" /* CG_CHECK_MPI, CG_CHECK, cg_range_segs, struct cg_seg */

#include <stdio.h>
#include <string.h>

#define CG_CU_NSCRATCH 4    /* device scratch slots per context */
#define CG_CU_IMPORT_CAP 64 /* peers' buffers kept open per context (LRU) */
#define CG_CU_EXPORT_CAP 64 /* own buffers whose handles are kept (LRU) */

/* What a send tells its receiver under the IPC transport, by an MPI message
 * on the private duplicate (ipc.c): where the data lies in the sender's
 * allocation, and the allocation's handle so that the receiver can open it
 * on first use. 128 bytes. */
struct cg_cu_desc {
    uint64_t base;          /* sender's allocation base (its address space) */
    uint64_t size;          /* allocation size in bytes */
    uint64_t buffer_id;     /* CU_POINTER_ATTRIBUTE_BUFFER_ID: unique per allocation */
    uint64_t off[2];        /* byte offsets of the runs from base */
    uint64_t len[2];        /* bytes of the runs */
    int32_t nseg;           /* runs (1 or 2) */
    int32_t reserved;
    cudaIpcMemHandle_t handle; /* 64 bytes */
};

/* A peer's allocation opened with cudaIpcOpenMemHandle. */
struct cg_cu_import {
    int peer;
    uint64_t buffer_id;
    uint64_t base, size;    /* in the peer's address space */
    void *ptr;              /* mapped here (NULL: free slot) */
    uint64_t used;          /* LRU clock */
};

/* An own allocation whose IPC handle is known. */
struct cg_cu_export {
    uint64_t buffer_id;
    uint64_t base, size;
    cudaIpcMemHandle_t handle;
    uint64_t used;          /* LRU clock; 0: free slot */
};

/* One cg_cu_send / cg_cu_recv of the current exchange. */
struct cg_cu_post {
    int peer;
    int is_recv;
    char *base;             /* the buffer's base (device pointer) */
    struct cg_seg seg[2];   /* byte runs from base, in stream order */
    int nseg;
    size_t bytes;           /* total */
    struct cg_cu_desc desc; /* IPC: sent (send) or received (recv) */
    MPI_Request req;        /* IPC: the descriptor's Isend / Irecv */
    MPI_Request done_req;   /* IPC: the done message (send: Irecv; recv: Isend) */
    int done_msg;           /* the done message's buffer */
    size_t stage_off;       /* NCCL: offset in the staging buffer, wrapped runs */
};

/* Cached per communicator as an attribute (comm.c); freed with it. */
struct cg_cu_comm {
    MPI_Comm comm;                     /* private duplicate, MPI_ERRORS_RETURN */
    int rank;                          /* rank in comm */
    int p;                             /* size of comm */
    int device;                        /* CUDA device current at creation */
    int transport;                     /* enum cg_cu_transport */
    void *scratch[CG_CU_NSCRATCH];     /* device scratch (cg_cu_scratch) */
    size_t scratch_bytes[CG_CU_NSCRATCH];
    void *stage;                       /* NCCL staging of wrapped ranges */
    size_t stage_bytes;
    struct cg_cu_post *posts;          /* the current exchange's posts */
    int posts_cap;
    /* IPC (ipc.c) */
    cudaEvent_t ready;                 /* recorded before this rank's sends of a step */
    cudaEvent_t *done;                 /* [p]: done[s]: this rank's pulls from s finished */
    cudaIpcEventHandle_t *ev_handles;  /* [p * (p + 1)]: rank q's ready, then its done[0..p-1] */
    cudaEvent_t *peer_ready;           /* [p]: opened ready events of peers (lazily) */
    cudaEvent_t *peer_done;            /* [p]: opened done[rank] events of peers (lazily) */
    unsigned char *flags;              /* [p]: per-step marks (ipc.c) */
    struct cg_cu_import imports[CG_CU_IMPORT_CAP];
    struct cg_cu_export exports[CG_CU_EXPORT_CAP];
    uint64_t clock;                    /* LRU clock of imports and exports */
    struct cg_topo topo;               /* node and lane structure (cg_cu_topo) */
#ifndef CG_CUDA_NO_NCCL
    ncclComm_t nccl;                   /* NCCL transport */
#endif
};

/* Rank in MPI_COMM_WORLD for messages, -1 before MPI_Init or after finalize. */
static inline int cg_cu_world_rank(void)
{
    int init = 0, fin = 0, rank = -1;
    if ((MPI_Initialized(&init) != MPI_SUCCESS) || !init) {
        return -1;
    }
    if ((MPI_Finalized(&fin) != MPI_SUCCESS) || fin) {
        return -1;
    }
    if (MPI_Comm_rank(MPI_COMM_WORLD, &rank) != MPI_SUCCESS) {
        return -1;
    }
    return rank;
}

/* Records "rank R: runtime/cuda/FILE:LINE: cudaXxx: <message>"; `call` is the
 * call's text, of which only the function name is kept. */
static inline void cg_cu_error_at(const char *file, int line, const char *call, const char *msg)
{
    const char *base = strrchr(file, '/');
    cg_set_error("rank %d: runtime/cuda/%s:%d: %.*s: %s", cg_cu_world_rank(),
                 (base != NULL) ? (base + 1) : file, line, (int)strcspn(call, "("), call, msg);
}

static inline void cg_cu_error_cuda(cudaError_t e, const char *file, int line, const char *call)
{
    (void)cudaGetLastError(); /* clears a non-sticky error so that later calls are clean */
    cg_cu_error_at(file, line, call, cudaGetErrorString(e));
}

/* cg_internal.h's CG_CHECK_MPI names files "runtime/FILE"; these files are
 * runtime/cuda/FILE (runtime/comm.c and runtime/cuda/comm.c both exist). */
static inline void cg_cu_error_mpi(int code, const char *file, int line, const char *call)
{
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(code, text, &len) != MPI_SUCCESS) {
        snprintf(text, sizeof(text), "MPI error code %d", code);
    }
    cg_cu_error_at(file, line, call, text);
}

#undef CG_CHECK_MPI
#define CG_CHECK_MPI(call)                                             \
    do {                                                               \
        int cg_mpi_rc_ = (call);                                       \
        if (cg_mpi_rc_ != MPI_SUCCESS) {                               \
            cg_cu_error_mpi(cg_mpi_rc_, __FILE__, __LINE__, #call);    \
            rc = cg_mpi_rc_;                                           \
            goto out;                                                  \
        }                                                              \
    } while (0)

/* Checks a CUDA runtime call: on failure, records it, sets the enclosing
 * function's `rc` to MPI_ERR_OTHER and jumps to its `out:` label. */
#define CG_CHECK_CUDA(call)                                            \
    do {                                                               \
        cudaError_t cg_cu_e_ = (call);                                 \
        if (cg_cu_e_ != cudaSuccess) {                                 \
            cg_cu_error_cuda(cg_cu_e_, __FILE__, __LINE__, #call);     \
            rc = MPI_ERR_OTHER;                                        \
            goto out;                                                  \
        }                                                              \
    } while (0)

#ifndef CG_CUDA_NO_NCCL
/* The same for NCCL: the message is ncclGetErrorString, then
 * ncclGetLastError when it says more. */
static inline void cg_cu_error_nccl(ncclResult_t r, const char *file, int line, const char *call)
{
    char msg[400];
    const char *last = ncclGetLastError(NULL);
    if ((last != NULL) && (last[0] != '\0')) {
        snprintf(msg, sizeof(msg), "%s (%s)", ncclGetErrorString(r), last);
    } else {
        snprintf(msg, sizeof(msg), "%s", ncclGetErrorString(r));
    }
    cg_cu_error_at(file, line, call, msg);
}

#define CG_CHECK_NCCL(call)                                            \
    do {                                                               \
        ncclResult_t cg_cu_r_ = (call);                                \
        if (cg_cu_r_ != ncclSuccess) {                                 \
            cg_cu_error_nccl(cg_cu_r_, __FILE__, __LINE__, #call);     \
            rc = MPI_ERR_OTHER;                                        \
            goto out;                                                  \
        }                                                              \
    } while (0)
#endif

/* Element runs of a block range, scaled to bytes. */
static inline int cg_cu_range_bytes(const struct cg_cu_call *c, const struct cg_buf *b, long first,
                                    long n, struct cg_seg seg[2], int *nseg, size_t *bytes)
{
    int rc = cg_range_segs(b, first, n, seg, nseg);
    *bytes = 0;
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    for (int i = 0; i < *nseg; i++) {
        seg[i].off *= c->esize;
        seg[i].len *= c->esize;
        *bytes += seg[i].len;
    }
    return MPI_SUCCESS;
}

/* Two runs lists of equal total length cut each other into at most three
 * pieces: piece k is len[k] units at a-offset aoff[k] and b-offset boff[k].
 * Returns the number of pieces. */
struct cg_cu_pieces {
    size_t aoff[3], boff[3], len[3];
};

static inline int cg_cu_cut(const struct cg_seg *a, int na, const struct cg_seg *b, int nb,
                            struct cg_cu_pieces *out)
{
    int ia = 0, ib = 0, k = 0;
    size_t ua = 0, ub = 0; /* units of a[ia], b[ib] already used */

    while ((ia < na) && (ib < nb) && (k < 3)) {
        size_t la = a[ia].len - ua, lb = b[ib].len - ub;
        size_t take = (la < lb) ? la : lb;
        if (take > 0) {
            out->aoff[k] = a[ia].off + ua;
            out->boff[k] = b[ib].off + ub;
            out->len[k] = take;
            k++;
        }
        ua += take;
        ub += take;
        if (ua == a[ia].len) {
            ia++;
            ua = 0;
        }
        if (ub == b[ib].len) {
            ib++;
            ub = 0;
        }
    }
    return k;
}

/* Every rank learns whether any rank failed (comm.c): MPI_SUCCESS when none
 * did; this rank's own code (its message stays) when it failed; otherwise
 * MPI_ERR_OTHER, with a message saying that another rank failed. */
int cg_cu_agree(MPI_Comm comm, int local_rc);

/* Transports (ipc.c, nccl.c): the current exchange's posts are in
 * c->cc->posts[0 .. c->nposts). */
int cg_cu_ipc_setup(struct cg_cu_comm *cc);
void cg_cu_ipc_teardown(struct cg_cu_comm *cc);
int cg_cu_ipc_post(struct cg_cu_call *c, struct cg_cu_post *post);
int cg_cu_ipc_wait(struct cg_cu_call *c);
void cg_cu_ipc_abandon(struct cg_cu_call *c);

#ifndef CG_CUDA_NO_NCCL
int cg_cu_nccl_setup(struct cg_cu_comm *cc);
void cg_cu_nccl_teardown(struct cg_cu_comm *cc);
int cg_cu_nccl_wait(struct cg_cu_call *c);
#endif

/* Sets the thread's current tag stream (tag.c). */
void cg_cu_tag_set_stream(cudaStream_t stream, int active);

#endif
