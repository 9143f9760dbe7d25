/* ctag.c - `collgen tag`: the command line, and the code read with libclang.
 *
 *   1. read   each FILE.c is parsed by libclang (clang's own diagnostics,
 *             file:line:col, stop the run); every function it defines
 *             becomes a tree of ct_nodes with byte offsets into the file
 *   2. plan   ctag_plan.c: what each function does, which tags it gets,
 *             which lines are inserted where
 *   3. write  ctag_write.c: DIR/<file>.c, DIR/tags.h, DIR/tags.c
 *
 * Nothing is written unless every file parses and every function asked for
 * can be tagged. gen/README.md ("collgen tag") says what is tagged and how.
 */
#include "ctag.h"
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctag_internal.h"

/* The default --tag-base: ids below it are the generated schedules' (0 up),
 * ids from it up to CG_TAG_CAPACITY (4096, runtime/cg.h) are free. */
#define CT_TAG_BASE 3072
#define CT_TAG_CAPACITY 4096

static const char usage[] =
    "usage: collgen tag FILE.c... [--function NAME...] [--out DIR] [--tag-base N] [-q]\n"
    "                   [-- CLANG_ARGS...]\n"
    "\n"
    "Writes a copy of each FILE.c into DIR (default 'tagged') with timing tags\n"
    "inserted as lines of their own: the call tag around each function that\n"
    "communicates, a phase per top-level loop or sequence of communication, a\n"
    "round per iteration of a loop that communicates, a step per point-to-point\n"
    "or collective MPI call, reduction (MPI_Reduce_local, a loop combining\n"
    "elements) and local copy (memcpy, MPI_Pack/Unpack, MPI_Sendrecv to itself, a\n"
    "loop copying elements); every way out of a tagged region ends its tags. It\n"
    "also writes DIR/tags.h (ids, and the macros the inserted lines use: compiled\n"
    "out unless CG_TAGS is defined) and DIR/tags.c (the table naming each tag).\n"
    "Compile the copies with -Iruntime (cg.h) and the original's include paths.\n"
    "\n"
    "Options:\n"
    "  --function NAME   tag only NAME (repeat, or a comma list) and the helpers it\n"
    "                    calls; default: every function that communicates\n"
    "  --out DIR         where the copies and the table go (default tagged)\n"
    "  --tag-base N      id of the first tag (default 3072; generated schedules\n"
    "                    use the ids from 0)\n"
    "  -q, --quiet       no notes (functions left alone, tags left out)\n"
    "  -- CLANG_ARGS     arguments for clang (-I, -D, -std), followed by the include\n"
    "                    paths of `mpicc.openmpi -showme:compile` (or of mpicc), so\n"
    "                    that mpi.h is found\n";

struct cg_pos ct_pos(const struct ct_file *f, unsigned off)
{
    struct cg_pos p = {1, 1};
    for (unsigned i = 0; i < off && i < f->len; i++) {
        if (f->src[i] == '\n') {
            p.line++;
            p.col = 1;
        } else {
            p.col++;
        }
    }
    return p;
}

/* ---- reading ----------------------------------------------------------- */

static int read_file(struct ct_run *r, const char *path, struct ct_file *f)
{
    FILE *in = fopen(path, "rb");
    if (in == NULL) {
        fprintf(stderr, "collgen tag: cannot read %s: %s\n", path, strerror(errno));
        return -1;
    }
    size_t cap = 4096;
    size_t n = 0;
    char *buf = malloc(cap);
    for (;;) {
        if (buf == NULL) {
            cg_panic("out of memory reading %s", path);
        }
        n += fread(buf + n, 1, cap - n - 1, in);
        if (n < cap - 1) {
            break;
        }
        cap *= 2;
        buf = realloc(buf, cap);
    }
    int bad = ferror(in);
    fclose(in);
    if (bad) {
        fprintf(stderr, "collgen tag: cannot read %s\n", path);
        free(buf);
        return -1;
    }
    buf[n] = '\0';
    f->src = cg_arena_alloc(&r->arena, n + 1);
    memcpy(f->src, buf, n + 1);
    free(buf);
    f->len = n;
    f->path = path;
    const char *slash = strrchr(path, '/');
    f->base = slash ? slash + 1 : path;
    f->eol = strstr(f->src, "\r\n") != NULL ? "\r\n" : "\n";
    f->include_at = (unsigned)-1;
    return 0;
}

struct visit {
    struct ct_run *r;
    struct ct_file *f;
    CXFile file;
    CXTranslationUnit tu;
    struct ct_node *parent;
};

