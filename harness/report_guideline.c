/* report_guideline.c - the guideline report and the profile of collgen
 * report (report_guideline.h; harness/REPORT.md, "Guideline report" and
 * "Profile"; the profile's format is in harness/FORMATS.md).
 *
 * A worked case, from tests/report/guideline (allreduce, Open MPI, p = 4,
 * 1 MiB; medians in us): native default 800, mock-up
 * allreduce_reduce_bcast ("Allreduce <= Reduce + Bcast") 500, forced native
 * ring 450. The mock-up's ratio is 500/800 = 0.625 <= 0.9 and the U test
 * of its 25 repetitions against the default's 25 gives p = 2.1e-08 < 0.05:
 * a violation. Against the best forced native, 500/450 = 1.111
 * (information only). The profile uses native:ring there (450 < 800,
 * significant); at 64 KiB, where the mock-up's median is 0.75 of the
 * default's but each has 3 noisy repetitions (p = 0.66), it keeps
 * native:default.
 */
#include "report_guideline.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "report_stats.h"
#include "report_util.h"
#include "util.h" /* cg_slurp, cg_fnv1a64 */

/* A mock-up at most this fraction of the default's median (and
 * significantly different) violates its guideline: "at least 10% faster". */
#define GUIDELINE_MARGIN 0.9

static const char mockup_prefix[] = "Mock-up: ";

/* ---- which generated schedules are mock-ups ------------------------------ */

/* The repository of this binary (build/collgen -> .), malloc'd; NULL when
 * unknown or out of memory. */
static char *exe_root(void)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) {
        return NULL;
    }
    exe[n] = '\0';
    for (int up = 0; up < 2; up++) {
        char *slash = strrchr(exe, '/');
        if (slash == NULL) {
            return NULL;
        }
        *slash = '\0';
    }
    return strdup((exe[0] != '\0') ? exe : "/");
}

static struct cg_rep_sched *sched_of(const struct cg_rep_mockups *m, const char *name)
{
    for (size_t i = 0; i < m->n; i++) {
        if (strcmp(m->v[i].name, name) == 0) {
            return &m->v[i];
        }
    }
    return NULL;
}

/* "Mock-up: Allgather <= Gather + Bcast. The library's ..." -> "Allgather <=
 * Gather + Bcast": the text after the prefix up to its first ". " (or its
 * end, without a final '.'). NULL when not a mock-up; sets *oom. */
static char *guideline_from(const char *summary, int *oom)
{
    size_t np = strlen(mockup_prefix);
    if (strncmp(summary, mockup_prefix, np) != 0) {
        return NULL;
    }
    const char *g = summary + np;
    const char *end = strstr(g, ". ");
    size_t len = (end != NULL) ? (size_t)(end - g) : strlen(g);
    while (len > 0 && (g[len - 1] == '.' || g[len - 1] == ' ')) {
        len--;
    }
    char *s = strndup(g, len);
    *oom = (s == NULL);
    return s;
}

/* Finds and reads the schedule file of s (report_guideline.h says where it
 * looks). 0, or 1 out of memory. */
static int resolve(struct cg_rep_sched *s, const char *campaign_cwd, const char *root)
{
    const char *bases[3] = {campaign_cwd, root, "."};
    char *first = NULL;      /* first file found */
    char *first_text = NULL; /* its bytes */
    char first_hash[17] = "";
    struct cg_rep_buf tried;
    cg_rep_buf_init(&tried);
    int verified = 0;
    char *seen_paths[3]; /* copies of the paths tried so far */
    int nseen = 0;
    for (int k = 0; k < 3 && !verified; k++) {
        char *path;
        if (s->file[0] == '/') {
            if (k > 0) {
                break;
            }
            path = strdup(s->file);
        } else {
            if (bases[k] == NULL || bases[k][0] == '\0') {
                continue;
            }
            path = (strcmp(bases[k], ".") == 0) ? strdup(s->file)
                                                 : cg_rep_strf("%s/%s", bases[k], s->file);
        }
        if (path == NULL) {
            goto oom;
        }
        /* The same place twice (cwd is the repository): once is enough. */
        int seen = 0;
        for (int q = 0; q < nseen; q++) {
            seen |= strcmp(seen_paths[q], path) == 0;
        }
        if (seen) {
            free(path);
            continue;
        }
        seen_paths[nseen] = strdup(path);
        if (seen_paths[nseen] == NULL) {
            free(path);
            goto oom;
        }
        nseen++;
        size_t len = 0;
        char *text = cg_slurp(path, &len);
        if (text == NULL) {
            if (errno == ENOMEM) {
                free(path);
                goto oom;
            }
            cg_rep_buf_printf(&tried, "%s%s", (tried.len > 0) ? ", " : "", path);
            free(path);
            continue;
        }
        char h[17];
        snprintf(h, sizeof h, "%016llx", (unsigned long long)cg_fnv1a64(text, len));
        if (s->hash_then != NULL && strcasecmp(h, s->hash_then) == 0) {
            free(first);
            free(first_text);
            first = path;
            first_text = text;
            memcpy(first_hash, h, sizeof h);
            verified = 1;
        } else if (first == NULL) {
            first = path;
            first_text = text;
            memcpy(first_hash, h, sizeof h);
        } else {
            free(path);
            free(text);
        }
    }
    for (int q = 0; q < nseen; q++) {
        free(seen_paths[q]);
    }
    nseen = 0;
    if (tried.failed) {
        goto oom;
    }
    if (first == NULL) {
        s->source = CG_REP_SCHED_NOT_FOUND;
        s->tried = cg_rep_buf_take(&tried);
        if (s->tried == NULL) {
            s->tried = strdup("nowhere");
        }
        return (s->tried == NULL) ? 1 : 0;
    }
    cg_rep_buf_fini(&tried);
    s->path = first;
    memcpy(s->hash_now, first_hash, sizeof first_hash);
    s->source = verified ? CG_REP_SCHED_VERIFIED
                         : (s->hash_then == NULL) ? CG_REP_SCHED_UNHASHED : CG_REP_SCHED_CHANGED;
    cJSON *j = cJSON_Parse(first_text);
    free(first_text);
    const cJSON *sum = cJSON_GetObjectItemCaseSensitive(j, "summary");
    if (!cJSON_IsString(sum)) {
        cJSON_Delete(j);
        s->source = CG_REP_SCHED_UNREADABLE;
        return 0;
    }
    s->summary = strdup(sum->valuestring);
    cJSON_Delete(j);
    if (s->summary == NULL) {
        return 1;
    }
    int oom = 0;
    s->guideline = guideline_from(s->summary, &oom);
    return oom;
oom:
    for (int q = 0; q < nseen; q++) {
        free(seen_paths[q]);
    }
    free(first);
    free(first_text);
    cg_rep_buf_fini(&tried);
    return 1;
}

