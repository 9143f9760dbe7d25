/* emit_registry.c - pass 6: the files that know every schedule at once.
 *
 *   emitted/mpi/collgen.h        prototypes and timing tag ids (named constants)
 *   emitted/mpi/all.c            includes every emitted/mpi/<schedule>.c (one
 *                                translation unit per build flavour)
 *   emitted/registry.c           cg_algos[] (runtime/cg_algo.h)
 *   emitted/tags.c               cg_tag_infos[] (runtime/cg_algo.h): data only
 *   emitted/cuda/collgen_cuda.h  prototypes of the GPU collectives (their tags
 *                                are collgen.h's)
 *   emitted/cuda/all.cu          includes every emitted/cuda/<schedule>.cu, and
 *                                cg_cu_algos[] (runtime/cuda/cg_cuda_algo.h)
 *   emitted/registry.json        every schedule for programs that do not link
 *                                the generator (the harness, scripts): name,
 *                                collective, file and its hash, params, topology
 *                                and fallback, GPU twin, tags
 *   emitted/collectives.json     the table of collectives (runtime/cg_colls.h),
 *                                for the plots
 *
 * Why a schedule's lines depend on it alone: a reviewer reads the diff of a
 * new schedule as the lines it adds. Tag ids are the schedule's own numbers
 * (0 for the call, then phases, rounds and steps in order, check.c) plus a
 * base, and the base is assigned where the schedule is registered in
 * collgen.h: the offset of a member of struct cg_tag_layout as long as the
 * schedule has tags. Counts are sizeof expressions, never numbers written
 * here. The JSON files are written with cJSON.
 *
 * It also removes generated files whose schedule is gone, so that
 * adding or deleting a schedule touches exactly one file.
 */
#include <cjson/cJSON.h>
#include <dirent.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "emit_common.h"

/* A schedule's ranged parameters as `static const struct cg_param_info
 * params_<name>[]` (runtime/cg_algo.h), for both tables; nothing when it has
 * none. Returns how many. */
static int param_table(struct cg_out *o, const struct cg_schedule *s)
{
    int nranged = 0;
    for (int k = 0; k < s->nparams; k++) {
        nranged += s->params[k].ranged;
    }
    if (nranged == 0) {
        return 0;
    }
    cg_out_line(o, "static const struct cg_param_info params_%s[] = {", s->name);
    for (int k = 0; k < s->nparams; k++) {
        if (s->params[k].ranged) {
            cg_out_line(o, "    { \"%s\", %lld, %lld, %lld },", s->params[k].name,
                        (long long)s->params[k].value, (long long)s->params[k].lo,
                        (long long)s->params[k].hi);
        }
    }
    cg_out_line(o, "};");
    cg_out_blank(o);
    return nranged;
}

/* Tag ids of one schedule in id order, with name, kind and parent. */
struct tag_row {
    char constant[256]; /* CG_TAG_... */
    char path[400];     /* schedule/phase/round/step */
    const char *kind;   /* CG_TAG_KIND_... */
    int parent;         /* the enclosing tag's row, -1 for the call */
};

