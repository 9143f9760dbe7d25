/* ipc.c - the CUDA IPC transport: exchanges between processes of one node,
 * several of which may share one GPU.
 *
 * Why this protocol (pull, with a descriptor and a done message per send,
 * and interprocess events):
 *
 * The schedule's semantics are those of an MPI exchange: in a step every
 * rank reads its peers' send blocks as they were when the step began, and a
 * rank may overwrite a block only after every peer that reads it has read
 * it. The verifier guarantees that no receive of a step lands in a block
 * that a send of the same step reads, but a later step (or a reduce or copy
 * after the exchange) may overwrite a block a peer is still copying, so a
 * step must end with completion signalling.
 *
 * A receiver does not know which buffer and offset its peer sends from (a
 * ring sends `out` and receives into `tmp`), so each send tells its
 * receiver, in an MPI message on the private duplicate (tag 2 * tag): the
 * allocation's base, size, buffer id, IPC handle, and the byte runs. The
 * receiver opens the handle on first use and keeps it open, keyed by (peer,
 * buffer id, base, size), so a buffer is opened once across calls; the
 * handle travels with every descriptor (64 bytes) instead of in a per-call
 * MPI_Allgather of registrations, which would cost a collective per call and
 * could not see a buffer freed and reallocated at the same address (the
 * buffer id, unique per allocation in a process, does).
 *
 * Data moves as cudaMemcpyAsync device to device on the receiver's stream
 * (pull): the receiver copies from the sender's allocation into its own
 * buffer. Ordering stays on the GPUs, through events created with
 * cudaEventInterprocess | cudaEventDisableTiming and exported once per
 * communicator (their handles are MPI_Allgather'ed when the context is
 * made):
 *
 *   sender s, first send of a step:  cudaEventRecord(ready_s, stream_s),
 *                                    then MPI_Isend(descriptor) to r
 *   receiver r, for that descriptor: MPI_Wait, cudaStreamWaitEvent(stream_r,
 *                                    ready_s), cudaMemcpyAsync pieces;
 *                                    after all its receives:
 *                                    cudaEventRecord(done_{r,s}, stream_r),
 *                                    MPI_Isend(done) to s
 *   sender s, at the end of the step: MPI_Wait(done from r),
 *                                    cudaStreamWaitEvent(stream_s, done_{r,s})
 *
 * So r's copies start after everything s enqueued before the step, and
 * nothing s enqueues after the step runs before r's copies have finished.
 * The MPI messages order the host calls: an event is waited on only after
 * the record that the wait must see, because a process waits on a peer's
 * event after a message sent after that record. And an event is never
 * recorded again while a peer may still be about to wait on the previous
 * record: ready_s is recorded again only in a later step of s, which s
 * enters only after every receiver's done message, sent after its wait; and
 * done events are one per (receiver, sender) pair, recorded again by r only
 * when it next pulls from s, i.e. after s's next descriptor, which s sends
 * only after its wait on done_{r,s}. (One done event per receiver would not
 * do: a receiver can run ahead to a step with other peers and record it
 * again before a slow sender has waited on it, and the sender would then
 * wait on later work, which can close a cycle between the GPUs' streams.)
 *
 * Nothing here waits for a GPU on the host (no cudaStreamSynchronize), except
 * when a cached peer buffer is closed (eviction from the cache, or a stale
 * entry whose allocation was freed), which synchronises the device first.
 * The alternative, a host barrier around each step after a stream
 * synchronisation, would put a host round trip in every step.
 *
 * Sends and receives of a rank to itself use the same messages (MPI to self)
 * and no events: the copy is on the rank's own stream.
 */
#include "cg_cuda_internal.h"

#include <cuda.h> /* types of the driver entry point (no libcuda link) */
#include <stdlib.h>

/* Why through cudaGetDriverEntryPointByVersion: the allocation's base, size
 * and buffer id of a device pointer need the driver API, and linking libcuda
 * would stop every program from starting on a machine without a driver,
 * where the tests must run and skip. */
typedef CUresult (*cg_cu_pfn_attrs)(unsigned int n, CUpointer_attribute *attrs, void **data,
                                    CUdeviceptr ptr);
static cg_cu_pfn_attrs cg_cu_pointer_attrs;

