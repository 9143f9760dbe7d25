/* bench.c - the benchmark program: `build/<lib>/bench JOBFILE`, started by
 * `collgen run` under mpirun, one launch per job (harness/FORMATS.md).
 *
 * For each point of the job, in order:
 *  1. check: run the implementation once into a poisoned buffer and
 *     compare it, bit for bit, with a reference: the library's collective
 *     (default algorithm, same process) for generated points, the exact
 *     result computed from the known inputs ("formula") for native ones,
 *     since there the library's call is what is under test, and for the
 *     bound (bound:sendrecv_reduce, allreduce at p = 2 as two MPI_Sendrecv
 *     of n/2 around a local reduce of n/2; see bound_sendrecv_reduce). Only
 *     results MPI defines are compared (the root's for reduce and gather,
 *     not exscan's rank 0); a barrier, which has no data, is checked by
 *     staggered entries instead (check_barrier). A wrong result is
 *     recorded as failed_check, without timing;
 *  2. time it as ReproMPI does: warm-up calls, then repetitions of
 *     (synchronise, time one call) with every repetition kept and the
 *     slowest rank's time per repetition, until the relative standard error
 *     of the median is under the target, the time budget is spent, or the
 *     maximum is reached (never fewer than min_reps); rank 0 decides and
 *     tells the others, so all ranks stop together;
 *  3. for generated points and baselines, the schedule's timing tags, in
 *     repetitions of their own after the timed ones, which run with the
 *     tags switched off (tag_point);
 *  4. rank 0 writes raw/<point_id>.txt, then appends one record line to
 *     points.jsonl (one write, O_APPEND, fsync).
 * Generated points with parameters (generated:bcast_knomial(radix=4)) set
 * them first (set_params); micro-benchmarks (bench_micro.c) go through the
 * same steps, on their lanes.
 * An MPI error in a point is recorded as status "error" and the job goes on.
 * The harness's own traffic (agreements, the slowest rank, the stop
 * decision) is point-to-point (bench_comm.c), so that the job's knobs,
 * which force the library's collectives for the whole process, touch only
 * the calls under test.
 *
 * Exit status: 0 every point was recorded (whatever its status); 2 usage or
 * a job file that does not parse ("JOBFILE: ..." on stderr); 3 started as
 * the wrong number of ranks (a binary of one MPI started by the other's
 * launcher runs every rank alone, as a singleton: each of them exits 3 and
 * no record is written), or MPI_COMM_WORLD could not be duplicated; 4 the
 * outputs could not be written.
 *
 * Test hook: CG_BENCH_LATE=RANK:EVERY makes that rank come to every
 * EVERY-th window after its start (sync window), so that the tests see
 * those repetitions dropped and counted (timing.invalid).
 *
 * Test hook: CG_BENCH_CORRUPT=<schedule name> flips one byte of the first
 * output element on the last rank (the root, for reduce and gather) after
 * that generated implementation's check call, so that the tests can see a
 * wrong implementation caught as failed_check; for a barrier schedule, rank
 * 0 takes its leaving time before the first checked call, as if it had
 * left at once. CG_BENCH_CORRUPT=lane_pattern or multi_collective does the
 * same to rank 0's result of that micro-benchmark. It never touches timed
 * calls.
 */
#define _POSIX_C_SOURCE 200809L
#include "bench.h"

#include <errno.h>
#include <limits.h>
#include <time.h>
#include <unistd.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_baseline.h"
#include "cg.h"

#ifndef CG_FLAVOUR
#define CG_FLAVOUR "unknown"
#endif

#define EXIT_USAGE 2    /* usage, or a job file that does not parse */
#define EXIT_LAUNCH 3   /* wrong number of ranks */
#define EXIT_OUTPUT 4   /* outputs could not be written */
#define POISON 0xA5     /* output bytes before a checked call */

/* ---- one point ------------------------------------------------------------------ */

struct point_run {
    struct bench_roof roof; /* the point's roofline (bench_roof.c) */
    const char *status;   /* "ok" | "failed_check" | "error" | "skipped" */
    char reason[BENCH_REASON_LEN]; /* for anything but ok */
    const struct cg_algo *algo; /* generated: the registry entry */
    int checked;          /* the check ran to a verdict */
    const char *reference; /* "native" or "formula" */
    uint64_t wrong;       /* elements wrong, all ranks */
    int ranks_wrong;      /* ranks with a wrong element */
    double max_error;     /* largest absolute error, all ranks */
    long n;               /* repetitions kept */
    const char *stop;     /* "rse" | "budget" | "max_reps", NULL when not timed */
    uint64_t *times;      /* rank 0: slowest rank's time per repetition, ns */
    uint64_t *all_times;  /* rank 0, verbosity full: n x p times */
    uint64_t *tag_times;  /* rank 0: tag_n x ntags, slowest rank per tag */
    int ntags;            /* tags of the schedule (0 for native) */
    long tag_n;           /* repetitions of the tag pass (tag_point) */
    char said[BENCH_REASON_LEN]; /* rank 0, forced MPICH algorithm: what the library wrote
                           * on stderr about not using it at the checked call ("" none) */
    const struct bench_ctx *dctx; /* where the implementation runs: ctx, or for
                           * micro:multi_collective the lane (micro.lane) */
    const struct bench_point *dpt; /* the point it runs: pt, or micro.lpt */
    struct bench_micro_run micro; /* micro-benchmarks: this rank's part */
    struct bench_params_eff params; /* generated: each ranged parameter of the schedule
                           * and the value its code reads (cg_param_value) */
    int mode;             /* LOOP_RSE, LOOP_NREP or LOOP_T1: when the repetitions stop */
    uint64_t *span_times; /* rank 0, barrier and dissemination with a clock: the global
                           * span (latest end - earliest start) per repetition */
    long invalid;         /* window: repetitions dropped because a rank was late */
    long late_starts;     /* window: repetitions kept although a rank left the wait more
                           * than 2 us after the start (it waited for a core) */
    double window_ns;     /* window: the last window's length */
    double clock_age_s;   /* rank 0: seconds since the clock sync, at the point's end */
    double t1_s;          /* LOOP_T1, rank 0: how long the repetitions took */
    struct bench_nrep_state nrep; /* LOOP_NREP, rank 0: the NREP rule */
    int nrep_t1_launches; /* LOOP_NREP: estimation launches t1 is the longest of */
};

/* When the repetitions of a point stop (point_run.mode): the RSE rule,
 * PGMPITuneLib's NREP (the point's nrep), or its t1 loop (1 element, until
 * the RSE is below t1_rse; bench_nrep.c). */
enum { LOOP_RSE, LOOP_NREP, LOOP_T1 };

/* Buffers of one point. */
struct point_bufs {
    unsigned char *send;  /* this rank's input (bcast: the root's data) */
    unsigned char *out;   /* the implementation's output (and in-place input) */
    unsigned char *ref;   /* the reference result (room for out_elems) */
    unsigned char *res;   /* where this rank's result lies: out, or for scatter in place
                           * at the root, the root's own block of send */
    size_t in_elems;      /* elements of send */
    size_t out_elems;     /* elements of out */
    size_t res_elems;     /* elements of the result (compared); 0 where MPI leaves it
                           * undefined: reduce's and gather's non-roots, exscan's rank 0 */
    size_t send_B, out_B; /* bytes mapped for send, and for out and ref each
                           * (bench_buf_map) */
};

static const struct cg_algo *find_algo(const struct bench_point *pt)
{
    if (pt->baseline) {
        return bench_baseline_find(pt->base);
    }
    for (int i = 0; i < cg_nalgos; i++) {
        if (strcmp(cg_algos[i]->name, pt->base) == 0) {
            return cg_algos[i];
        }
    }
    return NULL;
}

/* Describes an MPI error code, with the runtime's explanation when the
 * generated code set one. */
static void describe_rc(int rc, const char *what, int rank, int generated, char *out, size_t len)
{
    char text[MPI_MAX_ERROR_STRING];
    int tlen = 0;

    if (MPI_Error_string(rc, text, &tlen) != MPI_SUCCESS) {
        snprintf(text, sizeof(text), "error code %d", rc);
    }
    if (generated && cg_last_error()[0] != '\0') {
        bench_fmt(out, len, "%s returned %s on rank %d (%s)", what, text, rank, cg_last_error());
    } else {
        bench_fmt(out, len, "%s returned %s on rank %d", what, text, rank);
    }
    /* MPICH's error strings are multi-line stacks: one line per record. */
    for (char *c = out; *c != '\0'; c++) {
        if (*c == '\n') {
            *c = ' ';
        }
    }
}

/* Collective: whether any rank has `local_bad`; if so, reason gets the
 * lowest such rank's `local_reason`. A failure of this agreement itself is
 * reported as an error too. */
static int agree(const struct bench_ctx *ctx, int local_bad, const char *local_reason,
                 char *reason)
{
    int mine = local_bad ? ctx->rank : ctx->p;
    int first = ctx->p;
    char buf[BENCH_REASON_LEN];

    first = mine;
    if (hx_allreduce(ctx, &first, 1, HX_INT, HX_MIN) != MPI_SUCCESS) {
        snprintf(reason, BENCH_REASON_LEN, "the harness's own allreduce failed");
        return 1;
    }
    if (first == ctx->p) {
        return 0;
    }
    memset(buf, 0, sizeof(buf));
    if (ctx->rank == first) {
        snprintf(buf, sizeof(buf), "%s", local_reason);
    }
    if (hx_bcast(ctx, buf, (int)sizeof(buf), first) != MPI_SUCCESS) {
        snprintf(reason, BENCH_REASON_LEN, "the harness's own bcast failed");
        return 1;
    }
    snprintf(reason, BENCH_REASON_LEN, "%s", buf);
    return 1;
}

/* bound:sendrecv_reduce, the transport bound of allreduce at p = 2: the
 * least any allreduce of n elements must do between two ranks, the minimal
 * reduce-scatter + allgather exchange. Rank 0 owns the first n/2 elements,
 * rank 1 the rest; each
 *  1. sends the partner's half of its input and receives the partner's
 *     copy of its own half, straight into out (MPI_Sendrecv, about n/2);
 *  2. reduces its input's half into it with the runtime's typed kernel
 *     (cg_reduce_kernel_run; MPI_Reduce_local where none exists), n/2
 *     elements;
 *  3. sends its reduced half and receives the partner's (MPI_Sendrecv).
 * Two operands make every op of the harness commutative bit for bit, so
 * the result is the formula's exactly. Runs on ctx->comm like the
 * collectives, timed like them. Not in place (run_point refuses it). */
