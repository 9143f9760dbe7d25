/* out.h - a writer for generated text: indentation, blank lines, and files
 * replaced atomically and only when their contents change (so ninja's
 * restat sees unchanged outputs and nothing half-written is ever left). */
#ifndef CG_OUT_H
#define CG_OUT_H

#include <stddef.h>

struct cg_out {
    char *buf;  /* text so far */
    size_t len; /* bytes used */
    size_t cap; /* bytes allocated */
    int indent; /* current depth, 4 spaces each */
};

void cg_out_init(struct cg_out *o);
void cg_out_fini(struct cg_out *o);
/* Appends text as is (no indentation, no newline). */
void cg_out_raw(struct cg_out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* One indented line. */
void cg_out_line(struct cg_out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A line ending in '{', then one level deeper. */
void cg_out_open(struct cg_out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* One level out, then "}". */
void cg_out_close(struct cg_out *o);
/* One level out, "} " and a line ending in '{' ("} else {"), one level in. */
void cg_out_close_open(struct cg_out *o, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void cg_out_blank(struct cg_out *o);
/* Writes the text to path unless the file already holds exactly it.
 * Returns 0, or -1 with errno set. *changed says whether it wrote. */
int cg_out_write_file(const struct cg_out *o, const char *path, int *changed);

#endif
