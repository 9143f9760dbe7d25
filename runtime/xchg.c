/* xchg.c - exchanges: post every send and receive of a step, then wait.
 *
 * A block range becomes an element stream of at most two runs (two when it
 * wraps). The stream is cut into messages of at most max_elems elements,
 * counted from the start of the stream, so that a sender and a receiver that
 * move the same number of elements cut at the same places whatever their
 * runs are. A message inside one run is sent as (pointer, count, dtype); one
 * of several pieces (it straddles the wrap, or is a strided range) is packed
 * into the context's arena when it is small and sent as one run, else sent
 * as an hindexed type over its pieces.
 */
#include "cg_internal.h"

#include <limits.h>
#include <stdlib.h>

/* Why: a testing hook with no communicator to hang on (cg.h), so it is
 * process-wide; only tests change it, before any exchange. */
static size_t cg_xchg_max_elems = INT_MAX;

void cg_xchg_set_max_elems(size_t max_elems)
{
    cg_xchg_max_elems = ((max_elems >= 1) && (max_elems <= INT_MAX)) ? max_elems : INT_MAX;
    cg_plan_touch();
}

/* Why small messages of several pieces are packed: an hindexed type costs
 * MPI_Type_create_hindexed, MPI_Type_commit and MPI_Type_free per message
 * and call, and the library's datatype engine walks it; at 1 KiB that is
 * more than the message (harness/measurements/2026-12-07-pack.md). Up to
 * CG_XCHG_PACK_DEFAULT bytes a memcpy per piece costs less; above, the
 * extra copy through the arena costs more than the type. Process-wide
 * like cg_xchg_max_elems: a testing hook, set before exchanges. */
static size_t cg_xchg_pack_max = CG_XCHG_PACK_DEFAULT;

void cg_xchg_set_pack_max(size_t bytes)
{
    cg_xchg_pack_max = (bytes <= CG_PACK_ARENA) ? bytes : CG_PACK_ARENA;
    cg_plan_touch();
}

int cg_xchg_begin(struct cg_call *c, int tag)
{
    /* Why dropped unread: a receive written into out (cg_recv_to) is only
     * for the reduce steps right after its exchange; past them nothing
     * reads its tmp range before receiving into it anew (gen/check.c,
     * cg_recv_redirect), and the blocks of out still stand for sendbuf's. */
    c->borrow_on = 0;
    c->nreqs = 0;
    c->ntypes = 0;
    c->tag = tag;
    c->nseg = 1;
    c->nxrecv = 0;
    c->cc->pack_used = 0;
    c->cc->nunpack = 0;
    c->cc->nupiece = 0;
    c->cc->held.on = 0;
    return MPI_SUCCESS;
}

int cg_xchg_begin_seg(struct cg_call *c, int tag, int segments)
{
    if ((segments < 1) || (segments > CG_MAX_SEGMENTS)) {
        cg_set_error("collgen: an exchange cut into %d segments; 1..%d are allowed", segments,
                     CG_MAX_SEGMENTS);
        return MPI_ERR_ARG;
    }
    (void)cg_xchg_begin(c, tag);
    c->nseg = segments;
    return MPI_SUCCESS;
}

/* An array of the context grown to hold at least `need` entries of `elem`
 * bytes, doubling from `first`; *cap is updated. NULL, the array kept and
 * *rc MPI_ERR_NO_MEM (recorded, naming `what`), when memory runs out. */
static void *cg_xchg_grow(void *arr, int *cap, int need, size_t elem, int first,
                          const char *what, int *rc)
{
    if (need <= *cap) {
        return arr;
    }
    int n = (*cap > 0) ? *cap : first;
    while (n < need) {
        n *= 2;
    }
    void *grown = realloc(arr, (size_t)n * elem);
    if (grown == NULL) {
        cg_set_error("collgen: out of memory for %d %s", n, what);
        *rc = MPI_ERR_NO_MEM;
        return NULL;
    }
    *cap = n;
    return grown;
}

