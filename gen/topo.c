/* topo.c - topologies and placements (see topo.h). */
#include "topo.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

const char *const cg_domain_names[CG_DOM_COUNT_] = { "intra-node", "intra-switch", "intra-group",
                                                     "inter-group" };
const char *const cg_level_keys[CG_DOM_COUNT_] = { "node", "switch", "group", "global" };

/* The biggest machine a file may describe: enough for 65,536 ranks at 1 per
 * node with room to spare, small enough that per-link arrays stay small. */
#define CG_TOPO_MAX_NODES (1 << 20)

/* ---- reading ------------------------------------------------------------------ */

struct rd {
    struct cg_gen *g;
    const char *file;
    int bad;
};

static void err(struct rd *r, const struct cg_json *v, const char *fmt, const char *a)
{
    cg_error(&r->g->diag, r->file, v->pos, fmt, a);
    r->bad++;
}

/* A positive whole number member (required). The typed getters are
 * runtime/util/json.h's; these add the messages. */
static int whole(struct rd *r, const struct cg_json *obj, const char *key, int lo, int hi, int *out)
{
    const struct cg_json *v;
    int64_t x;
    int rc = cg_json_get_int(obj, key, lo, hi, &x, &v);
    if (rc == -1 && v == obj) {
        err(r, obj, "missing \"%s\" (a whole number)", key);
        return -1;
    }
    if (rc != 0) {
        cg_error(&r->g->diag, r->file, v->pos, "\"%s\" must be a whole number from %d to %d", key,
                 lo, hi);
        r->bad++;
        return -1;
    }
    *out = (int)x;
    return 0;
}

/* A number > 0 (>= 0 with zero_ok) member; absent: *out unchanged unless required. */
static int real(struct rd *r, const struct cg_json *obj, const char *key, int required, int zero_ok,
                double *out)
{
    const struct cg_json *v;
    double x = -1.0;
    int rc = cg_json_get_num(obj, key, &x, &v);
    if (rc == -1 && v == obj) {
        if (required) {
            err(r, obj, "missing \"%s\" (a number)", key);
            return -1;
        }
        return 0;
    }
    if (rc != 0 || x < 0 || (!zero_ok && x == 0)) {
        cg_error(&r->g->diag, r->file, v->pos, "\"%s\" must be a number %s 0", key,
                 zero_ok ? ">=" : ">");
        r->bad++;
        return -1;
    }
    *out = x;
    return 0;
}

static const char *string(struct rd *r, const struct cg_json *obj, const char *key, int required)
{
    const struct cg_json *v;
    const char *s = NULL;
    int rc = cg_json_get_str(obj, key, &s, &v);
    if (rc == -1 && v == obj) {
        if (required) {
            err(r, obj, "missing \"%s\" (a string)", key);
        }
        return NULL;
    }
    if (rc != 0) {
        err(r, v, "\"%s\" must be a string", key);
        return NULL;
    }
    return s;
}

static const struct cg_json *object(struct rd *r, const struct cg_json *obj, const char *key)
{
    const struct cg_json *v;
    int rc = cg_json_get_kind(obj, key, CG_J_OBJECT, &v);
    if (rc == -1 && v == obj) {
        err(r, obj, "missing \"%s\" (an object)", key);
        return NULL;
    }
    if (rc != 0) {
        err(r, v, "\"%s\" must be an object", key);
        return NULL;
    }
    return v;
}

/* One level: latency always; bandwidth, except a fat tree's group and global
 * levels, which have a taper instead (their bandwidth follows from it). */
static void level(struct rd *r, const struct cg_json *levels, struct cg_topo *t, int d)
{
    const struct cg_json *o = object(r, levels, cg_level_keys[d]);
    if (o == NULL) {
        return;
    }
    int tapered = t->kind == CG_TOPO_FAT_TREE && d >= CG_DOM_GROUP;
    static const char *const plain[] = { "latency_us", "bandwidth_GBs", "comment", NULL };
    static const char *const tap[] = { "latency_us", "taper", "comment", NULL };
    r->bad += cg_json_check_keys(&r->g->diag, r->file, o, cg_level_keys[d], tapered ? tap : plain);
    real(r, o, "latency_us", 1, 1, &t->lv[d].latency_us);
    if (tapered) {
        t->lv[d].taper = 1;
        if (real(r, o, "taper", 1, 0, &t->lv[d].taper) == 0 && t->lv[d].taper < 1) {
            err(r, cg_json_get(o, "taper"), "\"taper\" must be at least 1 (%s)",
                "downlink capacity over uplink capacity: 1 is a full fat tree, 2 halves the uplinks");
        }
    } else {
        real(r, o, "bandwidth_GBs", 1, 0, &t->lv[d].bw_GBs);
    }
}

