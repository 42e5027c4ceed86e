/* The mock-ups' API: everything a mock-up (mockups/<collective>.c, one file per
 * collective) may use, and the only project header it includes. The library
 * hands a mock-up one mg_call and one lease per call; the mock-up answers
 * through its table (mg_mockup). Nothing else of the library is visible here.
 *
 * Rules every mock-up keeps (docs/tuning.md):
 *  - It returns exactly what the native collective returns, bit for bit, for
 *    every argument its `supports` accepts; inner calls are PMPI_ calls only.
 *  - `supports` and `need` look only at values every rank of the call agrees on
 *    (the mg_call fields marked "uniform"), so that all ranks make the same
 *    choice. A rank-local property (a datatype's layout, MPI_IN_PLACE on one
 *    rank) may change what a rank does locally, never which calls it makes.
 *  - Data-moving collectives work on packed bytes (mg_call_pack/unpack), so any
 *    datatype works, and different datatypes with the same signature on
 *    different ranks work. Reductions pass (count, datatype, op) to inner PMPI
 *    reductions unchanged, in an order that keeps non-commutative ops exact,
 *    and every reduction mock-up refuses what mg_reduction_supported refuses
 *    (floating-point MPI_SUM/MPI_PROD, whose rounding depends on the grouping;
 *    datatypes the inner reductions mishandle).
 *  - A reduction mock-up calls a user-defined op on the elements the program
 *    passed only, at most as many per call as the native call could (never
 *    on padding: mg_padding_allowed), and regroups floating-point data only
 *    where the configuration allows it (mg_reduction_supported).
 *  - Data-moving mock-ups move blocks of `block` bytes, and on a rank whose
 *    own arguments disagree (`mismatch`) they send zeros instead of its data
 *    and never write its receive buffer: no write goes beyond what the
 *    receive arguments describe, and a length that differs between ranks
 *    surfaces as an inner call's error where MPI sees it.
 *  - Once it has made its first inner call, a mock-up makes all of them, even
 *    after one failed, and returns the first error: a rank that left early
 *    would leave the others waiting in the next inner call.
 *  - Extra memory comes from the call's lease (mg_lease_msg, mg_lease_ints);
 *    the caller releases the lease after `run` on every path. Errors of inner
 *    calls are returned; the caller raises the first on the application's
 *    communicator (the inner calls run on its shadow, whose handler returns
 *    errors unless the application's ends the job).
 *
 * Implemented by: pool.c (the lease), types.c (mg_type_bytes and
 * mg_type_contiguous, cached per type; mg_type_combiner), mockups/common.c
 * (the helpers that need more code); the static inline helpers are below. */
#ifndef MG_MOCKUP_API_H
#define MG_MOCKUP_API_H

#include <limits.h>
#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

typedef enum {
    MG_COLL_ALLGATHER,
    MG_COLL_ALLREDUCE,
    MG_COLL_ALLTOALL,
    MG_COLL_BCAST,
    MG_COLL_GATHER,
    MG_COLL_REDUCE,
    MG_COLL_REDUCE_SCATTER_BLOCK,
    MG_COLL_SCAN,
    MG_COLL_SCATTER,
    MG_NCOLLS
} mg_coll;

/* One intercepted call in large-count form (the int entry points widen).
 * Fields a collective does not take are 0 / NULL / MPI_DATATYPE_NULL. */
typedef struct {
    mg_coll coll;
    const void *sendbuf; /* may be MPI_IN_PLACE */
    void *recvbuf;       /* MPI_IN_PLACE never appears here (Scatter's root passes it as recvbuf: see in_place) */
    MPI_Count sendcount, recvcount;
    MPI_Datatype sendtype, recvtype;
    MPI_Op op;       /* reductions; uniform */
    int root;        /* rooted collectives; uniform */
    MPI_Comm comm;   /* run(): its shadow, where the inner calls go; supports() and need(): the application's */
    int rank, size;  /* of comm; size uniform */
    int in_place;    /* this rank passed MPI_IN_PLACE (send side, or Scatter's recvbuf at the root); NOT uniform */
    MPI_Count bytes; /* uniform: the per-process block in bytes (below) */
    int commutative; /* reductions: MPI_Op_commutative(op); uniform */
    MPI_Count chunk; /* uniform (the configuration): C of the chunked round-robin mock-ups (GL7, GL16), elements */
    int regroup;     /* uniform (the configuration): floating-point reductions may be regrouped (allow_regrouping) */
    MPI_Count block; /* data-moving collectives: the bytes per block this rank moves; = bytes if correct (below) */
    int mismatch;    /* this rank's send and receive blocks differ: an erroneous call (below) */
} mg_call;

