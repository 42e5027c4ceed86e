/* The calls mg_collbench measures (collcalls.c): the nine regular collectives
 * of libmpiguide-tune, natively (PMPI_) or through the library (MPI_), and two
 * neighbourhood collectives of the driver's own; each in its blocking form and,
 * with --forms, in its nonblocking form (MPI_IX + MPI_Wait) and its persistent
 * form (MPI-4: MPI_X_init once, MPI_Start + MPI_Wait per call); the
 * neighbourhood collectives also as the point-to-point exchange they stand for
 * (MPI_Irecv + MPI_Isend + MPI_Waitall). What each call must leave in every
 * receive buffer is computed here from every rank's send buffer, by MPI's
 * definition of the call. */
#ifndef MG_BENCH_COLLCALLS_H
#define MG_BENCH_COLLCALLS_H

#include <mpi.h>
#include <stddef.h>

typedef enum {
    C_ALLGATHER,
    C_ALLREDUCE,
    C_ALLTOALL,
    C_BCAST,
    C_GATHER,
    C_REDUCE,
    C_RSB,
    C_SCAN,
    C_SCATTER,
    C_NBR_CART,    /* MPI_Neighbor_allgather on a periodic 2D Cartesian communicator */
    C_NBR_COMPLETE /* MPI_Neighbor_allgather on a distributed graph: every other process */
} call_kind;

/* The neighbourhood collectives of the driver (the library has none): name, MPI name, topology. */
typedef struct {
    const char *name, *mpi_name, *topology;
    call_kind kind;
} mg_coll_neighborhood;
extern const mg_coll_neighborhood mg_coll_neighborhoods[];
extern const int mg_coll_nneighborhoods;

/* The forms of a call besides its blocking one, with the guideline each is checked by. */
typedef enum { MG_FORM_BLOCKING, MG_FORM_NONBLOCKING, MG_FORM_PERSISTENT, MG_FORM_P2P, MG_NFORMS } mg_coll_form;
typedef struct {
    const char *name;      /* the implementation label: "nonblocking", ... */
    const char *guideline; /* COLL-NB, COLL-PERS, COLL-NBR */
} mg_coll_form_info;
extern const mg_coll_form_info mg_coll_forms[MG_NFORMS];

#define MG_COLL_MAX_NBR 64 /* neighbours of a neighbourhood collective (the complete graph: p - 1) */

typedef struct {
    const char *name; /* collective */
    int kind, root, rank, size, native;
    int count; /* elements per block (RSB: per process) */
    MPI_Datatype type;
    MPI_Op op;
    MPI_Comm comm;
    unsigned char *sbuf, *rbuf;
    /* neighbourhood collectives: the topology's communicator, and its neighbours (sources = destinations,
     * in the order of the neighbourhood collectives; with duplicates on the periodic grid) */
    MPI_Comm topo;
    int nnbr, nbr[MG_COLL_MAX_NBR], tag[MG_COLL_MAX_NBR]; /* tag: which of the neighbour's blocks I am */
} call_ctx;

/* The kind of a collective: the library's nine by name, the neighbourhood ones; -1 for none. */
int mg_coll_kind_of(const char *name);
int mg_coll_is_neighborhood(int kind);
/* The neighbourhood's communicator and neighbours of c (collective over c->comm; a no-op for the others):
 * MPI_SUCCESS or the error. */
int mg_coll_topology(call_ctx *c);
void mg_coll_topology_free(call_ctx *c);

/* The blocking call (mg_bench_op: ctx is a call_ctx): PMPI_ if c->native, else MPI_ (through the library). */
int mg_coll_call(void *ctx);
/* The nonblocking form, MPI_IX + MPI_Wait; the point-to-point exchange of a neighbourhood collective. */
int mg_coll_nonblocking(call_ctx *c);
int mg_coll_p2p(call_ctx *c);
/* Whether this build has MPI-4's persistent collectives (not SimGrid SMPI 3.32). */
int mg_coll_persistent_built(void);
/* The persistent form's MPI_X_init on c's buffers and count (MPI_ERR_UNSUPPORTED_OPERATION without it). */
int mg_coll_persistent_init(call_ctx *c, MPI_Request *req);
/* "MPI_Iallgather + MPI_Wait", "MPI_Allgather_init + MPI_Start + MPI_Wait", ... into buf. */
const char *mg_coll_form_formula(const call_ctx *c, int form, char *buf, size_t len);
const char *mg_coll_mpi_name(const char *name, char *buf, size_t len);

/* Bytes of the send and receive buffers one call of `block` bytes per block touches, and the message size
 * the library keys profiles by (docs/tuning.md). */
void mg_coll_buffer_sizes(const call_ctx *c, size_t block, size_t *s, size_t *r);
size_t mg_coll_key_bytes(int kind, size_t block, int p);

/* The send buffer of rank (rank-dependent bytes; for reductions on int or double small values, so that sums
 * stay exact in any order) and the receive buffer's guard bytes. */
void mg_coll_send_image(int rank, MPI_Datatype type, unsigned char *buf, size_t sbytes, size_t tsize);
void mg_coll_fill(call_ctx *c, size_t sbytes, size_t rbytes, size_t tsize);
/* What MPI's definition of the call leaves in this rank's receive buffer (rbytes into ref; *len the
 * significant bytes, 0 for nothing to compare); scratch holds sbytes. */
void mg_coll_reference(const call_ctx *c, size_t sbytes, size_t rbytes, size_t tsize, unsigned char *ref,
                       unsigned char *scratch, size_t *len);

#endif
