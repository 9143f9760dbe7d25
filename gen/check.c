/* check.c - pass 2: names bound, identifiers and shapes checked.
 *
 * Owns: unsafe identifiers, unknown or duplicate names, buffers a
 * collective does not have, writes into the read-only input, a missing
 * scratch declaration, root in an unrooted collective. After it succeeds
 * every expression's names have slots and tag ids are assigned.
 */
#include <ctype.h>
#include <string.h>

#include "ir.h"

const char *const cg_op_names[CG_STEP_KINDS_] = {
#define X(id, name, doc) name,
    CG_OPS(X)
#undef X
};

const char *const cg_buf_names[CG_BUF_COUNT_] = { "in", "out", "tmp" };

/* Names the emitted code uses itself, and C's and C++'s keywords: a
 * schedule may not declare them. */
static const char *const reserved[] = {
    "p", "rank", "root", "count", "sendbuf", "recvbuf", "buffer", "sendcount", "recvcount",
    "sendtype", "recvtype", "datatype", "op", "comm", "rc", "c", "in", "out", "tmp", "geom", "mine",
    "token",
    "auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else",
    "enum", "extern", "float", "for", "goto", "if", "inline", "int", "long", "register",
    "restrict", "return", "short", "signed", "sizeof", "static", "struct", "switch",
    "typedef", "union", "unsigned", "void", "volatile", "while", "_Bool", "_Complex",
    "_Imaginary", "_Alignas", "_Alignof", "_Atomic", "_Generic", "_Noreturn",
    "_Static_assert", "_Thread_local", "main", "errno", "NULL", "bool", "true", "false",
    "log2", "ceil_log2", "pof2", "pow", "min", "max", "ceil_div", "ceil_log", "to_negabinary",
    "from_negabinary", "bit_reverse", "ctz", "popcount",
    /* Why C++'s too: the CUDA twins (emitted/cuda/, nvcc) are C++, and a
     * let named `new` emitted as `const int new = ...` does not compile
     * there. Those that end in _t are refused already. */
    "alignas", "alignof", "and", "and_eq", "asm", "bitand", "bitor", "catch", "class", "compl",
    "concept", "consteval", "constexpr", "constinit", "const_cast", "co_await", "co_return",
    "co_yield", "decltype", "delete", "dynamic_cast", "explicit", "export", "friend", "mutable",
    "namespace", "new", "noexcept", "not", "not_eq", "nullptr", "operator", "or", "or_eq",
    "private", "protected", "public", "reinterpret_cast", "requires", "static_assert",
    "static_cast", "template", "this", "thread_local", "throw", "try", "typeid", "typename",
    "using", "virtual", "xor", "xor_eq", NULL
};

#define CG_MAX_IDENT 40

struct scope_entry {
    const char *name;  /* declared name */
    int slot;          /* its slot */
    struct cg_pos pos; /* where declared (0 for builtins) */
    int *used;         /* set to 1 when an expression mentions it (may be NULL) */
    const struct cg_table *table; /* a table's name: read only as name[i] */
};

struct checker {
    struct cg_gen *g;            /* context */
    struct cg_schedule *s;       /* what is checked */
    struct scope_entry vars[256];/* visible names, innermost last */
    int nvars;                   /* entries used */
    int nslots;                  /* slots handed out */
    const char *slot_names[256]; /* by slot */
    unsigned char slot_wide[256];/* by slot: a let bound to a 64-bit value */
    const char *context;         /* what the current expression is, for messages */
    int table_slots;             /* elements of all tables (slots from CG_TABLE_SLOT0) */
};

