/* The exchanges of the expectation tests 12 and 13 (mg_ddtexchange): every
 * process sends one region of its local array to each of its peers and
 * receives one region from each, in one collective call. Two geometries:
 *
 *   transpose  the global transposition of a 3D FFT (Dalcin, Mortensen and
 *              Keyes 2019): an N x N x N array in pencils (or slabs) over a
 *              p1 x p2 process grid goes from x-pencils to y-pencils within
 *              each row of p1 processes; every peer gets one block. Call:
 *              MPI_Alltoallw on the row's communicator.
 *   halo       a 2D or 3D halo exchange of width 1 on a Cartesian process grid
 *              (not periodic): every process sends its first and last interior
 *              plane of each dimension to the neighbour on that side and
 *              receives the neighbour's into its halo. Call:
 *              MPI_Neighbor_alltoallw on the Cartesian communicator.
 *
 * A region is a subarray of a C-order array; the geometry gives them, and the
 * expectation of the data check is computed from the geometry alone (the
 * global position of every cell), never from an MPI datatype. The modes move
 * the same regions in different ways:
 *
 *   datatype     the call with MPI_Type_create_subarray types
 *   normalized   the call with mpiguide's normalized types (mg_dt_to_mpi)
 *   manual       hand-written loops pack each region into one buffer, the
 *                contiguous call (MPI_Alltoall, MPI_Neighbor_alltoallv), loops unpack
 *   pack         the same with MPI_Pack / MPI_Unpack (MPI_PACKED)
 *   engine       the same with mpiguide's engine (mg_dt_pack / mg_dt_unpack)
 *   p2p          MPI_Irecv + MPI_Isend of the subarray types + MPI_Waitall
 *   nonblocking  the nonblocking call (MPI_Ialltoallw, MPI_Ineighbor_alltoallw) + MPI_Wait
 *   persistent   MPI-4: the call's _init once (untimed), MPI_Start + MPI_Wait per
 *                exchange; only where the stack declares it (MG_HAVE_MPI_PERSISTENT_COLL)
 *   tuned        the datatype mode's call under libmpiguide-tune in tuned mode
 *                (mg_ddtexchange_tuned only: the validation of mpiguide ddt tune)
 */
#ifndef MG_BENCH_EXCHANGE_H
#define MG_BENCH_EXCHANGE_H

#include "mpiguide/dt.h"

#include <mpi.h>
#include <stddef.h>

#define MG_XCHG_MAX_PEERS 64

enum { MG_XCHG_TRANSPOSE, MG_XCHG_HALO, MG_XCHG_NPATTERNS };
extern const char *const mg_xchg_pattern_names[MG_XCHG_NPATTERNS];

enum {
    MG_XM_DATATYPE,
    MG_XM_MANUAL,
    MG_XM_PACK,
    MG_XM_ENGINE,
    MG_XM_NORMALIZED,
    MG_XM_P2P,
    MG_XM_NONBLOCKING,
    MG_XM_PERSISTENT,
    MG_XM_TUNED,
    MG_XM_NMODES
};
extern const char *const mg_xchg_mode_names[MG_XM_NMODES];

/* A subarray of a C-order array, padded to 3 dimensions with leading 1s;
 * ndims is the array's own (that of its MPI subarray type). */
typedef struct {
    int ndims;
    int size[3], sub[3], start[3];
} mg_region;

/* A local array as part of the global grid: cell i of the array is global cell
 * origin + i (per dimension) of a grid of `global` cells. */
typedef struct {
    int size[3];
    long long origin[3], global[3];
} mg_box;

/* One geometry at one (dimensions A, size m) on this process. */
typedef struct {
    int pattern;
    MPI_Comm comm; /* the call's communicator (a row, or the Cartesian grid); owned */
    int npeers;
    int peer[MG_XCHG_MAX_PEERS];       /* rank in comm, or MPI_PROC_NULL */
    int stag[MG_XCHG_MAX_PEERS];       /* p2p: the tag of the message to peer k */
    int rtag[MG_XCHG_MAX_PEERS];       /* and of the one from peer k */
    mg_region send[MG_XCHG_MAX_PEERS]; /* in the send array */
    mg_region recv[MG_XCHG_MAX_PEERS]; /* in the receive array */
    mg_box sbox, rbox;
    mg_region owned; /* the send array's cells that hold data (the rest holds nothing) */
    int in_place;    /* one array: the halo is received into the array it is sent from */
    size_t elem;
    MPI_Datatype etype;
    size_t sbytes, rbytes;  /* of the arrays (rbytes = sbytes in place) */
    long long msize;        /* the data bytes the `msize` column reports */
    long long region_bytes; /* bytes of one region (they are all the same size) */
    char info[200];         /* the geometry, for the #@info note */
} mg_xchg;

