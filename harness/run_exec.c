/* run_exec.c - one job: start the launcher, follow it, stop it.
 *
 * Process layout of one launch:
 *
 *   collgen run (runner; SIGCHLD, SIGINT, SIGTERM, SIGHUP blocked)
 *    └─ supervisor   setsid(): leader of a new session; PR_SET_PDEATHSIG
 *        │           (SIGHUP when the runner dies); child subreaper
 *        └─ launcher (tests/mpirun.sh ..., srun, sbatch --wait ...)
 *            └─ timeout, mpirun, ranks ...   (same session)
 *
 * Why a session and not a process group: tests/mpirun.sh runs the MPI
 * launcher under timeout(1), which moves itself and everything under it
 * into a process group of its own, so kill(-pgid) would miss the ranks. A
 * session cannot be left without setsid(), so "every process whose session
 * is the supervisor's" (read from /proc) is the whole job tree.
 *
 * Why a supervisor: a runner killed with SIGKILL cannot clean up. The
 * kernel then sends the supervisor SIGHUP; it sends SIGTERM to the session,
 * waits, then SIGKILL, so no bench of a dead runner keeps appending records
 * while `collgen run --resume` works out what is missing. It also holds the
 * campaign lock (an inherited descriptor), which is released only when it
 * is gone: a resume started too early waits for it (run.c). Under Slurm the
 * launcher (sbatch --wait) only waits for a batch job that runs elsewhere,
 * so the supervisor of a dead runner also cancels that job and waits until
 * the queue no longer lists it (run_slurm.c) before it lets the lock go.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "run_internal.h"

/* Seconds between SIGTERM and SIGKILL. Why 15: timeout(1) in
 * tests/mpirun.sh gives the MPI launcher 10 s (-k 10) to stop its ranks. */
#define CG_KILL_GRACE_S 15.0

double cg_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int cg_stop_pending(void)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGHUP);
    struct timespec zero = { 0, 0 };
    return sigtimedwait(&set, NULL, &zero) > 0;
}

/* Sends sig to every live process of session sid except `skip`; returns
 * how many there were. */
static int signal_session(pid_t sid, int sig, pid_t skip)
{
    DIR *d = opendir("/proc");
    if (d == NULL) {
        return 0;
    }
    int n = 0;
    for (struct dirent *e = readdir(d); e != NULL; e = readdir(d)) {
        char *end;
        long pid = strtol(e->d_name, &end, 10);
        if (*end != '\0' || pid <= 0 || (pid_t)pid == skip) {
            continue;
        }
        char path[64], buf[512];
        snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
            continue;
        }
        ssize_t k = read(fd, buf, sizeof(buf) - 1);
        close(fd);
        if (k <= 0) {
            continue;
        }
        buf[k] = '\0';
        /* "pid (comm) state ppid pgrp session ...": comm may hold spaces
         * and parentheses, so parse from the last ')'. */
        char *rp = strrchr(buf, ')');
        char state;
        long ppid, pgrp, session;
        if (rp == NULL || sscanf(rp + 1, " %c %ld %ld %ld", &state, &ppid, &pgrp, &session) != 4) {
            continue;
        }
        if ((pid_t)session != sid || state == 'Z' || state == 'X') {
            continue;
        }
        n++;
        if (sig != 0) {
            kill((pid_t)pid, sig);
        }
    }
    closedir(d);
    return n;
}

/* Reaps every child that has ended; sets *status when `who` is one. */
static int reap(pid_t who, int *status)
{
    int found = 0, st;
    pid_t p;
    while ((p = waitpid(-1, &st, WNOHANG)) > 0) {
        if (p == who) {
            *status = st;
            found = 1;
        }
    }
    return found;
}

static int status_code(int st)
{
    if (WIFEXITED(st)) {
        return WEXITSTATUS(st);
    }
    if (WIFSIGNALED(st)) {
        return 128 + WTERMSIG(st);
    }
    return 255;
}

/* SIGTERM to the session, up to grace seconds for it to empty, then
 * SIGKILL. Called by the supervisor, which is the session leader. */
