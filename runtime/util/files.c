/* files.c - whole-file reads, write-then-rename and FNV-1a 64 (util.h).
 * Depends on nothing else here, so that bench and bench_cuda link it alone
 * (runtime/mpi.ninja, runtime/cuda.ninja). */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* fsync, O_CLOEXEC under -std=c11 */
#endif
#include "util.h"

#include <errno.h>
#include <stdint.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

char *cg_slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        return NULL;
    }
    /* Why: fopen succeeds on a directory and only reading fails, with
     * EISDIR, which would read as "I/O error". */
    struct stat st;
    if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
        fclose(f);
        errno = EISDIR;
        return NULL;
    }
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    for (;;) {
        if (buf == NULL) {
            fclose(f);
            errno = ENOMEM;
            return NULL;
        }
        n += fread(buf + n, 1, cap - n - 1, f);
        if (n < cap - 1) {
            break;
        }
        char *grown = cap <= SIZE_MAX / 2 ? realloc(buf, cap * 2) : NULL;
        if (grown == NULL) {
            free(buf);
        }
        buf = grown;
        cap *= 2;
    }
    int err = ferror(f);
    fclose(f);
    if (err) {
        free(buf);
        errno = EIO;
        return NULL;
    }
    buf[n] = '\0';
    if (len != NULL) {
        *len = n;
    }
    return buf;
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

int cg_fnv1a64_file(const char *path, char hex[17])
{
    size_t len = 0;
    char *text = cg_slurp(path, &len);
    if (text == NULL) {
        return -1;
    }
    snprintf(hex, 17, "%016llx", (unsigned long long)cg_fnv1a64(text, len));
    free(text);
    return 0;
}
