/* tune.c - collgen tune CAMPAIGN [--out DIR]: the campaign's records read
 * as collgen report reads them (report_data.c), the guideline profile as
 * collgen report writes it (report_guideline.c), the dispatcher
 * (tune_tree.c) and its exports (tune_export.c), written into DIR (default
 * CAMPAIGN/tune) as FILE.tmp and renamed into place only once all are
 * written (tune.h).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "report_guideline.h"
#include "report_util.h"
#include "cli.h"
#include "tune.h"

static const char tune_usage[] =
    "usage: collgen tune CAMPAIGN [--out DIR] [OPTIONS]\n"
    "  From a campaign's records (results/<campaign>/points.jsonl) writes into DIR\n"
    "  (default CAMPAIGN/tune): profile.json (the guideline profile, as collgen report),\n"
    "  selection-<library>.json (the dispatcher's rules, for libcgtune.so),\n"
    "  dispatcher.txt, dispatcher.md, dispatcher.json (the model and its held-out\n"
    "  accuracy and regret), and where the rules allow: openmpi-coll_tuned.rules,\n"
    "  mpich-csel.json, nccl-tuner.csv (harness/README.md, \"collgen tune\").\n"
    "  --out DIR          where to write (created; one level)\n"
    "  --seed N           the held-out split's seed (default 20261203)\n"
    "  --max-depth N      of each tree (default 4)\n"
    "  --min-leaf N       training cells a leaf holds at least (default 1)\n"
    "  --min-gain X       a split must lower the summed log regret by more (default 0.05)\n"
    "  --max-launch-skew X  a record from a launch whose transport (roofline p2p) was more\n"
    "                     than X times faster than the native default's launch never\n"
    "                     counts (default 1.5; 0: no check)\n"
    "  --switchable-only  only candidates libcgtune can run per call (generated\n"
    "                     schedules, baselines, the native default): a selection\n"
    "                     for libcgtune, no library export\n"
    "  --ppn-node N       ranks per node of the machine the Open MPI and MPICH exports\n"
    "                     are for (default: the campaign's largest ranks per node)\n"
    "  --mpich-base FILE  MPICH's own MPIR-level CSEL JSON (default: read from\n"
    "                     libmpich.so.12, or $CG_MPICH_LIB)\n"
    "  -q, --quiet        print nothing on success\n";

struct tune_opts {
    const char *dir, *out, *mpich_base;
    struct cg_tune_opts t;
    int ppn_node, quiet;
};

static int parse_int(const char *opt, const char *v, long lo, long hi, long *out)
{
    char *end = NULL;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (end == v || *end != '\0' || errno != 0 || x < lo || x > hi) {
        fprintf(stderr, "collgen tune: error: %s '%s' is not an integer in %ld..%ld\n", opt, v,
                lo, hi);
        return -1;
    }
    *out = x;
    return 0;
}

/* 0 run, 1 help printed, -1 bad arguments. */
static int parse_args(int argc, char **argv, struct tune_opts *o)
{
    static const struct option longs[] = {
        {"out", required_argument, NULL, 'o'},      {"seed", required_argument, NULL, 's'},
        {"max-depth", required_argument, NULL, 'd'}, {"min-gain", required_argument, NULL, 'g'},
        {"min-leaf", required_argument, NULL, 'l'}, {"max-launch-skew", required_argument, NULL, 'k'},
        {"switchable-only", no_argument, NULL, 'w'},
        {"ppn-node", required_argument, NULL, 'n'}, {"mpich-base", required_argument, NULL, 'b'},
        {"quiet", no_argument, NULL, 'q'},          {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    memset(o, 0, sizeof *o);
    o->t.seed = 20261203;
    o->t.max_depth = 4;
    o->t.min_leaf = 1;
    o->t.min_gain = 0.05;
    o->t.max_skew = 1.5;
    optind = 0;
    opterr = 0;
    int ch;
    long v;
    while ((ch = getopt_long(argc, argv, ":qh", longs, NULL)) != -1) {
        switch (ch) {
        case 'o':
            o->out = optarg;
            break;
        case 's': {
            char *end = NULL;
            errno = 0;
            unsigned long long s = strtoull(optarg, &end, 10);
            if (end == optarg || *end != '\0' || errno != 0 || optarg[0] == '-') {
                fprintf(stderr, "collgen tune: error: --seed '%s' is not a whole number\n",
                        optarg);
                return -1;
            }
            o->t.seed = s;
            break;
        }
        case 'd':
            if (parse_int("--max-depth", optarg, 0, 16, &v) != 0) {
                return -1;
            }
            o->t.max_depth = (int)v;
            break;
        case 'l':
            if (parse_int("--min-leaf", optarg, 1, 1000000, &v) != 0) {
                return -1;
            }
            o->t.min_leaf = (int)v;
            break;
        case 'g': {
            char *end = NULL;
            errno = 0;
            double g = strtod(optarg, &end);
            if (end == optarg || *end != '\0' || errno != 0 || !(g >= 0.0)) {
                fprintf(stderr, "collgen tune: error: --min-gain '%s' is not a number >= 0\n",
                        optarg);
                return -1;
            }
            o->t.min_gain = g;
            break;
        }
        case 'k': {
            char *end = NULL;
            errno = 0;
            double k = strtod(optarg, &end);
            if (end == optarg || *end != '\0' || errno != 0 || !(k == 0.0 || k >= 1.0)) {
                fprintf(stderr,
                        "collgen tune: error: --max-launch-skew '%s' is not 0 or a number >= 1\n",
                        optarg);
                return -1;
            }
            o->t.max_skew = k;
            break;
        }
        case 'w':
            o->t.switchable_only = 1;
            break;
        case 'n':
            if (parse_int("--ppn-node", optarg, 1, 1 << 20, &v) != 0) {
                return -1;
            }
            o->ppn_node = (int)v;
            break;
        case 'b':
            o->mpich_base = optarg;
            break;
        case 'q':
            o->quiet = 1;
            break;
        case 'h':
            fputs(tune_usage, stdout);
            return 1;
        default:
            (void)cg_cli_bad_option("collgen tune", ch, argv);
            return -1;
        }
    }
    if (optind != argc - 1) {
        fprintf(stderr, "collgen tune: error: give one campaign directory\n%s", tune_usage);
        return -1;
    }
    o->dir = argv[optind];
    return 0;
}

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        return NULL;
    }
    size_t cap = 1 << 16, n = 0;
    char *s = malloc(cap);
    while (s != NULL) {
        if (n + 1 >= cap) {
            char *w = realloc(s, cap *= 2);
            if (w == NULL) {
                free(s);
                s = NULL;
                break;
            }
            s = w;
        }
        size_t r = fread(s + n, 1, cap - n - 1, f);
        if (r == 0) {
            break;
        }
        n += r;
    }
    fclose(f);
    if (s != NULL) {
        s[n] = '\0';
        *len = n;
    }
    return s;
}

