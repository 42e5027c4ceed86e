/* dtgen: random MPI datatypes for the engine tests.
 *
 * dtg_generate builds a random MPI datatype and, in parallel, its own tree
 * description (dtg_node). Every node carries what this file computes from the
 * MPI definitions of the constructors, never from MPI_Type_get_contents:
 * the typemap of one element as a list of basic components (byte offset,
 * length) in typemap order, the size, the true bounds of the data, and lb/ub
 * as the MPI standard defines them (typemap, lb/ub markers set by resized,
 * alignment epsilon). Each node is checked against MPI_Type_size_x,
 * MPI_Type_get_extent_x and MPI_Type_get_true_extent_x as it is built.
 *
 * MPI libraries do not all compute lb/ub as the standard's typemap definition
 * does (MPICH and Open MPI both derive a parent's bounds from its members'
 * lb/ub including their alignment padding; MPICH adds no alignment epsilon
 * outside struct and ignores resized members' markers in struct; Open MPI
 * rounds the extent after each block in turn; both make a zero-size type with
 * markers lb 0, extent 0 when it is repeated). Where the
 * library's lb/extent of a node differs from the standard's, the node records
 * a deviation (dtg_note) and from then on uses the library's values, so that
 * the data offsets of its parents stay those the library packs; the caller
 * reports deviations and may skip such types (strict mode).
 *
 * dtg_print writes a tree in the notation of docs/dt-notation.md.
 */
#ifndef DTGEN_H
#define DTGEN_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

enum dtg_kind {
    DTG_BASIC,
    DTG_CONTIG,
    DTG_VECTOR,
    DTG_HVECTOR,
    DTG_INDEXED,
    DTG_HINDEXED,
    DTG_INDEXED_BLOCK,
    DTG_HINDEXED_BLOCK,
    DTG_STRUCT,
    DTG_SUBARRAY,
    DTG_DARRAY,
    DTG_RESIZED,
    DTG_DUP,
    DTG_NKINDS
};

/* Limits that keep every type small enough for 10,000+ types under ASan. */
#define DTG_MAX_ELEM_BYTES (64 * 1024)   /* packed bytes of one element */
#define DTG_MAX_ELEM_COMPS (16 * 1024)   /* basic components of one element */
#define DTG_MAX_REPS       (64 * 1024)   /* replicas of children in one node */
#define DTG_MAX_ELEM_SPAN  (1024 * 1024) /* true extent of one element */
#define DTG_MAX_ABS_BOUND  (4L * 1024 * 1024)
#define DTG_MAX_NODES      48

typedef struct {
    uint64_t s;
} dtg_rng;

uint64_t dtg_next(dtg_rng *r);
void dtg_seed(dtg_rng *r, uint64_t seed, uint64_t stream);
/* Uniform integer in [lo, hi]. */
long dtg_range(dtg_rng *r, long lo, long hi);
/* True with the given probability in percent. */
int dtg_chance(dtg_rng *r, int percent);

/* One basic component of a typemap: `len` data bytes at byte `off`. */
typedef struct {
    MPI_Aint off, len;
    int ld; /* a long double: only its first DTG_LDBL_VALUE_BYTES bytes are value bytes */
} dtg_comp;

/* Bytes of a long double that hold its value (x87 extended: 10 of 16). */
#include <float.h>
#if LDBL_MANT_DIG == 64
#define DTG_LDBL_VALUE_BYTES 10
#else
#define DTG_LDBL_VALUE_BYTES ((int)sizeof(long double))
#endif

/* Predefined types the generator uses. Pair types are split into their two
 * components, with offsets from offsetof on the equivalent C struct. */
typedef struct {
    const char *name; /* in the notation */
    MPI_Datatype type;
    int ncomp;
    MPI_Aint off[2], len[2];
    int ld[2]; /* component is a long double */
    MPI_Aint extent;
    int align;
    int enabled; /* cleared when the stack's MPI_Pack disagrees (see dtg_probe_basics) */
} dtg_basic;

extern dtg_basic dtg_basics[];
extern int dtg_nbasics;
void dtg_init_basics(void);

