/* prologue.c - what every generated collective does before its first phase
 * (cg.h, "prologues"): cg_begin_<coll>, one per collective, and cg_buffers.
 *
 * Why here and not in the emitted code: the set-up is the same for every
 * schedule of a collective (the caller's arguments, MPI_IN_PLACE, the root,
 * type pairs, scratch), so the generator once printed the same forty lines
 * into each of them. Written once, it is tested once (tests/test_runtime.c
 * runs every begin function and cg_buffers in and out of place, at and off
 * the root, with different type pairs), and an emitted function is its
 * schedule: two calls, then the phases.
 *
 * What is the same for every collective comes from the table (cg_colls.h):
 * the shapes of out and in, the count == 0 shortcut; what truly differs
 * per collective is a function or a case below: which datatype and count
 * this rank's blocks are in, and the copies.
 */
#include "cg_internal.h"

#include "cg_algo.h" /* cg_<coll>_fn, for the fallbacks */

/* What a begin function knows of its arguments, and the rest of the begin:
 * cg_call_begin, the record, the topology, the count. Returns MPI_SUCCESS,
 * an error, or CG_DONE: for a fallback to run (the call already ended,
 * c->topo NULL) or a count of 0 (c->result MPI_SUCCESS). */
struct args {
    int coll;
    const void *sendbuf;
    void *recvbuf;
    size_t sendcount, recvcount;
    MPI_Datatype sendtype, recvtype;
    int root;
    size_t count;       /* elements of this rank's blocks */
    MPI_Datatype dtype; /* the datatype they are counted in */
    MPI_Op op;          /* MPI_OP_NULL for collectives without one */
    struct cg_comm *cc; /* comm's context where the begin has it, else NULL */
};

static int begin(struct cg_call *c, const struct args *a, MPI_Comm comm, int flags,
                 cg_any_fn fallback, struct cg_site site)
{
    int rc = MPI_SUCCESS;
    MPI_Datatype dtype = a->dtype;
    size_t count = a->count;
    struct cg_plan *rec = NULL;

    /* A call with a plan is replayed before anything else (plan.c); the
     * key is the caller's arguments (count and dtype follow from them). */
    if (site.fn != NULL) {
        union cg_plan_words key;
        memset(&key, 0, sizeof(key));
        key.key.fn = site.fn;
        key.key.coll = a->coll;
        key.key.flags = flags;
        key.key.root = a->root;
        key.key.sendbuf = a->sendbuf;
        key.key.recvbuf = a->recvbuf;
        key.key.sendcount = a->sendcount;
        key.key.recvcount = a->recvcount;
        key.key.sendtype = a->sendtype;
        key.key.recvtype = a->recvtype;
        key.key.op = a->op;
        c->replayed = 0;
        rc = cg_plan_lookup(c, comm, a->cc, &key, site, &rec);
        if (rc == CG_DONE) {
            c->replayed = 1;
            goto out;
        }
        if (rc != MPI_SUCCESS) {
            memset(c, 0, sizeof(*c)); /* as below: cg_call_finish is safe on c */
            goto out;
        }
    }

    /* A collective that moves data without an op counts its blocks in the
     * basic elements of the signature (signature.c says why); one that
     * reduces has one (count, datatype) on every rank, as MPI requires. */
    if ((cg_colls[a->coll].combine == CG_COMBINE_NONE) && (a->dtype != MPI_DATATYPE_NULL)) {
        struct cg_sig sig;
        rc = cg_type_sig(a->dtype, &sig);
        if ((rc == MPI_SUCCESS) && (sig.per > 0) && (a->count > SIZE_MAX / sig.per)) {
            cg_set_error("collgen: %zu elements of %zu basic elements each overflow size_t",
                         a->count, sig.per);
            rc = MPI_ERR_COUNT;
        }
        if (rc != MPI_SUCCESS) {
            /* Why zeroed here and not first: cg_call_begin zeroes c anyway
             * (one memset of c per call, not two); cg_call_finish must be
             * safe on c after a failure before it too. */
            memset(c, 0, sizeof(*c));
            goto out;
        }
        dtype = sig.basic;
        count = a->count * sig.per;
    }
    /* cg_call_finish is safe on c from here on, whatever this returns. */
    CG_CHECK(cg_call_begin(c, comm, dtype, a->op, flags & CG_NEEDS_COMMUTATIVE));
    c->coll = a->coll;
    c->sendbuf = a->sendbuf;
    c->recvbuf = a->recvbuf;
    c->sendcount = a->sendcount;
    c->recvcount = a->recvcount;
    c->sendtype = a->sendtype;
    c->recvtype = a->recvtype;
    c->root = a->root;
    c->count = count;
    if ((flags & CG_NEEDS_TOPOLOGY) != 0) {
        const struct cg_topo *topo = NULL;
        CG_CHECK(cg_topo(c, &topo));
        CG_CHECK(cg_topo_fallback(topo, fallback));
        if (!topo->regular) {
            cg_call_end(c);
            rc = CG_DONE;
            goto out;
        }
        c->topo = topo;
    }
    c->empty = (cg_colls[a->coll].shape != CG_SHAPE_TOKEN) && (count == 0);
    if (c->empty && (flags & CG_READS_PARAMS) == 0) {
        rc = CG_DONE;
    }
    if ((rc == MPI_SUCCESS) && (rec != NULL)) {
        cg_plan_record(c, rec); /* from the buffers on, until cg_call_finish */
    }
out:
    return rc;
}

