/* test_tune_exact: libmpiguide-tune never changes a result.
 *
 * Linked with the static tuning library, so MPI_Allgather & co. below are the
 * library's interceptors and PMPI_Allgather & co. are the native calls. For
 * every collective and every implementation (mg_tune_nimpls / _impl_name,
 * forced with mg_tune_force), each case runs the native call and the
 * intercepted call on identical inputs and compares, on every rank:
 *   - the return code (MPI_SUCCESS where the native call succeeds; a case
 *     whose native call fails is reported as a NOTE and skipped: no reference);
 *   - the whole output buffer byte for byte, including guard bytes before and
 *     after the data and in the gaps of non-contiguous types (output buffers
 *     start filled with a position-dependent guard pattern); where they
 *     differ, MPI's definition tells which is right where the test has one
 *     (MPI_Allgather), to name the library's bug; where the native call is a
 *     known bug of the library (tests/c/known_bugs.c), the definition is the
 *     reference and the native call is not made;
 *   - a recvbuf that is not significant (a non-root's in Gather/Reduce): every
 *     byte the native call leaves untouched must stay untouched (FAIL);
 *   - the tail of an in-place Reduce_scatter_block recvbuf, whose contents MPI
 *     leaves unspecified: a change where the native call changes nothing is a
 *     WARN (reported, not failing);
 *   - the send buffers, which no call may modify;
 *   - mg_tune_last_impl: the forced mock-up or "native" (fallback), the same on
 *     every rank; "native"/"default" only on size-1 and intercommunicators;
 *   - the floating-point rule (mg_reduction_supported): MPI_SUM and MPI_PROD on
 *     double and float must fall back to the native call under every reduction
 *     mock-up (a mock-up that runs there FAILs, even if its result happens to
 *     match), with inputs whose sum depends on the grouping (1e16, 1, -1e16
 *     mixes; random values over 60 binary orders of magnitude), and MPI_MAX on
 *     random doubles must run the forced mock-up (FAIL if it falls back on a
 *     communicator of size >= 2 with count > 0).
 * Counts per (collective, implementation) how often the mock-up really ran and
 * how often it fell back to the native call; a mock-up that never ran in the
 * whole matrix fails the test.
 *
 * Matrix (build_cases): MPI_COMM_WORLD (full for the mock-ups, medium for
 * "default"), an even/odd split and MPI_COMM_SELF (medium: counts 0 7 1001),
 * a duplicate (small); int, double, char, short_int, double_int, a vector and
 * a resized type with gaps, contiguous(3,int) x n against int x 3n (also
 * mixed across ranks), int x 2n against vector x n; counts 0 1 3 7 1001 and a
 * large one (20000 ints); MPI_IN_PLACE wherever
 * allowed; SUM MAX BOR PROD MINLOC (SUM, PROD and MAX also on double, SUM on
 * float; full and medium levels), a user commutative op on types with gaps
 * and a user non-commutative op (2x2 matrix product, rank order matters);
 * rooted collectives: the core types at every root, the rest at a rotating
 * root. Then the large-count _c entry points (if the stack has them), an
 * intercommunicator (Bcast, Allreduce, Allgather: native and exact), and two
 * threads on two communicators at once (MPI_THREAD_MULTIPLE).
 *
 * Output: rank 0 prints one line per failing case (collective, forced
 * implementation, communicator and size, root, datatypes, count, in-place,
 * op, the reporting rank's buffers, first differing byte with got/want), the
 * test goes on, and the exit code is non-zero at the end.
 * Environment: MG_TEST_VERBOSE=1 prints every case before it runs (to find a
 * hang or a crash), =2 also what ran; a process stuck for MG_TEST_HANG_S
 * seconds (default 30) prints its case (and goes on); MG_TEST_SKIP=name1,name2
 * leaves out mock-ups (to see the rest of the matrix while one of them
 * crashes; the test then fails).
 *
 * `test_tune_exact online`: the same checks in online mode, where the library
 * picks each call's implementation itself (src/tune/online.h). A smaller
 * matrix runs ONLINE_PASSES times over, so that every key explores its
 * candidates and settles; each call must equal the native one, and every rank
 * must run the same implementation at every call (agreed per call). A key's
 * first calls run natively (a fresh duplicate: each key called fewer times
 * than the warm-up, "default" everywhere); size-1 communicators and
 * intercommunicators never run a mock-up; every collective with mock-ups must
 * have run some of them, and the report must show the settled keys. */
#define _POSIX_C_SOURCE 200809L
#include <limits.h>
#include <math.h>
#include <mpi.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "known_bugs.h"
#include "mpiguide/tune.h"
#include "tune_internal.h"

#if defined(MG_HAVE_MPI_LARGE_COUNT) && defined(MPI_VERSION) && MPI_VERSION >= 4
#define MG_TEST_C 1
#else
#define MG_TEST_C 0
#endif

/* ---------------------------------------------------------------- collectives */

enum { C_ALLGATHER, C_ALLREDUCE, C_ALLTOALL, C_BCAST, C_GATHER, C_REDUCE, C_RSB, C_SCAN, C_SCATTER, NCOLL };

static const struct {
    const char *name;
    int rooted, reduction;
} colls[NCOLL] = {
    {"allgather", 0, 0},
    {"allreduce", 0, 1},
    {"alltoall", 0, 0},
    {"bcast", 1, 0},
    {"gather", 1, 0},
    {"reduce", 1, 1},
    {"reduce_scatter_block", 0, 1},
    {"scan", 0, 1},
    {"scatter", 1, 0},
};

#define MAXIMPL 16
static int nimpl[NCOLL];
static const char *impl_names[NCOLL][MAXIMPL];

/* ---------------------------------------------------------------- datatypes */

enum { K_INT, K_DOUBLE, K_CHAR, K_SHORT_INT, K_DOUBLE_INT, K_FLOAT, K_LDOUBLE, K_CDOUBLE };
/* predefined types first, then the derived ones (from T_VEC on, freed at the end) */
enum {
    T_INT,
    T_DOUBLE,
    T_CHAR,
    T_SHORT_INT,
    T_DOUBLE_INT,
    T_FLOAT,
    T_LDOUBLE,
    T_CDOUBLE,
    T_VEC,
    T_RES,
    T_C3,
    T_MAT,
    T_MATGAP,
    T_DMAT,
    NTYPES
};

typedef struct {
    const char *name;
    MPI_Datatype t;
    int kind;  /* base element kind (values are generated per base element) */
    int nbase; /* base elements per element of t */
    MPI_Aint lb, ext, true_lb, true_ext;
    int nint, ioff[4]; /* int-based types: offsets of the ints in one element (user ops) */
} tdesc;

static tdesc types[NTYPES];

struct si {
    short s;
    int i;
};
struct di {
    double d;
    int i;
};

static MPI_Datatype kind_type(int k)
{
    switch (k) {
    case K_INT: return MPI_INT;
    case K_DOUBLE: return MPI_DOUBLE;
    case K_CHAR: return MPI_CHAR;
    case K_SHORT_INT: return MPI_SHORT_INT;
    case K_FLOAT: return MPI_FLOAT;
    case K_LDOUBLE: return MPI_LONG_DOUBLE;
    case K_CDOUBLE: return MPI_C_DOUBLE_COMPLEX;
    default: return MPI_DOUBLE_INT;
    }
}
static size_t kind_size(int k)
{
    switch (k) {
    case K_INT: return sizeof(int);
    case K_DOUBLE: return sizeof(double);
    case K_CHAR: return 1;
    case K_SHORT_INT: return sizeof(struct si);
    case K_FLOAT: return sizeof(float);
    case K_LDOUBLE: return sizeof(long double);
    case K_CDOUBLE: return 2 * sizeof(double);
    default: return sizeof(struct di);
    }
}

static void set_type(int i, const char *name, MPI_Datatype t, int kind, int nbase, int nint, const int *ioff)
{
    tdesc *d = &types[i];
    d->name = name;
    d->t = t;
    d->kind = kind;
    d->nbase = nbase;
    MPI_Type_get_extent(t, &d->lb, &d->ext);
    MPI_Type_get_true_extent(t, &d->true_lb, &d->true_ext);
    d->nint = nint;
    for (int k = 0; k < nint; k++) d->ioff[k] = ioff[k];
}

static void make_types(void)
{
    static const int o0[] = {0}, o012[] = {0, 12}, o4[] = {0, 4, 8, 12};
    MPI_Datatype vec, res, c3, mat, matgap;
    MPI_Type_vector(2, 1, 3, MPI_INT, &vec); /* ints at 0 and 12, extent 16: 8 gap bytes inside */
    MPI_Type_commit(&vec);
    MPI_Type_create_resized(MPI_INT, 0, 12, &res); /* lb 0, extent 12, size 4 */
    MPI_Type_commit(&res);
    MPI_Type_contiguous(3, MPI_INT, &c3);
    MPI_Type_commit(&c3);
    MPI_Type_contiguous(4, MPI_INT, &mat); /* a 2x2 matrix, row major */
    MPI_Type_commit(&mat);
    MPI_Datatype mat_tmp;
    MPI_Type_contiguous(4, MPI_INT, &mat_tmp);
    MPI_Type_create_resized(mat_tmp, 0, 24, &matgap); /* a matrix and 8 gap bytes */
    MPI_Type_free(&mat_tmp);
    MPI_Type_commit(&matgap);
    MPI_Datatype dmat;
    MPI_Type_contiguous(4, MPI_DOUBLE, &dmat); /* a 2x2 matrix of doubles, row major */
    MPI_Type_commit(&dmat);
    set_type(T_INT, "int", MPI_INT, K_INT, 1, 1, o0);
    set_type(T_DOUBLE, "double", MPI_DOUBLE, K_DOUBLE, 1, 0, NULL);
    set_type(T_CHAR, "char", MPI_CHAR, K_CHAR, 1, 0, NULL);
    set_type(T_SHORT_INT, "short_int", MPI_SHORT_INT, K_SHORT_INT, 1, 0, NULL);
    set_type(T_DOUBLE_INT, "double_int", MPI_DOUBLE_INT, K_DOUBLE_INT, 1, 0, NULL);
    set_type(T_FLOAT, "float", MPI_FLOAT, K_FLOAT, 1, 0, NULL);
    set_type(T_LDOUBLE, "long_double", MPI_LONG_DOUBLE, K_LDOUBLE, 1, 0, NULL);
    set_type(T_CDOUBLE, "c_double_complex", MPI_C_DOUBLE_COMPLEX, K_CDOUBLE, 1, 0, NULL);
    set_type(T_VEC, "vector(2,1,3,int)", vec, K_INT, 2, 2, o012);
    set_type(T_RES, "resized(int,0,12)", res, K_INT, 1, 1, o0);
    set_type(T_C3, "contig(3,int)", c3, K_INT, 3, 3, o4);
    set_type(T_MAT, "mat2x2=contig(4,int)", mat, K_INT, 4, 4, o4);
    set_type(T_MATGAP, "resized(mat2x2,0,24)", matgap, K_INT, 4, 4, o4);
    set_type(T_DMAT, "dmat2x2=contig(4,double)", dmat, K_DOUBLE, 4, 0, NULL);
}

static void free_types(void)
{
    for (int i = T_VEC; i < NTYPES; i++) MPI_Type_free(&types[i].t);
}

/* ---------------------------------------------------------------- user ops */

/* Errors seen inside the user ops (unknown datatype), and the most elements one
 * call of a user op got: per thread, checked after each call (a user op sees
 * the elements the program passed only, no more per call than the native
 * reduction could give it). */
static _Thread_local int op_errors, op_maxlen;

static void saw_len(int len)
{
    if (len > op_maxlen) op_maxlen = len;
}

static const tdesc *find_type(MPI_Datatype t)
{
    for (int i = 0; i < NTYPES; i++)
        if (types[i].t == t) return &types[i];
    return NULL;
}

static uint32_t ld32(const unsigned char *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}
static void st32(unsigned char *p, uint32_t v) { memcpy(p, &v, 4); }

/* Commutative: the product of the ints modulo 2^32 (exact in any order). */
static void op_umul(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    saw_len(*len);
    const tdesc *d = find_type(*dt);
    if (!d || d->nint == 0 || d->kind != K_INT || d->t == types[T_MAT].t || d->t == types[T_MATGAP].t) {
        op_errors++;
        return;
    }
    const unsigned char *a = in;
    unsigned char *b = inout;
    for (int e = 0; e < *len; e++)
        for (int k = 0; k < d->nint; k++) {
            size_t o = (size_t)e * (size_t)d->ext + (size_t)d->ioff[k];
            st32(b + o, ld32(a + o) * ld32(b + o));
        }
}

/* Non-commutative: inout = in x inout, 2x2 matrices modulo 2^32 (rank order matters). */
static void op_matmul(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    saw_len(*len);
    const tdesc *d = find_type(*dt);
    if (!d || (d->t != types[T_MAT].t && d->t != types[T_MATGAP].t)) {
        op_errors++;
        return;
    }
    const unsigned char *a = in;
    unsigned char *b = inout;
    for (int e = 0; e < *len; e++) {
        size_t o = (size_t)e * (size_t)d->ext;
        uint32_t x[4], y[4];
        for (int k = 0; k < 4; k++) {
            x[k] = ld32(a + o + 4 * (size_t)k);
            y[k] = ld32(b + o + 4 * (size_t)k);
        }
        st32(b + o + 0, x[0] * y[0] + x[1] * y[2]);
        st32(b + o + 4, x[0] * y[1] + x[1] * y[3]);
        st32(b + o + 8, x[2] * y[0] + x[3] * y[2]);
        st32(b + o + 12, x[2] * y[1] + x[3] * y[3]);
    }
}

