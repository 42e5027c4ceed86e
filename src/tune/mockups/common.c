/* Helpers of the mock-ups (mockup_api.h): sizes, packing of user buffers
 * into bytes and back, typed copies, the chunked round-robin distribution. */
#define _POSIX_C_SOURCE 200809L
#include "mockup_api.h"
#include <limits.h>
#include <stdlib.h>
#include <string.h>

int mg_fits_int(MPI_Count n) { return n >= 0 && n <= INT_MAX; }

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

MPI_Datatype mg_or_words(MPI_Count bytes, int *count)
{
    static const struct {
        int width;
        MPI_Datatype type;
    } words[] = {{8, MPI_UINT64_T}, {4, MPI_UINT32_T}, {2, MPI_UINT16_T}};
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        if (bytes % words[i].width == 0) {
            *count = (int)(bytes / words[i].width);
            return words[i].type;
        }
    *count = (int)bytes;
    return MPI_BYTE;
}
