/* emit_mpi.c - pass 5: a checked, verified schedule -> C over MPI
 * point-to-point, in emitted/mpi/<schedule>.c.
 *
 * The function has the MPI collective's signature (counts as size_t) and
 * reads like a coll_base function: header comment, prologue, a loop per
 * phase, one comment per step with the schedule's file and line, a single
 * exit. Logic lives in runtime/ (cg_send, cg_reduce, ...); the body is a
 * sequence of calls. Expressions are printed from trees; identifiers come
 * from the checked IR. Reports no user errors: an impossible state is a
 * generator bug (cg_panic).
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "out.h"
#include "passes.h"

struct emitter {
    struct cg_gen *g;            /* context */
    const struct cg_schedule *s; /* what is emitted */
    struct cg_out *o;            /* where text goes */
    const char *base;            /* schedule file's base name, for comments */
    char upper[64];              /* schedule name in upper case */
    int tag_base;                /* absolute id of the call tag */
    unsigned char used[256];     /* slots some expression mentions */
};

static void mark(struct cg_expr *e, void *arg)
{
    struct emitter *em = arg;
    if (e->slot >= 0 && e->slot < 256) {
        em->used[e->slot] = 1;
    }
}

static void mark_expr(struct emitter *em, const struct cg_expr *e)
{
    if (e != NULL) {
        cg_expr_walk_names((struct cg_expr *)e, mark, em);
    }
}

static void mark_ref(struct emitter *em, const struct cg_ref *r)
{
    mark_expr(em, r->first);
    mark_expr(em, r->count);
}

/* Which names the emitted code mentions, so that it declares only those
 * (-Wunused-variable is an error in emitted code). */
static void mark_schedule(struct emitter *em)
{
    const struct cg_schedule *s = em->s;
    mark_expr(em, s->blocks);
    mark_expr(em, s->scratch);
    for (int pi = 0; pi < s->nphases; pi++) {
        const struct cg_phase *ph = &s->phases[pi];
        mark_expr(em, ph->when);
        mark_expr(em, ph->from);
        mark_expr(em, ph->to);
        for (int si = 0; si < ph->nsteps; si++) {
            const struct cg_step *st = &ph->steps[si];
            mark_expr(em, st->when);
            for (int k = 0; k < st->nsends; k++) {
                mark_expr(em, st->sends[k].when);
                mark_expr(em, st->sends[k].peer);
                mark_ref(em, &st->sends[k].ref);
            }
            for (int k = 0; k < st->nrecvs; k++) {
                mark_expr(em, st->recvs[k].when);
                mark_expr(em, st->recvs[k].peer);
                mark_ref(em, &st->recvs[k].ref);
            }
            mark_ref(em, &st->dst);
            mark_ref(em, &st->src);
        }
        /* A let is needed when something needed mentions it: walk back. */
        for (int i = ph->nlets - 1; i >= 0; i--) {
            if (em->used[ph->lets[i].slot]) {
                mark_expr(em, ph->lets[i].expr);
            }
        }
    }
    for (int i = s->nlets - 1; i >= 0; i--) {
        if (em->used[s->lets[i].slot]) {
            mark_expr(em, s->lets[i].expr);
        }
    }
}

/* Expression as C. The text lives in a rotating set of buffers so that a
 * few can be used in one printf. */
static const char *c_expr(const struct cg_expr *e)
{
    static _Thread_local char bufs[8][1024];
    static _Thread_local int next;
    char *b = bufs[next++ % 8];
    if (cg_expr_print_c(e, b, sizeof(bufs[0])) >= sizeof(bufs[0])) {
        cg_panic("expression too long to print");
    }
    return b;
}

static const char *src_expr(const struct cg_expr *e)
{
    static _Thread_local char bufs[8][1024];
    static _Thread_local int next;
    char *b = bufs[next++ % 8];
    if (cg_expr_print(e, b, sizeof(bufs[0])) >= sizeof(bufs[0])) {
        cg_panic("expression too long to print");
    }
    return b;
}

static void upper(char *dst, size_t cap, const char *src)
{
    size_t i = 0;
    for (; src[i] && i + 1 < cap; i++) {
        dst[i] = (char)toupper((unsigned char)src[i]);
    }
    dst[i] = '\0';
}

