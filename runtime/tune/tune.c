/* tune.c - libcgtune.so: MPI_<Collective> for the 11 regular collectives,
 * MPI_Init / MPI_Init_thread / MPI_Finalize, through PMPI.
 *
 * Per call: the rule for (collective, p, ppn, bytes) in the selection
 * (CG_TUNE); a generated schedule or baseline runs when it can serve the
 * call, anything else goes to PMPI_<Collective> unchanged, and both are
 * counted for the footer MPI_Finalize writes (CG_TUNE_LOG).
 *
 * Why each input of the choice is alike on every rank of the call (MPI 4.0,
 * chapter 6 rules every correct program follows):
 *   collective   every rank calls the same collective on a communicator, in
 *                the same order;
 *   p            the communicator's size;
 *   ppn          detected once per communicator by runtime/topo.c, which
 *                agrees on regularity with allreduces; an irregular
 *                communicator is ppn 0 everywhere (only rules without a ppn
 *                range hold it);
 *   bytes        the record's size_B (cg_coll_size_B): count x type size of
 *                the vector, or p x the block. The amount of data a rank
 *                sends must equal what its peer receives (type signatures
 *                match), so the block's bytes are equal on every rank, read
 *                from the arguments that are significant there (gather: the
 *                send side except at a root in place; scatter: the receive
 *                side except at a root in place; allgather, alltoall: the
 *                receive side, significant everywhere);
 *   datatype,op  reductions (allreduce, reduce, reduce_scatter_block, scan,
 *                exscan) need the same count, datatype and op on every rank;
 *                the datatype tests (extent, contiguity) and the op's
 *                commutativity are therefore alike. For the other
 *                collectives MPI lets the datatypes differ between ranks
 *                when the signatures match; the tests then read this rank's
 *                datatypes, which is alike when every rank passes
 *                datatypes of the same kind (the usual case; a program that
 *                mixes, say, a resized type with a negative lower bound at
 *                one rank and MPI_BYTE at another should not preload this
 *                library, runtime/README.md says so);
 *   root         equal on every rank (MPI requires it); every generated
 *                rooted schedule serves any root, so it does not select;
 *   in place     not a key: generated functions serve both forms, and for
 *                the rooted collectives it is set at the root only.
 *
 * Calls that the generated functions make themselves (a mock-up's native
 * allreduce, the topology's splits) reach MPI_<Collective> here again; the
 * thread's depth counter sends them straight to PMPI, uncounted.
 */
#define _GNU_SOURCE
#include "cgtune.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cg.h"
#include "bench_baseline.h"

#ifndef CG_FLAVOUR
#define CG_FLAVOUR "unknown"
#endif

/* Why initial-exec: the library is preloaded, so its TLS is static and the
 * depth test is one load, not a __tls_get_addr call per collective. */
static __thread int cgt_depth __attribute__((tls_model("initial-exec")));

static struct cgt_selection sel;
static int active;                          /* after MPI_Init, before MPI_Finalize */
static unsigned long long norule[CG_COLL_COUNT_]; /* calls no rule held */
static unsigned long long max_bytes = INT_MAX;    /* CG_TUNE_MAX_BYTES */
static int world_rank, world_size;
static int sel_state;                       /* 0 unset, 1 loaded, -1 rejected */

/* ---- the communicator's facts, cached as an attribute ---------------------- */

struct cgt_comm {
    int p, rank, inter;
    int topo;  /* 0: not asked; 1: asked (ppn valid) */
    int ppn;   /* ranks per node when regular, 0 otherwise */
};

static int keyval = MPI_KEYVAL_INVALID;
/* Why a one-entry cache before the attribute: most programs call most of
 * their collectives on one communicator, and comparing handles is cheaper
 * than MPI_Comm_get_attr. The attribute's delete callback clears it, so a
 * freed handle reused for a new communicator never finds the old facts. */
static MPI_Comm last_comm = MPI_COMM_NULL;
static struct cgt_comm *last_cc;

static int comm_delete(MPI_Comm comm, int kv, void *attr, void *extra)
{
    (void)comm;
    (void)kv;
    (void)extra;
    if (last_cc == attr) {
        last_comm = MPI_COMM_NULL;
        last_cc = NULL;
    }
    free(attr);
    return MPI_SUCCESS;
}

