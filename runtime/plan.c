/* plan.c - a call's plan: what a generated call did, recorded once and
 * replayed by later calls with the same arguments (cg.h, "plans").
 *
 * Why: at small sizes a generated call spent most of its time around its
 * messages, not in them. callgrind, gather at p = 2, 16 bytes, 20 000
 * calls (harness/measurements/2026-12-07-plans.md): the sending rank ran
 * 1700 instructions a call, 466 of them in MPI_Send; Open MPI's own gather
 * 584 in all. The rest was the prologue (the context, the datatypes' basic
 * elements, the layout, scratch, the lazy input's flags) and the walk from
 * block ranges to pointers, done again on every call although it gives the
 * same pointers for the same arguments. A plan keeps what it gave: the
 * messages, copies and reductions in the order they ran, with their
 * addresses, and a call that matches replays them.
 *
 * Why a replay computes what the schedule computes: a schedule's control
 * flow depends on p, the rank, the root, the counts and its params, never
 * on the data (the verifier simulates it without data), and the runtime's
 * choices depend on the same arguments and the context's state (scratch
 * addresses, settings), never on timing: every request is waited for in
 * order (xchg.c: MPI_Wait per request, no MPI_Waitany). So two calls with
 * the same key run the same MPI calls, copies and kernels on the same
 * addresses, and a replay of the first is the second. What the key and the
 * checks cover:
 *   - the function (struct cg_site) and every argument of the collective,
 *     buffers included: pointers are compared, not contents;
 *   - the communicator: plans live in its context, so they die with it;
 *   - datatypes and op: named datatypes and predefined ops only (a derived
 *     handle may be freed and reused for another type; checked when
 *     recording starts);
 *   - scratch: a slot that moves (grows) advances the context's
 *     scratch_gen, and a plan of another generation is recorded again;
 *   - settings that change the runtime's choices (the exchange hooks of
 *     cg.h, cg_plan_mode) advance cg_plan_gen, and cg_param_set its own
 *     generation; both are in the key;
 *   - timing tags: never replayed for a function built with tags while they
 *     are on (struct cg_site).
 * A call is not recorded when it does something a plan does not hold: a
 * message of a derived datatype built for it (a strided range's hindexed
 * type), a copy through MPI (MPI_Sendrecv on MPI_COMM_SELF: derived types
 * only), a call step (another collective), a nested generated call; nor
 * when it fails. tests/emitted_check.c runs every case a second time with
 * other data, eagerly recorded, so that every generated collective is
 * checked replayed; tests/test_runtime.c checks the key, the
 * invalidations and the refusals.
 *
 * Memory: each context holds CG_NPLANS plans; a slot's operations array
 * grows and is kept (freed with the context).
 */
#include "cg_internal.h"

#include <stdlib.h>

_Thread_local struct cg_plan *cg_rec;

/* Why process-wide: a setting like those of cg.h's exchange hooks; -1
 * until the first call reads CG_PLANS. */
static int cg_plan_mode_now = -1;
static unsigned cg_plan_gen = 1;
static _Thread_local unsigned long cg_plan_nreplays; /* per thread: no shared counter */

void cg_plan_mode(int mode)
{
    cg_plan_mode_now = ((mode >= CG_PLANS_OFF) && (mode <= CG_PLANS_EAGER)) ? mode : CG_PLANS_ON;
    cg_plan_touch();
}

void cg_plan_touch(void)
{
    cg_plan_gen++;
}

unsigned long cg_plan_replays(void)
{
    return cg_plan_nreplays;
}

static int cg_plan_mode_read(void)
{
    const char *v = getenv("CG_PLANS");

    if ((v == NULL) || (*v == '\0') || (strcmp(v, "1") == 0)) {
        cg_plan_mode_now = CG_PLANS_ON;
    } else if (strcmp(v, "0") == 0) {
        cg_plan_mode_now = CG_PLANS_OFF;
    } else if (strcmp(v, "eager") == 0) {
        cg_plan_mode_now = CG_PLANS_EAGER;
    } else {
        cg_set_error("collgen: CG_PLANS=%s: expected 0, 1 or eager", v);
        return MPI_ERR_ARG;
    }
    return MPI_SUCCESS;
}

void cg_plan_note(const struct cg_plan_op *op)
{
    struct cg_plan *pl = cg_rec;

    if (pl->bad) {
        return;
    }
    if (pl->nops == pl->cap) {
        int cap = (pl->cap > 0) ? 2 * pl->cap : 16;
        struct cg_plan_op *ops = NULL;
        if (cap <= CG_PLAN_MAX_OPS) {
            ops = realloc(pl->ops, (size_t)cap * sizeof(*ops));
        }
        if (ops == NULL) {
            pl->bad = 2; /* too long, or no memory: run it as it is */
            return;
        }
        pl->ops = ops;
        pl->cap = cap;
    }
    pl->ops[pl->nops++] = *op;
    if (((op->kind == CG_OP_ISEND) || (op->kind == CG_OP_IRECV)) && (op->req >= pl->nreqs)) {
        pl->nreqs = op->req + 1;
    }
}

