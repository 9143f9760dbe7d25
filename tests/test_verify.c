/* test_verify.c - the passes between JSON text and a verified schedule:
 * positions zipped onto the JSON tree (runtime/util/json.c), the check pass
 * (gen/check.c), the simulator (gen/sim.c), the verifier (gen/verify.c), the
 * analysis behind `collgen explain` (gen/analyse.c) and mutation testing
 * (gen/mutate.c).
 *
 * Run from the repository root: some tests read schedules/allreduce/ring.json.
 * Schedules written by a test go to a temporary file, whose path therefore
 * appears in diagnostics; checks compare the text after "<path>:".
 */
#include "json.h"
#include "../gen/mutate.h"
#include "../gen/passes.h"
#include "../gen/sim.h"
#include "check.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define RING "schedules/allreduce/ring.json"

/* ---- helpers ------------------------------------------------------------- */

/* One schedule loaded through passes 1 and 2, with everything reported
 * captured in `diag`. */
struct loaded {
    struct cg_options opt;    /* p range for cg_verify */
    struct cg_gen g;          /* context; its sink is `sink` */
    struct cg_arena arena;    /* owns the IR */
    struct cg_schedule s;     /* the IR */
    FILE *sink;               /* open_memstream over diag */
    char *diag;               /* what the passes reported */
    size_t diag_len;          /* its length */
    char path[64];            /* the temporary file, or "" */
    int rc;                   /* 0: parsed and checked */
};

static void start(struct loaded *l)
{
    memset(l, 0, sizeof(*l));
    cg_options_init(&l->opt);
    l->g.opt = &l->opt;
    l->sink = open_memstream(&l->diag, &l->diag_len);
    cg_diag_init(&l->g.diag, l->sink);
}

/* Parses and checks the schedule in file `path`. */
static int load_file(struct loaded *l, const char *path)
{
    start(l);
    l->rc = cg_parse(&l->g, &l->arena, path, &l->s);
    if (l->rc == 0) {
        l->rc = cg_check(&l->g, &l->arena, &l->s);
    }
    fflush(l->sink);
    return l->rc;
}

/* Writes `text` to a fresh temporary file and loads it. */
static int load_text(struct loaded *l, const char *text)
{
    char path[64];
    snprintf(path, sizeof(path), "/tmp/test_verify_XXXXXX.json");
    int fd = mkstemps(path, 5);
    if (fd < 0) {
        start(l);
        l->rc = -1;
        return -1;
    }
    size_t n = strlen(text);
    int ok = write(fd, text, n) == (ssize_t)n;
    close(fd);
    int rc = ok ? load_file(l, path) : -1;
    snprintf(l->path, sizeof(l->path), "%s", path);
    return rc;
}

/* What was reported since the last call, as a string (flushed). */
static const char *reported(struct loaded *l)
{
    fflush(l->sink);
    return l->diag != NULL ? l->diag : "";
}

/* 1 when what was reported contains `<path>:<rest>`, i.e. the message
 * `rest` located in this schedule's file. */
static int reported_at(struct loaded *l, const char *rest)
{
    char want[2048];
    snprintf(want, sizeof(want), "%s:%s", l->s.file != NULL ? l->s.file : l->path, rest);
    return strstr(reported(l), want) != NULL;
}

static void finish(struct loaded *l)
{
    fclose(l->sink);
    free(l->diag);
    cg_arena_fini(&l->arena);
    if (l->path[0] != '\0') {
        unlink(l->path);
    }
}

static void set_p_range(struct cg_options *opt, int lo, int hi)
{
    opt->np = 0;
    for (int p = lo; p <= hi; p++) {
        opt->p_list[opt->np++] = p;
    }
}

/* A ring allgather, the base most broken schedules below start from. The
 * slots: the round count, the send's peer and block, a "when" (with its
 * trailing ", ") or "" for the receive, and the receive's block. Every
 * object starts where it does in the correct schedule. */
static const char ring_allgather_fmt[] =
    "{\n"
    "  \"schedule\": \"allgather_t\",\n"
    "  \"collective\": \"allgather\",\n"
    "  \"summary\": \"Ring allgather for tests.\",\n"
    "  \"phases\": [\n"
    "    { \"phase\": \"ring\", \"rounds\": { \"var\": \"r\", \"count\": \"%s\" },\n"
    "      \"steps\": [\n"
    "        { \"step\": \"exchange\",\n"
    "          \"send\": { \"to\": \"%s\", \"buf\": \"out\", \"blocks\": { \"block\": \"%s\" } },\n"
    "          \"%s\": { %s\"from\": \"(rank - 1) %% p\", \"buf\": \"out\", \"blocks\": { \"block\": \"%s\" } } } ] }\n"
    "  ]\n"
    "}\n";

struct ring {
    const char *count;      /* rounds */
    const char *to;         /* the send's peer */
    const char *send_block; /* the block sent */
    const char *recv_key;   /* "recv", or a misspelling */
    const char *recv_when;  /* "\"when\": \"...\", " or "" */
    const char *recv_block; /* the block received */
};

/* The correct ring allgather; tests change one field. */
static const struct ring ring_ok = { "p - 1", "(rank + 1) % p", "(rank - r) % p", "recv", "",
                                     "(rank - r - 1) % p" };

static int load_ring(struct loaded *l, struct ring r)
{
    char text[2048];
    snprintf(text, sizeof(text), ring_allgather_fmt, r.count, r.to, r.send_block, r.recv_key,
             r.recv_when, r.recv_block);
    return load_text(l, text);
}

/* ---- json.c: positions --------------------------------------------------- */

static int pos_is(struct cg_pos pos, int line, int col)
{
    return pos.line == line && pos.col == col;
}

static void json_positions_should_zip_onto_nested_values_and_keys(void)
{
    /* Strings that hold brackets, braces, commas, colons and escaped quotes
     * must not throw the document-order scan off. */
    static const char doc[] =
        "{\n"
        "  \"a\": 1,\n"
        "  \"b\": { \"c\": [10, \"x]},:\", { \"d\": true }],\n"
        "         \"e\": null },\n"
        "  \"f\": \"s\\\"q\\\\\", \"g\": -2.5e3,\n"
        "\t\"h\": [ ]\n"
        "}\n";
    struct cg_arena arena = {0};
    struct cg_diag d;
    cg_diag_init(&d, stderr);
    struct cg_json *top = cg_json_parse(&arena, &d, "doc.json", doc, strlen(doc));
    CHECK(top != NULL && d.errors == 0);
    if (top == NULL) {
        return;
    }
    CHECK(top->kind == CG_J_OBJECT && top->nitems == 5 && pos_is(top->pos, 1, 1));
    const struct cg_json *a = cg_json_get(top, "a");
    CHECK(a != NULL && pos_is(a->key_pos, 2, 3) && pos_is(a->pos, 2, 8));
    CHECK(a != NULL && a->is_int && a->ival == 1);
    const struct cg_json *b = cg_json_get(top, "b");
    CHECK(b != NULL && b->kind == CG_J_OBJECT && pos_is(b->key_pos, 3, 3) && pos_is(b->pos, 3, 8));
    const struct cg_json *c = cg_json_get(b, "c");
    CHECK(c != NULL && c->kind == CG_J_ARRAY && c->nitems == 3);
    if (c != NULL && c->nitems == 3) {
        CHECK(pos_is(c->key_pos, 3, 10) && pos_is(c->pos, 3, 15));
        CHECK(pos_is(c->items[0]->pos, 3, 16) && c->items[0]->ival == 10);
        CHECK(c->items[0]->key == NULL);
        CHECK(pos_is(c->items[1]->pos, 3, 20) && pos_is(c->items[1]->str_pos, 3, 21));
        CHECK(strcmp(c->items[1]->str, "x]},:") == 0 && !c->items[1]->raw_escapes);
        const struct cg_json *dd = cg_json_get(c->items[2], "d");
        CHECK(pos_is(c->items[2]->pos, 3, 29));
        CHECK(dd != NULL && dd->kind == CG_J_BOOL && dd->boolean);
        CHECK(dd != NULL && pos_is(dd->key_pos, 3, 31) && pos_is(dd->pos, 3, 36));
    }
    const struct cg_json *e = cg_json_get(b, "e");
    CHECK(e != NULL && e->kind == CG_J_NULL && pos_is(e->key_pos, 4, 10) && pos_is(e->pos, 4, 15));
    const struct cg_json *f = cg_json_get(top, "f");
    CHECK(f != NULL && pos_is(f->key_pos, 5, 3) && pos_is(f->pos, 5, 8));
    CHECK(f != NULL && strcmp(f->str, "s\"q\\") == 0 && f->raw_escapes);
    const struct cg_json *g = cg_json_get(top, "g");
    CHECK(g != NULL && pos_is(g->key_pos, 5, 18) && pos_is(g->pos, 5, 23));
    CHECK(g != NULL && !g->is_int && g->num == -2500.0);
    const struct cg_json *h = cg_json_get(top, "h");
    CHECK(h != NULL && h->kind == CG_J_ARRAY && h->nitems == 0);
    CHECK(h != NULL && pos_is(h->key_pos, 6, 2) && pos_is(h->pos, 6, 7));
    CHECK(cg_json_get(top, "A") == NULL && cg_json_get(a, "a") == NULL);
    cg_arena_fini(&arena);
}

static void json_should_report_a_duplicate_key_with_the_first_definition(void)
{
    static const char doc[] = "{ \"x\": { \"k\": 1,\n         \"k\": 2 } }";
    struct cg_arena arena = {0};
    char *buf = NULL;
    size_t len = 0;
    FILE *sink = open_memstream(&buf, &len);
    struct cg_diag d;
    cg_diag_init(&d, sink);
    struct cg_json *top = cg_json_parse(&arena, &d, "dup.json", doc, strlen(doc));
    fclose(sink);
    CHECK(top == NULL && d.errors == 1);
    CHECKF(strcmp(buf, "dup.json:2:10: error: duplicate key 'k'\n"
                       "dup.json:1:10: note: first defined here\n") == 0,
           "%s", buf);
    free(buf);
    cg_arena_fini(&arena);
}

