/* bench_mpit.c - what the MPI library says it will run: the `effective`
 * block of a record (FORMATS.md), read through the MPI tool interface
 * rather than copied from the request.
 *
 * Open MPI (coll/tuned, 4.1.x): a forced algorithm needs
 * coll_tuned_use_dynamic_rules = true and coll_tuned_<coll>_algorithm != 0
 * ("ignore"); both are MPI_T control variables, the algorithm one an int
 * with an MPI_T enum naming its values. Some forced algorithms silently run
 * another one for some arguments ("known fallbacks", below).
 *
 * MPICH (4.0.x, ch4): MPIR_CVAR_<COLL>_INTRA_ALGORITHM is an int without an
 * MPI_T enum; its names are listed, in value order, only in the variable's
 * description, which we check against a table before trusting it. The
 * value only decides what runs when the ch4 device does not pick its own
 * algorithm (MPIR_CVAR_DEVICE_COLLECTIVES = all, or = percoll with
 * MPIR_CVAR_<COLL>_DEVICE_COLLECTIVE = 1, the defaults, let it: on one node
 * it uses its shared-memory release_gather algorithms for small messages)
 * and when an algorithm that does not fit the arguments raises an error
 * instead of silently falling back (MPIR_CVAR_COLLECTIVE_FALLBACK = error;
 * the default is silent). Otherwise what runs is recorded as
 * "unobservable", with the variables to set to make it observable.
 */
#define _POSIX_C_SOURCE 200809L
#include "bench.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define CVAR_BUF 4096 /* largest control variable value read */

/* One control variable as read. */
struct cvar {
    int found;            /* exists, has no binding, and was read */
    int is_enum;          /* an int with an MPI_T enum */
    int is_bool;          /* MPI_C_BOOL */
    int is_int;           /* an integer type (enum and bool included) */
    long long ival;       /* integer value */
    char text[256];       /* enum item name, true/false, decimal, or the string */
};

/* Why every rank: a native algorithm forced in the launch of other points
 * is written through MPI_T on every rank (bench_force_begin); only rank 0
 * reads what the library says it runs. */
void bench_mpit_init(struct bench_ctx *ctx)
{
    int provided = 0;

    ctx->mpit_ok = (MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) == MPI_SUCCESS);
}

void bench_mpit_fini(struct bench_ctx *ctx)
{
    if (ctx->mpit_ok) {
        MPI_T_finalize();
        ctx->mpit_ok = 0;
    }
}

static void cvar_read(const struct bench_ctx *ctx, const char *name, struct cvar *cv)
{
    char cname[256];
    char desc[16];
    int namelen = (int)sizeof(cname);
    int desclen = (int)sizeof(desc);
    int index = -1;
    int verbosity, bind, scope, count = 0, tsize = 0;
    MPI_Datatype dt;
    MPI_T_enum en;
    MPI_T_cvar_handle h;
    unsigned char buf[CVAR_BUF];

    memset(cv, 0, sizeof(*cv));
    if (!ctx->mpit_ok || MPI_T_cvar_get_index(name, &index) != MPI_SUCCESS) {
        return;
    }
    if (MPI_T_cvar_get_info(index, cname, &namelen, &verbosity, &dt, &en, desc, &desclen,
                            &bind, &scope) != MPI_SUCCESS ||
        bind != MPI_T_BIND_NO_OBJECT) {
        return;
    }
    if (MPI_T_cvar_handle_alloc(index, NULL, &h, &count) != MPI_SUCCESS) {
        return;
    }
    if (MPI_Type_size(dt, &tsize) != MPI_SUCCESS || tsize <= 0 || count <= 0 ||
        (size_t)tsize * (size_t)count > sizeof(buf) - 1) {
        MPI_T_cvar_handle_free(&h);
        return;
    }
    memset(buf, 0, sizeof(buf));
    if (MPI_T_cvar_read(h, buf) != MPI_SUCCESS) {
        MPI_T_cvar_handle_free(&h);
        return;
    }
    MPI_T_cvar_handle_free(&h);
    cv->found = 1;
    if (dt == MPI_CHAR) {
        bench_fmt(cv->text, sizeof(cv->text), "%s", (const char *)buf);
        return;
    }
    cv->is_int = 1;
    if (dt == MPI_C_BOOL) {
        cv->is_bool = 1;
        cv->ival = (buf[0] != 0);
    } else if (dt == MPI_INT) {
        int v;
        memcpy(&v, buf, sizeof(v));
        cv->ival = v;
    } else if (dt == MPI_UNSIGNED) {
        unsigned v;
        memcpy(&v, buf, sizeof(v));
        cv->ival = v;
    } else if (dt == MPI_UNSIGNED_LONG || dt == MPI_LONG) {
        long v;
        memcpy(&v, buf, sizeof(v));
        cv->ival = v;
    } else if (dt == MPI_UNSIGNED_LONG_LONG || dt == MPI_LONG_LONG || dt == MPI_COUNT) {
        long long v;
        memcpy(&v, buf, sizeof(v));
        cv->ival = v;
    } else {
        cv->is_int = 0;
        bench_fmt(cv->text, sizeof(cv->text), "(value of an unsupported type)");
        return;
    }
    if (cv->is_bool) {
        bench_fmt(cv->text, sizeof(cv->text), "%s", cv->ival ? "true" : "false");
        return;
    }
    bench_fmt(cv->text, sizeof(cv->text), "%lld", cv->ival);
    if (en != MPI_T_ENUM_NULL) {
        int nitems = 0;
        char ename[128];
        int enamelen = (int)sizeof(ename);
        if (MPI_T_enum_get_info(en, &nitems, ename, &enamelen) != MPI_SUCCESS) {
            return;
        }
        for (int i = 0; i < nitems; i++) {
            int value = 0;
            char iname[128];
            int inamelen = (int)sizeof(iname);
            if (MPI_T_enum_get_item(en, i, &value, iname, &inamelen) == MPI_SUCCESS &&
                value == cv->ival) {
                cv->is_enum = 1;
                bench_fmt(cv->text, sizeof(cv->text), "%s", iname);
                return;
            }
        }
    }
}

