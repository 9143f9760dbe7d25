/* nccl_debug.c - what NCCL says it ran: its debug output, redirected to a
 * file of the job, and the tuning lines read back per point.
 *
 * Why the debug output: NCCL has no query for the algorithm and protocol a
 * call used; with NCCL_DEBUG=INFO and the TUNING subsystem, rank 0 of a
 * communicator prints one line per collective as it plans it (NCCL 2.19
 * and later, enqueue.cc):
 *
 *   host:pid:tid [0] NCCL INFO AllReduce: 8192 Bytes -> Algo RING proto LL channel{Lo..Hi}={0..1}
 *
 * (older versions print numbers: "Algo 1 proto 2 time 12.3", mapped below).
 * The line is written while the call is enqueued, on the host, so after a
 * point's calls it is in the file: NCCL's debug file is unbuffered. A
 * 1-rank communicator prints nothing (NCCL copies locally without choosing
 * an algorithm), nor does ncclSend/ncclRecv; such points are
 * "unobservable", never a copy of the request.
 */
#define _POSIX_C_SOURCE 200809L
#include "bench_cuda.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

/* Case-insensitive: whether the comma-separated list holds `word`. */
static int list_has(const char *list, const char *word)
{
    size_t n = strlen(word);
    const char *s = list;

    while (*s != '\0') {
        size_t len = strcspn(s, ",");
        if (len == n && strncasecmp(s, word, n) == 0) {
            return 1;
        }
        s += len;
        if (*s == ',') {
            s++;
        }
    }
    return 0;
}

void bc_nccl_debug_setup(struct bc_ctx *c)
{
    const struct bench_job *job = c->base.job;
    const char *level = getenv("NCCL_DEBUG");
    const char *subsys = getenv("NCCL_DEBUG_SUBSYS");
    const char *file = getenv("NCCL_DEBUG_FILE");
    const char *slash = strrchr(job->out_run_meta, '/');
    char note[512] = "";
    char sub[256];
    int dlen = (slash != NULL) ? (int)(slash - job->out_run_meta) : 0;

    c->nccl_log[0] = '\0';
    c->nccl_debug_note[0] = '\0';
    if (c->base.rank != 0) {
        return;
    }
    if (slash != NULL) {
        bench_fmt(c->nccl_log, sizeof(c->nccl_log), "%.*s/nccl-debug-%ld.log", dlen,
                  job->out_run_meta, job->run_id);
    } else {
        bench_fmt(c->nccl_log, sizeof(c->nccl_log), "nccl-debug-%ld.log", job->run_id);
    }
    /* Why INFO unless TRACE: the tuning lines are INFO; TRACE prints them
     * too. Any other level (VERSION, WARN) would hide them. */
    if (level == NULL || (strcasecmp(level, "INFO") != 0 && strcasecmp(level, "TRACE") != 0)) {
        setenv("NCCL_DEBUG", "INFO", 1);
        bench_fmt(note, sizeof(note), "NCCL_DEBUG=INFO (was %s)", (level != NULL) ? level : "unset");
    }
    if (subsys == NULL || subsys[0] == '^') {
        /* Unset means INIT,BOOTSTRAP,ENV (many lines, none needed); an
         * exclusion list might exclude TUNING. */
        snprintf(sub, sizeof(sub), "TUNING");
    } else if (list_has(subsys, "TUNING") || list_has(subsys, "ALL")) {
        snprintf(sub, sizeof(sub), "%s", subsys);
    } else {
        bench_fmt(sub, sizeof(sub), "%s,TUNING", subsys);
    }
    if (subsys == NULL || strcmp(sub, subsys) != 0) {
        setenv("NCCL_DEBUG_SUBSYS", sub, 1);
        bench_fmt(note + strlen(note), sizeof(note) - strlen(note), "%sNCCL_DEBUG_SUBSYS=%s (was %s)",
                  (note[0] != '\0') ? ", " : "", sub, (subsys != NULL) ? subsys : "unset");
    }
    if (file != NULL && strcmp(file, c->nccl_log) != 0) {
        fprintf(stderr, "bench_cuda: NCCL_DEBUG_FILE=%s replaced by %s (rank 0), whose tuning lines "
                        "say what NCCL ran\n", file, c->nccl_log);
    }
    setenv("NCCL_DEBUG_FILE", c->nccl_log, 1);
    bench_fmt(note + strlen(note), sizeof(note) - strlen(note), "%sNCCL_DEBUG_FILE=%s (was %s)",
              (note[0] != '\0') ? ", " : "", c->nccl_log, (file != NULL) ? file : "unset");
    bench_fmt(c->nccl_debug_note, sizeof(c->nccl_debug_note), "rank 0: %s", note);
}

long bc_nccl_debug_offset(const struct bc_ctx *c)
{
    struct stat st;

    if (c->nccl_log[0] == '\0' || stat(c->nccl_log, &st) != 0) {
        return -1;
    }
    return (long)st.st_size;
}

static void lower(char *s)
{
    for (; *s != '\0'; s++) {
        *s = (char)tolower((unsigned char)*s);
    }
}

/* Older NCCL prints numbers (its NCCL_ALGO_* and NCCL_PROTO_* order). */
static void name_numbers(char *algo, size_t alen, char *proto, size_t plen)
{
    static const char *const algos[] = {"tree", "ring", "collnet_direct", "collnet_chain",
                                        "nvls", "nvls_tree", "pat"};
    static const char *const protos[] = {"ll", "ll128", "simple"};
    char *end;
    long a = strtol(algo, &end, 10);

    if (*algo != '\0' && *end == '\0' && a >= 0 && a < 7) {
        snprintf(algo, alen, "%s", algos[a]);
    }
    a = strtol(proto, &end, 10);
    if (*proto != '\0' && *end == '\0' && a >= 0 && a < 3) {
        snprintf(proto, plen, "%s", protos[a]);
    }
}

