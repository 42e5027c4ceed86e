/* Halo exchange for 2D stencil applications: see halo.h. */
#include "halo.h"

#include <mpiguide/dt.h>

#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- decomposition */

static int split_count(int n, int p, int c) { return n / p + (c < n % p ? 1 : 0); }
static int split_offset(int n, int p, int c) { return c * (n / p) + (c < n % p ? c : n % p); }

/* Rank at coords + (dy, dx), MPI_PROC_NULL outside a non-periodic grid. */
static int rank_at(const mg_decomp *d, int dy, int dx, int *rank)
{
    int c[2] = {d->coords[0] + dy, d->coords[1] + dx};
    for (int i = 0; i < 2; i++) {
        if (c[i] < 0 || c[i] >= d->dims[i]) {
            if (!d->periodic) {
                *rank = MPI_PROC_NULL;
                return MPI_SUCCESS;
            }
            c[i] = (c[i] % d->dims[i] + d->dims[i]) % d->dims[i];
        }
    }
    return MPI_Cart_rank(d->cart, c, rank);
}

int mg_decomp_create(MPI_Comm comm, int global_nx, int global_ny, int periodic, mg_decomp *d)
{
    if (!d || global_nx < 1 || global_ny < 1 || comm == MPI_COMM_NULL) return MPI_ERR_ARG;
    memset(d, 0, sizeof *d);
    d->cart = MPI_COMM_NULL;
    int size, rc = MPI_Comm_size(comm, &size);
    if (rc != MPI_SUCCESS) return rc;
    int dims[2] = {0, 0};
    if ((rc = MPI_Dims_create(size, 2, dims)) != MPI_SUCCESS) return rc;
    /* dims[0] splits y (rows), dims[1] splits x (columns); every process needs a cell. */
    if (dims[0] > global_ny || dims[1] > global_nx) {
        int t = dims[0];
        dims[0] = dims[1];
        dims[1] = t;
        if (dims[0] > global_ny || dims[1] > global_nx) return MPI_ERR_DIMS;
    }
    int periods[2] = {periodic ? 1 : 0, periodic ? 1 : 0};
    if ((rc = MPI_Cart_create(comm, 2, dims, periods, 0, &d->cart)) != MPI_SUCCESS) return rc;
    d->dims[0] = dims[0];
    d->dims[1] = dims[1];
    d->periodic = periodic ? 1 : 0;
    d->global_nx = global_nx;
    d->global_ny = global_ny;
    if ((rc = MPI_Comm_rank(d->cart, &d->rank)) != MPI_SUCCESS ||
        (rc = MPI_Cart_coords(d->cart, d->rank, 2, d->coords)) != MPI_SUCCESS)
        goto fail;
    d->ny = split_count(global_ny, dims[0], d->coords[0]);
    d->y0 = split_offset(global_ny, dims[0], d->coords[0]);
    d->nx = split_count(global_nx, dims[1], d->coords[1]);
    d->x0 = split_offset(global_nx, dims[1], d->coords[1]);
    static const int delta[MG_DIR_COUNT_][2] = {
        [MG_DIR_N] = {-1, 0},  [MG_DIR_S] = {1, 0},    [MG_DIR_E] = {0, 1},  [MG_DIR_W] = {0, -1},
        [MG_DIR_NE] = {-1, 1}, [MG_DIR_NW] = {-1, -1}, [MG_DIR_SE] = {1, 1}, [MG_DIR_SW] = {1, -1},
    };
    for (int k = 0; k < MG_DIR_COUNT_; k++)
        if ((rc = rank_at(d, delta[k][0], delta[k][1], &d->nbr[k])) != MPI_SUCCESS) goto fail;
    return MPI_SUCCESS;
fail:
    MPI_Comm_free(&d->cart);
    return rc;
}

void mg_decomp_free(mg_decomp *d)
{
    if (d && d->cart != MPI_COMM_NULL) MPI_Comm_free(&d->cart);
}

/* ---------------------------------------------------------------- halo object */

