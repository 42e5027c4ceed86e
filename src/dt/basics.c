/* The predefined types of the notation (docs/dt-notation.md): one table that
 * mg_dt_describe prints from and mg_dt_parse reads, so that every name the
 * engine writes parses back to the same handle.
 *
 * A name is the MPI name without the "MPI_" prefix, in lower case. Where two
 * names are one handle (MPI_LONG_LONG and MPI_LONG_LONG_INT, MPI_C_COMPLEX and
 * MPI_C_FLOAT_COMPLEX in MPICH and Open MPI), both parse and describe prints
 * the first. Handles are taken at run time: in some MPI libraries they are not
 * constant expressions. Types an MPI library may lack (the Fortran types
 * without a matching compiler kind, the C++ types, MPICH's MPIX_ types) are
 * compiled in only where mpi.h defines them. */
#include "internal.h"
#include <string.h>

typedef int (*basic_fn)(const char *name, MPI_Datatype type, void *arg);

/* Calls fn for each entry in table order; returns the name of the first entry
 * for which fn returns non-zero, or NULL. */
static const char *each_basic(basic_fn fn, void *arg)
{
#define B(name, handle) \
    if (fn(name, handle, arg)) return name;
    /* C */
    B("char", MPI_CHAR)
    B("signed_char", MPI_SIGNED_CHAR)
    B("unsigned_char", MPI_UNSIGNED_CHAR)
    B("byte", MPI_BYTE)
    B("packed", MPI_PACKED)
    B("short", MPI_SHORT)
    B("unsigned_short", MPI_UNSIGNED_SHORT)
    B("int", MPI_INT)
    B("unsigned", MPI_UNSIGNED)
    B("long", MPI_LONG)
    B("unsigned_long", MPI_UNSIGNED_LONG)
    B("long_long", MPI_LONG_LONG)
    B("long_long_int", MPI_LONG_LONG_INT)
    B("unsigned_long_long", MPI_UNSIGNED_LONG_LONG)
    B("float", MPI_FLOAT)
    B("double", MPI_DOUBLE)
    B("long_double", MPI_LONG_DOUBLE)
    B("wchar", MPI_WCHAR)
    B("c_bool", MPI_C_BOOL)
    B("int8_t", MPI_INT8_T)
    B("int16_t", MPI_INT16_T)
    B("int32_t", MPI_INT32_T)
    B("int64_t", MPI_INT64_T)
    B("uint8_t", MPI_UINT8_T)
    B("uint16_t", MPI_UINT16_T)
    B("uint32_t", MPI_UINT32_T)
    B("uint64_t", MPI_UINT64_T)
    B("c_float_complex", MPI_C_FLOAT_COMPLEX)
    B("c_complex", MPI_C_COMPLEX)
    B("c_double_complex", MPI_C_DOUBLE_COMPLEX)
    B("c_long_double_complex", MPI_C_LONG_DOUBLE_COMPLEX)
    B("aint", MPI_AINT)
    B("offset", MPI_OFFSET)
    B("count", MPI_COUNT)
    /* the pair types of MINLOC/MAXLOC */
    B("float_int", MPI_FLOAT_INT)
    B("double_int", MPI_DOUBLE_INT)
    B("long_int", MPI_LONG_INT)
    B("2int", MPI_2INT)
    B("short_int", MPI_SHORT_INT)
    B("long_double_int", MPI_LONG_DOUBLE_INT)
    /* C++ */
#ifdef MPI_CXX_BOOL
    B("cxx_bool", MPI_CXX_BOOL)
#endif
#ifdef MPI_CXX_FLOAT_COMPLEX
    B("cxx_float_complex", MPI_CXX_FLOAT_COMPLEX)
#endif
#ifdef MPI_CXX_COMPLEX
    B("cxx_complex", MPI_CXX_COMPLEX)
#endif
#ifdef MPI_CXX_DOUBLE_COMPLEX
    B("cxx_double_complex", MPI_CXX_DOUBLE_COMPLEX)
#endif
#ifdef MPI_CXX_LONG_DOUBLE_COMPLEX
    B("cxx_long_double_complex", MPI_CXX_LONG_DOUBLE_COMPLEX)
#endif
    /* Fortran */
#ifdef MPI_CHARACTER
    B("character", MPI_CHARACTER)
#endif
#ifdef MPI_LOGICAL
    B("logical", MPI_LOGICAL)
#endif
#ifdef MPI_INTEGER
    B("integer", MPI_INTEGER)
#endif
#ifdef MPI_REAL
    B("real", MPI_REAL)
#endif
#ifdef MPI_DOUBLE_PRECISION
    B("double_precision", MPI_DOUBLE_PRECISION)
#endif
#ifdef MPI_COMPLEX
    B("complex", MPI_COMPLEX)
#endif
#ifdef MPI_DOUBLE_COMPLEX
    B("double_complex", MPI_DOUBLE_COMPLEX)
#endif
#ifdef MPI_LOGICAL1
    B("logical1", MPI_LOGICAL1)
#endif
#ifdef MPI_LOGICAL2
    B("logical2", MPI_LOGICAL2)
#endif
#ifdef MPI_LOGICAL4
    B("logical4", MPI_LOGICAL4)
#endif
#ifdef MPI_LOGICAL8
    B("logical8", MPI_LOGICAL8)
#endif
#ifdef MPI_LOGICAL16
    B("logical16", MPI_LOGICAL16)
#endif
#ifdef MPI_INTEGER1
    B("integer1", MPI_INTEGER1)
#endif
#ifdef MPI_INTEGER2
    B("integer2", MPI_INTEGER2)
#endif
#ifdef MPI_INTEGER4
    B("integer4", MPI_INTEGER4)
#endif
#ifdef MPI_INTEGER8
    B("integer8", MPI_INTEGER8)
#endif
#ifdef MPI_INTEGER16
    B("integer16", MPI_INTEGER16)
#endif
#ifdef MPI_REAL2
    B("real2", MPI_REAL2)
#endif
#ifdef MPI_REAL4
    B("real4", MPI_REAL4)
#endif
#ifdef MPI_REAL8
    B("real8", MPI_REAL8)
#endif
#ifdef MPI_REAL16
    B("real16", MPI_REAL16)
#endif
#ifdef MPI_COMPLEX4
    B("complex4", MPI_COMPLEX4)
#endif
#ifdef MPI_COMPLEX8
    B("complex8", MPI_COMPLEX8)
#endif
#ifdef MPI_COMPLEX16
    B("complex16", MPI_COMPLEX16)
#endif
#ifdef MPI_COMPLEX32
    B("complex32", MPI_COMPLEX32)
#endif
#ifdef MPI_2REAL
    B("2real", MPI_2REAL)
#endif
#ifdef MPI_2DOUBLE_PRECISION
    B("2double_precision", MPI_2DOUBLE_PRECISION)
#endif
#ifdef MPI_2INTEGER
    B("2integer", MPI_2INTEGER)
#endif
#ifdef MPI_2COMPLEX
    B("2complex", MPI_2COMPLEX)
#endif
#ifdef MPI_2DOUBLE_COMPLEX
    B("2double_complex", MPI_2DOUBLE_COMPLEX)
#endif
    /* MPICH's extensions */
#ifdef MPIX_C_FLOAT16
    B("mpix_c_float16", MPIX_C_FLOAT16)
#endif
#ifdef MPIX_BFLOAT16
    B("mpix_bfloat16", MPIX_BFLOAT16)
#endif
#undef B
    return NULL;
}

typedef struct {
    const char *s;
    size_t n;
    MPI_Datatype found;
} by_name;

static int name_matches(const char *name, MPI_Datatype type, void *arg)
{
    by_name *q = arg;
    if (strlen(name) != q->n || memcmp(name, q->s, q->n) != 0) return 0;
    q->found = type;
    return 1;
}

int mg__basic_lookup(const char *s, size_t n, MPI_Datatype *out)
{
    by_name q = {s, n, MPI_DATATYPE_NULL};
    /* A handle an MPI library defines as null stands for a type it lacks. */
    if (!each_basic(name_matches, &q) || q.found == MPI_DATATYPE_NULL) return 0;
    *out = q.found;
    return 1;
}

int mg__basic_named(const char *s, size_t n)
{
    by_name q = {s, n, MPI_DATATYPE_NULL};
    return each_basic(name_matches, &q) != NULL;
}

static int handle_matches(const char *name, MPI_Datatype type, void *arg)
{
    (void)name;
    return type == *(const MPI_Datatype *)arg;
}

const char *mg__basic_name(MPI_Datatype t) { return t == MPI_DATATYPE_NULL ? NULL : each_basic(handle_matches, &t); }
