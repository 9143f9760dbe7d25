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
#include "tags.h" /* collgen tag: timing tags (CG_TAGS) */
int fix_for_ring(const int *in, int *out, int n, int mode, MPI_Comm comm)
{
    CG_CTAG_FUNCTION(CG_CTAG_FIX_FOR_RING);
    int rank, size, k;

    (void)mode;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    CG_CTAG_BEGIN(CG_CTAG_FIX_FOR_RING__MEMCPY);
    CG_CTAG_BEGIN(CG_CTAG_FIX_FOR_RING__MEMCPY__MEMCPY);
    memcpy(out + (size_t)rank * n, in, sizeof(int) * (size_t)n);
    CG_CTAG_END(CG_CTAG_FIX_FOR_RING__MEMCPY__MEMCPY);
    CG_CTAG_END(CG_CTAG_FIX_FOR_RING__MEMCPY);
    CG_CTAG_BEGIN(CG_CTAG_FIX_FOR_RING__K);
    for (k = 0; k < size - 1; k++) {
        CG_CTAG_NEXT(CG_CTAG_FIX_FOR_RING__K__ROUND);
        int send = (rank - k + size) % size;
        int recv = (rank - k - 1 + size) % size;
        CG_CTAG_BEGIN(CG_CTAG_FIX_FOR_RING__K__ROUND__SENDRECV);
        MPI_Sendrecv(out + (size_t)send * n, n, MPI_INT, (rank + 1) % size, 0,
                     out + (size_t)recv * n, n, MPI_INT, (rank - 1 + size) % size, 0, comm,
                     MPI_STATUS_IGNORE);
        CG_CTAG_END(CG_CTAG_FIX_FOR_RING__K__ROUND__SENDRECV);
        CG_CTAG_END(CG_CTAG_FIX_FOR_RING__K__ROUND);
    }
    CG_CTAG_END(CG_CTAG_FIX_FOR_RING__K);
    CG_CTAG_BEGIN(CG_CTAG_FIX_FOR_RING__BARRIER);
    CG_CTAG_BEGIN(CG_CTAG_FIX_FOR_RING__BARRIER__BARRIER);
    return MPI_Barrier(comm); /* a step that returns: no tag line after it */
}

/* Recursive doubling in a while loop, with the fold and unfold of the
 * ranks above the largest power of two, and reductions as loops. */
