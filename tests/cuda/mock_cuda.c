/* tests/cuda/mock_cuda.c - a stand-in for the CUDA runtime, so that the
 * transport logic and the ring collectives run end to end on machines
 * without a GPU (tests/run_cuda.sh: "mock" runs of test_xchg at p = 1..8).
 *
 * What it is: the runtime functions runtime/cuda/ and tests/cuda/test_xchg.cu
 * call, over host memory. "Device" memory is POSIX shared memory (one
 * segment per cudaMalloc, named /cgmock.<pid>.<n>), so that an IPC memory
 * handle is the segment's name and cudaIpcOpenMemHandle maps it in another
 * process; cuPointerGetAttributes (through cudaGetDriverEntryPointByVersion)
 * answers from the table of allocations, with a buffer id per allocation.
 * Every enqueued operation runs at once, on the host, when it is enqueued;
 * events record a CLOCK_MONOTONIC time; waits are no-ops.
 *
 * What that tests: everything the host does (descriptors, message matching,
 * byte offsets of wrapping ranges, the import and export caches and stale
 * entries, errors, tags' records), and the data each step moves. What it
 * cannot: GPU asynchrony (event waits order nothing here, since everything
 * already ran in host order) and the kernels (the mock build replaces
 * reduce.cu with tests/cuda/mock_reduce.cu). Those need the GPU runs.
 */
#define _POSIX_C_SOURCE 200809L

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

struct mock_alloc {
    char *base;
    size_t size;
    unsigned long long id;
    char name[48];
};

static struct mock_alloc *allocs;
static int nallocs, allocs_cap;
static unsigned long long next_id = 1;
static int atexit_set;

struct mock_map {
    void *ptr;
    size_t size;
};
static struct mock_map *maps;
static int nmaps, maps_cap;

struct mock_event {
    struct timespec t;
};

static cudaError_t last_error = cudaSuccess;

static cudaError_t fail(cudaError_t e)
{
    last_error = e;
    return e;
}

static void unlink_all(void)
{
    for (int i = 0; i < nallocs; i++) {
        shm_unlink(allocs[i].name);
    }
}

/* ---- errors, devices ------------------------------------------------------ */

cudaError_t cudaGetLastError(void)
{
    cudaError_t e = last_error;
    last_error = cudaSuccess;
    return e;
}

const char *cudaGetErrorString(cudaError_t e)
{
    switch (e) {
    case cudaSuccess:
        return "no error (mock)";
    case cudaErrorMemoryAllocation:
        return "out of memory (mock)";
    case cudaErrorInvalidValue:
        return "invalid argument (mock)";
    default:
        return "error (mock)";
    }
}

cudaError_t cudaGetDeviceCount(int *n)
{
    *n = 1;
    return cudaSuccess;
}

cudaError_t cudaGetDevice(int *d)
{
    *d = 0;
    return cudaSuccess;
}

cudaError_t cudaSetDevice(int d)
{
    return (d == 0) ? cudaSuccess : fail(cudaErrorInvalidDevice);
}

cudaError_t cudaDeviceSynchronize(void)
{
    return cudaSuccess;
}

cudaError_t cudaDeviceGetPCIBusId(char *bus, int len, int d)
{
    (void)d;
    snprintf(bus, (size_t)len, "0000:00:00.0");
    return cudaSuccess;
}

/* ---- memory ------------------------------------------------------------- */

