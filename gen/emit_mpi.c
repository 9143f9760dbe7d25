/* emit_mpi.c - pass 5: a checked, verified schedule -> C over MPI
 * point-to-point, in emitted/mpi/<schedule>.c.
 *
 * The function has the MPI collective's signature (counts as size_t) and
 * reads like a coll_base function: header comment, prologue, a loop per
 * phase, one comment per step with the schedule's file and line, a single
 * exit. Logic lives in runtime/ (cg_send, cg_reduce, ...); the body is a
 * sequence of calls. Expressions are printed from trees; identifiers come
 * from the checked IR. Reports no user errors: an impossible state is a
 * generator bug (cg_panic).
 *
 * The header comment, the phases and the steps are emit_common.c's, shared
 * with emit_cuda.c; this file has what is MPI's own: the signature, the
 * prologue (MPI_IN_PLACE, roots, datatypes, scratch) and runtime/'s names.
 */
#include <stdio.h>

#include "emit_common.h"

/* The runtime/ calls the shared phase and step code writes. */
static const struct cg_emit_api mpi_api = {
    .tag_begin = "CG_TAG_BEGIN",
    .tag_end = "CG_TAG_END",
    .xchg_begin = "cg_xchg_begin",
    .send = "cg_send",
    .recv = "cg_recv",
    .xchg_wait = "cg_xchg_wait",
    .reduce = "cg_reduce",
    .copy = "cg_copy",
};

/* "CG_ALLREDUCE_ARGS": the signature macro of runtime/cg_algo.h. */
static void args_macro(enum cg_coll_kind c, char *buf, size_t cap)
{
    char u[64];
    cg_emit_upper(u, sizeof(u), cg_colls[c].name);
    snprintf(buf, cap, "CG_%s_ARGS", u);
}

/* The arguments passed on to a fallback: the function's own. */
static const char *fallback_args(enum cg_coll_kind c)
{
    switch (c) {
    case CG_C_ALLREDUCE:
    case CG_C_SCAN:
    case CG_C_EXSCAN:
        return "sendbuf, recvbuf, count, datatype, op, comm";
    case CG_C_ALLGATHER:
    case CG_C_ALLTOALL:
        return "sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm";
    case CG_C_REDUCE_SCATTER_BLOCK:
        return "sendbuf, recvbuf, recvcount, datatype, op, comm";
    case CG_C_BCAST:
        return "buffer, count, datatype, root, comm";
    case CG_C_REDUCE:
        return "sendbuf, recvbuf, count, datatype, op, root, comm";
    case CG_C_GATHER:
    case CG_C_SCATTER:
        return "sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm";
    case CG_C_BARRIER:
        return "comm";
    case CG_C_COUNT_:
        break;
    }
    cg_panic("unexpected collective %d", (int)c);
    return "";
}

/* From the top of the function to the count == 0 shortcut: cg_call_begin
 * with the datatype that describes this rank's blocks. */
