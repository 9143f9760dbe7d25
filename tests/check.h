/* check.h - the smallest test framework that does the job.
 *
 * A test is a function named as a sentence; RUN(name) runs it and prints one
 * line, "PASS name" or "FAIL name" followed by the failed checks. tests/run_all.sh
 * counts those lines. check_exit() returns the exit status (1 if any failed).
 *
 *   static void expr_should_floor_negative_division(void)
 *   {
 *       CHECK(eval("-7 / 2") == -4);
 *   }
 *   int main(void) { RUN(expr_should_floor_negative_division); return check_exit(); }
 */
#ifndef CG_CHECK_H
#define CG_CHECK_H

#include <stdio.h>

static int check_failed_now;  /* checks failed in the running test */
static int check_tests_failed;/* tests failed so far */
static int check_tests_passed;/* tests passed so far */

#define CHECK(cond)                                                                  \
    do {                                                                             \
        if (!(cond)) {                                                               \
            check_failed_now++;                                                      \
            fprintf(stdout, "  %s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
        }                                                                            \
    } while (0)

#define CHECKF(cond, ...)                                                            \
    do {                                                                             \
        if (!(cond)) {                                                               \
            check_failed_now++;                                                      \
            fprintf(stdout, "  %s:%d: check failed: %s: ", __FILE__, __LINE__, #cond); \
            fprintf(stdout, __VA_ARGS__);                                            \
            fputc('\n', stdout);                                                     \
        }                                                                            \
    } while (0)

#define RUN(name)                                                                    \
    do {                                                                             \
        check_failed_now = 0;                                                        \
        name();                                                                      \
        if (check_failed_now) {                                                      \
            check_tests_failed++;                                                    \
            fprintf(stdout, "FAIL %s\n", #name);                                     \
        } else {                                                                     \
            check_tests_passed++;                                                    \
            fprintf(stdout, "PASS %s\n", #name);                                     \
        }                                                                            \
        fflush(stdout);                                                              \
    } while (0)

static inline int check_exit(void)
{
    return check_tests_failed ? 1 : 0;
}

#endif
