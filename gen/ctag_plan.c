/* ctag_plan.c - which tags a hand-written function gets, and where their
 * lines go (gen/README.md, "collgen tag").
 *
 * What is timed: a call of a point-to-point or collective MPI function
 * (communication), MPI_Reduce_local or a loop combining array elements
 * (reduction), memcpy, MPI_Pack/Unpack, MPI_Sendrecv to itself or a loop
 * copying elements (local copy), and a call of a function of the same file
 * that does any of these (a helper, tagged too). The tags of a function:
 *   call   its body;
 *   phase  each top-level loop that communicates, each other top-level
 *          statement with a block (if, switch, a block) that does, and each
 *          run of plain top-level statements that do (an empty line ends a
 *          run);
 *   round  each iteration of a loop that communicates, at any depth;
 *   step   each statement that does something timed and is not a loop that
 *          communicates, an if whose branches can hold tags, or a block.
 * Names come from the code: the function, the loop variable (also of a
 * phase whose block starts with such a loop), the first timed callee
 * ("sendrecv", "reduce_local", a helper's name).
 *
 * Every tag line is a line of its own, inserted between original lines, so
 * the original text is kept byte for byte. A statement that shares a line
 * with other code cannot get lines of its own: its enclosing statement is
 * tagged instead (a note says so). The lines use tags.h's macros (ctag_write.c),
 * which keep a stack of the open tags, so that any way out of a region ends
 * its tags even where no line can be inserted (a goto inside a macro, a
 * return on the line of its if):
 *   CG_CTAG_FUNCTION(f)  first line of the body: opens the call tag; when
 *                        the function returns, by any return, every tag it
 *                        opened is ended (a cleanup variable);
 *   CG_CTAG_BEGIN(t), CG_CTAG_END(t)  around a region; END(t) also ends what
 *                        is still open inside t (a break out of a step);
 *   CG_CTAG_NEXT(t)      first line of a loop body: ends the previous
 *                        iteration's round if a continue left it open, then
 *                        opens t;
 *   CG_CTAG_UNWIND(t)    after a label a goto reaches from inside a region
 *                        the label is not in: ends everything above t, the
 *                        innermost region holding the label;
 * and after a loop left by break or continue, CG_CTAG_END(round).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctag_internal.h"

/* ---- the text ----------------------------------------------------------- */

static unsigned line_start(const struct ct_file *f, unsigned off)
{
    while (off > 0 && f->src[off - 1] != '\n') {
        off--;
    }
    return off;
}

/* The start of the line after the one holding off. */
static unsigned after_line(const struct ct_file *f, unsigned off)
{
    while (off < f->len && f->src[off] != '\n') {
        off++;
    }
    return off < f->len ? off + 1 : (unsigned)f->len;
}

/* Only blanks between the line's start and off. */
static int blank_before(const struct ct_file *f, unsigned off)
{
    for (unsigned i = line_start(f, off); i < off; i++) {
        if (f->src[i] != ' ' && f->src[i] != '\t') {
            return 0;
        }
    }
    return 1;
}

/* Only blanks and comments that end on this line from off to its end. */
static int rest_blank(const struct ct_file *f, unsigned off)
{
    const char *s = f->src;
    size_t i = off;
    for (;;) {
        while (i < f->len && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r')) {
            i++;
        }
        if (i >= f->len || s[i] == '\n') {
            return 1;
        }
        if (s[i] == '/' && i + 1 < f->len && s[i + 1] == '/') {
            size_t j = i;
            while (j < f->len && s[j] != '\n') {
                j++;
            }
            return s[j - 1] != '\\'; /* a continued // comment goes on */
        }
        if (s[i] == '/' && i + 1 < f->len && s[i + 1] == '*') {
            size_t j = i + 2;
            while (j + 1 < f->len && s[j] != '\n' && !(s[j] == '*' && s[j + 1] == '/')) {
                j++;
            }
            if (j + 1 >= f->len || s[j] == '\n') {
                return 0; /* the comment goes on past the line */
            }
            i = j + 2;
            continue;
        }
        return 0;
    }
}

/* The end of a statement whose extent ends at e: past its ';'. */
static unsigned stmt_end(const struct ct_file *f, unsigned e)
{
    unsigned i = e;
    while (i < f->len && (f->src[i] == ' ' || f->src[i] == '\t')) {
        i++;
    }
    return (i < f->len && f->src[i] == ';') ? i + 1 : e;
}

static const char *indent_of(struct ct_run *r, const struct ct_file *f, unsigned off,
                             const char *more)
{
    unsigned b = line_start(f, off);
    unsigned e = b;
    while (e < f->len && (f->src[e] == ' ' || f->src[e] == '\t')) {
        e++;
    }
    return cg_arena_printf(&r->arena, "%.*s%s", (int)(e - b), f->src + b, more);
}

/* The node's own text, or "" when it comes from a macro. */
static const char *text_of(struct ct_run *r, const struct ct_file *f, const struct ct_node *n)
{
    if (n->from_macro || n->e <= n->b) {
        return "";
    }
    return cg_arena_printf(&r->arena, "%.*s", (int)(n->e - n->b), f->src + n->b);
}

/* ---- what code does ------------------------------------------------------- */

/* The functions timed by name. Why the collectives count as communication:
 * a hand-written algorithm may call one for a part (a barrier, the
 * library's allgather after its own reduce-scatter). */
