/* run.c - collgen run: a campaign from a test descriptor and a platform
 * descriptor (descriptors/README.md), written to results/<campaign>/ in the
 * formats of harness/FORMATS.md.
 *
 *   1. load     platform, the registry of schedules, test: every error before anything runs
 *   2. plan     jobs (one launch per library, ranks and knob setting), points
 *   3. create   results/<campaign>/ with campaign.json (descriptors as given,
 *               their hashes, the resolved plan, the command line)
 *   4. launch   each job: jobs/job-<n>.json, the launcher, logs/job-<n>.log,
 *               a timeout; then every point without a record gets one
 *               (status error or timeout, with the reason)
 *   5. report   cg_report_main on the campaign directory
 *
 * --resume DIR reads the plan back from DIR/campaign.json, cuts a partial
 * last line of points.jsonl, and launches new jobs holding only the points
 * that have no record. One runner per campaign: an flock(2) on DIR/lock,
 * held by the runner and by each job's supervisor (run_exec.c).
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "run_internal.h"

#define CG_CAMPAIGN_SCHEMA 1

static const char usage[] =
    "usage: collgen run TEST [--platform NAME|FILE] [--out DIR] [--dry-run] [--quiet]\n"
    "                        [--no-report] [--registry FILE]\n"
    "       collgen run --resume DIR [--retry-errors] [--quiet] [--no-report]\n"
    "       collgen run --list-algorithms [--platform NAME|FILE]\n"
    "\n"
    "TEST is a name under descriptors/tests/ (quickstart) or a path; the platform\n"
    "a name under descriptors/platforms/ (default: local) or a path. Run from the\n"
    "repository root. See descriptors/README.md and harness/FORMATS.md.\n"
    "\n"
    "  --platform P       where and how to run (default local)\n"
    "  --out DIR          the campaign directory (default results/<test>-<UTC time>)\n"
    "  --dry-run          validate, print the plan and the commands (or batch\n"
    "                     scripts); write and run nothing\n"
    "  --resume DIR       finish a campaign that was stopped or killed: run only the\n"
    "                     points without a record in DIR/points.jsonl (under Slurm,\n"
    "                     after the jobs an earlier run left in the queue end)\n"
    "  --retry-errors     with --resume: run again the points recorded as error or\n"
    "                     timeout (their records move to DIR/points.retried.jsonl)\n"
    "  --quiet            no progress line\n"
    "  --no-report        do not run `collgen report DIR` at the end\n"
    "  --registry FILE    the schedules a test may name, as the generator listed them\n"
    "                     (default emitted/registry.json); bench runs those compiled\n"
    "                     into it (emitted/), so another is for validating and\n"
    "                     planning (--dry-run), as the tests do\n"
    "  --list-algorithms  the native algorithms the platform can force, one per line:\n"
    "                     library collective name id\n"
    "\n"
    "Exit status: 0 every point has a record and none is error or timeout; 1 some\n"
    "are; 2 bad descriptors or options (nothing ran); 130 interrupted (resume it).\n";

/* A resume, for campaign.json. */
struct cg_resume_entry {
    const char *utc;   /* when */
    const char **argv; /* its command line */
    int argc;          /* entries */
};

/* Everything campaign.json holds: written by a fresh run, read back by
 * --resume, rewritten (with one more resume) by it. */
struct cg_campaign {
    const char *id;                  /* campaign id */
    const char *dir;                 /* its directory */
    const char *created_utc;         /* when the first run began */
    const char **argv;               /* first command line */
    int argc;                        /* entries */
    const char *cwd;                 /* where it ran */
    const char *test_name;           /* test descriptor: name */
    const char *test_file;           /* its path */
    const char *test_text;           /* verbatim */
    size_t test_len;                 /* its length */
    const char *platform_name;       /* platform descriptor: name */
    const char *platform_file;       /* its path */
    const char *platform_text;       /* verbatim */
    size_t platform_len;             /* its length */
    const char *launcher;            /* local, slurm */
    const char *description;         /* the test's, or NULL */
    struct cg_kv *labels;            /* the test's labels */
    int nlabels;                     /* entries */
    struct cg_timing timing;         /* repetition policy */
    int launches;                    /* launches of every job (the test's "launches") */
    const char *check;               /* check policy */
    const char *verbosity;           /* metadata verbosity */
    int timeout_s;                   /* per job */
    struct cg_plan plan;             /* jobs and points */
    struct cg_resume_entry *resumes; /* resumes so far */
    int nresumes;                    /* entries */
};

/* The one context of a `collgen run`. */
struct run_ctx {
    struct cg_arena arena;       /* everything below lives here */
    struct cg_diag diag;         /* errors */
    int argc;                    /* the command line, for campaign.json */
    char **argv;                 /* its arguments (argv[0] is "run") */
    const char *test_arg;        /* TEST */
    const char *platform_arg;    /* --platform */
    const char *out_arg;         /* --out */
    const char *resume_dir;      /* --resume */
    const char *registry_arg;    /* --registry */
    int dry_run;                 /* --dry-run */
    int quiet;                   /* --quiet */
    int list_algorithms;         /* --list-algorithms */
    int no_report;               /* --no-report */
    int retry_errors;            /* --retry-errors */
    struct cg_platform platform; /* loaded */
    struct cg_registry reg;      /* emitted/registry.json */
    struct cg_test test;         /* loaded (fresh runs) */
    struct cg_campaign cp;       /* the campaign */
    char *points_path;           /* DIR/points.jsonl */
    int lock_fd;                 /* DIR/lock, flock'd */
    sigset_t orig_mask;          /* the mask before the runner blocked signals */
    int interrupted;             /* SIGINT, SIGTERM or SIGHUP arrived */
    long long status_count[5];   /* records by status, this run's jobs */
    long long all_count[5];      /* records by status, the whole campaign */
    long long recorded;          /* points with a record */
};

enum { ST_OK, ST_FAILED_CHECK, ST_ERROR, ST_TIMEOUT, ST_SKIPPED };
static const char *const status_names[] = { "ok", "failed_check", "error", "timeout", "skipped" };

static int status_index(const char *s)
{
    for (int i = 0; i < 5; i++) {
        if (strcmp(status_names[i], s) == 0) {
            return i;
        }
    }
    return ST_ERROR;
}

