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

    g->count = 1;
    g->nb = 1;
    switch (info->shape) {
    case CG_SHAPE_SPLIT:
        g->count = count;
        g->nb = nb;
        break;
    case CG_SHAPE_UNIFORM:
    case CG_SHAPE_ONE:
        g->count = (size_t)p * count;
        g->nb = p;
        break;
    case CG_SHAPE_TOKEN:
        break;
    }
    if ((nb != g->nb) || (nb < 1) || (out == NULL) ||
        ((in == NULL) != (info->input == CG_INPUT_NONE)) || ((tmp != NULL) && (ntmp < 0))) {
        cg_set_error("collgen: the buffers of %s at p = %ld: %ld blocks, in %s, tmp of %ld blocks "
                     "do not fit", info->name, p, nb, (in != NULL) ? "given" : "NULL", ntmp);
        return MPI_ERR_INTERN;
    }
    out->base = (info->shape == CG_SHAPE_TOKEN) ? token : (char *)recvbuf;
    out->geom = *g;
    out->nblocks = (info->shape == CG_SHAPE_SPLIT) ? g->nb
                   : (info->shape == CG_SHAPE_UNIFORM) ? p
                                                       : 1;
    if (in != NULL) {
        in->base = (char *)sendbuf;
        in->geom = *g;
        in->nblocks = (info->input == CG_INPUT_P) ? p : g->nb;
    }
    if (tmp != NULL) {
        tmp->base = NULL;
        tmp->geom = *g;
        tmp->nblocks = ntmp;
    }
    return MPI_SUCCESS;
}
