/* report_speed.c - the section "Speed": generated code against the native
 * implementation of the same algorithm, summed up per library and
 * collective, and every implementation against the roofline measured in its
 * own launch (harness/bench_roof.c, REPORT.md "Speed").
 *
 * Shown only when some record carries a roofline (schema 3), so that older
 * campaigns' reports do not change.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report_stats.h"
#include "report_table.h"
#include "report_util.h"

/* Sizes from which the roofline table lists points: below, latency, not
 * bandwidth, decides (the limit has no latency term). */
#define SPEED_LARGE_B (1024.0 * 1024.0)
/* "Worse" in the summary: generated above native by more than this, and
 * significantly (the goal: no point worse than 1.10). */
#define SPEED_MARGIN 1.10

/* The false discovery rate the summary's second count controls over all
 * of its pairs (report_stats.h, cg_rep_bh_threshold). */
#define SPEED_FDR 0.05

static const char *const sum_heads[] = {"library", "collective", "pairs", "geomean gen/nat",
                                        "worse than 1.10", "worse, FDR 5%", "worst",
                                        "worst at"};
static const char sum_align[] = "llrrrrrl";
static const char *const roof_heads[] = {"library", "collective", "p", "size", "limit us",
                                         "overlap us", "default/lim", "best native",
                                         "nat/lim", "best generated", "gen/lim"};
static const char roof_align[] = "llrrrrrlrlr";

static int ok_timed(const struct cg_rep_record *r)
{
    return strcmp(r->status, "ok") == 0 && r->median_ns > 0.0 && r->micro == NULL;
}

/* Records of one comparable point: collective, library, p, shape, datatype,
 * op, root, in place and size. */
static int same_point(const struct cg_rep_record *a, const struct cg_rep_record *b)
{
    return strcmp(a->collective, b->collective) == 0 && strcmp(a->library, b->library) == 0 &&
           a->ranks == b->ranks && cg_rep_cmp_shape(a, b) == 0 &&
           strcmp(a->datatype, b->datatype) == 0 && strcmp(a->op, b->op) == 0 &&
           a->root == b->root && a->in_place == b->in_place && a->size_B == b->size_B;
}

static const char *after_coll(const struct cg_rep_record *r)
{
    size_t n = strlen(r->collective);
    return (strncmp(r->name, r->collective, n) == 0 && r->name[n] == '_') ? r->name + n + 1
                                                                         : r->name;
}

struct acc {
    const char *library, *collective;
    size_t pairs, worse, worse_fdr;
    double log_sum;
    double worst;
    const struct cg_rep_record *worst_g;
    const char *worst_mark;
};

static struct acc *acc_of(struct acc *a, size_t *na, const struct cg_rep_record *g)
{
    for (size_t i = 0; i < *na; i++) {
        if (strcmp(a[i].library, g->library) == 0 && strcmp(a[i].collective, g->collective) == 0) {
            return &a[i];
        }
    }
    struct acc *x = &a[(*na)++];
    memset(x, 0, sizeof(*x));
    x->library = g->library;
    x->collective = g->collective;
    return x;
}

static int cmp_acc(const void *pa, const void *pb)
{
    const struct acc *a = pa, *b = pb;
    int s = strcmp(a->library, b->library);
    return (s != 0) ? s : strcmp(a->collective, b->collective);
}

/* The summary table: every generated record against the fastest native
 * record of the same algorithm at its point. 0, or -1 out of memory. */