enum { SHAPE_ROW, SHAPE_COL, SHAPE_CELL, SHAPE_COUNT_ };

struct mg_halo {
    const mg_decomp *d;
    MPI_Datatype elem;
    size_t esz;
    int corners, ndir;
    mg_halo_packing packing;
    mg_halo_mode mode;
    char *grid;
    MPI_Comm comm; /* owned: dup of the cart comm or the 8-neighbour graph */
    /* per direction k: [0] the region sent to nbr[k], [1] the halo filled from nbr[k] */
    int shape[MG_DIR_COUNT_];
    int count[MG_DIR_COUNT_];        /* elements in the region */
    int start[2][MG_DIR_COUNT_][2];  /* (row, column) of its first cell */
    MPI_Aint disp[2][MG_DIR_COUNT_]; /* byte offset of that cell in grid */
    MPI_Aint boff[MG_DIR_COUNT_];    /* BASIC: byte offsets in sbuf / rbuf */
    size_t buf_bytes;                /* BASIC: size of sbuf and of rbuf */
    char *sbuf, *rbuf;
    MPI_Datatype types[SHAPE_COUNT_];        /* DDT / NORMALIZED region types */
    MPI_Datatype subtypes[2][MG_DIR_COUNT_]; /* SUBARRAY: one type per region */
    /* point-to-point requests: receives 0..ndir-1, sends ndir..2ndir-1 */
    MPI_Request req[2 * MG_DIR_COUNT_];
    /* neighbourhood collective blocks */
    int nsend, nrecv;
    int a_scount[MG_DIR_COUNT_], a_rcount[MG_DIR_COUNT_];
    MPI_Aint a_sdispl[MG_DIR_COUNT_], a_rdispl[MG_DIR_COUNT_];
    MPI_Datatype a_stype[MG_DIR_COUNT_], a_rtype[MG_DIR_COUNT_];
    MPI_Request nreq;
    double setup_seconds;
};

static const int opposite[MG_DIR_COUNT_] = {
    [MG_DIR_N] = MG_DIR_S,   [MG_DIR_S] = MG_DIR_N,   [MG_DIR_E] = MG_DIR_W,   [MG_DIR_W] = MG_DIR_E,
    [MG_DIR_NE] = MG_DIR_SW, [MG_DIR_NW] = MG_DIR_SE, [MG_DIR_SE] = MG_DIR_NW, [MG_DIR_SW] = MG_DIR_NE,
};

int mg_halo_mode_supported(mg_halo_mode mode)
{
    switch (mode) {
    case MG_HALO_NONBLOCKING:
    case MG_HALO_NEIGHBOR:
    case MG_HALO_PERSISTENT: return 1;
    case MG_HALO_NEIGHBOR_PERSISTENT:
#ifdef MG_HAVE_MPI_NEIGHBOR_ALLTOALLW_INIT
        return 1;
#else
        return 0;
#endif
    default: return 0;
    }
}

const char *mg_halo_packing_name(mg_halo_packing p)
{
    switch (p) {
    case MG_HALO_BASIC: return "basic";
    case MG_HALO_DDT: return "ddt";
    case MG_HALO_SUBARRAY: return "subarray";
    case MG_HALO_NORMALIZED: return "normalized";
    default: return "?";
    }
}

const char *mg_halo_mode_name(mg_halo_mode m)
{
    switch (m) {
    case MG_HALO_NONBLOCKING: return "nonblocking";
    case MG_HALO_NEIGHBOR: return "neighbor";
    case MG_HALO_PERSISTENT: return "persistent";
    case MG_HALO_NEIGHBOR_PERSISTENT: return "neighbor-persistent";
    default: return "?";
    }
}

double mg_halo_setup_seconds(const mg_halo *h) { return h ? h->setup_seconds : 0.0; }

size_t mg_halo_buffer_bytes(const mg_halo *h) { return h && h->sbuf ? 2 * h->buf_bytes : 0; }

/* Geometry of each direction's send region and halo region; BASIC's buffer
 * offsets, leaving out directions without a neighbour. */