static int bound_sendrecv_reduce(const struct bench_ctx *ctx, const struct bench_point *pt,
                                 const void *send, void *out)
{
    MPI_Datatype dt = bench_mpi_dtype(pt->dtype);
    size_t size = bench_dtype_size(pt->dtype);
    size_t lo = pt->count / 2;
    size_t mine_off = (ctx->rank == 0) ? 0 : lo;
    size_t mine_n = (ctx->rank == 0) ? lo : pt->count - lo;
    size_t other_off = (ctx->rank == 0) ? lo : 0;
    size_t other_n = pt->count - mine_n;
    int partner = 1 - ctx->rank;
    const unsigned char *in = send;
    unsigned char *o = out;
    int kernel;
    int rc;

    rc = MPI_Sendrecv(in + (other_off * size), (int)other_n, dt, partner, 0,
                      o + (mine_off * size), (int)mine_n, dt, partner, 0, ctx->comm,
                      MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    kernel = cg_reduce_kernel_index(dt, bench_mpi_op(pt->op));
    if (kernel >= 0) {
        cg_reduce_kernel_run(kernel, o + (mine_off * size), in + (mine_off * size), mine_n);
    } else {
        rc = MPI_Reduce_local(in + (mine_off * size), o + (mine_off * size), (int)mine_n, dt,
                              bench_mpi_op(pt->op));
        if (rc != MPI_SUCCESS) {
            return rc;
        }
    }
    return MPI_Sendrecv(o + (mine_off * size), (int)mine_n, dt, partner, 1,
                        o + (other_off * size), (int)other_n, dt, partner, 1, ctx->comm,
                        MPI_STATUS_IGNORE);
}

/* ---- calls by the table (runtime/cg_colls.h) ------------------------------------ *
 * The harness has no code per collective: it calls each one by the shape of
 * its MPI signature (CG_<ID>_ARGS), which the table's bufs, combine and
 * rooted columns tell apart, through the native function the mpi column
 * names or the generated one (the same signature with size_t counts), and
 * places MPI_IN_PLACE where the in_place column says. */

enum sig_shape {
    SIG_OP,        /* (sendbuf, recvbuf, count, datatype, op, comm): allreduce, ... */
    SIG_OP_ROOT,   /* the same with root before comm: reduce */
    SIG_PAIR,      /* (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm) */
    SIG_PAIR_ROOT, /* the same with root before comm: gather, scatter */
    SIG_ONE_ROOT,  /* (buffer, count, datatype, root, comm): bcast */
    SIG_COMM       /* (comm): barrier */
};

static enum sig_shape sig_shape(enum cg_coll coll)
{
    const struct cg_coll_info *ci = &cg_colls[coll];
    if (ci->bufs == CG_BUFS_NONE) {
        return SIG_COMM;
    }
    if (ci->bufs == CG_BUFS_ONE) {
        return SIG_ONE_ROOT;
    }
    if (ci->combine == CG_COMBINE_OP) {
        return ci->rooted ? SIG_OP_ROOT : SIG_OP;
    }
    return ci->rooted ? SIG_PAIR_ROOT : SIG_PAIR;
}

/* The generated functions' types by shape (counts as size_t) ... */
typedef int (*g_op)(const void *, void *, size_t, MPI_Datatype, MPI_Op, MPI_Comm);
typedef int (*g_op_root)(const void *, void *, size_t, MPI_Datatype, MPI_Op, int, MPI_Comm);
typedef int (*g_pair)(const void *, size_t, MPI_Datatype, void *, size_t, MPI_Datatype, MPI_Comm);
typedef int (*g_pair_root)(const void *, size_t, MPI_Datatype, void *, size_t, MPI_Datatype, int,
                           MPI_Comm);
typedef int (*g_one_root)(void *, size_t, MPI_Datatype, int, MPI_Comm);
/* ... and MPI's (int counts). */
typedef int (*n_op)(const void *, void *, int, MPI_Datatype, MPI_Op, MPI_Comm);
typedef int (*n_op_root)(const void *, void *, int, MPI_Datatype, MPI_Op, int, MPI_Comm);
typedef int (*n_pair)(const void *, int, MPI_Datatype, void *, int, MPI_Datatype, MPI_Comm);
typedef int (*n_pair_root)(const void *, int, MPI_Datatype, void *, int, MPI_Datatype, int,
                           MPI_Comm);
typedef int (*n_one_root)(void *, int, MPI_Datatype, int, MPI_Comm);
typedef int (*x_comm)(MPI_Comm);

/* The library's function of each collective: the table's mpi column. */
static void (*const native_fn[CG_COLL_COUNT_])(void) = {
#define X(ID, id, mpi, ...) [CG_COLL_##ID] = (void (*)(void))mpi,
    CG_COLL_TABLE(X)
#undef X
};

/* Whether this rank passes MPI_IN_PLACE as sendbuf (send_ip) or recvbuf
 * (recv_ip) when the point is in place. */
static void in_place_at(const struct bench_point *pt, int at_root, int *send_ip, int *recv_ip)
{
    enum cg_in_place w = cg_colls[pt->coll].in_place;
    *send_ip = pt->in_place && (w == CG_IN_PLACE_SEND || (w == CG_IN_PLACE_SEND_AT_ROOT && at_root));
    *recv_ip = pt->in_place && w == CG_IN_PLACE_RECV_AT_ROOT && at_root;
}

/* One call of the collective: the generated gen (its cg_<coll>_fn), or
 * the native one when gen is NULL; count elements per block (the count
 * argument of every MPI signature here); MPI_IN_PLACE as sendbuf or recvbuf
 * as send_ip and recv_ip say (with count 0 and MPI_DATATYPE_NULL beside it,
 * where the signature has them). */
static int call_coll(enum cg_coll coll, void (*gen)(void), const void *send, void *out,
                     size_t count, MPI_Datatype dt, MPI_Op op, int root, MPI_Comm comm,
                     int send_ip, int recv_ip)
{
    void (*nat)(void) = native_fn[coll];
    const void *sb = send_ip ? MPI_IN_PLACE : send;
    size_t sn = send_ip ? 0 : count;
    MPI_Datatype st = send_ip ? MPI_DATATYPE_NULL : dt;
    void *rb = recv_ip ? MPI_IN_PLACE : out;
    size_t rn = recv_ip ? 0 : count;
    MPI_Datatype rt = recv_ip ? MPI_DATATYPE_NULL : dt;

    switch (sig_shape(coll)) {
    case SIG_OP:
        return gen ? ((g_op)gen)(sb, out, count, dt, op, comm)
                   : ((n_op)nat)(sb, out, (int)count, dt, op, comm);
    case SIG_OP_ROOT:
        return gen ? ((g_op_root)gen)(sb, out, count, dt, op, root, comm)
                   : ((n_op_root)nat)(sb, out, (int)count, dt, op, root, comm);
    case SIG_PAIR:
        return gen ? ((g_pair)gen)(sb, sn, st, rb, rn, rt, comm)
                   : ((n_pair)nat)(sb, (int)sn, st, rb, (int)rn, rt, comm);
    case SIG_PAIR_ROOT:
        return gen ? ((g_pair_root)gen)(sb, sn, st, rb, rn, rt, root, comm)
                   : ((n_pair_root)nat)(sb, (int)sn, st, rb, (int)rn, rt, root, comm);
    case SIG_ONE_ROOT:
        return gen ? ((g_one_root)gen)(out, count, dt, root, comm)
                   : ((n_one_root)nat)(out, (int)count, dt, root, comm);
    case SIG_COMM:
        return gen ? ((x_comm)gen)(comm) : ((x_comm)nat)(comm);
    }
    return MPI_ERR_OTHER;
}

/* Runs the implementation once: out is the output (and, in place, the
 * input), with MPI_IN_PLACE where MPI defines it (the in_place column:
 * every rank for allreduce, allgather, reduce_scatter_block, alltoall, scan
 * and exscan; the root only for reduce and gather (sendbuf) and scatter
 * (recvbuf)). Arguments MPI says are not significant (a non-root's gather
 * recvbuf, a scatter sendbuf) get the point's own values and a buffer of
 * the right size. count <= INT_MAX was checked for the native calls. */
static int call_impl(const struct bench_ctx *ctx, const struct bench_point *pt,
                     const struct cg_algo *algo, const void *send, void *out)
{
    int send_ip, recv_ip;

    if (pt->kind == BENCH_BOUND) {
        return bound_sendrecv_reduce(ctx, pt, send, out);
    }
    if ((int)pt->coll >= CG_COLL_COUNT_) {
        return MPI_ERR_OTHER; /* lane_pattern: run_impl's exchange */
    }
    in_place_at(pt, ctx->rank == pt->root, &send_ip, &recv_ip);
    return call_coll(pt->coll, (algo != NULL) ? algo->fn.any : NULL, send, out, pt->count,
                     bench_mpi_dtype(pt->dtype), bench_mpi_op(pt->op), pt->root, ctx->comm,
                     send_ip, recv_ip);
}

/* The library's collective, default algorithm, not in place, into ref
 * (bcast's root first puts its data there: one buffer). */
static int call_native_ref(const struct bench_ctx *ctx, const struct bench_point *pt,
                           const struct point_bufs *b)
{
    if (cg_colls[pt->coll].bufs == CG_BUFS_ONE && ctx->rank == pt->root) {
        memcpy(b->ref, b->send, pt->count * bench_dtype_size(pt->dtype));
    }
    return call_coll(pt->coll, NULL, b->send, b->ref, pt->count, bench_mpi_dtype(pt->dtype),
                     bench_mpi_op(pt->op), pt->root, ctx->comm, 0, 0);
}

/* Runs the point's implementation once on this rank: call_impl on the
 * context it runs in (a lane, for micro:multi_collective), the lane
 * pattern's exchange, or nothing on a rank a micro-benchmark leaves idle
 * (it still takes part in the synchronisation and the harness's
 * agreements, and its time, about 0, never is the slowest). */
static int run_impl(const struct bench_ctx *ctx, const struct bench_point *pt,
                    const struct point_run *run, const void *send, void *out)
{
    if (pt->kind == BENCH_MICRO) {
        if (run->micro.idle) {
            return MPI_SUCCESS;
        }
        if (pt->micro == BENCH_MICRO_LANE_PATTERN) {
            return bench_lane_exchange(ctx, pt, &run->micro, send, out);
        }
    }
    return call_impl(run->dctx, run->dpt, run->algo, send, out);
}

/* Puts the implementation's input where it reads it: the in-place part of
 * out (at the rank's own block where out has p blocks and the input is one:
 * allgather, gather), the root's data for bcast. poison: fill the rest with
 * POISON. */
static void prepare_out(const struct bench_ctx *ctx, const struct bench_point *pt,
                        struct point_bufs *b, int poison)
{
    size_t size = bench_dtype_size(pt->dtype);
    int at_root = (ctx->rank == pt->root);
    int send_ip, recv_ip;

    if (poison) {
        memset(b->out, POISON, b->out_elems * size);
    }
    if ((int)pt->coll >= CG_COLL_COUNT_) {
        return; /* lane_pattern */
    }
    const struct cg_coll_info *ci = &cg_colls[pt->coll];
    if (ci->bufs == CG_BUFS_ONE) {
        if (at_root) {
            memcpy(b->out, b->send, pt->count * size);
        }
        return;
    }
    in_place_at(pt, at_root, &send_ip, &recv_ip);
    if (send_ip) {
        memcpy(b->out + (bench_in_place_off(pt, ctx->rank) * size), b->send, b->in_elems * size);
    }
}

/* Sizes of the point's buffers (bench_elems: from the table); -1 when they
 * overflow size_t. */
static int size_bufs(const struct bench_ctx *ctx, const struct bench_point *pt,
                     struct point_bufs *b)
{
    struct bench_elems e;
    if (bench_elems(pt, ctx->p, ctx->rank, &e) != 0) {
        return -1;
    }
    b->in_elems = e.in;
    b->out_elems = e.out;
    b->res_elems = e.res;
    return 0;
}

static void free_bufs(struct point_bufs *b)
{
    bench_buf_unmap(b->send, b->send_B);
    bench_buf_unmap(b->out, b->out_B);
    bench_buf_unmap(b->ref, b->out_B);
    memset(b, 0, sizeof(*b));
}

/* What MPICH writes on stderr when a forced algorithm cannot serve a call
 * (MPIR_CVAR_COLLECTIVE_FALLBACK=print, which local.json sets): it then runs
 * another algorithm, which it does not name. */
#define MPICH_FALLBACK_SAID "User set collective algorithm is not usable"

/* Rank 0 captures its own stderr around the checked call of a forced MPICH
 * algorithm, so that a fallback MPICH reports there is tied to the point
 * (the job's log alone cannot say which call it was). */
struct stderr_capture {
    int saved;            /* the real stderr, -1 when not capturing */
    FILE *file;           /* where stderr goes meanwhile */
};

static void capture_begin(struct stderr_capture *c)
{
    c->saved = -1;
    c->file = tmpfile();
    if (c->file == NULL) {
        return;
    }
    fflush(stderr);
    c->saved = dup(STDERR_FILENO);
    if (c->saved < 0 || dup2(fileno(c->file), STDERR_FILENO) < 0) {
        if (c->saved >= 0) {
            close(c->saved);
        }
        c->saved = -1;
        fclose(c->file);
        c->file = NULL;
    }
}

/* Restores stderr, copies what was captured to it (the log keeps it), and
 * puts the lines about the fallback, joined, into said ("" when none). */
static void capture_end(struct stderr_capture *c, char *said, size_t len)
{
    char text[2048];
    size_t n;

    said[0] = '\0';
    if (c->saved < 0) {
        return;
    }
    fflush(stderr);
    dup2(c->saved, STDERR_FILENO);
    close(c->saved);
    rewind(c->file);
    n = fread(text, 1, sizeof(text) - 1, c->file);
    text[n] = '\0';
    fwrite(text, 1, n, stderr);
    {
        /* The rest, if any, goes to the log too; the first 2 KiB are
         * searched. */
        char more[4096];
        size_t m;
        while ((m = fread(more, 1, sizeof(more), c->file)) > 0) {
            fwrite(more, 1, m, stderr);
        }
    }
    fclose(c->file);
    {
        char *hit = strstr(text, MPICH_FALLBACK_SAID);
        if (hit != NULL) {
            /* That line and the next ("Allreduce smp cannot be applied."). */
            size_t k = 0;
            int lines = 0;
            for (char *q = hit; *q != '\0' && lines < 2 && k + 1 < len; q++) {
                if (*q == '\n') {
                    lines++;
                    if (lines < 2 && q[1] != '\0' && k + 4 < len) {
                        said[k++] = ' ';
                        said[k++] = '/';
                        said[k++] = ' ';
                    }
                    continue;
                }
                said[k++] = *q;
            }
            said[(k < len) ? k : len - 1] = '\0';
        }
    }
}

/* CLOCK_MONOTONIC in ns. Why not MPI_Wtime: Open MPI's counts from each
 * process's own start, so two ranks' times do not compare; CLOCK_MONOTONIC
 * is one clock for every process of the machine. */
static uint64_t monotonic_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ((uint64_t)ts.tv_sec * 1000000000u) + (uint64_t)ts.tv_nsec;
}

