/* bench_nrep.c - PGMPITuneLib's NREP estimation as a stopping policy
 * (timing.policy "nrep"; seed 002, "Tuning MPI Collectives by Verifying
 * Performance Guidelines"; harness/README.md, "Timing").
 *
 * The method, per group of points (one collective, implementation,
 * datatype, op, root and in-place, every size):
 *  1. t1: repeat the call with 1 element until the RSE of its repetitions
 *     is below t1_rse (0.01); t1 is how long that took. The runner does it
 *     in `launches` estimation launches of their own before measuring
 *     (collgen run), and t1 is the longest of them (bench_nrep_t1_from);
 *  2. per size, a batch of b1 repetitions (5), and b2 more (5) when their
 *     RSE is above rse_b; t_min is the fastest of them;
 *  3. nrep = max(ceil(t1 / t_min), k): the size is measured for about as
 *     long as 1 element needed to settle, and at least k times.
 * The batches are estimation and are not kept; the nrep repetitions are
 * the point's (cut to max_reps, which the record then says).
 */
#include "bench.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void bench_nrep_group(const struct bench_point *pt, char *out, size_t len)
{
    bench_fmt(out, len, "%s %s %s %s r%d ip%d", bench_coll_name(pt->coll), pt->impl,
              bench_dtype_name(pt->dtype), pt->op_given ? bench_op_name(pt->op) : "-", pt->root,
              pt->in_place);
}

/* The whole file at path, parsed; NULL when absent or not JSON. */
static cJSON *read_json(const char *path)
{
    size_t len = 0;
    char *text = cg_slurp(path, &len);
    cJSON *j = (text != NULL) ? cJSON_Parse(text) : NULL;

    free(text);
    return j;
}

double bench_nrep_t1_from(const struct bench_job *job, const char *group, int *nfiles)
{
    const cJSON *from = job->timing.nrep.t1_from;
    double t1 = NAN;

    *nfiles = 0;
    for (const cJSON *it = (from != NULL) ? from->child : NULL; it != NULL; it = it->next) {
        cJSON *doc;
        const cJSON *v;
        if (!cJSON_IsString(it)) {
            continue;
        }
        /* A launch that failed left no file: the others still count. */
        doc = read_json(it->valuestring);
        v = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(doc, "t1_s"),
                                             group);
        if (cJSON_IsNumber(v) && v->valuedouble >= 0.0) {
            t1 = isnan(t1) ? v->valuedouble : fmax(t1, v->valuedouble);
            (*nfiles)++;
        }
        cJSON_Delete(doc);
    }
    return t1;
}

enum bench_decision bench_nrep_decide(struct bench_nrep_state *s, const struct bench_timing *tm,
                                      const struct bench_online *o, int *restart)
{
    const struct bench_nrep_params *np = &tm->nrep;

    *restart = 0;
    if (s->phase == 0) {
        /* The RSE is looked at once, after b1; then b2 more, or none. */
        double rse = bench_online_rse(o);
        int done = (o->n >= np->b1 + np->b2) ||
                   (o->n == np->b1 && (np->b2 == 0 || (isfinite(rse) && rse <= np->rse_b)));
        if (!done) {
            return BENCH_GO_ON;
        }
        s->batch = o->n;
        s->tmin_ns = (double)o->sorted[0];
        if (s->tmin_ns > 0.0 && isfinite(s->t1_s)) {
            double want = ceil(s->t1_s * 1e9 / s->tmin_ns);
            s->target = (want > (double)tm->max_reps) ? tm->max_reps : (long)want;
            s->capped = want > (double)tm->max_reps;
        } else {
            s->target = tm->max_reps;
            s->capped = 1;
        }
        if (s->target < np->k) {
            s->target = (np->k > tm->max_reps) ? tm->max_reps : np->k;
        }
        s->phase = 1;
        *restart = 1;
        return BENCH_GO_ON;
    }
    return (o->n >= s->target) ? BENCH_STOP_NREP : BENCH_GO_ON;
}

enum bench_decision bench_nrep_t1_decide(const struct bench_timing *tm,
                                         const struct bench_online *o)
{
    long floor = (tm->min_reps > 2) ? tm->min_reps : 2;

    if (o->n >= floor) {
        double rse = bench_online_rse(o);
        if (isfinite(rse) && rse < tm->nrep.t1_rse) {
            return BENCH_STOP_RSE;
        }
    }
    return (o->n >= tm->max_reps) ? BENCH_STOP_MAX : BENCH_GO_ON;
}