static struct cgt_comm *comm_get(MPI_Comm comm)
{
    struct cgt_comm *cc = NULL;
    int found = 0;

    if (comm == last_comm) {
        return last_cc;
    }
    if (keyval == MPI_KEYVAL_INVALID) {
        if (PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, comm_delete, &keyval, NULL) !=
            MPI_SUCCESS) {
            return NULL;
        }
    }
    if (PMPI_Comm_get_attr(comm, keyval, &cc, &found) != MPI_SUCCESS) {
        return NULL;
    }
    if (!found) {
        cc = calloc(1, sizeof(*cc));
        if (cc == NULL) {
            return NULL;
        }
        if ((PMPI_Comm_test_inter(comm, &cc->inter) != MPI_SUCCESS) ||
            (PMPI_Comm_size(comm, &cc->p) != MPI_SUCCESS) ||
            (PMPI_Comm_rank(comm, &cc->rank) != MPI_SUCCESS) ||
            (PMPI_Comm_set_attr(comm, keyval, cc) != MPI_SUCCESS)) {
            free(cc);
            return NULL;
        }
    }
    last_comm = comm;
    last_cc = cc;
    return cc;
}

/* ppn of the communicator, detected on the first call of a collective whose
 * rules have ppn ranges (a collective operation: every rank is in the same
 * call, so every rank asks). */
static int comm_ppn(MPI_Comm comm, struct cgt_comm *cc)
{
    if (!cc->topo) {
        const struct cg_topo *t = NULL;
        cgt_depth++;
        int rc = cg_topo_of(comm, &t);
        cgt_depth--;
        cc->ppn = ((rc == MPI_SUCCESS) && (t != NULL) && t->regular) ? t->ppn : 0;
        cc->topo = 1;
    }
    return cc->ppn;
}

/* ---- the choice ----------------------------------------------------------- */

static unsigned long long type_bytes(MPI_Datatype t, int count)
{
    int sz = 0;
    if ((t == MPI_DATATYPE_NULL) || (count <= 0) || (PMPI_Type_size(t, &sz) != MPI_SUCCESS) ||
        (sz < 0)) {
        return 0;
    }
    return (unsigned long long)count * (unsigned long long)sz;
}

/* The datatype reasons of one significant datatype (MPI_DATATYPE_NULL: none).
 * Why baselines need contiguous datatypes here: they are hand-written
 * plain MPI (harness/baselines) that stage data by bytes of the extent, so
 * a vector type's gaps come back overwritten (tests/run_cgtune.sh saw it in
 * allgather_bruck in place); the registry has no flag for it. */
static int type_reason(const struct cgt_rule *r, MPI_Datatype t)
{
    MPI_Aint lb = 0, extent = 0, tlb = 0, textent = 0;
    int size = 0;

    if (t == MPI_DATATYPE_NULL) {
        return -1;
    }
    if ((PMPI_Type_get_extent(t, &lb, &extent) != MPI_SUCCESS) ||
        (PMPI_Type_get_true_extent(t, &tlb, &textent) != MPI_SUCCESS)) {
        return CGT_R_DTYPE;
    }
    /* Why: runtime/comm.c's cg_call_begin refuses these (MPI_ERR_TYPE). */
    if ((extent <= 0) || (tlb < 0)) {
        return CGT_R_DTYPE;
    }
    if (r->algo->contiguous_only || (r->kind == CGT_BASELINE)) {
        if ((PMPI_Type_size(t, &size) != MPI_SUCCESS) || ((MPI_Aint)size != extent) ||
            (lb != 0) || (tlb != 0)) {
            return CGT_R_NONCONTIG;
        }
    }
    return -1;
}

/* Entry of every wrapper: the communicator's facts when the call may be
 * tuned, NULL when it goes straight to PMPI (counted unless it is one of
 * our own nested calls). */
static struct cgt_comm *enter(int coll, MPI_Comm comm)
{
    if (cgt_depth > 0) {
        return NULL;
    }
    if (!active || (sel.n[coll] == 0) || (comm == MPI_COMM_NULL)) {
        norule[coll]++;
        return NULL;
    }
    struct cgt_comm *cc = comm_get(comm);
    if (cc == NULL) {
        norule[coll]++;
    }
    return cc;
}

/* The rule to run for this call, or NULL (pass to PMPI; counted). t1, t2:
 * this rank's significant datatypes (MPI_DATATYPE_NULL where none). */