#define BARRIER_TRIALS 2      /* staggered entries: ascending, then descending */
#define BARRIER_STAGGER_NS 1000000L /* 1 ms between consecutive ranks' entries */

/* Step 1 for a barrier, which has no data: in each trial the ranks enter at
 * staggered times (rank r BARRIER_STAGGER_NS x r after the others were
 * synchronised, then in reverse order), each takes CLOCK_MONOTONIC when it
 * enters and when it leaves, and afterwards the latest entry is agreed on:
 * every rank must have left after it, and the call must return
 * MPI_SUCCESS (the idea of tests/emitted_check.c). elements_wrong counts
 * the (rank, trial) pairs that left early; max_error is the largest lead
 * in ns.
 * Why two ways: the ranks of one machine share CLOCK_MONOTONIC, so their
 * times compare exactly; across nodes they do not. There each rank checks
 * against its own clock that it left no earlier than the last rank's
 * stagger after the synchronisation, (p - 1) x BARRIER_STAGGER_NS, less
 * half a stagger for the spread of the synchronisation's exits. */
static int check_barrier(const struct bench_ctx *ctx, const struct bench_point *pt,
                         struct point_run *run)
{
    char local[BENCH_REASON_LEN] = "";
    uint64_t sums[2] = {0, 0};
    double max_error = 0.0;
    int wrong_here = 0;
    int rc = MPI_SUCCESS;
    struct stderr_capture cap;
    int capture = ctx->rank == 0 && ctx->is_mpich && pt->kind == BENCH_NATIVE &&
                  strcmp(pt->name, "default") != 0;

    run->reference = "staggered_entry";
    if (capture) {
        capture_begin(&cap);
    }
    for (int trial = 0; trial < BARRIER_TRIALS; trial++) {
        int late = (trial == 0) ? ctx->rank : (ctx->p - 1 - ctx->rank);
        long wait_ns = BARRIER_STAGGER_NS * (long)late;
        struct timespec ts = {wait_ns / 1000000000L, wait_ns % 1000000000L};
        uint64_t t_sync, t_in = 0, t_out = 0, last_in;
        int src = bench_sync(ctx);
        t_sync = monotonic_ns();
        if (src != MPI_SUCCESS) {
            describe_rc(src, "the synchronisation", ctx->rank, 0, local, sizeof(local));
        } else {
            while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
            }
            t_in = monotonic_ns();
            if (trial == 0 && ctx->rank == 0 && ctx->corrupt != NULL && run->algo != NULL &&
                strcmp(ctx->corrupt, run->algo->name) == 0) {
                /* Test hook: rank 0, the first to enter, takes its leaving
                 * time before the call, as a barrier that let it leave at
                 * once would (it still calls it, so that the others are
                 * not left waiting). */
                t_out = monotonic_ns();
                rc = call_impl(ctx, pt, run->algo, NULL, NULL);
            } else {
                rc = call_impl(ctx, pt, run->algo, NULL, NULL);
                t_out = monotonic_ns();
            }
            if (rc != MPI_SUCCESS) {
                describe_rc(rc, pt->impl, ctx->rank, run->algo != NULL, local, sizeof(local));
            }
        }
        /* Every rank agrees on failures before the next collective step,
         * so that no rank waits in one the others skipped. */
        if (agree(ctx, src != MPI_SUCCESS || rc != MPI_SUCCESS, local, run->reason)) {
            if (capture) {
                capture_end(&cap, run->said, sizeof(run->said));
            }
            run->status = "error";
            return -1;
        }
        last_in = t_in;
        if (hx_allreduce(ctx, &last_in, 1, HX_U64, HX_MAX) != MPI_SUCCESS) {
            if (capture) {
                capture_end(&cap, run->said, sizeof(run->said));
            }
            run->status = "error";
            snprintf(run->reason, sizeof(run->reason), "the harness's own allreduce failed");
            return -1;
        }
        if (ctx->ranks_per_node < ctx->p) {
            /* Several nodes: this rank's clock only (see above). */
            last_in = t_sync + ((uint64_t)BARRIER_STAGGER_NS * (uint64_t)(ctx->p - 1)) -
                      (uint64_t)(BARRIER_STAGGER_NS / 2);
        }
        if (t_out < last_in) {
            double lead = (double)(last_in - t_out);
            sums[0]++;
            wrong_here = 1;
            max_error = (lead > max_error) ? lead : max_error;
        }
    }
    if (capture) {
        capture_end(&cap, run->said, sizeof(run->said));
    }
    sums[1] = (uint64_t)wrong_here;
    if (hx_allreduce(ctx, sums, 2, HX_U64, HX_SUM) != MPI_SUCCESS ||
        hx_allreduce(ctx, &max_error, 1, HX_DOUBLE, HX_MAX) != MPI_SUCCESS) {
        run->status = "error";
        snprintf(run->reason, sizeof(run->reason), "the harness's own allreduce failed");
        return -1;
    }
    run->checked = 1;
    run->wrong = sums[0];
    run->ranks_wrong = (int)sums[1];
    run->max_error = max_error;
    if (run->wrong > 0) {
        run->status = "failed_check";
        snprintf(run->reason, sizeof(run->reason),
                 "%d of %d ranks left the barrier before the last rank entered (%llu of %d "
                 "staggered entries, by up to %.0f ns)",
                 run->ranks_wrong, ctx->p, (unsigned long long)run->wrong,
                 BARRIER_TRIALS * ctx->p, max_error);
        return -1;
    }
    return 0;
}

/* The rank whose result the test hook corrupts: the last one that has a
 * result (the root, for reduce and gather: result at_root). */
static int corrupt_rank(const struct bench_ctx *ctx, const struct bench_point *pt)
{
    return ((int)pt->coll < CG_COLL_COUNT_ && cg_colls[pt->coll].result == CG_RESULT_AT_ROOT)
               ? pt->root
               : ctx->p - 1;
}

/* Step 1: the check. Returns 0 when the point may be timed. */
static int check_point(const struct bench_ctx *ctx, const struct bench_point *pt,
                       struct point_bufs *b, struct point_run *run)
{
    size_t size = bench_dtype_size(pt->dtype);
    char local[BENCH_REASON_LEN] = "";
    uint64_t wrong = 0;
    double max_error = 0.0;
    uint64_t sums[2];
    uint64_t lsums[2];
    int rc;

