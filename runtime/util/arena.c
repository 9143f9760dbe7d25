/* arena.c - the bump allocator every pass builds its output in. */
#include "util.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define CG_ARENA_BLOCK (64 * 1024)
#define CG_ARENA_ALIGN 16

struct cg_arena_block {
    struct cg_arena_block *next;       /* older block */
    size_t cap;                        /* usable bytes in data */
    size_t used;                       /* bytes handed out from data */
    _Alignas(16) unsigned char data[]; /* what allocations point into */
};

static struct cg_arena_block *block_new(size_t cap)
{
    if (cap > SIZE_MAX - sizeof(struct cg_arena_block)) {
        cg_panic("arena: allocation of %zu bytes is too large", cap);
    }
    struct cg_arena_block *b = calloc(1, sizeof(*b) + cap);
    if (b == NULL) {
        cg_panic("arena: out of memory allocating %zu bytes", cap);
    }
    b->cap = cap;
    return b;
}

void *cg_arena_alloc(struct cg_arena *a, size_t n)
{
    if (n > SIZE_MAX - CG_ARENA_ALIGN) {
        cg_panic("arena: allocation of %zu bytes is too large", n);
    }
    size_t need = (n + CG_ARENA_ALIGN - 1) & ~(size_t)(CG_ARENA_ALIGN - 1);
    if (need == 0) {
        need = CG_ARENA_ALIGN;
    }
    struct cg_arena_block *b = a->head;
    if (b != NULL && b->cap - b->used >= need) {
        void *p = b->data + b->used;
        b->used += need;
        return p;
    }
    /* Why: a request larger than a quarter block gets a block of its own,
     * linked behind the head, so the head's free space stays usable. */
    if (need > CG_ARENA_BLOCK / 4 && b != NULL) {
        struct cg_arena_block *big = block_new(need);
        big->used = need;
        big->next = b->next;
        b->next = big;
        return big->data;
    }
    struct cg_arena_block *nb = block_new(need > CG_ARENA_BLOCK ? need : CG_ARENA_BLOCK);
    nb->next = b;
    a->head = nb;
    nb->used = need;
    return nb->data;
}

char *cg_arena_strdup(struct cg_arena *a, const char *s)
{
    size_t n = strlen(s);
    char *p = cg_arena_alloc(a, n + 1);
    memcpy(p, s, n);
    return p;
}

char *cg_arena_printf(struct cg_arena *a, const char *fmt, ...)
{
    va_list ap, ap2;
    va_start(ap, fmt);
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) {
        va_end(ap2);
        cg_panic("arena: bad format \"%s\"", fmt);
    }
    char *p = cg_arena_alloc(a, (size_t)n + 1);
    vsnprintf(p, (size_t)n + 1, fmt, ap2);
    va_end(ap2);
    return p;
}

void cg_arena_fini(struct cg_arena *a)
{
    struct cg_arena_block *b = a->head;
    while (b != NULL) {
        struct cg_arena_block *next = b->next;
        free(b);
        b = next;
    }
    a->head = NULL;
}
