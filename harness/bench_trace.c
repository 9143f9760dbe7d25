/* bench_trace.c - timelines (verbosity "trace"; harness/FORMATS.md, "Trace
 * file"): each rank's begin and end of every tag region in the first
 * BENCH_TRACE_REPS timed repetitions of a point, on the global clock,
 * written by rank 0 as one Chrome trace-event JSON per point that Perfetto
 * (ui.perfetto.dev) and chrome://tracing open: one track per rank, the
 * regions nested by call, phase, round and step inside a "repetition k"
 * region.
 *
 *   per rank   bench_trace_rep_begin turns the runtime's trace mode on
 *              (runtime/tag_trace.c) into a buffer of BENCH_TRACE_EVENTS
 *              events allocated before the point; bench_trace_rep_end turns
 *              it off and keeps the repetition's own begin and end
 *   gather     after the point, every rank maps its events onto the global
 *              clock (bench_clock.c) and sends them to rank 0 over
 *              point-to-point on sync_comm
 *   rank 0     pairs each rank's begins and ends (a stack per rank),
 *              numbers the rounds of each phase, and writes
 *              trace_dir/<point id>.json through .tmp and rename
 *
 * Why complete ("X") events and not B/E pairs: a region is one object with
 * its duration, which a reader checks without pairing anything; the pairing
 * is done once, here, where the tag table says what encloses what.
 */
#include "bench.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_baseline.h"
#include "cg.h"

#define TAG_TRACE 7104 /* sync_comm: the trace events to rank 0 (bench_comm.c: 7101-7103) */

/* What a rank sends rank 0: this header, nreps wire_rep, nevents wire_ev. */
struct wire_head {
    int64_t nreps;
    int64_t nevents;
    int64_t dropped;  /* events the full buffer did not keep */
    int64_t nobuf;    /* 1: the buffer could not be allocated */
};

struct wire_rep {
    double t0, t1;    /* the repetition's begin and end, global ns */
    int64_t attempt;  /* its index in the timed loop */
    int64_t valid;    /* it counted (window: no rank was late) */
    int64_t first, n; /* its events */
};

struct wire_ev {
    double g;         /* global ns */
    int32_t id;
    int32_t end;
};

int bench_trace_start(const struct bench_ctx *ctx, struct bench_trace *t)
{
    memset(t, 0, sizeof(*t));
    if (!ctx->job->verbosity_trace) {
        return 0;
    }
    t->on = 1;
    t->cap = BENCH_TRACE_EVENTS;
    /* Test hook: a smaller buffer, to see what a full one does. */
    const char *hook = getenv("CG_BENCH_TRACE_EVENTS");
    if (hook != NULL && atol(hook) > 0 && atol(hook) < BENCH_TRACE_EVENTS) {
        t->cap = (size_t)atol(hook);
    }
    t->ev = malloc(t->cap * sizeof(*t->ev));
    t->nobuf = (t->ev == NULL);
    return t->nobuf ? -1 : 0;
}

void bench_trace_rep_begin(struct bench_trace *t, long attempt)
{
    if (!t->on || t->nobuf || attempt >= BENCH_TRACE_REPS || t->nreps >= BENCH_TRACE_REPS) {
        return;
    }
    struct bench_trace_rep *r = &t->reps[t->nreps];
    r->first = t->n;
    r->attempt = attempt;
    r->open = 1;
    cg_tag_trace_on(t->ev, t->cap, t->n);
}

void bench_trace_rep_end(struct bench_trace *t, int64_t t0, int64_t t1)
{
    if (!t->on || t->nreps >= BENCH_TRACE_REPS || !t->reps[t->nreps].open) {
        return;
    }
    uint64_t dropped = 0;
    struct bench_trace_rep *r = &t->reps[t->nreps];
    t->n = cg_tag_trace_off(&dropped);
    t->dropped += dropped;
    r->n = t->n - r->first;
    r->t0 = t0;
    r->t1 = t1;
    r->open = 0;
    r->valid = 1;
    t->nreps++;
}

void bench_trace_rep_valid(struct bench_trace *t, long attempt, int valid)
{
    if (t->on && t->nreps > 0 && t->reps[t->nreps - 1].attempt == attempt) {
        t->reps[t->nreps - 1].valid = valid;
    }
}