static void fail(struct run_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void fail(struct run_ctx *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    struct cg_pos none = { 0, 0 };
    cg_verror(&c->diag, "collgen run", none, fmt, ap);
    va_end(ap);
}

/* ---- finding descriptors ------------------------------------------------ */

/* The names descriptors/<kind>/ offers, for messages. */
static const char *known_names(struct run_ctx *c, const char *kind)
{
    char *dir = cg_arena_printf(&c->arena, "descriptors/%s", kind);
    char *out = cg_arena_strdup(&c->arena, "");
    char **names = NULL;
    int n = 0;
    DIR *d = opendir(dir);
    if (d != NULL) {
        for (struct dirent *e = readdir(d); e != NULL; e = readdir(d)) {
            size_t len = strlen(e->d_name);
            if (len > 5 && strcmp(e->d_name + len - 5, ".json") == 0) {
                char **g = realloc(names, sizeof(char *) * (size_t)(n + 1));
                if (g == NULL) {
                    break;
                }
                names = g;
                names[n] = cg_arena_strdup(&c->arena, e->d_name);
                names[n][len - 5] = '\0';
                n++;
            }
        }
        closedir(d);
    }
    for (int i = 0; i < n; i++) {
        for (int j = i + 1; j < n; j++) {
            if (strcmp(names[j], names[i]) < 0) {
                char *t = names[i];
                names[i] = names[j];
                names[j] = t;
            }
        }
        out = cg_arena_printf(&c->arena, "%s%s%s", out, i ? ", " : "", names[i]);
    }
    free(names);
    return n ? out : "none";
}

/* NAME -> descriptors/<kind>/NAME.json; anything with a '/' or ending in
 * .json is a path. */
static const char *find_descriptor(struct run_ctx *c, const char *kind, const char *what,
                                   const char *arg)
{
    size_t n = strlen(arg);
    if (strchr(arg, '/') != NULL || (n > 5 && strcmp(arg + n - 5, ".json") == 0)) {
        return arg;
    }
    const char *path = cg_arena_printf(&c->arena, "descriptors/%s/%s.json", kind, arg);
    if (access(path, F_OK) != 0) {
        fail(c, "unknown %s '%s': %s does not exist (%ss: %s)", what, arg, path, what,
             known_names(c, kind));
        return NULL;
    }
    return path;
}

/* ---- campaign.json ------------------------------------------------------ */

static const char *fnv_hex(struct cg_arena *a, const char *text, size_t len)
{
    return cg_arena_printf(a, "%016llx", (unsigned long long)cg_fnv1a64(text, len));
}

static void write_point(struct cg_jw *w, const struct cg_point *pt)
{
    cg_jw_obj(w, NULL);
    cg_jw_str(w, "id", pt->id);
    cg_jw_int(w, "seq", pt->seq);
    cg_jw_str(w, "collective", cg_point_coll_name(pt->coll));
    cg_jw_str(w, "impl", pt->impl);
    cg_jw_int(w, "count", pt->count);
    cg_jw_str(w, "datatype", cg_dtype_names[pt->dtype]);
    cg_jw_str(w, "op", cg_redop_names[pt->op]);
    cg_jw_int(w, "root", pt->root);
    cg_jw_bool(w, "in_place", pt->in_place);
    if (pt->force != NULL) {
        /* A native algorithm forced in this launch (FORMATS.md, "knobs" of
         * a point): the job's knobs, for this point alone. */
        const struct cg_point_force *f = pt->force;
        cg_jw_obj(w, "knobs");
        cg_jw_str(w, "algorithm", f->algorithm);
        cg_jw_str(w, "forced_by", f->forced_by);
        cg_jw_kv(w, "env", f->env, f->nenv);
        cg_jw_obj(w, "at_run_time");
        cg_jw_arr(w, "mpi_t");
        for (int i = 0; i < f->nwrite; i++) {
            cg_jw_str(w, NULL, f->write[i]);
        }
        cg_jw_end(w);
        cg_jw_bool(w, "new_communicator", f->new_comm);
        cg_jw_end(w);
        cg_jw_end(w);
    }
    cg_jw_end(w);
}

static void write_knobs(struct cg_jw *w, const struct cg_job *job)
{
    cg_jw_obj(w, "knobs");
    cg_jw_str(w, "algorithm", job->algorithm);
    cg_jw_str(w, "forced_by", job->forced_by);
    cg_jw_kv(w, "env", job->knob_env, job->nknob_env);
    cg_jw_kv(w, "settings", job->settings, job->nsettings);
    cg_jw_end(w);
}

static int save_campaign(struct run_ctx *c)
{
    const struct cg_campaign *cp = &c->cp;
    char *text = NULL;
    size_t len = 0;
    struct cg_jw w;
    cg_jw_init(&w);
    cg_jw_obj(&w, NULL);
    cg_jw_int(&w, "schema_version", CG_CAMPAIGN_SCHEMA);
    cg_jw_str(&w, "campaign", cp->id);
    cg_jw_str(&w, "created_utc", cp->created_utc);
    cg_jw_arr(&w, "command_line");
    for (int i = 0; i < cp->argc; i++) {
        cg_jw_str(&w, NULL, cp->argv[i]);
    }
    cg_jw_end(&w);
    cg_jw_str(&w, "cwd", cp->cwd);
    cg_jw_obj(&w, "test");
    cg_jw_str(&w, "name", cp->test_name);
    cg_jw_str(&w, "file", cp->test_file);
    cg_jw_str(&w, "fnv1a64", fnv_hex(&c->arena, cp->test_text, cp->test_len));
    cg_jw_str(&w, "text", cp->test_text);
    cg_jw_end(&w);
    cg_jw_obj(&w, "platform");
    cg_jw_str(&w, "name", cp->platform_name);
    cg_jw_str(&w, "file", cp->platform_file);
    cg_jw_str(&w, "fnv1a64", fnv_hex(&c->arena, cp->platform_text, cp->platform_len));
    cg_jw_str(&w, "text", cp->platform_text);
    cg_jw_end(&w);
    cg_jw_obj(&w, "resolved");
    cg_jw_str(&w, "description", cp->description);
    cg_jw_kv(&w, "labels", cp->labels, cp->nlabels);
    cg_jw_str(&w, "launcher", cp->launcher);
    cg_write_timing(&w, &cp->timing, NULL, NULL, NULL, NULL);
    cg_jw_int(&w, "launches", cp->launches);
    cg_jw_str(&w, "check", cp->check);
    cg_jw_str(&w, "verbosity", cp->verbosity);
    cg_jw_int(&w, "timeout_s", cp->timeout_s);
    cg_jw_end(&w);
    cg_jw_obj(&w, "plan");
    cg_jw_int(&w, "jobs_total", cp->plan.njobs);
    cg_jw_int(&w, "points_total", cp->plan.npoints);
    cg_jw_arr(&w, "notes");
    for (int i = 0; i < cp->plan.nnotes; i++) {
        cg_jw_str(&w, NULL, cp->plan.notes[i]);
    }
    cg_jw_end(&w);
    cg_jw_arr(&w, "jobs");
    for (int j = 0; j < cp->plan.njobs; j++) {
        const struct cg_job *job = &cp->plan.jobs[j];
        cg_jw_obj(&w, NULL);
        cg_jw_int(&w, "job", job->index);
        cg_jw_str(&w, "library", job->library);
        cg_jw_str(&w, "backend", job->backend);
        cg_jw_int(&w, "ranks", job->ranks);
        cg_jw_int(&w, "ranks_per_node", job->ranks_per_node);
        cg_jw_int(&w, "nodes", job->nodes);
        if (job->vppn > 0) {
            cg_jw_int(&w, "virtual_ranks_per_node", job->vppn);
        } else {
            cg_jw_null(&w, "virtual_ranks_per_node");
        }
        cg_jw_str(&w, "forced_collective",
                  job->forced_coll >= 0 ? cg_colls[job->forced_coll].name : NULL);
        cg_jw_int(&w, "launch", job->launch);
        cg_jw_int(&w, "launches", job->launches);
        cg_jw_int(&w, "base_job", job->base);
        /* The order of each size's implementations in this launch (run_launch.c). */
        cg_jw_str(&w, "point_order", job->shuffled ? "shuffled" : "listed");
        if (job->shuffled) {
            cg_jw_int(&w, "order_seed", (int64_t)cg_launch_order_seed(job));
        } else {
            cg_jw_null(&w, "order_seed");
        }
        write_knobs(&w, job);
        cg_jw_kv(&w, "env", job->env, job->nenv);
        cg_jw_arr(&w, "points");
        for (int i = 0; i < job->npoints; i++) {
            write_point(&w, &job->points[i]);
        }
        cg_jw_end(&w);
        cg_jw_end(&w);
    }
    cg_jw_end(&w);
    cg_jw_end(&w);
    cg_jw_arr(&w, "resumes");
    for (int i = 0; i < cp->nresumes; i++) {
        cg_jw_obj(&w, NULL);
        cg_jw_str(&w, "utc", cp->resumes[i].utc);
        cg_jw_arr(&w, "command_line");
        for (int k = 0; k < cp->resumes[i].argc; k++) {
            cg_jw_str(&w, NULL, cp->resumes[i].argv[k]);
        }
        cg_jw_end(&w);
        cg_jw_end(&w);
    }
    cg_jw_end(&w);
    cg_jw_end(&w);
    text = cg_jw_text(&w, 1, &len);
    cg_jw_free(&w);
    if (text == NULL) {
        fail(c, "writing campaign.json: out of memory");
        return -1;
    }
    char *path = cg_arena_printf(&c->arena, "%s/campaign.json", cp->dir);
    int rc = cg_write_atomic(path, text, len);
    if (rc != 0) {
        fail(c, "cannot write %s: %s", path, strerror(errno));
    }
    free(text);
    return rc;
}

/* ---- reading campaign.json back (--resume) ------------------------------ */

struct reader {
    struct run_ctx *c; /* context */
    const char *file;  /* DIR/campaign.json */
    int bad;           /* errors */
};

static const struct cg_json *need(struct reader *r, const struct cg_json *obj, const char *key,
                                  enum cg_json_kind kind)
{
    const struct cg_json *j;
    int rc = cg_json_get_kind(obj, key, kind, &j); /* runtime/util/json.h */
    /* a string may be null (need_str gives NULL); nothing else may */
    if (rc != 0 && !(kind == CG_J_STRING && j != obj && j->kind == CG_J_NULL)) {
        cg_error(&r->c->diag, r->file, obj->pos,
                 "'%s' is missing or not %s: this file was not "
                 "written by collgen run",
                 key, cg_json_kind_name(kind));
        r->bad++;
        return NULL;
    }
    return j;
}

static const char *need_str(struct reader *r, const struct cg_json *obj, const char *key)
{
    const struct cg_json *j = need(r, obj, key, CG_J_STRING);
    return j != NULL && j->kind == CG_J_STRING ? j->str : NULL;
}

static int64_t need_int(struct reader *r, const struct cg_json *obj, const char *key)
{
    const struct cg_json *j = need(r, obj, key, CG_J_NUMBER);
    return j != NULL ? (int64_t)j->num : 0;
}

static struct cg_kv *read_kv(struct reader *r, const struct cg_json *obj, const char *key, int *n);

/* A point's "knobs" (write_point), read back for --resume. */
static const struct cg_point_force *read_force(struct reader *r, struct cg_arena *a,
                                               const struct cg_json *pk)
{
    struct cg_point_force *f = cg_arena_alloc(a, sizeof(*f));
    memset(f, 0, sizeof(*f));
    f->algorithm = need_str(r, pk, "algorithm");
    f->forced_by = need_str(r, pk, "forced_by");
    f->env = read_kv(r, pk, "env", &f->nenv);
    const struct cg_json *rt = need(r, pk, "at_run_time", CG_J_OBJECT);
    const struct cg_json *mt = rt != NULL ? need(r, rt, "mpi_t", CG_J_ARRAY) : NULL;
    const struct cg_json *nc = rt != NULL ? need(r, rt, "new_communicator", CG_J_BOOL) : NULL;
    f->new_comm = nc != NULL ? nc->boolean : 0;
    f->write = cg_arena_alloc(a, sizeof(*f->write) * (size_t)((mt != NULL ? mt->nitems : 0) + 1));
    for (int i = 0; mt != NULL && i < mt->nitems; i++) {
        if (mt->items[i]->kind == CG_J_STRING) {
            f->write[f->nwrite++] = mt->items[i]->str;
        } else {
            cg_error(&r->c->diag, r->file, mt->items[i]->pos, "at_run_time.mpi_t: a variable name");
            r->bad++;
        }
    }
    return f;
}

static struct cg_kv *read_kv(struct reader *r, const struct cg_json *obj, const char *key, int *n)
{
    const struct cg_json *j = need(r, obj, key, CG_J_OBJECT);
    *n = 0;
    if (j == NULL) {
        return NULL;
    }
    struct cg_kv *kv = cg_arena_alloc(&r->c->arena, sizeof(*kv) * (size_t)(j->nitems + 1));
    for (int i = 0; i < j->nitems; i++) {
        if (j->items[i]->kind != CG_J_STRING) {
            r->bad++;
            continue;
        }
        kv[*n].key.s = j->items[i]->key;
        kv[*n].value.s = j->items[i]->str;
        (*n)++;
    }
    return kv;
}

static int index_in(const char *const *names, int n, const char *s)
{
    for (int i = 0; s != NULL && i < n; i++) {
        if (strcmp(names[i], s) == 0) {
            return i;
        }
    }
    return -1;
}

static const char **read_argv(struct reader *r, const struct cg_json *arr, int *argc)
{
    const char **argv = cg_arena_alloc(&r->c->arena, sizeof(char *) * (size_t)(arr->nitems + 1));
    *argc = 0;
    for (int i = 0; i < arr->nitems; i++) {
        if (arr->items[i]->kind == CG_J_STRING) {
            argv[(*argc)++] = arr->items[i]->str;
        }
    }
    return argv;
}

static int load_campaign(struct run_ctx *c, const char *dir)
{
    struct cg_campaign *cp = &c->cp;
    memset(cp, 0, sizeof(*cp));
    cp->dir = dir;
    struct reader r = { c, cg_arena_printf(&c->arena, "%s/campaign.json", dir), 0 };
    size_t len;
    char *text = cg_read_file(&c->arena, &c->diag, r.file, &len);
    if (text == NULL) {
        return -1;
    }
    struct cg_json *root = cg_json_parse(&c->arena, &c->diag, r.file, text, len);
    if (root == NULL || root->kind != CG_J_OBJECT) {
        return -1;
    }
    if (need_int(&r, root, "schema_version") != CG_CAMPAIGN_SCHEMA) {
        cg_error(&c->diag, r.file, root->pos, "schema_version is not %d", CG_CAMPAIGN_SCHEMA);
        return -1;
    }
    cp->id = need_str(&r, root, "campaign");
    cp->created_utc = need_str(&r, root, "created_utc");
    cp->cwd = need_str(&r, root, "cwd");
    const struct cg_json *j;
    if ((j = need(&r, root, "command_line", CG_J_ARRAY)) != NULL) {
        cp->argv = read_argv(&r, j, &cp->argc);
    }
    const struct cg_json *t = need(&r, root, "test", CG_J_OBJECT);
    const struct cg_json *p = need(&r, root, "platform", CG_J_OBJECT);
    const struct cg_json *res = need(&r, root, "resolved", CG_J_OBJECT);
    const struct cg_json *plan = need(&r, root, "plan", CG_J_OBJECT);
    if (r.bad) {
        return -1;
    }
    cp->test_name = need_str(&r, t, "name");
    cp->test_file = need_str(&r, t, "file");
    cp->test_text = need_str(&r, t, "text");
    cp->test_len = cp->test_text ? strlen(cp->test_text) : 0;
    cp->platform_name = need_str(&r, p, "name");
    cp->platform_file = need_str(&r, p, "file");
    cp->platform_text = need_str(&r, p, "text");
    cp->platform_len = cp->platform_text ? strlen(cp->platform_text) : 0;
    cp->description = need_str(&r, res, "description");
    cp->labels = read_kv(&r, res, "labels", &cp->nlabels);
    cp->launcher = need_str(&r, res, "launcher");
    const struct cg_json *tm = need(&r, res, "timing", CG_J_OBJECT);
    if (tm != NULL) {
        cp->timing.sync = need_str(&r, tm, "sync");
        cp->timing.warmup = (int)need_int(&r, tm, "warmup");
        cp->timing.min_reps = (int)need_int(&r, tm, "min_reps");
        cp->timing.max_reps = (int)need_int(&r, tm, "max_reps");
        const struct cg_json *x = need(&r, tm, "rse_target", CG_J_NUMBER);
        cp->timing.rse_target = x ? x->num : 0;
        x = need(&r, tm, "budget_s", CG_J_NUMBER);
        cp->timing.budget_s = x ? x->num : 0;
        /* Optional: campaigns planned before window sync and the NREP
         * policy have neither. */
        x = cg_json_get(tm, "window_us");
        cp->timing.window_us = (x != NULL && x->kind == CG_J_NUMBER) ? x->num : 100.0;
        x = cg_json_get(tm, "policy");
        cp->timing.policy = (x != NULL && x->kind == CG_J_STRING) ? x->str : "rse";
        const struct cg_json *nr = cg_json_get(tm, "nrep");
        cp->timing.nrep = (struct cg_nrep){ 0.01, 5, 5, 0.05, 5 };
        if (nr != NULL && nr->kind == CG_J_OBJECT) {
            const struct cg_json *t1 = need(&r, nr, "t1_rse", CG_J_NUMBER);
            const struct cg_json *rb = need(&r, nr, "rse_b", CG_J_NUMBER);
            cp->timing.nrep.t1_rse = t1 != NULL ? t1->num : 0.01;
            cp->timing.nrep.rse_b = rb != NULL ? rb->num : 0.05;
            cp->timing.nrep.b1 = (int)need_int(&r, nr, "b1");
            cp->timing.nrep.b2 = (int)need_int(&r, nr, "b2");
            cp->timing.nrep.k = (int)need_int(&r, nr, "k");
        }
    }
    {
        const struct cg_json *ln = cg_json_get(res, "launches");
        cp->launches = (ln != NULL && ln->kind == CG_J_NUMBER) ? (int)ln->num : 1;
    }
    cp->check = need_str(&r, res, "check");
    cp->verbosity = need_str(&r, res, "verbosity");
    cp->timeout_s = (int)need_int(&r, res, "timeout_s");
    if ((j = need(&r, plan, "notes", CG_J_ARRAY)) != NULL) {
        cp->plan.notes = read_argv(&r, j, &cp->plan.nnotes);
    }
    const struct cg_json *jobs = need(&r, plan, "jobs", CG_J_ARRAY);
    if (jobs == NULL) {
        return -1;
    }
    const char *cnames[CG_COLL_COUNT_];
    for (int k = 0; k < CG_COLL_COUNT_; k++) {
        cnames[k] = cg_colls[k].name;
    }
    cp->plan.jobs = cg_arena_alloc(&c->arena, sizeof(struct cg_job) * (size_t)(jobs->nitems + 1));
    for (int i = 0; i < jobs->nitems; i++) {
        const struct cg_json *jj = jobs->items[i];
        struct cg_job *job = &cp->plan.jobs[cp->plan.njobs++];
        job->index = (int)need_int(&r, jj, "job");
        job->library = need_str(&r, jj, "library");
        job->backend = need_str(&r, jj, "backend");
        job->ranks = (int)need_int(&r, jj, "ranks");
        job->ranks_per_node = (int)need_int(&r, jj, "ranks_per_node");
        job->nodes = (int)need_int(&r, jj, "nodes");
        /* Optional: campaigns planned before node shapes existed have none. */
        const struct cg_json *vp = cg_json_get(jj, "virtual_ranks_per_node");
        job->vppn = vp != NULL && vp->kind == CG_J_NUMBER ? (int)vp->num : 0;
        /* Optional too: campaigns planned before repeated launches. */
        const struct cg_json *lj = cg_json_get(jj, "launch");
        const struct cg_json *lo = cg_json_get(jj, "launches");
        const struct cg_json *bj = cg_json_get(jj, "base_job");
        job->launch = lj != NULL && lj->kind == CG_J_NUMBER ? (int)lj->num : 1;
        job->launches = lo != NULL && lo->kind == CG_J_NUMBER ? (int)lo->num : 1;
        job->base = bj != NULL && bj->kind == CG_J_NUMBER ? (int)bj->num : job->index;
        /* Optional: campaigns planned before shuffled launches ran in listed order. */
        const struct cg_json *po = cg_json_get(jj, "point_order");
        job->shuffled = po != NULL && po->kind == CG_J_STRING && strcmp(po->str, "shuffled") == 0;
        job->forced_coll = index_in(cnames, CG_COLL_COUNT_, need_str(&r, jj, "forced_collective"));
        const struct cg_json *kn = need(&r, jj, "knobs", CG_J_OBJECT);
        if (kn != NULL) {
            job->algorithm = need_str(&r, kn, "algorithm");
            job->forced_by = need_str(&r, kn, "forced_by");
            job->knob_env = read_kv(&r, kn, "env", &job->nknob_env);
            job->settings = read_kv(&r, kn, "settings", &job->nsettings);
        }
        job->env = read_kv(&r, jj, "env", &job->nenv);
        const struct cg_json *pts = need(&r, jj, "points", CG_J_ARRAY);
        if (pts == NULL) {
            continue;
        }
        job->points =
            cg_arena_alloc(&c->arena, sizeof(struct cg_point) * (size_t)(pts->nitems + 1));
        for (int k = 0; k < pts->nitems; k++) {
            const struct cg_json *pj = pts->items[k];
            struct cg_point *pt = &job->points[job->npoints++];
            pt->id = need_str(&r, pj, "id");
            pt->seq = (int)need_int(&r, pj, "seq");
            int coll = cg_point_coll_by_name(need_str(&r, pj, "collective"));
            pt->impl = need_str(&r, pj, "impl");
            pt->count = need_int(&r, pj, "count");
            pt->dtype = index_in(cg_dtype_names, CG_DT_COUNT_, need_str(&r, pj, "datatype"));
            pt->op = index_in(cg_redop_names, CG_OP_COUNT_, need_str(&r, pj, "op"));
            pt->root = (int)need_int(&r, pj, "root");
            const struct cg_json *ip = need(&r, pj, "in_place", CG_J_BOOL);
            pt->in_place = ip ? ip->boolean : 0;
            if (coll < 0 || pt->dtype < 0 || pt->op < 0 || pt->id == NULL || pt->impl == NULL) {
                cg_error(&c->diag, r.file, pj->pos, "a point of job %d is malformed", job->index);
                r.bad++;
                continue;
            }
            pt->coll = (enum cg_coll)coll;
            pt->bytes = pt->count * cg_dtype_sizes[pt->dtype];
            const struct cg_json *pk = cg_json_get(pj, "knobs");
            if (pk != NULL && pk->kind == CG_J_OBJECT) {
                pt->force = read_force(&r, &c->arena, pk);
            }
        }
        cp->plan.npoints += job->npoints;
    }
    const struct cg_json *rs = cg_json_get(root, "resumes");
    if (rs != NULL && rs->kind == CG_J_ARRAY) {
        cp->resumes = cg_arena_alloc(&c->arena, sizeof(*cp->resumes) * (size_t)(rs->nitems + 2));
        for (int i = 0; i < rs->nitems; i++) {
            const struct cg_json *e = rs->items[i];
            struct cg_resume_entry *re = &cp->resumes[cp->nresumes++];
            re->utc = need_str(&r, e, "utc");
            if ((j = need(&r, e, "command_line", CG_J_ARRAY)) != NULL) {
                re->argv = read_argv(&r, j, &re->argc);
            }
        }
    } else {
        cp->resumes = cg_arena_alloc(&c->arena, sizeof(*cp->resumes) * 2);
    }
    return r.bad ? -1 : 0;
}

/* ---- job files and the runner's own records ------------------------------ */

/* Exactly the keys of harness/FORMATS.md: bench rejects any other. The
 * library's plumbing (the whole environment added, the timeout) stays in
 * campaign.json and at the top of the job's log. */
static int write_job_file(struct run_ctx *c, const struct cg_job *job, const struct cg_launch *l,
                          const struct cg_point *const *pts, int npts, const char *estimate_out)
{
    const struct cg_campaign *cp = &c->cp;
    char *text = NULL;
    size_t len = 0;
    struct cg_jw w;
    cg_jw_init(&w);
    cg_jw_obj(&w, NULL);
    cg_jw_int(&w, "schema_version", CG_CAMPAIGN_SCHEMA);
    cg_jw_str(&w, "campaign", cp->id);
    cg_jw_int(&w, "run_id", l->run_id);
    cg_jw_str(&w, "library", job->library);
    cg_jw_int(&w, "ranks", job->ranks);
    cg_jw_int(&w, "ranks_per_node", job->ranks_per_node);
    if (job->vppn > 0) {
        cg_jw_int(&w, "virtual_ranks_per_node", job->vppn);
    } else {
        cg_jw_null(&w, "virtual_ranks_per_node");
    }
    write_knobs(&w, job);
    cg_write_timing(&w, &cp->timing, estimate_out, cp->dir, job, &c->arena);
    cg_jw_obj(&w, "launch");
    cg_jw_int(&w, "index", job->launch);
    cg_jw_int(&w, "of", job->launches);
    cg_jw_end(&w);
    cg_jw_str(&w, "verbosity", cp->verbosity);
    cg_jw_arr(&w, "points");
    for (int i = 0; i < npts; i++) {
        write_point(&w, pts[i]);
    }
    cg_jw_end(&w);
    cg_jw_obj(&w, "out");
    cg_jw_str(&w, "points", c->points_path);
    cg_jw_str(&w, "raw_dir", cg_arena_printf(&c->arena, "%s/raw", cp->dir));
    cg_jw_str(&w, "run_meta", cg_arena_printf(&c->arena, "%s/run-%d.json", cp->dir, l->run_id));
    if (strcmp(cp->verbosity, "trace") == 0) {
        cg_jw_str(&w, "trace_dir", cg_arena_printf(&c->arena, "%s/trace", cp->dir));
    }
    cg_jw_end(&w);
    cg_jw_end(&w);
    text = cg_jw_text(&w, 1, &len);
    cg_jw_free(&w);
    if (text == NULL) {
        return -1;
    }
    int rc = cg_write_atomic(l->job_file, text, len);
    free(text);
    return rc;
}

/* "params" of a record's requested block, from the implementation's name:
 * generated:<schedule>(radix=4) -> {"radix": 4}, micro:<name>(k=2) ->
 * {"k": 2}; null when it names none (bench fills in a schedule's defaults,
 * which the runner does not know on --resume). */
static void write_impl_params(struct cg_jw *w, const char *impl)
{
    const char *open = strchr(impl, '(');
    if (open == NULL) {
        cg_jw_null(w, "params");
        return;
    }
    cg_jw_obj(w, "params");
    for (const char *c = open + 1; *c != '\0' && *c != ')';) {
        char name[64];
        long value = 0;
        int used = 0;
        if (sscanf(c, "%63[^=,)]=%ld%n", name, &value, &used) != 2) {
            break;
        }
        cg_jw_int(w, name, value);
        c += used;
        c += *c == ',';
    }
    cg_jw_end(w);
}

/* Appends the runner's record for a point the job left without one. One
 * write(2) of one whole line on an O_APPEND descriptor: a crash leaves at
 * most a partial last line, which the next resume cuts. */
static int append_record(struct run_ctx *c, const struct cg_job *job, int run_id,
                         const struct cg_point *pt, const char *status, const char *reason)
{
    char *text = NULL;
    size_t len = 0;
    const char *colon = strchr(pt->impl, ':');
    const char *name = colon + 1;
    /* The record's kind is the impl's prefix: native, generated, bound or micro. */
    const char *kind = cg_arena_printf(&c->arena, "%.*s", (int)(colon - pt->impl), pt->impl);
    /* micro:multi_collective's collective runs on a lane: one rank per node. */
    int ppn = job->vppn > 0 ? job->vppn : job->ranks_per_node;
    int data_ranks = strncmp(pt->impl, "micro:multi_collective", 22) == 0 && ppn > 0
                         ? job->ranks / ppn
                         : job->ranks;
    double factor = cg_point_busbw_factor(pt->coll, data_ranks);
    struct cg_jw w;
    cg_jw_init(&w);
    cg_jw_obj(&w, NULL);
    cg_jw_int(&w, "schema_version", CG_RECORD_SCHEMA);
    cg_jw_str(&w, "campaign", c->cp.id);
    cg_jw_int(&w, "run_id", run_id);
    cg_jw_str(&w, "point_id", pt->id);
    cg_jw_int(&w, "seq", pt->seq);
    cg_jw_obj(&w, "launch");
    cg_jw_int(&w, "index", job->launch);
    cg_jw_int(&w, "of", job->launches);
    cg_jw_str(&w, "point_id", cg_point_base_id(&c->arena, job, pt));
    cg_jw_end(&w);
    cg_jw_str(&w, "status", status);
    cg_jw_str(&w, "reason", reason);
    cg_jw_str(&w, "collective", cg_point_coll_name(pt->coll));
    cg_jw_str(&w, "backend", job->backend);
    cg_jw_str(&w, "library", job->library);
    cg_jw_str(&w, "kind", kind);
    cg_jw_str(&w, "name", name);
    cg_jw_null(&w, "schedule_file");
    cg_jw_null(&w, "schedule_hash");
    cg_jw_obj(&w, "requested");
    cg_jw_str(&w, "algorithm", name);
    cg_jw_str(&w, "forced_by", job->forced_by);
    cg_jw_int(&w, "count", pt->count);
    cg_jw_str(&w, "datatype", cg_dtype_names[pt->dtype]);
    cg_jw_str(&w, "op", cg_redop_names[pt->op]);
    cg_jw_int(&w, "root", pt->root);
    cg_jw_bool(&w, "in_place", pt->in_place);
    cg_jw_int(&w, "ranks", job->ranks);
    cg_jw_int(&w, "ranks_per_node", job->vppn > 0 ? job->vppn : job->ranks_per_node);
    cg_jw_str(&w, "node_shape", job->vppn > 0 ? "virtual (CG_PPN)" : "real");
    cg_jw_bool(&w, "regular", job->ranks % (job->vppn > 0 ? job->vppn : job->ranks_per_node) == 0);
    cg_jw_kv(&w, "knobs", job->knob_env, job->nknob_env);
    write_impl_params(&w, pt->impl);
    cg_jw_null(&w, "reps");
    cg_jw_end(&w);
    cg_jw_null(&w, "effective");
    cg_jw_arr(&w, "diff");
    cg_jw_end(&w);
    cg_jw_int(&w, "size_B", cg_point_size_B(pt, data_ranks));
    cg_jw_null(&w, "timing");
    cg_jw_obj(&w, "bandwidth");
    cg_jw_null(&w, "algbw_GBps");
    cg_jw_null(&w, "busbw_GBps");
    if (factor >= 0.0) {
        cg_jw_num(&w, "busbw_factor", factor);
    } else {
        cg_jw_null(&w, "busbw_factor"); /* barrier: no data, no bandwidth */
    }
    cg_jw_end(&w);
    cg_jw_null(&w, "roofline");
    cg_jw_null(&w, "check");
    cg_jw_arr(&w, "tags");
    cg_jw_end(&w);
    cg_jw_null(&w, "raw");
    cg_jw_str(&w, "written_by", "collgen run");
    cg_jw_end(&w);
    text = cg_jw_text(&w, 0, &len); /* one line, its newline included */
    cg_jw_free(&w);
    if (text == NULL) {
        return -1;
    }
    int fd = open(c->points_path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    ssize_t k = -1;
    if (fd >= 0) {
        k = write(fd, text, len);
        if (close(fd) != 0) {
            k = -1;
        }
    }
    free(text);
    return k == (ssize_t)len ? 0 : -1;
}

/* ---- what a job's log says ----------------------------------------------- */

static int contains_ci(const char *s, const char *word)
{
    size_t n = strlen(word);
    for (; *s; s++) {
        if (strncasecmp(s, word, n) == 0) {
            return 1;
        }
    }
    return 0;
}

/* The last line of the log that is not the runner's own header, trimmed. */
static const char *log_tail(struct run_ctx *c, const char *path, const char *needle)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return NULL;
    }
    struct stat st;
    char buf[65537];
    off_t from = 0;
    if (fstat(fd, &st) == 0 && st.st_size > (off_t)(sizeof(buf) - 1)) {
        from = st.st_size - (off_t)(sizeof(buf) - 1);
    }
    ssize_t n = pread(fd, buf, sizeof(buf) - 1, from);
    close(fd);
    if (n <= 0) {
        return NULL;
    }
    buf[n] = '\0';
    /* Why a preference: MPI launchers end a failed run with banners and
     * boilerplate; the line that explains is the last one that names an
     * error, else simply the last line that is not a separator. */
    const char *found = NULL, *telling = NULL;
    for (char *line = strtok(buf, "\n"); line != NULL; line = strtok(NULL, "\n")) {
        while (*line == ' ' || *line == '\t' || *line == '\r') {
            line++;
        }
        if (*line == '\0' || strncmp(line, "# collgen run:", 14) == 0 ||
            strspn(line, "-=*_ \t\r") == strlen(line)) {
            continue;
        }
        if (needle != NULL) {
            if (strstr(line, needle) != NULL) {
                found = line;
            }
            continue;
        }
        found = line;
        if (contains_ci(line, "error") || contains_ci(line, "bench") ||
            contains_ci(line, "signal") || contains_ci(line, "not found") ||
            contains_ci(line, "no such file") || contains_ci(line, "denied") ||
            contains_ci(line, "killed") || contains_ci(line, "cancelled")) {
            telling = line;
        }
    }
    if (telling != NULL) {
        found = telling;
    }
    if (found == NULL) {
        return NULL;
    }
    char *s = cg_arena_printf(&c->arena, "%.300s", found);
    size_t k = strlen(s);
    while (k > 0 && (s[k - 1] == ' ' || s[k - 1] == '\r')) {
        s[--k] = '\0';
    }
    return s;
}