/* Parses doc quietly into *top; returns what was reported (free it). */
static char *json_errors(const char *doc, size_t n, struct cg_arena *arena, struct cg_json **top,
                         int *errors)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *sink = open_memstream(&buf, &len);
    struct cg_diag d;
    cg_diag_init(&d, sink);
    *top = cg_json_parse(arena, &d, "n.json", doc, n);
    fclose(sink);
    *errors = d.errors;
    return buf;
}

static void json_should_reject_leading_zeros_and_read_integers_whole(void)
{
    struct cg_arena arena = { 0 };
    struct cg_json *top = NULL;
    int errors = 0;
    /* Cut to 31 characters, this once read as p = 2; 024 read as 24. */
    const char *doc = "{ \"ranks\": 00000000000000000000000000000024 }";
    char *buf = json_errors(doc, strlen(doc), &arena, &top, &errors);
    CHECK(top == NULL && errors == 1);
    CHECKF(strcmp(buf, "n.json:1:12: error: invalid JSON number "
                       "'00000000000000000000000000000024': a number may not start with the "
                       "digit 0 unless it is 0 (no leading zeros)\n") == 0, "%s", buf);
    free(buf);
    const char *bad[] = { "[024]", "[-01]", "[1.]", "[-]", "[00]" };
    for (int k = 0; k < 5; k++) {
        buf = json_errors(bad[k], strlen(bad[k]), &arena, &top, &errors);
        CHECKF(top == NULL && errors == 1 && strstr(buf, "invalid JSON") != NULL,
               "%s: %s", bad[k], buf);
        free(buf);
    }
    /* Integers are read from their whole text; one beyond int64 is out of
     * range, never a fraction or a smaller number. */
    doc = "[0, -0, 9223372036854775807, 9223372036854775808, -9223372036854775809, 1e3, 0.5]";
    buf = json_errors(doc, strlen(doc), &arena, &top, &errors);
    CHECKF(top != NULL && errors == 0, "%s", buf);
    if (top != NULL) {
        CHECK(top->items[0]->is_int && top->items[0]->ival == 0);
        CHECK(top->items[1]->is_int && top->items[1]->ival == 0);
        CHECK(top->items[2]->is_int && top->items[2]->ival == INT64_MAX);
        CHECK(!top->items[3]->is_int && top->items[3]->int_overflow);
        CHECK(strcmp(top->items[3]->text, "9223372036854775808") == 0);
        CHECK(!top->items[4]->is_int && top->items[4]->int_overflow);
        CHECK(!top->items[5]->is_int && !top->items[5]->int_overflow);
        CHECK(!top->items[6]->is_int && !top->items[6]->int_overflow);
    }
    free(buf);
    cg_arena_fini(&arena);
}

static void json_should_find_a_duplicate_among_200000_keys_in_linear_time(void)
{
    /* The duplicate-key check compared each key with all earlier ones:
     * 100,000 keys took 19 s, these 200,000 would take over a minute. */
    size_t cap = 200000 * 24 + 64, n = 0;
    char *doc = malloc(cap);
    CHECK(doc != NULL);
    if (doc == NULL) {
        return;
    }
    n += (size_t)snprintf(doc + n, cap - n, "{");
    for (int i = 0; i < 200000; i++) {
        n += (size_t)snprintf(doc + n, cap - n, "%s\"k%d\": %d", i ? ", " : "", i, i);
    }
    n += (size_t)snprintf(doc + n, cap - n, ", \"k7\": 0}");
    struct cg_arena arena = { 0 };
    struct cg_json *top = NULL;
    int errors = 0;
    char *buf = json_errors(doc, n, &arena, &top, &errors);
    CHECK(top == NULL && errors == 1);
    CHECKF(strstr(buf, "n.json:1:3577782: error: duplicate key 'k7'\n"
                       "n.json:1:65: note: first defined here\n") != NULL, "%s", buf);
    free(buf);
    free(doc);
    cg_arena_fini(&arena);
}

static void read_file_should_say_a_directory_is_a_directory(void)
{
    struct cg_arena arena = { 0 };
    char *buf = NULL;
    size_t len = 0, n = 0;
    FILE *sink = open_memstream(&buf, &len);
    struct cg_diag d;
    cg_diag_init(&d, sink);
    /* fopen succeeds on a directory; reading it failed as "I/O error". */
    CHECK(cg_read_file(&arena, &d, "schedules", &n) == NULL);
    fclose(sink);
    CHECKF(strcmp(buf, "schedules: error: cannot read: it is a directory, not a file (name the "
                       ".json files in it)\n") == 0, "%s", buf);
    free(buf);
    cg_arena_fini(&arena);
}

static void json_syntax_error_should_give_line_col_and_a_caret(void)
{
    static const char doc[] = "{\n  \"a\": [1, 2,,]\n}\n";
    struct cg_arena arena = {0};
    char *buf = NULL;
    size_t len = 0;
    FILE *sink = open_memstream(&buf, &len);
    struct cg_diag d;
    cg_diag_init(&d, sink);
    struct cg_json *top = cg_json_parse(&arena, &d, "syn.json", doc, strlen(doc));
    fclose(sink);
    CHECK(top == NULL && d.errors == 1);
    CHECKF(strcmp(buf, "syn.json:2:14: error: invalid JSON: unexpected ','\n"
                       "   \"a\": [1, 2,,]\n"
                       "              ^ near here\n") == 0,
           "%s", buf);
    free(buf);
    cg_arena_fini(&arena);
}

/* ---- parse.c and check.c ------------------------------------------------- */

static void parse_should_reject_an_unknown_key_in_a_step_at_the_key(void)
{
    struct loaded l;
    load_ring(&l, ring_ok);
    CHECKF(l.rc == 0 && l.s.checked, "%s", reported(&l));
    finish(&l);
    struct ring r = ring_ok;
    r.recv_key = "recf";
    load_ring(&l, r);
    CHECK(l.rc != 0 && l.g.diag.errors == 1);
    CHECKF(reported_at(&l, "10:11: error: unknown key 'recf' in an exchange step; expected one "
                           "of: step, name, when, comment, send, recv, segments\n"),
           "%s", reported(&l));
    finish(&l);
}

static void check_should_reject_a_let_that_shadows_an_outer_name(void)
{
    struct loaded l;
    load_text(&l, "{\n"
                  "  \"schedule\": \"allgather_t\", \"collective\": \"allgather\", \"summary\": \"s\",\n"
                  "  \"let\": { \"right\": \"(rank + 1) % p\" },\n"
                  "  \"phases\": [ { \"phase\": \"a\", \"rounds\": { \"var\": \"right\", \"count\": 1 },\n"
                  "                \"steps\": [ { \"step\": \"exchange\",\n"
                  "                  \"send\": { \"to\": \"rank\", \"buf\": \"out\", \"blocks\": \"all\" },\n"
                  "                  \"recv\": { \"from\": \"rank\", \"buf\": \"out\", \"blocks\": \"all\" } } ] } ]\n"
                  "}\n");
    CHECK(l.rc != 0 && l.g.diag.errors == 1);
    CHECKF(reported_at(&l, "4:41: error: round variable 'right' is already defined\n"),
           "%s", reported(&l));
    CHECKF(reported_at(&l, "3:12: note: first defined here\n"), "%s", reported(&l));
    finish(&l);
}

static void check_should_reject_reserved_and_unsafe_names(void)
{
    static const struct {
        const char *name; /* a let name */
        const char *why;  /* the end of the message */
    } cases[] = {
        { "int", "is reserved (a C keyword or a name the generated code uses)" },
        { "rank", "is reserved (a C keyword or a name the generated code uses)" },
        { "sendbuf", "is reserved (a C keyword or a name the generated code uses)" },
        { "pof2", "is reserved (a C keyword or a name the generated code uses)" },
        { "new", "is reserved (a C keyword or a name the generated code uses)" },
        { "__x", "uses a reserved prefix or '__'" },
        { "a__b", "uses a reserved prefix or '__'" },
        { "cg_x", "uses a reserved prefix or '__'" },
        { "mpi_x", "uses a reserved prefix or '__'" },
        { "x-y", "is not a safe identifier" },
        { "Right", "is not a safe identifier" },
        { "2x", "is not a safe identifier" },
        { "abcdefghijabcdefghijabcdefghijabcdefghijk", "is not a safe identifier" },
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char text[1024], want[256];
        snprintf(text, sizeof(text),
                 "{ \"schedule\": \"allgather_t\", \"collective\": \"allgather\", \"summary\": \"s\",\n"
                 "  \"let\": { \"%s\": 1 },\n"
                 "  \"phases\": [ { \"phase\": \"a\", \"steps\": [ { \"step\": \"exchange\",\n"
                 "    \"send\": { \"to\": \"rank\", \"buf\": \"out\", \"blocks\": \"all\" },\n"
                 "    \"recv\": { \"from\": \"rank\", \"buf\": \"out\", \"blocks\": \"all\" } } ] } ] }\n",
                 cases[i].name);
        snprintf(want, sizeof(want), "2:12: error: let name '%s' %s", cases[i].name, cases[i].why);
        struct loaded l;
        load_text(&l, text);
        CHECKF(l.rc != 0 && reported_at(&l, want), "%s: %s", cases[i].name, reported(&l));
        finish(&l);
    }
}

static void check_should_accept_names_that_only_resemble_reserved_ones(void)
{
    static const char *const names[] = { "ranks", "interval", "counter", "p2", "tmp_left",
                                         "x_y", "abcdefghijabcdefghijabcdefghijabcdefghij" };
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        char text[1024];
        snprintf(text, sizeof(text),
                 "{ \"schedule\": \"allgather_t\", \"collective\": \"allgather\", \"summary\": \"s\",\n"
                 "  \"let\": { \"%s\": 1 },\n"
                 "  \"phases\": [ { \"phase\": \"a\", \"steps\": [ { \"step\": \"exchange\",\n"
                 "    \"send\": { \"to\": \"rank\", \"buf\": \"out\", \"blocks\": \"all\" },\n"
                 "    \"recv\": { \"from\": \"rank\", \"buf\": \"out\", \"blocks\": \"all\" } } ] } ] }\n",
                 names[i]);
        struct loaded l;
        load_text(&l, text);
        CHECKF(l.rc == 0 && l.s.checked, "%s: %s", names[i], reported(&l));
        finish(&l);
    }
}

