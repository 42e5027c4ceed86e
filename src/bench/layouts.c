/* The catalog of the datatype layouts of Carpen-Amarie et al. (2016); see layouts.h and docs/layouts.md.
 *
 * One table row per layout. A row carries the public description, the default
 * set (Table 2 of the paper and the per-test choices), the geometry family
 * that mg_layout_offset() uses and mg_layout_geometry() names, whether it may
 * be the sub of contiguous-subtype, a shape function (rules, block size, what n
 * must be a multiple of; layouts_check.c) and a builder (the MPI constructors;
 * layouts_build.c). Several layouts share a shape function and a geometry, so a
 * new description of an existing layout is one enum value, one row and one
 * builder. This file also holds the names, the helpers the other layouts_*.c
 * share (layouts_internal.h) and the catalog queries.
 */
#include "layouts_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* Parameter defaults                                                  */
/* ------------------------------------------------------------------ */

const default_rule mg_layout__defaults[] = {
    {DS_TILED, MG_LAYOUT_P_B, {1, 3}, {1, 1}, {2, 0}},
    {DS_BLOCK, MG_LAYOUT_P_B1, {1, 2}, {1, 1}, {1, 0}},
    {DS_BLOCK, MG_LAYOUT_P_B2, {1, 4}, {1, 1}, {3, 0}},
    {DS_BUCKET, MG_LAYOUT_P_A1, {1, 1}, {1, 2}, {-1, 0}},
    {DS_BUCKET, MG_LAYOUT_P_A2, {1, 3}, {1, 2}, {1, 0}},
    {DS_BUCKET, MG_LAYOUT_P_B, {1, 3}, {1, 1}, {2, 0}},
    {DS_ALT, MG_LAYOUT_P_A1, {1, 1}, {1, 2}, {-1, 0}},
    {DS_ALT, MG_LAYOUT_P_A2, {1, 3}, {1, 2}, {1, 0}},
    {DS_ALT, MG_LAYOUT_P_B1, {1, 2}, {1, 1}, {1, 0}},
    {DS_ALT, MG_LAYOUT_P_B2, {1, 4}, {1, 1}, {3, 0}},
    {DS_ALTREP, MG_LAYOUT_P_A1, {1, 1}, {1, 1}, {-1, -1}},
    {DS_ALTREP, MG_LAYOUT_P_A2, {1, 1}, {1, 1}, {1, 1}},
    {DS_ALTREP, MG_LAYOUT_P_B1, {1, 1}, {1, 1}, {1, 1}},
    {DS_HETERO, MG_LAYOUT_P_B, {1, 1}, {1, 1}, {0, 0}},
    {DS_TSTRUCT, MG_LAYOUT_P_B, {1, 3}, {1, 1}, {2, 0}},
    {DS_TSTRUCT, MG_LAYOUT_P_S1, {0, 0}, {1, 1}, {1, 1}},
    {DS_TSTRUCT, MG_LAYOUT_P_S2, {0, 0}, {1, 1}, {1, 1}},
    {DS_VTILED, MG_LAYOUT_P_B, {1, 3}, {1, 1}, {2, 0}},
    {DS_VTILED, MG_LAYOUT_P_S, {0, 0}, {1, 1}, {MG_LAYOUT_DEFAULT_S, MG_LAYOUT_DEFAULT_S}},
};
const size_t mg_layout__ndefaults = sizeof mg_layout__defaults / sizeof mg_layout__defaults[0];

/* ------------------------------------------------------------------ */
/* Catalog table                                                       */
/* ------------------------------------------------------------------ */

static const char *const geo_names[GEO_HETERO + 1] = {
    "contiguous", "tiled", "block", "bucket", "alternating", "alternating-b2a2", "rowcol", "heterogeneous"};

