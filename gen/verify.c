/* verify.c - pass 3: proof by simulation that a schedule computes its
 * collective, for every p in the range and every root.
 *
 * Each block of each buffer on each rank holds a symbolic value: which block
 * of the result it is (lb) and the set of ranks whose contribution it holds.
 * Where the schedule allows a non-commutative op, sets must stay intervals
 * of ranks and a reduce must join them in rank order (the stated operand
 * order decides which side comes first). Owns: unmatched or mis-sized
 * messages, receives that clobber data a send of the same step reads, data
 * read before it exists, double reductions, wrong operand order, wrong final
 * contents. Every error names the step, phase, round, rank and p.
 *
 * Every calling mode the emitted function accepts is proven: where a
 * collective's in-place form makes two of the schedule's buffers one memory
 * (cg_verify_in_place_aliases), each configuration runs once more with the
 * root called with MPI_IN_PLACE, the two sharing their values.
 */
#include <stdlib.h>
#include <string.h>

#include "sim.h"
#include "passes.h"

struct val {
    int lb;            /* block of the result this is; -1: no data */
    int stamp;         /* exchange serial that last received into it */
    struct cg_pos pos; /* step that wrote it last (0: initial) */
    uint32_t set;      /* its contribution set (see "sets" below); NO_SET exactly where lb < 0 */
};

#define NO_SET UINT32_MAX

struct state {
    struct cg_gen *g;             /* context */
    const struct cg_schedule *s;  /* what is verified */
    int p;                        /* ranks */
    int nwords;                   /* uint64 words per contribution set */
    int ordered;                  /* sets are rank intervals joined in order */
    int idempotent;               /* reduce is a set union (barrier tokens) */
    int split;                    /* blocks have uneven sizes: moves keep j % B */
    long blocks;                  /* B */
    long nb[CG_BUF_COUNT_];       /* blocks per buffer */
    struct val *vals[CG_BUF_COUNT_];   /* p x nb values */
    struct val **row[CG_BUF_COUNT_];   /* p: each rank's block 0 (in place, two may share) */
    int alias_rank;               /* in place: the rank whose out is in's blocks, else -1 */
    long alias_first;             /* ... from this block of in on */
    char hint[160];               /* alias_hint's text */
    uint64_t *set_words;          /* nwords per set */
    uint32_t *set_refs;           /* per set: how many hold it; 0: free */
    uint32_t *set_free;           /* free sets, a stack */
    uint32_t nsets, nfree;        /* sets made, free ones */
    uint32_t *single;             /* p: the set {rank}, or NO_SET until needed */
    uint32_t empty;               /* the empty set (fill steps), or NO_SET */
    int serial;                   /* exchange counter */
    struct val *stage;            /* values in flight during one exchange */
    size_t stage_cap;             /* entries allocated */
    struct cg_sim_msg *msgs;      /* one exchange's messages, sorted */
    size_t msg_cap;               /* entries allocated */
    int *msg_at;                  /* p + 1 counters of the sort */
};

static struct val *val_at(struct state *st, enum cg_bufid b, int rank, long j)
{
    return st->row[b][rank] + j;
}

/* ---- in place ------------------------------------------------------------
 *
 * Why: "verified" must hold in every mode the emitted function accepts. The
 * emitted prologue (emit_mpi.c) makes a scatter's root called in place work
 * in sendbuf itself: `out` is the root's own block of `in`, one memory, so
 * a write into out is a write into in block root, and a staging copy
 * through out destroys input the schedule reads later. No other in-place
 * form creates aliasing a schedule can see: allreduce, scan, reduce,
 * allgather and gather find their input where `out` starts in either mode
 * (otherwise the prologue copies it there first), and reduce_scatter_block,
 * exscan and alltoall read `in` from a private copy in place. */
int cg_verify_in_place_aliases(enum cg_coll_kind coll)
{
    return coll == CG_C_SCATTER;
}

/* Range r of `rank` as memory: in place, the aliased rank's out is in. */
static struct cg_sim_range mem_range(const struct state *st, int rank,
                                     const struct cg_sim_range *r)
{
    struct cg_sim_range m = *r;
    if (rank == st->alias_rank && r->buf == CG_BUF_OUT) {
        m.buf = CG_BUF_IN;
        m.first = st->alias_first + r->first;
    }
    return m;
}

/* " (in place, ...)" where block j of b on rank is the aliased memory, else "". */
static const char *alias_hint(struct state *st, int rank, enum cg_bufid b, long j)
{
    if (rank != st->alias_rank ||
        !(b == CG_BUF_OUT || (b == CG_BUF_IN && j >= st->alias_first &&
                              j < st->alias_first + st->nb[CG_BUF_OUT]))) {
        return "";
    }
    snprintf(st->hint, sizeof(st->hint),
             " (called in place, the root's out block 0 is its in block %ld: one memory, so "
             "writing one overwrites the other)", st->alias_first);
    return st->hint;
}

static int set_count(const struct state *st, const uint64_t *w)
{
    int n = 0;
    for (int i = 0; i < st->nwords; i++) {
        n += __builtin_popcountll(w[i]);
    }
    return n;
}

static int set_min(const struct state *st, const uint64_t *w)
{
    for (int i = 0; i < st->nwords; i++) {
        if (w[i]) {
            return i * 64 + __builtin_ctzll(w[i]);
        }
    }
    return -1;
}

static int set_max(const struct state *st, const uint64_t *w)
{
    for (int i = st->nwords - 1; i >= 0; i--) {
        if (w[i]) {
            return i * 64 + 63 - __builtin_clzll(w[i]);
        }
    }
    return -1;
}

/* "ranks 0..4", "rank 3", "ranks {0, 2, 3}" or "ranks {0, 1, 2, ... (9 ranks)}". */
static void set_str(const struct state *st, const uint64_t *w, char *buf, size_t cap)
{
    int n = set_count(st, w), lo = set_min(st, w), hi = set_max(st, w);
    if (n == 0) {
        snprintf(buf, cap, "no rank");
    } else if (n == 1) {
        snprintf(buf, cap, "rank %d", lo);
    } else if (hi - lo + 1 == n) {
        snprintf(buf, cap, "ranks %d..%d", lo, hi);
    } else {
        size_t k = (size_t)snprintf(buf, cap, "ranks {");
        int shown = 0;
        for (int r = lo; r <= hi && k < cap; r++) {
            if (w[r / 64] >> (r % 64) & 1u) {
                if (shown == 6) {
                    k += (size_t)snprintf(buf + k, cap - k, ", ... (%d ranks)", n);
                    break;
                }
                k += (size_t)snprintf(buf + k, cap - k, "%s%d", shown ? ", " : "", r);
                shown++;
            }
        }
        if (k < cap) {
            snprintf(buf + k, cap - k, "}");
        }
    }
}

static void val_str(const struct state *st, const struct val *v, const uint64_t *w, char *buf,
                    size_t cap)
{
    if (v->lb < 0) {
        snprintf(buf, cap, "no data");
        return;
    }
    if (v->lb == CG_LB_ZERO) {
        snprintf(buf, cap, "zeros (from a fill step)");
        return;
    }
    char set[160];
    set_str(st, w, set, sizeof(set));
    snprintf(buf, cap, "block %d with the contribution of %s", v->lb, set);
}

/* Why a pool: one (p, root, ppn) run at p = 1000 with B = p holds a million
 * blocks and up to as many contribution sets; allocating them afresh for
 * each run made the kernel fault every page in again (a quarter of the
 * library's verify time). The buffers are kept and grown between runs (the
 * generator is single-threaded) and live until the process exits. */
struct pool {
    void *p;
    size_t cap;
};
static struct pool pool_vals[CG_BUF_COUNT_], pool_set_words, pool_set_refs, pool_set_free;

/* Grows pl to at least `bytes`, keeping what it holds when keep is set. */
static void *pool_get(struct pool *pl, size_t bytes, int keep)
{
    if (bytes > pl->cap) {
        size_t cap = bytes > 2 * pl->cap ? bytes : 2 * pl->cap;
        void *p = keep ? realloc(pl->p, cap) : (free(pl->p), malloc(cap));
        if (p == NULL) {
            cg_panic("out of memory");
        }
        pl->p = p;
        pl->cap = cap;
    }
    return pl->p;
}