void bench_trace_free(struct bench_trace *t)
{
    if (cg_tag_tracing) {
        cg_tag_trace_off(NULL);
    }
    free(t->ev);
    memset(t, 0, sizeof(*t));
}

/* ---- rank 0: pairing and the file ------------------------------------ */

/* One rank's part, as received. */
struct rank_part {
    struct wire_head h;
    struct wire_rep *reps;
    struct wire_ev *ev;
};

/* The table entry of tag id: the point's own (baselines have their own
 * table), else the generated one (a call step's generated callee), else
 * collgen tag's (a baseline's tagged helper). */
static const struct cg_tag_info *info_of(const struct cg_algo *algo,
                                         const struct cg_tag_info *own, int id)
{
    if (algo != NULL && own != NULL && id >= algo->tag_first &&
        id < algo->tag_first + algo->tag_count) {
        return &own[id - algo->tag_first];
    }
    if (id >= 0 && id < cg_ntags && cg_tag_infos[id].name != NULL) {
        return &cg_tag_infos[id];
    }
    return bench_baseline_tag_info(id);
}

static const char *kind_name(const struct cg_tag_info *in)
{
    return (in != NULL) ? bench_tag_kind_name(in->kind) : "unknown";
}

/* The k-th "/"-separated part of path into out ("" when it has none). */
static void path_part(const char *path, int k, char *out, size_t len)
{
    const char *s = path;
    for (int i = 0; i < k && s != NULL; i++) {
        s = strchr(s, '/');
        s = (s != NULL) ? s + 1 : NULL;
    }
    out[0] = '\0';
    if (s != NULL) {
        size_t n = strcspn(s, "/");
        n = (n < len - 1) ? n : len - 1;
        memcpy(out, s, n);
        out[n] = '\0';
    }
}

static int64_t rel_ns(double g, double origin)
{
    return (int64_t)llround(g - origin);
}

/* One region of a rank's repetition, before sorting. */
struct slice {
    int64_t b, e;  /* ns from the origin */
    cJSON *o;      /* its "X" event */
};

/* Why sorted, begin first and the longer first at a tie: a parent then
 * comes before its children in the file, which is the order readers that
 * nest slices as they meet them (and people reading the file) expect. */
static int cmp_slice(const void *x, const void *y)
{
    const struct slice *a = x, *b = y;
    if (a->b != b->b) {
        return (a->b < b->b) ? -1 : 1;
    }
    return (a->e > b->e) ? -1 : (a->e < b->e);
}

/* Appends an "X" event to v (room for it is the caller's). */
static void add_x(struct slice *v, size_t *nv, const char *name, const char *cat, long pid,
                  int tid, int64_t b, int64_t e, cJSON *args)
{
    cJSON *o = cJSON_CreateObject();
    if (o == NULL) {
        cJSON_Delete(args);
        return;
    }
    cg_json_add(o, "name", cg_json_string(name));
    cg_json_add(o, "cat", cg_json_string(cat));
    cg_json_add(o, "ph", cg_json_string("X"));
    cJSON_AddNumberToObject(o, "pid", (double)pid);
    cJSON_AddNumberToObject(o, "tid", tid);
    cJSON_AddNumberToObject(o, "ts", (double)b / 1e3);
    cJSON_AddNumberToObject(o, "dur", (double)(e - b) / 1e3);
    cJSON_AddItemToObject(o, "args", args);
    v[*nv].b = b;
    v[*nv].e = e;
    v[*nv].o = o;
    (*nv)++;
}

static void add_meta(cJSON *events, const char *what, long pid, int tid, const char *key,
                     cJSON *value)
{
    cJSON *o = cJSON_CreateObject();
    cJSON *args = cJSON_CreateObject();
    if (o == NULL || args == NULL) {
        cJSON_Delete(o);
        cJSON_Delete(args);
        cJSON_Delete(value);
        return;
    }
    cg_json_add(o, "name", cg_json_string(what));
    cg_json_add(o, "ph", cg_json_string("M"));
    cJSON_AddNumberToObject(o, "pid", (double)pid);
    cJSON_AddNumberToObject(o, "tid", tid);
    cJSON_AddItemToObject(args, key, value);
    cJSON_AddItemToObject(o, "args", args);
    cJSON_AddItemToArray(events, o);
}

#define STACK_MAX 64 /* open regions per rank; deeper ones are counted unmatched */

