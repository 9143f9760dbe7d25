/* bench_params.c - the ranged parameters of a generated point, for both
 * bench programs (bench.c over MPI, harness/gpu/ over the CUDA runtime):
 * a point named "bcast_knomial(radix=4)" sets radix to 4 for its calls
 * (cg_param_set, runtime/param.c, which both runtimes link), and its record
 * says what was asked and what the code read.
 */
#define _POSIX_C_SOURCE 200809L
#include "bench.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "cg.h"

int bench_params_apply(const char *schedule, const struct cg_param_info *params, int nparams,
                       const struct bench_point *pt, struct bench_params_eff *e, char *reason,
                       size_t len)
{
    memset(e, 0, sizeof(*e));
    /* Every name the point gives must be one of the schedule's, in range:
     * a value the verifier never saw is refused before any call. */
    for (int i = 0; i < pt->nparams; i++) {
        const struct cg_param_info *pi = NULL;
        char names[256] = "";
        size_t n = 0;
        for (int k = 0; k < nparams; k++) {
            if (strcmp(params[k].name, pt->params[i].name) == 0) {
                pi = &params[k];
            }
            n += (size_t)snprintf(names + n, (n < sizeof(names)) ? sizeof(names) - n : 0, "%s%s",
                                  (k > 0) ? ", " : "", params[k].name);
        }
        if (pi == NULL) {
            bench_fmt(reason, len,
                      "schedule %s has no tunable parameter \"%s\" in this build (it has: %s)",
                      schedule, pt->params[i].name, (nparams > 0) ? names : "none");
            return -1;
        }
        if (pt->params[i].value < pi->lo || pt->params[i].value > pi->hi) {
            bench_fmt(reason, len, "%s=%d is outside the range %s was verified for, %d..%d",
                      pi->name, pt->params[i].value, schedule, pi->lo, pi->hi);
            return -1;
        }
    }
    /* Then each of the schedule's parameters: the point's value, or no
     * setting (the code takes the environment's or the default), and what
     * the code will read, through a probe as the emitted code reads it. */
    for (int k = 0; k < nparams && k < BENCH_MAX_PARAMS; k++) {
        const struct cg_param_info *pi = &params[k];
        struct cg_param probe = {.schedule = schedule, .name = pi->name, .dflt = pi->dflt,
                                 .lo = pi->lo, .hi = pi->hi, .gen = 0, .value = 0};
        int value = INT_MIN; /* removes any setting */
        int v = 0;
        for (int i = 0; i < pt->nparams; i++) {
            if (strcmp(pt->params[i].name, pi->name) == 0) {
                value = pt->params[i].value;
            }
        }
        if (cg_param_set(schedule, pi->name, value) != MPI_SUCCESS) {
            bench_fmt(reason, len, "cg_param_set: %s", cg_last_error());
            return -1;
        }
        e->ok[k] = (cg_param_value(&probe, &v) == MPI_SUCCESS);
        bench_fmt(e->eff[k].name, sizeof(e->eff[k].name), "%s", pi->name);
        e->eff[k].value = v;
        e->n++;
    }
    return 0;
}

void bench_params_clear(const char *schedule, const struct cg_param_info *params, int nparams)
{
    for (int k = 0; k < nparams; k++) {
        (void)cg_param_set(schedule, params[k].name, INT_MIN);
    }
}

cJSON *bench_params_json(const struct bench_point *pt, int known,
                         const struct cg_param_info *params, int nparams,
                         const struct bench_params_eff *e)
{
    cJSON *o;

    if (pt->kind != BENCH_GENERATED || (!known && pt->nparams == 0)) {
        return cJSON_CreateNull();
    }
    o = cJSON_CreateObject();
    if (o == NULL) {
        return NULL;
    }
    if (e != NULL) {
        for (int k = 0; k < e->n; k++) {
            cJSON_AddItemToObject(o, e->eff[k].name,
                                  e->ok[k] ? cJSON_CreateNumber(e->eff[k].value)
                                           : cJSON_CreateNull());
        }
        return o;
    }
    /* Requested: the point's values, then the defaults of the others. */
    for (int i = 0; i < pt->nparams; i++) {
        cJSON_AddItemToObject(o, pt->params[i].name, cJSON_CreateNumber(pt->params[i].value));
    }
    for (int k = 0; k < nparams; k++) {
        if (cJSON_GetObjectItemCaseSensitive(o, params[k].name) == NULL) {
            cJSON_AddItemToObject(o, params[k].name, cJSON_CreateNumber(params[k].dflt));
        }
    }
    return o;
}
