/* sim.c - lockstep execution of a checked schedule (see sim.h). */
#include "sim.h"

#include <stdlib.h>
#include <string.h>

#define CG_SIM_MAX_BLOCKS 65536   /* per buffer */
#define CG_SIM_MAX_ROUNDS 1000000 /* per phase */

long cg_sim_nblocks(enum cg_coll_kind coll, enum cg_bufid b, int p, long blocks, long scratch)
{
    switch (b) {
    case CG_BUF_IN:
        switch (cg_colls[coll].input) {
        case CG_INPUT_P:
            return p;
        case CG_INPUT_B:
            return blocks;
        case CG_INPUT_NONE:
            break;
        }
        return 0;
    case CG_BUF_OUT:
        switch (cg_colls[coll].shape) {
        case CG_SHAPE_UNIFORM:
            return p;
        case CG_SHAPE_ONE:
        case CG_SHAPE_TOKEN:
            return 1;
        case CG_SHAPE_SPLIT:
            break;
        }
        return blocks;
    case CG_BUF_TMP:
        return scratch;
    case CG_BUF_COUNT_:
        break;
    }
    return 0;
}

void cg_sim_range_str(const struct cg_sim_range *r, long nblocks, char *buf, size_t cap)
{
    const char *name = cg_buf_names[r->buf];
    if (r->stride > 1 && r->n > 1) {
        /* "out[1,5,9]", or "out[1,5,...,29]" (first two and last) past four blocks. */
        long last = cg_sim_blk(r, nblocks, r->n - 1);
        if (r->n <= 4) {
            size_t k = (size_t)snprintf(buf, cap, "%s[", name);
            for (long i = 0; i < r->n && k < cap; i++) {
                k += (size_t)snprintf(buf + k, cap - k, i ? ",%ld" : "%ld", cg_sim_blk(r, nblocks, i));
            }
            if (k < cap) {
                snprintf(buf + k, cap - k, "]");
            }
        } else {
            snprintf(buf, cap, "%s[%ld,%ld,...,%ld]", name, r->first, cg_sim_blk(r, nblocks, 1), last);
        }
        return;
    }
    if (r->n == 0) {
        snprintf(buf, cap, "%s[]", name);
    } else if (r->n == 1) {
        snprintf(buf, cap, "%s[%ld]", name, r->first);
    } else if (r->first + r->n <= nblocks) {
        snprintf(buf, cap, "%s[%ld..%ld]", name, r->first, r->first + r->n - 1);
    } else {
        long hi = nblocks - 1, tail = r->first + r->n - nblocks - 1;
        char a[48], b[48];
        if (r->first == hi) {
            snprintf(a, sizeof(a), "%ld", hi);
        } else {
            snprintf(a, sizeof(a), "%ld..%ld", r->first, hi);
        }
        if (tail == 0) {
            snprintf(b, sizeof(b), "0");
        } else {
            snprintf(b, sizeof(b), "0..%ld", tail);
        }
        snprintf(buf, cap, "%s[%s,%s]", name, a, b);
    }
}

void cg_sim_error(struct cg_gen *g, const struct cg_schedule *s, const struct cg_sim_where *w,
                  int rank, struct cg_pos pos, const char *fmt, ...)
{
    char where[512];
    size_t n = 0;
    n += (size_t)snprintf(where + n, sizeof(where) - n, "p=%d", w->p);
    if (cg_colls[s->coll].rooted) {
        n += (size_t)snprintf(where + n, sizeof(where) - n, " root=%d", w->root);
    }
    if (w->in_place) {
        n += (size_t)snprintf(where + n, sizeof(where) - n, " MPI_IN_PLACE");
    }
    if (s->topology && w->ppn > 0) {
        n += (size_t)snprintf(where + n, sizeof(where) - n, " ppn=%d", w->ppn);
    }
    for (int i = 0; i < s->nparams && w->params != NULL && n < sizeof(where); i++) {
        if (s->params[i].ranged) {
            n += (size_t)snprintf(where + n, sizeof(where) - n, " %s=%lld", s->params[i].name,
                                  (long long)w->params[i]);
        }
    }
    if (rank >= 0 && n < sizeof(where)) {
        n += (size_t)snprintf(where + n, sizeof(where) - n, " rank %d", rank);
    }
    if (w->phase != NULL) {
        n += (size_t)snprintf(where + n, sizeof(where) - n, ", phase '%s'", w->phase->name);
        if (w->has_round) {
            n += (size_t)snprintf(where + n, sizeof(where) - n, " round %s=%lld", w->phase->var,
                                  (long long)w->round);
        }
    }
    if (w->table != NULL && n < sizeof(where)) {
        n += (size_t)snprintf(where + n, sizeof(where) - n, ", table '%s'", w->table->name);
        if (w->element >= 0 && n < sizeof(where)) {
            n += (size_t)snprintf(where + n, sizeof(where) - n, " %s=%lld",
                                  w->table->var ? w->table->var : "?", (long long)w->element);
        }
    }
    if (w->step != NULL && n < sizeof(where)) {
        snprintf(where + n, sizeof(where) - n, ", step '%s'", w->step->name);
    }
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    cg_error(&g->diag, s->file, pos, "%s: %s", where, msg);
}

/* ---- compiled expressions ------------------------------------------------- */

/* The schedule's expressions compiled (cg_expr_compile), by tree, in an
 * open-addressing table: looked up once per column (below), compiled the
 * first time. */
struct progs {
    const struct cg_expr **keys;  /* trees; NULL: free entry */
    struct cg_expr_prog **progs;  /* their programs */
    size_t cap;                   /* entries, a power of two */
    size_t n;                     /* used */
    unsigned char *same;          /* by slot: the same value on every rank that reads it */
};

/* Whether e reads a slot that may differ between ranks. */
static int varies(const struct cg_expr *e, const unsigned char *same)
{
    if (e == NULL) {
        return 0;
    }
    if (e->kind == CG_E_NAME) {
        return e->slot >= 0 && !same[e->slot];
    }
    if (e->kind == CG_E_INDEX) {
        return 1; /* a table may differ between ranks (compiled as such, expr.c) */
    }
    int v = varies(e->a, same) || varies(e->b, same) || varies(e->c, same);
    for (int i = 0; i < e->nargs && !v; i++) {
        v = varies(e->args[i], same);
    }
    return v;
}

static void lets_vary(const struct cg_let *lets, int nlets, unsigned char *same)
{
    for (int i = 0; i < nlets; i++) {
        same[lets[i].slot] = !varies(lets[i].expr, same);
    }
}

static struct progs *progs_new(const struct cg_schedule *s)
{
    size_t nslots = s->nslots > CG_SLOT_FIRST_FREE ? (size_t)s->nslots : CG_SLOT_FIRST_FREE;
    struct progs *pr = calloc(1, sizeof(*pr));
    if (pr == NULL || (pr->same = malloc(nslots)) == NULL) {
        cg_panic("out of memory");
    }
    /* Rank, node and local differ between ranks, and so may lets computed
     * from them; every other slot holds one value wherever it is read: p,
     * root, ppn, nnodes and params everywhere, a round variable and its
     * phase's lets on the ranks in the round (the only ones that read them,
     * since names are scoped by phase). */
    memset(pr->same, 1, nslots);
    pr->same[CG_SLOT_RANK] = pr->same[CG_SLOT_NODE] = pr->same[CG_SLOT_LOCAL] = 0;
    lets_vary(s->lets, s->nlets, pr->same);
    for (int i = 0; i < s->nphases; i++) {
        lets_vary(s->phases[i].lets, s->phases[i].nlets, pr->same);
    }
    return pr;
}