static const struct {
    const char *name;
    unsigned cls;
} timed_calls[] = {
    {"MPI_Send", CT_COMM},           {"MPI_Ssend", CT_COMM},
    {"MPI_Bsend", CT_COMM},          {"MPI_Rsend", CT_COMM},
    {"MPI_Isend", CT_COMM},          {"MPI_Issend", CT_COMM},
    {"MPI_Ibsend", CT_COMM},         {"MPI_Irsend", CT_COMM},
    {"MPI_Recv", CT_COMM},           {"MPI_Irecv", CT_COMM},
    {"MPI_Sendrecv", CT_COMM},       {"MPI_Sendrecv_replace", CT_COMM},
    {"MPI_Wait", CT_COMM},           {"MPI_Waitall", CT_COMM},
    {"MPI_Waitany", CT_COMM},        {"MPI_Waitsome", CT_COMM},
    {"MPI_Probe", CT_COMM},          {"MPI_Mprobe", CT_COMM},
    {"MPI_Mrecv", CT_COMM},          {"MPI_Start", CT_COMM},
    {"MPI_Startall", CT_COMM},       {"MPI_Barrier", CT_COMM},
    {"MPI_Bcast", CT_COMM},          {"MPI_Reduce", CT_COMM},
    {"MPI_Allreduce", CT_COMM},      {"MPI_Gather", CT_COMM},
    {"MPI_Gatherv", CT_COMM},        {"MPI_Scatter", CT_COMM},
    {"MPI_Scatterv", CT_COMM},       {"MPI_Allgather", CT_COMM},
    {"MPI_Allgatherv", CT_COMM},     {"MPI_Alltoall", CT_COMM},
    {"MPI_Alltoallv", CT_COMM},      {"MPI_Alltoallw", CT_COMM},
    {"MPI_Reduce_scatter", CT_COMM}, {"MPI_Reduce_scatter_block", CT_COMM},
    {"MPI_Scan", CT_COMM},           {"MPI_Exscan", CT_COMM},
    {"MPI_Reduce_local", CT_REDUCE}, {"memcpy", CT_COPY},
    {"memmove", CT_COPY},            {"__builtin_memcpy", CT_COPY},
    {"__builtin___memcpy_chk", CT_COPY}, {"__builtin_memmove", CT_COPY},
    {"MPI_Pack", CT_COPY},           {"MPI_Unpack", CT_COPY},
};

/* "MPI_Sendrecv" -> "sendrecv", "__builtin___memcpy_chk" -> "memcpy". */
static const char *tag_name_of_callee(struct ct_run *r, const char *callee)
{
    if (strncmp(callee, "__builtin_", 10) == 0) {
        return strstr(callee, "memmove") ? "memmove" : "memcpy";
    }
    const char *s = callee;
    if (strncmp(s, "PMPI_", 5) == 0) {
        s += 5;
    } else if (strncmp(s, "MPI_", 4) == 0) {
        s += 4;
    }
    char *t = cg_arena_strdup(&r->arena, s);
    for (char *c = t; *c; c++) {
        if (*c >= 'A' && *c <= 'Z') {
            *c = (char)(*c - 'A' + 'a');
        }
    }
    return t;
}

struct plan {
    struct ct_run *r;
    struct ct_file *f;
    struct ct_func *fn;   /* the function being planned */
    const char **ranks;   /* variables MPI_Comm_rank wrote in fn */
    int nranks;
    int seq;              /* order of inserted lines */
};

static struct ct_node *unwrap(struct ct_node *n)
{
    while ((n->kind == CXCursor_UnexposedExpr || n->kind == CXCursor_ParenExpr ||
            n->kind == CXCursor_CStyleCastExpr) && n->nkids > 0) {
        n = n->kids[n->nkids - 1];
    }
    return n;
}

/* An array element: a[i] or *p. */
static int is_elem(const struct ct_file *f, struct ct_node *n)
{
    n = unwrap(n);
    return n->kind == CXCursor_ArraySubscriptExpr ||
           (n->kind == CXCursor_UnaryOperator && !n->from_macro && n->e > n->b &&
            f->src[n->b] == '*');
}

static int has_elem(const struct ct_file *f, struct ct_node *n)
{
    if (is_elem(f, n)) {
        return 1;
    }
    for (int i = 0; i < n->nkids; i++) {
        if (has_elem(f, n->kids[i])) {
            return 1;
        }
    }
    return 0;
}

static int has_arith(struct ct_node *n)
{
    if (n->kind == CXCursor_BinaryOperator || n->kind == CXCursor_ConditionalOperator ||
        n->kind == CXCursor_CallExpr) {
        return 1;
    }
    for (int i = 0; i < n->nkids; i++) {
        if (has_arith(n->kids[i])) {
            return 1;
        }
    }
    return 0;
}

/* A plain assignment a = b: the operator between the operands is '='. */
static int is_assign(const struct ct_file *f, const struct ct_node *n)
{
    if (n->kind != CXCursor_BinaryOperator || n->nkids != 2 || n->from_macro ||
        n->kids[0]->e > n->kids[1]->b || n->kids[1]->b > f->len) {
        return 0;
    }
    for (unsigned i = n->kids[0]->e; i < n->kids[1]->b; i++) {
        char c = f->src[i];
        if (c == '=') {
            return i + 1 < f->len && f->src[i + 1] != '=' && i > 0 &&
                   strchr("=!<>", f->src[i - 1]) == NULL;
        }
        if (c != ' ' && c != '\t' && c != '\n' && c != ')' && c != '(') {
            return 0;
        }
    }
    return 0;
}

/* CT_REDUCE for a loop body combining elements (a[i] += b[i], a[i] = a[i] op
 * b[i]), CT_COPY for one copying them (a[i] = b[j]). */