int cg_topo_load(struct cg_gen *g, struct cg_arena *arena, const char *path, struct cg_topo *t)
{
    memset(t, 0, sizeof(*t));
    t->file = path;
    size_t len = 0;
    char *text = cg_read_file(arena, &g->diag, path, &len);
    if (text == NULL) {
        return -1;
    }
    const struct cg_json *top = cg_json_parse(arena, &g->diag, path, text, len);
    if (top == NULL) {
        return -1;
    }
    struct rd r = { g, path, 0 };
    if (top->kind != CG_J_OBJECT) {
        err(&r, top, "a topology is a JSON object%s", "");
        return -1;
    }
    static const char *const known[] = { "schema_version", "name", "description", "kind",
                                         "nodes_per_switch", "switches_per_group", "groups",
                                         "slots_per_node", "global_links", "levels", "host",
                                         "hosts", "comment", NULL };
    r.bad += cg_json_check_keys(&g->diag, path, top, "a topology", known);
    int version = 0;
    if (whole(&r, top, "schema_version", 1, 1, &version) != 0) {
        return -1;
    }
    t->name = string(&r, top, "name", 1);
    string(&r, top, "description", 0);
    const char *kind = string(&r, top, "kind", 1);
    if (kind != NULL) {
        if (strcmp(kind, "fat_tree") == 0) {
            t->kind = CG_TOPO_FAT_TREE;
        } else if (strcmp(kind, "dragonfly") == 0) {
            t->kind = CG_TOPO_DRAGONFLY;
        } else {
            err(&r, cg_json_get(top, "kind"), "unknown \"kind\" '%s'; expected fat_tree or dragonfly",
                kind);
        }
    }
    whole(&r, top, "nodes_per_switch", 1, CG_TOPO_MAX_NODES, &t->nodes_per_switch);
    whole(&r, top, "switches_per_group", 1, CG_TOPO_MAX_NODES, &t->switches_per_group);
    whole(&r, top, "groups", 1, CG_TOPO_MAX_NODES, &t->groups);
    whole(&r, top, "slots_per_node", 1, 1 << 16, &t->slots_per_node);
    t->global_links = 1;
    if (t->kind == CG_TOPO_DRAGONFLY && cg_json_get(top, "global_links") != NULL) {
        whole(&r, top, "global_links", 1, 1 << 16, &t->global_links);
    } else if (t->kind == CG_TOPO_FAT_TREE && cg_json_get(top, "global_links") != NULL) {
        err(&r, cg_json_get(top, "global_links"), "\"global_links\" is for a dragonfly%s", "");
    }
    if (r.bad == 0) {
        long long n = (long long)t->nodes_per_switch * t->switches_per_group * t->groups;
        long long sw = (long long)t->switches_per_group * t->groups;
        if (n > CG_TOPO_MAX_NODES || (t->kind == CG_TOPO_DRAGONFLY &&
                                      (sw * t->switches_per_group > CG_TOPO_MAX_NODES * 4LL ||
                                       (long long)t->groups * t->groups > CG_TOPO_MAX_NODES * 4LL))) {
            cg_error(&g->diag, path, top->pos, "the machine is too big: %lld nodes (at most %d), "
                     "or too many links", n, CG_TOPO_MAX_NODES);
            return -1;
        }
        t->nnodes = (int)n;
    }
    const struct cg_json *levels = object(&r, top, "levels");
    if (levels != NULL) {
        static const char *const lk[] = { "node", "switch", "group", "global", NULL };
        r.bad += cg_json_check_keys(&g->diag, path, levels, "\"levels\"", lk);
        for (int d = 0; d < CG_DOM_COUNT_; d++) {
            level(&r, levels, t, d);
        }
    }
    if (r.bad == 0 && t->kind == CG_TOPO_FAT_TREE) {
        t->lv[CG_DOM_GROUP].bw_GBs =
            t->nodes_per_switch * t->lv[CG_DOM_SWITCH].bw_GBs / t->lv[CG_DOM_GROUP].taper;
        t->lv[CG_DOM_GLOBAL].bw_GBs =
            t->switches_per_group * t->lv[CG_DOM_GROUP].bw_GBs / t->lv[CG_DOM_GLOBAL].taper;
    }
    t->overhead_us = 0.5;
    t->gap_us = 0.0;
    t->gamma_ns_B = 0.2;
    const struct cg_json *host = cg_json_get(top, "host");
    if (host != NULL) {
        if (host->kind != CG_J_OBJECT) {
            err(&r, host, "\"host\" must be an object%s", "");
        } else {
            static const char *const hk[] = { "overhead_us", "gap_us", "gamma_ns_B", "comment",
                                              NULL };
            r.bad += cg_json_check_keys(&g->diag, path, host, "\"host\"", hk);
            real(&r, host, "overhead_us", 0, 1, &t->overhead_us);
            real(&r, host, "gap_us", 0, 1, &t->gap_us);
            real(&r, host, "gamma_ns_B", 0, 1, &t->gamma_ns_B);
        }
    }
    const struct cg_json *hosts = cg_json_get(top, "hosts");
    if (hosts != NULL) {
        if (hosts->kind != CG_J_ARRAY) {
            err(&r, hosts, "\"hosts\" must be an array of host names, one per node%s", "");
        } else if (r.bad == 0 && hosts->nitems > t->nnodes) {
            cg_error(&g->diag, path, hosts->pos, "\"hosts\" names %d nodes; the machine has %d",
                     hosts->nitems, t->nnodes);
            r.bad++;
        } else {
            t->nhosts = hosts->nitems;
            t->hosts = cg_arena_alloc(arena, sizeof(char *) * (size_t)(hosts->nitems + 1));
            for (int i = 0; i < hosts->nitems; i++) {
                if (hosts->items[i]->kind != CG_J_STRING) {
                    err(&r, hosts->items[i], "a host name must be a string%s", "");
                } else {
                    t->hosts[i] = hosts->items[i]->str;
                }
            }
        }
    }
    return r.bad ? -1 : 0;
}