static void prologue_begin(struct cg_emitter *em)
{
    const struct cg_schedule *s = em->s;
    struct cg_out *o = em->o;
    const char *flags = s->commutative ? "CG_NEEDS_COMMUTATIVE" : "0";
    const char *count = "count";
    cg_out_line(o, "struct cg_call c;");
    cg_out_line(o, "int rc = MPI_SUCCESS;");
    switch (s->coll) {
    case CG_C_GATHER:
        cg_out_line(o, "int rank = 0;");
        cg_out_blank(o);
        cg_out_line(o, "/* Only the root's recvcount and recvtype are significant: the root's "
                       "blocks are");
        cg_out_line(o, " * recvbuf's, every other rank keeps its blocks as sendcount x sendtype "
                       "in scratch.");
        cg_out_line(o, " * Messages match because MPI requires the two type signatures to be "
                       "equal. */");
        cg_out_line(o, "rc = cg_comm_rank(comm, &rank);");
        cg_out_open(o, "if (rc != MPI_SUCCESS)");
        cg_out_line(o, "return rc;");
        cg_out_close(o);
        cg_out_line(o, "const size_t count = (rank == root) ? recvcount : sendcount;");
        cg_out_line(o, "rc = cg_call_begin(&c, comm, (rank == root) ? recvtype : sendtype, "
                       "MPI_OP_NULL, 0);");
        break;
    case CG_C_SCATTER:
        cg_out_line(o, "int rank = 0;");
        cg_out_blank(o);
        cg_out_line(o, "/* Blocks are recvcount x recvtype, except at a root called in place, "
                       "whose recvcount");
        cg_out_line(o, " * and recvtype are not significant: it works in sendtype, its block "
                       "staying in sendbuf.");
        cg_out_line(o, " * Messages match because MPI requires the type signatures to be "
                       "equal. */");
        cg_out_line(o, "rc = cg_comm_rank(comm, &rank);");
        cg_out_open(o, "if (rc != MPI_SUCCESS)");
        cg_out_line(o, "return rc;");
        cg_out_close(o);
        cg_out_line(o, "const size_t count = ((rank == root) && (recvbuf == MPI_IN_PLACE)) ? "
                       "sendcount : recvcount;");
        cg_out_line(o, "rc = cg_call_begin(&c, comm,");
        cg_out_line(o, "                   ((rank == root) && (recvbuf == MPI_IN_PLACE)) ? "
                       "sendtype : recvtype,");
        cg_out_line(o, "                   MPI_OP_NULL, 0);");
        break;
    case CG_C_BARRIER:
        cg_out_line(o, "char token = 0;");
        cg_out_blank(o);
        cg_out_line(o, "rc = cg_call_begin(&c, comm, MPI_BYTE, MPI_OP_NULL, 0);");
        count = NULL;
        break;
    case CG_C_ALLGATHER:
    case CG_C_ALLTOALL:
        cg_out_blank(o);
        cg_out_line(o, "rc = cg_call_begin(&c, comm, recvtype, MPI_OP_NULL, 0);");
        count = "recvcount";
        break;
    case CG_C_REDUCE_SCATTER_BLOCK:
        cg_out_blank(o);
        cg_out_line(o, "rc = cg_call_begin(&c, comm, datatype, op, %s);", flags);
        count = "recvcount";
        break;
    case CG_C_BCAST:
        cg_out_blank(o);
        cg_out_line(o, "rc = cg_call_begin(&c, comm, datatype, MPI_OP_NULL, 0);");
        break;
    case CG_C_ALLREDUCE:
    case CG_C_REDUCE:
    case CG_C_SCAN:
    case CG_C_EXSCAN:
        cg_out_blank(o);
        cg_out_line(o, "rc = cg_call_begin(&c, comm, datatype, op, %s);", flags);
        break;
    case CG_C_COUNT_:
        cg_panic("unexpected collective %d", (int)s->coll);
    }
    cg_out_open(o, "if (rc != MPI_SUCCESS)");
    cg_out_line(o, "return rc;");
    cg_out_close(o);
    if (s->topology) {
        cg_out_line(o, "const struct cg_topo *topo = NULL;");
        cg_out_line(o, "CG_TRY(cg_topo(&c, &topo));");
        cg_out_open(o, "if (!topo->regular)");
        cg_out_line(o, "/* Not every node holds ppn consecutive ranks (topo->why says how): "
                       "the declared");
        cg_out_line(o, " * fallback computes the same collective on any communicator. */");
        cg_out_line(o, "cg_call_end(&c);");
        cg_out_line(o, "return cg_%s(%s);", s->fallback, fallback_args(s->coll));
        cg_out_close(o);
    }
    for (int i = 0; i < s->nparams; i++) {
        if (s->params[i].ranged && em->used[s->params[i].slot]) {
            cg_out_line(o, "int %s = 0;", s->params[i].name);
        }
    }
    cg_emit_param_reads(em);
    if (count != NULL) {
        cg_out_open(o, "if (0 == %s)", count);
        cg_out_line(o, "goto out;");
        cg_out_close(o);
    }
}

/* The buffers: `out` (and `in`) over the caller's memory, with the copies
 * and scratch that MPI_IN_PLACE, non-root ranks and mismatched datatypes
 * need. */