static int tag_rows(const struct cg_schedule *s, struct tag_row *rows)
{
    char su[64], pu[64], lu[64];
    cg_emit_upper(su, sizeof(su), s->name);
    int n = 0;
    struct tag_row *r = &rows[n++];
    snprintf(r->constant, sizeof(r->constant), "CG_TAG_%s", su);
    snprintf(r->path, sizeof(r->path), "%s", s->name);
    r->kind = "CG_TAG_KIND_CALL";
    r->parent = -1;
    for (int pi = 0; pi < s->nphases; pi++) {
        const struct cg_phase *ph = &s->phases[pi];
        cg_emit_upper(pu, sizeof(pu), ph->name);
        int phase_row = n, parent = n;
        r = &rows[n++];
        snprintf(r->constant, sizeof(r->constant), "CG_TAG_%s__%s", su, pu);
        snprintf(r->path, sizeof(r->path), "%s/%s", s->name, ph->name);
        r->kind = "CG_TAG_KIND_PHASE";
        r->parent = 0;
        char prefix[200];
        snprintf(prefix, sizeof(prefix), "%s/%s", s->name, ph->name);
        if (ph->rounds != CG_ROUNDS_NONE) {
            parent = n;
            r = &rows[n++];
            snprintf(r->constant, sizeof(r->constant), "CG_TAG_%s__%s__ROUND", su, pu);
            snprintf(r->path, sizeof(r->path), "%s/%s/round", s->name, ph->name);
            r->kind = "CG_TAG_KIND_ROUND";
            r->parent = phase_row;
            snprintf(prefix, sizeof(prefix), "%s/%s/round", s->name, ph->name);
        }
        for (int si = 0; si < ph->nsteps; si++) {
            const struct cg_step *st = &ph->steps[si];
            cg_emit_upper(lu, sizeof(lu), st->name);
            r = &rows[n++];
            snprintf(r->constant, sizeof(r->constant), "CG_TAG_%s__%s__%s", su, pu, lu);
            snprintf(r->path, sizeof(r->path), "%s/%s", prefix, st->name);
            r->kind = st->kind == CG_STEP_EXCHANGE ? "CG_TAG_KIND_COMM"
                      : st->kind == CG_STEP_REDUCE ? "CG_TAG_KIND_REDUCE"
                                                   : "CG_TAG_KIND_COPY";
            r->parent = parent;
        }
    }
    if (n != s->ntags) {
        cg_panic("%s: %d tag rows for %d tags", s->name, n, s->ntags);
    }
    for (int i = 0; i < n; i++) {
        if (rows[i].parent >= i || (i > 0 && rows[i].parent < 0)) {
            cg_panic("%s: tag %d's parent %d does not come before it", s->name, i, rows[i].parent);
        }
    }
    return n;
}

/* A C string literal for checked text (printable ASCII, no backslash). */
static void c_string(struct cg_out *o, const char *text)
{
    cg_out_raw(o, "\"");
    for (const char *c = text; *c; c++) {
        if (*c == '"' || *c == '?') {
            cg_out_raw(o, "\\%c", *c);
        } else {
            cg_out_raw(o, "%c", *c);
        }
    }
    cg_out_raw(o, "\"");
}

/* Deletes out_dir/<sub>/X<ext> files that collgen generated for a schedule
 * that is not in the list any more (or, with gpu, whose collective the GPU
 * backend does not have). all<ext> and files collgen did not generate are
 * left alone. */
static void remove_stale(struct cg_gen *g, const struct cg_schedule *const *s, int n,
                         const char *sub, const char *ext, int gpu)
{
    char dir[4096], all[16];
    snprintf(dir, sizeof(dir), "%s/%s", g->opt->out_dir, sub);
    snprintf(all, sizeof(all), "all%s", ext);
    DIR *d = opendir(dir);
    if (d == NULL) {
        return;
    }
    const char *mark = "/* Generated by collgen from schedules/";
    size_t elen = strlen(ext);
    for (struct dirent *e = readdir(d); e; e = readdir(d)) {
        size_t len = strlen(e->d_name);
        if (len <= elen || strcmp(e->d_name + len - elen, ext) != 0 ||
            strcmp(e->d_name, all) == 0) {
            continue;
        }
        int known = 0;
        for (int i = 0; i < n && !known; i++) {
            known = strlen(s[i]->name) == len - elen &&
                    strncmp(s[i]->name, e->d_name, len - elen) == 0 &&
                    (!gpu || cg_emit_cuda_has(s[i]));
        }
        if (known) {
            continue;
        }
        char path[4200], first[128] = "";
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        FILE *f = fopen(path, "r");
        if (f == NULL) {
            continue;
        }
        if (fgets(first, sizeof(first), f) == NULL) {
            first[0] = '\0';
        }
        fclose(f);
        if (strncmp(first, mark, strlen(mark)) == 0) {
            remove(path);
        }
    }
    closedir(d);
}

/* Whether name is among the n schedules. */
static int listed(const struct cg_schedule *const *s, int n, const char *name)
{
    for (int i = 0; i < n; i++) {
        if (strcmp(s[i]->name, name) == 0) {
            return 1;
        }
    }
    return 0;
}

/* Prototypes of the generated schedules the listed ones call or fall back
 * to without being listed themselves (an emit of some files only), once
 * each: gpu 0 the MPI functions, 1 the GPU ones (fallbacks only). */
