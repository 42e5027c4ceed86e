/* The datatype strategies of the collectives (collectives.h, strategy.h).
 *
 * PACK: every rank passes MPI_PACKED, block for block the bytes its own
 * count x type packs to (equal on both ends of every transfer, since the type
 * signatures match), so the call is one of matching MPI_PACKED signatures
 * whatever types the ranks use. The choice must be the same on every rank:
 * for the regular collectives it is made from the configuration, the
 * communicator and the block's bytes (and p x block must fit an int); the v
 * forms and MPI_Neighbor_alltoallw decide from the configuration and the
 * communicator alone. A rank that cannot take part as decided (no memory, a
 * stream of more than INT_MAX bytes in a v form, MPI_BOTTOM) makes the call
 * with its own arguments: on a homogeneous system a typed block and its
 * MPI_PACKED bytes are the same message, which MPICH, Open MPI and Intel MPI
 * all accept. A rank's bytes that already lie contiguously in its buffer are
 * passed where they lie; the others go through a stream from the lease.
 *
 * MPI_IN_PLACE: where a rank's own block is sent from the receive buffer
 * (Allgather, Alltoall and their v forms), it is packed into the stream
 * first; a block that stays in place is not unpacked. */
#define _POSIX_C_SOURCE 200809L
#include "collectives.h"
#include "coll_util.h"
#include <limits.h>
#include <stdlib.h>

/* A stream of n bytes from the lease (acquired at the first). */
static char *stream(mg_lease **l, size_t total, size_t n)
{
    if (!*l) *l = mg_lease_acquire(total, 0);
    return piece(*l, n);
}

/* Unpacks blocks [0, p) of n bytes (count x type each) from s into buf but
 * block `skip` (-1: none). */
static int get_blocks(const char *s, MPI_Count n, void *buf, MPI_Count count, MPI_Datatype type, int p, int skip,
                      MPI_Comm comm)
{
    if (skip < 0) return mg_tune__dt_get(s, buf, (MPI_Count)p * count, type, comm);
    int rc = mg_tune__dt_get(s, buf, (MPI_Count)skip * count, type, comm);
    if (rc == MPI_SUCCESS && skip + 1 < p)
        rc = mg_tune__dt_get(s + (skip + 1) * n, mg_typed_block(buf, skip + 1, count, type),
                             (MPI_Count)(p - skip - 1) * count, type, comm);
    return rc;
}

/* ---- the regular collectives ---- */

int mg_tune__dt_bcast(void *buf, MPI_Count count, MPI_Datatype type, int root, MPI_Comm comm, mg_bcast_fn inner)
{
    MPI_Count n = mg_type_bytes(count, type);
    mg_dts s = mg_tune__dt_coll_strategy(MG_DTOP_BCAST, comm, n, 1, type);
    if (s == MG_DTS_PACK && (n <= 0 || n > INT_MAX || at_bottom(buf, count))) s = MG_DTS_NATIVE;
    count_call(comm, MG_DTOP_BCAST, type, MPI_DATATYPE_NULL, n, s);
    if (s == MG_DTS_NORMALIZED) return inner(buf, count, mg_tune__dt_normal(type), root, comm);
    if (s == MG_DTS_NATIVE) return inner(buf, count, type, root, comm);
    char *run = mg_contiguous_run(buf, count, type);
    if (run) return inner(run, n, MPI_PACKED, root, comm);
    int me = rank_of(comm);
    mg_lease *l = NULL;
    char *st = stream(&l, (size_t)n, (size_t)n);
    if (!st || (me == root && mg_tune__dt_put(buf, count, type, st, comm) != MPI_SUCCESS)) {
        release(l);
        return inner(buf, count, type, root, comm);
    }
    int rc = inner(st, n, MPI_PACKED, root, comm);
    if (rc == MPI_SUCCESS && me != root) rc = mg_tune__dt_get(st, buf, count, type, comm);
    release(l);
    return rc;
}

/* The send side of a regular collective: count x type at buf as n bytes
 * (MPI_IN_PLACE stays); NULL if out of memory or packing failed. */
static const void *send_side(const void *buf, MPI_Count count, MPI_Datatype type, MPI_Count n, mg_lease **l,
                             size_t total, MPI_Comm comm)
{
    if (buf == MPI_IN_PLACE || n == 0) return buf;
    const char *run = mg_contiguous_run(buf, count, type);
    if (run) return run;
    char *st = stream(l, total, (size_t)n);
    return st && mg_tune__dt_put(buf, count, type, st, comm) == MPI_SUCCESS ? st : NULL;
}

