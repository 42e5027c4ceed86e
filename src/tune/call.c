/* What the interception learns about one call before it chooses: its message
 * sizes (the uniform key and this rank's own blocks, mockup_api.h) and whether
 * this rank's arguments are erroneous in a way the native call reports before
 * it communicates. Such a call goes to the native function on this rank: MPI
 * reports the error, and no inner call of a mock-up is started that other
 * ranks might wait in forever or that might write where it must not. Only
 * conditions that no correct program meets qualify, so a correct program never
 * runs natively on some ranks and a mock-up on others. */
#define _POSIX_C_SOURCE 200809L
#include "call.h"

static int is_rooted(mg_coll c)
{
    return c == MG_COLL_BCAST || c == MG_COLL_GATHER || c == MG_COLL_SCATTER || c == MG_COLL_REDUCE;
}

static int is_reduction(mg_coll c)
{
    return c == MG_COLL_ALLREDUCE || c == MG_COLL_REDUCE || c == MG_COLL_SCAN || c == MG_COLL_REDUCE_SCATTER_BLOCK;
}

MPI_Count mg_tune__message_bytes(mg_call *c)
{
    MPI_Count n = c->sendcount;
    MPI_Datatype type = c->sendtype;
    switch (c->coll) {
    case MG_COLL_ALLGATHER:
    case MG_COLL_ALLTOALL:
    case MG_COLL_GATHER:
        if (c->in_place) n = c->recvcount, type = c->recvtype;
        break;
    case MG_COLL_SCATTER:
        if (!c->in_place) n = c->recvcount, type = c->recvtype;
        break;
    case MG_COLL_REDUCE_SCATTER_BLOCK:
        if (__builtin_mul_overflow(c->recvcount, (MPI_Count)c->size, &c->sendcount)) c->sendcount = -1;
        n = c->sendcount, type = c->recvtype;
        break;
    default: break;
    }
    return n >= 0 ? mg_type_bytes(n, type) : -1;
}

void mg_tune__local_blocks(mg_call *c)
{
    const int root = c->rank == c->root;
    MPI_Count s = mg_type_bytes(c->sendcount, c->sendtype), r = mg_type_bytes(c->recvcount, c->recvtype);
    switch (c->coll) {
    case MG_COLL_ALLGATHER:
        if (c->in_place) s = r;
        c->block = r;
        break;
    case MG_COLL_ALLTOALL:
        if (c->in_place) s = r;
        c->block = s;
        break;
    case MG_COLL_GATHER:
        if (c->in_place) s = r;
        if (!root) r = s;
        c->block = s;
        break;
    case MG_COLL_SCATTER:
        if (c->in_place) r = s;
        if (!root) s = r;
        c->block = r;
        break;
    case MG_COLL_BCAST: c->block = s, r = s; break;
    default: c->block = 0, s = r = 0; break;
    }
    c->mismatch = s != r;
}

/* 1 if t cannot be used in a call: not committed (or not a datatype). MPI_Pack
 * of nothing checks just that, in MPICH and Open MPI alike, on the probe
 * communicator, so that the application's error handler does not see it.
 * Without that communicator every type counts as unusable: the call runs
 * natively. */
static int unusable_type(MPI_Datatype t)
{
    MPI_Comm probe = mg_tune__probe_comm();
    char out[1];
    int pos = 0;
    return probe == MPI_COMM_NULL || PMPI_Pack(out, 0, t, out, 0, &pos, probe) != MPI_SUCCESS;
}

/* 1 if buf is NULL for count > 0 elements whose data would start at address
 * 0: a predefined type, or a derived one of size > 0 with true lower bound 0.
 * MPI_BOTTOM is NULL and legal with a type of absolute addresses; MPICH and
 * Open MPI both raise MPI_ERR_BUFFER by this same rule, before communicating. */
