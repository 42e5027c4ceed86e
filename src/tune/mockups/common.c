/* Helpers of the mock-ups (mockup_api.h): sizes, packing of user buffers
 * into bytes and back, typed copies, the chunked round-robin distribution. */
#define _POSIX_C_SOURCE 200809L
#include "mockup_api.h"
#include <limits.h>
#include <stdlib.h>
#include <string.h>

MPI_Count mg_type_bytes(MPI_Count count, MPI_Datatype type)
{
    if (count < 0 || type == MPI_DATATYPE_NULL) return -1;
    MPI_Count size = 0, r;
    if (PMPI_Type_size_x(type, &size) != MPI_SUCCESS || size == MPI_UNDEFINED || size < 0) return -1;
    if (__builtin_mul_overflow(count, size, &r)) return -1;
    return r;
}

int mg_fits_int(MPI_Count n) { return n >= 0 && n <= INT_MAX; }

/* Envelope and contents of a type with at most 3 ints, 2 addresses, no large
 * counts and one inner type (the combiners recognized below); 0 otherwise. */
static int small_contents(MPI_Datatype t, int *comb, int ints[3], MPI_Aint aints[2], MPI_Datatype *inner)
{
#ifdef MG_HAVE_MPI_LARGE_COUNT
    MPI_Count ni, na, nc, nd, unused[1];
    if (PMPI_Type_get_envelope_c(t, &ni, &na, &nc, &nd, comb) != MPI_SUCCESS) return 0;
    if (*comb == MPI_COMBINER_NAMED) return 1;
    if (nc != 0 || ni > 3 || na > 2 || nd != 1) return 0;
    if (PMPI_Type_get_contents_c(t, ni, na, 0, nd, ints, aints, unused, inner) != MPI_SUCCESS) return 0;
#else
    int ni, na, nd;
    if (PMPI_Type_get_envelope(t, &ni, &na, &nd, comb) != MPI_SUCCESS) return 0;
    if (*comb == MPI_COMBINER_NAMED) return 1;
    if (ni > 3 || na > 2 || nd != 1) return 0;
    if (PMPI_Type_get_contents(t, ni, na, nd, ints, aints, inner) != MPI_SUCCESS) return 0;
#endif
    return 1;
}

static int is_named(MPI_Datatype t)
{
    int comb = MPI_COMBINER_NAMED;
#ifdef MG_HAVE_MPI_LARGE_COUNT
    MPI_Count ni, na, nc, nd;
    PMPI_Type_get_envelope_c(t, &ni, &na, &nc, &nd, &comb);
#else
    int ni, na, nd;
    PMPI_Type_get_envelope(t, &ni, &na, &nd, &comb);
#endif
    return comb == MPI_COMBINER_NAMED;
}

/* 1 if one element of t is a gap-free run of size bytes in typemap order
 * starting at its true lower bound. Conservative: 0 when not sure. */
static int one_run(MPI_Datatype t, int depth)
{
    int comb, ints[3] = {0, 0, 0};
    MPI_Aint aints[2] = {0, 0};
    MPI_Datatype inner = MPI_DATATYPE_NULL;
    MPI_Count size, lb, ext, tlb, text;
    if (PMPI_Type_size_x(t, &size) != MPI_SUCCESS || size == MPI_UNDEFINED) return 0;
    if (size == 0) return 1;
    if (PMPI_Type_get_true_extent_x(t, &tlb, &text) != MPI_SUCCESS || text != size) return 0;
    if (depth > 16 || !small_contents(t, &comb, ints, aints, &inner)) return 0;
    /* A predefined type with size == true extent: one block (pair types like
     * MPI_SHORT_INT have a hole and were rejected above). */
    if (comb == MPI_COMBINER_NAMED) return 1;

    int r = 0, inner_run = one_run(inner, depth + 1);
    MPI_Count isize = 0;
    int ok = inner_run && PMPI_Type_size_x(inner, &isize) == MPI_SUCCESS &&
             PMPI_Type_get_extent_x(inner, &lb, &ext) == MPI_SUCCESS;
    /* copies of inner back to back are one run iff its extent is its size */
    int packs_tight = ok && ext == isize;
    switch (comb) {
    case MPI_COMBINER_DUP:
    case MPI_COMBINER_RESIZED: r = inner_run; break;
    case MPI_COMBINER_CONTIGUOUS: r = ok && (ints[0] <= 1 || packs_tight); break;
    case MPI_COMBINER_VECTOR: /* count, blocklength, stride (in extents) */
        r = ok && ((ints[0] <= 1 && ints[1] <= 1) || (packs_tight && (ints[0] <= 1 || ints[1] == ints[2])));
        break;
    case MPI_COMBINER_HVECTOR: /* count, blocklength; stride in bytes */
        r = ok && ((ints[0] <= 1 && ints[1] <= 1) ||
                   (packs_tight && (ints[0] <= 1 || aints[0] == (MPI_Aint)ints[1] * (MPI_Aint)ext)));
        break;
    default: r = 0; break;
    }
    if (!is_named(inner)) PMPI_Type_free(&inner);
    return r;
}

