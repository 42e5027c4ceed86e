/* Helpers of the mock-ups for temporary buffers laid out as a datatype, and
 * the reduction's (count, datatype) (gather.c, reduce.c, reduce_scatter_block.c,
 * scan.c; allreduce.c uses the buffer part). Everything here is static inline.
 *
 * A reduction's temporary buffer must have the user's layout, because the inner
 * PMPI reduction gets the user's (count, datatype, op) unchanged: count x type
 * touches the bytes [buf + lo, buf + lo + span) (lo and span below, from the
 * type's extent, true lower bound and true extent; a negative extent is allowed),
 * so a lease of span bytes at raw serves as buf = raw - lo.
 *
 * Everything here is a pure function of a datatype and counts, so need() and
 * supports() may use it for reductions (whose datatype is uniform). */
#ifndef MG_MOCKUP_TYPED_BUF_H
#define MG_MOCKUP_TYPED_BUF_H

#include "tune_internal.h"

#include <stddef.h>
#include <stdint.h>

/* The reduction's datatype (intercept.c sets sendtype = recvtype = datatype). */
static inline MPI_Datatype mg_tb_red_type(const mg_call *c)
{
    return c->sendtype != MPI_DATATYPE_NULL ? c->sendtype : c->recvtype;
}

/* Elements of the datatype in one process's input: bytes / size(datatype)
 * (Reduce_scatter_block: the whole vector, p x recvcount). Uniform. */
static inline MPI_Count mg_tb_red_count(const mg_call *c)
{
    MPI_Count size = mg_type_bytes(1, mg_tb_red_type(c));
    return size > 0 ? c->bytes / size : 0;
}

/* 1 if the reduction mock-ups may hand the call's datatype to other reduction
 * collectives than the one called: a datatype without gaps and with true lower
 * bound 0 (predefined, contiguous, ...), or a predefined one with gaps
 * (MPI_DOUBLE_INT, ...) under a commutative op. Both MPICH 5.0 and Open MPI 5.0
 * mishandle other derived datatypes in some reductions (MPICH's
 * Reduce_scatter(_block) gives wrong results for a non-commutative op on a type
 * with gaps on power-of-two communicators; Open MPI's ring Allreduce writes past
 * its buffer for a true lower bound > 0), so a mock-up could break a call that
 * works natively. Uniform: depends on the datatype and op only. */
static inline int mg_tb_reduction_type_ok(const mg_call *c)
{
    MPI_Datatype t = mg_tb_red_type(c);
    MPI_Aint lb, extent, true_lb, true_extent;
    int ni, na, nd, combiner;
    MPI_Count size = mg_type_bytes(1, t);
    if (PMPI_Type_get_extent(t, &lb, &extent) != MPI_SUCCESS ||
        PMPI_Type_get_true_extent(t, &true_lb, &true_extent) != MPI_SUCCESS ||
        PMPI_Type_get_envelope(t, &ni, &na, &nd, &combiner) != MPI_SUCCESS || size <= 0)
        return 0;
    if (extent == size && true_extent == size && true_lb == 0)
        return 1;
    return combiner == MPI_COMBINER_NAMED && c->commutative;
}

/* Bytes spanned by count x type (0 for count 0), its lowest byte offset from
 * the buffer address in *lo; -1 if the type cannot be queried or the span
 * overflows. */
static inline MPI_Count mg_tb_span(MPI_Count count, MPI_Datatype type, MPI_Aint *lo)
{
    MPI_Aint lb, extent, true_lb, true_extent;
    *lo = 0;
    if (count <= 0)
        return count == 0 ? 0 : -1;
    if (PMPI_Type_get_extent(type, &lb, &extent) != MPI_SUCCESS ||
        PMPI_Type_get_true_extent(type, &true_lb, &true_extent) != MPI_SUCCESS || true_extent < 0)
        return -1;
    MPI_Count aext = extent < 0 ? -(MPI_Count)extent : (MPI_Count)extent;
    if (aext > 0 && count - 1 > (INT64_MAX / 4) / aext)
        return -1;
    MPI_Count step = (count - 1) * (MPI_Count)extent; /* offset of the last element */
    MPI_Count low = (MPI_Count)true_lb + (step < 0 ? step : 0);
    MPI_Count high = (MPI_Count)true_lb + (MPI_Count)true_extent + (step > 0 ? step : 0);
    if (high - low > (MPI_Count)(SIZE_MAX / 4))
        return -1;
    *lo = (MPI_Aint)low;
    return high - low;
}

/* Lease bytes of a temporary buffer for count x type (uniform if type is).
 * The lease's 64-byte alignment padding is not part of a need. */
static inline size_t mg_tb_need(MPI_Count count, MPI_Datatype type)
{
    MPI_Aint lo;
    MPI_Count span = mg_tb_span(count, type, &lo);
    return span > 0 ? (size_t)span : 0;
}

/* A temporary buffer for count x type (count > 0) from the lease; NULL if out of memory. */
static inline void *mg_tb_lease(mg_lease *l, MPI_Count count, MPI_Datatype type)
{
    MPI_Aint lo;
    MPI_Count span = mg_tb_span(count, type, &lo);
    char *raw = span > 0 ? (char *)mg_lease_msg(l, (size_t)span) : NULL;
    return raw ? raw - lo : NULL;
}

/* Address of element i x count of a buffer of type: block i of a collective. */
static inline void *mg_tb_block(const void *buf, MPI_Count i, MPI_Count count, MPI_Datatype type)
{
    MPI_Aint lb, extent;
    PMPI_Type_get_extent(type, &lb, &extent);
    return (char *)buf + (MPI_Aint)(i * count) * extent;
}

#endif
