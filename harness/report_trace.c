/* report_trace.c - the timelines section of collgen report (report_trace.h).
 */
#include "report_trace.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report_util.h"

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The first record of point id (records repeat on resume; the first wins,
 * as in the tables), or NULL. */
static const struct cg_rep_record *record_of(const struct cg_rep_campaign *c, const char *id,
                                             size_t len)
{
    for (size_t i = 0; i < c->nrecs; i++) {
        const char *p = c->recs[i].point_id;
        if (p != NULL && strlen(p) == len && strncmp(p, id, len) == 0) {
            return &c->recs[i];
        }
    }
    return NULL;
}

/* the .json files in DIR/trace/, sorted; *n of them. NULL with *n 0 when the directory
 * is absent; -1 in *n out of memory. */
static char **trace_files(const char *dir, size_t *n)
{
    char *tdir = cg_rep_strf("%s/trace", dir);
    DIR *dh = (tdir != NULL) ? opendir(tdir) : NULL;
    char **names = NULL;
    size_t cap = 0;
    struct dirent *e;

    *n = 0;
    free(tdir);
    if (dh == NULL) {
        return NULL;
    }
    while ((e = readdir(dh)) != NULL) {
        size_t len = strlen(e->d_name);
        if (len < 6 || strcmp(e->d_name + len - 5, ".json") != 0) {
            continue; /* also leaves out a writer's .tmp */
        }
        if (*n == cap) {
            cap = (cap != 0) ? 2 * cap : 32;
            char **v = realloc(names, cap * sizeof *v);
            if (v == NULL) {
                goto oom;
            }
            names = v;
        }
        if ((names[*n] = strdup(e->d_name)) == NULL) {
            goto oom;
        }
        (*n)++;
    }
    closedir(dh);
    if (*n > 1) {
        qsort(names, *n, sizeof *names, cmp_names);
    }
    if (names == NULL) {
        names = malloc(sizeof *names); /* an empty directory: a section saying so */
        if (names == NULL) {
            *n = (size_t)-1;
        }
    }
    return names;
oom:
    closedir(dh);
    for (size_t i = 0; i < *n; i++) {
        free(names[i]);
    }
    free(names);
    *n = (size_t)-1;
    return NULL;
}

int cg_rep_traces_section(struct cg_rep_doc *d, const struct cg_rep_campaign *c)
{
    static const char *const heads[] = {"trace file", "collective", "library", "p",
                                        "implementation", "size"};
    size_t n;
    char **names = trace_files(c->dir, &n);
    int rc = 0;

    if (n == (size_t)-1) {
        return -1;
    }
    if (names == NULL) {
        return 0;
    }
    cg_rep_doc_add(d, CG_REP_HEADING, 2, "Timelines (trace/)");
    char *intro = cg_rep_strf(
        "%zu trace file%s (verbosity trace): per point, every rank's tag regions (call, phase, "
        "round, step) in the first timed repetitions, on the global clock. Open one in "
        "Perfetto: go to ui.perfetto.dev, choose \"Open trace file\" and pick the file (or "
        "drop it on the page); each rank is a track, the regions nest under \"repetition k\". "
        "chrome://tracing loads the same files.",
        n, (n == 1) ? "" : "s");
    if (intro == NULL) {
        rc = -1;
        goto out;
    }
    cg_rep_doc_add(d, CG_REP_PARA, 0, intro);
    free(intro);
    if (n == 0) {
        goto out;
    }
    struct cg_rep_table *t = cg_rep_table_new(6, heads, "lllrll");
    if (t == NULL) {
        rc = -1;
        goto out;
    }
    for (size_t i = 0; i < n && rc == 0; i++) {
        const struct cg_rep_record *r = record_of(c, names[i], strlen(names[i]) - 5);
        char *file = cg_rep_strf("trace/%s", names[i]);
        char p[16] = "-";
        char size[32] = "-";
        char *impl = NULL;
        if (r != NULL) {
            snprintf(p, sizeof p, "%d", r->ranks);
            cg_rep_fmt_size(size, sizeof size, r->size_B);
            impl = cg_rep_strf("%s:%s", r->kind != NULL ? r->kind : "?",
                               r->name != NULL ? r->name : "?");
        }
        const char *cells[6] = {file,
                                (r != NULL && r->collective != NULL) ? r->collective : "no record",
                                (r != NULL && r->library != NULL) ? r->library : "-",
                                p,
                                (impl != NULL) ? impl : "-",
                                size};
        if (file == NULL || (r != NULL && impl == NULL) || cg_rep_table_row(t, cells) != 0) {
            rc = -1;
        }
        free(file);
        free(impl);
    }
    cg_rep_doc_add_table(d, t);
out:
    for (size_t i = 0; i < n; i++) {
        free(names[i]);
    }
    free(names);
    return (rc != 0 || d->failed) ? -1 : 0;
}