int fix_while_doubling(const int *in, int *out, int n, int mode, MPI_Comm comm)
{
    CG_CTAG_FUNCTION(CG_CTAG_FIX_WHILE_DOUBLING);
    int rank, size, mask = 1, pof2 = 1;
    int *tmp = malloc(sizeof(int) * (size_t)(n > 0 ? n : 1));

    (void)mode;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    while (pof2 * 2 <= size)
        pof2 *= 2;
    int rem = size - pof2;
    CG_CTAG_BEGIN(CG_CTAG_FIX_WHILE_DOUBLING__MEMCPY);
    CG_CTAG_BEGIN(CG_CTAG_FIX_WHILE_DOUBLING__MEMCPY__MEMCPY);
    memcpy(out, in, sizeof(int) * (size_t)n);
    CG_CTAG_END(CG_CTAG_FIX_WHILE_DOUBLING__MEMCPY__MEMCPY);
    CG_CTAG_END(CG_CTAG_FIX_WHILE_DOUBLING__MEMCPY);

    CG_CTAG_BEGIN(CG_CTAG_FIX_WHILE_DOUBLING__SEND);
    if (rank >= pof2) {
        CG_CTAG_BEGIN(CG_CTAG_FIX_WHILE_DOUBLING__SEND__SEND);
        MPI_Send(out, n, MPI_INT, rank - pof2, 1, comm);
        CG_CTAG_END(CG_CTAG_FIX_WHILE_DOUBLING__SEND__SEND);
    } else if (rank < rem) {
        CG_CTAG_BEGIN(CG_CTAG_FIX_WHILE_DOUBLING__SEND__RECV);
        MPI_Recv(tmp, n, MPI_INT, rank + pof2, 1, comm, MPI_STATUS_IGNORE);
        CG_CTAG_END(CG_CTAG_FIX_WHILE_DOUBLING__SEND__RECV);
        CG_CTAG_BEGIN(CG_CTAG_FIX_WHILE_DOUBLING__SEND__REDUCE_LOOP);
        for (int i = 0; i < n; i++) {
            out[i] += tmp[i];
        }
        CG_CTAG_END(CG_CTAG_FIX_WHILE_DOUBLING__SEND__REDUCE_LOOP);
    }
    CG_CTAG_END(CG_CTAG_FIX_WHILE_DOUBLING__SEND);
    CG_CTAG_BEGIN(CG_CTAG_FIX_WHILE_DOUBLING__MASK);
    if (rank < pof2) {
        while (mask < pof2) {
            CG_CTAG_NEXT(CG_CTAG_FIX_WHILE_DOUBLING__MASK__ROUND);
            int partner = rank ^ mask;
            CG_CTAG_BEGIN(CG_CTAG_FIX_WHILE_DOUBLING__MASK__ROUND__SENDRECV);
            MPI_Sendrecv(out, n, MPI_INT, partner, 2, tmp, n, MPI_INT, partner, 2, comm,
                         MPI_STATUS_IGNORE);
            CG_CTAG_END(CG_CTAG_FIX_WHILE_DOUBLING__MASK__ROUND__SENDRECV);
            CG_CTAG_BEGIN(CG_CTAG_FIX_WHILE_DOUBLING__MASK__ROUND__REDUCE_LOOP);
            for (int i = 0; i < n; i++) {
                out[i] = out[i] + tmp[i];
            }
            CG_CTAG_END(CG_CTAG_FIX_WHILE_DOUBLING__MASK__ROUND__REDUCE_LOOP);
            mask <<= 1;
            CG_CTAG_END(CG_CTAG_FIX_WHILE_DOUBLING__MASK__ROUND);
        }
    }
    CG_CTAG_END(CG_CTAG_FIX_WHILE_DOUBLING__MASK);
    CG_CTAG_BEGIN(CG_CTAG_FIX_WHILE_DOUBLING__RECV);
    if (rank >= pof2) {
        CG_CTAG_BEGIN(CG_CTAG_FIX_WHILE_DOUBLING__RECV__RECV);
        MPI_Recv(out, n, MPI_INT, rank - pof2, 3, comm, MPI_STATUS_IGNORE);
        CG_CTAG_END(CG_CTAG_FIX_WHILE_DOUBLING__RECV__RECV);
    } else if (rank < rem) {
        CG_CTAG_BEGIN(CG_CTAG_FIX_WHILE_DOUBLING__RECV__SEND);
        MPI_Send(out, n, MPI_INT, rank + pof2, 3, comm);
        CG_CTAG_END(CG_CTAG_FIX_WHILE_DOUBLING__RECV__SEND);
    }
    CG_CTAG_END(CG_CTAG_FIX_WHILE_DOUBLING__RECV);
    free(tmp);
    return MPI_SUCCESS;
}

/* A pipelined chain from rank 0 in a do-while loop; braces K&R style. */
int fix_do_chain(const int *in, int *out, int n, int mode, MPI_Comm comm) {
    CG_CTAG_FUNCTION(CG_CTAG_FIX_DO_CHAIN);
    int rank, size, off = 0;
    const int seg = 7;

    (void)mode;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    CG_CTAG_BEGIN(CG_CTAG_FIX_DO_CHAIN__MEMCPY);
    if (rank == 0) {
        CG_CTAG_BEGIN(CG_CTAG_FIX_DO_CHAIN__MEMCPY__MEMCPY);
        memcpy(out, in, sizeof(int) * (size_t)n);
        CG_CTAG_END(CG_CTAG_FIX_DO_CHAIN__MEMCPY__MEMCPY);
    }
    CG_CTAG_END(CG_CTAG_FIX_DO_CHAIN__MEMCPY);
    if (size == 1 || n == 0) {
        return MPI_SUCCESS;
    }
    CG_CTAG_BEGIN(CG_CTAG_FIX_DO_CHAIN__OFF);
    do {
        CG_CTAG_NEXT(CG_CTAG_FIX_DO_CHAIN__OFF__ROUND);
        int len = n - off < seg ? n - off : seg;
        if (rank > 0) {
            CG_CTAG_BEGIN(CG_CTAG_FIX_DO_CHAIN__OFF__ROUND__RECV);
            MPI_Recv(out + off, len, MPI_INT, rank - 1, 0, comm, MPI_STATUS_IGNORE);
            CG_CTAG_END(CG_CTAG_FIX_DO_CHAIN__OFF__ROUND__RECV);
        }
        if (rank < size - 1) {
            CG_CTAG_BEGIN(CG_CTAG_FIX_DO_CHAIN__OFF__ROUND__SEND);
            MPI_Send(out + off, len, MPI_INT, rank + 1, 0, comm);
            CG_CTAG_END(CG_CTAG_FIX_DO_CHAIN__OFF__ROUND__SEND);
        }
        off += len;
        CG_CTAG_END(CG_CTAG_FIX_DO_CHAIN__OFF__ROUND);
    } while (off < n);
    CG_CTAG_END(CG_CTAG_FIX_DO_CHAIN__OFF);
    return MPI_SUCCESS;
}

