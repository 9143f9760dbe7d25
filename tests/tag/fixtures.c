/* fixtures.c - hand-written collectives in the styles `collgen tag` must
 * handle (tests/run_tag.sh tags this file, compiles the copy with tags on
 * and off, and runs all three against native MPI: tests/tag/test_ctag.c).
 * Each is correct at mode 0 for every p and n; fixture.h says what the
 * modes do. The styles differ on purpose: do not tidy them up.
 */
#include <stdlib.h>
#include <string.h>

#include "fixture.h"

/* A for loop, MPI_Sendrecv around a ring, memcpy of the own block, and a
 * return that communicates. */
int fix_for_ring(const int *in, int *out, int n, int mode, MPI_Comm comm)
{
    int rank, size, k;

    (void)mode;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    memcpy(out + (size_t)rank * n, in, sizeof(int) * (size_t)n);
    for (k = 0; k < size - 1; k++) {
        int send = (rank - k + size) % size;
        int recv = (rank - k - 1 + size) % size;
        MPI_Sendrecv(out + (size_t)send * n, n, MPI_INT, (rank + 1) % size, 0,
                     out + (size_t)recv * n, n, MPI_INT, (rank - 1 + size) % size, 0, comm,
                     MPI_STATUS_IGNORE);
    }
    return MPI_Barrier(comm); /* a step that returns: no tag line after it */
}

/* Recursive doubling in a while loop, with the fold and unfold of the
 * ranks above the largest power of two, and reductions as loops. */
int fix_while_doubling(const int *in, int *out, int n, int mode, MPI_Comm comm)
{
    int rank, size, mask = 1, pof2 = 1;
    int *tmp = malloc(sizeof(int) * (size_t)(n > 0 ? n : 1));

    (void)mode;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    while (pof2 * 2 <= size)
        pof2 *= 2;
    int rem = size - pof2;
    memcpy(out, in, sizeof(int) * (size_t)n);

    if (rank >= pof2) {
        MPI_Send(out, n, MPI_INT, rank - pof2, 1, comm);
    } else if (rank < rem) {
        MPI_Recv(tmp, n, MPI_INT, rank + pof2, 1, comm, MPI_STATUS_IGNORE);
        for (int i = 0; i < n; i++) {
            out[i] += tmp[i];
        }
    }
    if (rank < pof2) {
        while (mask < pof2) {
            int partner = rank ^ mask;
            MPI_Sendrecv(out, n, MPI_INT, partner, 2, tmp, n, MPI_INT, partner, 2, comm,
                         MPI_STATUS_IGNORE);
            for (int i = 0; i < n; i++) {
                out[i] = out[i] + tmp[i];
            }
            mask <<= 1;
        }
    }
    if (rank >= pof2) {
        MPI_Recv(out, n, MPI_INT, rank - pof2, 3, comm, MPI_STATUS_IGNORE);
    } else if (rank < rem) {
        MPI_Send(out, n, MPI_INT, rank + pof2, 3, comm);
    }
    free(tmp);
    return MPI_SUCCESS;
}

/* A pipelined chain from rank 0 in a do-while loop; braces K&R style. */
int fix_do_chain(const int *in, int *out, int n, int mode, MPI_Comm comm) {
    int rank, size, off = 0;
    const int seg = 7;

    (void)mode;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    if (rank == 0) {
        memcpy(out, in, sizeof(int) * (size_t)n);
    }
    if (size == 1 || n == 0) {
        return MPI_SUCCESS;
    }
    do {
        int len = n - off < seg ? n - off : seg;
        if (rank > 0) {
            MPI_Recv(out + off, len, MPI_INT, rank - 1, 0, comm, MPI_STATUS_IGNORE);
        }
        if (rank < size - 1) {
            MPI_Send(out + off, len, MPI_INT, rank + 1, 0, comm);
        }
        off += len;
    } while (off < n);
    return MPI_SUCCESS;
}

/* Nested loops: segments, and in each the ranks one by one into rank 0;
 * then the library's bcast. */
