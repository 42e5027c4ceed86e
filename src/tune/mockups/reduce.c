/* Mock-ups of MPI_Reduce (Hunold and Carpen-Amarie 2018, COLL-GL14..GL16).
 *
 * n = count elements of the datatype T per process, p = c->size; (n, T, op) are
 * uniform and go unchanged to the inner reductions, which all combine in rank
 * order, so commutative and non-commutative ops alike give the native result
 * as long as the grouping of the operands does not matter: integer
 * MPI_SUM/MPI_PROD, MIN/MAX/MINLOC/MAXLOC, the logical and bitwise ops and
 * user-defined ops (associative, as MPI requires). Floating-point
 * MPI_SUM/MPI_PROD would round differently and is refused, with the datatypes
 * the inner reductions mishandle, by mg_reduction_supported (mockup_api.h):
 * such calls run natively. The input is sendbuf, or recvbuf at a root with
 * MPI_IN_PLACE; recvbuf is not significant at the other processes and never
 * touched there. Temporary buffers are laid out as count x T
 * (mockup_api.h). */
#include "mockup_api.h"

/* The input of this process. */
static const void *reduce_input(const mg_call *c) { return c->in_place ? c->recvbuf : c->sendbuf; }

/* GL14 MPI_Allreduce: the root reduces into recvbuf, the others into a
 * temporary buffer they drop. A root with MPI_IN_PLACE first copies its input
 * out of recvbuf (Allreduce allows MPI_IN_PLACE only on all processes). */
static int as_allreduce_supports(const mg_call *c)
{
    MPI_Aint lo;
    MPI_Count n = mg_red_count(c);
    return mg_reduction_supported(c) && mg_fits_int(n) && mg_typed_span(n, mg_red_type(c), &lo) >= 0;
}

static mg_need as_allreduce_need(const mg_call *c)
{
    return (mg_need){mg_typed_need(mg_red_count(c), mg_red_type(c)), 0};
}

static int as_allreduce_run(const mg_call *c, mg_lease *lease)
{
    MPI_Datatype t = mg_red_type(c);
    MPI_Count n = mg_red_count(c);
    if (c->rank == c->root && !c->in_place) return PMPI_Allreduce(c->sendbuf, c->recvbuf, (int)n, t, c->op, c->comm);
    void *tmp = mg_typed_lease(lease, n, t);
    if (!tmp) return MPI_ERR_NO_MEM;
    if (c->rank != c->root) return PMPI_Allreduce(c->sendbuf, tmp, (int)n, t, c->op, c->comm);
    int rc = mg_copy_typed(c->recvbuf, tmp, n, t);
    if (rc == MPI_SUCCESS) rc = PMPI_Allreduce(tmp, c->recvbuf, (int)n, t, c->op, c->comm);
    return rc;
}

/* GL15 MPI_Reduce_scatter_block + MPI_Gather: every process copies its input
 * into a buffer of p x blk elements, blk = ceil(n / p), padded with copies of its
 * element 0 (valid values of T); Reduce_scatter_block reduces block i onto
 * process i and Gather collects the p blocks at the root, which keeps the first
 * n elements. Exact: the reduction is element-wise, so padding elements are
 * only ever combined with padding elements and then dropped. A user-defined op
 * never sees the pad (mg_padding_allowed): with one, only a count that p
 * divides is taken. A datatype
 * that is not one gap-free run (MPI_DOUBLE_INT, ...) is gathered as packed
 * bytes into the padded buffer, which is free by then: MPICH 5.0's binomial
 * MPI_Gather garbles such pair types from 4 processes on. */

/* Bytes of the padded buffer: p x blk elements laid out as T, and at the root
 * later the p packed blocks; -1 if too large. */
static MPI_Count padded_bytes(MPI_Count padded, MPI_Datatype t, MPI_Aint *lo)
{
    MPI_Count span = mg_typed_span(padded, t, lo), packed = mg_type_bytes(padded, t);
    if (span < 0 || packed < 0 || !mg_fits_int(packed)) return -1;
    return span > packed ? span : packed;
}

static int as_rsb_gather_supports(const mg_call *c)
{
    MPI_Aint lo;
    MPI_Count n = mg_red_count(c), blk = (n + c->size - 1) / c->size;
    return mg_reduction_supported(c) && mg_fits_int(n) && mg_fits_int(blk * c->size) &&
           (n % c->size == 0 || mg_padding_allowed(c)) && padded_bytes(blk * c->size, mg_red_type(c), &lo) >= 0;
}

static mg_need as_rsb_gather_need(const mg_call *c)
{
    MPI_Aint lo;
    MPI_Datatype t = mg_red_type(c);
    MPI_Count n = mg_red_count(c), blk = (n + c->size - 1) / c->size;
    return (mg_need){(size_t)padded_bytes(blk * c->size, t, &lo) + mg_typed_need(blk, t), 0};
}

