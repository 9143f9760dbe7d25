/* jsonio.h - JSON out and typed JSON access, both on cJSON: the one writer
 * of records, run metadata, campaign and job files (bench, bench_cuda,
 * collgen run), the UTF-8 sanitiser every string written goes through, and
 * the getters that read a typed member of a cJSON object.
 *
 * Depends on cJSON and libc only, so that bench and bench_cuda link it
 * alone (runtime/mpi.ninja, runtime/cuda.ninja) as collgen does
 * (libcgutil.a).
 *
 * Writing: cg_jw_* build a cJSON tree value by value, in the order the
 * calls come (cJSON keeps members in insertion order, so records keep
 * FORMATS.md's key order); cg_jw_text prints it with cJSON's printer,
 * compact (one line: a points.jsonl record) or indented (campaign.json,
 * job files, run-N.json).
 *
 * What the printed text guarantees:
 * - valid UTF-8: every string and key goes through cg_utf8_sanitize, each
 *   byte that does not start a valid UTF-8 sequence (a lone continuation
 *   byte, a truncated sequence, an overlong form, a surrogate, a value past
 *   U+10FFFF, 0xF8..0xFF) becomes U+FFFD; cJSON escapes '"', '\\' and the
 *   control characters below 0x20 (\n \t \r \b \f or \u00XX);
 * - no NaN or infinity (JSON has none): a non-finite number is null;
 * - numbers as cJSON prints them: %.15g, or %.17g where %.15g would not
 *   read back within a relative DBL_EPSILON; integers (cg_jw_int,
 *   cg_jw_uint) in full digits, also past 1e15 where %.15g would switch to
 *   an exponent.
 */
#ifndef CG_JSONIO_H
#define CG_JSONIO_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cjson/cJSON.h>

/* ---- UTF-8 ---------------------------------------------------------------- */

/* Length (1..4) of the valid UTF-8 sequence at s, or 0 when s[0] does not
 * start one (a NUL inside a sequence ends it too). */
int cg_utf8_seq_len(const unsigned char *s);

/* 1 when the NUL-terminated s is valid UTF-8. */
int cg_utf8_valid(const char *s);

/* A malloc'd copy of s with every byte that does not start a valid
 * sequence replaced by U+FFFD (EF BF BD); NULL when out of memory. */
char *cg_utf8_sanitize(const char *s);

/* ---- cJSON values ------------------------------------------------------- */

/* A string item from s sanitised; a null item when s is NULL. NULL only
 * when out of memory (as cJSON's constructors). */
cJSON *cg_json_string(const char *s);
/* As cg_json_string, but "" is null too (optional names: algorithm). */
cJSON *cg_json_string_or_null(const char *s);
/* A number item; null when v is not finite. */
cJSON *cg_json_number(double v);
/* An integer printed in full digits. */
cJSON *cg_json_int(int64_t v);
/* Adds item to obj under the key `key` sanitised; deletes item and
 * returns -1 when out of memory (or when item is NULL). */
int cg_json_add(cJSON *obj, const char *key, cJSON *item);

/* ---- the writer ------------------------------------------------------------ */

#define CG_JW_MAX_DEPTH 32

struct cg_jw {
    cJSON *root;                   /* the document; NULL until its first value */
    cJSON *open[CG_JW_MAX_DEPTH];  /* the open containers, outermost first */
    int depth;                     /* how many are open */
    const char *key;               /* cg_jw_key's, for the next value */
    int oom;                       /* out of memory or misuse: no text comes out */
};

void cg_jw_init(struct cg_jw *w);
void cg_jw_free(struct cg_jw *w);

/* Every value goes into the innermost open container: under `key` in an
 * object, appended in an array (key NULL); the first value of the
 * document becomes its root (key NULL). */
/* cg_jw_key names the next value written with key NULL: for a value whose
 * kind a condition or a callee decides (`cg_jw_key(w, "timing"); if (timed)
 * write_timing(w) else cg_jw_null(w, NULL);`). The string must live until
 * that value is written. */
void cg_jw_key(struct cg_jw *w, const char *key);
void cg_jw_obj(struct cg_jw *w, const char *key); /* opens an object */
void cg_jw_arr(struct cg_jw *w, const char *key); /* opens an array */
void cg_jw_end(struct cg_jw *w);                  /* closes the innermost */
void cg_jw_str(struct cg_jw *w, const char *key, const char *s); /* NULL: null */
void cg_jw_int(struct cg_jw *w, const char *key, int64_t v);
void cg_jw_uint(struct cg_jw *w, const char *key, uint64_t v);
void cg_jw_num(struct cg_jw *w, const char *key, double v); /* not finite: null */
void cg_jw_bool(struct cg_jw *w, const char *key, int v);
void cg_jw_null(struct cg_jw *w, const char *key);
/* A cJSON value: cg_jw_item takes ownership of item, cg_jw_copy copies it;
 * NULL writes null. The strings of a tree the caller built are the
 * caller's to have made with cg_json_string. */
void cg_jw_item(struct cg_jw *w, const char *key, cJSON *item);
void cg_jw_copy(struct cg_jw *w, const char *key, const cJSON *item);

/* The whole document printed, with a trailing newline, malloc'd (free()),
 * its length in *len; NULL when out of memory, when a container is still
 * open or nothing was written. pretty: indented (tabs, cJSON_Print), else
 * one line. */
char *cg_jw_text(struct cg_jw *w, int pretty, size_t *len);

/* ---- typed access ------------------------------------------------------- */

/* The member `key` of obj (or the value at a dotted path of keys,
 * "timing.median_ns"), of the named type, in *out. One convention for
 * all: 0 when it is there with that type (and, for integers, a whole number
 * in range); -1 when it is absent or null (*out untouched, so a default
 * set before the call stays); -2 when it is there with another type or out
 * of range. obj NULL or not an object: -1. */
int cg_jget_str(const cJSON *obj, const char *key, const char **out);
int cg_jget_num(const cJSON *obj, const char *key, double *out); /* finite */
int cg_jget_int(const cJSON *obj, const char *key, long long lo, long long hi, long long *out);
int cg_jget_bool(const cJSON *obj, const char *key, int *out);

/* The value at a dotted path ("timing.median_ns") under obj, or NULL. */
const cJSON *cg_jget_path(const cJSON *obj, const char *path);

#endif
