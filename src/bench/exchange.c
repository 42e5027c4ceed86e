/* The modes of the exchanges (exchange.h): one call with subarray types, its
 * normalized types, its nonblocking and persistent forms, point-to-point
 * messages, and packing by hand, by MPI_Pack or by the engine around the
 * contiguous call. */
#include "bench_util.h"
#include "exchange.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const mg_xchg_mode_names[MG_XM_NMODES] = {"datatype", "manual",      "pack",       "engine", "normalized",
                                                      "p2p",      "nonblocking", "persistent", "tuned"};

static void keep(int *rc, int r)
{
    if (*rc == MPI_SUCCESS) *rc = r;
}

static int neighbor(const mg_xchg *x) { return x->pattern == MG_XCHG_HALO; }

/* ---- Hand-written packing ----------------------------------------------------- */

/* count elements of elem bytes, `stride` elements apart in src, to dst one after the other (or back). */
static void strided(unsigned char *dst, const unsigned char *src, size_t count, size_t stride, size_t elem,
                    int gather)
{
    if (elem == 8) {
        double *d = (double *)(void *)dst;
        const double *s = (const double *)(const void *)src;
        for (size_t i = 0; i < count; i++) gather ? (d[i] = s[i * stride]) : (d[i * stride] = s[i]);
    } else if (elem == 4) {
        int *d = (int *)(void *)dst;
        const int *s = (const int *)(const void *)src;
        for (size_t i = 0; i < count; i++) gather ? (d[i] = s[i * stride]) : (d[i * stride] = s[i]);
    } else {
        for (size_t i = 0; i < count; i++)
            memcpy(gather ? dst + i * elem : dst + i * stride * elem, gather ? src + i * stride * elem : src + i * elem,
                   elem);
    }
}

/* Region r of array `arr` to or from the contiguous `buf`: rows of the last dimension with memcpy, or
 * (a region one cell wide there) the cells of the middle dimension with a strided loop. */
static void copy_region(unsigned char *arr, unsigned char *buf, const mg_region *r, size_t elem, int pack)
{
    size_t row = (size_t)r->size[2] * elem, plane = (size_t)r->size[1] * row, pos = 0;
    for (int i = 0; i < r->sub[0]; i++) {
        unsigned char *base = arr + (size_t)(r->start[0] + i) * plane + (size_t)r->start[1] * row +
                              (size_t)r->start[2] * elem;
        if (r->sub[2] == 1 && r->sub[1] > 1) {
            size_t n = (size_t)r->sub[1];
            if (pack)
                strided(buf + pos, base, n, (size_t)r->size[2], elem, 1);
            else
                strided(base, buf + pos, n, (size_t)r->size[2], elem, 0);
            pos += n * elem;
            continue;
        }
        size_t run = (size_t)r->sub[2] * elem;
        for (int j = 0; j < r->sub[1]; j++, pos += run) {
            if (pack)
                memcpy(buf + pos, base + (size_t)j * row, run);
            else
                memcpy(base + (size_t)j * row, buf + pos, run);
        }
    }
}

/* ---- The ops (mg_bench_op: ctx is the mg_xchg_side) ----------------------------- */

static int call_w(mg_xchg_data *d, const MPI_Datatype *st, const MPI_Datatype *rt)
{
    const mg_xchg *x = d->x;
    void *rbuf = x->in_place ? d->sbuf : d->rbuf;
    if (neighbor(x))
        return MPI_Neighbor_alltoallw(d->sbuf, d->ones, d->wdispls, st, rbuf, d->ones, d->wdispls, rt, x->comm);
    return MPI_Alltoallw(d->sbuf, d->ones, d->zeros, st, rbuf, d->ones, d->zeros, rt, x->comm);
}

static int op_datatype(void *ctx)
{
    mg_xchg_side *s = ctx;
    return call_w(s->d, s->d->st, s->d->rt);
}

static int op_normalized(void *ctx)
{
    mg_xchg_side *s = ctx;
    return call_w(s->d, s->d->sn, s->d->rn);
}