/* Commutative: the sum of the doubles (double and double complex data): the
 * grouping changes the rounding, so these calls must run natively. */
static void op_dsum(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    saw_len(*len);
    const tdesc *d = find_type(*dt);
    if (!d || (d->t != types[T_DOUBLE].t && d->t != types[T_CDOUBLE].t)) {
        op_errors++;
        return;
    }
    size_t n = (size_t)*len * (d->t == types[T_CDOUBLE].t ? 2 : 1);
    const double *a = in;
    double *b = inout;
    for (size_t i = 0; i < n; i++) b[i] = a[i] + b[i];
}

/* Non-commutative: inout = in x inout, 2x2 matrices of doubles. */
static void op_dmatmul(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    saw_len(*len);
    const tdesc *d = find_type(*dt);
    if (!d || d->t != types[T_DMAT].t) {
        op_errors++;
        return;
    }
    const double *a = in;
    double *b = inout;
    for (int e = 0; e < *len; e++, a += 4, b += 4) {
        double y[4] = {b[0], b[1], b[2], b[3]};
        b[0] = a[0] * y[0] + a[1] * y[2];
        b[1] = a[0] * y[1] + a[1] * y[3];
        b[2] = a[2] * y[0] + a[3] * y[2];
        b[3] = a[2] * y[1] + a[3] * y[3];
    }
}

static MPI_Op op_ucomm, op_noncomm, op_udsum, op_udmatmul;

/* Value classes: what inputs an op gets so that the exact result does not depend on the order
 * (VC_CANCEL and VC_RAND: floating-point values whose sums do depend on the grouping). */
enum { VC_GEN, VC_POW2, VC_LOC, VC_ODD, VC_MAT, VC_CANCEL, VC_RAND };

/* What a forced mock-up must do with a reduction case (mg_reduction_supported). */
enum {
    EX_ANY,    /* run or fall back, as its supports() says */
    EX_NATIVE, /* fall back: floating-point data (any op: rounding, +-0, NaN) or long double (padding) */
    EX_RUN     /* run wherever the library lets a mock-up run (size >= 2, count > 0) */
};

typedef struct {
    const char *opname;
    int type;
    int vc;
    int expect; /* EX_ */
    MPI_Op op;  /* set in make_reds */
} redcase;

enum {
    R_INT_SUM,
    R_INT_MAX,
    R_INT_BOR,
    R_INT_UCOMM,
    R_DBL_SUM,
    R_DBL_PROD,
    R_SI_MINLOC,
    R_DI_MINLOC,
    R_VEC_UCOMM,
    R_RES_UCOMM,
    R_MAT_NONCOMM,
    R_MATGAP_NONCOMM,
    R_DBL_SUM_CANCEL,
    R_DBL_SUM_RAND,
    R_FLT_SUM_RAND,
    R_DBL_MAX_RAND,
    R_DBL_UDSUM,
    R_CDBL_UDSUM,
    R_DMAT_NONCOMM,
    R_LDBL_MAX,
    R_INT_MIN,
    NREDS
};

static redcase reds[NREDS] = {
    {"MPI_SUM", T_INT, VC_GEN, EX_ANY, MPI_OP_NULL},
    {"MPI_MAX", T_INT, VC_GEN, EX_ANY, MPI_OP_NULL},
    {"MPI_BOR", T_INT, VC_GEN, EX_ANY, MPI_OP_NULL},
    {"user_commutative(umul)", T_INT, VC_ODD, EX_ANY, MPI_OP_NULL},
    {"MPI_SUM", T_DOUBLE, VC_GEN, EX_NATIVE, MPI_OP_NULL},
    {"MPI_PROD", T_DOUBLE, VC_POW2, EX_NATIVE, MPI_OP_NULL},
    {"MPI_MINLOC", T_SHORT_INT, VC_LOC, EX_ANY, MPI_OP_NULL},
    {"MPI_MINLOC", T_DOUBLE_INT, VC_LOC, EX_ANY, MPI_OP_NULL},
    {"user_commutative(umul)", T_VEC, VC_ODD, EX_ANY, MPI_OP_NULL},
    {"user_commutative(umul)", T_RES, VC_ODD, EX_ANY, MPI_OP_NULL},
    {"user_noncommutative(matmul)", T_MAT, VC_MAT, EX_ANY, MPI_OP_NULL},
    {"user_noncommutative(matmul)", T_MATGAP, VC_MAT, EX_ANY, MPI_OP_NULL},
    {"MPI_SUM(1e16,1,-1e16 mix)", T_DOUBLE, VC_CANCEL, EX_NATIVE, MPI_OP_NULL},
    {"MPI_SUM(random)", T_DOUBLE, VC_RAND, EX_NATIVE, MPI_OP_NULL},
    {"MPI_SUM(random)", T_FLOAT, VC_RAND, EX_NATIVE, MPI_OP_NULL},
    {"MPI_MAX(random)", T_DOUBLE, VC_RAND, EX_NATIVE, MPI_OP_NULL},
    {"user_commutative(dsum)", T_DOUBLE, VC_RAND, EX_NATIVE, MPI_OP_NULL},
    {"user_commutative(dsum)", T_CDOUBLE, VC_RAND, EX_NATIVE, MPI_OP_NULL},
    {"user_noncommutative(dmatmul)", T_DMAT, VC_RAND, EX_NATIVE, MPI_OP_NULL},
    {"MPI_MAX", T_LDOUBLE, VC_GEN, EX_NATIVE, MPI_OP_NULL},
    {"MPI_MIN", T_INT, VC_GEN, EX_RUN, MPI_OP_NULL},
};

static void make_reds(void)
{
    MPI_Op_create(op_umul, 1, &op_ucomm);
    MPI_Op_create(op_matmul, 0, &op_noncomm);
    MPI_Op_create(op_dsum, 1, &op_udsum);
    MPI_Op_create(op_dmatmul, 0, &op_udmatmul);
    reds[R_INT_SUM].op = MPI_SUM;
    reds[R_INT_MAX].op = MPI_MAX;
    reds[R_INT_BOR].op = MPI_BOR;
    reds[R_INT_UCOMM].op = op_ucomm;
    reds[R_DBL_SUM].op = MPI_SUM;
    reds[R_DBL_PROD].op = MPI_PROD;
    reds[R_SI_MINLOC].op = MPI_MINLOC;
    reds[R_DI_MINLOC].op = MPI_MINLOC;
    reds[R_VEC_UCOMM].op = op_ucomm;
    reds[R_RES_UCOMM].op = op_ucomm;
    reds[R_MAT_NONCOMM].op = op_noncomm;
    reds[R_MATGAP_NONCOMM].op = op_noncomm;
    reds[R_DBL_SUM_CANCEL].op = MPI_SUM;
    reds[R_DBL_SUM_RAND].op = MPI_SUM;
    reds[R_FLT_SUM_RAND].op = MPI_SUM;
    reds[R_DBL_MAX_RAND].op = MPI_MAX;
    reds[R_DBL_UDSUM].op = op_udsum;
    reds[R_CDBL_UDSUM].op = op_udsum;
    reds[R_DMAT_NONCOMM].op = op_udmatmul;
    reds[R_LDBL_MAX].op = MPI_MAX;
    reds[R_INT_MIN].op = MPI_MIN;
}

/* Floating-point values whose sum over the ranks depends on the grouping:
 * VC_CANCEL mixes +-1e16 with small values (1e16 + 1 - 1e16 is 0 or 1 by the
 * order), VC_RAND spreads random mantissas over 2^-30 .. 2^30 with random signs
 * (never 0, NaN or infinite, so that MPI_MAX is exact in any order). */
static double grouping_value(int vc, uint64_t h)
{
    static const double mix_values[] = {1e16, -1e16, 1.0, -1.0, 0.5, 3.0, 1e-3, 7e15};
    if (vc == VC_CANCEL) return mix_values[h % 8u];
    double m = 1.0 + (double)(h >> 11) * 0x1p-53; /* [1, 2) */
    double v = ldexp(m, (int)((h >> 3) % 61u) - 30);
    return h & 1u ? -v : v;
}

/* Type pairs of the data-moving collectives (send side, receive side; by rank parity for MIXED). */
enum { P_INT, P_DOUBLE, P_CHAR, P_SHORT_INT, P_DOUBLE_INT, P_VEC, P_RES, P_C3_INT, P_INT_VEC, P_MIXED, NPAIRS };
static const char *pair_names[NPAIRS] = {
    "int",
    "double",
    "char",
    "short_int",
    "double_int",
    "vector(2,1,3,int)",
    "resized(int,0,12)",
    "contig(3,int)xn->intx3n",
    "intx2n->vector(2,1,3,int)xn",
    "mixed(even: contig(3,int)xn, odd: intx3n)",
};

static void pair_types(int pair, int rank, MPI_Count n, int *st, MPI_Count *sc, int *rt, MPI_Count *rc)
{
    static const int same[] = {T_INT, T_DOUBLE, T_CHAR, T_SHORT_INT, T_DOUBLE_INT, T_VEC, T_RES};
    switch (pair) {
    case P_C3_INT: *st = T_C3, *sc = n, *rt = T_INT, *rc = 3 * n; break;
    case P_INT_VEC: *st = T_INT, *sc = 2 * n, *rt = T_VEC, *rc = n; break;
    case P_MIXED:
        if (rank % 2 == 0)
            *st = T_C3, *sc = n, *rt = T_INT, *rc = 3 * n;
        else
            *st = T_INT, *sc = 3 * n, *rt = T_C3, *rc = n;
        break;
    default: *st = *rt = same[pair], *sc = *rc = n; break;
    }
}

/* ---------------------------------------------------------------- values */

static uint64_t mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* Writes n elements of type d at p (the element 0 position), values of base
 * elements first_base.. from seed, through MPI_Pack of a contiguous array of
 * the base type and MPI_Unpack into d: only the data bytes of d are written. */
static void fill_typed(unsigned char *p, MPI_Count n, const tdesc *d, int vc, uint64_t seed, MPI_Count first_base)
{
    if (n <= 0) return;
    size_t nb = (size_t)n * (size_t)d->nbase;
    unsigned char *arr = malloc(nb * kind_size(d->kind));
    for (size_t i = 0; i < nb; i++) {
        uint64_t h = mix(seed ^ mix((uint64_t)(first_base + (MPI_Count)i) + 0x1234567ull));
        switch (d->kind) {
        case K_INT: {
            int v;
            if (vc == VC_ODD)
                v = (int)((h % 100000u) * 2u + 1u);
            else if (vc == VC_MAT)
                v = (int)(h % 5u) - 2;
            else
                v = (int)(h % 2000001u) - 1000000;
            memcpy(arr + i * sizeof(int), &v, sizeof v);
            break;
        }
        case K_DOUBLE: {
            double v;
            if (vc == VC_POW2)
                v = ldexp((h >> 8) & 1 ? -1.0 : 1.0, (int)(h % 9u) - 4);
            else if (vc == VC_CANCEL || vc == VC_RAND)
                v = grouping_value(vc, h);
            else
                v = (double)((int)(h % 2001u) - 1000);
            memcpy(arr + i * sizeof(double), &v, sizeof v);
            break;
        }
        case K_FLOAT: {
            float v;
            if (vc == VC_CANCEL || vc == VC_RAND)
                v = (float)grouping_value(vc, h);
            else
                v = (float)((int)(h % 2001u) - 1000);
            memcpy(arr + i * sizeof(float), &v, sizeof v);
            break;
        }
        case K_LDOUBLE: {
            long double v = (long double)((int)(h % 2001u) - 1000);
            memset(arr + i * sizeof v, 0, sizeof v);
            memcpy(arr + i * sizeof v, &v, sizeof v);
            break;
        }
        case K_CDOUBLE: {
            double v[2] = {grouping_value(vc, h), grouping_value(vc, mix(h))};
            if (vc != VC_CANCEL && vc != VC_RAND) v[0] = (double)((int)(h % 2001u) - 1000), v[1] = 0.5;
            memcpy(arr + i * sizeof v, v, sizeof v);
            break;
        }
        case K_CHAR: arr[i] = (unsigned char)(h & 0x7f); break;
        case K_SHORT_INT: {
            struct si v;
            memset(&v, 0, sizeof v);
            v.s = (short)(vc == VC_LOC ? (int)(h % 4u) : (int)(h % 2001u) - 1000);
            v.i = (int)((h >> 20) % 1000u);
            memcpy(arr + i * sizeof v, &v, sizeof v);
            break;
        }
        default: {
            struct di v;
            memset(&v, 0, sizeof v);
            v.d = vc == VC_LOC ? (double)(h % 4u) : (double)((int)(h % 2001u) - 1000);
            v.i = (int)((h >> 20) % 1000u);
            memcpy(arr + i * sizeof v, &v, sizeof v);
            break;
        }
        }
    }
    int psize = 0, pos = 0;
    MPI_Pack_size((int)nb, kind_type(d->kind), MPI_COMM_SELF, &psize);
    unsigned char *packed = malloc((size_t)psize + 1);
    MPI_Pack(arr, (int)nb, kind_type(d->kind), packed, psize, &pos, MPI_COMM_SELF);
    int upos = 0;
    MPI_Unpack(packed, pos, &upos, p, (int)n, d->t, MPI_COMM_SELF);
    free(packed);
    free(arr);
}