/* Makes room for one more request and one more derived type. */
static int cg_xchg_reserve(struct cg_call *c)
{
    int rc = MPI_SUCCESS;
    struct cg_comm *cc = c->cc;
    int cap = cc->reqs_cap, cap2 = cc->reqs_cap; /* reqs and is_recv share one */

    /* Room already: the steady state, where the arrays grew in an earlier
     * call (cg_call_begin set c->reqs and c->types to them). */
    if ((c->nreqs < cc->reqs_cap) && (c->ntypes < cc->types_cap)) {
        return MPI_SUCCESS;
    }

    MPI_Request *reqs = cg_xchg_grow(cc->reqs, &cap, c->nreqs + 1, sizeof(*reqs), 16,
                                     "requests", &rc);
    if (reqs == NULL) {
        return rc;
    }
    cc->reqs = reqs;
    c->reqs = reqs;
    unsigned char *is_recv = cg_xchg_grow(cc->is_recv, &cap2, c->nreqs + 1, sizeof(*is_recv),
                                          16, "requests", &rc);
    if (is_recv == NULL) {
        return rc;
    }
    cc->is_recv = is_recv;
    cc->reqs_cap = cap;
    MPI_Datatype *types = cg_xchg_grow(cc->types, &cc->types_cap, c->ntypes + 1, sizeof(*types),
                                       4, "datatypes", &rc);
    if (types == NULL) {
        return rc;
    }
    cc->types = types;
    c->types = types;
    return MPI_SUCCESS;
}

/* Where a message of `bytes` bytes is packed: *at in the arena, or 0 when
 * it is not (too large, a datatype memcpy cannot move, the arena full or
 * not to be had: the message then goes as an hindexed type). */
static int cg_xchg_stage(struct cg_call *c, size_t bytes, size_t *at)
{
    struct cg_comm *cc = c->cc;
    size_t room = (bytes + 63) & ~(size_t)63; /* each message on its own cache line */

    if ((bytes > cg_xchg_pack_max) || !c->contiguous || (room > CG_PACK_ARENA - cc->pack_used)) {
        return 0;
    }
    if (cc->pack == NULL) {
        cc->pack = aligned_alloc(64, CG_PACK_ARENA);
        if (cc->pack == NULL) {
            return 0;
        }
    }
    *at = cc->pack_used;
    cc->pack_used += room;
    return 1;
}

/* Records a packed receive of npieces pieces of b, staged at `at`, as
 * request c->nreqs. */
static int cg_xchg_unpack_later(struct cg_call *c, const struct cg_buf *b, int npieces,
                                const struct cg_seg *piece, size_t at)
{
    int rc = MPI_SUCCESS;
    struct cg_comm *cc = c->cc;
    struct cg_unpack *un = cg_xchg_grow(cc->unpack, &cc->unpack_cap, cc->nunpack + 1,
                                        sizeof(*un), 8, "packed receives", &rc);
    if (un == NULL) {
        return rc;
    }
    cc->unpack = un;
    struct cg_seg *pieces = cg_xchg_grow(cc->upiece, &cc->upiece_cap, cc->nupiece + npieces,
                                         sizeof(*pieces), 16, "pieces of packed receives", &rc);
    if (pieces == NULL) {
        return rc;
    }
    cc->upiece = pieces;
    struct cg_unpack *u = &cc->unpack[cc->nunpack++];
    u->req = c->nreqs;
    u->npieces = npieces;
    u->piece = cc->nupiece;
    u->base = b->base;
    u->at = at;
    memcpy(&cc->upiece[cc->nupiece], piece, (size_t)npieces * sizeof(*piece));
    cc->nupiece += npieces;
    return MPI_SUCCESS;
}

/* Request `req` completed: if it is a packed receive, its pieces are
 * filled from the arena, once. */
