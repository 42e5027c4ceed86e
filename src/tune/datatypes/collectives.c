/* The datatype strategies of the collectives (collectives.h, strategy.h).
 *
 * PACK: every rank passes MPI_PACKED, block for block the bytes its own
 * count x type packs to (equal on both ends of every transfer, since the type
 * signatures match), so the call is one of matching MPI_PACKED signatures
 * whatever types the ranks use. The choice must be the same on every rank:
 * for the regular collectives it is made from the configuration, the
 * communicator and the block's bytes (and p x block must fit an int; the
 * nonblocking and persistent ones: the block must fit the form's count); the
 * v and w forms and the neighbourhood collectives decide from the
 * configuration and the communicator alone (cbuild.c). A rank that cannot
 * take part as decided (no memory, a stream beyond the form's integers,
 * MPI_BOTTOM) makes the call with its own arguments: on a homogeneous system
 * a typed block and its MPI_PACKED bytes are the same message, which MPICH,
 * Open MPI and Intel MPI all accept. A rank's bytes that already lie contiguously in its buffer are
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

/* 1 if root is not a rank of comm: MPI refuses the call, and if the application's error handler returns,
 * the call returns too, with nothing received: the native call, whose buffers stay as they are. */
static int bad_root(int root, MPI_Comm comm) { return root < 0 || root >= size_of(comm); }

int mg_tune__dt_bcast(void *buf, MPI_Count count, MPI_Datatype type, int root, MPI_Comm comm, mg_bcast_fn inner)
{
    if (bad_root(root, comm)) return inner(buf, count, type, root, comm);
    MPI_Count n = mg_type_bytes(count, type);
    mg_dts s = mg_tune__dt_coll_strategy(MG_DTOP_BCAST, comm, n, 1, type, NULL);
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
    if (bad_root(root, comm)) return inner(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
    int me = rank_of(comm), p = size_of(comm), at_root = me == root, in_place = sendbuf == MPI_IN_PLACE;
    /* the receive arguments count at the root only */
    MPI_Count n = at_root ? mg_type_bytes(recvcount, recvtype) : mg_type_bytes(sendcount, sendtype);
    mg_dts s = mg_tune__dt_coll_strategy(
        MG_DTOP_GATHER, comm, n, 1,
        derived_of(in_place ? MPI_DATATYPE_NULL : sendtype, at_root ? recvtype : MPI_DATATYPE_NULL), NULL);
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
    if (bad_root(root, comm)) return inner(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
    int me = rank_of(comm), p = size_of(comm), at_root = me == root, in_place = recvbuf == MPI_IN_PLACE;
    /* the send arguments count at the root only */
    MPI_Count n = at_root ? mg_type_bytes(sendcount, sendtype) : mg_type_bytes(recvcount, recvtype);
    mg_dts s = mg_tune__dt_coll_strategy(
        MG_DTOP_SCATTER, comm, n, 1,
        derived_of(at_root ? sendtype : MPI_DATATYPE_NULL, in_place ? MPI_DATATYPE_NULL : recvtype), NULL);
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
                                         derived_of(in_place ? MPI_DATATYPE_NULL : sendtype, recvtype), NULL);
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