/* 1 if byte b of an element of d (relative to its lb) holds data, 0 if it is a gap. */
static int is_data_byte(const tdesc *d, MPI_Aint b)
{
    size_t nb = (size_t)d->nbase, ks = kind_size(d->kind);
    unsigned char *ones = malloc(nb * ks), *elem = calloc((size_t)(d->true_ext + 1), 1);
    memset(ones, 0xff, nb * ks);
    int psize = 0, pos = 0, upos = 0;
    MPI_Pack_size((int)nb, kind_type(d->kind), MPI_COMM_SELF, &psize);
    unsigned char *packed = malloc((size_t)psize + 1);
    MPI_Pack(ones, (int)nb, kind_type(d->kind), packed, psize, &pos, MPI_COMM_SELF);
    MPI_Unpack(packed, pos, &upos, elem - d->true_lb, 1, d->t, MPI_COMM_SELF);
    int r = b >= d->true_lb && b < d->true_lb + d->true_ext && elem[b - d->true_lb] != 0;
    free(packed);
    free(elem);
    free(ones);
    return r;
}

/* ---------------------------------------------------------------- guarded buffers */

#define GUARD 64

typedef struct {
    unsigned char *mem;
    size_t len;  /* GUARD + span + GUARD */
    size_t off;  /* mem + off is the buffer address passed to MPI (element 0's lb) */
    size_t span; /* bytes from element 0's true lb to the last element's true ub */
    MPI_Count n; /* elements */
    const tdesc *d;
} gbuf;

static unsigned char guard_byte(size_t i) { return (unsigned char)(0x5a ^ (i * 29u) ^ (i >> 8)); }

static void gb_alloc(gbuf *b, const tdesc *d, MPI_Count n)
{
    b->d = d;
    b->n = n;
    b->span = n > 0 ? (size_t)((n - 1) * d->ext + d->true_ext) : 0;
    b->len = GUARD + b->span + GUARD;
    b->off = (size_t)(GUARD - d->true_lb);
    b->mem = malloc(b->len);
    for (size_t i = 0; i < b->len; i++) b->mem[i] = guard_byte(i);
}
static void gb_copy(gbuf *dst, const gbuf *src)
{
    *dst = *src;
    dst->mem = malloc(src->len);
    memcpy(dst->mem, src->mem, src->len);
}
static void gb_free(gbuf *b)
{
    free(b->mem);
    b->mem = NULL;
}
static unsigned char *gb_at(const gbuf *b, MPI_Count elem) { return b->mem + b->off + (size_t)(elem * b->d->ext); }

/* ---------------------------------------------------------------- contexts and cases */

typedef struct {
    MPI_Comm comm;    /* where the cases run */
    MPI_Comm agg;     /* intracommunicator over the same processes: per-case agreement */
    char name[48];    /* "world", "split(even)", ... */
    int id;           /* distinguishes communicator instances */
    int rank, size;   /* in comm (local group for an intercommunicator) */
    int remote_size;  /* intercommunicator: remote group size; otherwise = size */
    int inter, group; /* intercommunicator: which half (0 low ranks, 1 high ranks) */
    int agg_rank, agg_size;
    int use_c;                      /* call the _c large-count entry points */
    int must_native;                /* size 1 or intercommunicator: only "native"/"default" may run */
    long counts[NCOLL][MAXIMPL][2]; /* [ran the implementation, native fallback]; agg rank 0 only */
    long ncases, nfail, nnative_err, nwarn, notes;
    char *log;
    size_t loglen, logcap;
    /* large-count phase: the _c call was intercepted (last_impl changed) or not */
    long c_intercepted, c_not_intercepted;
} ctx;

typedef struct {
    int coll, impl;
    int root; /* rooted collectives; intercommunicator: root's world-half (group) x 1000 + local rank */
    int sel;  /* type pair (data movers) or redcase (reductions) */
    MPI_Count n;
    int in_place; /* applied where the collective allows it */
    unsigned seq;
} tcase;

static int verbose;
static const char *skip_list; /* MG_TEST_SKIP: implementations not to run (one crashes), comma separated */

static int skipped(int coll, int impl)
{
    if (!skip_list || impl == 0) return 0;
    const char *name = impl_names[coll][impl], *q = skip_list;
    size_t len = strlen(name);
    while ((q = strstr(q, name)) != NULL) {
        if ((q == skip_list || q[-1] == ',') && (q[len] == 0 || q[len] == ',')) return 1;
        q += len;
    }
    return 0;
}
static const char *forced[NCOLL]; /* what the library is forced to (set by the main thread) */

static void ctx_log(ctx *x, const char *fmt, ...)
{
    char line[2048];
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (k < 0) return;
    size_t len = strlen(line);
    if (x->loglen + len + 2 > x->logcap) {
        x->logcap = (x->logcap + len + 2) * 2;
        x->log = realloc(x->log, x->logcap);
    }
    memcpy(x->log + x->loglen, line, len);
    x->loglen += len;
    x->log[x->loglen++] = '\n';
    x->log[x->loglen] = 0;
}

/* Everything one call needs on this rank. */
typedef struct {
    const void *sbuf;
    void *rbuf;
    MPI_Count scount, rcount;
    MPI_Datatype stype, rtype;
    MPI_Op op;
    int root;
    MPI_Comm comm;
} args;

static int call_coll(int coll, int tuned, int use_c, const args *a)
{
#define CALL(fn, ...) (tuned ? MPI_##fn(__VA_ARGS__) : PMPI_##fn(__VA_ARGS__))
#if MG_TEST_C
    if (use_c) {
        switch (coll) {
        case C_ALLGATHER: return CALL(Allgather_c, a->sbuf, a->scount, a->stype, a->rbuf, a->rcount, a->rtype, a->comm);
        case C_ALLREDUCE: return CALL(Allreduce_c, a->sbuf, a->rbuf, a->rcount, a->rtype, a->op, a->comm);
        case C_ALLTOALL: return CALL(Alltoall_c, a->sbuf, a->scount, a->stype, a->rbuf, a->rcount, a->rtype, a->comm);
        case C_BCAST: return CALL(Bcast_c, a->rbuf, a->rcount, a->rtype, a->root, a->comm);
        case C_GATHER:
            return CALL(Gather_c, a->sbuf, a->scount, a->stype, a->rbuf, a->rcount, a->rtype, a->root, a->comm);
        case C_REDUCE: return CALL(Reduce_c, a->sbuf, a->rbuf, a->rcount, a->rtype, a->op, a->root, a->comm);
        case C_RSB: return CALL(Reduce_scatter_block_c, a->sbuf, a->rbuf, a->rcount, a->rtype, a->op, a->comm);
        case C_SCAN: return CALL(Scan_c, a->sbuf, a->rbuf, a->rcount, a->rtype, a->op, a->comm);
        case C_SCATTER:
            return CALL(Scatter_c, a->sbuf, a->scount, a->stype, a->rbuf, a->rcount, a->rtype, a->root, a->comm);
        default: return MPI_ERR_OTHER;
        }
    }
#else
    (void)use_c;
#endif
    int sc = (int)a->scount, rc = (int)a->rcount;
    switch (coll) {
    case C_ALLGATHER: return CALL(Allgather, a->sbuf, sc, a->stype, a->rbuf, rc, a->rtype, a->comm);
    case C_ALLREDUCE: return CALL(Allreduce, a->sbuf, a->rbuf, rc, a->rtype, a->op, a->comm);
    case C_ALLTOALL: return CALL(Alltoall, a->sbuf, sc, a->stype, a->rbuf, rc, a->rtype, a->comm);
    case C_BCAST: return CALL(Bcast, a->rbuf, rc, a->rtype, a->root, a->comm);
    case C_GATHER: return CALL(Gather, a->sbuf, sc, a->stype, a->rbuf, rc, a->rtype, a->root, a->comm);
    case C_REDUCE: return CALL(Reduce, a->sbuf, a->rbuf, rc, a->rtype, a->op, a->root, a->comm);
    case C_RSB: return CALL(Reduce_scatter_block, a->sbuf, a->rbuf, rc, a->rtype, a->op, a->comm);
    case C_SCAN: return CALL(Scan, a->sbuf, a->rbuf, rc, a->rtype, a->op, a->comm);
    case C_SCATTER: return CALL(Scatter, a->sbuf, sc, a->stype, a->rbuf, rc, a->rtype, a->root, a->comm);
    default: return MPI_ERR_OTHER;
    }
#undef CALL
}

/* One case prepared on this rank: buffers and arguments. */
typedef struct {
    args a;
    gbuf send, send0; /* send buffer and its pristine copy (send.mem NULL: none) */
    gbuf rinit;       /* receive buffer before the call (rinit.mem NULL: none) */
    int send_in_place, recv_in_place;
    size_t soft0, soft1; /* byte range of rinit.mem that is not significant or unspecified after the call */
    int soft_warn;       /* 1: MPI leaves the range's contents unspecified (a change there is a warning);
                           * 0: not significant, the application may pass a smaller buffer (a write is a failure) */
    char desc[512];      /* datatypes and counts of this rank, for messages */
} prep;

static uint64_t seed_of(const ctx *x, const tcase *c, int rank, int role)
{
    return mix(((uint64_t)(unsigned)x->id << 48) ^ ((uint64_t)c->seq << 16) ^ ((uint64_t)(unsigned)rank << 4) ^
               (uint64_t)role);
}

static const tdesc *T(int i) { return &types[i]; }

