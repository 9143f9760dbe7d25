/* bench_cuda.h - the harness's GPU mode: `build/cuda/bench_cuda JOBFILE`
 * (harness/gpu/README.md), the GPU twin of build/<lib>/bench.
 *
 * It reads the CPU bench's job file (harness/bench_job.c), and reuses its
 * JSON writer (bench_json.c), data and reference (bench_data.c), the
 * harness's own point-to-point collectives (bench_comm.c), synchronisation
 * and statistics (bench_time.c) and run metadata (bench_meta.c, completed
 * with the GPU's by gpu_meta.c). Its own parts:
 *
 *   bench_cuda.c   main: MPI, the job, the GPU and NCCL set-up, the loop, exits
 *   gpu_point.c    one point on the GPU: buffers, the call, check, timed loop
 *   gpu_record.c   the record line, raw/<point>.txt, skipped records
 *   gpu_meta.c     run-<n>.json: bench_meta.c's, plus GPUs, CUDA and NCCL
 *   nccl_debug.c   NCCL's debug output: set-up, and what it says NCCL ran
 *
 * C11. Every part is called by every rank unless its comment says "rank 0".
 */
#ifndef CG_BENCH_CUDA_H
#define CG_BENCH_CUDA_H

#include "../bench.h" /* harness/bench.h */
#include "cg_cuda.h"
#include "cg_cuda_algo.h"

#include <stdint.h>

/* Exit statuses (harness/gpu/README.md). 0, 2, 3 and 4 are bench's. */
#define BC_EXIT_OK 0        /* every point was recorded, whatever its status */
#define BC_EXIT_USAGE 2     /* usage, or a job file that does not parse */
#define BC_EXIT_LAUNCH 3    /* wrong number of ranks, or MPI_COMM_WORLD not duplicated */
#define BC_EXIT_OUTPUT 4    /* outputs could not be written */
#define BC_EXIT_NO_GPU 5    /* no GPU on some rank: every point recorded as skipped */
#define BC_EXIT_GPU_SETUP 6 /* a GPU, but its set-up failed: every point recorded as error */

#define BC_POISON 0xA5      /* output bytes before a checked call */

/* State of one launch. `base` is what bench_comm.c, bench_time.c and
 * bench_meta.c take (job, the two duplicates, rank, p, ranks_per_node). */
struct bc_ctx {
    struct bench_ctx base;
    int gpu_ok;                     /* every rank has its GPU, stream and events */
    char gpu_why[BENCH_REASON_LEN]; /* why not (the same text on every rank) */
    int gpu_count;                  /* CUDA devices this rank sees */
    int device;                     /* the one it uses (local rank % count) */
    cudaStream_t stream;            /* every call under test goes on it */
    cudaEvent_t ev_begin;           /* recorded before each timed call */
    cudaEvent_t ev_end;             /* and after it */
    /* Native points: one NCCL communicator for the job, made at the first
     * native point (collective). */
    int nccl_state;                 /* 0 not tried yet, 1 ready, -1 unavailable */
    char nccl_why[BENCH_REASON_LEN];/* why unavailable (the same on every rank) */
#ifndef CG_CUDA_NO_NCCL
    ncclComm_t nccl;
#endif
    /* Generated points: the CUDA runtime's transport on base.comm, asked at
     * the first generated point (collective: it makes the context). */
    int transport;                  /* enum cg_cu_transport; -1 not known yet */
    /* Device buffers of the job, sized for its largest point and reused by
     * every point (gpu_point.c): made at the first point that runs, freed
     * after base.comm (whose CUDA-runtime context closes the IPC imports of
     * them first). NULL when not made. */
    int pool_tried;
    unsigned char *pool_send;
    unsigned char *pool_out;
    size_t pool_send_bytes;
    size_t pool_out_bytes;
    /* NCCL's debug output, rank 0 (nccl_debug.c). */
    char nccl_log[1024];            /* NCCL_DEBUG_FILE it writes ("" when none) */
    char nccl_debug_note[512];      /* what bench_cuda set, for run-<n>.json */
    char knobs_applied[512];        /* knobs.env variables bench_cuda set itself */
};

/* What NCCL's debug output says about one point's calls (rank 0). */
#define BC_NCCL_SEEN_MAX 4
struct bc_nccl_seen {
    char algorithm[48];             /* lower case, "ring" */
    char protocol[24];              /* lower case, "ll" */
    long calls;                     /* lines with this pair */
    long long bytes;                /* the bytes NCCL printed (first line) */
    char channels[32];              /* "0..7" or "" */
};

struct bc_nccl_tuning {
    int nseen;                      /* distinct (algorithm, protocol) pairs */
    struct bc_nccl_seen seen[BC_NCCL_SEEN_MAX];
    long lines;                     /* tuning lines for the collective */
    long warnings;                  /* NCCL WARN lines in the point's stretch */
    char first_line[320];           /* the first tuning line, from the function name */
    char why_none[400];             /* when nseen == 0: why nothing is known */
};