/* log_tail of the batch job's own output (Slurm), else of the launch's log:
 * under Slurm what went wrong is in the former, sbatch's log says nothing. */
static const char *job_log_tail(struct run_ctx *c, const struct cg_launch *l, const char *needle)
{
    const char *line = l->slurm_log != NULL ? log_tail(c, l->slurm_log, needle) : NULL;
    return line != NULL ? line : log_tail(c, l->log_file, needle);
}

/* Status and reason for the points a finished job left without a record. */
static void missing_reason(struct run_ctx *c, const struct cg_launch *l, const struct cg_exec *x,
                           const char **status, const char **reason)
{
    const char *last = job_log_tail(c, l, NULL);
    const char *tail = last ? cg_arena_printf(&c->arena, ": %s", last)
                       : l->slurm_log != NULL
                           ? cg_arena_printf(&c->arena, " (%s and %s are empty)", l->log_file,
                                             l->slurm_log)
                           : " (its log is empty)";
    const char *wrong = job_log_tail(c, l, "wrong launcher");
    if (wrong == NULL) {
        wrong = job_log_tail(c, l, "is linked against");
    }
    *status = "error";
    if (x->timed_out) {
        *status = "timeout";
        *reason = cg_arena_printf(&c->arena,
                                  "the job was killed at its timeout (%d s) before "
                                  "this point was recorded",
                                  c->cp.timeout_s);
    } else if (x->code == 124 || job_log_tail(c, l, "DUE TO TIME LIMIT") != NULL ||
               job_log_tail(c, l, "(CG_MPIRUN_TIMEOUT)") != NULL) {
        *status = "timeout";
        *reason = cg_arena_printf(&c->arena, "the launcher's time limit ran out (exit status %d)%s",
                                  x->code, tail);
    } else if (wrong != NULL) {
        *reason = cg_arena_printf(&c->arena, "wrong launcher (exit status %d): %s", x->code, wrong);
    } else if (x->code == 3) {
        *reason = cg_arena_printf(&c->arena,
                                  "wrong launcher or process count (bench exit status "
                                  "3)%s",
                                  tail);
    } else if (x->code == 127 && l->slurm_log != NULL) {
        /* sbatch --wait exits with the batch script's status. */
        *reason = cg_arena_printf(&c->arena, "the batch job exited with status 127 (a command of "
                                  "its script was not found)%s", tail);
    } else if (x->code == 127) {
        *reason = cg_arena_printf(&c->arena, "the launcher could not be executed%s", tail);
    } else if (x->code == 0) {
        *reason = cg_arena_printf(&c->arena,
                                  "the job ended (exit status 0) without a record for "
                                  "this point%s",
                                  tail);
    } else if (x->code > 128 && x->code < 128 + 32) {
        *reason =
            cg_arena_printf(&c->arena, "the job was killed by signal %d%s", x->code - 128, tail);
    } else {
        *reason = cg_arena_printf(&c->arena, "the %sjob exited with status %d%s",
                                  l->slurm_log != NULL ? "batch " : "", x->code, tail);
    }
}

