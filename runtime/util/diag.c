/* diag.c - located diagnostics in GCC form and internal-error panics. */
#include "util.h"

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
