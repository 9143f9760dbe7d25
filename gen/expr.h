/* expr.h - integer expressions of the schedule language, as trees.
 *
 * Grammar (C precedence, lowest first):
 *   cond   := or ( '?' cond ':' cond )?
 *   or     := and ( '||' and )*
 *   and    := bor ( '&&' bor )*
 *   bor    := bxor ( '|' bxor )*
 *   bxor   := band ( '^' band )*
 *   band   := eq ( '&' eq )*
 *   eq     := rel ( ( '==' | '!=' ) rel )*
 *   rel    := shift ( ( '<' | '<=' | '>' | '>=' ) shift )*
 *   shift  := add ( ( '<<' | '>>' ) add )*
 *   add    := mul ( ( '+' | '-' ) mul )*
 *   mul    := unary ( ( '*' | '/' | '%' ) unary )*
 *   unary  := ( '-' | '!' | '~' | '+' ) unary | primary
 *   primary:= INT | NAME | NAME '(' cond ( ',' cond )* ')' | NAME '[' cond ']'
 *            | '(' cond ')'
 *
 * Semantics: values are those of C's int, since the emitted code computes in
 * int: every node's value must fit in 32 bits (evaluation works in 64 bits
 * and reports a node that does not fit). Except 64-bit nodes ("wide", typed
 * as C types them): a literal beyond int's range, a let bound to a wide
 * value, and what C's usual conversions make wide from them (arithmetic and
 * bitwise operators with a wide operand, a shift with a wide left operand,
 * '?:' with a wide arm) compute in int64_t and must fit in 64 bits; '/',
 * '%', comparisons, logic and functions give int. A wide expression used
 * anywhere but a let (a peer, a block, a condition, a bound) must still have
 * a value that fits in int ("narrow" root). '/' is floor division, '%' is never negative
 * (a % b == a - b * floor(a / b), b > 0 required), comparisons and logic give
 * 0 or 1, '&&' '||' '?:' short-circuit. Functions: log2(x) (floor, x >= 1),
 * ceil_log2(x) (x >= 1), pof2(x) (largest power of two <= x, x >= 1),
 * pow(b, e) (e >= 0), min(a, b), max(a, b), ceil_div(a, b) (b > 0),
 * ceil_log(b, x) (smallest k with b^k >= x; b >= 2, x >= 1); bit functions:
 * to_negabinary(x) (the base -2 digits of x read as a binary number),
 * from_negabinary(n) (n >= 0, its inverse), bit_reverse(x, n) (the n low
 * bits of x reversed; 0 <= n <= 62, 0 <= x < 2^n), ctz(x) (trailing zero
 * bits, x >= 1), popcount(x) (one bits, x >= 0).
 * NAME '[' i ']' reads element i of a table (the schedule's "tables", ir.h):
 * an int; i outside the elements computed so far is an error that says the
 * index and the range ("index 5 outside skip[0..4]").
 * Errors at evaluation: division or modulo by zero or negative divisor, shift
 * count outside 0..62, log2/ceil_log2/pof2 of x < 1, pow with e < 0, overflow.
 */
#ifndef CG_EXPR_H
#define CG_EXPR_H

#include "base.h"

enum cg_expr_kind {
    CG_E_NUM,   /* integer literal: num */
    CG_E_NAME,  /* identifier: name, bound to slot by the check pass */
    CG_E_UNARY, /* op a */
    CG_E_BINARY,/* a op b */
    CG_E_COND,  /* a ? b : c */
    CG_E_CALL,  /* fn(args[0..nargs-1]) */
    CG_E_INDEX  /* name[a]: a table's element; slot: the table's length, tbase: its elements */
};

enum cg_expr_op {
    CG_OP_NONE,
    CG_OP_NEG, CG_OP_NOT, CG_OP_BNOT,                   /* unary - ! ~ */
    CG_OP_ADD, CG_OP_SUB, CG_OP_MUL, CG_OP_DIV, CG_OP_MOD,
    CG_OP_SHL, CG_OP_SHR, CG_OP_BAND, CG_OP_BOR, CG_OP_BXOR,
    CG_OP_LT, CG_OP_LE, CG_OP_GT, CG_OP_GE, CG_OP_EQ, CG_OP_NE,
    CG_OP_AND, CG_OP_OR
};

enum cg_expr_fn {
    CG_FN_LOG2, CG_FN_CEIL_LOG2, CG_FN_POF2, CG_FN_POW,
    CG_FN_MIN, CG_FN_MAX, CG_FN_CEIL_DIV, CG_FN_CEIL_LOG,
    CG_FN_TO_NEGABINARY, CG_FN_FROM_NEGABINARY, CG_FN_BIT_REVERSE, CG_FN_CTZ, CG_FN_POPCOUNT
};

