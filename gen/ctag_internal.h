/* ctag_internal.h - what the three parts of `collgen tag` share: the code
 * as read (ctag.c), the tags and inserted lines decided (ctag_plan.c), and
 * what is written (ctag_write.c). Offsets are bytes into the file as read;
 * every position of the code is its expansion location, so a statement that
 * a macro produced spans the macro's invocation, as the compiler sees it. */
#ifndef CG_CTAG_INTERNAL_H
#define CG_CTAG_INTERNAL_H

#include <clang-c/Index.h>

#include "base.h"

/* What a piece of code does that a tag times, as bits: a local copy
 * (memcpy, MPI_Pack, MPI_Sendrecv to itself, a loop copying elements), a
 * reduction (MPI_Reduce_local, a loop combining elements), communication
 * (point-to-point and collective MPI calls). */
enum { CT_COPY = 1, CT_REDUCE = 2, CT_COMM = 4 };

/* The kinds of runtime/cg_algo.h's enum cg_tag_kind, in its order (this
 * side of collgen does not include MPI's headers). */
enum ct_kind { CT_K_CALL, CT_K_PHASE, CT_K_ROUND, CT_K_COMM, CT_K_REDUCE, CT_K_COPY };

/* One cursor of a function body. */
struct ct_node {
    enum CXCursorKind kind;
    unsigned b, e;           /* [b, e) in the file; b == e: no place of its own */
    int from_macro;          /* written by a macro: no place of its own, or a block
                              * whose braces are not in the file's text there */
    const char *name;        /* spelling: the callee of a call, a label, a variable */
    int helper;              /* a call: the called function's index in the file, else -1 */
    struct ct_node **kids;   /* children in source order */
    int nkids;
    unsigned cls;            /* CT_* bits of everything below (ctag_plan.c fills it) */
    const char *first;       /* the first timed callee below, as a tag name, or NULL */
};

/* A function defined in the file. */
struct ct_func {
    const char *name;
    unsigned b;              /* where its definition starts */
    struct ct_node *body;    /* its compound statement */
    unsigned cls;            /* CT_* bits: its own calls and its helpers' */
    int selected;            /* to be tagged */
    int tag_first;           /* index of its call tag in the tag list */
    int tag_count;           /* its tags */
};

/* One line to insert: at off (a line start), before the original text. */
struct ct_ins {
    unsigned off;
    int closer;              /* ends something (inserted before the openers) */
    int level;               /* nesting of the construct it belongs to */
    int seq;                 /* order of creation */
    const char *indent;      /* leading white space */
    const char *text;        /* the statement; "{" and "}" are merged into neighbours */
};

/* One input file. */
struct ct_file {
    const char *path;        /* as given */
    const char *base;        /* its last component: the tagged copy's name */
    char *src;               /* its bytes, NUL-terminated */
    size_t len;
    const char *eol;         /* "\n", or "\r\n" when the file uses it */
    struct ct_func *fns;
    int nfns;
    struct ct_ins *ins;      /* lines to insert */
    int nins, cins;
    unsigned include_at;     /* where `#include "tags.h"` goes; (unsigned)-1: nowhere */
};

/* One tag: the call, a phase, a round or a step. */
struct ct_tag {
    const char *path;        /* "allreduce_ring/k/round/sendrecv" */
    const char *name;        /* its last component */
    const char *ident;       /* "CG_CTAG_ALLREDUCE_RING__K__ROUND__SENDRECV" */
    enum ct_kind kind;
    int parent;              /* index of the enclosing tag, -1 for a call tag */
    int file;                /* index of its file */
    unsigned b, e;           /* the code it covers */
};

/* One run of `collgen tag`. */
struct ct_run {
    struct cg_arena arena;
    struct cg_diag diag;
    int quiet;               /* no notes */
    int tag_base;            /* id of the first tag */
    const char *out_dir;
    struct ct_file *files;
    int nfiles;
    struct ct_tag *tags;
    int ntags, ctags;
};

/* ctag_plan.c: classifies every function (what it does, through helpers
 * too), selects those to tag (names: the --function list, NULL for all that
 * time anything) and decides their tags and inserted lines. Reports why a
 * function cannot be tagged. Returns 0, or -1 after an error. */
int ct_plan(struct ct_run *r, const char *const *names, int nnames);

/* ctag_write.c: the tagged copies, tags.h and tags.c under r->out_dir, each
 * written only when it changed. Returns 0, or -1 after an error. */
int ct_write(struct ct_run *r);

/* ctag.c: the 1-based line and column of offset off in f. */
struct cg_pos ct_pos(const struct ct_file *f, unsigned off);

#endif
