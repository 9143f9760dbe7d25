/* tune_export.c - collgen tune's outputs from the trees' rules: the
 * selection (harness/FORMATS.md, "Selection"), Open MPI's coll_tuned
 * dynamic rules file, MPICH's CSEL JSON and the NCCL tuner plugin's CSV
 * (harness/README.md, "collgen tune").
 *
 * Rules of this file:
 * - Every export is made from the same rules as the selection, never from
 *   the records again.
 * - Open MPI and MPICH select by communicator size and message size only,
 *   not by ranks per node: the selection is projected onto a machine of
 *   ppn_node ranks per node (a communicator of p ranks is taken to have
 *   min(p, ppn_node) per node) and the export says so in its header.
 * - Only native:<algorithm> rules can go into a library's own format;
 *   elsewhere the library's own decision stays (Open MPI: algorithm 0;
 *   MPICH: its default subtree, copied from the library).
 * - Message sizes: a collective is exported only where the library's
 *   measure is the records' size_B (Open MPI's coll_tuned_decision_dynamic.c:
 *   count x type size for allreduce, bcast and reduce, x ranks for
 *   alltoall; MPICH's avg_msg_size for allreduce, bcast and reduce,
 *   total_msg_size for allgather).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report_util.h"
#include "tune.h"

/* ---- the selection ---------------------------------------------------------- */

/* Why raw text: cJSON prints numbers beyond int with 15 digits when they
 * read back within its tolerance (2^53 - 1 as 9.00719925474099e+15), and a
 * range's end must be exact. */
static cJSON *whole(double v)
{
    char s[32];
    snprintf(s, sizeof s, "%.0f", v);
    return cJSON_CreateRaw(s);
}

static cJSON *range(double lo, double hi)
{
    cJSON *a = cJSON_CreateArray();
    cJSON_AddItemToArray(a, whole(lo));
    cJSON_AddItemToArray(a, whole(hi));
    return a;
}

char *cg_tune_selection_json(const struct cg_tune *t, const char *library,
                             const char *campaign, const char *hash)
{
    cJSON *root = cJSON_CreateObject();
    cJSON_AddNumberToObject(root, "schema", 1);
    cJSON_AddStringToObject(root, "kind", "collgen-selection");
    cJSON_AddStringToObject(root, "library", library);
    cJSON_AddStringToObject(root, "campaign", campaign);
    cJSON_AddStringToObject(root, "campaign_hash", hash);
    cJSON *rules = cJSON_AddArrayToObject(root, "rules");
    for (size_t i = 0; i < t->ngroups; i++) {
        const struct cg_tune_group *g = &t->groups[i];
        if (strcmp(g->library, library) != 0) {
            continue;
        }
        for (size_t r = 0; r < g->nrules; r++) {
            const struct cg_tune_rule *ru = &g->rules[r];
            const struct cg_tune_class *k = &g->classes[ru->cls];
            cJSON *jr = cJSON_CreateObject();
            cJSON_AddItemToArray(rules, jr);
            cJSON_AddStringToObject(jr, "collective", g->collective);
            cJSON_AddItemToObject(jr, "p", range(ru->plo, ru->phi));
            cJSON_AddItemToObject(jr, "ppn", range(ru->qlo, ru->qhi));
            cJSON_AddItemToObject(jr, "bytes", range(ru->blo, ru->bhi));
            cJSON_AddStringToObject(jr, "implementation", k->impl);
            cJSON *params = (k->params != NULL) ? cJSON_Parse(k->params) : NULL;
            cJSON_AddItemToObject(jr, "params", params != NULL ? params : cJSON_CreateObject());
        }
    }
    char *s = cJSON_Print(root);
    cJSON_Delete(root);
    if (s != NULL) {
        char *w = cg_rep_strf("%s\n", s);
        free(s);
        s = w;
    }
    return s;
}

/* ---- the projection onto a machine's node size ------------------------------ */

