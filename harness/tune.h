/* tune.h - collgen tune: from a campaign's records, the selection a tuning
 * library, Open MPI, MPICH and NCCL can load (harness/README.md, "collgen
 * tune"; harness/FORMATS.md, "Selection").
 *
 * Rules of the parts:
 * - tune.c reads the campaign (report_data.c, the report's reader), writes
 *   every output as FILE.tmp and renames them into place only when all are
 *   written: bad input leaves nothing behind.
 * - tune_tree.c turns records into cells (one measured configuration: a
 *   library, collective, p, ranks per node, message size, datatype, op,
 *   root and in-place) with their valid candidates, splits them into a
 *   seeded 80 % training and 20 % held-out part, grows one small decision
 *   tree per library and collective and evaluates it and two baselines on
 *   the held-out cells.
 * - tune_export.c writes the trees' leaves as the selection (one file per
 *   library) and, from the same rules, the three library formats.
 * - A candidate is valid when its record is ok, shown (first of its point,
 *   the representative of its launches), not below the latency floor, ran
 *   what it requested (no "algorithm" in diff), did not run in a launch
 *   whose transport was more than max_skew times faster than the cell's
 *   native default's launch, and is not a bound or a micro-benchmark. Invalid records never win and are never chosen.
 *
 * Memory management: struct cg_tune owns everything it points to except
 * the campaign (whose strings it borrows); cg_tune_fini frees it.
 */
#ifndef CG_TUNE_H
#define CG_TUNE_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "report_data.h"
#include "report_table.h"

/* Open upper ends of a rule's ranges (JSON numbers, exact in a double). */
#define CG_TUNE_P_MAX 2147483647.0
#define CG_TUNE_BYTES_MAX 9007199254740991.0 /* 2^53 - 1 */

/* One implementation a cell measured validly. */
struct cg_tune_cand {
    int cls;          /* index into the group's classes */
    double median_ns; /* its median */
};

/* One measured configuration. */
struct cg_tune_cell {
    const struct cg_rep_record *first; /* one record of it (for its key fields) */
    double bytes;                      /* size_B */
    int p, ppn;                        /* ranks, ranks per node (p when absent) */
    struct cg_tune_cand *cands;        /* valid candidates (owned) */
    size_t nc;
    size_t nexcluded; /* records of it that were not valid */
    int best;         /* index into cands of the fastest, -1 when none */
    int test;         /* held out */
};

/* One implementation of a group, as the selection names it. */
struct cg_tune_class {
    char *key;        /* "native:ring", "generated:bcast_knomial(radix=4)" (owned) */
    char *impl;       /* "generated:bcast_knomial" (owned) */
    char *params;     /* requested.params as JSON text, or NULL (owned) */
    const char *kind; /* native | generated | baseline (borrowed) */
    const char *alg;  /* native: the algorithm name ("ring", "default") (borrowed) */
    int ompi_id;      /* openmpi native: the coll_tuned number the records forced, else 0 */
};

/* A tree node: a leaf when feature < 0. */
struct cg_tune_node {
    int feature;     /* -1 leaf, 0 bytes, 1 p, 2 ranks per node */
    double thr;      /* go left when value <= thr */
    int left, right; /* children, indices into nodes */
    int cls;         /* leaf: the class chosen */
    size_t n;        /* training cells that reach it */
    double cost;     /* their summed log regret under cls */
};

/* A leaf as ranges (inclusive). */
struct cg_tune_rule {
    double blo, bhi;
    double plo, phi;
    double qlo, qhi; /* ranks per node */
    int cls;
    size_t n; /* training cells in it */
};

/* Accuracy and regret of one way of choosing on the held-out cells. */
struct cg_tune_score {
    size_t n;          /* held-out cells with a best */
    size_t correct;    /* chose the best (or one as fast) */
    size_t unmeasured; /* chose something not validly measured there */
    size_t nregret;    /* cells whose regret is known */
    double log_sum;    /* sum of log regret */
    double worst;      /* largest regret (1 when none) */
};

struct cg_tune_group {
    const char *library, *collective; /* borrowed */
    struct cg_tune_class *classes;
    size_t ncls;
    struct cg_tune_cell *cells;
    size_t ncells, ntest;
    struct cg_tune_node *nodes;
    size_t nnodes;
    struct cg_tune_rule *rules;
    size_t nrules;
    struct cg_tune_score model, always_default, nearest;
    int *pred_model, *pred_nearest; /* per cell (held out: the choice, else -1) */
};

struct cg_tune_opts {
    uint64_t seed;   /* the split's seed */
    int max_depth;   /* of each tree */
    int min_leaf;    /* training cells a leaf holds at least */
    double min_gain; /* smallest decrease of summed log regret a split must bring */
    double max_skew; /* a record whose launch's transport (roofline.p2p_ns) was more than
                      * this many times faster than the default's launch never counts;
                      * 0: not checked */
    int switchable_only; /* forced native algorithms are no candidates */
};

struct cg_tune {
    const struct cg_rep_campaign *c;
    struct cg_tune_opts o;
    struct cg_tune_group *groups;
    size_t ngroups;
    size_t nrecords, nvalid; /* records considered, valid candidates */
    size_t excl_status, excl_floor, excl_ran_other, excl_skew, excl_unswitchable;
};

/* Builds cells, split, trees, rules and scores. 0; -1 out of memory;
 * 2 nothing to tune (message on err). */
int cg_tune_build(struct cg_tune *t, const struct cg_rep_campaign *c,
                  const struct cg_tune_opts *o, FILE *err);
void cg_tune_fini(struct cg_tune *t);

/* The class a tree chooses for (bytes, p, ppn). */
int cg_tune_predict(const struct cg_tune_group *g, double bytes, int p, int ppn);

/* Geomean regret of a score (NAN when none). */
double cg_tune_geomean(const struct cg_tune_score *s);

/* dispatcher.txt / .md content: the model readable, the tables. */
int cg_tune_build_doc(struct cg_rep_doc *d, const struct cg_tune *t);
/* dispatcher.json: every group's rules and held-out cells with the choices
 * (for tests and scripts). malloc'd, NULL out of memory. */
char *cg_tune_dispatcher_json(const struct cg_tune *t);

/* tune_export.c. Each returns malloc'd text or NULL out of memory; *none
 * (may be NULL) set when the library has nothing of this kind to export. */
char *cg_tune_selection_json(const struct cg_tune *t, const char *library,
                             const char *campaign, const char *hash);
char *cg_tune_ompi_rules(const struct cg_tune *t, int ppn_node, int *none);
/* base_text: MPICH's own MPIR-level selection (its default subtrees stay
 * where no rule names a forced native algorithm); why gets the reason
 * when *none. */
char *cg_tune_mpich_csel(const struct cg_tune *t, const char *base_text, int ppn_node,
                         int *none, char *why, size_t nwhy);
char *cg_tune_nccl_csv(const struct cg_tune *t, int *none);

/* tune.c */
int cg_tune_main(int argc, char **argv);

#endif