int mg_tune__dt_gather(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                       MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, mg_rooted_fn inner)
{
    int me = rank_of(comm), p = size_of(comm), at_root = me == root, in_place = sendbuf == MPI_IN_PLACE;
    /* the receive arguments count at the root only */
    MPI_Count n = at_root ? mg_type_bytes(recvcount, recvtype) : mg_type_bytes(sendcount, sendtype);
    mg_dts s = mg_tune__dt_coll_strategy(
        MG_DTOP_GATHER, comm, n, 1,
        derived_of(in_place ? MPI_DATATYPE_NULL : sendtype, at_root ? recvtype : MPI_DATATYPE_NULL));
    if (s == MG_DTS_PACK && (n <= 0 || !mg_fits_int_product(p, n) || (!in_place && at_bottom(sendbuf, sendcount)) ||
                             (at_root && at_bottom(recvbuf, recvcount))))
        s = MG_DTS_NATIVE;
    count_call(comm, MG_DTOP_GATHER, in_place ? MPI_DATATYPE_NULL : sendtype, at_root ? recvtype : MPI_DATATYPE_NULL, n,
               s);
    if (s == MG_DTS_NORMALIZED)
        return inner(sendbuf, sendcount, in_place ? sendtype : mg_tune__dt_normal(sendtype), recvbuf, recvcount,
                     at_root ? mg_tune__dt_normal(recvtype) : recvtype, root, comm);
    if (s == MG_DTS_NATIVE) return inner(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
    char *rrun = at_root ? mg_contiguous_run(recvbuf, (MPI_Count)p * recvcount, recvtype) : NULL, *rst = NULL;
    size_t total = (size_t)n + (at_root && !rrun ? (size_t)p * (size_t)n : 0);
    mg_lease *l = NULL;
    const void *sb = send_side(sendbuf, sendcount, sendtype, n, &l, total, comm);
    if (sb && at_root && !rrun) rrun = rst = stream(&l, total, (size_t)p * (size_t)n);
    if (!sb || (at_root && !rrun)) {
        release(l);
        return inner(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
    }
    int rc = inner(sb, n, MPI_PACKED, rrun, n, MPI_PACKED, root, comm);
    if (rc == MPI_SUCCESS && rst) rc = get_blocks(rst, n, recvbuf, recvcount, recvtype, p, in_place ? root : -1, comm);
    release(l);
    return rc;
}

int mg_tune__dt_scatter(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                        MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, mg_rooted_fn inner)
{
    int me = rank_of(comm), p = size_of(comm), at_root = me == root, in_place = recvbuf == MPI_IN_PLACE;
    /* the send arguments count at the root only */
    MPI_Count n = at_root ? mg_type_bytes(sendcount, sendtype) : mg_type_bytes(recvcount, recvtype);
    mg_dts s = mg_tune__dt_coll_strategy(
        MG_DTOP_SCATTER, comm, n, 1,
        derived_of(at_root ? sendtype : MPI_DATATYPE_NULL, in_place ? MPI_DATATYPE_NULL : recvtype));
    if (s == MG_DTS_PACK && (n <= 0 || !mg_fits_int_product(p, n) || (at_root && at_bottom(sendbuf, sendcount)) ||
                             (!in_place && at_bottom(recvbuf, recvcount))))
        s = MG_DTS_NATIVE;
    count_call(comm, MG_DTOP_SCATTER, at_root ? sendtype : MPI_DATATYPE_NULL, in_place ? MPI_DATATYPE_NULL : recvtype,
               n, s);
    if (s == MG_DTS_NORMALIZED)
        return inner(sendbuf, sendcount, at_root ? mg_tune__dt_normal(sendtype) : sendtype, recvbuf, recvcount,
                     in_place ? recvtype : mg_tune__dt_normal(recvtype), root, comm);
    if (s == MG_DTS_NATIVE) return inner(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
    char *rrun = in_place ? NULL : mg_contiguous_run(recvbuf, recvcount, recvtype), *rst = NULL;
    size_t total = (at_root ? (size_t)p * (size_t)n : 0) + (in_place || rrun ? 0 : (size_t)n);
    mg_lease *l = NULL;
    const void *sb =
        at_root ? send_side(sendbuf, (MPI_Count)p * sendcount, sendtype, (MPI_Count)p * n, &l, total, comm) : NULL;
    if ((sb || !at_root) && !in_place && !rrun) rrun = rst = stream(&l, total, (size_t)n);
    if ((at_root && !sb) || (!in_place && !rrun)) {
        release(l);
        return inner(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
    }
    int rc = inner(sb, n, MPI_PACKED, in_place ? MPI_IN_PLACE : rrun, n, MPI_PACKED, root, comm);
    if (rc == MPI_SUCCESS && rst) rc = mg_tune__dt_get(rst, recvbuf, recvcount, recvtype, comm);
    release(l);
    return rc;
}

/* Allgather (own block in place: sent from the receive buffer) and Alltoall
 * (all blocks sent from it). */
static int all_to(int all, const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                  MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, mg_allgather_fn inner)
{
    int in_place = sendbuf == MPI_IN_PLACE, me = rank_of(comm), p = size_of(comm);
    MPI_Count n = in_place ? mg_type_bytes(recvcount, recvtype) : mg_type_bytes(sendcount, sendtype);
    mg_dts s = mg_tune__dt_coll_strategy(all ? MG_DTOP_ALLTOALL : MG_DTOP_ALLGATHER, comm, n, 1,
                                         derived_of(in_place ? MPI_DATATYPE_NULL : sendtype, recvtype));
    if (s == MG_DTS_PACK && (n <= 0 || !mg_fits_int_product(p, n) || (!in_place && at_bottom(sendbuf, sendcount)) ||
                             at_bottom(recvbuf, recvcount)))
        s = MG_DTS_NATIVE;
    count_call(comm, all ? MG_DTOP_ALLTOALL : MG_DTOP_ALLGATHER, in_place ? MPI_DATATYPE_NULL : sendtype, recvtype, n,
               s);
    if (s == MG_DTS_NORMALIZED)
        return inner(sendbuf, sendcount, in_place ? sendtype : mg_tune__dt_normal(sendtype), recvbuf, recvcount,
                     mg_tune__dt_normal(recvtype), comm);
    if (s == MG_DTS_NATIVE) return inner(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    MPI_Count sblocks = all ? p : 1;
    char *rrun = mg_contiguous_run(recvbuf, (MPI_Count)p * recvcount, recvtype), *rst = NULL;
    size_t total = (in_place ? 0 : (size_t)sblocks * (size_t)n) + (rrun ? 0 : (size_t)p * (size_t)n);
    mg_lease *l = NULL;
    const void *sb = send_side(sendbuf, sblocks * sendcount, sendtype, sblocks * n, &l, total, comm);
    if (sb && !rrun) {
        rrun = rst = stream(&l, total, (size_t)p * (size_t)n);
        if (rst && in_place) {
            /* what is sent from the receive buffer */
            int put = all ? mg_tune__dt_put(recvbuf, (MPI_Count)p * recvcount, recvtype, rst, comm)
                          : mg_tune__dt_put(mg_typed_block(recvbuf, me, recvcount, recvtype), recvcount, recvtype,
                                            rst + (MPI_Count)me * n, comm);
            if (put != MPI_SUCCESS) sb = NULL;
        }
    }
    if (!sb || !rrun) {
        release(l);
        return inner(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    }
    int rc = inner(sb, n, MPI_PACKED, rrun, n, MPI_PACKED, comm);
    if (rc == MPI_SUCCESS && rst)
        rc = get_blocks(rst, n, recvbuf, recvcount, recvtype, p, in_place && !all ? me : -1, comm);
    release(l);
    return rc;
}

int mg_tune__dt_allgather(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                          MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, mg_allgather_fn inner)
{
    return all_to(0, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, inner);
}

int mg_tune__dt_alltoall(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                         MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, mg_allgather_fn inner)
{
    return all_to(1, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, inner);
}

/* ---- the v forms ----
 * A side of p blocks (counts[i] x type at displs[i] x extent) as MPI_PACKED:
 * byte counts and displacements from `base`, which is the application's
 * buffer where its blocks are contiguous and the byte displacements fit an
 * int, else a stream of the blocks one after the other. */
typedef struct {
    int *counts, *displs;
    char *base;
    char *stream; /* the base when the blocks go through it, else NULL */
    MPI_Count total;
} vside;

/* Sizes the side (counts and displacements come from the lease later): 0, or
 * -1 when its bytes cannot be MPI_PACKED ints. */
static int vside_plan(vside *v, const void *buf, const int *counts, const int *displs, MPI_Datatype type, int p)
{
    MPI_Count size = mg_type_bytes(1, type), total = 0, lo = 0, hi = 0;
    MPI_Aint lb, extent, off;
    if (size < 0 || PMPI_Type_get_extent(type, &lb, &extent) != MPI_SUCCESS) return -1;
    for (int i = 0; i < p; i++) {
        if (counts[i] < 0) return -1;
        total += (MPI_Count)counts[i] * size;
        MPI_Count d = (MPI_Count)displs[i] * size;
        lo = d < lo ? d : lo;
        hi = d + counts[i] * size > hi ? d + counts[i] * size : hi;
    }
    if (total > INT_MAX) return -1;
    int direct =
        size > 0 && extent == (MPI_Aint)size && mg_type_contiguous(1, type, &off) && lo >= INT_MIN && hi <= INT_MAX;
    *v = (vside){.base = direct ? (char *)buf + off : NULL, .total = total};
    return 0;
}

/* Fills the side's counts and displacements from the lease, and its stream. */
static int vside_fill(vside *v, mg_lease *l, const int *counts, const int *displs, MPI_Datatype type, int p)
{
    MPI_Count size = mg_type_bytes(1, type);
    v->counts = mg_lease_ints(l, (size_t)p);
    v->displs = mg_lease_ints(l, (size_t)p);
    if (!v->counts || !v->displs) return -1;
    if (!v->base) v->base = v->stream = piece(l, (size_t)v->total);
    if (!v->base) return -1;
    MPI_Count at = 0;
    for (int i = 0; i < p; i++) {
        v->counts[i] = (int)(counts[i] * size);
        v->displs[i] = v->stream ? (int)at : (int)(displs[i] * size);
        at += v->counts[i];
    }
    return 0;
}

/* Packs (put) or unpacks the side's blocks but block `skip` (-1: none). */
static int vside_move(const vside *v, int put, void *buf, const int *counts, const int *displs, MPI_Datatype type,
                      int p, int skip, MPI_Comm comm)
{
    int rc = MPI_SUCCESS;
    for (int i = 0; i < p && rc == MPI_SUCCESS && v->stream; i++) {
        if (i == skip || counts[i] == 0) continue;
        char *user = mg_typed_block(buf, displs[i], 1, type);
        rc = put ? mg_tune__dt_put(user, counts[i], type, v->stream + v->displs[i], comm)
                 : mg_tune__dt_get(v->stream + v->displs[i], user, counts[i], type, comm);
    }
    return rc;
}

static size_t vside_need(const vside *v) { return v->base ? 0 : (size_t)v->total; }

static int gatherv_dt(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                      const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    if (!mg_tune__dt_active())
        return PMPI_Gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm);
    int me = rank_of(comm), at_root = me == root, in_place = sendbuf == MPI_IN_PLACE;
    MPI_Datatype st = in_place ? MPI_DATATYPE_NULL : sendtype, rt = at_root ? recvtype : MPI_DATATYPE_NULL;
    MPI_Count n = in_place ? 0 : mg_type_bytes(sendcount, sendtype);
    mg_dts s = mg_tune__dt_coll_strategy(MG_DTOP_GATHERV, comm, n, 0, derived_of(st, rt));
    if (s == MG_DTS_PACK && ((!in_place && at_bottom(sendbuf, sendcount)) || (at_root && recvbuf == MPI_BOTTOM)))
        s = MG_DTS_NATIVE;
    count_call(comm, MG_DTOP_GATHERV, st, rt, n, s);
    if (s == MG_DTS_NORMALIZED)
        return PMPI_Gatherv(sendbuf, sendcount, in_place ? sendtype : mg_tune__dt_normal(sendtype), recvbuf, recvcounts,
                            displs, at_root ? mg_tune__dt_normal(recvtype) : recvtype, root, comm);
    int p = s == MG_DTS_PACK ? size_of(comm) : 0;
    vside r = {0};
    if (s != MG_DTS_PACK || n < 0 || n > INT_MAX ||
        (at_root && vside_plan(&r, recvbuf, recvcounts, displs, recvtype, p)))
        return PMPI_Gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm);
    mg_lease *l = mg_lease_acquire((size_t)n + vside_need(&r), at_root ? 2 * (size_t)p * sizeof(int) : 0);
    const void *sb = l ? send_side(sendbuf, sendcount, sendtype, n, &l, 0, comm) : NULL;
    if (!sb || (at_root && vside_fill(&r, l, recvcounts, displs, recvtype, p))) {
        release(l);
        return PMPI_Gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm);
    }
    int rc = PMPI_Gatherv(sb, (int)n, MPI_PACKED, r.base, r.counts, r.displs, MPI_PACKED, root, comm);
    if (rc == MPI_SUCCESS && at_root)
        rc = vside_move(&r, 0, recvbuf, recvcounts, displs, recvtype, p, in_place ? root : -1, comm);
    release(l);
    return rc;
}

MG_TUNE_API int MPI_Gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                            const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    mg_tune__rec_begin(__func__);
    return mg_tune__rec_done(gatherv_dt(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root,
                                        comm));
}

static int scatterv_dt(const void *sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
                       void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    if (!mg_tune__dt_active())
        return PMPI_Scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm);
    int me = rank_of(comm), at_root = me == root, in_place = recvbuf == MPI_IN_PLACE;
    MPI_Datatype st = at_root ? sendtype : MPI_DATATYPE_NULL, rt = in_place ? MPI_DATATYPE_NULL : recvtype;
    MPI_Count n = in_place ? 0 : mg_type_bytes(recvcount, recvtype);
    mg_dts s = mg_tune__dt_coll_strategy(MG_DTOP_SCATTERV, comm, n, 0, derived_of(st, rt));
    if (s == MG_DTS_PACK && ((at_root && sendbuf == MPI_BOTTOM) || (!in_place && at_bottom(recvbuf, recvcount))))
        s = MG_DTS_NATIVE;
    count_call(comm, MG_DTOP_SCATTERV, st, rt, n, s);
    if (s == MG_DTS_NORMALIZED)
        return PMPI_Scatterv(sendbuf, sendcounts, displs, at_root ? mg_tune__dt_normal(sendtype) : sendtype, recvbuf,
                             recvcount, in_place ? recvtype : mg_tune__dt_normal(recvtype), root, comm);
    int p = s == MG_DTS_PACK ? size_of(comm) : 0;
    vside v = {0};
    if (s != MG_DTS_PACK || n < 0 || n > INT_MAX ||
        (at_root && vside_plan(&v, sendbuf, sendcounts, displs, sendtype, p)))
        return PMPI_Scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm);
    char *rrun = in_place ? NULL : mg_contiguous_run(recvbuf, recvcount, recvtype), *rst = NULL;
    mg_lease *l = mg_lease_acquire((in_place || rrun ? 0 : (size_t)n) + vside_need(&v),
                                   at_root ? 2 * (size_t)p * sizeof(int) : 0);
    if (!in_place && !rrun) rrun = rst = piece(l, (size_t)n);
    if (!l || (!in_place && !rrun) ||
        (at_root && (vside_fill(&v, l, sendcounts, displs, sendtype, p) ||
                     vside_move(&v, 1, (void *)sendbuf, sendcounts, displs, sendtype, p, -1, comm)))) {
        release(l);
        return PMPI_Scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm);
    }
    int rc = PMPI_Scatterv(v.base, v.counts, v.displs, MPI_PACKED, in_place ? MPI_IN_PLACE : rrun, (int)n, MPI_PACKED,
                           root, comm);
    if (rc == MPI_SUCCESS && rst && n > 0) rc = mg_tune__dt_get(rst, recvbuf, recvcount, recvtype, comm);
    release(l);
    return rc;
}

