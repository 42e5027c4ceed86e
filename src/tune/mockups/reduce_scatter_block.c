/* Mock-ups of MPI_Reduce_scatter_block (Hunold and Carpen-Amarie 2018, COLL-GL17..GL19).
 *
 * Each process contributes N = p x n elements of the datatype T and receives
 * block `rank` (n elements) of the element-wise reduction. (N, T, op) are
 * uniform and go unchanged to the inner reductions, which all combine in rank
 * order, so commutative and non-commutative ops alike give the native result
 * as long as the grouping of the operands does not matter (integer
 * MPI_SUM/MPI_PROD, MIN/MAX/LOC, logical, bitwise and user-defined ops).
 * Floating-point MPI_SUM/MPI_PROD, which would round differently, and the
 * datatypes the inner reductions mishandle are refused by
 * mg_reduction_supported (mockup_api.h) and run natively. With MPI_IN_PLACE
 * (on all processes, as MPI requires) the input is recvbuf and the result is
 * its first n elements; the rest of recvbuf is undefined after the native call
 * and not written here. */
#include "mockup_api.h"

/* The input of this process. */
static const void *rsb_input(const mg_call *c) { return c->in_place ? c->recvbuf : c->sendbuf; }

/* The call may go to other reductions (mg_reduction_supported), inner counts
 * (N, n) fit an int and a buffer of N x T can be laid out. Uniform. */
static int rsb_fits(const mg_call *c)
{
    MPI_Aint lo;
    MPI_Count total = mg_red_count(c);
    return mg_reduction_supported(c) && mg_fits_int(total) && mg_typed_span(total, mg_red_type(c), &lo) >= 0;
}

/* GL17 MPI_Reduce + MPI_Scatter: the whole vector is reduced onto process 0,
 * which scatters block i to process i. Exact: the same element-wise reduction
 * in rank order, then pure data movement. */
static mg_need whole_vector_need(const mg_call *c)
{
    return (mg_need){mg_typed_need(mg_red_count(c), mg_red_type(c)), 0};
}

static int as_reduce_scatter_run(const mg_call *c, mg_lease *lease)
{
    MPI_Datatype t = mg_red_type(c);
    MPI_Count total = mg_red_count(c), n = total / c->size;
    void *whole = NULL;
    if (c->rank == 0 && !(whole = mg_typed_lease(lease, total, t))) return MPI_ERR_NO_MEM;
    int rc = PMPI_Reduce(rsb_input(c), whole, (int)total, t, c->op, 0, c->comm);
    return mg_first_error(rc, PMPI_Scatter(whole, (int)n, t, c->recvbuf, (int)n, t, 0, c->comm));
}

/* GL18 MPI_Reduce_scatter: recvcounts[i] = n for all i gives the same call
 * (including MPI_IN_PLACE, passed through). */
static mg_need counts_need(const mg_call *c) { return (mg_need){0, (size_t)c->size * sizeof(int)}; }

static int as_reducescatter_run(const mg_call *c, mg_lease *lease)
{
    int *counts = mg_lease_ints(lease, (size_t)c->size);
    if (!counts) return MPI_ERR_NO_MEM;
    MPI_Count n = mg_red_count(c) / c->size;
    for (int i = 0; i < c->size; i++) counts[i] = (int)n;
    return PMPI_Reduce_scatter(c->sendbuf, c->recvbuf, counts, mg_red_type(c), c->op, c->comm);
}

/* GL19 MPI_Allreduce: every process reduces the whole vector into a temporary
 * buffer and copies out its block. Exact: the same element-wise reduction in
 * rank order. */
static int as_allreduce_run(const mg_call *c, mg_lease *lease)
{
    MPI_Datatype t = mg_red_type(c);
    MPI_Count total = mg_red_count(c), n = total / c->size;
    void *whole = mg_typed_lease(lease, total, t);
    if (!whole) return MPI_ERR_NO_MEM;
    int rc = PMPI_Allreduce(rsb_input(c), whole, (int)total, t, c->op, c->comm);
    if (rc == MPI_SUCCESS) rc = mg_copy_typed(mg_typed_block(whole, c->rank, n, t), c->recvbuf, n, t);
    return rc;
}

static const mg_mockup rsb_list[] = {
    {"reducescatterblock_as_reduce_scatter", 17, "MPI_Reduce + MPI_Scatter", rsb_fits, whole_vector_need,
     as_reduce_scatter_run},
    {"reducescatterblock_as_reducescatter", 18, "MPI_Reduce_scatter", rsb_fits, counts_need, as_reducescatter_run},
    {"reducescatterblock_as_allreduce", 19, "MPI_Allreduce", rsb_fits, whole_vector_need, as_allreduce_run},
};

const mg_coll_mockups mg_reduce_scatter_block_mockups =
    MG_COLL_MOCKUPS(MG_COLL_REDUCE_SCATTER_BLOCK, "reduce_scatter_block", "MPI_Reduce_scatter_block", rsb_list);