/* ---- MPICH: names of int control variables, checked against MPI_T -------- */

struct mpich_names {
    const char *cvar;          /* control variable */
    const char *names[8];      /* by value, NULL-terminated */
};

/* MPICH 4.0.2, from the variables' descriptions (and its mpir_cvars.h). */
static const struct mpich_names mpich_tables[] = {
    {"MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM",
     {"auto", "nb", "smp", "recursive_doubling", "reduce_scatter_allgather", NULL}},
    {"MPIR_CVAR_ALLGATHER_INTRA_ALGORITHM",
     {"auto", "brucks", "nb", "recursive_doubling", "ring", NULL}},
    {"MPIR_CVAR_REDUCE_SCATTER_BLOCK_INTRA_ALGORITHM",
     {"auto", "noncommutative", "recursive_doubling", "pairwise", "recursive_halving", "nb",
      NULL}},
    {"MPIR_CVAR_BCAST_INTRA_ALGORITHM",
     {"auto", "binomial", "nb", "smp", "scatter_recursive_doubling_allgather",
      "scatter_ring_allgather", NULL}},
    {"MPIR_CVAR_REDUCE_INTRA_ALGORITHM",
     {"auto", "binomial", "nb", "smp", "reduce_scatter_gather", NULL}},
    {"MPIR_CVAR_GATHER_INTRA_ALGORITHM", {"auto", "binomial", "nb", NULL}},
    {"MPIR_CVAR_SCATTER_INTRA_ALGORITHM", {"auto", "binomial", "nb", NULL}},
    {"MPIR_CVAR_ALLTOALL_INTRA_ALGORITHM",
     {"auto", "brucks", "nb", "pairwise", "pairwise_sendrecv_replace", "scattered", NULL}},
    {"MPIR_CVAR_SCAN_INTRA_ALGORITHM", {"auto", "nb", "smp", "recursive_doubling", NULL}},
    {"MPIR_CVAR_EXSCAN_INTRA_ALGORITHM", {"auto", "nb", "recursive_doubling", NULL}},
    {"MPIR_CVAR_BARRIER_INTRA_ALGORITHM", {"auto", "nb", "smp", "dissemination", NULL}},
    {"MPIR_CVAR_DEVICE_COLLECTIVES", {"all", "none", "percoll", NULL}},
    {"MPIR_CVAR_COLLECTIVE_FALLBACK", {"error", "print", "silent", NULL}},
};

/* Whether `desc` lists exactly `names`, in order, each as "name<spaces>- ".
 * Why check: the values are the order of an enum compiled into the library;
 * later MPICH releases insert names (recursive_multiplying before
 * reduce_scatter_allgather, for one), and a stale table would name the
 * wrong algorithm. */
static int mpich_desc_matches(const char *desc, const char *const *names)
{
    const char *at = desc;
    int n = 0;
    int entries = 0;

    for (; names[n] != NULL; n++) {
        const char *hit = at;
        size_t len = strlen(names[n]);
        for (;;) {
            const char *q;
            hit = strstr(hit, names[n]);
            if (hit == NULL) {
                return 0;
            }
            q = hit + len;
            while (*q == ' ') {
                q++;
            }
            if (q[0] == '-' && q[1] == ' ' && q > hit + len) {
                at = q;
                break;
            }
            hit += len;
        }
    }
    for (const char *q = strstr(desc, " - "); q != NULL; q = strstr(q + 3, " - ")) {
        entries++;
    }
    return entries == n;
}