/* One communicator-size entry: from p = plo up, message ranges [lo_i, ..]. */
struct msgrule {
    double lo;
    int id;           /* the library's algorithm (0: the library decides) */
    const char *name; /* the class's algorithm name, NULL: the library decides */
};

struct commrule {
    double plo;
    struct msgrule *m;
    size_t nm;
};

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int cmp_rule_b(const void *pa, const void *pb)
{
    const struct cg_tune_rule *a = *(const struct cg_tune_rule *const *)pa;
    const struct cg_tune_rule *b = *(const struct cg_tune_rule *const *)pb;
    return (a->blo > b->blo) - (a->blo < b->blo);
}

static int same_entry(const struct commrule *a, const struct commrule *b)
{
    if (a->nm != b->nm) {
        return 0;
    }
    for (size_t i = 0; i < a->nm; i++) {
        if (a->m[i].lo != b->m[i].lo || a->m[i].id != b->m[i].id ||
            (a->m[i].name == NULL) != (b->m[i].name == NULL) ||
            (a->m[i].name != NULL && strcmp(a->m[i].name, b->m[i].name) != 0)) {
            return 0;
        }
    }
    return 1;
}

static void free_entries(struct commrule *e, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(e[i].m);
    }
    free(e);
}

/* The communicator-size entries of g on nodes of ppn_node ranks; accept
 * says which classes the library's format can name (and with what id).
 * *n entries, NULL with *n = 0 out of memory. */
static struct commrule *project(const struct cg_tune_group *g, int ppn_node,
                                int (*accept)(const struct cg_tune_class *k, const char **name),
                                size_t *n)
{
    *n = 0;
    size_t nb = 0;
    double *bp = malloc((4 * g->nrules + 2) * sizeof *bp);
    const struct cg_tune_rule **match = malloc((g->nrules + 1) * sizeof *match);
    struct commrule *e = calloc(4 * g->nrules + 2, sizeof *e);
    if (bp == NULL || match == NULL || e == NULL) {
        goto oom;
    }
    bp[nb++] = 1;
    for (size_t r = 0; r < g->nrules; r++) {
        const struct cg_tune_rule *ru = &g->rules[r];
        double cand[4] = {ru->plo, ru->phi + 1, ru->qlo, ru->qhi + 1};
        for (int c = 0; c < 4; c++) {
            /* A ppn bound matters as p only while min(p, ppn_node) moves. */
            if (c >= 2 && cand[c] > ppn_node) {
                continue;
            }
            if (cand[c] > 1 && cand[c] <= CG_TUNE_P_MAX) {
                bp[nb++] = cand[c];
            }
        }
    }
    qsort(bp, nb, sizeof *bp, cmp_double);
    size_t ne = 0;
    for (size_t i = 0; i < nb; i++) {
        if (i > 0 && bp[i] == bp[i - 1]) {
            continue;
        }
        double p = bp[i], q = (p < ppn_node) ? p : ppn_node;
        size_t nm = 0;
        for (size_t r = 0; r < g->nrules; r++) {
            const struct cg_tune_rule *ru = &g->rules[r];
            if (p >= ru->plo && p <= ru->phi && q >= ru->qlo && q <= ru->qhi) {
                match[nm++] = ru;
            }
        }
        qsort(match, nm, sizeof *match, cmp_rule_b);
        struct commrule *cr = &e[ne];
        cr->plo = p;
        cr->m = calloc(nm + 1, sizeof *cr->m);
        if (cr->m == NULL) {
            goto oom;
        }
        for (size_t r = 0; r < nm; r++) {
            const char *name = NULL;
            int id = accept(&g->classes[match[r]->cls], &name);
            if (cr->nm > 0 && cr->m[cr->nm - 1].id == id &&
                (cr->m[cr->nm - 1].name == NULL) == (name == NULL) &&
                (name == NULL || strcmp(cr->m[cr->nm - 1].name, name) == 0)) {
                continue; /* the same as the range before: one range */
            }
            cr->m[cr->nm].lo = (cr->nm == 0) ? 0 : match[r]->blo;
            cr->m[cr->nm].id = id;
            cr->m[cr->nm].name = name;
            cr->nm++;
        }
        ne++;
        if (ne >= 2 && same_entry(&e[ne - 2], &e[ne - 1])) {
            free(e[ne - 1].m);
            e[ne - 1].m = NULL;
            ne--;
        }
    }
    free(bp);
    free(match);
    *n = ne;
    return e;
oom:
    free(bp);
    free(match);
    if (e != NULL) {
        free_entries(e, 4 * g->nrules + 2);
    }
    return NULL;
}