static void tag_name(const struct emitter *em, char *buf, size_t cap, const struct cg_phase *ph,
                     const char *leaf)
{
    char p[64] = "", l[64] = "";
    if (ph == NULL) {
        snprintf(buf, cap, "CG_TAG_%s", em->upper);
        return;
    }
    upper(p, sizeof(p), ph->name);
    if (leaf == NULL) {
        snprintf(buf, cap, "CG_TAG_%s__%s", em->upper, p);
        return;
    }
    upper(l, sizeof(l), leaf);
    snprintf(buf, cap, "CG_TAG_%s__%s__%s", em->upper, p, l);
}

/* "(first, n)" arguments for a block range of buffer `b`. */
static void range_args(const struct cg_ref *r, char *buf, size_t cap)
{
    const char *b = cg_buf_names[r->buf];
    switch (r->kind) {
    case CG_RANGE_ALL:
        snprintf(buf, cap, "&%s, 0, %s.nblocks", b, b);
        break;
    case CG_RANGE_BLOCK:
        snprintf(buf, cap, "&%s, %s, 1", b, c_expr(r->first));
        break;
    case CG_RANGE_SPAN:
        snprintf(buf, cap, "&%s, cg_mod(%s, %s.nblocks), %s", b, c_expr(r->first), b,
                 c_expr(r->count));
        break;
    }
}

/* "out[(rank - r) % p]" in schedule syntax, for comments. */
static void range_words(const struct cg_ref *r, char *buf, size_t cap)
{
    const char *b = cg_buf_names[r->buf];
    switch (r->kind) {
    case CG_RANGE_ALL:
        snprintf(buf, cap, "all of %s", b);
        break;
    case CG_RANGE_BLOCK:
        snprintf(buf, cap, "%s block %s", b, src_expr(r->first));
        break;
    case CG_RANGE_SPAN:
        snprintf(buf, cap, "%s blocks %s .. +%s", b, src_expr(r->first), src_expr(r->count));
        break;
    }
}

static void step_comment(struct emitter *em, const struct cg_phase *ph, const struct cg_step *st)
{
    struct cg_out *o = em->o;
    char a[600], b[600];
    switch (st->kind) {
    case CG_STEP_EXCHANGE:
        cg_out_line(o, "/* %s:%d %s: exchange", em->base, st->pos.line, ph->name);
        for (int k = 0; k < st->nsends; k++) {
            range_words(&st->sends[k].ref, a, sizeof(a));
            cg_out_line(o, " *   send %s to rank %s%s%s", a, src_expr(st->sends[k].peer),
                        st->sends[k].when ? " when " : "",
                        st->sends[k].when ? src_expr(st->sends[k].when) : "");
        }
        for (int k = 0; k < st->nrecvs; k++) {
            range_words(&st->recvs[k].ref, a, sizeof(a));
            cg_out_line(o, " *   receive %s from rank %s%s%s", a, src_expr(st->recvs[k].peer),
                        st->recvs[k].when ? " when " : "",
                        st->recvs[k].when ? src_expr(st->recvs[k].when) : "");
        }
        cg_out_line(o, " */");
        break;
    case CG_STEP_REDUCE:
        range_words(&st->dst, a, sizeof(a));
        range_words(&st->src, b, sizeof(b));
        if (cg_colls[em->s->coll].combine == CG_COMBINE_UNION) {
            cg_out_line(o, "/* %s:%d %s: merge the token in %s into %s */", em->base,
                        st->pos.line, ph->name, b, a);
            break;
        }
        cg_out_line(o, "/* %s:%d %s: %s = %s op %s */", em->base, st->pos.line, ph->name, a,
                    st->order == CG_ORDER_INTO_FROM ? a : b,
                    st->order == CG_ORDER_INTO_FROM ? b : a);
        break;
    case CG_STEP_COPY:
        range_words(&st->dst, a, sizeof(a));
        range_words(&st->src, b, sizeof(b));
        cg_out_line(o, "/* %s:%d %s: %s = %s */", em->base, st->pos.line, ph->name, a, b);
        break;
    default:
        cg_panic("unexpected step kind %d", (int)st->kind);
    }
}