/* One point's outcome. */
struct bc_run {
    const char *status;             /* "ok" | "failed_check" | "error" | "skipped" */
    char reason[BENCH_REASON_LEN];  /* for anything but ok */
    const struct cg_cu_algo *algo;  /* generated: the table's entry */
    int ran;                        /* the implementation was called at least once */
    int checked;                    /* the check ran to a verdict */
    uint64_t wrong;                 /* elements beyond the tolerance, all ranks */
    uint64_t inexact;               /* elements that differ within it, all ranks */
    int ranks_wrong;                /* ranks with a wrong element */
    double max_error;               /* largest absolute error, all ranks */
    double tolerance;               /* relative tolerance (0 for integers) */
    long n;                         /* repetitions kept */
    const char *stop;               /* "rse" | "budget" | "max_reps"; NULL when not timed */
    uint64_t *times;                /* rank 0: slowest rank's GPU time per repetition, ns */
    uint64_t *all_times;            /* rank 0, verbosity full: n x p */
    struct bench_params_eff params; /* generated: what its code reads for each parameter */
    int ntags;                      /* generated: the schedule's timing tags; 0 otherwise */
    long tag_n;                     /* tagged repetitions (after the timed ones, tags on) */
    uint64_t *tag_times;            /* rank 0: tag_n x ntags, the slowest rank's per tag, ns */
    const char *transport;          /* "nccl", "ipc"; NULL when nothing ran */
    struct bc_nccl_tuning tuning;   /* native points, rank 0 */
};

/* ---- gpu_point.c ----------------------------------------------------------- */

/* Collective: whether any rank has local_bad; if so, reason (BENCH_REASON_LEN
 * bytes) gets the lowest such rank's local_reason, on every rank. A failure
 * of the agreement itself counts as bad. */
int bc_agree(const struct bc_ctx *c, int local_bad, const char *local_reason, char *reason);

/* The collectives bench_cuda measures (NCCL's and the CUDA emitter's). */
int bc_coll_supported(enum cg_coll coll);
const char *bc_coll_name(enum cg_coll coll);
/* NCCL's name of the collective in its debug output ("AllReduce"), NULL
 * for alltoall (ncclSend/ncclRecv). */
const char *bc_nccl_func_name(enum cg_coll coll);
/* Runs, checks and times one point (collective). */
void bc_run_point(struct bc_ctx *c, const struct bench_point *pt, struct bc_run *run);
void bc_free_run(struct bc_run *run);

/* ---- gpu_record.c (rank 0) ------------------------------------------------- */

/* Appends the record of pt (and writes its raw file when it was timed).
 * 0, or -1 with msg. */
int bc_write_record(const struct bc_ctx *c, const struct bench_point *pt, const struct bc_run *run,
                    char *msg, size_t msglen);
/* The record's busbw for a median time at p ranks (NaN when not positive). */
double bc_busbw_GBps(int p, const struct bench_point *pt, double median_ns);

/* ---- gpu_meta.c ------------------------------------------------------------- */

/* Collective: run-<n>.json as bench writes it, then completed by rank 0 with
 * the GPUs (per rank), CUDA and NCCL versions, the timer and bench_cuda's
 * settings. 0, or -1 on rank 0 with msg. */
int bc_write_run_meta(struct bc_ctx *c, char *msg, size_t msglen);

/* ---- nccl_debug.c (rank 0) -------------------------------------------------- */

/* Before any NCCL call: NCCL_DEBUG=INFO (unless INFO or TRACE already),
 * NCCL_DEBUG_SUBSYS with TUNING, NCCL_DEBUG_FILE=<campaign>/nccl-debug-<run
 * id>.log (c->nccl_log). */
void bc_nccl_debug_setup(struct bc_ctx *c);
/* Bytes in the debug file now (-1 when it does not exist). */
long bc_nccl_debug_offset(const struct bc_ctx *c);
/* Reads `path` from byte `from` on and fills t with the tuning lines of
 * NCCL function `func` ("AllReduce"; NULL: none expected), copying NCCL's
 * WARN lines to stderr. p: the communicator's size, for the reason when
 * nothing is found. */
void bc_nccl_debug_parse(const char *path, long from, const char *func, int p,
                         struct bc_nccl_tuning *t);
/* The effective algorithm of a native point from t, at the granularity of
 * the request: "ring/ll" for "default" and "<algo>/<proto>" requests,
 * "ring" for "<algo>" ones; several pairs are joined with ",". "" when
 * nothing was seen. */
void bc_nccl_effective(const struct bc_nccl_tuning *t, const char *requested, char *out,
                       size_t len);

#endif
