/* simulate.c - a LogGP-style prediction of a schedule on a machine it
 * cannot run on: every message and reduction of the verified schedule
 * (sim.c enumerates them; nothing tracks data) timed on the topology
 * (topo.h), per timing tag and in total. `collgen simulate` prints it.
 *
 * The model, per step instance, as the emitted code runs it (nonblocking
 * posts, completed together at the end of the step):
 *  - a rank starts the instance when it finished its previous one (all
 *    ranks start the call at 0); it posts its sends, then its receives,
 *    each costing the overhead o; the i-th send leaves i gaps g later;
 *  - a message of b bytes between ranks of domain d arrives L_d + b / rate
 *    after it leaves; rate is the slowest link of its route, or with
 *    --contention its max-min fair share of every link of its route among
 *    the instance's messages (progressive filling, rates fixed for the
 *    instance); a receive completes o after its message arrives;
 *  - the rank ends the instance when its posts, its sends (b / rate after
 *    leaving) and its receives are done; a reduce costs gamma per byte, a
 *    copy or fill b / the node's memory bandwidth.
 * Why per-rank clocks in schedule order, not an event queue: an instance's
 * operations depend only on earlier instances, so the lockstep order is a
 * topological order of the dependency graph and one pass computes the
 * same times an event queue would, for p = 65,536 in seconds. Contention
 * is the approximation: messages of one instance share links as if they
 * overlapped entirely, messages of different instances never do.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "passes.h"
#include "sim.h"
#include "topo.h"

struct flow {
    int src, dst;        /* ranks */
    int seq;             /* index among the instance's sends (stable sort) */
    double bytes;
    double leave;        /* when it leaves the sender */
    double rate;         /* bytes per ns */
    enum cg_domain d;
    int nh;
    long hops[CG_TOPO_MAX_HOPS];
};

struct recvref {
    int rank, peer, seq;
    double posted;       /* when the receive was posted */
};

struct simx {
    const struct cg_schedule *s;
    const struct cg_topo *t;
    const struct cg_placement *pl;
    int contention;
    struct cg_bytes by;
    int p;
    double *clock;       /* by rank, us */
    double *start;       /* by rank: this instance's start */
    double *end;         /* by rank: this instance's end */
    double *acc;         /* ntags x p: us inside each tag */
    long *inst;          /* by tag: instances */
    struct flow *flows;
    struct flow *sorted; /* sort_flows' other half */
    int *bucket;         /* p + 1 counts */
    struct recvref *rr;
    int cap;             /* entries in flows and rr */
    double *lcap;        /* by link: capacity left (contention) */
    int *ln;             /* by link: unfrozen flows */
    long *touched;       /* links of this instance */
    long rounds, messages;
};

static void grow(struct simx *x, int n)
{
    if (n <= x->cap) {
        return;
    }
    x->cap = n > 2 * x->cap ? n : 2 * x->cap;
    x->flows = realloc(x->flows, sizeof(*x->flows) * (size_t)x->cap);
    x->sorted = realloc(x->sorted, sizeof(*x->sorted) * (size_t)x->cap);
    x->rr = realloc(x->rr, sizeof(*x->rr) * (size_t)x->cap);
    if (x->flows == NULL || x->sorted == NULL || x->rr == NULL) {
        cg_panic("out of memory");
    }
}

static int on_start(void *arg, const struct cg_sim_where *w, long blocks, const long *nblocks)
{
    struct simx *x = arg;
    (void)w;
    cg_bytes_start(&x->by, blocks, nblocks);
    return 0;
}

/* Adds a rank's time in the instance to its step, round, phase and call tags. */
static void charge(struct simx *x, const struct cg_sim_where *w, int r, double us)
{
    size_t p = (size_t)x->p;
    x->acc[(size_t)w->step->tag_id * p + (size_t)r] += us;
    x->acc[(size_t)w->phase->tag_id * p + (size_t)r] += us;
    if (w->phase->round_tag_id >= 0) {
        x->acc[(size_t)w->phase->round_tag_id * p + (size_t)r] += us;
    }
    x->acc[(size_t)r] += us; /* tag 0: the call */
}