/* ---- sets ----------------------------------------------------------------
 *
 * Why shared: at p = 1000 a contribution set is 16 words, and copying one
 * with every block a step moves was a third of verify. So a block refers to
 * its set by index, moving or copying a block copies the index, and sets
 * count who holds them: a reduce changes its set in place only when its
 * block is the one holder, else it makes a new one. A set nobody holds is
 * reused. Set words move when the store grows: pointers from set_words()
 * are good until the next set_new().
 */

static uint64_t *set_words(struct state *st, uint32_t id)
{
    return &st->set_words[(size_t)id * (size_t)st->nwords];
}

/* A set with one holder, its words not yet written. */
static uint32_t set_new(struct state *st)
{
    uint32_t id;
    if (st->nfree > 0) {
        id = st->set_free[--st->nfree];
    } else {
        id = st->nsets++;
        size_t n = (size_t)st->nsets;
        st->set_words = pool_get(&pool_set_words, sizeof(uint64_t) * n * (size_t)st->nwords, 1);
        st->set_refs = pool_get(&pool_set_refs, sizeof(uint32_t) * n, 1);
        st->set_free = pool_get(&pool_set_free, sizeof(uint32_t) * n, 1);
    }
    st->set_refs[id] = 1;
    return id;
}

static uint32_t set_copy_of(struct state *st, const uint64_t *w)
{
    uint32_t id = set_new(st);
    memcpy(set_words(st, id), w, sizeof(uint64_t) * (size_t)st->nwords);
    return id;
}

static uint32_t set_hold(struct state *st, uint32_t id)
{
    if (id != NO_SET) {
        st->set_refs[id]++;
    }
    return id;
}

static void set_drop(struct state *st, uint32_t id)
{
    if (id != NO_SET && --st->set_refs[id] == 0) {
        st->set_free[st->nfree++] = id;
    }
}

/* Makes id (a reference the caller hands over) v's set. */
static void set_give(struct state *st, struct val *v, uint32_t id)
{
    set_drop(st, v->set);
    v->set = id;
}

/* The words of v's set; NULL where it has none. */
static const uint64_t *val_words(struct state *st, const struct val *v)
{
    return v->set == NO_SET ? NULL : set_words(st, v->set);
}

/* Gives block j of buffer b on `rank` the value (lb, {who}). */
static void put(struct state *st, enum cg_bufid b, int rank, long j, int lb, int who)
{
    if (st->single[who] == NO_SET) {
        st->single[who] = set_new(st);
        uint64_t *w = set_words(st, st->single[who]);
        memset(w, 0, sizeof(uint64_t) * (size_t)st->nwords);
        w[who / 64] = 1ull << (who % 64);
    } else {
        set_hold(st, st->single[who]);
    }
    struct val *v = val_at(st, b, rank, j);
    v->lb = lb;
    set_give(st, v, st->single[who]);
}

static int on_start(void *arg, const struct cg_sim_where *w, long blocks, const long *nblocks)
{
    struct state *st = arg;
    st->blocks = blocks;
    st->nsets = st->nfree = 0;
    st->empty = NO_SET;
    for (int rank = 0; rank < st->p; rank++) {
        st->single[rank] = NO_SET;
    }
    for (int b = 0; b < CG_BUF_COUNT_; b++) {
        st->nb[b] = nblocks[b];
        size_t n = (size_t)st->p * (size_t)nblocks[b];
        st->vals[b] = pool_get(&pool_vals[b], sizeof(struct val) * (n ? n : 1), 0);
        for (size_t i = 0; i < n; i++) {
            st->vals[b][i] = (struct val){ -1, 0, { 0, 0 }, NO_SET };
        }
        for (int rank = 0; rank < st->p; rank++) {
            st->row[b][rank] = st->vals[b] + (size_t)rank * (size_t)nblocks[b];
        }
    }
    const struct cg_schedule *s = st->s;
    if (st->alias_rank >= 0) {
        /* The root's out is its block root of in (scatter: out has 1 block). */
        if (st->nb[CG_BUF_OUT] != 1 || st->nb[CG_BUF_IN] != st->p) {
            cg_panic("in-place alias with %ld out and %ld in blocks", st->nb[CG_BUF_OUT],
                     st->nb[CG_BUF_IN]);
        }
        st->alias_first = w->root;
        st->row[CG_BUF_OUT][st->alias_rank] = st->row[CG_BUF_IN][st->alias_rank] + w->root;
    }
    for (int rank = 0; rank < st->p; rank++) {
        switch (s->coll) {
        case CG_C_ALLREDUCE:
        case CG_C_REDUCE:
        case CG_C_SCAN:
            /* Every rank's out starts as its own input. */
            for (long j = 0; j < st->nb[CG_BUF_OUT]; j++) {
                put(st, CG_BUF_OUT, rank, j, (int)j, rank);
            }
            break;
        case CG_C_ALLGATHER:
        case CG_C_GATHER:
            put(st, CG_BUF_OUT, rank, rank, rank, rank);
            break;
        case CG_C_REDUCE_SCATTER_BLOCK:
        case CG_C_ALLTOALL:
        case CG_C_EXSCAN:
            /* in block j: this rank's contribution to block j of the result
             * (alltoall: the block for rank j). */
            for (long j = 0; j < st->nb[CG_BUF_IN]; j++) {
                put(st, CG_BUF_IN, rank, j, (int)j, rank);
            }
            break;
        case CG_C_BCAST:
            if (rank == w->root) {
                for (long j = 0; j < st->nb[CG_BUF_OUT]; j++) {
                    put(st, CG_BUF_OUT, rank, j, (int)j, rank);
                }
            }
            break;
        case CG_C_SCATTER:
            /* Only the root's in holds data (MPI ignores sendbuf elsewhere). */
            if (rank == w->root) {
                for (long j = 0; j < st->nb[CG_BUF_IN]; j++) {
                    put(st, CG_BUF_IN, rank, j, (int)j, rank);
                }
            }
            break;
        case CG_C_BARRIER:
            /* The token: "this rank has entered". */
            put(st, CG_BUF_OUT, rank, 0, 0, rank);
            break;
        case CG_C_COUNT_:
            break;
        }
    }
    return 0;
}

/* Why a hint: MPI_Scatter's sendbuf exists only at the root, so reading
 * `in` elsewhere is the one "no data" error a reader may not expect. */
static const char *no_data_hint(const struct state *st, enum cg_bufid b, int rank,
                                const struct cg_sim_where *w)
{
    if (st->s->coll == CG_C_SCATTER && b == CG_BUF_IN && rank != w->root) {
        return " (in holds data only at the root)";
    }
    return "";
}

static long blk(const struct state *st, const struct cg_sim_range *r, long i)
{
    return cg_sim_blk(r, st->nb[r->buf], i);
}

/* Sorts n messages by the key (rank or peer, both in 0..p-1) of each into
 * out, keeping the order of messages with equal keys: a counting sort (two
 * allocations and two qsorts per exchange step cost a tenth of verify). */
static void sort_by(struct state *st, const struct cg_sim_msg *in, int n, int by_peer,
                    struct cg_sim_msg *out)
{
    int *at = st->msg_at;
    memset(at, 0, sizeof(int) * (size_t)(st->p + 1));
    for (int k = 0; k < n; k++) {
        at[(by_peer ? in[k].peer : in[k].rank) + 1]++;
    }
    for (int r = 0; r < st->p; r++) {
        at[r + 1] += at[r];
    }
    for (int k = 0; k < n; k++) {
        out[at[by_peer ? in[k].peer : in[k].rank]++] = in[k];
    }
}

static int key_cmp(const struct cg_sim_msg *send, const struct cg_sim_msg *recv)
{
    if (send->rank != recv->peer) {
        return send->rank < recv->peer ? -1 : 1;
    }
    if (send->peer != recv->rank) {
        return send->peer < recv->rank ? -1 : 1;
    }
    return 0;
}