static void external_prototypes(struct cg_out *o, const struct cg_schedule *const *s, int n,
                                int gpu)
{
    const struct cg_schedule *seen[256];
    int nseen = 0;
    for (int i = 0; i < n; i++) {
        if (gpu && !cg_emit_cuda_has(s[i])) {
            continue;
        }
        for (int pi = -1; pi < s[i]->nphases; pi++) {
            for (int k = 0; k < (pi < 0 ? 1 : s[i]->phases[pi].nsteps); k++) {
                const struct cg_schedule *x =
                    pi < 0 ? s[i]->fallback_s
                           : (gpu ? NULL : s[i]->phases[pi].steps[k].callee);
                int known = x == NULL || listed(s, n, x->name);
                for (int j = 0; j < nseen && !known; j++) {
                    known = seen[j] == x;
                }
                if (known || nseen == (int)(sizeof(seen) / sizeof(seen[0]))) {
                    continue;
                }
                char cu[64];
                cg_emit_upper(cu, sizeof(cu), cg_colls[x->coll].name);
                if (nseen == 0) {
                    cg_out_line(o, "/* Called by the schedules above, emitted elsewhere. */");
                }
                cg_out_line(o, "int %s%s(CG_%s%s_ARGS); /* %s */", gpu ? "cgcu_" : "cg_", x->name,
                            gpu ? "CU_" : "", cu, x->file);
                seen[nseen++] = x;
            }
        }
    }
}

/* emitted/cuda/collgen_cuda.h and emitted/cuda/all.cu: the GPU collectives
 * of the schedules the GPU backend has, in the order of the rest. */
