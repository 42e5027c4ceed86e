/* datatypes/vonline.c: online mode's irregular collectives (layer vonline,
 * tune_internal.h): the blocking MPI_Allgatherv, MPI_Alltoallv, MPI_Gatherv
 * and MPI_Scatterv (and their `_c` forms) choose in the run between the
 * native call and algorithms of point-to-point calls on the library's shadow
 * of the communicator, as STAR-MPI does (Faraj, Yuan and Lowenthal 2006): no
 * profile can know their counts. And the agreement every online key of a
 * communicator ends its decision points with. For the entry points only. */
#ifndef MG_TUNE_DT_VONLINE_H
#define MG_TUNE_DT_VONLINE_H

#include "../online.h"
#include "cbuild.h"

/* The agreement of every rank at a decision point of key k on comm (the
 * maximum over the ranks, one reduction on the library's shadow of comm) and
 * the decision. */
void mg_tune__online_agree(mg_online_key *k, MPI_Comm comm);
/* Online mode, after a call of key k on comm ran candidate cand in `seconds`
 * (negative: not timed): the time to the key, and at a decision point the
 * agreement. */
static inline void mg_tune__online_finish(mg_online_key *k, int cand, double seconds, MPI_Comm comm)
{
    /* inline: a settled key's call ends in mg_online_done's inline half */
    if (mg_online_done(k, &mg_online_default_policy, cand, seconds)) mg_tune__online_agree(k, comm);
}

/* Online mode: runs the blocking irregular collective `kind` (wide: its `_c`
 * form) with the native call's arguments n as its key picks, timed, and
 * returns 1 with its return code in *rc (an error raised on n->comm as the
 * native call would); 0 where online mode does not take the call (another
 * mode, a key in no table, MPI_IN_PLACE in an MPI_Alltoallv): the caller
 * makes the native call. */
int mg_tune__vonline_run(mg_dtcoll_kind kind, const mg_cb_args *n, int wide, int *rc);

#endif
