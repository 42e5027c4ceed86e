/* What datatypes/collectives.c and datatypes/neighbor.c share (layer dtcoll). */
#ifndef MG_TUNE_DT_COLL_UTIL_H
#define MG_TUNE_DT_COLL_UTIL_H

#include "strategy.h"

static inline int rank_of(MPI_Comm comm)
{
    int r = -1;
    PMPI_Comm_rank(comm, &r);
    return r;
}

static inline int size_of(MPI_Comm comm)
{
    int p = 0;
    PMPI_Comm_size(comm, &p);
    return p;
}

/* Counts a call of op on comm (this rank's bytes, the strategy decided) where a
 * report is requested and one of its significant types is a committed derived
 * one; notes its size, bytes and types (a, the send side's; b, the receive
 * side's) for the record. */
static inline void count_call(MPI_Comm comm, mg_dtop op, MPI_Datatype a, MPI_Datatype b, MPI_Count bytes, mg_dts s)
{
    if (mg_tune__rec_active()) {
        /* the types' plans and the size (count 1: the bytes are the call's, noted first) */
        mg_tune__rec_note_size(-1, bytes);
        mg_tune__dt_rec_note(0, comm, 1, a, s);
        mg_tune__dt_rec_note(1, comm, 1, b, s);
    }
    if ((atomic_load_explicit(&mg_tune_hot.word, memory_order_relaxed) & MG_HOT_COUNT) &&
        (mg_tune__type_is_committed(a) || mg_tune__type_is_committed(b)))
        mg_tune__dt_count(op, bytes, s);
}

/* The type whose shape a datatype profile looks at: the first derived one. */
static inline MPI_Datatype derived_of(MPI_Datatype a, MPI_Datatype b) { return mg_tune__type_is_committed(a) ? a : b; }

/* 1 if count > 0 elements lie at MPI_BOTTOM (NULL): absolute addresses,
 * which the engine does not take, or a missing buffer, which MPI reports.
 * Either way this rank makes a PACK call with its own arguments (a typed
 * block and its MPI_PACKED bytes are the same message). */
static inline int at_bottom(const void *buf, MPI_Count count)
{
    return count > 0 && (buf == MPI_BOTTOM || buf == NULL);
}

/* n bytes from the lease, NULL if out of memory. An empty block's address is
 * never used, but is not NULL either. */
static inline char *piece(mg_lease *l, size_t n)
{
    if (!l) return NULL;
    return n > 0 ? (char *)mg_lease_msg(l, n) : (char *)l;
}

static inline void release(mg_lease *l)
{
    if (l) mg_lease_release(l);
}

#endif