static void check_should_bind_names_and_name_steps_by_kind(void)
{
    struct loaded l;
    load_file(&l, RING);
    CHECKF(l.rc == 0 && l.s.checked, "%s", reported(&l));
    CHECK(l.s.coll == CG_C_ALLREDUCE && l.s.commutative == 1 && l.s.nphases == 2);
    if (l.s.nphases == 2) {
        CHECK(strcmp(l.s.phases[0].name, "reduce_scatter") == 0);
        CHECK(l.s.phases[0].nsteps == 2 && l.s.phases[0].var_slot >= CG_SLOT_FIRST_FREE);
        CHECK(strcmp(l.s.phases[0].steps[0].name, "exchange") == 0);
        CHECK(strcmp(l.s.phases[0].steps[1].name, "reduce") == 0);
        CHECK(l.s.phases[0].steps[0].index == 1 && l.s.phases[1].steps[0].index == 3);
        const struct cg_expr *to = l.s.phases[0].steps[0].sends[0].peer;
        CHECK(to->kind == CG_E_BINARY && to->a->kind == CG_E_BINARY);
        CHECK(to->a->a->kind == CG_E_NAME && to->a->a->slot == CG_SLOT_RANK);
        CHECK(to->b->kind == CG_E_NAME && to->b->slot == CG_SLOT_P);
    }
    finish(&l);
}

/* ---- verify.c ------------------------------------------------------------ */

static void verify_should_accept_ring_allreduce_for_p_1_to_64(void)
{
    struct loaded l;
    load_file(&l, RING);
    CHECKF(l.rc == 0, "%s", reported(&l));
    if (l.rc == 0) {
        for (int p = 1; p <= 64; p++) {
            CHECKF(cg_verify_one(&l.g, &l.s, p, 0) == 0, "p=%d: %s", p, reported(&l));
        }
        set_p_range(&l.opt, 1, 64);
        struct cg_verify_stats st = { 0 };
        /* Every value of the ring's ranged param segments (1..16) is a run. */
        CHECK(cg_verify(&l.g, &l.s, &st) == 0 && st.runs == 64 * 16);
    }
    CHECK(l.g.diag.errors == 0 && l.diag_len == 0);
    finish(&l);
}

static void verify_should_reject_unmatched_send(void)
{
    struct loaded l;
    /* Rank 0 posts no receive, so the last rank's send finds no partner. */
    struct ring r = ring_ok;
    r.recv_when = "\"when\": \"rank > 0\", ";
    load_ring(&l, r);
    CHECKF(l.rc == 0, "%s", reported(&l));
    if (l.rc == 0) {
        CHECK(cg_verify_one(&l.g, &l.s, 1, 0) == 0);
        CHECK(cg_verify_one(&l.g, &l.s, 3, 0) != 0);
        CHECK(l.g.diag.errors == 1);
        CHECKF(reported_at(&l, "9:19: error: p=3 rank 2, phase 'ring' round r=0, step "
                               "'exchange': send of out[2] to rank 0 has no matching receive "
                               "(rank 0 posts no further receive from rank 2 in this step)\n"),
               "%s", reported(&l));
    }
    finish(&l);
}

static void verify_should_reject_unmatched_receive(void)
{
    struct loaded l;
    struct ring r = ring_ok;
    r.to = "(rank + 2) % p";
    load_ring(&l, r);
    CHECKF(l.rc == 0, "%s", reported(&l));
    if (l.rc == 0) {
        CHECK(cg_verify_one(&l.g, &l.s, 3, 0) != 0);
        CHECKF(reported_at(&l, "10:19: error: p=3 rank 1, phase 'ring' round r=0, step "
                               "'exchange': receive into out[0] from rank 0 has no matching send "
                               "(rank 0 posts no further send to rank 1 in this step)\n"),
               "%s", reported(&l));
    }
    finish(&l);
}

static void verify_error_should_name_p_root_rank_phase_round_and_step(void)
{
    struct loaded l;
    /* A pipelined chain bcast whose receive is one segment late. */
    load_text(&l, "{\n"
                  "  \"schedule\": \"bcast_t\", \"collective\": \"bcast\", \"summary\": \"s\",\n"
                  "  \"blocks\": 2,\n"
                  "  \"let\": { \"v\": \"(rank - root) % p\" },\n"
                  "  \"phases\": [\n"
                  "    { \"phase\": \"chain\", \"rounds\": { \"var\": \"t\", \"count\": \"p\" },\n"
                  "      \"let\": { \"seg\": \"t - v\" },\n"
                  "      \"steps\": [ { \"step\": \"exchange\", \"name\": \"forward\",\n"
                  "        \"send\": { \"when\": \"v < p - 1 && seg >= 0 && seg < 2\",\n"
                  "                  \"to\": \"(rank + 1) % p\", \"buf\": \"out\", \"blocks\": { \"block\": \"seg\" } },\n"
                  "        \"recv\": { \"when\": \"v > 0 && seg >= 0 && seg < 2\",\n"
                  "                  \"from\": \"(rank - 1) % p\", \"buf\": \"out\", \"blocks\": { \"block\": \"seg\" } } } ] } ]\n"
                  "}\n");
    CHECKF(l.rc == 0, "%s", reported(&l));
    if (l.rc == 0) {
        CHECK(cg_verify_one(&l.g, &l.s, 1, 0) == 0);
        CHECK(cg_verify_one(&l.g, &l.s, 3, 1) != 0);
        const char *r = reported(&l);
        CHECKF(strstr(r, "p=3") != NULL && strstr(r, "root=1") != NULL, "%s", r);
        CHECKF(strstr(r, "rank 1,") != NULL && strstr(r, "phase 'chain'") != NULL, "%s", r);
        CHECKF(strstr(r, "round t=0") != NULL && strstr(r, "step 'forward'") != NULL, "%s", r);
        CHECKF(reported_at(&l, "9:17: error: p=3 root=1 rank 1, phase 'chain' round t=0, step "
                               "'forward': send of out[0] to rank 2 has no matching receive"),
               "%s", r);
    }
    finish(&l);
}

static void verify_should_reject_double_reduction(void)
{
    struct loaded l;
    load_text(&l, "{\n"
                  "  \"schedule\": \"allreduce_t\", \"collective\": \"allreduce\", \"summary\": \"s\",\n"
                  "  \"requires\": { \"commutative\": true }, \"blocks\": 1, \"scratch\": 1,\n"
                  "  \"phases\": [ { \"phase\": \"ring\", \"rounds\": { \"var\": \"r\", \"count\": \"p - 1\" },\n"
                  "    \"steps\": [\n"
                  "      { \"step\": \"exchange\",\n"
                  "        \"send\": { \"to\": \"(rank + 1) % p\", \"buf\": \"out\", \"blocks\": \"all\" },\n"
                  "        \"recv\": { \"from\": \"(rank - 1) % p\", \"buf\": \"tmp\", \"blocks\": \"all\" } },\n"
                  "      { \"step\": \"reduce\", \"into\": { \"buf\": \"out\", \"blocks\": \"all\" },\n"
                  "        \"from\": { \"buf\": \"tmp\", \"blocks\": \"all\" } } ] } ]\n"
                  "}\n");
    CHECKF(l.rc == 0, "%s", reported(&l));
    if (l.rc == 0) {
        CHECK(cg_verify_one(&l.g, &l.s, 2, 0) == 0);
        CHECK(cg_verify_one(&l.g, &l.s, 3, 0) != 0);
        CHECKF(reported_at(&l, "9:7: error: p=3 rank 0, phase 'ring' round r=1, step 'reduce': "
                               "double reduction: the contribution of rank 2 is in both out "
                               "block 0 (ranks {0, 2}) and tmp block 0 (ranks 1..2)\n"),
               "%s", reported(&l));
    }
    finish(&l);
}

/* A chain allreduce: rank i adds the prefix of ranks 0..i-1 received from
 * rank i-1 with the order given, then the total travels back down. */
static const char chain_fmt[] =
    "{\n"
    "  \"schedule\": \"allreduce_t\", \"collective\": \"allreduce\", \"summary\": \"s\",\n"
    "  %s\"blocks\": 1, \"scratch\": 1,\n"
    "  \"phases\": [\n"
    "    { \"phase\": \"up\", \"rounds\": { \"var\": \"i\", \"from\": 1, \"to\": \"p - 1\" },\n"
    "      \"steps\": [ { \"step\": \"exchange\",\n"
    "          \"send\": { \"when\": \"rank == i - 1\", \"to\": \"i\", \"buf\": \"out\", \"blocks\": \"all\" },\n"
    "          \"recv\": { \"when\": \"rank == i\", \"from\": \"i - 1\", \"buf\": \"tmp\", \"blocks\": \"all\" } },\n"
    "        { \"step\": \"reduce\", \"when\": \"rank == i\", \"order\": \"%s\",\n"
    "          \"into\": { \"buf\": \"out\", \"blocks\": \"all\" }, \"from\": { \"buf\": \"tmp\", \"blocks\": \"all\" } } ] },\n"
    "    { \"phase\": \"down\", \"rounds\": { \"var\": \"i\", \"from\": \"p - 2\", \"down_to\": 0 },\n"
    "      \"steps\": [ { \"step\": \"exchange\",\n"
    "          \"send\": { \"when\": \"rank == i + 1\", \"to\": \"i\", \"buf\": \"out\", \"blocks\": \"all\" },\n"
    "          \"recv\": { \"when\": \"rank == i\", \"from\": \"i + 1\", \"buf\": \"out\", \"blocks\": \"all\" } } ] }\n"
    "  ]\n"
    "}\n";

static int verify_chain(const char *requires, const char *order, struct loaded *l)
{
    char text[4096];
    snprintf(text, sizeof(text), chain_fmt, requires, order);
    if (load_text(l, text) != 0) {
        return -2;
    }
    set_p_range(&l->opt, 1, 20);
    return cg_verify(&l->g, &l->s, NULL);
}

