/* descriptor.h - platform and test descriptors (descriptors/README.md), read
 * through json.h (runtime/util/), so that every error is "file:line:col:
 * error: ...", and validated completely before anything runs.
 *
 * Memory management: everything a descriptor holds lives in the arena passed
 * to cg_platform_load / cg_test_load and is freed with it.
 */
#ifndef CG_DESCRIPTOR_H
#define CG_DESCRIPTOR_H

#include "cg_colls.h"
#include "json.h"

#define CG_DESC_SCHEMA_VERSION 1

/* ---- names shared by descriptors, jobs and records ---------------------- */

/* float16 (IEEE binary16) and bfloat16: only for a library whose backend is
 * nccl (the GPU mode); MPI has no 16-bit float (descriptor.c refuses them
 * for an mpi library). */
enum cg_dtype {
    CG_DT_INT32,
    CG_DT_INT64,
    CG_DT_FLOAT,
    CG_DT_DOUBLE,
    CG_DT_FLOAT16,
    CG_DT_BFLOAT16,
    CG_DT_COUNT_
};
enum cg_redop { CG_OP_SUM, CG_OP_PROD, CG_OP_MIN, CG_OP_MAX, CG_OP_COUNT_ };

extern const char *const cg_dtype_names[CG_DT_COUNT_]; /* "int32", ... */
extern const int cg_dtype_sizes[CG_DT_COUNT_];         /* bytes per element */
extern const char *const cg_redop_names[CG_OP_COUNT_]; /* "sum", ... */

/* A string from a descriptor with where it was written. */
struct cg_str {
    const char *s;     /* the text (unescaped) */
    struct cg_pos pos; /* its first character (the opening quote) */
};

/* NAME: VALUE, as in an "env" object. Both may hold {placeholders}. */
struct cg_kv {
    struct cg_str key;   /* variable name (template) */
    struct cg_str value; /* value (template) */
};

/* ---- platform descriptor ------------------------------------------------ */

/* One native algorithm a library lets the harness force. */
struct cg_algo_spec {
    const char *name;  /* as tests name it: native:<name> */
    const char *id;    /* what {id} expands to (Open MPI's number), or NULL */
    int only_ranks;    /* 0, or the one process count it works for */
    int pow2_ranks;    /* works only for a power-of-two process count */
    int even_ranks;    /* works only for an even process count */
    const char *note;  /* known fallbacks and limits, for people */
    struct cg_pos pos; /* its key */
};

/* A library's algorithms for one collective. */
struct cg_lib_coll {
    int present;                /* the platform lists this collective */
    struct cg_algo_spec *algos; /* in descriptor order */
    int nalgos;                 /* how many */
};

/* A knob a library exposes besides the algorithm (segment size, ...). */
struct cg_knob {
    const char *name;  /* as tests name it */
    struct cg_str env; /* variable name template ({collective}, {COLLECTIVE}) */
    const char *doc;   /* what it does */
    struct cg_pos pos; /* its key */
};

struct cg_library {
    const char *name;                      /* "openmpi", "mpich", "nccl" */
    const char *backend;                   /* "mpi" or "nccl" */
    const char *version;                   /* the version the tables were checked against */
    struct cg_pos pos;                     /* its key */
    struct cg_str *launch;                 /* argv template; NULL: not runnable here */
    int nlaunch;                           /* entries in launch */
    struct cg_str program;                 /* bench path template ({library}) */
    struct cg_str *setup;                  /* shell lines (slurm scripts only) */
    int nsetup;                            /* entries in setup */
    struct cg_kv *env;                     /* added to every job of this library */
    int nenv;                              /* entries in env */
    struct cg_kv *force_env;               /* how native:<algorithm> is applied */
    int nforce_env;                        /* entries in force_env */
    int at_run_time;                       /* "algorithm_at_run_time" given: force_env's
                                            * variables can be written through MPI_T */
    int new_comm;                          /* ... and take effect on a communicator
                                            * created after the write */
    const char **launch_keys;              /* the force_env variables that only take
                                            * effect at MPI_Init (set for the launch) */
    int nlaunch_keys;                      /* entries in launch_keys */
    struct cg_lib_coll colls[CG_COLL_COUNT_]; /* algorithms by collective */
    struct cg_knob *knobs;                 /* other knobs */
    int nknobs;                            /* entries in knobs */
};

