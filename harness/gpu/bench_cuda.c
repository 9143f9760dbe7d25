/* bench_cuda.c - the harness's GPU benchmark program: `build/cuda/bench_cuda
 * JOBFILE`, started under mpirun, one launch per job (harness/gpu/README.md,
 * harness/FORMATS.md). The GPU twin of build/<lib>/bench: the same job
 * file, the same records (with "backend": "cuda"), the same stopping rule;
 * device buffers, CUDA-event timing, NCCL as the native library
 * ("native:default", "native:<algorithm>" forced by the job's knobs, such as
 * NCCL_ALGO and NCCL_PROTO) and the generated GPU collectives
 * (emitted/cuda/, "generated:<schedule>") over the CUDA runtime's transport.
 *
 * Before anything touches NCCL: the job's knobs.env variables that the
 * environment lacks are set (the runner sets them already; a job file
 * started by hand then behaves the same), and rank 0 sends NCCL's debug
 * output, with the TUNING subsystem, to <campaign>/nccl-debug-<run id>.log,
 * whose lines say which algorithm and protocol NCCL ran (nccl_debug.c).
 *
 * Exit status: 0 every point was recorded, whatever its status; 2 usage or
 * a job file that does not parse; 3 started as the wrong number of ranks,
 * or MPI_COMM_WORLD could not be duplicated; 4 the outputs could not be
 * written; 5 no GPU on some rank: every point is recorded as "skipped" with
 * the reason ("no GPU (cudaGetDeviceCount: ...)") and the run metadata is
 * written; 6 there is a GPU but setting it up failed (device, stream or
 * events): every point is recorded as "error" with the reason.
 *
 * Test hook: CG_BENCH_CORRUPT=<schedule>, as bench's: after that generated
 * schedule's check call, the last rank's copy of its result has one byte
 * flipped, so that the check is seen to catch it (failed_check).
 */
#define _POSIX_C_SOURCE 200809L
#include "bench_cuda.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Sets the job's knobs.env variables that the environment lacks, before
 * NCCL reads them (it does when its first communicator is made). */
static void apply_knobs(struct bc_ctx *c)
{
    const cJSON *env = (c->base.job->knobs != NULL)
                           ? cJSON_GetObjectItemCaseSensitive(c->base.job->knobs, "env")
                           : NULL;
    size_t used = 0;

    c->knobs_applied[0] = '\0';
    if (!cJSON_IsObject(env)) {
        return;
    }
    for (const cJSON *e = env->child; e != NULL; e = e->next) {
        if (!cJSON_IsString(e) || getenv(e->string) != NULL) {
            continue;
        }
        setenv(e->string, e->valuestring, 1);
        bench_fmt(c->knobs_applied + used, sizeof(c->knobs_applied) - used, "%s%s=%s",
                  (used > 0) ? " " : "", e->string, e->valuestring);
        used = strlen(c->knobs_applied);
    }
}

/* Collective: the GPU of each rank (local rank % devices), a stream and two
 * timing events. 0, BC_EXIT_NO_GPU or BC_EXIT_GPU_SETUP, with c->gpu_why. */
static int gpu_setup(struct bc_ctx *c)
{
    char local[BENCH_REASON_LEN] = "";
    const char *why = NULL;
    int bad = 0;
    int n = cg_cu_gpu_count(&why);
    int rc;

    c->gpu_count = n;
    c->gpu_ok = 0;
    if (n < 1) {
        bench_fmt(local, sizeof(local), "no GPU on rank %d (%s)", c->base.rank,
                  (why != NULL) ? why : "?");
    }
    if (bc_agree(c, n < 1, local, c->gpu_why)) {
        return BC_EXIT_NO_GPU;
    }
    cg_set_error("%s", "");
    rc = cg_cu_select_device(c->base.sync_comm, &c->device);
    if (rc != MPI_SUCCESS) {
        bench_fmt(local, sizeof(local), "%s", cg_last_error());
        bad = 1;
    } else {
        cudaError_t e = cudaStreamCreateWithFlags(&c->stream, cudaStreamNonBlocking);
        const char *what = "cudaStreamCreateWithFlags";
        if (e == cudaSuccess) {
            what = "cudaEventCreate";
            e = cudaEventCreate(&c->ev_begin);
        }
        if (e == cudaSuccess) {
            e = cudaEventCreate(&c->ev_end);
        }
        if (e != cudaSuccess) {
            (void)cudaGetLastError();
            bench_fmt(local, sizeof(local), "rank %d: harness/gpu/bench_cuda.c: %s: %s",
                      c->base.rank, what, cudaGetErrorString(e));
            bad = 1;
        }
    }
    if (bc_agree(c, bad, local, c->gpu_why)) {
        return BC_EXIT_GPU_SETUP;
    }
    c->gpu_ok = 1;
    return 0;
}