static int cmp_sched(const void *a, const void *b)
{
    return strcmp(((const struct cg_rep_sched *)a)->name, ((const struct cg_rep_sched *)b)->name);
}

int cg_rep_mockups_find(struct cg_rep_mockups *m, const struct cg_rep_campaign *c)
{
    m->v = NULL;
    m->n = 0;
    size_t cap = 0;
    for (size_t i = 0; i < c->nrecs; i++) {
        const struct cg_rep_record *r = &c->recs[i];
        if (strcmp(r->kind, "generated") != 0) {
            continue;
        }
        struct cg_rep_sched *s = sched_of(m, r->name);
        if (s == NULL) {
            if (m->n == cap) {
                size_t ncap = (cap != 0) ? 2 * cap : 16;
                struct cg_rep_sched *v = realloc(m->v, ncap * sizeof *v);
                if (v == NULL) {
                    return 1;
                }
                m->v = v;
                cap = ncap;
            }
            s = &m->v[m->n++];
            memset(s, 0, sizeof *s);
            s->name = r->name;
            s->collective = r->collective;
        }
        /* Runner-written records (error, timeout) carry neither: take them
         * from any record of the schedule that has them. */
        const cJSON *f = cJSON_GetObjectItemCaseSensitive(r->json, "schedule_file");
        const cJSON *h = cJSON_GetObjectItemCaseSensitive(r->json, "schedule_hash");
        if (s->file == NULL && cJSON_IsString(f) && f->valuestring[0] != '\0') {
            s->file = strdup(f->valuestring);
            if (s->file == NULL) {
                return 1;
            }
        }
        if (s->hash_then == NULL && cJSON_IsString(h) && h->valuestring[0] != '\0') {
            s->hash_then = h->valuestring;
        }
    }
    const cJSON *cwd = (c->campaign != NULL)
                           ? cJSON_GetObjectItemCaseSensitive(c->campaign, "cwd")
                           : NULL;
    const char *campaign_cwd = cJSON_IsString(cwd) ? cwd->valuestring : NULL;
    char *root = exe_root();
    int rc = 0;
    for (size_t i = 0; i < m->n && rc == 0; i++) {
        struct cg_rep_sched *s = &m->v[i];
        if (s->file == NULL) {
            /* schedules/<collective>/<name less "<collective>_">.json, a
             * sweep's "(radix=4)" left out */
            size_t n = strlen(s->collective);
            const char *rest = (strncmp(s->name, s->collective, n) == 0 && s->name[n] == '_')
                                   ? s->name + n + 1
                                   : s->name;
            s->file = cg_rep_strf("schedules/%s/%.*s.json", s->collective,
                                  (int)strcspn(rest, "("), rest);
            if (s->file == NULL) {
                rc = 1;
                break;
            }
        }
        rc = resolve(s, campaign_cwd, root);
    }
    free(root);
    if (rc == 0 && m->n > 1) {
        qsort(m->v, m->n, sizeof *m->v, cmp_sched);
    }
    return rc;
}

void cg_rep_mockups_fini(struct cg_rep_mockups *m)
{
    for (size_t i = 0; i < m->n; i++) {
        free(m->v[i].file);
        free(m->v[i].path);
        free(m->v[i].tried);
        free(m->v[i].summary);
        free(m->v[i].guideline);
    }
    free(m->v);
    m->v = NULL;
    m->n = 0;
}

const char *cg_rep_guideline_of(const struct cg_rep_mockups *m, const struct cg_rep_record *r)
{
    if (strcmp(r->kind, "generated") != 0) {
        return NULL;
    }
    const struct cg_rep_sched *s = sched_of(m, r->name);
    return (s != NULL) ? s->guideline : NULL;
}

/* ---- helpers ------------------------------------------------------------- */

static int is_default(const struct cg_rep_record *r)
{
    return strcmp(r->kind, "native") == 0 && strcmp(r->name, "default") == 0;
}

/* The records the comparisons and the profile use: ok, first of their
 * point_id, not a bound (a bound is a yardstick, not an implementation),
 * not a micro-benchmark (a pattern, not an implementation of the
 * collective). */
static int usable(const struct cg_rep_record *r)
{
    return cg_rep_is_shown(r) && strcmp(r->kind, "bound") != 0 && r->micro == NULL;
}

/* By group, size, natives first, name, line. */
static int cmp_rec(const void *pa, const void *pb)
{
    const struct cg_rep_record *a = *(const struct cg_rep_record *const *)pa;
    const struct cg_rep_record *b = *(const struct cg_rep_record *const *)pb;
    int s = cg_rep_cmp_group(a, b);
    if (s != 0) {
        return s;
    }
    if (a->size_B != b->size_B) {
        return (a->size_B > b->size_B) - (a->size_B < b->size_B);
    }
    int an = strcmp(a->kind, "native") == 0;
    int bn = strcmp(b->kind, "native") == 0;
    if (an != bn) {
        return bn - an;
    }
    if ((s = strcmp(a->name, b->name)) != 0) {
        return s;
    }
    return (a->line > b->line) - (a->line < b->line);
}

/* The usable records, sorted; NULL out of memory (*n = 0 is fine). */
static const struct cg_rep_record **sorted_usable(const struct cg_rep_campaign *c, size_t *n)
{
    const struct cg_rep_record **v = malloc((c->nrecs + 1) * sizeof *v);
    *n = 0;
    if (v == NULL) {
        return NULL;
    }
    for (size_t i = 0; i < c->nrecs; i++) {
        if (usable(&c->recs[i])) {
            v[(*n)++] = &c->recs[i];
        }
    }
    qsort(v, *n, sizeof *v, cmp_rec);
    return v;
}

/* The report's test of a against b (report_launch.c: launch medians with
 * several launches a side, else the raw repetitions): the p-value, NAN
 * when a raw file is missing; -1 out of memory. */
static int u_test(const struct cg_rep_record *a, const struct cg_rep_record *b, double *p)
{
    return cg_rep_test(a, b, p, NULL);
}

static const char *mark(double p)
{
    return isnan(p) ? "?" : (p < CG_REP_ALPHA) ? "" : "~";
}