int mg_type_contiguous(MPI_Count count, MPI_Datatype type, MPI_Aint *offset)
{
    MPI_Count size, lb, ext, tlb, text;
    if (offset) *offset = 0;
    if (count < 0 || type == MPI_DATATYPE_NULL) return 0;
    if (PMPI_Type_size_x(type, &size) != MPI_SUCCESS || size == MPI_UNDEFINED) return 0;
    if (count == 0 || size == 0) return 1;
    if (PMPI_Type_get_extent_x(type, &lb, &ext) != MPI_SUCCESS ||
        PMPI_Type_get_true_extent_x(type, &tlb, &text) != MPI_SUCCESS)
        return 0;
    if (text != size || (count > 1 && ext != size)) return 0;
    if (!one_run(type, 0)) return 0;
    if (offset) *offset = (MPI_Aint)tlb;
    return 1;
}

/* Elements per PMPI_Pack call so that counts and byte positions fit an int; 0 if one element does not. */
static MPI_Count int_chunk(MPI_Count count, MPI_Count size)
{
    MPI_Count m = INT_MAX / size;
    return m < count ? m : count;
}

/* Packs (dir 0) or unpacks (dir 1) count x type between buf and the packed bytes. */
static int transfer(int dir, const void *cbuf, void *buf, MPI_Count count, MPI_Datatype type, const void *in, void *out,
                    MPI_Comm comm)
{
    MPI_Count bytes = mg_type_bytes(count, type);
    if (bytes < 0) return MPI_ERR_COUNT;
    if (bytes == 0) return MPI_SUCCESS;
    MPI_Aint off;
    if (mg_type_contiguous(count, type, &off)) {
        if (dir == 0)
            memcpy(out, (const char *)cbuf + off, (size_t)bytes);
        else
            memcpy((char *)buf + off, in, (size_t)bytes);
        return MPI_SUCCESS;
    }
    MPI_Count size = bytes / count, lb, ext;
    int rc = PMPI_Type_get_extent_x(type, &lb, &ext);
    if (rc != MPI_SUCCESS) return rc;
    MPI_Count step = int_chunk(count, size);
    if (step <= 0) return MPI_ERR_COUNT;
    for (MPI_Count k = 0; k < count; k += step) {
        MPI_Count m = count - k < step ? count - k : step;
        int pos = 0;
        if (dir == 0)
            rc = PMPI_Pack((const char *)cbuf + k * ext, (int)m, type, (char *)out + k * size, (int)(m * size), &pos,
                           comm);
        else
            rc = PMPI_Unpack((const char *)in + k * size, (int)(m * size), &pos, (char *)buf + k * ext, (int)m, type,
                             comm);
        if (rc != MPI_SUCCESS) return rc;
        if ((MPI_Count)pos != m * size) return MPI_ERR_INTERN; /* a packed size other than count x size */
    }
    return MPI_SUCCESS;
}

int mg_call_pack(const void *buf, MPI_Count count, MPI_Datatype type, void *out, MPI_Comm comm)
{
    return transfer(0, buf, NULL, count, type, NULL, out, comm);
}

int mg_call_unpack(const void *in, void *buf, MPI_Count count, MPI_Datatype type, MPI_Comm comm)
{
    return transfer(1, NULL, buf, count, type, in, NULL, comm);
}

/* Typed copy: a memcpy of the run when contiguous, else pack and unpack
 * through a temporary of at most 1 MiB (whole elements), so that the gap bytes
 * of dst are never written. */
