/* The notation round trip: mg_dt_describe / mg_dt_describe_count -> mg_dt_parse
 * -> mg_dt_describe.
 *
 * For every predefined type this MPI library defines, for types whose extent is
 * not the span of their data (resized, alignment padding, negative extents,
 * types without data), for a byte stride of -1, for structs without members,
 * for the f90 parameterized types and for counts beyond int: the text parses
 * into a type with the size, lb, extent, true lb/extent and packed bytes of the
 * original (describe) or of mg_dt_to_mpi's type (describe_count), and the
 * description of the parsed type is the same text again. The list of
 * predefined types below is this test's own, not the engine's table. */
#include "mpiguide/dt.h"

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures, checks;
#define FAIL(...)                             \
    do {                                      \
        failures++;                           \
        fprintf(stderr, "FAIL " __VA_ARGS__); \
        fprintf(stderr, "\n");                \
    } while (0)

/* ------------------------------------------------------------ helpers */

typedef struct {
    MPI_Count size, lb, extent, tlb, textent;
} props;

static props props_of(MPI_Datatype t)
{
    props p;
    MPI_Type_size_x(t, &p.size);
    MPI_Type_get_extent_x(t, &p.lb, &p.extent);
    MPI_Type_get_true_extent_x(t, &p.tlb, &p.textent);
    if (p.size == 0) p.tlb = p.textent = 0; /* no true bounds without data */
    return p;
}

static int same_props(const props *a, const props *b)
{
    return a->size == b->size && a->lb == b->lb && a->extent == b->extent && a->tlb == b->tlb &&
           a->textent == b->textent;
}

static char *text_of(const mg_dt *d, MPI_Count count, int per_count)
{
    for (size_t len = 256;; len *= 4) {
        char *s = malloc(len);
        int rc = per_count ? mg_dt_describe_count(d, count, s, len) : mg_dt_describe(d, s, len);
        if (rc == MG_DT_SUCCESS) return s;
        free(s);
        if (rc != MG_DT_ERR_TRUNCATED || len > (1u << 24)) return NULL;
    }
}

/* MPI_Pack and the engine's pack of k elements of a and b (same properties)
 * from one buffer of distinct bytes; 1 if a and b pack alike. */
static int same_bytes(MPI_Datatype a, MPI_Datatype b, int k, const char *label)
{
    props p = props_of(a);
    if (p.size == 0) return 1;
    MPI_Count lo = 0, hi = 0;
    for (int i = 0; i < k; i++) {
        MPI_Count x = i * p.extent + p.tlb, y = x + p.textent;
        if (i == 0 || x < lo) lo = x;
        if (i == 0 || y > hi) hi = y;
    }
    size_t span = (size_t)(hi - lo) + 1, n = (size_t)(p.size * k);
    unsigned char *buf = malloc(span), *o[4];
    for (size_t i = 0; i < span; i++) buf[i] = (unsigned char)(i * 151 + 7);
    void *base = buf - lo;
    int ok = 1, pos[2] = {0, 0};
    for (int j = 0; j < 4; j++) o[j] = calloc(n + 1, 1);
    MPI_Datatype t[2] = {a, b};
    for (int j = 0; j < 2; j++) {
        MPI_Pack(base, k, t[j], o[j], (int)n, &pos[j], MPI_COMM_SELF);
        mg_dt *d = NULL;
        MPI_Count act = -1;
        ok &= mg_dt_from_mpi(t[j], &d) == MG_DT_SUCCESS && mg_dt_pack(d, base, k, 0, o[2 + j], n, &act) == 0 &&
              act == (MPI_Count)n;
        mg_dt_free(d);
    }
    /* The engine packs both alike, and MPI packs the parsed type as it packs
     * the original or as the engine does: where a library packs a typemap
     * wrongly (tests/c/test_dt_stackbugs.c), either may be wrong. */
    ok &= pos[0] == (int)n && pos[1] == (int)n;
    if (!ok || memcmp(o[2], o[3], n) || (memcmp(o[0], o[1], n) && memcmp(o[0], o[3], n))) {
        FAIL("%s: packed bytes of %d element(s) differ (engine parsed = original: %d, MPI_Pack parsed = original: "
             "%d, MPI_Pack parsed = engine: %d)",
             label, k, !memcmp(o[2], o[3], n), !memcmp(o[0], o[1], n), !memcmp(o[0], o[3], n));
        ok = 0;
    }
    for (int j = 0; j < 4; j++) free(o[j]);
    free(buf);
    return ok;
}

