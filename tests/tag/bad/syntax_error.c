/* A file clang cannot compile: collgen tag prints clang's diagnostic. */
#include <mpi.h>

int misspelt(MPI_Comm comm)
{
    return MPI_Barrier(commm);
}
