/* descriptor.c - platform and test descriptors: JSON with positions
 * (runtime/util/json.h) -> validated structs (descriptor.h). Every check is here, so
 * that nothing starts before the whole campaign is known to make sense;
 * descriptors/README.md documents every key and rule.
 *
 * Errors are reported and counted, and validation goes on (up to the
 * diagnostic limit), so one run shows every mistake in a file.
 */
#include "descriptor.h"
#include "run_baseline.h"     /* baseline:<name> */
#include "strset.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

const char *const cg_dtype_names[CG_DT_COUNT_] = { "int32",   "int64",   "float",
                                                   "double",  "float16", "bfloat16" };
const int cg_dtype_sizes[CG_DT_COUNT_] = { 4, 8, 4, 8, 2, 2 };
const char *const cg_redop_names[CG_OP_COUNT_] = { "sum", "prod", "min", "max" };
const char *const cg_micro_names[CG_MICRO_COUNT_] = { "lane_pattern", "multi_collective" };

/* Placeholders a job's templates may use (descriptors/README.md). */
static const char *const ph_job[] = { "ranks",     "ranks_per_node", "nodes",  "program",
                                      "job",       "library",        "run_id", "campaign",
                                      "timeout_s", "time_limit",     "log",    "out_dir",
                                      NULL };
static const char *const ph_program[] = { "library", NULL };
static const char *const ph_force[] = { "collective", "COLLECTIVE", "name", "id", NULL };
static const char *const ph_knob[] = { "collective", "COLLECTIVE", NULL };
static const char *const ph_submit[] = { "script", NULL };
static const char *const ph_lines[] = { "setup", "env", "launch", NULL };
static const char *const ph_none[] = { NULL };

/* Most variables a slurm launcher may define. */
#define CG_VARS_MAX_DESC 32

/* Validation context: one per descriptor file. */
struct vctx {
    struct cg_diag *d;  /* where errors go */
    const char *file;   /* for messages */
    struct cg_arena *a; /* where results go */
    struct cg_strset seen; /* messages already reported ("line:col:text") */
    const char **vnames;   /* a slurm launcher's vars: placeholders of its script lines */
    int nvnames;           /* how many */
};

