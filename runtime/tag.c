/* tag.c - timing tags: per-rank accumulators indexed by generator-assigned
 * ids. CG_TAG_BEGIN/CG_TAG_END (cg.h) write them; the harness reads them.
 */
#define _POSIX_C_SOURCE 199309L /* clock_gettime, CLOCK_MONOTONIC */

#include "cg.h"

#include <string.h>
#include <time.h>

struct cg_tag_acc cg_tag_accs[CG_TAG_CAPACITY];

uint64_t cg_tag_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ((uint64_t)ts.tv_sec * 1000000000u) + (uint64_t)ts.tv_nsec;
}

void cg_tag_reset(void)
{
    memset(cg_tag_accs, 0, sizeof(cg_tag_accs));
}

int cg_tag_read(int id, uint64_t *ns, uint64_t *calls)
{
    if ((id < 0) || (id >= CG_TAG_CAPACITY)) {
        return -1;
    }
    *ns = cg_tag_accs[id].ns;
    *calls = cg_tag_accs[id].calls;
    return 0;
}
