/* signature.c - type signatures (cg.h, "type signatures"): the basic
 * datatype a datatype's signature is made of, how many of them one element
 * holds, whether a buffer of such elements already is those basic elements
 * in order (dense), and the copies between a caller's layout and the
 * packed one.
 *
 * Why: MPI lets ranks describe one message with different (count,
 * datatype) pairs whose type signatures match: a root may broadcast one
 * element of a 512-int struct type while the others receive 512 MPI_INT,
 * or gather strided vectors into contiguous doubles. A schedule that cuts
 * a buffer into blocks by count would cut at different places on different
 * ranks (MPI_ERR_TRUNCATE, then a hang). What the signature is made of is
 * the same on every rank, so the prologues (prologue.c) count the blocks of
 * every collective that moves data without an op in these basic elements,
 * and pack a caller's buffer that is not dense into scratch.
 *
 * How a datatype is read: MPI_Type_get_envelope and MPI_Type_get_contents,
 * recursively, down to named types. Members that hold no data (a struct
 * block of length 0, a type of size 0) are skipped, so they cannot make two
 * equal signatures look different. Named pair types (MPI_2INT, ...) are two
 * of their part; the mixed ones (MPI_DOUBLE_INT, ...) count as bytes, like
 * every signature made of more than one basic type.
 */
#include "cg_internal.h"

#include <limits.h>
#include <stdlib.h>

/* What the walk has seen of the signature's basic types. */
struct walk {
    MPI_Datatype basic; /* the first basic type seen (MPI_DATATYPE_NULL: none yet) */
    int mixed;          /* 1: more than one basic type */
};

static void walk_leaf(struct walk *w, MPI_Datatype t)
{
    if (w->mixed) {
        return;
    }
    if (w->basic == MPI_DATATYPE_NULL) {
        w->basic = t;
    } else if (w->basic != t) {
        w->mixed = 1;
    }
}

/* The named pair types: each one's basic part, MPI_DATATYPE_NULL where
 * its two parts differ (its signature counts as bytes). */
static const struct {
    MPI_Datatype pair, part;
} named_pairs[] = {
    {MPI_2INT, MPI_INT},
    {MPI_2REAL, MPI_REAL},
    {MPI_2DOUBLE_PRECISION, MPI_DOUBLE_PRECISION},
    {MPI_2INTEGER, MPI_INTEGER},
    {MPI_FLOAT_INT, MPI_DATATYPE_NULL},
    {MPI_DOUBLE_INT, MPI_DATATYPE_NULL},
    {MPI_LONG_INT, MPI_DATATYPE_NULL},
    {MPI_SHORT_INT, MPI_DATATYPE_NULL},
    {MPI_LONG_DOUBLE_INT, MPI_DATATYPE_NULL},
};

/* A named type's basic part: itself unless it is a pair. */
static MPI_Datatype named_part(MPI_Datatype t)
{
    for (size_t i = 0; i < sizeof(named_pairs) / sizeof(named_pairs[0]); i++) {
        if (t == named_pairs[i].pair) {
            return named_pairs[i].part;
        }
    }
    return t;
}

/* Frees what MPI_Type_get_contents returned (named types must not be). */
static void free_contents(MPI_Datatype *types, int n)
{
    for (int i = 0; i < n; i++) {
        int ni = 0, na = 0, nd = 0, comb = MPI_COMBINER_NAMED;
        if ((MPI_Type_get_envelope(types[i], &ni, &na, &nd, &comb) == MPI_SUCCESS) &&
            (comb != MPI_COMBINER_NAMED)) {
            (void)MPI_Type_free(&types[i]);
        }
    }
}

/* Whether blocks bl[i] at displacements disp[i] (bytes; entries with bl 0
 * skipped) follow each other without a gap from 0, elements of `unit`
 * bytes each. */
static int consecutive(int n, const int *bl, const MPI_Aint *disp_bytes, const int *disp_units,
                       MPI_Aint unit, int same_bl)
{
    MPI_Aint pos = 0;
    for (int i = 0; i < n; i++) {
        int len = same_bl ? bl[0] : bl[i];
        MPI_Aint d = (disp_bytes != NULL) ? disp_bytes[i] : (MPI_Aint)disp_units[i] * unit;
        if (len == 0) {
            continue;
        }
        if (d != pos) {
            return 0;
        }
        pos += (MPI_Aint)len * unit;
    }
    return 1;
}

/* Walks type t: its basic types into w, and *dense when n elements of t are
 * n * size(t) bytes of data in signature order from the first one's
 * address. */
