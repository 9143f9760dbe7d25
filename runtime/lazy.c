/* lazy.c - the input copy done on first use.
 *
 * allreduce, scan and reduce start from out = sendbuf (the verifier's
 * initial state, gen/verify.c). Copying all of sendbuf into out before the
 * first round costs a pass over n elements that the algorithm does not need:
 * the first round of a ring or recursive doubling sends blocks it never
 * wrote, and reduces into blocks that hold only this rank's input. So the
 * copy is made lazily, per block: a block of out that the schedule has not
 * written yet stands for the same block of sendbuf, and
 *
 *   - a send, or the source of a copy or reduce, of such blocks reads them
 *     from sendbuf;
 *   - a receive, copy or fill into them overwrites them whole: no copy;
 *   - a reduce into them writes out = sendbuf op from (typed kernels: one
 *     pass, cg_reduce_kernel3_run) or copies them first (MPI_Reduce_local);
 *   - a range of which only some blocks are pending, a call step, and the
 *     end of the call copy the pending blocks first.
 *
 * A gather's non-root starts the same way with one block: its own, which
 * its sendbuf holds alone (cg_lazy_start_range), so that a leaf sends it
 * from sendbuf instead of copying it into scratch first.
 *
 * Why this keeps the verified semantics: every read of a block returns what
 * the eager copy would have left there (sendbuf's data until the first write,
 * since sendbuf is never written), and every block not written by the end
 * gets it then. The messages, reductions and results are the same as with
 * the copy first, which is what the verifier simulates; tests/test_runtime.c
 * compares both on every path (all, none and some blocks pending, uneven
 * blocks, counts 0 and 1, every kernel type and op, MPI_Reduce_local).
 */
#include "cg_internal.h"

#include <stdint.h>
#include <stdlib.h>

/* Whether b is out as cg_lazy_start saw it. */
static int is_out(const struct cg_call *c, const struct cg_buf *b)
{
    return (b->base == c->lazy_out) && (b->nblocks == c->lazy_nblocks) &&
           (b->geom.count == c->lazy_geom.count) && (b->geom.nb == c->lazy_geom.nb);
}

/* Out as cg_lazy_start saw it. */
static struct cg_buf out_buf(const struct cg_call *c)
{
    struct cg_buf b = { c->lazy_out, c->lazy_geom, c->lazy_nblocks };
    return b;
}

/* Whether block j of out is in the range a cg_recv_to borrowed. */
static int borrowed(const struct cg_call *c, long j)
{
    if (!c->borrow_on) {
        return 0;
    }
    long k = cg_mod(j - c->borrow_ofirst, c->lazy_nblocks);
    return k < c->borrow_n;
}

/* Block j of out is about to change (copied in, written, reduced into) by
 * anything but the reduce that consumes a borrowed receive: the received
 * data goes where the schedule said, tmp, and the record is dropped; the
 * blocks still stand for sendbuf's. Why an error before the exchange is
 * complete: the message may still be landing; the generator only asks for
 * a borrow where nothing touches either range before that reduce (gen/
 * check.c, cg_recv_redirect), so this is a bug, not a schedule's fault. */
static int unborrow(struct cg_call *c, long j)
{
    if (!borrowed(c, j)) {
        return MPI_SUCCESS;
    }
    if (!c->borrow_waited) {
        cg_set_error("collgen: block %ld of out, which holds a receive of tmp's blocks [%ld, "
                     "%ld + %ld) still in flight, was touched before its exchange completed",
                     j, c->borrow_tfirst, c->borrow_tfirst, c->borrow_n);
        return MPI_ERR_INTERN;
    }
    c->borrow_on = 0;
    struct cg_buf o = out_buf(c);
    return cg_copy_raw(c, &c->borrow_tmp, c->borrow_tfirst, &o, c->borrow_ofirst, c->borrow_n);
}

/* Copies block j of in into out; it is no longer pending. */
static int own_block(struct cg_call *c, long j)
{
    int rc = MPI_SUCCESS;
    unsigned char *pend = c->cc->lazy;

    if (!pend[j]) {
        goto out;
    }
    CG_CHECK(unborrow(c, j));
    size_t off = cg_geom_off(&c->lazy_geom, j);
    size_t len = cg_geom_len(&c->lazy_geom, j);
    if (len > 0) {
        const char *from = c->lazy_in + (MPI_Aint)off * c->extent;
        char *to = c->lazy_out + (MPI_Aint)off * c->extent;
        if (c->contiguous) {
            cg_memcpy(to, from, len * (size_t)c->extent);
        } else {
            CG_CHECK(cg_copy_typed(from, len, c->dtype, to, len, c->dtype));
        }
    }
    pend[j] = 0;
    c->lazy_pending--;
out:
    return rc;
}

