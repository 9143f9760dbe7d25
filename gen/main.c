/* main.c - the collgen command line: a table of commands, each a function,
 * that reads like a table of contents of the passes:
 *
 *   1. parse    JSON text -> IR with source positions        (parse.c, json.c, expr.c)
 *   2. check    names bound, identifiers and shapes checked  (check.c)
 *      resolve  call steps and fallbacks bound to schedules  (resolve.c; load.c loads)
 *   3. verify   simulated for every p and root               (verify.c, sim.c)
 *   4. analyse  rounds, messages, bytes, cost prediction     (analyse.c)
 *   5. emit     C over MPI, one file per schedule; CUDA C++  (emit_mpi.c, emit_cuda.c,
 *               for the collectives the GPU backend has       emit_common.c, out.c)
 *   6. registry prototypes, tag ids, algorithm tables, JSON  (emit_registry.c)
 *
 * cg_main (cli.h) dispatches to these commands or to ones the program adds
 * (harness/collgen.c: run, report), so nothing here knows the harness.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

#include "cli.h"
#include "ctag.h"
#include "fanout.h"
#include "load.h"
#include "mutate.h"
#include "passes.h"
#include "topo.h"

/* What every generator command shares once its arguments are read. */
struct cli {
    const char *cmd;        /* the command's name */
    struct cg_options opt;  /* the passes' options */
    struct cg_gen g;        /* context of every pass */
    struct cg_model model;  /* explain's cost model */
    int p, root, elem;      /* explain, tags: --p N, --root, --elem-size */
    size_t count;           /* explain: --count */
    const char *topology;   /* traffic, simulate: --topology FILE */
    const char *placement;  /* traffic, simulate: --placement SPEC */
    const char *nodes;      /* traffic, simulate: --nodes LIST */
    int contention;         /* simulate: --contention */
    char **files;           /* given, or found under schedules/ */
    int nfiles;             /* entries in files */
    char **dirs;            /* directories scanned (emit's depfile) */
    int ndirs;              /* entries in dirs */
    struct cg_set set;      /* the schedules, loaded */
    int bad;                /* schedules that did not load, resolve or verify */
    int jobs;               /* verify, emit: workers (--jobs; 0: fanout.h's default) */
};

static const char *const options_help =
    "Options:\n"
    "  --p LIST             process counts, e.g. 1..64,100,1000 (verify, mutate;\n"
    "                       default 1..64,100,127,128,255,256,1000); one number for\n"
    "                       explain\n"
    "  --all-roots          verify every root at every p (default: every root up to\n"
    "                       p = 64, then roots 0, 1, p/2 and p-1)\n"
    "  --ppn N              explain, tags: ranks per node for topology schedules (a\n"
    "                       divisor of p; default the smallest divisor >= sqrt(p))\n"
    "  --root R             explain, traffic, simulate, goal: the root (default 0)\n"
    "  --count N            explain, traffic, simulate, goal: the collective's count\n"
    "                       (default 262144)\n"
    "  --elem-size S        explain, traffic, simulate, goal: bytes per element\n"
    "                       (default 8)\n"
    "  --alpha US --beta NS --gamma NS\n"
    "                       explain: latency per round in microseconds, and\n"
    "                       nanoseconds per byte moved and reduced (defaults 1, 0.1, 0.2);\n"
    "                       goal: --gamma for a reduction's calc\n"
    "  --topology FILE      traffic, simulate: the machine (descriptors/topologies/)\n"
    "  --placement SPEC     traffic, simulate: block (default), cyclic, random:SEED,\n"
    "                       list:N0,N1,... (a node per rank) or run:FILE (a run\n"
    "                       record's placement); --ppn ranks per node (default 1, a\n"
    "                       topology schedule's node shape)\n"
    "  --nodes LIST         traffic, simulate: the allocation, e.g. 0-15,64-79\n"
    "                       (default the first nodes)\n"
    "  --contention         simulate: links shared by max-min fairness\n"
    "  --out DIR            emit: where emitted/ is (default emitted)\n"
    "  --depfile FILE       emit: write a ninja depfile listing the schedules read\n"
    "  --jobs N             verify, emit: schedules verified N at a time, in forked\n"
    "                       workers (default: the online CPUs, or CG_JOBS); the\n"
    "                       output is the same for every N\n"
    "  -q, --quiet          print only failures\n"
    "  -h, --help           this text\n";

/* The most ranks explain, tags, traffic, simulate and goal take. */
#define CG_MAX_ONE_P (1 << 20)