static int cg_cu_driver_init(void)
{
    int rc = MPI_SUCCESS;
    void *fn = NULL;
    enum cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;

    if (cg_cu_pointer_attrs != NULL) {
        return MPI_SUCCESS;
    }
    CG_CHECK_CUDA(cudaGetDriverEntryPointByVersion("cuPointerGetAttributes", &fn, 7000,
                                                   cudaEnableDefault, &q));
    if ((q != cudaDriverEntryPointSuccess) || (fn == NULL)) {
        cg_set_error("rank %d: collgen: the driver has no cuPointerGetAttributes (query result "
                     "%d)", cg_cu_world_rank(), (int)q);
        rc = MPI_ERR_OTHER;
        goto out;
    }
    cg_cu_pointer_attrs = (cg_cu_pfn_attrs)fn;
out:
    return rc;
}

/* ---- set-up and teardown ------------------------------------------------- */

#define CG_CU_EV_FLAGS (cudaEventInterprocess | cudaEventDisableTiming)

int cg_cu_ipc_setup(struct cg_cu_comm *cc)
{
    int rc = MPI_SUCCESS, lrc = MPI_SUCCESS;
    const int p = cc->p;
    const size_t per_rank = (size_t)(p + 1) * sizeof(cudaIpcEventHandle_t);
    cudaIpcEventHandle_t *mine = NULL;
    cudaError_t e = cudaSuccess;

    cc->done = calloc((size_t)p, sizeof(*cc->done));
    cc->peer_ready = calloc((size_t)p, sizeof(*cc->peer_ready));
    cc->peer_done = calloc((size_t)p, sizeof(*cc->peer_done));
    cc->flags = calloc((size_t)p, 1);
    cc->ev_handles = calloc((size_t)p, per_rank);
    mine = calloc(1, per_rank);
    if ((cc->done == NULL) || (cc->peer_ready == NULL) || (cc->peer_done == NULL) ||
        (cc->flags == NULL) || (cc->ev_handles == NULL) || (mine == NULL)) {
        cg_set_error("collgen: out of memory for the IPC transport of %d ranks", p);
        lrc = MPI_ERR_NO_MEM;
    }
    if ((lrc == MPI_SUCCESS) && (p > 1)) {
        lrc = cg_cu_driver_init();
    }
    /* Why only for p > 1: with one rank every exchange is with itself and
     * needs no event. */
    if ((lrc == MPI_SUCCESS) && (p > 1)) {
        e = cudaEventCreateWithFlags(&cc->ready, CG_CU_EV_FLAGS);
        if (e == cudaSuccess) {
            e = cudaIpcGetEventHandle(&mine[0], cc->ready);
        }
        for (int q = 0; (q < p) && (e == cudaSuccess); q++) {
            if (q == cc->rank) {
                continue;
            }
            e = cudaEventCreateWithFlags(&cc->done[q], CG_CU_EV_FLAGS);
            if (e == cudaSuccess) {
                e = cudaIpcGetEventHandle(&mine[1 + q], cc->done[q]);
            }
        }
        if (e != cudaSuccess) {
            cg_cu_error_cuda(e, __FILE__, __LINE__, "cudaEventCreateWithFlags/cudaIpcGetEventHandle");
            lrc = MPI_ERR_OTHER;
        }
    }
    CG_CHECK(cg_cu_agree(cc->comm, lrc));
    if (p > 1) {
        CG_CHECK_MPI(MPI_Allgather(mine, (int)per_rank, MPI_BYTE, cc->ev_handles, (int)per_rank,
                                   MPI_BYTE, cc->comm));
    }
out:
    free(mine);
    return rc;
}

void cg_cu_ipc_teardown(struct cg_cu_comm *cc)
{
    for (int i = 0; i < CG_CU_IMPORT_CAP; i++) {
        if (cc->imports[i].ptr != NULL) {
            (void)cudaIpcCloseMemHandle(cc->imports[i].ptr);
            cc->imports[i].ptr = NULL;
        }
    }
    for (int q = 0; q < cc->p; q++) {
        if ((cc->peer_ready != NULL) && (cc->peer_ready[q] != NULL)) {
            (void)cudaEventDestroy(cc->peer_ready[q]);
        }
        if ((cc->peer_done != NULL) && (cc->peer_done[q] != NULL)) {
            (void)cudaEventDestroy(cc->peer_done[q]);
        }
        if ((cc->done != NULL) && (cc->done[q] != NULL)) {
            (void)cudaEventDestroy(cc->done[q]);
        }
    }
    if (cc->ready != NULL) {
        (void)cudaEventDestroy(cc->ready);
    }
    free(cc->done);
    free(cc->peer_ready);
    free(cc->peer_done);
    free(cc->flags);
    free(cc->ev_handles);
}