static void emit_xfer(struct emitter *em, const struct cg_xfer *x, int is_send)
{
    char args[1200];
    range_args(&x->ref, args, sizeof(args));
    const char *fn = is_send ? "cg_send" : "cg_recv";
    if (x->when != NULL) {
        cg_out_open(em->o, "if (%s)", c_expr(x->when));
    }
    cg_out_line(em->o, "CG_TRY(%s(&c, %s, %s));", fn, c_expr(x->peer), args);
    if (x->when != NULL) {
        cg_out_close(em->o);
    }
}

static void emit_step(struct emitter *em, const struct cg_phase *ph, const struct cg_step *st)
{
    struct cg_out *o = em->o;
    char tag[200], a[1200], b[1200];
    tag_name(em, tag, sizeof(tag), ph, st->name);
    cg_out_blank(o);
    step_comment(em, ph, st);
    if (st->when != NULL) {
        cg_out_open(o, "if (%s)", c_expr(st->when));
    }
    cg_out_line(o, "CG_TAG_BEGIN(%s);", tag);
    switch (st->kind) {
    case CG_STEP_EXCHANGE:
        cg_out_line(o, "CG_TRY(cg_xchg_begin(&c, %d));", st->index);
        for (int k = 0; k < st->nsends; k++) {
            emit_xfer(em, &st->sends[k], 1);
        }
        for (int k = 0; k < st->nrecvs; k++) {
            emit_xfer(em, &st->recvs[k], 0);
        }
        cg_out_line(o, "CG_TRY(cg_xchg_wait(&c));");
        break;
    case CG_STEP_REDUCE:
    case CG_STEP_COPY: {
        /* (buffer, first) of each side, then the count of blocks: the
         * verifier proved both ranges equally long. */
        range_args(&st->dst, a, sizeof(a));
        range_args(&st->src, b, sizeof(b));
        char *count = strrchr(a, ',');
        char *src_count = strrchr(b, ',');
        if (count == NULL || src_count == NULL) {
            cg_panic("range without a count");
        }
        *count = '\0';
        *src_count = '\0';
        count += 2;
        if (st->kind == CG_STEP_REDUCE && cg_colls[em->s->coll].combine == CG_COMBINE_UNION) {
            /* Why nothing: the verifier tracks who a token has heard from,
             * but the bytes mean nothing; what synchronises is the wait for
             * the message, which the exchange step already did. */
            cg_out_line(o, "/* A token carries no data: merging it is a no-op. */");
        } else if (st->kind == CG_STEP_REDUCE) {
            cg_out_line(o, "CG_TRY(cg_reduce(&c, %s, %s, %s, %s));", a, b, count,
                        st->order == CG_ORDER_INTO_FROM ? "CG_INTO_FROM" : "CG_FROM_INTO");
        } else {
            cg_out_line(o, "CG_TRY(cg_copy(&c, %s, %s, %s));", a, b, count);
        }
        break;
    }
    default:
        cg_panic("unexpected step kind %d", (int)st->kind);
    }
    cg_out_line(o, "CG_TAG_END(%s);", tag);
    if (st->when != NULL) {
        cg_out_close(o);
    }
}

static void emit_lets(struct emitter *em, const struct cg_let *l, int n)
{
    for (int i = 0; i < n; i++) {
        if (em->used[l[i].slot]) {
            cg_out_line(em->o, "const int %s = %s;", l[i].name, c_expr(l[i].expr));
        }
    }
}