/* `bytes`, the message size every rank agrees on and profiles are keyed by:
 *   Allgather, Alltoall:    one block: sendcount x size(sendtype), or recvcount x size(recvtype) with MPI_IN_PLACE
 *   Allreduce, Reduce, Scan, Reduce_scatter_block (recvcount per rank x p for RSB is the whole vector):
 *                           count x size(datatype) of one process's input (RSB: recvcount x size x p)
 *   Bcast:                  count x size(datatype)
 *   Gather:                 the block each process sends: sendcount x size(sendtype); at a root with
 *                           MPI_IN_PLACE, recvcount x size(recvtype)
 *   Scatter:                the block each process receives: recvcount x size(recvtype); at a root with
 *                           MPI_IN_PLACE, sendcount x size(sendtype)
 * All are equal on every rank of a correct program (matching type signatures).
 *
 * `block` and `mismatch` (data-moving collectives; 0 for the reductions): a
 * rank's own arguments give a send block S and a receive block R (where one
 * side is not significant, as at Gather's and Scatter's non-roots or with
 * MPI_IN_PLACE, the other's). In a correct program S = R = bytes on every
 * rank. A rank with S != R has erroneous arguments (`mismatch`); the other
 * ranks cannot know, so it still makes every inner call, with `block` bytes per
 * block: the side that the other ranks' arguments also describe when only this
 * rank's are wrong (Allgather, Scatter: R; Alltoall, Gather: S), so that the
 * inner calls agree where they can. It sends zeros for its own data, never
 * writes its receive buffer, and the library returns MPI_ERR_TRUNCATE there if
 * no inner call reported an error.
 *
 * The fields per collective (intercept.c fills them; arguments that are not
 * significant on a rank are passed through untouched and must not be used):
 *   Allgather, Alltoall, Gather, Scatter: the arguments as given (sendbuf may be
 *       MPI_IN_PLACE; for Scatter at a root with MPI_IN_PLACE, recvbuf is NULL,
 *       in_place is 1 and recvcount/recvtype are as given but not significant)
 *   Allreduce, Reduce, Scan: sendcount = recvcount = count, sendtype = recvtype = datatype
 *   Reduce_scatter_block: recvcount = recvcount, sendcount = recvcount x size (the
 *       whole vector), sendtype = recvtype = datatype
 *   Bcast: sendbuf = recvbuf = buffer, sendcount = recvcount = count, sendtype = recvtype = datatype
 *
 * Before any mock-up sees a call, intercept.c has checked (uniform values only):
 * comm is an intracommunicator of size >= 2, bytes > 0, and the counts fit an
 * int: bytes for the data-moving collectives (mock-ups work on packed bytes, and
 * no count exceeds bytes), sendcount and recvcount for the reductions. Products
 * such as size x bytes are the mock-up's `supports` to check (mg_fits_int). */

/* A lease on the pools for one call: sub-allocations are bump-allocated and
 * all returned at once. If another thread holds the pool (MPI_THREAD_MULTIPLE),
 * the lease falls back to malloc so that the choice stays the same on all
 * ranks; mg_lease_msg/mg_lease_ints return NULL only if that fails too.
 * Every sub-allocation starts on a 64-byte boundary; a piece that does not fit
 * the rest of the pool (the padding to 64 bytes is not part of mg_need) is
 * malloc'ed, so a need() that is the sum of the requested sizes is enough.
 * A request of 0 bytes returns a valid, non-NULL pointer. */
typedef struct mg_lease mg_lease;
mg_lease *mg_lease_acquire(size_t msg_bytes, size_t int_bytes); /* NULL: out of memory */
void *mg_lease_msg(mg_lease *l, size_t bytes);                  /* 64-byte aligned, from the message pool */
int *mg_lease_ints(mg_lease *l, size_t count);                  /* from the int pool */
void mg_lease_release(mg_lease *l);

/* Extra memory of a mock-up for this call (Hunold and Carpen-Amarie 2018,
 * Table 1, in bytes), the maximum over the roles (root or not) so that every
 * rank computes the same value. */
typedef struct {
    size_t msg_bytes;
    size_t int_bytes;
} mg_need;

typedef struct {
    const char *name;    /* e.g. "allgather_as_gather_bcast" (PGMPITuneLib's name where it has one) */
    int guideline;       /* n of COLL-GLn (Hunold and Carpen-Amarie 2018, Section 3.1) */
    const char *formula; /* "MPI_Gather + MPI_Bcast" */
    /* 1 if this mock-up can produce the exact native result for the call; uniform inputs only. */
    int (*supports)(const mg_call *c);
    mg_need (*need)(const mg_call *c);
    /* Runs the composition; returns MPI_SUCCESS or the first inner error code. */
    int (*run)(const mg_call *c, mg_lease *lease);
} mg_mockup;

/* The mock-ups of one collective: each mockups/<collective>.c defines one of
 * the tables below with MG_COLL_MOCKUPS, which counts its list. */
