/* The calls of mg_collbench (collcalls.h). */
#include "collcalls.h"

#include "bench_util.h"

#include <stdio.h>
#include <string.h>

const mg_coll_neighborhood mg_coll_neighborhoods[] = {
    {"neighbor_allgather_cart", "MPI_Neighbor_allgather", "cartesian", C_NBR_CART},
    {"neighbor_allgather_complete", "MPI_Neighbor_allgather", "complete", C_NBR_COMPLETE},
};
const int mg_coll_nneighborhoods = (int)(sizeof mg_coll_neighborhoods / sizeof *mg_coll_neighborhoods);

const mg_coll_form_info mg_coll_forms[MG_NFORMS] = {
    [MG_FORM_BLOCKING] = {"default", ""},
    [MG_FORM_NONBLOCKING] = {"nonblocking", "COLL-NB"},
    [MG_FORM_PERSISTENT] = {"persistent", "COLL-PERS"},
    [MG_FORM_P2P] = {"p2p", "COLL-NBR"},
};

static const struct {
    const char *name; /* the library's name of the collective */
    call_kind kind;
} calls[] = {
    {"allgather", C_ALLGATHER}, {"allreduce", C_ALLREDUCE}, {"alltoall", C_ALLTOALL},        {"bcast", C_BCAST},
    {"gather", C_GATHER},       {"reduce", C_REDUCE},       {"reduce_scatter_block", C_RSB}, {"scan", C_SCAN},
    {"scatter", C_SCATTER}};

int mg_coll_kind_of(const char *name)
{
    for (size_t i = 0; i < sizeof calls / sizeof *calls; i++)
        if (strcmp(calls[i].name, name) == 0) return (int)calls[i].kind;
    for (int i = 0; i < mg_coll_nneighborhoods; i++)
        if (strcmp(mg_coll_neighborhoods[i].name, name) == 0) return (int)mg_coll_neighborhoods[i].kind;
    return -1;
}

int mg_coll_is_neighborhood(int kind) { return kind == C_NBR_CART || kind == C_NBR_COMPLETE; }

const char *mg_coll_mpi_name(const char *name, char *buf, size_t len)
{
    for (int i = 0; i < mg_coll_nneighborhoods; i++)
        if (strcmp(mg_coll_neighborhoods[i].name, name) == 0) {
            snprintf(buf, len, "%s", mg_coll_neighborhoods[i].mpi_name);
            return buf;
        }
    snprintf(buf, len, "MPI_%s", name);
    if (len > 4 && buf[4] >= 'a' && buf[4] <= 'z') buf[4] = (char)(buf[4] - 'a' + 'A');
    return buf;
}

const char *mg_coll_form_formula(const call_ctx *c, int form, char *buf, size_t len)
{
    char mpi[64];
    mg_coll_mpi_name(c->name, mpi, sizeof mpi);
    if (form == MG_FORM_NONBLOCKING) /* MPI_Allgather -> MPI_Iallgather */
        snprintf(buf, len, "MPI_I%c%s + MPI_Wait", mpi[4] - 'A' + 'a', mpi + 5);
    else if (form == MG_FORM_PERSISTENT)
        snprintf(buf, len, "%s_init + MPI_Start + MPI_Wait", mpi);
    else if (form == MG_FORM_P2P)
        snprintf(buf, len, "MPI_Irecv + MPI_Isend + MPI_Waitall");
    else
        snprintf(buf, len, "%s", mpi);
    return buf;
}

/* ---- Neighbourhoods ----------------------------------------------------------- */

