/* tests/cuda/test_xchg.cu - the exchange transport end to end, on p
 * processes (which may share one GPU): hand-written exchange steps with
 * wrapping ranges, several messages to one peer and to self; the ring
 * allreduce and allgather (ring.cu) against the host reference for every
 * dtype and op, in place and not, counts 0, 1 and odd ones, data unique per
 * rank and position, outputs poisoned and guard bands checked; the caches
 * across calls and buffers that come and go; tags (built twice: with
 * -DCG_TAGS the tag counts are checked, without it the table stays empty).
 *
 * Run: tests/mpirun.sh openmpi P build/cuda/test_xchg (P = 1, 2, 3, 4, 8),
 * and the same with build/cuda/test_xchg_tags. The transport is the one the
 * runtime chooses (IPC on one node) unless CG_CUDA_TRANSPORT says otherwise.
 */
#include "cu_test.h"

extern "C" {
#include "collgen.h" /* tag ids */
}

static cudaStream_t g_stream;
static int g_transport;

/* ---- hand-written exchange steps ------------------------------------------- */

/* Element i of block-buffer element stream: a value that names the rank,
 * the buffer and the element. */
static int32_t tagval(int rank, int buf, size_t i)
{
    return (int32_t)(((uint32_t)rank << 24) ^ ((uint32_t)buf << 20) ^ (uint32_t)i);
}

/* Blocks of 257 elements (odd, so runs are never 16-byte multiples), 4 per
 * vector; src has 4 blocks, dst 8. In each of two steps a rank sends to
 * rank + d (d = 1, then 2):
 *   A: src [3, 5) (wraps: blocks 3, 0)  ->  dst [1, 3)
 *   B: src [1, 3)                       ->  dst [7, 9) (wraps: blocks 7, 0)
 * and to itself src [2, 3) -> dst [5, 6). Step 2 reuses the events of step
 * 1 with other peers; three iterations reuse the caches. */
static void exchange_should_move_wrapping_ranges_to_peers_and_self(void)
{
    const size_t bl = 257;
    const struct cg_geom g = { 4 * bl, 4 };
    cu_buf s, d;
    std::vector<int32_t> hs(4 * bl), hd(8 * bl);
    CU_OK(cu_buf_alloc(&s, 4 * bl * 4, 4));
    CU_OK(cu_buf_alloc(&d, 8 * bl * 4, 4));
    for (size_t i = 0; i < 4 * bl; i++) {
        hs[i] = tagval(g_rank, 0, i);
    }
    CU_OK(cu_h2d(s.ptr, hs.data(), hs.size() * 4));
    struct cg_buf src = { s.ptr, g, 4 };
    struct cg_buf dst = { d.ptr, g, 8 };
    const int p = g_size, r = g_rank;

    for (int iter = 0; iter < 3; iter++) { /* again: the caches and events are reused */
        struct cg_cu_call c;
        CG_OK(cg_cu_call_begin(&c, MPI_COMM_WORLD, CG_CU_INT32, CG_CU_OP_NONE, g_stream));
        for (int step = 1; step <= 2; step++) {
            int to = cg_mod(r + step, p), from = cg_mod(r - step, p);
            CU_OK(cudaMemsetAsync(d.ptr, CU_POISON, 8 * bl * 4, g_stream));
            /* Messages between one pair match in posting order (as MPI's),
             * and at p = 1 (and p = 2, step 2) `to` and `from` are this rank:
             * so each side posts A, self, B in that order, receives and
             * sends interleaved differently. */
            CG_OK(cg_cu_xchg_begin(&c, 5));
            CG_OK(cg_cu_recv(&c, from, &dst, 1, 2));
            CG_OK(cg_cu_send(&c, to, &src, 3, 2));
            CG_OK(cg_cu_send(&c, r, &src, 2, 1));
            CG_OK(cg_cu_recv(&c, r, &dst, 5, 1));
            CG_OK(cg_cu_recv(&c, from, &dst, 7, 2));
            CG_OK(cg_cu_send(&c, to, &src, 1, 2));
            CG_OK(cg_cu_xchg_wait(&c));
            CU_OK(cudaMemcpyAsync(hd.data(), d.ptr, hd.size() * 4, cudaMemcpyDeviceToHost, g_stream));
            CU_OK(cudaStreamSynchronize(g_stream));
            /* expected: dst blocks 1, 2 = from's src blocks 3, 0; dst 7, 0 =
             * from's src 1, 2; dst 5 = own src 2; the rest poisoned */
            std::vector<int32_t> want(8 * bl);
            memset(want.data(), CU_POISON, want.size() * 4);
            for (size_t i = 0; i < bl; i++) {
                want[1 * bl + i] = tagval(from, 0, 3 * bl + i);
                want[2 * bl + i] = tagval(from, 0, 0 * bl + i);
                want[7 * bl + i] = tagval(from, 0, 1 * bl + i);
                want[0 * bl + i] = tagval(from, 0, 2 * bl + i);
                want[5 * bl + i] = tagval(r, 0, 2 * bl + i);
            }
            size_t bad = cu_first_diff(hd.data(), want.data(), want.size(), 4);
            CHECKF(bad == want.size(), "rank %d iter %d step %d: dst element %zu is %08x, expected %08x",
                   r, iter, step, bad, (bad < want.size()) ? (unsigned)hd[bad] : 0u,
                   (bad < want.size()) ? (unsigned)want[bad] : 0u);
        }
        cg_cu_call_end(&c);
    }
    CHECK(cu_buf_guards_ok(&s) && cu_buf_guards_ok(&d));
    cu_buf_free(&s);
    cu_buf_free(&d);
}

