/* Small helpers shared by the mock-ups of COLL-GL1..GL10 (allgather.c,
 * allreduce.c, alltoall.c, bcast.c). Everything here is static inline. */
#ifndef MG_MOCKUP_UTIL_H
#define MG_MOCKUP_UTIL_H

#include <limits.h>
#include <stddef.h>

#include "tune_internal.h"

/* 1 if a x b (both >= 0) fits an int, computed without overflow. */
static inline int mg_mu_fits_int_prod(MPI_Count a, MPI_Count b)
{
    return a >= 0 && b >= 0 && (a == 0 || b <= INT_MAX / a);
}

/* Extent of a datatype; returns the MPI error code. */
static inline int mg_mu_extent(MPI_Datatype type, MPI_Aint *extent)
{
    MPI_Aint lb;
    return PMPI_Type_get_extent(type, &lb, extent);
}

/* Where the packed bytes of count x type at buf already lie in the user's
 * buffer: buf + the type's true lower bound when count x type is one gap-free
 * run in typemap order (mg_type_contiguous), else NULL (pack into the lease).
 * The data-moving mock-ups send and receive MPI_BYTE only, so this rank-local
 * property changes where a rank's bytes are, never which calls it makes. The
 * result is writable only if buf is (a receive buffer). */
static inline char *mg_mu_direct(const void *buf, MPI_Count count, MPI_Datatype type)
{
    MPI_Aint offset;
    return mg_type_contiguous(count, type, &offset) ? (char *)buf + offset : NULL;
}

/* Counts and displacements of a regular call expressed as a v-variant:
 * block i holds n elements at displacement i x n (elements). */
static inline void mg_mu_regular_v(int p, int n, int *counts, int *displs)
{
    for (int i = 0; i < p; i++) {
        counts[i] = n;
        displs[i] = i * n;
    }
}

#endif