static void count_instance(struct simx *x, const struct cg_sim_where *w)
{
    x->inst[w->step->tag_id]++;
}

static int by_rank_peer(const void *a, const void *b)
{
    const struct recvref *f = a, *g = b;
    if (f->rank != g->rank) {
        return f->rank < g->rank ? -1 : 1;
    }
    if (f->peer != g->peer) {
        return f->peer < g->peer ? -1 : 1;
    }
    return f->seq < g->seq ? -1 : f->seq > g->seq;
}

/* The sends in (dst, src, seq) order: a stable counting sort by dst (the
 * sends come in src order), O(n + p) where qsort made a ring at p = 4,096
 * spend most of its time sorting. */
static void sort_flows(struct simx *x, int n)
{
    memset(x->bucket, 0, sizeof(int) * (size_t)(x->p + 1));
    for (int k = 0; k < n; k++) {
        x->bucket[x->flows[k].dst + 1]++;
    }
    for (int r = 0; r < x->p; r++) {
        x->bucket[r + 1] += x->bucket[r];
    }
    for (int k = 0; k < n; k++) {
        x->sorted[x->bucket[x->flows[k].dst]++] = x->flows[k];
    }
    struct flow *t = x->flows;
    x->flows = x->sorted;
    x->sorted = t;
}

/* The receives (in rank order already) in (rank, peer, seq) order: an
 * insertion sort within each rank's few. */
static void sort_recvs(struct simx *x, int n)
{
    for (int k = 1; k < n; k++) {
        struct recvref v = x->rr[k];
        int j = k - 1;
        while (j >= 0 && by_rank_peer(&x->rr[j], &v) > 0) {
            x->rr[j + 1] = x->rr[j];
            j--;
        }
        x->rr[j + 1] = v;
    }
}

/* Max-min fair rates by progressive filling: the links whose fair share
 * (capacity left / unfrozen flows) is the smallest fix the rate of every
 * unfrozen flow through them; repeat with what is left. */
static void fair_rates(struct simx *x, int n)
{
    long nt = 0;
    for (int i = 0; i < n; i++) {
        struct flow *f = &x->flows[i];
        f->rate = 0;
        for (int h = 0; h < f->nh; h++) {
            long l = f->hops[h];
            if (x->ln[l]++ == 0) {
                x->touched[nt++] = l;
                x->lcap[l] = cg_topo_link_bw(x->t, l);
            }
        }
    }
    int left = n;
    while (left > 0) {
        double m = -1;
        for (long k = 0; k < nt; k++) {
            long l = x->touched[k];
            if (x->ln[l] > 0) {
                double share = x->lcap[l] / x->ln[l];
                m = m < 0 || share < m ? share : m;
            }
        }
        int fixed = 0;
        for (int i = 0; i < n; i++) {
            struct flow *f = &x->flows[i];
            if (f->rate > 0) {
                continue;
            }
            for (int h = 0; h < f->nh; h++) {
                long l = f->hops[h];
                if (x->ln[l] > 0 && x->lcap[l] / x->ln[l] <= m * (1 + 1e-12)) {
                    f->rate = -m; /* fixed this pass: subtracted below */
                    break;
                }
            }
        }
        for (int i = 0; i < n; i++) {
            struct flow *f = &x->flows[i];
            if (f->rate < 0) {
                f->rate = -f->rate;
                for (int h = 0; h < f->nh; h++) {
                    x->lcap[f->hops[h]] -= f->rate;
                    x->ln[f->hops[h]]--;
                }
                fixed++;
            }
        }
        left -= fixed;
        if (fixed == 0) {
            cg_panic("progressive filling fixed no flow");
        }
    }
    for (long k = 0; k < nt; k++) {
        x->ln[x->touched[k]] = 0;
    }
}

