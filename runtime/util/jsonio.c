/* jsonio.c - JSON out and typed JSON access on cJSON (jsonio.h). */
#include "jsonio.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- UTF-8 ---------------------------------------------------------------- */

int cg_utf8_seq_len(const unsigned char *s)
{
    unsigned char c = s[0];
    int n;
    unsigned long cp;

    if (c < 0x80) {
        return 1;
    }
    if ((c & 0xE0) == 0xC0) {
        n = 2;
        cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
        n = 3;
        cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
        n = 4;
        cp = c & 0x07;
    } else {
        return 0; /* a continuation byte, or 0xF8..0xFF */
    }
    for (int i = 1; i < n; i++) {
        if ((s[i] & 0xC0) != 0x80) {
            return 0; /* truncated; also stops at the terminating NUL */
        }
        cp = (cp << 6) | (s[i] & 0x3F);
    }
    /* Overlong forms, surrogates and values past U+10FFFF are invalid. */
    if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
        (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF) {
        return 0;
    }
    return n;
}

int cg_utf8_valid(const char *s)
{
    const unsigned char *u = (const unsigned char *)s;

    while (*u != '\0') {
        int n = cg_utf8_seq_len(u);
        if (n == 0) {
            return 0;
        }
        u += n;
    }
    return 1;
}

char *cg_utf8_sanitize(const char *s)
{
    const unsigned char *u = (const unsigned char *)s;
    /* Why 3 bytes per input byte: the worst case, every byte replaced by
     * the three of U+FFFD. Strings written here are short (names, errors,
     * environment values), so one allocation beats measuring first. */
    char *out = malloc(3 * strlen(s) + 1);
    size_t k = 0;

    if (out == NULL) {
        return NULL;
    }
    while (*u != '\0') {
        int n = cg_utf8_seq_len(u);
        if (n == 0) {
            /* Why one U+FFFD per byte (not per maximal invalid subpart, as
             * Unicode suggests): simpler, and a reader sees as many marks
             * as there were bad bytes. */
            memcpy(out + k, "\xEF\xBF\xBD", 3);
            k += 3;
            u++;
            continue;
        }
        memcpy(out + k, u, (size_t)n);
        k += (size_t)n;
        u += n;
    }
    out[k] = '\0';
    return out;
}

/* ---- cJSON values ------------------------------------------------------- */

cJSON *cg_json_string(const char *s)
{
    cJSON *item;
    char *clean;

    if (s == NULL) {
        return cJSON_CreateNull();
    }
    if (cg_utf8_valid(s)) {
        return cJSON_CreateString(s);
    }
    clean = cg_utf8_sanitize(s);
    if (clean == NULL) {
        return NULL;
    }
    item = cJSON_CreateString(clean);
    free(clean);
    return item;
}

cJSON *cg_json_string_or_null(const char *s)
{
    return (s != NULL && s[0] != '\0') ? cg_json_string(s) : cJSON_CreateNull();
}

cJSON *cg_json_number(double v)
{
    return isfinite(v) ? cJSON_CreateNumber(v) : cJSON_CreateNull();
}

cJSON *cg_json_int(int64_t v)
{
    char text[24];

    /* Why raw text past 1e15: cJSON prints a double that is not an int with
     * %.15g, which turns 1e15 into "1e+15" and loses digits past 2^53. */
    if (v > -1000000000000000LL && v < 1000000000000000LL) {
        return cJSON_CreateNumber((double)v);
    }
    snprintf(text, sizeof(text), "%" PRId64, v);
    return cJSON_CreateRaw(text);
}

static cJSON *json_uint(uint64_t v)
{
    char text[24];

    if (v < 1000000000000000ULL) {
        return cJSON_CreateNumber((double)v);
    }
    snprintf(text, sizeof(text), "%" PRIu64, v);
    return cJSON_CreateRaw(text);
}

int cg_json_add(cJSON *obj, const char *key, cJSON *item)
{
    char *clean = NULL;
    int ok;

    if (item == NULL || obj == NULL || key == NULL) {
        cJSON_Delete(item);
        return -1;
    }
    if (!cg_utf8_valid(key)) {
        clean = cg_utf8_sanitize(key);
        if (clean == NULL) {
            cJSON_Delete(item);
            return -1;
        }
        key = clean;
    }
    ok = cJSON_AddItemToObject(obj, key, item); /* copies the key */
    free(clean);
    if (!ok) {
        cJSON_Delete(item);
        return -1;
    }
    return 0;
}

/* ---- the writer ------------------------------------------------------------ */

void cg_jw_init(struct cg_jw *w)
{
    memset(w, 0, sizeof(*w));
}

void cg_jw_free(struct cg_jw *w)
{
    cJSON_Delete(w->root);
    memset(w, 0, sizeof(*w));
}

/* Puts item where the next value goes; takes ownership. Returns item, or
 * NULL (and marks the writer failed) when it could not be placed. */
static cJSON *place(struct cg_jw *w, const char *key, cJSON *item)
{
    cJSON *parent;

    if (key == NULL) {
        key = w->key;
    }
    w->key = NULL;
    if (item == NULL || w->oom) {
        cJSON_Delete(item);
        w->oom = 1;
        return NULL;
    }
    if (w->depth == 0) {
        if (w->root != NULL) {
            cJSON_Delete(item); /* a second document: misuse */
            w->oom = 1;
            return NULL;
        }
        w->root = item;
        return item;
    }
    parent = w->open[w->depth - 1];
    if (cJSON_IsArray(parent)) {
        if (!cJSON_AddItemToArray(parent, item)) {
            cJSON_Delete(item);
            w->oom = 1;
            return NULL;
        }
        return item;
    }
    if (cg_json_add(parent, key, item) != 0) {
        w->oom = 1;
        return NULL;
    }
    return item;
}