typedef struct {
    MPI_Aint lo, hi;
    int any;
} span;

static int widen(MPI_Aint disp, MPI_Count len, void *arg)
{
    span *s = arg;
    if (!s->any || disp < s->lo) s->lo = disp;
    if (!s->any || disp + len > s->hi) s->hi = disp + (MPI_Aint)len;
    s->any = 1;
    return 0;
}

/* True lb/extent of count elements of d from its blocks (mg_dt_walk). */
static void data_bounds(const mg_dt *d, MPI_Count count, props *p)
{
    span s = {0, 0, 0};
    mg_dt_walk(d, count, widen, &s);
    p->tlb = s.lo;
    p->textent = s.hi - s.lo;
}

/* describe (count < 0) or describe_count(count) of t, parsed back: the same
 * properties and bytes as t itself or as mg_dt_to_mpi(t, count), and the same
 * text when the parsed type is described. Returns the text (or NULL). */
static char *round_trip(const char *label, MPI_Datatype t, MPI_Count count)
{
    checks++;
    mg_dt *d = NULL;
    if (mg_dt_from_mpi(t, &d) != MG_DT_SUCCESS) {
        FAIL("%s: mg_dt_from_mpi failed", label);
        return NULL;
    }
    char *text = text_of(d, count, count >= 0);
    MPI_Datatype ref = MPI_DATATYPE_NULL, pt = MPI_DATATYPE_NULL;
    char err[256] = "";
    if (!text) {
        FAIL("%s: describe failed", label);
    } else if (count >= 0 && mg_dt_to_mpi(d, count, &ref) != MG_DT_SUCCESS) {
        FAIL("%s: mg_dt_to_mpi failed", label);
    } else if (mg_dt_parse(text, &pt, err, sizeof err) != MG_DT_SUCCESS) {
        FAIL("%s: '%s' does not parse: %s", label, text, err);
    } else {
        MPI_Type_commit(&pt);
        MPI_Datatype want = count >= 0 ? ref : t;
        props a = props_of(pt), b = props_of(want);
        /* true bounds: those of the data (some libraries count bounds of
         * members without data in, MPICH in structs) */
        data_bounds(d, count >= 0 ? count : 1, &b);
        if (!same_props(&a, &b))
            FAIL("%s: '%s' parses to size %lld lb %lld extent %lld true %lld/%lld, expected %lld %lld %lld %lld/%lld",
                 label, text, (long long)a.size, (long long)a.lb, (long long)a.extent, (long long)a.tlb,
                 (long long)a.textent, (long long)b.size, (long long)b.lb, (long long)b.extent, (long long)b.tlb,
                 (long long)b.textent);
        else if (a.size * 3 + (a.extent < 0 ? -a.extent : a.extent) * 3 + a.textent < (1 << 24))
            for (int k = 1; k <= 3; k++) same_bytes(pt, want, k, label);
        mg_dt *d2 = NULL;
        char *again = mg_dt_from_mpi(pt, &d2) == MG_DT_SUCCESS ? text_of(d2, 0, 0) : NULL;
        if (!again || strcmp(again, text)) FAIL("%s: described again as '%s', first '%s'", label, again, text);
        free(again);
        mg_dt_free(d2);
    }
    if (pt != MPI_DATATYPE_NULL) MPI_Type_free(&pt);
    if (ref != MPI_DATATYPE_NULL) MPI_Type_free(&ref);
    mg_dt_free(d);
    return text;
}

/* Both round trips; frees t. */
static void both(const char *label, MPI_Datatype t, MPI_Count count)
{
    MPI_Type_commit(&t);
    free(round_trip(label, t, -1));
    free(round_trip(label, t, count));
    MPI_Type_free(&t);
}

/* Text of describe (count < 0) or describe_count must be `want`. */
static void expect_text(const char *label, MPI_Datatype t, MPI_Count count, const char *want)
{
    mg_dt *d = NULL;
    char *s = mg_dt_from_mpi(t, &d) == MG_DT_SUCCESS ? text_of(d, count, count >= 0) : NULL;
    if (!s || strcmp(s, want)) FAIL("%s: text '%s', expected '%s'", label, s ? s : "(none)", want);
    free(s);
    mg_dt_free(d);
}

/* ------------------------------------------------------------ predefined types */

