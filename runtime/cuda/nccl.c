/* nccl.c - the NCCL transport: each exchange step is one NCCL group of
 * ncclSend / ncclRecv on the call's stream.
 *
 * NCCL moves contiguous bytes (ncclInt8 counts are size_t, so no splitting
 * at INT_MAX), and a send must match its receive in size. A block range that
 * wraps is two runs, and the sender's wrap point is not the receiver's, so
 * a wrapped range is staged: a wrapped send is packed into a device staging
 * buffer before the group, a wrapped receive lands in it and is unpacked
 * after. Ranges that do not wrap go directly. Every message is then one
 * contiguous range of the same length on both sides.
 *
 * NCCL orders the step's transfers itself: ncclGroupEnd enqueues them on the
 * stream, and later work on the stream runs after they complete, so a block
 * is overwritten only after it has been sent.
 *
 * NCCL refuses a communicator with two ranks on one GPU ("Duplicate GPU
 * detected"); set-up checks for that first and says so, so the transport is
 * for one rank per GPU (use IPC for processes sharing a GPU).
 */
#include "cg_cuda_internal.h"

#ifndef CG_CUDA_NO_NCCL

#include <stdlib.h>

struct cg_cu_gpu_id {
    char host[MPI_MAX_PROCESSOR_NAME];
    char bus[32];
};

/* Every rank learns whether two ranks share a GPU. */
static int cg_cu_nccl_check_gpus(struct cg_cu_comm *cc)
{
    int rc = MPI_SUCCESS, lrc = MPI_SUCCESS;
    struct cg_cu_gpu_id mine;
    struct cg_cu_gpu_id *all = NULL;
    int len = 0;
    cudaError_t e = cudaSuccess;

    memset(&mine, 0, sizeof(mine));
    CG_CHECK_MPI(MPI_Get_processor_name(mine.host, &len));
    e = cudaDeviceGetPCIBusId(mine.bus, (int)sizeof(mine.bus), cc->device);
    if (e != cudaSuccess) {
        cg_cu_error_cuda(e, __FILE__, __LINE__, "cudaDeviceGetPCIBusId");
        lrc = MPI_ERR_OTHER;
    }
    all = calloc((size_t)cc->p, sizeof(*all));
    if ((all == NULL) && (lrc == MPI_SUCCESS)) {
        cg_set_error("collgen: out of memory for %d GPU ids", cc->p);
        lrc = MPI_ERR_NO_MEM;
    }
    CG_CHECK(cg_cu_agree(cc->comm, lrc));
    CG_CHECK_MPI(MPI_Allgather(&mine, (int)sizeof(mine), MPI_BYTE, all, (int)sizeof(mine),
                               MPI_BYTE, cc->comm));
    for (int a = 0; a < cc->p; a++) {
        for (int b = a + 1; b < cc->p; b++) {
            if ((strcmp(all[a].host, all[b].host) == 0) && (strcmp(all[a].bus, all[b].bus) == 0)) {
                cg_set_error("rank %d: collgen: the NCCL transport needs one rank per GPU, and "
                             "ranks %d and %d share GPU %s on %s (NCCL refuses it: \"Duplicate "
                             "GPU detected\"); processes of one node that share a GPU use the "
                             "IPC transport (CG_CUDA_TRANSPORT=ipc, or unset)",
                             cg_cu_world_rank(), a, b, all[a].bus, all[a].host);
                rc = MPI_ERR_OTHER;
                goto out;
            }
        }
    }
out:
    free(all);
    return rc;
}

int cg_cu_nccl_setup(struct cg_cu_comm *cc)
{
    int rc = MPI_SUCCESS, lrc = MPI_SUCCESS;
    struct {
        int rc;
        ncclUniqueId id;
    } boot;

    CG_CHECK(cg_cu_nccl_check_gpus(cc));
    memset(&boot, 0, sizeof(boot));
    if (cc->rank == 0) {
        ncclResult_t r = ncclGetUniqueId(&boot.id);
        if (r != ncclSuccess) {
            cg_cu_error_nccl(r, __FILE__, __LINE__, "ncclGetUniqueId");
            boot.rc = MPI_ERR_OTHER;
        }
    }
    CG_CHECK_MPI(MPI_Bcast(&boot, (int)sizeof(boot), MPI_BYTE, 0, cc->comm));
    if ((boot.rc != MPI_SUCCESS) && (cc->rank != 0)) {
        cg_set_error("rank %d: collgen: rank 0 could not make an NCCL id (its cg_last_error() "
                     "says why)", cg_cu_world_rank());
    }
    if (boot.rc != MPI_SUCCESS) {
        rc = MPI_ERR_OTHER;
        goto out;
    }
    {
        ncclResult_t r = ncclCommInitRank(&cc->nccl, cc->p, boot.id, cc->rank);
        if (r != ncclSuccess) {
            cg_cu_error_nccl(r, __FILE__, __LINE__, "ncclCommInitRank");
            cc->nccl = NULL;
            lrc = MPI_ERR_OTHER;
        }
    }
    CG_CHECK(cg_cu_agree(cc->comm, lrc));
out:
    return rc;
}

