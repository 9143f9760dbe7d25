/* report_util.h - growable strings, small helpers and the plots.py runner for
 * collgen report and collgen compare.
 *
 * Memory management: every string these functions return is malloc'd and
 * belongs to the caller; a buffer owns its bytes until cg_rep_buf_fini.
 * Out of memory is never fatal here: a buffer remembers it (failed) and the
 * caller checks once, at the end, instead of after every append.
 */
#ifndef CG_REPORT_UTIL_H
#define CG_REPORT_UTIL_H

#include <stddef.h>

struct cg_rep_buf {
    char *s;    /* NUL-terminated text, or NULL before the first append */
    size_t len; /* bytes used, without the NUL */
    size_t cap; /* bytes allocated */
    int failed; /* an append ran out of memory; s holds what fitted before */
};

void cg_rep_buf_init(struct cg_rep_buf *b);
void cg_rep_buf_fini(struct cg_rep_buf *b);
void cg_rep_buf_add(struct cg_rep_buf *b, const char *s);
void cg_rep_buf_addn(struct cg_rep_buf *b, const char *s, size_t n);
void cg_rep_buf_printf(struct cg_rep_buf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Hands the text over (never NULL unless failed) and leaves b empty. */
char *cg_rep_buf_take(struct cg_rep_buf *b);

/* A malloc'd, formatted string, or NULL when out of memory. */
char *cg_rep_strf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Sizes as people write them: "8 B", "64 KiB", "4 MiB", "1000 B". */
void cg_rep_fmt_size(char *out, size_t n, double bytes);

/* A p-value as the tables show it: "?" (NaN: not tested), "1.4e-09" below
 * 0.001, else "0.081". */
void cg_rep_fmt_p(char *out, size_t n, double p);

/* A time in ns shown in microseconds with about four significant digits. */
void cg_rep_fmt_us(char *out, size_t n, double ns);

/* A number that reads back to the same double: integers without a decimal
 * point, others with the fewest digits (up to 17) that round-trip. */
void cg_rep_fmt_number(char *out, size_t n, double v);

/* What became of the plots (cg_rep_make_plots). */
enum cg_rep_plots {
    CG_REP_PLOTS_MADE,          /* plots.py succeeded */
    CG_REP_PLOTS_NOT_ASKED,     /* --no-plots */
    CG_REP_PLOTS_NO_PYTHON,     /* the interpreter or plots.py is missing */
    CG_REP_PLOTS_NO_MATPLOTLIB, /* plots.py exited 3: matplotlib or numpy missing */
    CG_REP_PLOTS_FAILED         /* plots.py failed otherwise */
};

/* Runs /usr/bin/python3 harness/plots.py DIR [MODE] --quiet (CG_PYTHON and
 * CG_PLOTS_PY override the interpreter and the script; mode NULL for a
 * campaign, "--compare" for collgen compare's directory); *why says what
 * went wrong, for anything but CG_REP_PLOTS_MADE. */
enum cg_rep_plots cg_rep_make_plots(const char *dir, const char *mode, char *why, size_t nwhy);

/* The boundary between measured sizes a < b: floor(sqrt(a b)), the
 * midpoint in log space, within [a, b - 1]. The profile's ranges and
 * collgen tune's thresholds both end there. */
double cg_rep_size_boundary(double a, double b);

#endif
