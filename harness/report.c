/* report.c - collgen report DIR [--no-plots] [--quiet]: remakes a campaign's
 * table, CSV, Markdown report and plots from its records alone; collgen
 * report DIR DIR... --out OUT pools campaigns of one descriptor into one
 * report whose points have the launches of all of them (report_data.c,
 * cg_rep_load_pool).
 *
 *   1. read    points.jsonl, raw files, campaign.json, run-N.json (report_data.c)
 *   2. tables  per collective, library, p (node shape) and size,
 *              and the micro-benchmarks per lane count k          (report_table.c)
 *   3. CSV     one flat row per record                           (report_csv.c)
 *   4. plots   /usr/bin/python3 harness/plots.py DIR             (harness/plots.py)
 *   5. report  context, tables, plots, how to reproduce          (report_context.c)
 *   6. guidelines  mock-ups against the native default, and the
 *              profile (guidelines.txt, profile.json, a section of
 *              report.md)                                        (report_guideline.c)
 *
 * Nothing is written until everything has been read and checked, and every
 * file is written as FILE.tmp and renamed into place at the end (plots.py
 * does the same with plots/), so a failed or interrupted report never
 * leaves a half-written output behind.
 *
 * Exit status: 0 done (also when Python or matplotlib is missing: the
 * tables are written and the report says the plots are not); 1 an output
 * could not be written or plots.py failed; 2 a usage error or a missing or
 * malformed campaign directory.
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "harness.h"
#include "report_context.h"
#include "report_csv.h"
#include "report_data.h"
#include "report_guideline.h"
#include "report_table.h"
#include "report_trace.h"
#include "report_util.h"

static const char report_usage[] =
    "usage: collgen report DIR [--out OUT] [--no-plots] [--quiet]\n"
    "       collgen report DIR DIR... --out OUT [--quiet]\n"
    "\n"
    "Remakes DIR/table.txt, DIR/report.md, DIR/points.csv, DIR/guidelines.txt\n"
    "(guideline mock-ups against the native default), DIR/profile.json (which\n"
    "implementation to use at which size) and DIR/plots/*.png from\n"
    "DIR/points.jsonl and DIR/raw/ (harness/FORMATS.md), and prints the table.\n"
    "DIR is a campaign directory written by 'collgen run'.\n"
    "\n"
    "With several DIRs, campaigns of one descriptor (run again, to have more\n"
    "launches a point) are pooled: every point gets the launches of all of\n"
    "them, in the order given, so that the launch-median test and the false\n"
    "discovery rate see them all. The report goes to OUT (created; not one of\n"
    "the DIRs, which are only read), without plots.\n"
    "\n"
    "  --out OUT    write the outputs into OUT instead of DIR\n"
    "  --no-plots   write the tables, CSV and report only\n"
    "  --quiet      print nothing but errors and warnings\n"
    "\n"
    "Plots need /usr/bin/python3 with matplotlib and numpy (harness/setup.sh);\n"
    "CG_PYTHON and CG_CG_REP_PLOTS_PY override the interpreter and the script.\n";


struct report_opts {
    const char *dir;          /* where the outputs go: the campaign, or --out */
    const char *const *dirs;  /* the campaign directories (argv's) */
    size_t ndirs;             /* how many: several are pooled */
    const char *out;          /* --out, or NULL */
    int no_plots;             /* --no-plots (implied when pooled) */
    int quiet;                /* --quiet */
};

/* One output file: written to tmp, renamed to path at the end. */
struct output {
    const char *name; /* file name inside the directory */
    char *path;       /* DIR/name */
    char *tmp;        /* DIR/name.tmp, NULL until written */
};