static unsigned combining(const struct ct_file *f, struct ct_node *n)
{
    unsigned cls = 0;
    if (n->kind == CXCursor_CompoundAssignOperator && n->nkids == 2 && is_elem(f, n->kids[0])) {
        cls |= CT_REDUCE;
    } else if (is_assign(f, n) && is_elem(f, n->kids[0])) {
        struct ct_node *rhs = unwrap(n->kids[1]);
        if (is_elem(f, rhs)) {
            cls |= CT_COPY;
        } else if (has_elem(f, rhs) && has_arith(rhs)) {
            cls |= CT_REDUCE;
        }
    }
    for (int i = 0; i < n->nkids; i++) {
        cls |= combining(f, n->kids[i]);
    }
    return cls;
}

static int is_loop(const struct ct_node *n)
{
    return n->kind == CXCursor_ForStmt || n->kind == CXCursor_WhileStmt ||
           n->kind == CXCursor_DoStmt;
}

static struct ct_node *loop_body(struct ct_node *n)
{
    return n->kind == CXCursor_DoStmt ? n->kids[0] : n->kids[n->nkids - 1];
}

/* The first variable named in n, in source order. */
static const char *first_var(struct ct_node *n)
{
    if ((n->kind == CXCursor_VarDecl || n->kind == CXCursor_DeclRefExpr) && n->name[0]) {
        return n->name;
    }
    for (int i = 0; i < n->nkids; i++) {
        const char *v = first_var(n->kids[i]);
        if (v != NULL) {
            return v;
        }
    }
    return NULL;
}

/* The loop's variable: the first one its for header, or its condition, names. */
static const char *loop_var(struct ct_node *n)
{
    const char *v = NULL;
    if (n->kind == CXCursor_ForStmt) {
        for (int i = 0; i + 1 < n->nkids && v == NULL; i++) {
            v = first_var(n->kids[i]);
        }
    } else if (n->nkids >= 2) {
        v = first_var(n->kind == CXCursor_DoStmt ? n->kids[n->nkids - 1] : n->kids[0]);
    }
    return v != NULL ? v : "loop";
}

/* What one call does: its entry in timed_calls, a helper's bits, and
 * MPI_Sendrecv to itself (the communicator MPI_COMM_SELF, or destination
 * and source both the variable MPI_Comm_rank filled) a copy. */
static unsigned call_cls(struct plan *pl, struct ct_node *n)
{
    if (n->helper >= 0) {
        return pl->f->fns[n->helper].cls;
    }
    unsigned cls = 0;
    for (size_t i = 0; i < sizeof(timed_calls) / sizeof(timed_calls[0]); i++) {
        const char *name = n->name;
        if (strncmp(name, "PMPI_", 5) == 0) {
            name++;
        }
        if (strcmp(timed_calls[i].name, name) == 0) {
            cls = timed_calls[i].cls;
        }
    }
    if (strcmp(n->name, "MPI_Sendrecv") == 0 && n->nkids == 13) {
        const char *dest = text_of(pl->r, pl->f, n->kids[4]);
        const char *src = text_of(pl->r, pl->f, n->kids[9]);
        const char *comm = text_of(pl->r, pl->f, n->kids[11]);
        if (strcmp(comm, "MPI_COMM_SELF") == 0) {
            return CT_COPY;
        }
        for (int i = 0; i < pl->nranks; i++) {
            if (strcmp(dest, pl->ranks[i]) == 0 && strcmp(src, pl->ranks[i]) == 0) {
                return CT_COPY;
            }
        }
    }
    return cls;
}

/* The variables MPI_Comm_rank(comm, &v) fills in n. */
static void find_ranks(struct plan *pl, struct ct_node *n)
{
    if (n->kind == CXCursor_CallExpr && strcmp(n->name, "MPI_Comm_rank") == 0 && n->nkids == 3) {
        const char *t = text_of(pl->r, pl->f, n->kids[2]);
        while (*t == '&' || *t == ' ') {
            t++;
        }
        if (*t) {
            pl->ranks = realloc(pl->ranks, sizeof(char *) * (size_t)(pl->nranks + 1));
            pl->ranks[pl->nranks++] = t;
        }
    }
    for (int i = 0; i < n->nkids; i++) {
        find_ranks(pl, n->kids[i]);
    }
}

/* Fills cls and first below n. */
static void classify(struct plan *pl, struct ct_node *n)
{
    n->cls = 0;
    n->first = NULL;
    for (int i = 0; i < n->nkids; i++) {
        classify(pl, n->kids[i]);
        n->cls |= n->kids[i]->cls;
        if (n->first == NULL) {
            n->first = n->kids[i]->first;
        }
    }
    if (n->kind == CXCursor_CallExpr) {
        unsigned c = call_cls(pl, n);
        if (c != 0) {
            n->cls |= c;
            n->first = tag_name_of_callee(pl->r, n->name);
        }
    }
    if (is_loop(n) && (n->cls & CT_COMM) == 0) {
        unsigned c = combining(pl->f, loop_body(n));
        n->cls |= c;
        if (n->first == NULL && c != 0) {
            n->first = (c & CT_REDUCE) ? "reduce_loop" : "copy_loop";
        }
    }
}

/* ---- tags and lines --------------------------------------------------------- */

