/* gpu_meta.c - run-<n>.json of a GPU launch: bench_meta.c's file (hosts,
 * CPU, memory, rank placement, environment including NCCL_ and CUDA_
 * variables, timing policy, knobs), then completed on rank 0 with
 *   "backend": "cuda", harness.program "bench_cuda", build.tags true;
 *   "gpus": per rank, the device, its PCI bus id, name, memory, compute
 *   capability and multiprocessors ([] and "gpu_error" without a GPU);
 *   "cuda": runtime and driver versions (and the runtime compiled against);
 *   "nccl": the library's version (ncclGetVersion), the header's, and the
 *   debug settings and file bench_cuda uses to see what NCCL ran;
 *   "timer": CUDA events (replacing bench's MPI_Wtime entry);
 *   "knobs_applied": knobs.env variables that were not in the environment
 *   and bench_cuda set itself before NCCL started.
 */
#define _POSIX_C_SOURCE 200809L
#include "bench_cuda.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct gpu_info {
    int ok;                  /* the fields below are known */
    int device;              /* CUDA device index */
    int count;               /* devices this rank sees */
    int major, minor;        /* compute capability */
    int sms;                 /* multiprocessors */
    unsigned long long mem;  /* bytes */
    char bus[32];            /* PCI bus id */
    char name[256];          /* device name */
};

static void version_text(char *out, size_t len, int v, int is_nccl)
{
    if (is_nccl) {
        /* NCCL_VERSION_CODE: major*10000 + minor*100 + patch since 2.9,
         * major*1000 + minor*100 + patch before. */
        if (v >= 10000) {
            snprintf(out, len, "%d.%d.%d", v / 10000, (v % 10000) / 100, v % 100);
        } else {
            snprintf(out, len, "%d.%d.%d", v / 1000, (v % 1000) / 100, v % 100);
        }
    } else {
        /* CUDA: 1000 * major + 10 * minor. */
        snprintf(out, len, "%d.%d", v / 1000, (v % 1000) / 10);
    }
}

static void local_gpu(const struct bc_ctx *c, struct gpu_info *g)
{
    struct cudaDeviceProp prop;

    memset(g, 0, sizeof(*g));
    g->device = c->device;
    g->count = c->gpu_count;
    if (!c->gpu_ok) {
        return;
    }
    if (cudaGetDeviceProperties(&prop, c->device) != cudaSuccess ||
        cudaDeviceGetAttribute(&g->major, cudaDevAttrComputeCapabilityMajor, c->device) !=
            cudaSuccess ||
        cudaDeviceGetAttribute(&g->minor, cudaDevAttrComputeCapabilityMinor, c->device) !=
            cudaSuccess ||
        cudaDeviceGetAttribute(&g->sms, cudaDevAttrMultiProcessorCount, c->device) !=
            cudaSuccess ||
        cudaDeviceGetPCIBusId(g->bus, (int)sizeof(g->bus), c->device) != cudaSuccess) {
        (void)cudaGetLastError();
        return;
    }
    bench_fmt(g->name, sizeof(g->name), "%s", prop.name);
    g->mem = (unsigned long long)prop.totalGlobalMem;
    g->ok = 1;
}

static void set(cJSON *obj, const char *key, cJSON *value)
{
    if (value == NULL) {
        return;
    }
    if (cJSON_HasObjectItem(obj, key)) {
        cJSON_ReplaceItemInObjectCaseSensitive(obj, key, value);
    } else {
        cJSON_AddItemToObject(obj, key, value);
    }
}

static cJSON *str_or_null(const char *s)
{
    return (s != NULL && s[0] != '\0') ? cg_json_string(s) : cJSON_CreateNull();
}

