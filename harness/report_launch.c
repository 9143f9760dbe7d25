/* report_launch.c - repeated launches in the report, and the significance
 * test every ratio of the report and of collgen compare uses
 * (report_data.h; harness/REPORT.md, "Repeated launches", "Significance").
 *
 * Why the launch medians, not the pooled repetitions, when there are
 * several launches: repetitions of one launch share its placement, memory
 * layout and library state, so they are not independent draws of the
 * implementation's time; pooling N launches' repetitions into one U test
 * counts each launch's own offset as if it were the implementation's
 * (pseudo-replication), and the p-values come out far too small. The unit
 * that was replicated is the launch: its median is one observation, and
 * the test compares the launch medians of the two implementations, as
 * PGMPITuneLib compares the medians of its nmpiruns. The price is power:
 * with n launches a side the smallest two-sided p of the exact U test is
 * 2 / C(2n, n): 0.10 at 3, 0.029 at 4, 0.0079 at 5, so at alpha 0.05 a
 * difference needs at least 4 launches a side to be called significant.
 */
#include "report_data.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report_stats.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a;
    double y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median_of(double *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_double);
    return (n % 2 == 1) ? v[n / 2] : (v[(n / 2) - 1] + v[n / 2]) / 2.0;
}

struct by_base {
    const char *id; /* base_id */
    size_t index;   /* into recs */
};

static int cmp_by_base(const void *a, const void *b)
{
    const struct by_base *x = a;
    const struct by_base *y = b;
    int s = strcmp(x->id, y->id);
    if (s != 0) {
        return s;
    }
    return (x->index > y->index) - (x->index < y->index);
}

/* Makes recs[v[0..n)] (one point's ok launches, in file order) one. */
static int merge_one(struct cg_rep_campaign *c, const struct by_base *v, size_t n)
{
    struct cg_rep_record *rep = &c->recs[v[0].index];
    double *med = malloc(n * sizeof *med);
    double *sorted = malloc(n * sizeof *sorted);
    double *floors = malloc(n * sizeof *floors);
    double *limits = malloc(2 * n * sizeof *limits); /* roofline: limits, then overlaps */
    size_t nraw = 0;
    size_t nfloor = 0;
    size_t nlimit = 0;
    long reps = 0;
    if (med == NULL || sorted == NULL || floors == NULL || limits == NULL) {
        free(med);
        free(sorted);
        free(floors);
        free(limits);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        const struct cg_rep_record *r = &c->recs[v[i].index];
        med[i] = r->median_ns;
        sorted[i] = r->median_ns;
        nraw += r->nraw;
        reps += r->reps;
        if (isfinite(r->floor_ns)) {
            floors[nfloor++] = r->floor_ns;
        }
        if (r->roof_limit_ns > 0.0 && r->roof_overlap_ns > 0.0) {
            limits[nlimit] = r->roof_limit_ns;
            limits[n + nlimit] = r->roof_overlap_ns;
            nlimit++;
        }
    }
    double *raw = NULL;
    if (nraw > 0) {
        raw = malloc(nraw * sizeof *raw);
        if (raw == NULL) {
            free(med);
            free(sorted);
            free(floors);
            free(limits);
            return -1;
        }
        size_t k = 0;
        for (size_t i = 0; i < n; i++) {
            const struct cg_rep_record *r = &c->recs[v[i].index];
            if (r->nraw > 0) {
                memcpy(raw + k, r->raw, r->nraw * sizeof *raw);
                k += r->nraw;
            }
        }
    }
    double m = median_of(sorted, n);
    double factor = (rep->algbw_GBps > 0.0) ? rep->busbw_GBps / rep->algbw_GBps : NAN;
    rep->nlaunch = (int)n;
    rep->launch_median_ns = med;
    rep->launch_lo_ns = sorted[0];
    rep->launch_hi_ns = sorted[n - 1];
    rep->median_ns = m;
    if (!isnan(rep->algbw_GBps) && m > 0.0) {
        rep->algbw_GBps = rep->size_B / m; /* bytes per ns = GB/s */
        rep->busbw_GBps = rep->algbw_GBps * factor;
    }
    /* Below the floor when the median of the launch medians is below the
     * median of the launches' floors (each launch measures its own). */
    if (nfloor > 0) {
        rep->floor_ns = median_of(floors, nfloor);
        rep->below_floor = rep->ranks > 1 && m < rep->floor_ns;
    }
    /* The roofline, like the floor: each launch measures its own, and the
     * median of the launch medians is set against the median of their
     * limits (the first launch's alone put Open MPI's 64 MiB allreduce at
     * 1.603 of a limit its launches were 0.98 to 1.09 of, measurements/
     * 2026-12-07-plans.md section 5). */
    if (nlimit > 0) {
        rep->roof_limit_ns = median_of(limits, nlimit);
        rep->roof_overlap_ns = median_of(limits + n, nlimit);
    }
    if (raw != NULL) {
        free(rep->raw);
        rep->raw = raw;
        rep->nraw = nraw;
        rep->raw_missing = 0;
    }
    rep->reps = reps;
    for (size_t i = 1; i < n; i++) {
        c->recs[v[i].index].merged_into = rep->line;
    }
    free(sorted);
    free(floors);
    free(limits);
    return 0;
}