MG_TUNE_API int MPI_Scatterv(const void *sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
                             void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    mg_tune__rec_begin(__func__);
    return mg_tune__rec_done(scatterv_dt(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root,
                                         comm));
}

static int allgatherv_dt(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                         const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm)
{
    if (!mg_tune__dt_active())
        return PMPI_Allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm);
    int in_place = sendbuf == MPI_IN_PLACE;
    MPI_Datatype st = in_place ? MPI_DATATYPE_NULL : sendtype;
    MPI_Count n = in_place ? 0 : mg_type_bytes(sendcount, sendtype);
    mg_dts s = mg_tune__dt_coll_strategy(MG_DTOP_ALLGATHERV, comm, n, 0, derived_of(st, recvtype));
    if (s == MG_DTS_PACK && ((!in_place && at_bottom(sendbuf, sendcount)) || recvbuf == MPI_BOTTOM)) s = MG_DTS_NATIVE;
    count_call(comm, MG_DTOP_ALLGATHERV, st, recvtype, n, s);
    if (s == MG_DTS_NORMALIZED)
        return PMPI_Allgatherv(sendbuf, sendcount, in_place ? sendtype : mg_tune__dt_normal(sendtype), recvbuf,
                               recvcounts, displs, mg_tune__dt_normal(recvtype), comm);
    int me = s == MG_DTS_PACK ? rank_of(comm) : 0, p = s == MG_DTS_PACK ? size_of(comm) : 0;
    vside r;
    if (s != MG_DTS_PACK || n < 0 || n > INT_MAX || vside_plan(&r, recvbuf, recvcounts, displs, recvtype, p))
        return PMPI_Allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm);
    mg_lease *l = mg_lease_acquire((size_t)n + vside_need(&r), 2 * (size_t)p * sizeof(int));
    const void *sb = l ? send_side(sendbuf, sendcount, sendtype, n, &l, 0, comm) : NULL;
    if (!sb || vside_fill(&r, l, recvcounts, displs, recvtype, p) ||
        (in_place && r.stream && recvcounts[me] > 0 &&
         mg_tune__dt_put(mg_typed_block(recvbuf, displs[me], 1, recvtype), recvcounts[me], recvtype,
                         r.stream + r.displs[me], comm))) {
        release(l);
        return PMPI_Allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm);
    }
    int rc = PMPI_Allgatherv(sb, (int)n, MPI_PACKED, r.base, r.counts, r.displs, MPI_PACKED, comm);
    if (rc == MPI_SUCCESS) rc = vside_move(&r, 0, recvbuf, recvcounts, displs, recvtype, p, in_place ? me : -1, comm);
    release(l);
    return rc;
}