int mg_coll_topology(call_ctx *c)
{
    c->topo = MPI_COMM_NULL;
    c->nnbr = 0;
    if (c->kind == C_NBR_CART) {
        int dims[2] = {0, 0}, periods[2] = {1, 1};
        MPI_Dims_create(c->size, 2, dims);
        int rc = MPI_Cart_create(c->comm, 2, dims, periods, 0, &c->topo);
        for (int d = 0; d < 2 && rc == MPI_SUCCESS; d++) {
            rc = MPI_Cart_shift(c->topo, d, 1, &c->nbr[2 * d], &c->nbr[2 * d + 1]);
            c->tag[2 * d] = 2 * d + 1; /* the neighbour below receives me as the one above it, and back */
            c->tag[2 * d + 1] = 2 * d;
        }
        c->nnbr = 4;
        return rc;
    }
    if (c->kind == C_NBR_COMPLETE) {
        if (c->size - 1 > MG_COLL_MAX_NBR) return MPI_ERR_OTHER;
        for (int r = 0; r < c->size; r++) /* in rank order; I am neighbour rank or rank - 1 of r */
            if (r != c->rank) c->tag[c->nnbr] = c->rank < r ? c->rank : c->rank - 1, c->nbr[c->nnbr++] = r;
        int ones[MG_COLL_MAX_NBR]; /* weights of 1 rather than MPI_UNWEIGHTED, which GCC takes for an empty array */
        for (int k = 0; k < c->nnbr; k++) ones[k] = 1;
        return MPI_Dist_graph_create_adjacent(c->comm, c->nnbr, c->nbr, ones, c->nnbr, c->nbr, ones, MPI_INFO_NULL, 0,
                                              &c->topo);
    }
    return MPI_SUCCESS;
}

void mg_coll_topology_free(call_ctx *c)
{
    if (c->topo != MPI_COMM_NULL) MPI_Comm_free(&c->topo);
    c->topo = MPI_COMM_NULL;
    c->nnbr = 0;
}

int mg_coll_p2p(call_ctx *c)
{
    MPI_Request req[2 * MG_COLL_MAX_NBR];
    size_t block = (size_t)c->count;
    int tsize = 0, rc = MPI_SUCCESS, n = 0;
    MPI_Type_size(c->type, &tsize);
    block *= (size_t)tsize;
    for (int k = 0; k < c->nnbr; k++) {
        int e = MPI_Irecv(c->rbuf + (size_t)k * block, c->count, c->type, c->nbr[k], k, c->topo, &req[n++]);
        if (rc == MPI_SUCCESS) rc = e;
    }
    for (int k = 0; k < c->nnbr; k++) {
        int e = MPI_Isend(c->sbuf, c->count, c->type, c->nbr[k], c->tag[k], c->topo, &req[n++]);
        if (rc == MPI_SUCCESS) rc = e;
    }
    int e = MPI_Waitall(n, req, MPI_STATUSES_IGNORE);
    return rc == MPI_SUCCESS ? e : rc;
}

/* ---- The calls ---------------------------------------------------------------- */