void cg_jw_key(struct cg_jw *w, const char *key)
{
    if (w->key != NULL) {
        w->oom = 1; /* two keys in a row: misuse */
    }
    w->key = key;
}

static void open_(struct cg_jw *w, const char *key, cJSON *c)
{
    c = place(w, key, c);
    if (c == NULL) {
        return;
    }
    if (w->depth >= CG_JW_MAX_DEPTH) {
        w->oom = 1; /* deeper than anything written here */
        return;
    }
    w->open[w->depth++] = c;
}

void cg_jw_obj(struct cg_jw *w, const char *key) { open_(w, key, cJSON_CreateObject()); }
void cg_jw_arr(struct cg_jw *w, const char *key) { open_(w, key, cJSON_CreateArray()); }

void cg_jw_end(struct cg_jw *w)
{
    if (w->depth == 0) {
        w->oom = 1; /* an end without an open container: misuse */
        return;
    }
    w->depth--;
}

void cg_jw_str(struct cg_jw *w, const char *key, const char *s)
{
    place(w, key, cg_json_string(s));
}

void cg_jw_int(struct cg_jw *w, const char *key, int64_t v) { place(w, key, cg_json_int(v)); }
void cg_jw_uint(struct cg_jw *w, const char *key, uint64_t v) { place(w, key, json_uint(v)); }
void cg_jw_num(struct cg_jw *w, const char *key, double v) { place(w, key, cg_json_number(v)); }
void cg_jw_bool(struct cg_jw *w, const char *key, int v) { place(w, key, cJSON_CreateBool(v)); }
void cg_jw_null(struct cg_jw *w, const char *key) { place(w, key, cJSON_CreateNull()); }

void cg_jw_item(struct cg_jw *w, const char *key, cJSON *item)
{
    place(w, key, (item != NULL) ? item : cJSON_CreateNull());
}

void cg_jw_copy(struct cg_jw *w, const char *key, const cJSON *item)
{
    place(w, key, (item != NULL) ? cJSON_Duplicate(item, 1) : cJSON_CreateNull());
}

char *cg_jw_text(struct cg_jw *w, int pretty, size_t *len)
{
    char *text, *out;
    size_t n;

    if (w->oom || w->depth != 0 || w->root == NULL) {
        return NULL;
    }
    text = pretty ? cJSON_Print(w->root) : cJSON_PrintUnformatted(w->root);
    if (text == NULL) {
        return NULL;
    }
    /* Why a copy: cJSON's buffer is cJSON_free's, and the newline belongs
     * in the same buffer so that an append writes the line in one write(). */
    n = strlen(text);
    out = malloc(n + 2);
    if (out != NULL) {
        memcpy(out, text, n);
        out[n] = '\n';
        out[n + 1] = '\0';
        if (len != NULL) {
            *len = n + 1;
        }
    }
    cJSON_free(text);
    return out;
}

/* ---- typed access ------------------------------------------------------- */

static const cJSON *member(const cJSON *obj, const char *key)
{
    return cJSON_IsObject(obj) ? cg_jget_path(obj, key) : NULL;
}

/* The member and the convention's code for a value that `is` accepts. */
static int typed(const cJSON *obj, const char *key, cJSON_bool (*is)(const cJSON *),
                 const cJSON **v)
{
    *v = member(obj, key);
    if (*v == NULL || cJSON_IsNull(*v)) {
        return -1;
    }
    return is(*v) ? 0 : -2;
}

int cg_jget_str(const cJSON *obj, const char *key, const char **out)
{
    const cJSON *v;
    int rc = typed(obj, key, cJSON_IsString, &v);
    *out = (rc == 0) ? v->valuestring : *out;
    return rc;
}

int cg_jget_num(const cJSON *obj, const char *key, double *out)
{
    const cJSON *v;
    int rc = typed(obj, key, cJSON_IsNumber, &v);
    if (rc == 0 && !isfinite(v->valuedouble)) {
        return -2;
    }
    *out = (rc == 0) ? v->valuedouble : *out;
    return rc;
}

int cg_jget_int(const cJSON *obj, const char *key, long long lo, long long hi, long long *out)
{
    double d;
    int rc = cg_jget_num(obj, key, &d);

    if (rc != 0) {
        return rc;
    }
    if (d != floor(d) || d < (double)lo || d > (double)hi) {
        return -2;
    }
    *out = (long long)d;
    return 0;
}

int cg_jget_bool(const cJSON *obj, const char *key, int *out)
{
    const cJSON *v;
    int rc = typed(obj, key, cJSON_IsBool, &v);
    *out = (rc == 0) ? cJSON_IsTrue(v) : *out;
    return rc;
}

const cJSON *cg_jget_path(const cJSON *obj, const char *path)
{
    const cJSON *v = obj;
    const char *p = path;

    while (v != NULL && *p != '\0') {
        const char *dot = strchr(p, '.');
        size_t n = (dot != NULL) ? (size_t)(dot - p) : strlen(p);
        char key[128];
        if (n >= sizeof(key) || !cJSON_IsObject(v)) {
            return NULL;
        }
        memcpy(key, p, n);
        key[n] = '\0';
        v = cJSON_GetObjectItemCaseSensitive(v, key);
        p += n + (dot != NULL);
    }
    return v;
}
