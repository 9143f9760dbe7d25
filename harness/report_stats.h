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

#endif