int cg_rep_merge_launches(struct cg_rep_campaign *c)
{
    struct by_base *v = malloc((c->nrecs + 1) * sizeof *v);
    size_t n = 0;
    int rc = 0;
    if (v == NULL) {
        return -1;
    }
    for (size_t i = 0; i < c->nrecs; i++) {
        const struct cg_rep_record *r = &c->recs[i];
        if (r->launches > 1 && cg_rep_is_ok(r) && r->duplicate_of == 0) {
            v[n].id = r->base_id;
            v[n].index = i;
            n++;
        }
    }
    qsort(v, n, sizeof *v, cmp_by_base);
    size_t i = 0;
    while (i < n && rc == 0) {
        size_t j = i + 1;
        while (j < n && strcmp(v[j].id, v[i].id) == 0) {
            j++;
        }
        rc = merge_one(c, v + i, j - i);
        i = j;
    }
    free(v);
    return rc;
}

/* ---- the test ------------------------------------------------------------ */

#define EXACT_MAX 20 /* the exact distribution of U up to this many a side */

/* The two-sided exact p of the Mann-Whitney U test without ties: the
 * number of arrangements of m x-values and n y-values with U_x = u is
 * f(u; m, n) = f(u - n; m - 1, n) + f(u; m, n - 1) (the largest value is an
 * x, which beats all n ys, or a y), f(0; 0, n) = f(0; m, 0) = 1; p = 2
 * min(P(U <= u), P(U >= u)), at most 1. */
static int exact_u(size_t m, size_t n, double u, double *p)
{
    size_t umax = m * n;
    /* f[a][b][k] as a flat array, a <= m, b <= n, k <= umax. */
    double *f = calloc((m + 1) * (n + 1) * (umax + 1), sizeof *f);
    if (f == NULL) {
        return -1;
    }
#define F(a, b, k) f[(((a) * (n + 1)) + (b)) * (umax + 1) + (k)]
    for (size_t a = 0; a <= m; a++) {
        for (size_t b = 0; b <= n; b++) {
            if (a == 0 || b == 0) {
                F(a, b, 0) = 1.0;
                continue;
            }
            for (size_t k = 0; k <= a * b; k++) {
                double v = F(a, b - 1, k);
                if (k >= b) {
                    v += F(a - 1, b, k - b);
                }
                F(a, b, k) = v;
            }
        }
    }
    double total = 0.0;
    double lo = 0.0;
    double hi = 0.0;
    for (size_t k = 0; k <= umax; k++) {
        double w = F(m, n, k);
        total += w;
        lo += ((double)k <= u + 1e-9) ? w : 0.0;
        hi += ((double)k >= u - 1e-9) ? w : 0.0;
    }
#undef F
    free(f);
    double pv = 2.0 * fmin(lo, hi) / total;
    *p = (pv > 1.0) ? 1.0 : pv;
    return 0;
}

/* U test on the launch medians: exact when small and free of ties. */
static int launch_test(const double *x, size_t nx, const double *y, size_t ny, double *p)
{
    double u = 0.0;
    int ties = 0;
    if (nx > EXACT_MAX || ny > EXACT_MAX) {
        return cg_rep_mann_whitney(x, nx, y, ny, p);
    }
    for (size_t i = 0; i < nx; i++) {
        for (size_t k = 0; k < ny; k++) {
            u += (x[i] > y[k]) ? 1.0 : 0.0;
            ties |= (x[i] == y[k]);
        }
    }
    if (ties) {
        return cg_rep_mann_whitney(x, nx, y, ny, p);
    }
    return exact_u(nx, ny, u, p);
}

int cg_rep_test(const struct cg_rep_record *a, const struct cg_rep_record *b, double *p,
                const char **how)
{
    *p = NAN;
    if (a->nlaunch >= 2 && b->nlaunch >= 2 && a->launch_median_ns != NULL &&
        b->launch_median_ns != NULL) {
        if (how != NULL) {
            *how = "launch medians";
        }
        return launch_test(a->launch_median_ns, (size_t)a->nlaunch, b->launch_median_ns,
                           (size_t)b->nlaunch, p);
    }
    if (how != NULL) {
        *how = "repetitions";
    }
    if (a->raw == NULL || b->raw == NULL || a->nraw == 0 || b->nraw == 0) {
        return 0;
    }
    return cg_rep_mann_whitney(a->raw, a->nraw, b->raw, b->nraw, p);
}