/* ---- running jobs -------------------------------------------------------- */

static int cmp_point_ptr(const void *x, const void *y)
{
    return strcmp((*(struct cg_point *const *)x)->id, (*(struct cg_point *const *)y)->id);
}

/* Point lookup by id over the whole plan. */
struct index {
    struct cg_point **by_id; /* sorted by id */
    int n;                   /* entries */
    struct run_ctx *c;       /* for counting */
    long long unknown;       /* records whose id is not in the plan */
    long long repeated;      /* records for points already recorded */
    int counting;            /* count statuses into c->status_count */
};

static struct cg_point *lookup(struct index *ix, const char *id)
{
    struct cg_point key = { 0 };
    key.id = id;
    struct cg_point *kp = &key;
    struct cg_point **hit =
        bsearch(&kp, ix->by_id, (size_t)ix->n, sizeof(*ix->by_id), cmp_point_ptr);
    return hit ? *hit : NULL;
}

static void on_record(const char *id, const char *status, const char *reason, void *ctx)
{
    (void)reason;
    struct index *ix = ctx;
    struct cg_point *pt = lookup(ix, id);
    if (pt == NULL) {
        ix->unknown++;
        return;
    }
    if (pt->recorded) {
        ix->repeated++;
        return;
    }
    pt->recorded = 1;
    ix->c->recorded++;
    ix->c->all_count[status_index(status)]++;
    if (ix->counting) {
        ix->c->status_count[status_index(status)]++;
    }
}

