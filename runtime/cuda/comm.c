/* comm.c - the CUDA context cached on a communicator, and per-call state.
 *
 * As runtime/comm.c: the first call on a communicator duplicates it (with
 * MPI_ERRORS_RETURN), picks the transport, sets it up, and caches all of it
 * as an attribute of the caller's communicator under a keyval of its own;
 * freeing the communicator (or MPI_Finalize, for MPI_COMM_WORLD) runs
 * cg_cu_comm_delete, which frees it. The context keeps the device scratch
 * slots, the NCCL communicator, the IPC events and handle caches, and the
 * array of the current exchange's posts, so that a call in steady state
 * allocates nothing.
 *
 * Why an attribute, again: a generated collective has an MPI-like signature,
 * so the communicator is the only place that lives between calls, and its
 * delete callback ties the context's life (and the device memory's) to it.
 *
 * Creating the context is collective, and every step that can fail on one
 * rank alone is followed by an agreement (cg_cu_agree), so that a failure
 * is returned on every rank instead of leaving the others in a collective.
 */
#include "cg_cuda_internal.h"

#include <stdlib.h>

/* Why static: as runtime/comm.c's keyval, the one name of the attribute slot
 * on every communicator; created on first use, never freed. */
static int cg_cu_keyval = MPI_KEYVAL_INVALID;

const char *cg_cu_transport_name(int transport)
{
    switch (transport) {
    case CG_CU_TRANSPORT_IPC:
        return "ipc";
    case CG_CU_TRANSPORT_NCCL:
        return "nccl";
    default:
        return "?";
    }
}

int cg_cu_agree(MPI_Comm comm, int local_rc)
{
    int rc = MPI_SUCCESS;
    int bad = (local_rc != MPI_SUCCESS), anybad = 0;

    CG_CHECK_MPI(MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, comm));
    if (bad) {
        rc = local_rc;
    } else if (anybad) {
        cg_set_error("rank %d: collgen: another rank failed to set up the CUDA context (its "
                     "cg_last_error() says why)", cg_cu_world_rank());
        rc = MPI_ERR_OTHER;
    }
out:
    return rc;
}

/* Frees what the context holds; device work that uses it must be finished on
 * every rank (cg_cu_comm_delete sees to that). */
static void cg_cu_comm_destroy(struct cg_cu_comm *cc)
{
    if (cc->transport == CG_CU_TRANSPORT_IPC) {
        cg_cu_ipc_teardown(cc);
    }
#ifndef CG_CUDA_NO_NCCL
    if (cc->transport == CG_CU_TRANSPORT_NCCL) {
        cg_cu_nccl_teardown(cc);
    }
#endif
    for (int i = 0; i < CG_CU_NSCRATCH; i++) {
        if (cc->scratch[i] != NULL) {
            (void)cudaFree(cc->scratch[i]);
        }
    }
    if (cc->stage != NULL) {
        (void)cudaFree(cc->stage);
    }
    free(cc->posts);
    free(cc);
}

/* Attribute delete callback: the caller's communicator is being freed
 * (collectively, so every rank of it is here).
 *
 * Why a device synchronisation and a barrier before freeing: a peer's stream
 * may still wait on this rank's IPC events or read its scratch through an
 * opened handle, and destroying an exported event while an importer uses it
 * is undefined. Once every rank has drained its device and passed the
 * barrier, nothing of any rank refers to anything here. Errors are recorded,
 * and the memory is freed regardless. */
