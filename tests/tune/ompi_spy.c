/* ompi_spy.c - an LD_PRELOAD spy on Open MPI 4.1's allreduce algorithms, for
 * tests/run_tune.sh: proves which algorithm a coll_tuned rules file made
 * Open MPI run (shared/design/NATIVE.md: libmpi.so.40 exports
 * ompi_coll_base_allreduce_intra_<algorithm> and coll_tuned calls them
 * through the PLT, so a preloaded definition sees every call).
 *
 * Each call appends "allreduce <algorithm> count=<n>" to $CG_SPY_LOG (one
 * write of one line with O_APPEND, so the ranks' lines do not mix) and
 * forwards to the library's function found with dlsym(RTLD_NEXT).
 *
 * Why void * for Open MPI's types: only pointers pass through, and the
 * spy then needs none of Open MPI's internal headers.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void note(const char *alg, int count)
{
    const char *path = getenv("CG_SPY_LOG");
    if (path == NULL) {
        return;
    }
    char line[128];
    int n = snprintf(line, sizeof line, "allreduce %s count=%d\n", alg, count);
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

typedef int allreduce_fn(const void *, void *, int, void *, void *, void *, void *);

/* One forwarding definition per algorithm (the names coll_tuned uses). */
#define SPY(alg)                                                                              \
    int ompi_coll_base_allreduce_intra_##alg(const void *s, void *r, int count, void *dtype,  \
                                             void *op, void *comm, void *module)             \
    {                                                                                         \
        static allreduce_fn *f;                                                               \
        if (f == NULL) {                                                                      \
            f = (allreduce_fn *)next("ompi_coll_base_allreduce_intra_" #alg);                 \
        }                                                                                     \
        note(#alg, count);                                                                    \
        return f(s, r, count, dtype, op, comm, module);                                       \
    }

SPY(basic_linear)
SPY(nonoverlapping)
SPY(recursivedoubling)
SPY(ring)
SPY(redscat_allgather)

/* ring_segmented has one more argument, the segment size. */
typedef int allreduce_seg_fn(const void *, void *, int, void *, void *, void *, void *,
                             uint32_t);
int ompi_coll_base_allreduce_intra_ring_segmented(const void *s, void *r, int count,
                                                  void *dtype, void *op, void *comm,
                                                  void *module, uint32_t segsize)
{
    static allreduce_seg_fn *f;
    if (f == NULL) {
        f = (allreduce_seg_fn *)next("ompi_coll_base_allreduce_intra_ring_segmented");
    }
    note("ring_segmented", count);
    return f(s, r, count, dtype, op, comm, module, segsize);
}