/* Fills p for case c on this rank of x. */
static void prepare(const ctx *x, const tcase *c, prep *p)
{
    memset(p, 0, sizeof *p);
    args *a = &p->a;
    a->comm = x->comm;
    a->op = MPI_OP_NULL;
    a->stype = a->rtype = MPI_DATATYPE_NULL;
    const int r = x->rank, P = x->size, RP = x->remote_size;
    const MPI_Count n = c->n;
    int st = T_INT, rt = T_INT;
    MPI_Count sc = 0, rc = 0;
    int vc = VC_GEN;
    if (colls[c->coll].reduction) {
        st = rt = reds[c->sel].type;
        sc = rc = n;
        vc = reds[c->sel].vc;
        a->op = reds[c->sel].op;
    } else {
        pair_types(c->sel, r, n, &st, &sc, &rt, &rc);
    }
    int root = c->root, is_root = 0;
    if (colls[c->coll].rooted) {
        if (x->inter) {
            int rg = root / 1000, rl = root % 1000;
            if (rg == x->group)
                a->root = r == rl ? MPI_ROOT : MPI_PROC_NULL;
            else
                a->root = rl;
            is_root = a->root == MPI_ROOT;
        } else {
            a->root = root;
            is_root = r == root;
        }
    }
    const uint64_t s_seed = seed_of(x, c, r, 1);
    int ip = c->in_place && !x->inter;
    p->soft0 = p->soft1 = 0;

    switch (c->coll) {
    case C_ALLGATHER:
    case C_ALLTOALL: {
        int a2a = c->coll == C_ALLTOALL;
        gb_alloc(&p->rinit, T(rt), RP * rc);
        if (ip) {
            p->send_in_place = 1;
            a->scount = 0;
            a->stype = MPI_DATATYPE_NULL;
            if (a2a)
                fill_typed(gb_at(&p->rinit, 0), P * rc, T(rt), vc, s_seed, 0);
            else
                fill_typed(gb_at(&p->rinit, r * rc), rc, T(rt), vc, s_seed, 0);
        } else {
            gb_alloc(&p->send, T(st), (a2a ? RP : 1) * sc);
            fill_typed(gb_at(&p->send, 0), (a2a ? RP : 1) * sc, T(st), vc, s_seed, 0);
            a->scount = sc;
            a->stype = T(st)->t;
        }
        a->rcount = rc;
        a->rtype = T(rt)->t;
        if (ip)
            snprintf(p->desc, sizeof p->desc, "send MPI_IN_PLACE / recv %s x%lld", T(rt)->name, (long long)rc);
        else
            snprintf(p->desc, sizeof p->desc, "send %s x%lld / recv %s x%lld", T(st)->name, (long long)sc, T(rt)->name,
                     (long long)rc);
        break;
    }
    case C_BCAST: {
        int mine = is_root ? st : rt; /* the root's type, or the receivers' (also MPI_PROC_NULL ranks) */
        MPI_Count cnt = is_root ? sc : rc;
        gb_alloc(&p->rinit, T(mine), cnt);
        if (is_root) fill_typed(gb_at(&p->rinit, 0), cnt, T(mine), vc, s_seed, 0);
        a->rcount = cnt;
        a->rtype = T(mine)->t;
        snprintf(p->desc, sizeof p->desc, "buffer %s x%lld", T(mine)->name, (long long)cnt);
        break;
    }
    case C_GATHER: {
        gb_alloc(&p->rinit, T(rt), P * rc);
        if (is_root && ip) {
            p->send_in_place = 1;
            fill_typed(gb_at(&p->rinit, r * rc), rc, T(rt), vc, s_seed, 0);
            a->scount = 0;
            a->stype = MPI_DATATYPE_NULL;
        } else {
            gb_alloc(&p->send, T(st), sc);
            fill_typed(gb_at(&p->send, 0), sc, T(st), vc, s_seed, 0);
            a->scount = sc;
            a->stype = T(st)->t;
        }
        if (!is_root) p->soft0 = 0, p->soft1 = p->rinit.len; /* not significant: must stay untouched */
        a->rcount = rc;
        a->rtype = T(rt)->t;
        if (p->send_in_place)
            snprintf(p->desc, sizeof p->desc, "send MPI_IN_PLACE / recv %s x%lld (root)", T(rt)->name, (long long)rc);
        else
            snprintf(p->desc, sizeof p->desc, "send %s x%lld / recv %s x%lld%s", T(st)->name, (long long)sc,
                     T(rt)->name, (long long)rc, is_root ? " (root)" : " (recv args not significant)");
        break;
    }
    case C_SCATTER: {
        gb_alloc(&p->send, T(st), P * sc);
        if (is_root) fill_typed(gb_at(&p->send, 0), P * sc, T(st), vc, s_seed, 0);
        /* a non-root's sendbuf is not significant, but it is const: it must stay as it is */
        a->scount = sc;
        a->stype = T(st)->t;
        if (is_root && ip) {
            p->recv_in_place = 1;
            a->rcount = 0;
            a->rtype = MPI_DATATYPE_NULL;
        } else {
            gb_alloc(&p->rinit, T(rt), rc);
            a->rcount = rc;
            a->rtype = T(rt)->t;
        }
        if (p->recv_in_place)
            snprintf(p->desc, sizeof p->desc, "send %s x%lld (root) / recv MPI_IN_PLACE", T(st)->name, (long long)sc);
        else
            snprintf(p->desc, sizeof p->desc, "send %s x%lld%s / recv %s x%lld", T(st)->name, (long long)sc,
                     is_root ? " (root)" : " (not significant)", T(rt)->name, (long long)rc);
        break;
    }
    case C_ALLREDUCE:
    case C_SCAN:
    case C_REDUCE: {
        int recv_sig = c->coll != C_REDUCE || is_root;
        gb_alloc(&p->rinit, T(rt), n);
        if (ip && recv_sig) {
            p->send_in_place = 1;
            fill_typed(gb_at(&p->rinit, 0), n, T(rt), vc, s_seed, 0);
        } else {
            gb_alloc(&p->send, T(st), n);
            fill_typed(gb_at(&p->send, 0), n, T(st), vc, s_seed, 0);
        }
        if (!recv_sig) p->soft0 = 0, p->soft1 = p->rinit.len;
        a->rcount = n;
        a->rtype = T(rt)->t;
        snprintf(p->desc, sizeof p->desc, "%s x%lld%s%s", T(rt)->name, (long long)n,
                 p->send_in_place ? " (MPI_IN_PLACE)" : "", recv_sig ? "" : " (recvbuf not significant)");
        break;
    }
    case C_RSB: {
        if (ip) {
            p->send_in_place = 1;
            gb_alloc(&p->rinit, T(rt), P * n);
            fill_typed(gb_at(&p->rinit, 0), P * n, T(rt), vc, s_seed, 0);
            /* the result is the first n elements; what follows is unspecified */
            size_t res = n > 0 ? (size_t)((n - 1) * T(rt)->ext + T(rt)->true_ext) : 0;
            p->soft0 = p->rinit.off + (size_t)T(rt)->true_lb + res;
            p->soft1 = GUARD + p->rinit.span;
            if (p->soft1 < p->soft0) p->soft1 = p->soft0;
            p->soft_warn = 1;
        } else {
            gb_alloc(&p->send, T(st), P * n);
            fill_typed(gb_at(&p->send, 0), P * n, T(st), vc, s_seed, 0);
            gb_alloc(&p->rinit, T(rt), n);
        }
        a->rcount = n;
        a->rtype = T(rt)->t;
        snprintf(p->desc, sizeof p->desc, "%s recvcount %lld%s", T(rt)->name, (long long)n,
                 ip ? " (MPI_IN_PLACE)" : "");
        break;
    }
    }
    if (p->send.mem) gb_copy(&p->send0, &p->send);
    a->sbuf = p->send_in_place ? MPI_IN_PLACE : p->send.mem ? (const void *)(p->send.mem + p->send.off) : NULL;
}

static void prep_free(prep *p)
{
    gb_free(&p->send);
    gb_free(&p->send0);
    gb_free(&p->rinit);
}

/* Where byte i of buffer b lies, for messages. */
static void where(const gbuf *b, size_t i, char *out, size_t len)
{
    long long rel = (long long)i - (long long)b->off;
    long long lo = (long long)b->d->true_lb, hi = lo + (long long)b->span;
    if (rel < lo) {
        snprintf(out, len, "byte %lld (front guard, %lld before the data)", rel, lo - rel);
    } else if (rel >= hi) {
        snprintf(out, len, "byte %lld (back guard, %lld after the data)", rel, rel - hi);
    } else {
        long long e = (rel - lo) / (long long)b->d->ext, k = rel - e * (long long)b->d->ext;
        snprintf(out, len, "byte %lld (element %lld of %s, byte %lld: %s)", rel, e, b->d->name, k,
                 is_data_byte(b->d, (MPI_Aint)k) ? "data" : "gap");
    }
}

/* First byte where the tuned buffer is wrong, or (size_t)-1: in the exact
 * part (want_soft 0: must equal the native result) or in the soft range
 * (want_soft 1: must stay as it was where the native call leaves it so). */
static size_t first_bad(const prep *p, const unsigned char *nat, const unsigned char *tun, int want_soft, size_t *nbad)
{
    size_t first = (size_t)-1;
    *nbad = 0;
    if (!want_soft && p->soft0 == p->soft1 && memcmp(nat, tun, p->rinit.len) == 0) return first;
    for (size_t i = 0; i < p->rinit.len; i++) {
        int soft = i >= p->soft0 && i < p->soft1;
        if (soft != want_soft) continue;
        int bad = soft ? (nat[i] == p->rinit.mem[i] && tun[i] != p->rinit.mem[i]) : nat[i] != tun[i];
        if (bad) {
            if (first == (size_t)-1) first = i;
            (*nbad)++;
        }
    }
    return first;
}

/* MPI's definition of an MPI_Allgather's receive buffer on this rank: block
 * q holds rank q's data (the base elements fill_typed gave it) laid out as
 * this rank's receive type; the rest as it was. 0 where the test has no
 * definition (the other collectives, intercommunicators). */
static int definition(const ctx *x, const tcase *c, const prep *p, gbuf *def)
{
    if (c->coll != C_ALLGATHER || x->inter || !p->rinit.mem) return 0;
    gb_copy(def, &p->rinit);
    int st, rt;
    MPI_Count sc, rc;
    pair_types(c->sel, x->rank, c->n, &st, &sc, &rt, &rc);
    for (int q = 0; q < x->size; q++) fill_typed(gb_at(def, q * rc), rc, T(rt), VC_GEN, seed_of(x, c, q, 1), 0);
    return 1;
}

/* The native call of case c is a known bug of this library: an MPI_Allgather
 * whose send and receive types differ on some rank, on Intel MPI 2021.18
 * (tests/c/known_bugs.c: impi-allgather-retyped). */
static int native_unreliable(const ctx *x, const tcase *c)
{
    return c->coll == C_ALLGATHER && !x->inter && (c->sel == P_C3_INT || c->sel == P_INT_VEC || c->sel == P_MIXED) &&
           mg_known_bug_listed("impi-allgather-retyped");
}

/* The tuned call differs from the native one: the native call is the one
 * that is wrong if the tuned result is MPI's definition and the native one
 * is not, a library bug that known_bugs.c does not list for this library (as
 * Intel MPI 2021.18's MPI_Allgather of different send and receive types was
 * before it was listed). */
static int native_is_wrong(const ctx *x, const tcase *c, const prep *p, const unsigned char *nat,
                           const unsigned char *tun)
{
    gbuf def = {0};
    size_t n;
    int wrong = definition(x, c, p, &def) && first_bad(p, def.mem, tun, 0, &n) == (size_t)-1 &&
                first_bad(p, def.mem, nat, 0, &n) != (size_t)-1;
    gb_free(&def);
    return wrong;
}

static const char *root_str(const ctx *x, const tcase *c, char *buf, size_t len)
{
    if (!colls[c->coll].rooted) return "-";
    if (x->inter)
        snprintf(buf, len, "%d in half %d", c->root % 1000, c->root / 1000);
    else
        snprintf(buf, len, "%d", c->root);
    return buf;
}

static const char *type_str(const tcase *c)
{
    return colls[c->coll].reduction ? T(reds[c->sel].type)->name : pair_names[c->sel];
}

/* What one case found on this rank; agreed on per block (agree_block). */
typedef struct {
    int fail;   /* this rank's result differs from the native one */
    int nerr;   /* the native call itself returned an error here: no reference */
    int ran;    /* the forced implementation ran (or "default" for index 0) */
    int nat;    /* the library fell back to the native call */
    int warn;   /* only bytes MPI leaves unspecified differ */
    char *text; /* the details (fail, nerr or warn), malloc'ed */
} cres;

/* Online mode (main's argument "online"): what the library chose is checked, not forced. */
static int online_mode;
enum { ONLINE_PASSES = 40, ONLINE_WARMUP_PASSES = 3 }; /* 3 passes: every key below its 8 warm-up calls */
static int online_expect_default; /* the current phase's keys are all in their warm-up */

static void errstr(int rc, char *out, size_t len)
{
    char e[MPI_MAX_ERROR_STRING + 1];
    int l = 0, cls = -1;
    if (MPI_Error_string(rc, e, &l) != MPI_SUCCESS) l = 0;
    e[l] = 0;
    for (char *q = e; *q; q++)
        if (*q == '\n') *q = ' ';
    MPI_Error_class(rc, &cls);
    snprintf(out, len, "error class %d: %.160s", cls, e);
}

/* Watchdog: a mock-up that fails on some ranks only (or deadlocks) leaves the
 * ranks in different collectives, and the per-block report never comes. If a
 * process makes no progress for MG_TEST_HANG_S seconds (default 30), it prints
 * the case it is in, the one before, and the last wrong result it saw, once
 * per stall. It only reports: a slow machine may stall that long, and a real
 * hang is ended by ctest's timeout, with this report in the output. */
static pthread_mutex_t wd_mu = PTHREAD_MUTEX_INITIALIZER;
static char wd_current[700], wd_previous[700], wd_lastbad[1600];
static unsigned long wd_progress;
static int wd_stop, wd_rank, wd_hang_s = 30;

static void *watchdog(void *v)
{
    (void)v;
    unsigned long seen = (unsigned long)-1;
    int still = 0;
    for (;;) {
        struct timespec ts = {0, 250000000};
        nanosleep(&ts, NULL);
        pthread_mutex_lock(&wd_mu);
        if (wd_stop) {
            pthread_mutex_unlock(&wd_mu);
            return NULL;
        }
        if (wd_progress != seen)
            seen = wd_progress, still = 0;
        else if (++still == 4 * wd_hang_s) {
            printf("STALLED rank %d: no progress for %d s in case: %s\n  case before: %s\n  last wrong result on "
                   "this rank: %s\n",
                   wd_rank, wd_hang_s, wd_current, wd_previous[0] ? wd_previous : "-",
                   wd_lastbad[0] ? wd_lastbad : "-");
            fflush(stdout);
        }
        pthread_mutex_unlock(&wd_mu);
    }
}

/* A process that dies (a crash inside a mock-up, MPI aborting on an internal
 * error, killed by mpiexec after another rank died) says which case it was
 * in: from an atexit handler, a signal handler or the sanitizers' death
 * callback; async-signal-safe (write only). */
static volatile sig_atomic_t finished;

static void report_death(const char *why)
{
    if (finished) return; /* e.g. LeakSanitizer at exit: it speaks for itself */
    char buf[1024];
    size_t n = 0;
    const char *parts[] = {"DIED rank ", NULL, " (", why, ") in case: ", wd_current, "\n"};
    char r[16];
    int k = 0, v = wd_rank;
    char tmp[16];
    do tmp[k++] = (char)('0' + v % 10), v /= 10;
    while (v > 0 && k < 15);
    for (int i = 0; i < k; i++) r[i] = tmp[k - 1 - i];
    r[k] = 0;
    parts[1] = r;
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
        for (const char *q = parts[i]; *q && n < sizeof buf - 1; q++) buf[n++] = *q;
    if (write(STDOUT_FILENO, buf, n) < 0) return;
}

static void on_exit_early(void)
{
    if (!finished && wd_current[0]) report_death("exit before the end");
}

static void on_signal(int sig)
{
    report_death(sig == SIGTERM ? "SIGTERM" : sig == SIGABRT ? "SIGABRT" : sig == SIGSEGV ? "SIGSEGV" : "signal");
    signal(sig, SIG_DFL);
    raise(sig);
}

