/* report_table.c - the tables of collgen report and their rendering
 * (report_table.h).
 *
 * A worked case, from tests/report/campaign (allreduce, Open MPI, p = 4,
 * 1 MiB; medians in us): default 800, native ring 520, native
 * recursive_doubling 910, generated allreduce_ring 455, generated
 * allreduce_recursive_doubling 930. The row reads: best native ring,
 * nat/def 520/800 = 0.650; best generated ring, gen/def 455/800 = 0.569;
 * best/def (PICO) min(520, 455)/800 = 0.569; winner g:ring. The pairs table
 * has allreduce_ring against ring, 455/520 = 0.875, and
 * allreduce_recursive_doubling against recursive_doubling, 930/910 = 1.022.
 *
 * A micro-benchmark, from tests/report/micro (lane_pattern, p = 4 as 2
 * nodes x 2, 64 KiB): k=1 100 us, k=2 52 us. vs k=1 is 52/100 = 0.520; the
 * bandwidth over k=1's is 100/52 = 1.92, 0.96 of the ideal 2: "scales"
 * (at least 0.9 of k times). multi_collective allreduce at p = 8 as 2 x 4,
 * 8 B: k=1..4 10, 10.5, 10.8, 15 us: k=2 and 3 within 1.1 times k=1's time
 * ("as one"), k=4 1.5 times: up to 3 concurrent allreduce cost one.
 */
#include "report_table.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report_stats.h"
#include "report_util.h"

/* ---- documents --------------------------------------------------------- */

void cg_rep_doc_init(struct cg_rep_doc *d)
{
    d->blocks = NULL;
    d->n = 0;
    d->cap = 0;
    d->failed = 0;
}

void cg_rep_table_free(struct cg_rep_table *t)
{
    if (t == NULL) {
        return;
    }
    for (int i = 0; i < t->nrows * t->ncols; i++) {
        free(t->cells[i]);
    }
    free(t->cells);
    free(t);
}

void cg_rep_doc_fini(struct cg_rep_doc *d)
{
    for (size_t i = 0; i < d->n; i++) {
        free(d->blocks[i].text);
        cg_rep_table_free(d->blocks[i].table);
    }
    free(d->blocks);
    cg_rep_doc_init(d);
}

static struct cg_rep_block *doc_push(struct cg_rep_doc *d)
{
    if (d->failed) {
        return NULL;
    }
    if (d->n == d->cap) {
        size_t cap = (d->cap != 0) ? 2 * d->cap : 32;
        struct cg_rep_block *b = realloc(d->blocks, cap * sizeof *b);
        if (b == NULL) {
            d->failed = 1;
            return NULL;
        }
        d->blocks = b;
        d->cap = cap;
    }
    struct cg_rep_block *b = &d->blocks[d->n];
    memset(b, 0, sizeof *b);
    return b;
}

void cg_rep_doc_add(struct cg_rep_doc *d, enum cg_rep_block_kind kind, int level,
                    const char *text)
{
    struct cg_rep_block *b = doc_push(d);
    if (b == NULL) {
        return;
    }
    b->text = strdup(text);
    if (b->text == NULL) {
        d->failed = 1;
        return;
    }
    b->kind = kind;
    b->level = level;
    d->n++;
}

void cg_rep_doc_add_table(struct cg_rep_doc *d, struct cg_rep_table *t)
{
    struct cg_rep_block *b = doc_push(d);
    if (b == NULL) {
        cg_rep_table_free(t);
        return;
    }
    b->kind = CG_REP_TABLE;
    b->table = t;
    d->n++;
}

/* Adds a block holding text that the caller malloc'd; NULL means no memory. */
static void doc_add_owned(struct cg_rep_doc *d, enum cg_rep_block_kind kind, int level, char *text)
{
    if (text == NULL) {
        d->failed = 1;
        return;
    }
    cg_rep_doc_add(d, kind, level, text);
    free(text);
}

struct cg_rep_table *cg_rep_table_new(int ncols, const char *const *heads, const char *align)
{
    struct cg_rep_table *t = calloc(1, sizeof *t);
    if (t != NULL) {
        t->ncols = ncols;
        t->heads = heads;
        t->align = align;
    }
    return t;
}

int cg_rep_table_row(struct cg_rep_table *t, const char *const *cells)
{
    if (t->nrows == t->cap) {
        int cap = (t->cap != 0) ? 2 * t->cap : 16;
        char **c = realloc(t->cells, (size_t)cap * (size_t)t->ncols * sizeof *c);
        if (c == NULL) {
            return -1;
        }
        t->cells = c;
        t->cap = cap;
    }
    char **row = &t->cells[t->nrows * t->ncols];
    for (int i = 0; i < t->ncols; i++) {
        row[i] = strdup(cells[i]);
        if (row[i] == NULL) {
            for (int j = 0; j < i; j++) {
                free(row[j]);
            }
            return -1;
        }
    }
    t->nrows++;
    return 0;
}

/* ---- what pairs with what ---------------------------------------------- */

/* A generated schedule is named <collective>_<name>. It pairs with the
 * native algorithm called <name>, unless this table names the native
 * algorithms (Open MPI's and MPICH's names) that implement it. Rows not here
 * pair by the same name: reduce_binomial, gather_binomial and
 * scatter_binomial with binomial (both libraries), alltoall_pairwise with
 * pairwise (both), barrier_recursive_doubling with recursive_doubling
 * (Open MPI), scan_* and exscan_* with linear (Open MPI) and
 * recursive_doubling (both). */
static const struct equivalence {
    const char *collective;   /* the collective */
    const char *schedule;     /* name after "<collective>_" */
    const char *native[4];    /* native algorithm names; NULL-terminated */
} equivalences[] = {
    {"allreduce", "rabenseifner", {"rabenseifner", "reduce_scatter_allgather", NULL}},
    {"allgather", "bruck", {"bruck", "brucks", NULL}},
    /* The baselines' names (harness/baselines/baselines.h). */
    {"allreduce", "reduce_scatter_allgather", {"rabenseifner", "reduce_scatter_allgather", NULL}},
    {"allgather", "neighbor_exchange", {"neighbor", NULL}},
    /* Why no native: Open MPI's chain is coll_base's chain of fanout
     * coll_tuned_bcast_algorithm_chain_fanout (4 by default: a flat tree up
     * to 5 ranks) sending the whole message (segment size 0); bcast_chain is
     * one chain of 8 segments. Its fanout-1 twin is bcast_pipeline, which
     * pairs with Open MPI's pipeline by name. MPICH has no chain. */
    {"bcast", "chain", {NULL}},
    {"bcast", "binomial_doubling", {"binomial", NULL}},
    {"bcast", "binomial_halving", {"binomial", NULL}},
    /* Why: Open MPI's scatter_allgather gathers by recursive doubling; the
     * generated schedule, like scatter_allgather_ring, gathers around a ring. */
    {"bcast", "scatter_allgather", {"scatter_allgather_ring", "scatter_ring_allgather", NULL}},
    /* Rabenseifner's reduce-scatter + gather: Open MPI's redscat_gather,
     * MPICH's reduce_scatter_gather. */
    {"reduce", "rabenseifner", {"rabenseifner", "reduce_scatter_gather", NULL}},
    /* The root receives (sends) the blocks one by one in rank order: Open
     * MPI's basic_linear (linear_sync and linear_nb differ: segmented first
     * messages, nonblocking sends). MPICH has no linear gather or scatter. */
    {"gather", "linear", {"basic_linear", NULL}},
    {"scatter", "linear", {"basic_linear", NULL}},
    /* Every rank posts all its sends and receives at once (in batches of 8
     * ranks; one batch up to p = 9): Open MPI's linear (basic_linear),
     * MPICH's scattered (batches of MPIR_CVAR_ALLTOALL_THROTTLE, 32). */
    {"alltoall", "linear", {"linear", "scattered", NULL}},
    /* Open MPI calls its Bruck alltoall modified_bruck, MPICH brucks. */
    {"alltoall", "bruck", {"modified_bruck", "brucks", NULL}},
    /* Open MPI's "bruck" barrier is the dissemination barrier
     * (coll_base_barrier_intra_bruck: round k signals rank + 2^k, waits for
     * rank - 2^k), MPICH's is called dissemination. */
    {"barrier", "dissemination", {"bruck", "dissemination", NULL}},
    /* Traff's butterfly: Open MPI's butterfly; MPICH's noncommutative is the
     * same algorithm (mirror-ordered blocks, double buffer) for power-of-two
     * p only. */
    {"reduce_scatter_block", "butterfly", {"butterfly", "noncommutative", NULL}},
};

/* The name of a generated schedule or a baseline after its collective's
 * prefix. */
