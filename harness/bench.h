/* bench.h - the benchmark program's parts (harness/bench*.c), which together
 * implement the bench side of harness/FORMATS.md: read a job file, check and
 * time each point, append one record per point.
 *
 *   bench.c        main, the loop over points, records
 *   bench_job.c    the job file
 *   bench_comm.c   the harness's own collectives, over point-to-point
 *   bench_json.c   appending a record line, directories (JSON: util/jsonio.h)
 *   bench_data.c   inputs, the exact expected results, comparison
 *   bench_time.c   synchronisation, the timed loop and its statistics
 *   bench_clock.c  the global clock (HCA), the latency floor, the window wait
 *   bench_nrep.c   PGMPITuneLib's NREP estimation (timing.policy "nrep")
 *   bench_mpit.c   what the library says it runs (MPI_T), known fallbacks
 *   bench_meta.c   run-<n>.json
 *   bench_micro.c  the micro-benchmarks (micro:lane_pattern, micro:multi_collective)
 *   bench_trace.c  timelines (verbosity "trace"): tag regions per rank, a trace file
 *
 * Every part is called by every rank unless its comment says "rank 0".
 */
#ifndef CG_BENCH_H
#define CG_BENCH_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include "cg_algo.h"
#include "util/jsonio.h" /* the JSON writer and getters (cg_jw_*, cg_jget_*) */
#include "util/util.h" /* cg_slurp, cg_write_atomic, cg_fnv1a64_file */

#include <cjson/cJSON.h>

#define BENCH_REASON_LEN 512 /* bytes of a status reason, NUL included */

/* ---- the job file ------------------------------------------------------- */

/* BENCH_FLOAT16 (IEEE binary16) and BENCH_BFLOAT16 exist for the GPU mode
 * (build/cuda/bench_cuda); bench records their points as skipped, since MPI
 * has no standard 16-bit floating-point type (bench_mpi_dtype). */
enum bench_dtype { BENCH_INT32, BENCH_INT64, BENCH_FLOAT, BENCH_DOUBLE, BENCH_FLOAT16,
                   BENCH_BFLOAT16 };
enum bench_op { BENCH_SUM, BENCH_PROD, BENCH_MIN, BENCH_MAX };
/* How repetitions are started together (harness/README.md, "Timing"):
 * MPI_Barrier, the harness's dissemination barrier, or ReproMPI's window:
 * rank 0 announces a start instant in the global clock (bench_clock.c). */
enum bench_sync { BENCH_SYNC_BARRIER, BENCH_SYNC_DISSEMINATION, BENCH_SYNC_WINDOW };
/* When the repetitions of a point stop: the RSE rule (bench_decide), or
 * PGMPITuneLib's NREP estimation (bench_nrep.c). */
enum bench_policy { BENCH_POLICY_RSE, BENCH_POLICY_NREP };
/* native:<algorithm>, generated:<schedule>, bound:sendrecv_reduce (the
 * transport bound of allreduce at p = 2, the harness's own code: bench.c),
 * or micro:<benchmark>(k=<lanes>) (bench_micro.c). */
enum bench_kind { BENCH_NATIVE, BENCH_GENERATED, BENCH_BOUND, BENCH_MICRO };
/* The micro-benchmarks (harness/README.md, "Micro-benchmarks"). */
enum bench_micro { BENCH_MICRO_LANE_PATTERN, BENCH_MICRO_MULTI_COLLECTIVE };

/* The collective of a micro:lane_pattern point, which is none: its job
 * file and records say "lane_pattern" (bench_coll_name). */
#define BENCH_COLL_LANE_PATTERN ((enum cg_coll)CG_COLL_COUNT_)
/* cg_coll_name, and "lane_pattern" for BENCH_COLL_LANE_PATTERN. */
const char *bench_coll_name(enum cg_coll coll);

#define BENCH_MAX_PARAMS 8 /* name=value pairs in one implementation's name */

/* One name=value of an implementation's name: a schedule parameter
 * (generated:bcast_knomial(radix=4)) or a micro-benchmark's lane count
 * (micro:lane_pattern(k=2)). */
struct bench_param {
    char name[48];        /* "radix", "k" */
    int value;            /* its value */
};

/* PGMPITuneLib's NREP estimation (seed 002; bench_nrep.c). */
struct bench_nrep_params {
    double t1_rse;        /* t1: 1-element repetitions until their RSE is below this */
    long b1;              /* per size: a first batch of b1 repetitions, */
    long b2;              /*   and b2 more when the RSE of the first is above rse_b */
    double rse_b;
    long k;               /* nrep = max(ceil(t1 / t_min), k) */
    const cJSON *t1_from; /* the estimation launches' files (an array of paths), or NULL */
    const char *estimate_out; /* an estimation launch: where t1 per group goes; NULL:
                           * a measurement launch */
};