static void build_index(struct run_ctx *c, struct index *ix)
{
    memset(ix, 0, sizeof(*ix));
    ix->c = c;
    ix->by_id = cg_arena_alloc(&c->arena, sizeof(*ix->by_id) * (size_t)(c->cp.plan.npoints + 1));
    for (int j = 0; j < c->cp.plan.njobs; j++) {
        for (int i = 0; i < c->cp.plan.jobs[j].npoints; i++) {
            ix->by_id[ix->n++] = &c->cp.plan.jobs[j].points[i];
        }
    }
    qsort(ix->by_id, (size_t)ix->n, sizeof(*ix->by_id), cmp_point_ptr);
}

static const char *job_label(struct run_ctx *c, const struct cg_job *job)
{
    int deflt = 0, gen = 0, bound = 0, micro = 0, base = 0, forced = 0;
    for (int i = 0; i < job->npoints; i++) {
        forced += job->points[i].force != NULL;
        base |= strncmp(job->points[i].impl, "baseline:", 9) == 0;
        deflt |= strcmp(job->points[i].impl, "native:default") == 0;
        gen |= strncmp(job->points[i].impl, "generated:", 10) == 0;
        bound |= strncmp(job->points[i].impl, "bound:", 6) == 0;
        micro |= strncmp(job->points[i].impl, "micro:", 6) == 0;
    }
    const char *what = job->algorithm != NULL
                           ? cg_arena_printf(&c->arena, "native:%s (%s)", job->algorithm,
                                             cg_colls[job->forced_coll].name)
                       : deflt && gen ? "native:default + generated"
                       : gen          ? "generated"
                       : deflt        ? "native:default"
                       : bound        ? "bound"
                                      : "micro";
    if (base) {
        what = cg_arena_printf(&c->arena, "%s + baseline", what);
    }
    if (forced > 0) {
        what = cg_arena_printf(&c->arena, "%s + %d native points forced through MPI_T", what,
                               forced);
    }
    if (bound && (deflt || gen)) {
        what = cg_arena_printf(&c->arena, "%s + bound", what);
    }
    if (micro && (deflt || gen || bound)) {
        what = cg_arena_printf(&c->arena, "%s + micro", what);
    }
    const char *nodes =
        job->nodes > 1 ? cg_arena_printf(&c->arena, " (%d nodes)", job->nodes) : "";
    if (job->vppn > 0) {
        nodes = cg_arena_printf(&c->arena, "%s CG_PPN=%d", nodes, job->vppn);
    }
    const char *label =
        cg_arena_printf(&c->arena, "%s p=%d%s %s", job->library, job->ranks, nodes, what);
    if (job->launches > 1) {
        label = cg_arena_printf(&c->arena, "%s, launch %d/%d", label, job->launch, job->launches);
    }
    for (int i = 0; i < job->nsettings; i++) {
        label = cg_arena_printf(&c->arena, "%s %s=%s", label, job->settings[i].key.s,
                                job->settings[i].value.s);
    }
    return label;
}

static int next_run_id(struct run_ctx *c)
{
    int max = 0;
    DIR *d = opendir(cg_arena_printf(&c->arena, "%s/jobs", c->cp.dir));
    if (d == NULL) {
        return 1;
    }
    for (struct dirent *e = readdir(d); e != NULL; e = readdir(d)) {
        int n;
        char tail[16];
        if (sscanf(e->d_name, "job-%d.%15s", &n, tail) == 2 && n > max) {
            max = n;
        }
    }
    closedir(d);
    return max + 1;
}

static int pending_stop(struct run_ctx *c)
{
    if (cg_stop_pending()) {
        c->interrupted = 1;
    }
    return c->interrupted;
}

/* Runs one launch, its records watched from the end of points.jsonl. */
static int exec_launch(struct run_ctx *c, const struct cg_launch *l, struct cg_progress *pr,
                       struct cg_exec *x)
{
    struct stat st;
    pr->offset = stat(c->points_path, &st) == 0 ? (long long)st.st_size : 0;
    /* Slurm enforces the time limit itself ({time_limit}); the queue wait
     * must not count against the job. */
    int limit = c->platform.launcher == CG_LAUNCH_SLURM ? 0 : c->cp.timeout_s;
    return cg_exec_job(l, &c->orig_mask, limit, pr, x);
}

/* Policy nrep (PGMPITuneLib's NREP estimation, harness/bench_nrep.c):
 * before any measurement, `launches` estimation launches of every job
 * that still has points to measure, each writing t1 per group to
 * DIR/nrep/job-<job>-L<k>.json (cg_nrep_file) and no record; one already
 * there (a resumed campaign) is not made again. The measurement launches
 * take the longest t1 of these files (timing.nrep.t1_from). Returns 0, or
 * -1 when a launch could not be made (reported). */
static int estimate_nrep(struct run_ctx *c, int *run_id)
{
    struct cg_plan *plan = &c->cp.plan;
    int tty = isatty(2) && !c->quiet;
    if (strcmp(c->cp.timing.policy, "nrep") != 0) {
        return 0;
    }
    char *dir = cg_arena_printf(&c->arena, "%s/nrep", c->cp.dir);
    if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
        fail(c, "cannot create %s: %s", dir, strerror(errno));
        return -1;
    }
    for (int j = 0; j < plan->njobs && !pending_stop(c); j++) {
        const struct cg_job *base = &plan->jobs[j];
        int todo = 0;
        for (int q = 0; q < plan->njobs && base->launch == 1; q++) {
            for (int i = 0; i < plan->jobs[q].npoints && plan->jobs[q].base == base->index; i++) {
                todo |= !plan->jobs[q].points[i].recorded;
            }
        }
        for (int k = 1; k <= base->launches && todo && !pending_stop(c); k++) {
            const char *out = cg_nrep_file(&c->arena, c->cp.dir, base->index, k);
            if (access(out, F_OK) == 0) {
                continue;
            }
            struct cg_job job = *base;
            job.launch = k;
            const struct cg_point **pts =
                cg_arena_alloc(&c->arena, sizeof(*pts) * (size_t)(job.npoints + 1));
            for (int i = 0; i < job.npoints; i++) {
                pts[i] = &job.points[i];
            }
            struct cg_launch l;
            if (cg_launch_render(&l, &c->arena, &c->platform, &job, *run_id, c->cp.dir, c->cp.id,
                                 c->cp.timeout_s) != 0 ||
                write_job_file(c, &job, &l, pts, job.npoints, out) != 0 ||
                (l.script_file != NULL &&
                 cg_write_atomic(l.script_file, l.script_text, strlen(l.script_text)) != 0)) {
                fail(c, "job %d: cannot prepare its t1 estimation launch: %s", job.index,
                     strerror(errno));
                return -1;
            }
            struct cg_progress pr = {
                tty, c->quiet, k, job.launches,
                cg_arena_printf(&c->arena, "t1 estimation %d/%d: %s", k, job.launches,
                                job_label(c, &job)),
                c->recorded, plan->npoints, cg_now_s(), c->points_path, 0 };
            struct cg_exec x;
            if (exec_launch(c, &l, &pr, &x) != 0) {
                return -1;
            }
            (*run_id)++;
            if (x.interrupted) {
                c->interrupted = 1;
                return 0;
            }
            if (!c->quiet) {
                fprintf(stderr, "%s%s: %s, %.1f s\n", tty ? "\r\033[K" : "", pr.label,
                        access(out, F_OK) == 0 ? "t1 written"
                                               : "no t1 (see its log; the measurement "
                                                 "launches estimate their own)",
                        x.seconds);
            }
        }
    }
    return 0;
}