static int on_exchange(void *arg, const struct cg_sim_where *w, const struct cg_sim_msg *sends_in,
                       int nsends, const struct cg_sim_msg *recvs_in, int nrecvs)
{
    struct state *st = arg;
    const struct cg_schedule *s = st->s;
    char a[96], b[96];
    int serial = ++st->serial;
    if (nsends == 0 && nrecvs == 0) {
        /* No rank posts anything (every "when" false): nothing to match,
         * and st->msgs may still be NULL, which no offset may be added to. */
        return 0;
    }

    /* Receives of one rank in one step must not overlap, and must not land
     * in a block that one of its sends of the same step reads. */
    for (int k = 0; k < nrecvs; k++) {
        const struct cg_sim_msg *r = &recvs_in[k];
        for (long i = 0; i < r->range.n; i++) {
            struct val *v = val_at(st, r->range.buf, r->rank, blk(st, &r->range, i));
            if (v->stamp == serial) {
                cg_sim_error(st->g, s, w, r->rank, r->x->pos,
                             "two receives of this step land in %s block %ld%s",
                             cg_buf_names[r->range.buf], blk(st, &r->range, i),
                             alias_hint(st, r->rank, r->range.buf, blk(st, &r->range, i)));
                return -1;
            }
            v->stamp = serial;
        }
    }
    for (int k = 0; k < nsends; k++) {
        const struct cg_sim_msg *m = &sends_in[k];
        for (long i = 0; i < m->range.n; i++) {
            long j = blk(st, &m->range, i);
            if (val_at(st, m->range.buf, m->rank, j)->stamp == serial) {
                cg_sim_error(st->g, s, w, m->rank, m->x->pos,
                             "sends %s block %ld, which a receive of the same step overwrites%s",
                             cg_buf_names[m->range.buf], j,
                             alias_hint(st, m->rank, m->range.buf, j));
                return -1;
            }
        }
    }

    /* Both arrive in rank order, each rank's in posting order (sim.h), so
     * sorting stably by peer orders receives by (source, destination, order)
     * and, sorted stably by rank once more, sends likewise. */
    size_t need = (size_t)(2 * nsends + nrecvs);
    if (need > st->msg_cap) {
        st->msg_cap = 2 * need;
        st->msgs = realloc(st->msgs, sizeof(*st->msgs) * st->msg_cap);
        if (st->msgs == NULL) {
            cg_panic("out of memory");
        }
    }
    struct cg_sim_msg *sends = st->msgs, *recvs = st->msgs + nsends, *by_peer = recvs + nrecvs;
    sort_by(st, sends_in, nsends, 1, by_peer);
    sort_by(st, by_peer, nsends, 0, sends);
    sort_by(st, recvs_in, nrecvs, 1, recvs);

    size_t total = 0;
    for (int k = 0; k < nsends; k++) {
        total += (size_t)sends[k].range.n;
    }
    if (total > st->stage_cap) {
        st->stage_cap = total * 2;
        st->stage = realloc(st->stage, sizeof(*st->stage) * st->stage_cap);
        if (st->stage == NULL) {
            cg_panic("out of memory");
        }
    }

    int i = 0, j = 0;
    size_t staged = 0;
    /* Match: the k-th send from s to d pairs with the k-th receive at d from s. */
    while (i < nsends || j < nrecvs) {
        int c = i >= nsends ? 1 : j >= nrecvs ? -1 : key_cmp(&sends[i], &recvs[j]);
        if (c < 0) {
            cg_sim_range_str(&sends[i].range, st->nb[sends[i].range.buf], a, sizeof(a));
            cg_sim_error(st->g, s, w, sends[i].rank, sends[i].x->pos,
                         "send of %s to rank %d has no matching receive (rank %d posts no "
                         "further receive from rank %d in this step)", a, sends[i].peer,
                         sends[i].peer, sends[i].rank);
            return -1;
        }
        if (c > 0) {
            cg_sim_range_str(&recvs[j].range, st->nb[recvs[j].range.buf], a, sizeof(a));
            cg_sim_error(st->g, s, w, recvs[j].rank, recvs[j].x->pos,
                         "receive into %s from rank %d has no matching send (rank %d posts no "
                         "further send to rank %d in this step)", a, recvs[j].peer,
                         recvs[j].peer, recvs[j].rank);
            return -1;
        }
        const struct cg_sim_msg *sm = &sends[i++], *rm = &recvs[j++];
        if (sm->range.n != rm->range.n) {
            cg_sim_range_str(&sm->range, st->nb[sm->range.buf], a, sizeof(a));
            cg_sim_range_str(&rm->range, st->nb[rm->range.buf], b, sizeof(b));
            cg_sim_error(st->g, s, w, rm->rank, rm->x->pos,
                         "size mismatch: receives %ld %s into %s from rank %d, which sends "
                         "%ld %s (%s)", rm->range.n, cg_blocks_word(rm->range.n), b, sm->rank,
                         sm->range.n, cg_blocks_word(sm->range.n), a);
            return -1;
        }
        for (long e = 0; e < sm->range.n; e++) {
            long js = blk(st, &sm->range, e), jr = blk(st, &rm->range, e);
            const struct val *v = val_at(st, sm->range.buf, sm->rank, js);
            if (v->lb < 0) {
                cg_sim_error(st->g, s, w, sm->rank, sm->x->pos,
                             "sends %s block %ld to rank %d, but it holds no data yet%s",
                             cg_buf_names[sm->range.buf], js, sm->peer,
                             no_data_hint(st, sm->range.buf, sm->rank, w));
                return -1;
            }
            if (st->split && js % st->blocks != jr % st->blocks) {
                cg_sim_error(st->g, s, w, rm->rank, rm->x->pos,
                             "receives block %ld of rank %d's %s into %s block %ld: blocks of "
                             "%s have uneven sizes, so data must keep its block index modulo "
                             "B=%ld", js, sm->rank, cg_buf_names[sm->range.buf],
                             cg_buf_names[rm->range.buf], jr, cg_colls[s->coll].name,
                             st->blocks);
                return -1;
            }
            st->stage[staged] = *v;
            set_hold(st, v->set);
            staged++;
        }
    }
    /* Deliver, in the same order. */
    staged = 0;
    for (int k = 0; k < nrecvs; k++) {
        const struct cg_sim_msg *rm = &recvs[k];
        for (long e = 0; e < rm->range.n; e++) {
            long jr = blk(st, &rm->range, e);
            struct val *dst = val_at(st, rm->range.buf, rm->rank, jr);
            dst->lb = st->stage[staged].lb;
            dst->pos = rm->x->pos;
            set_give(st, dst, st->stage[staged].set);
            staged++;
        }
    }
    return 0;
}

static int strided(const struct cg_sim_range *r)
{
    return r->stride > 1 && r->n > 1;
}

static int same_range(const struct cg_sim_range *a, const struct cg_sim_range *b)
{
    return a->buf == b->buf && a->first == b->first && a->n == b->n &&
           (strided(a) ? a->stride : 1) == (strided(b) ? b->stride : 1);
}

/* Whether two ranges of rank, one of them strided, share a block: x's
 * blocks are stamped with a fresh serial, then y's looked up (linear; a
 * pairwise test made reduce_scatter_block_pat's verify 20 times slower). */
static int strided_overlap(struct state *st, int rank, const struct cg_sim_range *x,
                           const struct cg_sim_range *y)
{
    int serial = ++st->serial;
    for (long i = 0; i < x->n; i++) {
        val_at(st, x->buf, rank, blk(st, x, i))->stamp = serial;
    }
    for (long i = 0; i < y->n; i++) {
        if (val_at(st, y->buf, rank, blk(st, y, i))->stamp == serial) {
            return 1;
        }
    }
    return 0;
}

/* Whether two ranges (as memory: see mem_range) share a block: 1 or 0, or
 * -1 when one is strided (then strided_overlap decides). */
