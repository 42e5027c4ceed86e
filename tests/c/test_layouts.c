/* Tests of the layout catalog (src/bench/layouts.c). Run as `mpiexec -n 1`.
 *
 * For every layout, variant, basic type and a range of A and n: MPI_Pack of
 * (count x type) must equal the bytes gathered at the offsets that the catalog
 * computes from the layout's definition, unpacking must touch exactly those
 * bytes, sizes and extents must match MPI's, the MPI constructors must be the
 * ones the paper names, and the spec must survive format -> parse. Then every
 * validation rule and parse error is provoked and its message checked.
 *
 * The MPI_Type_* constructors and MPI_Type_free are wrapped through PMPI to
 * count live derived datatypes, so a leaked intermediate type fails the test.
 */
#include "layouts.h"

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;
static int live_types; /* derived types created and not yet freed */

#define FAIL(...)                                                \
    do {                                                         \
        failures++;                                              \
        if (failures <= 50) {                                    \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
            fprintf(stderr, __VA_ARGS__);                        \
            fputc('\n', stderr);                                 \
        }                                                        \
    } while (0)

/* ---------------------------------------------------------------- */
/* PMPI wrappers: count derived datatypes                            */
/* ---------------------------------------------------------------- */

static int counted(int rc)
{
    if (rc == MPI_SUCCESS) live_types++;
    return rc;
}
int MPI_Type_contiguous(int count, MPI_Datatype old, MPI_Datatype *t)
{
    return counted(PMPI_Type_contiguous(count, old, t));
}
int MPI_Type_vector(int count, int bl, int stride, MPI_Datatype old, MPI_Datatype *t)
{
    return counted(PMPI_Type_vector(count, bl, stride, old, t));
}
int MPI_Type_create_hvector(int count, int bl, MPI_Aint stride, MPI_Datatype old, MPI_Datatype *t)
{
    return counted(PMPI_Type_create_hvector(count, bl, stride, old, t));
}
int MPI_Type_indexed(int count, const int bl[], const int d[], MPI_Datatype old, MPI_Datatype *t)
{
    return counted(PMPI_Type_indexed(count, bl, d, old, t));
}
int MPI_Type_create_indexed_block(int count, int bl, const int d[], MPI_Datatype old, MPI_Datatype *t)
{
    return counted(PMPI_Type_create_indexed_block(count, bl, d, old, t));
}
int MPI_Type_create_struct(int count, const int bl[], const MPI_Aint d[], const MPI_Datatype ty[], MPI_Datatype *t)
{
    return counted(PMPI_Type_create_struct(count, bl, d, ty, t));
}
int MPI_Type_create_resized(MPI_Datatype old, MPI_Aint lb, MPI_Aint extent, MPI_Datatype *t)
{
    return counted(PMPI_Type_create_resized(old, lb, extent, t));
}
int MPI_Type_free(MPI_Datatype *t)
{
    int rc = PMPI_Type_free(t);
    if (rc == MPI_SUCCESS) live_types--;
    return rc;
}

/* ---------------------------------------------------------------- */
/* Helpers                                                           */
/* ---------------------------------------------------------------- */

static const char *basic_name(MPI_Datatype t)
{
    if (t == MPI_INT) return "int";
    if (t == MPI_CHAR) return "char";
    if (t == MPI_SHORT) return "short";
    if (t == MPI_DOUBLE) return "double";
    if (t == MPI_BYTE) return "byte";
    return "?";
}

/* The constructor tree of t, e.g. "resized(contiguous(int))". Contents types
 * that are derived are new handles (MPI standard) and are freed here. */
static void signature(MPI_Datatype t, char *buf, size_t len)
{
    int ni, na, nd, comb;
    PMPI_Type_get_envelope(t, &ni, &na, &nd, &comb);
    if (comb == MPI_COMBINER_NAMED) {
        snprintf(buf, len, "%s", basic_name(t));
        return;
    }
    const char *name = comb == MPI_COMBINER_CONTIGUOUS      ? "contiguous"
                       : comb == MPI_COMBINER_VECTOR        ? "vector"
                       : comb == MPI_COMBINER_HVECTOR       ? "hvector"
                       : comb == MPI_COMBINER_INDEXED       ? "indexed"
                       : comb == MPI_COMBINER_INDEXED_BLOCK ? "indexed_block"
                       : comb == MPI_COMBINER_STRUCT        ? "struct"
                       : comb == MPI_COMBINER_RESIZED       ? "resized"
                                                            : "other";
    int *ints = malloc(sizeof(int) * (size_t)(ni + 1));
    MPI_Aint *addrs = malloc(sizeof(MPI_Aint) * (size_t)(na + 1));
    MPI_Datatype *types = malloc(sizeof(MPI_Datatype) * (size_t)(nd + 1));
    PMPI_Type_get_contents(t, ni, na, nd, ints, addrs, types);
    size_t pos = (size_t)snprintf(buf, len, "%s(", name);
    for (int i = 0; i < nd && pos < len; i++) {
        char sub[512];
        signature(types[i], sub, sizeof sub);
        pos += (size_t)snprintf(buf + pos, len - pos, "%s%s", i ? "," : "", sub);
        int sni, sna, snd, scomb;
        PMPI_Type_get_envelope(types[i], &sni, &sna, &snd, &scomb);
        if (scomb != MPI_COMBINER_NAMED) PMPI_Type_free(&types[i]);
    }
    if (pos < len) snprintf(buf + pos, len - pos, ")");
    free(ints);
    free(addrs);
    free(types);
}