typedef struct {
    const char *name;
    MPI_Datatype type;
} named;
static named predefined[128];
static int npredefined;

static void init_predefined(void)
{
    int n = 0;
#define P(nm, handle) predefined[n++] = (named){nm, handle};
    /* clang-format off */
    P("char", MPI_CHAR) P("signed_char", MPI_SIGNED_CHAR) P("unsigned_char", MPI_UNSIGNED_CHAR) P("byte", MPI_BYTE)
    P("packed", MPI_PACKED) P("short", MPI_SHORT) P("unsigned_short", MPI_UNSIGNED_SHORT) P("int", MPI_INT)
    P("unsigned", MPI_UNSIGNED) P("long", MPI_LONG) P("unsigned_long", MPI_UNSIGNED_LONG)
    P("long_long", MPI_LONG_LONG) P("long_long_int", MPI_LONG_LONG_INT)
    P("unsigned_long_long", MPI_UNSIGNED_LONG_LONG) P("float", MPI_FLOAT) P("double", MPI_DOUBLE)
    P("long_double", MPI_LONG_DOUBLE) P("wchar", MPI_WCHAR) P("c_bool", MPI_C_BOOL) P("int8_t", MPI_INT8_T)
    P("int16_t", MPI_INT16_T) P("int32_t", MPI_INT32_T) P("int64_t", MPI_INT64_T) P("uint8_t", MPI_UINT8_T)
    P("uint16_t", MPI_UINT16_T) P("uint32_t", MPI_UINT32_T) P("uint64_t", MPI_UINT64_T)
    P("c_complex", MPI_C_COMPLEX) P("c_float_complex", MPI_C_FLOAT_COMPLEX)
    P("c_double_complex", MPI_C_DOUBLE_COMPLEX) P("c_long_double_complex", MPI_C_LONG_DOUBLE_COMPLEX)
    P("aint", MPI_AINT) P("offset", MPI_OFFSET) P("count", MPI_COUNT) P("float_int", MPI_FLOAT_INT)
    P("double_int", MPI_DOUBLE_INT) P("long_int", MPI_LONG_INT) P("2int", MPI_2INT) P("short_int", MPI_SHORT_INT)
    P("long_double_int", MPI_LONG_DOUBLE_INT)
#ifdef MPI_CXX_BOOL
    P("cxx_bool", MPI_CXX_BOOL)
#endif
#ifdef MPI_CXX_COMPLEX
    P("cxx_complex", MPI_CXX_COMPLEX)
#endif
#ifdef MPI_CXX_FLOAT_COMPLEX
    P("cxx_float_complex", MPI_CXX_FLOAT_COMPLEX)
#endif
#ifdef MPI_CXX_DOUBLE_COMPLEX
    P("cxx_double_complex", MPI_CXX_DOUBLE_COMPLEX)
#endif
#ifdef MPI_CXX_LONG_DOUBLE_COMPLEX
    P("cxx_long_double_complex", MPI_CXX_LONG_DOUBLE_COMPLEX)
#endif
#ifdef MPI_CHARACTER
    P("character", MPI_CHARACTER)
#endif
#ifdef MPI_LOGICAL
    P("logical", MPI_LOGICAL)
#endif
#ifdef MPI_INTEGER
    P("integer", MPI_INTEGER)
#endif
#ifdef MPI_REAL
    P("real", MPI_REAL)
#endif
#ifdef MPI_DOUBLE_PRECISION
    P("double_precision", MPI_DOUBLE_PRECISION)
#endif
#ifdef MPI_COMPLEX
    P("complex", MPI_COMPLEX)
#endif
#ifdef MPI_DOUBLE_COMPLEX
    P("double_complex", MPI_DOUBLE_COMPLEX)
#endif
#ifdef MPI_LOGICAL1
    P("logical1", MPI_LOGICAL1)
#endif
#ifdef MPI_LOGICAL2
    P("logical2", MPI_LOGICAL2)
#endif
#ifdef MPI_LOGICAL4
    P("logical4", MPI_LOGICAL4)
#endif
#ifdef MPI_LOGICAL8
    P("logical8", MPI_LOGICAL8)
#endif
#ifdef MPI_LOGICAL16
    P("logical16",
                                                                                              MPI_LOGICAL16)
#endif
#ifdef MPI_INTEGER1
    P("integer1",
                                                                                                  MPI_INTEGER1)
#endif
#ifdef MPI_INTEGER2
    P("integer2",
                                                                                                      MPI_INTEGER2)
#endif
#ifdef MPI_INTEGER4
    P("integer4",
                                                                                                          MPI_INTEGER4)
#endif
#ifdef MPI_INTEGER8
    P("integer"
                                                                                                              "8",
                                                                                                              MPI_INTEGER8)
#endif
#ifdef MPI_INTEGER16
    P("inte"
                                                                                                                  "ger1"
                                                                                                                  "6",
                                                                                                                  MPI_INTEGER16)
#endif
#ifdef MPI_REAL2
    P("real2",
                                                                                                                      MPI_REAL2)
#endif
#ifdef MPI_REAL4
    P("real4",
                                                                                                                          MPI_REAL4)
#endif
#ifdef MPI_REAL8
    P("real8",
                                                                                                                              MPI_REAL8)
#endif
#ifdef MPI_REAL16
    P("real16",
                                                                                                                                  MPI_REAL16)
#endif
#ifdef MPI_COMPLEX4
    P("complex4",
                                                                                                                                      MPI_COMPLEX4)
#endif
#ifdef MPI_COMPLEX8
    P("complex8",
                                                                                                                                          MPI_COMPLEX8)
#endif
#ifdef MPI_COMPLEX16
    P("complex16",
                                                                                                                                              MPI_COMPLEX16)
#endif
#ifdef MPI_COMPLEX32
    P("complex32",
                                                                                                                                                  MPI_COMPLEX32)
#endif
#ifdef MPI_2REAL
    P("2real",
                                                                                                                                                      MPI_2REAL)
#endif
#ifdef MPI_2DOUBLE_PRECISION
    P("2double_precision",
                                                                                                                                                          MPI_2DOUBLE_PRECISION)
#endif
#ifdef MPI_2INTEGER
    P("2integer",
                                                                                                                                                              MPI_2INTEGER)
#endif
#ifdef MPI_2COMPLEX
    P("2complex",
                                                                                                                                                                  MPI_2COMPLEX)
#endif
#ifdef MPI_2DOUBLE_COMPLEX
    P("2double_complex",
                                                                                                                                                                      MPI_2DOUBLE_COMPLEX)
#endif
#ifdef MPIX_C_FLOAT16
    P("mpix_c_float16",
                                                                                                                                                                          MPIX_C_FLOAT16)
#endif
#ifdef MPIX_BFLOAT16
    P("mpix_bfloat16",
                                                                                                                                                                              MPIX_BFLOAT16)
#endif
#undef P
    npredefined = n;
    /* clang-format on */
}

