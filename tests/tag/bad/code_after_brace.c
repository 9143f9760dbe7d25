/* Code right after the body's '{': the call tag's line has no place. */
#include <mpi.h>

int after_brace(MPI_Comm comm)
{   MPI_Barrier(comm);
    return MPI_SUCCESS;
}
