/* Private to mg_dt_parse: the grammar (parse.c) hands each constructor term,
 * its keyword values and old type to the checks and the constructor calls
 * (parse_build.c). */
#ifndef MG_DT_PARSE_H
#define MG_DT_PARSE_H

#include "internal.h"
#include <stddef.h>
#include <stdint.h>

/* Sizes and spans beyond this many bytes are rejected. */
#define MG_PARSE_MAX_BYTES 4611686018427387904.0 /* 2^62 */

enum kind {
    K_INT,      /* one integer, MPI int (MPI_Count in the `_c` constructor if `large`) */
    K_AINT,     /* one integer, MPI_Aint */
    K_INTS,     /* list of MPI int (MPI_Count if `large`) */
    K_AINTS,    /* list of MPI_Aint */
    K_TYPES,    /* list of types */
    K_ORDER,    /* c | fortran */
    K_DISTRIBS, /* list of block | cyclic | none */
    K_DARGS,    /* list of MPI int (positive) or default */
    K_F90       /* MPI int or undefined (MPI_UNDEFINED) */
};

#define NOMIN INT64_MIN

typedef struct {
    const char *name;
    enum kind kind;
    int64_t min; /* smallest allowed value of the integer(s), NOMIN: any */
    int optional;
    int large; /* the MPI-4 `_c` constructor takes it as MPI_Count */
} kwspec;

/* clang-format off */
enum ctor_id {
    C_CONTIG, C_VECTOR, C_HVECTOR, C_INDEXED, C_HINDEXED, C_INDEXED_BLOCK,
    C_HINDEXED_BLOCK, C_STRUCT, C_RESIZED, C_SUBARRAY, C_DARRAY, C_DUP,
    C_F90_REAL, C_F90_COMPLEX, C_F90_INTEGER
};
/* clang-format on */

#define MAX_KW 7

typedef struct {
    const char *name;
    enum ctor_id id;
    int has_old; /* takes the old type as its last (positional) argument */
    int nkw;
    kwspec kw[MAX_KW];
} ctorspec;

typedef struct {
    const char *s;
    size_t pos;
    int depth;
    int err; /* MG_DT_SUCCESS until the first error */
    char *errbuf;
    size_t errlen;
} parser;

/* A keyword's value: a scalar, or a list of integers or types. */
typedef struct {
    int seen;
    size_t kpos; /* where the keyword starts */
    size_t vpos; /* where its value starts */
    int64_t v;   /* K_INT, K_AINT, K_ORDER, K_F90 */
    size_t n, cap;
    int64_t *items;
    size_t *at; /* position of each item */
    MPI_Datatype *types;
    unsigned char *owned; /* types[i] was created here and must be freed */
} kwval;

/* Record the first error: errbuf gets "at N: message". */
void mg__parse_fail(parser *p, int code, size_t at, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* An MPI return code: 0 if MPI_SUCCESS, else fail with MPI's message. */
int mg__parse_mpi_check(parser *p, int rc, size_t at, const char *fn);
/* The semantic checks of constructor c (its name at cpos), then the call:
 * *out is a new derived type, or for the f90_* terms a predefined one. */
int mg__parse_build(parser *p, const ctorspec *c, size_t cpos, kwval *kv, MPI_Datatype old, MPI_Datatype *out);

#endif
