/* fuzz_descriptor.c - libFuzzer target: a platform and a test descriptor
 * through validation, planning and the rendering of every job's launch
 * (command line, batch script), as `collgen run --dry-run` does.
 *
 * The input is the platform's text, a NUL byte, then the test's text; an
 * empty part is replaced by descriptors/platforms/local.json or
 * descriptors/tests/tiny.json, and an input without a NUL is a test for
 * local.json. Schedules come from emitted/registry.json (run from the repository
 * root). A crash, a sanitizer report, a cg_panic (exit 70: an internal
 * error where a located one belongs, like the placeholders of issue 16
 * item 4) or work without bound is a finding.
 *
 * Build and run: tests/run_fuzz.sh (tests/fuzz/README.md).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../harness/run_internal.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

static struct cg_arena keep;      /* the registry and the default texts, for every input */
static struct cg_registry reg;
static char *local_text, *tiny_text;
static size_t local_len, tiny_len;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    struct cg_diag d;
    cg_diag_init(&d, stderr);
    local_text = cg_read_file(&keep, &d, "descriptors/platforms/local.json", &local_len);
    tiny_text = cg_read_file(&keep, &d, "descriptors/tests/tiny.json", &tiny_len);
    if (local_text == NULL || tiny_text == NULL) {
        fprintf(stderr, "fuzz_descriptor: run it from the repository root\n");
        exit(1);
    }
    cg_registry_load(&reg, &keep, "emitted/registry.json");
    return 0;
}

/* A NUL-terminated arena copy of data[0..n). */
static char *copy(struct cg_arena *a, const unsigned char *data, size_t n)
{
    char *s = cg_arena_alloc(a, n + 1);
    memcpy(s, data, n);
    return s;
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    const unsigned char *nul = memchr(data, '\0', size);
    size_t plen = nul != NULL ? (size_t)(nul - data) : 0;
    const unsigned char *tdata = nul != NULL ? nul + 1 : data;
    size_t tlen = nul != NULL ? size - plen - 1 : size;
    struct cg_arena a = { 0 };
    FILE *null = fopen("/dev/null", "w");
    struct cg_diag d;
    cg_diag_init(&d, null);
    const char *ptext = plen > 0 ? copy(&a, data, plen) : local_text;
    size_t pl = plen > 0 ? plen : local_len;
    const char *ttext = tlen > 0 ? copy(&a, tdata, tlen) : tiny_text;
    size_t tl = tlen > 0 ? tlen : tiny_len;
    struct cg_platform p;
    struct cg_test t;
    struct cg_plan plan;
    if (cg_platform_load(&p, &a, &d, "platform.json", ptext, pl) == 0 &&
        cg_test_load(&t, &a, &d, "test.json", ttext, tl, &p, &reg) == 0 &&
        cg_plan_build(&plan, &a, &d, &t, &p, &reg) == 0) {
        for (int j = 0; j < plan.njobs; j++) {
            struct cg_launch l;
            cg_launch_render(&l, &a, &p, &plan.jobs[j], plan.jobs[j].index, "results/fuzz",
                             "fuzz", t.timeout_s);
        }
    }
    fclose(null);
    cg_arena_fini(&a);
    return 0;
}