/* A step in which nothing moves (empty ranges) posts nothing and waits for
 * nothing, on every rank. */
static void exchange_should_post_nothing_for_empty_ranges(void)
{
    const struct cg_geom g = { 3, 8 }; /* blocks 3..7 are empty */
    cu_buf s;
    CU_OK(cu_buf_alloc(&s, 3 * 4, 0));
    struct cg_buf b = { s.ptr, g, 8 };
    struct cg_cu_call c;
    CG_OK(cg_cu_call_begin(&c, MPI_COMM_WORLD, CG_CU_INT32, CG_CU_OP_NONE, g_stream));
    CG_OK(cg_cu_xchg_begin(&c, 6));
    CG_OK(cg_cu_send(&c, cg_mod(g_rank + 1, g_size), &b, 4, 3));
    CG_OK(cg_cu_recv(&c, cg_mod(g_rank - 1, g_size), &b, 5, 2));
    CHECK(c.nposts == 0);
    CG_OK(cg_cu_xchg_wait(&c));
    cg_cu_call_end(&c);
    CU_OK(cudaStreamSynchronize(g_stream));
    cu_buf_free(&s);
}

/* ---- the ring collectives against the host reference ------------------------ */

/* The ring allreduce's exact order: block j is combined along the ring from
 * rank j: acc = x_j, then acc = x_q op acc for q = j + 1, ..., j + p - 1
 * (CG_INTO_FROM at each receiver, whose own data comes first). */
static void ring_allreduce_reference(cg_cu_dtype t, cg_cu_op op, size_t count, int p, uint64_t salt,
                                     std::vector<char> &want)
{
    const size_t es = cg_cu_dtype_size(t);
    const struct cg_geom g = { count, p };
    std::vector<std::vector<char>> x((size_t)p, std::vector<char>(count * es));
    for (int q = 0; q < p; q++) {
        cu_gen_n(t, q, count, salt, x[(size_t)q].data());
    }
    want.assign(count * es, 0);
    for (int j = 0; j < p; j++) {
        size_t off = cg_geom_off(&g, j), len = cg_geom_len(&g, j);
        memcpy(want.data() + off * es, x[(size_t)j].data() + off * es, len * es);
        for (int k = 1; k < p; k++) {
            const std::vector<char> &xq = x[(size_t)((j + k) % p)];
            for (size_t i = off; i < off + len; i++) {
                /* into = x_q[i], from = acc[i]: acc = x_q op acc */
                char tmp[8];
                memcpy(tmp, xq.data() + i * es, es);
                cu_ref1(t, op, CG_INTO_FROM, tmp, want.data() + i * es);
                memcpy(want.data() + i * es, tmp, es);
            }
        }
    }
}