static int new_tag(struct plan *pl, enum ct_kind kind, const char *name, int parent, unsigned b,
                   unsigned e)
{
    struct ct_run *r = pl->r;
    const char *base = name;
    for (int k = 2;; k++) {
        int clash = 0;
        for (int i = pl->fn->tag_first; i < r->ntags && !clash; i++) {
            clash = r->tags[i].parent == parent && strcmp(r->tags[i].name, name) == 0;
        }
        if (!clash) {
            break;
        }
        name = cg_arena_printf(&r->arena, "%s_%d", base, k);
    }
    if (r->ntags == r->ctags) {
        r->ctags = r->ctags ? 2 * r->ctags : 64;
        r->tags = realloc(r->tags, sizeof(*r->tags) * (size_t)r->ctags);
        if (r->tags == NULL) {
            cg_panic("out of memory");
        }
    }
    struct ct_tag *t = &r->tags[r->ntags];
    memset(t, 0, sizeof(*t));
    t->name = name;
    t->kind = kind;
    t->parent = parent;
    t->file = (int)(pl->f - r->files);
    t->b = b;
    t->e = e;
    t->path = parent < 0 ? name : cg_arena_printf(&r->arena, "%s/%s", r->tags[parent].path, name);
    /* "CG_CTAG_" and the path upper-cased, each '/' doubled into "__". */
    char *id = cg_arena_alloc(&r->arena, 9 + 2 * strlen(t->path));
    char *w = id + sprintf(id, "CG_CTAG_");
    for (const char *c = t->path; *c; c++) {
        if (*c == '/') {
            *w++ = '_';
            *w++ = '_';
        } else {
            *w++ = (*c >= 'a' && *c <= 'z') ? (char)(*c - 'a' + 'A') : *c;
        }
    }
    *w = '\0';
    t->ident = id;
    return r->ntags++;
}

static void add_line(struct plan *pl, unsigned off, int closer, int level, const char *indent,
                     const char *text)
{
    struct ct_file *f = pl->f;
    if (f->nins == f->cins) {
        f->cins = f->cins ? 2 * f->cins : 64;
        f->ins = realloc(f->ins, sizeof(*f->ins) * (size_t)f->cins);
        if (f->ins == NULL) {
            cg_panic("out of memory");
        }
    }
    struct ct_ins *in = &f->ins[f->nins++];
    in->off = off;
    in->closer = closer;
    in->level = level;
    in->seq = pl->seq++;
    in->indent = indent;
    in->text = text;
}

static const char *macro(struct plan *pl, const char *m, int tag)
{
    return cg_arena_printf(&pl->r->arena, "CG_CTAG_%s(%s);", m, pl->r->tags[tag].ident);
}

static void note(struct plan *pl, unsigned off, const char *fmt, const char *arg)
{
    if (!pl->r->quiet) {
        cg_note(&pl->r->diag, pl->f->path, ct_pos(pl->f, off), fmt, pl->fn->name, arg);
    }
}

/* Whether control cannot fall out of the end of n (its last statement is a
 * return, goto, break or continue, or an if-else whose branches all are):
 * a tag line after it could never run, and at -O0 GCC takes such a line at
 * the end of a function for a way out without a return. The way out ends
 * the tag instead (the cleanup, the label's UNWIND, the loop's END or
 * NEXT). */
static int ends_in_jump(const struct ct_node *n)
{
    switch (n->kind) {
    case CXCursor_ReturnStmt:
    case CXCursor_GotoStmt:
    case CXCursor_BreakStmt:
    case CXCursor_ContinueStmt:
        return 1;
    case CXCursor_CompoundStmt:
    case CXCursor_LabelStmt:
        return n->nkids > 0 && ends_in_jump(n->kids[n->nkids - 1]);
    case CXCursor_IfStmt:
        return n->nkids == 3 && ends_in_jump(n->kids[1]) && ends_in_jump(n->kids[2]);
    default:
        return 0;
    }
}

static enum ct_kind step_kind(unsigned cls)
{
    return (cls & CT_COMM) ? CT_K_COMM : (cls & CT_REDUCE) ? CT_K_REDUCE : CT_K_COPY;
}

/* A step around [b, e), which owns its lines; no END line after a last
 * statement that jumps. */
static void step_range(struct plan *pl, unsigned b, unsigned e, unsigned cls, const char *first,
                       int parent, int level, int jumps)
{
    const char *name = first ? first : (cls & CT_REDUCE) ? "reduce" : "copy";
    int t = new_tag(pl, step_kind(cls), name, parent, b, e);
    const char *ind = indent_of(pl->r, pl->f, b, "");
    add_line(pl, line_start(pl->f, b), 0, level, ind, macro(pl, "BEGIN", t));
    if (!jumps) {
        add_line(pl, after_line(pl->f, e), 1, level, ind, macro(pl, "END", t));
    }
}

static void step(struct plan *pl, struct ct_node *n, int parent, int level)
{
    step_range(pl, n->b, stmt_end(pl->f, n->e), n->cls, n->first, parent, level,
               ends_in_jump(n));
}

/* Statements of a block, grouped: those that share a line are one unit. */
struct unit {
    int first, last;      /* kids of the block */
    unsigned b, e;        /* from the first one's start to past the last one's ';' */
    int owns;             /* nothing else on its first and last line */
    int after_blank;      /* an empty line comes between it and the unit before */
    unsigned cls;
    const char *name;     /* first timed callee */
};

/* Whether [b, e) holds an empty line (only blanks between two newlines). */
static int has_empty_line(const struct ct_file *f, unsigned b, unsigned e)
{
    int blank = 0; /* only blanks since the last newline */
    for (unsigned c = b; c < e && c < f->len; c++) {
        if (f->src[c] == '\n') {
            if (blank) {
                return 1;
            }
            blank = 1;
        } else if (f->src[c] != ' ' && f->src[c] != '\t' && f->src[c] != '\r') {
            blank = 0;
        }
    }
    return 0;
}

