/* tests/cuda/gpu_probe.c - prints "gpus N" when N >= 1 CUDA devices are
 * usable, otherwise "none: REASON" (REASON from cudaGetDeviceCount); exit 0
 * either way. tests/run_cuda.sh and harness/device_check.sh use it to decide
 * what to run and what to skip. Needs no MPI_Init.
 */
#include "cg_cuda.h"

#include <stdio.h>

int main(void)
{
    const char *why = NULL;
    int n = cg_cu_gpu_count(&why);
    if (n > 0) {
        printf("gpus %d\n", n);
    } else {
        printf("none: %s\n", why);
    }
    return 0;
}
