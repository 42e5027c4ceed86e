/* Halo exchange (src/apps/halo.h): every packing x mode, periodic or not, with
 * and without corners, double, unsigned char and int, on global sizes that do
 * and do not divide over the processes. Each rank fills its interior from the GLOBAL
 * coordinates and its halo with a sentinel; after an exchange every halo cell
 * must hold the global cell it mirrors (wrapping when periodic), or keep the
 * sentinel at a non-periodic border and in the corners when they were not
 * requested; the interior must be untouched; every packing must give the grid
 * of BASIC bitwise. mg_halo_buffer_bytes must be BASIC's exact buffer need and
 * 0 for the datatype packings. Run under mpiexec -n 1..4. */
#include "halo.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;

typedef struct {
    MPI_Datatype type;
    const char *name;
    size_t size;
} elem_t;

/* Value of global cell (gy, gx), written into dst as the element type. */
static void cell_value(const elem_t *e, int gy, int gx, void *dst)
{
    if (e->type == MPI_DOUBLE) {
        double v = 1000.0 * gy + gx + 0.25;
        memcpy(dst, &v, sizeof v);
    } else if (e->type == MPI_INT) {
        int v = -(1009 * gy + gx + 1); /* distinct for gx < 1009, never the sentinel */
        memcpy(dst, &v, sizeof v);
    } else {
        unsigned char v = (unsigned char)(1 + (gy * 37 + gx * 11) % 250);
        memcpy(dst, &v, 1);
    }
}

static void sentinel(const elem_t *e, void *dst)
{
    if (e->type == MPI_DOUBLE) {
        double v = -7.5e300;
        memcpy(dst, &v, sizeof v);
    } else if (e->type == MPI_INT) {
        int v = 123456789;
        memcpy(dst, &v, sizeof v);
    } else {
        unsigned char v = 0;
        memcpy(dst, &v, 1);
    }
}

static void fill(const mg_decomp *d, const elem_t *e, unsigned char *g)
{
    const int W = d->nx + 2;
    for (int i = 0; i < d->ny + 2; i++)
        for (int j = 0; j < W; j++) {
            unsigned char *p = g + ((size_t)i * W + j) * e->size;
            if (i >= 1 && i <= d->ny && j >= 1 && j <= d->nx)
                cell_value(e, d->y0 + i - 1, d->x0 + j - 1, p);
            else
                sentinel(e, p);
        }
}

static void print_elem(const elem_t *e, const void *p, char *buf, size_t len)
{
    if (e->type == MPI_DOUBLE) {
        double v;
        memcpy(&v, p, sizeof v);
        snprintf(buf, len, "%.17g", v);
    } else if (e->type == MPI_INT) {
        int v;
        memcpy(&v, p, sizeof v);
        snprintf(buf, len, "%d", v);
    } else {
        snprintf(buf, len, "%u", (unsigned)*(const unsigned char *)p);
    }
}

/* Check the whole local grid; returns the number of wrong cells (first few printed). */
static int check(const mg_decomp *d, const elem_t *e, int corners, const unsigned char *g, const char *what)
{
    const int W = d->nx + 2, H = d->ny + 2;
    int bad = 0;
    unsigned char want[16];
    for (int i = 0; i < H; i++)
        for (int j = 0; j < W; j++) {
            int gy = d->y0 + i - 1, gx = d->x0 + j - 1;
            int halo_row = i == 0 || i == H - 1, halo_col = j == 0 || j == W - 1;
            int expect_value = 1;
            if (halo_row && halo_col && !corners) expect_value = 0;
            if (gy < 0 || gy >= d->global_ny) {
                if (d->periodic)
                    gy = (gy + d->global_ny) % d->global_ny;
                else
                    expect_value = 0;
            }
            if (gx < 0 || gx >= d->global_nx) {
                if (d->periodic)
                    gx = (gx + d->global_nx) % d->global_nx;
                else
                    expect_value = 0;
            }
            if (expect_value)
                cell_value(e, gy, gx, want);
            else
                sentinel(e, want);
            const unsigned char *got = g + ((size_t)i * W + j) * e->size;
            if (memcmp(got, want, e->size) != 0) {
                if (bad < 5) {
                    char a[64], b[64];
                    print_elem(e, got, a, sizeof a);
                    print_elem(e, want, b, sizeof b);
                    fprintf(stderr,
                            "FAIL %s: rank %d (coords %d,%d; local %dx%d at x0=%d y0=%d) cell row %d col %d (%s): "
                            "got %s want %s\n",
                            what, d->rank, d->coords[0], d->coords[1], d->nx, d->ny, d->x0, d->y0, i, j,
                            (halo_row || halo_col) ? "halo" : "interior", a, b);
                }
                bad++;
            }
        }
    return bad;
}

