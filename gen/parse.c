/* parse.c - pass 1: schedule JSON -> IR structs with source positions.
 *
 * Owns: malformed JSON, unknown and duplicate keys, values of the wrong JSON
 * type, unknown step kinds, buffers and collectives, expression syntax.
 * Names inside expressions stay unbound; check.c binds them.
 */
#include <string.h>

#include "ir.h"
#include "json.h"

struct parser {
    struct cg_gen *g;       /* context */
    struct cg_arena *arena; /* where the IR goes */
    const char *file;       /* for messages */
};

static void err(struct parser *ps, struct cg_pos pos, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void err(struct parser *ps, struct cg_pos pos, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cg_verror(&ps->g->diag, ps->file, pos, fmt, ap);
    va_end(ap);
}

/* 1 when v is of that kind, else reports "what must be ..." and returns 0
 * (a predicate; descriptor.c's getters return 0 or -1 instead). */
static int has_kind(struct parser *ps, const struct cg_json *v, enum cg_json_kind kind,
                    const char *what)
{
    if (v->kind != kind) {
        err(ps, v->pos, "%s must be %s, not %s", what, cg_json_kind_name(kind),
            cg_json_kind_name(v->kind));
        return 0;
    }
    return 1;
}

/* An expression: a JSON string in expression syntax, or an integer. */
static struct cg_expr *expr(struct parser *ps, const struct cg_json *v, const char *what)
{
    if (v == NULL) {
        return NULL;
    }
    if (v->kind == CG_J_NUMBER && v->is_int) {
        struct cg_expr *e = cg_arena_alloc(ps->arena, sizeof(*e));
        e->kind = CG_E_NUM;
        e->num = v->ival;
        e->slot = -1;
        e->pos = v->pos;
        return e;
    }
    if (v->kind == CG_J_NUMBER && v->int_overflow) {
        err(ps, v->pos, "%s: %s is out of range (expressions use 64-bit integers)", what,
            v->text);
        return NULL;
    }
    if (v->kind != CG_J_STRING) {
        err(ps, v->pos, "%s must be an expression (a string or an integer), not %s", what,
            cg_json_kind_name(v->kind));
        return NULL;
    }
    return cg_expr_parse(ps->arena, &ps->g->diag, ps->file, v->str_pos, v->str);
}

static const char *string(struct parser *ps, const struct cg_json *v, const char *what)
{
    if (v == NULL || !has_kind(ps, v, CG_J_STRING, what)) {
        return NULL;
    }
    return v->str;
}

/* A phase's or step's "comment": a string, or an array of strings (its
 * lines). Kept as written; the emitters print it sanitised for a C comment. */
static void comment(struct parser *ps, const struct cg_json *v, const char ***lines, int *n)
{
    *lines = NULL;
    *n = 0;
    if (v == NULL) {
        return;
    }
    if (v->kind == CG_J_STRING) {
        *lines = cg_arena_alloc(ps->arena, sizeof(char *));
        (*lines)[(*n)++] = v->str;
        return;
    }
    if (v->kind != CG_J_ARRAY) {
        err(ps, v->pos, "\"comment\" must be a string or an array of strings, not %s",
            cg_json_kind_name(v->kind));
        return;
    }
    *lines = cg_arena_alloc(ps->arena, sizeof(char *) * (size_t)(v->nitems + 1));
    for (int i = 0; i < v->nitems; i++) {
        if (has_kind(ps, v->items[i], CG_J_STRING, "a line of \"comment\"")) {
            (*lines)[(*n)++] = v->items[i]->str;
        }
    }
}

static const struct cg_json *required(struct parser *ps, const struct cg_json *obj,
                                      const char *key, const char *what)
{
    const struct cg_json *v = cg_json_get(obj, key);
    if (v == NULL) {
        err(ps, obj->pos, "%s needs \"%s\"", what, key);
    }
    return v;
}

static void range(struct parser *ps, const struct cg_json *v, struct cg_ref *ref)
{
    if (v->kind == CG_J_STRING && strcmp(v->str, "all") == 0) {
        ref->kind = CG_RANGE_ALL;
        return;
    }
    if (v->kind != CG_J_OBJECT) {
        err(ps, v->pos,
            "\"blocks\" must be \"all\", {\"block\": e} or {\"first\": e, \"count\": e}");
        return;
    }
    static const char *const keys[] = { "block", "first", "count", "stride", NULL };
    cg_json_check_keys(&ps->g->diag, ps->file, v, "a block range", keys);
    const struct cg_json *block = cg_json_get(v, "block");
    const struct cg_json *first = cg_json_get(v, "first");
    const struct cg_json *count = cg_json_get(v, "count");
    const struct cg_json *stride = cg_json_get(v, "stride");
    if (stride != NULL && (first == NULL || count == NULL || block != NULL)) {
        err(ps, stride->pos, "\"stride\" needs \"first\" and \"count\" (a strided range)");
    } else if (stride != NULL) {
        ref->stride = expr(ps, stride, "\"stride\"");
    }
    if (block != NULL && first == NULL && count == NULL) {
        ref->kind = CG_RANGE_BLOCK;
        ref->first = expr(ps, block, "\"block\"");
    } else if (block == NULL && first != NULL && count != NULL) {
        ref->kind = CG_RANGE_SPAN;
        ref->first = expr(ps, first, "\"first\"");
        ref->count = expr(ps, count, "\"count\"");
    } else {
        err(ps, v->pos, "a block range has either \"block\", or both \"first\" and \"count\"");
    }
}

static void buffer_ref(struct parser *ps, const struct cg_json *obj, struct cg_ref *ref)
{
    ref->pos = obj->pos;
    const struct cg_json *buf = required(ps, obj, "buf", "a buffer reference");
    const char *name = string(ps, buf, "\"buf\"");
    if (name != NULL) {
        int found = 0;
        for (int b = 0; b < CG_BUF_COUNT_; b++) {
            if (strcmp(name, cg_buf_names[b]) == 0) {
                ref->buf = (enum cg_bufid)b;
                found = 1;
            }
        }
        if (!found) {
            err(ps, buf->str_pos, "unknown buffer '%s'; expected in, out or tmp", name);
        }
    }
    const struct cg_json *blocks = required(ps, obj, "blocks", "a buffer reference");
    if (blocks != NULL) {
        range(ps, blocks, ref);
    }
}

static void ref_object(struct parser *ps, const struct cg_json *v, const char *what,
                       struct cg_ref *ref)
{
    if (v == NULL || !has_kind(ps, v, CG_J_OBJECT, what)) {
        return;
    }
    static const char *const keys[] = { "buf", "blocks", NULL };
    cg_json_check_keys(&ps->g->diag, ps->file, v, what, keys);
    buffer_ref(ps, v, ref);
}

/* "send" or "recv": one object or an array of them. */
static void xfers(struct parser *ps, const struct cg_json *v, int is_send,
                  struct cg_xfer **out, int *n)
{
    if (v == NULL) {
        return;
    }
    const char *what = is_send ? "a send" : "a receive";
    const char *peer = is_send ? "to" : "from";
    const struct cg_json *const *items = &v;
    int count = 1;
    if (v->kind == CG_J_ARRAY) {
        items = (const struct cg_json *const *)v->items;
        count = v->nitems;
    }
    *out = cg_arena_alloc(ps->arena, sizeof(**out) * (size_t)(count > 0 ? count : 1));
    *n = 0;
    for (int i = 0; i < count; i++) {
        const struct cg_json *o = items[i];
        if (!has_kind(ps, o, CG_J_OBJECT, what)) {
            continue;
        }
        static const char *const send_keys[] = { "to", "buf", "blocks", "when", "comment", NULL };
        static const char *const recv_keys[] = { "from", "buf", "blocks", "when", "comment", NULL };
        cg_json_check_keys(&ps->g->diag, ps->file, o, what, is_send ? send_keys : recv_keys);
        struct cg_xfer *x = &(*out)[(*n)++];
        x->pos = o->pos;
        x->when = expr(ps, cg_json_get(o, "when"), "\"when\"");
        x->peer = expr(ps, required(ps, o, peer, what), is_send ? "\"to\"" : "\"from\"");
        buffer_ref(ps, o, &x->ref);
    }
}

static void lets(struct parser *ps, const struct cg_json *v, struct cg_let **out, int *n)
{
    if (v == NULL || !has_kind(ps, v, CG_J_OBJECT, "\"let\"")) {
        return;
    }
    *out = cg_arena_alloc(ps->arena, sizeof(**out) * (size_t)(v->nitems > 0 ? v->nitems : 1));
    *n = v->nitems;
    for (int i = 0; i < v->nitems; i++) {
        (*out)[i].name = v->items[i]->key;
        (*out)[i].pos = v->items[i]->key_pos;
        (*out)[i].slot = -1;
        (*out)[i].expr = expr(ps, v->items[i], "a let binding");
    }
}

/* "tables": {"name": {"size": e, "max": N, "var": "i", "value": e}, ...}, or
 * a group {"size", "max", "var", "columns": {"name": e, ...}}: a column per
 * table, filled in one loop. */
static void tables(struct parser *ps, const struct cg_json *v, struct cg_schedule *s)
{
    if (v == NULL || !has_kind(ps, v, CG_J_OBJECT, "\"tables\"")) {
        return;
    }
    int n = 0;
    for (int i = 0; i < v->nitems; i++) {
        const struct cg_json *cols = v->items[i]->kind == CG_J_OBJECT
                                         ? cg_json_get(v->items[i], "columns") : NULL;
        n += cols != NULL && cols->kind == CG_J_OBJECT ? cols->nitems : 1;
    }
    s->tables = cg_arena_alloc(ps->arena, sizeof(*s->tables) * (size_t)(n + 1));
    s->ntables = 0;
    for (int i = 0; i < v->nitems; i++) {
        const struct cg_json *o = v->items[i];
        struct cg_table t = { 0 };
        t.name = o->key;
        t.pos = o->key_pos;
        t.slot = t.var_slot = t.base = -1;
        const struct cg_json *cols = NULL;
        if (has_kind(ps, o, CG_J_OBJECT, "a table")) {
            cols = cg_json_get(o, "columns");
            static const char *const keys[] = { "size", "max", "var", "value", "comment", NULL };
            static const char *const gkeys[] = { "size", "max", "var", "columns", "comment",
                                                 NULL };
            cg_json_check_keys(&ps->g->diag, ps->file, o, cols ? "a table group" : "a table",
                               cols ? gkeys : keys);
            t.size = expr(ps, required(ps, o, "size", "a table"), "a table's \"size\"");
            const struct cg_json *max = required(ps, o, "max", "a table");
            if (max != NULL) {
                t.max_pos = max->pos;
                if (max->kind != CG_J_NUMBER || !max->is_int || max->ival < 1 ||
                    max->ival > CG_TABLE_MAX) {
                    err(ps, max->pos, "table '%s': \"max\" must be an integer in 1..%d (the "
                        "emitted code's array)", o->key, CG_TABLE_MAX);
                } else {
                    t.max = max->ival;
                }
            }
            const struct cg_json *var = required(ps, o, "var", "a table");
            t.var = string(ps, var, "a table's \"var\"");
            t.var_pos = var != NULL && var->kind == CG_J_STRING ? var->str_pos : t.pos;
        }
        t.first = s->ntables;
        if (cols == NULL) {
            if (o->kind == CG_J_OBJECT) {
                t.value = expr(ps, required(ps, o, "value", "a table"), "a table's \"value\"");
            }
            t.ncols = 1;
            s->tables[s->ntables++] = t;
            continue;
        }
        if (!has_kind(ps, cols, CG_J_OBJECT, "\"columns\"") || cols->nitems == 0) {
            if (cols->kind == CG_J_OBJECT) {
                err(ps, cols->pos, "table group '%s' has no columns", o->key);
            }
            continue;
        }
        t.group = o->key;
        t.ncols = cols->nitems;
        for (int c = 0; c < cols->nitems; c++) {
            struct cg_table col = t;
            col.name = cols->items[c]->key;
            col.pos = cols->items[c]->key_pos;
            col.value = expr(ps, cols->items[c], "a table's \"value\"");
            s->tables[s->ntables++] = col;
        }
    }
}

static void step(struct parser *ps, const struct cg_json *o, struct cg_step *st)
{
    st->pos = o->pos;
    const struct cg_json *kind = required(ps, o, "step", "a step");
    const char *k = string(ps, kind, "\"step\"");
    if (k == NULL) {
        return;
    }
    int found = 0;
    for (int i = 0; i < CG_STEP_KINDS_; i++) {
        if (strcmp(k, cg_op_names[i]) == 0) {
            st->kind = (enum cg_op_kind)i;
            found = 1;
        }
    }
    if (!found) {
        err(ps, kind->str_pos, "unknown step '%s'; expected exchange, reduce, copy, call or fill",
            k);
        return;
    }
    st->name = string(ps, cg_json_get(o, "name"), "\"name\"");
    st->when = expr(ps, cg_json_get(o, "when"), "\"when\"");
    comment(ps, cg_json_get(o, "comment"), &st->comment, &st->ncomment);
    switch (st->kind) {
    case CG_STEP_EXCHANGE: {
        static const char *const keys[] = { "step", "name", "when", "comment", "send", "recv",
                                            "segments", NULL };
        cg_json_check_keys(&ps->g->diag, ps->file, o, "an exchange step", keys);
        st->segments = expr(ps, cg_json_get(o, "segments"), "\"segments\"");
        xfers(ps, cg_json_get(o, "send"), 1, &st->sends, &st->nsends);
        xfers(ps, cg_json_get(o, "recv"), 0, &st->recvs, &st->nrecvs);
        if (st->nsends + st->nrecvs == 0) {
            err(ps, o->pos, "an exchange step needs \"send\" or \"recv\"");
        }
        break;
    }
    case CG_STEP_REDUCE: {
        static const char *const keys[] = { "step", "name", "when", "comment", "into", "from", "order", NULL };
        cg_json_check_keys(&ps->g->diag, ps->file, o, "a reduce step", keys);
        ref_object(ps, required(ps, o, "into", "a reduce step"), "\"into\"", &st->dst);
        ref_object(ps, required(ps, o, "from", "a reduce step"), "\"from\"", &st->src);
        const struct cg_json *order = cg_json_get(o, "order");
        const char *ord = string(ps, order, "\"order\"");
        st->order = CG_ORDER_INTO_FROM;
        if (ord != NULL && strcmp(ord, "from_into") == 0) {
            st->order = CG_ORDER_FROM_INTO;
        } else if (ord != NULL && strcmp(ord, "into_from") != 0) {
            err(ps, order->str_pos, "unknown order '%s'; expected into_from or from_into", ord);
        }
        break;
    }
    case CG_STEP_FILL: {
        static const char *const keys[] = { "step", "name", "when", "comment", "to", NULL };
        cg_json_check_keys(&ps->g->diag, ps->file, o, "a fill step", keys);
        ref_object(ps, required(ps, o, "to", "a fill step"), "\"to\"", &st->dst);
        break;
    }
    case CG_STEP_COPY: {
        static const char *const keys[] = { "step", "name", "when", "comment", "to", "from", NULL };
        cg_json_check_keys(&ps->g->diag, ps->file, o, "a copy step", keys);
        ref_object(ps, required(ps, o, "to", "a copy step"), "\"to\"", &st->dst);
        ref_object(ps, required(ps, o, "from", "a copy step"), "\"from\"", &st->src);
        break;
    }
    case CG_STEP_CALL: {
        static const char *const keys[] = { "step", "name", "when", "comment", "collective",
                                            "use", "group", "root", "send", "recv", "buffer",
                                            "op", NULL };
        cg_json_check_keys(&ps->g->diag, ps->file, o, "a call step", keys);
        const struct cg_json *coll = required(ps, o, "collective", "a call step");
        const char *c = string(ps, coll, "\"collective\"");
        st->call_coll = -1;
        for (int i = 0; c != NULL && i < CG_C_COUNT_; i++) {
            if (strcmp(c, cg_colls[i].name) == 0) {
                st->call_coll = i;
            }
        }
        if (c != NULL && st->call_coll < 0) {
            err(ps, coll->str_pos, "unknown collective '%s' in a call step", c);
            break;
        }
        const struct cg_json *use = required(ps, o, "use", "a call step");
        const char *u = string(ps, use, "\"use\"");
        if (u != NULL) {
            st->use_pos = use->str_pos;
            st->call_use = strcmp(u, "native") == 0 ? NULL : u;
        }
        const struct cg_json *cop = cg_json_get(o, "op");
        const char *copn = string(ps, cop, "\"op\"");
        if (copn != NULL && strcmp(copn, "bor") == 0) {
            st->call_bor = 1;
        } else if (copn != NULL) {
            err(ps, cop->str_pos, "unknown call op '%s'; the one op a call may name is \"bor\" "
                "(bitwise or over the bytes, for zero-filled mock-ups)", copn);
        }
        const struct cg_json *group = cg_json_get(o, "group");
        if (group != NULL && group->kind == CG_J_OBJECT) {
            static const char *const gkeys[] = { "color", NULL };
            cg_json_check_keys(&ps->g->diag, ps->file, group, "\"group\"", gkeys);
            st->call_color = expr(ps, required(ps, group, "color", "\"group\""), "\"color\"");
            st->call_group = CG_GROUP_COLOR;
        } else {
            const char *gr = string(ps, group, "\"group\"");
            if (gr == NULL || strcmp(gr, "all") == 0) {
                st->call_group = CG_GROUP_ALL;
            } else if (strcmp(gr, "node") == 0) {
                st->call_group = CG_GROUP_NODE;
            } else if (strcmp(gr, "lane") == 0) {
                st->call_group = CG_GROUP_LANE;
            } else {
                err(ps, group->str_pos, "unknown call group '%s'; \"group\" is \"all\" (the "
                    "whole communicator), \"node\", \"lane\" (topology schedules) or "
                    "{\"color\": expression}", gr);
            }
        }
        if (st->call_coll < 0) {
            break;
        }
        const char *cn = cg_colls[st->call_coll].name;
        const struct cg_json *root = cg_json_get(o, "root");
        if (cg_colls[st->call_coll].rooted) {
            st->call_root = expr(ps, required(ps, o, "root", "a call step to a rooted collective"),
                                 "\"root\"");
        } else if (root != NULL) {
            err(ps, root->pos, "a call to %s takes no \"root\"", cn);
        }
        int views = cg_call_views((enum cg_coll_kind)st->call_coll);
        static const char *const names[3] = { "send", "recv", "buffer" };
        for (int k = 0; k < 3; k++) {
            const struct cg_json *v = cg_json_get(o, names[k]);
            if (views & (1 << k)) {
                char what[64];
                snprintf(what, sizeof(what), "a call to %s", cn);
                ref_object(ps, required(ps, o, names[k], what), names[k] == names[0]
                           ? "\"send\"" : k == 1 ? "\"recv\"" : "\"buffer\"",
                           k == 0 ? &st->src : &st->dst);
                if (k == 0) {
                    st->call_has_src = 1;
                } else {
                    st->call_has_dst = 1;
                }
            } else if (v != NULL) {
                enum cg_bufs bufs = cg_colls[st->call_coll].bufs;
                err(ps, v->pos, "a call to %s takes no \"%s\"%s%s%s", cn, names[k],
                    bufs == CG_BUFS_SEND_RECV ? " (it takes \"send\" and \"recv\")" : " (",
                    bufs == CG_BUFS_SEND_RECV ? "" : cn,
                    bufs == CG_BUFS_ONE ? " has one view: \"buffer\")"
                    : bufs == CG_BUFS_NONE ? " has no data)" : "");
            }
        }
        break;
    }
    case CG_STEP_KINDS_:
        break;
    }
}

static void phase(struct parser *ps, const struct cg_json *o, struct cg_phase *ph)
{
    static const char *const keys[] = { "phase", "comment", "when", "rounds", "let", "steps", NULL };
    ph->pos = o->pos;
    ph->round_tag_id = -1;
    cg_json_check_keys(&ps->g->diag, ps->file, o, "a phase", keys);
    ph->name = string(ps, required(ps, o, "phase", "a phase"), "\"phase\"");
    ph->when = expr(ps, cg_json_get(o, "when"), "\"when\"");
    comment(ps, cg_json_get(o, "comment"), &ph->comment, &ph->ncomment);
    const struct cg_json *r = cg_json_get(o, "rounds");
    if (r != NULL && has_kind(ps, r, CG_J_OBJECT, "\"rounds\"")) {
        static const char *const rkeys[] = { "var", "count", "from", "to", "down_to", NULL };
        cg_json_check_keys(&ps->g->diag, ps->file, r, "\"rounds\"", rkeys);
        ph->rounds_pos = r->pos;
        ph->var = string(ps, required(ps, r, "var", "\"rounds\""), "\"var\"");
        const struct cg_json *count = cg_json_get(r, "count");
        const struct cg_json *from = cg_json_get(r, "from");
        const struct cg_json *to = cg_json_get(r, "to");
        const struct cg_json *down = cg_json_get(r, "down_to");
        if (count != NULL && from == NULL && to == NULL && down == NULL) {
            ph->rounds = CG_ROUNDS_COUNT;
            ph->to = expr(ps, count, "\"count\"");
        } else if (count == NULL && from != NULL && to != NULL && down == NULL) {
            ph->rounds = CG_ROUNDS_UP;
            ph->from = expr(ps, from, "\"from\"");
            ph->to = expr(ps, to, "\"to\"");
        } else if (count == NULL && from != NULL && to == NULL && down != NULL) {
            ph->rounds = CG_ROUNDS_DOWN;
            ph->from = expr(ps, from, "\"from\"");
            ph->to = expr(ps, down, "\"down_to\"");
        } else {
            err(ps, r->pos, "\"rounds\" needs \"count\", or \"from\" with \"to\" or \"down_to\"");
        }
    }
    lets(ps, cg_json_get(o, "let"), &ph->lets, &ph->nlets);
    const struct cg_json *steps = required(ps, o, "steps", "a phase");
    if (steps != NULL && has_kind(ps, steps, CG_J_ARRAY, "\"steps\"")) {
        ph->nsteps = steps->nitems;
        ph->steps = cg_arena_alloc(ps->arena, sizeof(*ph->steps) * (size_t)(ph->nsteps + 1));
        for (int i = 0; i < steps->nitems; i++) {
            if (has_kind(ps, steps->items[i], CG_J_OBJECT, "a step")) {
                step(ps, steps->items[i], &ph->steps[i]);
            }
        }
    }
}

int cg_parse(struct cg_gen *g, struct cg_arena *arena, const char *path, struct cg_schedule *s)
{
    size_t len = 0;
    memset(s, 0, sizeof(*s));
    char *text = cg_read_file(arena, &g->diag, path, &len);
    if (text == NULL) {
        s->file = cg_arena_strdup(arena, path);
        return -1;
    }
    return cg_parse_text(g, arena, path, text, len, s);
}

int cg_parse_text(struct cg_gen *g, struct cg_arena *arena, const char *path, const char *text,
                  size_t len, struct cg_schedule *s)
{
    struct parser ps = { g, arena, path };
    int before = g->diag.errors;
    memset(s, 0, sizeof(*s));
    s->file = cg_arena_strdup(arena, path);
    const struct cg_json *top = cg_json_parse(arena, &g->diag, path, text, len);
    if (top == NULL) {
        return -1;
    }
    s->pos = top->pos;
    if (!has_kind(&ps, top, CG_J_OBJECT, "a schedule")) {
        return -1;
    }
    static const char *const keys[] = { "schedule", "collective", "summary", "comment",
                                        "requires", "blocks", "scratch", "params",
                                        "let", "tables", "phases", "topology", NULL };
    cg_json_check_keys(&g->diag, path, top, "a schedule", keys);
    s->name = string(&ps, required(&ps, top, "schedule", "a schedule"), "\"schedule\"");
    const struct cg_json *coll = required(&ps, top, "collective", "a schedule");
    const char *c = string(&ps, coll, "\"collective\"");
    if (c != NULL) {
        int found = 0;
        for (int i = 0; i < CG_C_COUNT_; i++) {
            if (strcmp(c, cg_colls[i].name) == 0) {
                s->coll = (enum cg_coll_kind)i;
                found = 1;
            }
        }
        if (!found) {
            char names[256];
            size_t n = 0;
            for (int i = 0; i < CG_C_COUNT_ && n < sizeof(names); i++) {
                n += (size_t)snprintf(names + n, sizeof(names) - n, "%s%s",
                                      i == 0 ? "" : i == CG_C_COUNT_ - 1 ? " or " : ", ",
                                      cg_colls[i].name);
            }
            err(&ps, coll->str_pos, "unknown collective '%s'; expected %s", c, names);
        }
    }
    s->summary = string(&ps, required(&ps, top, "summary", "a schedule"), "\"summary\"");
    const struct cg_json *req = cg_json_get(top, "requires");
    if (req != NULL && has_kind(&ps, req, CG_J_OBJECT, "\"requires\"")) {
        static const char *const rkeys[] = { "commutative", NULL };
        cg_json_check_keys(&g->diag, path, req, "\"requires\"", rkeys);
        const struct cg_json *comm = cg_json_get(req, "commutative");
        if (comm != NULL && has_kind(&ps, comm, CG_J_BOOL, "\"commutative\"")) {
            s->commutative = comm->boolean;
        }
    }
    const struct cg_json *topo = cg_json_get(top, "topology");
    if (topo != NULL && has_kind(&ps, topo, CG_J_OBJECT, "\"topology\"")) {
        static const char *const tkeys[] = { "fallback", "comment", NULL };
        cg_json_check_keys(&g->diag, path, topo, "\"topology\"", tkeys);
        s->topology = 1;
        const struct cg_json *fb = required(&ps, topo, "fallback", "\"topology\"");
        s->fallback = string(&ps, fb, "\"fallback\"");
        if (fb != NULL) {
            s->fallback_pos = fb->str_pos;
        }
    }
    const struct cg_json *blocks = cg_json_get(top, "blocks");
    s->blocks_pos = blocks ? blocks->pos : top->pos;
    s->blocks = expr(&ps, blocks, "\"blocks\"");
    s->scratch = expr(&ps, cg_json_get(top, "scratch"), "\"scratch\"");
    const struct cg_json *params = cg_json_get(top, "params");
    if (params != NULL && has_kind(&ps, params, CG_J_OBJECT, "\"params\"")) {
        s->nparams = params->nitems;
        s->params = cg_arena_alloc(arena, sizeof(*s->params) * (size_t)(s->nparams + 1));
        for (int i = 0; i < params->nitems; i++) {
            const struct cg_json *v = params->items[i];
            s->params[i].name = v->key;
            s->params[i].pos = v->key_pos;
            s->params[i].slot = -1;
            if (v->kind == CG_J_OBJECT) {
                static const char *const pkeys[] = { "default", "min", "max", "comment", NULL };
                cg_json_check_keys(&g->diag, path, v, "a parameter", pkeys);
                static const char *const pn[3] = { "default", "min", "max" };
                int64_t *dst[3] = { &s->params[i].value, &s->params[i].lo, &s->params[i].hi };
                int ok = 1;
                for (int k = 0; k < 3; k++) {
                    const struct cg_json *x = required(&ps, v, pn[k], "a parameter");
                    if (x == NULL) {
                        ok = 0;
                    } else if (x->kind != CG_J_NUMBER || !x->is_int || x->ival < -1000000 ||
                               x->ival > 1000000) {
                        err(&ps, x->pos, "parameter '%s': \"%s\" must be an integer in "
                            "-1000000..1000000", v->key, pn[k]);
                        ok = 0;
                    } else {
                        *dst[k] = x->ival;
                    }
                }
                if (ok && !(s->params[i].lo <= s->params[i].value &&
                            s->params[i].value <= s->params[i].hi)) {
                    err(&ps, v->pos, "parameter '%s': min %lld <= default %lld <= max %lld "
                        "does not hold", v->key, (long long)s->params[i].lo,
                        (long long)s->params[i].value, (long long)s->params[i].hi);
                }
                s->params[i].ranged = 1;
            } else if (v->kind != CG_J_NUMBER || !v->is_int) {
                err(&ps, v->pos, "parameter '%s' needs an integer default, or {\"default\", "
                    "\"min\", \"max\"} for a tunable range", v->key);
            } else {
                s->params[i].value = v->ival;
                s->params[i].lo = s->params[i].hi = v->ival;
            }
        }
    }
    lets(&ps, cg_json_get(top, "let"), &s->lets, &s->nlets);
    tables(&ps, cg_json_get(top, "tables"), s);
    const struct cg_json *phases = required(&ps, top, "phases", "a schedule");
    if (phases != NULL && has_kind(&ps, phases, CG_J_ARRAY, "\"phases\"")) {
        s->nphases = phases->nitems;
        s->phases = cg_arena_alloc(arena, sizeof(*s->phases) * (size_t)(s->nphases + 1));
        for (int i = 0; i < phases->nitems; i++) {
            if (has_kind(&ps, phases->items[i], CG_J_OBJECT, "a phase")) {
                phase(&ps, phases->items[i], &s->phases[i]);
            }
        }
    }
    return g->diag.errors > before ? -1 : 0;
}
