/* Given twice (its copies would both be called same_name_twice.c). */
#include <mpi.h>

int twice(MPI_Comm comm)
{
    return MPI_Barrier(comm);
}