void bc_nccl_debug_parse(const char *path, long from, const char *func, int p,
                         struct bc_nccl_tuning *t)
{
    FILE *f;
    char line[4096];
    size_t flen = (func != NULL) ? strlen(func) : 0;

    memset(t, 0, sizeof(*t));
    if (func == NULL) {
        snprintf(t->why_none, sizeof(t->why_none),
                 "alltoall is ncclSend/ncclRecv to every peer in one group: NCCL's "
                 "point-to-point path reports no algorithm");
    }
    f = (path != NULL && path[0] != '\0') ? fopen(path, "r") : NULL;
    if (f == NULL) {
        if (func != NULL) {
            bench_fmt(t->why_none, sizeof(t->why_none),
                      "NCCL wrote no debug file (%s): what it ran is not known",
                      (path != NULL && path[0] != '\0') ? path : "none set");
        }
        return;
    }
    if (from > 0 && fseek(f, from, SEEK_SET) != 0) {
        rewind(f);
    }
    while (fgets(line, sizeof(line), f) != NULL) {
        char *info = strstr(line, " NCCL INFO ");
        char algo[64];
        char proto[64];
        char chan[64] = "";
        long long bytes = 0;
        char *at;
        int k;

        line[strcspn(line, "\n")] = '\0';
        if (strstr(line, " NCCL WARN ") != NULL) {
            t->warnings++;
            fprintf(stderr, "%s\n", line); /* the job's log keeps NCCL's warnings */
            continue;
        }
        if (info == NULL || func == NULL) {
            continue;
        }
        at = info + strlen(" NCCL INFO ");
        if (strncmp(at, func, flen) != 0 || at[flen] != ':' ||
            sscanf(at + flen + 1, " %lld Bytes -> Algo %63s proto %63s", &bytes, algo, proto) != 3) {
            continue;
        }
        {
            char *ch = strstr(at, "channel{Lo..Hi}={");
            if (ch != NULL) {
                size_t n;
                ch += strlen("channel{Lo..Hi}={");
                n = strcspn(ch, "}");
                bench_fmt(chan, sizeof(chan), "%.*s", (int)((n < 60) ? n : 60), ch);
            }
        }
        name_numbers(algo, sizeof(algo), proto, sizeof(proto));
        lower(algo);
        lower(proto);
        if (t->lines == 0) {
            bench_fmt(t->first_line, sizeof(t->first_line), "%s", at);
        }
        t->lines++;
        for (k = 0; k < t->nseen; k++) {
            if (strcmp(t->seen[k].algorithm, algo) == 0 &&
                strcmp(t->seen[k].protocol, proto) == 0) {
                break;
            }
        }
        if (k == t->nseen) {
            if (t->nseen == BC_NCCL_SEEN_MAX) {
                continue; /* counted in lines; more pairs than any point has */
            }
            t->nseen++;
            bench_fmt(t->seen[k].algorithm, sizeof(t->seen[k].algorithm), "%s", algo);
            bench_fmt(t->seen[k].protocol, sizeof(t->seen[k].protocol), "%s", proto);
            bench_fmt(t->seen[k].channels, sizeof(t->seen[k].channels), "%s", chan);
            t->seen[k].bytes = bytes;
        }
        t->seen[k].calls++;
    }
    fclose(f);
    if (t->nseen == 0 && func != NULL) {
        if (p == 1) {
            bench_fmt(t->why_none, sizeof(t->why_none),
                      "NCCL printed no tuning line for %s: a 1-rank communicator copies "
                      "locally (ncclLaunchOneRank) and chooses no algorithm",
                      func);
        } else {
            bench_fmt(t->why_none, sizeof(t->why_none),
                      "NCCL printed no tuning line for %s during this point's calls (%s); "
                      "what it ran is not known",
                      func, path);
        }
    }
}

void bc_nccl_effective(const struct bc_nccl_tuning *t, const char *requested, char *out,
                       size_t len)
{
    int full = strcmp(requested, "default") == 0 || strchr(requested, '/') != NULL;
    size_t used = 0;

    out[0] = '\0';
    /* The most frequent first. */
    int order[BC_NCCL_SEEN_MAX];
    for (int k = 0; k < t->nseen; k++) {
        order[k] = k;
    }
    for (int i = 1; i < t->nseen; i++) {
        for (int j = i; j > 0 && t->seen[order[j]].calls > t->seen[order[j - 1]].calls; j--) {
            int x = order[j];
            order[j] = order[j - 1];
            order[j - 1] = x;
        }
    }
    for (int i = 0; i < t->nseen; i++) {
        const struct bc_nccl_seen *s = &t->seen[order[i]];
        char one[96];
        int dup = 0;
        if (full) {
            bench_fmt(one, sizeof(one), "%s/%s", s->algorithm, s->protocol);
        } else {
            bench_fmt(one, sizeof(one), "%s", s->algorithm);
            for (int j = 0; j < i; j++) {
                dup |= strcmp(t->seen[order[j]].algorithm, s->algorithm) == 0;
            }
        }
        if (dup) {
            continue;
        }
        if (used > 0 && used + 1 < len) {
            out[used++] = ',';
            out[used] = '\0';
        }
        bench_fmt(out + used, len - used, "%s", one);
        used = strlen(out);
    }
}