static void fmt_ratio(char *out, size_t n, double num, double den, double p)
{
    if (den <= 0.0) {
        snprintf(out, n, "-");
    } else {
        snprintf(out, n, "%.3f%s", num / den, mark(p));
    }
}

/* "double sum", "double sum / root 1 / in place", "" for barrier; with the
 * node shape when the campaign has several ("double sum / CG_PPN=2: 2
 * nodes x 2"). */
static void variant(char *out, size_t n, const struct cg_rep_record *r)
{
    int op = cg_rep_takes_op(r->collective) && r->op[0] != '\0';
    const char *dt = (strcmp(r->collective, "barrier") == 0) ? "" : r->datatype;
    char root[32] = "";
    if (r->root != 0) {
        snprintf(root, sizeof root, "%sroot %d", (dt[0] != '\0') ? " / " : "", r->root);
    }
    char shape[64] = "";
    if (r->shape_shown) {
        cg_rep_shape_label(shape, sizeof shape, r);
    }
    int before = dt[0] != '\0' || root[0] != '\0';
    snprintf(out, n, "%s%s%s%s%s%s%s", dt, op ? " " : "", op ? r->op : "", root,
             r->in_place ? (before ? " / in place" : "in place") : "",
             (shape[0] != '\0' && (before || r->in_place)) ? " / " : "", shape);
}

/* "native:ring", "generated:allreduce_ring". */
static void impl_name(char *out, size_t n, const struct cg_rep_record *r)
{
    snprintf(out, n, "%s:%s", r->kind, r->name);
}

/* ---- the comparisons ------------------------------------------------------ */

enum verdict {
    V_VIOLATION,       /* <= 0.9 of the default's median, significant */
    V_HOLDS,           /* not at least 10% faster */
    V_NOT_SIGNIFICANT, /* at least 10% faster, but not significantly */
    V_UNTESTED,        /* at least 10% faster, a raw file missing */
    V_NO_DEFAULT,      /* no native default at this point */
    V_BELOW_FLOOR      /* the mock-up's or the default's median is below the job's one-way
                        * latency floor: a timing artefact, never a violation */
};

static const char *const verdict_words[] = {"VIOLATION", "holds", "not significant",
                                            "untested (raw missing)", "no native default",
                                            "below latency floor"};

/* One mock-up at one point. */
struct cmp {
    const struct cg_rep_record *mock;   /* the mock-up's record */
    const char *guideline;              /* its guideline */
    const struct cg_rep_record *def;    /* the native default, or NULL */
    const struct cg_rep_record *forced; /* the fastest forced native, or NULL */
    double p_def;                       /* U test against the default, NAN untested */
    double p_forced;                    /* against the forced one, NAN untested */
    enum verdict verdict;               /* what it says about the guideline */
};

/* Every mock-up at every point, in group and size order; -1 out of memory. */
static int comparisons(const struct cg_rep_campaign *c, const struct cg_rep_mockups *m,
                       struct cmp **out, size_t *nout)
{
    *out = NULL;
    *nout = 0;
    size_t n = 0;
    const struct cg_rep_record **v = sorted_usable(c, &n);
    if (v == NULL) {
        return -1;
    }
    struct cmp *cv = malloc((n + 1) * sizeof *cv);
    if (cv == NULL) {
        free(v);
        return -1;
    }
    size_t k = 0;
    size_t i = 0;
    while (i < n) {
        size_t j = i + 1;
        while (j < n && cg_rep_cmp_group(v[j], v[i]) == 0 && v[j]->size_B == v[i]->size_B) {
            j++;
        }
        const struct cg_rep_record *def = NULL;
        const struct cg_rep_record *forced = NULL;
        for (size_t q = i; q < j; q++) {
            if (is_default(v[q])) {
                def = cg_rep_faster(v[q], def) ? v[q] : def;
            } else if (strcmp(v[q]->kind, "native") == 0) {
                forced = cg_rep_faster(v[q], forced) ? v[q] : forced;
            }
        }
        for (size_t q = i; q < j; q++) {
            const char *g = cg_rep_guideline_of(m, v[q]);
            if (g == NULL) {
                continue;
            }
            struct cmp *x = &cv[k++];
            x->mock = v[q];
            x->guideline = g;
            x->def = def;
            x->forced = forced;
            x->p_def = NAN;
            x->p_forced = NAN;
            if ((def != NULL && u_test(v[q], def, &x->p_def) != 0) ||
                (forced != NULL && u_test(v[q], forced, &x->p_forced) != 0)) {
                free(v);
                free(cv);
                return -1;
            }
            if (def == NULL) {
                x->verdict = V_NO_DEFAULT;
            } else if (v[q]->below_floor || def->below_floor) {
                x->verdict = V_BELOW_FLOOR;
            } else if (!(v[q]->median_ns <= GUIDELINE_MARGIN * def->median_ns)) {
                x->verdict = V_HOLDS;
            } else if (isnan(x->p_def)) {
                x->verdict = V_UNTESTED;
            } else {
                x->verdict = (x->p_def < CG_REP_ALPHA) ? V_VIOLATION : V_NOT_SIGNIFICANT;
            }
        }
        i = j;
    }
    free(v);
    *out = cv;
    *nout = k;
    return 0;
}

/* ---- the profile ----------------------------------------------------------- */

/* What to use at one measured size of one group. */
struct pick {
    double size_B;                     /* the size */
    const struct cg_rep_record *use;   /* the choice */
    const struct cg_rep_record *def;   /* the native default, or NULL */
    const struct cg_rep_record *other; /* the fastest other implementation, or NULL */
    double p;                          /* U test of other against def, NAN untested */
};

/* One group: collective, library, process count, datatype, op, root, in place. */
struct pgroup {
    const struct cg_rep_record *first; /* a record of the group (its fields) */
    struct pick *picks;                /* by size; points into one shared array */
    size_t n;                          /* how many */
};

struct profile {
    struct pgroup *groups; /* in group order */
    size_t ngroups;        /* how many */
    struct pick *picks;    /* every pick (owned) */
};

static void profile_fini(struct profile *p)
{
    free(p->groups);
    free(p->picks);
    memset(p, 0, sizeof *p);
}

/* The choice at each measured size: the fastest implementation other than
 * the default when its median is lower and the U test says the two differ
 * (p < alpha); else the default; with no default, the fastest. 0, or -1
 * out of memory. */
