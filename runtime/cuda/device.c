/* device.c - is there a GPU, and which one does this rank use.
 *
 * Why cudaGetDeviceCount and not NCCL: ncclGetUniqueId succeeds on a machine
 * without a GPU (it only opens a socket), so it proves nothing; the CUDA
 * runtime fails cudaGetDeviceCount there ("CUDA driver version is
 * insufficient for CUDA runtime version" when the toolkit is installed
 * without a driver, "no CUDA-capable device is detected" without a device),
 * and that message is what skipped tests print.
 */
#include "cg_cuda_internal.h"

/* Why static: the answer is the process's, and asking the driver again
 * costs a call that may take milliseconds on a machine without a GPU. */
static char cg_cu_gpu_why[256];
static int cg_cu_gpu_known;
static int cg_cu_gpu_n;

int cg_cu_gpu_count(const char **why)
{
    if (!cg_cu_gpu_known) {
        int n = 0;
        cudaError_t e = cudaGetDeviceCount(&n);
        if (e != cudaSuccess) {
            (void)cudaGetLastError();
            snprintf(cg_cu_gpu_why, sizeof(cg_cu_gpu_why), "cudaGetDeviceCount: %s",
                     cudaGetErrorString(e));
            n = 0;
        } else if (n == 0) {
            snprintf(cg_cu_gpu_why, sizeof(cg_cu_gpu_why), "cudaGetDeviceCount: 0 devices");
        } else {
            cg_cu_gpu_why[0] = '\0';
        }
        cg_cu_gpu_n = n;
        cg_cu_gpu_known = 1;
    }
    if (why != NULL) {
        *why = cg_cu_gpu_why;
    }
    return cg_cu_gpu_n;
}

int cg_cu_select_device(MPI_Comm comm, int *device)
{
    int rc = MPI_SUCCESS;
    MPI_Comm node = MPI_COMM_NULL;
    int local = 0;
    const char *why = NULL;
    int n = cg_cu_gpu_count(&why);

    /* Collective first, so that every rank takes part whatever it finds. */
    CG_CHECK_MPI(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    CG_CHECK_MPI(MPI_Comm_rank(node, &local));
    if (n < 1) {
        cg_set_error("rank %d: collgen: no GPU (%s)", cg_cu_world_rank(), why);
        rc = MPI_ERR_OTHER;
        goto out;
    }
    CG_CHECK_CUDA(cudaSetDevice(local % n));
    if (device != NULL) {
        *device = local % n;
    }
out:
    if (node != MPI_COMM_NULL) {
        (void)MPI_Comm_free(&node);
    }
    return rc;
}