static int summary_table(struct cg_rep_doc *d, const struct cg_rep_record *const *v, size_t n)
{
    struct acc *a = calloc(n + 1, sizeof(*a));
    /* Every pair's accumulator, ratio and p, for the count at a false
     * discovery rate once all p-values are known. */
    size_t *pair_acc = calloc(n + 1, sizeof(*pair_acc));
    double *pair_ratio = calloc(n + 1, sizeof(*pair_ratio));
    double *pair_p = calloc(n + 1, sizeof(*pair_p));
    size_t na = 0, np = 0;
    double bh = -1.0;
    int rc = -1;
    if (a == NULL || pair_acc == NULL || pair_ratio == NULL || pair_p == NULL) {
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        const struct cg_rep_record *g = v[i];
        if (!ok_timed(g) || strcmp(g->kind, "generated") != 0) {
            continue;
        }
        const struct cg_rep_record *peer = NULL;
        for (size_t k = 0; k < n; k++) {
            const struct cg_rep_record *r = v[k];
            /* Why not a native that ran another algorithm (known or
             * reported fallback, "!" in the tables): the pair would not
             * compare two implementations of one algorithm. */
            if (ok_timed(r) && strcmp(r->kind, "native") == 0 && same_point(g, r) &&
                cg_rep_same_algorithm(g, r) && r->effective_algorithm == NULL &&
                (peer == NULL || r->median_ns < peer->median_ns)) {
                peer = r;
            }
        }
        if (peer == NULL) {
            continue;
        }
        double ratio = g->median_ns / peer->median_ns;
        double p = NAN;
        if (cg_rep_test(g, peer, &p, NULL) != 0) {
            goto out;
        }
        int significant = !isnan(p) && p < CG_REP_ALPHA;
        struct acc *x = acc_of(a, &na, g);
        pair_acc[np] = (size_t)(x - a);
        pair_ratio[np] = ratio;
        pair_p[np++] = p;
        x->pairs++;
        x->log_sum += log(ratio);
        x->worse += (ratio > SPEED_MARGIN && significant);
        if (x->worst_g == NULL || ratio > x->worst) {
            x->worst = ratio;
            x->worst_g = g;
            x->worst_mark = isnan(p) ? "?" : significant ? "" : "~";
        }
    }
    if (na == 0) {
        rc = 0;
        goto out;
    }
    if (cg_rep_bh_threshold(pair_p, np, SPEED_FDR, &bh) != 0) {
        goto out;
    }
    for (size_t i = 0; i < np; i++) {
        a[pair_acc[i]].worse_fdr += (pair_ratio[i] > SPEED_MARGIN && !isnan(pair_p[i]) &&
                                     pair_p[i] <= bh);
    }
    qsort(a, na, sizeof(*a), cmp_acc);
    struct cg_rep_table *t = cg_rep_table_new(8, sum_heads, sum_align);
    if (t == NULL) {
        goto out;
    }
    for (size_t i = 0; i < na; i++) {
        char pairs[24], gm[24], worse[24], worse_fdr[24], worst[32], at[160], size[32];
        snprintf(pairs, sizeof pairs, "%zu", a[i].pairs);
        snprintf(gm, sizeof gm, "%.3f", exp(a[i].log_sum / (double)a[i].pairs));
        snprintf(worse, sizeof worse, "%zu", a[i].worse);
        snprintf(worse_fdr, sizeof worse_fdr, "%zu", a[i].worse_fdr);
        snprintf(worst, sizeof worst, "%.3f%s", a[i].worst, a[i].worst_mark);
        cg_rep_fmt_size(size, sizeof size, a[i].worst_g->size_B);
        snprintf(at, sizeof at, "%s p=%d %s", after_coll(a[i].worst_g), a[i].worst_g->ranks, size);
        const char *row[] = {a[i].library, a[i].collective, pairs, gm, worse, worse_fdr, worst, at};
        if (cg_rep_table_row(t, row) != 0) {
            cg_rep_table_free(t);
            goto out;
        }
    }
    char bh_text[96];
    if (bh >= 0.0) {
        snprintf(bh_text, sizeof bh_text, "p <= %.3g", bh);
    } else {
        snprintf(bh_text, sizeof bh_text, "none");
    }
    char para[1024];
    snprintf(para, sizeof para,
                    "Generated against the native implementation of the same algorithm (the "
                    "pairs of the tables above), per library and collective: the geometric mean "
                    "of the median ratios over every pair, size and p; how many are above 1.10 "
                    "and significant, each pair tested alone at alpha = 0.05 (over hundreds of "
                    "pairs some pass by chance: at 4 launches a side one pair in 35 of equal "
                    "implementations has p = 0.029), and how many of those stay significant "
                    "when the false discovery rate over all %zu pairs is held at 5%% "
                    "(Benjamini-Hochberg; discoveries: %s); the worst ratio and where (~ not "
                    "significant). A native that ran another algorithm than the one forced (! "
                    "above) makes no pair:", np, bh_text);
    cg_rep_doc_add(d, CG_REP_PARA, 0, para);
    cg_rep_doc_add_table(d, t);
    rc = 0;
out:
    free(a);
    free(pair_acc);
    free(pair_ratio);
    free(pair_p);
    return rc;
}

