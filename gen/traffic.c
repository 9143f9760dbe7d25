/* traffic.c - where a schedule's bytes go on a machine: every message of
 * the verified schedule (sim.c, for any p and count) classified by the
 * domain of its two ranks' nodes (same node, switch, group, or two groups)
 * per step instance and phase, and added to every link of its route, so
 * the most loaded links per level show. `collgen traffic` prints it.
 *
 * Why exact: bytes come from cg_range_bytes, the analysis pass's rule, and
 * the total is checked against cg_analyse's "sum over ranks" before it is
 * printed; a difference is a bug (exit 1), not rounding.
 */
#include <stdlib.h>
#include <string.h>

#include "passes.h"
#include "sim.h"
#include "topo.h"

struct traffic {
    const struct cg_schedule *s;
    const struct cg_topo *t;
    const struct cg_placement *pl;
    FILE *out;
    struct cg_bytes by;
    double n_B;                      /* one rank's count x elem-size: the unit "n" */
    double inst[CG_DOM_COUNT_];      /* this step instance */
    double phase[CG_DOM_COUNT_];     /* this phase so far */
    double total[CG_DOM_COUNT_];     /* everything */
    long msgs[CG_DOM_COUNT_];        /* messages by domain */
    const struct cg_phase *cur;      /* phase of the rows printed last */
    double *link;                    /* bytes per link */
    long calls;                      /* call step instances (not counted) */
};

static void row(struct traffic *x, const char *label, const double *v)
{
    double sum = 0;
    fprintf(x->out, "  %-34s", label);
    for (int d = 0; d < CG_DOM_COUNT_; d++) {
        fprintf(x->out, " %14.0f", v[d]);
        sum += v[d];
    }
    fprintf(x->out, " %14.0f\n", sum);
}

static void row_n(struct traffic *x, const char *label, const double *v)
{
    double sum = 0;
    fprintf(x->out, "  %-34s", label);
    for (int d = 0; d < CG_DOM_COUNT_; d++) {
        fprintf(x->out, " %13.2fn", v[d] / x->n_B);
        sum += v[d];
    }
    fprintf(x->out, " %13.2fn\n", sum / x->n_B);
}

static void end_phase(struct traffic *x)
{
    if (x->cur == NULL) {
        return;
    }
    char label[96];
    snprintf(label, sizeof(label), "phase %s", x->cur->name);
    row(x, label, x->phase);
    memset(x->phase, 0, sizeof(x->phase));
    x->cur = NULL;
}

static int on_start(void *arg, const struct cg_sim_where *w, long blocks, const long *nblocks)
{
    struct traffic *x = arg;
    (void)w;
    cg_bytes_start(&x->by, blocks, nblocks);
    return 0;
}

static int on_exchange(void *arg, const struct cg_sim_where *w, const struct cg_sim_msg *sends,
                       int nsends, const struct cg_sim_msg *recvs, int nrecvs)
{
    struct traffic *x = arg;
    (void)recvs;
    (void)nrecvs;
    if (nsends == 0) {
        return 0;
    }
    if (x->cur != w->phase) {
        end_phase(x);
        x->cur = w->phase;
    }
    memset(x->inst, 0, sizeof(x->inst));
    long hops[CG_TOPO_MAX_HOPS];
    for (int k = 0; k < nsends; k++) {
        double b = cg_range_bytes(&x->by, &sends[k].range);
        if (b == 0) {
            continue;
        }
        int a = x->pl->node[sends[k].rank], c = x->pl->node[sends[k].peer];
        enum cg_domain d = cg_topo_domain(x->t, a, c);
        x->inst[d] += b;
        x->msgs[d]++;
        int nh = cg_topo_route(x->t, a, c, hops);
        for (int h = 0; h < nh; h++) {
            x->link[hops[h]] += b;
        }
    }
    for (int d = 0; d < CG_DOM_COUNT_; d++) {
        x->phase[d] += x->inst[d];
        x->total[d] += x->inst[d];
    }
    char label[160];
    if (w->has_round) {
        snprintf(label, sizeof(label), "%s %s=%lld %s", w->phase->name, w->phase->var,
                 (long long)w->round, w->step->name);
    } else {
        snprintf(label, sizeof(label), "%s %s", w->phase->name, w->step->name);
    }
    row(x, label, x->inst);
    return 0;
}

static int on_local(void *arg, const struct cg_sim_where *w, const struct cg_sim_local *ops,
                    int nops)
{
    struct traffic *x = arg;
    (void)ops;
    (void)nops;
    if (w->step->kind == CG_STEP_CALL) {
        x->calls++;
    }
    return 0;
}

/* The nlinks most loaded links of level d, highest first (ties: lower index). */
static void top_links(struct traffic *x, enum cg_domain d, int want)
{
    long n = cg_topo_nlinks(x->t);
    long best[8];
    int nb = 0;
    long used = 0;
    double most = 0;
    for (long l = 0; l < n; l++) {
        if (cg_topo_link_level(x->t, l) != d || x->link[l] == 0) {
            continue;
        }
        used++;
        most = x->link[l] > most ? x->link[l] : most;
        int i;
        if (nb < want) {
            i = nb++;
        } else if (x->link[l] > x->link[best[want - 1]]) {
            i = want - 1;
        } else {
            continue;
        }
        while (i > 0 && x->link[best[i - 1]] < x->link[l]) {
            best[i] = best[i - 1];
            i--;
        }
        best[i] = l;
    }
    fprintf(x->out, "  %-7s %ld link%s carry bytes", cg_level_keys[d], used, used == 1 ? "" : "s");
    if (used == 0) {
        fprintf(x->out, "\n");
        return;
    }
    fprintf(x->out, "; the most loaded:\n");
    for (int i = 0; i < nb; i++) {
        char name[96];
        cg_topo_link_name(x->t, best[i], name, sizeof(name));
        fprintf(x->out, "          %-40s %14.0f B = %10.2fn (%.3f us at %g GB/s)\n", name,
                x->link[best[i]], x->link[best[i]] / x->n_B,
                x->link[best[i]] / cg_topo_link_bw(x->t, best[i]) / 1000.0,
                cg_topo_link_bw(x->t, best[i]));
    }
}

