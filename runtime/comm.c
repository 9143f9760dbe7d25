/* comm.c - the context cached on a communicator, and per-call state.
 *
 * The first call on a communicator duplicates it (the schedule's messages
 * then never match the caller's), sets MPI_ERRORS_RETURN on the duplicate,
 * and caches both with the scratch slots and the request and datatype arrays
 * as an attribute of the caller's communicator. Freeing that communicator
 * runs cg_comm_delete, which frees them.
 *
 * Why an attribute: an emitted collective has the MPI signature, so it has
 * nowhere to keep state between calls except the communicator. Duplicating
 * on every call would be a collective operation plus allocations per call;
 * a table keyed by handle would outlive communicators it cannot see freed.
 * The attribute is what MPI offers for this, and its delete callback ties the
 * context's life to the communicator's.
 */
#include "cg_internal.h"

#include <stdatomic.h>
#include <stdlib.h>

/* Why: the keyval is the runtime's one piece of static state. It names the
 * attribute slot on every communicator, so it must be shared by all of them,
 * and it is created once, on first use. It is never freed: a freed keyval
 * would orphan contexts still cached. Creation is not guarded against two
 * threads racing on the first call (MPI_THREAD_MULTIPLE callers must make
 * one call first). */
static int cg_comm_keyval = MPI_KEYVAL_INVALID;

/* Why a one-entry memory of the last communicator looked up, besides the
 * attribute: MPI_Comm_get_attr is a hash lookup in both libraries, the
 * largest part of a small call's set-up that was left (perf, p = 1;
 * harness/measurements/2026-12-06-overhead.md). Per thread, so that threads
 * calling on different communicators do not share it. It stays right when
 * a communicator is freed and its handle reused: every context's delete
 * callback advances cg_comm_gen, and an entry counts only while the
 * generation it was taken in is current; a freed handle can therefore
 * never find the old context. */
static _Atomic unsigned cg_comm_gen;
static _Thread_local struct {
    MPI_Comm comm;       /* the caller's communicator */
    struct cg_comm *cc;  /* its context (NULL: no entry) */
    unsigned gen;        /* cg_comm_gen when it was taken */
} cg_comm_last;

static void cg_comm_remember(MPI_Comm comm, struct cg_comm *cc, unsigned gen)
{
    cg_comm_last.comm = comm;
    cg_comm_last.cc = cc;
    cg_comm_last.gen = gen;
}

static void cg_comm_destroy(struct cg_comm *cc)
{
    cg_plan_free_all(cc->plans);
    for (int i = 0; i < CG_NSCRATCH; i++) {
        free(cc->scratch[i]);
    }
    free(cc->reqs);
    free(cc->is_recv);
    free(cc->xrecv);
    free(cc->types);
    free(cc->splits);
    free(cc->lazy);
    free(cc->pack);
    free(cc->unpack);
    free(cc->upiece);
    free(cc);
}

/* Attribute delete callback: the caller's communicator is being freed. */
static int cg_comm_delete(MPI_Comm comm, int keyval, void *attr, void *extra)
{
    struct cg_comm *cc = attr;
    int rc = MPI_SUCCESS;

    (void)comm;
    (void)keyval;
    (void)extra;
    atomic_fetch_add_explicit(&cg_comm_gen, 1u, memory_order_release);
    for (int i = 0; i < cc->nsplits; i++) {
        CG_CHECK_MPI(MPI_Comm_free(&cc->splits[i].comm));
    }
    cg_topo_free(&cc->topo);
    CG_CHECK_MPI(MPI_Comm_free(&cc->comm));
out:
    cg_comm_destroy(cc);
    return rc;
}

