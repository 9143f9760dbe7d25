/* test_expr.c - expression parser, evaluator and printers (gen/expr.c), with
 * the diagnostics and arena they lean on (runtime/util/diag.c, arena.c).
 *
 * Run from the repository root: the compile test looks for runtime/cg.h.
 */
#define _POSIX_C_SOURCE 200809L

#include "../gen/expr.h"
#include "check.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static struct cg_arena arena; /* every tree of every test; freed in main */

/* ---- helpers ------------------------------------------------------------- */

static void bind_slot(struct cg_expr *name, void *arg)
{
    (void)arg;
    if (strcmp(name->name, "p") == 0) {
        name->slot = 0;
    } else if (strcmp(name->name, "rank") == 0) {
        name->slot = 1;
    } else if (strcmp(name->name, "r") == 0) {
        name->slot = 2;
    }
}

static char diag_text[1024]; /* what the last parse reported */
static int diag_errors;      /* how many errors it counted */

/* Parses text at s.json:line:col with names p, rank, r bound to slots 0, 1, 2. */
static struct cg_expr *parse_at(const char *text, int line, int col)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *sink = open_memstream(&buf, &len);
    struct cg_diag d;
    cg_diag_init(&d, sink);
    struct cg_pos start = {line, col};
    struct cg_expr *e = cg_expr_parse(&arena, &d, "s.json", start, text);
    fclose(sink);
    snprintf(diag_text, sizeof(diag_text), "%s", buf);
    free(buf);
    diag_errors = d.errors;
    if (e != NULL) {
        cg_expr_walk_names(e, bind_slot, NULL);
    }
    return e;
}

static struct cg_expr *parse(const char *text)
{
    return parse_at(text, 1, 1);
}

/* Evaluates text with p, rank, r; returns 0 on success. */
static int eval3(const char *text, int64_t p, int64_t rank, int64_t r, int64_t *out)
{
    struct cg_expr *e = parse(text);
    if (e == NULL) {
        return -2;
    }
    int64_t env[3] = {p, rank, r};
    const struct cg_expr *bad;
    const char *why;
    return cg_expr_eval(e, env, out, &bad, &why);
}

static int64_t value(const char *text)
{
    int64_t v = INT64_MIN + 12345;
    if (eval3(text, 5, 3, 2, &v) != 0) {
        return INT64_MIN + 54321;
    }
    return v;
}

static const char *print_c(const char *text)
{
    static char buf[1024];
    struct cg_expr *e = parse(text);
    if (e == NULL) {
        return "(parse error)";
    }
    cg_expr_print_c(e, buf, sizeof(buf));
    return buf;
}

static const char *print_src(const char *text)
{
    static char buf[1024];
    struct cg_expr *e = parse(text);
    if (e == NULL) {
        return "(parse error)";
    }
    cg_expr_print(e, buf, sizeof(buf));
    return buf;
}

static int same_tree(const struct cg_expr *a, const struct cg_expr *b)
{
    if (a == NULL || b == NULL) {
        return a == b;
    }
    if (a->kind != b->kind) {
        return 0;
    }
    switch (a->kind) {
    case CG_E_NUM:
        return a->num == b->num;
    case CG_E_NAME:
        return strcmp(a->name, b->name) == 0;
    case CG_E_UNARY:
        return a->op == b->op && same_tree(a->a, b->a);
    case CG_E_BINARY:
        return a->op == b->op && same_tree(a->a, b->a) && same_tree(a->b, b->b);
    case CG_E_COND:
        return same_tree(a->a, b->a) && same_tree(a->b, b->b) && same_tree(a->c, b->c);
    case CG_E_INDEX:
        return strcmp(a->name, b->name) == 0 && same_tree(a->a, b->a);
    case CG_E_CALL:
        if (a->fn != b->fn || a->nargs != b->nargs) {
            return 0;
        }
        for (int i = 0; i < a->nargs; i++) {
            if (!same_tree(a->args[i], b->args[i])) {
                return 0;
            }
        }
        return 1;
    }
    return 0;
}

/* ---- random trees -------------------------------------------------------- */

static uint64_t rng_state; /* xorshift64 state, seeded per test */

