/* test_ctag.c - the fixtures of `collgen tag` run three ways: as written
 * (orig_*, tests/tag/fixtures.c), tagged with tags off (off_*) and tagged
 * with tags on (on_*, build/tests/tag/fixtures.c), each object's functions
 * renamed by objcopy (tests/tag/tag.ninja).
 *
 * usage: tests/mpirun.sh FLAVOUR P build/FLAVOUR/test_ctag
 *
 * For every fixture, mode (fixture.h) and n in 0, 1, 7, 100, 1001:
 *  - the three return the same code and the same output, byte for byte,
 *    from a poisoned buffer; at mode 0 that output is also the native
 *    collective's (MPI_Allgather, MPI_Allreduce with MPI_SUM, MPI_Bcast
 *    from 0); inputs are unique per rank and position;
 *  - tags on: every tag entered is one of the fixture's own (or of its
 *    helpers'), its call tag is entered once per call, the open-tag stack
 *    is empty after each call, each fixture_expect() found the tag it
 *    names innermost, and children's times sum to no more than their
 *    parent's; at odd p >= 3, where every branch of every fixture runs on
 *    some rank, the tags entered over all ranks and cases are exactly the
 *    fixture's tags in the table.
 * One line per fixture and check: "PASS ctag <check> <fixture> <mpi> p=<P>".
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "tags.h"

#ifndef CG_FLAVOUR
#define CG_FLAVOUR "unknown"
#endif

#define POISON 0xA5
#define MAX_N 1001

typedef int (*fixture_fn)(const int *in, int *out, int n, int mode, MPI_Comm comm);

#define X(name, coll)                                                              \
    int orig_##name(const int *in, int *out, int n, int mode, MPI_Comm comm);      \
    int off_##name(const int *in, int *out, int n, int mode, MPI_Comm comm);       \
    int on_##name(const int *in, int *out, int n, int mode, MPI_Comm comm);
FIXTURES(X)
#undef X
long orig_fix_no_communication(const int *a, int n);
long off_fix_no_communication(const int *a, int n);
long on_fix_no_communication(const int *a, int n);

struct fixture {
    const char *name;
    const char *coll;
    fixture_fn orig, off, on;
};

static const struct fixture fixtures[] = {
#define X(name, coll) {#name, #coll, orig_##name, off_##name, on_##name},
    FIXTURES(X)
#undef X
};

/* The modes each fixture has (fixture.h), and the helpers whose tags it
 * enters. */
static const struct {
    const char *name;
    int modes[4];
    int nmodes;
    const char *helpers[4];
} extras[] = {
    {"fix_early_return", {0, 1}, 2, {NULL}},
    {"fix_goto_error", {0, 2, 3}, 3, {NULL}},
    {"fix_break_continue", {0, 4}, 2, {NULL}},
    {"fix_helpers", {0}, 1, {"exchange", "sendrecv_ints", "add_into", "copy_ints"}},
};

static const int counts[] = {0, 1, 7, 100, MAX_N};

/* fixture_expect() state: checked while a tags-on fixture runs. */
static const char *expect_fn;   /* the fixture running with tags on, or NULL */
static int expect_failures;     /* wrong innermost tags seen */
static char expect_first[160];  /* the first, described */

static const struct cg_ctag_fn *tagged_fn(const char *name)
{
    for (int i = 0; i < cg_nctag_fns; i++) {
        if (strcmp(cg_ctag_fns[i].name, name) == 0) {
            return &cg_ctag_fns[i];
        }
    }
    return NULL;
}

void fixture_expect(const char *fn, const char *path)
{
    if (expect_fn == NULL || strcmp(fn, expect_fn) != 0) {
        return;
    }
    int n = cg_ctag_stack_.n;
    const char *top = n > 0 ? cg_ctag_infos[cg_ctag_stack_.ids[n - 1] - CG_CTAG_BASE].name : "";
    if (strcmp(top, path) != 0) {
        if (expect_failures++ == 0) {
            snprintf(expect_first, sizeof(expect_first), "expected '%s' innermost, found '%s'",
                     path, top);
        }
    }
}

/* Whether tag id belongs to fixture f or to one of its helpers. */
static int owns_tag(const struct fixture *f, int id)
{
    const char *names[5] = {f->name, NULL, NULL, NULL, NULL};
    for (size_t e = 0; e < sizeof(extras) / sizeof(extras[0]); e++) {
        if (strcmp(extras[e].name, f->name) == 0) {
            for (int k = 0; k < 4; k++) {
                names[k + 1] = extras[e].helpers[k];
            }
        }
    }
    for (int k = 0; k < 5 && names[k] != NULL; k++) {
        const struct cg_ctag_fn *t = tagged_fn(names[k]);
        if (t != NULL && id >= t->tag_first && id < t->tag_first + t->tag_count) {
            return 1;
        }
    }
    return 0;
}