/* A bare name parses to a dup of its handle. */
static int parses_to_handle(const char *text, MPI_Datatype h)
{
    MPI_Datatype t;
    char err[256];
    if (mg_dt_parse(text, &t, err, sizeof err) != MG_DT_SUCCESS) return 0;
    int ni, na, nd, comb, iv[1];
    MPI_Aint av[1];
    MPI_Datatype dv[1] = {MPI_DATATYPE_NULL};
    MPI_Type_get_envelope(t, &ni, &na, &nd, &comb);
    int ok = comb == MPI_COMBINER_DUP && nd == 1 && MPI_Type_get_contents(t, 0, 0, 1, iv, av, dv) == MPI_SUCCESS &&
             dv[0] == h;
    MPI_Type_free(&t);
    return ok;
}

static void test_predefined(void)
{
    init_predefined();
    int tested = 0, absent = 0;
    for (int i = 0; i < npredefined; i++) {
        const char *name = predefined[i].name;
        MPI_Datatype h = predefined[i].type;
        int size = 0;
        char label[96], text[128], err[256];
        if (h == MPI_DATATYPE_NULL || MPI_Type_size(h, &size) != MPI_SUCCESS || size == 0) {
            /* defined in mpi.h but not available: refused with a clear message */
            MPI_Datatype t;
            if (mg_dt_parse(name, &t, err, sizeof err) != MG_DT_ERR_PARSE || !strstr(err, "not available"))
                FAIL("%s (size 0 here): parse gave '%s'", name, err);
            absent++;
            continue;
        }
        tested++;
        if (!parses_to_handle(name, h)) FAIL("'%s' does not parse to its handle", name);
        /* describe prints a name (or, for the pairs with a gap, their fields)
         * that parses back to the same type */
        snprintf(label, sizeof label, "%s", name);
        char *s = round_trip(label, h, -1);
        if (s && !strchr(s, '(') && !parses_to_handle(s, h)) FAIL("%s: described as '%s', another type", name, s);
        free(s);
        free(round_trip(label, h, 3));
        /* in constructors, with and without the data's own extent */
        MPI_Datatype t;
        snprintf(label, sizeof label, "contig(count=3, %s)", name);
        MPI_Type_contiguous(3, h, &t);
        both(label, t, 2);
        snprintf(label, sizeof label, "hvector(count=3, block=2, stride=%d, %s)", 2 * size + 3, name);
        MPI_Type_create_hvector(3, 2, 2 * size + 3, h, &t);
        both(label, t, 2);
        snprintf(label, sizeof label, "resized(lb=-3, extent=%d, %s)", 2 * size + 1, name);
        MPI_Type_create_resized(h, -3, 2 * size + 1, &t);
        both(label, t, 3);
        snprintf(text, sizeof text, "struct(displs=[0, %d], types=[%s, char])", size, name);
        if (mg_dt_parse(text, &t, err, sizeof err) != MG_DT_SUCCESS)
            FAIL("%s: %s", text, err);
        else
            both(text, t, 2);
    }
    printf("test_dt_notation: %d predefined types round-trip (%d defined by mpi.h but not available)\n", tested,
           absent);
}