static uint64_t rng(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static int rng_below(int n)
{
    return (int)(rng() % (uint64_t)n);
}

static struct cg_expr *node(enum cg_expr_kind kind)
{
    struct cg_expr *e = cg_arena_alloc(&arena, sizeof(*e));
    e->kind = kind;
    e->slot = -1;
    return e;
}

static struct cg_expr *random_leaf(void)
{
    static const char *const names[] = {"p", "rank", "r"};
    if (rng_below(2) == 0) {
        int i = rng_below(3);
        struct cg_expr *e = node(CG_E_NAME);
        e->name = names[i];
        e->slot = i;
        return e;
    }
    struct cg_expr *e = node(CG_E_NUM);
    e->num = rng_below(8) == 0 ? rng_below(100) : rng_below(6);
    if (rng_below(24) == 0) {
        e->num = rng_below(2) ? 0xAAAAAAAA : 0x100000000; /* a 64-bit node */
        e->wide = 1;
    }
    return e;
}

static struct cg_expr *random_tree(int depth)
{
    static const enum cg_expr_op unary[] = {CG_OP_NEG, CG_OP_NOT, CG_OP_BNOT};
    static const int arity[] = {1, 1, 1, 2, 2, 2, 2, 2, 1, 1, 2, 1, 1};
    static const enum cg_expr_fn fns[] = {CG_FN_LOG2, CG_FN_CEIL_LOG2, CG_FN_POF2, CG_FN_POW,
                                          CG_FN_MIN, CG_FN_MAX, CG_FN_CEIL_DIV,
                                          CG_FN_TO_NEGABINARY, CG_FN_FROM_NEGABINARY,
                                          CG_FN_BIT_REVERSE, CG_FN_CTZ, CG_FN_POPCOUNT};
    if (depth == 0 || rng_below(4) == 0) {
        return random_leaf();
    }
    int pick = rng_below(20);
    struct cg_expr *e;
    if (pick < 3) {
        e = node(CG_E_UNARY);
        e->op = unary[rng_below(3)];
        e->a = random_tree(depth - 1);
    } else if (pick < 16) {
        e = node(CG_E_BINARY);
        e->op = (enum cg_expr_op)(CG_OP_ADD + rng_below(CG_OP_OR - CG_OP_ADD + 1));
        e->a = random_tree(depth - 1);
        e->b = random_tree(depth - 1);
    } else if (pick < 18) {
        e = node(CG_E_COND);
        e->a = random_tree(depth - 1);
        e->b = random_tree(depth - 1);
        e->c = random_tree(depth - 1);
    } else {
        e = node(CG_E_CALL);
        e->fn = fns[rng_below((int)(sizeof(fns) / sizeof(fns[0])))];
        e->nargs = arity[e->fn];
        e->args = cg_arena_alloc(&arena, sizeof(e->args[0]) * (size_t)e->nargs);
        for (int i = 0; i < e->nargs; i++) {
            e->args[i] = random_tree(depth - 1);
        }
    }
    cg_expr_widen(e, NULL);
    return e;
}

/* Values for p, rank, r that the property tests go through. */
static const int64_t grid[][3] = {
    {1, 0, 0}, {2, 1, 0}, {3, 2, 1}, {4, 0, 3}, {5, 3, 2}, {7, 6, -1},
    {8, 5, 4}, {16, 9, -3}, {64, 63, 7}, {100, 37, 2},
};

#define GRID_N (sizeof(grid) / sizeof(grid[0]))

/* ---- parsing and evaluation ---------------------------------------------- */

static void expr_should_compute_bit_functions_and_64_bit_masks(void)
{
    /* Negabinary: 6 = 110 (4 - 2), 3 = 11 (-2 + 1) is -1, 13 = 1101 is -3. */
    CHECK(value("to_negabinary(2)") == 6);
    CHECK(value("to_negabinary(-1)") == 3);
    CHECK(value("to_negabinary(-3)") == 13);
    CHECK(value("to_negabinary(0)") == 0);
    CHECK(value("from_negabinary(6)") == 2);
    CHECK(value("from_negabinary(13)") == -3);
    for (int x = -300; x <= 300; x++) {
        char text[64];
        snprintf(text, sizeof(text), "from_negabinary(to_negabinary(%d))", x);
        CHECKF(value(text) == x, "%s", text);
    }
    CHECK(value("bit_reverse(1, 3)") == 4);
    CHECK(value("bit_reverse(6, 3)") == 3);
    CHECK(value("bit_reverse(0, 0)") == 0);
    CHECK(value("bit_reverse(1, 31)") == 1073741824);
    CHECK(value("ctz(8)") == 3);
    CHECK(value("ctz(rank)") == 0);
    CHECK(value("popcount(0xAAAAAAAA)") == 16);
    CHECK(value("popcount(0)") == 0);
    /* 64-bit literals and what C's conversions make 64-bit from them. */
    CHECK(value("0xAAAAAAAA") == 2863311530LL);
    CHECK(value("0xAAAAAAAB & (p + 2)") == 3);
    CHECK(value("(0xAAAAAAAA << 20) >> 40") == 2730);
    CHECK(value("p < 0xAAAAAAAA") == 1);
    static const struct {
        const char *text; /* parsed */
        int wide;         /* the root is 64-bit */
    } widths[] = {
        {"0xAAAAAAAA", 1}, {"2147483647", 0}, {"-2147483648", 1}, {"p & 0xAAAAAAAA", 1},
        {"0xAAAAAAAA >> p", 1}, {"p << 0x100000000", 0}, {"p < 0xAAAAAAAA", 0},
        {"0xAAAAAAAA / 2", 0}, {"0xAAAAAAAA % p", 0}, {"min(0xAAAAAAAA, p)", 0},
        {"p ? 0xAAAAAAAA : 1", 1}, {"0xAAAAAAAA ? p : 1", 0}, {"~0xAAAAAAAA", 1},
        {"-0xAAAAAAAA", 1}, {"!0xAAAAAAAA", 0}, {"0xAAAAAAAA && p", 0},
    };
    for (size_t i = 0; i < sizeof(widths) / sizeof(widths[0]); i++) {
        struct cg_expr *e = parse(widths[i].text);
        CHECKF(e != NULL && e->wide == widths[i].wide, "%s", widths[i].text);
    }
    /* A name is as wide as the let it is bound to. */
    unsigned char slot_wide[3] = {0, 1, 0};
    struct cg_expr *e = parse("rank + 1");
    CHECK(e != NULL && cg_expr_widen(e, slot_wide) == 1 && cg_expr_widen(e, NULL) == 0);
    /* A narrowed root (a 64-bit value used as an int) must fit in int. */
    e = parse("0xAAAAAAAA + p");
    int64_t v = 0, env[3] = {5, 3, 2};
    CHECK(e != NULL && cg_expr_eval(e, env, &v, NULL, NULL) == 0 && v == 2863311535LL);
    if (e != NULL) {
        e->narrow = 1;
        const char *why = NULL;
        CHECK(cg_expr_eval(e, env, &v, NULL, &why) == -1 && why != NULL &&
              strstr(why, "does not fit in int") != NULL);
        struct cg_expr_prog *pr = cg_expr_compile(e);
        struct cg_expr_work w = {0};
        int zero = 0;
        unsigned char failed = 0;
        cg_expr_run(pr, env, 3, NULL, &zero, 1, &v, &failed, &w);
        CHECK(failed == 1);
        cg_expr_prog_free(pr);
        cg_expr_work_free(&w);
    }
    CHECK(strcmp(print_c("0xAAAAAAAB & (p - 1)"), "INT64_C(2863311531) & (p - 1)") == 0);
    CHECK(strcmp(print_c("bit_reverse(rank, 3) + to_negabinary(p)"),
                 "cg_bit_reverse(rank, 3) + cg_to_negabinary(p)") == 0);
}

static void expr_should_evaluate_every_operator(void)
{
    CHECK(value("2 + 3") == 5);
    CHECK(value("2 - 3") == -1);
    CHECK(value("6 * 7") == 42);
    CHECK(value("7 / 2") == 3);
    CHECK(value("7 % 3") == 1);
    CHECK(value("1 << 10") == 1024);
    CHECK(value("1024 >> 3") == 128);
    CHECK(value("-16 >> 2") == -4);
    CHECK(value("12 & 10") == 8);
    CHECK(value("12 | 3") == 15);
    CHECK(value("12 ^ 10") == 6);
    CHECK(value("-rank") == -3);
    CHECK(value("!0") == 1);
    CHECK(value("!7") == 0);
    CHECK(value("~5") == -6);
    CHECK(value("+p") == 5);
    CHECK(value("p") == 5 && value("rank") == 3 && value("r") == 2);
}

static void expr_should_floor_division_and_keep_modulo_non_negative(void)
{
    CHECK(value("-7 / 2") == -4);
    CHECK(value("-8 / 2") == -4);
    CHECK(value("-1 / 5") == -1);
    CHECK(value("0 / 5") == 0);
    CHECK(value("7 / 2") == 3);
    CHECK(value("-7 % 2") == 1);
    CHECK(value("-1 % 5") == 4);
    CHECK(value("-10 % 5") == 0);
    CHECK(value("(-2147483647 - 1) / 2") == INT32_MIN / 2);
    CHECK(value("(-2147483647 - 1) % 3") == 1);
    CHECK(value("(-2147483647 - 1) / 3") == -715827883);
    int64_t v = -1;
    CHECK(eval3("(rank - 1) % p", 5, 0, 0, &v) == 0 && v == 4);
    CHECK(eval3("(rank - r - 1) % p", 4, 1, 3, &v) == 0 && v == 1);
}

static void expr_should_give_0_or_1_for_comparisons_and_logic(void)
{
    CHECK(value("3 < 5") == 1 && value("5 < 3") == 0);
    CHECK(value("3 <= 3") == 1 && value("4 <= 3") == 0);
    CHECK(value("5 > 3") == 1 && value("3 > 3") == 0);
    CHECK(value("3 >= 3") == 1 && value("2 >= 3") == 0);
    CHECK(value("3 == 3") == 1 && value("3 == 4") == 0);
    CHECK(value("3 != 4") == 1 && value("3 != 3") == 0);
    CHECK(value("5 && 7") == 1 && value("5 && 0") == 0);
    CHECK(value("0 || 9") == 1 && value("0 || 0") == 0);
    CHECK(value("-2 ? 10 : 20") == 10 && value("0 ? 10 : 20") == 20);
}

static void expr_should_evaluate_every_function(void)
{
    CHECK(value("log2(1)") == 0 && value("log2(7)") == 2 && value("log2(8)") == 3);
    CHECK(value("log2(2147483647)") == 30);
    CHECK(value("ceil_log2(1)") == 0 && value("ceil_log2(5)") == 3 && value("ceil_log2(8)") == 3);
    CHECK(value("ceil_log2(1073741824)") == 30);
    CHECK(value("pof2(1)") == 1 && value("pof2(7)") == 4 && value("pof2(8)") == 8);
    CHECK(value("pof2(2147483647)") == (int64_t)1 << 30);
    CHECK(value("pow(3, 4)") == 81 && value("pow(-2, 3)") == -8 && value("pow(5, 0)") == 1);
    CHECK(value("pow(0, 0)") == 1 && value("pow(0, 5)") == 0);
    CHECK(value("pow(-2, 31)") == INT32_MIN);
    CHECK(value("pow(2, 30)") == (int64_t)1 << 30);
    CHECK(value("pow(1, 1000000000) ") == 1 && value("pow(-1, 1000000001)") == -1);
    CHECK(value("min(3, -4)") == -4 && value("max(3, -4)") == 3);
    CHECK(value("ceil_div(7, 2)") == 4 && value("ceil_div(-7, 2)") == -3);
    CHECK(value("ceil_div(6, 3)") == 2 && value("ceil_div(0, 3)") == 0);
    CHECK(value("ceil_div(2147483647, 2)") == (int64_t)1 << 30);
}

static void expr_should_follow_c_precedence_and_associativity(void)
{
    CHECK(value("1 + 2 * 3") == 7);
    CHECK(value("10 - 3 - 2") == 5);
    CHECK(value("2 - 3 + 4") == 3);
    CHECK(value("100 / 10 / 5") == 2);
    CHECK(value("2 * 3 % 4") == 2);
    CHECK(value("1 << 2 + 1") == 8);
    CHECK(value("64 >> 2 >> 1") == 8);
    CHECK(value("1 | 2 ^ 3 & 4") == 3);
    CHECK(value("1 < 2 == 1") == 1);
    CHECK(value("3 > 2 > 1") == 0);
    CHECK(value("6 & 3 == 3") == 0);
    CHECK(value("1 || 0 && 0") == 1);
    CHECK(value("0 ? 1 : 0 ? 2 : 3") == 3);
    CHECK(value("1 ? 0 ? 4 : 5 : 6") == 5);
    CHECK(value("-2 * -3") == 6);
    CHECK(value("!0 + 1") == 2);
    CHECK(value("~0 & 5") == 5);
    CHECK(value("- -5") == 5 && value("--5") == 5);
    CHECK(value("(1 + 2) * 3") == 9);
    struct cg_expr *e = parse("a - b - c");
    CHECK(e != NULL && e->op == CG_OP_SUB && e->a->op == CG_OP_SUB && e->b->kind == CG_E_NAME);
    e = parse("a ? b : c ? d : f");
    CHECK(e != NULL && e->kind == CG_E_COND && e->c->kind == CG_E_COND);
}

static void expr_should_short_circuit_logic_and_conditionals(void)
{
    int64_t v = -1;
    CHECK(eval3("p > 1 && 1 % (p - 1) == 0", 1, 0, 0, &v) == 0 && v == 0);
    CHECK(eval3("p > 1 && 1 % (p - 1) == 0", 2, 0, 0, &v) == 0 && v == 1);
    CHECK(eval3("p == 1 || 1 / (p - 1) > 0", 1, 0, 0, &v) == 0 && v == 1);
    CHECK(eval3("p == 1 ? 0 : 10 / (p - 1)", 1, 0, 0, &v) == 0 && v == 0);
    CHECK(eval3("p != 1 ? 10 / (p - 1) : log2(p)", 1, 0, 0, &v) == 0 && v == 0);
    CHECK(eval3("0 && log2(0)", 1, 0, 0, &v) == 0 && v == 0);
    CHECK(eval3("1 || 1 << 99", 1, 0, 0, &v) == 0 && v == 1);
    CHECK(eval3("1 && log2(0)", 1, 0, 0, &v) == -1);
}

static void expr_should_report_every_evaluation_error_at_the_failing_node(void)
{
    static const struct {
        const char *text; /* evaluated at line 7, column 20, p=5 rank=3 r=2 */
        const char *why;  /* expected message */
        int col;          /* expected column of the failing node */
    } cases[] = {
        {"rank / (p - p)", "division by zero", 20},
        {"1 + rank % 0", "modulo by zero", 24},
        {"7 / -1", "division by a negative number", 20},
        {"7 % (r - 3)", "modulo by a negative number", 20},
        {"1 << 63", "shift count outside 0..62", 20},
        {"1 << -1", "shift count outside 0..62", 20},
        {"p >> 63", "shift count outside 0..62", 20},
        {"log2(0)", "log2 of 0", 20},
        {"log2(-1)", "log2 of a negative number", 20},
        {"ceil_log2(p - 5)", "ceil_log2 of 0", 20},
        {"ceil_log2(-p)", "ceil_log2 of a negative number", 20},
        {"pof2(0)", "pof2 of 0", 20},
        {"pof2(-8)", "pof2 of a negative number", 20},
        {"2 * pow(2, -1)", "pow with a negative exponent", 24},
        {"pow(3, 40)", "overflow", 20},
        {"pow(2, 63)", "overflow", 20},
        {"ceil_div(1, 0)", "ceil_div by zero", 20},
        {"ceil_div(1, -1)", "ceil_div by a negative number", 20},
        {"9223372036854775807 + 1", "overflow", 20},
        {"9223372036854775807 / 1", "value does not fit in int (the generated code computes in int)", 20},
        {"4611686018427387904 * 2", "overflow", 20},
        {"0xAAAAAAAA + (2147483647 + 1)", "value does not fit in int (the generated code computes in int)", 34},
        {"min(0xAAAAAAAA, 0xAAAAAAAB)", "value does not fit in int (the generated code computes in int)", 20},
        {"1 << 31", "value does not fit in int (the generated code computes in int)", 20},
        {"to_negabinary(-1073741824)", "value does not fit in int (the generated code computes in int)", 20},
        {"from_negabinary(-1)", "from_negabinary of a negative number", 20},
        {"bit_reverse(8, 3)", "bit_reverse of a value outside 0..2^n-1", 20},
        {"bit_reverse(-1, 3)", "bit_reverse of a value outside 0..2^n-1", 20},
        {"bit_reverse(1, 63)", "bit_reverse of a bit count outside 0..62", 20},
        {"bit_reverse(1, -1)", "bit_reverse of a bit count outside 0..62", 20},
        {"bit_reverse(1, 32)", "value does not fit in int (the generated code computes in int)", 20},
        {"ctz(0)", "ctz of 0", 20},
        {"ctz(-4)", "ctz of a negative number", 20},
        {"popcount(-1)", "popcount of a negative number", 20},
        {"2147483647 + 1", "value does not fit in int (the generated code computes in int)", 20},
        {"-2147483647 - 2", "value does not fit in int (the generated code computes in int)", 20},
        {"1073741824 * 2", "value does not fit in int (the generated code computes in int)", 20},
        {"1 + -(-2147483647 - 1)", "value does not fit in int (the generated code computes in int)", 24},
        {"3 << 62", "overflow", 20},
        {"-5 << 61", "overflow", 20},
        {"x + 1", "unbound name", 20},
        {"min(1, 2 / 0)", "division by zero", 27},
        {"p ? (r ? log2(0) : 1) : 2", "log2 of 0", 29},
    };
    int64_t env[3] = {5, 3, 2};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct cg_expr *e = parse_at(cases[i].text, 7, 20);
        int64_t v = 0;
        const struct cg_expr *bad = NULL;
        const char *why = NULL;
        CHECKF(e != NULL, "%s", cases[i].text);
        if (e == NULL) {
            continue;
        }
        CHECKF(cg_expr_eval(e, env, &v, &bad, &why) == -1, "%s", cases[i].text);
        CHECKF(why != NULL && strcmp(why, cases[i].why) == 0, "%s: got '%s'", cases[i].text,
               why ? why : "(null)");
        CHECKF(bad != NULL && bad->pos.line == 7 && bad->pos.col == cases[i].col,
               "%s: failing node at %d:%d", cases[i].text, bad ? bad->pos.line : 0,
               bad ? bad->pos.col : 0);
    }
    int64_t v = 0;
    CHECK(cg_expr_eval(parse("-4 << 29"), env, &v, NULL, NULL) == 0 && v == INT32_MIN);
    CHECK(cg_expr_eval(parse("2147483647 + -2147483647 - 1"), env, &v, NULL,
                       NULL) == 0
          && v == -1);
}