cudaError_t cudaMalloc(void **p, size_t size)
{
    if (nallocs == allocs_cap) {
        int cap = allocs_cap ? 2 * allocs_cap : 64;
        struct mock_alloc *a = realloc(allocs, (size_t)cap * sizeof(*a));
        if (a == NULL) {
            return fail(cudaErrorMemoryAllocation);
        }
        allocs = a;
        allocs_cap = cap;
    }
    struct mock_alloc *a = &allocs[nallocs];
    a->id = next_id++;
    a->size = size ? size : 1;
    snprintf(a->name, sizeof(a->name), "/cgmock.%ld.%llu", (long)getpid(), a->id);
    int fd = shm_open(a->name, O_CREAT | O_EXCL | O_RDWR, 0600);
    if (fd < 0) {
        return fail(cudaErrorMemoryAllocation);
    }
    if (ftruncate(fd, (off_t)a->size) != 0) {
        close(fd);
        shm_unlink(a->name);
        return fail(cudaErrorMemoryAllocation);
    }
    a->base = mmap(NULL, a->size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (a->base == MAP_FAILED) {
        shm_unlink(a->name);
        return fail(cudaErrorMemoryAllocation);
    }
    if (!atexit_set) {
        atexit(unlink_all);
        atexit_set = 1;
    }
    nallocs++;
    *p = a->base;
    return cudaSuccess;
}

cudaError_t cudaFree(void *p)
{
    if (p == NULL) {
        return cudaSuccess;
    }
    for (int i = 0; i < nallocs; i++) {
        if (allocs[i].base == (char *)p) {
            munmap(allocs[i].base, allocs[i].size);
            shm_unlink(allocs[i].name);
            allocs[i] = allocs[--nallocs];
            return cudaSuccess;
        }
    }
    return fail(cudaErrorInvalidValue);
}

cudaError_t cudaMemcpy(void *dst, const void *src, size_t n, enum cudaMemcpyKind k)
{
    (void)k;
    memmove(dst, src, n);
    return cudaSuccess;
}

cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t n, enum cudaMemcpyKind k,
                            cudaStream_t s)
{
    (void)s;
    return cudaMemcpy(dst, src, n, k);
}

cudaError_t cudaMemset(void *p, int v, size_t n)
{
    memset(p, v, n);
    return cudaSuccess;
}

cudaError_t cudaMemsetAsync(void *p, int v, size_t n, cudaStream_t s)
{
    (void)s;
    return cudaMemset(p, v, n);
}

/* cuPointerGetAttributes, as the driver would answer for our allocations. */
static CUresult mock_pointer_attrs(unsigned int n, CUpointer_attribute *attrs, void **data,
                                   CUdeviceptr ptr)
{
    struct mock_alloc *a = NULL;
    for (int i = 0; i < nallocs; i++) {
        if (((uintptr_t)ptr >= (uintptr_t)allocs[i].base) &&
            ((uintptr_t)ptr < (uintptr_t)allocs[i].base + allocs[i].size)) {
            a = &allocs[i];
        }
    }
    for (unsigned int k = 0; k < n; k++) {
        switch (attrs[k]) {
        case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
            *(CUdeviceptr *)data[k] = a ? (CUdeviceptr)(uintptr_t)a->base : 0;
            break;
        case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
            *(size_t *)data[k] = a ? a->size : 0;
            break;
        case CU_POINTER_ATTRIBUTE_BUFFER_ID:
            *(unsigned long long *)data[k] = a ? a->id : 0;
            break;
        case CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE:
            *(unsigned char *)data[k] = a ? 1 : 0;
            break;
        default:
            return CUDA_ERROR_INVALID_VALUE;
        }
    }
    return CUDA_SUCCESS;
}

cudaError_t cudaGetDriverEntryPointByVersion(const char *symbol, void **fn, unsigned int version,
                                             unsigned long long flags,
                                             enum cudaDriverEntryPointQueryResult *status)
{
    (void)version;
    (void)flags;
    if (strcmp(symbol, "cuPointerGetAttributes") == 0) {
        *fn = (void *)mock_pointer_attrs;
        if (status != NULL) {
            *status = cudaDriverEntryPointSuccess;
        }
        return cudaSuccess;
    }
    *fn = NULL;
    if (status != NULL) {
        *status = cudaDriverEntryPointSymbolNotFound;
    }
    return cudaSuccess;
}

cudaError_t cudaIpcGetMemHandle(cudaIpcMemHandle_t *h, void *p)
{
    for (int i = 0; i < nallocs; i++) {
        if (allocs[i].base == (char *)p) {
            memset(h, 0, sizeof(*h));
            snprintf(h->reserved, sizeof(h->reserved), "%s", allocs[i].name);
            return cudaSuccess;
        }
    }
    return fail(cudaErrorInvalidValue);
}