int cg_call_finish(struct cg_call *c, int rc)
{
    /* At most one of the two applies: lazy copies are the reducing
     * collectives', unpacking the others' (signature.c). */
    /* A receive into out no reduce consumed is not needed any more
     * (cg_recv_to): its blocks get sendbuf's data like any pending one. */
    c->borrow_on = 0;
    if ((rc == MPI_SUCCESS) && c->lazy_flush) {
        rc = cg_lazy_flush(c);
    }
    if ((rc == MPI_SUCCESS) && (c->unpack_to != NULL)) {
        rc = cg_sig_copy(c->unpack_to, c->unpack_count, c->unpack_type, c->unpack_from,
                         c->unpack_nbasic, c->dtype, 1);
    }
    if (c->cc != NULL) {
        cg_plan_end(c, rc); /* a recording call: its plan is complete */
    }
    cg_call_end(c);
    return (rc == CG_DONE) ? c->result : rc;
}

/* Whether begin's CG_DONE is for the fallback, not for a count of 0. */
static int falls_back(const struct cg_call *c, int rc)
{
    return (rc == CG_DONE) && !c->empty && !c->replayed;
}

/* The rank of the caller in comm, for the rooted collectives whose blocks'
 * datatype depends on it; c zeroed when this fails, so that cg_call_end is
 * safe on it (else begin's cg_call_begin zeroes it: one memset a call). */
static int rank_first(struct cg_call *c, MPI_Comm comm, int *rank)
{
    int rc = cg_comm_rank(comm, rank);
    if (rc != MPI_SUCCESS) {
        memset(c, 0, sizeof(*c));
    }
    return rc;
}

/* allreduce, scan and exscan: one signature (cg_allreduce_fn, cg_scan_fn
 * and cg_exscan_fn are one type). */
static int begin_vector(struct cg_call *c, int coll, const void *sendbuf, void *recvbuf,
                        size_t count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, int flags,
                        cg_any_fn fallback, struct cg_site site)
{
    struct args a = { coll, sendbuf, recvbuf, count, count, datatype, datatype, 0, count,
                      datatype, op, NULL };
    int rc = begin(c, &a, comm, flags, fallback, site);
    if (falls_back(c, rc)) {
        c->result = ((cg_allreduce_fn)fallback)(sendbuf, recvbuf, count, datatype, op, comm);
    }
    return rc;
}

