/* sim.h - runs a checked schedule for one (p, root), every rank in
 * lockstep, and hands each step instance to a consumer (verify.c proves
 * things about it, analyse.c counts it).
 *
 * Why lockstep: every rank executes phases, rounds and steps in one global
 * order (a rank may skip some), so matching sends and receives within each
 * (phase, round, step) instance is exactly what the emitted code does with
 * nonblocking point-to-point calls completed at the end of the step, and it
 * proves the emitted code cannot deadlock.
 */
#ifndef CG_SIM_H
#define CG_SIM_H

#include "ir.h"

/* A resolved block range: blocks first, first+stride, ... (mod nblocks), n
 * of them, all different. */
struct cg_sim_range {
    enum cg_bufid buf; /* which buffer */
    long first;        /* 0 <= first < nblocks (or 0 when nblocks == 0) */
    long n;            /* 0 <= n <= nblocks */
    long stride;       /* 1 .. nblocks - 1 (1: contiguous; 0 is read as 1) */
};

/* Block i of a resolved range of a buffer of nb blocks. */
static inline long cg_sim_blk(const struct cg_sim_range *r, long nb, long i)
{
    return r->stride > 1 ? (r->first + i * r->stride) % nb : (r->first + i) % nb;
}

struct cg_sim_msg {
    int rank;                  /* who posts it */
    int peer;                  /* to (send) or from (receive) */
    struct cg_sim_range range; /* what is sent or where it lands */
    const struct cg_xfer *x;   /* its spec, for positions */
    int order;                 /* posting order within the rank's step */
};

struct cg_sim_local {
    int rank;                /* who does it */
    struct cg_sim_range dst; /* into / to; a call's "recv" or "buffer" */
    struct cg_sim_range src; /* from; a call's "send" */
    int root;                /* a call to a rooted collective: its root (in the group) */
    int color;               /* a call: its group's colour (0 for "all") */
};

/* Where the simulation is; printed in every diagnostic. */
struct cg_sim_where {
    int p;                        /* communicator size */
    int root;                     /* root (0 for unrooted collectives) */
    int ppn;                      /* topology schedules: ranks per node (0: flat) */
    int in_place;                 /* the root is called with MPI_IN_PLACE (verify.c) */
    const int64_t *params;        /* every param's value, by index */
    const struct cg_phase *phase; /* NULL before the first phase */
    int has_round;                /* the phase has rounds */
    int64_t round;                /* round variable's value */
    const struct cg_step *step;   /* NULL outside a step */
    const struct cg_table *table; /* the table being computed (before the phases), or NULL */
    int64_t element;              /* and the element */
};

struct cg_sim_consumer {
    void *arg;
    /* Called once before the first phase, with the geometry. */
    int (*start)(void *arg, const struct cg_sim_where *w, long blocks, const long *nblocks);
    /* An exchange step instance: every send and receive posted by any rank,
     * each array in rank order and a rank's messages in posting order. */
    int (*exchange)(void *arg, const struct cg_sim_where *w, const struct cg_sim_msg *sends,
                    int nsends, const struct cg_sim_msg *recvs, int nrecvs);
    /* A reduce or copy step instance: one entry per rank that runs it; a
     * call step instance: one entry per rank, every rank (w->step->kind
     * tells them apart; a call's absent view has n = 0). */
    int (*local)(void *arg, const struct cg_sim_where *w, const struct cg_sim_local *ops,
                 int nops);
    /* Optional: which ranks enter a phase (its "when" holds), a round, and
     * a step instance (in the round and its "when" holds), one flag per
     * rank. The emitted code enters its timing tags exactly there. */
    int (*phase_ranks)(void *arg, const struct cg_sim_where *w, const unsigned char *on);
    int (*round_ranks)(void *arg, const struct cg_sim_where *w, const unsigned char *on);
    int (*step_ranks)(void *arg, const struct cg_sim_where *w, const unsigned char *on);
    /* Called after the last phase. */
    int (*finish)(void *arg, const struct cg_sim_where *w);
};