static int units_of(struct plan *pl, struct ct_node *list, struct unit **out)
{
    struct unit *u = calloc((size_t)list->nkids + 1, sizeof(*u));
    int n = 0;
    for (int i = 0; i < list->nkids; i++) {
        struct ct_node *k = list->kids[i];
        int same_line = 0;
        if (n > 0) {
            same_line = 1;
            for (unsigned c = u[n - 1].e; c < k->b && c < pl->f->len; c++) {
                if (pl->f->src[c] == '\n') {
                    same_line = 0;
                }
            }
        }
        if (n == 0 || !same_line) {
            u[n].after_blank = n > 0 && has_empty_line(pl->f, u[n - 1].e, k->b);
            u[n].first = i;
            u[n].b = k->b;
            u[n].name = NULL;
            n++;
        }
        struct unit *c = &u[n - 1];
        c->last = i;
        unsigned e = stmt_end(pl->f, k->e);
        if (e > c->e) {
            c->e = e;
        }
        c->cls |= k->cls;
        if (c->name == NULL) {
            c->name = k->first;
        }
    }
    for (int i = 0; i < n; i++) {
        u[i].owns = blank_before(pl->f, u[i].b) && rest_blank(pl->f, u[i].e);
    }
    *out = u;
    return n;
}

/* Braces on lines of their own: nothing after '{', nothing before '}'. */
static int braces_alone(const struct ct_file *f, const struct ct_node *block)
{
    return block->kind == CXCursor_CompoundStmt && !block->from_macro && block->e > block->b &&
           rest_blank(f, block->b + 1) && blank_before(f, block->e - 1);
}

static int owns_lines(const struct ct_file *f, const struct ct_node *n)
{
    return n->e > n->b && blank_before(f, n->b) && rest_blank(f, stmt_end(f, n->e));
}

static void plan_stmt(struct plan *pl, struct ct_node *s, int parent, int level);

static void plan_unit(struct plan *pl, struct ct_node *list, const struct unit *u, int parent,
                      int level)
{
    if (!u->owns) {
        note(pl, u->b, "'%s': this statement shares its line with code or a comment that goes "
                       "on: no tag line fits around it, so the %s it does is timed only by "
                       "the tags around it", u->name ? u->name : "work");
        return;
    }
    if (u->first == u->last) {
        plan_stmt(pl, list->kids[u->first], parent, level);
    } else {
        step_range(pl, u->b, u->e, u->cls, u->name, parent, level,
                   ends_in_jump(list->kids[u->last]));
    }
}

static void plan_list(struct plan *pl, struct ct_node *list, int parent, int level)
{
    struct unit *u;
    int n = units_of(pl, list, &u);
    for (int i = 0; i < n; i++) {
        if (u[i].cls != 0) {
            plan_unit(pl, list, &u[i], parent, level);
        }
    }
    free(u);
}

/* Whether the tags of an if can go inside its branches: each branch that
 * does something is a block with braces alone on their lines, an else-if
 * that can, or a statement on lines of its own. */
static int if_opens(const struct ct_file *f, struct ct_node *s)
{
    if (s->nkids < 2 || s->kids[0]->cls != 0) {
        return 0;
    }
    for (int i = 1; i < s->nkids; i++) {
        struct ct_node *br = s->kids[i];
        if (br->cls == 0) {
            continue;
        }
        if (br->kind == CXCursor_CompoundStmt) {
            if (!braces_alone(f, br)) {
                return 0;
            }
        } else if (br->kind == CXCursor_IfStmt && i == 2) {
            if (!if_opens(f, br)) {
                return 0;
            }
        } else if (!owns_lines(f, br)) {
            return 0;
        }
    }
    return 1;
}

/* A statement that is a branch or a loop body without braces: its lines go
 * inside braces inserted with them ("{ CG_CTAG_BEGIN(t);" ... "CG_CTAG_END(t); }"). */
static void plan_wrapped(struct plan *pl, struct ct_node *s, int parent, int level)
{
    int n0 = pl->f->nins;
    unsigned before = line_start(pl->f, s->b);
    unsigned after = after_line(pl->f, stmt_end(pl->f, s->e));
    plan_stmt(pl, s, parent, level + 1);
    int need = 0;
    for (int i = n0; i < pl->f->nins; i++) {
        need |= pl->f->ins[i].off == before || pl->f->ins[i].off == after;
    }
    if (need) {
        const char *ind = indent_of(pl->r, pl->f, s->b, "");
        add_line(pl, after, 1, level, ind, "}");
        add_line(pl, before, 0, level, ind, "{");
    }
}

static void plan_if(struct plan *pl, struct ct_node *s, int parent, int level)
{
    for (int i = 1; i < s->nkids; i++) {
        struct ct_node *br = s->kids[i];
        if (br->cls == 0) {
            continue;
        }
        if (br->kind == CXCursor_CompoundStmt) {
            plan_list(pl, br, parent, level + 1);
        } else if (br->kind == CXCursor_IfStmt && i == 2) {
            plan_if(pl, br, parent, level + 1);
        } else {
            plan_wrapped(pl, br, parent, level + 1);
        }
    }
}

/* Whether a break or continue in body leaves the loop it belongs to. */
static int leaves_loop(const struct ct_node *n, int in_switch)
{
    for (int i = 0; i < n->nkids; i++) {
        const struct ct_node *k = n->kids[i];
        if ((k->kind == CXCursor_BreakStmt && !in_switch) || k->kind == CXCursor_ContinueStmt) {
            return 1;
        }
        if (is_loop(k)) {
            continue;
        }
        if (leaves_loop(k, in_switch || k->kind == CXCursor_SwitchStmt)) {
            return 1;
        }
    }
    return 0;
}

