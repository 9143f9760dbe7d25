/* emit_cuda.c - pass 5 for the GPU: a checked, verified schedule of a
 * collective the CUDA runtime supports (allreduce, allgather,
 * reduce_scatter_block, bcast, alltoall) -> CUDA C++ over runtime/cuda/, in
 * emitted/cuda/<schedule>.cu.
 *
 * The function, cgcu_<schedule>, has NCCL's signature with a cg_cu_dtype, a
 * cg_cu_op and an MPI communicator (runtime/cuda/cg_cuda_algo.h) and works
 * on device buffers: exchanges through the runtime's transport (CUDA IPC on
 * one node, NCCL otherwise), reductions as its kernels, copies as device
 * copies, all enqueued on the caller's stream; no host wait. It reads like
 * the MPI backend's cg_<schedule>: the header comment with the p = 4 table,
 * the loop per phase and the comment per step are emit_common.c's, written
 * with runtime/cuda's names; timing tags have the MPI backend's ids
 * (emitted/mpi/collgen.h) and are CUDA events. This file has what is the
 * GPU's own: the signature, the prologue (in place in NCCL's and MPI's
 * forms, the root, device scratch) and those names.
 *
 * What C++ needs that C does not: the body after the count == 0 shortcut is
 * a block, since C++ forbids a goto out that jumps over initialisations into
 * their scope; and a void * becomes a char * only with a cast.
 */
#include <stdio.h>

#include "emit_common.h"

/* The runtime/cuda calls the shared phase and step code writes. */
static const struct cg_emit_api cuda_api = {
    .tag_begin = "CG_CU_TAG_BEGIN",
    .tag_end = "CG_CU_TAG_END",
    .xchg_begin = "cg_cu_xchg_begin",
    .send = "cg_cu_send",
    .recv = "cg_cu_recv",
    .xchg_wait = "cg_cu_xchg_wait",
    .reduce = "cg_cu_reduce_blocks",
    .copy = "cg_cu_copy_blocks",
};

/* The NCCL collective whose signature a GPU collective takes, or NULL when
 * the GPU backend does not have the collective. */
static const char *nccl_name(enum cg_coll_kind coll)
{
    switch (coll) {
    case CG_C_ALLREDUCE:
        return "ncclAllReduce";
    case CG_C_ALLGATHER:
        return "ncclAllGather";
    case CG_C_REDUCE_SCATTER_BLOCK:
        return "ncclReduceScatter";
    case CG_C_BCAST:
        return "ncclBroadcast";
    case CG_C_ALLTOALL:
        return "ncclAlltoAll";
    default:
        return NULL;
    }
}

int cg_emit_cuda_supports(enum cg_coll_kind coll)
{
    return nccl_name(coll) != NULL;
}

int cg_emit_cuda_has(const struct cg_schedule *s)
{
    /* Why not call steps: the GPU backend has no native collectives of the
     * MPI library to call, and no view arguments; such schedules get no .cu. */
    /* A topology schedule's fallback must have a GPU twin too. */
    /* (fill steps exist only beside bitwise-or calls, so never get here.) */
    return cg_emit_cuda_supports(s->coll) && !cg_has_calls(s) &&
           (!s->topology || (s->fallback_s != NULL && s->fallback_s != s &&
                             !s->fallback_s->topology && cg_emit_cuda_has(s->fallback_s)));
}

/* The arguments a fallback gets: the function's own. */
static const char *fallback_args(enum cg_coll_kind coll)
{
    switch (coll) {
    case CG_C_ALLREDUCE:
        return "sendbuf, recvbuf, count, datatype, op, comm, stream";
    case CG_C_ALLGATHER:
        return "sendbuf, recvbuf, sendcount, datatype, comm, stream";
    case CG_C_REDUCE_SCATTER_BLOCK:
        return "sendbuf, recvbuf, recvcount, datatype, op, comm, stream";
    case CG_C_BCAST:
        return "sendbuf, recvbuf, count, datatype, root, comm, stream";
    case CG_C_ALLTOALL:
        return "sendbuf, recvbuf, count, datatype, comm, stream";
    default:
        cg_panic("no GPU fallback call for %s", cg_colls[coll].name);
    }
    return "";
}

