/* report_guideline.h - the guideline report (DIR/guidelines.txt and a
 * section of report.md) and the profile (DIR/profile.json) of collgen
 * report.
 *
 * A guideline mock-up is a generated schedule whose summary starts with
 * "Mock-up: " (CATALOGUE.md section 2, e.g. "Mock-up: Allgather <= Gather +
 * Bcast. ..."). Records do not carry the summary, and the registry that has
 * it (emitted/registry.c) is linked into bench, not into collgen (it needs
 * MPI), so the summary is read from the schedule file the records name
 * (schedule_file, relative to the directory collgen run ran in), checked
 * against the records' schedule_hash (harness/REPORT.md, "Guideline
 * report").
 *
 * Memory management: cg_rep_mockups_find fills a struct cg_rep_mockups that
 * owns its strings; cg_rep_mockups_fini frees them.
 */
#ifndef CG_REPORT_GUIDELINE_H
#define CG_REPORT_GUIDELINE_H

#include <stddef.h>

#include "report_data.h"
#include "report_table.h"

/* How a generated schedule's summary was found. */
enum cg_rep_sched_source {
    CG_REP_SCHED_VERIFIED,  /* a file whose FNV-1a 64 is the records' schedule_hash */
    CG_REP_SCHED_UNHASHED,  /* a file; the records carry no hash to check it with */
    CG_REP_SCHED_CHANGED,   /* a file, but not the bytes the campaign ran */
    CG_REP_SCHED_NOT_FOUND, /* no file at any place tried */
    CG_REP_SCHED_UNREADABLE /* a file without a "summary" string (or not JSON) */
};

/* One generated schedule named by the records. */
struct cg_rep_sched {
    const char *name;                /* schedule name (borrowed from a record) */
    const char *collective;          /* its collective (borrowed) */
    char *file;                      /* schedule_file of the records, or the derived
                                      * schedules/<collective>/<rest>.json (malloc'd) */
    char *path;                      /* the file read, malloc'd; NULL when none */
    char *tried;                     /* NOT_FOUND: the places tried, malloc'd */
    char *summary;                   /* malloc'd; NULL when unknown */
    char *guideline;                 /* "Allgather <= Gather + Bcast"; NULL: not a mock-up */
    enum cg_rep_sched_source source; /* how the summary was found */
    char hash_now[17];               /* the file's FNV-1a 64 (hex), "" when none */
    const char *hash_then;           /* the records' schedule_hash, NULL when none */
};

struct cg_rep_mockups {
    struct cg_rep_sched *v; /* every generated schedule of the records, by name */
    size_t n;               /* how many */
};

/* Reads the summary of every generated schedule the records name. Places
 * tried for a relative schedule_file, in order: campaign.json's "cwd" (where
 * collgen run ran), the repository of this collgen binary (build/collgen ->
 * ./), the current directory; the first file whose hash is the records'
 * wins, else the first file found. A missing or unreadable file is not an
 * error (the schedule is then not counted as a mock-up, and the report says
 * so). Returns 0, or 1 when out of memory; m is always safe to fini. */
int cg_rep_mockups_find(struct cg_rep_mockups *m, const struct cg_rep_campaign *c);
void cg_rep_mockups_fini(struct cg_rep_mockups *m);

/* The guideline of generated record r ("Allreduce <= Reduce + Bcast"), or
 * NULL when r is not a known mock-up. Borrowed from m. */
const char *cg_rep_guideline_of(const struct cg_rep_mockups *m, const struct cg_rep_record *r);

/* Appends the guideline report: a summary line, the violations, one table
 * per collective, library, process count and variant (every mock-up against
 * the native default and, for information, the best forced native
 * algorithm), the mock-ups found, the records not measured, the profile's
 * choices other than the default, notes, and how to read it; sections are
 * headings of level 2, tables' titles level 3. *nviolations (may be NULL)
 * gets the number of violations. 0, or -1 out of memory. */
int cg_rep_build_guidelines(struct cg_rep_doc *d, const struct cg_rep_campaign *c,
                            const struct cg_rep_mockups *m, size_t *nviolations);

/* DIR/profile.json (harness/FORMATS.md, "Profile"): malloc'd text, NULL
 * when out of memory. */
char *cg_rep_profile_json(const struct cg_rep_campaign *c, const struct cg_rep_mockups *m);

#endif
