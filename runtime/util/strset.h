/* strset.h - a set of strings, each with an int, for near-linear duplicate
 * checks (JSON object keys, a descriptor's lists, repeated messages).
 *
 * Why: every "is this listed twice" check compared each item with all the
 * earlier ones, so a few thousand repeats of one value in a small input took
 * tens of seconds. Open addressing over an arena; keys are not copied (they
 * must outlive the set); tables grown by doubling are left in the arena.
 */
#ifndef CG_STRSET_H
#define CG_STRSET_H

#include "util.h"

struct cg_strset {
    struct cg_arena *arena; /* where tables go */
    const char **keys;      /* cap slots, NULL where free */
    int *vals;              /* the int of each key */
    size_t cap, n;          /* slots, keys held */
};

void cg_strset_init(struct cg_strset *h, struct cg_arena *arena);

/* The int of key, which is added (with 0, and *added set) when absent.
 * The pointer is good until the next call. */
int *cg_strset_get(struct cg_strset *h, const char *key, int *added);

/* Adds key with value v and returns -1; when key is already there, keeps it
 * and returns the value it was added with. */
int cg_strset_add(struct cg_strset *h, const char *key, int v);

#endif