/* The name of the count argument, which is the count == 0 shortcut's. */
static const char *count_name(enum cg_coll_kind coll)
{
    switch (coll) {
    case CG_C_ALLGATHER:
        return "sendcount";
    case CG_C_REDUCE_SCATTER_BLOCK:
        return "recvcount";
    default:
        return "count";
    }
}

static void header_comment(struct cg_emitter *em)
{
    const struct cg_schedule *s = em->s;
    char function[100], accepts[200];
    snprintf(function, sizeof(function), "cgcu_%s", s->name);
    snprintf(accepts, sizeof(accepts),
             "as %s(), with a cg_cu_dtype%s and an MPI communicator; device buffers "
             "(cudaMalloc memory)",
             nccl_name(s->coll), cg_colls[s->coll].reduces ? ", a cg_cu_op" : "");
    struct cg_emit_header h = { function, accepts,
                                "MPI_SUCCESS or an MPI error code, once everything is enqueued "
                                "on stream",
                                NULL };
    if (s->commutative) {
        h.limitations = "none: contributions are combined out of rank order, which every "
                        "cg_cu_op allows";
    } else if (cg_colls[s->coll].reduces) {
        h.limitations = "none; contributions are combined in rank order";
    }
    cg_emit_header_comment(em, &h);
}

/* From the top of the function to the count == 0 shortcut, at function
 * scope: cg_cu_call_begin and the argument checks. */
static void prologue_begin(struct cg_emitter *em)
{
    const struct cg_schedule *s = em->s;
    struct cg_out *o = em->o;
    const int reduces = cg_colls[s->coll].reduces;
    cg_out_line(o, "struct cg_cu_call c;");
    cg_out_line(o, "int rc = MPI_SUCCESS;");
    if (s->topology) {
        cg_out_line(o, "const struct cg_topo *topo = NULL;");
    }
    for (int i = 0; i < s->nparams; i++) {
        if (s->params[i].ranged && em->used[s->params[i].slot]) {
            cg_out_line(o, "int %s = 0;", s->params[i].name);
        }
    }
    cg_out_blank(o);
    cg_out_line(o, "rc = cg_cu_call_begin(&c, comm, datatype, %s, stream);",
                reduces ? "op" : "CG_CU_OP_NONE");
    cg_out_open(o, "if (rc != MPI_SUCCESS)");
    cg_out_line(o, "return rc;");
    cg_out_close(o);
    if (s->topology) {
        cg_out_line(o, "CG_TRY(cg_cu_topo(&c, &topo));");
        cg_out_open(o, "if (!topo->regular)");
        cg_out_line(o, "/* Not every node holds ppn consecutive ranks (topo->why): the "
                       "declared fallback. */");
        cg_out_line(o, "cg_cu_call_end(&c);");
        cg_out_line(o, "return cgcu_%s(%s);", s->fallback, fallback_args(s->coll));
        cg_out_close(o);
    }
    cg_emit_param_reads(em);
    if (reduces) {
        cg_out_line(o, "CG_TRY(cg_cu_check_op(&c));");
    }
    if (cg_colls[s->coll].rooted) {
        cg_out_line(o, "CG_TRY(cg_cu_check_root(&c, root));");
    }
    cg_out_open(o, "if (0 == %s)", count_name(s->coll));
    cg_out_line(o, "goto out;");
    cg_out_close(o);
}

/* The buffers over the caller's device memory, with the copies that in
 * place and the root need, and the scratch. */