/* ------------------------------------------------------------ lb and extent */

static MPI_Datatype parsed(const char *text)
{
    MPI_Datatype t = MPI_DATATYPE_NULL;
    char err[256];
    if (mg_dt_parse(text, &t, err, sizeof err) != MG_DT_SUCCESS) FAIL("'%s': %s", text, err);
    return t;
}

static void test_bounds(void)
{
    /* the example: one element of the count-2 text is 48 bytes wide */
    MPI_Datatype c3, t;
    MPI_Type_contiguous(3, MPI_INT, &c3);
    MPI_Type_create_resized(c3, 0, 24, &t);
    MPI_Type_free(&c3);
    expect_text("resized(contig(3,int),0,24) x2", t, 2,
                "resized(lb=0, extent=48, vector(count=2, block=3, stride=6, int))");
    expect_text("resized(contig(3,int),0,24)", t, -1, "resized(lb=0, extent=24, contig(count=3, int))");
    expect_text("resized(contig(3,int),0,24) x1", t, 1, "resized(lb=0, extent=24, contig(count=3, int))");
    both("resized(contig(3,int),0,24)", t, 2);

    /* data bounds that MPI libraries round differently (MPICH 10, Open MPI 12) */
    MPI_Type_create_hvector(2, 1, 6, MPI_INT, &t);
    MPI_Type_commit(&t);
    props p = props_of(t);
    char want[128];
    snprintf(want, sizeof want, "resized(lb=0, extent=%lld, hvector(count=2, block=1, stride=6, int))",
             (long long)p.extent);
    expect_text("hvector(2,1,6,int)", t, -1, want);
    both("hvector(2,1,6,int)", t, 3);
    /* on the alignment grid: no resized needed */
    t = parsed("vector(count=4, block=2, stride=3, int)");
    expect_text("vector", t, -1, "vector(count=4, block=2, stride=3, int)");
    expect_text("vector x1", t, 1, "vector(count=4, block=2, stride=3, int)");
    both("vector", t, 3);

    const char *cases[] = {
        "struct(displs=[0, 8], types=[double, char])",                          /* padded to 16 */
        "resized(lb=0, extent=9, struct(displs=[0, 8], types=[double, char]))", /* and not */
        "struct(displs=[0, 8, -4], types=[double, int, int])",
        "hindexed(blocks=[1, 1, 1], displs=[0, 6, -2], int)",
        "resized(lb=6, extent=-9, contig(count=4, byte))",
        "contig(count=3, resized(lb=6, extent=-9, contig(count=4, byte)))",
        "resized(lb=-4, extent=16, contig(count=0, int))", /* no data, with bounds */
        "contig(count=0, int)",
        "struct(displs=[40], types=[vector(count=3, block=1, stride=2, short)])", /* displaced */
        "resized(lb=100, extent=-7, struct(displs=[-3], types=[contig(count=2, double_int)]))",
        "subarray(sizes=[5, 6], subsizes=[2, 3], starts=[1, 2], order=fortran, long_double)",
        "darray(size=4, rank=3, gsizes=[9, 7], distribs=[cyclic, block], dargs=[2, default], psizes=[2, 2], "
        "order=c, double)",
        /* byte stride -1 (written without hvector: Open MPI packs an hvector
         * of stride -1 as contiguous and reports its bounds wrong) */
        "contig(count=5, resized(lb=0, extent=-1, char))",
        "resized(lb=-3, extent=11, contig(count=4, resized(lb=0, extent=-1, contig(count=3, short))))",
        "hvector(count=2, block=1, stride=40, contig(count=3, resized(lb=0, extent=-1, vector(count=2, block=1, "
        "stride=3, char))))",
        "struct(displs=[], types=[])",
        "contig(count=2, struct(displs=[], types=[]))",
        "struct(displs=[0, 16], types=[struct(displs=[], types=[]), int])",
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        t = parsed(cases[i]);
        if (t == MPI_DATATYPE_NULL) continue;
        for (MPI_Count count = 0; count <= 3; count++) {
            MPI_Type_commit(&t);
            free(round_trip(cases[i], t, count));
        }
        free(round_trip(cases[i], t, -1));
        MPI_Type_free(&t);
    }

    /* a byte stride of -1 prints as contiguous copies of a type of extent -1 */
    MPI_Datatype h;
    MPI_Type_create_hvector(3, 1, -1, MPI_CHAR, &h);
    MPI_Type_create_resized(h, -2, 3, &t);
    expect_text("hvector(3,1,-1,char)", t, -1,
                "resized(lb=-2, extent=3, contig(count=3, resized(lb=0, extent=-1, char)))");
    MPI_Type_free(&t);
    MPI_Type_free(&h);
}