/* The call, through the library (MPI_) or natively (PMPI_). */
int mg_coll_call(void *p)
{
    call_ctx *c = p;
    int n = c->count;
    if (mg_coll_is_neighborhood(c->kind)) /* the library has none: MPI_ and PMPI_ are the same call */
        return c->native ? PMPI_Neighbor_allgather(c->sbuf, n, c->type, c->rbuf, n, c->type, c->topo)
                         : MPI_Neighbor_allgather(c->sbuf, n, c->type, c->rbuf, n, c->type, c->topo);
    if (c->native) switch (c->kind) {
        case C_ALLGATHER: return PMPI_Allgather(c->sbuf, n, c->type, c->rbuf, n, c->type, c->comm);
        case C_ALLREDUCE: return PMPI_Allreduce(c->sbuf, c->rbuf, n, c->type, c->op, c->comm);
        case C_ALLTOALL: return PMPI_Alltoall(c->sbuf, n, c->type, c->rbuf, n, c->type, c->comm);
        case C_BCAST: return PMPI_Bcast(c->rank == c->root ? c->sbuf : c->rbuf, n, c->type, c->root, c->comm);
        case C_GATHER: return PMPI_Gather(c->sbuf, n, c->type, c->rbuf, n, c->type, c->root, c->comm);
        case C_REDUCE: return PMPI_Reduce(c->sbuf, c->rbuf, n, c->type, c->op, c->root, c->comm);
        case C_RSB: return PMPI_Reduce_scatter_block(c->sbuf, c->rbuf, n, c->type, c->op, c->comm);
        case C_SCAN: return PMPI_Scan(c->sbuf, c->rbuf, n, c->type, c->op, c->comm);
        case C_SCATTER: return PMPI_Scatter(c->sbuf, n, c->type, c->rbuf, n, c->type, c->root, c->comm);
        default: return MPI_ERR_OTHER;
        }
    switch (c->kind) {
    case C_ALLGATHER: return MPI_Allgather(c->sbuf, n, c->type, c->rbuf, n, c->type, c->comm);
    case C_ALLREDUCE: return MPI_Allreduce(c->sbuf, c->rbuf, n, c->type, c->op, c->comm);
    case C_ALLTOALL: return MPI_Alltoall(c->sbuf, n, c->type, c->rbuf, n, c->type, c->comm);
    case C_BCAST: return MPI_Bcast(c->rank == c->root ? c->sbuf : c->rbuf, n, c->type, c->root, c->comm);
    case C_GATHER: return MPI_Gather(c->sbuf, n, c->type, c->rbuf, n, c->type, c->root, c->comm);
    case C_REDUCE: return MPI_Reduce(c->sbuf, c->rbuf, n, c->type, c->op, c->root, c->comm);
    case C_RSB: return MPI_Reduce_scatter_block(c->sbuf, c->rbuf, n, c->type, c->op, c->comm);
    case C_SCAN: return MPI_Scan(c->sbuf, c->rbuf, n, c->type, c->op, c->comm);
    case C_SCATTER: return MPI_Scatter(c->sbuf, n, c->type, c->rbuf, n, c->type, c->root, c->comm);
    default: return MPI_ERR_OTHER;
    }
    return MPI_ERR_OTHER;
}


int mg_coll_nonblocking(call_ctx *c)
{
    int n = c->count, rc;
    MPI_Request r = MPI_REQUEST_NULL;
    switch (c->kind) {
    case C_ALLGATHER: rc = MPI_Iallgather(c->sbuf, n, c->type, c->rbuf, n, c->type, c->comm, &r); break;
    case C_ALLREDUCE: rc = MPI_Iallreduce(c->sbuf, c->rbuf, n, c->type, c->op, c->comm, &r); break;
    case C_ALLTOALL: rc = MPI_Ialltoall(c->sbuf, n, c->type, c->rbuf, n, c->type, c->comm, &r); break;
    case C_BCAST: rc = MPI_Ibcast(c->rank == c->root ? c->sbuf : c->rbuf, n, c->type, c->root, c->comm, &r); break;
    case C_GATHER: rc = MPI_Igather(c->sbuf, n, c->type, c->rbuf, n, c->type, c->root, c->comm, &r); break;
    case C_REDUCE: rc = MPI_Ireduce(c->sbuf, c->rbuf, n, c->type, c->op, c->root, c->comm, &r); break;
    case C_RSB: rc = MPI_Ireduce_scatter_block(c->sbuf, c->rbuf, n, c->type, c->op, c->comm, &r); break;
    case C_SCAN: rc = MPI_Iscan(c->sbuf, c->rbuf, n, c->type, c->op, c->comm, &r); break;
    case C_SCATTER: rc = MPI_Iscatter(c->sbuf, n, c->type, c->rbuf, n, c->type, c->root, c->comm, &r); break;
    case C_NBR_CART:
    case C_NBR_COMPLETE: rc = MPI_Ineighbor_allgather(c->sbuf, n, c->type, c->rbuf, n, c->type, c->topo, &r); break;
    default: return MPI_ERR_OTHER;
    }
    return rc == MPI_SUCCESS ? MPI_Wait(&r, MPI_STATUS_IGNORE) : rc;
}