static void prologue_buffers(struct cg_emitter *em)
{
    const struct cg_schedule *s = em->s;
    struct cg_out *o = em->o;
    switch (s->coll) {
    case CG_C_ALLREDUCE:
    case CG_C_SCAN:
    case CG_C_REDUCE:
        cg_out_line(o, "struct cg_buf out = { recvbuf, geom, geom.nb };");
        break;
    case CG_C_EXSCAN:
        cg_out_line(o, "struct cg_buf in = { (char *)sendbuf, geom, geom.nb };");
        cg_out_line(o, "struct cg_buf out = { recvbuf, geom, geom.nb };");
        break;
    case CG_C_BCAST:
        cg_out_line(o, "struct cg_buf out = { buffer, geom, geom.nb };");
        break;
    case CG_C_ALLGATHER:
    case CG_C_GATHER:
        cg_out_line(o, "struct cg_buf out = { recvbuf, geom, p };");
        break;
    case CG_C_ALLTOALL:
        cg_out_line(o, "struct cg_buf in = { (char *)sendbuf, geom, p };");
        cg_out_line(o, "struct cg_buf out = { recvbuf, geom, p };");
        break;
    case CG_C_REDUCE_SCATTER_BLOCK:
    case CG_C_SCATTER:
        cg_out_line(o, "struct cg_buf in = { (char *)sendbuf, geom, p };");
        cg_out_line(o, "struct cg_buf out = { recvbuf, geom, 1 };");
        break;
    case CG_C_BARRIER:
        cg_out_line(o, "struct cg_buf out = { &token, geom, 1 };");
        break;
    case CG_C_COUNT_:
        cg_panic("unexpected collective %d", (int)s->coll);
    }
    if (s->scratch != NULL) {
        cg_out_line(o, "struct cg_buf tmp = { NULL, geom, %s };", cg_emit_c_expr(s->scratch));
    }
    cg_out_blank(o);
    switch (s->coll) {
    case CG_C_ALLREDUCE:
    case CG_C_SCAN:
        cg_out_open(o, "if (sendbuf != MPI_IN_PLACE)");
        cg_out_line(o, "CG_TRY(cg_copy_typed(sendbuf, count, datatype, recvbuf, count, "
                       "datatype));");
        cg_out_close(o);
        break;
    case CG_C_REDUCE:
        cg_out_line(o, "/* recvbuf is significant only at the root: elsewhere the partial "
                       "results live in scratch. */");
        cg_out_open(o, "if (rank != root)");
        cg_out_line(o, "out.base = cg_scratch(&c, 1, cg_buf_bytes(&c, &geom, out.nblocks), &rc);");
        cg_emit_scratch_check(o);
        cg_out_close(o);
        cg_out_open(o, "if (sendbuf != MPI_IN_PLACE)");
        cg_out_line(o, "CG_TRY(cg_copy_typed(sendbuf, count, datatype, out.base, count, "
                       "datatype));");
        cg_out_close(o);
        break;
    case CG_C_ALLGATHER:
        cg_out_open(o, "if (sendbuf != MPI_IN_PLACE)");
        cg_out_line(o, "char *mine = out.base + cg_geom_off(&geom, rank) * (size_t)c.extent;");
        cg_out_line(o, "CG_TRY(cg_copy_typed(sendbuf, sendcount, sendtype, mine, recvcount, "
                       "recvtype));");
        cg_out_close(o);
        break;
    case CG_C_GATHER:
        cg_out_line(o, "/* recvbuf is significant only at the root: elsewhere gather into "
                       "scratch. */");
        cg_out_open(o, "if (rank != root)");
        cg_out_line(o, "out.base = cg_scratch(&c, 1, cg_buf_bytes(&c, &geom, p), &rc);");
        cg_emit_scratch_check(o);
        cg_out_close(o);
        cg_out_open(o, "if (sendbuf != MPI_IN_PLACE)");
        cg_out_line(o, "char *mine = out.base + cg_geom_off(&geom, rank) * (size_t)c.extent;");
        cg_out_line(o, "CG_TRY(cg_copy_typed(sendbuf, sendcount, sendtype, mine, count, "
                       "c.dtype));");
        cg_out_close(o);
        break;
    case CG_C_SCATTER:
        cg_out_line(o, "/* At the root in place, out is the root's own block of sendbuf (the "
                       "schedule's");
        cg_out_line(o, " * copy of it onto itself is a no-op). Otherwise the root's input must "
                       "have recvtype's");
        cg_out_line(o, " * layout: sendbuf itself when the two sides agree, else a converted "
                       "copy. */");
        cg_out_open(o, "if ((rank == root) && (recvbuf == MPI_IN_PLACE))");
        cg_out_line(o, "out.base = in.base + cg_geom_off(&geom, root) * (size_t)c.extent;");
        cg_out_close_open(o, "else if ((rank == root) && ((sendtype != recvtype) || "
                             "(sendcount != recvcount)))");
        cg_out_line(o, "in.base = cg_scratch(&c, 1, cg_buf_bytes(&c, &geom, p), &rc);");
        cg_emit_scratch_check(o);
        cg_out_line(o, "CG_TRY(cg_copy_typed(sendbuf, (size_t)p * sendcount, sendtype, in.base, "
                       "geom.count, recvtype));");
        cg_out_close(o);
        break;
    case CG_C_ALLTOALL:
        cg_out_line(o, "/* The input in recvtype's layout: sendbuf itself when the two sides "
                       "agree; in place");
        cg_out_line(o, " * (it is recvbuf, which the result overwrites) or when they differ, a "
                       "copy. */");
        cg_out_open(o, "if (sendbuf == MPI_IN_PLACE)");
        cg_out_line(o, "in.base = cg_scratch(&c, 1, cg_buf_bytes(&c, &geom, p), &rc);");
        cg_emit_scratch_check(o);
        cg_out_line(o, "CG_TRY(cg_copy_typed(recvbuf, geom.count, recvtype, in.base, "
                       "geom.count, recvtype));");
        cg_out_close_open(o, "else if ((sendtype != recvtype) || (sendcount != recvcount))");
        cg_out_line(o, "in.base = cg_scratch(&c, 1, cg_buf_bytes(&c, &geom, p), &rc);");
        cg_emit_scratch_check(o);
        cg_out_line(o, "CG_TRY(cg_copy_typed(sendbuf, (size_t)p * sendcount, sendtype, in.base, "
                       "geom.count, recvtype));");
        cg_out_close(o);
        break;
    case CG_C_REDUCE_SCATTER_BLOCK:
    case CG_C_EXSCAN:
        cg_out_line(o, "/* In place, the input is recvbuf, which the result overwrites: work "
                       "on a copy. */");
        cg_out_open(o, "if (sendbuf == MPI_IN_PLACE)");
        cg_out_line(o, "in.base = cg_scratch(&c, 1, cg_buf_bytes(&c, &geom, %s), &rc);",
                    s->coll == CG_C_EXSCAN ? "in.nblocks" : "p");
        cg_emit_scratch_check(o);
        cg_out_line(o, "CG_TRY(cg_copy_typed(recvbuf, geom.count, datatype, in.base, "
                       "geom.count, datatype));");
        cg_out_close(o);
        break;
    case CG_C_BCAST:
    case CG_C_BARRIER:
        break;
    case CG_C_COUNT_:
        cg_panic("unexpected collective %d", (int)s->coll);
    }
    if (s->scratch != NULL) {
        cg_out_line(o, "tmp.base = cg_scratch(&c, 0, cg_buf_bytes(&c, &geom, tmp.nblocks), &rc);");
        cg_emit_scratch_check(o);
    }
}

