/* Asked for by name, but it does nothing a tag times. */
#include <mpi.h>

long sum(const int *a, int n)
{
    long s = 0;
    for (int i = 0; i < n; i++) {
        s += a[i] * 2;
    }
    return s;
}

int barrier(MPI_Comm comm)
{
    return MPI_Barrier(comm);
}
