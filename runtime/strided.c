/* strided.c - strided block ranges: blocks first, first + stride, ...
 * (modulo the buffer's blocks), n of them, which the verifier proved all
 * different (gen/sim.c). The schedule language writes them {"first",
 * "count", "stride"}; gen/emit_common.c calls these for such a range and
 * the plain functions (xchg.c, reduce.c) for every other one.
 *
 * An exchange of a strided range is one message, as a span is: its element
 * stream is the blocks in range order, posted through xchg.c's cutting
 * (an hindexed datatype over the runs, cut at max_elems at the same places
 * on both sides). A reduce or a copy is done block by block through
 * cg_reduce / cg_copy, which handle the lazy input copy per block.
 */
#include "cg_internal.h"

#include <stdlib.h>

/* The element runs of the range in stream order (empty blocks left out,
 * neighbours in memory merged), posted as messages. */
static int cg_strided_xchg(struct cg_call *c, int peer, const struct cg_buf *b, long first,
                           long n, long stride, int is_recv)
{
    int rc = MPI_SUCCESS;
    struct cg_seg *seg = NULL;
    int nseg = 0;

    CG_CHECK(cg_strided_check(b, n, stride));
    if (n == 0) {
        goto out;
    }
    seg = malloc((size_t)n * sizeof(*seg));
    if (seg == NULL) {
        cg_set_error("collgen: out of memory for a strided range of %ld blocks", n);
        rc = MPI_ERR_NO_MEM;
        goto out;
    }
    for (long i = 0; i < n; i++) {
        long j = cg_strided_blk(b, first, stride, i);
        size_t off = cg_geom_off(&b->geom, j), len = cg_geom_len(&b->geom, j);
        if (len == 0) {
            continue;
        }
        if ((nseg > 0) && (seg[nseg - 1].off + seg[nseg - 1].len == off)) {
            seg[nseg - 1].len += len;
        } else {
            seg[nseg].off = off;
            seg[nseg].len = len;
            nseg++;
        }
    }
    rc = cg_xchg_segs(c, peer, b, seg, nseg, is_recv);
out:
    free(seg);
    return rc;
}

/* Why the flush: a send may read blocks of out that still stand for
 * sendbuf (lazy.c), and one message cannot come from two buffers; copying
 * the pending blocks first keeps the message whole. Only allreduce, scan
 * and reduce start lazily. */
int cg_send_strided(struct cg_call *c, int to, const struct cg_buf *b, long first, long n,
                    long stride)
{
    int rc = MPI_SUCCESS;

    if (cg_lazy_on(c)) {
        CG_CHECK(cg_lazy_flush(c));
    }
    rc = cg_strided_xchg(c, to, b, first, n, stride, 0);
out:
    return rc;
}

int cg_recv_strided(struct cg_call *c, int from, const struct cg_buf *b, long first, long n,
                    long stride)
{
    int rc = MPI_SUCCESS;

    CG_CHECK(cg_strided_check(b, n, stride));
    for (long i = 0; (i < n) && cg_lazy_on(c); i++) {
        CG_CHECK(cg_lazy_write(c, b, cg_strided_blk(b, first, stride, i), 1));
    }
    rc = cg_strided_xchg(c, from, b, first, n, stride, 1);
out:
    return rc;
}

int cg_reduce_strided(struct cg_call *c, const struct cg_buf *into, long ifirst, long istride,
                      const struct cg_buf *from, long ffirst, long fstride, long n, int order)
{
    int rc = MPI_SUCCESS;

    CG_CHECK(cg_strided_check(into, n, istride));
    CG_CHECK(cg_strided_check(from, n, fstride));
    for (long i = 0; i < n; i++) {
        CG_CHECK(cg_reduce(c, into, cg_strided_blk(into, ifirst, istride, i), from,
                           cg_strided_blk(from, ffirst, fstride, i), 1, order));
    }
out:
    return rc;
}

int cg_copy_strided(struct cg_call *c, const struct cg_buf *to, long tfirst, long tstride,
                    const struct cg_buf *from, long ffirst, long fstride, long n)
{
    int rc = MPI_SUCCESS;

    CG_CHECK(cg_strided_check(to, n, tstride));
    CG_CHECK(cg_strided_check(from, n, fstride));
    for (long i = 0; i < n; i++) {
        CG_CHECK(cg_copy(c, to, cg_strided_blk(to, tfirst, tstride, i), from,
                         cg_strided_blk(from, ffirst, fstride, i), 1));
    }
out:
    return rc;
}