struct cg_expr {
    enum cg_expr_kind kind; /* which of the fields below are used */
    enum cg_expr_op op;     /* UNARY and BINARY */
    enum cg_expr_fn fn;     /* CALL */
    int64_t num;            /* NUM */
    const char *name;       /* NAME: the identifier (arena copy) */
    int slot;               /* NAME: environment index, -1 until bound */
    struct cg_expr *a;      /* first operand (UNARY, BINARY, COND) */
    struct cg_expr *b;      /* second operand (BINARY, COND) */
    struct cg_expr *c;      /* third operand (COND) */
    struct cg_expr **args;  /* CALL arguments */
    int nargs;              /* CALL argument count */
    unsigned char wide;     /* C computes this node in int64_t (cg_expr_widen) */
    unsigned char narrow;   /* its value must fit in int all the same (a root used as int) */
    struct cg_pos pos;      /* where this node starts in the schedule file */
    int tbase;              /* INDEX: environment slot of element 0 (bound by check) */
    int tmax;               /* INDEX: the table's capacity (its "max") */
};

/* Parses text (the contents of a JSON string whose first character is at
 * `start` in `file`) into a tree allocated from `arena`. On a syntax error
 * reports "file:line:col: error: ..." through d, with the column of the
 * offending character, and returns NULL. Names stay unbound (slot -1). */
struct cg_expr *cg_expr_parse(struct cg_arena *arena, struct cg_diag *d, const char *file,
                              struct cg_pos start, const char *text);

/* Evaluation. env[slot] holds each bound name's value. Returns 0 and sets
 * *out, or returns -1 and sets *bad to the failing node and *why to a static
 * message ("division by zero", "log2 of 0", ...). A NAME with slot < 0 is an
 * error ("unbound name"). */
int cg_expr_eval(const struct cg_expr *e, const int64_t *env, int64_t *out,
                 const struct cg_expr **bad, const char **why);

/* The same evaluation compiled, for one expression in many environments at
 * once (the simulator evaluates each expression for every rank of a round):
 * the tree is walked once per call instead of once per environment. */
struct cg_expr_prog;

/* Registers of cg_expr_run, kept between calls and grown as needed. */
struct cg_expr_reg;
struct cg_expr_work {
    int64_t *val;             /* values */
    unsigned char *failed;    /* failure flags */
    size_t cap;               /* entries of each */
    struct cg_expr_reg *regs; /* the registers */
    int nregs;                /* how many */
};

/* Compiles e (bound names: slots are read at run time). Never NULL. */
struct cg_expr_prog *cg_expr_compile(const struct cg_expr *e);
void cg_expr_prog_free(struct cg_expr_prog *pr);
void cg_expr_work_free(struct cg_expr_work *w);

/* For i < n: evaluates in the environment env + idx[i] * stride. Sets
 * failed[i] to 1 where cg_expr_eval would fail (out[i] is then meaningless;
 * cg_expr_eval says why), else to 0 with out[i] the value. same (NULL: none)
 * flags the slots that hold one value in all these environments: they are
 * read once, and what is computed from them only is computed once. */
void cg_expr_run(const struct cg_expr_prog *pr, const int64_t *env, size_t stride,
                 const unsigned char *same, const int *idx, int n, int64_t *out,
                 unsigned char *failed, struct cg_expr_work *w);

/* Prints e as C into buf (always NUL-terminated, truncated at cap), with the
 * fewest parentheses that keep C's meaning. '/' and '%' print as
 * cg_div(a, b) and cg_mod(a, b) unless both operands are provably
 * non-negative constants or ...: always use the functions, for simplicity
 * and to keep floor semantics. Functions print as cg_log2(x), cg_ceil_log2,
 * cg_pof2, cg_pow, cg_min, cg_max, cg_ceil_div, cg_ceil_log. Names print as themselves.
 * Returns the length it wanted to write. */
size_t cg_expr_print_c(const struct cg_expr *e, char *buf, size_t cap);

/* Prints e back in schedule syntax (for dumps and diagnostics). */
size_t cg_expr_print(const struct cg_expr *e, char *buf, size_t cap);

/* Sets `wide` on every node of e as C types it (see the top), NAME nodes
 * wide where slot_wide[slot] is 1 (slot_wide NULL: no name is wide).
 * Returns e->wide. cg_expr_parse calls it with NULL; the check pass again
 * once the names are bound. */
int cg_expr_widen(struct cg_expr *e, const unsigned char *slot_wide);

/* Calls fn on every NAME and INDEX node (for binding names in the check
 * pass; an INDEX node's index is walked after it). */
void cg_expr_walk_names(struct cg_expr *e, void (*fn)(struct cg_expr *name, void *arg), void *arg);

/* 1 when e mentions no NAME (a constant). */
int cg_expr_is_const(const struct cg_expr *e);

#endif