/* allgather and alltoall: one signature. */
static int begin_pair(struct cg_call *c, int coll, const void *sendbuf, size_t sendcount,
                      MPI_Datatype sendtype, void *recvbuf, size_t recvcount,
                      MPI_Datatype recvtype, MPI_Comm comm, int flags, cg_any_fn fallback,
                      struct cg_site site)
{
    struct args a = { coll, sendbuf, recvbuf, sendcount, recvcount, sendtype, recvtype, 0,
                      recvcount, recvtype, MPI_OP_NULL, NULL };
    int rc = begin(c, &a, comm, flags, fallback, site);
    if (falls_back(c, rc)) {
        c->result = ((cg_allgather_fn)fallback)(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                                recvtype, comm);
    }
    return rc;
}

int cg_begin_allreduce(struct cg_call *c, CG_ALLREDUCE_ARGS, int flags, cg_any_fn fallback,
                       struct cg_site site)
{
    return begin_vector(c, CG_COLL_ALLREDUCE, sendbuf, recvbuf, count, datatype, op, comm, flags,
                        fallback, site);
}

int cg_begin_allgather(struct cg_call *c, CG_ALLGATHER_ARGS, int flags, cg_any_fn fallback,
                       struct cg_site site)
{
    return begin_pair(c, CG_COLL_ALLGATHER, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                      recvtype, comm, flags, fallback, site);
}

int cg_begin_reduce_scatter_block(struct cg_call *c, CG_REDUCE_SCATTER_BLOCK_ARGS, int flags,
                                  cg_any_fn fallback, struct cg_site site)
{
    struct args a = { CG_COLL_REDUCE_SCATTER_BLOCK, sendbuf, recvbuf, recvcount, recvcount,
                      datatype, datatype, 0, recvcount, datatype, op, NULL };
    int rc = begin(c, &a, comm, flags, fallback, site);
    if (falls_back(c, rc)) {
        c->result = ((cg_reduce_scatter_block_fn)fallback)(sendbuf, recvbuf, recvcount,
                                                           datatype, op, comm);
    }
    return rc;
}

int cg_begin_bcast(struct cg_call *c, CG_BCAST_ARGS, int flags, cg_any_fn fallback,
                   struct cg_site site)
{
    struct args a = { CG_COLL_BCAST, NULL, buffer, count, count, datatype, datatype, root,
                      count, datatype, MPI_OP_NULL, NULL };
    int rc = begin(c, &a, comm, flags, fallback, site);
    if (falls_back(c, rc)) {
        c->result = ((cg_bcast_fn)fallback)(buffer, count, datatype, root, comm);
    }
    return rc;
}

int cg_begin_reduce(struct cg_call *c, CG_REDUCE_ARGS, int flags, cg_any_fn fallback,
                    struct cg_site site)
{
    struct args a = { CG_COLL_REDUCE, sendbuf, recvbuf, count, count, datatype, datatype, root,
                      count, datatype, op, NULL };
    int rc = begin(c, &a, comm, flags, fallback, site);
    if (falls_back(c, rc)) {
        c->result = ((cg_reduce_fn)fallback)(sendbuf, recvbuf, count, datatype, op, root, comm);
    }
    return rc;
}

/* gather and scatter: one signature (cg_gather_fn is cg_scatter_fn), and
 * the datatype of this rank's blocks depends on the rank. gather: only the
 * root's recvcount and recvtype are significant: the root's blocks are
 * recvbuf's, every other rank keeps its blocks as sendcount x sendtype in
 * scratch. scatter: blocks are recvcount x recvtype, except at a root
 * called in place, whose recvcount and recvtype are not significant: it
 * works in sendtype, its block staying in sendbuf. Messages match because
 * MPI requires the type signatures to be equal. */