int mg_copy_typed(const void *src, void *dst, MPI_Count count, MPI_Datatype type)
{
    MPI_Count bytes = mg_type_bytes(count, type);
    if (bytes < 0) return MPI_ERR_COUNT;
    if (bytes == 0) return MPI_SUCCESS;
    MPI_Aint off;
    if (mg_type_contiguous(count, type, &off)) {
        memcpy((char *)dst + off, (const char *)src + off, (size_t)bytes);
        return MPI_SUCCESS;
    }
    MPI_Count size = bytes / count, lb, ext;
    int rc = PMPI_Type_get_extent_x(type, &lb, &ext);
    if (rc != MPI_SUCCESS) return rc;
    MPI_Count step = (MPI_Count)(1 << 20) / size;
    if (step < 1) step = 1;
    if (step > count) step = count;
    void *tmp = malloc((size_t)(step * size));
    if (!tmp) return MPI_ERR_NO_MEM;
    for (MPI_Count k = 0; k < count && rc == MPI_SUCCESS; k += step) {
        MPI_Count m = count - k < step ? count - k : step;
        rc = mg_call_pack((const char *)src + k * ext, m, type, tmp, MPI_COMM_SELF);
        if (rc == MPI_SUCCESS) rc = mg_call_unpack(tmp, (char *)dst + k * ext, m, type, MPI_COMM_SELF);
    }
    free(tmp);
    return rc;
}

void mg_round_robin_counts(MPI_Count n, int p, MPI_Count chunk, int *counts, int *displs)
{
    if (p <= 0) return;
    if (n < 0) n = 0;
    if (chunk < 1) chunk = 1;
    MPI_Count full = n / chunk, rest = n % chunk, per = full / p, extra = full % p, off = 0;
    for (int i = 0; i < p; i++) {
        MPI_Count c = chunk * (per + (i < extra ? 1 : 0));
        if (rest > 0 && i == extra) c += rest; /* the partial chunk is the next one dealt */
        counts[i] = (int)c;
        displs[i] = (int)off;
        off += c;
    }
}

/* ---- the rule of the reduction mock-ups (mg_reduction_supported) ---- */

/* 1 if t is a predefined integer type for which MPI_SUM and MPI_PROD give the
 * same bits in any grouping and order (wrap-around arithmetic is associative
 * and commutative): the C, Fortran and multi-language integer types MPI allows
 * for them. Under Open MPI only types of at least 32 bits: its vectorized ops
 * saturate 8- and 16-bit sums and products, which makes the result depend on
 * the order (an Open MPI bug, linked in docs/tuning.md). Every other type is refused: floating point
 * and complex (rounding depends on the grouping), the pair types, MPI_CHAR,
 * MPI_BYTE, the logical types (not valid for SUM/PROD: the native call reports
 * the error) and any type this list does not know. */
static int sum_exact_named(MPI_Datatype t)
{
    const MPI_Datatype integers[] = {
        MPI_INT,
        MPI_UNSIGNED,
        MPI_LONG,
        MPI_UNSIGNED_LONG,
        MPI_LONG_LONG_INT,
        MPI_LONG_LONG,
        MPI_UNSIGNED_LONG_LONG,
        MPI_SHORT,
        MPI_UNSIGNED_SHORT,
        MPI_SIGNED_CHAR,
        MPI_UNSIGNED_CHAR,
        MPI_INT8_T,
        MPI_INT16_T,
        MPI_INT32_T,
        MPI_INT64_T,
        MPI_UINT8_T,
        MPI_UINT16_T,
        MPI_UINT32_T,
        MPI_UINT64_T,
        MPI_AINT,
        MPI_OFFSET,
        MPI_COUNT,
        MPI_INTEGER,
#ifdef MPI_INTEGER1
        MPI_INTEGER1,
#endif
#ifdef MPI_INTEGER2
        MPI_INTEGER2,
#endif
#ifdef MPI_INTEGER4
        MPI_INTEGER4,
#endif
#ifdef MPI_INTEGER8
        MPI_INTEGER8,
#endif
#ifdef MPI_INTEGER16
        MPI_INTEGER16,
#endif
    };
    int known = 0;
    for (size_t i = 0; i < sizeof integers / sizeof integers[0] && !known; i++)
        known = t == integers[i] && t != MPI_DATATYPE_NULL;
    if (!known) return 0;
#ifdef OMPI_MAJOR_VERSION
    int size = 0;
    if (PMPI_Type_size(t, &size) != MPI_SUCCESS || size < 4) return 0;
#endif
    return 1;
}

