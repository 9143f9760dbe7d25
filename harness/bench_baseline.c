/* bench_baseline.c - the plain-MPI baselines of harness/baselines/, tagged
 * by `collgen tag` into emitted/baselines/ (tags.h, tags.c), as entries of
 * the registry's shape: name, collective, summary, file, commutative_only,
 * the function, and its tag ids (looked up by name in cg_ctag_fns, the tag
 * table collgen tag wrote). bench (baseline:<name>) and
 * build/<mpi>/baseline_check (tests/emitted_check.c) read them.
 */
#include "bench_baseline.h"

#include <string.h>

#include "baselines/baselines.h"
#include "tags.h"

#define X(name, COLL, coll, commutative, summary) int name(CG_##COLL##_ARGS);
CG_BASELINES(X)
#undef X

static struct cg_algo table[] = {
#define X(name_, COLL, coll_, commutative, summary_)                                             \
    {.name = #name_, .coll = CG_COLL_##COLL, .summary = summary_,                              \
     .file = "harness/baselines/" #coll_ ".c", .commutative_only = commutative,                 \
     .fn = {.coll_ = name_}},
    CG_BASELINES(X)
#undef X
};

#define NBASELINES ((int)(sizeof(table) / sizeof(table[0])))

static const struct cg_algo *entries[NBASELINES];

const struct cg_algo *const *bench_baselines(int *n)
{
    if (entries[0] == NULL) {
        for (int i = 0; i < NBASELINES; i++) {
            for (int k = 0; k < cg_nctag_fns; k++) {
                if (strcmp(cg_ctag_fns[k].name, table[i].name) == 0) {
                    table[i].tag_first = cg_ctag_fns[k].tag_first;
                    table[i].tag_count = cg_ctag_fns[k].tag_count;
                }
            }
            entries[i] = &table[i];
        }
    }
    *n = NBASELINES;
    return entries;
}

const struct cg_algo *bench_baseline_find(const char *name)
{
    int n;
    const struct cg_algo *const *all = bench_baselines(&n);
    for (int i = 0; i < n; i++) {
        if (strcmp(all[i]->name, name) == 0) {
            return all[i];
        }
    }
    return NULL;
}

const struct cg_tag_info *bench_baseline_tag_infos(const struct cg_algo *a)
{
    return &cg_ctag_infos[a->tag_first - CG_CTAG_BASE];
}

const struct cg_tag_info *bench_baseline_tag_info(int id)
{
    if (id < CG_CTAG_BASE || id - CG_CTAG_BASE >= cg_nctags) {
        return NULL;
    }
    return &cg_ctag_infos[id - CG_CTAG_BASE];
}