void cg_cu_nccl_teardown(struct cg_cu_comm *cc)
{
    if (cc->nccl != NULL) {
        (void)ncclCommDestroy(cc->nccl);
        cc->nccl = NULL;
    }
}

/* Staging is carved in 256-byte aligned pieces. */
static size_t cg_cu_align256(size_t x)
{
    return (x + 255) & ~(size_t)255;
}

int cg_cu_nccl_wait(struct cg_cu_call *c)
{
    int rc = MPI_SUCCESS;
    struct cg_cu_comm *cc = c->cc;
    size_t need = 0;
    int in_group = 0;

    for (int i = 0; i < c->nposts; i++) {
        struct cg_cu_post *post = &cc->posts[i];
        if (post->nseg == 2) {
            post->stage_off = need;
            need += cg_cu_align256(post->bytes);
        }
    }
    if (need > cc->stage_bytes) {
        /* cudaFree waits for the device: no transfer still uses the old one. */
        if (cc->stage != NULL) {
            void *old = cc->stage;
            cc->stage = NULL;
            cc->stage_bytes = 0;
            CG_CHECK_CUDA(cudaFree(old));
        }
        void *mem = NULL;
        CG_CHECK_CUDA(cudaMalloc(&mem, need));
        cc->stage = mem;
        cc->stage_bytes = need;
    }
    for (int i = 0; i < c->nposts; i++) {
        struct cg_cu_post *post = &cc->posts[i];
        if (!post->is_recv && (post->nseg == 2)) {
            char *st = (char *)cc->stage + post->stage_off;
            CG_CHECK_CUDA(cudaMemcpyAsync(st, post->base + post->seg[0].off, post->seg[0].len,
                                          cudaMemcpyDeviceToDevice, c->stream));
            CG_CHECK_CUDA(cudaMemcpyAsync(st + post->seg[0].len, post->base + post->seg[1].off,
                                          post->seg[1].len, cudaMemcpyDeviceToDevice, c->stream));
        }
    }
    CG_CHECK_NCCL(ncclGroupStart());
    in_group = 1;
    for (int i = 0; i < c->nposts; i++) {
        struct cg_cu_post *post = &cc->posts[i];
        char *ptr = (post->nseg == 2) ? ((char *)cc->stage + post->stage_off)
                                      : (post->base + post->seg[0].off);
        if (post->is_recv) {
            CG_CHECK_NCCL(ncclRecv(ptr, post->bytes, ncclInt8, post->peer, cc->nccl, c->stream));
        } else {
            CG_CHECK_NCCL(ncclSend(ptr, post->bytes, ncclInt8, post->peer, cc->nccl, c->stream));
        }
    }
    in_group = 0;
    CG_CHECK_NCCL(ncclGroupEnd());
    for (int i = 0; i < c->nposts; i++) {
        struct cg_cu_post *post = &cc->posts[i];
        if (post->is_recv && (post->nseg == 2)) {
            const char *st = (const char *)cc->stage + post->stage_off;
            CG_CHECK_CUDA(cudaMemcpyAsync(post->base + post->seg[0].off, st, post->seg[0].len,
                                          cudaMemcpyDeviceToDevice, c->stream));
            CG_CHECK_CUDA(cudaMemcpyAsync(post->base + post->seg[1].off, st + post->seg[0].len,
                                          post->seg[1].len, cudaMemcpyDeviceToDevice, c->stream));
        }
    }
out:
    if (in_group) {
        (void)ncclGroupEnd(); /* a group left open would swallow the next call's operations */
    }
    return rc;
}

#else

typedef int cg_cu_nccl_absent; /* ISO C forbids an empty translation unit */

#endif