static int as_rsb_gather_run(const mg_call *c, mg_lease *lease)
{
    MPI_Datatype t = mg_red_type(c);
    MPI_Count n = mg_red_count(c), blk = (n + c->size - 1) / c->size, padded = blk * c->size;
    MPI_Aint lo;
    char *raw = mg_lease_msg(lease, (size_t)padded_bytes(padded, t, &lo));
    char *in = raw ? raw - lo : NULL; /* the padded input as T */
    char *mine = mg_typed_lease(lease, blk, t);
    if (!in || !mine) return MPI_ERR_NO_MEM;
    int rc = mg_copy_typed(reduce_input(c), in, n, t);
    for (MPI_Count i = n; i < padded && rc == MPI_SUCCESS; i++)
        rc = mg_copy_typed(in, mg_typed_block(in, i, 1, t), 1, t);
    rc = mg_first_error(rc, PMPI_Reduce_scatter_block(in, mine, (int)blk, t, c->op, c->comm));
    int root = c->root;
    if (!mg_type_contiguous(blk, t, NULL)) {
        int bb = (int)mg_type_bytes(blk, t);
        char *slot = raw + (c->rank == root ? (MPI_Count)root * bb : 0);
        if (rc == MPI_SUCCESS) rc = mg_call_pack(mine, blk, t, slot, c->comm);
        if (c->rank != root)
            return mg_first_error(rc, PMPI_Gather(slot, bb, MPI_BYTE, NULL, 0, MPI_BYTE, root, c->comm));
        rc = mg_first_error(rc, PMPI_Gather(MPI_IN_PLACE, 0, MPI_BYTE, raw, bb, MPI_BYTE, root, c->comm));
        return rc == MPI_SUCCESS ? mg_call_unpack(raw, c->recvbuf, n, t, c->comm) : rc;
    }
    if (c->rank != root)
        return mg_first_error(rc, PMPI_Gather(mine, (int)blk, t, NULL, 0, MPI_DATATYPE_NULL, root, c->comm));
    /* Without padding the root gathers straight into recvbuf (its input, if
     * MPI_IN_PLACE, is no longer needed). */
    void *dst = padded == n ? c->recvbuf : in;
    rc = mg_first_error(rc, PMPI_Gather(mine, (int)blk, t, dst, (int)blk, t, root, c->comm));
    if (rc == MPI_SUCCESS && dst != c->recvbuf) rc = mg_copy_typed(in, c->recvbuf, n, t);
    return rc;
}

/* GL16 MPI_Reduce_scatter + MPI_Gatherv: the n elements are split into
 * consecutive segments of round-robin chunk counts (chunks of C elements,
 * mg_round_robin_counts); Reduce_scatter reduces segment i onto process i and
 * Gatherv puts the segments back in place in the root's recvbuf. Exact: the
 * segments partition the vector in order and each is reduced in rank order. */

/* Upper bound of the largest segment (Hunold and Carpen-Amarie 2018, Table 1: (floor(n / (C p)) + 1) C,
 * at most n). */
static MPI_Count rs_max_segment(MPI_Count n, int p, MPI_Count chunk)
{
    if (chunk < 1) chunk = 1;
    if (chunk > n) chunk = n;
    MPI_Count bound = (n / chunk / p + 1) * chunk;
    return bound < n ? bound : n;
}

static int as_rs_gatherv_supports(const mg_call *c)
{
    MPI_Aint lo;
    MPI_Count n = mg_red_count(c);
    return mg_reduction_supported(c) && mg_fits_int(n) &&
           mg_typed_span(rs_max_segment(n, c->size, c->chunk), mg_red_type(c), &lo) >= 0;
}

static mg_need as_rs_gatherv_need(const mg_call *c)
{
    MPI_Count n = mg_red_count(c);
    return (mg_need){mg_typed_need(rs_max_segment(n, c->size, c->chunk), mg_red_type(c)),
                     2 * (size_t)c->size * sizeof(int)};
}

static int as_rs_gatherv_run(const mg_call *c, mg_lease *lease)
{
    MPI_Datatype t = mg_red_type(c);
    MPI_Count n = mg_red_count(c);
    int *counts = mg_lease_ints(lease, 2 * (size_t)c->size);
    if (!counts) return MPI_ERR_NO_MEM;
    int *displs = counts + c->size;
    mg_round_robin_counts(n, c->size, c->chunk, counts, displs);
    int largest = 0;
    for (int i = 0; i < c->size; i++) largest = counts[i] > largest ? counts[i] : largest;
    void *mine = mg_typed_lease(lease, largest, t);
    if (!mine) return MPI_ERR_NO_MEM;
    int rc = PMPI_Reduce_scatter(reduce_input(c), mine, counts, t, c->op, c->comm);
    int me = counts[c->rank];
    if (c->rank != c->root)
        return mg_first_error(rc, PMPI_Gatherv(mine, me, t, NULL, NULL, NULL, MPI_DATATYPE_NULL, c->root, c->comm));
    return mg_first_error(rc, PMPI_Gatherv(mine, me, t, c->recvbuf, counts, displs, t, c->root, c->comm));
}

static const mg_mockup reduce_list[] = {
    {"reduce_as_allreduce", 14, "MPI_Allreduce", as_allreduce_supports, as_allreduce_need, as_allreduce_run},
    {"reduce_as_reducescatterblock_gather", 15, "MPI_Reduce_scatter_block + MPI_Gather", as_rsb_gather_supports,
     as_rsb_gather_need, as_rsb_gather_run},
    {"reduce_as_reducescatter_gatherv", 16, "MPI_Reduce_scatter + MPI_Gatherv", as_rs_gatherv_supports,
     as_rs_gatherv_need, as_rs_gatherv_run},
};

const mg_coll_mockups mg_reduce_mockups = MG_COLL_MOCKUPS(MG_COLL_REDUCE, "reduce", "MPI_Reduce", reduce_list);
