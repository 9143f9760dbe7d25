/* algo.c - names for the registry's enums (cg_algo.h). The registry itself
 * is generated: emitted/registry.c. */
#include "cg_algo.h"

const char *cg_coll_name(enum cg_coll coll)
{
    switch (coll) {
    case CG_COLL_ALLREDUCE:
        return "allreduce";
    case CG_COLL_ALLGATHER:
        return "allgather";
    case CG_COLL_REDUCE_SCATTER_BLOCK:
        return "reduce_scatter_block";
    case CG_COLL_BCAST:
        return "bcast";
    case CG_COLL_REDUCE:
        return "reduce";
    case CG_COLL_GATHER:
        return "gather";
    case CG_COLL_SCATTER:
        return "scatter";
    case CG_COLL_ALLTOALL:
        return "alltoall";
    case CG_COLL_SCAN:
        return "scan";
    case CG_COLL_EXSCAN:
        return "exscan";
    case CG_COLL_BARRIER:
        return "barrier";
    case CG_COLL_COUNT_:
        break;
    }
    return "unknown";
}