typedef struct dtg_node {
    int kind;
    int basic; /* DTG_BASIC: index into dtg_basics */
    /* contig/vector/hvector count; indexed*, struct: number of blocks */
    int count;
    int block;        /* vector, hvector, indexed_block, hindexed_block */
    MPI_Aint stride;  /* vector: in extents of the child; hvector: bytes */
    int *blens;       /* indexed, hindexed, struct */
    MPI_Aint *displs; /* indexed*, struct: elements or bytes as the constructor takes them */
    struct dtg_node **kids;
    int nkids;
    /* subarray (sizes/subsizes/starts) and darray (sizes = gsizes) */
    int ndims, order; /* order: MPI_ORDER_C or MPI_ORDER_FORTRAN */
    int sizes[3], subsizes[3], starts[3];
    int psize, prank;
    int distribs[3], dargs[3], psizes[3];
    MPI_Aint rlb, rext; /* resized */

    MPI_Datatype mpi;
    /* Computed from the definitions. */
    MPI_Count size;
    int empty;               /* no data entries */
    int has_mk;              /* typemap holds lb/ub markers (from resized, subarray, darray) */
    int align;               /* largest alignment of the basic types of the data */
    MPI_Aint tlb, tub;       /* true bounds of the data (when !empty) */
    MPI_Aint std_lb, std_ub; /* lb/ub per the standard, given the children used */
    MPI_Aint lb, ub;         /* lb/ub used: std_*, or the library's if it deviates */
    MPI_Aint mpi_lb, mpi_ext;
    int deviates;      /* lb/extent of this node differs from the standard's */
    int true_deviates; /* true lb/extent differs */
    dtg_comp *map;     /* typemap of one element, basic components */
    size_t nmap;
} dtg_node;

/* A deviation of the library from the standard (lb/extent or true extent). */
typedef struct {
    char category[160];
    char example[512];
    long count;
} dtg_note;

typedef struct {
    dtg_rng rng;
    int max_depth;
    int nodes;
    /* statistics over all generated trees */
    long hist[DTG_NKINDS];
    long subarray_order[2]; /* C, Fortran */
    long darray_distrib[3]; /* block, cyclic, none (per dimension) */
    long darray_order[2];
    long pair_types, neg_extent, zero_count_ctor, large_count;
    /* deviations (filled during generation) */
    dtg_note notes[64];
    int nnotes;
    long deviating_nodes, true_deviating_nodes;
    /* Known bugs of the stack, avoided (set by the caller from tests/c/known_bugs.c): MPICH's MPI_Pack
     * dies with SIGFPE on a struct one of whose members is (a resized/dup of) a
     * vector, hvector, indexed_block or hindexed_block with blocklength 0 and
     * count > 0 over a derived type. Such structs are not generated. */
    int avoid_zero_block_member;
    /* Open MPI: a vector/hvector whose stride is -1 byte (count > 1) packs as
     * if contiguous and reads beyond the typemap (opal_datatype_add takes an
     * extent of -1 to mean "the old type's extent"). Not generated there. */
    int avoid_stride_minus1;
    /* Intel MPI 2021.18: MPI_Pack dies (SIGSEGV) on an indexed type of three
     * or more blocks of unequal lengths whose element has extent 0
     * (known_bugs.c: impi-indexed-zero-extent). Not generated there. */
    int avoid_indexed_zero_extent;
    long avoided, avoided_m1, avoided_ie;
    char avoided_example[512], avoided_m1_example[512], avoided_ie_example[512];
    /* Constructor calls the stack refuses although the standard allows them
     * (Open MPI: darray of a zero-size oldtype); rejected and noted. */
    long refused;
    char refused_example[512];
    char err[512]; /* first internal error (MPI constructor failed, size mismatch) */
    int errors;
} dtg_gen;

const char *dtg_kind_name(int kind);

/* Generate one random type (depth 0..4). Returns NULL only on an internal
 * error (g->err says what). The MPI type is not committed. */
dtg_node *dtg_generate(dtg_gen *g);
void dtg_free(dtg_node *n);
/* Whether the lb/extent of any node of the tree deviate from the standard's. */
int dtg_any_deviation(const dtg_node *n);

/* Notation of docs/dt-notation.md; the result is malloc'ed. */
char *dtg_print(const dtg_node *n);

/* Build a tree (and its MPI type, uncommitted) from the notation, for
 * replaying a reproducer on any stack. NULL on error (message in g->err). */
dtg_node *dtg_parse(dtg_gen *g, const char *text);

/* Pack nbytes of one basic type and compare with its components; clears
 * `enabled` (and prints a note) for any the stack packs differently. */
void dtg_probe_basics(int verbose);

#endif