static void cg_xchg_unpack(struct cg_call *c, int req)
{
    struct cg_comm *cc = c->cc;

    for (int i = 0; i < cc->nunpack; i++) {
        struct cg_unpack *u = &cc->unpack[i];
        if (u->req != req) {
            continue;
        }
        const char *from = cc->pack + u->at;
        for (int k = 0; k < u->npieces; k++) {
            const struct cg_seg *s = &cc->upiece[u->piece + k];
            size_t bytes = s->len * (size_t)c->extent;
            cg_memcpy(u->base + (MPI_Aint)s->off * c->extent, from, bytes);
            from += bytes;
        }
        u->req = -1;
        return;
    }
}

/* Waits for request i and unpacks it; the code of MPI_Wait. */
static int cg_xchg_wait_one(struct cg_call *c, int i)
{
    int wrc = MPI_Wait(&c->reqs[i], MPI_STATUS_IGNORE);
    if (wrc == MPI_SUCCESS) {
        cg_plan_note_msg(CG_OP_WAIT, NULL, 0, MPI_DATATYPE_NULL, 0, 0, i);
    }
    if ((wrc == MPI_SUCCESS) && (c->cc->nunpack > 0)) {
        cg_xchg_unpack(c, i);
    }
    return wrc;
}

/* Why one message of one run is held back, not posted:
 *  - the first of an exchange: alone (every round of a binomial tree, a
 *    chain, a gather or scatter) it is one MPI_Send or MPI_Recv, which both
 *    libraries complete without a request for a small message, where
 *    MPI_Isend or MPI_Irecv + MPI_Wait allocate one and free it
 *    (harness/measurements/2026-12-07-pack.md);
 *  - the latest send: the receives after it post before it, as in
 *    MPI_Sendrecv of both libraries (MPICH's MPIC_Sendrecv: Irecv, Isend;
 *    Open MPI's coll_base sendrecv: irecv, blocking send), so that the
 *    peer's message finds its receive posted, and the last send of the
 *    exchange is an MPI_Send at the wait, after every receive is posted.
 * A later send posts the held one first, so sends keep schedule order
 * (receives keep theirs: a receive is never held behind another); the
 * order of a send against a receive does not change what matches what.
 * Posting is all an exchange does before its wait, and a blocking send
 * there is an MPI_Isend waited for first, so the exchange completes as if
 * everything had been posted at once. Process-wide level: a measuring hook
 * (cg.h). */
static int cg_xchg_hold_on = 2;

void cg_xchg_hold_enable(int level)
{
    cg_xchg_hold_on = (level < 0) ? 0 : ((level > 2) ? 2 : level);
    cg_plan_touch();
}

/* Posts one message as request c->nreqs (room reserved). */
static int cg_xchg_isend_irecv(struct cg_call *c, char *ptr, int count, MPI_Datatype type,
                               int peer, int is_recv)
{
    int rc = MPI_SUCCESS;

    c->cc->is_recv[c->nreqs] = (unsigned char)is_recv;
    if (is_recv) {
        CG_CHECK_MPI(MPI_Irecv(ptr, count, type, peer, c->tag, c->comm, &c->reqs[c->nreqs]));
    } else {
        CG_CHECK_MPI(MPI_Isend(ptr, count, type, peer, c->tag, c->comm, &c->reqs[c->nreqs]));
    }
    cg_plan_note_msg(is_recv ? CG_OP_IRECV : CG_OP_ISEND, ptr, count, type, peer, c->tag,
                     c->nreqs);
    c->nreqs++;
out:
    return rc;
}

/* Posts the held message, if any, as every other is. */
static int cg_xchg_post_held(struct cg_call *c)
{
    int rc = MPI_SUCCESS;
    struct cg_held *h = &c->cc->held;

    if (h->on) {
        h->on = 0;
        CG_CHECK(cg_xchg_reserve(c));
        rc = cg_xchg_isend_irecv(c, h->ptr, h->count, c->dtype, h->peer, h->is_recv);
    }
out:
    return rc;
}

/* Before a message that is posted now: the held one, unless the new one is
 * a receive and the held one a send, which the receive goes before. */
