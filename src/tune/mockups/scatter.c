/* Mock-ups of MPI_Scatter (Hunold and Carpen-Amarie 2018, COLL-GL21, GL22).
 *
 * B = c->block is the block every process receives (B = bytes in a correct
 * program), p = c->size. The send side (sendbuf, sendcount, sendtype) is
 * significant only at the root and never read elsewhere. At a root with
 * MPI_IN_PLACE (c->in_place, recvbuf NULL) the root's block stays in sendbuf
 * and nothing is written for it. A root whose own arguments disagree
 * (c->mismatch, an erroneous call) broadcasts zeros and never writes its
 * receive buffer. */
#include <string.h>

#include "mockup_api.h"

/* Every inner count (p x B bytes, counts and displacements in elements, which
 * never exceed bytes) fits an int. Uniform: depends on bytes and size only. */
static int scatter_fits(const mg_call *c) { return mg_fits_int_product(c->size, c->bytes); }

/* GL21 MPI_Bcast: the root packs its p blocks into a p x B byte buffer, a Bcast
 * of bytes copies it to every process, and each process unpacks its own block
 * into recvbuf. Exact: pure data movement of the bytes the native Scatter
 * moves; the root packs because its send type may be non-contiguous. */
static int as_bcast_supports(const mg_call *c) { return scatter_fits(c); }

static mg_need as_bcast_need(const mg_call *c) { return (mg_need){(size_t)(c->size * c->bytes), 0}; }

static int as_bcast_run(const mg_call *c, mg_lease *lease)
{
    const size_t b = (size_t)c->block;
    char *all = mg_lease_msg(lease, (size_t)c->size * b);
    if (!all) return MPI_ERR_NO_MEM;
    int rc = MPI_SUCCESS;
    if (c->rank == c->root && c->mismatch)
        memset(all, 0, (size_t)c->size * b);
    else if (c->rank == c->root)
        rc = mg_call_pack(c->sendbuf, c->size * c->sendcount, c->sendtype, all, c->comm);
    rc = mg_first_error(rc, PMPI_Bcast(all, (int)((size_t)c->size * b), MPI_BYTE, c->root, c->comm));
    if (rc == MPI_SUCCESS && !c->in_place && !c->mismatch)
        rc = mg_call_unpack(all + (size_t)c->rank * b, c->recvbuf, c->recvcount, c->recvtype, c->comm);
    return rc;
}

/* GL22 MPI_Scatterv: the same arguments with sendcounts[i] = sendcount and
 * displs[i] = i x sendcount (root only). Exact: Scatterv with these counts is
 * defined to be Scatter, with the same type matching rules and the same
 * MPI_IN_PLACE semantics, so the user's datatypes are passed unchanged. */
static int as_scatterv_supports(const mg_call *c) { return scatter_fits(c); }

static mg_need as_scatterv_need(const mg_call *c) { return (mg_need){0, 2 * (size_t)c->size * sizeof(int)}; }

static int as_scatterv_run(const mg_call *c, mg_lease *lease)
{
    if (c->rank != c->root) /* send arguments are not significant here */
        return PMPI_Scatterv(NULL, NULL, NULL, MPI_DATATYPE_NULL, c->recvbuf, (int)c->recvcount, c->recvtype, c->root,
                             c->comm);
    int *counts = mg_lease_ints(lease, 2 * (size_t)c->size);
    if (!counts) return MPI_ERR_NO_MEM;
    int *displs = counts + c->size;
    mg_regular_v_layout(c->size, (int)c->sendcount, counts, displs);
    if (c->in_place)
        return PMPI_Scatterv(c->sendbuf, counts, displs, c->sendtype, MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, c->root,
                             c->comm);
    return PMPI_Scatterv(c->sendbuf, counts, displs, c->sendtype, c->recvbuf, (int)c->recvcount, c->recvtype, c->root,
                         c->comm);
}

static const mg_mockup scatter_list[] = {
    {"scatter_as_bcast", 21, "MPI_Bcast", as_bcast_supports, as_bcast_need, as_bcast_run},
    {"scatter_as_scatterv", 22, "MPI_Scatterv", as_scatterv_supports, as_scatterv_need, as_scatterv_run},
};

const mg_coll_mockups mg_scatter_mockups = MG_COLL_MOCKUPS(MG_COLL_SCATTER, "scatter", "MPI_Scatter", scatter_list);