/* Replaces cv->text by the MPICH name of its value when a table has it and
 * the library's description agrees. */
static void mpich_name(const struct bench_ctx *ctx, const char *cvar, struct cvar *cv)
{
    char name[256];
    char desc[4096];
    int namelen = (int)sizeof(name);
    int desclen = (int)sizeof(desc);
    int index, verbosity, bind, scope;
    MPI_Datatype dt;
    MPI_T_enum en;

    if (!cv->found || !cv->is_int || cv->is_enum || !ctx->mpit_ok) {
        return;
    }
    for (size_t t = 0; t < sizeof(mpich_tables) / sizeof(mpich_tables[0]); t++) {
        const struct mpich_names *tab = &mpich_tables[t];
        long long n = 0;
        if (strcmp(tab->cvar, cvar) != 0) {
            continue;
        }
        if (MPI_T_cvar_get_index(cvar, &index) != MPI_SUCCESS ||
            MPI_T_cvar_get_info(index, name, &namelen, &verbosity, &dt, &en, desc, &desclen,
                                &bind, &scope) != MPI_SUCCESS) {
            return;
        }
        while (tab->names[n] != NULL) {
            n++;
        }
        if (cv->ival < 0 || cv->ival >= n || !mpich_desc_matches(desc, tab->names)) {
            bench_fmt(cv->text, sizeof(cv->text), "%lld (no name: this MPICH's list differs)",
                     cv->ival);
            return;
        }
        bench_fmt(cv->text, sizeof(cv->text), "%s", tab->names[cv->ival]);
        cv->is_enum = 1;
        return;
    }
}

/* Reads a variable and names its value where the library or a table can. */
static void cvar_get(const struct bench_ctx *ctx, const char *name, struct cvar *cv)
{
    cvar_read(ctx, name, cv);
    if (ctx->is_mpich) {
        mpich_name(ctx, name, cv);
    }
}

/* ---- knobs as observed ----------------------------------------------------- */

static int word_is(const char *s, const char *const *words)
{
    for (; *words != NULL; words++) {
        if (strcasecmp(s, *words) == 0) {
            return 1;
        }
    }
    return 0;
}

/* Whether the requested setting `req` and the value read mean the same. */
static int cvar_matches(const char *req, const struct cvar *cv)
{
    static const char *const yes[] = {"1", "true", "t", "yes", "y", "enabled", "on", NULL};
    static const char *const no[] = {"0", "false", "f", "no", "n", "disabled", "off", NULL};
    char *end = NULL;
    long long v;

    if (strcasecmp(req, cv->text) == 0) {
        return 1;
    }
    if (!cv->is_int) {
        return 0;
    }
    if (cv->is_bool || cv->ival == 0 || cv->ival == 1) {
        if (word_is(req, yes) && cv->ival == 1) {
            return 1;
        }
        if (word_is(req, no) && cv->ival == 0) {
            return 1;
        }
    }
    v = strtoll(req, &end, 10);
    return end != req && *end == '\0' && v == cv->ival;
}

/* The control variable behind an environment variable, NULL when none. */
static const char *cvar_of_env(const struct bench_ctx *ctx, const char *env)
{
    if (ctx->is_openmpi && strncmp(env, "OMPI_MCA_", 9) == 0) {
        return env + 9;
    }
    if (ctx->is_mpich && strncmp(env, "MPIR_CVAR_", 10) == 0) {
        return env;
    }
    return NULL;
}

/* What the library (or, for other variables, this process's environment)
 * holds for env variable `key` that the job set to `req`: the requested
 * spelling when they agree, what was read when they do not, NULL when
 * neither the library nor the environment has it. */
static cJSON *observe_env(const struct bench_ctx *ctx, const char *key, const char *req)
{
    const char *cname = cvar_of_env(ctx, key);
    const char *val;

    if (cname != NULL) {
        struct cvar cv;
        cvar_get(ctx, cname, &cv);
        if (cv.found) {
            return cg_json_string((req != NULL && cvar_matches(req, &cv)) ? req : cv.text);
        }
    }
    val = getenv(key);
    if (val == NULL) {
        return cJSON_CreateNull();
    }
    return cg_json_string(val);
}

/* The job's knobs with env values as observed. Why not algorithm and
 * forced_by too: they describe the job's setting, and the record's own
 * effective algorithm and forced_by already say what became of it; a second
 * copy would only add "knobs" to every diff that has "algorithm". */
