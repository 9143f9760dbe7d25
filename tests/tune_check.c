/* tune_check.c - every collective through libcgtune.so against the MPI
 * library's own (tests/run_cgtune.sh).
 *
 * A plain MPI program: run with LD_PRELOAD=build/<mpi>/libcgtune.so, its
 * MPI_<Collective> calls go through the preload (and whatever the selection
 * picks), while PMPI_<Collective> is the library's own. Each case runs
 * both on the same inputs into poisoned outputs and compares every byte of
 * the output buffers (gaps of derived datatypes and insignificant buffers
 * included). Inputs are rank- and position-unique integers, so any moved,
 * dropped or doubly combined element shows. Cases: counts 0, 1, 5, 64 and
 * 1000; MPI_INT; a non-contiguous vector type (the non-reductions); a
 * contiguous pair type with a commutative and a non-commutative user op
 * (the reductions); a type pair (MPI_INT sent, contiguous(2, int)
 * received: allgather, alltoall, gather, scatter, every root); a type
 * whose data lies below its address (a datatype
 * generated code refuses: passed through); in place wherever MPI allows it;
 * every root; an intercommunicator (p >= 2).
 *
 * Prints "PASS tune_<coll>_<library>_p<p>" / "FAIL ..." lines at rank 0 and
 * one "CALLS <coll> total inter dtype noncommutative noncontiguous" line per
 * collective: the MPI_<Collective> calls made, and how many of them had
 * each property that makes a schedule pass the call on, for the script to
 * check the footer against.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { ALLREDUCE, ALLGATHER, RSB, BCAST, REDUCE, GATHER, SCATTER, ALLTOALL, SCAN, EXSCAN,
       BARRIER, NCOLL };
static const char *const names[NCOLL] = { "allreduce", "allgather", "reduce_scatter_block",
                                          "bcast", "reduce", "gather", "scatter", "alltoall",
                                          "scan", "exscan", "barrier" };
static const int reduces[NCOLL] = { 1, 0, 1, 0, 1, 0, 0, 0, 1, 1, 0 };

static long calls[NCOLL], inter_calls[NCOLL], dtype_calls[NCOLL], noncomm_calls[NCOLL],
    vec_calls[NCOLL];
static int rank, p, failed[NCOLL];
static char first_failure[NCOLL][300];
static unsigned salt = 1;

#define POISON 0xCD
#define MAXN 1000

/* ---- datatypes and ops ---------------------------------------------------- */

static MPI_Datatype t_vec;   /* vector(2,1,2) of int, resized to 16 bytes: holes */
static MPI_Datatype t_pair;  /* contiguous(2, unsigned) */
static MPI_Datatype t_shift; /* one int 4 bytes below the address: true lb < 0 */
static MPI_Datatype t_int2;  /* contiguous(2, int): the receive side of a type pair */
static MPI_Op op_affine;     /* (a, b) o (c, d) = (a c, a d + b): not commutative */
static MPI_Op op_pairsum;    /* pairwise sum: commutative */
static MPI_Op op_shiftsum;   /* sum over t_shift's element */

static void affine(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    unsigned *x = in, *y = inout;
    (void)dt;
    for (int i = 0; i < *len; i++) {
        unsigned a = x[2 * i], b = x[2 * i + 1], c = y[2 * i], d = y[2 * i + 1];
        /* inout = in o inout: in's function applied after inout's */
        y[2 * i] = a * c;
        y[2 * i + 1] = a * d + b;
    }
}

static void pairsum(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    unsigned *x = in, *y = inout;
    (void)dt;
    for (int i = 0; i < 2 * *len; i++) {
        y[i] += x[i];
    }
}

static void shiftsum(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    /* t_shift's element is the int 4 bytes below each 4-byte step */
    int *x = (int *)((char *)in - 4), *y = (int *)((char *)inout - 4);
    (void)dt;
    for (int i = 0; i < *len; i++) {
        y[i] += x[i];
    }
}

