/* expr.c - integer expressions of the schedule language: a recursive-descent
 * parser, a checked 64-bit evaluator and two printers (C and schedule syntax).
 */
#include "expr.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* Binding strength, lowest first; the parser's binary levels are 2..11. */
enum prec {
    P_COND = 1,
    P_OR,
    P_AND,
    P_BOR,
    P_BXOR,
    P_BAND,
    P_EQ,
    P_REL,
    P_SHIFT,
    P_ADD,
    P_MUL,
    P_UNARY,
    P_PRIMARY
};

/* Deepest nesting of parentheses, arguments, '?:' and unary operators. */
#define MAX_DEPTH 200

/* Argument pointers kept while parsing a call (more only get counted). */
#define MAX_ARGS 8

/* ---- lexer --------------------------------------------------------------- */

enum tok_kind {
    T_END, T_INT, T_NAME, T_LPAREN, T_RPAREN, T_COMMA, T_QUEST, T_COLON,
    T_OROR, T_ANDAND, T_BOR, T_BXOR, T_BAND, T_EQ, T_NE, T_LT, T_LE, T_GT, T_GE,
    T_SHL, T_SHR, T_PLUS, T_MINUS, T_STAR, T_SLASH, T_PERCENT, T_NOT, T_TILDE,
    T_LBRACK, T_RBRACK
};

struct tok {
    enum tok_kind kind; /* what was read */
    size_t off;         /* byte offset of its first character in the text */
    size_t len;         /* its length in bytes */
    int64_t num;        /* T_INT: the value */
};

struct parser {
    struct cg_arena *arena; /* where nodes go */
    struct cg_diag *d;      /* where the one error goes */
    const char *file;       /* schedule file, for diagnostics */
    struct cg_pos start;    /* position of text[0] */
    const char *text;       /* what is parsed */
    struct tok tok;         /* the current token */
    int depth;              /* current nesting, bounded by MAX_DEPTH */
    int failed;             /* an error was reported */
};

