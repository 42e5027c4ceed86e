/* datatypes/cbuild.c: the datatype strategies of the collectives that do
 * not go through the mock-ups (layer dtbuild, tune_internal.h): the v and w
 * forms, the neighbourhood collectives, and every nonblocking and persistent
 * form, each with its `_c` form. One builder turns the application's
 * arguments into the native call's (normal(t), or MPI_PACKED bytes and the
 * blocks packed and unpacked around them, datatypes/pending.h); the entry
 * points (vcoll.c, nbcoll.c, pcoll.c, cbuild_entry.h) make the native call
 * with them. */
#ifndef MG_TUNE_DT_CBUILD_H
#define MG_TUNE_DT_CBUILD_H

#include "pending.h"

/* A collective call's arguments, as the application makes it (any of its
 * forms) or as the native call gets them; what a collective has not is zero.
 * MPI_Bcast's buffer, count and type are rbuf, rcount and rtype. The arrays
 * hold ints, or in the `_c` forms MPI_Count counts and MPI_Aint
 * displacements (MPI_Neighbor_alltoallw's displacements are MPI_Aint in both). */
typedef struct {
    const void *sbuf;
    void *rbuf;
    MPI_Count scount, rcount;
    const void *scounts, *sdispls, *rcounts, *rdispls;
    MPI_Datatype stype, rtype;
    const MPI_Datatype *stypes, *rtypes;
    int root;
    MPI_Comm comm;
} mg_cb_args;

/* A call being made. */
typedef struct {
    mg_cb_args n;     /* what the native call gets */
    mg_dt_coll *keep; /* its blocks and memory; NULL: none */
    int form;         /* MG_DT_BLOCKING, _NONBLOCKING, _PERSISTENT */
    mg_dt_online_mark online; /* blocking, online mode: the key of this rank's strategy, timed to the end */
} mg_cb_call;

/* Collective `kind` in `form` (wide: its `_c` form) with the application's
 * arguments a: decides the strategy (every rank alike where it is PACK),
 * counts and notes the call, and fills x->n. The native call gets the
 * application's arguments where the call stays native or this rank cannot
 * take part as decided (out of memory, MPI_BOTTOM, sizes beyond the form's
 * integers), else normal(t) or MPI_PACKED, with the send blocks packed (a
 * persistent call's are packed again at every start).
 * Callers have seen mg_tune__dt_active(). */
void mg_tune__cb_build(mg_dtcoll_kind kind, int form, int wide, const mg_cb_args *a, mg_cb_call *x);

/* After the native call returned rc (req: a nonblocking or persistent call's
 * request): a blocking call's receive blocks are unpacked, a nonblocking
 * call's too if it is already complete, else its request is tracked, as a
 * persistent call's is. Returns rc, or the first error of unpacking. */
int mg_tune__cb_done(mg_cb_call *x, int rc, MPI_Request *req);

#endif