/* ---- arguments ------------------------------------------------------------ */

static int parse_p_list(const char *text, struct cg_options *opt)
{
    opt->np = 0;
    const char *c = text;
    while (*c) {
        char *end;
        long a = strtol(c, &end, 10), b = a;
        if (end == c || a < 1) {
            return -1;
        }
        c = end;
        if (c[0] == '.' && c[1] == '.') {
            b = strtol(c + 2, &end, 10);
            if (end == c + 2 || b < a) {
                return -1;
            }
            c = end;
        }
        for (long p = a; p <= b; p++) {
            if (opt->np >= (int)(sizeof(opt->p_list) / sizeof(opt->p_list[0])) || p > 100000) {
                return -1;
            }
            opt->p_list[opt->np++] = (int)p;
        }
        if (*c == ',') {
            c++;
        } else if (*c) {
            return -1;
        }
    }
    return opt->np > 0 ? 0 : -1;
}

/* A whole number (or, with real, any number) in text, else a usage error. */
static int number(const char *option, const char *text, int real, double *v)
{
    char *end = NULL;
    errno = 0;
    *v = real ? strtod(text, &end) : (double)strtoll(text, &end, 10);
    if (end == text || *end != '\0' || errno != 0) {
        fprintf(stderr, "collgen: bad %s '%s' (%s)\n", option, text,
                real ? "a number" : "a whole number");
        return -1;
    }
    return 0;
}

enum {
    OPT_P = 256, OPT_ALL_ROOTS, OPT_PPN, OPT_ROOT, OPT_COUNT, OPT_ELEM, OPT_ALPHA, OPT_BETA,
    OPT_GAMMA, OPT_OUT, OPT_DEPFILE, OPT_TOPOLOGY, OPT_PLACEMENT, OPT_NODES, OPT_CONTENTION,
    OPT_JOBS
};

static const struct option long_options[] = {
    { "p", required_argument, NULL, OPT_P },
    { "all-roots", no_argument, NULL, OPT_ALL_ROOTS },
    { "ppn", required_argument, NULL, OPT_PPN },
    { "root", required_argument, NULL, OPT_ROOT },
    { "count", required_argument, NULL, OPT_COUNT },
    { "elem-size", required_argument, NULL, OPT_ELEM },
    { "alpha", required_argument, NULL, OPT_ALPHA },
    { "beta", required_argument, NULL, OPT_BETA },
    { "gamma", required_argument, NULL, OPT_GAMMA },
    { "out", required_argument, NULL, OPT_OUT },
    { "depfile", required_argument, NULL, OPT_DEPFILE },
    { "topology", required_argument, NULL, OPT_TOPOLOGY },
    { "placement", required_argument, NULL, OPT_PLACEMENT },
    { "nodes", required_argument, NULL, OPT_NODES },
    { "contention", no_argument, NULL, OPT_CONTENTION },
    { "jobs", required_argument, NULL, OPT_JOBS },
    { "quiet", no_argument, NULL, 'q' },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
};

static void usage(FILE *f);

/* Reads the options and files of a generator command (argv[0] is its
 * name). Returns -1 to go on, else the exit status (0 for --help). */
