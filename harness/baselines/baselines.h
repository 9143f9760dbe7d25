/* baselines.h - the list of plain-MPI baselines (README.md here), one entry
 * each: X(name, COLLECTIVE, collective, commutative_only, summary).
 *
 *   name              the C function (in <collective>.c here) and the
 *                     harness's baseline:<name>
 *   COLLECTIVE        the collective, as in CG_<COLLECTIVE>_ARGS (its
 *                     signature, runtime/cg_algo.h)
 *   collective        the same in lower case (its file, its member of
 *                     struct cg_algo's fn)
 *   commutative_only  1: returns MPI_ERR_OP for a non-commutative op
 *   summary           what it follows
 *
 * Read by harness/bench_baseline.c (bench's table of baselines) and
 * harness/descriptor.c (which names a test may use); it needs no MPI header.
 */
#ifndef CG_BASELINES_H
#define CG_BASELINES_H

#define CG_BASELINES(X)                                                                        \
    X(allreduce_ring, ALLREDUCE, allreduce, 1,                                                 \
      "Open MPI coll_base ring: reduce-scatter then allgather around a ring, p-1 + p-1 steps, " \
      "the next block's receive posted before the current one is reduced")                     \
    X(allreduce_segmented_ring, ALLREDUCE, allreduce, 1,                                       \
      "Open MPI coll_base segmented ring: the ring's reduce-scatter once per segment of the "  \
      "blocks (BASELINE_SEGSIZE bytes, default 1 MiB), then one allgather ring")               \
    X(allreduce_recursive_doubling, ALLREDUCE, allreduce, 0,                                   \
      "Open MPI coll_base recursive doubling: ranks past the largest power of two fold into "  \
      "their neighbours, log2 exchanges of the whole vector, results sent back")               \
    X(allreduce_reduce_scatter_allgather, ALLREDUCE, allreduce, 1,                             \
      "Rabenseifner (MPICH reduce_scatter_allgather, Open MPI rabenseifner): fold, "           \
      "reduce-scatter by recursive halving, allgather by recursive doubling, unfold")          \
    X(bcast_binomial, BCAST, bcast, 0,                                                         \
      "MPICH binomial tree: receive from the parent, send to the children, largest subtree "   \
      "first")                                                                                 \
    X(bcast_pipeline, BCAST, bcast, 0,                                                         \
      "Open MPI coll_base pipeline: a chain from the root, segments of BASELINE_SEGSIZE bytes " \
      "(default 1 MiB), the next segment's receive posted before the current one is passed on") \
    X(bcast_scatter_allgather, BCAST, bcast, 0,                                                \
      "MPICH scatter_ring_allgather: binomial scatter of p blocks, then an allgather ring")    \
    X(allgather_ring, ALLGATHER, allgather, 0,                                                 \
      "Open MPI coll_base ring: p-1 steps, each passing the block received last to the right") \
    X(allgather_bruck, ALLGATHER, allgather, 0,                                                \
      "Open MPI coll_base Bruck: ceil(log2 p) steps to rank - 2^k, then a local rotation")     \
    X(allgather_recursive_doubling, ALLGATHER, allgather, 0,                                   \
      "Open MPI coll_base recursive doubling: log2 p exchanges of doubling block ranges; Bruck " \
      "when p is not a power of two, as Open MPI does")                                        \
    X(allgather_neighbor_exchange, ALLGATHER, allgather, 0,                                    \
      "Open MPI coll_base neighbor exchange (Chen et al.): p/2 steps of two blocks between "   \
      "alternating neighbours; the ring when p is odd, as Open MPI does")

#endif
