/* tune_tree.c - collgen tune's dispatcher: cells from records, the seeded
 * split, one small decision tree per library and collective, and its
 * evaluation against two baselines on the held-out cells (tune.h).
 *
 * Why a decision tree over (bytes, p, ranks per node), grown to minimise
 * the summed log regret: its leaves are boxes, which are exactly the
 * selection's ranges (no translation, nothing lost), a person reads it as
 * a few if/else lines, and regret (not the count of wrong labels) is what
 * a wrong choice costs: picking an algorithm 1 % slower than the best is
 * nearly right, one 3x slower is not. Thresholds lie at the midpoint in
 * log space between adjacent training values, as the profile's bounds do
 * (harness/FORMATS.md, "Profile"), since sizes and process counts are
 * planned on a log axis.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report_util.h"
#include "tune.h"

/* The cost of choosing at a cell an implementation it did not measure
 * validly: as if it were 10x slower than the best. Why: nothing is known of
 * it there (it may not even apply), and a tree should not send calls to it
 * while a measured choice exists. */
#define MISSING_LOG_REGRET 2.302585092994046

/* ---- cells --------------------------------------------------------------- */

static int eligible(const struct cg_rep_record *r)
{
    return r->micro == NULL && (strcmp(r->kind, "native") == 0 ||
                                strcmp(r->kind, "generated") == 0 ||
                                strcmp(r->kind, "baseline") == 0);
}

static int ppn_of(const struct cg_rep_record *r)
{
    return (r->ranks_per_node > 0) ? r->ranks_per_node : r->ranks;
}

static int cmp_str(const char *a, const char *b)
{
    return strcmp(a != NULL ? a : "", b != NULL ? b : "");
}

/* Library, collective, then the cell's key. */
static int cmp_cellkey(const struct cg_rep_record *a, const struct cg_rep_record *b)
{
    int s;
    if ((s = cmp_str(a->library, b->library)) != 0 ||
        (s = cmp_str(a->collective, b->collective)) != 0) {
        return s;
    }
    if (a->ranks != b->ranks) {
        return (a->ranks > b->ranks) - (a->ranks < b->ranks);
    }
    if (ppn_of(a) != ppn_of(b)) {
        return (ppn_of(a) > ppn_of(b)) - (ppn_of(a) < ppn_of(b));
    }
    if (a->size_B != b->size_B) {
        return (a->size_B > b->size_B) - (a->size_B < b->size_B);
    }
    if ((s = cmp_str(a->datatype, b->datatype)) != 0 || (s = cmp_str(a->op, b->op)) != 0) {
        return s;
    }
    if (a->root != b->root) {
        return (a->root > b->root) - (a->root < b->root);
    }
    return (a->in_place > b->in_place) - (a->in_place < b->in_place);
}

static int cmp_recp(const void *pa, const void *pb)
{
    const struct cg_rep_record *a = *(const struct cg_rep_record *const *)pa;
    const struct cg_rep_record *b = *(const struct cg_rep_record *const *)pb;
    int s = cmp_cellkey(a, b);
    if (s != 0) {
        return s;
    }
    return (a->line > b->line) - (a->line < b->line);
}

/* The class of r in g, added when new; -1 out of memory. */
static int class_of(struct cg_tune_group *g, const struct cg_rep_record *r)
{
    char *key = cg_rep_strf("%s:%s", r->kind, r->name);
    if (key == NULL) {
        return -1;
    }
    for (size_t i = 0; i < g->ncls; i++) {
        if (strcmp(g->classes[i].key, key) == 0) {
            free(key);
            return (int)i;
        }
    }
    struct cg_tune_class *v = realloc(g->classes, (g->ncls + 1) * sizeof *v);
    if (v == NULL) {
        free(key);
        return -1;
    }
    g->classes = v;
    struct cg_tune_class *k = &v[g->ncls];
    memset(k, 0, sizeof *k);
    k->key = key;
    k->kind = r->kind;
    k->alg = r->name;
    size_t base = strcspn(r->name, "(");
    k->impl = cg_rep_strf("%s:%.*s", r->kind, (int)base, r->name);
    if (k->impl == NULL) {
        free(key);
        return -1;
    }
    const cJSON *req = cJSON_GetObjectItemCaseSensitive(r->json, "requested");
    const cJSON *params = cJSON_GetObjectItemCaseSensitive(req, "params");
    if (r->name[base] == '(' && cJSON_IsObject(params) && params->child != NULL) {
        k->params = cJSON_PrintUnformatted(params);
        if (k->params == NULL) {
            free(k->impl);
            free(key);
            return -1;
        }
    }
    /* Why the number from the records: it is the one the campaign forced
     * and measured (requested.knobs.env), checked against ompi_info when
     * the platform was written and by tests/run_tune.sh. */
    if (strcmp(r->library, "openmpi") == 0 && strcmp(r->kind, "native") == 0 &&
        strcmp(r->name, "default") != 0) {
        char var[128];
        snprintf(var, sizeof var, "OMPI_MCA_coll_tuned_%s_algorithm", r->collective);
        const cJSON *env = cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(req, "knobs"), "env");
        const cJSON *id = cJSON_GetObjectItemCaseSensitive(env, var);
        if (cJSON_IsString(id)) {
            k->ompi_id = atoi(id->valuestring);
        }
    }
    g->ncls++;
    return (int)(g->ncls - 1);
}