static void progs_free(struct progs *pr)
{
    for (size_t i = 0; i < pr->cap; i++) {
        cg_expr_prog_free(pr->progs[i]);
    }
    free(pr->keys);
    free(pr->progs);
    free(pr->same);
    free(pr);
}

static size_t prog_slot(const struct progs *pr, const struct cg_expr *e)
{
    size_t i = (size_t)(((uintptr_t)e >> 4) * 0x9e3779b97f4a7c15ull >> 32) & (pr->cap - 1);
    while (pr->keys[i] != NULL && pr->keys[i] != e) {
        i = (i + 1) & (pr->cap - 1);
    }
    return i;
}

static const struct cg_expr_prog *prog_of(struct progs *pr, const struct cg_expr *e)
{
    if (2 * (pr->n + 1) > pr->cap) {
        struct progs old = *pr;
        pr->cap = old.cap ? 2 * old.cap : 64;
        pr->keys = calloc(pr->cap, sizeof(*pr->keys));
        pr->progs = calloc(pr->cap, sizeof(*pr->progs));
        if (pr->keys == NULL || pr->progs == NULL) {
            cg_panic("out of memory");
        }
        for (size_t i = 0; i < old.cap; i++) {
            if (old.keys[i] != NULL) {
                size_t j = prog_slot(pr, old.keys[i]);
                pr->keys[j] = old.keys[i];
                pr->progs[j] = old.progs[i];
            }
        }
        free(old.keys);
        free(old.progs);
    }
    size_t i = prog_slot(pr, e);
    if (pr->keys[i] == NULL) {
        pr->keys[i] = e;
        pr->progs[i] = cg_expr_compile(e);
        pr->n++;
    }
    return pr->progs[i];
}

/* ---- the simulation ------------------------------------------------------ */

struct sim {
    struct cg_gen *g;              /* context */
    const struct cg_schedule *s;   /* what runs */
    struct cg_sim_where w;         /* where we are */
    int p;                         /* ranks */
    int64_t *env;                  /* p x nslots */
    long blocks;                   /* B */
    long nblocks[CG_BUF_COUNT_];   /* blocks per buffer */
    struct cg_sim_msg *sends;      /* one step's sends, all ranks */
    int nsends, capsends;          /* used, allocated */
    struct cg_sim_msg *recvs;      /* one step's receives */
    int nrecvs, caprecvs;          /* used, allocated */
    struct cg_sim_local *locals;   /* one step's reduces or copies */
    unsigned char *ran;            /* per rank: ran the current step */
    /* The column cache (see "columns" below). */
    struct progs *progs;           /* compiled expressions */
    struct cg_expr_work work;      /* their registers */
    int *ranks, *xranks;           /* p each: ranks a column is computed for */
    int64_t *out;                  /* p: cg_expr_run's values */
    unsigned char *failed;         /* p: and failure flags */
    const struct cg_expr **col_e;  /* per column: its expression */
    int64_t *col_val;              /* per column, p values by rank */
    unsigned char *col_have;       /* per column, p flags: the value is there */
    int ncols, capcols;            /* columns used, allocated */
    int next_col;                  /* where eval looks first */
    int64_t spent;                 /* work done by this run (CG_SIM_MAX_WORK) */
    int64_t *work_total;           /* cfg->work, or NULL */
    int64_t work_max;              /* cfg->work_max */
    int64_t work_base;             /* *work_total when this run started */
    int64_t run_max;               /* cfg->run_max, or CG_SIM_MAX_WORK */
    /* The last segmented exchange instance, kept for the reduce after it
     * (seg_check_fused): its messages in rank order and, per rank, where
     * that rank's sends and receives start in them. */
    struct cg_sim_msg *seg_msgs;   /* sends, then receives */
    int nseg_msgs, capseg_msgs;    /* used, allocated */
    int *seg_send_at, *seg_recv_at;/* p + 1 each: rank r's are [at[r], at[r + 1]) */
    unsigned char *seg_ran;        /* p: ran that exchange */
};

static int64_t *env_of(struct sim *m, int rank)
{
    return m->env + (size_t)rank * (size_t)m->s->nslots;
}

/* ---- columns ----------------------------------------------------------------
 *
 * Why: interpreting an expression's tree once per rank was 40 % of verifying
 * the library (a round at p = 1000 evaluates each "when" a thousand times).
 * So before the per-rank loops of a phase's start, a round's lets or a step
 * instance, each expression they will evaluate is run once for all the ranks
 * that will evaluate it (cg_expr_run), into a column of values by rank, and
 * eval() reads the column. A column is a cache and nothing more: where it has
 * no value (a rank it was not computed for, or one whose evaluation fails),
 * eval() evaluates the tree as before, so every error is found and reported
 * exactly as it was. Which ranks a column is computed for follows the loops'
 * "when"s, so that few values are computed that nobody reads.
 */

/* Drops the columns: the environments they were computed from change. */
static void columns_reset(struct sim *m)
{
    m->ncols = 0;
    m->next_col = 0;
}

/* Computes e for ranks[0..n) into a new column; returns it (-1: none). */
static int column(struct sim *m, const struct cg_expr *e, const int *ranks, int n)
{
    if (e == NULL || n == 0) {
        return -1;
    }
    size_t p = (size_t)m->p;
    if (m->ncols == m->capcols) {
        m->capcols = m->capcols ? 2 * m->capcols : 16;
        m->col_e = realloc(m->col_e, sizeof(*m->col_e) * (size_t)m->capcols);
        m->col_val = realloc(m->col_val, sizeof(int64_t) * p * (size_t)m->capcols);
        m->col_have = realloc(m->col_have, p * (size_t)m->capcols);
        if (m->col_e == NULL || m->col_val == NULL || m->col_have == NULL) {
            cg_panic("out of memory");
        }
    }
    int k = m->ncols++;
    int64_t *val = m->col_val + (size_t)k * p;
    unsigned char *have = m->col_have + (size_t)k * p;
    m->col_e[k] = e;
    memset(have, 0, p);
    cg_expr_run(prog_of(m->progs, e), m->env, (size_t)m->s->nslots, m->progs->same, ranks, n,
                m->out, m->failed, &m->work);
    for (int i = 0; i < n; i++) {
        val[ranks[i]] = m->out[i];
        have[ranks[i]] = !m->failed[i];
    }
    return k;
}

/* Keeps the ranks of ranks[0..n) where condition e (NULL: true) is known to
 * hold; returns how many. */
static int keep_true(struct sim *m, const struct cg_expr *e, int *ranks, int n)
{
    int k = column(m, e, ranks, n);
    if (k < 0) {
        return e == NULL ? n : 0;
    }
    const int64_t *val = m->col_val + (size_t)k * (size_t)m->p;
    const unsigned char *have = m->col_have + (size_t)k * (size_t)m->p;
    int kept = 0;
    for (int i = 0; i < n; i++) {
        if (have[ranks[i]] && val[ranks[i]] != 0) {
            ranks[kept++] = ranks[i];
        }
    }
    return kept;
}

static void ref_columns(struct sim *m, const struct cg_ref *r, const int *ranks, int n)
{
    if (r->kind != CG_RANGE_ALL) {
        column(m, r->first, ranks, n);
    }
    if (r->kind == CG_RANGE_SPAN) {
        column(m, r->count, ranks, n);
    }
    if (r->stride != NULL) {
        column(m, r->stride, ranks, n);
    }
}