static int any_named(const struct commrule *e, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; j < e[i].nm; j++) {
            if (e[i].m[j].name != NULL) {
                return 1;
            }
        }
    }
    return 0;
}

/* ---- Open MPI's coll_tuned dynamic rules --------------------------------------- */

/* Collective ids of coll_tuned (ompi/mca/coll/base/coll_base_functions.h,
 * the COLLTYPE_T order; shared/design/NATIVE.md): only those whose message
 * size is size_B. */
static const struct {
    const char *collective;
    int id;
} ompi_colls[] = {
    {"allreduce", 2}, {"alltoall", 3}, {"barrier", 6}, {"bcast", 7}, {"reduce", 11},
};

static int ompi_accept(const struct cg_tune_class *k, const char **name)
{
    if (strcmp(k->kind, "native") == 0 && k->ompi_id > 0) {
        *name = k->alg;
        return k->ompi_id;
    }
    *name = NULL;
    return 0;
}

char *cg_tune_ompi_rules(const struct cg_tune *t, int ppn_node, int *none)
{
    struct cg_rep_buf body, b;
    cg_rep_buf_init(&body);
    cg_rep_buf_init(&b);
    int ncoll = 0;
    for (size_t c = 0; c < sizeof ompi_colls / sizeof ompi_colls[0]; c++) {
        for (size_t i = 0; i < t->ngroups; i++) {
            const struct cg_tune_group *g = &t->groups[i];
            if (strcmp(g->library, "openmpi") != 0 ||
                strcmp(g->collective, ompi_colls[c].collective) != 0) {
                continue;
            }
            size_t ne;
            struct commrule *e = project(g, ppn_node, ompi_accept, &ne);
            if (e == NULL) {
                cg_rep_buf_fini(&body);
                return NULL;
            }
            if (any_named(e, ne)) {
                ncoll++;
                cg_rep_buf_printf(&body, "%d  # %s\n%zu  # communicator sizes\n",
                                  ompi_colls[c].id, g->collective, ne);
                for (size_t k = 0; k < ne; k++) {
                    cg_rep_buf_printf(&body, "%.0f  # from %.0f ranks\n%zu  # message sizes\n",
                                      e[k].plo, e[k].plo, e[k].nm);
                    for (size_t m = 0; m < e[k].nm; m++) {
                        cg_rep_buf_printf(&body, "%.0f %d 0 0  # from %.0f bytes: %s\n",
                                          e[k].m[m].lo, e[k].m[m].id, e[k].m[m].lo,
                                          e[k].m[m].name != NULL ? e[k].m[m].name
                                                                 : "coll_tuned's own decision");
                    }
                }
            }
            free_entries(e, ne);
        }
    }
    if (none != NULL) {
        *none = (ncoll == 0);
    }
    cg_rep_buf_printf(&b,
                      "# Open MPI 4.1 coll_tuned dynamic rules, written by collgen tune from "
                      "selection-openmpi.json (campaign %s).\n"
                      "# Use: OMPI_MCA_coll_tuned_use_dynamic_rules=1 "
                      "OMPI_MCA_coll_tuned_dynamic_rules_filename=<this file>.\n"
                      "# Projected onto nodes of %d ranks (a communicator of p ranks has "
                      "min(p, %d) per node); algorithm 0: coll_tuned decides.\n"
                      "# Layout: collectives; per collective its id, communicator sizes; per "
                      "size the smallest p, message sizes; per message size\n"
                      "# 'bytes algorithm fan-in/out segment-size' (bytes as count x type size, "
                      "x ranks for alltoall).\n%d  # collectives\n",
                      cg_rep_campaign_id(t->c), ppn_node, ppn_node, ncoll);
    cg_rep_buf_add(&b, body.s != NULL ? body.s : "");
    cg_rep_buf_fini(&body);
    if (b.failed) {
        cg_rep_buf_fini(&b);
        return NULL;
    }
    return cg_rep_buf_take(&b);
}