static void verify_should_reject_wrong_operand_order_for_a_non_commutative_op(void)
{
    struct loaded l;
    CHECKF(verify_chain("", "from_into", &l) == 0, "%s", reported(&l));
    finish(&l);
    CHECK(verify_chain("", "into_from", &l) == -1);
    CHECKF(reported_at(&l, "9:9: error: p=2 rank 1, phase 'up' round i=1, step 'reduce': "
                           "operand order: out block 0 holds rank 1 and tmp block 0 holds rank 0; "
                           "order 'into_from' does not join them in rank order"),
           "%s", reported(&l));
    finish(&l);
    /* With a commutative op any order is right. */
    CHECKF(verify_chain("\"requires\": { \"commutative\": true }, ", "into_from", &l) == 0, "%s",
           reported(&l));
    finish(&l);
}

static void verify_should_reject_a_send_of_a_block_with_no_data(void)
{
    struct loaded l;
    /* Sends the block it only receives in the next round. */
    struct ring r = ring_ok;
    r.send_block = "(rank - r - 1) % p";
    r.recv_block = "(rank - r - 2) % p";
    load_ring(&l, r);
    CHECKF(l.rc == 0, "%s", reported(&l));
    if (l.rc == 0) {
        CHECK(cg_verify_one(&l.g, &l.s, 2, 0) != 0);
        CHECKF(reported_at(&l, "9:19: error: p=2 rank 0, phase 'ring' round r=0, step "
                               "'exchange': sends out block 1 to rank 1, but it holds no data "
                               "yet\n"),
               "%s", reported(&l));
    }
    finish(&l);
}

static void verify_should_reject_a_receive_that_clobbers_a_block_the_step_sends(void)
{
    struct loaded l;
    struct ring r = ring_ok;
    r.recv_block = "(rank - r) % p";
    load_ring(&l, r);
    CHECKF(l.rc == 0, "%s", reported(&l));
    if (l.rc == 0) {
        CHECK(cg_verify_one(&l.g, &l.s, 2, 0) != 0);
        CHECKF(reported_at(&l, "9:19: error: p=2 rank 0, phase 'ring' round r=0, step "
                               "'exchange': sends out block 0, which a receive of the same step "
                               "overwrites\n"),
               "%s", reported(&l));
    }
    finish(&l);
}

static void verify_should_report_a_wrong_final_block_with_expected_and_found(void)
{
    struct loaded l;
    struct ring r = ring_ok;
    r.count = "p - 2";
    load_ring(&l, r);
    CHECKF(l.rc == 0, "%s", reported(&l));
    if (l.rc == 0) {
        CHECK(cg_verify_one(&l.g, &l.s, 1, 0) == 0);
        CHECK(cg_verify_one(&l.g, &l.s, 3, 0) != 0);
        CHECK(l.g.diag.errors == 1);
        CHECKF(strstr(reported(&l), "p=3 rank 0: wrong result: at the end, out block 1 holds no "
                                    "data; expected block 1 with the contribution of rank 1") != NULL,
               "%s", reported(&l));
    }
    finish(&l);
}

static void verify_should_stop_at_the_first_counter_example(void)
{
    struct loaded l;
    struct ring r = ring_ok;
    r.to = "(rank + 2) % p";
    load_ring(&l, r);
    CHECK(l.rc == 0);
    if (l.rc == 0) {
        set_p_range(&l.opt, 1, 30);
        struct cg_verify_stats st = { 0 };
        CHECK(cg_verify(&l.g, &l.s, &st) != 0);
        CHECK(l.g.diag.errors == 1);
        CHECK(st.runs == 2); /* p = 1 passes; at p = 2 (rank + 2) % p is rank itself */
    }
    finish(&l);
}

static void verify_should_try_every_root_up_to_its_limit_and_four_above(void)
{
    struct loaded l;
    load_text(&l, "{\n"
                  "  \"schedule\": \"bcast_t\", \"collective\": \"bcast\", \"summary\": \"s\",\n"
                  "  \"blocks\": 1,\n"
                  "  \"phases\": [ { \"phase\": \"flat\", \"rounds\": { \"var\": \"i\", \"from\": 1, \"to\": \"p - 1\" },\n"
                  "    \"steps\": [ { \"step\": \"exchange\",\n"
                  "      \"send\": { \"when\": \"rank == root\", \"to\": \"(root + i) % p\", \"buf\": \"out\", \"blocks\": \"all\" },\n"
                  "      \"recv\": { \"when\": \"rank == (root + i) % p\", \"from\": \"root\", \"buf\": \"out\", \"blocks\": \"all\" } } ] } ]\n"
                  "}\n");
    CHECKF(l.rc == 0, "%s", reported(&l));
    if (l.rc == 0) {
        set_p_range(&l.opt, 1, 10);
        l.opt.all_roots_max_p = 6;
        struct cg_verify_stats st = { 0 };
        CHECK(cg_verify(&l.g, &l.s, &st) == 0);
        /* 1 + 2 + ... + 6 roots, then roots 0, 1, p/2, p-1 for p = 7..10. */
        CHECKF(st.runs == 21 + 4 * 4, "%ld runs", st.runs);
    }
    finish(&l);
}

static void verify_should_reject_blocks_that_depend_on_rank(void)
{
    struct loaded l;
    load_text(&l, "{\n"
                  "  \"schedule\": \"allreduce_t\", \"collective\": \"allreduce\", \"summary\": \"s\",\n"
                  "  \"blocks\": \"rank % 2 + 1\", \"scratch\": 1,\n"
                  "  \"phases\": [ { \"phase\": \"a\", \"steps\": [ { \"step\": \"copy\",\n"
                  "    \"to\": { \"buf\": \"tmp\", \"blocks\": { \"block\": 0 } },\n"
                  "    \"from\": { \"buf\": \"out\", \"blocks\": { \"block\": 0 } } } ] } ]\n"
                  "}\n");
    CHECKF(l.rc == 0, "%s", reported(&l));
    if (l.rc == 0) {
        CHECK(cg_verify_one(&l.g, &l.s, 1, 0) == 0);
        CHECK(cg_verify_one(&l.g, &l.s, 2, 0) != 0);
        CHECKF(reported_at(&l, "3:14: error: p=2 rank 1: \"blocks\" is 2 here but 1 on rank 0; it "
                               "must not depend on rank\n"),
               "%s", reported(&l));
    }
    finish(&l);
}

/* A dissemination barrier: round k merges the token of rank - 2^k. From
 * p = 3 on, the last round brings ranks the token already holds. */
static const char barrier_text[] =
    "{\n"
    "  \"schedule\": \"barrier_t\", \"collective\": \"barrier\", \"summary\": \"s\", \"scratch\": 1,\n"
    "  \"phases\": [ { \"phase\": \"d\", \"rounds\": { \"var\": \"k\", \"count\": \"%s\" },\n"
    "    \"steps\": [\n"
    "      { \"step\": \"exchange\",\n"
    "        \"send\": { \"to\": \"(rank + (1 << k)) %% p\", \"buf\": \"out\", \"blocks\": \"all\" },\n"
    "        \"recv\": { \"from\": \"(rank - (1 << k)) %% p\", \"buf\": \"tmp\", \"blocks\": \"all\" } },\n"
    "      { \"step\": \"reduce\", \"into\": { \"buf\": \"out\", \"blocks\": \"all\" },\n"
    "        \"from\": { \"buf\": \"tmp\", \"blocks\": \"all\" } } ] } ]\n"
    "}\n";

static void verify_should_merge_barrier_tokens_as_a_union_of_ranks(void)
{
    struct loaded l;
    char text[2048];
    snprintf(text, sizeof(text), barrier_text, "ceil_log2(p)");
    load_text(&l, text);
    CHECKF(l.rc == 0, "%s", reported(&l));
    if (l.rc == 0) {
        /* "blocks" is fixed at one token block. */
        CHECK(l.s.blocks != NULL && l.s.blocks->kind == CG_E_NUM && l.s.blocks->num == 1);
        /* At p = 3 round 1 brings rank 1 ranks {2, 0} into {0, 1}: an overlap,
         * which for an op would be a double reduction. */
        for (int p = 1; p <= 20; p++) {
            CHECKF(cg_verify_one(&l.g, &l.s, p, 0) == 0, "p=%d: %s", p, reported(&l));
        }
    }
    finish(&l);
    snprintf(text, sizeof(text), barrier_text, "ceil_log2(p) - 1");
    load_text(&l, text);
    if (l.rc == 0) {
        CHECK(cg_verify_one(&l.g, &l.s, 2, 0) != 0);
        CHECKF(reported_at(&l, "3:15: error: p=2 rank 0: wrong result: at the end, out block 0 "
                               "holds block 0 with the contribution of rank 0; expected block 0 "
                               "with the contribution of ranks 0..1 (no step wrote it; this is "
                               "the last phase)\n"),
               "%s", reported(&l));
    }
    finish(&l);
}

static void verify_should_accept_an_exchange_step_that_no_rank_posts(void)
{
    /* Every send and receive has a false "when", so the step instance has
     * no message at all; the ring before it does the work. (The verifier
     * once did arithmetic on its NULL message array here, which UBSan
     * reports: tests/run_sanitize.sh runs this test under it.) */
    struct loaded l;
    load_text(&l, "{\n"
                  "  \"schedule\": \"allgather_t\", \"collective\": \"allgather\", \"summary\": \"s\",\n"
                  "  \"phases\": [\n"
                  "    { \"phase\": \"idle\", \"steps\": [ { \"step\": \"exchange\",\n"
                  "      \"send\": { \"when\": \"rank < 0\", \"to\": \"0\", \"buf\": \"out\", \"blocks\": { \"block\": \"0\" } },\n"
                  "      \"recv\": { \"when\": \"rank < 0\", \"from\": \"0\", \"buf\": \"out\", \"blocks\": { \"block\": \"0\" } } } ] },\n"
                  "    { \"phase\": \"ring\", \"rounds\": { \"var\": \"r\", \"count\": \"p - 1\" },\n"
                  "      \"steps\": [ { \"step\": \"exchange\",\n"
                  "        \"send\": { \"to\": \"(rank + 1) % p\", \"buf\": \"out\", \"blocks\": { \"block\": \"(rank - r) % p\" } },\n"
                  "        \"recv\": { \"from\": \"(rank - 1) % p\", \"buf\": \"out\", \"blocks\": { \"block\": \"(rank - r - 1) % p\" } } } ] }\n"
                  "  ]\n"
                  "}\n");
    CHECKF(l.rc == 0, "%s", reported(&l));
    if (l.rc == 0) {
        set_p_range(&l.opt, 1, 8);
        CHECKF(cg_verify(&l.g, &l.s, NULL) == 0, "%s", reported(&l));
    }
    finish(&l);
}