int cg_lazy_start(struct cg_call *c, const struct cg_buf *out, const void *in, int flush)
{
    return cg_lazy_start_range(c, out, in, 0, out->nblocks, flush);
}

int cg_lazy_start_range(struct cg_call *c, const struct cg_buf *out, const void *in, long first,
                        long n, int flush)
{
    struct cg_comm *cc = c->cc;
    long nb = out->nblocks;

    c->lazy_pending = 0;
    if ((nb < 1) || (n < 1)) {
        return MPI_SUCCESS;
    }
    if ((first < 0) || (n > nb) || (first > nb - n)) {
        cg_set_error("collgen: input blocks [%ld, %ld + %ld) outside out's %ld", first, first, n,
                     nb);
        return MPI_ERR_INTERN;
    }
    if (nb > cc->lazy_cap) {
        unsigned char *p = realloc(cc->lazy, (size_t)nb);
        if (p == NULL) {
            cg_set_error("collgen: out of memory for %ld block flags", nb);
            return MPI_ERR_NO_MEM;
        }
        cc->lazy = p;
        cc->lazy_cap = nb;
    }
    if (n < nb) {
        memset(cc->lazy, 0, (size_t)nb);
    }
    memset(cc->lazy + first, 1, (size_t)n);
    c->lazy_out = out->base;
    /* Why an integer shift: every user of lazy_in indexes it with out's
     * element offsets (own_block, the views of cg_lazy_read, the reduce of
     * reduce.c), so it must be in's address less block first's offset; for
     * first > 0 that lies before in's object, which C's pointer arithmetic
     * may not form, and only block first onward is ever read through it. */
    c->lazy_in = (const char *)((uintptr_t)in -
                                (uintptr_t)(cg_geom_off(&out->geom, first) * (size_t)c->extent));
    c->lazy_geom = out->geom;
    c->lazy_nblocks = nb;
    c->lazy_pending = n;
    c->lazy_flush = flush;
    return MPI_SUCCESS;
}

int cg_lazy_flush(struct cg_call *c)
{
    int rc = MPI_SUCCESS;

    for (long j = 0; (j < c->lazy_nblocks) && cg_lazy_on(c); j++) {
        CG_CHECK(own_block(c, j));
    }
out:
    return rc;
}

/* How many blocks of [first, first + n) of out are pending. */
static long pending_in(const struct cg_call *c, long first, long n)
{
    long k = 0, f = cg_mod(first, c->lazy_nblocks);

    for (long i = 0; i < n; i++) {
        long j = f + i;
        k += c->cc->lazy[(j < c->lazy_nblocks) ? j : (j - c->lazy_nblocks)];
    }
    return k;
}

/* Makes the blocks of the range out's own: copied (copy 1) or overwritten. */
static int settle(struct cg_call *c, long first, long n, int copy)
{
    int rc = MPI_SUCCESS;
    long f = cg_mod(first, c->lazy_nblocks);

    for (long i = 0; (i < n) && cg_lazy_on(c); i++) {
        long j = f + i;
        j = (j < c->lazy_nblocks) ? j : (j - c->lazy_nblocks);
        if (copy) {
            CG_CHECK(own_block(c, j));
        } else if (c->cc->lazy[j]) {
            CG_CHECK(unborrow(c, j));
            c->cc->lazy[j] = 0;
            c->lazy_pending--;
        }
    }
out:
    return rc;
}

/* Checks that b is out, or not out's memory at all; another shape over
 * out's memory makes everything out's own first. *yes: b is out. */
static int which(struct cg_call *c, const struct cg_buf *b, long n, int *yes)
{
    *yes = 0;
    if (!cg_lazy_on(c) || (n <= 0)) {
        return MPI_SUCCESS;
    }
    if (is_out(c, b)) {
        *yes = (n <= c->lazy_nblocks);
        return MPI_SUCCESS;
    }
    return (b->base == c->lazy_out) ? cg_lazy_flush(c) : MPI_SUCCESS;
}