static int ranges_overlap(const struct state *st, const struct cg_sim_range *x,
                          const struct cg_sim_range *y)
{
    if (x->buf != y->buf || x->n <= 0 || y->n <= 0) {
        return 0;
    }
    /* Two wrapping intervals of one circle of nb blocks: they overlap when
     * together they are longer than the circle, or one starts inside the
     * other (O(1): call views of p blocks on p ranks made a pairwise test
     * cubic in p). */
    long nb = st->nb[x->buf];
    if (x->n + y->n > nb) {
        return 1;
    }
    if (strided(x) || strided(y)) {
        return -1; /* no interval of the circle: strided_overlap decides */
    }
    long fx = blk(st, x, 0), fy = blk(st, y, 0);
    return ((fy - fx) % nb + nb) % nb < x->n || ((fx - fy) % nb + nb) % nb < y->n;
}


/* ---- call steps --------------------------------------------------------- */

/* One block a call writes: its new value is staged first, since views may
 * be the same memory (the in-place forms). */
struct call_put {
    int rank;
    enum cg_bufid buf;
    long j;
    int lb;
    uint32_t set; /* held by the put until it is delivered */
};

struct call_ctx {
    struct state *st;
    const struct cg_sim_where *w;
    const struct cg_step *step;
    struct call_put *puts;
    size_t n, cap;
    uint64_t *acc; /* nwords: the set a reduction has folded so far */
};

/* Stages (lb, set) for rank's block j of buf, with the caller's hold on set. */
static void call_stage(struct call_ctx *cx, int rank, enum cg_bufid buf, long j, int lb,
                       uint32_t set)
{
    if (cx->n == cx->cap) {
        cx->cap = cx->cap ? cx->cap * 2 : 256;
        cx->puts = realloc(cx->puts, sizeof(*cx->puts) * cx->cap);
        if (cx->puts == NULL) {
            cg_panic("out of memory");
        }
    }
    cx->puts[cx->n++] = (struct call_put){ rank, buf, j, lb, set };
}

/* What a reduction has folded so far, as a set of its own (none before the
 * first fold). */
static uint32_t call_acc_set(struct call_ctx *cx, int lb)
{
    return lb < 0 ? NO_SET : set_copy_of(cx->st, cx->acc);
}

/* The index rule of split collectives: data keeps its block index modulo B. */
static int call_index_ok(struct call_ctx *cx, int rank, enum cg_bufid db, long jd, int srank,
                         enum cg_bufid sb, long js)
{
    struct state *st = cx->st;
    if (!st->split || jd % st->blocks == js % st->blocks) {
        return 0;
    }
    cg_sim_error(st->g, st->s, cx->w, rank, cx->step->pos,
                 "the call puts block %ld of rank %d's %s into %s block %ld: blocks of %s have "
                 "uneven sizes, so a call's views must keep the block index modulo B=%ld", js,
                 srank, cg_buf_names[sb], cg_buf_names[db], jd, cg_colls[st->s->coll].name,
                 st->blocks);
    return -1;
}

/* Reports rank srank's block js of sb that v is, when it holds no data. */
static int call_no_data(struct call_ctx *cx, const struct val *v, int srank, enum cg_bufid sb,
                        long js)
{
    struct state *st = cx->st;
    if (v->lb >= 0) {
        return 0;
    }
    cg_sim_error(st->g, st->s, cx->w, srank,
                 cx->step->call_has_src ? cx->step->src.pos : cx->step->dst.pos,
                 "the call reads %s block %ld, which holds no data yet%s", cg_buf_names[sb], js,
                 no_data_hint(st, sb, srank, cx->w));
    return 1;
}

/* Folds rank srank's block js of sb into the value (lb, w) a reduction has
 * so far, in rank order: what MPI's reduction does with the caller's op. */
static int call_fold(struct call_ctx *cx, int *lb, uint64_t *w, int srank, enum cg_bufid sb,
                     long js)
{
    struct state *st = cx->st;
    const struct val *v = val_at(st, sb, srank, js);
    const uint64_t *vw = val_words(st, v);
    char a[160], b[160];
    if (call_no_data(cx, v, srank, sb, js)) {
        return -1;
    }
    if (*lb < 0) {
        *lb = v->lb;
        memcpy(w, vw, sizeof(uint64_t) * (size_t)st->nwords);
        return 0;
    }
    if (cx->step->call_bor) {
        /* Bitwise or of bytes: exact when at most one rank brings data to a
         * position and every other brings zeros. */
        if (v->lb == CG_LB_ZERO) {
            return 0;
        }
        if (*lb == CG_LB_ZERO) {
            *lb = v->lb;
            memcpy(w, vw, sizeof(uint64_t) * (size_t)st->nwords);
            return 0;
        }
        set_str(st, w, a, sizeof(a));
        set_str(st, vw, b, sizeof(b));
        cg_sim_error(st->g, st->s, cx->w, srank, cx->step->pos,
                     "the call ORs %s block %ld (block %d of the result, %s) with data the "
                     "ranks before it give (block %d, %s): a bitwise-or call is exact only when "
                     "one rank brings data to a position and every other brings zeros (fill "
                     "steps)", cg_buf_names[sb], js, v->lb, b, *lb, a);
        return -1;
    }
    if (*lb != v->lb) {
        cg_sim_error(st->g, st->s, cx->w, srank, cx->step->pos,
                     "the call reduces %s block %ld (block %d of the result) with block %d of "
                     "the result from the ranks before it", cg_buf_names[sb], js, v->lb, *lb);
        return -1;
    }
    for (int q = 0; q < st->nwords; q++) {
        if (w[q] & vw[q]) {
            int r = q * 64 + __builtin_ctzll(w[q] & vw[q]);
            set_str(st, w, a, sizeof(a));
            set_str(st, vw, b, sizeof(b));
            cg_sim_error(st->g, st->s, cx->w, srank, cx->step->pos,
                         "double reduction in the call: the contribution of rank %d is in %s "
                         "block %ld (%s) and in what the ranks before it give (%s)", r,
                         cg_buf_names[sb], js, b, a);
            return -1;
        }
    }
    if (st->ordered && set_max(st, w) + 1 != set_min(st, vw)) {
        set_str(st, w, a, sizeof(a));
        set_str(st, vw, b, sizeof(b));
        cg_sim_error(st->g, st->s, cx->w, srank, cx->step->pos,
                     "operand order: the call reduces in rank order, and %s block %ld holds %s, "
                     "which does not follow %s (the ranks before it); a non-commutative op needs "
                     "rank intervals in order (or add \"requires\": {\"commutative\": true})",
                     cg_buf_names[sb], js, b, a);
        return -1;
    }
    for (int q = 0; q < st->nwords; q++) {
        w[q] |= vw[q];
    }
    return 0;
}

/* Copies rank srank's block js of sb to rank `rank`'s block jd of db. */
static int call_move(struct call_ctx *cx, int rank, enum cg_bufid db, long jd, int srank,
                     enum cg_bufid sb, long js)
{
    const struct val *v = val_at(cx->st, sb, srank, js);
    if (call_index_ok(cx, rank, db, jd, srank, sb, js) != 0 || call_no_data(cx, v, srank, sb, js)) {
        return -1;
    }
    call_stage(cx, rank, db, jd, v->lb, set_hold(cx->st, v->set));
    return 0;
}

static int range_wraps(const struct state *st, const struct cg_sim_range *r)
{
    return r->n > 0 && r->first + r->n > st->nb[r->buf];
}

/* The call on one group: members m[0..gp-1] (real ranks, in rank order),
 * whose index in m is the rank in the callee's communicator. */
