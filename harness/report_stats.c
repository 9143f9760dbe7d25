/* report_stats.c - the two-sided Mann-Whitney U test (report_stats.h).
 *
 * A worked case: x = {1, 2, 3}, y = {4, 5, 6}. Ranks of the pooled values are
 * 1..6, x holds ranks 1+2+3 = 6, so U_x = 6 - 3*4/2 = 0; the mean of U is
 * nx*ny/2 = 4.5 and its variance nx*ny*(n+1)/12 = 5.25, so with the
 * continuity correction z = (|0 - 4.5| - 0.5) / sqrt(5.25) = 1.746 and
 * p = erfc(1.746 / sqrt 2) = 0.081: three against three is never significant
 * at 0.05 (the exact test agrees: 2/20 = 0.1).
 */
#include "report_stats.h"

#include <math.h>
#include <stdlib.h>

struct pooled {
    double v; /* the value */
    int from; /* 0: x, 1: y */
};

static int cmp_pooled(const void *a, const void *b)
{
    double u = ((const struct pooled *)a)->v;
    double w = ((const struct pooled *)b)->v;
    return (u > w) - (u < w);
}

int cg_rep_mann_whitney(const double *x, size_t nx, const double *y, size_t ny, double *p)
{
    if (nx == 0 || ny == 0) {
        return -1;
    }
    size_t n = nx + ny;
    struct pooled *all = malloc(n * sizeof *all);
    if (all == NULL) {
        return -1;
    }
    for (size_t i = 0; i < nx; i++) {
        all[i].v = x[i];
        all[i].from = 0;
    }
    for (size_t i = 0; i < ny; i++) {
        all[nx + i].v = y[i];
        all[nx + i].from = 1;
    }
    qsort(all, n, sizeof *all, cmp_pooled);

    /* Ties share the mean of the ranks they span (1-based); each run of t
     * tied values takes t^3 - t off the variance. */
    double rank_sum_x = 0.0;
    double tie_term = 0.0;
    size_t i = 0;
    while (i < n) {
        size_t j = i + 1;
        while (j < n && all[j].v == all[i].v) {
            j++;
        }
        double t = (double)(j - i);
        double mean_rank = ((double)i + 1.0 + (double)j) / 2.0;
        for (size_t k = i; k < j; k++) {
            if (all[k].from == 0) {
                rank_sum_x += mean_rank;
            }
        }
        tie_term += t * t * t - t;
        i = j;
    }
    free(all);

    double dx = (double)nx;
    double dy = (double)ny;
    double dn = (double)n;
    double u = rank_sum_x - dx * (dx + 1.0) / 2.0;
    double mu = dx * dy / 2.0;
    double var = dx * dy / 12.0 * ((dn + 1.0) - tie_term / (dn * (dn - 1.0)));
    if (var <= 0.0) {
        *p = 1.0; /* every value ties: no evidence of a difference */
        return 0;
    }
    double dev = fabs(u - mu) - 0.5;
    if (dev < 0.0) {
        dev = 0.0;
    }
    double z = dev / sqrt(var);
    double pv = erfc(z / sqrt(2.0));
    *p = (pv > 1.0) ? 1.0 : pv;
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int cg_rep_bh_threshold(const double *p, size_t m, double q, double *threshold)
{
    double *s = malloc((m > 0 ? m : 1) * sizeof(*s));
    size_t n = 0;

    *threshold = -1.0;
    if (s == NULL) {
        return -1;
    }
    for (size_t i = 0; i < m; i++) {
        if (!isnan(p[i])) {
            s[n++] = p[i];
        }
    }
    qsort(s, n, sizeof(*s), cmp_double);
    /* The largest k with p(k) <= q k / n: p(1..k) are the discoveries. */
    for (size_t k = n; k >= 1; k--) {
        if (s[k - 1] <= q * (double)k / (double)n) {
            *threshold = s[k - 1];
            break;
        }
    }
    free(s);
    return 0;
}
