/* algo.c - names for the registry's enums (cg_algo.h), from the table of
 * collectives (cg_colls.h). The registry itself is generated:
 * emitted/registry.c. */
#include "cg_algo.h"

const char *cg_coll_name(enum cg_coll coll)
{
    return ((int)coll >= 0 && coll < CG_COLL_COUNT_) ? cg_colls[coll].name : "unknown";
}