static void emit_phase(struct emitter *em, const struct cg_phase *ph)
{
    struct cg_out *o = em->o;
    char tag[200], rtag[200];
    tag_name(em, tag, sizeof(tag), ph, NULL);
    tag_name(em, rtag, sizeof(rtag), ph, "round");
    /* The round tag has a double underscore before ROUND, like the others;
     * step names may not be "round" (check.c), so it cannot collide. */
    cg_out_blank(o);
    switch (ph->rounds) {
    case CG_ROUNDS_NONE:
        cg_out_line(o, "/* %s:%d phase %s */", em->base, ph->pos.line, ph->name);
        break;
    case CG_ROUNDS_COUNT:
        cg_out_line(o, "/* %s:%d phase %s: %s rounds */", em->base, ph->pos.line, ph->name,
                    src_expr(ph->to));
        break;
    case CG_ROUNDS_UP:
    case CG_ROUNDS_DOWN:
        cg_out_line(o, "/* %s:%d phase %s: %s from %s %s %s */", em->base, ph->pos.line,
                    ph->name, ph->var, src_expr(ph->from),
                    ph->rounds == CG_ROUNDS_UP ? "up to" : "down to", src_expr(ph->to));
        break;
    }
    /* A phase's lets live in its own scope, so two phases may use one name. */
    int scope = ph->when == NULL && ph->rounds == CG_ROUNDS_NONE && ph->nlets > 0;
    if (ph->when != NULL) {
        cg_out_open(o, "if (%s)", c_expr(ph->when));
    } else if (scope) {
        cg_out_line(o, "{");
        o->indent++;
    }
    cg_out_line(o, "CG_TAG_BEGIN(%s);", tag);
    switch (ph->rounds) {
    case CG_ROUNDS_NONE:
        break;
    case CG_ROUNDS_COUNT:
        cg_out_open(o, "for (int %s = 0; %s < %s; %s++)", ph->var, ph->var, c_expr(ph->to),
                    ph->var);
        break;
    case CG_ROUNDS_UP:
        cg_out_open(o, "for (int %s = %s; %s <= %s; %s++)", ph->var, c_expr(ph->from), ph->var,
                    c_expr(ph->to), ph->var);
        break;
    case CG_ROUNDS_DOWN:
        cg_out_open(o, "for (int %s = %s; %s >= %s; %s--)", ph->var, c_expr(ph->from), ph->var,
                    c_expr(ph->to), ph->var);
        break;
    }
    if (ph->rounds != CG_ROUNDS_NONE) {
        cg_out_line(o, "CG_TAG_BEGIN(%s);", rtag);
    }
    emit_lets(em, ph->lets, ph->nlets);
    for (int i = 0; i < ph->nsteps; i++) {
        emit_step(em, ph, &ph->steps[i]);
    }
    if (ph->rounds != CG_ROUNDS_NONE) {
        cg_out_line(o, "CG_TAG_END(%s);", rtag);
        cg_out_close(o);
    }
    cg_out_line(o, "CG_TAG_END(%s);", tag);
    if (ph->when != NULL || scope) {
        cg_out_close(o);
    }
}

/* "CG_ALLREDUCE_ARGS": the signature macro of runtime/cg_algo.h. */
static void args_macro(enum cg_coll_kind c, char *buf, size_t cap)
{
    char u[64];
    upper(u, sizeof(u), cg_colls[c].name);
    snprintf(buf, cap, "CG_%s_ARGS", u);
}

static void header_comment(struct emitter *em)
{
    const struct cg_schedule *s = em->s;
    struct cg_out *o = em->o;
    cg_out_line(o, "/*");
    cg_out_line(o, " * Function:    cg_%s", s->name);
    if (cg_colls[s->coll].shape == CG_SHAPE_TOKEN) {
        cg_out_line(o, " * Accepts:     same as %s()", cg_colls[s->coll].mpi);
    } else {
        cg_out_line(o, " * Accepts:     same as %s(), with counts as size_t", cg_colls[s->coll].mpi);
    }
    cg_out_line(o, " * Returns:     MPI_SUCCESS or an MPI error code");
    cg_out_line(o, " * Description: %s", s->summary);
    if (s->commutative) {
        cg_out_line(o, " * Limitations: needs a commutative op (returns MPI_ERR_OP otherwise)");
    } else if (cg_colls[s->coll].reduces) {
        cg_out_line(o, " * Limitations: none; non-commutative ops are reduced in rank order");
    }
    cg_out_line(o, " * Blocks:      B = %s%s%s%s", src_expr(s->blocks),
                s->scratch ? "; scratch tmp of " : "", s->scratch ? src_expr(s->scratch) : "",
                s->scratch ? " blocks" : "");
    cg_out_line(o, " *");
    cg_out_line(o, " * Worked example, p = 4%s, as simulated by the verifier",
                cg_colls[s->coll].rooted ? ", root = 0" : "");
    cg_out_line(o, " * (a->b buf[i]: rank a sends block i of buf to rank b;");
    cg_out_line(o, " *  r: x op= y: rank r reduces y into x; =op: y op x; =: copy):");
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (f == NULL) {
        cg_panic("open_memstream: %s", strerror(errno));
    }
    struct cg_model model;
    struct cg_analysis a;
    cg_model_init(&model);
    if (cg_analyse(em->g, s, 4, 0, 1024, 8, &model, f, 1, "", &a) != 0) {
        cg_panic("schedule %s fails at p = 4 after verification", s->name);
    }
    fclose(f);
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        cg_out_line(o, " *   %s", line);
    }
    free(text);
    cg_out_line(o, " */");
}

