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
 *
 * Why the implementations of one size are shuffled in each launch: in
 * listed order the generated schedule always runs after native:default and
 * before its forced native twin, in every launch, so whatever the order
 * does (caches and the library's state left by the previous point, the
 * scheduler's view of a rank that just spun) is the same in each launch
 * and the launch-median test takes it for the implementation's own speed.
 * Shuffled, it varies from launch to launch and becomes spread, which the
 * test sees. Only within a group (one collective, size, datatype, op, root
 * and in-place: the points a table row compares), so that sizes still run
 * in order and a point's neighbours move the same bytes. Seeded from the
 * job and the launch, never the clock: the plan, and a resumed campaign's
 * plan, are the same every time.
 */
#include <stdint.h>
#include <string.h>

#include "run_internal.h"

/* SplitMix64 (Steele, Lea and Flood): a small generator whose streams for
 * nearby seeds do not look alike. */
static uint64_t next_random(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static int same_group(const struct cg_point *a, const struct cg_point *b)
{
    return a->coll == b->coll && a->bytes == b->bytes && a->count == b->count &&
           a->dtype == b->dtype && a->op == b->op && a->root == b->root &&
           a->in_place == b->in_place;
}

uint64_t cg_launch_order_seed(const struct cg_job *job)
{
    return ((uint64_t)(unsigned)job->base << 32) | (uint64_t)(unsigned)job->launch;
}

/* Each run of consecutive points of one group in a random order
 * (Fisher-Yates). */
static void shuffle_groups(struct cg_job *job)
{
    uint64_t state = cg_launch_order_seed(job);
    int start = 0;

    while (start < job->npoints) {
        int end = start + 1;
        while (end < job->npoints && same_group(&job->points[start], &job->points[end])) {
            end++;
        }
        for (int i = end - 1; i > start; i--) {
            int j = start + (int)(next_random(&state) % (uint64_t)(i - start + 1));
            struct cg_point t = job->points[i];
            job->points[i] = job->points[j];
            job->points[j] = t;
        }
        start = end;
    }
}

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
            job->shuffled = 1;
            shuffle_groups(job);
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