static int on_call_group(struct state *st, const struct cg_sim_where *w,
                         const struct cg_sim_local *ops, const int *m, int gp)
{
    const struct cg_schedule *s = st->s;
    const struct cg_step *step = w->step;
    enum cg_coll_kind cc = (enum cg_coll_kind)step->call_coll;
    const char *cn = cg_colls[cc].name;
    const char *dname = cc == CG_C_BCAST ? "buffer" : "recv";
    int p = gp;
    char a[96], b[96], pw[64];
    if (step->call_group != CG_GROUP_ALL) {
        snprintf(pw, sizeof(pw), "its group's size %d", gp);
    } else {
        snprintf(pw, sizeof(pw), "p = %d", gp);
    }
    int root = ops[m[0]].root;
    /* Shapes: the callee's counts must agree on every rank. */
    for (int r = 0; r < p; r++) {
        const struct cg_sim_local *op = &ops[m[r]];
        const struct cg_sim_range *views[2] = { &op->src, &op->dst };
        const char *names[2] = { "send", dname };
        for (int k = 0; k < 2; k++) {
            int has = k == 0 ? step->call_has_src : step->call_has_dst;
            if (has && range_wraps(st, views[k])) {
                cg_sim_range_str(views[k], st->nb[views[k]->buf], a, sizeof(a));
                cg_sim_error(st->g, s, w, m[r], k == 0 ? step->src.pos : step->dst.pos,
                             "the call's \"%s\" view %s wraps around the end of %s; a call "
                             "needs a contiguous view", names[k], a,
                             cg_buf_names[views[k]->buf]);
                return -1;
            }
        }
        long ns = op->src.n, nd = op->dst.n, ns0 = ops[m[0]].src.n, nd0 = ops[m[0]].dst.n;
        const char *want = NULL;
        char why[200];
        switch (cc) {
        case CG_C_ALLREDUCE:
        case CG_C_REDUCE:
        case CG_C_SCAN:
        case CG_C_EXSCAN:
            if (ns != nd) {
                want = "\"send\" and \"recv\" of equal length";
            } else if (ns != ns0) {
                want = "the same number of blocks on every rank";
            }
            break;
        case CG_C_BCAST:
            if (nd != nd0) {
                want = "the same number of blocks on every rank";
            }
            break;
        case CG_C_ALLGATHER:
        case CG_C_GATHER:
            if (ns != ns0) {
                want = "a \"send\" of the same number of blocks on every rank";
            } else if ((cc == CG_C_ALLGATHER || r == root) && nd != (long)p * ns) {
                snprintf(why, sizeof(why), "a \"recv\" of %s times the %ld %s of \"send\"",
                         pw, ns, cg_blocks_word(ns));
                want = why;
            }
            break;
        case CG_C_SCATTER:
            if (nd != nd0) {
                want = "a \"recv\" of the same number of blocks on every rank";
            } else if (r == root && ns != (long)p * nd) {
                snprintf(why, sizeof(why), "a \"send\" at the root of %s times the %ld %s "
                         "of \"recv\"", pw, nd, cg_blocks_word(nd));
                want = why;
            }
            break;
        case CG_C_REDUCE_SCATTER_BLOCK:
            if (nd != nd0) {
                want = "a \"recv\" of the same number of blocks on every rank";
            } else if (ns != (long)p * nd) {
                snprintf(why, sizeof(why), "a \"send\" of %s times the %ld %s of \"recv\"",
                         pw, nd, cg_blocks_word(nd));
                want = why;
            }
            break;
        case CG_C_ALLTOALL:
            if (ns != nd || ns % p != 0) {
                snprintf(why, sizeof(why), "\"send\" and \"recv\" of equal length, a multiple "
                         "of %s", pw);
                want = why;
            } else if (ns != ns0) {
                want = "the same number of blocks on every rank";
            }
            break;
        default:
            cg_panic("call to %s", cn);
        }
        if (want != NULL) {
            if (step->call_has_src) {
                cg_sim_range_str(&op->src, st->nb[op->src.buf], a, sizeof(a));
            }
            cg_sim_range_str(&op->dst, st->nb[op->dst.buf], b, sizeof(b));
            cg_sim_error(st->g, s, w, m[r], step->pos,
                         "wrong view shape for %s: %s%s%s%s = %s; %s needs %s", cn,
                         step->call_has_src ? "send = " : "", step->call_has_src ? a : "",
                         step->call_has_src ? ", " : "", dname, b, cn, want);
            return -1;
        }
        /* Overlapping views (as memory: in place, out may be in): only the
         * callee's in-place form, which the runtime finds by address. */
        struct cg_sim_range msrc = mem_range(st, m[r], &op->src);
        struct cg_sim_range mdst = mem_range(st, m[r], &op->dst);
        if (step->call_has_src && op->src.n > 0 && op->dst.n > 0 &&
            ranges_overlap(st, &msrc, &mdst)) {
            int ok = 0, ignored = 0;
            struct cg_sim_range sub = mdst;
            switch (cc) {
            case CG_C_ALLREDUCE:
            case CG_C_SCAN:
            case CG_C_EXSCAN:
            case CG_C_ALLTOALL:
                ok = same_range(&msrc, &mdst);
                break;
            case CG_C_REDUCE:
                ignored = r != root;
                ok = same_range(&msrc, &mdst);
                break;
            case CG_C_ALLGATHER:
            case CG_C_GATHER:
                ignored = cc == CG_C_GATHER && r != root;
                sub.first = mdst.first + (long)r * msrc.n;
                sub.n = msrc.n;
                ok = same_range(&msrc, &sub);
                break;
            case CG_C_SCATTER:
                ignored = r != root;
                sub = msrc;
                sub.first = msrc.first + (long)root * mdst.n;
                sub.n = mdst.n;
                ok = same_range(&mdst, &sub);
                break;
            default:
                break;
            }
            if (!ok && !ignored) {
                cg_sim_range_str(&op->src, st->nb[op->src.buf], a, sizeof(a));
                cg_sim_range_str(&op->dst, st->nb[op->dst.buf], b, sizeof(b));
                cg_sim_error(st->g, s, w, m[r], step->pos,
                             "the call's views overlap (send = %s, recv = %s); they may only be "
                             "%s's in-place form%s%s", a, b, cn,
                             cc == CG_C_REDUCE_SCATTER_BLOCK ? " (which MPI's does not place at "
                             "block rank: use another buffer)" : "",
                             alias_hint(st, m[r], op->dst.buf, op->dst.first));
                return -1;
            }
        }
    }
    struct call_ctx cx = { st, w, step, NULL, 0, 0, malloc(sizeof(uint64_t) * (size_t)st->nwords) };
    if (cx.acc == NULL) {
        cg_panic("out of memory");
    }
    int rc = -1;
    long n = ops[m[0]].src.n;
    switch (cc) {
    case CG_C_ALLREDUCE:
    case CG_C_REDUCE:
    case CG_C_SCAN:
    case CG_C_EXSCAN:
        for (long i = 0; i < n; i++) {
            /* Every rank's input at position i, reduced in rank order. */
            int lb = -1;
            memset(cx.acc, 0, sizeof(uint64_t) * (size_t)st->nwords);
            for (int r = 0; r < p; r++) {
                long js = ops[m[r]].src.first + i, jd = ops[m[r]].dst.first + i;
                if (call_index_ok(&cx, m[r], ops[m[r]].dst.buf, jd, m[r], ops[m[r]].src.buf, js) != 0 ||
                    call_index_ok(&cx, m[r], ops[m[0]].src.buf, ops[m[0]].src.first + i, m[r],
                                  ops[m[r]].src.buf, js) != 0) {
                    goto out;
                }
                if (cc == CG_C_EXSCAN) {
                    /* rank r gets ranks 0..r-1 (rank 0: undefined, no data) */
                    call_stage(&cx, m[r], ops[m[r]].dst.buf, jd, lb, call_acc_set(&cx, lb));
                }
                if (call_fold(&cx, &lb, cx.acc, m[r], ops[m[r]].src.buf, js) != 0) {
                    goto out;
                }
                if (cc == CG_C_SCAN) {
                    call_stage(&cx, m[r], ops[m[r]].dst.buf, jd, lb, call_acc_set(&cx, lb));
                }
            }
            if (cc == CG_C_ALLREDUCE || cc == CG_C_REDUCE) {
                uint32_t all = call_acc_set(&cx, lb);
                for (int r = 0; r < p; r++) {
                    if (cc == CG_C_REDUCE && r != root) {
                        continue; /* recvbuf is significant only at the root */
                    }
                    call_stage(&cx, m[r], ops[m[r]].dst.buf, ops[m[r]].dst.first + i, lb,
                               set_hold(st, all));
                }
                set_drop(st, all);
            }
        }
        break;
    case CG_C_BCAST:
        for (int r = 0; r < p; r++) {
            for (long i = 0; i < ops[m[r]].dst.n; i++) {
                if (call_move(&cx, m[r], ops[m[r]].dst.buf, ops[m[r]].dst.first + i, m[root],
                              ops[m[root]].dst.buf, ops[m[root]].dst.first + i) != 0) {
                    goto out;
                }
            }
        }
        break;
    case CG_C_ALLGATHER:
    case CG_C_GATHER:
        for (int r = 0; r < p; r++) {
            if (cc == CG_C_GATHER && r != root) {
                continue;
            }
            for (int q = 0; q < p; q++) {
                for (long k = 0; k < n; k++) {
                    if (call_move(&cx, m[r], ops[m[r]].dst.buf, ops[m[r]].dst.first + (long)q * n + k, m[q],
                                  ops[m[q]].src.buf, ops[m[q]].src.first + k) != 0) {
                        goto out;
                    }
                }
            }
        }
        break;
    case CG_C_SCATTER:
        for (int r = 0; r < p; r++) {
            long nd = ops[m[r]].dst.n;
            for (long k = 0; k < nd; k++) {
                if (call_move(&cx, m[r], ops[m[r]].dst.buf, ops[m[r]].dst.first + k, m[root],
                              ops[m[root]].src.buf, ops[m[root]].src.first + (long)r * nd + k) != 0) {
                    goto out;
                }
            }
        }
        break;
    case CG_C_ALLTOALL:
        for (int r = 0; r < p; r++) {
            long g = ops[m[r]].dst.n / p;
            for (int q = 0; q < p; q++) {
                for (long k = 0; k < g; k++) {
                    if (call_move(&cx, m[r], ops[m[r]].dst.buf, ops[m[r]].dst.first + (long)q * g + k, m[q],
                                  ops[m[q]].src.buf, ops[m[q]].src.first + (long)r * g + k) != 0) {
                        goto out;
                    }
                }
            }
        }
        break;
    case CG_C_REDUCE_SCATTER_BLOCK:
        for (int r = 0; r < p; r++) {
            long nd = ops[m[r]].dst.n;
            for (long k = 0; k < nd; k++) {
                long jd = ops[m[r]].dst.first + k;
                int lb = -1;
                memset(cx.acc, 0, sizeof(uint64_t) * (size_t)st->nwords);
                for (int q = 0; q < p; q++) {
                    long js = ops[m[q]].src.first + (long)r * nd + k;
                    if (call_index_ok(&cx, m[r], ops[m[r]].dst.buf, jd, m[q], ops[m[q]].src.buf, js) != 0 ||
                        call_fold(&cx, &lb, cx.acc, m[q], ops[m[q]].src.buf, js) != 0) {
                        goto out;
                    }
                }
                call_stage(&cx, m[r], ops[m[r]].dst.buf, jd, lb, call_acc_set(&cx, lb));
            }
        }
        break;
    default:
        cg_panic("call to %s", cn);
    }
    /* Deliver. */
    for (size_t k = 0; k < cx.n; k++) {
        struct call_put *pt = &cx.puts[k];
        struct val *d = val_at(st, pt->buf, pt->rank, pt->j);
        d->lb = pt->lb;
        d->pos = step->pos;
        set_give(st, d, pt->set);
    }
    cx.n = 0; /* the blocks hold the puts' sets now */
    rc = 0;
out:
    for (size_t k = 0; k < cx.n; k++) {
        set_drop(st, cx.puts[k].set); /* staged, never delivered */
    }
    free(cx.puts);
    free(cx.acc);
    return rc;
}

