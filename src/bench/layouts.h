/* Catalog of the datatype layouts of Carpen-Amarie et al. (2016, "MPI Derived
 * Datatypes: Performance Expectations and Status Quo").
 *
 * A layout is named by a short text spec, e.g. `tiled A=2`, `alternating A=10
 * variant=2 type=double` or `contiguous-subtype sub=block A=10` (docs/layouts.md).
 * The flow for a driver is
 *
 *   mg_layout_parse(spec)   -> mg_layout_params   (syntax only)
 *   mg_layout_check(p, n)   -> mg_layout_info     (defaults, rules, sizes; no MPI)
 *   mg_layout_build(p, n)   -> mg_layout_type     (committed MPI type + count)
 *   mg_layout_type_free()
 *
 * n is always the number of basic elements communicated. Static layouts give a
 * type of k elements used with count n/k; dynamic layouts give one type holding
 * all n elements, used with count 1. mg_layout_offsets() says where every
 * element lives, computed from the layout's definition alone, so that tests and
 * drivers can fill and check buffers without trusting the MPI description.
 *
 * Every function that can fail returns an MG_LAYOUT_* code and, when `err` is
 * not NULL, writes a one-line message naming the broken rule into err[errlen].
 * Nothing here prints, exits or keeps global mutable state.
 */
#ifndef MG_LAYOUTS_H
#define MG_LAYOUTS_H

#include <mpi.h>
#include <stddef.h>

enum {
    MG_LAYOUT_OK = 0,
    MG_LAYOUT_EARG = 1,     /* bad argument: NULL pointer, bad index, output buffer too small */
    MG_LAYOUT_ESPEC = 2,    /* the spec text does not parse */
    MG_LAYOUT_EINVALID = 3, /* the parameters break a rule of the layout */
    MG_LAYOUT_EMPI = 4,     /* an MPI call failed */
    MG_LAYOUT_ENOMEM = 5
};

/* Order matches the catalog table (and the drivers' --list). */
typedef enum {
    MG_LAYOUT_CONTIGUOUS,
    MG_LAYOUT_TILED,
    MG_LAYOUT_BLOCK,
    MG_LAYOUT_BUCKET,
    MG_LAYOUT_ALTERNATING,
    MG_LAYOUT_TILED_HETEROGENEOUS,
    MG_LAYOUT_CONTIGUOUS_SUBTYPE,
    MG_LAYOUT_TILED_STRUCT,
    MG_LAYOUT_TILED_VECTOR,
    MG_LAYOUT_VECTOR_TILED,
    MG_LAYOUT_BLOCK_INDEXED,
    MG_LAYOUT_ALTERNATING_INDEXED,
    MG_LAYOUT_ALTERNATING_REPEATED,
    MG_LAYOUT_ALTERNATING_STRUCT,
    MG_LAYOUT_ROWCOL_FULLY_INDEXED,
    MG_LAYOUT_ROWCOL_CONTIGUOUS_AND_INDEXED,
    MG_LAYOUT_ROWCOL_STRUCT,
    MG_LAYOUT_NKINDS
} mg_layout_kind;

/* Spec parameters, in the order mg_layout_format() writes them. */
typedef enum {
    MG_LAYOUT_P_SUB,     /* contiguous-subtype: tiled|block|bucket|alternating */
    MG_LAYOUT_P_A,       /* unit blocksize */
    MG_LAYOUT_P_VARIANT, /* 1 or 2: Table 2 of the paper derives the rest from A */
    MG_LAYOUT_P_A1,
    MG_LAYOUT_P_A2,
    MG_LAYOUT_P_B,
    MG_LAYOUT_P_B1,
    MG_LAYOUT_P_B2,
    MG_LAYOUT_P_S,    /* vector-tiled: units per inner vector */
    MG_LAYOUT_P_S1,   /* tiled-struct: tiled units in the first struct member */
    MG_LAYOUT_P_S2,   /* tiled-struct: tiled units in the second struct member */
    MG_LAYOUT_P_TYPE, /* basic element type */
    MG_LAYOUT_NPARAMS
} mg_layout_param;

#define MG_LAYOUT_BIT(p) (1u << (unsigned)(p))

typedef enum {
    MG_LAYOUT_INT, /* default */
    MG_LAYOUT_CHAR,
    MG_LAYOUT_SHORT,
    MG_LAYOUT_DOUBLE,
    MG_LAYOUT_BYTE, /* the reference of tiled-heterogeneous */
    MG_LAYOUT_NBASIC
} mg_layout_basic;

/* Default S of vector-tiled: the paper does not state it (docs/layouts.md). */
#define MG_LAYOUT_DEFAULT_S 5

/* One catalog entry, for listings and drivers. */
typedef struct {
    const char *name;         /* spec name, e.g. "tiled" */
    const char *title;        /* the paper's name, e.g. "Tiled (AB)" */
    const char *summary;      /* one line on the geometry */
    const char *constructors; /* the MPI calls, outermost first */
    const char *tests;        /* expectation tests of Carpen-Amarie et al. (2016) that use it */
    unsigned params;          /* parameters it takes (MG_LAYOUT_BIT mask) */
    int dynamic;              /* 1: one type for all n elements, count 1 */
} mg_layout_desc;

