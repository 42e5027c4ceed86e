/* Tests of mg_dt_parse (src/dt/parse.c) against types built by hand.
 *
 * Each good case parses a text and compares the result with the same type built
 * with the MPI constructors: combiner, size, lb and extent, true lb and extent,
 * and the MPI_Pack output of `count` elements read from a buffer of distinct
 * bytes. Each bad case checks the return code and the error message (position
 * and key words). The MPI type constructors and MPI_Type_free are wrapped
 * through the profiling interface (PMPI) to count the live derived types:
 * a successful parse must leave exactly one more (the result) and a failed
 * one none, so intermediate types cannot leak on any path.
 *
 * Uses only MPI and mg_dt_parse. Exit status: number of failures (capped). */
#include "mpiguide/dt.h"

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;
static long live_types; /* derived types created minus freed (wrapped calls) */

#define FAIL(label, ...)                      \
    do {                                      \
        failures++;                           \
        fprintf(stderr, "FAIL [%s] ", label); \
        fprintf(stderr, __VA_ARGS__);         \
        fprintf(stderr, "\n");                \
    } while (0)

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "test_dt_parse: out of memory\n");
        exit(2);
    }
    return p;
}

/* ------------------------------------------------------------ PMPI counting */

#define COUNTED(call)                         \
    do {                                      \
        int rc_ = (call);                     \
        if (rc_ == MPI_SUCCESS) live_types++; \
        return rc_;                           \
    } while (0)

int MPI_Type_contiguous(int count, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    COUNTED(PMPI_Type_contiguous(count, oldtype, newtype));
}
int MPI_Type_vector(int count, int blocklength, int stride, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    COUNTED(PMPI_Type_vector(count, blocklength, stride, oldtype, newtype));
}
int MPI_Type_create_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    COUNTED(PMPI_Type_create_hvector(count, blocklength, stride, oldtype, newtype));
}
int MPI_Type_indexed(int count, const int array_of_blocklengths[], const int array_of_displacements[],
                     MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    COUNTED(PMPI_Type_indexed(count, array_of_blocklengths, array_of_displacements, oldtype, newtype));
}
int MPI_Type_create_hindexed(int count, const int array_of_blocklengths[], const MPI_Aint array_of_displacements[],
                             MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    COUNTED(PMPI_Type_create_hindexed(count, array_of_blocklengths, array_of_displacements, oldtype, newtype));
}
int MPI_Type_create_indexed_block(int count, int blocklength, const int array_of_displacements[], MPI_Datatype oldtype,
                                  MPI_Datatype *newtype)
{
    COUNTED(PMPI_Type_create_indexed_block(count, blocklength, array_of_displacements, oldtype, newtype));
}
int MPI_Type_create_hindexed_block(int count, int blocklength, const MPI_Aint array_of_displacements[],
                                   MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    COUNTED(PMPI_Type_create_hindexed_block(count, blocklength, array_of_displacements, oldtype, newtype));
}
int MPI_Type_create_struct(int count, const int array_of_blocklengths[], const MPI_Aint array_of_displacements[],
                           const MPI_Datatype array_of_types[], MPI_Datatype *newtype)
{
    COUNTED(PMPI_Type_create_struct(count, array_of_blocklengths, array_of_displacements, array_of_types, newtype));
}
int MPI_Type_create_resized(MPI_Datatype oldtype, MPI_Aint lb, MPI_Aint extent, MPI_Datatype *newtype)
{
    COUNTED(PMPI_Type_create_resized(oldtype, lb, extent, newtype));
}
int MPI_Type_create_subarray(int ndims, const int array_of_sizes[], const int array_of_subsizes[],
                             const int array_of_starts[], int order, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    COUNTED(
        PMPI_Type_create_subarray(ndims, array_of_sizes, array_of_subsizes, array_of_starts, order, oldtype, newtype));
}
int MPI_Type_create_darray(int size, int rank, int ndims, const int array_of_gsizes[], const int array_of_distribs[],
                           const int array_of_dargs[], const int array_of_psizes[], int order, MPI_Datatype oldtype,
                           MPI_Datatype *newtype)
{
    COUNTED(PMPI_Type_create_darray(size, rank, ndims, array_of_gsizes, array_of_distribs, array_of_dargs,
                                    array_of_psizes, order, oldtype, newtype));
}
int MPI_Type_dup(MPI_Datatype oldtype, MPI_Datatype *newtype) { COUNTED(PMPI_Type_dup(oldtype, newtype)); }
#ifdef MG_HAVE_MPI_LARGE_COUNT
/* the MPI-4 large-count constructors the parser calls beyond int */
int MPI_Type_contiguous_c(MPI_Count count, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    COUNTED(PMPI_Type_contiguous_c(count, oldtype, newtype));
}
int MPI_Type_vector_c(MPI_Count count, MPI_Count blocklength, MPI_Count stride, MPI_Datatype oldtype,
                      MPI_Datatype *newtype)
{
    COUNTED(PMPI_Type_vector_c(count, blocklength, stride, oldtype, newtype));
}
int MPI_Type_create_hvector_c(MPI_Count count, MPI_Count blocklength, MPI_Count stride, MPI_Datatype oldtype,
                              MPI_Datatype *newtype)
{
    COUNTED(PMPI_Type_create_hvector_c(count, blocklength, stride, oldtype, newtype));
}
int MPI_Type_indexed_c(MPI_Count count, const MPI_Count array_of_blocklengths[],
                       const MPI_Count array_of_displacements[], MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    COUNTED(PMPI_Type_indexed_c(count, array_of_blocklengths, array_of_displacements, oldtype, newtype));
}
int MPI_Type_create_hindexed_c(MPI_Count count, const MPI_Count array_of_blocklengths[],
                               const MPI_Count array_of_displacements[], MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    COUNTED(PMPI_Type_create_hindexed_c(count, array_of_blocklengths, array_of_displacements, oldtype, newtype));
}
int MPI_Type_create_indexed_block_c(MPI_Count count, MPI_Count blocklength, const MPI_Count array_of_displacements[],
                                    MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    COUNTED(PMPI_Type_create_indexed_block_c(count, blocklength, array_of_displacements, oldtype, newtype));
}
int MPI_Type_create_hindexed_block_c(MPI_Count count, MPI_Count blocklength, const MPI_Count array_of_displacements[],
                                     MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    COUNTED(PMPI_Type_create_hindexed_block_c(count, blocklength, array_of_displacements, oldtype, newtype));
}
int MPI_Type_create_struct_c(MPI_Count count, const MPI_Count array_of_blocklengths[],
                             const MPI_Count array_of_displacements[], const MPI_Datatype array_of_types[],
                             MPI_Datatype *newtype)
{
    COUNTED(PMPI_Type_create_struct_c(count, array_of_blocklengths, array_of_displacements, array_of_types, newtype));
}
int MPI_Type_create_subarray_c(int ndims, const MPI_Count array_of_sizes[], const MPI_Count array_of_subsizes[],
                               const MPI_Count array_of_starts[], int order, MPI_Datatype oldtype,
                               MPI_Datatype *newtype)
{
    COUNTED(PMPI_Type_create_subarray_c(ndims, array_of_sizes, array_of_subsizes, array_of_starts, order, oldtype,
                                        newtype));
}
int MPI_Type_create_darray_c(int size, int rank, int ndims, const MPI_Count array_of_gsizes[],
                             const int array_of_distribs[], const int array_of_dargs[], const int array_of_psizes[],
                             int order, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    COUNTED(PMPI_Type_create_darray_c(size, rank, ndims, array_of_gsizes, array_of_distribs, array_of_dargs,
                                      array_of_psizes, order, oldtype, newtype));
}
#endif
int MPI_Type_free(MPI_Datatype *datatype)
{
    int rc = PMPI_Type_free(datatype);
    if (rc == MPI_SUCCESS) live_types--;
    return rc;
}