/* A call step instance: the whole communicator, or one group per colour
 * (ranks of equal colour, in rank order, as MPI_Comm_split with key rank). */
static int on_call(struct state *st, const struct cg_sim_where *w, const struct cg_sim_local *ops,
                   int nops)
{
    const struct cg_step *step = w->step;
    int p = st->p, rc = 0;
    /* By rank: every rank (whole communicator, colour groups), or the
     * ranks of the node or lane groups that run the call. */
    struct cg_sim_local *full = calloc((size_t)p, sizeof(*full));
    int *m = malloc(sizeof(int) * (size_t)p);
    unsigned char *done = malloc((size_t)p);
    if (m == NULL || done == NULL || full == NULL) {
        cg_panic("out of memory");
    }
    memset(done, 1, (size_t)p);
    for (int k = 0; k < nops; k++) {
        full[ops[k].rank] = ops[k];
        done[ops[k].rank] = 0;
    }
    if (nops != p && step->call_group != CG_GROUP_NODE && step->call_group != CG_GROUP_LANE) {
        cg_panic("call step with %d of %d ranks", nops, p);
    }
    ops = full;
    for (int first = 0; first < p && rc == 0; first++) {
        if (done[first]) {
            continue;
        }
        int gp = 0;
        for (int r = first; r < p; r++) {
            if (!done[r] && ops[r].color == ops[first].color) {
                done[r] = 1;
                m[gp++] = r;
            }
        }
        for (int i = 0; i < gp && rc == 0; i++) {
            if (ops[m[i]].root >= gp) {
                cg_sim_error(st->g, st->s, w, m[i], step->call_root->pos,
                             "the call's root is %d, but its group (colour %d) has %d %s; the "
                             "root is a rank of the group", ops[m[i]].root, ops[m[0]].color, gp,
                             gp == 1 ? "rank" : "ranks");
                rc = -1;
            } else if (ops[m[i]].root != ops[m[0]].root) {
                cg_sim_error(st->g, st->s, w, m[i], step->call_root->pos,
                             "the call's root is %d here but %d on rank %d of the same group "
                             "(colour %d); it must be the same on every rank of the group",
                             ops[m[i]].root, ops[m[0]].root, m[0], ops[m[0]].color);
                rc = -1;
            }
        }
        if (rc == 0) {
            rc = on_call_group(st, w, ops, m, gp);
        }
    }
    free(m);
    free(done);
    free(full);
    return rc;
}

