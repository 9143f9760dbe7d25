/* cli.h - the collgen command line as a table of commands.
 *
 * gen/main.c has the generator's commands (verify, emit, explain, list,
 * tags, mutate) and cg_main, which dispatches to them or to commands a
 * program adds: build/collgen's main (harness/collgen.c) adds the harness's
 * run, report and compare. The header is here, in what both share, so that
 * neither includes the other's headers: gen/ knows nothing of the harness,
 * and the harness knows the generator only through what it wrote
 * (emitted/registry.json); only the program links both.
 */
#ifndef CG_CLI_H
#define CG_CLI_H

struct cg_command {
    const char *name;                 /* "verify" */
    int (*run)(int argc, char **argv);/* argv[0] is the command's name; returns the exit status */
    const char *synopsis;             /* "verify [FILE...]" */
    const char *help;                 /* what it does; lines separated by '\n' */
};

/* Runs the command argv[1] names, among the generator's and the `extra`
 * ones (n of them, listed after the generator's in the usage text): 2 and
 * the usage for none or an unknown one, 0 and the usage for -h, --help,
 * help. */
int cg_main(int argc, char **argv, const struct cg_command *extra, int n);

#endif