#if defined(__SANITIZE_ADDRESS__)
void __sanitizer_set_death_callback(void (*callback)(void));
static void on_sanitizer_death(void) { report_death("sanitizer"); }
#endif

static void install_death_reports(void)
{
    atexit(on_exit_early);
    signal(SIGTERM, on_signal);
    signal(SIGABRT, on_signal);
#if defined(__SANITIZE_ADDRESS__)
    __sanitizer_set_death_callback(on_sanitizer_death);
#else
    signal(SIGSEGV, on_signal);
    signal(SIGBUS, on_signal);
#endif
}

/* The error handler of every communicator the cases use: like
 * MPI_ERRORS_RETURN, but it records the first error of the call (MPICH 5
 * returns MPI_SUCCESS from a call whose user error handler ran, so the return
 * code alone does not tell), and an error inside the intercepted call is
 * printed at once with its case, because some MPI errors abort the process
 * right after the handler (MPICH: "Message truncated" inside a collective). */
static _Thread_local int in_tuned, tl_err;
static _Thread_local const char *tl_case;

static void test_errhandler(MPI_Comm *comm, int *err, ...)
{
    (void)comm;
    if (tl_err == MPI_SUCCESS) tl_err = *err;
    if (!in_tuned) return;
    char e[256];
    errstr(*err, e, sizeof e);
    printf("MPI error in the intercepted call, rank %d, case %s: %s\n", wd_rank, tl_case ? tl_case : "-", e);
    fflush(stdout);
}

static MPI_Errhandler test_eh = MPI_ERRHANDLER_NULL;

static void set_eh(MPI_Comm comm)
{
    if (test_eh == MPI_ERRHANDLER_NULL) MPI_Comm_create_errhandler(test_errhandler, &test_eh);
    MPI_Comm_set_errhandler(comm, test_eh);
}

/* Runs case c on this rank of x: native, then intercepted; compares. */
/* Online mode's checks of one call that ran `last`: a known implementation,
 * the same on every rank (one reduction on x->agg per call), never a mock-up
 * where only the native call may run or in a warm-up phase, and the
 * floating-point rule. Counts, on agg rank 0, what ran. */
static void online_check(ctx *x, const tcase *c, const char *last, int *is_ran, int *is_native, char *why,
                         size_t *wl, size_t cap)
{
#define OWHY(...) (*wl += (size_t)snprintf(why + *wl, *wl < cap ? cap - *wl : 0, __VA_ARGS__), *wl = *wl < cap ? *wl : cap)
    const int coll = c->coll;
    int idx = -2; /* -1: "native" (a fallback), 0: "default", k: mock-up k */
    if (last && strcmp(last, "native") == 0) idx = -1;
    for (int m = 0; last && idx == -2 && m < nimpl[coll]; m++)
        if (strcmp(last, impl_names[coll][m]) == 0) idx = m;
    if (idx == -2) OWHY(" ran \"%s\", which is no implementation of %s;", last ? last : "NULL", colls[coll].name);
    int mm[2] = {idx, -idx}, agreed[2] = {idx, -idx};
    if (!x->inter) PMPI_Allreduce(mm, agreed, 2, MPI_INT, MPI_MAX, x->agg);
    if (agreed[0] != -agreed[1])
        OWHY(" the ranks ran different implementations (indices %d to %d; this rank %s);", -agreed[1], agreed[0],
             last ? last : "NULL");
    *is_ran = idx > 0, *is_native = idx == -1;
    if (x->must_native && idx > 0)
        OWHY(" ran the mock-up on %s; only the native call may run there;",
             x->inter ? "an intercommunicator" : "a size-1 communicator");
    if (online_expect_default && idx != 0) OWHY(" ran \"%s\" during the key's warm-up, where only \"default\" runs;", last);
    if (colls[coll].reduction && idx > 0 && reds[c->sel].expect == EX_NATIVE)
        OWHY(" ran the mock-up on %s %s: reductions of floating-point data (any op) and of long double must "
             "fall back to the native call;",
             reds[c->sel].opname, type_str(c));
    if (x->agg_rank == 0 && idx >= 0 && agreed[0] == -agreed[1]) x->counts[coll][idx][0]++;
#undef OWHY
}

static void run_case(ctx *x, const tcase *c, cres *res)
{
    const int coll = c->coll;
    const char *impl = impl_names[coll][c->impl];
    char rootbuf[32], cur[700];
    snprintf(cur, sizeof cur, "%s impl=%s comm=%s size=%d%s root=%s type=%s count=%lld in_place=%d op=%s",
             colls[coll].name, impl, x->name, x->size, x->use_c ? " (_c)" : "", root_str(x, c, rootbuf, sizeof rootbuf),
             type_str(c), (long long)c->n, c->in_place, colls[coll].reduction ? reds[c->sel].opname : "-");
    pthread_mutex_lock(&wd_mu);
    memcpy(wd_previous, wd_current, sizeof wd_previous);
    memcpy(wd_current, cur, sizeof cur);
    wd_progress++;
    pthread_mutex_unlock(&wd_mu);
    if (verbose && x->agg_rank == 0) {
        printf("[%s]\n", cur);
        fflush(stdout);
    }
    prep p;
    prepare(x, c, &p);
    /* Where the library's native call is a known bug that writes outside the
     * buffers (Intel MPI 2021.18's MPI_Allgather of different send and
     * receive types), MPI's definition is the reference and the native call
     * is not made; "default", the native call itself, is left out. */
    int by_definition = native_unreliable(x, c);
    if (by_definition && c->impl == 0) {
        prep_free(&p);
        *res = (cres){0};
        return;
    }
    gbuf rnat = {0}, rtun = {0};
    if (p.rinit.mem) gb_copy(&rnat, &p.rinit), gb_copy(&rtun, &p.rinit);
    args an = p.a, at = p.a;
    if (p.recv_in_place) {
        an.rbuf = at.rbuf = MPI_IN_PLACE;
    } else {
        an.rbuf = rnat.mem ? rnat.mem + rnat.off : NULL;
        at.rbuf = rtun.mem ? rtun.mem + rtun.off : NULL;
    }

    double t0 = MPI_Wtime();
    tl_err = MPI_SUCCESS;
    int rc_n = MPI_SUCCESS;
    if (by_definition) {
        gb_free(&rnat);
        definition(x, c, &p, &rnat);
        mg_known_bug_note("impi-allgather-retyped", "test_tune_exact takes MPI's definition as the reference");
    } else {
        rc_n = call_coll(coll, 0, x->use_c, &an);
    }
    if (rc_n == MPI_SUCCESS) rc_n = tl_err;
    double t1 = MPI_Wtime();
    if (x->use_c && c->impl > 0 && !by_definition) {
        /* Probe: the int entry point under "default" sets last_impl to "default";
         * a _c entry point that does not go through the library leaves it so. */
        gbuf rpr = {0};
        if (p.rinit.mem) gb_copy(&rpr, &p.rinit);
        args ap = p.a;
        ap.rbuf = p.recv_in_place ? MPI_IN_PLACE : rpr.mem ? (void *)(rpr.mem + rpr.off) : NULL;
        mg_tune_force(colls[coll].name, "default");
        call_coll(coll, 1, 0, &ap);
        mg_tune_force(colls[coll].name, impl);
        gb_free(&rpr);
    }
    int op_err0 = op_errors;
    op_maxlen = 0;
    double t2 = MPI_Wtime();
    in_tuned = 1, tl_case = cur, tl_err = MPI_SUCCESS;
    int rc_t = call_coll(coll, 1, x->use_c, &at);
    if (rc_t == MPI_SUCCESS) rc_t = tl_err;
    in_tuned = 0, tl_case = NULL;
    double t3 = MPI_Wtime();
    int op_err = op_errors - op_err0;
    const char *last = mg_tune_last_impl(colls[coll].name);
    if (verbose > 1 && x->agg_rank == 0) {
        printf("    -> ran %s, rc %d (native %d), %.2f ms (native %.2f ms)\n", last ? last : "NULL", rc_t, rc_n,
               1e3 * (t3 - t2), 1e3 * (t1 - t0));
        fflush(stdout);
    }

    char why[1600] = "";
    size_t wl = 0;
#define WHY(...)                                                                           \
    (wl += (size_t)snprintf(why + wl, wl < sizeof why ? sizeof why - wl : 0, __VA_ARGS__), \
     wl = wl < sizeof why ? wl : sizeof why)
    if (rc_n != MPI_SUCCESS) {
        char e[256];
        errstr(rc_n, e, sizeof e);
        WHY(" the native call returned %s", e);
    } else if (rc_t != MPI_SUCCESS) {
        char e[256];
        errstr(rc_t, e, sizeof e);
        WHY(" return code: %s, native MPI_SUCCESS;", e);
    }
    char warn[1400] = "";
    if (rc_n == MPI_SUCCESS && p.rinit.mem) {
        const char *bn = coll == C_BCAST ? "buffer" : "recvbuf";
        size_t nbad, i = first_bad(&p, rnat.mem, rtun.mem, 0, &nbad);
        if (i != (size_t)-1 && !by_definition && native_is_wrong(x, c, &p, rnat.mem, rtun.mem)) {
            WHY(" the native call's %s differs from MPI's definition (%zu bytes), the call's is right: a bug of this "
                "MPI library that tests/c/known_bugs.c does not list for it;",
                bn, nbad);
        } else if (i != (size_t)-1) {
            char w[160];
            where(&p.rinit, i, w, sizeof w);
            WHY(" %s: first differing %s got 0x%02x want 0x%02x (%zu bytes differ);", bn, w, rtun.mem[i], rnat.mem[i],
                nbad);
        } else if ((i = first_bad(&p, rnat.mem, rtun.mem, 1, &nbad)) != (size_t)-1) {
            char w[160];
            where(&p.rinit, i, w, sizeof w);
            if (p.soft_warn)
                snprintf(warn, sizeof warn,
                         "ran=%s [%s]: %s: first changed %s got 0x%02x want 0x%02x (%zu bytes changed) in the part "
                         "MPI leaves unspecified (in-place Reduce_scatter_block: beyond the result block), which the "
                         "native call leaves untouched",
                         last ? last : "NULL", p.desc, bn, w, rtun.mem[i], p.rinit.mem[i], nbad);
            else
                WHY(" %s is not significant on this rank but the call wrote into it (the native call does not; an "
                    "application may pass a smaller buffer): first written %s got 0x%02x want 0x%02x (%zu bytes);",
                    bn, w, rtun.mem[i], p.rinit.mem[i], nbad);
        }
    }
    if (p.send.mem && memcmp(p.send.mem, p.send0.mem, p.send.len) != 0) {
        size_t i = 0;
        while (p.send.mem[i] == p.send0.mem[i]) i++;
        char w[160];
        where(&p.send, i, w, sizeof w);
        WHY(" sendbuf modified (it is const): first changed %s got 0x%02x want 0x%02x;", w, p.send.mem[i],
            p.send0.mem[i]);
    }
    if (op_err) WHY(" the user op was called %d times with a datatype the application never used;", op_err);
    MPI_Count most = coll == C_RSB ? c->n * x->size : c->n; /* elements the call passed */
    if (op_maxlen > most)
        WHY(" the user op was called with %d elements at once; the call passed %lld (padding, or more than any "
            "native call gives it);",
            op_maxlen, (long long)most);
    int is_ran = 0, is_native = 0;
    if (online_mode) {
        online_check(x, c, last, &is_ran, &is_native, why, &wl, sizeof why);
    } else if (!last) {
        WHY(" mg_tune_last_impl is NULL: the call was not intercepted;");
    } else if (x->use_c && (c->impl == 0 || strcmp(last, "default") == 0)) {
        /* impl 0: nothing to tell apart; else the _c entry point did not go
         * through the library: no claim about mock-ups (exactness still checked) */
        if (c->impl > 0) x->c_not_intercepted++;
    } else {
        if (x->use_c && c->impl > 0) x->c_intercepted++;
        if (strcmp(last, "native") == 0)
            is_native = 1;
        else if (strcmp(last, impl) == 0)
            is_ran = 1;
        else if (c->impl == 0 && strcmp(last, "default") == 0)
            is_ran = 1;
        else
            WHY(" ran \"%s\" although \"%s\" is forced;", last, impl);
        if (x->must_native && is_ran && c->impl > 0)
            WHY(" ran the mock-up on %s; only the native call may run there;",
                x->inter ? "an intercommunicator" : "a size-1 communicator");
        /* the floating-point rule (mg_reduction_supported) */
        int expect = colls[coll].reduction && c->impl > 0 && !x->must_native ? reds[c->sel].expect : EX_ANY;
        if (expect == EX_NATIVE && is_ran)
            WHY(" ran the mock-up on %s %s: reductions of floating-point data (any op) and of long double must "
                "fall back to the native call (grouping changes rounding, +-0 and NaN; long double padding);",
                reds[c->sel].opname, type_str(c));
        if (expect == EX_RUN && is_native && c->n > 0)
            WHY(" fell back to the native call on %s %s, which the mock-up must run (only floating-point and "
                "long double data are refused);",
                reds[c->sel].opname, type_str(c));
    }
#undef WHY
    if (why[0]) {
        pthread_mutex_lock(&wd_mu);
        snprintf(wd_lastbad, sizeof wd_lastbad, "%.690s:%.900s", cur, why);
        pthread_mutex_unlock(&wd_mu);
    }
    res->nerr = rc_n != MPI_SUCCESS;
    res->fail = !res->nerr && why[0] != 0;
    res->ran = is_ran;
    res->nat = is_native;
    res->text = NULL;
    res->warn = !why[0] && warn[0];
    if (res->warn) {
        res->text = malloc(strlen(warn) + 1);
        memcpy(res->text, warn, strlen(warn) + 1);
    } else if (why[0]) {
        size_t need = strlen(p.desc) + strlen(why) + (last ? strlen(last) : 4) + 16;
        res->text = malloc(need);
        snprintf(res->text, need, "ran=%s [%s]:%s", last ? last : "NULL", p.desc, why);
    }
    gb_free(&rnat);
    gb_free(&rtun);
    prep_free(&p);
}