static cJSON *observe_knobs(const struct bench_ctx *ctx)
{
    const cJSON *knobs = ctx->job->knobs;
    cJSON *copy = (knobs != NULL) ? cJSON_Duplicate(knobs, 1) : cJSON_CreateObject();
    cJSON *env;

    if (copy == NULL) {
        return NULL;
    }
    env = cJSON_GetObjectItemCaseSensitive(copy, "env");
    if (cJSON_IsObject(env)) {
        cJSON *item = env->child;
        while (item != NULL) {
            cJSON *next = item->next;
            const char *req = cJSON_IsString(item) ? item->valuestring : NULL;
            cJSON *obs = observe_env(ctx, item->string, req);
            char key[256];
            /* A copy: replacing the item frees its key. */
            bench_fmt(key, sizeof(key), "%s", item->string);
            if (obs != NULL) {
                cJSON_ReplaceItemInObjectCaseSensitive(env, key, obs);
            }
            item = next;
        }
    }
    return copy;
}

/* ---- Open MPI's known fallbacks --------------------------------------------- */

static int is_pof2(long x)
{
    return x > 0 && (x & (x - 1)) == 0;
}

static long pof2_floor(long x)
{
    long r = 1;
    while (r * 2 <= x) {
        r *= 2;
    }
    return r;
}

/* The algorithm Open MPI 4.1.x's coll/tuned actually runs when `alg` is
 * forced, for this point's arguments; writes the condition to why.
 *
 * Read in Open MPI's ompi/mca/coll/base (the 4.1 series and later, same
 * logic; the forced path of coll_tuned_<coll>_intra_do_this calls these):
 * - allreduce ring: "Special case for count less than size - use recursive
 *   doubling" (count < p);
 * - allreduce segmented_ring: segcount from coll_tuned_allreduce_algorithm_
 *   segmentsize (COLL_BASE_COMPUTED_SEGCOUNT: only when segsize >= type
 *   size and < type size * count, else segcount = count), then "count less
 *   than size * segcount - use regular ring" (so with the default segsize 0
 *   it is always the plain ring, with its own fallback);
 * - allreduce rabenseifner (redscat_allgather): count < pof2(p) or a
 *   non-commutative op: basic_linear;
 * - allgather recursive_doubling: p not a power of two: bruck;
 *   allgather neighbor: odd p: ring;
 * - bcast scatter_allgather and scatter_allgather_ring: count < p:
 *   basic_linear;
 * - bcast split_binary_tree: count < 2 (an empty half) or a segment size
 *   above the smaller half's bytes: chain;
 * - reduce rabenseifner (redscat_gather): count < pof2(p) (or p < 2, or a
 *   non-commutative op, which the harness does not use): linear
 *   (ompi_coll_base_reduce_intra_basic_linear);
 * - alltoall, every algorithm: in place, mca_coll_base_alltoall_intra_
 *   basic_inplace, which the table calls "basic_inplace" (it is none of the
 *   forceable ones).
 * The reduce and alltoall ones were also seen on this machine's 4.1.4 with
 * gdb breakpoints on the coll/base functions (descriptors/README.md). The
 * two_proc algorithms of alltoall and barrier return
 * MPI_ERR_UNSUPPORTED_OPERATION at p != 2 rather than falling back (the
 * platform's only_ranks keeps them out).
 * Returns alg itself when none applies. */
