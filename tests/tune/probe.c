/* probe.c - the MPI program tests/run_tune.sh runs under a library's own
 * selection file (Open MPI's rules, MPICH's CSEL JSON) to prove which
 * algorithm ran.
 *
 *   probe sum COUNT...      MPI_Allreduce of COUNT doubles (sum), exact check
 *   probe noncomm COUNT...  MPI_Allreduce of COUNT 2x2 matrices (int64, mod
 *                           1000003) under a user op that multiplies them:
 *                           not commutative, so the result is exact only when
 *                           the algorithm combines in rank order
 *   probe opcalls COUNT...  MPI_Allreduce of COUNT int64 under a commutative
 *                           user op (a sum) that counts its calls: rank 0
 *                           also prints every rank's number of calls, the
 *                           algorithm's fingerprint
 *
 *   probe bcast COUNT...    MPI_Bcast of COUNT doubles from rank 0
 *   probe reduce COUNT...   MPI_Reduce of COUNT doubles (sum) to rank 0
 *   probe alltoall COUNT... MPI_Alltoall of COUNT doubles per rank pair
 *                           (bytes: COUNT x 8 x ranks, Open MPI's measure)
 *   probe barrier N         N barriers (bytes 0)
 *   probe MODE MODE2:COUNT  an argument MODE2:COUNT runs MODE2 for it
 *   (each checked exactly against rank- and position-unique data, the
 *   receive buffers poisoned; for the Open MPI rules file's collectives)
 *
 * Rank 0 prints one line per count: "<mode> count=<n> bytes=<b> exact" or
 * "... differs (<k> of <n> elements)". Why the non-commutative op: MPICH's
 * internal symbols are hidden (no spy), but reduce_scatter_allgather
 * combines out of rank order while recursive_doubling keeps it
 * (shared/design/NATIVE.md), so the result shows which of them ran.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PRIME 1000003LL

/* inout = in x inout, per 2x2 matrix (a b; c d). */
static void matmul(void *in, void *inout, int *len, MPI_Datatype *type)
{
    (void)type;
    const int64_t *x = in;
    int64_t *y = inout;
    for (int i = 0; i < *len; i++, x += 4, y += 4) {
        int64_t a = (x[0] * y[0] + x[1] * y[2]) % PRIME;
        int64_t b = (x[0] * y[1] + x[1] * y[3]) % PRIME;
        int64_t c = (x[2] * y[0] + x[3] * y[2]) % PRIME;
        int64_t d = (x[2] * y[1] + x[3] * y[3]) % PRIME;
        y[0] = a, y[1] = b, y[2] = c, y[3] = d;
    }
}

static long op_calls;

static void counted_sum(void *in, void *inout, int *len, MPI_Datatype *type)
{
    (void)type;
    const int64_t *x = in;
    int64_t *y = inout;
    for (int i = 0; i < *len; i++) {
        y[i] += x[i];
    }
    op_calls++;
}