static int begin_rooted(struct cg_call *c, int coll, const void *sendbuf, size_t sendcount,
                        MPI_Datatype sendtype, void *recvbuf, size_t recvcount,
                        MPI_Datatype recvtype, int root, MPI_Comm comm, int flags,
                        cg_any_fn fallback, struct cg_site site)
{
    int rank = 0;
    int rc = MPI_SUCCESS;
    struct cg_comm *cc = NULL;

    /* The context's rank (the duplicate's is the caller's) where there is
     * one: MPI_Comm_rank was a tenth of a replayed call (plan.c). */
    if ((comm == MPI_COMM_NULL) || (cg_comm_context(comm, &cc) != MPI_SUCCESS) || (cc == NULL)) {
        rc = rank_first(c, comm, &rank);
        if (rc != MPI_SUCCESS) {
            return rc;
        }
    } else {
        rank = cc->rank;
    }
    int in_send = (coll == CG_COLL_GATHER) ? (rank != root)
                                           : ((rank == root) && (recvbuf == MPI_IN_PLACE));
    struct args a = { coll, sendbuf, recvbuf, sendcount, recvcount, sendtype, recvtype, root,
                      in_send ? sendcount : recvcount, in_send ? sendtype : recvtype,
                      MPI_OP_NULL, cc };
    rc = begin(c, &a, comm, flags, fallback, site);
    if (falls_back(c, rc)) {
        c->result = ((cg_gather_fn)fallback)(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                             recvtype, root, comm);
    }
    return rc;
}

int cg_begin_gather(struct cg_call *c, CG_GATHER_ARGS, int flags, cg_any_fn fallback,
                    struct cg_site site)
{
    return begin_rooted(c, CG_COLL_GATHER, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                        recvtype, root, comm, flags, fallback, site);
}

int cg_begin_scatter(struct cg_call *c, CG_SCATTER_ARGS, int flags, cg_any_fn fallback,
                     struct cg_site site)
{
    return begin_rooted(c, CG_COLL_SCATTER, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                        recvtype, root, comm, flags, fallback, site);
}

int cg_begin_alltoall(struct cg_call *c, CG_ALLTOALL_ARGS, int flags, cg_any_fn fallback,
                      struct cg_site site)
{
    return begin_pair(c, CG_COLL_ALLTOALL, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                      recvtype, comm, flags, fallback, site);
}

int cg_begin_scan(struct cg_call *c, CG_SCAN_ARGS, int flags, cg_any_fn fallback,
                  struct cg_site site)
{
    return begin_vector(c, CG_COLL_SCAN, sendbuf, recvbuf, count, datatype, op, comm, flags,
                        fallback, site);
}

int cg_begin_exscan(struct cg_call *c, CG_EXSCAN_ARGS, int flags, cg_any_fn fallback,
                    struct cg_site site)
{
    return begin_vector(c, CG_COLL_EXSCAN, sendbuf, recvbuf, count, datatype, op, comm, flags,
                        fallback, site);
}

/* No user data: every message carries a 1-byte token (the runtime posts
 * nothing for an empty range); merging tokens is a no-op. */
int cg_begin_barrier(struct cg_call *c, CG_BARRIER_ARGS, int flags, cg_any_fn fallback,
                     struct cg_site site)
{
    struct args a = { CG_COLL_BARRIER, NULL, NULL, 1, 1, MPI_BYTE, MPI_BYTE, 0, 1, MPI_BYTE,
                      MPI_OP_NULL, NULL };
    int rc = begin(c, &a, comm, flags, fallback, site);
    if (falls_back(c, rc)) {
        c->result = ((cg_barrier_fn)fallback)(comm);
    }
    return rc;
}

/* n blocks of g in scratch slot `slot` as b's base; *rc on failure. */
static int scratch(struct cg_call *c, int slot, const struct cg_geom *g, long n, struct cg_buf *b)
{
    int rc = MPI_SUCCESS;
    b->base = cg_scratch(c, slot, cg_buf_bytes(c, g, n), &rc);
    return rc;
}

/* The caller's buffer buf, n x type holding nbasic of c's basic elements,
 * as those elements: buf itself where type is dense in c->dtype (cg_sig),
 * else scratch slot `slot`, packed from buf when pack. */