/* "if (rc != MPI_SUCCESS) { goto out; }" after a cg_scratch call. */
static void scratch_check(struct cg_out *o)
{
    cg_out_open(o, "if (rc != MPI_SUCCESS)");
    cg_out_line(o, "goto out;");
    cg_out_close(o);
}

/* From the top of the function to the count == 0 shortcut: cg_call_begin
 * with the datatype that describes this rank's blocks. */
static void prologue_begin(struct emitter *em)
{
    const struct cg_schedule *s = em->s;
    struct cg_out *o = em->o;
    const char *flags = s->commutative ? "CG_NEEDS_COMMUTATIVE" : "0";
    const char *count = "count";
    cg_out_line(o, "struct cg_call c;");
    cg_out_line(o, "int rc = MPI_SUCCESS;");
    switch (s->coll) {
    case CG_C_GATHER:
        cg_out_line(o, "int rank = 0;");
        cg_out_blank(o);
        cg_out_line(o, "/* Only the root's recvcount and recvtype are significant: the root's "
                       "blocks are");
        cg_out_line(o, " * recvbuf's, every other rank keeps its blocks as sendcount x sendtype "
                       "in scratch.");
        cg_out_line(o, " * Messages match because MPI requires the two type signatures to be "
                       "equal. */");
        cg_out_line(o, "rc = cg_comm_rank(comm, &rank);");
        cg_out_open(o, "if (rc != MPI_SUCCESS)");
        cg_out_line(o, "return rc;");
        cg_out_close(o);
        cg_out_line(o, "const size_t count = (rank == root) ? recvcount : sendcount;");
        cg_out_line(o, "rc = cg_call_begin(&c, comm, (rank == root) ? recvtype : sendtype, "
                       "MPI_OP_NULL, 0);");
        break;
    case CG_C_SCATTER:
        cg_out_line(o, "int rank = 0;");
        cg_out_blank(o);
        cg_out_line(o, "/* Blocks are recvcount x recvtype, except at a root called in place, "
                       "whose recvcount");
        cg_out_line(o, " * and recvtype are not significant: it works in sendtype, its block "
                       "staying in sendbuf.");
        cg_out_line(o, " * Messages match because MPI requires the type signatures to be "
                       "equal. */");
        cg_out_line(o, "rc = cg_comm_rank(comm, &rank);");
        cg_out_open(o, "if (rc != MPI_SUCCESS)");
        cg_out_line(o, "return rc;");
        cg_out_close(o);
        cg_out_line(o, "const size_t count = ((rank == root) && (recvbuf == MPI_IN_PLACE)) ? "
                       "sendcount : recvcount;");
        cg_out_line(o, "rc = cg_call_begin(&c, comm,");
        cg_out_line(o, "                   ((rank == root) && (recvbuf == MPI_IN_PLACE)) ? "
                       "sendtype : recvtype,");
        cg_out_line(o, "                   MPI_OP_NULL, 0);");
        break;
    case CG_C_BARRIER:
        cg_out_line(o, "char token = 0;");
        cg_out_blank(o);
        cg_out_line(o, "rc = cg_call_begin(&c, comm, MPI_BYTE, MPI_OP_NULL, 0);");
        count = NULL;
        break;
    case CG_C_ALLGATHER:
    case CG_C_ALLTOALL:
        cg_out_blank(o);
        cg_out_line(o, "rc = cg_call_begin(&c, comm, recvtype, MPI_OP_NULL, 0);");
        count = "recvcount";
        break;
    case CG_C_REDUCE_SCATTER_BLOCK:
        cg_out_blank(o);
        cg_out_line(o, "rc = cg_call_begin(&c, comm, datatype, op, %s);", flags);
        count = "recvcount";
        break;
    case CG_C_BCAST:
        cg_out_blank(o);
        cg_out_line(o, "rc = cg_call_begin(&c, comm, datatype, MPI_OP_NULL, 0);");
        break;
    case CG_C_ALLREDUCE:
    case CG_C_REDUCE:
    case CG_C_SCAN:
    case CG_C_EXSCAN:
        cg_out_blank(o);
        cg_out_line(o, "rc = cg_call_begin(&c, comm, datatype, op, %s);", flags);
        break;
    case CG_C_COUNT_:
        cg_panic("unexpected collective %d", (int)s->coll);
    }
    cg_out_open(o, "if (rc != MPI_SUCCESS)");
    cg_out_line(o, "return rc;");
    cg_out_close(o);
    if (count != NULL) {
        cg_out_open(o, "if (0 == %s)", count);
        cg_out_line(o, "goto out;");
        cg_out_close(o);
    }
}