static void set_geometry(mg_halo *h)
{
    const int nx = h->d->nx, ny = h->d->ny;
    static const int shapes[MG_DIR_COUNT_] = {SHAPE_ROW,  SHAPE_ROW,  SHAPE_COL,  SHAPE_COL,
                                              SHAPE_CELL, SHAPE_CELL, SHAPE_CELL, SHAPE_CELL};
    const int at[2][MG_DIR_COUNT_][2] = {
        {{1, 1}, {ny, 1}, {1, nx}, {1, 1}, {1, nx}, {1, 1}, {ny, nx}, {ny, 1}},
        {{0, 1}, {ny + 1, 1}, {1, nx + 1}, {1, 0}, {0, nx + 1}, {0, 0}, {ny + 1, nx + 1}, {ny + 1, 0}},
    };
    MPI_Aint off = 0;
    for (int k = 0; k < MG_DIR_COUNT_; k++) {
        h->shape[k] = shapes[k];
        h->count[k] = shapes[k] == SHAPE_ROW ? nx : shapes[k] == SHAPE_COL ? ny : 1;
        for (int r = 0; r < 2; r++) {
            h->start[r][k][0] = at[r][k][0];
            h->start[r][k][1] = at[r][k][1];
            h->disp[r][k] = ((MPI_Aint)at[r][k][0] * (nx + 2) + at[r][k][1]) * (MPI_Aint)h->esz;
        }
        h->boff[k] = off;
        if (k < h->ndir && h->d->nbr[k] != MPI_PROC_NULL) off += (MPI_Aint)h->count[k] * (MPI_Aint)h->esz;
    }
    h->buf_bytes = (size_t)off;
}

/* Copy a region between the grid (at byte offset disp) and a contiguous buffer. */
static void copy_region(const mg_halo *h, int k, MPI_Aint disp, char *buf, int to_buf)
{
    char *g = h->grid + disp;
    const size_t es = h->esz;
    if (h->shape[k] == SHAPE_COL) {
        const size_t stride = (size_t)(h->d->nx + 2) * es;
        for (int i = 0; i < h->count[k]; i++) {
            if (to_buf)
                memcpy(buf + (size_t)i * es, g + (size_t)i * stride, es);
            else
                memcpy(g + (size_t)i * stride, buf + (size_t)i * es, es);
        }
    } else if (to_buf) {
        memcpy(buf, g, (size_t)h->count[k] * es);
    } else {
        memcpy(g, buf, (size_t)h->count[k] * es);
    }
}

static void pack_all(mg_halo *h)
{
    for (int k = 0; k < h->ndir; k++)
        if (h->d->nbr[k] != MPI_PROC_NULL) copy_region(h, k, h->disp[0][k], h->sbuf + h->boff[k], 1);
}

static void unpack_all(mg_halo *h)
{
    for (int k = 0; k < h->ndir; k++)
        if (h->d->nbr[k] != MPI_PROC_NULL) copy_region(h, k, h->disp[1][k], h->rbuf + h->boff[k], 0);
}