#ifdef MG_HAVE_MPI_PERSISTENT_COLL
int mg_coll_persistent_built(void) { return 1; }

int mg_coll_persistent_init(call_ctx *c, MPI_Request *r)
{
    int n = c->count;
    MPI_Info i = MPI_INFO_NULL;
    switch (c->kind) {
    case C_ALLGATHER: return MPI_Allgather_init(c->sbuf, n, c->type, c->rbuf, n, c->type, c->comm, i, r);
    case C_ALLREDUCE: return MPI_Allreduce_init(c->sbuf, c->rbuf, n, c->type, c->op, c->comm, i, r);
    case C_ALLTOALL: return MPI_Alltoall_init(c->sbuf, n, c->type, c->rbuf, n, c->type, c->comm, i, r);
    case C_BCAST: return MPI_Bcast_init(c->rank == c->root ? c->sbuf : c->rbuf, n, c->type, c->root, c->comm, i, r);
    case C_GATHER: return MPI_Gather_init(c->sbuf, n, c->type, c->rbuf, n, c->type, c->root, c->comm, i, r);
    case C_REDUCE: return MPI_Reduce_init(c->sbuf, c->rbuf, n, c->type, c->op, c->root, c->comm, i, r);
    case C_RSB: return MPI_Reduce_scatter_block_init(c->sbuf, c->rbuf, n, c->type, c->op, c->comm, i, r);
    case C_SCAN: return MPI_Scan_init(c->sbuf, c->rbuf, n, c->type, c->op, c->comm, i, r);
    case C_SCATTER: return MPI_Scatter_init(c->sbuf, n, c->type, c->rbuf, n, c->type, c->root, c->comm, i, r);
    case C_NBR_CART:
    case C_NBR_COMPLETE: return MPI_Neighbor_allgather_init(c->sbuf, n, c->type, c->rbuf, n, c->type, c->topo, i, r);
    default: return MPI_ERR_OTHER;
    }
}
#else
int mg_coll_persistent_built(void) { return 0; }

int mg_coll_persistent_init(call_ctx *c, MPI_Request *r)
{
    (void)c;
    *r = MPI_REQUEST_NULL;
    return MPI_ERR_UNSUPPORTED_OPERATION;
}
#endif

/* ---- Buffers and the results MPI defines ------------------------------------------ */

void mg_coll_buffer_sizes(const call_ctx *c, size_t block, size_t *s, size_t *r)
{
    size_t p = (size_t)c->size;
    switch (c->kind) {
    case C_ALLGATHER: *s = block, *r = block * p; break;
    case C_ALLTOALL: *s = *r = block * p; break;
    case C_GATHER: *s = block, *r = block * p; break;
    case C_SCATTER: *s = block * p, *r = block; break;
    case C_RSB: *s = block * p, *r = block; break;
    case C_NBR_CART:
    case C_NBR_COMPLETE: *s = block, *r = block * (size_t)c->nnbr; break;
    default: *s = *r = block; break;
    }
}

size_t mg_coll_key_bytes(int kind, size_t block, int p) { return kind == C_RSB ? block * (size_t)p : block; }

/* The send buffer of `rank`: rank-dependent bytes; for reductions on int or
 * double, small values so that sums stay exact and identical in any order. */
void mg_coll_send_image(int rank, MPI_Datatype type, unsigned char *buf, size_t sbytes, size_t tsize)
{
    for (size_t i = 0; i < sbytes; i++) buf[i] = mg_pattern_byte((unsigned)rank + 1u, i);
    if (type == MPI_INT)
        for (size_t i = 0; i < sbytes / tsize; i++) ((int *)buf)[i] = (int)((i * 7u + (size_t)rank) % 100u);
    if (type == MPI_DOUBLE)
        for (size_t i = 0; i < sbytes / tsize; i++) ((double *)buf)[i] = (double)((i + (size_t)rank) % 64u);
}

