/* base.h - what every pass of the generator shares: source positions,
 * the arena and diagnostics (runtime/util/util.h, shared with the harness),
 * the options and the one context struct (no globals).
 */
#ifndef CG_BASE_H
#define CG_BASE_H

#include <stdint.h>

#include "util.h"

/* Options of one generator run. */
struct cg_options {
    int p_list[256];     /* process counts to verify, ascending */
    int np;              /* entries used in p_list */
    int all_roots_max_p; /* every root up to this p; above, roots 0, 1, p/2, p-1 */
    const char *out_dir; /* emit: where emitted/ is (default "emitted") */
    const char *depfile; /* emit: write a ninja depfile here, or NULL */
    int quiet;           /* verify: print only failures */
    int ppn;             /* explain, tags: ranks per node of topology schedules (0: default) */
    int64_t max_work;    /* verify: work budget per schedule (0: CG_VERIFY_MAX_WORK, sim.h) */
    int64_t sim_max_work;/* analyse, traffic, simulate, goal: work budget of one run (0:
                          * CG_SIM_MAX_WORK, sim.h) */
};

void cg_options_init(struct cg_options *opt);

/* The one context every pass takes first. */
struct cg_gen {
    const struct cg_options *opt; /* read-only options */
    struct cg_diag diag;          /* error reporting */
};

#endif