static void prologue(struct cg_emitter *em)
{
    const struct cg_schedule *s = em->s;
    struct cg_out *o = em->o;
    enum cg_shape shape = cg_colls[s->coll].shape;
    prologue_begin(em);
    /* The prologue itself needs p for p equal blocks, and rank where it
     * places this rank's data or tells the root apart; gather and scatter
     * declared rank before cg_call_begin. */
    int need_p = shape == CG_SHAPE_UNIFORM || shape == CG_SHAPE_ONE;
    int need_rank = s->coll == CG_C_ALLGATHER || s->coll == CG_C_REDUCE;
    int has_rank = s->coll == CG_C_GATHER || s->coll == CG_C_SCATTER;
    if (em->used[CG_SLOT_P] || need_p) {
        cg_out_line(o, "const int p = c.p;");
    }
    if ((em->used[CG_SLOT_RANK] || need_rank) && !has_rank) {
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
    cg_out_line(o, "CG_TAG_BEGIN(%s);", tag);
    switch (shape) {
    case CG_SHAPE_SPLIT:
        cg_out_line(o, "const struct cg_geom geom = { count, %s };", cg_emit_c_expr(s->blocks));
        break;
    case CG_SHAPE_UNIFORM:
    case CG_SHAPE_ONE:
        cg_out_line(o, "const struct cg_geom geom = { (size_t)p * %s, p };",
                    (s->coll == CG_C_ALLGATHER || s->coll == CG_C_ALLTOALL ||
                     s->coll == CG_C_REDUCE_SCATTER_BLOCK)
                        ? "recvcount"
                        : "count");
        break;
    case CG_SHAPE_TOKEN:
        cg_out_line(o, "/* No user data: every message carries a 1-byte token (the runtime "
                       "posts nothing");
        cg_out_line(o, " * for an empty range); merging tokens is a no-op. */");
        cg_out_line(o, "const struct cg_geom geom = { 1, 1 };");
        break;
    }
    prologue_buffers(em);
}

/* The header comment's lines that are the MPI backend's own. */
static void header_comment(struct cg_emitter *em)
{
    const struct cg_schedule *s = em->s;
    char function[100], accepts[120];
    snprintf(function, sizeof(function), "cg_%s", s->name);
    if (cg_colls[s->coll].shape == CG_SHAPE_TOKEN) {
        snprintf(accepts, sizeof(accepts), "same as %s()", cg_colls[s->coll].mpi);
    } else {
        snprintf(accepts, sizeof(accepts), "same as %s(), with counts as size_t",
                 cg_colls[s->coll].mpi);
    }
    struct cg_emit_header h = { function, accepts, "MPI_SUCCESS or an MPI error code", NULL };
    if (s->commutative) {
        h.limitations = "needs a commutative op (returns MPI_ERR_OP otherwise)";
    } else if (cg_colls[s->coll].reduces) {
        h.limitations = "none; non-commutative ops are reduced in rank order";
    }
    cg_emit_header_comment(em, &h);
}

int cg_emit_mpi(struct cg_gen *g, const struct cg_schedule *s, int tag_base)
{
    struct cg_out o;
    cg_out_init(&o);
    struct cg_emitter em;
    cg_emitter_init(&em, g, s, &o, &mpi_api, tag_base);

    cg_out_line(&o, "/* Generated by collgen from %s. DO NOT EDIT. */", s->file);
    cg_out_blank(&o);
    header_comment(&em);
    cg_out_blank(&o);
    cg_out_line(&o, "#include \"collgen.h\"");
    cg_out_blank(&o);
    cg_emit_param_knobs(&em);
    char args[80];
    args_macro(s->coll, args, sizeof(args));
    cg_out_line(&o, "int cg_%s(%s)", s->name, args);
    cg_out_line(&o, "{");
    o.indent++;
    prologue(&em);
    for (int i = 0; i < s->nphases; i++) {
        cg_emit_phase(&em, &s->phases[i]);
    }
    char tag[200];
    cg_emit_tag_name(&em, tag, sizeof(tag), NULL, NULL);
    cg_out_blank(&o);
    cg_out_line(&o, "CG_TAG_END(%s);", tag);
    o.indent--;
    cg_out_line(&o, "out:");
    o.indent++;
    cg_out_line(&o, "cg_call_end(&c);");
    cg_out_line(&o, "return rc;");
    cg_out_close(&o);

    char path[4096];
    snprintf(path, sizeof(path), "%s/mpi/%s.c", g->opt->out_dir, s->name);
    int rc = cg_emit_write(g, &o, path);
    cg_out_fini(&o);
    return rc;
}
