/* datatypes/pending.c: the packed sides of nonblocking and persistent calls,
 * point-to-point and collective, finished by the completion calls, and the
 * sides online mode times until then (layer pending, tune_internal.h). */
#ifndef MG_TUNE_DT_PENDING_H
#define MG_TUNE_DT_PENDING_H

#include "strategy.h"

/* Whether any request has a packed or timed side: when not, the completion
 * calls go straight to the native ones. One atomic load. */
int mg_tune__dt_any_pending(void);

/* req carries the packed or timed side x (taken over: x is finished, and
 * timed, when req completes; finished untimed when it is freed). persistent: Send_init/Recv_init, whose
 * side stays with the request and packs again at every start. On failure
 * (out of memory) x is finished at once: the caller must then have waited. */
int mg_tune__dt_track(MPI_Request req, mg_dt_side *x, int persistent);

/* ---- collectives ----
 * A nonblocking or persistent collective (and a blocking one, for the time of
 * its call) keeps what it packs and unpacks as blocks, each count elements of
 * a type in the application's buffer and their bytes in a stream: the send
 * blocks (and, with MPI_IN_PLACE, the blocks MPI sends from the receive
 * buffer) are packed when the operation starts, the receive blocks unpacked
 * when it completes. */
typedef struct {
    char *user;              /* the block in the application's buffer */
    MPI_Count count;         /* elements of its type */
    const mg_type_plan *plan; /* held; NULL: the bytes are a run at user + run (predefined or contiguous types) */
    MPI_Datatype type;       /* without a plan or a run: a predefined type, packed by MPI */
    MPI_Aint run;            /* -1: no run */
    MPI_Count bytes;
    char *stream; /* where its bytes go */
} mg_dt_block;

/* A collective's blocks (put: [0, nput), got: [nput, nput + nget)) and the
 * memory of everything the native call is given (streams, counts,
 * displacements, types), which stays until the operation completes (a
 * persistent one: until its request is freed). */
typedef struct {
    mg_dt_block *blocks;
    int nput, nget;
    mg_lease *lease; /* a blocking call's memory; NULL: malloc'ed with the request's entry */
} mg_dt_coll;

/* A collective's blocks and `bytes` more (64-byte aligned, in *mem): from a
 * lease for a blocking call (its memory is short-lived), else malloc'ed with
 * what tracking its request needs, so that tracking cannot fail. NULL if out
 * of memory. */
mg_dt_coll *mg_tune__dt_coll_new(size_t bytes, int blocking, char **mem);
/* Packs the put blocks (at the start of the operation). MPI_SUCCESS or the
 * first error. */
int mg_tune__dt_coll_put(const mg_dt_coll *c);
/* Unpacks the got blocks (when the operation completed). */
int mg_tune__dt_coll_get(const mg_dt_coll *c);
/* The plans let go and the memory freed (an untracked collective's). */
void mg_tune__dt_coll_free(mg_dt_coll *c);
/* req, the request of a started nonblocking collective or of a persistent
 * one, takes over c (made by mg_tune__dt_coll_new, not blocking): its got
 * blocks are unpacked on whichever call completes it, and a persistent
 * request's put blocks packed at every start. */
void mg_tune__dt_track_coll(MPI_Request req, mg_dt_coll *c, int persistent);

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

/* rc, after the orphans' progress: the end of an entry point that made its MPI call (one atomic load when
 * there is no orphan). */
static inline int mg_tune__dt_with_orphans(int rc)
{
    mg_tune__dt_progress_orphans(0);
    return rc;
}

#endif