static void err(struct checker *ck, struct cg_pos pos, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* "an allgather", "a bcast". */
static const char *a_coll(enum cg_coll_kind c)
{
    return strchr("aeiou", cg_colls[c].name[0]) ? "an" : "a";
}

static void err(struct checker *ck, struct cg_pos pos, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cg_verror(&ck->g->diag, ck->s->file, pos, fmt, ap);
    va_end(ap);
}

/* A safe C identifier of ours: [a-z_][a-z0-9_]* (lower case, so that the
 * upper-case tag constants made from it stay unique), at most 40 characters,
 * not reserved, no cg_/mpi_ prefix, no leading or double underscore. */
static int ident_ok(struct checker *ck, const char *name, struct cg_pos pos, const char *what)
{
    if (name == NULL) {
        return 0;
    }
    size_t n = strlen(name);
    int ok = n > 0 && n <= CG_MAX_IDENT && (islower((unsigned char)name[0]) || name[0] == '_');
    for (size_t i = 0; ok && i < n; i++) {
        unsigned char ch = (unsigned char)name[i];
        ok = islower(ch) || isdigit(ch) || ch == '_';
    }
    if (!ok) {
        err(ck, pos, "%s '%s' is not a safe identifier: use lower-case letters, digits and "
            "'_', starting with a letter, at most %d characters", what, name, CG_MAX_IDENT);
        return 0;
    }
    if (name[0] == '_' || strstr(name, "__") != NULL || strncmp(name, "cg_", 3) == 0 ||
        strncmp(name, "mpi_", 4) == 0 || strncmp(name, "pmpi_", 5) == 0) {
        err(ck, pos, "%s '%s' uses a reserved prefix or '__'", what, name);
        return 0;
    }
    for (int i = 0; reserved[i]; i++) {
        if (strcmp(name, reserved[i]) == 0) {
            err(ck, pos, "%s '%s' is reserved (a C keyword or a name the generated code uses)",
                what, name);
            return 0;
        }
    }
    return 1;
}

static int declare(struct checker *ck, const char *name, struct cg_pos pos, const char *what,
                   int *used)
{
    if (!ident_ok(ck, name, pos, what)) {
        return -1;
    }
    size_t n = strlen(name);
    if (n >= 2 && strcmp(name + n - 2, "_t") == 0) {
        err(ck, pos, "%s '%s' ends in '_t', which C reserves for type names (size_t, ...)", what,
            name);
        return -1;
    }
    for (int i = 0; i < ck->nvars; i++) {
        if (strcmp(ck->vars[i].name, name) == 0) {
            err(ck, pos, "%s '%s' is already defined", what, name);
            if (ck->vars[i].pos.line > 0) {
                cg_note(&ck->g->diag, ck->s->file, ck->vars[i].pos, "first defined here");
            }
            return -1;
        }
    }
    if (ck->nvars >= 256 || ck->nslots >= 256) {
        err(ck, pos, "too many names (256 at most)");
        return -1;
    }
    int slot = ck->nslots++;
    ck->slot_names[slot] = name;
    ck->vars[ck->nvars++] = (struct scope_entry){ name, slot, pos, used, NULL };
    return slot;
}

static void bind_one(struct cg_expr *e, void *arg)
{
    struct checker *ck = arg;
    for (int i = ck->nvars - 1; i >= 0; i--) {
        if (strcmp(ck->vars[i].name, e->name) == 0) {
            const struct cg_table *t = ck->vars[i].table;
            if (e->kind == CG_E_INDEX && t == NULL) {
                err(ck, e->pos, "'%s' in %s is not a table (only a table's name takes "
                    "[index])", e->name, ck->context);
                return;
            }
            if (e->kind == CG_E_NAME && t != NULL) {
                err(ck, e->pos, "'%s' in %s is a table: read one element, %s[i]", e->name,
                    ck->context, e->name);
                return;
            }
            if (t != NULL) {
                e->tbase = t->base;
                e->tmax = (int)t->max;
            }
            e->slot = ck->vars[i].slot;
            if (ck->vars[i].used) {
                *ck->vars[i].used = 1;
            }
            return;
        }
    }
    if (strcmp(e->name, "root") == 0) {
        err(ck, e->pos, "'root' in %s: %s has no root", ck->context, cg_colls[ck->s->coll].name);
    } else if (!ck->s->topology && (strcmp(e->name, "ppn") == 0 || strcmp(e->name, "nnodes") == 0 ||
                                    strcmp(e->name, "node") == 0 || strcmp(e->name, "local") == 0)) {
        err(ck, e->pos, "'%s' in %s: node and lane names need \"topology\": {\"fallback\": ...} "
            "in the schedule", e->name, ck->context);
    } else if (e->kind == CG_E_INDEX) {
        err(ck, e->pos, "unknown table '%s' in %s%s", e->name, ck->context,
            ck->s->ntables > 0 ? "" : " (a schedule's \"tables\" declares them)");
    } else if (strcmp(e->name, "count") == 0) {
        err(ck, e->pos, "'count' in %s: schedules are verified for every count, so peers and "
            "blocks may not depend on it", ck->context);
    } else {
        err(ck, e->pos, "unknown name '%s' in %s", e->name, ck->context);
    }
}

static void bind(struct checker *ck, struct cg_expr *e, const char *context)
{
    if (e != NULL) {
        ck->context = context;
        cg_expr_walk_names(e, bind_one, ck);
        /* Only a let keeps a 64-bit value; everywhere else it is used as
         * an int (lets() lifts this for its own root). */
        cg_expr_widen(e, ck->slot_wide);
        e->narrow = 1;
    }
}

static void segments_name(struct cg_expr *e, void *arg)
{
    struct checker *ck = arg;
    if (e->slot == CG_SLOT_RANK || e->slot == CG_SLOT_ROOT || e->slot == CG_SLOT_NODE ||
        e->slot == CG_SLOT_LOCAL) {
        err(ck, e->pos, "'%s' in \"segments\": an exchange's segments may mention only p, ppn, "
            "nnodes and params, so that both ends of every message cut it alike", e->name);
    }
}

/* An exchange's "segments" in the scope of "blocks" (p, rank, root, the
 * topology's names, params: no lets, no round variable), then without the
 * names that differ between ranks. Why so narrow: a sender and its
 * receiver must cut a message into the same pieces, and a name that is
 * equal on every rank proves it without simulating pairs. */
static void bind_segments(struct checker *ck, struct cg_step *st, int param_vars)
{
    if (st->segments == NULL) {
        return;
    }
    int nvars = ck->nvars;
    ck->nvars = param_vars;
    bind(ck, st->segments, "\"segments\"");
    ck->nvars = nvars;
    cg_expr_walk_names(st->segments, segments_name, ck);
    /* Why: a strided range is one message over its blocks (runtime/strided.c),
     * which the runtime does not cut into pieces. */
    for (int k = 0; k < st->nsends + st->nrecvs; k++) {
        const struct cg_xfer *x = (k < st->nsends) ? &st->sends[k] : &st->recvs[k - st->nsends];
        if (x->ref.stride != NULL) {
            err(ck, x->ref.pos, "a segmented exchange cannot move a strided range (drop "
                                "\"segments\" or the \"stride\")");
        }
    }
}

static void ref(struct checker *ck, struct cg_ref *r, int writes, const char *what)
{
    const struct cg_schedule *s = ck->s;
    if (r->buf == CG_BUF_IN) {
        if (cg_colls[s->coll].shape == CG_SHAPE_TOKEN) {
            err(ck, r->pos, "%s uses 'in': %s has no data; its token is 'out' block 0", what,
                cg_colls[s->coll].name);
        } else if (cg_colls[s->coll].input == CG_INPUT_NONE) {
            err(ck, r->pos, "%s uses 'in': %s schedules work on 'out' (the runtime copies the "
                "input there first)", what, cg_colls[s->coll].name);
        } else if (writes) {
            err(ck, r->pos, "%s writes into 'in', which is read-only", what);
        }
    }
    if (r->buf == CG_BUF_TMP && s->scratch == NULL) {
        err(ck, r->pos, "%s uses 'tmp' but the schedule declares no \"scratch\"", what);
    }
    bind(ck, r->first, what);
    bind(ck, r->count, what);
    bind(ck, r->stride, what);
}

/* Why: a call hands its views to another collective as (buffer, first,
 * count), and a fill zeroes whole runs; neither has a strided form. */
static void no_stride(struct checker *ck, const struct cg_ref *r, const char *what)
{
    if (r->stride != NULL) {
        err(ck, r->stride->pos, "%s cannot be strided (strided ranges are for sends, receives, "
            "reduce and copy steps)", what);
    }
}

int cg_call_views(enum cg_coll_kind coll)
{
    switch (cg_colls[coll].bufs) {
    case CG_BUFS_ONE:
        return 4;
    case CG_BUFS_NONE:
        return 0;
    case CG_BUFS_SEND_RECV:
        break;
    }
    return 3;
}

int cg_step_fused(const struct cg_phase *ph, int si)
{
    return si > 0 && si < ph->nsteps && ph->steps[si].kind == CG_STEP_REDUCE &&
           ph->steps[si - 1].kind == CG_STEP_EXCHANGE && ph->steps[si - 1].segments != NULL;
}

/* ---- receives written straight into out (cg_recv_redirect) ---------------- */

/* Whether a and b are the same expression (both absent, or printed alike;
 * a text too long to print is taken as different). */
static int expr_same(const struct cg_expr *a, const struct cg_expr *b)
{
    char x[1024], y[1024];
    if (a == NULL || b == NULL) {
        return a == b;
    }
    size_t nx = cg_expr_print(a, x, sizeof(x)), ny = cg_expr_print(b, y, sizeof(y));
    return nx < sizeof(x) && ny < sizeof(y) && strcmp(x, y) == 0;
}

/* Whether two plain (unstrided) ranges of one buffer are written alike. */
static int ref_same(const struct cg_ref *a, const struct cg_ref *b)
{
    if (a->buf != b->buf || a->kind != b->kind || a->stride != NULL || b->stride != NULL) {
        return 0;
    }
    return a->kind == CG_RANGE_ALL ||
           (expr_same(a->first, b->first) && (a->kind == CG_RANGE_BLOCK ||
                                              expr_same(a->count, b->count)));
}

/* The reduce step that consumes receive k of exchange step si: the first of
 * the reduce steps right after it whose "from" is that receive's tmp range,
 * written alike, into a plain range of out, running exactly when the
 * receive does (its "when", and the step's, absent or the reduce's own);
 * -1 where there is none, or where a second reduce of the run reads the
 * same range. */
static int consumer_of(const struct cg_phase *ph, int si, int k)
{
    const struct cg_step *e = &ph->steps[si];
    if (e->kind != CG_STEP_EXCHANGE || k < 0 || k >= e->nrecvs) {
        return -1;
    }
    const struct cg_xfer *x = &e->recvs[k];
    if (x->ref.buf != CG_BUF_TMP || x->ref.stride != NULL) {
        return -1;
    }
    for (int i = 0; i < e->nrecvs; i++) {
        if (e->recvs[i].ref.buf == CG_BUF_OUT) {
            return -1; /* the message could land on another receive's blocks */
        }
    }
    int found = -1;
    for (int j = si + 1; j < ph->nsteps && ph->steps[j].kind == CG_STEP_REDUCE; j++) {
        const struct cg_step *r = &ph->steps[j];
        if (!ref_same(&r->src, &x->ref)) {
            continue;
        }
        if (found >= 0) {
            return -1; /* read twice: the first reduce would leave nothing in tmp */
        }
        if (r->dst.buf != CG_BUF_OUT || r->dst.stride != NULL ||
            (x->when != NULL && !expr_same(x->when, r->when)) ||
            (e->when != NULL && !expr_same(e->when, r->when))) {
            return -1;
        }
        found = j;
    }
    /* A segmented exchange is completed by the reduce right after it. */
    if (found >= 0 && e->segments != NULL && found != si + 1) {
        return -1;
    }
    return found;
}

/* Whether reduce step j of ph consumes a receive of the exchange before
 * its run of reduce steps. */
static int is_consumer(const struct cg_phase *ph, int j)
{
    int e = j - 1;
    while (e >= 0 && ph->steps[e].kind == CG_STEP_REDUCE) {
        e--;
    }
    if (e < 0 || ph->steps[e].kind != CG_STEP_EXCHANGE) {
        return 0;
    }
    for (int k = 0; k < ph->steps[e].nrecvs; k++) {
        if (consumer_of(ph, e, k) == j) {
            return 1;
        }
    }
    return 0;
}

/* Whether tmp is only a landing place: written by receives, read only by
 * the reduce steps that consume them (consumer_of), and by nothing else
 * (no send, copy, fill, call or reduce into it). Then a receive's data is
 * never read after its consumer, so it may land elsewhere. */
static int tmp_only_lands(const struct cg_schedule *s)
{
    for (int i = 0; i < s->nphases; i++) {
        const struct cg_phase *ph = &s->phases[i];
        for (int j = 0; j < ph->nsteps; j++) {
            const struct cg_step *st = &ph->steps[j];
            switch (st->kind) {
            case CG_STEP_EXCHANGE:
                for (int k = 0; k < st->nsends; k++) {
                    if (st->sends[k].ref.buf == CG_BUF_TMP) {
                        return 0;
                    }
                }
                break;
            case CG_STEP_REDUCE:
                if (st->dst.buf == CG_BUF_TMP ||
                    (st->src.buf == CG_BUF_TMP && !is_consumer(ph, j))) {
                    return 0;
                }
                break;
            case CG_STEP_COPY:
            case CG_STEP_CALL:
                if (st->src.buf == CG_BUF_TMP || st->dst.buf == CG_BUF_TMP) {
                    return 0;
                }
                break;
            case CG_STEP_FILL:
                if (st->dst.buf == CG_BUF_TMP) {
                    return 0;
                }
                break;
            default:
                break;
            }
        }
    }
    return 1;
}

int cg_recv_redirect(const struct cg_schedule *s, const struct cg_phase *ph, int si, int k)
{
    if (!cg_colls[s->coll].reduces || cg_colls[s->coll].combine == CG_COMBINE_UNION) {
        return -1;
    }
    int j = consumer_of(ph, si, k);
    return (j >= 0 && tmp_only_lands(s)) ? j : -1;
}

int cg_step_consumes(const struct cg_schedule *s, const struct cg_phase *ph, int j)
{
    return cg_colls[s->coll].reduces && cg_colls[s->coll].combine != CG_COMBINE_UNION &&
           j >= 0 && j < ph->nsteps && ph->steps[j].kind == CG_STEP_REDUCE &&
           is_consumer(ph, j) && tmp_only_lands(s);
}

int cg_has_calls(const struct cg_schedule *s)
{
    for (int i = 0; i < s->nphases; i++) {
        for (int k = 0; k < s->phases[i].nsteps; k++) {
            if (s->phases[i].steps[k].kind == CG_STEP_CALL) {
                return 1;
            }
        }
    }
    return 0;
}

int cg_zero_fills(const struct cg_schedule *s)
{
    for (int i = 0; i < s->nphases; i++) {
        for (int k = 0; k < s->phases[i].nsteps; k++) {
            const struct cg_step *st = &s->phases[i].steps[k];
            if (st->kind == CG_STEP_FILL || (st->kind == CG_STEP_CALL && st->call_bor)) {
                return 1;
            }
        }
    }
    return 0;
}

static void lets(struct checker *ck, struct cg_let *l, int n)
{
    for (int i = 0; i < n; i++) {
        bind(ck, l[i].expr, "a let binding");
        if (l[i].expr != NULL) {
            l[i].expr->narrow = 0;
            l[i].wide = l[i].expr->wide;
        }
        l[i].slot = declare(ck, l[i].name, l[i].pos, "let name", &l[i].used);
        if (l[i].slot >= 0) {
            ck->slot_wide[l[i].slot] = (unsigned char)l[i].wide;
        }
    }
}

/* "tables": each table's name is visible in its own "value" (elements
 * computed before) and everywhere after it; its index only in "value". A
 * group's columns are all visible in each other's values (the loop fills
 * element i of each in turn). Elements get slots from CG_TABLE_SLOT0 on,
 * past every named slot. */
static void tables(struct checker *ck)
{
    struct cg_schedule *s = ck->s;
    int64_t next = CG_TABLE_SLOT0;
    for (int g = 0; g < s->ntables; g += s->tables[g].ncols > 0 ? s->tables[g].ncols : 1) {
        struct cg_table *cols = &s->tables[g];
        int n = cols[0].ncols > 0 ? cols[0].ncols : 1;
        if (cols[0].group != NULL) {
            ident_ok(ck, cols[0].group, cols[0].pos, "table group name");
        }
        bind(ck, cols[0].size, "a table's \"size\"");
        for (int c = 0; c < n; c++) {
            struct cg_table *t = &cols[c];
            t->slot = declare(ck, t->name, t->pos, "table name", &t->used);
            if (t->slot < 0) {
                continue;
            }
            ck->vars[ck->nvars - 1].table = t;
            if (t->max > 0 && next + t->max > CG_TABLE_SLOT0 + CG_TABLES_TOTAL_MAX) {
                err(ck, t->max_pos, "table '%s': the tables' \"max\" add up to more than %d "
                    "elements", t->name, CG_TABLES_TOTAL_MAX);
            } else {
                t->base = (int)next;
                next += t->max;
            }
        }
        int var_slot = -1;
        if (cols[0].var != NULL) {
            var_slot = declare(ck, cols[0].var, cols[0].var_pos, "table index name", NULL);
        }
        for (int c = 0; c < n; c++) {
            cols[c].var_slot = var_slot;
            bind(ck, cols[c].value, "a table's \"value\"");
        }
        if (var_slot >= 0) {
            ck->nvars--; /* the index is visible in "value" only */
        }
    }
    ck->table_slots = (int)(next - CG_TABLE_SLOT0);
}

static const char *step_default_name(const struct cg_phase *ph, int i, struct cg_arena *a)
{
    const char *base = cg_op_names[ph->steps[i].kind];
    int before = 0, total = 0;
    for (int j = 0; j < ph->nsteps; j++) {
        if (ph->steps[j].kind == ph->steps[i].kind && ph->steps[j].name == NULL) {
            total++;
            if (j < i) {
                before++;
            }
        }
    }
    return total == 1 ? base : cg_arena_printf(a, "%s_%d", base, before + 1);
}

/* Zero-filled blocks and bitwise-or calls: only where blocks are p equal
 * blocks (bytes of a block are then the same in any datatype view) and the
 * collective has no op of its own. */
static int zero_fill_ok(const struct cg_schedule *s)
{
    return cg_colls[s->coll].combine == CG_COMBINE_NONE &&
           (cg_colls[s->coll].shape == CG_SHAPE_UNIFORM || cg_colls[s->coll].shape == CG_SHAPE_ONE);
}

int cg_check(struct cg_gen *g, struct cg_arena *arena, struct cg_schedule *s)
{
    struct checker *ck = cg_arena_alloc(arena, sizeof(*ck));
    ck->g = g;
    ck->s = s;
    int before = g->diag.errors;
    struct cg_pos none = { 0, 0 };
    ck->vars[0] = (struct scope_entry){ "p", CG_SLOT_P, none, NULL, NULL };
    ck->vars[1] = (struct scope_entry){ "rank", CG_SLOT_RANK, none, NULL, NULL };
    ck->slot_names[0] = "p";
    ck->slot_names[1] = "rank";
    ck->slot_names[2] = "root";
    ck->slot_names[CG_SLOT_PPN] = "ppn";
    ck->slot_names[CG_SLOT_NNODES] = "nnodes";
    ck->slot_names[CG_SLOT_NODE] = "node";
    ck->slot_names[CG_SLOT_LOCAL] = "local";
    ck->nvars = 2;
    if (cg_colls[s->coll].rooted) {
        ck->vars[ck->nvars++] = (struct scope_entry){ "root", CG_SLOT_ROOT, none, NULL, NULL };
    }
    if (s->topology) {
        ck->vars[ck->nvars++] = (struct scope_entry){ "ppn", CG_SLOT_PPN, none, NULL, NULL };
        ck->vars[ck->nvars++] = (struct scope_entry){ "nnodes", CG_SLOT_NNODES, none, NULL, NULL };
        ck->vars[ck->nvars++] = (struct scope_entry){ "node", CG_SLOT_NODE, none, NULL, NULL };
        ck->vars[ck->nvars++] = (struct scope_entry){ "local", CG_SLOT_LOCAL, none, NULL, NULL };
        if (s->fallback != NULL) {
            ident_ok(ck, s->fallback, s->fallback_pos, "fallback schedule name");
        }
    }
    ck->nslots = CG_SLOT_FIRST_FREE;

    if (ident_ok(ck, s->name, s->pos, "schedule name")) {
        const char *cn = cg_colls[s->coll].name;
        size_t n = strlen(cn);
        if (strncmp(s->name, cn, n) != 0 || s->name[n] != '_' || s->name[n + 1] == '\0') {
            err(ck, s->pos, "schedule name '%s' must start with '%s_'", s->name, cn);
        }
    }
    if (s->summary != NULL) {
        int ok = s->summary[0] != '\0' && strlen(s->summary) <= 200 &&
                 strstr(s->summary, "*/") == NULL && strstr(s->summary, "??") == NULL;
        for (const char *c = s->summary; ok && *c; c++) {
            ok = *c >= 32 && *c < 127 && *c != '\\';
        }
        if (!ok) {
            err(ck, s->pos, "\"summary\" must be one line of at most 200 printable ASCII "
                "characters, without '\\', '*/' or '?\?'");
        }
    }
    if (cg_colls[s->coll].shape == CG_SHAPE_TOKEN) {
        /* Why a fixed 1: a barrier moves a token, one block of one byte. */
        if (s->blocks != NULL) {
            err(ck, s->blocks_pos, "\"blocks\" is fixed for %s: one token block",
                cg_colls[s->coll].name);
        }
        struct cg_expr *e = cg_arena_alloc(arena, sizeof(*e));
        e->kind = CG_E_NUM;
        e->num = 1;
        e->slot = -1;
        e->pos = s->blocks_pos;
        s->blocks = e;
    } else if (cg_colls[s->coll].shape != CG_SHAPE_SPLIT) {
        if (s->blocks != NULL) {
            err(ck, s->blocks_pos, "\"blocks\" is fixed for %s: block i belongs to rank i",
                cg_colls[s->coll].name);
        }
        struct cg_expr *e = cg_arena_alloc(arena, sizeof(*e));
        e->kind = CG_E_NAME;
        e->name = "p";
        e->slot = CG_SLOT_P;
        e->pos = s->blocks_pos;
        s->blocks = e;
    } else if (s->blocks == NULL) {
        err(ck, s->blocks_pos, "%s %s schedule needs \"blocks\" (how many blocks the vector is "
            "split into, e.g. \"p\" or 1)", a_coll(s->coll), cg_colls[s->coll].name);
    }
    if (s->commutative && !cg_colls[s->coll].reduces) {
        err(ck, s->pos, "\"requires\": {\"commutative\"} makes no sense for %s, which does "
            "not reduce", cg_colls[s->coll].name);
    }
    int64_t combos = 1;
    for (int i = 0; i < s->nparams; i++) {
        s->params[i].slot = declare(ck, s->params[i].name, s->params[i].pos, "parameter name",
                                    NULL);
        int64_t w = s->params[i].hi - s->params[i].lo + 1;
        combos = (w > 0 && combos <= 1000000 / w) ? combos * w : 1000001;
    }
    if (s->nparams > 16) {
        err(ck, s->pos, "%d params; at most 16 are allowed", s->nparams);
    }
    if (combos > CG_MAX_PARAM_COMBOS) {
        err(ck, s->pos, "the params' ranges allow %s%lld combinations of values; the verifier "
            "runs each, so at most %d are allowed (narrow \"min\"..\"max\")",
            combos > 1000000 ? "more than " : "", (long long)(combos > 1000000 ? 1000000 : combos),
            CG_MAX_PARAM_COMBOS);
    }
    bind(ck, s->blocks, "\"blocks\"");
    bind(ck, s->scratch, "\"scratch\"");
    int param_vars = ck->nvars;
    lets(ck, s->lets, s->nlets);
    tables(ck);
    int global_vars = ck->nvars;

    int step_index = 1, tag = 1;
    for (int pi = 0; pi < s->nphases; pi++) {
        struct cg_phase *ph = &s->phases[pi];
        if (ident_ok(ck, ph->name, ph->pos, "phase name")) {
            for (int pj = 0; pj < pi; pj++) {
                if (s->phases[pj].name && strcmp(s->phases[pj].name, ph->name) == 0) {
                    err(ck, ph->pos, "phase name '%s' is already used", ph->name);
                    cg_note(&g->diag, s->file, s->phases[pj].pos, "first used here");
                }
            }
        }
        ck->nvars = global_vars;
        bind(ck, ph->when, "a phase's \"when\"");
        ph->tag_id = tag++;
        if (ph->rounds != CG_ROUNDS_NONE) {
            bind(ck, ph->from, "\"rounds\"");
            bind(ck, ph->to, "\"rounds\"");
            ph->var_slot = declare(ck, ph->var, ph->rounds_pos, "round variable", &ph->var_used);
            ph->round_tag_id = tag++;
        }
        lets(ck, ph->lets, ph->nlets);
        if (ph->nsteps == 0) {
            err(ck, ph->pos, "phase '%s' has no steps", ph->name ? ph->name : "?");
        }
        for (int si = 0; si < ph->nsteps; si++) {
            struct cg_step *st = &ph->steps[si];
            st->index = step_index++;
            st->tag_id = tag++;
            if (st->name != NULL) {
                if (strcmp(st->name, "round") == 0) {
                    err(ck, st->pos, "step name 'round' is reserved (it names the round tag)");
                } else if (ident_ok(ck, st->name, st->pos, "step name")) {
                    for (int sj = 0; sj < si; sj++) {
                        if (ph->steps[sj].name && strcmp(ph->steps[sj].name, st->name) == 0) {
                            err(ck, st->pos, "step name '%s' is already used in phase '%s'",
                                st->name, ph->name);
                        }
                    }
                }
            }
            bind(ck, st->when, "a step's \"when\"");
            bind_segments(ck, st, param_vars);
            for (int k = 0; k < st->nsends; k++) {
                bind(ck, st->sends[k].when, "a send's \"when\"");
                bind(ck, st->sends[k].peer, "\"to\"");
                ref(ck, &st->sends[k].ref, 0, "a send");
            }
            for (int k = 0; k < st->nrecvs; k++) {
                bind(ck, st->recvs[k].when, "a receive's \"when\"");
                bind(ck, st->recvs[k].peer, "\"from\"");
                ref(ck, &st->recvs[k].ref, 1, "a receive");
            }
            if (st->kind == CG_STEP_REDUCE || st->kind == CG_STEP_COPY) {
                const char *what = st->kind == CG_STEP_REDUCE ? "a reduce step" : "a copy step";
                ref(ck, &st->dst, 1, what);
                ref(ck, &st->src, 0, what);
                if (st->kind == CG_STEP_REDUCE && cg_colls[s->coll].combine == CG_COMBINE_NONE) {
                    err(ck, st->pos, "a reduce step in %s %s schedule: %s has no op",
                        a_coll(s->coll), cg_colls[s->coll].name, cg_colls[s->coll].name);
                }
            }
            if (st->kind == CG_STEP_FILL) {
                ref(ck, &st->dst, 1, "a fill step");
                no_stride(ck, &st->dst, "a fill step's range");
                if (!zero_fill_ok(s)) {
                    err(ck, st->pos, "a fill step in %s %s schedule: zero-filling is for "
                        "allgather, gather, scatter and alltoall (p equal blocks, no op), feeding "
                        "a call with \"op\": \"bor\"", a_coll(s->coll), cg_colls[s->coll].name);
                }
            }
            if (st->kind == CG_STEP_CALL) {
                const char *cn = cg_colls[st->call_coll].name;
                bind(ck, st->call_root, "a call's \"root\"");
                bind(ck, st->call_color, "a call's \"color\"");
                if (st->call_has_src) {
                    ref(ck, &st->src, 0, "a call's \"send\"");
                    no_stride(ck, &st->src, "a call's \"send\"");
                }
                if (st->call_has_dst) {
                    ref(ck, &st->dst, 1, cg_colls[st->call_coll].bufs == CG_BUFS_ONE
                                             ? "a call's \"buffer\""
                                             : "a call's \"recv\"");
                    no_stride(ck, &st->dst, "a call's view");
                }
                if (st->call_bor && (!cg_colls[st->call_coll].reduces || !zero_fill_ok(s))) {
                    err(ck, st->pos, "\"op\": \"bor\" is for a call to a reducing collective "
                        "(allreduce, reduce, ...) in an allgather, gather, scatter or alltoall "
                        "schedule, which has no op of its own");
                } else if (cg_colls[st->call_coll].reduces && !cg_colls[s->coll].reduces &&
                           !st->call_bor) {
                    err(ck, st->pos, "a call to %s in %s %s schedule: %s needs an op, and %s has "
                        "none", cn, a_coll(s->coll), cg_colls[s->coll].name, cn,
                        cg_colls[s->coll].name);
                }
                if (cg_colls[st->call_coll].combine == CG_COMBINE_UNION) {
                    err(ck, st->pos, "a call to barrier is not supported (it moves no data)");
                }
                if ((st->call_group == CG_GROUP_NODE || st->call_group == CG_GROUP_LANE) &&
                    !s->topology) {
                    err(ck, st->pos, "a call on the %s group needs \"topology\": "
                        "{\"fallback\": ...} in the schedule",
                        st->call_group == CG_GROUP_NODE ? "node" : "lane");
                }
            }
        }
        for (int si = 0; si < ph->nsteps; si++) {
            if (ph->steps[si].name == NULL) {
                ph->steps[si].name = step_default_name(ph, si, arena);
            }
        }
    }
    s->ntags = tag;
    s->nslots = ck->nslots;
    if (s->ntables > 0) {
        s->nslots = CG_TABLE_SLOT0 + ck->table_slots;
    }
    s->slot_names = cg_arena_alloc(arena, sizeof(char *) * (size_t)s->nslots);
    memcpy(s->slot_names, ck->slot_names, sizeof(char *) * (size_t)ck->nslots);
    for (int i = 0; i < s->ntables; i++) {
        for (int64_t k = 0; s->tables[i].base > 0 && k < s->tables[i].max; k++) {
            s->slot_names[s->tables[i].base + k] = s->tables[i].name;
        }
    }
    if (g->diag.errors > before) {
        return -1;
    }
    s->checked = 1;
    return 0;
}
