/* layout.c - what both runtimes' prologues (prologue.c, cuda/prologue.c)
 * share: the test that a topology schedule has a fallback where it needs
 * one, and what the table of collectives (cg_colls.h) decides of a
 * generated collective's buffers: the geometry, `out` and `in` over the
 * caller's memory and `tmp`'s shape, before each backend's copies.
 */
#include "cg_internal.h"

int cg_topo_fallback(const struct cg_topo *topo, cg_any_fn fallback)
{
    /* Not every node holds ppn consecutive ranks (topo->why says how): the
     * schedule's fallback computes the same collective on any communicator;
     * without one the generator erred. */
    if (!topo->regular && fallback == NULL) {
        cg_set_error("collgen: a topology schedule without a fallback on a communicator that "
                     "is not regular (%s)", topo->why);
        return MPI_ERR_INTERN;
    }
    return MPI_SUCCESS;
}

int cg_layout(int coll, long p, size_t count, long nb, const void *sendbuf, void *recvbuf,
              char *token, struct cg_buf *in, struct cg_buf *out, struct cg_buf *tmp, long ntmp,
              struct cg_geom *g)
{
    const struct cg_coll_info *info = &cg_colls[coll];
    /* Why a local geometry, copied out whole at the end: written through
     * g field by field and then read back as one struct, it stalled every
     * call on a failed store-to-load forward (perf, 7% of a p = 1 call). */
    struct cg_geom geom = { 1, 1 };

    switch (info->shape) {
    case CG_SHAPE_SPLIT:
        geom.count = count;
        geom.nb = nb;
        break;
    case CG_SHAPE_UNIFORM:
    case CG_SHAPE_ONE:
        geom.count = (size_t)p * count;
        geom.nb = p;
        break;
    case CG_SHAPE_TOKEN:
        break;
    }
    *g = geom;
    if ((nb != geom.nb) || (nb < 1) || (out == NULL) ||
        ((in == NULL) != (info->input == CG_INPUT_NONE)) || ((tmp != NULL) && (ntmp < 0))) {
        cg_set_error("collgen: the buffers of %s at p = %ld: %ld blocks, in %s, tmp of %ld blocks "
                     "do not fit", info->name, p, nb, (in != NULL) ? "given" : "NULL", ntmp);
        return MPI_ERR_INTERN;
    }
    out->base = (info->shape == CG_SHAPE_TOKEN) ? token : (char *)recvbuf;
    out->geom = geom;
    out->nblocks = (info->shape == CG_SHAPE_SPLIT) ? geom.nb
                   : (info->shape == CG_SHAPE_UNIFORM) ? p
                                                       : 1;
    if (in != NULL) {
        in->base = (char *)sendbuf;
        in->geom = geom;
        in->nblocks = (info->input == CG_INPUT_P) ? p : geom.nb;
    }
    if (tmp != NULL) {
        tmp->base = NULL;
        tmp->geom = geom;
        tmp->nblocks = ntmp;
    }
    return MPI_SUCCESS;
}