/* One allreduce: inputs, poisoned output, the call, the comparison. */
static void check_allreduce(cg_cu_dtype t, cg_cu_op op, size_t count, int in_place, int shift)
{
    const size_t es = cg_cu_dtype_size(t);
    const uint64_t salt = cu_hash(((uint64_t)t << 48) ^ ((uint64_t)op << 40) ^ count ^ ((uint64_t)in_place << 60));
    std::vector<char> in(count * es), want, got(count * es);
    char h1[40], h2[40];
    cu_gen_n(t, g_rank, count, salt, in.data());
    ring_allreduce_reference(t, op, count, g_size, salt, want);

    cu_buf sb, rb;
    CU_OK(cu_buf_alloc(&sb, count * es, shift ? es : 0));
    CU_OK(cu_buf_alloc(&rb, count * es, shift ? es : 0));
    if (in_place) {
        CU_OK(cu_h2d(rb.ptr, in.data(), count * es));
    } else {
        CU_OK(cu_h2d(sb.ptr, in.data(), count * es));
    }
    int rc = cg_cu_allreduce_ring(in_place ? CG_CU_IN_PLACE : sb.ptr, rb.ptr, count, t, op,
                                  MPI_COMM_WORLD, g_stream);
    CHECKF(rc == MPI_SUCCESS, "rank %d: %s", g_rank, cg_last_error());
    CU_OK(cudaStreamSynchronize(g_stream));
    CU_OK(cudaMemcpy(got.data(), rb.ptr, count * es, cudaMemcpyDeviceToHost));
    size_t d = cu_first_diff(got.data(), want.data(), count, es);
    CHECKF(d == count, "rank %d: %s %s count %zu %s: element %zu is %s, expected %s", g_rank,
           cg_cu_dtype_name(t), cg_cu_op_name(op), count, in_place ? "in place" : "out of place", d,
           (d < count) ? cu_hex(got.data() + d * es, es, h1) : "",
           (d < count) ? cu_hex(want.data() + d * es, es, h2) : "");
    if (!in_place) {
        std::vector<char> back(count * es);
        CU_OK(cudaMemcpy(back.data(), sb.ptr, count * es, cudaMemcpyDeviceToHost));
        CHECKF(cu_first_diff(back.data(), in.data(), count, es) == count, "rank %d: sendbuf changed",
               g_rank);
    }
    CHECKF(cu_buf_guards_ok(&sb) && cu_buf_guards_ok(&rb), "rank %d: %s %s count %zu: write outside",
           g_rank, cg_cu_dtype_name(t), cg_cu_op_name(op), count);
    /* Freeing needs no barrier (each rank's stream waited for the peers that
     * read its blocks); this one keeps the ranks' failure lines together. */
    MPI_Barrier(MPI_COMM_WORLD);
    cu_buf_free(&sb);
    cu_buf_free(&rb);
}

static void ring_allreduce_should_match_the_host_reference_for_every_dtype_and_op(void)
{
    for (int t = 0; t < CG_CU_NDTYPES; t++) {
        for (int op = 0; op < CG_CU_NOPS; op++) {
            check_allreduce((cg_cu_dtype)t, (cg_cu_op)op, 1001, (t + op) % 2, op % 2);
        }
    }
}

static void ring_allreduce_should_handle_counts_0_1_and_odd_in_place_and_not(void)
{
    const size_t p = (size_t)g_size;
    const size_t counts[] = { 0, 1, p - 1, p + 1, 2 * p + 1, 262147 };
    for (size_t count : counts) {
        for (int in_place = 0; in_place <= 1; in_place++) {
            check_allreduce(CG_CU_FLOAT32, CG_CU_SUM, count, in_place, in_place);
        }
    }
    check_allreduce(CG_CU_INT64, CG_CU_MAX, 262147, 0, 1);
    check_allreduce(CG_CU_BFLOAT16, CG_CU_SUM, 262147, 1, 0);
}

