/* Mock-ups of MPI_Allreduce (Hunold and Carpen-Amarie 2018, COLL-GL5..GL7).
 *
 * The inner reductions get the user's (count, datatype, op), the same on all
 * ranks as MPI requires. Every composition reduces each element over the ranks
 * in rank order, as the inner MPI reductions must, so non-commutative ops are
 * exact too. What the inner reductions may still do differently from the
 * native Allreduce is group the operands differently: that is exact for
 * integer MPI_SUM/MPI_PROD, for MIN, MAX, MINLOC, MAXLOC, the logical and
 * bitwise ops and for user-defined ops (associative, as MPI requires), not for
 * floating-point MPI_SUM/MPI_PROD, which round differently. Every mock-up
 * therefore takes only what mg_reduction_supported accepts (mockup_api.h),
 * which also excludes the datatypes the inner reductions mishandle;
 * floating-point sums and products run natively. Element j of a buffer lies
 * at j x extent; temporary buffers are laid out as the datatype
 * (mockup_api.h). The intercept layer sets sendcount = recvcount = count
 * and sendtype = recvtype = datatype. */
#include "mockup_api.h"

/* The reduction's input on this rank: the send buffer, or with MPI_IN_PLACE the receive buffer. */
static const void *input(const mg_call *c) { return c->in_place ? c->recvbuf : c->sendbuf; }

/* ---- GL5: MPI_Reduce to rank 0 + MPI_Bcast of the result. */

static int gl5_supports(const mg_call *c)
{
    return c->recvcount > 0 && mg_fits_int(c->recvcount) && mg_reduction_supported(c);
}

static mg_need gl5_need(const mg_call *c)
{
    (void)c;
    return (mg_need){0, 0};
}

static int gl5_run(const mg_call *c, mg_lease *lease)
{
    (void)lease;
    const int root = 0, n = (int)c->recvcount;
    int err;
    if (c->rank == root) /* in place at the Reduce's root means the same as in the Allreduce */
        err = PMPI_Reduce(c->in_place ? MPI_IN_PLACE : c->sendbuf, c->recvbuf, n, c->recvtype, c->op, root, c->comm);
    else /* the receive buffer is not significant here */
        err = PMPI_Reduce(input(c), NULL, n, c->recvtype, c->op, root, c->comm);
    return mg_first_error(err, PMPI_Bcast(c->recvbuf, n, c->recvtype, root, c->comm));
}

/* ---- GL6: MPI_Reduce_scatter_block + MPI_Allgather on the vector padded to
 * p x ceil(n/p) elements. The pad (at most p-1 elements) holds copies of
 * element 0, valid values of the type; reductions are elementwise, so the pad
 * never mixes into the first n elements, the only ones copied to the receive
 * buffer. A user-defined op never sees the pad (mg_padding_allowed): with one,
 * only a count that p divides is taken. When p divides n there is no pad and
 * the user's buffers are used directly. */

typedef struct {
    MPI_Count n, block, padded; /* elements: count, per rank, p x block */
} gl6_sizes;

static gl6_sizes gl6_sizes_of(const mg_call *c)
{
    gl6_sizes s;
    s.n = c->recvcount;
    s.block = (s.n + c->size - 1) / c->size;
    s.padded = s.block * c->size;
    return s;
}

static int gl6_supports(const mg_call *c)
{
    gl6_sizes s = gl6_sizes_of(c);
    MPI_Aint lo;
    return s.n > 0 && mg_fits_int(s.padded) && mg_reduction_supported(c) &&
           (s.padded == s.n || mg_padding_allowed(c)) && mg_typed_span(s.padded, c->recvtype, &lo) > 0;
}

static mg_need gl6_need(const mg_call *c)
{
    /* The result block, and with a pad the padded vector:
     * (n + pad) / p + (n + pad) elements at most (Hunold and Carpen-Amarie 2018, Table 1). */
    gl6_sizes s = gl6_sizes_of(c);
    MPI_Aint lo;
    size_t bytes = (size_t)mg_typed_span(s.block, c->recvtype, &lo);
    if (s.padded != s.n) bytes += (size_t)mg_typed_span(s.padded, c->recvtype, &lo);
    return (mg_need){bytes, 0};
}