static int build_profile(struct profile *pr, const struct cg_rep_campaign *c)
{
    memset(pr, 0, sizeof *pr);
    size_t n = 0;
    const struct cg_rep_record **v = sorted_usable(c, &n);
    if (v == NULL) {
        return -1;
    }
    pr->picks = malloc((n + 1) * sizeof *pr->picks);
    pr->groups = malloc((n + 1) * sizeof *pr->groups);
    if (pr->picks == NULL || pr->groups == NULL) {
        free(v);
        profile_fini(pr);
        return -1;
    }
    size_t np = 0;
    size_t i = 0;
    while (i < n) {
        size_t j = i + 1;
        while (j < n && cg_rep_cmp_group(v[j], v[i]) == 0 && v[j]->size_B == v[i]->size_B) {
            j++;
        }
        struct pick *pk = &pr->picks[np];
        memset(pk, 0, sizeof *pk);
        pk->size_B = v[i]->size_B;
        pk->p = NAN;
        for (size_t q = i; q < j; q++) {
            if (is_default(v[q])) {
                pk->def = cg_rep_faster(v[q], pk->def) ? v[q] : pk->def;
            } else if (!v[q]->below_floor) {
                /* Below the latency floor: a timing artefact, never a choice. */
                pk->other = cg_rep_faster(v[q], pk->other) ? v[q] : pk->other;
            }
        }
        if (pk->def != NULL && pk->def->below_floor) {
            /* Nothing measured here can be compared with it: the
             * library's own choice stays. */
            pk->other = NULL;
        }
        if (pk->def != NULL && pk->other != NULL && u_test(pk->other, pk->def, &pk->p) != 0) {
            free(v);
            profile_fini(pr);
            return -1;
        }
        if (pk->def == NULL) {
            pk->use = pk->other;
        } else if (pk->other != NULL && pk->other->median_ns < pk->def->median_ns &&
                   !isnan(pk->p) && pk->p < CG_REP_ALPHA) {
            pk->use = pk->other;
        } else {
            pk->use = pk->def;
        }
        if (pk->use == NULL) {
            /* No default and every other record below the latency floor:
             * nothing measured here can be chosen, so the size has no pick
             * (the ranges around it span it). */
            i = j;
            continue;
        }
        if (pr->ngroups == 0 ||
            cg_rep_cmp_group(pr->groups[pr->ngroups - 1].first, v[i]) != 0) {
            struct pgroup *g = &pr->groups[pr->ngroups++];
            g->first = v[i];
            g->picks = pk;
            g->n = 0;
        }
        pr->groups[pr->ngroups - 1].n++;
        np++;
        i = j;
    }
    free(v);
    return 0;
}

/* Whether two picks use the same implementation (kind and name). */
static int same_use(const struct pick *a, const struct pick *b)
{
    return strcmp(a->use->kind, b->use->kind) == 0 && strcmp(a->use->name, b->use->name) == 0;
}

/* Range [i, j) of group g: its bounds; *open when it has no upper bound. */
static void range_bounds(const struct pgroup *g, size_t i, size_t j, double *lo, double *hi,
                         int *open)
{
    *lo = (i == 0) ? 0.0 : cg_rep_size_boundary(g->picks[i - 1].size_B, g->picks[i].size_B) + 1.0;
    *open = (j == g->n);
    *hi = *open ? 0.0 : cg_rep_size_boundary(g->picks[j - 1].size_B, g->picks[j].size_B);
}

/* The end of the range that starts at i: adjacent picks with the same use. */
static size_t range_end(const struct pgroup *g, size_t i)
{
    size_t j = i + 1;
    while (j < g->n && same_use(&g->picks[j], &g->picks[i])) {
        j++;
    }
    return j;
}

/* ---- profile.json ------------------------------------------------------------ */

static void js_str(struct cg_rep_buf *b, const char *s)
{
    if (s == NULL) {
        cg_rep_buf_add(b, "null");
        return;
    }
    cg_rep_buf_add(b, "\"");
    for (; *s != '\0'; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\') {
            cg_rep_buf_printf(b, "\\%c", ch);
        } else if (ch == '\n') {
            cg_rep_buf_add(b, "\\n");
        } else if (ch == '\t') {
            cg_rep_buf_add(b, "\\t");
        } else if (ch < 0x20) {
            cg_rep_buf_printf(b, "\\u%04x", ch);
        } else {
            cg_rep_buf_addn(b, s, 1);
        }
    }
    cg_rep_buf_add(b, "\"");
}

static void js_num(struct cg_rep_buf *b, double v)
{
    if (!isfinite(v)) {
        cg_rep_buf_add(b, "null");
        return;
    }
    char num[64];
    cg_rep_fmt_number(num, sizeof num, v);
    cg_rep_buf_add(b, num);
}

/* A p-value with three significant digits (what the tables show, and more). */
static void js_p(struct cg_rep_buf *b, double p)
{
    if (isnan(p)) {
        cg_rep_buf_add(b, "null");
    } else {
        cg_rep_buf_printf(b, "%.3g", p);
    }
}