static const char *short_name(const struct cg_rep_record *r)
{
    size_t n = strlen(r->collective);
    if ((strcmp(r->kind, "generated") == 0 || strcmp(r->kind, "baseline") == 0) &&
        strncmp(r->name, r->collective, n) == 0 &&
        r->name[n] == '_' && r->name[n + 1] != '\0') {
        return r->name + n + 1;
    }
    return r->name;
}

/* Whether native record n implements the algorithm of generated record g. */
static int same_algorithm(const struct cg_rep_record *g, const struct cg_rep_record *n)
{
    const char *s = short_name(g);
    if (s == g->name) {
        return 0; /* not named <collective>_<name>: nothing to pair with */
    }
    for (size_t i = 0; i < sizeof equivalences / sizeof equivalences[0]; i++) {
        const struct equivalence *e = &equivalences[i];
        if (strcmp(e->collective, g->collective) == 0 && strcmp(e->schedule, s) == 0) {
            for (int k = 0; k < 4 && e->native[k] != NULL; k++) {
                if (strcmp(e->native[k], n->name) == 0) {
                    return 1;
                }
            }
            return 0;
        }
    }
    return strcmp(s, n->name) == 0;
}

int cg_rep_same_algorithm(const struct cg_rep_record *g, const struct cg_rep_record *n)
{
    return same_algorithm(g, n);
}

/* "ring", "ring!" (the library ran another algorithm), "g:ring", "b:ring"
 * (the baseline). */
static void label(char *out, size_t n, const struct cg_rep_record *r)
{
    if (strcmp(r->kind, "generated") == 0) {
        snprintf(out, n, "g:%s", short_name(r));
    } else if (strcmp(r->kind, "baseline") == 0) {
        snprintf(out, n, "b:%s", short_name(r));
    } else {
        snprintf(out, n, "%s%s", r->name, (r->effective_algorithm != NULL) ? "!" : "");
    }
}

/* ---- grouping ------------------------------------------------------------ */

static int cmp_str(const char *a, const char *b)
{
    return strcmp(a, b);
}

static int cmp_int(long a, long b)
{
    return (a > b) - (a < b);
}

static int cmp_dbl(double a, double b)
{
    return (a > b) - (a < b);
}

/* Records in one table share collective, library, process count, node
 * shape, datatype, op, root and in-place. Why the shape always: two shapes
 * at one process count (virtual_ranks_per_node) measure different things
 * (the topology schedules split differently), and their native:default
 * records would otherwise collide in one row. */
static int cmp_group(const struct cg_rep_record *a, const struct cg_rep_record *b)
{
    int s;
    if ((s = cmp_str(a->collective, b->collective)) != 0 ||
        (s = cmp_str(a->library, b->library)) != 0 || (s = cmp_int(a->ranks, b->ranks)) != 0 ||
        (s = cg_rep_cmp_shape(a, b)) != 0 ||
        (s = cmp_str(a->datatype, b->datatype)) != 0 || (s = cmp_str(a->op, b->op)) != 0 ||
        (s = cmp_int(a->root, b->root)) != 0 || (s = cmp_int(a->in_place, b->in_place)) != 0) {
        return s;
    }
    return 0;
}

/* Within a table: by size, natives first, then by name and median. */
static int cmp_rec(const void *pa, const void *pb)
{
    const struct cg_rep_record *a = *(const struct cg_rep_record *const *)pa;
    const struct cg_rep_record *b = *(const struct cg_rep_record *const *)pb;
    int s;
    if ((s = cmp_group(a, b)) != 0 || (s = cmp_dbl(a->size_B, b->size_B)) != 0 ||
        (s = cmp_int(strcmp(a->kind, "native") != 0, strcmp(b->kind, "native") != 0)) != 0 ||
        (s = cmp_str(a->name, b->name)) != 0 || (s = cmp_dbl(a->median_ns, b->median_ns)) != 0) {
        return s;
    }
    return cmp_int(a->line, b->line);
}

/* Whether a beats b: lower median, then native before generated, then name. */
static int faster(const struct cg_rep_record *a, const struct cg_rep_record *b)
{
    if (b == NULL) {
        return 1;
    }
    if (a->median_ns != b->median_ns) {
        return a->median_ns < b->median_ns;
    }
    int an = strcmp(a->kind, "native") == 0;
    int bn = strcmp(b->kind, "native") == 0;
    if (an != bn) {
        return an;
    }
    return strcmp(a->name, b->name) < 0;
}

/* The collectives that take an op (allreduce, reduce_scatter_block,
 * reduce, scan, exscan); the others' records carry one they ignore. */
static int reduces(const char *collective)
{
    return strstr(collective, "reduce") != NULL || strcmp(collective, "scan") == 0 ||
           strcmp(collective, "exscan") == 0;
}

static char *group_title(const struct cg_rep_record *r)
{
    int show_op = reduces(r->collective) && r->op[0] != '\0';
    /* Barrier has no data: its datatype is a placeholder. */
    const char *datatype = (strcmp(r->collective, "barrier") == 0) ? "" : r->datatype;
    char root[32] = "";
    if (r->root != 0) {
        snprintf(root, sizeof root, " / root %d", r->root);
    }
    char shape[80] = "";
    if (r->shape_shown) {
        shape[0] = ' ';
        shape[1] = '/';
        shape[2] = ' ';
        cg_rep_shape_label(shape + 3, sizeof shape - 3, r);
    }
    return cg_rep_strf("%s / %s / p=%d%s%s%s%s%s%s%s", r->collective, r->library, r->ranks,
                       (datatype[0] != '\0') ? " / " : "", datatype, show_op ? " " : "",
                       show_op ? r->op : "", root, r->in_place ? " / in place" : "", shape);
}

/* ---- significance -------------------------------------------------------- */

struct test {
    const char *mark; /* "" significant, "~" not, "?" not tested */
    double p;         /* p-value when tested */
};

/* Tests a against b (cg_rep_test: on the launch medians when both were
 * measured in several launches, else on the raw repetitions); 0 or -1 out
 * of memory. */
static int significance(const struct cg_rep_record *a, const struct cg_rep_record *b,
                        struct test *t)
{
    t->mark = "?";
    if (cg_rep_test(a, b, &t->p, NULL) != 0) {
        return -1;
    }
    if (!isnan(t->p)) {
        t->mark = (t->p < CG_REP_ALPHA) ? "" : "~";
    }
    return 0;
}

/* A median in us, "<" after it when it is below the latency floor, and
 * the spread of the launch medians (half their range, in % of the median)
 * when the point ran in several launches: "4.507 +-3%". */
static void fmt_median(char *out, size_t n, const struct cg_rep_record *r)
{
    char us[24];
    cg_rep_fmt_us(us, sizeof us, r->median_ns);
    if (r->nlaunch > 1 && r->median_ns > 0.0) {
        double spread = 50.0 * (r->launch_hi_ns - r->launch_lo_ns) / r->median_ns;
        snprintf(out, n, "%.23s%s +-%.0f%%", us, r->below_floor ? "<" : "",
                 (spread < 999.0) ? spread : 999.0);
    } else {
        snprintf(out, n, "%.23s%s", us, r->below_floor ? "<" : "");
    }
}

static void fmt_ratio(char *out, size_t n, double num, double den, const struct test *t)
{
    if (den <= 0.0) {
        snprintf(out, n, "-");
    } else {
        snprintf(out, n, "%.3f%s", num / den, t->mark);
    }
}

static void fmt_p(char *out, size_t n, const struct test *t)
{
    cg_rep_fmt_p(out, n, t->p);
}

static void fmt_bw(char *out, size_t n, double v)
{
    if (isnan(v)) {
        snprintf(out, n, "-");
    } else if (v < 0.01) {
        snprintf(out, n, "%.5f", v);
    } else if (v < 10.0) {
        snprintf(out, n, "%.3f", v);
    } else {
        snprintf(out, n, "%.1f", v);
    }
}

/* ---- the tables --------------------------------------------------------- */

/* Micro-benchmarks: what "k times the bandwidth" and "no more than one"
 * allow, 10% (the margin of the guideline report). */
#define MICRO_MARGIN 0.1

static const char *const main_heads[] = {
    "size", "default us", "best native", "native us", "nat/def", "best generated",
    "gen us", "gen/def", "best/def", "winner", "algbw GB/s", "busbw GB/s"};
static const char main_align[] = "rrlrrlrrrlrr";

/* The same, when the table has a transport bound (kind "bound",
 * bound:sendrecv_reduce): its median and the default's, the best native's
 * and the best generated's over it. */
static const char *const bound_heads[] = {
    "size", "default us", "best native", "native us", "nat/def", "best generated",
    "gen us", "gen/def", "best/def", "winner", "algbw GB/s", "busbw GB/s",
    "bound us", "def/bound", "nat/bound", "gen/bound"};
static const char bound_align[] = "rrlrrlrrrlrrrrrr";