/* Writes text to out->tmp; 0, or -1 with the error reported. */
static int write_tmp(struct output *out, const char *dir, const char *text)
{
    out->path = cg_rep_strf("%s/%s", dir, out->name);
    out->tmp = cg_rep_strf("%s/%s.tmp", dir, out->name);
    if (out->path == NULL || out->tmp == NULL) {
        fprintf(stderr, "collgen: report: out of memory\n");
        return -1;
    }
    FILE *f = fopen(out->tmp, "wb");
    if (f == NULL) {
        fprintf(stderr, "%s: error: cannot write: %s\n", out->tmp, strerror(errno));
        free(out->tmp);
        out->tmp = NULL;
        return -1;
    }
    size_t len = strlen(text);
    int ok = (fwrite(text, 1, len, f) == len);
    ok &= (fflush(f) == 0);
    int e = errno;
    ok &= (fclose(f) == 0);
    if (!ok) {
        fprintf(stderr, "%s: error: cannot write: %s\n", out->tmp, strerror(e != 0 ? e : EIO));
        return -1;
    }
    return 0;
}

/* Removes what was written and frees the names. */
static void discard(struct output *outs, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (outs[i].tmp != NULL) {
            unlink(outs[i].tmp);
        }
        free(outs[i].tmp);
        free(outs[i].path);
        outs[i].tmp = NULL;
        outs[i].path = NULL;
    }
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The plots section of report.md: every PNG in DIR/plots, by kind. Returns
 * the number of images, or -1 out of memory. */
static int plots_section(struct cg_rep_doc *d, const char *dir)
{
    static const struct {
        const char *prefix; /* file names start with it */
        const char *title;  /* section heading */
    } kinds[] = {
        {"latency_", "Latency against size (median, band p25..p75)"},
        {"busbw_", "Bus bandwidth against size"},
        {"heatmap_", "Best-to-default ratio over size and process count"},
        {"box_", "Repetitions per point (box plots)"},
        {"phases_", "Per-phase breakdown of the generated schedules"},
        {"scaling_", "Scaling with the process count"},
        {"micro_", "Micro-benchmarks: time and bandwidth against the lane count k"},
    };
    char *pdir = cg_rep_strf("%s/plots", dir);
    if (pdir == NULL) {
        return -1;
    }
    DIR *dh = opendir(pdir);
    free(pdir);
    if (dh == NULL) {
        return 0;
    }
    char **names = NULL;
    size_t n = 0;
    size_t cap = 0;
    int rc = 0;
    struct dirent *e;
    while ((e = readdir(dh)) != NULL) {
        size_t len = strlen(e->d_name);
        if (len < 5 || strcmp(e->d_name + len - 4, ".png") != 0) {
            continue;
        }
        if (n == cap) {
            cap = (cap != 0) ? 2 * cap : 32;
            char **v = realloc(names, cap * sizeof *v);
            if (v == NULL) {
                rc = -1;
                break;
            }
            names = v;
        }
        names[n] = strdup(e->d_name);
        if (names[n] == NULL) {
            rc = -1;
            break;
        }
        n++;
    }
    closedir(dh);
    if (rc == 0 && n > 1) {
        qsort(names, n, sizeof *names, cmp_names);
    }
    for (size_t k = 0; rc == 0 && k < sizeof kinds / sizeof kinds[0]; k++) {
        int any = 0;
        for (size_t i = 0; i < n; i++) {
            if (strncmp(names[i], kinds[k].prefix, strlen(kinds[k].prefix)) != 0) {
                continue;
            }
            if (!any) {
                cg_rep_doc_add(d, CG_REP_HEADING, 3, kinds[k].title);
                any = 1;
            }
            char *rel = cg_rep_strf("plots/%s", names[i]);
            if (rel == NULL) {
                rc = -1;
                break;
            }
            cg_rep_doc_add(d, CG_REP_IMAGE, 0, rel);
            free(rel);
        }
    }
    for (size_t i = 0; i < n; i++) {
        free(names[i]);
    }
    free(names);
    return (rc != 0) ? -1 : (int)n;
}

