/* report_phases.c - the section "Baselines, phase by phase" of collgen
 * report (harness/REPORT.md): for every table with baseline:<name> records,
 * at each size, the baseline (b:NAME), the generated schedule of the same
 * name (g:NAME; else the one of the same algorithm, g:rabenseifner for
 * b:reduce_scatter_allgather) and the fastest native implementation of the same
 * algorithm, each with its median and its ratio to that native one, and
 * for the two tagged ones the median and share of every phase tag (a
 * record's "tags" of kind "phase", FORMATS.md). The point PICO makes: one
 * algorithm, three implementations, and where their time goes.
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report_table.h"
#include "report_util.h"

static const char *const heads[] = {"size",  "implementation", "us",   "vs native",
                                    "phase", "phase us",       "share"};
static const char align[] = "rlrrlrr";

/* The label of r, as the main tables write it. */
static void name_of(char *out, size_t n, const struct cg_rep_record *r)
{
    size_t k = strlen(r->collective);
    const char *s = r->name;
    if (strcmp(r->kind, "native") != 0 && strncmp(s, r->collective, k) == 0 && s[k] == '_') {
        s += k + 1;
    }
    if (strcmp(r->kind, "baseline") == 0) {
        snprintf(out, n, "b:%s", s);
    } else if (strcmp(r->kind, "generated") == 0) {
        snprintf(out, n, "g:%s", s);
    } else {
        snprintf(out, n, "%s%s", s, r->effective_algorithm != NULL ? "!" : "");
    }
}

/* r's rows: its median and ratio to the native peer, then one row per
 * phase tag (none for a native record). 0, or -1 out of memory. */
static int rows(struct cg_rep_table *t, const char *size, const struct cg_rep_record *r,
                const struct cg_rep_record *native)
{
    char impl[160], us[32], ratio[32] = "-";
    name_of(impl, sizeof impl, r);
    cg_rep_fmt_us(us, sizeof us, r->median_ns);
    if (native != NULL && native->median_ns > 0) {
        snprintf(ratio, sizeof ratio, "%.3f", r->median_ns / native->median_ns);
    }
    const cJSON *tags = cJSON_GetObjectItemCaseSensitive(r->json, "tags");
    int first = 1;
    const cJSON *tag;
    cJSON_ArrayForEach(tag, tags)
    {
        const cJSON *kind = cJSON_GetObjectItemCaseSensitive(tag, "kind");
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(tag, "name");
        const cJSON *med = cJSON_GetObjectItemCaseSensitive(tag, "median_ns");
        const cJSON *share = cJSON_GetObjectItemCaseSensitive(tag, "share");
        if (!cJSON_IsString(kind) || strcmp(kind->valuestring, "phase") != 0 ||
            !cJSON_IsString(name)) {
            continue;
        }
        const char *slash = strchr(name->valuestring, '/');
        char pus[32] = "-", psh[32] = "-";
        if (cJSON_IsNumber(med)) {
            cg_rep_fmt_us(pus, sizeof pus, med->valuedouble);
        }
        if (cJSON_IsNumber(share)) {
            snprintf(psh, sizeof psh, "%.3f", share->valuedouble);
        }
        const char *row[] = {first ? size : "", first ? impl : "", first ? us : "",
                             first ? ratio : "", slash ? slash + 1 : name->valuestring, pus, psh};
        if (cg_rep_table_row(t, row) != 0) {
            return -1;
        }
        first = 0;
    }
    if (first) {
        const char *row[] = {size, impl, us, ratio, "-", "-", "-"};
        return cg_rep_table_row(t, row);
    }
    return 0;
}

/* The rows of one size, records v[0..n). */
static int size_block(struct cg_rep_table *t, const struct cg_rep_record *const *v, size_t n)
{
    char size[32];
    cg_rep_fmt_size(size, sizeof size, v[0]->size_B);
    for (size_t i = 0; i < n; i++) {
        const struct cg_rep_record *b = v[i];
        if (strcmp(b->kind, "baseline") != 0) {
            continue;
        }
        /* The generated twin: the schedule of the same name, else one that
         * pairs with a native algorithm of the baseline's name
         * (allreduce_rabenseifner for allreduce_reduce_scatter_allgather). */
        struct cg_rep_record as_native = *b;
        size_t k0 = strlen(b->collective);
        as_native.kind = "native";
        as_native.name = (strncmp(b->name, b->collective, k0) == 0 && b->name[k0] == '_')
                             ? b->name + k0 + 1
                             : b->name;
        const struct cg_rep_record *gen = NULL;
        const struct cg_rep_record *nat = NULL;
        for (size_t k = 0; k < n; k++) {
            if (strcmp(v[k]->kind, "generated") == 0 &&
                (strcmp(v[k]->name, b->name) == 0 ||
                 (gen == NULL && cg_rep_same_algorithm(v[k], &as_native)))) {
                gen = (gen != NULL && strcmp(gen->name, b->name) == 0) ? gen : v[k];
            } else if (strcmp(v[k]->kind, "native") == 0 && cg_rep_same_algorithm(b, v[k])) {
                nat = cg_rep_faster(v[k], nat) ? v[k] : nat;
            }
        }
        if (rows(t, size, b, nat) != 0 || (gen != NULL && rows(t, "", gen, nat) != 0) ||
            (nat != NULL && rows(t, "", nat, nat) != 0)) {
            return -1;
        }
    }
    return 0;
}

void cg_rep_phases_section(struct cg_rep_doc *d, const struct cg_rep_record *const *v, size_t n)
{
    int any = 0;
    for (size_t i = 0; i < n; i++) {
        any |= strcmp(v[i]->kind, "baseline") == 0;
    }
    if (!any) {
        return;
    }
    cg_rep_doc_add(d, CG_REP_HEADING, 2, "Baselines, phase by phase");
    cg_rep_doc_add(d, CG_REP_PARA, 0,
                   "Each plain-MPI baseline (b:NAME, harness/baselines/, tagged by collgen tag) "
                   "beside the generated schedule of the same name (g:NAME) and the fastest "
                   "native implementation of the same algorithm: median us, the ratio to that "
                   "native one, and the median and share of the median call of each phase tag.");
    size_t i = 0;
    while (i < n && !d->failed) {
        size_t j = i + 1;
        while (j < n && cg_rep_cmp_group(v[j], v[i]) == 0) {
            j++;
        }
        int has = 0;
        for (size_t k = i; k < j; k++) {
            has |= strcmp(v[k]->kind, "baseline") == 0;
        }
        if (has) {
            char *title = cg_rep_group_title(v[i]);
            struct cg_rep_table *t = cg_rep_table_new(7, heads, align);
            if (title == NULL || t == NULL) {
                free(title);
                cg_rep_table_free(t);
                d->failed = 1;
                return;
            }
            cg_rep_doc_add(d, CG_REP_HEADING, 3, title);
            free(title);
            size_t a = i;
            while (a < j) {
                size_t b = a + 1;
                while (b < j && v[b]->size_B == v[a]->size_B) {
                    b++;
                }
                if (size_block(t, v + a, b - a) != 0) {
                    d->failed = 1;
                    break;
                }
                a = b;
            }
            cg_rep_doc_add_table(d, t);
        }
        i = j;
    }
}