/* ------------------------------------------------------------ reference builders */

/* Each builder consumes its old type(s): a derived one is freed once used. */
/* (a type made by a `_c` constructor is queried with the `_c` envelope call) */
static int combiner_of(MPI_Datatype t)
{
    int comb;
#ifdef MG_HAVE_MPI_LARGE_COUNT
    MPI_Count ni, na, nc, nd;
    MPI_Type_get_envelope_c(t, &ni, &na, &nc, &nd, &comb);
#else
    int ni, na, nd;
    MPI_Type_get_envelope(t, &ni, &na, &nd, &comb);
#endif
    return comb;
}
static int is_named(MPI_Datatype t) { return combiner_of(t) == MPI_COMBINER_NAMED; }
static void drop(MPI_Datatype t)
{
    if (!is_named(t)) MPI_Type_free(&t);
}
static MPI_Datatype contig(int n, MPI_Datatype o)
{
    MPI_Datatype t;
    MPI_Type_contiguous(n, o, &t);
    drop(o);
    return t;
}
static MPI_Datatype vector(int n, int b, int s, MPI_Datatype o)
{
    MPI_Datatype t;
    MPI_Type_vector(n, b, s, o, &t);
    drop(o);
    return t;
}
static MPI_Datatype hvector(int n, int b, MPI_Aint s, MPI_Datatype o)
{
    MPI_Datatype t;
    MPI_Type_create_hvector(n, b, s, o, &t);
    drop(o);
    return t;
}
static MPI_Datatype indexed(int n, const int *b, const int *d, MPI_Datatype o)
{
    MPI_Datatype t;
    MPI_Type_indexed(n, b, d, o, &t);
    drop(o);
    return t;
}
static MPI_Datatype hindexed(int n, const int *b, const MPI_Aint *d, MPI_Datatype o)
{
    MPI_Datatype t;
    MPI_Type_create_hindexed(n, b, d, o, &t);
    drop(o);
    return t;
}
static MPI_Datatype indexed_block(int n, int b, const int *d, MPI_Datatype o)
{
    MPI_Datatype t;
    MPI_Type_create_indexed_block(n, b, d, o, &t);
    drop(o);
    return t;
}
static MPI_Datatype hindexed_block(int n, int b, const MPI_Aint *d, MPI_Datatype o)
{
    MPI_Datatype t;
    MPI_Type_create_hindexed_block(n, b, d, o, &t);
    drop(o);
    return t;
}
static MPI_Datatype strct(int n, const int *b, const MPI_Aint *d, MPI_Datatype *ty)
{
    MPI_Datatype t;
    MPI_Type_create_struct(n, b, d, ty, &t);
    for (int i = 0; i < n; i++) drop(ty[i]);
    return t;
}
static MPI_Datatype resized(MPI_Aint lb, MPI_Aint ext, MPI_Datatype o)
{
    MPI_Datatype t;
    MPI_Type_create_resized(o, lb, ext, &t);
    drop(o);
    return t;
}
static MPI_Datatype subarray(int nd, const int *sz, const int *sub, const int *st, int order, MPI_Datatype o)
{
    MPI_Datatype t;
    MPI_Type_create_subarray(nd, sz, sub, st, order, o, &t);
    drop(o);
    return t;
}
static MPI_Datatype darray(int size, int rank, int nd, const int *gs, const int *dist, const int *dargs, const int *ps,
                           int order, MPI_Datatype o)
{
    MPI_Datatype t;
    MPI_Type_create_darray(size, rank, nd, gs, dist, dargs, ps, order, o, &t);
    drop(o);
    return t;
}
static MPI_Datatype dup(MPI_Datatype o)
{
    MPI_Datatype t;
    MPI_Type_dup(o, &t);
    drop(o);
    return t;
}

/* ------------------------------------------------------------ comparison */

static unsigned char pattern(size_t k) { return (unsigned char)(k * 251u + (k >> 8) * 7u + 1u); }

/* MPI_Pack `count` elements of t from a buffer of distinct bytes that covers
 * their true extent. Returns a malloc'ed copy of the packed bytes, *n its length. */
static unsigned char *pack(MPI_Datatype t, int count, int *n)
{
    MPI_Count size, lb, ext, tlb, text;
    MPI_Type_size_x(t, &size);
    MPI_Type_get_extent_x(t, &lb, &ext);
    MPI_Type_get_true_extent_x(t, &tlb, &text);
    MPI_Count lo = 0, hi = 0;
    /* An empty type touches nothing (and Open MPI reports a true lb of
     * MPI_COUNT max for some empty types). */
    for (int i = 0; size > 0 && i < count; i++) {
        MPI_Count a = (MPI_Count)i * ext + tlb, b = a + text;
        if (i == 0 || a < lo) lo = a;
        if (i == 0 || b > hi) hi = b;
    }
    size_t len = (size_t)(hi - lo) + 1;
    unsigned char *buf = xmalloc(len);
    for (size_t k = 0; k < len; k++) buf[k] = pattern(k);
    /* element 0 starts at buf - lo */
    void *base = (void *)((uintptr_t)buf - (uintptr_t)lo);
    int psize = 0, pos = 0;
    MPI_Pack_size(count, t, MPI_COMM_SELF, &psize);
    unsigned char *out = xmalloc((size_t)psize + 1);
    MPI_Pack(base, count, t, out, psize, &pos, MPI_COMM_SELF);
    free(buf);
    *n = pos;
    return out;
}

/* Parse `text`, compare with `ref` (consumed), expect the top combiner `comb`.
 * count: elements to pack (0: compare properties only). */