static void verr(struct vctx *v, struct cg_pos pos, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Reports an error unless the same text was already reported at the same
 * place: a top-level list applies to every collective, and one bad size
 * should be one message, not one per collective. */
static void verr(struct vctx *v, struct cg_pos pos, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    char *key = cg_arena_printf(v->a, "%d:%d:%s", pos.line, pos.col, msg);
    if (v->seen.arena == NULL) {
        cg_strset_init(&v->seen, v->a);
    }
    if (cg_strset_add(&v->seen, key, 0) >= 0) {
        return;
    }
    cg_error(v->d, v->file, pos, "%s", msg);
}

/* How often `key` was seen before in the list `set` belongs to (0: new).
 * Why a set: comparing each item with every earlier one, and reporting a
 * repeat once per earlier copy, made 3,000 repeats of one size take 40 s.
 * Callers report a repeat once, where this returns 1. */
static int repeats(struct vctx *v, struct cg_strset *set, const char *key)
{
    if (set->arena == NULL) {
        cg_strset_init(set, v->a);
    }
    int added = 0;
    int *n = cg_strset_get(set, key, &added);
    return (*n)++;
}

int cg_coll_by_name(const char *name)
{
    for (int c = 0; c < CG_COLL_COUNT_; c++) {
        if (strcmp(cg_colls[c].name, name) == 0) {
            return c;
        }
    }
    return -1;
}

static int index_of(const char *const *names, int n, const char *s)
{
    for (int i = 0; i < n; i++) {
        if (strcmp(names[i], s) == 0) {
            return i;
        }
    }
    return -1;
}

/* "a, b, c" from a NULL-terminated list or n names. */
static char *join(struct cg_arena *a, const char *const *names, int n, const char *sep)
{
    size_t len = 1;
    for (int i = 0; (n < 0 ? names[i] != NULL : i < n); i++) {
        len += strlen(names[i]) + strlen(sep);
    }
    char *out = cg_arena_alloc(a, len);
    for (int i = 0; (n < 0 ? names[i] != NULL : i < n); i++) {
        if (i > 0) {
            strcat(out, sep);
        }
        strcat(out, names[i]);
    }
    return out;
}

static const char *kind_article(const struct cg_json *j)
{
    return cg_json_kind_name(j->kind);
}

/* ---- typed getters --------------------------------------------------------
 * Each reports "'what' must be ..., not ..." at the value and returns -1 on
 * a wrong type or range. */

static int check_kind(struct vctx *v, const struct cg_json *j, enum cg_json_kind k,
                      const char *what)
{
    if (j->kind != k) {
        verr(v, j->pos, "'%s' must be %s, not %s", what, cg_json_kind_name(k), kind_article(j));
        return -1;
    }
    return 0;
}

static int get_int(struct vctx *v, const struct cg_json *j, const char *what, int64_t min,
                   int64_t max, int64_t *out)
{
    if (j->kind == CG_J_NUMBER && j->int_overflow) {
        verr(v, j->pos, "'%s' is out of range: %s is not in %lld..%lld", what, j->text,
             (long long)min, (long long)max);
        return -1;
    }
    if (j->kind != CG_J_NUMBER || !j->is_int) {
        verr(v, j->pos, "'%s' must be an integer, not %s", what,
             j->kind == CG_J_NUMBER ? "a fraction" : kind_article(j));
        return -1;
    }
    if (j->ival < min) {
        verr(v, j->pos, "'%s' must be at least %lld, not %lld", what, (long long)min,
             (long long)j->ival);
        return -1;
    }
    if (j->ival > max) {
        verr(v, j->pos, "'%s' must be at most %lld, not %lld", what, (long long)max,
             (long long)j->ival);
        return -1;
    }
    *out = j->ival;
    return 0;
}

static int get_num(struct vctx *v, const struct cg_json *j, const char *what, double lo_excl,
                   double hi_excl, double *out)
{
    if (j->kind != CG_J_NUMBER) {
        verr(v, j->pos, "'%s' must be a number, not %s", what, kind_article(j));
        return -1;
    }
    if (!(j->num > lo_excl && j->num < hi_excl)) {
        verr(v, j->pos, "'%s' must be above %g and below %g, not %g", what, lo_excl, hi_excl,
             j->num);
        return -1;
    }
    *out = j->num;
    return 0;
}

static const char *get_str(struct vctx *v, const struct cg_json *j, const char *what)
{
    if (check_kind(v, j, CG_J_STRING, what) != 0) {
        return NULL;
    }
    return j->str;
}

/* One of names[0..n); reports "unknown <what> 'x'; expected one of: ...". */
static int get_enum(struct vctx *v, const struct cg_json *j, const char *what,
                    const char *const *names, int n)
{
    const char *s = get_str(v, j, what);
    if (s == NULL) {
        return -1;
    }
    int i = index_of(names, n, s);
    if (i < 0) {
        verr(v, j->str_pos, "unknown %s '%s'; expected one of: %s", what, s,
             join(v->a, names, n, ", "));
    }
    return i;
}

static int is_ident(const char *s, int upper_ok)
{
    if (!(isalpha((unsigned char)s[0]) || s[0] == '_')) {
        return 0;
    }
    for (const char *c = s; *c; c++) {
        if (!(isalnum((unsigned char)*c) || *c == '_' || (!upper_ok && (*c == '-' || *c == '.')))) {
            return 0;
        }
    }
    return 1;
}

/* Position of byte `off` of a string value (exact unless it had escapes). */
static struct cg_pos str_at(const struct cg_json *j, size_t off)
{
    if (j->raw_escapes) {
        return j->pos;
    }
    struct cg_pos p = j->str_pos;
    p.col += (int)off;
    return p;
}

/* Checks every {placeholder} of a template string against the lists
 * allowed (NULL-terminated lists; `extra` may be NULL). Whole-line
 * placeholders (script lines) must be the entire string. */
static int check_template(struct vctx *v, const struct cg_json *j, const char *what,
                          const char *const *allowed, const char *const *extra, int nextra,
                          int lines_ok)
{
    int bad = 0;
    const char *s = j->str;
    for (const char *c = s; *c; c++) {
        if (*c == '}') {
            verr(v, str_at(j, (size_t)(c - s)), "'}' without '{' in %s", what);
            bad++;
            continue;
        }
        if (*c != '{') {
            continue;
        }
        const char *e = strchr(c + 1, '}');
        if (e == NULL) {
            verr(v, str_at(j, (size_t)(c - s)), "unterminated placeholder in %s (a '}' is missing)",
                 what);
            return bad + 1;
        }
        size_t n = (size_t)(e - c - 1);
        char name[64];
        if (n == 0 || n >= sizeof(name)) {
            verr(v, str_at(j, (size_t)(c - s)), "empty or overlong placeholder in %s", what);
            bad++;
            c = e;
            continue;
        }
        memcpy(name, c + 1, n);
        name[n] = '\0';
        int ok = 0;
        for (int i = 0; allowed[i] != NULL; i++) {
            if (strcmp(allowed[i], name) == 0) {
                ok = 1;
            }
        }
        for (int i = 0; extra != NULL && i < nextra; i++) {
            if (strcmp(extra[i], name) == 0) {
                ok = 1;
            }
        }
        if (lines_ok && index_of(ph_lines, 3, name) >= 0) {
            if ((size_t)(e - s + 1) != strlen(s) || c != s) {
                verr(v, str_at(j, (size_t)(c - s)), "{%s} must be a line of its own in %s", name,
                     what);
                bad++;
            }
            ok = 1;
        }
        if (!ok) {
            const char *known = join(v->a, allowed, -1, "}, {");
            if (extra != NULL && nextra > 0) {
                known = cg_arena_printf(v->a, "%s}, {%s", known, join(v->a, extra, nextra, "}, {"));
            }
            if (lines_ok) {
                known = cg_arena_printf(v->a, "%s}, {setup}, {env}, {launch", known);
            }
            verr(v, str_at(j, (size_t)(c - s)), "unknown placeholder {%s} in %s; known here: {%s}",
                 name, what, known);
            bad++;
        }
        c = e;
    }
    return bad;
}

static int check_schema_version(struct vctx *v, const struct cg_json *root, const char *what)
{
    const struct cg_json *sv = cg_json_get(root, "schema_version");
    if (sv == NULL) {
        verr(v, root->pos, "missing key 'schema_version' in %s (this collgen reads version %d)",
             what, CG_DESC_SCHEMA_VERSION);
        return -1;
    }
    int64_t n;
    if (sv->kind != CG_J_NUMBER || !sv->is_int) {
        return get_int(v, sv, "schema_version", 1, 1, &n);
    }
    if (sv->ival != CG_DESC_SCHEMA_VERSION) {
        verr(v, sv->pos, "schema_version %lld is not supported; this collgen reads version %d",
             (long long)sv->ival, CG_DESC_SCHEMA_VERSION);
        return -1;
    }
    return 0;
}

/* Why: an algorithm id or a knob value is put into an environment value
 * that is expanded once more per launch (its {timeout_s}, ...), so a brace
 * in it would be read as a placeholder and stop the run with an internal
 * error. Reports one in j (a string) and returns 1, else 0. */
static int check_literal(struct vctx *v, const struct cg_json *j, const char *what)
{
    const char *c = strpbrk(j->str, "{}");
    if (c == NULL) {
        return 0;
    }
    verr(v, str_at(j, (size_t)(c - j->str)),
         "%s '%s' may not contain '{' or '}' (it is put into environment values, where they "
         "mark placeholders)", what, j->str);
    return 1;
}

/* Checks a slurm platform's or library's `setup` lines: they go into the
 * batch script and may use what its lines use (the job's placeholders and
 * the launcher's vars), never {setup}, {env}, {launch} or {script}. */
static int check_setup(struct vctx *v, const struct cg_json *e)
{
    int bad = 0;
    for (int i = 0; i < e->nitems; i++) {
        if (e->items[i]->kind == CG_J_STRING) {
            bad += check_template(v, e->items[i], "'setup'", ph_job, v->vnames, v->nvnames, 0);
        }
    }
    return bad;
}

/* An array of template strings. */
static int get_str_array(struct vctx *v, const struct cg_json *j, const char *what,
                         struct cg_str **out, int *n, int nonempty)
{
    if (check_kind(v, j, CG_J_ARRAY, what) != 0) {
        return -1;
    }
    if (nonempty && j->nitems == 0) {
        verr(v, j->pos, "'%s' must not be empty", what);
        return -1;
    }
    *out = cg_arena_alloc(v->a, sizeof(**out) * (size_t)(j->nitems + 1));
    *n = 0;
    int bad = 0;
    for (int i = 0; i < j->nitems; i++) {
        const struct cg_json *e = j->items[i];
        if (e->kind != CG_J_STRING) {
            verr(v, e->pos, "'%s' must hold strings, not %s", what, kind_article(e));
            bad++;
            continue;
        }
        (*out)[*n].s = e->str;
        (*out)[*n].pos = e->pos;
        (*n)++;
    }
    return bad ? -1 : 0;
}

/* An object of NAME: "value" pairs; names must be environment variable
 * names (after placeholders, when names_tmpl lists some). */
static int get_env(struct vctx *v, const struct cg_json *j, const char *what, struct cg_kv **out,
                   int *n, const char *const *name_ph, const char *const *value_ph)
{
    if (check_kind(v, j, CG_J_OBJECT, what) != 0) {
        return -1;
    }
    *out = cg_arena_alloc(v->a, sizeof(**out) * (size_t)(j->nitems + 1));
    *n = 0;
    int bad = 0;
    for (int i = 0; i < j->nitems; i++) {
        const struct cg_json *e = j->items[i];
        /* A name with placeholders is checked without them. */
        char *plain = cg_arena_strdup(v->a, e->key);
        char *w = plain;
        for (const char *c = e->key; *c; c++) {
            if (*c == '{') {
                const char *end = strchr(c, '}');
                if (end != NULL) {
                    *w++ = 'X';
                    c = end;
                    continue;
                }
            }
            *w++ = *c;
        }
        *w = '\0';
        if (!is_ident(plain, 1)) {
            verr(v, e->key_pos, "'%s' in '%s' is not an environment variable name", e->key, what);
            bad++;
        }
        if (e->kind != CG_J_STRING) {
            verr(v, e->pos, "'%s' values must be strings, not %s (write \"%s\": \"...\")", what,
                 kind_article(e), e->key);
            bad++;
            continue;
        }
        struct cg_json keynode = *e;
        keynode.kind = CG_J_STRING;
        keynode.str = e->key;
        keynode.str_pos = e->key_pos;
        keynode.str_pos.col++;
        keynode.pos = e->key_pos;
        keynode.raw_escapes = 0;
        /* NULL lists: free text (the test's env), no placeholders. */
        if (name_ph != NULL) {
            bad += check_template(v, &keynode, what, name_ph, NULL, 0, 0);
        }
        if (value_ph != NULL) {
            bad += check_template(v, e, what, value_ph, NULL, 0, 0);
        }
        (*out)[*n].key.s = e->key;
        (*out)[*n].key.pos = e->key_pos;
        (*out)[*n].value.s = e->str;
        (*out)[*n].value.pos = e->pos;
        (*n)++;
    }
    return bad ? -1 : 0;
}

static const char *base_name(struct cg_arena *a, const char *path)
{
    const char *b = strrchr(path, '/');
    b = b ? b + 1 : path;
    char *s = cg_arena_strdup(a, b);
    size_t n = strlen(s);
    if (n > 5 && strcmp(s + n - 5, ".json") == 0) {
        s[n - 5] = '\0';
    }
    return s;
}

/* ---- platform descriptor ------------------------------------------------ */

static int parse_algo(struct vctx *v, const struct cg_json *j, struct cg_algo_spec *a)
{
    a->name = j->key;
    a->pos = j->key_pos;
    if (!is_ident(j->key, 0)) {
        verr(v, j->key_pos, "algorithm name '%s' must be letters, digits, '_', '-' or '.'", j->key);
        return -1;
    }
    if (strcmp(j->key, "default") == 0 || strcmp(j->key, "*") == 0) {
        verr(v, j->key_pos, "'%s' is reserved (native:%s is built in); it cannot name an algorithm",
             j->key, j->key);
        return -1;
    }
    switch (j->kind) {
    case CG_J_NULL:
        return 0;
    case CG_J_STRING:
        a->id = j->str;
        return check_literal(v, j, cg_arena_printf(v->a, "algorithm '%s': id", j->key)) ? -1 : 0;
    case CG_J_NUMBER:
        if (!j->is_int) {
            verr(v, j->pos, "algorithm '%s': an id must be an integer or a string%s", j->key,
                 j->int_overflow ? " (this one is beyond 64-bit integers)" : "");
            return -1;
        }
        a->id = cg_arena_printf(v->a, "%lld", (long long)j->ival);
        return 0;
    case CG_J_OBJECT:
        break;
    default:
        verr(v, j->pos,
             "algorithm '%s' must be its id (an integer or a string), null, or an object, not %s",
             j->key, kind_article(j));
        return -1;
    }
    static const char *const keys[] = {
        "id", "only_ranks", "pow2_ranks", "even_ranks", "note", NULL
    };
    int bad = cg_json_check_keys(v->d, v->file, j, "an algorithm", keys);
    for (int i = 0; i < j->nitems; i++) {
        const struct cg_json *e = j->items[i];
        int64_t n;
        if (strcmp(e->key, "id") == 0) {
            if (e->kind == CG_J_STRING) {
                a->id = e->str;
                bad += check_literal(v, e, cg_arena_printf(v->a, "algorithm '%s': id", j->key));
            } else if (e->kind == CG_J_NUMBER && e->is_int) {
                a->id = cg_arena_printf(v->a, "%lld", (long long)e->ival);
            } else if (e->kind != CG_J_NULL) {
                verr(v, e->pos, "'id' must be an integer, a string or null, not %s",
                     kind_article(e));
                bad++;
            }
        } else if (strcmp(e->key, "only_ranks") == 0) {
            if (get_int(v, e, "only_ranks", 1, INT_MAX, &n) == 0) {
                a->only_ranks = (int)n;
            } else {
                bad++;
            }
        } else if (strcmp(e->key, "pow2_ranks") == 0 || strcmp(e->key, "even_ranks") == 0) {
            if (check_kind(v, e, CG_J_BOOL, e->key) == 0) {
                *(e->key[0] == 'p' ? &a->pow2_ranks : &a->even_ranks) = e->boolean;
            } else {
                bad++;
            }
        } else if (strcmp(e->key, "note") == 0) {
            a->note = get_str(v, e, "note");
            bad += a->note == NULL;
        }
    }
    return bad ? -1 : 0;
}

/* "algorithm_at_run_time" of a library: how bench forces native:<algorithm>
 * in the launch of the generated points (harness/README.md, "Forced in the
 * same launch"): algorithm_env's variables written through MPI_T, except
 * those of "launch_env", which the library reads only at MPI_Init and
 * which the launch therefore sets (their values may not depend on the
 * algorithm); "new_communicator": the library reads the others when a
 * communicator is created (Open MPI's coll/tuned), so bench runs the point
 * on a new duplicate. */
static int parse_run_time(struct vctx *v, const struct cg_json *e, struct cg_library *l)
{
    static const char *const keys[] = { "launch_env", "new_communicator", "note", NULL };
    int bad = 0;

    if (check_kind(v, e, CG_J_OBJECT, "algorithm_at_run_time") != 0) {
        return -1;
    }
    bad += cg_json_check_keys(v->d, v->file, e, "'algorithm_at_run_time'", keys);
    const struct cg_json *x;
    if ((x = cg_json_get(e, "note")) != NULL) {
        bad += get_str(v, x, "note") == NULL;
    }
    if ((x = cg_json_get(e, "new_communicator")) != NULL) {
        if (check_kind(v, x, CG_J_BOOL, "new_communicator") == 0) {
            l->new_comm = x->boolean;
        } else {
            bad++;
        }
    }
    if ((x = cg_json_get(e, "launch_env")) != NULL) {
        struct cg_str *names = NULL;
        int n = 0;
        if (get_str_array(v, x, "launch_env", &names, &n, 0) != 0) {
            return -1;
        }
        l->launch_keys = cg_arena_alloc(v->a, sizeof(*l->launch_keys) * (size_t)(n + 1));
        for (int i = 0; i < n; i++) {
            int found = 0;
            for (int k = 0; k < l->nforce_env; k++) {
                if (strcmp(l->force_env[k].key.s, names[i].s) != 0) {
                    continue;
                }
                found = 1;
                if (strchr(l->force_env[k].value.s, '{') != NULL) {
                    verr(v, names[i].pos,
                         "'launch_env' names %s, whose value \"%s\" depends on the algorithm: "
                         "one launch runs several algorithms",
                         names[i].s, l->force_env[k].value.s);
                    bad++;
                }
            }
            if (!found) {
                verr(v, names[i].pos, "'launch_env' names %s, which is not in 'algorithm_env'",
                     names[i].s);
                bad++;
            }
            l->launch_keys[l->nlaunch_keys++] = names[i].s;
        }
    }
    if (l->nforce_env == 0) {
        verr(v, e->pos, "'algorithm_at_run_time' without an 'algorithm_env' to write");
        bad++;
    }
    l->at_run_time = (bad == 0);
    return bad ? -1 : 0;
}

static int parse_library(struct vctx *v, const struct cg_json *j, struct cg_library *l,
                         enum cg_launcher launcher)
{
    memset(l, 0, sizeof(*l));
    l->name = j->key;
    l->pos = j->key_pos;
    if (!is_ident(j->key, 0)) {
        verr(v, j->key_pos, "library name '%s' must be letters, digits, '_', '-' or '.'", j->key);
    }
    if (check_kind(v, j, CG_J_OBJECT, j->key) != 0) {
        return -1;
    }
    static const char *const keys[] = { "backend",    "version", "note", "launch",
                                        "program",    "setup",   "env",  "algorithm_env",
                                        "algorithms", "knobs",   "algorithm_at_run_time",
                                        NULL };
    int bad = cg_json_check_keys(v->d, v->file, j, "a library", keys);
    static const char *const backends[] = { "mpi", "nccl" };
    const struct cg_json *e;
    if ((e = cg_json_get(j, "backend")) == NULL) {
        verr(v, j->pos, "missing key 'backend' in library '%s' (mpi or nccl)", l->name);
        bad++;
    } else {
        int b = get_enum(v, e, "backend", backends, 2);
        if (b >= 0) {
            l->backend = backends[b];
        } else {
            bad++;
        }
    }
    if ((e = cg_json_get(j, "version")) != NULL) {
        l->version = get_str(v, e, "version");
    }
    if ((e = cg_json_get(j, "note")) != NULL) {
        bad += get_str(v, e, "note") == NULL;
    }
    if ((e = cg_json_get(j, "launch")) != NULL && e->kind != CG_J_NULL) {
        if (get_str_array(v, e, "launch", &l->launch, &l->nlaunch, 1) != 0) {
            bad++;
        } else {
            int has_job = 0, has_prog = 0;
            for (int i = 0; i < e->nitems; i++) {
                bad += check_template(v, e->items[i], "'launch'", ph_job, NULL, 0, 0);
                has_job |= strstr(e->items[i]->str, "{job}") != NULL;
                has_prog |= strstr(e->items[i]->str, "{program}") != NULL;
            }
            if (!has_job || !has_prog) {
                verr(v, e->pos,
                     "'launch' of library '%s' never mentions {%s}: the benchmark "
                     "program would not %s",
                     l->name, has_prog ? "job" : "program",
                     has_prog ? "find its job file" : "be started");
                bad++;
            }
        }
        const struct cg_json *pr = cg_json_get(j, "program");
        if (pr == NULL) {
            verr(v, j->pos,
                 "missing key 'program' in library '%s' (the benchmark program, e.g. "
                 "\"build/{library}/bench\")",
                 l->name);
            bad++;
        } else if (check_kind(v, pr, CG_J_STRING, "program") == 0) {
            l->program.s = pr->str;
            l->program.pos = pr->pos;
            bad += check_template(v, pr, "'program'", ph_program, NULL, 0, 0);
        } else {
            bad++;
        }
    } else if ((e = cg_json_get(j, "program")) != NULL) {
        bad += check_kind(v, e, CG_J_STRING, "program") != 0;
    }
    if ((e = cg_json_get(j, "setup")) != NULL) {
        if (launcher != CG_LAUNCH_SLURM) {
            verr(v, e->pos, "'setup' lines need a batch script: only a slurm launcher runs them");
            bad++;
        } else if (get_str_array(v, e, "setup", &l->setup, &l->nsetup, 0) != 0) {
            bad++;
        } else {
            bad += check_setup(v, e);
        }
    }
    if ((e = cg_json_get(j, "env")) != NULL) {
        bad += get_env(v, e, "env", &l->env, &l->nenv, ph_none, ph_job) != 0;
    }
    const struct cg_json *fe = cg_json_get(j, "algorithm_env");
    if (fe != NULL) {
        bad +=
            get_env(v, fe, "algorithm_env", &l->force_env, &l->nforce_env, ph_force, ph_force) != 0;
    }
    int uses_id = 0;
    for (int i = 0; i < l->nforce_env; i++) {
        uses_id |= strstr(l->force_env[i].key.s, "{id}") != NULL ||
                   strstr(l->force_env[i].value.s, "{id}") != NULL;
    }
    int nalgos = 0;
    if ((e = cg_json_get(j, "algorithms")) != NULL &&
        check_kind(v, e, CG_J_OBJECT, "algorithms") == 0) {
        for (int i = 0; i < e->nitems; i++) {
            const struct cg_json *c = e->items[i];
            int coll = cg_coll_by_name(c->key);
            if (coll < 0 || coll >= CG_HARNESS_COLLS) {
                const char *names[CG_HARNESS_COLLS];
                for (int k = 0; k < CG_HARNESS_COLLS; k++) {
                    names[k] = cg_colls[k].name;
                }
                if (coll < 0) {
                    verr(v, c->key_pos, "unknown collective '%s'; expected one of: %s", c->key,
                         join(v->a, names, CG_HARNESS_COLLS, ", "));
                } else {
                    verr(v, c->key_pos,
                         "the harness does not measure %s yet (the generator knows it; the "
                         "benchmark program runs %s)",
                         c->key, join(v->a, names, CG_HARNESS_COLLS, ", "));
                }
                bad++;
                continue;
            }
            if (check_kind(v, c, CG_J_OBJECT, c->key) != 0) {
                bad++;
                continue;
            }
            struct cg_lib_coll *lc = &l->colls[coll];
            lc->present = 1;
            lc->algos = cg_arena_alloc(v->a, sizeof(*lc->algos) * (size_t)(c->nitems + 1));
            for (int k = 0; k < c->nitems; k++) {
                struct cg_algo_spec *a = &lc->algos[lc->nalgos];
                if (parse_algo(v, c->items[k], a) != 0) {
                    bad++;
                    continue;
                }
                if (uses_id && a->id == NULL) {
                    verr(v, a->pos,
                         "algorithm '%s' has no id, but the 'algorithm_env' of library "
                         "'%s' uses {id}",
                         a->name, l->name);
                    bad++;
                }
                lc->nalgos++;
                nalgos++;
            }
        }
    } else if (e != NULL) {
        bad++;
    }
    if ((e = cg_json_get(j, "algorithm_at_run_time")) != NULL) {
        bad += parse_run_time(v, e, l) != 0;
    }
    if (nalgos > 0 && l->nforce_env == 0) {
        verr(v, fe != NULL ? fe->pos : j->pos,
             "library '%s' lists algorithms but %s: nothing "
             "would force them",
             l->name, fe != NULL ? "its 'algorithm_env' is empty" : "has no 'algorithm_env'");
        bad++;
    }
    if ((e = cg_json_get(j, "knobs")) != NULL &&
        check_kind(v, e, CG_J_OBJECT, "knobs") == 0) {
        l->knobs = cg_arena_alloc(v->a, sizeof(*l->knobs) * (size_t)(e->nitems + 1));
        for (int i = 0; i < e->nitems; i++) {
            const struct cg_json *k = e->items[i];
            if (check_kind(v, k, CG_J_OBJECT, k->key) != 0) {
                bad++;
                continue;
            }
            static const char *const kkeys[] = { "env", "doc", NULL };
            bad += cg_json_check_keys(v->d, v->file, k, "a knob", kkeys);
            struct cg_knob *kn = &l->knobs[l->nknobs];
            kn->name = k->key;
            kn->pos = k->key_pos;
            const struct cg_json *ke = cg_json_get(k, "env");
            if (ke == NULL) {
                verr(v, k->pos, "missing key 'env' in knob '%s' (the variable that sets it)",
                     k->key);
                bad++;
                continue;
            }
            if (check_kind(v, ke, CG_J_STRING, "env") != 0 ||
                check_template(v, ke, "a knob's 'env'", ph_knob, NULL, 0, 0) != 0) {
                bad++;
                continue;
            }
            kn->env.s = ke->str;
            kn->env.pos = ke->pos;
            const struct cg_json *kd = cg_json_get(k, "doc");
            kn->doc = kd != NULL ? get_str(v, kd, "doc") : NULL;
            l->nknobs++;
        }
    } else if (e != NULL) {
        bad++;
    }
    return bad ? -1 : 0;
}

int cg_platform_load(struct cg_platform *p, struct cg_arena *arena, struct cg_diag *d,
                     const char *file, const char *text, size_t len)
{
    memset(p, 0, sizeof(*p));
    p->file = file;
    p->name = base_name(arena, file);
    p->text = text;
    p->len = len;
    struct vctx v = { d, file, arena, { 0 }, NULL, 0 };
    int before = d->errors;
    struct cg_json *root = cg_json_parse(arena, d, file, text, len);
    if (root == NULL) {
        return -1;
    }
    if (root->kind != CG_J_OBJECT) {
        verr(&v, root->pos, "a platform descriptor must be an object, not %s", kind_article(root));
        return -1;
    }
    const char *vnames[CG_VARS_MAX_DESC];
    static const char *const keys[] = { "schema_version", "description", "launcher", "setup", "env",
                                        "transport_env",  "libraries",   NULL };
    cg_json_check_keys(d, file, root, "platform descriptor", keys);
    check_schema_version(&v, root, "platform descriptor");
    const struct cg_json *e;
    if ((e = cg_json_get(root, "description")) != NULL) {
        p->description = get_str(&v, e, "description");
    }
    const struct cg_json *l = cg_json_get(root, "launcher");
    if (l == NULL) {
        verr(&v, root->pos,
             "missing key 'launcher' in platform descriptor "
             "({\"kind\": \"local\"} or {\"kind\": \"slurm\", ...})");
    } else if (check_kind(&v, l, CG_J_OBJECT, "launcher") == 0) {
        static const char *const kinds[] = { "local", "slurm" };
        const struct cg_json *k = cg_json_get(l, "kind");
        int kind = -1;
        if (k == NULL) {
            verr(&v, l->pos, "missing key 'kind' in launcher (local or slurm)");
        } else {
            kind = get_enum(&v, k, "launcher kind", kinds, 2);
        }
        p->launcher = kind == 1 ? CG_LAUNCH_SLURM : CG_LAUNCH_LOCAL;
        static const char *const lkeys[] = { "kind", NULL };
        static const char *const skeys[] = { "kind", "submit", "script", "vars", NULL };
        cg_json_check_keys(d, file, l, kind == 1 ? "a slurm launcher" : "a local launcher",
                           kind == 1 ? skeys : lkeys);
        if (kind == 1) {
            int nv = 0;
            const struct cg_json *vars = cg_json_get(l, "vars");
            if (vars != NULL &&
                get_env(&v, vars, "vars", &p->vars, &p->nvars, ph_none, ph_job) == 0) {
                for (int i = 0; i < p->nvars; i++) {
                    int hides = 0;
                    for (int k2 = 0; ph_job[k2] != NULL; k2++) {
                        if (strcmp(ph_job[k2], p->vars[i].key.s) == 0) {
                            verr(&v, p->vars[i].key.pos,
                                 "var '%s' would hide the built-in "
                                 "placeholder {%s}",
                                 ph_job[k2], ph_job[k2]);
                            hides = 1;
                        }
                    }
                    if (hides) {
                        continue;
                    }
                    if (nv == CG_VARS_MAX_DESC) {
                        verr(&v, p->vars[i].key.pos, "more than %d vars", CG_VARS_MAX_DESC);
                        break;
                    }
                    vnames[nv++] = p->vars[i].key.s;
                }
            }
            const struct cg_json *sub = cg_json_get(l, "submit");
            if (sub == NULL) {
                verr(&v, l->pos,
                     "missing key 'submit' in slurm launcher (e.g. [\"sbatch\", "
                     "\"--wait\", \"{script}\"])");
            } else if (get_str_array(&v, sub, "submit", &p->submit, &p->nsubmit, 1) == 0) {
                int has_script = 0;
                for (int i = 0; i < sub->nitems; i++) {
                    check_template(&v, sub->items[i], "'submit'", ph_submit, NULL, 0, 0);
                    has_script |= strstr(sub->items[i]->str, "{script}") != NULL;
                }
                if (!has_script) {
                    verr(&v, sub->pos,
                         "'submit' never mentions {script}: nothing would be "
                         "submitted");
                }
            }
            const struct cg_json *scr = cg_json_get(l, "script");
            if (scr == NULL) {
                verr(&v, l->pos,
                     "missing key 'script' in slurm launcher (the batch script's "
                     "lines)");
            } else if (get_str_array(&v, scr, "script", &p->script, &p->nscript, 1) == 0) {
                int has_launch = 0;
                for (int i = 0; i < scr->nitems; i++) {
                    check_template(&v, scr->items[i], "'script'", ph_job, vnames, nv, 1);
                    has_launch |= strcmp(scr->items[i]->str, "{launch}") == 0;
                }
                if (!has_launch) {
                    verr(&v, scr->pos,
                         "'script' has no {launch} line: the job would run "
                         "nothing");
                }
            }
            v.vnames = vnames;
            v.nvnames = nv;
        }
    }
    if ((e = cg_json_get(root, "setup")) != NULL) {
        if (p->launcher != CG_LAUNCH_SLURM) {
            verr(&v, e->pos, "'setup' lines need a batch script: only a slurm launcher runs them");
        } else if (get_str_array(&v, e, "setup", &p->setup, &p->nsetup, 0) == 0) {
            check_setup(&v, e);
        }
    }
    if ((e = cg_json_get(root, "env")) != NULL) {
        get_env(&v, e, "env", &p->env, &p->nenv, ph_none, ph_job);
    }
    if ((e = cg_json_get(root, "transport_env")) != NULL) {
        struct cg_str *names = NULL;
        int n = 0;
        if (get_str_array(&v, e, "transport_env", &names, &n, 0) == 0) {
            p->transport_env = cg_arena_alloc(arena, sizeof(char *) * (size_t)(n + 1));
            for (int i = 0; i < n; i++) {
                if (!is_ident(names[i].s, 1)) {
                    verr(&v, names[i].pos, "'%s' is not an environment variable name", names[i].s);
                }
                p->transport_env[p->ntransport_env++] = names[i].s;
            }
        }
    }
    const struct cg_json *libs = cg_json_get(root, "libraries");
    if (libs == NULL) {
        verr(&v, root->pos, "missing key 'libraries' in platform descriptor");
    } else if (check_kind(&v, libs, CG_J_OBJECT, "libraries") == 0) {
        if (libs->nitems == 0) {
            verr(&v, libs->pos, "'libraries' must not be empty");
        }
        p->libs = cg_arena_alloc(arena, sizeof(*p->libs) * (size_t)(libs->nitems + 1));
        for (int i = 0; i < libs->nitems; i++) {
            if (parse_library(&v, libs->items[i], &p->libs[p->nlibs], p->launcher) == 0) {
                p->nlibs++;
            }
        }
    }
    return d->errors > before ? -1 : 0;
}

const struct cg_library *cg_platform_library(const struct cg_platform *p, const char *name)
{
    for (int i = 0; i < p->nlibs; i++) {
        if (strcmp(p->libs[i].name, name) == 0) {
            return &p->libs[i];
        }
    }
    return NULL;
}

const struct cg_algo_spec *cg_library_algo(const struct cg_library *l, enum cg_coll c,
                                           const char *name)
{
    const struct cg_lib_coll *lc = &l->colls[c];
    for (int i = 0; i < lc->nalgos; i++) {
        if (strcmp(lc->algos[i].name, name) == 0) {
            return &lc->algos[i];
        }
    }
    return NULL;
}

const char *cg_algo_ranks_problem(const struct cg_algo_spec *a, int ranks, char *buf, size_t cap)
{
    if (a->only_ranks > 0 && ranks != a->only_ranks) {
        snprintf(buf, cap, "works only at %d ranks", a->only_ranks);
        return buf;
    }
    if (a->pow2_ranks && (ranks & (ranks - 1)) != 0) {
        snprintf(buf, cap, "needs a power-of-two number of ranks");
        return buf;
    }
    if (a->even_ranks && ranks % 2 != 0) {
        snprintf(buf, cap, "needs an even number of ranks");
        return buf;
    }
    return NULL;
}

/* ---- the schedules ------------------------------------------------------ */

/* What the generator wrote: emitted/registry.json (gen/README.md), the
 * harness's only view of the schedules. Why not schedules/: the harness would
 * parse and check them again, and decide again what the generator decides
 * (which schedules have a GPU twin); it runs what was emitted. */

/* A member of a registry object of the given kind, or NULL (r->problem). */
static const struct cg_json *reg_member(struct cg_registry *r, const struct cg_json *o,
                                        const char *key, enum cg_json_kind kind)
{
    const struct cg_json *m = o != NULL && o->kind == CG_J_OBJECT ? cg_json_get(o, key) : NULL;
    if (m == NULL || m->kind != kind) {
        if (r->problem == NULL) {
            r->problem = "is not a registry collgen emit wrote (run ninja)";
        }
        return NULL;
    }
    return m;
}

int cg_registry_load(struct cg_registry *r, struct cg_arena *arena, const char *path)
{
    memset(r, 0, sizeof(*r));
    r->path = path;
    FILE *quiet = fopen("/dev/null", "w");
    struct cg_diag d;
    cg_diag_init(&d, quiet != NULL ? quiet : stderr);
    size_t len = 0;
    char *text = cg_read_file(arena, &d, path, &len);
    const struct cg_json *root = text != NULL ? cg_json_parse(arena, &d, path, text, len) : NULL;
    if (quiet != NULL) {
        fclose(quiet);
    }
    if (text == NULL) {
        r->problem = "cannot be read (run ninja, and collgen from the repository root)";
        return -1;
    }
    const struct cg_json *list = reg_member(r, root, "schedules", CG_J_ARRAY);
    if (list == NULL) {
        return -1;
    }
    r->s = cg_arena_alloc(arena, sizeof(*r->s) * (size_t)(list->nitems + 1));
    for (int i = 0; i < list->nitems && r->problem == NULL; i++) {
        const struct cg_json *o = list->items[i];
        const struct cg_json *name = reg_member(r, o, "name", CG_J_STRING);
        const struct cg_json *coll = reg_member(r, o, "collective", CG_J_STRING);
        const struct cg_json *file = reg_member(r, o, "file", CG_J_STRING);
        const struct cg_json *params = reg_member(r, o, "params", CG_J_ARRAY);
        const struct cg_json *gpu = reg_member(r, o, "gpu", CG_J_BOOL);
        int c = coll != NULL ? cg_coll_lookup(coll->str) : -1;
        if (r->problem != NULL || c < 0) {
            r->problem = r->problem ? r->problem : "names a collective this harness does not know";
            break;
        }
        struct cg_sched_entry *se = &r->s[r->n++];
        se->name = name->str;
        se->coll = (enum cg_coll)c;
        se->file = file->str;
        se->gpu = gpu->boolean;
        se->params = cg_arena_alloc(arena, sizeof(*se->params) * (size_t)(params->nitems + 1));
        for (int k = 0; k < params->nitems && r->problem == NULL; k++) {
            const struct cg_json *pn = reg_member(r, params->items[k], "name", CG_J_STRING);
            const struct cg_json *pd = reg_member(r, params->items[k], "default", CG_J_NUMBER);
            const struct cg_json *lo = reg_member(r, params->items[k], "min", CG_J_NUMBER);
            const struct cg_json *hi = reg_member(r, params->items[k], "max", CG_J_NUMBER);
            const struct cg_json *rg = reg_member(r, params->items[k], "ranged", CG_J_BOOL);
            if (r->problem == NULL) {
                se->params[k] = (struct cg_sched_param){ pn->str, (int)pd->ival, (int)lo->ival,
                                                         (int)hi->ival, rg->boolean };
                se->nparams++;
            }
        }
    }
    if (r->problem != NULL) {
        r->n = 0;
        return -1;
    }
    r->loaded = 1;
    return 0;
}

/* Whether some schedule of collective c has a GPU twin (registry.json's
 * "gpu", which the generator decides). */
static int registry_has_gpu(const struct cg_registry *r, int c)
{
    for (int i = 0; i < r->n; i++) {
        if ((int)r->s[i].coll == c && r->s[i].gpu) {
            return 1;
        }
    }
    return 0;
}

static const struct cg_sched_entry *registry_find(const struct cg_registry *r, const char *name)
{
    for (int i = 0; i < r->n; i++) {
        if (strcmp(r->s[i].name, name) == 0) {
            return &r->s[i];
        }
    }
    return NULL;
}

const struct cg_sched_entry *cg_registry_find(const struct cg_registry *r, const char *name)
{
    return registry_find(r, name);
}

/* ---- test descriptor ---------------------------------------------------- */

/* Lists given at one level (the top, or one collective's entry). */
struct lists {
    const struct cg_json *sizes;    /* the "sizes" value, or NULL */
    int64_t *size;                  /* parsed sizes */
    struct cg_pos *size_pos;        /* their positions */
    int nsizes;                     /* how many */
    const struct cg_json *impls;    /* "implementations", or NULL */
    struct cg_impl_req *impl;       /* parsed */
    int nimpls;                     /* how many */
    const struct cg_json *dtypes;   /* "datatypes", or NULL */
    int dtype[CG_DT_COUNT_];        /* parsed */
    int ndtypes;                    /* how many */
    const struct cg_json *ops;      /* "ops", or NULL */
    int op[CG_OP_COUNT_];           /* parsed */
    int nops;                       /* how many */
    const struct cg_json *roots;    /* "roots", or NULL */
    int *root;                      /* parsed */
    struct cg_pos *root_pos;        /* their positions */
    int nroots;                     /* how many */
    const struct cg_json *in_place; /* "in_place", or NULL */
    int ip[2];                      /* parsed */
    struct cg_pos ip_pos[2];        /* their positions */
    int nip;                        /* how many */
};

static int parse_sizes(struct vctx *v, const struct cg_json *j, struct lists *L)
{
    if (j->kind == CG_J_OBJECT) {
        static const char *const keys[] = { "from", "to", "factor", NULL };
        int bad = cg_json_check_keys(v->d, v->file, j, "a size range", keys);
        const struct cg_json *f = cg_json_get(j, "from"), *t = cg_json_get(j, "to"),
                             *k = cg_json_get(j, "factor");
        if (f == NULL || t == NULL || k == NULL) {
            verr(v, j->pos,
                 "a size range needs 'from', 'to' and 'factor' (e.g. {\"from\": 8, "
                 "\"to\": 4194304, \"factor\": 4})");
            return -1;
        }
        int64_t from, to, factor;
        if (get_int(v, f, "from", 1, INT64_MAX / 4, &from) != 0 ||
            get_int(v, t, "to", 1, INT64_MAX / 4, &to) != 0 ||
            get_int(v, k, "factor", 2, 1 << 20, &factor) != 0) {
            return -1;
        }
        if (to < from) {
            verr(v, t->pos, "'to' (%lld) is below 'from' (%lld)", (long long)to, (long long)from);
            return -1;
        }
        if (bad) {
            return -1;
        }
        /* from, from x factor, ... while <= to, then `to` itself when it is
         * off that grid: both ends the test names are measured
         * ({8, 4194304, 4} gives 8 .. 2097152, 4194304). */
        int64_t last = from;
        int n = 1;
        while (last <= to / factor) {
            last *= factor;
            n++;
        }
        int off_grid = last != to;
        L->size = cg_arena_alloc(v->a, sizeof(int64_t) * (size_t)(n + 1));
        L->size_pos = cg_arena_alloc(v->a, sizeof(struct cg_pos) * (size_t)(n + 1));
        int64_t s = from;
        for (int i = 0; i < n; i++, s *= factor) {
            L->size[i] = s;
            L->size_pos[i] = f->pos;
        }
        if (off_grid) {
            L->size[n] = to;
            L->size_pos[n] = t->pos;
            n++;
        }
        L->nsizes = n;
        return 0;
    }
    if (j->kind != CG_J_ARRAY) {
        verr(v, j->pos,
             "'sizes' must be an array of byte counts or a range {\"from\", \"to\", "
             "\"factor\"}, not %s",
             kind_article(j));
        return -1;
    }
    if (j->nitems == 0) {
        verr(v, j->pos, "'sizes' must not be empty");
        return -1;
    }
    L->size = cg_arena_alloc(v->a, sizeof(int64_t) * (size_t)j->nitems);
    L->size_pos = cg_arena_alloc(v->a, sizeof(struct cg_pos) * (size_t)j->nitems);
    int bad = 0;
    struct cg_strset seen = { 0 };
    for (int i = 0; i < j->nitems; i++) {
        int64_t s;
        if (get_int(v, j->items[i], "sizes", 1, INT64_MAX / 4, &s) != 0) {
            bad++;
            continue;
        }
        int again = repeats(v, &seen, cg_arena_printf(v->a, "%lld", (long long)s));
        if (again == 1) {
            verr(v, j->items[i]->pos, "size %lld is listed twice", (long long)s);
        }
        bad += again > 0;
        L->size_pos[L->nsizes] = j->items[i]->pos;
        L->size[L->nsizes++] = s;
    }
    return bad ? -1 : 0;
}

/* An integer or an array of integers, each at least min, no repeats. */
static int parse_int_list(struct vctx *v, const struct cg_json *j, const char *what, int min,
                          int **out, struct cg_pos **pos, int *n)
{
    const struct cg_json *one = j;
    int count = 1;
    if (j->kind == CG_J_ARRAY) {
        count = j->nitems;
        if (count == 0) {
            verr(v, j->pos, "'%s' must not be empty", what);
            return -1;
        }
    } else if (j->kind != CG_J_NUMBER) {
        verr(v, j->pos, "'%s' must be an integer or an array of integers, not %s", what,
             kind_article(j));
        return -1;
    }
    *out = cg_arena_alloc(v->a, sizeof(int) * (size_t)count);
    *pos = cg_arena_alloc(v->a, sizeof(struct cg_pos) * (size_t)count);
    *n = 0;
    int bad = 0;
    struct cg_strset seen = { 0 };
    for (int i = 0; i < count; i++) {
        one = j->kind == CG_J_ARRAY ? j->items[i] : j;
        int64_t x;
        if (get_int(v, one, what, min, INT_MAX, &x) != 0) {
            bad++;
            continue;
        }
        int again = repeats(v, &seen, cg_arena_printf(v->a, "%lld", (long long)x));
        if (again == 1) {
            verr(v, one->pos, "%lld is listed twice in '%s'", (long long)x, what);
        }
        bad += again > 0;
        (*pos)[*n] = one->pos;
        (*out)[(*n)++] = (int)x;
    }
    return bad ? -1 : 0;
}

/* An array of names from a closed list, no repeats. */
static int parse_name_list(struct vctx *v, const struct cg_json *j, const char *what,
                           const char *item, const char *const *names, int nnames, int *out, int *n)
{
    if (check_kind(v, j, CG_J_ARRAY, what) != 0) {
        return -1;
    }
    if (j->nitems == 0) {
        verr(v, j->pos, "'%s' must not be empty", what);
        return -1;
    }
    int bad = 0;
    *n = 0;
    for (int i = 0; i < j->nitems; i++) {
        int k = get_enum(v, j->items[i], item, names, nnames);
        if (k < 0) {
            bad++;
            continue;
        }
        for (int m = 0; m < *n; m++) {
            if (out[m] == k) {
                verr(v, j->items[i]->pos, "%s '%s' is listed twice", item, names[k]);
                bad++;
            }
        }
        if (*n < nnames) {
            out[(*n)++] = k;
        }
    }
    return bad ? -1 : 0;
}

static int parse_impl(struct vctx *v, const struct cg_json *j, const struct cg_test *t,
                      struct cg_impl_req *r)
{
    memset(r, 0, sizeof(*r));
    const struct cg_json *s = j;
    if (j->kind == CG_J_OBJECT) {
        static const char *const keys[] = { "impl", "libraries", NULL };
        if (cg_json_check_keys(v->d, v->file, j, "an implementation", keys) != 0) {
            return -1;
        }
        s = cg_json_get(j, "impl");
        if (s == NULL) {
            verr(v, j->pos, "missing key 'impl' in an implementation object");
            return -1;
        }
        const struct cg_json *libs = cg_json_get(j, "libraries");
        if (libs != NULL) {
            if (check_kind(v, libs, CG_J_ARRAY, "libraries") != 0) {
                return -1;
            }
            r->libs = cg_arena_alloc(v->a, sizeof(char *) * (size_t)(libs->nitems + 1));
            for (int i = 0; i < libs->nitems; i++) {
                const char *name = get_str(v, libs->items[i], "libraries");
                if (name == NULL) {
                    return -1;
                }
                int found = 0;
                for (int k = 0; k < t->nlibs; k++) {
                    found |= strcmp(t->libs[k]->name, name) == 0;
                }
                if (!found) {
                    verr(v, libs->items[i]->str_pos,
                         "library '%s' is not one of the test's "
                         "libraries",
                         name);
                    return -1;
                }
                r->libs[r->nlibs++] = name;
            }
        }
    } else if (j->kind != CG_J_STRING) {
        verr(v, j->pos,
             "an implementation must be a string or an object {\"impl\", "
             "\"libraries\"}, not %s",
             kind_article(j));
        return -1;
    }
    if (s->kind != CG_J_STRING) {
        verr(v, s->pos, "'impl' must be a string, not %s", kind_article(s));
        return -1;
    }
    r->text = s->str;
    r->pos = s->str_pos;
    const char *colon = strchr(s->str, ':');
    const char *name = colon ? colon + 1 : "";
    size_t kind_len = colon ? (size_t)(colon - s->str) : 0;
    if (colon != NULL && kind_len == 6 && strncmp(s->str, "native", 6) == 0) {
        if (strcmp(name, "default") == 0) {
            r->kind = CG_IMPL_NATIVE_DEFAULT;
        } else if (strcmp(name, "*") == 0) {
            r->kind = CG_IMPL_NATIVE_ALL;
        } else if (is_ident(name, 0)) {
            r->kind = CG_IMPL_NATIVE;
            r->name = name;
        } else {
            colon = NULL;
        }
    } else if (colon != NULL && kind_len == 9 && strncmp(s->str, "generated", 9) == 0) {
        if (strcmp(name, "*") == 0) {
            r->kind = CG_IMPL_GENERATED_ALL;
        } else if (is_ident(name, 1)) {
            r->kind = CG_IMPL_GENERATED;
            r->name = name;
        } else {
            colon = NULL;
        }
    } else if (colon != NULL && kind_len == 8 && strncmp(s->str, "baseline", 8) == 0 &&
               (strcmp(name, "*") == 0 || is_ident(name, 0))) {
        r->kind = strcmp(name, "*") == 0 ? CG_IMPL_BASELINE_ALL : CG_IMPL_BASELINE;
        r->name = name;
    } else if (colon != NULL && kind_len == 5 && strncmp(s->str, "bound", 5) == 0) {
        if (is_ident(name, 0)) {
            r->kind = CG_IMPL_BOUND;
            r->name = name;
        } else {
            colon = NULL;
        }
    } else {
        colon = NULL;
    }
    if (colon == NULL) {
        verr(v, s->str_pos,
             "'%s' is not an implementation; expected native:default, "
             "native:<algorithm>, native:*, generated:<schedule>, generated:*, "
             "baseline:<name>, baseline:* or bound:" CG_BOUND_SENDRECV_REDUCE,
             s->str);
        return -1;
    }
    return 0;
}

static int parse_impls(struct vctx *v, const struct cg_json *j, const struct cg_test *t,
                       struct lists *L)
{
    if (check_kind(v, j, CG_J_ARRAY, "implementations") != 0) {
        return -1;
    }
    if (j->nitems == 0) {
        verr(v, j->pos, "'implementations' must not be empty");
        return -1;
    }
    L->impl = cg_arena_alloc(v->a, sizeof(*L->impl) * (size_t)j->nitems);
    int bad = 0;
    struct cg_strset seen = { 0 };
    for (int i = 0; i < j->nitems; i++) {
        struct cg_impl_req *r = &L->impl[L->nimpls];
        if (parse_impl(v, j->items[i], t, r) != 0) {
            bad++;
            continue;
        }
        /* The same text for the same libraries, in order. */
        const char *key = r->text;
        for (int m = 0; m < r->nlibs; m++) {
            key = cg_arena_printf(v->a, "%s\n%s", key, r->libs[m]);
        }
        int again = repeats(v, &seen, cg_arena_printf(v->a, "%d\n%s", r->nlibs, key));
        if (again == 1) {
            verr(v, r->pos, "implementation '%s' is listed twice", r->text);
        }
        bad += again > 0;
        L->nimpls++;
    }
    return bad ? -1 : 0;
}

/* The lists one object (top level or collective entry) gives. */
static int parse_lists(struct vctx *v, const struct cg_json *obj, const struct cg_test *t,
                       struct lists *L)
{
    memset(L, 0, sizeof(*L));
    int bad = 0;
    if ((L->sizes = cg_json_get(obj, "sizes")) != NULL) {
        bad += parse_sizes(v, L->sizes, L) != 0;
    }
    if ((L->impls = cg_json_get(obj, "implementations")) != NULL) {
        bad += parse_impls(v, L->impls, t, L) != 0;
    }
    if ((L->dtypes = cg_json_get(obj, "datatypes")) != NULL) {
        bad += parse_name_list(v, L->dtypes, "datatypes", "datatype", cg_dtype_names, CG_DT_COUNT_,
                               L->dtype, &L->ndtypes) != 0;
    }
    if ((L->ops = cg_json_get(obj, "ops")) != NULL) {
        bad += parse_name_list(v, L->ops, "ops", "op", cg_redop_names, CG_OP_COUNT_, L->op,
                               &L->nops) != 0;
    }
    if ((L->roots = cg_json_get(obj, "roots")) != NULL) {
        bad += parse_int_list(v, L->roots, "roots", 0, &L->root, &L->root_pos, &L->nroots) != 0;
    }
    if ((L->in_place = cg_json_get(obj, "in_place")) != NULL) {
        const struct cg_json *j = L->in_place;
        int count = j->kind == CG_J_ARRAY ? j->nitems : 1;
        if (j->kind != CG_J_ARRAY && j->kind != CG_J_BOOL) {
            verr(v, j->pos, "'in_place' must be true, false or an array of them, not %s",
                 kind_article(j));
            bad++;
        } else if (count == 0) {
            verr(v, j->pos, "'in_place' must not be empty");
            bad++;
        } else {
            for (int i = 0; i < count; i++) {
                const struct cg_json *b = j->kind == CG_J_ARRAY ? j->items[i] : j;
                if (check_kind(v, b, CG_J_BOOL, "in_place") != 0) {
                    bad++;
                    continue;
                }
                if (L->nip > 0 && L->ip[0] == b->boolean) {
                    verr(v, b->pos, "%s is listed twice in 'in_place'",
                         b->boolean ? "true" : "false");
                    bad++;
                    continue;
                }
                if (L->nip < 2) {
                    L->ip_pos[L->nip] = b->pos;
                    L->ip[L->nip++] = b->boolean;
                }
            }
        }
    }
    return bad ? -1 : 0;
}

static const char *coll_name(int c)
{
    return cg_colls[c].name;
}

/* The names a library lists for a collective, for messages. */
static const char *algo_list(struct cg_arena *a, const struct cg_library *l, int c)
{
    const struct cg_lib_coll *lc = &l->colls[c];
    if (lc->nalgos == 0) {
        return "none";
    }
    const char **names = cg_arena_alloc(a, sizeof(char *) * (size_t)lc->nalgos);
    for (int i = 0; i < lc->nalgos; i++) {
        names[i] = lc->algos[i].name;
    }
    return join(a, names, lc->nalgos, ", ");
}

/* bound:<name>: the only bound is bound:sendrecv_reduce, the transport bound
 * of allreduce at p = 2 (two MPI_Sendrecv of n/2 elements around a local
 * reduce of n/2: the minimal reduce-scatter + allgather exchange). Given at
 * the top level it applies to allreduce only, like generated:<schedule>. */
static void check_bound(struct vctx *v, const struct cg_test *t, const struct cg_coll_req *cr,
                        const struct cg_impl_req *im, int from_top)
{
    const char *coll = cg_colls[cr->coll].name;
    if (strcmp(im->name, CG_BOUND_SENDRECV_REDUCE) != 0) {
        verr(v, im->pos,
             "unknown bound '%s'; the harness has one, bound:" CG_BOUND_SENDRECV_REDUCE
             " (allreduce at 2 ranks)",
             im->name);
        return;
    }
    if (cr->coll != CG_COLL_ALLREDUCE) {
        if (!from_top) {
            verr(v, im->pos,
                 "%s is a bound of allreduce (two MPI_Sendrecv of n/2 and a local reduce of "
                 "n/2), not of %s",
                 im->text, coll);
        }
        return;
    }
    for (int k = 0; k < t->nranks; k++) {
        if (t->ranks[k] != 2) {
            verr(v, im->pos,
                 "%s runs at 2 ranks only (the minimal reduce-scatter + allgather exchange of "
                 "p = 2), but 'ranks' lists %d",
                 im->text, t->ranks[k]);
        }
    }
    for (int i = 0; i < cr->nin_place; i++) {
        if (cr->in_place[i]) {
            verr(v, cr->in_place_pos[i],
                 "'in_place' true does not apply to %s: it does not run in place (measure "
                 "in place in a test without it)",
                 im->text);
        }
    }
    for (int k = 0; k < t->nlibs; k++) {
        if (strcmp(t->libs[k]->backend, "mpi") != 0) {
            verr(v, im->pos, "%s runs over MPI, and library %s is %s", im->text,
                 t->libs[k]->name, t->libs[k]->backend);
        }
    }
}

/* float16 and bfloat16 in a "datatypes" list (dl; NULL: the default,
 * double) of a test with an mpi library: MPI has no 16-bit float, so bench
 * could only record their points as skipped. Refused here, like the other
 * combinations a library cannot run (bound:* or a micro-benchmark on a
 * nccl library), before anything runs. Returns the errors reported. */
static int check_dtypes_backend(struct vctx *v, const struct cg_test *t, const struct cg_json *dl)
{
    int bad = 0;
    for (int i = 0; dl != NULL && dl->kind == CG_J_ARRAY && i < dl->nitems; i++) {
        const struct cg_json *d = dl->items[i];
        int dt = (d->kind == CG_J_STRING) ? index_of(cg_dtype_names, CG_DT_COUNT_, d->str) : -1;
        if (dt != CG_DT_FLOAT16 && dt != CG_DT_BFLOAT16) {
            continue;
        }
        for (int k = 0; k < t->nlibs; k++) {
            if (strcmp(t->libs[k]->backend, "mpi") == 0) {
                verr(v, d->str_pos,
                     "datatype %s runs in the GPU mode only (a library whose backend is nccl): "
                     "MPI has no 16-bit floating-point type, and library %s is mpi",
                     d->str, t->libs[k]->name);
                bad++;
            }
        }
    }
    return bad;
}

/* Impossible combinations of one collective's merged lists. */
static void check_coll(struct vctx *v, const struct cg_test *t, const struct cg_platform *p,
                       const struct cg_registry *reg, struct cg_coll_req *cr,
                       const struct lists *top, const struct lists *own)
{
    int c = cr->coll;
    const struct cg_coll_info *info = &cg_colls[c];
    /* A "sizes" that failed to parse was reported already. Barrier moves no
     * data: it takes any sizes, or none, and is planned as one point of
     * 0 B (run_plan.c). */
    int sized = c != CG_COLL_BARRIER;
    if (sized && cr->nsizes == 0 && top->sizes == NULL && (own == NULL || own->sizes == NULL)) {
        verr(v, cr->pos, "no sizes for %s: give 'sizes' at the top level or in its entry",
             info->name);
    }
    if (own != NULL && own->ops != NULL && !info->reduces) {
        verr(v, own->ops->pos, "%s does not reduce: 'ops' does not apply to it", info->name);
    }
    const struct cg_json *roots = own != NULL && own->roots != NULL ? own->roots : top->roots;
    if (roots != NULL && !info->rooted) {
        const char *rooted = NULL;
        for (int k = 0; k < t->ncolls; k++) {
            if (cg_colls[t->colls[k].coll].rooted) {
                rooted = cg_colls[t->colls[k].coll].name;
            }
        }
        verr(v, roots->pos, "%s has no root: 'roots' does not apply to it%s%s%s", info->name,
             rooted ? " (give 'roots' in the entry of " : "", rooted ? rooted : "",
             rooted ? " instead)" : "");
    }
    for (int i = 0; i < cr->nin_place; i++) {
        if (cr->in_place[i] && (c == CG_COLL_BCAST || c == CG_COLL_BARRIER)) {
            verr(v, cr->in_place_pos[i],
                 "%s has no in-place form (%s): "
                 "'in_place' true does not apply to it (give 'in_place' in the entries of the "
                 "other collectives instead)",
                 info->name,
                 c == CG_COLL_BCAST ? "MPI_Bcast has one buffer" : "MPI_Barrier has no buffer");
        }
    }
    if (sized) {
        (void)check_dtypes_backend(v, t, (own != NULL && own->dtypes != NULL) ? own->dtypes
                                                                             : top->dtypes);
    }
    for (int s = 0; sized && s < cr->nsizes; s++) {
        for (int k = 0; k < cr->ndtypes; k++) {
            int dt = cr->dtypes[k];
            int64_t size = cr->sizes[s];
            if (size % cg_dtype_sizes[dt] != 0) {
                verr(v, cr->sizes_pos[s],
                     "size %lld is not a multiple of %s's %d bytes (a size "
                     "is count x datatype size)",
                     (long long)size, cg_dtype_names[dt], cg_dtype_sizes[dt]);
            } else if (size / cg_dtype_sizes[dt] > INT_MAX) {
                verr(v, cr->sizes_pos[s],
                     "size %lld is %lld %s elements: above MPI's count limit "
                     "(%d)",
                     (long long)size, (long long)(size / cg_dtype_sizes[dt]), cg_dtype_names[dt],
                     INT_MAX);
            }
        }
    }
    for (int r = 0; r < cr->nroots; r++) {
        const char *small = NULL;
        for (int k = 0; k < t->nranks; k++) {
            if (cr->roots[r] >= t->ranks[k]) {
                small = small ? cg_arena_printf(v->a, "%s, %d", small, t->ranks[k])
                              : cg_arena_printf(v->a, "%d", t->ranks[k]);
            }
        }
        if (small != NULL) {
            verr(v, cr->roots_pos[r], "root %d needs at least %d ranks; 'ranks' lists %s",
                 cr->roots[r], cr->roots[r] + 1, small);
        }
    }
    int from_top = own == NULL || own->impls == NULL;
    for (int i = 0; i < cr->nimpls; i++) {
        const struct cg_impl_req *im = &cr->impls[i];
        const struct cg_sched_entry *se;
        switch (im->kind) {
        case CG_IMPL_NATIVE_DEFAULT:
        case CG_IMPL_NATIVE_ALL:
            break;
        case CG_IMPL_NATIVE:
            for (int k = 0; k < t->nlibs; k++) {
                const struct cg_library *l = t->libs[k];
                int applies = im->nlibs == 0;
                for (int m = 0; m < im->nlibs; m++) {
                    applies |= strcmp(im->libs[m], l->name) == 0;
                }
                if (!applies) {
                    continue;
                }
                const struct cg_algo_spec *a = cg_library_algo(l, (enum cg_coll)c, im->name);
                if (a == NULL) {
                    verr(v, im->pos,
                         "%s has no native algorithm '%s' for %s on platform %s (it "
                         "lists: %s)%s",
                         l->name, im->name, info->name, p->name, algo_list(v->a, l, c),
                         t->nlibs > 1 && im->nlibs == 0 ? "; name the libraries with {\"impl\": "
                                                          "..., \"libraries\": [...]}"
                                                        : "");
                    continue;
                }
                for (int r = 0; r < t->nranks; r++) {
                    char why[128];
                    if (cg_algo_ranks_problem(a, t->ranks[r], why, sizeof(why)) != NULL) {
                        verr(v, im->pos, "%s cannot run at %d ranks: %s's %s algorithm %s %s",
                             im->text, t->ranks[r], l->name, info->name, a->name, why);
                    }
                }
            }
            break;
        case CG_IMPL_BOUND:
            check_bound(v, t, cr, im, from_top);
            break;
        case CG_IMPL_BASELINE:
        case CG_IMPL_BASELINE_ALL: {
            char why[1200];
            if (cg_baseline_problem(im, (enum cg_coll)c, t, from_top, why, sizeof(why))) {
                verr(v, im->pos, "%s", why);
            }
            break;
        }
        case CG_IMPL_GENERATED:
        case CG_IMPL_GENERATED_ALL:
            if (!reg->loaded) {
                verr(v, im->pos, "%s: %s %s", im->text, reg->path != NULL ? reg->path :
                     "emitted/registry.json", reg->problem != NULL ? reg->problem :
                     "was not read");
                break;
            }
            for (int k = 0; k < t->nlibs; k++) {
                /* Generated code runs over MPI, or, for a library whose
                 * backend is nccl, as the GPU backend's twin (bench_cuda). */
                if (strcmp(t->libs[k]->backend, "nccl") == 0 && !registry_has_gpu(reg, c)) {
                    verr(v, im->pos, "%s: the GPU backend has no generated %s (library %s is "
                         "nccl)", im->text, info->name, t->libs[k]->name);
                } else if (strcmp(t->libs[k]->backend, "mpi") != 0 &&
                           strcmp(t->libs[k]->backend, "nccl") != 0) {
                    verr(v, im->pos, "%s: generated code runs over MPI or NCCL, and library %s "
                         "is %s", im->text, t->libs[k]->name, t->libs[k]->backend);
                }
            }
            if (im->kind == CG_IMPL_GENERATED_ALL) {
                int n = 0;
                for (int k = 0; k < reg->n; k++) {
                    n += reg->s[k].coll == (enum cg_coll)c;
                }
                if (n == 0) {
                    verr(v, im->pos, "generated:* finds no %s schedule under schedules/",
                         info->name);
                }
                break;
            }
            se = registry_find(reg, im->name);
            if (se == NULL) {
                char *guess = cg_arena_printf(v->a, "%s_%s", info->name, im->name);
                if (registry_find(reg, guess) != NULL) {
                    verr(v, im->pos,
                         "unknown generated schedule '%s'; did you mean "
                         "generated:%s?",
                         im->name, guess);
                } else {
                    verr(v, im->pos,
                         "unknown generated schedule '%s' (collgen list shows the "
                         "schedules)",
                         im->name);
                }
            } else if (se->coll != (enum cg_coll)c && !from_top) {
                verr(v, im->pos, "generated:%s is %s %s schedule, not %s", im->name,
                     strchr("aeiou", coll_name(se->coll)[0]) ? "an" : "a", coll_name(se->coll),
                     info->name);
            }
            break;
        }
    }
}

static int parse_collectives(struct vctx *v, const struct cg_json *j, struct cg_test *t,
                             const struct cg_platform *p, const struct cg_registry *reg,
                             const struct lists *top)
{
    if (check_kind(v, j, CG_J_ARRAY, "collectives") != 0) {
        return -1;
    }
    if (j->nitems == 0) {
        verr(v, j->pos, "'collectives' must not be empty");
        return -1;
    }
    const char *names[CG_HARNESS_COLLS];
    for (int k = 0; k < CG_HARNESS_COLLS; k++) {
        names[k] = cg_colls[k].name;
    }
    t->colls = cg_arena_alloc(v->a, sizeof(*t->colls) * (size_t)j->nitems);
    struct lists *own = cg_arena_alloc(v->a, sizeof(*own) * (size_t)j->nitems);
    int *has_own = cg_arena_alloc(v->a, sizeof(int) * (size_t)j->nitems);
    int listed[CG_COLL_COUNT_] = { 0 };
    int bad = 0;
    for (int i = 0; i < j->nitems; i++) {
        const struct cg_json *e = j->items[i];
        const struct cg_json *name = e;
        if (e->kind == CG_J_OBJECT) {
            static const char *const keys[] = { "name", "sizes", "implementations", "datatypes",
                                                "ops",  "roots", "in_place",        NULL };
            bad += cg_json_check_keys(v->d, v->file, e, "a collective entry", keys);
            name = cg_json_get(e, "name");
            if (name == NULL) {
                verr(v, e->pos, "missing key 'name' in a collective entry");
                bad++;
                continue;
            }
        } else if (e->kind != CG_J_STRING) {
            verr(v, e->pos, "a collective must be a name or an object {\"name\", ...}, not %s",
                 kind_article(e));
            bad++;
            continue;
        }
        if (name->kind != CG_J_STRING) {
            verr(v, name->pos, "'name' must be a string, not %s", kind_article(name));
            bad++;
            continue;
        }
        int c = cg_coll_by_name(name->str);
        if (c < 0) {
            verr(v, name->str_pos, "unknown collective '%s'; expected one of: %s", name->str,
                 join(v->a, names, CG_HARNESS_COLLS, ", "));
            bad++;
            continue;
        }
        if (c >= CG_HARNESS_COLLS) {
            verr(v, name->str_pos,
                 "the harness does not measure %s yet (the generator knows it; the benchmark "
                 "program runs %s)",
                 name->str, join(v->a, names, CG_HARNESS_COLLS, ", "));
            bad++;
            continue;
        }
        int again = listed[c]++;
        if (again == 1) {
            verr(v, name->str_pos, "collective '%s' is listed twice", name->str);
        }
        bad += again > 0;
        struct cg_coll_req *cr = &t->colls[t->ncolls];
        memset(cr, 0, sizeof(*cr));
        cr->coll = (enum cg_coll)c;
        cr->pos = e->pos;
        if (e->kind == CG_J_OBJECT) {
            has_own[t->ncolls] = 1;
            bad += parse_lists(v, e, t, &own[t->ncolls]) != 0;
        }
        t->ncolls++;
    }
    /* Merge: an entry's own list, else the top level's, else the default. */
    static const int default_dtype[] = { CG_DT_DOUBLE };
    static const int default_op[] = { CG_OP_SUM };
    struct cg_impl_req *default_impl = cg_arena_alloc(v->a, sizeof(*default_impl) * 2);
    default_impl[0].kind = CG_IMPL_NATIVE_DEFAULT;
    default_impl[0].text = "native:default";
    default_impl[1].kind = CG_IMPL_GENERATED_ALL;
    default_impl[1].text = "generated:*";
    for (int i = 0; i < t->ncolls; i++) {
        struct cg_coll_req *cr = &t->colls[i];
        const struct lists *o = has_own[i] ? &own[i] : NULL;
        const struct lists *sz = o && o->sizes ? o : top;
        cr->sizes = sz->size;
        cr->sizes_pos = sz->size_pos;
        cr->nsizes = sz->nsizes;
        if (o && o->impls) {
            cr->impls = o->impl;
            cr->nimpls = o->nimpls;
        } else if (top->impls) {
            cr->impls = top->impl;
            cr->nimpls = top->nimpls;
        } else {
            cr->impls = default_impl;
            cr->nimpls = 2;
        }
        const struct lists *dt = o && o->dtypes ? o : top;
        if (dt->dtypes) {
            memcpy(cr->dtypes, dt->dtype, sizeof(cr->dtypes));
            cr->ndtypes = dt->ndtypes;
        } else {
            cr->dtypes[0] = default_dtype[0];
            cr->ndtypes = 1;
        }
        const struct lists *op = o && o->ops ? o : top;
        if (op->ops) {
            memcpy(cr->ops, op->op, sizeof(cr->ops));
            cr->nops = op->nops;
        } else {
            cr->ops[0] = default_op[0];
            cr->nops = 1;
        }
        const struct lists *rt = o && o->roots ? o : top;
        if (rt->roots && cg_colls[cr->coll].rooted) {
            cr->roots = rt->root;
            cr->roots_pos = rt->root_pos;
            cr->nroots = rt->nroots;
        } else {
            cr->roots = cg_arena_alloc(v->a, sizeof(int));
            cr->roots_pos = cg_arena_alloc(v->a, sizeof(struct cg_pos));
            cr->nroots = 1;
        }
        const struct lists *ip = o && o->in_place ? o : top;
        if (ip->in_place) {
            memcpy(cr->in_place, ip->ip, sizeof(cr->in_place));
            memcpy(cr->in_place_pos, ip->ip_pos, sizeof(cr->in_place_pos));
            cr->nin_place = ip->nip;
        } else {
            cr->nin_place = 1;
        }
        check_coll(v, t, p, reg, cr, top, o);
    }
    /* Top-level lists that apply to nothing. */
    int any_reduces = 0;
    for (int i = 0; i < t->ncolls; i++) {
        any_reduces |= cg_colls[t->colls[i].coll].reduces;
    }
    if (top->ops != NULL && !any_reduces) {
        verr(v, top->ops->pos, "'ops' is given, but none of the collectives reduces");
    }
    for (int i = 0; top->impls != NULL && i < top->nimpls; i++) {
        const struct cg_impl_req *im = &top->impl[i];
        const struct cg_sched_entry *se;
        if (im->kind == CG_IMPL_BOUND) {
            int used = 0;
            for (int k = 0; k < t->ncolls; k++) {
                used |= t->colls[k].coll == CG_COLL_ALLREDUCE;
            }
            if (!used) {
                verr(v, im->pos, "%s is a bound of allreduce, but the test measures no allreduce",
                     im->text);
            }
        }
        for (int b = 0; im->kind == CG_IMPL_BASELINE && b < cg_baseline_count(); b++) {
            int used = 0;
            for (int k = 0; k < t->ncolls; k++) {
                used |= t->colls[k].coll == cg_baseline_coll(b);
            }
            if (!used && strcmp(cg_baseline_name(b), im->name) == 0) {
                verr(v, im->pos, "baseline:%s is a %s baseline, but the test measures no %s",
                     im->name, coll_name(cg_baseline_coll(b)), coll_name(cg_baseline_coll(b)));
            }
        }
        if (im->kind == CG_IMPL_GENERATED && (se = registry_find(reg, im->name)) != NULL) {
            int used = 0;
            for (int k = 0; k < t->ncolls; k++) {
                used |= t->colls[k].coll == se->coll;
            }
            if (!used) {
                verr(v, im->pos, "generated:%s is a %s schedule, but the test measures no %s",
                     im->name, coll_name(se->coll), coll_name(se->coll));
            }
        }
    }
    return bad ? -1 : 0;
}

static int parse_nrep(struct vctx *v, const struct cg_json *j, struct cg_nrep *np)
{
    if (check_kind(v, j, CG_J_OBJECT, "nrep") != 0) {
        return -1;
    }
    static const char *const keys[] = { "t1_rse", "b1", "b2", "rse_b", "k", NULL };
    int bad = cg_json_check_keys(v->d, v->file, j, "timing.nrep", keys);
    const struct cg_json *e;
    int64_t n;
    if ((e = cg_json_get(j, "t1_rse")) != NULL) {
        bad += get_num(v, e, "t1_rse", 0.0, 1.0, &np->t1_rse) != 0;
    }
    if ((e = cg_json_get(j, "rse_b")) != NULL) {
        bad += get_num(v, e, "rse_b", 0.0, 1.0, &np->rse_b) != 0;
    }
    if ((e = cg_json_get(j, "b1")) != NULL) {
        bad += get_int(v, e, "b1", 1, 1000000, &n) != 0;
        np->b1 = (int)n;
    }
    if ((e = cg_json_get(j, "b2")) != NULL) {
        bad += get_int(v, e, "b2", 0, 1000000, &n) != 0;
        np->b2 = (int)n;
    }
    if ((e = cg_json_get(j, "k")) != NULL) {
        bad += get_int(v, e, "k", 1, 10000000, &n) != 0;
        np->k = (int)n;
    }
    return bad ? -1 : 0;
}

static int parse_timing(struct vctx *v, const struct cg_json *j, struct cg_timing *tm)
{
    if (check_kind(v, j, CG_J_OBJECT, "timing") != 0) {
        return -1;
    }
    static const char *const keys[] = { "sync",      "warmup", "min_reps", "max_reps",
                                        "rse_target", "budget_s", "window_us", "policy",
                                        "nrep",       NULL };
    int bad = cg_json_check_keys(v->d, v->file, j, "timing", keys);
    static const char *const syncs[] = { "barrier", "dissemination", "window" };
    static const char *const policies[] = { "rse", "nrep" };
    const struct cg_json *e;
    int64_t n;
    if ((e = cg_json_get(j, "sync")) != NULL) {
        int k = get_enum(v, e, "sync method", syncs, 3);
        if (k >= 0) {
            tm->sync = syncs[k];
        } else {
            bad++;
        }
    }
    if ((e = cg_json_get(j, "policy")) != NULL) {
        int k = get_enum(v, e, "stopping policy", policies, 2);
        if (k >= 0) {
            tm->policy = policies[k];
        } else {
            bad++;
        }
    }
    if ((e = cg_json_get(j, "nrep")) != NULL) {
        bad += parse_nrep(v, e, &tm->nrep) != 0;
    }
    if ((e = cg_json_get(j, "warmup")) != NULL) {
        bad += get_int(v, e, "warmup", 0, 1000000, &n) != 0;
        tm->warmup = (int)n;
    }
    const struct cg_json *mn = cg_json_get(j, "min_reps"), *mx = cg_json_get(j, "max_reps");
    if (mn != NULL) {
        bad += get_int(v, mn, "min_reps", 1, 100000000, &n) != 0;
        tm->min_reps = (int)n;
    }
    if (mx != NULL) {
        bad += get_int(v, mx, "max_reps", 1, 100000000, &n) != 0;
        tm->max_reps = (int)n;
    }
    if (!bad && tm->max_reps < tm->min_reps) {
        verr(v, (mx ? mx : mn)->pos, "'max_reps' (%d) is below 'min_reps' (%d)", tm->max_reps,
             tm->min_reps);
        bad++;
    }
    if ((e = cg_json_get(j, "rse_target")) != NULL) {
        bad += get_num(v, e, "rse_target", 0.0, 1.0, &tm->rse_target) != 0;
    }
    if ((e = cg_json_get(j, "budget_s")) != NULL) {
        bad += get_num(v, e, "budget_s", 0.0, 1e6, &tm->budget_s) != 0;
    }
    if ((e = cg_json_get(j, "window_us")) != NULL) {
        bad += get_num(v, e, "window_us", 0.0, 1e6, &tm->window_us) != 0;
    }
    return bad ? -1 : 0;
}

static int parse_knob_sweeps(struct vctx *v, const struct cg_json *j, struct cg_test *t)
{
    if (check_kind(v, j, CG_J_OBJECT, "knobs") != 0) {
        return -1;
    }
    int bad = 0, total = 0;
    for (int i = 0; i < j->nitems; i++) {
        total += j->items[i]->kind == CG_J_OBJECT ? j->items[i]->nitems : 0;
    }
    t->sweeps = cg_arena_alloc(v->a, sizeof(*t->sweeps) * (size_t)(total + 1));
    for (int i = 0; i < j->nitems; i++) {
        const struct cg_json *lj = j->items[i];
        const struct cg_library *lib = NULL;
        for (int k = 0; k < t->nlibs; k++) {
            if (strcmp(t->libs[k]->name, lj->key) == 0) {
                lib = t->libs[k];
            }
        }
        if (lib == NULL) {
            verr(v, lj->key_pos,
                 "'knobs' names library '%s', which is not one of the test's "
                 "libraries",
                 lj->key);
            bad++;
            continue;
        }
        if (check_kind(v, lj, CG_J_OBJECT, lj->key) != 0) {
            bad++;
            continue;
        }
        for (int k = 0; k < lj->nitems; k++) {
            const struct cg_json *kj = lj->items[k];
            const struct cg_knob *knob = NULL;
            for (int m = 0; m < lib->nknobs; m++) {
                if (strcmp(lib->knobs[m].name, kj->key) == 0) {
                    knob = &lib->knobs[m];
                }
            }
            if (knob == NULL) {
                const char **names =
                    cg_arena_alloc(v->a, sizeof(char *) * (size_t)(lib->nknobs + 1));
                for (int m = 0; m < lib->nknobs; m++) {
                    names[m] = lib->knobs[m].name;
                }
                verr(v, kj->key_pos, "library %s has no knob '%s' (it has: %s)", lib->name, kj->key,
                     lib->nknobs ? join(v->a, names, lib->nknobs, ", ") : "none");
                bad++;
                continue;
            }
            if (check_kind(v, kj, CG_J_ARRAY, kj->key) != 0) {
                bad++;
                continue;
            }
            if (kj->nitems == 0) {
                verr(v, kj->pos, "knob '%s' needs at least one value", kj->key);
                bad++;
                continue;
            }
            struct cg_knob_sweep *sw = &t->sweeps[t->nsweeps];
            sw->lib = lib;
            sw->knob = knob;
            sw->values = cg_arena_alloc(v->a, sizeof(char *) * (size_t)kj->nitems);
            struct cg_strset seen = { 0 };
            for (int m = 0; m < kj->nitems; m++) {
                const struct cg_json *x = kj->items[m];
                const char *val = NULL;
                if (x->kind == CG_J_STRING) {
                    val = x->str;
                    if (check_literal(v, x, cg_arena_printf(v->a, "knob '%s': value", kj->key))) {
                        bad++;
                        continue;
                    }
                } else if (x->kind == CG_J_NUMBER && x->is_int) {
                    val = cg_arena_printf(v->a, "%lld", (long long)x->ival);
                } else {
                    verr(v, x->pos, "knob values must be strings or integers, not %s",
                         kind_article(x));
                    bad++;
                    continue;
                }
                int again = repeats(v, &seen, val);
                if (again == 1) {
                    verr(v, x->pos, "value '%s' of knob '%s' is listed twice", val, kj->key);
                }
                bad += again > 0;
                sw->values[sw->nvalues++] = val;
            }
            t->nsweeps++;
        }
    }
    return bad ? -1 : 0;
}

/* "virtual_ranks_per_node": node shapes run on this machine's ranks through
 * CG_PPN (runtime/topo.c): an integer, or an array of integers and "real"
 * (the real topology, no CG_PPN). A shape need not divide the process
 * count: the topology is then irregular and topology schedules take their
 * fallback, which is worth measuring too (the plan notes it). */
static int parse_vppn(struct vctx *v, const struct cg_json *j, struct cg_test *t)
{
    int count = j->kind == CG_J_ARRAY ? j->nitems : 1;
    if (j->kind != CG_J_ARRAY && j->kind != CG_J_NUMBER && j->kind != CG_J_STRING) {
        verr(v, j->pos,
             "'virtual_ranks_per_node' must be ranks per node (an integer >= 1), \"real\" or an "
             "array of them, not %s",
             kind_article(j));
        return -1;
    }
    if (count == 0) {
        verr(v, j->pos, "'virtual_ranks_per_node' must not be empty");
        return -1;
    }
    t->vppn = cg_arena_alloc(v->a, sizeof(int) * (size_t)count);
    t->nvppn = 0;
    int bad = 0;
    for (int i = 0; i < count; i++) {
        const struct cg_json *e = j->kind == CG_J_ARRAY ? j->items[i] : j;
        int64_t k = 0;
        if (e->kind == CG_J_STRING) {
            if (strcmp(e->str, "real") != 0) {
                verr(v, e->str_pos,
                     "'virtual_ranks_per_node' holds ranks per node (integers >= 1) or \"real\", "
                     "not '%s'",
                     e->str);
                bad++;
                continue;
            }
        } else if (get_int(v, e, "virtual_ranks_per_node", 1, 1000000, &k) != 0) {
            bad++;
            continue;
        }
        for (int m = 0; m < t->nvppn; m++) {
            if (t->vppn[m] == (int)k) {
                verr(v, e->pos, "%s is listed twice in 'virtual_ranks_per_node'",
                     k ? cg_arena_printf(v->a, "%lld", (long long)k) : "\"real\"");
                bad++;
                k = -1;
            }
        }
        if (k >= 0) {
            t->vppn[t->nvppn++] = (int)k;
        }
    }
    return bad ? -1 : 0;
}

/* Whether the test measures generated schedule se in some collective. */
static int measures_schedule(const struct cg_test *t, const struct cg_sched_entry *se)
{
    for (int c = 0; c < t->ncolls; c++) {
        const struct cg_coll_req *cr = &t->colls[c];
        if (cr->coll != se->coll) {
            continue;
        }
        for (int i = 0; i < cr->nimpls; i++) {
            const struct cg_impl_req *im = &cr->impls[i];
            if (im->kind == CG_IMPL_GENERATED_ALL ||
                (im->kind == CG_IMPL_GENERATED && strcmp(im->name, se->name) == 0)) {
                return 1;
            }
        }
    }
    return 0;
}

/* "params": { "<schedule>": { "<param>": [values] } }: sweeps of ranged
 * schedule parameters, each value within the range the generator verified.
 * Needs the collectives (the schedule must be measured). */
static int parse_param_sweeps(struct vctx *v, const struct cg_json *j, struct cg_test *t,
                              const struct cg_registry *reg)
{
    if (check_kind(v, j, CG_J_OBJECT, "params") != 0) {
        return -1;
    }
    int bad = 0, total = 0;
    for (int i = 0; i < j->nitems; i++) {
        total += j->items[i]->kind == CG_J_OBJECT ? j->items[i]->nitems : 0;
    }
    t->psweeps = cg_arena_alloc(v->a, sizeof(*t->psweeps) * (size_t)(total + 1));
    for (int i = 0; i < j->nitems; i++) {
        const struct cg_json *sj = j->items[i];
        const struct cg_sched_entry *se = registry_find(reg, sj->key);
        if (se == NULL) {
            verr(v, sj->key_pos,
                 "'params' names schedule '%s', which is not under schedules/ (collgen list "
                 "shows the schedules)",
                 sj->key);
            bad++;
            continue;
        }
        if (check_kind(v, sj, CG_J_OBJECT, sj->key) != 0) {
            bad++;
            continue;
        }
        if (!measures_schedule(t, se)) {
            verr(v, sj->key_pos,
                 "'params' sweeps %s, but the test does not measure generated:%s (add it, or "
                 "generated:*, to the implementations of %s)",
                 se->name, se->name, cg_colls[se->coll].name);
            bad++;
        }
        const char **ranged = cg_arena_alloc(v->a, sizeof(char *) * (size_t)(se->nparams + 1));
        int nranged = 0;
        for (int m = 0; m < se->nparams; m++) {
            if (se->params[m].ranged) {
                ranged[nranged++] = se->params[m].name;
            }
        }
        for (int k = 0; k < sj->nitems; k++) {
            const struct cg_json *pj = sj->items[k];
            const struct cg_sched_param *sp = NULL;
            for (int m = 0; m < se->nparams; m++) {
                if (strcmp(se->params[m].name, pj->key) == 0) {
                    sp = &se->params[m];
                }
            }
            if (sp == NULL) {
                verr(v, pj->key_pos, "schedule %s has no parameter '%s' (it has %s%s)", se->name,
                     pj->key, nranged ? "these to sweep: " : "none to sweep",
                     nranged ? join(v->a, ranged, nranged, ", ") : "");
                bad++;
                continue;
            }
            if (!sp->ranged) {
                verr(v, pj->key_pos,
                     "parameter '%s' of %s is a constant (%d), not a range: only a parameter "
                     "written {\"default\", \"min\", \"max\"} in the schedule can be swept",
                     sp->name, se->name, sp->dflt);
                bad++;
                continue;
            }
            int count = pj->kind == CG_J_ARRAY ? pj->nitems : 1;
            if (pj->kind != CG_J_ARRAY && pj->kind != CG_J_NUMBER) {
                verr(v, pj->pos, "'%s' must be an integer or an array of integers, not %s",
                     pj->key, kind_article(pj));
                bad++;
                continue;
            }
            if (count == 0) {
                verr(v, pj->pos, "parameter '%s' needs at least one value", pj->key);
                bad++;
                continue;
            }
            struct cg_param_sweep *sw = &t->psweeps[t->npsweeps];
            sw->sched = se;
            sw->param = sp;
            sw->values = cg_arena_alloc(v->a, sizeof(int) * (size_t)count);
            sw->nvalues = 0;
            for (int m = 0; m < count; m++) {
                const struct cg_json *x = pj->kind == CG_J_ARRAY ? pj->items[m] : pj;
                int64_t val;
                if (get_int(v, x, pj->key, -1000000, 1000000, &val) != 0) {
                    bad++;
                    continue;
                }
                if (val < sp->lo || val > sp->hi) {
                    verr(v, x->pos,
                         "%s = %lld is outside the range the generator verified for %s, %d..%d",
                         sp->name, (long long)val, se->name, sp->lo, sp->hi);
                    bad++;
                    continue;
                }
                int dup = 0;
                for (int q = 0; q < sw->nvalues; q++) {
                    dup |= sw->values[q] == (int)val;
                }
                if (dup) {
                    verr(v, x->pos, "value %lld of parameter '%s' is listed twice", (long long)val,
                         pj->key);
                    bad++;
                    continue;
                }
                sw->values[sw->nvalues++] = (int)val;
            }
            if (sw->nvalues > 0) {
                t->npsweeps++;
            }
        }
    }
    return bad ? -1 : 0;
}

/* "k" of a micro-benchmark: "all" (1 .. ranks per node of each job), an
 * integer or an array of integers >= 1. */
static int parse_micro_k(struct vctx *v, const struct cg_json *j, struct cg_micro_req *m)
{
    if (j->kind == CG_J_STRING && strcmp(j->str, "all") == 0) {
        return 0;
    }
    if (j->kind != CG_J_ARRAY && j->kind != CG_J_NUMBER) {
        verr(v, j->pos,
             "'k' must be \"all\", a number of lanes (an integer >= 1) or an array of them, not "
             "%s",
             j->kind == CG_J_STRING ? cg_arena_printf(v->a, "'%s'", j->str) : kind_article(j));
        return -1;
    }
    struct cg_pos *pos;
    return parse_int_list(v, j, "k", 1, &m->k, &pos, &m->nk);
}

/* "micro": { "lane_pattern": {"k", "sizes"}, "multi_collective": {"k",
 * "collectives"} }. Needs the collectives and the top-level lists. */
static int parse_micro(struct vctx *v, const struct cg_json *j, struct cg_test *t,
                       const struct lists *top)
{
    if (check_kind(v, j, CG_J_OBJECT, "micro") != 0) {
        return -1;
    }
    int bad = 0;
    for (int i = 0; i < j->nitems; i++) {
        const struct cg_json *mj = j->items[i];
        int kind = index_of(cg_micro_names, CG_MICRO_COUNT_, mj->key);
        if (kind < 0) {
            verr(v, mj->key_pos, "unknown micro-benchmark '%s'; expected one of: %s", mj->key,
                 join(v->a, cg_micro_names, CG_MICRO_COUNT_, ", "));
            bad++;
            continue;
        }
        if (check_kind(v, mj, CG_J_OBJECT, mj->key) != 0) {
            bad++;
            continue;
        }
        struct cg_micro_req *m = &t->micro[kind];
        m->present = 1;
        m->pos = mj->key_pos;
        static const char *const lkeys[] = { "k", "sizes", NULL };
        static const char *const mkeys[] = { "k", "collectives", NULL };
        bad += cg_json_check_keys(v->d, v->file, mj,
                                  cg_arena_printf(v->a, "micro-benchmark %s", mj->key),
                                  kind == CG_MICRO_LANE_PATTERN ? lkeys : mkeys);
        const struct cg_json *e;
        if ((e = cg_json_get(mj, "k")) != NULL) {
            bad += parse_micro_k(v, e, m) != 0;
        }
        for (int k = 0; k < t->nlibs; k++) {
            if (strcmp(t->libs[k]->backend, "mpi") != 0) {
                verr(v, mj->key_pos, "micro-benchmark %s runs over MPI, and library %s is %s",
                     mj->key, t->libs[k]->name, t->libs[k]->backend);
                bad++;
            }
        }
        if (kind == CG_MICRO_LANE_PATTERN) {
            struct lists own;
            memset(&own, 0, sizeof(own));
            const struct lists *sz = top;
            if ((e = cg_json_get(mj, "sizes")) != NULL) {
                own.sizes = e;
                bad += parse_sizes(v, e, &own) != 0;
                sz = &own;
            }
            if (sz->sizes == NULL) {
                verr(v, mj->key_pos,
                     "lane_pattern needs sizes (the bytes each node sends to the next): give "
                     "'sizes' in it or at the top level");
                bad++;
                continue;
            }
            m->sizes = sz->size;
            m->nsizes = sz->nsizes;
            if (top->dtypes != NULL) {
                memcpy(m->dtypes, top->dtype, sizeof(m->dtypes));
                m->ndtypes = top->ndtypes;
                bad += check_dtypes_backend(v, t, top->dtypes);
            } else {
                m->dtypes[0] = CG_DT_DOUBLE;
                m->ndtypes = 1;
            }
            for (int s = 0; s < m->nsizes; s++) {
                for (int d = 0; d < m->ndtypes; d++) {
                    int dt = m->dtypes[d];
                    if (m->sizes[s] % cg_dtype_sizes[dt] != 0) {
                        verr(v, sz->size_pos[s],
                             "size %lld is not a multiple of %s's %d bytes (a size is count x "
                             "datatype size)",
                             (long long)m->sizes[s], cg_dtype_names[dt], cg_dtype_sizes[dt]);
                        bad++;
                    } else if (m->sizes[s] / cg_dtype_sizes[dt] > INT_MAX) {
                        verr(v, sz->size_pos[s], "size %lld is above MPI's count limit",
                             (long long)m->sizes[s]);
                        bad++;
                    }
                }
            }
            continue;
        }
        /* multi_collective: the test's collectives but barrier, or those listed. */
        const struct cg_json *cl = cg_json_get(mj, "collectives");
        if (cl == NULL) {
            int n = 0;
            for (int c = 0; c < t->ncolls; c++) {
                if (t->colls[c].coll != CG_COLL_BARRIER) {
                    m->colls[t->colls[c].coll] = 1;
                    n++;
                }
            }
            if (n == 0) {
                verr(v, mj->key_pos,
                     "multi_collective runs the test's collectives on lane communicators, and "
                     "this test measures none but barrier");
                bad++;
            }
            continue;
        }
        if (check_kind(v, cl, CG_J_ARRAY, "collectives") != 0) {
            bad++;
            continue;
        }
        if (cl->nitems == 0) {
            verr(v, cl->pos, "'collectives' must not be empty");
            bad++;
        }
        for (int k = 0; k < cl->nitems; k++) {
            const char *name = get_str(v, cl->items[k], "collectives");
            if (name == NULL) {
                bad++;
                continue;
            }
            int c = cg_coll_by_name(name);
            int measured = 0;
            for (int q = 0; c >= 0 && q < t->ncolls; q++) {
                measured |= (int)t->colls[q].coll == c;
            }
            if (c == CG_COLL_BARRIER) {
                verr(v, cl->items[k]->str_pos,
                     "multi_collective does not run barrier (it has no data to check)");
                bad++;
            } else if (!measured) {
                verr(v, cl->items[k]->str_pos,
                     "multi_collective runs the test's collectives, and '%s' is not one of them",
                     name);
                bad++;
            } else if (m->colls[c]) {
                verr(v, cl->items[k]->str_pos, "collective '%s' is listed twice", name);
                bad++;
            } else {
                m->colls[c] = 1;
            }
        }
    }
    return bad ? -1 : 0;
}

int cg_test_load(struct cg_test *t, struct cg_arena *arena, struct cg_diag *d, const char *file,
                 const char *text, size_t len, const struct cg_platform *p,
                 const struct cg_registry *reg)
{
    memset(t, 0, sizeof(*t));
    t->file = file;
    t->name = base_name(arena, file);
    t->text = text;
    t->len = len;
    /* Why window: the only sync whose figure is on one time line (latest
     * end - a common start), so it cannot fall below a message's latency;
     * harness/measurements/2026-12-02-timing.md has the measurements. */
    t->timing.sync = "window";
    t->timing.warmup = 3;
    t->timing.min_reps = 10;
    t->timing.max_reps = 500;
    t->timing.rse_target = 0.01;
    t->timing.budget_s = 1.0;
    t->timing.window_us = 100.0;
    t->timing.policy = "rse";
    t->timing.nrep = (struct cg_nrep){ 0.01, 5, 5, 0.05, 5 };
    t->launches = 1;
    t->check = "always";
    t->verbosity = "minimal";
    t->timeout_s = 600;
    struct vctx v = { d, file, arena, { 0 }, NULL, 0 };
    int before = d->errors;
    struct cg_json *root = cg_json_parse(arena, d, file, text, len);
    if (root == NULL) {
        return -1;
    }
    if (root->kind != CG_J_OBJECT) {
        verr(&v, root->pos, "a test descriptor must be an object, not %s", kind_article(root));
        return -1;
    }
    static const char *const keys[] = {
        "schema_version",  "description", "labels", "libraries",
        "collectives",     "sizes",       "ranks",  "ranks_per_node",
        "implementations", "datatypes",   "ops",    "roots",
        "in_place",        "timing",      "check",  "verbosity",
        "timeout_s",       "env",         "knobs",  "virtual_ranks_per_node",
        "params",          "micro",       "launches", "forced_natives", NULL
    };
    cg_json_check_keys(d, file, root, "test descriptor", keys);
    check_schema_version(&v, root, "test descriptor");
    const struct cg_json *e;
    int64_t n;
    if ((e = cg_json_get(root, "description")) != NULL) {
        t->description = get_str(&v, e, "description");
    }
    if ((e = cg_json_get(root, "labels")) != NULL &&
        check_kind(&v, e, CG_J_OBJECT, "labels") == 0) {
        t->labels = cg_arena_alloc(arena, sizeof(*t->labels) * (size_t)(e->nitems + 1));
        for (int i = 0; i < e->nitems; i++) {
            const struct cg_json *l = e->items[i];
            if (check_kind(&v, l, CG_J_STRING, l->key) == 0) {
                t->labels[t->nlabels].key.s = l->key;
                t->labels[t->nlabels].value.s = l->str;
                t->nlabels++;
            }
        }
    }
    /* Libraries first: implementations and knobs refer to them. */
    if ((e = cg_json_get(root, "libraries")) != NULL) {
        if (check_kind(&v, e, CG_J_ARRAY, "libraries") == 0) {
            if (e->nitems == 0) {
                verr(&v, e->pos, "'libraries' must not be empty");
            }
            t->libs = cg_arena_alloc(arena, sizeof(*t->libs) * (size_t)(e->nitems + 1));
            for (int i = 0; i < e->nitems; i++) {
                const char *name = get_str(&v, e->items[i], "libraries");
                if (name == NULL) {
                    continue;
                }
                const struct cg_library *l = cg_platform_library(p, name);
                if (l == NULL) {
                    const char **names =
                        cg_arena_alloc(arena, sizeof(char *) * (size_t)(p->nlibs + 1));
                    for (int k = 0; k < p->nlibs; k++) {
                        names[k] = p->libs[k].name;
                    }
                    verr(&v, e->items[i]->str_pos,
                         "unknown library '%s' on platform %s (it has: "
                         "%s)",
                         name, p->name, join(arena, names, p->nlibs, ", "));
                    continue;
                }
                if (l->launch == NULL) {
                    verr(&v, e->items[i]->str_pos,
                         "library '%s' has no 'launch' on platform %s: "
                         "it cannot run there",
                         name, p->name);
                    continue;
                }
                int dup = 0;
                for (int k = 0; k < t->nlibs; k++) {
                    dup |= t->libs[k] == l;
                }
                if (dup) {
                    verr(&v, e->items[i]->str_pos, "library '%s' is listed twice", name);
                    continue;
                }
                t->libs[t->nlibs++] = l;
            }
        }
    } else {
        t->libs = cg_arena_alloc(arena, sizeof(*t->libs) * (size_t)(p->nlibs + 1));
        for (int k = 0; k < p->nlibs; k++) {
            if (p->libs[k].launch != NULL) {
                t->libs[t->nlibs++] = &p->libs[k];
            }
        }
        if (t->nlibs == 0) {
            verr(&v, root->pos, "platform %s has no library with a 'launch': nothing can run",
                 p->name);
        }
    }
    struct cg_pos *rpos = NULL;
    const struct cg_json *ranks = cg_json_get(root, "ranks");
    if (ranks == NULL) {
        verr(&v, root->pos, "missing key 'ranks' in test descriptor (process counts, e.g. [2, 4])");
    } else {
        parse_int_list(&v, ranks, "ranks", 1, &t->ranks, &rpos, &t->nranks);
    }
    if ((e = cg_json_get(root, "ranks_per_node")) != NULL &&
        get_int(&v, e, "ranks_per_node", 1, INT_MAX, &n) == 0) {
        t->ranks_per_node = (int)n;
        for (int i = 0; i < t->nranks; i++) {
            if (t->ranks[i] % t->ranks_per_node != 0) {
                verr(&v, rpos[i], "%d ranks cannot be spread evenly at %d ranks per node",
                     t->ranks[i], t->ranks_per_node);
            } else if (p->launcher == CG_LAUNCH_LOCAL && t->ranks[i] > t->ranks_per_node) {
                verr(&v, e->pos,
                     "platform %s runs every rank on this machine: %d ranks at %d per "
                     "node would need %d nodes",
                     p->name, t->ranks[i], t->ranks_per_node, t->ranks[i] / t->ranks_per_node);
            }
        }
    }
    if ((e = cg_json_get(root, "timing")) != NULL && parse_timing(&v, e, &t->timing) == 0) {
        /* bench_cuda has neither a window nor the NREP rule. */
        for (int i = 0; i < t->nlibs; i++) {
            if (strcmp(t->libs[i]->backend, "mpi") != 0 &&
                (strcmp(t->timing.sync, "window") == 0 || strcmp(t->timing.policy, "nrep") == 0)) {
                verr(&v, e->pos,
                     "library '%s' runs in the GPU mode (build/cuda/bench_cuda), which times "
                     "with sync barrier or dissemination and policy rse only",
                     t->libs[i]->name);
            }
        }
    }
    if ((e = cg_json_get(root, "launches")) != NULL &&
        get_int(&v, e, "launches", 1, 1000, &n) == 0) {
        t->launches = (int)n;
    }
    /* Why only "always": the job file (harness/FORMATS.md) has no check
     * field yet, so bench checks every point; a policy it would ignore is
     * refused rather than recorded. */
    static const char *const checks[] = { "always" };
    static const char *const verbosities[] = { "minimal", "full", "trace" };
    static const char *const forcings[] = { "own_launch", "same_launch" };
    int k;
    if ((e = cg_json_get(root, "forced_natives")) != NULL &&
        (k = get_enum(&v, e, "forced_natives", forcings, 2)) >= 0) {
        t->forced_same_launch = (k == 1);
    }
    if ((e = cg_json_get(root, "check")) != NULL &&
        (k = get_enum(&v, e, "check policy", checks, 1)) >= 0) {
        t->check = checks[k];
    }
    if ((e = cg_json_get(root, "verbosity")) != NULL &&
        (k = get_enum(&v, e, "verbosity", verbosities, 3)) >= 0) {
        t->verbosity = verbosities[k];
    }
    if ((e = cg_json_get(root, "timeout_s")) != NULL &&
        get_int(&v, e, "timeout_s", 1, 7 * 24 * 3600, &n) == 0) {
        t->timeout_s = (int)n;
    }
    if ((e = cg_json_get(root, "env")) != NULL) {
        get_env(&v, e, "env", &t->env, &t->nenv, NULL, NULL);
        for (int i = 0; i < t->nenv; i++) {
            if (strcmp(t->env[i].key.s, "CG_PPN") == 0) {
                verr(&v, t->env[i].key.pos,
                     "'env' sets CG_PPN: give node shapes as 'virtual_ranks_per_node' instead, "
                     "so that jobs and records carry them");
            }
        }
    }
    if ((e = cg_json_get(root, "virtual_ranks_per_node")) != NULL) {
        parse_vppn(&v, e, t);
    }
    if (t->nvppn == 0) {
        t->vppn = cg_arena_alloc(arena, sizeof(int));
        t->nvppn = 1; /* {0}: the real topology */
    }
    if ((e = cg_json_get(root, "knobs")) != NULL) {
        parse_knob_sweeps(&v, e, t);
    }
    struct lists top;
    parse_lists(&v, root, t, &top);
    const struct cg_json *colls = cg_json_get(root, "collectives");
    if (colls == NULL) {
        verr(&v, root->pos, "missing key 'collectives' in test descriptor");
    } else {
        parse_collectives(&v, colls, t, p, reg, &top);
    }
    /* After the collectives: both refer to them. */
    if ((e = cg_json_get(root, "params")) != NULL) {
        parse_param_sweeps(&v, e, t, reg);
    }
    if ((e = cg_json_get(root, "micro")) != NULL) {
        parse_micro(&v, e, t, &top);
    }
    return d->errors > before ? -1 : 0;
}