static int cg_xchg_post_held_before(struct cg_call *c, int is_recv)
{
    const struct cg_held *h = &c->cc->held;

    if (is_recv && h->on && !h->is_recv && (cg_xchg_hold_on > 1)) {
        return MPI_SUCCESS;
    }
    return cg_xchg_post_held(c);
}

/* The held message, now, blocking: a receive is alone; a send comes after
 * every receive of the exchange. */
static int cg_xchg_complete_held(struct cg_call *c)
{
    int rc = MPI_SUCCESS;
    struct cg_held *h = &c->cc->held;

    h->on = 0;
    if (h->is_recv) {
        CG_CHECK_MPI(MPI_Recv(h->ptr, h->count, c->dtype, h->peer, c->tag, c->comm,
                              MPI_STATUS_IGNORE));
    } else {
        CG_CHECK_MPI(MPI_Send(h->ptr, h->count, c->dtype, h->peer, c->tag, c->comm));
    }
    cg_plan_note_msg(h->is_recv ? CG_OP_RECV : CG_OP_SEND, h->ptr, h->count, c->dtype, h->peer,
                     c->tag, -1);
out:
    return rc;
}

/* Posts, or holds, one run of count elements of c->dtype at ptr (cg_xchg_post,
 * and the direct path of cg_xchg_range). */
static int cg_xchg_post_run(struct cg_call *c, int peer, char *ptr, int count, int is_recv)
{
    int rc = MPI_SUCCESS;
    struct cg_held *h = &c->cc->held;

    /* A segmented exchange's requests are counted per segment (cg_xchg_find):
     * nothing is held there. */
    if ((c->nseg == 1) && (cg_xchg_hold_on > 0) &&
        ((!is_recv && (cg_xchg_hold_on > 1)) || ((c->nreqs == 0) && !h->on))) {
        CG_CHECK(cg_xchg_post_held(c)); /* a send after it, or a receive held alone */
        h->on = 1;
        h->is_recv = is_recv;
        h->peer = peer;
        h->ptr = ptr;
        h->count = count;
        goto out;
    }
    CG_CHECK(cg_xchg_post_held_before(c, is_recv));
    CG_CHECK(cg_xchg_reserve(c));
    rc = cg_xchg_isend_irecv(c, ptr, count, c->dtype, peer, is_recv);
out:
    return rc;
}

/* Posts one message of npieces pieces (element offset, length): two at most
 * for a span, one per block for a strided range (strided.c). */
static int cg_xchg_post(struct cg_call *c, int peer, const struct cg_buf *b, int npieces,
                        const struct cg_seg *piece, int is_recv)
{
    int rc = MPI_SUCCESS;
    char *ptr = b->base;
    int count = 1;
    MPI_Datatype type = c->dtype;
    int lens_2[2];
    MPI_Aint disps_2[2];
    int *lens = lens_2;
    MPI_Aint *disps = disps_2;
    size_t total = (npieces > 1) ? cg_segs_len(piece, npieces) : 0;
    size_t at = 0;

    if (npieces == 1) {
        return cg_xchg_post_run(c, peer, b->base + (MPI_Aint)piece[0].off * c->extent,
                                (int)piece[0].len, is_recv);
    }
    CG_CHECK(cg_xchg_post_held_before(c, is_recv)); /* several pieces are never held */
    CG_CHECK(cg_xchg_reserve(c));
    if (cg_xchg_stage(c, total * (size_t)c->extent, &at)) {
        ptr = c->cc->pack + at;
        count = (int)total;
        if (is_recv) {
            CG_CHECK(cg_xchg_unpack_later(c, b, npieces, piece, at));
        } else {
            char *to = ptr;
            for (int i = 0; i < npieces; i++) {
                size_t bytes = piece[i].len * (size_t)c->extent;
                cg_memcpy(to, b->base + (MPI_Aint)piece[i].off * c->extent, bytes);
                to += bytes;
            }
        }
    } else {
        if (npieces > 2) {
            lens = malloc((size_t)npieces * sizeof(*lens));
            disps = malloc((size_t)npieces * sizeof(*disps));
            if ((lens == NULL) || (disps == NULL)) {
                cg_set_error("collgen: out of memory for a message of %d pieces", npieces);
                rc = MPI_ERR_NO_MEM;
                goto out;
            }
        }
        for (int i = 0; i < npieces; i++) {
            lens[i] = (int)piece[i].len;
            disps[i] = (MPI_Aint)piece[i].off * c->extent;
        }
        cg_plan_refuse(); /* a type made for this call: a plan could not keep it */
        CG_CHECK_MPI(MPI_Type_create_hindexed(npieces, lens, disps, c->dtype, &type));
        c->types[c->ntypes++] = type;
        CG_CHECK_MPI(MPI_Type_commit(&c->types[c->ntypes - 1]));
        type = c->types[c->ntypes - 1];
    }
    rc = cg_xchg_isend_irecv(c, ptr, count, type, peer, is_recv);
out:
    if (lens != lens_2) {
        free(lens);
        free(disps);
    }
    return rc;
}

