/* run_baseline.c - see run_baseline.h. */
#include "run_baseline.h"

#include <stdio.h>
#include <string.h>

#include "baselines/baselines.h"

static const struct {
    const char *name;
    enum cg_coll coll;
} baselines[] = {
#define X(name, COLL, coll, commutative, summary) {#name, CG_COLL_##COLL},
    CG_BASELINES(X)
#undef X
};

#define NBASELINES ((int)(sizeof(baselines) / sizeof(baselines[0])))

int cg_baseline_count(void)
{
    return NBASELINES;
}

const char *cg_baseline_name(int i)
{
    return baselines[i].name;
}

enum cg_coll cg_baseline_coll(int i)
{
    return baselines[i].coll;
}

const char *cg_baseline_problem(const struct cg_impl_req *im, enum cg_coll coll,
                                const struct cg_test *t, int from_top, char *out, size_t len)
{
    for (int k = 0; k < t->nlibs; k++) {
        if (strcmp(t->libs[k]->backend, "mpi") != 0) {
            snprintf(out, len, "%s: the baselines run over MPI, and library %s is %s", im->text,
                     t->libs[k]->name, t->libs[k]->backend);
            return out;
        }
    }
    int found = -1;
    int of_coll = 0;
    for (int i = 0; i < NBASELINES; i++) {
        of_coll += baselines[i].coll == coll;
        if (im->kind == CG_IMPL_BASELINE && strcmp(baselines[i].name, im->name) == 0) {
            found = i;
        }
    }
    if (im->kind == CG_IMPL_BASELINE_ALL) {
        if (of_coll == 0 && !from_top) {
            snprintf(out, len, "baseline:* finds no %s baseline (harness/baselines/baselines.h "
                               "lists allreduce, bcast and allgather ones)", cg_colls[coll].name);
            return out;
        }
        return NULL;
    }
    if (found < 0) {
        char list[1024] = "";
        size_t n = 0;
        for (int i = 0; i < NBASELINES && n < sizeof(list); i++) {
            n += (size_t)snprintf(list + n, sizeof(list) - n, "%s%s", i ? ", " : "",
                                  baselines[i].name);
        }
        snprintf(out, len, "unknown baseline '%s' (harness/baselines/baselines.h lists: %s)",
                 im->name, list);
        return out;
    }
    if (baselines[found].coll != coll && !from_top) {
        snprintf(out, len, "baseline:%s is %s %s baseline, not %s", im->name,
                 strchr("aeiou", cg_colls[baselines[found].coll].name[0]) ? "an" : "a",
                 cg_colls[baselines[found].coll].name, cg_colls[coll].name);
        return out;
    }
    return NULL;
}
