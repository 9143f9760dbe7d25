/* call.c - a schedule's call step: another collective (the MPI library's
 * own, or a generated one) on the whole communicator, on views of the
 * caller's buffers. The verifier proved the views have the callee's shape,
 * do not wrap, and overlap only in the callee's in-place form; this file
 * turns them into pointers and counts. Where the caller's blocks have uneven
 * sizes (count not divisible by B), the native equal-block collectives are
 * replaced by their v-variants (MPI_Allgatherv, MPI_Reduce_scatter, ...). */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "cg.h"
#include "cg_algo.h"
#include "cg_internal.h"

struct view {
    char *ptr;  /* first byte (NULL: no view) */
    size_t len; /* elements */
};

static int view_of(const struct cg_call *c, const struct cg_buf *b, long first, long n,
                   struct view *v)
{
    v->ptr = NULL;
    v->len = 0;
    if (b == NULL) {
        return MPI_SUCCESS;
    }
    if (n < 0 || first < 0 || (n > 0 && first + n > b->nblocks)) {
        cg_set_error("collgen: call step: view [%ld, %ld + %ld) of a %ld-block buffer wraps",
                     first, first, n, b->nblocks);
        return MPI_ERR_INTERN;
    }
    size_t off = cg_geom_off(&b->geom, first);
    v->ptr = (b->base != NULL) ? b->base + off * (size_t)c->extent : NULL;
    v->len = cg_geom_off(&b->geom, first + n) - off;
    return MPI_SUCCESS;
}

/* Element counts and displacements of the p groups of g blocks from first. */
static int groups(const struct cg_buf *b, long first, long g, int p, int *counts, int *displs)
{
    size_t base = cg_geom_off(&b->geom, first);
    for (int i = 0; i < p; i++) {
        size_t a = cg_geom_off(&b->geom, first + (long)i * g);
        size_t e = cg_geom_off(&b->geom, first + (long)(i + 1) * g);
        if (e - a > INT_MAX || a - base > INT_MAX) {
            cg_set_error("collgen: call step: a native v-collective count or displacement "
                         "exceeds INT_MAX");
            return MPI_ERR_COUNT;
        }
        counts[i] = (int)(e - a);
        displs[i] = (int)(a - base);
    }
    return MPI_SUCCESS;
}

static int icount(size_t n, int *out)
{
    if (n > INT_MAX) {
        cg_set_error("collgen: call step: count %zu exceeds INT_MAX, which the native "
                     "collective takes", n);
        return MPI_ERR_COUNT;
    }
    *out = (int)n;
    return MPI_SUCCESS;
}

#define TRYRC(expr)                        \
    do {                                   \
        if ((rc = (expr)) != MPI_SUCCESS) { \
            goto out;                      \
        }                                  \
    } while (0)

/* Why: MPICH 4.0.2's MPI_Reduce with MPI_IN_PLACE at a root other than 0
 * crashes (SIGSEGV inside the library) from 4096 ints at 3 and 4 ranks
 * (harness/README.md; pmodels/mpich#6540). Under MPICH the root passes a
 * copy of its data as sendbuf instead: one copy, and no crash. Decided once
 * (the library does not change while the process runs). */
static int is_mpich(void)
{
    static int known = -1;
    if (known < 0) {
        char v[MPI_MAX_LIBRARY_VERSION_STRING];
        int len = 0;
        known = (MPI_Get_library_version(v, &len) == MPI_SUCCESS) && (strstr(v, "MPICH") != NULL);
    }
    return known;
}

static int reduce_in_place_copy(void *buf, int n, MPI_Datatype dt, MPI_Op op, int root,
                                MPI_Comm comm)
{
    int rc = MPI_SUCCESS;
    MPI_Aint lb = 0, extent = 0, true_lb = 0, true_extent = 0;
    char *copy = NULL;

    CG_CHECK_MPI(MPI_Type_get_extent(dt, &lb, &extent));
    CG_CHECK_MPI(MPI_Type_get_true_extent(dt, &true_lb, &true_extent));
    copy = malloc((size_t)n * (size_t)extent + (size_t)true_lb + (size_t)true_extent);
    if (copy == NULL) {
        cg_set_error("collgen: call step: out of memory for the copy of an in-place reduce");
        rc = MPI_ERR_NO_MEM;
        goto out;
    }
    CG_CHECK(cg_copy_typed(buf, (size_t)n, dt, copy, (size_t)n, dt));
    CG_CHECK_MPI(MPI_Reduce(copy, buf, n, dt, op, root, comm));
out:
    free(copy);
    return rc;
}

