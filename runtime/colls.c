/* colls.c - the table of collectives (cg_colls.h) as data, and lookup by
 * name. Free of MPI: the generator links it as well as both runtimes. */
#include "cg_colls.h"

#include <math.h>
#include <string.h>

/* A macro argument as text after expansion: CG_ALLREDUCE_ARGS becomes
 * "const void *sendbuf, void *recvbuf, ...". Variadic because the
 * expansion holds commas. */
#define CG_STR_(...) #__VA_ARGS__
#define CG_STR(...) CG_STR_(__VA_ARGS__)

const struct cg_coll_info cg_colls[CG_COLL_COUNT_] = {
#define X(ID, id, mpi, bufs, combine, rooted, shape, input, in_place, size, busbw, args,     \
          cu_args, nccl, nccl_log, result)                                                   \
    { #id, #mpi, bufs, (combine) == CG_COMBINE_OP, combine, rooted, shape, input, in_place,  \
      size, busbw, CG_STR(args), CG_STR(cu_args), nccl, nccl_log, result },
    CG_COLL_TABLE(X)
#undef X
};

int cg_coll_lookup(const char *name)
{
    for (int i = 0; name != NULL && i < CG_COLL_COUNT_; i++) {
        if (strcmp(name, cg_colls[i].name) == 0) {
            return i;
        }
    }
    return -1;
}

double cg_coll_size_B(int coll, int p, double count, double elem_size)
{
    switch (cg_colls[coll].size) {
    case CG_SIZE_COUNT:
        return count * elem_size;
    case CG_SIZE_P_COUNT:
        return (double)p * count * elem_size;
    case CG_SIZE_NONE:
        break;
    }
    return 0.0;
}

double cg_coll_busbw_factor(int coll, int p)
{
    double pp = (double)p;
    switch (cg_colls[coll].busbw) {
    case CG_BUSBW_ONE:
        return 1.0;
    case CG_BUSBW_PM1:
        return (pp - 1.0) / pp;
    case CG_BUSBW_2PM1:
        return 2.0 * (pp - 1.0) / pp;
    case CG_BUSBW_NONE:
        break;
    }
    return NAN;
}
