/* analyse.c - pass 4: static facts about a schedule at one (p, root):
 * who sends which blocks to whom in every round, totals, and an
 * alpha-beta-gamma prediction. Feeds `collgen explain` and the worked
 * table in each emitted file's header. Reports no errors of its own.
 */
#include <stdlib.h>
#include <string.h>

#include "passes.h"
#include "sim.h"

void cg_model_init(struct cg_model *m)
{
    m->alpha_us = 1.0;
    m->beta_ns_B = 0.1;
    m->gamma_ns_B = 0.2;
}


/* ---- blocks to bytes (shared by traffic.c, simulate.c, goal.c) ---------- */

void cg_bytes_init(struct cg_bytes *b, const struct cg_schedule *s, int p, size_t count, int elem)
{
    memset(b, 0, sizeof(*b));
    b->count = count;
    b->elem = elem;
    switch (cg_colls[s->coll].shape) {
    case CG_SHAPE_UNIFORM:
    case CG_SHAPE_ONE:
        b->vec = count * (size_t)p; /* count is per rank, as in MPI */
        break;
    case CG_SHAPE_TOKEN:
        /* A barrier moves one byte whatever count is asked for. */
        b->count = 1;
        b->elem = 1;
        b->vec = 1;
        break;
    case CG_SHAPE_SPLIT:
        b->vec = count;
        break;
    }
}

void cg_bytes_start(struct cg_bytes *b, long blocks, const long *nblocks)
{
    b->blocks = blocks;
    memcpy(b->nb, nblocks, sizeof(b->nb));
}

/* Why not a loop over the blocks: ranges of 65,536 blocks at p = 65,536
 * made that quadratic. Block j holds vec / B elements, one more when j <
 * vec % B; a range's block i is ((first + i) % nb) % B. */
double cg_range_bytes(const struct cg_bytes *b, const struct cg_sim_range *r)
{
    size_t B = (size_t)b->blocks, base = b->vec / B, rem = b->vec % B, n = 0;
    long nb = b->nb[r->buf];
    if (rem == 0 || r->n == 0) {
        n = base * (size_t)r->n;
    } else if (r->stride > 1) {
        for (long i = 0; i < r->n; i++) {
            long j = cg_sim_blk(r, nb, i) % b->blocks;
            n += base + ((size_t)j < rem ? 1 : 0);
        }
    } else if (nb % b->blocks == 0) {
        /* j = (first + i) % B: full turns of B blocks hold rem extra
         * elements each; the rest is an interval of B (mod B). */
        size_t turns = (size_t)r->n / B, left = (size_t)r->n % B, s = (size_t)r->first % B;
        n = base * (size_t)r->n + turns * rem;
        size_t e = s + left; /* [s, e) mod B, intersected with [0, rem) */
        n += (s < rem ? (e < rem ? e : rem) - s : 0);
        if (e > B) {
            size_t e2 = e - B;
            n += e2 < rem ? e2 : rem;
        }
    } else {
        for (long i = 0; i < r->n; i++) {
            long j = ((r->first + i) % nb) % b->blocks;
            n += base + ((size_t)j < rem ? 1 : 0);
        }
    }
    return (double)n * (double)b->elem;
}

struct tally {
    const struct cg_schedule *s; /* what runs */
    struct cg_analysis *a;       /* totals */
    const struct cg_model *model;/* costs */
    FILE *trace;                 /* per-instance lines, or NULL */
    int compact;                 /* one line per instance */
    const char *prefix;          /* before each compact line */
    struct cg_bytes by;          /* blocks -> bytes */
    double *sent;                /* per rank, bytes */
    double *recv;                /* per rank, bytes */
    double *reduced;             /* per rank, bytes */
    double *step_out;            /* per rank, this instance */
    double *step_in;             /* per rank, this instance */
};

static double range_bytes(const struct tally *t, const struct cg_sim_range *r)
{
    return cg_range_bytes(&t->by, r);
}

static void instance_head(struct tally *t, const struct cg_sim_where *w)
{
    const struct cg_step *st = w->step;
    if (t->compact) {
        fprintf(t->trace, "%s%s", t->prefix, w->phase->name);
        if (w->has_round) {
            fprintf(t->trace, " %s=%lld", w->phase->var, (long long)w->round);
        }
        fprintf(t->trace, " %s:", st->name);
    } else {
        fprintf(t->trace, "phase %s", w->phase->name);
        if (w->has_round) {
            fprintf(t->trace, ", %s=%lld", w->phase->var, (long long)w->round);
        }
        if (strcmp(st->name, cg_op_names[st->kind]) == 0) {
            fprintf(t->trace, ", step %s (%s:%d)\n", st->name, t->s->file, st->pos.line);
        } else {
            fprintf(t->trace, ", step %s (%s, %s:%d)\n", st->name, cg_op_names[st->kind],
                    t->s->file, st->pos.line);
        }
    }
}