static int build_types(mg_halo *h)
{
    const int nx = h->d->nx, ny = h->d->ny;
    MPI_Datatype raw[SHAPE_COUNT_] = {MPI_DATATYPE_NULL, MPI_DATATYPE_NULL, MPI_DATATYPE_NULL};
    MPI_Datatype col = MPI_DATATYPE_NULL;
    int rc;
    if ((rc = MPI_Type_contiguous(nx, h->elem, &raw[SHAPE_ROW])) != MPI_SUCCESS) goto out;
    /* A column: ny elements, stride one grid row; resized to one element's extent
     * so that consecutive columns could be addressed with a count. */
    if ((rc = MPI_Type_vector(ny, 1, nx + 2, h->elem, &col)) != MPI_SUCCESS) goto out;
    if ((rc = MPI_Type_create_resized(col, 0, (MPI_Aint)h->esz, &raw[SHAPE_COL])) != MPI_SUCCESS) goto out;
    if ((rc = MPI_Type_contiguous(1, h->elem, &raw[SHAPE_CELL])) != MPI_SUCCESS) goto out;
    for (int s = 0; s < SHAPE_COUNT_; s++) {
        if (h->packing == MG_HALO_NORMALIZED) {
            mg_dt *t = NULL;
            int drc = mg_dt_from_mpi(raw[s], &t);
            if (drc == MG_DT_SUCCESS) drc = mg_dt_to_mpi(t, 1, &h->types[s]);
            mg_dt_free(t);
            if (drc != MG_DT_SUCCESS) {
                rc = drc == MG_DT_ERR_NOMEM ? MPI_ERR_NO_MEM : MPI_ERR_TYPE;
                goto out;
            }
        } else {
            if ((rc = MPI_Type_commit(&raw[s])) != MPI_SUCCESS) goto out;
            h->types[s] = raw[s];
            raw[s] = MPI_DATATYPE_NULL;
        }
    }
    rc = MPI_SUCCESS;
out:
    if (col != MPI_DATATYPE_NULL) MPI_Type_free(&col);
    for (int s = 0; s < SHAPE_COUNT_; s++)
        if (raw[s] != MPI_DATATYPE_NULL) MPI_Type_free(&raw[s]);
    return rc;
}

/* SUBARRAY: each region as a subarray of the whole local array, so that its
 * start is part of the type and every transfer starts at the grid base. */
static int build_subarrays(mg_halo *h)
{
    const int nx = h->d->nx, ny = h->d->ny;
    const int sizes[2] = {ny + 2, nx + 2};
    const int sub[SHAPE_COUNT_][2] = {[SHAPE_ROW] = {1, nx}, [SHAPE_COL] = {ny, 1}, [SHAPE_CELL] = {1, 1}};
    int rc;
    for (int k = 0; k < h->ndir; k++)
        for (int r = 0; r < 2; r++) {
            MPI_Datatype *t = &h->subtypes[r][k];
            if ((rc = MPI_Type_create_subarray(2, sizes, sub[h->shape[k]], h->start[r][k], MPI_ORDER_C, h->elem, t)) !=
                MPI_SUCCESS)
                return rc;
            if ((rc = MPI_Type_commit(t)) != MPI_SUCCESS) return rc; /* mg_halo_free frees the uncommitted type */
        }
    return MPI_SUCCESS;
}

/* Where the send (recv = 0) or receive (recv = 1) region of direction k lies:
 * byte displacement from the base buffer (sendbase / recvbase), count, type. */
static void region_args(const mg_halo *h, int k, int recv, MPI_Aint *disp, int *count, MPI_Datatype *type)
{
    switch (h->packing) {
    case MG_HALO_BASIC:
        *disp = h->boff[k];
        /* no room in the buffers for a border: nothing to transfer there */
        *count = h->d->nbr[k] != MPI_PROC_NULL ? h->count[k] : 0;
        *type = h->elem;
        break;
    case MG_HALO_SUBARRAY:
        *disp = 0; /* the start lives in the type */
        *count = 1;
        *type = h->subtypes[recv][k];
        break;
    default:
        *disp = h->disp[recv][k];
        *count = 1;
        *type = h->types[h->shape[k]];
        break;
    }
}