/* ---- MPICH's CSEL JSON ------------------------------------------------------------ */

static const struct {
    const char *collective;
    const char *csel;    /* "collective=<csel>" */
    const char *prefix;  /* MPIR_<Prefix>_intra_<algorithm> */
    const char *msgsize; /* the condition whose measure is size_B */
} mpich_colls[] = {
    {"allreduce", "allreduce", "Allreduce", "avg_msg_size"},
    {"bcast", "bcast", "Bcast", "avg_msg_size"},
    {"reduce", "reduce", "Reduce", "avg_msg_size"},
    {"allgather", "allgather", "Allgather", "total_msg_size"},
};

/* Where an algorithm cannot serve every call, the conditions under which
 * it can, as MPICH's own selection guards it (its comm_type=intra trees):
 * reduce_scatter_allgather and reduce_scatter_gather need a built-in op and
 * count >= pof2(p) (MPICH asserts HANDLE_IS_BUILTIN(op) otherwise; seen
 * with a user op); smp a commutative op. Elsewhere MPICH's own subtree
 * decides. Why: the campaign measured built-in ops; a file that makes a
 * user-op call abort is no tuning. */
static const struct {
    const char *collective, *algorithm;
    int builtin_op, pof2_count, commutative;
} mpich_guards[] = {
    {"allreduce", "reduce_scatter_allgather", 1, 1, 0},
    {"reduce", "reduce_scatter_gather", 1, 1, 0},
    {"allreduce", "smp", 0, 0, 1},
    {"reduce", "smp", 0, 0, 1},
    {"bcast", "smp", 0, 0, 0},
};

/* {"algorithm=...": {}} under the algorithm's guards, intra elsewhere. */
static cJSON *mpich_leaf(const char *collective, const char *key, const cJSON *intra)
{
    const char *alg = strstr(key, "_intra_");
    alg = (alg != NULL) ? alg + 7 : "";
    cJSON *leaf = cJSON_CreateObject();
    cJSON_AddObjectToObject(leaf, key);
    for (size_t i = 0; i < sizeof mpich_guards / sizeof mpich_guards[0]; i++) {
        if (strcmp(mpich_guards[i].collective, collective) != 0 ||
            strcmp(mpich_guards[i].algorithm, alg) != 0) {
            continue;
        }
        /* Innermost first: each guard wraps what is inside it. */
        if (mpich_guards[i].pof2_count) {
            cJSON *g = cJSON_CreateObject();
            cJSON_AddItemToObject(g, "count<pow2", cJSON_Duplicate(intra, 1));
            cJSON_AddItemToObject(g, "count=any", leaf);
            leaf = g;
        }
        if (mpich_guards[i].builtin_op) {
            cJSON *g = cJSON_CreateObject();
            cJSON_AddItemToObject(g, "is_op_built_in=yes", leaf);
            cJSON_AddItemToObject(g, "is_op_built_in=no", cJSON_Duplicate(intra, 1));
            leaf = g;
        }
        if (mpich_guards[i].commutative) {
            cJSON *g = cJSON_CreateObject();
            cJSON_AddItemToObject(g, "is_commutative=yes", leaf);
            cJSON_AddItemToObject(g, "is_commutative=no", cJSON_Duplicate(intra, 1));
            leaf = g;
        }
    }
    return leaf;
}