static int on_start(void *arg, const struct cg_sim_where *w, long blocks, const long *nblocks)
{
    struct tally *t = arg;
    (void)w;
    cg_bytes_start(&t->by, blocks, nblocks);
    return 0;
}

static int on_exchange(void *arg, const struct cg_sim_where *w, const struct cg_sim_msg *sends,
                       int nsends, const struct cg_sim_msg *recvs, int nrecvs)
{
    struct tally *t = arg;
    struct cg_analysis *a = t->a;
    if (nsends == 0 && nrecvs == 0) {
        return 0;
    }
    memset(t->step_out, 0, sizeof(double) * (size_t)a->p);
    memset(t->step_in, 0, sizeof(double) * (size_t)a->p);
    for (int k = 0; k < nsends; k++) {
        double b = range_bytes(t, &sends[k].range);
        t->step_out[sends[k].rank] += b;
        t->sent[sends[k].rank] += b;
        a->messages++;
    }
    for (int k = 0; k < nrecvs; k++) {
        double b = range_bytes(t, &recvs[k].range);
        t->step_in[recvs[k].rank] += b;
        t->recv[recvs[k].rank] += b;
    }
    double most = 0;
    for (int r = 0; r < a->p; r++) {
        most = t->step_out[r] > most ? t->step_out[r] : most;
        most = t->step_in[r] > most ? t->step_in[r] : most;
    }
    a->rounds++;
    a->t_alpha_us += t->model->alpha_us;
    a->t_beta_us += most * t->model->beta_ns_B / 1000.0;
    if (t->trace == NULL) {
        return 0;
    }
    instance_head(t, w);
    char rb[96];
    for (int r = 0; r < a->p; r++) {
        int first = 1;
        for (int k = 0; k < nsends; k++) {
            if (sends[k].rank != r) {
                continue;
            }
            cg_sim_range_str(&sends[k].range, t->by.nb[sends[k].range.buf], rb, sizeof(rb));
            if (t->compact) {
                fprintf(t->trace, " %d->%d %s;", r, sends[k].peer, rb);
            } else if (first) {
                fprintf(t->trace, "  rank %d: %s -> %d", r, rb, sends[k].peer);
            } else {
                fprintf(t->trace, ", %s -> %d", rb, sends[k].peer);
            }
            first = 0;
        }
        if (t->compact) {
            continue;
        }
        for (int k = 0; k < nrecvs; k++) {
            if (recvs[k].rank != r) {
                continue;
            }
            cg_sim_range_str(&recvs[k].range, t->by.nb[recvs[k].range.buf], rb, sizeof(rb));
            if (first) {
                fprintf(t->trace, "  rank %d: %s <- %d", r, rb, recvs[k].peer);
            } else {
                fprintf(t->trace, ", %s <- %d", rb, recvs[k].peer);
            }
            first = 0;
        }
        if (!first) {
            fputc('\n', t->trace);
        }
    }
    if (t->compact) {
        fputc('\n', t->trace);
    }
    return 0;
}


/* The ranks per node a topology schedule is shown with: --ppn when it
 * divides p, else the default shape. */
int cg_analyse_ppn(const struct cg_gen *g, const struct cg_schedule *s, int p)
{
    if (!s->topology) {
        return 0;
    }
    if (g->opt != NULL && g->opt->ppn > 0 && p % g->opt->ppn == 0) {
        return g->opt->ppn;
    }
    return cg_sim_default_ppn(p);
}

/* A call step: what each rank passes to the callee. Not costed: the model
 * has no figures for the callee (its own `explain` has them). */