/* Expected constructor tree; T stands for the basic type, SUB for the sub's tree. */
static const char *expected_sig[MG_LAYOUT_NKINDS] = {
    [MG_LAYOUT_CONTIGUOUS] = "T",
    [MG_LAYOUT_TILED] = "resized(contiguous(T))",
    [MG_LAYOUT_BLOCK] = "resized(indexed_block(T))",
    [MG_LAYOUT_BUCKET] = "resized(indexed(T))",
    [MG_LAYOUT_ALTERNATING] = "resized(indexed(T))",
    [MG_LAYOUT_TILED_HETEROGENEOUS] = "struct(char,int,double,short)",
    [MG_LAYOUT_CONTIGUOUS_SUBTYPE] = "contiguous(SUB)",
    [MG_LAYOUT_TILED_STRUCT] = "struct(contiguous(resized(contiguous(T))),contiguous(resized(contiguous(T))))",
    [MG_LAYOUT_TILED_VECTOR] = "resized(vector(T))",
    [MG_LAYOUT_VECTOR_TILED] = "hvector(vector(T))",
    [MG_LAYOUT_BLOCK_INDEXED] = "indexed_block(T)",
    [MG_LAYOUT_ALTERNATING_INDEXED] = "indexed(T)",
    [MG_LAYOUT_ALTERNATING_REPEATED] = "resized(indexed(T))",
    [MG_LAYOUT_ALTERNATING_STRUCT] = "struct(T,vector(T),T)",
    [MG_LAYOUT_ROWCOL_FULLY_INDEXED] = "indexed_block(T)",
    [MG_LAYOUT_ROWCOL_CONTIGUOUS_AND_INDEXED] = "indexed(T)",
    [MG_LAYOUT_ROWCOL_STRUCT] = "struct(contiguous(T),vector(T))",
};

static void replace_all(const char *in, const char *key, const char *with, char *out, size_t len)
{
    size_t pos = 0, kl = strlen(key);
    while (*in && pos + 1 < len) {
        if (strncmp(in, key, kl) == 0) {
            pos += (size_t)snprintf(out + pos, len - pos, "%s", with);
            in += kl;
        } else {
            out[pos++] = *in++;
        }
        if (pos >= len) pos = len - 1;
    }
    out[pos] = '\0';
}

static void expected_signature(const mg_layout_info *info, char *out, size_t len)
{
    const char *T = basic_name(info->basic);
    char tmp[1024];
    if (info->params.kind == MG_LAYOUT_CONTIGUOUS_SUBTYPE) {
        char sub[512];
        replace_all(expected_sig[info->params.value[MG_LAYOUT_P_SUB]], "T", T, sub, sizeof sub);
        replace_all(expected_sig[MG_LAYOUT_CONTIGUOUS_SUBTYPE], "SUB", sub, out, len);
        return;
    }
    if (info->params.kind == MG_LAYOUT_TILED_HETEROGENEOUS) {
        snprintf(out, len, "%s", expected_sig[MG_LAYOUT_TILED_HETEROGENEOUS]);
        return;
    }
    /* "T" also occurs in no constructor name, so a plain replacement is safe. */
    replace_all(expected_sig[info->params.kind], "T", T, tmp, sizeof tmp);
    snprintf(out, len, "%s", tmp);
}

/* A byte pattern with no short-range repetition, so misplaced bytes show. */
static unsigned char pattern(size_t i)
{
    uint32_t x = (uint32_t)i * 2654435761u + 0x9e3779b9u;
    x ^= x >> 15;
    x *= 2246822519u;
    x ^= x >> 13;
    return (unsigned char)(x >> 7);
}

static int same_info(const mg_layout_info *a, const mg_layout_info *b)
{
    return a->n == b->n && a->k == b->k && a->count == b->count && a->elem_size == b->elem_size &&
           a->data_size == b->data_size && a->type_extent == b->type_extent && a->extent == b->extent &&
           a->true_lb == b->true_lb && a->true_extent == b->true_extent && a->n_unit == b->n_unit &&
           a->n_min == b->n_min;
}

static int same_params(const mg_layout_params *a, const mg_layout_params *b)
{
    if (a->kind != b->kind || a->given != b->given) return 0;
    for (int i = 0; i < MG_LAYOUT_NPARAMS; i++)
        if ((a->given & MG_LAYOUT_BIT(i)) && a->value[i] != b->value[i]) return 0;
    return 1;
}

/* ---------------------------------------------------------------- */
/* One layout, one n: the full set of checks                         */
/* ---------------------------------------------------------------- */

static int cases_run;