static int parse_args(struct cli *c, int argc, char **argv)
{
    int one_p = strcmp(c->cmd, "verify") != 0 && strcmp(c->cmd, "emit") != 0 &&
                strcmp(c->cmd, "mutate") != 0 && strcmp(c->cmd, "list") != 0;
    double v = 0;
    int opt;
    opterr = 0;
    optind = 1;
    while ((opt = getopt_long(argc, argv, ":qh", long_options, NULL)) != -1) {
        switch (opt) {
        case OPT_P:
            if (one_p) {
                if (number("--p", optarg, 0, &v) != 0) {
                    return 2;
                }
                c->p = (int)v;
            } else if (parse_p_list(optarg, &c->opt) != 0) {
                fprintf(stderr, "collgen: bad --p list '%s' (e.g. 1..64,100)\n", optarg);
                return 2;
            }
            break;
        case OPT_ALL_ROOTS:
            c->opt.all_roots_max_p = 1 << 30;
            break;
        case OPT_PPN:
            if (number("--ppn", optarg, 0, &v) != 0 || v < 1) {
                fprintf(stderr, "collgen: bad --ppn '%s' (a positive number of ranks per node)\n",
                        optarg);
                return 2;
            }
            c->opt.ppn = (int)v;
            break;
        case OPT_ROOT:
            if (number("--root", optarg, 0, &v) != 0) {
                return 2;
            }
            c->root = (int)v;
            break;
        case OPT_COUNT:
            if (number("--count", optarg, 0, &v) != 0 || v < 0) {
                return 2;
            }
            c->count = (size_t)v;
            break;
        case OPT_ELEM:
            if (number("--elem-size", optarg, 0, &v) != 0) {
                return 2;
            }
            c->elem = (int)v;
            break;
        case OPT_ALPHA:
        case OPT_BETA:
        case OPT_GAMMA:
            if (number(opt == OPT_ALPHA ? "--alpha" : opt == OPT_BETA ? "--beta" : "--gamma",
                       optarg, 1, &v) != 0) {
                return 2;
            }
            *(opt == OPT_ALPHA ? &c->model.alpha_us
              : opt == OPT_BETA ? &c->model.beta_ns_B
                                : &c->model.gamma_ns_B) = v;
            break;
        case OPT_OUT:
            c->opt.out_dir = optarg;
            break;
        case OPT_DEPFILE:
            c->opt.depfile = optarg;
            break;
        case OPT_TOPOLOGY:
            c->topology = optarg;
            break;
        case OPT_PLACEMENT:
            c->placement = optarg;
            break;
        case OPT_NODES:
            c->nodes = optarg;
            break;
        case OPT_CONTENTION:
            c->contention = 1;
            break;
        case OPT_JOBS:
            if (number("--jobs", optarg, 0, &v) != 0 || v < 1 || v > 256) {
                fprintf(stderr, "collgen: bad --jobs '%s' (1..256 workers)\n", optarg);
                return 2;
            }
            c->jobs = (int)v;
            break;
        case 'q':
            c->opt.quiet = 1;
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            return cg_cli_bad_option("collgen", opt, argv);
        }
    }
    for (int i = optind; i < argc; i++) {
        c->files = realloc(c->files, sizeof(char *) * (size_t)(c->nfiles + 1));
        if (c->files == NULL || (c->files[c->nfiles] = strdup(argv[i])) == NULL) {
            cg_panic("out of memory");
        }
        c->nfiles++;
    }
    return -1;
}

/* Passes 1 and 2 for every file (every schedule under schedules/ when none
 * was given), then the resolve pass unless `resolve` is 0. Returns -1 to go
 * on, else the exit status. */
static int load(struct cli *c, int resolve)
{
    if (c->nfiles == 0) {
        cg_scan("schedules", &c->files, &c->nfiles, &c->dirs, &c->ndirs);
        if (c->nfiles == 0) {
            fprintf(stderr, "collgen: no schedules found under schedules/\n");
            return 2;
        }
    }
    c->bad = cg_set_load_all(&c->g, &c->set, c->files, c->nfiles);
    for (int i = 0; resolve && i < c->nfiles; i++) {
        struct cg_schedule *s = &c->set.items[i]->s;
        if (s->checked && cg_resolve(&c->g, &c->set, s) != 0) {
            s->checked = 0;
            c->bad++;
        }
    }
    return -1;
}

/* A command's state, from its arguments; returns -1 to go on, else the exit
 * status. */
static int start(struct cli *c, int argc, char **argv)
{
    memset(c, 0, sizeof(*c));
    c->cmd = argv[0];
    cg_options_init(&c->opt);
    c->g.opt = &c->opt;
    cg_diag_init(&c->g.diag, stderr);
    cg_model_init(&c->model);
    c->elem = 8;
    c->count = 262144;
    cg_set_init(&c->set);
    return parse_args(c, argc, argv);
}

static int finish(struct cli *c, int rc)
{
    cg_set_fini(&c->set);
    cg_scan_free(c->files, c->nfiles);
    cg_scan_free(c->dirs, c->ndirs);
    return rc;
}

static struct cg_schedule *schedule(struct cli *c, int i)
{
    return &c->set.items[i]->s;
}

/* explain and tags run at one p: start, with a file required, loaded, --ppn
 * dividing --p, and p, root (and for explain the element size) valid.
 * Returns -1 to go on, else the exit status. */