static int is_default_class(const struct cg_tune_class *k)
{
    return strcmp(k->key, "native:default") == 0;
}

/* splitmix64: the split's generator. */
static uint64_t mix(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static uint64_t fnv(const char *s, uint64_t h)
{
    for (; *s != '\0'; s++) {
        h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
    }
    return h;
}

/* Holds out (n + 2) / 5 of g's cells (at least one left to train on):
 * a Fisher-Yates shuffle of the cells in key order, seeded by the seed and
 * the group's name, so a group's split does not depend on what else the
 * campaign measured. */
static int split(struct cg_tune_group *g, uint64_t seed)
{
    size_t n = g->ncells;
    size_t *ix = malloc((n + 1) * sizeof *ix);
    if (ix == NULL) {
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        ix[i] = i;
    }
    uint64_t s = fnv(g->collective, fnv("/", fnv(g->library, 0xcbf29ce484222325ULL))) ^ seed;
    for (size_t i = n; i > 1; i--) {
        size_t j = (size_t)(mix(&s) % i);
        size_t tmp = ix[i - 1];
        ix[i - 1] = ix[j];
        ix[j] = tmp;
    }
    size_t nt = (n + 2) / 5;
    if (nt >= n) {
        nt = (n > 0) ? n - 1 : 0;
    }
    for (size_t i = 0; i < nt; i++) {
        g->cells[ix[i]].test = 1;
    }
    g->ntest = nt;
    free(ix);
    return 0;
}

/* Time of class k at cell c, or -1 when not validly measured there. */
static double time_of(const struct cg_tune_cell *c, int k)
{
    for (size_t i = 0; i < c->nc; i++) {
        if (c->cands[i].cls == k) {
            return c->cands[i].median_ns;
        }
    }
    return -1.0;
}

static double best_time(const struct cg_tune_cell *c)
{
    return c->cands[c->best].median_ns;
}

static double log_regret(const struct cg_tune_cell *c, int k)
{
    double t = time_of(c, k);
    return (t < 0) ? MISSING_LOG_REGRET : log(t / best_time(c));
}

static double feature(const struct cg_tune_cell *c, int f)
{
    return (f == 0) ? c->bytes : (f == 1) ? (double)c->p : (double)c->ppn;
}

/* ---- the tree ------------------------------------------------------------- */

/* The class of least cost given per-class costs; ties: the native default,
 * then the smaller key. */
static int pick(const struct cg_tune_group *g, const double *cost, double *out)
{
    int best = -1;
    for (size_t k = 0; k < g->ncls; k++) {
        if (best < 0 || cost[k] < cost[best] - 1e-12) {
            best = (int)k;
        } else if (fabs(cost[k] - cost[best]) <= 1e-12) {
            int kd = is_default_class(&g->classes[k]);
            int bd = is_default_class(&g->classes[best]);
            if ((kd && !bd) ||
                (kd == bd && strcmp(g->classes[k].key, g->classes[best].key) < 0)) {
                best = (int)k;
            }
        }
    }
    *out = (best >= 0) ? cost[best] : 0.0;
    return best;
}

struct grower {
    struct cg_tune_group *g;
    const struct cg_tune_opts *o;
    int feat; /* for the sort */
    int oom;
};

static struct grower *sort_ctx;

static int cmp_by_feature(const void *pa, const void *pb)
{
    const struct cg_tune_cell *a = *(const struct cg_tune_cell *const *)pa;
    const struct cg_tune_cell *b = *(const struct cg_tune_cell *const *)pb;
    double x = feature(a, sort_ctx->feat), y = feature(b, sort_ctx->feat);
    if (x != y) {
        return (x > y) - (x < y);
    }
    return (a > b) - (a < b); /* stable: cells are in key order */
}

static int new_node(struct cg_tune_group *g)
{
    struct cg_tune_node *v = realloc(g->nodes, (g->nnodes + 1) * sizeof *v);
    if (v == NULL) {
        return -1;
    }
    g->nodes = v;
    memset(&v[g->nnodes], 0, sizeof v[0]);
    v[g->nnodes].feature = -1;
    v[g->nnodes].left = v[g->nnodes].right = -1;
    return (int)g->nnodes++;
}

/* Grows the subtree of the n cells v; its node index, -1 out of memory. */
static int grow(struct grower *gr, const struct cg_tune_cell **v, size_t n, int depth)
{
    struct cg_tune_group *g = gr->g;
    size_t K = g->ncls;
    double *tot = calloc(K + 1, sizeof *tot);
    double *left = calloc(K + 1, sizeof *left);
    double *right = calloc(K + 1, sizeof *right);
    int id = -1;
    if (tot == NULL || left == NULL || right == NULL) {
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        for (size_t k = 0; k < K; k++) {
            tot[k] += log_regret(v[i], (int)k);
        }
    }
    double cost;
    int cls = pick(g, tot, &cost);
    if ((id = new_node(g)) < 0) {
        goto out;
    }
    g->nodes[id].cls = cls;
    g->nodes[id].n = n;
    g->nodes[id].cost = cost;
    if (depth >= gr->o->max_depth || n < 2) {
        goto out;
    }
    int bf = -1;
    double bthr = 0, bgain = gr->o->min_gain;
    size_t bcut = 0;
    for (int f = 0; f < 3; f++) {
        gr->feat = f;
        sort_ctx = gr;
        qsort(v, n, sizeof *v, cmp_by_feature);
        memset(left, 0, K * sizeof *left);
        for (size_t i = 0; i + 1 < n; i++) {
            for (size_t k = 0; k < K; k++) {
                left[k] += log_regret(v[i], (int)k);
            }
            double a = feature(v[i], f), b = feature(v[i + 1], f);
            if (a == b || i + 1 < (size_t)gr->o->min_leaf ||
                n - (i + 1) < (size_t)gr->o->min_leaf) {
                continue;
            }
            for (size_t k = 0; k < K; k++) {
                right[k] = tot[k] - left[k];
            }
            double lc, rc;
            pick(g, left, &lc);
            pick(g, right, &rc);
            double gain = cost - (lc + rc);
            if (gain > bgain + 1e-12) {
                bgain = gain;
                bf = f;
                bthr = cg_rep_size_boundary(a, b);
                bcut = i + 1;
            }
        }
    }
    if (bf < 0) {
        goto out;
    }
    gr->feat = bf;
    sort_ctx = gr;
    qsort(v, n, sizeof *v, cmp_by_feature);
    int l = grow(gr, v, bcut, depth + 1);
    int r = (l < 0) ? -1 : grow(gr, v + bcut, n - bcut, depth + 1);
    if (l < 0 || r < 0) {
        id = -1;
        goto out;
    }
    g->nodes[id].feature = bf;
    g->nodes[id].thr = bthr;
    g->nodes[id].left = l;
    g->nodes[id].right = r;
out:
    free(tot);
    free(left);
    free(right);
    return id;
}

int cg_tune_predict(const struct cg_tune_group *g, double bytes, int p, int ppn)
{
    int i = 0;
    while (g->nodes[i].feature >= 0) {
        double x = (g->nodes[i].feature == 0) ? bytes : (g->nodes[i].feature == 1) ? p : ppn;
        i = (x <= g->nodes[i].thr) ? g->nodes[i].left : g->nodes[i].right;
    }
    return g->nodes[i].cls;
}

static int add_rules(struct cg_tune_group *g, int i, struct cg_tune_rule box)
{
    const struct cg_tune_node *nd = &g->nodes[i];
    if (nd->feature < 0) {
        struct cg_tune_rule *v = realloc(g->rules, (g->nrules + 1) * sizeof *v);
        if (v == NULL) {
            return -1;
        }
        g->rules = v;
        box.cls = nd->cls;
        box.n = nd->n;
        v[g->nrules++] = box;
        return 0;
    }
    struct cg_tune_rule l = box, r = box;
    double *lhi = (nd->feature == 0) ? &l.bhi : (nd->feature == 1) ? &l.phi : &l.qhi;
    double *rlo = (nd->feature == 0) ? &r.blo : (nd->feature == 1) ? &r.plo : &r.qlo;
    *lhi = nd->thr;
    *rlo = nd->thr + 1;
    int left = nd->left, right = nd->right;
    return (add_rules(g, left, l) != 0) ? -1 : add_rules(g, right, r);
}

static int cmp_rule(const void *pa, const void *pb)
{
    const struct cg_tune_rule *a = pa, *b = pb;
    if (a->plo != b->plo) {
        return (a->plo > b->plo) - (a->plo < b->plo);
    }
    if (a->qlo != b->qlo) {
        return (a->qlo > b->qlo) - (a->qlo < b->qlo);
    }
    return (a->blo > b->blo) - (a->blo < b->blo);
}

/* ---- evaluation ------------------------------------------------------------ */

static void score(struct cg_tune_score *s, const struct cg_tune_cell *c, int k)
{
    s->n++;
    double t = (k >= 0) ? time_of(c, k) : -1.0;
    if (t < 0) {
        s->unmeasured++;
        return;
    }
    double r = t / best_time(c);
    if (r <= 1.0) {
        s->correct++;
        r = 1.0;
    }
    s->nregret++;
    s->log_sum += log(r);
    if (r > s->worst) {
        s->worst = r;
    }
}

double cg_tune_geomean(const struct cg_tune_score *s)
{
    return (s->nregret > 0) ? exp(s->log_sum / (double)s->nregret) : NAN;
}

/* The winner at the nearest training size: same p and ranks per node when
 * any training cell has them (nearest size in log space, ties to the
 * smaller), else the nearest over all three in log space. */
static int nearest(const struct cg_tune_group *g, const struct cg_tune_cell *c)
{
    const struct cg_tune_cell *best = NULL;
    int best_same = 0;
    double best_d = 0;
    for (size_t i = 0; i < g->ncells; i++) {
        const struct cg_tune_cell *t = &g->cells[i];
        if (t->test) {
            continue;
        }
        int same = (t->p == c->p && t->ppn == c->ppn);
        double d = fabs(log2((t->bytes + 1) / (c->bytes + 1)));
        if (!same) {
            d += fabs(log2((double)t->p / c->p)) + fabs(log2((double)t->ppn / c->ppn));
        }
        if (best == NULL || (same && !best_same) ||
            (same == best_same && (d < best_d - 1e-12 ||
                                   (fabs(d - best_d) <= 1e-12 && t->bytes < best->bytes)))) {
            best = t;
            best_same = same;
            best_d = d;
        }
    }
    return (best != NULL) ? best->cands[best->best].cls : -1;
}

static void evaluate(struct cg_tune_group *g)
{
    int def = -1;
    for (size_t k = 0; k < g->ncls; k++) {
        if (is_default_class(&g->classes[k])) {
            def = (int)k;
        }
    }
    g->model.worst = g->always_default.worst = g->nearest.worst = 1.0;
    for (size_t i = 0; i < g->ncells; i++) {
        const struct cg_tune_cell *c = &g->cells[i];
        g->pred_model[i] = g->pred_nearest[i] = -1;
        if (!c->test) {
            continue;
        }
        g->pred_model[i] = cg_tune_predict(g, c->bytes, c->p, c->ppn);
        g->pred_nearest[i] = nearest(g, c);
        score(&g->model, c, g->pred_model[i]);
        score(&g->always_default, c, def);
        score(&g->nearest, c, g->pred_nearest[i]);
    }
}

/* ---- building -------------------------------------------------------------- */

/* The cell's native default, the yardstick of its launch-skew check: the
 * shown ok record of kind native and name default, or NULL. */
static const struct cg_rep_record *cell_default(const struct cg_rep_record **v, size_t a,
                                                size_t b)
{
    for (size_t i = a; i < b; i++) {
        if (cg_rep_is_ok(v[i]) && cg_rep_is_shown(v[i]) && strcmp(v[i]->kind, "native") == 0 &&
            strcmp(v[i]->name, "default") == 0) {
            return v[i];
        }
    }
    return NULL;
}

/* Whether r ran in a launch whose transport was more than max_skew times
 * faster than that of the default's launch d at the same point (both
 * roofline.p2p_ns, measured in each record's own launch). Why: a forced
 * native algorithm is measured in a launch of its own, and on a shared VM
 * the same exchange of 256 KiB took 26 us in one launch and 199 us in another
 * (harness/measurements/2026-12-03-tune-e2e.md); a median from a faster
 * launch then beats the default by the launch, not by the algorithm. Only
 * single launches are compared (a median over several launches has no one
 * launch's transport), and records from the default's own launch have the
 * same roofline. */
static int launch_skewed(const struct cg_tune *t, const struct cg_rep_record *r,
                         const struct cg_rep_record *d)
{
    if (!(t->o.max_skew > 0.0) || d == NULL || r == d || r->nlaunch > 1 || d->nlaunch > 1 ||
        !(r->roof_p2p_ns > 0.0) || !(d->roof_p2p_ns > 0.0)) {
        return 0;
    }
    return d->roof_p2p_ns > t->o.max_skew * r->roof_p2p_ns;
}

static int valid(struct cg_tune *t, const struct cg_rep_record *r, const struct cg_rep_record *d)
{
    if (!cg_rep_is_ok(r)) {
        t->excl_status++;
        return 0;
    }
    if (!cg_rep_is_shown(r)) {
        return -1; /* a duplicate or a launch another stands for: not counted */
    }
    if (r->below_floor) {
        t->excl_floor++;
        return 0;
    }
    if (r->effective_algorithm != NULL) {
        t->excl_ran_other++;
        return 0;
    }
    if (launch_skewed(t, r, d)) {
        t->excl_skew++;
        return 0;
    }
    /* --switchable-only: libcgtune runs generated code, baselines and the
     * native default per call, never a forced native algorithm (its calls
     * would run the default: runtime/README.md, native-alg). */
    if (t->o.switchable_only && strcmp(r->kind, "native") == 0 &&
        strcmp(r->name, "default") != 0) {
        t->excl_unswitchable++;
        return 0;
    }
    return 1;
}

static int build_groups(struct cg_tune *t, const struct cg_rep_record **v, size_t n)
{
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && cmp_str(v[j]->library, v[i]->library) == 0 &&
               cmp_str(v[j]->collective, v[i]->collective) == 0) {
            j++;
        }
        struct cg_tune_group *gv = realloc(t->groups, (t->ngroups + 1) * sizeof *gv);
        if (gv == NULL) {
            return -1;
        }
        t->groups = gv;
        struct cg_tune_group *g = &gv[t->ngroups++];
        memset(g, 0, sizeof *g);
        g->library = v[i]->library;
        g->collective = v[i]->collective;
        g->cells = calloc(j - i + 1, sizeof *g->cells);
        if (g->cells == NULL) {
            return -1;
        }
        for (size_t a = i; a < j;) {
            size_t b = a;
            while (b < j && cmp_cellkey(v[b], v[a]) == 0) {
                b++;
            }
            struct cg_tune_cell *c = &g->cells[g->ncells];
            memset(c, 0, sizeof *c);
            c->first = v[a];
            c->bytes = v[a]->size_B;
            c->p = v[a]->ranks;
            c->ppn = ppn_of(v[a]);
            c->best = -1;
            c->cands = calloc(b - a + 1, sizeof *c->cands);
            if (c->cands == NULL) {
                return -1;
            }
            const struct cg_rep_record *def = cell_default(v, a, b);
            for (size_t r = a; r < b; r++) {
                int ok = valid(t, v[r], def);
                if (ok < 0) {
                    continue;
                }
                if (!ok) {
                    c->nexcluded++;
                    continue;
                }
                int k = class_of(g, v[r]);
                if (k < 0) {
                    return -1;
                }
                t->nvalid++;
                c->cands[c->nc].cls = k;
                c->cands[c->nc].median_ns = v[r]->median_ns;
                /* Ties: the earlier (natives first in the class order seen). */
                if (c->best < 0 || v[r]->median_ns < c->cands[c->best].median_ns) {
                    c->best = (int)c->nc;
                }
                c->nc++;
            }
            if (c->best >= 0) {
                g->ncells++;
            } else {
                free(c->cands);
            }
            a = b;
        }
        i = j;
    }
    return 0;
}