static const char *ompi_fallback(const struct bench_point *pt, const char *alg, int p,
                                 long long segsize, char *why, size_t whylen)
{
    unsigned long long count = pt->count;
    unsigned long long typelng = bench_dtype_size(pt->dtype);

    why[0] = '\0';
    if (pt->coll == CG_COLL_ALLREDUCE) {
        const char *a = alg;
        if (strcmp(a, "segmented_ring") == 0) {
            unsigned long long segcount = count;
            if (segsize >= (long long)typelng && (unsigned long long)segsize < typelng * count) {
                segcount = (unsigned long long)segsize / typelng;
                if ((unsigned long long)segsize - (segcount * typelng) > (typelng >> 1)) {
                    segcount++;
                }
            }
            if (count < (unsigned long long)p * segcount) {
                bench_fmt(why, whylen,
                         "segmented_ring runs the plain ring when count (%llu) < p * segcount "
                         "(%d * %llu; coll_tuned_allreduce_algorithm_segmentsize = %lld)",
                         count, p, segcount, segsize);
                a = "ring";
            }
        }
        if (strcmp(a, "ring") == 0 && count < (unsigned long long)p) {
            size_t used = strlen(why);
            bench_fmt(why + used, whylen - used,
                     "%sring runs recursive_doubling when count (%llu) < p (%d)",
                     (used > 0) ? "; " : "", count, p);
            return "recursive_doubling";
        }
        if (strcmp(a, "rabenseifner") == 0 && count < (unsigned long long)pof2_floor(p)) {
            bench_fmt(why, whylen,
                     "rabenseifner runs basic_linear when count (%llu) < pof2(p) (%ld)", count,
                     pof2_floor(p));
            return "basic_linear";
        }
        return a;
    }
    if (pt->coll == CG_COLL_ALLGATHER) {
        if (strcmp(alg, "recursive_doubling") == 0 && !is_pof2(p)) {
            bench_fmt(why, whylen, "recursive_doubling runs bruck when p (%d) is not a power of two",
                     p);
            return "bruck";
        }
        if (strcmp(alg, "neighbor") == 0 && (p % 2) != 0) {
            bench_fmt(why, whylen, "neighbor runs ring when p (%d) is odd", p);
            return "ring";
        }
        return alg;
    }
    if (pt->coll == CG_COLL_BCAST) {
        if ((strcmp(alg, "scatter_allgather") == 0 || strcmp(alg, "scatter_allgather_ring") == 0) &&
            count < (unsigned long long)p) {
            bench_fmt(why, whylen, "%s runs basic_linear when count (%llu) < p (%d)", alg, count, p);
            return "basic_linear";
        }
        /* Halves of ceil(count / 2) and floor(count / 2) elements; an empty
         * half, or one shorter than a segment, runs the chain instead. */
        if (strcmp(alg, "split_binary_tree") == 0 &&
            (count < 2 || (segsize > 0 && (unsigned long long)segsize > (count / 2) * typelng))) {
            bench_fmt(why, whylen,
                      "split_binary_tree runs chain when a half (%llu elements) is empty or "
                      "shorter than a segment (coll_tuned_bcast_algorithm_segmentsize = %lld)",
                      count / 2, segsize);
            return "chain";
        }
    }
    if (pt->coll == CG_COLL_REDUCE) {
        if (strcmp(alg, "rabenseifner") == 0 &&
            (p < 2 || count < (unsigned long long)pof2_floor(p))) {
            bench_fmt(why, whylen,
                      "rabenseifner runs linear (basic_linear) when count (%llu) < pof2(p) (%ld)",
                      count, pof2_floor(p));
            return "linear";
        }
    }
    if (pt->coll == CG_COLL_ALLTOALL && pt->in_place) {
        bench_fmt(why, whylen,
                  "%s runs basic_inplace (mca_coll_base_alltoall_intra_basic_inplace) in place",
                  alg);
        return "basic_inplace";
    }
    return alg;
}

/* ---- effective algorithm ------------------------------------------------------ */

static void set_str(char *dst, size_t len, const char *src)
{
    bench_fmt(dst, len, "%s", (src != NULL) ? src : "");
}

/* Open MPI: coll "tuned" is the component that honours the forcing; a
 * `coll` selection that leaves it out makes the forcing meaningless. */
static int ompi_tuned_excluded(const struct bench_ctx *ctx)
{
    struct cvar sel;

    cvar_get(ctx, "coll", &sel);
    if (!sel.found || sel.text[0] == '\0') {
        return 0;
    }
    if (sel.text[0] == '^') {
        return strstr(sel.text, "tuned") != NULL;
    }
    return strstr(sel.text, "tuned") == NULL;
}

static void ompi_effective(const struct bench_ctx *ctx, const struct bench_point *pt,
                           struct bench_effective *eff)
{
    const char *coll = cg_coll_name(pt->coll);
    char name[128];
    struct cvar dyn, alg, seg;
    int requested_forced = strcmp(pt->name, "default") != 0;

    bench_fmt(name, sizeof(name), "coll_tuned_%s_algorithm", coll);
    cvar_get(ctx, "coll_tuned_use_dynamic_rules", &dyn);
    cvar_get(ctx, name, &alg);
    if (!dyn.found || !alg.found) {
        eff->source = "unobservable";
        bench_fmt(eff->forced_by, sizeof(eff->forced_by),
                 "coll_tuned_use_dynamic_rules or %s not readable through MPI_T", name);
        return;
    }
    if (ompi_tuned_excluded(ctx)) {
        eff->source = "unobservable";
        set_str(eff->forced_by, sizeof(eff->forced_by),
                "the coll selection leaves out coll/tuned, which is what honours the forcing");
        return;
    }
    eff->source = "mpi_t";
    if (!dyn.ival || alg.ival == 0) {
        if (requested_forced && !dyn.ival) {
            set_str(eff->algorithm, sizeof(eff->algorithm),
                    "default (forcing ignored: coll_tuned_use_dynamic_rules is not 1)");
        } else {
            set_str(eff->algorithm, sizeof(eff->algorithm), "default");
        }
        if (requested_forced) {
            bench_fmt(eff->forced_by, sizeof(eff->forced_by),
                     "read through MPI_T: coll_tuned_use_dynamic_rules=%s, %s=%s", dyn.text, name,
                     alg.text);
        }
        return;
    }
    if (alg.is_enum) {
        const char *ran;
        char why[320];
        char segname[160];
        bench_fmt(segname, sizeof(segname), "coll_tuned_%s_algorithm_segmentsize", coll);
        cvar_get(ctx, segname, &seg);
        ran = ompi_fallback(pt, alg.text, ctx->p, seg.found ? seg.ival : 0, why, sizeof(why));
        set_str(eff->algorithm, sizeof(eff->algorithm), ran);
        if (ran != alg.text) {
            eff->source = "known_fallback";
            bench_fmt(eff->forced_by, sizeof(eff->forced_by),
                     "read through MPI_T: %s=%s; Open MPI 4.1 coll/tuned: %s", name, alg.text, why);
            return;
        }
    } else {
        bench_fmt(eff->algorithm, sizeof(eff->algorithm), "%s", alg.text);
    }
    if (!requested_forced || strcmp(eff->algorithm, pt->name) != 0) {
        bench_fmt(eff->forced_by, sizeof(eff->forced_by),
                 "read through MPI_T: coll_tuned_use_dynamic_rules=%s, %s=%s", dyn.text, name,
                 alg.text);
    }
}

