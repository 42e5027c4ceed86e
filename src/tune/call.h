/* call.c: what intercept.c learns about a call before it chooses (top layer). */
#ifndef MG_TUNE_CALL_H
#define MG_TUNE_CALL_H

#include "comms.h"
#include "tune_internal.h"

/* The uniform message size of the call (mockup_api.h: mg_call.bytes), -1 if
 * it overflows or a count is negative. Reduce_scatter_block's sendcount
 * becomes the whole vector. Needs c->size. */
MPI_Count mg_tune__message_bytes(mg_call *c);
/* Sets c->block and c->mismatch (mockup_api.h). Needs c->rank. */
void mg_tune__local_blocks(mg_call *c);
/* 1 if this rank's arguments are erroneous in a way the native call reports
 * before it communicates (root out of range, no op, a negative count, an
 * uncommitted datatype, a NULL buffer for data at address 0, send and
 * receive data in the same place): the call then runs natively. Needs
 * c->rank, c->size and the blocks. */
int mg_tune__locally_erroneous(const mg_call *c);
/* 1 if buf is NULL for count > 0 elements of t whose data would start at
 * address 0 (MPI_BOTTOM with absolute addresses is legal): MPI_ERR_BUFFER
 * in MPICH and Open MPI alike. */
int mg_tune__missing_buffer(const void *buf, MPI_Count count, MPI_Datatype t);

#endif
