/* Stencil applications: the grid layout shared by the kernels
 * (jacobi.c, life.c, image.c) and the halo-exchange module (halo.c).
 *
 * A rank owns a local block of nx x ny cells of a global grid of gnx x gny
 * cells; the block starts at global column x0 and global row y0. The local
 * array has a one-cell halo around the block:
 *
 *   - row-major, (ny + 2) rows of (nx + 2) columns each;
 *   - x (index i) is the column and is contiguous in memory, y (index j) is the row;
 *   - interior cells: 1 <= i <= nx, 1 <= j <= ny;
 *     local (i, j) is global cell (x0 + i - 1, y0 + j - 1);
 *   - halo: i == 0, i == nx + 1, j == 0, j == ny + 1 (corners included).
 *     Global coordinate -1 and gnx (gny) are outside the global grid: there the
 *     halo holds the physical boundary (Jacobi, image) or the periodic image of
 *     the opposite edge (Life); elsewhere it holds the neighbour rank's cells.
 *
 * The kernels read only their input array (interior and halo) and write only
 * the interior of their output array, each cell with a fixed operation order;
 * so a block decomposition gives results bitwise identical to one serial grid.
 */
#ifndef MG_STENCIL_H
#define MG_STENCIL_H

#include <stddef.h>

/* Row stride (elements) of a local array with nx interior columns. */
#define MG_STRIDE(nx) ((size_t)(nx) + 2u)
/* Element offset of local cell (i, j); i = column 0..nx+1, j = row 0..ny+1. */
#define MG_IDX(nx, i, j) ((size_t)(j)*MG_STRIDE(nx) + (size_t)(i))

static inline size_t mg_idx(int nx, int i, int j) { return MG_IDX(nx, i, j); }

/* Number of elements of a local array including its halo. */
static inline size_t mg_grid_cells(int nx, int ny) { return ((size_t)nx + 2u) * ((size_t)ny + 2u); }

/* A local block and where it lies in the global grid. */
typedef struct {
    int nx, ny;   /* interior size of the local block */
    int x0, y0;   /* global column and row of local cell (1, 1) */
    int gnx, gny; /* global interior size */
} mg_block;

/* The whole global grid as one block (serial runs). */
static inline mg_block mg_block_serial(int gnx, int gny)
{
    mg_block b = {gnx, gny, 0, 0, gnx, gny};
    return b;
}

/* ---------------------------------------------------------------- */
/* Jacobi CFD solver (jacobi.c)                                      */
/* ---------------------------------------------------------------- */

/* Cavity with an inlet in the bottom wall and an outlet in the right wall. */
typedef struct {
    int inlet_x0, inlet_w;   /* inlet: global columns inlet_x0 .. inlet_x0 + inlet_w - 1 */
    int outlet_y0, outlet_w; /* outlet: global rows outlet_y0 .. outlet_y0 + outlet_w - 1 */
    double flow;             /* volume flux through the cavity (psi jump across the inlet) */
} mg_cavity;

/* A cavity scaled to a gnx x gny grid: inlet in the middle third of the bottom wall,
 * outlet in the middle third of the right wall, flow 1. */
mg_cavity mg_cavity_default(int gnx, int gny);

/* Boundary value of psi at global cell (gx, gy) outside the grid (gx == -1 or gnx,
 * or gy == -1 or gny). */
double mg_cavity_psi(const mg_cavity *c, int gnx, int gny, int gx, int gy);

/* Boundary function: value at a global boundary cell. */
typedef double (*mg_boundary_fn)(int gx, int gy, void *ctx);

/* Initialise a local psi array: interior 0, halo cells on the physical boundary
 * from f, the other halo cells 0 (filled later by the halo exchange). */
void mg_jacobi_init(double *psi, const mg_block *b, mg_boundary_fn f, void *ctx);
/* The same with the cavity's boundary values. */
void mg_jacobi_init_cavity(double *psi, const mg_block *b, const mg_cavity *c);