static char *spelling(struct cg_arena *a, CXString s)
{
    char *t = cg_arena_strdup(a, clang_getCString(s) ? clang_getCString(s) : "");
    clang_disposeString(s);
    return t;
}

/* The expansion offset of loc in the file, or -1 when it lies elsewhere. */
static long offset_in(const struct visit *v, CXSourceLocation loc)
{
    CXFile file;
    unsigned line, col, off;
    clang_getExpansionLocation(loc, &file, &line, &col, &off);
    if (file == NULL || !clang_File_isEqual(file, v->file)) {
        return -1;
    }
    return (long)off;
}

static void add_kid(struct cg_arena *a, struct ct_node *p, struct ct_node *k)
{
    struct ct_node **kids = cg_arena_alloc(a, sizeof(*kids) * (size_t)(p->nkids + 1));
    if (p->nkids > 0) {
        memcpy(kids, p->kids, sizeof(*kids) * (size_t)p->nkids);
    }
    kids[p->nkids++] = k;
    p->kids = kids;
}

static struct ct_node *make_node(struct visit *v, CXCursor c)
{
    struct ct_node *n = cg_arena_alloc(&v->r->arena, sizeof(*n));
    CXSourceRange ext = clang_getCursorExtent(c);
    long b = offset_in(v, clang_getRangeStart(ext));
    long e = offset_in(v, clang_getRangeEnd(ext));
    n->kind = clang_getCursorKind(c);
    n->helper = -1;
    if (b >= 0 && e > b && (size_t)e <= v->f->len) {
        n->b = (unsigned)b;
        n->e = (unsigned)e;
    } else if (b >= 0) {
        n->b = n->e = (unsigned)b;
    }
    /* Why by the text: libclang 14 gives a macro's tokens the place of its
     * invocation, as spelling and expansion location alike. A statement
     * written by a macro spans the invocation, whose text is not the
     * statement's. */
    if (n->e <= n->b) {
        n->from_macro = 1;
    } else if (n->kind == CXCursor_CompoundStmt) {
        n->from_macro = v->f->src[n->b] != '{' || v->f->src[n->e - 1] != '}';
    }
    n->name = spelling(&v->r->arena, clang_getCursorSpelling(c));
    return n;
}

static enum CXChildVisitResult visit_kid(CXCursor c, CXCursor parent, CXClientData data)
{
    (void)parent;
    struct visit *v = data;
    struct ct_node *n = make_node(v, c);
    add_kid(&v->r->arena, v->parent, n);
    if (n->kind == CXCursor_CallExpr) {
        /* A helper: a function this file defines. */
        CXCursor callee = clang_getCursorReferenced(c);
        CXCursor def = clang_getCursorDefinition(callee);
        if (!clang_Cursor_isNull(def) && offset_in(v, clang_getCursorLocation(def)) >= 0) {
            const char *name = n->name;
            for (int i = 0; i < v->f->nfns; i++) {
                if (strcmp(v->f->fns[i].name, name) == 0) {
                    n->helper = i;
                }
            }
            if (n->helper < 0) {
                n->helper = -2; /* defined later in the file: resolved below */
            }
        }
    }
    struct visit sub = *v;
    sub.parent = n;
    clang_visitChildren(c, visit_kid, &sub);
    return CXChildVisit_Continue;
}

/* Calls to functions defined after their caller: found by name once every
 * function is known. */
static void resolve_helpers(struct ct_file *f, struct ct_node *n)
{
    if (n->helper == -2) {
        for (int i = 0; i < f->nfns; i++) {
            if (strcmp(f->fns[i].name, n->name) == 0) {
                n->helper = i;
            }
        }
        if (n->helper == -2) {
            n->helper = -1;
        }
    }
    for (int i = 0; i < n->nkids; i++) {
        resolve_helpers(f, n->kids[i]);
    }
}

static enum CXChildVisitResult visit_top(CXCursor c, CXCursor parent, CXClientData data)
{
    (void)parent;
    struct visit *v = data;
    if (clang_getCursorKind(c) != CXCursor_FunctionDecl || !clang_isCursorDefinition(c)) {
        return CXChildVisit_Continue;
    }
    long at = offset_in(v, clang_getRangeStart(clang_getCursorExtent(c)));
    if (at < 0) {
        return CXChildVisit_Continue; /* defined in a header */
    }
    struct ct_node holder = {0};
    struct visit sub = *v;
    sub.parent = &holder;
    clang_visitChildren(c, visit_kid, &sub);
    struct ct_node *body = NULL;
    for (int i = 0; i < holder.nkids; i++) {
        if (holder.kids[i]->kind == CXCursor_CompoundStmt) {
            body = holder.kids[i];
        }
    }
    if (body == NULL) {
        return CXChildVisit_Continue;
    }
    struct ct_file *f = v->f;
    struct ct_func *fns = cg_arena_alloc(&v->r->arena, sizeof(*fns) * (size_t)(f->nfns + 1));
    if (f->nfns > 0) {
        memcpy(fns, f->fns, sizeof(*fns) * (size_t)f->nfns);
    }
    struct ct_func *fn = &fns[f->nfns];
    fn->name = spelling(&v->r->arena, clang_getCursorSpelling(c));
    fn->b = (unsigned)at;
    fn->body = body;
    f->fns = fns;
    f->nfns++;
    return CXChildVisit_Continue;
}