static void same(const char *text, MPI_Datatype ref, int comb, int count)
{
    char err[256];
    MPI_Datatype t = MPI_DATATYPE_NULL;
    long live0 = live_types;
    int rc = mg_dt_parse(text, &t, err, sizeof err);
    if (rc != MG_DT_SUCCESS) {
        FAIL(text, "rc %d: %s", rc, err);
        drop(ref);
        return;
    }
    if (live_types != live0 + 1)
        FAIL(text, "%ld live derived types after the parse, expected %ld (leak or double free)", live_types, live0 + 1);
    if (err[0] != '\0') FAIL(text, "errbuf not cleared on success: %s", err);
    int c = combiner_of(t);
    if (c != comb) FAIL(text, "combiner %d, expected %d", c, comb);

    MPI_Count s1, s2, lb1, lb2, e1, e2, tl1, tl2, te1, te2;
    MPI_Type_size_x(t, &s1);
    MPI_Type_size_x(ref, &s2);
    MPI_Type_get_extent_x(t, &lb1, &e1);
    MPI_Type_get_extent_x(ref, &lb2, &e2);
    MPI_Type_get_true_extent_x(t, &tl1, &te1);
    MPI_Type_get_true_extent_x(ref, &tl2, &te2);
    if (s1 != s2) FAIL(text, "size %lld, expected %lld", (long long)s1, (long long)s2);
    if (lb1 != lb2 || e1 != e2)
        FAIL(text, "lb/extent %lld/%lld, expected %lld/%lld", (long long)lb1, (long long)e1, (long long)lb2,
             (long long)e2);
    if (tl1 != tl2 || te1 != te2)
        FAIL(text, "true lb/extent %lld/%lld, expected %lld/%lld", (long long)tl1, (long long)te1, (long long)tl2,
             (long long)te2);

    if (count > 0 && s1 == s2 && lb1 == lb2 && e1 == e2 && tl1 == tl2 && te1 == te2) {
        MPI_Type_commit(&t);
        int named = is_named(ref);
        if (!named) MPI_Type_commit(&ref);
        int n1, n2;
        unsigned char *p1 = pack(t, count, &n1), *p2 = pack(ref, count, &n2);
        if (n1 != n2 || memcmp(p1, p2, (size_t)n1) != 0) FAIL(text, "MPI_Pack output differs (%d vs %d bytes)", n1, n2);
        if ((MPI_Count)n1 != s1 * count) FAIL(text, "packed %d bytes, expected %lld", n1, (long long)(s1 * count));
        free(p1);
        free(p2);
    }
    MPI_Type_free(&t);
    drop(ref);
}

/* ------------------------------------------------------------ good cases */

static void test_basic(void)
{
    const struct {
        const char *name;
        MPI_Datatype type;
    } basics[] = {
        {"char", MPI_CHAR},
        {"signed_char", MPI_SIGNED_CHAR},
        {"unsigned_char", MPI_UNSIGNED_CHAR},
        {"byte", MPI_BYTE},
        {"short", MPI_SHORT},
        {"unsigned_short", MPI_UNSIGNED_SHORT},
        {"int", MPI_INT},
        {"unsigned", MPI_UNSIGNED},
        {"long", MPI_LONG},
        {"unsigned_long", MPI_UNSIGNED_LONG},
        {"long_long", MPI_LONG_LONG},
        {"unsigned_long_long", MPI_UNSIGNED_LONG_LONG},
        {"float", MPI_FLOAT},
        {"double", MPI_DOUBLE},
        {"long_double", MPI_LONG_DOUBLE},
        {"wchar", MPI_WCHAR},
        {"c_bool", MPI_C_BOOL},
        {"int8_t", MPI_INT8_T},
        {"int16_t", MPI_INT16_T},
        {"int32_t", MPI_INT32_T},
        {"int64_t", MPI_INT64_T},
        {"uint8_t", MPI_UINT8_T},
        {"uint16_t", MPI_UINT16_T},
        {"uint32_t", MPI_UINT32_T},
        {"uint64_t", MPI_UINT64_T},
        {"aint", MPI_AINT},
        {"offset", MPI_OFFSET},
        {"count", MPI_COUNT},
        {"float_int", MPI_FLOAT_INT},
        {"double_int", MPI_DOUBLE_INT},
        {"long_int", MPI_LONG_INT},
        {"2int", MPI_2INT},
        {"short_int", MPI_SHORT_INT},
        {"long_double_int", MPI_LONG_DOUBLE_INT},
    };
    for (size_t i = 0; i < sizeof basics / sizeof basics[0]; i++) {
        /* a bare basic type comes back as a dup, which the caller frees */
        same(basics[i].name, basics[i].type, MPI_COMBINER_DUP, 3);
        char text[64];
        snprintf(text, sizeof text, "contig(count=2, %s)", basics[i].name);
        same(text, contig(2, basics[i].type), MPI_COMBINER_CONTIGUOUS, 2);
    }
    same("  \t\n double \n", MPI_DOUBLE, MPI_COMBINER_DUP, 1);
}