/* A loop that communicates: a round per iteration. phase_loop: the loop is
 * its phase, and the round is called "round"; otherwise the round has the
 * loop variable's name. */
static void plan_loop(struct plan *pl, struct ct_node *s, int parent, int level, int phase_loop)
{
    struct ct_file *f = pl->f;
    struct ct_node *body = loop_body(s);
    /* "round" also where the enclosing tag has the loop's name already (a
     * phase named after the loop its block starts with). */
    const char *name = (phase_loop || strcmp(loop_var(s), pl->r->tags[parent].name) == 0)
                           ? "round"
                           : loop_var(s);
    int t;
    if (body->kind == CXCursor_CompoundStmt) {
        if (!braces_alone(f, body)) {
            note(pl, body->b, "'%s': the braces of this loop body share their lines with code: "
                              "no round tag fits inside, so the loop is timed as one %s",
                 "step");
            step(pl, s, parent, level);
            return;
        }
        t = new_tag(pl, CT_K_ROUND, name, parent, body->b, body->e);
        const char *ind = body->nkids > 0 ? indent_of(pl->r, f, body->kids[0]->b, "")
                                          : indent_of(pl->r, f, body->b, "    ");
        add_line(pl, after_line(f, body->b), 0, level + 1, ind, macro(pl, "NEXT", t));
        if (!ends_in_jump(body)) {
            add_line(pl, line_start(f, body->e - 1), 1, level + 1, ind, macro(pl, "END", t));
        }
        plan_list(pl, body, t, level + 2);
    } else {
        unsigned be = stmt_end(f, body->e);
        if (!owns_lines(f, body)) {
            note(pl, body->b, "'%s': this loop body shares its line with the loop: no round tag "
                              "fits around it, so the loop is timed as one %s", "step");
            step(pl, s, parent, level);
            return;
        }
        t = new_tag(pl, CT_K_ROUND, name, parent, body->b, be);
        const char *ind = indent_of(pl->r, f, body->b, "");
        add_line(pl, after_line(f, be), 1, level + 1, ind, "}");
        if (!ends_in_jump(body)) {
            add_line(pl, after_line(f, be), 1, level + 1, ind, macro(pl, "END", t));
        }
        add_line(pl, line_start(f, body->b), 0, level + 1, ind, "{");
        add_line(pl, line_start(f, body->b), 0, level + 1, ind, macro(pl, "NEXT", t));
        plan_stmt(pl, body, t, level + 2);
    }
    if (leaves_loop(body, 0)) {
        add_line(pl, after_line(f, stmt_end(f, s->e)), 1, level, indent_of(pl->r, f, s->b, ""),
                 macro(pl, "END", t));
    }
}

static void plan_stmt(struct plan *pl, struct ct_node *s, int parent, int level)
{
    struct ct_file *f = pl->f;
    if (s->cls == 0) {
        return;
    }
    switch (s->kind) {
    case CXCursor_CompoundStmt:
        if (braces_alone(f, s)) {
            plan_list(pl, s, parent, level);
        } else {
            step(pl, s, parent, level);
        }
        return;
    case CXCursor_IfStmt:
        if (if_opens(f, s)) {
            plan_if(pl, s, parent, level);
        } else {
            step(pl, s, parent, level);
        }
        return;
    case CXCursor_ForStmt:
    case CXCursor_WhileStmt:
    case CXCursor_DoStmt:
        /* A loop a macro writes whole (do { ... } while (0)) is one step. */
        if ((loop_body(s)->cls & CT_COMM) && !loop_body(s)->from_macro) {
            plan_loop(pl, s, parent, level, 0);
        } else {
            step(pl, s, parent, level);
        }
        return;
    case CXCursor_LabelStmt: {
        struct ct_node *sub = s->nkids > 0 ? s->kids[s->nkids - 1] : NULL;
        if (sub != NULL && sub->b > s->b && blank_before(f, sub->b)) {
            plan_stmt(pl, sub, parent, level + 1);
        } else {
            step(pl, s, parent, level);
        }
        return;
    }
    default:
        step(pl, s, parent, level);
        return;
    }
}

/* The name of a phase that is a block statement: the variable of a loop
 * that communicates, when that comes first in it, else NULL (the first
 * timed callee names it). */
static const char *first_loop_var(struct ct_node *n)
{
    if (n->cls == 0) {
        return NULL;
    }
    if (is_loop(n) && (loop_body(n)->cls & CT_COMM)) {
        return loop_var(n);
    }
    if (n->kind == CXCursor_CallExpr) {
        return NULL;
    }
    for (int i = 0; i < n->nkids; i++) {
        if (n->kids[i]->cls != 0) {
            return first_loop_var(n->kids[i]);
        }
    }
    return NULL;
}