    if (pt->coll == CG_COLL_BARRIER) {
        return check_barrier(ctx, pt, run);
    }
    run->reference = (pt->kind == BENCH_GENERATED) ? "native" : "formula";
    memset(b->ref, POISON, b->out_elems * size);
    if (pt->kind == BENCH_GENERATED) {
        rc = call_native_ref(ctx, pt, b);
        if (rc != MPI_SUCCESS) {
            describe_rc(rc, "the reference (native collective)", ctx->rank, 0, local,
                        sizeof(local));
        }
        if (agree(ctx, rc != MPI_SUCCESS, local, run->reason)) {
            run->status = "error";
            return -1;
        }
    } else if (pt->kind == BENCH_MICRO && pt->micro == BENCH_MICRO_LANE_PATTERN) {
        bench_lane_expected(ctx, pt, &run->micro, b->ref);
    } else {
        /* A lane's collective: its ranks, size and salted inputs. */
        bench_expected(run->dpt, run->dctx->p, run->dctx->rank, b->ref, b->res_elems);
    }
    if (!run->micro.idle) {
        prepare_out(run->dctx, run->dpt, b, 1);
    }
    cg_set_error("%s", "");
    {
        struct stderr_capture cap;
        int capture = ctx->rank == 0 && ctx->is_mpich && pt->kind == BENCH_NATIVE &&
                      strcmp(pt->name, "default") != 0;
        if (capture) {
            capture_begin(&cap);
        }
        rc = run_impl(ctx, pt, run, b->send, b->out);
        if (capture) {
            capture_end(&cap, run->said, sizeof(run->said));
        }
    }
    if (rc != MPI_SUCCESS) {
        describe_rc(rc, pt->impl, ctx->rank, run->algo != NULL, local, sizeof(local));
    }
    if (agree(ctx, rc != MPI_SUCCESS, local, run->reason)) {
        run->status = "error";
        return -1;
    }
    /* Test hook (see the top of the file); a micro-benchmark's on rank 0,
     * which takes part in every one. */
    if (ctx->corrupt != NULL && run->algo != NULL && strcmp(ctx->corrupt, run->algo->name) == 0 &&
        ctx->rank == corrupt_rank(ctx, pt) && b->res_elems > 0) {
        b->res[size - 1] ^= 0x40; /* the most significant byte: sign/exponent or high bits */
    } else if (ctx->corrupt != NULL && pt->kind == BENCH_MICRO &&
               strcmp(ctx->corrupt, pt->base) == 0 && ctx->rank == 0 && b->res_elems > 0) {
        b->res[size - 1] ^= 0x40; /* the most significant byte: sign/exponent or high bits */
    }
    bench_compare(pt->dtype, b->res, b->ref, b->res_elems, &wrong, &max_error);
    lsums[0] = wrong;
    lsums[1] = (wrong > 0);
    sums[0] = lsums[0];
    sums[1] = lsums[1];
    if (hx_allreduce(ctx, sums, 2, HX_U64, HX_SUM) != MPI_SUCCESS ||
        hx_allreduce(ctx, &max_error, 1, HX_DOUBLE, HX_MAX) != MPI_SUCCESS) {
        run->status = "error";
        snprintf(run->reason, sizeof(run->reason), "the harness's own allreduce failed");
        return -1;
    }
    run->checked = 1;
    run->wrong = sums[0];
    run->ranks_wrong = (int)sums[1];
    run->max_error = max_error;
    if (run->wrong > 0) {
        run->status = "failed_check";
        snprintf(run->reason, sizeof(run->reason),
                 "%llu element%s wrong on %d of %d ranks (max error %g) against the %s reference",
                 (unsigned long long)run->wrong, (run->wrong == 1) ? "" : "s", run->ranks_wrong,
                 ctx->p, max_error, run->reference);
        return -1;
    }
    return 0;
}

/* What each rank adds to a repetition, max over the ranks at rank 0. */
enum { V_OWN, V_END, V_NBEGIN, V_LATE, V_SLACK, V_FAIL, V_N };
/* Global times travel as u64 ns with this added (a rank's clock may read
 * a little before the epoch), and the earliest start as NBEGIN_BASE less
 * it, so that one max finds both the latest end and the earliest start. */
#define GLOBAL_BIAS 4398046511104.0 /* 2^42 ns, 73 minutes */
#define NBEGIN_BASE ((uint64_t)1 << 62)
#define WINDOW_MAX_NS 2e8            /* a window never grows past 0.2 s */
#define WINDOW_CALM 16               /* repetitions with room to spare before it halves */

/* Rank 0 to every rank after each repetition. */
struct announce {
    int decision;         /* enum bench_decision; -1 a rank failed; -2 every
                           * repetition was invalid */
    int valid;            /* the repetition counted (window: no rank was late) */
    int restart;          /* policy nrep: the batches are over, count from 0 */
    double start;         /* window: the next repetition's start, global ns */
};

static uint64_t global_u64(const struct bench_ctx *ctx, int64_t local)
{
    double g = bench_clock_global(ctx, local) + GLOBAL_BIAS;

    return (g > 0.0) ? (uint64_t)llround(g) : 0;
}

/* The tags of a tagged point (generated, baseline), in repetitions of
 * their own after the timed ones, which ran with the tags off. Why apart:
 * a region costs two clock reads (22 ns with the TSC, runtime/README.md
 * "Timing tags"), and a schedule's five to twenty regions are a tenth or
 * more of a call that takes half a microsecond at 2 ranks (measured:
 * recursive doubling 8 B, tags on 0.56 us, off 0.49, native 0.46;
 * harness/measurements/2026-12-06-speed-quiet.md); timed with them on, the
 * generated code lost to native by its own instruments. Each of these
 * repetitions follows the job's sync, and each tag's slowest rank goes into
 * run->tag_times; the timeline (verbosity trace) records them. Why half the
 * timed count (at least 3, at most BENCH_TAG_REPS): a 64 MiB point stops
 * after 5 to 8 timed repetitions, and as many again doubled its time. 0, or
 * -1 with the point's error recorded. */
#define BENCH_TAG_REPS 30
static int tag_point(const struct bench_ctx *ctx, const struct bench_point *pt,
                     struct point_bufs *b, struct point_run *run, struct bench_trace *trace,
                     int refresh)
{
    long reps = run->n / 2;
    reps = (reps < 3) ? ((run->n < 3) ? run->n : 3) : reps;
    reps = (reps > BENCH_TAG_REPS) ? BENCH_TAG_REPS : reps;
    int ntags = run->ntags;
    int nval = 1 + ntags; /* max over the ranks: a failure flag, then each tag */
    size_t size = bench_dtype_size(pt->dtype);
    uint64_t *local = calloc((size_t)nval, sizeof(uint64_t));
    uint64_t *global = calloc((size_t)nval, sizeof(uint64_t));
    char reason[BENCH_REASON_LEN] = "";
    int bad = (local == NULL || global == NULL);

    run->tag_n = 0;
    if (ctx->rank == 0 && reps > 0) {
        run->tag_times = calloc((size_t)reps * (size_t)ntags, sizeof(uint64_t));
        bad = bad || run->tag_times == NULL;
    }
    if (agree(ctx, bad, "out of memory for the tags", run->reason)) {
        run->status = "error";
        free(local);
        free(global);
        return -1;
    }
    for (long t = 0; t < reps; t++) {
        if (refresh) {
            memcpy(b->out, b->send, b->in_elems * size);
        }
        cg_tag_reset();
        int src = bench_sync(ctx);
        int64_t t0 = bench_clock_now();
        bench_trace_rep_begin(trace, t);
        int rc = run_impl(ctx, pt, run, b->send, b->out);
        int64_t t1 = bench_clock_now();
        bench_trace_rep_end(trace, t0, t1);
        local[0] = (rc != MPI_SUCCESS || src != MPI_SUCCESS);
        for (int k = 0; k < ntags; k++) {
            uint64_t calls = 0;
            cg_tag_read(run->algo->tag_first + k, &local[1 + k], &calls);
        }
        memcpy(global, local, (size_t)nval * sizeof(uint64_t));
        if (hx_allreduce(ctx, global, nval, HX_U64, HX_MAX) != MPI_SUCCESS) {
            run->status = "error";
            snprintf(run->reason, sizeof(run->reason), "the harness's own allreduce failed");
            break;
        }
        if (global[0] != 0) {
            if (src != MPI_SUCCESS) {
                describe_rc(src, "the synchronisation", ctx->rank, 0, reason, sizeof(reason));
            } else if (rc != MPI_SUCCESS) {
                describe_rc(rc, pt->impl, ctx->rank, 1, reason, sizeof(reason));
            }
            agree(ctx, local[0] != 0, reason, run->reason);
            run->status = "error";
            break;
        }
        if (ctx->rank == 0) {
            memcpy(run->tag_times + ((size_t)t * (size_t)ntags), global + 1,
                   (size_t)ntags * sizeof(uint64_t));
        }
        run->tag_n = t + 1;
    }
    free(local);
    free(global);
    return (strcmp(run->status, "ok") == 0) ? 0 : -1;
}

/* Step 2 and 3: warm-up and the timed repetitions, each started as the
 * job's sync says:
 *  - barrier, dissemination: the barrier, then each rank times its own
 *    call; the figure is the slowest rank's own time (as ReproMPI's
 *    barrier-based scheme), and with a clock the global span too (latest
 *    end - earliest start, span_times);
 *  - window (ReproMPI's window scheme): rank 0 announces a start instant
 *    in the global clock, every rank waits for it, calls, and takes its
 *    end; the figure is the latest end - the start. A repetition in which
 *    some rank reached the start late (it came to its wait after the
 *    instant) is invalid: dropped and counted (run->invalid). The window
 *    follows the announcement's delivery: each rank measures its slack
 *    (the start less when the announcement reached it); when the least
 *    slack is under a quarter of the window, the window doubles; after
 *    WINDOW_CALM repetitions with more than half of it to spare, it halves
 *    back toward window_us. Why not double on every invalid one: a rank
 *    that got the announcement in time but was late anyway (its core
 *    taken, or the test hook) would grow the window for nothing. The next
 *    start is announced with rank 0's decision, so a repetition costs one
 *    reduce and one bcast of the harness's.
 * Stops as run->mode says. */