static void check_allgather(cg_cu_dtype t, size_t recvcount, int in_place, int shift)
{
    const size_t es = cg_cu_dtype_size(t), p = (size_t)g_size;
    const uint64_t salt = cu_hash(((uint64_t)t << 48) ^ recvcount ^ ((uint64_t)in_place << 60) ^ 77);
    const struct cg_geom g = { p * recvcount, (long)p };
    std::vector<char> in(recvcount * es), want(p * recvcount * es), got(p * recvcount * es);
    char h1[40], h2[40];
    for (size_t q = 0; q < p; q++) {
        cu_gen_n(t, (int)q, recvcount, salt, want.data() + cg_geom_off(&g, (long)q) * es);
    }
    cu_gen_n(t, g_rank, recvcount, salt, in.data());

    cu_buf sb, rb;
    CU_OK(cu_buf_alloc(&sb, recvcount * es, shift ? es : 0));
    CU_OK(cu_buf_alloc(&rb, p * recvcount * es, shift ? es : 0));
    if (in_place) {
        CU_OK(cu_h2d(rb.ptr + cg_geom_off(&g, g_rank) * es, in.data(), recvcount * es));
    } else {
        CU_OK(cu_h2d(sb.ptr, in.data(), recvcount * es));
    }
    int rc = cg_cu_allgather_ring(in_place ? CG_CU_IN_PLACE : sb.ptr, recvcount, rb.ptr, recvcount,
                                  t, MPI_COMM_WORLD, g_stream);
    CHECKF(rc == MPI_SUCCESS, "rank %d: %s", g_rank, cg_last_error());
    CU_OK(cudaStreamSynchronize(g_stream));
    CU_OK(cudaMemcpy(got.data(), rb.ptr, p * recvcount * es, cudaMemcpyDeviceToHost));
    size_t d = cu_first_diff(got.data(), want.data(), p * recvcount, es);
    CHECKF(d == p * recvcount, "rank %d: %s recvcount %zu %s: element %zu is %s, expected %s",
           g_rank, cg_cu_dtype_name(t), recvcount, in_place ? "in place" : "out of place", d,
           (d < p * recvcount) ? cu_hex(got.data() + d * es, es, h1) : "",
           (d < p * recvcount) ? cu_hex(want.data() + d * es, es, h2) : "");
    CHECKF(cu_buf_guards_ok(&sb) && cu_buf_guards_ok(&rb), "rank %d: %s recvcount %zu: write outside",
           g_rank, cg_cu_dtype_name(t), recvcount);
    MPI_Barrier(MPI_COMM_WORLD);
    cu_buf_free(&sb);
    cu_buf_free(&rb);
}

static void ring_allgather_should_match_the_host_reference(void)
{
    const size_t counts[] = { 0, 1, 7, 1001, 262147 };
    const cg_cu_dtype types[] = { CG_CU_FLOAT16, CG_CU_FLOAT32, CG_CU_INT64 };
    for (size_t count : counts) {
        for (cg_cu_dtype t : types) {
            for (int in_place = 0; in_place <= 1; in_place++) {
                check_allgather(t, count, in_place, (int)(count % 2));
            }
        }
    }
}

/* Buffers allocated and freed call after call: more than the import cache
 * holds (its evictions), and the same addresses coming back as new
 * allocations (stale entries, recognised by their buffer ids). */
static void ring_should_stay_right_when_buffers_come_and_go(void)
{
    for (int k = 0; k < 80; k++) {
        check_allreduce(CG_CU_INT32, CG_CU_SUM, 1000 + (size_t)(k % 7), k % 2, k % 3 == 0);
    }
}

/* ---- tags ----------------------------------------------------------------- */