static struct cgt_rule *decide(int coll, MPI_Comm comm, struct cgt_comm *cc,
                               unsigned long long bytes, MPI_Datatype t1, MPI_Datatype t2,
                               MPI_Op op)
{
    /* Why -1 for an intercommunicator: it has no node structure here, and
     * its call passes through under whichever rule its sizes pick. */
    int ppn = cc->inter ? -1 : sel.needs_ppn[coll] ? comm_ppn(comm, cc) : 0;
    struct cgt_rule *r = cgt_lookup(&sel, coll, cc->p, ppn, bytes);
    int why = -1;

    if (r == NULL) {
        norule[coll]++;
        return NULL;
    }
    if (r->kind == CGT_NATIVE_DEFAULT) {
        r->served++;
        return NULL;
    }
    if (r->kind == CGT_NATIVE_ALG) {
        why = CGT_R_NATIVE_ALG;
    } else if (cc->inter) {
        why = CGT_R_INTER;
    } else if (bytes > max_bytes) {
        why = CGT_R_COUNT;
    } else if (((why = type_reason(r, t1)) < 0) && ((why = type_reason(r, t2)) < 0) &&
               r->algo->commutative_only && (op != MPI_OP_NULL)) {
        int commute = 1;
        if ((PMPI_Op_commutative(op, &commute) != MPI_SUCCESS) || !commute) {
            why = CGT_R_NONCOMMUTATIVE;
        }
    }
    if (why >= 0) {
        r->fallback[why]++;
        return NULL;
    }
    return r;
}

/* Sets a rule's params for its schedule when another rule (or none) set
 * them last; params the rule does not give go back to the environment or
 * the default (cg_param_set's INT_MIN). */
static void apply_params(const struct cgt_rule *r)
{
    static struct {
        const struct cg_algo *algo;
        const struct cgt_rule *rule;
    } applied[64];
    static int napplied;
    int i = 0;

    if (r->algo->nparams == 0) {
        return;
    }
    for (i = 0; i < napplied; i++) {
        if (applied[i].algo == r->algo) {
            break;
        }
    }
    if ((i < napplied) && (applied[i].rule == r)) {
        return;
    }
    for (int k = 0; k < r->algo->nparams; k++) {
        int v = INT_MIN;
        for (int j = 0; j < r->nparams; j++) {
            if (strcmp(r->params[j].name, r->algo->params[k].name) == 0) {
                v = r->params[j].value;
            }
        }
        (void)cg_param_set(r->algo->name, r->algo->params[k].name, v);
    }
    if (i == napplied) {
        if (napplied == (int)(sizeof(applied) / sizeof(applied[0]))) {
            return; /* not remembered: set again on every call */
        }
        napplied++;
    }
    applied[i].algo = r->algo;
    applied[i].rule = r;
}

/* Runs the rule's function as the call; its error goes to the
 * communicator's error handler, as the library's own would. */
#define CGT_RUN(r, id, comm, args)                   \
    do {                                             \
        int rc_;                                     \
        apply_params(r);                             \
        cgt_depth++;                                 \
        rc_ = (r)->algo->fn.id args;                 \
        cgt_depth--;                                 \
        (r)->served++;                               \
        if (rc_ != MPI_SUCCESS) {                    \
            (void)PMPI_Comm_call_errhandler(comm, rc_); \
        }                                            \
        return rc_;                                  \
    } while (0)

/* ---- the 11 collectives --------------------------------------------------- */

int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                  MPI_Op op, MPI_Comm comm)
{
    struct cgt_comm *cc = enter(CG_COLL_ALLREDUCE, comm);
    struct cgt_rule *r = NULL;
    if ((cc != NULL) &&
        ((r = decide(CG_COLL_ALLREDUCE, comm, cc, type_bytes(datatype, count), datatype,
                     MPI_DATATYPE_NULL, op)) != NULL)) {
        CGT_RUN(r, allreduce, comm, (sendbuf, recvbuf, (size_t)count, datatype, op, comm));
    }
    return PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm);
}

int MPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
               int root, MPI_Comm comm)
{
    struct cgt_comm *cc = enter(CG_COLL_REDUCE, comm);
    struct cgt_rule *r = NULL;
    if ((cc != NULL) &&
        ((r = decide(CG_COLL_REDUCE, comm, cc, type_bytes(datatype, count), datatype,
                     MPI_DATATYPE_NULL, op)) != NULL)) {
        CGT_RUN(r, reduce, comm, (sendbuf, recvbuf, (size_t)count, datatype, op, root, comm));
    }
    return PMPI_Reduce(sendbuf, recvbuf, count, datatype, op, root, comm);
}

int MPI_Scan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
             MPI_Comm comm)
{
    struct cgt_comm *cc = enter(CG_COLL_SCAN, comm);
    struct cgt_rule *r = NULL;
    if ((cc != NULL) &&
        ((r = decide(CG_COLL_SCAN, comm, cc, type_bytes(datatype, count), datatype,
                     MPI_DATATYPE_NULL, op)) != NULL)) {
        CGT_RUN(r, scan, comm, (sendbuf, recvbuf, (size_t)count, datatype, op, comm));
    }
    return PMPI_Scan(sendbuf, recvbuf, count, datatype, op, comm);
}

int MPI_Exscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
               MPI_Comm comm)
{
    struct cgt_comm *cc = enter(CG_COLL_EXSCAN, comm);
    struct cgt_rule *r = NULL;
    if ((cc != NULL) &&
        ((r = decide(CG_COLL_EXSCAN, comm, cc, type_bytes(datatype, count), datatype,
                     MPI_DATATYPE_NULL, op)) != NULL)) {
        CGT_RUN(r, exscan, comm, (sendbuf, recvbuf, (size_t)count, datatype, op, comm));
    }
    return PMPI_Exscan(sendbuf, recvbuf, count, datatype, op, comm);
}

int MPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                             MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    struct cgt_comm *cc = enter(CG_COLL_REDUCE_SCATTER_BLOCK, comm);
    struct cgt_rule *r = NULL;
    if ((cc != NULL) &&
        ((r = decide(CG_COLL_REDUCE_SCATTER_BLOCK, comm, cc,
                     (unsigned long long)cc->p * type_bytes(datatype, recvcount), datatype,
                     MPI_DATATYPE_NULL, op)) != NULL)) {
        CGT_RUN(r, reduce_scatter_block, comm,
                (sendbuf, recvbuf, (size_t)recvcount, datatype, op, comm));
    }
    return PMPI_Reduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm);
}

int MPI_Bcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm)
{
    struct cgt_comm *cc = enter(CG_COLL_BCAST, comm);
    struct cgt_rule *r = NULL;
    if ((cc != NULL) &&
        ((r = decide(CG_COLL_BCAST, comm, cc, type_bytes(datatype, count), datatype,
                     MPI_DATATYPE_NULL, MPI_OP_NULL)) != NULL)) {
        CGT_RUN(r, bcast, comm, (buffer, (size_t)count, datatype, root, comm));
    }
    return PMPI_Bcast(buffer, count, datatype, root, comm);
}

int MPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    struct cgt_comm *cc = enter(CG_COLL_ALLGATHER, comm);
    struct cgt_rule *r = NULL;
    if ((cc != NULL) &&
        ((r = decide(CG_COLL_ALLGATHER, comm, cc,
                     (unsigned long long)cc->p * type_bytes(recvtype, recvcount), recvtype,
                     sendbuf == MPI_IN_PLACE ? MPI_DATATYPE_NULL : sendtype, MPI_OP_NULL)) !=
         NULL)) {
        CGT_RUN(r, allgather, comm,
                (sendbuf, (size_t)sendcount, sendtype, recvbuf, (size_t)recvcount, recvtype,
                 comm));
    }
    return PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}

int MPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    struct cgt_comm *cc = enter(CG_COLL_ALLTOALL, comm);
    struct cgt_rule *r = NULL;
    if ((cc != NULL) &&
        ((r = decide(CG_COLL_ALLTOALL, comm, cc,
                     (unsigned long long)cc->p * type_bytes(recvtype, recvcount), recvtype,
                     sendbuf == MPI_IN_PLACE ? MPI_DATATYPE_NULL : sendtype, MPI_OP_NULL)) !=
         NULL)) {
        CGT_RUN(r, alltoall, comm,
                (sendbuf, (size_t)sendcount, sendtype, recvbuf, (size_t)recvcount, recvtype,
                 comm));
    }
    return PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}

int MPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
               int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    struct cgt_comm *cc = enter(CG_COLL_GATHER, comm);
    struct cgt_rule *r = NULL;
    if (cc != NULL) {
        int at_root = !cc->inter && (cc->rank == root);
        int in_place = at_root && (sendbuf == MPI_IN_PLACE);
        unsigned long long block =
            in_place ? type_bytes(recvtype, recvcount) : type_bytes(sendtype, sendcount);
        r = decide(CG_COLL_GATHER, comm, cc, (unsigned long long)cc->p * block,
                   in_place ? MPI_DATATYPE_NULL : sendtype,
                   at_root ? recvtype : MPI_DATATYPE_NULL, MPI_OP_NULL);
        if (r != NULL) {
            CGT_RUN(r, gather, comm,
                    (sendbuf, (size_t)sendcount, sendtype, recvbuf, (size_t)recvcount, recvtype,
                     root, comm));
        }
    }
    return PMPI_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
}

int MPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    struct cgt_comm *cc = enter(CG_COLL_SCATTER, comm);
    struct cgt_rule *r = NULL;
    if (cc != NULL) {
        int at_root = !cc->inter && (cc->rank == root);
        int in_place = at_root && (recvbuf == MPI_IN_PLACE);
        unsigned long long block =
            in_place ? type_bytes(sendtype, sendcount) : type_bytes(recvtype, recvcount);
        r = decide(CG_COLL_SCATTER, comm, cc, (unsigned long long)cc->p * block,
                   at_root ? sendtype : MPI_DATATYPE_NULL,
                   in_place ? MPI_DATATYPE_NULL : recvtype, MPI_OP_NULL);
        if (r != NULL) {
            CGT_RUN(r, scatter, comm,
                    (sendbuf, (size_t)sendcount, sendtype, recvbuf, (size_t)recvcount, recvtype,
                     root, comm));
        }
    }
    return PMPI_Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
}

int MPI_Barrier(MPI_Comm comm)
{
    struct cgt_comm *cc = enter(CG_COLL_BARRIER, comm);
    struct cgt_rule *r = NULL;
    if ((cc != NULL) &&
        ((r = decide(CG_COLL_BARRIER, comm, cc, 0, MPI_DATATYPE_NULL, MPI_DATATYPE_NULL,
                     MPI_OP_NULL)) != NULL)) {
        CGT_RUN(r, barrier, comm, (comm));
    }
    return PMPI_Barrier(comm);
}

/* ---- start and end -------------------------------------------------------- */

static const struct cg_algo *find_impl(enum cgt_kind kind, const char *name)
{
    if (kind == CGT_BASELINE) {
        return bench_baseline_find(name);
    }
    for (int i = 0; i < cg_nalgos; i++) {
        if (strcmp(cg_algos[i]->name, name) == 0) {
            return cg_algos[i];
        }
    }
    return NULL;
}

static int env_flag(const char *name)
{
    const char *s = getenv(name);
    return (s != NULL) && (strcmp(s, "1") == 0);
}

/* Rank 0 reports; every rank reads the file itself and they compare hashes,
 * so that no rank runs another selection than the others. */
