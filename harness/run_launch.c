/* run_launch.c - repeated launches of a campaign's jobs (the test's
 * "launches", PGMPITuneLib's nmpiruns), and the files of PGMPITuneLib's
 * NREP estimation (timing.policy "nrep") that go between launches.
 *
 * Why separate launches: one mpirun's placement, memory layout and
 * library state are one draw; medians of one launch scatter less than
 * medians of different launches do, so a difference that one launch shows
 * may be that launch's. N launches of every job give N medians per point:
 * the report takes the median of the launch medians with their spread, and
 * its significance test compares launch medians (harness/REPORT.md,
 * "Repeated launches").
 *
 * Order: launch-major (every job's launch 1, then every job's launch 2,
 * ...), so that a change of the machine's load during the campaign falls
 * on every implementation alike rather than on the jobs that happened to
 * run then.
 */
#include <string.h>

#include "run_internal.h"

void cg_plan_launches(struct cg_plan *plan, struct cg_arena *a, int launches)
{
    int n = plan->njobs;

    for (int j = 0; j < n; j++) {
        plan->jobs[j].launch = 1;
        plan->jobs[j].launches = launches;
        plan->jobs[j].base = plan->jobs[j].index;
    }
    if (launches <= 1) {
        return;
    }
    struct cg_job *all = cg_arena_alloc(a, sizeof(*all) * (size_t)n * (size_t)launches);
    for (int k = 1; k <= launches; k++) {
        for (int j = 0; j < n; j++) {
            struct cg_job *job = &all[((k - 1) * n) + j];
            *job = plan->jobs[j];
            job->launch = k;
            job->index = ((k - 1) * n) + j + 1;
            job->points = cg_arena_alloc(a, sizeof(*job->points) * (size_t)(job->npoints + 1));
            for (int i = 0; i < job->npoints; i++) {
                job->points[i] = plan->jobs[j].points[i];
                /* Ids stay unique (raw files and resume are keyed on them);
                 * the records' launch.point_id is the id without it. */
                job->points[i].id = cg_arena_printf(a, "%s-L%d", plan->jobs[j].points[i].id, k);
            }
        }
    }
    plan->jobs = all;
    plan->njobs = n * launches;
}

const char *cg_nrep_file(struct cg_arena *a, const char *dir, int base_job, int launch)
{
    return cg_arena_printf(a, "%s/nrep/job-%d-L%d.json", dir, base_job, launch);
}

void cg_write_timing(struct cg_jw *w, const struct cg_timing *t, const char *estimate_out,
                     const char *dir, const struct cg_job *job, struct cg_arena *a)
{
    cg_jw_obj(w, "timing");
    cg_jw_str(w, "sync", t->sync);
    cg_jw_int(w, "warmup", t->warmup);
    cg_jw_int(w, "min_reps", t->min_reps);
    cg_jw_int(w, "max_reps", t->max_reps);
    cg_jw_num(w, "rse_target", t->rse_target);
    cg_jw_num(w, "budget_s", t->budget_s);
    cg_jw_num(w, "window_us", t->window_us);
    cg_jw_str(w, "policy", t->policy);
    if (strcmp(t->policy, "nrep") == 0) {
        cg_jw_obj(w, "nrep");
        cg_jw_num(w, "t1_rse", t->nrep.t1_rse);
        cg_jw_int(w, "b1", t->nrep.b1);
        cg_jw_int(w, "b2", t->nrep.b2);
        cg_jw_num(w, "rse_b", t->nrep.rse_b);
        cg_jw_int(w, "k", t->nrep.k);
        if (estimate_out != NULL) {
            cg_jw_str(w, "estimate_out", estimate_out);
        } else if (job != NULL) {
            /* A measurement launch: t1 is the longest of the estimation
             * launches of its job (those that left a file). */
            cg_jw_arr(w, "t1_from");
            for (int k = 1; k <= job->launches; k++) {
                cg_jw_str(w, NULL, cg_nrep_file(a, dir, job->base, k));
            }
            cg_jw_end(w);
        }
        cg_jw_end(w);
    }
    cg_jw_end(w);
}

const char *cg_point_base_id(struct cg_arena *a, const struct cg_job *job, const struct cg_point *pt)
{
    const char *suffix = cg_arena_printf(a, "-L%d", job->launch);
    size_t n = strlen(pt->id);
    size_t k = strlen(suffix);

    if (job->launches > 1 && n > k && strcmp(pt->id + n - k, suffix) == 0) {
        return cg_arena_printf(a, "%.*s", (int)(n - k), pt->id);
    }
    return pt->id;
}