/* Creates the context of `comm`: duplicate, error handler, rank and size. */
static int cg_comm_create(MPI_Comm comm, struct cg_comm **out_cc)
{
    int rc = MPI_SUCCESS;
    int inter = 0;
    struct cg_comm *cc = NULL;

    CG_CHECK_MPI(MPI_Comm_test_inter(comm, &inter));
    if (inter) {
        cg_set_error("collgen: intercommunicators are not supported");
        rc = MPI_ERR_COMM;
        goto out;
    }
    cc = calloc(1, sizeof(*cc));
    if (cc == NULL) {
        cg_set_error("collgen: out of memory for a communicator context");
        rc = MPI_ERR_NO_MEM;
        goto out;
    }
    cc->comm = MPI_COMM_NULL;
    for (int i = 0; i < CG_NTYPEINFO; i++) {
        cc->typeinfo[i].type = MPI_DATATYPE_NULL; /* free slot */
    }
    CG_CHECK_MPI(MPI_Comm_dup(comm, &cc->comm));
    CG_CHECK_MPI(MPI_Comm_set_errhandler(cc->comm, MPI_ERRORS_RETURN));
    CG_CHECK_MPI(MPI_Comm_rank(cc->comm, &cc->rank));
    CG_CHECK_MPI(MPI_Comm_size(cc->comm, &cc->p));
    CG_CHECK_MPI(MPI_Comm_set_attr(comm, cg_comm_keyval, cc));
    *out_cc = cc;
    cc = NULL;
out:
    if (cc != NULL) {
        if (cc->comm != MPI_COMM_NULL) {
            (void)MPI_Comm_free(&cc->comm); /* already failing: keep the first error */
        }
        cg_comm_destroy(cc);
    }
    return rc;
}

/* The context cached on `comm`, or NULL when it has none yet (the keyval
 * created on the first call). */
static int cg_comm_find(MPI_Comm comm, struct cg_comm **out_cc)
{
    int rc = MPI_SUCCESS;
    int found = 0;
    void *attr = NULL;
    unsigned gen = atomic_load_explicit(&cg_comm_gen, memory_order_acquire);

    *out_cc = NULL;
    if ((cg_comm_last.cc != NULL) && (cg_comm_last.comm == comm) && (cg_comm_last.gen == gen)) {
        *out_cc = cg_comm_last.cc;
        goto out;
    }
    if (cg_comm_keyval == MPI_KEYVAL_INVALID) {
        CG_CHECK_MPI(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, cg_comm_delete,
                                            &cg_comm_keyval, NULL));
    }
    CG_CHECK_MPI(MPI_Comm_get_attr(comm, cg_comm_keyval, &attr, &found));
    if (found) {
        *out_cc = attr;
        cg_comm_remember(comm, attr, gen);
    }
out:
    return rc;
}

int cg_comm_context(MPI_Comm comm, struct cg_comm **cc)
{
    return cg_comm_find(comm, cc);
}

/* What cg_call_begin needs of datatype t: from cc's memory of it (cc may
 * be NULL: the communicator has no context yet), else from MPI; *seen is
 * the slot that remembers t, NULL when t is new to cc; *use the answers
 * (that slot, or *ti filled from MPI).
 *
 * Why only named datatypes are remembered: a named (predefined) datatype is
 * never freed, so its handle means the same type for the whole run. A
 * derived one may be freed by the caller between two calls and its handle
 * given to a new type with other extents, which a memory keyed by handle
 * could not see; so a derived type is asked every call, as before. Its slot
 * says only "not named", which stays true when the handle is reused: a
 * reused handle was freed, and named handles never are, so it is a derived
 * type's again (tests/test_runtime.c frees and re-creates one between
 * calls). */
static int type_info(struct cg_comm *cc, MPI_Datatype t, struct cg_type_info *ti,
                     struct cg_type_info **seen, const struct cg_type_info **use)
{
    int rc = MPI_SUCCESS;
    MPI_Aint lb = 0;

    *seen = NULL;
    *use = ti;
    if (cc != NULL) {
        for (int i = 0; i < CG_NTYPEINFO; i++) {
            if (cc->typeinfo[i].type == t) {
                *seen = &cc->typeinfo[i];
                break;
            }
        }
    }
    if ((*seen != NULL) && (*seen)->named) {
        *use = *seen; /* read in place: a copy of the struct stalled on store forwarding */
        goto out;
    }
    ti->type = t;
    ti->named = 0;
    CG_CHECK_MPI(MPI_Type_get_extent(t, &lb, &ti->extent));
    CG_CHECK_MPI(MPI_Type_get_true_extent(t, &ti->true_lb, &ti->true_extent));
    CG_CHECK(cg_type_is_contiguous(t, &ti->contiguous));
    if (*seen == NULL) {
        int ni = 0, na = 0, nd = 0, comb = MPI_COMBINER_NAMED;
        CG_CHECK_MPI(MPI_Type_get_envelope(t, &ni, &na, &nd, &comb));
        ti->named = (comb == MPI_COMBINER_NAMED);
    }
out:
    return rc;
}

