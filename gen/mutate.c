/* mutate.c - mutation testing of the verifier.
 *
 * For a checked schedule, makes small mutants in the IR (peer off by one,
 * block off by one, a stride off by one or dropped, a dropped step, one
 * round short, reduce operands swapped, operand order flipped, a send
 * staged through out, a table's elements off by one or one element
 * short), verifies
 * each, and counts how many the verifier rejects. A mutant it accepts computes the collective for every
 * p tried, so it is an equivalent mutant; each one is listed so that a
 * person can confirm it (tests/mutants.equivalent holds the reviewed list).
 */
#include <stdlib.h>
#include <string.h>

#include "mutate.h"
#include "passes.h"

static struct cg_expr *node(struct cg_arena *a, enum cg_expr_kind kind, struct cg_pos pos)
{
    struct cg_expr *e = cg_arena_alloc(a, sizeof(*e));
    e->kind = kind;
    e->slot = -1;
    e->pos = pos;
    return e;
}

static struct cg_expr *num(struct cg_arena *a, int64_t v, struct cg_pos pos)
{
    struct cg_expr *e = node(a, CG_E_NUM, pos);
    e->num = v;
    return e;
}

static struct cg_expr *bin(struct cg_arena *a, enum cg_expr_op op, struct cg_expr *x,
                           struct cg_expr *y)
{
    struct cg_expr *e = node(a, CG_E_BINARY, x->pos);
    e->op = op;
    e->a = x;
    e->b = y;
    return e;
}

static struct cg_expr *name_p(struct cg_arena *a, struct cg_pos pos)
{
    struct cg_expr *e = node(a, CG_E_NAME, pos);
    e->name = "p";
    e->slot = CG_SLOT_P;
    return e;
}

static struct cg_expr *name_root(struct cg_arena *a, struct cg_pos pos)
{
    struct cg_expr *e = node(a, CG_E_NAME, pos);
    e->name = "root";
    e->slot = CG_SLOT_ROOT;
    return e;
}

struct run {
    struct cg_gen *g;        /* the quiet context mutants are verified in */
    struct cg_schedule *s;   /* mutated in place, restored after each */
    struct cg_mutate_stats *st; /* counts */
    FILE *report;            /* where survivors are listed */
};

static void try_mutant(struct run *r, struct cg_pos pos, const char *what)
{
    r->g->diag.errors = 0;
    int killed = cg_verify(r->g, r->s, NULL) != 0;
    r->st->mutants++;
    if (killed) {
        r->st->killed++;
    } else {
        r->st->equivalent++;
        fprintf(r->report, "%s:%d:%d: equivalent mutant: %s\n", r->s->file, pos.line, pos.col,
                what);
    }
}

/* Why: a send staged through out breaks only in place. Where the
 * collective's in-place form makes out the root's block of in (scatter), a
 * programmer may use out as a staging buffer and put the root's own block
 * back right after: copy the sent block of in into out block 0, send out
 * block 0, copy in block root into out block 0. Out of place that computes
 * the same; called in place the first copy overwrites in block root, so the
 * verifier must kill every such mutant in its in-place run. Step si of ph
 * is an exchange whose send k reads one block of in. */
static void staged_mutant(struct run *r, struct cg_arena *arena, struct cg_phase *ph, int si,
                          int k)
{
    struct cg_step *steps = ph->steps;
    int n = ph->nsteps;
    struct cg_step *grown = cg_arena_alloc(arena, sizeof(*grown) * (size_t)(n + 2));
    memcpy(grown, steps, sizeof(*steps) * (size_t)si);
    memcpy(grown + si + 3, steps + si + 1, sizeof(*steps) * (size_t)(n - si - 1));
    struct cg_step *ex = &grown[si + 1];
    *ex = steps[si];
    struct cg_xfer *sends = cg_arena_alloc(arena, sizeof(*sends) * (size_t)ex->nsends);
    memcpy(sends, ex->sends, sizeof(*sends) * (size_t)ex->nsends);
    ex->sends = sends;
    struct cg_xfer *x = &sends[k];
    struct cg_ref out0 = { CG_BUF_OUT, CG_RANGE_BLOCK, num(arena, 0, x->pos), NULL, x->ref.pos, NULL };
    struct cg_ref own = { CG_BUF_IN, CG_RANGE_BLOCK, name_root(arena, x->pos), NULL, x->ref.pos, NULL };
    struct cg_step copy = { 0 };
    copy.kind = CG_STEP_COPY;
    copy.name = "copy";
    copy.when = x->when;
    copy.pos = x->pos;
    copy.index = ex->index;
    copy.tag_id = ex->tag_id;
    grown[si] = copy;
    grown[si].dst = out0;
    grown[si].src = x->ref;
    grown[si + 2] = copy;
    grown[si + 2].dst = out0;
    grown[si + 2].src = own;
    x->ref = out0;
    ph->steps = grown;
    ph->nsteps = n + 2;
    try_mutant(r, x->pos, "send staged through out block 0, the root's own block put back "
                          "after (breaks only in place)");
    ph->steps = steps;
    ph->nsteps = n;
}

