/* tests/cuda/test_nogpu.c - what of the CUDA runtime can be checked on any
 * machine, GPU or not; compiled as C11 (-std=c11 -Wall -Wextra -Werror), so
 * it also proves that the public headers are C11.
 *
 * Run on 1 rank: tests/mpirun.sh openmpi 1 build/cuda/test_nogpu
 */
#include "cg_cuda.h"
#include "cg_cuda_internal.h" /* the piece cutter, tested here */
#include "collgen_cuda.h"     /* C11 must see the generated prototypes and table too */
#include "ring.h"             /* and the hand-written ones */

#include "check.h"

#include <stdlib.h>
#include <string.h>

static int g_gpus;
static const char *g_why;

static void dtype_sizes_and_names_should_match_the_types(void)
{
    CHECK(cg_cu_dtype_size(CG_CU_FLOAT32) == 4);
    CHECK(cg_cu_dtype_size(CG_CU_FLOAT64) == 8);
    CHECK(cg_cu_dtype_size(CG_CU_FLOAT16) == 2);
    CHECK(cg_cu_dtype_size(CG_CU_BFLOAT16) == 2);
    CHECK(cg_cu_dtype_size(CG_CU_INT32) == 4);
    CHECK(cg_cu_dtype_size(CG_CU_INT64) == 8);
    CHECK(cg_cu_dtype_size(CG_CU_NDTYPES) == 0);
    CHECK(cg_cu_dtype_size((cg_cu_dtype)-3) == 0);
    CHECK(strcmp(cg_cu_dtype_name(CG_CU_BFLOAT16), "bfloat16") == 0);
    CHECK(strcmp(cg_cu_dtype_name(CG_CU_NDTYPES), "?") == 0);
    CHECK(strcmp(cg_cu_op_name(CG_CU_MAX), "max") == 0);
    CHECK(strcmp(cg_cu_op_name(CG_CU_OP_NONE), "none") == 0);
    CHECK(strcmp(cg_cu_transport_name(CG_CU_TRANSPORT_IPC), "ipc") == 0);
    CHECK(strcmp(cg_cu_transport_name(CG_CU_TRANSPORT_NCCL), "nccl") == 0);
}

static void mpi_types_and_ops_should_map_by_width(void)
{
    cg_cu_dtype t = CG_CU_NDTYPES;
    cg_cu_op o = CG_CU_OP_NONE;

    CHECK(cg_cu_dtype_from_mpi(MPI_FLOAT, &t) == MPI_SUCCESS && t == CG_CU_FLOAT32);
    CHECK(cg_cu_dtype_from_mpi(MPI_DOUBLE, &t) == MPI_SUCCESS && t == CG_CU_FLOAT64);
    CHECK(cg_cu_dtype_from_mpi(MPI_INT32_T, &t) == MPI_SUCCESS && t == CG_CU_INT32);
    CHECK(cg_cu_dtype_from_mpi(MPI_INT64_T, &t) == MPI_SUCCESS && t == CG_CU_INT64);
    CHECK(cg_cu_dtype_from_mpi(MPI_INT, &t) == MPI_SUCCESS &&
          t == (sizeof(int) == 4 ? CG_CU_INT32 : CG_CU_INT64));
    CHECK(cg_cu_dtype_from_mpi(MPI_LONG, &t) == MPI_SUCCESS &&
          t == (sizeof(long) == 8 ? CG_CU_INT64 : CG_CU_INT32));
    CHECK(cg_cu_dtype_from_mpi(MPI_LONG_LONG, &t) == MPI_SUCCESS && t == CG_CU_INT64);
    CHECK(cg_cu_dtype_from_mpi(MPI_CHAR, &t) == MPI_ERR_TYPE);
    CHECK(strstr(cg_last_error(), "no CUDA kernel") != NULL);
    CHECK(cg_cu_op_from_mpi(MPI_SUM, &o) == MPI_SUCCESS && o == CG_CU_SUM);
    CHECK(cg_cu_op_from_mpi(MPI_PROD, &o) == MPI_SUCCESS && o == CG_CU_PROD);
    CHECK(cg_cu_op_from_mpi(MPI_MIN, &o) == MPI_SUCCESS && o == CG_CU_MIN);
    CHECK(cg_cu_op_from_mpi(MPI_MAX, &o) == MPI_SUCCESS && o == CG_CU_MAX);
    CHECK(cg_cu_op_from_mpi(MPI_BAND, &o) == MPI_ERR_OP);
}

