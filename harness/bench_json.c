/* bench_json.c - appending a record line, creating directories, formatting
 * a message (the JSON itself is runtime/util/jsonio.c's writer; whole
 * files, atomic writes and FNV-1a 64: runtime/util/files.c).
 */
#define _POSIX_C_SOURCE 200809L
#include "bench.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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