/* Launches every job that has points without a record. */
static int run_jobs(struct run_ctx *c, struct index *ix)
{
    struct cg_plan *plan = &c->cp.plan;
    int todo = 0;
    for (int j = 0; j < plan->njobs; j++) {
        for (int i = 0; i < plan->jobs[j].npoints; i++) {
            if (!plan->jobs[j].points[i].recorded) {
                todo++;
                break;
            }
        }
    }
    int tty = isatty(2) && !c->quiet;
    double t0 = cg_now_s();
    int run_id = next_run_id(c), job_no = 0;
    if (estimate_nrep(c, &run_id) != 0) {
        return -1;
    }
    ix->counting = 1;
    for (int j = 0; j < plan->njobs && !pending_stop(c); j++) {
        const struct cg_job *job = &plan->jobs[j];
        const struct cg_point **pts =
            cg_arena_alloc(&c->arena, sizeof(*pts) * (size_t)(job->npoints + 1));
        int npts = 0;
        for (int i = 0; i < job->npoints; i++) {
            if (!job->points[i].recorded) {
                pts[npts++] = &job->points[i];
            }
        }
        if (npts == 0) {
            continue;
        }
        job_no++;
        struct cg_launch l;
        if (cg_launch_render(&l, &c->arena, &c->platform, job, run_id, c->cp.dir, c->cp.id,
                             c->cp.timeout_s) != 0) {
            fail(c, "job %d: library %s cannot be launched on platform %s", job->index,
                 job->library, c->platform.name);
            return -1;
        }
        if (write_job_file(c, job, &l, pts, npts, NULL) != 0) {
            fail(c, "cannot write %s: %s", l.job_file, strerror(errno));
            return -1;
        }
        if (l.script_file != NULL &&
            cg_write_atomic(l.script_file, l.script_text, strlen(l.script_text)) != 0) {
            fail(c, "cannot write %s: %s", l.script_file, strerror(errno));
            return -1;
        }
        long long before = c->recorded;
        struct cg_progress pr = { tty,    c->quiet,      job_no, todo,           job_label(c, job),
                                  before, plan->npoints, t0,     c->points_path, 0 };
        struct cg_exec x;
        if (exec_launch(c, &l, &pr, &x) != 0) {
            return -1;
        }
        run_id++;
        /* Under Slurm, the batch job may outlive its sbatch --wait (which
         * was stopped): cancel it, and read its records only once the
         * queue no longer lists it, so that none arrives later. */
        if (l.slurm_name != NULL &&
            cg_slurm_settle(&c->arena, l.slurm_name, x.interrupted, 300.0, stderr, 0, NULL) != 0) {
            fail(c, "job %d: Slurm job %s did not end; records may still arrive, so nothing "
                    "else runs (resume once it is gone)", l.run_id, l.slurm_name);
            return -1;
        }
        /* A bench killed mid-line leaves a partial line; the next job must
         * not append to it. */
        long long end = cg_points_repair(c->points_path, stderr);
        if (end < 0) {
            fail(c, "%s: %s", c->points_path, strerror(errno));
            return -1;
        }
        long long counts_before[5];
        memcpy(counts_before, c->status_count, sizeof(counts_before));
        if (cg_points_scan(c->points_path, pr.offset, stderr, on_record, ix) < 0) {
            fail(c, "cannot read %s: %s", c->points_path, strerror(errno));
            return -1;
        }
        if (x.interrupted) {
            c->interrupted = 1;
            break;
        }
        const char *status = NULL, *reason = NULL;
        int missing = 0;
        for (int i = 0; i < npts; i++) {
            if (pts[i]->recorded) {
                continue;
            }
            if (status == NULL) {
                missing_reason(c, &l, &x, &status, &reason);
            }
            if (append_record(c, job, l.run_id, pts[i], status, reason) != 0) {
                fail(c, "cannot append to %s: %s", c->points_path, strerror(errno));
                return -1;
            }
            ((struct cg_point *)pts[i])->recorded = 1;
            c->recorded++;
            c->status_count[status_index(status)]++;
            c->all_count[status_index(status)]++;
            missing++;
        }
        if (x.code == 3 && npts > missing) {
            fprintf(stderr,
                    "%scollgen run: warning: job %d exited with status 3 (wrong launcher?) "
                    "after writing %d records; check them\n",
                    tty ? "\r\033[K" : "", l.run_id, npts - missing);
        }
        if (!c->quiet && (!tty || missing > 0)) {
            char counts[256] = "";
            size_t n = 0;
            for (int s = 0; s < 5; s++) {
                long long k = c->status_count[s] - counts_before[s];
                if (k > 0) {
                    n += (size_t)snprintf(counts + n, sizeof(counts) - n, "%s%lld %s",
                                          n ? ", " : "", k, status_names[s]);
                }
            }
            fprintf(stderr, "%s[%d/%d jobs] %s: %d points (%s), %.1f s%s%s\n",
                    tty ? "\r\033[K" : "", job_no, todo, pr.label, npts, counts, x.seconds,
                    missing ? "; " : "", missing ? reason : "");
        }
    }
    if (tty) {
        fprintf(stderr, "\r\033[K");
    }
    return 0;
}

/* ---- the lock ----------------------------------------------------------- */

static int take_lock(struct run_ctx *c, int wait)
{
    const char *path = cg_arena_printf(&c->arena, "%s/lock", c->cp.dir);
    c->lock_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (c->lock_fd < 0) {
        fail(c, "cannot open %s: %s", path, strerror(errno));
        return -1;
    }
    double until = cg_now_s() + (wait ? 120.0 : 0.0);
    int told = 0;
    for (;;) {
        if (flock(c->lock_fd, LOCK_EX | LOCK_NB) == 0) {
            return 0;
        }
        if (errno != EWOULDBLOCK && errno != EINTR) {
            fail(c, "flock %s: %s", path, strerror(errno));
            return -1;
        }
        if (cg_now_s() > until) {
            fail(c,
                 "%s is in use: another collgen run works on this campaign, or a job of a "
                 "killed one is still being stopped",
                 c->cp.dir);
            return -1;
        }
        if (!told) {
            fprintf(stderr,
                    "collgen run: waiting for %s (a job of the previous run is still "
                    "being stopped)\n",
                    path);
            told = 1;
        }
        struct timespec ts = { 0, 200 * 1000 * 1000 };
        nanosleep(&ts, NULL);
    }
}

/* ---- dry run ------------------------------------------------------------- */

static char *quoted(struct cg_arena *a, const char *s)
{
    int plain = *s != '\0';
    for (const char *p = s; *p; p++) {
        if (!(isalnum((unsigned char)*p) || strchr("_./:=,+@%^-", *p) != NULL)) {
            plain = 0;
        }
    }
    if (plain) {
        return cg_arena_strdup(a, s);
    }
    char *o = cg_arena_strdup(a, "'");
    for (const char *p = s; *p; p++) {
        o = *p == '\'' ? cg_arena_printf(a, "%s'\\''", o) : cg_arena_printf(a, "%s%c", o, *p);
    }
    return cg_arena_printf(a, "%s'", o);
}

static void print_plan(struct run_ctx *c)
{
    const struct cg_campaign *cp = &c->cp;
    const struct cg_plan *plan = &cp->plan;
    struct cg_arena *a = &c->arena;
    printf("test %s (fnv1a64 %s) on platform %s (%s, %s launcher)\n", cp->test_file,
           fnv_hex(a, cp->test_text, cp->test_len), cp->platform_name, cp->platform_file,
           cp->launcher);
    printf("campaign %s in %s (dry run: nothing written, nothing launched)\n", cp->id, cp->dir);
    printf("plan: %d jobs, %d points; timing %s, warmup %d, %d..%d reps, rse %g, budget %g s; "
           "check %s; verbosity %s; timeout %d s per job\n",
           plan->njobs, plan->npoints, cp->timing.sync, cp->timing.warmup, cp->timing.min_reps,
           cp->timing.max_reps, cp->timing.rse_target, cp->timing.budget_s, cp->check,
           cp->verbosity, cp->timeout_s);
    if (cp->launches > 1 || strcmp(cp->timing.policy, "nrep") == 0) {
        printf("launches: %d of every job%s\n", cp->launches,
               strcmp(cp->timing.policy, "nrep") == 0
                   ? cg_arena_printf(a, "; policy nrep: first %d t1 estimation launches of "
                                        "every job (b1 %d, b2 %d, rse_b %g, k %d, t1_rse %g)",
                                     cp->launches, cp->timing.nrep.b1, cp->timing.nrep.b2,
                                     cp->timing.nrep.rse_b, cp->timing.nrep.k,
                                     cp->timing.nrep.t1_rse)
                   : "");
    }
    /* Sizes per collective, ascending, as the test resolved them (the lane
     * pattern's last). */
    for (int coll = 0; coll <= (int)CG_PT_LANE_PATTERN; coll++) {
        int64_t *sz = NULL;
        int n = 0;
        for (int j = 0; j < plan->njobs; j++) {
            for (int i = 0; i < plan->jobs[j].npoints; i++) {
                const struct cg_point *pt = &plan->jobs[j].points[i];
                int seen = (int)pt->coll != coll;
                for (int k = 0; k < n && !seen; k++) {
                    seen = sz[k] == pt->bytes;
                }
                if (!seen) {
                    int64_t *g = cg_arena_alloc(a, sizeof(*g) * (size_t)(n + 1));
                    if (n > 0) {
                        memcpy(g, sz, sizeof(*g) * (size_t)n);
                    }
                    int k = n;
                    while (k > 0 && g[k - 1] > pt->bytes) {
                        g[k] = g[k - 1];
                        k--;
                    }
                    g[k] = pt->bytes;
                    sz = g;
                    n++;
                }
            }
        }
        if (n > 0) {
            printf("sizes of %s (count x datatype size, B):",
                   cg_point_coll_name((enum cg_coll)coll));
            for (int k = 0; k < n; k++) {
                printf(" %lld", (long long)sz[k]);
            }
            printf("\n");
        }
    }
    for (int i = 0; i < plan->nnotes; i++) {
        printf("note: %s\n", plan->notes[i]);
    }
    for (int j = 0; j < plan->njobs; j++) {
        const struct cg_job *job = &plan->jobs[j];
        printf("\njob %d: %s, %d points\n", job->index, job_label(c, job), job->npoints);
        /* Implementations and sizes, in order of first appearance. */
        const char *impls = "", *colls = "";
        for (int i = 0; i < job->npoints; i++) {
            int seen = 0;
            for (int k = 0; k < i && !seen; k++) {
                seen = strcmp(job->points[k].impl, job->points[i].impl) == 0;
            }
            if (!seen) {
                impls = cg_arena_printf(a, "%s%s%s", impls, *impls ? " " : "", job->points[i].impl);
            }
            seen = 0;
            for (int k = 0; k < i && !seen; k++) {
                seen = job->points[k].coll == job->points[i].coll;
            }
            if (!seen) {
                int n = 0;
                for (int k = 0; k < job->npoints; k++) {
                    n += job->points[k].coll == job->points[i].coll;
                }
                colls = cg_arena_printf(a, "%s%s%s %d", colls, *colls ? ", " : "",
                                        cg_point_coll_name(job->points[i].coll), n);
            }
        }
        printf("  points: %s\n  impls:  %s\n", colls, impls);
        if (job->shuffled) {
            printf("  order:  each size's implementations shuffled for this launch (seed %llu)\n",
                   (unsigned long long)cg_launch_order_seed(job));
        }
        if (job->forced_by != NULL) {
            printf("  forced by: %s\n", job->forced_by);
        }
        struct cg_launch l;
        if (cg_launch_render(&l, a, &c->platform, job, job->index, cp->dir, cp->id,
                             cp->timeout_s) != 0) {
            printf("  (library %s cannot be launched on this platform)\n", job->library);
            continue;
        }
        if (l.script_text != NULL) {
            printf("  --- %s ---\n", l.script_file);
            for (const char *s = l.script_text; *s;) {
                const char *e = strchr(s, '\n');
                int n = e ? (int)(e - s) : (int)strlen(s);
                printf("  | %.*s\n", n, s);
                s += n + (e != NULL);
            }
        }
        printf("  $");
        for (int i = 0; i < l.nenv; i++) {
            printf(" %s=%s", l.env[i].key.s, quoted(a, l.env[i].value.s));
        }
        for (int i = 0; i < l.argc; i++) {
            printf(" %s", quoted(a, l.argv[i]));
        }
        printf("\n");
    }
}

