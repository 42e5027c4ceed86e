/* Mock-up of MPI_Alltoall (Hunold and Carpen-Amarie 2018, COLL-GL8). */
#include <string.h>

#include "mockup_api.h"

/* ---- GL8: MPI_Alltoallv with counts[i] = B and displs[i] = i x B on both
 * sides (B = c->block): the same call in its irregular form, on packed bytes
 * (MPI_BYTE messages, as in allgather.c, so that ranks with datatypes of
 * different sizes still make the same internal choices). A buffer whose p
 * blocks are one gap-free run is used in place; otherwise the send blocks are
 * packed into the lease, and the receive blocks land there and are unpacked.
 * MPI_IN_PLACE (which MPI requires on all ranks) passes through. A rank whose
 * own arguments disagree (c->mismatch, an erroneous call) sends zeros,
 * receives into the lease and never writes its receive buffer. */

static int gl8_supports(const mg_call *c) { return c->bytes > 0 && mg_fits_int_product(c->size, c->bytes); }

static mg_need gl8_need(const mg_call *c)
{
    /* counts, displs, shared by both sides (Hunold and Carpen-Amarie 2018, Table 1: 2pI); p x bytes for
     * each side whose datatype is not contiguous */
    return (mg_need){2 * (size_t)c->size * (size_t)c->bytes, 2 * (size_t)c->size * sizeof(int)};
}

static int gl8_run(const mg_call *c, mg_lease *lease)
{
    const int p = c->size, fits = !c->mismatch;
    const size_t all = (size_t)p * (size_t)c->block;
    int *counts = mg_lease_ints(lease, 2 * (size_t)p);
    if (counts == NULL) return MPI_ERR_NO_MEM;
    int *displs = counts + p;
    mg_regular_v_layout(p, (int)c->block, counts, displs);

    char *recv = fits ? mg_contiguous_run(c->recvbuf, p * c->recvcount, c->recvtype) : NULL;
    const int unpack = recv == NULL;
    if (unpack && (recv = mg_lease_msg(lease, all)) == NULL) return MPI_ERR_NO_MEM;
    int err = MPI_SUCCESS;
    if (c->in_place) {
        if (unpack) err = mg_call_pack(c->recvbuf, p * c->recvcount, c->recvtype, recv, c->comm);
        err = mg_first_error(
            err, PMPI_Alltoallv(MPI_IN_PLACE, counts, displs, MPI_BYTE, recv, counts, displs, MPI_BYTE, c->comm));
    } else {
        const char *send = fits ? mg_contiguous_run(c->sendbuf, p * c->sendcount, c->sendtype) : NULL;
        if (send == NULL) {
            char *packed = mg_lease_msg(lease, all);
            if (packed == NULL) return MPI_ERR_NO_MEM;
            if (fits)
                err = mg_call_pack(c->sendbuf, p * c->sendcount, c->sendtype, packed, c->comm);
            else
                memset(packed, 0, all);
            send = packed;
        }
        err = mg_first_error(err,
                             PMPI_Alltoallv(send, counts, displs, MPI_BYTE, recv, counts, displs, MPI_BYTE, c->comm));
    }
    if (err == MPI_SUCCESS && unpack && fits)
        err = mg_call_unpack(recv, c->recvbuf, p * c->recvcount, c->recvtype, c->comm);
    return err;
}

static const mg_mockup alltoall_list[] = {
    {"alltoall_as_alltoallv", 8, "MPI_Alltoallv", gl8_supports, gl8_need, gl8_run},
};

const mg_coll_mockups mg_alltoall_mockups =
    MG_COLL_MOCKUPS(MG_COLL_ALLTOALL, "alltoall", "MPI_Alltoall", alltoall_list);
