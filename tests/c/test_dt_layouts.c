/* Every layout description of Carpen-Amarie et al. (2016) normalizes to the
 * expected form: the count-aware normal form (what mg_dt_to_mpi builds) is
 * asserted as text, the text parses back to mg_dt_to_mpi's type (size, lb,
 * extent, true extent and packed bytes), and the engine's pack equals MPI_Pack
 * for each. */
#include "layouts.h"
#include "mpiguide/dt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;

typedef struct {
    const char *spec;
    long n;
    const char *expected; /* mg_dt_describe_count(t, count) */
} case_t;

/* A=4, Variant 1: B=6; B1=5, B2=7; A1=3, A2=5 (Carpen-Amarie et al. 2016,
 * Table 2). Where the count elements' extent (MPI_Type_contiguous(count, type))
 * is not the span of their data, the form is resized to it, as mg_dt_to_mpi's
 * type is. */
#define TILED   "vector(count=12, block=4, stride=6, int)"
#define TILED60 "vector(count=15, block=4, stride=6, int)"
#define R288(f) "resized(lb=0, extent=288, " f ")"
/* two equal blocks per period: a vector of vectors (the two-level strided loop) */
#define BLOCK       "hvector(count=6, block=1, stride=48, vector(count=2, block=4, stride=5, int))"
#define BUCKET      "hvector(count=6, block=1, stride=48, indexed(blocks=[3, 5], displs=[0, 6], int))"
#define ALTERNATING "hvector(count=6, block=1, stride=48, indexed(blocks=[3, 5], displs=[0, 5], int))"
/* Alternating with B2 = A2 (Test 10): head, one vector of joined blocks, tail. */
#define ALT_B2A2                                                                                          \
    "struct(displs=[0, 20, 220], types=[contig(count=3, int), vector(count=5, block=8, stride=10, int), " \
    "contig(count=5, int)])"
/* RowCol (Test 11), n=48: the row and the column's first element join. */
#define ROWCOL "struct(displs=[0, 32], types=[contig(count=5, int), vector(count=43, block=1, stride=4, int)])"

static const case_t cases[] = {
    {"contiguous", 48, "contig(count=48, int)"},
    {"tiled A=4", 48, R288(TILED)},
    {"block A=4", 48, R288(BLOCK)},
    {"bucket A=4", 48, R288(BUCKET)},
    {"alternating A=4", 48, R288(ALTERNATING)},
    {"contiguous-subtype sub=tiled A=4", 48, R288(TILED)},
    {"contiguous-subtype sub=block A=4", 48, R288(BLOCK)},
    {"contiguous-subtype sub=bucket A=4", 48, R288(BUCKET)},
    {"contiguous-subtype sub=alternating A=4", 48, R288(ALTERNATING)},
    {"tiled-struct A=4 S1=2 S2=3", 60, "resized(lb=0, extent=360, " TILED60 ")"},
    {"tiled-struct A=4 S1=1 S2=1", 48, R288(TILED)},
    {"tiled-vector A=4", 48, R288(TILED)},
    {"vector-tiled A=4 S=5", 60, TILED60},
    {"block-indexed A=4", 48, BLOCK},
    {"alternating-indexed A=4", 48, ALTERNATING},
    {"alternating-repeated A=4", 48, ALT_B2A2},
    {"alternating-struct A=4", 48, ALT_B2A2},
    {"rowcol-fully-indexed A=4", 48, ROWCOL},
    {"rowcol-contiguous-and-indexed A=4", 48, ROWCOL},
    {"rowcol-struct A=4", 48, ROWCOL},
    /* Variant 2, A=4: B=12 */
    {"tiled A=4 variant=2", 48, "resized(lb=0, extent=576, vector(count=12, block=4, stride=12, int))"},
    {"tiled A=4 type=double", 48, "resized(lb=0, extent=576, vector(count=12, block=4, stride=6, double))"},
};

/* Engine pack == MPI_Pack for the layout's type and count. */
static int pack_matches(const mg_layout_type *lt, const mg_dt *d)
{
    MPI_Aint size = lt->info.buffer_size;
    unsigned char *buf = malloc((size_t)size + 1);
    for (MPI_Aint i = 0; i < size; i++) buf[i] = (unsigned char)(i * 13 + 1);
    int psize, pos = 0;
    MPI_Pack_size(lt->count, lt->type, MPI_COMM_SELF, &psize);
    char *ref = malloc((size_t)psize + 1), *mine = malloc((size_t)psize + 1);
    MPI_Pack(buf, lt->count, lt->type, ref, psize, &pos, MPI_COMM_SELF);
    MPI_Count act = -1;
    int ok = mg_dt_pack(d, buf, lt->count, 0, mine, psize, &act) == MG_DT_SUCCESS && act == pos &&
             !memcmp(ref, mine, (size_t)pos);
    free(buf);
    free(ref);
    free(mine);
    return ok;
}

/* The text parses to a type with mg_dt_to_mpi's size, lb, extent and packed
 * bytes (one element each, from a buffer covering both). */
