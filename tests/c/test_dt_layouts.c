/* Every layout description of paper 000 normalizes to the expected form: the
 * count-aware normal form (what mg_dt_to_mpi builds) is asserted as text, and
 * the engine's pack equals MPI_Pack for each. */
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

/* A=4, Variant 1: B=6; B1=5, B2=7; A1=3, A2=5 (Table 2 of 000). */
#define TILED   "vector(count=12, block=4, stride=6, int)"
#define TILED60 "vector(count=15, block=4, stride=6, int)"
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
    {"tiled A=4", 48, TILED},
    {"block A=4", 48, BLOCK},
    {"bucket A=4", 48, BUCKET},
    {"alternating A=4", 48, ALTERNATING},
    {"contiguous-subtype sub=tiled A=4", 48, TILED},
    {"contiguous-subtype sub=block A=4", 48, BLOCK},
    {"contiguous-subtype sub=bucket A=4", 48, BUCKET},
    {"contiguous-subtype sub=alternating A=4", 48, ALTERNATING},
    {"tiled-struct A=4 S1=2 S2=3", 60, TILED60},
    {"tiled-struct A=4 S1=1 S2=1", 48, TILED},
    {"tiled-vector A=4", 48, TILED},
    {"vector-tiled A=4 S=5", 60, TILED60},
    {"block-indexed A=4", 48, BLOCK},
    {"alternating-indexed A=4", 48, ALTERNATING},
    {"alternating-repeated A=4", 48, ALT_B2A2},
    {"alternating-struct A=4", 48, ALT_B2A2},
    {"rowcol-fully-indexed A=4", 48, ROWCOL},
    {"rowcol-contiguous-and-indexed A=4", 48, ROWCOL},
    {"rowcol-struct A=4", 48, ROWCOL},
    /* Variant 2, A=4: B=12 */
    {"tiled A=4 variant=2", 48, "vector(count=12, block=4, stride=12, int)"},
    {"tiled A=4 type=double", 48, "vector(count=12, block=4, stride=6, double)"},
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
        snprintf(expected, sizeof expected, "vector(count=%d, block=60, stride=%ld, byte)", lt.count, (long)ext);
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