/* Rank 0: one line per point on stdout, for people and harness/device_check.sh. */
static void say_point(const struct bc_ctx *c, const struct bench_point *pt,
                      const struct bc_run *run)
{
    char eff[160] = "";

    if (pt->kind == BENCH_NATIVE && run->ran) {
        bc_nccl_effective(&run->tuning, pt->name, eff, sizeof(eff));
    }
    if (run->stop != NULL && run->n > 0) {
        uint64_t *scratch = malloc((size_t)run->n * sizeof(uint64_t));
        double med = (scratch != NULL) ? bench_median_u64(run->times, run->n, scratch) : 0.0;
        free(scratch);
        printf("POINT %s %s median_us=%.3f busbw_GBps=%.3f n=%ld stop=%s transport=%s%s%s\n",
               run->status, pt->id, med / 1e3, bc_busbw_GBps(c->base.p, pt, med), run->n,
               run->stop, (run->transport != NULL) ? run->transport : "-",
               (pt->kind == BENCH_NATIVE) ? " nccl_ran=" : "",
               (pt->kind == BENCH_NATIVE) ? ((eff[0] != '\0') ? eff : "unobservable") : "");
    } else {
        printf("POINT %s %s: %s\n", run->status, pt->id, run->reason);
    }
    fflush(stdout);
}

static const char bench_cuda_usage[] =
    "usage: bench_cuda JOBFILE\n"
    "\n"
    "Runs the points of one launch's job file (written by 'collgen run',\n"
    "harness/FORMATS.md, harness/gpu/README.md) on GPUs, one rank per GPU, and\n"
    "appends their records to the campaign's points.jsonl and raw/.\n"
    "Exit status: 0 every point recorded; 2 usage or a job file that does not\n"
    "parse; 3 the wrong number of ranks; 4 the outputs could not be written;\n"
    "5 no GPU on some rank; 6 setting up the GPU failed.\n";