/* The base (MPICH's own selection, tune.c finds it) must name the
 * function, or MPICH would reject the file. */
static const cJSON *mpich_base;
static size_t mpich_ci;
static char mpich_names[64][128];
static size_t mpich_nnames;

static int has_algorithm(const cJSON *j, const char *key)
{
    for (const cJSON *c = (j != NULL) ? j->child : NULL; c != NULL; c = c->next) {
        if (c->string != NULL && strcmp(c->string, key) == 0) {
            return 1;
        }
        if (has_algorithm(c, key)) {
            return 1;
        }
    }
    return 0;
}

static int mpich_accept(const struct cg_tune_class *k, const char **name)
{
    *name = NULL;
    if (strcmp(k->kind, "native") != 0 || strcmp(k->alg, "default") == 0 ||
        mpich_nnames >= sizeof mpich_names / sizeof mpich_names[0]) {
        return 0;
    }
    char *key = mpich_names[mpich_nnames];
    /* Why: MPICH's CVAR value nb names MPIR_<Coll>_allcomm_nb. */
    if (strcmp(k->alg, "nb") == 0) {
        snprintf(key, sizeof mpich_names[0], "algorithm=MPIR_%s_allcomm_nb",
                 mpich_colls[mpich_ci].prefix);
    } else {
        snprintf(key, sizeof mpich_names[0], "algorithm=MPIR_%s_intra_%s",
                 mpich_colls[mpich_ci].prefix, k->alg);
    }
    if (!has_algorithm(mpich_base, key)) {
        return 0;
    }
    mpich_nnames++;
    *name = key;
    return 1;
}

char *cg_tune_mpich_csel(const struct cg_tune *t, const char *base_text, int ppn_node,
                         int *none, char *why, size_t nwhy)
{
    *none = 1;
    cJSON *base = cJSON_Parse(base_text);
    if (!cJSON_IsObject(base)) {
        snprintf(why, nwhy, "MPICH's own selection is not JSON");
        cJSON_Delete(base);
        return strdup("");
    }
    mpich_base = base;
    int changed = 0;
    for (size_t c = 0; c < sizeof mpich_colls / sizeof mpich_colls[0]; c++) {
        for (size_t i = 0; i < t->ngroups; i++) {
            const struct cg_tune_group *g = &t->groups[i];
            if (strcmp(g->library, "mpich") != 0 ||
                strcmp(g->collective, mpich_colls[c].collective) != 0) {
                continue;
            }
            char ckey[64];
            snprintf(ckey, sizeof ckey, "collective=%s", mpich_colls[c].csel);
            cJSON *coll = cJSON_GetObjectItemCaseSensitive(base, ckey);
            cJSON *intra = cJSON_GetObjectItemCaseSensitive(coll, "comm_type=intra");
            if (intra == NULL) {
                continue; /* no intra subtree to keep for the default's ranges */
            }
            mpich_ci = c;
            mpich_nnames = 0;
            size_t ne;
            struct commrule *e = project(g, ppn_node, mpich_accept, &ne);
            if (e == NULL) {
                cJSON_Delete(base);
                return NULL;
            }
            if (!any_named(e, ne)) {
                free_entries(e, ne);
                continue;
            }
            /* Why nested: MPICH tries a node's keys in order and descends
             * into the first that holds; the default's own subtree, kept
             * under our conditions, decides the ranges we leave to it. */
            cJSON *ours = cJSON_CreateObject();
            for (size_t k = 0; k < ne; k++) {
                char key[64];
                if (k + 1 < ne) {
                    snprintf(key, sizeof key, "comm_size<%.0f", e[k + 1].plo);
                } else {
                    snprintf(key, sizeof key, "comm_size=any");
                }
                cJSON *byp = cJSON_AddObjectToObject(ours, key);
                for (size_t m = 0; m < e[k].nm; m++) {
                    char mk[96];
                    if (m + 1 < e[k].nm) {
                        snprintf(mk, sizeof mk, "%s<%.0f", mpich_colls[c].msgsize,
                                 e[k].m[m + 1].lo);
                    } else {
                        snprintf(mk, sizeof mk, "%s=any", mpich_colls[c].msgsize);
                    }
                    if (e[k].m[m].name != NULL) {
                        cJSON_AddItemToObject(
                            byp, mk, mpich_leaf(g->collective, e[k].m[m].name, intra));
                    } else {
                        cJSON_AddItemToObject(byp, mk, cJSON_Duplicate(intra, 1));
                    }
                }
            }
            cJSON_ReplaceItemInObjectCaseSensitive(coll, "comm_type=intra", ours);
            free_entries(e, ne);
            changed = 1;
        }
    }
    char *s = NULL;
    if (changed) {
        *none = 0;
        s = cJSON_Print(base);
    } else {
        snprintf(why, nwhy, "no MPICH rule names a forced native algorithm");
        s = strdup("");
    }
    cJSON_Delete(base);
    return s;
}

