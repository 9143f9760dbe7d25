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

#include <getopt.h>
#include <stdio.h>

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

/* The one-line error for what getopt_long returned that is not an option of
 * the program: '?' (an unknown option) or ':' (an option without its value;
 * the option string must begin with ':' and opterr be 0, so that getopt
 * itself prints nothing). Prints "PROG: error: unknown option 'X' (PROG
 * --help)" or "... option 'X' needs a value ..." on stderr and returns 2,
 * the exit status of every usage error. Every main of gen/ and harness/
 * that reads options uses it, so that their errors read alike.
 * Why inline: the MPI programs (bench) and the host ones (collgen) link
 * different libraries, and this is their one shared piece. */
static inline int cg_cli_bad_option(const char *prog, int got, char **argv)
{
    const char *word = (optind > 0) ? argv[optind - 1] : "?";
    if (got == ':') {
        /* optopt is the short option, or a long option's value (not text). */
        if (optopt > 0 && optopt < 128 && word[0] == '-' && word[1] != '-') {
            fprintf(stderr, "%s: error: option '-%c' needs a value (%s --help)\n", prog,
                    optopt, prog);
        } else {
            fprintf(stderr, "%s: error: option '%s' needs a value (%s --help)\n", prog, word,
                    prog);
        }
    } else if (optopt > 0 && optopt < 128) {
        fprintf(stderr, "%s: error: unknown option '-%c' (%s --help)\n", prog, optopt, prog);
    } else {
        fprintf(stderr, "%s: error: unknown option '%s' (%s --help)\n", prog, word, prog);
    }
    return 2;
}

#endif