static int walk(MPI_Datatype t, struct walk *w, int *dense)
{
    int rc = MPI_SUCCESS;
    MPI_Count size = 0;
    MPI_Aint lb = 0, extent = 0, true_lb = 0, true_extent = 0;
    int ni = 0, na = 0, nd = 0, comb = MPI_COMBINER_NAMED;
    int *ints = NULL;
    MPI_Aint *addrs = NULL;
    MPI_Datatype *types = NULL;
    int got = 0; /* handles in types to free */
    int rule = 0; /* the combiner's part of dense */

    *dense = 0;
    CG_CHECK_MPI(MPI_Type_size_x(t, &size));
    CG_CHECK_MPI(MPI_Type_get_extent(t, &lb, &extent));
    CG_CHECK_MPI(MPI_Type_get_true_extent(t, &true_lb, &true_extent));
    int flat = (size == (MPI_Count)extent) && (lb == 0) && (true_lb == 0) &&
               (true_extent == extent);
    if (size == 0) {
        *dense = 1; /* no data: nothing to be in order */
        goto out;
    }
    CG_CHECK_MPI(MPI_Type_get_envelope(t, &ni, &na, &nd, &comb));
    if ((comb == MPI_COMBINER_NAMED) || (comb == MPI_COMBINER_F90_REAL) ||
        (comb == MPI_COMBINER_F90_COMPLEX) || (comb == MPI_COMBINER_F90_INTEGER)) {
        MPI_Datatype part = (comb == MPI_COMBINER_NAMED) ? named_part(t) : t;
        if (part == MPI_DATATYPE_NULL) {
            w->mixed = 1;
        } else {
            walk_leaf(w, part);
        }
        *dense = flat;
        goto out;
    }
    ints = malloc(sizeof(*ints) * (size_t)(ni > 0 ? ni : 1));
    addrs = malloc(sizeof(*addrs) * (size_t)(na > 0 ? na : 1));
    types = malloc(sizeof(*types) * (size_t)(nd > 0 ? nd : 1));
    if ((ints == NULL) || (addrs == NULL) || (types == NULL)) {
        cg_set_error("collgen: out of memory reading a datatype");
        rc = MPI_ERR_NO_MEM;
        goto out;
    }
    CG_CHECK_MPI(MPI_Type_get_contents(t, ni, na, nd, ints, addrs, types));
    got = nd;
    if (comb == MPI_COMBINER_STRUCT) {
        /* ints: count, blocklengths; addrs: displacements; types. */
        MPI_Aint pos = 0;
        rule = 1;
        for (int i = 0; i < ints[0]; i++) {
            MPI_Count msize = 0;
            MPI_Aint mlb = 0, mext = 0;
            int mdense = 0;
            CG_CHECK_MPI(MPI_Type_size_x(types[i], &msize));
            if ((ints[1 + i] == 0) || (msize == 0)) {
                continue;
            }
            CG_CHECK(walk(types[i], w, &mdense));
            CG_CHECK_MPI(MPI_Type_get_extent(types[i], &mlb, &mext));
            rule = rule && mdense && (addrs[i] == pos);
            pos += (MPI_Aint)ints[1 + i] * mext;
        }
    } else if (nd >= 1) {
        /* Every other combiner has one datatype, the last one. */
        MPI_Aint slb = 0, sext = 0;
        int sdense = 0;
        CG_CHECK(walk(types[nd - 1], w, &sdense));
        CG_CHECK_MPI(MPI_Type_get_extent(types[nd - 1], &slb, &sext));
        switch (comb) {
        case MPI_COMBINER_DUP:
        case MPI_COMBINER_CONTIGUOUS:
        case MPI_COMBINER_RESIZED: /* flat says whether the new bounds fit */
            rule = 1;
            break;
        case MPI_COMBINER_VECTOR: /* count, blocklength, stride (elements) */
            rule = (ints[0] <= 1) || (ints[1] == ints[2]);
            break;
        case MPI_COMBINER_HVECTOR: /* count, blocklength; stride (bytes) */
            rule = (ints[0] <= 1) || (addrs[0] == (MPI_Aint)ints[1] * sext);
            break;
        case MPI_COMBINER_INDEXED: /* count, blocklengths, displacements */
            rule = consecutive(ints[0], ints + 1, NULL, ints + 1 + ints[0], sext, 0);
            break;
        case MPI_COMBINER_HINDEXED: /* count, blocklengths; displacements */
            rule = consecutive(ints[0], ints + 1, addrs, NULL, sext, 0);
            break;
        case MPI_COMBINER_INDEXED_BLOCK: /* count, blocklength, displacements */
            rule = consecutive(ints[0], ints + 1, NULL, ints + 2, sext, 1);
            break;
        case MPI_COMBINER_HINDEXED_BLOCK: /* count, blocklength; displacements */
            rule = consecutive(ints[0], ints + 1, addrs, NULL, sext, 1);
            break;
        default: /* subarray, darray: reordered or sparse; packed to be safe */
            rule = 0;
            break;
        }
        rule = rule && sdense;
    }
    *dense = rule && flat;
out:
    if (types != NULL) {
        free_contents(types, got);
    }
    free(ints);
    free(addrs);
    free(types);
    return rc;
}

/* Why remembered: a named datatype's handle is predefined, never freed nor
 * given to another type, so that it is its own basic type, dense, holds for
 * the life of the process; a moving collective asks once or twice per call
 * (begin, basic_of in prologue.c), and MPI_Type_get_envelope was most of
 * what that cost (harness/measurements/2026-12-07-pack.md). A derived
 * handle is never remembered: it may be freed and reused for another type.
 * Per thread, so no lock. */