/* Nested loops: segments, and in each the ranks one by one into rank 0;
 * then the library's bcast. */
int fix_nested_segments(const int *in, int *out, int n, int mode, MPI_Comm comm)
{
    CG_CTAG_FUNCTION(CG_CTAG_FIX_NESTED_SEGMENTS);
    int rank, size, s, k;
    const int seg = 5;
    int nseg = (n + seg - 1) / seg;
    int *tmp = malloc(sizeof(int) * seg);

    (void)mode;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    CG_CTAG_BEGIN(CG_CTAG_FIX_NESTED_SEGMENTS__MEMCPY);
    CG_CTAG_BEGIN(CG_CTAG_FIX_NESTED_SEGMENTS__MEMCPY__MEMCPY);
    memcpy(out, in, sizeof(int) * (size_t)n);
    CG_CTAG_END(CG_CTAG_FIX_NESTED_SEGMENTS__MEMCPY__MEMCPY);
    CG_CTAG_END(CG_CTAG_FIX_NESTED_SEGMENTS__MEMCPY);
    CG_CTAG_BEGIN(CG_CTAG_FIX_NESTED_SEGMENTS__S);
    for (s = 0; s < nseg; s++) {
        CG_CTAG_NEXT(CG_CTAG_FIX_NESTED_SEGMENTS__S__ROUND);
        int first = s * seg;
        int len = n - first < seg ? n - first : seg;
        for (k = 1; k < size; k++) {
            CG_CTAG_NEXT(CG_CTAG_FIX_NESTED_SEGMENTS__S__ROUND__K);
            if (rank == 0) {
                CG_CTAG_BEGIN(CG_CTAG_FIX_NESTED_SEGMENTS__S__ROUND__K__RECV);
                MPI_Recv(tmp, len, MPI_INT, k, s, comm, MPI_STATUS_IGNORE);
                CG_CTAG_END(CG_CTAG_FIX_NESTED_SEGMENTS__S__ROUND__K__RECV);
                CG_CTAG_BEGIN(CG_CTAG_FIX_NESTED_SEGMENTS__S__ROUND__K__REDUCE_LOOP);
                for (int i = 0; i < len; i++) {
                    out[first + i] += tmp[i];
                }
                CG_CTAG_END(CG_CTAG_FIX_NESTED_SEGMENTS__S__ROUND__K__REDUCE_LOOP);
            } else if (rank == k) {
                CG_CTAG_BEGIN(CG_CTAG_FIX_NESTED_SEGMENTS__S__ROUND__K__SEND);
                MPI_Send(out + first, len, MPI_INT, 0, s, comm);
                CG_CTAG_END(CG_CTAG_FIX_NESTED_SEGMENTS__S__ROUND__K__SEND);
            }
            CG_CTAG_END(CG_CTAG_FIX_NESTED_SEGMENTS__S__ROUND__K);
        }
        CG_CTAG_END(CG_CTAG_FIX_NESTED_SEGMENTS__S__ROUND);
    }
    CG_CTAG_END(CG_CTAG_FIX_NESTED_SEGMENTS__S);
    CG_CTAG_BEGIN(CG_CTAG_FIX_NESTED_SEGMENTS__BCAST);
    CG_CTAG_BEGIN(CG_CTAG_FIX_NESTED_SEGMENTS__BCAST__BCAST);
    MPI_Bcast(out, n, MPI_INT, 0, comm);
    CG_CTAG_END(CG_CTAG_FIX_NESTED_SEGMENTS__BCAST__BCAST);
    CG_CTAG_END(CG_CTAG_FIX_NESTED_SEGMENTS__BCAST);
    free(tmp);
    return MPI_SUCCESS;
}