char *cg_rep_profile_json(const struct cg_rep_campaign *c, const struct cg_rep_mockups *m)
{
    struct profile pr;
    if (build_profile(&pr, c) != 0) {
        return NULL;
    }
    struct cg_rep_buf b;
    cg_rep_buf_init(&b);
    char alpha[32];
    cg_rep_fmt_number(alpha, sizeof alpha, CG_REP_ALPHA);
    cg_rep_buf_add(&b, "{\n  \"schema_version\": 1,\n  \"campaign\": ");
    js_str(&b, cg_rep_campaign_id(c));
    cg_rep_buf_printf(&b, ",\n  \"written_by\": \"collgen report\",\n  \"alpha\": %s,\n", alpha);
    cg_rep_buf_add(&b,
                   "  \"sizes\": \"lo_B and hi_B are size_B of the records (nccl-tests: allreduce, "
                   "bcast, reduce, scan, exscan count x size; allgather, reduce_scatter_block, "
                   "gather, scatter, alltoall count x size x ranks), inclusive\",\n"
                   "  \"bounds\": \"between measured sizes a < b the boundary is floor(sqrt(a b)), "
                   "the midpoint in log space: a range ends there and the next starts one byte "
                   "later; the first range starts at 0, the last has hi_B null (no upper bound); "
                   "only the sizes in measured were measured\",\n"
                   "  \"choice\": \"at each measured size the fastest implementation by median "
                   "(forced native algorithms and generated schedules, mock-ups included) "
                   "other than native:default, if its median is lower and the two-sided "
                   "Mann-Whitney U test on their raw repetitions gives p < alpha; else "
                   "native:default (the fastest, when no default was measured); adjacent sizes "
                   "with the same choice are one range\",\n"
                   "  \"profiles\": [");
    for (size_t gi = 0; gi < pr.ngroups; gi++) {
        const struct pgroup *g = &pr.groups[gi];
        const struct cg_rep_record *f = g->first;
        int barrier = strcmp(f->collective, "barrier") == 0;
        cg_rep_buf_add(&b, (gi == 0) ? "\n    {" : ",\n    {");
        cg_rep_buf_add(&b, "\"library\": ");
        js_str(&b, f->library);
        cg_rep_buf_add(&b, ", \"collective\": ");
        js_str(&b, f->collective);
        cg_rep_buf_printf(&b, ", \"ranks\": %d, \"datatype\": ", f->ranks);
        js_str(&b, barrier ? NULL : f->datatype);
        cg_rep_buf_add(&b, ", \"op\": ");
        js_str(&b, (cg_rep_takes_op(f->collective) && f->op[0] != '\0') ? f->op : NULL);
        cg_rep_buf_printf(&b, ", \"root\": %d, \"in_place\": %s", f->root,
                          f->in_place ? "true" : "false");
        if (f->shape_shown) {
            /* Several node shapes in the campaign: the shape is part of the key. */
            cg_rep_buf_printf(&b, ", \"node_shape\": \"%s\", \"ranks_per_node\": ",
                              f->virtual_shape ? "virtual (CG_PPN)" : "real");
            if (f->ranks_per_node > 0) {
                cg_rep_buf_printf(&b, "%d", f->ranks_per_node);
            } else {
                cg_rep_buf_add(&b, "null");
            }
            cg_rep_buf_printf(&b, ", \"regular\": %s", f->irregular ? "false" : "true");
        }
        cg_rep_buf_add(&b, ",\n     \"ranges\": [");
        size_t i = 0;
        int firstr = 1;
        while (i < g->n) {
            size_t j = range_end(g, i);
            double lo, hi;
            int open;
            range_bounds(g, i, j, &lo, &hi, &open);
            char use[256];
            impl_name(use, sizeof use, g->picks[i].use);
            cg_rep_buf_add(&b, firstr ? "\n       {" : ",\n       {");
            firstr = 0;
            cg_rep_buf_add(&b, "\"lo_B\": ");
            js_num(&b, lo);
            cg_rep_buf_add(&b, ", \"hi_B\": ");
            if (open) {
                cg_rep_buf_add(&b, "null");
            } else {
                js_num(&b, hi);
            }
            cg_rep_buf_add(&b, ", \"use\": ");
            js_str(&b, use);
            /* A parameter sweep's point ("bcast_knomial(radix=4)"): the values
             * to set (CG_PARAM_<schedule>_<name>, or the test's "params"). */
            const cJSON *params = cJSON_GetObjectItemCaseSensitive(
                cJSON_GetObjectItemCaseSensitive(g->picks[i].use->json, "requested"), "params");
            if (strcmp(g->picks[i].use->kind, "generated") == 0 &&
                strchr(g->picks[i].use->name, '(') != NULL && cJSON_IsObject(params) &&
                params->child != NULL) {
                char *pj = cJSON_PrintUnformatted(params);
                if (pj == NULL) {
                    b.failed = 1;
                } else {
                    cg_rep_buf_printf(&b, ", \"params\": %s", pj);
                    cJSON_free(pj);
                }
            }
            if (g->picks[i].use->effective_algorithm != NULL) {
                /* The record says the library ran another algorithm. */
                cg_rep_buf_add(&b, ", \"ran\": ");
                js_str(&b, g->picks[i].use->effective_algorithm);
            }
            const char *gl = cg_rep_guideline_of(m, g->picks[i].use);
            if (gl != NULL) {
                cg_rep_buf_add(&b, ", \"guideline\": ");
                js_str(&b, gl);
            }
            cg_rep_buf_add(&b, ", \"measured\": [");
            for (size_t k = i; k < j; k++) {
                const struct pick *pk = &g->picks[k];
                cg_rep_buf_add(&b, (k == i) ? "{" : ", {");
                cg_rep_buf_add(&b, "\"size_B\": ");
                js_num(&b, pk->size_B);
                cg_rep_buf_add(&b, ", \"median_ns\": ");
                js_num(&b, pk->use->median_ns);
                cg_rep_buf_add(&b, ", \"default_median_ns\": ");
                js_num(&b, (pk->def != NULL) ? pk->def->median_ns : NAN);
                cg_rep_buf_add(&b, ", \"fastest_other\": ");
                if (pk->other != NULL) {
                    char other[256];
                    impl_name(other, sizeof other, pk->other);
                    js_str(&b, other);
                    cg_rep_buf_add(&b, ", \"fastest_other_median_ns\": ");
                    js_num(&b, pk->other->median_ns);
                } else {
                    cg_rep_buf_add(&b, "null, \"fastest_other_median_ns\": null");
                }
                cg_rep_buf_add(&b, ", \"p_value\": ");
                js_p(&b, pk->p);
                cg_rep_buf_add(&b, "}");
            }
            cg_rep_buf_add(&b, "]}");
            i = j;
        }
        cg_rep_buf_add(&b, "\n     ]}");
    }
    cg_rep_buf_add(&b, (pr.ngroups > 0) ? "\n  ],\n  \"not_measured\": [" : "],\n  \"not_measured\": [");
    int any = 0;
    for (size_t i = 0; i < c->nrecs; i++) {
        const struct cg_rep_record *r = &c->recs[i];
        if (cg_rep_is_ok(r) || r->micro != NULL) {
            continue; /* micro-benchmarks are no choice of the profile */
        }
        char impl[256];
        impl_name(impl, sizeof impl, r);
        cg_rep_buf_printf(&b, "%s\n    {\"line\": %d, \"point_id\": ", any ? "," : "", r->line);
        js_str(&b, r->point_id);
        cg_rep_buf_add(&b, ", \"status\": ");
        js_str(&b, r->status);
        cg_rep_buf_add(&b, ", \"implementation\": ");
        js_str(&b, impl);
        cg_rep_buf_add(&b, ", \"reason\": ");
        js_str(&b, r->reason);
        cg_rep_buf_add(&b, "}");
        any = 1;
    }
    cg_rep_buf_add(&b, any ? "\n  ]\n}\n" : "]\n}\n");
    profile_fini(&pr);
    if (b.failed) {
        cg_rep_buf_fini(&b);
        return NULL;
    }
    return cg_rep_buf_take(&b);
}

/* ---- the guideline report --------------------------------------------------- */

