/* report_csv.c - points.csv, the flat view of the records (report_csv.h).
 *
 * Two walks over the records: the first finds every column, the second fills
 * one row per record. A key that is an object in one record and null in
 * another (timing in an error record) stays as its dotted columns, left
 * empty, rather than adding a column "timing" that is empty everywhere.
 */
#include "report_csv.h"

#include <stdlib.h>
#include <string.h>

#include "report_util.h"

struct names {
    char **v;   /* malloc'd strings, in first-seen order */
    size_t n;   /* used */
    size_t cap; /* allocated */
};

/* Index of s in l, or -1. */
static long names_find(const struct names *l, const char *s)
{
    for (size_t i = 0; i < l->n; i++) {
        if (strcmp(l->v[i], s) == 0) {
            return (long)i;
        }
    }
    return -1;
}

/* Adds s unless present; 0, or -1 out of memory. */
static int names_add(struct names *l, const char *s)
{
    if (names_find(l, s) >= 0) {
        return 0;
    }
    if (l->n == l->cap) {
        size_t cap = (l->cap != 0) ? 2 * l->cap : 64;
        char **v = realloc(l->v, cap * sizeof *v);
        if (v == NULL) {
            return -1;
        }
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n] = strdup(s);
    if (l->v[l->n] == NULL) {
        return -1;
    }
    l->n++;
    return 0;
}

static void names_fini(struct names *l)
{
    for (size_t i = 0; i < l->n; i++) {
        free(l->v[i]);
    }
    free(l->v);
}

/* What a walk does at each leaf. */
struct walk {
    struct names *objects; /* paths that are objects somewhere */
    struct names *columns; /* columns (first walk adds, second reads) */
    char **row;            /* second walk: the row's fields, by column */
    int collect_objects;   /* pass 0: only record object paths */
};

static int leaf_text(const cJSON *v, char **out)
{
    char num[40];
    if (cJSON_IsNull(v)) {
        *out = NULL;
        return 0;
    }
    if (cJSON_IsString(v)) {
        *out = strdup(v->valuestring);
    } else if (cJSON_IsNumber(v)) {
        cg_rep_fmt_number(num, sizeof num, v->valuedouble);
        *out = strdup(num);
    } else if (cJSON_IsBool(v)) {
        *out = strdup(cJSON_IsTrue(v) ? "true" : "false");
    } else {
        *out = cJSON_PrintUnformatted(v); /* arrays: their JSON text */
    }
    return (*out == NULL) ? -1 : 0;
}

static int walk(struct walk *w, const cJSON *obj, const char *prefix)
{
    const cJSON *it;
    cJSON_ArrayForEach(it, obj)
    {
        char *path = (prefix[0] != '\0') ? cg_rep_strf("%s.%s", prefix, it->string)
                                         : cg_rep_strf("%s", it->string);
        if (path == NULL) {
            return -1;
        }
        int rc = 0;
        if (cJSON_IsObject(it)) {
            if (w->collect_objects) {
                rc = names_add(w->objects, path);
            }
            if (rc == 0) {
                rc = walk(w, it, path);
            }
        } else if (w->collect_objects) {
            /* only objects on this pass */
        } else if (cJSON_IsNull(it) && names_find(w->objects, path) >= 0) {
            /* an object elsewhere: its dotted columns stay empty here */
        } else if (w->row == NULL) {
            rc = names_add(w->columns, path);
        } else {
            long col = names_find(w->columns, path);
            if (col >= 0 && w->row[col] == NULL) {
                rc = leaf_text(it, &w->row[col]);
            }
        }
        free(path);
        if (rc != 0) {
            return rc;
        }
    }
    return 0;
}

/* An RFC 4180 field: quoted when it holds a comma, a quote or a line break. */
static void field(struct cg_rep_buf *b, const char *s)
{
    if (s == NULL) {
        return;
    }
    if (strpbrk(s, ",\"\r\n") == NULL) {
        cg_rep_buf_add(b, s);
        return;
    }
    cg_rep_buf_add(b, "\"");
    for (; *s != '\0'; s++) {
        cg_rep_buf_addn(b, s, 1);
        if (*s == '"') {
            cg_rep_buf_add(b, "\"");
        }
    }
    cg_rep_buf_add(b, "\"");
}

char *cg_rep_csv(const struct cg_rep_campaign *c)
{
    struct names objects = {NULL, 0, 0};
    struct names columns = {NULL, 0, 0};
    struct cg_rep_buf b;
    cg_rep_buf_init(&b);
    char **row = NULL;
    int rc = 0;
    struct walk w = {&objects, &columns, NULL, 1};
    for (size_t i = 0; i < c->nrecs && rc == 0; i++) {
        rc = walk(&w, c->recs[i].json, "");
    }
    w.collect_objects = 0;
    for (size_t i = 0; i < c->nrecs && rc == 0; i++) {
        rc = walk(&w, c->recs[i].json, "");
    }
    if (rc == 0 && columns.n > 0) {
        row = calloc(columns.n, sizeof *row);
        rc = (row == NULL) ? -1 : 0;
    }
    for (size_t k = 0; k < columns.n && rc == 0; k++) {
        cg_rep_buf_add(&b, (k > 0) ? "," : "");
        field(&b, columns.v[k]);
    }
    cg_rep_buf_add(&b, (columns.n > 0) ? "\r\n" : "");
    w.row = row;
    for (size_t i = 0; i < c->nrecs && rc == 0; i++) {
        rc = walk(&w, c->recs[i].json, "");
        for (size_t k = 0; k < columns.n; k++) {
            cg_rep_buf_add(&b, (k > 0) ? "," : "");
            field(&b, row[k]);
            free(row[k]);
            row[k] = NULL;
        }
        cg_rep_buf_add(&b, "\r\n");
    }
    free(row);
    names_fini(&objects);
    names_fini(&columns);
    if (rc != 0) {
        cg_rep_buf_fini(&b);
        return NULL;
    }
    return cg_rep_buf_take(&b);
}
