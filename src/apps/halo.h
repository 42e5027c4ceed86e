/* Halo exchange for 2D stencil applications.
 *
 * Decomposition. A global grid of global_ny rows by global_nx columns is split
 * over a 2D Cartesian process grid (MPI_Dims_create + MPI_Cart_create, no
 * reordering). Cartesian dimension 0 is y (rows, "north" = smaller row index),
 * dimension 1 is x (columns, contiguous in memory, "west" = smaller column
 * index); ranks are therefore numbered row-major with x fastest. Remainders go
 * to the first coordinates: a process with coordinate c in a dimension of n
 * cells over p processes owns n/p + (c < n%p) cells. Every process owns at
 * least one cell: if the dims of MPI_Dims_create do not allow that but swapped
 * dims do, they are swapped; otherwise mg_decomp_create returns MPI_ERR_DIMS.
 *
 * Local grid layout: that of stencil.h, shared with the kernels. Row-major,
 * (ny + 2) rows of (nx + 2) elements of one MPI predefined type (double, int,
 * unsigned char, ...): column i = 0..nx+1, row j = 0..ny+1, at MG_IDX(nx, i, j)
 * = j * (nx + 2) + i. Columns 1..nx of rows 1..ny are the interior; row 0, row
 * ny+1, column 0 and column nx+1 are the one-cell halo. Local cell (i, j) is
 * global cell (x0 + i - 1, y0 + j - 1).
 *
 * Exchange. After mg_halo_exchange every halo cell holds the value of the global
 * cell it mirrors (wrapping around when periodic). Halo cells at a non-periodic
 * border are never written. The four halo corner cells are exchanged (with the
 * diagonal neighbours) only when the halo was created with corners = 1.
 *
 * Variants (packing x mode):
 *   MG_HALO_BASIC       rows, columns and corners copied into contiguous scratch
 *                       buffers (room for the directions with a neighbour only),
 *                       sent as basic elements, copied back.
 *   MG_HALO_DDT         derived datatypes created and committed once: a row is
 *                       MPI_Type_contiguous, a column MPI_Type_vector with stride
 *                       nx + 2 resized to the extent of one element, a corner a
 *                       contiguous type of one element; data move straight from
 *                       and into the grid.
 *   MG_HALO_SUBARRAY    one MPI_Type_create_subarray per region and direction
 *                       (send and receive regions differ by their starts) over
 *                       the whole local array {ny + 2, nx + 2}, MPI_ORDER_C,
 *                       created and committed once; the start lives in the type,
 *                       so every transfer uses the grid itself with displacement 0.
 *   MG_HALO_NORMALIZED  the DDT types passed through libmpiguide-dt
 *                       (mg_dt_from_mpi + mg_dt_to_mpi).
 *   MG_HALO_NONBLOCKING          MPI_Irecv / MPI_Isend + MPI_Waitall.
 *   MG_HALO_NEIGHBOR             MPI_Neighbor_alltoallw: on (a dup of) the
 *                                Cartesian communicator without corners when its
 *                                4 neighbours are distinct; otherwise (corners, or
 *                                periodic with 1-2 processes in a dimension) on a
 *                                distributed graph communicator (MPI_Dist_graph_
 *                                create_adjacent, no reordering) listing the 4 or
 *                                8 neighbours in the order N S E W (NE NW SE SW),
 *                                borders left out, so that a process appearing
 *                                several times is matched in list order.
 *   MG_HALO_PERSISTENT           MPI_Send_init / MPI_Recv_init once, then
 *                                MPI_Startall + MPI_Waitall per exchange.
 *   MG_HALO_NEIGHBOR_PERSISTENT  MPI-4 MPI_Neighbor_alltoallw_init once, then
 *                                MPI_Start + MPI_Wait; only when the MPI library
 *                                has it (MG_HAVE_MPI_NEIGHBOR_ALLTOALLW_INIT at
 *                                configure time; left out on Intel MPI 2021.x,
 *                                whose version gives wrong halos with 2+
 *                                processes), else mg_halo_create returns
 *                                MPI_ERR_UNSUPPORTED_OPERATION
 *                                (mg_halo_mode_supported tells beforehand).
 * Point-to-point messages carry the direction they travel in as tag, so that
 * they are unambiguous when one neighbour appears in several directions
 * (periodic with 1 or 2 processes in a dimension, including the process itself).
 *
 * The grid pointer is bound at creation (persistent requests and datatype
 * displacements refer to it): an application that swaps two grids creates two
 * halo objects. Functions return 0 or an MPI error code; nothing prints or exits.
 */