static void test_constructors(void)
{
    same("contig(count=3, double)", contig(3, MPI_DOUBLE), MPI_COMBINER_CONTIGUOUS, 2);
    same("contig(count=0, int)", contig(0, MPI_INT), MPI_COMBINER_CONTIGUOUS, 2);
    same("vector(count=4, block=2, stride=6, int)", vector(4, 2, 6, MPI_INT), MPI_COMBINER_VECTOR, 3);
    same("vector(count=320000, block=2, stride=6, int)", vector(320000, 2, 6, MPI_INT), MPI_COMBINER_VECTOR, 1);
    same("vector(count=3, block=2, stride=-5, short)", vector(3, 2, -5, MPI_SHORT), MPI_COMBINER_VECTOR, 2);
    same("vector(count=0, block=5, stride=1, int)", vector(0, 5, 1, MPI_INT), MPI_COMBINER_VECTOR, 1);
    same("hvector(count=3, block=1, stride=-24, double)", hvector(3, 1, -24, MPI_DOUBLE), MPI_COMBINER_HVECTOR, 2);
    same("hvector(count=2, block=3, stride=100, char)", hvector(2, 3, 100, MPI_CHAR), MPI_COMBINER_HVECTOR, 3);
    {
        int b[] = {2, 0, 3}, d[] = {5, -2, 10};
        same("indexed(blocks=[2, 0, 3], displs=[5, -2, 10], int)", indexed(3, b, d, MPI_INT), MPI_COMBINER_INDEXED, 2);
        same("indexed(displs=[5,-2,10],blocks=[2,0,3],int)", indexed(3, b, d, MPI_INT), MPI_COMBINER_INDEXED, 2);
        same("indexed(blocks=[], displs=[ ], int)", indexed(0, b, d, MPI_INT), MPI_COMBINER_INDEXED, 1);
    }
    {
        int b[] = {1, 2};
        MPI_Aint d[] = {-16, 40};
        same("hindexed(blocks=[1, 2], displs=[-16, 40], double)", hindexed(2, b, d, MPI_DOUBLE), MPI_COMBINER_HINDEXED,
             2);
        same("hindexed(blocks=[], displs=[], double)", hindexed(0, b, d, MPI_DOUBLE), MPI_COMBINER_HINDEXED, 1);
    }
    {
        int d[] = {0, 7, -3};
        same("indexed_block(block=2, displs=[0, 7, -3], float)", indexed_block(3, 2, d, MPI_FLOAT),
             MPI_COMBINER_INDEXED_BLOCK, 2);
        same("indexed_block(displs=[], block=2, float)", indexed_block(0, 2, d, MPI_FLOAT), MPI_COMBINER_INDEXED_BLOCK,
             1);
    }
    {
        MPI_Aint d[] = {100, 0, -50};
        same("hindexed_block(block=3, displs=[100, 0, -50], short)", hindexed_block(3, 3, d, MPI_SHORT),
             MPI_COMBINER_HINDEXED_BLOCK, 2);
    }
    {
        int b[] = {1, 2, 1};
        MPI_Aint d[] = {0, 8, 24};
        MPI_Datatype ty[] = {MPI_INT, MPI_DOUBLE, MPI_CHAR};
        same("struct(blocks=[1, 2, 1], displs=[0, 8, 24], types=[int, double, char])", strct(3, b, d, ty),
             MPI_COMBINER_STRUCT, 3);
        int ones[] = {1, 1, 1};
        MPI_Datatype ty2[] = {MPI_INT, MPI_DOUBLE, MPI_CHAR};
        same("struct(types=[int, double, char], displs=[0, 8, 24])", strct(3, ones, d, ty2), MPI_COMBINER_STRUCT, 3);
        /* no members: a contiguous type of none (Open MPI crashes on
         * MPI_Type_create_struct with count 0), the same empty typemap */
        same("struct(displs=[], types=[])", contig(0, MPI_BYTE), MPI_COMBINER_CONTIGUOUS, 1);
        same("struct(blocks=[], displs=[], types=[])", contig(0, MPI_BYTE), MPI_COMBINER_CONTIGUOUS, 1);
        /* negative displacements, a zero block */
        int b3[] = {2, 0, 1};
        MPI_Aint d3[] = {-40, 0, 12};
        MPI_Datatype ty3[] = {MPI_SHORT, MPI_DOUBLE, MPI_2INT};
        same("struct(blocks=[2, 0, 1], displs=[-40, 0, 12], types=[short, double, 2int])", strct(3, b3, d3, ty3),
             MPI_COMBINER_STRUCT, 2);
    }
    same("resized(lb=-8, extent=32, int)", resized(-8, 32, MPI_INT), MPI_COMBINER_RESIZED, 3);
    same("resized(extent=12, lb=4, vector(count=2, block=1, stride=3, char))",
         resized(4, 12, vector(2, 1, 3, MPI_CHAR)), MPI_COMBINER_RESIZED, 3);
    {
        int sz[] = {6, 5}, sub[] = {3, 2}, st[] = {1, 2};
        same("subarray(sizes=[6, 5], subsizes=[3, 2], starts=[1, 2], order=c, int)",
             subarray(2, sz, sub, st, MPI_ORDER_C, MPI_INT), MPI_COMBINER_SUBARRAY, 2);
        same("subarray(order=fortran, sizes=[6, 5], subsizes=[3, 2], starts=[1, 2], int)",
             subarray(2, sz, sub, st, MPI_ORDER_FORTRAN, MPI_INT), MPI_COMBINER_SUBARRAY, 2);
        int sz3[] = {4, 3, 5}, sub3[] = {2, 3, 1}, st3[] = {2, 0, 4};
        same("subarray(sizes=[4,3,5], subsizes=[2,3,1], starts=[2,0,4], order=fortran, "
             "double)",
             subarray(3, sz3, sub3, st3, MPI_ORDER_FORTRAN, MPI_DOUBLE), MPI_COMBINER_SUBARRAY, 2);
        int sz1[] = {10}, sub1[] = {10}, st1[] = {0};
        same("subarray(sizes=[10], subsizes=[10], starts=[0], order=c, short)",
             subarray(1, sz1, sub1, st1, MPI_ORDER_C, MPI_SHORT), MPI_COMBINER_SUBARRAY, 2);
    }
    {
        int gs[] = {10, 7}, dist[] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC};
        int dargs[] = {MPI_DISTRIBUTE_DFLT_DARG, 2}, ps[] = {2, 2};
        for (int rank = 0; rank < 4; rank++) {
            char text[256];
            snprintf(text, sizeof text,
                     "darray(size=4, rank=%d, gsizes=[10, 7], distribs=[block, cyclic], "
                     "dargs=[default, 2], psizes=[2, 2], order=c, double)",
                     rank);
            same(text, darray(4, rank, 2, gs, dist, dargs, ps, MPI_ORDER_C, MPI_DOUBLE), MPI_COMBINER_DARRAY, 2);
        }
        int gs3[] = {9, 4, 5};
        int dist3[] = {MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_NONE, MPI_DISTRIBUTE_BLOCK};
        int dargs3[] = {2, MPI_DISTRIBUTE_DFLT_DARG, 3}, ps3[] = {3, 1, 2};
        same("darray(order=fortran, size=6, rank=5, gsizes=[9, 4, 5], "
             "distribs=[cyclic, none, block], dargs=[2, default, 3], psizes=[3, 1, 2], int)",
             darray(6, 5, 3, gs3, dist3, dargs3, ps3, MPI_ORDER_FORTRAN, MPI_INT), MPI_COMBINER_DARRAY, 2);
        int gs1[] = {8}, dist1[] = {MPI_DISTRIBUTE_NONE}, dargs1[] = {MPI_DISTRIBUTE_DFLT_DARG}, ps1[] = {1};
        /* rank 3 owns nothing of a block distribution of 3 over 4 */
        int gs0[] = {3}, dist0[] = {MPI_DISTRIBUTE_BLOCK}, dargs0[] = {MPI_DISTRIBUTE_DFLT_DARG}, ps0[] = {4};
        same("darray(size=4, rank=3, gsizes=[3], distribs=[block], dargs=[default], "
             "psizes=[4], order=c, int)",
             darray(4, 3, 1, gs0, dist0, dargs0, ps0, MPI_ORDER_C, MPI_INT), MPI_COMBINER_DARRAY, 2);
        same("darray(size=1, rank=0, gsizes=[8], distribs=[none], dargs=[default], "
             "psizes=[1], order=c, char)",
             darray(1, 0, 1, gs1, dist1, dargs1, ps1, MPI_ORDER_C, MPI_CHAR), MPI_COMBINER_DARRAY, 2);
    }
    /* 'count' is a keyword of contig and a basic type */
    same("contig(count=2, count)", contig(2, MPI_COUNT), MPI_COMBINER_CONTIGUOUS, 2);
    same("dup(int)", dup(MPI_INT), MPI_COMBINER_DUP, 2);
    same("dup(vector(count=2, block=1, stride=3, double))", dup(vector(2, 1, 3, MPI_DOUBLE)), MPI_COMBINER_DUP, 2);
    same("dup(dup(2int))", dup(dup(MPI_2INT)), MPI_COMBINER_DUP, 2);
}