/* The buffers: `out` (and `in`) over the caller's memory, with the copies
 * and scratch that MPI_IN_PLACE, non-root ranks and mismatched datatypes
 * need. */
static void prologue_buffers(struct emitter *em)
{
    const struct cg_schedule *s = em->s;
    struct cg_out *o = em->o;
    switch (s->coll) {
    case CG_C_ALLREDUCE:
    case CG_C_SCAN:
    case CG_C_REDUCE:
        cg_out_line(o, "struct cg_buf out = { recvbuf, geom, geom.nb };");
        break;
    case CG_C_EXSCAN:
        cg_out_line(o, "struct cg_buf in = { (char *)sendbuf, geom, geom.nb };");
        cg_out_line(o, "struct cg_buf out = { recvbuf, geom, geom.nb };");
        break;
    case CG_C_BCAST:
        cg_out_line(o, "struct cg_buf out = { buffer, geom, geom.nb };");
        break;
    case CG_C_ALLGATHER:
    case CG_C_GATHER:
        cg_out_line(o, "struct cg_buf out = { recvbuf, geom, p };");
        break;
    case CG_C_ALLTOALL:
        cg_out_line(o, "struct cg_buf in = { (char *)sendbuf, geom, p };");
        cg_out_line(o, "struct cg_buf out = { recvbuf, geom, p };");
        break;
    case CG_C_REDUCE_SCATTER_BLOCK:
    case CG_C_SCATTER:
        cg_out_line(o, "struct cg_buf in = { (char *)sendbuf, geom, p };");
        cg_out_line(o, "struct cg_buf out = { recvbuf, geom, 1 };");
        break;
    case CG_C_BARRIER:
        cg_out_line(o, "struct cg_buf out = { &token, geom, 1 };");
        break;
    case CG_C_COUNT_:
        cg_panic("unexpected collective %d", (int)s->coll);
    }
    if (s->scratch != NULL) {
        cg_out_line(o, "struct cg_buf tmp = { NULL, geom, %s };", c_expr(s->scratch));
    }
    cg_out_blank(o);
    switch (s->coll) {
    case CG_C_ALLREDUCE:
    case CG_C_SCAN:
        cg_out_open(o, "if (sendbuf != MPI_IN_PLACE)");
        cg_out_line(o, "CG_TRY(cg_copy_typed(sendbuf, count, datatype, recvbuf, count, "
                       "datatype));");
        cg_out_close(o);
        break;
    case CG_C_REDUCE:
        cg_out_line(o, "/* recvbuf is significant only at the root: elsewhere the partial "
                       "results live in scratch. */");
        cg_out_open(o, "if (rank != root)");
        cg_out_line(o, "out.base = cg_scratch(&c, 1, cg_buf_bytes(&c, &geom, out.nblocks), &rc);");
        scratch_check(o);
        cg_out_close(o);
        cg_out_open(o, "if (sendbuf != MPI_IN_PLACE)");
        cg_out_line(o, "CG_TRY(cg_copy_typed(sendbuf, count, datatype, out.base, count, "
                       "datatype));");
        cg_out_close(o);
        break;
    case CG_C_ALLGATHER:
        cg_out_open(o, "if (sendbuf != MPI_IN_PLACE)");
        cg_out_line(o, "char *mine = out.base + cg_geom_off(&geom, rank) * (size_t)c.extent;");
        cg_out_line(o, "CG_TRY(cg_copy_typed(sendbuf, sendcount, sendtype, mine, recvcount, "
                       "recvtype));");
        cg_out_close(o);
        break;
    case CG_C_GATHER:
        cg_out_line(o, "/* recvbuf is significant only at the root: elsewhere gather into "
                       "scratch. */");
        cg_out_open(o, "if (rank != root)");
        cg_out_line(o, "out.base = cg_scratch(&c, 1, cg_buf_bytes(&c, &geom, p), &rc);");
        scratch_check(o);
        cg_out_close(o);
        cg_out_open(o, "if (sendbuf != MPI_IN_PLACE)");
        cg_out_line(o, "char *mine = out.base + cg_geom_off(&geom, rank) * (size_t)c.extent;");
        cg_out_line(o, "CG_TRY(cg_copy_typed(sendbuf, sendcount, sendtype, mine, count, "
                       "c.dtype));");
        cg_out_close(o);
        break;
    case CG_C_SCATTER:
        cg_out_line(o, "/* At the root in place, out is the root's own block of sendbuf (the "
                       "schedule's");
        cg_out_line(o, " * copy of it onto itself is a no-op). Otherwise the root's input must "
                       "have recvtype's");
        cg_out_line(o, " * layout: sendbuf itself when the two sides agree, else a converted "
                       "copy. */");
        cg_out_open(o, "if ((rank == root) && (recvbuf == MPI_IN_PLACE))");
        cg_out_line(o, "out.base = in.base + cg_geom_off(&geom, root) * (size_t)c.extent;");
        cg_out_close_open(o, "else if ((rank == root) && ((sendtype != recvtype) || "
                             "(sendcount != recvcount)))");
        cg_out_line(o, "in.base = cg_scratch(&c, 1, cg_buf_bytes(&c, &geom, p), &rc);");
        scratch_check(o);
        cg_out_line(o, "CG_TRY(cg_copy_typed(sendbuf, (size_t)p * sendcount, sendtype, in.base, "
                       "geom.count, recvtype));");
        cg_out_close(o);
        break;
    case CG_C_ALLTOALL:
        cg_out_line(o, "/* The input in recvtype's layout: sendbuf itself when the two sides "
                       "agree; in place");
        cg_out_line(o, " * (it is recvbuf, which the result overwrites) or when they differ, a "
                       "copy. */");
        cg_out_open(o, "if (sendbuf == MPI_IN_PLACE)");
        cg_out_line(o, "in.base = cg_scratch(&c, 1, cg_buf_bytes(&c, &geom, p), &rc);");
        scratch_check(o);
        cg_out_line(o, "CG_TRY(cg_copy_typed(recvbuf, geom.count, recvtype, in.base, "
                       "geom.count, recvtype));");
        cg_out_close_open(o, "else if ((sendtype != recvtype) || (sendcount != recvcount))");
        cg_out_line(o, "in.base = cg_scratch(&c, 1, cg_buf_bytes(&c, &geom, p), &rc);");
        scratch_check(o);
        cg_out_line(o, "CG_TRY(cg_copy_typed(sendbuf, (size_t)p * sendcount, sendtype, in.base, "
                       "geom.count, recvtype));");
        cg_out_close(o);
        break;
    case CG_C_REDUCE_SCATTER_BLOCK:
    case CG_C_EXSCAN:
        cg_out_line(o, "/* In place, the input is recvbuf, which the result overwrites: work "
                       "on a copy. */");
        cg_out_open(o, "if (sendbuf == MPI_IN_PLACE)");
        cg_out_line(o, "in.base = cg_scratch(&c, 1, cg_buf_bytes(&c, &geom, %s), &rc);",
                    s->coll == CG_C_EXSCAN ? "in.nblocks" : "p");
        scratch_check(o);
        cg_out_line(o, "CG_TRY(cg_copy_typed(recvbuf, geom.count, datatype, in.base, "
                       "geom.count, datatype));");
        cg_out_close(o);
        break;
    case CG_C_BCAST:
    case CG_C_BARRIER:
        break;
    case CG_C_COUNT_:
        cg_panic("unexpected collective %d", (int)s->coll);
    }
    if (s->scratch != NULL) {
        cg_out_line(o, "tmp.base = cg_scratch(&c, 0, cg_buf_bytes(&c, &geom, tmp.nblocks), &rc);");
        scratch_check(o);
    }
}