static int on_local(void *arg, const struct cg_sim_where *w, const struct cg_sim_local *ops,
                    int nops)
{
    struct state *st = arg;
    const struct cg_schedule *s = st->s;
    const struct cg_step *step = w->step;
    if (step->kind == CG_STEP_CALL) {
        return on_call(st, w, ops, nops);
    }
    int reduce = step->kind == CG_STEP_REDUCE;
    char a[160], b[160];
    if (step->kind == CG_STEP_FILL) {
        for (int k = 0; k < nops; k++) {
            for (long i = 0; i < ops[k].dst.n; i++) {
                long jd = blk(st, &ops[k].dst, i);
                struct val *d = val_at(st, ops[k].dst.buf, ops[k].rank, jd);
                if (st->empty == NO_SET) {
                    st->empty = set_new(st);
                    memset(set_words(st, st->empty), 0, sizeof(uint64_t) * (size_t)st->nwords);
                } else {
                    set_hold(st, st->empty);
                }
                d->lb = CG_LB_ZERO;
                d->stamp = 0;
                d->pos = step->pos;
                set_give(st, d, st->empty);
            }
        }
        return 0;
    }
    for (int k = 0; k < nops; k++) {
        const struct cg_sim_local *op = &ops[k];
        int rank = op->rank;
        struct cg_sim_range mdst = mem_range(st, rank, &op->dst);
        struct cg_sim_range msrc = mem_range(st, rank, &op->src);
        int overlap = op->dst.n > 0 ? ranges_overlap(st, &mdst, &msrc) : 0;
        if (overlap < 0) {
            overlap = strided_overlap(st, rank, &mdst, &msrc);
        }
        if (overlap) {
            if (!reduce && same_range(&mdst, &msrc) && mdst.buf != op->dst.buf) {
                /* In place: the root's own block copied onto itself, a
                 * no-op (the runtime's cg_copy skips it). */
                continue;
            }
            cg_sim_error(st->g, s, w, rank, step->pos, "%s ranges overlap in %s%s",
                         reduce ? "reduce" : "copy", cg_buf_names[op->dst.buf],
                         alias_hint(st, rank, op->dst.buf, op->dst.first));
            return -1;
        }
        for (long i = 0; i < op->dst.n; i++) {
            long jd = blk(st, &op->dst, i), js = blk(st, &op->src, i);
            struct val *d = val_at(st, op->dst.buf, rank, jd);
            const struct val *f = val_at(st, op->src.buf, rank, js);
            const uint64_t *dw = val_words(st, d), *fw = val_words(st, f);
            const char *dn = cg_buf_names[op->dst.buf], *fn = cg_buf_names[op->src.buf];
            if (f->lb < 0) {
                cg_sim_error(st->g, s, w, rank, step->src.pos,
                             "reads %s block %ld, which holds no data yet%s", fn, js,
                             no_data_hint(st, op->src.buf, rank, w));
                return -1;
            }
            if (st->split && jd % st->blocks != js % st->blocks) {
                cg_sim_error(st->g, s, w, rank, step->pos,
                             "%s block %ld and %s block %ld: blocks of %s have uneven sizes, "
                             "so data must keep its block index modulo B=%ld", dn, jd, fn, js,
                             cg_colls[s->coll].name, st->blocks);
                return -1;
            }
            if (!reduce) {
                uint32_t old = d->set;
                *d = *f;
                d->pos = step->pos;
                set_hold(st, d->set);
                set_drop(st, old);
                continue;
            }
            if (d->lb < 0) {
                cg_sim_error(st->g, s, w, rank, step->dst.pos,
                             "reduces into %s block %ld, which holds no data yet", dn, jd);
                return -1;
            }
            if (d->lb != f->lb) {
                cg_sim_error(st->g, s, w, rank, step->pos,
                             "reduces %s block %ld (block %d of the result) with %s block %ld "
                             "(block %d of the result)", dn, jd, d->lb, fn, js, f->lb);
                return -1;
            }
            /* Why: a barrier's "reduce" merges two sets of ranks known to
             * have entered; a rank known twice is still one rank. */
            for (int q = 0; q < st->nwords && !st->idempotent; q++) {
                if (dw[q] & fw[q]) {
                    int r = q * 64 + __builtin_ctzll(dw[q] & fw[q]);
                    set_str(st, dw, a, sizeof(a));
                    set_str(st, fw, b, sizeof(b));
                    cg_sim_error(st->g, s, w, rank, step->pos,
                                 "double reduction: the contribution of rank %d is in both %s "
                                 "block %ld (%s) and %s block %ld (%s)", r, dn, jd, a, fn, js, b);
                    return -1;
                }
            }
            if (st->ordered) {
                int dlo = set_min(st, dw), dhi = set_max(st, dw);
                int flo = set_min(st, fw), fhi = set_max(st, fw);
                int ok = step->order == CG_ORDER_INTO_FROM ? dhi + 1 == flo : fhi + 1 == dlo;
                if (!ok) {
                    set_str(st, dw, a, sizeof(a));
                    set_str(st, fw, b, sizeof(b));
                    cg_sim_error(st->g, s, w, rank, step->pos,
                                 "operand order: %s block %ld holds %s and %s block %ld holds "
                                 "%s; order '%s' does not join them in rank order, which a "
                                 "non-commutative op needs (fix the order, or add \"requires\": "
                                 "{\"commutative\": true})", dn, jd, a, fn, js, b,
                                 step->order == CG_ORDER_INTO_FROM ? "into_from" : "from_into");
                    return -1;
                }
            }
            if (st->set_refs[d->set] == 1) {
                /* Only this block holds its set: change it in place. */
                uint64_t *w = set_words(st, d->set);
                for (int q = 0; q < st->nwords; q++) {
                    w[q] |= fw[q];
                }
            } else {
                uint32_t id = set_new(st);
                uint64_t *w = set_words(st, id);
                dw = set_words(st, d->set); /* set_new may have moved them */
                fw = set_words(st, f->set);
                for (int q = 0; q < st->nwords; q++) {
                    w[q] = dw[q] | fw[q];
                }
                set_give(st, d, id);
            }
            d->pos = step->pos;
        }
    }
    if (reduce && cg_step_consumes(s, w->phase, (int)(step - w->phase->steps))) {
        /* Why: the receive this reduce consumes may have landed in out
         * instead of tmp (cg_recv_to), so tmp holds nothing after it; a
         * later read of those blocks must be refused, not proven from data
         * that was never there (gen/check.c, cg_recv_redirect). */
        for (int k = 0; k < nops; k++) {
            for (long i = 0; i < ops[k].src.n; i++) {
                struct val *f = val_at(st, ops[k].src.buf, ops[k].rank, blk(st, &ops[k].src, i));
                set_drop(st, f->set);
                f->set = NO_SET;
                f->lb = -1;
                f->pos = step->pos;
            }
        }
    }
    return 0;
}

static int on_finish(void *arg, const struct cg_sim_where *w)
{
    struct state *st = arg;
    const struct cg_schedule *s = st->s;
    uint64_t *want = calloc((size_t)st->nwords, sizeof(uint64_t));
    if (want == NULL) {
        cg_panic("out of memory");
    }
    int rc = 0;
    for (int rank = 0; rank < st->p && rc == 0; rank++) {
        for (long j = 0; j < st->nb[CG_BUF_OUT] && rc == 0; j++) {
            struct val expect = { (int)j, 0, { 0, 0 }, NO_SET };
            memset(want, 0, sizeof(uint64_t) * (size_t)st->nwords);
            int lo = 0, hi = -1; /* want = ranks lo..hi, unless set below */
            switch (s->coll) {
            case CG_C_ALLREDUCE:
            case CG_C_BARRIER:
                hi = st->p - 1;
                break;
            case CG_C_REDUCE_SCATTER_BLOCK:
                expect.lb = rank;
                hi = st->p - 1;
                break;
            case CG_C_REDUCE:
                if (rank != w->root) {
                    continue; /* recvbuf is significant only at the root */
                }
                hi = st->p - 1;
                break;
            case CG_C_ALLGATHER:
                lo = hi = (int)j;
                break;
            case CG_C_GATHER:
                if (rank != w->root) {
                    continue;
                }
                lo = hi = (int)j;
                break;
            case CG_C_BCAST:
                lo = hi = w->root;
                break;
            case CG_C_SCATTER:
                expect.lb = rank;
                lo = hi = w->root;
                break;
            case CG_C_ALLTOALL:
                /* out block j: what rank j had for this rank */
                expect.lb = rank;
                lo = hi = (int)j;
                break;
            case CG_C_SCAN:
                hi = rank;
                break;
            case CG_C_EXSCAN:
                if (rank == 0) {
                    continue; /* MPI leaves rank 0's recvbuf undefined */
                }
                hi = rank - 1;
                break;
            case CG_C_COUNT_:
                break;
            }
            /* Ranks lo..hi, a word at a time (p ranks x B blocks x p bits
             * one by one was cubic in p). */
            for (int r = lo; r <= hi;) {
                int q = r / 64, b = r % 64, n = hi - r + 1 < 64 - b ? hi - r + 1 : 64 - b;
                want[q] |= (n == 64 ? ~0ull : ((1ull << n) - 1)) << b;
                r += n;
            }
            const struct val *got = val_at(st, CG_BUF_OUT, rank, j);
            const uint64_t *gw = val_words(st, got);
            if (got->lb != expect.lb ||
                memcmp(gw, want, sizeof(uint64_t) * (size_t)st->nwords) != 0) {
                char e[256], f[256];
                val_str(st, &expect, want, e, sizeof(e));
                val_str(st, got, gw, f, sizeof(f));
                /* Point at the step that wrote the block last; when none did,
                 * at the last phase, where the missing work most likely belongs. */
                struct cg_pos pos = got->pos.line > 0 ? got->pos
                                    : s->nphases > 0  ? s->phases[s->nphases - 1].pos
                                                      : s->pos;
                cg_sim_error(st->g, s, w, rank, pos,
                             "wrong result: at the end, out block %ld holds %s; expected %s%s%s",
                             j, f, e,
                             got->pos.line > 0 ? " (this step wrote it last)"
                                               : " (no step wrote it; this is the last phase)",
                             alias_hint(st, rank, CG_BUF_OUT, j));
                rc = -1;
            }
        }
    }
    free(want);
    return rc;
}

