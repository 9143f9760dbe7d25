/* passes.h - the passes after check, which read a checked IR. */
#ifndef CG_PASSES_H
#define CG_PASSES_H

#include <stdio.h>

#include "ir.h"

/* ---- resolve.c ---- */

struct cg_set; /* load.h */

/* Binds s's call steps ("use") and fallback to the generated schedules they
 * name: among set's, else loaded from schedules/ into set. Reports what
 * does not fit (resolve.c says what) and returns -1 then, else 0. */
int cg_resolve(struct cg_gen *g, struct cg_set *set, struct cg_schedule *s);

/* ---- verify.c ---- */

struct cg_verify_stats {
    long runs; /* (p, root) pairs simulated */
};

/* Every p of g->opt->p_list and every root (all up to all_roots_max_p, then
 * 0, 1, p/2, p-1). Stops at the first counter-example, which it reports.
 * Returns 0 when all pass. */
int cg_verify(struct cg_gen *g, const struct cg_schedule *s, struct cg_verify_stats *stats);
int cg_verify_one(struct cg_gen *g, const struct cg_schedule *s, int p, int root);
/* Whether coll's in-place form makes two of a schedule's buffers one memory
 * (scatter: the root's out is its block of in); cg_verify then proves each
 * configuration once more with the root called in place. */
int cg_verify_in_place_aliases(enum cg_coll_kind coll);

/* ---- analyse.c ---- */

/* Alpha-beta-gamma model: a step instance costs alpha + beta * (the most
 * bytes any rank sends or receives in it); a reduce instance costs gamma *
 * (the most bytes any rank reduces in it). Copies are counted, not costed. */
struct cg_model {
    double alpha_us;   /* latency per message round, microseconds */
    double beta_ns_B;  /* transfer time, nanoseconds per byte */
    double gamma_ns_B; /* reduction time, nanoseconds per byte */
};

struct cg_analysis {
    int p;                 /* ranks */
    int root;              /* root */
    size_t count;          /* elements (the collective's count argument) */
    int elem_size;         /* bytes per element */
    long rounds;           /* exchange step instances that move data */
    long messages;         /* messages with at least one block */
    double sent_max_B;     /* most bytes sent by one rank */
    double sent_sum_B;     /* bytes sent by all ranks */
    double recv_max_B;     /* most bytes received by one rank */
    double reduce_max_B;   /* most bytes reduced by one rank */
    double reduce_sum_B;   /* bytes reduced by all ranks */
    double copy_sum_B;     /* bytes copied locally by all ranks */
    double t_alpha_us;     /* model: latency part */
    double t_beta_us;      /* model: bandwidth part */
    double t_gamma_us;     /* model: reduction part */
};

/* Simulates s at (p, root) and fills *a. When trace is not NULL, writes one
 * block per step instance (compact: one line per instance, prefixed by
 * `prefix`). Returns 0, or -1 when the schedule fails at this p. */
/* Ranks per node used for s at p by explain and tags (0 for flat schedules). */
int cg_analyse_ppn(const struct cg_gen *g, const struct cg_schedule *s, int p);
int cg_analyse(struct cg_gen *g, const struct cg_schedule *s, int p, int root, size_t count,
               int elem_size, const struct cg_model *model, FILE *trace, int compact,
               const char *prefix, struct cg_analysis *a);

void cg_model_init(struct cg_model *m);

/* Bytes of block ranges, for a collective's count (the analysis pass's
 * rule, shared by traffic.c, simulate.c and goal.c so their totals are the
 * analysis pass's). cg_bytes_init before the simulation, cg_bytes_start
 * from the consumer's start. */
struct cg_sim_range; /* sim.h */
struct cg_bytes {
    size_t count;            /* elements (a barrier: 1) */
    int elem;                /* bytes per element (a barrier: 1) */
    size_t vec;              /* elements in one full vector */
    long blocks;             /* B */
    long nb[CG_BUF_COUNT_];  /* blocks per buffer */
};
void cg_bytes_init(struct cg_bytes *b, const struct cg_schedule *s, int p, size_t count, int elem);
void cg_bytes_start(struct cg_bytes *b, long blocks, const long *nblocks);
double cg_range_bytes(const struct cg_bytes *b, const struct cg_sim_range *r);