static void fmt_lim(char *out, size_t n, const struct cg_rep_record *r)
{
    if (r == NULL || !(r->roof_limit_ns > 0.0)) {
        snprintf(out, n, "-");
    } else {
        snprintf(out, n, "%.3f", r->median_ns / r->roof_limit_ns);
    }
}

/* The roofline table: points of SPEED_LARGE_B or more with a roofline. */
static int roof_table(struct cg_rep_doc *d, const struct cg_rep_record *const *v, size_t n)
{
    struct cg_rep_table *t = cg_rep_table_new(11, roof_heads, roof_align);
    if (t == NULL) {
        return -1;
    }
    /* v is sorted by group then size (report_table.c): each point's records
     * are adjacent. */
    size_t i = 0;
    while (i < n) {
        size_t j = i + 1;
        while (j < n && same_point(v[j], v[i])) {
            j++;
        }
        const struct cg_rep_record *def = NULL, *nat = NULL, *gen = NULL, *lim = NULL;
        for (size_t k = i; k < j; k++) {
            const struct cg_rep_record *r = v[k];
            if (!ok_timed(r)) {
                continue;
            }
            if (r->roof_limit_ns > 0.0 && (lim == NULL || r->roof_limit_ns < lim->roof_limit_ns)) {
                lim = r;
            }
            if (strcmp(r->kind, "native") == 0 && strcmp(r->name, "default") == 0) {
                def = r;
            } else if (strcmp(r->kind, "native") == 0 &&
                       (nat == NULL || r->median_ns < nat->median_ns)) {
                nat = r;
            } else if (strcmp(r->kind, "generated") == 0 &&
                       (gen == NULL || r->median_ns < gen->median_ns)) {
                gen = r;
            }
        }
        if (lim != NULL && v[i]->size_B >= SPEED_LARGE_B) {
            char p[16], size[32], l_us[32], o_us[32], dl[24], nl[24], gl[24];
            snprintf(p, sizeof p, "%d", v[i]->ranks);
            cg_rep_fmt_size(size, sizeof size, v[i]->size_B);
            cg_rep_fmt_us(l_us, sizeof l_us, lim->roof_limit_ns);
            cg_rep_fmt_us(o_us, sizeof o_us, lim->roof_overlap_ns);
            fmt_lim(dl, sizeof dl, def);
            fmt_lim(nl, sizeof nl, nat);
            fmt_lim(gl, sizeof gl, gen);
            const char *row[] = {v[i]->library, v[i]->collective, p, size, l_us, o_us, dl,
                                 (nat != NULL) ? nat->name : "-", nl,
                                 (gen != NULL) ? after_coll(gen) : "-", gl};
            if (cg_rep_table_row(t, row) != 0) {
                cg_rep_table_free(t);
                return -1;
            }
        }
        i = j;
    }
    if (t->nrows == 0) {
        cg_rep_table_free(t);
        return 0;
    }
    cg_rep_doc_add(d, CG_REP_PARA, 0,
                   "Against the roofline measured in the same launch (harness/README.md, \"The "
                   "roofline\"), from 1 MiB: limit us, what every rank must receive, reduce and "
                   "copy at the measured point-to-point, reduce and copy speeds, one after the "
                   "other; overlap us, the larger of the transfer and the local work (no "
                   "algorithm beats it); each implementation's median over the limit (each "
                   "record against the limit measured with it, the lowest of them shown):");
    cg_rep_doc_add_table(d, t);
    return 0;
}

void cg_rep_speed_section(struct cg_rep_doc *d, const struct cg_rep_record *const *v, size_t n)
{
    int any = 0;
    for (size_t i = 0; i < n; i++) {
        any |= v[i]->roof_limit_ns > 0.0;
    }
    if (!any) {
        return;
    }
    cg_rep_doc_add(d, CG_REP_HEADING, 2, "Speed");
    if (summary_table(d, v, n) != 0 || roof_table(d, v, n) != 0) {
        d->failed = 1;
    }
}