/* The global clock's sync (bench_clock.c). */
struct bench_clock_params {
    long fitpoints;       /* offset measurements per fit */
    long exchanges;       /* ping-pongs per measurement (the fastest one counts) */
    double spacing_us;    /* pause between measurements (a longer fit sees drift) */
    double resync_s;      /* sync again before a point once this much has passed */
};

struct bench_timing {
    enum bench_sync sync; /* how repetitions are started together */
    long warmup;          /* untimed calls before the first repetition */
    long min_reps;        /* repetitions always run (hard floor) */
    long max_reps;        /* repetitions never exceeded */
    double rse_target;    /* stop when the RSE of the median is below this */
    double budget_s;      /* stop when the timed loop has run this long */
    double window_us;     /* window: the first window of a point (it doubles after a
                           * late rank, and halves back after 16 valid repetitions) */
    enum bench_policy policy; /* rse or nrep */
    struct bench_nrep_params nrep; /* policy nrep */
    struct bench_clock_params clock; /* the clock sync */
};

struct bench_point {
    const char *id;       /* point id, also the raw file's name */
    long seq;             /* sequence number in the campaign */
    enum cg_coll coll;    /* which collective */
    const char *impl;     /* "native:default", "native:ring", "generated:allreduce_ring",
                           * "bound:sendrecv_reduce" */
    enum bench_kind kind; /* native, generated, bound or micro */
    int baseline;         /* BENCH_GENERATED: a baseline:<name> (bench_baseline.c), run as a
                           * generated point is; its record's kind is "baseline" */
    const char *name;     /* "default", the algorithm, the schedule or micro-benchmark
                           * with its parameters ("bcast_knomial(radix=4)") */
    char base[64];        /* the name without "(...)": the schedule, or the benchmark */
    struct bench_param params[BENCH_MAX_PARAMS]; /* the name's "(...)", in order */
    int nparams;          /* entries in params */
    enum bench_micro micro; /* BENCH_MICRO: which benchmark */
    int lanes;            /* BENCH_MICRO: k, the lanes that take part */
    uint64_t salt;        /* mixed into the inputs (bench_value); 0 but for the lanes
                           * of micro:multi_collective, whose data differ by lane */
    size_t count;         /* MPI's count for the collective (per rank for allgather,
                           * gather, scatter, alltoall, reduce_scatter_block; 0 for
                           * barrier) */
    enum bench_dtype dtype; /* element type */
    enum bench_op op;     /* reduction op (the reducing collectives: allreduce,
                           * reduce_scatter_block, reduce, scan, exscan) */
    int op_given;         /* the job named an op (records write null otherwise) */
    int root;             /* root of bcast, reduce, gather and scatter */
    int in_place;         /* 1: MPI_IN_PLACE (at the root only for reduce, gather,
                           * scatter) */
    /* A native algorithm forced in this launch (the point's "knobs",
     * FORMATS.md): NULL when the job's knobs apply. */
    cJSON *knobs;                 /* the job's knobs, for this point alone */
    const char *knobs_algorithm;  /* knobs.algorithm */
    const char *knobs_forced_by;  /* knobs.forced_by */
    const cJSON *mpit;            /* knobs.at_run_time.mpi_t: env names written through MPI_T */
    int new_comm;                 /* knobs.at_run_time.new_communicator */
};

struct bench_job {
    cJSON *doc;           /* the parsed file; every string below points into it */
    const char *path;     /* the job file's path */
    const char *campaign; /* campaign id */
    long run_id;          /* n of run-<n>.json */
    const char *library;  /* "openmpi" or "mpich" */
    int ranks;            /* MPI_Comm_size the runner launched */
    int ranks_per_node;   /* as requested (the real placement) */
    int virtual_ranks_per_node; /* CG_PPN of the job's virtual node shape, 0: real */
    cJSON *knobs;         /* the knobs object (NULL when absent) */
    const char *knobs_algorithm; /* knobs.algorithm, NULL when none */
    const char *knobs_forced_by; /* knobs.forced_by, NULL when none */
    struct bench_timing timing; /* repetition policy */
    int launch;           /* this job's launch of its points, 1-based (1 when absent) */
    int launches;         /* how many launches the test runs (1 when absent) */
    int verbosity_full;   /* 1: "full" or "trace", 0: "minimal" */
    int verbosity_trace;  /* 1: "trace" (bench_trace.c) */
    struct bench_point *points; /* in the file's order */
    int npoints;          /* entries in points */
    const char *out_points;   /* points.jsonl */
    const char *out_raw_dir;  /* directory of raw/<point_id>.txt */
    const char *out_run_meta; /* run-<n>.json */
    const char *out_trace_dir; /* directory of trace/<point_id>.json (verbosity trace) */
};

/* Parses and validates `path`. Returns 0, or -1 with a one-line message
 * ("JOBFILE: ...") in msg. */