static void nccl_types_and_ops_should_round_trip(void)
{
#ifndef CG_CUDA_NO_NCCL
    for (int d = 0; d < CG_CU_NDTYPES; d++) {
        cg_cu_dtype back = CG_CU_NDTYPES;
        CHECKF(cg_cu_dtype_from_nccl(cg_cu_dtype_to_nccl((cg_cu_dtype)d), &back) == MPI_SUCCESS &&
                   back == (cg_cu_dtype)d,
               "dtype %d", d);
    }
    for (int o = 0; o < CG_CU_NOPS; o++) {
        cg_cu_op back = CG_CU_OP_NONE;
        CHECKF(cg_cu_op_from_nccl(cg_cu_op_to_nccl((cg_cu_op)o), &back) == MPI_SUCCESS &&
                   back == (cg_cu_op)o,
               "op %d", o);
    }
    cg_cu_dtype t = CG_CU_NDTYPES;
    cg_cu_op op = CG_CU_OP_NONE;
    CHECK(cg_cu_dtype_from_nccl(ncclHalf, &t) == MPI_SUCCESS && t == CG_CU_FLOAT16);
    CHECK(cg_cu_dtype_from_nccl(ncclUint8, &t) == MPI_ERR_TYPE);
    CHECK(cg_cu_op_from_nccl(ncclAvg, &op) == MPI_ERR_OP);
#endif
}

static void reduce_should_check_its_arguments_before_the_gpu(void)
{
    CHECK(cg_cu_reduce(NULL, NULL, 0, CG_CU_FLOAT32, CG_CU_SUM, CG_INTO_FROM, 0) == MPI_SUCCESS);
    CHECK(cg_cu_reduce(NULL, NULL, 5, CG_CU_NDTYPES, CG_CU_SUM, CG_INTO_FROM, 0) == MPI_ERR_TYPE);
    CHECK(cg_cu_reduce(NULL, NULL, 5, CG_CU_INT32, CG_CU_NOPS, CG_INTO_FROM, 0) == MPI_ERR_OP);
    CHECK(cg_cu_reduce(NULL, NULL, 5, CG_CU_INT32, CG_CU_SUM, 7, 0) == MPI_ERR_ARG);
    CHECK(cg_cu_reduce(NULL, NULL, 5, CG_CU_INT32, CG_CU_SUM, CG_FROM_INTO, 0) == MPI_ERR_BUFFER);
}

/* Runs [off, off + len) of a buffer of `total` units, cut at `cut` (a
 * wrapped range's two runs) or not (cut == 0 or len). */
static int runs_of(size_t off, size_t len, size_t cut, size_t total, struct cg_seg *s)
{
    if ((cut == 0) || (cut >= len)) {
        s[0].off = off;
        s[0].len = len;
        return 1;
    }
    s[0].off = off;
    s[0].len = cut;
    s[1].off = (off + len + total) % total; /* anywhere else: the wrapped part */
    s[1].len = len - cut;
    return 2;
}

static void cut_should_pair_every_unit_of_two_run_lists(void)
{
    int bad = 0;
    for (size_t len = 1; len <= 9; len++) {
        for (size_t ca = 0; ca < len; ca++) {
            for (size_t cb = 0; cb < len; cb++) {
                struct cg_seg a[2], b[2];
                struct cg_cu_pieces pc;
                int na = runs_of(100, len, ca, 1000, a);
                int nb = runs_of(500, len, cb, 700, b);
                int np = cg_cu_cut(a, na, b, nb, &pc);
                /* unit u of the stream: where it is in a and in b */
                size_t seen = 0;
                for (int k = 0; k < np; k++) {
                    for (size_t i = 0; i < pc.len[k]; i++, seen++) {
                        size_t ua = (seen < a[0].len) ? a[0].off + seen : a[1].off + seen - a[0].len;
                        size_t ub = (seen < b[0].len) ? b[0].off + seen : b[1].off + seen - b[0].len;
                        bad += (pc.aoff[k] + i != ua) || (pc.boff[k] + i != ub);
                    }
                }
                bad += (seen != len) || (np > 3) || (np < 1);
            }
        }
    }
    CHECKF(bad == 0, "%d mismatches", bad);
}

