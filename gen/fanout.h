/* fanout.h - independent jobs over forked workers, their output replayed in
 * order.
 *
 * cg_fanout runs job(arg, i, &value) for every i in [0, n) and then, in the
 * order of i, replays what job i printed (its stdout, then its stderr) and
 * calls done(arg, i, &result). With workers <= 1 (or n <= 1) it does that in
 * this process, job by job; otherwise it forks that many workers, which take
 * jobs one at a time from a shared counter, each printing into its own
 * temporary files. So the output is byte for byte the same whatever the
 * number of workers, and done() sees what a serial run would have seen,
 * except that a job cannot change the parent's memory: it reports only its
 * return value and one long.
 *
 * Why: `collgen verify` of the library is a minute of simulation on one
 * core, done by the build, the goldens and the sanitizers each; the
 * schedules are independent, and a machine has more than one core.
 *
 * Errors: a worker that dies (a signal, an exit inside a job) fails the job it
 * was running, result.rc CG_FAN_DIED with result.status its wait status; the
 * jobs nobody ran (every worker died) get CG_FAN_NOT_RUN. When a worker or a
 * temporary file cannot be had, the jobs run in this process instead.
 * CG_FANOUT_KILL=i (a test hook) kills the worker that takes job i.
 */
#ifndef CG_FANOUT_H
#define CG_FANOUT_H

enum { CG_FAN_DIED = -1000, CG_FAN_NOT_RUN = -1001 };

struct cg_fan_result {
    int rc;         /* job's return value, or CG_FAN_DIED / CG_FAN_NOT_RUN */
    int status;     /* CG_FAN_DIED: the worker's wait status */
    long value;     /* what job stored in *value */
    double seconds; /* the job's wall time */
};

typedef int (*cg_fan_job)(void *arg, int i, long *value);
typedef void (*cg_fan_done)(void *arg, int i, const struct cg_fan_result *r);

/* Workers to use by default: the online CPUs, or CG_JOBS when set (1..256). */
int cg_fanout_default_workers(void);

void cg_fanout(int n, int workers, cg_fan_job job, cg_fan_done done, void *arg);

#endif
