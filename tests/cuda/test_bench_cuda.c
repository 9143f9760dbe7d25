/* tests/cuda/test_bench_cuda.c - the parts of build/cuda/bench_cuda that need
 * no GPU (harness/gpu/README.md), so that they are checked on every machine:
 *
 *   - the NCCL debug parser (nccl_debug.c) on a log written the way NCCL
 *     2.19+ writes its TUNING lines (and older NCCL's numeric form), with
 *     warnings, other functions, an offset, a 1-rank communicator, alltoall
 *     and a missing file; and the effective algorithm at the request's
 *     granularity;
 *   - the ranged parameters of a generated point (bench_params.c on the
 *     GPU table's params): set, read back, default, refusals;
 *   - with a job file (argv[1]): one record per point written by
 *     bc_write_record (gpu_record.c) from synthetic outcomes (ok native with
 *     NCCL's tuning lines, ok generated, failed_check, error, skipped), so
 *     that tests/run_cuda.sh can check them field by field and run
 *     `collgen report` on them: the records of a GPU run, without the GPU.
 *
 * Run from the repository root (schedule files are hashed by path):
 *   build/cuda/test_bench_cuda [JOBFILE]
 * Prints PASS / FAIL lines; exit status 0 when nothing failed.
 */
#define _POSIX_C_SOURCE 200809L
#include "bench_cuda.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int g_failed;

static void check(int ok, const char *name, const char *detail)
{
    printf("%s %s%s%s\n", ok ? "PASS" : "FAIL", name, (!ok && detail != NULL) ? ": " : "",
           (!ok && detail != NULL) ? detail : "");
    g_failed += !ok;
}

static const char *const g_log =
    "host:11:12 [0] NCCL INFO NCCL_ALGO set by environment to Ring\n"
    "host:11:12 [0] NCCL INFO AllReduce: 8192 Bytes -> Algo RING proto LL channel{Lo..Hi}={0..1}\n"
    "host:11:12 [0] NCCL INFO AllGather: 4096 Bytes -> Algo RING proto SIMPLE channel{Lo..Hi}={0..3}\n"
    "host:11:12 [0] NCCL INFO AllReduce: 8192 Bytes -> Algo RING proto LL channel{Lo..Hi}={0..1}\n"
    "host:11:12 [0] NCCL WARN Cuda failure 'out of memory' (a warning the job's log must keep)\n"
    "host:11:12 [0] NCCL INFO AllReduce: 8192 Bytes -> Algo 0 proto 2 time 12.500000\n";

static void parser_should_read_nccl_tuning_lines(const char *dir)
{
    char path[512];
    char eff[160];
    struct bc_nccl_tuning t;
    FILE *f;
    long second;

    snprintf(path, sizeof(path), "%s/nccl-debug-test.log", dir);
    f = fopen(path, "w");
    if (f == NULL) {
        check(0, "nccl_debug_parser_reads_tuning_lines", "cannot write the log");
        return;
    }
    fputs(g_log, f);
    fclose(f);
    /* The offset of the third line, as if a point started there. */
    second = (long)(strchr(strchr(strchr(g_log, '\n') + 1, '\n') + 1, '\n') + 1 - g_log);

    fprintf(stderr, "# the next line is the parser copying NCCL's warning to stderr:\n");
    bc_nccl_debug_parse(path, 0, "AllReduce", 4, &t);
    check(t.lines == 3 && t.nseen == 2 && t.warnings == 1 &&
              strcmp(t.seen[0].algorithm, "ring") == 0 && strcmp(t.seen[0].protocol, "ll") == 0 &&
              t.seen[0].calls == 2 && t.seen[0].bytes == 8192 &&
              strcmp(t.seen[0].channels, "0..1") == 0 &&
              strcmp(t.seen[1].algorithm, "tree") == 0 &&
              strcmp(t.seen[1].protocol, "simple") == 0 &&
              strncmp(t.first_line, "AllReduce: 8192 Bytes -> Algo RING", 34) == 0,
          "nccl_debug_parser_reads_named_and_numeric_tuning_lines", t.first_line);
    bc_nccl_effective(&t, "default", eff, sizeof(eff));
    check(strcmp(eff, "ring/ll,tree/simple") == 0, "nccl_effective_default_names_algorithm_and_protocol",
          eff);
    bc_nccl_effective(&t, "ring", eff, sizeof(eff));
    check(strcmp(eff, "ring,tree") == 0, "nccl_effective_of_an_algorithm_request_names_algorithms",
          eff);
    bc_nccl_effective(&t, "ring/ll", eff, sizeof(eff));
    check(strcmp(eff, "ring/ll,tree/simple") == 0, "nccl_effective_of_algorithm_protocol_request",
          eff);

    bc_nccl_debug_parse(path, second, "AllReduce", 4, &t);
    check(t.lines == 2 && t.nseen == 2 && t.seen[0].calls == 1,
          "nccl_debug_parser_starts_at_the_points_offset", NULL);
    bc_nccl_debug_parse(path, 0, "AllGather", 4, &t);
    bc_nccl_effective(&t, "default", eff, sizeof(eff));
    check(t.lines == 1 && strcmp(eff, "ring/simple") == 0,
          "nccl_debug_parser_keeps_to_the_points_collective", eff);

    bc_nccl_debug_parse(path, 0, "Broadcast", 1, &t);
    bc_nccl_effective(&t, "default", eff, sizeof(eff));
    check(t.nseen == 0 && eff[0] == '\0' && strstr(t.why_none, "1-rank communicator") != NULL,
          "nccl_debug_parser_explains_a_1_rank_communicator", t.why_none);
    bc_nccl_debug_parse(path, 0, "Broadcast", 4, &t);
    check(t.nseen == 0 && strstr(t.why_none, "no tuning line for Broadcast") != NULL,
          "nccl_debug_parser_says_when_nccl_said_nothing", t.why_none);
    bc_nccl_debug_parse(path, 0, NULL, 4, &t);
    check(t.nseen == 0 && strstr(t.why_none, "ncclSend/ncclRecv") != NULL,
          "nccl_debug_parser_explains_alltoall", t.why_none);
    bc_nccl_debug_parse("/nonexistent/nccl.log", 0, "AllReduce", 4, &t);
    check(t.nseen == 0 && strstr(t.why_none, "no debug file") != NULL,
          "nccl_debug_parser_explains_a_missing_file", t.why_none);
    unlink(path);
}