static void verify_should_check_reduce_and_gather_only_at_the_root(void)
{
    struct loaded l;
    /* A linear gather: right for every root, though the non-roots' out
     * holds just their own block. */
    load_text(&l, "{\n"
                  "  \"schedule\": \"gather_t\", \"collective\": \"gather\", \"summary\": \"s\",\n"
                  "  \"phases\": [ { \"phase\": \"flat\", \"rounds\": { \"var\": \"i\", \"from\": 1, \"to\": \"p - 1\" },\n"
                  "    \"steps\": [ { \"step\": \"exchange\",\n"
                  "      \"send\": { \"when\": \"rank == (root + i) % p\", \"to\": \"root\", \"buf\": \"out\", \"blocks\": { \"block\": \"rank\" } },\n"
                  "      \"recv\": { \"when\": \"rank == root\", \"from\": \"(root + i) % p\", \"buf\": \"out\", \"blocks\": { \"block\": \"(root + i) % p\" } } } ] } ]\n"
                  "}\n");
    CHECKF(l.rc == 0, "%s", reported(&l));
    if (l.rc == 0) {
        set_p_range(&l.opt, 1, 12);
        CHECKF(cg_verify(&l.g, &l.s, NULL) == 0, "%s", reported(&l));
    }
    finish(&l);
    /* A reduce that reduces nothing: right only where p == 1. */
    load_text(&l, "{\n"
                  "  \"schedule\": \"reduce_t\", \"collective\": \"reduce\", \"summary\": \"s\",\n"
                  "  \"blocks\": 1, \"scratch\": 1,\n"
                  "  \"phases\": [ { \"phase\": \"a\", \"steps\": [ { \"step\": \"copy\",\n"
                  "    \"to\": { \"buf\": \"tmp\", \"blocks\": \"all\" },\n"
                  "    \"from\": { \"buf\": \"out\", \"blocks\": \"all\" } } ] } ]\n"
                  "}\n");
    CHECKF(l.rc == 0, "%s", reported(&l));
    if (l.rc == 0) {
        CHECK(cg_verify_one(&l.g, &l.s, 1, 0) == 0);
        CHECK(cg_verify_one(&l.g, &l.s, 3, 2) != 0);
        /* Only the root is reported: the other ranks' out does not matter. */
        CHECKF(reported_at(&l, "4:15: error: p=3 root=2 rank 2: wrong result: at the end, out "
                               "block 0 holds block 0 with the contribution of rank 2; expected "
                               "block 0 with the contribution of ranks 0..2"),
               "%s", reported(&l));
        CHECK(l.g.diag.errors == 1);
    }
    finish(&l);
}

/* A linear scatter that stages each outgoing block in out block 0 and copies
 * its own block last (the schedule of tests/gen/bad/scatter_in_place_staged.json):
 * right out of place, wrong when the root is called in place, where out is
 * its block of sendbuf. */
static const char scatter_staged[] =
    "{\n"
    "  \"schedule\": \"scatter_t\", \"collective\": \"scatter\", \"summary\": \"s\",\n"
    "  \"phases\": [\n"
    "    { \"phase\": \"linear\", \"rounds\": { \"var\": \"r\", \"from\": \"1\", \"to\": \"p - 1\" },\n"
    "      \"let\": { \"dst\": \"(root + r) % p\" },\n"
    "      \"steps\": [\n"
    "        { \"step\": \"copy\", \"when\": \"rank == root\",\n"
    "          \"to\": { \"buf\": \"out\", \"blocks\": { \"block\": \"0\" } },\n"
    "          \"from\": { \"buf\": \"in\", \"blocks\": { \"block\": \"dst\" } } },\n"
    "        { \"step\": \"exchange\",\n"
    "          \"send\": { \"when\": \"rank == root\", \"to\": \"dst\", \"buf\": \"out\", \"blocks\": { \"block\": \"0\" } },\n"
    "          \"recv\": { \"when\": \"rank == dst\", \"from\": \"root\", \"buf\": \"out\", \"blocks\": { \"block\": \"0\" } } } ] },\n"
    "    { \"phase\": \"own\", \"when\": \"rank == root\",\n"
    "      \"steps\": [ { \"step\": \"copy\",\n"
    "        \"to\": { \"buf\": \"out\", \"blocks\": { \"block\": \"0\" } },\n"
    "        \"from\": { \"buf\": \"in\", \"blocks\": { \"block\": \"root\" } } } ] }\n"
    "  ]\n"
    "}\n";

static void verify_should_reject_a_scatter_that_stages_through_out_when_the_root_is_in_place(void)
{
    struct loaded l;
    load_text(&l, scatter_staged);
    CHECKF(l.rc == 0, "%s", reported(&l));
    if (l.rc == 0) {
        /* p = 3, root 0 (the case seen at run time: sendbuf[root] = 102,
         * expected 100): out of place it is right, so the first (and only)
         * error is the in-place run's, at the staging copy that wrote the
         * root's block last. */
        CHECK(cg_verify_one(&l.g, &l.s, 3, 0) != 0);
        CHECKF(reported_at(&l, "7:9: error: p=3 root=0 MPI_IN_PLACE rank 0: wrong result: at "
                               "the end, out block 0 holds block 2 with the contribution of "
                               "rank 0; expected block 0 with the contribution of rank 0 (this "
                               "step wrote it last) (called in place, the root's out block 0 "
                               "is its in block 0: one memory, so writing one overwrites the "
                               "other)"),
               "%s", reported(&l));
        CHECK(l.g.diag.errors == 1);
        /* Every root fails in place, from p = 2 on. */
        for (int p = 2; p <= 6; p++) {
            for (int root = 0; root < p; root++) {
                CHECKF(cg_verify_one(&l.g, &l.s, p, root) != 0, "p=%d root=%d", p, root);
            }
        }
        CHECK(cg_verify_one(&l.g, &l.s, 1, 0) == 0);
    }
    finish(&l);
}

static void verify_should_prove_scatter_in_both_modes_and_other_collectives_once(void)
{
    /* Only scatter's in-place form aliases two buffers (verify.c,
     * in_place_alias), so it runs every configuration twice. */
    const char *files[] = { "schedules/scatter/linear.json", "schedules/scatter/binomial.json",
                            "schedules/gather/linear.json", "schedules/allgather/ring.json",
                            RING };
    const long want[] = { 2, 2, 1, 1, 16 }; /* the ring: its param segments, 1..16 */
    for (int k = 0; k < 5; k++) {
        struct loaded l;
        load_file(&l, files[k]);
        CHECKF(l.rc == 0, "%s: %s", files[k], reported(&l));
        if (l.rc == 0) {
            set_p_range(&l.opt, 1, 6);
            struct cg_verify_stats st = { 0 };
            CHECKF(cg_verify(&l.g, &l.s, &st) == 0, "%s: %s", files[k], reported(&l));
            /* p = 1..6, every root for rooted collectives: 21 (p, root) pairs. */
            long pairs = cg_colls[l.s.coll].rooted ? 21 : 6;
            CHECKF(st.runs == want[k] * pairs, "%s: %ld runs", files[k], st.runs);
        }
        finish(&l);
    }
}

static void verify_should_require_the_exclusive_prefix_except_at_rank_0(void)
{
    struct loaded l;
    /* Every rank copies its own input into out: wrong from rank 1 on, and
     * rank 0 (undefined in MPI) is not what is reported. */
    load_text(&l, "{\n"
                  "  \"schedule\": \"exscan_t\", \"collective\": \"exscan\", \"summary\": \"s\",\n"
                  "  \"blocks\": 2,\n"
                  "  \"phases\": [ { \"phase\": \"a\", \"steps\": [ { \"step\": \"copy\",\n"
                  "    \"to\": { \"buf\": \"out\", \"blocks\": \"all\" },\n"
                  "    \"from\": { \"buf\": \"in\", \"blocks\": \"all\" } } ] } ]\n"
                  "}\n");
    CHECKF(l.rc == 0, "%s", reported(&l));
    if (l.rc == 0) {
        CHECK(cg_verify_one(&l.g, &l.s, 1, 0) == 0);
        CHECK(cg_verify_one(&l.g, &l.s, 2, 0) != 0);
        CHECKF(reported_at(&l, "4:42: error: p=2 rank 1: wrong result: at the end, out block 0 "
                               "holds block 0 with the contribution of rank 1; expected block 0 "
                               "with the contribution of rank 0 (this step wrote it last)\n"),
               "%s", reported(&l));
    }
    finish(&l);
}

static void verify_should_reject_an_alltoall_block_delivered_to_the_wrong_rank(void)
{
    struct loaded l;
    /* Sends the block meant for rank + r + 1 to rank + r. */
    load_text(&l, "{\n"
                  "  \"schedule\": \"alltoall_t\", \"collective\": \"alltoall\", \"summary\": \"s\",\n"
                  "  \"phases\": [\n"
                  "    { \"phase\": \"own\", \"steps\": [ { \"step\": \"copy\",\n"
                  "      \"to\": { \"buf\": \"out\", \"blocks\": { \"block\": \"rank\" } },\n"
                  "      \"from\": { \"buf\": \"in\", \"blocks\": { \"block\": \"rank\" } } } ] },\n"
                  "    { \"phase\": \"pairs\", \"rounds\": { \"var\": \"r\", \"from\": 1, \"to\": \"p - 1\" },\n"
                  "      \"steps\": [ { \"step\": \"exchange\",\n"
                  "        \"send\": { \"to\": \"(rank + r) % p\", \"buf\": \"in\", \"blocks\": { \"block\": \"(rank + r + 1) % p\" } },\n"
                  "        \"recv\": { \"from\": \"(rank - r) % p\", \"buf\": \"out\", \"blocks\": { \"block\": \"(rank - r) % p\" } } } ] } ]\n"
                  "}\n");
    CHECKF(l.rc == 0, "%s", reported(&l));
    if (l.rc == 0) {
        CHECK(cg_verify_one(&l.g, &l.s, 1, 0) == 0);
        CHECK(cg_verify_one(&l.g, &l.s, 3, 0) != 0);
        CHECKF(reported_at(&l, "10:17: error: p=3 rank 0: wrong result: at the end, out block 1 "
                               "holds block 1 with the contribution of rank 1; expected block 0 "
                               "with the contribution of rank 1 (this step wrote it last)\n"),
               "%s", reported(&l));
    }
    finish(&l);
}