enum cg_launcher { CG_LAUNCH_LOCAL, CG_LAUNCH_SLURM };

struct cg_platform {
    const char *file;           /* path as given */
    const char *name;           /* file name without .json */
    const char *text;           /* the descriptor as given, verbatim */
    size_t len;                 /* its length */
    const char *description;    /* one line, or NULL */
    enum cg_launcher launcher;  /* how jobs start */
    struct cg_str *submit;      /* slurm: argv template that submits {script} and waits */
    int nsubmit;                /* entries in submit */
    struct cg_str *script;      /* slurm: batch script lines (templates) */
    int nscript;                /* entries in script */
    struct cg_kv *vars;         /* slurm: account, partition, ... for the script */
    int nvars;                  /* entries in vars */
    struct cg_str *setup;       /* slurm: shell lines before every launch */
    int nsetup;                 /* entries in setup */
    struct cg_kv *env;          /* added to every job */
    int nenv;                   /* entries in env */
    const char **transport_env; /* transport knobs tests may set through "env" */
    int ntransport_env;         /* entries in transport_env */
    struct cg_library *libs;    /* in descriptor order */
    int nlibs;                  /* how many */
};

/* ---- the schedules the generator emitted (emitted/registry.json) ---------- */

/* A parameter a schedule declares ("params"): a ranged one ({"default",
 * "min", "max"}) is read at run time and may be swept by a test; a fixed
 * one (a plain integer) is a constant of the generated code. */
struct cg_sched_param {
    const char *name; /* "radix" */
    int dflt;         /* default */
    int lo, hi;       /* the range verified (lo == hi == dflt when fixed) */
    int ranged;       /* tunable at run time (cg_param_set) */
};

struct cg_sched_entry {
    const char *name;              /* "allreduce_ring" */
    enum cg_coll coll;             /* its collective */
    const char *file;              /* schedules/allreduce/ring.json */
    struct cg_sched_param *params; /* in the schedule's order */
    int nparams;                   /* entries in params */
    int gpu;                       /* it has a GPU twin (registry.json's "gpu", decided by
                                    * the generator): it runs for a library with backend nccl */
};

struct cg_registry {
    struct cg_sched_entry *s; /* in registry.json's order (by file) */
    int n;                    /* how many */
    int loaded;               /* the registry was read and is well formed (even if empty) */
    const char *path;         /* which file (emitted/registry.json) */
    const char *problem;      /* when not loaded: why ("cannot be read ...") */
};

/* Reads the registry the generator wrote (emitted/registry.json, gen/README.md),
 * silently: only a test that asks for generated code is stopped by a registry
 * that is missing or malformed (r->problem says why). Returns 0, or -1. */
int cg_registry_load(struct cg_registry *r, struct cg_arena *arena, const char *path);
/* The schedule named `name`, or NULL. */
const struct cg_sched_entry *cg_registry_find(const struct cg_registry *r, const char *name);

/* ---- test descriptor ---------------------------------------------------- */

enum cg_impl_kind {
    CG_IMPL_NATIVE_DEFAULT, /* native:default */
    CG_IMPL_NATIVE,         /* native:<algorithm> */
    CG_IMPL_NATIVE_ALL,     /* native:* */
    CG_IMPL_GENERATED,      /* generated:<schedule> */
    CG_IMPL_GENERATED_ALL,  /* generated:* */
    CG_IMPL_BOUND,          /* bound:<name>, a transport bound (bound:sendrecv_reduce) */
    CG_IMPL_BASELINE,       /* baseline:<name>, plain MPI (harness/baselines/) */
    CG_IMPL_BASELINE_ALL    /* baseline:* */
};

/* The one transport bound: allreduce at 2 ranks as two MPI_Sendrecv of n/2
 * elements around one local reduce of n/2 (harness/bench.c). */
#define CG_BOUND_SENDRECV_REDUCE "sendrecv_reduce"