/* Parses f with clang; prints clang's errors. 0, or -1 when it has any. */
static int parse_file(struct ct_run *r, CXIndex index, struct ct_file *f, char **args, int nargs)
{
    CXTranslationUnit tu = NULL;
    enum CXErrorCode ec = clang_parseTranslationUnit2(index, f->path, (const char *const *)args,
                                                      nargs, NULL, 0, CXTranslationUnit_None,
                                                      &tu);
    if (ec != CXError_Success || tu == NULL) {
        fprintf(stderr, "%s: error: libclang could not parse the file (error %d)\n", f->path,
                (int)ec);
        return -1;
    }
    int errors = 0;
    unsigned nd = clang_getNumDiagnostics(tu);
    for (unsigned i = 0; i < nd; i++) {
        CXDiagnostic d = clang_getDiagnostic(tu, i);
        enum CXDiagnosticSeverity sev = clang_getDiagnosticSeverity(d);
        if (sev >= CXDiagnostic_Error) {
            CXString s = clang_formatDiagnostic(d, CXDiagnostic_DisplaySourceLocation |
                                                       CXDiagnostic_DisplayColumn |
                                                       CXDiagnostic_DisplayOption);
            fprintf(stderr, "%s\n", clang_getCString(s));
            clang_disposeString(s);
            errors++;
        }
        clang_disposeDiagnostic(d);
    }
    if (errors == 0) {
        struct visit v = {r, f, clang_getFile(tu, f->path), tu, NULL};
        clang_visitChildren(clang_getTranslationUnitCursor(tu), visit_top, &v);
        for (int i = 0; i < f->nfns; i++) {
            resolve_helpers(f, f->fns[i].body);
        }
    }
    r->diag.errors += errors;
    clang_disposeTranslationUnit(tu);
    return errors ? -1 : 0;
}

/* ---- clang's arguments --------------------------------------------------- */

/* Appends the -I and -D words of a compiler wrapper's output (the first of
 * the commands that runs) to *args: where mpi.h is. */
static void mpi_flags(struct ct_run *r, char ***args, int *nargs)
{
    static const char *const cmds[] = {
        "mpicc.openmpi -showme:compile 2>/dev/null",
        "mpicc -showme:compile 2>/dev/null",
        "mpicc.mpich -compile_info 2>/dev/null",
        "mpicc -compile_info 2>/dev/null",
    };
    for (size_t c = 0; c < sizeof(cmds) / sizeof(cmds[0]); c++) {
        FILE *p = popen(cmds[c], "r");
        if (p == NULL) {
            continue;
        }
        char line[8192];
        size_t n = fread(line, 1, sizeof(line) - 1, p);
        line[n] = '\0';
        int status = pclose(p);
        if (status != 0 || n == 0) {
            continue;
        }
        int found = 0;
        for (char *w = strtok(line, " \t\n"); w != NULL; w = strtok(NULL, " \t\n")) {
            if ((w[0] == '-' && (w[1] == 'I' || w[1] == 'D')) && w[2] != '\0') {
                *args = realloc(*args, sizeof(char *) * (size_t)(*nargs + 1));
                (*args)[(*nargs)++] = cg_arena_strdup(&r->arena, w);
                found = 1;
            }
        }
        if (found) {
            return;
        }
    }
}

/* ---- the command ------------------------------------------------------------ */