/* Remembers t's answers in cc (round robin over the slots). */
static void type_remember(struct cg_comm *cc, const struct cg_type_info *ti)
{
    cc->typeinfo[cc->typeinfo_next] = *ti;
    cc->typeinfo_next = (cc->typeinfo_next + 1) % CG_NTYPEINFO;
}

/* Why memset is given a size the compiler cannot see: gcc expands a memset
 * of struct cg_call's known 360 bytes into `rep stosq`, whose start-up was
 * 72 % of cg_call_begin's samples (perf annotate, 1-rank bcast, about 20 ns
 * a call); libc's memset fills it with a few vector stores
 * (harness/measurements/2026-12-07-pack.md). */
static volatile size_t cg_call_bytes = sizeof(struct cg_call);

int cg_call_begin(struct cg_call *c, MPI_Comm comm, MPI_Datatype dtype, MPI_Op op, int flags)
{
    int rc = MPI_SUCCESS;
    struct cg_comm *cc = NULL;
    struct cg_type_info ti, *seen = NULL;
    const struct cg_type_info *use = NULL;

    memset(c, 0, cg_call_bytes);
    c->comm = MPI_COMM_NULL;
    c->coll = -1;
    c->dtype = dtype;
    c->op = op;
    c->kernel = -1;
    if (comm == MPI_COMM_NULL) {
        cg_set_error("collgen: the communicator is MPI_COMM_NULL");
        rc = MPI_ERR_COMM;
        goto out;
    }
    if (dtype == MPI_DATATYPE_NULL) {
        cg_set_error("collgen: the datatype is MPI_DATATYPE_NULL");
        rc = MPI_ERR_TYPE;
        goto out;
    }
    /* Why the context is looked up first but created last: the datatype's
     * answers may be remembered there, and a call that fails on its
     * datatype or op must not create it (a collective MPI_Comm_dup). */
    CG_CHECK(cg_comm_find(comm, &cc));
    CG_CHECK(type_info(cc, dtype, &ti, &seen, &use));
    c->extent = use->extent;
    c->true_lb = use->true_lb;
    c->true_extent = use->true_extent;
    c->contiguous = use->contiguous;
    /* Why: scratch buffers are sized and addressed from their first byte
     * (cg_buf_bytes); data before an element's address would fall outside. */
    if ((c->extent <= 0) || (c->true_lb < 0)) {
        cg_set_error("collgen: datatypes with a non-positive extent or data below their "
                     "address are not supported");
        rc = MPI_ERR_TYPE;
        goto out;
    }
    /* Why no MPI_Op_commutative for the ops with a typed kernel: they are
     * predefined (MPI_SUM, MPI_PROD, MPI_MIN, MPI_MAX), which commute. */
    if (((flags & CG_NEEDS_COMMUTATIVE) != 0) && (op != MPI_OP_NULL) &&
        !cg_reduce_op_commutes(op)) {
        int commute = 0;
        CG_CHECK_MPI(MPI_Op_commutative(op, &commute));
        if (!commute) {
            cg_set_error("collgen: this schedule needs a commutative op; the op given is not "
                         "commutative");
            rc = MPI_ERR_OP;
            goto out;
        }
    }
    if (op != MPI_OP_NULL) {
        c->kernel = cg_reduce_kernel_index(dtype, op);
    }
    if (cc == NULL) {
        CG_CHECK(cg_comm_create(comm, &cc));
    }
    if (seen == NULL) {
        type_remember(cc, &ti);
    }
    c->cc = cc;
    c->comm = cc->comm;
    c->rank = cc->rank;
    c->p = cc->p;
    c->reqs = cc->reqs;
    c->types = cc->types;
out:
    return rc;
}

int cg_comm_rank(MPI_Comm comm, int *rank)
{
    int rc = MPI_SUCCESS;

    *rank = 0;
    if (comm == MPI_COMM_NULL) {
        cg_set_error("collgen: the communicator is MPI_COMM_NULL");
        rc = MPI_ERR_COMM;
        goto out;
    }
    CG_CHECK_MPI(MPI_Comm_rank(comm, rank));
out:
    return rc;
}

/* Why: an exchange left between cg_xchg_begin and a successful wait (an
 * error jumped to `out:`) still has requests in flight. A receive left
 * posted would match a later call's message with the same tag on the same
 * duplicate, so receives are cancelled and completed; sends are released
 * and finish on their own. Errors here are not recorded: the call is already
 * failing, and its first error is the one the caller should see. */