static int op_nonblocking(void *ctx)
{
    mg_xchg_side *s = ctx;
    mg_xchg_data *d = s->d;
    const mg_xchg *x = d->x;
    void *rbuf = x->in_place ? d->sbuf : d->rbuf;
    MPI_Request req;
    int rc = neighbor(x) ? MPI_Ineighbor_alltoallw(d->sbuf, d->ones, d->wdispls, d->st, rbuf, d->ones, d->wdispls,
                                                   d->rt, x->comm, &req)
                         : MPI_Ialltoallw(d->sbuf, d->ones, d->zeros, d->st, rbuf, d->ones, d->zeros, d->rt, x->comm,
                                          &req);
    return rc == MPI_SUCCESS ? MPI_Wait(&req, MPI_STATUS_IGNORE) : rc;
}

static int op_persistent(void *ctx)
{
    mg_xchg_side *s = ctx;
    int rc = MPI_Start(&s->req);
    return rc == MPI_SUCCESS ? MPI_Wait(&s->req, MPI_STATUS_IGNORE) : rc;
}

static int op_p2p(void *ctx)
{
    mg_xchg_side *s = ctx;
    mg_xchg_data *d = s->d;
    const mg_xchg *x = d->x;
    MPI_Request req[2 * MG_XCHG_MAX_PEERS];
    int rc = MPI_SUCCESS, n = 0;
    void *rbuf = x->in_place ? d->sbuf : d->rbuf;
    for (int k = 0; k < x->npeers; k++)
        keep(&rc, MPI_Irecv(rbuf, 1, d->rt[k], x->peer[k], x->rtag[k], x->comm, &req[n++]));
    for (int k = 0; k < x->npeers; k++)
        keep(&rc, MPI_Isend(d->sbuf, 1, d->st[k], x->peer[k], x->stag[k], x->comm, &req[n++]));
    keep(&rc, MPI_Waitall(n, req, MPI_STATUSES_IGNORE));
    return rc;
}

/* Packs region k into pk + k x block (manual, pack or engine), the contiguous call, and unpacks what came from
 * every peer there is. The engine's failures become MPI_ERR_OTHER after the call, so that the peers do not wait. */
static int op_packed(void *ctx)
{
    mg_xchg_side *s = ctx;
    mg_xchg_data *d = s->d;
    const mg_xchg *x = d->x;
    int rc = MPI_SUCCESS, blk = (int)x->region_bytes; /* MPI_Pack's too (mg_xchg_pack_init) */
    MPI_Datatype wire = s->mode == MG_XM_PACK ? MPI_PACKED : MPI_BYTE;
    unsigned char *rarr = x->in_place ? d->sbuf : d->rbuf;
    MPI_Count got = 0;
    for (int k = 0; k < x->npeers; k++) {
        unsigned char *out = d->pk + (size_t)k * (size_t)blk;
        if (s->mode == MG_XM_MANUAL) {
            copy_region(d->sbuf, out, &x->send[k], x->elem, 1);
        } else if (s->mode == MG_XM_ENGINE) {
            int e = mg_dt_pack(d->sdt[k], d->sbuf, 1, 0, out, blk, &got);
            if (e != MG_DT_SUCCESS || got != blk) keep(&rc, MPI_ERR_OTHER);
        } else {
            int pos = 0;
            keep(&rc, MPI_Pack(d->sbuf, 1, d->st[k], out, blk, &pos, x->comm));
        }
    }
    if (neighbor(x))
        keep(&rc, MPI_Neighbor_alltoallv(d->pk, d->counts, d->displs, wire, d->pk2, d->counts, d->displs, wire,
                                         x->comm));
    else
        keep(&rc, MPI_Alltoall(d->pk, blk, wire, d->pk2, blk, wire, x->comm));
    for (int k = 0; k < x->npeers; k++) {
        if (x->peer[k] == MPI_PROC_NULL) continue; /* nothing came: the halo there stays as it is */
        unsigned char *in = d->pk2 + (size_t)k * (size_t)blk;
        if (s->mode == MG_XM_MANUAL) {
            copy_region(rarr, in, &x->recv[k], x->elem, 0);
        } else if (s->mode == MG_XM_ENGINE) {
            int e = mg_dt_unpack(d->rdt[k], in, blk, 0, rarr, 1, &got);
            if (e != MG_DT_SUCCESS || got != blk) keep(&rc, MPI_ERR_OTHER);
        } else {
            int pos = 0;
            keep(&rc, MPI_Unpack(in, blk, &pos, rarr, 1, d->rt[k], x->comm));
        }
    }
    return rc;
}