static void empty_session(pid_t self, double grace)
{
    sigset_t chld;
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    int dummy;
    if (signal_session(self, SIGTERM, self) == 0) {
        return;
    }
    double until = cg_now_s() + grace;
    while (cg_now_s() < until) {
        struct timespec ts = { 0, 100 * 1000 * 1000 };
        sigtimedwait(&chld, NULL, &ts);
        reap(-1, &dummy);
        if (signal_session(self, 0, self) == 0) {
            return;
        }
    }
    signal_session(self, SIGKILL, self);
    reap(-1, &dummy);
}

/* The supervisor: never returns. */
static void supervise(const struct cg_launch *l, const sigset_t *mask, pid_t runner, int logfd)
{
    pid_t self = getpid();
    /* Why SIG_DFL: a runner started under nohup passes SIGHUP on ignored,
     * and an ignored signal is discarded even while blocked, so the death
     * notice would never arrive. Blocked, the default action never runs:
     * sigwaitinfo below takes it. */
    if (signal(SIGHUP, SIG_DFL) == SIG_ERR || signal(SIGCHLD, SIG_DFL) == SIG_ERR || setsid() < 0 ||
        prctl(PR_SET_PDEATHSIG, SIGHUP) != 0) {
        dprintf(logfd, "collgen run: supervisor: %s\n", strerror(errno));
        _exit(126);
    }
    /* The runner may have died between fork and prctl. */
    if (getppid() != runner) {
        _exit(126);
    }
    /* Orphans of the job (timeout's children when bash is gone) come back
     * here to be reaped rather than to init. */
    if (prctl(PR_SET_CHILD_SUBREAPER, 1) != 0) {
        dprintf(logfd, "collgen run: supervisor: PR_SET_CHILD_SUBREAPER: %s\n", strerror(errno));
    }
    pid_t launcher = fork();
    if (launcher < 0) {
        dprintf(logfd, "collgen run: fork: %s\n", strerror(errno));
        _exit(126);
    }
    if (launcher == 0) {
        int devnull = open("/dev/null", O_RDONLY);
        if (devnull < 0 || dup2(devnull, 0) < 0 || dup2(logfd, 1) < 0 || dup2(logfd, 2) < 0) {
            _exit(126);
        }
        for (int i = 0; i < l->nenv; i++) {
            if (setenv(l->env[i].key.s, l->env[i].value.s, 1) != 0) {
                dprintf(2, "collgen run: setenv %s: %s\n", l->env[i].key.s, strerror(errno));
                _exit(126);
            }
        }
        if (sigprocmask(SIG_SETMASK, mask, NULL) != 0) {
            _exit(126);
        }
        execvp(l->argv[0], l->argv);
        dprintf(2, "collgen run: cannot execute %s: %s\n", l->argv[0], strerror(errno));
        _exit(127);
    }
    sigset_t wait_for;
    sigemptyset(&wait_for);
    sigaddset(&wait_for, SIGCHLD);
    sigaddset(&wait_for, SIGHUP);
    for (;;) {
        int st;
        if (reap(launcher, &st)) {
            /* Anything the launcher left behind must not outlive the job. */
            empty_session(self, 5.0);
            _exit(status_code(st));
        }
        int sig = sigwaitinfo(&wait_for, NULL);
        if (sig == SIGHUP) {
            if (l->slurm_name != NULL) {
                FILE *log = fdopen(logfd, "a");
                struct cg_arena a = { 0 };
                cg_slurm_settle(&a, l->slurm_name, 1, 120.0, log, 0, NULL);
                if (log != NULL) {
                    fclose(log);
                }
            }
            empty_session(self, CG_KILL_GRACE_S);
            _exit(129);
        }
    }
}

/* Counts the newlines appended to path since *offset, moving *offset. */
static long long count_new_lines(const char *path, long long *offset)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return 0;
    }
    long long n = 0;
    char buf[65536];
    ssize_t k;
    while ((k = pread(fd, buf, sizeof(buf), (off_t)*offset)) > 0) {
        for (ssize_t i = 0; i < k; i++) {
            if (buf[i] == '\n') {
                n++;
            }
        }
        *offset += k;
    }
    close(fd);
    return n;
}