static int cg_cu_comm_delete(MPI_Comm comm, int keyval, void *attr, void *extra)
{
    struct cg_cu_comm *cc = attr;
    int rc = MPI_SUCCESS, mrc = MPI_SUCCESS;
    int dev = -1;
    cudaError_t e = cudaSuccess;

    (void)comm;
    (void)keyval;
    (void)extra;
    if (cudaGetDevice(&dev) != cudaSuccess) {
        dev = -1;
    }
    if (dev != cc->device) {
        (void)cudaSetDevice(cc->device);
    }
    e = cudaDeviceSynchronize();
    if (e != cudaSuccess) {
        cg_cu_error_cuda(e, __FILE__, __LINE__, "cudaDeviceSynchronize");
        rc = MPI_ERR_OTHER;
    }
    if (cc->p > 1) {
        mrc = MPI_Barrier(cc->comm);
        if ((mrc != MPI_SUCCESS) && (rc == MPI_SUCCESS)) {
            cg_cu_error_mpi(mrc, __FILE__, __LINE__, "MPI_Barrier");
            rc = mrc;
        }
    }
    cg_topo_free(&cc->topo);
    mrc = MPI_Comm_free(&cc->comm);
    if ((mrc != MPI_SUCCESS) && (rc == MPI_SUCCESS)) {
        cg_cu_error_mpi(mrc, __FILE__, __LINE__, "MPI_Comm_free");
        rc = mrc;
    }
    int own = cc->device;
    cg_cu_comm_destroy(cc);
    if ((dev >= 0) && (dev != own)) {
        (void)cudaSetDevice(dev);
    }
    return rc;
}

/* Picks the transport: CG_CUDA_TRANSPORT=ipc|nccl when set, otherwise IPC
 * when every rank is on one node (the shared-memory split is the whole
 * communicator) and NCCL when not. Every rank must come to the same answer
 * (checked). */