struct frame {
    int id;
    int64_t begin;    /* ns from the origin */
    int rounds;       /* rounds begun inside it so far (a phase) */
    int round;        /* the round it is in, -1 none */
};

/* What a rank's repetition is turned into. */
struct rep_out {
    struct slice *v;          /* the regions, room for every begin and the repetition */
    size_t nv;
    long pid;
    int rank, k;
    const struct cg_algo *algo;
    const struct cg_tag_info *own;
};

/* The region of frame st[j], ended at t; cut: its end was not recorded (a
 * full buffer, or an error left the call), t is the enclosing end. */
static void add_region(struct rep_out *o, const struct frame *st, int j, int64_t t, int cut)
{
    const struct cg_tag_info *in = info_of(o->algo, o->own, st[j].id);
    char name[32];
    char part[128];
    cJSON *args = cJSON_CreateObject();
    if (args == NULL) {
        return;
    }
    cJSON_AddNumberToObject(args, "rep", o->k);
    cJSON_AddNumberToObject(args, "tag", st[j].id);
    cg_json_add(args, "kind", cg_json_string(kind_name(in)));
    cJSON_AddNumberToObject(args, "depth", j);
    if (in != NULL) {
        path_part(in->name, 0, part, sizeof part);
        cg_json_add(args, "schedule", cg_json_string(part));
    }
    if (in != NULL && in->kind != CG_TAG_KIND_CALL) {
        path_part(in->name, 1, part, sizeof part);
        cg_json_add(args, "phase", cg_json_string(part));
    }
    if (st[j].round >= 0) {
        cJSON_AddNumberToObject(args, "round", st[j].round);
    }
    if (in != NULL && (in->kind == CG_TAG_KIND_COMM || in->kind == CG_TAG_KIND_REDUCE ||
                       in->kind == CG_TAG_KIND_COPY)) {
        const char *leaf = strrchr(in->name, '/');
        cg_json_add(args, "step", cg_json_string((leaf != NULL) ? leaf + 1 : in->name));
    }
    if (cut) {
        cJSON_AddBoolToObject(args, "cut", 1);
    }
    if (in == NULL) {
        snprintf(name, sizeof name, "tag %d", st[j].id);
    }
    add_x(o->v, &o->nv, (in != NULL) ? in->name : name, kind_name(in), o->pid, o->rank,
          st[j].begin, t, args);
}

/* One rank's repetition as "X" events: the repetition's own, and its
 * regions, begins and ends paired by id on a stack. A begin whose end was
 * not recorded (the buffer was full, or an error left the call) is a
 * region "cut" at the end of what encloses it (the repetition's end at the
 * outermost) and counted in *unmatched, as an end whose begin is not open. */
static void rank_rep_events(cJSON *events, const struct rank_part *rp, const struct wire_rep *w,
                            int rank, int k, long pid, double origin, const struct cg_algo *algo,
                            const struct cg_tag_info *own, long *unmatched)
{
    struct frame st[STACK_MAX];
    int n = 0;
    int deep = 0; /* begins above STACK_MAX, not kept */
    struct rep_out o = {NULL, 0, pid, rank, k, algo, own};
    char rname[32];
    cJSON *rargs = cJSON_CreateObject();
    int64_t t1 = rel_ns(w->t1, origin);

    o.v = calloc((size_t)w->n + 2, sizeof(*o.v));
    if (o.v == NULL) {
        cJSON_Delete(rargs);
        return;
    }
    snprintf(rname, sizeof rname, "repetition %d", k);
    if (rargs != NULL) {
        cJSON_AddNumberToObject(rargs, "rep", k);
        cJSON_AddNumberToObject(rargs, "attempt", (double)w->attempt);
        cJSON_AddBoolToObject(rargs, "valid", w->valid != 0);
    }
    add_x(o.v, &o.nv, rname, "repetition", pid, rank, rel_ns(w->t0, origin), t1, rargs);

    for (int64_t i = w->first; i < w->first + w->n; i++) {
        const struct wire_ev *e = &rp->ev[i];
        int64_t t = rel_ns(e->g, origin);
        if (!e->end) {
            if (n == STACK_MAX) {
                deep++;
                continue;
            }
            const struct cg_tag_info *in = info_of(algo, own, e->id);
            struct frame *f = &st[n];
            f->id = e->id;
            f->begin = t;
            f->rounds = 0;
            f->round = (n > 0) ? st[n - 1].round : -1;
            if (in != NULL && in->kind == CG_TAG_KIND_ROUND && n > 0) {
                f->round = st[n - 1].rounds++;
            } else if (in != NULL &&
                       (in->kind == CG_TAG_KIND_CALL || in->kind == CG_TAG_KIND_PHASE)) {
                f->round = -1;
            }
            n++;
            continue;
        }
        if (deep > 0) {
            deep--;
            continue;
        }
        int j = n - 1;
        while (j >= 0 && st[j].id != e->id) {
            j--;
        }
        if (j < 0) {
            (*unmatched)++;
            continue;
        }
        for (int c = n - 1; c > j; c--) {
            add_region(&o, st, c, t, 1);
            (*unmatched)++;
        }
        add_region(&o, st, j, t, 0);
        n = j;
    }
    for (int c = n - 1; c >= 0; c--) {
        add_region(&o, st, c, t1, 1);
        (*unmatched)++;
    }
    qsort(o.v, o.nv, sizeof(*o.v), cmp_slice);
    for (size_t i = 0; i < o.nv; i++) {
        cJSON_AddItemToArray(events, o.v[i].o);
    }
    free(o.v);
}

