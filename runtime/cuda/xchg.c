/* xchg.c - exchanges on device buffers, and the local block operations.
 *
 * cg_cu_xchg_begin / cg_cu_send / cg_cu_recv / cg_cu_xchg_wait have the shape
 * of runtime/xchg.c's: a step posts every send and receive, then waits. A
 * block range becomes at most two byte runs (two when it wraps); a range of
 * 0 bytes posts nothing, on both sides (sender and receiver compute the same
 * length). What a post does depends on the transport: under IPC it exchanges
 * a descriptor at once (ipc.c), under NCCL everything happens in one group at
 * the wait (nccl.c).
 */
#include "cg_cuda_internal.h"

#include <stdlib.h>

/* Why this bound: the IPC transport tags a step's two kinds of message
 * 2 * tag and 2 * tag + 1, and MPI guarantees tags up to 32767. */
#define CG_CU_MAX_TAG 16383

int cg_cu_xchg_begin(struct cg_cu_call *c, int tag)
{
    if ((tag < 0) || (tag > CG_CU_MAX_TAG)) {
        cg_set_error("collgen: exchange tag %d out of range 0..%d", tag, CG_CU_MAX_TAG);
        return MPI_ERR_TAG;
    }
    c->tag = tag;
    c->nposts = 0;
    return MPI_SUCCESS;
}

static int cg_cu_posts_reserve(struct cg_cu_call *c)
{
    struct cg_cu_comm *cc = c->cc;

    if (c->nposts < cc->posts_cap) {
        return MPI_SUCCESS;
    }
    int cap = (cc->posts_cap > 0) ? (2 * cc->posts_cap) : 16;
    struct cg_cu_post *posts = realloc(cc->posts, (size_t)cap * sizeof(*posts));
    if (posts == NULL) {
        cg_set_error("collgen: out of memory for %d exchange posts", cap);
        return MPI_ERR_NO_MEM;
    }
    cc->posts = posts;
    cc->posts_cap = cap;
    return MPI_SUCCESS;
}

static int cg_cu_xchg_post(struct cg_cu_call *c, int peer, const struct cg_buf *b, long first,
                           long n, int is_recv)
{
    int rc = MPI_SUCCESS;
    struct cg_seg seg[2];
    int nseg = 0;
    size_t bytes = 0;

    if ((peer < 0) || (peer >= c->p)) {
        cg_set_error("collgen: %s rank %d of %d", is_recv ? "receive from" : "send to", peer,
                     c->p);
        rc = MPI_ERR_RANK;
        goto out;
    }
    CG_CHECK(cg_cu_range_bytes(c, b, first, n, seg, &nseg, &bytes));
    if (bytes == 0) {
        goto out;
    }
    CG_CHECK(cg_cu_posts_reserve(c));
    struct cg_cu_post *post = &c->cc->posts[c->nposts];
    memset(post, 0, sizeof(*post));
    post->peer = peer;
    post->is_recv = is_recv;
    post->base = b->base;
    post->seg[0] = seg[0];
    post->seg[1] = seg[1];
    post->nseg = nseg;
    post->bytes = bytes;
    post->req = MPI_REQUEST_NULL;
    post->done_req = MPI_REQUEST_NULL;
    c->nposts++;
    if (c->transport == CG_CU_TRANSPORT_IPC) {
        CG_CHECK(cg_cu_ipc_post(c, post));
    }
out:
    return rc;
}

int cg_cu_send(struct cg_cu_call *c, int to, const struct cg_buf *b, long first, long n)
{
    return cg_cu_xchg_post(c, to, b, first, n, 0);
}

int cg_cu_recv(struct cg_cu_call *c, int from, const struct cg_buf *b, long first, long n)
{
    return cg_cu_xchg_post(c, from, b, first, n, 1);
}

int cg_cu_xchg_wait(struct cg_cu_call *c)
{
    int rc = MPI_SUCCESS;

    if (c->nposts == 0) {
        return MPI_SUCCESS;
    }
    if (c->transport == CG_CU_TRANSPORT_IPC) {
        CG_CHECK(cg_cu_ipc_wait(c));
    }
#ifndef CG_CUDA_NO_NCCL
    if (c->transport == CG_CU_TRANSPORT_NCCL) {
        CG_CHECK(cg_cu_nccl_wait(c));
    }
#endif
    c->nposts = 0;
out:
    return rc;
}

int cg_cu_xchg_begin_seg(struct cg_cu_call *c, int tag, int segments)
{
    if ((segments < 1) || (segments > CG_MAX_SEGMENTS)) {
        cg_set_error("collgen: an exchange cut into %d segments; 1..%d are allowed", segments,
                     CG_MAX_SEGMENTS);
        return MPI_ERR_ARG;
    }
    return cg_cu_xchg_begin(c, tag);
}

int cg_cu_xchg_wait_reduce(struct cg_cu_call *c, const struct cg_buf *into, long ifirst,
                           const struct cg_buf *from, long ffirst, long n, int order)
{
    int rc = cg_cu_xchg_wait(c);
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    return cg_cu_reduce_blocks(c, into, ifirst, from, ffirst, n, order);
}

/* Element runs of two block ranges, cut into common pieces. */
static int cg_cu_block_pieces(const struct cg_cu_call *c, const struct cg_buf *a, long afirst,
                              const struct cg_buf *b, long bfirst, long n,
                              struct cg_cu_pieces *pieces, int *npieces)
{
    int rc = MPI_SUCCESS;
    struct cg_seg as[2], bs[2];
    int na = 0, nb = 0;

