/* run_json.c - key-value lists for the JSON writer (runtime/util/jsonio.h)
 * of campaign.json, job files and the runner's own records; reading and
 * repairing points.jsonl.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "run_internal.h"

/* ---- writer ------------------------------------------------------------- */

/* The JSON itself is runtime/util/jsonio.c's writer; a key-value list (an
 * environment, labels, knobs) is the runner's own shape. */
void cg_jw_kv(struct cg_jw *w, const char *key, const struct cg_kv *kv, int n)
{
    cg_jw_obj(w, key);
    for (int i = 0; i < n; i++) {
        cg_jw_str(w, kv[i].key.s, kv[i].value.s);
    }
    cg_jw_end(w);
}

/* ---- points.jsonl ------------------------------------------------------- */

long long cg_points_repair(const char *path, FILE *log)
{
    int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0) {
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    off_t size = st.st_size, end = size;
    /* Walk back to the last newline; everything after it is a line whose
     * writer died before finishing it. */
    char buf[4096];
    while (end > 0) {
        off_t from = end > (off_t)sizeof(buf) ? end - (off_t)sizeof(buf) : 0;
        ssize_t k = pread(fd, buf, (size_t)(end - from), from);
        if (k != end - from) {
            int e = k < 0 ? errno : EIO;
            close(fd);
            errno = e;
            return -1;
        }
        int found = -1;
        for (ssize_t i = k - 1; i >= 0; i--) {
            if (buf[i] == '\n') {
                found = (int)i;
                break;
            }
        }
        if (found >= 0) {
            end = from + found + 1;
            break;
        }
        end = from;
    }
    if (end < size) {
        if (ftruncate(fd, end) != 0) {
            int e = errno;
            close(fd);
            errno = e;
            return -1;
        }
        if (log != NULL) {
            fprintf(
                log,
                "collgen run: %s: cut a partial last line (%lld bytes; its writer was killed)\n",
                path, (long long)(size - end));
        }
    }
    if (close(fd) != 0) {
        return -1;
    }
    return (long long)end;
}

int cg_points_scan(const char *path, long long from, FILE *log,
                   void (*fn)(const char *id, const char *status, const char *reason, void *ctx),
                   void *ctx)
{
    FILE *f = fopen(path, "re");
    if (f == NULL) {
        return -1;
    }
    if (from > 0 && fseeko(f, (off_t)from, SEEK_SET) != 0) {
        fclose(f);
        return -1;
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    int records = 0;
    long long lineno = 0;
    while ((n = getline(&line, &cap, f)) > 0) {
        lineno++;
        if (line[n - 1] != '\n') {
            break; /* a partial line being written: not a record yet */
        }
        line[n - 1] = '\0';
        if (line[0] == '\0') {
            continue;
        }
        cJSON *rec = cJSON_Parse(line);
        const cJSON *id = rec ? cJSON_GetObjectItemCaseSensitive(rec, "point_id") : NULL;
        if (!cJSON_IsString(id)) {
            if (log != NULL) {
                fprintf(
                    log,
                    "collgen run: %s: a line from byte %lld on is not a record; ignored: %.80s\n",
                    path, from, line);
            }
            cJSON_Delete(rec);
            continue;
        }
        const cJSON *st = cJSON_GetObjectItemCaseSensitive(rec, "status");
        const cJSON *why = cJSON_GetObjectItemCaseSensitive(rec, "reason");
        fn(id->valuestring, cJSON_IsString(st) ? st->valuestring : "?",
           cJSON_IsString(why) ? why->valuestring : NULL, ctx);
        records++;
        cJSON_Delete(rec);
    }
    int err = ferror(f);
    free(line);
    fclose(f);
    if (err) {
        errno = EIO;
        return -1;
    }
    return records;
}

long long cg_points_retire(const char *path, const char *retired, const char *const *statuses,
                           FILE *log)
{
    FILE *f = fopen(path, "re");
    if (f == NULL) {
        return -1;
    }
    char *line = NULL;
    size_t cap = 0, klen = 0, kcap = 0, mlen = 0, mcap = 0;
    char *kept = NULL, *moved = NULL;
    ssize_t n;
    long long count = 0;
    int oom = 0;
    while ((n = getline(&line, &cap, f)) > 0 && !oom) {
        cJSON *rec = cJSON_Parse(line);
        const cJSON *st = rec ? cJSON_GetObjectItemCaseSensitive(rec, "status") : NULL;
        int retire = 0;
        for (int i = 0; statuses[i] != NULL && cJSON_IsString(st); i++) {
            retire |= strcmp(st->valuestring, statuses[i]) == 0;
        }
        cJSON_Delete(rec);
        char **buf = retire ? &moved : &kept;
        size_t *len = retire ? &mlen : &klen, *bcap = retire ? &mcap : &kcap;
        if (*len + (size_t)n + 1 > *bcap) {
            *bcap = 2 * (*len + (size_t)n + 1);
            char *g = realloc(*buf, *bcap);
            if (g == NULL) {
                oom = 1;
                break;
            }
            *buf = g;
        }
        memcpy(*buf + *len, line, (size_t)n);
        *len += (size_t)n;
        (*buf)[*len] = '\0';
        count += retire;
    }
    int err = ferror(f) || oom;
    free(line);
    fclose(f);
    int rc = err ? -1 : 0;
    if (rc == 0 && count > 0) {
        /* Kept first where they cannot be lost, then points.jsonl without
         * them, in one rename: a crash between the two leaves copies in
         * `retired`, never a record lost. */
        int fd = open(retired, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        if (fd < 0 || write(fd, moved, mlen) != (ssize_t)mlen || fsync(fd) != 0) {
            rc = -1;
        }
        if (fd >= 0 && close(fd) != 0) {
            rc = -1;
        }
        if (rc == 0 && cg_write_atomic(path, kept != NULL ? kept : "", klen) != 0) {
            rc = -1;
        }
        if (rc == 0 && log != NULL) {
            fprintf(log, "collgen run: moved %lld records to %s: their points run again\n", count,
                    retired);
        }
    }
    free(kept);
    free(moved);
    if (err) {
        errno = oom ? ENOMEM : EIO;
    }
    return rc == 0 ? count : -1;
}
