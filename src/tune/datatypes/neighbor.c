/* MPI_Neighbor_alltoallw under the datatype strategies (collectives.c has the
 * rules of PACK in a collective). Per-neighbour types and byte displacements:
 * PACK streams every block (the blocks' bytes lie one after the other) and
 * gives MPI_PACKED for each; NORMALIZED replaces each type by its normal(t). */
#define _POSIX_C_SOURCE 200809L
#include "coll_util.h"
#include <limits.h>
#include <stdlib.h>

/* In- and outdegree of comm's topology; -1 if it has none. */
static int degrees(MPI_Comm comm, int *in, int *out)
{
    int topo = MPI_UNDEFINED, nd, weighted;
    if (PMPI_Topo_test(comm, &topo) != MPI_SUCCESS) return -1;
    switch (topo) {
    case MPI_CART:
        if (PMPI_Cartdim_get(comm, &nd) != MPI_SUCCESS) return -1;
        *in = *out = 2 * nd;
        return 0;
    case MPI_GRAPH:
        if (PMPI_Graph_neighbors_count(comm, rank_of(comm), in) != MPI_SUCCESS) return -1;
        *out = *in;
        return 0;
    case MPI_DIST_GRAPH: return PMPI_Dist_graph_neighbors_count(comm, in, out, &weighted) == MPI_SUCCESS ? 0 : -1;
    default: return -1;
    }
}

/* 1 if the in-neighbour i of a Cartesian comm is MPI_PROC_NULL (its block is not written). */
static int null_source(MPI_Comm comm, int i)
{
    int topo = MPI_UNDEFINED, src, dst;
    if (PMPI_Topo_test(comm, &topo) != MPI_SUCCESS || topo != MPI_CART) return 0;
    if (PMPI_Cart_shift(comm, i / 2, 1, &src, &dst) != MPI_SUCCESS) return 0;
    return (i % 2 ? dst : src) == MPI_PROC_NULL;
}

/* A side of MPI_Neighbor_alltoallw for the native call. */
typedef struct {
    int *counts;
    MPI_Aint *displs;
    MPI_Datatype *types;
    char *stream;
} wside;

static int wside_make(wside *w, int k, const int *counts, const MPI_Aint *displs, const MPI_Datatype *types, mg_dts s,
                      MPI_Count *total)
{
    *w = (wside){malloc(sizeof(int) * (size_t)k + 1), malloc(sizeof(MPI_Aint) * (size_t)k + 1),
                 malloc(sizeof(MPI_Datatype) * (size_t)k + 1), NULL};
    if (!w->counts || !w->displs || !w->types) return -1;
    MPI_Count at = 0;
    for (int i = 0; i < k; i++) {
        if (s == MG_DTS_NORMALIZED) {
            w->counts[i] = counts[i], w->displs[i] = displs[i], w->types[i] = mg_tune__dt_normal(types[i]);
            continue;
        }
        MPI_Count n = mg_type_bytes(counts[i], types[i]);
        if (n < 0 || n > INT_MAX) return -1;
        w->counts[i] = (int)n, w->displs[i] = (MPI_Aint)at, w->types[i] = MPI_PACKED;
        at += n;
    }
    *total = at;
    return 0;
}

static void wside_free(wside *w)
{
    free(w->counts);
    free(w->displs);
    free(w->types);
}

static int neighbor_alltoallw_dt(const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                                 const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                                 const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm)
{
    int in = 0, out = 0;
    if (!mg_tune__dt_active() || degrees(comm, &in, &out) != 0)
        return PMPI_Neighbor_alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes,
                                       comm);
    /* what this rank receives; its first derived type */
    MPI_Count bytes = 0;
    MPI_Datatype derived = MPI_DATATYPE_NULL;
    for (int i = 0; i < in; i++) {
        bytes += mg_type_bytes(recvcounts[i], recvtypes[i]);
        derived = derived_of(derived, recvtypes[i]);
    }
    for (int i = 0; i < out; i++) derived = derived_of(derived, sendtypes[i]);
    mg_dts s = mg_tune__dt_coll_strategy(MG_DTOP_NEIGHBOR_ALLTOALLW, comm, bytes, 0, derived);
    if (sendbuf == MPI_BOTTOM || recvbuf == MPI_BOTTOM) s = MG_DTS_NATIVE;
    count_call(comm, MG_DTOP_NEIGHBOR_ALLTOALLW, derived, MPI_DATATYPE_NULL, bytes, s);
    if (s == MG_DTS_NATIVE)
        return PMPI_Neighbor_alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes,
                                       comm);
    wside ws = {0}, wr = {0};
    MPI_Count sbytes = 0, rbytes = 0;
    mg_lease *l = NULL;
    int ok = !wside_make(&ws, out, sendcounts, sdispls, sendtypes, s, &sbytes) &&
             !wside_make(&wr, in, recvcounts, rdispls, recvtypes, s, &rbytes);
    const void *sb = sendbuf;
    void *rb = recvbuf;
    if (ok && s == MG_DTS_PACK) {
        l = mg_lease_acquire((size_t)(sbytes + rbytes), 0);
        sb = ws.stream = piece(l, (size_t)sbytes);
        rb = wr.stream = piece(l, (size_t)rbytes);
        for (int i = 0; i < out && ok && ws.stream; i++)
            ok = mg_tune__dt_put((const char *)sendbuf + sdispls[i], sendcounts[i], sendtypes[i],
                                 ws.stream + ws.displs[i], comm) == MPI_SUCCESS;
        ok = ok && ws.stream && wr.stream;
    }
    int rc;
    if (!ok) {
        rc = PMPI_Neighbor_alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes,
                                     comm);
    } else {
        rc = PMPI_Neighbor_alltoallw(sb, ws.counts, ws.displs, ws.types, rb, wr.counts, wr.displs, wr.types, comm);
        for (int i = 0; i < in && rc == MPI_SUCCESS && s == MG_DTS_PACK; i++)
            if (recvcounts[i] > 0 && !null_source(comm, i))
                rc = mg_tune__dt_get(wr.stream + wr.displs[i], (char *)recvbuf + rdispls[i], recvcounts[i],
                                     recvtypes[i], comm);
    }
    release(l);
    wside_free(&ws);
    wside_free(&wr);
    return rc;
}

MG_TUNE_API int MPI_Neighbor_alltoallw(const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                                       const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                                       const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm)
{
    mg_tune__rec_begin(__func__);
    return mg_tune__rec_done(neighbor_alltoallw_dt(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts,
                                                   rdispls, recvtypes, comm));
}