int bench_job_load(const char *path, struct bench_job *job, char *msg, size_t msglen);
void bench_job_free(struct bench_job *job);
/* Whether the launch gave the job's number of ranks (or CG_EXPECT_NP's);
 * rank 0 says why not on stderr, as `program`. */
int bench_size_ok(const struct bench_job *job, int rank, int p, const char *program);

/* ---- shared state of one run -------------------------------------------- */

struct cg_topo; /* runtime/cg.h */

/* The global clock (bench_clock.c): every rank's CLOCK_MONOTONIC mapped
 * onto rank 0's by a linear model, global = x + a + b x with x = local -
 * epoch, fitted by ReproMPI's HCA scheme (Hunold and Carpen-Amarie). */
struct bench_clock {
    int synced;           /* a model is in force (always at p = 1) */
    int64_t epoch;        /* rank 0's clock when the last sync began (every rank) */
    double a, b;          /* this rank's model (rank 0: 0, 0) */
    int nsyncs;           /* syncs so far in this job */
    /* rank 0, for the run metadata and the records: */
    double synced_at;     /* MPI_Wtime when the last sync ended */
    double err_ns;        /* the check after the fit: max over ranks of |offset measured
                           * directly against rank 0 - offset the model gives| */
    double rtt_ns;        /*   the largest round trip of those direct measurements */
    double drifted_ns;    /* the same check of the previous model, just before this
                           * sync replaced it (NaN at the first sync) */
    double fit_rms_ns;    /* the largest rms residual of a fit */
    double seconds;       /* how long the last sync took */
    int drift_ranks;      /* ranks whose fit kept a slope (significant drift) */
    int fitted_ranks;     /* ranks not on rank 0's host: fitted and checked (the others
                           * read rank 0's clock: the identity, exactly) */
    double *rank_a, *rank_b; /* every rank's model (p entries), for the metadata */
    /* The test hook CG_BENCH_CLOCK_SKEW (every rank; bench_clock_init): */
    int skewed;           /* the hook is set (0 also where bench_clock_init never ran) */
    int skew_rank;        /* the rank whose clock is skewed */
    double skew_offset_ns; /*   by this offset */
    double skew_drift;    /*   and this drift */
    int64_t skew_raw0;    /*   from this rank's raw clock at init */
};

/* The one-way latency between ranks (bench_clock.c; rank 0). */
struct bench_latency {
    int measured;         /* 1 once measured (p > 1) */
    double floor_ns;      /* min over the pairs (0, r) of the fastest one-way time */
    double *median_ns;    /* per r = 1..p-1 (index r): median of RTT / 2 */
    double *min_ns;       /* and the fastest */
};

struct bench_ctx {
    const struct bench_job *job; /* the job */
    MPI_Comm comm;        /* dup of MPI_COMM_WORLD, MPI_ERRORS_RETURN: the collectives */
    MPI_Comm sync_comm;   /* another dup: barriers and the harness's own traffic */
    int rank;             /* rank in comm */
    int p;                /* size of comm */
    int ranks_per_node;   /* largest node-local size seen */
    int is_openmpi;       /* from MPI_Get_library_version */
    int is_mpich;         /* from MPI_Get_library_version */
    int mpit_ok;          /* MPI_T initialised */
    const char *corrupt;  /* CG_BENCH_CORRUPT, NULL when unset */
    int late_rank;        /* CG_BENCH_LATE=RANK:EVERY: this rank reaches every EVERY-th
                           * window late on purpose (tests); -1 when unset */
    int late_every;
    const struct cg_topo *topo; /* comm's node and lane structure (cg_topo_of), NULL
                           * when it could not be found (topo_error says why) */
    char topo_error[BENCH_REASON_LEN]; /* why topo is NULL */
    struct bench_clock clock; /* the global clock (bench_clock.c) */
    struct bench_latency lat; /* the latency floor (rank 0) */
    int oversubscribed;   /* every rank: 1 some host has more ranks than cores it may run
                           * on, 0 none, -1 unknown (bench_meta.c) */
    int host_ranks;       /* rank 0: the most crowded host's ranks, */
    int host_cores;       /*   and the cores they may run on */
    char host_name[64];   /*   and its name */
};

/* ---- the harness's own collectives (bench_comm.c) ------------------------ */

enum hx_type { HX_U64, HX_INT, HX_DOUBLE };
enum hx_op { HX_SUM, HX_MIN, HX_MAX };

/* Point-to-point on ctx->sync_comm, whatever the job's knobs force (see
 * bench_comm.c). Each returns an MPI error code. */
int hx_allreduce(const struct bench_ctx *ctx, void *buf, int n, enum hx_type t, enum hx_op op);
/* The same to rank 0 only (buf is the result there; elsewhere it is left
 * partly combined). */