static void prologue(struct emitter *em)
{
    const struct cg_schedule *s = em->s;
    struct cg_out *o = em->o;
    enum cg_shape shape = cg_colls[s->coll].shape;
    prologue_begin(em);
    /* The prologue itself needs p for p equal blocks, and rank where it
     * places this rank's data or tells the root apart; gather and scatter
     * declared rank before cg_call_begin. */
    int need_p = shape == CG_SHAPE_UNIFORM || shape == CG_SHAPE_ONE;
    int need_rank = s->coll == CG_C_ALLGATHER || s->coll == CG_C_REDUCE;
    int has_rank = s->coll == CG_C_GATHER || s->coll == CG_C_SCATTER;
    if (em->used[CG_SLOT_P] || need_p) {
        cg_out_line(o, "const int p = c.p;");
    }
    if ((em->used[CG_SLOT_RANK] || need_rank) && !has_rank) {
        cg_out_line(o, "const int rank = c.rank;");
    }
    for (int i = 0; i < s->nparams; i++) {
        if (!em->used[s->params[i].slot]) {
            continue;
        }
        cg_out_line(o, "const int %s = %lld; /* parameter, default */", s->params[i].name,
                    (long long)s->params[i].value);
    }
    emit_lets(em, s->lets, s->nlets);
    char tag[200];
    tag_name(em, tag, sizeof(tag), NULL, NULL);
    cg_out_line(o, "CG_TAG_BEGIN(%s);", tag);
    switch (shape) {
    case CG_SHAPE_SPLIT:
        cg_out_line(o, "const struct cg_geom geom = { count, %s };", c_expr(s->blocks));
        break;
    case CG_SHAPE_UNIFORM:
    case CG_SHAPE_ONE:
        cg_out_line(o, "const struct cg_geom geom = { (size_t)p * %s, p };",
                    (s->coll == CG_C_ALLGATHER || s->coll == CG_C_ALLTOALL ||
                     s->coll == CG_C_REDUCE_SCATTER_BLOCK)
                        ? "recvcount"
                        : "count");
        break;
    case CG_SHAPE_TOKEN:
        cg_out_line(o, "/* No user data: every message carries a 1-byte token (the runtime "
                       "posts nothing");
        cg_out_line(o, " * for an empty range); merging tokens is a no-op. */");
        cg_out_line(o, "const struct cg_geom geom = { 1, 1 };");
        break;
    }
    prologue_buffers(em);
}

