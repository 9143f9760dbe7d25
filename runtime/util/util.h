/* util.h - what the generator (gen/) and the harness (harness/) share, and
 * nothing of either: source positions, the arena, located diagnostics,
 * whole-file reads, write-then-rename, FNV-1a 64 (runtime/util/README.md).
 *
 * Rules: no MPI, no CUDA, no state of its own; C11 and POSIX. gen/ and
 * harness/ both include this folder; it includes neither of them, so the
 * harness never needs the generator's headers (it reads what the generator
 * wrote, emitted/registry.json).
 */
#ifndef CG_UTIL_H
#define CG_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* A place in a source file (a schedule, a descriptor), 1-based. line == 0 means "no position". */
struct cg_pos {
    int line; /* 1-based line */
    int col;  /* 1-based column, in bytes */
};

/* Bump allocator: everything a pass builds lives here and is freed at once. */
struct cg_arena_block;
struct cg_arena {
    struct cg_arena_block *head; /* newest block first */
};

void *cg_arena_alloc(struct cg_arena *a, size_t n); /* zeroed; never NULL (panics) */
char *cg_arena_strdup(struct cg_arena *a, const char *s);
char *cg_arena_printf(struct cg_arena *a, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void cg_arena_fini(struct cg_arena *a);

/* Diagnostics in GCC form: "file:line:col: error: message". */
struct cg_diag {
    FILE *sink;     /* where messages go (stderr by default) */
    int errors;     /* errors reported so far */
    int max_errors; /* stop reporting (not counting) beyond this */
};

void cg_diag_init(struct cg_diag *d, FILE *sink);
void cg_error(struct cg_diag *d, const char *file, struct cg_pos pos, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void cg_verror(struct cg_diag *d, const char *file, struct cg_pos pos, const char *fmt,
               va_list ap);
/* A note attached to the previous error ("first defined here"). */
void cg_note(struct cg_diag *d, const char *file, struct cg_pos pos, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Internal error (a bug, out of memory): print and exit(70). */
void cg_panic(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/* ---- files and hashing (files.c) ---- */

/* Reads a whole file into a NUL-terminated malloc'd buffer (*len its bytes,
 * when len is not NULL). NULL with errno set on failure (EISDIR for a
 * directory, ENOMEM, EIO). */
char *cg_slurp(const char *path, size_t *len);

/* Reads a whole file into a NUL-terminated arena buffer. Returns NULL and
 * reports "file: error: cannot read: <strerror>" on failure. */
char *cg_read_file(struct cg_arena *arena, struct cg_diag *d, const char *path, size_t *len);

/* Writes text[0..len) to path.tmp, fsyncs it and renames it to path, so
 * that path holds the old contents or the new, never half. Returns 0, or -1
 * with errno set (path.tmp removed). */
int cg_write_atomic(const char *path, const char *text, size_t len);

/* FNV-1a, 64 bits (the fingerprint of schedules, descriptors and records). */
uint64_t cg_fnv1a64(const void *data, size_t len);
/* FNV-1a 64 of a file's bytes as 16 lower-case hex digits (bench's
 * schedule_hash). Returns 0, or -1 with errno set. */
int cg_fnv1a64_file(const char *path, char hex[17]);

#endif