static int gl6_run(const mg_call *c, mg_lease *lease)
{
    const gl6_sizes s = gl6_sizes_of(c);
    const MPI_Datatype type = c->recvtype;
    const int nb = (int)s.block;
    char *block = mg_typed_lease(lease, s.block, type);
    if (block == NULL) return MPI_ERR_NO_MEM;
    int err;
    if (s.padded == s.n) {
        err = PMPI_Reduce_scatter_block(input(c), block, nb, type, c->op, c->comm);
        return mg_first_error(err, PMPI_Allgather(block, nb, type, c->recvbuf, nb, type, c->comm));
    }

    char *vec = mg_typed_lease(lease, s.padded, type);
    MPI_Aint extent;
    if (vec == NULL) return MPI_ERR_NO_MEM;
    err = mg_type_extent(type, &extent);
    if (err == MPI_SUCCESS) err = mg_copy_typed(input(c), vec, s.n, type);
    for (MPI_Count j = s.n; err == MPI_SUCCESS && j < s.padded; j++)
        err = mg_copy_typed(input(c), vec + j * extent, 1, type);
    err = mg_first_error(err, PMPI_Reduce_scatter_block(vec, block, nb, type, c->op, c->comm));
    /* the padded vector is free again and receives the Allgather */
    err = mg_first_error(err, PMPI_Allgather(block, nb, type, vec, nb, type, c->comm));
    if (err == MPI_SUCCESS) err = mg_copy_typed(vec, c->recvbuf, s.n, type);
    return err;
}

/* ---- GL7: MPI_Reduce_scatter with chunked round-robin counts (chunks of C
 * elements, Hunold and Carpen-Amarie 2018, Appendix A) +
 * MPI_Allgatherv(MPI_IN_PLACE). Reduce_scatter hands out the result in rank
 * order, so rank i's block belongs at the prefix sum of the counts before it:
 * it is reduced straight into its place in the receive buffer, and the
 * Allgatherv fills in the other blocks. With MPI_IN_PLACE the Reduce_scatter
 * leaves the block at the start of the buffer and it is moved up to its place.
 * No message memory at all. */

static int gl7_supports(const mg_call *c)
{
    return c->recvcount > 0 && mg_fits_int(c->recvcount) && mg_reduction_supported(c);
}

static mg_need gl7_need(const mg_call *c)
{
    return (mg_need){0, 2 * (size_t)c->size * sizeof(int)}; /* recvcounts, displs */
}

/* Moves count elements from index 0 to index `by` > 0 of buf, from the top in
 * pieces of at most `by` elements, so that no piece overlaps its destination. */
static int move_up(char *buf, MPI_Count count, MPI_Count by, MPI_Datatype type)
{
    MPI_Aint extent;
    int err = mg_type_extent(type, &extent);
    for (MPI_Count end = count; err == MPI_SUCCESS && end > 0;) {
        MPI_Count start = end > by ? end - by : 0;
        err = mg_copy_typed(buf + start * extent, buf + (start + by) * extent, end - start, type);
        end = start;
    }
    return err;
}

static int gl7_run(const mg_call *c, mg_lease *lease)
{
    const MPI_Datatype type = c->recvtype;
    const int p = c->size, r = c->rank;
    int *counts = mg_lease_ints(lease, 2 * (size_t)p);
    if (counts == NULL) return MPI_ERR_NO_MEM;
    int *displs = counts + p;
    mg_round_robin_counts(c->recvcount, p, c->chunk > 0 ? c->chunk : 1, counts, displs);
    displs[0] = 0; /* the blocks in rank order, whatever offsets the distribution reports */
    for (int i = 1; i < p; i++) displs[i] = displs[i - 1] + counts[i - 1];

    char *buf = c->recvbuf;
    int err;
    if (c->in_place) {
        err = PMPI_Reduce_scatter(MPI_IN_PLACE, buf, counts, type, c->op, c->comm);
        if (err == MPI_SUCCESS && displs[r] > 0) err = move_up(buf, counts[r], displs[r], type);
    } else {
        MPI_Aint extent = 0;
        err = mg_type_extent(type, &extent);
        /* an empty block points at recvbuf itself: one past its end may be the send buffer,
         * and MPICH rejects that as aliasing even for zero elements */
        err = mg_first_error(err, PMPI_Reduce_scatter(c->sendbuf, counts[r] > 0 ? buf + displs[r] * extent : buf,
                                                      counts, type, c->op, c->comm));
    }
    return mg_first_error(err, PMPI_Allgatherv(MPI_IN_PLACE, counts[r], type, buf, counts, displs, type, c->comm));
}

static const mg_mockup allreduce_list[] = {
    {"allreduce_as_reduce_bcast", 5, "MPI_Reduce + MPI_Bcast", gl5_supports, gl5_need, gl5_run},
    {"allreduce_as_reducescatterblock_allgather", 6, "MPI_Reduce_scatter_block + MPI_Allgather", gl6_supports, gl6_need,
     gl6_run},
    {"allreduce_as_reducescatter_allgatherv", 7, "MPI_Reduce_scatter + MPI_Allgatherv", gl7_supports, gl7_need,
     gl7_run},
};

const mg_coll_mockups mg_allreduce_mockups =
    MG_COLL_MOCKUPS(MG_COLL_ALLREDUCE, "allreduce", "MPI_Allreduce", allreduce_list);