static void tune_init(void)
{
    const char *path = getenv("CG_TUNE");
    const char *mb = getenv("CG_TUNE_MAX_BYTES");
    int strict = env_flag("CG_TUNE_STRICT");
    FILE *msgs = NULL;
    int errors = 0;

    (void)PMPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    (void)PMPI_Comm_size(MPI_COMM_WORLD, &world_size);
    msgs = world_rank == 0 ? stderr : fopen("/dev/null", "w");
    if (msgs == NULL) {
        msgs = stderr;
    }
    if ((mb != NULL) && (*mb != '\0')) {
        char *end = NULL;
        errno = 0;
        unsigned long long v = strtoull(mb, &end, 10);
        if ((errno != 0) || (end == mb) || (*end != '\0')) {
            fprintf(msgs, "libcgtune: error: CG_TUNE_MAX_BYTES='%s' is not a byte count\n", mb);
            errors++;
        } else {
            max_bytes = v;
        }
    }
    if ((path == NULL) || (*path == '\0')) {
        fprintf(msgs, "libcgtune: error: CG_TUNE is not set (the path of a selection file, "
                "harness/FORMATS.md): every collective passes to the MPI library\n");
        errors++;
    } else {
        errors += cgt_selection_load(path, CG_FLAVOUR, find_impl, msgs, &sel);
        if (errors > 0) {
            fprintf(msgs, "libcgtune: %s: the selection is not used: every collective passes "
                    "to the MPI library%s\n", path, strict ? "" : " (CG_TUNE_STRICT=1 aborts)");
        }
    }
    unsigned long long h[2] = { sel.hash, ~sel.hash }, m[2] = { 0, 0 };
    (void)PMPI_Allreduce(h, m, 2, MPI_UNSIGNED_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
    /* [0]: the hashes agree, [1]: this rank found no error; one LAND makes
     * both collective, so every rank passes through, or stops, together. */
    int mine[2] = { (m[0] == h[0]) && (m[1] == h[1]), errors == 0 }, all[2] = { 0, 0 };
    (void)PMPI_Allreduce(mine, all, 2, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    if (!all[0] && (errors == 0)) {
        fprintf(msgs, "libcgtune: error: %s: the ranks read different files (hashes differ): "
                "every collective passes to the MPI library\n", path);
        errors++;
    }
    if (!all[1] && (errors == 0)) {
        fprintf(msgs, "libcgtune: error: another rank found an error in its environment or "
                "selection: every collective passes to the MPI library\n");
        errors++;
    }
    if (errors > 0) {
        unsigned long long hh = sel.hash;
        cgt_selection_free(&sel);
        snprintf(sel.path, sizeof(sel.path), "%s", path != NULL ? path : "(CG_TUNE unset)");
        sel.hash = hh;
        sel_state = -1;
    } else {
        sel_state = 1;
        for (int i = 0; i < sel.nrules; i++) {
            if (sel.rules[i].kind == CGT_NATIVE_ALG) {
                fprintf(msgs, "%s:%d:%d: note: '%s' is not switchable per call by libcgtune "
                        "(neither Open MPI's coll_tuned nor MPICH's CSEL takes a per-call "
                        "choice): its calls run the library's default, counted as "
                        "'native-alg'; use the rules-file or CSEL export of collgen tune\n",
                        sel.path, sel.rules[i].line, sel.rules[i].col, sel.rules[i].impl);
            }
        }
    }
    fflush(msgs);
    if (msgs != stderr) {
        fclose(msgs);
    }
    if (strict && (errors > 0)) {
        /* Why finalize and exit instead of MPI_Abort: an abort makes the
         * launcher kill the job, and a killed rank's last stderr lines can
         * still be in the pipe (seen under MPICH's hydra in a fresh-clone
         * run, once with the other ranks aborting too, once with rank 0
         * alone). A normal exit lets the launcher drain every pipe, and both
         * launchers report a rank's non-zero status as theirs. Every rank
         * sees errors > 0 here (the check above is collective), so every
         * rank finalizes. */
        if (world_rank == 0) {
            fprintf(stderr, "libcgtune: CG_TUNE_STRICT=1: aborting (exit status 3)\n");
            fflush(stderr);
        }
        (void)PMPI_Finalize();
        exit(3);
    }
    active = 1;
}

int MPI_Init(int *argc, char ***argv)
{
    int rc = PMPI_Init(argc, argv);
    if (rc == MPI_SUCCESS) {
        tune_init();
    }
    return rc;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    int rc = PMPI_Init_thread(argc, argv, required, provided);
    if (rc == MPI_SUCCESS) {
        tune_init();
    }
    return rc;
}

static void range_text(char *buf, size_t n, long long lo, long long hi, long long any_hi)
{
    if ((lo <= 1) && (hi >= any_hi)) {
        snprintf(buf, n, "any");
    } else {
        snprintf(buf, n, "%lld..%lld", lo, hi);
    }
}

/* The footer (runtime/README.md, "The footer"): one row per rule and one
 * per collective for the calls no rule held; whitespace-separated columns,
 * reasons as name=count. */
static void footer(FILE *f)
{
    unsigned long long total = 0, ran = 0;
    fprintf(f, "# libcgtune (collgen) footer: rank %d of %d, %s build\n", world_rank,
            world_size, CG_FLAVOUR);
    fprintf(f, "# selection: %s  fnv1a64 %016llx  %s  %d rules", sel.path, sel.hash,
            sel_state > 0 ? "used" : "NOT USED", sel.nrules);
    if (sel.campaign[0] != '\0') {
        fprintf(f, "  campaign %s", sel.campaign);
    }
    if (sel.campaign_hash[0] != '\0') {
        fprintf(f, "  campaign_hash %s", sel.campaign_hash);
    }
    fprintf(f, "\n# %-21s %-9s %-9s %-23s %-38s %10s %10s  %s\n", "collective", "p", "ppn",
            "bytes", "implementation", "calls", "fallback", "reasons");
    for (int c = 0; c < CG_COLL_COUNT_; c++) {
        for (int i = sel.first[c]; i < sel.first[c] + sel.n[c]; i++) {
            const struct cgt_rule *r = &sel.rules[i];
            unsigned long long fb = 0;
            char p[32], ppn[32], b[48], reasons[256] = "-";
            size_t at = 0;
            for (int k = 0; k < CGT_R_COUNT_; k++) {
                if (r->fallback[k] > 0) {
                    at += (size_t)snprintf(reasons + at, sizeof(reasons) - at, "%s%s=%llu",
                                           at > 0 ? "," : "", cgt_reason_names[k],
                                           r->fallback[k]);
                    if (at >= sizeof(reasons)) {
                        at = sizeof(reasons) - 1;
                    }
                }
                fb += r->fallback[k];
            }
            range_text(p, sizeof(p), r->p_lo, r->p_hi, INT_MAX);
            if (r->has_ppn) {
                range_text(ppn, sizeof(ppn), r->ppn_lo, r->ppn_hi, INT_MAX);
            } else {
                snprintf(ppn, sizeof(ppn), "any");
            }
            snprintf(b, sizeof(b), "%llu..%llu", r->b_lo, r->b_hi);
            fprintf(f, "  %-21s %-9s %-9s %-23s %-38s %10llu %10llu  %s\n", cg_colls[c].name, p,
                    ppn, b, r->impl, r->served + fb, fb, reasons);
            total += r->served + fb;
            if ((r->kind == CGT_GENERATED) || (r->kind == CGT_BASELINE)) {
                ran += r->served;
            }
        }
        if ((norule[c] > 0) || (sel.n[c] > 0)) {
            fprintf(f, "  %-21s %-9s %-9s %-23s %-38s %10llu %10llu  %s\n", cg_colls[c].name,
                    "-", "-", "-", "native:default(no-rule)", norule[c], 0ULL, "-");
            total += norule[c];
        }
    }
    fprintf(f, "# total: %llu calls, %llu by generated code or baselines, %llu by the MPI "
            "library\n", total, ran, total - ran);
}

/* CG_TUNE_LOG: unset or "stderr": rank 0 to stderr; "stdout"; a path:
 * rank 0 writes it (a "%r" in it: every rank its own, %r its rank), written
 * to a temporary name and renamed. */
static void write_footer(void)
{
    const char *log = getenv("CG_TUNE_LOG");
    char path[1024], tmp[1100];
    const char *mark = NULL;

    if ((log == NULL) || (*log == '\0') || (strcmp(log, "stderr") == 0) ||
        (strcmp(log, "stdout") == 0)) {
        if (world_rank == 0) {
            FILE *f = (log != NULL) && (strcmp(log, "stdout") == 0) ? stdout : stderr;
            footer(f);
            fflush(f);
        }
        return;
    }
    mark = strstr(log, "%r");
    if ((mark == NULL) && (world_rank != 0)) {
        return;
    }
    if (mark != NULL) {
        snprintf(path, sizeof(path), "%.*s%d%s", (int)(mark - log), log, world_rank, mark + 2);
    } else {
        snprintf(path, sizeof(path), "%s", log);
    }
    snprintf(tmp, sizeof(tmp), "%s.tmp%ld", path, (long)getpid());
    FILE *f = fopen(tmp, "w");
    if (f == NULL) {
        fprintf(stderr, "libcgtune: cannot write the footer to %s: %s\n", tmp, strerror(errno));
        return;
    }
    footer(f);
    if ((fclose(f) != 0) || (rename(tmp, path) != 0)) {
        fprintf(stderr, "libcgtune: cannot write the footer to %s: %s\n", path, strerror(errno));
        (void)remove(tmp);
    }
}

int MPI_Finalize(void)
{
    if (active) {
        write_footer();
        active = 0;
    }
    return PMPI_Finalize();
}