static void make_types(void)
{
    MPI_Datatype v;
    int bl = 1;
    MPI_Aint disp = -4;
    MPI_Datatype in = MPI_INT;
    MPI_Type_vector(2, 1, 2, MPI_INT, &v);
    MPI_Type_create_resized(v, 0, 16, &t_vec);
    MPI_Type_free(&v);
    MPI_Type_commit(&t_vec);
    MPI_Type_contiguous(2, MPI_UNSIGNED, &t_pair);
    MPI_Type_commit(&t_pair);
    MPI_Type_contiguous(2, MPI_INT, &t_int2);
    MPI_Type_commit(&t_int2);
    MPI_Type_create_struct(1, &bl, &disp, &in, &v);
    MPI_Type_create_resized(v, -4, 4, &t_shift);
    MPI_Type_free(&v);
    MPI_Type_commit(&t_shift);
    MPI_Op_create(affine, 0, &op_affine);
    MPI_Op_create(pairsum, 1, &op_pairsum);
    MPI_Op_create(shiftsum, 1, &op_shiftsum);
}

/* ---- buffers -------------------------------------------------------------- */

/* Why 64 bytes of margin: t_shift's data lies 4 bytes below the pointer,
 * and the comparison covers the margin too, so a stray write shows. */
#define MARGIN 64
static size_t buf_bytes;
static unsigned char *in_a, *out_a, *out_b, *io_a, *io_b;

static void fill_input(unsigned char *b)
{
    unsigned *w = (unsigned *)b;
    for (size_t i = 0; i < buf_bytes / 4; i++) {
        /* odd, so that the affine maps stay invertible-looking and distinct */
        w[i] = ((unsigned)(rank + 1) * 1000003u + (unsigned)i * 7919u + salt * 104729u) | 1u;
    }
}

static void poison(unsigned char *b)
{
    memset(b, POISON, buf_bytes);
}

static void check(int c, const char *what, const unsigned char *x, const unsigned char *y)
{
    if (memcmp(x, y, buf_bytes) != 0) {
        size_t i = 0;
        while (x[i] == y[i]) {
            i++;
        }
        if (!failed[c]++) {
            snprintf(first_failure[c], sizeof(first_failure[c]),
                     "rank %d: %s: byte %ld differs (tuned 0x%02x, native 0x%02x)", rank, what,
                     (long)i - MARGIN, x[i], y[i]);
        }
    }
}

/* ---- one case ------------------------------------------------------------- */

struct kase {
    int coll;
    int n;             /* count per block (or of the vector) */
    MPI_Datatype t;    /* the datatype */
    MPI_Datatype rt;   /* a type pair: the receive datatype (t_int2, count n / 2), or 0 */
    MPI_Op op;         /* reductions */
    int in_place;      /* MPI_IN_PLACE where MPI allows it (rooted: at the root) */
    int root;
    MPI_Comm comm;
    int inter;         /* comm is an intercommunicator */
    int inter_root;    /* rooted on an intercommunicator: the root argument */
};

/* Runs the case through MPI_<coll> (tuned = 1) or PMPI_<coll>. */
static int run(const struct kase *k, int tuned, unsigned char *out, unsigned char *io)
{
    void *sb = in_a + MARGIN, *rb = out + MARGIN, *iob = io + MARGIN;
    const void *s = sb;
    int n = k->n, root = k->inter ? k->inter_root : k->root;
    /* a type pair: n MPI_INTs sent as every block, n / 2 t_int2 received */
    MPI_Datatype rt = k->rt ? k->rt : k->t;
    int rn = k->rt ? n / 2 : n;
    MPI_Comm comm = k->comm;
    int me = rank;
    if (!k->inter) {
        MPI_Comm_rank(comm, &me);
    }
    int at_root = !k->inter && (me == k->root);

#define CALL(fn, ...) (tuned ? MPI_##fn(__VA_ARGS__) : PMPI_##fn(__VA_ARGS__))
    switch (k->coll) {
    case ALLREDUCE:
        return k->in_place ? CALL(Allreduce, MPI_IN_PLACE, iob, n, k->t, k->op, comm)
                           : CALL(Allreduce, s, rb, n, k->t, k->op, comm);
    case SCAN:
        return k->in_place ? CALL(Scan, MPI_IN_PLACE, iob, n, k->t, k->op, comm)
                           : CALL(Scan, s, rb, n, k->t, k->op, comm);
    case EXSCAN:
        return k->in_place ? CALL(Exscan, MPI_IN_PLACE, iob, n, k->t, k->op, comm)
                           : CALL(Exscan, s, rb, n, k->t, k->op, comm);
    case RSB:
        return k->in_place ? CALL(Reduce_scatter_block, MPI_IN_PLACE, iob, n, k->t, k->op, comm)
                           : CALL(Reduce_scatter_block, s, rb, n, k->t, k->op, comm);
    case REDUCE:
        if (k->in_place && at_root) {
            return CALL(Reduce, MPI_IN_PLACE, iob, n, k->t, k->op, root, comm);
        }
        return CALL(Reduce, k->in_place ? iob : s, rb, n, k->t, k->op, root, comm);
    case BCAST:
        return CALL(Bcast, iob, n, k->t, root, comm);
    case ALLGATHER:
        return k->in_place ? CALL(Allgather, MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, iob, n, k->t, comm)
                           : CALL(Allgather, s, n, k->t, rb, rn, rt, comm);
    case ALLTOALL:
        return k->in_place ? CALL(Alltoall, MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, iob, n, k->t, comm)
                           : CALL(Alltoall, s, n, k->t, rb, rn, rt, comm);
    case GATHER:
        if (k->in_place && at_root) {
            return CALL(Gather, MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, iob, n, k->t, root, comm);
        }
        return CALL(Gather, k->in_place ? iob : s, n, k->t, k->in_place ? iob : rb, rn, rt,
                    root, comm);
    case SCATTER:
        if (k->in_place && at_root) {
            return CALL(Scatter, iob, n, k->t, MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, root, comm);
        }
        return CALL(Scatter, k->in_place ? iob : s, n, k->t, k->in_place ? iob : rb, rn, rt,
                    root, comm);
    case BARRIER:
        return CALL(Barrier, comm);
    }
#undef CALL
    return MPI_ERR_OTHER;
}

