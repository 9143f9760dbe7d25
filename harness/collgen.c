/* collgen.c - the collgen program: the generator's commands (gen/main.c,
 * through cg_main) and the harness's run, report and compare.
 *
 * Why here: the program is the one place that links both. gen/ includes
 * nothing of the harness and the harness nothing of gen/ (both include
 * runtime/util/, where cli.h is; the harness reads the schedules from
 * emitted/registry.json); the program joins them by adding the harness's
 * commands to the generator's table.
 */
#include "cli.h"
#include "harness.h"

static const struct cg_command harness_commands[] = {
    { "run", cg_run_main, "run TEST [OPTIONS]",
      "run a benchmark campaign (harness/README.md; 'collgen run\n"
      "--help')" },
    { "report", cg_report_main, "report CAMPAIGN...",
      "remake a campaign's table, CSV and plots from its records;\n"
      "several runs of one descriptor pooled (--out DIR)" },
    { "compare", cg_compare_main, "compare BASE NEW",
      "regression check of two campaigns: NEW/BASE per point,\n"
      "significance, metadata differences; exit 3 on a slowdown" },
    { "tune", cg_tune_main, "tune CAMPAIGN [--out DIR]",
      "the dispatcher, selection files and Open MPI, MPICH and NCCL\n"
      "exports from a campaign's records (harness/README.md)" },
};

int main(int argc, char **argv)
{
    return cg_main(argc, argv, harness_commands,
                   (int)(sizeof(harness_commands) / sizeof(harness_commands[0])));
}
