/* topo.c - the node and lane structure of a communicator, detected once and
 * cached with its context.
 *
 * A communicator is *regular* when every node holds the same number ppn of
 * its ranks and each node's ranks are consecutive (node n holds ranks
 * n*ppn .. n*ppn + ppn - 1). Then rank r is on node r / ppn with local index
 * r % ppn; the node communicator of r holds its node's ranks, and its lane
 * communicator holds the ranks with the same local index, one per node, both
 * ordered by rank. Topology schedules (those with "topology" in their JSON)
 * only run on regular communicators; on any other the emitted code calls the
 * schedule's declared fallback, so the result is always right.
 *
 * Nodes are what MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) says, unless the
 * environment variable CG_PPN overrides it (a positive integer): then ranks
 * are grouped in consecutive blocks of CG_PPN, the last one smaller when p is
 * not a multiple, which is not regular. That is how the hierarchical
 * schedules run and are tested on one machine (p = 8 as 2 nodes x 4 ranks
 * with CG_PPN=4, or 4 x 2 with CG_PPN=2). CG_PPN must be equal on every rank;
 * it is read when a communicator's topology is first needed.
 *
 * Only MPI here (no context), so that the GPU runtime links it too; the
 * MPI runtime caches the result with its context (cg_topo in comm.c).
 */
#include "cg_internal.h"

#include <errno.h>
#include <stdlib.h>

/* CG_PPN: 0 when unset; -1 (with the error recorded) when malformed. */
static int cg_topo_env_ppn(void)
{
    const char *s = getenv("CG_PPN");
    char *end = NULL;
    long v = 0;

    if ((s == NULL) || (*s == '\0')) {
        return 0;
    }
    errno = 0;
    v = strtol(s, &end, 10);
    if ((errno != 0) || (end == s) || (*end != '\0') || (v < 1) || (v > 1000000)) {
        cg_set_error("collgen: CG_PPN='%.40s' is not a positive integer (ranks per node)", s);
        return -1;
    }
    return (int)v;
}

int cg_topo_detect(MPI_Comm comm, int rank, int p, struct cg_topo *t)
{
    int rc = MPI_SUCCESS;
    int env = cg_topo_env_ppn();
    MPI_Comm shm = MPI_COMM_NULL;

    memset(t, 0, sizeof(*t));
    t->node_comm = MPI_COMM_NULL;
    t->lane_comm = MPI_COMM_NULL;
    t->handles = 1;
    if (env < 0) {
        rc = MPI_ERR_ARG;
        goto out;
    }
    if (env > 0) {
        t->ppn = env;
        t->source = "CG_PPN";
        t->regular = (p % env) == 0;
        if (!t->regular) {
            snprintf(t->why, sizeof(t->why),
                     "p = %d is not a multiple of CG_PPN = %d (the last node holds %d ranks)",
                     p, env, p % env);
        }
    } else {
        int lsize = 0, lrank = 0, leader = 0, ok = 0, all_ok = 0;
        int sizes[2] = { 0, 0 }, ext[2] = { 0, 0 };
        t->source = "shared_memory";
        CG_CHECK_MPI(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank,
                                         MPI_INFO_NULL, &shm));
        CG_CHECK_MPI(MPI_Comm_size(shm, &lsize));
        CG_CHECK_MPI(MPI_Comm_rank(shm, &lrank));
        leader = rank;
        CG_CHECK_MPI(MPI_Bcast(&leader, 1, MPI_INT, 0, shm));
        /* Min and max of the node sizes in one reduction: (-size, size). */
        sizes[0] = -lsize;
        sizes[1] = lsize;
        CG_CHECK_MPI(MPI_Allreduce(sizes, ext, 2, MPI_INT, MPI_MAX, comm));
        ok = (-ext[0] == ext[1]) && (lrank == rank % lsize) && (leader == rank - lrank);
        CG_CHECK_MPI(MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, comm));
        t->ppn = lsize;
        t->regular = all_ok;
        if (!all_ok) {
            if (-ext[0] != ext[1]) {
                snprintf(t->why, sizeof(t->why),
                         "nodes hold between %d and %d ranks of the communicator", -ext[0], ext[1]);
            } else {
                snprintf(t->why, sizeof(t->why),
                         "the ranks of a node are not consecutive in the communicator");
            }
        }
    }
    if (t->regular) {
        t->nnodes = p / t->ppn;
        t->node = rank / t->ppn;
        t->local = rank % t->ppn;
        CG_CHECK_MPI(MPI_Comm_split(comm, t->node, rank, &t->node_comm));
        CG_CHECK_MPI(MPI_Comm_split(comm, t->local, rank, &t->lane_comm));
    }
    t->detected = 1;
out:
    if (shm != MPI_COMM_NULL) {
        (void)MPI_Comm_free(&shm);
    }
    return rc;
}

void cg_topo_free(struct cg_topo *t)
{
    if (!t->handles) {
        return; /* never detected: the handles are calloc's zeros, not MPI_COMM_NULL */
    }
    if (t->node_comm != MPI_COMM_NULL) {
        (void)MPI_Comm_free(&t->node_comm);
    }
    if (t->lane_comm != MPI_COMM_NULL) {
        (void)MPI_Comm_free(&t->lane_comm);
    }
    t->detected = 0;
    t->handles = 0;
}
