/* load.c - the one loader of schedules (load.h): scanning a directory,
 * passes 1 and 2 into a set that owns every schedule, and finding a named
 * schedule on disk for the resolve pass.
 */
#include "load.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

void cg_set_init(struct cg_set *set)
{
    memset(set, 0, sizeof(*set));
}

void cg_set_fini(struct cg_set *set)
{
    for (int i = 0; i < set->n; i++) {
        cg_arena_fini(&set->items[i]->arena);
        free((char *)set->items[i]->path);
        free(set->items[i]);
    }
    free(set->items);
    memset(set, 0, sizeof(*set));
}

/* Passes 1 and 2 of path into a new cg_loaded. */
static struct cg_loaded *load_one(struct cg_gen *g, const char *path, int *ok)
{
    struct cg_loaded *l = calloc(1, sizeof(*l));
    char *copy = strdup(path);
    if (l == NULL || copy == NULL) {
        cg_panic("out of memory loading %s", path);
    }
    l->path = copy;
    /* 1. JSON text -> IR with source positions; 2. names bound, identifiers
     * and shapes checked. */
    *ok = cg_parse(g, &l->arena, path, &l->s) == 0 && cg_check(g, &l->arena, &l->s) == 0;
    return l;
}

static void append(struct cg_set *set, struct cg_loaded *l)
{
    if (set->n == set->cap) {
        set->cap = set->cap ? 2 * set->cap : 16;
        set->items = realloc(set->items, sizeof(*set->items) * (size_t)set->cap);
        if (set->items == NULL) {
            cg_panic("out of memory");
        }
    }
    set->items[set->n++] = l;
}

int cg_set_load(struct cg_gen *g, struct cg_set *set, const char *path)
{
    if (set->n != set->nfiles) {
        cg_panic("cg_set_load after a callee was loaded");
    }
    int ok = 0;
    append(set, load_one(g, path, &ok));
    set->nfiles++;
    return ok ? 0 : -1;
}

int cg_set_load_all(struct cg_gen *g, struct cg_set *set, char *const *files, int nfiles)
{
    int bad = 0;
    for (int i = 0; i < nfiles; i++) {
        bad += cg_set_load(g, set, files[i]) != 0;
    }
    return bad;
}

const struct cg_schedule *cg_set_find(const struct cg_set *set, const char *name)
{
    /* The last of equal names, as the resolve pass always took (emit
     * rejects two schedules of one name). */
    for (int i = set->n - 1; i >= 0; i--) {
        if (set->items[i]->s.checked && strcmp(set->items[i]->s.name, name) == 0) {
            return &set->items[i]->s;
        }
    }
    return NULL;
}

const struct cg_schedule *cg_set_load_named(struct cg_gen *g, struct cg_set *set,
                                            const char *dir, const char *name)
{
    char **files = NULL, **dirs = NULL;
    int nfiles = 0, ndirs = 0;
    const struct cg_schedule *found = NULL;
    FILE *null = fopen("/dev/null", "w");
    struct cg_gen quiet = *g;
    cg_diag_init(&quiet.diag, null ? null : stderr);
    cg_scan(dir, &files, &nfiles, &dirs, &ndirs);
    for (int i = 0; i < nfiles && found == NULL; i++) {
        int ok = 0;
        struct cg_loaded *l = load_one(&quiet, files[i], &ok);
        if (ok && strcmp(l->s.name, name) == 0) {
            append(set, l);
            found = &l->s;
        } else {
            cg_arena_fini(&l->arena);
            free((char *)l->path);
            free(l);
        }
    }
    cg_scan_free(files, nfiles);
    cg_scan_free(dirs, ndirs);
    if (null) {
        fclose(null);
    }
    return found;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void push(char ***list, int *n, char *s)
{
    char **grown = realloc(*list, sizeof(char *) * (size_t)(*n + 1));
    if (grown == NULL || s == NULL) {
        cg_panic("out of memory scanning schedules");
    }
    *list = grown;
    (*list)[(*n)++] = s;
}

void cg_scan(const char *dir, char ***files, int *nfiles, char ***dirs, int *ndirs)
{
    DIR *d = opendir(dir);
    if (d == NULL) {
        return;
    }
    push(dirs, ndirs, strdup(dir));
    char **names = NULL;
    int n = 0;
    for (struct dirent *e = readdir(d); e; e = readdir(d)) {
        if (e->d_name[0] == '.') {
            continue;
        }
        size_t len = strlen(dir) + strlen(e->d_name) + 2;
        char *path = malloc(len);
        if (path != NULL) {
            snprintf(path, len, "%s/%s", dir, e->d_name);
        }
        push(&names, &n, path);
    }
    closedir(d);
    if (n > 0) {
        qsort(names, (size_t)n, sizeof(char *), cmp_str);
    }
    for (int i = 0; i < n; i++) {
        struct stat st;
        size_t len = strlen(names[i]);
        if (stat(names[i], &st) == 0 && S_ISDIR(st.st_mode)) {
            cg_scan(names[i], files, nfiles, dirs, ndirs);
            free(names[i]);
        } else if (len > 5 && strcmp(names[i] + len - 5, ".json") == 0) {
            push(files, nfiles, names[i]);
        } else {
            free(names[i]);
        }
    }
    free(names);
}

void cg_scan_free(char **list, int n)
{
    for (int i = 0; i < n; i++) {
        free(list[i]);
    }
    free(list);
}

/* The default options of a generator run. */
void cg_options_init(struct cg_options *opt)
{
    static const int extra[] = {100, 127, 128, 255, 256, 1000};
    memset(opt, 0, sizeof(*opt));
    for (int p = 1; p <= 64; p++) {
        opt->p_list[opt->np++] = p;
    }
    for (size_t i = 0; i < sizeof(extra) / sizeof(extra[0]); i++) {
        opt->p_list[opt->np++] = extra[i];
    }
    opt->all_roots_max_p = 64;
    opt->out_dir = "emitted";
    opt->depfile = NULL;
    opt->quiet = 0;
}