static void prologue_buffers(struct cg_emitter *em)
{
    const struct cg_schedule *s = em->s;
    struct cg_out *o = em->o;
    switch (s->coll) {
    case CG_C_ALLREDUCE:
    case CG_C_BCAST:
        cg_out_line(o, "struct cg_buf out = { (char *)recvbuf, geom, geom.nb };");
        break;
    case CG_C_ALLGATHER:
        cg_out_line(o, "struct cg_buf out = { (char *)recvbuf, geom, p };");
        break;
    case CG_C_ALLTOALL:
        cg_out_line(o, "struct cg_buf in = { (char *)sendbuf, geom, p };");
        cg_out_line(o, "struct cg_buf out = { (char *)recvbuf, geom, p };");
        break;
    case CG_C_REDUCE_SCATTER_BLOCK:
        cg_out_line(o, "struct cg_buf in = { (char *)sendbuf, geom, p };");
        cg_out_line(o, "struct cg_buf out = { (char *)recvbuf, geom, 1 };");
        break;
    default:
        cg_panic("no GPU prologue for %s", cg_colls[s->coll].name);
    }
    if (s->scratch != NULL) {
        cg_out_line(o, "struct cg_buf tmp = { NULL, geom, %s };", cg_emit_c_expr(s->scratch));
    }
    cg_out_blank(o);
    switch (s->coll) {
    case CG_C_ALLREDUCE:
        cg_out_line(o, "/* In place: sendbuf is CG_CU_IN_PLACE, or recvbuf itself (NCCL's form, "
                       "no copy). */");
        cg_out_open(o, "if (sendbuf != CG_CU_IN_PLACE)");
        cg_out_line(o, "CG_TRY(cg_cu_copy(&c, recvbuf, sendbuf, count * c.esize));");
        cg_out_close(o);
        break;
    case CG_C_BCAST:
        cg_out_line(o, "/* sendbuf is read at the root only; in place: CG_CU_IN_PLACE, or recvbuf "
                       "itself. */");
        cg_out_open(o, "if ((rank == root) && (sendbuf != CG_CU_IN_PLACE))");
        cg_out_line(o, "CG_TRY(cg_cu_copy(&c, recvbuf, sendbuf, count * c.esize));");
        cg_out_close(o);
        break;
    case CG_C_ALLGATHER:
        cg_out_line(o, "/* In place: sendbuf is CG_CU_IN_PLACE, or block rank of recvbuf "
                       "(NCCL's form, no copy). */");
        cg_out_open(o, "if (sendbuf != CG_CU_IN_PLACE)");
        cg_out_line(o, "char *mine = out.base + cg_geom_off(&geom, rank) * c.esize;");
        cg_out_line(o, "CG_TRY(cg_cu_copy(&c, mine, sendbuf, sendcount * c.esize));");
        cg_out_close(o);
        break;
    case CG_C_ALLTOALL:
    case CG_C_REDUCE_SCATTER_BLOCK: {
        const char *out_bytes =
            s->coll == CG_C_ALLTOALL ? "geom.count * c.esize" : "recvcount * c.esize";
        cg_out_line(o, "/* In place (sendbuf CG_CU_IN_PLACE: the input is in recvbuf; or the two "
                       "overlap, as in");
        cg_out_line(o, " * NCCL's form), the result overwrites the input: work on a copy. */");
        cg_out_line(o, "if ((sendbuf == CG_CU_IN_PLACE) ||");
        cg_out_line(o, "    cg_cu_overlap(sendbuf, geom.count * c.esize, recvbuf, %s)) {",
                    out_bytes);
        o->indent++;
        cg_out_line(o, "in.base = (char *)cg_cu_scratch(&c, 1, cg_cu_buf_bytes(&c, &geom, p), "
                       "&rc);");
        cg_emit_scratch_check(o);
        cg_out_line(o, "CG_TRY(cg_cu_copy(&c, in.base, (sendbuf == CG_CU_IN_PLACE) ? recvbuf : "
                       "sendbuf,");
        cg_out_line(o, "                  geom.count * c.esize));");
        cg_out_close(o);
        break;
    }
    default:
        cg_panic("no GPU prologue for %s", cg_colls[s->coll].name);
    }
    if (s->scratch != NULL) {
        cg_out_line(o, "tmp.base = (char *)cg_cu_scratch(&c, 0, cg_cu_buf_bytes(&c, &geom, "
                       "tmp.nblocks), &rc);");
        cg_emit_scratch_check(o);
    }
}