static int time_point(const struct bench_ctx *ctx, const struct bench_point *pt,
                      struct point_bufs *b, struct point_run *run)
{
    const struct bench_timing *tm = &ctx->job->timing;
    size_t size = bench_dtype_size(pt->dtype);
    int ntags = (run->algo != NULL) ? run->algo->tag_count : 0;
    int nval = V_N;
    int window = (tm->sync == BENCH_SYNC_WINDOW);
    /* The span needs every rank's clock on one time line. */
    int spans = !window && ctx->clock.synced;
    /* nrep's batches run before its counted repetitions: room for both. */
    long cap = tm->max_reps;
    uint64_t *local = calloc((size_t)nval, sizeof(uint64_t));
    uint64_t *global = calloc((size_t)nval, sizeof(uint64_t));
    uint64_t *scratch = NULL;
    struct bench_online online;
    struct announce ann;
    char reason[BENCH_REASON_LEN] = "";
    int bad = 0;
    int rc = MPI_SUCCESS;
    enum bench_decision decision = BENCH_GO_ON;
    double start = 0.0;
    double win = tm->window_us * 1e3;
    long calm = 0;
    long attempts = 0;
    int64_t arrived = 0; /* window: when this rank got the announcement */
    struct bench_trace trace; /* verbosity trace: the first repetitions' tag regions */
    /* Why refresh: in place, a reduction's output is the next call's
     * input, and repeated sums or products would grow into different (for
     * floats, eventually infinite) values; every repetition should compute
     * the same thing as the checked call. Copied before the sync, outside
     * the timed region. */
    int refresh = pt->in_place && bench_coll_reduces(pt->coll);

    if (run->mode == LOOP_NREP && tm->nrep.b1 + tm->nrep.b2 > cap) {
        cap = tm->nrep.b1 + tm->nrep.b2;
    }
    run->ntags = ntags;
    memset(&trace, 0, sizeof(trace));
    memset(&online, 0, sizeof(online));
    memset(&ann, 0, sizeof(ann));
    if (ctx->rank == 0) {
        run->times = calloc((size_t)cap, sizeof(uint64_t));
        scratch = calloc((size_t)cap, sizeof(uint64_t));
        online.sorted = scratch;
        if (ctx->job->verbosity_full) {
            run->all_times = calloc((size_t)cap * (size_t)ctx->p, sizeof(uint64_t));
        }
        if (spans) {
            run->span_times = calloc((size_t)cap, sizeof(uint64_t));
        }
        bad = run->times == NULL || scratch == NULL ||
              (ctx->job->verbosity_full && run->all_times == NULL) ||
              (spans && run->span_times == NULL);
    }
    bad = bad || local == NULL || global == NULL;
    if (agree(ctx, bad, "out of memory for the repetitions", run->reason)) {
        run->status = "error";
        free(local);
        free(global);
        free(scratch);
        return -1;
    }
    if (window && !ctx->clock.synced) {
        /* The same on every rank: the sync's outcome is collective. */
        run->status = "error";
        snprintf(run->reason, sizeof(run->reason),
                 "sync \"window\" needs the global clock, which could not be synchronised "
                 "(see the job's log)");
        free(local);
        free(global);
        free(scratch);
        return -1;
    }

    for (long w = 0; w < tm->warmup && rc == MPI_SUCCESS; w++) {
        if (refresh) {
            memcpy(b->out, b->send, b->in_elems * size);
        }
        rc = run_impl(ctx, pt, run, b->send, b->out);
    }
    if (rc != MPI_SUCCESS) {
        describe_rc(rc, pt->impl, ctx->rank, run->algo != NULL, reason, sizeof(reason));
    }
    if (agree(ctx, rc != MPI_SUCCESS, reason, run->reason)) {
        run->status = "error";
        free(local);
        free(global);
        free(scratch);
        return -1;
    }

    if (window) {
        if (ctx->rank == 0) {
            ann.start = bench_clock_global(ctx, bench_clock_now()) + win;
        }
        if (hx_bcast(ctx, &ann, (int)sizeof(ann), 0) != MPI_SUCCESS) {
            run->status = "error";
            snprintf(run->reason, sizeof(run->reason), "the harness's own bcast failed");
            free(local);
            free(global);
            free(scratch);
            return -1;
        }
        arrived = bench_clock_now();
    }
    if (run->mode != LOOP_T1 && bench_trace_start(ctx, &trace) != 0) {
        fprintf(stderr, "bench: rank %d: no memory for the trace of %s; it is not written\n",
                ctx->rank, pt->id);
    }
    /* The timed repetitions run with the tags off; a tagged point's tags,
     * and its timeline, come from tag_point's repetitions after them. */
    cg_tag_enable(0);
    start = MPI_Wtime();
    run->n = 0;
    run->invalid = 0;
    run->late_starts = 0;
    for (long attempt = 0; decision == BENCH_GO_ON; attempt++) {
        int64_t t0;
        int64_t t1;
        int src = MPI_SUCCESS;
        int late = 0;
        if (refresh) {
            memcpy(b->out, b->send, b->in_elems * size);
        }
        if (window) {
            t0 = bench_clock_local_at(ctx, ann.start);
            if (ctx->rank == ctx->late_rank && attempt % ctx->late_every == ctx->late_every - 1) {
                /* Test hook: this rank comes to the window after its start. */
                while (bench_clock_now() < t0 + 200000) {
                }
            }
            late = bench_clock_wait(ctx, t0);
        } else {
            /* Barrier points too: the job's sync. Why not always the
             * harness's dissemination barrier for them (MPI_Barrier is the
             * call under test, and a job forcing a barrier algorithm also
             * forces the synchronising MPI_Barrier): on this 2-core machine
             * it made MPICH's barriers erratic, 5 us to 7 ms at 4 ranks,
             * where MPI_Barrier gave 5 to 10 us (harness/README.md). */
            src = bench_sync(ctx);
            t0 = bench_clock_now();
        }
        if (ntags == 0) {
            bench_trace_rep_begin(&trace, attempt);
        }
        rc = run_impl(ctx, pt, run, b->send, b->out);
        t1 = bench_clock_now();
        if (ntags == 0) {
            bench_trace_rep_end(&trace, t0, t1);
        }
        local[V_OWN] = (t1 > t0) ? (uint64_t)(t1 - t0) : 0;
        local[V_END] = ctx->clock.synced ? global_u64(ctx, t1) : 0;
        local[V_NBEGIN] = ctx->clock.synced ? NBEGIN_BASE - global_u64(ctx, t0) : 0;
        /* 2: the announcement came after the start (a longer window would
         * help), 1: the rank left the wait late (its core was taken; it
         * would not), so that the max over the ranks tells which. */
        local[V_LATE] = (late == 1) ? 2 : (late == 2) ? 1 : 0;
        /* The slack as NBEGIN_BASE less it, so that the max is the least. */
        local[V_SLACK] = window ? (uint64_t)((int64_t)NBEGIN_BASE - (t0 - arrived)) : 0;
        local[V_FAIL] = (rc != MPI_SUCCESS || src != MPI_SUCCESS);
        memcpy(global, local, (size_t)nval * sizeof(uint64_t));
        if (hx_reduce(ctx, global, nval, HX_U64, HX_MAX) != MPI_SUCCESS ||
            (ctx->job->verbosity_full &&
             hx_gather(ctx, &local[V_OWN], (int)sizeof(uint64_t),
                       (ctx->rank == 0) ? run->all_times + ((size_t)run->n * (size_t)ctx->p)
                                        : NULL) != MPI_SUCCESS)) {
            run->status = "error";
            snprintf(run->reason, sizeof(run->reason),
                     "the harness's own reduce or gather failed");
            break;
        }
        if (ctx->rank == 0) {
            attempts++;
            ann.restart = 0;
            /* Invalid (ReproMPI's rule): a rank got the announcement after
             * the start instant. A rank that got it in time but left the
             * wait late (its core was taken meanwhile: an oversubscribed or
             * busy host) started the call late; such repetitions are kept
             * and counted (late_starts), since on a host with more ranks
             * than free cores nearly every one is (measured on this 2-core
             * machine under load: most repetitions, even at 2 ranks). */
            ann.valid = !(window && global[V_LATE] == 2);
            if (window && ann.valid && global[V_LATE] == 1) {
                run->late_starts++;
            }
            if (window) {
                double slack = (double)((int64_t)NBEGIN_BASE - (int64_t)global[V_SLACK]);
                if (slack < win / 4.0) {
                    win = (2.0 * win < WINDOW_MAX_NS) ? 2.0 * win : WINDOW_MAX_NS;
                    calm = 0;
                } else if (slack > win / 2.0 && ++calm >= WINDOW_CALM &&
                           win > tm->window_us * 1e3) {
                    win = (win / 2.0 > tm->window_us * 1e3) ? win / 2.0 : tm->window_us * 1e3;
                    calm = 0;
                }
            }
            if (global[V_FAIL] != 0) {
                ann.decision = -1;
            } else {
                if (!ann.valid) {
                    run->invalid++;
                } else {
                    uint64_t fig = global[V_OWN];
                    if (window) {
                        uint64_t s0 = (uint64_t)llround(ann.start + GLOBAL_BIAS);
                        fig = (global[V_END] > s0) ? global[V_END] - s0 : 0;
                    }
                    run->times[run->n] = fig;
                    if (spans) {
                        uint64_t first = NBEGIN_BASE - global[V_NBEGIN];
                        run->span_times[run->n] =
                            (global[V_END] > first) ? global[V_END] - first : 0;
                    }
                    run->n++;
                    bench_online_add(&online, fig);
                }
                switch (run->mode) {
                case LOOP_NREP:
                    decision = bench_nrep_decide(&run->nrep, tm, &online, &ann.restart);
                    break;
                case LOOP_T1:
                    decision = bench_nrep_t1_decide(tm, &online);
                    break;
                default:
                    decision = bench_decide(tm, &online, MPI_Wtime() - start);
                    break;
                }
                /* Late ranks again and again (a window that cannot hold
                 * them): stop, at the latest after 2 max_reps + 100
                 * attempts or 10 budgets and a second, min_reps or not. */
                if (decision == BENCH_GO_ON && window && attempts >= (2 * cap) + 100) {
                    decision = BENCH_STOP_MAX;
                }
                if (decision == BENCH_GO_ON && window && run->mode != LOOP_NREP &&
                    MPI_Wtime() - start > (10.0 * tm->budget_s) + 1.0) {
                    decision = BENCH_STOP_BUDGET;
                }
                if (decision != BENCH_GO_ON && run->n == 0) {
                    ann.decision = -2;
                } else {
                    ann.decision = (int)decision;
                }
                if (ann.restart) {
                    run->n = 0;
                    run->invalid = 0;
                    run->late_starts = 0;
                    online.n = 0;
                    online.mean = 0.0;
                    online.m2 = 0.0;
                }
                if (window) {
                    ann.start = bench_clock_global(ctx, bench_clock_now()) + win;
                }
            }
        }
        if (hx_bcast(ctx, &ann, (int)sizeof(ann), 0) != MPI_SUCCESS) {
            run->status = "error";
            snprintf(run->reason, sizeof(run->reason), "the harness's own bcast failed");
            break;
        }
        arrived = bench_clock_now();
        if (ntags == 0) {
            bench_trace_rep_valid(&trace, attempt, ann.valid);
        }
        if (ann.decision == -1) {
            if (src != MPI_SUCCESS) {
                describe_rc(src, "the synchronisation", ctx->rank, 0, reason, sizeof(reason));
            } else if (rc != MPI_SUCCESS) {
                describe_rc(rc, pt->impl, ctx->rank, run->algo != NULL, reason, sizeof(reason));
            }
            agree(ctx, local[V_FAIL] != 0, reason, run->reason);
            run->status = "error";
            break;
        }
        if (ann.decision == -2) {
            run->status = "error";
            snprintf(run->reason, sizeof(run->reason),
                     "no valid repetition: in each of %ld a rank reached the window late "
                     "(the last window was %.0f us)",
                     run->invalid, win / 1e3);
            break;
        }
        if (ctx->rank != 0) {
            run->n = ann.restart ? 0 : run->n + (ann.valid ? 1 : 0);
        }
        decision = (enum bench_decision)ann.decision;
    }
    if (ctx->rank == 0) {
        run->t1_s = MPI_Wtime() - start;
        run->window_ns = win;
        run->clock_age_s = ctx->clock.synced ? MPI_Wtime() - ctx->clock.synced_at : NAN;
    }
    cg_tag_enable(1);
    free(local);
    free(global);
    free(scratch);
    if (strcmp(run->status, "ok") != 0 ||
        (ntags > 0 && run->mode != LOOP_T1 && tag_point(ctx, pt, b, run, &trace, refresh) != 0)) {
        bench_trace_free(&trace);
        return -1;
    }
    /* The trace is the point's own file: a failure to write it is said,
     * and the record stays what it is. */
    if (bench_trace_write(ctx, pt, run->algo, &trace, reason, sizeof(reason)) != 0 &&
        ctx->rank == 0) {
        fprintf(stderr, "bench: warning: %s\n", reason);
    }
    bench_trace_free(&trace);
    run->stop = bench_stop_name(decision);
    return 0;
}
/* Generated points: the schedule's ranged parameters for the calls to come
 * (bench_params.c). The same on every rank: a failure needs no agreement. */