static int start_one_p(struct cli *c, int argc, char **argv)
{
    int rc = start(c, argc, argv);
    if (rc >= 0) {
        return rc;
    }
    if (c->nfiles == 0) {
        fprintf(stderr, "collgen: %s needs a schedule file\n", c->cmd);
        return 2;
    }
    rc = load(c, 1);
    if (rc >= 0) {
        return rc;
    }
    /* A flat schedule's --ppn in traffic and simulate only places ranks: the
     * last node may hold fewer. */
    int shaped = strcmp(c->cmd, "explain") == 0 || strcmp(c->cmd, "tags") == 0 ||
                 (!c->bad && c->set.n > 0 && schedule(c, 0)->topology);
    if (shaped && c->opt.ppn > 0 && c->p >= 1 && c->p % c->opt.ppn != 0) {
        fprintf(stderr, "collgen: --ppn %d does not divide --p %d: such a communicator is not "
                        "regular, and a topology schedule runs its fallback there (explain the "
                        "fallback instead)\n", c->opt.ppn, c->p);
        return 2;
    }
    if (c->bad || c->p < 1 || c->p > CG_MAX_ONE_P || c->root < 0 || c->root >= c->p ||
        c->elem < 1) {
        if (!c->bad) {
            fprintf(stderr, "collgen: %s needs --p N (1 <= N <= %d), 0 <= --root < N and "
                            "--elem-size >= 1\n", c->cmd, CG_MAX_ONE_P);
        }
        return c->bad ? 1 : 2;
    }
    return -1;
}

/* traffic, simulate and goal run one configuration at a large p on purpose:
 * the simulation's budget is raised for them. Blocks dominate it where
 * messages carry half the vector (rabenseifner at p = 65,536: 3.4 * 10^10
 * units, 5 s, since a range is resolved, not walked); ranks looked at per
 * step cost about 6 ns each, so the budget still stops what would take
 * hours (a ring at p = 10^6). */
#define CG_SCALE_MAX_WORK 200000000000LL

/* The schedule's node shape for traffic, simulate and goal: --ppn when it
 * divides p, else a topology schedule's default; a flat schedule's placement
 * takes --ppn ranks per node (default 1). */
static int scale_ppn(const struct cli *c, const struct cg_schedule *s)
{
    if (s->topology) {
        return cg_analyse_ppn(&c->g, s, c->p);
    }
    return c->opt.ppn > 0 ? c->opt.ppn : 1;
}

/* A schedule with call steps: their callees' messages are not expanded. */
static int refuse_calls(const struct cli *c, const struct cg_schedule *s)
{
    if (!cg_has_calls(s)) {
        return 0;
    }
    fprintf(stderr, "collgen: %s: %s has call steps; %s does not expand a callee's messages "
                    "(traffic counts them out and says so)\n", s->file, s->name, c->cmd);
    return 1;
}

/* start_one_p, then the topology and placement. */
static int start_machine(struct cli *c, int argc, char **argv, struct cg_arena *arena,
                         struct cg_topo *t, struct cg_placement *pl)
{
    int rc = start_one_p(c, argc, argv);
    if (rc >= 0) {
        return rc;
    }
    c->opt.sim_max_work = CG_SCALE_MAX_WORK;
    if (c->topology == NULL) {
        fprintf(stderr, "collgen: %s needs --topology FILE (descriptors/topologies/)\n", c->cmd);
        return 2;
    }
    if (cg_topo_load(&c->g, arena, c->topology, t) != 0) {
        return 2;
    }
    if (cg_place(&c->g, arena, t, c->p, scale_ppn(c, schedule(c, 0)),
                 c->placement ? c->placement : "block", c->nodes, pl) != 0) {
        return 2;
    }
    return -1;
}

/* ---- the commands ------------------------------------------------------------ */

static int cmd_list(int argc, char **argv)
{
    struct cli c;
    int rc = start(&c, argc, argv);
    if (rc < 0) {
        rc = load(&c, 0);
    }
    if (rc < 0) {
        for (int i = 0; i < c.nfiles; i++) {
            const struct cg_schedule *s = schedule(&c, i);
            if (s->checked) {
                printf("%-40s %-21s %s\n", s->name, cg_colls[s->coll].name, s->summary);
            }
        }
        rc = c.bad ? 1 : 0;
    }
    return finish(&c, rc);
}

static int cmd_tags(int argc, char **argv)
{
    struct cli c;
    int rc = start_one_p(&c, argc, argv);
    if (rc >= 0) {
        return finish(&c, rc);
    }
    rc = 0;
    for (int i = 0; i < c.nfiles && rc == 0; i++) {
        rc = cg_tag_counts(&c.g, schedule(&c, i), c.p, c.root, stdout) != 0;
    }
    return finish(&c, rc);
}