int hx_reduce(const struct bench_ctx *ctx, void *buf, int n, enum hx_type t, enum hx_op op);
int hx_bcast(const struct bench_ctx *ctx, void *buf, int bytes, int root);
/* Gathers `bytes` from every rank to rank 0's out (p * bytes; ignored
 * elsewhere). */
int hx_gather(const struct bench_ctx *ctx, const void *mine, int bytes, void *out);

/* ---- JSON ---------------------------------------------------------------- */

/* Records and run metadata are written with runtime/util/jsonio.h's writer
 * (cg_jw_*, on cJSON, every string sanitised to valid UTF-8); cJSON trees
 * built here take their strings from cg_json_string. */

/* Whole files (cg_slurp), write-then-rename (cg_write_atomic) and FNV-1a 64
 * (cg_fnv1a64_file) are runtime/util/util.h's, shared with collgen. */
/* Appends data (one whole line) to path with O_APPEND and fsyncs. 0 or -1. */
int bench_append_line(const char *path, const char *data, size_t len);
/* mkdir -p. 0 or -1. */
int bench_mkdirs(const char *path);
/* snprintf for messages and names, which may be cut short on purpose; a
 * function of its own so that -Wformat-truncation does not ask for bounds
 * that text from the library or the file system cannot have. */
void bench_fmt(char *dst, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* ---- the record of a point (bench_record.c, rank 0) --------------------- */

/* The records' schema_version (FORMATS.md): 2 added the timing figure,
 * span, window and clock fields, "validity" and "launch". */
#define BENCH_RECORD_SCHEMA 3

/* What a bench program measured at one point, and how it describes it; the
 * rest of the record (statistics, bandwidth, tag medians, the raw file) is
 * computed from this. Pointers are borrowed. */
/* The roofline of a point (bench_roof.c): what every rank must at least
 * receive, reduce and copy, and the measured time of each. */
struct bench_roof {
    int measured;            /* 0: none (barrier, or the measurement failed): null */
    double recv_B, reduce_B, copy_B;
    double p2p_ns, reduce_ns, copy_ns; /* the fastest run of each */
    double limit_ns;         /* their sum */
    double overlap_limit_ns; /* max(p2p, reduce + copy) */
};

/* Measures pt's roofline on ctx (collective: every rank calls it), or,
 * below 1 MiB, takes it from the launch's cache. An MPI error code
 * (roof->measured 0). */
int bench_roof_measure(const struct bench_ctx *ctx, const struct bench_point *pt,
                       struct bench_roof *roof);

struct bench_record {
    const struct bench_point *pt;
    const struct bench_roof *roof; /* schema 3: "roofline"; NULL: null */
    int p;                     /* ranks of the collective (size_B, busbw) */
    const char *status;        /* "ok" | "failed_check" | "error" | "timeout" | "skipped" */
    const char *reason;        /* written for anything but ok */
    const char *collective;    /* "allreduce", ... */
    const char *backend;       /* "mpi" | "cuda" */
    const char *kind;          /* "native" | "generated" | "bound" | "micro" */
    int has_transport;         /* write "transport" (the GPU mode's records) */
    const char *transport;     /*   its value; NULL: null */
    const char *schedule_file; /* generated points; NULL otherwise */
    const cJSON *requested;    /* the requested block */
    const cJSON *effective;    /* the effective block; NULL when nothing ran */
    long n;                    /* timed repetitions */
    const char *stop;          /* why they stopped; NULL: not timed */
    const uint64_t *times;     /* n: the slowest rank's time per repetition, ns */
    const uint64_t *all_times; /* n x all_p, every rank's (verbosity full), or NULL */
    int all_p;                 /*   its columns: the job's ranks */
    const char *timer;         /* timing.timer, or NULL for none */
    int checked;               /* the check ran to a verdict */
    const char *reference;     /* what the result was compared with */
    uint64_t wrong;            /* wrong elements, all ranks */
    double max_error;          /* largest absolute error */
    int has_tolerance;         /* write elements_inexact and tolerance */
    uint64_t inexact;
    double tolerance;
    int tag_first, ntags;      /* the schedule's tag ids (cg_tag_infos); 0 tags: null */
    const struct cg_tag_info *tag_infos; /* names tag_first + k, or NULL: cg_tag_infos */
    long tag_n;                /* rows of tag_times: n when the timed repetitions carry
                                * the tags (bench), else repetitions of their own */
    const uint64_t *tag_times; /* tag_n x ntags, the slowest rank's per repetition, ns */
    int share_of_call_tag;     /* 0: share = tag median / the call's median time; 1:
                                * of the call tag's (tag 0) median, in the same
                                * repetitions (bench_cuda: tags timed apart) */
    /* Schema 2 (FORMATS.md, "Timing figures"); zero is what bench_cuda,
     * which knows none of it, leaves: */
    int window;                /* 1: times are the window figure (latest end - the
                                * announced start), 0: the slowest rank's own time */
    const uint64_t *span_times;/* n: the global span (latest end - earliest start) per
                                * repetition, or NULL (window, or no clock) */
    long invalid;              /* window: repetitions dropped, a rank was late */
    long late_starts;          /* window: kept although a rank left the wait more than
                                * 2 us after the start (waiting for a core) */
    double window_ns;          /* window: the last window's length */
    int clocked;               /* the clock fields below are known */
    double clock_error_ns;     /*   the model's check error (bench_clock err_ns) */
    double clock_age_s;        /*   seconds since that sync, when the point ended */
    int validity_known;        /* the validity fields below were measured */
    double latency_floor_ns;   /*   the job's one-way latency floor (NaN at p = 1) */
    int oversubscribed;        /*   1, 0, or -1 unknown */
    int host_ranks, host_cores;/*   the most crowded host's */
    int nrep;                  /* policy nrep: the fields below are known */
    double nrep_t1_s;          /*   t1 (the longest of the estimation launches) */
    int nrep_t1_launches;      /*   how many launches it is the longest of */
    double nrep_tmin_ns;       /*   the fastest of the batches */
    long nrep_batch;           /*   repetitions in the batches (b1 or b1 + b2) */
    long nrep_target;          /*   nrep */
    int nrep_capped;           /*   nrep was above max_reps */
};

/* Writes raw/<id>.txt when timed, then appends the record line to
 * points.jsonl in one write. 0, or -1 with msg. */
int bench_record_write(const struct bench_job *job, const struct bench_record *r, char *msg,
                       size_t msglen);
/* nccl-tests' message size: count x element size, times p for the
 * collectives whose count is per rank (allgather, reduce_scatter_block,
 * gather, scatter, alltoall); 0 for barrier. */
size_t bench_size_B(int p, const struct bench_point *pt);
/* busbw = algbw x this (harness/README.md, "Bus bandwidth"); NaN for
 * barrier, which moves no data (written as null). */
double bench_busbw_factor(int p, enum cg_coll coll);
const char *bench_tag_kind_name(enum cg_tag_kind k);
/* Adds the requested (effective 0: the job's) or effective (ctx's: the
 * communicator and its topology) "ranks", "ranks_per_node", "node_shape",
 * "regular" (and effective "irregular_why") to a record's block. */
void bench_record_shape(cJSON *o, const struct bench_ctx *ctx, int effective);
/* Adds a block's first keys: "algorithm" and "forced_by" (given; "" and
 * NULL are null), then the point's "count", "datatype", "op", "root",
 * "in_place". */
void bench_record_point(cJSON *o, const struct bench_point *pt, const char *algorithm,
                        const char *forced_by);
/* The raw file as the record names it: relative to the directory of
 * points.jsonl when raw_dir is under it ("raw/<id>.txt"). */
void bench_raw_record_path(const struct bench_job *job, const char *id, char *out, size_t len);

/* ---- ranged parameters of generated points (bench_params.c) ------------ */

/* What the code of a generated point reads for each of its schedule's
 * ranged parameters. */
struct bench_params_eff {
    struct bench_param eff[BENCH_MAX_PARAMS]; /* name and value, the schedule's order */
    int ok[BENCH_MAX_PARAMS]; /* the value is valid (else written as null) */
    int n;                    /* entries */
};

/* Sets the schedule's parameters for the calls to come: the point's value
 * ("(radix=4)" in its name) or, for one it does not name, no setting (the
 * environment's, else the default), and fills e with what the code reads.
 * A name the schedule lacks or a value outside its verified range: -1 with
 * reason, nothing called. params/nparams: the registry entry's. */
int bench_params_apply(const char *schedule, const struct cg_param_info *params, int nparams,
                       const struct bench_point *pt, struct bench_params_eff *e, char *reason,
                       size_t len);
/* Removes the settings bench_params_apply made. */
void bench_params_clear(const char *schedule, const struct cg_param_info *params, int nparams);
/* The record's "params": requested (e NULL: the point's values, then the
 * others' defaults) or effective (e); null for non-generated points, and
 * for an unknown schedule (known 0) whose name gives none. */
cJSON *bench_params_json(const struct bench_point *pt, int known,
                         const struct cg_param_info *params, int nparams,
                         const struct bench_params_eff *e);

/* How bench and bench_cuda start (bench_job.c): MPI_Init, the command line
 * PROG [--help] JOBFILE (rank 0 says what is wrong), the job file and its
 * number of ranks. -1 to go on (MPI initialised, the job loaded), else the
 * exit status, after MPI_Finalize: 0 after --help, 2 a usage error or a job
 * file that does not parse, 3 MPI_Init failed or the wrong number of
 * ranks. */
int bench_start(int *argc, char ***argv, const char *prog, const char *usage,
                struct bench_job *job, int *rank, int *size);

/* ---- data (bench_data.c) ------------------------------------------------ */

/* MPI_DATATYPE_NULL for float16 and bfloat16, which MPI does not have: a
 * point of theirs never reaches MPI (bench.c skips it). */
MPI_Datatype bench_mpi_dtype(enum bench_dtype t);
MPI_Op bench_mpi_op(enum bench_op op);
size_t bench_dtype_size(enum bench_dtype t);
const char *bench_dtype_name(enum bench_dtype t);
const char *bench_op_name(enum bench_op op);
int bench_coll_reduces(enum cg_coll coll);

/* Element i of `rank`'s input, written at dst. */
void bench_value(const struct bench_point *pt, int p, int rank, size_t i, void *dst);
/* Elements of a point's buffers on one rank, from the table of collectives
 * (runtime/cg_colls.h): the input, the output, and the part of the output
 * that holds a result there. */
struct bench_elems {
    size_t in, out, res;
};
/* 0, or -1 when they overflow size_t (in bytes, with room to double). */
int bench_elems(const struct bench_point *pt, int p, int rank, struct bench_elems *e);
/* Where in out an in-place input goes, in elements: the rank's own block
 * where out has p blocks of which the input is one (allgather, gather),
 * else 0. */
size_t bench_in_place_off(const struct bench_point *pt, int rank);
/* The exact result this rank must hold: out_elems elements at dst. */
void bench_expected(const struct bench_point *pt, int p, int rank, void *dst, size_t out_elems);
/* One element as a double (float16 and bfloat16 decoded from their bits). */
double bench_as_double(enum bench_dtype t, const void *src);
/* Compares n elements; counts the wrong ones and the largest absolute error
 * (+inf when a wrong element is not finite). */
void bench_compare(enum bench_dtype t, const void *got, const void *want, size_t n,
                   uint64_t *wrong, double *max_error);
/* A point's buffer: its own page-aligned anonymous mapping (zero-filled),
 * NULL when out of memory; unmapped with the same byte count. */
void *bench_buf_map(size_t bytes);
void bench_buf_unmap(void *p, size_t bytes);

/* ---- timing (bench_time.c) ---------------------------------------------- */

/* Synchronises the ranks of ctx->sync_comm as the job asks (barrier or
 * dissemination; window sync is bench.c's loop, and here a dissemination
 * barrier). MPI code. */
int bench_sync(const struct bench_ctx *ctx);
/* "barrier", "dissemination" or "window". */
const char *bench_sync_name(enum bench_sync s);

struct bench_stats {
    long n;               /* repetitions */
    double min_ns, median_ns, mean_ns, stdev_ns; /* of the slowest rank's times */
    double p5_ns, p25_ns, p75_ns, p95_ns;        /* nearest rank */
    double ci_lo_ns, ci_hi_ns;                   /* 95% CI of the median */
    double rse;           /* 1.2533 * stdev / sqrt(n) / median */
};

/* Statistics of n times (sorted into `sorted`, which has room for n). */
void bench_stats_compute(const uint64_t *times, long n, uint64_t *sorted, struct bench_stats *s);
double bench_median_u64(const uint64_t *v, long n, uint64_t *scratch);

/* The stopping rule's view of the repetitions so far, updated in O(n) per
 * repetition rather than sorting them all again. */
struct bench_online {
    uint64_t *sorted;     /* the times so far, ascending (room for max_reps) */
    long n;               /* times added */
    double mean;          /* running mean (Welford) */
    double m2;            /* running sum of squared deviations (Welford) */
};

void bench_online_add(struct bench_online *o, uint64_t t);
/* 1.2533 * stdev / sqrt(n) / median, NaN when undefined. */
double bench_online_rse(const struct bench_online *o);

/* The stopping rule (rank 0, after each repetition): go on, or stop because
 * the RSE of the median is under the target (after min_reps), the budget is
 * spent (after min_reps), or max_reps is reached. */
enum bench_decision { BENCH_GO_ON = 0, BENCH_STOP_RSE, BENCH_STOP_BUDGET, BENCH_STOP_MAX,
                      BENCH_STOP_NREP };
enum bench_decision bench_decide(const struct bench_timing *tm, const struct bench_online *o,
                                 double elapsed);
/* The record's timing.stop for a decision that stopped. */
const char *bench_stop_name(enum bench_decision d);

/* ---- the global clock and the latency floor (bench_clock.c) ------------ */

/* Reads the test hook CG_BENCH_CLOCK_SKEW=RANK:OFFSET_NS:DRIFT (this
 * rank's clock then reads raw + OFFSET_NS + DRIFT (raw - raw0)). 0, or -1
 * with msg. */
int bench_clock_init(struct bench_ctx *ctx, char *msg, size_t msglen);
/* This rank's clock in ns (CLOCK_MONOTONIC, and the test hook's skew). */
int64_t bench_clock_now(void);
/* The same for a CLOCK_MONOTONIC reading taken earlier (cg_tag_now's). */
int64_t bench_clock_of_raw(int64_t raw);
/* Collective: fits every rank's model against rank 0 (HCA: log2 p rounds
 * of pairs, ping-pongs, a least-squares line, composed down the tree),
 * then checks it against a direct measurement; at a resync, checks the old
 * model first (drifted_ns). An MPI error code. */
int bench_clock_sync(struct bench_ctx *ctx);
/* Local time -> global ns since the epoch (rank 0's clock), and back. */
double bench_clock_global(const struct bench_ctx *ctx, int64_t local);
int64_t bench_clock_local_at(const struct bench_ctx *ctx, double global);
/* Waits until this rank's clock reaches local_start (yielding the core
 * until shortly before). 0 on time; 1 when it was already past it (the
 * announcement came late: the window is too short; the repetition is
 * invalid); 2 when it left the wait more than 2 us after the start (its
 * core was taken: counted as a late start). */
int bench_clock_wait(const struct bench_ctx *ctx, int64_t local_start);
/* Collective: the one-way latency floor (ping-pongs of rank 0 with every
 * other rank). An MPI error code. */
int bench_latency_measure(struct bench_ctx *ctx);
void bench_clock_free(struct bench_ctx *ctx);

/* ---- NREP estimation (bench_nrep.c) -------------------------------------- */

/* The group of points a t1 is estimated for: the same collective,
 * implementation, datatype, op, root and in-place ("allreduce native:ring
 * double sum r0 ip0"). */
void bench_nrep_group(const struct bench_point *pt, char *out, size_t len);
/* Rank 0: the longest t1 of the group over the estimation launches' files
 * (timing.nrep.t1_from); NaN when none has it. *nfiles: how many had it. */
double bench_nrep_t1_from(const struct bench_job *job, const char *group, int *nfiles);
/* Rank 0: the per-point state of the NREP rule. */
struct bench_nrep_state {
    double t1_s;          /* the t1 in force */
    int phase;            /* 0: the batches, 1: the nrep repetitions */
    double tmin_ns;       /* the fastest repetition of the batches */
    long batch;           /* repetitions of the batches */
    long target;          /* nrep */
    int capped;           /* nrep was cut to max_reps */
};
/* After each repetition: go on, or stop (BENCH_STOP_NREP); *restart is set
 * when the batches end and the counted repetitions begin afresh. */
enum bench_decision bench_nrep_decide(struct bench_nrep_state *s, const struct bench_timing *tm,
                                      const struct bench_online *o, int *restart);
/* The t1 loop: stop once the RSE is below t1_rse (after min_reps and at
 * least 2), or at max_reps. */
enum bench_decision bench_nrep_t1_decide(const struct bench_timing *tm,
                                         const struct bench_online *o);

/* ---- what the library runs (bench_mpit.c) ------------------------------- */

/* MPI_T_init_thread on every rank (sets ctx->mpit_ok). */
void bench_mpit_init(struct bench_ctx *ctx);
void bench_mpit_fini(struct bench_ctx *ctx);

/* A native algorithm forced at run time: a point's own knobs (the test's
 * "forced_natives": "same_launch"). bench_force_begin writes the variables
 * of knobs.at_run_time.mpi_t through MPI_T on this rank (local);
 * bench_force_comm, for new_communicator, makes ctx->comm a duplicate of
 * MPI_COMM_WORLD created after the write (collective: every rank, once all
 * agreed the writes worked); bench_force_end puts back the communicator
 * and every value written (also after a failure). 0, or -1 with why. */
#define BENCH_MAX_FORCE 8
struct bench_force {
    int n;                             /* variables written */
    MPI_T_cvar_handle h[BENCH_MAX_FORCE];
    MPI_Datatype dt[BENCH_MAX_FORCE];
    long long old[BENCH_MAX_FORCE];    /* their values before */
    MPI_Comm comm;                     /* the point's communicator, or MPI_COMM_NULL */
    MPI_Comm saved_comm;               /* ctx->comm before */
};
int bench_force_begin(struct bench_ctx *ctx, const struct bench_point *pt,
                      struct bench_force *f, char *why, size_t len);
int bench_force_comm(struct bench_ctx *ctx, struct bench_force *f, char *why, size_t len);
void bench_force_end(struct bench_ctx *ctx, struct bench_force *f);

struct bench_effective {
    char algorithm[160];  /* effective algorithm; "" means unknown (written as null) */
    char forced_by[512];  /* how it came to be; "" means null */
    const char *source;   /* "mpi_t" | "known_fallback" | "unobservable" | "generated" |
                           * "bound" */
    cJSON *knobs;         /* the knobs as observed (owned; cJSON_Delete) */
};

/* Rank 0: fills eff for a point. */
void bench_effective_for(const struct bench_ctx *ctx, const struct bench_point *pt,
                         struct bench_effective *eff);

/* ---- micro-benchmarks (bench_micro.c) ----------------------------------- */

/* What one rank does in a micro-benchmark point. */
struct bench_micro_run {
    int idle;             /* this rank takes no part (its local index is >= k) */
    struct bench_ctx lane; /* multi_collective: the context its collective runs in (the
                           * lane communicator; rank and p within it) */
    struct bench_point lpt; /* multi_collective: the point, salted per lane */
    size_t first;         /* lane_pattern: this rank's first element of the node's count */
    size_t n;             /* lane_pattern: elements it sends (and receives) */
    int to;               /* lane_pattern: rank of comm it sends to (next node, same
                           * local index) */
    int from;             /* lane_pattern: rank of comm it receives from (previous node) */
};

/* Sets m up for pt on this rank. Local: returns 0, or -1 with the reason
 * (a topology that is not regular, k above the ranks per node); the
 * caller agrees on it with the other ranks. */
int bench_micro_prepare(const struct bench_ctx *ctx, const struct bench_point *pt,
                        struct bench_micro_run *m, char *reason, size_t len);
/* micro:lane_pattern: one exchange, send -> m->to, m->from -> out. */
int bench_lane_exchange(const struct bench_ctx *ctx, const struct bench_point *pt,
                        const struct bench_micro_run *m, const void *send, void *out);
/* micro:lane_pattern: this rank's input (m->n elements) and what it must
 * receive (the previous node's lane's input). */
void bench_lane_input(const struct bench_ctx *ctx, const struct bench_point *pt,
                      const struct bench_micro_run *m, void *dst);
void bench_lane_expected(const struct bench_ctx *ctx, const struct bench_point *pt,
                         const struct bench_micro_run *m, void *dst);

/* ---- timelines (bench_trace.c) ------------------------------------------ */

#define BENCH_TRACE_REPS 3       /* the first timed repetitions of a point traced */
#define BENCH_TRACE_EVENTS 65536 /* events kept per rank and point (1 MiB) */

struct cg_tag_event; /* runtime/cg.h */

struct bench_trace_rep {
    long attempt;         /* its index in the timed loop */
    int valid;            /* it counted (window: no rank was late) */
    int open;             /* between begin and end */
    int64_t t0, t1;       /* the repetition's begin and end, this rank's clock */
    size_t first, n;      /* its events in ev */
};

/* One rank's trace of one point. */
struct bench_trace {
    int on;               /* verbosity trace: this point is traced */
    int nobuf;            /* the buffer could not be allocated (nothing recorded) */
    struct cg_tag_event *ev; /* cap events */
    size_t cap;           /* BENCH_TRACE_EVENTS (CG_BENCH_TRACE_EVENTS: fewer, a test hook) */
    size_t n;             /* events kept */
    uint64_t dropped;     /* events the full buffer did not keep */
    struct bench_trace_rep reps[BENCH_TRACE_REPS];
    int nreps;            /* repetitions traced */
};

/* Every rank, before the timed loop: sets t up (off unless the job's
 * verbosity is trace). 0, or -1 when the buffer could not be allocated
 * (the point is then timed as usual and its trace not written). */
int bench_trace_start(const struct bench_ctx *ctx, struct bench_trace *t);
/* Around one timed call: records its tag regions when attempt is one of
 * the first BENCH_TRACE_REPS; t0 and t1 are its begin and end
 * (bench_clock_now). */
void bench_trace_rep_begin(struct bench_trace *t, long attempt);
void bench_trace_rep_end(struct bench_trace *t, int64_t t0, int64_t t1);
/* After rank 0's verdict: whether that repetition counted. */
void bench_trace_rep_valid(struct bench_trace *t, long attempt, int valid);
/* Collective, after the timed loop: rank 0 gathers every rank's events and
 * writes trace_dir/<point id>.json (FORMATS.md, "Trace file"). algo: the
 * generated or baseline entry, NULL for other points. 0, or -1 with msg
 * (on rank 0; the point's record is not affected). */
int bench_trace_write(const struct bench_ctx *ctx, const struct bench_point *pt,
                      const struct cg_algo *algo, const struct bench_trace *t, char *msg,
                      size_t msglen);
void bench_trace_free(struct bench_trace *t);

/* ---- run metadata (bench_meta.c) ---------------------------------------- */

/* Collective: gathers placement; rank 0 writes run-<n>.json. Returns 0, or -1
 * on rank 0 when the file could not be written (msg says why). */
int bench_write_run_meta(struct bench_ctx *ctx, char *msg, size_t msglen);

#endif
