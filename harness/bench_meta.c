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

static void write_env(struct cg_jw *w)
{
    size_t n = 0;
    size_t k = 0;
    const char **vars;

    for (char **e = environ; *e != NULL; e++) {
        n++;
    }
    vars = malloc((n + 1) * sizeof(*vars));
    cg_jw_obj(w, NULL);
    if (vars == NULL) {
        cg_jw_end(w);
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
        cg_jw_str(w, name, eq + 1);
    }
    cg_jw_end(w);
    free(vars);
}

static void write_nics(struct cg_jw *w)
{
    DIR *d = opendir("/sys/class/net");
    struct dirent *e;
    char *names[64];
    size_t n = 0;

    if (d == NULL) {
        cg_jw_null(w, NULL);
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
    cg_jw_arr(w, NULL);
    for (size_t i = 0; i < n; i++) {
        cg_jw_str(w, NULL, names[i]);
        free(names[i]);
    }
    cg_jw_end(w);
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
static void write_clock(struct cg_jw *w, const struct bench_ctx *ctx, const struct placement *pl)
{
    const struct bench_clock *c = &ctx->clock;
    const struct bench_clock_params *cp = &ctx->job->timing.clock;

    cg_jw_key(w, "clock");
    if (!c->synced) {
        cg_jw_null(w, NULL);
    } else {
        cg_jw_obj(w, NULL);
        cg_jw_str(w, "method", "hca");
        cg_jw_str(w, "reference", "rank 0's CLOCK_MONOTONIC");
        cg_jw_int(w, "fitpoints", cp->fitpoints);
        cg_jw_int(w, "exchanges", cp->exchanges);
        cg_jw_num(w, "spacing_us", cp->spacing_us);
        cg_jw_num(w, "resync_s", cp->resync_s);
        cg_jw_num(w, "sync_s", c->seconds);
        cg_jw_num(w, "error_ns", c->err_ns);
        cg_jw_num(w, "check_rtt_ns", c->rtt_ns);
        cg_jw_num(w, "fit_rms_ns", c->fit_rms_ns);
        cg_jw_int(w, "drift_ranks", c->drift_ranks);
        cg_jw_int(w, "fitted_ranks", c->fitted_ranks);
        cg_jw_str(w, "note", "ranks on rank 0's host read its CLOCK_MONOTONIC: identity models, neither "
                  "fitted nor checked; error_ns is the check of the fitted ones (0 when none)");
        cg_jw_int(w, "epoch_ns", c->epoch);
        cg_jw_arr(w, "ranks");
        for (int r = 0; r < ctx->p && c->rank_a != NULL && c->rank_b != NULL; r++) {
            cg_jw_obj(w, NULL);
            cg_jw_int(w, "rank", r);
            cg_jw_num(w, "offset_ns", c->rank_a[r]);
            cg_jw_num(w, "drift", c->rank_b[r]);
            cg_jw_end(w);
        }
        cg_jw_end(w);
        cg_jw_end(w);
    }
    if (c->skewed) {
        /* Test hook: said, so that such numbers are never taken for real. */
        cg_jw_obj(w, "test_skew");
        cg_jw_int(w, "rank", c->skew_rank);
        cg_jw_num(w, "offset_ns", c->skew_offset_ns);
        cg_jw_num(w, "drift", c->skew_drift);
        cg_jw_int(w, "raw0_ns", (c->skew_rank < ctx->p) ? pl[c->skew_rank].skew_raw0 : 0);
        cg_jw_end(w);
    }
    cg_jw_key(w, "latency");
    if (!ctx->lat.measured) {
        cg_jw_null(w, NULL);
    } else {
        cg_jw_obj(w, NULL);
        cg_jw_str(w, "method", "ping-pong of 0 bytes between rank 0 and each rank, 40 round trips after 4; "
                  "one-way = round trip / 2; floor_ns: the fastest one-way time of any pair");
        cg_jw_num(w, "floor_ns", ctx->lat.floor_ns);
        cg_jw_arr(w, "pairs");
        for (int r = 1; r < ctx->p; r++) {
            cg_jw_obj(w, NULL);
            cg_jw_arr(w, "ranks");
            cg_jw_int(w, NULL, 0);
            cg_jw_int(w, NULL, r);
            cg_jw_end(w);
            cg_jw_num(w, "median_ns", ctx->lat.median_ns[r]);
            cg_jw_num(w, "min_ns", ctx->lat.min_ns[r]);
            cg_jw_end(w);
        }
        cg_jw_end(w);
        cg_jw_end(w);
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
        struct cg_jw w;
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
        char *text;
        size_t tlen = 0;
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

        cg_jw_init(&w);
        cg_jw_obj(&w, NULL);
        cg_jw_int(&w, "schema_version", 1);
        cg_jw_int(&w, "run_id", job->run_id);
        cg_jw_str(&w, "campaign", job->campaign);
        cg_jw_str(&w, "job_file", job->path);
        cg_jw_str(&w, "started_utc", stamp);
        cg_jw_obj(&w, "harness");
        cg_jw_str(&w, "program", "bench");
        cg_jw_str(&w, "git_commit", CG_GIT_COMMIT);
        cg_jw_end(&w);
        cg_jw_obj(&w, "build");
        cg_jw_bool(&w, "tags", 1);
        cg_jw_str(&w, "compiler", COMPILER_NAME __VERSION__);
        cg_jw_str(&w, "mpicc", "mpicc." CG_FLAVOUR);
        cg_jw_end(&w);
        cg_jw_obj(&w, "mpi");
        cg_jw_str(&w, "library", job->library);
        cg_jw_str(&w, "library_version", version);
        cg_jw_key(&w, "standard");
        {
            char std[32];
            snprintf(std, sizeof(std), "%d.%d", major, minor);
            cg_jw_str(&w, NULL, std);
        }
        cg_jw_end(&w);
        cg_jw_int(&w, "ranks", ctx->p);
        cg_jw_int(&w, "ranks_per_node", ctx->ranks_per_node);
        cg_jw_arr(&w, "hosts");
        for (int r = 0; r < ctx->p; r++) {
            const char *h = hosts + ((size_t)r * sizeof(host));
            int seen = 0;
            for (int q = 0; q < r && !seen; q++) {
                seen = strcmp(h, hosts + ((size_t)q * sizeof(host))) == 0;
            }
            if (!seen) {
                cg_jw_str(&w, NULL, h);
            }
        }
        cg_jw_end(&w);
        cg_jw_obj(&w, "cpu");
        cg_jw_key(&w, "model");
        if (proc_field("/proc/cpuinfo", "model name", cpu, sizeof(cpu)) == 0 ||
            proc_field("/proc/cpuinfo", "Model", cpu, sizeof(cpu)) == 0) {
            cg_jw_str(&w, NULL, cpu);
        } else {
            cg_jw_null(&w, NULL);
        }
        cg_jw_int(&w, "online_cpus", sysconf(_SC_NPROCESSORS_ONLN));
        cg_jw_end(&w);
        cg_jw_obj(&w, "memory");
        cg_jw_key(&w, "total_B");
        if (proc_field("/proc/meminfo", "MemTotal", mem, sizeof(mem)) == 0) {
            cg_jw_int(&w, NULL, strtoll(mem, NULL, 10) * 1024); /* /proc/meminfo says kB, meaning KiB */
        } else {
            cg_jw_null(&w, NULL);
        }
        cg_jw_end(&w);
        cg_jw_null(&w, "gpus"); /* not probed by the MPI backend */
        cg_jw_key(&w, "network_interfaces");
        write_nics(&w);
        cg_jw_arr(&w, "placement");
        for (int r = 0; r < ctx->p; r++) {
            const struct placement *pl = (const struct placement *)places + r;
            cg_jw_obj(&w, NULL);
            cg_jw_int(&w, "rank", r);
            cg_jw_str(&w, "host", hosts + ((size_t)r * sizeof(host)));
            cg_jw_int(&w, "local_rank", pl->local_rank);
            cg_jw_key(&w, "core");
            if (pl->core >= 0) {
                cg_jw_int(&w, NULL, pl->core);
            } else {
                cg_jw_null(&w, NULL);
            }
            cg_jw_int(&w, "affinity_cpus", pl->affinity_cpus);
            cg_jw_end(&w);
        }
        cg_jw_end(&w);
        cg_jw_str(&w, "placement_note", "core is sched_getcpu() at start; a rank whose affinity_cpus is more than 1 "
                   "is not bound and may move");
        cg_jw_key(&w, "env");
        write_env(&w);
        cg_jw_obj(&w, "timer");
        cg_jw_str(&w, "name", "CLOCK_MONOTONIC");
        cg_jw_num(&w, "mpi_wtick_s", MPI_Wtick());
        cg_jw_key(&w, "mpi_wtime_is_global");
        if (flag && is_global != NULL) {
            cg_jw_bool(&w, NULL, *is_global);
        } else {
            cg_jw_null(&w, NULL);
        }
        cg_jw_end(&w);
        cg_jw_str(&w, "sync", bench_sync_name(job->timing.sync));
        write_clock(&w, ctx, (const struct placement *)places);
        cg_jw_obj(&w, "oversubscription");
        cg_jw_key(&w, "oversubscribed");
        if (ctx->oversubscribed >= 0) {
            cg_jw_bool(&w, NULL, ctx->oversubscribed);
        } else {
            cg_jw_null(&w, NULL);
        }
        cg_jw_str(&w, "host", ctx->host_name[0] != '\0' ? ctx->host_name : NULL);
        cg_jw_int(&w, "ranks", ctx->host_ranks);
        cg_jw_int(&w, "cores", ctx->host_cores);
        cg_jw_str(&w, "note", "per host: its ranks against the cores they may run on (the union of their "
                   "affinity masks, at most the host's online CPUs); the most crowded host");
        cg_jw_end(&w);
        cg_jw_key(&w, "loadavg");
        {
            /* How busy the machine was when the launch began (a shared
             * machine's numbers are noisy; this says how much). */
            double la[3];
            FILE *f = fopen("/proc/loadavg", "r");
            if (f != NULL && fscanf(f, "%lf %lf %lf", &la[0], &la[1], &la[2]) == 3) {
                cg_jw_arr(&w, NULL);
                for (int i = 0; i < 3; i++) {
                    cg_jw_num(&w, NULL, la[i]);
                }
                cg_jw_end(&w);
            } else {
                cg_jw_null(&w, NULL);
            }
            if (f != NULL) {
                fclose(f);
            }
        }
        cg_jw_obj(&w, "timing");
        cg_jw_int(&w, "warmup", job->timing.warmup);
        cg_jw_int(&w, "min_reps", job->timing.min_reps);
        cg_jw_int(&w, "max_reps", job->timing.max_reps);
        cg_jw_num(&w, "rse_target", job->timing.rse_target);
        cg_jw_num(&w, "budget_s", job->timing.budget_s);
        cg_jw_num(&w, "window_us", job->timing.window_us);
        cg_jw_str(&w, "policy", (job->timing.policy == BENCH_POLICY_NREP) ? "nrep" : "rse");
        cg_jw_end(&w);
        cg_jw_obj(&w, "launch");
        cg_jw_int(&w, "index", job->launch);
        cg_jw_int(&w, "of", job->launches);
        cg_jw_end(&w);
        cg_jw_str(&w, "verbosity", job->verbosity_trace ? "trace" : job->verbosity_full ? "full" : "minimal");
        cg_jw_copy(&w, "knobs", job->knobs);
        cg_jw_end(&w);
        free(hosts);
        free(places);
        /* Indented for people: the records are one line each, this file is
         * read by eye. */
        text = cg_jw_text(&w, 1, &tlen);
        cg_jw_free(&w);
        if (text == NULL) {
            snprintf(msg, msglen, "out of memory writing run metadata");
            return -1;
        }
        wrc = cg_write_atomic(job->out_run_meta, text, tlen);
        saved_errno = errno;
        free(text);
        if (wrc != 0) {
            snprintf(msg, msglen, "%s: %s", job->out_run_meta, strerror(saved_errno));
            return -1;
        }
    }
    return 0;
}