/* ------------------------------------------------------------ f90 types */

static void test_f90(void)
{
    MPI_Datatype r, c, i, t;
    if (MPI_Type_create_f90_real(6, 30, &r) != MPI_SUCCESS || MPI_Type_create_f90_complex(12, MPI_UNDEFINED, &c) ||
        MPI_Type_create_f90_integer(5, &i)) {
        printf("test_dt_notation: no f90 parameterized types on this MPI library\n");
        return;
    }
    expect_text("f90_real", r, -1, "f90_real(p=6, r=30)");
    expect_text("f90_complex", c, -1, "f90_complex(p=12, r=undefined)");
    expect_text("f90_integer", i, -1, "f90_integer(r=5)");
    free(round_trip("f90_real", r, -1));
    free(round_trip("f90_complex", c, 2));
    MPI_Type_contiguous(3, i, &t);
    both("contig(3, f90_integer)", t, 2);
    MPI_Datatype ty[3] = {r, c, i}, st;
    int bl[3] = {1, 2, 1};
    MPI_Aint ds[3] = {0, 8, 48};
    MPI_Type_create_struct(3, bl, ds, ty, &st);
    both("struct of f90 types", st, 2);
    /* a precision no Fortran kind has: an error, not an abort */
    char err[256];
    int rc = mg_dt_parse("f90_real(p=1000, r=undefined)", &t, err, sizeof err);
    if (rc != MG_DT_ERR_MPI || !strstr(err, "MPI_Type_create_f90_real failed"))
        FAIL("f90_real(p=1000): rc %d, '%s'", rc, err);
}

/* ------------------------------------------------------------ beyond int */

/* Types of more than INT_MAX elements (properties and normal forms only: they
 * span gigabytes). mg_dt_to_mpi builds them on every stack; the text parses
 * back where the stack has the MPI-4 `_c` constructors, else the parser names
 * the limit. */
