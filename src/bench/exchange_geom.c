/* The geometries of the exchanges (exchange.h): which regions go to which
 * peer, and what every array must hold, from the global position of its cells. */
#include "bench_util.h"
#include "exchange.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

const char *const mg_xchg_pattern_names[MG_XCHG_NPATTERNS] = {"transpose", "halo"};

static void region(mg_region *r, int ndims, const int *size, const int *sub, const int *start)
{
    /* padded to 3 dimensions with leading 1s */
    int pad = 3 - ndims;
    r->ndims = ndims;
    for (int d = 0; d < 3; d++) {
        r->size[d] = d < pad ? 1 : size[d - pad];
        r->sub[d] = d < pad ? 1 : sub[d - pad];
        r->start[d] = d < pad ? 0 : start[d - pad];
    }
}

static long long lcm(long long a, long long b)
{
    long long x = a, y = b;
    while (y) {
        long long t = x % y;
        x = y;
        y = t;
    }
    return a / x * b;
}

/* The 3D FFT's transposition from x-pencils to y-pencils (exchange.h). A = 1:
 * slabs, a p x 1 grid; A = 2: pencils, the p1 x p2 grid of MPI_Dims_create.
 * Arrays in C order [z][y][x]: x-pencil {N/p2, N/p1, N}, y-pencil {N/p2, N,
 * N/p1}; the block for row peer j is x in [j N/p1, (j+1) N/p1) of the
 * x-pencil, received as y in [j N/p1, ...) of the y-pencil. */
static int transpose(MPI_Comm world, long A, size_t m, mg_xchg *x, char *err, size_t len)
{
    int p, rank, dims[2] = {0, 0};
    MPI_Comm_size(world, &p);
    MPI_Comm_rank(world, &rank);
    if (A != 1 && A != 2) {
        snprintf(err, len, "A is the process grid's dimensions of the transpose: 1 (slabs) or 2 (pencils), not %ld",
                 A);
        return -1;
    }
    if (A == 1)
        dims[0] = p, dims[1] = 1;
    else
        MPI_Dims_create(p, 2, dims);
    int p1 = dims[0], p2 = dims[1];
    if (p1 > MG_XCHG_MAX_PEERS) {
        snprintf(err, len, "a row of %d processes: at most %d", p1, MG_XCHG_MAX_PEERS);
        return -1;
    }
    long long unit = lcm(p1, p2);
    double edge = cbrt((double)m * p / (double)x->elem);
    long long N = llround(edge / (double)unit) * unit;
    if (N < unit) {
        snprintf(err, len, "m=%zu bytes is too small: the cube's edge must be a multiple of %lld (grid %dx%d)", m,
                 unit, p1, p2);
        return -1;
    }
    if ((double)N * N * (N / p1) > INT_MAX || (double)N * N * N / p * (double)x->elem > (double)INT_MAX) {
        snprintf(err, len, "m=%zu bytes: an edge of %lld is too large for MPI's int counts", m, N);
        return -1;
    }
    int n = (int)N, r1 = rank % p1, r2 = rank / p1, L = n / p1, Lz = n / p2;
    MPI_Comm_split(world, r2, r1, &x->comm);
    x->npeers = p1;
    int xs[3] = {Lz, L, n}, ys[3] = {Lz, n, L}, sub[3] = {Lz, L, L};
    for (int j = 0; j < p1; j++) {
        int sst[3] = {0, 0, j * L}, rst[3] = {0, j * L, 0};
        region(&x->send[j], 3, xs, sub, sst);
        region(&x->recv[j], 3, ys, sub, rst);
        x->peer[j] = j;
        x->stag[j] = x->rtag[j] = 0;
    }
    int zero[3] = {0, 0, 0};
    region(&x->owned, 3, xs, xs, zero);
    for (int d = 0; d < 3; d++) {
        x->sbox.size[d] = xs[d], x->rbox.size[d] = ys[d];
        x->sbox.global[d] = x->rbox.global[d] = N;
    }
    x->sbox.origin[0] = x->rbox.origin[0] = (long long)r2 * Lz;
    x->sbox.origin[1] = (long long)r1 * L, x->sbox.origin[2] = 0;
    x->rbox.origin[1] = 0, x->rbox.origin[2] = (long long)r1 * L;
    x->sbytes = x->rbytes = (size_t)Lz * (size_t)L * (size_t)n * x->elem;
    x->msize = (long long)x->sbytes;
    x->region_bytes = (long long)Lz * L * L * (long long)x->elem;
    snprintf(x->info, sizeof x->info, "N=%d,grid=%dx%d,pencil=%dx%dx%d,block=%dx%dx%d", n, p1, p2, Lz, L, n, Lz, L,
             L);
    return 0;
}

/* The halo exchange (exchange.h): a local block of n^A interior cells with a
 * halo of 1 in an (n+2)^A array; neighbours 2d and 2d+1 are those below and
 * above in dimension d (MPI_Cart_shift, the order of the neighbourhood
 * collectives on a Cartesian communicator). */
