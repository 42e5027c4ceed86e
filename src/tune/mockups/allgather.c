/* Mock-ups of MPI_Allgather (Hunold and Carpen-Amarie 2018, COLL-GL1..GL4).
 *
 * Every inner message is MPI_BYTE: block i is rank i's B = c->block packed
 * bytes, whatever the datatypes, so all ranks describe the same bytes the same
 * way and the MPI library makes the same internal choices on every rank.
 * (Passing the user's types through is not safe: with types of different sizes
 * on different ranks, MPICH's Allgatherv pipelines in elements of each rank's
 * type and truncates messages, and Open MPI's Allgatherv picks its algorithm
 * from size(sendtype) x recvcounts, so ranks disagree and deadlock.)
 *
 * The p packed blocks are the user's receive buffer itself when it is one
 * gap-free run (mg_contiguous_run), else they go to the lease and are unpacked
 * at the end, which writes no gap byte. Block i of the user's buffer is
 * recvcount x recvtype at i x recvcount x extent(recvtype); with MPI_IN_PLACE
 * the rank's own block is already there. A rank whose own arguments disagree
 * (c->mismatch, an erroneous call) contributes zeros, works in the lease and
 * never writes its receive buffer. */
#include <string.h>

#include "mockup_api.h"

/* The packed blocks of all ranks (p x B): in the receive buffer, or from the
 * lease with *unpack set. NULL if out of memory. */
static char *gathered(const mg_call *c, mg_lease *lease, int *unpack)
{
    char *direct = c->mismatch ? NULL : mg_contiguous_run(c->recvbuf, c->size * c->recvcount, c->recvtype);
    *unpack = direct == NULL;
    return direct ? direct : mg_lease_msg(lease, (size_t)c->size * (size_t)c->block);
}

/* Packs this rank's block into out: its send buffer, or with MPI_IN_PLACE its
 * block of the receive buffer; zeros if its arguments disagree. */
static int pack_own(const mg_call *c, char *out)
{
    if (c->mismatch) {
        memset(out, 0, (size_t)c->block);
        return MPI_SUCCESS;
    }
    if (!c->in_place) return mg_call_pack(c->sendbuf, c->sendcount, c->sendtype, out, c->comm);
    MPI_Aint extent;
    int err = mg_type_extent(c->recvtype, &extent);
    if (err != MPI_SUCCESS) return err;
    const char *own = (const char *)c->recvbuf + (MPI_Aint)c->rank * (MPI_Aint)c->recvcount * extent;
    return mg_call_pack(own, c->recvcount, c->recvtype, out, c->comm);
}

/* Puts this rank's packed block into its slot of `all` (unless it is there already). */
static int place_own(const mg_call *c, char *all, int unpack)
{
    if (c->in_place && !unpack) return MPI_SUCCESS;
    return pack_own(c, all + (size_t)c->rank * (size_t)c->block);
}

static int finish(const mg_call *c, const char *all, int unpack, int err)
{
    if (err != MPI_SUCCESS || !unpack || c->mismatch) return err;
    return mg_call_unpack(all, c->recvbuf, c->size * c->recvcount, c->recvtype, c->comm);
}

/* ---- GL1: MPI_Gather to rank 0 + MPI_Bcast of all p blocks: after the
 * Gather, rank 0 holds the Allgather's result, which the Bcast copies to all.
 * Extra memory only for a non-contiguous receive type (Hunold and
 * Carpen-Amarie 2018, Table 1: none). */

static int gl1_supports(const mg_call *c) { return c->bytes > 0 && mg_fits_int_product(c->size, c->bytes); }

static mg_need gl1_need(const mg_call *c) { return (mg_need){(size_t)c->size * (size_t)c->bytes, 0}; }

static int gl1_run(const mg_call *c, mg_lease *lease)
{
    const int root = 0, block = (int)c->block;
    int unpack;
    char *all = gathered(c, lease, &unpack);
    if (all == NULL) return MPI_ERR_NO_MEM;
    int err = place_own(c, all, unpack);
    if (c->rank == root)
        err = mg_first_error(err, PMPI_Gather(MPI_IN_PLACE, block, MPI_BYTE, all, block, MPI_BYTE, root, c->comm));
    else /* the receive arguments are not significant here */
        err = mg_first_error(
            err, PMPI_Gather(all + (size_t)c->rank * (size_t)block, block, MPI_BYTE, NULL, 0, MPI_BYTE, root, c->comm));
    err = mg_first_error(err, PMPI_Bcast(all, c->size * block, MPI_BYTE, root, c->comm));
    return finish(c, all, unpack, err);
}

/* ---- GL2: MPI_Alltoall whose send buffer holds p copies of the rank's
 * block: what rank j sends to rank i is rank j's block, so the Alltoall
 * delivers the Allgather's result. */