int fix_nested_segments(const int *in, int *out, int n, int mode, MPI_Comm comm)
{
    int rank, size, s, k;
    const int seg = 5;
    int nseg = (n + seg - 1) / seg;
    int *tmp = malloc(sizeof(int) * seg);

    (void)mode;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    memcpy(out, in, sizeof(int) * (size_t)n);
    for (s = 0; s < nseg; s++) {
        int first = s * seg;
        int len = n - first < seg ? n - first : seg;
        for (k = 1; k < size; k++) {
            if (rank == 0) {
                MPI_Recv(tmp, len, MPI_INT, k, s, comm, MPI_STATUS_IGNORE);
                for (int i = 0; i < len; i++) {
                    out[first + i] += tmp[i];
                }
            } else if (rank == k) {
                MPI_Send(out + first, len, MPI_INT, 0, s, comm);
            }
        }
    }
    MPI_Bcast(out, n, MPI_INT, 0, comm);
    free(tmp);
    return MPI_SUCCESS;
}

/* Early returns inside tagged regions: one on the line of its if, one
 * after cleaning up (mode 1: after the first exchange, with a partial
 * sum). */
int fix_early_return(const int *in, int *out, int n, int mode, MPI_Comm comm)
{
    int rank, size;
    int *tmp;

    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    memcpy(out, in, sizeof(int) * (size_t)n);
    if (size == 1) {
        return MPI_SUCCESS;
    }
    tmp = malloc(sizeof(int) * (size_t)(n > 0 ? n : 1));
    for (int d = 1; d < size; d++) {
        int to = (rank + d) % size, from = (rank - d + size) % size;
        int rc = MPI_Sendrecv(in, n, MPI_INT, to, 0, tmp, n, MPI_INT, from, 0, comm,
                              MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS) return rc;
        for (int i = 0; i < n; i++) {
            out[i] += tmp[i];
        }
        if (mode == 1 && d == 1) {
            free(tmp);
            fixture_expect("fix_early_return", "fix_early_return/d/round");
            return MPI_SUCCESS;
        }
    }
    free(tmp);
    return MPI_SUCCESS;
}

/* Errors handled as in Open MPI's coll_base: a macro that jumps to the
 * error label, and an if with its goto on one line (mode 2: a made-up
 * error after the last round; mode 3: from inside the last round's
 * MPI_Irecv step, before anything is posted). */
#define CHECK(call)                         \
    do {                                    \
        if ((rc = (call)) != MPI_SUCCESS) { \
            goto err_hndl;                  \
        }                                   \
    } while (0)

int fix_goto_error(const int *in, int *out, int n, int mode, MPI_Comm comm)
{
    int rank, size, rc = MPI_SUCCESS, k, line = 0;
    MPI_Request reqs[2];
    MPI_Status stats[2];

    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    memcpy(out + (size_t)rank * n, in, sizeof(int) * (size_t)n);
    for (k = 1; k < size; k++) {
        int to = (rank + k) % size;
        int from = (rank - k + size) % size;
        CHECK((mode == 3 && k == size - 1) ? MPI_ERR_ARG
                                           : MPI_Irecv(out + (size_t)from * n, n, MPI_INT, from,
                                                       k, comm, &reqs[0]));
        CHECK(MPI_Isend(in, n, MPI_INT, to, k, comm, &reqs[1]));
        rc = MPI_Waitall(2, reqs, stats);
        if (MPI_SUCCESS != rc) { line = __LINE__; goto err_hndl; }
        if (mode == 2 && k == size - 1) { rc = MPI_ERR_OTHER; line = __LINE__; goto err_hndl; }
    }
    return MPI_SUCCESS;

err_hndl:
    fixture_expect("fix_goto_error", "fix_goto_error");
    (void)line;
    return rc;
}

/* Helpers: one that exchanges through another, one that reduces, one that
 * copies. */
static int sendrecv_ints(const int *send, int *recv, int n, int to, int from, MPI_Comm comm)
{
    return MPI_Sendrecv(send, n, MPI_INT, to, 5, recv, n, MPI_INT, from, 5, comm,
                        MPI_STATUS_IGNORE);
}