#ifdef CG_TAGS
static void tags_should_count_what_the_schedule_enters(void)
{
    const uint64_t p = (uint64_t)g_size;
    cu_buf b;
    CU_OK(cu_buf_alloc(&b, 4096 * 4, 0));
    CU_OK(cu_fill(b.ptr, 0, 4096 * 4));
    cg_cu_tag_reset();
    CG_OK(cg_cu_allreduce_ring(CG_CU_IN_PLACE, b.ptr, 4096, CG_CU_FLOAT32, CG_CU_SUM, MPI_COMM_WORLD,
                               g_stream));
    CG_OK(cg_cu_allreduce_ring(CG_CU_IN_PLACE, b.ptr, 0, CG_CU_FLOAT32, CG_CU_SUM, MPI_COMM_WORLD,
                               g_stream)); /* count 0 enters no tag */
    CG_OK(cg_cu_allgather_ring(CG_CU_IN_PLACE, 0, b.ptr, 4096 / p, CG_CU_FLOAT32, MPI_COMM_WORLD,
                               g_stream));
    struct {
        int id;
        uint64_t calls;
    } want[] = {
        { CG_TAG_ALLREDUCE_RING, 1 },
        { CG_TAG_ALLREDUCE_RING__REDUCE_SCATTER, 1 },
        { CG_TAG_ALLREDUCE_RING__REDUCE_SCATTER__ROUND, p - 1 },
        { CG_TAG_ALLREDUCE_RING__REDUCE_SCATTER__EXCHANGE, p - 1 },
        { CG_TAG_ALLREDUCE_RING__REDUCE_SCATTER__REDUCE, p - 1 },
        { CG_TAG_ALLREDUCE_RING__ALLGATHER, 1 },
        { CG_TAG_ALLREDUCE_RING__ALLGATHER__ROUND, p - 1 },
        { CG_TAG_ALLREDUCE_RING__ALLGATHER__EXCHANGE, p - 1 },
        { CG_TAG_ALLGATHER_RING, 1 },
        { CG_TAG_ALLGATHER_RING__RING, 1 },
        { CG_TAG_ALLGATHER_RING__RING__ROUND, p - 1 },
        { CG_TAG_ALLGATHER_RING__RING__EXCHANGE, p - 1 },
    };
    uint64_t ns[32] = { 0 };
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        uint64_t calls = 0;
        CHECKF(cg_cu_tag_read(want[i].id, &ns[i], &calls) == 0, "%s", cg_last_error());
        CHECKF(calls == want[i].calls, "rank %d: tag %d entered %llu times, expected %llu", g_rank,
               want[i].id, (unsigned long long)calls, (unsigned long long)want[i].calls);
    }
    /* GPU time nests: a phase within its call, the call's phases within it. */
    CHECKF(ns[0] > 0, "rank %d: the call tag measured no time", g_rank);
    CHECKF(ns[1] <= ns[0] + 2000 && ns[5] <= ns[0] + 2000 && ns[1] + ns[5] <= ns[0] + 4000,
           "rank %d: phases %llu + %llu ns exceed the call's %llu ns", g_rank,
           (unsigned long long)ns[1], (unsigned long long)ns[5], (unsigned long long)ns[0]);
    CHECKF(ns[2] <= ns[1] + 2000 * p, "rank %d: rounds %llu ns exceed their phase's %llu ns", g_rank,
           (unsigned long long)ns[2], (unsigned long long)ns[1]);
    cg_cu_tag_reset();
    uint64_t z = 1, zc = 1;
    CHECK(cg_cu_tag_read(CG_TAG_ALLREDUCE_RING, &z, &zc) == 0 && z == 0 && zc == 0);
    /* Switched off between calls (bench_cuda's timed repetitions): nothing
     * recorded, no error; switched on again: counted again. */
    cg_cu_tag_enable(0);
    CG_OK(cg_cu_allreduce_ring(CG_CU_IN_PLACE, b.ptr, 4096, CG_CU_FLOAT32, CG_CU_SUM, MPI_COMM_WORLD,
                               g_stream));
    z = 1, zc = 1;
    CHECKF(cg_cu_tag_read(CG_TAG_ALLREDUCE_RING, &z, &zc) == 0 && z == 0 && zc == 0,
           "rank %d: tags switched off recorded %llu calls: %s", g_rank, (unsigned long long)zc,
           cg_last_error());
    cg_cu_tag_enable(1);
    CG_OK(cg_cu_allreduce_ring(CG_CU_IN_PLACE, b.ptr, 4096, CG_CU_FLOAT32, CG_CU_SUM, MPI_COMM_WORLD,
                               g_stream));
    CHECK(cg_cu_tag_read(CG_TAG_ALLREDUCE_RING, &z, &zc) == 0 && zc == 1 && z > 0);
    cg_cu_tag_reset();
    MPI_Barrier(MPI_COMM_WORLD);
    cu_buf_free(&b);
}
#else
static void tags_off_should_record_nothing(void)
{
    cu_buf b;
    CU_OK(cu_buf_alloc(&b, 1024 * 4, 0));
    CU_OK(cu_fill(b.ptr, 0, 1024 * 4));
    cg_cu_tag_reset();
    CG_OK(cg_cu_allreduce_ring(CG_CU_IN_PLACE, b.ptr, 1024, CG_CU_FLOAT32, CG_CU_SUM, MPI_COMM_WORLD,
                               g_stream));
    CU_OK(cudaStreamSynchronize(g_stream));
    uint64_t ns = 1, calls = 1;
    CHECK(cg_cu_tag_read(CG_TAG_ALLREDUCE_RING, &ns, &calls) == 0 && ns == 0 && calls == 0);
    MPI_Barrier(MPI_COMM_WORLD);
    cu_buf_free(&b);
}
#endif