static int halo(MPI_Comm world, long A, size_t m, mg_xchg *x, char *err, size_t len)
{
    int p, dims[3] = {0, 0, 0}, periods[3] = {0, 0, 0}, coords[3] = {0, 0, 0};
    MPI_Comm_size(world, &p);
    if (A != 2 && A != 3) {
        snprintf(err, len, "A is the dimensions of the halo exchange: 2 or 3, not %ld", A);
        return -1;
    }
    int D = (int)A;
    long long n = llround(pow((double)m / (double)x->elem, 1.0 / D));
    if (n < 2) {
        snprintf(err, len, "m=%zu bytes is too small: a local block of at least 2 cells per dimension", m);
        return -1;
    }
    double cells = pow((double)(n + 2), D);
    if (cells * (double)x->elem > (double)INT_MAX) {
        snprintf(err, len, "m=%zu bytes: a local block of %lld^%d cells is too large for MPI's int counts", m, n, D);
        return -1;
    }
    MPI_Dims_create(p, D, dims);
    MPI_Cart_create(world, D, dims, periods, 0, &x->comm);
    int rank;
    MPI_Comm_rank(x->comm, &rank);
    MPI_Cart_coords(x->comm, rank, D, coords);
    int size[3], inner[3], one[3];
    for (int d = 0; d < D; d++) size[d] = (int)n + 2, inner[d] = (int)n, one[d] = 1;
    x->npeers = 2 * D;
    for (int d = 0; d < D; d++) {
        int lo, hi;
        MPI_Cart_shift(x->comm, d, 1, &lo, &hi);
        for (int side = 0; side < 2; side++) {
            int k = 2 * d + side, sub[3], sst[3], rst[3];
            memcpy(sub, inner, sizeof sub);
            memcpy(sst, one, sizeof sst);
            memcpy(rst, one, sizeof rst);
            sub[d] = 1;
            sst[d] = side ? (int)n : 1;     /* the first or last interior plane */
            rst[d] = side ? (int)n + 1 : 0; /* the halo plane on that side */
            region(&x->send[k], D, size, sub, sst);
            region(&x->recv[k], D, size, sub, rst);
            x->peer[k] = side ? hi : lo;
            x->rtag[k] = k;
            x->stag[k] = side ? 2 * d : 2 * d + 1; /* the neighbour receives it from its other side */
        }
    }
    region(&x->owned, D, size, inner, one);
    for (int d = 0; d < 3; d++) {
        int pd = d - (3 - D); /* the array's own dimension, < 0 for a padding one */
        x->sbox.size[d] = pd < 0 ? 1 : size[pd];
        x->sbox.origin[d] = pd < 0 ? 0 : (long long)coords[pd] * n;
        x->sbox.global[d] = pd < 0 ? 1 : (long long)dims[pd] * n + 2;
    }
    x->rbox = x->sbox;
    x->in_place = 1;
    x->sbytes = x->rbytes = (size_t)cells * x->elem;
    x->region_bytes = (long long)pow((double)n, D - 1) * (long long)x->elem;
    x->msize = 2LL * D * x->region_bytes;
    snprintf(x->info, sizeof x->info, "n=%lld,dims=%dx%dx%d,coords=%d.%d.%d", n, dims[0], D > 1 ? dims[1] : 1,
             D > 2 ? dims[2] : 1, coords[0], coords[1], coords[2]);
    return 0;
}

int mg_xchg_setup(int pattern, MPI_Comm world, long A, size_t m, size_t elem, MPI_Datatype etype, mg_xchg *x,
                  char *err, size_t errlen)
{
    memset(x, 0, sizeof *x);
    x->pattern = pattern;
    x->comm = MPI_COMM_NULL;
    x->elem = elem;
    x->etype = etype;
    int rc = pattern == MG_XCHG_TRANSPOSE ? transpose(world, A, m, x, err, errlen) : halo(world, A, m, x, err, errlen);
    if (rc != 0) mg_xchg_free(x);
    return rc;
}

void mg_xchg_free(mg_xchg *x)
{
    if (x->comm != MPI_COMM_NULL) MPI_Comm_free(&x->comm);
    x->comm = MPI_COMM_NULL;
}

/* ---- Images ---------------------------------------------------------------- */

/* The data of one cell: bytes of the global cell's position, never MG_BENCH_GUARD. */
static void put_cell(unsigned char *p, const mg_box *b, const int *i, size_t elem)
{
    long long g = 0;
    for (int d = 0; d < 3; d++) g = g * b->global[d] + b->origin[d] + i[d];
    for (size_t k = 0; k < elem; k++) p[k] = mg_pattern_byte(1u, (size_t)g * elem + k);
}

/* Every cell of region r of an array laid out as b: the data of its global cell. */
static void put_region(unsigned char *buf, const mg_box *b, const mg_region *r, size_t elem)
{
    int i[3];
    for (i[0] = r->start[0]; i[0] < r->start[0] + r->sub[0]; i[0]++)
        for (i[1] = r->start[1]; i[1] < r->start[1] + r->sub[1]; i[1]++)
            for (i[2] = r->start[2]; i[2] < r->start[2] + r->sub[2]; i[2]++) {
                size_t at = (((size_t)i[0] * (size_t)b->size[1] + (size_t)i[1]) * (size_t)b->size[2] + (size_t)i[2]);
                put_cell(buf + at * elem, b, i, elem);
            }
}

void mg_xchg_fill(const mg_xchg *x, unsigned char *sbuf)
{
    memset(sbuf, MG_BENCH_GUARD, x->sbytes);
    put_region(sbuf, &x->sbox, &x->owned, x->elem);
}

void mg_xchg_expect(const mg_xchg *x, unsigned char *expect)
{
    if (x->in_place)
        mg_xchg_fill(x, expect);
    else
        memset(expect, MG_BENCH_GUARD, x->rbytes);
    for (int k = 0; k < x->npeers; k++)
        if (x->peer[k] != MPI_PROC_NULL) put_region(expect, &x->rbox, &x->recv[k], x->elem);
}

long long mg_xchg_some_received_byte(const mg_xchg *x)
{
    for (int k = 0; k < x->npeers; k++)
        if (x->peer[k] != MPI_PROC_NULL) {
            const mg_region *r = &x->recv[k];
            size_t at = ((size_t)r->start[0] * (size_t)r->size[1] + (size_t)r->start[1]) * (size_t)r->size[2] +
                        (size_t)r->start[2];
            return (long long)(at * x->elem);
        }
    return -1;
}
