/* tag.c - timing tags as CUDA events.
 *
 * CG_CU_TAG_BEGIN(id) records a start event on the stream of the call in
 * progress on this thread and opens a record; CG_CU_TAG_END(id) records the
 * stop event of the innermost open record of that id. Nothing waits then:
 * the events are read after the call (cg_cu_tag_collect, cg_cu_tag_read),
 * which waits for each stop event, adds cudaEventElapsedTime to the tag's
 * total and counts one call. Events come from a pool and go back to it.
 *
 * The time is the GPU's: from when the stream reached the start event to
 * when it reached the stop event. cudaEventElapsedTime has a resolution of
 * about half a microsecond.
 *
 * Why process-wide tables: as the MPI backend's cg_tag_accs, a tag belongs
 * to a rank, whichever communicator or stream a call used; only the stream
 * is per thread (each thread makes its own calls).
 */
#include "cg_cuda_internal.h"

#include <math.h>
#include <stdlib.h>

struct cg_cu_tag_rec {
    int id;
    int prev_open;     /* index + 1 of the record of the same id open before, 0: none */
    int closed;        /* stop recorded */
    cudaEvent_t start, stop;
};

struct cg_cu_tag_acc {
    uint64_t ns;
    uint64_t calls;
};

static struct cg_cu_tag_acc cg_cu_tag_accs[CG_TAG_CAPACITY];
static int cg_cu_tag_open[CG_TAG_CAPACITY]; /* index + 1 of the innermost open record */
static struct cg_cu_tag_rec *cg_cu_tag_recs;
static int cg_cu_tag_nrecs, cg_cu_tag_recs_cap;
static cudaEvent_t *cg_cu_tag_pool;
static int cg_cu_tag_npool, cg_cu_tag_pool_cap;
static char cg_cu_tag_err[512]; /* the first failure since the last collection */
static _Thread_local cudaStream_t cg_cu_tag_stream;
static _Thread_local int cg_cu_tag_active;
/* Why a switch in code built with tags: each pair costs two
 * cudaEventRecord calls of host time, which a short GPU collective may wait
 * for; a benchmark times its calls with the tags off and reads them in
 * repetitions of their own (harness/gpu/gpu_point.c). */
static int cg_cu_tag_disabled;

/* Why collect on the way: a program that never reads its tags would grow the
 * record list without bound; past this many records, begin collects the
 * closed ones (waiting for their events). */
#define CG_CU_TAG_AUTO_COLLECT 8192

void cg_cu_tag_set_stream(cudaStream_t stream, int active)
{
    cg_cu_tag_stream = stream;
    cg_cu_tag_active = active;
}

static void cg_cu_tag_fail(const char *what, const char *why)
{
    if (cg_cu_tag_err[0] == '\0') {
        snprintf(cg_cu_tag_err, sizeof(cg_cu_tag_err), "rank %d: runtime/cuda/tag.c: %s: %s",
                 cg_cu_world_rank(), what, why);
    }
}

static int cg_cu_tag_event(cudaEvent_t *ev)
{
    if (cg_cu_tag_npool > 0) {
        *ev = cg_cu_tag_pool[--cg_cu_tag_npool];
        return 0;
    }
    cudaError_t e = cudaEventCreate(ev);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        cg_cu_tag_fail("cudaEventCreate", cudaGetErrorString(e));
        return -1;
    }
    return 0;
}

static void cg_cu_tag_release(cudaEvent_t ev)
{
    if (cg_cu_tag_npool == cg_cu_tag_pool_cap) {
        int cap = (cg_cu_tag_pool_cap > 0) ? (2 * cg_cu_tag_pool_cap) : 64;
        cudaEvent_t *pool = realloc(cg_cu_tag_pool, (size_t)cap * sizeof(*pool));
        if (pool == NULL) {
            (void)cudaEventDestroy(ev);
            return;
        }
        cg_cu_tag_pool = pool;
        cg_cu_tag_pool_cap = cap;
    }
    cg_cu_tag_pool[cg_cu_tag_npool++] = ev;
}

static int cg_cu_tag_collect_closed(void);

void cg_cu_tag_enable(int on)
{
    cg_cu_tag_disabled = !on;
}

void cg_cu_tag_begin(int id)
{
    if (cg_cu_tag_disabled) {
        return;
    }
    if ((id < 0) || (id >= CG_TAG_CAPACITY)) {
        cg_cu_tag_fail("CG_CU_TAG_BEGIN", "tag id out of range");
        return;
    }
    if (!cg_cu_tag_active) {
        cg_cu_tag_fail("CG_CU_TAG_BEGIN", "no call in progress on this thread");
        return;
    }
    if (cg_cu_tag_nrecs >= CG_CU_TAG_AUTO_COLLECT) {
        (void)cg_cu_tag_collect_closed();
    }
    if (cg_cu_tag_nrecs == cg_cu_tag_recs_cap) {
        int cap = (cg_cu_tag_recs_cap > 0) ? (2 * cg_cu_tag_recs_cap) : 256;
        struct cg_cu_tag_rec *recs = realloc(cg_cu_tag_recs, (size_t)cap * sizeof(*recs));
        if (recs == NULL) {
            cg_cu_tag_fail("CG_CU_TAG_BEGIN", "out of memory");
            return;
        }
        cg_cu_tag_recs = recs;
        cg_cu_tag_recs_cap = cap;
    }
    struct cg_cu_tag_rec *r = &cg_cu_tag_recs[cg_cu_tag_nrecs];
    if (cg_cu_tag_event(&r->start) != 0) {
        return;
    }
    if (cg_cu_tag_event(&r->stop) != 0) {
        cg_cu_tag_release(r->start);
        return;
    }
    cudaError_t e = cudaEventRecord(r->start, cg_cu_tag_stream);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        cg_cu_tag_fail("cudaEventRecord", cudaGetErrorString(e));
        cg_cu_tag_release(r->start);
        cg_cu_tag_release(r->stop);
        return;
    }
    r->id = id;
    r->closed = 0;
    r->prev_open = cg_cu_tag_open[id];
    cg_cu_tag_nrecs++;
    cg_cu_tag_open[id] = cg_cu_tag_nrecs;
}