/* Frees what a group owns (build_groups zeroes a group first, so a group
 * dropped before its split, tree and predictions frees only what it has). */
static void group_free(struct cg_tune_group *g)
{
    for (size_t k = 0; k < g->ncls; k++) {
        free(g->classes[k].key);
        free(g->classes[k].impl);
        free(g->classes[k].params);
    }
    free(g->classes);
    for (size_t k = 0; k < g->ncells; k++) {
        free(g->cells[k].cands);
    }
    free(g->cells);
    free(g->nodes);
    free(g->rules);
    free(g->pred_model);
    free(g->pred_nearest);
}

int cg_tune_build(struct cg_tune *t, const struct cg_rep_campaign *c,
                  const struct cg_tune_opts *o, FILE *err)
{
    memset(t, 0, sizeof *t);
    t->c = c;
    t->o = *o;
    const struct cg_rep_record **v = malloc((c->nrecs + 1) * sizeof *v);
    if (v == NULL) {
        return -1;
    }
    size_t n = 0;
    for (size_t i = 0; i < c->nrecs; i++) {
        if (eligible(&c->recs[i]) && c->recs[i].merged_into == 0) {
            v[n++] = &c->recs[i];
        }
    }
    t->nrecords = n;
    qsort(v, n, sizeof *v, cmp_recp);
    int rc = build_groups(t, v, n);
    free(v);
    if (rc != 0) {
        return -1;
    }
    /* Groups with nothing valid are dropped (their records were counted). */
    size_t kept = 0;
    for (size_t i = 0; i < t->ngroups; i++) {
        if (t->groups[i].ncells > 0) {
            t->groups[kept++] = t->groups[i];
        } else {
            group_free(&t->groups[i]);
        }
    }
    t->ngroups = kept;
    if (t->ngroups == 0) {
        fprintf(err,
                "%s/points.jsonl: error: nothing to tune: no valid measurement of a native, "
                "generated or baseline implementation (%zu records considered; %zu not ok, "
                "%zu below the latency floor, %zu ran another algorithm than requested, "
                "%zu from a launch with a faster transport than the default's)\n",
                c->dir, t->nrecords, t->excl_status, t->excl_floor, t->excl_ran_other,
                t->excl_skew);
        return 2;
    }
    for (size_t i = 0; i < t->ngroups; i++) {
        struct cg_tune_group *g = &t->groups[i];
        if (split(g, o->seed) != 0) {
            return -1;
        }
        const struct cg_tune_cell **tv = malloc((g->ncells + 1) * sizeof *tv);
        g->pred_model = calloc(g->ncells + 1, sizeof *g->pred_model);
        g->pred_nearest = calloc(g->ncells + 1, sizeof *g->pred_nearest);
        if (tv == NULL || g->pred_model == NULL || g->pred_nearest == NULL) {
            free(tv);
            return -1;
        }
        size_t nt = 0;
        for (size_t k = 0; k < g->ncells; k++) {
            if (!g->cells[k].test) {
                tv[nt++] = &g->cells[k];
            }
        }
        struct grower gr = {g, o, 0, 0};
        int root = grow(&gr, tv, nt, 0);
        free(tv);
        if (root != 0) {
            return -1;
        }
        struct cg_tune_rule box = {0, CG_TUNE_BYTES_MAX, 1, CG_TUNE_P_MAX, 1, CG_TUNE_P_MAX, 0, 0};
        if (add_rules(g, 0, box) != 0) {
            return -1;
        }
        qsort(g->rules, g->nrules, sizeof *g->rules, cmp_rule);
        evaluate(g);
    }
    return 0;
}