/* ---- geometry ------------------------------------------------------------------ */

enum cg_domain cg_topo_domain(const struct cg_topo *t, int a, int b)
{
    if (a == b) {
        return CG_DOM_NODE;
    }
    int sa = a / t->nodes_per_switch, sb = b / t->nodes_per_switch;
    if (sa == sb) {
        return CG_DOM_SWITCH;
    }
    return sa / t->switches_per_group == sb / t->switches_per_group ? CG_DOM_GROUP
                                                                      : CG_DOM_GLOBAL;
}

/* Link index space, in this order: node memory (N), node up and down (N
 * each); a fat tree's switch up and down (S each) and group up and down (G
 * each); a dragonfly's local links (S x switches_per_group, from switch a to
 * the b-th of its group) and global links (G x G, from group i to j). */
static long nswitches(const struct cg_topo *t)
{
    return (long)t->switches_per_group * t->groups;
}

long cg_topo_nlinks(const struct cg_topo *t)
{
    long n = t->nnodes, s = nswitches(t), gr = t->groups;
    if (t->kind == CG_TOPO_FAT_TREE) {
        return 3 * n + 2 * s + 2 * gr;
    }
    return 3 * n + s * t->switches_per_group + gr * gr;
}

/* A dragonfly group i's router that holds its link to group j. */
static long router_to(const struct cg_topo *t, int i, int j)
{
    int G = t->groups, k = ((j - i - 1) % G + G) % G;
    return (long)i * t->switches_per_group + k % t->switches_per_group;
}

int cg_topo_route(const struct cg_topo *t, int a, int b, long *links)
{
    long N = t->nnodes, S = nswitches(t), G = t->groups;
    if (a == b) {
        links[0] = a;
        return 1;
    }
    int n = 0;
    long sa = a / t->nodes_per_switch, sb = b / t->nodes_per_switch;
    int ga = (int)(sa / t->switches_per_group), gb = (int)(sb / t->switches_per_group);
    links[n++] = N + a; /* a's uplink */
    if (sa != sb) {
        if (t->kind == CG_TOPO_FAT_TREE) {
            links[n++] = 3 * N + sa;
            if (ga != gb) {
                links[n++] = 3 * N + 2 * S + ga;
                links[n++] = 3 * N + 2 * S + G + gb;
            }
            links[n++] = 3 * N + S + sb;
        } else {
            long L = 3 * N, spg = t->switches_per_group;
            if (ga == gb) {
                links[n++] = L + sa * spg + sb % spg;
            } else {
                long ra = router_to(t, ga, gb), rb = router_to(t, gb, ga);
                if (ra != sa) {
                    links[n++] = L + sa * spg + ra % spg;
                }
                links[n++] = L + S * spg + (long)ga * G + gb;
                if (rb != sb) {
                    links[n++] = L + rb * spg + sb % spg;
                }
            }
        }
    }
    links[n++] = 2 * N + b; /* b's downlink */
    return n;
}