void cg_plan_refuse(void)
{
    if (cg_rec != NULL) {
        cg_rec->bad = 2;
    }
}

/* The key as 64-bit words (cg_internal.h). Why words: a byte loop over
 * the key was half a replayed call's instructions. */
static uint64_t cg_plan_hash(const union cg_plan_words *k)
{
    uint64_t h = 0x9e3779b97f4a7c15ull;
    for (size_t i = 0; i < CG_PLAN_KEY_WORDS; i++) {
        h = (h ^ k->w[i]) * 0xff51afd7ed558ccdull;
        h ^= h >> 29;
    }
    return h;
}

/* Named datatypes and predefined ops only (the file's head says why). */
static int cg_plan_type_ok(MPI_Datatype t)
{
    int ni = 0, na = 0, nd = 0, comb = MPI_COMBINER_NAMED;

    if (t == MPI_DATATYPE_NULL) {
        return 1;
    }
    return (MPI_Type_get_envelope(t, &ni, &na, &nd, &comb) == MPI_SUCCESS) &&
           (comb == MPI_COMBINER_NAMED);
}

static int cg_plan_op_ok(MPI_Op op)
{
    static const MPI_Op predefined[] = { MPI_OP_NULL, MPI_MAX,  MPI_MIN,    MPI_SUM,
                                         MPI_PROD,    MPI_LAND, MPI_BAND,   MPI_LOR,
                                         MPI_BOR,     MPI_LXOR, MPI_BXOR,   MPI_MINLOC,
                                         MPI_MAXLOC,  MPI_REPLACE, MPI_NO_OP };
    for (size_t i = 0; i < sizeof(predefined) / sizeof(predefined[0]); i++) {
        if (op == predefined[i]) {
            return 1;
        }
    }
    return 0;
}

/* After a failed replay: no message of it may be left to match a later
 * call's (as cg_call_abandon does for a recorded call). */
static void cg_plan_abandon(struct cg_comm *cc, const struct cg_plan *pl)
{
    for (int i = 0; i < pl->nreqs; i++) {
        if (cc->reqs[i] == MPI_REQUEST_NULL) {
            continue;
        }
        if (cc->is_recv[i]) {
            (void)MPI_Cancel(&cc->reqs[i]);
            (void)MPI_Wait(&cc->reqs[i], MPI_STATUS_IGNORE);
        } else {
            (void)MPI_Request_free(&cc->reqs[i]);
        }
    }
}

/* Runs plan pl on context cc: its steps, in order. */
static int cg_plan_run(struct cg_comm *cc, struct cg_plan *pl)
{
    int rc = MPI_SUCCESS;
    MPI_Request *reqs = cc->reqs;
    const char *what = NULL;

    for (int i = 0; i < pl->nreqs; i++) {
        reqs[i] = MPI_REQUEST_NULL;
    }
    for (int i = 0; (i < pl->nops) && (rc == MPI_SUCCESS); i++) {
        const struct cg_plan_op *o = &pl->ops[i];
        switch ((enum cg_plan_kind)o->kind) {
        case CG_OP_ISEND:
            cc->is_recv[o->req] = 0;
            rc = MPI_Isend(o->to, o->count, o->type, o->peer, o->tag, cc->comm, &reqs[o->req]);
            what = "MPI_Isend";
            break;
        case CG_OP_IRECV:
            cc->is_recv[o->req] = 1;
            rc = MPI_Irecv(o->to, o->count, o->type, o->peer, o->tag, cc->comm, &reqs[o->req]);
            what = "MPI_Irecv";
            break;
        case CG_OP_SEND:
            rc = MPI_Send(o->to, o->count, o->type, o->peer, o->tag, cc->comm);
            what = "MPI_Send";
            break;
        case CG_OP_RECV:
            rc = MPI_Recv(o->to, o->count, o->type, o->peer, o->tag, cc->comm, MPI_STATUS_IGNORE);
            what = "MPI_Recv";
            break;
        case CG_OP_WAIT:
            rc = MPI_Wait(&reqs[o->req], MPI_STATUS_IGNORE);
            what = "MPI_Wait";
            break;
        case CG_OP_COPY:
            memcpy(o->to, o->from, o->n);
            break;
        case CG_OP_ZERO:
            memset(o->to, 0, o->n);
            break;
        case CG_OP_KERNEL:
            cg_reduce_kernel_run(o->kernel, o->to, o->from, o->n);
            break;
        case CG_OP_KERNEL_SW:
            cg_reduce_kernel_sw_run(o->kernel, o->to, o->from, o->n);
            break;
        case CG_OP_KERNEL3:
            cg_reduce_kernel3_run(o->kernel, o->to, o->from, o->from2, o->n);
            break;
        case CG_OP_REDUCE_LOCAL:
            rc = MPI_Reduce_local(o->from, o->to, (int)o->n, o->type, o->op);
            what = "MPI_Reduce_local";
            break;
        }
    }
    if (rc != MPI_SUCCESS) {
        cg_error_mpi(rc, __FILE__, __LINE__, what);
        cg_plan_abandon(cc, pl);
        pl->state = CG_PLAN_EMPTY;
    }
    return rc;
}