/* One call of a generated GPU collective on MPI_COMM_WORLD, with no buffers
 * (for calls that fail before they would touch them). */
static int call_algo(const struct cg_cu_algo *a, cg_cu_dtype t, cg_cu_op op, size_t n)
{
    switch (a->coll) {
    case CG_COLL_ALLREDUCE:
        return a->allreduce(CG_CU_IN_PLACE, NULL, n, t, op, MPI_COMM_WORLD, 0);
    case CG_COLL_ALLGATHER:
        return a->allgather(CG_CU_IN_PLACE, NULL, n, t, MPI_COMM_WORLD, 0);
    case CG_COLL_REDUCE_SCATTER_BLOCK:
        return a->reduce_scatter_block(CG_CU_IN_PLACE, NULL, n, t, op, MPI_COMM_WORLD, 0);
    case CG_COLL_BCAST:
        return a->bcast(CG_CU_IN_PLACE, NULL, n, t, 0, MPI_COMM_WORLD, 0);
    case CG_COLL_ALLTOALL:
        return a->alltoall(CG_CU_IN_PLACE, NULL, n, t, MPI_COMM_WORLD, 0);
    default:
        return -1;
    }
}

/* emitted/cuda/all.cu's table: every entry once, its function in the field
 * of its collective and nowhere else, tag ranges the MPI backend's. */
static void emitted_table_should_list_each_gpu_collective_with_its_function(void)
{
    CHECK(cg_cu_nalgos >= 1);
    CHECK(cg_cu_algos[cg_cu_nalgos] == NULL);
    int next_tag = 0, found_ring = 0;
    for (int i = 0; i < cg_cu_nalgos; i++) {
        const struct cg_cu_algo *a = cg_cu_algos[i];
        if (a == NULL) {
            CHECKF(a != NULL, "entry %d is NULL", i);
            return;
        }
        static const char *const colls[] = { [CG_COLL_ALLREDUCE] = "allreduce",
                                             [CG_COLL_ALLGATHER] = "allgather",
                                             [CG_COLL_REDUCE_SCATTER_BLOCK] = "reduce_scatter_block",
                                             [CG_COLL_BCAST] = "bcast",
                                             [CG_COLL_ALLTOALL] = "alltoall",
                                             [CG_COLL_COUNT_] = NULL };
        const char *coll = colls[a->coll] ? colls[a->coll] : "(not a GPU collective)";
        size_t len = strlen(coll);
        CHECKF(strncmp(a->name, coll, len) == 0 && a->name[len] == '_', "%s is not a %s", a->name,
               coll);
        int fns = (a->allreduce != NULL) + (a->allgather != NULL) +
                  (a->reduce_scatter_block != NULL) + (a->bcast != NULL) + (a->alltoall != NULL);
        int right = (a->coll == CG_COLL_ALLREDUCE) ? (a->allreduce != NULL)
                    : (a->coll == CG_COLL_ALLGATHER) ? (a->allgather != NULL)
                    : (a->coll == CG_COLL_REDUCE_SCATTER_BLOCK) ? (a->reduce_scatter_block != NULL)
                    : (a->coll == CG_COLL_BCAST) ? (a->bcast != NULL)
                    : (a->coll == CG_COLL_ALLTOALL) ? (a->alltoall != NULL)
                                                    : 0;
        CHECKF(fns == 1 && right, "%s: %d functions, in its field: %d", a->name, fns, right);
        CHECKF(a->tag_first >= next_tag && a->tag_count >= 2 && a->tag_first + a->tag_count <= CG_NTAGS,
               "%s: tags [%d, +%d) after %d of %d", a->name, a->tag_first, a->tag_count, next_tag,
               CG_NTAGS);
        next_tag = a->tag_first + a->tag_count;
        CHECKF(strncmp(a->file, "schedules/", 10) == 0 && a->summary[0] != '\0', "%s", a->name);
        if (strcmp(a->name, "allreduce_ring") == 0) {
            found_ring = 1;
            CHECK(a->allreduce == cgcu_allreduce_ring);
            CHECK(a->tag_first == CG_TAG_ALLREDUCE_RING);
            CHECK(a->tag_count == CG_TAG_ALLREDUCE_RING__ALLGATHER__EXCHANGE + 1 - CG_TAG_ALLREDUCE_RING);
        }
    }
    CHECK(found_ring);
}

