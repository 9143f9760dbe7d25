/* cgtune.h - libcgtune.so, the PMPI tuning library: the selection it reads
 * and the lookup each intercepted collective makes (runtime/README.md,
 * "The tuning library"; the file format: harness/FORMATS.md, "Selection").
 *
 * Rules of this part:
 *  - The choice for a call depends only on what every rank of the call
 *    knows alike (the collective, the communicator's size, ranks per node
 *    and regularity, the message size as the harness defines it, and for
 *    the reductions the datatype and op, which MPI requires to be equal on
 *    every rank); so every rank runs the same implementation. tune.c says
 *    per argument why it is alike.
 *  - A call the chosen generated function cannot serve goes to PMPI
 *    unchanged and is counted with its reason (the reasons table below).
 *  - Errors in the selection are found at MPI_Init, reported as
 *    file:line:col, and the selection is then not used at all (every call
 *    passes to the MPI library); CG_TUNE_STRICT=1 aborts instead.
 *  - The lookup allocates nothing and takes no lock; counters are plain
 *    integers (collectives on one communicator are never concurrent, as MPI
 *    requires; concurrent collectives on two communicators in two threads
 *    may lose a count, never change a result).
 */
#ifndef CGTUNE_H
#define CGTUNE_H

#include <stdio.h>

#include "cg_algo.h"

/* What a rule runs. */
enum cgt_kind {
    CGT_GENERATED,      /* generated:<schedule> (guideline mock-ups are schedules too) */
    CGT_BASELINE,       /* baseline:<name> (harness/baselines, tagged) */
    CGT_NATIVE_DEFAULT, /* native:default: the MPI library's own choice (explicit pass-through) */
    CGT_NATIVE_ALG      /* native:<algorithm>: not switchable per call here; passed through */
};

/* Why a call that matched a rule went to PMPI: one row each, the order of
 * the footer's columns. */
#define CGT_REASON_TABLE(X)                                                              \
    X(INTER, "intercommunicator", "an intercommunicator (generated code is intra only)")  \
    X(DTYPE, "datatype", "a datatype with a non-positive extent or data below its address") \
    X(NONCONTIG, "non-contiguous", "a non-contiguous datatype for a zero-filling mock-up or a baseline") \
    X(NONCOMMUTATIVE, "non-commutative", "a non-commutative op for a schedule that needs a commutative one") \
    X(COUNT, "count", "a message beyond CG_TUNE_MAX_BYTES (default INT_MAX bytes)")        \
    X(NATIVE_ALG, "native-alg", "a native:<algorithm> rule (not switchable per call: use the rules-file or CSEL export)")

enum cgt_reason {
#define X(ID, name, what) CGT_R_##ID,
    CGT_REASON_TABLE(X)
#undef X
    CGT_R_COUNT_
};

extern const char *const cgt_reason_names[CGT_R_COUNT_];

#define CGT_MAX_PARAMS 8

struct cgt_param {
    char name[48]; /* as in the schedule */
    int value;     /* within the schedule's verified range */
};

struct cgt_rule {
    int coll;                      /* enum cg_coll */
    int line, col;                 /* where the rule's object starts in the file */
    int p_lo, p_hi;                /* communicator sizes, inclusive */
    int has_ppn;                   /* 0: any ranks per node (and irregular communicators) */
    int ppn_lo, ppn_hi;            /* ranks per node, inclusive (regular communicators only) */
    unsigned long long b_lo, b_hi; /* message bytes, inclusive */
    enum cgt_kind kind;            /* what it runs */
    char impl[112];                /* "generated:allreduce_ring", as written */
    const struct cg_algo *algo;    /* GENERATED, BASELINE: the function */
    int nparams;                   /* params given */
    struct cgt_param params[CGT_MAX_PARAMS];
    /* counters (tune.c) */
    unsigned long long served;                   /* calls run by the implementation */
    unsigned long long fallback[CGT_R_COUNT_];   /* calls passed to PMPI, by reason */
};

struct cgt_selection {
    char path[512];                 /* as given in CG_TUNE */
    unsigned long long hash;        /* FNV-1a 64 of the file's bytes */
    char library[16];               /* "openmpi" or "mpich" */
    char campaign[128];             /* informational ("" when absent) */
    char campaign_hash[80];         /* informational ("" when absent) */
    int nrules;                     /* entries in rules */
    struct cgt_rule *rules;         /* sorted by collective, file order within one */
    int first[CG_COLL_COUNT_];      /* a collective's rules: rules[first .. first + n) */
    int n[CG_COLL_COUNT_];
    int needs_ppn[CG_COLL_COUNT_];  /* some rule of the collective has a ppn range */
};

/* Finds a built implementation by name: (GENERATED or BASELINE, name) ->
 * the function's registry entry, or NULL. */
typedef const struct cg_algo *(*cgt_find_fn)(enum cgt_kind kind, const char *name);

/* Reads and validates the selection at `path` into *s (zeroed first).
 * `flavour` is this build's library ("openmpi", "mpich"). Errors and
 * warnings go to `msgs` as "file:line:col: error: ..." lines. Returns the
 * number of errors; on errors *s holds no rules (everything passes). */
int cgt_selection_load(const char *path, const char *flavour, cgt_find_fn find, FILE *msgs,
                       struct cgt_selection *s);
void cgt_selection_free(struct cgt_selection *s);

/* The rule for a call, or NULL: the first rule of `coll` whose ranges hold
 * p, ppn (0: irregular or not detected, which matches only rules without a
 * ppn range; -1: not asked, an intercommunicator's, which matches any) and
 * bytes. Rules of one collective never overlap (load checks),
 * so "first" is "the". */
static inline struct cgt_rule *cgt_lookup(const struct cgt_selection *s, int coll, int p,
                                          int ppn, unsigned long long bytes)
{
    struct cgt_rule *r = s->rules + s->first[coll];
    struct cgt_rule *end = r + s->n[coll];

    for (; r < end; r++) {
        if ((bytes < r->b_lo) || (bytes > r->b_hi) || (p < r->p_lo) || (p > r->p_hi)) {
            continue;
        }
        if (r->has_ppn && (ppn >= 0) && ((ppn < r->ppn_lo) || (ppn > r->ppn_hi))) {
            continue;
        }
        return r;
    }
    return NULL;
}

#endif