struct cg_impl_req {
    enum cg_impl_kind kind; /* which form */
    const char *name;       /* algorithm, schedule, bound or baseline (NATIVE, GENERATED,
                             * BOUND, BASELINE) */
    const char *text;       /* as written */
    const char **libs;      /* only these libraries (NULL: all of the test's) */
    int nlibs;              /* entries in libs */
    struct cg_pos pos;      /* the string */
};

/* What to run for one collective (top-level lists, or the entry's own). */
struct cg_coll_req {
    enum cg_coll coll;        /* which collective */
    struct cg_pos pos;             /* its entry */
    int64_t *sizes;                /* bytes of the count argument: count x datatype size
                                    * (barrier: as given, but ignored: one point of 0 B) */
    struct cg_pos *sizes_pos;      /* where each size was written (a range: its "from") */
    int nsizes;                    /* entries in sizes */
    struct cg_impl_req *impls;     /* implementations, in order */
    int nimpls;                    /* entries in impls */
    int dtypes[CG_DT_COUNT_];      /* datatypes, in order */
    int ndtypes;                   /* entries in dtypes */
    int ops[CG_OP_COUNT_];         /* reduction ops, in order (reducing collectives) */
    int nops;                      /* entries in ops */
    int *roots;                    /* roots (rooted collectives; else {0}) */
    struct cg_pos *roots_pos;      /* where each root was written */
    int nroots;                    /* entries in roots */
    int in_place[2];               /* 0 and/or 1 */
    struct cg_pos in_place_pos[2]; /* where each was written */
    int nin_place;                 /* entries in in_place */
};

/* One knob swept by the test: library.knob takes each value in turn. */
struct cg_knob_sweep {
    const struct cg_library *lib; /* whose knob */
    const struct cg_knob *knob;   /* which */
    const char **values;          /* values, in order */
    int nvalues;                  /* how many */
};

/* One ranged parameter of a generated schedule swept by the test ("params"):
 * each combination of values is an implementation of its own,
 * generated:<schedule>(<param>=<value>,...). */
struct cg_param_sweep {
    const struct cg_sched_entry *sched; /* whose parameter */
    const struct cg_sched_param *param; /* which */
    int *values;                        /* in order */
    int nvalues;                        /* how many */
};

/* The harness's micro-benchmarks ("micro"; harness/README.md). */
enum cg_micro_kind {
    CG_MICRO_LANE_PATTERN,     /* k ranks per node each send c/k to the next node */
    CG_MICRO_MULTI_COLLECTIVE, /* k lane communicators run one native collective at once */
    CG_MICRO_COUNT_
};

extern const char *const cg_micro_names[CG_MICRO_COUNT_]; /* "lane_pattern", ... */

struct cg_micro_req {
    int present;          /* the test asks for it */
    int *k;               /* lane counts, in order; NULL: every k from 1 to each job's
                           * ranks per node */
    int nk;               /* entries in k */
    struct cg_pos pos;    /* its key */
    int64_t *sizes;       /* lane_pattern: bytes per node, count x datatype size */
    int nsizes;           /* entries in sizes */
    int dtypes[CG_DT_COUNT_]; /* lane_pattern: datatypes, in order */
    int ndtypes;          /* entries in dtypes */
    int colls[CG_COLL_COUNT_]; /* multi_collective: 1 for each collective it runs */
};

/* PGMPITuneLib's NREP estimation (timing.policy "nrep", harness/bench_nrep.c). */
struct cg_nrep {
    double t1_rse; /* t1: 1-element repetitions until their RSE is below this */
    int b1;        /* per size: a batch of b1 repetitions, */
    int b2;        /*   b2 more when their RSE is above rse_b */
    double rse_b;
    int k;         /* nrep = max(ceil(t1 / t_min), k) */
};

struct cg_timing {
    const char *sync;  /* "barrier", "dissemination" or "window" */
    int warmup;        /* calls before timing */
    int min_reps;      /* at least this many repetitions */
    int max_reps;      /* at most this many */
    double rse_target; /* stop once the median's relative standard error is below */
    double budget_s;   /* or once this much time went into the point */
    double window_us;  /* window: the first window of a point */
    const char *policy; /* "rse" or "nrep" */
    struct cg_nrep nrep; /* policy nrep */
};

