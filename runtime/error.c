/* error.c - the last error the runtime recorded, one line per thread. */
#include "cg.h"

#include <stdarg.h>
#include <stdio.h>

/* Why thread-local: an error is read by the thread whose call failed; a
 * shared buffer would let another thread's error replace it. */
static _Thread_local char cg_error_text[512];

const char *cg_last_error(void)
{
    return cg_error_text;
}

void cg_set_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cg_error_text, sizeof(cg_error_text), fmt, ap);
    va_end(ap);
}
