/* types.c: what the library keeps per datatype (layer types, tune_internal.h). */
#ifndef MG_TUNE_TYPES_H
#define MG_TUNE_TYPES_H

#include <mpi.h>

/* After MPI_Init, and before MPI_Finalize once no call can run any more. */
void mg_tune__types_start(void);
void mg_tune__types_stop(void);

/* MPI_Type_size_x of type, cached (handles.h): after the first call with a
 * type, no MPI call. -1 if MPI says the size is undefined or type is not a
 * datatype (MPI raised that error, as the native call would). */
MPI_Count mg_tune__type_size(MPI_Datatype type);

#endif