static void matrix(int64_t *m, int rank, int i)
{
    m[0] = rank + 1;
    m[1] = (i + 1) % PRIME;
    m[2] = (7LL * rank + i) % PRIME;
    m[3] = 1;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, p;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    static const char *const modes[] = {"sum",    "noncomm",  "opcalls", "bcast",
                                        "reduce", "alltoall", "barrier"};
    int mode = -1;
    for (int i = 0; argc >= 3 && i < (int)(sizeof modes / sizeof modes[0]); i++) {
        mode = (strcmp(argv[1], modes[i]) == 0) ? i : mode;
    }
    if (mode < 0) {
        if (rank == 0) {
            fprintf(stderr,
                    "usage: probe sum|noncomm|opcalls|bcast|reduce|alltoall|barrier COUNT...\n");
        }
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    long per = 8; /* bytes per count in the printed size */
    MPI_Datatype mat;
    MPI_Op op, counted;
    MPI_Op_create(counted_sum, 1, &counted);
    MPI_Type_contiguous(4, MPI_INT64_T, &mat);
    MPI_Type_commit(&mat);
    MPI_Op_create(matmul, 0, &op);
    for (int a = 2; a < argc; a++) {
        /* MODE:COUNT runs one call of another mode (several collectives in
         * one launch). */
        const char *colon = strchr(argv[a], ':');
        const char *name = argv[1];
        char buf[16];
        if (colon != NULL) {
            snprintf(buf, sizeof buf, "%.*s", (int)(colon - argv[a]), argv[a]);
            name = buf;
            for (int i = 0; i < (int)(sizeof modes / sizeof modes[0]); i++) {
                mode = (strcmp(buf, modes[i]) == 0) ? i : mode;
            }
            if (strcmp(buf, modes[mode]) != 0) {
                if (rank == 0) {
                    fprintf(stderr, "probe: unknown mode in '%s'\n", argv[a]);
                }
                MPI_Abort(MPI_COMM_WORLD, 2);
            }
        }
        int noncomm = mode == 1, opcalls = mode == 2;
        int n = atoi(colon != NULL ? colon + 1 : argv[a]);
        per = 8;
        long wrong = 0;
        long calls_before = op_calls;
        if (mode == 3) { /* bcast */
            double *b = malloc(((size_t)n + 1) * sizeof *b);
            for (int i = 0; i < n; i++) {
                b[i] = (rank == 0) ? 3.0 * i + 1.0 : -1.0;
            }
            MPI_Bcast(b, n, MPI_DOUBLE, 0, MPI_COMM_WORLD);
            for (int i = 0; i < n; i++) {
                wrong += b[i] != 3.0 * i + 1.0;
            }
            free(b);
        } else if (mode == 4) { /* reduce */
            double *in = malloc(((size_t)n + 1) * sizeof *in);
            double *out = malloc(((size_t)n + 1) * sizeof *out);
            for (int i = 0; i < n; i++) {
                in[i] = (double)(rank * 1000 + i);
                out[i] = -1.0;
            }
            MPI_Reduce(in, out, n, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
            for (int i = 0; rank == 0 && i < n; i++) {
                wrong += out[i] != 1000.0 * p * (p - 1) / 2 + (double)i * p;
            }
            free(in);
            free(out);
        } else if (mode == 5) { /* alltoall */
            size_t all = (size_t)n * (size_t)p + 1;
            double *in = malloc(all * sizeof *in), *out = malloc(all * sizeof *out);
            for (int j = 0; j < p; j++) {
                for (int i = 0; i < n; i++) {
                    in[(size_t)j * n + i] = 1e6 * rank + 1000.0 * j + i;
                    out[(size_t)j * n + i] = -1.0;
                }
            }
            MPI_Alltoall(in, n, MPI_DOUBLE, out, n, MPI_DOUBLE, MPI_COMM_WORLD);
            for (int j = 0; j < p; j++) {
                for (int i = 0; i < n; i++) {
                    wrong += out[(size_t)j * n + i] != 1e6 * j + 1000.0 * rank + i;
                }
            }
            free(in);
            free(out);
            per = 8L * p;
        } else if (mode == 6) { /* barrier */
            for (int i = 0; i < n; i++) {
                MPI_Barrier(MPI_COMM_WORLD);
            }
            per = 0;
        } else if (opcalls) {
            int64_t *in = malloc((size_t)n * sizeof *in);
            int64_t *out = malloc((size_t)n * sizeof *out);
            for (int i = 0; i < n; i++) {
                in[i] = (int64_t)rank * 1000003 + i;
                out[i] = -1;
            }
            MPI_Allreduce(in, out, n, MPI_INT64_T, counted, MPI_COMM_WORLD);
            for (int i = 0; i < n; i++) {
                wrong += out[i] != (int64_t)1000003 * p * (p - 1) / 2 + (int64_t)i * p;
            }
            free(in);
            free(out);
        } else if (noncomm) {
            int64_t *in = malloc((size_t)n * 4 * sizeof *in);
            int64_t *out = malloc((size_t)n * 4 * sizeof *out);
            for (int i = 0; i < n; i++) {
                matrix(in + 4 * i, rank, i);
            }
            memset(out, 0xff, (size_t)n * 4 * sizeof *out); /* poisoned */
            MPI_Allreduce(in, out, n, mat, op, MPI_COMM_WORLD);
            for (int i = 0; i < n; i++) {
                int64_t e[4], m[4];
                matrix(e, 0, i);
                for (int r = 1; r < p; r++) {
                    int one = 1;
                    memcpy(m, e, sizeof m);
                    matrix(e, r, i);
                    matmul(m, e, &one, NULL); /* e = (M0...M(r-1)) x Mr */
                }
                wrong += memcmp(e, out + 4 * i, sizeof e) != 0;
            }
            free(in);
            free(out);
        } else {
            double *in = malloc((size_t)n * sizeof *in);
            double *out = malloc((size_t)n * sizeof *out);
            for (int i = 0; i < n; i++) {
                in[i] = (double)(rank * 1000 + i);
                out[i] = -1.0;
            }
            MPI_Allreduce(in, out, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
            for (int i = 0; i < n; i++) {
                double e = 1000.0 * p * (p - 1) / 2 + (double)i * p;
                wrong += out[i] != e;
            }
            free(in);
            free(out);
        }
        long total = 0, mine = op_calls - calls_before;
        long *calls = malloc((size_t)p * sizeof *calls);
        MPI_Reduce(&wrong, &total, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
        MPI_Gather(&mine, 1, MPI_LONG, calls, 1, MPI_LONG, 0, MPI_COMM_WORLD);
        if (rank == 0 && opcalls) {
            printf("opcalls count=%d bytes=%ld calls=", n, (long)n * 8);
            for (int r = 0; r < p; r++) {
                printf("%s%ld", r > 0 ? "," : "", calls[r]);
            }
            printf(" %s\n", total == 0 ? "exact" : "differs");
        }
        free(calls);
        if (rank == 0 && !opcalls) {
            long bytes = (long)n * (noncomm ? 32 : per);
            if (total == 0) {
                printf("%s count=%d bytes=%ld exact\n", name, n, bytes);
            } else {
                printf("%s count=%d bytes=%ld differs (%ld of %ld elements)\n", name, n,
                       bytes, total, (long)n * p);
            }
            fflush(stdout);
        }
    }
    MPI_Op_free(&op);
    MPI_Op_free(&counted);
    MPI_Type_free(&mat);
    MPI_Finalize();
    return 0;
}
