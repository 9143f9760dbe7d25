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
    case CG_COLL_COUNT_:
        break;
    }
    return "unknown";
}
