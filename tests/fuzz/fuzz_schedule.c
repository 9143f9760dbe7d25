/* fuzz_schedule.c - libFuzzer target: one schedule's text through the
 * generator's passes, as `collgen emit` runs them: parse, check, (resolve),
 * verify for p = 1..6 and every root, analyse at p = 4, emit the MPI and,
 * where it has one, the CUDA file.
 *
 * Everything a schedule may do wrong must end in a located error: a crash,
 * a sanitizer report, a cg_panic (exit 70, which libFuzzer reports as the
 * target exiting) or work without bound (-timeout) is a finding.
 *
 * Calls with "use" naming a generated schedule and topology fallbacks are
 * resolved as `collgen` resolves them (gen/resolve.c), against the library
 * under schedules/ (run from the repository root, as tests/run_fuzz.sh does):
 * a callee or fallback that does not fit is a located error too.
 *
 * Build and run: tests/run_fuzz.sh (tests/fuzz/README.md).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../gen/load.h"
#include "../../gen/passes.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

static char out_dir[64];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    snprintf(out_dir, sizeof(out_dir), "/tmp/cg-fuzz-emit.XXXXXX");
    if (mkdtemp(out_dir) == NULL) {
        perror("mkdtemp");
        exit(1);
    }
    const char *subs[] = { "mpi", "cuda" };
    for (int i = 0; i < 2; i++) {
        char sub[96];
        snprintf(sub, sizeof(sub), "%s/%s", out_dir, subs[i]);
        if (mkdir(sub, 0700) != 0) {
            perror(sub);
            exit(1);
        }
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    /* cJSON reads the terminating NUL (runtime/util/json.c). */
    char *text = malloc(size + 1);
    if (text == NULL) {
        return 0;
    }
    memcpy(text, data, size);
    text[size] = '\0';
    FILE *null = fopen("/dev/null", "w");
    struct cg_options opt;
    cg_options_init(&opt);
    opt.np = 0;
    for (int p = 1; p <= 6; p++) {
        opt.p_list[opt.np++] = p;
    }
    opt.out_dir = out_dir;
    opt.quiet = 1;
    opt.max_work = 20000000; /* about 0.1 s: the budget itself is what is tested */
    struct cg_gen g = { &opt, { 0 } };
    cg_diag_init(&g.diag, null);
    struct cg_arena arena = { 0 };
    struct cg_set set;
    cg_set_init(&set);
    struct cg_schedule s;
    if (cg_parse_text(&g, &arena, "fuzz.json", text, size, &s) == 0 &&
        cg_check(&g, &arena, &s) == 0 && cg_resolve(&g, &set, &s) == 0 &&
        cg_verify(&g, &s, NULL) == 0) {
        struct cg_model model;
        cg_model_init(&model);
        struct cg_analysis a;
        cg_analyse(&g, &s, 4, 0, 1000, 8, &model, null, 1, "", &a);
        cg_emit_mpi(&g, &s);
        if (cg_emit_cuda_has(&s)) {
            cg_emit_cuda(&g, &s);
        }
    }
    cg_set_fini(&set);
    cg_arena_fini(&arena);
    fclose(null);
    free(text);
    return 0;
}