static int emit_cuda_files(struct cg_gen *g, const struct cg_schedule *const *s, int n)
{
    char path[4096];
    int rc = 0;
    struct cg_out o;
    cg_out_init(&o);
    cg_out_line(&o, "/* Generated by collgen from schedules/. DO NOT EDIT. */");
    cg_out_blank(&o);
    cg_out_line(&o, "/* The generated GPU collectives. Their signatures, and the table that "
                    "all.cu");
    cg_out_line(&o, " * defines, are in runtime/cuda/cg_cuda_algo.h; their timing tags have "
                    "the ids of");
    cg_out_line(&o, " * emitted/mpi/collgen.h, included after cg_cuda.h so that cg.h has C "
                    "linkage in");
    cg_out_line(&o, " * C++. C11 and C++. */");
    cg_out_line(&o, "#ifndef COLLGEN_CUDA_H");
    cg_out_line(&o, "#define COLLGEN_CUDA_H");
    cg_out_blank(&o);
    cg_out_line(&o, "#include \"cg_cuda.h\"");
    cg_out_line(&o, "#include \"cg_cuda_algo.h\"");
    cg_out_blank(&o);
    cg_out_line(&o, "#ifdef __cplusplus");
    cg_out_line(&o, "extern \"C\" {");
    cg_out_line(&o, "#endif");
    cg_out_blank(&o);
    cg_out_line(&o, "#include \"collgen.h\"");
    cg_out_blank(&o);
    for (int i = 0; i < n; i++) {
        if (!cg_emit_cuda_has(s[i])) {
            continue;
        }
        char cu[64];
        cg_emit_upper(cu, sizeof(cu), cg_colls[s[i]->coll].name);
        cg_out_line(&o, "int cgcu_%s(CG_CU_%s_ARGS); /* %s */", s[i]->name, cu, s[i]->file);
    }
    external_prototypes(&o, s, n, 1);
    cg_out_blank(&o);
    cg_out_line(&o, "#ifdef __cplusplus");
    cg_out_line(&o, "}");
    cg_out_line(&o, "#endif");
    cg_out_blank(&o);
    cg_out_line(&o, "#endif");
    snprintf(path, sizeof(path), "%s/cuda/collgen_cuda.h", g->opt->out_dir);
    rc |= cg_emit_write(g, &o, path);
    cg_out_fini(&o);

    cg_out_init(&o);
    cg_out_line(&o, "/* Generated by collgen from schedules/. DO NOT EDIT. */");
    cg_out_blank(&o);
    cg_out_line(&o, "/* Every generated GPU collective in one translation unit, so that the "
                    "build");
    cg_out_line(&o, " * needs no edit when a schedule is added, and their table cg_cu_algos[]");
    cg_out_line(&o, " * (runtime/cuda/cg_cuda_algo.h). Each file also compiles alone. */");
    for (int i = 0; i < n; i++) {
        if (cg_emit_cuda_has(s[i])) {
            cg_out_line(&o, "#include \"%s.cu\"", s[i]->name);
        }
    }
    for (int i = 0; i < n; i++) {
        if (!cg_emit_cuda_has(s[i])) {
            continue;
        }
        char cu[64];
        cg_emit_upper(cu, sizeof(cu), cg_colls[s[i]->coll].name);
        cg_out_blank(&o);
        int nranged = param_table(&o, s[i]);
        cg_out_line(&o, "static const struct cg_cu_algo algo_%s = {", s[i]->name);
        o.indent++;
        cg_out_line(&o, "\"%s\", /* name */", s[i]->name);
        cg_out_line(&o, "CG_COLL_%s, /* coll */", cu);
        cg_out_raw(&o, "    ");
        c_string(&o, s[i]->summary);
        cg_out_raw(&o, ", /* summary */\n");
        cg_out_line(&o, "\"%s\", /* file */", s[i]->file);
        cg_out_line(&o, "CG_TAG_BASE(%s), /* tag_first */", s[i]->name);
        cg_out_line(&o, "CG_TAG_COUNT(%s), /* tag_count */", s[i]->name);
        /* The function in its collective's field, NULL in the others: the
         * fields are the table's rows with a GPU twin, in table order. */
        for (int c = 0; c < CG_C_COUNT_; c++) {
            if (!cg_emit_cuda_supports((enum cg_coll_kind)c)) {
                continue;
            }
            if (c == (int)s[i]->coll) {
                cg_out_line(&o, "cgcu_%s, /* %s */", s[i]->name, cg_colls[c].name);
            } else {
                cg_out_line(&o, "NULL, /* %s */", cg_colls[c].name);
            }
        }
        if (nranged > 0) {
            cg_out_line(&o, "params_%s, /* params */", s[i]->name);
        } else {
            cg_out_line(&o, "NULL, /* params */");
        }
        cg_out_line(&o, "%d /* nparams */", nranged);
        o.indent--;
        cg_out_line(&o, "};");
    }
    cg_out_blank(&o);
    cg_out_line(&o, "const struct cg_cu_algo *const cg_cu_algos[] = {");
    for (int i = 0; i < n; i++) {
        if (cg_emit_cuda_has(s[i])) {
            cg_out_line(&o, "    &algo_%s,", s[i]->name);
        }
    }
    cg_out_line(&o, "    NULL");
    cg_out_line(&o, "};");
    cg_out_line(&o, "const int cg_cu_nalgos = (int)(sizeof(cg_cu_algos) / sizeof(cg_cu_algos[0])) - 1;");
    snprintf(path, sizeof(path), "%s/cuda/all.cu", g->opt->out_dir);
    rc |= cg_emit_write(g, &o, path);
    cg_out_fini(&o);
    return rc ? -1 : 0;
}

/* ---- the JSON files (cJSON) ------------------------------------------------ */

/* Writes the document (and deletes it): formatted, one value per line, so
 * that a schedule's entry is lines of its own. */
static int write_json(struct cg_gen *g, cJSON *doc, const char *name)
{
    char path[4096];
    char *text = cJSON_Print(doc);
    cJSON_Delete(doc);
    if (text == NULL) {
        cg_panic("out of memory printing %s", name);
    }
    struct cg_out o;
    cg_out_init(&o);
    cg_out_raw(&o, "%s\n", text);
    free(text);
    snprintf(path, sizeof(path), "%s/%s", g->opt->out_dir, name);
    int rc = cg_emit_write(g, &o, path);
    cg_out_fini(&o);
    return rc;
}

static const char *const kind_names[] = { "call", "phase", "round", "comm", "reduce", "copy" };

static const char *tag_kind_word(const char *constant)
{
    static const char *const constants[] = { "CG_TAG_KIND_CALL", "CG_TAG_KIND_PHASE",
                                             "CG_TAG_KIND_ROUND", "CG_TAG_KIND_COMM",
                                             "CG_TAG_KIND_REDUCE", "CG_TAG_KIND_COPY" };
    for (size_t i = 0; i < sizeof(constants) / sizeof(constants[0]); i++) {
        if (strcmp(constant, constants[i]) == 0) {
            return kind_names[i];
        }
    }
    cg_panic("tag kind %s", constant);
}