static int parse_args(int argc, char **argv, struct report_opts *o)
{
    static const struct option longs[] = {
        { "out", required_argument, NULL, 'o' },
        { "no-plots", no_argument, NULL, 'P' },
        { "quiet", no_argument, NULL, 'q' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    int opt;
    memset(o, 0, sizeof *o);
    opterr = 0;
    optind = 1;
    while ((opt = getopt_long(argc, argv, ":qh", longs, NULL)) != -1) {
        switch (opt) {
        case 'o':
            o->out = optarg;
            break;
        case 'P':
            o->no_plots = 1;
            break;
        case 'q':
            o->quiet = 1;
            break;
        case 'h':
            fputs(report_usage, stdout);
            return 1;
        default:
            return cg_cli_bad_option("collgen report", opt, argv);
        }
    }
    if (optind == argc) {
        fprintf(stderr, "collgen report: error: which campaign directory? (collgen report --help)\n");
        return 2;
    }
    o->dirs = (const char *const *)(argv + optind);
    o->ndirs = (size_t)(argc - optind);
    if (o->ndirs > 1 && o->out == NULL) {
        fprintf(stderr, "collgen report: error: %zu campaign directories pool into one report: "
                        "say where it goes (--out OUT)\n", o->ndirs);
        return 2;
    }
    o->dir = (o->out != NULL) ? o->out : o->dirs[0];
    return 0;
}

int cg_report_main(int argc, char **argv)
{
    struct report_opts o;
    int rc = parse_args(argc, argv, &o);
    if (rc != 0) {
        return (rc == 1) ? 0 : 2;
    }

    /* Why a copy: "results/x/" would name files "results/x//table.txt". */
    char *dir = strdup(o.dir);
    if (dir == NULL) {
        fprintf(stderr, "collgen: report: out of memory\n");
        return 1;
    }
    for (size_t n = strlen(dir); n > 1 && dir[n - 1] == '/'; n--) {
        dir[n - 1] = '\0';
    }
    o.dir = dir;

    /* --out: a directory of its own, made if missing, never a source (whose
     * own report it would overwrite). Plots need the records where they go
     * (plots.py DIR), so only a campaign's own report has them. */
    const char *why_no_plots = NULL;
    if (o.out != NULL) {
        struct stat so, sd;
        if (mkdir(o.dir, 0777) != 0 && errno != EEXIST) {
            fprintf(stderr, "%s: error: cannot make the output directory: %s\n", o.dir,
                    strerror(errno));
            free(dir);
            return 2;
        }
        if (stat(o.dir, &so) != 0 || !S_ISDIR(so.st_mode)) {
            fprintf(stderr, "%s: error: not a directory (--out)\n", o.dir);
            free(dir);
            return 2;
        }
        for (size_t k = 0; k < o.ndirs; k++) {
            if (stat(o.dirs[k], &sd) == 0 && sd.st_dev == so.st_dev && sd.st_ino == so.st_ino) {
                fprintf(stderr, "%s: error: --out is the campaign directory %s: a report with "
                                "--out goes elsewhere\n", o.dir, o.dirs[k]);
                free(dir);
                return 2;
            }
        }
        why_no_plots = (o.ndirs > 1) ? "a pooled report has no plots; each campaign's own "
                                       "report has them"
                                     : "a report written elsewhere (--out) has no plots; the "
                                       "campaign's own report has them";
    }

    /* 1. Read and check everything before writing anything. */
    struct cg_rep_campaign c;
    rc = (o.ndirs > 1) ? cg_rep_load_pool(&c, o.dirs, o.ndirs, o.dir, stderr)
                       : cg_rep_load(&c, o.dirs[0], stderr);
    if (rc == 0 && o.out != NULL) {
        c.out = o.out; /* "How to reproduce" names it */
        if (o.ndirs == 1) {
            c.sources = o.dirs;
            c.nsources = 1;
        }
    }
    if (rc != 0) {
        if (rc == 1) {
            fprintf(stderr, "collgen: report: out of memory\n");
        }
        cg_rep_campaign_fini(&c);
        free(dir);
        return rc;
    }
    /* Why on stderr too: a record repeated (a campaign resumed while an
     * earlier job still ran, records concatenated by hand) is resolved, the
     * first record of each point wins, and that must not pass unnoticed. */
    size_t repeats = 0, first = 0;
    for (size_t i = 0; i < c.nrecs; i++) {
        if (c.recs[i].duplicate_of != 0 && repeats++ == 0) {
            first = i;
        }
    }
    if (repeats > 0) {
        fprintf(stderr,
                "collgen: report: warning: %s%s has %zu repeated record%s (point ids "
                "recorded more than once, first: line %d repeats line %d); the tables use the "
                "first record of each point and report.md lists the others\n",
                (o.ndirs > 1) ? "the pooled campaigns' " : o.dirs[0],
                (o.ndirs > 1) ? "points" : "/points.jsonl", repeats, repeats == 1 ? "" : "s",
                c.recs[first].line,
                c.recs[first].duplicate_of);
    }
    /* Which generated schedules are guideline mock-ups: their summaries,
     * from the schedule files the records name (report_guideline.h). */
    struct cg_rep_mockups mockups;
    if (cg_rep_mockups_find(&mockups, &c) != 0) {
        fprintf(stderr, "collgen: report: out of memory\n");
        cg_rep_mockups_fini(&mockups);
        cg_rep_campaign_fini(&c);
        free(dir);
        return 1;
    }

    struct output outs[] = {{"table.txt", NULL, NULL},
                            {"points.csv", NULL, NULL},
                            {"guidelines.txt", NULL, NULL},
                            {"profile.json", NULL, NULL},
                            {"report.md", NULL, NULL}};
    size_t nouts = sizeof outs / sizeof outs[0];
    struct cg_rep_doc text_doc;
    struct cg_rep_doc md_doc;
    struct cg_rep_doc gl_doc;
    cg_rep_doc_init(&text_doc);
    cg_rep_doc_init(&md_doc);
    cg_rep_doc_init(&gl_doc);
    char *table = NULL;
    char *csv = NULL;
    char *md = NULL;
    char *guidelines = NULL;
    char *profile = NULL;
    char *gl_title = NULL;
    size_t nviolations = 0;
    char why[512] = "";
    enum cg_rep_plots plots = CG_REP_PLOTS_NOT_ASKED;
    int nplots = 0;
    rc = 1;

    /* 2, 3. The tables and the CSV. */
    char *title = cg_rep_strf("collgen report: %s", cg_rep_campaign_id(&c));
    if (title == NULL) {
        goto oom;
    }
    cg_rep_doc_add(&text_doc, CG_REP_HEADING, 1, title);
    if (cg_rep_build_results(&text_doc, &c) != 0 || cg_rep_traces_section(&text_doc, &c) != 0 ||
        (table = cg_rep_render_text(&text_doc)) == NULL || (csv = cg_rep_csv(&c)) == NULL) {
        goto oom;
    }
    if (write_tmp(&outs[0], o.dir, table) != 0 || write_tmp(&outs[1], o.dir, csv) != 0) {
        goto out;
    }

    /* 6. The guideline report and the profile. */
    gl_title = cg_rep_strf("collgen guideline report: %s", cg_rep_campaign_id(&c));
    if (gl_title == NULL) {
        goto oom;
    }
    cg_rep_doc_add(&gl_doc, CG_REP_HEADING, 1, gl_title);
    if (cg_rep_build_guidelines(&gl_doc, &c, &mockups, &nviolations) != 0 ||
        (guidelines = cg_rep_render_text(&gl_doc)) == NULL ||
        (profile = cg_rep_profile_json(&c, &mockups)) == NULL) {
        goto oom;
    }
    if (write_tmp(&outs[2], o.dir, guidelines) != 0 || write_tmp(&outs[3], o.dir, profile) != 0) {
        goto out;
    }

    /* 4. The plots (plots.py replaces DIR/plots/ as a whole when it is done). */
    if (!o.no_plots && why_no_plots == NULL) {
        plots = cg_rep_make_plots(o.dir, NULL, why, sizeof why);
        if (plots != CG_REP_PLOTS_MADE) {
            fprintf(stderr, "collgen: report: plots not made: %s\n", why);
        }
    }

    /* 5. report.md: context, the same tables, the plots, how to reproduce. */
    cg_rep_doc_add(&md_doc, CG_REP_HEADING, 1, title);
    cg_rep_build_context(&md_doc, &c);
    cg_rep_doc_add(&md_doc, CG_REP_HEADING, 2, "Results");
    if (cg_rep_build_results(&md_doc, &c) != 0) {
        goto oom;
    }
    if (cg_rep_traces_section(&md_doc, &c) != 0) {
        goto oom;
    }
    cg_rep_doc_add(&md_doc, CG_REP_HEADING, 2, "Guideline report (guidelines.txt)");
    if (cg_rep_build_guidelines(&md_doc, &c, &mockups, NULL) != 0) {
        goto oom;
    }
    cg_rep_doc_add(&md_doc, CG_REP_HEADING, 2, "Plots");
    if (plots == CG_REP_PLOTS_MADE) {
        nplots = plots_section(&md_doc, o.dir);
        if (nplots < 0) {
            goto oom;
        }
        if (nplots == 0) {
            cg_rep_doc_add(&md_doc, CG_REP_PARA, 0, "plots.py found nothing to plot.");
        }
    } else if (plots == CG_REP_PLOTS_NOT_ASKED && why_no_plots != NULL) {
        char *msg = cg_rep_strf("Not made: %s.", why_no_plots);
        if (msg == NULL) {
            goto oom;
        }
        cg_rep_doc_add(&md_doc, CG_REP_PARA, 0, msg);
        free(msg);
    } else if (plots == CG_REP_PLOTS_NOT_ASKED) {
        cg_rep_doc_add(&md_doc, CG_REP_PARA, 0,
                       "Not made (collgen report --no-plots); rerun without it to make them.");
    } else {
        char *msg = cg_rep_strf("Not made: %s.", why);
        if (msg == NULL) {
            goto oom;
        }
        cg_rep_doc_add(&md_doc, CG_REP_PARA, 0, msg);
        free(msg);
    }
    cg_rep_build_reproduce(&md_doc, &c);
    if (md_doc.failed || (md = cg_rep_render_markdown(&md_doc)) == NULL) {
        goto oom;
    }
    if (write_tmp(&outs[4], o.dir, md) != 0) {
        goto out;
    }

    /* Everything is written: put it in place. */
    for (size_t i = 0; i < nouts; i++) {
        if (rename(outs[i].tmp, outs[i].path) != 0) {
            fprintf(stderr, "%s: error: cannot rename to %s: %s\n", outs[i].tmp, outs[i].path,
                    strerror(errno));
            goto out;
        }
        free(outs[i].tmp);
        outs[i].tmp = NULL;
    }
    if (!o.quiet) {
        fputs(table, stdout);
        printf("\ncollgen report: %zu guideline violation%s (%s/guidelines.txt)\n", nviolations,
               (nviolations == 1) ? "" : "s", o.dir);
        printf("collgen report: wrote %s/table.txt, %s/report.md, %s/points.csv, "
               "%s/guidelines.txt, %s/profile.json",
               o.dir, o.dir, o.dir, o.dir, o.dir);
        if (plots == CG_REP_PLOTS_MADE) {
            printf(" and %d plot%s in %s/plots/", nplots, (nplots == 1) ? "" : "s", o.dir);
        }
        printf("\n");
    }
    rc = (plots == CG_REP_PLOTS_FAILED) ? 1 : 0;
    goto out;

oom:
    fprintf(stderr, "collgen: report: out of memory\n");
    rc = 1;
out:
    discard(outs, nouts);
    free(title);
    free(table);
    free(csv);
    free(md);
    free(guidelines);
    free(profile);
    free(gl_title);
    cg_rep_doc_fini(&text_doc);
    cg_rep_doc_fini(&md_doc);
    cg_rep_doc_fini(&gl_doc);
    cg_rep_mockups_fini(&mockups);
    cg_rep_campaign_fini(&c);
    free(dir);
    if (fflush(stdout) != 0 && rc == 0) {
        rc = 1;
    }
    return rc;
}
