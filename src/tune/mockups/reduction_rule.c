/* The rule of the reduction mock-ups (mockup_api.h): mg_reduction_supported
 * and mg_padding_allowed. Both depend only on the reduction's (datatype, op)
 * and the configuration, which MPI and the library keep the same on every
 * rank, so every rank refuses (and runs natively) together.
 *
 * A composition groups the operands differently from the native call. That
 * gives the same bits when the op is exact in any grouping on the data:
 *  - integer data: every predefined op and every user-defined op (MPI requires
 *    them to be associative); MPI_SUM and MPI_PROD only on the integer types
 *    valid for them, and under Open MPI only from 32 bits on (its vectorized
 *    8- and 16-bit sums and products saturate, so the order shows; the Open MPI
 *    bug is linked in docs/tuning.md);
 *  - floating-point or complex data, whatever the op: sums and products round
 *    by the grouping, a user-defined op does whatever it does with them, and
 *    even MIN and MAX tell +0 from -0 and pass NaNs on by the order of the
 *    operands. Such calls run natively unless the configuration allows
 *    regrouping (allow_regrouping, off by default). Long double is among them:
 *    on x86-64 6 of its 16 bytes are padding, which MPI leaves unspecified
 *    (two native calls may fill them differently): only its value counts.
 * A type this file does not know runs natively. */
#define _POSIX_C_SOURCE 200809L
#include "mockup_api.h"
#include <stdlib.h>

/* What the base types of a datatype hold (bits, OR-ed over every base type). */
enum {
    HAS_FLOAT = 1,  /* floating point or complex */
    HAS_NO_SUM = 2, /* neither floating point nor an integer type whose MPI_SUM/MPI_PROD is exact in any order */
    HAS_UNKNOWN = 4 /* a type this file does not know */
};

static int is_one_of(MPI_Datatype t, const MPI_Datatype *list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (t == list[i] && t != MPI_DATATYPE_NULL) return 1;
    return 0;
}

/* Integer types valid for MPI_SUM and MPI_PROD, wrap-around: exact in any order. */
static int integer_sum_type(MPI_Datatype t)
{
    const MPI_Datatype integers[] = {
        MPI_INT,
        MPI_UNSIGNED,
        MPI_LONG,
        MPI_UNSIGNED_LONG,
        MPI_LONG_LONG_INT,
        MPI_LONG_LONG,
        MPI_UNSIGNED_LONG_LONG,
        MPI_SHORT,
        MPI_UNSIGNED_SHORT,
        MPI_SIGNED_CHAR,
        MPI_UNSIGNED_CHAR,
        MPI_INT8_T,
        MPI_INT16_T,
        MPI_INT32_T,
        MPI_INT64_T,
        MPI_UINT8_T,
        MPI_UINT16_T,
        MPI_UINT32_T,
        MPI_UINT64_T,
        MPI_AINT,
        MPI_OFFSET,
        MPI_COUNT,
        MPI_INTEGER,
#ifdef MPI_INTEGER1
        MPI_INTEGER1,
#endif
#ifdef MPI_INTEGER2
        MPI_INTEGER2,
#endif
#ifdef MPI_INTEGER4
        MPI_INTEGER4,
#endif
#ifdef MPI_INTEGER8
        MPI_INTEGER8,
#endif
#ifdef MPI_INTEGER16
        MPI_INTEGER16,
#endif
    };
    return is_one_of(t, integers, sizeof integers / sizeof integers[0]);
}

/* Types without floating-point data that are not for MPI_SUM/MPI_PROD (characters,
 * bytes, logicals, pairs of integers). */
static int other_exact_type(MPI_Datatype t)
{
    const MPI_Datatype others[] = {MPI_CHAR,      MPI_WCHAR, MPI_BYTE,      MPI_PACKED,   MPI_C_BOOL,  MPI_LOGICAL,
                                   MPI_CHARACTER, MPI_2INT,  MPI_SHORT_INT, MPI_LONG_INT, MPI_2INTEGER};
    return is_one_of(t, others, sizeof others / sizeof others[0]);
}