#define MAX_NOTES 6 /* NOTE and WARN lines printed per context (all are counted) */

/* Agrees on a block of cases run on x: counts, and one line per failing case
 * from the lowest rank that saw it (two reductions per block, not per case). */
static void agree_block(ctx *x, const tcase *cs, cres *rs, int n)
{
    enum { F, E, R, N, W, S }; /* fail, native error, ran, native fallback, warning; stride */
    int *loc = calloc(S * (size_t)(n + 1), sizeof(int)), *glob = calloc((S + 1) * (size_t)(n + 1), sizeof(int));
    for (int i = 0; i < n; i++) {
        int *l = &loc[S * i];
        l[F] = rs[i].fail, l[E] = rs[i].nerr, l[R] = rs[i].ran, l[N] = rs[i].nat, l[W] = rs[i].warn;
    }
    PMPI_Allreduce(loc, glob, S * n, MPI_INT, MPI_SUM, x->agg);
    int any = 0;
    for (int i = 0; i < n; i++) {
        int *g = &glob[S * i];
        int disagree = !online_mode && g[R] > 0 && g[N] > 0 && g[E] == 0;
        if (x->agg_rank == 0 && g[E] == 0) {
            x->ncases++;
            if (online_mode)
                ; /* online_check counted what ran */
            else if (g[R] == x->agg_size)
                x->counts[cs[i].coll][cs[i].impl][0]++;
            else if (g[N] == x->agg_size)
                x->counts[cs[i].coll][cs[i].impl][1]++;
        }
        if (g[F] > 0 || g[E] > 0 || g[W] > 0 || disagree) any = 1;
    }
    if (any) {
        /* the reporter: the lowest rank with a native error, else the lowest
         * failing rank, else the lowest warning rank, else agg rank 0 */
        const int P = x->agg_size, me = x->agg_rank;
        for (int i = 0; i < n; i++) loc[i] = rs[i].nerr ? me : rs[i].fail ? P + me : rs[i].warn ? 2 * P + me : INT_MAX;
        PMPI_Allreduce(loc, glob + S * n, n, MPI_INT, MPI_MIN, x->agg);
        for (int i = 0; i < n; i++) {
            int *g = &glob[S * i], key = glob[S * n + i];
            int disagree = !online_mode && g[R] > 0 && g[N] > 0 && g[E] == 0;
            if (!(g[F] > 0 || g[E] > 0 || g[W] > 0 || disagree)) continue;
            const char *kind = g[E] > 0 ? "NOTE (native error, case skipped)" : g[F] > 0 || disagree ? "FAIL" : "WARN";
            int reporter = key == INT_MAX ? 0 : key % P;
            const tcase *c = &cs[i];
            if (me == 0) {
                if (kind[0] == 'F')
                    x->nfail++;
                else if (kind[0] == 'N')
                    x->nnative_err++;
                else
                    x->nwarn++;
            }
            if (me != reporter) continue;
            if (kind[0] != 'F' && ++x->notes > MAX_NOTES) continue;
            char rootbuf[32], dis[128] = "", who[96] = "";
            if (disagree)
                snprintf(dis, sizeof dis, " ranks disagree: %d ran the mock-up, %d fell back to native;", g[R], g[N]);
            int k = g[E] > 0 ? g[E] : g[F] > 0 ? g[F] : g[W];
            if (g[F] > 0 || g[E] > 0 || g[W] > 0)
                snprintf(who, sizeof who, " | rank %d (%d of %d ranks %s) ", x->rank, k, P,
                         g[E] > 0   ? "with a native error"
                         : g[F] > 0 ? "wrong"
                                    : "with a warning");
            ctx_log(x, "%s %s impl=%s comm=%s size=%d%s root=%s type=%s count=%lld in_place=%d op=%s%s%s%s", kind,
                    colls[c->coll].name, impl_names[c->coll][c->impl], x->name, x->size,
                    x->use_c ? " (_c entry point)" : "", root_str(x, c, rootbuf, sizeof rootbuf), type_str(c),
                    (long long)c->n, c->in_place, colls[c->coll].reduction ? reds[c->sel].opname : "-", who,
                    who[0] && rs[i].text ? rs[i].text : "", dis);
        }
    }
    for (int i = 0; i < n; i++) free(rs[i].text);
    free(loc);
    free(glob);
}

static void run_list(ctx *x, const tcase *cs, int n)
{
    cres *rs = calloc((size_t)n + 1, sizeof *rs);
    for (int i = 0; i < n; i++) run_case(x, &cs[i], &rs[i]);
    agree_block(x, cs, rs, n);
    free(rs);
}

/* ---------------------------------------------------------------- the matrix */

/* Levels of the matrix: FULL on MPI_COMM_WORLD and MPI_COMM_SELF, MEDIUM on the
 * split halves, DUP on the duplicate, SMALL per thread, LARGECOUNT for _c. */
enum { L_FULL, L_MEDIUM, L_DUP, L_SMALL, L_LARGECOUNT };

typedef struct {
    tcase *v;
    int n, cap;
} caselist;

static void push(caselist *l, tcase c)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 256;
        l->v = realloc(l->v, (size_t)l->cap * sizeof *l->v);
    }
    c.seq = (unsigned)l->n;
    l->v[l->n++] = c;
}

#define LARGE 20000 /* base elements (ints) of the large case */

static int contains(const int *a, int n, int v)
{
    for (int i = 0; i < n; i++)
        if (a[i] == v) return 1;
    return 0;
}

/* The cases of one collective and implementation on a communicator of size p;
 * identical on every rank. Rooted collectives: a core set (the types most
 * likely to break, counts 0 7 1001) runs at every root; every other
 * (type, count) runs at one root, rotating over the ranks. */
static void build_cases(caselist *l, int coll, int impl, int p, int level)
{
    static const int full_counts[] = {0, 1, 3, 7, 1001};
    static const int medium_counts[] = {0, 7, 1001};
    static const int dup_counts[] = {1, 1001};
    static const int small_counts[] = {7};
    static const int lc_counts[] = {7, 1001};
    static const int core_counts[] = {0, 7, 1001};
    static const int core_pairs[] = {P_INT, P_VEC, P_MIXED};
    static const int core_reds[] = {R_INT_SUM, R_DI_MINLOC, R_MATGAP_NONCOMM};
    const int *counts;
    int ncounts;
    switch (level) {
    case L_FULL: counts = full_counts, ncounts = 5; break;
    case L_MEDIUM: counts = medium_counts, ncounts = 3; break;
    case L_DUP: counts = dup_counts, ncounts = 2; break;
    case L_SMALL: counts = small_counts, ncounts = 1; break;
    default: counts = lc_counts, ncounts = 2; break;
    }
    const int red = colls[coll].reduction, rooted = colls[coll].rooted;
    int sels[(int)NREDS + (int)NPAIRS], nsel = 0;
    if (level == L_FULL || level == L_MEDIUM) {
        for (int i = 0; i < (red ? (int)NREDS : (int)NPAIRS); i++) sels[nsel++] = i;
    } else if (red) {
        static const int dup_r[] = {R_INT_SUM, R_VEC_UCOMM, R_MATGAP_NONCOMM};
        static const int small_r[] = {R_INT_SUM, R_MATGAP_NONCOMM};
        static const int lc_r[] = {R_INT_SUM, R_MAT_NONCOMM};
        const int *src = level == L_DUP ? dup_r : level == L_SMALL ? small_r : lc_r;
        int k = level == L_DUP ? 3 : 2;
        for (int i = 0; i < k; i++) sels[nsel++] = src[i];
    } else {
        static const int dup_p[] = {P_INT, P_VEC, P_MIXED};
        static const int small_p[] = {P_INT, P_MIXED};
        static const int lc_p[] = {P_INT, P_VEC};
        const int *src = level == L_DUP ? dup_p : level == L_SMALL ? small_p : lc_p;
        int k = level == L_DUP ? 3 : 2;
        for (int i = 0; i < k; i++) sels[nsel++] = src[i];
    }
    int rot = 0; /* rotating root */
    for (int si = 0; si < nsel; si++) {
        int s = sels[si];
#ifdef MPICH
        /* MPICH's non-commutative Reduce_scatter_block allocates count x true_extent
         * for its temporary buffer and overflows it when extent > true_extent
         * (ASan, MPICH 5.0.2): the native reference itself is broken there. */
        if (coll == C_RSB && s == R_MATGAP_NONCOMM) continue;
#endif
        int nbase = red                               ? T(reds[s].type)->nbase
                    : (s == P_VEC || s == P_INT_VEC)  ? 2
                    : (s == P_C3_INT || s == P_MIXED) ? 3
                                                      : 1;
        int large = level == L_FULL && (red ? (s == R_INT_SUM || s == R_MAT_NONCOMM || s == R_DI_MINLOC)
                                            : (s == P_INT || s == P_VEC || s == P_MIXED));
        int core = red ? contains(core_reds, 3, s) : contains(core_pairs, 3, s);
        for (int ci = 0; ci < ncounts + large; ci++) {
            MPI_Count n = ci < ncounts ? counts[ci] : LARGE / nbase;
            int r0 = 0, r1 = 1; /* roots [r0, r1) */
            if (rooted && core && level == L_FULL && ci < ncounts && contains(core_counts, 3, (int)n))
                r0 = 0, r1 = p;
            else if (rooted)
                r0 = rot++ % p, r1 = r0 + 1;
            for (int root = r0; root < r1; root++)
                for (int ip = 0; ip <= 1; ip++) {
                    /* in place uses only the receive side: the cross-type pairs add nothing there */
                    if (ip && (coll == C_BCAST || (!red && (s == P_C3_INT || s == P_INT_VEC)))) continue;
                    tcase c = {coll, impl, rooted ? root : -1, s, n, ip, 0};
                    push(l, c);
                }
        }
    }
}

static void run_block(ctx *x, int coll, int impl, int level)
{
    caselist l = {0};
    build_cases(&l, coll, impl, x->size, level);
    run_list(x, l.v, l.n);
    free(l.v);
}

static int force(int coll, int impl)
{
    forced[coll] = impl_names[coll][impl];
    int rc = mg_tune_force(colls[coll].name, impl_names[coll][impl]);
    if (rc != MG_TUNE_SUCCESS) {
        fprintf(stderr, "FAIL mg_tune_force(\"%s\", \"%s\") = %d (%s)\n", colls[coll].name, impl_names[coll][impl], rc,
                mg_tune_strerror(rc));
        return 1;
    }
    return 0;
}

/* Rank 0 of ctl prints the failure lines of every rank's contexts; clears them. */
static void flush_failures(ctx **xs, int nx, MPI_Comm ctl)
{
    size_t len = 0;
    for (int i = 0; i < nx; i++) len += xs[i]->loglen;
    char *mine = malloc(len + 1);
    size_t o = 0;
    for (int i = 0; i < nx; i++) {
        if (xs[i]->loglen) memcpy(mine + o, xs[i]->log, xs[i]->loglen);
        o += xs[i]->loglen;
        xs[i]->loglen = 0;
    }
    int r, p, mylen = (int)len;
    MPI_Comm_rank(ctl, &r);
    MPI_Comm_size(ctl, &p);
    int *lens = malloc((size_t)p * sizeof(int)), *displs = malloc((size_t)p * sizeof(int));
    PMPI_Gather(&mylen, 1, MPI_INT, lens, 1, MPI_INT, 0, ctl);
    int total = 0;
    if (r == 0)
        for (int i = 0; i < p; i++) displs[i] = total, total += lens[i];
    char *all = malloc((size_t)total + 1);
    PMPI_Gatherv(mine, mylen, MPI_CHAR, all, lens, displs, MPI_CHAR, 0, ctl);
    if (r == 0 && total > 0) {
        fwrite(all, 1, (size_t)total, stdout);
        fflush(stdout);
    }
    free(all);
    free(lens);
    free(displs);
    free(mine);
}

static void ctx_init(ctx *x, MPI_Comm comm, MPI_Comm agg, const char *name, int id)
{
    memset(x, 0, sizeof *x);
    x->comm = comm;
    x->agg = agg;
    snprintf(x->name, sizeof x->name, "%s", name);
    x->id = id;
    MPI_Comm_test_inter(comm, &x->inter);
    MPI_Comm_rank(comm, &x->rank);
    MPI_Comm_size(comm, &x->size);
    x->remote_size = x->size;
    if (x->inter) MPI_Comm_remote_size(comm, &x->remote_size);
    MPI_Comm_rank(agg, &x->agg_rank);
    MPI_Comm_size(agg, &x->agg_size);
    x->must_native = x->inter || x->size == 1;
}

