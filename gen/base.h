/* base.h - what every pass of the generator shares: source positions,
 * the arena, diagnostics and the one context struct (no globals).
 */
#ifndef CG_BASE_H
#define CG_BASE_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* A place in a schedule file, 1-based. line == 0 means "no position". */
struct cg_pos {
    int line; /* 1-based line */
    int col;  /* 1-based column, in bytes */
};

/* Bump allocator: everything a pass builds lives here and is freed at once. */
struct cg_arena_block;
struct cg_arena {
    struct cg_arena_block *head; /* newest block first */
};

void *cg_arena_alloc(struct cg_arena *a, size_t n); /* zeroed; never NULL (panics) */
char *cg_arena_strdup(struct cg_arena *a, const char *s);
char *cg_arena_printf(struct cg_arena *a, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void cg_arena_fini(struct cg_arena *a);

/* Diagnostics in GCC form: "file:line:col: error: message". */
struct cg_diag {
    FILE *sink;     /* where messages go (stderr by default) */
    int errors;     /* errors reported so far */
    int max_errors; /* stop reporting (not counting) beyond this */
};

void cg_diag_init(struct cg_diag *d, FILE *sink);
void cg_error(struct cg_diag *d, const char *file, struct cg_pos pos, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void cg_verror(struct cg_diag *d, const char *file, struct cg_pos pos, const char *fmt,
               va_list ap);
/* A note attached to the previous error ("first defined here"). */
void cg_note(struct cg_diag *d, const char *file, struct cg_pos pos, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Generator bug: print and exit(70). Only emitters and internal code call it. */
void cg_panic(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/* Options of one generator run. */
struct cg_options {
    int p_list[256];     /* process counts to verify, ascending */
    int np;              /* entries used in p_list */
    int all_roots_max_p; /* every root up to this p; above, roots 0, 1, p/2, p-1 */
    const char *out_dir; /* emit: where emitted/ is (default "emitted") */
    const char *depfile; /* emit: write a ninja depfile here, or NULL */
    int quiet;           /* verify: print only failures */
    int ppn;             /* explain, tags: ranks per node of topology schedules (0: default) */
    int64_t max_work;    /* verify: work budget per schedule (0: CG_VERIFY_MAX_WORK, sim.h) */
    int64_t sim_max_work;/* analyse, traffic, simulate, goal: work budget of one run (0:
                          * CG_SIM_MAX_WORK, sim.h) */
};

void cg_options_init(struct cg_options *opt);

/* The one context every pass takes first. */
struct cg_gen {
    const struct cg_options *opt; /* read-only options */
    struct cg_diag diag;          /* error reporting */
};

#endif