int cg_call_split(struct cg_call *c, const char *site, long instance, int color, MPI_Comm *sub)
{
    int rc = MPI_SUCCESS;
    struct cg_comm *cc = c->cc;
    for (int i = 0; i < cc->nsplits; i++) {
        if (cc->splits[i].instance == instance && strcmp(cc->splits[i].site, site) == 0) {
            *sub = cc->splits[i].comm;
            return MPI_SUCCESS;
        }
    }
    if (cc->nsplits == cc->splits_cap) {
        int cap = cc->splits_cap ? 2 * cc->splits_cap : 8;
        struct cg_split *a = realloc(cc->splits, sizeof(*a) * (size_t)cap);
        if (a == NULL) {
            cg_set_error("collgen: call step: out of memory");
            return MPI_ERR_NO_MEM;
        }
        cc->splits = a;
        cc->splits_cap = cap;
    }
    MPI_Comm comm = MPI_COMM_NULL;
    CG_CHECK_MPI(MPI_Comm_split(c->comm, color, c->rank, &comm));
    cc->splits[cc->nsplits++] = (struct cg_split){ site, instance, comm };
    *sub = comm;
out:
    return rc;
}

int cg_call_coll(struct cg_call *c, int coll, cg_any_fn fn, int root, const struct cg_buf *sb,
                 long sfirst, long sn, const struct cg_buf *rb, long rfirst, long rn)
{
    return cg_call_coll_in(c, c->comm, coll, fn, root, sb, sfirst, sn, rb, rfirst, rn);
}