void cg_tune_fini(struct cg_tune *t)
{
    for (size_t i = 0; i < t->ngroups; i++) {
        group_free(&t->groups[i]);
    }
    free(t->groups);
    memset(t, 0, sizeof *t);
}

/* ---- the readable forms ------------------------------------------------------ */

static const char *const feature_names[] = {"bytes", "p", "ppn"};

static void fmt_num(char *out, size_t n, double v, int feat)
{
    if ((feat == 0 && v >= CG_TUNE_BYTES_MAX) || (feat != 0 && v >= CG_TUNE_P_MAX)) {
        snprintf(out, n, "inf");
    } else {
        snprintf(out, n, "%.0f", v);
    }
}

static void tree_text(struct cg_rep_buf *b, const struct cg_tune_group *g, int i, int depth)
{
    const struct cg_tune_node *nd = &g->nodes[i];
    if (nd->feature < 0) {
        cg_rep_buf_printf(b, "%*s-> %s   (%zu training cells, mean log regret %.3f)\n",
                          2 * depth, "", g->classes[nd->cls].key, nd->n,
                          (nd->n > 0) ? nd->cost / (double)nd->n : 0.0);
        return;
    }
    cg_rep_buf_printf(b, "%*sif %s <= %.0f:\n", 2 * depth, "", feature_names[nd->feature],
                      nd->thr);
    tree_text(b, g, nd->left, depth + 1);
    cg_rep_buf_printf(b, "%*selse:   # %s >= %.0f\n", 2 * depth, "",
                      feature_names[nd->feature], nd->thr + 1);
    tree_text(b, g, nd->right, depth + 1);
}