/* MPICH's MPIR-level selection as the library carries it: a NUL-ended
 * string that starts {"collective= and names MPIR_ algorithms (the ch4 and
 * posix ones name compositions and MPIDI_ functions). malloc'd, NULL when
 * not found (*where says where it looked). */
static char *mpich_base_from_lib(char *where, size_t nwhere)
{
    const char *env = getenv("CG_MPICH_LIB");
    const char *libs[] = {env, "/usr/lib/x86_64-linux-gnu/libmpich.so.12",
                          "/usr/lib/aarch64-linux-gnu/libmpich.so.12", "/usr/lib64/libmpich.so.12",
                          "/usr/lib/libmpich.so.12"};
    where[0] = '\0';
    for (size_t i = 0; i < sizeof libs / sizeof libs[0]; i++) {
        if (libs[i] == NULL || libs[i][0] == '\0') {
            continue;
        }
        size_t used = strlen(where);
        snprintf(where + used, nwhere - used, "%s%s", used > 0 ? ", " : "", libs[i]);
        size_t len = 0;
        char *s = slurp(libs[i], &len);
        if (s == NULL) {
            continue;
        }
        static const char start[] = "{\"collective=";
        for (char *p = s; p < s + len;) {
            /* Why not memmem: it is a GNU extension; the library's text is
             * NUL-separated, so strstr over each string finds it too. */
            char *q = strstr(p, start);
            if (q == NULL) {
                p += strlen(p) + 1;
                continue;
            }
            size_t n = strnlen(q, (size_t)(s + len - q));
            char *one = strndup(q, n);
            if (one != NULL && strstr(one, "\"algorithm=MPIR_") != NULL) {
                free(s);
                return one;
            }
            free(one);
            p = q + n + 1;
        }
        free(s);
    }
    return NULL;
}

/* One output file: written to tmp, renamed to path at the end. */
struct output {
    char *path, *tmp;
    char *text; /* owned */
};

static int write_tmp(struct output *out)
{
    FILE *f = fopen(out->tmp, "w");
    if (f == NULL) {
        fprintf(stderr, "%s: error: cannot write: %s\n", out->tmp, strerror(errno));
        return -1;
    }
    size_t len = strlen(out->text);
    int ok = (fwrite(out->text, 1, len, f) == len);
    if (fclose(f) != 0) {
        ok = 0;
    }
    if (!ok) {
        fprintf(stderr, "%s: error: cannot write\n", out->tmp);
        remove(out->tmp);
        return -1;
    }
    return 0;
}