/* One configuration to simulate. */
struct cg_sim_cfg {
    int p;                 /* communicator size */
    int root;              /* root (0 for unrooted collectives) */
    int ppn;               /* topology schedules: ranks per node, a divisor of p;
                            * 0: cg_sim_default_ppn(p). Ignored by flat schedules */
    const int64_t *params; /* a value per param (ranged ones within min..max); NULL: defaults */
    int in_place;          /* the root is called with MPI_IN_PLACE: the consumer models the
                            * aliasing it creates; printed in diagnostics */
    int64_t *work;         /* NULL, or work done so far by several runs (cg_verify's total for
                            * a schedule): this run adds to it and stops with an error where
                            * it passes work_max */
    int64_t work_max;      /* with work */
    int64_t run_max;       /* this run's limit; 0: CG_SIM_MAX_WORK (traffic, simulate and goal
                            * raise it: they run one configuration at large p on purpose) */
    struct cg_table_memo *memo; /* NULL, or tables computed by earlier runs of this schedule */
};

/* Tables ("tables") are a pure function of the named values they read (p,
 * lets, params, ...), so runs of one schedule at one p share them: a rank
 * whose inputs some earlier run had copies its tables instead of computing
 * them. Why: Traff's circulant bcast computes about 3,000 table elements per
 * rank at p = 64, for every root; the relative rank they read takes only p
 * values. Bounded (CG_TABLE_MEMO_BYTES); cleared when p changes. */
struct cg_table_memo;
struct cg_table_memo *cg_table_memo_new(void);
void cg_table_memo_free(struct cg_table_memo *memo);

/* The most work one simulation run may do, and cg_verify's runs of every
 * configuration of one schedule (times roots at the largest p / 4 with
 * --all-roots). A unit of work is one rank looked at in a round or step
 * instance, or one block a message, copy, reduce or call view moves, and a
 * round or step instance costs CG_SIM_WORK_FIXED more (measured: about 60 ns
 * each, against 6 ns per rank). The library's largest need 6 * 10^7 per run
 * (alltoall_bruck at p = 1000) and 2.5 * 10^8 per schedule (scatter_lane),
 * under a second; the limits leave eight times that and stop hostile input
 * (20 phases of a million rounds, 100 s or more) within seconds. */
#define CG_SIM_WORK_FIXED 10
#define CG_SIM_MAX_WORK 500000000LL
#define CG_VERIFY_MAX_WORK 2000000000LL

/* Runs s for one configuration. Returns 0, or -1 after reporting an error (a
 * consumer returning nonzero also stops it, with -1). */
int cg_sim_run_cfg(struct cg_gen *g, const struct cg_schedule *s, const struct cg_sim_cfg *cfg,
                   const struct cg_sim_consumer *c);
/* The same for (p, root) with the default ppn and params. */
int cg_sim_run(struct cg_gen *g, const struct cg_schedule *s, int p, int root,
               const struct cg_sim_consumer *c);

/* The node shape `explain` and the worked examples show: the smallest divisor
 * of p that is at least sqrt(p) (p = 4: 2 nodes x 2; p = 8: 2 x 4). */
int cg_sim_default_ppn(int p);

/* "file:line:col: error: p=5 root=0 MPI_IN_PLACE rank 3, phase 'x' round r=2, step 'y': ..." */
void cg_sim_error(struct cg_gen *g, const struct cg_schedule *s, const struct cg_sim_where *w,
                  int rank, struct cg_pos pos, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));

/* "block" or "blocks", for messages. */
static inline const char *cg_blocks_word(long n)
{
    return n == 1 ? "block" : "blocks";
}

/* Blocks of buffer b for (coll, p, B, S). */
long cg_sim_nblocks(enum cg_coll_kind coll, enum cg_bufid b, int p, long blocks, long scratch);

/* Formats a range as "out[3]", "tmp[2..4]", "out[7,0]" or "out[6..7,0..1]"
 * (wrapping), "out[]". */
void cg_sim_range_str(const struct cg_sim_range *r, long nblocks, char *buf, size_t cap);

#endif