static void add_owned(struct cg_rep_doc *d, enum cg_rep_block_kind kind, int level, char *text)
{
    if (text == NULL) {
        d->failed = 1;
        return;
    }
    cg_rep_doc_add(d, kind, level, text);
    free(text);
}

static const char *const viol_heads[] = {"collective", "library", "p",      "size",
                                         "guideline",  "mock-up", "native us", "mock us",
                                         "mock/native", "p (U test)"};
static const char viol_align[] = "llrrllrrrr";
static const char *const viol_heads_v[] = {"collective", "library", "p", "variant", "size",
                                           "guideline", "mock-up", "native us", "mock us",
                                           "mock/native", "p (U test)"};
static const char viol_align_v[] = "llrlrllrrrr";

static const char *const all_heads[] = {"size",      "mock-up",     "guideline",  "native us",
                                        "mock us",   "mock/native", "p (U test)", "verdict",
                                        "best forced", "forced us", "mock/forced"};
static const char all_align[] = "rllrrrrllrr";

static const char *const bad_heads[] = {"line", "status", "collective", "library", "p",
                                        "size", "implementation", "reason"};
static const char bad_align[] = "rllllrll";

static const char *const prof_heads[] = {"collective", "library", "p", "variant",
                                         "sizes (size_B)", "use", "measured: use/default (p)"};
static const char prof_align[] = "llrllll";

/* The violations, one table for the whole campaign. */
static void violations(struct cg_rep_doc *d, const struct cmp *cv, size_t n, size_t nviol)
{
    /* A variant column only when one collective was measured in two
     * variants (datatype, op, root, in place). */
    int vary = 0;
    for (size_t i = 1; i < n && !vary; i++) {
        for (size_t k = 0; k < i && !vary; k++) {
            char vi[128], vk[128];
            variant(vi, sizeof vi, cv[i].mock);
            variant(vk, sizeof vk, cv[k].mock);
            vary = strcmp(cv[i].mock->collective, cv[k].mock->collective) == 0 &&
                   strcmp(vi, vk) != 0;
        }
    }
    cg_rep_doc_add(d, CG_REP_HEADING, 2, "Guideline violations");
    if (nviol == 0) {
        cg_rep_doc_add(d, CG_REP_PARA, 0,
                       (n == 0) ? "None: nothing to compare."
                                : "None: no mock-up is at least 10% faster than the native "
                                  "default with a significant difference.");
        return;
    }
    struct cg_rep_table *t = vary ? cg_rep_table_new(11, viol_heads_v, viol_align_v)
                                  : cg_rep_table_new(10, viol_heads, viol_align);
    if (t == NULL) {
        d->failed = 1;
        return;
    }
    for (size_t i = 0; i < n; i++) {
        const struct cmp *x = &cv[i];
        if (x->verdict != V_VIOLATION) {
            continue;
        }
        char p[16], size[32], var[128], nat[32], mock[32], ratio[32], pv[32];
        snprintf(p, sizeof p, "%d", x->mock->ranks);
        cg_rep_fmt_size(size, sizeof size, x->mock->size_B);
        variant(var, sizeof var, x->mock);
        cg_rep_fmt_us(nat, sizeof nat, x->def->median_ns);
        cg_rep_fmt_us(mock, sizeof mock, x->mock->median_ns);
        fmt_ratio(ratio, sizeof ratio, x->mock->median_ns, x->def->median_ns, x->p_def);
        cg_rep_fmt_p(pv, sizeof pv, x->p_def);
        const char *row_v[] = {x->mock->collective, x->mock->library, p, var, size,
                               x->guideline, x->mock->name, nat, mock, ratio, pv};
        const char *row[] = {x->mock->collective, x->mock->library, p, size, x->guideline,
                             x->mock->name, nat, mock, ratio, pv};
        if (cg_rep_table_row(t, vary ? row_v : row) != 0) {
            d->failed = 1;
            break;
        }
    }
    char *para = cg_rep_strf("%zu violation%s: the mock-up's median is at most 0.9 of the native "
                             "default's and the U test says they differ (p < %g).",
                             nviol, (nviol == 1) ? "" : "s", CG_REP_ALPHA);
    add_owned(d, CG_REP_PARA, 0, para);
    cg_rep_doc_add_table(d, t);
}

/* Every comparison, one table per group. */
static void every_comparison(struct cg_rep_doc *d, const struct cmp *cv, size_t n)
{
    cg_rep_doc_add(d, CG_REP_HEADING, 2, "Guideline mock-ups against the native default");
    if (n == 0) {
        cg_rep_doc_add(d, CG_REP_PARA, 0, "No measured mock-up.");
        return;
    }
    size_t i = 0;
    while (i < n && !d->failed) {
        size_t j = i + 1;
        while (j < n && cg_rep_cmp_group(cv[j].mock, cv[i].mock) == 0) {
            j++;
        }
        add_owned(d, CG_REP_HEADING, 3, cg_rep_group_title(cv[i].mock));
        struct cg_rep_table *t = cg_rep_table_new(11, all_heads, all_align);
        if (t == NULL) {
            d->failed = 1;
            return;
        }
        for (size_t k = i; k < j; k++) {
            const struct cmp *x = &cv[k];
            char size[32], nat[32] = "-", mock[32], ratio[32] = "-", pv[32] = "-";
            char fname[160] = "-", fus[32] = "-", fratio[32] = "-";
            cg_rep_fmt_size(size, sizeof size, x->mock->size_B);
            cg_rep_fmt_us(mock, sizeof mock, x->mock->median_ns);
            if (x->def != NULL) {
                cg_rep_fmt_us(nat, sizeof nat, x->def->median_ns);
                fmt_ratio(ratio, sizeof ratio, x->mock->median_ns, x->def->median_ns, x->p_def);
                cg_rep_fmt_p(pv, sizeof pv, x->p_def);
            }
            if (x->forced != NULL) {
                snprintf(fname, sizeof fname, "%s%s", x->forced->name,
                         (x->forced->effective_algorithm != NULL) ? "!" : "");
                cg_rep_fmt_us(fus, sizeof fus, x->forced->median_ns);
                fmt_ratio(fratio, sizeof fratio, x->mock->median_ns, x->forced->median_ns,
                          x->p_forced);
            }
            const char *row[] = {size, x->mock->name, x->guideline, nat, mock, ratio, pv,
                                 verdict_words[x->verdict], fname, fus, fratio};
            if (cg_rep_table_row(t, row) != 0) {
                d->failed = 1;
                break;
            }
        }
        cg_rep_doc_add_table(d, t);
        i = j;
    }
}