int cg_call_coll_in(struct cg_call *c, MPI_Comm comm, int coll, cg_any_fn fn, int root,
                    const struct cg_buf *sb, long sfirst, long sn, const struct cg_buf *rb,
                    long rfirst, long rn)
{
    int rc = MPI_SUCCESS;
    int p = 0, me = 0;
    struct view s, r;
    int *counts = NULL, *displs = NULL, *rcounts = NULL, *rdispls = NULL;
    cg_plan_refuse(); /* another collective: a plan holds none (plan.c) */
    CG_CHECK(cg_lazy_flush(c)); /* the callee sees the caller's memory (lazy.c) */
    CG_CHECK_MPI(MPI_Comm_size(comm, &p));
    CG_CHECK_MPI(MPI_Comm_rank(comm, &me));
    TRYRC(view_of(c, sb, sfirst, sn, &s));
    TRYRC(view_of(c, rb, rfirst, rn, &r));
    const struct cg_buf *gb = (rb != NULL) ? rb : sb;
    int uneven = (gb->geom.count % (size_t)gb->geom.nb) != 0;
    MPI_Datatype dt = c->dtype;
    MPI_Op op = c->op;
    int n = 0;
    if (uneven) {
        counts = malloc(sizeof(int) * (size_t)p * 4);
        if (counts == NULL) {
            rc = MPI_ERR_NO_MEM;
            goto out;
        }
        displs = counts + p;
        rcounts = counts + 2 * p;
        rdispls = counts + 3 * p;
    }
    switch ((enum cg_coll)coll) {
    case CG_COLL_ALLREDUCE:
    case CG_COLL_SCAN:
    case CG_COLL_EXSCAN: {
        const void *sp = (s.ptr == r.ptr) ? MPI_IN_PLACE : s.ptr;
        if (fn != NULL) {
            rc = ((cg_allreduce_fn)fn)(sp, r.ptr, s.len, dt, op, comm);
            break;
        }
        TRYRC(icount(s.len, &n));
        if (coll == CG_COLL_ALLREDUCE) {
            CG_CHECK_MPI(MPI_Allreduce(sp, r.ptr, n, dt, op, comm));
        } else if (coll == CG_COLL_SCAN) {
            CG_CHECK_MPI(MPI_Scan(sp, r.ptr, n, dt, op, comm));
        } else {
            CG_CHECK_MPI(MPI_Exscan(sp, r.ptr, n, dt, op, comm));
        }
        break;
    }
    case CG_COLL_REDUCE: {
        const void *sp = (me == root && s.ptr == r.ptr) ? MPI_IN_PLACE : s.ptr;
        void *rp = (me == root) ? r.ptr : NULL;
        if (fn != NULL) {
            rc = ((cg_reduce_fn)fn)(sp, rp, s.len, dt, op, root, comm);
            break;
        }
        TRYRC(icount(s.len, &n));
        if (sp == MPI_IN_PLACE && root != 0 && n > 0 && is_mpich()) {
            TRYRC(reduce_in_place_copy(r.ptr, n, dt, op, root, comm));
            break;
        }
        CG_CHECK_MPI(MPI_Reduce(sp, rp, n, dt, op, root, comm));
        break;
    }
    case CG_COLL_BCAST:
        if (fn != NULL) {
            rc = ((cg_bcast_fn)fn)(r.ptr, r.len, dt, root, comm);
            break;
        }
        TRYRC(icount(r.len, &n));
        CG_CHECK_MPI(MPI_Bcast(r.ptr, n, dt, root, comm));
        break;
    case CG_COLL_ALLGATHER:
    case CG_COLL_GATHER: {
        int gathers = coll == CG_COLL_GATHER;
        int recv = !gathers || me == root;
        const void *sp = s.ptr;
        void *rp = recv ? r.ptr : NULL;
        if (recv && sn > 0) {
            struct view mine;
            TRYRC(view_of(c, rb, rfirst + (long)me * sn, sn, &mine));
            sp = (mine.ptr == s.ptr) ? MPI_IN_PLACE : s.ptr;
        }
        if (fn != NULL) {
            rc = gathers ? ((cg_gather_fn)fn)(sp, s.len, dt, rp, s.len, dt, root, comm)
                         : ((cg_allgather_fn)fn)(sp, s.len, dt, rp, s.len, dt, comm);
            break;
        }
        TRYRC(icount(s.len, &n));
        if (!uneven) {
            if (gathers) {
                CG_CHECK_MPI(MPI_Gather(sp, n, dt, rp, recv ? n : 0, dt, root, comm));
            } else {
                CG_CHECK_MPI(MPI_Allgather(sp, n, dt, rp, n, dt, comm));
            }
            break;
        }
        TRYRC(groups(rb, rfirst, sn, p, counts, displs));
        if (gathers) {
            CG_CHECK_MPI(MPI_Gatherv(sp, n, dt, rp, counts, displs, dt, root, comm));
        } else {
            CG_CHECK_MPI(MPI_Allgatherv(sp, n, dt, rp, counts, displs, dt, comm));
        }
        break;
    }
    case CG_COLL_SCATTER: {
        int send = me == root;
        const void *sp = send ? s.ptr : NULL;
        void *rp = r.ptr;
        if (send && rn > 0) {
            struct view mine;
            TRYRC(view_of(c, sb, sfirst + (long)me * rn, rn, &mine));
            rp = (mine.ptr == r.ptr) ? MPI_IN_PLACE : r.ptr;
        }
        if (fn != NULL) {
            rc = ((cg_scatter_fn)fn)(sp, r.len, dt, rp, r.len, dt, root, comm);
            break;
        }
        TRYRC(icount(r.len, &n));
        if (!uneven) {
            CG_CHECK_MPI(MPI_Scatter(sp, send ? n : 0, dt, rp, n, dt, root, comm));
            break;
        }
        TRYRC(groups(sb, sfirst, rn, p, counts, displs));
        CG_CHECK_MPI(MPI_Scatterv(sp, counts, displs, dt, rp, n, dt, root, comm));
        break;
    }
    case CG_COLL_ALLTOALL: {
        const void *sp = (s.ptr == r.ptr) ? MPI_IN_PLACE : s.ptr;
        long g = sn / p;
        size_t per = (p > 0) ? s.len / (size_t)p : 0;
        if (fn != NULL) {
            rc = ((cg_alltoall_fn)fn)(sp, per, dt, r.ptr, per, dt, comm);
            break;
        }
        if (!uneven) {
            TRYRC(icount(per, &n));
            CG_CHECK_MPI(MPI_Alltoall(sp, n, dt, r.ptr, n, dt, comm));
            break;
        }
        TRYRC(groups(sb, sfirst, g, p, counts, displs));
        TRYRC(groups(rb, rfirst, g, p, rcounts, rdispls));
        CG_CHECK_MPI(MPI_Alltoallv(sp, counts, displs, dt, r.ptr, rcounts, rdispls, dt, comm));
        break;
    }
    case CG_COLL_REDUCE_SCATTER_BLOCK:
        if (fn != NULL) {
            rc = ((cg_reduce_scatter_block_fn)fn)(s.ptr, r.ptr, r.len, dt, op, comm);
            break;
        }
        if (!uneven) {
            TRYRC(icount(r.len, &n));
            CG_CHECK_MPI(MPI_Reduce_scatter_block(s.ptr, r.ptr, n, dt, op, comm));
            break;
        }
        TRYRC(groups(sb, sfirst, rn, p, counts, displs));
        CG_CHECK_MPI(MPI_Reduce_scatter(s.ptr, r.ptr, counts, dt, op, comm));
        break;
    default:
        cg_set_error("collgen: call step: collective %d cannot be called", coll);
        rc = MPI_ERR_INTERN;
        break;
    }
out:
    free(counts);
    return rc;
}

