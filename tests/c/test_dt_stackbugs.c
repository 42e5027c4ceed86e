/* MPI library bugs the datatype engine meets (docs/dt-engine.md, "MPI library
 * bugs"). Each case prints what this MPI library does and asserts only what
 * mpiguide does: a library with the bug fixed never makes the test fail.
 *
 *  1. Open MPI 5.0.11 packs complex elements whose byte stride is a multiple
 *     of the component size but not of the element size wrongly when the data
 *     is aligned: hvector(2, 1, 24, c_double_complex) packs its second element
 *     from offset 16 instead of 24. Every form with complex elements at those
 *     offsets does (hvector, hindexed_block, struct, resized elements), so
 *     mg_dt_to_mpi cannot avoid it with the same type signature; the engine's
 *     own pack is right.
 *  2. MPICH 5.0.2 repeats contig(3, resized(contig(4, byte), lb=6, extent=-9))
 *     at count > 1 by 3 * -9 = -27 bytes instead of its extent +9. mg_dt_to_mpi
 *     never repeats such a type by its extent: its type packs right.
 *  3. Open MPI is reported to crash on MPI_Type_create_struct with count 0:
 *     mg_dt_parse and mg_dt_to_mpi never call it so (counted here through the
 *     profiling interface).
 *  4. Open MPI packs an hvector (or vector) of byte stride -1 as contiguous:
 *     the engine's type and its text use contiguous copies of extent -1.
 */