static int on_call(struct tally *t, const struct cg_sim_where *w, const struct cg_sim_local *ops,
                   int nops)
{
    if (t->trace == NULL) {
        return 0;
    }
    const struct cg_step *st = w->step;
    instance_head(t, w);
    char d[96], f[96], root[64] = "";
    for (int k = 0; k < nops; k++) {
        root[0] = '\0';
        if (st->call_root != NULL) {
            snprintf(root, sizeof(root), " root %d", ops[k].root);
        }
        if (st->call_color != NULL) {
            size_t n = strlen(root);
            snprintf(root + n, sizeof(root) - n, " colour %d", ops[k].color);
        } else if (st->call_group == CG_GROUP_NODE || st->call_group == CG_GROUP_LANE) {
            size_t n = strlen(root);
            snprintf(root + n, sizeof(root) - n, " on %s %d",
                     st->call_group == CG_GROUP_NODE ? "node" : "lane", ops[k].color);
        }
        cg_sim_range_str(&ops[k].dst, t->by.nb[ops[k].dst.buf], d, sizeof(d));
        if (st->call_has_src) {
            cg_sim_range_str(&ops[k].src, t->by.nb[ops[k].src.buf], f, sizeof(f));
        }
        /* "call native gather root 0 ...", "call gather_linear root 0 ..." */
        char what[120];
        snprintf(what, sizeof(what), "%s%s%s%s", st->call_use ? st->call_use : "native",
                 st->call_use ? "" : " ", st->call_use ? "" : cg_colls[st->call_coll].name,
                 st->call_bor ? " op bor" : "");
        fprintf(t->trace, t->compact ? " %d: call %s%s %s%s%s%s;" : "  rank %d: call %s%s %s%s%s%s\n",
                ops[k].rank, what, root, st->call_has_src ? "send " : "on ",
                st->call_has_src ? f : d, st->call_has_src ? " recv " : "",
                st->call_has_src ? d : "");
    }
    if (t->compact) {
        fputc('\n', t->trace);
    }
    return 0;
}

static int on_local(void *arg, const struct cg_sim_where *w, const struct cg_sim_local *ops,
                    int nops)
{
    struct tally *t = arg;
    struct cg_analysis *a = t->a;
    if (w->step->kind == CG_STEP_CALL) {
        return on_call(t, w, ops, nops);
    }
    int reduce = w->step->kind == CG_STEP_REDUCE;
    int fill = w->step->kind == CG_STEP_FILL;
    /* A barrier's token merge moves no data: the emitted code does nothing. */
    int counted = cg_colls[t->s->coll].combine != CG_COMBINE_UNION;
    double most = 0;
    for (int k = 0; k < nops && counted; k++) {
        double b = range_bytes(t, &ops[k].dst);
        if (reduce) {
            t->reduced[ops[k].rank] += b;
            a->reduce_sum_B += b;
            most = b > most ? b : most;
        } else {
            a->copy_sum_B += b;
        }
    }
    a->t_gamma_us += most * t->model->gamma_ns_B / 1000.0;
    if (t->trace == NULL) {
        return 0;
    }
    instance_head(t, w);
    char d[96], f[96];
    for (int k = 0; k < nops; k++) {
        cg_sim_range_str(&ops[k].dst, t->by.nb[ops[k].dst.buf], d, sizeof(d));
        if (fill) {
            fprintf(t->trace, t->compact ? " %d: %s = 0;" : "  rank %d: %s = 0\n", ops[k].rank, d);
            continue;
        }
        cg_sim_range_str(&ops[k].src, t->by.nb[ops[k].src.buf], f, sizeof(f));
        const char *how = !reduce ? "=" : w->step->order == CG_ORDER_INTO_FROM ? "op=" : "=op";
        if (t->compact) {
            fprintf(t->trace, " %d: %s %s %s;", ops[k].rank, d, how, f);
        } else {
            fprintf(t->trace, "  rank %d: %s %s %s\n", ops[k].rank, d, how, f);
        }
    }
    if (t->compact) {
        fputc('\n', t->trace);
    }
    return 0;
}

int cg_analyse(struct cg_gen *g, const struct cg_schedule *s, int p, int root, size_t count,
               int elem_size, const struct cg_model *model, FILE *trace, int compact,
               const char *prefix, struct cg_analysis *a)
{
    memset(a, 0, sizeof(*a));
    a->p = p;
    a->root = root;
    a->count = count;
    a->elem_size = elem_size;
    struct tally t = { 0 };
    t.s = s;
    t.a = a;
    t.model = model;
    t.trace = trace;
    t.compact = compact;
    t.prefix = prefix ? prefix : "";
    cg_bytes_init(&t.by, s, p, count, elem_size);
    a->count = t.by.count;
    a->elem_size = t.by.elem;
    double *mem = calloc((size_t)p * 5, sizeof(double));
    if (mem == NULL) {
        cg_panic("out of memory");
    }
    t.sent = mem;
    t.recv = mem + p;
    t.reduced = mem + 2 * p;
    t.step_out = mem + 3 * p;
    t.step_in = mem + 4 * p;
    struct cg_sim_consumer c = { .arg = &t, .start = on_start, .exchange = on_exchange,
                                  .local = on_local };
    struct cg_sim_cfg cfg = { p, root, cg_analyse_ppn(g, s, p), NULL, 0, NULL, 0, 0, NULL };
    cfg.run_max = g->opt != NULL ? g->opt->sim_max_work : 0;
    int rc = cg_sim_run_cfg(g, s, &cfg, &c);
    for (int r = 0; r < p; r++) {
        a->sent_sum_B += t.sent[r];
        a->sent_max_B = t.sent[r] > a->sent_max_B ? t.sent[r] : a->sent_max_B;
        a->recv_max_B = t.recv[r] > a->recv_max_B ? t.recv[r] : a->recv_max_B;
        a->reduce_max_B = t.reduced[r] > a->reduce_max_B ? t.reduced[r] : a->reduce_max_B;
    }
    free(mem);
    return rc;
}

