/* json.h - JSON documents with a source position on every value and key.
 *
 * cJSON parses; it keeps no positions, so json.c walks the same text once
 * more in document order and zips the offsets it finds onto the cJSON tree
 * (STYLE.md item 4). The result is a small tree owned by an arena; cJSON's
 * own tree is deleted before cg_json_parse returns. Object members keep
 * their order; duplicate keys are reported as errors.
 */
#ifndef CG_JSON_H
#define CG_JSON_H

#include "util.h"

enum cg_json_kind { CG_J_NULL, CG_J_BOOL, CG_J_NUMBER, CG_J_STRING, CG_J_ARRAY, CG_J_OBJECT };

struct cg_json {
    enum cg_json_kind kind;   /* which value */
    struct cg_pos pos;        /* first character of the value */
    const char *key;          /* member name when inside an object, else NULL */
    struct cg_pos key_pos;    /* where the member name's quote is */
    double num;               /* NUMBER */
    int is_int;               /* NUMBER written as an integer that fits int64 */
    int64_t ival;             /* NUMBER when is_int */
    int int_overflow;         /* NUMBER written as an integer beyond int64 */
    const char *text;         /* NUMBER as written */
    int boolean;              /* BOOL */
    const char *str;          /* STRING contents (unescaped) */
    struct cg_pos str_pos;    /* first character inside the quotes */
    int raw_escapes;          /* STRING had escape sequences (columns inexact) */
    struct cg_json **items;   /* ARRAY elements or OBJECT members, in order */
    int nitems;               /* how many */
};

/* Parses text[0..len). On a syntax error reports "file:line:col: error:
 * ..." with a caret line and returns NULL. Duplicate keys and numbers JSON
 * does not allow (leading zeros) are errors. */
struct cg_json *cg_json_parse(struct cg_arena *arena, struct cg_diag *d, const char *file,
                              const char *text, size_t len);

/* Member `key` of an object (case-sensitive), or NULL. */
const struct cg_json *cg_json_get(const struct cg_json *obj, const char *key);

/* Typed members, with the convention of jsonio.h's cJSON getters
 * (cg_jget_*): 0 when `key` is there with that type (integers: written as
 * a whole number within lo..hi), *out set; -1 when absent or null (*out
 * untouched); -2 when there with another type or out of range. *at (when
 * not NULL) is the member when there (null included), else obj: where a
 * message points, and how a caller that refuses null tells it from
 * absent (*at != obj). */
int cg_json_get_str(const struct cg_json *obj, const char *key, const char **out,
                    const struct cg_json **at);
int cg_json_get_num(const struct cg_json *obj, const char *key, double *out,
                    const struct cg_json **at);
int cg_json_get_int(const struct cg_json *obj, const char *key, int64_t lo, int64_t hi,
                    int64_t *out, const struct cg_json **at);
int cg_json_get_kind(const struct cg_json *obj, const char *key, enum cg_json_kind kind,
                     const struct cg_json **out);

/* Reports every member of obj whose key is not in the NULL-terminated list
 * `known` ("unknown key 'x' in <what>; expected one of: a, b, c").
 * Returns the number reported. */
int cg_json_check_keys(struct cg_diag *d, const char *file, const struct cg_json *obj,
                       const char *what, const char *const *known);

const char *cg_json_kind_name(enum cg_json_kind k);

#endif
