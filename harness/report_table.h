/* report_table.h - what collgen report shows, as a document of headings,
 * paragraphs, lists and tables that renders to aligned text (table.txt and
 * the terminal) and to Markdown (report.md) from the same cells.
 *
 * Memory management: a document owns its blocks, their text and their
 * tables; cg_rep_doc_fini frees them.
 */
#ifndef CG_REPORT_TABLE_H
#define CG_REPORT_TABLE_H

#include <stddef.h>

#include "report_data.h"

struct cg_rep_table {
    int ncols;                /* columns */
    const char *const *heads; /* column headings (static) */
    const char *align;        /* per column: 'l' left, 'r' right */
    char **cells;             /* row-major, nrows * ncols, each malloc'd */
    int nrows;                /* rows filled */
    int cap;                  /* rows allocated */
};

enum cg_rep_block_kind {
    CG_REP_HEADING, /* text, level 1..3 */
    CG_REP_PARA,    /* text, lines separated by '\n' */
    CG_REP_LIST,    /* text, one item per '\n'-separated line */
    CG_REP_CODE,    /* text shown verbatim (a command) */
    CG_REP_IMAGE,   /* text: path relative to the campaign directory; md only */
    CG_REP_TABLE    /* table */
};

struct cg_rep_block {
    enum cg_rep_block_kind kind; /* what it is */
    int level;                   /* HEADING: 1 title, 2 section, 3 table title */
    char *text;                  /* malloc'd; NULL for TABLE */
    struct cg_rep_table *table;  /* TABLE only */
};

struct cg_rep_doc {
    struct cg_rep_block *blocks; /* in order */
    size_t n;                    /* used */
    size_t cap;                  /* allocated */
    int failed;                  /* ran out of memory while adding */
};

void cg_rep_doc_init(struct cg_rep_doc *d);
void cg_rep_doc_fini(struct cg_rep_doc *d);
/* Adds a block taking a copy of text; out of memory sets d->failed. */
void cg_rep_doc_add(struct cg_rep_doc *d, enum cg_rep_block_kind kind, int level,
                    const char *text);

/* A table with headings heads[0..ncols) (static strings) aligned by
 * align[i] ('l' or 'r'); NULL when out of memory. */
struct cg_rep_table *cg_rep_table_new(int ncols, const char *const *heads, const char *align);
/* Appends a row of t->ncols cells, copied; 0, or -1 out of memory. */
int cg_rep_table_row(struct cg_rep_table *t, const char *const *cells);
void cg_rep_table_free(struct cg_rep_table *t);
/* Adds a table block; the document takes t (and frees it on failure). */
void cg_rep_doc_add_table(struct cg_rep_doc *d, struct cg_rep_table *t);

/* Appends the results of campaign c: a summary line, one table per
 * collective, library, process count, node shape and variant, the pairs of
 * generated schedules and native implementations of the same algorithm, the
 * micro-benchmarks (kind micro: each lane count k against k=1, in a section
 * of their own), the repetitions, the records that were not measured,
 * notes, and the legend. 0, or -1 out of memory. */
int cg_rep_build_results(struct cg_rep_doc *d, const struct cg_rep_campaign *c);

/* The grouping and ordering the tables use, for the other report sections
 * (report_guideline.c): records of one table share collective, library,
 * process count, node shape, datatype, op, root and in-place
 * (cg_rep_cmp_group orders groups); its title ("allreduce / openmpi / p=4 /
 * double sum", and " / CG_PPN=2: 2 nodes x 2" when shapes are shown; malloc'd,
 * NULL out of memory); whether a beats b (lower median, then native before
 * generated, then name; b NULL: 1); whether a collective takes an op. */
int cg_rep_cmp_group(const struct cg_rep_record *a, const struct cg_rep_record *b);
char *cg_rep_group_title(const struct cg_rep_record *r);
int cg_rep_faster(const struct cg_rep_record *a, const struct cg_rep_record *b);
int cg_rep_takes_op(const char *collective);
/* Whether native record n implements the algorithm of generated or baseline
 * record g (the same name after the collective's prefix, or a known
 * equivalent: report_table.c). */
int cg_rep_same_algorithm(const struct cg_rep_record *g, const struct cg_rep_record *n);

/* report_phases.c: for the tables' records v[0..n) (grouped and sorted as
 * cg_rep_build_results sorts them), a section comparing each baseline with
 * the generated schedule of its name and the native implementation of its
 * algorithm, phase by phase; nothing when there is no baseline. */
void cg_rep_phases_section(struct cg_rep_doc *d, const struct cg_rep_record *const *v, size_t n);
/* The section "Speed" (report_speed.c): generated against native same
 * algorithm per library and collective, and the roofline; nothing when no
 * record has a roofline. v as for cg_rep_phases_section. */
void cg_rep_speed_section(struct cg_rep_doc *d, const struct cg_rep_record *const *v, size_t n);

/* Renders; NULL when out of memory. */
char *cg_rep_render_text(const struct cg_rep_doc *d);
char *cg_rep_render_markdown(const struct cg_rep_doc *d);

#endif