/* Early returns inside tagged regions: one on the line of its if, one
 * after cleaning up (mode 1: after the first exchange, with a partial
 * sum). */
int fix_early_return(const int *in, int *out, int n, int mode, MPI_Comm comm)
{
    CG_CTAG_FUNCTION(CG_CTAG_FIX_EARLY_RETURN);
    int rank, size;
    int *tmp;

    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    CG_CTAG_BEGIN(CG_CTAG_FIX_EARLY_RETURN__MEMCPY);
    CG_CTAG_BEGIN(CG_CTAG_FIX_EARLY_RETURN__MEMCPY__MEMCPY);
    memcpy(out, in, sizeof(int) * (size_t)n);
    CG_CTAG_END(CG_CTAG_FIX_EARLY_RETURN__MEMCPY__MEMCPY);
    CG_CTAG_END(CG_CTAG_FIX_EARLY_RETURN__MEMCPY);
    if (size == 1) {
        return MPI_SUCCESS;
    }
    tmp = malloc(sizeof(int) * (size_t)(n > 0 ? n : 1));
    CG_CTAG_BEGIN(CG_CTAG_FIX_EARLY_RETURN__D);
    for (int d = 1; d < size; d++) {
        CG_CTAG_NEXT(CG_CTAG_FIX_EARLY_RETURN__D__ROUND);
        int to = (rank + d) % size, from = (rank - d + size) % size;
        CG_CTAG_BEGIN(CG_CTAG_FIX_EARLY_RETURN__D__ROUND__SENDRECV);
        int rc = MPI_Sendrecv(in, n, MPI_INT, to, 0, tmp, n, MPI_INT, from, 0, comm,
                              MPI_STATUS_IGNORE);
        CG_CTAG_END(CG_CTAG_FIX_EARLY_RETURN__D__ROUND__SENDRECV);
        if (rc != MPI_SUCCESS) return rc;
        CG_CTAG_BEGIN(CG_CTAG_FIX_EARLY_RETURN__D__ROUND__REDUCE_LOOP);
        for (int i = 0; i < n; i++) {
            out[i] += tmp[i];
        }
        CG_CTAG_END(CG_CTAG_FIX_EARLY_RETURN__D__ROUND__REDUCE_LOOP);
        if (mode == 1 && d == 1) {
            free(tmp);
            fixture_expect("fix_early_return", "fix_early_return/d/round");
            return MPI_SUCCESS;
        }
        CG_CTAG_END(CG_CTAG_FIX_EARLY_RETURN__D__ROUND);
    }
    CG_CTAG_END(CG_CTAG_FIX_EARLY_RETURN__D);
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
    CG_CTAG_FUNCTION(CG_CTAG_FIX_GOTO_ERROR);
    int rank, size, rc = MPI_SUCCESS, k, line = 0;
    MPI_Request reqs[2];
    MPI_Status stats[2];

    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    CG_CTAG_BEGIN(CG_CTAG_FIX_GOTO_ERROR__MEMCPY);
    CG_CTAG_BEGIN(CG_CTAG_FIX_GOTO_ERROR__MEMCPY__MEMCPY);
    memcpy(out + (size_t)rank * n, in, sizeof(int) * (size_t)n);
    CG_CTAG_END(CG_CTAG_FIX_GOTO_ERROR__MEMCPY__MEMCPY);
    CG_CTAG_END(CG_CTAG_FIX_GOTO_ERROR__MEMCPY);
    CG_CTAG_BEGIN(CG_CTAG_FIX_GOTO_ERROR__K);
    for (k = 1; k < size; k++) {
        CG_CTAG_NEXT(CG_CTAG_FIX_GOTO_ERROR__K__ROUND);
        int to = (rank + k) % size;
        int from = (rank - k + size) % size;
        CG_CTAG_BEGIN(CG_CTAG_FIX_GOTO_ERROR__K__ROUND__IRECV);
        CHECK((mode == 3 && k == size - 1) ? MPI_ERR_ARG
                                           : MPI_Irecv(out + (size_t)from * n, n, MPI_INT, from,
                                                       k, comm, &reqs[0]));
        CG_CTAG_END(CG_CTAG_FIX_GOTO_ERROR__K__ROUND__IRECV);
        CG_CTAG_BEGIN(CG_CTAG_FIX_GOTO_ERROR__K__ROUND__ISEND);
        CHECK(MPI_Isend(in, n, MPI_INT, to, k, comm, &reqs[1]));
        CG_CTAG_END(CG_CTAG_FIX_GOTO_ERROR__K__ROUND__ISEND);
        CG_CTAG_BEGIN(CG_CTAG_FIX_GOTO_ERROR__K__ROUND__WAITALL);
        rc = MPI_Waitall(2, reqs, stats);
        CG_CTAG_END(CG_CTAG_FIX_GOTO_ERROR__K__ROUND__WAITALL);
        if (MPI_SUCCESS != rc) { line = __LINE__; goto err_hndl; }
        if (mode == 2 && k == size - 1) { rc = MPI_ERR_OTHER; line = __LINE__; goto err_hndl; }
        CG_CTAG_END(CG_CTAG_FIX_GOTO_ERROR__K__ROUND);
    }
    CG_CTAG_END(CG_CTAG_FIX_GOTO_ERROR__K);
    return MPI_SUCCESS;

err_hndl:
    CG_CTAG_UNWIND(CG_CTAG_FIX_GOTO_ERROR);
    fixture_expect("fix_goto_error", "fix_goto_error");
    (void)line;
    return rc;
}