/* Peer q's ready event, or its done event for this rank, opened on first use. */
static int cg_cu_peer_event(struct cg_cu_comm *cc, int q, int which_done, cudaEvent_t *ev)
{
    int rc = MPI_SUCCESS;
    cudaEvent_t *slot = which_done ? &cc->peer_done[q] : &cc->peer_ready[q];
    const cudaIpcEventHandle_t *h =
        &cc->ev_handles[(size_t)q * (size_t)(cc->p + 1) + (which_done ? (size_t)(1 + cc->rank) : 0)];

    if (*slot == NULL) {
        CG_CHECK_CUDA(cudaIpcOpenEventHandle(slot, *h));
    }
    *ev = *slot;
out:
    return rc;
}

/* ---- buffers: own exports and peers' imports ------------------------------ */

static int cg_cu_span_overlap(uint64_t a, uint64_t alen, uint64_t b, uint64_t blen)
{
    return (a < b + blen) && (b < a + alen);
}

/* The allocation holding `ptr`, with its IPC handle (cached). */
static int cg_cu_export_find(struct cg_cu_comm *cc, const char *ptr, struct cg_cu_export **out)
{
    int rc = MPI_SUCCESS;
    CUpointer_attribute attrs[4] = { CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
                                     CU_POINTER_ATTRIBUTE_RANGE_SIZE,
                                     CU_POINTER_ATTRIBUTE_BUFFER_ID,
                                     CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE };
    CUdeviceptr start = 0;
    size_t size = 0;
    unsigned long long id = 0;
    unsigned long long capable = 0; /* a boolean of the driver's width, zero-extended */
    void *data[4] = { &start, &size, &id, &capable };
    struct cg_cu_export *hit = NULL, *victim = NULL;

    CG_CHECK(cg_cu_driver_init());
    CUresult r = cg_cu_pointer_attrs(4, attrs, data, (CUdeviceptr)(uintptr_t)ptr);
    if ((r != CUDA_SUCCESS) || (start == 0) || !capable) {
        cg_set_error("rank %d: collgen: the IPC transport sends from cudaMalloc memory; %p is not "
                     "such memory (cuPointerGetAttributes: %d, start %#llx, IPC-capable %llu)",
                     cg_cu_world_rank(), (const void *)ptr, (int)r, (unsigned long long)start,
                     capable);
        rc = MPI_ERR_BUFFER;
        goto out;
    }
    for (int i = 0; i < CG_CU_EXPORT_CAP; i++) {
        struct cg_cu_export *x = &cc->exports[i];
        if (x->used == 0) {
            continue;
        }
        if ((x->buffer_id == id) && (x->base == start) && (x->size == size)) {
            hit = x;
            break;
        }
        if (cg_cu_span_overlap(x->base, x->size, start, size)) {
            x->used = 0; /* freed and reallocated since: stale */
        }
    }
    if (hit == NULL) {
        for (int i = 0; i < CG_CU_EXPORT_CAP; i++) {
            struct cg_cu_export *x = &cc->exports[i];
            if ((victim == NULL) || (x->used < victim->used)) {
                victim = x;
            }
        }
        cudaIpcMemHandle_t h;
        CG_CHECK_CUDA(cudaIpcGetMemHandle(&h, (void *)(uintptr_t)start));
        victim->buffer_id = id;
        victim->base = start;
        victim->size = size;
        victim->handle = h;
        hit = victim;
    }
    hit->used = ++cc->clock;
    *out = hit;
out:
    return rc;
}

/* Peer q's allocation described by d, opened here (cached). */
static int cg_cu_import_open(struct cg_cu_comm *cc, int q, const struct cg_cu_desc *d, char **ptr)
{
    int rc = MPI_SUCCESS;
    int synced = 0;
    struct cg_cu_import *hit = NULL, *victim = NULL;

    for (int i = 0; i < CG_CU_IMPORT_CAP; i++) {
        struct cg_cu_import *m = &cc->imports[i];
        if ((m->ptr == NULL) || (m->peer != q)) {
            continue;
        }
        if ((m->buffer_id == d->buffer_id) && (m->base == d->base) && (m->size == d->size)) {
            hit = m;
            break;
        }
        if (cg_cu_span_overlap(m->base, m->size, d->base, d->size)) {
            /* The peer freed this allocation: close it, so that its memory
             * is released. Copies from it may still be queued on a stream of
             * this process, hence the synchronisation (rare). */
            if (!synced) {
                CG_CHECK_CUDA(cudaDeviceSynchronize());
                synced = 1;
            }
            CG_CHECK_CUDA(cudaIpcCloseMemHandle(m->ptr));
            m->ptr = NULL;
        }
    }
    if (hit == NULL) {
        for (int i = 0; i < CG_CU_IMPORT_CAP; i++) {
            struct cg_cu_import *m = &cc->imports[i];
            if (m->ptr == NULL) {
                victim = m;
                break;
            }
            if ((victim == NULL) || (m->used < victim->used)) {
                victim = m;
            }
        }
        if (victim->ptr != NULL) {
            if (!synced) {
                CG_CHECK_CUDA(cudaDeviceSynchronize());
                synced = 1;
            }
            CG_CHECK_CUDA(cudaIpcCloseMemHandle(victim->ptr));
            victim->ptr = NULL;
        }
        void *mem = NULL;
        CG_CHECK_CUDA(cudaIpcOpenMemHandle(&mem, d->handle, cudaIpcMemLazyEnablePeerAccess));
        victim->peer = q;
        victim->buffer_id = d->buffer_id;
        victim->base = d->base;
        victim->size = d->size;
        victim->ptr = mem;
        hit = victim;
    }
    hit->used = ++cc->clock;
    *ptr = hit->ptr;
out:
    return rc;
}