/* ---- transport choice ---------------------------------------------------- */

static void transport_should_be_ipc_on_one_node_unless_asked(void)
{
    const char *env = getenv("CG_CUDA_TRANSPORT");
    int want = ((env != NULL) && (strcmp(env, "nccl") == 0)) ? CG_CU_TRANSPORT_NCCL
                                                             : CG_CU_TRANSPORT_IPC;
    CHECKF(g_transport == want, "transport %s", cg_cu_transport_name(g_transport));
}

/* NCCL refuses two ranks on one GPU: asking for it there must return an
 * error on every rank, with the reason, and hang nowhere. */
static void nccl_on_a_shared_gpu_should_fail_cleanly(void)
{
    int n = cg_cu_gpu_count(NULL);
    if ((g_size < 2) || (n >= g_size)) {
        return; /* every rank has its own GPU here: nothing to refuse */
    }
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    setenv("CG_CUDA_TRANSPORT", "nccl", 1);
    int t = -1;
    int rc = cg_cu_comm_transport(dup, &t);
    unsetenv("CG_CUDA_TRANSPORT");
    CHECKF(rc == MPI_ERR_OTHER && strstr(cg_last_error(), "Duplicate GPU") != NULL,
           "rank %d: rc %d: %s", g_rank, rc, cg_last_error());
    MPI_Comm_free(&dup);
}

int main(int argc, char **argv)
{
#ifdef CG_TAGS
    const char *prog = "test_xchg_tags";
#else
    const char *prog = "test_xchg";
#endif
    int st = cu_test_start(&argc, &argv, prog);
    if (st != 0) {
        MPI_Finalize();
        return (st == 1) ? 0 : 1;
    }
    if ((cudaStreamCreateWithFlags(&g_stream, cudaStreamNonBlocking) != cudaSuccess) ||
        (cg_cu_comm_transport(MPI_COMM_WORLD, &g_transport) != MPI_SUCCESS)) {
        printf("FAIL %s: rank %d: set-up: %s\n", prog, g_rank, cg_last_error());
        MPI_Finalize();
        return 1;
    }
    /* CG_CU_TEST_LABEL: an extra word for the PASS/FAIL lines of a run */
    const char *extra = getenv("CG_CU_TEST_LABEL");
#ifdef CG_TAGS
    const char *tags = " tags";
#else
    const char *tags = "";
#endif
    snprintf(g_label, sizeof(g_label), "(p=%d %s%s%s%s)", g_size, cg_cu_transport_name(g_transport),
             tags, (extra != NULL) ? " " : "", (extra != NULL) ? extra : "");
    double t0 = MPI_Wtime();
    RUN_ALL(transport_should_be_ipc_on_one_node_unless_asked);
    RUN_ALL(exchange_should_move_wrapping_ranges_to_peers_and_self);
    RUN_ALL(exchange_should_post_nothing_for_empty_ranges);
    RUN_ALL(ring_allreduce_should_match_the_host_reference_for_every_dtype_and_op);
    RUN_ALL(ring_allreduce_should_handle_counts_0_1_and_odd_in_place_and_not);
    RUN_ALL(ring_allgather_should_match_the_host_reference);
    RUN_ALL(ring_should_stay_right_when_buffers_come_and_go);
#ifdef CG_TAGS
    RUN_ALL(tags_should_count_what_the_schedule_enters);
#else
    RUN_ALL(tags_off_should_record_nothing);
#endif
    RUN_ALL(nccl_on_a_shared_gpu_should_fail_cleanly);
    if (g_rank == 0) {
        printf("# %s p=%d: %.1f s\n", prog, g_size, MPI_Wtime() - t0);
    }
    (void)cudaStreamDestroy(g_stream);
    MPI_Finalize();
    return check_exit();
}
