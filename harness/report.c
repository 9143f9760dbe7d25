/* report.c - collgen report (being written). */
#include <stdio.h>

#include "harness.h"

int cg_report_main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "collgen: report: not implemented yet\n");
    return 2;
}