static void check_case(const char *spec, long n)
{
    char err[512], buf[512];
    mg_layout_params p;
    mg_layout_info info;
    mg_layout_type t;
    int live0 = live_types;
    cases_run++;

    if (mg_layout_parse(spec, &p, err, sizeof err)) {
        FAIL("parse '%s': %s", spec, err);
        return;
    }
    if (mg_layout_check(&p, n, &info, err, sizeof err)) {
        FAIL("check '%s' n=%ld: %s", spec, n, err);
        return;
    }
    if (mg_layout_build(&p, n, &t, err, sizeof err)) {
        FAIL("build '%s' n=%ld: %s", spec, n, err);
        return;
    }
    if (!same_info(&info, &t.info)) FAIL("'%s' n=%ld: build and check disagree", spec, n);
    int dyn = info.desc->dynamic;
    if (t.count != info.count || (dyn && t.count != 1) || (!dyn && (long)t.count * info.k != n) || (dyn && info.k != n))
        FAIL("'%s' n=%ld: count %d, k %ld", spec, n, t.count, info.k);
    if (n % info.n_unit != 0 || n < info.n_min) FAIL("'%s' n=%ld: n_unit/n_min", spec, n);

    /* Constructors. */
    char sig[1024], want[1024];
    signature(t.type, sig, sizeof sig);
    expected_signature(&info, want, sizeof want);
    if (strcmp(sig, want) != 0) FAIL("'%s' n=%ld: constructors %s, expected %s", spec, n, sig, want);
    int ni, na, nd, comb;
    MPI_Type_get_envelope(t.type, &ni, &na, &nd, &comb);
    if ((comb == MPI_COMBINER_NAMED) != (p.kind == MG_LAYOUT_CONTIGUOUS) || (comb == MPI_COMBINER_NAMED) == t.owned)
        FAIL("'%s': derived/predefined mismatch (owned=%d)", spec, t.owned);

    /* Sizes and extents against MPI. */
    MPI_Count size, lb, ext, tlb, text;
    MPI_Type_size_x(t.type, &size);
    MPI_Type_get_extent_x(t.type, &lb, &ext);
    MPI_Type_get_true_extent_x(t.type, &tlb, &text);
    if (size * t.count != info.data_size)
        FAIL("'%s' n=%ld: size %lld * count %d != data_size %ld", spec, n, (long long)size, t.count,
             (long)info.data_size);
    if (lb != 0 || ext != info.type_extent || ext * t.count != info.extent)
        FAIL("'%s' n=%ld: MPI lb %lld extent %lld, catalog type_extent %ld extent %ld", spec, n, (long long)lb,
             (long long)ext, (long)info.type_extent, (long)info.extent);
    if (tlb != info.true_lb || (t.count - 1) * ext + text != info.true_extent)
        FAIL("'%s' n=%ld: MPI true lb %lld true extent %lld (x%d), catalog %ld %ld", spec, n, (long long)tlb,
             (long long)((t.count - 1) * ext + text), t.count, (long)info.true_lb, (long)info.true_extent);
    if (info.buffer_size != info.true_lb + info.true_extent) FAIL("'%s': buffer_size", spec);

    /* Offsets from the definition. */
    MPI_Aint *off = malloc(sizeof(MPI_Aint) * (size_t)n);
    int *sz = malloc(sizeof(int) * (size_t)n);
    size_t bsize = (size_t)info.buffer_size;
    unsigned char *src = malloc(bsize), *dst = calloc(bsize, 1), *mask = calloc(bsize, 1);
    unsigned char *packed = malloc((size_t)info.data_size), *want_bytes = malloc((size_t)info.data_size);
    if (mg_layout_offsets(&info, off, sz)) FAIL("'%s': mg_layout_offsets failed", spec);
    MPI_Aint total = 0, lo = off[0], hi = 0;
    for (long e = 0; e < n; e++) {
        if (e > 0 && off[e] < off[e - 1] + sz[e - 1]) {
            FAIL("'%s' n=%ld: element %ld at %ld overlaps or goes backwards", spec, n, e, (long)off[e]);
            break;
        }
        if (sz[e] != (info.elem_size ? info.elem_size : sz[e])) FAIL("'%s': element size", spec);
        if (mg_layout_offset(&info, e, NULL) != off[e]) FAIL("'%s': offset/offsets differ", spec);
        total += sz[e];
        if (off[e] < lo) lo = off[e];
        if (off[e] + sz[e] > hi) hi = off[e] + sz[e];
    }
    if (total != info.data_size || lo != info.true_lb || hi - lo != info.true_extent)
        FAIL("'%s' n=%ld: offsets give size %ld span [%ld,%ld), catalog %ld [%ld,+%ld)", spec, n, (long)total, (long)lo,
             (long)hi, (long)info.data_size, (long)info.true_lb, (long)info.true_extent);

    /* Pack gathers exactly the bytes at the offsets, in order. */
    {
        for (size_t i = 0; i < bsize; i++) src[i] = pattern(i + (size_t)n);
        MPI_Aint w = 0;
        for (long e = 0; e < n && total == info.data_size; e++) {
            memcpy(want_bytes + w, src + off[e], (size_t)sz[e]);
            memset(mask + off[e], 1, (size_t)sz[e]);
            w += sz[e];
        }
        int psize = 0, pos = 0;
        MPI_Pack_size(t.count, t.type, MPI_COMM_SELF, &psize);
        if (psize < info.data_size) FAIL("'%s': MPI_Pack_size %d < %ld", spec, psize, (long)info.data_size);
        MPI_Pack(src, t.count, t.type, packed, (int)info.data_size, &pos, MPI_COMM_SELF);
        if (pos != info.data_size)
            FAIL("'%s' n=%ld: packed %d bytes, expected %ld", spec, n, pos, (long)info.data_size);
        else if (memcmp(packed, want_bytes, (size_t)info.data_size) != 0)
            FAIL("'%s' n=%ld: MPI_Pack differs from the bytes at the catalog's offsets", spec, n);
        pos = 0;
        MPI_Unpack(packed, (int)info.data_size, &pos, dst, t.count, t.type, MPI_COMM_SELF);
        for (size_t i = 0; i < bsize; i++) {
            if (dst[i] != (mask[i] ? src[i] : 0)) {
                FAIL("'%s' n=%ld: MPI_Unpack wrote byte %zu wrongly (in layout: %d)", spec, n, i, mask[i]);
                break;
            }
        }
    }
    free(off);
    free(sz);
    free(src);
    free(dst);
    free(mask);
    free(packed);
    free(want_bytes);

    /* The Contiguous reference has the same data size. */
    mg_layout_type ref;
    if (mg_layout_reference(&p, n, &ref, err, sizeof err)) {
        FAIL("reference '%s': %s", spec, err);
    } else {
        int rsize;
        MPI_Type_size(ref.type, &rsize);
        MPI_Type_get_envelope(ref.type, &ni, &na, &nd, &comb);
        MPI_Datatype want_t = info.elem_size ? info.basic : MPI_BYTE;
        if (comb != MPI_COMBINER_NAMED || ref.type != want_t || (MPI_Aint)rsize * ref.count != info.data_size)
            FAIL("'%s': reference %s x %d", spec, basic_name(ref.type), ref.count);
        mg_layout_type_free(&ref);
    }

    /* Spec round trips: as given, and with every effective value written out. */
    mg_layout_params q;
    if (mg_layout_format(&p, buf, sizeof buf) || mg_layout_parse(buf, &q, err, sizeof err) || !same_params(&p, &q))
        FAIL("'%s': format/parse round trip via '%s'", spec, buf);
    mg_layout_info info2;
    if (mg_layout_format(&info.params, buf, sizeof buf) || mg_layout_parse(buf, &q, err, sizeof err) ||
        mg_layout_check(&q, n, &info2, err, sizeof err) || !same_info(&info, &info2) ||
        !same_params(&info.params, &info2.params))
        FAIL("'%s': effective spec '%s' does not give the same layout", spec, buf);

    mg_layout_type_free(&t);
    if (t.type != MPI_DATATYPE_NULL) FAIL("'%s': type not reset after free", spec);
    if (live_types != live0) FAIL("'%s' n=%ld: %d derived types leaked", spec, n, live_types - live0);
}