static void one(const struct kase *k)
{
    char what[200];
    int rc1, rc2;

    fill_input(in_a);
    fill_input(io_a);
    memcpy(io_b, io_a, buf_bytes);
    poison(out_a);
    poison(out_b);
    rc1 = run(k, 1, out_a, io_a);
    rc2 = run(k, 0, out_b, io_b);
    salt++;
    calls[k->coll]++;
    inter_calls[k->coll] += k->inter;
    dtype_calls[k->coll] += !k->inter && (k->t == t_shift);
    noncomm_calls[k->coll] += !k->inter && (k->op == op_affine) && (k->t != t_shift);
    vec_calls[k->coll] += !k->inter && (k->t == t_vec);
    snprintf(what, sizeof(what), "%s n=%d type=%s%s root=%d%s", names[k->coll], k->n,
             k->rt ? "int/int2" : k->t == MPI_INT ? "int" : k->t == t_vec ? "vector" : k->t == t_pair ? "pair" : "shifted",
             k->op == op_affine ? " op=noncommutative" : "", k->root,
             k->inter ? " intercomm" : k->in_place ? " in-place" : "");
    if ((rc1 != MPI_SUCCESS) || (rc2 != MPI_SUCCESS)) {
        if (!failed[k->coll]++) {
            snprintf(first_failure[k->coll], sizeof(first_failure[k->coll]),
                     "rank %d: %s: rc tuned %d native %d", rank, what, rc1, rc2);
        }
        return;
    }
    /* exscan's result at rank 0 is undefined */
    if ((k->coll == EXSCAN) && (rank == 0) && !k->inter) {
        return;
    }
    check(k->coll, what, out_a, out_b);
    check(k->coll, what, io_a, io_b);
}

static int in_place_ok(int coll)
{
    return coll != BCAST && coll != BARRIER;
}