#ifndef MG_APPS_HALO_H
#define MG_APPS_HALO_H

#include <mpi.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Directions, also the index of mg_decomp.nbr. */
typedef enum {
    MG_DIR_N = 0, /* row coordinate - 1 (smaller row index) */
    MG_DIR_S,     /* row coordinate + 1 */
    MG_DIR_E,     /* column coordinate + 1 */
    MG_DIR_W,     /* column coordinate - 1 */
    MG_DIR_NE,
    MG_DIR_NW,
    MG_DIR_SE,
    MG_DIR_SW,
    MG_DIR_COUNT_
} mg_dir;

typedef struct mg_decomp {
    MPI_Comm cart; /* Cartesian communicator (owned; mg_decomp_free frees it) */
    int dims[2];   /* processes in y (rows) and x (columns) */
    int coords[2]; /* this process: coords[0] in y, coords[1] in x */
    int periodic;  /* both dimensions periodic (1) or not (0) */
    int global_nx, global_ny;
    int nx, ny;             /* local interior columns and rows */
    int x0, y0;             /* global column and row of local interior cell (1, 1) */
    int rank;               /* rank in cart */
    int nbr[MG_DIR_COUNT_]; /* neighbour ranks in cart; MPI_PROC_NULL at non-periodic borders */
} mg_decomp;

int mg_decomp_create(MPI_Comm comm, int global_nx, int global_ny, int periodic, mg_decomp *d);
void mg_decomp_free(mg_decomp *d);

typedef enum {
    MG_HALO_BASIC = 0,
    MG_HALO_DDT,
    MG_HALO_SUBARRAY,
    MG_HALO_NORMALIZED,
    MG_HALO_PACKING_COUNT_
} mg_halo_packing;

typedef enum {
    MG_HALO_NONBLOCKING = 0,
    MG_HALO_NEIGHBOR,
    MG_HALO_PERSISTENT,
    MG_HALO_NEIGHBOR_PERSISTENT,
    MG_HALO_MODE_COUNT_
} mg_halo_mode;

typedef struct mg_halo mg_halo;

/* grid: (d->ny + 2) x (d->nx + 2) elements of elem, row-major; d must outlive
 * the halo object. */
int mg_halo_create(const mg_decomp *d, MPI_Datatype elem, int corners, mg_halo_packing packing, mg_halo_mode mode,
                   void *grid, mg_halo **out);
int mg_halo_exchange(mg_halo *h);
void mg_halo_free(mg_halo **h);
/* Seconds spent in mg_halo_create building datatypes, communicators and
 * persistent requests (never part of an exchange). */
double mg_halo_setup_seconds(const mg_halo *h);
/* Bytes of scratch (pack/unpack) buffers the halo object holds: BASIC's send and
 * receive buffers, sized for the directions that have a neighbour (0 without
 * any); 0 for the datatype packings, which move data straight from the grid
 * (what the MPI library buffers internally is not counted). */
size_t mg_halo_buffer_bytes(const mg_halo *h);

/* 1 if this build can run the mode (MG_HALO_NEIGHBOR_PERSISTENT needs MPI-4). */
int mg_halo_mode_supported(mg_halo_mode mode);
const char *mg_halo_packing_name(mg_halo_packing p); /* "basic", "ddt", "subarray", "normalized" */
const char *mg_halo_mode_name(mg_halo_mode m); /* "nonblocking", "neighbor", "persistent", "neighbor-persistent" */

#ifdef __cplusplus
}
#endif
#endif