/* All layouts x variants x types x A, with a few n per combination. */
static void sweep(void)
{
    static const long As[] = {1, 2, 3, 4, 10, 100};
    static const char *types[] = {"int", "char", "short", "double"};
    static const char *subs[] = {"tiled", "block", "bucket", "alternating"};
    static const char *extras[MG_LAYOUT_NKINDS][3] = {
        [MG_LAYOUT_TILED_STRUCT] = {"", "S1=2 S2=3", NULL},
        [MG_LAYOUT_VECTOR_TILED] = {"", "S=1", "S=2"},
    };
    char spec[256], err[512];
    int rejected = 0;
    for (int kind = 0; kind < MG_LAYOUT_NKINDS; kind++) {
        const mg_layout_desc *d = mg_layouts_get(kind);
        int nsub = kind == MG_LAYOUT_CONTIGUOUS_SUBTYPE ? 4 : 1;
        for (int si = 0; si < nsub; si++)
            for (int var = 1; var <= 2; var++) {
                if (var == 2 && !(d->params & MG_LAYOUT_BIT(MG_LAYOUT_P_VARIANT))) continue;
                for (int ti = 0; ti < 4; ti++) {
                    if (ti > 0 && !(d->params & MG_LAYOUT_BIT(MG_LAYOUT_P_TYPE))) continue;
                    for (size_t ai = 0; ai < sizeof As / sizeof As[0]; ai++) {
                        if (ai > 0 && !(d->params & MG_LAYOUT_BIT(MG_LAYOUT_P_A))) continue;
                        for (int xi = 0; xi < 3; xi++) {
                            const char *extra = extras[kind][0] ? extras[kind][xi] : (xi ? NULL : "");
                            if (!extra) continue;
                            size_t pos = (size_t)snprintf(spec, sizeof spec, "%s", d->name);
                            if (nsub > 1) pos += (size_t)snprintf(spec + pos, sizeof spec - pos, " sub=%s", subs[si]);
                            if (d->params & MG_LAYOUT_BIT(MG_LAYOUT_P_A))
                                pos += (size_t)snprintf(spec + pos, sizeof spec - pos, " A=%ld", As[ai]);
                            if (d->params & MG_LAYOUT_BIT(MG_LAYOUT_P_VARIANT))
                                pos += (size_t)snprintf(spec + pos, sizeof spec - pos, " variant=%d", var);
                            if (d->params & MG_LAYOUT_BIT(MG_LAYOUT_P_TYPE))
                                pos += (size_t)snprintf(spec + pos, sizeof spec - pos, " type=%s", types[ti]);
                            if (*extra) snprintf(spec + pos, sizeof spec - pos, " %s", extra);

                            mg_layout_params p;
                            mg_layout_info info;
                            if (mg_layout_parse(spec, &p, err, sizeof err)) {
                                FAIL("sweep parse '%s': %s", spec, err);
                                continue;
                            }
                            if (mg_layout_check(&p, 0, &info, err, sizeof err)) {
                                /* Only Table 2's own gaps may reject: A1 = A-1 = 0, odd A / 2. */
                                if (!strstr(err, "A1 must be >= 1") && !strstr(err, "needs an even A"))
                                    FAIL("sweep '%s' rejected: %s", spec, err);
                                rejected++;
                                continue;
                            }
                            long ns[3];
                            if (info.n_min > info.n_unit) { /* rowcol: any n > A */
                                ns[0] = info.n_min;
                                ns[1] = info.n_min + 7;
                                ns[2] = 3 * info.n_min;
                            } else {
                                ns[0] = info.n_unit;
                                ns[1] = 2 * info.n_unit;
                                ns[2] = 7 * info.n_unit;
                            }
                            for (int k = 0; k < 3; k++) check_case(spec, ns[k]);
                        }
                    }
                }
            }
    }
    if (rejected == 0) FAIL("sweep: expected Table 2 gaps (A=1 variant 1, odd A variant 2)");
}

/* ---------------------------------------------------------------- */
/* Defaults, rules, parse errors                                     */
/* ---------------------------------------------------------------- */

static long eff(const char *spec, long n, mg_layout_param id)
{
    mg_layout_params p;
    mg_layout_info info;
    char err[512];
    if (mg_layout_parse(spec, &p, err, sizeof err) || mg_layout_check(&p, n, &info, err, sizeof err)) {
        FAIL("'%s': %s", spec, err);
        return -1;
    }
    return info.params.value[id];
}