/* Looks e up for rank: 1 and *out set when its column has the value. Columns
 * are read in about the order they were made, so the search starts after
 * the last one found. */
static int column_value(struct sim *m, int rank, const struct cg_expr *e, int64_t *out)
{
    for (int t = 0, k = m->next_col; t < m->ncols; t++, k = k + 1 < m->ncols ? k + 1 : 0) {
        if (m->col_e[k] == e) {
            m->next_col = k + 1 < m->ncols ? k + 1 : 0;
            if (!m->col_have[(size_t)k * (size_t)m->p + (size_t)rank]) {
                return 0;
            }
            *out = m->col_val[(size_t)k * (size_t)m->p + (size_t)rank];
            return 1;
        }
    }
    return 0;
}

static int eval(struct sim *m, int rank, const struct cg_expr *e, int64_t *out)
{
    if (column_value(m, rank, e, out)) {
        return 0;
    }
    const struct cg_expr *bad = NULL;
    const char *why = NULL;
    if (cg_expr_eval(e, env_of(m, rank), out, &bad, &why) != 0) {
        char text[256];
        cg_expr_print(bad ? bad : e, text, sizeof(text));
        cg_sim_error(m->g, m->s, &m->w, rank, bad ? bad->pos : e->pos, "%s in '%s'", why, text);
        return -1;
    }
    return 0;
}

/* Evaluates a condition; NULL is true. Returns 1, 0, or -1 on error. */
static int truth(struct sim *m, int rank, const struct cg_expr *e)
{
    int64_t v = 1;
    if (e != NULL && eval(m, rank, e, &v) != 0) {
        return -1;
    }
    return v != 0;
}

