/* report_util.c - growable strings, number formatting and the plots.py
 * runner (report_util.h). */
#include "report_util.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

void cg_rep_buf_init(struct cg_rep_buf *b)
{
    b->s = NULL;
    b->len = 0;
    b->cap = 0;
    b->failed = 0;
}

void cg_rep_buf_fini(struct cg_rep_buf *b)
{
    free(b->s);
    cg_rep_buf_init(b);
}

/* Makes room for `more` bytes plus the NUL; 0 on success. */
static int reserve(struct cg_rep_buf *b, size_t more)
{
    if (b->failed) {
        return -1;
    }
    if (b->len + more + 1 <= b->cap) {
        return 0;
    }
    size_t cap = (b->cap != 0) ? b->cap : 256;
    while (cap < b->len + more + 1) {
        cap *= 2;
    }
    char *s = realloc(b->s, cap);
    if (s == NULL) {
        b->failed = 1;
        return -1;
    }
    b->s = s;
    b->cap = cap;
    return 0;
}

void cg_rep_buf_addn(struct cg_rep_buf *b, const char *s, size_t n)
{
    if (reserve(b, n) != 0) {
        return;
    }
    memcpy(b->s + b->len, s, n);
    b->len += n;
    b->s[b->len] = '\0';
}

void cg_rep_buf_add(struct cg_rep_buf *b, const char *s)
{
    cg_rep_buf_addn(b, s, strlen(s));
}

void cg_rep_buf_printf(struct cg_rep_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) {
        b->failed = 1;
        return;
    }
    if (reserve(b, (size_t)n) != 0) {
        return;
    }
    va_start(ap, fmt);
    vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

char *cg_rep_buf_take(struct cg_rep_buf *b)
{
    if (b->failed) {
        cg_rep_buf_fini(b);
        return NULL;
    }
    if (reserve(b, 0) != 0) {
        return NULL;
    }
    /* Why: a buffer nothing was appended to has fresh, unterminated memory
     * (an empty points.jsonl read as "holds a NUL byte"). */
    b->s[b->len] = '\0';
    char *s = b->s;
    cg_rep_buf_init(b);
    return s;
}

char *cg_rep_strf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) {
        return NULL;
    }
    char *s = malloc((size_t)n + 1);
    if (s == NULL) {
        return NULL;
    }
    va_start(ap, fmt);
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return s;
}

void cg_rep_fmt_size(char *out, size_t n, double bytes)
{
    double mib = 1024.0 * 1024.0;
    double gib = mib * 1024.0;
    if (bytes >= gib && fmod(bytes, gib) == 0.0) {
        snprintf(out, n, "%.0f GiB", bytes / gib);
    } else if (bytes >= mib && fmod(bytes, mib) == 0.0) {
        snprintf(out, n, "%.0f MiB", bytes / mib);
    } else if (bytes >= 1024.0 && fmod(bytes, 1024.0) == 0.0) {
        snprintf(out, n, "%.0f KiB", bytes / 1024.0);
    } else {
        snprintf(out, n, "%.0f B", bytes);
    }
}

void cg_rep_fmt_us(char *out, size_t n, double ns)
{
    double us = ns / 1000.0;
    if (us < 10.0) {
        snprintf(out, n, "%.3f", us);
    } else if (us < 100.0) {
        snprintf(out, n, "%.2f", us);
    } else if (us < 1000.0) {
        snprintf(out, n, "%.1f", us);
    } else {
        snprintf(out, n, "%.0f", us);
    }
}

void cg_rep_fmt_number(char *out, size_t n, double v)
{
    if (!isfinite(v)) {
        snprintf(out, n, "%s", isnan(v) ? "nan" : (v > 0 ? "inf" : "-inf"));
        return;
    }
    /* Why: 2^53 is where doubles stop holding every integer, so below it
     * "%.0f" of an integral value is exact and reads like an integer. */
    if (v == floor(v) && fabs(v) < 9007199254740992.0) {
        snprintf(out, n, "%.0f", v);
        return;
    }
    for (int digits = 15; digits <= 17; digits++) {
        snprintf(out, n, "%.*g", digits, v);
        if (strtod(out, NULL) == v) {
            return;
        }
    }
}