static void expr_should_report_syntax_errors_with_exact_text(void)
{
    static const struct {
        const char *text; /* parsed at s.json line 4, column 10 */
        const char *diag; /* the exact diagnostic */
    } cases[] = {
        {"", "s.json:4:10: error: expected an expression, found end of text\n"},
        {"   ", "s.json:4:13: error: expected an expression, found end of text\n"},
        {"1 +", "s.json:4:13: error: expected an expression, found end of text\n"},
        {"1 +\t", "s.json:4:14: error: expected an expression, found end of text\n"},
        {"(1 + 2", "s.json:4:16: error: expected ')' to close '(' at column 10\n"},
        {"p * (1 + 2 3", "s.json:4:21: error: expected ')' to close '(' at column 14\n"},
        {"1 + )", "s.json:4:14: error: expected an expression, found ')'\n"},
        {"* 2", "s.json:4:10: error: expected an expression, found '*'\n"},
        {"1 2", "s.json:4:12: error: unexpected '2' after expression\n"},
        {"p rank", "s.json:4:12: error: unexpected 'rank' after expression\n"},
        {"p)", "s.json:4:11: error: unexpected ')' after expression\n"},
        {"p : 1", "s.json:4:12: error: unexpected ':' after expression\n"},
        {"foo(1)", "s.json:4:10: error: unknown function 'foo'\n"},
        {"1 + min(1, 2, 3)", "s.json:4:14: error: 'min' takes 2 arguments, got 3\n"},
        {"log2(1, 2)", "s.json:4:10: error: 'log2' takes 1 argument, got 2\n"},
        {"pow()", "s.json:4:10: error: 'pow' takes 2 arguments, got 0\n"},
        {"ceil_div(p)", "s.json:4:10: error: 'ceil_div' takes 2 arguments, got 1\n"},
        {"min(1 2)",
         "s.json:4:16: error: expected ',' or ')' in call to 'min' at column 13, found '2'\n"},
        {"max(1, 2", "s.json:4:18: error: expected ',' or ')' in call to 'max' at column 13, "
                     "found end of text\n"},
        {"min(1,", "s.json:4:16: error: expected an expression, found end of text\n"},
        {"p ? 1", "s.json:4:15: error: expected ':' to match '?' at column 12\n"},
        {"p ? 1 : ", "s.json:4:18: error: expected an expression, found end of text\n"},
        {"0x", "s.json:4:12: error: expected hex digits after '0x', found end of text\n"},
        {"0xg", "s.json:4:12: error: expected hex digits after '0x', found 'g'\n"},
        {"12ab", "s.json:4:12: error: invalid character 'a' in integer literal\n"},
        {"0x1fg", "s.json:4:14: error: invalid character 'g' in integer literal\n"},
        {"9223372036854775808", "s.json:4:10: error: integer literal too large\n"},
        {"-9223372036854775808", "s.json:4:11: error: integer literal too large\n"},
        {"0x8000000000000000", "s.json:4:10: error: integer literal too large\n"},
        {"a = b", "s.json:4:12: error: unexpected '=' (did you mean '=='?)\n"},
        {"a @ b", "s.json:4:12: error: unexpected character '@'\n"},
        {"a\n", "s.json:4:11: error: unexpected character '\\x0a'\n"},
        {"a && && b", "s.json:4:15: error: expected an expression, found '&&'\n"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct cg_expr *e = parse_at(cases[i].text, 4, 10);
        CHECKF(e == NULL, "'%s' parsed", cases[i].text);
        CHECKF(diag_errors == 1, "'%s': %d errors", cases[i].text, diag_errors);
        CHECKF(strcmp(diag_text, cases[i].diag) == 0, "'%s': got \"%s\"", cases[i].text,
               diag_text);
    }
}

static void expr_should_reject_nesting_deeper_than_its_limit(void)
{
    char deep[1024];
    memset(deep, '(', 400);
    strcpy(deep + 400, "1");
    CHECK(parse_at(deep, 2, 1) == NULL);
    CHECK(diag_errors == 1);
    CHECK(strcmp(diag_text, "s.json:2:201: error: expression nested too deeply\n") == 0);
    memset(deep, '-', 400);
    CHECK(parse_at(deep, 2, 1) == NULL);
    CHECK(strcmp(diag_text, "s.json:2:200: error: expression nested too deeply\n") == 0);
    memset(deep, '(', 150);
    deep[150] = '7';
    memset(deep + 151, ')', 150);
    deep[301] = '\0';
    int64_t v = 0;
    CHECK(eval3(deep, 1, 0, 0, &v) == 0 && v == 7);
}

static void expr_should_accept_hex_literals_and_skip_blanks(void)
{
    CHECK(value("0x1F") == 31);
    CHECK(value("0XfF") == 255);
    CHECK(value("0x7fffffff") == INT32_MAX);
    CHECK(value("2147483647") == INT32_MAX);
    CHECK(value("007") == 7);
    CHECK(value("\t p\t+  1 ") == 6);
    CHECK(value("min ( p , 2 )") == 2);
}

static void expr_should_place_every_node_at_its_first_character(void)
{
    struct cg_expr *e = parse_at("(rank + 1) % p", 4, 10);
    CHECK(e != NULL);
    if (e == NULL) {
        return;
    }
    CHECK(e->kind == CG_E_BINARY && e->op == CG_OP_MOD && e->pos.line == 4 && e->pos.col == 10);
    CHECK(e->a->op == CG_OP_ADD && e->a->pos.col == 11);
    CHECK(e->a->a->kind == CG_E_NAME && e->a->a->pos.col == 11);
    CHECK(e->a->b->kind == CG_E_NUM && e->a->b->num == 1 && e->a->b->pos.col == 18);
    CHECK(e->b->kind == CG_E_NAME && e->b->pos.col == 23 && e->b->pos.line == 4);
    e = parse_at("  -x", 4, 10);
    CHECK(e != NULL && e->kind == CG_E_UNARY && e->pos.col == 12 && e->a->pos.col == 13);
    e = parse_at("min(p, 2)", 4, 10);
    CHECK(e != NULL && e->kind == CG_E_CALL && e->fn == CG_FN_MIN && e->nargs == 2);
    CHECK(e != NULL && e->pos.col == 10 && e->args[0]->pos.col == 14 && e->args[1]->pos.col == 17);
    e = parse_at("p ? 1 : 2", 4, 10);
    CHECK(e != NULL && e->kind == CG_E_COND && e->pos.col == 10);
    CHECK(e != NULL && e->b->pos.col == 14 && e->c->pos.col == 18);
    e = parse_at("+p", 4, 10);
    CHECK(e != NULL && e->kind == CG_E_NAME && e->pos.col == 11);
    e = parse_at("\tab_1 + 2", 9, 1);
    CHECK(e != NULL && e->pos.line == 9 && e->pos.col == 2 && e->b->pos.col == 9);
    CHECK(e != NULL && strcmp(e->a->name, "ab_1") == 0 && e->a->slot == -1);
}

static void count_name(struct cg_expr *name, void *arg)
{
    char *seen = arg;
    strcat(seen, name->name);
    strcat(seen, " ");
}

static void expr_should_walk_names_and_tell_constants(void)
{
    struct cg_expr *e = parse("min(p, rank) + (r ? x : -y) * 2");
    char seen[64] = "";
    CHECK(e != NULL);
    if (e == NULL) {
        return;
    }
    cg_expr_walk_names(e, count_name, seen);
    CHECK(strcmp(seen, "p rank r x y ") == 0);
    CHECK(!cg_expr_is_const(e));
    CHECK(cg_expr_is_const(parse("1 + pow(2, 3) ? 4 : -5")));
    CHECK(!cg_expr_is_const(parse("1 + pow(2, p)")));
}

/* ---- printing ------------------------------------------------------------ */

static void expr_should_print_c_with_the_fewest_parentheses(void)
{
    static const struct {
        const char *text; /* schedule syntax */
        const char *c;    /* expected C */
    } cases[] = {
        {"(rank + 1) % p", "cg_mod(rank + 1, p)"},
        {"(v + d + root) % p", "cg_mod(v + d + root, p)"},
        {"v % (2 * d) == d", "cg_mod(v, 2 * d) == d"},
        {"a / b / c", "cg_div(cg_div(a, b), c)"},
        {"(a / b) * c", "cg_div(a, b) * c"},
        {"-a % b", "cg_mod(-a, b)"},
        {"a - (b - c)", "a - (b - c)"},
        {"(a - b) - c", "a - b - c"},
        {"a * (b * c)", "a * (b * c)"},
        {"(a + b) * c", "(a + b) * c"},
        {"a + b * c", "a + b * c"},
        {"-3", "-3"},
        {"- -5", "- -5"},
        {"-(-5)", "- -5"},
        {"a - -1", "a - -1"},
        {"-(a + b)", "-(a + b)"},
        {"~~a + !!b - -~c", "~~a + !!b - -~c"},
        {"(a & b) == c", "(a & b) == c"},
        {"a & b == c", "a & (b == c)"},
        {"a || b && c", "a || (b && c)"},
        {"a && b || c", "(a && b) || c"},
        {"a && (b || c)", "a && (b || c)"},
        {"a << b + c", "a << (b + c)"},
        {"a + b << c", "(a + b) << c"},
        {"v ^ (1 << k)", "v ^ 1 << k"},
        {"a | b ^ c", "a | (b ^ c)"},
        {"a ^ b & c", "a ^ (b & c)"},
        {"a & b + c", "a & (b + c)"},
        {"a | b | c", "a | b | c"},
        {"a < b < c", "(a < b) < c"},
        {"a == b == c", "(a == b) == c"},
        {"a < b == c", "(a < b) == c"},
        {"!a == b", "(!a) == b"},
        {"!a == 0", "!a == 0"},
        {"!a & b", "(!a) & b"},
        {"!a & (b < c)", "!a & (b < c)"},
        {"c ? 1 : d ? 2 : 3", "c ? 1 : d ? 2 : 3"},
        {"(c ? 1 : d) ? 2 : 3", "(c ? 1 : d) ? 2 : 3"},
        {"a + (c ? 1 : 2)", "a + (c ? 1 : 2)"},
        {"rank < 2 * rem ? (rank % 2 == 0 ? -1 : rank / 2) : rank - rem",
         "rank < 2 * rem ? (cg_mod(rank, 2) == 0 ? -1 : cg_div(rank, 2)) : rank - rem"},
        {"min(a, b) + max(a, 1) * pow(2, k)", "cg_min(a, b) + cg_max(a, 1) * cg_pow(2, k)"},
        {"log2(p) + ceil_log2(p) - pof2(p) + ceil_div(p, 2)",
         "cg_log2(p) + cg_ceil_log2(p) - cg_pof2(p) + cg_ceil_div(p, 2)"},
        {"a * b && c", "a * b != 0 && c"},
        {"-(a * b) || c", "-(a * b) != 0 || c"},
        {"!(a << b)", "a << b == 0"},
        {"(a << b) ? 1 : 2", "a << b != 0 ? 1 : 2"},
        {"(c ? 2 : 3) || a", "(c ? 2 : 3) != 0 || a"},
        {"(c ? 0 : 1) || a", "(c ? 0 : 1) || a"},
        {"~(a < b)", "-1 - (a < b)"},
        {"-1 << k", "-(1 << k)"},
        {"a * b", "a * b"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const char *got = print_c(cases[i].text);
        CHECKF(strcmp(got, cases[i].c) == 0, "'%s' printed as '%s'", cases[i].text, got);
    }
}

static void expr_should_print_schedule_syntax_back(void)
{
    static const struct {
        const char *text; /* as written */
        const char *src;  /* as printed */
    } cases[] = {
        {"(rank+1)%p", "(rank + 1) % p"},
        {"a / b / c", "a / b / c"},
        {"a / (b / c)", "a / (b / c)"},
        {"(a % b) * c", "a % b * c"},
        {"-(a / b)", "-(a / b)"},
        {"!(a * b)", "!(a * b)"},
        {"~(a < b)", "~(a < b)"},
        {"-1 << k", "-1 << k"},
        {"min(a,b)+ceil_div( a ,2)", "min(a, b) + ceil_div(a, 2)"},
        {"((((a))))", "a"},
        {"a || b && c", "a || (b && c)"},
        {"--a", "- -a"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const char *got = print_src(cases[i].text);
        CHECKF(strcmp(got, cases[i].src) == 0, "'%s' printed as '%s'", cases[i].text, got);
    }
}

static void expr_should_print_numbers_that_no_parser_makes(void)
{
    char buf[64];
    struct cg_expr n = {.kind = CG_E_NUM, .num = -5, .slot = -1};
    struct cg_expr neg = {.kind = CG_E_UNARY, .op = CG_OP_NEG, .a = &n, .slot = -1};
    cg_expr_print_c(&neg, buf, sizeof(buf));
    CHECK(strcmp(buf, "- -5") == 0);
    struct cg_expr sub = {.kind = CG_E_BINARY, .op = CG_OP_SUB, .a = &n, .b = &n, .slot = -1};
    cg_expr_print_c(&sub, buf, sizeof(buf));
    CHECK(strcmp(buf, "-5 - -5") == 0);
    struct cg_expr shl = {.kind = CG_E_BINARY, .op = CG_OP_SHL, .a = &n, .b = &n, .slot = -1};
    cg_expr_print_c(&shl, buf, sizeof(buf));
    CHECK(strcmp(buf, "-(5 << -5)") == 0);
    n.num = INT64_MIN;
    cg_expr_print_c(&neg, buf, sizeof(buf));
    CHECK(strcmp(buf, "-(-9223372036854775807 - 1)") == 0);
    cg_expr_print(&n, buf, sizeof(buf));
    CHECK(strcmp(buf, "(-9223372036854775807 - 1)") == 0);
}

static void expr_should_truncate_printing_and_return_the_full_length(void)
{
    struct cg_expr *e = parse("(rank + 1) % p");
    char buf[8];
    memset(buf, 'x', sizeof(buf));
    CHECK(cg_expr_print_c(e, buf, sizeof(buf)) == strlen("cg_mod(rank + 1, p)"));
    CHECK(strcmp(buf, "cg_mod(") == 0);
    CHECK(cg_expr_print(e, buf, 1) == strlen("(rank + 1) % p") && buf[0] == '\0');
    CHECK(cg_expr_print(e, NULL, 0) == strlen("(rank + 1) % p"));
}

static void expr_should_reparse_printed_random_trees_to_the_same_tree_and_values(void)
{
    char text[8192], ctext[8192];
    int evaluated = 0, tried = 0;
    rng_state = 0x2545f4914f6cdd1dULL;
    while (evaluated < 2500 && tried < 100000) {
        tried++;
        struct cg_expr *e = random_tree(5);
        CHECK(cg_expr_print(e, text, sizeof(text)) < sizeof(text));
        CHECK(cg_expr_print_c(e, ctext, sizeof(ctext)) < sizeof(ctext));
        CHECKF(strstr(ctext, "--") == NULL && strstr(ctext, "++") == NULL, "%s", ctext);
        struct cg_expr *back = parse(text);
        CHECKF(back != NULL && same_tree(e, back), "'%s' reparsed differently", text);
        if (back == NULL) {
            continue;
        }
        int all_ok = 1;
        for (size_t g = 0; g < GRID_N; g++) {
            int64_t v1 = 0, v2 = 0;
            const char *why1 = NULL, *why2 = NULL;
            const struct cg_expr *bad;
            int rc1 = cg_expr_eval(e, grid[g], &v1, &bad, &why1);
            int rc2 = cg_expr_eval(back, grid[g], &v2, &bad, &why2);
            if (rc1 != 0) {
                all_ok = 0;
                CHECKF(rc2 != 0 && strcmp(why1, why2) == 0, "%s", text);
                continue;
            }
            CHECKF(rc2 == 0 && v1 == v2, "%s at p=%" PRId64 ": %" PRId64 " != %" PRId64, text,
                   grid[g][0], v1, v2);
        }
        evaluated += all_ok;
        if (check_failed_now > 20) {
            return;
        }
    }
    CHECKF(evaluated >= 2500, "only %d of %d trees evaluated", evaluated, tried);
}

/* Compiled programs run many environments at once and must agree with the
 * tree evaluator in every one: the same value, or a failure exactly where it
 * fails (the simulator asks the tree evaluator why). */
/* Tables: name[i] reads env[tbase + i] where i < env[slot] (the length so
 * far); the tree evaluator and the compiled program agree element by
 * element, and an index outside says which and the range. */
static struct cg_expr *parse_index_case(void)
{
    struct cg_expr *e = parse("t[2]");
    e->slot = 3;
    e->tbase = 10;
    e->tmax = 4;
    return e;
}

static void expr_should_index_tables_and_report_indices_outside(void)
{
    struct cg_expr *e = parse("t[r * 2 - 1] + t[0]");
    CHECK(e != NULL && e->kind == CG_E_BINARY && e->a->kind == CG_E_INDEX);
    CHECK(strcmp(print_src("t[r * 2 - 1] + t[0]"), "t[r * 2 - 1] + t[0]") == 0);
    CHECK(strcmp(print_c("t[r % 2]"), "t[cg_mod(r, 2)]") == 0);
    CHECK(!cg_expr_is_const(parse("t[0]")));
    if (e == NULL) {
        return;
    }
    /* Bind t by hand as check.c does: length in slot 3, elements from 10. */
    struct cg_expr *ix[2] = {e->a, e->b};
    for (int k = 0; k < 2; k++) {
        ix[k]->slot = 3;
        ix[k]->tbase = 10;
        ix[k]->tmax = 4;
    }
    /* Four environments (stride 16): r = 0..3, t = {5, 6, 7, 8}, length 4. */
    int64_t env[4 * 16] = {0};
    for (int l = 0; l < 4; l++) {
        env[l * 16 + 2] = l;
        env[l * 16 + 3] = 4;
        for (int i = 0; i < 4; i++) {
            env[l * 16 + 10 + i] = 5 + i;
        }
    }
    const struct cg_expr *bad = NULL;
    const char *why = NULL;
    int64_t v = 0;
    CHECK(cg_expr_eval(e, env + 1 * 16, &v, &bad, &why) == 0 && v == 6 + 5);
    CHECK(cg_expr_eval(e, env + 2 * 16, &v, &bad, &why) == 0 && v == 8 + 5);
    /* r = 0: index -1; r = 3: index 5, beyond the length (and the max). */
    CHECK(cg_expr_eval(e, env + 0 * 16, &v, &bad, &why) != 0 && bad == e->a &&
          strcmp(why, "index -1 outside t[0..3]") == 0);
    CHECK(cg_expr_eval(e, env + 3 * 16, &v, &bad, &why) != 0 &&
          strcmp(why, "index 5 outside t[0..3]") == 0);
    env[3 * 16 + 3] = 2; /* two computed so far: t[1] is there, t[2] not */
    CHECK(cg_expr_eval(parse_index_case(), env + 3 * 16, &v, &bad, &why) != 0 &&
          strcmp(why, "index 2 outside t[0..1]") == 0);
    env[3 * 16 + 3] = 4;
    env[1 * 16 + 3] = 0; /* nothing computed yet */
    CHECK(cg_expr_eval(e, env + 1 * 16, &v, &bad, &why) != 0 &&
          strcmp(why, "index 1 of t, which has no element (yet)") == 0);
    struct cg_expr_prog *pr = cg_expr_compile(e);
    struct cg_expr_work w = {0};
    int idx[4] = {3, 2, 1, 0};
    int64_t out[4];
    unsigned char failed[4];
    cg_expr_run(pr, env, 16, NULL, idx, 4, out, failed, &w);
    CHECK(failed[0] && !failed[1] && out[1] == 13 && failed[2] && failed[3]);
    cg_expr_prog_free(pr);
    cg_expr_work_free(&w);
}

static void expr_should_compile_to_programs_that_agree_with_the_tree_evaluator(void)
{
    struct cg_expr_work w = {0};
    int idx[GRID_N + 1];
    int64_t out[GRID_N + 1];
    unsigned char failed[GRID_N + 1];
    /* Backwards and with a repeat: lanes are environments in any order. */
    for (size_t g = 0; g < GRID_N; g++) {
        idx[g] = (int)(GRID_N - 1 - g);
    }
    idx[GRID_N] = 3;
    int64_t table[GRID_N][3];
    int lanes = (int)GRID_N + 1, failures = 0;
    /* Slots flagged the same in every lane: none; p (set to 8 in every
     * lane); all three (every lane the same environment). */
    static const unsigned char same[3][3] = {{0, 0, 0}, {1, 0, 0}, {1, 1, 1}};
    rng_state = 0x9e3779b97f4a7c15ULL;
    for (int t = 0; t < 15000 && check_failed_now <= 20; t++) {
        struct cg_expr *e = random_tree(5);
        struct cg_expr_prog *pr = cg_expr_compile(e);
        int u = t % 3;
        for (size_t g = 0; g < GRID_N; g++) {
            for (int slot = 0; slot < 3; slot++) {
                table[g][slot] = same[u][slot] ? grid[4][slot] : grid[g][slot];
            }
        }
        cg_expr_run(pr, &table[0][0], 3, u ? same[u] : NULL, idx, lanes, out, failed, &w);
        for (int i = 0; i < lanes; i++) {
            int64_t v = 0;
            const int64_t *env = table[idx[i]];
            int rc = cg_expr_eval(e, env, &v, NULL, NULL);
            char text[4096];
            cg_expr_print(e, text, sizeof(text));
            CHECKF(failed[i] == (rc != 0),
                   "'%s' at p=%" PRId64 " rank=%" PRId64 " r=%" PRId64 ": failed %d, tree "
                   "evaluator %d", text, env[0], env[1], env[2], failed[i], rc);
            CHECKF(rc != 0 || out[i] == v, "'%s' at p=%" PRId64 " rank=%" PRId64 " r=%" PRId64
                   ": %" PRId64 " != %" PRId64, text, env[0], env[1], env[2], out[i], v);
            failures += rc != 0;
        }
        cg_expr_prog_free(pr);
    }
    CHECKF(failures > 3000, "only %d failing evaluations exercised", failures);

    /* Every failure of the tree evaluator's table, and names outside int. */
    static const char *const failing[] = {
        "rank / (p - p)", "1 + rank % 0", "1 << 63", "p >> 63", "log2(r - 2)", "pof2(-8)",
        "2 * pow(2, -1)", "pow(3, 40)", "ceil_div(1, 0)", "ceil_log(1, p)", "ceil_log(2, r - 2)",
        "2147483647 + 1", "1 + -(-2147483647 - 1)", "3 << 62", "x + 1", "min(1, 2 / 0)",
        "p ? (r ? log2(0) : 1) : 2", "1 && rank / 0", "0 || rank / 0", "9999999999 / 1",
        "ctz(rank - 3)", "popcount(-p)", "bit_reverse(p, 2)", "from_negabinary(-r)",
        "0xAAAAAAAA * 0xAAAAAAAA * 2", "max(0xAAAAAAAA, p)", "1 << 31 + p - p",
    };
    int64_t env[3] = {5, 3, 2};
    int zero = 0;
    for (size_t i = 0; i < sizeof(failing) / sizeof(failing[0]); i++) {
        struct cg_expr_prog *pr = cg_expr_compile(parse(failing[i]));
        cg_expr_run(pr, env, 3, NULL, &zero, 1, out, failed, &w);
        CHECKF(failed[0] == 1, "'%s' did not fail", failing[i]);
        cg_expr_prog_free(pr);
    }
    int64_t huge[3] = {(int64_t)1 << 40, 0, 0};
    struct cg_expr_prog *pr = cg_expr_compile(parse("0 * p"));
    cg_expr_run(pr, huge, 3, NULL, &zero, 1, out, failed, &w);
    CHECK(failed[0] == 1);
    cg_expr_prog_free(pr);
    pr = cg_expr_compile(parse("0 && rank / 0 || (1 ? r : rank / 0)"));
    cg_expr_run(pr, env, 3, NULL, &zero, 1, out, failed, &w);
    CHECK(failed[0] == 0 && out[0] == 1);
    cg_expr_prog_free(pr);
    cg_expr_work_free(&w);
}

/* ---- the printed C, compiled --------------------------------------------- */

/* Every node the evaluation reaches stays well inside int (emitted code
 * computes in int), shift counts stay below 31 and pow loops stay short. */
static int int_safe(const struct cg_expr *e, const int64_t *env)
{
    const int64_t lim = e->wide ? (int64_t)1 << 62 : (int64_t)1 << 30;
    int64_t v, a;
    if (cg_expr_eval(e, env, &v, NULL, NULL) != 0 || v < -lim || v > lim) {
        return 0;
    }
    switch (e->kind) {
    case CG_E_UNARY:
        return int_safe(e->a, env);
    case CG_E_BINARY:
        if (!int_safe(e->a, env)) {
            return 0;
        }
        cg_expr_eval(e->a, env, &a, NULL, NULL);
        if ((e->op == CG_OP_AND && a == 0) || (e->op == CG_OP_OR && a != 0)) {
            return 1;
        }
        if (!int_safe(e->b, env)) {
            return 0;
        }
        cg_expr_eval(e->b, env, &v, NULL, NULL);
        return (e->op != CG_OP_SHL && e->op != CG_OP_SHR) || v <= 30;
    case CG_E_COND:
        if (!int_safe(e->a, env)) {
            return 0;
        }
        cg_expr_eval(e->a, env, &a, NULL, NULL);
        return int_safe(a != 0 ? e->b : e->c, env);
    case CG_E_CALL:
        for (int i = 0; i < e->nargs; i++) {
            if (!int_safe(e->args[i], env)) {
                return 0;
            }
        }
        if (e->fn == CG_FN_POW) {
            cg_expr_eval(e->args[1], env, &v, NULL, NULL);
            return v <= 40;
        }
        return 1;
    default:
        return 1;
    }
}

/* What gcc warns about that parenthesisation cannot fix, so that a random
 * tree with it is left out: comparisons of a truth value with a constant
 * (-Wbool-compare), operators with two equal operands or '==' of a constant
 * with a masked value (-Wtautological-compare), constant subexpressions
 * outside int or with a shift count outside 0..30 (-Woverflow,
 * -Wshift-count-overflow), and '&&', '||', '?:' with a constant operand or
 * condition or a constant truth value, which gcc folds into constants that
 * can warn anew. */
static int gcc_would_warn(const struct cg_expr *e)
{
    int64_t v;
    if (e == NULL) {
        return 0;
    }
    if (cg_expr_is_const(e)) {
        const int64_t lim = (int64_t)1 << 30;
        if (cg_expr_eval(e, NULL, &v, NULL, NULL) != 0 || v < -lim || v > lim) {
            return 1;
        }
        if (e->kind == CG_E_BINARY && e->op >= CG_OP_LT) {
            return 1;
        }
    }
    if (e->kind == CG_E_BINARY) {
        int64_t k;
        if (same_tree(e->a, e->b)) {
            return 1;
        }
        if ((e->op == CG_OP_SHL || e->op == CG_OP_SHR) && cg_expr_is_const(e->b)
            && (cg_expr_eval(e->b, NULL, &k, NULL, NULL) != 0 || k < 0 || k > 30)) {
            return 1;
        }
        if (e->op >= CG_OP_LT && e->op <= CG_OP_NE) {
            for (int side = 0; side < 2; side++) {
                const struct cg_expr *t = side ? e->b : e->a, *k2 = side ? e->a : e->b;
                int truth = (t->kind == CG_E_BINARY && t->op >= CG_OP_LT)
                            || (t->kind == CG_E_UNARY && t->op == CG_OP_NOT);
                if (truth && cg_expr_is_const(k2)) {
                    return 1;
                }
            }
        }
        if ((e->op == CG_OP_AND || e->op == CG_OP_OR)
            && (cg_expr_is_const(e->a) || cg_expr_is_const(e->b))) {
            return 1;
        }
        if ((e->op == CG_OP_EQ || e->op == CG_OP_NE)
            && (cg_expr_is_const(e->a) || cg_expr_is_const(e->b))) {
            const struct cg_expr *t = cg_expr_is_const(e->a) ? e->b : e->a;
            if (t->kind == CG_E_BINARY && (t->op == CG_OP_BAND || t->op == CG_OP_BOR)
                && (cg_expr_is_const(t->a) || cg_expr_is_const(t->b))) {
                return 1;
            }
        }
    }
    if (e->kind == CG_E_COND && cg_expr_is_const(e->a)) {
        return 1;
    }
    if (gcc_would_warn(e->a) || gcc_would_warn(e->b) || gcc_would_warn(e->c)) {
        return 1;
    }
    for (int i = 0; i < e->nargs; i++) {
        if (gcc_would_warn(e->args[i])) {
            return 1;
        }
    }
    return 0;
}

static int run_quiet(const char *cmd, const char *log)
{
    char full[2048];
    snprintf(full, sizeof(full), "%s > %s 2>&1", cmd, log);
    return system(full);
}

static void show_file(const char *path, int max_lines)
{
    FILE *f = fopen(path, "r");
    char line[512];
    if (f == NULL) {
        return;
    }
    for (int i = 0; i < max_lines && fgets(line, sizeof(line), f) != NULL; i++) {
        fputs("    ", stdout);
        fputs(line, stdout);
    }
    fclose(f);
}

static const char *const compiled_cases[] = {
    "(rank + 1) % p",
    "(rank - 1) % p",
    "(rank - r - 1) % p",
    "-7 / 2 + rank",
    "rank / 2 - r",
    "p - (rank - r)",
    "p - rank - r",
    "rank << r + 1",
    "(rank & p) == r",
    "rank & p == r",
    "p > 1 && 1 % (p - 1) == 0",
    "rank || r && p",
    "!rank == r",
    "!rank & p",
    "~(rank < p)",
    "-1 << r",
    "~0 << r",
    "rank * p && r",
    "!(rank << r)",
    "(rank ? 2 : 3) && p",
    "rank < 2 * (p - pof2(p)) ? (rank % 2 == 0 ? -1 : rank / 2) : rank - (p - pof2(p))",
    "log2(p) + ceil_log2(p) * pof2(p)",
    "pow(-2, r + 1) - min(rank, r) + max(p, -r)",
    "ceil_div(rank - 5, p)",
    "- -rank",
    "-(-5) + rank",
    "rank ^ 1 << r",
    "p - 1 - rank >> 1",
    "r ? rank : p ? 1 : 2",
    "(r ? rank : p) ? 1 : 2",
    "(0xAAAAAAAB & (p - 1)) + rank",
    "((rank + 0xAAAAAAAA) ^ 0xAAAAAAAA) >> 1",
    "(0xAAAAAAAA >> r + 3) % p",
    "p < 0xAAAAAAAA ? rank : r",
    "0x100000000 > rank ? p : r",
    "(rank == 0xAAAAAAAA) + (0xAAAAAAAA != p)",
    "(r > 0 ? 0x100000000 : rank) >> 30",
    "to_negabinary(rank - r) + from_negabinary(p)",
    "bit_reverse(rank & 7, 3) + ctz(p) * popcount(rank + 8)",
    "popcount(0xAAAAAAAA ^ rank) - ctz(0x100000000 >> p)",
    "rank < r < p",
    "rank == r == p",
    "p >= rank != r",
    "-rank % p",
    "(p | rank) ^ (r & 3)",
    "~rank & p + 1",
    "-(rank * r) || !p",
};

#define N_COMPILED (sizeof(compiled_cases) / sizeof(compiled_cases[0]))
#define N_RANDOM_COMPILED 300

static void expr_should_print_c_that_compiles_cleanly_and_computes_the_same(void)
{
    char dir[] = "/tmp/test_expr_XXXXXX";
    if (mkdtemp(dir) == NULL) {
        CHECKF(0, "mkdtemp failed");
        return;
    }
    char src[256], bin[256], log[256], cmd[1024];
    snprintf(src, sizeof(src), "%s/t.c", dir);
    snprintf(bin, sizeof(bin), "%s/t", dir);
    snprintf(log, sizeof(log), "%s/log", dir);
    FILE *f = fopen(src, "w");
    FILE *rows = tmpfile();
    CHECK(f != NULL && rows != NULL);
    if (f == NULL || rows == NULL) {
        return;
    }
    fprintf(f, "#include \"cg.h\"\n#include <stdio.h>\n\n");
    char c[4096];
    int nfn = 0, nrows = 0;
    rng_state = 0x853c49e6748fea9bULL;
    for (int i = 0; nfn < (int)N_COMPILED + N_RANDOM_COMPILED && i < 200000; i++) {
        struct cg_expr *e;
        if (i < (int)N_COMPILED) {
            e = parse(compiled_cases[i]);
            CHECKF(e != NULL, "%s", compiled_cases[i]);
            if (e == NULL) {
                continue;
            }
        } else {
            e = random_tree(4);
            if (gcc_would_warn(e)) {
                continue;
            }
        }
        int used = 0;
        for (int64_t p = 1; p <= 9; p++) {
            for (int64_t rank = -1; rank <= p; rank++) {
                for (int64_t r = -2; r <= 4; r++) {
                    int64_t env[3] = {p, rank, r}, v;
                    if (!int_safe(e, env) || cg_expr_eval(e, env, &v, NULL, NULL) != 0 ||
                        v != (int)v) {
                        continue;
                    }
                    fprintf(rows, "    {%d, %d, %d, %d, %" PRId64 "},\n", nfn, (int)p, (int)rank,
                            (int)r, v);
                    used++;
                }
            }
        }
        if (used == 0) {
            CHECKF(i >= (int)N_COMPILED, "%s: no values to check", compiled_cases[i]);
            continue;
        }
        nrows += used;
        cg_expr_print_c(e, c, sizeof(c));
        fprintf(f, "static int e%d(int p, int rank, int r)\n{\n", nfn);
        fprintf(f, "    (void)p;\n    (void)rank;\n    (void)r;\n    return %s;\n}\n\n", c);
        nfn++;
    }
    fprintf(f, "static int (*const fns[])(int, int, int) = {\n");
    for (int i = 0; i < nfn; i++) {
        fprintf(f, "    e%d,\n", i);
    }
    fprintf(f, "};\n\nstatic const struct {\n    int fn, p, rank, r;\n    long long want;\n"
               "} rows[] = {\n");
    rewind(rows);
    int ch;
    while ((ch = fgetc(rows)) != EOF) {
        fputc(ch, f);
    }
    fclose(rows);
    fprintf(f, "};\n\nint main(void)\n{\n    int bad = 0;\n"
               "    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {\n"
               "        int got = fns[rows[i].fn](rows[i].p, rows[i].rank, rows[i].r);\n"
               "        if (got != rows[i].want) {\n"
               "            printf(\"e%%d(p=%%d, rank=%%d, r=%%d) = %%d, want %%lld\\n\",\n"
               "                   rows[i].fn, rows[i].p, rows[i].rank, rows[i].r, got,\n"
               "                   rows[i].want);\n"
               "            bad++;\n"
               "        }\n"
               "    }\n"
               "    printf(\"%%zu checked\\n\", sizeof(rows) / sizeof(rows[0]));\n"
               "    return bad != 0;\n}\n");
    fclose(f);
    CHECK(nfn == (int)N_COMPILED + N_RANDOM_COMPILED && nrows > 1000);
    snprintf(cmd, sizeof(cmd),
             "mpicc.openmpi -std=c11 -Wall -Wextra -Werror -O1 -I runtime -o %s %s", bin, src);
    int rc = run_quiet(cmd, log);
    CHECKF(rc == 0, "compiling %s failed:", src);
    if (rc != 0) {
        show_file(log, 40);
        return;
    }
    rc = run_quiet(bin, log);
    CHECKF(rc == 0, "%s computed different values:", bin);
    if (rc != 0) {
        show_file(log, 40);
        return;
    }
    unlink(log);
    unlink(bin);
    unlink(src);
    rmdir(dir);
}

/* ---- diagnostics, options and the arena ---------------------------------- */

static const char *capture_diag(int max_errors, int nerrors)
{
    static char out[1024];
    char *buf = NULL;
    size_t len = 0;
    FILE *sink = open_memstream(&buf, &len);
    struct cg_diag d;
    cg_diag_init(&d, sink);
    if (max_errors > 0) {
        d.max_errors = max_errors;
    }
    struct cg_pos at = {3, 7}, none = {0, 0};
    for (int i = 0; i < nerrors; i++) {
        cg_error(&d, "f.json", at, "bad %d", i);
        cg_note(&d, "f.json", none, "see %d", i);
    }
    fclose(sink);
    snprintf(out, sizeof(out), "%d|%s", d.errors, buf);
    free(buf);
    return out;
}

static void diag_should_print_errors_and_notes_in_gcc_form(void)
{
    CHECK(strcmp(capture_diag(0, 1), "1|f.json:3:7: error: bad 0\nf.json: note: see 0\n") == 0);
    struct cg_diag d;
    cg_diag_init(&d, NULL);
    CHECK(d.sink == stderr && d.errors == 0 && d.max_errors == 20);
}

static void diag_should_stop_printing_but_keep_counting_after_max_errors(void)
{
    const char *got = capture_diag(2, 4);
    CHECKF(strcmp(got, "4|f.json:3:7: error: bad 0\nf.json: note: see 0\n"
                       "f.json:3:7: error: bad 1\nf.json: note: see 1\n"
                       "f.json: note: too many errors, stopping\n") == 0,
           "%s", got);
}

static void options_should_default_to_p_1_to_64_and_a_few_large_p(void)
{
    struct cg_options opt;
    cg_options_init(&opt);
    CHECK(opt.np == 70);
    CHECK(opt.p_list[0] == 1 && opt.p_list[63] == 64 && opt.p_list[64] == 100);
    CHECK(opt.p_list[65] == 127 && opt.p_list[66] == 128 && opt.p_list[67] == 255);
    CHECK(opt.p_list[68] == 256 && opt.p_list[69] == 1000);
    CHECK(opt.all_roots_max_p == 64 && strcmp(opt.out_dir, "emitted") == 0);
    CHECK(opt.depfile == NULL && opt.quiet == 0);
}

static void arena_should_hand_out_aligned_zeroed_memory(void)
{
    struct cg_arena a = {0};
    int ok = 1;
    for (size_t i = 0; i < 2000; i++) {
        size_t n = (i * 37) % 500 + (i % 100 == 0 ? 100000 : 0);
        unsigned char *p = cg_arena_alloc(&a, n);
        ok &= ((uintptr_t)p % 16) == 0;
        for (size_t j = 0; j < n; j++) {
            ok &= p[j] == 0;
        }
        memset(p, 0xab, n);
    }
    CHECK(ok);
    CHECK(strcmp(cg_arena_strdup(&a, "ring"), "ring") == 0);
    CHECK(strcmp(cg_arena_printf(&a, "%s_%d", "ring", 2), "ring_2") == 0);
    CHECK(cg_arena_alloc(&a, 0) != NULL);
    cg_arena_fini(&a);
    CHECK(a.head == NULL);
}

int main(void)
{
    RUN(expr_should_evaluate_every_operator);
    RUN(expr_should_compute_bit_functions_and_64_bit_masks);
    RUN(expr_should_floor_division_and_keep_modulo_non_negative);
    RUN(expr_should_give_0_or_1_for_comparisons_and_logic);
    RUN(expr_should_evaluate_every_function);
    RUN(expr_should_follow_c_precedence_and_associativity);
    RUN(expr_should_short_circuit_logic_and_conditionals);
    RUN(expr_should_report_every_evaluation_error_at_the_failing_node);
    RUN(expr_should_report_syntax_errors_with_exact_text);
    RUN(expr_should_reject_nesting_deeper_than_its_limit);
    RUN(expr_should_accept_hex_literals_and_skip_blanks);
    RUN(expr_should_place_every_node_at_its_first_character);
    RUN(expr_should_walk_names_and_tell_constants);
    RUN(expr_should_print_c_with_the_fewest_parentheses);
    RUN(expr_should_print_schedule_syntax_back);
    RUN(expr_should_print_numbers_that_no_parser_makes);
    RUN(expr_should_truncate_printing_and_return_the_full_length);
    RUN(expr_should_reparse_printed_random_trees_to_the_same_tree_and_values);
    RUN(expr_should_compile_to_programs_that_agree_with_the_tree_evaluator);
    RUN(expr_should_index_tables_and_report_indices_outside);
    if (system("command -v mpicc.openmpi > /dev/null 2>&1") != 0) {
        printf("SKIP expr_should_print_c_that_compiles_cleanly_and_computes_the_same: "
               "mpicc.openmpi is not on PATH\n");
    } else if (access("runtime/cg.h", R_OK) != 0) {
        printf("SKIP expr_should_print_c_that_compiles_cleanly_and_computes_the_same: "
               "runtime/cg.h not found (run from the repository root)\n");
    } else {
        RUN(expr_should_print_c_that_compiles_cleanly_and_computes_the_same);
    }
    RUN(diag_should_print_errors_and_notes_in_gcc_form);
    RUN(diag_should_stop_printing_but_keep_counting_after_max_errors);
    RUN(options_should_default_to_p_1_to_64_and_a_few_large_p);
    RUN(arena_should_hand_out_aligned_zeroed_memory);
    cg_arena_fini(&arena);
    return check_exit();
}
