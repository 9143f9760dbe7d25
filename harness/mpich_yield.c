/* mpich_yield.c - preloaded into MPICH ranks (LD_PRELOAD) so that a rank
 * waiting for another gives its core away.
 *
 * Why: Debian 12's MPICH 4.0.2 (ch4:ucx) busy-polls and never yields
 * (tests/mpirun.sh has the measurements and what else was tried). Each pass
 * of its progress loop calls ucp_worker_progress() through the PLT, so this
 * wrapper calls sched_yield() when UCX reports no progress. Built by ninja
 * (build/mpich/cg_mpich_yield.so) and, where it is missing, by
 * tests/mpirun.sh; the Slurm platform preloads it into the ranks too.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <sched.h>

/* ucp_worker_progress() returns how many events it handled; none means this
 * rank is waiting for another one, so give the core away. */
typedef unsigned (*progress_fn)(void *worker);

unsigned ucp_worker_progress(void *worker)
{
    static progress_fn real;
    unsigned n;

    if (real == NULL) {
        real = (progress_fn)dlsym(RTLD_NEXT, "ucp_worker_progress");
        if (real == NULL) {
            return 0;
        }
    }
    n = real(worker);
    if (n == 0) {
        sched_yield();
    }
    return n;
}
