/* tag_trace.c - the timing tags' trace mode: while on, CG_TAG_BEGIN and
 * CG_TAG_END (cg.h, with CG_TAGS) append each region's begin and end to a
 * bounded buffer the caller owns (harness/bench_trace.c: the first
 * repetitions of a point, verbosity "trace").
 *
 * Why a flag the macros test rather than a second tags-on build: bench
 * links one copy of the generated code, and a point must be able to trace
 * some repetitions and time the others with the same code. Off, the cost
 * is one load and a branch that is not taken (harness/README.md gives
 * tag_cost's numbers). The tags-off build never sees any of it.
 *
 * Why a buffer that drops when full rather than grows: the events are taken
 * inside the timed call, where an allocation would be measured; the caller
 * sizes the buffer before (bench: BENCH_TRACE_EVENTS per rank).
 */
#include "cg.h"

int cg_tag_tracing;

static struct cg_tag_event *trace_buf;
static size_t trace_cap;
static size_t trace_n;
static uint64_t trace_dropped;

void cg_tag_trace_event(int id, int end, uint64_t ns)
{
    if (trace_n < trace_cap) {
        struct cg_tag_event *e = &trace_buf[trace_n++];
        e->ns = ns;
        e->id = (int32_t)id;
        e->end = (int32_t)end;
    } else {
        trace_dropped++;
    }
}

void cg_tag_trace_on(struct cg_tag_event *buf, size_t cap, size_t n)
{
    trace_buf = buf;
    trace_cap = (buf != NULL) ? cap : 0;
    trace_n = (n < trace_cap) ? n : trace_cap;
    trace_dropped = 0;
    cg_tag_tracing = 1;
}

size_t cg_tag_trace_off(uint64_t *dropped)
{
    cg_tag_tracing = 0;
    if (dropped != NULL) {
        *dropped = trace_dropped;
    }
    return trace_n;
}
