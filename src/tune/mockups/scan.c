/* Mock-up of MPI_Scan (Hunold and Carpen-Amarie 2018, COLL-GL20).
 *
 * n elements of the datatype T per process; (n, T, op) are uniform and go
 * unchanged to MPI_Exscan and MPI_Reduce_local. The input x_i is sendbuf, or
 * recvbuf with MPI_IN_PLACE (which any subset of the processes may use).
 * Exscan and the final Reduce_local group the operands differently from the
 * native Scan, which is exact where grouping does not matter (integer
 * MPI_SUM/MPI_PROD, MIN/MAX/LOC, logical, bitwise and user-defined ops).
 * Floating-point MPI_SUM/MPI_PROD would round differently: it is refused, with
 * the datatypes the inner reductions mishandle, by mg_reduction_supported
 * (mockup_api.h) and runs natively. */
#include "mockup_api.h"

/* GL20 MPI_Exscan + MPI_Reduce_local: Exscan yields e_i = x_0 op ... op x_{i-1}
 * on process i > 0, and the inclusive result is e_i op x_i, computed as
 * MPI_Reduce_local(inbuf = e_i, inoutbuf = x_i) (inoutbuf = inbuf op inoutbuf);
 * process 0's result is x_0. In general Exscan writes e_i into a temporary
 * buffer and x_i is copied into recvbuf first (already there with
 * MPI_IN_PLACE), so the order is the native one for non-commutative ops.
 * For a commutative op without MPI_IN_PLACE no copy is needed: Exscan writes
 * e_i straight into recvbuf and Reduce_local(sendbuf, recvbuf) gives
 * x_i op e_i = e_i op x_i. Both paths make the same calls. */
static int as_exscan_supports(const mg_call *c)
{
    MPI_Aint lo;
    MPI_Count n = mg_red_count(c);
    return mg_reduction_supported(c) && mg_fits_int(n) && mg_typed_span(n, mg_red_type(c), &lo) >= 0;
}

static mg_need as_exscan_need(const mg_call *c)
{
    /* Table 1 of Hunold and Carpen-Amarie (2018) says none; that holds for
     * commutative ops without MPI_IN_PLACE only, and in_place is not uniform,
     * so every process reserves n. */
    return (mg_need){mg_typed_need(mg_red_count(c), mg_red_type(c)), 0};
}

static int as_exscan_run(const mg_call *c, mg_lease *lease)
{
    MPI_Datatype t = mg_red_type(c);
    int n = (int)mg_red_count(c);
    if (c->commutative && !c->in_place) {
        int rc = PMPI_Exscan(c->sendbuf, c->recvbuf, n, t, c->op, c->comm);
        if (rc != MPI_SUCCESS) return rc;
        if (c->rank == 0) return mg_copy_typed(c->sendbuf, c->recvbuf, n, t);
        return PMPI_Reduce_local(c->sendbuf, c->recvbuf, n, t, c->op);
    }
    void *prefix = mg_typed_lease(lease, n, t);
    if (!prefix) return MPI_ERR_NO_MEM;
    const void *in = c->in_place ? c->recvbuf : c->sendbuf;
    int rc = PMPI_Exscan(in, prefix, n, t, c->op, c->comm);
    if (rc == MPI_SUCCESS && !c->in_place) rc = mg_copy_typed(c->sendbuf, c->recvbuf, n, t);
    if (rc == MPI_SUCCESS && c->rank > 0) rc = PMPI_Reduce_local(prefix, c->recvbuf, n, t, c->op);
    return rc;
}

static const mg_mockup scan_list[] = {
    {"scan_as_exscan_reducelocal", 20, "MPI_Exscan + MPI_Reduce_local", as_exscan_supports, as_exscan_need,
     as_exscan_run},
};

const mg_coll_mockups mg_scan_mockups = MG_COLL_MOCKUPS(MG_COLL_SCAN, "scan", "MPI_Scan", scan_list);