/* Communicator of the neighbourhood collective and its block lists. */
static int build_neighbor(mg_halo *h)
{
    const mg_decomp *d = h->d;
    int rc;
    h->nsend = h->nrecv = 0;
    /* The Cartesian communicator serves when its 4 neighbours are distinct
     * processes. With 1 or 2 periodic processes in a dimension one process is
     * several neighbours, and Open MPI 5's persistent (libnbc) Cartesian
     * neighbourhood collectives then deliver the north row into the north halo;
     * the graph below orders such duplicates explicitly. */
    const int cart_ok = !d->periodic || (d->dims[0] >= 3 && d->dims[1] >= 3);
    if (!h->corners && cart_ok) {
        /* Cartesian neighbourhood order: dim 0 (source, dest of a +1 shift), dim 1 likewise. */
        static const int order[4] = {MG_DIR_N, MG_DIR_S, MG_DIR_W, MG_DIR_E};
        if ((rc = MPI_Comm_dup(d->cart, &h->comm)) != MPI_SUCCESS) return rc;
        for (int b = 0; b < 4; b++) {
            region_args(h, order[b], 0, &h->a_sdispl[b], &h->a_scount[b], &h->a_stype[b]);
            region_args(h, order[b], 1, &h->a_rdispl[b], &h->a_rcount[b], &h->a_rtype[b]);
        }
        h->nsend = h->nrecv = 4;
        return MPI_SUCCESS;
    }
    /* 4 or 8 neighbours in the fixed order N S E W (NE NW SE SW), borders left out.
     * Destination j: the region sent in direction k to nbr[k]. Source j: the
     * message a neighbour sent in direction k, i.e. from nbr[opposite[k]] into
     * the halo on side opposite[k]. Process A sends to B in direction k exactly
     * when B receives from A in that position, so when one process is a
     * neighbour several times the i-th message between a pair matches the i-th
     * receive, as the neighbourhood collectives order them. */
    int src[MG_DIR_COUNT_], dst[MG_DIR_COUNT_];
    for (int k = 0; k < h->ndir; k++) {
        if (d->nbr[k] != MPI_PROC_NULL) {
            int b = h->nsend++;
            dst[b] = d->nbr[k];
            region_args(h, k, 0, &h->a_sdispl[b], &h->a_scount[b], &h->a_stype[b]);
        }
        int o = opposite[k];
        if (d->nbr[o] != MPI_PROC_NULL) {
            int b = h->nrecv++;
            src[b] = d->nbr[o];
            region_args(h, o, 1, &h->a_rdispl[b], &h->a_rcount[b], &h->a_rtype[b]);
        }
    }
    /* explicit unit weights: Open MPI's MPI_UNWEIGHTED trips -Wstringop-overread */
    const int weights[MG_DIR_COUNT_] = {1, 1, 1, 1, 1, 1, 1, 1};
    /* The graph is built on a topology-free copy of cart (same ranks): Open MPI 5
     * runs Cartesian code on a graph made from a Cartesian communicator. */
    MPI_Comm plain = MPI_COMM_NULL;
    if ((rc = MPI_Comm_split(d->cart, 0, d->rank, &plain)) != MPI_SUCCESS) return rc;
    rc = MPI_Dist_graph_create_adjacent(plain, h->nrecv, src, weights, h->nsend, dst, weights, MPI_INFO_NULL, 0,
                                        &h->comm);
    MPI_Comm_free(&plain);
    return rc;
}

static void *sendbase(mg_halo *h) { return h->packing == MG_HALO_BASIC ? (void *)h->sbuf : (void *)h->grid; }
static void *recvbase(mg_halo *h) { return h->packing == MG_HALO_BASIC ? (void *)h->rbuf : (void *)h->grid; }

/* Buffer, count and type of the send (recv = 0) or receive of direction k. */
static void p2p_args(mg_halo *h, int k, int recv, void **buf, int *count, MPI_Datatype *type)
{
    MPI_Aint disp;
    char *base = recv ? recvbase(h) : sendbase(h);
    region_args(h, k, recv, &disp, count, type);
    /* BASIC without any neighbour has no buffers (and transfers nothing) */
    *buf = base ? base + disp : NULL;
}

/* A halo object with its geometry and no MPI objects yet; NULL if out of memory. */
static mg_halo *halo_new(const mg_decomp *d, MPI_Datatype elem, size_t esz, int corners, mg_halo_packing packing,
                         mg_halo_mode mode, void *grid)
{
    mg_halo *h = calloc(1, sizeof *h);
    if (!h) return NULL;
    h->d = d;
    h->elem = elem;
    h->esz = esz;
    h->corners = corners ? 1 : 0;
    h->ndir = corners ? MG_DIR_COUNT_ : 4;
    h->packing = packing;
    h->mode = mode;
    h->grid = grid;
    h->comm = MPI_COMM_NULL;
    h->nreq = MPI_REQUEST_NULL;
    for (int s = 0; s < SHAPE_COUNT_; s++) h->types[s] = MPI_DATATYPE_NULL;
    for (int i = 0; i < 2 * MG_DIR_COUNT_; i++) {
        h->req[i] = MPI_REQUEST_NULL;
        h->subtypes[i / MG_DIR_COUNT_][i % MG_DIR_COUNT_] = MPI_DATATYPE_NULL;
    }
    set_geometry(h);
    return h;
}