static void cg_call_abandon(struct cg_call *c)
{
    for (int i = 0; i < c->nreqs; i++) {
        if (c->reqs[i] == MPI_REQUEST_NULL) {
            continue;
        }
        if (c->cc->is_recv[i]) {
            (void)MPI_Cancel(&c->reqs[i]);
            (void)MPI_Wait(&c->reqs[i], MPI_STATUS_IGNORE);
        } else {
            (void)MPI_Request_free(&c->reqs[i]);
        }
    }
    c->nreqs = 0;
    for (int i = 0; i < c->ntypes; i++) {
        (void)MPI_Type_free(&c->types[i]);
    }
    c->ntypes = 0;
}

void cg_call_end(struct cg_call *c)
{
    if (c->cc != NULL) {
        cg_plan_end(c, MPI_ERR_OTHER); /* a recording not ended by cg_call_finish: dropped */
        cg_call_abandon(c);
    }
    c->cc = NULL;
    c->comm = MPI_COMM_NULL;
    c->reqs = NULL;
    c->types = NULL;
}

void *cg_scratch(struct cg_call *c, int slot, size_t bytes, int *rc)
{
    struct cg_comm *cc = c->cc;

    if ((slot < 0) || (slot >= CG_NSCRATCH)) {
        cg_set_error("collgen: scratch slot %d out of range 0..%d", slot, CG_NSCRATCH - 1);
        *rc = MPI_ERR_ARG;
        return NULL;
    }
    if ((cc->scratch[slot] == NULL) || (bytes > cc->scratch_bytes[slot])) {
        /* The old contents need not survive, so free + allocate, not realloc.
         * Why aligned (a page from 4 KiB, a cache line below): a message
         * received into scratch is copied there by the library, and
         * MPICH's single copy (process_vm_readv) runs 3-4x slower into a
         * destination 16 bytes past a cache line than into an aligned one
         * (256 KiB: 47 against 203 us; 16 MiB: 5.2 against 13.7 ms), which
         * is where malloc puts a large block
         * (harness/measurements/2026-12-07-speed-mapped.md). */
        size_t align = (bytes >= 4096) ? 4096 : 64;
        size_t want = (bytes > 0) ? bytes : 1;
        want = (want + align - 1) / align * align; /* aligned_alloc: a multiple */
        free(cc->scratch[slot]);
        cc->scratch_gen++; /* plans hold scratch addresses (plan.c) */
        cc->scratch[slot] = aligned_alloc(align, want);
        cc->scratch_bytes[slot] = (cc->scratch[slot] != NULL) ? want : 0;
        if (cc->scratch[slot] == NULL) {
            cg_set_error("collgen: out of memory for %zu bytes of scratch (slot %d)", bytes, slot);
            *rc = MPI_ERR_NO_MEM;
            return NULL;
        }
    }
    return cc->scratch[slot];
}

size_t cg_buf_bytes(const struct cg_call *c, const struct cg_geom *g, long nblocks)
{
    size_t elems = (nblocks > 0) ? cg_geom_off(g, nblocks) : 0;
    size_t bytes = elems * (size_t)c->extent;

    /* A type whose data reaches past its extent (resized smaller) needs the
     * last element's overhang; cg_call_begin already validated the type and
     * read its true extent. */
    if (elems > 0) {
        size_t reach = (elems - 1) * (size_t)c->extent + (size_t)c->true_lb +
                       (size_t)c->true_extent;
        if (reach > bytes) {
            bytes = reach;
        }
    }
    return bytes;
}

int cg_topo(struct cg_call *c, const struct cg_topo **topo)
{
    int rc = MPI_SUCCESS;

    *topo = NULL;
    if (!c->cc->topo.detected) {
        CG_CHECK(cg_topo_detect(c->cc->comm, c->cc->rank, c->cc->p, &c->cc->topo));
    }
    *topo = &c->cc->topo;
out:
    return rc;
}

int cg_topo_of(MPI_Comm comm, const struct cg_topo **topo)
{
    int rc = MPI_SUCCESS;
    struct cg_call c;

    *topo = NULL;
    CG_CHECK(cg_call_begin(&c, comm, MPI_BYTE, MPI_OP_NULL, 0));
    rc = cg_topo(&c, topo);
    cg_call_end(&c);
out:
    return rc;
}
