/* goal.c - the schedule as LogGOPSim's GOAL text, for network simulators
 * downstream (LogGOPSim, ATLAHS): per rank its sends, receives and
 * reductions (calc) with `requires` dependencies, from the verified
 * schedule at one (p, root, count). `collgen goal` prints it.
 *
 * Faithful to rounds: the emitted code completes every operation of a step
 * instance before the rank's next one starts, so each operation requires
 * every operation of the rank's previous instance (through one `calc 0`
 * join when both have more than one, to keep the edges linear). Within an
 * instance nothing orders them: sends and receives are concurrent, as the
 * nonblocking posts are. Copies and fills are local and take no time in
 * the model: they are left out (the dependency chain passes over them).
 *
 * Tags: the k-th message from one rank to another within step instance i
 * (0-based, in the schedule's order over every exchange step) has tag
 * i * 16 + k; a step with more than 16 messages between one pair is
 * refused. The whole text is built in memory and written at the end, so an
 * error leaves no half-written output.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "passes.h"
#include "json.h"
#include "sim.h"

#define GOAL_TAG_STRIDE 16

struct gop {
    char kind;        /* 's' send, 'r' receive, 'c' calc */
    int peer;         /* send: to; receive: from */
    long long size;   /* bytes, or calc's nanoseconds */
    long long tag;
    long group;       /* the step instance */
};

struct grank {
    struct gop *ops;
    int n, cap;
};

struct goal {
    struct cg_gen *g;
    const struct cg_schedule *s;
    struct cg_bytes by;
    double gamma_ns_B;
    struct grank *r;
    long inst;        /* step instances seen */
    int p;
};

static void add(struct goal *x, int rank, struct gop op)
{
    struct grank *g = &x->r[rank];
    if (g->n == g->cap) {
        g->cap = g->cap ? 2 * g->cap : 8;
        g->ops = realloc(g->ops, sizeof(*g->ops) * (size_t)g->cap);
        if (g->ops == NULL) {
            cg_panic("out of memory");
        }
    }
    g->ops[g->n++] = op;
}

static int on_start(void *arg, const struct cg_sim_where *w, long blocks, const long *nblocks)
{
    struct goal *x = arg;
    (void)w;
    cg_bytes_start(&x->by, blocks, nblocks);
    return 0;
}

/* How many earlier messages of arr[k]'s rank in this instance go to (or
 * come from) the same peer: arr is in rank order, a rank's in posting order. */
static int dup_index(const struct cg_sim_msg *arr, int k)
{
    int n = 0;
    for (int j = k - 1; j >= 0 && arr[j].rank == arr[k].rank; j--) {
        n += arr[j].peer == arr[k].peer;
    }
    return n;
}

static int on_exchange(void *arg, const struct cg_sim_where *w, const struct cg_sim_msg *sends,
                       int nsends, const struct cg_sim_msg *recvs, int nrecvs)
{
    struct goal *x = arg;
    if (nsends == 0 && nrecvs == 0) {
        return 0;
    }
    long i = x->inst++;
    for (int pass = 0; pass < 2; pass++) {
        const struct cg_sim_msg *arr = pass ? recvs : sends;
        int n = pass ? nrecvs : nsends;
        for (int k = 0; k < n; k++) {
            int d = dup_index(arr, k);
            if (d >= GOAL_TAG_STRIDE) {
                cg_sim_error(x->g, x->s, w, arr[k].rank, w->step->pos,
                             "more than %d messages between ranks %d and %d in one step: GOAL "
                             "tags cannot tell them apart", GOAL_TAG_STRIDE, arr[k].rank,
                             arr[k].peer);
                return -1;
            }
            struct gop op = { pass ? 'r' : 's', arr[k].peer,
                              (long long)cg_range_bytes(&x->by, &arr[k].range),
                              (long long)i * GOAL_TAG_STRIDE + d, i };
            add(x, arr[k].rank, op);
        }
    }
    return 0;
}

static int on_local(void *arg, const struct cg_sim_where *w, const struct cg_sim_local *ops,
                    int nops)
{
    struct goal *x = arg;
    if (w->step->kind == CG_STEP_CALL) {
        cg_panic("goal reached a call step"); /* refused by the command */
    }
    if (w->step->kind != CG_STEP_REDUCE || cg_colls[x->s->coll].combine == CG_COMBINE_UNION ||
        nops == 0) {
        return 0;
    }
    long i = x->inst++;
    for (int k = 0; k < nops; k++) {
        double b = cg_range_bytes(&x->by, &ops[k].dst);
        struct gop op = { 'c', -1, (long long)ceil(b * x->gamma_ns_B), -1, i };
        add(x, ops[k].rank, op);
    }
    return 0;
}