static void test_table2(void)
{
    struct {
        const char *spec;
        mg_layout_param id;
        long want;
    } t[] = {
        {"tiled A=10", MG_LAYOUT_P_B, 12},
        {"tiled A=10 variant=2", MG_LAYOUT_P_B, 30},
        {"block A=10", MG_LAYOUT_P_B1, 11},
        {"block A=10", MG_LAYOUT_P_B2, 13},
        {"block A=10 variant=2", MG_LAYOUT_P_B1, 20},
        {"block A=10 variant=2", MG_LAYOUT_P_B2, 40},
        {"bucket A=10", MG_LAYOUT_P_A1, 9},
        {"bucket A=10", MG_LAYOUT_P_A2, 11},
        {"bucket A=10", MG_LAYOUT_P_B, 12},
        {"bucket A=10 variant=2", MG_LAYOUT_P_A1, 5},
        {"bucket A=10 variant=2", MG_LAYOUT_P_A2, 15},
        {"bucket A=10 variant=2", MG_LAYOUT_P_B, 30},
        {"alternating A=10", MG_LAYOUT_P_A1, 9},
        {"alternating A=10", MG_LAYOUT_P_A2, 11},
        {"alternating A=10", MG_LAYOUT_P_B1, 11},
        {"alternating A=10", MG_LAYOUT_P_B2, 13},
        {"alternating A=10 variant=2", MG_LAYOUT_P_A1, 5},
        {"alternating A=10 variant=2", MG_LAYOUT_P_A2, 15},
        {"alternating A=10 variant=2", MG_LAYOUT_P_B1, 20},
        {"alternating A=10 variant=2", MG_LAYOUT_P_B2, 40},
        {"alternating-repeated A=10", MG_LAYOUT_P_A1, 9},
        {"alternating-repeated A=10", MG_LAYOUT_P_A2, 11},
        {"alternating-repeated A=10", MG_LAYOUT_P_B1, 11},
        {"alternating-struct A=10", MG_LAYOUT_P_B1, 11},
        {"tiled-heterogeneous A=10", MG_LAYOUT_P_B, 10},
        {"tiled-struct A=10", MG_LAYOUT_P_B, 12},
        {"tiled-struct A=10", MG_LAYOUT_P_S1, 1},
        {"tiled-struct A=10", MG_LAYOUT_P_S2, 1},
        {"tiled-struct A=2 S1=2 S2=3", MG_LAYOUT_P_S2, 3},
        {"vector-tiled A=10", MG_LAYOUT_P_S, MG_LAYOUT_DEFAULT_S},
        {"vector-tiled A=10 S=4", MG_LAYOUT_P_S, 4},
        {"tiled-vector A=10", MG_LAYOUT_P_B, 12},
        {"block-indexed A=10 variant=2", MG_LAYOUT_P_B2, 40},
        {"alternating-indexed A=10", MG_LAYOUT_P_A1, 9},
        {"contiguous-subtype sub=block A=10", MG_LAYOUT_P_B1, 11},
        {"contiguous-subtype sub=alternating A=10 variant=2", MG_LAYOUT_P_A2, 15},
        {"tiled A=2 B=4", MG_LAYOUT_P_B, 4},
        {"alternating A=10 variant=2 type=double", MG_LAYOUT_P_TYPE, MG_LAYOUT_DOUBLE},
        {"tiled A=2", MG_LAYOUT_P_TYPE, MG_LAYOUT_INT},
        {"tiled A=2", MG_LAYOUT_P_VARIANT, 1},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        long v = eff(t[i].spec, 0, t[i].id);
        if (v != t[i].want) FAIL("'%s': %s=%ld, expected %ld", t[i].spec, mg_layout_param_name(t[i].id), v, t[i].want);
    }
    /* Table 2 is chosen so that Variant 1 spans n + 2n/A elements and Variant 2 3n. */
    const char *basic[] = {"tiled", "block", "bucket", "alternating"};
    for (int b = 0; b < 4; b++)
        for (int var = 1; var <= 2; var++) {
            char spec[64], err[512];
            snprintf(spec, sizeof spec, "%s A=10 variant=%d", basic[b], var);
            mg_layout_params p;
            mg_layout_info info;
            long n = 1000;
            if (mg_layout_parse(spec, &p, err, sizeof err) || mg_layout_check(&p, n, &info, err, sizeof err)) {
                FAIL("'%s': %s", spec, err);
                continue;
            }
            long want = (var == 1 ? n + 2 * n / 10 : 3 * n) * (long)sizeof(int);
            if (info.extent != want) FAIL("'%s': total extent %ld, expected %ld", spec, (long)info.extent, want);
        }
    /* Alternating-repeated is Alternating with B2 = A2: the same bytes. */
    mg_layout_params p1, p2;
    mg_layout_info i1, i2;
    char err[512];
    if (mg_layout_parse("alternating-repeated A=10", &p1, err, sizeof err) ||
        mg_layout_parse("alternating A=10 A1=9 A2=11 B1=11 B2=11", &p2, err, sizeof err) ||
        mg_layout_check(&p1, 200, &i1, err, sizeof err) || mg_layout_check(&p2, 200, &i2, err, sizeof err))
        FAIL("alternating-repeated vs alternating: %s", err);
    else
        for (long e = 0; e < 200; e++)
            if (mg_layout_offset(&i1, e, NULL) != mg_layout_offset(&i2, e, NULL)) {
                FAIL("alternating-repeated element %ld differs from alternating", e);
                break;
            }
    /* Tiled-heterogeneous: block of 15A bytes padded to the double alignment. */
    if (mg_layout_parse("tiled-heterogeneous A=2", &p1, err, sizeof err) ||
        mg_layout_check(&p1, 16, &i1, err, sizeof err))
        FAIL("tiled-heterogeneous: %s", err);
    else if (i1.k != 8 || i1.data_size != 60 ||
             i1.type_extent != ((30 + _Alignof(double) - 1) / _Alignof(double)) * _Alignof(double) || i1.elem_size != 0)
        FAIL("tiled-heterogeneous A=2: k %ld data %ld extent %ld", i1.k, (long)i1.data_size, (long)i1.type_extent);
    /* Explicit A1, A2, B need no A. */
    if (mg_layout_parse("bucket A1=2 A2=3 B=5", &p1, err, sizeof err) || mg_layout_check(&p1, 10, &i1, err, sizeof err))
        FAIL("bucket without A: %s", err);
}