static void test_nested(void)
{
    {
        /* vector of struct of resized ... */
        int b[] = {1, 1};
        MPI_Aint d[] = {0, 8};
        MPI_Datatype ty[] = {MPI_INT, resized(0, 8, MPI_SHORT)};
        same("vector(count=3, block=1, stride=2, struct(displs=[0, 8], "
             "types=[int, resized(lb=0, extent=8, short)]))",
             vector(3, 1, 2, strct(2, b, d, ty)), MPI_COMBINER_VECTOR, 2);
    }
    {
        int b[] = {2, 1};
        MPI_Aint d[] = {-24, 16};
        int ib[] = {1, 2}, id[] = {3, -1};
        int sz[] = {4, 4}, sub[] = {2, 3}, st[] = {1, 0};
        MPI_Datatype ty[] = {vector(2, 1, -3, MPI_FLOAT),
                             indexed(2, ib, id, subarray(2, sz, sub, st, MPI_ORDER_C, MPI_CHAR))};
        same(" hvector ( count = 2 , block = 1 , stride = -200 ,\n"
             "   struct ( blocks = [ 2 , 1 ] , displs = [ -24 , 16 ] ,\n"
             "     types = [ vector(count=2, block=1, stride=-3, float),\n"
             "               indexed(blocks=[1, 2], displs=[3, -1],\n"
             "                 subarray(sizes=[4, 4], subsizes=[2, 3], starts=[1, 0],\n"
             "                          order=c, char)) ] ) )\n",
             hvector(2, 1, -200, strct(2, b, d, ty)), MPI_COMBINER_HVECTOR, 2);
    }
    {
        int gs[] = {6, 6}, dist[] = {MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_CYCLIC};
        int dargs[] = {1, 2}, ps[] = {2, 1};
        MPI_Aint hd[] = {0, 64};
        same("hindexed_block(block=1, displs=[0, 64], darray(size=2, rank=1, gsizes=[6, 6], "
             "distribs=[cyclic, cyclic], dargs=[1, 2], psizes=[2, 1], order=c, "
             "resized(lb=-2, extent=6, short)))",
             hindexed_block(2, 1, hd, darray(2, 1, 2, gs, dist, dargs, ps, MPI_ORDER_C, resized(-2, 6, MPI_SHORT))),
             MPI_COMBINER_HINDEXED_BLOCK, 2);
    }
}

/* Values beyond int on a stack with the MPI-4 `_c` constructors: the parser
 * calls them (properties only: the types span gigabytes). */
static void test_large_counts(void)
{
#ifdef MG_HAVE_MPI_LARGE_COUNT
    const MPI_Count G = (MPI_Count)1 << 31, H = 3000000000;
    MPI_Datatype t;
    MPI_Type_contiguous_c(G, MPI_CHAR, &t);
    same("contig(count=2147483648, char)", t, MPI_COMBINER_CONTIGUOUS, 0);
    MPI_Type_vector_c(2, H, -H, MPI_CHAR, &t);
    same("vector(count=2, block=3000000000, stride=-3000000000, char)", t, MPI_COMBINER_VECTOR, 0);
    MPI_Type_create_hvector_c(H, 1, 2, MPI_CHAR, &t);
    same("hvector(count=3000000000, block=1, stride=2, char)", t, MPI_COMBINER_HVECTOR, 0);
    MPI_Count bl[2] = {1, H}, el[2] = {-H, 0}, by[2] = {0, 8};
    MPI_Type_indexed_c(2, bl, el, MPI_SHORT, &t);
    same("indexed(blocks=[1, 3000000000], displs=[-3000000000, 0], short)", t, MPI_COMBINER_INDEXED, 0);
    MPI_Type_create_hindexed_c(2, bl, by, MPI_SHORT, &t);
    same("hindexed(blocks=[1, 3000000000], displs=[0, 8], short)", t, MPI_COMBINER_HINDEXED, 0);
    MPI_Type_create_indexed_block_c(2, H, el, MPI_CHAR, &t);
    same("indexed_block(block=3000000000, displs=[-3000000000, 0], char)", t, MPI_COMBINER_INDEXED_BLOCK, 0);
    MPI_Type_create_hindexed_block_c(2, G, by, MPI_CHAR, &t);
    same("hindexed_block(block=2147483648, displs=[0, 8], char)", t, MPI_COMBINER_HINDEXED_BLOCK, 0);
    MPI_Datatype ty[2] = {MPI_INT, MPI_CHAR};
    MPI_Type_create_struct_c(2, bl, by, ty, &t);
    same("struct(blocks=[1, 3000000000], displs=[0, 8], types=[int, char])", t, MPI_COMBINER_STRUCT, 0);
    MPI_Count sz[2] = {H, 4}, sub[2] = {2, 3}, st[2] = {H - 2, 1};
    MPI_Type_create_subarray_c(2, sz, sub, st, MPI_ORDER_C, MPI_CHAR, &t);
    same("subarray(sizes=[3000000000, 4], subsizes=[2, 3], starts=[2999999998, 1], order=c, char)", t,
         MPI_COMBINER_SUBARRAY, 1);
    MPI_Count gs[1] = {H};
    int dist[1] = {MPI_DISTRIBUTE_BLOCK}, dargs[1] = {MPI_DISTRIBUTE_DFLT_DARG}, ps[1] = {2};
    MPI_Type_create_darray_c(2, 1, 1, gs, dist, dargs, ps, MPI_ORDER_C, MPI_CHAR, &t);
    same("darray(size=2, rank=1, gsizes=[3000000000], distribs=[block], dargs=[default], psizes=[2], order=c, char)", t,
         MPI_COMBINER_DARRAY, 0);
#endif
}