/* ---- sim.c --------------------------------------------------------------- */

static void sim_should_stop_beyond_the_round_limit_with_a_clear_error(void)
{
    struct loaded l;
    struct ring r = ring_ok;
    r.count = "p * 1000000";
    load_ring(&l, r);
    CHECK(l.rc == 0);
    if (l.rc == 0) {
        clock_t t0 = clock();
        CHECK(cg_verify_one(&l.g, &l.s, 2, 0) != 0);
        /* It refuses before it simulates. */
        CHECK((double)(clock() - t0) / CLOCKS_PER_SEC < 1.0);
        CHECK(l.g.diag.errors == 1);
        CHECKF(reported_at(&l, "6:34: error: p=2 rank 0, phase 'ring': 2000000 rounds; at most "
                               "1000000 are simulated\n"),
               "%s", reported(&l));
    }
    finish(&l);
}

static void sim_should_stop_where_the_work_of_several_runs_passes_their_budget(void)
{
    struct loaded l;
    load_ring(&l, ring_ok);
    CHECK(l.rc == 0);
    if (l.rc == 0) {
        struct cg_sim_consumer none = { 0 };
        int64_t work = 0;
        struct cg_sim_cfg cfg = { 8, 0, 0, NULL, 0, &work, 0, 0, NULL };
        CHECK(cg_sim_run_cfg(&l.g, &l.s, &cfg, &none) == 0);
        /* 7 rounds and 7 step instances at p = 8, each 10 + 8, and 16
         * blocks moved per step (8 sends, 8 receives of one block). */
        int64_t one = work;
        CHECKF(one == 7 * 18 + 7 * (18 + 16), "%lld", (long long)one);
        /* A second run within a budget of 1.5 runs stops half-way, where
         * the total passes it, and says so at the step. */
        cfg.work_max = one + one / 2;
        CHECK(cg_sim_run_cfg(&l.g, &l.s, &cfg, &none) != 0);
        CHECK(work > cfg.work_max && work < 2 * one);
        CHECKF(reported_at(&l, "8:9: error: p=8, phase 'ring' round r=3, step 'exchange': the "
                               "verification "
                               "stops here: proving the schedule for every p, root and mode so "
                               "far needs more than 546 units of work"),
               "%s", reported(&l));
        CHECK(l.g.diag.errors == 1);
    }
    finish(&l);
}

/* A ring allgather whose peer and blocks come from lets: "me" from rank
 * (so every let computed from it differs between ranks, though a round's
 * "k" does not), and a last phase let, `%s`. */
static const char lets_text[] =
    "{\n"
    "  \"schedule\": \"allgather_t\", \"collective\": \"allgather\", \"summary\": \"s\",\n"
    "  \"let\": { \"me\": \"rank\", \"q\": \"p\" },\n"
    "  \"phases\": [ { \"phase\": \"ring\", \"rounds\": { \"var\": \"r\", \"count\": \"q - 1\" },\n"
    "    \"let\": { \"k\": \"r\", \"nxt\": \"(me + 1) %% q\", \"z\": \"%s\" },\n"
    "    \"steps\": [ { \"step\": \"exchange\",\n"
    "      \"send\": { \"to\": \"nxt\", \"buf\": \"out\", \"blocks\": { \"block\": \"(me - k) %% q\" } },\n"
    "      \"recv\": { \"from\": \"(me - 1) %% q\", \"buf\": \"out\",\n"
    "        \"blocks\": { \"block\": \"(me - k - 1) %% q\" } } } ] } ]\n"
    "}\n";

/* The simulator evaluates each expression for many ranks at once, and what
 * does not depend on rank only once: lets computed from rank must still
 * differ per rank, and an evaluation that fails on one rank only must be
 * reported there, as the tree evaluator would. */
static void sim_should_evaluate_lets_per_rank_and_report_the_rank_that_fails(void)
{
    char text[2048];
    struct loaded l;
    snprintf(text, sizeof(text), lets_text, "k");
    load_text(&l, text);
    CHECKF(l.rc == 0, "%s", reported(&l));
    for (int p = 1; p <= 16 && l.rc == 0; p++) {
        CHECKF(cg_verify_one(&l.g, &l.s, p, 0) == 0, "p=%d: %s", p, reported(&l));
    }
    finish(&l);
    snprintf(text, sizeof(text), lets_text, "100 / (3 - me)");
    load_text(&l, text);
    CHECKF(l.rc == 0, "%s", reported(&l));
    if (l.rc == 0) {
        CHECK(cg_verify_one(&l.g, &l.s, 3, 0) == 0);
        CHECK(cg_verify_one(&l.g, &l.s, 4, 0) != 0);
        CHECKF(reported_at(&l, "5:53: error: p=4 rank 3, phase 'ring' round r=0: division by "
                               "zero in '100 / (3 - me)'\n"),
               "%s", reported(&l));
    }
    finish(&l);
}

/* cg_range_bytes (analyse.c) in constant time against the block-by-block
 * sum it replaced, over uneven blocks, wrapping and strided ranges and
 * buffers of several turns of B (uniform collectives: out has p blocks of B). */
static void range_bytes_should_equal_the_sum_over_blocks(void)
{
    unsigned seed = 12345;
    int cases = 0, wrong = 0;
    for (long B = 1; B <= 13; B++) {
        for (long turns = 1; turns <= 3; turns++) {
            for (size_t vec = 0; vec <= 40; vec += 3) {
                struct cg_bytes b;
                memset(&b, 0, sizeof(b));
                b.vec = vec;
                b.elem = 8;
                b.blocks = B;
                b.nb[CG_BUF_OUT] = B * turns;
                b.nb[CG_BUF_TMP] = B * turns + 1; /* not a multiple: the slow path */
                for (int k = 0; k < 40; k++) {
                    seed = seed * 1103515245u + 12345u;
                    enum cg_bufid buf = (seed >> 16) & 1 ? CG_BUF_OUT : CG_BUF_TMP;
                    long nb = b.nb[buf];
                    struct cg_sim_range r = { buf, (long)((seed >> 8) % (unsigned)nb),
                                              (long)((seed >> 3) % (unsigned)(nb + 1)), 1 };
                    /* A third of the cases strided (2 or 3), cut to distinct blocks. */
                    long stride = 1 + (long)((seed >> 20) % 3u);
                    if (stride > 1 && nb > 1) {
                        long g = nb, t = stride % nb;
                        while (t != 0) {
                            long u = g % t;
                            g = t;
                            t = u;
                        }
                        r.stride = stride % nb;
                        r.n = r.n < nb / g ? r.n : nb / g;
                    }
                    size_t want = 0, base = vec / (size_t)B, rem = vec % (size_t)B;
                    for (long i = 0; i < r.n; i++) {
                        long j = ((r.first + i * (r.stride > 1 ? r.stride : 1)) % nb) % B;
                        want += base + ((size_t)j < rem ? 1 : 0);
                    }
                    cases++;
                    wrong += cg_range_bytes(&b, &r) != (double)want * 8;
                }
            }
        }
    }
    CHECK(cases > 10000 && wrong == 0);
}

static void sim_should_size_each_buffer_for_its_collective(void)
{
    CHECK(cg_sim_nblocks(CG_C_ALLREDUCE, CG_BUF_OUT, 5, 7, 3) == 7);
    CHECK(cg_sim_nblocks(CG_C_ALLREDUCE, CG_BUF_IN, 5, 7, 3) == 0);
    CHECK(cg_sim_nblocks(CG_C_ALLREDUCE, CG_BUF_TMP, 5, 7, 3) == 3);
    CHECK(cg_sim_nblocks(CG_C_ALLGATHER, CG_BUF_OUT, 5, 7, 0) == 5);
    CHECK(cg_sim_nblocks(CG_C_REDUCE_SCATTER_BLOCK, CG_BUF_IN, 5, 5, 0) == 5);
    CHECK(cg_sim_nblocks(CG_C_REDUCE_SCATTER_BLOCK, CG_BUF_OUT, 5, 5, 0) == 1);
    CHECK(cg_sim_nblocks(CG_C_BCAST, CG_BUF_OUT, 5, 2, 0) == 2);
    CHECK(cg_sim_nblocks(CG_C_REDUCE, CG_BUF_OUT, 5, 3, 0) == 3);
    CHECK(cg_sim_nblocks(CG_C_REDUCE, CG_BUF_IN, 5, 3, 0) == 0);
    CHECK(cg_sim_nblocks(CG_C_GATHER, CG_BUF_OUT, 5, 5, 0) == 5);
    CHECK(cg_sim_nblocks(CG_C_SCATTER, CG_BUF_IN, 5, 5, 0) == 5);
    CHECK(cg_sim_nblocks(CG_C_SCATTER, CG_BUF_OUT, 5, 5, 0) == 1);
    CHECK(cg_sim_nblocks(CG_C_ALLTOALL, CG_BUF_IN, 5, 5, 0) == 5);
    CHECK(cg_sim_nblocks(CG_C_ALLTOALL, CG_BUF_OUT, 5, 5, 0) == 5);
    CHECK(cg_sim_nblocks(CG_C_SCAN, CG_BUF_OUT, 5, 4, 0) == 4);
    CHECK(cg_sim_nblocks(CG_C_EXSCAN, CG_BUF_IN, 5, 4, 0) == 4);
    CHECK(cg_sim_nblocks(CG_C_EXSCAN, CG_BUF_OUT, 5, 4, 0) == 4);
    CHECK(cg_sim_nblocks(CG_C_BARRIER, CG_BUF_OUT, 5, 1, 2) == 1);
    CHECK(cg_sim_nblocks(CG_C_BARRIER, CG_BUF_TMP, 5, 1, 2) == 2);
    char buf[64];
    struct cg_sim_range r = { CG_BUF_OUT, 3, 1, 1 };
    cg_sim_range_str(&r, 8, buf, sizeof(buf));
    CHECKF(strcmp(buf, "out[3]") == 0, "%s", buf);
    r = (struct cg_sim_range){ CG_BUF_TMP, 2, 3, 1 };
    cg_sim_range_str(&r, 8, buf, sizeof(buf));
    CHECKF(strcmp(buf, "tmp[2..4]") == 0, "%s", buf);
    r = (struct cg_sim_range){ CG_BUF_IN, 0, 0, 1 };
    cg_sim_range_str(&r, 8, buf, sizeof(buf));
    CHECKF(strcmp(buf, "in[]") == 0, "%s", buf);
}