/* Rank 0: the GPU parts of the file. */
static int complete(const struct bc_ctx *c, const struct gpu_info *all, char *msg, size_t msglen)
{
    const char *path = c->base.job->out_run_meta;
    char *text = cg_slurp(path, NULL);
    cJSON *doc = (text != NULL) ? cJSON_Parse(text) : NULL;
    cJSON *o;
    char v[64];
    int iv = 0;
    char *pretty;
    int rc;

    free(text);
    if (doc == NULL) {
        bench_fmt(msg, msglen, "%s: cannot read back what bench_meta.c wrote", path);
        return -1;
    }
    set(doc, "backend", cg_json_string("cuda"));
    set(doc, "library", cg_json_string(c->base.job->library));
    o = cJSON_GetObjectItemCaseSensitive(doc, "mpi");
    if (cJSON_IsObject(o)) {
        /* bench_meta.c names the job's library here; under bench_cuda MPI
         * is only the bootstrap and the harness's own messages. */
        set(o, "library", cg_json_string("openmpi"));
        set(o, "role", cg_json_string("bootstrap (NCCL unique id, the CUDA runtime's IPC "
                                          "handles) and the harness's own messages; the calls "
                                          "under test are NCCL's and the generated GPU code's"));
    }
    o = cJSON_GetObjectItemCaseSensitive(doc, "harness");
    if (cJSON_IsObject(o)) {
        set(o, "program", cg_json_string("bench_cuda"));
    }
    o = cJSON_GetObjectItemCaseSensitive(doc, "build");
    if (cJSON_IsObject(o)) {
        set(o, "tags", cJSON_CreateTrue()); /* emitted/cuda/all.cu with CG_TAGS */
        version_text(v, sizeof(v), CUDART_VERSION, 0);
        set(o, "cuda_runtime_compiled", cg_json_string(v));
#ifdef CG_CUDA_NO_NCCL
        set(o, "nccl_header", cJSON_CreateNull());
#else
        version_text(v, sizeof(v), NCCL_VERSION_CODE, 1);
        set(o, "nccl_header", cg_json_string(v));
#endif
        set(o, "mpicxx", cg_json_string("mpicxx.openmpi (link), cudart static"));
    }

    o = cJSON_CreateArray();
    for (int r = 0; o != NULL && c->gpu_ok && r < c->base.p; r++) {
        cJSON *g = cJSON_CreateObject();
        if (g == NULL) {
            continue;
        }
        cJSON_AddItemToObject(g, "rank", cJSON_CreateNumber(r));
        cJSON_AddItemToObject(g, "device", cJSON_CreateNumber(all[r].device));
        cJSON_AddItemToObject(g, "devices_visible", cJSON_CreateNumber(all[r].count));
        if (all[r].ok) {
            char cc[16];
            snprintf(cc, sizeof(cc), "%d.%d", all[r].major, all[r].minor);
            cJSON_AddItemToObject(g, "pci_bus_id", cg_json_string(all[r].bus));
            cJSON_AddItemToObject(g, "name", cg_json_string(all[r].name));
            cJSON_AddItemToObject(g, "memory_B", cJSON_CreateNumber((double)all[r].mem));
            cJSON_AddItemToObject(g, "compute_capability", cg_json_string(cc));
            cJSON_AddItemToObject(g, "multiprocessors", cJSON_CreateNumber(all[r].sms));
        }
        cJSON_AddItemToArray(o, g);
    }
    set(doc, "gpus", o);
    set(doc, "gpu_error", str_or_null(c->gpu_ok ? NULL : c->gpu_why));

    o = cJSON_CreateObject();
    if (o != NULL) {
        if (cudaRuntimeGetVersion(&iv) == cudaSuccess) {
            version_text(v, sizeof(v), iv, 0);
            cJSON_AddItemToObject(o, "runtime_version", cg_json_string(v));
        } else {
            cJSON_AddItemToObject(o, "runtime_version", cJSON_CreateNull());
        }
        iv = 0;
        /* 0 when no driver is installed. */
        if (cudaDriverGetVersion(&iv) == cudaSuccess && iv > 0) {
            version_text(v, sizeof(v), iv, 0);
            cJSON_AddItemToObject(o, "driver_version", cg_json_string(v));
        } else {
            cJSON_AddItemToObject(o, "driver_version", cJSON_CreateNull());
        }
        (void)cudaGetLastError();
        set(doc, "cuda", o);
    }

    o = cJSON_CreateObject();
    if (o != NULL) {
#ifdef CG_CUDA_NO_NCCL
        cJSON_AddItemToObject(o, "version", cJSON_CreateNull());
        cJSON_AddItemToObject(o, "note", cg_json_string("built without NCCL"));
#else
        iv = 0;
        if (ncclGetVersion(&iv) == ncclSuccess) {
            version_text(v, sizeof(v), iv, 1);
            cJSON_AddItemToObject(o, "version", cg_json_string(v));
        } else {
            cJSON_AddItemToObject(o, "version", cJSON_CreateNull());
        }
        version_text(v, sizeof(v), NCCL_VERSION_CODE, 1);
        cJSON_AddItemToObject(o, "header_version", cg_json_string(v));
#endif
        cJSON_AddItemToObject(o, "debug_file", str_or_null(c->nccl_log));
        cJSON_AddItemToObject(o, "debug_settings", str_or_null(c->nccl_debug_note));
        set(doc, "nccl", o);
    }

    o = cJSON_CreateObject();
    if (o != NULL) {
        cJSON_AddItemToObject(o, "name", cg_json_string("cudaEventElapsedTime"));
        cJSON_AddItemToObject(o, "note",
                              cg_json_string("GPU time between two CUDA events recorded on "
                                                 "the call's stream around it, about 0.5 us "
                                                 "resolution; the slowest rank per repetition; "
                                                 "the time budget is MPI_Wtime on rank 0"));
        cJSON_AddItemToObject(o, "tick_s", cJSON_CreateNumber(5e-7));
        set(doc, "timer", o);
    }
    set(doc, "knobs_applied", str_or_null(c->knobs_applied));

    pretty = cJSON_Print(doc);
    cJSON_Delete(doc);
    if (pretty == NULL) {
        bench_fmt(msg, msglen, "%s: out of memory", path);
        return -1;
    }
    {
        size_t len = strlen(pretty);
        char *out = malloc(len + 2);
        if (out == NULL) {
            cJSON_free(pretty);
            bench_fmt(msg, msglen, "%s: out of memory", path);
            return -1;
        }
        memcpy(out, pretty, len);
        out[len] = '\n';
        rc = cg_write_atomic(path, out, len + 1);
        if (rc != 0) {
            bench_fmt(msg, msglen, "%s: %s", path, strerror(errno));
        }
        free(out);
    }
    cJSON_free(pretty);
    return rc;
}

int bc_write_run_meta(struct bc_ctx *c, char *msg, size_t msglen)
{
    struct gpu_info mine;
    struct gpu_info *all = NULL;
    int ok;
    int grc;

    ok = (bench_write_run_meta(&c->base, msg, msglen) == 0);
    local_gpu(c, &mine);
    if (c->base.rank == 0) {
        all = calloc((size_t)c->base.p, sizeof(*all));
    }
    /* Collective whatever rank 0 found: the others are in it already. */
    grc = hx_gather(&c->base, &mine, (int)sizeof(mine), all);
    if (c->base.rank != 0) {
        return 0;
    }
    if (ok && (all == NULL || grc != MPI_SUCCESS)) {
        bench_fmt(msg, msglen, "could not gather the ranks' GPUs");
        ok = 0;
    }
    if (ok && complete(c, all, msg, msglen) != 0) {
        ok = 0;
    }
    free(all);
    return ok ? 0 : -1;
}