enum cg_domain cg_topo_link_level(const struct cg_topo *t, long link)
{
    long N = t->nnodes, S = nswitches(t);
    if (link < N) {
        return CG_DOM_NODE;
    }
    if (link < 3 * N) {
        return CG_DOM_SWITCH;
    }
    long rest = link - 3 * N;
    long local = t->kind == CG_TOPO_FAT_TREE ? 2 * S : S * t->switches_per_group;
    return rest < local ? CG_DOM_GROUP : CG_DOM_GLOBAL;
}

double cg_topo_link_bw(const struct cg_topo *t, long link)
{
    enum cg_domain d = cg_topo_link_level(t, link);
    if (d == CG_DOM_GLOBAL && t->kind == CG_TOPO_DRAGONFLY) {
        return t->lv[d].bw_GBs * t->global_links;
    }
    return t->lv[d].bw_GBs;
}

void cg_topo_link_name(const struct cg_topo *t, long link, char *buf, size_t cap)
{
    long N = t->nnodes, S = nswitches(t), G = t->groups, spg = t->switches_per_group;
    if (link < N) {
        snprintf(buf, cap, "node %ld memory", link);
    } else if (link < 2 * N) {
        snprintf(buf, cap, "node %ld -> switch %ld", link - N, (link - N) / t->nodes_per_switch);
    } else if (link < 3 * N) {
        snprintf(buf, cap, "switch %ld -> node %ld", (link - 2 * N) / t->nodes_per_switch,
                 link - 2 * N);
    } else if (t->kind == CG_TOPO_FAT_TREE) {
        long r = link - 3 * N;
        if (r < S) {
            snprintf(buf, cap, "switch %ld -> group %ld spine", r, r / spg);
        } else if (r < 2 * S) {
            snprintf(buf, cap, "group %ld spine -> switch %ld", (r - S) / spg, r - S);
        } else if (r < 2 * S + G) {
            snprintf(buf, cap, "group %ld -> core", r - 2 * S);
        } else {
            snprintf(buf, cap, "core -> group %ld", r - 2 * S - G);
        }
    } else {
        long r = link - 3 * N;
        if (r < S * spg) {
            long a = r / spg, b = (a / spg) * spg + r % spg;
            snprintf(buf, cap, "switch %ld -> switch %ld (group %ld)", a, b, a / spg);
        } else {
            r -= S * spg;
            snprintf(buf, cap, "group %ld -> group %ld", r / G, r % G);
        }
    }
}

/* ---- placements ----------------------------------------------------------------- */

static int bad_placement(const char *spec, const char *why)
{
    fprintf(stderr, "collgen: bad --placement '%s': %s\n", spec, why);
    return -1;
}

/* "0-15,64,80-95" -> nodes (malloc'd), or -1 with *why. */
static int node_list(const char *text, int max, int **out, int *n, const char **why)
{
    int cap = 64, k = 0;
    int *v = malloc(sizeof(int) * (size_t)cap);
    const char *c = text;
    if (v == NULL) {
        cg_panic("out of memory");
    }
    while (*c) {
        char *end;
        errno = 0;
        long a = strtol(c, &end, 10), b;
        if (end == c || a < 0 || errno) {
            *why = "expected node numbers and ranges, e.g. 0-15,64,80-95";
            free(v);
            return -1;
        }
        b = a;
        c = end;
        if (*c == '-') {
            b = strtol(c + 1, &end, 10);
            if (end == c + 1 || b < a) {
                *why = "a range is LOW-HIGH with LOW <= HIGH";
                free(v);
                return -1;
            }
            c = end;
        }
        if (b >= max) {
            *why = "a node beyond the topology's last node";
            free(v);
            return -1;
        }
        for (long x = a; x <= b; x++) {
            if (k == cap) {
                cap *= 2;
                if ((v = realloc(v, sizeof(int) * (size_t)cap)) == NULL) {
                    cg_panic("out of memory");
                }
            }
            v[k++] = (int)x;
        }
        if (*c == ',') {
            c++;
        } else if (*c) {
            *why = "expected ',' between node numbers";
            free(v);
            return -1;
        }
    }
    *out = v;
    *n = k;
    return 0;
}

