/* run_baseline.h - baseline:<name> on the runner's side (run_baseline.c):
 * which plain-MPI baselines exist (harness/baselines/baselines.h) and
 * whether a test may name one. bench runs them (bench_baseline.c). */
#ifndef CG_RUN_BASELINE_H
#define CG_RUN_BASELINE_H

#include <stddef.h>

#include "descriptor.h"

/* The baselines, in baselines.h's order: how many, and each one's name and
 * collective. */
int cg_baseline_count(void);
const char *cg_baseline_name(int i);
enum cg_coll cg_baseline_coll(int i);

/* Why implementation im (baseline:<name> or baseline:*) cannot run for
 * collective coll of test t (from_top: im comes from the test's top-level
 * list, which applies to every collective; a baseline of another collective
 * is then left out, not an error); NULL when it can. The text goes into
 * out. */
const char *cg_baseline_problem(const struct cg_impl_req *im, enum cg_coll coll,
                                const struct cg_test *t, int from_top, char *out, size_t len);

#endif