static int parses_as_to_mpi(const char *text, const mg_dt *d, int count)
{
    MPI_Datatype pt, nt;
    char err[256];
    if (mg_dt_parse(text, &pt, err, sizeof err) != MG_DT_SUCCESS) {
        fprintf(stderr, "  mg_dt_parse: %s\n", err);
        return 0;
    }
    MPI_Type_commit(&pt);
    int ok = mg_dt_to_mpi(d, count, &nt) == MG_DT_SUCCESS;
    MPI_Count s1 = -1, s2 = -2, lb1 = -1, lb2 = -2, e1 = -1, e2 = -2, tl1 = -1, tl2 = -2, te1 = -1, te2 = -2;
    if (ok) {
        MPI_Type_size_x(pt, &s1);
        MPI_Type_size_x(nt, &s2);
        MPI_Type_get_extent_x(pt, &lb1, &e1);
        MPI_Type_get_extent_x(nt, &lb2, &e2);
        MPI_Type_get_true_extent_x(pt, &tl1, &te1);
        MPI_Type_get_true_extent_x(nt, &tl2, &te2);
        ok = s1 == s2 && lb1 == lb2 && e1 == e2 && tl1 == tl2 && te1 == te2 && tl1 >= 0;
    }
    if (ok) {
        size_t span = (size_t)(tl1 + te1) + 1;
        unsigned char *buf = malloc(span), *p1 = malloc((size_t)s1 + 1), *p2 = malloc((size_t)s1 + 1);
        for (size_t i = 0; i < span; i++) buf[i] = (unsigned char)(i * 29 + 3);
        int pos1 = 0, pos2 = 0;
        MPI_Pack(buf, 1, pt, p1, (int)s1, &pos1, MPI_COMM_SELF);
        MPI_Pack(buf, 1, nt, p2, (int)s1, &pos2, MPI_COMM_SELF);
        ok = pos1 == s1 && pos2 == s1 && !memcmp(p1, p2, (size_t)s1);
        free(buf);
        free(p1);
        free(p2);
    }
    if (!ok)
        fprintf(stderr, "  parsed: size %lld lb %lld extent %lld true %lld/%lld; to_mpi: %lld %lld %lld %lld/%lld\n",
                (long long)s1, (long long)lb1, (long long)e1, (long long)tl1, (long long)te1, (long long)s2,
                (long long)lb2, (long long)e2, (long long)tl2, (long long)te2);
    MPI_Type_free(&pt);
    if (nt != MPI_DATATYPE_NULL) MPI_Type_free(&nt);
    return ok;
}

static void check(const char *spec, long n, const char *expected)
{
    char err[256], text[1024];
    mg_layout_params p;
    mg_layout_type lt;
    if (mg_layout_parse(spec, &p, err, sizeof err) || mg_layout_build(&p, n, &lt, err, sizeof err)) {
        fprintf(stderr, "FAIL %s: %s\n", spec, err);
        failures++;
        return;
    }
    mg_dt *d;
    int rc = mg_dt_from_mpi(lt.type, &d);
    if (rc) {
        fprintf(stderr, "FAIL %s: %s\n", spec, mg_dt_strerror(rc));
        failures++;
    } else {
        mg_dt_describe_count(d, lt.count, text, sizeof text);
        if (strcmp(text, expected)) {
            fprintf(stderr, "FAIL %s n=%ld:\n  got      %s\n  expected %s\n", spec, n, text, expected);
            failures++;
        }
        if (!pack_matches(&lt, d)) {
            fprintf(stderr, "FAIL %s n=%ld: engine pack differs from MPI_Pack\n", spec, n);
            failures++;
        }
        if (!parses_as_to_mpi(text, d, lt.count)) {
            fprintf(stderr, "FAIL %s n=%ld: the text does not parse to mg_dt_to_mpi's type\n", spec, n);
            failures++;
        }
        mg_dt_free(d);
    }
    mg_layout_type_free(&lt);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) check(cases[i].spec, cases[i].n, cases[i].expected);

    /* Tiled-heterogeneous (char, int, double, short; B = A = 4): 60 data bytes
     * per unit, contiguous, padded by MPI to the double alignment. */
    char err[256], expected[256];
    mg_layout_params p;
    mg_layout_type lt;
    if (mg_layout_parse("tiled-heterogeneous A=4", &p, err, sizeof err) ||
        mg_layout_build(&p, 48, &lt, err, sizeof err)) {
        fprintf(stderr, "FAIL tiled-heterogeneous: %s\n", err);
        failures++;
    } else {
        MPI_Aint lb, ext;
        MPI_Type_get_extent(lt.type, &lb, &ext);
        snprintf(expected, sizeof expected, "resized(lb=0, extent=%ld, vector(count=%d, block=60, stride=%ld, byte))",
                 (long)ext * lt.count, lt.count, (long)ext);
        if (ext == 60) snprintf(expected, sizeof expected, "contig(count=%d, byte)", 60 * lt.count);
        mg_layout_type_free(&lt);
        check("tiled-heterogeneous A=4", 48, expected);
    }
    MPI_Finalize();
    if (failures)
        fprintf(stderr, "test_dt_layouts: %d failure(s)\n", failures);
    else
        printf("test_dt_layouts: %zu layouts normalize as expected\n", sizeof cases / sizeof cases[0] + 1);
    return failures != 0;
}