int main(int argc, char **argv)
{
    static const int counts[] = { 0, 1, 5, 64, MAXN };
    const char *lib = argc > 1 ? argv[1] : "mpi";
    MPI_Comm inter = MPI_COMM_NULL;

    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    {
        const char *e = getenv("CG_EXPECT_NP");
        if ((e != NULL) && (atoi(e) != p)) {
            if (rank == 0) {
                printf("FAIL tune_launch_%s: size %d, expected %s (wrong launcher?)\n", lib, p, e);
            }
            MPI_Finalize();
            return 1;
        }
    }
    make_types();
    buf_bytes = (size_t)(p + 1) * MAXN * 16 + 2 * MARGIN;
    in_a = malloc(buf_bytes);
    out_a = malloc(buf_bytes);
    out_b = malloc(buf_bytes);
    io_a = malloc(buf_bytes);
    io_b = malloc(buf_bytes);
    if (p >= 2) {
        MPI_Comm half;
        int low = rank < p / 2;
        MPI_Comm_split(MPI_COMM_WORLD, low, rank, &half);
        MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, low ? p / 2 : 0, 99, &inter);
        MPI_Comm_free(&half);
    }

    for (int c = 0; c < NCOLL; c++) {
        struct kase k = { .coll = c, .comm = MPI_COMM_WORLD };
        int rooted = (c == BCAST) || (c == REDUCE) || (c == GATHER) || (c == SCATTER);
        int nroots = rooted ? p : 1;
        if (c == BARRIER) {
            for (int i = 0; i < 3; i++) {
                one(&k);
            }
        } else {
            MPI_Datatype types[3];
            MPI_Op ops[3];
            int nt = 0;
            if (reduces[c]) {
                types[nt] = MPI_INT, ops[nt++] = MPI_SUM;
                types[nt] = t_pair, ops[nt++] = op_affine;
                types[nt] = t_pair, ops[nt++] = op_pairsum;
            } else {
                types[nt] = MPI_INT, ops[nt++] = MPI_OP_NULL;
                types[nt] = t_vec, ops[nt++] = MPI_OP_NULL;
            }
            for (int ti = 0; ti < nt; ti++) {
                for (size_t ci = 0; ci < sizeof(counts) / sizeof(counts[0]); ci++) {
                    for (int root = 0; root < nroots; root++) {
                        for (int ip = 0; ip <= in_place_ok(c); ip++) {
#ifdef MPICH_VERSION
                            /* MPICH 4.0.2 crashes in its own reduce in place at
                             * a root other than 0 (runtime/call.c) */
                            if ((c == REDUCE) && ip && (root != 0)) {
                                continue;
                            }
#endif
                            k.t = types[ti];
                            k.op = ops[ti];
                            k.n = counts[ci];
                            k.root = root;
                            k.in_place = ip;
                            one(&k);
                        }
                    }
                }
            }
            /* a type pair (MPI_INT sent, contiguous(2, int) received): the
             * bytes that choose are read from the significant side */
            if ((c == ALLGATHER) || (c == ALLTOALL) || (c == GATHER) || (c == SCATTER)) {
                for (int root = 0; root < nroots; root++) {
                    k.t = MPI_INT;
                    k.rt = t_int2;
                    k.op = MPI_OP_NULL;
                    k.n = 10;
                    k.root = root;
                    k.in_place = 0;
                    one(&k);
                }
                k.rt = 0;
            }
            /* the datatype generated code refuses: passed through */
            k.t = t_shift;
            k.op = reduces[c] ? op_shiftsum : MPI_OP_NULL;
            k.root = p - 1;
            k.in_place = 0;
            for (int ci = 1; ci < 3; ci++) {
                k.n = counts[ci];
                one(&k);
            }
        }
        /* an intercommunicator: passed through */
        if ((inter != MPI_COMM_NULL) &&
            ((c == ALLREDUCE) || (c == BCAST) || (c == BARRIER) || (c == ALLGATHER) ||
             (c == ALLTOALL))) {
            struct kase ki = { .coll = c, .comm = inter, .inter = 1, .n = 5, .t = MPI_INT,
                               .op = MPI_SUM };
            /* bcast from the low group's rank 0 */
            ki.inter_root = rank < p / 2 ? (rank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
            one(&ki);
        }
    }

    for (int c = 0; c < NCOLL; c++) {
        int bad = 0;
        MPI_Allreduce(&failed[c], &bad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        if (failed[c]) {
            fprintf(stderr, "tune_check: %s\n", first_failure[c]);
        }
        fflush(stderr);
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0) {
            printf("%s tune_%s_%s_p%d (%ld calls)\n", bad ? "FAIL" : "PASS", names[c], lib, p,
                   calls[c]);
        }
    }
    /* the reports' own allreduces and barriers above go through the preload
     * too, and are counted here so that the footer can be checked */
    calls[ALLREDUCE] += NCOLL;
    calls[BARRIER] += NCOLL;
    if (rank == 0) {
        for (int c = 0; c < NCOLL; c++) {
            printf("CALLS %s %ld %ld %ld %ld %ld\n", names[c], calls[c], inter_calls[c],
                   dtype_calls[c], noncomm_calls[c], vec_calls[c]);
        }
    }
    fflush(stdout);
    if (inter != MPI_COMM_NULL) {
        MPI_Comm_free(&inter);
    }
    MPI_Type_free(&t_vec);
    MPI_Type_free(&t_pair);
    MPI_Type_free(&t_shift);
    MPI_Type_free(&t_int2);
    MPI_Op_free(&op_affine);
    MPI_Op_free(&op_pairsum);
    MPI_Op_free(&op_shiftsum);
    free(in_a);
    free(out_a);
    free(out_b);
    free(io_a);
    free(io_b);
    MPI_Finalize();
    return 0;
}