static void state_free(struct state *st)
{
    /* vals and sets belong to the pools (on_start). */
    for (int b = 0; b < CG_BUF_COUNT_; b++) {
        st->vals[b] = NULL;
        free(st->row[b]);
        st->row[b] = NULL;
    }
    st->set_words = NULL;
    st->set_refs = NULL;
    st->set_free = NULL;
    free(st->stage);
    free(st->msgs);
    free(st->single);
    free(st->msg_at);
    st->stage = NULL;
    st->stage_cap = 0;
    st->single = NULL;
    st->msgs = NULL;
    st->msg_cap = 0;
    st->msg_at = NULL;
}

static int verify_cfg(struct cg_gen *g, const struct cg_schedule *s, const struct cg_sim_cfg *cfg)
{
    int p = cfg->p;
    struct state st = { 0 };
    st.g = g;
    st.s = s;
    st.p = p;
    st.nwords = (p + 63) / 64;
    st.ordered = cg_colls[s->coll].reduces && !s->commutative;
    st.idempotent = cg_colls[s->coll].combine == CG_COMBINE_UNION;
    st.split = cg_colls[s->coll].shape == CG_SHAPE_SPLIT;
    st.msg_at = malloc(sizeof(int) * (size_t)(p + 1));
    st.single = malloc(sizeof(uint32_t) * (size_t)(p + 1));
    st.alias_rank = cfg->in_place && cg_verify_in_place_aliases(s->coll) ? cfg->root : -1;
    for (int b = 0; b < CG_BUF_COUNT_; b++) {
        st.row[b] = malloc(sizeof(struct val *) * (size_t)p);
        if (st.row[b] == NULL) {
            cg_panic("out of memory");
        }
    }
    if (st.msg_at == NULL || st.single == NULL) {
        cg_panic("out of memory");
    }
    struct cg_sim_consumer c = { .arg = &st, .start = on_start, .exchange = on_exchange,
                                  .local = on_local, .finish = on_finish };
    int rc = cg_sim_run_cfg(g, s, cfg, &c);
    state_free(&st);
    return rc;
}

/* cfg in every calling mode: as given, then (where the collective's in-place
 * form aliases buffers) with the root called in place. */
static int verify_modes(struct cg_gen *g, const struct cg_schedule *s, struct cg_sim_cfg cfg,
                        long *runs, int64_t *work, int64_t budget)
{
    cfg.work = work;
    cfg.work_max = budget;
    cfg.in_place = 0;
    (*runs)++;
    if (verify_cfg(g, s, &cfg) != 0) {
        return -1;
    }
    if (!cg_verify_in_place_aliases(s->coll)) {
        return 0;
    }
    cfg.in_place = 1;
    (*runs)++;
    return verify_cfg(g, s, &cfg);
}

int cg_verify_one(struct cg_gen *g, const struct cg_schedule *s, int p, int root)
{
    struct cg_sim_cfg cfg = { p, root, 0, NULL, 0, NULL, 0, 0, NULL };
    long runs = 0;
    int64_t work = 0;
    return verify_modes(g, s, cfg, &runs, &work, CG_VERIFY_MAX_WORK);
}

/* Every configuration of (p, root): each ppn dividing p (topology
 * schedules), times each combination of the ranged params' values: every
 * value up to p = opt->all_roots_max_p (64 by default), and above it each
 * param's min, default and max (a pipelined chain at p = 1000 runs 1000
 * rounds per value; the small p exercise every value's boundary cases);
 * roots other than 0, 1, p/2 and p-1 with the defaults only. */
static int verify_shapes(struct cg_gen *g, const struct cg_schedule *s, int p, int root,
                         long *runs, int64_t *work, int64_t budget, struct cg_table_memo *memo)
{
    int64_t pv[16];
    int every = p <= g->opt->all_roots_max_p;
    /* Roots other than 0, 1, p/2 and p-1 run the default values only. */
    int main_root = root == 0 || root == 1 || root == p / 2 || root == p - 1;
    for (int i = 0; i < s->nparams && i < 16; i++) {
        pv[i] = main_root ? s->params[i].lo : s->params[i].value;
    }
    for (;;) {
        for (int ppn = 1; ppn <= p; ppn++) {
            if (s->topology ? (p % ppn != 0) : (ppn != p)) {
                continue;
            }
            /* Above p = 64, the shapes 1 x p, p/2 x 2, the squarest, 2 x p/2
             * and p x 1 only (p = 1000 has 16 divisors, each a full run). */
            if (s->topology && !every && ppn != 1 && ppn != 2 && ppn != p / 2 && ppn != p &&
                ppn != cg_sim_default_ppn(p)) {
                continue;
            }
            struct cg_sim_cfg cfg = { p, root, s->topology ? ppn : 0, pv, 0, NULL, 0, 0, memo };
            if (verify_modes(g, s, cfg, runs, work, budget) != 0) {
                return -1;
            }
        }
        if (!main_root) {
            return 0;
        }
        int i = 0;
        while (i < s->nparams && pv[i] == s->params[i].hi) {
            pv[i] = s->params[i].lo;
            i++;
        }
        if (i == s->nparams) {
            return 0;
        }
        if (every) {
            pv[i]++;
        } else {
            pv[i] = pv[i] < s->params[i].value ? s->params[i].value : s->params[i].hi;
        }
    }
}

/* Roots verified for p: all up to opt->all_roots_max_p, else 0, 1, p/2, p-1. */
static int roots_for(const struct cg_options *opt, int p, int *roots)
{
    if (p <= opt->all_roots_max_p) {
        for (int r = 0; r < p; r++) {
            roots[r] = r;
        }
        return p;
    }
    int cand[4] = { 0, 1, p / 2, p - 1 }, n = 0;
    for (int k = 0; k < 4; k++) {
        int dup = 0;
        for (int m = 0; m < n; m++) {
            dup |= roots[m] == cand[k];
        }
        if (!dup && cand[k] < p) {
            roots[n++] = cand[k];
        }
    }
    return n;
}

int cg_verify(struct cg_gen *g, const struct cg_schedule *s, struct cg_verify_stats *stats)
{
    const struct cg_options *opt = g->opt;
    int *roots = malloc(sizeof(int) * (size_t)(opt->np ? opt->p_list[opt->np - 1] + 4 : 4));
    if (roots == NULL) {
        cg_panic("out of memory");
    }
    int rc = 0;
    int64_t work = 0; /* all configurations together: budget */
    struct cg_table_memo *memo = s->ntables > 0 ? cg_table_memo_new() : NULL;
    int64_t budget = opt->max_work > 0 ? opt->max_work : CG_VERIFY_MAX_WORK;
    if (opt->np > 0 && cg_colls[s->coll].rooted) {
        /* --all-roots asks for every root at every p: p / 4 times the default. */
        int most = roots_for(opt, opt->p_list[opt->np - 1], roots);
        budget *= most > 4 ? most / 4 : 1;
    }
    for (int k = 0; k < opt->np && rc == 0; k++) {
        int p = opt->p_list[k];
        int nroots = 1;
        roots[0] = 0;
        if (cg_colls[s->coll].rooted) {
            nroots = roots_for(opt, p, roots);
        }
        for (int r = 0; r < nroots && rc == 0; r++) {
            long runs = 0;
            rc = verify_shapes(g, s, p, roots[r], &runs, &work, budget, memo);
            if (stats) {
                stats->runs += runs;
            }
        }
    }
    free(roots);
    cg_table_memo_free(memo);
    return rc;
}
