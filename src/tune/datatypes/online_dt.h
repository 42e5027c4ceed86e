/* datatypes/online_dt.c: online mode's datatype strategies (layer dtonline,
 * tune_internal.h): the sides of the one-sided point-to-point calls learn in
 * the run which strategy is fastest for their (operation, type, bytes); and a
 * blocking collective's sides between native and normalized. For the strategy,
 * pending and dtbuild layers, the report and the lifecycle's end only. */
#ifndef MG_TUNE_DT_ONLINE_H
#define MG_TUNE_DT_ONLINE_H

#include "../tune_internal.h"
#include "../types.h"
#include <stdio.h>

/* A side's part in online mode: the strategy a key picked for it (DEFAULT:
 * none), the candidate, and where the call is timed its key and from when (ns;
 * key NULL: not timed, and counted when picked). A timed side's mark travels
 * with it, into the request of a nonblocking call. */
typedef struct {
    void *key;
    const void *owner; /* the thread's keys it belongs to: only that thread times it */
    uint64_t t0;
    int cand, timed;
    mg_dts picked;
} mg_dt_online_mark;

/* Whether op's sides learn their strategy in the run: MPI_Send, MPI_Ssend,
 * MPI_Rsend, MPI_Recv, timed by their call, and MPI_Isend, MPI_Issend,
 * MPI_Irecv, timed from their start to the return of the call that completes
 * them. */
int mg_tune__dt_online_takes(mg_dtop op);
/* The strategy this thread's key of (op, the layout of the type planned by p,
 * bytes) picks now, into *m (NATIVE where no key takes the call; m->key set
 * only where the key times the call);
 * pack among the candidates where may_pack (not for a collective: every rank
 * would have to pack alike). */
mg_dts mg_tune__dt_online_pick(mg_dt_online_mark *m, mg_dtop op, const mg_type_plan *p, MPI_Count bytes,
                               int may_pack);
/* The timed side of *m ended (after its unpacking): its time to its key, on
 * the thread that started it (elsewhere, and for a side that failed or was
 * cancelled or freed, neither its time nor its call counts). */
void mg_tune__dt_online_done(const mg_dt_online_mark *m);
/* `#@tune_online_dt` lines of every thread's keys (docs/formats.md). */
void mg_tune__dt_online_report(FILE *out);
/* MPI_Finalize: every key freed. */
void mg_tune__dt_online_stop(void);

#endif