#define SIG_NAMED 4
static _Thread_local struct {
    MPI_Datatype type[SIG_NAMED];
    int n;    /* valid entries */
    int next; /* the entry the next one replaces when all are valid */
} sig_named;

int cg_type_sig(MPI_Datatype type, struct cg_sig *s)
{
    int rc = MPI_SUCCESS;
    struct walk w = {MPI_DATATYPE_NULL, 0};
    int dense = 0;
    MPI_Count size = 0, bsize = 1;

    s->basic = type;
    s->per = 1;
    s->dense = 0;
    if (type == MPI_DATATYPE_NULL) {
        cg_set_error("collgen: the datatype is MPI_DATATYPE_NULL");
        return MPI_ERR_TYPE;
    }
    /* Why a shortcut: every call of a moving collective reads its
     * datatypes, and most are named basic types, which are their own basic
     * type, once, with nothing else in their extent: one MPI call instead
     * of four. */
    for (int i = 0; i < sig_named.n; i++) {
        if (sig_named.type[i] == type) {
            s->dense = 1;
            return MPI_SUCCESS;
        }
    }
    int ni = 0, na = 0, nd = 0, comb = MPI_COMBINER_NAMED;
    CG_CHECK_MPI(MPI_Type_get_envelope(type, &ni, &na, &nd, &comb));
    if ((comb == MPI_COMBINER_NAMED) && (named_part(type) == type)) {
        s->dense = 1;
        if (sig_named.n < SIG_NAMED) {
            sig_named.type[sig_named.n++] = type;
        } else {
            sig_named.type[sig_named.next] = type;
            sig_named.next = (sig_named.next + 1) % SIG_NAMED;
        }
        goto out;
    }
    CG_CHECK(walk(type, &w, &dense));
    CG_CHECK_MPI(MPI_Type_size_x(type, &size));
    if (w.mixed || (w.basic == MPI_DATATYPE_NULL)) {
        w.basic = MPI_BYTE;
    } else {
        CG_CHECK_MPI(MPI_Type_size_x(w.basic, &bsize));
    }
    s->basic = w.basic;
    s->per = (bsize > 0) ? (size_t)(size / bsize) : 0;
    s->dense = dense;
out:
    return rc;
}

int cg_sig_copy(void *buf, size_t n, MPI_Datatype type, void *packed, size_t nbasic,
                MPI_Datatype basic, int unpack)
{
    int rc = MPI_SUCCESS;
    struct cg_sig s;
    MPI_Count bsize = 0;
    MPI_Aint lb = 0, extent = 0;

    CG_CHECK(cg_type_sig(type, &s));
    if (s.basic != basic) {
        /* Not the packed form's basic type (the signatures differ, or a
         * library names one type two ways): a plain typed copy, which
         * checks the byte counts. */
        CG_CHECK(unpack ? cg_copy_typed(packed, nbasic, basic, buf, n, type)
                        : cg_copy_typed(buf, n, type, packed, nbasic, basic));
        goto out;
    }
    if (n * s.per != nbasic) {
        cg_set_error("collgen: %zu elements of %zu basic elements each do not fill %zu basic "
                     "elements: the type signatures differ", n, s.per, nbasic);
        rc = MPI_ERR_TYPE;
        goto out;
    }
    if ((nbasic == 0) || (buf == packed)) {
        goto out;
    }
    CG_CHECK_MPI(MPI_Type_size_x(basic, &bsize));
    if (s.dense) {
        size_t bytes = nbasic * (size_t)bsize;
        cg_memcpy(unpack ? buf : packed, unpack ? packed : buf, bytes);
        goto out;
    }
    if (s.per > INT_MAX) {
        cg_set_error("collgen: a datatype of %zu basic elements is more than a copy through "
                     "MPI moves (INT_MAX)", s.per);
        rc = MPI_ERR_COUNT;
        goto out;
    }
    CG_CHECK_MPI(MPI_Type_get_extent(type, &lb, &extent));
    cg_plan_refuse(); /* a copy through MPI: derived types, never recorded */
    /* Pieces of whole elements, at most INT_MAX on either side. */
    size_t most = (size_t)INT_MAX / s.per;
    char *b = buf, *q = packed;
    while (n > 0) {
        size_t k = (n < most) ? n : most;
        int kb = (int)(k * s.per);
        if (unpack) {
            CG_CHECK_MPI(MPI_Sendrecv(q, kb, basic, 0, 0, b, (int)k, type, 0, 0, MPI_COMM_SELF,
                                      MPI_STATUS_IGNORE));
        } else {
            CG_CHECK_MPI(MPI_Sendrecv(b, (int)k, type, 0, 0, q, kb, basic, 0, 0, MPI_COMM_SELF,
                                      MPI_STATUS_IGNORE));
        }
        b += (MPI_Aint)k * extent;
        q += (MPI_Aint)kb * (MPI_Aint)bsize;
        n -= k;
    }
out:
    return rc;
}