/* What a generated GPU collective checks before it needs a GPU: the element
 * type, and the op where it reduces. */
static void emitted_collectives_should_check_types_and_ops_before_the_gpu(void)
{
    for (int i = 0; i < cg_cu_nalgos; i++) {
        const struct cg_cu_algo *a = cg_cu_algos[i];
        int rc = call_algo(a, CG_CU_NDTYPES, CG_CU_SUM, 10);
        CHECKF(rc == MPI_ERR_TYPE, "%s: %d: %s", a->name, rc, cg_last_error());
        if ((a->coll == CG_COLL_ALLREDUCE) || (a->coll == CG_COLL_REDUCE_SCATTER_BLOCK)) {
            rc = call_algo(a, CG_CU_INT32, (cg_cu_op)9, 10);
            CHECKF(rc == MPI_ERR_OP, "%s: %d: %s", a->name, rc, cg_last_error());
        }
    }
}

static void gpu_count_should_say_why_there_is_none(void)
{
    if (g_gpus == 0) {
        CHECK(g_why != NULL && strncmp(g_why, "cudaGetDeviceCount", 18) == 0);
    } else {
        CHECK(g_why != NULL && g_why[0] == '\0');
    }
}

/* Without a GPU every entry point that needs one must return an error with a
 * message in the runtime's format, never abort. */
static void calls_without_a_gpu_should_fail_cleanly(void)
{
    if (g_gpus > 0) {
        int dev = -1;
        CHECK(cg_cu_select_device(MPI_COMM_WORLD, &dev) == MPI_SUCCESS && dev >= 0);
        return;
    }
    CHECK(cg_cu_select_device(MPI_COMM_WORLD, NULL) == MPI_ERR_OTHER);
    CHECKF(strstr(cg_last_error(), "no GPU (cudaGetDeviceCount: ") != NULL, "%s", cg_last_error());

    struct cg_cu_call c;
    int rc = cg_cu_call_begin(&c, MPI_COMM_WORLD, CG_CU_FLOAT32, CG_CU_SUM, 0);
    CHECK(rc == MPI_ERR_OTHER);
    CHECKF(strncmp(cg_last_error(), "rank 0: runtime/cuda/comm.c:", 28) == 0 &&
               strstr(cg_last_error(), ": cudaGetDevice: ") != NULL,
           "%s", cg_last_error());
    cg_cu_call_end(&c);

    rc = cg_cu_allreduce_ring(CG_CU_IN_PLACE, NULL, 10, CG_CU_FLOAT32, CG_CU_SUM, MPI_COMM_WORLD, 0);
    CHECK(rc == MPI_ERR_OTHER);

    /* Every generated GPU collective, as far as its first CUDA call. */
    for (int i = 0; i < cg_cu_nalgos; i++) {
        rc = call_algo(cg_cu_algos[i], CG_CU_FLOAT32, CG_CU_SUM, 10);
        CHECKF(rc == MPI_ERR_OTHER && strstr(cg_last_error(), ": cudaGetDevice: ") != NULL,
               "%s: %d: %s", cg_cu_algos[i]->name, rc, cg_last_error());
    }
}