/* ---- the NCCL tuner plugin's CSV ------------------------------------------------------ */

/* NCCL's names for NCCL_ALGO values (the platform's table: "Ring", "Tree",
 * ...); the plugin (harness/nccl/) maps them to NCCL's indices. */
char *cg_tune_nccl_csv(const struct cg_tune *t, int *none)
{
    struct cg_rep_buf b;
    cg_rep_buf_init(&b);
    cg_rep_buf_printf(&b, "# collgen tune: NCCL tuner plugin table (campaign %s); "
                          "harness/nccl/README.md\n"
                          "collective,min_bytes,max_bytes,min_nodes,max_nodes,min_ranks,"
                          "max_ranks,algorithm,protocol,channels\n",
                      cg_rep_campaign_id(t->c));
    int n = 0;
    for (size_t i = 0; i < t->ngroups; i++) {
        const struct cg_tune_group *g = &t->groups[i];
        if (strcmp(g->library, "nccl") != 0) {
            continue;
        }
        for (size_t r = 0; r < g->nrules; r++) {
            const struct cg_tune_rule *ru = &g->rules[r];
            const struct cg_tune_class *k = &g->classes[ru->cls];
            if (strcmp(k->kind, "native") != 0 || strcmp(k->alg, "default") == 0) {
                continue;
            }
            /* Nodes of a box: p / ppn over its corners. */
            double nlo = ceil(ru->plo / ru->qhi), nhi = floor(ru->phi / ru->qlo);
            if (nlo < 1) {
                nlo = 1;
            }
            if (nhi > CG_TUNE_P_MAX) {
                nhi = CG_TUNE_P_MAX;
            }
            const char *proto = "any";
            int channels = -1;
            const cJSON *pj = (k->params != NULL) ? cJSON_Parse(k->params) : NULL;
            const cJSON *pp = cJSON_GetObjectItemCaseSensitive(pj, "protocol");
            const cJSON *pc = cJSON_GetObjectItemCaseSensitive(pj, "channels");
            char protobuf[32] = "";
            if (cJSON_IsString(pp)) {
                snprintf(protobuf, sizeof protobuf, "%s", pp->valuestring);
                proto = protobuf;
            }
            if (cJSON_IsNumber(pc)) {
                channels = pc->valueint;
            }
            cJSON_Delete((cJSON *)pj);
            cg_rep_buf_printf(&b, "%s,%.0f,%.0f,%.0f,%.0f,%.0f,%.0f,%s,%s,%d\n", g->collective,
                              ru->blo, ru->bhi, nlo, nhi, ru->plo, ru->phi, k->alg, proto,
                              channels);
            n++;
        }
    }
    if (none != NULL) {
        *none = (n == 0);
    }
    if (b.failed) {
        cg_rep_buf_fini(&b);
        return NULL;
    }
    return cg_rep_buf_take(&b);
}