static int gl2_supports(const mg_call *c) { return c->bytes > 0 && mg_fits_int(c->bytes); }

static mg_need gl2_need(const mg_call *c)
{
    /* p x bytes for the copies (Hunold and Carpen-Amarie 2018, Table 1), p x bytes more for a non-contiguous
     * receive type */
    return (mg_need){2 * (size_t)c->size * (size_t)c->bytes, 0};
}

static int gl2_run(const mg_call *c, mg_lease *lease)
{
    const size_t block = (size_t)c->block;
    char *copies = mg_lease_msg(lease, (size_t)c->size * block);
    int unpack;
    char *all = gathered(c, lease, &unpack);
    if (copies == NULL || all == NULL) return MPI_ERR_NO_MEM;
    int err = pack_own(c, copies);
    for (int i = 1; i < c->size && err == MPI_SUCCESS; i++) memcpy(copies + (size_t)i * block, copies, block);
    err = mg_first_error(err, PMPI_Alltoall(copies, (int)block, MPI_BYTE, all, (int)block, MPI_BYTE, c->comm));
    return finish(c, all, unpack, err);
}

/* ---- GL3: MPI_Allreduce(MPI_BOR) over p blocks that are zero except for the
 * rank's own: x | 0 = x bitwise, so the result is the concatenation of all
 * blocks whatever the reduction order. Reduced in the lease (Hunold and
 * Carpen-Amarie 2018, Table 1: p x n for the zero-filled send buffer),
 * always: its words are aligned, so the reduction runs on the widest words
 * that divide p x B (mg_or_words), on every rank alike, and the result is
 * then copied or unpacked into the receive buffer. */

static int gl3_supports(const mg_call *c) { return c->bytes > 0 && mg_fits_int_product(c->size, c->bytes); }

static mg_need gl3_need(const mg_call *c) { return (mg_need){(size_t)c->size * (size_t)c->bytes, 0}; }

static int gl3_run(const mg_call *c, mg_lease *lease)
{
    const size_t block = (size_t)c->block;
    char *all = mg_lease_msg(lease, (size_t)c->size * block);
    if (all == NULL) return MPI_ERR_NO_MEM;
    memset(all, 0, (size_t)c->rank * block);
    memset(all + (size_t)(c->rank + 1) * block, 0, (size_t)(c->size - c->rank - 1) * block);
    int n, err = pack_own(c, all + (size_t)c->rank * block);
    MPI_Datatype words = mg_or_words((MPI_Count)c->size * c->block, &n);
    err = mg_first_error(err, PMPI_Allreduce(MPI_IN_PLACE, all, n, words, MPI_BOR, c->comm));
    return finish(c, all, 1, err);
}

/* ---- GL4: MPI_Allgatherv with recvcounts[i] = B and displs[i] = i x B: the
 * same call in its irregular form, in place (the rank's block first put into
 * its slot) so that every rank makes the same call. */

static int gl4_supports(const mg_call *c) { return c->bytes > 0 && mg_fits_int_product(c->size, c->bytes); }

static mg_need gl4_need(const mg_call *c)
{
    /* recvcounts, displs (Hunold and Carpen-Amarie 2018, Table 1); p x bytes for a non-contiguous receive
     * type */
    return (mg_need){(size_t)c->size * (size_t)c->bytes, 2 * (size_t)c->size * sizeof(int)};
}

static int gl4_run(const mg_call *c, mg_lease *lease)
{
    int *counts = mg_lease_ints(lease, 2 * (size_t)c->size);
    int unpack;
    char *all = gathered(c, lease, &unpack);
    if (counts == NULL || all == NULL) return MPI_ERR_NO_MEM;
    int *displs = counts + c->size;
    mg_regular_v_layout(c->size, (int)c->block, counts, displs);
    int err = place_own(c, all, unpack);
    err = mg_first_error(err, PMPI_Allgatherv(MPI_IN_PLACE, 0, MPI_BYTE, all, counts, displs, MPI_BYTE, c->comm));
    return finish(c, all, unpack, err);
}

static const mg_mockup allgather_list[] = {
    {"allgather_as_gather_bcast", 1, "MPI_Gather + MPI_Bcast", gl1_supports, gl1_need, gl1_run},
    {"allgather_as_alltoall", 2, "MPI_Alltoall", gl2_supports, gl2_need, gl2_run},
    {"allgather_as_allreduce", 3, "MPI_Allreduce", gl3_supports, gl3_need, gl3_run},
    {"allgather_as_allgatherv", 4, "MPI_Allgatherv", gl4_supports, gl4_need, gl4_run},
};

const mg_coll_mockups mg_allgather_mockups =
    MG_COLL_MOCKUPS(MG_COLL_ALLGATHER, "allgather", "MPI_Allgather", allgather_list);
