/* run_internal.h - what the files of `collgen run` share: the plan (jobs and
 * points), a small JSON writer, template expansion and job launching.
 *
 *   descriptor.c  platform + test descriptors -> validated structs
 *   run_plan.c    test x platform -> plan (jobs, points, ids); templates
 *   run_json.c    JSON writer, FNV-1a, points.jsonl reading
 *   run_exec.c    one job: fork, supervise, time out, collect its records
 *   run_launch.c  repeated launches of the jobs; the timing block of job files
 *   run_slurm.c   a campaign's batch jobs in the Slurm queue: find, cancel, wait
 *   run.c         the command: options, campaign directory, resume, report
 */
#ifndef CG_RUN_INTERNAL_H
#define CG_RUN_INTERNAL_H

#include <stdint.h>
#include <stdio.h>
#include <signal.h>
#include <sys/types.h>

#include "descriptor.h"
#include "jsonio.h"

/* ---- the plan ----------------------------------------------------------- */

/* The records' schema_version (harness/FORMATS.md; bench's BENCH_RECORD_SCHEMA). */
#define CG_RECORD_SCHEMA 3

/* The collective of a point of micro:lane_pattern, which is no collective:
 * its records' "collective" is "lane_pattern" (cg_point_coll_name). */
#define CG_PT_LANE_PATTERN ((enum cg_coll)CG_COLL_COUNT_)

/* One test point: one collective call measured with one implementation. */
/* How a native:<algorithm> point of the generated points' launch is forced
 * (a test's "forced_natives": "same_launch"): bench writes the variables
 * of `write` through MPI_T before the point, on every rank, and restores
 * them after it; the others of env are the launch's. */
struct cg_point_force {
    const char *algorithm;  /* the algorithm's name */
    const char *forced_by;  /* "VAR=value ..." as a launch of its own would say */
    struct cg_kv *env;      /* every variable that forces it (algorithm_env, expanded) */
    int nenv;               /* entries in env */
    const char **write;     /* those written at run time */
    int nwrite;             /* entries in write */
    int new_comm;           /* run the point on a communicator created after the write */
};

struct cg_point {
    const char *id;         /* deterministic, unique in the campaign */
    int seq;                /* 1-based position in the plan */
    enum cg_coll coll; /* collective (CG_PT_LANE_PATTERN: the lane pattern) */
    const char *impl;       /* native:default, native:<alg>, generated:<schedule>,
                             * generated:<schedule>(<param>=<value>,...), bound:<name>,
                             * micro:<benchmark>(k=<lanes>) */
    int64_t count;          /* MPI count argument */
    int dtype;              /* enum cg_dtype */
    int op;                 /* enum cg_redop (ignored by allgather, bcast) */
    int root;               /* root (0 for unrooted collectives) */
    int in_place;           /* MPI_IN_PLACE */
    int64_t bytes;          /* count x datatype size (the descriptor's size) */
    int recorded;           /* points.jsonl has a record for it */
    const struct cg_point_force *force; /* forced at run time, or NULL */
};

/* One launch of the benchmark program (one knob setting). */
struct cg_job {
    int index;               /* 1-based position in the plan */
    const char *library;     /* library name */
    const char *backend;     /* mpi, nccl */
    int ranks;               /* processes */
    int ranks_per_node;      /* processes per node */
    int nodes;               /* ranks / ranks_per_node */
    int vppn;                /* virtual ranks per node (CG_PPN in its env), 0: real */
    const char *algorithm;   /* forced native algorithm, or NULL (defaults) */
    int forced_coll;         /* its collective, or -1 */
    const char *forced_by;   /* "VAR=value ..." that forces it, or NULL */
    struct cg_kv *knob_env;  /* force + swept knob variables */
    int nknob_env;           /* entries in knob_env */
    struct cg_kv *settings;  /* swept knob name -> value */
    int nsettings;           /* entries in settings */
    struct cg_kv *env;       /* every variable the runner adds (knobs included) */
    int nenv;                /* entries in env */
    struct cg_point *points; /* in order */
    int npoints;             /* how many */
    int launch;              /* its launch of these points, 1-based (run_launch.c) */
    int launches;            /* how many launches the test runs */
    int base;                /* the index of the same job's launch 1 */
    int shuffled;            /* 1: each group's implementations in this launch's order
                              * (launches > 1; run_launch.c), 0: listed order */
};