static int on_exchange(void *arg, const struct cg_sim_where *w, const struct cg_sim_msg *sends,
                       int nsends, const struct cg_sim_msg *recvs, int nrecvs)
{
    struct simx *x = arg;
    const struct cg_topo *t = x->t;
    if (nsends == 0 && nrecvs == 0) {
        return 0;
    }
    x->rounds++;
    count_instance(x, w);
    grow(x, nsends > nrecvs ? nsends : nrecvs);
    double o = t->overhead_us, g = t->gap_us;
    /* Posts: per rank its sends, then its receives (rank order in both). */
    for (int k = 0; k < nsends; k++) {
        x->start[sends[k].rank] = x->clock[sends[k].rank];
    }
    for (int k = 0; k < nrecvs; k++) {
        x->start[recvs[k].rank] = x->clock[recvs[k].rank];
    }
    int prev = -1, i = 0;
    for (int k = 0; k < nsends; k++) {
        int r = sends[k].rank;
        i = r == prev ? i + 1 : 0;
        prev = r;
        struct flow *f = &x->flows[k];
        f->src = r;
        f->dst = sends[k].peer;
        f->seq = k;
        f->bytes = cg_range_bytes(&x->by, &sends[k].range);
        f->leave = x->start[r] + o * (i + 1) + g * i;
        int a = x->pl->node[r], b = x->pl->node[f->dst];
        f->d = cg_topo_domain(t, a, b);
        f->nh = cg_topo_route(t, a, b, f->hops);
        x->end[r] = f->leave; /* raised below */
        x->messages += f->bytes > 0;
    }
    /* Every rank's post count, for where its receives are posted. */
    prev = -1;
    int nposted = 0;
    for (int k = 0, j = 0; k < nrecvs; k++) {
        int r = recvs[k].rank;
        if (r != prev) {
            nposted = 0;
            while (j < nsends && sends[j].rank < r) {
                j++;
            }
            while (j < nsends && sends[j].rank == r) {
                nposted++;
                j++;
            }
            if (nposted == 0) {
                x->end[r] = x->start[r];
            }
        }
        prev = r;
        nposted++;
        x->rr[k].rank = r;
        x->rr[k].peer = recvs[k].peer;
        x->rr[k].seq = k;
        x->rr[k].posted = x->start[r] + o * nposted;
        if (x->rr[k].posted > x->end[r]) {
            x->end[r] = x->rr[k].posted;
        }
    }
    if (x->contention) {
        fair_rates(x, nsends);
    } else {
        for (int k = 0; k < nsends; k++) {
            struct flow *f = &x->flows[k];
            f->rate = 0;
            for (int h = 0; h < f->nh; h++) {
                double bw = cg_topo_link_bw(t, f->hops[h]);
                f->rate = f->rate == 0 || bw < f->rate ? bw : f->rate;
            }
        }
    }
    for (int k = 0; k < nsends; k++) {
        struct flow *f = &x->flows[k];
        double done = f->leave + f->bytes / f->rate / 1000.0;
        if (done > x->end[f->src]) {
            x->end[f->src] = done;
        }
    }
    sort_flows(x, nsends);
    sort_recvs(x, nrecvs);
    if (nsends != nrecvs) {
        cg_panic("unmatched messages in a verified schedule");
    }
    for (int k = 0; k < nrecvs; k++) {
        const struct flow *f = &x->flows[k];
        const struct recvref *q = &x->rr[k];
        if (f->dst != q->rank || f->src != q->peer) {
            cg_panic("unmatched messages in a verified schedule");
        }
        double arrive = f->leave + t->lv[f->d].latency_us + f->bytes / f->rate / 1000.0;
        double done = (arrive > q->posted ? arrive : q->posted) + o;
        if (done > x->end[q->rank]) {
            x->end[q->rank] = done;
        }
    }
    /* Each rank once: the sends and receives arrays are in rank order. */
    int ks = 0, kr = 0;
    while (ks < nsends || kr < nrecvs) {
        int rs = ks < nsends ? sends[ks].rank : x->p, rq = kr < nrecvs ? recvs[kr].rank : x->p;
        int r = rs < rq ? rs : rq;
        while (ks < nsends && sends[ks].rank == r) {
            ks++;
        }
        while (kr < nrecvs && recvs[kr].rank == r) {
            kr++;
        }
        charge(x, w, r, x->end[r] - x->start[r]);
        x->clock[r] = x->end[r];
    }
    return 0;
}