static const char *const reps_heads[] = {
    "collective", "size", "points", "reps median", "reps min", "reps max", "stop rse",
    "stop budget", "stop max_reps", "timed s", "100 reps s", "1000 reps s"};
static const char reps_align[] = "lrrrrrrrrrrr";

static const char *const pair_heads[] = {"size", "generated", "native", "gen us",
                                         "native us", "gen/native", "p (U test)"};
static const char pair_align[] = "rllrrrr";

static const char *const bad_heads[] = {"line", "status", "collective", "library", "p",
                                        "size", "implementation", "reason"};
static const char bad_align[] = "rllllrll";

/* One row of the main table and its pairs, for records v[0..n) of one size. */
static int size_rows(struct cg_rep_table *main_t, struct cg_rep_table *pair_t,
                     const struct cg_rep_record *const *v, size_t n)
{
    const struct cg_rep_record *def = NULL;
    const struct cg_rep_record *nat = NULL;
    const struct cg_rep_record *gen = NULL;
    const struct cg_rep_record *bnd = NULL; /* a bound: never a winner */
    for (size_t i = 0; i < n; i++) {
        const struct cg_rep_record *r = v[i];
        if (strcmp(r->kind, "bound") == 0) {
            bnd = faster(r, bnd) ? r : bnd;
        } else if (strcmp(r->kind, "native") == 0 && strcmp(r->name, "default") == 0) {
            def = faster(r, def) ? r : def;
        } else if (r->below_floor) {
            /* Below the job's one-way latency: a timing artefact, never a
             * best or a winner (listed under the table). */
            continue;
        } else if (strcmp(r->kind, "native") == 0) {
            nat = faster(r, nat) ? r : nat;
        } else if (strcmp(r->kind, "baseline") != 0) { /* baselines: pairs and phases only */
            gen = faster(r, gen) ? r : gen;
        }
    }
    const struct cg_rep_record *best = (gen != NULL && faster(gen, nat)) ? gen : nat;
    const struct cg_rep_record *winner = best;
    if (def != NULL && !def->below_floor &&
        (best == NULL || !(best->median_ns < def->median_ns))) {
        winner = def;
    }

    char size[32], def_us[32] = "-", nat_name[96] = "-", nat_us[32] = "-", nat_r[32] = "-";
    char gen_name[96] = "-", gen_us[32] = "-", gen_r[32] = "-", best_r[32] = "-";
    char win[96] = "-", algbw[32] = "-", busbw[32] = "-";
    struct test t;
    cg_rep_fmt_size(size, sizeof size, v[0]->size_B);
    if (def != NULL) {
        fmt_median(def_us, sizeof def_us, def);
    }
    if (nat != NULL) {
        label(nat_name, sizeof nat_name, nat);
        fmt_median(nat_us, sizeof nat_us, nat);
        if (def != NULL) {
            if (significance(nat, def, &t) != 0) {
                return -1;
            }
            fmt_ratio(nat_r, sizeof nat_r, nat->median_ns, def->median_ns, &t);
        }
    }
    if (gen != NULL) {
        snprintf(gen_name, sizeof gen_name, "%s", short_name(gen));
        fmt_median(gen_us, sizeof gen_us, gen);
        if (def != NULL) {
            if (significance(gen, def, &t) != 0) {
                return -1;
            }
            fmt_ratio(gen_r, sizeof gen_r, gen->median_ns, def->median_ns, &t);
        }
    }
    if (best != NULL && def != NULL) {
        if (significance(best, def, &t) != 0) {
            return -1;
        }
        fmt_ratio(best_r, sizeof best_r, best->median_ns, def->median_ns, &t);
    }
    if (winner != NULL) {
        label(win, sizeof win, winner);
        fmt_bw(algbw, sizeof algbw, winner->algbw_GBps);
        fmt_bw(busbw, sizeof busbw, winner->busbw_GBps);
    }
    char bnd_us[32] = "-", def_b[32] = "-", nat_b[32] = "-", gen_b[32] = "-";
    if (bnd != NULL) {
        const struct cg_rep_record *over[3] = {def, nat, gen};
        char *out[3] = {def_b, nat_b, gen_b};
        cg_rep_fmt_us(bnd_us, sizeof bnd_us, bnd->median_ns);
        for (int k = 0; k < 3; k++) {
            if (over[k] != NULL) {
                if (significance(over[k], bnd, &t) != 0) {
                    return -1;
                }
                fmt_ratio(out[k], 32, over[k]->median_ns, bnd->median_ns, &t);
            }
        }
    }
    const char *row[] = {size, def_us, nat_name, nat_us, nat_r, gen_name, gen_us, gen_r,
                         best_r, win, algbw, busbw, bnd_us, def_b, nat_b, gen_b};
    if (cg_rep_table_row(main_t, row) != 0) { /* takes the first main_t->ncols */
        return -1;
    }

    /* Each generated schedule and baseline against the fastest native
     * implementation of the same algorithm at this size. */
    for (size_t i = 0; i < n; i++) {
        const struct cg_rep_record *g = v[i];
        if (strcmp(g->kind, "generated") != 0 && strcmp(g->kind, "baseline") != 0) {
            continue;
        }
        const struct cg_rep_record *peer = NULL;
        for (size_t k = 0; k < n; k++) {
            if (strcmp(v[k]->kind, "native") == 0 && same_algorithm(g, v[k])) {
                peer = faster(v[k], peer) ? v[k] : peer;
            }
        }
        if (peer == NULL) {
            continue;
        }
        char g_us[32], p_us[32], ratio[32], pv[32], p_name[96];
        fmt_median(g_us, sizeof g_us, g);
        fmt_median(p_us, sizeof p_us, peer);
        label(p_name, sizeof p_name, peer);
        if (significance(g, peer, &t) != 0) {
            return -1;
        }
        fmt_ratio(ratio, sizeof ratio, g->median_ns, peer->median_ns, &t);
        fmt_p(pv, sizeof pv, &t);
        char g_name[160];
        snprintf(g_name, sizeof g_name, "%s%s", strcmp(g->kind, "baseline") == 0 ? "baseline:" : "",
                 g->name);
        const char *prow[] = {size, g_name, p_name, g_us, p_us, ratio, pv};
        if (cg_rep_table_row(pair_t, prow) != 0) {
            return -1;
        }
    }
    return 0;
}

/* Above a table whose records ran on an oversubscribed host: what that
 * does to small messages. */
static void oversubscribed_note(struct cg_rep_doc *d, const struct cg_rep_record *const *v,
                                size_t n)
{
    const struct cg_rep_record *worst = NULL;
    for (size_t i = 0; i < n; i++) {
        if (v[i]->oversubscribed == 1 &&
            (worst == NULL || v[i]->host_ranks * (worst->host_cores > 0 ? worst->host_cores : 1) >
                                  worst->host_ranks * (v[i]->host_cores > 0 ? v[i]->host_cores : 1))) {
            worst = v[i];
        }
    }
    if (worst == NULL) {
        return;
    }
    doc_add_owned(d, CG_REP_PARA, 0,
                  cg_rep_strf("Oversubscribed: %d ranks on %d cores of one host: small-message "
                              "times then reflect the operating system's scheduling (which rank "
                              "runs when) more than the algorithms.",
                              worst->host_ranks, worst->host_cores));
}

/* Under a table: the records below the latency floor, never a best or a
 * winner. */
static void below_floor_note(struct cg_rep_doc *d, const struct cg_rep_record *const *v, size_t n)
{
    struct cg_rep_buf b;
    cg_rep_buf_init(&b);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        const struct cg_rep_record *r = v[i];
        if (!r->below_floor) {
            continue;
        }
        char size[32], us[32], fl[32], name[96];
        cg_rep_fmt_size(size, sizeof size, r->size_B);
        cg_rep_fmt_us(us, sizeof us, r->median_ns);
        cg_rep_fmt_us(fl, sizeof fl, r->floor_ns);
        label(name, sizeof name, r);
        cg_rep_buf_printf(&b, "%s%s %s %s us (floor %s us)", (k == 0) ? "" : "; ", size, name, us,
                          fl);
        k++;
    }
    if (k > 0) {
        char *t = cg_rep_strf("Below the latency floor (the median is under the fastest one-way "
                              "message of the job's ping-pong, which no collective at p > 1 can "
                              "beat: a timing artefact, never a best or a winner): %s.",
                              b.s);
        doc_add_owned(d, CG_REP_PARA, 0, t);
    }
    if (b.failed) {
        d->failed = 1;
    }
    cg_rep_buf_fini(&b);
}