/* Helpers: one that exchanges through another, one that reduces, one that
 * copies. */
static int sendrecv_ints(const int *send, int *recv, int n, int to, int from, MPI_Comm comm)
{
    CG_CTAG_FUNCTION(CG_CTAG_SENDRECV_INTS);
    CG_CTAG_BEGIN(CG_CTAG_SENDRECV_INTS__SENDRECV);
    CG_CTAG_BEGIN(CG_CTAG_SENDRECV_INTS__SENDRECV__SENDRECV);
    return MPI_Sendrecv(send, n, MPI_INT, to, 5, recv, n, MPI_INT, from, 5, comm,
                        MPI_STATUS_IGNORE);
}

static int exchange(const int *send, int *recv, int n, int to, int from, MPI_Comm comm)
{
    CG_CTAG_FUNCTION(CG_CTAG_EXCHANGE);
    CG_CTAG_BEGIN(CG_CTAG_EXCHANGE__SENDRECV_INTS);
    CG_CTAG_BEGIN(CG_CTAG_EXCHANGE__SENDRECV_INTS__SENDRECV_INTS);
    int rc = sendrecv_ints(send, recv, n, to, from, comm);
    CG_CTAG_END(CG_CTAG_EXCHANGE__SENDRECV_INTS__SENDRECV_INTS);
    CG_CTAG_END(CG_CTAG_EXCHANGE__SENDRECV_INTS);
    return rc;
}

static void add_into(int *acc, const int *x, int n)
{
    CG_CTAG_FUNCTION(CG_CTAG_ADD_INTO);
    CG_CTAG_BEGIN(CG_CTAG_ADD_INTO__REDUCE_LOOP);
    CG_CTAG_BEGIN(CG_CTAG_ADD_INTO__REDUCE_LOOP__REDUCE_LOOP);
    for (int i = 0; i < n; i++) {
        acc[i] += x[i];
    }
    CG_CTAG_END(CG_CTAG_ADD_INTO__REDUCE_LOOP__REDUCE_LOOP);
    CG_CTAG_END(CG_CTAG_ADD_INTO__REDUCE_LOOP);
}