int cg_ctag_main(int argc, char **argv)
{
    struct ct_run r;
    memset(&r, 0, sizeof(r));
    cg_diag_init(&r.diag, stderr);
    r.tag_base = CT_TAG_BASE;
    r.out_dir = "tagged";
    const char **names = NULL;
    int nnames = 0;
    char **paths = NULL;
    int npaths = 0;
    char **args = NULL;
    int nargs = 0;

    static const struct option longs[] = {
        { "function", required_argument, NULL, 'f' },
        { "out", required_argument, NULL, 'o' },
        { "tag-base", required_argument, NULL, 'b' },
        { "quiet", no_argument, NULL, 'q' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    /* Why the "--" is found first: getopt_long moves the files it skips to
     * the end, before what follows "--", so that afterwards the two could
     * not be told apart; it reads only the words before it. */
    int dashes = argc;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0) {
            dashes = i;
            break;
        }
    }
    for (int k = dashes + 1; k < argc; k++) {
        args = realloc(args, sizeof(char *) * (size_t)(nargs + 1));
        args[nargs++] = argv[k];
    }
    int opt;
    int rc = 0;
    opterr = 0;
    optind = 1;
    while ((opt = getopt_long(dashes, argv, ":qh", longs, NULL)) != -1) {
        switch (opt) {
        case 'f': {
            char *list = cg_arena_strdup(&r.arena, optarg);
            for (char *w = strtok(list, ","); w != NULL; w = strtok(NULL, ",")) {
                names = realloc(names, sizeof(char *) * (size_t)(nnames + 1));
                names[nnames++] = w;
            }
            break;
        }
        case 'o':
            r.out_dir = optarg;
            break;
        case 'b': {
            char *end;
            long base = strtol(optarg, &end, 10);
            if (*end != '\0' || base < 0 || base >= CT_TAG_CAPACITY) {
                fprintf(stderr, "collgen tag: bad --tag-base '%s' (0 to %d)\n", optarg,
                        CT_TAG_CAPACITY - 1);
                rc = 2;
                goto done;
            }
            r.tag_base = (int)base;
            break;
        }
        case 'q':
            r.quiet = 1;
            break;
        case 'h':
            fputs(usage, stdout);
            goto done;
        default:
            rc = cg_cli_bad_option("collgen tag", opt, argv);
            goto done;
        }
    }
    for (int i = optind; i < dashes; i++) {
        paths = realloc(paths, sizeof(char *) * (size_t)(npaths + 1));
        paths[npaths++] = argv[i];
    }
    if (npaths == 0) {
        fprintf(stderr, "collgen tag: error: no FILE.c given (collgen tag --help)\n");
        rc = 2;
        goto done;
    }
    mpi_flags(&r, &args, &nargs);

    r.files = cg_arena_alloc(&r.arena, sizeof(*r.files) * (size_t)npaths);
    for (int i = 0; i < npaths && rc == 0; i++) {
        struct ct_file *f = &r.files[r.nfiles];
        if (read_file(&r, paths[i], f) != 0) {
            rc = 1;
            break;
        }
        r.nfiles++;
        if (strcmp(f->base, "tags.c") == 0 || strcmp(f->base, "tags.h") == 0) {
            fprintf(stderr, "collgen tag: %s: a file may not be called %s: that is the tag "
                            "table's name\n", f->path, f->base);
            rc = 1;
        }
        for (int k = 0; k < r.nfiles - 1; k++) {
            if (strcmp(r.files[k].base, f->base) == 0) {
                fprintf(stderr, "collgen tag: %s and %s would both be written as %s in "
                                "the output directory\n", r.files[k].path, f->path, f->base);
                rc = 1;
            }
        }
    }
    if (rc == 0) {
        CXIndex index = clang_createIndex(0, 0);
        for (int i = 0; i < r.nfiles; i++) {
            if (parse_file(&r, index, &r.files[i], args, nargs) != 0) {
                rc = 1;
            }
        }
        clang_disposeIndex(index);
    }
    if (rc == 0 && ct_plan(&r, names, nnames) != 0) {
        rc = 1;
    }
    if (rc == 0 && r.tag_base + r.ntags > CT_TAG_CAPACITY) {
        fprintf(stderr, "collgen tag: %d tags from id %d do not fit under CG_TAG_CAPACITY (%d, "
                        "runtime/cg.h); give a lower --tag-base\n", r.ntags, r.tag_base,
                CT_TAG_CAPACITY);
        rc = 1;
    }
    if (rc == 0 && ct_write(&r) != 0) {
        rc = 1;
    }
    if (rc != 0 && r.diag.errors > 0) {
        fprintf(stderr, "collgen tag: nothing written (%d error%s)\n", r.diag.errors,
                r.diag.errors == 1 ? "" : "s");
    }
done:
    /* The planned lines and tags grow outside the arena (ctag_plan.c). */
    for (int i = 0; i < r.nfiles; i++) {
        free(r.files[i].ins);
    }
    free(r.tags);
    free(names);
    free(paths);
    free(args);
    cg_arena_fini(&r.arena);
    return rc;
}