cudaError_t cudaIpcOpenMemHandle(void **p, cudaIpcMemHandle_t h, unsigned int flags)
{
    char name[sizeof(h.reserved) + 1];
    struct stat st;
    (void)flags;
    memcpy(name, h.reserved, sizeof(h.reserved));
    name[sizeof(h.reserved)] = '\0';
    int fd = shm_open(name, O_RDWR, 0600);
    if (fd < 0) {
        return fail(cudaErrorInvalidValue); /* freed by its owner: a stale handle */
    }
    if (fstat(fd, &st) != 0) {
        close(fd);
        return fail(cudaErrorInvalidValue);
    }
    void *m = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (m == MAP_FAILED) {
        return fail(cudaErrorMemoryAllocation);
    }
    if (nmaps == maps_cap) {
        int cap = maps_cap ? 2 * maps_cap : 64;
        struct mock_map *mm = realloc(maps, (size_t)cap * sizeof(*mm));
        if (mm == NULL) {
            munmap(m, (size_t)st.st_size);
            return fail(cudaErrorMemoryAllocation);
        }
        maps = mm;
        maps_cap = cap;
    }
    maps[nmaps].ptr = m;
    maps[nmaps].size = (size_t)st.st_size;
    nmaps++;
    *p = m;
    return cudaSuccess;
}

cudaError_t cudaIpcCloseMemHandle(void *p)
{
    for (int i = 0; i < nmaps; i++) {
        if (maps[i].ptr == p) {
            munmap(maps[i].ptr, maps[i].size);
            maps[i] = maps[--nmaps];
            return cudaSuccess;
        }
    }
    return fail(cudaErrorInvalidValue);
}

/* ---- streams and events ---------------------------------------------------- */

cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned int flags)
{
    (void)flags;
    *s = (cudaStream_t)malloc(16);
    return (*s != NULL) ? cudaSuccess : fail(cudaErrorMemoryAllocation);
}

cudaError_t cudaStreamDestroy(cudaStream_t s)
{
    free(s);
    return cudaSuccess;
}

cudaError_t cudaStreamSynchronize(cudaStream_t s)
{
    (void)s;
    return cudaSuccess;
}

cudaError_t cudaEventCreateWithFlags(cudaEvent_t *e, unsigned int flags)
{
    (void)flags;
    struct mock_event *m = calloc(1, sizeof(*m));
    if (m == NULL) {
        return fail(cudaErrorMemoryAllocation);
    }
    *e = (cudaEvent_t)m;
    return cudaSuccess;
}

cudaError_t cudaEventCreate(cudaEvent_t *e)
{
    return cudaEventCreateWithFlags(e, 0);
}

cudaError_t cudaEventDestroy(cudaEvent_t e)
{
    free(e);
    return cudaSuccess;
}

cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s)
{
    (void)s;
    if (e == NULL) {
        return fail(cudaErrorInvalidResourceHandle);
    }
    clock_gettime(CLOCK_MONOTONIC, &((struct mock_event *)(void *)e)->t);
    return cudaSuccess;
}

cudaError_t cudaEventSynchronize(cudaEvent_t e)
{
    return (e != NULL) ? cudaSuccess : fail(cudaErrorInvalidResourceHandle);
}

cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t a, cudaEvent_t b)
{
    const struct timespec *x = &((struct mock_event *)(void *)a)->t;
    const struct timespec *y = &((struct mock_event *)(void *)b)->t;
    *ms = (float)((double)(y->tv_sec - x->tv_sec) * 1e3 + (double)(y->tv_nsec - x->tv_nsec) / 1e6);
    return cudaSuccess;
}

cudaError_t cudaStreamWaitEvent(cudaStream_t s, cudaEvent_t e, unsigned int flags)
{
    (void)s;
    (void)flags;
    return (e != NULL) ? cudaSuccess : fail(cudaErrorInvalidResourceHandle);
}

cudaError_t cudaIpcGetEventHandle(cudaIpcEventHandle_t *h, cudaEvent_t e)
{
    memset(h, 0, sizeof(*h));
    memcpy(h->reserved, &e, sizeof(e));
    return cudaSuccess;
}

cudaError_t cudaIpcOpenEventHandle(cudaEvent_t *e, cudaIpcEventHandle_t h)
{
    (void)h;
    return cudaEventCreateWithFlags(e, 0);
}

/* ---- what nvcc's host stubs call (files without kernels) ------------------- */

void **__cudaRegisterFatBinary(void *fat);
void __cudaRegisterFatBinaryEnd(void **handle);
void __cudaUnregisterFatBinary(void **handle);

static void *mock_fat_handle;

void **__cudaRegisterFatBinary(void *fat)
{
    (void)fat;
    return &mock_fat_handle;
}

void __cudaRegisterFatBinaryEnd(void **handle)
{
    (void)handle;
}

void __cudaUnregisterFatBinary(void **handle)
{
    (void)handle;
}