/* FNV-1a (64 bits) of a file's bytes: registry.json's "file_hash" and the
 * GOAL header's hash. */
uint64_t cg_gen_fnv1a64(const char *text, size_t len);

/* Writes, for every rank, each timing tag the emitted code enters at (p,
 * root) and how many times: "rank path calls" lines, the call tag first. */
int cg_tag_counts(struct cg_gen *g, const struct cg_schedule *s, int p, int root, FILE *out);

/* ---- traffic.c, simulate.c, goal.c: machines collgen cannot run on ---- */

struct cg_topo;      /* topo.h */
struct cg_placement; /* topo.h */

/* Bytes per topology domain per step instance and phase, totals (checked
 * against cg_analyse), and the most loaded links per level, for s on
 * pl->p ranks placed by pl on t; ppn is the schedule's node shape
 * (topology schedules). Returns 0, or -1 after reporting. */
int cg_traffic(struct cg_gen *g, const struct cg_schedule *s, const struct cg_topo *t,
               const struct cg_placement *pl, int root, int ppn, size_t count, int elem,
               FILE *out);

/* What simulate predicts. */
struct cg_sim_time {
    double total_us;   /* the last rank's finish */
    long instances;    /* step instances simulated */
    long messages;     /* messages */
};

/* LogGP-style simulation of s (see simulate.c): per tag and total time,
 * printed to out. contention: links shared by max-min fairness within a step
 * instance. Returns 0, or -1 after reporting. */
int cg_simulate(struct cg_gen *g, const struct cg_schedule *s, const struct cg_topo *t,
                const struct cg_placement *pl, int root, int ppn, size_t count, int elem,
                int contention, FILE *out, struct cg_sim_time *res);

/* LogGOPSim's GOAL text for s at (p, root, count) (see goal.c). Returns 0,
 * or -1 after reporting. */
int cg_goal(struct cg_gen *g, const struct cg_schedule *s, int p, int root, int ppn, size_t count,
            int elem, double gamma_ns_B, FILE *out);

/* ---- emit_mpi.c, emit_cuda.c, emit_registry.c ---- */

/* Writes out_dir/mpi/<name>.c for s (checked and verified). Returns 0, or -1
 * when a file cannot be written. */
int cg_emit_mpi(struct cg_gen *g, const struct cg_schedule *s);

/* Whether the GPU backend has the collective (its table row names an NCCL
 * function: allreduce, allgather, reduce_scatter_block, bcast, alltoall). */
int cg_emit_cuda_supports(enum cg_coll_kind coll);

/* Whether s has a GPU twin (a .cu), decided here once for the emitters, the
 * registries and emitted/registry.json: its collective is supported, it has
 * no call steps, and a topology schedule's fallback has a twin too. */
int cg_emit_cuda_has(const struct cg_schedule *s);

/* Writes out_dir/cuda/<name>.cu for s (checked, verified, and of a collective
 * cg_emit_cuda_supports). Returns 0, or -1 when a file cannot be written. */
int cg_emit_cuda(struct cg_gen *g, const struct cg_schedule *s);

/* Writes out_dir/mpi/collgen.h, out_dir/mpi/all.c, out_dir/registry.c,
 * out_dir/tags.c and out_dir/registry.json for all schedules (sorted by
 * file), out_dir/cuda/collgen_cuda.h and out_dir/cuda/all.cu for those the
 * GPU backend has, and out_dir/collectives.json (the table of
 * collectives); removes generated files of schedules that no longer exist
 * (or no longer have a GPU one). A schedule's lines in these files depend
 * on it alone (tag ids are its base, assigned in collgen.h, plus its own
 * numbers), so adding one adds lines and changes none. */
int cg_emit_registry(struct cg_gen *g, const struct cg_schedule *const *s, int n);

#endif
