/* report_context.c - context and reproduction of a campaign for report.md
 * (report_context.h).
 *
 * Why generic: run-<n>.json grows as bench learns to record more (GPU, NIC,
 * scheduler ids); the report shows every scalar field it finds, each
 * distinct value once with the runs that had it, so a new field needs no
 * change here. Environment variables and rank placement, one entry per
 * variable or rank, stay in the run files.
 */
#include "report_context.h"

#include <stdlib.h>
#include <string.h>

#include "report_util.h"

/* One distinct value of one field, and the runs that had it. */
struct seen {
    char *field;   /* dotted path */
    char *value;   /* shown text */
    int *runs;     /* run ids, ascending as runs are */
    size_t nruns;  /* used */
    size_t cap;    /* allocated */
};

struct seen_list {
    struct seen *v; /* in first-seen order */
    size_t n;       /* used */
    size_t cap;     /* allocated */
};

static void seen_fini(struct seen_list *l)
{
    for (size_t i = 0; i < l->n; i++) {
        free(l->v[i].field);
        free(l->v[i].value);
        free(l->v[i].runs);
    }
    free(l->v);
}

/* Records that run `run` had value for field; takes neither string. */
static int seen_add(struct seen_list *l, const char *field, const char *value, int run)
{
    struct seen *s = NULL;
    for (size_t i = 0; i < l->n && s == NULL; i++) {
        if (strcmp(l->v[i].field, field) == 0 && strcmp(l->v[i].value, value) == 0) {
            s = &l->v[i];
        }
    }
    if (s == NULL) {
        if (l->n == l->cap) {
            size_t cap = (l->cap != 0) ? 2 * l->cap : 32;
            struct seen *v = realloc(l->v, cap * sizeof *v);
            if (v == NULL) {
                return -1;
            }
            l->v = v;
            l->cap = cap;
        }
        s = &l->v[l->n];
        memset(s, 0, sizeof *s);
        s->field = strdup(field);
        s->value = strdup(value);
        if (s->field == NULL || s->value == NULL) {
            free(s->field);
            free(s->value);
            return -1;
        }
        l->n++;
    }
    if (s->nruns == s->cap) {
        size_t cap = (s->cap != 0) ? 2 * s->cap : 8;
        int *r = realloc(s->runs, cap * sizeof *r);
        if (r == NULL) {
            return -1;
        }
        s->runs = r;
        s->cap = cap;
    }
    s->runs[s->nruns++] = run;
    return 0;
}

/* A value on one line: whitespace runs become one space; at most 120 bytes. */
static char *one_line(const char *s)
{
    struct cg_rep_buf b;
    cg_rep_buf_init(&b);
    int space = 0;
    for (; *s != '\0'; s++) {
        if (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r') {
            space = (b.len > 0);
            continue;
        }
        if (space) {
            cg_rep_buf_add(&b, " ");
            space = 0;
        }
        cg_rep_buf_addn(&b, s, 1);
    }
    if (b.len > 120 && !b.failed) {
        b.len = 117;
        b.s[b.len] = '\0';
        cg_rep_buf_add(&b, "...");
    }
    if (b.len == 0) {
        cg_rep_buf_add(&b, "\"\"");
    }
    return cg_rep_buf_take(&b);
}