/* Inside the function's block, up to the first phase: p and rank, the
 * parameters and lets, the call tag, the geometry and the buffers. */
static void prologue(struct cg_emitter *em)
{
    const struct cg_schedule *s = em->s;
    struct cg_out *o = em->o;
    enum cg_shape shape = cg_colls[s->coll].shape;
    /* The prologue itself needs p for p equal blocks, and rank where it
     * places this rank's data or tells the root apart. */
    int need_p = shape == CG_SHAPE_UNIFORM || shape == CG_SHAPE_ONE;
    int need_rank = s->coll == CG_C_ALLGATHER || s->coll == CG_C_BCAST;
    if (em->used[CG_SLOT_P] || need_p) {
        cg_out_line(o, "const int p = c.p;");
    }
    if (em->used[CG_SLOT_RANK] || need_rank) {
        cg_out_line(o, "const int rank = c.rank;");
    }
    cg_emit_topology_names(em);
    for (int i = 0; i < s->nparams; i++) {
        if (!em->used[s->params[i].slot] || s->params[i].ranged) {
            continue;
        }
        cg_out_line(o, "const int %s = %lld; /* parameter, fixed */", s->params[i].name,
                    (long long)s->params[i].value);
    }
    cg_emit_lets(em, s->lets, s->nlets);
    char tag[200];
    cg_emit_tag_name(em, tag, sizeof(tag), NULL, NULL);
    cg_out_line(o, "CG_CU_TAG_BEGIN(%s);", tag);
    if (shape == CG_SHAPE_SPLIT) {
        cg_out_line(o, "const struct cg_geom geom = { count, %s };", cg_emit_c_expr(s->blocks));
    } else {
        cg_out_line(o, "const struct cg_geom geom = { (size_t)p * %s, p };",
                    count_name(s->coll));
    }
    prologue_buffers(em);
}

int cg_emit_cuda(struct cg_gen *g, const struct cg_schedule *s, int tag_base)
{
    if (!cg_emit_cuda_has(s)) {
        cg_panic("the GPU backend has no %s, or %s has call steps", cg_colls[s->coll].name, s->name);
    }
    struct cg_out o;
    cg_out_init(&o);
    struct cg_emitter em;
    cg_emitter_init(&em, g, s, &o, &cuda_api, tag_base);

    cg_out_line(&o, "/* Generated by collgen from %s. DO NOT EDIT. */", s->file);
    cg_out_blank(&o);
    header_comment(&em);
    cg_out_blank(&o);
    cg_out_line(&o, "#include \"collgen_cuda.h\"");
    cg_out_blank(&o);
    cg_emit_param_knobs(&em);
    char args[80];
    cg_emit_upper(args, sizeof(args), cg_colls[s->coll].name);
    cg_out_line(&o, "int cgcu_%s(CG_CU_%s_ARGS)", s->name, args);
    cg_out_line(&o, "{");
    o.indent++;
    prologue_begin(&em);
    cg_out_line(&o, "/* In a block: C++ forbids a goto out that jumps over initialisations into "
                   "their scope. */");
    cg_out_line(&o, "{");
    o.indent++;
    prologue(&em);
    for (int i = 0; i < s->nphases; i++) {
        cg_emit_phase(&em, &s->phases[i]);
    }
    char tag[200];
    cg_emit_tag_name(&em, tag, sizeof(tag), NULL, NULL);
    cg_out_blank(&o);
    cg_out_line(&o, "CG_CU_TAG_END(%s);", tag);
    cg_out_close(&o);
    o.indent--;
    cg_out_line(&o, "out:");
    o.indent++;
    cg_out_line(&o, "cg_cu_call_end(&c);");
    cg_out_line(&o, "return rc;");
    cg_out_close(&o);

    char path[4096];
    snprintf(path, sizeof(path), "%s/cuda/%s.cu", g->opt->out_dir, s->name);
    int rc = cg_emit_write(g, &o, path);
    cg_out_fini(&o);
    return rc;
}