static void copy_ints(int *to, const int *from, int n)
{
    CG_CTAG_FUNCTION(CG_CTAG_COPY_INTS);
    CG_CTAG_BEGIN(CG_CTAG_COPY_INTS__MEMCPY);
    CG_CTAG_BEGIN(CG_CTAG_COPY_INTS__MEMCPY__MEMCPY);
    memcpy(to, from, sizeof(int) * (size_t)n);
    CG_CTAG_END(CG_CTAG_COPY_INTS__MEMCPY__MEMCPY);
    CG_CTAG_END(CG_CTAG_COPY_INTS__MEMCPY);
}

int fix_helpers(const int *in, int *out, int n, int mode, MPI_Comm comm)
{
    CG_CTAG_FUNCTION(CG_CTAG_FIX_HELPERS);
    int rank, size, rc = MPI_SUCCESS;
    int *tmp = malloc(sizeof(int) * (size_t)(n > 0 ? n : 1));

    (void)mode;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    CG_CTAG_BEGIN(CG_CTAG_FIX_HELPERS__COPY_INTS);
    CG_CTAG_BEGIN(CG_CTAG_FIX_HELPERS__COPY_INTS__COPY_INTS);
    copy_ints(out, in, n);
    CG_CTAG_END(CG_CTAG_FIX_HELPERS__COPY_INTS__COPY_INTS);
    CG_CTAG_END(CG_CTAG_FIX_HELPERS__COPY_INTS);
    CG_CTAG_BEGIN(CG_CTAG_FIX_HELPERS__D);
    for (int d = 1; d < size && rc == MPI_SUCCESS; d++) {
        CG_CTAG_NEXT(CG_CTAG_FIX_HELPERS__D__ROUND);
        CG_CTAG_BEGIN(CG_CTAG_FIX_HELPERS__D__ROUND__EXCHANGE);
        rc = exchange(in, tmp, n, (rank + d) % size, (rank - d + size) % size, comm);
        CG_CTAG_END(CG_CTAG_FIX_HELPERS__D__ROUND__EXCHANGE);
        CG_CTAG_BEGIN(CG_CTAG_FIX_HELPERS__D__ROUND__ADD_INTO);
        add_into(out, tmp, n);
        CG_CTAG_END(CG_CTAG_FIX_HELPERS__D__ROUND__ADD_INTO);
        CG_CTAG_END(CG_CTAG_FIX_HELPERS__D__ROUND);
    }
    CG_CTAG_END(CG_CTAG_FIX_HELPERS__D);
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
    CG_CTAG_FUNCTION(CG_CTAG_FIX_MACROS);
    int rank, size, k;

    (void)mode;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    CG_CTAG_BEGIN(CG_CTAG_FIX_MACROS__MEMCPY);
    CG_CTAG_BEGIN(CG_CTAG_FIX_MACROS__MEMCPY__MEMCPY);
    COPY_INTS(out + (size_t)rank * n, in, n);
    CG_CTAG_END(CG_CTAG_FIX_MACROS__MEMCPY__MEMCPY);
    CG_CTAG_END(CG_CTAG_FIX_MACROS__MEMCPY);
    CG_CTAG_BEGIN(CG_CTAG_FIX_MACROS__K);
    FOR_EACH_STEP(k) {
        CG_CTAG_NEXT(CG_CTAG_FIX_MACROS__K__ROUND);
        int send = (rank - k + size) % size;
        int recv = (rank - k - 1 + size) % size;
        CG_CTAG_BEGIN(CG_CTAG_FIX_MACROS__K__ROUND__SENDRECV);
        RING_SENDRECV(out + (size_t)send * n, out + (size_t)recv * n, n);
        CG_CTAG_END(CG_CTAG_FIX_MACROS__K__ROUND__SENDRECV);
        CG_CTAG_END(CG_CTAG_FIX_MACROS__K__ROUND);
    }
    CG_CTAG_END(CG_CTAG_FIX_MACROS__K);
    CG_CTAG_BEGIN(CG_CTAG_FIX_MACROS__K_2);
    CG_CTAG_BEGIN(CG_CTAG_FIX_MACROS__K_2__BARRIER);
    for (k = 0; k < 1; k++) MPI_Barrier(comm);
    CG_CTAG_END(CG_CTAG_FIX_MACROS__K_2__BARRIER);
    CG_CTAG_END(CG_CTAG_FIX_MACROS__K_2);
    return MPI_SUCCESS;
}

/* break and continue (mode 4: break after the first exchange), and a
 * switch whose break stays in the loop. */
