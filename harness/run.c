/* run.c - collgen run (being written). */
#include <stdio.h>

#include "harness.h"

int cg_run_main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "collgen: run: not implemented yet\n");
    return 2;
}