#define TILED_P  (P(A) | P(VARIANT) | P(B) | P(TYPE))
#define BLOCK_P  (P(A) | P(VARIANT) | P(B1) | P(B2) | P(TYPE))
#define BUCKET_P (P(A) | P(VARIANT) | P(A1) | P(A2) | P(B) | P(TYPE))
#define ALT_P    (P(A) | P(VARIANT) | P(A1) | P(A2) | P(B1) | P(B2) | P(TYPE))
#define ALTREP_P (P(A) | P(A1) | P(A2) | P(B1) | P(TYPE))
#define ROWCOL_P (P(A) | P(TYPE))

/* clang-format off */
const row mg_layout__catalog[MG_LAYOUT_NKINDS] = {
    [MG_LAYOUT_CONTIGUOUS] = {
        .d = {.name = "contiguous",
              .title = "Contiguous",
              .summary = "n consecutive elements of the basic type: the baseline",
              .constructors = "none (predefined basic type, count n)",
              .tests = "1, 2 (as reference)",
              .params = P(TYPE),
              .dynamic = 0},
        .defaults = DS_NONE, .geo = GEO_CONTIG,
        .shape = mg_layout__shape_contig, .build = mg_layout__build_contig,
    },
    [MG_LAYOUT_TILED] = {
        .d = {.name = "tiled",
              .title = "Tiled (AB)",
              .summary = "runs of A elements, one run every B elements (B > A)",
              .constructors = "MPI_Type_create_resized(MPI_Type_contiguous)",
              .tests = "1, 3, 4, 5, 6, 7",
              .params = TILED_P,
              .dynamic = 0},
        .defaults = DS_TILED, .geo = GEO_TILED, .sub = 1,
        .shape = mg_layout__shape_tiled, .build = mg_layout__build_tiled,
    },
    [MG_LAYOUT_BLOCK] = {
        .d = {.name = "block",
              .title = "Block (A Bbar)",
              .summary = "pairs of A-element runs; the run starts are B1, then B2 elements apart "
                         "(B1 != B2, both > A)",
              .constructors = "MPI_Type_create_resized(MPI_Type_create_indexed_block)",
              .tests = "1, 3, 4, 8",
              .params = BLOCK_P,
              .dynamic = 0},
        .defaults = DS_BLOCK, .geo = GEO_BLOCK, .sub = 1,
        .shape = mg_layout__shape_block, .build = mg_layout__build_block,
    },
    [MG_LAYOUT_BUCKET] = {
        .d = {.name = "bucket",
              .title = "Bucket (Abar B)",
              .summary = "runs of A1 and of A2 elements in turn, one run every B elements",
              .constructors = "MPI_Type_create_resized(MPI_Type_indexed)",
              .tests = "1, 3, 4",
              .params = BUCKET_P,
              .dynamic = 0},
        .defaults = DS_BUCKET, .geo = GEO_BUCKET, .sub = 1,
        .shape = mg_layout__shape_bucket, .build = mg_layout__build_bucket,
    },
    [MG_LAYOUT_ALTERNATING] = {
        .d = {.name = "alternating",
              .title = "Alternating (Abar Bbar)",
              .summary = "a run of A1 elements, B1 elements later a run of A2, B2 elements later "
                         "the next pair",
              .constructors = "MPI_Type_create_resized(MPI_Type_indexed)",
              .tests = "1, 3, 4, 9",
              .params = ALT_P,
              .dynamic = 0},
        .defaults = DS_ALT, .geo = GEO_ALT, .sub = 1,
        .shape = mg_layout__shape_alt, .build = mg_layout__build_alt,
    },
    [MG_LAYOUT_TILED_HETEROGENEOUS] = {
        .d = {.name = "tiled-heterogeneous",
              .title = "Tiled-heterogeneous (AB Tbar)",
              .summary = "A chars, A ints, A doubles, A shorts; each run starts B elements (of "
                         "the previous run's type) after the previous one (B >= A)",
              .constructors = "MPI_Type_create_struct(char, int, double, short)",
              .tests = "2",
              .params = P(A) | P(B),
              .dynamic = 0},
        .defaults = DS_HETERO, .geo = GEO_HETERO,
        .shape = mg_layout__shape_hetero, .build = mg_layout__build_hetero,
    },
    [MG_LAYOUT_CONTIGUOUS_SUBTYPE] = {
        .d = {.name = "contiguous-subtype",
              .title = "Contiguous-subtype",
              .summary = "the block of a basic layout (sub=) repeated n/k times inside one type",
              .constructors = "MPI_Type_contiguous(n/k, block type of sub)",
              .tests = "4",
              .params = P(SUB) | TILED_P | BLOCK_P | BUCKET_P | ALT_P,
              .dynamic = 1},
        .defaults = DS_NONE, .geo = GEO_CONTIG,
        .shape = mg_layout__shape_contig_sub, .build = mg_layout__build_contig_sub,
    },
    [MG_LAYOUT_TILED_STRUCT] = {
        .d = {.name = "tiled-struct",
              .title = "Tiled-struct",
              .summary = "Tiled as a struct of two members holding S1 and S2 tiled units (B >= A)",
              .constructors = "MPI_Type_create_struct(MPI_Type_contiguous(S1|S2, tiled))",
              .tests = "5",
              .params = TILED_P | P(S1) | P(S2),
              .dynamic = 0},
        .defaults = DS_TSTRUCT, .geo = GEO_TILED,
        .shape = mg_layout__shape_tiled_struct, .build = mg_layout__build_tiled_struct,
    },
    [MG_LAYOUT_TILED_VECTOR] = {
        .d = {.name = "tiled-vector",
              .title = "Tiled-vector",
              .summary = "Tiled as one vector of n/A runs, resized to n/A*B elements",
              .constructors = "MPI_Type_create_resized(MPI_Type_vector)",
              .tests = "6",
              .params = TILED_P,
              .dynamic = 1},
        .defaults = DS_TILED, .geo = GEO_TILED,
        .shape = mg_layout__shape_tiled_vector, .build = mg_layout__build_tiled_vector,
    },
    [MG_LAYOUT_VECTOR_TILED] = {
        .d = {.name = "vector-tiled",
              .title = "Vector-tiled",
              .summary = "Tiled as a nested vector: S units per inner vector, n/(S*A) of them S*B "
                         "elements apart",
              .constructors = "MPI_Type_create_hvector(MPI_Type_vector)",
              .tests = "7",
              .params = TILED_P | P(S),
              .dynamic = 1},
        .defaults = DS_VTILED, .geo = GEO_TILED, .tight = 1,
        .shape = mg_layout__shape_vector_tiled, .build = mg_layout__build_vector_tiled,
    },
    [MG_LAYOUT_BLOCK_INDEXED] = {
        .d = {.name = "block-indexed",
              .title = "Block-indexed",
              .summary = "Block with each of the n/A runs listed explicitly",
              .constructors = "MPI_Type_create_indexed_block (n/A indices)",
              .tests = "8",
              .params = BLOCK_P,
              .dynamic = 1},
        .defaults = DS_BLOCK, .geo = GEO_BLOCK, .tight = 1,
        .shape = mg_layout__shape_block, .build = mg_layout__build_block_indexed,
    },
    [MG_LAYOUT_ALTERNATING_INDEXED] = {
        .d = {.name = "alternating-indexed",
              .title = "Alternating-indexed",
              .summary = "Alternating with each of the 2n/(A1+A2) runs listed explicitly",
              .constructors = "MPI_Type_indexed (2n/(A1+A2) blocks)",
              .tests = "9",
              .params = ALT_P,
              .dynamic = 1},
        .defaults = DS_ALT, .geo = GEO_ALT, .tight = 1,
        .shape = mg_layout__shape_alt, .build = mg_layout__build_alt_indexed,
    },
    [MG_LAYOUT_ALTERNATING_REPEATED] = {
        .d = {.name = "alternating-repeated",
              .title = "Alternating-repeated",
              .summary = "Alternating with B2 = A2, so each A2 run touches the next A1 run; block "
                         "repeated n/k times",
              .constructors = "MPI_Type_create_resized(MPI_Type_indexed)",
              .tests = "10",
              .params = ALTREP_P,
              .dynamic = 0},
        .defaults = DS_ALTREP, .geo = GEO_ALT_B2A2,
        .shape = mg_layout__shape_alt, .build = mg_layout__build_alt,
    },
    [MG_LAYOUT_ALTERNATING_STRUCT] = {
        .d = {.name = "alternating-struct",
              .title = "Alternating-struct",
              .summary = "alternating-repeated as a first A1 run, a vector of A2+A1 runs and a "
                         "last A2 run",
              .constructors = "MPI_Type_create_struct(basic, MPI_Type_vector, basic)",
              .tests = "10",
              .params = ALTREP_P,
              .dynamic = 1},
        .defaults = DS_ALTREP, .geo = GEO_ALT_B2A2, .tight = 1,
        .shape = mg_layout__shape_alt, .build = mg_layout__build_alt_struct,
    },
    [MG_LAYOUT_ROWCOL_FULLY_INDEXED] = {
        .d = {.name = "rowcol-fully-indexed",
              .title = "RowCol-fully-indexed",
              .summary = "first row (A elements) and rest of the first column (n-A elements, "
                         "stride A) of an (n+1-A) x A matrix; one index per element",
              .constructors = "MPI_Type_create_indexed_block (n indices of 1)",
              .tests = "11",
              .params = ROWCOL_P,
              .dynamic = 1},
        .defaults = DS_NONE, .geo = GEO_ROWCOL, .tight = 1,
        .shape = mg_layout__shape_rowcol, .build = mg_layout__build_rowcol_full,
    },
    [MG_LAYOUT_ROWCOL_CONTIGUOUS_AND_INDEXED] = {
        .d = {.name = "rowcol-contiguous-and-indexed",
              .title = "RowCol-contiguous-and-indexed",
              .summary = "the row-column layout with the row as one block of A and one block per "
                         "column element",
              .constructors = "MPI_Type_indexed (1+n-A blocks)",
              .tests = "11",
              .params = ROWCOL_P,
              .dynamic = 1},
        .defaults = DS_NONE, .geo = GEO_ROWCOL, .tight = 1,
        .shape = mg_layout__shape_rowcol, .build = mg_layout__build_rowcol_ci,
    },
    [MG_LAYOUT_ROWCOL_STRUCT] = {
        .d = {.name = "rowcol-struct",
              .title = "RowCol-struct",
              .summary = "the row-column layout as a contiguous row and a vector column",
              .constructors = "MPI_Type_create_struct(MPI_Type_contiguous, MPI_Type_vector)",
              .tests = "11",
              .params = ROWCOL_P,
              .dynamic = 1},
        .defaults = DS_NONE, .geo = GEO_ROWCOL, .tight = 1,
        .shape = mg_layout__shape_rowcol, .build = mg_layout__build_rowcol_struct,
    },
};
/* clang-format on */