static const char *basename_of(const char *dir)
{
    const char *b = strrchr(dir, '/');
    return (b != NULL) ? b + 1 : dir;
}

int cg_tune_main(int argc, char **argv)
{
    struct tune_opts o;
    int rc = parse_args(argc, argv, &o);
    if (rc != 0) {
        return (rc == 1) ? 0 : 2;
    }
    char *dir = strdup(o.dir);
    if (dir == NULL) {
        fprintf(stderr, "collgen tune: out of memory\n");
        return 1;
    }
    for (size_t n = strlen(dir); n > 1 && dir[n - 1] == '/'; n--) {
        dir[n - 1] = '\0';
    }
    struct stat st;
    int st_rc = stat(dir, &st);
    if (st_rc != 0 || !S_ISDIR(st.st_mode)) {
        fprintf(stderr, "%s: error: not a campaign directory: %s\n", dir,
                (st_rc != 0) ? strerror(errno) : "not a directory");
        free(dir);
        return 2;
    }

    struct cg_rep_campaign c;
    struct cg_rep_mockups mockups;
    struct cg_tune t;
    struct output outs[16];
    size_t nouts = 0;
    char *out = NULL, *points = NULL, *base = NULL;
    memset(&mockups, 0, sizeof mockups);
    memset(&t, 0, sizeof t);
    int have_mockups = 0, have_tune = 0;
    rc = cg_rep_load(&c, dir, stderr);
    if (rc != 0) {
        if (rc == 1) {
            fprintf(stderr, "collgen tune: out of memory\n");
        }
        goto done;
    }
    rc = 1;
    if (c.nrecs == 0) {
        fprintf(stderr, "%s/points.jsonl: error: empty campaign: no records to tune from\n",
                dir);
        rc = 2;
        goto done;
    }
    if (cg_rep_merge_launches(&c) != 0 || cg_rep_mockups_find(&mockups, &c) != 0) {
        goto oom;
    }
    have_mockups = 1;
    int trc = cg_tune_build(&t, &c, &o.t, stderr);
    have_tune = 1;
    if (trc == -1) {
        goto oom;
    }
    if (trc != 0) {
        rc = 2;
        goto done;
    }
    int ppn_node = o.ppn_node;
    if (ppn_node == 0) {
        for (size_t i = 0; i < t.ngroups; i++) {
            for (size_t k = 0; k < t.groups[i].ncells; k++) {
                if (t.groups[i].cells[k].ppn > ppn_node) {
                    ppn_node = t.groups[i].cells[k].ppn;
                }
            }
        }
    }

    /* The campaign's hash: FNV-1a 64 of points.jsonl as read. */
    char *ppath = cg_rep_strf("%s/points.jsonl", dir);
    size_t plen = 0;
    if (ppath == NULL || (points = slurp(ppath, &plen)) == NULL) {
        free(ppath);
        goto oom;
    }
    free(ppath);
    uint64_t h = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < plen; i++) {
        h = (h ^ (unsigned char)points[i]) * 0x100000001b3ULL;
    }
    char hash[17];
    snprintf(hash, sizeof hash, "%016llx", (unsigned long long)h);

    out = (o.out != NULL) ? strdup(o.out) : cg_rep_strf("%s/tune", dir);
    if (out == NULL) {
        goto oom;
    }

    /* Every text first. */
