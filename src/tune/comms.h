/* comms.c: the library's own communicators (layer comms, tune_internal.h). */
#ifndef MG_TUNE_COMMS_H
#define MG_TUNE_COMMS_H

#include "lifecycle.h"
#include <mpi.h>

/* After MPI_Init and before MPI_Finalize (MPI_COMM_WORLD's shadow is freed there). */
void mg_tune__comms_start(void);
void mg_tune__comms_stop(void);
/* A duplicate of MPI_COMM_SELF with MPI_ERRORS_RETURN, for checks whose
 * failure must not reach an application's error handler; MPI_COMM_NULL if it
 * could not be made. */
MPI_Comm mg_tune__probe_comm(void);
/* The shadow of the application's intracommunicator comm, on which a mock-up
 * makes its inner calls; made at the first call (collective over comm: every
 * rank runs the same mock-up). Its error handler returns errors, unless comm's
 * ends the job (MPI_ERRORS_ARE_FATAL, MPI_ERRORS_ABORT): then so does the
 * shadow's. Returns the MPI error code, already raised on comm. */
int mg_tune__shadow_comm(MPI_Comm comm, MPI_Comm *shadow);

/* What every call asks about its communicator, cached (handles.h): looked up
 * without an MPI call after the first call on comm. NULL if comm is not a
 * valid communicator (or memory ran out): ask MPI. */
typedef struct {
    int inter, size;
} mg_comm_info;
const mg_comm_info *mg_tune__comm_info(MPI_Comm comm);
/* The profile of (coll, the communicator's size) in the profile set in use,
 * NULL if none: looked up once per communicator and set. Lock-free. */
const mg_tune_profile *mg_tune__comm_profile(const mg_comm_info *info, mg_coll coll);

/* The online keys of the communicator of info (online.h), made by the first
 * call that asks (out of memory, the job is aborted: online.h). */
struct mg_online_table;
struct mg_online_table *mg_tune__comm_online(const mg_comm_info *info);

#endif