static void parse_error(struct parser *p, size_t off, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void parse_error(struct parser *p, size_t off, const char *fmt, ...)
{
    if (p->failed) {
        return;
    }
    p->failed = 1;
    struct cg_pos pos = {p->start.line, p->start.col + (int)off};
    va_list ap;
    va_start(ap, fmt);
    cg_verror(p->d, p->file, pos, fmt, ap);
    va_end(ap);
}

static int column_of(const struct parser *p, size_t off)
{
    return p->start.col + (int)off;
}

static int is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static int is_alpha(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static int hex_value(char c)
{
    if (is_digit(c)) {
        return c - '0';
    }
    if (c >= 'a' && c <= 'f') {
        return c - 'a' + 10;
    }
    if (c >= 'A' && c <= 'F') {
        return c - 'A' + 10;
    }
    return -1;
}

/* "'x'" for a printable character, "'\x0a'" otherwise. */
static const char *char_text(char c, char *buf, size_t cap)
{
    unsigned char u = (unsigned char)c;
    if (u >= 0x20 && u < 0x7f) {
        snprintf(buf, cap, "'%c'", c);
    } else {
        snprintf(buf, cap, "'\\x%02x'", u);
    }
    return buf;
}

static int lex_number(struct parser *p, size_t off)
{
    const char *s = p->text;
    size_t i = off;
    int base = 10;
    if (s[i] == '0' && (s[i + 1] == 'x' || s[i + 1] == 'X')) {
        base = 16;
        i += 2;
        if (hex_value(s[i]) < 0) {
            char ct[16];
            if (s[i] == '\0') {
                parse_error(p, i, "expected hex digits after '0x', found end of text");
            } else {
                parse_error(p, i, "expected hex digits after '0x', found %s",
                            char_text(s[i], ct, sizeof(ct)));
            }
            return -1;
        }
    }
    int64_t v = 0;
    int too_large = 0;
    for (;;) {
        int dv = base == 16 ? hex_value(s[i]) : (is_digit(s[i]) ? s[i] - '0' : -1);
        if (dv < 0) {
            break;
        }
        if (v > (INT64_MAX - dv) / base) {
            too_large = 1;
        } else {
            v = v * base + dv;
        }
        i++;
    }
    if (is_alpha(s[i]) || is_digit(s[i])) {
        char ct[16];
        parse_error(p, i, "invalid character %s in integer literal",
                    char_text(s[i], ct, sizeof(ct)));
        return -1;
    }
    if (too_large) {
        parse_error(p, off, "integer literal too large");
        return -1;
    }
    p->tok.kind = T_INT;
    p->tok.len = i - off;
    p->tok.num = v;
    return 0;
}

/* Reads the next token into p->tok. Returns -1 after reporting an error. */
static int lex(struct parser *p)
{
    const char *s = p->text;
    size_t i = p->tok.off + p->tok.len;
    while (s[i] == ' ' || s[i] == '\t') {
        i++;
    }
    p->tok.off = i;
    p->tok.len = 1;
    p->tok.num = 0;
    char c = s[i];
    char n = c != '\0' ? s[i + 1] : '\0';
    if (c == '\0') {
        p->tok.kind = T_END;
        p->tok.len = 0;
        return 0;
    }
    if (is_digit(c)) {
        return lex_number(p, i);
    }
    if (is_alpha(c)) {
        size_t j = i + 1;
        while (is_alpha(s[j]) || is_digit(s[j])) {
            j++;
        }
        p->tok.kind = T_NAME;
        p->tok.len = j - i;
        return 0;
    }
    switch (c) {
    case '(': p->tok.kind = T_LPAREN; return 0;
    case ')': p->tok.kind = T_RPAREN; return 0;
    case ',': p->tok.kind = T_COMMA; return 0;
    case '[': p->tok.kind = T_LBRACK; return 0;
    case ']': p->tok.kind = T_RBRACK; return 0;
    case '?': p->tok.kind = T_QUEST; return 0;
    case ':': p->tok.kind = T_COLON; return 0;
    case '^': p->tok.kind = T_BXOR; return 0;
    case '+': p->tok.kind = T_PLUS; return 0;
    case '-': p->tok.kind = T_MINUS; return 0;
    case '*': p->tok.kind = T_STAR; return 0;
    case '/': p->tok.kind = T_SLASH; return 0;
    case '%': p->tok.kind = T_PERCENT; return 0;
    case '~': p->tok.kind = T_TILDE; return 0;
    case '|':
        p->tok.kind = n == '|' ? T_OROR : T_BOR;
        p->tok.len = n == '|' ? 2 : 1;
        return 0;
    case '&':
        p->tok.kind = n == '&' ? T_ANDAND : T_BAND;
        p->tok.len = n == '&' ? 2 : 1;
        return 0;
    case '!':
        p->tok.kind = n == '=' ? T_NE : T_NOT;
        p->tok.len = n == '=' ? 2 : 1;
        return 0;
    case '<':
        p->tok.kind = n == '=' ? T_LE : n == '<' ? T_SHL : T_LT;
        p->tok.len = (n == '=' || n == '<') ? 2 : 1;
        return 0;
    case '>':
        p->tok.kind = n == '=' ? T_GE : n == '>' ? T_SHR : T_GT;
        p->tok.len = (n == '=' || n == '>') ? 2 : 1;
        return 0;
    case '=':
        if (n == '=') {
            p->tok.kind = T_EQ;
            p->tok.len = 2;
            return 0;
        }
        parse_error(p, i, "unexpected '=' (did you mean '=='?)");
        return -1;
    default:
        break;
    }
    char ct[16];
    parse_error(p, i, "unexpected character %s", char_text(c, ct, sizeof(ct)));
    return -1;
}

/* "end of text" or the current token quoted, for messages. */
static const char *tok_text(const struct parser *p, char *buf, size_t cap)
{
    if (p->tok.kind == T_END) {
        return "end of text";
    }
    int len = p->tok.len > 40 ? 40 : (int)p->tok.len;
    snprintf(buf, cap, "'%.*s'%s", len, p->text + p->tok.off, p->tok.len > 40 ? "..." : "");
    return buf;
}

/* ---- parser -------------------------------------------------------------- */

static struct cg_expr *new_node(struct parser *p, enum cg_expr_kind kind, size_t off)
{
    struct cg_expr *e = cg_arena_alloc(p->arena, sizeof(*e));
    e->kind = kind;
    e->slot = -1;
    e->pos.line = p->start.line;
    e->pos.col = column_of(p, off);
    return e;
}

static const struct {
    const char *name;      /* as written in schedules */
    enum cg_expr_fn fn;    /* tree tag */
    int nargs;             /* exact arity */
} fn_table[] = {
    {"log2", CG_FN_LOG2, 1},
    {"ceil_log2", CG_FN_CEIL_LOG2, 1},
    {"pof2", CG_FN_POF2, 1},
    {"pow", CG_FN_POW, 2},
    {"min", CG_FN_MIN, 2},
    {"max", CG_FN_MAX, 2},
    {"ceil_div", CG_FN_CEIL_DIV, 2},
    {"ceil_log", CG_FN_CEIL_LOG, 2},
    {"to_negabinary", CG_FN_TO_NEGABINARY, 1},
    {"from_negabinary", CG_FN_FROM_NEGABINARY, 1},
    {"bit_reverse", CG_FN_BIT_REVERSE, 2},
    {"ctz", CG_FN_CTZ, 1},
    {"popcount", CG_FN_POPCOUNT, 1},
};

#define N_FNS (sizeof(fn_table) / sizeof(fn_table[0]))

static const char *fn_name(enum cg_expr_fn fn)
{
    for (size_t i = 0; i < N_FNS; i++) {
        if (fn_table[i].fn == fn) {
            return fn_table[i].name;
        }
    }
    return "?";
}

/* Binary operator of token k at parser level `level`, or CG_OP_NONE. */
static enum cg_expr_op binary_op(enum tok_kind k, int level)
{
    static const struct {
        enum tok_kind tok;  /* token */
        enum cg_expr_op op; /* operator it stands for */
        int level;          /* its binding strength */
    } ops[] = {
        {T_OROR, CG_OP_OR, P_OR},       {T_ANDAND, CG_OP_AND, P_AND},
        {T_BOR, CG_OP_BOR, P_BOR},      {T_BXOR, CG_OP_BXOR, P_BXOR},
        {T_BAND, CG_OP_BAND, P_BAND},   {T_EQ, CG_OP_EQ, P_EQ},
        {T_NE, CG_OP_NE, P_EQ},         {T_LT, CG_OP_LT, P_REL},
        {T_LE, CG_OP_LE, P_REL},        {T_GT, CG_OP_GT, P_REL},
        {T_GE, CG_OP_GE, P_REL},        {T_SHL, CG_OP_SHL, P_SHIFT},
        {T_SHR, CG_OP_SHR, P_SHIFT},    {T_PLUS, CG_OP_ADD, P_ADD},
        {T_MINUS, CG_OP_SUB, P_ADD},    {T_STAR, CG_OP_MUL, P_MUL},
        {T_SLASH, CG_OP_DIV, P_MUL},    {T_PERCENT, CG_OP_MOD, P_MUL},
    };
    for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
        if (ops[i].tok == k && ops[i].level == level) {
            return ops[i].op;
        }
    }
    return CG_OP_NONE;
}

static struct cg_expr *parse_cond(struct parser *p);
static struct cg_expr *parse_unary(struct parser *p);

static int enter(struct parser *p)
{
    if (++p->depth > MAX_DEPTH) {
        parse_error(p, p->tok.off, "expression nested too deeply");
        return -1;
    }
    return 0;
}

static struct cg_expr *parse_call(struct parser *p, size_t name_off, size_t name_len)
{
    const char *name = p->text + name_off;
    int idx = -1;
    for (size_t i = 0; i < N_FNS; i++) {
        if (strlen(fn_table[i].name) == name_len && memcmp(fn_table[i].name, name, name_len) == 0) {
            idx = (int)i;
        }
    }
    if (idx < 0) {
        parse_error(p, name_off, "unknown function '%.*s'", (int)name_len, name);
        return NULL;
    }
    size_t lparen = p->tok.off;
    if (lex(p) != 0) {
        return NULL;
    }
    struct cg_expr *args[MAX_ARGS];
    int nargs = 0;
    if (p->tok.kind != T_RPAREN) {
        for (;;) {
            struct cg_expr *arg = parse_cond(p);
            if (arg == NULL) {
                return NULL;
            }
            if (nargs < MAX_ARGS) {
                args[nargs] = arg;
            }
            nargs++;
            if (p->tok.kind != T_COMMA) {
                break;
            }
            if (lex(p) != 0) {
                return NULL;
            }
        }
    }
    if (p->tok.kind != T_RPAREN) {
        char tt[64];
        parse_error(p, p->tok.off, "expected ',' or ')' in call to '%s' at column %d, found %s",
                    fn_table[idx].name, column_of(p, lparen), tok_text(p, tt, sizeof(tt)));
        return NULL;
    }
    if (nargs != fn_table[idx].nargs) {
        parse_error(p, name_off, "'%s' takes %d argument%s, got %d", fn_table[idx].name,
                    fn_table[idx].nargs, fn_table[idx].nargs == 1 ? "" : "s", nargs);
        return NULL;
    }
    if (lex(p) != 0) {
        return NULL;
    }
    struct cg_expr *e = new_node(p, CG_E_CALL, name_off);
    e->fn = fn_table[idx].fn;
    e->nargs = nargs;
    e->args = cg_arena_alloc(p->arena, (size_t)nargs * sizeof(e->args[0]));
    memcpy(e->args, args, (size_t)nargs * sizeof(e->args[0]));
    return e;
}

/* NAME '[' cond ']': a table's element (the table is bound by check). */
static struct cg_expr *parse_index(struct parser *p, size_t name_off, size_t name_len)
{
    size_t lbrack = p->tok.off;
    if (enter(p) != 0 || lex(p) != 0) {
        return NULL;
    }
    struct cg_expr *i = parse_cond(p);
    p->depth--;
    if (i == NULL) {
        return NULL;
    }
    if (p->tok.kind != T_RBRACK) {
        char tt[64];
        parse_error(p, p->tok.off, "expected ']' to close '[' at column %d, found %s",
                    column_of(p, lbrack), tok_text(p, tt, sizeof(tt)));
        return NULL;
    }
    if (lex(p) != 0) {
        return NULL;
    }
    struct cg_expr *e = new_node(p, CG_E_INDEX, name_off);
    char *name = cg_arena_alloc(p->arena, name_len + 1);
    memcpy(name, p->text + name_off, name_len);
    e->name = name;
    e->a = i;
    return e;
}

static struct cg_expr *parse_primary(struct parser *p)
{
    size_t off = p->tok.off;
    switch (p->tok.kind) {
    case T_INT: {
        struct cg_expr *e = new_node(p, CG_E_NUM, off);
        e->num = p->tok.num;
        return lex(p) == 0 ? e : NULL;
    }
    case T_NAME: {
        size_t len = p->tok.len;
        if (lex(p) != 0) {
            return NULL;
        }
        if (p->tok.kind == T_LPAREN) {
            return parse_call(p, off, len);
        }
        if (p->tok.kind == T_LBRACK) {
            return parse_index(p, off, len);
        }
        struct cg_expr *e = new_node(p, CG_E_NAME, off);
        char *name = cg_arena_alloc(p->arena, len + 1);
        memcpy(name, p->text + off, len);
        e->name = name;
        return e;
    }
    case T_LPAREN: {
        if (lex(p) != 0) {
            return NULL;
        }
        struct cg_expr *e = parse_cond(p);
        if (e == NULL) {
            return NULL;
        }
        if (p->tok.kind != T_RPAREN) {
            parse_error(p, p->tok.off, "expected ')' to close '(' at column %d",
                        column_of(p, off));
            return NULL;
        }
        return lex(p) == 0 ? e : NULL;
    }
    default: {
        char tt[64];
        parse_error(p, off, "expected an expression, found %s", tok_text(p, tt, sizeof(tt)));
        return NULL;
    }
    }
}

static struct cg_expr *parse_unary(struct parser *p)
{
    enum cg_expr_op op;
    switch (p->tok.kind) {
    case T_MINUS: op = CG_OP_NEG; break;
    case T_NOT: op = CG_OP_NOT; break;
    case T_TILDE: op = CG_OP_BNOT; break;
    case T_PLUS: op = CG_OP_NONE; break;
    default: return parse_primary(p);
    }
    size_t off = p->tok.off;
    if (enter(p) != 0 || lex(p) != 0) {
        return NULL;
    }
    struct cg_expr *a = parse_unary(p);
    p->depth--;
    if (a == NULL || op == CG_OP_NONE) {
        return a;
    }
    struct cg_expr *e = new_node(p, CG_E_UNARY, off);
    e->op = op;
    e->a = a;
    return e;
}

static struct cg_expr *parse_binary(struct parser *p, int level)
{
    if (level > P_MUL) {
        return parse_unary(p);
    }
    size_t off = p->tok.off;
    struct cg_expr *left = parse_binary(p, level + 1);
    while (left != NULL) {
        enum cg_expr_op op = binary_op(p->tok.kind, level);
        if (op == CG_OP_NONE) {
            break;
        }
        if (lex(p) != 0) {
            return NULL;
        }
        struct cg_expr *right = parse_binary(p, level + 1);
        if (right == NULL) {
            return NULL;
        }
        struct cg_expr *e = new_node(p, CG_E_BINARY, off);
        e->op = op;
        e->a = left;
        e->b = right;
        left = e;
    }
    return left;
}

static struct cg_expr *parse_cond(struct parser *p)
{
    size_t off = p->tok.off;
    if (enter(p) != 0) {
        return NULL;
    }
    struct cg_expr *e = parse_binary(p, P_OR);
    if (e != NULL && p->tok.kind == T_QUEST) {
        size_t quest = p->tok.off;
        struct cg_expr *b = NULL, *c = NULL;
        if (lex(p) == 0) {
            b = parse_cond(p);
        }
        if (b != NULL && p->tok.kind != T_COLON) {
            parse_error(p, p->tok.off, "expected ':' to match '?' at column %d",
                        column_of(p, quest));
        } else if (b != NULL && lex(p) == 0) {
            c = parse_cond(p);
        }
        if (c == NULL) {
            return NULL;
        }
        struct cg_expr *cond = new_node(p, CG_E_COND, off);
        cond->a = e;
        cond->b = b;
        cond->c = c;
        e = cond;
    }
    p->depth--;
    return e;
}

struct cg_expr *cg_expr_parse(struct cg_arena *arena, struct cg_diag *d, const char *file,
                              struct cg_pos start, const char *text)
{
    struct parser p = {0};
    p.arena = arena;
    p.d = d;
    p.file = file;
    p.start = start;
    p.text = text;
    if (lex(&p) != 0) {
        return NULL;
    }
    struct cg_expr *e = parse_cond(&p);
    if (e == NULL) {
        return NULL;
    }
    if (p.tok.kind != T_END) {
        char tt[64];
        parse_error(&p, p.tok.off, "unexpected %s after expression", tok_text(&p, tt, sizeof(tt)));
        return NULL;
    }
    cg_expr_widen(e, NULL);
    return e;
}

/* ---- evaluation ---------------------------------------------------------- */

/* What each operator and function computes, shared by the tree evaluator and
 * the compiled programs below so that the two cannot disagree. Each returns
 * NULL and sets *out, or returns why it fails. */

static int64_t floor_log2(int64_t x)
{
    int64_t k = 0;
    while (x > 1) {
        x >>= 1;
        k++;
    }
    return k;
}

static int pow_checked(int64_t b, int64_t e, int64_t *out)
{
    int64_t r = 1;
    while (e > 0) {
        if ((e & 1) != 0 && __builtin_mul_overflow(r, b, &r)) {
            return -1;
        }
        e >>= 1;
        if (e > 0 && __builtin_mul_overflow(b, b, &b)) {
            return -1;
        }
    }
    *out = r;
    return 0;
}

static int fn_arity(enum cg_expr_fn fn)
{
    for (size_t i = 0; i < N_FNS; i++) {
        if (fn_table[i].fn == fn) {
            return fn_table[i].nargs;
        }
    }
    return 2;
}

/* Why: negabinary digits are binary digits with every odd position
 * weighing -2^k instead of 2^k; adding the mask of the odd positions turns
 * the sum into plain binary, and xor with it flips their meaning back
 * (modulo 2^64, so exact for every value that fits). */
#define NEGABINARY_MASK UINT64_C(0xAAAAAAAAAAAAAAAA)

static inline const char *apply_unary(enum cg_expr_op op, int64_t v, int64_t *out)
{
    switch (op) {
    case CG_OP_NEG:
        return __builtin_sub_overflow((int64_t)0, v, out) ? "overflow" : NULL;
    case CG_OP_NOT: *out = v == 0; return NULL;
    case CG_OP_BNOT: *out = ~v; return NULL;
    default: return "bad unary operator";
    }
}

/* Every binary operator but the short-circuiting '&&' and '||'. */
static inline __attribute__((always_inline)) const char *
apply_binary(enum cg_expr_op op, int64_t a, int64_t b, int64_t *out)
{
    switch (op) {
    case CG_OP_ADD:
        return __builtin_add_overflow(a, b, out) ? "overflow" : NULL;
    case CG_OP_SUB:
        return __builtin_sub_overflow(a, b, out) ? "overflow" : NULL;
    case CG_OP_MUL:
        return __builtin_mul_overflow(a, b, out) ? "overflow" : NULL;
    case CG_OP_DIV:
    case CG_OP_MOD:
        if (b <= 0) {
            if (op == CG_OP_DIV) {
                return b == 0 ? "division by zero" : "division by a negative number";
            }
            return b == 0 ? "modulo by zero" : "modulo by a negative number";
        }
        if (op == CG_OP_DIV) {
            *out = a / b - ((a % b != 0 && a < 0) ? 1 : 0);
        } else {
            *out = a % b < 0 ? a % b + b : a % b;
        }
        return NULL;
    case CG_OP_SHL:
    case CG_OP_SHR:
        if (b < 0 || b > 62) {
            return "shift count outside 0..62";
        }
        if (op == CG_OP_SHR) {
            *out = a >> b;
            return NULL;
        }
        return __builtin_mul_overflow(a, (int64_t)1 << b, out) ? "overflow" : NULL;
    case CG_OP_BAND: *out = a & b; return NULL;
    case CG_OP_BOR: *out = a | b; return NULL;
    case CG_OP_BXOR: *out = a ^ b; return NULL;
    case CG_OP_LT: *out = a < b; return NULL;
    case CG_OP_LE: *out = a <= b; return NULL;
    case CG_OP_GT: *out = a > b; return NULL;
    case CG_OP_GE: *out = a >= b; return NULL;
    case CG_OP_EQ: *out = a == b; return NULL;
    case CG_OP_NE: *out = a != b; return NULL;
    default: return "bad binary operator";
    }
}

/* v holds fn_arity(fn) arguments. */
static const char *apply_call(enum cg_expr_fn fn, const int64_t *v, int64_t *out)
{
    switch (fn) {
    case CG_FN_LOG2:
        if (v[0] < 1) {
            return v[0] == 0 ? "log2 of 0" : "log2 of a negative number";
        }
        *out = floor_log2(v[0]);
        return NULL;
    case CG_FN_CEIL_LOG2:
        if (v[0] < 1) {
            return v[0] == 0 ? "ceil_log2 of 0" : "ceil_log2 of a negative number";
        }
        *out = floor_log2(v[0]) + ((v[0] & (v[0] - 1)) != 0 ? 1 : 0);
        return NULL;
    case CG_FN_POF2:
        if (v[0] < 1) {
            return v[0] == 0 ? "pof2 of 0" : "pof2 of a negative number";
        }
        *out = (int64_t)1 << floor_log2(v[0]);
        return NULL;
    case CG_FN_POW:
        if (v[1] < 0) {
            return "pow with a negative exponent";
        }
        return pow_checked(v[0], v[1], out) != 0 ? "overflow" : NULL;
    case CG_FN_MIN:
        *out = v[0] < v[1] ? v[0] : v[1];
        return NULL;
    case CG_FN_MAX:
        *out = v[0] > v[1] ? v[0] : v[1];
        return NULL;
    case CG_FN_CEIL_DIV:
        if (v[1] <= 0) {
            return v[1] == 0 ? "ceil_div by zero" : "ceil_div by a negative number";
        }
        *out = v[0] / v[1] + ((v[0] % v[1] != 0 && v[0] > 0) ? 1 : 0);
        return NULL;
    case CG_FN_CEIL_LOG: {
        if (v[0] < 2) {
            return "ceil_log with a base below 2";
        }
        if (v[1] < 1) {
            return v[1] == 0 ? "ceil_log of 0" : "ceil_log of a negative number";
        }
        int64_t k = 0, b = 1;
        while (b < v[1]) {
            b = b > v[1] / v[0] ? v[1] : b * v[0];
            k++;
        }
        *out = k;
        return NULL;
    }
    case CG_FN_TO_NEGABINARY:
        *out = (int64_t)(((uint64_t)v[0] + NEGABINARY_MASK) ^ NEGABINARY_MASK);
        return NULL;
    case CG_FN_FROM_NEGABINARY:
        if (v[0] < 0) {
            return "from_negabinary of a negative number";
        }
        *out = (int64_t)(((uint64_t)v[0] ^ NEGABINARY_MASK) - NEGABINARY_MASK);
        return NULL;
    case CG_FN_BIT_REVERSE: {
        if (v[1] < 0 || v[1] > 62) {
            return "bit_reverse of a bit count outside 0..62";
        }
        if (v[0] < 0 || v[0] >= ((int64_t)1 << v[1])) {
            return "bit_reverse of a value outside 0..2^n-1";
        }
        int64_t r = 0;
        for (int64_t i = 0; i < v[1]; i++) {
            r |= ((v[0] >> i) & 1) << (v[1] - 1 - i);
        }
        *out = r;
        return NULL;
    }
    case CG_FN_CTZ:
        if (v[0] < 1) {
            return v[0] == 0 ? "ctz of 0" : "ctz of a negative number";
        }
        *out = __builtin_ctzll((unsigned long long)v[0]);
        return NULL;
    case CG_FN_POPCOUNT:
        if (v[0] < 0) {
            return "popcount of a negative number";
        }
        *out = __builtin_popcountll((unsigned long long)v[0]);
        return NULL;
    }
    return "unknown function";
}

/* Why: the emitted C computes every subexpression in int, so a value that
 * fits int64 but not int would verify here and overflow there. */
static int fits_int(int64_t v)
{
    return v >= INT32_MIN && v <= INT32_MAX;
}

/* Node e's value v fits the C type it is computed in (64-bit nodes need no
 * check: their operators fail on 64-bit overflow already). */
static int fits_node(const struct cg_expr *e, int64_t v)
{
    return (e->wide && !e->narrow) || fits_int(v);
}

/* ---- the tree evaluator: one environment, says which node fails and why -- */

struct eval {
    const int64_t *env;         /* values of bound names */
    const struct cg_expr *bad;  /* the node that failed */
    const char *why;            /* and why */
};

static int fail(struct eval *ev, const struct cg_expr *e, const char *why)
{
    ev->bad = e;
    ev->why = why;
    return -1;
}

static int eval(struct eval *ev, const struct cg_expr *e, int64_t *out);

static int eval_call(struct eval *ev, const struct cg_expr *e, int64_t *out)
{
    int64_t v[2] = {0, 0};
    for (int i = 0; i < e->nargs && i < 2; i++) {
        if (eval(ev, e->args[i], &v[i]) != 0) {
            return -1;
        }
    }
    if (e->nargs != fn_arity(e->fn)) {
        return fail(ev, e, "wrong number of arguments");
    }
    const char *why = apply_call(e->fn, v, out);
    return why != NULL ? fail(ev, e, why) : 0;
}

static int eval_binary(struct eval *ev, const struct cg_expr *e, int64_t *out)
{
    int64_t a, b;
    if (eval(ev, e->a, &a) != 0) {
        return -1;
    }
    if (e->op == CG_OP_AND || e->op == CG_OP_OR) {
        if ((e->op == CG_OP_AND) == (a == 0)) {
            *out = e->op == CG_OP_OR;
            return 0;
        }
        if (eval(ev, e->b, &b) != 0) {
            return -1;
        }
        *out = b != 0;
        return 0;
    }
    if (eval(ev, e->b, &b) != 0) {
        return -1;
    }
    const char *why = apply_binary(e->op, a, b, out);
    return why != NULL ? fail(ev, e, why) : 0;
}

/* Why a thread-local message: the index and the table's length say more
 * than "out of range", and cg_expr_eval's callers print `why` at once. */
static _Thread_local char index_why[160];

/* Element i of the table (env[slot] elements computed so far, at most
 * tmax), or NULL with the message. */
static const char *table_element(const struct cg_expr *e, const int64_t *env, int64_t i,
                                 int64_t *out)
{
    if (e->slot < 0 || e->tbase <= 0 || env == NULL) {
        return "unbound table";
    }
    int64_t n = env[e->slot];
    if (i < 0 || i >= n || i >= e->tmax) {
        if (n <= 0) {
            snprintf(index_why, sizeof(index_why), "index %" PRId64 " of %s, which has no "
                     "element (yet)", i, e->name != NULL ? e->name : "?");
        } else {
            snprintf(index_why, sizeof(index_why), "index %" PRId64 " outside %s[0..%" PRId64
                     "]", i, e->name != NULL ? e->name : "?", n - 1);
        }
        return index_why;
    }
    *out = env[e->tbase + i];
    return NULL;
}

static int eval_index(struct eval *ev, const struct cg_expr *e, int64_t *out)
{
    int64_t i;
    if (eval(ev, e->a, &i) != 0) {
        return -1;
    }
    const char *why = table_element(e, ev->env, i, out);
    return why != NULL ? fail(ev, e, why) : 0;
}

static int eval_node(struct eval *ev, const struct cg_expr *e, int64_t *out)
{
    int64_t v;
    const char *why;
    if (e == NULL) {
        return fail(ev, e, "missing expression");
    }
    switch (e->kind) {
    case CG_E_NUM:
        *out = e->num;
        return 0;
    case CG_E_NAME:
        if (e->slot < 0 || ev->env == NULL) {
            return fail(ev, e, "unbound name");
        }
        *out = ev->env[e->slot];
        return 0;
    case CG_E_UNARY:
        if (eval(ev, e->a, &v) != 0) {
            return -1;
        }
        why = apply_unary(e->op, v, out);
        return why != NULL ? fail(ev, e, why) : 0;
    case CG_E_BINARY:
        return eval_binary(ev, e, out);
    case CG_E_COND:
        if (eval(ev, e->a, &v) != 0) {
            return -1;
        }
        return eval(ev, v != 0 ? e->b : e->c, out);
    case CG_E_CALL:
        return eval_call(ev, e, out);
    case CG_E_INDEX:
        return eval_index(ev, e, out);
    }
    return fail(ev, e, "bad expression kind");
}

static int eval(struct eval *ev, const struct cg_expr *e, int64_t *out)
{
    if (eval_node(ev, e, out) != 0) {
        return -1;
    }
    if (!fits_node(e, *out)) {
        return fail(ev, e, "value does not fit in int (the generated code computes in int)");
    }
    return 0;
}

int cg_expr_eval(const struct cg_expr *e, const int64_t *env, int64_t *out,
                 const struct cg_expr **bad, const char **why)
{
    struct eval ev = {env, NULL, NULL};
    int64_t v;
    if (eval(&ev, e, &v) != 0) {
        if (bad != NULL) {
            *bad = ev.bad;
        }
        if (why != NULL) {
            *why = ev.why;
        }
        return -1;
    }
    *out = v;
    return 0;
}

/* ---- compiled programs: many environments at once ------------------------
 *
 * A program is the tree in postorder, each node one instruction that works on
 * whole registers (a value per environment, or lane): a node evaluated at
 * depth d leaves its value in register d, and its operands are registers d,
 * d + 1 and d + 2. Each lane also carries a failure flag, set where the tree
 * evaluator would fail; '&&', '||' and '?:' evaluate both sides in every lane
 * and take the flag of the side the tree evaluator would have evaluated, so
 * the flags match it exactly.
 *
 * Why uniform registers: many values are the same in every lane (a constant,
 * p, a round variable, what is computed from them only), and a round at
 * p = 1000 would compute them a thousand times. A register holds one value
 * for all lanes until an operand that differs per lane meets it.
 */

enum vop {
    V_FAIL,   /* fails in every lane (unbound name, wrong arity, bad tree) */
    V_CONST,  /* k */
    V_SLOT,   /* env[slot] */
    V_UNARY,  /* op r */
    V_BINARY, /* r op r+1 */
    V_AND,    /* r && r+1 */
    V_OR,     /* r || r+1 */
    V_COND,   /* r ? r+1 : r+2 */
    V_CALL,   /* fn(r) or fn(r, r+1) */
    V_INDEX   /* table element r (sub: the table's length slot, k: its first element's) */
};

struct vinsn {
    enum vop op;  /* what it computes */
    int r;        /* its register, and its first operand's */
    int w64;      /* its value may use 64 bits (fits_node) */
    int sub;      /* V_UNARY, V_BINARY: enum cg_expr_op; V_CALL: enum cg_expr_fn; V_SLOT: slot */
    int64_t k;    /* V_CONST: the value; V_INDEX: the slot of element 0 */
    int tmax;     /* V_INDEX: the table's capacity */
};

struct cg_expr_prog {
    int n;                 /* instructions */
    int nregs;             /* registers they use */
    struct vinsn insn[];   /* in execution order */
};

/* A register: lane i's value at v[i & mask], its flag at f[i & mask]; mask
 * 0 for a uniform register, whose value is kept in `one`. */
struct cg_expr_reg {
    const int64_t *v;       /* values */
    const unsigned char *f; /* failure flags */
    size_t mask;            /* SIZE_MAX, or 0: uniform */
    int64_t one;            /* a uniform register's value */
    unsigned char one_f;    /* and flag */
};

static int count_nodes(const struct cg_expr *e)
{
    if (e == NULL) {
        return 1;
    }
    int n = 1 + (e->a ? count_nodes(e->a) : 0) + (e->b ? count_nodes(e->b) : 0) +
            (e->c ? count_nodes(e->c) : 0);
    for (int i = 0; i < e->nargs; i++) {
        n += count_nodes(e->args[i]);
    }
    return n;
}

static void emit_insn(struct cg_expr_prog *pr, enum vop op, int r, int sub, int64_t k)
{
    pr->insn[pr->n++] = (struct vinsn){op, r, 0, sub, k, 0};
    if (r + 3 > pr->nregs) {
        pr->nregs = r + 3;
    }
}

static void compile_node(struct cg_expr_prog *pr, const struct cg_expr *e, int r);

/* A node's own instruction is the last one it emits. */
static void compile(struct cg_expr_prog *pr, const struct cg_expr *e, int r)
{
    compile_node(pr, e, r);
    pr->insn[pr->n - 1].w64 = e != NULL && e->wide && !e->narrow;
}

static void compile_node(struct cg_expr_prog *pr, const struct cg_expr *e, int r)
{
    if (e == NULL) {
        emit_insn(pr, V_FAIL, r, 0, 0);
        return;
    }
    switch (e->kind) {
    case CG_E_NUM:
        emit_insn(pr, V_CONST, r, 0, e->num);
        return;
    case CG_E_NAME:
        emit_insn(pr, e->slot < 0 ? V_FAIL : V_SLOT, r, e->slot, 0);
        return;
    case CG_E_UNARY:
        compile(pr, e->a, r);
        emit_insn(pr, V_UNARY, r, e->op, 0);
        return;
    case CG_E_BINARY:
        compile(pr, e->a, r);
        compile(pr, e->b, r + 1);
        emit_insn(pr, e->op == CG_OP_AND ? V_AND : e->op == CG_OP_OR ? V_OR : V_BINARY, r, e->op,
                  0);
        return;
    case CG_E_COND:
        compile(pr, e->a, r);
        compile(pr, e->b, r + 1);
        compile(pr, e->c, r + 2);
        emit_insn(pr, V_COND, r, 0, 0);
        return;
    case CG_E_CALL:
        if (e->nargs != fn_arity(e->fn)) {
            emit_insn(pr, V_FAIL, r, 0, 0);
            return;
        }
        for (int i = 0; i < e->nargs; i++) {
            compile(pr, e->args[i], r + i);
        }
        emit_insn(pr, V_CALL, r, e->fn, 0);
        return;
    case CG_E_INDEX:
        compile(pr, e->a, r);
        emit_insn(pr, e->slot < 0 ? V_FAIL : V_INDEX, r, e->slot, e->tbase);
        pr->insn[pr->n - 1].tmax = e->tmax;
        return;
    }
    emit_insn(pr, V_FAIL, r, 0, 0);
}

struct cg_expr_prog *cg_expr_compile(const struct cg_expr *e)
{
    int n = count_nodes(e);
    struct cg_expr_prog *pr = malloc(sizeof(*pr) + sizeof(pr->insn[0]) * (size_t)n);
    if (pr == NULL) {
        cg_panic("out of memory");
    }
    pr->n = 0;
    pr->nregs = 0;
    compile(pr, e, 0);
    return pr;
}

void cg_expr_prog_free(struct cg_expr_prog *pr)
{
    free(pr);
}

void cg_expr_work_free(struct cg_expr_work *w)
{
    free(w->val);
    free(w->failed);
    free(w->regs);
    *w = (struct cg_expr_work){0};
}

/* An operand, copied out of its register before the result overwrites it. */
struct lanes {
    const int64_t *v;       /* values */
    const unsigned char *f; /* flags */
    size_t mask;            /* SIZE_MAX, or 0: uniform */
};

static struct lanes lanes_of(const struct cg_expr_reg *r)
{
    return (struct lanes){r->v, r->f, r->mask};
}

/* r op r+1 in n lanes. Inlined with a constant op (below), so that each
 * operator gets a loop without branches; apply_binary never divides by zero
 * or shifts too far, so lanes that already failed are computed harmlessly. */
static inline __attribute__((always_inline)) void
binary_lanes(enum cg_expr_op op, int n, int64_t *x, unsigned char *fx, struct lanes a,
             struct lanes b, int w64)
{
    for (int i = 0; i < n; i++) {
        size_t ia = (size_t)i & a.mask, ib = (size_t)i & b.mask;
        int64_t v = 0;
        int failed = apply_binary(op, a.v[ia], b.v[ib], &v) != NULL;
        fx[i] = (unsigned char)(a.f[ia] | b.f[ib] | failed | !(w64 || fits_int(v)));
        x[i] = v;
    }
}

static void binary(int op, int n, int64_t *x, unsigned char *fx, struct lanes a, struct lanes b,
                   int w64)
{
    switch ((enum cg_expr_op)op) {
    case CG_OP_ADD: binary_lanes(CG_OP_ADD, n, x, fx, a, b, w64); return;
    case CG_OP_SUB: binary_lanes(CG_OP_SUB, n, x, fx, a, b, w64); return;
    case CG_OP_MUL: binary_lanes(CG_OP_MUL, n, x, fx, a, b, w64); return;
    case CG_OP_DIV: binary_lanes(CG_OP_DIV, n, x, fx, a, b, w64); return;
    case CG_OP_MOD: binary_lanes(CG_OP_MOD, n, x, fx, a, b, w64); return;
    case CG_OP_SHL: binary_lanes(CG_OP_SHL, n, x, fx, a, b, w64); return;
    case CG_OP_SHR: binary_lanes(CG_OP_SHR, n, x, fx, a, b, w64); return;
    case CG_OP_BAND: binary_lanes(CG_OP_BAND, n, x, fx, a, b, w64); return;
    case CG_OP_BOR: binary_lanes(CG_OP_BOR, n, x, fx, a, b, w64); return;
    case CG_OP_BXOR: binary_lanes(CG_OP_BXOR, n, x, fx, a, b, w64); return;
    case CG_OP_LT: binary_lanes(CG_OP_LT, n, x, fx, a, b, w64); return;
    case CG_OP_LE: binary_lanes(CG_OP_LE, n, x, fx, a, b, w64); return;
    case CG_OP_GT: binary_lanes(CG_OP_GT, n, x, fx, a, b, w64); return;
    case CG_OP_GE: binary_lanes(CG_OP_GE, n, x, fx, a, b, w64); return;
    case CG_OP_EQ: binary_lanes(CG_OP_EQ, n, x, fx, a, b, w64); return;
    case CG_OP_NE: binary_lanes(CG_OP_NE, n, x, fx, a, b, w64); return;
    default: binary_lanes((enum cg_expr_op)op, n, x, fx, a, b, w64); return;
    }
}

static void grow_work(struct cg_expr_work *w, int nregs, int n)
{
    size_t need = (size_t)(nregs - 1) * (size_t)n;
    if (need > w->cap) {
        free(w->val);
        free(w->failed);
        w->val = malloc(sizeof(int64_t) * need);
        w->failed = malloc(need);
        if (w->val == NULL || w->failed == NULL) {
            cg_panic("out of memory");
        }
        w->cap = need;
    }
    if (nregs > w->nregs) {
        free(w->regs);
        w->regs = calloc((size_t)nregs, sizeof(*w->regs));
        if (w->regs == NULL) {
            cg_panic("out of memory");
        }
        w->nregs = nregs;
    }
}

void cg_expr_run(const struct cg_expr_prog *pr, const int64_t *env, size_t stride,
                 const unsigned char *same, const int *idx, int n, int64_t *out,
                 unsigned char *failed, struct cg_expr_work *w)
{
    if (n <= 0) {
        return;
    }
    grow_work(w, pr->nregs, n);
    for (int k = 0; k < pr->n; k++) {
        const struct vinsn *in = &pr->insn[k];
        struct cg_expr_reg *d = &w->regs[in->r];
        struct lanes a = lanes_of(d), b = lanes_of(d + 1), c = lanes_of(d + 2);
        /* The result is uniform unless an operand differs per lane (or the
         * slot read does). */
        size_t mask = 0;
        switch (in->op) {
        case V_FAIL:
        case V_CONST:
            break;
        case V_SLOT:
            mask = same != NULL && same[in->sub] ? 0 : SIZE_MAX;
            break;
        case V_INDEX:
            mask = SIZE_MAX; /* tables may differ between ranks */
            break;
        case V_UNARY:
            mask = a.mask;
            break;
        case V_COND:
            mask = a.mask | b.mask | c.mask;
            break;
        case V_CALL:
            mask = fn_arity((enum cg_expr_fn)in->sub) == 2 ? a.mask | b.mask : a.mask;
            break;
        default:
            mask = a.mask | b.mask;
            break;
        }
        int m = mask ? n : 1;
        /* Register 0 of n lanes is the caller's output. */
        int64_t *x = &d->one;
        unsigned char *fx = &d->one_f;
        if (mask && in->r == 0) {
            x = out;
            fx = failed;
        } else if (mask) {
            x = w->val + (size_t)(in->r - 1) * (size_t)n;
            fx = w->failed + (size_t)(in->r - 1) * (size_t)n;
        }
        const char *why;
        switch (in->op) {
        case V_FAIL:
            *x = 0;
            *fx = 1;
            break;
        case V_CONST:
            *x = in->k;
            *fx = !(in->w64 || fits_int(in->k));
            break;
        case V_SLOT:
            for (int i = 0; i < m; i++) {
                x[i] = env[(size_t)idx[i] * stride + (size_t)in->sub];
                fx[i] = !(in->w64 || fits_int(x[i]));
            }
            break;
        case V_UNARY:
            for (int i = 0; i < m; i++) {
                size_t ia = (size_t)i & a.mask;
                int64_t v = 0;
                why = apply_unary((enum cg_expr_op)in->sub, a.v[ia], &v);
                fx[i] = a.f[ia] | (why != NULL) | !(in->w64 || fits_int(v));
                x[i] = v;
            }
            break;
        case V_BINARY:
            binary(in->sub, m, x, fx, a, b, in->w64);
            break;
        case V_AND:
        case V_OR:
            for (int i = 0; i < m; i++) {
                size_t ia = (size_t)i & a.mask, ib = (size_t)i & b.mask;
                /* b is evaluated where a does not decide. */
                int decides = (a.v[ia] != 0) == (in->op == V_OR);
                fx[i] = a.f[ia] | (!decides && b.f[ib]);
                x[i] = decides ? in->op == V_OR : b.v[ib] != 0;
            }
            break;
        case V_COND:
            for (int i = 0; i < m; i++) {
                size_t ia = (size_t)i & a.mask, ib = (size_t)i & b.mask, ic = (size_t)i & c.mask;
                /* x may be a's register: read everything first. */
                int64_t v = a.v[ia] != 0 ? b.v[ib] : c.v[ic];
                fx[i] = a.f[ia] | (a.v[ia] != 0 ? b.f[ib] : c.f[ic]) | !(in->w64 || fits_int(v));
                x[i] = v;
            }
            break;
        case V_INDEX: {
            struct cg_expr t = {0};
            t.slot = in->sub;
            t.tbase = (int)in->k;
            t.tmax = in->tmax;
            for (int i = 0; i < n; i++) {
                size_t ia = (size_t)i & a.mask;
                int64_t v = 0;
                /* A failed index is never read: its lane fails. */
                int bad = a.f[ia] || table_element(&t, env + (size_t)idx[i] * stride, a.v[ia],
                                                   &v) != NULL;
                fx[i] = (unsigned char)bad;
                x[i] = v;
            }
            break;
        }
        case V_CALL: {
            int two = fn_arity((enum cg_expr_fn)in->sub) == 2;
            for (int i = 0; i < m; i++) {
                size_t ia = (size_t)i & a.mask, ib = (size_t)i & b.mask;
                int64_t args[2] = {a.v[ia], two ? b.v[ib] : 0}, v = 0;
                why = apply_call((enum cg_expr_fn)in->sub, args, &v);
                fx[i] = a.f[ia] | (two && b.f[ib]) | (why != NULL) | !(in->w64 || fits_int(v));
                x[i] = v;
            }
            break;
        }
        }
        d->v = x;
        d->f = fx;
        d->mask = mask;
    }
    const struct cg_expr_reg *r0 = &w->regs[0];
    if (r0->mask == 0) {
        for (int i = 0; i < n; i++) {
            out[i] = r0->one;
            failed[i] = r0->one_f;
        }
    }
}

/* ---- printing ------------------------------------------------------------
 *
 * Both printers put parentheses where precedence and associativity need them
 * (a left operand binding weaker than its operator, a right operand binding
 * no stronger), and also where gcc -Wparentheses would warn, since emitted
 * code is compiled with -Wall -Wextra -Werror: `a << (b + c)`,
 * `a || (b && c)`, `(a & b) == c`, `(!a) == b`.
 *
 * Why the C printer also rewrites a few nodes ("views"): some gcc warnings
 * look at the operator itself, and no parentheses silence them. A product,
 * a left shift or a '?:' with constant arms used as a truth value
 * (-Wint-in-bool-context) prints as `x != 0` (under '!' as `x == 0`); '~' of
 * a truth value (-Wbool-operation) as `-1 - (t)`; and a constant negative
 * left operand of '<<' (-Wshift-negative-value) as `-(1 << k)`. Each is
 * equal to the original for every value the evaluator accepts.
 */

struct out {
    char *buf;  /* destination, may be NULL when cap == 0 */
    size_t cap; /* its size */
    size_t len; /* characters wanted so far */
    int c;      /* 1: C, 0: schedule syntax */
};

static void put(struct out *o, const char *s)
{
    size_t n = strlen(s);
    if (o->len < o->cap) {
        size_t room = o->cap - o->len;
        memcpy(o->buf + o->len, s, n < room ? n : room);
    }
    o->len += n;
}

static int is_cmp(enum cg_expr_op op)
{
    return op >= CG_OP_LT && op <= CG_OP_NE;
}

static int is_rel(enum cg_expr_op op)
{
    return op >= CG_OP_LT && op <= CG_OP_GE;
}

static int is_binary(const struct cg_expr *e, enum cg_expr_op op)
{
    return e->kind == CG_E_BINARY && e->op == op;
}

static int is_unary(const struct cg_expr *e, enum cg_expr_op op)
{
    return e->kind == CG_E_UNARY && e->op == op;
}

/* C prints '/' and '%' as calls. */
static int is_c_call(const struct out *o, const struct cg_expr *e)
{
    return o->c && (is_binary(e, CG_OP_DIV) || is_binary(e, CG_OP_MOD));
}

static int op_prec(enum cg_expr_op op)
{
    switch (op) {
    case CG_OP_NEG: case CG_OP_NOT: case CG_OP_BNOT: return P_UNARY;
    case CG_OP_MUL: case CG_OP_DIV: case CG_OP_MOD: return P_MUL;
    case CG_OP_ADD: case CG_OP_SUB: return P_ADD;
    case CG_OP_SHL: case CG_OP_SHR: return P_SHIFT;
    case CG_OP_LT: case CG_OP_LE: case CG_OP_GT: case CG_OP_GE: return P_REL;
    case CG_OP_EQ: case CG_OP_NE: return P_EQ;
    case CG_OP_BAND: return P_BAND;
    case CG_OP_BXOR: return P_BXOR;
    case CG_OP_BOR: return P_BOR;
    case CG_OP_AND: return P_AND;
    case CG_OP_OR: return P_OR;
    case CG_OP_NONE: break;
    }
    return P_PRIMARY;
}

static int node_prec(const struct out *o, const struct cg_expr *e)
{
    switch (e->kind) {
    case CG_E_NUM: return (e->num < 0 && e->num != INT64_MIN) ? P_UNARY : P_PRIMARY;
    case CG_E_NAME: case CG_E_CALL: case CG_E_INDEX: return P_PRIMARY;
    case CG_E_UNARY: return P_UNARY;
    case CG_E_BINARY: return is_c_call(o, e) ? P_PRIMARY : op_prec(e->op);
    case CG_E_COND: return P_COND;
    }
    return P_PRIMARY;
}

/* A comparison, '&&', '||' or '!': what gcc treats as a truth value. */
static int is_truth(const struct cg_expr *e)
{
    return (e->kind == CG_E_BINARY && (is_cmp(e->op) || e->op == CG_OP_AND || e->op == CG_OP_OR))
           || is_unary(e, CG_OP_NOT);
}

/* Where gcc -Wparentheses (or -Wlogical-not-parentheses) would warn about
 * `child` written bare as an operand of `parent`; `other` is the other
 * operand. Precedence alone already asks for parentheses elsewhere. */
static int warns_bare(const struct out *o, enum cg_expr_op parent, const struct cg_expr *child,
                      const struct cg_expr *other, int right)
{
    enum cg_expr_op cop = CG_OP_NONE;
    if (child->kind == CG_E_BINARY && !is_c_call(o, child)) {
        cop = child->op;
    }
    int arith = cop == CG_OP_ADD || cop == CG_OP_SUB;
    int bare_not = !right && is_unary(child, CG_OP_NOT) && !is_truth(other);
    switch (parent) {
    case CG_OP_SHL:
    case CG_OP_SHR:
        return arith;
    case CG_OP_OR:
        return cop == CG_OP_AND;
    case CG_OP_BOR:
        return arith || cop == CG_OP_BAND || cop == CG_OP_BXOR || is_cmp(cop) || bare_not;
    case CG_OP_BXOR:
        return arith || cop == CG_OP_BAND || is_cmp(cop);
    case CG_OP_BAND:
        return arith || is_cmp(cop) || bare_not;
    case CG_OP_EQ:
    case CG_OP_NE:
        return is_cmp(cop) || (bare_not && !(other->kind == CG_E_NUM && other->num == 0));
    case CG_OP_LT:
    case CG_OP_LE:
    case CG_OP_GT:
    case CG_OP_GE:
        return is_rel(cop) || bare_not;
    default:
        return 0;
    }
}

/* The value gcc would fold a C operand to: 1 when e has no names and no
 * calls (so no '/' or '%') and evaluates without error. */
static int c_fold(const struct cg_expr *e, int64_t *v)
{
    switch (e->kind) {
    case CG_E_NAME:
    case CG_E_CALL:
    case CG_E_INDEX:
        return 0;
    case CG_E_BINARY:
        if (e->op == CG_OP_DIV || e->op == CG_OP_MOD || !c_fold(e->b, v)) {
            return 0;
        }
        return c_fold(e->a, v) && cg_expr_eval(e, NULL, v, NULL, NULL) == 0;
    case CG_E_COND:
        if (!c_fold(e->b, v) || !c_fold(e->c, v)) {
            return 0;
        }
        return c_fold(e->a, v) && cg_expr_eval(e, NULL, v, NULL, NULL) == 0;
    case CG_E_UNARY:
        return c_fold(e->a, v) && cg_expr_eval(e, NULL, v, NULL, NULL) == 0;
    case CG_E_NUM:
        *v = e->num;
        return 1;
    }
    return 0;
}

/* gcc -Wint-in-bool-context warns when e is used as a truth value. */
static int bool_warns(const struct cg_expr *e)
{
    int64_t v;
    switch (e->kind) {
    case CG_E_BINARY:
        return e->op == CG_OP_MUL || e->op == CG_OP_SHL;
    case CG_E_UNARY:
        return e->op == CG_OP_NEG && bool_warns(e->a);
    case CG_E_COND:
        return (c_fold(e->b, &v) && v != 0 && v != 1) || (c_fold(e->c, &v) && v != 0 && v != 1);
    default:
        return 0;
    }
}

/* Nodes a C view may build in place of the original. */
struct view {
    struct cg_expr n[3]; /* n[0] replaces the node; n[1], n[2] hang below it */
};

static struct cg_expr *unconst(const struct cg_expr *e)
{
    return (struct cg_expr *)(uintptr_t)e;
}

static struct cg_expr *view_node(struct cg_expr *n, enum cg_expr_kind kind, enum cg_expr_op op,
                                 const struct cg_expr *a, const struct cg_expr *b)
{
    memset(n, 0, sizeof(*n));
    n->kind = kind;
    n->op = op;
    n->slot = -1;
    n->a = unconst(a);
    n->b = unconst(b);
    return n;
}

static struct cg_expr *view_num(struct cg_expr *n, int64_t v)
{
    view_node(n, CG_E_NUM, CG_OP_NONE, NULL, NULL);
    n->num = v;
    return n;
}

/* What C prints for e: e itself, or an equal expression that gcc accepts
 * under -Wall -Wextra -Werror. `in_bool`: e is used as a truth value. */
static const struct cg_expr *view_c(const struct out *o, const struct cg_expr *e, int in_bool,
                                    struct view *v)
{
    int64_t k;
    if (!o->c) {
        return e;
    }
    if (in_bool && bool_warns(e)) {
        return view_node(&v->n[0], CG_E_BINARY, CG_OP_NE, e, view_num(&v->n[1], 0));
    }
    if (is_unary(e, CG_OP_NOT) && bool_warns(e->a)) {
        return view_node(&v->n[0], CG_E_BINARY, CG_OP_EQ, e->a, view_num(&v->n[1], 0));
    }
    if (is_unary(e, CG_OP_BNOT) && is_truth(e->a)) {
        return view_node(&v->n[0], CG_E_BINARY, CG_OP_SUB, view_num(&v->n[1], -1), e->a);
    }
    if (is_binary(e, CG_OP_SHL) && c_fold(e->a, &k) && k < 0 && k != INT64_MIN) {
        const struct cg_expr *pos;
        if (e->a->kind == CG_E_NUM) {
            pos = view_num(&v->n[2], -k);
        } else if (is_unary(e->a, CG_OP_NEG)) {
            pos = e->a->a;
        } else {
            pos = view_node(&v->n[2], CG_E_UNARY, CG_OP_NEG, e->a, NULL);
        }
        view_node(&v->n[1], CG_E_BINARY, CG_OP_SHL, pos, e->b);
        return view_node(&v->n[0], CG_E_UNARY, CG_OP_NEG, &v->n[1], NULL);
    }
    return e;
}

static void print_node(struct out *o, const struct cg_expr *e);

static void print_operand(struct out *o, const struct cg_expr *e, int parens)
{
    if (parens) {
        put(o, "(");
    }
    print_node(o, e);
    if (parens) {
        put(o, ")");
    }
}

static const char *op_text(enum cg_expr_op op)
{
    static const char *const text[] = {
        [CG_OP_NEG] = "-",  [CG_OP_NOT] = "!",  [CG_OP_BNOT] = "~", [CG_OP_ADD] = " + ",
        [CG_OP_SUB] = " - ", [CG_OP_MUL] = " * ", [CG_OP_DIV] = " / ", [CG_OP_MOD] = " % ",
        [CG_OP_SHL] = " << ", [CG_OP_SHR] = " >> ", [CG_OP_BAND] = " & ", [CG_OP_BOR] = " | ",
        [CG_OP_BXOR] = " ^ ", [CG_OP_LT] = " < ", [CG_OP_LE] = " <= ", [CG_OP_GT] = " > ",
        [CG_OP_GE] = " >= ", [CG_OP_EQ] = " == ", [CG_OP_NE] = " != ", [CG_OP_AND] = " && ",
        [CG_OP_OR] = " || ",
    };
    if ((size_t)op < sizeof(text) / sizeof(text[0]) && text[op] != NULL) {
        return text[op];
    }
    return " ?? ";
}

static void print_call(struct out *o, const char *name, const struct cg_expr *const *args, int n)
{
    if (o->c) {
        put(o, "cg_");
    }
    put(o, name);
    put(o, "(");
    for (int i = 0; i < n; i++) {
        struct view v;
        if (i > 0) {
            put(o, ", ");
        }
        print_node(o, view_c(o, args[i], 0, &v));
    }
    put(o, ")");
}

static void print_binary(struct out *o, const struct cg_expr *e)
{
    if (is_c_call(o, e)) {
        const struct cg_expr *args[2] = {e->a, e->b};
        print_call(o, e->op == CG_OP_DIV ? "div" : "mod", args, 2);
        return;
    }
    int in_bool = e->op == CG_OP_AND || e->op == CG_OP_OR;
    struct view va, vb, vz;
    const struct cg_expr *a = view_c(o, e->a, in_bool, &va);
    const struct cg_expr *b = view_c(o, e->b, in_bool, &vb);
    /* Why: gcc -Wtype-limits rejects an int compared with a constant
     * outside int's range (always true or false); INT64_C(0) + x is the
     * same value, typed int64_t. */
    int64_t k;
    if (o->c && is_cmp(e->op) && !a->wide && c_fold(b, &k) && !fits_int(k)) {
        view_num(&vz.n[1], 0)->wide = 1;
        a = view_node(&vz.n[0], CG_E_BINARY, CG_OP_ADD, &vz.n[1], a);
        vz.n[0].wide = 1;
    } else if (o->c && is_cmp(e->op) && !b->wide && c_fold(a, &k) && !fits_int(k)) {
        view_num(&vz.n[1], 0)->wide = 1;
        b = view_node(&vz.n[0], CG_E_BINARY, CG_OP_ADD, &vz.n[1], b);
        vz.n[0].wide = 1;
    }
    int prec = op_prec(e->op);
    int pa = node_prec(o, a), pb = node_prec(o, b);
    print_operand(o, a, pa < prec || warns_bare(o, e->op, a, b, 0));
    put(o, op_text(e->op));
    print_operand(o, b, pb <= prec || warns_bare(o, e->op, b, a, 1));
}

static void print_node(struct out *o, const struct cg_expr *e)
{
    char num[32];
    struct view va, vb, vc;
    switch (e->kind) {
    case CG_E_NUM:
        if (e->num == INT64_MIN) {
            put(o, "(-9223372036854775807 - 1)");
        } else if (o->c && (e->wide || !fits_int(e->num))) {
            /* Why: an unsuffixed literal's type depends on its value, base
             * and the platform; INT64_C makes it int64_t everywhere. */
            snprintf(num, sizeof(num), "INT64_C(%" PRId64 ")", e->num);
            put(o, num);
        } else {
            snprintf(num, sizeof(num), "%" PRId64, e->num);
            put(o, num);
        }
        return;
    case CG_E_NAME:
        put(o, e->name != NULL ? e->name : "?");
        return;
    case CG_E_UNARY: {
        const struct cg_expr *a = view_c(o, e->a, e->op == CG_OP_NOT, &va);
        int parens = node_prec(o, a) < P_UNARY;
        put(o, op_text(e->op));
        /* "- -x", never "--x". */
        if (e->op == CG_OP_NEG && !parens
            && (is_unary(a, CG_OP_NEG) || (a->kind == CG_E_NUM && node_prec(o, a) == P_UNARY))) {
            put(o, " ");
        }
        print_operand(o, a, parens);
        return;
    }
    case CG_E_BINARY:
        print_binary(o, e);
        return;
    case CG_E_COND: {
        const struct cg_expr *a = view_c(o, e->a, 1, &va);
        print_operand(o, a, node_prec(o, a) <= P_COND);
        put(o, " ? ");
        /* A conditional in the middle needs no parentheses, but reads
         * better with them. */
        const struct cg_expr *b = view_c(o, e->b, 0, &vb);
        print_operand(o, b, b->kind == CG_E_COND);
        put(o, " : ");
        print_node(o, view_c(o, e->c, 0, &vc));
        return;
    }
    case CG_E_CALL:
        print_call(o, fn_name(e->fn), (const struct cg_expr *const *)e->args, e->nargs);
        return;
    case CG_E_INDEX:
        put(o, e->name != NULL ? e->name : "?");
        put(o, "[");
        print_node(o, view_c(o, e->a, 0, &va));
        put(o, "]");
        return;
    }
    put(o, "?");
}

static size_t print(const struct cg_expr *e, char *buf, size_t cap, int c)
{
    struct out o = {buf, cap, 0, c};
    struct view v;
    print_node(&o, view_c(&o, e, 0, &v));
    if (cap > 0) {
        buf[o.len < cap ? o.len : cap - 1] = '\0';
    }
    return o.len;
}

size_t cg_expr_print_c(const struct cg_expr *e, char *buf, size_t cap)
{
    return print(e, buf, cap, 1);
}

size_t cg_expr_print(const struct cg_expr *e, char *buf, size_t cap)
{
    return print(e, buf, cap, 0);
}

/* ---- widths --------------------------------------------------------------- */

int cg_expr_widen(struct cg_expr *e, const unsigned char *slot_wide)
{
    if (e == NULL) {
        return 0;
    }
    int a = cg_expr_widen(e->a, slot_wide);
    int b = cg_expr_widen(e->b, slot_wide);
    int c = cg_expr_widen(e->c, slot_wide);
    for (int i = 0; i < e->nargs; i++) {
        cg_expr_widen(e->args[i], slot_wide);
    }
    int w = 0;
    switch (e->kind) {
    case CG_E_NUM:
        w = !fits_int(e->num);
        break;
    case CG_E_NAME:
        w = slot_wide != NULL && e->slot >= 0 && slot_wide[e->slot];
        break;
    case CG_E_UNARY:
        w = e->op != CG_OP_NOT && a;
        break;
    case CG_E_BINARY:
        switch (e->op) {
        case CG_OP_ADD: case CG_OP_SUB: case CG_OP_MUL:
        case CG_OP_BAND: case CG_OP_BOR: case CG_OP_BXOR:
            w = a || b;
            break;
        case CG_OP_SHL: case CG_OP_SHR:
            w = a; /* C: the type of the promoted left operand */
            break;
        default:
            w = 0; /* '/' '%' print as int functions; comparisons and logic are int */
            break;
        }
        break;
    case CG_E_COND:
        w = b || c;
        break;
    case CG_E_CALL:
    case CG_E_INDEX:
        w = 0; /* functions and table elements are int */
        break;
    }
    e->wide = (unsigned char)w;
    return w;
}

/* ---- walking ------------------------------------------------------------- */

void cg_expr_walk_names(struct cg_expr *e, void (*fn)(struct cg_expr *name, void *arg), void *arg)
{
    if (e == NULL) {
        return;
    }
    if (e->kind == CG_E_NAME) {
        fn(e, arg);
        return;
    }
    if (e->kind == CG_E_INDEX) {
        fn(e, arg);
    }
    cg_expr_walk_names(e->a, fn, arg);
    cg_expr_walk_names(e->b, fn, arg);
    cg_expr_walk_names(e->c, fn, arg);
    for (int i = 0; i < e->nargs; i++) {
        cg_expr_walk_names(e->args[i], fn, arg);
    }
}

int cg_expr_is_const(const struct cg_expr *e)
{
    if (e == NULL) {
        return 1;
    }
    if (e->kind == CG_E_NAME || e->kind == CG_E_INDEX) {
        return 0;
    }
    if (!cg_expr_is_const(e->a) || !cg_expr_is_const(e->b) || !cg_expr_is_const(e->c)) {
        return 0;
    }
    for (int i = 0; i < e->nargs; i++) {
        if (!cg_expr_is_const(e->args[i])) {
            return 0;
        }
    }
    return 1;
}