/* The geometry of `pattern` on world's processes, A dimensions, about m bytes:
 * 0, or -1 with the reason in err (the configuration is impossible, a skip; on
 * every rank alike). Collective over world. */
int mg_xchg_setup(int pattern, MPI_Comm world, long A, size_t m, size_t elem, MPI_Datatype etype, mg_xchg *x,
                  char *err, size_t errlen);
void mg_xchg_free(mg_xchg *x);

/* The send array's image before the exchange (data in the owned cells, guard
 * bytes elsewhere), and the receive array's after it (expect holds rbytes). */
void mg_xchg_fill(const mg_xchg *x, unsigned char *sbuf);
void mg_xchg_expect(const mg_xchg *x, unsigned char *expect);
/* A data byte of the receive array (for --corrupt), or -1 if this rank receives none. */
long long mg_xchg_some_received_byte(const mg_xchg *x);

/* ---- The modes ------------------------------------------------------------ */

/* What every mode of one configuration shares: the arrays, the regions' MPI
 * types, their normalized types and engine types, the packing buffers. */
typedef struct {
    const mg_xchg *x;
    unsigned char *sbuf, *rbuf, *pk, *pk2;
    MPI_Datatype st[MG_XCHG_MAX_PEERS], rt[MG_XCHG_MAX_PEERS]; /* subarray types */
    MPI_Datatype sn[MG_XCHG_MAX_PEERS], rn[MG_XCHG_MAX_PEERS]; /* normalized; MPI_DATATYPE_NULL if not made */
    mg_dt *sdt[MG_XCHG_MAX_PEERS], *rdt[MG_XCHG_MAX_PEERS];    /* engine; NULL if not made */
    int packed;                                                /* MPI_Pack's bytes per region (= region_bytes) */
    int ones[MG_XCHG_MAX_PEERS], zeros[MG_XCHG_MAX_PEERS];
    int counts[MG_XCHG_MAX_PEERS], displs[MG_XCHG_MAX_PEERS]; /* of one region's bytes per peer */
    MPI_Aint wdispls[MG_XCHG_MAX_PEERS];                      /* zeros, for the neighbourhood w call */
} mg_xchg_data;

/* One mode ready to run: the op of mg_bench (ctx = this struct). */
typedef struct {
    mg_xchg_data *d;
    int mode;
    MPI_Request req; /* persistent: the request of the _init call */
    int (*op)(void *ctx);
} mg_xchg_side;

/* Buffers and subarray types of x (every mode needs them): 0, or -1 with the
 * reason (out of memory aborts). */
int mg_xchg_data_init(const mg_xchg *x, mg_xchg_data *d, char *err, size_t errlen);
/* The engine's types (engine mode) and the normalized types in `form`
 * (normalized mode): 0, or -1 with the reason in err. The normal form of the
 * first send type goes into normal (len bytes). */
int mg_xchg_engine_init(mg_xchg_data *d, int want_engine, int want_normalized, int form, char *normal,
                        size_t len, char *err, size_t errlen);
/* MPI_Pack's size of a region, the same on every rank (pack mode): 0, or -1
 * with the reason. Collective over x->comm. */
int mg_xchg_pack_init(mg_xchg_data *d, char *err, size_t errlen);
void mg_xchg_data_free(mg_xchg_data *d);

/* Whether this build can run the mode at all (persistent: MPI-4). */
int mg_xchg_mode_built(int mode);
/* The side of a mode: for persistent, the _init call (collective; *init_s is
 * its time on this rank). MPI_SUCCESS or the call's error. */
int mg_xchg_side_init(mg_xchg_data *d, int mode, mg_xchg_side *s, double *init_s);
void mg_xchg_side_free(mg_xchg_side *s);

#endif