static int value(int rank, int i)
{
    return rank * 1000003 + i * 7 + 1;
}

/* The native result at mode 0. */
static void native(const struct fixture *f, const int *in, int *out, int n, MPI_Comm comm)
{
    if (strcmp(f->coll, "allgather") == 0) {
        MPI_Allgather(in, n, MPI_INT, out, n, MPI_INT, comm);
    } else if (strcmp(f->coll, "allreduce") == 0) {
        MPI_Allreduce(in, out, n, MPI_INT, MPI_SUM, comm);
    } else {
        int rank;
        MPI_Comm_rank(comm, &rank);
        if (rank == 0) {
            memcpy(out, in, sizeof(int) * (size_t)n);
        }
        MPI_Bcast(out, n, MPI_INT, 0, comm);
    }
}

struct verdict {
    int wrong;          /* cases wrong on this rank */
    char first[512];    /* the first, described */
};

static void wrong(struct verdict *v, const char *fmt, const char *a, int mode, int n)
{
    if (v->wrong++ == 0) {
        snprintf(v->first, sizeof(v->first), fmt, a, mode, n);
    }
}

/* 1 on every rank when any rank has `mine`. */
static int anywhere(int mine, MPI_Comm comm)
{
    int all = 0;
    MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MAX, comm);
    return all;
}

static void report(const char *check, const struct fixture *f, int rank, int p,
                   const struct verdict *v, MPI_Comm comm)
{
    int bad = anywhere(v->wrong != 0, comm);
    /* The lowest failing rank says why. */
    int who = v->wrong ? rank : p;
    int first = p;
    MPI_Allreduce(&who, &first, 1, MPI_INT, MPI_MIN, comm);
    char why[512] = "";
    if (first < p) {
        if (rank == first) {
            snprintf(why, sizeof(why), "%s", v->first);
        }
        MPI_Bcast(why, (int)sizeof(why), MPI_CHAR, first, comm);
    }
    if (rank == 0) {
        if (bad) {
            printf("FAIL ctag %s %s %s p=%d (rank %d: %s)\n", check, f->name, CG_FLAVOUR, p,
                   first, why);
        } else {
            printf("PASS ctag %s %s %s p=%d\n", check, f->name, CG_FLAVOUR, p);
        }
        fflush(stdout);
    }
}