static void upper(char *dst, size_t len, const char *src)
{
    size_t i = 0;
    for (; src[i] != '\0' && i + 1 < len; i++) {
        dst[i] = (char)toupper((unsigned char)src[i]);
    }
    dst[i] = '\0';
}

static void mpich_effective(const struct bench_ctx *ctx, const struct bench_point *pt,
                            struct bench_effective *eff)
{
    char coll[64];
    char name[160];
    char devname[160];
    struct cvar alg, dev, per, fb;
    int requested_forced = strcmp(pt->name, "default") != 0;
    int device_may_choose;

    upper(coll, sizeof(coll), cg_coll_name(pt->coll));
    bench_fmt(name, sizeof(name), "MPIR_CVAR_%s_INTRA_ALGORITHM", coll);
    bench_fmt(devname, sizeof(devname), "MPIR_CVAR_%s_DEVICE_COLLECTIVE", coll);
    cvar_get(ctx, name, &alg);
    if (!alg.found) {
        eff->source = "unobservable";
        bench_fmt(eff->forced_by, sizeof(eff->forced_by), "%s not readable through MPI_T", name);
        return;
    }
    if (alg.ival == 0) {
        eff->source = "mpi_t";
        set_str(eff->algorithm, sizeof(eff->algorithm), "default");
        if (requested_forced) {
            bench_fmt(eff->forced_by, sizeof(eff->forced_by), "read through MPI_T: %s=%s", name,
                     alg.text);
        }
        return;
    }
    cvar_get(ctx, "MPIR_CVAR_DEVICE_COLLECTIVES", &dev);
    cvar_get(ctx, devname, &per);
    cvar_get(ctx, "MPIR_CVAR_COLLECTIVE_FALLBACK", &fb);
    device_may_choose = !dev.found || strcmp(dev.text, "all") == 0 ||
                        (strcmp(dev.text, "percoll") == 0 && (!per.found || per.ival != 0));
    if (device_may_choose || !fb.found || strcmp(fb.text, "error") != 0) {
        eff->source = "unobservable";
        bench_fmt(eff->forced_by, sizeof(eff->forced_by),
                 "read through MPI_T: %s=%s, but MPIR_CVAR_DEVICE_COLLECTIVES=%s, %s=%s, "
                 "MPIR_CVAR_COLLECTIVE_FALLBACK=%s: %s",
                 name, alg.text, dev.found ? dev.text : "?", devname, per.found ? per.text : "?",
                 fb.found ? fb.text : "?",
                 device_may_choose
                     ? "the ch4 device may run its own algorithm (set the per-collective "
                       "DEVICE_COLLECTIVE to 0 to observe the forced one)"
                 : (fb.found && strcmp(fb.text, "print") == 0)
                     ? "an algorithm that does not fit falls back, and MPICH says so only on "
                       "stderr (the job's log: \"User set collective algorithm is not usable "
                       "for the provided arguments\"), which names no call"
                     : "an algorithm that does not fit falls back silently (set "
                       "MPIR_CVAR_COLLECTIVE_FALLBACK=error)");
        return;
    }
    eff->source = "mpi_t";
    set_str(eff->algorithm, sizeof(eff->algorithm), alg.text);
    if (!requested_forced || strcmp(alg.text, pt->name) != 0) {
        bench_fmt(eff->forced_by, sizeof(eff->forced_by), "read through MPI_T: %s=%s", name,
                 alg.text);
    }
}

void bench_effective_for(const struct bench_ctx *ctx, const struct bench_point *pt,
                         struct bench_effective *eff)
{
    const char *req_forced_by = ctx->job->knobs_forced_by;