/* The packing's scratch buffers (BASIC) or datatypes. */
static int build_packing(mg_halo *h)
{
    if (h->packing != MG_HALO_BASIC) return h->packing == MG_HALO_SUBARRAY ? build_subarrays(h) : build_types(h);
    if (h->buf_bytes == 0) return MPI_SUCCESS;
    h->sbuf = malloc(h->buf_bytes);
    h->rbuf = malloc(h->buf_bytes);
    return h->sbuf && h->rbuf ? MPI_SUCCESS : MPI_ERR_NO_MEM;
}

/* The mode's communicator (with a neighbourhood topology for the neighbour
 * modes) and its persistent requests. */
static int build_mode(mg_halo *h)
{
    int rc;
    if (h->mode == MG_HALO_NEIGHBOR || h->mode == MG_HALO_NEIGHBOR_PERSISTENT)
        rc = build_neighbor(h);
    else
        rc = MPI_Comm_dup(h->d->cart, &h->comm);
    if (rc != MPI_SUCCESS) return rc;
    MPI_Comm_set_errhandler(h->comm, MPI_ERRORS_RETURN);
    for (int k = 0; k < h->ndir && h->mode == MG_HALO_PERSISTENT; k++) {
        void *buf;
        int count;
        MPI_Datatype type;
        p2p_args(h, k, 1, &buf, &count, &type);
        /* the halo on side k holds what nbr[k] sent in the opposite direction */
        if ((rc = MPI_Recv_init(buf, count, type, h->d->nbr[k], opposite[k], h->comm, &h->req[k])) != MPI_SUCCESS)
            return rc;
        p2p_args(h, k, 0, &buf, &count, &type);
        if ((rc = MPI_Send_init(buf, count, type, h->d->nbr[k], k, h->comm, &h->req[h->ndir + k])) != MPI_SUCCESS)
            return rc;
    }
#ifdef MG_HAVE_MPI_NEIGHBOR_ALLTOALLW_INIT
    if (h->mode == MG_HALO_NEIGHBOR_PERSISTENT)
        return MPI_Neighbor_alltoallw_init(sendbase(h), h->a_scount, h->a_sdispl, h->a_stype, recvbase(h), h->a_rcount,
                                           h->a_rdispl, h->a_rtype, h->comm, MPI_INFO_NULL, &h->nreq);
#endif
    return MPI_SUCCESS;
}

int mg_halo_create(const mg_decomp *d, MPI_Datatype elem, int corners, mg_halo_packing packing, mg_halo_mode mode,
                   void *grid, mg_halo **out)
{
    if (!out) return MPI_ERR_ARG;
    *out = NULL;
    if (!d || !grid || d->cart == MPI_COMM_NULL || elem == MPI_DATATYPE_NULL || d->nx < 1 || d->ny < 1 ||
        (unsigned)packing >= MG_HALO_PACKING_COUNT_ || (unsigned)mode >= MG_HALO_MODE_COUNT_)
        return MPI_ERR_ARG;
    if (!mg_halo_mode_supported(mode))
        return MPI_ERR_UNSUPPORTED_OPERATION; /* MPI_Neighbor_alltoallw_init: MPI-4, not in this MPI library */
    int size, rc;
    MPI_Aint lb, extent;
    if ((rc = MPI_Type_size(elem, &size)) != MPI_SUCCESS ||
        (rc = MPI_Type_get_extent(elem, &lb, &extent)) != MPI_SUCCESS)
        return rc;
    if (size <= 0 || lb != 0 || extent != size) return MPI_ERR_TYPE; /* a predefined type with no gaps is expected */
    double t0 = MPI_Wtime();
    mg_halo *h = halo_new(d, elem, (size_t)size, corners, packing, mode, grid);
    if (!h) return MPI_ERR_NO_MEM;
    *out = h; /* mg_halo_free cleans up a partial object on failure */
    if ((rc = build_packing(h)) != MPI_SUCCESS || (rc = build_mode(h)) != MPI_SUCCESS) {
        mg_halo_free(out);
        return rc;
    }
    h->setup_seconds = MPI_Wtime() - t0;
    if (h->setup_seconds < 0) h->setup_seconds = 0;
    return MPI_SUCCESS;
}

