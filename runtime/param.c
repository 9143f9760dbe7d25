/* param.c - tunable schedule parameters read at run time.
 *
 * A schedule's "params" with a range ({"default": 4, "min": 1, "max": 16})
 * are verified for every value of the range, so the emitted code may take
 * any of them at run time: cg_param_set (the harness, a program), or the
 * environment variable CG_PARAM_<schedule>_<name>, or the default. Each
 * knob caches its value; cg_param_set bumps a generation number that makes
 * every knob look again, so the steady-state cost is one comparison.
 */
#include "cg_internal.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>

#define CG_PARAM_MAX_SET 64

struct cg_param_setting {
    char schedule[64];
    char name[48];
    int value;
};

/* Why static: settings are process-wide, like the environment they stand
 * in for; the harness sets them once per job before timing. */
static struct cg_param_setting cg_param_table[CG_PARAM_MAX_SET];
static int cg_param_nset;
static unsigned cg_param_generation = 1;

unsigned cg_param_gen(void)
{
    return cg_param_generation;
}

int cg_param_set(const char *schedule, const char *name, int value)
{
    int i = 0;

    if ((schedule == NULL) || (name == NULL) || (strlen(schedule) >= 64) || (strlen(name) >= 48)) {
        cg_set_error("collgen: cg_param_set: bad schedule or parameter name");
        return MPI_ERR_ARG;
    }
    for (i = 0; i < cg_param_nset; i++) {
        if ((strcmp(cg_param_table[i].schedule, schedule) == 0) &&
            (strcmp(cg_param_table[i].name, name) == 0)) {
            break;
        }
    }
    if (value == INT_MIN) {
        if (i < cg_param_nset) {
            cg_param_table[i] = cg_param_table[--cg_param_nset];
        }
    } else {
        if (i == cg_param_nset) {
            if (cg_param_nset == CG_PARAM_MAX_SET) {
                cg_set_error("collgen: cg_param_set: more than %d parameters set",
                             CG_PARAM_MAX_SET);
                return MPI_ERR_ARG;
            }
            snprintf(cg_param_table[i].schedule, sizeof(cg_param_table[i].schedule), "%s",
                     schedule);
            snprintf(cg_param_table[i].name, sizeof(cg_param_table[i].name), "%s", name);
            cg_param_nset++;
        }
        cg_param_table[i].value = value;
    }
    cg_param_generation++;
    return MPI_SUCCESS;
}

/* Looks the knob up: set, environment, default. */
static int cg_param_lookup(const struct cg_param *k, int *value, const char **from)
{
    char var[160];
    const char *s = NULL;

    for (int i = 0; i < cg_param_nset; i++) {
        if ((strcmp(cg_param_table[i].schedule, k->schedule) == 0) &&
            (strcmp(cg_param_table[i].name, k->name) == 0)) {
            *value = cg_param_table[i].value;
            *from = "cg_param_set";
            return MPI_SUCCESS;
        }
    }
    snprintf(var, sizeof(var), "CG_PARAM_%s_%s", k->schedule, k->name);
    s = getenv(var);
    if ((s != NULL) && (*s != '\0')) {
        char *end = NULL;
        long v = 0;
        errno = 0;
        v = strtol(s, &end, 10);
        if ((errno != 0) || (end == s) || (*end != '\0') || (v < INT_MIN) || (v > INT_MAX)) {
            cg_set_error("collgen: %s='%.40s' is not an integer", var, s);
            return MPI_ERR_ARG;
        }
        *value = (int)v;
        *from = var;
        return MPI_SUCCESS;
    }
    *value = k->dflt;
    *from = "the default";
    return MPI_SUCCESS;
}

int cg_param_value(struct cg_param *k, int *value)
{
    int rc = MPI_SUCCESS;

    if (k->gen != cg_param_generation) {
        const char *from = NULL;
        int v = 0;
        rc = cg_param_lookup(k, &v, &from);
        if (rc != MPI_SUCCESS) {
            return rc;
        }
        if ((v < k->lo) || (v > k->hi)) {
            cg_set_error("collgen: parameter %s of %s is %d (from %s), outside the verified "
                         "range %d..%d",
                         k->name, k->schedule, v, from, k->lo, k->hi);
            return MPI_ERR_ARG;
        }
        k->value = v;
        k->gen = cg_param_generation;
    }
    *value = k->value;
    return rc;
}