/* A strided range's stride one larger, and the stride dropped (the range
 * read as contiguous). */
static void stride_mutants(struct run *r, struct cg_arena *arena, struct cg_ref *ref)
{
    struct cg_expr *stride = ref->stride;
    if (stride == NULL) {
        return;
    }
    ref->stride = bin(arena, CG_OP_ADD, stride, num(arena, 1, stride->pos));
    try_mutant(r, stride->pos, "stride off by one");
    ref->stride = NULL;
    try_mutant(r, stride->pos, "stride dropped (contiguous)");
    ref->stride = stride;
}

int cg_mutate(struct cg_gen *g, struct cg_arena *arena, struct cg_schedule *s, FILE *report,
              struct cg_mutate_stats *stats)
{
    FILE *null = fopen("/dev/null", "w");
    if (null == NULL) {
        return -1;
    }
    struct cg_gen quiet = *g;
    cg_diag_init(&quiet.diag, null);
    quiet.diag.max_errors = 0;
    struct run r = { &quiet, s, stats, report };
    /* Tables: every element one more, and one element fewer. */
    for (int ti = 0; ti < s->ntables; ti++) {
        struct cg_table *t = &s->tables[ti];
        struct cg_expr *value = t->value, *size = t->size;
        t->value = bin(arena, CG_OP_ADD, value, num(arena, 1, value->pos));
        try_mutant(&r, value->pos, "table element off by one");
        t->value = value;
        if (t->first == ti) { /* a group's size is its first column's */
            t->size = bin(arena, CG_OP_SUB, size, num(arena, 1, size->pos));
            try_mutant(&r, size->pos, "table one element short");
            t->size = size;
        }
    }
    for (int pi = 0; pi < s->nphases; pi++) {
        struct cg_phase *ph = &s->phases[pi];
        if (ph->rounds != CG_ROUNDS_NONE) {
            struct cg_expr *saved = ph->to;
            int down = ph->rounds == CG_ROUNDS_DOWN;
            ph->to = bin(arena, down ? CG_OP_ADD : CG_OP_SUB, saved, num(arena, 1, saved->pos));
            try_mutant(&r, ph->rounds_pos, "one round short");
            ph->to = saved;
        }
        for (int si = 0; si < ph->nsteps; si++) {
            struct cg_step *st = &ph->steps[si];
            for (int k = 0; k < st->nsends && cg_verify_in_place_aliases(s->coll); k++) {
                if (st->sends[k].ref.buf == CG_BUF_IN && st->sends[k].ref.kind == CG_RANGE_BLOCK) {
                    staged_mutant(&r, arena, ph, si, k);
                    st = &ph->steps[si];
                }
            }
            for (int k = 0; k < st->nsends + st->nrecvs; k++) {
                struct cg_xfer *x = k < st->nsends ? &st->sends[k] : &st->recvs[k - st->nsends];
                struct cg_expr *peer = x->peer;
                x->peer = bin(arena, CG_OP_MOD, bin(arena, CG_OP_ADD, peer, num(arena, 1, peer->pos)),
                              name_p(arena, peer->pos));
                try_mutant(&r, peer->pos, "peer off by one");
                x->peer = peer;
                struct cg_expr *first = x->ref.first;
                if (first != NULL) {
                    x->ref.first = bin(arena, CG_OP_ADD, first, num(arena, 1, first->pos));
                    try_mutant(&r, first->pos, "block off by one");
                    x->ref.first = first;
                }
                stride_mutants(&r, arena, &x->ref);
            }
            if (st->kind == CG_STEP_REDUCE || st->kind == CG_STEP_COPY ||
                st->kind == CG_STEP_CALL || st->kind == CG_STEP_FILL) {
                struct cg_ref *refs[2] = { &st->dst, &st->src };
                for (int k = 0; k < 2; k++) {
                    struct cg_expr *first = refs[k]->first;
                    if (first != NULL) {
                        refs[k]->first = bin(arena, CG_OP_ADD, first, num(arena, 1, first->pos));
                        try_mutant(&r, first->pos, "block off by one");
                        refs[k]->first = first;
                    }
                    stride_mutants(&r, arena, refs[k]);
                }
            }
            if (st->kind == CG_STEP_REDUCE) {
                struct cg_ref tmp = st->dst;
                st->dst = st->src;
                st->src = tmp;
                try_mutant(&r, st->pos, "reduce operands swapped (into <-> from)");
                st->src = st->dst;
                st->dst = tmp;
                st->order ^= 1;
                try_mutant(&r, st->pos, "reduce operand order flipped");
                st->order ^= 1;
            }
            /* Drop the step: shift the rest down, then put it back. */
            struct cg_step saved = *st;
            memmove(&ph->steps[si], &ph->steps[si + 1],
                    sizeof(*st) * (size_t)(ph->nsteps - si - 1));
            ph->nsteps--;
            try_mutant(&r, saved.pos, "step dropped");
            ph->nsteps++;
            memmove(&ph->steps[si + 1], &ph->steps[si], sizeof(*st) * (size_t)(ph->nsteps - si - 1));
            ph->steps[si] = saved;
        }
    }
    fclose(null);
    return 0;
}
