/* ompi_spy.c - an LD_PRELOAD spy on Open MPI 4.1's collective algorithms, for
 * tests/run_tune.sh: proves which algorithm a coll_tuned rules file made
 * Open MPI run (shared/design/NATIVE.md: libmpi.so.40 exports
 * ompi_coll_base_<collective>_intra_<algorithm> and coll_tuned, a component
 * of its own, calls them through the PLT, so a preloaded definition sees
 * every call).
 *
 * Each call appends "<collective> <algorithm> count=<n>" to $CG_SPY_LOG
 * (one write of one line with O_APPEND, so the ranks' lines do not mix;
 * n is the count argument, the send count for allgather and alltoall, 0
 * for barrier) and forwards to the library's function found with
 * dlsym(RTLD_NEXT). Covered: every algorithm of the collectives the rules
 * file can name (allreduce, alltoall, barrier, bcast, reduce;
 * harness/tune_export.c) and allgather's (what Open MPI's default runs).
 *
 * The prototypes are Open MPI 4.1's (ompi/mca/coll/base/
 * coll_base_functions.h as Debian installs it), with void * for its types:
 * only pointers pass through, and the spy then needs none of Open MPI's
 * internal headers. Why exact prototypes: a forwarder with fewer arguments
 * than the function would pass garbage for the rest (segsize, radix).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void note(const char *coll, const char *alg, int count)
{
    const char *path = getenv("CG_SPY_LOG");
    if (path == NULL) {
        return;
    }
    char line[160];
    int n = snprintf(line, sizeof line, "%s %s count=%d\n", coll, alg, count);
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd >= 0) {
        ssize_t w = write(fd, line, (size_t)n);
        (void)w;
        close(fd);
    }
}

static void *next(const char *sym)
{
    void *f = dlsym(RTLD_NEXT, sym);
    if (f == NULL) {
        fprintf(stderr, "ompi_spy: %s not found in the libraries after the spy\n", sym);
        abort();
    }
    return f;
}

/* One forwarding definition: SPY(collective, algorithm, count, (parameters),
 * (arguments)). */
#define SPY(coll, alg, count, PARAMS, ARGS)                                                   \
    int ompi_coll_base_##coll##_intra_##alg PARAMS                                            \
    {                                                                                         \
        static int(*f) PARAMS;                                                                \
        if (f == NULL) {                                                                      \
            *(void **)&f = next("ompi_coll_base_" #coll "_intra_" #alg);                      \
        }                                                                                     \
        note(#coll, #alg, count);                                                             \
        return f ARGS;                                                                        \
    }

#define ALLREDUCE_P const void *s, void *r, int count, void *dt, void *op, void *comm, void *m
#define ALLREDUCE_A s, r, count, dt, op, comm, m
#define ALLREDUCE(alg) SPY(allreduce, alg, count, (ALLREDUCE_P), (ALLREDUCE_A))
ALLREDUCE(basic_linear)
ALLREDUCE(nonoverlapping)
ALLREDUCE(recursivedoubling)
ALLREDUCE(ring)
ALLREDUCE(redscat_allgather)
SPY(allreduce, ring_segmented, count, (ALLREDUCE_P, uint32_t seg), (ALLREDUCE_A, seg))

/* allgather and alltoall: the same arguments. */
#define XCHG_P const void *s, int scount, void *sdt, void *r, int rcount, void *rdt, void *comm, void *m
#define XCHG_A s, scount, sdt, r, rcount, rdt, comm, m
#define ALLGATHER(alg) SPY(allgather, alg, scount, (XCHG_P), (XCHG_A))
ALLGATHER(basic_linear)
ALLGATHER(bruck)
ALLGATHER(neighborexchange)
ALLGATHER(recursivedoubling)
ALLGATHER(ring)
ALLGATHER(two_procs)
#define ALLTOALL(alg) SPY(alltoall, alg, scount, (XCHG_P), (XCHG_A))
ALLTOALL(basic_linear)
ALLTOALL(bruck)
ALLTOALL(pairwise)
ALLTOALL(two_procs)
SPY(alltoall, linear_sync, scount, (XCHG_P, int maxreq), (XCHG_A, maxreq))

#define BARRIER(alg) SPY(barrier, alg, 0, (void *comm, void *m), (comm, m))
BARRIER(basic_linear)
BARRIER(bruck)
BARRIER(doublering)
BARRIER(recursivedoubling)
BARRIER(tree)
BARRIER(two_procs)

#define BCAST_P void *b, int count, void *dt, int root, void *comm, void *m
#define BCAST_A b, count, dt, root, comm, m
SPY(bcast, basic_linear, count, (BCAST_P), (BCAST_A))
#define BCAST_SEG(alg) SPY(bcast, alg, count, (BCAST_P, uint32_t seg), (BCAST_A, seg))
BCAST_SEG(binomial)
BCAST_SEG(bintree)
BCAST_SEG(pipeline)
BCAST_SEG(scatter_allgather)
BCAST_SEG(scatter_allgather_ring)
BCAST_SEG(split_bintree)
SPY(bcast, chain, count, (BCAST_P, uint32_t seg, int32_t chains), (BCAST_A, seg, chains))
SPY(bcast, knomial, count, (BCAST_P, uint32_t seg, int radix), (BCAST_A, seg, radix))

#define REDUCE_P const void *s, void *r, int count, void *dt, void *op, int root, void *comm, void *m
#define REDUCE_A s, r, count, dt, op, root, comm, m
SPY(reduce, basic_linear, count, (REDUCE_P), (REDUCE_A))
SPY(reduce, redscat_gather, count, (REDUCE_P), (REDUCE_A))
#define REDUCE_SEG(alg)                                                                       \
    SPY(reduce, alg, count, (REDUCE_P, uint32_t seg, int maxreq), (REDUCE_A, seg, maxreq))
REDUCE_SEG(binary)
REDUCE_SEG(binomial)
REDUCE_SEG(in_order_binary)
REDUCE_SEG(pipeline)
SPY(reduce, chain, count, (REDUCE_P, uint32_t seg, int fanout, int maxreq),
    (REDUCE_A, seg, fanout, maxreq))