/* b seen as bytes: the same blocks, each extent times as long. Exact only
 * for equal blocks (the split of count * extent bytes into nb blocks is the
 * split of count elements, scaled, only when nb divides count). */
static int bytes_of(const struct cg_call *c, const struct cg_buf *b, struct cg_buf *out)
{
    if (b == NULL) {
        return MPI_SUCCESS;
    }
    if (b->geom.count % (size_t)b->geom.nb != 0) {
        cg_set_error("collgen: a bitwise-or call needs equal blocks (%zu elements in %ld blocks)",
                     b->geom.count, b->geom.nb);
        return MPI_ERR_ARG;
    }
    *out = *b;
    out->geom.count = b->geom.count * (size_t)c->extent;
    return MPI_SUCCESS;
}

int cg_call_coll_bor_in(struct cg_call *c, MPI_Comm comm, int coll, cg_any_fn fn, int root,
                        const struct cg_buf *sb, long sfirst, long sn, const struct cg_buf *rb,
                        long rfirst, long rn)
{
    int rc = MPI_SUCCESS;
    int contiguous = 0;
    struct cg_call bc;
    struct cg_buf sbb, rbb;

    CG_CHECK(cg_lazy_flush(c)); /* before the copy of c (lazy.c) */
    bc = *c;
    CG_CHECK(cg_type_is_contiguous(c->dtype, &contiguous));
    if (!contiguous) {
        cg_set_error("collgen: a bitwise-or call (zero-filled mock-up) needs a contiguous "
                     "datatype");
        rc = MPI_ERR_TYPE;
        goto out;
    }
    CG_CHECK(bytes_of(c, sb, &sbb));
    CG_CHECK(bytes_of(c, rb, &rbb));
    bc.dtype = MPI_BYTE;
    bc.extent = 1;
    bc.true_lb = 0;
    bc.true_extent = 1;
    bc.contiguous = 1;
    bc.op = MPI_BOR;
    bc.kernel = -1;
    rc = cg_call_coll_in(&bc, comm, coll, fn, root, (sb != NULL) ? &sbb : NULL, sfirst, sn,
                         (rb != NULL) ? &rbb : NULL, rfirst, rn);
out:
    return rc;
}

int cg_call_coll_bor(struct cg_call *c, int coll, cg_any_fn fn, int root, const struct cg_buf *sb,
                     long sfirst, long sn, const struct cg_buf *rb, long rfirst, long rn)
{
    return cg_call_coll_bor_in(c, c->comm, coll, fn, root, sb, sfirst, sn, rb, rfirst, rn);
}