#define ADD(name, expr)                                                                      \
    do {                                                                                     \
        outs[nouts].text = (expr);                                                           \
        if (outs[nouts].text == NULL) {                                                      \
            goto oom;                                                                        \
        }                                                                                    \
        outs[nouts].path = cg_rep_strf("%s/%s", out, (name));                                \
        outs[nouts].tmp = cg_rep_strf("%s/%s.tmp", out, (name));                             \
        nouts++;                                                                             \
        if (outs[nouts - 1].path == NULL || outs[nouts - 1].tmp == NULL) {                   \
            goto oom;                                                                        \
        }                                                                                    \
    } while (0)
    ADD("profile.json", cg_rep_profile_json(&c, &mockups));
    {
        struct cg_rep_doc d;
        cg_rep_doc_init(&d);
        if (cg_tune_build_doc(&d, &t) != 0) {
            cg_rep_doc_fini(&d);
            goto oom;
        }
        outs[nouts].text = NULL;
        ADD("dispatcher.txt", cg_rep_render_text(&d));
        ADD("dispatcher.md", cg_rep_render_markdown(&d));
        cg_rep_doc_fini(&d);
    }
    ADD("dispatcher.json", cg_tune_dispatcher_json(&t));
    char notes[2048] = "";
    for (size_t i = 0; i < t.ngroups; i++) {
        int seen = 0;
        for (size_t k = 0; k < i; k++) {
            seen |= (strcmp(t.groups[k].library, t.groups[i].library) == 0);
        }
        if (!seen) {
            char name[160];
            snprintf(name, sizeof name, "selection-%s.json", t.groups[i].library);
            ADD(name, cg_tune_selection_json(&t, t.groups[i].library, basename_of(dir), hash));
        }
    }
    int none = 0;
    char *text = cg_tune_ompi_rules(&t, ppn_node, &none);
    if (text == NULL) {
        goto oom;
    }
    if (!none) {
        ADD("openmpi-coll_tuned.rules", text);
    } else {
        free(text);
        strcat(notes, "  openmpi-coll_tuned.rules: not written (no Open MPI rule names a forced "
                      "native algorithm)\n");
    }
    int wants_mpich = 0;
    for (size_t i = 0; i < t.ngroups; i++) {
        wants_mpich |= (strcmp(t.groups[i].library, "mpich") == 0);
    }
    if (wants_mpich) {
        char where[512] = "";
        if (o.mpich_base != NULL) {
            size_t blen;
            base = slurp(o.mpich_base, &blen);
            if (base == NULL) {
                fprintf(stderr, "%s: error: cannot read --mpich-base: %s\n", o.mpich_base,
                        strerror(errno));
                rc = 2;
                goto done;
            }
        } else {
            base = mpich_base_from_lib(where, sizeof where);
        }
        if (base == NULL) {
            snprintf(notes + strlen(notes), sizeof notes - strlen(notes),
                     "  mpich-csel.json: not written (MPICH's own selection not found in %s; "
                     "give --mpich-base)\n",
                     where);
        } else {
            char why[256] = "";
            text = cg_tune_mpich_csel(&t, base, ppn_node, &none, why, sizeof why);
            if (text == NULL) {
                goto oom;
            }
            if (!none) {
                ADD("mpich-csel.json", text);
            } else {
                free(text);
                snprintf(notes + strlen(notes), sizeof notes - strlen(notes),
                         "  mpich-csel.json: not written (%s)\n", why);
            }
        }
    }
    text = cg_tune_nccl_csv(&t, &none);
    if (text == NULL) {
        goto oom;
    }
    if (!none) {
        ADD("nccl-tuner.csv", text);
    } else {
        free(text);
        strcat(notes, "  nccl-tuner.csv: not written (no NCCL rule names a native algorithm)\n");
    }
#undef ADD

    /* Then the files. */
    if (mkdir(out, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "%s: error: cannot create: %s\n", out, strerror(errno));
        rc = 2;
        goto done;
    }
    for (size_t i = 0; i < nouts; i++) {
        if (write_tmp(&outs[i]) != 0) {
            for (size_t k = 0; k < i; k++) {
                remove(outs[k].tmp);
            }
            rc = 1;
            goto done;
        }
    }
    for (size_t i = 0; i < nouts; i++) {
        if (rename(outs[i].tmp, outs[i].path) != 0) {
            fprintf(stderr, "%s: error: cannot rename to %s: %s\n", outs[i].tmp, outs[i].path,
                    strerror(errno));
            rc = 1;
            goto done;
        }
    }
    /* An export not made this time must not be left from an earlier run:
     * it would no longer be this campaign's. */
    static const char *const optional[] = {"openmpi-coll_tuned.rules", "mpich-csel.json",
                                           "nccl-tuner.csv"};
    for (size_t k = 0; k < sizeof optional / sizeof optional[0]; k++) {
        int made = 0;
        for (size_t i = 0; i < nouts; i++) {
            const char *b = strrchr(outs[i].path, '/');
            made |= (strcmp(b != NULL ? b + 1 : outs[i].path, optional[k]) == 0);
        }
        if (!made) {
            char *stale = cg_rep_strf("%s/%s", out, optional[k]);
            if (stale != NULL) {
                remove(stale);
            }
            free(stale);
        }
    }
    if (!o.quiet) {
        fputs(outs[1].text, stdout);
        printf("\ncollgen tune: wrote");
        for (size_t i = 0; i < nouts; i++) {
            printf(" %s", outs[i].path);
        }
        printf("\n%s", notes);
    }
    rc = 0;
    goto done;
oom:
    fprintf(stderr, "collgen tune: out of memory\n");
    rc = 1;
done:
    for (size_t i = 0; i < nouts; i++) {
        free(outs[i].text);
        free(outs[i].path);
        free(outs[i].tmp);
    }
    if (have_tune) {
        cg_tune_fini(&t);
    }
    if (have_mockups) {
        cg_rep_mockups_fini(&mockups);
    }
    cg_rep_campaign_fini(&c);
    free(points);
    free(base);
    free(out);
    free(dir);
    return rc;
}