static void score_cells(const struct cg_tune_score *s, const char *name, char cells[6][64])
{
    snprintf(cells[0], 64, "%s", name);
    snprintf(cells[1], 64, "%zu/%zu", s->correct, s->n);
    if (s->n > 0) {
        snprintf(cells[2], 64, "%.1f %%", 100.0 * (double)s->correct / (double)s->n);
    } else {
        snprintf(cells[2], 64, "-");
    }
    if (s->nregret > 0) {
        snprintf(cells[3], 64, "%.3f", cg_tune_geomean(s));
        snprintf(cells[4], 64, "%.3f", s->worst);
    } else {
        snprintf(cells[3], 64, "-");
        snprintf(cells[4], 64, "-");
    }
    snprintf(cells[5], 64, "%zu", s->unmeasured);
}

static int add_score_table(struct cg_rep_doc *d, const struct cg_tune_score *const sc[3])
{
    static const char *const heads[] = {"choice",         "right",        "accuracy",
                                        "regret geomean", "regret worst", "not measured"};
    static const char *const names[] = {"dispatcher (tree)", "always native default",
                                        "winner at nearest size"};
    struct cg_rep_table *tb = cg_rep_table_new(6, heads, "lrrrrr");
    if (tb == NULL) {
        return -1;
    }
    for (int i = 0; i < 3; i++) {
        char cells[6][64];
        score_cells(sc[i], names[i], cells);
        const char *row[6] = {cells[0], cells[1], cells[2], cells[3], cells[4], cells[5]};
        if (cg_rep_table_row(tb, row) != 0) {
            cg_rep_table_free(tb);
            return -1;
        }
    }
    cg_rep_doc_add_table(d, tb);
    return 0;
}