/* The mock-ups found, and the generated schedules whose summary could not
 * be read. */
static void found(struct cg_rep_doc *d, const struct cg_rep_mockups *m, struct cg_rep_buf *notes)
{
    struct cg_rep_buf b;
    cg_rep_buf_init(&b);
    for (size_t i = 0; i < m->n; i++) {
        const struct cg_rep_sched *s = &m->v[i];
        if (s->guideline != NULL) {
            const char *how = "";
            switch (s->source) {
            case CG_REP_SCHED_VERIFIED:
                how = "the bytes the campaign ran (schedule_hash matches)";
                break;
            case CG_REP_SCHED_UNHASHED:
                how = "the records carry no schedule_hash to check it against";
                break;
            default:
                how = "CHANGED since the campaign";
                break;
            }
            cg_rep_buf_printf(&b, "%s: %s (%s: %s)\n", s->name, s->guideline, s->path, how);
            if (s->source == CG_REP_SCHED_CHANGED) {
                cg_rep_buf_printf(notes,
                                  "generated:%s: %s has FNV-1a 64 %s, the records say %s: the "
                                  "schedule changed since the campaign; its summary is read from "
                                  "the file as it is now\n",
                                  s->name, s->path, s->hash_now, s->hash_then);
            }
        } else if (s->source == CG_REP_SCHED_NOT_FOUND) {
            cg_rep_buf_printf(notes,
                              "generated:%s: no schedule file (tried %s): cannot tell whether it "
                              "is a mock-up; not compared as one\n",
                              s->name, s->tried);
        } else if (s->source == CG_REP_SCHED_UNREADABLE) {
            cg_rep_buf_printf(notes,
                              "generated:%s: %s has no \"summary\" string (or is not JSON): "
                              "cannot tell whether it is a mock-up; not compared as one\n",
                              s->name, s->path);
        }
    }
    cg_rep_doc_add(d, CG_REP_HEADING, 2, "Guideline mock-ups found");
    if (b.failed) {
        d->failed = 1;
        cg_rep_buf_fini(&b);
        return;
    }
    if (b.len == 0) {
        cg_rep_buf_fini(&b);
        cg_rep_doc_add(d, CG_REP_PARA, 0,
                       "None: no generated schedule of this campaign has a summary starting "
                       "with \"Mock-up: \".");
        return;
    }
    b.s[--b.len] = '\0';
    cg_rep_doc_add(d, CG_REP_PARA, 0,
                   "Generated schedules whose summary starts with \"Mock-up: \", with the "
                   "guideline it names and the file it was read from:");
    add_owned(d, CG_REP_LIST, 0, cg_rep_buf_take(&b));
}

/* Whether a mock-up of this collective was measured (any status). */
static int has_mockup(const struct cg_rep_campaign *c, const struct cg_rep_mockups *m,
                      const char *collective)
{
    for (size_t i = 0; i < c->nrecs; i++) {
        if (strcmp(c->recs[i].collective, collective) == 0 &&
            cg_rep_guideline_of(m, &c->recs[i]) != NULL) {
            return 1;
        }
    }
    return 0;
}

/* The records the comparisons would have used (natives and mock-ups of the
 * collectives with mock-ups) whose status is not ok, with their reason. */
static void not_measured(struct cg_rep_doc *d, const struct cg_rep_campaign *c,
                         const struct cg_rep_mockups *m)
{
    struct cg_rep_table *t = cg_rep_table_new(8, bad_heads, bad_align);
    if (t == NULL) {
        d->failed = 1;
        return;
    }
    for (size_t i = 0; i < c->nrecs; i++) {
        const struct cg_rep_record *r = &c->recs[i];
        if (cg_rep_is_ok(r) || !has_mockup(c, m, r->collective) ||
            !(strcmp(r->kind, "native") == 0 || cg_rep_guideline_of(m, r) != NULL)) {
            continue;
        }
        char line[16], p[16], size[32], impl[160], reason[400];
        snprintf(line, sizeof line, "%d", r->line);
        snprintf(p, sizeof p, "%d", r->ranks);
        cg_rep_fmt_size(size, sizeof size, r->size_B);
        impl_name(impl, sizeof impl, r);
        snprintf(reason, sizeof reason, "%s", (r->reason != NULL) ? r->reason : "(no reason given)");
        for (char *q = reason; *q != '\0'; q++) {
            if (*q == '\n' || *q == '\r' || *q == '\t') {
                *q = ' ';
            }
        }
        const char *row[] = {line, r->status, r->collective, r->library, p, size, impl, reason};
        if (cg_rep_table_row(t, row) != 0) {
            d->failed = 1;
            break;
        }
    }
    cg_rep_doc_add(d, CG_REP_HEADING, 2, "Guideline records not measured (status other than ok)");
    if (t->nrows == 0) {
        cg_rep_table_free(t);
        cg_rep_doc_add(d, CG_REP_PARA, 0,
                       "None: every native and mock-up record of these collectives has status ok.");
        return;
    }
    cg_rep_doc_add(d, CG_REP_PARA, 0,
                   "Native and mock-up records of the collectives with mock-ups that have no "
                   "timing (every record not ok is also in profile.json's not_measured):");
    cg_rep_doc_add_table(d, t);
}