/* A parameter set as written in a spec. value[] is meaningful only where the
 * `given` bit is set; P_SUB holds an mg_layout_kind, P_TYPE an mg_layout_basic. */
typedef struct {
    mg_layout_kind kind;
    unsigned given;
    long value[MG_LAYOUT_NPARAMS];
} mg_layout_params;

/* Everything a driver needs to know about a layout for n elements. */
typedef struct {
    mg_layout_params params; /* effective: defaults filled in and marked given */
    const mg_layout_desc *desc;
    long n;               /* elements; 0 when checked without n */
    long k;               /* elements per type: block size (static) or n (dynamic) */
    long n_unit;          /* n must be a multiple of this ... */
    long n_min;           /* ... and at least this */
    int count;            /* count to use with the type: n/k or 1 */
    MPI_Datatype basic;   /* element type; MPI_DATATYPE_NULL for mixed elements */
    int elem_size;        /* bytes per element; 0 when the element types are mixed */
    MPI_Aint data_size;   /* bytes communicated: MPI_Type_size(type) * count */
    MPI_Aint type_extent; /* extent of the type (its lb is 0) */
    MPI_Aint extent;      /* extent of count x type = count * type_extent */
    MPI_Aint true_lb;     /* of count x type: where the first data byte is */
    MPI_Aint true_extent; /* of count x type: span of the data bytes */
    MPI_Aint buffer_size; /* bytes a buffer needs to hold the data: true_lb + true_extent */
} mg_layout_info;

typedef struct {
    MPI_Datatype type; /* committed; a predefined type for contiguous layouts */
    int count;
    int owned; /* 1 if mg_layout_type_free() has to free `type` */
    mg_layout_info info;
} mg_layout_type;

/* Catalog. */
int mg_layouts_count(void);
const mg_layout_desc *mg_layouts_get(int kind);              /* NULL if out of range */
int mg_layouts_find(const char *name, mg_layout_kind *kind); /* case-insensitive */
const char *mg_layout_param_name(mg_layout_param p);         /* "A", "variant", ... */
const char *mg_layout_basic_name(mg_layout_basic b);         /* "int", ... */
/* 1 if the layout may be the sub of contiguous-subtype (tiled, block, bucket, alternating). */
int mg_layout_is_sub(mg_layout_kind kind);
/* The geometry: the memory layout that every description of one basic layout
 * produces (for contiguous-subtype: its sub's): "contiguous", "tiled",
 * "block", "bucket", "alternating", "alternating-b2a2" (Alternating with
 * B2 = A2), "rowcol" or "heterogeneous". NULL for a bad kind or a
 * contiguous-subtype without a valid sub. */
const char *mg_layout_geometry(const mg_layout_params *p);
/* "tiled A=<int> [variant=1|2] [B=<int>] [type=int|char|short|double|byte]" */
int mg_layout_synopsis(mg_layout_kind kind, char *buf, size_t len);
/* One line per layout: name, static/dynamic, synopsis, summary. */
int mg_layouts_list(char *buf, size_t len);

/* Parameter sets. */
void mg_layout_params_init(mg_layout_params *p, mg_layout_kind kind);
int mg_layout_params_set(mg_layout_params *p, mg_layout_param id, long value, char *err, size_t errlen);
int mg_layout_parse(const char *spec, mg_layout_params *p, char *err, size_t errlen);
/* Writes the spec of the given parameters; parse(format(p)) gives p back.
 * MG_LAYOUT_EARG if buf is too small (buf then holds a truncated string). */
int mg_layout_format(const mg_layout_params *p, char *buf, size_t len);

/* Applies defaults and every rule; n = 0 checks only the n-independent rules. */
int mg_layout_check(const mg_layout_params *p, long n, mg_layout_info *info, char *err, size_t errlen);
/* n for a data size in bytes (datasize m of the paper). */
int mg_layout_n_for_bytes(const mg_layout_params *p, MPI_Aint bytes, long *n, char *err, size_t errlen);

/* Byte offset (from the buffer start) of element e, 0 <= e <= n, in
 * serialization order; e = n gives where a next block would begin. */
MPI_Aint mg_layout_offset(const mg_layout_info *info, long e, int *size);
/* offsets[0..n-1] (and sizes[0..n-1] if not NULL) for info->n elements. */
int mg_layout_offsets(const mg_layout_info *info, MPI_Aint *offsets, int *sizes);

/* The committed type and count of the layout for n elements. */
int mg_layout_build(const mg_layout_params *p, long n, mg_layout_type *t, char *err, size_t errlen);
/* The paper's Contiguous baseline of the same data size: the basic type with
 * count n, or MPI_BYTE with count data_size for tiled-heterogeneous. */
int mg_layout_reference(const mg_layout_params *p, long n, mg_layout_type *t, char *err, size_t errlen);
void mg_layout_type_free(mg_layout_type *t);

#endif