static void test_rules(void)
{
    struct {
        const char *spec;
        long n;
        int code;
        const char *msg[2];
    } t[] = {
        {"tiled A=2 B=2", 100, MG_LAYOUT_EINVALID, {"tiled: B must be > A (B=2, A=2)", NULL}},
        {"tiled A=3 variant=2", 100, MG_LAYOUT_EINVALID, {"A=3 does not divide n=100", "tiled:"}},
        {"tiled A=3", 100, MG_LAYOUT_EINVALID, {"A=3 does not divide n=100", NULL}},
        {"bucket A=3 variant=2", 120, MG_LAYOUT_EINVALID, {"variant 2 needs an even A (A=3)", "bucket:"}},
        {"alternating A=5 variant=2", 100, MG_LAYOUT_EINVALID, {"variant 2 needs an even A (A=5)", NULL}},
        {"alternating-indexed A=5 variant=2", 100, MG_LAYOUT_EINVALID, {"variant 2 needs an even A", NULL}},
        {"bucket A=4 B=4", 80, MG_LAYOUT_EINVALID, {"bucket: B must be > A1 and > A2", "A2=5 from A=4"}},
        {"block A=2 B1=5 B2=5", 100, MG_LAYOUT_EINVALID, {"block: B1 must differ from B2", "B1=5"}},
        {"block-indexed A=2 B1=5 B2=5", 100, MG_LAYOUT_EINVALID, {"B1 must differ from B2", NULL}},
        {"block A=2 B1=2", 100, MG_LAYOUT_EINVALID, {"B1 must be > A (B1=2, A=2)", NULL}},
        {"block A=2 B2=1", 100, MG_LAYOUT_EINVALID, {"B2 must be > A", NULL}},
        {"rowcol-struct A=10", 10, MG_LAYOUT_EINVALID, {"A must be < n (A=10, n=10)", NULL}},
        {"rowcol-fully-indexed A=100", 50, MG_LAYOUT_EINVALID, {"A must be < n", NULL}},
        {"rowcol-contiguous-and-indexed A=100", 100, MG_LAYOUT_EINVALID, {"A must be < n", NULL}},
        {"tiled A=0", 100, MG_LAYOUT_EINVALID, {"A must be >= 1 (A=0)", NULL}},
        {"rowcol-struct A=-3", 100, MG_LAYOUT_EINVALID, {"A must be >= 1 (A=-3)", NULL}},
        {"bucket A=1", 100, MG_LAYOUT_EINVALID, {"A1 must be >= 1 (A1=0 from A=1 with variant 1)", NULL}},
        {"alternating A=1", 100, MG_LAYOUT_EINVALID, {"A1 must be >= 1", NULL}},
        {"alternating-repeated A=1", 100, MG_LAYOUT_EINVALID, {"A1 must be >= 1 (A1=0 from A=1)", NULL}},
        {"alternating-struct A=1", 100, MG_LAYOUT_EINVALID, {"A1 must be >= 1", NULL}},
        {"contiguous-subtype sub=bucket A=1",
         100,
         MG_LAYOUT_EINVALID,
         {"contiguous-subtype sub=bucket: A1 must be >= 1", NULL}},
        {"vector-tiled A=10 S=4", 100, MG_LAYOUT_EINVALID, {"S*A=40 does not divide n=100", NULL}},
        {"vector-tiled A=2 S=0", 100, MG_LAYOUT_EINVALID, {"S must be >= 1 (S=0)", NULL}},
        {"tiled-vector A=3", 100, MG_LAYOUT_EINVALID, {"A=3 does not divide n=100", NULL}},
        {"block-indexed A=3", 100, MG_LAYOUT_EINVALID, {"A=3 does not divide n=100", NULL}},
        {"block A=5", 105, MG_LAYOUT_EINVALID, {"2A=10 does not divide n=105", NULL}},
        {"bucket A=4", 100, MG_LAYOUT_EINVALID, {"A1+A2=8 does not divide n=100", NULL}},
        {"alternating-indexed A=4", 100, MG_LAYOUT_EINVALID, {"A1+A2=8 does not divide n=100", NULL}},
        {"alternating-struct A=4", 100, MG_LAYOUT_EINVALID, {"A1+A2=8 does not divide n=100", NULL}},
        {"tiled-struct A=2 S1=2 S2=3", 104, MG_LAYOUT_EINVALID, {"(S1+S2)*A=10 does not divide n=104", NULL}},
        {"tiled-struct A=2 S1=0", 100, MG_LAYOUT_EINVALID, {"S1 must be >= 1 (S1=0)", NULL}},
        {"tiled-struct A=4 B=3", 100, MG_LAYOUT_EINVALID, {"B must be >= A (B=3, A=4)", NULL}},
        {"tiled-vector A=4 B=3", 100, MG_LAYOUT_EINVALID, {"B must be >= A", NULL}},
        {"vector-tiled A=4 B=3", 100, MG_LAYOUT_EINVALID, {"B must be >= A", NULL}},
        {"tiled-heterogeneous A=4 B=3", 96, MG_LAYOUT_EINVALID, {"B must be >= A", NULL}},
        {"tiled-heterogeneous A=2", 100, MG_LAYOUT_EINVALID, {"4A=8 does not divide n=100", NULL}},
        {"tiled A=2 variant=3", 100, MG_LAYOUT_EINVALID, {"variant must be 1 or 2 (variant=3)", NULL}},
        {"contiguous-subtype A=2", 100, MG_LAYOUT_EINVALID, {"sub is required", NULL}},
        {"contiguous-subtype sub=block A=2 B1=4 B2=4",
         100,
         MG_LAYOUT_EINVALID,
         {"contiguous-subtype sub=block: B1 must differ from B2", NULL}},
        {"contiguous-subtype sub=tiled A=3", 100, MG_LAYOUT_EINVALID, {"A=3 does not divide n=100", NULL}},
        {"alternating A=4 B1=2",
         80,
         MG_LAYOUT_EINVALID,
         {"B1 must be >= A1 (B1=2, A1=3 from A=4 with variant 1)", NULL}},
        {"alternating A=4 B2=3", 80, MG_LAYOUT_EINVALID, {"B2 must be >= A2 (B2=3, A2=5", NULL}},
        {"alternating-struct A=4 B1=2", 80, MG_LAYOUT_EINVALID, {"B1 must be >= A1", NULL}},
        {"bucket B=5 A1=2", 100, MG_LAYOUT_EINVALID, {"A is required (A2 is derived from it)", NULL}},
        {"tiled", 100, MG_LAYOUT_EINVALID, {"tiled: A is required", NULL}},
        {"rowcol-struct", 100, MG_LAYOUT_EINVALID, {"A is required", NULL}},
        {"tiled-struct B=4 S1=1 S2=1", 100, MG_LAYOUT_EINVALID, {"A is required", NULL}},
        {"tiled A=2", -1, MG_LAYOUT_EARG, {"n must be >= 0", NULL}},
        {"tiled A=2", 3000000000L, MG_LAYOUT_EINVALID, {"exceeds INT_MAX", NULL}},
        {"tiled-vector A=1 B=2147483647", 1000, MG_LAYOUT_EINVALID, {"too large", NULL}},
        {"tiled A=1 B=2147483647 type=double", 10, MG_LAYOUT_OK, {NULL, NULL}},
        {"bucket A=2 A1=3 A2=3 B=2147483647", 6, MG_LAYOUT_EINVALID, {"too large", NULL}},
    };
    char err[512];
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        mg_layout_params p;
        mg_layout_info info;
        err[0] = '\0';
        int rc = mg_layout_parse(t[i].spec, &p, err, sizeof err);
        if (rc) {
            FAIL("rule '%s': parse failed: %s", t[i].spec, err);
            continue;
        }
        rc = mg_layout_check(&p, t[i].n, &info, err, sizeof err);
        if (rc != t[i].code) FAIL("rule '%s' n=%ld: code %d, expected %d (%s)", t[i].spec, t[i].n, rc, t[i].code, err);
        for (int m = 0; m < 2; m++)
            if (t[i].msg[m] && !strstr(err, t[i].msg[m]))
                FAIL("rule '%s' n=%ld: message '%s' lacks '%s'", t[i].spec, t[i].n, err, t[i].msg[m]);
        /* Building must fail the same way and leave nothing behind. */
        if (t[i].code != MG_LAYOUT_OK) {
            mg_layout_type ty;
            int live0 = live_types;
            char err2[512];
            if (mg_layout_build(&p, t[i].n, &ty, err2, sizeof err2) != t[i].code || strcmp(err, err2) != 0 ||
                ty.type != MPI_DATATYPE_NULL || live_types != live0)
                FAIL("rule '%s': build does not fail like check", t[i].spec);
        }
    }
}

