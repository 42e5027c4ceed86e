/* The engine on bad input (error codes, no crash), on the MPI-4 large-count
 * constructors where the stack has them, on long index lists and on the forms
 * mg_dt_to_mpi hands back. */
#define _POSIX_C_SOURCE 200809L
#include "known_bugs.h"
#include "mpiguide/dt.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;
#define EXPECT(cond)                                                            \
    do {                                                                        \
        if (!(cond)) {                                                          \
            fprintf(stderr, "%s:%d: expected %s\n", __FILE__, __LINE__, #cond); \
            failures++;                                                         \
        }                                                                       \
    } while (0)

/* Engine pack of count elements == MPI_Pack, into an output that starts
 * `skew` bytes past an aligned address (streams of several MB take the
 * non-temporal path, which aligns its stores itself). */
static int same_as_mpi_pack_at(MPI_Datatype t, MPI_Count count, int skew)
{
    MPI_Type_commit(&t);
    MPI_Aint lb, ext, tlb, text;
    MPI_Type_get_extent(t, &lb, &ext);
    MPI_Type_get_true_extent(t, &tlb, &text);
    MPI_Aint span = text + (count > 1 ? (count - 1) * ext : 0);
    int psize, pos = 0;
    MPI_Pack_size((int)count, t, MPI_COMM_SELF, &psize);
    unsigned char *buf = malloc((size_t)span + 1), *ref = malloc((size_t)psize + 1), *mine = malloc((size_t)psize + 64);
    for (MPI_Aint i = 0; i < span; i++) buf[i] = (unsigned char)(i * 131 + (i >> 12));
    MPI_Pack(buf - tlb, (int)count, t, ref, psize, &pos, MPI_COMM_SELF);
    mg_dt *d = NULL;
    MPI_Count act = -1;
    unsigned char *out = mine + skew;
    int ok = mg_dt_from_mpi(t, &d) == MG_DT_SUCCESS && mg_dt_pack(d, buf - tlb, count, 0, out, psize, &act) == 0 &&
             act == pos && !memcmp(ref, out, (size_t)pos);
    mg_dt_free(d);
    free(buf);
    free(ref);
    free(mine);
    return ok;
}

static int same_as_mpi_pack(MPI_Datatype t, int count) { return same_as_mpi_pack_at(t, count, 0); }

static void bad_input(void)
{
    mg_dt *d = NULL;
    EXPECT(mg_dt_from_mpi(MPI_DATATYPE_NULL, &d) == MG_DT_ERR_ARG && d == NULL);
    EXPECT(mg_dt_from_mpi(MPI_INT, NULL) == MG_DT_ERR_ARG);

    MPI_Datatype v;
    MPI_Type_vector(4, 2, 3, MPI_INT, &v);
    EXPECT(mg_dt_from_mpi(v, &d) == MG_DT_SUCCESS); /* uncommitted is fine */
    MPI_Type_free(&v);
    int in[64] = {0};
    char out[256];
    MPI_Count act = 99;
    EXPECT(mg_dt_pack(d, in, -1, 0, out, 10, &act) == MG_DT_ERR_ARG);
    EXPECT(mg_dt_pack(d, in, 2, -1, out, 10, &act) == MG_DT_ERR_ARG);
    EXPECT(mg_dt_pack(d, in, 2, 0, out, -5, &act) == MG_DT_ERR_ARG);
    EXPECT(mg_dt_pack(d, in, 2, 65, out, 10, &act) == MG_DT_ERR_OFFSET); /* stream is 64 bytes */
    EXPECT(mg_dt_pack(d, in, 2, 64, out, 10, &act) == MG_DT_SUCCESS && act == 0);
    EXPECT(mg_dt_pack(d, in, 2, 0, out, 0, &act) == MG_DT_SUCCESS && act == 0);
    EXPECT(mg_dt_pack(d, in, 2, 60, out, 100, &act) == MG_DT_SUCCESS && act == 4); /* buffer larger than the rest */
    EXPECT(mg_dt_pack(d, NULL, 2, 0, out, 10, &act) == MG_DT_ERR_ARG);
    EXPECT(mg_dt_pack(d, in, 2, 0, NULL, 10, &act) == MG_DT_ERR_ARG);
    EXPECT(mg_dt_pack(d, in, 2, 0, out, 10, NULL) == MG_DT_ERR_ARG);
    EXPECT(mg_dt_pack(NULL, in, 2, 0, out, 10, &act) == MG_DT_ERR_ARG);
    EXPECT(mg_dt_unpack(d, out, 10, 70, in, 2, &act) == MG_DT_ERR_OFFSET);
    EXPECT(mg_dt_unpack(d, out, -1, 0, in, 2, &act) == MG_DT_ERR_ARG);
    EXPECT(mg_dt_unpack(d, out, 10, 0, in, -2, &act) == MG_DT_ERR_ARG);

    mg_dt_cursor *c = NULL;
    EXPECT(mg_dt_cursor_create(d, 2, 100, &c) == MG_DT_ERR_OFFSET && c == NULL);
    EXPECT(mg_dt_cursor_create(d, -1, 0, &c) == MG_DT_ERR_ARG && c == NULL);
    EXPECT(mg_dt_cursor_create(d, 2, 0, &c) == MG_DT_SUCCESS);
    EXPECT(mg_dt_cursor_pack(c, in, out, -1, &act) == MG_DT_ERR_ARG);
    mg_dt_cursor_free(c);

    char small[8];
    EXPECT(mg_dt_describe(d, small, sizeof small) == MG_DT_ERR_TRUNCATED && strlen(small) == sizeof small - 1);
    EXPECT(mg_dt_describe_count(d, -1, small, sizeof small) == MG_DT_ERR_ARG);
    MPI_Datatype nt;
    EXPECT(mg_dt_to_mpi(d, -3, &nt) == MG_DT_ERR_ARG);
    EXPECT(mg_dt_to_mpi(d, 1, NULL) == MG_DT_ERR_ARG);
    EXPECT(mg_dt_to_mpi_form(d, 1, 77, &nt) == MG_DT_ERR_ARG && nt == MPI_DATATYPE_NULL);
    EXPECT(mg_dt_to_mpi_form(d, 1, MG_DT_FORM_COPIES + 1, &nt) == MG_DT_ERR_ARG);
    EXPECT(mg_dt_to_mpi_form(d, 1, -1, &nt) == MG_DT_ERR_ARG);
    EXPECT(mg_dt_to_mpi_form(NULL, 1, MG_DT_FORM_VECTOR, &nt) == MG_DT_ERR_ARG);
    mg_dt_free(d);
    mg_dt_free(NULL);

    for (int code = 0; code <= MG_DT_ERR_COUNT_; code++) EXPECT(mg_dt_strerror(code)[0] != 0);
    EXPECT(strcmp(mg_dt_strerror(-7), "unknown error code") == 0);
}

/* A zero-size type: an empty stream, a to_mpi type of size 0. */
/* mg_dt_to_mpi of a byte stride of -1 must pack the bytes in that order (Open
 * MPI packs an hvector with that stride as if it were contiguous). */
static void to_mpi_negative_byte_stride(void)
{
    MPI_Datatype v, nt;
    MPI_Type_create_hvector(3, 1, -1, MPI_CHAR, &v);
    mg_dt *d;
    EXPECT(mg_dt_from_mpi(v, &d) == MG_DT_SUCCESS);
    EXPECT(mg_dt_to_mpi(d, 2, &nt) == MG_DT_SUCCESS);
    char buf[16] = "abcdefghijklmno", packed[8] = "", mine[8] = "";
    int pos = 0;
    MPI_Count act = 0;
    MPI_Pack(buf + 8, 1, nt, packed, sizeof packed, &pos, MPI_COMM_SELF);
    EXPECT(mg_dt_pack(d, buf + 8, 2, 0, mine, sizeof mine, &act) == MG_DT_SUCCESS && act == 6);
    EXPECT(pos == 6 && !memcmp(packed, mine, 6) && !memcmp(mine, "ihglkj", 6));
    MPI_Type_free(&nt);
    mg_dt_free(d);
    MPI_Type_free(&v);
}

static void empty_type(void)
{
    MPI_Datatype z;
    MPI_Type_contiguous(0, MPI_INT, &z);
    mg_dt *d;
    EXPECT(mg_dt_from_mpi(z, &d) == MG_DT_SUCCESS && mg_dt_size(d) == 0);
    MPI_Count act = 1;
    char out[4];
    EXPECT(mg_dt_pack(d, out, 5, 0, out, 4, &act) == MG_DT_SUCCESS && act == 0);
    MPI_Datatype nt;
    int size = -1;
    EXPECT(mg_dt_to_mpi(d, 5, &nt) == MG_DT_SUCCESS);
    MPI_Type_size(nt, &size);
    EXPECT(size == 0);
    MPI_Type_free(&nt);
    mg_dt_free(d);
    MPI_Type_free(&z);
}

static void large_count_constructors(void)
{
#if defined(MPICH) || defined(I_MPI_VERSION)
    /* Types built with the `_c` constructors keep their counts in the
     * large-count array of get_contents_c. */
    MPI_Datatype t, u;
    MPI_Count blens[3] = {2, 1, 3}, displs[3] = {0, 5, 9};
    MPI_Type_vector_c(3, 2, 5, MPI_INT, &t);
    EXPECT(same_as_mpi_pack(t, 2));
    MPI_Type_free(&t);
    MPI_Type_create_hvector_c(3, 2, 28, MPI_SHORT, &t);
    EXPECT(same_as_mpi_pack(t, 2));
    MPI_Type_free(&t);
    MPI_Type_indexed_c(3, blens, displs, MPI_DOUBLE, &t);
    EXPECT(same_as_mpi_pack(t, 2));
    MPI_Type_free(&t);
    MPI_Count hd[3] = {0, 40, 72};
    MPI_Type_create_hindexed_c(3, blens, hd, MPI_INT, &t);
    EXPECT(same_as_mpi_pack(t, 2));
    MPI_Type_free(&t);
    MPI_Type_create_indexed_block_c(3, 2, displs, MPI_INT, &t);
    EXPECT(same_as_mpi_pack(t, 3));
    MPI_Type_free(&t);
    MPI_Type_create_hindexed_block_c(3, 2, hd, MPI_INT, &t);
    EXPECT(same_as_mpi_pack(t, 3));
    MPI_Type_free(&t);
    MPI_Type_contiguous_c(7, MPI_CHAR, &u);
    MPI_Type_create_resized_c(u, -4, 16, &t);
    EXPECT(same_as_mpi_pack(t, 4));
    MPI_Datatype types[2] = {t, MPI_DOUBLE};
    MPI_Count sb[2] = {2, 1}, sd[2] = {4, 48};
    MPI_Datatype s;
    MPI_Type_create_struct_c(2, sb, sd, types, &s);
    EXPECT(same_as_mpi_pack(s, 2));
    MPI_Type_free(&s);
    MPI_Type_free(&t);
    MPI_Type_free(&u);
    MPI_Count sizes[2] = {6, 5}, subs[2] = {3, 2}, starts[2] = {1, 2};
    MPI_Type_create_subarray_c(2, sizes, subs, starts, MPI_ORDER_FORTRAN, MPI_INT, &t);
    EXPECT(same_as_mpi_pack(t, 2));
    MPI_Type_free(&t);
    MPI_Count gs[2] = {9, 7};
    int dist[2] = {MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_BLOCK}, dargs[2] = {2, MPI_DISTRIBUTE_DFLT_DARG},
        ps[2] = {2, 3};
    MPI_Type_create_darray_c(6, 4, 2, gs, dist, dargs, ps, MPI_ORDER_C, MPI_INT, &t);
    /* MPI's definition: rank 4 is process (1, 1) of the 2 x 3 grid, with rows
     * 2, 3, 6, 7 (cyclic blocks of 2) and columns 3..5: the ints 7 * row + col */
    static const int rows[4] = {2, 3, 6, 7};
    int all[63], want[12], got[12];
    for (int i = 0; i < 63; i++) all[i] = i;
    for (int i = 0; i < 12; i++) want[i] = 7 * rows[i / 3] + 3 + i % 3;
    mg_dt *d = NULL;
    MPI_Count act = -1;
    EXPECT(mg_dt_from_mpi(t, &d) == MG_DT_SUCCESS && mg_dt_pack(d, all, 1, 0, got, sizeof got, &act) == 0 &&
           act == (MPI_Count)sizeof got && !memcmp(got, want, sizeof want));
    mg_dt_free(d);
    if (!same_as_mpi_pack(t, 1)) {
        if (mg_known_bug_listed("impi-darray-pack"))
            mg_known_bug_note("impi-darray-pack", "MPI_Pack of a darray_c type differs from the engine, which gives "
                                                  "the standard's ints");
        else
            EXPECT(!"MPI_Pack of the darray_c type differs from the engine");
    }
    MPI_Type_free(&t);
#endif
}

/* The combiner of the type a resized type wraps (mg_dt_to_mpi's result is
 * resized to count elements' bounds; the body is what the form chose). */
static int body_combiner(MPI_Datatype t)
{
    int ni, na, nd, comb;
    MPI_Type_get_envelope(t, &ni, &na, &nd, &comb);
    if (comb != MPI_COMBINER_RESIZED || nd != 1) return -1;
    int ints[1];
    MPI_Aint aints[2];
    MPI_Datatype inner;
    MPI_Type_get_contents(t, 0, 2, 1, ints, aints, &inner);
    MPI_Type_get_envelope(inner, &ni, &na, &nd, &comb);
    if (comb != MPI_COMBINER_NAMED) MPI_Type_free(&inner);
    return comb;
}

/* The body combiner of mg_dt_to_mpi (form -1), of mg_dt_to_mpi_form (form
 * >= 0), or of mg_dt_to_mpi_policy (policy given). */
static int built_as(mg_dt *d, MPI_Count count, int form, const mg_dt_form_policy *policy)
{
    MPI_Datatype nt = MPI_DATATYPE_NULL;
    int rc = policy     ? mg_dt_to_mpi_policy(d, count, policy, &nt)
             : form < 0 ? mg_dt_to_mpi(d, count, &nt)
                        : mg_dt_to_mpi_form(d, count, form, &nt);
    EXPECT(rc == MG_DT_SUCCESS);
    int comb = rc == MG_DT_SUCCESS ? body_combiner(nt) : -1;
    if (nt != MPI_DATATYPE_NULL) MPI_Type_free(&nt);
    return comb;
}

static int form_of(mg_dt *d, MPI_Count count, int form) { return built_as(d, count, form, NULL); }

/* The body of an mg_dt_to_mpi result as a list: its combiner, and for an
 * hindexed_block its entries, block length, element and displacements
 * (*step apart from 0, or -1 if not evenly spaced). */
static int list_body(MPI_Datatype t, int *entries, int *blocklen, MPI_Datatype *elem, MPI_Aint *step)
{
    int ni, na, nd, comb;
    MPI_Datatype inner;
    MPI_Aint bounds[2];
    int dummy[1];
    MPI_Type_get_contents(t, 0, 2, 1, dummy, bounds, &inner);
    MPI_Type_get_envelope(inner, &ni, &na, &nd, &comb);
    *entries = *blocklen = -1;
    if (comb == MPI_COMBINER_HINDEXED_BLOCK) {
        int *ints = malloc(sizeof(int) * (size_t)ni);
        MPI_Aint *aints = malloc(sizeof(MPI_Aint) * (size_t)na);
        MPI_Type_get_contents(inner, ni, na, 1, ints, aints, elem);
        *entries = ints[0];
        *blocklen = ints[1];
        *step = na > 1 ? aints[1] - aints[0] : 0;
        for (int i = 0; i < na; i++)
            if (aints[i] != *step * i) *step = -1;
        free(ints);
        free(aints);
    }
    if (comb != MPI_COMBINER_NAMED) MPI_Type_free(&inner);
    return comb;
}

static int list_of(mg_dt *d, MPI_Count count, int *entries, int *blocklen, MPI_Datatype *elem, MPI_Aint *step)
{
    MPI_Datatype nt = MPI_DATATYPE_NULL;
    EXPECT(mg_dt_to_mpi_form(d, count, MG_DT_FORM_LIST, &nt) == MG_DT_SUCCESS);
    int comb = nt != MPI_DATATYPE_NULL ? list_body(nt, entries, blocklen, elem, step) : -1;
    if (nt != MPI_DATATYPE_NULL) MPI_Type_free(&nt);
    return comb;
}

static mg_dt *engine_type(MPI_Datatype t)
{
    mg_dt *d = NULL;
    MPI_Type_commit(&t);
    EXPECT(mg_dt_from_mpi(t, &d) == MG_DT_SUCCESS);
    MPI_Type_free(&t);
    return d;
}

/* MG_DT_FORM_LIST: many small blocks of one element type become one
 * hindexed_block list (blocks of unequal length cut into equal pieces where
 * that adds at most half as many entries), else an hindexed list; mixed
 * element types, large blocks and a block of half the data stay vectors. */
static void to_mpi_list(void)
{
    MPI_Datatype two, t, e;
    MPI_Type_contiguous(2, MPI_INT, &two);
    MPI_Type_create_resized(two, 0, 16, &t);
    mg_dt *tiled = engine_type(t);
    int n, len;
    MPI_Aint step;
    EXPECT(list_of(tiled, 4000, &n, &len, &e, &step) == MPI_COMBINER_HINDEXED_BLOCK);
    EXPECT(n == 4000 && len == 2 && e == MPI_INT && step == 16);

    int lens21[2] = {2, 1}, lens31[2] = {3, 1}, displs[2] = {0, 4};
    MPI_Datatype idx, r;
    MPI_Type_indexed(2, lens21, displs, MPI_INT, &idx);
    MPI_Type_create_resized(idx, 0, 32, &r);
    mg_dt *d21 = engine_type(r);
    EXPECT(list_of(d21, 100, &n, &len, &e, &step) == MPI_COMBINER_HINDEXED_BLOCK);
    EXPECT(n == 300 && len == 1 && e == MPI_INT && step == -1);
    MPI_Type_free(&idx);
    MPI_Type_indexed(2, lens31, displs, MPI_INT, &idx);
    MPI_Type_create_resized(idx, 0, 32, &r);
    mg_dt *d31 = engine_type(r);
    EXPECT(list_of(d31, 100, &n, &len, &e, &step) == MPI_COMBINER_HINDEXED);
    MPI_Type_free(&idx);

    MPI_Datatype vi, vd, st, parts[2];
    MPI_Type_vector(100, 1, 4, MPI_INT, &vi);
    MPI_Type_vector(100, 1, 2, MPI_DOUBLE, &vd);
    int ones[2] = {1, 1};
    MPI_Aint sd[2] = {0, 4096};
    parts[0] = vi;
    parts[1] = vd;
    MPI_Type_create_struct(2, ones, sd, parts, &st);
    mg_dt *dmixed = engine_type(st);
    EXPECT(list_of(dmixed, 1, &n, &len, &e, &step) == MPI_COMBINER_STRUCT);
    MPI_Type_free(&vi);
    MPI_Type_free(&vd);

    MPI_Datatype wide;
    MPI_Type_vector(100, 200, 400, MPI_INT, &wide); /* 800-byte blocks */
    mg_dt *dwide = engine_type(wide);
    EXPECT(list_of(dwide, 1, &n, &len, &e, &step) == MPI_COMBINER_VECTOR);

    /* A row and 101 column elements (Test 11's shape): a list while every
     * block holds less than half the data, a struct once the row holds half. */
    MPI_Datatype row, col, rowcol[2];
    MPI_Aint rd[2] = {0, 1000};
    MPI_Type_vector(101, 1, 4, MPI_INT, &col);
    for (int r = 100; r <= 101; r++) {
        MPI_Type_contiguous(r, MPI_INT, &row);
        parts[0] = row;
        parts[1] = col;
        MPI_Type_create_struct(2, ones, rd, parts, &rowcol[r - 100]);
        MPI_Type_free(&row);
    }
    MPI_Type_free(&col);
    mg_dt *row100 = engine_type(rowcol[0]), *row101 = engine_type(rowcol[1]);
    EXPECT(list_of(row100, 1, &n, &len, &e, &step) == MPI_COMBINER_HINDEXED);
    EXPECT(list_of(row101, 1, &n, &len, &e, &step) == MPI_COMBINER_STRUCT);
    mg_dt_free(row100);
    mg_dt_free(row101);

    mg_dt_free(tiled);
    mg_dt_free(d21);
    mg_dt_free(d31);
    mg_dt_free(dmixed);
    mg_dt_free(dwide);
    MPI_Type_free(&two);
}

static int same_packs(MPI_Datatype a, int count, MPI_Datatype b);

/* mg_dt_to_mpi(d, count) succeeds and packs as count elements of t. */
static int to_mpi_packs_as(mg_dt *d, MPI_Datatype t, int count)
{
    MPI_Datatype nt = MPI_DATATYPE_NULL;
    int good = mg_dt_to_mpi(d, count, &nt) == MG_DT_SUCCESS && same_packs(t, count, nt);
    if (nt != MPI_DATATYPE_NULL) MPI_Type_free(&nt);
    return good;
}

/* The forms of mg_dt_to_mpi (dt.h): many small copies (4000 x 8 bytes)
 * become a vector, a contiguous array of a resized block or a list; few
 * copies (100 x 8 bytes) stay a vector in the resized form; the default
 * follows the MPI library's policy (MPICH: a list below 8 KiB, resized
 * above; the others a list). */
/* A committed block of n ints resized to extent bytes (the Tiled layout's element). */
static MPI_Datatype tiled_ints(int n, MPI_Aint extent)
{
    MPI_Datatype block, t;
    MPI_Type_contiguous(n, MPI_INT, &block);
    MPI_Type_create_resized(block, 0, extent, &t);
    MPI_Type_free(&block);
    MPI_Type_commit(&t);
    return t;
}

/* MPI_Get_library_version's first line on each family (the engine's table
 * matches them): every family's policy is tested on whatever library runs. */
enum { FAM_MPICH, FAM_INTEL, FAM_OPENMPI, FAM_MVAPICH, FAM_OTHER, NFAMS };
static const char *const family_versions[NFAMS] = {
    "MPICH Version:      5.0.2\nMPICH Release date: Fri Sep 25 20:45:26 UTC 2026\nMPICH Device: ch4:ofi",
    "Intel(R) MPI Library 2021.18 for Linux* OS\n(MPICH Version: 4.2)",
    "Open MPI v5.0.11, package: Open MPI user@localhost Distribution, ident: 5.0.11",
    "MVAPICH Version: 4.0\nMPICH Version: 4.1",
    "Some MPI 1.0",
};

static mg_dt_form_policy policy_of(int family)
{
    mg_dt_form_policy p = {.base = -1};
    EXPECT(mg_dt_form_policy_for(family_versions[family], &p) == MG_DT_SUCCESS);
    return p;
}

/* The form of count elements of Tiled blocks of `ints` ints, 4 ints apart,
 * under a family's policy. */
static int tiled_form(int family, int ints, MPI_Count count)
{
    MPI_Datatype t = tiled_ints(ints, 4 * (ints + 4));
    mg_dt *d = NULL;
    EXPECT(mg_dt_from_mpi(t, &d) == MG_DT_SUCCESS);
    mg_dt_form_policy p = policy_of(family);
    int comb = d ? built_as(d, count, 0, &p) : -1;
    if (d) EXPECT(to_mpi_packs_as(d, t, (int)count));
    mg_dt_free(d);
    MPI_Type_free(&t);
    return comb;
}

/* The table of families: names both ways, what each family's entry holds,
 * mg_dt_to_mpi as the running library's policy, bad policies, and no
 * environment read. */
static void form_policies(void)
{
    for (int f = MG_DT_FORM_AUTO; f <= MG_DT_FORM_COPIES; f++) {
        int back = -1;
        EXPECT(mg_dt_form_parse(mg_dt_form_name(f), &back) == MG_DT_SUCCESS && back == f);
    }
    int form = 7;
    EXPECT(mg_dt_form_parse("Vector", &form) == MG_DT_ERR_ARG && form == 7);
    EXPECT(mg_dt_form_parse("", &form) == MG_DT_ERR_ARG && mg_dt_form_parse(NULL, &form) == MG_DT_ERR_ARG);
    EXPECT(!strcmp(mg_dt_form_name(-1), "?") && !strcmp(mg_dt_form_name(MG_DT_FORM_COPIES + 1), "?"));

    mg_dt_form_policy m = policy_of(FAM_MPICH), i = policy_of(FAM_INTEL);
    EXPECT(m.base == MG_DT_FORM_RESIZED && m.list_below == 8192 && m.resized_block == 16 && m.resized_max == 1024 &&
           m.repeat_from == 4096);
    EXPECT(i.base == MG_DT_FORM_VECTOR && i.list_below == -1 && i.resized_block == 384 && i.repeat_from == 0);
    for (int fam = FAM_OPENMPI; fam < NFAMS; fam++) {
        mg_dt_form_policy o = policy_of(fam);
        EXPECT(o.base == MG_DT_FORM_VECTOR && o.list_below == -1 && o.resized_block == 0 && o.repeat_from == 0);
    }
    EXPECT(mg_dt_form_policy_for(family_versions[FAM_MPICH], NULL) == MG_DT_ERR_ARG);

    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int len;
    MPI_Get_library_version(version, &len);
    mg_dt_form_policy running, named;
    EXPECT(mg_dt_form_policy_for(NULL, &running) == MG_DT_SUCCESS);
    EXPECT(mg_dt_form_policy_for(version, &named) == MG_DT_SUCCESS);
    EXPECT(!memcmp(&running, &named, sizeof running));

    MPI_Datatype tiled = tiled_ints(2, 16), nt = MPI_DATATYPE_NULL;
    mg_dt *d = engine_type(tiled);
    if (!d) return;
    for (MPI_Count count = 100; count <= 4000; count *= 40)
        EXPECT(built_as(d, count, 0, &running) == form_of(d, count, -1));
    const mg_dt_form_policy bad[] = {
        {.base = MG_DT_FORM_AUTO},
        {.base = MG_DT_FORM_COPIES + 1},
        {.base = MG_DT_FORM_VECTOR, .list_below = -2},
        {.base = MG_DT_FORM_VECTOR, .resized_block = 64, .resized_max = 32},
        {.base = MG_DT_FORM_VECTOR, .resized_block = -1, .resized_max = 32},
        {.base = MG_DT_FORM_VECTOR, .repeat_from = -1},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        nt = MPI_INT;
        EXPECT(mg_dt_to_mpi_policy(d, 1, &bad[k], &nt) == MG_DT_ERR_ARG && nt == MPI_DATATYPE_NULL);
    }
    EXPECT(mg_dt_to_mpi_policy(d, 1, NULL, &nt) == MG_DT_ERR_ARG);
    EXPECT(mg_dt_to_mpi_policy(d, -1, &running, &nt) == MG_DT_ERR_ARG);
    EXPECT(mg_dt_to_mpi_policy(NULL, 1, &running, &nt) == MG_DT_ERR_ARG);

    /* the engine reads no environment: the drivers and the tuning library do */
    int before = form_of(d, 4000, -1);
    setenv("MPIGUIDE_DT_FORM", before == MPI_COMBINER_VECTOR ? "list" : "vector", 1);
    EXPECT(form_of(d, 4000, -1) == before);
    unsetenv("MPIGUIDE_DT_FORM");
    mg_dt_free(d);
    MPI_Type_free(&tiled);
}

/* Plain vectors of larger blocks: under Intel MPI's policy resized copies from
 * 384-byte blocks at any size, under MPICH's from 16 bytes to 1 KiB (below 8
 * KiB; above, the base RESIZED form's rule), under the others lists of small
 * blocks and vectors of large ones. */
static void to_mpi_resized_blocks(void)
{
    int list = MPI_COMBINER_HINDEXED_BLOCK, copies = MPI_COMBINER_CONTIGUOUS, vector = MPI_COMBINER_VECTOR;
    for (int fam = 0; fam < NFAMS; fam++) {
        int intel = fam == FAM_INTEL, mpich = fam == FAM_MPICH;
        EXPECT(tiled_form(fam, 96, 10) == (intel || mpich ? copies : list));
        EXPECT(tiled_form(fam, 96, 1000) == (intel || mpich ? copies : list));
        EXPECT(tiled_form(fam, 95, 1000) == (mpich ? copies : list));
        EXPECT(tiled_form(fam, 1000, 100) == (intel ? copies : vector));
    }

    /* Alternating-struct with A=2 at 3.2 kB: 16-byte joined blocks between a
     * head and a tail; on MPICH that struct (as the plain vector above), a
     * list elsewhere */
    MPI_Datatype st;
    char err[256];
    EXPECT(mg_dt_parse("struct(displs=[0, 12, 4788], types=[int, vector(count=199, block=4, stride=6, int), "
                       "contig(count=3, int)])",
                       &st, err, sizeof err) == MG_DT_SUCCESS);
    mg_dt *rot = engine_type(st);
    for (int fam = 0; rot && fam < NFAMS; fam++) {
        mg_dt_form_policy p = policy_of(fam);
        EXPECT(built_as(rot, 1, 0, &p) == (fam == FAM_MPICH ? MPI_COMBINER_STRUCT : MPI_COMBINER_HINDEXED));
    }
    mg_dt_free(rot);
}

static void to_mpi_forms(void)
{
    MPI_Datatype tiled = tiled_ints(2, 16);
    mg_dt *d = NULL;
    EXPECT(mg_dt_from_mpi(tiled, &d) == MG_DT_SUCCESS);
    if (!d) return;
    EXPECT(form_of(d, 4000, MG_DT_FORM_VECTOR) == MPI_COMBINER_VECTOR);
    EXPECT(form_of(d, 4000, MG_DT_FORM_RESIZED) == MPI_COMBINER_CONTIGUOUS);
    EXPECT(form_of(d, 100, MG_DT_FORM_RESIZED) == MPI_COMBINER_VECTOR);
    EXPECT(form_of(d, 4000, MG_DT_FORM_LIST) == MPI_COMBINER_HINDEXED_BLOCK);

    mg_dt_form_policy mpich = policy_of(FAM_MPICH), openmpi = policy_of(FAM_OPENMPI);
    EXPECT(built_as(d, 4000, 0, &mpich) == MPI_COMBINER_CONTIGUOUS);
    EXPECT(built_as(d, 4000, 0, &openmpi) == MPI_COMBINER_HINDEXED_BLOCK);
    EXPECT(built_as(d, 100, 0, &mpich) == MPI_COMBINER_HINDEXED_BLOCK);
    EXPECT(built_as(d, 100, 0, &openmpi) == MPI_COMBINER_HINDEXED_BLOCK);
    EXPECT(form_of(d, 4000, MG_DT_FORM_AUTO) == form_of(d, 4000, -1));
    /* a policy of a base alone builds that form, as the form forced */
    for (int f = MG_DT_FORM_VECTOR; f <= MG_DT_FORM_LIST; f++)
        EXPECT(built_as(d, 4000, 0, &(mg_dt_form_policy){.base = f}) == form_of(d, 4000, f));

    /* 40-byte blocks: below 8 KiB a resized array on MPICH, a list elsewhere;
     * forced forms keep their 8 KiB rule */
    MPI_Datatype tiled10 = tiled_ints(10, 48);
    mg_dt *d10 = NULL;
    EXPECT(mg_dt_from_mpi(tiled10, &d10) == MG_DT_SUCCESS);
    if (d10) {
        EXPECT(built_as(d10, 50, 0, &mpich) == MPI_COMBINER_CONTIGUOUS);
        EXPECT(built_as(d10, 50, 0, &openmpi) == MPI_COMBINER_HINDEXED_BLOCK);
        EXPECT(form_of(d10, 50, MG_DT_FORM_RESIZED) == MPI_COMBINER_VECTOR);
        EXPECT(built_as(d10, 50, 0, &(mg_dt_form_policy){.base = MG_DT_FORM_RESIZED}) == MPI_COMBINER_VECTOR);
        EXPECT(to_mpi_packs_as(d10, tiled10, 50));
    }
    mg_dt_free(d10);
    MPI_Type_free(&tiled10);
    mg_dt_free(d);
    MPI_Type_free(&tiled);
}

/* The combiner of mg_dt_to_mpi_form(d, count, form)'s result (of
 * mg_dt_to_mpi_policy's where a policy is given), or -1. */
static int top_built_as(mg_dt *d, MPI_Count count, int form, const mg_dt_form_policy *policy)
{
    MPI_Datatype nt = MPI_DATATYPE_NULL;
    int ni, na, nd, comb = -1;
    int rc = policy ? mg_dt_to_mpi_policy(d, count, policy, &nt) : mg_dt_to_mpi_form(d, count, form, &nt);
    if (rc == MG_DT_SUCCESS) MPI_Type_get_envelope(nt, &ni, &na, &nd, &comb);
    if (nt != MPI_DATATYPE_NULL) MPI_Type_free(&nt);
    return comb;
}

static int top_combiner(mg_dt *d, MPI_Count count, int form) { return top_built_as(d, count, form, NULL); }

/* Elements of 4 KiB and more: on MPICH the one-element form repeated
 * (MPI_Type_contiguous of it), elsewhere, for one element and for smaller
 * ones the count-aware form (resized to count elements' bounds). The element
 * is Alternating-repeated's (Test 10), whose copies join into longer blocks
 * in the count-aware form. */
static void to_mpi_large_elements(void)
{
    for (int a = 256; a <= 512; a *= 2) {
        int lens[2] = {a - 1, a + 1}, displs[2] = {0, a + 1};
        MPI_Datatype idx, elem, nt = MPI_DATATYPE_NULL;
        MPI_Type_indexed(2, lens, displs, MPI_INT, &idx);
        MPI_Type_create_resized(idx, 0, (MPI_Aint)(2 * a + 2) * 4, &elem);
        MPI_Type_free(&idx);
        MPI_Type_commit(&elem);
        mg_dt *d = NULL;
        EXPECT(mg_dt_from_mpi(elem, &d) == MG_DT_SUCCESS);
        if (d) {
            for (int fam = 0; fam < NFAMS; fam++) {
                mg_dt_form_policy p = policy_of(fam);
                int large = a == 512 && fam == FAM_MPICH;
                EXPECT(top_built_as(d, 3, 0, &p) == (large ? MPI_COMBINER_CONTIGUOUS : MPI_COMBINER_RESIZED));
                EXPECT(top_built_as(d, 1, 0, &p) == MPI_COMBINER_RESIZED);
            }
            EXPECT(top_combiner(d, 3, MG_DT_FORM_COPIES) == MPI_COMBINER_CONTIGUOUS);
            EXPECT(top_combiner(d, 3, MG_DT_FORM_VECTOR) == MPI_COMBINER_RESIZED);
            EXPECT(mg_dt_to_mpi(d, 3, &nt) == MG_DT_SUCCESS);
            if (nt != MPI_DATATYPE_NULL) {
                MPI_Aint lb, ext;
                MPI_Type_get_extent(nt, &lb, &ext);
                EXPECT(lb == 0 && ext == 3 * (MPI_Aint)(2 * a + 2) * 4);
                EXPECT(same_packs(elem, 3, nt));
                MPI_Type_free(&nt);
            }
            EXPECT(top_built_as(d, 3, 0, &(mg_dt_form_policy){.base = MG_DT_FORM_RESIZED}) == MPI_COMBINER_RESIZED);
            EXPECT(top_built_as(d, 3, 0, &(mg_dt_form_policy){.base = MG_DT_FORM_COPIES}) == MPI_COMBINER_CONTIGUOUS);
        }
        mg_dt_free(d);
        MPI_Type_free(&elem);
    }
    /* Small elements are never copies: blocks of 400 bytes (Tiled A=100,
     * 20 kB; on Intel MPI copies won for Tiled but lost for Alternating,
     * docs/dt-engine.md) and of 8 bytes (Tiled A=2, 800 kB) */
    MPI_Datatype t100 = tiled_ints(100, 808), t2 = tiled_ints(2, 16);
    mg_dt *d100 = NULL, *d2 = NULL;
    EXPECT(mg_dt_from_mpi(t100, &d100) == MG_DT_SUCCESS && mg_dt_from_mpi(t2, &d2) == MG_DT_SUCCESS);
    if (d100 && d2) {
        EXPECT(top_combiner(d100, 50, MG_DT_FORM_AUTO) == MPI_COMBINER_RESIZED);
        EXPECT(top_combiner(d2, 50000, MG_DT_FORM_AUTO) == MPI_COMBINER_RESIZED);
        EXPECT(to_mpi_packs_as(d100, t100, 50));
    }
    mg_dt_free(d100);
    mg_dt_free(d2);
    MPI_Type_free(&t100);
    MPI_Type_free(&t2);
    /* The same layout as one struct of a head, a vector of joined blocks and
     * a tail (Alternating-struct), its data from byte 1008: on MPICH copies
     * of the period when the period holds 4 KiB, elsewhere and for smaller
     * periods the struct. */
    for (int a = 256; a <= 512; a *= 2) {
        int lens[3] = {a - 1, 1, a + 1}, n = 5;
        MPI_Aint displs[3] = {8, 8 + (MPI_Aint)(a + 1) * 4, 8 + ((MPI_Aint)(n - 1) * (2 * a + 2) + a + 1) * 4};
        MPI_Datatype joined, parts[3], joined_struct, st, nt = MPI_DATATYPE_NULL;
        MPI_Type_vector(n - 1, 2 * a, 2 * a + 2, MPI_INT, &joined);
        parts[0] = parts[2] = MPI_INT;
        parts[1] = joined;
        MPI_Type_create_struct(3, lens, displs, parts, &joined_struct);
        MPI_Type_free(&joined);
        /* placed 1000 bytes further: the period's displacements include that */
        MPI_Type_create_hindexed_block(1, 1, (MPI_Aint[]){1000}, joined_struct, &st);
        MPI_Type_free(&joined_struct);
        MPI_Type_commit(&st);
        mg_dt *d = NULL;
        EXPECT(mg_dt_from_mpi(st, &d) == MG_DT_SUCCESS);
        for (int count = 1; d && count <= 2; count++) {
            if (count == 1) {
                for (int fam = 0; fam < NFAMS; fam++) {
                    mg_dt_form_policy p = policy_of(fam);
                    int copies = a == 512 && fam == FAM_MPICH;
                    EXPECT(built_as(d, 1, 0, &p) == (copies ? MPI_COMBINER_CONTIGUOUS : MPI_COMBINER_STRUCT));
                }
                EXPECT(form_of(d, 1, MG_DT_FORM_COPIES) == MPI_COMBINER_CONTIGUOUS);
                EXPECT(form_of(d, 1, MG_DT_FORM_VECTOR) == MPI_COMBINER_STRUCT);
            }
            EXPECT(mg_dt_to_mpi(d, count, &nt) == MG_DT_SUCCESS);
            if (nt != MPI_DATATYPE_NULL) {
                MPI_Aint lb, ext, slb, sext;
                MPI_Type_get_extent(nt, &lb, &ext);
                MPI_Type_get_extent(st, &slb, &sext);
                EXPECT(lb == slb && ext == count * sext);
                EXPECT(same_packs(st, count, nt));
                MPI_Type_free(&nt);
            }
        }
        mg_dt_free(d);
        MPI_Type_free(&st);
    }
}

/* MPI_Pack of count elements of a and of one b from the same memory agree. */
static int same_packs(MPI_Datatype a, int count, MPI_Datatype b)
{
    MPI_Aint tlb, text, lb, ext;
    MPI_Type_get_true_extent(a, &tlb, &text);
    MPI_Type_get_extent(a, &lb, &ext);
    MPI_Aint span = text + (count - 1) * ext;
    unsigned char *buf = malloc((size_t)span + 1);
    for (MPI_Aint i = 0; i < span; i++) buf[i] = (unsigned char)(i * 13 + 5);
    int sa, sb, pa = 0, pb = 0;
    MPI_Pack_size(count, a, MPI_COMM_SELF, &sa);
    MPI_Pack_size(1, b, MPI_COMM_SELF, &sb);
    char *ra = malloc((size_t)sa + 1), *rb = malloc((size_t)sb + 1);
    MPI_Pack(buf - tlb, count, a, ra, sa, &pa, MPI_COMM_SELF);
    MPI_Pack(buf - tlb, 1, b, rb, sb, &pb, MPI_COMM_SELF);
    int ok = pa == pb && !memcmp(ra, rb, (size_t)pa);
    free(buf);
    free(ra);
    free(rb);
    return ok;
}

/* Long index lists, which the engine fills, measures and merges in place:
 * empty blocks (also at the lowest address), blocks touching the next one,
 * equal blocks, inside a vector and a struct. The expected block count is
 * computed here independently. */
static void long_lists(void)
{
    enum { N = 3000 };
    int lens[N], displs[N], fixed[N], runs3[N];
    MPI_Aint bytes[N], runs3_bytes[N];
    int expect = 0, end = -1;
    for (int k = 0, d = 40; k < N; k++) {
        lens[k] = (k * 7) % 5; /* 0..4, zeros included */
        displs[k] = d;
        fixed[k] = 3 * k + (k % 4 == 3 ? 9 : 0) * (k / 4);
        d += lens[k] + (k % 3 == 0 ? 0 : 2); /* every third block touches the next */
        if (lens[k] && displs[k] != end) expect++;
        if (lens[k]) end = displs[k] + lens[k];
    }
    displs[0] = -1000; /* lens[0] = 0: an empty block below all data */
    for (int k = 0; k < N; k++) bytes[k] = (MPI_Aint)displs[k] * (MPI_Aint)sizeof(int);
    /* blocks of 2 ints in runs of three that touch, the runs 1-11 ints apart
     * without a period (a blocked list, which keeps no list of lengths, that
     * merges) */
    for (int k = 0, d = 0; k < N; k++) {
        runs3[k] = d;
        runs3_bytes[k] = (MPI_Aint)d * (MPI_Aint)sizeof(int) + 1000;
        d += 2 + (k % 3 == 2 ? 1 + (k / 3) * (k / 3) % 11 : 0);
    }
    MPI_Datatype idx, hidx, blk, vec, st, blk3, hblk3, empty;
    MPI_Type_indexed(N, lens, displs, MPI_INT, &idx);
    MPI_Type_create_hindexed(N, lens, bytes, MPI_INT, &hidx);
    MPI_Type_create_indexed_block(N, 2, fixed, MPI_INT, &blk);
    MPI_Type_create_indexed_block(N, 2, runs3, MPI_INT, &blk3);
    MPI_Type_create_hindexed_block(N, 2, runs3_bytes, MPI_INT, &hblk3);
    MPI_Type_create_indexed_block(N, 0, fixed, MPI_INT, &empty);
    MPI_Type_commit(&idx);
    MPI_Type_create_hvector(3, 1, 40000, idx, &vec);
    MPI_Datatype members[2] = {idx, blk};
    int one[2] = {1, 1};
    MPI_Aint at[2] = {0, 80000};
    MPI_Type_create_struct(2, one, at, members, &st);
    MPI_Datatype all[] = {idx, hidx, blk, vec, st, blk3, hblk3, empty};
    const MPI_Count blocks[] = {expect, expect, N, 3 * (MPI_Count)expect, 0, N / 3, N / 3, 0};
    enum { NALL = sizeof all / sizeof *all };
    for (int i = 0; i < NALL; i++) {
        MPI_Datatype t = all[i], norm;
        MPI_Type_commit(&t);
        mg_dt *d = NULL;
        EXPECT(mg_dt_from_mpi(t, &d) == MG_DT_SUCCESS);
        if (!d) continue;
        if (i != 4) EXPECT(mg_dt_blocks(d) == blocks[i]);
        EXPECT(same_as_mpi_pack(t, 1));
        EXPECT(same_as_mpi_pack(t, 3));
        if (t == empty) {
            mg_dt_free(d);
            continue;
        }
        EXPECT(mg_dt_to_mpi(d, 2, &norm) == MG_DT_SUCCESS);
        MPI_Type_commit(&norm);
        EXPECT(same_packs(t, 2, norm));
        MPI_Type_free(&norm);
        mg_dt_free(d);
    }
    for (int i = 0; i < NALL; i++) MPI_Type_free(&all[i]);
}

/* A property of the engine's description of the type `text` (notation);
 * -1 if the text or the decoding fails (said on stderr). */
static MPI_Count property_of(const char *text, MPI_Count (*property)(const mg_dt *))
{
    MPI_Datatype t;
    char err[256];
    if (mg_dt_parse(text, &t, err, sizeof err) != MG_DT_SUCCESS) {
        fprintf(stderr, "%s: %s\n", text, err);
        return -1;
    }
    MPI_Type_commit(&t);
    mg_dt *d = NULL;
    MPI_Count value = mg_dt_from_mpi(t, &d) == MG_DT_SUCCESS ? property(d) : -1;
    mg_dt_free(d);
    MPI_Type_free(&t);
    return value;
}

static MPI_Count same_signature_of(const mg_dt *d) { return mg_dt_same_signature(d); }

/* mg_dt_same_signature of the type `text` is `expect`. */
static int signature_kept(const char *text, int expect)
{
    MPI_Count got = property_of(text, same_signature_of);
    if (got != expect) fprintf(stderr, "mg_dt_same_signature(%s) = %lld, not %d\n", text, (long long)got, expect);
    return got == expect;
}

static void same_signature(void)
{
    EXPECT(signature_kept("vector(count=3, block=2, stride=5, int)", 1));
    EXPECT(signature_kept("struct(blocks=[1, 2], displs=[0, 8], types=[int, int])", 1));
    EXPECT(signature_kept("struct(blocks=[1, 1], displs=[0, 4], types=[int, float])", 0));
    EXPECT(signature_kept("struct(blocks=[1, 1], displs=[0, 8], types=[int, double])", 0));
    EXPECT(signature_kept("struct(blocks=[0, 3], displs=[0, 8], types=[double, int])", 1)); /* no doubles */
    EXPECT(signature_kept("double_int", 0));
    EXPECT(signature_kept("contig(count=5, byte)", 1));
    EXPECT(signature_kept("struct(blocks=[4, 1], displs=[0, 4], types=[byte, int])", 0));
}

/* mg_dt_mean_block of the type `text`: after normalization, rounded down. */
static int mean_block_is(const char *text, MPI_Count expect)
{
    MPI_Count got = property_of(text, mg_dt_mean_block);
    if (got != expect) fprintf(stderr, "mg_dt_mean_block(%s) = %lld, not %lld\n", text, (long long)got, (long long)expect);
    return got == expect;
}

static void mean_block(void)
{
    EXPECT(mean_block_is("vector(count=3, block=2, stride=5, int)", 8));
    EXPECT(mean_block_is("indexed(blocks=[3, 4], displs=[0, 10], int)", 14));  /* 28 bytes in 2 blocks */
    EXPECT(mean_block_is("indexed(blocks=[3, 4], displs=[0, 3], int)", 28));   /* merged into one block */
    EXPECT(mean_block_is("indexed(blocks=[1, 1, 2], displs=[0, 2, 5], int)", 5)); /* 16 / 3 */
    EXPECT(mean_block_is("contig(count=0, int)", 0));
    EXPECT(mean_block_is("resized(lb=0, extent=16, contig(count=0, int))", 0));
    EXPECT(mean_block_is("struct(blocks=[0, 0], displs=[0, 8], types=[int, double])", 0));
    mg_dt *none = NULL;
    EXPECT(mg_dt_mean_block(none) == 0);
}

/* Streams of more than 8 MB: pieces of whole elements, a last short piece,
 * outputs at every alignment, elements too big for a piece. */
static void big_streams(void)
{
    MPI_Datatype pair, tiled, odd, wide;
    MPI_Type_contiguous(2, MPI_INT, &pair);
    MPI_Type_create_resized(pair, 0, 16, &tiled); /* 8 of 16 bytes */
    int blens[2] = {3, 1};
    MPI_Aint at[2] = {0, 16};
    MPI_Datatype types[2] = {MPI_INT, MPI_CHAR};
    MPI_Type_create_struct(2, blens, at, types, &odd); /* 13 bytes, extent 20 */
    MPI_Type_vector(1500, 3, 4, MPI_INT, &wide);       /* 18000 bytes: more than a piece */
    EXPECT(same_as_mpi_pack_at(tiled, 1100000, 0));
    EXPECT(same_as_mpi_pack_at(tiled, 1100001, 3));
    EXPECT(same_as_mpi_pack_at(odd, 700001, 5));
    EXPECT(same_as_mpi_pack_at(odd, 700000, 15));
    EXPECT(same_as_mpi_pack_at(wide, 500, 1));
    MPI_Type_free(&pair);
    MPI_Type_free(&tiled);
    MPI_Type_free(&odd);
    MPI_Type_free(&wide);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    bad_input();
    empty_type();
    to_mpi_negative_byte_stride();
    large_count_constructors();
    to_mpi_forms();
    form_policies();
    to_mpi_resized_blocks();
    to_mpi_large_elements();
    to_mpi_list();
    long_lists();
    big_streams();
    same_signature();
    mean_block();
    MPI_Finalize();
    if (failures)
        fprintf(stderr, "test_dt_errors: %d failure(s)\n", failures);
    else
        printf("test_dt_errors: ok\n");
    return failures != 0;
}