/* splitmix64: a small, well-known generator, so a seed means the same
 * placement everywhere. */
static uint64_t next_rand(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* A run record's "placement": rank -> host -> node. */
static int place_run(struct cg_gen *g, struct cg_arena *arena, const struct cg_topo *t,
                     const char *path, struct cg_placement *pl)
{
    size_t len = 0;
    char *text = cg_read_file(arena, &g->diag, path, &len);
    if (text == NULL) {
        return -1;
    }
    const struct cg_json *top = cg_json_parse(arena, &g->diag, path, text, len);
    if (top == NULL) {
        return -1;
    }
    const struct cg_json *arr = top->kind == CG_J_OBJECT ? cg_json_get(top, "placement") : NULL;
    if (arr == NULL || arr->kind != CG_J_ARRAY) {
        cg_error(&g->diag, path, top->pos, "no \"placement\" array: a run record "
                 "(results/<campaign>/.../run-<n>.json, harness/FORMATS.md) has one");
        return -1;
    }
    if (arr->nitems != pl->p) {
        cg_error(&g->diag, path, arr->pos, "the run placed %d ranks; --p is %d", arr->nitems,
                 pl->p);
        return -1;
    }
    const char **seen = cg_arena_alloc(arena, sizeof(char *) * (size_t)(pl->p + 1));
    int nseen = 0;
    for (int i = 0; i < arr->nitems; i++) {
        const struct cg_json *e = arr->items[i];
        const struct cg_json *rank = e->kind == CG_J_OBJECT ? cg_json_get(e, "rank") : NULL;
        const struct cg_json *host = e->kind == CG_J_OBJECT ? cg_json_get(e, "host") : NULL;
        if (rank == NULL || !rank->is_int || rank->ival < 0 || rank->ival >= pl->p ||
            host == NULL || host->kind != CG_J_STRING) {
            cg_error(&g->diag, path, e->pos, "a placement entry needs \"rank\" (0 to %d) and "
                     "\"host\" (a string)", pl->p - 1);
            return -1;
        }
        int node = -1;
        if (t->hosts != NULL) {
            for (int k = 0; k < t->nhosts && node < 0; k++) {
                if (t->hosts[k] && strcmp(t->hosts[k], host->str) == 0) {
                    node = k;
                }
            }
            if (node < 0) {
                cg_error(&g->diag, path, host->pos, "host '%s' is not among %s's \"hosts\"",
                         host->str, t->file);
                return -1;
            }
        } else {
            for (int k = 0; k < nseen && node < 0; k++) {
                if (strcmp(seen[k], host->str) == 0) {
                    node = k;
                }
            }
            if (node < 0) {
                if (nseen >= t->nnodes) {
                    cg_error(&g->diag, path, host->pos, "more hosts than %s has nodes (%d)",
                             t->file, t->nnodes);
                    return -1;
                }
                seen[nseen] = host->str;
                node = nseen++;
            }
        }
        pl->node[rank->ival] = node;
    }
    snprintf(pl->how, sizeof(pl->how), "from %s (%s)", path,
             t->hosts ? "hosts mapped through the topology's \"hosts\""
                      : "hosts on nodes 0, 1, ... in order of appearance");
    return 0;
}

int cg_place(struct cg_gen *g, struct cg_arena *arena, const struct cg_topo *t, int p, int ppn,
             const char *spec, const char *nodes, struct cg_placement *pl)
{
    memset(pl, 0, sizeof(*pl));
    pl->p = p;
    pl->node = calloc((size_t)p, sizeof(int));
    if (pl->node == NULL) {
        cg_panic("out of memory");
    }
    const char *why = NULL;
    int rc = 0;
    if (ppn < 1 || ppn > t->slots_per_node) {
        fprintf(stderr, "collgen: %d ranks per node; %s's nodes hold 1 to %d\n", ppn, t->file,
                t->slots_per_node);
        return -1;
    }
    if (strncmp(spec, "run:", 4) == 0) {
        rc = place_run(g, arena, t, spec + 4, pl);
    } else if (strncmp(spec, "list:", 5) == 0) {
        int *v = NULL, n = 0;
        if (node_list(spec + 5, t->nnodes, &v, &n, &why) != 0) {
            return bad_placement(spec, why);
        }
        if (n != p) {
            free(v);
            return bad_placement(spec, "a list names one node per rank, and its length is not --p");
        }
        memcpy(pl->node, v, sizeof(int) * (size_t)p);
        free(v);
        snprintf(pl->how, sizeof(pl->how), "rank r on the r-th node of the list");
    } else {
        int mode = strcmp(spec, "block") == 0 ? 0 : strcmp(spec, "cyclic") == 0 ? 1 : -1;
        uint64_t seed = 0;
        if (strncmp(spec, "random:", 7) == 0) {
            char *end;
            errno = 0;
            seed = strtoull(spec + 7, &end, 10);
            if (end == spec + 7 || *end != '\0' || errno) {
                return bad_placement(spec, "random:SEED takes a whole number");
            }
            mode = 2;
        }
        if (mode < 0) {
            return bad_placement(spec, "expected block, cyclic, random:SEED, list:N0,N1,... or "
                                       "run:FILE");
        }
        int need = (p + ppn - 1) / ppn, *alloc = NULL, nalloc = 0;
        if (nodes != NULL) {
            if (node_list(nodes, t->nnodes, &alloc, &nalloc, &why) != 0) {
                fprintf(stderr, "collgen: bad --nodes '%s': %s\n", nodes, why);
                return -1;
            }
        } else {
            nalloc = need;
            if (need > t->nnodes) {
                fprintf(stderr, "collgen: %d ranks at %d per node need %d nodes; %s has %d\n", p,
                        ppn, need, t->file, t->nnodes);
                return -1;
            }
            alloc = malloc(sizeof(int) * (size_t)need);
            for (int i = 0; alloc && i < need; i++) {
                alloc[i] = i;
            }
        }
        if (alloc == NULL) {
            cg_panic("out of memory");
        }
        if ((long)nalloc * ppn < p) {
            fprintf(stderr, "collgen: %d ranks at %d per node need %d nodes; --nodes gives %d\n",
                    p, ppn, need, nalloc);
            free(alloc);
            return -1;
        }
        /* Slots: node alloc[i] holds ranks i*ppn .. (block), or every
         * nalloc-th (cyclic); random shuffles the block slots. */
        int *slot = malloc(sizeof(int) * (size_t)p);
        if (slot == NULL) {
            cg_panic("out of memory");
        }
        for (int r = 0; r < p; r++) {
            slot[r] = mode == 1 ? (r % need) * ppn + r / need : r;
        }
        if (mode == 2) {
            int total = nalloc * ppn;
            int *all = malloc(sizeof(int) * (size_t)total);
            if (all == NULL) {
                cg_panic("out of memory");
            }
            for (int i = 0; i < total; i++) {
                all[i] = i;
            }
            for (int i = total - 1; i > 0; i--) {
                int j = (int)(next_rand(&seed) % (uint64_t)(i + 1));
                int x = all[i];
                all[i] = all[j];
                all[j] = x;
            }
            memcpy(slot, all, sizeof(int) * (size_t)p);
            free(all);
        }
        for (int r = 0; r < p; r++) {
            pl->node[r] = alloc[slot[r] / ppn];
        }
        free(slot);
        char list[128];
        snprintf(list, sizeof(list), "%s", nodes ? nodes : "the first ones");
        if (nodes == NULL) {
            snprintf(list, sizeof(list), "0-%d", need - 1);
        }
        snprintf(pl->how, sizeof(pl->how), "%s, %d rank%s per node, nodes %.120s%s", spec, ppn,
                 ppn == 1 ? "" : "s", list, strlen(list) >= 120 ? "..." : "");
        free(alloc);
    }
    if (rc != 0) {
        return -1;
    }
    /* Slots per node: no node holds more ranks than it has slots. */
    int *load = calloc((size_t)t->nnodes, sizeof(int));
    if (load == NULL) {
        cg_panic("out of memory");
    }
    for (int r = 0; r < p; r++) {
        if (load[pl->node[r]]++ == 0) {
            pl->nused++;
        }
        if (load[pl->node[r]] > t->slots_per_node) {
            fprintf(stderr, "collgen: the placement puts more than %d ranks (the topology's "
                            "slots_per_node) on node %d\n", t->slots_per_node, pl->node[r]);
            free(load);
            return -1;
        }
    }
    free(load);
    return 0;
}

void cg_placement_free(struct cg_placement *pl)
{
    free(pl->node);
    pl->node = NULL;
}