void mg_coll_fill(call_ctx *c, size_t sbytes, size_t rbytes, size_t tsize)
{
    mg_coll_send_image(c->rank, c->type, c->sbuf, sbytes, tsize);
    memset(c->rbuf, MG_BENCH_GUARD, rbytes);
}

/* acc op= x, elementwise over n elements of the call's type. */
static void combine(const call_ctx *c, unsigned char *acc, const unsigned char *x, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (c->type == MPI_INT) {
            int *a = (int *)acc + i, v = ((const int *)x)[i];
            *a = c->op == MPI_SUM ? *a + v : c->op == MPI_MAX ? (v > *a ? v : *a) : (*a | v);
        } else if (c->type == MPI_DOUBLE) {
            double *a = (double *)acc + i, v = ((const double *)x)[i];
            *a = c->op == MPI_SUM ? *a + v : (v > *a ? v : *a);
        } else {
            acc[i] |= x[i];
        }
    }
}

/* Whether MPI defines the reduction of the call (MPI_BYTE takes the bitwise operations only), so that its
 * result can be computed here. */
static int defined_reduction(const call_ctx *c) { return c->type != MPI_BYTE || c->op == MPI_BOR; }

/* What MPI's definition of the call leaves in this rank's receive buffer, from every rank's send_image:
 * into ref (rbytes), with *len the significant bytes (0: nothing to compare on this rank, or no reference
 * for an undefined reduction). scratch holds sbytes. Every algorithm of a library must give exactly this,
 * since the sums of send_image are exact in any order. */
void mg_coll_reference(const call_ctx *c, size_t sbytes, size_t rbytes, size_t tsize, unsigned char *ref,
                      unsigned char *scratch, size_t *len)
{
    size_t block = (size_t)c->count * tsize;
    int p = c->size, me = c->rank, root = c->root;
    memset(ref, MG_BENCH_GUARD, rbytes);
    *len = 0;
    switch (c->kind) {
    case C_ALLGATHER:
    case C_GATHER:
        if (c->kind == C_GATHER && me != root) return;
        for (int r = 0; r < p; r++) mg_coll_send_image(r, c->type, ref + (size_t)r * block, block, tsize);
        *len = block * (size_t)p;
        return;
    case C_ALLTOALL:
        for (int r = 0; r < p; r++) {
            mg_coll_send_image(r, c->type, scratch, sbytes, tsize);
            memcpy(ref + (size_t)r * block, scratch + (size_t)me * block, block);
        }
        *len = block * (size_t)p;
        return;
    case C_BCAST: /* the root's buffer is its send buffer */
        if (me == root) return;
        mg_coll_send_image(root, c->type, ref, block, tsize);
        *len = block;
        return;
    case C_SCATTER:
        mg_coll_send_image(root, c->type, scratch, sbytes, tsize);
        memcpy(ref, scratch + (size_t)me * block, block);
        *len = block;
        return;
    case C_NBR_CART:
    case C_NBR_COMPLETE: /* block k from neighbour k */
        for (int k = 0; k < c->nnbr; k++) mg_coll_send_image(c->nbr[k], c->type, ref + (size_t)k * block, block, tsize);
        *len = block * (size_t)c->nnbr;
        return;
    case C_ALLREDUCE:
    case C_REDUCE:
    case C_SCAN:
    case C_RSB: {
        if (!defined_reduction(c) || (c->kind == C_REDUCE && me != root)) return;
        int last = c->kind == C_SCAN ? me : p - 1;
        size_t whole = c->kind == C_RSB ? block * (size_t)p : block;
        mg_coll_send_image(0, c->type, scratch, whole, tsize);
        memcpy(ref, scratch + (c->kind == C_RSB ? (size_t)me * block : 0), block);
        for (int r = 1; r <= last; r++) {
            mg_coll_send_image(r, c->type, scratch, whole, tsize);
            combine(c, ref, scratch + (c->kind == C_RSB ? (size_t)me * block : 0), (size_t)c->count);
        }
        *len = block;
        return;
    }
    }
}

