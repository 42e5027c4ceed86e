/* datatypes/strategy.c: how one side of a call with a derived datatype moves
 * its data (layer strategy, tune_internal.h). For the entry points only. */
#ifndef MG_TUNE_DT_STRATEGY_H
#define MG_TUNE_DT_STRATEGY_H

#include "../lifecycle.h"
#include "../record.h"
#include "../tune_internal.h"
#include "../types.h"
#include "online_dt.h"

/* One side (send or receive) of a call: what the native call is given in
 * place of the application's buffer, count and type. */
typedef struct {
    mg_dts s; /* NATIVE, NORMALIZED or PACK */
    int send;
    const mg_type_plan *plan;
    void *user; /* the application's buffer, count and type */
    MPI_Count ucount;
    MPI_Datatype utype;
    void *buf;       /* what the native call gets */
    MPI_Count count; /* the application's, or the stream's bytes (at most INT_MAX) */
    MPI_Datatype type;
    mg_lease *lease; /* PACK: the stream's memory */
    mg_dt_online_mark online; /* online mode: the key that picked s, timing the side until it ends */
} mg_dt_side;

/* The calls with derived datatypes are looked at (else they go straight to
 * the native call, and are not counted): the library runs, and it records the
 * calls, or a strategy other than native may be forced or datatype profiles
 * are in use. One atomic load or two. */
static inline int mg_tune__dt_active(void)
{
    unsigned h = atomic_load_explicit(&mg_tune_hot.word, memory_order_acquire);
    if (!(h & MG_HOT_ON)) return 0;
    if (h & MG_HOT_RECORD) return 1; /* every call is recorded with its types */
    if (MG_HOT_MODE(h) == MG_TUNE_TUNED || MG_HOT_MODE(h) == MG_TUNE_ONLINE) { /* online: the profiles too */
        const mg_tune_live *l = atomic_load_explicit(&mg_tune_hot.live, memory_order_acquire);
        return l && l->ps.ndt > 0;
    }
    if (MG_HOT_MODE(h) != MG_TUNE_FORCED) return 0;
    int s = atomic_load_explicit(&mg_tune_hot.dt_forced, memory_order_relaxed);
    return s == MG_DTS_NORMALIZED || s == MG_DTS_PACK;
}

/* mg_tune__dt_active, and online mode, where the one-sided point-to-point
 * calls learn their sides' strategies in the run (online_dt.h) and the
 * irregular collectives their algorithms (vonline.h): their entry points ask
 * this; the others pay nothing for it. */
static inline int mg_tune__dt_active_online(void)
{
    unsigned h = atomic_load_explicit(&mg_tune_hot.word, memory_order_acquire);
    if ((h & MG_HOT_ON) && MG_HOT_MODE(h) == MG_TUNE_ONLINE) return 1;
    return mg_tune__dt_active();
}

/* The side of count x type at buf, with the strategy the configuration gives
 * it (forced, or the datatype profile of op), counted as op where a report is
 * requested; NATIVE where no other applies (peer MPI_PROC_NULL, buf
 * MPI_BOTTOM, predefined, contiguous or uncommitted types,
 * intercommunicators, an empty side, a stream of more than INT_MAX bytes, out
 * of memory). Callers have seen mg_tune__dt_active(). */
enum { MG_DT_RECV, MG_DT_SEND /* packs the data now */, MG_DT_SEND_LATER /* persistent: at every start */ };
void mg_tune__dt_side(mg_dt_side *x, mg_dtop op, MPI_Comm comm, int peer, const void *buf, MPI_Count count,
                      MPI_Datatype type, int how);
/* The same for the receive side of a sendrecv whose send side is lead: where online mode's key of lead
 * picked its strategy, this side takes the same one and has no key of its own (the call has one time,
 * which goes to lead's key: the two sides are chosen together). */
void mg_tune__dt_side_with(mg_dt_side *x, const mg_dt_side *lead, mg_dtop op, MPI_Comm comm, int peer,
                           const void *buf, MPI_Count count, MPI_Datatype type, int how);
/* Whether a side of this type may take a strategy other than native (the type has a plan: derived,
 * committed, not one contiguous run). A sendrecv in online mode whose types have none is the native
 * call at once (its sides would be looked at for nothing). */
int mg_tune__dt_has_plan(MPI_Datatype type);
/* Notes, for the record (record.h), side k of the call (0: the send side, 1:
 * the receive side): count x type on comm, moved by strategy s. */
void mg_tune__dt_rec_note(int k, MPI_Comm comm, MPI_Count count, MPI_Datatype type, mg_dts s);
/* Counts a call of op with this rank's bytes and strategy where a report is requested. */
void mg_tune__dt_count(mg_dtop op, MPI_Count bytes, mg_dts s);

/* A PACK receive unpacks what arrived (rc MPI_SUCCESS, or truncated: the bytes
 * that were received) as st says (never MPI_STATUS_IGNORE here). */
void mg_tune__dt_unpack(mg_dt_side *x, int rc, const MPI_Status *st);
/* A PACK send packs the application's data (again). */
void mg_tune__dt_repack(mg_dt_side *x);
/* The side's memory goes back. */
void mg_tune__dt_release(mg_dt_side *x);
/* After a blocking call: unpack (a receive), release. */
void mg_tune__dt_finish(mg_dt_side *x, int rc, const MPI_Status *st);
/* The status the native call of a receive side gets, st: the application's,
 * or one of our own where the application ignores it but a packed receive
 * must read it. */
#define MG_DT_STATUS(side, status) \
    MPI_Status own_status_, *st = (status) == MPI_STATUS_IGNORE && (side).s == MG_DTS_PACK ? &own_status_ : (status)

/* ---- collectives ----
 * NORMALIZED is a local choice: each rank hands the native call normal(t) of
 * its own types. PACK is not: every rank of the call passes MPI_PACKED, so it
 * is chosen from what all ranks share (the configuration, the communicator
 * and the message's bytes), and a rank whose types need no packing passes its
 * contiguous bytes as they lie. */

/* The strategy of a collective op on comm (NATIVE, NORMALIZED, or PACK on an
 * intracommunicator), for this rank's bytes and type (the first significant
 * one that is derived; tuned mode: its shape). `shared`: every rank has the
 * same bytes, so PACK may be chosen by size (by a profile's rules for any
 * type; never by shape). Callers have seen mg_tune__dt_active(). With
 * online (a blocking call's; else NULL), online mode learns this rank's choice
 * between native and normalized where no profile covers the type: online->key
 * is then the key to time the call for (mg_tune__dt_online_done after it). */
mg_dts mg_tune__dt_coll_strategy(mg_dtop op, MPI_Comm comm, MPI_Count bytes, int shared, MPI_Datatype type,
                                 mg_dt_online_mark *online);
/* normal(t) where t has one, else t. */
MPI_Datatype mg_tune__dt_normal(MPI_Datatype type);
/* count x type at buf to the stream (count x size bytes) and back: the
 * engine where the type has a plan, else a copy or MPI_Pack (mg_call_pack). */
int mg_tune__dt_put(const void *buf, MPI_Count count, MPI_Datatype type, void *stream, MPI_Comm comm);
int mg_tune__dt_get(const void *stream, void *buf, MPI_Count count, MPI_Datatype type, MPI_Comm comm);

#endif