int main(int argc, char **argv)
{
    int rank, p;
    MPI_Comm comm;
    int failed = 0;

    MPI_Init(&argc, &argv);
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &p);
    const char *want = getenv("CG_EXPECT_NP");
    if (want != NULL && atoi(want) != p) {
        fprintf(stderr, "test_ctag: size %d, CG_EXPECT_NP %s: wrong launcher?\n", p, want);
        MPI_Finalize();
        return 2;
    }
    size_t cap = (size_t)MAX_N * (size_t)p;
    int *in = malloc(sizeof(int) * MAX_N);
    int *outs[4];
    for (int k = 0; k < 4; k++) {
        outs[k] = malloc(sizeof(int) * cap);
    }
    unsigned char *entered = calloc((size_t)cg_nctags, 1);

    for (size_t fi = 0; fi < sizeof(fixtures) / sizeof(fixtures[0]); fi++) {
        const struct fixture *f = &fixtures[fi];
        const struct cg_ctag_fn *tf = tagged_fn(f->name);
        int modes[4] = {0};
        int nmodes = 1;
        for (size_t e = 0; e < sizeof(extras) / sizeof(extras[0]); e++) {
            if (strcmp(extras[e].name, f->name) == 0) {
                memcpy(modes, extras[e].modes, sizeof(modes));
                nmodes = extras[e].nmodes;
            }
        }
        struct verdict same = {0}, vsnative = {0}, tags = {0};
        memset(entered, 0, (size_t)cg_nctags);
        if (tf == NULL) {
            wrong(&tags, "%s is not in the tag table (mode %d, n %d)", f->name, 0, 0);
        }
        for (int m = 0; m < nmodes; m++) {
            for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
                int n = counts[c];
                int mode = modes[m];
                size_t outn = strcmp(f->coll, "allgather") == 0 ? (size_t)n * (size_t)p : (size_t)n;
                for (int i = 0; i < n; i++) {
                    in[i] = value(rank, i);
                }
                int rc[3];
                for (int k = 0; k < 4; k++) {
                    memset(outs[k], POISON, sizeof(int) * cap);
                }
                rc[0] = f->orig(in, outs[0], n, mode, comm);
                rc[1] = f->off(in, outs[1], n, mode, comm);
                cg_tag_reset();
                expect_fn = f->name;
                expect_failures = 0;
                rc[2] = f->on(in, outs[2], n, mode, comm);
                expect_fn = NULL;
                if (rc[0] != rc[1] || rc[0] != rc[2]) {
                    wrong(&same, "%s: return codes differ (mode %d, n %d)", "orig/off/on", mode, n);
                }
                if (memcmp(outs[0], outs[1], sizeof(int) * outn) != 0 ||
                    memcmp(outs[0], outs[2], sizeof(int) * outn) != 0 ||
                    memcmp(outs[0], outs[1], sizeof(int) * cap) != 0 ||
                    memcmp(outs[0], outs[2], sizeof(int) * cap) != 0) {
                    wrong(&same, "%s: outputs differ (mode %d, n %d)", "orig/off/on", mode, n);
                }
                if (mode == 0) {
                    native(f, in, outs[3], n, comm);
                    if (rc[0] != MPI_SUCCESS || memcmp(outs[0], outs[3], sizeof(int) * outn) != 0) {
                        wrong(&vsnative, "%s: output differs from the native one (mode %d, n %d)",
                              f->coll, mode, n);
                    }
                }
                /* The tags of the tags-on call. */
                if (cg_ctag_stack_.n != 0) {
                    wrong(&tags, "%s: tags left open after the call (mode %d, n %d)", f->name, mode,
                          n);
                    cg_ctag_stack_.n = 0;
                }
                if (expect_failures != 0) {
                    wrong(&tags, "%s (mode %d, n %d)", expect_first, mode, n);
                }
                for (int t = 0; t < cg_nctags; t++) {
                    uint64_t ns = 0, calls = 0, pns = 0, pcalls = 0;
                    cg_tag_read(CG_CTAG_BASE + t, &ns, &calls);
                    if (calls == 0) {
                        continue;
                    }
                    entered[t] = 1;
                    if (!owns_tag(f, CG_CTAG_BASE + t)) {
                        wrong(&tags, "entered the foreign tag %s (mode %d, n %d)",
                              cg_ctag_infos[t].name, mode, n);
                    }
                    int parent = cg_ctag_infos[t].parent;
                    if (parent >= 0) {
                        /* Children sum to no more than the parent. */
                        uint64_t sum = 0;
                        for (int s = 0; s < cg_nctags; s++) {
                            uint64_t sns = 0, scalls = 0;
                            if (cg_ctag_infos[s].parent == parent) {
                                cg_tag_read(CG_CTAG_BASE + s, &sns, &scalls);
                                sum += sns;
                            }
                        }
                        cg_tag_read(parent, &pns, &pcalls);
                        if (sum > pns || pcalls == 0) {
                            wrong(&tags, "the children of %s take longer than it (mode %d, n %d)",
                                  cg_ctag_infos[parent - CG_CTAG_BASE].name, mode, n);
                        }
                    }
                }
                if (tf != NULL) {
                    uint64_t ns = 0, calls = 0;
                    cg_tag_read(tf->tag_first, &ns, &calls);
                    if (calls != 1) {
                        wrong(&tags, "%s: the call tag was entered a wrong number of times "
                              "(mode %d, n %d)", f->name, mode, n);
                    }
                }
            }
        }
        /* At odd p >= 3 every tag of the fixture runs on some rank. */
        if (p >= 3 && p % 2 == 1) {
            MPI_Allreduce(MPI_IN_PLACE, entered, cg_nctags, MPI_UNSIGNED_CHAR, MPI_MAX, comm);
            for (int t = 0; t < cg_nctags; t++) {
                if (entered[t] != owns_tag(f, CG_CTAG_BASE + t)) {
                    wrong(&tags, entered[t] ? "entered %s, not the fixture's (mode %d, n %d)"
                                            : "never entered its tag %s (modes %d, counts %d)",
                          cg_ctag_infos[t].name, nmodes, (int)(sizeof(counts) / sizeof(counts[0])));
                }
            }
        }
        report("same_as_untagged", f, rank, p, &same, comm);
        report("same_as_native", f, rank, p, &vsnative, comm);
        report("tags", f, rank, p, &tags, comm);
        failed += same.wrong + vsnative.wrong + tags.wrong;
    }
    /* The function without communication is left as it is. */
    long sums[3] = {orig_fix_no_communication(in, 100), off_fix_no_communication(in, 100),
                    on_fix_no_communication(in, 100)};
    if (rank == 0) {
        int ok = sums[0] == sums[1] && sums[0] == sums[2] &&
                 tagged_fn("fix_no_communication") == NULL;
        printf("%s ctag untouched fix_no_communication %s p=%d\n", ok ? "PASS" : "FAIL",
               CG_FLAVOUR, p);
        failed += !ok;
    }
    failed = anywhere(failed != 0, comm);
    for (int k = 0; k < 4; k++) {
        free(outs[k]);
    }
    free(in);
    free(entered);
    MPI_Comm_free(&comm);
    MPI_Finalize();
    return failed ? 1 : 0;
}
