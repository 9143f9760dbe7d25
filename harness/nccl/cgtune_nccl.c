/* cgtune_nccl.c - NCCL tuner plugin (interface version 5, NCCL 2.28) that
 * applies the table collgen tune writes (nccl-tuner.csv; harness/nccl/README.md).
 *
 * Use: NCCL_TUNER_PLUGIN=<path>/libcgtune_nccl.so CG_TUNE_NCCL=<nccl-tuner.csv>.
 *
 * Per communicator, init keeps the rows whose node and rank ranges hold the
 * communicator; per call, getCollInfo takes the first kept row of the call's
 * collective whose byte range holds nBytes and makes its algorithm (and
 * protocol, or with "any" the algorithm's cheapest protocol NCCL offers)
 * the cheapest entry of NCCL's cost table by setting it to 0. A row naming
 * a combination NCCL marked unusable (-1) is skipped: NCCL's own choice
 * stays. Bad input: a message "file:line:col: error: ..." through NCCL's
 * logger (stderr without one) and init fails, so NCCL tunes by itself.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cgtune_nccl.h"

struct row {
    int coll;
    double bmin, bmax, nmin, nmax, rmin, rmax;
    int algo, proto; /* proto -1: any */
    int channels;    /* -1: NCCL's */
};

struct ctx {
    struct row *rows;
    size_t n;
    cg_nccl_logger_t log;
};

static const struct {
    const char *name;
    int value;
} colls[] = {{"bcast", CG_NCCL_BROADCAST},         {"reduce", CG_NCCL_REDUCE},
             {"allgather", CG_NCCL_ALLGATHER},     {"reduce_scatter_block", CG_NCCL_REDUCESCATTER},
             {"allreduce", CG_NCCL_ALLREDUCE}},
  algos[] = {{"tree", CG_NCCL_ALGO_TREE},
             {"ring", CG_NCCL_ALGO_RING},
             {"collnet_direct", CG_NCCL_ALGO_COLLNET_DIRECT},
             {"collnet_chain", CG_NCCL_ALGO_COLLNET_CHAIN},
             {"nvls", CG_NCCL_ALGO_NVLS},
             {"nvls_tree", CG_NCCL_ALGO_NVLS_TREE},
             {"pat", CG_NCCL_ALGO_PAT}},
  protos[] = {{"ll", CG_NCCL_PROTO_LL}, {"ll128", CG_NCCL_PROTO_LL128},
              {"simple", CG_NCCL_PROTO_SIMPLE}, {"any", -1}};

#define LOOKUP(table, s)                                                                     \
    lookup_in((table), sizeof(table) / sizeof((table)[0]), (s))

static int lookup_in(const void *t, size_t n, const char *s)
{
    const struct { const char *name; int value; } *v = t;
    for (size_t i = 0; i < n; i++) {
        if (strcasecmp(v[i].name, s) == 0) {
            return v[i].value;
        }
    }
    return -99;
}

static void say(cg_nccl_logger_t log, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (log != NULL) {
        log(2 /* NCCL_LOG_WARN */, 0, __FILE__, __LINE__, "%s", msg);
    } else {
        fprintf(stderr, "%s\n", msg);
    }
}

static int number(const char *s, double *out)
{
    char *end = NULL;
    double v = strtod(s, &end);
    if (end == s || *end != '\0') {
        return -1;
    }
    *out = v;
    return 0;
}

/* Parses one data line into r; on error the 1-based column of the bad field. */
static int parse_row(char *line, struct row *r, int *col, const char **what)
{
    char *field[10];
    int cols[10];
    int nf = 0;
    char *p = line;
    while (nf < 10) {
        cols[nf] = (int)(p - line) + 1;
        field[nf++] = p;
        char *comma = strchr(p, ',');
        if (comma == NULL) {
            break;
        }
        *comma = '\0';
        p = comma + 1;
    }
    if (nf != 10 || strchr(p, ',') != NULL) {
        *col = 1;
        *what = "expected 10 comma-separated fields";
        return -1;
    }
    double *num[6] = {&r->bmin, &r->bmax, &r->nmin, &r->nmax, &r->rmin, &r->rmax};
    if ((r->coll = LOOKUP(colls, field[0])) < 0) {
        *col = cols[0];
        *what = "unknown collective";
        return -1;
    }
    for (int i = 0; i < 6; i++) {
        if (number(field[1 + i], num[i]) != 0 || *num[i] < 0) {
            *col = cols[1 + i];
            *what = "expected a whole number >= 0";
            return -1;
        }
    }
    if ((r->algo = LOOKUP(algos, field[7])) < 0) {
        *col = cols[7];
        *what = "unknown algorithm";
        return -1;
    }
    if ((r->proto = LOOKUP(protos, field[8])) < -1) {
        *col = cols[8];
        *what = "unknown protocol";
        return -1;
    }
    double ch;
    if (number(field[9], &ch) != 0 || ch < -1 || ch == 0) {
        *col = cols[9];
        *what = "expected channels > 0, or -1";
        return -1;
    }
    r->channels = (int)ch;
    return 0;
}