/* 1 if every base type of t (through any derived-datatype constructor) is one
 * sum_exact_named accepts; 0 otherwise or if t cannot be decoded. Depends on
 * the type signature only, which is the same on every rank of a reduction. */
static int sum_exact_type(MPI_Datatype t, int depth)
{
    int comb = MPI_COMBINER_NAMED;
#ifdef MG_HAVE_MPI_LARGE_COUNT
    MPI_Count ni = 0, na = 0, nc = 0, nd = 0;
    if (PMPI_Type_get_envelope_c(t, &ni, &na, &nc, &nd, &comb) != MPI_SUCCESS) return 0;
#else
    int ni = 0, na = 0, nc = 0, nd = 0;
    if (PMPI_Type_get_envelope(t, &ni, &na, &nd, &comb) != MPI_SUCCESS) return 0;
#endif
    if (comb == MPI_COMBINER_NAMED) return sum_exact_named(t);
    if (comb == MPI_COMBINER_F90_INTEGER) {
#ifdef OMPI_MAJOR_VERSION
        int size = 0;
        if (PMPI_Type_size(t, &size) != MPI_SUCCESS || size < 4) return 0;
#endif
        return 1;
    }
    /* F90_REAL and F90_COMPLEX (no inner type), an unknown combiner without one, too deep */
    if (nd < 1 || depth > 16) return 0;
    int *ints = malloc(((size_t)ni + 1) * sizeof *ints);
    MPI_Aint *aints = malloc(((size_t)na + 1) * sizeof *aints);
    MPI_Count *counts = malloc(((size_t)nc + 1) * sizeof *counts);
    MPI_Datatype *types = malloc((size_t)nd * sizeof *types);
    int ok = ints && aints && counts && types;
#ifdef MG_HAVE_MPI_LARGE_COUNT
    if (ok) ok = PMPI_Type_get_contents_c(t, ni, na, nc, nd, ints, aints, counts, types) == MPI_SUCCESS;
#else
    if (ok) ok = PMPI_Type_get_contents(t, ni, na, nd, ints, aints, types) == MPI_SUCCESS;
#endif
    if (ok) {
        /* every inner type is visited, so that each derived one is freed */
        for (size_t i = 0; i < (size_t)nd; i++) {
            if (ok) ok = sum_exact_type(types[i], depth + 1);
            if (!is_named(types[i])) PMPI_Type_free(&types[i]);
        }
    }
    free(ints);
    free(aints);
    free(counts);
    free(types);
    return ok;
}

/* The layout part of the rule: a datatype without gaps and with true lower
 * bound 0 (predefined, contiguous, ...), or a predefined one with gaps
 * (MPI_DOUBLE_INT, ...) under a commutative op. Both MPICH 5.0 and Open MPI
 * 5.0 mishandle other derived datatypes in some of the reductions the
 * mock-ups call instead of the one the application called, so a mock-up could
 * break a call that works natively: MPICH's non-commutative Reduce_scatter and
 * Reduce_scatter_block (power-of-two p) step through their buffers by the true
 * extent instead of the extent, read the wrong elements of a type with gaps
 * and overrun their temporaries; Open MPI's ring Allreduce writes past its
 * buffer for a true lower bound > 0. */
static int reduction_layout_ok(MPI_Datatype t, int commutative)
{
    MPI_Aint lb, extent, true_lb, true_extent;
    int ni, na, nd, combiner;
    MPI_Count size = mg_type_bytes(1, t);
    if (PMPI_Type_get_extent(t, &lb, &extent) != MPI_SUCCESS ||
        PMPI_Type_get_true_extent(t, &true_lb, &true_extent) != MPI_SUCCESS ||
        PMPI_Type_get_envelope(t, &ni, &na, &nd, &combiner) != MPI_SUCCESS || size <= 0)
        return 0;
    if (extent == size && true_extent == size && true_lb == 0) return 1;
    return combiner == MPI_COMBINER_NAMED && commutative;
}

int mg_reduction_supported(const mg_call *c)
{
    MPI_Datatype t = c->sendtype != MPI_DATATYPE_NULL ? c->sendtype : c->recvtype;
    if (t == MPI_DATATYPE_NULL || c->op == MPI_OP_NULL) return 0;
    if (!reduction_layout_ok(t, c->commutative)) return 0;
    if (c->op == MPI_SUM || c->op == MPI_PROD) return sum_exact_type(t, 0);
    return 1;
}