/* ---- the command --------------------------------------------------------- */

static const char *utc_now(struct cg_arena *a, const char *fmt)
{
    time_t now = time(NULL);
    struct tm tm;
    char buf[64];
    gmtime_r(&now, &tm);
    strftime(buf, sizeof(buf), fmt, &tm);
    return cg_arena_strdup(a, buf);
}

static int mkdir_p(const char *path)
{
    char *p = strdup(path);
    if (p == NULL) {
        return -1;
    }
    for (char *s = p + 1; *s; s++) {
        if (*s == '/') {
            *s = '\0';
            if (mkdir(p, 0755) != 0 && errno != EEXIST) {
                free(p);
                return -1;
            }
            *s = '/';
        }
    }
    int rc = mkdir(p, 0755) != 0 && errno != EEXIST ? -1 : 0;
    free(p);
    return rc;
}

static int parse_args(struct run_ctx *c, int argc, char **argv)
{
    enum { OPT_LIST = 256, OPT_NO_REPORT, OPT_RETRY, OPT_REGISTRY, OPT_PLATFORM, OPT_OUT,
           OPT_RESUME, OPT_DRY_RUN };
    static const struct option opts[] = {
        { "help", no_argument, NULL, 'h' },
        { "quiet", no_argument, NULL, 'q' },
        { "dry-run", no_argument, NULL, OPT_DRY_RUN },
        { "list-algorithms", no_argument, NULL, OPT_LIST },
        { "no-report", no_argument, NULL, OPT_NO_REPORT },
        { "retry-errors", no_argument, NULL, OPT_RETRY },
        { "registry", required_argument, NULL, OPT_REGISTRY },
        { "platform", required_argument, NULL, OPT_PLATFORM },
        { "out", required_argument, NULL, OPT_OUT },
        { "resume", required_argument, NULL, OPT_RESUME },
        { NULL, 0, NULL, 0 },
    };
    /* Why a copy: getopt_long permutes what it is given, and c->argv is
     * the command line as typed, for campaign.json. */
    char **args = cg_arena_alloc(&c->arena, sizeof(char *) * (size_t)(argc + 1));
    memcpy(args, argv, sizeof(char *) * (size_t)argc);
    opterr = 0;
    optind = 0;
    int o;
    while ((o = getopt_long(argc, args, "hq", opts, NULL)) != -1) {
        switch (o) {
        case 'h':
            fputs(usage, stdout);
            exit(0);
        case 'q':
            c->quiet = 1;
            break;
        case OPT_DRY_RUN:
            c->dry_run = 1;
            break;
        case OPT_LIST:
            c->list_algorithms = 1;
            break;
        case OPT_NO_REPORT:
            c->no_report = 1;
            break;
        case OPT_RETRY:
            c->retry_errors = 1;
            break;
        case OPT_REGISTRY:
            c->registry_arg = optarg;
            break;
        case OPT_PLATFORM:
            c->platform_arg = optarg;
            break;
        case OPT_OUT:
            c->out_arg = optarg;
            break;
        case OPT_RESUME:
            c->resume_dir = optarg;
            break;
        default:
            fail(c, "unknown option '%s' (or it needs a value)\n%s", args[optind - 1], usage);
            return -1;
        }
    }
    for (int i = optind; i < argc; i++) {
        if (c->test_arg == NULL) {
            c->test_arg = args[i];
        } else {
            fail(c, "one TEST at a time ('%s' and '%s')", c->test_arg, args[i]);
            return -1;
        }
    }
    if (c->resume_dir != NULL && (c->test_arg != NULL || c->platform_arg != NULL ||
                                  c->out_arg != NULL || c->dry_run || c->registry_arg != NULL)) {
        fail(c, "--resume DIR takes the test, platform and directory from DIR/campaign.json: give "
                "no TEST, --platform, --out, --registry or --dry-run with it");
        return -1;
    }
    if (c->retry_errors && c->resume_dir == NULL) {
        fail(c, "--retry-errors goes with --resume DIR (it runs again the points DIR recorded as "
                "error or timeout)");
        return -1;
    }
    if (c->resume_dir == NULL && c->test_arg == NULL && !c->list_algorithms) {
        fail(c, "no TEST given\n%s", usage);
        return -1;
    }
    return 0;
}

static int load_platform(struct run_ctx *c, const char *file, const char *text, size_t len)
{
    if (text == NULL) {
        text = cg_read_file(&c->arena, &c->diag, file, &len);
        if (text == NULL) {
            return -1;
        }
    }
    return cg_platform_load(&c->platform, &c->arena, &c->diag, file, text, len);
}

static int list_algorithms(struct run_ctx *c)
{
    for (int i = 0; i < c->platform.nlibs; i++) {
        const struct cg_library *l = &c->platform.libs[i];
        for (int k = 0; k < CG_COLL_COUNT_; k++) {
            for (int m = 0; m < l->colls[k].nalgos; m++) {
                const struct cg_algo_spec *a = &l->colls[k].algos[m];
                printf("%s %s %s %s", l->name, cg_colls[k].name, a->name, a->id ? a->id : "-");
                if (a->only_ranks) {
                    printf("  # only at %d ranks", a->only_ranks);
                }
                printf("\n");
            }
        }
    }
    return 0;
}

/* "collgen run ARGS...": cg_run_main gets argv from "run" on. */
static const char **command_line(struct run_ctx *c, int *argc)
{
    const char **argv = cg_arena_alloc(&c->arena, sizeof(char *) * (size_t)(c->argc + 2));
    argv[0] = "collgen";
    for (int i = 0; i < c->argc; i++) {
        argv[i + 1] = c->argv[i];
    }
    *argc = c->argc + 1;
    return argv;
}

/* Fresh run, steps 1 to 3. */
static int prepare_fresh(struct run_ctx *c)
{
    const char *pfile =
        find_descriptor(c, "platforms", "platform", c->platform_arg ? c->platform_arg : "local");
    if (pfile == NULL || load_platform(c, pfile, NULL, 0) != 0) {
        return -1;
    }
    if (c->list_algorithms) {
        return 0;
    }
    const char *tfile = find_descriptor(c, "tests", "test", c->test_arg);
    if (tfile == NULL) {
        return -1;
    }
    size_t len;
    char *text = cg_read_file(&c->arena, &c->diag, tfile, &len);
    if (text == NULL) {
        return -1;
    }
    cg_registry_load(&c->reg, &c->arena,
                     c->registry_arg ? c->registry_arg : "emitted/registry.json");
    if (cg_test_load(&c->test, &c->arena, &c->diag, tfile, text, len, &c->platform, &c->reg) != 0) {
        return -1;
    }
    struct cg_campaign *cp = &c->cp;
    if (cg_plan_build(&cp->plan, &c->arena, &c->diag, &c->test, &c->platform, &c->reg) != 0) {
        return -1;
    }
    const struct cg_test *t = &c->test;
    cp->created_utc = utc_now(&c->arena, "%Y-%m-%dT%H:%M:%SZ");
    if (c->out_arg != NULL) {
        char *dir = cg_arena_strdup(&c->arena, c->out_arg);
        for (size_t n = strlen(dir); n > 1 && dir[n - 1] == '/'; n--) {
            dir[n - 1] = '\0';
        }
        cp->dir = dir;
        const char *b = strrchr(dir, '/');
        cp->id = b != NULL && b[1] != '\0' ? b + 1 : dir;
    } else {
        cp->id = cg_arena_printf(&c->arena, "%s-%s", t->name, utc_now(&c->arena, "%Y%m%d-%H%M%S"));
        cp->dir = cg_arena_printf(&c->arena, "results/%s", cp->id);
    }
    cp->argv = command_line(c, &cp->argc);
    char cwd[PATH_MAX];
    cp->cwd = getcwd(cwd, sizeof(cwd)) != NULL ? cg_arena_strdup(&c->arena, cwd) : "";
    cp->test_name = t->name;
    cp->test_file = t->file;
    cp->test_text = t->text;
    cp->test_len = t->len;
    cp->platform_name = c->platform.name;
    cp->platform_file = c->platform.file;
    cp->platform_text = c->platform.text;
    cp->platform_len = c->platform.len;
    cp->launcher = c->platform.launcher == CG_LAUNCH_SLURM ? "slurm" : "local";
    cp->description = t->description;
    cp->labels = t->labels;
    cp->nlabels = t->nlabels;
    cp->timing = t->timing;
    cp->launches = t->launches;
    cp->check = t->check;
    cp->verbosity = t->verbosity;
    cp->timeout_s = t->timeout_s;
    cp->resumes = cg_arena_alloc(&c->arena, sizeof(*cp->resumes) * 2);
    return 0;
}

/* What must exist before anything starts: the bench programs, the
 * scheduler's submit command. */
