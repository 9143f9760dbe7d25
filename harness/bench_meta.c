/* bench_meta.c - run-<n>.json (FORMATS.md, "Run metadata"): what is needed
 * to know where and how the numbers of this launch were made.
 */
#define _GNU_SOURCE /* sched_getcpu, CPU_COUNT */
#include "bench.h"

#include <dirent.h>
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifndef CG_FLAVOUR
#define CG_FLAVOUR "unknown"
#endif
#ifndef CG_GIT_COMMIT
#define CG_GIT_COMMIT "unknown"
#endif

#if defined(__clang__)
#define COMPILER_NAME "" /* clang's __VERSION__ names it */
#elif defined(__GNUC__)
#define COMPILER_NAME "gcc "
#else
#define COMPILER_NAME ""
#endif

extern char **environ;

/* Environment variables recorded, by prefix (FORMATS.md). */
static const char *const env_prefixes[] = {"OMPI_",  "MPICH_", "MPIR_CVAR_", "UCX_",
                                           "FI_",    "NCCL_",  "CUDA_",      "SLURM_",
                                           "CG_PPN", "CG_PARAM_", NULL};

struct placement {
    int local_rank;       /* rank in the node's shared-memory communicator */
    int local_size;       /* ranks on this node */
    int core;             /* sched_getcpu() at start, -1 if unknown */
    int affinity_cpus;    /* CPUs this rank may run on */
};