typedef struct {
    mg_coll coll;
    const char *name;     /* "allgather" */
    const char *mpi_name; /* "MPI_Allgather" */
    int nmockups;
    const mg_mockup *mockups;
} mg_coll_mockups;

#define MG_COLL_MOCKUPS(coll, name, mpi_name, list)                                 \
    {                                                                               \
        (coll), (name), (mpi_name), (int)(sizeof(list) / sizeof((list)[0])), (list) \
    }

extern const mg_coll_mockups mg_allgather_mockups, mg_allreduce_mockups, mg_alltoall_mockups, mg_bcast_mockups,
    mg_gather_mockups, mg_reduce_mockups, mg_reduce_scatter_block_mockups, mg_scan_mockups, mg_scatter_mockups;

/* Size in bytes of count x type, or -1 if it overflows MPI_Count or the size
 * is undefined (types.c: cached per type). */
MPI_Count mg_type_bytes(MPI_Count count, MPI_Datatype type);
/* The combiner of type (MPI_COMBINER_NAMED, ...), or -1 if type is not a
 * datatype. Asked with MPI_Type_get_envelope_c where the stack has it: a type
 * made by a large-count (`_c`) constructor cannot be asked otherwise (types.c). */
int mg_type_combiner(MPI_Datatype type);
/* 1 if type is predefined (named or an f90 parameterized type): no attribute,
 * never freed, and its handle from MPI_Type_get_contents must not be freed. */
int mg_type_predefined(MPI_Datatype type);

/* ---- helpers (mockups/common.c) ---- */

/* 1 if every inner count of a composition fits an int (the mock-ups call the int PMPI functions). */
int mg_fits_int(MPI_Count n);
/* 1 if count x type is one gap-free run of count x size bytes in typemap order,
 * starting at buf + *offset (the type's true lower bound), so that a memcpy is
 * its pack; 0 if not known to be (then pack). Predefined types and
 * dup/contiguous/resized/(h)vector nests of them are recognized. */
int mg_type_contiguous(MPI_Count count, MPI_Datatype type, MPI_Aint *offset);
/* Packs count x type at buf into out (exactly count x size bytes), or copies
 * directly when the type is contiguous; unpack is the inverse. */
int mg_call_pack(const void *buf, MPI_Count count, MPI_Datatype type, void *out, MPI_Comm comm);
int mg_call_unpack(const void *in, void *buf, MPI_Count count, MPI_Datatype type, MPI_Comm comm);
/* 1 if a reduction mock-up may take the call: the one rule every reduction
 * mock-up (allreduce, reduce, reduce_scatter_block, scan) applies in its
 * supports(), a function of the reduction's (datatype, op) and of the
 * configuration only, so the refusal is uniform (mockups/reduction_rule.c):
 *  - exactness: integer data with any op (MPI_SUM and MPI_PROD on the integer
 *    types valid for them; under Open MPI from 32 bits on); floating-point or
 *    complex data only if c->regroup (allow_regrouping), whatever the op, user
 *    ops included; long double data and unknown types never;
 *  - layout: a datatype without gaps and with true lower bound 0, or a
 *    predefined one with gaps (MPI_DOUBLE_INT, ...) under a commutative op,
 *    because MPI libraries mishandle other derived datatypes in some of the
 *    reductions the mock-ups call. */
int mg_reduction_supported(const mg_call *c);
/* 1 if a composition may combine padding elements with the op: only a
 * predefined op. A user-defined op sees only elements the program passed. */
int mg_padding_allowed(const mg_call *c);
/* Copies count x type from src to dst, both laid out as the type (for reductions' local copies). */
int mg_copy_typed(const void *src, void *dst, MPI_Count count, MPI_Datatype type);
/* The widest unsigned integer type whose words divide `bytes`, and their
 * count (bytes fits an int): an MPI_BOR over zero-filled blocks gives the same
 * bits at any width, and MPI libraries reduce words several times faster
 * than bytes. A function of `bytes` alone, so uniform where bytes is; the
 * buffer must be 8-byte aligned (a lease's is). */
MPI_Datatype mg_or_words(MPI_Count bytes, int *count);
/* Chunked round-robin distribution of n elements over p processes in chunks of C
 * elements (Hunold and Carpen-Amarie 2018, Appendix A, GL7/GL16): counts[i] elements for process i,
 * displs[i] offsets. */
void mg_round_robin_counts(MPI_Count n, int p, MPI_Count chunk, int *counts, int *displs);

/* ---- static inline helpers ----
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
 * for reductions (whose datatype is uniform). */

/* The first error of two steps (the second runs whatever the first gave). */
static inline int mg_first_error(int first, int second) { return first != MPI_SUCCESS ? first : second; }

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
