/* strset.c - a set of strings (see strset.h). */
#include "strset.h"

#include <string.h>

void cg_strset_init(struct cg_strset *h, struct cg_arena *arena)
{
    memset(h, 0, sizeof(*h));
    h->arena = arena;
}

static size_t hash(const char *s)
{
    return (size_t)cg_fnv1a64(s, strlen(s));
}

static size_t slot_of(const struct cg_strset *h, const char *key)
{
    size_t i = hash(key) & (h->cap - 1);
    while (h->keys[i] != NULL && strcmp(h->keys[i], key) != 0) {
        i = (i + 1) & (h->cap - 1);
    }
    return i;
}

static void grow(struct cg_strset *h)
{
    size_t old_cap = h->cap;
    const char **old_keys = h->keys;
    int *old_vals = h->vals;
    h->cap = old_cap ? 2 * old_cap : 16;
    h->keys = cg_arena_alloc(h->arena, sizeof(*h->keys) * h->cap);
    h->vals = cg_arena_alloc(h->arena, sizeof(*h->vals) * h->cap);
    for (size_t i = 0; i < old_cap; i++) {
        if (old_keys[i] != NULL) {
            size_t j = slot_of(h, old_keys[i]);
            h->keys[j] = old_keys[i];
            h->vals[j] = old_vals[i];
        }
    }
}

int *cg_strset_get(struct cg_strset *h, const char *key, int *added)
{
    if (2 * (h->n + 1) > h->cap) {
        grow(h);
    }
    size_t i = slot_of(h, key);
    *added = h->keys[i] == NULL;
    if (*added) {
        h->keys[i] = key;
        h->vals[i] = 0;
        h->n++;
    }
    return &h->vals[i];
}

int cg_strset_add(struct cg_strset *h, const char *key, int v)
{
    int added = 0;
    int *val = cg_strset_get(h, key, &added);
    if (added) {
        *val = v;
        return -1;
    }
    return *val;
}