/* First value of "key<spaces>: value" in a /proc file, trimmed. */
static int proc_field(const char *file, const char *key, char *out, size_t outlen)
{
    FILE *f = fopen(file, "r");
    char line[1024];
    size_t klen = strlen(key);

    if (f == NULL) {
        return -1;
    }
    while (fgets(line, sizeof(line), f) != NULL) {
        char *v;
        size_t n;
        if (strncmp(line, key, klen) != 0 || (line[klen] != ' ' && line[klen] != '\t' &&
                                               line[klen] != ':')) {
            continue;
        }
        v = strchr(line, ':');
        if (v == NULL) {
            continue;
        }
        v++;
        while (*v == ' ' || *v == '\t') {
            v++;
        }
        n = strcspn(v, "\n");
        v[n] = '\0';
        snprintf(out, outlen, "%s", v);
        fclose(f);
        return 0;
    }
    fclose(f);
    return -1;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void write_env(struct jw *w)
{
    size_t n = 0;
    size_t k = 0;
    const char **vars;

    for (char **e = environ; *e != NULL; e++) {
        n++;
    }
    vars = malloc((n + 1) * sizeof(*vars));
    jw_obj(w);
    if (vars == NULL) {
        jw_obj_end(w);
        return;
    }
    for (char **e = environ; *e != NULL; e++) {
        for (const char *const *pre = env_prefixes; *pre != NULL; pre++) {
            if (strncmp(*e, *pre, strlen(*pre)) == 0) {
                vars[k++] = *e;
                break;
            }
        }
    }
    qsort(vars, k, sizeof(*vars), cmp_str);
    for (size_t i = 0; i < k; i++) {
        const char *eq = strchr(vars[i], '=');
        char name[256];
        if (eq == NULL || (size_t)(eq - vars[i]) >= sizeof(name)) {
            continue;
        }
        memcpy(name, vars[i], (size_t)(eq - vars[i]));
        name[eq - vars[i]] = '\0';
        jw_key(w, name);
        jw_str(w, eq + 1);
    }
    jw_obj_end(w);
    free(vars);
}

static void write_nics(struct jw *w)
{
    DIR *d = opendir("/sys/class/net");
    struct dirent *e;
    char *names[64];
    size_t n = 0;

    if (d == NULL) {
        jw_null(w);
        return;
    }
    while ((e = readdir(d)) != NULL && n < 64) {
        if (e->d_name[0] == '.' || strcmp(e->d_name, "lo") == 0) {
            continue;
        }
        names[n] = strdup(e->d_name);
        if (names[n] != NULL) {
            n++;
        }
    }
    closedir(d);
    qsort(names, n, sizeof(names[0]), cmp_str);
    jw_arr(w);
    for (size_t i = 0; i < n; i++) {
        jw_str(w, names[i]);
        free(names[i]);
    }
    jw_arr_end(w);
}

static const char *sync_name(enum bench_sync s)
{
    return (s == BENCH_SYNC_DISSEMINATION) ? "dissemination" : "barrier";
}

int bench_write_run_meta(struct bench_ctx *ctx, char *msg, size_t msglen)
{
    const struct bench_job *job = ctx->job;
    char host[MPI_MAX_PROCESSOR_NAME + 1];
    char *hosts = NULL;
    struct placement me;
    int *places = NULL;
    MPI_Comm node;
    int len = 0;
    int rc;
    int failed = 0;
    cpu_set_t set;

    memset(host, 0, sizeof(host));
    memset(&me, 0, sizeof(me));
    msg[0] = '\0';
    if (MPI_Get_processor_name(host, &len) != MPI_SUCCESS) {
        snprintf(host, sizeof(host), "unknown");
    }
    rc = MPI_Comm_split_type(ctx->sync_comm, MPI_COMM_TYPE_SHARED, ctx->rank, MPI_INFO_NULL, &node);
    if (rc == MPI_SUCCESS) {
        MPI_Comm_rank(node, &me.local_rank);
        MPI_Comm_size(node, &me.local_size);
        MPI_Comm_free(&node);
    } else {
        me.local_rank = -1;
        me.local_size = 1;
    }
    me.core = sched_getcpu();
    me.affinity_cpus = (sched_getaffinity(0, sizeof(set), &set) == 0) ? CPU_COUNT(&set) : -1;
    ctx->ranks_per_node = me.local_size;
    rc = hx_allreduce(ctx, &ctx->ranks_per_node, 1, HX_INT, HX_MAX);
    if (rc != MPI_SUCCESS) {
        ctx->ranks_per_node = me.local_size;
    }

    if (ctx->rank == 0) {
        hosts = calloc((size_t)ctx->p, sizeof(host));
        places = calloc((size_t)ctx->p, sizeof(me));
        failed = (hosts == NULL || places == NULL);
    }
    /* Why gather even when rank 0 is short of memory: the others are
     * already in the collective; rank 0 then gathers into nothing useful
     * and says so. */
    rc = hx_gather(ctx, host, (int)sizeof(host), failed ? NULL : hosts);
    if (rc == MPI_SUCCESS) {
        rc = hx_gather(ctx, &me, (int)sizeof(me), failed ? NULL : places);
    }
    if (ctx->rank != 0) {
        return 0;
    }
    if (failed || rc != MPI_SUCCESS) {
        snprintf(msg, msglen, "could not gather rank placement");
        free(hosts);
        free(places);
        return -1;
    }

    {
        struct jw w;
        char version[MPI_MAX_LIBRARY_VERSION_STRING + 1];
        char cpu[512];
        char mem[128];
        int vlen = 0;
        int major = 0;
        int minor = 0;
        int *is_global = NULL;
        int flag = 0;
        time_t now = time(NULL);
        struct tm tm;
        char stamp[64];
        char *pretty;
        cJSON *parsed;
        int wrc;
        int saved_errno;

        memset(version, 0, sizeof(version));
        if (MPI_Get_library_version(version, &vlen) != MPI_SUCCESS) {
            snprintf(version, sizeof(version), "unknown");
        }
        MPI_Get_version(&major, &minor);
        if (MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_WTIME_IS_GLOBAL, &is_global, &flag) !=
            MPI_SUCCESS) {
            flag = 0;
        }
        gmtime_r(&now, &tm);
        strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%SZ", &tm);

        jw_init(&w);
        jw_obj(&w);
        jw_key(&w, "schema_version");
        jw_int(&w, 1);
        jw_key(&w, "run_id");
        jw_int(&w, job->run_id);
        jw_key(&w, "campaign");
        jw_str(&w, job->campaign);
        jw_key(&w, "job_file");
        jw_str(&w, job->path);
        jw_key(&w, "started_utc");
        jw_str(&w, stamp);
        jw_key(&w, "harness");
        jw_obj(&w);
        jw_key(&w, "program");
        jw_str(&w, "bench");
        jw_key(&w, "git_commit");
        jw_str(&w, CG_GIT_COMMIT);
        jw_obj_end(&w);
        jw_key(&w, "build");
        jw_obj(&w);
        jw_key(&w, "tags");
        jw_bool(&w, 1);
        jw_key(&w, "compiler");
        jw_str(&w, COMPILER_NAME __VERSION__);
        jw_key(&w, "mpicc");
        jw_str(&w, "mpicc." CG_FLAVOUR);
        jw_obj_end(&w);
        jw_key(&w, "mpi");
        jw_obj(&w);
        jw_key(&w, "library");
        jw_str(&w, job->library);
        jw_key(&w, "library_version");
        jw_str(&w, version);
        jw_key(&w, "standard");
        {
            char std[32];
            snprintf(std, sizeof(std), "%d.%d", major, minor);
            jw_str(&w, std);
        }
        jw_obj_end(&w);
        jw_key(&w, "ranks");
        jw_int(&w, ctx->p);
        jw_key(&w, "ranks_per_node");
        jw_int(&w, ctx->ranks_per_node);
        jw_key(&w, "hosts");
        jw_arr(&w);
        for (int r = 0; r < ctx->p; r++) {
            const char *h = hosts + ((size_t)r * sizeof(host));
            int seen = 0;
            for (int q = 0; q < r && !seen; q++) {
                seen = strcmp(h, hosts + ((size_t)q * sizeof(host))) == 0;
            }
            if (!seen) {
                jw_str(&w, h);
            }
        }
        jw_arr_end(&w);
        jw_key(&w, "cpu");
        jw_obj(&w);
        jw_key(&w, "model");
        if (proc_field("/proc/cpuinfo", "model name", cpu, sizeof(cpu)) == 0 ||
            proc_field("/proc/cpuinfo", "Model", cpu, sizeof(cpu)) == 0) {
            jw_str(&w, cpu);
        } else {
            jw_null(&w);
        }
        jw_key(&w, "online_cpus");
        jw_int(&w, sysconf(_SC_NPROCESSORS_ONLN));
        jw_obj_end(&w);
        jw_key(&w, "memory");
        jw_obj(&w);
        jw_key(&w, "total_B");
        if (proc_field("/proc/meminfo", "MemTotal", mem, sizeof(mem)) == 0) {
            jw_int(&w, strtoll(mem, NULL, 10) * 1024); /* /proc/meminfo says kB, meaning KiB */
        } else {
            jw_null(&w);
        }
        jw_obj_end(&w);
        jw_key(&w, "gpus");
        jw_null(&w); /* not probed by the MPI backend */
        jw_key(&w, "network_interfaces");
        write_nics(&w);
        jw_key(&w, "placement");
        jw_arr(&w);
        for (int r = 0; r < ctx->p; r++) {
            const struct placement *pl = (const struct placement *)places + r;
            jw_obj(&w);
            jw_key(&w, "rank");
            jw_int(&w, r);
            jw_key(&w, "host");
            jw_str(&w, hosts + ((size_t)r * sizeof(host)));
            jw_key(&w, "local_rank");
            jw_int(&w, pl->local_rank);
            jw_key(&w, "core");
            if (pl->core >= 0) {
                jw_int(&w, pl->core);
            } else {
                jw_null(&w);
            }
            jw_key(&w, "affinity_cpus");
            jw_int(&w, pl->affinity_cpus);
            jw_obj_end(&w);
        }
        jw_arr_end(&w);
        jw_key(&w, "placement_note");
        jw_str(&w, "core is sched_getcpu() at start; a rank whose affinity_cpus is more than 1 "
                   "is not bound and may move");
        jw_key(&w, "env");
        write_env(&w);
        jw_key(&w, "timer");
        jw_obj(&w);
        jw_key(&w, "name");
        jw_str(&w, "MPI_Wtime");
        jw_key(&w, "tick_s");
        jw_num(&w, MPI_Wtick());
        jw_key(&w, "is_global");
        if (flag && is_global != NULL) {
            jw_bool(&w, *is_global);
        } else {
            jw_null(&w);
        }
        jw_obj_end(&w);
        jw_key(&w, "sync");
        jw_str(&w, sync_name(job->timing.sync));
        jw_key(&w, "timing");
        jw_obj(&w);
        jw_key(&w, "warmup");
        jw_int(&w, job->timing.warmup);
        jw_key(&w, "min_reps");
        jw_int(&w, job->timing.min_reps);
        jw_key(&w, "max_reps");
        jw_int(&w, job->timing.max_reps);
        jw_key(&w, "rse_target");
        jw_num(&w, job->timing.rse_target);
        jw_key(&w, "budget_s");
        jw_num(&w, job->timing.budget_s);
        jw_obj_end(&w);
        jw_key(&w, "verbosity");
        jw_str(&w, job->verbosity_full ? "full" : "minimal");
        jw_key(&w, "knobs");
        jw_json(&w, job->knobs);
        jw_obj_end(&w);
        free(hosts);
        free(places);
        if (w.oom) {
            jw_free(&w);
            snprintf(msg, msglen, "out of memory writing run metadata");
            return -1;
        }
        /* Indented for people: the records are one line each, this file is
         * read by eye. */
        parsed = cJSON_Parse(w.buf);
        pretty = (parsed != NULL) ? cJSON_Print(parsed) : NULL;
        cJSON_Delete(parsed);
        if (pretty != NULL) {
            size_t plen = strlen(pretty);
            char *text = malloc(plen + 2);
            if (text != NULL) {
                memcpy(text, pretty, plen);
                text[plen] = '\n';
                wrc = bench_write_atomic(job->out_run_meta, text, plen + 1);
                saved_errno = errno;
                free(text);
                errno = saved_errno;
            } else {
                wrc = bench_write_atomic(job->out_run_meta, w.buf, w.len);
            }
            saved_errno = errno;
            cJSON_free(pretty);
            errno = saved_errno;
        } else {
            wrc = bench_write_atomic(job->out_run_meta, w.buf, w.len);
        }
        saved_errno = errno;
        jw_free(&w);
        if (wrc != 0) {
            snprintf(msg, msglen, "%s: %s", job->out_run_meta, strerror(saved_errno));
            return -1;
        }
    }
    return 0;
}