static void test_parse_errors(void)
{
    struct {
        const char *spec;
        const char *msg[2];
    } t[] = {
        {"", {"empty layout spec", NULL}},
        {"   ", {"empty layout spec", NULL}},
        {"tild A=2",
         {"unknown layout 'tild'",
          "valid layouts: contiguous, tiled, block, bucket, alternating, tiled-heterogeneous"}},
        {"tiled A=2 C=3", {"unknown parameter 'C'", "parameters are: sub A variant A1 A2 B B1 B2 S S1 S2 type"}},
        {"tiled A=2 S1=3", {"tiled does not take S1", "tiled takes: A variant B type"}},
        {"contiguous A=2", {"contiguous does not take A", NULL}},
        {"tiled-heterogeneous A=2 type=int", {"tiled-heterogeneous does not take type", NULL}},
        {"alternating-repeated A=4 variant=1", {"does not take variant", NULL}},
        {"alternating-repeated A=4 B2=5", {"does not take B2", NULL}},
        {"rowcol-struct A=4 variant=2", {"does not take variant", NULL}},
        {"tiled A=x", {"bad integer 'x' for A", NULL}},
        {"tiled A=2.5", {"bad integer '2.5' for A", NULL}},
        {"tiled A=", {"bad integer '' for A", NULL}},
        {"tiled A=99999999999", {"bad integer '99999999999' for A", NULL}},
        {"tiled A", {"bad token 'A'", "key=value"}},
        {"tiled =2", {"bad token '=2'", NULL}},
        {"tiled A=2 A=3", {"A given twice", NULL}},
        {"tiled A=2 type=float", {"bad type 'float'", "int char short double byte"}},
        {"contiguous-subtype sub=rowcol-struct A=2", {"bad sub 'rowcol-struct'", "tiled block bucket alternating"}},
        {"contiguous-subtype sub=tiled A=2 B1=3",
         {"contiguous-subtype sub=tiled does not take B1", "tiled takes: A variant B type"}},
        {"contiguous-subtype B1=3 sub=tiled A=2", {"contiguous-subtype sub=tiled does not take B1", NULL}},
    };
    char err[512];
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        mg_layout_params p;
        err[0] = '\0';
        int rc = mg_layout_parse(t[i].spec, &p, err, sizeof err);
        if (rc != MG_LAYOUT_ESPEC) FAIL("parse '%s': code %d, expected MG_LAYOUT_ESPEC (%s)", t[i].spec, rc, err);
        for (int m = 0; m < 2; m++)
            if (t[i].msg[m] && !strstr(err, t[i].msg[m]))
                FAIL("parse '%s': message '%s' lacks '%s'", t[i].spec, err, t[i].msg[m]);
    }
    /* The paper-style examples, free spacing and case. */
    const char *ok[] = {"tiled A=2",
                        "tiled A=2 B=4",
                        "alternating A=10 variant=2 type=double",
                        "contiguous-subtype sub=block A=10",
                        "tiled-struct A=2 S1=2 S2=3",
                        "vector-tiled A=10 S=4",
                        "  TILED\ta=2  b=4 ",
                        "contiguous",
                        "contiguous type=byte"};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        mg_layout_params p;
        if (mg_layout_parse(ok[i], &p, err, sizeof err)) FAIL("parse '%s': %s", ok[i], err);
    }
    mg_layout_params p;
    char buf[256];
    if (mg_layout_parse("  TILED\ta=2  b=4 ", &p, err, sizeof err) || mg_layout_format(&p, buf, sizeof buf) ||
        strcmp(buf, "tiled A=2 B=4") != 0)
        FAIL("canonical format: '%s'", buf);
    if (mg_layout_parse("alternating type=double variant=2 A=10", &p, err, sizeof err) ||
        mg_layout_format(&p, buf, sizeof buf) || strcmp(buf, "alternating A=10 variant=2 type=double") != 0)
        FAIL("canonical order: '%s'", buf);
    if (mg_layout_format(&p, buf, 8) != MG_LAYOUT_EARG) FAIL("format into a small buffer must fail");
}

