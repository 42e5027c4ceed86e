/* Helpers shared by the mock-ups (mockups/<collective>.c); everything here is
 * static inline. The helpers that need more code (packing, typed copies, the
 * round-robin distribution, the reduction rule) are in common.c and declared
 * in tune_internal.h.
 *
 * Counts and layouts:
 *   mg_fits_int_product   p x bytes fits an int (the inner PMPI calls take ints)
 *   mg_type_extent        a datatype's extent
 *   mg_contiguous_run     where the packed bytes of a user buffer already lie, if they do
 *   mg_regular_v_layout   counts and displacements of a regular call as a v-variant
 *
 * Reductions:
 *   mg_red_type, mg_red_count   the reduction's datatype and element count
 *   mg_typed_span, mg_typed_need, mg_typed_lease, mg_typed_block
 *                               temporary buffers laid out as the user's datatype
 *
 * A reduction's temporary buffer must have the user's layout, because the inner
 * PMPI reduction gets the user's (count, datatype, op) unchanged: count x type
 * touches the bytes [buf + lo, buf + lo + span) (lo and span from the type's
 * extent, true lower bound and true extent; a negative extent is allowed), so
 * a lease of span bytes at raw serves as buf = raw - lo. These are pure
 * functions of a datatype and counts, so need() and supports() may use them
 * for reductions (whose datatype is uniform). Whether a reduction mock-up may
 * run at all is mg_reduction_supported (common.c). */
#ifndef MG_MOCKUP_HELPERS_H
#define MG_MOCKUP_HELPERS_H

#include "tune_internal.h"

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

/* ---- counts and layouts ---- */

/* 1 if a x b (both >= 0) fits an int, computed without overflow. */
static inline int mg_fits_int_product(MPI_Count a, MPI_Count b)
{
    return a >= 0 && b >= 0 && (a == 0 || b <= INT_MAX / a);
}

/* Extent of a datatype; returns the MPI error code. */
static inline int mg_type_extent(MPI_Datatype type, MPI_Aint *extent)
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
static inline char *mg_contiguous_run(const void *buf, MPI_Count count, MPI_Datatype type)
{
    MPI_Aint offset;
    return mg_type_contiguous(count, type, &offset) ? (char *)buf + offset : NULL;
}

/* Counts and displacements of a regular call expressed as a v-variant:
 * block i holds n elements at displacement i x n (elements). */
static inline void mg_regular_v_layout(int p, int n, int *counts, int *displs)
{
    for (int i = 0; i < p; i++) {
        counts[i] = n;
        displs[i] = i * n;
    }
}

/* ---- reductions ---- */

/* The reduction's datatype (intercept.c sets sendtype = recvtype = datatype). */
static inline MPI_Datatype mg_red_type(const mg_call *c)
{
    return c->sendtype != MPI_DATATYPE_NULL ? c->sendtype : c->recvtype;
}

/* Elements of the datatype in one process's input: bytes / size(datatype)
 * (Reduce_scatter_block: the whole vector, p x recvcount). Uniform. */
static inline MPI_Count mg_red_count(const mg_call *c)
{
    MPI_Count size = mg_type_bytes(1, mg_red_type(c));
    return size > 0 ? c->bytes / size : 0;
}

/* Bytes spanned by count x type (0 for count 0), its lowest byte offset from
 * the buffer address in *lo; -1 if the type cannot be queried or the span
 * overflows. */
static inline MPI_Count mg_typed_span(MPI_Count count, MPI_Datatype type, MPI_Aint *lo)
{
    MPI_Aint lb, extent, true_lb, true_extent;
    *lo = 0;
    if (count <= 0) return count == 0 ? 0 : -1;
    if (PMPI_Type_get_extent(type, &lb, &extent) != MPI_SUCCESS ||
        PMPI_Type_get_true_extent(type, &true_lb, &true_extent) != MPI_SUCCESS || true_extent < 0)
        return -1;
    MPI_Count aext = extent < 0 ? -(MPI_Count)extent : (MPI_Count)extent;
    if (aext > 0 && count - 1 > (INT64_MAX / 4) / aext) return -1;
    MPI_Count step = (count - 1) * (MPI_Count)extent; /* offset of the last element */
    MPI_Count low = (MPI_Count)true_lb + (step < 0 ? step : 0);
    MPI_Count high = (MPI_Count)true_lb + (MPI_Count)true_extent + (step > 0 ? step : 0);
    if (high - low > (MPI_Count)(SIZE_MAX / 4)) return -1;
    *lo = (MPI_Aint)low;
    return high - low;
}

/* Lease bytes of a temporary buffer for count x type (uniform if type is).
 * The lease's 64-byte alignment padding is not part of a need. */
static inline size_t mg_typed_need(MPI_Count count, MPI_Datatype type)
{
    MPI_Aint lo;
    MPI_Count span = mg_typed_span(count, type, &lo);
    return span > 0 ? (size_t)span : 0;
}

/* A temporary buffer for count x type (count > 0) from the lease; NULL if out of memory. */
static inline void *mg_typed_lease(mg_lease *l, MPI_Count count, MPI_Datatype type)
{
    MPI_Aint lo;
    MPI_Count span = mg_typed_span(count, type, &lo);
    char *raw = span > 0 ? (char *)mg_lease_msg(l, (size_t)span) : NULL;
    return raw ? raw - lo : NULL;
}

/* Address of element i x count of a buffer of type: block i of a collective. */
static inline void *mg_typed_block(const void *buf, MPI_Count i, MPI_Count count, MPI_Datatype type)
{
    MPI_Aint extent;
    mg_type_extent(type, &extent);
    return (char *)buf + (MPI_Aint)(i * count) * extent;
}

#endif
