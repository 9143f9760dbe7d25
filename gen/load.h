/* load.h - the one loader of schedules: files found under a directory,
 * parsed and checked (passes 1 and 2) into a set that owns them, and
 * resolved (resolve.c) against each other and schedules/.
 *
 * Memory management: every schedule of a set lives in its own arena, owned
 * by the set; cg_set_fini frees them all, with the callees the resolve pass
 * loaded for them. Schedules never move, so pointers between them (a call
 * step's callee, a fallback) stay valid until cg_set_fini.
 */
#ifndef CG_LOAD_H
#define CG_LOAD_H

#include "ir.h"

/* One loaded schedule and the arena that owns it. */
struct cg_loaded {
    struct cg_schedule s;  /* s.checked: parse and check passed (and resolve, once run) */
    struct cg_arena arena; /* owns s */
    const char *path;      /* the file, as given (owned by the set) */
};

struct cg_set {
    struct cg_loaded **items; /* the files loaded, in order, then the callees found for them */
    int n;                    /* entries in items */
    int nfiles;               /* the first nfiles are the files asked for */
    int cap;                  /* entries allocated */
};

void cg_set_init(struct cg_set *set);
void cg_set_fini(struct cg_set *set);

/* Loads path into the set as one of the files asked for (before any
 * callee): parse and check, diagnostics to g. Returns 0, or -1 when it does
 * not load (it is kept, unchecked, so that indices follow the files). */
int cg_set_load(struct cg_gen *g, struct cg_set *set, const char *path);

/* Loads every file through cg_set_load; returns how many failed. */
int cg_set_load_all(struct cg_gen *g, struct cg_set *set, char *const *files, int nfiles);

/* The checked schedule named `name` among the set's, or NULL. */
const struct cg_schedule *cg_set_find(const struct cg_set *set, const char *name);

/* A checked schedule named `name` found under dir (the directories below it
 * too, sorted), loaded quietly into the set as a callee, or NULL: files
 * that do not load are reported when they are themselves used. */
const struct cg_schedule *cg_set_load_named(struct cg_gen *g, struct cg_set *set,
                                            const char *dir, const char *name);

/* Every *.json below dir (recursively, sorted) appended to *files, and every
 * directory visited to *dirs (a new file changes its directory's time stamp:
 * the emit depfile lists them). Both arrays and their strings are malloc'd:
 * free them with cg_scan_free. */
void cg_scan(const char *dir, char ***files, int *nfiles, char ***dirs, int *ndirs);
void cg_scan_free(char **list, int n);

#endif