/* ---------------------------------------------------------------- threads */

typedef struct {
    ctx *x;
} thread_arg;

static void *thread_main(void *v)
{
    ctx *x = ((thread_arg *)v)->x;
    for (int coll = 0; coll < NCOLL; coll++) {
        int impl = 0;
        for (int i = 0; i < nimpl[coll]; i++)
            if (strcmp(impl_names[coll][i], forced[coll]) == 0) impl = i;
        run_block(x, coll, impl, L_SMALL);
    }
    return NULL;
}

/* ---------------------------------------------------------------- online mode */

/* Every collective's cases of `level` on x, the list run `passes` times over (in
 * one order on every rank, as MPI wants the calls of a communicator). */
static void online_block(ctx *x, int level, int passes)
{
    for (int coll = 0; coll < NCOLL; coll++) {
        caselist l = {0};
        build_cases(&l, coll, 0, x->size, level);
        for (int k = 0; k < passes; k++) run_list(x, l.v, l.n);
        free(l.v);
    }
}

static void *online_thread(void *v)
{
    online_block(((thread_arg *)v)->x, L_SMALL, ONLINE_PASSES);
    return NULL;
}

/* The report of rank 0 of world: its #@tune_online lines, and how many of them settled on a mock-up. */
static void online_report_lines(long *lines, long *on_mockup)
{
    *lines = *on_mockup = 0;
    FILE *f = tmpfile();
    if (!f) return;
    if (mg_tune_write_report(f) == MG_TUNE_SUCCESS) {
        rewind(f);
        char line[4096];
        while (fgets(line, sizeof line, f))
            if (strncmp(line, "#@tune_online[", 14) == 0) {
                (*lines)++;
                const char *ch = strstr(line, "]=chosen=");
                if (ch && strncmp(ch + 9, "default ", 8) != 0 && strncmp(ch + 9, "- ", 2) != 0) (*on_mockup)++;
            }
    }
    fclose(f);
}

/* A user sum of the ints of any int-only datatype. */
static void op_intsum(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    int size;
    PMPI_Type_size(*dt, &size);
    for (long i = 0; i < (long)*len * (size / (int)sizeof(int)); i++) ((int *)inout)[i] += ((const int *)in)[i];
}

/* Reductions whose datatype and operation handles differ between the ranks: the odd ranks take turns
 * between two equal datatypes and two equal operations, the even ones keep one of each. MPI asks for the
 * same datatype and operation, not the same handles, so each key must be the same on every rank: each
 * call's result and its implementation, agreed over the ranks, are checked. Returns the failures (on
 * every rank). */
static long online_fresh_handles(MPI_Comm comm)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    enum { N = 100, CALLS = 120 };
    MPI_Datatype types[2];
    MPI_Op ops[2];
    for (int k = 0; k < 2; k++) {
        MPI_Type_contiguous(2, MPI_INT, &types[k]);
        MPI_Type_commit(&types[k]);
        MPI_Op_create(op_intsum, 1, &ops[k]);
    }
    int in[2 * N], out[2 * N];
    long bad = 0, mockups = 0;
    for (int call = 0; call < CALLS; call++) {
        MPI_Datatype t = types[rank % 2 ? call % 2 : 0];
        MPI_Op op = ops[rank % 2 ? call % 2 : 0];
        for (int i = 0; i < 2 * N; i++) in[i] = rank * 1000 + i + call;
        MPI_Allreduce(in, out, N, t, op, comm);
        const char *last = mg_tune_last_impl("allreduce");
        int idx = -1;
        for (int m = 0; last && m < nimpl[C_ALLREDUCE]; m++)
            if (strcmp(last, impl_names[C_ALLREDUCE][m]) == 0) idx = m;
        int mm[2] = {idx, -idx}, agreed[2];
        PMPI_Allreduce(mm, agreed, 2, MPI_INT, MPI_MAX, comm);
        if (agreed[0] != -agreed[1]) bad++;
        mockups += idx > 0;
        for (int i = 0; i < 2 * N; i++)
            if (out[i] != 1000 * (size * (size - 1) / 2) + size * (i + call)) bad++;
    }
    for (int k = 0; k < 2; k++) {
        MPI_Type_free(&types[k]);
        MPI_Op_free(&ops[k]);
    }
    long all[2] = {bad, mockups}, sum[2];
    PMPI_Allreduce(all, sum, 2, MPI_LONG, MPI_SUM, comm);
    if (rank == 0)
        printf("phase %-16s %ld wrong values or disagreements, %ld calls ran a mock-up%s\n", "fresh handles",
               sum[0], sum[1], sum[0] || (size > 1 && sum[1] == 0) ? "   <- FAIL" : "");
    return sum[0] || (size > 1 && sum[1] == 0) ? 1 : 0;
}

/* A communicator per step, freed after it: a few steps explore (20 calls), the rest call once. Each
 * call's result is checked; the freed communicators' keys leave the library with their report lines,
 * which stay up to a bound: the report must end with the count of those left out. Returns the
 * failures (on every rank). */