static int exchange(const int *send, int *recv, int n, int to, int from, MPI_Comm comm)
{
    int rc = sendrecv_ints(send, recv, n, to, from, comm);
    return rc;
}

static void add_into(int *acc, const int *x, int n)
{
    for (int i = 0; i < n; i++) {
        acc[i] += x[i];
    }
}

static void copy_ints(int *to, const int *from, int n)
{
    memcpy(to, from, sizeof(int) * (size_t)n);
}

int fix_helpers(const int *in, int *out, int n, int mode, MPI_Comm comm)
{
    int rank, size, rc = MPI_SUCCESS;
    int *tmp = malloc(sizeof(int) * (size_t)(n > 0 ? n : 1));

    (void)mode;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    copy_ints(out, in, n);
    for (int d = 1; d < size && rc == MPI_SUCCESS; d++) {
        rc = exchange(in, tmp, n, (rank + d) % size, (rank - d + size) % size, comm);
        add_into(out, tmp, n);
    }
    free(tmp);
    return rc;
}

/* Macros: the loop header, the exchange and the copy are macros, and a
 * loop on one line gets no rounds (a note says so). */
#define FOR_EACH_STEP(k) for ((k) = 0; (k) < size - 1; (k)++)
#define RING_SENDRECV(sbuf, rbuf, cnt)                                             \
    MPI_Sendrecv((sbuf), (cnt), MPI_INT, (rank + 1) % size, 9, (rbuf), (cnt), MPI_INT, \
                 (rank - 1 + size) % size, 9, comm, MPI_STATUS_IGNORE)
#define COPY_INTS(dst, src, cnt) memcpy((dst), (src), sizeof(int) * (size_t)(cnt))

int fix_macros(const int *in, int *out, int n, int mode, MPI_Comm comm)
{
    int rank, size, k;

    (void)mode;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    COPY_INTS(out + (size_t)rank * n, in, n);
    FOR_EACH_STEP(k) {
        int send = (rank - k + size) % size;
        int recv = (rank - k - 1 + size) % size;
        RING_SENDRECV(out + (size_t)send * n, out + (size_t)recv * n, n);
    }
    for (k = 0; k < 1; k++) MPI_Barrier(comm);
    return MPI_SUCCESS;
}

/* break and continue (mode 4: break after the first exchange), and a
 * switch whose break stays in the loop. */
int fix_break_continue(const int *in, int *out, int n, int mode, MPI_Comm comm)
{
    int rank, size;

    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    memcpy(out + (size_t)rank * n, in, sizeof(int) * (size_t)n);
    for (int d = 0;; d++) {
        if (d >= size) {
            break;
        }
        if (d == 0) {
            continue;
        }
        int to = (rank + d) % size;
        int from = (rank - d + size) % size;
        MPI_Sendrecv(in, n, MPI_INT, to, 0, out + (size_t)from * n, n, MPI_INT, from, 0, comm,
                     MPI_STATUS_IGNORE);
        switch (mode) {
        case 9:
            break;
        default:
            break;
        }
        if (mode == 4 && d == 1) {
            fixture_expect("fix_break_continue", "fix_break_continue/d/round");
            break;
        }
    }
    fixture_expect("fix_break_continue", "fix_break_continue");
    return MPI_SUCCESS;
}

/* Binomial bcast from rank 0 with bodies and branches without braces. */
int fix_unbraced(const int *in, int *out, int n, int mode, MPI_Comm comm)
{
    int rank, size, mask;

    (void)mode;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    if (rank == 0)
        memcpy(out, in, sizeof(int) * (size_t)n);
    for (mask = 1; mask < size; mask <<= 1)
        if (rank < mask && rank + mask < size)
            MPI_Send(out, n, MPI_INT, rank + mask, 0, comm);
        else if (rank >= mask && rank < 2 * mask)
            MPI_Recv(out, n, MPI_INT, rank - mask, 0, comm, MPI_STATUS_IGNORE);
    return MPI_SUCCESS;
}

long fix_no_communication(const int *a, int n)
{
    long sum = 0;
    for (int i = 0; i < n; i++) {
        sum += a[i];
    }
    return sum;
}