    *npieces = 0;
    CG_CHECK(cg_range_segs(a, afirst, n, as, &na));
    CG_CHECK(cg_range_segs(b, bfirst, n, bs, &nb));
    if (cg_segs_len(as, na) != cg_segs_len(bs, nb)) {
        cg_set_error("collgen: block ranges of %zu and %zu elements do not match",
                     cg_segs_len(as, na), cg_segs_len(bs, nb));
        rc = MPI_ERR_ARG;
        goto out;
    }
    *npieces = cg_cu_cut(as, na, bs, nb, pieces);
    (void)c;
out:
    return rc;
}

int cg_cu_reduce_blocks(struct cg_cu_call *c, const struct cg_buf *into, long ifirst,
                        const struct cg_buf *from, long ffirst, long n, int order)
{
    int rc = MPI_SUCCESS;
    struct cg_cu_pieces pc;
    int np = 0;

    if (c->op == CG_CU_OP_NONE) {
        cg_set_error("collgen: a reduce step in a call without an op");
        rc = MPI_ERR_OP;
        goto out;
    }
    CG_CHECK(cg_cu_block_pieces(c, into, ifirst, from, ffirst, n, &pc, &np));
    for (int k = 0; k < np; k++) {
        CG_CHECK(cg_cu_reduce(into->base + pc.aoff[k] * c->esize,
                              from->base + pc.boff[k] * c->esize, pc.len[k], c->dtype, c->op,
                              order, c->stream));
    }
out:
    return rc;
}

int cg_cu_copy_blocks(struct cg_cu_call *c, const struct cg_buf *to, long tfirst,
                      const struct cg_buf *from, long ffirst, long n)
{
    int rc = MPI_SUCCESS;
    struct cg_cu_pieces pc;
    int np = 0;

    CG_CHECK(cg_cu_block_pieces(c, to, tfirst, from, ffirst, n, &pc, &np));
    for (int k = 0; k < np; k++) {
        CG_CHECK(cg_cu_copy(c, to->base + pc.aoff[k] * c->esize,
                            from->base + pc.boff[k] * c->esize, pc.len[k] * c->esize));
    }
out:
    return rc;
}

int cg_cu_copy(struct cg_cu_call *c, void *to, const void *from, size_t bytes)
{
    int rc = MPI_SUCCESS;

    if ((bytes == 0) || (to == from)) {
        return MPI_SUCCESS;
    }
    if (cg_cu_overlap(to, bytes, from, bytes)) {
        cg_set_error("collgen: a device copy of %zu bytes between overlapping ranges (%p and %p): "
                     "buffers must be equal (in place) or disjoint", bytes, to, from);
        return MPI_ERR_BUFFER;
    }
    CG_CHECK_CUDA(cudaMemcpyAsync(to, from, bytes, cudaMemcpyDeviceToDevice, c->stream));
out:
    return rc;
}

/* ---- strided ranges ----------------------------------------------------------
 *
 * Blocks first + i * stride (mod the buffer's blocks), i < n, all different
 * (the verifier proved it): what gen/emit_common.c calls for a range with
 * "stride". Why one post per block here, where runtime/strided.c sends one
 * message: a post carries at most two byte runs to the transports (IPC
 * descriptors, NCCL's send and receive), and the posts of a step are matched
 * in order on both sides, so n posts of one block each move the same data;
 * under NCCL they go in the step's one group. */

int cg_cu_send_strided(struct cg_cu_call *c, int to, const struct cg_buf *b, long first, long n,
                       long stride)
{
    int rc = MPI_SUCCESS;

    CG_CHECK(cg_strided_check(b, n, stride));
    for (long i = 0; i < n; i++) {
        CG_CHECK(cg_cu_xchg_post(c, to, b, cg_strided_blk(b, first, stride, i), 1, 0));
    }
out:
    return rc;
}

int cg_cu_recv_strided(struct cg_cu_call *c, int from, const struct cg_buf *b, long first,
                       long n, long stride)
{
    int rc = MPI_SUCCESS;

    CG_CHECK(cg_strided_check(b, n, stride));
    for (long i = 0; i < n; i++) {
        CG_CHECK(cg_cu_xchg_post(c, from, b, cg_strided_blk(b, first, stride, i), 1, 1));
    }
out:
    return rc;
}

int cg_cu_reduce_blocks_strided(struct cg_cu_call *c, const struct cg_buf *into, long ifirst,
                                long istride, const struct cg_buf *from, long ffirst,
                                long fstride, long n, int order)
{
    int rc = MPI_SUCCESS;

    CG_CHECK(cg_strided_check(into, n, istride));
    CG_CHECK(cg_strided_check(from, n, fstride));
    for (long i = 0; i < n; i++) {
        CG_CHECK(cg_cu_reduce_blocks(c, into, cg_strided_blk(into, ifirst, istride, i), from,
                                     cg_strided_blk(from, ffirst, fstride, i), 1, order));
    }
out:
    return rc;
}

int cg_cu_copy_blocks_strided(struct cg_cu_call *c, const struct cg_buf *to, long tfirst,
                              long tstride, const struct cg_buf *from, long ffirst, long fstride,
                              long n)
{
    int rc = MPI_SUCCESS;

    CG_CHECK(cg_strided_check(to, n, tstride));
    CG_CHECK(cg_strided_check(from, n, fstride));
    for (long i = 0; i < n; i++) {
        CG_CHECK(cg_cu_copy_blocks(c, to, cg_strided_blk(to, tfirst, tstride, i), from,
                                   cg_strided_blk(from, ffirst, fstride, i), 1));
    }
out:
    return rc;
}