/* Floating-point and complex types, and the pairs holding one. */
static int float_type(MPI_Datatype t)
{
    const MPI_Datatype floats[] = {
        MPI_FLOAT,
        MPI_DOUBLE,
        MPI_LONG_DOUBLE,
        MPI_C_FLOAT_COMPLEX,
        MPI_C_DOUBLE_COMPLEX,
        MPI_C_LONG_DOUBLE_COMPLEX,
        MPI_FLOAT_INT,
        MPI_DOUBLE_INT,
        MPI_LONG_DOUBLE_INT,
        MPI_REAL,
        MPI_DOUBLE_PRECISION,
        MPI_COMPLEX,
        MPI_DOUBLE_COMPLEX,
        MPI_2REAL,
        MPI_2DOUBLE_PRECISION,
#ifdef MPI_REAL4
        MPI_REAL4,
#endif
#ifdef MPI_REAL8
        MPI_REAL8,
#endif
#ifdef MPI_REAL16
        MPI_REAL16,
#endif
#ifdef MPI_COMPLEX8
        MPI_COMPLEX8,
#endif
#ifdef MPI_COMPLEX16
        MPI_COMPLEX16,
#endif
#ifdef MPI_COMPLEX32
        MPI_COMPLEX32,
#endif
#ifdef MPI_C_COMPLEX
        MPI_C_COMPLEX,
#endif
    };
    return is_one_of(t, floats, sizeof floats / sizeof floats[0]);
}

static int named_traits(MPI_Datatype t)
{
    if (integer_sum_type(t)) {
#ifdef OMPI_MAJOR_VERSION
        int size = 0;
        if (PMPI_Type_size(t, &size) != MPI_SUCCESS || size < 4) return HAS_NO_SUM;
#endif
        return 0;
    }
    if (other_exact_type(t)) return HAS_NO_SUM;
    if (float_type(t)) return HAS_FLOAT;
    return HAS_UNKNOWN;
}

static int get_envelope(MPI_Datatype t, MPI_Count *ni, MPI_Count *na, MPI_Count *nc, MPI_Count *nd, int *comb)
{
#ifdef MG_HAVE_MPI_LARGE_COUNT
    return PMPI_Type_get_envelope_c(t, ni, na, nc, nd, comb);
#else
    int i, a, d;
    int rc = PMPI_Type_get_envelope(t, &i, &a, &d, comb);
    *ni = i, *na = a, *nc = 0, *nd = d;
    return rc;
#endif
}

/* The inner types of a derived type (nd of them, each to be freed unless named); 0 on success. */
static int inner_types(MPI_Datatype t, MPI_Count ni, MPI_Count na, MPI_Count nc, MPI_Count nd, MPI_Datatype *types)
{
    int *ints = malloc(((size_t)ni + 1) * sizeof *ints);
    MPI_Aint *aints = malloc(((size_t)na + 1) * sizeof *aints);
    MPI_Count *counts = malloc(((size_t)nc + 1) * sizeof *counts);
    int rc = ints && aints && counts ? MPI_SUCCESS : MPI_ERR_NO_MEM;
#ifdef MG_HAVE_MPI_LARGE_COUNT
    if (rc == MPI_SUCCESS) rc = PMPI_Type_get_contents_c(t, ni, na, nc, nd, ints, aints, counts, types);
#else
    (void)nc;
    if (rc == MPI_SUCCESS) rc = PMPI_Type_get_contents(t, (int)ni, (int)na, (int)nd, ints, aints, types);
#endif
    free(ints);
    free(aints);
    free(counts);
    return rc;
}