/* Walks one run file, adding its scalar fields (and arrays of scalars). */
static int walk_run(struct seen_list *l, const cJSON *obj, const char *prefix, int run)
{
    /* clock, latency and loadavg differ in every launch: summed up apart
     * (timing_summary). */
    static const char *const skipped[] = {"schema_version", "run_id", "env",      "placement",
                                          "clock",          "latency", "loadavg", "test_skew",
                                          "launch",         NULL};
    const cJSON *it;
    cJSON_ArrayForEach(it, obj)
    {
        int skip = 0;
        for (int k = 0; prefix[0] == '\0' && skipped[k] != NULL; k++) {
            skip |= (strcmp(it->string, skipped[k]) == 0);
        }
        if (skip || cJSON_IsNull(it)) {
            continue;
        }
        char *path = (prefix[0] != '\0') ? cg_rep_strf("%s.%s", prefix, it->string)
                                         : cg_rep_strf("%s", it->string);
        if (path == NULL) {
            return -1;
        }
        int rc = 0;
        struct cg_rep_buf text;
        cg_rep_buf_init(&text);
        if (cJSON_IsObject(it)) {
            rc = walk_run(l, it, path, run);
        } else if (cJSON_IsArray(it)) {
            const cJSON *e;
            int scalars = 1;
            cJSON_ArrayForEach(e, it)
            {
                scalars &= !(cJSON_IsObject(e) || cJSON_IsArray(e));
            }
            cJSON_ArrayForEach(e, it)
            {
                if (!scalars) {
                    break;
                }
                char num[40];
                const char *s = cJSON_IsString(e) ? e->valuestring : num;
                if (cJSON_IsNumber(e)) {
                    cg_rep_fmt_number(num, sizeof num, e->valuedouble);
                } else if (!cJSON_IsString(e)) {
                    snprintf(num, sizeof num, "%s", cJSON_IsTrue(e) ? "true" : "false");
                }
                cg_rep_buf_printf(&text, "%s%s", (text.len > 0) ? ", " : "", s);
            }
        } else if (cJSON_IsString(it)) {
            cg_rep_buf_add(&text, it->valuestring);
        } else if (cJSON_IsNumber(it)) {
            char num[40];
            cg_rep_fmt_number(num, sizeof num, it->valuedouble);
            cg_rep_buf_add(&text, num);
        } else if (cJSON_IsBool(it)) {
            cg_rep_buf_add(&text, cJSON_IsTrue(it) ? "true" : "false");
        }
        if (rc == 0 && text.failed) {
            rc = -1;
        } else if (rc == 0 && text.s != NULL) {
            char *v = one_line(text.s);
            rc = (v == NULL) ? -1 : seen_add(l, path, v, run);
            free(v);
        }
        cg_rep_buf_fini(&text);
        free(path);
        if (rc != 0) {
            return rc;
        }
    }
    return 0;
}

/* "1-4, 7, 9-10". */
static char *ranges(const int *v, size_t n)
{
    struct cg_rep_buf b;
    cg_rep_buf_init(&b);
    size_t i = 0;
    while (i < n) {
        size_t j = i;
        while (j + 1 < n && v[j + 1] == v[j] + 1) {
            j++;
        }
        cg_rep_buf_printf(&b, (i > 0) ? ", %d" : "%d", v[i]);
        if (j > i) {
            cg_rep_buf_printf(&b, "-%d", v[j]);
        }
        i = j + 1;
    }
    return cg_rep_buf_take(&b);
}

/* The command line as a shell reads it: words with unusual characters quoted. */
static char *command_line(const struct cg_rep_campaign *c)
{
    static const char *const keys[] = {"command_line", "command", "argv", NULL};
    const cJSON *cmd = NULL;
    for (int k = 0; c->campaign != NULL && keys[k] != NULL && cmd == NULL; k++) {
        cmd = cJSON_GetObjectItemCaseSensitive(c->campaign, keys[k]);
    }
    if (cJSON_IsString(cmd)) {
        return strdup(cmd->valuestring);
    }
    if (!cJSON_IsArray(cmd) || cJSON_GetArraySize(cmd) == 0) {
        return NULL;
    }
    struct cg_rep_buf b;
    cg_rep_buf_init(&b);
    const cJSON *w;
    cJSON_ArrayForEach(w, cmd)
    {
        const char *s = cJSON_IsString(w) ? w->valuestring : "?";
        if (b.len > 0) {
            cg_rep_buf_add(&b, " ");
        }
        if (s[0] != '\0' && strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                      "0123456789_./:=,+-@%") == strlen(s)) {
            cg_rep_buf_add(&b, s);
            continue;
        }
        cg_rep_buf_add(&b, "'");
        for (; *s != '\0'; s++) {
            cg_rep_buf_add(&b, (*s == '\'') ? "'\\''" : (char[2]){*s, '\0'});
        }
        cg_rep_buf_add(&b, "'");
    }
    return cg_rep_buf_take(&b);
}

/* min and max of a number at `key.sub` over the runs; 0 when none has it. */
static int run_range(const struct cg_rep_campaign *c, const char *key, const char *sub, double *lo,
                     double *hi)
{
    int n = 0;
    for (size_t i = 0; i < c->nruns; i++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(c->runs[i].json, key), sub);
        if (cJSON_IsNumber(v)) {
            *lo = (n == 0 || v->valuedouble < *lo) ? v->valuedouble : *lo;
            *hi = (n == 0 || v->valuedouble > *hi) ? v->valuedouble : *hi;
            n++;
        }
    }
    return n;
}