void cg_cu_tag_end(int id)
{
    if (cg_cu_tag_disabled) {
        return;
    }
    if ((id < 0) || (id >= CG_TAG_CAPACITY) || (cg_cu_tag_open[id] == 0)) {
        cg_cu_tag_fail("CG_CU_TAG_END", "no open CG_CU_TAG_BEGIN of this id");
        return;
    }
    struct cg_cu_tag_rec *r = &cg_cu_tag_recs[cg_cu_tag_open[id] - 1];
    cudaError_t e = cudaEventRecord(r->stop, cg_cu_tag_stream);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        cg_cu_tag_fail("cudaEventRecord", cudaGetErrorString(e));
        return; /* stays open; dropped by cg_cu_tag_reset */
    }
    r->closed = 1;
    cg_cu_tag_open[id] = r->prev_open;
}

/* Accumulates every closed record and compacts the open ones, keeping the
 * open chains' links. */
static int cg_cu_tag_collect_closed(void)
{
    int rc = 0;
    int kept = 0;
    int *newidx = NULL;

    if (cg_cu_tag_nrecs == 0) {
        return 0;
    }
    newidx = malloc((size_t)cg_cu_tag_nrecs * sizeof(*newidx));
    if (newidx == NULL) {
        cg_cu_tag_fail("cg_cu_tag_collect", "out of memory");
        return -1;
    }
    for (int i = 0; i < cg_cu_tag_nrecs; i++) {
        struct cg_cu_tag_rec *r = &cg_cu_tag_recs[i];
        if (!r->closed) {
            newidx[i] = kept;
            cg_cu_tag_recs[kept++] = *r;
            continue;
        }
        newidx[i] = -1;
        float ms = 0.0f;
        cudaError_t e = cudaEventSynchronize(r->stop);
        if (e == cudaSuccess) {
            e = cudaEventElapsedTime(&ms, r->start, r->stop);
        }
        if (e != cudaSuccess) {
            (void)cudaGetLastError();
            cg_cu_tag_fail("cudaEventElapsedTime", cudaGetErrorString(e));
            rc = -1;
        } else {
            cg_cu_tag_accs[r->id].ns += (uint64_t)llround((double)ms * 1e6);
            cg_cu_tag_accs[r->id].calls++;
        }
        cg_cu_tag_release(r->start);
        cg_cu_tag_release(r->stop);
    }
    for (int i = 0; i < kept; i++) {
        struct cg_cu_tag_rec *r = &cg_cu_tag_recs[i];
        r->prev_open = (r->prev_open > 0) ? (newidx[r->prev_open - 1] + 1) : 0;
    }
    for (int id = 0; id < CG_TAG_CAPACITY; id++) {
        if (cg_cu_tag_open[id] > 0) {
            cg_cu_tag_open[id] = newidx[cg_cu_tag_open[id] - 1] + 1;
        }
    }
    cg_cu_tag_nrecs = kept;
    free(newidx);
    return rc;
}

int cg_cu_tag_collect(void)
{
    int rc = cg_cu_tag_collect_closed();
    if ((rc != 0) || (cg_cu_tag_err[0] != '\0')) {
        cg_set_error("%s", (cg_cu_tag_err[0] != '\0') ? cg_cu_tag_err : "tag collection failed");
        int arg = (strstr(cg_cu_tag_err, "CG_CU_TAG_") != NULL);
        cg_cu_tag_err[0] = '\0';
        return arg ? MPI_ERR_ARG : MPI_ERR_OTHER;
    }
    return MPI_SUCCESS;
}

int cg_cu_tag_read(int id, uint64_t *ns, uint64_t *calls)
{
    if ((id < 0) || (id >= CG_TAG_CAPACITY)) {
        return -1;
    }
    if (cg_cu_tag_collect() != MPI_SUCCESS) {
        return -1;
    }
    *ns = cg_cu_tag_accs[id].ns;
    *calls = cg_cu_tag_accs[id].calls;
    return 0;
}

void cg_cu_tag_reset(void)
{
    (void)cg_cu_tag_collect();
    for (int i = 0; i < cg_cu_tag_nrecs; i++) { /* left open: an error path skipped END */
        cg_cu_tag_release(cg_cu_tag_recs[i].start);
        cg_cu_tag_release(cg_cu_tag_recs[i].stop);
    }
    cg_cu_tag_nrecs = 0;
    memset(cg_cu_tag_open, 0, sizeof(cg_cu_tag_open));
    memset(cg_cu_tag_accs, 0, sizeof(cg_cu_tag_accs));
}

void cg_cu_tag_free(void)
{
    cg_cu_tag_reset();
    for (int i = 0; i < cg_cu_tag_npool; i++) {
        (void)cudaEventDestroy(cg_cu_tag_pool[i]);
    }
    free(cg_cu_tag_pool);
    cg_cu_tag_pool = NULL;
    cg_cu_tag_npool = 0;
    cg_cu_tag_pool_cap = 0;
    free(cg_cu_tag_recs);
    cg_cu_tag_recs = NULL;
    cg_cu_tag_recs_cap = 0;
}