/* The tables of one group, records v[0..n) sorted by size. */
static void group_tables(struct cg_rep_doc *d, const struct cg_rep_record *const *v, size_t n)
{
    doc_add_owned(d, CG_REP_HEADING, 3, group_title(v[0]));
    oversubscribed_note(d, v, n);
    int with_bound = 0;
    for (size_t i = 0; i < n; i++) {
        with_bound |= strcmp(v[i]->kind, "bound") == 0;
    }
    struct cg_rep_table *main_t = with_bound ? cg_rep_table_new(16, bound_heads, bound_align)
                                             : cg_rep_table_new(12, main_heads, main_align);
    struct cg_rep_table *pair_t = cg_rep_table_new(7, pair_heads, pair_align);
    if (main_t == NULL || pair_t == NULL) {
        cg_rep_table_free(main_t);
        cg_rep_table_free(pair_t);
        d->failed = 1;
        return;
    }
    size_t i = 0;
    while (i < n) {
        size_t j = i + 1;
        while (j < n && v[j]->size_B == v[i]->size_B) {
            j++;
        }
        if (size_rows(main_t, pair_t, v + i, j - i) != 0) {
            d->failed = 1;
            break;
        }
        i = j;
    }
    cg_rep_doc_add_table(d, main_t);
    below_floor_note(d, v, n);
    if (pair_t->nrows > 0) {
        cg_rep_doc_add(d, CG_REP_PARA, 0,
                       "Generated schedules (and baselines) against the native implementation "
                       "of the same algorithm:");
        cg_rep_doc_add_table(d, pair_t);
    } else {
        cg_rep_table_free(pair_t);
    }
}

static void summary(struct cg_rep_doc *d, const struct cg_rep_campaign *c)
{
    static const char *const statuses[] = {"ok", "failed_check", "error", "timeout", "skipped"};
    struct cg_rep_buf b;
    cg_rep_buf_init(&b);
    const char *id = cg_rep_campaign_id(c);
    size_t repeats = 0;
    for (size_t i = 0; i < c->nrecs; i++) {
        repeats += (c->recs[i].duplicate_of != 0);
    }
    cg_rep_buf_printf(&b, "Campaign %s: %zu record%s in points.jsonl", id,
                      c->nrecs, (c->nrecs == 1) ? "" : "s");
    if (repeats > 0) {
        /* The counts are of points: the first record of each. */
        cg_rep_buf_printf(&b, ", %zu of them repeating an earlier one, for %zu points", repeats,
                          c->nrecs - repeats);
    }
    const char *sep = " (";
    for (size_t s = 0; s < sizeof statuses / sizeof statuses[0]; s++) {
        size_t k = 0;
        for (size_t i = 0; i < c->nrecs; i++) {
            k += (c->recs[i].duplicate_of == 0 && strcmp(c->recs[i].status, statuses[s]) == 0);
        }
        if (k > 0) {
            cg_rep_buf_printf(&b, "%s%zu %s", sep, k, statuses[s]);
            sep = ", ";
        }
    }
    cg_rep_buf_add(&b, (c->nrecs > 0) ? ")." : ".");
    if (c->nrecs == 0) {
        cg_rep_buf_add(&b, " Nothing has been measured yet.");
    }
    doc_add_owned(d, CG_REP_PARA, 0, cg_rep_buf_take(&b));
}

/* Records with a status other than ok, each with its reason. */
static void not_measured(struct cg_rep_doc *d, const struct cg_rep_campaign *c)
{
    struct cg_rep_table *t = cg_rep_table_new(8, bad_heads, bad_align);
    if (t == NULL) {
        d->failed = 1;
        return;
    }
    for (size_t i = 0; i < c->nrecs; i++) {
        const struct cg_rep_record *r = &c->recs[i];
        if (cg_rep_is_ok(r)) {
            continue;
        }
        char line[16], p[96], size[32], impl[160], reason[400];
        snprintf(line, sizeof line, "%d", r->line);
        if (r->shape_shown) {
            char shape[64];
            cg_rep_shape_label(shape, sizeof shape, r);
            snprintf(p, sizeof p, "%d, %s", r->ranks, shape);
        } else {
            snprintf(p, sizeof p, "%d", r->ranks);
        }
        cg_rep_fmt_size(size, sizeof size, r->size_B);
        snprintf(impl, sizeof impl, "%s:%s", r->kind, r->name);
        /* Why: a reason is one table cell; line breaks would split the row. */
        snprintf(reason, sizeof reason, "%s", (r->reason != NULL) ? r->reason : "(no reason given)");
        for (char *q = reason; *q != '\0'; q++) {
            if (*q == '\n' || *q == '\r' || *q == '\t') {
                *q = ' ';
            }
        }
        const char *row[] = {line, r->status, r->collective, r->library, p, size, impl, reason};
        if (cg_rep_table_row(t, row) != 0) {
            d->failed = 1;
            break;
        }
    }
    cg_rep_doc_add(d, CG_REP_HEADING, 2, "Records not measured (status other than ok)");
    if (t->nrows == 0) {
        cg_rep_table_free(t);
        cg_rep_doc_add(d, CG_REP_PARA, 0, "None: every record has status ok.");
        return;
    }
    cg_rep_doc_add_table(d, t);
}

/* Fallbacks, duplicates and missing raw files, one list item each. */
static void notes(struct cg_rep_doc *d, const struct cg_rep_campaign *c,
                  const struct cg_rep_record *const *v, size_t n)
{
    struct cg_rep_buf b;
    cg_rep_buf_init(&b);
    for (size_t i = 0; i < n; i++) {
        const struct cg_rep_record *r = v[i];
        if (r->effective_algorithm != NULL) {
            char size[32], shape[80] = "";
            cg_rep_fmt_size(size, sizeof size, r->size_B);
            if (r->shape_shown) {
                memcpy(shape, " / ", 4);
                cg_rep_shape_label(shape + 3, sizeof shape - 3, r);
            }
            cg_rep_buf_printf(&b, "%s / %s / p=%d%s / %s: native %s ran %s (%s), line %d\n",
                              r->collective, r->library, r->ranks, shape, size, r->name,
                              r->effective_algorithm,
                              (r->algorithm_source != NULL) ? r->algorithm_source : "?", r->line);
        }
    }
    /* Irregular node shapes (a virtual shape that does not divide p), and
     * shapes the runtime could not find: one item per process count and
     * shape, over every record. */
    for (size_t i = 0; i < c->nrecs; i++) {
        const struct cg_rep_record *r = &c->recs[i];
        if (!r->irregular && r->irregular_why == NULL) {
            continue;
        }
        int first = 1;
        for (size_t k = 0; k < i && first; k++) {
            const struct cg_rep_record *q = &c->recs[k];
            first = !((q->irregular || q->irregular_why != NULL) && q->ranks == r->ranks &&
                      cg_rep_cmp_shape(q, r) == 0);
        }
        if (!first) {
            continue;
        }
        size_t count = 0;
        for (size_t k = i; k < c->nrecs; k++) {
            const struct cg_rep_record *q = &c->recs[k];
            count += (q->irregular || q->irregular_why != NULL) && q->ranks == r->ranks &&
                     cg_rep_cmp_shape(q, r) == 0;
        }
        char shape[80];
        if (r->virtual_shape) {
            snprintf(shape, sizeof shape, "CG_PPN=%d", r->ranks_per_node);
        } else {
            snprintf(shape, sizeof shape, "real nodes");
        }
        if (r->irregular) {
            cg_rep_buf_printf(&b,
                              "p=%d / %s is an irregular node shape (%s): the topology schedules "
                              "(hierarchical, full-lane) ran their declared fallback there; %zu "
                              "record%s, from line %d\n",
                              r->ranks, shape,
                              (r->irregular_why != NULL) ? r->irregular_why
                                                         : "the records say regular: false",
                              count, (count == 1) ? "" : "s", r->line);
        } else {
            cg_rep_buf_printf(&b, "p=%d / %s: the runtime could not find the topology (%s); %zu "
                                  "record%s, from line %d\n",
                              r->ranks, shape, r->irregular_why, count, (count == 1) ? "" : "s",
                              r->line);
        }
    }
    /* Forced algorithms the library cannot report: one item per library
     * and collective, naming the algorithms, rather than one per record. */
    for (size_t i = 0; i < n; i++) {
        const struct cg_rep_record *r = v[i];
        int first = r->unobservable;
        for (size_t k = 0; k < i && first; k++) {
            first = !(v[k]->unobservable && strcmp(v[k]->library, r->library) == 0 &&
                      strcmp(v[k]->collective, r->collective) == 0);
        }
        if (!first) {
            continue;
        }
        size_t count = 0;
        cg_rep_buf_printf(&b, "%s / %s: what the forced algorithms ran is unobservable (", r->library,
                          r->collective);
        for (size_t k = i; k < n; k++) {
            const struct cg_rep_record *q = v[k];
            if (!q->unobservable || strcmp(q->library, r->library) != 0 ||
                strcmp(q->collective, r->collective) != 0) {
                continue;
            }
            int named = 0;
            for (size_t m = i; m < k && !named; m++) {
                named = v[m]->unobservable && strcmp(v[m]->library, r->library) == 0 &&
                        strcmp(v[m]->collective, r->collective) == 0 &&
                        strcmp(v[m]->name, q->name) == 0;
            }
            if (!named) {
                cg_rep_buf_printf(&b, "%s%s", (count == 0) ? "" : ", ", q->name);
            }
            count++;
        }
        cg_rep_buf_printf(&b, "; %zu record%s)%s%s\n", count, (count == 1) ? "" : "s",
                          (r->unobservable_why != NULL) ? ": " : "",
                          (r->unobservable_why != NULL) ? r->unobservable_why : "");
    }
    for (size_t i = 0; i < c->nrecs; i++) {
        const struct cg_rep_record *r = &c->recs[i];
        if (r->duplicate_of != 0) {
            cg_rep_buf_printf(&b, "line %d repeats point %s of line %d; the tables use line %d\n",
                              r->line, r->point_id, r->duplicate_of, r->duplicate_of);
        }
    }
    for (size_t i = 0; i < c->nrecs; i++) {
        const struct cg_rep_record *r = &c->recs[i];
        if (r->raw_missing && r->duplicate_of == 0) {
            cg_rep_buf_printf(&b, "line %d (%s): raw repetitions %s%s; its ratios are not tested (?)\n",
                              r->line, r->point_id, (r->raw_path != NULL) ? r->raw_path : "",
                              (r->raw_path != NULL) ? " missing" : "not recorded");
        }
    }
    if (b.failed) {
        cg_rep_buf_fini(&b);
        d->failed = 1;
        return;
    }
    if (b.len == 0) {
        cg_rep_buf_fini(&b);
        return;
    }
    b.s[--b.len] = '\0'; /* the last '\n' */
    cg_rep_doc_add(d, CG_REP_HEADING, 2, "Notes");
    doc_add_owned(d, CG_REP_LIST, 0, cg_rep_buf_take(&b));
}