static int set_params(const struct bench_point *pt, struct point_run *run)
{
    const struct cg_algo *a = run->algo;

    if (bench_params_apply(a->name, a->params, a->nparams, pt, &run->params, run->reason,
                           sizeof(run->reason)) != 0) {
        run->status = "error";
        return -1;
    }
    return 0;
}

/* Removes the settings set_params made. */
static void clear_params(const struct point_run *run)
{
    if (run->algo != NULL) {
        bench_params_clear(run->algo->name, run->algo->params, run->algo->nparams);
    }
}

static void run_point(const struct bench_ctx *ctx, const struct bench_point *pt,
                      struct point_run *run)
{
    struct point_bufs b;
    size_t size = bench_dtype_size(pt->dtype);
    int bad;

    memset(&b, 0, sizeof(b));
    run->status = "ok";
    run->dctx = ctx;
    run->dpt = pt;
    if (bench_mpi_dtype(pt->dtype) == MPI_DATATYPE_NULL && pt->coll != CG_COLL_BARRIER) {
        /* float16 and bfloat16 are the GPU mode's (barrier's datatype is a
         * placeholder). Decided from the job alone: the same on every rank. */
        run->status = "skipped";
        snprintf(run->reason, sizeof(run->reason),
                 "datatype %s: MPI has no standard 16-bit floating-point type (MPIX_C_FLOAT16 "
                 "is an MPICH extension; there is no bfloat16); it runs in the GPU mode, "
                 "build/cuda/bench_cuda",
                 bench_dtype_name(pt->dtype));
        return;
    }
    if (pt->kind == BENCH_GENERATED) {
        run->algo = find_algo(pt);
        if (run->algo == NULL) {
            run->status = "error";
            snprintf(run->reason, sizeof(run->reason),
                     pt->baseline ? "no baseline named \"%s\" in this build "
                                    "(harness/baselines/baselines.h)"
                                  : "no generated schedule named \"%s\" in this build "
                                    "(emitted/registry.c)",
                     pt->name);
            return;
        }
        if (run->algo->coll != pt->coll) {
            run->status = "error";
            snprintf(run->reason, sizeof(run->reason), "schedule \"%s\" implements %s, not %s",
                     pt->name, cg_coll_name(run->algo->coll), cg_coll_name(pt->coll));
            run->algo = NULL;
            return;
        }
        if (set_params(pt, run) != 0) {
            return;
        }
    }
    if (pt->kind == BENCH_MICRO) {
        char local[BENCH_REASON_LEN] = "";
        bad = (bench_micro_prepare(ctx, pt, &run->micro, local, sizeof(local)) != 0);
        if (agree(ctx, bad, local, run->reason)) {
            run->status = "error";
            return;
        }
        if (pt->micro == BENCH_MICRO_MULTI_COLLECTIVE) {
            run->dctx = &run->micro.lane;
            run->dpt = &run->micro.lpt;
        }
    }
    if (pt->kind == BENCH_BOUND) {
        /* What the runner validates (descriptor.c), checked again here for
         * job files written by hand. */
        const char *why = (strcmp(pt->name, "sendrecv_reduce") != 0)
                              ? "is not a bound of this build (the one bound is "
                                "bound:sendrecv_reduce)"
                          : (pt->coll != CG_COLL_ALLREDUCE) ? "is a bound of allreduce only"
                          : (ctx->p != 2)                    ? "runs at 2 ranks only"
                          : pt->in_place                     ? "does not run in place"
                                                             : NULL;
        if (why != NULL) {
            run->status = "error";
            snprintf(run->reason, sizeof(run->reason), "%s %s", pt->impl, why);
            return;
        }
    }
    /* The reference (generated points) and native points go through MPI's
     * int counts. */
    if (pt->count > (size_t)INT_MAX) {
        run->status = "error";
        snprintf(run->reason, sizeof(run->reason),
                 "count %zu is above INT_MAX, which MPI's native collectives cannot take",
                 pt->count);
        clear_params(run);
        return;
    }
    if (pt->kind == BENCH_MICRO && (run->micro.idle || pt->micro == BENCH_MICRO_LANE_PATTERN)) {
        /* An idle rank has nothing; a lane sends and receives its part. */
        b.in_elems = run->micro.n;
        b.out_elems = run->micro.n;
        b.res_elems = run->micro.n;
    } else if (size_bufs(run->dctx, run->dpt, &b) != 0) {
        run->status = "error";
        snprintf(run->reason, sizeof(run->reason), "count %zu: buffer sizes overflow", pt->count);
        clear_params(run);
        return;
    }
    /* Mapped, not malloc'd: placed alike for every point of every job
     * (bench_buf_map says why). */
    b.send_B = (b.in_elems > 0) ? b.in_elems * size : 1;
    b.out_B = (b.out_elems > 0) ? b.out_elems * size : 1;
    b.send = bench_buf_map(b.send_B);
    b.out = bench_buf_map(b.out_B);
    /* Why out_elems: a reference call may write where the result is not
     * significant (exscan's rank 0), so ref has out's room. */
    b.ref = bench_buf_map(b.out_B);
    bad = (b.send == NULL || b.out == NULL || b.ref == NULL);
    if (agree(ctx, bad, "out of memory for the buffers", run->reason)) {
        run->status = "error";
        free_bufs(&b);
        clear_params(run);
        return;
    }
    {
        /* The data side: ctx and pt, or a lane of micro:multi_collective. */
        const struct bench_ctx *dc = run->dctx;
        const struct bench_point *dp = run->dpt;
        b.res = b.out;
        const struct cg_coll_info *ci =
            ((int)dp->coll < CG_COLL_COUNT_) ? &cg_colls[dp->coll] : NULL;
        if (ci != NULL && ci->in_place == CG_IN_PLACE_RECV_AT_ROOT && dp->in_place &&
            dc->rank == dp->root && !run->micro.idle) {
            /* In place in recvbuf (scatter), the root's block stays in
             * sendbuf: that is its result. */
            b.res = b.send + ((size_t)dp->root * dp->count * size);
        }
        if (pt->kind == BENCH_MICRO && pt->micro == BENCH_MICRO_LANE_PATTERN) {
            bench_lane_input(ctx, pt, &run->micro, b.send);
        } else if (ci != NULL && ci->result == CG_RESULT_FROM_ROOT) {
            /* The root's data (bcast, scatter: in_elems is 0 elsewhere for scatter). */
            if (dc->rank == dp->root) {
                for (size_t i = 0; i < b.in_elems; i++) {
                    bench_value(dp, dc->p, dp->root, i, b.send + (i * size));
                }
            }
        } else {
            for (size_t i = 0; i < b.in_elems; i++) {
                bench_value(dp, dc->p, dc->rank, i, b.send + (i * size));
            }
        }
    }
    /* The roofline before the check: every rank gets here (each return
     * above is agreed on), whatever the implementation does next. A failed
     * measurement leaves the record's "roofline" null. */
    if (pt->kind != BENCH_MICRO && bench_roof_measure(ctx, pt, &run->roof) != MPI_SUCCESS) {
        memset(&run->roof, 0, sizeof(run->roof));
    }
    if (check_point(ctx, pt, &b, run) == 0) {
        time_point(ctx, pt, &b, run);
    }
    free_bufs(&b);
    clear_params(run);
}

/* ---- the record ------------------------------------------------------------------ */

/* "params": generated points, each ranged parameter of the schedule with
 * its value, requested (the point's, else the default) or effective (what
 * the code reads: set_params); micro-benchmarks, {"k": lanes}; null for
 * native points and the bound, which have none. */
static cJSON *params_block(const struct bench_point *pt, const struct point_run *run,
                           int effective)
{
    const struct cg_algo *a = run->algo;

    if (pt->kind == BENCH_MICRO) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddItemToObject(o, "k", cJSON_CreateNumber(pt->lanes));
        return o;
    }
    return bench_params_json(pt, a != NULL, (a != NULL) ? a->params : NULL,
                             (a != NULL) ? a->nparams : 0, effective ? &run->params : NULL);
}