void cg_rep_fmt_p(char *out, size_t n, double p)
{
    if (isnan(p)) {
        snprintf(out, n, "?");
    } else if (p < 0.001) {
        snprintf(out, n, "%.1e", p);
    } else {
        snprintf(out, n, "%.3f", p);
    }
}

/* ---- plots.py ------------------------------------------------------------ */

/* Where harness/plots.py is: beside the build directory of this binary
 * (build/collgen -> harness/plots.py), else relative to the working
 * directory. Returns a malloc'd path, or NULL when out of memory. */
static char *plots_script(void)
{
    const char *env = getenv("CG_CG_REP_PLOTS_PY");
    if (env != NULL && env[0] != '\0') {
        return strdup(env);
    }
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = '\0';
        for (int up = 0; up < 2; up++) {
            char *slash = strrchr(exe, '/');
            if (slash != NULL) {
                *slash = '\0';
            }
        }
        char *p = cg_rep_strf("%s/harness/plots.py", exe);
        if (p == NULL || access(p, R_OK) == 0) {
            return p;
        }
        free(p);
    }
    return strdup("harness/plots.py");
}

/* Runs plots.py on dir (with mode, e.g. "--compare", when given); *why
 * says what went wrong, for anything but CG_REP_PLOTS_MADE. */
enum cg_rep_plots cg_rep_make_plots(const char *dir, const char *mode, char *why, size_t nwhy)
{
    const char *python = getenv("CG_PYTHON");
    if (python == NULL || python[0] == '\0') {
        python = "/usr/bin/python3";
    }
    char *script = plots_script();
    if (script == NULL) {
        snprintf(why, nwhy, "out of memory");
        return CG_REP_PLOTS_FAILED;
    }
    if (access(python, X_OK) != 0) {
        snprintf(why, nwhy, "%s is not there (%s); install python3 and python3-matplotlib "
                 "(harness/setup.sh), then rerun collgen report", python, strerror(errno));
        free(script);
        return CG_REP_PLOTS_NO_PYTHON;
    }
    if (access(script, R_OK) != 0) {
        snprintf(why, nwhy, "%s is not there (%s)", script, strerror(errno));
        free(script);
        return CG_REP_PLOTS_NO_PYTHON;
    }
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(why, nwhy, "cannot start %s: %s", python, strerror(errno));
        free(script);
        return CG_REP_PLOTS_FAILED;
    }
    if (pid == 0) {
        char *argv[] = {(char *)python, script, (char *)dir, "--quiet", NULL, NULL};
        if (mode != NULL) {
            argv[3] = (char *)mode;
            argv[4] = "--quiet";
        }
        execv(python, argv);
        fprintf(stderr, "collgen: cannot run %s: %s\n", python, strerror(errno));
        _exit(127);
    }
    free(script);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) {
            snprintf(why, nwhy, "waiting for plots.py: %s", strerror(errno));
            return CG_REP_PLOTS_FAILED;
        }
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
        return CG_REP_PLOTS_MADE;
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 3) {
        snprintf(why, nwhy, "%s has no matplotlib or numpy; install python3-matplotlib "
                 "(harness/setup.sh), then rerun collgen report", python);
        return CG_REP_PLOTS_NO_MATPLOTLIB;
    }
    if (WIFEXITED(status)) {
        snprintf(why, nwhy, "plots.py exited with status %d (its messages are above)",
                 WEXITSTATUS(status));
    } else {
        snprintf(why, nwhy, "plots.py was killed by signal %d",
                 WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    }
    return CG_REP_PLOTS_FAILED;
}

/* The boundary between measured sizes a < b: the floor of their geometric
 * mean (the midpoint in log space). Sizes up to 2^32 multiply exactly in a
 * long double; the loops correct the last unit of sqrtl. */
double cg_rep_size_boundary(double a, double b)
{
    long double prod = (long double)a * (long double)b;
    long double m = floorl(sqrtl(prod));
    while (m > 0 && m * m > prod) {
        m -= 1;
    }
    while ((m + 1) * (m + 1) <= prod) {
        m += 1;
    }
    if (m < a) {
        m = a;
    }
    if (m >= b) {
        m = b - 1;
    }
    return (double)m;
}
