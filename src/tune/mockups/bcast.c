/* Mock-ups of MPI_Bcast (Hunold and Carpen-Amarie 2018, COLL-GL9 and GL10).
 *
 * Both move the buffer as its c->bytes packed bytes in MPI_BYTE messages, so
 * every rank makes the same calls, and the MPI library the same internal
 * choices, whatever each rank's datatype (see allgather.c). c->bytes is this
 * rank's own count: where an erroneous program's ranks disagree, the inner
 * calls disagree too, and MPI reports it. A buffer that is one gap-free run is
 * used in place; otherwise the root packs it into the lease and the other
 * ranks unpack from there, which writes no gap byte. */
#include <string.h>

#include "mockup_api.h"

/* ---- GL9: MPI_Allgatherv(MPI_IN_PLACE) in which only the root contributes:
 * recvcounts[root] = bytes, all others 0, every displacement 0. The root's
 * contribution is its buffer; the others receive it into theirs. */

static int gl9_supports(const mg_call *c) { return c->bytes > 0 && mg_fits_int(c->bytes); }

static mg_need gl9_need(const mg_call *c)
{
    /* recvcounts, displs (Hunold and Carpen-Amarie 2018, Table 1); the packed buffer for a non-contiguous
     * datatype */
    return (mg_need){(size_t)c->bytes, 2 * (size_t)c->size * sizeof(int)};
}

static int gl9_run(const mg_call *c, mg_lease *lease)
{
    const int p = c->size;
    int *counts = mg_lease_ints(lease, 2 * (size_t)p);
    char *packed = mg_contiguous_run(c->recvbuf, c->recvcount, c->recvtype);
    const int direct = packed != NULL;
    if (!direct) packed = mg_lease_msg(lease, (size_t)c->bytes);
    if (counts == NULL || packed == NULL) return MPI_ERR_NO_MEM;
    int *displs = counts + p;
    for (int i = 0; i < p; i++) counts[i] = displs[i] = 0;
    counts[c->root] = (int)c->bytes;
    int err = MPI_SUCCESS;
    if (c->rank == c->root && !direct) err = mg_call_pack(c->recvbuf, c->recvcount, c->recvtype, packed, c->comm);
    err = mg_first_error(
        err, PMPI_Allgatherv(MPI_IN_PLACE, counts[c->rank], MPI_BYTE, packed, counts, displs, MPI_BYTE, c->comm));
    if (err == MPI_SUCCESS && c->rank != c->root && !direct)
        err = mg_call_unpack(packed, c->recvbuf, c->recvcount, c->recvtype, c->comm);
    return err;
}

/* ---- GL10: MPI_Scatter + MPI_Allgather (van de Geijn): the n packed bytes,
 * padded to p x ceil(n/p), are scattered in blocks and gathered back on every
 * rank; the first n bytes are the root's data. Bytes, not elements, are split,
 * so every rank makes the same calls whatever its datatype. The root scatters
 * in place and every rank receives its block at its place in the padded
 * buffer, so the Allgather runs in place: one buffer of n + pad bytes is all
 * the memory (Hunold and Carpen-Amarie 2018, Table 1:
 * (n + pad) + (n + pad) / p). Without a pad, a contiguous buffer is used
 * directly. */

static MPI_Count gl10_block(const mg_call *c) { return (c->bytes + c->size - 1) / c->size; }

static int gl10_supports(const mg_call *c) { return c->bytes > 0 && mg_fits_int_product(c->size, gl10_block(c)); }

static mg_need gl10_need(const mg_call *c) { return (mg_need){(size_t)(c->size * gl10_block(c)), 0}; }

static int gl10_run(const mg_call *c, mg_lease *lease)
{
    const size_t n = (size_t)c->bytes, block = (size_t)gl10_block(c), all = (size_t)c->size * block;
    char *packed = all == n ? mg_contiguous_run(c->recvbuf, c->recvcount, c->recvtype) : NULL;
    const int direct = packed != NULL;
    if (!direct && (packed = mg_lease_msg(lease, all)) == NULL) return MPI_ERR_NO_MEM;
    int err = MPI_SUCCESS;
    if (c->rank == c->root) {
        if (!direct) {
            err = mg_call_pack(c->recvbuf, c->recvcount, c->recvtype, packed, c->comm);
            memset(packed + n, 0, all - n); /* the pad: defined bytes on the wire */
        }
        err = mg_first_error(
            err, PMPI_Scatter(packed, (int)block, MPI_BYTE, MPI_IN_PLACE, (int)block, MPI_BYTE, c->root, c->comm));
    } else {
        err = PMPI_Scatter(NULL, (int)block, MPI_BYTE, packed + (size_t)c->rank * block, (int)block, MPI_BYTE, c->root,
                           c->comm);
    }
    err =
        mg_first_error(err, PMPI_Allgather(MPI_IN_PLACE, (int)block, MPI_BYTE, packed, (int)block, MPI_BYTE, c->comm));
    if (err == MPI_SUCCESS && c->rank != c->root && !direct)
        err = mg_call_unpack(packed, c->recvbuf, c->recvcount, c->recvtype, c->comm);
    return err;
}

static const mg_mockup bcast_list[] = {
    {"bcast_as_allgatherv", 9, "MPI_Allgatherv", gl9_supports, gl9_need, gl9_run},
    {"bcast_as_scatter_allgather", 10, "MPI_Scatter + MPI_Allgather", gl10_supports, gl10_need, gl10_run},
};

const mg_coll_mockups mg_bcast_mockups = MG_COLL_MOCKUPS(MG_COLL_BCAST, "bcast", "MPI_Bcast", bcast_list);