static void sum_into(struct cg_tune_score *a, const struct cg_tune_score *b)
{
    a->n += b->n;
    a->correct += b->correct;
    a->unmeasured += b->unmeasured;
    a->nregret += b->nregret;
    a->log_sum += b->log_sum;
    if (b->worst > a->worst) {
        a->worst = b->worst;
    }
}

int cg_tune_build_doc(struct cg_rep_doc *d, const struct cg_tune *t)
{
    char *s = cg_rep_strf("collgen tune: %s", cg_rep_campaign_id(t->c));
    if (s == NULL) {
        return -1;
    }
    cg_rep_doc_add(d, CG_REP_HEADING, 1, s);
    free(s);
    s = cg_rep_strf(
        "%zu records considered, %zu valid candidates; never winners: %zu not ok (failed "
        "check, error, timeout, skipped), %zu below the latency floor, %zu ran another "
        "algorithm than requested, %zu ran in a launch whose transport (roofline p2p) was "
        "more than %gx faster than the native default's launch at the point (0: not "
        "checked)%s.\nSplit: seed %llu, (n + 2) / 5 of each library's and "
        "collective's cells held out. Tree: depth <= %d, leaves of >= %d training cells, a "
        "split must lower the summed log regret by more than %g.",
        t->nrecords, t->nvalid, t->excl_status, t->excl_floor, t->excl_ran_other,
        t->excl_skew, t->o.max_skew,
        t->o.switchable_only ? "; --switchable-only: forced native algorithms are no "
                               "candidates (libcgtune cannot run them per call)"
                             : "",
        (unsigned long long)t->o.seed, t->o.max_depth, t->o.min_leaf, t->o.min_gain);
    if (s == NULL) {
        return -1;
    }
    cg_rep_doc_add(d, CG_REP_PARA, 0, s);
    free(s);

    struct cg_tune_score all[3];
    memset(all, 0, sizeof all);
    all[0].worst = all[1].worst = all[2].worst = 1.0;
    for (size_t i = 0; i < t->ngroups; i++) {
        sum_into(&all[0], &t->groups[i].model);
        sum_into(&all[1], &t->groups[i].always_default);
        sum_into(&all[2], &t->groups[i].nearest);
    }
    cg_rep_doc_add(d, CG_REP_HEADING, 2, "Held-out accuracy and regret, all groups");
    const struct cg_tune_score *sa[3] = {&all[0], &all[1], &all[2]};
    if (add_score_table(d, sa) != 0) {
        return -1;
    }

    for (size_t i = 0; i < t->ngroups; i++) {
        const struct cg_tune_group *g = &t->groups[i];
        s = cg_rep_strf("%s %s", g->library, g->collective);
        if (s == NULL) {
            return -1;
        }
        cg_rep_doc_add(d, CG_REP_HEADING, 2, s);
        free(s);
        s = cg_rep_strf("%zu cells: %zu training, %zu held out; %zu implementations "
                        "measured validly.",
                        g->ncells, g->ncells - g->ntest, g->ntest, g->ncls);
        if (s == NULL) {
            return -1;
        }
        cg_rep_doc_add(d, CG_REP_PARA, 0, s);
        free(s);
        struct cg_rep_buf b;
        cg_rep_buf_init(&b);
        tree_text(&b, g, 0, 0);
        if (b.failed) {
            cg_rep_buf_fini(&b);
            return -1;
        }
        cg_rep_doc_add(d, CG_REP_CODE, 0, b.s);
        cg_rep_buf_fini(&b);

        static const char *const rheads[] = {"p", "ppn", "bytes", "implementation",
                                             "training cells"};
        struct cg_rep_table *rt = cg_rep_table_new(5, rheads, "rrrlr");
        if (rt == NULL) {
            return -1;
        }
        for (size_t r = 0; r < g->nrules; r++) {
            const struct cg_tune_rule *ru = &g->rules[r];
            char a[3][80], lo[32], hi[32], n[32];
            fmt_num(lo, sizeof lo, ru->plo, 1);
            fmt_num(hi, sizeof hi, ru->phi, 1);
            snprintf(a[0], sizeof a[0], "%s..%s", lo, hi);
            fmt_num(lo, sizeof lo, ru->qlo, 2);
            fmt_num(hi, sizeof hi, ru->qhi, 2);
            snprintf(a[1], sizeof a[1], "%s..%s", lo, hi);
            fmt_num(lo, sizeof lo, ru->blo, 0);
            fmt_num(hi, sizeof hi, ru->bhi, 0);
            snprintf(a[2], sizeof a[2], "%s..%s", lo, hi);
            snprintf(n, sizeof n, "%zu", ru->n);
            const char *row[5] = {a[0], a[1], a[2], g->classes[ru->cls].key, n};
            if (cg_rep_table_row(rt, row) != 0) {
                cg_rep_table_free(rt);
                return -1;
            }
        }
        cg_rep_doc_add(d, CG_REP_HEADING, 3, "Rules (the selection's ranges, inclusive)");
        cg_rep_doc_add_table(d, rt);
        cg_rep_doc_add(d, CG_REP_HEADING, 3, "Held out");
        const struct cg_tune_score *sg[3] = {&g->model, &g->always_default, &g->nearest};
        if (add_score_table(d, sg) != 0) {
            return -1;
        }
    }
    cg_rep_doc_add(d, CG_REP_HEADING, 2, "How to read it");
    cg_rep_doc_add(
        d, CG_REP_PARA, 0,
        "A cell is one measured configuration (library, collective, p, ranks per node, "
        "message bytes as the records' size_B, datatype, op, root, in-place); its best is the "
        "fastest valid implementation by median. Accuracy: held-out cells where the choice is "
        "the best (or as fast). Regret: time of the choice over time of the best (1 is "
        "perfect), geometric mean and worst over the held-out cells whose choice was measured "
        "there; 'not measured' counts choices the cell has no valid time for (wrong for "
        "accuracy, left out of regret). The tree is grown on the training cells only, to the "
        "least summed log regret; an implementation not measured at a cell costs it as if 10x "
        "slower. Baselines: the native default everywhere, and the winner of the training "
        "cell at the nearest size (same p and ranks per node, log distance, ties to the "
        "smaller).");
    return d->failed ? -1 : 0;
}