/* One paragraph on what every launch measured before its points: the
 * global clock's check error, the latency floor and the load. */
static void timing_summary(struct cg_rep_doc *d, const struct cg_rep_campaign *c)
{
    double elo = 0, ehi = 0, flo = 0, fhi = 0, llo = 0, lhi = 0;
    int ne = run_range(c, "clock", "error_ns", &elo, &ehi);
    int nf = run_range(c, "latency", "floor_ns", &flo, &fhi);
    int nl = 0;
    for (size_t i = 0; i < c->nruns; i++) {
        const cJSON *la = cJSON_GetObjectItemCaseSensitive(c->runs[i].json, "loadavg");
        const cJSON *one = cJSON_IsArray(la) ? cJSON_GetArrayItem(la, 0) : NULL;
        if (cJSON_IsNumber(one)) {
            llo = (nl == 0 || one->valuedouble < llo) ? one->valuedouble : llo;
            lhi = (nl == 0 || one->valuedouble > lhi) ? one->valuedouble : lhi;
            nl++;
        }
    }
    if (ne + nf + nl == 0) {
        return;
    }
    char *text = cg_rep_strf(
        "Timing checks of the %zu launches: the global clock's check error %.3g to %.3g us "
        "(%d launches; rank 0's clock, HCA-style sync, FORMATS.md \"Run metadata\"); the "
        "one-way latency floor %.3g to %.3g us (%d launches); load average %.2f to %.2f when "
        "they began (%d launches).",
        c->nruns, elo / 1e3, ehi / 1e3, ne, flo / 1e3, fhi / 1e3, nf, llo, lhi, nl);
    if (text == NULL) {
        d->failed = 1;
        return;
    }
    cg_rep_doc_add(d, CG_REP_PARA, 0, text);
    free(text);
}

static const char *const context_heads[] = {"field", "value", "runs"};
static const char context_align[] = "lll";

/* A pooled report's sources: "Pooled from 2 campaigns of one descriptor
 * (20 launches a point): A (launches 1-10), B (11-20). ..." */
static void pooled_from(struct cg_rep_doc *d, const struct cg_rep_campaign *c)
{
    struct cg_rep_buf b;
    cg_rep_buf_init(&b);
    int total = 0;
    for (size_t k = 0; k < c->nsources; k++) {
        total += c->source_launches[k];
    }
    cg_rep_buf_printf(&b, "Pooled from %zu campaigns of one descriptor (%d launches a point): ",
                      c->nsources, total);
    int first = 1;
    for (size_t k = 0; k < c->nsources; k++) {
        int last = first + c->source_launches[k] - 1;
        cg_rep_buf_printf(&b, "%s`%s` (launch%s %d", (k > 0) ? ", " : "", c->sources[k],
                          (last > first) ? "es" : "", first);
        if (last > first) {
            cg_rep_buf_printf(&b, "-%d", last);
        }
        cg_rep_buf_printf(&b, ")");
        first = last + 1;
    }
    cg_rep_buf_printf(&b, ". Every point's launches are those of all of them, renumbered in this "
                          "order, so the launch-median test and the false discovery rate below "
                          "see them all; record lines count across the sources in order. The "
                          "context below is the first campaign's.");
    char *text = b.failed ? NULL : cg_rep_buf_take(&b);
    cg_rep_buf_fini(&b);
    if (text == NULL) {
        d->failed = 1;
        return;
    }
    cg_rep_doc_add(d, CG_REP_PARA, 0, text);
    free(text);
}