static long gcd_long(long a, long b)
{
    while (b != 0) {
        long t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* A strided span: its n blocks first + i * stride (mod nb) must all differ,
 * which holds exactly when n <= nb / gcd(stride, nb). The stride is kept
 * modulo nb (a range of at most one block is contiguous). */
static int resolve_stride(struct sim *m, int rank, const struct cg_ref *r,
                          struct cg_sim_range *out)
{
    int64_t stride = 0;
    long nb = m->nblocks[r->buf];
    if (eval(m, rank, r->stride, &stride) != 0) {
        return -1;
    }
    if (stride < 1) {
        cg_sim_error(m->g, m->s, &m->w, rank, r->stride->pos,
                     "a range's stride is %lld; it must be at least 1", (long long)stride);
        return -1;
    }
    if (out->n <= 1) {
        return 0;
    }
    long st = (long)(stride % nb);
    long period = nb / gcd_long(st, nb);
    if (out->n > period) {
        cg_sim_error(m->g, m->s, &m->w, rank, r->stride->pos,
                     "a range of %ld blocks of %s with stride %lld repeats block %ld after %ld "
                     "(%s has %ld blocks)", out->n, cg_buf_names[r->buf], (long long)stride,
                     out->first, period, cg_buf_names[r->buf], nb);
        return -1;
    }
    out->stride = st;
    return 0;
}

static int resolve(struct sim *m, int rank, const struct cg_ref *r, struct cg_sim_range *out)
{
    long nb = m->nblocks[r->buf];
    int64_t first = 0, n = 0;
    out->buf = r->buf;
    out->stride = 1;
    switch (r->kind) {
    case CG_RANGE_ALL:
        out->first = 0;
        out->n = nb;
        return 0;
    case CG_RANGE_BLOCK:
        if (eval(m, rank, r->first, &first) != 0) {
            return -1;
        }
        if (first < 0 || first >= nb) {
            cg_sim_error(m->g, m->s, &m->w, rank, r->first->pos,
                         "block %lld of %s is out of range (it has %ld blocks)", (long long)first,
                         cg_buf_names[r->buf], nb);
            return -1;
        }
        out->first = (long)first;
        out->n = 1;
        return 0;
    case CG_RANGE_SPAN:
        if (eval(m, rank, r->first, &first) != 0 || eval(m, rank, r->count, &n) != 0) {
            return -1;
        }
        if (n < 0 || n > nb) {
            cg_sim_error(m->g, m->s, &m->w, rank, r->count->pos,
                         "a range of %lld %s of %s, which has %ld", (long long)n, cg_blocks_word((long)n),
                         cg_buf_names[r->buf], nb);
            return -1;
        }
        out->first = nb > 0 ? (long)(((first % nb) + nb) % nb) : 0;
        out->n = (long)n;
        if (r->stride != NULL) {
            return resolve_stride(m, rank, r, out);
        }
        return 0;
    }
    return -1;
}

static int push(struct cg_sim_msg **arr, int *n, int *cap, struct cg_sim_msg msg)
{
    if (*n == *cap) {
        *cap = *cap ? *cap * 2 : 64;
        *arr = realloc(*arr, sizeof(**arr) * (size_t)*cap);
        if (*arr == NULL) {
            cg_panic("out of memory");
        }
    }
    (*arr)[(*n)++] = msg;
    return 0;
}

static int xfers(struct sim *m, int rank, const struct cg_xfer *xs, int nx, int is_send)
{
    for (int k = 0; k < nx; k++) {
        const struct cg_xfer *x = &xs[k];
        int on = truth(m, rank, x->when);
        if (on < 0) {
            return -1;
        }
        if (!on) {
            continue;
        }
        int64_t peer = 0;
        struct cg_sim_msg msg = { rank, 0, { CG_BUF_OUT, 0, 0, 1 }, x, k };
        if (eval(m, rank, x->peer, &peer) != 0 || resolve(m, rank, &x->ref, &msg.range) != 0) {
            return -1;
        }
        if (peer < 0 || peer >= m->p) {
            cg_sim_error(m->g, m->s, &m->w, rank, x->peer->pos,
                         "%s rank %lld, outside 0..%d", is_send ? "sends to" : "receives from",
                         (long long)peer, m->p - 1);
            return -1;
        }
        msg.peer = (int)peer;
        if (msg.range.n == 0) {
            continue; /* an empty range posts nothing, on both sides */
        }
        if (is_send) {
            push(&m->sends, &m->nsends, &m->capsends, msg);
        } else {
            push(&m->recvs, &m->nrecvs, &m->caprecvs, msg);
        }
    }
    return 0;
}

/* The columns of a step instance: the step's "when" for the ranks in the
 * round, then, for those where it holds, each transfer's "when" and, where
 * that holds, its peer and blocks; or the step's views, root and colour. */
static void step_columns(struct sim *m, const struct cg_step *st, const unsigned char *in_round)
{
    int n = 0;
    columns_reset(m);
    for (int rank = 0; rank < m->p; rank++) {
        if (in_round[rank]) {
            m->ranks[n++] = rank;
        }
    }
    n = keep_true(m, st->when, m->ranks, n);
    if (st->kind != CG_STEP_EXCHANGE) {
        ref_columns(m, &st->dst, m->ranks, n);
        ref_columns(m, &st->src, m->ranks, n);
        column(m, st->call_root, m->ranks, n);
        column(m, st->call_color, m->ranks, n);
        return;
    }
    for (int k = 0; k < st->nsends + st->nrecvs; k++) {
        const struct cg_xfer *x = k < st->nsends ? &st->sends[k] : &st->recvs[k - st->nsends];
        memcpy(m->xranks, m->ranks, sizeof(int) * (size_t)n);
        int nx = keep_true(m, x->when, m->xranks, n);
        column(m, x->peer, m->xranks, nx);
        ref_columns(m, &x->ref, m->xranks, nx);
    }
}

/* Why a budget: rounds are capped per phase, blocks per buffer, but not
 * their product over phases, steps and process counts: 20 phases of a
 * million rounds verified for 75 s. Adds n units; reports once and returns
 * -1 beyond this run's or the schedule's limit. */
static int spend(struct sim *m, int64_t n, struct cg_pos pos)
{
    m->spent += n;
    int64_t total = m->work_base + m->spent;
    if (m->spent > m->run_max) {
        cg_sim_error(m->g, m->s, &m->w, -1, pos,
                     "the simulation stops here: this run (one p, root and mode) needs more "
                     "than %lld units of work (ranks looked at per round and step, blocks "
                     "moved); verify smaller process counts (--p) or use fewer rounds",
                     (long long)m->run_max);
        return -1;
    }
    if (m->work_total != NULL && m->work_max > 0 && total > m->work_max) {
        cg_sim_error(m->g, m->s, &m->w, -1, pos,
                     "the verification stops here: proving the schedule for every p, root and "
                     "mode so far needs more than %lld units of work (ranks looked at per round "
                     "and step, blocks moved); verify fewer process counts (--p)",
                     (long long)m->work_max);
        return -1;
    }
    return 0;
}

/* Blocks the collected messages and local operations of a step move. */
static int64_t step_blocks(const struct sim *m, int nlocal)
{
    int64_t n = 0;
    for (int k = 0; k < m->nsends; k++) {
        n += m->sends[k].range.n;
    }
    for (int k = 0; k < m->nrecvs; k++) {
        n += m->recvs[k].range.n;
    }
    for (int k = 0; k < nlocal; k++) {
        n += m->locals[k].dst.n + m->locals[k].src.n;
    }
    return n;
}

/* ---- segmented exchanges --------------------------------------------------
 *
 * An exchange with "segments": S cuts each of its messages into S pieces
 * (by element position, the same cut on both ends since both move the same
 * number of elements); when a reduce follows it (cg_step_fused), the emitted
 * code waits for piece j of the receive the reduce reads and reduces piece
 * j while pieces j + 1.. are still arriving. The blocks moved and reduced
 * are those of the unsegmented steps, so the verifier's model of both steps
 * is unchanged; what the interleaving adds is checked here, per rank and
 * round, for every value of the params: S is within 1..CG_MAX_SEGMENTS,
 * the reduce's "from" is exactly one receive of that rank's exchange, and
 * its "into" overlaps none of that exchange's sends and receives (which
 * are still in flight while it is written). Elementwise ops then make the
 * interleaved order compute what the plain one does. */

/* Whether two ranges share a block (same buffer, circular intervals). */
static int seg_overlap(const struct sim *m, const struct cg_sim_range *a,
                       const struct cg_sim_range *b)
{
    long nb = m->nblocks[a->buf];
    if (a->buf != b->buf || a->n == 0 || b->n == 0 || nb <= 0) {
        return 0;
    }
    long ab = ((b->first - a->first) % nb + nb) % nb;
    long ba = ((a->first - b->first) % nb + nb) % nb;
    return ab < a->n || ba < b->n;
}

/* Evaluates S on the first rank that runs the exchange (check.c allows only
 * names equal on every rank) and keeps the step's messages. */
static int seg_keep(struct sim *m, const struct cg_step *st)
{
    for (int rank = 0; rank < m->p; rank++) {
        m->seg_ran[rank] = m->ran[rank];
    }
    for (int rank = 0; rank < m->p; rank++) {
        if (!m->ran[rank]) {
            continue;
        }
        int64_t nseg = 0;
        if (eval(m, rank, st->segments, &nseg) != 0) {
            return -1;
        }
        if (nseg < 1 || nseg > CG_MAX_SEGMENTS) {
            cg_sim_error(m->g, m->s, &m->w, rank, st->segments->pos,
                         "\"segments\" is %lld; it must be in 1..%d", (long long)nseg,
                         CG_MAX_SEGMENTS);
            return -1;
        }
        break;
    }
    int n = m->nsends + m->nrecvs;
    if (n > m->capseg_msgs) {
        m->seg_msgs = realloc(m->seg_msgs, sizeof(*m->seg_msgs) * (size_t)n);
        if (m->seg_msgs == NULL) {
            cg_panic("out of memory");
        }
        m->capseg_msgs = n;
    }
    if (m->nsends > 0) {
        memcpy(m->seg_msgs, m->sends, sizeof(*m->sends) * (size_t)m->nsends);
    }
    if (m->nrecvs > 0) {
        memcpy(m->seg_msgs + m->nsends, m->recvs, sizeof(*m->recvs) * (size_t)m->nrecvs);
    }
    m->nseg_msgs = n;
    int k = 0;
    for (int rank = 0; rank <= m->p; rank++) {
        while (k < m->nsends && m->seg_msgs[k].rank < rank) {
            k++;
        }
        m->seg_send_at[rank] = k;
    }
    k = m->nsends;
    for (int rank = 0; rank <= m->p; rank++) {
        while (k < n && m->seg_msgs[k].rank < rank) {
            k++;
        }
        m->seg_recv_at[rank] = k;
    }
    return 0;
}

/* The receive of rank's kept exchange that is exactly range r, or -1. */
static int seg_recv_of(const struct sim *m, int rank, const struct cg_sim_range *r)
{
    for (int k = m->seg_recv_at[rank]; k < m->seg_recv_at[rank + 1]; k++) {
        const struct cg_sim_range *x = &m->seg_msgs[k].range;
        if (r->n > 0 && x->buf == r->buf && x->first == r->first && x->n == r->n) {
            return k;
        }
    }
    return -1;
}

/* The reduce after a segmented exchange, for each rank that runs it: one
 * of its ranges (from, else into) is exactly one receive R of the
 * exchange, whose pieces it reduces as they arrive; while it runs, the
 * exchange's other messages are in flight, so into overlaps no message but
 * R and from no receive but R (reading what a send reads is fine). */
static int seg_check_fused(struct sim *m, const struct cg_step *st, int nlocal)
{
    char a[160], b[160];
    for (int i = 0; i < nlocal; i++) {
        const struct cg_sim_local *op = &m->locals[i];
        int rank = op->rank;
        if (op->src.n == 0) {
            continue; /* reduces nothing: nothing to wait for piece by piece */
        }
        cg_sim_range_str(&op->src, m->nblocks[op->src.buf], a, sizeof(a));
        cg_sim_range_str(&op->dst, m->nblocks[op->dst.buf], b, sizeof(b));
        if (!m->seg_ran[rank]) {
            cg_sim_error(m->g, m->s, &m->w, rank, st->pos,
                         "reduces %s into %s after a segmented exchange it does not run; the "
                         "reduce after an exchange with \"segments\" completes that exchange, "
                         "so it must run only where the exchange does", a, b);
            return -1;
        }
        int rk = seg_recv_of(m, rank, &op->src);
        if (rk < 0) {
            rk = seg_recv_of(m, rank, &op->dst);
        }
        if (rk < 0) {
            cg_sim_error(m->g, m->s, &m->w, rank, st->pos,
                         "reduces %s into %s, and the segmented exchange before it receives "
                         "neither as one range; the reduce after an exchange with \"segments\" "
                         "reduces each piece of one receive as it arrives, so its \"from\" or "
                         "its \"into\" must be exactly one receive's blocks", a, b);
            return -1;
        }
        for (int pass = 0; pass < 2; pass++) {
            const int *at = pass == 0 ? m->seg_send_at : m->seg_recv_at;
            for (int k = at[rank]; k < at[rank + 1]; k++) {
                const struct cg_sim_msg *x = &m->seg_msgs[k];
                if (k == rk) {
                    continue;
                }
                int hit_dst = seg_overlap(m, &op->dst, &x->range);
                int hit_src = pass == 1 && seg_overlap(m, &op->src, &x->range);
                if (!hit_dst && !hit_src) {
                    continue;
                }
                char c[160];
                cg_sim_range_str(&x->range, m->nblocks[x->range.buf], c, sizeof(c));
                cg_sim_error(m->g, m->s, &m->w, rank, hit_dst ? st->dst.pos : st->src.pos,
                             "%s %s while the segmented exchange before it still %s %s (%s "
                             "rank %d); the reduce after an exchange with \"segments\" runs "
                             "while that exchange's other messages are in flight, so its "
                             "\"into\" may overlap none of them and its \"from\" no receive",
                             hit_dst ? "reduces into" : "reduces from", hit_dst ? b : a,
                             pass == 0 ? "sends" : "receives into", c, pass == 0 ? "to" : "from",
                             x->peer);
                return -1;
            }
        }
    }
    return 0;
}

static int run_step(struct sim *m, const struct cg_sim_consumer *c, const struct cg_step *st,
                    const unsigned char *in_round)
{
    step_columns(m, st, in_round);
    m->w.step = st;
    m->nsends = m->nrecvs = 0;
    int nlocal = 0;
    for (int rank = 0; rank < m->p; rank++) {
        m->ran[rank] = 0;
        if (!in_round[rank]) {
            continue;
        }
        int on = truth(m, rank, st->when);
        if (on < 0) {
            return -1;
        }
        if (!on) {
            continue;
        }
        m->ran[rank] = 1;
        if (st->kind == CG_STEP_EXCHANGE) {
            if (xfers(m, rank, st->sends, st->nsends, 1) != 0 ||
                xfers(m, rank, st->recvs, st->nrecvs, 0) != 0) {
                return -1;
            }
        } else if (st->kind == CG_STEP_CALL) {
            struct cg_sim_local *op = &m->locals[nlocal++];
            memset(op, 0, sizeof(*op));
            op->rank = rank;
            if ((st->call_has_dst && resolve(m, rank, &st->dst, &op->dst) != 0) ||
                (st->call_has_src && resolve(m, rank, &st->src, &op->src) != 0)) {
                return -1;
            }
            if (st->call_root != NULL) {
                int64_t r = 0;
                if (eval(m, rank, st->call_root, &r) != 0) {
                    return -1;
                }
                if (r < 0 || r >= m->p) {
                    cg_sim_error(m->g, m->s, &m->w, rank, st->call_root->pos,
                                 "the call's root is %lld, outside 0..%d", (long long)r, m->p - 1);
                    return -1;
                }
                op->root = (int)r;
            }
            if (st->call_group == CG_GROUP_NODE) {
                op->color = rank / m->w.ppn;
            } else if (st->call_group == CG_GROUP_LANE) {
                op->color = rank % m->w.ppn;
            } else if (st->call_color != NULL) {
                int64_t col = 0;
                if (eval(m, rank, st->call_color, &col) != 0) {
                    return -1;
                }
                if (col < 0 || col > 1000000) {
                    cg_sim_error(m->g, m->s, &m->w, rank, st->call_color->pos,
                                 "the call's colour is %lld; it must be in 0..1000000",
                                 (long long)col);
                    return -1;
                }
                op->color = (int)col;
            }
        } else if (st->kind == CG_STEP_FILL) {
            struct cg_sim_local *op = &m->locals[nlocal++];
            memset(op, 0, sizeof(*op));
            op->rank = rank;
            if (resolve(m, rank, &st->dst, &op->dst) != 0) {
                return -1;
            }
        } else {
            struct cg_sim_local *op = &m->locals[nlocal++];
            op->rank = rank;
            if (resolve(m, rank, &st->dst, &op->dst) != 0 ||
                resolve(m, rank, &st->src, &op->src) != 0) {
                return -1;
            }
            if (op->dst.n != op->src.n) {
                cg_sim_error(m->g, m->s, &m->w, rank, st->pos,
                             "%s %ld %s from %ld %s: the two ranges must be equally long",
                             st->kind == CG_STEP_REDUCE ? "reduces into" : "copies into",
                             op->dst.n, cg_blocks_word(op->dst.n), op->src.n,
                             cg_blocks_word(op->src.n));
                return -1;
            }
        }
    }
    if (st->kind == CG_STEP_CALL &&
        (st->call_group == CG_GROUP_NODE || st->call_group == CG_GROUP_LANE)) {
        /* Why whole groups: the node and lane communicators exist already
         * (split once per communicator), so a group may sit a call out, but
         * a callee is a collective on its group: all of it runs, or none. */
        int ppn = m->w.ppn, node = st->call_group == CG_GROUP_NODE;
        for (int rank = 0; rank < m->p; rank++) {
            int first = node ? rank - rank % ppn : rank % ppn;
            if (m->ran[rank] != m->ran[first]) {
                int in = m->ran[rank] ? rank : first, out = m->ran[rank] ? first : rank;
                cg_sim_error(m->g, m->s, &m->w, out, st->pos,
                             "does not run this call step, but rank %d of the same %s does; a "
                             "call runs %s on the whole %s (%s), so all of it must run it in "
                             "the same round, or none", in, node ? "node" : "lane",
                             cg_colls[st->call_coll].name, node ? "node" : "lane",
                             node ? "ranks node * ppn .. node * ppn + ppn - 1"
                                  : "ranks local, local + ppn, ...");
                return -1;
            }
        }
    } else if (st->kind == CG_STEP_CALL) {
        /* Why every rank: the callee is a collective on the whole
         * communicator; a rank that skips it would deadlock the others. */
        for (int rank = 0; rank < m->p; rank++) {
            if (!m->ran[rank]) {
                cg_sim_error(m->g, m->s, &m->w, rank, st->pos,
                             "does not run this call step, but a call runs %s on the whole "
                             "communicator, so every rank must run it in the same round",
                             cg_colls[st->call_coll].name);
                return -1;
            }
            if (st->call_color == NULL && m->locals[rank].root != m->locals[0].root) {
                cg_sim_error(m->g, m->s, &m->w, rank, st->call_root->pos,
                             "the call's root is %d here but %d on rank 0; it must be the same "
                             "on every rank", m->locals[rank].root, m->locals[0].root);
                return -1;
            }
        }
    }
    if (st->kind == CG_STEP_EXCHANGE && st->segments != NULL && seg_keep(m, st) != 0) {
        return -1;
    }
    if (st->kind == CG_STEP_REDUCE && cg_step_fused(m->w.phase, (int)(st - m->w.phase->steps)) &&
        seg_check_fused(m, st, nlocal) != 0) {
        return -1;
    }
    int rc = 0;
    if (spend(m, CG_SIM_WORK_FIXED + m->p + step_blocks(m, nlocal), st->pos) != 0) {
        return -1;
    }
    if (c->step_ranks && c->step_ranks(c->arg, &m->w, m->ran) != 0) {
        return -1;
    }
    if (st->kind == CG_STEP_EXCHANGE) {
        if (c->exchange) {
            rc = c->exchange(c->arg, &m->w, m->sends, m->nsends, m->recvs, m->nrecvs);
        }
    } else if (c->local && nlocal > 0) {
        rc = c->local(c->arg, &m->w, m->locals, nlocal);
    }
    m->w.step = NULL;
    return rc ? -1 : 0;
}

/* Evaluates lets in order for the ranks flagged in `on`, which are
 * m->ranks[0..n). */
static int eval_lets(struct sim *m, const struct cg_let *lets, int nlets, const unsigned char *on,
                     int n)
{
    /* A let's column is computed from the environments its predecessors'
     * columns wrote; a rank whose value is missing there drops out of the
     * later columns, and eval() below evaluates it the slow way. */
    columns_reset(m);
    for (int k = 0; k < nlets && n > 0; k++) {
        int c = column(m, lets[k].expr, m->ranks, n);
        if (c < 0) {
            break;
        }
        const unsigned char *have = m->col_have + (size_t)c * (size_t)m->p;
        int kept = 0;
        for (int i = 0; i < n; i++) {
            int rank = m->ranks[i];
            if (have[rank]) {
                env_of(m, rank)[lets[k].slot] = m->col_val[(size_t)c * (size_t)m->p + (size_t)rank];
                m->ranks[kept++] = rank;
            }
        }
        n = kept;
    }
    for (int rank = 0; rank < m->p; rank++) {
        if (!on[rank]) {
            continue;
        }
        int64_t *env = env_of(m, rank);
        for (int k = 0; k < nlets; k++) {
            if (eval(m, rank, lets[k].expr, &env[lets[k].slot]) != 0) {
                return -1;
            }
        }
    }
    return 0;
}

/* ---- the table memo (sim.h) ------------------------------------------- */

#define CG_TABLE_MEMO_BYTES ((size_t)64 << 20)

struct memo_entry {
    uint64_t hash;  /* of key; 0: free */
    int64_t *key;   /* the values of the memo's key slots */
    int32_t *vals;  /* per table: its length, then its elements */
};

struct cg_table_memo {
    const struct cg_schedule *s; /* whose tables */
    int p;                       /* at which p */
    int keys[256];               /* the named slots the tables read */
    int nkeys;                   /* how many */
    struct memo_entry *tab;      /* open addressing */
    size_t cap, n;               /* entries, used */
    size_t bytes;                /* memory held */
};

struct cg_table_memo *cg_table_memo_new(void)
{
    struct cg_table_memo *memo = calloc(1, sizeof(*memo));
    if (memo == NULL) {
        cg_panic("out of memory");
    }
    return memo;
}

static void memo_clear(struct cg_table_memo *memo)
{
    for (size_t i = 0; i < memo->cap; i++) {
        free(memo->tab[i].key);
        free(memo->tab[i].vals);
    }
    free(memo->tab);
    memo->tab = NULL;
    memo->cap = memo->n = memo->bytes = 0;
}

void cg_table_memo_free(struct cg_table_memo *memo)
{
    if (memo != NULL) {
        memo_clear(memo);
        free(memo);
    }
}

struct key_walk {
    unsigned char *read;  /* by slot */
};

static void key_slot(struct cg_expr *e, void *arg)
{
    struct key_walk *kw = arg;
    if (e->kind == CG_E_NAME && e->slot >= 0 && e->slot < 256) {
        kw->read[e->slot] = 1;
    }
}

/* The key: every named slot a table's size or value reads, but the
 * indices (set by the loop) and the tables' own lengths (INDEX nodes). */
static void memo_keys(struct cg_table_memo *memo, const struct cg_schedule *s)
{
    unsigned char read[256] = { 0 };
    struct key_walk kw = { read };
    for (int i = 0; i < s->ntables; i++) {
        cg_expr_walk_names(s->tables[i].size, key_slot, &kw);
        cg_expr_walk_names(s->tables[i].value, key_slot, &kw);
    }
    for (int i = 0; i < s->ntables; i++) {
        if (s->tables[i].var_slot >= 0 && s->tables[i].var_slot < 256) {
            read[s->tables[i].var_slot] = 0;
        }
    }
    memo->nkeys = 0;
    for (int k = 0; k < 256; k++) {
        if (read[k]) {
            memo->keys[memo->nkeys++] = k;
        }
    }
}

static uint64_t memo_hash(const struct cg_table_memo *memo, const int64_t *env)
{
    uint64_t h = 1469598103934665603ull;
    for (int k = 0; k < memo->nkeys; k++) {
        h = (h ^ (uint64_t)env[memo->keys[k]]) * 1099511628211ull;
    }
    return h ? h : 1;
}

static struct memo_entry *memo_find(struct cg_table_memo *memo, const int64_t *env, uint64_t h)
{
    if (memo->cap == 0) {
        return NULL;
    }
    for (size_t i = h & (memo->cap - 1);; i = (i + 1) & (memo->cap - 1)) {
        struct memo_entry *en = &memo->tab[i];
        if (en->hash == 0) {
            return en;
        }
        int same = en->hash == h;
        for (int k = 0; k < memo->nkeys && same; k++) {
            same = en->key[k] == env[memo->keys[k]];
        }
        if (same) {
            return en;
        }
    }
}

/* Copies a hit into env; 0 when there is none. */
static int memo_load(struct cg_table_memo *memo, const struct cg_schedule *s, int64_t *env)
{
    struct memo_entry *en = memo_find(memo, env, memo_hash(memo, env));
    if (en == NULL || en->hash == 0) {
        return 0;
    }
    const int32_t *v = en->vals;
    for (int i = 0; i < s->ntables; i++) {
        int32_t n = *v++;
        env[s->tables[i].slot] = n;
        for (int32_t k = 0; k < n; k++) {
            env[s->tables[i].base + k] = *v++;
        }
    }
    return 1;
}

static void memo_store(struct cg_table_memo *memo, const struct cg_schedule *s,
                       const int64_t *env)
{
    size_t nv = (size_t)s->ntables;
    for (int i = 0; i < s->ntables; i++) {
        nv += (size_t)env[s->tables[i].slot];
    }
    size_t bytes = nv * sizeof(int32_t) + (size_t)memo->nkeys * sizeof(int64_t);
    if (memo->bytes + bytes > CG_TABLE_MEMO_BYTES) {
        return;
    }
    if (2 * (memo->n + 1) > memo->cap) {
        struct memo_entry *old = memo->tab;
        size_t ocap = memo->cap;
        memo->cap = ocap ? 2 * ocap : 256;
        memo->tab = calloc(memo->cap, sizeof(*memo->tab));
        if (memo->tab == NULL) {
            cg_panic("out of memory");
        }
        for (size_t i = 0; i < ocap; i++) {
            if (old[i].hash != 0) {
                size_t j = old[i].hash & (memo->cap - 1);
                while (memo->tab[j].hash != 0) {
                    j = (j + 1) & (memo->cap - 1);
                }
                memo->tab[j] = old[i];
            }
        }
        free(old);
    }
    uint64_t h = memo_hash(memo, env);
    struct memo_entry *en = memo_find(memo, env, h);
    if (en->hash != 0) {
        return; /* another rank of this run had the same inputs */
    }
    en->key = malloc(sizeof(int64_t) * (size_t)(memo->nkeys > 0 ? memo->nkeys : 1));
    en->vals = malloc(sizeof(int32_t) * nv);
    if (en->key == NULL || en->vals == NULL) {
        cg_panic("out of memory");
    }
    en->hash = h;
    for (int k = 0; k < memo->nkeys; k++) {
        en->key[k] = env[memo->keys[k]];
    }
    int32_t *v = en->vals;
    for (int i = 0; i < s->ntables; i++) {
        int64_t n = env[s->tables[i].slot];
        *v++ = (int32_t)n;
        for (int64_t k = 0; k < n; k++) {
            *v++ = (int32_t)env[s->tables[i].base + k];
        }
    }
    memo->n++;
    memo->bytes += bytes;
}

/* The tables, in order, on every rank: the length first (0..max), then
 * element i on the ranks whose table has more than i elements, each
 * reading the elements before it (env[t->slot] counts those); a group's
 * columns take turns at each i. Ranks whose inputs the memo knows copy
 * them instead. */
static int eval_tables(struct sim *m, struct cg_table_memo *memo)
{
    const struct cg_schedule *s = m->s;
    int64_t *len = NULL;
    unsigned char *todo = NULL;
    int rc = 0;
    if (s->ntables == 0) {
        return 0;
    }
    if ((len = calloc((size_t)m->p, sizeof(int64_t))) == NULL ||
        (todo = malloc((size_t)m->p)) == NULL) {
        cg_panic("out of memory");
    }
    if (memo != NULL && (memo->s != s || memo->p != m->p)) {
        memo_clear(memo);
        if (memo->s != s) {
            memo_keys(memo, s);
        }
        memo->s = s;
        memo->p = m->p;
    }
    for (int rank = 0; rank < m->p; rank++) {
        todo[rank] = memo == NULL || !memo_load(memo, s, env_of(m, rank));
    }
    for (int g = 0; g < s->ntables && rc == 0; g += s->tables[g].ncols) {
        const struct cg_table *cols = &s->tables[g];
        const struct cg_table *t = cols;
        int64_t most = 0;
        m->w.table = t;
        m->w.element = -1;
        columns_reset(m);
        for (int rank = 0; rank < m->p && rc == 0; rank++) {
            len[rank] = 0;
            if (!todo[rank]) {
                continue;
            }
            for (int c = 0; c < t->ncols; c++) {
                env_of(m, rank)[cols[c].slot] = 0;
            }
            if (eval(m, rank, t->size, &len[rank]) != 0) {
                rc = -1;
            } else if (len[rank] < 0 || len[rank] > t->max) {
                cg_sim_error(m->g, s, &m->w, rank, t->size->pos, "\"size\" is %lld, outside "
                             "0..%lld (the table's \"max\")", (long long)len[rank],
                             (long long)t->max);
                rc = -1;
            } else if (len[rank] > most) {
                most = len[rank];
            }
        }
        for (int64_t i = 0; i < most && rc == 0; i++) {
            int n = 0;
            m->w.element = i;
            for (int rank = 0; rank < m->p; rank++) {
                if (len[rank] > i) {
                    env_of(m, rank)[t->var_slot] = i;
                    m->ranks[n++] = rank;
                }
            }
            for (int c = 0; c < t->ncols && rc == 0; c++) {
                const struct cg_table *col = &cols[c];
                m->w.table = col;
                if (spend(m, n + 10, col->pos) != 0) {
                    rc = -1;
                    break;
                }
                columns_reset(m);
                column(m, col->value, m->ranks, n);
                for (int k = 0; k < n && rc == 0; k++) {
                    int64_t *env = env_of(m, m->ranks[k]);
                    if (eval(m, m->ranks[k], col->value, &env[col->base + i]) != 0) {
                        rc = -1;
                    }
                }
                /* Why after the loop: every rank's element i reads elements
                 * before i only, so the column above saw the lengths as i. */
                for (int k = 0; k < n; k++) {
                    env_of(m, m->ranks[k])[col->slot] = i + 1;
                }
            }
        }
    }
    for (int rank = 0; rank < m->p && rc == 0 && memo != NULL; rank++) {
        if (todo[rank]) {
            memo_store(memo, s, env_of(m, rank));
        }
    }
    free(len);
    free(todo);
    columns_reset(m);
    for (int rank = 0; rank < m->p; rank++) {
        m->ranks[rank] = rank;
    }
    m->w.table = NULL;
    return rc;
}

static int run_phase(struct sim *m, const struct cg_sim_consumer *c, const struct cg_phase *ph,
                     unsigned char *active, int64_t *lo, int64_t *hi, unsigned char *in_round)
{
    const struct cg_schedule *s = m->s;
    m->w.phase = ph;
    m->w.has_round = 0;
    int any = 0;
    int64_t glo = INT64_MAX, ghi = INT64_MIN;
    columns_reset(m);
    for (int rank = 0; rank < m->p; rank++) {
        m->ranks[rank] = rank;
    }
    int n = keep_true(m, ph->when, m->ranks, m->p);
    if (ph->rounds != CG_ROUNDS_NONE) {
        column(m, ph->from, m->ranks, n);
        column(m, ph->to, m->ranks, n);
    }
    for (int rank = 0; rank < m->p; rank++) {
        int on = truth(m, rank, ph->when);
        if (on < 0) {
            return -1;
        }
        active[rank] = (unsigned char)on;
        if (!on) {
            continue;
        }
        lo[rank] = 0;
        hi[rank] = 0;
        if (ph->rounds != CG_ROUNDS_NONE) {
            int64_t a = 0, b = 0;
            if (ph->from != NULL && eval(m, rank, ph->from, &a) != 0) {
                return -1;
            }
            if (eval(m, rank, ph->to, &b) != 0) {
                return -1;
            }
            if (ph->rounds == CG_ROUNDS_COUNT) {
                lo[rank] = 0;
                hi[rank] = b - 1;
            } else if (ph->rounds == CG_ROUNDS_UP) {
                lo[rank] = a;
                hi[rank] = b;
            } else {
                lo[rank] = b;
                hi[rank] = a;
            }
            if (hi[rank] - lo[rank] >= CG_SIM_MAX_ROUNDS) {
                cg_sim_error(m->g, s, &m->w, rank, ph->rounds_pos,
                             "%lld rounds; at most %d are simulated",
                             (long long)(hi[rank] - lo[rank] + 1), CG_SIM_MAX_ROUNDS);
                return -1;
            }
        }
        if (lo[rank] <= hi[rank]) {
            any = 1;
            glo = lo[rank] < glo ? lo[rank] : glo;
            ghi = hi[rank] > ghi ? hi[rank] : ghi;
        }
    }
    if (c->phase_ranks && c->phase_ranks(c->arg, &m->w, active) != 0) {
        return -1;
    }
    if (!any) {
        m->w.phase = NULL;
        return 0;
    }
    int down = ph->rounds == CG_ROUNDS_DOWN;
    for (int64_t i = 0; i <= ghi - glo; i++) {
        int64_t v = down ? ghi - i : glo + i;
        m->w.has_round = ph->rounds != CG_ROUNDS_NONE;
        m->w.round = v;
        int n_in = 0;
        for (int rank = 0; rank < m->p; rank++) {
            in_round[rank] = (unsigned char)(active[rank] && lo[rank] <= v && v <= hi[rank]);
            if (in_round[rank]) {
                if (ph->rounds != CG_ROUNDS_NONE) {
                    env_of(m, rank)[ph->var_slot] = v;
                }
                m->ranks[n_in++] = rank;
            }
        }
        if (spend(m, CG_SIM_WORK_FIXED + m->p, ph->rounds_pos) != 0) {
            return -1;
        }
        if (eval_lets(m, ph->lets, ph->nlets, in_round, n_in) != 0) {
            return -1;
        }
        if (c->round_ranks && m->w.has_round && c->round_ranks(c->arg, &m->w, in_round) != 0) {
            return -1;
        }
        for (int si = 0; si < ph->nsteps; si++) {
            if (run_step(m, c, &ph->steps[si], in_round) != 0) {
                return -1;
            }
        }
    }
    m->w.phase = NULL;
    m->w.has_round = 0;
    return 0;
}

/* Evaluates a per-schedule size (blocks, scratch) and insists that every
 * rank agrees, since the emitted code sizes buffers from it. */
static int uniform(struct sim *m, const struct cg_expr *e, const char *what, long min, long *out)
{
    int64_t first = 0;
    columns_reset(m);
    for (int rank = 0; rank < m->p; rank++) {
        m->ranks[rank] = rank;
    }
    column(m, e, m->ranks, m->p);
    for (int rank = 0; rank < m->p; rank++) {
        int64_t v = 0;
        if (eval(m, rank, e, &v) != 0) {
            return -1;
        }
        if (rank == 0) {
            first = v;
        } else if (v != first) {
            cg_sim_error(m->g, m->s, &m->w, rank, e->pos,
                         "%s is %lld here but %lld on rank 0; it must not depend on rank", what,
                         (long long)v, (long long)first);
            return -1;
        }
    }
    if (first < min || first > CG_SIM_MAX_BLOCKS) {
        cg_sim_error(m->g, m->s, &m->w, -1, e->pos, "%s is %lld; it must be in %ld..%d", what,
                     (long long)first, min, CG_SIM_MAX_BLOCKS);
        return -1;
    }
    *out = (long)first;
    return 0;
}

int cg_sim_default_ppn(int p)
{
    for (int d = 1; d <= p; d++) {
        if (p % d == 0 && (long)d * d >= p) {
            return d;
        }
    }
    return p;
}

int cg_sim_run(struct cg_gen *g, const struct cg_schedule *s, int p, int root,
               const struct cg_sim_consumer *c)
{
    struct cg_sim_cfg cfg = { p, root, 0, NULL, 0, NULL, 0, 0, NULL };
    return cg_sim_run_cfg(g, s, &cfg, c);
}

int cg_sim_run_cfg(struct cg_gen *g, const struct cg_schedule *s, const struct cg_sim_cfg *cfg,
                   const struct cg_sim_consumer *c)
{
    if (!s->checked) {
        cg_panic("cg_sim_run on an unchecked schedule");
    }
    int p = cfg->p, root = cfg->root;
    int ppn = s->topology ? (cfg->ppn > 0 ? cfg->ppn : cg_sim_default_ppn(p)) : 0;
    if (s->topology && p % ppn != 0) {
        cg_panic("ppn %d does not divide p %d", ppn, p);
    }
    int64_t defaults[64];
    const int64_t *pv = cfg->params;
    if (pv == NULL) {
        for (int i = 0; i < s->nparams && i < 64; i++) {
            defaults[i] = s->params[i].value;
        }
        pv = defaults;
    }
    struct sim m = { 0 };
    m.g = g;
    m.s = s;
    m.p = p;
    m.w.p = p;
    m.w.root = root;
    m.w.ppn = ppn;
    m.w.in_place = cfg->in_place;
    m.w.params = pv;
    m.work_total = cfg->work;
    m.work_max = cfg->work_max;
    m.run_max = cfg->run_max > 0 ? cfg->run_max : CG_SIM_MAX_WORK;
    m.work_base = cfg->work != NULL ? *cfg->work : 0;
    m.env = calloc((size_t)p * (size_t)(s->nslots > 0 ? s->nslots : 1), sizeof(int64_t));
    unsigned char *active = calloc((size_t)p, 2);
    int64_t *lo = calloc((size_t)p, sizeof(int64_t) * 2);
    m.locals = calloc((size_t)p, sizeof(*m.locals));
    m.ran = calloc((size_t)p, 1);
    m.progs = progs_new(s);
    m.ranks = calloc((size_t)p, 2 * sizeof(int));
    m.out = calloc((size_t)p, sizeof(int64_t));
    m.failed = calloc((size_t)p, 1);
    m.seg_send_at = calloc((size_t)p + 1, 2 * sizeof(int));
    m.seg_ran = calloc((size_t)p, 1);
    if (m.seg_send_at == NULL || m.seg_ran == NULL || m.ran == NULL || m.env == NULL || active == NULL || lo == NULL || m.locals == NULL ||
        m.ranks == NULL || m.out == NULL || m.failed == NULL) {
        cg_panic("out of memory");
    }
    m.xranks = m.ranks + p;
    m.seg_recv_at = m.seg_send_at + p + 1;
    int64_t *hi = lo + p;
    unsigned char *in_round = active + p;
    int rc = -1;
    for (int rank = 0; rank < p; rank++) {
        int64_t *env = env_of(&m, rank);
        env[CG_SLOT_P] = p;
        env[CG_SLOT_RANK] = rank;
        env[CG_SLOT_ROOT] = root;
        if (ppn > 0) {
            env[CG_SLOT_PPN] = ppn;
            env[CG_SLOT_NNODES] = p / ppn;
            env[CG_SLOT_NODE] = rank / ppn;
            env[CG_SLOT_LOCAL] = rank % ppn;
        }
        for (int i = 0; i < s->nparams; i++) {
            env[s->params[i].slot] = pv[i];
        }
        m.ranks[rank] = rank;
        active[rank] = 1;
    }
    if (eval_lets(&m, s->lets, s->nlets, active, p) != 0 || eval_tables(&m, cfg->memo) != 0) {
        goto out;
    }
    long scratch = 0;
    if (uniform(&m, s->blocks, "\"blocks\"", 1, &m.blocks) != 0) {
        goto out;
    }
    if (s->scratch != NULL && uniform(&m, s->scratch, "\"scratch\"", 0, &scratch) != 0) {
        goto out;
    }
    for (int b = 0; b < CG_BUF_COUNT_; b++) {
        m.nblocks[b] = cg_sim_nblocks(s->coll, (enum cg_bufid)b, p, m.blocks, scratch);
    }
    if (c->start && c->start(c->arg, &m.w, m.blocks, m.nblocks) != 0) {
        goto out;
    }
    for (int pi = 0; pi < s->nphases; pi++) {
        if (run_phase(&m, c, &s->phases[pi], active, lo, hi, in_round) != 0) {
            goto out;
        }
    }
    if (c->finish && c->finish(c->arg, &m.w) != 0) {
        goto out;
    }
    rc = 0;
out:
    if (m.work_total != NULL) {
        *m.work_total += m.spent;
    }
    free(m.env);
    free(active);
    free(lo);
    free(m.locals);
    free(m.ran);
    free(m.sends);
    free(m.recvs);
    progs_free(m.progs);
    cg_expr_work_free(&m.work);
    free(m.ranks);
    free(m.out);
    free(m.failed);
    free(m.seg_send_at);
    free(m.seg_ran);
    free(m.seg_msgs);
    free(m.col_e);
    free(m.col_val);
    free(m.col_have);
    return rc;
}