int cg_plan_lookup(struct cg_call *c, MPI_Comm comm, struct cg_comm *hint,
                   union cg_plan_words *k, struct cg_site site, struct cg_plan **rec)
{
    int rc = MPI_SUCCESS;
    struct cg_comm *cc = NULL;
    struct cg_plan *pl = NULL;

    *rec = NULL;
    if (cg_plan_mode_now < 0) {
        CG_CHECK(cg_plan_mode_read());
    }
    if ((site.fn == NULL) || (cg_plan_mode_now == CG_PLANS_OFF) ||
        (site.tagged && !cg_tag_off)) {
        goto out;
    }
    if (cg_rec != NULL) {
        /* Called from inside a recording call (a call step's callee): the
         * outer one runs another collective, which its plan cannot hold. */
        cg_plan_refuse();
        goto out;
    }
    cc = hint;
    if (cc == NULL) {
        CG_CHECK(cg_comm_context(comm, &cc));
        if (cc == NULL) {
            goto out; /* the first call on comm: no plans yet */
        }
    }
    k->key.gen = cg_plan_gen;
    k->key.pgen = cg_param_gen();
    uint64_t h = 0;
    /* The slot the last lookup found first: a loop calling one collective
     * finds it there without hashing. */
    struct cg_plan *last = &cc->plans[cc->plan_last];
    if ((last->state != CG_PLAN_EMPTY) && (memcmp(&last->key, &k->key, sizeof(k->key)) == 0)) {
        pl = last;
    } else {
        h = cg_plan_hash(k);
        for (int i = 0; i < CG_NPLANS; i++) {
            struct cg_plan *q = &cc->plans[i];
            if ((q->state != CG_PLAN_EMPTY) && (q->hash == h) &&
                (memcmp(&q->key, &k->key, sizeof(k->key)) == 0)) {
                pl = q;
                cc->plan_last = i;
                break;
            }
        }
    }
    if ((pl != NULL) && (pl->state == CG_PLAN_READY) && (pl->scratch_gen == cc->scratch_gen)) {
        c->cc = NULL; /* all cg_call_finish reads of c, with c->result */
        c->result = cg_plan_run(cc, pl);
        cg_plan_nreplays++;
        rc = CG_DONE;
        goto out;
    }
    if (pl == NULL) {
        cc->plan_last = cc->plan_next;
        pl = &cc->plans[cc->plan_next];
        cc->plan_next = (cc->plan_next + 1) % CG_NPLANS;
        pl->state = CG_PLAN_SEEN;
        pl->key = k->key;
        pl->hash = h;
        if (cg_plan_mode_now == CG_PLANS_EAGER) {
            *rec = pl;
        }
    } else if (pl->state != CG_PLAN_NEVER) {
        *rec = pl; /* seen before, or recorded in another scratch generation */
    }
out:
    return rc;
}

void cg_plan_record(struct cg_call *c, struct cg_plan *rec)
{
    struct cg_plan_key *k = &rec->key;

    rec->state = CG_PLAN_RECORDING;
    rec->nops = 0;
    rec->nreqs = 0;
    rec->bad = 0;
    rec->owner = c;
    rec->scratch_gen = c->cc->scratch_gen;
    if (!cg_plan_type_ok(k->sendtype) || !cg_plan_type_ok(k->recvtype) || !cg_plan_op_ok(k->op)) {
        rec->state = CG_PLAN_NEVER;
        return;
    }
    cg_rec = rec;
}

void cg_plan_end(const struct cg_call *c, int rc)
{
    struct cg_plan *pl = cg_rec;

    if ((pl == NULL) || (pl->owner != c)) {
        return;
    }
    cg_rec = NULL;
    pl->owner = NULL;
    if (rc != MPI_SUCCESS) {
        pl->state = CG_PLAN_EMPTY;
    } else if (pl->bad == 2) {
        pl->state = CG_PLAN_NEVER;
    } else if (pl->scratch_gen != c->cc->scratch_gen) {
        pl->state = CG_PLAN_SEEN; /* scratch moved while it ran: the next call records */
    } else {
        pl->state = CG_PLAN_READY;
    }
}

void cg_plan_free_all(struct cg_plan *plans)
{
    for (int i = 0; i < CG_NPLANS; i++) {
        if (cg_rec == &plans[i]) {
            cg_rec = NULL;
        }
        free(plans[i].ops);
        plans[i].ops = NULL;
    }
}