/* ---- a step --------------------------------------------------------------- */

int cg_cu_ipc_post(struct cg_cu_call *c, struct cg_cu_post *post)
{
    int rc = MPI_SUCCESS;
    struct cg_cu_comm *cc = c->cc;
    const int desc_tag = 2 * c->tag, done_tag = 2 * c->tag + 1;
    struct cg_cu_desc *d = &post->desc;

    if (post->is_recv) {
        CG_CHECK_MPI(MPI_Irecv(d, (int)sizeof(*d), MPI_BYTE, post->peer, desc_tag, c->comm,
                               &post->req));
        goto out;
    }
    memset(d, 0, sizeof(*d));
    d->nseg = post->nseg;
    if (post->peer == c->rank) {
        d->base = (uint64_t)(uintptr_t)post->base;
        for (int i = 0; i < post->nseg; i++) {
            d->off[i] = post->seg[i].off;
            d->len[i] = post->seg[i].len;
        }
    } else {
        struct cg_cu_export *x = NULL;
        CG_CHECK(cg_cu_export_find(cc, post->base, &x));
        uint64_t delta = (uint64_t)(uintptr_t)post->base - x->base;
        d->base = x->base;
        d->size = x->size;
        d->buffer_id = x->buffer_id;
        d->handle = x->handle;
        for (int i = 0; i < post->nseg; i++) {
            d->off[i] = delta + post->seg[i].off;
            d->len[i] = post->seg[i].len;
            if (d->off[i] + d->len[i] > d->size) {
                cg_set_error("rank %d: collgen: a send of %zu bytes at %p runs past the end of "
                             "its allocation (%llu bytes at %#llx)", cg_cu_world_rank(),
                             (size_t)d->len[i], (const void *)(post->base + post->seg[i].off),
                             (unsigned long long)d->size, (unsigned long long)d->base);
                rc = MPI_ERR_BUFFER;
                goto out;
            }
        }
        /* The step's first send to another rank marks the data ready. */
        int first = 1;
        for (int i = 0; i < c->nposts - 1; i++) {
            if (!cc->posts[i].is_recv && (cc->posts[i].peer != c->rank)) {
                first = 0;
                break;
            }
        }
        if (first) {
            CG_CHECK_CUDA(cudaEventRecord(cc->ready, c->stream));
        }
    }
    CG_CHECK_MPI(MPI_Isend(d, (int)sizeof(*d), MPI_BYTE, post->peer, desc_tag, c->comm,
                           &post->req));
    CG_CHECK_MPI(MPI_Irecv(&post->done_msg, 1, MPI_INT, post->peer, done_tag, c->comm,
                           &post->done_req));
out:
    return rc;
}

#define CG_CU_WAITED_READY 1 /* flags[q]: this step's stream waits on q's ready */
#define CG_CU_PULLED 2       /* flags[q]: pulled from q in this step */
#define CG_CU_WAITED_DONE 4  /* flags[q]: this step's stream waits on q's done */

