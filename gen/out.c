/* out.c - see out.h. */
#include "out.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base.h"

void cg_out_init(struct cg_out *o)
{
    memset(o, 0, sizeof(*o));
}

void cg_out_fini(struct cg_out *o)
{
    free(o->buf);
    memset(o, 0, sizeof(*o));
}

static void vappend(struct cg_out *o, const char *fmt, va_list ap)
{
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    if (n < 0) {
        cg_panic("bad format");
    }
    if (o->len + (size_t)n + 1 > o->cap) {
        o->cap = (o->len + (size_t)n + 1) * 2;
        o->buf = realloc(o->buf, o->cap);
        if (o->buf == NULL) {
            cg_panic("out of memory");
        }
    }
    vsnprintf(o->buf + o->len, (size_t)n + 1, fmt, ap);
    o->len += (size_t)n;
}

static void append(struct cg_out *o, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vappend(o, fmt, ap);
    va_end(ap);
}

void cg_out_raw(struct cg_out *o, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vappend(o, fmt, ap);
    va_end(ap);
}

void cg_out_line(struct cg_out *o, const char *fmt, ...)
{
    append(o, "%*s", o->indent * 4, "");
    va_list ap;
    va_start(ap, fmt);
    vappend(o, fmt, ap);
    va_end(ap);
    append(o, "\n");
}

void cg_out_open(struct cg_out *o, const char *fmt, ...)
{
    append(o, "%*s", o->indent * 4, "");
    va_list ap;
    va_start(ap, fmt);
    vappend(o, fmt, ap);
    va_end(ap);
    append(o, " {\n");
    o->indent++;
}

void cg_out_close(struct cg_out *o)
{
    o->indent--;
    append(o, "%*s}\n", o->indent * 4, "");
}

void cg_out_close_open(struct cg_out *o, const char *fmt, ...)
{
    o->indent--;
    append(o, "%*s} ", o->indent * 4, "");
    va_list ap;
    va_start(ap, fmt);
    vappend(o, fmt, ap);
    va_end(ap);
    append(o, " {\n");
    o->indent++;
}

void cg_out_blank(struct cg_out *o)
{
    if (o->len >= 2 && !(o->buf[o->len - 1] == '\n' && o->buf[o->len - 2] == '\n') &&
        o->buf[o->len - 2] != '{') {
        append(o, "\n");
    }
}

int cg_out_write_file(const struct cg_out *o, const char *path, int *changed)
{
    *changed = 0;
    FILE *f = fopen(path, "rb");
    if (f != NULL) {
        char *old = malloc(o->len + 2);
        size_t n = old ? fread(old, 1, o->len + 1, f) : 0;
        fclose(f);
        int same = old != NULL && n == o->len && memcmp(old, o->buf ? o->buf : "", o->len) == 0;
        free(old);
        if (same) {
            return 0;
        }
    }
    char tmp[4096];
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    f = fopen(tmp, "wb");
    if (f == NULL) {
        return -1;
    }
    size_t w = o->len ? fwrite(o->buf, 1, o->len, f) : 0;
    int bad = w != o->len;
    bad |= fclose(f) != 0;
    if (bad || rename(tmp, path) != 0) {
        int e = errno;
        remove(tmp);
        errno = e ? e : EIO;
        return -1;
    }
    *changed = 1;
    return 0;
}