static const struct cg_cu_algo *find_algo(const char *name)
{
    for (int i = 0; i < cg_cu_nalgos; i++) {
        if (strcmp(cg_cu_algos[i]->name, name) == 0) {
            return cg_cu_algos[i];
        }
    }
    return NULL;
}

/* Ranged parameters of a generated GPU point, as bench_cuda sets them
 * (bench_params.c on the table's params): bcast_knomial's radix, verified
 * 2..8 with default 4 (schedules/bcast/knomial.json). */
static void gpu_points_should_set_their_parameters(void)
{
    const struct cg_cu_algo *a = find_algo("bcast_knomial");
    struct bench_point pt;
    struct bench_params_eff e;
    char why[BENCH_REASON_LEN] = "";
    char detail[256];

    if (a == NULL || a->nparams != 1 || strcmp(a->params[0].name, "radix") != 0 ||
        a->params[0].dflt != 4 || a->params[0].lo != 2 || a->params[0].hi != 8) {
        check(0, "gpu_table_has_the_ranged_parameters", "bcast_knomial: radix 4, 2..8 expected");
        return;
    }
    check(1, "gpu_table_has_the_ranged_parameters", NULL);
    memset(&pt, 0, sizeof(pt));
    pt.kind = BENCH_GENERATED;
    pt.name = "bcast_knomial(radix=8)";
    snprintf(pt.base, sizeof(pt.base), "bcast_knomial");
    pt.nparams = 1;
    snprintf(pt.params[0].name, sizeof(pt.params[0].name), "radix");
    pt.params[0].value = 8;
    int rc = bench_params_apply(a->name, a->params, a->nparams, &pt, &e, why, sizeof(why));
    snprintf(detail, sizeof(detail), "rc %d, %d values, radix %d ok %d: %s", rc, e.n,
             e.eff[0].value, e.ok[0], why);
    check(rc == 0 && e.n == 1 && e.ok[0] && e.eff[0].value == 8,
          "gpu_point_sets_radix_8_and_reads_it_back", detail);
    bench_params_clear(a->name, a->params, a->nparams);
    pt.nparams = 0;
    rc = bench_params_apply(a->name, a->params, a->nparams, &pt, &e, why, sizeof(why));
    check(rc == 0 && e.n == 1 && e.ok[0] && e.eff[0].value == 4,
          "gpu_point_without_a_value_reads_the_default", why);
    pt.nparams = 1;
    pt.params[0].value = 9;
    rc = bench_params_apply(a->name, a->params, a->nparams, &pt, &e, why, sizeof(why));
    check(rc != 0 && strstr(why, "radix=9 is outside the range bcast_knomial was verified for, "
                                 "2..8") != NULL,
          "gpu_point_refuses_a_value_outside_the_verified_range", why);
    snprintf(pt.params[0].name, sizeof(pt.params[0].name), "segments");
    pt.params[0].value = 2;
    rc = bench_params_apply(a->name, a->params, a->nparams, &pt, &e, why, sizeof(why));
    check(rc != 0 && strstr(why, "has no tunable parameter \"segments\"") != NULL,
          "gpu_point_refuses_an_unknown_parameter", why);
    bench_params_clear(a->name, a->params, a->nparams);
}

/* One synthetic outcome per point, by its position: 0 mod 5 ok, 1 ok, 2
 * failed_check, 3 error after running, 4 skipped. */