static int preflight(struct run_ctx *c)
{
    for (int j = 0; j < c->cp.plan.njobs; j++) {
        const struct cg_job *job = &c->cp.plan.jobs[j];
        struct cg_launch l;
        if (cg_launch_render(&l, &c->arena, &c->platform, job, job->index, c->cp.dir, c->cp.id,
                             c->cp.timeout_s) != 0) {
            fail(c, "library %s cannot be launched on platform %s", job->library, c->platform.name);
            return -1;
        }
        if (c->platform.launcher == CG_LAUNCH_LOCAL && access(l.program, X_OK) != 0) {
            fail(c,
                 "the benchmark program %s of library %s is missing or not executable (%s); "
                 "build it with ninja",
                 l.program, job->library, strerror(errno));
            return -1;
        }
        const char *cmd = l.argv[0];
        if (strchr(cmd, '/') == NULL) {
            const char *path = getenv("PATH");
            int found = 0;
            for (const char *s = path ? path : ""; *s && !found;) {
                const char *e = strchr(s, ':');
                int n = e ? (int)(e - s) : (int)strlen(s);
                char *cand = cg_arena_printf(&c->arena, "%.*s/%s", n, s, cmd);
                found = access(cand, X_OK) == 0;
                s += n + (e != NULL);
            }
            if (!found) {
                fail(c,
                     "%s is not installed (not found in PATH): platform %s needs it to run "
                     "jobs; --dry-run shows what would be %s",
                     cmd, c->platform.name,
                     c->platform.launcher == CG_LAUNCH_SLURM ? "submitted" : "run");
                return -1;
            }
        } else if (access(cmd, X_OK) != 0) {
            fail(c, "%s cannot be executed: %s", cmd, strerror(errno));
            return -1;
        }
    }
    return 0;
}

static int create_dir(struct run_ctx *c)
{
    struct cg_campaign *cp = &c->cp;
    struct stat st;
    if (c->out_arg == NULL) {
        /* Two campaigns started in the same second get -2, -3, ... */
        const char *base = cp->id;
        for (int k = 2; stat(cp->dir, &st) == 0; k++) {
            cp->id = cg_arena_printf(&c->arena, "%s-%d", base, k);
            cp->dir = cg_arena_printf(&c->arena, "results/%s", cp->id);
        }
    } else if (stat(cp->dir, &st) == 0) {
        fail(c, "%s already exists: finish it with --resume %s, or choose another --out", cp->dir,
             cp->dir);
        return -1;
    }
    const char *sub[] = { "", "/jobs", "/logs", "/raw" };
    for (int i = 0; i < 4; i++) {
        const char *d = cg_arena_printf(&c->arena, "%s%s", cp->dir, sub[i]);
        if (mkdir_p(d) != 0) {
            fail(c, "cannot create %s: %s", d, strerror(errno));
            return -1;
        }
    }
    return 0;
}

static void summary(struct run_ctx *c, int *rc)
{
    long long missing = c->cp.plan.npoints - c->recorded;
    char counts[256] = "";
    size_t n = 0;
    for (int s = 0; s < 5; s++) {
        if (c->status_count[s] > 0) {
            n += (size_t)snprintf(counts + n, sizeof(counts) - n, "%s%lld %s", n ? ", " : "",
                                  c->status_count[s], status_names[s]);
        }
    }
    printf("campaign %s: %lld of %d points recorded%s%s%s\n", c->cp.id, c->recorded,
           c->cp.plan.npoints, n ? " (this run: " : "", counts, n ? ")" : "");
    printf("results: %s/ (campaign.json, points.jsonl, raw/, logs/)\n", c->cp.dir);
    long long bad = c->all_count[ST_ERROR] + c->all_count[ST_TIMEOUT] + c->all_count[ST_FAILED_CHECK];
    if (bad > 0) {
        char what[160] = "";
        size_t k = 0;
        for (int s = ST_FAILED_CHECK; s <= ST_TIMEOUT; s++) {
            if (c->all_count[s] > 0) {
                k += (size_t)snprintf(what + k, sizeof(what) - k, "%s%lld %s", k ? ", " : "",
                                      c->all_count[s], status_names[s]);
            }
        }
        printf("not ok: %lld of %lld recorded points (%s)%s%s\n", bad, c->recorded, what,
               c->all_count[ST_ERROR] + c->all_count[ST_TIMEOUT] > 0
                   ? "; run the error and timeout ones again with: build/collgen run --resume "
                   : "",
               c->all_count[ST_ERROR] + c->all_count[ST_TIMEOUT] > 0
                   ? cg_arena_printf(&c->arena, "%s --retry-errors", c->cp.dir)
                   : "");
    }
    if (c->interrupted || missing > 0) {
        printf("interrupted: %lld points left; finish with: build/collgen run --resume %s\n",
               missing, c->cp.dir);
        *rc = 130;
    } else if (c->status_count[ST_ERROR] + c->status_count[ST_TIMEOUT] > 0) {
        *rc = 1;
    }
    fflush(stdout);
}

int cg_run_main(int argc, char **argv)
{
    struct run_ctx ctx;
    memset(&ctx, 0, sizeof(ctx));
    struct run_ctx *c = &ctx;
    cg_diag_init(&c->diag, stderr);
    c->argc = argc;
    c->argv = argv;
    c->lock_fd = -1;
    int rc = 2;
    if (parse_args(c, argc, argv) != 0) {
        goto out;
    }
    if (c->resume_dir != NULL) {
        if (load_campaign(c, c->resume_dir) != 0 ||
            load_platform(c, c->cp.platform_file, c->cp.platform_text, c->cp.platform_len) != 0) {
            goto out;
        }
    } else {
        if (prepare_fresh(c) != 0) {
            goto out;
        }
        if (c->list_algorithms) {
            rc = list_algorithms(c);
            goto out;
        }
        if (c->dry_run) {
            print_plan(c);
            rc = 0;
            goto out;
        }
    }
    if (preflight(c) != 0) {
        goto out;
    }
    /* From here on the runner waits for its signals instead of dying of
     * them, so that a job is never left running unsupervised. */
    /* SIGCHLD ignored by whoever started us would reap the jobs before
     * waitpid could see their status. */
    if (signal(SIGCHLD, SIG_DFL) == SIG_ERR) {
        fail(c, "signal: %s", strerror(errno));
        goto out;
    }
    sigset_t block;
    sigemptyset(&block);
    sigaddset(&block, SIGCHLD);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGTERM);
    sigaddset(&block, SIGHUP);
    if (sigprocmask(SIG_BLOCK, &block, &c->orig_mask) != 0) {
        fail(c, "sigprocmask: %s", strerror(errno));
        goto out;
    }
    if (c->resume_dir == NULL) {
        if (create_dir(c) != 0 || take_lock(c, 0) != 0 || save_campaign(c) != 0) {
            goto restore;
        }
    } else {
        if (take_lock(c, 1) != 0) {
            goto restore;
        }
        struct cg_resume_entry *re = &c->cp.resumes[c->cp.nresumes++];
        re->utc = utc_now(&c->arena, "%Y-%m-%dT%H:%M:%SZ");
        re->argv = command_line(c, &re->argc);
        if (save_campaign(c) != 0) {
            goto restore;
        }
    }
    c->points_path = cg_arena_printf(&c->arena, "%s/points.jsonl", c->cp.dir);
    int fd = open(c->points_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0 || close(fd) != 0) {
        fail(c, "cannot create %s: %s", c->points_path, strerror(errno));
        goto restore;
    }
    if (c->resume_dir != NULL && c->platform.launcher == CG_LAUNCH_SLURM) {
        /* Jobs an earlier run left in the queue (its runner and supervisor
         * killed together, say) still append records: wait for them first. */
        int stopped = 0;
        if (cg_slurm_settle(&c->arena, cg_slurm_job_name(&c->arena, c->cp.id, 0), 0, 0.0, stderr,
                            1, &stopped) != 0) {
            if (stopped) {
                c->interrupted = 1;
                rc = 130;
                fprintf(stderr, "collgen run: interrupted while waiting; nothing ran\n");
            } else {
                fail(c, "under Slurm a resume must know that no job of %s still runs (it would "
                        "record points a second time)", c->cp.id);
            }
            goto restore;
        }
    }
    if (cg_points_repair(c->points_path, stderr) < 0) {
        fail(c, "%s: %s", c->points_path, strerror(errno));
        goto restore;
    }
    if (c->retry_errors) {
        static const char *const again[] = { "error", "timeout", NULL };
        const char *retired = cg_arena_printf(&c->arena, "%s/points.retried.jsonl", c->cp.dir);
        if (cg_points_retire(c->points_path, retired, again, c->quiet ? NULL : stderr) < 0) {
            fail(c, "%s: %s", c->points_path, strerror(errno));
            goto restore;
        }
    }
    struct index ix;
    build_index(c, &ix);
    if (cg_points_scan(c->points_path, 0, stderr, on_record, &ix) < 0) {
        fail(c, "cannot read %s: %s", c->points_path, strerror(errno));
        goto restore;
    }
    if (c->resume_dir != NULL && !c->quiet) {
        fprintf(stderr, "collgen run: resuming %s: %lld of %d points recorded%s\n", c->cp.dir,
                c->recorded, c->cp.plan.npoints,
                c->recorded == c->cp.plan.npoints ? "; nothing to do" : "");
    }
    if (ix.unknown > 0 || ix.repeated > 0) {
        fprintf(stderr,
                "collgen run: warning: %s has %lld records for points not in the plan and "
                "%lld repeated records\n",
                c->points_path, ix.unknown, ix.repeated);
    }
    if (!c->quiet && c->resume_dir == NULL) {
        fprintf(stderr, "collgen run: %s: %d jobs, %d points -> %s/\n", c->cp.id, c->cp.plan.njobs,
                c->cp.plan.npoints, c->cp.dir);
    }
    if (run_jobs(c, &ix) != 0) {
        goto restore;
    }
    rc = 0;
    summary(c, &rc);
restore:
    sigprocmask(SIG_SETMASK, &c->orig_mask, NULL);
    if ((rc == 0 || rc == 1) && !c->no_report) {
        /* The table: harness/report.c reads the records alone. */
        char *rargv[] = { "report", (char *)c->cp.dir, NULL };
        int r = cg_report_main(2, rargv);
        if (r != 0) {
            fprintf(stderr, "collgen run: note: collgen report %s exited with status %d\n",
                    c->cp.dir, r);
        }
    }
out:
    if (c->lock_fd >= 0) {
        close(c->lock_fd);
    }
    cg_arena_fini(&c->arena);
    return rc;
}