struct cg_plan {
    struct cg_job *jobs; /* in order */
    int njobs;           /* how many */
    int npoints;         /* over all jobs */
    const char **notes;  /* what expansion skipped, and why */
    int nnotes;          /* entries in notes */
};

/* Expands the validated test against the platform. Returns 0, or -1 after
 * reporting (a test that expands to nothing, or duplicate ids). */
int cg_plan_build(struct cg_plan *plan, struct cg_arena *a, struct cg_diag *d,
                  const struct cg_test *t, const struct cg_platform *p,
                  const struct cg_registry *reg);

/* Repeats every job `launches` times, launch-major, each copy's point ids
 * suffixed "-L<k>" and the implementations of each size shuffled per
 * launch (nothing changes at 1 but launch, launches and base);
 * run_launch.c. */
void cg_plan_launches(struct cg_plan *plan, struct cg_arena *a, int launches);
/* The seed of a repeated launch's order of implementations (base job and
 * launch): recorded in campaign.json. */
uint64_t cg_launch_order_seed(const struct cg_job *job);
/* The id a point's launches share: its id less "-L<launch>". */
const char *cg_point_base_id(struct cg_arena *a, const struct cg_job *job, const struct cg_point *pt);

/* "allreduce", ..., or "lane_pattern" for CG_PT_LANE_PATTERN. */
const char *cg_point_coll_name(enum cg_coll coll);
/* The collective named so (cg_point_coll_name's inverse), or -1. */
int cg_point_coll_by_name(const char *name);

/* nccl-tests' message size for a point at `ranks` processes (count x
 * element size, x ranks for allgather, reduce_scatter_block, gather,
 * scatter and alltoall; 0 for barrier). */
int64_t cg_point_size_B(const struct cg_point *pt, int ranks);
/* busbw = algbw x this (harness/README.md); NAN for barrier (no bandwidth). */
double cg_point_busbw_factor(enum cg_coll coll, int ranks);

/* ---- templates ---------------------------------------------------------- */

#define CG_VARS_MAX 48

/* Placeholder values for one expansion. */
struct cg_vars {
    const char *name[CG_VARS_MAX];  /* placeholder names */
    const char *value[CG_VARS_MAX]; /* their values */
    int n;                          /* entries used */
};

void cg_vars_set(struct cg_vars *v, const char *name, const char *value);
/* Replaces every {name}; NULL when a placeholder has no value (validation
 * makes that impossible for descriptors that loaded). */
char *cg_expand(struct cg_arena *a, const char *tmpl, const struct cg_vars *v);

/* Everything about one launch that the runner and --dry-run need. */
struct cg_launch {
    int run_id;        /* job-<run_id>.json */
    char *job_file;    /* jobs/job-<run_id>.json */
    char *log_file;    /* logs/job-<run_id>.log */
    char *script_file; /* slurm: jobs/job-<run_id>.sbatch, else NULL */
    char *script_text; /* slurm: the rendered batch script */
    char **argv;       /* what is executed (NULL-terminated) */
    int argc;          /* entries in argv */
    char *program;     /* the bench program (checked before running) */
    struct cg_kv *env; /* added to the environment */
    int nenv;          /* entries in env */
    char *slurm_name;  /* slurm: the batch job's name (cg_slurm_job_name), else NULL */
    char *slurm_log;   /* slurm: the batch job's output, logs/job-<run_id>.slurm.log */
};

/* dir: the campaign directory; campaign: its id. */
int cg_launch_render(struct cg_launch *l, struct cg_arena *a, const struct cg_platform *p,
                     const struct cg_job *job, int run_id, const char *dir, const char *campaign,
                     int timeout_s);

/* ---- launching one job (run_exec.c) -------------------------------------- */

/* DIR/nrep/job-<base>-L<k>.json: what estimation launch k of a job wrote
 * (policy nrep: t1 per group, bench_nrep.c). */
const char *cg_nrep_file(struct cg_arena *a, const char *dir, int base_job, int launch);

/* The progress line (or, off a terminal, the per-job line) of a run. */
struct cg_progress {
    int tty;               /* stderr is a terminal: redraw one line in place */
    int quiet;             /* print nothing about progress */
    int job_no;            /* this launch, 1-based */
    int njobs;             /* launches in this run */
    const char *label;     /* "openmpi p=4 native:ring" */
    long long done_before; /* points recorded before this job */
    int total;             /* points in the campaign */
    double t0;             /* when this run started (cg_now_s) */
    const char *points;    /* points.jsonl, watched for new lines */
    long long offset;      /* where this job's records start */
};