static int basic_of(struct cg_call *c, int slot, const void *buf, size_t n, MPI_Datatype type,
                    size_t nbasic, int pack, char **base)
{
    int rc = MPI_SUCCESS;
    struct cg_sig sig;

    CG_CHECK(cg_type_sig(type, &sig));
    if (sig.dense && (sig.basic == c->dtype) && (n * sig.per == nbasic)) {
        *base = (char *)buf;
        goto out;
    }
    *base = cg_scratch(c, slot, nbasic * (size_t)c->extent, &rc);
    if ((*base != NULL) && pack) {
        CG_CHECK(cg_sig_copy((void *)buf, n, type, *base, nbasic, c->dtype, 0));
    }
out:
    return rc;
}

/* out over the caller's result buffer (n x type, nbasic basic elements):
 * the buffer itself, or where it is not dense scratch slot 2 (packed from
 * it when pack), unpacked into it by cg_call_finish when unpack. */
static int result_of(struct cg_call *c, void *buf, size_t n, MPI_Datatype type, size_t nbasic,
                     int pack, int unpack, struct cg_buf *out)
{
    int rc = MPI_SUCCESS;

    CG_CHECK(basic_of(c, 2, buf, n, type, nbasic, pack, &out->base));
    if ((out->base != (char *)buf) && unpack) {
        c->unpack_to = buf;
        c->unpack_count = n;
        c->unpack_type = type;
        c->unpack_from = out->base;
        c->unpack_nbasic = nbasic;
    }
out:
    return rc;
}

/* The copies and scratch each collective's buffers need (out and in are
 * over the caller's memory already). The collectives without an op work
 * in basic elements (begin): a caller's buffer that is not dense in them
 * is packed into scratch, the result unpacked at the end. */
static int copies(struct cg_call *c, const struct cg_geom *g, struct cg_buf *in,
                  struct cg_buf *out)
{
    int rc = MPI_SUCCESS;
    const void *sendbuf = c->sendbuf;
    void *recvbuf = c->recvbuf;
    int rank = c->rank, root = c->root, p = c->p;
    size_t np = (size_t)p;

