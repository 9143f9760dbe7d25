/* main.c - the collgen command line; reads like a table of contents of the
 * passes:
 *
 *   1. parse   JSON text -> IR with source positions        (parse.c, json.c, expr.c)
 *   2. check   names bound, identifiers and shapes checked  (check.c)
 *   3. verify  simulated for every p and root               (verify.c, sim.c)
 *   4. analyse rounds, messages, bytes, cost prediction     (analyse.c)
 *   5. emit    C over MPI, one file per schedule; CUDA C++  (emit_mpi.c, emit_cuda.c,
 *              for the collectives the GPU backend has       emit_common.c, out.c)
 *   6. registry  prototypes, tag ids, algorithm tables       (emit_registry.c)
 */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "../harness/harness.h"
#include "mutate.h"
#include "passes.h"

static const char usage[] =
    "usage: collgen COMMAND [OPTIONS] [FILE...]\n"
    "\n"
    "Schedules are JSON files (schedules/<collective>/<name>.json; see\n"
    "schedules/README.md). Without FILE, every schedule under schedules/ is used.\n"
    "\n"
    "Commands:\n"
    "  verify [FILE...]     prove each schedule computes its collective for every p\n"
    "                       in the range and every root; exit 0 only if all do\n"
    "  emit [FILE...]       verify, then write C over MPI into emitted/ (one file per\n"
    "                       schedule, plus mpi/collgen.h, mpi/all.c, registry.c) and\n"
    "                       CUDA C++ for allreduce, allgather, reduce_scatter_block,\n"
    "                       bcast and alltoall (cuda/<schedule>.cu, cuda/collgen_cuda.h,\n"
    "                       cuda/all.cu)\n"
    "  explain FILE --p N   per rank and round: who sends which blocks to whom, what\n"
    "                       is reduced and copied; totals and a cost prediction\n"
    "  list [FILE...]       schedules with their collective and summary\n"
    "  tags FILE --p N      the timing tags each rank enters in one call, and how\n"
    "                       often (\"rank path calls\" lines; tests compare them)\n"
    "  run TEST [OPTIONS]   run a benchmark campaign (harness/README.md; 'collgen run\n"
    "                       --help')\n"
    "  report CAMPAIGN      remake a campaign's table, CSV and plots from its records\n"
    "  mutate [FILE...]     mutation testing of the verifier: make mutants, verify\n"
    "                       them, print the kill rate and the equivalent ones\n"
    "\n"
    "Options:\n"
    "  --p LIST             process counts, e.g. 1..64,100,1000 (verify, mutate;\n"
    "                       default 1..64,100,127,128,255,256,1000); one number for\n"
    "                       explain\n"
    "  --all-roots          verify every root at every p (default: every root up to\n"
    "                       p = 64, then roots 0, 1, p/2 and p-1)\n"
    "  --ppn N              explain, tags: ranks per node for topology schedules (a\n"
    "                       divisor of p; default the smallest divisor >= sqrt(p))\n"
    "  --root R             explain: the root (default 0)\n"
    "  --count N            explain: elements per rank (default 262144)\n"
    "  --elem-size S        explain: bytes per element (default 8)\n"
    "  --alpha US --beta NS --gamma NS\n"
    "                       explain: latency per round in microseconds, and\n"
    "                       nanoseconds per byte moved and reduced (defaults 1, 0.1, 0.2)\n"
    "  --out DIR            emit: where emitted/ is (default emitted)\n"
    "  --depfile FILE       emit: write a ninja depfile listing the schedules read\n"
    "  -q, --quiet          print only failures\n"
    "  -h, --help           this text\n";