static void call_begin_should_reject_bad_types_and_ops(void)
{
    struct cg_cu_call c;
    CHECK(cg_cu_call_begin(&c, MPI_COMM_WORLD, CG_CU_NDTYPES, CG_CU_SUM, 0) == MPI_ERR_TYPE);
    cg_cu_call_end(&c);
    CHECK(cg_cu_call_begin(&c, MPI_COMM_WORLD, CG_CU_INT32, (cg_cu_op)9, 0) == MPI_ERR_OP);
    cg_cu_call_end(&c);
    CHECK(cg_cu_call_begin(&c, MPI_COMM_NULL, CG_CU_INT32, CG_CU_SUM, 0) == MPI_ERR_COMM);
    cg_cu_call_end(&c);
}

static void empty_should_end_a_call_of_count_0_with_success(void)
{
    struct cg_cu_call c;
    memset(&c, 0, sizeof(c));
    c.result = MPI_ERR_OTHER; /* poisoned: cg_cu_empty must set it */
    c.empty = 0;
    CHECK(cg_cu_empty(&c) == MPI_SUCCESS && c.result == MPI_ERR_OTHER);
    c.empty = 1;
    CHECK(cg_cu_empty(&c) == CG_DONE && c.result == MPI_SUCCESS);
}

static void segmented_exchange_should_check_its_segments(void)
{
    struct cg_cu_call c;
    memset(&c, 0, sizeof(c));
    CHECK(cg_cu_xchg_begin_seg(&c, 3, 0) == MPI_ERR_ARG);
    CHECK(strstr(cg_last_error(), "1..64") != NULL);
    CHECK(cg_cu_xchg_begin_seg(&c, 3, CG_MAX_SEGMENTS + 1) == MPI_ERR_ARG);
    CHECK(cg_cu_xchg_begin_seg(&c, 3, 1) == MPI_SUCCESS && c.tag == 3 && c.nposts == 0);
    CHECK(cg_cu_xchg_begin_seg(&c, 4, CG_MAX_SEGMENTS) == MPI_SUCCESS && c.tag == 4);
}

static void tags_should_read_zero_and_refuse_bad_ids(void)
{
    uint64_t ns = 1, calls = 1;
    cg_cu_tag_reset();
    CHECK(cg_cu_tag_read(-1, &ns, &calls) == -1);
    CHECK(cg_cu_tag_read(CG_TAG_CAPACITY, &ns, &calls) == -1);
    CHECK(cg_cu_tag_read(5, &ns, &calls) == 0 && ns == 0 && calls == 0);
    cg_cu_tag_end(5); /* END without BEGIN: reported at the next collection */
    CHECK(cg_cu_tag_collect() == MPI_ERR_ARG);
    CHECK(strstr(cg_last_error(), "CG_CU_TAG_END") != NULL);
    CHECK(cg_cu_tag_collect() == MPI_SUCCESS);
    cg_cu_tag_free();
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int size = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *expect = getenv("CG_EXPECT_NP");
    if ((expect != NULL) && (atoi(expect) != size)) {
        printf("FAIL test_nogpu: %d ranks, expected %s (wrong launcher?)\n", size, expect);
        MPI_Finalize();
        return 1;
    }
    g_gpus = cg_cu_gpu_count(&g_why);
    RUN(dtype_sizes_and_names_should_match_the_types);
    RUN(mpi_types_and_ops_should_map_by_width);
    RUN(nccl_types_and_ops_should_round_trip);
    RUN(reduce_should_check_its_arguments_before_the_gpu);
    RUN(cut_should_pair_every_unit_of_two_run_lists);
    RUN(gpu_count_should_say_why_there_is_none);
    RUN(calls_without_a_gpu_should_fail_cleanly);
    RUN(call_begin_should_reject_bad_types_and_ops);
    RUN(tags_should_read_zero_and_refuse_bad_ids);
    RUN(segmented_exchange_should_check_its_segments);
    RUN(empty_should_end_a_call_of_count_0_with_success);
    RUN(emitted_table_should_list_each_gpu_collective_with_its_function);
    RUN(emitted_collectives_should_check_types_and_ops_before_the_gpu);
    int rc = check_exit();
    MPI_Finalize();
    return rc;
}