int mg_tune__missing_buffer(const void *buf, MPI_Count count, MPI_Datatype t)
{
    if (buf != NULL || count <= 0) return 0;
    if (mg_type_combiner(t) == MPI_COMBINER_NAMED) return 1;
    MPI_Count lb, extent, size = mg_type_bytes(1, t);
    return size > 0 && PMPI_Type_get_true_extent_x(t, &lb, &extent) == MPI_SUCCESS && lb == 0;
}

/* The address of block i of count x t at buf (NULL if the extent is unknown). */
static const char *block_at(const void *buf, int i, MPI_Count count, MPI_Datatype t)
{
    MPI_Aint lb, extent;
    if (PMPI_Type_get_extent(t, &lb, &extent) != MPI_SUCCESS) return NULL;
    return (const char *)buf + (MPI_Aint)i * (MPI_Aint)count * extent;
}

/* 1 if the send data and the receive data are the same memory, as MPI's
 * argument checks compare them (this rank's block of the receive buffer, or
 * the root's of the send buffer); MPI_BOTTOM and empty blocks never alias. */
static int aliased(const mg_call *c)
{
    if (c->in_place || c->sendbuf == NULL || c->recvbuf == NULL) return 0;
    const char *s = c->sendbuf, *r = c->recvbuf;
    const int root = c->rank == c->root;
    switch (c->coll) {
    case MG_COLL_ALLGATHER: return c->block > 0 && s == block_at(r, c->rank, c->recvcount, c->recvtype);
    case MG_COLL_GATHER: return root && c->block > 0 && s == block_at(r, c->root, c->recvcount, c->recvtype);
    case MG_COLL_SCATTER: return root && c->block > 0 && r == block_at(s, c->root, c->sendcount, c->sendtype);
    case MG_COLL_ALLTOALL: return c->block > 0 && s == r;
    case MG_COLL_ALLREDUCE:
    case MG_COLL_SCAN:
    case MG_COLL_REDUCE_SCATTER_BLOCK: return s == r && c->sendcount > 0;
    case MG_COLL_REDUCE: return root && s == r && c->sendcount > 0;
    default: return 0;
    }
}

/* The significant (buffer, count, type) sides of the call on this rank. */
typedef struct {
    const void *buf;
    MPI_Count count;
    MPI_Datatype type;
} side;

static int significant_sides(const mg_call *c, side out[2])
{
    const int root = c->rank == c->root;
    int n = 0;
    side send = {c->sendbuf, c->sendcount, c->sendtype}, recv = {c->recvbuf, c->recvcount, c->recvtype};
    switch (c->coll) {
    case MG_COLL_ALLGATHER:
    case MG_COLL_ALLTOALL:
        if (!c->in_place) out[n++] = send;
        out[n++] = recv;
        break;
    case MG_COLL_GATHER:
        if (!c->in_place) out[n++] = send;
        if (root) out[n++] = recv;
        break;
    case MG_COLL_SCATTER:
        if (root) out[n++] = send;
        if (!c->in_place) out[n++] = recv;
        break;
    case MG_COLL_REDUCE:
        if (!c->in_place) out[n++] = send;
        if (root) out[n++] = recv;
        break;
    default: /* Bcast, Allreduce, Scan, Reduce_scatter_block */
        if (!c->in_place && c->coll != MG_COLL_BCAST) out[n++] = send;
        out[n++] = recv;
        break;
    }
    return n;
}

int mg_tune__locally_erroneous(const mg_call *c)
{
    if (is_rooted(c->coll) && (c->root < 0 || c->root >= c->size)) return 1;
    if (is_reduction(c->coll) && c->op == MPI_OP_NULL) return 1;
    side sides[2];
    int n = significant_sides(c, sides);
    for (int i = 0; i < n; i++)
        if (sides[i].count < 0 || unusable_type(sides[i].type) ||
            mg_tune__missing_buffer(sides[i].buf, sides[i].count, sides[i].type))
            return 1;
    return aliased(c);
}