/* Bytes BASIC needs: send and receive room for every direction with a neighbour. */
static size_t basic_bytes(const mg_decomp *d, int corners, size_t esz)
{
    size_t cells = 0;
    for (int k = 0; k < (corners ? MG_DIR_COUNT_ : 4); k++)
        if (d->nbr[k] != MPI_PROC_NULL)
            cells += k == MG_DIR_N || k == MG_DIR_S   ? (size_t)d->nx
                     : k == MG_DIR_E || k == MG_DIR_W ? (size_t)d->ny
                                                      : 1;
    return 2 * cells * esz;
}

static void run_case(MPI_Comm world, int gnx, int gny, int periodic)
{
    mg_decomp d;
    int rc = mg_decomp_create(world, gnx, gny, periodic, &d);
    if (rc != MPI_SUCCESS) {
        fprintf(stderr, "FAIL mg_decomp_create %dx%d periodic=%d: %d\n", gnx, gny, periodic, rc);
        failures++;
        return;
    }
    /* the decomposition covers the global grid exactly */
    long cells = (long)d.nx * d.ny, total = 0;
    MPI_Allreduce(&cells, &total, 1, MPI_LONG, MPI_SUM, world);
    if (total != (long)gnx * gny || d.nx < 1 || d.ny < 1) {
        fprintf(stderr, "FAIL decomposition %dx%d: rank %d owns %dx%d, total %ld\n", gnx, gny, d.rank, d.nx, d.ny,
                total);
        failures++;
    }
    const elem_t elems[] = {
        {MPI_DOUBLE, "double", sizeof(double)}, {MPI_UNSIGNED_CHAR, "unsigned char", 1}, {MPI_INT, "int", sizeof(int)}};
    for (int ei = 0; ei < (int)(sizeof elems / sizeof *elems); ei++) {
        const elem_t *e = &elems[ei];
        size_t bytes = (size_t)(d.nx + 2) * (size_t)(d.ny + 2) * e->size;
        unsigned char *ref = malloc(bytes);
        unsigned char *g = malloc(bytes);
        if (!ref || !g) {
            fprintf(stderr, "FAIL out of memory\n");
            exit(1);
        }
        for (int corners = 0; corners <= 1; corners++)
            for (int mode = 0; mode < MG_HALO_MODE_COUNT_; mode++)
                for (int packing = 0; packing < MG_HALO_PACKING_COUNT_; packing++) {
                    char what[160];
                    snprintf(what, sizeof what, "packing=%s mode=%s (global %dx%d periodic=%d corners=%d %s)",
                             mg_halo_packing_name(packing), mg_halo_mode_name(mode), gnx, gny, periodic, corners,
                             e->name);
                    fill(&d, e, g);
                    mg_halo *h = NULL;
                    rc = mg_halo_create(&d, e->type, corners, packing, mode, g, &h);
                    if (!mg_halo_mode_supported(mode)) {
                        if (rc == MPI_SUCCESS || h != NULL) {
                            fprintf(stderr, "FAIL %s: unsupported mode accepted\n", what);
                            failures++;
                        }
                        continue;
                    }
                    if (rc != MPI_SUCCESS || !h) {
                        fprintf(stderr, "FAIL %s: mg_halo_create returned %d on rank %d\n", what, rc, d.rank);
                        failures++;
                        continue;
                    }
                    if (!(mg_halo_setup_seconds(h) >= 0.0)) {
                        fprintf(stderr, "FAIL %s: setup seconds %g < 0\n", what, mg_halo_setup_seconds(h));
                        failures++;
                    }
                    size_t want = packing == MG_HALO_BASIC ? basic_bytes(&d, corners, e->size) : 0;
                    int has_nbr = 0;
                    for (int k = 0; k < (corners ? MG_DIR_COUNT_ : 4); k++) has_nbr |= d.nbr[k] != MPI_PROC_NULL;
                    size_t got = mg_halo_buffer_bytes(h);
                    if (got != want || (packing == MG_HALO_BASIC && has_nbr && got == 0)) {
                        fprintf(stderr, "FAIL %s: rank %d buffer bytes %zu, want %zu\n", what, d.rank, got, want);
                        failures++;
                    }
                    /* Two rounds: persistent requests and bound buffers must be reusable. */
                    for (int round = 0; round < 2; round++) {
                        if (round == 1) fill(&d, e, g);
                        rc = mg_halo_exchange(h);
                        if (rc != MPI_SUCCESS) {
                            fprintf(stderr, "FAIL %s: mg_halo_exchange returned %d on rank %d\n", what, rc, d.rank);
                            failures++;
                            break;
                        }
                        int bad = check(&d, e, corners, g, what);
                        if (bad) {
                            /* no break: the other ranks still run round 1 */
                            fprintf(stderr, "FAIL %s round %d: %d wrong cells on rank %d\n", what, round, bad, d.rank);
                            failures++;
                        }
                    }
                    mg_halo_free(&h);
                    if (h != NULL) {
                        fprintf(stderr, "FAIL %s: mg_halo_free did not clear the pointer\n", what);
                        failures++;
                    }
                    /* Every packing gives BASIC's grid bitwise. */
                    if (packing == MG_HALO_BASIC) {
                        memcpy(ref, g, bytes);
                    } else if (memcmp(ref, g, bytes) != 0) {
                        fprintf(stderr, "FAIL %s: rank %d grid differs from packing=basic\n", what, d.rank);
                        failures++;
                    }
                }
        free(ref);
        free(g);
    }
    mg_decomp_free(&d);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int size, rank;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int dims[2] = {0, 0};
    MPI_Dims_create(size, 2, dims); /* the decomposition mg_decomp_create uses */
    /* global nx, ny: not divisible, square, one row / one cell per rank, wide and tall */
    const int sizes[][2] = {
        {7, 5}, {13, 11}, {16, 16}, {dims[1], dims[0]}, {9, dims[0]}, {dims[1], 6}, {3, 17},
    };
    const int nsizes = (int)(sizeof sizes / sizeof sizes[0]);
    for (int s = 0; s < nsizes; s++)
        for (int periodic = 0; periodic <= 1; periodic++) run_case(MPI_COMM_WORLD, sizes[s][0], sizes[s][1], periodic);

    /* Argument errors come back as codes. */
    mg_decomp d;
    if (mg_decomp_create(MPI_COMM_WORLD, 0, 5, 0, &d) == MPI_SUCCESS) {
        fprintf(stderr, "FAIL mg_decomp_create accepted a 0 x 5 grid\n");
        failures++;
        mg_decomp_free(&d);
    }
    if (mg_decomp_create(MPI_COMM_WORLD, 4, 4, 1, &d) == MPI_SUCCESS) {
        double grid[36];
        mg_halo *h = (mg_halo *)&d; /* must be reset to NULL */
        if (mg_halo_create(&d, MPI_DOUBLE, 0, (mg_halo_packing)99, MG_HALO_NONBLOCKING, grid, &h) == MPI_SUCCESS ||
            h != NULL) {
            fprintf(stderr, "FAIL mg_halo_create accepted a bad packing\n");
            failures++;
        }
        mg_halo_free(&h);
        mg_decomp_free(&d);
    }

    int all = 0;
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("halo: %d ranks (dims %d x %d), neighbor-persistent %s: %s\n", size, dims[0], dims[1],
               mg_halo_mode_supported(MG_HALO_NEIGHBOR_PERSISTENT) ? "built" : "not in this MPI",
               all ? "FAILED" : "all checks passed");
    MPI_Finalize();
    return all ? 1 : 0;
}
