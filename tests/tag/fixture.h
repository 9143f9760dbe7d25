/* fixture.h - what the fixtures of `collgen tag` (fixtures.c) share with the
 * test that runs them (test_ctag.c).
 *
 * Every fixture is an ordinary hand-written collective over public MPI
 * calls, in some style a tagger must handle; `mode` picks a way out (0: the
 * whole collective; others: an early return, a goto to the error label, a
 * break...) so that every exit runs. fixture_expect(fn, path) says which tag
 * must be the innermost open one at that point of the tagged copy (checked
 * only when the test calls the tagged copy with tags on; "" means none of
 * fn's tags: the function's own call tag has been left).
 */
#ifndef FIXTURE_H
#define FIXTURE_H

#include <mpi.h>

void fixture_expect(const char *fn, const char *path);

/* The fixtures, with what each computes at mode 0 (X(name, collective)). */
#define FIXTURES(X)                  \
    X(fix_for_ring, allgather)       \
    X(fix_while_doubling, allreduce) \
    X(fix_do_chain, bcast)           \
    X(fix_nested_segments, allreduce) \
    X(fix_early_return, allreduce)   \
    X(fix_goto_error, allgather)     \
    X(fix_helpers, allreduce)        \
    X(fix_macros, allgather)         \
    X(fix_break_continue, allgather) \
    X(fix_unbraced, bcast)

/* in: n ints per rank (allgather: this rank's block; bcast: the root 0's
 * data, read at rank 0 only); out: n ints (allgather: p blocks of n). */
#define X(name, coll) int name(const int *in, int *out, int n, int mode, MPI_Comm comm);
FIXTURES(X)
#undef X

/* Sums n ints: no communication, so collgen tag leaves it alone. */
long fix_no_communication(const int *a, int n);

#endif