static cJSON *build_doc(const struct bench_ctx *ctx, const struct bench_point *pt,
                        const struct cg_algo *algo, const struct rank_part *parts, size_t cap,
                        long *unmatched, long *dropped)
{
    const struct cg_tag_info *own = NULL;
    if (algo != NULL) {
        own = pt->baseline ? bench_baseline_tag_infos(algo) : &cg_tag_infos[algo->tag_first];
    }
    int p = ctx->p;
    long pid = pt->seq;
    int nreps = BENCH_TRACE_REPS;
    double origin = INFINITY;

    for (int r = 0; r < p; r++) {
        nreps = ((int)parts[r].h.nreps < nreps) ? (int)parts[r].h.nreps : nreps;
        if (parts[r].h.nreps > 0 && parts[r].reps[0].t0 < origin) {
            origin = parts[r].reps[0].t0;
        }
        *dropped += parts[r].h.dropped;
    }
    if (!isfinite(origin)) {
        origin = 0.0;
    }
    cJSON *doc = cJSON_CreateObject();
    cJSON *events = cJSON_AddArrayToObject(doc, "traceEvents");
    cJSON *other = cJSON_AddObjectToObject(doc, "otherData");
    if (doc == NULL || events == NULL || other == NULL) {
        cJSON_Delete(doc);
        return NULL;
    }
    cg_json_add(doc, "displayTimeUnit", cg_json_string("ns"));

    add_meta(events, "process_name", pid, 0, "name", cg_json_string(pt->id));
    for (int r = 0; r < p; r++) {
        char tname[32];
        snprintf(tname, sizeof tname, "rank %d", r);
        add_meta(events, "thread_name", pid, r, "name", cg_json_string(tname));
        add_meta(events, "thread_sort_index", pid, r, "sort_index", cJSON_CreateNumber(r));
    }
    cJSON *reps = cJSON_CreateArray();
    for (int k = 0; k < nreps; k++) {
        double lo = INFINITY, hi = -INFINITY;
        for (int r = 0; r < p; r++) {
            const struct wire_rep *w = &parts[r].reps[k];
            rank_rep_events(events, &parts[r], w, r, k, pid, origin, algo, own, unmatched);
            lo = (w->t0 < lo) ? w->t0 : lo;
            hi = (w->t1 > hi) ? w->t1 : hi;
        }
        cJSON *o = cJSON_CreateObject();
        if (o != NULL) {
            cJSON_AddNumberToObject(o, "rep", k);
            cJSON_AddNumberToObject(o, "attempt", (double)parts[0].reps[k].attempt);
            cJSON_AddBoolToObject(o, "valid", parts[0].reps[k].valid != 0);
            cJSON_AddNumberToObject(o, "start_us", (double)rel_ns(lo, origin) / 1e3);
            cJSON_AddNumberToObject(o, "end_us", (double)rel_ns(hi, origin) / 1e3);
            cJSON_AddItemToArray(reps, o);
        }
    }
    cJSON_AddNumberToObject(other, "schema_version", 1);
    cg_json_add(other, "campaign", cg_json_string(ctx->job->campaign));
    cJSON_AddNumberToObject(other, "run_id", (double)ctx->job->run_id);
    cg_json_add(other, "point_id", cg_json_string(pt->id));
    cJSON_AddNumberToObject(other, "seq", (double)pt->seq);
    cg_json_add(other, "collective", cg_json_string(bench_coll_name(pt->coll)));
    cg_json_add(other, "impl", cg_json_string(pt->impl));
    cg_json_add(other, "library", cg_json_string(ctx->job->library));
    cJSON_AddNumberToObject(other, "ranks", p);
    cJSON_AddNumberToObject(other, "count", (double)pt->count);
    cJSON_AddNumberToObject(other, "size_B", (double)bench_size_B(p, pt));
    cg_json_add(other, "datatype", cg_json_string(bench_dtype_name(pt->dtype)));
    cg_json_add(other, "sync", cg_json_string(bench_sync_name(ctx->job->timing.sync)));
    /* Without a model each rank's own clock: on one host the same clock
     * still, across hosts not comparable. */
    cg_json_add(other, "clock",
                cg_json_string(ctx->clock.synced
                                   ? "global: rank 0's CLOCK_MONOTONIC (bench_clock.c)"
                                   : "local: each rank's CLOCK_MONOTONIC (the global clock could "
                                     "not be synchronised)"));
    cJSON_AddNumberToObject(other, "origin_global_ns", origin);
    cJSON_AddNumberToObject(other, "reps_traced", nreps);
    cJSON_AddNumberToObject(other, "events_per_rank_max", (double)cap);
    cJSON_AddNumberToObject(other, "dropped_events", (double)*dropped);
    cJSON_AddNumberToObject(other, "unmatched_events", (double)*unmatched);
    cJSON_AddItemToObject(other, "repetitions", reps);
    return doc;
}