static cg_nccl_result_t tuner_init(void **out, uint64_t comm_id, size_t n_ranks, size_t n_nodes,
                                   cg_nccl_logger_t log, void *nvl, void *constants)
{
    (void)comm_id, (void)nvl, (void)constants;
    *out = NULL;
    const char *path = getenv("CG_TUNE_NCCL");
    if (path == NULL || path[0] == '\0') {
        say(log, "cgtune_nccl: CG_TUNE_NCCL is not set: no table, NCCL tunes by itself");
        return CG_NCCL_INVALID_ARGUMENT;
    }
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        say(log, "%s: error: cannot read the tuner table", path);
        return CG_NCCL_INVALID_ARGUMENT;
    }
    struct ctx *c = calloc(1, sizeof *c);
    char *line = NULL;
    size_t cap = 0;
    int lineno = 0, header = 0, rc = CG_NCCL_SUCCESS;
    while (c != NULL && getline(&line, &cap, f) > 0) {
        lineno++;
        line[strcspn(line, "\r\n")] = '\0';
        if (line[0] == '#' || line[0] == '\0') {
            continue;
        }
        if (!header) {
            header = 1;
            if (strncmp(line, "collective,", 11) == 0) {
                continue;
            }
        }
        struct row r;
        int col = 1;
        const char *what = "";
        if (parse_row(line, &r, &col, &what) != 0) {
            say(log, "%s:%d:%d: error: %s", path, lineno, col, what);
            rc = CG_NCCL_INVALID_ARGUMENT;
            break;
        }
        /* Keep only the rows for this communicator. */
        if ((double)n_nodes < r.nmin || (double)n_nodes > r.nmax || (double)n_ranks < r.rmin ||
            (double)n_ranks > r.rmax) {
            continue;
        }
        struct row *v = realloc(c->rows, (c->n + 1) * sizeof *v);
        if (v == NULL) {
            rc = CG_NCCL_INTERNAL_ERROR;
            break;
        }
        c->rows = v;
        v[c->n++] = r;
    }
    free(line);
    fclose(f);
    if (c == NULL) {
        return CG_NCCL_INTERNAL_ERROR;
    }
    if (rc != CG_NCCL_SUCCESS) {
        free(c->rows);
        free(c);
        return rc;
    }
    c->log = log;
    *out = c;
    return CG_NCCL_SUCCESS;
}

static cg_nccl_result_t tuner_get_coll_info(void *vctx, int coll_type, size_t n_bytes,
                                            int num_pipe_ops, float **cost_table, int num_algo,
                                            int num_proto, int reg_buff, int *n_channels)
{
    (void)num_pipe_ops, (void)reg_buff;
    const struct ctx *c = vctx;
    /* Why one cast: NCCL passes a row-major float[num_algo][num_proto]. */
    float *table = (float *)cost_table;
    if (c == NULL || table == NULL) {
        return CG_NCCL_SUCCESS;
    }
    for (size_t i = 0; i < c->n; i++) {
        const struct row *r = &c->rows[i];
        if (r->coll != coll_type || (double)n_bytes < r->bmin || (double)n_bytes > r->bmax) {
            continue;
        }
        if (r->algo >= num_algo) {
            return CG_NCCL_SUCCESS;
        }
        int proto = r->proto;
        if (proto < 0) { /* any: NCCL's cheapest protocol for the algorithm */
            for (int q = 0; q < num_proto; q++) {
                float v = table[r->algo * num_proto + q];
                if (v != CG_NCCL_ALGO_PROTO_IGNORE &&
                    (proto < 0 || v < table[r->algo * num_proto + proto])) {
                    proto = q;
                }
            }
        }
        if (proto < 0 || proto >= num_proto ||
            table[r->algo * num_proto + proto] == CG_NCCL_ALGO_PROTO_IGNORE) {
            return CG_NCCL_SUCCESS; /* NCCL cannot run it here: its own choice stays */
        }
        table[r->algo * num_proto + proto] = 0.0f;
        if (r->channels > 0 && n_channels != NULL) {
            *n_channels = r->channels;
        }
        return CG_NCCL_SUCCESS;
    }
    return CG_NCCL_SUCCESS;
}

static cg_nccl_result_t tuner_finalize(void *vctx)
{
    struct ctx *c = vctx;
    if (c != NULL) {
        free(c->rows);
        free(c);
    }
    return CG_NCCL_SUCCESS;
}

__attribute__((visibility("default"))) const cg_nccl_tuner_v5_t ncclTunerPlugin_v5 = {
    "collgen", tuner_init, tuner_get_coll_info, tuner_finalize};
