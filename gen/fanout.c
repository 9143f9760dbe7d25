/* fanout.c - independent jobs over forked workers (fanout.h). */
#include "fanout.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* One job's state, in memory shared by the parent and the workers. */
struct slot {
    int state; /* 0 untaken, 1 running, 2 done */
    int worker;
    int rc;
    long value;
    double seconds;
    off_t out_off, out_len, err_off, err_len; /* in the worker's files */
};

struct shared {
    int next; /* the next job to take */
    struct slot slot[];
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int cg_fanout_default_workers(void)
{
    const char *e = getenv("CG_JOBS");
    if (e != NULL && *e) {
        char *end = NULL;
        long v = strtol(e, &end, 10);
        if (end != e && *end == '\0' && v >= 1 && v <= 256) {
            return (int)v;
        }
        fprintf(stderr, "collgen: ignoring CG_JOBS='%s' (a number 1..256)\n", e);
    }
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > 256 ? 256 : (int)n;
}

static void serial(int n, cg_fan_job job, cg_fan_done done, void *arg)
{
    for (int i = 0; i < n; i++) {
        struct cg_fan_result r = { 0, 0, 0, 0.0 };
        double t0 = now_s();
        fflush(stdout); /* what a job prints on either stream stays in order */
        r.rc = job(arg, i, &r.value);
        r.seconds = now_s() - t0;
        fflush(stdout);
        done(arg, i, &r);
    }
    fflush(stdout);
}

/* Copies len bytes at off of fd to f. */
static void replay(int fd, off_t off, off_t len, FILE *f)
{
    char buf[8192];
    while (len > 0) {
        size_t want = len < (off_t)sizeof(buf) ? (size_t)len : sizeof(buf);
        ssize_t got = pread(fd, buf, want, off);
        if (got <= 0) {
            if (got < 0 && errno == EINTR) {
                continue;
            }
            return;
        }
        fwrite(buf, 1, (size_t)got, f);
        off += got;
        len -= got;
    }
}

/* The worker's loop: jobs from the shared counter until none is left, what
 * they print going to its files. Never returns. */
static void work(struct shared *sh, int n, int w, int out, int err, cg_fan_job job, void *arg)
{
    /* Test hook (tests/run_gen.sh): the worker that takes job CG_FANOUT_KILL
     * is killed by SIGKILL as it starts it. */
    const char *kill_env = getenv("CG_FANOUT_KILL");
    int kill_at = kill_env != NULL && *kill_env ? atoi(kill_env) : -1;
    if (dup2(out, STDOUT_FILENO) < 0 || dup2(err, STDERR_FILENO) < 0) {
        _exit(127);
    }
    for (;;) {
        int i = __atomic_fetch_add(&sh->next, 1, __ATOMIC_SEQ_CST);
        if (i >= n) {
            break;
        }
        struct slot *s = &sh->slot[i];
        s->worker = w;
        s->out_off = lseek(STDOUT_FILENO, 0, SEEK_CUR);
        s->err_off = lseek(STDERR_FILENO, 0, SEEK_CUR);
        __atomic_store_n(&s->state, 1, __ATOMIC_SEQ_CST);
        if (i == kill_at) {
            raise(SIGKILL);
        }
        double t0 = now_s();
        long value = 0;
        int rc = job(arg, i, &value);
        fflush(stdout);
        fflush(stderr);
        s->seconds = now_s() - t0;
        s->rc = rc;
        s->value = value;
        s->out_len = lseek(STDOUT_FILENO, 0, SEEK_CUR) - s->out_off;
        s->err_len = lseek(STDERR_FILENO, 0, SEEK_CUR) - s->err_off;
        __atomic_store_n(&s->state, 2, __ATOMIC_SEQ_CST);
    }
    fflush(stdout);
    fflush(stderr);
    _exit(0);
}

void cg_fanout(int n, int workers, cg_fan_job job, cg_fan_done done, void *arg)
{
    if (workers > n) {
        workers = n;
    }
    if (workers <= 1) {
        serial(n, job, done, arg);
        return;
    }
    size_t bytes = sizeof(struct shared) + (size_t)n * sizeof(struct slot);
    struct shared *sh = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
                             -1, 0);
    FILE **files = calloc((size_t)workers * 2, sizeof(*files));
    pid_t *pids = calloc((size_t)workers, sizeof(*pids));
    int *status = calloc((size_t)workers, sizeof(*status));
    int ok = sh != MAP_FAILED && files != NULL && pids != NULL && status != NULL;
    for (int w = 0; ok && w < 2 * workers; w++) {
        ok = (files[w] = tmpfile()) != NULL;
    }
    if (!ok) {
        goto in_this_process;
    }
    memset(sh, 0, bytes);
    fflush(stdout);
    fflush(stderr);
    int started = 0;
    for (int w = 0; w < workers; w++) {
        pid_t pid = fork();
        if (pid == 0) {
            work(sh, n, w, fileno(files[2 * w]), fileno(files[2 * w + 1]), job, arg);
        }
        if (pid < 0) {
            break;
        }
        pids[w] = pid;
        started++;
    }
    if (started == 0) {
        goto in_this_process;
    }
    for (int w = 0; w < started; w++) {
        while (waitpid(pids[w], &status[w], 0) < 0 && errno == EINTR) {
        }
    }
    for (int i = 0; i < n; i++) {
        struct slot *s = &sh->slot[i];
        struct cg_fan_result r = { CG_FAN_NOT_RUN, 0, 0, 0.0 };
        if (s->state == 2) {
            r.rc = s->rc;
            r.value = s->value;
            r.seconds = s->seconds;
        } else if (s->state == 1) {
            r.rc = CG_FAN_DIED;
            r.status = status[s->worker];
        }
        if (s->state != 0) {
            /* A worker that died mid-job leaves what it printed before: its
             * files' ends. */
            int out = fileno(files[2 * s->worker]);
            int err = fileno(files[2 * s->worker + 1]);
            off_t out_len = s->state == 2 ? s->out_len : lseek(out, 0, SEEK_END) - s->out_off;
            off_t err_len = s->state == 2 ? s->err_len : lseek(err, 0, SEEK_END) - s->err_off;
            fflush(stdout);
            replay(out, s->out_off, out_len, stdout);
            fflush(stdout);
            replay(err, s->err_off, err_len, stderr);
            fflush(stderr);
        }
        done(arg, i, &r);
        fflush(stdout);
    }
    for (int w = 0; w < 2 * workers; w++) {
        fclose(files[w]);
    }
    munmap(sh, bytes);
    free(files);
    free(pids);
    free(status);
    return;

in_this_process:
    for (int w = 0; files != NULL && w < 2 * workers; w++) {
        if (files[w] != NULL) {
            fclose(files[w]);
        }
    }
    if (sh != MAP_FAILED) {
        munmap(sh, bytes);
    }
    free(files);
    free(pids);
    free(status);
    serial(n, job, done, arg);
}
