/* report_data.h - a campaign directory read into memory for collgen report:
 * points.jsonl (required), the raw repetitions its records name, and the
 * context files campaign.json and run-<n>.json (optional).
 *
 * Memory management: cg_rep_load fills a struct cg_rep_campaign that owns
 * everything it points to, strings included (they point into the cJSON
 * trees); cg_rep_campaign_fini frees it all.
 */
#ifndef CG_REPORT_DATA_H
#define CG_REPORT_DATA_H

#include <stddef.h>
#include <stdio.h>

#include <cjson/cJSON.h>

/* One line of points.jsonl, with the fields the report reads pulled out. */
struct cg_rep_record {
    int line;                        /* 1-based line in points.jsonl */
    cJSON *json;                     /* the whole record (owned) */
    const char *status;              /* ok | failed_check | error | timeout | skipped */
    const char *reason;              /* why, for anything but ok; NULL when none given */
    const char *point_id;            /* unique per point */
    const char *collective;          /* allreduce, allgather, ... */
    const char *library;             /* openmpi, mpich, nccl, ... */
    const char *kind;                /* native | generated | baseline | bound | micro */
    const char *name;                /* algorithm, "default", schedule name (with its swept
                                      * parameters: "bcast_knomial(radix=4)"), bound, or
                                      * micro-benchmark ("lane_pattern(k=2)") */
    const char *datatype;            /* requested.datatype, "" when absent */
    const char *op;                  /* requested.op, "" when absent */
    int root;                        /* requested.root, 0 when absent */
    int in_place;                    /* requested.in_place, 0 when absent */
    int ranks;                       /* requested.ranks */
    int virtual_shape;               /* requested.node_shape is "virtual (CG_PPN)" (else
                                      * "real", also when absent) */
    int ranks_per_node;              /* requested.ranks_per_node (the virtual k under
                                      * CG_PPN), 0 when absent */
    int irregular;                   /* the ranks do not split into nodes of ranks_per_node:
                                      * effective.regular false (requested.regular when
                                      * effective has none); topology schedules ran their
                                      * fallback */
    const char *irregular_why;       /* effective.irregular_why, NULL when none */
    int shape_shown;                 /* the campaign has two node shapes at one process
                                      * count, or a virtual one: titles and keys name
                                      * the shape */
    const char *micro;               /* kind micro: "lane_pattern" or "multi_collective",
                                      * else NULL */
    int micro_k;                     /* kind micro: the lanes k of the name (and of
                                      * requested.params.k), else 0 */
    double size_B;                   /* message size as nccl-tests defines it */
    double median_ns;                /* timing.median_ns (ok records) */
    double p25_ns;                   /* timing.p25_ns (ok records) */
    double p75_ns;                   /* timing.p75_ns (ok records) */
    double algbw_GBps;               /* bandwidth.algbw_GBps, NAN when absent */
    double busbw_GBps;               /* bandwidth.busbw_GBps, NAN when absent */
    const char *effective_algorithm; /* effective.algorithm when diff lists "algorithm" */
    const char *algorithm_source;    /* effective.algorithm_source, NULL when absent */
    int unobservable;                /* a native algorithm was forced, but the library
                                      * cannot tell what it ran (source unobservable) */
    const char *unobservable_why;    /* then effective.forced_by, or NULL */
    long reps;                       /* timing.n (ok records), 0 when absent */
    const char *stop;                /* timing.stop (ok records), NULL when absent */
    int duplicate_of;                /* line of an earlier record with this point_id, or 0 */
    double *raw;                     /* repetitions (first column), NULL when none */
    size_t nraw;                     /* how many */
    const char *raw_path;            /* record's "raw" relative to the directory, or NULL */
    int raw_missing;                 /* an ok record whose raw file is absent */
    /* Schema 2 (FORMATS.md); what schema 1 records lack reads as below: */
    int schema;                      /* schema_version: 1, 2 or 3 */
    /* Schema 3: the roofline measured in the record's launch (NAN: none). */
    double roof_limit_ns;            /* roofline.limit_ns */
    double roof_overlap_ns;          /* roofline.overlap_limit_ns */
    double roof_p2p_ns;              /* roofline.p2p_ns: the launch's transport at this
                                      * point (collgen tune's launch-skew check) */
    const char *figure;              /* timing.figure ("window", "max_rank_duration");
                                      * "max_rank_duration" when absent */
    const char *sync;                /* timing.sync, NULL when absent */
    int below_floor;                 /* validity.below_latency_floor: never a winner,
                                      * a violation or a profile choice */
    double floor_ns;                 /* validity.latency_floor_ns, NAN when absent */
    int oversubscribed;              /* validity.oversubscribed: 1, 0, -1 unknown/absent */
    int host_ranks, host_cores;      /* validity.host_ranks, host_cores (0: absent) */
    const char *base_id;             /* launch.point_id: the id the point's launches share
                                      * (point_id when absent) */
    int launch, launches;            /* launch.index, launch.of (1, 1 when absent) */
    /* Repeated launches (report_launch.c, cg_rep_merge_launches): the first
     * ok record of a point stands for all of its ok launches: */
    int merged_into;                 /* another launch's line stands for this one, or 0 */
    int nlaunch;                     /* the representative: its ok launches (1 otherwise) */
    double *launch_median_ns;        /*   their medians, in launch order (owned) */
    double launch_lo_ns;             /*   the smallest of them */
    double launch_hi_ns;             /*   the largest */
};