/* ---- Setup ------------------------------------------------------------------------ */

static int subarray(const mg_region *r, MPI_Datatype etype, MPI_Datatype *t)
{
    int pad = 3 - r->ndims;
    int rc = MPI_Type_create_subarray(r->ndims, r->size + pad, r->sub + pad, r->start + pad, MPI_ORDER_C, etype, t);
    return rc == MPI_SUCCESS ? MPI_Type_commit(t) : rc;
}

int mg_xchg_data_init(const mg_xchg *x, mg_xchg_data *d, char *err, size_t errlen)
{
    memset(d, 0, sizeof *d);
    d->x = x;
    for (int k = 0; k < MG_XCHG_MAX_PEERS; k++)
        d->st[k] = d->rt[k] = d->sn[k] = d->rn[k] = MPI_DATATYPE_NULL;
    size_t pk = (size_t)x->npeers * (size_t)x->region_bytes;
    d->sbuf = mg_alloc64(x->sbytes);
    d->rbuf = x->in_place ? NULL : mg_alloc64(x->rbytes);
    d->pk = mg_alloc64(pk);
    d->pk2 = mg_alloc64(pk);
    if (!d->sbuf || (!x->in_place && !d->rbuf) || !d->pk || !d->pk2) {
        fprintf(stderr, "ddtexchange: error: cannot allocate %zu + %zu + 2 x %zu bytes\n", x->sbytes, x->rbytes, pk);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    memset(d->pk, 0, pk);
    memset(d->pk2, 0, pk);
    for (int k = 0; k < x->npeers; k++) {
        d->ones[k] = 1;
        d->counts[k] = (int)x->region_bytes;
        d->displs[k] = k * (int)x->region_bytes;
        int rc = subarray(&x->send[k], x->etype, &d->st[k]);
        if (rc == MPI_SUCCESS) rc = subarray(&x->recv[k], x->etype, &d->rt[k]);
        if (rc != MPI_SUCCESS) {
            snprintf(err, errlen, "MPI_Type_create_subarray failed (MPI error %d)", rc);
            return -1;
        }
    }
    return 0;
}

int mg_xchg_engine_init(mg_xchg_data *d, int want_engine, int want_normalized, int form, char *normal, size_t len,
                        char *err, size_t errlen)
{
    const mg_xchg *x = d->x;
    if (!want_engine && !want_normalized) return 0;
    for (int k = 0; k < x->npeers; k++) {
        int rc = mg_dt_from_mpi(d->st[k], &d->sdt[k]);
        if (rc == MG_DT_SUCCESS) rc = mg_dt_from_mpi(d->rt[k], &d->rdt[k]);
        if (rc != MG_DT_SUCCESS) {
            snprintf(err, errlen, "mg_dt_from_mpi failed: %s", mg_dt_strerror(rc));
            return -1;
        }
        if (mg_dt_size(d->sdt[k]) != x->region_bytes || mg_dt_size(d->rdt[k]) != x->region_bytes) {
            snprintf(err, errlen, "the engine's type size %lld differs from the region's %lld bytes",
                     (long long)mg_dt_size(d->sdt[k]), x->region_bytes);
            return -1;
        }
        if (k == 0 && normal) {
            rc = mg_dt_describe(d->sdt[0], normal, len);
            if (rc != MG_DT_SUCCESS) snprintf(normal, len, "(mg_dt_describe: %s)", mg_dt_strerror(rc));
        }
        if (!want_normalized) continue;
        rc = mg_dt_to_mpi_form(d->sdt[k], 1, form, &d->sn[k]);
        if (rc == MG_DT_SUCCESS) rc = mg_dt_to_mpi_form(d->rdt[k], 1, form, &d->rn[k]);
        if (rc != MG_DT_SUCCESS) {
            snprintf(err, errlen, "mg_dt_to_mpi_form failed: %s", mg_dt_strerror(rc));
            return -1;
        }
    }
    return 0;
}

int mg_xchg_pack_init(mg_xchg_data *d, char *err, size_t errlen)
{
    const mg_xchg *x = d->x;
    int mine = -1, pos = 0, range[2], rc = MPI_SUCCESS;
    for (int k = 0; k < x->npeers && rc == MPI_SUCCESS; k++) {
        pos = 0;
        rc = MPI_Pack(d->sbuf, 1, d->st[k], d->pk + (size_t)k * (size_t)x->region_bytes, (int)x->region_bytes, &pos,
                      x->comm);
        if (mine < 0) mine = pos;
        if (pos != mine || pos != x->region_bytes) rc = MPI_ERR_OTHER;
    }
    int mm[2] = {rc == MPI_SUCCESS ? mine : -1, rc == MPI_SUCCESS ? -mine : 1};
    MPI_Allreduce(mm, range, 2, MPI_INT, MPI_MAX, x->comm);
    if (range[0] >= 0 && range[0] == -range[1]) {
        d->packed = range[0];
        return 0;
    }
    snprintf(err, errlen, "MPI_Pack of a region fails, or gives other than its %lld data bytes on some rank",
             x->region_bytes);
    return -1;
}

void mg_xchg_data_free(mg_xchg_data *d)
{
    if (!d->x) return;
    for (int k = 0; k < MG_XCHG_MAX_PEERS; k++) {
        MPI_Datatype *all[4] = {&d->st[k], &d->rt[k], &d->sn[k], &d->rn[k]};
        for (int i = 0; i < 4; i++)
            if (*all[i] != MPI_DATATYPE_NULL) MPI_Type_free(all[i]);
        if (d->sdt[k]) mg_dt_free(d->sdt[k]);
        if (d->rdt[k]) mg_dt_free(d->rdt[k]);
    }
    free(d->sbuf);
    free(d->rbuf);
    free(d->pk);
    free(d->pk2);
    memset(d, 0, sizeof *d);
}

int mg_xchg_mode_built(int mode)
{
#ifdef MG_HAVE_MPI_PERSISTENT_COLL
    (void)mode;
    return 1;
#else
    return mode != MG_XM_PERSISTENT;
#endif
}

int mg_xchg_side_init(mg_xchg_data *d, int mode, mg_xchg_side *s, double *init_s)
{
    static int (*const ops[MG_XM_NMODES])(void *) = {
        [MG_XM_DATATYPE] = op_datatype, [MG_XM_MANUAL] = op_packed,     [MG_XM_PACK] = op_packed,
        [MG_XM_ENGINE] = op_packed,     [MG_XM_NORMALIZED] = op_normalized, [MG_XM_P2P] = op_p2p,
        [MG_XM_NONBLOCKING] = op_nonblocking, [MG_XM_PERSISTENT] = op_persistent, [MG_XM_TUNED] = op_datatype};
    *s = (mg_xchg_side){.d = d, .mode = mode, .req = MPI_REQUEST_NULL, .op = ops[mode]};
    *init_s = 0;
    if (mode != MG_XM_PERSISTENT) return MPI_SUCCESS;
#ifdef MG_HAVE_MPI_PERSISTENT_COLL
    const mg_xchg *x = d->x;
    void *rbuf = x->in_place ? d->sbuf : d->rbuf;
    memset(d->sbuf, 0x3C, x->sbytes); /* other bytes than at the check's MPI_Start: MPI reads them at the start */
    double t = MPI_Wtime();
    int rc = neighbor(x) ? MPI_Neighbor_alltoallw_init(d->sbuf, d->ones, d->wdispls, d->st, rbuf, d->ones, d->wdispls,
                                                       d->rt, x->comm, MPI_INFO_NULL, &s->req)
                         : MPI_Alltoallw_init(d->sbuf, d->ones, d->zeros, d->st, rbuf, d->ones, d->zeros, d->rt,
                                              x->comm, MPI_INFO_NULL, &s->req);
    *init_s = MPI_Wtime() - t;
    return rc;
#else
    return MPI_ERR_UNSUPPORTED_OPERATION;
#endif
}

void mg_xchg_side_free(mg_xchg_side *s)
{
    if (s->req != MPI_REQUEST_NULL) MPI_Request_free(&s->req);
}