struct cg_test {
    const char *file;               /* path as given */
    const char *name;               /* file name without .json */
    const char *text;               /* the descriptor as given, verbatim */
    size_t len;                     /* its length */
    const char *description;        /* or NULL */
    struct cg_kv *labels;           /* free-form labels */
    int nlabels;                    /* entries in labels */
    const struct cg_library **libs; /* libraries to use, in order */
    int nlibs;                      /* entries in libs */
    struct cg_coll_req *colls;      /* collectives, in order */
    int ncolls;                     /* entries in colls */
    int *ranks;                     /* process counts, in order */
    int nranks;                     /* entries in ranks */
    int ranks_per_node;             /* 0: every rank on one node */
    struct cg_timing timing;        /* repetition policy */
    int launches;                   /* each job runs this many times, in launches of
                                     * their own (PGMPITuneLib's nmpiruns) */
    int forced_same_launch;         /* "forced_natives": "same_launch": native:<algorithm>
                                     * points run in the launch of the generated ones,
                                     * forced through MPI_T, where the library allows */
    const char *check;              /* "always" or "never" */
    const char *verbosity;          /* "minimal", "full" or "trace" */
    int timeout_s;                  /* per job */
    struct cg_kv *env;              /* added to every job (transport knobs) */
    int nenv;                       /* entries in env */
    struct cg_knob_sweep *sweeps;   /* knobs swept, in order */
    int nsweeps;                    /* entries in sweeps */
    int *vppn;                      /* virtual_ranks_per_node: node shapes run under
                                     * CG_PPN=<k>, 0 for the real topology; {0} when
                                     * not given */
    int nvppn;                      /* entries in vppn (at least 1) */
    struct cg_param_sweep *psweeps; /* schedule parameters swept ("params"), in order */
    int npsweeps;                   /* entries in psweeps */
    struct cg_micro_req micro[CG_MICRO_COUNT_]; /* micro-benchmarks ("micro") */
};

/* Loading: 0 when valid; otherwise every error found was reported to d
 * ("file:line:col: error: ...") and -1 is returned. The descriptor's name
 * (file name without .json) names the campaign. */
int cg_platform_load(struct cg_platform *p, struct cg_arena *arena, struct cg_diag *d,
                     const char *file, const char *text, size_t len);
int cg_test_load(struct cg_test *t, struct cg_arena *arena, struct cg_diag *d, const char *file,
                 const char *text, size_t len, const struct cg_platform *p,
                 const struct cg_registry *reg);

const struct cg_library *cg_platform_library(const struct cg_platform *p, const char *name);
const struct cg_algo_spec *cg_library_algo(const struct cg_library *l, enum cg_coll c,
                                           const char *name);
/* NULL when the algorithm works for `ranks` processes, else why not. */
const char *cg_algo_ranks_problem(const struct cg_algo_spec *a, int ranks, char *buf, size_t cap);

int cg_coll_by_name(const char *name); /* enum cg_coll, or -1 */

/* The collectives a test may measure: the first CG_HARNESS_COLLS of
 * enum cg_coll, the ones the benchmark program (harness/bench*.c)
 * calls, checks and times: all eleven the generator knows (allreduce,
 * allgather, reduce_scatter_block, bcast, reduce, gather, scatter, alltoall,
 * scan, exscan, barrier). A collective added to the generator later is an
 * error in a test ("the harness does not measure X yet") until bench runs
 * it. */
#define CG_HARNESS_COLLS 11
_Static_assert(CG_COLL_ALLREDUCE == 0 && CG_COLL_ALLGATHER == 1 && CG_COLL_REDUCE_SCATTER_BLOCK == 2 &&
                   CG_COLL_BCAST == 3 && CG_COLL_REDUCE == 4 && CG_COLL_GATHER == 5 &&
                   CG_COLL_SCATTER == 6 && CG_COLL_ALLTOALL == 7 && CG_COLL_SCAN == 8 &&
                   CG_COLL_EXSCAN == 9 && CG_COLL_BARRIER == 10 && CG_COLL_COUNT_ >= CG_HARNESS_COLLS,
               "the harness's collectives come first in enum cg_coll");

#endif