int cg_emit_mpi(struct cg_gen *g, const struct cg_schedule *s, int tag_base)
{
    struct cg_out o;
    cg_out_init(&o);
    struct emitter em = { g, s, &o, NULL, "", tag_base, { 0 } };
    const char *slash = strrchr(s->file, '/');
    em.base = slash ? slash + 1 : s->file;
    upper(em.upper, sizeof(em.upper), s->name);
    mark_schedule(&em);

    cg_out_line(&o, "/* Generated by collgen from %s. DO NOT EDIT. */", s->file);
    cg_out_blank(&o);
    header_comment(&em);
    cg_out_blank(&o);
    cg_out_line(&o, "#include \"collgen.h\"");
    cg_out_blank(&o);
    char args[80];
    args_macro(s->coll, args, sizeof(args));
    cg_out_line(&o, "int cg_%s(%s)", s->name, args);
    cg_out_line(&o, "{");
    o.indent++;
    prologue(&em);
    for (int i = 0; i < s->nphases; i++) {
        emit_phase(&em, &s->phases[i]);
    }
    char tag[200];
    tag_name(&em, tag, sizeof(tag), NULL, NULL);
    cg_out_blank(&o);
    cg_out_line(&o, "CG_TAG_END(%s);", tag);
    o.indent--;
    cg_out_line(&o, "out:");
    o.indent++;
    cg_out_line(&o, "cg_call_end(&c);");
    cg_out_line(&o, "return rc;");
    cg_out_close(&o);

    char path[4096];
    snprintf(path, sizeof(path), "%s/mpi/%s.c", g->opt->out_dir, s->name);
    int changed = 0, rc = 0;
    if (cg_out_write_file(&o, path, &changed) != 0) {
        struct cg_pos none = { 0, 0 };
        cg_error(&g->diag, path, none, "cannot write: %s", strerror(errno));
        rc = -1;
    }
    cg_out_fini(&o);
    return rc;
}