static void test_big(void)
{
    /* 64-bit values and limits (properties only: nothing is packed) */
    same("contig(count=2147483647, char)", contig(2147483647, MPI_CHAR), MPI_COMBINER_CONTIGUOUS, 0);
    same("hvector(count=2, block=1, stride=1099511627776, char)", hvector(2, 1, (MPI_Aint)1 << 40, MPI_CHAR),
         MPI_COMBINER_HVECTOR, 0);
    same("resized(lb=-1099511627776, extent=2199023255552, int)",
         resized(-((MPI_Aint)1 << 40), (MPI_Aint)1 << 41, MPI_INT), MPI_COMBINER_RESIZED, 0);
    same("vector(count=1, block=1, stride=-2147483648, int)", vector(1, 1, INT32_MIN, MPI_INT), MPI_COMBINER_VECTOR, 0);
    test_large_counts();

    /* long lists grow dynamically */
    enum { N = 1000, M = 300 };
    static int b[N], d[N], sb[M];
    static MPI_Aint sd[M];
    static MPI_Datatype st[M];
    size_t cap = 64 + (size_t)N * 24;
    char *text = xmalloc(cap);
    size_t n = (size_t)snprintf(text, cap, "indexed(blocks=[");
    for (int i = 0; i < N; i++) {
        b[i] = i % 3;
        d[i] = (i * 37) % 1001 - 500;
        n += (size_t)snprintf(text + n, cap - n, "%s%d", i ? ", " : "", b[i]);
    }
    n += (size_t)snprintf(text + n, cap - n, "], displs=[");
    for (int i = 0; i < N; i++) n += (size_t)snprintf(text + n, cap - n, "%s%d", i ? "," : "", d[i]);
    snprintf(text + n, cap - n, "], int)");
    same(text, indexed(N, b, d, MPI_INT), MPI_COMBINER_INDEXED, 2);

    n = (size_t)snprintf(text, cap, "struct(displs=[");
    for (int i = 0; i < M; i++) {
        sb[i] = 1;
        sd[i] = (MPI_Aint)i * 16 - 800;
        st[i] = (i % 2) ? MPI_DOUBLE : contig(2, MPI_SHORT);
        n += (size_t)snprintf(text + n, cap - n, "%s%ld", i ? ", " : "", (long)sd[i]);
    }
    n += (size_t)snprintf(text + n, cap - n, "], types=[");
    for (int i = 0; i < M; i++)
        n += (size_t)snprintf(text + n, cap - n, "%s%s", i ? ", " : "", (i % 2) ? "double" : "contig(count=2, short)");
    snprintf(text + n, cap - n, "])");
    same(text, strct(M, sb, sd, st), MPI_COMBINER_STRUCT, 2);
    free(text);
}

/* ------------------------------------------------------------ bad cases */

typedef struct {
    const char *text;
    int rc;
    const char *want[4]; /* substrings of the message; the first is "at N:" */
} bad_case;

