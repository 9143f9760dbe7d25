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
 *
 * It also removes generated files whose schedule is gone, so that
 * adding or deleting a schedule touches exactly one file.
 */
#include <dirent.h>
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
    int parent;         /* absolute id, -1 for the call */
};

static int tag_rows(const struct cg_schedule *s, int base, struct tag_row *rows)
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
        int phase_id = base + ph->tag_id, parent = phase_id;
        r = &rows[n++];
        snprintf(r->constant, sizeof(r->constant), "CG_TAG_%s__%s", su, pu);
        snprintf(r->path, sizeof(r->path), "%s/%s", s->name, ph->name);
        r->kind = "CG_TAG_KIND_PHASE";
        r->parent = base;
        char prefix[200];
        snprintf(prefix, sizeof(prefix), "%s/%s", s->name, ph->name);
        if (ph->rounds != CG_ROUNDS_NONE) {
            r = &rows[n++];
            snprintf(r->constant, sizeof(r->constant), "CG_TAG_%s__%s__ROUND", su, pu);
            snprintf(r->path, sizeof(r->path), "%s/%s/round", s->name, ph->name);
            r->kind = "CG_TAG_KIND_ROUND";
            r->parent = phase_id;
            parent = base + ph->round_tag_id;
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

/* The fields of struct cg_cu_algo that hold a function, in order. */
static const enum cg_coll_kind cuda_fields[] = { CG_C_ALLREDUCE, CG_C_ALLGATHER,
                                                 CG_C_REDUCE_SCATTER_BLOCK, CG_C_BCAST,
                                                 CG_C_ALLTOALL };

/* emitted/cuda/collgen_cuda.h and emitted/cuda/all.cu: the GPU collectives
 * of the schedules the GPU backend has, in the order of the rest. */
static int emit_cuda_files(struct cg_gen *g, const struct cg_schedule *const *s, int n,
                           const int *tag_base)
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
    int count = 0;
    for (int i = 0; i < n; i++) {
        if (cg_emit_cuda_has(s[i])) {
            cg_out_line(&o, "#include \"%s.cu\"", s[i]->name);
            count++;
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
        cg_out_line(&o, "%d, /* tag_first */", tag_base[i]);
        cg_out_line(&o, "%d, /* tag_count */", s[i]->ntags);
        /* The function in its collective's field, NULL in the others. */
        for (size_t f = 0; f < sizeof(cuda_fields) / sizeof(cuda_fields[0]); f++) {
            if (cuda_fields[f] == s[i]->coll) {
                cg_out_line(&o, "cgcu_%s, /* %s */", s[i]->name, cg_colls[cuda_fields[f]].name);
            } else {
                cg_out_line(&o, "NULL, /* %s */", cg_colls[cuda_fields[f]].name);
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
    cg_out_line(&o, "const int cg_cu_nalgos = %d;", count);
    snprintf(path, sizeof(path), "%s/cuda/all.cu", g->opt->out_dir);
    rc |= cg_emit_write(g, &o, path);
    cg_out_fini(&o);
    return rc ? -1 : 0;
}

int cg_emit_registry(struct cg_gen *g, const struct cg_schedule *const *s, int n,
                     const int *tag_base)
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
        k += tag_rows(s[i], tag_base[i], rows + k);
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
    cg_out_line(&o, "#include \"cg.h\"");
    cg_out_line(&o, "#include \"cg_algo.h\"");
    cg_out_blank(&o);
    for (int i = 0; i < n; i++) {
        char cu[64];
        cg_emit_upper(cu, sizeof(cu), cg_colls[s[i]->coll].name);
        cg_out_line(&o, "int cg_%s(CG_%s_ARGS); /* %s */", s[i]->name, cu, s[i]->file);
    }
    cg_out_blank(&o);
    cg_out_line(&o, "enum cg_tag_id {");
    o.indent++;
    for (int t = 0; t < total; t++) {
        cg_out_line(&o, "%s = %d,", rows[t].constant, t);
    }
    cg_out_line(&o, "CG_NTAGS = %d", total);
    o.indent--;
    cg_out_line(&o, "};");
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
        cg_out_line(&o, ".tag_first = %d,", tag_base[i]);
        cg_out_line(&o, ".tag_count = %d,", s[i]->ntags);
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
    cg_out_line(&o, "const int cg_nalgos = %d;", n);
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
    for (int t = 0; t < total; t++) {
        cg_out_line(&o, "    [%s] = { \"%s\", %s, %d },", rows[t].constant, rows[t].path,
                    rows[t].kind, rows[t].parent);
    }
    cg_out_line(&o, "    [CG_NTAGS] = { NULL, CG_TAG_KIND_CALL, -1 }");
    cg_out_line(&o, "};");
    cg_out_line(&o, "const int cg_ntags = CG_NTAGS;");
    cg_out_line(&o, "_Static_assert(CG_NTAGS <= CG_TAG_CAPACITY, \"too many tags for the runtime\");");
    snprintf(path, sizeof(path), "%s/tags.c", g->opt->out_dir);
    rc |= cg_emit_write(g, &o, path);
    cg_out_fini(&o);

    rc |= emit_cuda_files(g, s, n, tag_base);

    remove_stale(g, s, n, "mpi", ".c", 0);
    remove_stale(g, s, n, "cuda", ".cu", 1);
    free(rows);
    return rc ? -1 : 0;
}