static void draw(const struct cg_progress *pr, long long lines, double now)
{
    if (pr->quiet || !pr->tty) {
        return;
    }
    int s = (int)(now - pr->t0);
    fprintf(stderr, "\r[%d/%d jobs] %s  %lld/%d points  %dm%02ds\033[K", pr->job_no, pr->njobs,
            pr->label, pr->done_before + lines, pr->total, s / 60, s % 60);
    fflush(stderr);
}

int cg_exec_job(const struct cg_launch *l, const sigset_t *mask, int timeout_s,
                struct cg_progress *pr, struct cg_exec *res)
{
    memset(res, 0, sizeof(*res));
    int logfd = open(l->log_file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (logfd < 0) {
        fprintf(stderr, "collgen run: error: cannot create %s: %s\n", l->log_file, strerror(errno));
        return -1;
    }
    /* The log starts with what was run, so it can be rerun by hand. */
    if (dprintf(logfd, "# collgen run: job %d:", l->run_id) < 0) {
        fprintf(stderr, "collgen run: error: cannot write %s: %s\n", l->log_file, strerror(errno));
        close(logfd);
        return -1;
    }
    for (int i = 0; i < l->nenv; i++) {
        dprintf(logfd, " %s=%s", l->env[i].key.s, l->env[i].value.s);
    }
    for (int i = 0; i < l->argc; i++) {
        dprintf(logfd, " %s", l->argv[i]);
    }
    dprintf(logfd, "\n");
    fflush(NULL); /* nothing buffered may be written twice by the child */
    double t0 = cg_now_s();
    pid_t runner = getpid();
    pid_t sup = fork();
    if (sup < 0) {
        fprintf(stderr, "collgen run: error: fork: %s\n", strerror(errno));
        close(logfd);
        return -1;
    }
    if (sup == 0) {
        /* logfd is O_CLOEXEC: the launcher gets it only as stdout and
         * stderr; the campaign lock (also O_CLOEXEC) stays with the
         * supervisor, which never calls exec. */
        supervise(l, mask, runner, logfd);
    }
    close(logfd);
    res->started = 1;
    sigset_t wait_for;
    sigemptyset(&wait_for);
    sigaddset(&wait_for, SIGCHLD);
    sigaddset(&wait_for, SIGINT);
    sigaddset(&wait_for, SIGTERM);
    sigaddset(&wait_for, SIGHUP);
    long long offset = pr->offset;
    double kill_at = 0, last_draw = 0;
    int st = 0;
    for (;;) {
        if (waitpid(sup, &st, WNOHANG) == sup) {
            break;
        }
        struct timespec ts = { 0, 200 * 1000 * 1000 };
        int sig = sigtimedwait(&wait_for, NULL, &ts);
        double now = cg_now_s();
        if ((sig == SIGINT || sig == SIGTERM || sig == SIGHUP) && !res->interrupted) {
            res->interrupted = 1;
            signal_session(sup, SIGTERM, 0);
            kill_at = now + CG_KILL_GRACE_S;
        }
        if (timeout_s > 0 && !res->timed_out && !res->interrupted && now - t0 > timeout_s) {
            res->timed_out = 1;
            signal_session(sup, SIGTERM, 0);
            kill_at = now + CG_KILL_GRACE_S;
        }
        if (kill_at > 0 && now > kill_at) {
            signal_session(sup, SIGKILL, 0);
            kill_at = now + 1e9;
        }
        res->lines += count_new_lines(pr->points, &offset);
        if (now - last_draw >= 0.5) {
            draw(pr, res->lines, now);
            last_draw = now;
        }
    }
    res->lines += count_new_lines(pr->points, &offset);
    draw(pr, res->lines, cg_now_s());
    res->seconds = cg_now_s() - t0;
    if (WIFEXITED(st)) {
        res->exited = 1;
        res->code = WEXITSTATUS(st);
    } else {
        res->code = status_code(st);
    }
    return 0;
}
