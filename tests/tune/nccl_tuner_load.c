/* nccl_tuner_load.c - loads an NCCL tuner plugin the way NCCL 2.28 does and
 * calls it, for tests/run_tune.sh (no GPU needed):
 *
 *   nccl_tuner_load PLUGIN NRANKS NNODES COLLECTIVE BYTES...
 *
 * dlopen(PLUGIN), dlsym("ncclTunerPlugin_v5"), init(nRanks, nNodes, a
 * logger), then per size getCollInfo with a cost table like NCCL's (7
 * algorithms x 3 protocols, every usable entry a positive time, the
 * cheapest PAT/Simple so that any other answer is the plugin's, collnet
 * marked unusable with -1) and prints what NCCL would then run, the
 * cheapest entry: "COLLECTIVE BYTES -> ALGO/PROTO channels=N" (N -1: left to
 * NCCL), then finalize. Exit 3 when init fails (NCCL would then tune by
 * itself), 2 on bad use.
 */
#define _POSIX_C_SOURCE 200809L
#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../harness/nccl/cgtune_nccl.h"

static const char *const algo_names[] = {"tree", "ring", "collnet_direct", "collnet_chain",
                                         "nvls", "nvls_tree", "pat"};
static const char *const proto_names[] = {"ll", "ll128", "simple"};
static const char *const coll_names[] = {"bcast", "reduce", "allgather",
                                         "reduce_scatter_block", "allreduce"};

static void logger(int level, unsigned long flags, const char *file, int line, const char *fmt,
                   ...)
{
    (void)flags, (void)file, (void)line;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "NCCL log (level %d): ", level);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

int main(int argc, char **argv)
{
    if (argc < 6) {
        fprintf(stderr, "usage: nccl_tuner_load PLUGIN NRANKS NNODES COLLECTIVE BYTES...\n");
        return 2;
    }
    int coll = -1;
    for (int i = 0; i < 5; i++) {
        if (strcmp(argv[4], coll_names[i]) == 0) {
            coll = i;
        }
    }
    if (coll < 0) {
        fprintf(stderr, "nccl_tuner_load: unknown collective '%s'\n", argv[4]);
        return 2;
    }
    void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL) {
        fprintf(stderr, "nccl_tuner_load: dlopen: %s\n", dlerror());
        return 2;
    }
    const cg_nccl_tuner_v5_t *t = dlsym(lib, "ncclTunerPlugin_v5");
    if (t == NULL) {
        fprintf(stderr, "nccl_tuner_load: no ncclTunerPlugin_v5 in %s\n", argv[1]);
        return 2;
    }
    printf("plugin %s\n", t->name);
    void *ctx = NULL;
    int rc = t->init(&ctx, 42, (size_t)atol(argv[2]), (size_t)atol(argv[3]), logger, NULL, NULL);
    if (rc != CG_NCCL_SUCCESS) {
        printf("init failed rc=%d\n", rc);
        return 3;
    }
    for (int a = 5; a < argc; a++) {
        float table[7][3];
        for (int i = 0; i < 7; i++) {
            for (int q = 0; q < 3; q++) {
                table[i][q] = (i == 2 || i == 3) ? CG_NCCL_ALGO_PROTO_IGNORE
                                                 : 100.0f - (float)(i * 3 + q);
            }
        }
        int channels = -1;
        size_t bytes = (size_t)strtoull(argv[a], NULL, 10);
        rc = t->get_coll_info(ctx, coll, bytes, 1, (float **)table, 7, 3, 0, &channels);
        if (rc != CG_NCCL_SUCCESS) {
            printf("%s %zu -> getCollInfo failed rc=%d\n", argv[4], bytes, rc);
            continue;
        }
        int bi = -1, bq = -1;
        for (int i = 0; i < 7; i++) {
            for (int q = 0; q < 3; q++) {
                if (table[i][q] >= 0 && (bi < 0 || table[i][q] < table[bi][bq])) {
                    bi = i, bq = q;
                }
            }
        }
        printf("%s %zu -> %s/%s channels=%d\n", argv[4], bytes, algo_names[bi], proto_names[bq],
               channels);
    }
    t->finalize(ctx);
    dlclose(lib);
    return 0;
}
