/* datatypes/pending.c: the packed sides of nonblocking and persistent calls,
 * finished by the completion calls (layer pending, tune_internal.h). */
#ifndef MG_TUNE_DT_PENDING_H
#define MG_TUNE_DT_PENDING_H

#include "strategy.h"

/* Whether any request has a packed side: when not, the completion calls go
 * straight to the native ones. One atomic load. */
int mg_tune__dt_any_pending(void);

/* req carries the packed side x (taken over: x is finished when req
 * completes, or when it is freed). persistent: Send_init/Recv_init, whose
 * side stays with the request and packs again at every start. On failure
 * (out of memory) x is finished at once: the caller must then have waited. */
int mg_tune__dt_track(MPI_Request req, mg_dt_side *x, int persistent);

/* The packed side of the live request req, NULL if it has none. A completion
 * call takes it before the native call: once MPI frees req, another thread
 * may get the same handle for a new request at once. */
typedef struct mg_dt_pending mg_dt_pending;
mg_dt_pending *mg_tune__dt_pending_of(MPI_Request req);

/* Before the native MPI_Start/MPI_Startall of req: a persistent packed send
 * packs the application's data again. */
void mg_tune__dt_before_start(MPI_Request req);

/* After the native completion call said the operation of p (taken before the
 * call) is complete with status st and return code rc: a packed receive
 * unpacks (not if cancelled), and a request that is gone (now
 * MPI_REQUEST_NULL) lets its side go. */
void mg_tune__dt_completed(mg_dt_pending *p, MPI_Request now, int rc, const MPI_Status *st);

/* An inspection (MPI_Request_get_status and its array forms) said the
 * operation of req is complete with status st and return code rc (a
 * truncated receive too): a packed receive unpacks once. */
void mg_tune__dt_peeked(MPI_Request req, int rc, const MPI_Status *st);

/* MPI_Request_free of a request with a packed side: an inactive persistent
 * request is freed natively; one whose operation is in flight becomes an
 * orphan, kept (with its stream) until the operation is seen complete. */
int mg_tune__dt_free(MPI_Request *req);

/* Orphans whose operation has completed let go (receives are unpacked): at
 * the end of every intercepted communication, probe and completion call, and
 * (waiting for them) at MPI_Finalize. */
void mg_tune__dt_progress_orphans(int wait);

#endif