const char *const mg_layout__param_names[MG_LAYOUT_NPARAMS] = {"sub", "A",  "variant", "A1", "A2", "B",
                                                               "B1",  "B2", "S",       "S1", "S2", "type"};

const char *const mg_layout__basic_names[MG_LAYOUT_NBASIC] = {"int", "char", "short", "double", "byte"};
const int mg_layout__basic_sizes[MG_LAYOUT_NBASIC] = {sizeof(int), sizeof(char), sizeof(short), sizeof(double), 1};

/* Tiled-heterogeneous: member types in order, and the alignment MPI pads the
 * struct extent to (the strictest of the members, as MPICH and Open MPI do). */
const int mg_layout__het_sizes[HET_PARTS] = {sizeof(char), sizeof(int), sizeof(double), sizeof(short)};
int mg_layout__het_align(void)
{
    size_t a = _Alignof(char);
    if (_Alignof(int) > a) a = _Alignof(int);
    if (_Alignof(double) > a) a = _Alignof(double);
    if (_Alignof(short) > a) a = _Alignof(short);
    return (int)a;
}
MPI_Datatype mg_layout__het_type(int part)
{
    switch (part) {
    case 0: return MPI_CHAR;
    case 1: return MPI_INT;
    case 2: return MPI_DOUBLE;
    default: return MPI_SHORT;
    }
}