static void big(const char *label, MPI_Datatype t)
{
    checks++;
    MPI_Type_commit(&t);
    mg_dt *d = NULL, *d2 = NULL;
    MPI_Datatype nt = MPI_DATATYPE_NULL, pt = MPI_DATATYPE_NULL;
    char *s = NULL, *s2 = NULL, err[512] = "";
    int rc = mg_dt_from_mpi(t, &d);
    if (rc) {
        FAIL("%s: mg_dt_from_mpi: %s", label, mg_dt_strerror(rc));
        goto done;
    }
    if (!(s = text_of(d, 0, 0))) {
        FAIL("%s: describe failed", label);
        goto done;
    }
    rc = mg_dt_to_mpi(d, 1, &nt);
    if (rc) {
        FAIL("%s: mg_dt_to_mpi: %s", label, mg_dt_strerror(rc));
    } else {
        props a = props_of(nt), b = props_of(t);
        if (!same_props(&a, &b))
            FAIL("%s: mg_dt_to_mpi size %lld extent %lld true %lld/%lld, expected %lld %lld %lld/%lld", label,
                 (long long)a.size, (long long)a.extent, (long long)a.tlb, (long long)a.textent, (long long)b.size,
                 (long long)b.extent, (long long)b.tlb, (long long)b.textent);
        /* the same normal form read back from the built type */
        if (mg_dt_from_mpi(nt, &d2) != MG_DT_SUCCESS || !(s2 = text_of(d2, 0, 0)) || strcmp(s, s2))
            FAIL("%s: mg_dt_to_mpi's type normalizes to '%s', the type to '%s'", label, s2, s);
    }
    rc = mg_dt_parse(s, &pt, err, sizeof err);
#ifdef MG_HAVE_MPI_LARGE_COUNT
    if (rc) {
        FAIL("%s: '%s' does not parse: %s", label, s, err);
    } else {
        props a = props_of(pt), b = props_of(t);
        if (!same_props(&a, &b)) FAIL("%s: '%s' parses to another size or extent", label, s);
    }
#else
    if (strstr(s, "count=") && (rc != MG_DT_ERR_PARSE || !strstr(err, "INT_MAX")))
        FAIL("%s: '%s': rc %d, '%s' (expected the large-count limit)", label, s, rc, err);
    else if (rc)
        printf("test_dt_notation: %s: %s\n", label, err);
#endif
done:
    printf("test_dt_notation: %s: %s\n", label, s ? s : "?");
    free(s);
    free(s2);
    mg_dt_free(d);
    mg_dt_free(d2);
    if (nt != MPI_DATATYPE_NULL) MPI_Type_free(&nt);
    if (pt != MPI_DATATYPE_NULL) MPI_Type_free(&pt);
    MPI_Type_free(&t);
}

static void test_beyond_int(void)
{
    const int G = 1 << 30;
    MPI_Datatype c, h, t;
    /* one block of 3 * 2^30 ints */
    MPI_Type_contiguous(G, MPI_INT, &c);
    MPI_Type_contiguous(3, c, &t);
    big("contig(3, contig(2^30, int))", t);
    /* a vector whose blocks exceed int */
    MPI_Type_create_hvector(2, 3, -((MPI_Aint)4 << 32), c, &t);
    big("hvector(2, 3, -2^34 bytes, contig(2^30, int))", t);
    MPI_Type_free(&c);
    /* 3 * 10^9 copies of one char, stride 0, and stride -1 */
    MPI_Type_create_hvector(1000000000, 1, 0, MPI_CHAR, &h);
    MPI_Type_create_hvector(3, 1, 0, h, &t);
    big("3e9 copies, stride 0", t);
    MPI_Type_free(&h);
    /* (stride -1 built as contiguous copies of extent -1: Open MPI gets the
     * bounds of an hvector of stride -1 wrong) */
    MPI_Datatype r;
    MPI_Type_create_resized(MPI_CHAR, 0, -1, &r);
    MPI_Type_contiguous(1000000000, r, &h);
    MPI_Type_create_hvector(3, 1, -1000000000, h, &t);
    big("3e9 copies, stride -1", t);
    MPI_Type_free(&h);
    MPI_Type_free(&r);
    /* index lists with blocks beyond int (equal and different lengths) */
    MPI_Type_contiguous(G, MPI_SHORT, &c);
    MPI_Aint d2[2] = {-((MPI_Aint)1 << 34), 0};
    MPI_Type_create_hindexed_block(2, 2, d2, c, &t);
    big("hindexed_block(2 blocks of 2^31 shorts)", t);
    int bl[3] = {1, 3, 2};
    MPI_Aint d3[3] = {0, (MPI_Aint)1 << 33, -((MPI_Aint)1 << 34)};
    MPI_Type_create_hindexed(3, bl, d3, c, &t);
    big("hindexed(blocks of 2^30, 3 * 2^30, 2^31 shorts)", t);
    MPI_Type_free(&c);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    test_predefined();
    test_bounds();
    test_f90();
    test_beyond_int();
    MPI_Finalize();
    if (failures)
        fprintf(stderr, "test_dt_notation: %d failure(s) in %d round trips\n", failures, checks);
    else
        printf("test_dt_notation: %d round trips, all passed\n", checks);
    return failures != 0;
}