static void pack_rank(const struct bench_ctx *ctx, const struct bench_trace *t,
                      struct rank_part *rp)
{
    rp->h.nreps = t->nreps;
    rp->h.nevents = (int64_t)t->n;
    rp->h.dropped = (int64_t)t->dropped;
    rp->h.nobuf = t->nobuf;
    for (int k = 0; k < t->nreps; k++) {
        const struct bench_trace_rep *r = &t->reps[k];
        rp->reps[k].t0 = bench_clock_global(ctx, r->t0);
        rp->reps[k].t1 = bench_clock_global(ctx, r->t1);
        rp->reps[k].attempt = r->attempt;
        rp->reps[k].valid = r->valid;
        rp->reps[k].first = (int64_t)r->first;
        rp->reps[k].n = (int64_t)r->n;
        for (size_t i = r->first; i < r->first + r->n; i++) {
            /* The tags read CLOCK_MONOTONIC (cg_tag_now), which is the
             * harness's clock less the skew test hook's (bench_clock_now). */
            rp->ev[i].g = bench_clock_global(ctx, bench_clock_of_raw((int64_t)t->ev[i].ns));
            rp->ev[i].id = t->ev[i].id;
            rp->ev[i].end = t->ev[i].end;
        }
    }
}

int bench_trace_write(const struct bench_ctx *ctx, const struct bench_point *pt,
                      const struct cg_algo *algo, const struct bench_trace *t, char *msg,
                      size_t msglen)
{
    if (!t->on) {
        return 0;
    }
    int p = ctx->p;
    int rc = MPI_SUCCESS;
    struct rank_part mine;
    struct rank_part *parts = NULL;

    memset(&mine, 0, sizeof(mine));
    mine.reps = calloc(BENCH_TRACE_REPS, sizeof(*mine.reps));
    mine.ev = calloc((t->n > 0) ? t->n : 1, sizeof(*mine.ev));
    if (mine.reps == NULL || mine.ev == NULL) {
        /* Sent as a rank without a buffer: rank 0 still hears from it. */
        mine.h.nobuf = 1;
    } else {
        pack_rank(ctx, t, &mine);
    }
    if (ctx->rank != 0) {
        struct wire_head h = mine.h;
        if (h.nobuf) {
            h.nreps = 0;
            h.nevents = 0;
        }
        rc = MPI_Send(&h, (int)sizeof(h), MPI_BYTE, 0, TAG_TRACE, ctx->sync_comm);
        if (rc == MPI_SUCCESS && h.nreps > 0) {
            rc = MPI_Send(mine.reps, (int)(h.nreps * (int64_t)sizeof(*mine.reps)), MPI_BYTE, 0,
                          TAG_TRACE, ctx->sync_comm);
        }
        if (rc == MPI_SUCCESS && h.nevents > 0) {
            rc = MPI_Send(mine.ev, (int)(h.nevents * (int64_t)sizeof(*mine.ev)), MPI_BYTE, 0,
                          TAG_TRACE, ctx->sync_comm);
        }
        free(mine.reps);
        free(mine.ev);
        return (rc == MPI_SUCCESS) ? 0 : -1;
    }

    /* Rank 0. */
    int nobuf = mine.h.nobuf;
    parts = calloc((size_t)p, sizeof(*parts));
    if (parts == NULL) {
        nobuf = 1;
    } else {
        parts[0] = mine;
    }
    /* Why every rank is heard even after a failure: a rank whose
     * message is never received would wait in MPI_Send for ever. A
     * receive without room is one of 0 bytes: MPI_ERR_TRUNCATE, and the
     * message is taken. */
    for (int r = 1; r < p; r++) {
        struct wire_head h;
        if (MPI_Recv(&h, (int)sizeof(h), MPI_BYTE, r, TAG_TRACE, ctx->sync_comm,
                     MPI_STATUS_IGNORE) != MPI_SUCCESS) {
            rc = MPI_ERR_OTHER;
            continue;
        }
        struct wire_rep *reps = calloc((size_t)(h.nreps > 0 ? h.nreps : 1), sizeof(*reps));
        struct wire_ev *ev = calloc((size_t)(h.nevents > 0 ? h.nevents : 1), sizeof(*ev));
        int64_t dummy;
        if (h.nreps > 0 &&
            MPI_Recv(reps != NULL ? (void *)reps : (void *)&dummy,
                     reps != NULL ? (int)(h.nreps * (int64_t)sizeof(*reps)) : 0, MPI_BYTE, r,
                     TAG_TRACE, ctx->sync_comm, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
            rc = MPI_ERR_OTHER;
        }
        if (h.nevents > 0 &&
            MPI_Recv(ev != NULL ? (void *)ev : (void *)&dummy,
                     ev != NULL ? (int)(h.nevents * (int64_t)sizeof(*ev)) : 0, MPI_BYTE, r,
                     TAG_TRACE, ctx->sync_comm, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
            rc = MPI_ERR_OTHER;
        }
        if (reps == NULL || ev == NULL || parts == NULL || h.nobuf) {
            nobuf = 1;
            free(reps);
            free(ev);
            continue;
        }
        parts[r].h = h;
        parts[r].reps = reps;
        parts[r].ev = ev;
    }
    int out = 0;
    if (rc != MPI_SUCCESS) {
        bench_fmt(msg, msglen, "trace of %s: the harness's own gather failed", pt->id);
        out = -1;
    } else if (nobuf) {
        bench_fmt(msg, msglen, "trace of %s: out of memory on some rank; no trace written",
                  pt->id);
        out = -1;
    } else {
        long unmatched = 0, dropped = 0;
        cJSON *doc = build_doc(ctx, pt, algo, parts, t->cap, &unmatched, &dropped);
        char *text = (doc != NULL) ? cJSON_PrintUnformatted(doc) : NULL;
        char path[4096];
        bench_fmt(path, sizeof path, "%s/%s.json", ctx->job->out_trace_dir, pt->id);
        if (text == NULL) {
            bench_fmt(msg, msglen, "trace of %s: out of memory", pt->id);
            out = -1;
        } else if (bench_mkdirs(ctx->job->out_trace_dir) != 0 ||
                   cg_write_atomic(path, text, strlen(text)) != 0) {
            bench_fmt(msg, msglen, "%s: cannot write: %s", path, strerror(errno));
            out = -1;
        }
        free(text);
        cJSON_Delete(doc);
    }
    if (parts != NULL) {
        for (int r = 0; r < p; r++) {
            free(parts[r].reps);
            free(parts[r].ev);
        }
        free(parts);
    } else {
        free(mine.reps);
        free(mine.ev);
    }
    return out;
}
