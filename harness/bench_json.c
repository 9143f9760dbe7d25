/* bench_json.c - a small JSON writer for records and run metadata, and
 * appends (whole files, atomic writes and FNV-1a 64: runtime/util/files.c).
 *
 * Why our own writer rather than cJSON's printer: records are written field
 * by field in FORMATS.md's order (people read them), strings come from the
 * environment and /proc and must be escaped into valid UTF-8 whatever their
 * bytes, and non-finite numbers must become null rather than invalid JSON.
 */
#define _POSIX_C_SOURCE 200809L
#include "bench.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void jw_init(struct jw *w)
{
    memset(w, 0, sizeof(*w));
    w->first[0] = 1;
}

void jw_free(struct jw *w)
{
    free(w->buf);
    memset(w, 0, sizeof(*w));
}

static void put(struct jw *w, const char *s, size_t n)
{
    if (w->oom) {
        return;
    }
    if (w->len + n + 1 > w->cap) {
        size_t cap = (w->cap > 0) ? w->cap : 1024;
        char *nb;
        while (w->len + n + 1 > cap) {
            cap *= 2;
        }
        nb = realloc(w->buf, cap);
        if (nb == NULL) {
            w->oom = 1;
            return;
        }
        w->buf = nb;
        w->cap = cap;
    }
    memcpy(w->buf + w->len, s, n);
    w->len += n;
    w->buf[w->len] = '\0';
}

static void puts_(struct jw *w, const char *s)
{
    put(w, s, strlen(s));
}

/* Before any value or key: the comma that separates it from the previous one. */
static void sep(struct jw *w)
{
    if (w->after_key) {
        w->after_key = 0;
        return;
    }
    if (!w->first[w->depth]) {
        put(w, ",", 1);
    }
    w->first[w->depth] = 0;
}

static void open_(struct jw *w, const char *c)
{
    sep(w);
    puts_(w, c);
    if (w->depth + 1 < (int)sizeof(w->first)) {
        w->depth++;
        w->first[w->depth] = 1;
    } else {
        w->oom = 1; /* nesting deeper than anything bench writes */
    }
}

static void close_(struct jw *w, const char *c)
{
    if (w->depth > 0) {
        w->depth--;
    }
    puts_(w, c);
}

void jw_obj(struct jw *w) { open_(w, "{"); }
void jw_obj_end(struct jw *w) { close_(w, "}"); }
void jw_arr(struct jw *w) { open_(w, "["); }
void jw_arr_end(struct jw *w) { close_(w, "]"); }

/* Length of the valid UTF-8 sequence at s (1..4), or 0 when invalid. */
static int utf8_len(const unsigned char *s)
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
        return 0;
    }
    for (int i = 1; i < n; i++) {
        if ((s[i] & 0xC0) != 0x80) {
            return 0; /* also stops at the terminating NUL */
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

static void put_string(struct jw *w, const char *s)
{
    const unsigned char *u = (const unsigned char *)s;

    put(w, "\"", 1);
    while (*u != '\0') {
        char esc[8];
        int n;
        switch (*u) {
        case '"':
            puts_(w, "\\\"");
            u++;
            continue;
        case '\\':
            puts_(w, "\\\\");
            u++;
            continue;
        case '\n':
            puts_(w, "\\n");
            u++;
            continue;
        case '\r':
            puts_(w, "\\r");
            u++;
            continue;
        case '\t':
            puts_(w, "\\t");
            u++;
            continue;
        default:
            break;
        }
        if (*u < 0x20 || *u == 0x7F) {
            snprintf(esc, sizeof(esc), "\\u%04x", (unsigned)*u);
            puts_(w, esc);
            u++;
            continue;
        }
        n = utf8_len(u);
        if (n == 0) {
            puts_(w, "\\ufffd"); /* a byte that is not UTF-8: the replacement character */
            u++;
            continue;
        }
        put(w, (const char *)u, (size_t)n);
        u += n;
    }
    put(w, "\"", 1);
}

void jw_key(struct jw *w, const char *key)
{
    sep(w);
    put_string(w, key);
    put(w, ":", 1);
    w->after_key = 1;
}

void jw_str(struct jw *w, const char *s)
{
    sep(w);
    if (s == NULL) {
        puts_(w, "null");
        return;
    }
    put_string(w, s);
}

void jw_int(struct jw *w, long long v)
{
    char t[32];
    sep(w);
    snprintf(t, sizeof(t), "%lld", v);
    puts_(w, t);
}

void jw_uint(struct jw *w, unsigned long long v)
{
    char t[32];
    sep(w);
    snprintf(t, sizeof(t), "%llu", v);
    puts_(w, t);
}

void jw_num(struct jw *w, double v)
{
    char t[40];
    sep(w);
    if (!isfinite(v)) {
        puts_(w, "null");
        return;
    }
    /* Why %.15g: 15 significant digits round-trip every value printed here
     * (times in ns below 1e15, ratios) without 0.1000000000000001 noise;
     * %g never prints a form JSON rejects for finite values. */
    snprintf(t, sizeof(t), "%.15g", v);
    puts_(w, t);
}

void jw_bool(struct jw *w, int v)
{
    sep(w);
    puts_(w, v ? "true" : "false");
}

void jw_null(struct jw *w)
{
    sep(w);
    puts_(w, "null");
}

void jw_json(struct jw *w, const cJSON *item)
{
    char *text;

    if (item == NULL) {
        jw_null(w);
        return;
    }
    text = cJSON_PrintUnformatted(item);
    if (text == NULL) {
        w->oom = 1;
        return;
    }
    sep(w);
    puts_(w, text);
    cJSON_free(text);
}

/* ---- files --------------------------------------------------------------- */

static int write_all(int fd, const char *data, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd, data, len);
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            return -1;
        }
        data += n;
        len -= (size_t)n;
    }
    return 0;
}

int bench_append_line(const char *path, const char *data, size_t len)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0644);
    int saved;

    if (fd < 0) {
        return -1;
    }
    /* Why the whole line in one write(): with O_APPEND it lands at the
     * end in one piece, after any line another process appended, so a
     * reader or a resumed run sees whole records (a crash can cut at most
     * the last one). write_all loops only when the kernel writes short,
     * which on a regular file means the disk is full and the next write
     * reports the error. */
    if (write_all(fd, data, len) != 0 || fsync(fd) != 0) {
        saved = errno;
        close(fd);
        errno = saved;
        return -1;
    }
    return close(fd);
}

int bench_mkdirs(const char *path)
{
    char *p = strdup(path);

    if (p == NULL) {
        return -1;
    }
    for (char *s = p + 1; *s != '\0'; s++) {
        if (*s == '/') {
            *s = '\0';
            if (mkdir(p, 0755) != 0 && errno != EEXIST) {
                free(p);
                return -1;
            }
            *s = '/';
        }
    }
    if (mkdir(p, 0755) != 0 && errno != EEXIST) {
        free(p);
        return -1;
    }
    free(p);
    return 0;
}

void bench_fmt(char *dst, size_t len, const char *fmt, ...)
{
    va_list ap;

    if (len == 0) {
        return;
    }
    va_start(ap, fmt);
    vsnprintf(dst, len, fmt, ap);
    va_end(ap);
}
