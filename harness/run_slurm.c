/* run_slurm.c - what the runner asks Slurm: which of a campaign's batch
 * jobs are still queued or running (squeue), and to cancel them (scancel).
 *
 * Why: `sbatch --wait` is only a waiter. Killing it (a runner stopped or
 * killed, its supervisor emptying the session) leaves the batch job in the
 * queue, still appending records to points.jsonl; a resume that started its
 * own jobs then would run those points a second time. So every job the
 * runner submits gets a name it knows, collgen-<campaign>-<run id>
 * (SBATCH_JOB_NAME, which overrides the script's own --job-name), a job
 * that is stopped is cancelled and waited for until the queue no longer
 * lists it, and a resume first waits for every job of its campaign that an
 * earlier run left behind.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "run_internal.h"

/* Runs argv with stdout captured (stderr kept, at most 64 KiB) and waits
 * for it. Returns its exit status (128 + n: signal n; 127: not found), or -1
 * when it could not start; *out gets the text. */
static int capture(struct cg_arena *a, char *const argv[], char **out)
{
    int fds[2];
    *out = cg_arena_strdup(a, "");
    if (pipe(fds) != 0) {
        return -1;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return -1;
    }
    if (pid == 0) {
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        int devnull = open("/dev/null", O_RDONLY);
        if (devnull < 0 || dup2(devnull, 0) < 0 || dup2(fds[1], 1) < 0) {
            _exit(126);
        }
        close(fds[0]);
        close(fds[1]);
        execvp(argv[0], argv);
        _exit(127);
    }
    close(fds[1]);
    char buf[65536];
    size_t n = 0;
    ssize_t k;
    while ((k = read(fds[0], buf + n, sizeof(buf) - 1 - n)) > 0 || (k < 0 && errno == EINTR)) {
        if (k > 0) {
            n += (size_t)k;
        }
        if (n == sizeof(buf) - 1) {
            break;
        }
    }
    close(fds[0]);
    buf[n] = '\0';
    *out = cg_arena_strdup(a, buf);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0) {
        if (errno != EINTR) {
            return -1;
        }
    }
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
}

const char *cg_slurm_job_name(struct cg_arena *a, const char *campaign, int run_id)
{
    return run_id > 0 ? cg_arena_printf(a, "collgen-%s-%d", campaign, run_id)
                      : cg_arena_printf(a, "collgen-%s-", campaign);
}

/* Whether `name` is `prefix` followed by digits only (a job of the
 * campaign: collgen-c-1 is, collgen-c-2-1 of campaign c-2 is not). */
static int of_campaign(const char *name, const char *prefix)
{
    size_t n = strlen(prefix);
    if (strncmp(name, prefix, n) != 0 || name[n] == '\0') {
        return 0;
    }
    return strspn(name + n, "0123456789") == strlen(name + n);
}

int cg_slurm_find(struct cg_arena *a, const char *name, struct cg_slurm_job **jobs, int *n,
                  const char **why)
{
    *jobs = NULL;
    *n = 0;
    char *out = NULL;
    char *argv[] = { "squeue", "--noheader", "--format=%i|%j|%T", NULL };
    int rc = capture(a, argv, &out);
    if (rc != 0) {
        *why = rc == 127 || rc < 0 ? "squeue cannot be executed"
                                   : cg_arena_printf(a, "squeue exited with status %d", rc);
        return -1;
    }
    int cap = 0;
    for (char *line = strtok(out, "\n"); line != NULL; line = strtok(NULL, "\n")) {
        char *bar1 = strchr(line, '|');
        char *bar2 = bar1 != NULL ? strchr(bar1 + 1, '|') : NULL;
        if (bar2 == NULL) {
            continue;
        }
        *bar1 = *bar2 = '\0';
        const char *jname = bar1 + 1;
        size_t len = strlen(name);
        int match = name[len - 1] == '-' ? of_campaign(jname, name) : strcmp(jname, name) == 0;
        if (!match) {
            continue;
        }
        if (*n == cap) {
            cap = cap ? 2 * cap : 8;
            struct cg_slurm_job *grown = cg_arena_alloc(a, sizeof(*grown) * (size_t)cap);
            if (*n > 0) {
                memcpy(grown, *jobs, sizeof(*grown) * (size_t)*n);
            }
            *jobs = grown;
        }
        (*jobs)[*n].id = cg_arena_strdup(a, line);
        (*jobs)[*n].name = cg_arena_strdup(a, jname);
        (*jobs)[*n].state = cg_arena_strdup(a, bar2 + 1);
        (*n)++;
    }
    return 0;
}

int cg_slurm_settle(struct cg_arena *a, const char *name, int cancel, double max_s, FILE *log,
                    int announce, int *stopped)
{
    double until = max_s > 0 ? cg_now_s() + max_s : 0;
    int told = 0, cancelled = 0;
    if (stopped != NULL) {
        *stopped = 0;
    }
    for (;;) {
        struct cg_slurm_job *jobs = NULL;
        int n = 0;
        const char *why = NULL;
        if (cg_slurm_find(a, name, &jobs, &n, &why) != 0) {
            if (log != NULL) {
                fprintf(log, "collgen run: error: cannot tell whether Slurm jobs %s%s still run: "
                        "%s\n", name, name[strlen(name) - 1] == '-' ? "<n>" : "", why);
            }
            return -1;
        }
        if (n == 0) {
            return 0;
        }
        if (cancel && !cancelled) {
            char **argv = cg_arena_alloc(a, sizeof(char *) * (size_t)(n + 2));
            argv[0] = "scancel";
            for (int i = 0; i < n; i++) {
                argv[i + 1] = (char *)jobs[i].id;
            }
            char *out = NULL;
            int rc = capture(a, argv, &out);
            if (log != NULL) {
                fprintf(log, "collgen run: cancelled Slurm job%s", n > 1 ? "s" : "");
                for (int i = 0; i < n; i++) {
                    fprintf(log, " %s (%s, %s)", jobs[i].id, jobs[i].name, jobs[i].state);
                }
                fprintf(log, "%s\n", rc == 0 ? "" : cg_arena_printf(a, "; scancel exited with "
                                                                       "status %d", rc));
            }
            cancelled = 1;
        } else if (!told && announce && log != NULL) {
            fprintf(log, "collgen run: waiting for the Slurm job%s an earlier run of this "
                    "campaign submitted:", n > 1 ? "s" : "");
            for (int i = 0; i < n; i++) {
                fprintf(log, " %s (%s, %s)", jobs[i].id, jobs[i].name, jobs[i].state);
            }
            fprintf(log, "; %s points.jsonl, so nothing starts before %s (or: scancel",
                    n > 1 ? "they append to" : "it appends to", n > 1 ? "they end" : "it ends");
            for (int i = 0; i < n; i++) {
                fprintf(log, " %s", jobs[i].id);
            }
            fprintf(log, ")\n");
            fflush(log);
            told = 1;
        }
        if (until > 0 && cg_now_s() > until) {
            if (log != NULL) {
                fprintf(log, "collgen run: error: Slurm still lists job %s (%s) after %.0f s\n",
                        jobs[0].id, jobs[0].state, max_s);
            }
            return -1;
        }
        if (stopped != NULL && cg_stop_pending()) {
            *stopped = 1;
            return -1;
        }
        struct timespec ts = { 1, 0 };
        nanosleep(&ts, NULL);
    }
}