static void legend(struct cg_rep_doc *d, int micro, int shapes, int launches, int window)
{
    struct cg_rep_buf b;
    cg_rep_buf_init(&b);
    cg_rep_buf_add(&b, window ? "Times are medians over the repetitions, in microseconds (us), "
                                "of the window figure (timing.sync window: the latest end of any "
                                "rank less the start instant rank 0 announced in the global "
                                "clock; repetitions a rank reached late are dropped).\n"
                              : "Times are medians over the repetitions of the slowest rank in "
                                "each repetition, in microseconds (us).\n");
    cg_rep_buf_add(&b,
                   "< after a time: its median is below the job's one-way latency floor (the "
                   "fastest message of a ping-pong between ranks in the same launch); no "
                   "collective at p > 1 can be faster than one message, so it is a timing "
                   "artefact and is never a best, a "
                   "winner, a guideline violation or a profile choice (listed under its "
                   "table). Tables of jobs with more ranks on a host than cores say so above "
                   "them.\n");
    if (launches) {
        cg_rep_buf_add(&b,
                       "Repeated launches: a point measured in several launches shows the "
                       "median of its launch medians, and +-N% half the range of the launch "
                       "medians in % of it; its ratios are tested on the launch medians "
                       "(two-sided Mann-Whitney U, exact up to 20 launches a side), not on the "
                       "pooled repetitions, since a launch, not a repetition, is the unit that "
                       "was repeated (4 launches a side at least can be significant at 0.05).\n");
    }
    cg_rep_buf_add(&b,
                   "nat/def, gen/def: the median of the best forced native algorithm, and of "
                   "the best generated schedule, over the native default's median.\n"
                   "best/def: PICO's best-to-default ratio t_best / t_default, t_best the lowest "
                   "median of every implementation other than the default (forced native "
                   "algorithms and generated schedules). Below 1 the default leaves speed on the "
                   "table; above 1 the default is the fastest.\n"
                   "winner: the fastest implementation (g:NAME is the generated schedule "
                   "<collective>_NAME); algbw and busbw are the winner's, from its record "
                   "(nccl-tests: algbw = size / time; busbw = algbw * 2(p-1)/p for allreduce, "
                   "(p-1)/p for allgather, reduce_scatter_block, gather, scatter and alltoall, 1 "
                   "for bcast and reduce, and by convention 1 for scan and exscan; size is "
                   "count x element size, x p where the count is per rank (allgather, "
                   "reduce_scatter_block, gather, scatter, alltoall); barrier has size 0 and no "
                   "bandwidth).\n"
                   "~ after a ratio: the difference is NOT statistically significant: two-sided "
                   "Mann-Whitney U test on the raw repetitions of the two implementations "
                   "(normal approximation with tie and continuity correction), alpha = 0.05. "
                   "A ratio without a mark differs significantly; ? means a raw file is "
                   "missing, so it was not tested.\n"
                   "! after a native name: the library ran another algorithm than the one "
                   "requested (see Notes; where the library cannot tell what it ran, Notes say "
                   "unobservable and the name has no mark).\n"
                   "bound us (allreduce tables with a bound:sendrecv_reduce record): the "
                   "transport bound at p = 2, two MPI_Sendrecv of n/2 elements around a local "
                   "reduce of n/2, timed like the others; def/bound, nat/bound, gen/bound: the "
                   "default, the best native and the best generated over it (1 would be as fast "
                   "as the transport allows). The bound is never the winner.\n"
                   "Repetitions: per collective and size, how many repetitions the stopping rule "
                   "ran per point (median, min, max over libraries and implementations) and why it "
                   "stopped; timed s is the time of those repetitions, 100 reps s and 1000 reps s "
                   "what fixed counts would have taken (count x mean repetition).\n"
                   "gen/native: a generated schedule <collective>_NAME against the native "
                   "algorithm NAME (the fastest, if several), except:");
    const char *sep = " ";
    for (size_t i = 0; i < sizeof equivalences / sizeof equivalences[0]; i++) {
        const struct equivalence *e = &equivalences[i];
        cg_rep_buf_printf(&b, "%s%s_%s against", sep, e->collective, e->schedule);
        for (int k = 0; k < 4 && e->native[k] != NULL; k++) {
            cg_rep_buf_printf(&b, "%s%s", (k == 0) ? " " : " or ", e->native[k]);
        }
        sep = "; ";
    }
    cg_rep_buf_add(&b, ".");
    if (shapes) {
        cg_rep_buf_add(&b,
                       "\nNode shapes (virtual_ranks_per_node): this campaign ran some process "
                       "counts under two or more node shapes, so every table names its shape and "
                       "a shape's records never share a row with another's: real: N nodes x K "
                       "(the real placement, K ranks per node), CG_PPN=K: N nodes x K (CG_PPN=K "
                       "makes every K consecutive ranks a node, for the topology schedules and "
                       "the micro-benchmarks); irregular: the ranks do not split into nodes of K, "
                       "so the topology schedules ran their declared fallback (Notes).");
    }
    if (micro) {
        cg_rep_buf_printf(
            &b,
            "\nMicro-benchmarks: median us of each lane count k; vs k=1: its median over k=1's "
            "(~ not significant, U test as above); bw x k=1: lane_pattern's bandwidth over "
            "k=1's, t(k=1) / t(k) (the same bytes over k lanes); total bw x k=1: "
            "multi_collective's k collectives of that size at once over one, k t(k=1) / t(k); "
            "of ideal: that over k (1.00: k lanes give k times the bandwidth); algbw and busbw "
            "from the record (lane_pattern: size / time, factor 1; multi_collective: one lane's "
            "collective, p the number of nodes). reads: lane_pattern scales (of ideal at least "
            "%.2f), partial, no gain (bandwidth within %.0f%% of k=1's) or slower; "
            "multi_collective as one (at most %.2f times k=1's median) or costs more. The "
            "list under each table says up to which k that holds.",
            1.0 - MICRO_MARGIN, 100.0 * MICRO_MARGIN, 1.0 + MICRO_MARGIN);
    }
    cg_rep_doc_add(d, CG_REP_HEADING, 2, "How to read the tables");
    doc_add_owned(d, CG_REP_LIST, 0, cg_rep_buf_take(&b));
}

static int cmp_long(const void *pa, const void *pb)
{
    long a = *(const long *)pa;
    long b = *(const long *)pb;
    return (a > b) - (a < b);
}

/* The first column of the repetitions table: the collective, or the
 * micro-benchmark ("micro:lane_pattern", "micro:multi_collective"). */
static const char *reps_label(const struct cg_rep_record *r)
{
    if (r->micro == NULL) {
        return r->collective;
    }
    return (strcmp(r->micro, "lane_pattern") == 0) ? "micro:lane_pattern"
                                                   : "micro:multi_collective";
}