char *cg_tune_dispatcher_json(const struct cg_tune *t)
{
    cJSON *root = cJSON_CreateObject();
    cJSON *groups = cJSON_AddArrayToObject(root, "groups");
    cJSON_AddNumberToObject(root, "schema_version", 1);
    cJSON_AddStringToObject(root, "written_by", "collgen tune");
    cJSON_AddStringToObject(root, "campaign", cg_rep_campaign_id(t->c));
    cJSON_AddNumberToObject(root, "seed", (double)t->o.seed);
    for (size_t i = 0; i < t->ngroups; i++) {
        const struct cg_tune_group *g = &t->groups[i];
        cJSON *jg = cJSON_CreateObject();
        cJSON_AddItemToArray(groups, jg);
        cJSON_AddStringToObject(jg, "library", g->library);
        cJSON_AddStringToObject(jg, "collective", g->collective);
        cJSON_AddNumberToObject(jg, "cells", (double)g->ncells);
        const struct cg_tune_score *sc[3] = {&g->model, &g->always_default, &g->nearest};
        const char *names[3] = {"model", "always_default", "nearest_size"};
        for (int k = 0; k < 3; k++) {
            cJSON *js = cJSON_AddObjectToObject(jg, names[k]);
            cJSON_AddNumberToObject(js, "n", (double)sc[k]->n);
            cJSON_AddNumberToObject(js, "correct", (double)sc[k]->correct);
            cJSON_AddNumberToObject(js, "unmeasured", (double)sc[k]->unmeasured);
            if (sc[k]->nregret > 0) {
                cJSON_AddNumberToObject(js, "regret_geomean", cg_tune_geomean(sc[k]));
                cJSON_AddNumberToObject(js, "regret_worst", sc[k]->worst);
            } else {
                cJSON_AddNullToObject(js, "regret_geomean");
                cJSON_AddNullToObject(js, "regret_worst");
            }
        }
        cJSON *held = cJSON_AddArrayToObject(jg, "held_out");
        for (size_t k = 0; k < g->ncells; k++) {
            const struct cg_tune_cell *c = &g->cells[k];
            if (!c->test) {
                continue;
            }
            cJSON *jc = cJSON_CreateObject();
            cJSON_AddItemToArray(held, jc);
            cJSON_AddNumberToObject(jc, "p", c->p);
            cJSON_AddNumberToObject(jc, "ppn", c->ppn);
            cJSON_AddNumberToObject(jc, "bytes", c->bytes);
            cJSON_AddStringToObject(jc, "datatype", c->first->datatype);
            cJSON_AddStringToObject(jc, "best", g->classes[c->cands[c->best].cls].key);
            cJSON_AddNumberToObject(jc, "best_ns", best_time(c));
            int ch[2] = {g->pred_model[k], g->pred_nearest[k]};
            const char *cn[2] = {"model", "nearest_size"};
            for (int q = 0; q < 2; q++) {
                cJSON *o = cJSON_AddObjectToObject(jc, cn[q]);
                cJSON_AddStringToObject(o, "choice", ch[q] >= 0 ? g->classes[ch[q]].key : "");
                double tt = (ch[q] >= 0) ? time_of(c, ch[q]) : -1;
                if (tt >= 0) {
                    cJSON_AddNumberToObject(o, "ns", tt);
                } else {
                    cJSON_AddNullToObject(o, "ns");
                }
            }
        }
    }
    char *s = cJSON_Print(root);
    cJSON_Delete(root);
    return s;
}
