/* xchg.c - exchanges: post every send and receive of a step, then wait.
 *
 * A block range becomes an element stream of at most two runs (two when it
 * wraps). The stream is cut into messages of at most max_elems elements,
 * counted from the start of the stream, so that a sender and a receiver that
 * move the same number of elements cut at the same places whatever their
 * runs are. A message inside one run is sent as (pointer, count, dtype); one
 * that straddles the wrap is an hindexed type over its two pieces.
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
}

int cg_xchg_begin(struct cg_call *c, int tag)
{
    c->nreqs = 0;
    c->ntypes = 0;
    c->tag = tag;
    return MPI_SUCCESS;
}

/* Makes room for one more request and one more derived type. */
static int cg_xchg_reserve(struct cg_call *c)
{
    struct cg_comm *cc = c->cc;

    if (c->nreqs == cc->reqs_cap) {
        int cap = (cc->reqs_cap > 0) ? (2 * cc->reqs_cap) : 16;
        MPI_Request *reqs = realloc(cc->reqs, (size_t)cap * sizeof(*reqs));
        if (reqs != NULL) {
            cc->reqs = reqs;
        }
        unsigned char *is_recv = realloc(cc->is_recv, (size_t)cap * sizeof(*is_recv));
        if (is_recv != NULL) {
            cc->is_recv = is_recv;
        }
        c->reqs = cc->reqs;
        if ((reqs == NULL) || (is_recv == NULL)) {
            cg_set_error("collgen: out of memory for %d requests", cap);
            return MPI_ERR_NO_MEM;
        }
        cc->reqs_cap = cap;
    }
    if (c->ntypes == cc->types_cap) {
        int cap = (cc->types_cap > 0) ? (2 * cc->types_cap) : 4;
        MPI_Datatype *types = realloc(cc->types, (size_t)cap * sizeof(*types));
        if (types == NULL) {
            cg_set_error("collgen: out of memory for %d datatypes", cap);
            return MPI_ERR_NO_MEM;
        }
        cc->types = types;
        cc->types_cap = cap;
        c->types = cc->types;
    }
    return MPI_SUCCESS;
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

    CG_CHECK(cg_xchg_reserve(c));
    if (npieces == 1) {
        ptr = b->base + (MPI_Aint)piece[0].off * c->extent;
        count = (int)piece[0].len;
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
        CG_CHECK_MPI(MPI_Type_create_hindexed(npieces, lens, disps, c->dtype, &type));
        c->types[c->ntypes++] = type;
        CG_CHECK_MPI(MPI_Type_commit(&c->types[c->ntypes - 1]));
        type = c->types[c->ntypes - 1];
    }
    c->cc->is_recv[c->nreqs] = (unsigned char)is_recv;
    if (is_recv) {
        CG_CHECK_MPI(MPI_Irecv(ptr, count, type, peer, c->tag, c->comm, &c->reqs[c->nreqs]));
    } else {
        CG_CHECK_MPI(MPI_Isend(ptr, count, type, peer, c->tag, c->comm, &c->reqs[c->nreqs]));
    }
    c->nreqs++;
out:
    if (lens != lens_2) {
        free(lens);
        free(disps);
    }
    return rc;
}

/* Cuts the element stream of nseg runs into messages and posts them. */
int cg_xchg_segs(struct cg_call *c, int peer, const struct cg_buf *b, const struct cg_seg *seg,
                 int nseg, int is_recv)
{
    int rc = MPI_SUCCESS;
    int s = 0;        /* run being consumed */
    size_t used = 0;  /* elements of seg[s] already in messages */
    struct cg_seg piece_2[2];
    struct cg_seg *piece = piece_2;

    if (nseg > 2) {
        piece = malloc((size_t)nseg * sizeof(*piece));
        if (piece == NULL) {
            cg_set_error("collgen: out of memory for a message of %d runs", nseg);
            return MPI_ERR_NO_MEM;
        }
    }
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
    if (piece != piece_2) {
        free(piece);
    }
    return rc;
}

/* Cuts the range's element stream into messages and posts them. */
static int cg_xchg_range(struct cg_call *c, int peer, const struct cg_buf *b, long first, long n,
                         int is_recv)
{
    int rc = MPI_SUCCESS;
    struct cg_seg seg[2];
    int nseg = 0;

    CG_CHECK(cg_range_segs(b, first, n, seg, &nseg));
    rc = cg_xchg_segs(c, peer, b, seg, nseg, is_recv);
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

/* Why MPI_Wait per request, not MPI_Waitall: MPICH 4.0 reports a failed
 * request in MPI_Waitall through MPI_COMM_WORLD's error handler, which
 * aborts by default, whatever the request's communicator says; MPI_Wait
 * honours the duplicate's MPI_ERRORS_RETURN in both libraries, and returns
 * the request's own code where MPI_Waitall would say MPI_ERR_IN_STATUS.
 * After a failure the remaining requests are still waited for, so that no
 * message of this exchange is left to match a later one. */
int cg_xchg_wait(struct cg_call *c)
{
    int rc = MPI_SUCCESS;

    for (int i = 0; i < c->nreqs; i++) {
        int wrc = MPI_Wait(&c->reqs[i], MPI_STATUS_IGNORE);
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
    return rc;
}
