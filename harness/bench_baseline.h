/* bench_baseline.h - the plain-MPI baselines (harness/baselines/) as bench
 * runs them: entries shaped like the generated algorithms' (struct cg_algo),
 * so that a baseline:<name> point is checked, timed and tagged exactly like
 * a generated:<name> one (bench_baseline.c). */
#ifndef CG_BENCH_BASELINE_H
#define CG_BENCH_BASELINE_H

#include "cg_algo.h"

/* Every baseline, in harness/baselines/baselines.h's order; *n gets how many. */
const struct cg_algo *const *bench_baselines(int *n);
/* The baseline called name, or NULL. */
const struct cg_algo *bench_baseline_find(const char *name);
/* The table naming a baseline's tags: entry k names tag a->tag_first + k. */
const struct cg_tag_info *bench_baseline_tag_infos(const struct cg_algo *a);
/* The entry of tag id in collgen tag's table (any tagged function: a
 * baseline's helpers have their own call tags), or NULL outside it. */
const struct cg_tag_info *bench_baseline_tag_info(int id);

#endif
