/* Helpers of the mock-ups (mockup_api.h): sizes, packing of user buffers
 * into bytes and back, typed copies, the chunked round-robin distribution. */
#define _POSIX_C_SOURCE 200809L
#include "mockup_api.h"
#include <limits.h>
#include <stdlib.h>
#include <string.h>

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