/* Cuts elements [lo, hi) of a stream of nruns runs into messages and posts
 * them; the cut is counted from lo, so both ends of a message cut alike.
 * Why a copy of the runs: the window trims them in place. */
static int cg_xchg_window(struct cg_call *c, int peer, const struct cg_buf *b,
                          const struct cg_seg *runs, int nruns, size_t lo, size_t hi, int is_recv)
{
    int rc = MPI_SUCCESS;
    struct cg_seg local[4];
    struct cg_seg *seg = local; /* nruns runs, then room for nruns pieces */
    int nseg = nruns;
    int s = 0;        /* run being consumed */
    size_t used = 0;  /* elements of seg[s] already in messages */

    /* Why a shortcut: most messages are one run, whole, under max_elems;
     * the cut below would post the same one piece after copying and
     * trimming the runs. */
    if ((nruns == 1) && (lo == 0) && (hi >= runs[0].len) && (runs[0].len <= cg_xchg_max_elems)) {
        return (runs[0].len > 0) ? cg_xchg_post(c, peer, b, 1, runs, is_recv) : MPI_SUCCESS;
    }
    if (nruns > 2) {
        seg = malloc(2 * (size_t)nruns * sizeof(*seg));
        if (seg == NULL) {
            cg_set_error("collgen: out of memory for a message of %d runs", nruns);
            return MPI_ERR_NO_MEM;
        }
    }
    struct cg_seg *piece = seg + nruns;
    memcpy(seg, runs, sizeof(seg[0]) * (size_t)nruns);
    cg_segs_window(seg, &nseg, lo, hi);
    size_t left = cg_segs_len(seg, nseg);
    while (left > 0) {
        size_t want = (left < cg_xchg_max_elems) ? left : cg_xchg_max_elems;
        int npieces = 0;
        left -= want;
        while (want > 0) {
            size_t take = seg[s].len - used;
            if (take > want) {
                take = want;
            }
            piece[npieces].off = seg[s].off + used;
            piece[npieces].len = take;
            npieces++;
            want -= take;
            used += take;
            if (used == seg[s].len) {
                s++;
                used = 0;
            }
        }
        CG_CHECK(cg_xchg_post(c, peer, b, npieces, piece, is_recv));
    }
out:
    if (seg != local) {
        free(seg);
    }
    return rc;
}

/* Cuts the element stream of nseg runs into messages and posts them
 * (strided.c's ranges). Why not segmented: the generator gives segments
 * only to exchanges of plain ranges; a strided one in a segmented exchange
 * would leave cg_xchg_wait_reduce without its record, so it is refused. */
int cg_xchg_segs(struct cg_call *c, int peer, const struct cg_buf *b, const struct cg_seg *seg,
                 int nseg, int is_recv)
{
    if (c->nseg > 1) {
        cg_set_error("collgen: a strided range in a segmented exchange (%d segments)", c->nseg);
        return MPI_ERR_INTERN;
    }
    return cg_xchg_window(c, peer, b, seg, nseg, 0, cg_segs_len(seg, nseg), is_recv);
}