/* One run-<n>.json. */
struct cg_rep_run {
    int id;      /* n */
    cJSON *json; /* the whole file (owned) */
};

struct cg_rep_campaign {
    const char *dir;              /* as given on the command line */
    struct cg_rep_record *recs;   /* in file order */
    size_t nrecs;                 /* how many */
    cJSON *campaign;              /* campaign.json, or NULL when absent */
    struct cg_rep_run *runs;      /* run-<n>.json sorted by n */
    size_t nruns;                 /* how many */
    /* Pooled (cg_rep_load_pool): the campaign directories, in order, and
     * the launches each gave; else NULL, 0. dir is then the output's. */
    const char *const *sources;
    int *source_launches;         /* owned */
    size_t nsources;
    const char *out;              /* --out (collgen report): where the report goes, or NULL */
};

/* Reads dir. On a missing directory or points.jsonl, or anything malformed
 * ("DIR/points.jsonl:LINE: error: ..."), reports to err and returns 2;
 * out of memory returns 1; 0 on success. c is always safe to fini. */
int cg_rep_load(struct cg_rep_campaign *c, const char *dir, FILE *err);
void cg_rep_campaign_fini(struct cg_rep_campaign *c);

/* Reads the n campaign directories dirs (n >= 2), which must have run one
 * descriptor (campaign.json's test.name, and test.fnv1a64 where both have
 * one), as one campaign whose points have the launches of all of them: the
 * first's launches first, then the second's, each record's launch index,
 * count and point id renumbered (harness/REPORT.md, "Pooled campaigns").
 * Its campaign.json and run files are the first's; dir is out_dir. Errors
 * and return values as cg_rep_load's. */
int cg_rep_load_pool(struct cg_rep_campaign *c, const char *const *dirs, size_t n,
                     const char *out_dir, FILE *err);

/* The campaign's id: campaign.json's "campaign", else the first record's,
 * else "?". Borrowed from c. */
const char *cg_rep_campaign_id(const struct cg_rep_campaign *c);

/* "ok" records with a usable timing block. */
int cg_rep_is_ok(const struct cg_rep_record *r);
/* An ok record the tables show: not a repeated point_id, not a launch
 * another launch's record stands for. */
int cg_rep_is_shown(const struct cg_rep_record *r);

/* ---- repeated launches and the significance test (report_launch.c) ------ */

/* Makes the first ok record of each point measured in several launches
 * stand for all of them: median_ns becomes the median of the launch
 * medians (launch_median_ns, lo, hi), raw the launches' repetitions
 * pooled, reps their sum, bandwidth and below_floor recomputed from the
 * median; the others get merged_into. 0, or -1 out of memory. */
int cg_rep_merge_launches(struct cg_rep_campaign *c);

/* The launch-aware test of a against b (harness/REPORT.md, "Significance"):
 * with at least two launches on both sides, the two-sided Mann-Whitney U
 * test on their launch medians (exact up to 20 launches a side without
 * ties); otherwise on the raw repetitions (pooled over launches). *p is
 * NAN when not testable (a raw file missing); *how (may be NULL) says
 * "launch medians" or "repetitions". 0, or -1 out of memory. */
int cg_rep_test(const struct cg_rep_record *a, const struct cg_rep_record *b, double *p,
                const char **how);

/* The node shape of r as titles show it: "real: 1 node x 4", "CG_PPN=2: 2
 * nodes x 2", "CG_PPN=3: irregular" (the ranks do not split into nodes of
 * 3), "real" when the record has no ranks_per_node. */
void cg_rep_shape_label(char *out, size_t n, const struct cg_rep_record *r);

/* Orders node shapes: real before virtual, then by ranks per node. */
int cg_rep_cmp_shape(const struct cg_rep_record *a, const struct cg_rep_record *b);

#endif