static void print_totals(const struct cg_analysis *a, const struct cg_model *model)
{
    printf("\ntotals:\n");
    printf("  rounds (exchange steps that move data): %ld\n", a->rounds);
    printf("  messages:                               %ld\n", a->messages);
    printf("  bytes sent per rank:                    max %.0f, sum over ranks %.0f\n",
           a->sent_max_B, a->sent_sum_B);
    printf("  bytes received per rank:                max %.0f\n", a->recv_max_B);
    printf("  bytes reduced per rank:                 max %.0f, sum over ranks %.0f\n",
           a->reduce_max_B, a->reduce_sum_B);
    printf("  bytes copied locally:                   sum over ranks %.0f\n", a->copy_sum_B);
    printf("prediction (alpha = %g us, beta = %g ns/B, gamma = %g ns/B):\n", model->alpha_us,
           model->beta_ns_B, model->gamma_ns_B);
    printf("  %.1f us = %.1f (latency) + %.1f (bandwidth) + %.1f (reduction)\n",
           a->t_alpha_us + a->t_beta_us + a->t_gamma_us, a->t_alpha_us, a->t_beta_us,
           a->t_gamma_us);
}

static int cmd_explain(int argc, char **argv)
{
    struct cli c;
    int rc = start_one_p(&c, argc, argv);
    if (rc >= 0) {
        return finish(&c, rc);
    }
    const struct cg_schedule *s = schedule(&c, 0);
    struct cg_analysis a;
    printf("%s: %s (%s)\n%s\n", s->file, s->name, cg_colls[s->coll].name, s->summary);
    char rootbuf[96] = "";
    if (cg_colls[s->coll].rooted) {
        snprintf(rootbuf, sizeof(rootbuf), ", root = %d", c.root);
    }
    if (s->topology) {
        int ppn = cg_analyse_ppn(&c.g, s, c.p);
        size_t n = strlen(rootbuf);
        snprintf(rootbuf + n, sizeof(rootbuf) - n, ", %d nodes x %d ranks (ppn)", c.p / ppn, ppn);
    }
    if (cg_colls[s->coll].shape == CG_SHAPE_TOKEN) {
        printf("p = %d%s, one 1-byte token per message\n\n", c.p, rootbuf);
    } else {
        printf("p = %d%s, count = %zu elements of %d bytes\n\n", c.p, rootbuf, c.count, c.elem);
    }
    rc = 0;
    if (cg_analyse(&c.g, s, c.p, c.root, c.count, c.elem, &c.model, stdout, 0, "", &a) != 0) {
        rc = 1;
    } else {
        print_totals(&a, &c.model);
    }
    return finish(&c, rc);
}

static int cmd_traffic(int argc, char **argv)
{
    struct cli c;
    struct cg_arena arena = { 0 };
    struct cg_topo t;
    struct cg_placement pl = { 0 };
    int rc = start_machine(&c, argc, argv, &arena, &t, &pl);
    if (rc < 0) {
        const struct cg_schedule *s = schedule(&c, 0);
        rc = cg_traffic(&c.g, s, &t, &pl, c.root, scale_ppn(&c, s), c.count, c.elem, stdout) != 0;
    }
    cg_placement_free(&pl);
    cg_arena_fini(&arena);
    return finish(&c, rc);
}

static int cmd_simulate(int argc, char **argv)
{
    struct cli c;
    struct cg_arena arena = { 0 };
    struct cg_topo t;
    struct cg_placement pl = { 0 };
    int rc = start_machine(&c, argc, argv, &arena, &t, &pl);
    if (rc < 0) {
        const struct cg_schedule *s = schedule(&c, 0);
        rc = refuse_calls(&c, s) ? 2
             : cg_simulate(&c.g, s, &t, &pl, c.root, scale_ppn(&c, s), c.count, c.elem,
                           c.contention, stdout, NULL) != 0;
    }
    cg_placement_free(&pl);
    cg_arena_fini(&arena);
    return finish(&c, rc);
}