static void write_rank(FILE *f, int rank, const struct grank *g)
{
    fprintf(f, "\nrank %d {\n", rank);
    int label = 0;
    /* prev: labels [pa, pb] of the previous instance (or its join: pa == pb). */
    int pa = 0, pb = -1;
    for (int k = 0; k < g->n;) {
        int e = k;
        while (e < g->n && g->ops[e].group == g->ops[k].group) {
            e++;
        }
        int m = e - k;
        if (pb > pa && m > 1) {
            int j = ++label;
            fprintf(f, "l%d: calc 0\n", j);
            for (int q = pa; q <= pb; q++) {
                fprintf(f, "l%d requires l%d\n", j, q);
            }
            pa = pb = j;
        }
        int first = label + 1;
        for (int q = k; q < e; q++) {
            const struct gop *op = &g->ops[q];
            int j = ++label;
            if (op->kind == 's') {
                fprintf(f, "l%d: send %lldb to %d tag %lld\n", j, op->size, op->peer, op->tag);
            } else if (op->kind == 'r') {
                fprintf(f, "l%d: recv %lldb from %d tag %lld\n", j, op->size, op->peer, op->tag);
            } else {
                fprintf(f, "l%d: calc %lld\n", j, op->size);
            }
            for (int d = pa; d <= pb; d++) {
                fprintf(f, "l%d requires l%d\n", j, d);
            }
        }
        pa = first;
        pb = label;
        k = e;
    }
    fprintf(f, "}\n");
}

int cg_goal(struct cg_gen *g, const struct cg_schedule *s, int p, int root, int ppn, size_t count,
            int elem, double gamma_ns_B, FILE *out)
{
    struct goal x = { 0 };
    x.g = g;
    x.s = s;
    x.p = p;
    x.gamma_ns_B = gamma_ns_B;
    cg_bytes_init(&x.by, s, p, count, elem);
    x.r = calloc((size_t)p, sizeof(*x.r));
    if (x.r == NULL) {
        cg_panic("out of memory");
    }
    struct cg_sim_consumer c = { .arg = &x, .start = on_start, .exchange = on_exchange,
                                 .local = on_local };
    struct cg_sim_cfg cfg = { p, root, ppn, NULL, 0, NULL, 0, g->opt->sim_max_work, NULL };
    int rc = cg_sim_run_cfg(g, s, &cfg, &c);
    char *text = NULL;
    size_t len = 0;
    FILE *f = rc == 0 ? open_memstream(&text, &len) : NULL;
    if (rc == 0 && f == NULL) {
        cg_panic("out of memory");
    }
    if (f != NULL) {
        struct cg_arena a = { 0 };
        size_t flen = 0;
        char *src = cg_read_file(&a, &g->diag, s->file, &flen);
        uint64_t h = src ? cg_fnv1a64(src, flen) : 0;
        cg_arena_fini(&a);
        fprintf(f, "// collgen goal: %s (%s, %s)\n", s->file, s->name, cg_colls[s->coll].name);
        fprintf(f, "// schedule hash: fnv1a64:%016llx (registry.json's file_hash)\n",
                (unsigned long long)h);
        fprintf(f, "// p = %d%s", p, cg_colls[s->coll].rooted ? "" : "\n");
        if (cg_colls[s->coll].rooted) {
            fprintf(f, ", root = %d\n", root);
        }
        fprintf(f, "// count = %zu elements of %d B (vector %zu elements)\n", x.by.count,
                x.by.elem, x.by.vec);
        if (s->topology) {
            fprintf(f, "// rank layout: GOAL rank r is communicator rank r; %d nodes x %d ranks, "
                       "node = r / %d, local rank = r %% %d\n", p / ppn, ppn, ppn, ppn);
        } else {
            fprintf(f, "// rank layout: GOAL rank r is communicator rank r (a flat schedule: "
                       "no node shape)\n");
        }
        fprintf(f, "// tags: the k-th message between two ranks in step instance i has tag "
                   "i * %d + k\n", GOAL_TAG_STRIDE);
        fprintf(f, "// calc: a reduction, bytes x %g ns/B, rounded up; copies take no time and "
                   "are left out\n", gamma_ns_B);
        fprintf(f, "// requires: every operation of the rank's previous step instance (a calc 0 "
                   "joins them)\n");
        fprintf(f, "num_ranks %d\n", p);
        for (int r = 0; r < p; r++) {
            write_rank(f, r, &x.r[r]);
        }
        if (fclose(f) != 0) {
            cg_panic("out of memory");
        }
        if (fwrite(text, 1, len, out) != len || fflush(out) != 0) {
            fprintf(stderr, "collgen: goal: cannot write the output\n");
            rc = -1;
        }
        free(text);
    }
    for (int r = 0; r < p; r++) {
        free(x.r[r].ops);
    }
    free(x.r);
    return rc;
}
