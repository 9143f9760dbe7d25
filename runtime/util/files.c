/* files.c - whole-file reads, write-then-rename and FNV-1a 64 (util.h). */
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

char *cg_read_file(struct cg_arena *arena, struct cg_diag *d, const char *path, size_t *len)
{
    struct cg_pos none = { 0, 0 };
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        cg_error(d, path, none, "cannot read: %s", strerror(errno));
        return NULL;
    }
    /* Why: fopen succeeds on a directory and only reading fails, with
     * EISDIR, which would read as "I/O error". */
    struct stat st;
    if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
        fclose(f);
        cg_error(d, path, none, "cannot read: it is a directory, not a file (name the .json "
                 "files in it)");
        return NULL;
    }
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    for (;;) {
        if (buf == NULL) {
            fclose(f);
            cg_panic("out of memory reading %s", path);
        }
        n += fread(buf + n, 1, cap - n - 1, f);
        if (n < cap - 1) {
            break;
        }
        cap *= 2;
        buf = realloc(buf, cap);
    }
    int err = ferror(f);
    fclose(f);
    if (err) {
        free(buf);
        cg_error(d, path, none, "cannot read: I/O error");
        return NULL;
    }
    char *copy = cg_arena_alloc(arena, n + 1);
    memcpy(copy, buf, n);
    free(buf);
    *len = n;
    return copy;
}

uint64_t cg_fnv1a64(const void *data, size_t len)
{
    const unsigned char *b = data;
    uint64_t h = 14695981039346656037ULL;
    for (size_t i = 0; i < len; i++) {
        h ^= b[i];
        h *= 1099511628211ULL;
    }
    return h;
}

int cg_write_atomic(const char *path, const char *text, size_t len)
{
    size_t n = strlen(path) + 8;
    char *tmp = malloc(n);
    if (tmp == NULL) {
        errno = ENOMEM;
        return -1;
    }
    snprintf(tmp, n, "%s.tmp", path);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        free(tmp);
        return -1;
    }
    size_t done = 0;
    while (done < len) {
        ssize_t k = write(fd, text + done, len - done);
        if (k < 0) {
            if (errno == EINTR) {
                continue;
            }
            int e = errno;
            close(fd);
            unlink(tmp);
            free(tmp);
            errno = e;
            return -1;
        }
        done += (size_t)k;
    }
    /* Why fsync before rename: after a crash the new name must not point at
     * an empty file. */
    if (fsync(fd) != 0 || close(fd) != 0) {
        int e = errno;
        unlink(tmp);
        free(tmp);
        errno = e;
        return -1;
    }
    if (rename(tmp, path) != 0) {
        int e = errno;
        unlink(tmp);
        free(tmp);
        errno = e;
        return -1;
    }
    free(tmp);
    return 0;
}