/* Where piece j of an L-element stream cut into S pieces starts. */
static size_t cg_xchg_cut(size_t len, int nseg, int j)
{
    return (size_t)(((unsigned __int128)len * (unsigned)j) / (unsigned)nseg);
}

/* A receive of a segmented exchange: room for its record. */
static int cg_xchg_record(struct cg_call *c, struct cg_xrecv **x)
{
    int rc = MPI_SUCCESS;
    struct cg_comm *cc = c->cc;
    struct cg_xrecv *xr = cg_xchg_grow(cc->xrecv, &cc->xrecv_cap, c->nxrecv + 1, sizeof(*xr), 4,
                                       "segmented receives", &rc);
    if (xr == NULL) {
        return rc;
    }
    cc->xrecv = xr;
    *x = &cc->xrecv[c->nxrecv++];
    return MPI_SUCCESS;
}

/* Posts the range's element stream: whole (cut only at max_elems), or in
 * c->nseg pieces, a receive's pieces recorded for cg_xchg_wait_reduce. */
static int cg_xchg_range(struct cg_call *c, int peer, const struct cg_buf *b, long first, long n,
                         int is_recv)
{
    int rc = MPI_SUCCESS;
    struct cg_seg seg[2];
    int nseg = 0;
    struct cg_xrecv *x = NULL;

    /* Why a direct path: most messages are one run of blocks that does not
     * wrap, under the cut, in an unsegmented exchange; the general path
     * below (runs, window, pieces) posts the same one message after three
     * more calls. Anything else, a bad range included, takes it. */
    size_t off = 0, len = 0;
    if ((c->nseg == 1) && cg_range_run(b, first, n, &off, &len)) {
        if (len == 0) {
            return MPI_SUCCESS; /* as below */
        }
        if (len <= cg_xchg_max_elems) {
            return cg_xchg_post_run(c, peer, b->base + (MPI_Aint)off * c->extent, (int)len,
                                    is_recv);
        }
    }
    CG_CHECK(cg_range_segs(b, first, n, seg, &nseg));
    if (nseg == 0) {
        /* Nothing to post, on either end (a count-0 range: a binomial tree's
         * "the other n - 1 blocks" at its last level); a segmented exchange
         * needs no record either: cg_xchg_wait_reduce of 0 elements waits
         * for the rest and reduces nothing. */
        goto out;
    }
    len = cg_segs_len(seg, nseg);
    if (c->nseg <= 1) {
        rc = cg_xchg_window(c, peer, b, seg, nseg, 0, len, is_recv);
        goto out;
    }
    if (is_recv) {
        CG_CHECK(cg_xchg_record(c, &x));
        x->base = b->base;
        x->geom = b->geom;
        x->nblocks = b->nblocks;
        x->first = cg_mod(first, b->nblocks);
        x->n = n;
    }
    for (int j = 0; j < c->nseg; j++) {
        if (x != NULL) {
            x->req[j] = c->nreqs;
        }
        CG_CHECK(cg_xchg_window(c, peer, b, seg, nseg, cg_xchg_cut(len, c->nseg, j),
                                cg_xchg_cut(len, c->nseg, j + 1), is_recv));
    }
    if (x != NULL) {
        x->req[c->nseg] = c->nreqs;
    }
out:
    return rc;
}

/* Why the cg_lazy calls: a block of out that still stands for sendbuf's
 * (lazy.c) is sent from sendbuf, and a receive makes it out's own. */
int cg_send(struct cg_call *c, int to, const struct cg_buf *b, long first, long n)
{
    int rc = MPI_SUCCESS;
    struct cg_buf view;

    if (cg_lazy_on(c)) {
        CG_CHECK(cg_lazy_read(c, b, first, n, &view, &b));
    }
    rc = cg_xchg_range(c, to, b, first, n, 0);
out:
    return rc;
}