int cg_cu_ipc_wait(struct cg_cu_call *c)
{
    int rc = MPI_SUCCESS;
    struct cg_cu_comm *cc = c->cc;
    const int done_tag = 2 * c->tag + 1;

    memset(cc->flags, 0, (size_t)c->p);

    /* Receives, in posting order: the descriptor, the sender's ready event,
     * then the copies. */
    for (int i = 0; i < c->nposts; i++) {
        struct cg_cu_post *post = &cc->posts[i];
        if (!post->is_recv) {
            continue;
        }
        CG_CHECK_MPI(MPI_Wait(&post->req, MPI_STATUS_IGNORE));
        const struct cg_cu_desc *d = &post->desc;
        const int q = post->peer;
        size_t total = 0;
        struct cg_seg src[2];
        int nsrc = ((d->nseg >= 1) && (d->nseg <= 2)) ? d->nseg : 0;
        for (int k = 0; k < nsrc; k++) {
            src[k].off = d->off[k];
            src[k].len = d->len[k];
            total += d->len[k];
        }
        if ((nsrc == 0) || (total != post->bytes)) {
            cg_set_error("rank %d: collgen: receives %zu bytes from rank %d, which sends %zu "
                         "(%d runs): sender and receiver disagree on the blocks",
                         cg_cu_world_rank(), post->bytes, q, total, (int)d->nseg);
            rc = MPI_ERR_TRUNCATE;
            goto out;
        }
        char *from = NULL;
        if (q == c->rank) {
            from = (char *)(uintptr_t)d->base;
        } else {
            CG_CHECK(cg_cu_import_open(cc, q, d, &from)); /* the allocation's base, mapped */
            if (!(cc->flags[q] & CG_CU_WAITED_READY)) {
                cudaEvent_t ev = NULL;
                CG_CHECK(cg_cu_peer_event(cc, q, 0, &ev));
                CG_CHECK_CUDA(cudaStreamWaitEvent(c->stream, ev, 0));
                cc->flags[q] |= CG_CU_WAITED_READY;
            }
            cc->flags[q] |= CG_CU_PULLED;
        }
        struct cg_cu_pieces pc;
        int np = cg_cu_cut(src, nsrc, post->seg, post->nseg, &pc);
        for (int k = 0; k < np; k++) {
            CG_CHECK_CUDA(cudaMemcpyAsync(post->base + pc.boff[k], from + pc.aoff[k], pc.len[k],
                                          cudaMemcpyDeviceToDevice, c->stream));
        }
    }

    /* Tell each sender this rank pulled from that its copies are enqueued
     * behind done_{rank,q}; one done message per descriptor. */
    for (int q = 0; q < c->p; q++) {
        if (cc->flags[q] & CG_CU_PULLED) {
            CG_CHECK_CUDA(cudaEventRecord(cc->done[q], c->stream));
        }
    }
    for (int i = 0; i < c->nposts; i++) {
        struct cg_cu_post *post = &cc->posts[i];
        if (post->is_recv) {
            post->done_msg = 1;
            CG_CHECK_MPI(MPI_Isend(&post->done_msg, 1, MPI_INT, post->peer, done_tag, c->comm,
                                   &post->done_req));
        }
    }

    /* Sends: nothing after this step may run before the receivers' copies. */
    for (int i = 0; i < c->nposts; i++) {
        struct cg_cu_post *post = &cc->posts[i];
        if (post->is_recv) {
            continue;
        }
        CG_CHECK_MPI(MPI_Wait(&post->done_req, MPI_STATUS_IGNORE));
        const int q = post->peer;
        if ((q != c->rank) && !(cc->flags[q] & CG_CU_WAITED_DONE)) {
            cudaEvent_t ev = NULL;
            CG_CHECK(cg_cu_peer_event(cc, q, 1, &ev));
            CG_CHECK_CUDA(cudaStreamWaitEvent(c->stream, ev, 0));
            cc->flags[q] |= CG_CU_WAITED_DONE;
        }
    }

    /* The messages this rank sent (descriptors, done) complete. */
    for (int i = 0; i < c->nposts; i++) {
        struct cg_cu_post *post = &cc->posts[i];
        MPI_Request *r = post->is_recv ? &post->done_req : &post->req;
        CG_CHECK_MPI(MPI_Wait(r, MPI_STATUS_IGNORE));
    }
out:
    return rc;
}

/* Why: as runtime/comm.c's cg_call_abandon, a receive left posted would
 * match a later call's message with the same tag, so receives are cancelled
 * and completed, and sends are released. A peer of a failed step may be left
 * waiting for this rank's messages; as with the MPI backend, a failure on
 * one rank of a collective is not recoverable on the others. */
void cg_cu_ipc_abandon(struct cg_cu_call *c)
{
    for (int i = 0; i < c->nposts; i++) {
        struct cg_cu_post *post = &c->cc->posts[i];
        MPI_Request *recv_req = post->is_recv ? &post->req : &post->done_req;
        MPI_Request *send_req = post->is_recv ? &post->done_req : &post->req;
        if (*recv_req != MPI_REQUEST_NULL) {
            (void)MPI_Cancel(recv_req);
            (void)MPI_Wait(recv_req, MPI_STATUS_IGNORE);
        }
        if (*send_req != MPI_REQUEST_NULL) {
            (void)MPI_Request_free(send_req);
        }
    }
}