int main(int argc, char **argv)
{
    struct bench_job job;
    struct bc_ctx c;
    struct cg_topo topo;
    char msg[1024];
    int world_rank = 0;
    int world_size = 0;
    int status = 0;
    int gpu_status;

    status = bench_start(&argc, &argv, "bench_cuda", bench_cuda_usage, &job, &world_rank,
                         &world_size);
    if (status >= 0) {
        return status;
    }
    status = 0;

    memset(&c, 0, sizeof(c));
    memset(&topo, 0, sizeof(topo));
    c.base.job = &job;
    c.base.rank = world_rank;
    c.base.p = world_size;
    c.base.ranks_per_node = 1;
    c.base.corrupt = getenv("CG_BENCH_CORRUPT");
    if (c.base.corrupt != NULL && c.base.corrupt[0] == '\0') {
        c.base.corrupt = NULL;
    }
    c.transport = -1;
    {
        /* bench's two duplicates: the calls under test on one, the
         * harness's own messages on the other. */
        int rc = MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        if (rc == MPI_SUCCESS) {
            rc = MPI_Comm_dup(MPI_COMM_WORLD, &c.base.comm);
        }
        if (rc == MPI_SUCCESS) {
            rc = MPI_Comm_dup(MPI_COMM_WORLD, &c.base.sync_comm);
        }
        if (rc == MPI_SUCCESS) {
            rc = MPI_Comm_set_errhandler(c.base.comm, MPI_ERRORS_RETURN);
        }
        if (rc == MPI_SUCCESS) {
            rc = MPI_Comm_set_errhandler(c.base.sync_comm, MPI_ERRORS_RETURN);
        }
        if (rc != MPI_SUCCESS) {
            if (world_rank == 0) {
                fprintf(stderr, "bench_cuda: could not duplicate MPI_COMM_WORLD (error %d)\n", rc);
            }
            bench_job_free(&job);
            MPI_Finalize();
            return BC_EXIT_LAUNCH;
        }
    }

    apply_knobs(&c);
    /* The generated code is built with tags; they are on only in the
     * tagged repetitions (gpu_point.c, tag_point). */
    cg_cu_tag_enable(0);
    bc_nccl_debug_setup(&c);
    gpu_status = gpu_setup(&c);
    {
        /* The node structure as the generated topology schedules see it
         * (runtime/topo.c, the function the CUDA runtime calls on the same
         * communicator), for the records' effective ranks_per_node,
         * node_shape and regular. MPI only: also without a GPU. */
        char local[BENCH_REASON_LEN] = "";
        int trc = cg_topo_detect(c.base.comm, world_rank, world_size, &topo);
        if (trc != MPI_SUCCESS) {
            bench_fmt(local, sizeof(local), "rank %d: cg_topo_detect: %s", world_rank,
                      (cg_last_error()[0] != '\0') ? cg_last_error() : "failed");
        }
        if (!bc_agree(&c, trc != MPI_SUCCESS, local, c.base.topo_error)) {
            c.base.topo = &topo;
        }
    }

    {
        int ok = (bc_write_run_meta(&c, msg, sizeof(msg)) == 0);
        if (ok && c.base.rank == 0 && bench_mkdirs(job.out_raw_dir) != 0) {
            bench_fmt(msg, sizeof(msg), "%s: %s", job.out_raw_dir, strerror(errno));
            ok = 0;
        }
        if (hx_bcast(&c.base, &ok, (int)sizeof(ok), 0) != MPI_SUCCESS) {
            ok = 0;
        }
        if (!ok) {
            if (c.base.rank == 0) {
                fprintf(stderr, "bench_cuda: %s\n", msg);
            }
            status = BC_EXIT_OUTPUT;
        }
    }

    if (status == 0 && gpu_status != 0) {
        /* Every point gets its record, with the reason, rather than none. */
        if (c.base.rank == 0) {
            const char *st = (gpu_status == BC_EXIT_NO_GPU) ? "skipped" : "error";
            fprintf(stderr, "bench_cuda: %s: every point of %s is recorded as %s\n", c.gpu_why,
                    job.path, st);
            for (int i = 0; i < job.npoints && status == 0; i++) {
                struct bc_run run;
                memset(&run, 0, sizeof(run));
                run.status = st;
                bench_fmt(run.reason, sizeof(run.reason), "%s", c.gpu_why);
                if (bc_write_record(&c, &job.points[i], &run, msg, sizeof(msg)) != 0) {
                    fprintf(stderr, "bench_cuda: %s\n", msg);
                    status = BC_EXIT_OUTPUT;
                }
                say_point(&c, &job.points[i], &run);
            }
        }
        if (hx_bcast(&c.base, &status, (int)sizeof(status), 0) != MPI_SUCCESS) {
            status = BC_EXIT_OUTPUT;
        }
        if (status == 0) {
            status = gpu_status;
        }
    } else {
        for (int i = 0; i < job.npoints && status == 0; i++) {
            struct bc_run run;
            int ok = 1;
            memset(&run, 0, sizeof(run));
            bc_run_point(&c, &job.points[i], &run);
            if (c.base.rank == 0) {
                if (bc_write_record(&c, &job.points[i], &run, msg, sizeof(msg)) != 0) {
                    fprintf(stderr, "bench_cuda: %s\n", msg);
                    ok = 0;
                }
                say_point(&c, &job.points[i], &run);
            }
            bc_free_run(&run);
            /* Also keeps the ranks in step: none starts the next point's
             * check while rank 0 still writes. */
            if (hx_bcast(&c.base, &ok, (int)sizeof(ok), 0) != MPI_SUCCESS || !ok) {
                status = BC_EXIT_OUTPUT;
            }
        }
    }

    if (c.gpu_ok) {
        (void)cudaStreamSynchronize(c.stream);
    }
#ifndef CG_CUDA_NO_NCCL
    if (c.nccl != NULL) {
        (void)ncclCommDestroy(c.nccl);
    }
#endif
    /* Frees the CUDA runtime's context cached on it (collective), before the
     * stream it last used goes. */
    cg_topo_free(&topo);
    MPI_Comm_free(&c.base.comm);
    MPI_Comm_free(&c.base.sync_comm);
    if (c.pool_send != NULL) {
        (void)cudaFree(c.pool_send);
    }
    if (c.pool_out != NULL) {
        (void)cudaFree(c.pool_out);
    }
    if (c.gpu_ok) {
        (void)cudaEventDestroy(c.ev_begin);
        (void)cudaEventDestroy(c.ev_end);
        (void)cudaStreamDestroy(c.stream);
    }
    bench_job_free(&job);
    MPI_Finalize();
    return status;
}