static const bad_case bad[] = {
    {"", MG_DT_ERR_PARSE, {"at 0:", "empty"}},
    {"  \n\t ", MG_DT_ERR_PARSE, {"at 0:", "empty"}},
    {"itn", MG_DT_ERR_PARSE, {"at 0:", "unknown basic type 'itn'"}},
    {"contig(count=2, itn)", MG_DT_ERR_PARSE, {"at 16:", "unknown basic type 'itn'"}},
    {"MPI_INT", MG_DT_ERR_PARSE, {"at 0:", "unknown basic type", "did you mean 'int'"}},
    {"contig(count=1, Double)", MG_DT_ERR_PARSE, {"at 16:", "did you mean 'double'"}},
    {"vec(count=1, int)", MG_DT_ERR_PARSE, {"at 0:", "unknown constructor 'vec'"}},
    {"int(3)", MG_DT_ERR_PARSE, {"at 3:", "basic type 'int' takes no arguments"}},
    {"vector", MG_DT_ERR_PARSE, {"at 6:", "expected '(' after 'vector'"}},
    {"vector(count 4, block=1, stride=1, int)", MG_DT_ERR_PARSE, {"at 13:", "expected '=' after 'count'"}},
    {"vector(count, block=1, stride=1, int)", MG_DT_ERR_PARSE, {"at 12:", "expected '=' after 'count'"}},
    {"vector(block=1, stride  : 3, count=1, int)", MG_DT_ERR_PARSE, {"at 24:", "expected '=' after 'stride'"}},
    {"vector(count=1, block=1, strid=1, int)",
     MG_DT_ERR_PARSE,
     {"at 25:", "unknown keyword 'strid' for vector", "(expected count, block, stride)"}},
    {"dup(count=1, int)", MG_DT_ERR_PARSE, {"at 4:", "unknown keyword 'count'", "dup"}},
    {"contig(count=1, count=2, int)", MG_DT_ERR_PARSE, {"at 16:", "repeated keyword 'count'"}},
    {"vector(count=1, block=1, int)", MG_DT_ERR_PARSE, {"at 28:", "vector is missing keyword 'stride'"}},
    {"struct(blocks=[1], types=[int])", MG_DT_ERR_PARSE, {"at 30:", "struct is missing keyword 'displs'"}},
    {"contig(count=1)", MG_DT_ERR_PARSE, {"at 14:", "missing the old type"}},
    {"dup()", MG_DT_ERR_PARSE, {"at 4:", "dup is missing the old type"}},
    {"int int", MG_DT_ERR_PARSE, {"at 4:", "trailing text after the type"}},
    {"contig(count=1, int))", MG_DT_ERR_PARSE, {"at 20:", "trailing text", "')'"}},
    {"contig(count=1, int)\n  x", MG_DT_ERR_PARSE, {"at 23:", "trailing text", "'x'"}},
    {"indexed(blocks=[1, 2], displs=[0, 3, 6], int)",
     MG_DT_ERR_PARSE,
     {"at 23:", "'displs' has 3 entries but 'blocks' has 2"}},
    {"indexed(displs=[0, 3, 6], blocks=[1, 2], int)",
     MG_DT_ERR_PARSE,
     {"at 26:", "'blocks' has 2 entries but 'displs' has 3"}},
    {"hindexed(blocks=[1], displs=[], int)", MG_DT_ERR_PARSE, {"at 21:", "'displs' has 0 entries but 'blocks' has 1"}},
    {"struct(displs=[0, 8], types=[contig(count=2, int), vector(count=1, block=1, stride=1, "
     "int), int])",
     MG_DT_ERR_PARSE,
     {"at 22:", "'types' has 3 entries but 'displs' has 2"}},
    {"struct(types=[int], blocks=[1, 1], displs=[0])",
     MG_DT_ERR_PARSE,
     {"at 20:", "'blocks' has 2 entries but 'types' has 1"}},
    {"subarray(sizes=[4, 4], subsizes=[2], starts=[0, 0], order=c, int)",
     MG_DT_ERR_PARSE,
     {"at 23:", "'subsizes' has 1 entries but 'sizes' has 2"}},
    {"darray(size=1, rank=0, gsizes=[4, 4], distribs=[block], dargs=[default, default], "
     "psizes=[1, 1], order=c, int)",
     MG_DT_ERR_PARSE,
     {"at 38:", "'distribs' has 1 entries but 'gsizes' has 2"}},
    /* an error after intermediate types were created: they must be freed */
    {"struct(displs=[0, 8], types=[contig(count=2, int), vectr(count=1)])",
     MG_DT_ERR_PARSE,
     {"at 51:", "unknown constructor 'vectr'"}},
    {"resized(lb=0, extent=8, contig(count=2, int), int)",
     MG_DT_ERR_PARSE,
     {"at 44:", "expected ')' after the old type"}},
    {"vector(count=1, block=1, stride=1, contig(count=2, int)",
     MG_DT_ERR_PARSE,
     {"at 55:", "expected ')'", "end of input"}},
#ifndef MG_HAVE_MPI_LARGE_COUNT
    /* counts beyond int need the MPI-4 `_c` constructors (test_big otherwise) */
    {"contig(count=2147483648, int)",
     MG_DT_ERR_PARSE,
     {"at 13:", "'count' = 2147483648 does not fit in an int", "no MPI-4 large-count constructors", "INT_MAX"}},
    {"vector(count=1, block=1, stride=-2147483649, int)",
     MG_DT_ERR_PARSE,
     {"at 32:", "'stride' = -2147483649 does not fit in an int", "large-count"}},
    {"indexed(blocks=[1, 2147483648], displs=[0, 1], int)",
     MG_DT_ERR_PARSE,
     {"at 19:", "entry of 'blocks'", "does not fit in an int", "large-count"}},
#endif
    /* ints in every MPI binding */
    {"darray(size=2147483648, rank=0, gsizes=[4], distribs=[block], dargs=[default], psizes=[1], order=c, int)",
     MG_DT_ERR_PARSE,
     {"at 12:", "'size' = 2147483648 does not fit in an int (the MPI parameter)"}},
    {"f90_real(p=undefined, r=undefined)", MG_DT_ERR_PARSE, {"at 0:", "f90_real needs p or r"}},
    {"f90_integer(r=undefined)", MG_DT_ERR_PARSE, {"at 14:", "f90_integer needs r"}},
    {"f90_real(p=6, r=30, int)", MG_DT_ERR_PARSE, {"at 20:", "f90_real takes no positional argument"}},
    {"contig(count=-1, int)", MG_DT_ERR_PARSE, {"at 13:", "'count' must be >= 0, got -1"}},
    {"contig(count=99999999999999999999, int)", MG_DT_ERR_PARSE, {"at 13:", "does not fit in 64 bits"}},
    {"hvector(count=1, block=1, stride=9223372036854775808, int)",
     MG_DT_ERR_PARSE,
     {"at 33:", "does not fit in 64 bits"}},
    {"indexed(blocks=[1, -1], displs=[0, 1], int)",
     MG_DT_ERR_PARSE,
     {"at 19:", "an entry of 'blocks' must be >= 0, got -1"}},
    {"contig(count=12x, int)", MG_DT_ERR_PARSE, {"at 13:", "malformed integer '12x'"}},
    {"contig(count=- 1, int)", MG_DT_ERR_PARSE, {"at 14:", "expected an integer for 'count'"}},
    {"contig(count=, int)", MG_DT_ERR_PARSE, {"at 13:", "expected an integer for 'count'"}},
    {"contig(count=1 int)", MG_DT_ERR_PARSE, {"at 15:", "expected ',' or ')' after the value of 'count'", "'int'"}},
    {"contig(count=1,)", MG_DT_ERR_PARSE, {"at 15:", "expected an argument after ','"}},
    {"contig(count=1, int", MG_DT_ERR_PARSE, {"at 19:", "expected ')'", "end of input"}},
    {"contig(count=1, 5)", MG_DT_ERR_PARSE, {"at 16:", "expected a type, found the number 5"}},
    {"contig(count=1, -5)", MG_DT_ERR_PARSE, {"at 16:", "expected a type, found '-'"}},
    {"contig(count=1, \xff)", MG_DT_ERR_PARSE, {"at 16:", "expected a type", "byte 0xff"}},
    {"struct(displs=[0], types=[int], int)", MG_DT_ERR_PARSE, {"at 32:", "struct takes no positional argument"}},
    {"indexed(blocks=[1, 2,], displs=[0, 1], int)",
     MG_DT_ERR_PARSE,
     {"at 21:", "expected an integer for an entry of 'blocks'", "']'"}},
    {"indexed(blocks=[1 2], displs=[0, 1], int)",
     MG_DT_ERR_PARSE,
     {"at 18:", "expected ',' or ']' in the list of 'blocks'"}},
    {"indexed(blocks=1, displs=[0], int)", MG_DT_ERR_PARSE, {"at 15:", "expected '['", "found '1'"}},
    {"struct(displs=[0], types=[int)", MG_DT_ERR_PARSE, {"at 29:", "expected ',' or ']' in the list of 'types'"}},
    {"subarray(sizes=[4], subsizes=[2], starts=[1], order=C, int)",
     MG_DT_ERR_PARSE,
     {"at 52:", "expected c or fortran for 'order'", "'C'"}},
    {"subarray(sizes=[4], subsizes=[5], starts=[0], order=c, int)",
     MG_DT_ERR_PARSE,
     {"at 30:", "subsizes[0] = 5 is larger than sizes[0] = 4"}},
    {"subarray(sizes=[4, 4], subsizes=[2, 2], starts=[0, 3], order=c, int)",
     MG_DT_ERR_PARSE,
     {"at 51:", "starts[1] = 3 plus subsizes[1] = 2 exceeds sizes[1] = 4"}},
    {"subarray(sizes=[4], subsizes=[0], starts=[0], order=c, int)", MG_DT_ERR_PARSE, {"at 30:", "must be >= 1, got 0"}},
    {"subarray(sizes=[], subsizes=[], starts=[], order=c, int)",
     MG_DT_ERR_PARSE,
     {"at 15:", "subarray needs at least one dimension"}},
    {"darray(size=1, rank=0, gsizes=[4], distribs=[blok], dargs=[default], psizes=[1], "
     "order=c, int)",
     MG_DT_ERR_PARSE,
     {"at 45:", "expected block, cyclic or none", "'blok'"}},
    {"darray(size=1, rank=0, gsizes=[4], distribs=[block], dargs=[0], psizes=[1], order=c, "
     "int)",
     MG_DT_ERR_PARSE,
     {"at 60:", "an entry of 'dargs' must be >= 1, got 0"}},
    {"darray(size=1, rank=0, gsizes=[4], distribs=[block], dargs=[dflt], psizes=[1], "
     "order=c, int)",
     MG_DT_ERR_PARSE,
     {"at 60:", "expected an integer or 'default'", "'dflt'"}},
    {"darray(size=4, rank=4, gsizes=[4], distribs=[block], dargs=[default], psizes=[4], "
     "order=c, int)",
     MG_DT_ERR_PARSE,
     {"at 20:", "rank 4 is not below size 4"}},
    {"darray(size=4, rank=0, gsizes=[4, 4], distribs=[block, block], "
     "dargs=[default, default], psizes=[2, 3], order=c, int)",
     MG_DT_ERR_PARSE,
     {"at 96:", "product of 'psizes' exceeds size 4"}},
    {"darray(size=4, rank=0, gsizes=[4, 4], distribs=[block, block], "
     "dargs=[default, default], psizes=[1, 2], order=c, int)",
     MG_DT_ERR_PARSE,
     {"at 96:", "product of 'psizes' is 2 but size is 4"}},
    {"darray(size=2, rank=0, gsizes=[4], distribs=[none], dargs=[default], psizes=[2], "
     "order=c, int)",
     MG_DT_ERR_PARSE,
     {"at 77:", "psizes[0] must be 1", "'none'"}},
    {"darray(size=2, rank=0, gsizes=[10], distribs=[block], dargs=[2], psizes=[2], "
     "order=c, int)",
     MG_DT_ERR_PARSE,
     {"at 61:", "dargs[0] = 2 times psizes[0] = 2 does not cover gsizes[0]"}},
    {"darray(size=0, rank=0, gsizes=[4], distribs=[block], dargs=[default], psizes=[1], "
     "order=c, int)",
     MG_DT_ERR_PARSE,
     {"at 12:", "'size' must be >= 1, got 0"}},
    {"contig(count=2000000000, contig(count=2000000000, double))", MG_DT_ERR_PARSE, {"at 0:", "contig is too large"}},
    {"hvector(count=2, block=1, stride=-9223372036854775808, int)", MG_DT_ERR_PARSE, {"at 0:", "hvector is too large"}},
    {"struct(displs=[9223372036854775807], types=[int])", MG_DT_ERR_PARSE, {"at 0:", "struct is too large"}},
};