/* ---- call steps ---------------------------------------------------------- */

/* Allreduce as native reduce_scatter_block + allgather, B = p (uneven blocks):
 * the call's reduction merges every rank's contribution, in rank order. */
static void verify_should_merge_contributions_in_a_reduce_scatter_block_call(void)
{
    struct loaded l;
    load_text(&l, "{\n"
                  "  \"schedule\": \"allreduce_t\", \"collective\": \"allreduce\", \"summary\": \"s\",\n"
                  "  \"blocks\": \"p\", \"scratch\": \"p\",\n"
                  "  \"phases\": [ { \"phase\": \"a\", \"steps\": [\n"
                  "    { \"step\": \"call\", \"collective\": \"reduce_scatter_block\", \"use\": \"native\",\n"
                  "      \"send\": { \"buf\": \"out\", \"blocks\": \"all\" },\n"
                  "      \"recv\": { \"buf\": \"tmp\", \"blocks\": { \"block\": \"rank\" } } },\n"
                  "    { \"step\": \"call\", \"collective\": \"allgather\", \"use\": \"native\",\n"
                  "      \"send\": { \"buf\": \"tmp\", \"blocks\": { \"block\": \"rank\" } },\n"
                  "      \"recv\": { \"buf\": \"out\", \"blocks\": \"all\" } } ] } ]\n"
                  "}\n");
    CHECKF(l.rc == 0, "%s", reported(&l));
    if (l.rc == 0) {
        set_p_range(&l.opt, 1, 20);
        CHECKF(cg_verify(&l.g, &l.s, NULL) == 0, "%s", reported(&l));
    }
    finish(&l);
    /* Without the allgather, every block but the own one is still the
     * rank's own input: the final check names what is missing. */
    load_text(&l, "{\n"
                  "  \"schedule\": \"allreduce_t\", \"collective\": \"allreduce\", \"summary\": \"s\",\n"
                  "  \"blocks\": \"p\", \"scratch\": \"p\",\n"
                  "  \"phases\": [ { \"phase\": \"a\", \"steps\": [\n"
                  "    { \"step\": \"call\", \"collective\": \"reduce_scatter_block\", \"use\": \"native\",\n"
                  "      \"send\": { \"buf\": \"out\", \"blocks\": \"all\" },\n"
                  "      \"recv\": { \"buf\": \"tmp\", \"blocks\": { \"block\": \"rank\" } } } ] } ]\n"
                  "}\n");
    CHECKF(l.rc == 0, "%s", reported(&l));
    if (l.rc == 0) {
        CHECK(cg_verify_one(&l.g, &l.s, 2, 0) != 0);
        CHECKF(strstr(reported(&l), "wrong result: at the end, out block 0 holds block 0 with "
                                    "the contribution of rank 0; expected block 0 with the "
                                    "contribution of ranks 0..1") != NULL, "%s", reported(&l));
    }
    finish(&l);
}

/* Ranks 0 and 1 swap inputs, then allreduce them: MPI reduces in rank order,
 * so rank 1's data would come first; only a commutative op allows that. */
static const char call_swap_fmt[] =
    "{\n"
    "  \"schedule\": \"allreduce_t\", \"collective\": \"allreduce\", \"summary\": \"s\",\n"
    "  %s\"blocks\": 1, \"scratch\": 1,\n"
    "  \"phases\": [ { \"phase\": \"a\", \"steps\": [\n"
    "    { \"step\": \"exchange\", \"send\": { \"to\": \"rank ^ 1\", \"buf\": \"out\", \"blocks\": \"all\" },\n"
    "      \"recv\": { \"from\": \"rank ^ 1\", \"buf\": \"tmp\", \"blocks\": \"all\" } },\n"
    "    { \"step\": \"call\", \"collective\": \"allreduce\", \"use\": \"native\",\n"
    "      \"send\": { \"buf\": \"tmp\", \"blocks\": \"all\" },\n"
    "      \"recv\": { \"buf\": \"out\", \"blocks\": \"all\" } } ] } ]\n"
    "}\n";

static void verify_should_check_the_rank_order_of_a_call_s_reduction(void)
{
    struct loaded l;
    char text[2048];
    snprintf(text, sizeof(text), call_swap_fmt, "");
    load_text(&l, text);
    CHECKF(l.rc == 0, "%s", reported(&l));
    if (l.rc == 0) {
        CHECK(cg_verify_one(&l.g, &l.s, 2, 0) != 0);
        CHECKF(reported_at(&l, "7:5: error: p=2 rank 1, phase 'a', step 'call': operand order: "
                               "the call reduces in rank order, and tmp block 0 holds rank 0, "
                               "which does not follow rank 1"), "%s", reported(&l));
    }
    finish(&l);
    snprintf(text, sizeof(text), call_swap_fmt, "\"requires\": { \"commutative\": true }, ");
    load_text(&l, text);
    CHECKF(l.rc == 0, "%s", reported(&l));
    if (l.rc == 0) {
        CHECKF(cg_verify_one(&l.g, &l.s, 2, 0) == 0, "%s", reported(&l));
        CHECKF(cg_verify_one(&l.g, &l.s, 4, 0) == 0, "%s", reported(&l));
    }
    finish(&l);
}

/* Scan as exscan + a local reduce: the exscan gives rank r ranks 0..r-1 and
 * rank 0 nothing, so rank 0 must not reduce. */
static void verify_should_give_an_exscan_call_the_exclusive_prefix(void)
{
    struct loaded l;
    static const char fmt[] =
        "{\n"
        "  \"schedule\": \"scan_t\", \"collective\": \"scan\", \"summary\": \"s\",\n"
        "  \"blocks\": 1, \"scratch\": 1,\n"
        "  \"phases\": [ { \"phase\": \"a\", \"steps\": [\n"
        "    { \"step\": \"call\", \"collective\": \"exscan\", \"use\": \"native\",\n"
        "      \"send\": { \"buf\": \"out\", \"blocks\": \"all\" },\n"
        "      \"recv\": { \"buf\": \"tmp\", \"blocks\": \"all\" } },\n"
        "    { \"step\": \"reduce\", \"when\": \"%s\", \"order\": \"from_into\",\n"
        "      \"into\": { \"buf\": \"out\", \"blocks\": \"all\" }, \"from\": { \"buf\": \"tmp\", \"blocks\": \"all\" } } ] } ]\n"
        "}\n";
    char text[2048];
    snprintf(text, sizeof(text), fmt, "rank > 0");
    load_text(&l, text);
    CHECKF(l.rc == 0, "%s", reported(&l));
    if (l.rc == 0) {
        set_p_range(&l.opt, 1, 20);
        CHECKF(cg_verify(&l.g, &l.s, NULL) == 0, "%s", reported(&l));
    }
    finish(&l);
    snprintf(text, sizeof(text), fmt, "rank >= 0");
    load_text(&l, text);
    CHECKF(l.rc == 0, "%s", reported(&l));
    if (l.rc == 0) {
        CHECK(cg_verify_one(&l.g, &l.s, 2, 0) != 0);
        CHECKF(strstr(reported(&l), "rank 0, phase 'a', step 'reduce': reads tmp block 0, which "
                                    "holds no data yet") != NULL, "%s", reported(&l));
    }
    finish(&l);
}


/* Allreduce within colour groups rank / 2, then rank % 2: right when every
 * lane meets every pair (p even), short of rank p-1 on lane 1 otherwise. */
static void verify_should_apply_a_call_to_each_colour_group_on_its_own(void)
{
    struct loaded l;
    load_text(&l, "{\n"
                  "  \"schedule\": \"allreduce_t\", \"collective\": \"allreduce\", \"summary\": \"s\",\n"
                  "  \"blocks\": 1,\n"
                  "  \"phases\": [ { \"phase\": \"a\", \"steps\": [\n"
                  "    { \"step\": \"call\", \"collective\": \"allreduce\", \"use\": \"native\",\n"
                  "      \"group\": { \"color\": \"rank / 2\" },\n"
                  "      \"send\": { \"buf\": \"out\", \"blocks\": \"all\" }, \"recv\": { \"buf\": \"out\", \"blocks\": \"all\" } },\n"
                  "    { \"step\": \"call\", \"collective\": \"allreduce\", \"use\": \"native\",\n"
                  "      \"group\": { \"color\": \"rank % 2\" },\n"
                  "      \"send\": { \"buf\": \"out\", \"blocks\": \"all\" }, \"recv\": { \"buf\": \"out\", \"blocks\": \"all\" } } ] } ]\n"
                  "}\n");
    CHECKF(l.rc == 0, "%s", reported(&l));
    if (l.rc == 0) {
        CHECKF(cg_verify_one(&l.g, &l.s, 2, 0) == 0, "%s", reported(&l));
        CHECKF(cg_verify_one(&l.g, &l.s, 8, 0) == 0, "%s", reported(&l));
        CHECK(cg_verify_one(&l.g, &l.s, 3, 0) != 0);
        CHECKF(strstr(reported(&l), "p=3 rank 1: wrong result: at the end, out block 0 holds "
                                    "block 0 with the contribution of ranks 0..1; expected block "
                                    "0 with the contribution of ranks 0..2") != NULL,
               "%s", reported(&l));
    }
    finish(&l);
}

/* ---- analyse.c ----------------------------------------------------------- */