struct cg_exec {
    int started;     /* the launcher was executed */
    int exited;      /* ended by exit(); code is its status */
    int code;        /* exit status (128 + n: killed by signal n) */
    int timed_out;   /* the runner's timer killed it */
    int interrupted; /* the runner was asked to stop (SIGINT, SIGTERM, SIGHUP) */
    double seconds;  /* wall time */
    long long lines; /* lines appended to points.jsonl while it ran */
};

double cg_now_s(void);

/* Whether SIGINT, SIGTERM or SIGHUP (blocked by the runner) is pending;
 * takes it. */
int cg_stop_pending(void);

/* Runs one launch: the launcher in a session of its own, supervised by a
 * process that kills the whole session when the runner dies; stdout and
 * stderr to l->log_file. `mask` is the signal mask to restore in the
 * launcher; the runner keeps SIGCHLD, SIGINT, SIGTERM and SIGHUP blocked
 * and waits for them with sigtimedwait. timeout_s 0: no limit. Returns 0,
 * or -1 when it could not start (reported to stderr). */
int cg_exec_job(const struct cg_launch *l, const sigset_t *mask, int timeout_s,
                struct cg_progress *pr, struct cg_exec *res);

/* ---- the Slurm queue (run_slurm.c) --------------------------------------- */

/* One job squeue lists. */
struct cg_slurm_job {
    const char *id;    /* job id */
    const char *name;  /* job name */
    const char *state; /* PENDING, RUNNING, COMPLETING, ... */
};

/* The name of a campaign's batch job, collgen-<campaign>-<run_id>; with
 * run_id 0 the prefix every job of the campaign has ("collgen-<campaign>-"). */
const char *cg_slurm_job_name(struct cg_arena *a, const char *campaign, int run_id);

/* The jobs squeue lists under `name`, or, for a prefix ending in '-', under
 * the prefix followed by digits. Returns 0, or -1 with *why when squeue
 * fails. */
int cg_slurm_find(struct cg_arena *a, const char *name, struct cg_slurm_job **jobs, int *n,
                  const char **why);

/* Waits until squeue lists no job `name` (as cg_slurm_find), cancelling
 * them first when `cancel`; says what it cancels, and with `announce` what
 * it waits for, on `log` (may be NULL). Gives up after max_s seconds (0:
 * never) and, when stopped is not NULL, on SIGINT, SIGTERM or SIGHUP (sets
 * *stopped). Returns 0 when none is left. */
int cg_slurm_settle(struct cg_arena *a, const char *name, int cancel, double max_s, FILE *log,
                    int announce, int *stopped);

/* ---- JSON writing ------------------------------------------------------- */

/* runtime/util/jsonio.h's writer (on cJSON); campaign.json and job files are
 * printed indented, the runner's records one line each. A key-value list
 * as an object of strings (run_json.c): */
void cg_jw_kv(struct cg_jw *w, const char *key, const struct cg_kv *kv, int n);
/* The "timing" object of campaign.json (job NULL) and of a job file: a
 * measurement launch's names its estimation launches' files (policy nrep),
 * an estimation launch its own (estimate_out). run_launch.c. */
void cg_write_timing(struct cg_jw *w, const struct cg_timing *t, const char *estimate_out,
                     const char *dir, const struct cg_job *job, struct cg_arena *a);

/* ---- points.jsonl ------------------------------------------------------- */

/* Cuts a partial last line (a writer killed mid-line). Returns the new size,
 * or -1 (errno set). Reports what it cut to `log` when not NULL. */
long long cg_points_repair(const char *path, FILE *log);

/* Calls fn(point_id, status, reason, ctx) for every complete record from
 * byte `from`; lines that are not records are reported to `log`. Returns the
 * number of records, or -1 when the file cannot be read. */
int cg_points_scan(const char *path, long long from, FILE *log,
                   void (*fn)(const char *id, const char *status, const char *reason, void *ctx),
                   void *ctx);

/* Moves every record whose status is one of `statuses` (NULL-terminated)
 * from path to the end of `retired` (--retry-errors: their points run
 * again, and points.jsonl keeps one record per point). Returns how many,
 * or -1 (errno set). */
long long cg_points_retire(const char *path, const char *retired, const char *const *statuses,
                           FILE *log);

#endif