/* emitted/registry.json: what the harness needs of every schedule without
 * parsing schedules/ again. */
static int emit_registry_json(struct cg_gen *g, const struct cg_schedule *const *s, int n,
                              struct tag_row *rows)
{
    cJSON *doc = cJSON_CreateObject();
    cJSON_AddStringToObject(doc, "generator", "collgen");
    cJSON_AddNumberToObject(doc, "format", 1);
    cJSON *list = cJSON_AddArrayToObject(doc, "schedules");
    int k = 0, rc = 0;
    for (int i = 0; i < n; i++) {
        cJSON *e = cJSON_CreateObject();
        char hash[40] = "";
        struct cg_arena a = { 0 };
        size_t len = 0;
        char *text = cg_read_file(&a, &g->diag, s[i]->file, &len);
        if (text == NULL) {
            rc = -1;
        } else {
            snprintf(hash, sizeof(hash), "fnv1a64:%016" PRIx64, cg_fnv1a64(text, len));
        }
        cg_arena_fini(&a);
        cJSON_AddStringToObject(e, "name", s[i]->name);
        cJSON_AddStringToObject(e, "collective", cg_colls[s[i]->coll].name);
        cJSON_AddStringToObject(e, "file", s[i]->file);
        cJSON_AddStringToObject(e, "file_hash", hash);
        cJSON_AddStringToObject(e, "summary", s[i]->summary);
        cJSON_AddBoolToObject(e, "commutative_only", s[i]->commutative);
        cJSON_AddBoolToObject(e, "contiguous_only", cg_zero_fills(s[i]));
        cJSON *params = cJSON_AddArrayToObject(e, "params");
        for (int j = 0; j < s[i]->nparams; j++) {
            cJSON *pj = cJSON_CreateObject();
            cJSON_AddStringToObject(pj, "name", s[i]->params[j].name);
            cJSON_AddNumberToObject(pj, "default", (double)s[i]->params[j].value);
            cJSON_AddNumberToObject(pj, "min", (double)s[i]->params[j].lo);
            cJSON_AddNumberToObject(pj, "max", (double)s[i]->params[j].hi);
            cJSON_AddBoolToObject(pj, "ranged", s[i]->params[j].ranged);
            cJSON_AddItemToArray(params, pj);
        }
        cJSON_AddBoolToObject(e, "topology", s[i]->topology);
        if (s[i]->topology) {
            cJSON_AddStringToObject(e, "fallback", s[i]->fallback);
        } else {
            cJSON_AddNullToObject(e, "fallback");
        }
        cJSON_AddBoolToObject(e, "gpu", cg_emit_cuda_has(s[i]));
        char file[300];
        snprintf(file, sizeof(file), "mpi/%s.c", s[i]->name);
        cJSON_AddStringToObject(e, "mpi", file);
        if (cg_emit_cuda_has(s[i])) {
            snprintf(file, sizeof(file), "cuda/%s.cu", s[i]->name);
            cJSON_AddStringToObject(e, "cuda", file);
        } else {
            cJSON_AddNullToObject(e, "cuda");
        }
        /* Tags by the schedule's own ids (collgen.h adds its base): path,
         * kind, the enclosing tag's id. */
        cJSON *tags = cJSON_AddArrayToObject(e, "tags");
        for (int t = 0; t < s[i]->ntags; t++, k++) {
            cJSON *tj = cJSON_CreateObject();
            cJSON_AddStringToObject(tj, "path", rows[k].path);
            cJSON_AddStringToObject(tj, "kind", tag_kind_word(rows[k].kind));
            cJSON_AddNumberToObject(tj, "parent", rows[k].parent);
            cJSON_AddItemToArray(tags, tj);
        }
        cJSON_AddItemToArray(list, e);
    }
    return write_json(g, doc, "registry.json") | rc;
}

