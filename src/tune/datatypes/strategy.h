/* datatypes/strategy.c: how one side of a call with a derived datatype moves
 * its data (layer strategy, tune_internal.h). For the entry points only. */
#ifndef MG_TUNE_DT_STRATEGY_H
#define MG_TUNE_DT_STRATEGY_H

#include "../tune_internal.h"
#include "../types.h"

/* One side (send or receive) of a call: what the native call is given in
 * place of the application's buffer, count and type. */
typedef struct {
    mg_dts s; /* NATIVE, NORMALIZED or PACK */
    int send;
    const mg_type_plan *plan;
    void *user; /* the application's buffer, count and type */
    MPI_Count ucount;
    MPI_Datatype utype;
    void *buf; /* what the native call gets */
    int count;
    MPI_Datatype type;
    mg_lease *lease; /* PACK: the stream's memory */
} mg_dt_side;

/* The calls with derived datatypes are looked at (else they go straight to
 * the native call): the library runs and a strategy other than native may be
 * forced. One atomic load or two. */
int mg_tune__dt_active(void);

/* The side of count x type at buf, with the strategy the configuration gives
 * it; NATIVE where no other applies (peer MPI_PROC_NULL, buf MPI_BOTTOM, predefined,
 * contiguous or uncommitted types, intercommunicators, an empty side, a
 * stream of more than INT_MAX bytes, out of memory). Callers have seen
 * mg_tune__dt_active(). */
enum { MG_DT_RECV, MG_DT_SEND /* packs the data now */, MG_DT_SEND_LATER /* persistent: at every start */ };
void mg_tune__dt_side(mg_dt_side *x, MPI_Comm comm, int peer, const void *buf, MPI_Count count, MPI_Datatype type,
                      int how);

/* A PACK receive unpacks what arrived (rc MPI_SUCCESS, or truncated: the bytes
 * that were received) as st says (never MPI_STATUS_IGNORE here). */
void mg_tune__dt_unpack(mg_dt_side *x, int rc, const MPI_Status *st);
/* A PACK send packs the application's data (again). */
void mg_tune__dt_repack(mg_dt_side *x);
/* The side's memory goes back. */
void mg_tune__dt_release(mg_dt_side *x);
/* After a blocking call: unpack (a receive), release. */
void mg_tune__dt_finish(mg_dt_side *x, int rc, const MPI_Status *st);

#endif