/* Records v[0..n) grouped by collective and size: by collective, then size. */
static int cmp_coll_size(const void *pa, const void *pb)
{
    const struct cg_rep_record *a = *(const struct cg_rep_record *const *)pa;
    const struct cg_rep_record *b = *(const struct cg_rep_record *const *)pb;
    int s;
    if ((s = cmp_str(reps_label(a), reps_label(b))) != 0 ||
        (s = cmp_dbl(a->size_B, b->size_B)) != 0) {
        return s;
    }
    return cmp_int(a->line, b->line);
}

/* One row of the repetitions table for records v[0..n) (all with reps > 0);
 * coll NULL means "all". A point's mean repetition comes from its raw file
 * (its median when the file is missing). */
static int reps_row(struct cg_rep_table *t, const char *coll, const char *size,
                    const struct cg_rep_record *const *v, size_t n)
{
    long *reps = malloc(n * sizeof *reps);
    if (reps == NULL) {
        return -1;
    }
    size_t rse = 0, budget = 0, maxr = 0;
    double timed = 0.0, per_rep = 0.0;
    for (size_t i = 0; i < n; i++) {
        const struct cg_rep_record *r = v[i];
        double sum = 0.0;
        reps[i] = r->reps;
        rse += (r->stop != NULL && strcmp(r->stop, "rse") == 0);
        budget += (r->stop != NULL && strcmp(r->stop, "budget") == 0);
        maxr += (r->stop != NULL && strcmp(r->stop, "max_reps") == 0);
        if (r->raw != NULL && r->nraw > 0) {
            for (size_t k = 0; k < r->nraw; k++) {
                sum += r->raw[k];
            }
            timed += sum;
            per_rep += sum / (double)r->nraw;
        } else {
            timed += (double)r->reps * r->median_ns;
            per_rep += r->median_ns;
        }
    }
    qsort(reps, n, sizeof *reps, cmp_long);
    double med = (n % 2 == 1) ? (double)reps[n / 2]
                              : ((double)reps[n / 2 - 1] + (double)reps[n / 2]) / 2.0;
    char c_pts[32], c_med[32], c_min[32], c_max[32], c_rse[32], c_bud[32], c_mx[32];
    char c_t[32], c_100[32], c_1000[32];
    snprintf(c_pts, sizeof c_pts, "%zu", n);
    snprintf(c_med, sizeof c_med, "%g", med);
    snprintf(c_min, sizeof c_min, "%ld", reps[0]);
    snprintf(c_max, sizeof c_max, "%ld", reps[n - 1]);
    snprintf(c_rse, sizeof c_rse, "%zu", rse);
    snprintf(c_bud, sizeof c_bud, "%zu", budget);
    snprintf(c_mx, sizeof c_mx, "%zu", maxr);
    snprintf(c_t, sizeof c_t, "%.3f", timed / 1e9);
    snprintf(c_100, sizeof c_100, "%.3f", 100.0 * per_rep / 1e9);
    snprintf(c_1000, sizeof c_1000, "%.3f", 1000.0 * per_rep / 1e9);
    free(reps);
    const char *row[] = {(coll != NULL) ? coll : "all", size, c_pts, c_med, c_min, c_max,
                         c_rse, c_bud, c_mx, c_t, c_100, c_1000};
    return cg_rep_table_row(t, row);
}

/* The stopping rule against fixed repetition counts, from the ok records
 * v[0..n) that say how many repetitions they ran. */
static void repetitions(struct cg_rep_doc *d, const struct cg_rep_record *const *all, size_t nall)
{
    const struct cg_rep_record **v = malloc((nall + 1) * sizeof *v);
    if (v == NULL) {
        d->failed = 1;
        return;
    }
    size_t n = 0;
    for (size_t i = 0; i < nall; i++) {
        if (all[i]->reps > 0) {
            v[n++] = all[i];
        }
    }
    if (n == 0) {
        free(v);
        return;
    }
    qsort(v, n, sizeof *v, cmp_coll_size);
    struct cg_rep_table *t = cg_rep_table_new(12, reps_heads, reps_align);
    if (t == NULL) {
        free(v);
        d->failed = 1;
        return;
    }
    size_t i = 0;
    while (i < n && !d->failed) {
        size_t j = i + 1;
        while (j < n && strcmp(reps_label(v[j]), reps_label(v[i])) == 0 &&
               v[j]->size_B == v[i]->size_B) {
            j++;
        }
        char size[32];
        cg_rep_fmt_size(size, sizeof size, v[i]->size_B);
        if (reps_row(t, reps_label(v[i]), size, v + i, j - i) != 0) {
            d->failed = 1;
        }
        i = j;
    }
    if (!d->failed && reps_row(t, NULL, "-", v, n) != 0) {
        d->failed = 1;
    }
    free(v);
    cg_rep_doc_add(d, CG_REP_HEADING, 2, "Repetitions");
    cg_rep_doc_add(d, CG_REP_PARA, 0,
                   "How many repetitions the stopping rule ran per point, against fixed counts "
                   "(OSU and IMB run a fixed number per size):");
    cg_rep_doc_add_table(d, t);
}

/* ---- micro-benchmarks ------------------------------------------------------ */

static const char *const lane_heads[] = {"size",     "k",          "median us",  "vs k=1",
                                         "p (U test)", "bw x k=1", "of ideal",   "algbw GB/s",
                                         "busbw GB/s", "reads"};
static const char *const multi_heads[] = {"size",       "k",              "median us",
                                          "vs k=1",     "p (U test)",     "total bw x k=1",
                                          "of ideal",   "algbw GB/s",     "busbw GB/s",
                                          "reads"};
static const char micro_align[] = "rrrrrrrrrl";

static int is_lane(const struct cg_rep_record *r)
{
    return strcmp(r->micro, "lane_pattern") == 0;
}

/* Micro tables: lane_pattern first, then multi_collective, each grouped as
 * the main tables (collective, library, p, shape, datatype, op, root, in
 * place); within one, by size, then k. */
static int cmp_micro_group(const struct cg_rep_record *a, const struct cg_rep_record *b)
{
    int s = cmp_str(a->micro, b->micro);
    return (s != 0) ? s : cmp_group(a, b);
}

static int cmp_micro(const void *pa, const void *pb)
{
    const struct cg_rep_record *a = *(const struct cg_rep_record *const *)pa;
    const struct cg_rep_record *b = *(const struct cg_rep_record *const *)pb;
    int s;
    if ((s = cmp_micro_group(a, b)) != 0 || (s = cmp_dbl(a->size_B, b->size_B)) != 0 ||
        (s = cmp_int(a->micro_k, b->micro_k)) != 0) {
        return s;
    }
    return cmp_int(a->line, b->line);
}

/* "lane_pattern / openmpi / p=4 / double / CG_PPN=2: 2 nodes x 2",
 * "multi_collective: allreduce / openmpi / p=4 / double sum / real: 1 node
 * x 4": the shape always (what the pattern runs on). */
static char *micro_title(const struct cg_rep_record *r)
{
    struct cg_rep_record shown = *r;
    shown.shape_shown = 1;
    char *base = group_title(&shown);
    if (base == NULL || is_lane(r)) {
        return base;
    }
    char *t = cg_rep_strf("multi_collective: %s", base);
    free(base);
    return t;
}

/* How much bandwidth k gives over k=1: lane_pattern moves the same bytes
 * over k lanes (t1 / tk, ideal k); multi_collective runs k collectives of
 * the same size at once (k t1 / tk, ideal k). */
static double micro_gain(const struct cg_rep_record *r, const struct cg_rep_record *ref)
{
    if (r->median_ns <= 0.0) {
        return NAN;
    }
    double g = ref->median_ns / r->median_ns;
    return is_lane(r) ? g : g * (double)r->micro_k;
}

/* Whether k holds what the pattern asks: lane_pattern, at least 0.9 k times
 * k=1's bandwidth; multi_collective, at most 1.1 times k=1's time. */
static int micro_holds(const struct cg_rep_record *r, const struct cg_rep_record *ref)
{
    if (is_lane(r)) {
        return micro_gain(r, ref) >= (1.0 - MICRO_MARGIN) * (double)r->micro_k;
    }
    return r->median_ns <= (1.0 + MICRO_MARGIN) * ref->median_ns;
}

/* The "reads" cell: lane_pattern scales (micro_holds), partial, no gain
 * (bandwidth within 10% of k=1's), slower (below 0.9 of it);
 * multi_collective as one (micro_holds) or costs more. */