void cg_rep_build_context(struct cg_rep_doc *d, const struct cg_rep_campaign *c)
{
    cg_rep_doc_add(d, CG_REP_HEADING, 2, "Context");
    if (c->nsources > 1) {
        pooled_from(d, c);
    }
    if (c->campaign == NULL) {
        cg_rep_doc_add(d, CG_REP_PARA, 0, "campaign.json: absent.");
    } else {
        char *cmd = command_line(c);
        const cJSON *hash = cJSON_GetObjectItemCaseSensitive(c->campaign, "test_hash");
        char *text = cg_rep_strf("Campaign %s, run with `%s`%s%s%s.", cg_rep_campaign_id(c),
                                 (cmd != NULL) ? cmd : "(campaign.json has no command_line)",
                                 cJSON_IsString(hash) ? " (test descriptor hash " : "",
                                 cJSON_IsString(hash) ? hash->valuestring : "",
                                 cJSON_IsString(hash) ? ")" : "");
        free(cmd);
        if (text == NULL) {
            d->failed = 1;
            return;
        }
        cg_rep_doc_add(d, CG_REP_PARA, 0, text);
        free(text);
    }
    if (c->nruns == 0) {
        cg_rep_doc_add(d, CG_REP_PARA, 0,
                       "No run-<n>.json files: library versions, hosts and CPU are unknown.");
        return;
    }
    struct seen_list l = {NULL, 0, 0};
    int rc = 0;
    for (size_t i = 0; i < c->nruns && rc == 0; i++) {
        rc = walk_run(&l, c->runs[i].json, "", c->runs[i].id);
    }
    struct cg_rep_table *t = (rc == 0) ? cg_rep_table_new(3, context_heads, context_align) : NULL;
    /* Fields in the order they first appear; each field's values together. */
    for (size_t i = 0; t != NULL && rc == 0 && i < l.n; i++) {
        int first = 1;
        for (size_t j = 0; j < i && first; j++) {
            first = (strcmp(l.v[j].field, l.v[i].field) != 0);
        }
        for (size_t k = i; first && rc == 0 && k < l.n; k++) {
            if (strcmp(l.v[k].field, l.v[i].field) != 0) {
                continue;
            }
            char *runs = ranges(l.v[k].runs, l.v[k].nruns);
            const char *row[] = {l.v[k].field, l.v[k].value, (runs != NULL) ? runs : "?"};
            if (runs == NULL || cg_rep_table_row(t, row) != 0) {
                rc = -1;
            }
            free(runs);
        }
    }
    seen_fini(&l);
    if (rc != 0 || t == NULL) {
        cg_rep_table_free(t);
        d->failed = 1;
        return;
    }
    char *text = cg_rep_strf("From the %zu run-<n>.json file%s (one per launch; environment "
                             "variables and rank placement are in the files):",
                             c->nruns, (c->nruns == 1) ? "" : "s");
    if (text == NULL) {
        cg_rep_table_free(t);
        d->failed = 1;
        return;
    }
    cg_rep_doc_add(d, CG_REP_PARA, 0, text);
    free(text);
    cg_rep_doc_add_table(d, t);
    timing_summary(d, c);
}

void cg_rep_build_reproduce(struct cg_rep_doc *d, const struct cg_rep_campaign *c)
{
    cg_rep_doc_add(d, CG_REP_HEADING, 2, "How to reproduce");
    char *cmd = command_line(c);
    if (cmd != NULL) {
        cg_rep_doc_add(d, CG_REP_PARA, 0,
                       (c->nsources > 1)
                           ? "The first campaign was run from the repository root with (its "
                             "campaign.json; the others the same way, each with its own --out):"
                           : "The campaign was run from the repository root with (campaign.json):");
        cg_rep_doc_add(d, CG_REP_CODE, 0, cmd);
        free(cmd);
    } else {
        cg_rep_doc_add(d, CG_REP_PARA, 0,
                       "campaign.json does not say how the campaign was run (no command_line).");
    }
    char *again = NULL;
    if (c->sources != NULL) {
        struct cg_rep_buf b;
        cg_rep_buf_init(&b);
        cg_rep_buf_printf(&b, "build/collgen report");
        for (size_t k = 0; k < c->nsources; k++) {
            cg_rep_buf_printf(&b, " %s", c->sources[k]);
        }
        cg_rep_buf_printf(&b, " --out %s", (c->out != NULL) ? c->out : c->dir);
        again = b.failed ? NULL : cg_rep_buf_take(&b);
        cg_rep_buf_fini(&b);
    } else {
        again = cg_rep_strf("build/collgen report %s", c->dir);
    }
    if (again == NULL) {
        d->failed = 1;
        return;
    }
    cg_rep_doc_add(d, CG_REP_PARA, 0,
                   "This report, its CSV and its plots are made from the records alone; to "
                   "remake them:");
    cg_rep_doc_add(d, CG_REP_CODE, 0, again);
    free(again);
}