/* The profile's ranges that do not use the default. */
static void profile_section(struct cg_rep_doc *d, const struct cg_rep_campaign *c)
{
    struct profile pr;
    if (build_profile(&pr, c) != 0) {
        d->failed = 1;
        return;
    }
    struct cg_rep_table *t = cg_rep_table_new(7, prof_heads, prof_align);
    if (t == NULL) {
        profile_fini(&pr);
        d->failed = 1;
        return;
    }
    size_t nranges = 0;
    for (size_t gi = 0; gi < pr.ngroups && !d->failed; gi++) {
        const struct pgroup *g = &pr.groups[gi];
        size_t i = 0;
        while (i < g->n) {
            size_t j = range_end(g, i);
            nranges++;
            const struct cg_rep_record *use = g->picks[i].use;
            if (is_default(use)) {
                i = j;
                continue;
            }
            double lo, hi;
            int open;
            range_bounds(g, i, j, &lo, &hi, &open);
            char p[16], var[128], sizes[96], impl[256], los[32], his[32];
            snprintf(p, sizeof p, "%d", g->first->ranks);
            variant(var, sizeof var, g->first);
            cg_rep_fmt_number(los, sizeof los, lo);
            cg_rep_fmt_number(his, sizeof his, hi);
            snprintf(sizes, sizeof sizes, "%s..%s", los, open ? "" : his);
            impl_name(impl, sizeof impl, use);
            if (use->effective_algorithm != NULL) {
                size_t l = strlen(impl);
                if (l + 1 < sizeof impl) {
                    impl[l] = '!';
                    impl[l + 1] = '\0';
                }
            }
            struct cg_rep_buf mb;
            cg_rep_buf_init(&mb);
            for (size_t k = i; k < j; k++) {
                const struct pick *pk = &g->picks[k];
                char size[32], ratio[32] = "-", pv[48] = "";
                cg_rep_fmt_size(size, sizeof size, pk->size_B);
                if (pk->def != NULL) {
                    snprintf(ratio, sizeof ratio, "%.3f", pk->use->median_ns / pk->def->median_ns);
                    char pp[32];
                    cg_rep_fmt_p(pp, sizeof pp, pk->p);
                    snprintf(pv, sizeof pv, " (%s)", pp);
                } else {
                    snprintf(ratio, sizeof ratio, "no default");
                }
                cg_rep_buf_printf(&mb, "%s%s: %s%s", (k == i) ? "" : ", ", size, ratio, pv);
            }
            char *meas = cg_rep_buf_take(&mb);
            if (meas == NULL) {
                d->failed = 1;
                break;
            }
            const char *row[] = {g->first->collective, g->first->library, p, var, sizes, impl, meas};
            if (cg_rep_table_row(t, row) != 0) {
                d->failed = 1;
            }
            free(meas);
            i = j;
        }
    }
    cg_rep_doc_add(d, CG_REP_HEADING, 2, "Profile (profile.json): where not to use the default");
    int shapes = c->nrecs > 0 && c->recs[0].shape_shown;
    char *para = cg_rep_strf("profile.json has %zu entr%s (collective, library, process count, "
                             "datatype, op, root, in place%s) and %zu size range%s; %d of them use "
                             "another implementation than native:default%s",
                             pr.ngroups, (pr.ngroups == 1) ? "y" : "ies",
                             shapes ? ", node shape" : "", nranges,
                             (nranges == 1) ? "" : "s", t->nrows, (t->nrows > 0) ? ":" : ".");
    add_owned(d, CG_REP_PARA, 0, para);
    if (t->nrows > 0) {
        cg_rep_doc_add_table(d, t);
    } else {
        cg_rep_table_free(t);
    }
    profile_fini(&pr);
}

static void legend(struct cg_rep_doc *d)
{
    char *text = cg_rep_strf(
        "A guideline mock-up is a generated schedule whose summary (read from its schedule "
        "file, see Guideline mock-ups found) starts with \"Mock-up: \": it does the "
        "collective with other collectives of the library, as in \"Allgather <= Gather + "
        "Bcast\" (the library's allgather should be no slower than its gather followed by its "
        "bcast).\n"
        "native us, mock us: medians over the repetitions of the slowest rank in each "
        "repetition, in microseconds, of the native default and of the mock-up at the same "
        "point (collective, library, p, datatype, op, root, in place, size, and the node shape "
        "when the campaign ran several).\n"
        "mock/native: the mock-up's median over the default's. ~ after a ratio: NOT "
        "significant (two-sided Mann-Whitney U test on the raw repetitions, or on the launch "
        "medians where both were measured in several launches; alpha = %g, as in the main "
        "tables); ? a raw file is missing, so it was not tested.\n"
        "verdict: VIOLATION when the mock-up's median is at most %.1f of the default's (at "
        "least 10%% faster) and the U test is significant; not significant when it is at least "
        "10%% faster without a significant difference; holds when it is not at least 10%% "
        "faster; untested when a raw file is missing; no native default when the default has "
        "no ok record at that point; below latency floor when the mock-up's or the default's "
        "median is below the job's one-way latency (a timing artefact, never a violation, and "
        "never a profile choice).\n"
        "best forced, forced us, mock/forced: the fastest forced native algorithm at that "
        "point and the mock-up over it (information only; ! marks a forced algorithm the "
        "library did not run).\n"
        "Profile: at each measured size, the fastest implementation other than the default "
        "(forced native, generated, mock-ups included) replaces it when its median is lower and "
        "the U test is significant; ranges are bounded at the midpoints between measured sizes "
        "in log space (floor(sqrt(a b))), the first from 0, the last open; measured lists each "
        "size's use/default ratio and the p-value (harness/FORMATS.md, Profile).",
        CG_REP_ALPHA, GUIDELINE_MARGIN);
    cg_rep_doc_add(d, CG_REP_HEADING, 2, "How to read the guideline report");
    add_owned(d, CG_REP_LIST, 0, text);
}

int cg_rep_build_guidelines(struct cg_rep_doc *d, const struct cg_rep_campaign *c,
                            const struct cg_rep_mockups *m, size_t *nviolations)
{
    struct cmp *cv = NULL;
    size_t n = 0;
    if (comparisons(c, m, &cv, &n) != 0) {
        return -1;
    }
    size_t nviol = 0;
    size_t nmock = 0;
    for (size_t i = 0; i < n; i++) {
        nviol += (cv[i].verdict == V_VIOLATION);
    }
    for (size_t i = 0; i < m->n; i++) {
        nmock += (m->v[i].guideline != NULL);
    }
    if (nviolations != NULL) {
        *nviolations = nviol;
    }
    char *head = cg_rep_strf("Campaign %s: %zu guideline mock-up%s, %zu comparison%s with the "
                             "native default, %zu violation%s (mock-up at least 10%% faster, "
                             "significant at alpha = %g).",
                             cg_rep_campaign_id(c), nmock, (nmock == 1) ? "" : "s", n,
                             (n == 1) ? "" : "s", nviol, (nviol == 1) ? "" : "s", CG_REP_ALPHA);
    add_owned(d, CG_REP_PARA, 0, head);
    violations(d, cv, n, nviol);
    every_comparison(d, cv, n);
    struct cg_rep_buf notes;
    cg_rep_buf_init(&notes);
    found(d, m, &notes);
    not_measured(d, c, m);
    profile_section(d, c);
    if (notes.failed) {
        d->failed = 1;
    } else if (notes.len > 0) {
        notes.s[--notes.len] = '\0';
        cg_rep_doc_add(d, CG_REP_HEADING, 2, "Guideline notes");
        add_owned(d, CG_REP_LIST, 0, cg_rep_buf_take(&notes));
    }
    cg_rep_buf_fini(&notes);
    legend(d);
    free(cv);
    return d->failed ? -1 : 0;
}
