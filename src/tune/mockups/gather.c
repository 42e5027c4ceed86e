/* Mock-ups of MPI_Gather (Hunold and Carpen-Amarie 2018, COLL-GL11..GL13).
 *
 * B = c->block is the block every process contributes (its own data: B = bytes
 * in a correct program), p = c->size. The send side is significant
 * everywhere, the receive side only at the root (recvbuf, recvcount, recvtype
 * are never read elsewhere). At a root with MPI_IN_PLACE the root's block is
 * already in recvbuf and is left untouched. GL11 and GL13 move packed bytes
 * (MPI_BYTE blocks of B bytes), so any send and receive datatypes with the same
 * signature work and a rank's datatype never changes which calls it makes. A
 * root whose own arguments disagree (c->mismatch, an erroneous call)
 * contributes zeros and never writes its receive buffer. */
#include "mockup_api.h"

#include <string.h>

/* Every inner count (p x B bytes, counts and displacements in elements, which
 * never exceed bytes) fits an int. Uniform: depends on bytes and size only. */
static int gather_fits(const mg_call *c) { return mg_fits_int_product(c->size, c->bytes); }

/* Packs this process's block into out (B bytes): its send buffer, or at a root
 * with MPI_IN_PLACE its block of recvbuf; zeros if its arguments disagree. */
static int pack_own_block(const mg_call *c, void *out)
{
    if (c->mismatch) {
        memset(out, 0, (size_t)c->block);
        return MPI_SUCCESS;
    }
    if (c->in_place)
        return mg_call_pack(mg_typed_block(c->recvbuf, c->root, c->recvcount, c->recvtype), c->recvcount, c->recvtype,
                            out, c->comm);
    return mg_call_pack(c->sendbuf, c->sendcount, c->sendtype, out, c->comm);
}

/* Root: unpacks the p packed blocks at all into recvbuf, skipping its own
 * block with MPI_IN_PLACE (the native call leaves it as it is); nothing where
 * the receive block is not B. */
static int unpack_blocks(const mg_call *c, const char *all)
{
    if (c->mismatch) return MPI_SUCCESS;
    if (!c->in_place) return mg_call_unpack(all, c->recvbuf, c->size * c->recvcount, c->recvtype, c->comm);
    int rc = mg_call_unpack(all, c->recvbuf, c->root * c->recvcount, c->recvtype, c->comm);
    if (rc == MPI_SUCCESS && c->root + 1 < c->size)
        rc = mg_call_unpack(all + (MPI_Count)(c->root + 1) * c->block,
                            mg_typed_block(c->recvbuf, c->root + 1, c->recvcount, c->recvtype),
                            (c->size - c->root - 1) * c->recvcount, c->recvtype, c->comm);
    return rc;
}

/* GL11 MPI_Allgather: every process packs its block into its slot of a p x B
 * byte buffer and an in-place Allgather of bytes completes it everywhere; the
 * root unpacks it, the others drop it. Exact: pure data movement of the same
 * bytes the native Gather moves. */
static int as_allgather_supports(const mg_call *c) { return gather_fits(c); }

static mg_need as_allgather_need(const mg_call *c) { return (mg_need){(size_t)(c->size * c->bytes), 0}; }

static int as_allgather_run(const mg_call *c, mg_lease *lease)
{
    const size_t b = (size_t)c->block;
    char *all = mg_lease_msg(lease, (size_t)c->size * b);
    if (!all) return MPI_ERR_NO_MEM;
    int rc = pack_own_block(c, all + (size_t)c->rank * b);
    rc = mg_first_error(rc, PMPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, all, (int)b, MPI_BYTE, c->comm));
    if (rc == MPI_SUCCESS && c->rank == c->root) rc = unpack_blocks(c, all);
    return rc;
}

/* GL12 MPI_Gatherv: the same arguments with recvcounts[i] = recvcount and
 * displs[i] = i x recvcount (root only). Exact: Gatherv with these counts is
 * defined to be Gather, with the same type matching rules and the same
 * MPI_IN_PLACE semantics, so the user's datatypes are passed unchanged. */
static int as_gatherv_supports(const mg_call *c) { return gather_fits(c); }

static mg_need as_gatherv_need(const mg_call *c) { return (mg_need){0, 2 * (size_t)c->size * sizeof(int)}; }

static int as_gatherv_run(const mg_call *c, mg_lease *lease)
{
    if (c->rank != c->root) /* receive arguments are not significant here */
        return PMPI_Gatherv(c->sendbuf, (int)c->sendcount, c->sendtype, NULL, NULL, NULL, MPI_DATATYPE_NULL, c->root,
                            c->comm);
    int *counts = mg_lease_ints(lease, 2 * (size_t)c->size);
    if (!counts) return MPI_ERR_NO_MEM;
    int *displs = counts + c->size;
    mg_regular_v_layout(c->size, (int)c->recvcount, counts, displs);
    return PMPI_Gatherv(c->sendbuf, (int)c->sendcount, c->sendtype, c->recvbuf, counts, displs, c->recvtype, c->root,
                        c->comm);
}

/* GL13 MPI_Reduce: every process zero-fills a p x B byte buffer except its own
 * slot, where it packs its block; MPI_Reduce with MPI_BOR (in place at the
 * root, on the widest words that divide p x B: mg_or_words) ORs each block
 * with zeros only, which yields the gathered bytes exactly; the root unpacks
 * them. */
static int as_reduce_supports(const mg_call *c) { return gather_fits(c); }

static mg_need as_reduce_need(const mg_call *c) { return (mg_need){(size_t)(c->size * c->bytes), 0}; }

static int as_reduce_run(const mg_call *c, mg_lease *lease)
{
    const size_t b = (size_t)c->block;
    char *all = mg_lease_msg(lease, (size_t)c->size * b);
    if (!all) return MPI_ERR_NO_MEM;
    memset(all, 0, (size_t)c->rank * b);
    memset(all + (size_t)(c->rank + 1) * b, 0, (size_t)(c->size - c->rank - 1) * b);
    int rc = pack_own_block(c, all + (size_t)c->rank * b), n;
    MPI_Datatype words = mg_or_words((MPI_Count)c->size * c->block, &n);
    if (c->rank != c->root) return mg_first_error(rc, PMPI_Reduce(all, NULL, n, words, MPI_BOR, c->root, c->comm));
    rc = mg_first_error(rc, PMPI_Reduce(MPI_IN_PLACE, all, n, words, MPI_BOR, c->root, c->comm));
    if (rc == MPI_SUCCESS) rc = unpack_blocks(c, all);
    return rc;
}

static const mg_mockup gather_list[] = {
    {"gather_as_allgather", 11, "MPI_Allgather", as_allgather_supports, as_allgather_need, as_allgather_run},
    {"gather_as_gatherv", 12, "MPI_Gatherv", as_gatherv_supports, as_gatherv_need, as_gatherv_run},
    {"gather_as_reduce", 13, "MPI_Reduce (MPI_BOR on zero-filled blocks)", as_reduce_supports, as_reduce_need,
     as_reduce_run},
};

const mg_coll_mockups mg_gather_mockups = MG_COLL_MOCKUPS(MG_COLL_GATHER, "gather", "MPI_Gather", gather_list);