/* The traits of every base type of t, through any constructor (unknown: all bits). */
static int type_traits(MPI_Datatype t, int depth)
{
    const int unknown = HAS_UNKNOWN;
    MPI_Count ni, na, nc, nd;
    int comb = MPI_COMBINER_NAMED;
    if (get_envelope(t, &ni, &na, &nc, &nd, &comb) != MPI_SUCCESS) return unknown;
    if (comb == MPI_COMBINER_NAMED) return named_traits(t);
    if (comb == MPI_COMBINER_F90_REAL || comb == MPI_COMBINER_F90_COMPLEX) return HAS_FLOAT;
    if (comb == MPI_COMBINER_F90_INTEGER) {
#ifdef OMPI_MAJOR_VERSION
        int size = 0;
        if (PMPI_Type_size(t, &size) != MPI_SUCCESS || size < 4) return HAS_NO_SUM;
#endif
        return 0;
    }
    /* a combiner without an inner type that is not one of the above, too deep */
    if (nd < 1 || depth > 16) return unknown;
    MPI_Datatype *types = malloc((size_t)nd * sizeof *types);
    if (!types || inner_types(t, ni, na, nc, nd, types) != MPI_SUCCESS) {
        free(types);
        return unknown;
    }
    int traits = 0;
    for (MPI_Count i = 0; i < nd; i++) {
        traits |= type_traits(types[i], depth + 1);
        if (!mg_type_predefined(types[i])) PMPI_Type_free(&types[i]);
    }
    free(types);
    return traits;
}

/* The layout part of the rule: a datatype without gaps and with true lower
 * bound 0 (predefined, contiguous, ...), or a predefined one with gaps
 * (MPI_DOUBLE_INT, ...) under a commutative op. Both MPICH 5.0 and Open MPI
 * 5.0 mishandle other derived datatypes in some of the reductions the
 * mock-ups call instead of the one the application called, so a mock-up could
 * break a call that works natively: MPICH's non-commutative Reduce_scatter and
 * Reduce_scatter_block (power-of-two p) step through their buffers by the true
 * extent instead of the extent, read the wrong elements of a type with gaps
 * and overrun their temporaries; Open MPI's ring Allreduce writes past its
 * buffer for a true lower bound > 0. */
static int layout_ok(MPI_Datatype t, int commutative)
{
    MPI_Aint lb, extent, true_lb, true_extent;
    MPI_Count size = mg_type_bytes(1, t);
    if (PMPI_Type_get_extent(t, &lb, &extent) != MPI_SUCCESS ||
        PMPI_Type_get_true_extent(t, &true_lb, &true_extent) != MPI_SUCCESS || size <= 0)
        return 0;
    if (extent == size && true_extent == size && true_lb == 0) return 1;
    return mg_type_combiner(t) == MPI_COMBINER_NAMED && commutative;
}

int mg_reduction_supported(const mg_call *c)
{
    MPI_Datatype t = mg_red_type(c);
    if (t == MPI_DATATYPE_NULL || c->op == MPI_OP_NULL || !layout_ok(t, c->commutative)) return 0;
    int traits = type_traits(t, 0);
    if (traits & HAS_UNKNOWN) return 0;
    if ((traits & HAS_FLOAT) && !c->regroup) return 0;
    return !((c->op == MPI_SUM || c->op == MPI_PROD) && (traits & HAS_NO_SUM));
}

int mg_padding_allowed(const mg_call *c)
{
    const MPI_Op predefined[] = {MPI_MAX, MPI_MIN,  MPI_SUM,  MPI_PROD,   MPI_LAND,   MPI_BAND,    MPI_LOR,
                                 MPI_BOR, MPI_LXOR, MPI_BXOR, MPI_MINLOC, MPI_MAXLOC, MPI_REPLACE, MPI_NO_OP};
    for (size_t i = 0; i < sizeof predefined / sizeof predefined[0]; i++)
        if (c->op == predefined[i] && c->op != MPI_OP_NULL) return 1;
    return 0;
}