struct loaded {
    struct cg_schedule s; /* the IR */
    struct cg_arena arena;/* owns it */
};

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Appends every *.json below dir (sorted, recursively) to *files, and every
 * directory visited to *dirs (for the depfile: a new file changes its
 * directory's mtime). */
static void scan(const char *dir, char ***files, int *nfiles, char ***dirs, int *ndirs)
{
    DIR *d = opendir(dir);
    if (d == NULL) {
        return;
    }
    *dirs = realloc(*dirs, sizeof(char *) * (size_t)(*ndirs + 1));
    (*dirs)[(*ndirs)++] = strdup(dir);
    char **names = NULL;
    int n = 0;
    for (struct dirent *e = readdir(d); e; e = readdir(d)) {
        if (e->d_name[0] == '.') {
            continue;
        }
        names = realloc(names, sizeof(char *) * (size_t)(n + 1));
        size_t len = strlen(dir) + strlen(e->d_name) + 2;
        names[n] = malloc(len);
        snprintf(names[n], len, "%s/%s", dir, e->d_name);
        n++;
    }
    closedir(d);
    qsort(names, (size_t)n, sizeof(char *), cmp_str);
    for (int i = 0; i < n; i++) {
        struct stat st;
        size_t len = strlen(names[i]);
        if (stat(names[i], &st) == 0 && S_ISDIR(st.st_mode)) {
            scan(names[i], files, nfiles, dirs, ndirs);
            free(names[i]);
        } else if (len > 5 && strcmp(names[i] + len - 5, ".json") == 0) {
            *files = realloc(*files, sizeof(char *) * (size_t)(*nfiles + 1));
            (*files)[(*nfiles)++] = names[i];
        } else {
            free(names[i]);
        }
    }
    free(names);
}

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

/* Passes 1 and 2. */
static int load(struct cg_gen *g, const char *path, struct loaded *l)
{
    memset(l, 0, sizeof(*l));
    /* 1. JSON text -> IR with source positions. */
    if (cg_parse(g, &l->arena, path, &l->s) != 0) {
        return -1;
    }
    /* 2. Names bound, identifiers and shapes checked. */
    return cg_check(g, &l->arena, &l->s);
}

/* A generated callee named by a call step: among the loaded schedules, else
 * in schedules/<collective>/ (a single-file verify or explain). Callees
 * loaded here live until the process ends. */
static const struct cg_schedule *find_callee(struct cg_gen *g, struct loaded *ls, int n,
                                             const char *name, enum cg_coll_kind coll)
{
    for (int i = 0; i < n; i++) {
        if (ls[i].s.checked && strcmp(ls[i].s.name, name) == 0) {
            return &ls[i].s;
        }
    }
    /* Its collective's directory first, then the others, so that a callee
     * of the wrong collective is found and reported as such. */
    char dir[256];
    snprintf(dir, sizeof(dir), "schedules/%s", cg_colls[coll].name);
    char **files = NULL, **dirs = NULL;
    int nfiles = 0, ndirs = 0;
    scan(dir, &files, &nfiles, &dirs, &ndirs);
    scan("schedules", &files, &nfiles, &dirs, &ndirs);
    const struct cg_schedule *found = NULL;
    /* Files that do not parse are reported when they are themselves used;
     * here they are skipped quietly. */
    FILE *null = fopen("/dev/null", "w");
    struct cg_gen quiet = *g;
    cg_diag_init(&quiet.diag, null ? null : stderr);
    for (int i = 0; i < nfiles; i++) {
        if (found == NULL) {
            struct loaded *l = calloc(1, sizeof(*l));
            if (load(&quiet, files[i], l) == 0 && strcmp(l->s.name, name) == 0) {
                found = &l->s;
            }
        }
        free(files[i]);
    }
    for (int i = 0; i < ndirs; i++) {
        free(dirs[i]);
    }
    free(files);
    free(dirs);
    if (null) {
        fclose(null);
    }
    return found;
}

/* Binds every call step's "use" to its generated callee and checks that the
 * callee exists, runs the step's collective and can run on these views. */
static int resolve_calls(struct cg_gen *g, struct loaded *ls, int n, int i)
{
    struct cg_schedule *s = &ls[i].s;
    int before = g->diag.errors;
    for (int pi = 0; pi < s->nphases; pi++) {
        for (int k = 0; k < s->phases[pi].nsteps; k++) {
            struct cg_step *st = &s->phases[pi].steps[k];
            if (st->kind != CG_STEP_CALL || st->call_use == NULL) {
                continue;
            }
            enum cg_coll_kind cc = (enum cg_coll_kind)st->call_coll;
            if (strcmp(st->call_use, s->name) == 0) {
                cg_error(&g->diag, s->file, st->use_pos, "schedule '%s' calls itself",
                         s->name);
                continue;
            }
            const struct cg_schedule *callee = NULL;
            for (int j = 0; j < n; j++) {
                if (ls[j].s.checked && strcmp(ls[j].s.name, st->call_use) == 0) {
                    callee = &ls[j].s;
                }
            }
            if (callee == NULL) {
                callee = find_callee(g, ls, n, st->call_use, cc);
            }
            if (callee == NULL) {
                cg_error(&g->diag, s->file, st->use_pos,
                         "call step: no schedule '%s' (looked under schedules/); \"use\" names "
                         "a %s schedule or \"native\"", st->call_use, cg_colls[cc].name);
                continue;
            }
            if (callee->coll != cc) {
                cg_error(&g->diag, s->file, st->use_pos,
                         "call step: schedule '%s' is a %s schedule, but this step calls %s",
                         st->call_use, cg_colls[callee->coll].name, cg_colls[cc].name);
                continue;
            }
            if (cg_has_calls(callee)) {
                cg_error(&g->diag, s->file, st->use_pos,
                         "call step: '%s' has call steps itself; nested calls are not supported",
                         st->call_use);
                continue;
            }
            if (callee->commutative && !s->commutative) {
                cg_error(&g->diag, s->file, st->use_pos,
                         "call step: '%s' needs a commutative op; add \"requires\": "
                         "{\"commutative\": true}", st->call_use);
                continue;
            }
            if (cg_colls[s->coll].shape == CG_SHAPE_SPLIT &&
                (cg_colls[cc].shape == CG_SHAPE_UNIFORM || cg_colls[cc].shape == CG_SHAPE_ONE)) {
                cg_error(&g->diag, s->file, st->use_pos,
                         "call step: blocks of %s have uneven sizes, which a generated %s "
                         "cannot take (it needs p equal blocks); use \"native\", which falls "
                         "back to the v-variant", cg_colls[s->coll].name, cg_colls[cc].name);
                continue;
            }
            st->callee = callee;
        }
    }
    if (s->topology && s->fallback != NULL) {
        const struct cg_schedule *fb = NULL;
        for (int j = 0; j < n; j++) {
            if (ls[j].s.checked && strcmp(ls[j].s.name, s->fallback) == 0) {
                fb = &ls[j].s;
            }
        }
        if (fb == NULL) {
            fb = find_callee(g, ls, n, s->fallback, s->coll);
        }
        if (fb == NULL) {
            cg_error(&g->diag, s->file, s->fallback_pos,
                     "fallback: no schedule '%s' (looked under schedules/); it names a %s "
                     "schedule without \"topology\", run where the communicator is not regular",
                     s->fallback, cg_colls[s->coll].name);
        } else if (fb->coll != s->coll) {
            cg_error(&g->diag, s->file, s->fallback_pos,
                     "fallback: schedule '%s' is a %s schedule; this one is %s", s->fallback,
                     cg_colls[fb->coll].name, cg_colls[s->coll].name);
        } else if (fb->topology) {
            cg_error(&g->diag, s->file, s->fallback_pos,
                     "fallback: '%s' needs a topology itself; a fallback must run on any "
                     "communicator", s->fallback);
        } else if (fb->commutative && !s->commutative) {
            cg_error(&g->diag, s->file, s->fallback_pos,
                     "fallback: '%s' needs a commutative op; add \"requires\": "
                     "{\"commutative\": true}", s->fallback);
        } else {
            s->fallback_s = fb;
        }
    }
    return g->diag.errors > before ? -1 : 0;
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

int main(int argc, char **argv)
{
    struct cg_options opt;
    cg_options_init(&opt);
    struct cg_gen g = { &opt, { 0 } };
    cg_diag_init(&g.diag, stderr);
    struct cg_model model;
    cg_model_init(&model);
    const char *cmd = argc > 1 ? argv[1] : "";
    int explain_p = 0, root = 0, elem = 8, all_roots = 0;
    size_t count = 262144;
    char **files = NULL, **dirs = NULL;
    int nfiles = 0, ndirs = 0;

    /* The harness's commands live in harness/. */
    if (strcmp(cmd, "run") == 0) {
        return cg_run_main(argc - 1, argv + 1);
    }
    if (strcmp(cmd, "report") == 0) {
        return cg_report_main(argc - 1, argv + 1);
    }
    if (strcmp(cmd, "compare") == 0) { return cg_compare_main(argc - 1, argv + 1); }
    if (strcmp(cmd, "-h") == 0 || strcmp(cmd, "--help") == 0 || strcmp(cmd, "help") == 0) {
        fputs(usage, stdout);
        return 0;
    }
    if (strcmp(cmd, "verify") != 0 && strcmp(cmd, "emit") != 0 && strcmp(cmd, "explain") != 0 &&
        strcmp(cmd, "list") != 0 && strcmp(cmd, "mutate") != 0 && strcmp(cmd, "tags") != 0) {
        fprintf(stderr, "collgen: %s%s\n%s", *cmd ? "unknown command: " : "no command given",
                cmd, usage);
        return 2;
    }
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        int takes = 1;
        if (strcmp(a, "--p") == 0 && v) {
            if (strcmp(cmd, "explain") == 0 || strcmp(cmd, "tags") == 0) {
                explain_p = atoi(v);
            } else if (parse_p_list(v, &opt) != 0) {
                fprintf(stderr, "collgen: bad --p list '%s' (e.g. 1..64,100)\n", v);
                return 2;
            }
        } else if (strcmp(a, "--ppn") == 0 && v) {
            opt.ppn = atoi(v);
            if (opt.ppn < 1) {
                fprintf(stderr, "collgen: bad --ppn '%s' (a positive number of ranks per node)\n",
                        v);
                return 2;
            }
        } else if (strcmp(a, "--root") == 0 && v) {
            root = atoi(v);
        } else if (strcmp(a, "--count") == 0 && v) {
            count = (size_t)strtoull(v, NULL, 10);
        } else if (strcmp(a, "--elem-size") == 0 && v) {
            elem = atoi(v);
        } else if (strcmp(a, "--alpha") == 0 && v) {
            model.alpha_us = atof(v);
        } else if (strcmp(a, "--beta") == 0 && v) {
            model.beta_ns_B = atof(v);
        } else if (strcmp(a, "--gamma") == 0 && v) {
            model.gamma_ns_B = atof(v);
        } else if (strcmp(a, "--out") == 0 && v) {
            opt.out_dir = v;
        } else if (strcmp(a, "--depfile") == 0 && v) {
            opt.depfile = v;
        } else {
            takes = 0;
            if (strcmp(a, "--all-roots") == 0) {
                all_roots = 1;
            } else if (strcmp(a, "-q") == 0 || strcmp(a, "--quiet") == 0) {
                opt.quiet = 1;
            } else if (a[0] == '-') {
                fprintf(stderr, "collgen: unknown option or missing value: %s\n", a);
                return 2;
            } else {
                files = realloc(files, sizeof(char *) * (size_t)(nfiles + 1));
                files[nfiles++] = strdup(a);
            }
        }
        i += takes;
    }
    if (all_roots) {
        opt.all_roots_max_p = 1 << 30;
    }
    if (nfiles > 0 && strcmp(cmd, "emit") == 0 && strcmp(opt.out_dir, "emitted") == 0) {
        fprintf(stderr, "collgen: emit FILE... writes a registry of just those files; give --out "
                        "DIR (emitted/ is made from all of schedules/ by plain 'collgen emit')\n");
        return 2;
    }
    if (nfiles == 0) {
        if (strcmp(cmd, "explain") == 0 || strcmp(cmd, "tags") == 0) {
            fprintf(stderr, "collgen: %s needs a schedule file\n", cmd);
            return 2;
        }
        scan("schedules", &files, &nfiles, &dirs, &ndirs);
        if (nfiles == 0) {
            fprintf(stderr, "collgen: no schedules found under schedules/\n");
            return 2;
        }
    }

    struct loaded *ls = calloc((size_t)nfiles, sizeof(*ls));
    int bad = 0;
    for (int i = 0; i < nfiles; i++) {
        if (load(&g, files[i], &ls[i]) != 0) {
            bad++;
        }
    }
    if (strcmp(cmd, "list") != 0) {
        for (int i = 0; i < nfiles; i++) {
            if (ls[i].s.checked && resolve_calls(&g, ls, nfiles, i) != 0) {
                ls[i].s.checked = 0;
                bad++;
            }
        }
    }
    int rc = 0;
    if ((strcmp(cmd, "explain") == 0 || strcmp(cmd, "tags") == 0) && opt.ppn > 0 &&
        explain_p >= 1 && explain_p % opt.ppn != 0) {
        fprintf(stderr, "collgen: --ppn %d does not divide --p %d: such a communicator is not "
                        "regular, and a topology schedule runs its fallback there (explain the "
                        "fallback instead)\n", opt.ppn, explain_p);
        return 2;
    }
    if (strcmp(cmd, "list") == 0) {
        for (int i = 0; i < nfiles; i++) {
            if (ls[i].s.checked) {
                printf("%-40s %-21s %s\n", ls[i].s.name, cg_colls[ls[i].s.coll].name,
                       ls[i].s.summary);
            }
        }
        rc = bad ? 1 : 0;
    } else if (strcmp(cmd, "tags") == 0) {
        if (bad || explain_p < 1 || root < 0 || root >= explain_p) {
            if (!bad) {
                fprintf(stderr, "collgen: tags needs --p N (N >= 1) and 0 <= --root < N\n");
            }
            rc = bad ? 1 : 2;
        } else {
            for (int i = 0; i < nfiles && rc == 0; i++) {
                rc = cg_tag_counts(&g, &ls[i].s, explain_p, root, stdout) != 0;
            }
        }
    } else if (strcmp(cmd, "explain") == 0) {
        struct loaded *l = &ls[0];
        if (bad || explain_p < 1 || root < 0 || root >= explain_p || elem < 1) {
            if (!bad) {
                fprintf(stderr, "collgen: explain needs --p N (N >= 1) and 0 <= --root < N\n");
            }
            rc = bad ? 1 : 2;
        } else {
            struct cg_analysis a;
            const struct cg_schedule *s = &l->s;
            printf("%s: %s (%s)\n%s\n", s->file, s->name, cg_colls[s->coll].name, s->summary);
            char rootbuf[96] = "";
            if (cg_colls[s->coll].rooted) {
                snprintf(rootbuf, sizeof(rootbuf), ", root = %d", root);
            }
            if (s->topology) {
                int ppn = cg_analyse_ppn(&g, s, explain_p);
                size_t n = strlen(rootbuf);
                snprintf(rootbuf + n, sizeof(rootbuf) - n, ", %d nodes x %d ranks (ppn)",
                         explain_p / ppn, ppn);
            }
            if (cg_colls[s->coll].shape == CG_SHAPE_TOKEN) {
                printf("p = %d%s, one 1-byte token per message\n\n", explain_p, rootbuf);
            } else {
                printf("p = %d%s, count = %zu elements of %d bytes\n\n", explain_p, rootbuf,
                       count, elem);
            }
            if (cg_analyse(&g, s, explain_p, root, count, elem, &model, stdout, 0, "", &a) != 0) {
                rc = 1;
            } else {
                printf("\ntotals:\n");
                printf("  rounds (exchange steps that move data): %ld\n", a.rounds);
                printf("  messages:                               %ld\n", a.messages);
                printf("  bytes sent per rank:                    max %.0f, sum over ranks %.0f\n",
                       a.sent_max_B, a.sent_sum_B);
                printf("  bytes received per rank:                max %.0f\n", a.recv_max_B);
                printf("  bytes reduced per rank:                 max %.0f, sum over ranks %.0f\n",
                       a.reduce_max_B, a.reduce_sum_B);
                printf("  bytes copied locally:                   sum over ranks %.0f\n",
                       a.copy_sum_B);
                printf("prediction (alpha = %g us, beta = %g ns/B, gamma = %g ns/B):\n",
                       model.alpha_us, model.beta_ns_B, model.gamma_ns_B);
                printf("  %.1f us = %.1f (latency) + %.1f (bandwidth) + %.1f (reduction)\n",
                       a.t_alpha_us + a.t_beta_us + a.t_gamma_us, a.t_alpha_us, a.t_beta_us,
                       a.t_gamma_us);
            }
        }
    } else if (strcmp(cmd, "verify") == 0 || strcmp(cmd, "emit") == 0) {
        char range[512];
        describe_range(&opt, range, sizeof(range));
        double t0 = now_s();
        for (int i = 0; i < nfiles; i++) {
            if (!ls[i].s.checked) {
                continue;
            }
            /* 3. Simulated for every p and root. */
            struct cg_verify_stats st = { 0 };
            double t1 = now_s();
            fflush(stdout);
            if (cg_verify(&g, &ls[i].s, &st) != 0) {
                bad++;
                ls[i].s.checked = 0;
                fprintf(stderr, "%s: FAILED verification\n", files[i]);
            } else if (!opt.quiet) {
                char extra[400];
                size_t en = 0;
                extra[0] = '\0';
                if (ls[i].s.topology) {
                    en += (size_t)snprintf(extra + en, sizeof(extra) - en,
                                           ", every ppn dividing p (above p = 64: 1, 2, p/2, p and the squarest)");
                }
                for (int k = 0; k < ls[i].s.nparams && en < sizeof(extra); k++) {
                    if (ls[i].s.params[k].ranged) {
                        en += (size_t)snprintf(extra + en, sizeof(extra) - en, ", %s = %lld..%lld",
                                               ls[i].s.params[k].name,
                                               (long long)ls[i].s.params[k].lo,
                                               (long long)ls[i].s.params[k].hi);
                    }
                }
                printf("%s: ok: %s for p = %s%s%s (%ld runs, %.2f s)\n", files[i], ls[i].s.name,
                       range, cg_colls[ls[i].s.coll].rooted ? ", every root" : "", extra, st.runs,
                       now_s() - t1);
            }
        }
        fflush(stderr);
        if (!opt.quiet) {
            printf("%d of %d schedules verified in %.2f s\n", nfiles - bad, nfiles, now_s() - t0);
        }
        rc = bad ? 1 : 0;
        if (strcmp(cmd, "emit") == 0) {
            if (bad) {
                fprintf(stderr, "collgen: nothing emitted: %d schedule(s) failed\n", bad);
            } else {
                /* 5. C over MPI, one file per schedule, and CUDA C++ for the
                 * collectives the GPU backend has; 6. the registries. */
                const struct cg_schedule **ss = calloc((size_t)nfiles, sizeof(*ss));
                int *base = calloc((size_t)nfiles, sizeof(int));
                int next = 0;
                char dir[4096];
                mkdir(opt.out_dir, 0777);
                snprintf(dir, sizeof(dir), "%s/mpi", opt.out_dir);
                mkdir(dir, 0777);
                snprintf(dir, sizeof(dir), "%s/cuda", opt.out_dir);
                mkdir(dir, 0777);
                for (int i = 0; i < nfiles; i++) {
                    for (int j = 0; j < i; j++) {
                        if (strcmp(ls[j].s.name, ls[i].s.name) == 0) {
                            struct cg_pos none = { 0, 0 };
                            cg_error(&g.diag, files[i], none,
                                     "schedule name '%s' is also used by %s", ls[i].s.name,
                                     files[j]);
                            rc = 1;
                        }
                    }
                    ss[i] = &ls[i].s;
                    base[i] = next;
                    next += ls[i].s.ntags;
                }
                for (int i = 0; i < nfiles && rc == 0; i++) {
                    rc = cg_emit_mpi(&g, ss[i], base[i]) != 0;
                    if (rc == 0 && cg_emit_cuda_has(ss[i])) {
                        rc = cg_emit_cuda(&g, ss[i], base[i]) != 0;
                    }
                }
                if (rc == 0) {
                    rc = cg_emit_registry(&g, ss, nfiles, base) != 0;
                }
                if (rc == 0 && opt.depfile) {
                    char target[4200];
                    snprintf(target, sizeof(target), "%s/registry.c", opt.out_dir);
                    if (write_depfile(opt.depfile, target, files, nfiles, dirs, ndirs) != 0) {
                        fprintf(stderr, "collgen: cannot write %s: %s\n", opt.depfile,
                                strerror(errno));
                        rc = 1;
                    }
                }
                free(ss);
                free(base);
            }
        }
    } else if (strcmp(cmd, "mutate") == 0) {
        struct cg_mutate_stats total = { 0 };
        for (int i = 0; i < nfiles; i++) {
            if (!ls[i].s.checked) {
                continue;
            }
            struct cg_mutate_stats st = { 0 };
            cg_mutate(&g, &ls[i].arena, &ls[i].s, stdout, &st);
            printf("%s: %d mutants, %d killed, %d equivalent\n", files[i], st.mutants, st.killed,
                   st.equivalent);
            total.mutants += st.mutants;
            total.killed += st.killed;
            total.equivalent += st.equivalent;
        }
        printf("kill rate: %d of %d mutants killed (%.1f%%); %d equivalent (verified correct "
               "for every p tried)\n",
               total.killed, total.mutants,
               total.mutants ? 100.0 * total.killed / total.mutants : 0.0, total.equivalent);
        rc = bad ? 1 : 0;
    }
    for (int i = 0; i < nfiles; i++) {
        cg_arena_fini(&ls[i].arena);
        free(files[i]);
    }
    for (int i = 0; i < ndirs; i++) {
        free(dirs[i]);
    }
    free(dirs);
    free(files);
    free(ls);
    return rc;
}