static int cmd_goal(int argc, char **argv)
{
    struct cli c;
    int rc = start_one_p(&c, argc, argv);
    if (rc < 0) {
        c.opt.sim_max_work = CG_SCALE_MAX_WORK;
        const struct cg_schedule *s = schedule(&c, 0);
        rc = refuse_calls(&c, s) ? 2
             : cg_goal(&c.g, s, c.p, c.root, s->topology ? cg_analyse_ppn(&c.g, s, c.p) : 0,
                       c.count, c.elem, c.model.gamma_ns_B, stdout) != 0;
    }
    return finish(&c, rc);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void describe_range(const struct cg_options *opt, char *buf, size_t cap)
{
    size_t n = 0;
    buf[0] = '\0';
    for (int i = 0; i < opt->np && n < cap; i++) {
        int j = i;
        while (j + 1 < opt->np && opt->p_list[j + 1] == opt->p_list[j] + 1) {
            j++;
        }
        if (j > i) {
            n += (size_t)snprintf(buf + n, cap - n, "%s%d..%d", i ? "," : "", opt->p_list[i],
                                  opt->p_list[j]);
        } else {
            n += (size_t)snprintf(buf + n, cap - n, "%s%d", i ? "," : "", opt->p_list[i]);
        }
        i = j;
    }
}

/* verify_all's jobs: the checked schedules, over fanout.c's workers. */
struct verify_jobs {
    struct cli *c;
    int *idx;          /* job -> file index */
    char range[512];   /* the p range, as the user would write it */
};

static int verify_job(void *arg, int k, long *runs)
{
    struct verify_jobs *v = arg;
    struct cg_verify_stats st = { 0 };
    int rc = cg_verify(&v->c->g, schedule(v->c, v->idx[k]), &st);
    *runs = st.runs;
    return rc;
}

static void verify_done(void *arg, int k, const struct cg_fan_result *r)
{
    struct verify_jobs *v = arg;
    struct cli *c = v->c;
    int i = v->idx[k];
    struct cg_schedule *s = schedule(c, i);
    if (r->rc != 0) {
        c->bad++;
        s->checked = 0;
        if (r->rc == CG_FAN_DIED && WIFSIGNALED(r->status)) {
            fprintf(stderr, "%s: verification died (signal %d)\n", c->files[i],
                    WTERMSIG(r->status));
        } else if (r->rc == CG_FAN_DIED) {
            fprintf(stderr, "%s: verification exited (status %d)\n", c->files[i],
                    WEXITSTATUS(r->status));
        } else if (r->rc == CG_FAN_NOT_RUN) {
            fprintf(stderr, "%s: not verified (every worker died)\n", c->files[i]);
        }
        fprintf(stderr, "%s: FAILED verification\n", c->files[i]);
    } else if (!c->opt.quiet) {
        char extra[400];
        size_t en = 0;
        extra[0] = '\0';
        if (s->topology) {
            en += (size_t)snprintf(extra + en, sizeof(extra) - en,
                                   ", every ppn dividing p (above p = 64: 1, 2, p/2, p and the squarest)");
        }
        for (int k2 = 0; k2 < s->nparams && en < sizeof(extra); k2++) {
            if (s->params[k2].ranged) {
                en += (size_t)snprintf(extra + en, sizeof(extra) - en, ", %s = %lld..%lld",
                                       s->params[k2].name, (long long)s->params[k2].lo,
                                       (long long)s->params[k2].hi);
            }
        }
        printf("%s: ok: %s for p = %s%s%s (%ld runs, %.2f s)\n", c->files[i], s->name, v->range,
               cg_colls[s->coll].rooted ? ", every root" : "", extra, r->value, r->seconds);
    }
}

/* 3. Every checked schedule simulated for every p and root; a failure
 * unchecks it. Prints a line per schedule unless quiet, in file order
 * whatever the number of workers (--jobs; fanout.h). */
static void verify_all(struct cli *c)
{
    struct verify_jobs v = { c, calloc((size_t)c->nfiles + 1, sizeof(int)), "" };
    int n = 0;
    if (v.idx == NULL) {
        cg_panic("out of memory");
    }
    describe_range(&c->opt, v.range, sizeof(v.range));
    for (int i = 0; i < c->nfiles; i++) {
        if (schedule(c, i)->checked) {
            v.idx[n++] = i;
        }
    }
    double t0 = now_s();
    fflush(stdout);
    cg_fanout(n, c->jobs > 0 ? c->jobs : cg_fanout_default_workers(), verify_job, verify_done, &v);
    free(v.idx);
    fflush(stderr);
    if (!c->opt.quiet) {
        printf("%d of %d schedules verified in %.2f s\n", c->nfiles - c->bad, c->nfiles,
               now_s() - t0);
    }
}

static int cmd_verify(int argc, char **argv)
{
    struct cli c;
    int rc = start(&c, argc, argv);
    if (rc < 0) {
        rc = load(&c, 1);
    }
    if (rc < 0) {
        verify_all(&c);
        rc = c.bad ? 1 : 0;
    }
    return finish(&c, rc);
}

static int write_depfile(const char *path, const char *target, char **files, int nfiles,
                         char **dirs, int ndirs)
{
    char tmp[4200];
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (f == NULL) {
        return -1;
    }
    fprintf(f, "%s:", target);
    for (int i = 0; i < ndirs; i++) {
        fprintf(f, " \\\n  %s", dirs[i]);
    }
    for (int i = 0; i < nfiles; i++) {
        fprintf(f, " \\\n  %s", files[i]);
    }
    fprintf(f, "\n");
    if (fclose(f) != 0 || rename(tmp, path) != 0) {
        return -1;
    }
    return 0;
}

/* 5. C over MPI, one file per schedule, and CUDA C++ for the schedules
 * with a GPU twin; 6. the registries. All schedules verified. */
static int emit_all(struct cli *c)
{
    int rc = 0;
    const struct cg_schedule **ss = calloc((size_t)c->nfiles, sizeof(*ss));
    char dir[4096];
    if (ss == NULL) {
        cg_panic("out of memory");
    }
    mkdir(c->opt.out_dir, 0777);
    snprintf(dir, sizeof(dir), "%s/mpi", c->opt.out_dir);
    mkdir(dir, 0777);
    snprintf(dir, sizeof(dir), "%s/cuda", c->opt.out_dir);
    mkdir(dir, 0777);
    for (int i = 0; i < c->nfiles; i++) {
        ss[i] = schedule(c, i);
        for (int j = 0; j < i; j++) {
            if (strcmp(ss[j]->name, ss[i]->name) == 0) {
                struct cg_pos none = { 0, 0 };
                cg_error(&c->g.diag, c->files[i], none, "schedule name '%s' is also used by %s",
                         ss[i]->name, c->files[j]);
                rc = 1;
            }
        }
    }
    for (int i = 0; i < c->nfiles && rc == 0; i++) {
        rc = cg_emit_mpi(&c->g, ss[i]) != 0;
        if (rc == 0 && cg_emit_cuda_has(ss[i])) {
            rc = cg_emit_cuda(&c->g, ss[i]) != 0;
        }
    }
    if (rc == 0) {
        rc = cg_emit_registry(&c->g, ss, c->nfiles) != 0;
    }
    if (rc == 0 && c->opt.depfile) {
        char target[4200];
        snprintf(target, sizeof(target), "%s/registry.c", c->opt.out_dir);
        if (write_depfile(c->opt.depfile, target, c->files, c->nfiles, c->dirs, c->ndirs) != 0) {
            fprintf(stderr, "collgen: cannot write %s: %s\n", c->opt.depfile, strerror(errno));
            rc = 1;
        }
    }
    free(ss);
    return rc;
}

static int cmd_emit(int argc, char **argv)
{
    struct cli c;
    int rc = start(&c, argc, argv);
    if (rc < 0 && c.nfiles > 0 && strcmp(c.opt.out_dir, "emitted") == 0) {
        fprintf(stderr, "collgen: emit FILE... writes a registry of just those files; give --out "
                        "DIR (emitted/ is made from all of schedules/ by plain 'collgen emit')\n");
        rc = 2;
    }
    if (rc < 0) {
        rc = load(&c, 1);
    }
    if (rc < 0) {
        verify_all(&c);
        rc = c.bad ? 1 : 0;
        if (c.bad) {
            fprintf(stderr, "collgen: nothing emitted: %d schedule(s) failed\n", c.bad);
        } else {
            rc = emit_all(&c);
        }
    }
    return finish(&c, rc);
}

static int cmd_mutate(int argc, char **argv)
{
    struct cli c;
    int rc = start(&c, argc, argv);
    if (rc < 0) {
        rc = load(&c, 1);
    }
    if (rc >= 0) {
        return finish(&c, rc);
    }
    struct cg_mutate_stats total = { 0 };
    for (int i = 0; i < c.nfiles; i++) {
        struct cg_loaded *l = c.set.items[i];
        if (!l->s.checked) {
            continue;
        }
        struct cg_mutate_stats st = { 0 };
        cg_mutate(&c.g, &l->arena, &l->s, stdout, &st);
        printf("%s: %d mutants, %d killed, %d equivalent\n", c.files[i], st.mutants, st.killed,
               st.equivalent);
        total.mutants += st.mutants;
        total.killed += st.killed;
        total.equivalent += st.equivalent;
    }
    printf("kill rate: %d of %d mutants killed (%.1f%%); %d equivalent (verified correct "
           "for every p tried)\n",
           total.killed, total.mutants,
           total.mutants ? 100.0 * total.killed / total.mutants : 0.0, total.equivalent);
    return finish(&c, c.bad ? 1 : 0);
}

/* ---- the table ------------------------------------------------------------ */

static const struct cg_command commands[] = {
    { "verify", cmd_verify, "verify [FILE...]",
      "prove each schedule computes its collective for every p\n"
      "in the range and every root; exit 0 only if all do" },
    { "emit", cmd_emit, "emit [FILE...]",
      "verify, then write C over MPI into emitted/ (one file per\n"
      "schedule, plus mpi/collgen.h, mpi/all.c, registry.c,\n"
      "tags.c), CUDA C++ for the schedules with a GPU twin\n"
      "(cuda/<schedule>.cu, cuda/collgen_cuda.h, cuda/all.cu),\n"
      "registry.json (every schedule) and collectives.json (the\n"
      "table of collectives)" },
    { "explain", cmd_explain, "explain FILE --p N",
      "per rank and round: who sends which blocks to whom, what\n"
      "is reduced and copied; totals and a cost prediction" },
    { "list", cmd_list, "list [FILE...]", "schedules with their collective and summary" },
    { "tags", cmd_tags, "tags FILE --p N",
      "the timing tags each rank enters in one call, and how\n"
      "often (\"rank path calls\" lines; tests compare them)" },
    { "traffic", cmd_traffic, "traffic FILE --p N",
      "on --topology T, bytes per domain (intra-node, -switch,\n"
      "-group, inter-group) per step instance and phase, for\n"
      "ranks placed by --placement; the most loaded links per level" },
    { "simulate", cmd_simulate, "simulate FILE --p N",
      "LogGP-style prediction on --topology T: time per tag\n"
      "and total (--contention: max-min shared links)" },
    { "goal", cmd_goal, "goal FILE --p N",
      "LogGOPSim's GOAL text: per rank sends, receives and calc\n"
      "with requires, faithful to the rounds" },
    { "mutate", cmd_mutate, "mutate [FILE...]",
      "mutation testing of the verifier: make mutants, verify\n"
      "them, print the kill rate and the equivalent ones" },
    { "tag", cg_ctag_main, "tag FILE.c...",
      "insert timing tags into hand-written C (gen/ctag.c;\n"
      "'collgen tag --help')" },
};
#define NCOMMANDS ((int)(sizeof(commands) / sizeof(commands[0])))

static const struct cg_command *extra_commands;
static int nextra_commands;

static void usage_command(FILE *f, const struct cg_command *c)
{
    fprintf(f, "  %-20s ", c->synopsis);
    for (const char *line = c->help; *line;) {
        const char *end = strchr(line, '\n');
        int len = end ? (int)(end - line) : (int)strlen(line);
        fprintf(f, "%s%.*s\n", line == c->help ? "" : "                       ", len, line);
        line += len + (end ? 1 : 0);
    }
}

static void usage(FILE *f)
{
    fputs("usage: collgen COMMAND [OPTIONS] [FILE...]\n"
          "\n"
          "Schedules are JSON files (schedules/<collective>/<name>.json; see\n"
          "schedules/README.md). Without FILE, every schedule under schedules/ is used.\n"
          "\n"
          "Commands:\n", f);
    for (int i = 0; i < NCOMMANDS; i++) {
        usage_command(f, &commands[i]);
    }
    for (int i = 0; i < nextra_commands; i++) {
        usage_command(f, &extra_commands[i]);
    }
    fputs("\n", f);
    fputs(options_help, f);
}

int cg_main(int argc, char **argv, const struct cg_command *extra, int n)
{
    const char *cmd = argc > 1 ? argv[1] : "";
    extra_commands = extra;
    nextra_commands = n;
    if (strcmp(cmd, "-h") == 0 || strcmp(cmd, "--help") == 0 || strcmp(cmd, "help") == 0) {
        usage(stdout);
        return 0;
    }
    for (int i = 0; i < NCOMMANDS; i++) {
        if (strcmp(cmd, commands[i].name) == 0) {
            return commands[i].run(argc - 1, argv + 1);
        }
    }
    for (int i = 0; i < n; i++) {
        if (strcmp(cmd, extra[i].name) == 0) {
            return extra[i].run(argc - 1, argv + 1);
        }
    }
    fprintf(stderr, "collgen: %s%s\n", *cmd ? "unknown command: " : "no command given", cmd);
    usage(stderr);
    return 2;
}