/* The requested block, or the effective one when eff is given. */
static cJSON *block(const struct bench_ctx *ctx, const struct bench_point *pt,
                    const struct bench_effective *eff, const struct point_run *run)
{
    const struct bench_job *job = ctx->job;
    cJSON *o = cJSON_CreateObject();

    if (o == NULL) {
        return NULL;
    }
    if (eff == NULL) {
        bench_record_point(o, pt, pt->name, job->knobs_forced_by);
    } else {
        bench_record_point(o, pt, eff->algorithm, eff->forced_by);
    }
    bench_record_shape(o, ctx, eff != NULL);
    cJSON_AddItemToObject(o, "params", params_block(pt, run, eff != NULL));
    if (eff == NULL) {
        cJSON_AddItemToObject(o, "knobs", (job->knobs != NULL) ? cJSON_Duplicate(job->knobs, 1)
                                                               : cJSON_CreateObject());
        /* Why null: the stopping rule decides the repetitions; only a job
         * with min_reps == max_reps asks for a number. */
        cJSON_AddItemToObject(o, "reps", (job->timing.min_reps == job->timing.max_reps)
                                             ? cJSON_CreateNumber((double)job->timing.min_reps)
                                             : cJSON_CreateNull());
    } else {
        cJSON_AddItemToObject(o, "knobs", (eff->knobs != NULL) ? cJSON_Duplicate(eff->knobs, 1)
                                                               : cJSON_CreateNull());
        cJSON_AddItemToObject(o, "reps", (run->stop != NULL) ? cJSON_CreateNumber((double)run->n)
                                                             : cJSON_CreateNull());
        cJSON_AddItemToObject(o, "algorithm_source", cg_json_string(eff->source));
    }
    return o;
}

/* Rank 0: the record line (and raw file), bench_record.c's format.
 * Returns 0, or -1 with msg when it could not be written. */
static int write_record(const struct bench_ctx *ctx, const struct bench_point *pt,
                        const struct point_run *run, char *msg, size_t msglen)
{
    struct bench_effective eff;
    struct bench_record r;
    cJSON *req;
    cJSON *effb;
    int rc;

    bench_effective_for(ctx, pt, &eff);
    if (run->said[0] != '\0') {
        /* The library said, for this very call, that it ran something
         * other than what was forced. */
        eff.source = "reported_fallback";
        eff.algorithm[0] = '\0';
        bench_fmt(eff.forced_by, sizeof(eff.forced_by),
                  "MPICH wrote on stderr at the checked call: \"%s\": it ran another "
                  "algorithm, which it does not name",
                  run->said);
    }
    req = block(ctx, pt, NULL, run);
    effb = block(ctx, pt, &eff, run);

    memset(&r, 0, sizeof(r));
    r.pt = pt;
    r.roof = run->roof.measured ? &run->roof : NULL;
    r.p = run->dctx->p; /* a lane's collective's (micro:multi_collective: p is the lane's) */
    r.status = run->status;
    r.reason = run->reason;
    r.collective = bench_coll_name(pt->coll);
    r.backend = "mpi";
    r.kind = pt->baseline                  ? "baseline"
             : (pt->kind == BENCH_GENERATED) ? "generated"
             : (pt->kind == BENCH_BOUND)    ? "bound"
             : (pt->kind == BENCH_MICRO)    ? "micro"
                                            : "native";
    r.schedule_file = (run->algo != NULL) ? run->algo->file : NULL;
    r.requested = req;
    r.effective = effb;
    r.n = run->n;
    r.stop = run->stop;
    r.times = run->times;
    r.all_times = ctx->job->verbosity_full ? run->all_times : NULL;
    r.all_p = ctx->p;
    r.checked = run->checked;
    r.reference = run->reference;
    r.wrong = run->wrong;
    r.max_error = run->max_error;
    r.tag_first = (run->algo != NULL) ? run->algo->tag_first : 0;
    r.ntags = run->ntags;
    r.tag_infos = (pt->baseline && run->algo != NULL) ? bench_baseline_tag_infos(run->algo) : NULL;
    r.tag_n = run->tag_n; /* tag_point's repetitions carry the tags */
    r.share_of_call_tag = 1; /* their call tag ran with the tags on, timing's without */
    r.tag_times = run->tag_times;
    r.window = (ctx->job->timing.sync == BENCH_SYNC_WINDOW);
    r.span_times = run->span_times;
    r.invalid = run->invalid;
    r.late_starts = run->late_starts;
    r.window_ns = run->window_ns;
    r.clocked = ctx->clock.synced;
    r.clock_error_ns = ctx->clock.err_ns;
    r.clock_age_s = run->clock_age_s;
    r.validity_known = 1;
    r.latency_floor_ns = ctx->lat.measured ? ctx->lat.floor_ns : NAN;
    r.oversubscribed = ctx->oversubscribed;
    r.host_ranks = ctx->host_ranks;
    r.host_cores = ctx->host_cores;
    if (run->mode == LOOP_NREP) {
        r.nrep = 1;
        r.nrep_t1_s = run->nrep.t1_s;
        r.nrep_t1_launches = run->nrep_t1_launches;
        r.nrep_tmin_ns = run->nrep.tmin_ns;
        r.nrep_batch = run->nrep.batch;
        r.nrep_target = run->nrep.target;
        r.nrep_capped = run->nrep.capped;
    }
    rc = bench_record_write(ctx->job, &r, msg, msglen);
    cJSON_Delete(req);
    cJSON_Delete(effb);
    cJSON_Delete(eff.knobs);
    return rc;
}


static void free_run(struct point_run *run)
{
    free(run->times);
    free(run->all_times);
    free(run->tag_times);
    free(run->span_times);
    memset(run, 0, sizeof(*run));
}

/* ---- policy nrep: t1 per group (bench_nrep.c) -------------------------------------- */

struct t1_entry {
    char group[320];      /* bench_nrep_group */
    double t1_s;          /* rank 0: its t1 */
    int nfiles;           /* estimation launches it is the longest of; 0: this launch's */
};

struct t1_cache {
    struct t1_entry *e;   /* groups seen in this launch */
    int n;                /* entries */
    int cap;              /* allocated */
};

/* Collective: the t1 of pt's group. Cached per launch; else, on rank 0,
 * the longest in the estimation launches' files; else (or in an
 * estimation launch, `estimate`) measured here: 1-element repetitions of
 * the same implementation until their RSE is below t1_rse, timed from the
 * first to the last (LOOP_T1). NaN when it could not be measured (the
 * point then runs max_reps, and says so). */
static double group_t1(const struct bench_ctx *ctx, struct t1_cache *cache,
                       const struct bench_point *pt, int estimate, int *nfiles)
{
    char group[320];
    double t1 = NAN;
    int nf = 0;
    int need = 1;

    bench_nrep_group(pt, group, sizeof(group));
    for (int i = 0; i < cache->n; i++) {
        if (strcmp(cache->e[i].group, group) == 0) {
            *nfiles = cache->e[i].nfiles;
            return cache->e[i].t1_s;
        }
    }
    if (ctx->rank == 0 && !estimate) {
        t1 = bench_nrep_t1_from(ctx->job, group, &nf);
        need = isnan(t1);
    }
    if (hx_bcast(ctx, &need, (int)sizeof(need), 0) != MPI_SUCCESS) {
        need = 0;
    }
    if (need) {
        struct bench_point p1 = *pt;
        struct point_run r1;
        memset(&r1, 0, sizeof(r1));
        p1.count = (pt->coll == CG_COLL_BARRIER) ? 0
                   : (pt->kind == BENCH_MICRO)    ? (size_t)pt->lanes
                                                  : 1;
        r1.mode = LOOP_T1;
        run_point(ctx, &p1, &r1);
        t1 = (ctx->rank == 0 && strcmp(r1.status, "ok") == 0) ? r1.t1_s : NAN;
        nf = 0;
        free_run(&r1);
    }
    if (cache->n == cache->cap) {
        int cap = (cache->cap > 0) ? 2 * cache->cap : 16;
        struct t1_entry *e = realloc(cache->e, (size_t)cap * sizeof(*e));
        if (e == NULL) {
            *nfiles = nf;
            return t1;
        }
        cache->e = e;
        cache->cap = cap;
    }
    snprintf(cache->e[cache->n].group, sizeof(cache->e[cache->n].group), "%s", group);
    cache->e[cache->n].t1_s = t1;
    cache->e[cache->n].nfiles = nf;
    cache->n++;
    *nfiles = nf;
    return t1;
}

/* An estimation launch (timing.nrep.estimate_out): t1 of every group of
 * the job, written by rank 0 to estimate_out ({"t1_s": {group: seconds}},
 * cJSON); no record. The runner names these files in the measurement
 * launches' timing.nrep.t1_from. Returns bench's exit status. */
static int estimate_t1(const struct bench_ctx *ctx, char *msg, size_t msglen)
{
    const struct bench_job *job = ctx->job;
    struct t1_cache cache = {NULL, 0, 0};
    cJSON *doc = (ctx->rank == 0) ? cJSON_CreateObject() : NULL;
    cJSON *t1s = cJSON_CreateObject();
    int ok = 1;

    for (int i = 0; i < job->npoints; i++) {
        char group[320];
        int nf = 0;
        double t1 = group_t1(ctx, &cache, &job->points[i], 1, &nf);
        bench_nrep_group(&job->points[i], group, sizeof(group));
        if (ctx->rank == 0 && isfinite(t1) &&
            cJSON_GetObjectItemCaseSensitive(t1s, group) == NULL) {
            cJSON_AddItemToObject(t1s, group, cJSON_CreateNumber(t1));
        }
    }
    if (ctx->rank == 0) {
        char *text;
        cJSON_AddItemToObject(doc, "schema_version", cJSON_CreateNumber(1));
        cJSON_AddItemToObject(doc, "campaign", cg_json_string(job->campaign));
        cJSON_AddItemToObject(doc, "run_id", cJSON_CreateNumber((double)job->run_id));
        cJSON_AddItemToObject(doc, "launch", cJSON_CreateNumber(job->launch));
        cJSON_AddItemToObject(doc, "t1_rse", cJSON_CreateNumber(job->timing.nrep.t1_rse));
        cJSON_AddItemToObject(doc, "t1_s", t1s);
        t1s = NULL;
        text = cJSON_Print(doc);
        ok = (text != NULL &&
              cg_write_atomic(job->timing.nrep.estimate_out, text, strlen(text)) == 0);
        if (!ok) {
            bench_fmt(msg, msglen, "%s: %s", job->timing.nrep.estimate_out,
                      (text == NULL) ? "out of memory" : strerror(errno));
            fprintf(stderr, "bench: %s\n", msg);
        }
        cJSON_free(text);
    }
    cJSON_Delete(t1s);
    cJSON_Delete(doc);
    free(cache.e);
    if (hx_bcast(ctx, &ok, (int)sizeof(ok), 0) != MPI_SUCCESS) {
        ok = 0;
    }
    return ok ? 0 : EXIT_OUTPUT;
}