int fix_break_continue(const int *in, int *out, int n, int mode, MPI_Comm comm)
{
    CG_CTAG_FUNCTION(CG_CTAG_FIX_BREAK_CONTINUE);
    int rank, size;

    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    CG_CTAG_BEGIN(CG_CTAG_FIX_BREAK_CONTINUE__MEMCPY);
    CG_CTAG_BEGIN(CG_CTAG_FIX_BREAK_CONTINUE__MEMCPY__MEMCPY);
    memcpy(out + (size_t)rank * n, in, sizeof(int) * (size_t)n);
    CG_CTAG_END(CG_CTAG_FIX_BREAK_CONTINUE__MEMCPY__MEMCPY);
    CG_CTAG_END(CG_CTAG_FIX_BREAK_CONTINUE__MEMCPY);
    CG_CTAG_BEGIN(CG_CTAG_FIX_BREAK_CONTINUE__D);
    for (int d = 0;; d++) {
        CG_CTAG_NEXT(CG_CTAG_FIX_BREAK_CONTINUE__D__ROUND);
        if (d >= size) {
            break;
        }
        if (d == 0) {
            continue;
        }
        int to = (rank + d) % size;
        int from = (rank - d + size) % size;
        CG_CTAG_BEGIN(CG_CTAG_FIX_BREAK_CONTINUE__D__ROUND__SENDRECV);
        MPI_Sendrecv(in, n, MPI_INT, to, 0, out + (size_t)from * n, n, MPI_INT, from, 0, comm,
                     MPI_STATUS_IGNORE);
        CG_CTAG_END(CG_CTAG_FIX_BREAK_CONTINUE__D__ROUND__SENDRECV);
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
        CG_CTAG_END(CG_CTAG_FIX_BREAK_CONTINUE__D__ROUND);
    }
    CG_CTAG_END(CG_CTAG_FIX_BREAK_CONTINUE__D__ROUND);
    CG_CTAG_END(CG_CTAG_FIX_BREAK_CONTINUE__D);
    fixture_expect("fix_break_continue", "fix_break_continue");
    return MPI_SUCCESS;
}

/* Binomial bcast from rank 0 with bodies and branches without braces. */
int fix_unbraced(const int *in, int *out, int n, int mode, MPI_Comm comm)
{
    CG_CTAG_FUNCTION(CG_CTAG_FIX_UNBRACED);
    int rank, size, mask;

    (void)mode;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    CG_CTAG_BEGIN(CG_CTAG_FIX_UNBRACED__MEMCPY);
    if (rank == 0)
        { CG_CTAG_BEGIN(CG_CTAG_FIX_UNBRACED__MEMCPY__MEMCPY);
        memcpy(out, in, sizeof(int) * (size_t)n);
        CG_CTAG_END(CG_CTAG_FIX_UNBRACED__MEMCPY__MEMCPY); }
    CG_CTAG_END(CG_CTAG_FIX_UNBRACED__MEMCPY);
    CG_CTAG_BEGIN(CG_CTAG_FIX_UNBRACED__MASK);
    for (mask = 1; mask < size; mask <<= 1)
        { CG_CTAG_NEXT(CG_CTAG_FIX_UNBRACED__MASK__ROUND);
        if (rank < mask && rank + mask < size)
            { CG_CTAG_BEGIN(CG_CTAG_FIX_UNBRACED__MASK__ROUND__SEND);
            MPI_Send(out, n, MPI_INT, rank + mask, 0, comm);
            CG_CTAG_END(CG_CTAG_FIX_UNBRACED__MASK__ROUND__SEND); }
        else if (rank >= mask && rank < 2 * mask)
            { CG_CTAG_BEGIN(CG_CTAG_FIX_UNBRACED__MASK__ROUND__RECV);
            MPI_Recv(out, n, MPI_INT, rank - mask, 0, comm, MPI_STATUS_IGNORE);
            CG_CTAG_END(CG_CTAG_FIX_UNBRACED__MASK__ROUND__RECV); }
        CG_CTAG_END(CG_CTAG_FIX_UNBRACED__MASK__ROUND); }
    CG_CTAG_END(CG_CTAG_FIX_UNBRACED__MASK);
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