static void analyse_should_count_6_rounds_and_24_messages_for_ring_allreduce_at_p_4(void)
{
    struct loaded l;
    load_file(&l, RING);
    CHECK(l.rc == 0);
    if (l.rc == 0) {
        struct cg_model m;
        cg_model_init(&m);
        struct cg_analysis a;
        CHECK(cg_analyse(&l.g, &l.s, 4, 0, 1000, 8, &m, NULL, 0, "", &a) == 0);
        CHECK(a.p == 4 && a.count == 1000 && a.elem_size == 8);
        CHECK(a.rounds == 6);
        CHECK(a.messages == 24);
        /* 1000 doubles in 4 blocks of 250: each rank sends one block a round. */
        CHECKF(a.sent_max_B == 6 * 250 * 8 && a.sent_sum_B == 4 * 6 * 250 * 8, "%g %g",
               a.sent_max_B, a.sent_sum_B);
        CHECK(a.recv_max_B == 6 * 250 * 8);
        CHECK(a.reduce_max_B == 3 * 250 * 8 && a.reduce_sum_B == 4 * 3 * 250 * 8);
        CHECK(a.copy_sum_B == 0);
        /* alpha 1 us a round; beta 0.1 ns/B on 2000 B; gamma 0.2 ns/B on 2000 B. */
        CHECKF(a.t_alpha_us > 5.999 && a.t_alpha_us < 6.001, "%g", a.t_alpha_us);
        CHECKF(a.t_beta_us > 1.1999 && a.t_beta_us < 1.2001, "%g", a.t_beta_us);
        CHECKF(a.t_gamma_us > 1.1999 && a.t_gamma_us < 1.2001, "%g", a.t_gamma_us);
    }
    finish(&l);
}

static void analyse_should_count_uneven_blocks_by_their_real_size(void)
{
    struct loaded l;
    load_file(&l, RING);
    CHECK(l.rc == 0);
    if (l.rc == 0) {
        struct cg_model m;
        cg_model_init(&m);
        struct cg_analysis a;
        /* 1001 doubles: blocks of 251, 250, 250, 250. Ranks 0 and 1 send
         * block 0 twice (1502 elements), ranks 2 and 3 once (1501). */
        CHECK(cg_analyse(&l.g, &l.s, 4, 0, 1001, 8, &m, NULL, 0, "", &a) == 0);
        CHECKF(a.sent_max_B == 1502 * 8 && a.sent_sum_B == (2 * 1502 + 2 * 1501) * 8, "%g %g",
               a.sent_max_B, a.sent_sum_B);
    }
    finish(&l);
}

static void analyse_should_trace_one_line_per_step_instance_when_compact(void)
{
    struct loaded l;
    load_file(&l, RING);
    CHECK(l.rc == 0);
    if (l.rc == 0) {
        struct cg_model m;
        cg_model_init(&m);
        struct cg_analysis a;
        char *buf = NULL;
        size_t len = 0;
        FILE *trace = open_memstream(&buf, &len);
        CHECK(cg_analyse(&l.g, &l.s, 2, 0, 10, 4, &m, trace, 1, "> ", &a) == 0);
        fclose(trace);
        CHECKF(strcmp(buf, "> reduce_scatter r=0 exchange: 0->1 out[0]; 1->0 out[1];\n"
                           "> reduce_scatter r=0 reduce: 0: out[1] op= tmp[1]; 1: out[0] op= tmp[0];\n"
                           "> allgather r=0 exchange: 0->1 out[1]; 1->0 out[0];\n") == 0,
               "%s", buf);
        free(buf);
    }
    finish(&l);
}

/* ---- mutate.c ------------------------------------------------------------ */

static void mutate_should_kill_every_mutant_of_a_ring_allgather(void)
{
    struct loaded l;
    load_ring(&l, ring_ok);
    CHECK(l.rc == 0);
    if (l.rc == 0) {
        set_p_range(&l.opt, 1, 12);
        char *buf = NULL;
        size_t len = 0;
        FILE *report = open_memstream(&buf, &len);
        struct cg_mutate_stats st = { 0 };
        CHECK(cg_mutate(&l.g, &l.arena, &l.s, report, &st) == 0);
        fclose(report);
        /* One round short; peer and block off by one for the send and the
         * receive; the step dropped. */
        CHECKF(st.mutants == 6 && st.killed == 6 && st.equivalent == 0, "%d %d %d", st.mutants,
               st.killed, st.equivalent);
        CHECKF(len == 0, "%s", buf);
        /* Mutants are verified quietly and the schedule is restored. */
        CHECK(l.g.diag.errors == 0);
        CHECK(cg_verify(&l.g, &l.s, NULL) == 0);
        free(buf);
    }
    finish(&l);
}

static void mutate_should_kill_a_scatter_send_staged_through_out_in_place(void)
{
    /* scatter_linear's root sends in block dst; staged through out block 0
     * with its own block put back right after, it is right out of place
     * and wrong in place: the verifier's in-place run must kill it. */
    struct loaded l;
    load_file(&l, "schedules/scatter/linear.json");
    CHECK(l.rc == 0);
    if (l.rc == 0) {
        set_p_range(&l.opt, 1, 8);
        char *buf = NULL;
        size_t len = 0;
        FILE *report = open_memstream(&buf, &len);
        struct cg_mutate_stats st = { 0 };
        CHECK(cg_mutate(&l.g, &l.arena, &l.s, report, &st) == 0);
        fclose(report);
        CHECKF(st.mutants == 10 && st.killed == 10, "%d %d %d", st.mutants, st.killed,
               st.equivalent);
        CHECKF(len == 0, "%s", buf);
        /* The schedule is restored: it verifies, with its 2 phases and 2 steps. */
        CHECK(l.s.nphases == 2 && l.s.phases[1].nsteps == 1);
        CHECK(cg_verify(&l.g, &l.s, NULL) == 0);
        free(buf);
    }
    finish(&l);
}

static void mutate_should_list_an_order_flip_of_a_commutative_reduce_as_equivalent(void)
{
    struct loaded l;
    load_file(&l, RING);
    CHECK(l.rc == 0);
    if (l.rc == 0) {
        set_p_range(&l.opt, 1, 12);
        char *buf = NULL;
        size_t len = 0;
        FILE *report = open_memstream(&buf, &len);
        struct cg_mutate_stats st = { 0 };
        CHECK(cg_mutate(&l.g, &l.arena, &l.s, report, &st) == 0);
        fclose(report);
        CHECK(st.mutants == st.killed + st.equivalent);
        CHECKF(strstr(buf, ": equivalent mutant: reduce operand order flipped\n") != NULL, "%s",
               buf);
        CHECK(strstr(buf, "one round short") == NULL && strstr(buf, "step dropped") == NULL);
        free(buf);
    }
    finish(&l);
}

int main(void)
{
    RUN(json_positions_should_zip_onto_nested_values_and_keys);
    RUN(json_should_report_a_duplicate_key_with_the_first_definition);
    RUN(json_syntax_error_should_give_line_col_and_a_caret);
    RUN(read_file_should_say_a_directory_is_a_directory);
    RUN(json_should_reject_leading_zeros_and_read_integers_whole);
    RUN(json_should_find_a_duplicate_among_200000_keys_in_linear_time);
    RUN(parse_should_reject_an_unknown_key_in_a_step_at_the_key);
    RUN(check_should_reject_a_let_that_shadows_an_outer_name);
    RUN(check_should_reject_reserved_and_unsafe_names);
    RUN(check_should_accept_names_that_only_resemble_reserved_ones);
    RUN(check_should_bind_names_and_name_steps_by_kind);
    RUN(verify_should_accept_ring_allreduce_for_p_1_to_64);
    RUN(verify_should_reject_unmatched_send);
    RUN(verify_should_reject_unmatched_receive);
    RUN(verify_error_should_name_p_root_rank_phase_round_and_step);
    RUN(verify_should_reject_double_reduction);
    RUN(verify_should_reject_wrong_operand_order_for_a_non_commutative_op);
    RUN(verify_should_reject_a_send_of_a_block_with_no_data);
    RUN(verify_should_reject_a_receive_that_clobbers_a_block_the_step_sends);
    RUN(verify_should_report_a_wrong_final_block_with_expected_and_found);
    RUN(verify_should_stop_at_the_first_counter_example);
    RUN(verify_should_try_every_root_up_to_its_limit_and_four_above);
    RUN(verify_should_reject_blocks_that_depend_on_rank);
    RUN(verify_should_merge_barrier_tokens_as_a_union_of_ranks);
    RUN(verify_should_check_reduce_and_gather_only_at_the_root);
    RUN(verify_should_accept_an_exchange_step_that_no_rank_posts);
    RUN(verify_should_require_the_exclusive_prefix_except_at_rank_0);
    RUN(verify_should_reject_a_scatter_that_stages_through_out_when_the_root_is_in_place);
    RUN(verify_should_prove_scatter_in_both_modes_and_other_collectives_once);
    RUN(verify_should_reject_an_alltoall_block_delivered_to_the_wrong_rank);
    RUN(sim_should_stop_beyond_the_round_limit_with_a_clear_error);
    RUN(sim_should_stop_where_the_work_of_several_runs_passes_their_budget);
    RUN(sim_should_evaluate_lets_per_rank_and_report_the_rank_that_fails);
    RUN(sim_should_size_each_buffer_for_its_collective);
    RUN(range_bytes_should_equal_the_sum_over_blocks);
    RUN(verify_should_merge_contributions_in_a_reduce_scatter_block_call);
    RUN(verify_should_check_the_rank_order_of_a_call_s_reduction);
    RUN(verify_should_give_an_exscan_call_the_exclusive_prefix);
    RUN(verify_should_apply_a_call_to_each_colour_group_on_its_own);
    RUN(analyse_should_count_6_rounds_and_24_messages_for_ring_allreduce_at_p_4);
    RUN(analyse_should_count_uneven_blocks_by_their_real_size);
    RUN(analyse_should_trace_one_line_per_step_instance_when_compact);
    RUN(mutate_should_kill_every_mutant_of_a_ring_allgather);
    RUN(mutate_should_list_an_order_flip_of_a_commutative_reduce_as_equivalent);
    RUN(mutate_should_kill_a_scatter_send_staged_through_out_in_place);
    return check_exit();
}
