/* ctag.h - `collgen tag`: timing tags inserted into hand-written C over MPI
 * (ctag.c reads the code with libclang, ctag_plan.c decides the tags,
 * ctag_write.c writes the tagged copies and the tag table; gen/README.md). */
#ifndef CG_CTAG_H
#define CG_CTAG_H

/* collgen tag FILE.c... [--function NAME...] [--out DIR] [--tag-base N] [-q]
 * [-- CLANG_ARGS...]: argv[0] is "tag". Returns the exit status: 0 written
 * (or unchanged), 1 a diagnostic (nothing written), 2 usage. */
int cg_ctag_main(int argc, char **argv);

#endif