int mg_halo_exchange(mg_halo *h)
{
    if (!h) return MPI_ERR_ARG;
    const int basic = h->packing == MG_HALO_BASIC;
    const int n = h->ndir;
    int rc = MPI_SUCCESS;
    switch (h->mode) {
    case MG_HALO_NONBLOCKING:
        for (int k = 0; k < n; k++) {
            void *buf;
            int count;
            MPI_Datatype type;
            p2p_args(h, k, 1, &buf, &count, &type);
            if ((rc = MPI_Irecv(buf, count, type, h->d->nbr[k], opposite[k], h->comm, &h->req[k])) != MPI_SUCCESS)
                return rc;
        }
        if (basic) pack_all(h);
        for (int k = 0; k < n; k++) {
            void *buf;
            int count;
            MPI_Datatype type;
            p2p_args(h, k, 0, &buf, &count, &type);
            if ((rc = MPI_Isend(buf, count, type, h->d->nbr[k], k, h->comm, &h->req[n + k])) != MPI_SUCCESS) return rc;
        }
        rc = MPI_Waitall(2 * n, h->req, MPI_STATUSES_IGNORE);
        break;
    case MG_HALO_PERSISTENT:
        if (basic) pack_all(h);
        if ((rc = MPI_Startall(2 * n, h->req)) != MPI_SUCCESS) return rc;
        rc = MPI_Waitall(2 * n, h->req, MPI_STATUSES_IGNORE);
        break;
    case MG_HALO_NEIGHBOR:
        if (basic) pack_all(h);
        rc = MPI_Neighbor_alltoallw(sendbase(h), h->a_scount, h->a_sdispl, h->a_stype, recvbase(h), h->a_rcount,
                                    h->a_rdispl, h->a_rtype, h->comm);
        break;
    case MG_HALO_NEIGHBOR_PERSISTENT:
        if (basic) pack_all(h);
        if ((rc = MPI_Start(&h->nreq)) != MPI_SUCCESS) return rc;
        rc = MPI_Wait(&h->nreq, MPI_STATUS_IGNORE);
        break;
    default: return MPI_ERR_ARG;
    }
    if (rc == MPI_SUCCESS && basic) unpack_all(h);
    return rc;
}

void mg_halo_free(mg_halo **hp)
{
    if (!hp || !*hp) return;
    mg_halo *h = *hp;
    if (h->mode == MG_HALO_PERSISTENT)
        for (int i = 0; i < 2 * MG_DIR_COUNT_; i++)
            if (h->req[i] != MPI_REQUEST_NULL) MPI_Request_free(&h->req[i]);
    if (h->nreq != MPI_REQUEST_NULL) MPI_Request_free(&h->nreq);
    for (int s = 0; s < SHAPE_COUNT_; s++)
        if (h->types[s] != MPI_DATATYPE_NULL) MPI_Type_free(&h->types[s]);
    for (int r = 0; r < 2; r++)
        for (int k = 0; k < MG_DIR_COUNT_; k++)
            if (h->subtypes[r][k] != MPI_DATATYPE_NULL) MPI_Type_free(&h->subtypes[r][k]);
    if (h->comm != MPI_COMM_NULL) MPI_Comm_free(&h->comm);
    free(h->sbuf);
    free(h->rbuf);
    free(h);
    *hp = NULL;
}