/* One Jacobi sweep over the interior:
 *   out(i,j) = 0.25 * (((in(i,j-1) + in(i,j+1)) + in(i-1,j)) + in(i+1,j))
 * The halo of out is not touched (initialise both arrays with mg_jacobi_init). */
void mg_jacobi_step(const double *in, double *out, int nx, int ny);

/* Sum over the interior of (b - a)^2, row by row, left to right. A global norm
 * summed over ranks in another order is not bitwise equal to the serial one: the
 * bitwise check of a parallel run compares the grid, not this norm. */
double mg_jacobi_diff2(const double *a, const double *b, int nx, int ny);

/* ---------------------------------------------------------------- */
/* Conway's Game of Life (life.c)                                    */
/* ---------------------------------------------------------------- */

typedef enum { MG_LIFE_GLIDER, MG_LIFE_BLINKER, MG_LIFE_BLOCK } mg_life_pattern;

/* One generation (B3/S23) over the interior; in's halo must hold the periodic
 * neighbours, corners included. Cells are 0 or 1. */
void mg_life_step(const unsigned char *in, unsigned char *out, int nx, int ny);

/* Serial periodic halo: copy the opposite edges and corners of a grid that is
 * the whole periodic domain (one rank). */
void mg_life_wrap_halo(unsigned char *g, int nx, int ny);

/* Set the live cells of a pattern with its top-left corner at global (px, py),
 * wrapped periodically; only cells inside the local block are set to 1 (nothing
 * is cleared, so patterns can be combined).
 * Glider: (1,0) (2,1) (0,2) (1,2) (2,2), moves by (+1,+1) every 4 generations.
 * Blinker: (0,1) (1,1) (2,1), period 2. Block: 2x2 still life.
 * Returns 0, or -1 for an unknown pattern. */
int mg_life_place(unsigned char *g, const mg_block *b, mg_life_pattern p, int px, int py);

/* Random soup: cell alive with probability ~density, a hash of (seed, gx, gy),
 * so the global state does not depend on the decomposition. Halo left 0. */
void mg_life_random(unsigned char *g, const mg_block *b, double density, unsigned seed);

/* Live interior cells of a local block. */
long mg_life_count(const unsigned char *g, int nx, int ny);

/* ---------------------------------------------------------------- */
/* Lattice image reconstruction (image.c)                            */
/* ---------------------------------------------------------------- */

typedef enum { MG_IMAGE_SMOOTH, MG_IMAGE_SHAPES, MG_IMAGE_MIXED } mg_image_kind;

/* Set the halo cells of a local image that lie on the physical boundary to bval
 * (the image is taken to be surrounded by a frame of value bval). */
void mg_image_set_boundary(double *img, const mg_block *b, double bval);

/* Edge image of the interior: edge = 4*I - s, with the neighbour sum
 *   s = ((I(i,j-1) + I(i,j+1)) + I(i-1,j)) + I(i+1,j)
 * read from img including its halo. edge has the same layout (its halo unused). */
void mg_image_edge(const double *img, double *edge, int nx, int ny);

/* One reconstruction sweep: out = 0.25 * (edge + s(in)), s as in mg_image_edge.
 * The halo of out is not touched. */
void mg_image_step(const double *edge, const double *in, double *out, int nx, int ny);

/* Test image at the local block: integer values 0..255 that depend only on the
 * global cell, so every decomposition builds the same global image. Halo 0. */
void mg_image_generate(double *img, const mg_block *b, mg_image_kind kind);

/* Largest |a - b| over the interior. */
double mg_image_maxdiff(const double *a, const double *b, int nx, int ny);

/* Interior to / from bytes (row-major nx*ny, no halo): rounded, clamped to 0..255. */
void mg_image_to_u8(const double *img, unsigned char *px, int nx, int ny);
void mg_image_from_u8(const unsigned char *px, double *img, int nx, int ny);

#endif