    switch ((enum cg_coll)c->coll) {
    case CG_COLL_ALLREDUCE:
    case CG_COLL_SCAN:
        if (sendbuf != MPI_IN_PLACE) {
            CG_CHECK(cg_lazy_start(c, out, sendbuf, 1)); /* the copy, on first use */
        }
        break;
    case CG_COLL_REDUCE:
        /* recvbuf is significant only at the root: elsewhere the partial
         * results live in scratch. */
        if (rank != root) {
            CG_CHECK(scratch(c, 1, g, out->nblocks, out));
        }
        if (sendbuf != MPI_IN_PLACE) {
            CG_CHECK(cg_lazy_start(c, out, sendbuf, rank == root));
        }
        break;
    case CG_COLL_BCAST:
        /* The root's buffer is the input, everyone else's the result. */
        CG_CHECK(result_of(c, recvbuf, c->recvcount, c->recvtype, c->count, rank == root,
                           rank != root, out));
        break;
    case CG_COLL_ALLGATHER:
    case CG_COLL_GATHER: {
        /* gather: recvbuf is significant only at the root: elsewhere gather
         * into scratch. */
        if ((c->coll == CG_COLL_GATHER) && (rank != root)) {
            CG_CHECK(scratch(c, 1, g, p, out));
        } else {
            CG_CHECK(result_of(c, recvbuf, np * c->recvcount, c->recvtype, g->count, 0, 1, out));
        }
        char *mine = out->base + cg_geom_off(g, rank) * (size_t)c->extent;
        if ((c->coll == CG_COLL_GATHER) && (rank != root) && (c->sendtype == c->dtype) &&
            (c->sendcount == c->count)) {
            /* A non-root's own block, on first use (lazy.c): a leaf of a
             * tree sends it from sendbuf, as native gathers do, instead of
             * copying it into scratch first (MPICH binomial at p = 2,
             * 512 KiB: 2.15x native with the copy, harness/measurements/
             * 2026-12-06-speed-quiet.md). Only where sendbuf holds the block
             * in the working type as it is; scratch is not the result, so
             * nothing is copied at the end. */
            CG_CHECK(cg_lazy_start_range(c, out, sendbuf, rank, 1, 0));
        } else if (sendbuf != MPI_IN_PLACE) {
            CG_CHECK(cg_sig_copy((void *)sendbuf, c->sendcount, c->sendtype, mine, c->count,
                                 c->dtype, 0));
        } else if (out->base != (char *)recvbuf) {
            /* In place, this rank's block is in a recvbuf that is not
             * dense: pack that block. */
            MPI_Aint lb = 0, extent = 0;
            CG_CHECK_MPI(MPI_Type_get_extent(c->recvtype, &lb, &extent));
            CG_CHECK(cg_sig_copy((char *)recvbuf + (MPI_Aint)rank * (MPI_Aint)c->recvcount * extent,
                                 c->recvcount, c->recvtype, mine, c->count, c->dtype, 0));
        }
        break;
    }
    case CG_COLL_SCATTER:
        /* The root's input in basic elements: sendbuf itself where dense,
         * else packed. At the root in place, out is the root's own block of
         * it (the schedule's copy of it onto itself is a no-op). */
        if (rank == root) {
            CG_CHECK(basic_of(c, 1, sendbuf, np * c->sendcount, c->sendtype, g->count, 1,
                              &in->base));
        }
        if ((rank == root) && (recvbuf == MPI_IN_PLACE)) {
            out->base = in->base + cg_geom_off(g, root) * (size_t)c->extent;
        } else {
            CG_CHECK(result_of(c, recvbuf, c->recvcount, c->recvtype, c->count, 0, 1, out));
        }
        break;
    case CG_COLL_ALLTOALL:
        /* The input in basic elements: sendbuf itself where dense, else
         * packed; in place (it is recvbuf, which the result overwrites) a
         * copy. */
        if (sendbuf == MPI_IN_PLACE) {
            CG_CHECK(scratch(c, 1, g, p, in));
            CG_CHECK(cg_sig_copy(recvbuf, np * c->recvcount, c->recvtype, in->base, g->count,
                                 c->dtype, 0));
        } else {
            CG_CHECK(basic_of(c, 1, sendbuf, np * c->sendcount, c->sendtype, g->count, 1,
                              &in->base));
        }
        CG_CHECK(result_of(c, recvbuf, np * c->recvcount, c->recvtype, g->count, 0, 1, out));
        break;
    case CG_COLL_REDUCE_SCATTER_BLOCK:
    case CG_COLL_EXSCAN:
        /* In place, the input is recvbuf, which the result overwrites: work
         * on a copy. */
        if (sendbuf == MPI_IN_PLACE) {
            CG_CHECK(scratch(c, 1, g, in->nblocks, in));
            CG_CHECK(cg_copy_typed(recvbuf, g->count, c->dtype, in->base, g->count, c->dtype));
        }
        break;
    case CG_COLL_BARRIER:
    case CG_COLL_COUNT_:
        break;
    }
out:
    return rc;
}

int cg_buffers(struct cg_call *c, long nb, struct cg_buf *in, struct cg_buf *out,
               struct cg_buf *tmp, long ntmp)
{
    int rc = MPI_SUCCESS;
    struct cg_geom g;

    if ((c->cc == NULL) || (c->coll < 0) || (c->coll >= CG_COLL_COUNT_)) {
        cg_set_error("collgen: cg_buffers without a begun call");
        return MPI_ERR_INTERN;
    }
    CG_CHECK(cg_layout(c->coll, c->p, c->count, nb, c->sendbuf, c->recvbuf, &c->token, in, out,
                       tmp, ntmp, &g));
    CG_CHECK(copies(c, &g, in, out));
    if (tmp != NULL) {
        CG_CHECK(scratch(c, 0, &g, ntmp, tmp));
    }
out:
    return rc;
}