MG_TUNE_API int MPI_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                               const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm)
{
    mg_tune__rec_begin(__func__);
    return mg_tune__rec_done(allgatherv_dt(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm));
}

static int alltoallv_dt(const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                        void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                        MPI_Comm comm)
{
    if (!mg_tune__dt_active())
        return PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm);
    int in_place = sendbuf == MPI_IN_PLACE, p = size_of(comm);
    MPI_Datatype st = in_place ? MPI_DATATYPE_NULL : sendtype;
    /* what this rank receives */
    MPI_Count bytes = 0, size = mg_type_bytes(1, recvtype);
    for (int i = 0; i < p && size > 0; i++) bytes += recvcounts[i] * size;
    mg_dts s = mg_tune__dt_coll_strategy(MG_DTOP_ALLTOALLV, comm, bytes, 0, derived_of(st, recvtype));
    if (s == MG_DTS_PACK && ((!in_place && sendbuf == MPI_BOTTOM) || recvbuf == MPI_BOTTOM)) s = MG_DTS_NATIVE;
    count_call(comm, MG_DTOP_ALLTOALLV, st, recvtype, bytes, s);
    if (s == MG_DTS_NORMALIZED)
        return PMPI_Alltoallv(sendbuf, sendcounts, sdispls, in_place ? sendtype : mg_tune__dt_normal(sendtype), recvbuf,
                              recvcounts, rdispls, mg_tune__dt_normal(recvtype), comm);
    vside v = {0}, r;
    if (s != MG_DTS_PACK || (!in_place && vside_plan(&v, sendbuf, sendcounts, sdispls, sendtype, p)) ||
        vside_plan(&r, recvbuf, recvcounts, rdispls, recvtype, p))
        return PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm);
    mg_lease *l = mg_lease_acquire(vside_need(&v) + vside_need(&r), 4 * (size_t)p * sizeof(int));
    if (!l ||
        (!in_place && (vside_fill(&v, l, sendcounts, sdispls, sendtype, p) ||
                       vside_move(&v, 1, (void *)sendbuf, sendcounts, sdispls, sendtype, p, -1, comm))) ||
        vside_fill(&r, l, recvcounts, rdispls, recvtype, p) ||
        (in_place && vside_move(&r, 1, recvbuf, recvcounts, rdispls, recvtype, p, -1, comm))) {
        release(l);
        return PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm);
    }
    int rc = PMPI_Alltoallv(in_place ? MPI_IN_PLACE : v.base, v.counts, v.displs, MPI_PACKED, r.base, r.counts,
                            r.displs, MPI_PACKED, comm);
    if (rc == MPI_SUCCESS) rc = vside_move(&r, 0, recvbuf, recvcounts, rdispls, recvtype, p, -1, comm);
    release(l);
    return rc;
}

MG_TUNE_API int MPI_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                              void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                              MPI_Comm comm)
{
    mg_tune__rec_begin(__func__);
    return mg_tune__rec_done(alltoallv_dt(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                                          recvtype, comm));
}