static int on_local(void *arg, const struct cg_sim_where *w, const struct cg_sim_local *ops,
                    int nops)
{
    struct simx *x = arg;
    if (w->step->kind == CG_STEP_CALL) {
        cg_panic("simulate reached a call step"); /* refused by the command */
    }
    /* A barrier's token merge moves no data (analyse.c). */
    if (cg_colls[x->s->coll].combine == CG_COMBINE_UNION || nops == 0) {
        return 0;
    }
    count_instance(x, w);
    for (int k = 0; k < nops; k++) {
        double b = cg_range_bytes(&x->by, &ops[k].dst);
        double us = w->step->kind == CG_STEP_REDUCE
                        ? b * x->t->gamma_ns_B / 1000.0
                        : b / x->t->lv[CG_DOM_NODE].bw_GBs / 1000.0;
        charge(x, w, ops[k].rank, us);
        x->clock[ops[k].rank] += us;
    }
    return 0;
}

/* "name", "name/phase", "name/phase/round", "name/phase[/round]/step" by tag id. */
static char **tag_paths(const struct cg_schedule *s)
{
    char **paths = calloc((size_t)s->ntags, sizeof(char *));
    if (paths == NULL) {
        cg_panic("out of memory");
    }
    paths[0] = strdup(s->name);
    for (int pi = 0; pi < s->nphases; pi++) {
        const struct cg_phase *ph = &s->phases[pi];
        size_t n = strlen(s->name) + strlen(ph->name) + 16;
        paths[ph->tag_id] = malloc(n);
        snprintf(paths[ph->tag_id], n, "%s/%s", s->name, ph->name);
        const char *prefix = paths[ph->tag_id];
        if (ph->round_tag_id >= 0) {
            paths[ph->round_tag_id] = malloc(n);
            snprintf(paths[ph->round_tag_id], n, "%s/%s/round", s->name, ph->name);
            prefix = paths[ph->round_tag_id];
        }
        for (int si = 0; si < ph->nsteps; si++) {
            const struct cg_step *st = &ph->steps[si];
            size_t m = strlen(prefix) + strlen(st->name) + 2;
            paths[st->tag_id] = malloc(m);
            snprintf(paths[st->tag_id], m, "%s/%s", prefix, st->name);
        }
    }
    return paths;
}

