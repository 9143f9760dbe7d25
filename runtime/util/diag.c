/* diag.c - located diagnostics in GCC form, internal-error panics, and
 * whole-file reads that report with them (cg_read_file). */
#include "util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define CG_MAX_ERRORS 20

void cg_diag_init(struct cg_diag *d, FILE *sink)
{
    d->sink = sink != NULL ? sink : stderr;
    d->errors = 0;
    d->max_errors = CG_MAX_ERRORS;
}

static void print_located(FILE *sink, const char *file, struct cg_pos pos, const char *kind,
                          const char *fmt, va_list ap)
{
    if (file == NULL) {
        file = "collgen";
    }
    if (pos.line > 0 && pos.col > 0) {
        fprintf(sink, "%s:%d:%d: %s: ", file, pos.line, pos.col, kind);
    } else if (pos.line > 0) {
        fprintf(sink, "%s:%d: %s: ", file, pos.line, kind);
    } else {
        fprintf(sink, "%s: %s: ", file, kind);
    }
    vfprintf(sink, fmt, ap);
    fputc('\n', sink);
}

void cg_verror(struct cg_diag *d, const char *file, struct cg_pos pos, const char *fmt,
               va_list ap)
{
    d->errors++;
    if (d->errors > d->max_errors) {
        if (d->errors == d->max_errors + 1) {
            fprintf(d->sink, "%s: note: too many errors, stopping\n",
                    file != NULL ? file : "collgen");
        }
        return;
    }
    print_located(d->sink, file, pos, "error", fmt, ap);
}

void cg_error(struct cg_diag *d, const char *file, struct cg_pos pos, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cg_verror(d, file, pos, fmt, ap);
    va_end(ap);
}

void cg_note(struct cg_diag *d, const char *file, struct cg_pos pos, const char *fmt, ...)
{
    if (d->errors > d->max_errors) {
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    print_located(d->sink, file, pos, "note", fmt, ap);
    va_end(ap);
}

void cg_panic(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("collgen: internal error: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(70);
}

char *cg_read_file(struct cg_arena *arena, struct cg_diag *d, const char *path, size_t *len)
{
    struct cg_pos none = { 0, 0 };
    size_t n = 0;
    char *buf = cg_slurp(path, &n);
    if (buf == NULL && errno == ENOMEM) {
        cg_panic("out of memory reading %s", path);
    }
    if (buf == NULL && errno == EISDIR) {
        cg_error(d, path, none, "cannot read: it is a directory, not a file (name the .json "
                 "files in it)");
        return NULL;
    }
    if (buf == NULL) {
        cg_error(d, path, none, "cannot read: %s", errno == EIO ? "I/O error" : strerror(errno));
        return NULL;
    }
    char *copy = cg_arena_alloc(arena, n + 1);
    memcpy(copy, buf, n + 1);
    free(buf);
    *len = n;
    return copy;
}