/* emitted/collectives.json: runtime/cg_colls.h's table, column by column. */
static int emit_collectives_json(struct cg_gen *g)
{
    static const char *const bufs[] = { [CG_BUFS_SEND_RECV] = "send_recv", [CG_BUFS_ONE] = "one",
                                        [CG_BUFS_NONE] = "none" };
    static const char *const combine[] = { [CG_COMBINE_NONE] = "none", [CG_COMBINE_OP] = "op",
                                           [CG_COMBINE_UNION] = "union" };
    static const char *const shape[] = { [CG_SHAPE_SPLIT] = "split", [CG_SHAPE_UNIFORM] = "uniform",
                                         [CG_SHAPE_ONE] = "one", [CG_SHAPE_TOKEN] = "token" };
    static const char *const input[] = { [CG_INPUT_NONE] = "none", [CG_INPUT_P] = "p",
                                         [CG_INPUT_B] = "b" };
    static const char *const in_place[] = { [CG_IN_PLACE_NONE] = "none",
                                            [CG_IN_PLACE_SEND] = "send",
                                            [CG_IN_PLACE_SEND_AT_ROOT] = "send_at_root",
                                            [CG_IN_PLACE_RECV_AT_ROOT] = "recv_at_root" };
    static const char *const size[] = { [CG_SIZE_COUNT] = "count", [CG_SIZE_P_COUNT] = "p * count",
                                        [CG_SIZE_NONE] = "0" };
    static const char *const busbw[] = { [CG_BUSBW_ONE] = "1", [CG_BUSBW_PM1] = "(p - 1) / p",
                                         [CG_BUSBW_2PM1] = "2 * (p - 1) / p",
                                         [CG_BUSBW_NONE] = NULL };
    static const char *const result[] = { [CG_RESULT_ALL] = "all", [CG_RESULT_AT_ROOT] = "at_root",
                                          [CG_RESULT_FROM_ROOT] = "from_root",
                                          [CG_RESULT_PREFIX] = "prefix",
                                          [CG_RESULT_EXCL_PREFIX] = "excl_prefix",
                                          [CG_RESULT_NONE] = "none" };
    cJSON *doc = cJSON_CreateObject();
    cJSON_AddStringToObject(doc, "generator", "collgen");
    cJSON_AddNumberToObject(doc, "format", 1);
    cJSON_AddStringToObject(doc, "source", "runtime/cg_colls.h");
    cJSON *list = cJSON_AddArrayToObject(doc, "collectives");
    for (int c = 0; c < CG_C_COUNT_; c++) {
        const struct cg_coll_info *ci = &cg_colls[c];
        cJSON *e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "name", ci->name);
        cJSON_AddStringToObject(e, "mpi", ci->mpi);
        cJSON_AddStringToObject(e, "bufs", bufs[ci->bufs]);
        cJSON_AddBoolToObject(e, "reduces", ci->reduces);
        cJSON_AddStringToObject(e, "combine", combine[ci->combine]);
        cJSON_AddBoolToObject(e, "rooted", ci->rooted);
        cJSON_AddStringToObject(e, "shape", shape[ci->shape]);
        cJSON_AddStringToObject(e, "input", input[ci->input]);
        cJSON_AddStringToObject(e, "in_place", in_place[ci->in_place]);
        cJSON_AddStringToObject(e, "size_B", size[ci->size]);
        if (busbw[ci->busbw] != NULL) {
            cJSON_AddStringToObject(e, "busbw_factor", busbw[ci->busbw]);
        } else {
            cJSON_AddNullToObject(e, "busbw_factor");
        }
        cJSON_AddStringToObject(e, "args", ci->args);
        if (ci->nccl != NULL) {
            cJSON_AddStringToObject(e, "gpu_args", ci->cu_args);
            cJSON_AddStringToObject(e, "nccl", ci->nccl);
        } else {
            cJSON_AddNullToObject(e, "gpu_args");
            cJSON_AddNullToObject(e, "nccl");
        }
        if (ci->nccl_log != NULL) {
            cJSON_AddStringToObject(e, "nccl_log", ci->nccl_log);
        } else {
            cJSON_AddNullToObject(e, "nccl_log");
        }
        cJSON_AddStringToObject(e, "result", result[ci->result]);
        cJSON_AddItemToArray(list, e);
    }
    return write_json(g, doc, "collectives.json");
}

