/* collgen.c - the collgen program: the generator's commands (gen/main.c,
 * through cg_main) and the harness's run and report.
 *
 * Why here: this is the one file that knows both. The generator's library
 * (gen/) includes nothing of the harness; the harness uses the generator's
 * (descriptors are read through gen/json.h); the program joins them by
 * adding the harness's commands to the generator's table.
 */
#include "../gen/cli.h"
#include "harness.h"

static const struct cg_command harness_commands[] = {
    { "run", cg_run_main, "run TEST [OPTIONS]",
      "run a benchmark campaign (harness/README.md; 'collgen run\n"
      "--help')" },
    { "report", cg_report_main, "report CAMPAIGN",
      "remake a campaign's table, CSV and plots from its records" },
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