static long online_churn(void)
{
    enum { STEPS = 4000, EXPLORING = 8, CALLS = 40 };
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long bad = 0;
    for (int step = 0; step < STEPS; step++) {
        MPI_Comm c;
        MPI_Comm_dup(MPI_COMM_WORLD, &c);
        for (int k = 0; k < (step < EXPLORING ? CALLS : 1); k++) {
            int in[3] = {rank, step, k}, out[3];
            MPI_Allreduce(in, out, 3, MPI_INT, MPI_SUM, c);
            bad += out[0] != size * (size - 1) / 2 || out[1] != size * step || out[2] != size * k;
        }
        MPI_Comm_free(&c);
    }
    long left_out = -1;
    FILE *f = tmpfile();
    if (f && mg_tune_write_report(f) == MG_TUNE_SUCCESS) {
        rewind(f);
        char line[4096];
        while (fgets(line, sizeof line, f))
            if (strncmp(line, "#@tune_online_left_out=", 23) == 0) left_out = atol(line + 23);
    }
    if (f) fclose(f);
    long all = bad, sum = 0;
    PMPI_Allreduce(&all, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    int fail = sum > 0 || (size > 1 && left_out <= 0);
    if (rank == 0)
        printf("phase %-16s %d communicators made and freed: %ld wrong values, %ld keys left out of the report%s\n",
               "churn", STEPS, sum, left_out, fail ? "   <- FAIL" : "");
    return fail;
}

/* Online mode's matrix (see the top of the file); returns the setup failures. */
static long online_main(ctx *xs, ctx **all, int nx, MPI_Comm ctl, MPI_Comm split, int provided, int wrank)
{
    long fail = 0;
    if (mg_tune_set_mode(MG_TUNE_ONLINE) != MG_TUNE_SUCCESS || mg_tune_get_mode() != MG_TUNE_ONLINE) {
        if (wrank == 0) printf("FAIL mg_tune_set_mode(MG_TUNE_ONLINE) did not take\n");
        fail++;
    }
    double t = MPI_Wtime();
    /* a fresh communicator: fewer calls per key than the warm-up, all native */
    MPI_Comm fresh;
    MPI_Comm_dup(MPI_COMM_WORLD, &fresh);
    set_eh(fresh);
    ctx_init(&xs[0], fresh, fresh, "dup(MPI_COMM_WORLD), warm-up", 40);
    online_expect_default = 1;
    online_block(&xs[0], L_SMALL, ONLINE_WARMUP_PASSES);
    online_expect_default = 0;
    flush_failures(all, nx, ctl);
    if (wrank == 0) printf("phase %-16s %7.1f s\n", "warm-up", MPI_Wtime() - t);

    struct {
        MPI_Comm comm;
        const char *name;
        int level, id;
    } phases[] = {
        {MPI_COMM_WORLD, "MPI_COMM_WORLD", L_DUP, 41},
        {split, wrank % 2 ? "split(odd ranks)" : "split(even ranks)", L_SMALL, 42 + wrank % 2},
        {MPI_COMM_SELF, "MPI_COMM_SELF", L_SMALL, 200 + wrank},
    };
    for (int ph = 0; ph < 3; ph++) {
        t = MPI_Wtime();
        ctx_init(&xs[1 + ph], phases[ph].comm, phases[ph].comm, phases[ph].name, phases[ph].id);
        online_block(&xs[1 + ph], phases[ph].level, ONLINE_PASSES);
        flush_failures(all, nx, ctl);
        if (wrank == 0) printf("phase %-16s %7.1f s\n", phases[ph].name, MPI_Wtime() - t);
    }
#if MG_TEST_C
    t = MPI_Wtime();
    ctx_init(&xs[4], MPI_COMM_WORLD, MPI_COMM_WORLD, "MPI_COMM_WORLD", 45);
    xs[4].use_c = 1;
    online_block(&xs[4], L_LARGECOUNT, ONLINE_PASSES);
    flush_failures(all, nx, ctl);
    if (wrank == 0) printf("phase %-16s %7.1f s\n", "_c entry points", MPI_Wtime() - t);
#endif
    if (provided >= MPI_THREAD_MULTIPLE) {
        t = MPI_Wtime();
        MPI_Comm tc[2];
        pthread_t th[2];
        thread_arg ta[2] = {{&xs[5]}, {&xs[6]}};
        for (int k = 0; k < 2; k++) {
            MPI_Comm_dup(MPI_COMM_WORLD, &tc[k]);
            set_eh(tc[k]);
            ctx_init(&xs[5 + k], tc[k], tc[k], k ? "thread1:dup" : "thread0:dup", 46 + k);
        }
        for (int k = 0; k < 2; k++) pthread_create(&th[k], NULL, online_thread, &ta[k]);
        for (int k = 0; k < 2; k++) pthread_join(th[k], NULL);
        flush_failures(all, nx, ctl);
        for (int k = 0; k < 2; k++) MPI_Comm_free(&tc[k]);
        if (wrank == 0) printf("phase %-16s %7.1f s\n", "2 threads", MPI_Wtime() - t);
    }
    fail += online_fresh_handles(MPI_COMM_WORLD) * (wrank == 0);
    fail += online_churn() * (wrank == 0);
    long lines, on_mockup;
    online_report_lines(&lines, &on_mockup);
    int wsize;
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    if (wrank == 0) {
        printf("report: %ld #@tune_online lines, %ld settled on a mock-up\n", lines, on_mockup);
        if (wsize > 1 && (lines == 0 || on_mockup == 0)) {
            printf("FAIL the report shows no online key%s\n", lines ? " settled on a mock-up" : "");
            fail++;
        }
    }
    MPI_Comm_free(&fresh);
    return fail;
}

/* ---------------------------------------------------------------- main */

static int check_library(int wrank)
{
    int bad = 0;
    if (mg_tune_set_mode(MG_TUNE_FORCED) != MG_TUNE_SUCCESS || mg_tune_get_mode() != MG_TUNE_FORCED) {
        if (wrank == 0) printf("FAIL mg_tune_set_mode(MG_TUNE_FORCED) did not take\n");
        bad++;
    }
    if (mg_tune_ncollectives() != NCOLL || (int)NCOLL != (int)MG_NCOLLS) {
        if (wrank == 0) printf("FAIL mg_tune_ncollectives() = %d, want %d\n", mg_tune_ncollectives(), NCOLL);
        bad++;
    }
    if (mg_tune_nimpls("no_such_collective") != -1) {
        if (wrank == 0) printf("FAIL mg_tune_nimpls(\"no_such_collective\") != -1\n");
        bad++;
    }
    for (int c = 0; c < NCOLL; c++) {
        int n = mg_tune_nimpls(colls[c].name);
        if (n < 1 || n > MAXIMPL) {
            if (wrank == 0) printf("FAIL mg_tune_nimpls(\"%s\") = %d\n", colls[c].name, n);
            bad++;
            n = 1;
            impl_names[c][0] = "default";
        }
        nimpl[c] = n;
        for (int i = 0; i < n; i++) {
            const char *s = mg_tune_impl_name(colls[c].name, i);
            impl_names[c][i] = s ? s : "default";
            if (!s || (i == 0 && strcmp(s, "default") != 0)) {
                if (wrank == 0) printf("FAIL mg_tune_impl_name(\"%s\", %d) = %s\n", colls[c].name, i, s ? s : "NULL");
                bad++;
            }
        }
        if (mg_tune_force(colls[c].name, "no_such_mockup") != MG_TUNE_ERR_ARG) {
            if (wrank == 0)
                printf("FAIL mg_tune_force(\"%s\", \"no_such_mockup\") did not return MG_TUNE_ERR_ARG\n",
                       colls[c].name);
            bad++;
        }
    }
    return bad;
}

int main(int argc, char **argv)
{
    int provided = MPI_THREAD_SINGLE;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    verbose = getenv("MG_TEST_VERBOSE") ? atoi(getenv("MG_TEST_VERBOSE")) : 0;
    skip_list = getenv("MG_TEST_SKIP");
    MPI_Comm ctl;
    MPI_Comm_dup(MPI_COMM_WORLD, &ctl);
    int wrank, wsize;
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    set_eh(MPI_COMM_WORLD);
    set_eh(MPI_COMM_SELF);
    make_types();
    make_reds();
    wd_rank = wrank;
    if (getenv("MG_TEST_HANG_S") && atoi(getenv("MG_TEST_HANG_S")) > 0) wd_hang_s = atoi(getenv("MG_TEST_HANG_S"));
    pthread_t wd;
    pthread_create(&wd, NULL, watchdog, NULL);
    install_death_reports();
    long setup_fail = check_library(wrank);
    online_mode = argc > 1 && strcmp(argv[1], "online") == 0;
    double t0 = MPI_Wtime(), tphase = t0;

    /* The communicators of the main matrix. */
    MPI_Comm split, dup;
    MPI_Comm_split(MPI_COMM_WORLD, wrank % 2, wrank, &split);
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    set_eh(split);
    set_eh(dup);
    enum { X_WORLD, X_SPLIT, X_DUP, X_SELF, X_LARGE, X_INTER, X_T0, X_T1, NX };
    static ctx xs[NX];
    ctx *all[NX];
    for (int i = 0; i < NX; i++) all[i] = &xs[i];
    ctx_init(&xs[X_WORLD], MPI_COMM_WORLD, MPI_COMM_WORLD, "MPI_COMM_WORLD", 1);
    ctx_init(&xs[X_SPLIT], split, split, wrank % 2 ? "split(odd ranks)" : "split(even ranks)", 2 + wrank % 2);
    ctx_init(&xs[X_DUP], dup, dup, "dup(MPI_COMM_WORLD)", 4);
    ctx_init(&xs[X_SELF], MPI_COMM_SELF, MPI_COMM_SELF, "MPI_COMM_SELF", 100 + wrank);
    ctx_init(&xs[X_LARGE], MPI_COMM_WORLD, MPI_COMM_WORLD, "MPI_COMM_WORLD", 5);
    xs[X_LARGE].use_c = 1;

    MPI_Comm half = MPI_COMM_NULL, inter = MPI_COMM_NULL;
    if (online_mode) {
        setup_fail += online_main(xs, all, NX, ctl, split, provided, wrank);
        goto summary;
    }
    struct {
        int x, level;
        const char *title;
    } phases[] = {
        {X_WORLD, L_FULL, "MPI_COMM_WORLD"},
        {X_SPLIT, L_MEDIUM, "split"},
        {X_DUP, L_DUP, "dup"},
        {X_SELF, L_MEDIUM, "MPI_COMM_SELF"},
    };
    for (size_t ph = 0; ph < sizeof phases / sizeof phases[0]; ph++) {
        ctx *x = &xs[phases[ph].x];
        for (int coll = 0; coll < NCOLL; coll++) {
            for (int impl = 0; impl < nimpl[coll]; impl++) {
                if (skipped(coll, impl)) continue;
                setup_fail += force(coll, impl);
                /* "default" is the native call behind the interceptor: the medium matrix checks the forwarding */
                int level = phases[ph].level;
                run_block(x, coll, impl, impl == 0 && level == L_FULL ? L_MEDIUM : level);
            }
            force(coll, 0);
            flush_failures(all, NX, ctl);
            if (verbose && wrank == 0)
                printf("block %s %s: %.1f s\n", phases[ph].title, colls[coll].name, MPI_Wtime() - tphase);
        }
        double t = MPI_Wtime();
        if (wrank == 0) printf("phase %-16s %7.1f s\n", phases[ph].title, t - tphase);
        tphase = t;
    }

    /* The large-count entry points. */
#if MG_TEST_C
    for (int coll = 0; coll < NCOLL; coll++) {
        for (int impl = 0; impl < nimpl[coll]; impl++) {
            if (skipped(coll, impl)) continue;
            setup_fail += force(coll, impl);
            run_block(&xs[X_LARGE], coll, impl, L_LARGECOUNT);
        }
        force(coll, 0);
    }
    flush_failures(all, NX, ctl);
    if (wrank == 0)
        printf("phase %-16s %7.1f s (forced mock-ups: %ld calls intercepted, %ld not intercepted)\n", "_c entry points",
               MPI_Wtime() - tphase, xs[X_LARGE].c_intercepted, xs[X_LARGE].c_not_intercepted);
#else
    if (wrank == 0) printf("phase %-16s skipped: this MPI has no MPI_Allreduce_c\n", "_c entry points");
#endif
    tphase = MPI_Wtime();

    /* An intercommunicator between the low and the high half: Bcast, Allreduce
     * and Allgather run natively and exactly whatever is forced. */
    if (wsize >= 2) {
        int g = wrank >= wsize / 2;
        MPI_Comm_split(MPI_COMM_WORLD, g, wrank, &half);
        MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, g ? 0 : wsize / 2, 77, &inter);
        set_eh(inter);
        ctx *x = &xs[X_INTER];
        ctx_init(x, inter, ctl, "intercomm(low half|high half)", 6);
        x->group = g;
        int lo = wsize / 2, hi = wsize - wsize / 2;
        static const int icolls[] = {C_BCAST, C_ALLREDUCE, C_ALLGATHER};
        for (int k = 0; k < 3; k++) {
            int coll = icolls[k];
            for (int impl = 0; impl < nimpl[coll]; impl++) {
                if (skipped(coll, impl)) continue;
                setup_fail += force(coll, impl);
                caselist l = {0};
                static const int icounts[] = {0, 7, 1001};
                for (int ci = 0; ci < 3; ci++) {
                    if (coll == C_BCAST) {
                        for (int grp = 0; grp < 2; grp++)
                            for (int rl = 0; rl < (grp ? hi : lo); rl++) {
                                tcase c = {coll, impl, grp * 1000 + rl, P_MIXED, icounts[ci], 0, 0};
                                push(&l, c);
                                c.sel = P_VEC;
                                push(&l, c);
                            }
                    } else if (coll == C_ALLREDUCE) {
                        tcase c = {coll, impl, -1, R_INT_SUM, icounts[ci], 0, 0};
                        push(&l, c);
                        c.sel = R_MATGAP_NONCOMM;
                        push(&l, c);
                    } else {
                        tcase c = {coll, impl, -1, P_MIXED, icounts[ci], 0, 0};
                        push(&l, c);
                    }
                }
                run_list(x, l.v, l.n);
                free(l.v);
            }
            force(coll, 0);
        }
        flush_failures(all, NX, ctl);
        if (wrank == 0) printf("phase %-16s %7.1f s\n", "intercomm", MPI_Wtime() - tphase);
    }
    tphase = MPI_Wtime();

    /* Two threads on two communicators at once, under every forced implementation. */
    if (provided >= MPI_THREAD_MULTIPLE) {
        MPI_Comm tc[2];
        for (int t = 0; t < 2; t++) {
            MPI_Comm_dup(MPI_COMM_WORLD, &tc[t]);
            set_eh(tc[t]);
            ctx_init(&xs[X_T0 + t], tc[t], tc[t], t ? "thread1:dup" : "thread0:dup", 7 + t);
        }
        int maxn = 0;
        for (int coll = 0; coll < NCOLL; coll++) maxn = nimpl[coll] > maxn ? nimpl[coll] : maxn;
        for (int k = 0; k < maxn; k++) {
            for (int coll = 0; coll < NCOLL; coll++)
                setup_fail += force(coll, k < nimpl[coll] && !skipped(coll, k) ? k : 0);
            pthread_t th[2];
            thread_arg ta[2] = {{&xs[X_T0]}, {&xs[X_T1]}};
            for (int t = 0; t < 2; t++) pthread_create(&th[t], NULL, thread_main, &ta[t]);
            for (int t = 0; t < 2; t++) pthread_join(th[t], NULL);
        }
        for (int coll = 0; coll < NCOLL; coll++) force(coll, 0);
        flush_failures(all, NX, ctl);
        for (int t = 0; t < 2; t++) MPI_Comm_free(&tc[t]);
        if (wrank == 0) printf("phase %-16s %7.1f s\n", "2 threads", MPI_Wtime() - tphase);
    } else if (wrank == 0) {
        printf("phase %-16s skipped: MPI_Init_thread provided level %d, below MPI_THREAD_MULTIPLE\n", "2 threads",
               provided);
    }

summary:;
    /* Summary: per collective and implementation, cases where it ran vs fell back to native. */
    long counts[NCOLL][MAXIMPL][2], gcounts[NCOLL][MAXIMPL][2];
    memset(counts, 0, sizeof counts);
    long cases = 0, fails = 0, gcases = 0, gfails = 0, nerrs = 0, gnerrs = 0, warns = 0, gwarns = 0;
    for (int i = 0; i < NX; i++) {
        for (int c = 0; c < NCOLL; c++)
            for (int m = 0; m < MAXIMPL; m++)
                for (int k = 0; k < 2; k++) counts[c][m][k] += xs[i].counts[c][m][k];
        cases += xs[i].ncases;
        fails += xs[i].nfail;
        nerrs += xs[i].nnative_err;
        warns += xs[i].nwarn;
    }
    PMPI_Reduce(counts, gcounts, NCOLL * MAXIMPL * 2, MPI_LONG, MPI_SUM, 0, ctl);
    PMPI_Reduce(&cases, &gcases, 1, MPI_LONG, MPI_SUM, 0, ctl);
    PMPI_Reduce(&fails, &gfails, 1, MPI_LONG, MPI_SUM, 0, ctl);
    PMPI_Reduce(&nerrs, &gnerrs, 1, MPI_LONG, MPI_SUM, 0, ctl);
    PMPI_Reduce(&warns, &gwarns, 1, MPI_LONG, MPI_SUM, 0, ctl);
    long never = 0;
    if (wrank == 0) {
        printf("\nlibmpiguide-tune exactness, %d processes, %s MPI_THREAD_MULTIPLE\n", wsize,
               provided >= MPI_THREAD_MULTIPLE ? "with" : "without");
        printf("%-22s %-42s %4s %10s %10s\n", "collective", "implementation", "GL", "ran", "native");
        for (int c = 0; c < NCOLL; c++)
            for (int m = 0; m < nimpl[c]; m++) {
                int gl = mg_tune_impl_guideline(colls[c].name, m);
                char gls[16] = "-";
                if (gl > 0) snprintf(gls, sizeof gls, "%d", gl);
                printf("%-22s %-42s %4s %10ld %10ld%s\n", m == 0 ? colls[c].name : "", impl_names[c][m], gls,
                       gcounts[c][m][0], gcounts[c][m][1],
                       skipped(c, m)                                     ? "   <- FAIL: skipped (MG_TEST_SKIP)"
                       : online_mode && m > 0 && gcounts[c][m][0] == 0 ? "   (never chosen)"
                       : m > 0 && gcounts[c][m][0] == 0                  ? "   <- FAIL: never ran"
                                                                         : "");
                if (!online_mode && m > 0 && gcounts[c][m][0] == 0) never++;
            }
        /* online: the library chooses; each collective with mock-ups must have explored some */
        for (int c = 0; online_mode && wsize > 1 && c < NCOLL; c++) {
            long ran = 0;
            for (int m = 1; m < nimpl[c]; m++) ran += gcounts[c][m][0];
            if (nimpl[c] > 1 && ran == 0) {
                printf("FAIL online mode ran no mock-up of %s in the whole matrix\n", colls[c].name);
                never++;
            }
        }
        printf("(a case is one call on one communicator instance; \"native\": the library fell back to the native "
               "call)\n");
        for (int c = 0; c < NCOLL && !online_mode; c++)
            for (int m = 1; m < nimpl[c]; m++)
                if (skipped(c, m))
                    printf("FAIL mock-up %s was skipped (MG_TEST_SKIP)\n", impl_names[c][m]);
                else if (gcounts[c][m][0] == 0)
                    printf("FAIL mock-up %s never ran in the whole matrix (%ld cases, all native fallback): "
                           "a mock-up that always falls back hides its defects\n",
                           impl_names[c][m], gcounts[c][m][1]);
        printf("%ld cases compared, %ld failing, %ld with warnings (WARN: only bytes MPI leaves unspecified differ); "
               "%ld cases skipped because the native call itself returned an error (NOTE); %.1f s\n",
               gcases, gfails, gwarns, gnerrs, MPI_Wtime() - t0);
    }
    long gsetup = 0;
    PMPI_Allreduce(&setup_fail, &gsetup, 1, MPI_LONG, MPI_SUM, ctl);
    int bad = wrank == 0 ? (gfails > 0 || never > 0 || gsetup > 0) : 0;
    PMPI_Bcast(&bad, 1, MPI_INT, 0, ctl);
    if (wrank == 0) printf("%s\n", bad ? "test_tune_exact: FAILED" : "test_tune_exact: OK");

    for (int i = 0; i < NX; i++) free(xs[i].log);
    if (inter != MPI_COMM_NULL) MPI_Comm_free(&inter);
    if (half != MPI_COMM_NULL) MPI_Comm_free(&half);
    MPI_Comm_free(&split);
    MPI_Comm_free(&dup);
    MPI_Comm_free(&ctl);
    MPI_Op_free(&op_ucomm);
    MPI_Op_free(&op_noncomm);
    MPI_Errhandler_free(&test_eh);
    free_types();
    pthread_mutex_lock(&wd_mu);
    wd_stop = 1;
    pthread_mutex_unlock(&wd_mu);
    pthread_join(wd, NULL);
    finished = 1;
    MPI_Finalize();
    return bad ? 1 : 0;
}