    memset(eff, 0, sizeof(*eff));
    eff->knobs = observe_knobs(ctx);
    if (pt->kind == BENCH_BOUND) {
        /* The harness's own point-to-point code: what ran is what it is. */
        eff->source = "bound";
        set_str(eff->algorithm, sizeof(eff->algorithm), pt->name);
        set_str(eff->forced_by, sizeof(eff->forced_by), req_forced_by);
    } else if (pt->kind == BENCH_MICRO) {
        /* The harness's own pattern, or the library's default collective
         * on the lanes (no knob is forced in their jobs). */
        eff->source = "micro";
        set_str(eff->algorithm, sizeof(eff->algorithm), pt->name);
        set_str(eff->forced_by, sizeof(eff->forced_by), req_forced_by);
    } else if (pt->kind == BENCH_GENERATED) {
        eff->source = pt->baseline ? "baseline" : "generated";
        set_str(eff->algorithm, sizeof(eff->algorithm), pt->name);
        set_str(eff->forced_by, sizeof(eff->forced_by), req_forced_by);
    } else if (!ctx->mpit_ok) {
        eff->source = "unobservable";
        set_str(eff->forced_by, sizeof(eff->forced_by), "MPI_T_init_thread failed");
    } else if (ctx->is_openmpi) {
        ompi_effective(ctx, pt, eff);
    } else if (ctx->is_mpich) {
        mpich_effective(ctx, pt, eff);
    } else {
        eff->source = "unobservable";
        set_str(eff->forced_by, sizeof(eff->forced_by),
                "no way known to read this library's algorithm selection");
    }
    /* What ran is what was asked, and nothing in the library says
     * otherwise: how it was forced is as requested. */
    if (eff->forced_by[0] == '\0' && eff->algorithm[0] != '\0' &&
        strcmp(eff->algorithm, pt->name) == 0) {
        set_str(eff->forced_by, sizeof(eff->forced_by), req_forced_by);
    }
}

/* ---- forcing an algorithm at run time (a point's own knobs) -------------------- */

/* The integer `text` names for the control variable at `index`: a decimal,
 * true/false, an item of its MPI_T enum, or a name of the MPICH tables
 * above (checked against the variable's description). 0 or -1 with why. */
static int cvar_value_of(const char *cname, int index, MPI_T_enum en, const char *text,
                         long long *v, char *why, size_t len)
{
    char *end = NULL;
    char name[256];
    char desc[4096];
    int namelen = (int)sizeof(name);
    int desclen = (int)sizeof(desc);
    int verbosity, bind, scope;
    MPI_Datatype dt;
    MPI_T_enum en2;

    *v = strtoll(text, &end, 10);
    if (end != text && *end == '\0') {
        return 0;
    }
    if (strcasecmp(text, "true") == 0 || strcasecmp(text, "false") == 0) {
        *v = (strcasecmp(text, "true") == 0);
        return 0;
    }
    if (en != MPI_T_ENUM_NULL) {
        int nitems = 0;
        char ename[128];
        int enamelen = (int)sizeof(ename);
        if (MPI_T_enum_get_info(en, &nitems, ename, &enamelen) == MPI_SUCCESS) {
            for (int i = 0; i < nitems; i++) {
                int value = 0;
                char iname[128];
                int inamelen = (int)sizeof(iname);
                if (MPI_T_enum_get_item(en, i, &value, iname, &inamelen) == MPI_SUCCESS &&
                    strcmp(iname, text) == 0) {
                    *v = value;
                    return 0;
                }
            }
        }
    }
    for (size_t t = 0; t < sizeof(mpich_tables) / sizeof(mpich_tables[0]); t++) {
        const struct mpich_names *tab = &mpich_tables[t];
        if (strcmp(tab->cvar, cname) != 0) {
            continue;
        }
        if (MPI_T_cvar_get_info(index, name, &namelen, &verbosity, &dt, &en2, desc, &desclen,
                                &bind, &scope) != MPI_SUCCESS ||
            !mpich_desc_matches(desc, tab->names)) {
            bench_fmt(why, len, "%s: this MPICH's list of values differs from bench's table",
                      cname);
            return -1;
        }
        for (long long n = 0; tab->names[n] != NULL; n++) {
            if (strcmp(tab->names[n], text) == 0) {
                *v = n;
                return 0;
            }
        }
    }
    bench_fmt(why, len, "%s: \"%s\" is not a value bench can write (a number, true/false, or "
                        "a name the library lists)", cname, text);
    return -1;
}

/* Reads (to old) and writes (from v, unless old_only) an integer control
 * variable whose MPI_T type is dt. */