MPI_Datatype mg_layout__basic_mpi(long b)
{
    switch (b) {
    case MG_LAYOUT_CHAR: return MPI_CHAR;
    case MG_LAYOUT_SHORT: return MPI_SHORT;
    case MG_LAYOUT_DOUBLE: return MPI_DOUBLE;
    case MG_LAYOUT_BYTE: return MPI_BYTE;
    default: return MPI_INT;
    }
}

/* ------------------------------------------------------------------ */
/* Small helpers                                                       */
/* ------------------------------------------------------------------ */

void mg_layout__put_msg(char *err, size_t errlen, const char *fmt, ...)
{
    if (!err || errlen == 0) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

int mg_layout__fail(ctx *c, int code, const char *fmt, ...)
{
    if (c->err && c->errlen > 0) {
        char body[320];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(body, sizeof body, fmt, ap);
        va_end(ap);
        snprintf(c->err, c->errlen, "%s: %s", c->prefix, body);
    }
    return code;
}

static int lower(int ch) { return (ch >= 'A' && ch <= 'Z') ? ch - 'A' + 'a' : ch; }

/* s[0..len) equals the C string lit, ignoring ASCII case. */
int mg_layout__eq_ci(const char *s, size_t len, const char *lit)
{
    size_t i = 0;
    for (; i < len && lit[i]; i++)
        if (lower((unsigned char)s[i]) != lower((unsigned char)lit[i])) return 0;
    return i == len && lit[i] == '\0';
}

/* Appends to buf[len] at *pos; remembers truncation in *trunc. */
void mg_layout__app(char *buf, size_t len, size_t *pos, int *trunc, const char *fmt, ...)
{
    if (*pos >= len) {
        *trunc = 1;
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(buf + *pos, len - *pos, fmt, ap);
    va_end(ap);
    if (w < 0 || (size_t)w >= len - *pos) {
        *trunc = 1;
        *pos = len;
    } else {
        *pos += (size_t)w;
    }
}

void mg_layout__names_of(unsigned mask, char *buf, size_t len)
{
    size_t pos = 0;
    int trunc = 0;
    buf[0] = '\0';
    for (int i = 0; i < MG_LAYOUT_NPARAMS; i++)
        if (mask & MG_LAYOUT_BIT(i))
            mg_layout__app(buf, len, &pos, &trunc, "%s%s", pos ? " " : "", mg_layout__param_names[i]);
}

void mg_layout__kind_names(char *buf, size_t len)
{
    size_t pos = 0;
    int trunc = 0;
    buf[0] = '\0';
    for (int i = 0; i < MG_LAYOUT_NKINDS; i++)
        mg_layout__app(buf, len, &pos, &trunc, "%s%s", i ? ", " : "", mg_layout__catalog[i].d.name);
}

/* Whether layout k may be the sub of contiguous-subtype. */
int mg_layout__is_sub(long k) { return k >= 0 && k < MG_LAYOUT_NKINDS && mg_layout__catalog[k].sub; }

/* The layouts that may be a sub, separated by sep: "tiled|block|bucket|alternating". */
const char *mg_layout__sub_names(const char *sep, char *buf, size_t len)
{
    size_t pos = 0;
    int trunc = 0;
    buf[0] = '\0';
    for (int i = 0; i < MG_LAYOUT_NKINDS; i++)
        if (mg_layout__catalog[i].sub)
            mg_layout__app(buf, len, &pos, &trunc, "%s%s", pos ? sep : "", mg_layout__catalog[i].d.name);
    return buf;
}

/* ------------------------------------------------------------------ */
/* Catalog queries                                                     */
/* ------------------------------------------------------------------ */

int mg_layouts_count(void) { return MG_LAYOUT_NKINDS; }

const mg_layout_desc *mg_layouts_get(int kind)
{
    return (kind >= 0 && kind < MG_LAYOUT_NKINDS) ? &mg_layout__catalog[kind].d : NULL;
}

int mg_layout__find_kind(const char *s, size_t len)
{
    for (int i = 0; i < MG_LAYOUT_NKINDS; i++)
        if (mg_layout__eq_ci(s, len, mg_layout__catalog[i].d.name)) return i;
    return -1;
}

int mg_layouts_find(const char *name, mg_layout_kind *kind)
{
    if (!name || !kind) return MG_LAYOUT_EARG;
    int k = mg_layout__find_kind(name, strlen(name));
    if (k < 0) return MG_LAYOUT_ESPEC;
    *kind = (mg_layout_kind)k;
    return MG_LAYOUT_OK;
}

int mg_layout_is_sub(mg_layout_kind kind) { return mg_layout__is_sub(kind); }

const char *mg_layout_geometry(const mg_layout_params *p)
{
    if (!p || (int)p->kind < 0 || p->kind >= MG_LAYOUT_NKINDS) return NULL;
    const row *g = &mg_layout__catalog[p->kind];
    if (p->kind == MG_LAYOUT_CONTIGUOUS_SUBTYPE) {
        if (!(p->given & P(SUB)) || !mg_layout__is_sub(p->value[MG_LAYOUT_P_SUB])) return NULL;
        g = &mg_layout__catalog[p->value[MG_LAYOUT_P_SUB]];
    }
    return geo_names[g->geo];
}

const char *mg_layout_param_name(mg_layout_param p)
{
    return ((int)p >= 0 && p < MG_LAYOUT_NPARAMS) ? mg_layout__param_names[p] : NULL;
}

const char *mg_layout_basic_name(mg_layout_basic b)
{
    return ((int)b >= 0 && b < MG_LAYOUT_NBASIC) ? mg_layout__basic_names[b] : NULL;
}

int mg_layout_synopsis(mg_layout_kind kind, char *buf, size_t len)
{
    if ((int)kind < 0 || kind >= MG_LAYOUT_NKINDS || !buf || len == 0) return MG_LAYOUT_EARG;
    const row *r = &mg_layout__catalog[kind];
    size_t pos = 0;
    int trunc = 0;
    char subs[160];
    mg_layout__app(buf, len, &pos, &trunc, "%s", r->d.name);
    for (int i = 0; i < MG_LAYOUT_NPARAMS; i++) {
        if (!(r->d.params & MG_LAYOUT_BIT(i))) continue;
        switch (i) {
        case MG_LAYOUT_P_SUB:
            mg_layout__app(buf, len, &pos, &trunc, " sub=%s", mg_layout__sub_names("|", subs, sizeof subs));
            break;
        case MG_LAYOUT_P_A: mg_layout__app(buf, len, &pos, &trunc, " A=<int>"); break;
        case MG_LAYOUT_P_VARIANT: mg_layout__app(buf, len, &pos, &trunc, " [variant=1|2]"); break;
        case MG_LAYOUT_P_TYPE: mg_layout__app(buf, len, &pos, &trunc, " [type=int|char|short|double|byte]"); break;
        default: mg_layout__app(buf, len, &pos, &trunc, " [%s=<int>]", mg_layout__param_names[i]); break;
        }
    }
    return trunc ? MG_LAYOUT_EARG : MG_LAYOUT_OK;
}

int mg_layouts_list(char *buf, size_t len)
{
    if (!buf || len == 0) return MG_LAYOUT_EARG;
    size_t pos = 0;
    int trunc = 0;
    buf[0] = '\0';
    for (int i = 0; i < MG_LAYOUT_NKINDS; i++) {
        char syn[256];
        mg_layout_synopsis((mg_layout_kind)i, syn, sizeof syn);
        mg_layout__app(buf, len, &pos, &trunc, "%-30s %-8s %s\n%31s%s [tests: %s]\n", mg_layout__catalog[i].d.name,
                       mg_layout__catalog[i].d.dynamic ? "dynamic" : "static",
                       syn + strlen(mg_layout__catalog[i].d.name), "", mg_layout__catalog[i].d.summary,
                       mg_layout__catalog[i].d.tests);
    }
    return trunc ? MG_LAYOUT_EARG : MG_LAYOUT_OK;
}