int cg_simulate(struct cg_gen *g, const struct cg_schedule *s, const struct cg_topo *t,
                const struct cg_placement *pl, int root, int ppn, size_t count, int elem,
                int contention, FILE *out, struct cg_sim_time *res)
{
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int p = pl->p;
    struct simx x = { 0 };
    x.s = s;
    x.t = t;
    x.pl = pl;
    x.p = p;
    x.contention = contention;
    cg_bytes_init(&x.by, s, p, count, elem);
    long nl = cg_topo_nlinks(t);
    x.clock = calloc((size_t)p * 3, sizeof(double));
    x.acc = calloc((size_t)p * (size_t)s->ntags, sizeof(double));
    x.inst = calloc((size_t)s->ntags, sizeof(long));
    x.lcap = calloc((size_t)nl, sizeof(double));
    x.ln = calloc((size_t)nl, sizeof(int));
    x.touched = calloc((size_t)nl, sizeof(long));
    x.bucket = calloc((size_t)p + 1, sizeof(int));
    if (x.clock == NULL || x.acc == NULL || x.inst == NULL || x.lcap == NULL || x.ln == NULL ||
        x.touched == NULL || x.bucket == NULL) {
        cg_panic("out of memory");
    }
    x.start = x.clock + p;
    x.end = x.clock + 2 * p;
    struct cg_sim_consumer c = { .arg = &x, .start = on_start, .exchange = on_exchange,
                                 .local = on_local };
    struct cg_sim_cfg cfg = { p, root, ppn, NULL, 0, NULL, 0, g->opt->sim_max_work, NULL };
    int rc = cg_sim_run_cfg(g, s, &cfg, &c);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (rc == 0) {
        double total = 0;
        for (int r = 0; r < p; r++) {
            total = x.clock[r] > total ? x.clock[r] : total;
        }
        x.inst[0] = 1;
        fprintf(out, "simulate: %s (%s), p = %d", s->file, s->name, p);
        if (cg_colls[s->coll].rooted) {
            fprintf(out, ", root = %d", root);
        }
        if (s->topology) {
            fprintf(out, ", %d nodes x %d ranks (ppn)", p / ppn, ppn);
        }
        fprintf(out, ", count = %zu elements of %d B\n", x.by.count, x.by.elem);
        fprintf(out, "topology: %s (%s); placement: %s\n", t->file, t->name, pl->how);
        fprintf(out, "model: LogGP per level, L (us) and 1/G (GB/s):");
        for (int d = 0; d < CG_DOM_COUNT_; d++) {
            fprintf(out, " %s %g, %g;", cg_level_keys[d], t->lv[d].latency_us, t->lv[d].bw_GBs);
        }
        fprintf(out, " o = %g us, g = %g us, gamma = %g ns/B; contention: %s\n", t->overhead_us,
                t->gap_us, t->gamma_ns_B,
                contention ? "max-min fair shares within a step instance" : "none");
        fprintf(out, "\npredicted time per tag (us a rank spends inside it over the call; max and "
                     "mean over ranks):\n");
        fprintf(out, "  %-52s %10s %14s %14s\n", "tag", "instances", "max (us)", "mean (us)");
        char **paths = tag_paths(s);
        for (int i = 0; i < s->ntags; i++) {
            double mx = 0, sum = 0;
            for (int r = 0; r < p; r++) {
                double v = x.acc[(size_t)i * (size_t)p + (size_t)r];
                mx = v > mx ? v : mx;
                sum += v;
            }
            long n = x.inst[i];
            /* A phase or round tag: its steps' instances. */
            if (i > 0 && n == 0) {
                for (int pi = 0; pi < s->nphases; pi++) {
                    const struct cg_phase *ph = &s->phases[pi];
                    if (ph->tag_id == i || ph->round_tag_id == i) {
                        for (int si = 0; si < ph->nsteps; si++) {
                            n += x.inst[ph->steps[si].tag_id];
                        }
                    }
                }
            }
            fprintf(out, "  %-52s %10ld %14.3f %14.3f\n", paths[i] ? paths[i] : "?", n, mx,
                    sum / p);
            free(paths[i]);
        }
        free(paths);
        fprintf(out, "\ntotal: %.3f us (the last rank finishes)\n", total);
        fprintf(out, "rounds: %ld (exchange step instances that move data, as explain counts "
                     "them); messages: %ld\n", x.rounds, x.messages);
        fprintf(out, "simulated in %.2f s\n",
                (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9);
        if (res != NULL) {
            res->total_us = total;
            res->instances = x.rounds;
            res->messages = x.messages;
        }
    }
    free(x.clock);
    free(x.acc);
    free(x.inst);
    free(x.lcap);
    free(x.ln);
    free(x.touched);
    free(x.flows);
    free(x.sorted);
    free(x.bucket);
    free(x.rr);
    return rc;
}