static const char *micro_reads(const struct cg_rep_record *r, const struct cg_rep_record *ref)
{
    if (r == ref) {
        return "reference";
    }
    double g = micro_gain(r, ref);
    if (isnan(g)) {
        return "-";
    }
    if (!is_lane(r)) {
        return micro_holds(r, ref) ? "as one" : "costs more";
    }
    if (micro_holds(r, ref)) {
        return "scales";
    }
    if (g < 1.0 - MICRO_MARGIN) {
        return "slower";
    }
    return (g <= 1.0 + MICRO_MARGIN) ? "no gain" : "partial";
}

/* The finding of one size of one micro table, records v[0..n) by k, ref the
 * k=1 record (or NULL); appended to b as one list item. */
static void micro_finding(struct cg_rep_buf *b, const struct cg_rep_record *const *v, size_t n,
                          const struct cg_rep_record *ref)
{
    char size[32];
    cg_rep_fmt_size(size, sizeof size, v[0]->size_B);
    if (ref == NULL) {
        cg_rep_buf_printf(b, "%s: no k=1 record to compare with\n", size);
        return;
    }
    if (n == 1) {
        cg_rep_buf_printf(b, "%s: only k=1 measured\n", size);
        return;
    }
    int lane = is_lane(ref);
    const struct cg_rep_record *upto = ref;  /* the last k of the unbroken run that holds */
    const struct cg_rep_record *broke = NULL; /* the first k that does not */
    const struct cg_rep_record *most = ref;  /* the most bandwidth */
    for (size_t i = 0; i < n; i++) {
        const struct cg_rep_record *r = v[i];
        if (r == ref || r->micro_k == 1) {
            continue;
        }
        double g = micro_gain(r, ref);
        int holds = !isnan(g) && micro_holds(r, ref);
        if (holds && broke == NULL) {
            upto = r;
        } else if (broke == NULL) {
            broke = r;
        }
        if (g > micro_gain(most, ref)) {
            most = r;
        }
    }
    if (lane) {
        if (upto == ref && broke != NULL) {
            cg_rep_buf_printf(b, "%s: more lanes do not give proportionally more bandwidth: k=%d "
                                 "gives %.2fx the bandwidth of k=1 (ideal %dx)",
                              size, broke->micro_k, micro_gain(broke, ref), broke->micro_k);
        } else {
            cg_rep_buf_printf(b, "%s: k lanes give k times the bandwidth of one (within 10%%) up "
                                 "to k=%d",
                              size, upto->micro_k);
            if (broke != NULL) {
                cg_rep_buf_printf(b, "; k=%d gives %.2fx (ideal %dx)", broke->micro_k,
                                  micro_gain(broke, ref), broke->micro_k);
            }
        }
        if (most != ref) {
            cg_rep_buf_printf(b, "; the most bandwidth at k=%d, %.2fx k=1's\n", most->micro_k,
                              micro_gain(most, ref));
        } else {
            cg_rep_buf_add(b, "; k=1 has the most bandwidth\n");
        }
        return;
    }
    if (upto == ref && broke != NULL) {
        cg_rep_buf_printf(b, "%s: only one %s costs as one: %d concurrent ones take %.2fx its "
                             "time\n",
                          size, ref->collective, broke->micro_k, broke->median_ns / ref->median_ns);
        return;
    }
    cg_rep_buf_printf(b, "%s: up to %d concurrent %s cost no more than one (within 10%% of k=1's "
                         "median)",
                      size, upto->micro_k, ref->collective);
    if (broke != NULL) {
        cg_rep_buf_printf(b, "; %d take %.2fx its time", broke->micro_k,
                          broke->median_ns / ref->median_ns);
    }
    cg_rep_buf_add(b, "\n");
}

/* One micro table (records v[0..n) of one group, sorted by size and k) and
 * its findings. */
static void micro_table(struct cg_rep_doc *d, const struct cg_rep_record *const *v, size_t n)
{
    doc_add_owned(d, CG_REP_HEADING, 3, micro_title(v[0]));
    struct cg_rep_table *t = cg_rep_table_new(10, is_lane(v[0]) ? lane_heads : multi_heads,
                                              micro_align);
    if (t == NULL) {
        d->failed = 1;
        return;
    }
    struct cg_rep_buf found;
    cg_rep_buf_init(&found);
    size_t i = 0;
    while (i < n && !d->failed) {
        size_t j = i + 1;
        while (j < n && v[j]->size_B == v[i]->size_B) {
            j++;
        }
        const struct cg_rep_record *ref = (v[i]->micro_k == 1) ? v[i] : NULL;
        for (size_t k = i; k < j; k++) {
            const struct cg_rep_record *r = v[k];
            char size[32], kk[16], med[32], vs[32] = "-", pv[32] = "-", gain[32] = "-";
            char ideal[32] = "-", algbw[32], busbw[32];
            cg_rep_fmt_size(size, sizeof size, r->size_B);
            snprintf(kk, sizeof kk, "%d", r->micro_k);
            cg_rep_fmt_us(med, sizeof med, r->median_ns);
            fmt_bw(algbw, sizeof algbw, r->algbw_GBps);
            fmt_bw(busbw, sizeof busbw, r->busbw_GBps);
            if (ref != NULL && r != ref) {
                struct test tst;
                if (significance(r, ref, &tst) != 0) {
                    d->failed = 1;
                    break;
                }
                fmt_ratio(vs, sizeof vs, r->median_ns, ref->median_ns, &tst);
                fmt_p(pv, sizeof pv, &tst);
            }
            if (ref != NULL) {
                double g = micro_gain(r, ref);
                if (!isnan(g)) {
                    snprintf(gain, sizeof gain, "%.2f", g);
                    snprintf(ideal, sizeof ideal, "%.2f", g / (double)r->micro_k);
                }
            }
            const char *row[] = {size, kk, med, vs, pv, gain, ideal, algbw, busbw,
                                 (ref != NULL) ? micro_reads(r, ref) : "-"};
            if (cg_rep_table_row(t, row) != 0) {
                d->failed = 1;
                break;
            }
        }
        micro_finding(&found, v + i, j - i, ref);
        i = j;
    }
    cg_rep_doc_add_table(d, t);
    if (!v[0]->irregular && v[0]->ranks_per_node > 0 && v[0]->ranks_per_node >= v[0]->ranks) {
        cg_rep_doc_add(d, CG_REP_PARA, 0,
                       "One node: no lane reaches another node (lane_pattern sends to its own "
                       "node, multi_collective's lanes hold one rank each), so this table says "
                       "nothing about the network.");
    }
    if (found.failed) {
        d->failed = 1;
        cg_rep_buf_fini(&found);
        return;
    }
    if (found.len > 0) {
        found.s[--found.len] = '\0';
        doc_add_owned(d, CG_REP_LIST, 0, cg_rep_buf_take(&found));
    }
    cg_rep_buf_fini(&found);
}

/* The micro-benchmarks (kind micro), apart from the tables above: the ok
 * records, first of their point_id. */
static void micro_section(struct cg_rep_doc *d, const struct cg_rep_record *const *all, size_t nall)
{
    const struct cg_rep_record **v = malloc((nall + 1) * sizeof *v);
    if (v == NULL) {
        d->failed = 1;
        return;
    }
    size_t n = 0;
    for (size_t i = 0; i < nall; i++) {
        if (all[i]->micro != NULL) {
            v[n++] = all[i];
        }
    }
    if (n == 0) {
        free(v);
        return;
    }
    qsort(v, n, sizeof *v, cmp_micro);
    cg_rep_doc_add(d, CG_REP_HEADING, 2, "Micro-benchmarks");
    char *para = cg_rep_strf(
        "%zu micro-benchmark record%s (kind micro; harness/README.md, \"Micro-benchmarks\"), "
        "kept out of the tables above, the guideline report and the profile. Per size, each "
        "lane count k against k=1: micro:lane_pattern sends the same bytes from every node to "
        "the next over k lanes (does k give k times the bandwidth?); "
        "micro:multi_collective runs the collective on k lanes at once (how many cost no more "
        "than one?).",
        n, (n == 1) ? "" : "s");
    doc_add_owned(d, CG_REP_PARA, 0, para);
    size_t i = 0;
    while (i < n && !d->failed) {
        size_t j = i + 1;
        while (j < n && cmp_micro_group(v[j], v[i]) == 0) {
            j++;
        }
        micro_table(d, v + i, j - i);
        i = j;
    }
    free(v);
}