#include "mpiguide/dt.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;
#define EXPECT(cond, ...)                                                   \
    do {                                                                    \
        if (!(cond)) {                                                      \
            failures++;                                                     \
            fprintf(stderr, "%s:%d: FAIL %s: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                   \
            fprintf(stderr, "\n");                                          \
        }                                                                   \
    } while (0)

/* ------------------------------------------------------------ struct count 0 */

static long struct_count0_calls;
int MPI_Type_create_struct(int count, const int array_of_blocklengths[], const MPI_Aint array_of_displacements[],
                           const MPI_Datatype array_of_types[], MPI_Datatype *newtype)
{
    if (count == 0) struct_count0_calls++;
    return PMPI_Type_create_struct(count, array_of_blocklengths, array_of_displacements, array_of_types, newtype);
}
#ifdef MG_HAVE_MPI_LARGE_COUNT
int MPI_Type_create_struct_c(MPI_Count count, const MPI_Count array_of_blocklengths[],
                             const MPI_Count array_of_displacements[], const MPI_Datatype array_of_types[],
                             MPI_Datatype *newtype)
{
    if (count == 0) struct_count0_calls++;
    return PMPI_Type_create_struct_c(count, array_of_blocklengths, array_of_displacements, array_of_types, newtype);
}
#endif

/* ------------------------------------------------------------ helpers */

/* A buffer of pseudo-random bytes, so that a packed piece tells where it was
 * read (the origins printed); data at base = buf + 512 (64-byte aligned). */
static unsigned char buf[1024] __attribute__((aligned(64)));
static unsigned char *const base = buf + 512;

static void fill(void)
{
    uint32_t x = 12345;
    for (int i = 0; i < 1024; i++) {
        x = x * 1664525u + 1013904223u;
        buf[i] = (unsigned char)(x >> 24);
    }
}

/* Where (relative to base) the len bytes at p were read; -9999 if nowhere. */
static long origin(const unsigned char *p, int len)
{
    for (long o = -512; o + len <= 512; o++)
        if (!memcmp(base + o, p, (size_t)len)) return o;
    return -9999;
}

/* The stream of blocks (offset, len) in order. */
static size_t expected(const long *off, int nblocks, int len, unsigned char *out)
{
    size_t n = 0;
    for (int i = 0; i < nblocks; i++, n += (size_t)len) memcpy(out + n, base + off[i], (size_t)len);
    return n;
}

/* MPI_Pack of count elements of t; prints where each piece of `len` bytes
 * came from; 1 if the stream is `want`. */
static int library_packs(const char *what, MPI_Datatype t, int count, const unsigned char *want, size_t n, int len)
{
    unsigned char out[512];
    int pos = 0;
    MPI_Pack(base, count, t, out, sizeof out, &pos, MPI_COMM_SELF);
    int right = (size_t)pos == n && !memcmp(out, want, n);
    printf("  %-62s MPI_Pack %s; pieces read from", what, right ? "right" : "WRONG");
    for (int i = 0; i + len <= pos; i += len) printf(" %ld", origin(out + i, len));
    printf("\n");
    return right;
}

static int engine_packs(MPI_Datatype t, int count, const unsigned char *want, size_t n)
{
    mg_dt *d = NULL;
    unsigned char out[512];
    MPI_Count act = -1;
    int ok = mg_dt_from_mpi(t, &d) == MG_DT_SUCCESS && mg_dt_pack(d, base, count, 0, out, sizeof out, &act) == 0 &&
             act == (MPI_Count)n && !memcmp(out, want, n);
    mg_dt_free(d);
    return ok;
}

/* mg_dt_to_mpi(t, count): one element of it packs `want`. */
static int to_mpi_packs(const char *what, MPI_Datatype t, int count, const unsigned char *want, size_t n, int len)
{
    mg_dt *d = NULL;
    MPI_Datatype nt = MPI_DATATYPE_NULL;
    int ok = mg_dt_from_mpi(t, &d) == MG_DT_SUCCESS && mg_dt_to_mpi(d, count, &nt) == MG_DT_SUCCESS;
    if (ok) ok = library_packs(what, nt, 1, want, n, len);
    if (nt != MPI_DATATYPE_NULL) MPI_Type_free(&nt);
    mg_dt_free(d);
    return ok;
}

static MPI_Datatype parsed(const char *text)
{
    MPI_Datatype t = MPI_DATATYPE_NULL;
    char err[256];
    int rc = mg_dt_parse(text, &t, err, sizeof err);
    EXPECT(rc == MG_DT_SUCCESS, "'%s': %s", text, err);
    if (t != MPI_DATATYPE_NULL) MPI_Type_commit(&t);
    return t;
}

/* ------------------------------------------------------------ 1. complex strides */

static void complex_stride(void)
{
    printf("1. complex elements at a stride that is not a multiple of their size (Open MPI 5.0.11: wrong):\n");
    const long off[2] = {0, 24};
    unsigned char want[64];
    size_t n = expected(off, 2, 16, want);
    MPI_Datatype t;
    MPI_Type_create_hvector(2, 1, 24, MPI_C_DOUBLE_COMPLEX, &t);
    MPI_Type_commit(&t);
    int lib = library_packs("hvector(count=2, block=1, stride=24, c_double_complex)", t, 1, want, n, 16);
    EXPECT(engine_packs(t, 1, want, n), "the engine packs hvector(2, 1, 24, c_double_complex) wrongly");
    /* mg_dt_to_mpi keeps the type signature, so its type is the same typemap
     * of complex elements: it packs as the library packs the original */
    mg_dt *d = NULL, *d2 = NULL;
    MPI_Datatype nt = MPI_DATATYPE_NULL;
    char s1[256] = "", s2[256] = "";
    EXPECT(mg_dt_from_mpi(t, &d) == 0 && mg_dt_to_mpi(d, 1, &nt) == 0 && mg_dt_from_mpi(nt, &d2) == 0 &&
               mg_dt_describe(d, s1, sizeof s1) == 0 && mg_dt_describe(d2, s2, sizeof s2) == 0 && !strcmp(s1, s2),
           "mg_dt_to_mpi's type is '%s', the original '%s'", s2, s1);
    if (nt != MPI_DATATYPE_NULL) {
        int same = library_packs("mg_dt_to_mpi of it", nt, 1, want, n, 16);
        if (same != lib) printf("  (the library packs mg_dt_to_mpi's type differently from the original)\n");
        MPI_Type_free(&nt);
    }
    mg_dt_free(d);
    mg_dt_free(d2);
    MPI_Type_free(&t);
    /* the same typemap in every other form: no form avoids it */
    const char *forms[] = {
        "hindexed_block(block=1, displs=[0, 24], c_double_complex)",
        "struct(displs=[0, 24], types=[c_double_complex, c_double_complex])",
        "contig(count=2, resized(lb=0, extent=24, c_double_complex))",
        "hvector(count=2, block=1, stride=24, contig(count=1, c_double_complex))",
        "hvector(count=2, block=1, stride=24, double_complex)",
        "hvector(count=2, block=1, stride=12, c_float_complex)",
    };
    for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++) {
        t = parsed(forms[i]);
        if (t == MPI_DATATYPE_NULL) continue;
        int sz;
        MPI_Type_size(t, &sz);
        const long off2[2] = {0, i == 5 ? 12 : 24};
        n = expected(off2, 2, sz / 2, want);
        library_packs(forms[i], t, 1, want, n, sz / 2);
        EXPECT(engine_packs(t, 1, want, n), "the engine packs %s wrongly", forms[i]);
        MPI_Type_free(&t);
    }
}

/* ------------------------------------------------------------ 2. negative extents in contig */

static void negative_extent_contig(void)
{
    printf("2. contig(3, resized(contig(4, byte), lb=6, extent=-9)) at count 2 (MPICH 5.0.2: wrong):\n");
    MPI_Datatype c4, r, t;
    MPI_Type_contiguous(4, MPI_BYTE, &c4);
    MPI_Type_create_resized(c4, 6, -9, &r);
    MPI_Type_contiguous(3, r, &t);
    MPI_Type_commit(&t);
    MPI_Aint lb, ext;
    MPI_Type_get_extent(t, &lb, &ext);
    EXPECT(lb == -12 && ext == 9, "MPI reports lb %ld extent %ld, the standard -12 and 9", (long)lb, (long)ext);
    /* element k at k * 9: its copies at 0, -9, -18 */
    const long off[6] = {0, -9, -18, 9, 0, -9};
    unsigned char want[64];
    size_t n = expected(off, 6, 4, want);
    library_packs("MPI_Pack(count=2) of it", t, 2, want, n, 4);
    EXPECT(engine_packs(t, 2, want, n), "the engine packs 2 elements wrongly");
    /* the engine's unpack writes exactly those bytes */
    mg_dt *d = NULL;
    static unsigned char out[1024];
    memset(out, 0xEE, sizeof out);
    MPI_Count used = -1;
    EXPECT(mg_dt_from_mpi(t, &d) == 0 && mg_dt_unpack(d, want, (MPI_Count)n, 0, out + 512, 2, &used) == 0 &&
               used == (MPI_Count)n,
           "mg_dt_unpack failed");
    int outside = 0;
    for (int i = 0; i < 1024; i++) {
        int inside = 0;
        for (int b = 0; b < 6; b++) inside |= i - 512 >= off[b] && i - 512 < off[b] + 4;
        if (!inside && out[i] != 0xEE) outside++;
    }
    EXPECT(!outside, "mg_dt_unpack wrote %d bytes outside the typemap", outside);
    mg_dt_free(d);
    EXPECT(to_mpi_packs("mg_dt_to_mpi(type, 2), one element", t, 2, want, n, 4), "mg_dt_to_mpi's type packs wrongly");
    MPI_Type_free(&t);
    MPI_Type_free(&r);
    MPI_Type_free(&c4);
}

/* ------------------------------------------------------------ 4. byte stride -1 */

static void stride_minus_one(void)
{
    printf("4. a byte stride of -1 (Open MPI 5.0.11: packed as contiguous):\n");
    /* resized to the standard's lb/extent: Open MPI also reports lb 0 and
     * extent 6 for the bare hvector */
    MPI_Datatype h, t;
    MPI_Type_create_hvector(3, 2, -1, MPI_CHAR, &h);
    MPI_Type_create_resized(h, -2, 4, &t);
    MPI_Type_free(&h);
    MPI_Type_commit(&t);
    /* blocks of 2 bytes at 0, -1, -2; element k at k * 4 (lb -2, extent 4) */
    const long off[9] = {0, -1, -2, 4, 3, 2, 8, 7, 6};
    unsigned char want[64];
    library_packs("resized(lb=-2, extent=4, hvector(count=3, block=2, stride=-1, char))", t, 1, want,
                  expected(off, 3, 2, want), 2);
    for (int count = 1; count <= 3; count++) {
        size_t n = expected(off, 3 * count, 2, want);
        EXPECT(engine_packs(t, count, want, n), "the engine packs %d elements wrongly", count);
        char what[64];
        snprintf(what, sizeof what, "mg_dt_to_mpi(type, %d), one element", count);
        /* a contiguous type of copies resized to extent -1 (of a derived
         * type here: the form MPICH repeats wrongly, never repeated so) */
        EXPECT(to_mpi_packs(what, t, count, want, n, 2), "mg_dt_to_mpi(type, %d) packs wrongly", count);
    }
    /* its text, parsed, at counts 1 to 3 */
    mg_dt *d = NULL;
    char text[256] = "";
    EXPECT(mg_dt_from_mpi(t, &d) == 0 && mg_dt_describe(d, text, sizeof text) == 0, "describe failed");
    EXPECT(!strcmp(text, "resized(lb=-2, extent=4, contig(count=3, resized(lb=0, extent=-1, contig(count=2, char))))"),
           "text '%s'", text);
    MPI_Datatype pt = parsed(text);
    for (int count = 1; count <= 3 && pt != MPI_DATATYPE_NULL; count++) {
        size_t n = expected(off, 3 * count, 2, want);
        char what[64];
        snprintf(what, sizeof what, "its text, count %d", count);
        EXPECT(library_packs(what, pt, count, want, n, 2), "the text's type packs %d elements wrongly", count);
    }
    if (pt != MPI_DATATYPE_NULL) MPI_Type_free(&pt);
    mg_dt_free(d);
    MPI_Type_free(&t);
}

/* ------------------------------------------------------------ 3. struct count 0 */

static void struct_without_members(void)
{
    printf("3. MPI_Type_create_struct with count 0 (reported to crash Open MPI; not called here):\n");
    const char *texts[] = {
        "struct(displs=[], types=[])",
        "struct(blocks=[], displs=[], types=[])",
        "contig(count=3, struct(displs=[], types=[]))",
        "struct(displs=[0, 8], types=[struct(displs=[], types=[]), int])",
        "resized(lb=-8, extent=32, struct(displs=[], types=[]))",
    };
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        MPI_Datatype t = parsed(texts[i]);
        if (t == MPI_DATATYPE_NULL) continue;
        MPI_Count size, lb, ext;
        MPI_Type_size_x(t, &size);
        MPI_Type_get_extent_x(t, &lb, &ext);
        mg_dt *d = NULL;
        for (int count = 0; count <= 2; count++) {
            MPI_Datatype nt = MPI_DATATYPE_NULL;
            EXPECT(mg_dt_from_mpi(t, &d) == 0 && mg_dt_to_mpi(d, count, &nt) == 0, "%s: to_mpi failed", texts[i]);
            if (nt != MPI_DATATYPE_NULL) MPI_Type_free(&nt);
            mg_dt_free(d);
            d = NULL;
        }
        printf("  %-62s size %lld lb %lld extent %lld\n", texts[i], (long long)size, (long long)lb, (long long)ext);
        MPI_Type_free(&t);
    }
    EXPECT(struct_count0_calls == 0, "MPI_Type_create_struct called %ld times with count 0", struct_count0_calls);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(version, &len);
    printf("test_dt_stackbugs: %.60s\n", version);
    fill();
    complex_stride();
    negative_extent_contig();
    struct_without_members();
    stride_minus_one();
    MPI_Finalize();
    if (failures)
        fprintf(stderr, "test_dt_stackbugs: %d failure(s)\n", failures);
    else
        printf("test_dt_stackbugs: mpiguide is right on all of them\n");
    return failures != 0;
}