int cg_emit_registry(struct cg_gen *g, const struct cg_schedule *const *s, int n)
{
    char path[4096];
    int rc = 0, total = 0;
    struct tag_row *rows = NULL;
    for (int i = 0; i < n; i++) {
        total += s[i]->ntags;
    }
    rows = calloc((size_t)(total + 1), sizeof(*rows));
    if (rows == NULL) {
        cg_panic("out of memory");
    }
    int k = 0;
    for (int i = 0; i < n; i++) {
        k += tag_rows(s[i], rows + k);
    }

    /* collgen.h */
    struct cg_out o;
    cg_out_init(&o);
    cg_out_line(&o, "/* Generated by collgen from schedules/. DO NOT EDIT. */");
    cg_out_blank(&o);
    cg_out_line(&o, "/* The generated collectives and the ids of their timing tags. */");
    cg_out_line(&o, "#ifndef COLLGEN_H");
    cg_out_line(&o, "#define COLLGEN_H");
    cg_out_blank(&o);
    cg_out_line(&o, "#include <stddef.h>");
    cg_out_blank(&o);
    cg_out_line(&o, "#include \"cg.h\"");
    cg_out_line(&o, "#include \"cg_algo.h\"");
    cg_out_blank(&o);
    for (int i = 0; i < n; i++) {
        char cu[64];
        cg_emit_upper(cu, sizeof(cu), cg_colls[s[i]->coll].name);
        cg_out_line(&o, "int cg_%s(CG_%s_ARGS); /* %s */", s[i]->name, cu, s[i]->file);
    }
    external_prototypes(&o, s, n, 0);
    cg_out_blank(&o);
    cg_out_line(&o, "/* Timing tags. A schedule's ids are its base plus 0 (the call), 1, ... (its");
    cg_out_line(&o, " * phases, rounds and steps in order). The base is assigned here, where the");
    cg_out_line(&o, " * schedule registers: the offset of its member, one byte per tag, so that");
    cg_out_line(&o, " * adding a schedule adds lines and changes no id of another. */");
    cg_out_line(&o, "struct cg_tag_layout {");
    for (int i = 0; i < n; i++) {
        cg_out_line(&o, "    char %s[%d];", s[i]->name, s[i]->ntags);
    }
    cg_out_line(&o, "};");
    cg_out_line(&o, "#define CG_TAG_BASE(schedule) ((int)offsetof(struct cg_tag_layout, schedule))");
    cg_out_line(&o, "#define CG_TAG_COUNT(schedule) ((int)sizeof(((struct cg_tag_layout *)0)->schedule))");
    cg_out_line(&o, "#define CG_NTAGS ((int)sizeof(struct cg_tag_layout))");
    k = 0;
    for (int i = 0; i < n; i++) {
        cg_out_blank(&o);
        cg_out_line(&o, "enum { /* %s */", s[i]->file);
        for (int t = 0; t < s[i]->ntags; t++, k++) {
            if (t == 0) {
                cg_out_line(&o, "    %s = CG_TAG_BASE(%s),", rows[k].constant, s[i]->name);
            } else {
                cg_out_line(&o, "    %s,", rows[k].constant);
            }
        }
        cg_out_line(&o, "};");
    }
    cg_out_blank(&o);
    cg_out_line(&o, "#endif");
    snprintf(path, sizeof(path), "%s/mpi/collgen.h", g->opt->out_dir);
    rc |= cg_emit_write(g, &o, path);
    cg_out_fini(&o);

    /* all.c */
    cg_out_init(&o);
    cg_out_line(&o, "/* Generated by collgen from schedules/. DO NOT EDIT. */");
    cg_out_blank(&o);
    cg_out_line(&o, "/* Every generated collective in one translation unit, so that the build");
    cg_out_line(&o, " * needs no edit when a schedule is added. Each file also compiles alone. */");
    for (int i = 0; i < n; i++) {
        cg_out_line(&o, "#include \"%s.c\"", s[i]->name);
    }
    snprintf(path, sizeof(path), "%s/mpi/all.c", g->opt->out_dir);
    rc |= cg_emit_write(g, &o, path);
    cg_out_fini(&o);

    /* registry.c */
    cg_out_init(&o);
    cg_out_line(&o, "/* Generated by collgen from schedules/. DO NOT EDIT. */");
    cg_out_blank(&o);
    cg_out_line(&o, "#include \"collgen.h\"");
    for (int i = 0; i < n; i++) {
        cg_out_blank(&o);
        int nranged = param_table(&o, s[i]);
        cg_out_line(&o, "static const struct cg_algo algo_%s = {", s[i]->name);
        o.indent++;
        cg_out_line(&o, ".name = \"%s\",", s[i]->name);
        char cu[64];
        cg_emit_upper(cu, sizeof(cu), cg_colls[s[i]->coll].name);
        cg_out_line(&o, ".coll = CG_COLL_%s,", cu);
        cg_out_raw(&o, "    .summary = ");
        c_string(&o, s[i]->summary);
        cg_out_raw(&o, ",\n");
        cg_out_line(&o, ".file = \"%s\",", s[i]->file);
        cg_out_line(&o, ".commutative_only = %d,", s[i]->commutative);
        if (cg_zero_fills(s[i])) {
            cg_out_line(&o, ".contiguous_only = 1,");
        }
        cg_out_line(&o, ".tag_first = CG_TAG_BASE(%s),", s[i]->name);
        cg_out_line(&o, ".tag_count = CG_TAG_COUNT(%s),", s[i]->name);
        cg_out_line(&o, ".fn = { .%s = cg_%s },", cg_colls[s[i]->coll].name, s[i]->name);
        if (nranged > 0) {
            cg_out_line(&o, ".params = params_%s,", s[i]->name);
            cg_out_line(&o, ".nparams = %d,", nranged);
        }
        if (s[i]->topology) {
            cg_out_line(&o, ".topo = { 1, \"%s\" },", s[i]->fallback);
        }
        o.indent--;
        cg_out_line(&o, "};");
    }
    cg_out_blank(&o);
    cg_out_line(&o, "const struct cg_algo *const cg_algos[] = {");
    for (int i = 0; i < n; i++) {
        cg_out_line(&o, "    &algo_%s,", s[i]->name);
    }
    cg_out_line(&o, "    NULL");
    cg_out_line(&o, "};");
    cg_out_line(&o, "const int cg_nalgos = (int)(sizeof(cg_algos) / sizeof(cg_algos[0])) - 1;");
    snprintf(path, sizeof(path), "%s/registry.c", g->opt->out_dir);
    rc |= cg_emit_write(g, &o, path);
    cg_out_fini(&o);

    /* tags.c: data only, no function of either backend, so that the GPU
     * build (which has no MPI collectives) can name the tags too. */
    cg_out_init(&o);
    cg_out_line(&o, "/* Generated by collgen from schedules/. DO NOT EDIT. */");
    cg_out_blank(&o);
    cg_out_line(&o, "/* The timing tags of every schedule by id: path, kind, enclosing tag.");
    cg_out_line(&o, " * Both backends record the same ids (collgen.h). */");
    cg_out_line(&o, "#include \"collgen.h\"");
    cg_out_blank(&o);
    cg_out_line(&o, "const struct cg_tag_info cg_tag_infos[] = {");
    k = 0;
    for (int i = 0; i < n; i++) {
        for (int t = 0; t < s[i]->ntags; t++, k++) {
            const struct tag_row *r = &rows[k];
            if (r->parent < 0) {
                cg_out_line(&o, "    [%s] = { \"%s\", %s, -1 },", r->constant, r->path, r->kind);
            } else {
                cg_out_line(&o, "    [%s] = { \"%s\", %s, %s },", r->constant, r->path, r->kind,
                            rows[k - t + r->parent].constant);
            }
        }
    }
    cg_out_line(&o, "    [CG_NTAGS] = { NULL, CG_TAG_KIND_CALL, -1 }");
    cg_out_line(&o, "};");
    cg_out_line(&o, "const int cg_ntags = CG_NTAGS;");
    cg_out_line(&o, "_Static_assert(CG_NTAGS <= CG_TAG_CAPACITY, \"too many tags for the runtime\");");
    snprintf(path, sizeof(path), "%s/tags.c", g->opt->out_dir);
    rc |= cg_emit_write(g, &o, path);
    cg_out_fini(&o);

    rc |= emit_cuda_files(g, s, n);
    rc |= emit_registry_json(g, s, n, rows);
    rc |= emit_collectives_json(g);

    remove_stale(g, s, n, "mpi", ".c", 0);
    remove_stale(g, s, n, "cuda", ".cu", 1);
    free(rows);
    return rc ? -1 : 0;
}