/* The function's top level: phases. */
static void plan_top(struct plan *pl, struct ct_node *body, int call)
{
    struct ct_file *f = pl->f;
    struct unit *u;
    int n = units_of(pl, body, &u);
    int s = -1; /* a run of plain statements that do something: u[s..t] */
    int t = -1;
    for (int i = 0; i <= n; i++) {
        struct ct_node *k = i < n ? body->kids[u[i].first] : NULL;
        int single = i < n && u[i].first == u[i].last;
        int block = single && (is_loop(k) || k->kind == CXCursor_IfStmt ||
                               k->kind == CXCursor_SwitchStmt ||
                               k->kind == CXCursor_CompoundStmt);
        int plain = i < n && u[i].cls != 0 && u[i].owns && !block;
        if (i < n && u[i].cls != 0 && !u[i].owns) {
            plan_unit(pl, body, &u[i], call, 2); /* a note */
        }
        if (s >= 0 && (i == n || u[i].after_blank || (u[i].cls != 0 && (block || !u[i].owns)))) {
            int ph = new_tag(pl, CT_K_PHASE, u[s].name, call, u[s].b, u[t].e);
            const char *ind = indent_of(pl->r, f, u[s].b, "");
            add_line(pl, line_start(f, u[s].b), 0, 1, ind, macro(pl, "BEGIN", ph));
            if (!ends_in_jump(body->kids[u[t].last])) {
                add_line(pl, after_line(f, u[t].e), 1, 1, ind, macro(pl, "END", ph));
            }
            for (int j = s; j <= t; j++) {
                if (u[j].cls != 0) {
                    plan_unit(pl, body, &u[j], ph, 2);
                }
            }
            s = t = -1;
        }
        if (plain) {
            if (s < 0) {
                s = i;
            }
            t = i;
        } else if (block && u[i].cls != 0 && u[i].owns) {
            int loop = is_loop(k) && (loop_body(k)->cls & CT_COMM);
            const char *name = first_loop_var(k) ? first_loop_var(k) : u[i].name;
            int ph = new_tag(pl, CT_K_PHASE, name, call, u[i].b, u[i].e);
            const char *ind = indent_of(pl->r, f, u[i].b, "");
            add_line(pl, line_start(f, u[i].b), 0, 1, ind, macro(pl, "BEGIN", ph));
            if (!ends_in_jump(k)) {
                add_line(pl, after_line(f, u[i].e), 1, 1, ind, macro(pl, "END", ph));
            }
            if (loop) {
                plan_loop(pl, k, ph, 2, 1);
            } else {
                plan_stmt(pl, k, ph, 2);
            }
        }
    }
    free(u);
}

/* ---- labels ------------------------------------------------------------------ */

struct jumps {
    struct ct_node **gotos;
    int ngotos;
    struct ct_node **labels;
    int nlabels;
};

static void find_jumps(struct ct_node *n, struct jumps *j)
{
    if (n->kind == CXCursor_GotoStmt) {
        j->gotos = realloc(j->gotos, sizeof(*j->gotos) * (size_t)(j->ngotos + 1));
        j->gotos[j->ngotos++] = n;
    } else if (n->kind == CXCursor_LabelStmt) {
        j->labels = realloc(j->labels, sizeof(*j->labels) * (size_t)(j->nlabels + 1));
        j->labels[j->nlabels++] = n;
    }
    for (int i = 0; i < n->nkids; i++) {
        find_jumps(n->kids[i], j);
    }
}

static const char *goto_target(const struct ct_node *g)
{
    for (int i = 0; i < g->nkids; i++) {
        if (g->kids[i]->kind == CXCursor_LabelRef) {
            return g->kids[i]->name;
        }
    }
    return "";
}

/* The innermost of the function's tags that holds off. */
static int tag_at(const struct plan *pl, unsigned off)
{
    int best = pl->fn->tag_first;
    for (int i = pl->fn->tag_first; i < pl->r->ntags; i++) {
        if (pl->r->tags[i].b <= off && off < pl->r->tags[i].e) {
            best = i;
        }
    }
    return best;
}

static int tag_holds(const struct ct_tag *t, unsigned off)
{
    return t->b <= off && off < t->e;
}

/* After each label a goto reaches from inside a region the label is not
 * in: CG_CTAG_UNWIND of the innermost region holding the label. */
static void plan_labels(struct plan *pl, struct ct_node *body)
{
    struct ct_file *f = pl->f;
    struct jumps j = {0};
    find_jumps(body, &j);
    for (int l = 0; l < j.nlabels; l++) {
        struct ct_node *lab = j.labels[l];
        int leaves = 0;
        for (int g = 0; g < j.ngotos; g++) {
            if (strcmp(goto_target(j.gotos[g]), lab->name) != 0) {
                continue;
            }
            for (int i = pl->fn->tag_first; i < pl->r->ntags; i++) {
                leaves |= tag_holds(&pl->r->tags[i], j.gotos[g]->b) &&
                          !tag_holds(&pl->r->tags[i], lab->b);
            }
        }
        if (!leaves) {
            continue;
        }
        unsigned colon = lab->b + (unsigned)strlen(lab->name);
        while (colon < f->len && (f->src[colon] == ' ' || f->src[colon] == '\t')) {
            colon++;
        }
        if (lab->from_macro || colon >= f->len || f->src[colon] != ':' ||
            !blank_before(f, lab->b) || !rest_blank(f, colon + 1)) {
            note(pl, lab->b, "'%s': label '%s' shares its line with a statement: the tags a goto "
                             "to it leaves open end at the next tag end or when the function "
                             "returns", lab->name);
            continue;
        }
        struct ct_node *sub = lab->nkids > 0 ? lab->kids[lab->nkids - 1] : NULL;
        const char *ind = (sub != NULL && sub->b > colon) ? indent_of(pl->r, f, sub->b, "")
                                                          : indent_of(pl->r, f, lab->b, "    ");
        add_line(pl, after_line(f, colon), 0, 0, ind, macro(pl, "UNWIND", tag_at(pl, lab->b)));
    }
    free(j.gotos);
    free(j.labels);
}

/* ---- functions ------------------------------------------------------------------ */