static void test_api(void)
{
    char buf[8192], err[256];
    if (mg_layouts_count() != MG_LAYOUT_NKINDS) FAIL("mg_layouts_count");
    if (mg_layouts_get(-1) || mg_layouts_get(MG_LAYOUT_NKINDS)) FAIL("mg_layouts_get out of range");
    if (mg_layouts_list(buf, sizeof buf)) FAIL("mg_layouts_list");
    for (int i = 0; i < mg_layouts_count(); i++) {
        const mg_layout_desc *d = mg_layouts_get(i);
        mg_layout_kind k;
        if (!d || !d->name || !d->summary || !d->constructors || !d->title || !d->tests) {
            FAIL("desc %d incomplete", i);
            continue;
        }
        if (mg_layouts_find(d->name, &k) || (int)k != i) FAIL("find '%s'", d->name);
        if (!strstr(buf, d->name)) FAIL("list lacks '%s'", d->name);
        for (int q = 0; q < MG_LAYOUT_NPARAMS; q++) {
            /* Every parameter a layout takes can be set; the others cannot. */
            mg_layout_params p;
            mg_layout_params_init(&p, k);
            int rc = mg_layout_params_set(&p, (mg_layout_param)q, 1, err, sizeof err);
            if ((rc == MG_LAYOUT_OK) != !!(d->params & MG_LAYOUT_BIT(q)))
                FAIL("params_set %s %s: %d", d->name, mg_layout_param_name((mg_layout_param)q), rc);
        }
    }
    if (mg_layouts_find("no-such", &(mg_layout_kind){0}) != MG_LAYOUT_ESPEC) FAIL("find unknown");
    if (mg_layout_synopsis(MG_LAYOUT_TILED, buf, sizeof buf) ||
        strcmp(buf, "tiled A=<int> [variant=1|2] [B=<int>] [type=int|char|short|double|byte]") != 0)
        FAIL("synopsis: '%s'", buf);
    if (mg_layout_synopsis(MG_LAYOUT_CONTIGUOUS_SUBTYPE, buf, sizeof buf) ||
        strncmp(buf, "contiguous-subtype sub=tiled|block|bucket|alternating A=<int>", 61) != 0)
        FAIL("synopsis: '%s'", buf);
    if (mg_layouts_list(buf, 100) != MG_LAYOUT_EARG) FAIL("list into a small buffer must fail");

    /* The geometry of every description comes from its row (for
     * contiguous-subtype: its sub's), and only the basic layouts with a block
     * type may be a sub. */
    static const struct {
        const char *spec, *geometry;
    } geometries[] = {
        {"contiguous", "contiguous"},
        {"tiled", "tiled"},
        {"tiled-struct", "tiled"},
        {"tiled-vector", "tiled"},
        {"vector-tiled", "tiled"},
        {"block", "block"},
        {"block-indexed", "block"},
        {"bucket", "bucket"},
        {"alternating", "alternating"},
        {"alternating-indexed", "alternating"},
        {"alternating-repeated", "alternating-b2a2"},
        {"alternating-struct", "alternating-b2a2"},
        {"tiled-heterogeneous", "heterogeneous"},
        {"rowcol-fully-indexed", "rowcol"},
        {"rowcol-contiguous-and-indexed", "rowcol"},
        {"rowcol-struct", "rowcol"},
        {"contiguous-subtype sub=bucket", "bucket"},
        {"contiguous-subtype", NULL},
    };
    int seen[MG_LAYOUT_NKINDS] = {0};
    for (size_t i = 0; i < sizeof geometries / sizeof *geometries; i++) {
        mg_layout_params gp;
        const char *g = NULL;
        if (mg_layout_parse(geometries[i].spec, &gp, err, sizeof err) == MG_LAYOUT_OK) {
            g = mg_layout_geometry(&gp);
            seen[gp.kind] = 1;
        }
        if (geometries[i].geometry ? !g || strcmp(g, geometries[i].geometry) != 0 : g != NULL)
            FAIL("geometry of '%s': %s", geometries[i].spec, g ? g : "NULL");
    }
    for (int i = 0; i < mg_layouts_count(); i++) {
        if (!seen[i]) FAIL("no geometry checked for '%s'", mg_layouts_get(i)->name);
        int sub = i == MG_LAYOUT_TILED || i == MG_LAYOUT_BLOCK || i == MG_LAYOUT_BUCKET || i == MG_LAYOUT_ALTERNATING;
        if (mg_layout_is_sub((mg_layout_kind)i) != sub) FAIL("mg_layout_is_sub(%s)", mg_layouts_get(i)->name);
    }
    if (mg_layout_geometry(NULL)) FAIL("geometry of NULL");

    /* Programmatic parameter sets behave like parsed ones. */
    mg_layout_params p, q;
    mg_layout_params_init(&p, MG_LAYOUT_VECTOR_TILED);
    if (mg_layout_params_set(&p, MG_LAYOUT_P_A, 10, err, sizeof err) ||
        mg_layout_params_set(&p, MG_LAYOUT_P_S, 4, err, sizeof err) ||
        mg_layout_parse("vector-tiled A=10 S=4", &q, err, sizeof err) || !same_params(&p, &q))
        FAIL("params_set vs parse");
    if (mg_layout_params_set(&p, MG_LAYOUT_P_A, 1L << 40, err, sizeof err) != MG_LAYOUT_EINVALID)
        FAIL("params_set out of int range");

    /* Data size m -> n. */
    long n = 0;
    if (mg_layout_parse("tiled A=2", &p, err, sizeof err) || mg_layout_n_for_bytes(&p, 3200, &n, err, sizeof err) ||
        n != 800)
        FAIL("n_for_bytes tiled: %ld %s", n, err);
    if (mg_layout_parse("tiled A=2 type=double", &p, err, sizeof err) ||
        mg_layout_n_for_bytes(&p, 3201, &n, err, sizeof err) != MG_LAYOUT_EINVALID ||
        !strstr(err, "not a multiple of 8"))
        FAIL("n_for_bytes: %s", err);
    if (mg_layout_parse("tiled-heterogeneous A=2", &p, err, sizeof err) ||
        mg_layout_n_for_bytes(&p, 48000, &n, err, sizeof err) || n != 12800)
        FAIL("n_for_bytes heterogeneous: %ld %s", n, err);

    /* Offsets need a checked layout with n. */
    mg_layout_info info;
    MPI_Aint off[4];
    if (mg_layout_parse("tiled A=2", &p, err, sizeof err) || mg_layout_check(&p, 0, &info, err, sizeof err) ||
        mg_layout_offsets(&info, off, NULL) != MG_LAYOUT_EARG)
        FAIL("offsets without n must fail");
    if (info.k != 2 || info.type_extent != 4 * (MPI_Aint)sizeof(int) || info.extent != 0)
        FAIL("check without n: k %ld type_extent %ld", info.k, (long)info.type_extent);
    if (mg_layout_check(&p, 4, &info, err, sizeof err) || mg_layout_offsets(&info, off, NULL) || off[0] != 0 ||
        off[1] != 4 || off[2] != 16 || off[3] != 20)
        FAIL("tiled A=2 offsets");
    if (mg_layout_offset(&info, 5, NULL) != -1) FAIL("offset beyond n must be -1");
    if (mg_layout_check(NULL, 4, &info, err, sizeof err) != MG_LAYOUT_EARG) FAIL("check NULL");
    if (mg_layout_parse("tiled A=2", NULL, err, sizeof err) != MG_LAYOUT_EARG) FAIL("parse NULL");
    mg_layout_type t;
    if (mg_layout_build(&p, 0, &t, err, sizeof err) != MG_LAYOUT_EARG) FAIL("build with n=0");
    mg_layout_type_free(NULL);

    /* Row-column geometry spelled out: row 0..A-1, then column at A, 2A, ... */
    MPI_Aint all[6];
    if (mg_layout_parse("rowcol-struct A=3 type=char", &p, err, sizeof err) ||
        mg_layout_check(&p, 6, &info, err, sizeof err) || mg_layout_offsets(&info, all, NULL))
        FAIL("rowcol: %s", err);
    else {
        MPI_Aint want[6] = {0, 1, 2, 3, 6, 9};
        if (memcmp(all, want, sizeof want) != 0) FAIL("rowcol-struct A=3 n=6 offsets");
        if (info.true_extent != 10) FAIL("rowcol true extent %ld", (long)info.true_extent);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 1) {
        fprintf(stderr, "test_layouts: run with mpiexec -n 1\n");
        MPI_Finalize();
        return 2;
    }
    double t0 = MPI_Wtime();
    test_api();
    test_table2();
    test_parse_errors();
    test_rules();
    sweep();
    if (live_types != 0) FAIL("%d derived datatypes leaked in total", live_types);
    printf("test_layouts: %d layout cases, %d failures, %.2f s\n", cases_run, failures, MPI_Wtime() - t0);
    MPI_Finalize();
    return failures ? 1 : 0;
}