static void check_bad(const bad_case *b, int idx)
{
    char err[256], label[48];
    snprintf(label, sizeof label, "bad #%d", idx);
    memset(err, 'X', sizeof err);
    MPI_Datatype t = MPI_INT;
    long live0 = live_types;
    int rc = mg_dt_parse(b->text, &t, err, sizeof err);
    if (rc != b->rc) {
        FAIL(label, "'%s': rc %d, expected %d (message: %.200s)", b->text, rc, b->rc, rc ? err : "");
        if (rc == MG_DT_SUCCESS) MPI_Type_free(&t);
        return;
    }
    if (t != MPI_DATATYPE_NULL) FAIL(label, "'%s': *out is not MPI_DATATYPE_NULL", b->text);
    if (live_types != live0) FAIL(label, "'%s': %ld derived types leaked", b->text, live_types - live0);
    if (!memchr(err, '\0', sizeof err)) {
        FAIL(label, "'%s': message not terminated", b->text);
        return;
    }
    if (strchr(err, '\n')) FAIL(label, "'%s': message is not one line: %s", b->text, err);
    if (strncmp(err, b->want[0], strlen(b->want[0])) != 0)
        FAIL(label, "'%s': message '%s' does not start with '%s'", b->text, err, b->want[0]);
    for (int i = 1; i < 4 && b->want[i]; i++)
        if (!strstr(err, b->want[i])) FAIL(label, "'%s': message '%s' lacks '%s'", b->text, err, b->want[i]);
}

static void test_bad(void)
{
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) check_bad(&bad[i], (int)i);

    /* too deeply nested */
    enum { DEPTH = 150 };
    static char deep[DEPTH * 5 + 8];
    size_t n = 0;
    for (int i = 0; i < DEPTH; i++, n += 4) memcpy(deep + n, "dup(", 4);
    memcpy(deep + n, "int", 3);
    n += 3;
    for (int i = 0; i < DEPTH; i++) deep[n++] = ')';
    deep[n] = '\0';
    bad_case b = {deep, MG_DT_ERR_PARSE, {"at 400:", "nested more than 100 deep"}};
    check_bad(&b, -1);

    /* NULL arguments */
    char err[128];
    MPI_Datatype t = MPI_INT;
    if (mg_dt_parse(NULL, &t, err, sizeof err) != MG_DT_ERR_ARG || t != MPI_DATATYPE_NULL || !strstr(err, "text"))
        FAIL("null text", "expected MG_DT_ERR_ARG naming 'text' (message: %s)", err);
    if (mg_dt_parse("int", NULL, err, sizeof err) != MG_DT_ERR_ARG || !strstr(err, "out"))
        FAIL("null out", "expected MG_DT_ERR_ARG naming 'out' (message: %s)", err);
    if (mg_dt_parse(NULL, NULL, NULL, 0) != MG_DT_ERR_ARG) FAIL("null all", "expected MG_DT_ERR_ARG");

    /* no or small error buffers: the message is cut, always terminated */
    long live0 = live_types;
    if (mg_dt_parse("vector(count=1, block=1, strid=1, int)", &t, NULL, 0) != MG_DT_ERR_PARSE)
        FAIL("errbuf NULL", "expected MG_DT_ERR_PARSE");
    if (mg_dt_parse("itn", &t, NULL, 100) != MG_DT_ERR_PARSE) FAIL("errbuf NULL, len 100", "expected MG_DT_ERR_PARSE");
    char small[8];
    memset(small, 'X', sizeof small);
    if (mg_dt_parse("itn", &t, small, 1) != MG_DT_ERR_PARSE || small[0] != '\0' || small[1] != 'X')
        FAIL("errbuf len 1", "expected an empty message and nothing written past it");
    memset(small, 'X', sizeof small);
    if (mg_dt_parse("itn", &t, small, 4) != MG_DT_ERR_PARSE || strcmp(small, "at ") != 0 || small[4] != 'X')
        FAIL("errbuf len 4", "expected 'at ' (got '%.8s')", small);
    memset(small, 'X', sizeof small);
    if (mg_dt_parse("itn", &t, small, sizeof small) != MG_DT_ERR_PARSE || strcmp(small, "at 0: u") != 0)
        FAIL("errbuf len 8", "expected 'at 0: u' (got '%.8s')", small);
    memset(small, 'X', sizeof small);
    if (mg_dt_parse("contig(count=1, contig(count=2, int), x)", &t, small, sizeof small) != MG_DT_ERR_PARSE ||
        strcmp(small, "at 36: ") != 0)
        FAIL("errbuf len 8 (2)", "expected 'at 36: ' (got '%.8s')", small);
    if (live_types != live0) FAIL("small errbuf", "%ld derived types leaked", live_types - live0);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    long live0 = live_types;
    test_basic();
    test_constructors();
    test_nested();
    test_big();
    test_bad();
    if (live_types != live0) FAIL("total", "%ld derived types still live at the end", live_types - live0);
    MPI_Finalize();
    if (failures)
        fprintf(stderr, "test_dt_parse: %d failure(s)\n", failures);
    else
        printf("test_dt_parse: all passed\n");
    return failures > 100 ? 100 : failures;
}
