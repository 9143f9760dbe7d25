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
                                           "CG_PPN", "CG_PARAM_", "CG_TUNE", "LD_PRELOAD",
                                           NULL};

struct placement {
    int local_rank;       /* rank in the node's shared-memory communicator */
    int local_size;       /* ranks on this node */
    int core;             /* sched_getcpu() at start, -1 if unknown */
    int affinity_cpus;    /* CPUs this rank may run on, -1 if unknown */
    int online_cpus;      /* sysconf(_SC_NPROCESSORS_ONLN) on its host */
    cpu_set_t allowed;    /* the CPUs it may run on (sched_getaffinity) */
    int64_t skew_raw0;    /* the clock hook's raw0 on this rank (bench_clock.c) */
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

/* Rank 0: per host, its ranks against the cores they may run on (the
 * union of their affinity masks, at most the host's online CPUs); sets
 * ctx->oversubscribed and the most crowded host (ranks / cores). */
static void find_crowding(struct bench_ctx *ctx, const char *hosts, size_t hlen,
                          const struct placement *pl)
{
    double worst = -1.0;

    ctx->oversubscribed = 0;
    for (int r = 0; r < ctx->p; r++) {
        const char *h = hosts + ((size_t)r * hlen);
        int seen = 0;
        int ranks = 0;
        int unknown = 0;
        int cores;
        cpu_set_t all;
        for (int q = 0; q < r && !seen; q++) {
            seen = strcmp(h, hosts + ((size_t)q * hlen)) == 0;
        }
        if (seen) {
            continue;
        }
        CPU_ZERO(&all);
        for (int q = r; q < ctx->p; q++) {
            if (strcmp(h, hosts + ((size_t)q * hlen)) == 0) {
                ranks++;
                unknown |= (pl[q].affinity_cpus < 0);
                CPU_OR(&all, &all, &pl[q].allowed);
            }
        }
        cores = CPU_COUNT(&all);
        if (unknown || (pl[r].online_cpus > 0 && pl[r].online_cpus < cores)) {
            cores = (pl[r].online_cpus > 0) ? pl[r].online_cpus : cores;
        }
        if (cores <= 0) {
            ctx->oversubscribed = -1;
            continue;
        }
        if (ranks > cores && ctx->oversubscribed >= 0) {
            ctx->oversubscribed = 1;
        }
        if ((double)ranks / (double)cores > worst) {
            worst = (double)ranks / (double)cores;
            ctx->host_ranks = ranks;
            ctx->host_cores = cores;
            snprintf(ctx->host_name, sizeof(ctx->host_name), "%s", h);
        }
    }
}

/* The global clock (bench_clock.c) and the latency floor, as measured at
 * the start of this launch. */
static void write_clock(struct jw *w, const struct bench_ctx *ctx, const struct placement *pl)
{
    const struct bench_clock *c = &ctx->clock;
    const struct bench_clock_params *cp = &ctx->job->timing.clock;

    jw_key(w, "clock");
    if (!c->synced) {
        jw_null(w);
    } else {
        jw_obj(w);
        jw_key(w, "method");
        jw_str(w, "hca");
        jw_key(w, "reference");
        jw_str(w, "rank 0's CLOCK_MONOTONIC");
        jw_key(w, "fitpoints");
        jw_int(w, cp->fitpoints);
        jw_key(w, "exchanges");
        jw_int(w, cp->exchanges);
        jw_key(w, "spacing_us");
        jw_num(w, cp->spacing_us);
        jw_key(w, "resync_s");
        jw_num(w, cp->resync_s);
        jw_key(w, "sync_s");
        jw_num(w, c->seconds);
        jw_key(w, "error_ns");
        jw_num(w, c->err_ns);
        jw_key(w, "check_rtt_ns");
        jw_num(w, c->rtt_ns);
        jw_key(w, "fit_rms_ns");
        jw_num(w, c->fit_rms_ns);
        jw_key(w, "drift_ranks");
        jw_int(w, c->drift_ranks);
        jw_key(w, "fitted_ranks");
        jw_int(w, c->fitted_ranks);
        jw_key(w, "note");
        jw_str(w, "ranks on rank 0's host read its CLOCK_MONOTONIC: identity models, neither "
                  "fitted nor checked; error_ns is the check of the fitted ones (0 when none)");
        jw_key(w, "epoch_ns");
        jw_int(w, c->epoch);
        jw_key(w, "ranks");
        jw_arr(w);
        for (int r = 0; r < ctx->p && c->rank_a != NULL && c->rank_b != NULL; r++) {
            jw_obj(w);
            jw_key(w, "rank");
            jw_int(w, r);
            jw_key(w, "offset_ns");
            jw_num(w, c->rank_a[r]);
            jw_key(w, "drift");
            jw_num(w, c->rank_b[r]);
            jw_obj_end(w);
        }
        jw_arr_end(w);
        jw_obj_end(w);
    }
    if (c->skewed) {
        /* Test hook: said, so that such numbers are never taken for real. */
        jw_key(w, "test_skew");
        jw_obj(w);
        jw_key(w, "rank");
        jw_int(w, c->skew_rank);
        jw_key(w, "offset_ns");
        jw_num(w, c->skew_offset_ns);
        jw_key(w, "drift");
        jw_num(w, c->skew_drift);
        jw_key(w, "raw0_ns");
        jw_int(w, (c->skew_rank < ctx->p) ? pl[c->skew_rank].skew_raw0 : 0);
        jw_obj_end(w);
    }
    jw_key(w, "latency");
    if (!ctx->lat.measured) {
        jw_null(w);
    } else {
        jw_obj(w);
        jw_key(w, "method");
        jw_str(w, "ping-pong of 0 bytes between rank 0 and each rank, 40 round trips after 4; "
                  "one-way = round trip / 2; floor_ns: the fastest one-way time of any pair");
        jw_key(w, "floor_ns");
        jw_num(w, ctx->lat.floor_ns);
        jw_key(w, "pairs");
        jw_arr(w);
        for (int r = 1; r < ctx->p; r++) {
            jw_obj(w);
            jw_key(w, "ranks");
            jw_arr(w);
            jw_int(w, 0);
            jw_int(w, r);
            jw_arr_end(w);
            jw_key(w, "median_ns");
            jw_num(w, ctx->lat.median_ns[r]);
            jw_key(w, "min_ns");
            jw_num(w, ctx->lat.min_ns[r]);
            jw_obj_end(w);
        }
        jw_arr_end(w);
        jw_obj_end(w);
    }
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
    CPU_ZERO(&set);
    me.affinity_cpus = (sched_getaffinity(0, sizeof(set), &set) == 0) ? CPU_COUNT(&set) : -1;
    me.allowed = set;
    me.online_cpus = (int)sysconf(_SC_NPROCESSORS_ONLN);
    me.skew_raw0 = ctx->clock.skew_raw0;
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
    /* Every rank learns whether the job is oversubscribed (the records
     * say so; the same value on every rank keeps any later use of it
     * collective-safe). */
    ctx->oversubscribed = -1;
    if (ctx->rank == 0 && !failed && rc == MPI_SUCCESS) {
        find_crowding(ctx, hosts, sizeof(host), (const struct placement *)places);
    }
    if (rc == MPI_SUCCESS) {
        rc = hx_bcast(ctx, &ctx->oversubscribed, (int)sizeof(int), 0);
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
        jw_str(&w, "CLOCK_MONOTONIC");
        jw_key(&w, "mpi_wtick_s");
        jw_num(&w, MPI_Wtick());
        jw_key(&w, "mpi_wtime_is_global");
        if (flag && is_global != NULL) {
            jw_bool(&w, *is_global);
        } else {
            jw_null(&w);
        }
        jw_obj_end(&w);
        jw_key(&w, "sync");
        jw_str(&w, bench_sync_name(job->timing.sync));
        write_clock(&w, ctx, (const struct placement *)places);
        jw_key(&w, "oversubscription");
        jw_obj(&w);
        jw_key(&w, "oversubscribed");
        if (ctx->oversubscribed >= 0) {
            jw_bool(&w, ctx->oversubscribed);
        } else {
            jw_null(&w);
        }
        jw_key(&w, "host");
        jw_str(&w, ctx->host_name[0] != '\0' ? ctx->host_name : NULL);
        jw_key(&w, "ranks");
        jw_int(&w, ctx->host_ranks);
        jw_key(&w, "cores");
        jw_int(&w, ctx->host_cores);
        jw_key(&w, "note");
        jw_str(&w, "per host: its ranks against the cores they may run on (the union of their "
                   "affinity masks, at most the host's online CPUs); the most crowded host");
        jw_obj_end(&w);
        jw_key(&w, "loadavg");
        {
            /* How busy the machine was when the launch began (a shared
             * machine's numbers are noisy; this says how much). */
            double la[3];
            FILE *f = fopen("/proc/loadavg", "r");
            if (f != NULL && fscanf(f, "%lf %lf %lf", &la[0], &la[1], &la[2]) == 3) {
                jw_arr(&w);
                for (int i = 0; i < 3; i++) {
                    jw_num(&w, la[i]);
                }
                jw_arr_end(&w);
            } else {
                jw_null(&w);
            }
            if (f != NULL) {
                fclose(f);
            }
        }
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
        jw_key(&w, "window_us");
        jw_num(&w, job->timing.window_us);
        jw_key(&w, "policy");
        jw_str(&w, (job->timing.policy == BENCH_POLICY_NREP) ? "nrep" : "rse");
        jw_obj_end(&w);
        jw_key(&w, "launch");
        jw_obj(&w);
        jw_key(&w, "index");
        jw_int(&w, job->launch);
        jw_key(&w, "of");
        jw_int(&w, job->launches);
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