int cg_lazy_read(struct cg_call *c, const struct cg_buf *b, long first, long n,
                 struct cg_buf *view, const struct cg_buf **use)
{
    int rc = MPI_SUCCESS;
    int yes = 0;

    *use = b;
    CG_CHECK(which(c, b, n, &yes));
    if (!yes) {
        goto out;
    }
    long k = pending_in(c, first, n);
    if (k == n) {
        *view = *b;
        view->base = (char *)c->lazy_in; /* read only: sends and sources */
        *use = view;
    } else if (k > 0) {
        CG_CHECK(settle(c, first, n, 1));
    }
out:
    return rc;
}

int cg_lazy_write(struct cg_call *c, const struct cg_buf *b, long first, long n)
{
    int rc = MPI_SUCCESS;
    int yes = 0;

    CG_CHECK(which(c, b, n, &yes));
    if (yes) {
        CG_CHECK(settle(c, first, n, 0));
    }
out:
    return rc;
}

int cg_lazy_into(struct cg_call *c, const struct cg_buf *b, long first, long n, int *from_in)
{
    int rc = MPI_SUCCESS;
    int yes = 0;

    *from_in = 0;
    CG_CHECK(which(c, b, n, &yes));
    if (!yes) {
        goto out;
    }
    long k = pending_in(c, first, n);
    if ((k == n) && (c->kernel >= 0)) {
        *from_in = 1;
        CG_CHECK(settle(c, first, n, 0));
    } else if (k > 0) {
        CG_CHECK(settle(c, first, n, 1));
    }
out:
    return rc;
}

/* Why a borrow keeps the blocks pending: until the reduce that consumes
 * the receive, the schedule's out still holds sendbuf's data there, and
 * every read of a pending block is served from sendbuf (a send of the same
 * exchange, posted before the receive, included). The memory of a pending
 * block is unused, so the message may land in it. */
int cg_lazy_borrow(struct cg_call *c, const struct cg_buf *tmp, long tfirst, long n,
                   const struct cg_buf *out, long ofirst, int *borrow)
{
    int rc = MPI_SUCCESS;
    int yes = 0;
    struct cg_seg a[2], b[2];
    int na = 0, nb = 0;

    *borrow = 0;
    if (c->borrow_on || (c->kernel < 0) || !cg_lazy_on(c) || (n < 1) ||
        (tmp->base == out->base)) {
        goto out;
    }
    CG_CHECK(which(c, out, n, &yes));
    if (!yes || (pending_in(c, ofirst, n) != n)) {
        goto out;
    }
    CG_CHECK(cg_range_segs(tmp, tfirst, n, a, &na));
    CG_CHECK(cg_range_segs(out, ofirst, n, b, &nb));
    if (cg_segs_len(a, na) != cg_segs_len(b, nb)) {
        goto out;
    }
    c->borrow_on = 1;
    c->borrow_waited = 0;
    c->borrow_tmp = *tmp;
    c->borrow_tfirst = tfirst;
    c->borrow_ofirst = cg_mod(ofirst, c->lazy_nblocks);
    c->borrow_n = n;
    *borrow = 1;
out:
    return rc;
}

int cg_lazy_take(struct cg_call *c, const struct cg_buf *into, long ifirst,
                 const struct cg_buf *from, long ffirst, long n, struct cg_buf *view, int *lazy)
{
    *lazy = CG_LAZY_NONE;
    if (!c->borrow_on || !is_out(c, into) || (n != c->borrow_n) ||
        (cg_mod(ifirst, c->lazy_nblocks) != c->borrow_ofirst) ||
        (from->base != c->borrow_tmp.base) || (from->nblocks != c->borrow_tmp.nblocks) ||
        (from->geom.count != c->borrow_tmp.geom.count) ||
        (from->geom.nb != c->borrow_tmp.geom.nb) ||
        (cg_mod(ffirst, from->nblocks) != cg_mod(c->borrow_tfirst, from->nblocks))) {
        return MPI_SUCCESS;
    }
    int rc = MPI_SUCCESS;
    c->borrow_on = 0; /* first: settle's unborrow must not copy the message back */
    CG_CHECK(settle(c, ifirst, n, 0));
    *view = *into;
    view->base = (char *)c->lazy_in; /* read only */
    *lazy = CG_LAZY_SWAPPED;
out:
    return rc;
}
