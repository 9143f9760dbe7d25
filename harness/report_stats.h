/* report_stats.h - the significance test collgen report marks ratios with. */
#ifndef CG_REPORT_STATS_H
#define CG_REPORT_STATS_H

#include <stddef.h>

/* The significance level the report uses. */
#define CG_REP_ALPHA 0.05

/* Two-sided Mann-Whitney U test of x[0..nx) against y[0..ny): the normal
 * approximation of U with the tie correction of its variance and a
 * continuity correction of 1/2 (as scipy.stats.mannwhitneyu with
 * method="asymptotic"). Stores the p-value in *p: 1 when every value ties.
 * Returns 0, or -1 when a sample is empty or memory runs out.
 *
 * Why this test: repetitions of a collective are skewed (a floor and a long
 * tail of interrupted repetitions), so a test on means (Welch's t) would be
 * driven by the tail; U compares whole distributions through ranks, needs no
 * normality, and the raw repetitions are exactly what it needs. */
int cg_rep_mann_whitney(const double *x, size_t nx, const double *y, size_t ny, double *p);

/* The Benjamini-Hochberg step-up procedure over the m p-values p (NaN: not
 * tested, left out of the family): *threshold is the largest p(k) with
 * p(k) <= q k / n over the n tested, so that the p-values at or below it
 * are the discoveries at a false discovery rate of q; -1 when there is none.
 * Returns 0, or -1 out of memory.
 *
 * Why: the report tests hundreds of pairs at alpha = 0.05 each; with equal
 * implementations about one in 35 would still come out "significant" one
 * way or the other (at 4 launches a side, two of the 70 orders of the launch
 * medians have p = 0.029), so a count of significant pairs over a campaign
 * needs the family's error controlled, not each test's. */
int cg_rep_bh_threshold(const double *p, size_t m, double q, double *threshold);

#endif