/* ---- expected timing tags ------------------------------------------------ */

struct tagcount {
    const struct cg_schedule *s; /* what runs */
    int p;                       /* ranks */
    long *calls;                 /* p x s->ntags */
};

static void bump(struct tagcount *t, const unsigned char *on, int tag)
{
    for (int r = 0; r < t->p; r++) {
        if (on[r]) {
            t->calls[(size_t)r * (size_t)t->s->ntags + (size_t)tag]++;
        }
    }
}

static int on_phase_ranks(void *arg, const struct cg_sim_where *w, const unsigned char *on)
{
    bump(arg, on, w->phase->tag_id);
    return 0;
}

static int on_round_ranks(void *arg, const struct cg_sim_where *w, const unsigned char *on)
{
    bump(arg, on, w->phase->round_tag_id);
    return 0;
}

static int on_step_ranks(void *arg, const struct cg_sim_where *w, const unsigned char *on)
{
    bump(arg, on, w->step->tag_id);
    return 0;
}

int cg_tag_counts(struct cg_gen *g, const struct cg_schedule *s, int p, int root, FILE *out)
{
    struct tagcount t = { s, p, calloc((size_t)p * (size_t)s->ntags, sizeof(long)) };
    if (t.calls == NULL) {
        cg_panic("out of memory");
    }
    struct cg_sim_consumer c = { .arg = &t, .phase_ranks = on_phase_ranks,
                                 .round_ranks = on_round_ranks, .step_ranks = on_step_ranks };
    struct cg_sim_cfg cfg = { p, root, cg_analyse_ppn(g, s, p), NULL, 0, NULL, 0, 0, NULL };
    int rc = cg_sim_run_cfg(g, s, &cfg, &c);
    const char **paths = calloc((size_t)s->ntags, sizeof(char *));
    char **owned = calloc((size_t)s->ntags, sizeof(char *));
    if (paths == NULL || owned == NULL) {
        cg_panic("out of memory");
    }
    paths[0] = s->name;
    for (int pi = 0; pi < s->nphases; pi++) {
        const struct cg_phase *ph = &s->phases[pi];
        size_t n = strlen(s->name) + strlen(ph->name) + 2;
        owned[ph->tag_id] = malloc(n);
        snprintf(owned[ph->tag_id], n, "%s/%s", s->name, ph->name);
        const char *prefix = owned[ph->tag_id];
        if (ph->round_tag_id >= 0) {
            n += 6;
            owned[ph->round_tag_id] = malloc(n);
            snprintf(owned[ph->round_tag_id], n, "%s/round", owned[ph->tag_id]);
            prefix = owned[ph->round_tag_id];
        }
        for (int si = 0; si < ph->nsteps; si++) {
            const struct cg_step *st = &ph->steps[si];
            size_t m = strlen(prefix) + strlen(st->name) + 2;
            owned[st->tag_id] = malloc(m);
            snprintf(owned[st->tag_id], m, "%s/%s", prefix, st->name);
        }
    }
    for (int i = 1; i < s->ntags; i++) {
        paths[i] = owned[i];
    }
    if (rc == 0) {
        for (int r = 0; r < p; r++) {
            fprintf(out, "%d %s 1\n", r, paths[0]);
            for (int i = 1; i < s->ntags; i++) {
                long n = t.calls[(size_t)r * (size_t)s->ntags + (size_t)i];
                if (n > 0) {
                    fprintf(out, "%d %s %ld\n", r, paths[i], n);
                }
            }
        }
    }
    for (int i = 0; i < s->ntags; i++) {
        free(owned[i]);
    }
    free(owned);
    free(paths);
    free(t.calls);
    return rc;
}