static int cvar_swap(MPI_T_cvar_handle h, MPI_Datatype dt, long long v, long long *old)
{
    unsigned char buf[CVAR_BUF];
    int size = 0;
    int rc;

    if (dt == MPI_C_BOOL) {
        size = 1;
    } else if (MPI_Type_size(dt, &size) != MPI_SUCCESS || (size != 4 && size != 8)) {
        return MPI_T_ERR_INVALID;
    }
    memset(buf, 0, sizeof(buf));
    if ((rc = MPI_T_cvar_read(h, buf)) != MPI_SUCCESS) {
        return rc;
    }
    if (size == 1) {
        *old = buf[0];
        buf[0] = (unsigned char)(v != 0);
    } else if (size == 4) {
        int32_t x;
        memcpy(&x, buf, 4);
        *old = x;
        x = (int32_t)v;
        memcpy(buf, &x, 4);
    } else {
        int64_t x;
        memcpy(&x, buf, 8);
        *old = x;
        x = (int64_t)v;
        memcpy(buf, &x, 8);
    }
    return MPI_T_cvar_write(h, buf);
}

int bench_force_begin(struct bench_ctx *ctx, const struct bench_point *pt,
                      struct bench_force *f, char *why, size_t len)
{
    const cJSON *env = cJSON_GetObjectItemCaseSensitive(pt->knobs, "env");

    memset(f, 0, sizeof(*f));
    f->comm = MPI_COMM_NULL;
    if (!ctx->mpit_ok) {
        bench_fmt(why, len, "MPI_T_init_thread failed: nothing can be forced at run time");
        return -1;
    }
    for (const cJSON *e = pt->mpit->child; e != NULL; e = e->next) {
        const char *key = e->valuestring;
        const char *text = cJSON_GetObjectItemCaseSensitive(env, key)->valuestring;
        const char *cname = cvar_of_env(ctx, key);
        char name[256];
        char desc[16];
        int namelen = (int)sizeof(name);
        int desclen = (int)sizeof(desc);
        int index = -1, verbosity, bind, scope, count = 0, rc;
        MPI_Datatype dt;
        MPI_T_enum en;
        long long v = 0;

        if (f->n == BENCH_MAX_FORCE) {
            bench_fmt(why, len, "more than %d variables to write", BENCH_MAX_FORCE);
            return -1;
        }
        if (cname == NULL || MPI_T_cvar_get_index(cname, &index) != MPI_SUCCESS ||
            MPI_T_cvar_get_info(index, name, &namelen, &verbosity, &dt, &en, desc, &desclen,
                                &bind, &scope) != MPI_SUCCESS) {
            bench_fmt(why, len, "%s is not a control variable of this library", key);
            return -1;
        }
        if (bind != MPI_T_BIND_NO_OBJECT) {
            bench_fmt(why, len, "%s is bound to an MPI object: bench writes only global ones",
                      cname);
            return -1;
        }
        if (cvar_value_of(cname, index, en, text, &v, why, len) != 0) {
            return -1;
        }
        if (MPI_T_cvar_handle_alloc(index, NULL, &f->h[f->n], &count) != MPI_SUCCESS ||
            count != 1) {
            bench_fmt(why, len, "%s: no MPI_T handle for one value", cname);
            return -1;
        }
        f->dt[f->n] = dt;
        rc = cvar_swap(f->h[f->n], dt, v, &f->old[f->n]);
        f->n++;
        if (rc != MPI_SUCCESS) {
            bench_fmt(why, len, "%s=%s: MPI_T_cvar_write refused it (error %d%s)", cname, text, rc,
                      (scope == MPI_T_SCOPE_CONSTANT || scope == MPI_T_SCOPE_READONLY)
                          ? ": the variable cannot change after MPI_Init; the platform should list "
                            "it in algorithm_at_run_time.launch_env"
                          : "");
            return -1;
        }
    }
    return 0;
}

int bench_force_comm(struct bench_ctx *ctx, struct bench_force *f, char *why, size_t len)
{
    /* Why a new communicator: Open MPI's coll/tuned reads the forced
     * algorithm when a communicator is created; ctx->comm keeps what it
     * was created with. */
    int rc = MPI_Comm_dup(MPI_COMM_WORLD, &f->comm);
    if (rc == MPI_SUCCESS) {
        rc = MPI_Comm_set_errhandler(f->comm, MPI_ERRORS_RETURN);
    }
    if (rc != MPI_SUCCESS) {
        bench_fmt(why, len, "MPI_Comm_dup after the write failed (error %d)", rc);
        return -1;
    }
    f->saved_comm = ctx->comm;
    ctx->comm = f->comm;
    return 0;
}

void bench_force_end(struct bench_ctx *ctx, struct bench_force *f)
{
    if (f->comm != MPI_COMM_NULL) {
        ctx->comm = f->saved_comm;
        MPI_Comm_free(&f->comm);
    }
    /* In reverse: each variable gets back what it held before. */
    for (int i = f->n - 1; i >= 0; i--) {
        long long ignored = 0;
        (void)cvar_swap(f->h[i], f->dt[i], f->old[i], &ignored);
        MPI_T_cvar_handle_free(&f->h[i]);
    }
    f->n = 0;
}
