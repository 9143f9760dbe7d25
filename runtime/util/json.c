/* json.c - cJSON plus source positions (see json.h). */
#include "json.h"
#include "strset.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Maps byte offsets to line:col. */
struct linemap {
    const char *text; /* the document */
    size_t len;       /* its length */
    size_t *starts;   /* byte offset of each line's first character */
    int nlines;       /* entries in starts */
};

static void linemap_init(struct linemap *m, struct cg_arena *a, const char *text, size_t len)
{
    int n = 1;
    for (size_t i = 0; i < len; i++) {
        if (text[i] == '\n') {
            n++;
        }
    }
    m->text = text;
    m->len = len;
    m->nlines = n;
    m->starts = cg_arena_alloc(a, sizeof(size_t) * (size_t)n);
    int k = 0;
    m->starts[k++] = 0;
    for (size_t i = 0; i < len; i++) {
        if (text[i] == '\n') {
            m->starts[k++] = i + 1;
        }
    }
}

static struct cg_pos linemap_pos(const struct linemap *m, size_t off)
{
    int lo = 0, hi = m->nlines - 1;
    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        if (m->starts[mid] <= off) {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    struct cg_pos pos = { lo + 1, (int)(off - m->starts[lo]) + 1 };
    return pos;
}

/* Prints the line of `off` and a caret under it, GCC style. */
static void print_caret(struct cg_diag *d, const struct linemap *m, size_t off)
{
    struct cg_pos pos = linemap_pos(m, off);
    size_t s = m->starts[pos.line - 1], e = s;
    while (e < m->len && m->text[e] != '\n') {
        e++;
    }
    if (d->errors > d->max_errors) {
        return;
    }
    fprintf(d->sink, " %.*s\n ", (int)(e - s), m->text + s);
    for (size_t i = s; i < off && i < e; i++) {
        fputc(m->text[i] == '\t' ? '\t' : ' ', d->sink);
    }
    fputs("^ near here\n", d->sink);
}

static size_t skip_ws(const struct linemap *m, size_t i)
{
    while (i < m->len && (m->text[i] == ' ' || m->text[i] == '\t' || m->text[i] == '\n' ||
                          m->text[i] == '\r')) {
        i++;
    }
    return i;
}

/* Offset just past the string starting at text[i] == '"'; sets *esc when it
 * holds an escape. */
static size_t skip_string(const struct linemap *m, size_t i, int *esc)
{
    i++;
    while (i < m->len && m->text[i] != '"') {
        if (m->text[i] == '\\') {
            *esc = 1;
            i++;
        }
        i++;
    }
    return i + 1;
}

/* Why: for `{"a": 1, }` cJSON reports the end of the text, far from the
 * mistake; find the first comma followed only by blanks and a '}' or ']'
 * outside strings. Returns m->len when there is none. */
static size_t trailing_comma(const struct linemap *m)
{
    int esc = 0;
    for (size_t i = 0; i < m->len; i++) {
        if (m->text[i] == '"') {
            i = skip_string(m, i, &esc) - 1;
        } else if (m->text[i] == ',') {
            size_t j = skip_ws(m, i + 1);
            if (j < m->len && (m->text[j] == '}' || m->text[j] == ']')) {
                return i;
            }
        }
    }
    return m->len;
}

/* Why: cJSON converts with strtod, which takes what JSON does not allow
 * ("024", "-01", "1."): a leading zero is an octal number in other
 * languages, so "00...024" must not quietly read as 24. Returns why text is
 * not a JSON number (RFC 8259, section 6), or NULL. */
static const char *number_syntax(const char *t)
{
    const char *c = t;
    if (*c == '-') {
        c++;
    }
    if (*c == '0') {
        c++;
        if (*c >= '0' && *c <= '9') {
            return "a number may not start with the digit 0 unless it is 0 (no leading zeros)";
        }
    } else if (*c >= '1' && *c <= '9') {
        while (*c >= '0' && *c <= '9') {
            c++;
        }
    } else {
        return "a digit must follow the minus sign";
    }
    if (*c == '.') {
        c++;
        if (!(*c >= '0' && *c <= '9')) {
            return "a digit must follow the decimal point";
        }
        while (*c >= '0' && *c <= '9') {
            c++;
        }
    }
    if (*c == 'e' || *c == 'E') {
        c++;
        if (*c == '+' || *c == '-') {
            c++;
        }
        if (!(*c >= '0' && *c <= '9')) {
            return "a digit must follow the exponent's 'e'";
        }
        while (*c >= '0' && *c <= '9') {
            c++;
        }
    }
    return *c == '\0' ? NULL : "unexpected characters after the number";
}

struct zip {
    struct cg_arena *arena; /* where the tree goes */
    struct cg_diag *diag;   /* duplicate keys are reported here */
    const char *file;       /* for messages */
    struct linemap map;     /* offsets to positions */
};

/* Builds the positioned node for cJSON item `it`, whose text starts at
 * offset i (whitespace skipped). Returns the offset after the value. */
static size_t zip_value(struct zip *z, const cJSON *it, size_t i, struct cg_json *out)
{
    const struct linemap *m = &z->map;
    i = skip_ws(m, i);
    out->pos = linemap_pos(m, i);
    if (cJSON_IsObject(it) || cJSON_IsArray(it)) {
        int is_obj = cJSON_IsObject(it);
        out->kind = is_obj ? CG_J_OBJECT : CG_J_ARRAY;
        int n = cJSON_GetArraySize(it);
        out->nitems = n;
        out->items = cg_arena_alloc(z->arena, sizeof(*out->items) * (size_t)(n > 0 ? n : 1));
        i++; /* '{' or '[' */
        int k = 0;
        /* Why a set: comparing each key with all earlier ones made a
         * 100,000-key object take 19 s. Small objects compare directly. */
        struct cg_strset seen;
        int hashed = is_obj && n > 8;
        if (hashed) {
            cg_strset_init(&seen, z->arena);
        }
        for (const cJSON *c = it->child; c; c = c->next, k++) {
            struct cg_json *node = cg_arena_alloc(z->arena, sizeof(*node));
            i = skip_ws(m, i);
            if (m->text[i] == ',') {
                i = skip_ws(m, i + 1);
            }
            if (is_obj) {
                int esc = 0;
                node->key = cg_arena_strdup(z->arena, c->string);
                node->key_pos = linemap_pos(m, i);
                i = skip_string(m, i, &esc);
                i = skip_ws(m, i) + 1; /* ':' */
                int first = -1;
                if (hashed) {
                    first = cg_strset_add(&seen, node->key, k);
                } else {
                    for (int j = 0; j < k && first < 0; j++) {
                        first = strcmp(out->items[j]->key, node->key) == 0 ? j : -1;
                    }
                }
                if (first >= 0) {
                    cg_error(z->diag, z->file, node->key_pos, "duplicate key '%s'", node->key);
                    cg_note(z->diag, z->file, out->items[first]->key_pos, "first defined here");
                }
            }
            i = zip_value(z, c, i, node);
            out->items[k] = node;
        }
        i = skip_ws(m, i);
        return i + 1; /* '}' or ']' */
    }
    if (cJSON_IsString(it)) {
        out->kind = CG_J_STRING;
        out->str = cg_arena_strdup(z->arena, it->valuestring);
        out->str_pos = linemap_pos(m, i + 1);
        return skip_string(m, i, &out->raw_escapes);
    }
    if (cJSON_IsNumber(it)) {
        out->kind = CG_J_NUMBER;
        out->num = it->valuedouble;
        size_t e = i;
        while (e < m->len && strchr("+-0123456789.eE", m->text[e]) != NULL) {
            e++;
        }
        char *text = cg_arena_alloc(z->arena, e - i + 1);
        memcpy(text, m->text + i, e - i);
        out->text = text;
        const char *why = number_syntax(text);
        if (why != NULL) {
            cg_error(z->diag, z->file, out->pos, "invalid JSON number '%s': %s", text, why);
            return e;
        }
        if (strpbrk(text, ".eE") == NULL) {
            /* The whole text, never a prefix: "0000...0024" is 24, and a
             * number beyond int64 is out of range, not a smaller one. */
            errno = 0;
            long long v = strtoll(text, NULL, 10);
            if (errno == 0) {
                out->is_int = 1;
                out->ival = v;
            } else {
                out->int_overflow = 1;
            }
        }
        return e;
    }
    if (cJSON_IsBool(it)) {
        out->kind = CG_J_BOOL;
        out->boolean = cJSON_IsTrue(it);
        return i + (out->boolean ? 4 : 5);
    }
    out->kind = CG_J_NULL;
    return i + 4;
}

struct cg_json *cg_json_parse(struct cg_arena *arena, struct cg_diag *d, const char *file,
                              const char *text, size_t len)
{
    struct zip z = { arena, d, file, { 0 } };
    linemap_init(&z.map, arena, text, len);
    if (len >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0) {
        struct cg_pos start = { 1, 1 };
        cg_error(d, file, start, "the file starts with a UTF-8 byte order mark; save it without one");
        return NULL;
    }
    const char *end = NULL;
    /* len + 1: cJSON wants to see the terminating NUL when asked to
     * reject trailing text. */
    cJSON *root = cJSON_ParseWithLengthOpts(text, len + 1, &end, 1);
    if (root == NULL) {
        size_t off = end ? (size_t)(end - text) : 0;
        if (off > len) {
            off = len;
        }
        size_t at = skip_ws(&z.map, off);
        size_t comma = trailing_comma(&z.map);
        if (comma < len && (at >= len || at == skip_ws(&z.map, comma + 1))) {
            cg_error(d, file, linemap_pos(&z.map, comma),
                     "invalid JSON: a comma before a closing '}' or ']'");
            off = comma;
        } else if (at >= len) {
            cg_error(d, file, linemap_pos(&z.map, off),
                     "invalid JSON: unexpected end of text (a '}', ']' or '\"' is missing)");
        } else {
            cg_error(d, file, linemap_pos(&z.map, at), "invalid JSON: unexpected '%c'", text[at]);
            off = at;
        }
        print_caret(d, &z.map, off);
        return NULL;
    }
    struct cg_json *top = cg_arena_alloc(arena, sizeof(*top));
    int before = d->errors;
    zip_value(&z, root, 0, top);
    cJSON_Delete(root);
    return d->errors > before ? NULL : top;
}

const struct cg_json *cg_json_get(const struct cg_json *obj, const char *key)
{
    if (obj == NULL || obj->kind != CG_J_OBJECT) {
        return NULL;
    }
    for (int i = 0; i < obj->nitems; i++) {
        if (strcmp(obj->items[i]->key, key) == 0) {
            return obj->items[i];
        }
    }
    return NULL;
}

int cg_json_get_kind(const struct cg_json *obj, const char *key, enum cg_json_kind kind,
                     const struct cg_json **out)
{
    const struct cg_json *v = cg_json_get(obj, key);
    *out = (v != NULL) ? v : obj;
    if (v == NULL || v->kind == CG_J_NULL) {
        return -1;
    }
    return (v->kind == kind) ? 0 : -2;
}

/* cg_json_get_kind, with *at set when the caller asks. */
static int kind_at(const struct cg_json *obj, const char *key, enum cg_json_kind kind,
                   const struct cg_json **v, const struct cg_json **at)
{
    int rc = cg_json_get_kind(obj, key, kind, v);
    if (at != NULL) {
        *at = *v;
    }
    return rc;
}

int cg_json_get_str(const struct cg_json *obj, const char *key, const char **out,
                    const struct cg_json **at)
{
    const struct cg_json *v;
    int rc = kind_at(obj, key, CG_J_STRING, &v, at);
    *out = (rc == 0) ? v->str : *out;
    return rc;
}

int cg_json_get_num(const struct cg_json *obj, const char *key, double *out,
                    const struct cg_json **at)
{
    const struct cg_json *v;
    int rc = kind_at(obj, key, CG_J_NUMBER, &v, at);
    *out = (rc == 0) ? v->num : *out;
    return rc;
}

int cg_json_get_int(const struct cg_json *obj, const char *key, int64_t lo, int64_t hi,
                    int64_t *out, const struct cg_json **at)
{
    const struct cg_json *v;
    int rc = kind_at(obj, key, CG_J_NUMBER, &v, at);
    if (rc == 0 && (!v->is_int || v->ival < lo || v->ival > hi)) {
        return -2;
    }
    *out = (rc == 0) ? v->ival : *out;
    return rc;
}

int cg_json_check_keys(struct cg_diag *d, const char *file, const struct cg_json *obj,
                       const char *what, const char *const *known)
{
    int bad = 0;
    for (int i = 0; i < obj->nitems; i++) {
        int ok = 0;
        for (int k = 0; known[k]; k++) {
            if (strcmp(obj->items[i]->key, known[k]) == 0) {
                ok = 1;
                break;
            }
        }
        if (!ok) {
            char list[512] = "";
            size_t n = 0;
            for (int k = 0; known[k] && n < sizeof(list) - 40; k++) {
                n += (size_t)snprintf(list + n, sizeof(list) - n, "%s%s", k ? ", " : "", known[k]);
            }
            cg_error(d, file, obj->items[i]->key_pos, "unknown key '%s' in %s; expected one of: %s",
                     obj->items[i]->key, what, list);
            bad++;
        }
    }
    return bad;
}

const char *cg_json_kind_name(enum cg_json_kind k)
{
    static const char *const names[] = { "null", "a boolean", "a number",
                                         "a string", "an array", "an object" };
    return names[k];
}