static void records_should_be_written_for_every_outcome(const char *jobfile, const char *dir)
{
    struct bench_job job;
    struct bc_ctx c;
    char msg[1024];
    int written = 0;

    if (bench_job_load(jobfile, &job, msg, sizeof(msg)) != 0) {
        check(0, "bench_cuda_job_file_loads", msg);
        return;
    }
    memset(&c, 0, sizeof(c));
    c.base.job = &job;
    c.base.rank = 0;
    c.base.p = job.ranks;
    c.base.ranks_per_node = job.ranks;
    c.transport = CG_CU_TRANSPORT_IPC;
    snprintf(c.nccl_log, sizeof(c.nccl_log), "%s/nccl-debug-%ld.log", dir, job.run_id);
    {
        /* The log without its warning, which each parse would copy to stderr. */
        FILE *f = fopen(c.nccl_log, "w");
        const char *warn = strstr(g_log, "host:11:12 [0] NCCL WARN");
        if (f != NULL) {
            fwrite(g_log, 1, (size_t)(warn - g_log), f);
            fputs(strchr(warn, '\n') + 1, f);
            fclose(f);
        }
    }
    if (bench_mkdirs(job.out_raw_dir) != 0) {
        check(0, "bench_cuda_records_raw_dir", job.out_raw_dir);
        bench_job_free(&job);
        return;
    }
    for (int i = 0; i < job.npoints; i++) {
        const struct bench_point *pt = &job.points[i];
        struct bc_run run;
        int k = i % 5;
        memset(&run, 0, sizeof(run));
        run.status = "ok";
        run.tolerance = (pt->dtype == BENCH_DOUBLE) ? 1e-12 : 0.0;
        if (pt->kind == BENCH_GENERATED) {
            char why[BENCH_REASON_LEN];
            /* As bench_cuda: by the schedule's name, with the point's params. */
            run.algo = find_algo(pt->base);
            if (run.algo != NULL &&
                bench_params_apply(run.algo->name, run.algo->params, run.algo->nparams, pt,
                                   &run.params, why, sizeof(why)) != 0) {
                check(0, "bench_cuda_record_params", why);
            }
            run.transport = "ipc";
        } else {
            run.transport = "nccl";
            bc_nccl_debug_parse(c.nccl_log, 0, bc_nccl_func_name(pt->coll), c.base.p,
                                &run.tuning);
        }
        if (k == 4) {
            run.status = "skipped";
            snprintf(run.reason, sizeof(run.reason), "no GPU on rank 0 (synthetic)");
        } else {
            run.ran = 1;
            if (k == 3) {
                run.status = "error";
                snprintf(run.reason, sizeof(run.reason), "rank 1: ncclAllReduce: synthetic");
            } else {
                run.checked = 1;
                if (k == 2) {
                    run.status = "failed_check";
                    run.wrong = 3;
                    run.ranks_wrong = 1;
                    run.max_error = 0.5;
                    snprintf(run.reason, sizeof(run.reason), "3 elements wrong (synthetic)");
                } else {
                    run.n = 25;
                    run.stop = "rse";
                    run.times = calloc((size_t)run.n, sizeof(uint64_t));
                    for (long r = 0; run.times != NULL && r < run.n; r++) {
                        run.times[r] = (uint64_t)(10000 + (100 * (i + 1)) + ((r * 37) % 50));
                    }
                    if (run.times == NULL) {
                        run.n = 0;
                    }
                    /* Generated: tag k of repetition r takes 1000 (k + 1) + r ns, so
                     * that its median over the 25 repetitions is 1000 (k + 1) + 12. */
                    if (run.algo != NULL && run.n > 0) {
                        run.ntags = run.algo->tag_count;
                        run.tag_n = run.n;
                        run.tag_times =
                            calloc((size_t)run.n * (size_t)run.ntags, sizeof(uint64_t));
                        for (long r = 0; run.tag_times != NULL && r < run.n; r++) {
                            for (int t = 0; t < run.ntags; t++) {
                                run.tag_times[((size_t)r * (size_t)run.ntags) + (size_t)t] =
                                    (uint64_t)((1000 * (t + 1)) + r);
                            }
                        }
                        if (run.tag_times == NULL) {
                            run.ntags = 0;
                        }
                    }
                }
            }
        }
        if (bc_write_record(&c, pt, &run, msg, sizeof(msg)) != 0) {
            check(0, "bench_cuda_record_written", msg);
        } else {
            written++;
        }
        bc_free_run(&run);
    }
    snprintf(msg, sizeof(msg), "%d of %d", written, job.npoints);
    check(written == job.npoints, "bench_cuda_records_written_for_every_point", msg);
    unlink(c.nccl_log);
    bench_job_free(&job);
}

int main(int argc, char **argv)
{
    const char *dir = "/tmp";

    if (argc > 2) {
        fprintf(stderr, "usage: test_bench_cuda [JOBFILE]\n");
        return 2;
    }
    if (argc == 2) {
        const char *slash = strrchr(argv[1], '/');
        static char d[512];
        if (slash != NULL) {
            snprintf(d, sizeof(d), "%.*s", (int)(slash - argv[1]), argv[1]);
            dir = d;
        } else {
            dir = ".";
        }
    }
    parser_should_read_nccl_tuning_lines(dir);
    gpu_points_should_set_their_parameters();
    if (argc == 2) {
        records_should_be_written_for_every_outcome(argv[1], dir);
    }
    return g_failed ? 1 : 0;
}
