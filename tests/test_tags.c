/* test_tags.c - timing tags of the generated collectives, built with tags on.
 *
 * For every generated algorithm: zero the tags, call it once, and check on
 * every rank that
 *   - exactly the tags the generator predicts were entered, each exactly as
 *     often as predicted (`collgen tags FILE --p N`, run by rank 0);
 *   - no tag of another schedule was touched;
 *   - every time is non-negative and plausible, a tag never entered has no
 *     time, and the children of a tag sum to no more than the tag itself.
 * Prints "PASS tags <name> <flavour> p=<p>" or "FAIL ..." per algorithm.
 *
 * usage: test_tags COLLGEN   (path of build/collgen; run from the repo root)
 */
#define _POSIX_C_SOURCE 200809L
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collgen.h"

#ifndef CG_FLAVOUR
#define CG_FLAVOUR "unknown"
#endif

static int call_once(const struct cg_algo *a, int p)
{
    size_t n = 1000;
    double *buf = malloc(sizeof(double) * n * (size_t)p);
    double *in = malloc(sizeof(double) * n * (size_t)p);
    int rc = MPI_ERR_NO_MEM;
    if (buf == NULL || in == NULL) {
        goto out;
    }
    for (size_t i = 0; i < n * (size_t)p; i++) {
        in[i] = (double)i;
        buf[i] = 0.0;
    }
    switch (a->coll) {
    case CG_COLL_ALLREDUCE:
        rc = a->fn.allreduce(in, buf, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        break;
    case CG_COLL_ALLGATHER:
        rc = a->fn.allgather(in, n, MPI_DOUBLE, buf, n, MPI_DOUBLE, MPI_COMM_WORLD);
        break;
    case CG_COLL_REDUCE_SCATTER_BLOCK:
        rc = a->fn.reduce_scatter_block(in, buf, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        break;
    case CG_COLL_BCAST:
        rc = a->fn.bcast(in, n, MPI_DOUBLE, 0, MPI_COMM_WORLD);
        break;
    case CG_COLL_REDUCE:
        rc = a->fn.reduce(in, buf, n, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
        break;
    case CG_COLL_GATHER:
        rc = a->fn.gather(in, n, MPI_DOUBLE, buf, n, MPI_DOUBLE, 0, MPI_COMM_WORLD);
        break;
    case CG_COLL_SCATTER:
        rc = a->fn.scatter(in, n, MPI_DOUBLE, buf, n, MPI_DOUBLE, 0, MPI_COMM_WORLD);
        break;
    case CG_COLL_ALLTOALL:
        rc = a->fn.alltoall(in, n, MPI_DOUBLE, buf, n, MPI_DOUBLE, MPI_COMM_WORLD);
        break;
    case CG_COLL_SCAN:
        rc = a->fn.scan(in, buf, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        break;
    case CG_COLL_EXSCAN:
        rc = a->fn.exscan(in, buf, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        break;
    case CG_COLL_BARRIER:
        rc = a->fn.barrier(MPI_COMM_WORLD);
        break;
    case CG_COLL_COUNT_:
        break;
    }
out:
    free(buf);
    free(in);
    return rc;
}

/* Reads the generator's prediction: expected[r * ntags + id] = calls. */
static int predict(const char *collgen, const struct cg_algo *a, int p, const struct cg_topo *wt,
                   long *expected)
{
    char cmd[1024], line[512], path[400];
    char ppn[32] = "";
    /* A topology schedule runs with the communicator's node shape, or, where
     * it is not regular, is its fallback (whose tags are then entered). */
    if (a->topo.needed && wt->regular) {
        snprintf(ppn, sizeof(ppn), " --ppn %d", wt->ppn);
    } else if (a->topo.needed) {
        const struct cg_algo *fb = NULL;
        for (int i = 0; i < cg_nalgos; i++) {
            if (strcmp(cg_algos[i]->name, a->topo.fallback) == 0) {
                fb = cg_algos[i];
            }
        }
        if (fb == NULL) {
            printf("  %s: fallback %s is not in the registry\n", a->name, a->topo.fallback);
            return -1;
        }
        a = fb;
    }
    snprintf(cmd, sizeof(cmd), "%s tags %s --p %d --root 0%s", collgen, a->file, p, ppn);
    FILE *f = popen(cmd, "r");
    if (f == NULL) {
        return -1;
    }
    int bad = 0;
    while (fgets(line, sizeof(line), f) != NULL) {
        int r = -1;
        long calls = 0;
        if (sscanf(line, "%d %399s %ld", &r, path, &calls) != 3 || r < 0 || r >= p) {
            bad = 1;
            continue;
        }
        int id = -1;
        for (int t = a->tag_first; t < a->tag_first + a->tag_count; t++) {
            if (strcmp(cg_tag_infos[t].name, path) == 0) {
                id = t;
            }
        }
        if (id < 0) {
            printf("  %s: predicted tag %s is not in the registry\n", a->name, path);
            bad = 1;
            continue;
        }
        expected[(size_t)r * (size_t)cg_ntags + (size_t)id] = calls;
    }
    return (pclose(f) != 0 || bad) ? -1 : 0;
}

/* Every ranged param of a: the call succeeds at min and at max (set with
 * cg_param_set), and returns MPI_ERR_ARG on every rank one past either end;
 * the default is what the tag check above ran. Returns the failures,
 * printed by rank 0. */
static int params_should_hold_their_range(const struct cg_algo *a, int p, int rank)
{
    int wrong = 0;
    for (int i = 0; i < a->nparams; i++) {
        const struct cg_param_info *k = &a->params[i];
        if (k->lo == k->hi) {
            continue;
        }
        const int values[4] = { k->lo, k->hi, k->lo - 1, k->hi + 1 };
        for (int v = 0; v < 4; v++) {
            int want = (v < 2) ? MPI_SUCCESS : MPI_ERR_ARG;
            int rc = cg_param_set(a->name, k->name, values[v]);
            if (rc == MPI_SUCCESS) {
                rc = call_once(a, p);
            }
            int bad = rc != want;
            MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
            if (bad && rank == 0) {
                printf("  %s: %s = %d returned %d on some rank, expected %s\n", a->name,
                       k->name, values[v], rc, (want == MPI_SUCCESS) ? "MPI_SUCCESS"
                                                                     : "MPI_ERR_ARG");
            }
            wrong += bad;
        }
        (void)cg_param_set(a->name, k->name, INT_MIN); /* back to the environment or default */
    }
    return wrong;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, p, failed_total = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    const char *want = getenv("CG_EXPECT_NP");
    if (want != NULL && atoi(want) != p) {
        fprintf(stderr, "test_tags: started as %d ranks, expected %s: wrong launcher?\n", p, want);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    const char *collgen = argc > 1 ? argv[1] : "build/collgen";
    const struct cg_topo *wt = NULL;
    if (cg_topo_of(MPI_COMM_WORLD, &wt) != MPI_SUCCESS) {
        fprintf(stderr, "test_tags: cg_topo_of: %s\n", cg_last_error());
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    size_t nt = (size_t)cg_ntags;
    unsigned long long *mine = calloc(nt * 2, sizeof(unsigned long long));
    unsigned long long *all = calloc(nt * 2 * (size_t)p, sizeof(unsigned long long));
    long *expected = calloc(nt * (size_t)p, sizeof(long));
    if (mine == NULL || all == NULL || expected == NULL) {
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    for (int ai = 0; ai < cg_nalgos; ai++) {
        const struct cg_algo *a = cg_algos[ai];
        cg_tag_reset();
        MPI_Barrier(MPI_COMM_WORLD);
        int rc = call_once(a, p);
        for (size_t t = 0; t < nt; t++) {
            uint64_t ns = 0, calls = 0;
            cg_tag_read((int)t, &ns, &calls);
            mine[2 * t] = ns;
            mine[2 * t + 1] = calls;
        }
        MPI_Gather(mine, (int)(2 * nt), MPI_UNSIGNED_LONG_LONG, all, (int)(2 * nt),
                   MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
        int bad = rc != MPI_SUCCESS;
        MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        if (rank == 0) {
            int wrong = 0;
            if (bad) {
                printf("  %s: the call failed on some rank\n", a->name);
                wrong++;
            }
            memset(expected, 0, sizeof(long) * nt * (size_t)p);
            if (predict(collgen, a, p, wt, expected) != 0) {
                printf("  %s: could not read the prediction of %s tags\n", a->name, collgen);
                wrong++;
            }
            for (int r = 0; r < p; r++) {
                const unsigned long long *v = all + (size_t)r * nt * 2;
                for (size_t t = 0; t < nt; t++) {
                    unsigned long long ns = v[2 * t], calls = v[2 * t + 1];
                    long exp = expected[(size_t)r * nt + t];
                    if ((long)calls != exp) {
                        printf("  %s: rank %d tag %s entered %llu times, expected %ld\n", a->name,
                               r, cg_tag_infos[t].name, calls, exp);
                        wrong++;
                    }
                    if (calls == 0 && ns != 0) {
                        printf("  %s: rank %d tag %s has %llu ns but was never entered\n",
                               a->name, r, cg_tag_infos[t].name, ns);
                        wrong++;
                    }
                    if (ns > 100000000000ull) {
                        printf("  %s: rank %d tag %s: implausible %llu ns\n", a->name, r,
                               cg_tag_infos[t].name, ns);
                        wrong++;
                    }
                    unsigned long long children = 0;
                    for (size_t k = 0; k < nt; k++) {
                        if (cg_tag_infos[k].parent == (int)t) {
                            children += v[2 * k];
                        }
                    }
                    if (children > ns) {
                        printf("  %s: rank %d tag %s: children sum to %llu ns > its own %llu ns\n",
                               a->name, r, cg_tag_infos[t].name, children, ns);
                        wrong++;
                    }
                }
            }
            printf("%s tags %s %s p=%d\n", wrong ? "FAIL" : "PASS", a->name, CG_FLAVOUR, p);
            fflush(stdout);
            failed_total += wrong != 0;
        }
        if (a->nparams > 0) {
            int pw = params_should_hold_their_range(a, p, rank);
            if (rank == 0) {
                printf("%s params %s %s p=%d (min, max, one past each)\n", pw ? "FAIL" : "PASS",
                       a->name, CG_FLAVOUR, p);
                fflush(stdout);
                failed_total += pw != 0;
            }
        }
    }
    free(mine);
    free(all);
    free(expected);
    MPI_Bcast(&failed_total, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Finalize();
    return failed_total ? 1 : 0;
}