static int plan_function(struct ct_run *r, struct ct_file *f, struct ct_func *fn)
{
    struct plan pl = {r, f, fn, NULL, 0, 0};
    struct ct_node *body = fn->body;
    fn->tag_first = r->ntags;
    if (body->from_macro || body->e <= body->b) {
        cg_error(&r->diag, f->path, ct_pos(f, fn->b),
                 "cannot tag '%s': its body comes from a macro, so no line can be inserted "
                 "into it", fn->name);
        return -1;
    }
    if (!rest_blank(f, body->b + 1)) {
        cg_error(&r->diag, f->path, ct_pos(f, body->b),
                 "cannot tag '%s': code follows the '{' of its body on the same line, where "
                 "the call tag's line must go (put the '{' at the end of its line)", fn->name);
        return -1;
    }
    if (!blank_before(f, fn->b)) {
        cg_error(&r->diag, f->path, ct_pos(f, fn->b),
                 "cannot tag '%s': its definition does not start a line, and "
                 "#include \"tags.h\" goes on the line before it", fn->name);
        return -1;
    }
    find_ranks(&pl, body);
    classify(&pl, body);
    int call = new_tag(&pl, CT_K_CALL, fn->name, -1, body->b, body->e);
    const char *ind = body->nkids > 0 ? indent_of(r, f, body->kids[0]->b, "")
                                      : indent_of(r, f, body->b, "    ");
    add_line(&pl, after_line(f, body->b), 0, 0, ind, macro(&pl, "FUNCTION", call));
    plan_top(&pl, body, call);
    plan_labels(&pl, body);
    fn->tag_count = r->ntags - fn->tag_first;
    free(pl.ranks);
    return 0;
}

/* Selects fn and the helpers it calls that do something. */
static void select_with_helpers(struct ct_file *f, struct ct_node *n)
{
    if (n->kind == CXCursor_CallExpr && n->helper >= 0 && f->fns[n->helper].cls != 0 &&
        !f->fns[n->helper].selected) {
        f->fns[n->helper].selected = 1;
        select_with_helpers(f, f->fns[n->helper].body);
    }
    for (int i = 0; i < n->nkids; i++) {
        select_with_helpers(f, n->kids[i]);
    }
}

int ct_plan(struct ct_run *r, const char *const *names, int nnames)
{
    /* What each function does, through its helpers: to a fixed point. */
    for (int fi = 0; fi < r->nfiles; fi++) {
        struct ct_file *f = &r->files[fi];
        for (int changed = 1, round = 0; changed && round <= f->nfns; round++) {
            changed = 0;
            for (int i = 0; i < f->nfns; i++) {
                struct plan pl = {r, f, &f->fns[i], NULL, 0, 0};
                find_ranks(&pl, f->fns[i].body);
                classify(&pl, f->fns[i].body);
                free(pl.ranks);
                if (f->fns[i].body->cls != f->fns[i].cls) {
                    f->fns[i].cls = f->fns[i].body->cls;
                    changed = 1;
                }
            }
        }
    }
    int bad = 0;
    for (int k = 0; k < nnames; k++) {
        int found = 0;
        for (int fi = 0; fi < r->nfiles; fi++) {
            struct ct_file *f = &r->files[fi];
            for (int i = 0; i < f->nfns; i++) {
                struct ct_func *fn = &f->fns[i];
                if (strcmp(fn->name, names[k]) != 0) {
                    continue;
                }
                found = 1;
                if (fn->cls == 0) {
                    cg_error(&r->diag, f->path, ct_pos(f, fn->b),
                             "cannot tag '%s': it makes no MPI call that communicates, no "
                             "reduction and no local copy, not even through a helper, so there "
                             "is nothing to time", fn->name);
                    bad++;
                } else if (!fn->selected) {
                    fn->selected = 1;
                    select_with_helpers(f, fn->body);
                }
            }
        }
        if (!found) {
            fprintf(stderr, "collgen tag: error: no function '%s' is defined in the file%s "
                            "given\n", names[k], r->nfiles > 1 ? "s" : "");
            r->diag.errors++;
            bad++;
        }
    }
    for (int fi = 0; fi < r->nfiles; fi++) {
        struct ct_file *f = &r->files[fi];
        for (int i = 0; i < f->nfns; i++) {
            struct ct_func *fn = &f->fns[i];
            if (nnames == 0 && fn->cls != 0) {
                fn->selected = 1;
            } else if (nnames == 0 && !r->quiet) {
                cg_note(&r->diag, f->path, ct_pos(f, fn->b),
                        "'%s' makes no MPI call that communicates, no reduction and no local "
                        "copy: left as it is", fn->name);
            }
        }
    }
    for (int fi = 0; fi < r->nfiles && bad == 0; fi++) {
        struct ct_file *f = &r->files[fi];
        for (int i = 0; i < f->nfns; i++) {
            if (f->fns[i].selected) {
                if (f->include_at == (unsigned)-1) {
                    f->include_at = line_start(f, f->fns[i].b);
                }
                bad += plan_function(r, f, &f->fns[i]) != 0;
            }
        }
    }
    /* Ids must differ: Foo and foo, or a/b_c and a_b/c, would not. */
    for (int i = 0; i < r->ntags && bad == 0; i++) {
        for (int k = 0; k < i; k++) {
            if (strcmp(r->tags[i].ident, r->tags[k].ident) == 0) {
                const struct ct_file *f = &r->files[r->tags[i].file];
                cg_error(&r->diag, f->path, ct_pos(f, r->tags[i].b),
                         "tag '%s' has the id %s, which tag '%s' has already", r->tags[i].path,
                         r->tags[i].ident, r->tags[k].path);
                bad++;
                break;
            }
        }
    }
    return bad ? -1 : 0;
}