int cg_rep_build_results(struct cg_rep_doc *d, const struct cg_rep_campaign *c)
{
    summary(d, c);
    const struct cg_rep_record **v = malloc((c->nrecs + 1) * sizeof *v);
    if (v == NULL) {
        return -1;
    }
    /* v[0..n): the records of the main tables; v[n..nall): the
     * micro-benchmarks, which have a section of their own. */
    size_t n = 0;
    size_t nall = 0;
    for (size_t i = 0; i < c->nrecs; i++) {
        if (cg_rep_is_shown(&c->recs[i]) && c->recs[i].micro == NULL) {
            v[n++] = &c->recs[i];
        }
    }
    nall = n;
    for (size_t i = 0; i < c->nrecs; i++) {
        if (cg_rep_is_shown(&c->recs[i]) && c->recs[i].micro != NULL) {
            v[nall++] = &c->recs[i];
        }
    }
    qsort(v, n, sizeof *v, cmp_rec);
    size_t i = 0;
    while (i < n && !d->failed) {
        size_t j = i + 1;
        while (j < n && cmp_group(v[j], v[i]) == 0) {
            j++;
        }
        group_tables(d, v + i, j - i);
        i = j;
    }
    cg_rep_phases_section(d, v, n); /* report_phases.c: baselines phase by phase */
    cg_rep_speed_section(d, v, n); /* report_speed.c: pairs summed up, the roofline */
    micro_section(d, v + n, nall - n);
    repetitions(d, v, nall);
    not_measured(d, c);
    notes(d, c, v, n);
    int launches = 0;
    int window = 0;
    for (size_t i = 0; i < nall; i++) {
        launches |= v[i]->nlaunch > 1;
        window |= strcmp(v[i]->figure != NULL ? v[i]->figure : "", "window") == 0;
    }
    legend(d, nall > n, c->nrecs > 0 && c->recs[0].shape_shown, launches, window);
    free(v);
    return d->failed ? -1 : 0;
}

/* ---- rendering ------------------------------------------------------------ */

static void render_table_text(struct cg_rep_buf *b, const struct cg_rep_table *t)
{
    size_t w[16] = {0};
    int nc = (t->ncols < 16) ? t->ncols : 16;
    for (int c = 0; c < nc; c++) {
        w[c] = strlen(t->heads[c]);
        for (int r = 0; r < t->nrows; r++) {
            size_t l = strlen(t->cells[r * t->ncols + c]);
            w[c] = (l > w[c]) ? l : w[c];
        }
    }
    for (int r = -1; r < t->nrows; r++) {
        struct cg_rep_buf line;
        cg_rep_buf_init(&line);
        cg_rep_buf_add(&line, " ");
        for (int c = 0; c < nc; c++) {
            const char *s = (r < 0) ? t->heads[c] : t->cells[r * t->ncols + c];
            int pad = (int)(w[c] - strlen(s));
            if (t->align[c] == 'r') {
                cg_rep_buf_printf(&line, " %*s%s", pad, "", s);
            } else {
                cg_rep_buf_printf(&line, " %s%*s", s, pad, "");
            }
            cg_rep_buf_add(&line, " ");
        }
        if (line.failed) {
            b->failed = 1;
            cg_rep_buf_fini(&line);
            return;
        }
        while (line.len > 0 && line.s[line.len - 1] == ' ') {
            line.s[--line.len] = '\0';
        }
        cg_rep_buf_add(b, line.s);
        cg_rep_buf_add(b, "\n");
        cg_rep_buf_fini(&line);
    }
}

char *cg_rep_render_text(const struct cg_rep_doc *d)
{
    struct cg_rep_buf b;
    cg_rep_buf_init(&b);
    for (size_t i = 0; i < d->n; i++) {
        const struct cg_rep_block *k = &d->blocks[i];
        if (i > 0 && k->kind != CG_REP_IMAGE) {
            cg_rep_buf_add(&b, "\n");
        }
        switch (k->kind) {
        case CG_REP_HEADING: {
            size_t len = strlen(k->text);
            if (k->level == 3) {
                cg_rep_buf_printf(&b, "== %s ==\n", k->text);
                break;
            }
            cg_rep_buf_printf(&b, "%s\n", k->text);
            for (size_t j = 0; j < len; j++) {
                cg_rep_buf_add(&b, (k->level == 1) ? "=" : "-");
            }
            cg_rep_buf_add(&b, "\n");
            break;
        }
        case CG_REP_PARA:
            cg_rep_buf_printf(&b, "%s\n", k->text);
            break;
        case CG_REP_CODE: {
            const char *p = k->text;
            while (*p != '\0') {
                size_t l = strcspn(p, "\n");
                cg_rep_buf_add(&b, "    ");
                cg_rep_buf_addn(&b, p, l);
                cg_rep_buf_add(&b, "\n");
                p += l + (p[l] == '\n');
            }
            break;
        }
        case CG_REP_LIST: {
            const char *p = k->text;
            while (*p != '\0') {
                size_t l = strcspn(p, "\n");
                cg_rep_buf_add(&b, "  - ");
                cg_rep_buf_addn(&b, p, l);
                cg_rep_buf_add(&b, "\n");
                p += l + (p[l] == '\n');
            }
            break;
        }
        case CG_REP_IMAGE:
            break; /* images live in report.md only */
        case CG_REP_TABLE:
            render_table_text(&b, k->table);
            break;
        }
    }
    return cg_rep_buf_take(&b);
}

/* A table cell in Markdown: pipes and the marks Markdown would read as
 * formatting (~ strikes through, * emphasises) are escaped. */
static void md_cell(struct cg_rep_buf *b, const char *s)
{
    for (; *s != '\0'; s++) {
        if (*s == '|' || *s == '~' || *s == '*' || *s == '<' || *s == '>') {
            cg_rep_buf_add(b, "\\");
        }
        cg_rep_buf_addn(b, s, 1);
    }
}

/* Paragraph text in Markdown: as md_cell, but `code spans` stay verbatim
 * (a backslash inside one would be shown). */
static void md_text(struct cg_rep_buf *b, const char *s)
{
    int code = 0;
    for (; *s != '\0'; s++) {
        code ^= (*s == '`');
        if (!code && (*s == '|' || *s == '~' || *s == '*' || *s == '<' || *s == '>')) {
            cg_rep_buf_add(b, "\\");
        }
        cg_rep_buf_addn(b, s, 1);
    }
}

static void render_table_md(struct cg_rep_buf *b, const struct cg_rep_table *t)
{
    for (int r = -2; r < t->nrows; r++) {
        cg_rep_buf_add(b, "|");
        for (int c = 0; c < t->ncols; c++) {
            cg_rep_buf_add(b, " ");
            if (r == -2) {
                md_cell(b, t->heads[c]);
            } else if (r == -1) {
                cg_rep_buf_add(b, (t->align[c] == 'r') ? "---:" : "---");
            } else {
                md_cell(b, t->cells[r * t->ncols + c]);
            }
            cg_rep_buf_add(b, " |");
        }
        cg_rep_buf_add(b, "\n");
    }
}

char *cg_rep_render_markdown(const struct cg_rep_doc *d)
{
    struct cg_rep_buf b;
    cg_rep_buf_init(&b);
    for (size_t i = 0; i < d->n; i++) {
        const struct cg_rep_block *k = &d->blocks[i];
        if (i > 0) {
            cg_rep_buf_add(&b, "\n");
        }
        switch (k->kind) {
        case CG_REP_HEADING:
            cg_rep_buf_printf(&b, "%.*s %s\n", k->level, "###", k->text);
            break;
        case CG_REP_PARA:
            md_text(&b, k->text);
            cg_rep_buf_add(&b, "\n");
            break;
        case CG_REP_CODE:
            cg_rep_buf_printf(&b, "```\n%s\n```\n", k->text);
            break;
        case CG_REP_LIST: {
            const char *p = k->text;
            while (*p != '\0') {
                size_t l = strcspn(p, "\n");
                char *item = strndup(p, l);
                if (item == NULL) {
                    b.failed = 1;
                    break;
                }
                cg_rep_buf_add(&b, "- ");
                md_text(&b, item);
                cg_rep_buf_add(&b, "\n");
                free(item);
                p += l + (p[l] == '\n');
            }
            break;
        }
        case CG_REP_IMAGE: {
            /* Alt text: the file name without .png (the heading says what it shows). */
            const char *base = strrchr(k->text, '/');
            base = (base != NULL) ? base + 1 : k->text;
            const char *dot = strrchr(base, '.');
            int stem = (int)((dot != NULL) ? (size_t)(dot - base) : strlen(base));
            cg_rep_buf_printf(&b, "![%.*s](%s)\n", stem, base, k->text);
            break;
        }
        case CG_REP_TABLE:
            render_table_md(&b, k->table);
            break;
        }
    }
    return cg_rep_buf_take(&b);
}

/* ---- shared with the other sections (report_table.h) ---------------------- */

int cg_rep_cmp_group(const struct cg_rep_record *a, const struct cg_rep_record *b)
{
    return cmp_group(a, b);
}

char *cg_rep_group_title(const struct cg_rep_record *r)
{
    return group_title(r);
}

int cg_rep_faster(const struct cg_rep_record *a, const struct cg_rep_record *b)
{
    return faster(a, b);
}

int cg_rep_takes_op(const char *collective)
{
    return reduces(collective);
}