/* How the placement spreads over the machine: nodes, switches, groups. */
static void spread(struct traffic *x)
{
    const struct cg_topo *t = x->t;
    unsigned char *sw = calloc((size_t)t->switches_per_group * (size_t)t->groups, 1);
    int *grp = calloc((size_t)t->groups, sizeof(int));
    unsigned char *nd = calloc((size_t)t->nnodes, 1);
    if (sw == NULL || grp == NULL || nd == NULL) {
        cg_panic("out of memory");
    }
    int nsw = 0, ngr = 0;
    for (int r = 0; r < x->pl->p; r++) {
        int n = x->pl->node[r], s = n / t->nodes_per_switch, gi = s / t->switches_per_group;
        nsw += sw[s] == 0;
        sw[s] = 1;
        if (!nd[n]) {
            ngr += grp[gi] == 0;
            grp[gi]++;
        }
        nd[n] = 1;
    }
    fprintf(x->out, "allocation: %d nodes on %d switches in %d groups; nodes per group:",
            x->pl->nused, nsw, ngr);
    int shown = 0;
    for (int gi = 0; gi < t->groups; gi++) {
        if (grp[gi]) {
            if (shown++ < 40) {
                fprintf(x->out, " g%d:%d", gi, grp[gi]);
            }
        }
    }
    fprintf(x->out, "%s\n", shown > 40 ? " ..." : "");
    free(sw);
    free(grp);
    free(nd);
}

int cg_traffic(struct cg_gen *g, const struct cg_schedule *s, const struct cg_topo *t,
               const struct cg_placement *pl, int root, int ppn, size_t count, int elem,
               FILE *out)
{
    int p = pl->p;
    struct traffic x = { 0 };
    x.s = s;
    x.t = t;
    x.pl = pl;
    x.out = out;
    cg_bytes_init(&x.by, s, p, count, elem);
    x.n_B = (double)x.by.count * x.by.elem;
    if (x.n_B == 0) {
        x.n_B = 1;
    }
    x.link = calloc((size_t)cg_topo_nlinks(t), sizeof(double));
    if (x.link == NULL) {
        cg_panic("out of memory");
    }
    fprintf(out, "traffic: %s (%s), p = %d", s->file, s->name, p);
    if (cg_colls[s->coll].rooted) {
        fprintf(out, ", root = %d", root);
    }
    if (s->topology) {
        fprintf(out, ", %d nodes x %d ranks (ppn)", p / ppn, ppn);
    }
    fprintf(out, ", count = %zu elements of %d B (n = %.0f B)\n", x.by.count, x.by.elem, x.n_B);
    fprintf(out, "topology: %s (%s %s: %d groups x %d switches x %d nodes = %d nodes)\n", t->file,
            t->name, t->kind == CG_TOPO_DRAGONFLY ? "dragonfly" : "fat tree", t->groups,
            t->switches_per_group, t->nodes_per_switch, t->nnodes);
    fprintf(out, "placement: %s\n", pl->how);
    spread(&x);
    fprintf(out, "\nbytes per step instance and phase:\n  %-34s", "");
    for (int d = 0; d < CG_DOM_COUNT_; d++) {
        fprintf(out, " %14s", cg_domain_names[d]);
    }
    fprintf(out, " %14s\n", "total");
    struct cg_sim_consumer c = { .arg = &x, .start = on_start, .exchange = on_exchange,
                                 .local = on_local };
    struct cg_sim_cfg cfg = { p, root, ppn, NULL, 0, NULL, 0, g->opt->sim_max_work, NULL };
    int rc = cg_sim_run_cfg(g, s, &cfg, &c);
    if (rc == 0) {
        end_phase(&x);
        fprintf(out, "\ntotals:\n");
        row(&x, "bytes", x.total);
        row_n(&x, "in units of n", x.total);
        double m[CG_DOM_COUNT_];
        for (int d = 0; d < CG_DOM_COUNT_; d++) {
            m[d] = (double)x.msgs[d];
        }
        row(&x, "messages", m);
        double sum = 0;
        for (int d = 0; d < CG_DOM_COUNT_; d++) {
            sum += x.total[d];
        }
        struct cg_analysis a;
        struct cg_model model;
        cg_model_init(&model);
        if (cg_analyse(g, s, p, root, count, elem, &model, NULL, 0, "", &a) != 0) {
            rc = -1;
        } else if (a.sent_sum_B != sum) {
            fprintf(stderr, "collgen: traffic total %.0f B differs from the analysis pass's %.0f B "
                            "(a bug)\n", sum, a.sent_sum_B);
            rc = -1;
        } else {
            fprintf(out, "  equal to the analysis pass's bytes sent, sum over ranks: %.0f B\n",
                    a.sent_sum_B);
        }
        if (x.calls > 0) {
            fprintf(out, "  not counted: %ld call step instance%s (the callee's traffic is not "
                         "expanded; explain does not count it either)\n",
                    x.calls, x.calls == 1 ? "" : "s");
        }
        fprintf(out, "\nload per link level (bytes over the run; a link is one direction):\n");
        for (int d = 0; d < CG_DOM_COUNT_; d++) {
            top_links(&x, (enum cg_domain)d, 3);
        }
    }
    free(x.link);
    return rc;
}