int cg_recv(struct cg_call *c, int from, const struct cg_buf *b, long first, long n)
{
    int rc = MPI_SUCCESS;

    if (cg_lazy_on(c)) {
        CG_CHECK(cg_lazy_write(c, b, first, n));
    }
    rc = cg_xchg_range(c, from, b, first, n, 1);
out:
    return rc;
}

/* Why process-wide, like cg_xchg_max_elems: a measuring hook (cg.h), set
 * before calls, never by the emitted code. */
static int cg_recv_to_on = 1;

void cg_recv_to_enable(int on)
{
    cg_recv_to_on = (on != 0);
    cg_plan_touch();
}

int cg_recv_to(struct cg_call *c, int from, const struct cg_buf *tmp, long first, long n,
               const struct cg_buf *out, long ofirst)
{
    int rc = MPI_SUCCESS;
    int borrow = 0;

    if (!cg_recv_to_on) {
        return cg_recv(c, from, tmp, first, n);
    }
    CG_CHECK(cg_lazy_borrow(c, tmp, first, n, out, ofirst, &borrow));
    if (!borrow) {
        return cg_recv(c, from, tmp, first, n);
    }
    rc = cg_xchg_range(c, from, out, ofirst, n, 1);
out:
    return rc;
}

/* Why MPI_Wait per request, not MPI_Waitall: MPICH 4.0 reports a failed
 * request in MPI_Waitall through MPI_COMM_WORLD's error handler, which
 * aborts by default, whatever the request's communicator says; MPI_Wait
 * honours the duplicate's MPI_ERRORS_RETURN in both libraries, and returns
 * the request's own code where MPI_Waitall would say MPI_ERR_IN_STATUS.
 * After a failure of a request the remaining ones are still waited for, so
 * that no message of this exchange is left to match a later one. */
int cg_xchg_wait(struct cg_call *c)
{
    int rc = MPI_SUCCESS;

    if (c->cc->held.on) {
        /* First: the other requests are waited for after it. Why return at
         * once when it fails: a receive posted before it may be one only
         * this send would have matched (a message to self); the call's end
         * cancels the receives left and frees the sends (comm.c,
         * cg_call_abandon). */
        rc = cg_xchg_complete_held(c);
        if (rc != MPI_SUCCESS) {
            return rc;
        }
    }
    for (int i = 0; i < c->nreqs; i++) {
        int wrc = cg_xchg_wait_one(c, i);
        if ((wrc != MPI_SUCCESS) && (rc == MPI_SUCCESS)) {
            cg_error_mpi(wrc, __FILE__, __LINE__, "MPI_Wait");
            rc = wrc;
        }
    }
    /* A request that failed may still be allocated: cg_call_end frees it. */
    if (rc == MPI_SUCCESS) {
        c->nreqs = 0;
    }
    for (int i = 0; i < c->ntypes; i++) {
        int frc = MPI_Type_free(&c->types[i]);
        if ((frc != MPI_SUCCESS) && (rc == MPI_SUCCESS)) {
            cg_error_mpi(frc, __FILE__, __LINE__, "MPI_Type_free");
            rc = frc;
        }
    }
    c->ntypes = 0;
    c->nxrecv = 0;
    c->borrow_waited = c->borrow_on;
    return rc;
}

/* The recorded receive into blocks [first, first + n) of b, or NULL. */
static const struct cg_xrecv *cg_xchg_find(const struct cg_call *c, const struct cg_buf *b,
                                           long first, long n)
{
    long f = cg_mod(first, b->nblocks);
    for (int i = 0; i < c->nxrecv; i++) {
        const struct cg_xrecv *x = &c->cc->xrecv[i];
        if ((x->base == b->base) && (x->nblocks == b->nblocks) &&
            (x->geom.count == b->geom.count) && (x->geom.nb == b->geom.nb) && (x->first == f) &&
            (x->n == n)) {
            return x;
        }
    }
    return NULL;
}

/* Why the receive is waited for piece by piece and not the sends: the
 * reduce needs only the data it reads, and the sends, like the other
 * receives, complete in the background until the final cg_xchg_wait. */