/* Collective, before each point: syncs the clocks again once
 * timing.clock.resync_s has passed since the last sync (rank 0 decides). */
static void resync_if_due(struct bench_ctx *ctx)
{
    int again = 0;

    if (ctx->rank == 0) {
        again = ctx->clock.synced &&
                MPI_Wtime() - ctx->clock.synced_at > ctx->job->timing.clock.resync_s;
    }
    if (hx_bcast(ctx, &again, (int)sizeof(again), 0) == MPI_SUCCESS && again &&
        bench_clock_sync(ctx) != MPI_SUCCESS) {
        ctx->clock.synced = 0;
    }
}

/* ---- main ------------------------------------------------------------------------ */

static const char bench_usage[] =
    "usage: bench JOBFILE\n"
    "\n"
    "Runs the points of one launch's job file (written by 'collgen run',\n"
    "harness/FORMATS.md) under mpirun or srun, at the job's number of ranks, and\n"
    "appends their records to the campaign's points.jsonl and raw/.\n"
    "Exit status: 0 every point recorded; 2 usage or a job file that does not\n"
    "parse; 3 the wrong number of ranks; 4 the outputs could not be written.\n";

int main(int argc, char **argv)
{
    struct bench_job job;
    struct bench_ctx ctx;
    struct t1_cache t1s = {NULL, 0, 0};
    char msg[1024];
    char version[MPI_MAX_LIBRARY_VERSION_STRING + 1];
    int vlen = 0;
    int world_rank = 0;
    int world_size = 0;
    int status = 0;

    status = bench_start(&argc, &argv, "bench", bench_usage, &job, &world_rank, &world_size);
    if (status >= 0) {
        return status;
    }
    status = 0;
    if (strcmp(job.library, CG_FLAVOUR) != 0) {
        if (world_rank == 0) {
            fprintf(stderr, "%s: library is \"%s\" but this bench is built for %s\n", job.path,
                    job.library, CG_FLAVOUR);
        }
        bench_job_free(&job);
        MPI_Finalize();
        return EXIT_USAGE;
    }

    memset(&ctx, 0, sizeof(ctx));
    ctx.job = &job;
    ctx.rank = world_rank;
    ctx.p = world_size;
    ctx.ranks_per_node = 1;
    ctx.late_rank = -1;
    if (getenv("CG_BENCH_LATE") != NULL &&
        (sscanf(getenv("CG_BENCH_LATE"), "%d:%d", &ctx.late_rank, &ctx.late_every) != 2 ||
         ctx.late_rank < 0 || ctx.late_every < 1)) {
        if (world_rank == 0) {
            fprintf(stderr, "bench: CG_BENCH_LATE=\"%s\" is not RANK:EVERY (a rank, a count >= 1)\n",
                    getenv("CG_BENCH_LATE"));
        }
        bench_job_free(&job);
        MPI_Finalize();
        return EXIT_USAGE;
    }
    ctx.corrupt = getenv("CG_BENCH_CORRUPT");
    if (ctx.corrupt != NULL && ctx.corrupt[0] == '\0') {
        ctx.corrupt = NULL;
    }
    memset(version, 0, sizeof(version));
    if (MPI_Get_library_version(version, &vlen) == MPI_SUCCESS) {
        ctx.is_openmpi = strstr(version, "Open MPI") != NULL;
        ctx.is_mpich = !ctx.is_openmpi && strstr(version, "MPICH") != NULL;
    }
    /* Errors are returned, never fatal: a failing point is recorded and the
     * job goes on. Two duplicates: the collectives under test on one, the
     * harness's barriers and agreements on the other, so that no harness
     * message can ever match one of the implementation's. */
    {
        int rc = MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        if (rc == MPI_SUCCESS) {
            rc = MPI_Comm_dup(MPI_COMM_WORLD, &ctx.comm);
        }
        if (rc == MPI_SUCCESS) {
            rc = MPI_Comm_dup(MPI_COMM_WORLD, &ctx.sync_comm);
        }
        if (rc == MPI_SUCCESS) {
            rc = MPI_Comm_set_errhandler(ctx.comm, MPI_ERRORS_RETURN);
        }
        if (rc == MPI_SUCCESS) {
            rc = MPI_Comm_set_errhandler(ctx.sync_comm, MPI_ERRORS_RETURN);
        }
        if (rc != MPI_SUCCESS) {
            describe_rc(rc, "MPI_Comm_dup", world_rank, 0, msg, sizeof(msg));
        }
        status = (rc == MPI_SUCCESS) ? 0 : EXIT_LAUNCH;
    }
    if (status != 0) {
        /* Why exit 3: duplicating MPI_COMM_WORLD runs the library's own
         * internal collectives, which a job's knobs can break (an
         * algorithm forced where it cannot apply); nothing of the job can
         * run, so every point is the runner's error. */
        if (world_rank == 0) {
            fprintf(stderr, "bench: could not set up communicators: %s\n", msg);
        }
        bench_job_free(&job);
        MPI_Finalize();
        return EXIT_LAUNCH;
    }
    bench_mpit_init(&ctx);
    if (bench_clock_init(&ctx, msg, sizeof(msg)) != 0) {
        if (world_rank == 0) {
            fprintf(stderr, "bench: %s\n", msg);
        }
        bench_mpit_fini(&ctx);
        bench_job_free(&job);
        MPI_Finalize();
        return EXIT_USAGE;
    }
    /* The global clock and the latency floor, once per launch before any
     * point (the clock again when resync_s has passed: resync_if_due). A
     * failure of either is an MPI error of the harness's own messages: the
     * records then say the clock or the floor is unknown. */
    if (bench_clock_sync(&ctx) != MPI_SUCCESS) {
        ctx.clock.synced = 0;
        if (world_rank == 0) {
            fprintf(stderr, "bench: the clock sync failed; window points will be errors\n");
        }
    }
    if (bench_latency_measure(&ctx) != MPI_SUCCESS) {
        ctx.lat.measured = 0;
        if (world_rank == 0) {
            fprintf(stderr, "bench: the latency ping-pong failed; the floor is unknown\n");
        }
    }

    {
        int ok = (bench_write_run_meta(&ctx, msg, sizeof(msg)) == 0);
        if (ok && ctx.rank == 0 && bench_mkdirs(job.out_raw_dir) != 0) {
            snprintf(msg, sizeof(msg), "%s: %s", job.out_raw_dir, strerror(errno));
            ok = 0;
        }
        if (hx_bcast(&ctx, &ok, (int)sizeof(ok), 0) != MPI_SUCCESS) {
            ok = 0;
        }
        if (!ok) {
            if (ctx.rank == 0) {
                fprintf(stderr, "bench: %s\n", msg);
            }
            status = EXIT_OUTPUT;
        }
    }

    if (status == 0) {
        /* The node and lane structure of ctx.comm as the runtime sees it
         * (CG_PPN, else shared memory): the records' effective node shape,
         * and the lanes of the micro-benchmarks. Collective; a failure is
         * recorded in every point's effective block, not fatal. */
        char local[BENCH_REASON_LEN] = "";
        int trc = cg_topo_of(ctx.comm, &ctx.topo);
        if (trc != MPI_SUCCESS) {
            describe_rc(trc, "cg_topo_of (the topology)", ctx.rank, 1, local, sizeof(local));
        }
        if (agree(&ctx, trc != MPI_SUCCESS, local, ctx.topo_error)) {
            ctx.topo = NULL;
        }
    }

    if (status == 0 && job.timing.nrep.estimate_out != NULL) {
        /* An estimation launch of policy nrep: t1 per group, no record. */
        status = estimate_t1(&ctx, msg, sizeof(msg));
    }
    for (int i = 0; i < job.npoints && status == 0 && job.timing.nrep.estimate_out == NULL; i++) {
        struct point_run run;
        int ok = 1;
        memset(&run, 0, sizeof(run));
        resync_if_due(&ctx);
        if (job.timing.policy == BENCH_POLICY_NREP) {
            run.mode = LOOP_NREP;
            run.nrep.t1_s = group_t1(&ctx, &t1s, &job.points[i], 0, &run.nrep_t1_launches);
        }
        /* A native algorithm forced in this launch: its knobs stand for
         * the job's while it runs and is recorded. */
        struct bench_point *pt = &job.points[i];
        struct bench_force force;
        cJSON *job_knobs = job.knobs;
        const char *job_algorithm = job.knobs_algorithm;
        const char *job_forced_by = job.knobs_forced_by;
        int forced_ok = 1;
        if (pt->knobs != NULL) {
            char local[BENCH_REASON_LEN] = "";
            job.knobs = pt->knobs;
            job.knobs_algorithm = pt->knobs_algorithm;
            job.knobs_forced_by = pt->knobs_forced_by;
            int bad = bench_force_begin(&ctx, pt, &force, local, sizeof(local)) != 0;
            if (agree(&ctx, bad, local, run.reason)) {
                forced_ok = 0;
            } else if (pt->new_comm) {
                bad = bench_force_comm(&ctx, &force, local, sizeof(local)) != 0;
                forced_ok = !agree(&ctx, bad, local, run.reason);
            }
            if (!forced_ok) {
                char why[BENCH_REASON_LEN];
                bench_fmt(why, sizeof(why), "%s", run.reason);
                bench_fmt(run.reason, sizeof(run.reason), "could not force %s at run time: %s",
                          pt->knobs_algorithm != NULL ? pt->knobs_algorithm : pt->name, why);
                run.status = "error";
                run.dctx = &ctx;
                run.dpt = pt;
            }
        }
        if (forced_ok) {
            run_point(&ctx, pt, &run);
        }
        if (ctx.rank == 0 && write_record(&ctx, pt, &run, msg, sizeof(msg)) != 0) {
            fprintf(stderr, "bench: %s\n", msg);
            ok = 0;
        }
        if (pt->knobs != NULL) {
            bench_force_end(&ctx, &force);
            job.knobs = job_knobs;
            job.knobs_algorithm = job_algorithm;
            job.knobs_forced_by = job_forced_by;
        }
        free_run(&run);
        /* Also keeps the ranks in step: none starts the next point's
         * check while rank 0 still writes. */
        if (hx_bcast(&ctx, &ok, (int)sizeof(ok), 0) != MPI_SUCCESS || !ok) {
            status = EXIT_OUTPUT;
        }
    }

    free(t1s.e);
    bench_clock_free(&ctx);
    bench_mpit_fini(&ctx);
    MPI_Comm_free(&ctx.comm);
    MPI_Comm_free(&ctx.sync_comm);
    bench_job_free(&job);
    MPI_Finalize();
    return status;
}