static int cg_cu_choose_transport(struct cg_cu_comm *cc)
{
    int rc = MPI_SUCCESS, lrc = MPI_SUCCESS;
    MPI_Comm node = MPI_COMM_NULL;
    int node_size = 0;
    int mine = -1, lo = 0, hi = 0;
    const char *env = getenv("CG_CUDA_TRANSPORT");

    CG_CHECK_MPI(MPI_Comm_split_type(cc->comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    CG_CHECK_MPI(MPI_Comm_size(node, &node_size));
    if ((env != NULL) && (env[0] != '\0')) {
        if (strcmp(env, "ipc") == 0) {
            mine = CG_CU_TRANSPORT_IPC;
        } else if (strcmp(env, "nccl") == 0) {
            mine = CG_CU_TRANSPORT_NCCL;
        } else {
            cg_set_error("rank %d: collgen: CG_CUDA_TRANSPORT=%s: expected ipc or nccl",
                         cg_cu_world_rank(), env);
            lrc = MPI_ERR_ARG;
        }
    } else {
        mine = (node_size == cc->p) ? CG_CU_TRANSPORT_IPC : CG_CU_TRANSPORT_NCCL;
    }
    if ((lrc == MPI_SUCCESS) && (mine == CG_CU_TRANSPORT_IPC) && (node_size != cc->p)) {
        cg_set_error("rank %d: collgen: the IPC transport needs every rank on one node; this "
                     "node has %d of the %d ranks", cg_cu_world_rank(), node_size, cc->p);
        lrc = MPI_ERR_ARG;
    }
#ifdef CG_CUDA_NO_NCCL
    if ((lrc == MPI_SUCCESS) && (mine == CG_CU_TRANSPORT_NCCL)) {
        cg_set_error("rank %d: collgen: the NCCL transport is needed (%s) but this build has no "
                     "NCCL (CG_CUDA_NO_NCCL)", cg_cu_world_rank(),
                     (env != NULL) ? "CG_CUDA_TRANSPORT=nccl" : "ranks on several nodes");
        lrc = MPI_ERR_ARG;
    }
#endif
    CG_CHECK(cg_cu_agree(cc->comm, lrc));
    CG_CHECK_MPI(MPI_Allreduce(&mine, &lo, 1, MPI_INT, MPI_MIN, cc->comm));
    CG_CHECK_MPI(MPI_Allreduce(&mine, &hi, 1, MPI_INT, MPI_MAX, cc->comm));
    if (lo != hi) {
        cg_set_error("rank %d: collgen: ranks disagree on the transport (CG_CUDA_TRANSPORT must "
                     "be the same on every rank)", cg_cu_world_rank());
        rc = MPI_ERR_ARG;
        goto out;
    }
    cc->transport = mine;
out:
    if (node != MPI_COMM_NULL) {
        (void)MPI_Comm_free(&node);
    }
    return rc;
}

static int cg_cu_comm_create(MPI_Comm comm, struct cg_cu_comm **out_cc)
{
    int rc = MPI_SUCCESS, lrc = MPI_SUCCESS;
    int inter = 0;
    struct cg_cu_comm *cc = NULL;
    cudaError_t e = cudaSuccess;

    CG_CHECK_MPI(MPI_Comm_test_inter(comm, &inter));
    if (inter) {
        cg_set_error("collgen: intercommunicators are not supported");
        rc = MPI_ERR_COMM;
        goto out;
    }
    cc = calloc(1, sizeof(*cc));
    if (cc == NULL) {
        cg_set_error("collgen: out of memory for a CUDA communicator context");
        rc = MPI_ERR_NO_MEM;
        goto out;
    }
    cc->comm = MPI_COMM_NULL;
    cc->transport = -1;
    CG_CHECK_MPI(MPI_Comm_dup(comm, &cc->comm));
    CG_CHECK_MPI(MPI_Comm_set_errhandler(cc->comm, MPI_ERRORS_RETURN));
    CG_CHECK_MPI(MPI_Comm_rank(cc->comm, &cc->rank));
    CG_CHECK_MPI(MPI_Comm_size(cc->comm, &cc->p));
    e = cudaGetDevice(&cc->device);
    if (e != cudaSuccess) {
        cg_cu_error_cuda(e, __FILE__, __LINE__, "cudaGetDevice");
        lrc = MPI_ERR_OTHER;
    }
    CG_CHECK(cg_cu_agree(cc->comm, lrc));
    CG_CHECK(cg_cu_choose_transport(cc));
    if (cc->transport == CG_CU_TRANSPORT_IPC) {
        CG_CHECK(cg_cu_ipc_setup(cc));
    }
#ifndef CG_CUDA_NO_NCCL
    if (cc->transport == CG_CU_TRANSPORT_NCCL) {
        CG_CHECK(cg_cu_nccl_setup(cc));
    }
#endif
    CG_CHECK_MPI(MPI_Comm_set_attr(comm, cg_cu_keyval, cc));
    *out_cc = cc;
    cc = NULL;
out:
    if (cc != NULL) {
        if (cc->comm != MPI_COMM_NULL) {
            (void)MPI_Comm_free(&cc->comm); /* already failing: keep the first error */
        }
        cg_cu_comm_destroy(cc);
    }
    return rc;
}

static int cg_cu_comm_get(MPI_Comm comm, struct cg_cu_comm **out_cc)
{
    int rc = MPI_SUCCESS;
    int found = 0;
    void *attr = NULL;

    if (comm == MPI_COMM_NULL) {
        cg_set_error("collgen: the communicator is MPI_COMM_NULL");
        rc = MPI_ERR_COMM;
        goto out;
    }
    if (cg_cu_keyval == MPI_KEYVAL_INVALID) {
        CG_CHECK_MPI(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, cg_cu_comm_delete,
                                            &cg_cu_keyval, NULL));
    }
    CG_CHECK_MPI(MPI_Comm_get_attr(comm, cg_cu_keyval, &attr, &found));
    if (found) {
        *out_cc = attr;
    } else {
        CG_CHECK(cg_cu_comm_create(comm, out_cc));
    }
out:
    return rc;
}

int cg_cu_comm_transport(MPI_Comm comm, int *transport)
{
    int rc = MPI_SUCCESS;
    struct cg_cu_comm *cc = NULL;

    CG_CHECK(cg_cu_comm_get(comm, &cc));
    *transport = cc->transport;
out:
    return rc;
}

int cg_cu_call_begin(struct cg_cu_call *c, MPI_Comm comm, cg_cu_dtype dtype, cg_cu_op op,
                     cudaStream_t stream)
{
    int rc = MPI_SUCCESS;
    int dev = -1;
    struct cg_cu_comm *cc = NULL;

    memset(c, 0, sizeof(*c));
    c->comm = MPI_COMM_NULL;
    c->coll = -1;
    c->stream = stream;
    c->dtype = dtype;
    c->op = op;
    c->esize = cg_cu_dtype_size(dtype);
    if (c->esize == 0) {
        cg_set_error("collgen: no such CUDA element type (%d)", (int)dtype);
        rc = MPI_ERR_TYPE;
        goto out;
    }
    if ((op != CG_CU_OP_NONE) && (((int)op < 0) || (op >= CG_CU_NOPS))) {
        cg_set_error("collgen: no such CUDA reduction op (%d)", (int)op);
        rc = MPI_ERR_OP;
        goto out;
    }
    CG_CHECK(cg_cu_comm_get(comm, &cc));
    CG_CHECK_CUDA(cudaGetDevice(&dev));
    if (dev != cc->device) {
        cg_set_error("rank %d: collgen: this communicator's CUDA context was made on device %d; "
                     "device %d is current", cg_cu_world_rank(), cc->device, dev);
        rc = MPI_ERR_ARG;
        goto out;
    }
    c->cc = cc;
    c->comm = cc->comm;
    c->rank = cc->rank;
    c->p = cc->p;
    c->transport = cc->transport;
    cg_cu_tag_set_stream(stream, 1);
out:
    return rc;
}

void cg_cu_call_end(struct cg_cu_call *c)
{
    if ((c->cc != NULL) && (c->nposts > 0)) {
        if (c->transport == CG_CU_TRANSPORT_IPC) {
            cg_cu_ipc_abandon(c);
        }
        c->nposts = 0;
    }
    cg_cu_tag_set_stream(NULL, 0);
    c->cc = NULL;
    c->comm = MPI_COMM_NULL;
}

int cg_cu_check_op(const struct cg_cu_call *c)
{
    if (c->op == CG_CU_OP_NONE) {
        cg_set_error("collgen: this collective reduces: it needs an op (sum, prod, min or max), "
                     "not CG_CU_OP_NONE");
        return MPI_ERR_OP;
    }
    return MPI_SUCCESS;
}

int cg_cu_check_root(const struct cg_cu_call *c, int root)
{
    if ((root < 0) || (root >= c->p)) {
        cg_set_error("collgen: root %d is not a rank of the communicator (size %d)", root, c->p);
        return MPI_ERR_ROOT;
    }
    return MPI_SUCCESS;
}

void *cg_cu_scratch(struct cg_cu_call *c, int slot, size_t bytes, int *rc_out)
{
    int rc = MPI_SUCCESS;
    struct cg_cu_comm *cc = c->cc;

    if ((slot < 0) || (slot >= CG_CU_NSCRATCH)) {
        cg_set_error("collgen: device scratch slot %d out of range 0..%d", slot,
                     CG_CU_NSCRATCH - 1);
        *rc_out = MPI_ERR_ARG;
        return NULL;
    }
    if ((cc->scratch[slot] == NULL) || (bytes > cc->scratch_bytes[slot])) {
        /* Why free + malloc: the old contents need not survive. cudaFree
         * waits for the device, so no peer still reads the old block (this
         * rank's stream waited for their done events). */
        size_t want = (bytes > 0) ? bytes : 1;
        if (cc->scratch[slot] != NULL) {
            void *old = cc->scratch[slot];
            cc->scratch[slot] = NULL;
            cc->scratch_bytes[slot] = 0;
            CG_CHECK_CUDA(cudaFree(old));
        }
        void *mem = NULL;
        CG_CHECK_CUDA(cudaMalloc(&mem, want));
        cc->scratch[slot] = mem;
        cc->scratch_bytes[slot] = want;
    }
out:
    *rc_out = rc;
    return (rc == MPI_SUCCESS) ? cc->scratch[slot] : NULL;
}

size_t cg_cu_buf_bytes(const struct cg_cu_call *c, const struct cg_geom *g, long nblocks)
{
    return ((nblocks > 0) ? cg_geom_off(g, nblocks) : 0) * c->esize;
}

int cg_cu_topo(struct cg_cu_call *c, const struct cg_topo **topo)
{
    int rc = MPI_SUCCESS;

    *topo = NULL;
    if (!c->cc->topo.detected) {
        rc = cg_topo_detect(c->cc->comm, c->cc->rank, c->cc->p, &c->cc->topo);
        if (rc != MPI_SUCCESS) {
            return rc;
        }
    }
    *topo = &c->cc->topo;
    return rc;
}