int cg_xchg_wait_reduce(struct cg_call *c, const struct cg_buf *into, long ifirst,
                        const struct cg_buf *from, long ffirst, long n, int order)
{
    int rc = MPI_SUCCESS;
    int lazy = CG_LAZY_NONE;
    const struct cg_xrecv *x = NULL;
    struct cg_seg seg[2];
    int nseg = 0;
    struct cg_buf view; /* `from` may point here (cg_lazy_read, cg_lazy_take) until the end */

    if ((order != CG_INTO_FROM) && (order != CG_FROM_INTO)) {
        cg_set_error("collgen: cg_xchg_wait_reduce order %d is neither CG_INTO_FROM nor "
                     "CG_FROM_INTO", order);
        rc = MPI_ERR_ARG;
        goto out;
    }
    if (c->cc->held.on) {
        rc = cg_xchg_complete_held(c); /* every receive is posted: unsegmented */
        if (rc != MPI_SUCCESS) {
            return rc; /* as cg_xchg_wait does */
        }
    }
    if (c->borrow_on) {
        /* The receive landed in `into` (cg_recv_to): it is the recorded one
         * below, and each piece is reduced with sendbuf's as it arrives. */
        CG_CHECK(cg_lazy_take(c, into, ifirst, from, ffirst, n, &view, &lazy));
        if (lazy == CG_LAZY_SWAPPED) {
            from = &view;
            ffirst = ifirst;
        }
    }
    CG_CHECK(cg_range_segs(from, ffirst, n, seg, &nseg));
    size_t len = cg_segs_len(seg, nseg);
    if (len == 0) {
        goto out; /* nothing to reduce */
    }
    if (c->nseg > 1) {
        x = cg_xchg_find(c, from, ffirst, n);
        if (x == NULL) {
            x = cg_xchg_find(c, into, ifirst, n);
        }
    }
    if ((c->nseg > 1) && (x == NULL)) {
        cg_set_error("collgen: cg_xchg_wait_reduce: neither blocks [%ld, %ld + %ld) of from nor "
                     "[%ld, %ld + %ld) of into are a receive of this segmented exchange",
                     ffirst, ffirst, n, ifirst, ifirst, n);
        rc = MPI_ERR_INTERN;
        goto out;
    }
    /* The received range (from, or into) stands for no block of sendbuf
     * any more (cg_recv made it out's own); the other may: `from` is read
     * in its place, `into`'s pending blocks are settled now. No message in
     * flight touches either (gen/sim.c proved it). */
    if (cg_lazy_on(c) && (lazy == CG_LAZY_NONE)) {
        int from_in = 0;
        CG_CHECK(cg_lazy_read(c, from, ffirst, n, &view, &from));
        CG_CHECK(cg_lazy_into(c, into, ifirst, n, &from_in));
        lazy = from_in ? CG_LAZY_INPUT : CG_LAZY_NONE;
    }
    for (int j = 0; j < c->nseg; j++) {
        int lo = (x != NULL) ? x->req[j] : 0;
        int hi = (x != NULL) ? x->req[j + 1] : c->nreqs;
        for (int i = lo; i < hi; i++) {
            int wrc = cg_xchg_wait_one(c, i);
            if (wrc != MPI_SUCCESS) {
                /* The exchange failed: cg_call_finish cancels and frees
                 * what is left of it (comm.c, cg_call_abandon). */
                cg_error_mpi(wrc, __FILE__, __LINE__, "MPI_Wait");
                return wrc;
            }
        }
        CG_CHECK(cg_reduce_window(c, into, ifirst, from, ffirst, n, order, lazy,
                                  cg_xchg_cut(len, c->nseg, j), cg_xchg_cut(len, c->nseg, j + 1)));
    }
out:
    {
        /* Everything else, and after a failure every request still pending,
         * so that no message of this exchange is left to match a later one. */
        int wrc = cg_xchg_wait(c);
        return (rc != MPI_SUCCESS) ? rc : wrc;
    }
}
