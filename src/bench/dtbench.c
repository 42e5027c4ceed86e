#define _POSIX_C_SOURCE 200809L
/* mg_dtbench: the datatype engine against the stack's MPI_Pack/MPI_Unpack, the
 * engine's normalized type inside MPI, a hand-written loop and memcpy, on one
 * process, for the layout descriptions of Carpen-Amarie et al. (2016)
 * (src/bench/layouts.h).
 *
 * For every data size m, blocksize A and layout description, one configuration
 * of n elements (about m data bytes) is built, checked and then timed per
 * method and direction through mg_bench_measure(). Type construction, engine
 * compilation, allocation and first touch are never timed. Extra header lines
 * per configuration (`#@info[...]`, `#@normal[...]`, `#@skip[...]`) and the
 * commit-cost rows are described in docs/formats.md. */
#include "bench_util.h"
#include "layouts.h"
#include "mg_bench.h"
#include "mg_options.h"
#include "mg_size.h"
#include "mpiguide/dt.h"

#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LIST   64
#define MAX_DESCS  128
#define GUARD      MG_BENCH_GUARD
#define LINE       64
#define NORMAL_MAX 8192

/* The defaults of the options (--help and --list print them). */
#define DEFAULT_A      "2,10,100,1000,1024,10000"
#define DEFAULT_SIZES  "3200,2560000,64000000"
#define DEFAULT_COMMIT "10,1000,1000000"
#define DEFAULT_TYPE   "int"
#define DEFAULT_SPAN   "1g"

/* ------------------------------------------------------------------ */
/* Methods, directions, geometries, default descriptions               */
/* ------------------------------------------------------------------ */

enum { M_ENGINE, M_MPI, M_NORMALIZED, M_HAND, M_MEMCPY, NMETHODS };
static const char *const method_names[NMETHODS] = {"engine", "mpi", "normalized", "hand", "memcpy"};
enum { D_PACK, D_UNPACK, NDIRS };
static const char *const dir_names[NDIRS] = {"pack", "unpack"};

/* The geometries of the catalog (mg_layout_geometry) that have a hand-written
 * loop here; every description of one layout shares its geometry. A layout of
 * another geometry is an error when it is asked for, never measured as
 * something else. */
typedef enum { G_CONTIG, G_TILED, G_BLOCK, G_BUCKET, G_ALT, G_ALT_B2A2, G_ROWCOL, G_HETERO, NGEOS } geo_kind;
static const char *const geo_names[NGEOS] = {"contiguous",       "tiled",  "block",        "bucket", "alternating",
                                             "alternating-b2a2", "rowcol", "heterogeneous"};

static int geo_of(const char *geometry)
{
    for (int g = 0; g < NGEOS; g++)
        if (geometry && strcmp(geometry, geo_names[g]) == 0) return g;
    return -1;
}

/* The default descriptions come from the catalog: every layout in catalog
 * order with the catalog's defaults (Alternating in Variant 1), Contiguous-
 * subtype over each layout that may be its sub, and these parameters. */
static const struct {
    const char *layout, *params;
} default_params[] = {{"tiled-struct", "S1=2 S2=3"}};

typedef struct {
    char spec[96];  /* for mg_layout_parse */
    char label[96]; /* layout column */
} named_spec;

/* Fills out[0..max-1] with the default descriptions; returns their number. */
static int default_descs(named_spec *out, int max)
{
    int n = 0;
    for (int k = 0; k < mg_layouts_count() && n < max; k++) {
        const mg_layout_desc *d = mg_layouts_get(k);
        if (d->params & MG_LAYOUT_BIT(MG_LAYOUT_P_SUB)) {
            for (int s = 0; s < mg_layouts_count() && n < max; s++) {
                if (!mg_layout_is_sub((mg_layout_kind)s)) continue;
                named_spec *o = &out[n++];
                snprintf(o->spec, sizeof o->spec, "%s sub=%s", d->name, mg_layouts_get(s)->name);
                snprintf(o->label, sizeof o->label, "%s:%s", d->name, mg_layouts_get(s)->name);
            }
            continue;
        }
        const char *extra = "";
        for (size_t i = 0; i < sizeof default_params / sizeof *default_params; i++)
            if (strcmp(default_params[i].layout, d->name) == 0) extra = default_params[i].params;
        named_spec *o = &out[n++];
        snprintf(o->spec, sizeof o->spec, "%s%s%s", d->name, *extra ? " " : "", extra);
        snprintf(o->label, sizeof o->label, "%s", d->name);
    }
    return n;
}

typedef struct {
    char label[128];         /* layout column: name[:sub][:k=v,...] */
    mg_layout_params params; /* as given (no A); --type applied */
    geo_kind geo;
} desc;

/* ------------------------------------------------------------------ */
/* Hand-written loops: what a user writes for each geometry            */
/* ------------------------------------------------------------------ */

typedef struct {
    geo_kind g;
    size_t es;               /* element bytes (0 for heterogeneous) */
    size_t len1, len2;       /* run bytes: the (first) run, the second run */
    size_t off2;             /* bytes from a period's start to its second run */
    size_t period;           /* bytes from one period (or column element) to the next */
    size_t reps;             /* periods (units for block, column elements for rowcol) */
    size_t total;            /* data bytes */
    size_t hoff[4], hlen[4]; /* heterogeneous: field offsets and bytes per struct element */
} hand_geo;

/* memcpy of one run; runs of up to 32 bytes use a fixed length so that the
 * compiler inlines them (used where a loop has two run lengths). */
static inline void copy_run(unsigned char *restrict d, const unsigned char *restrict s, size_t len)
{
    switch (len) {
    case 1: memcpy(d, s, 1); return;
    case 2: memcpy(d, s, 2); return;
    case 4: memcpy(d, s, 4); return;
    case 8: memcpy(d, s, 8); return;
    case 12: memcpy(d, s, 12); return;
    case 16: memcpy(d, s, 16); return;
    case 24: memcpy(d, s, 24); return;
    case 32: memcpy(d, s, 32); return;
    default: memcpy(d, s, len); return;
    }
}

/* Loops with one run length: the length switch sits outside the loop, so each
 * loop body is a memcpy of a compile-time length for runs of up to 32 bytes
 * and a plain memcpy(len) otherwise. The loop (the macro's remaining arguments) uses LEN. */
#define WITH_LEN(len, ...)        \
    switch (len) {                \
    case 1: {                     \
        enum { LEN = 1 };         \
        __VA_ARGS__;              \
    } break;                      \
    case 2: {                     \
        enum { LEN = 2 };         \
        __VA_ARGS__;              \
    } break;                      \
    case 4: {                     \
        enum { LEN = 4 };         \
        __VA_ARGS__;              \
    } break;                      \
    case 8: {                     \
        enum { LEN = 8 };         \
        __VA_ARGS__;              \
    } break;                      \
    case 12: {                    \
        enum { LEN = 12 };        \
        __VA_ARGS__;              \
    } break;                      \
    case 16: {                    \
        enum { LEN = 16 };        \
        __VA_ARGS__;              \
    } break;                      \
    case 24: {                    \
        enum { LEN = 24 };        \
        __VA_ARGS__;              \
    } break;                      \
    case 32: {                    \
        enum { LEN = 32 };        \
        __VA_ARGS__;              \
    } break;                      \
    default: {                    \
        const size_t LEN = (len); \
        __VA_ARGS__;              \
    } break;                      \
    }

/* reps runs of len bytes, stride apart, to or from a contiguous stream. */
static void gather(unsigned char *restrict o, const unsigned char *restrict s, size_t len, size_t stride, size_t reps)
{
    WITH_LEN(len, for (size_t r = 0; r < reps; r++) memcpy(o + r * LEN, s + r * stride, LEN))
}
static void scatter(unsigned char *restrict d, const unsigned char *restrict i, size_t len, size_t stride, size_t reps)
{
    WITH_LEN(len, for (size_t r = 0; r < reps; r++) memcpy(d + r * stride, i + r * LEN, LEN))
}

static void hand_setup(hand_geo *h, const mg_layout_info *L, geo_kind g)
{
    const long *v = L->params.value;
    size_t es = (size_t)L->elem_size, n = (size_t)L->n, A = (size_t)v[MG_LAYOUT_P_A];
    memset(h, 0, sizeof *h);
    h->g = g;
    h->es = es;
    h->total = (size_t)L->data_size;
    switch (g) {
    case G_CONTIG: break;
    case G_TILED:
        h->len1 = A * es;
        h->period = (size_t)v[MG_LAYOUT_P_B] * es;
        h->reps = n / A;
        break;
    case G_BLOCK:
        h->len1 = A * es;
        h->off2 = (size_t)v[MG_LAYOUT_P_B1] * es;
        h->period = (size_t)(v[MG_LAYOUT_P_B1] + v[MG_LAYOUT_P_B2]) * es;
        h->reps = n / A; /* units; two per period */
        break;
    case G_BUCKET:
    case G_ALT:
    case G_ALT_B2A2: {
        size_t A1 = (size_t)v[MG_LAYOUT_P_A1], A2 = (size_t)v[MG_LAYOUT_P_A2];
        size_t B1 = g == G_BUCKET ? (size_t)v[MG_LAYOUT_P_B] : (size_t)v[MG_LAYOUT_P_B1];
        size_t B2 = g == G_BUCKET ? B1 : g == G_ALT_B2A2 ? A2 : (size_t)v[MG_LAYOUT_P_B2];
        h->len1 = A1 * es;
        h->len2 = A2 * es;
        h->off2 = B1 * es;
        h->period = (B1 + B2) * es;
        h->reps = n / (A1 + A2);
        break;
    }
    case G_ROWCOL: /* row of A at 0, then column element j at j*A */
        h->len1 = A * es;
        h->period = A * es;
        h->reps = n - A;
        break;
    case G_HETERO: { /* struct { char c[A]; ... int i[A]; ... double d[A]; ... short s[A]; } with B-element slots */
        static const size_t fsize[4] = {sizeof(char), sizeof(int), sizeof(double), sizeof(short)};
        size_t B = (size_t)v[MG_LAYOUT_P_B], off = 0;
        for (int f = 0; f < 4; f++) {
            h->hoff[f] = off;
            h->hlen[f] = A * fsize[f];
            off += B * fsize[f];
        }
        h->period = (size_t)L->type_extent;
        h->reps = n / (4 * A);
        break;
    }
    default: break;
    }
}

static void hand_pack(const hand_geo *h, const unsigned char *restrict src, unsigned char *restrict out)
{
    const unsigned char *s = src;
    unsigned char *o = out;
    size_t L1 = h->len1, L2 = h->len2, P = h->period, D = h->off2;
    switch (h->g) {
    case G_CONTIG: memcpy(out, src, h->total); break;
    case G_TILED: gather(o, s, L1, P, h->reps); break;
    case G_BLOCK: {
        size_t pairs = h->reps / 2;
        WITH_LEN(
            L1, for (size_t r = 0; r < pairs; r++) {
                memcpy(o + 2 * r * LEN, s + r * P, LEN);
                memcpy(o + (2 * r + 1) * LEN, s + r * P + D, LEN);
            })
        if (h->reps % 2) memcpy(o + 2 * pairs * L1, s + pairs * P, L1);
        break;
    }
    case G_BUCKET:
    case G_ALT:
    case G_ALT_B2A2:
        for (size_t r = 0; r < h->reps; r++, o += L1 + L2, s += P) {
            copy_run(o, s, L1);
            copy_run(o + L1, s + D, L2);
        }
        break;
    case G_ROWCOL:
        memcpy(o, s, L1);
        gather(o + L1, s + P, h->es, P, h->reps);
        break;
    case G_HETERO:
        for (size_t r = 0; r < h->reps; r++, s += P)
            for (int f = 0; f < 4; f++) {
                copy_run(o, s + h->hoff[f], h->hlen[f]);
                o += h->hlen[f];
            }
        break;
    default: break;
    }
}

static void hand_unpack(const hand_geo *h, const unsigned char *restrict in, unsigned char *restrict dst)
{
    const unsigned char *i = in;
    unsigned char *d = dst;
    size_t L1 = h->len1, L2 = h->len2, P = h->period, D = h->off2;
    switch (h->g) {
    case G_CONTIG: memcpy(dst, in, h->total); break;
    case G_TILED: scatter(d, i, L1, P, h->reps); break;
    case G_BLOCK: {
        size_t pairs = h->reps / 2;
        WITH_LEN(
            L1, for (size_t r = 0; r < pairs; r++) {
                memcpy(d + r * P, i + 2 * r * LEN, LEN);
                memcpy(d + r * P + D, i + (2 * r + 1) * LEN, LEN);
            })
        if (h->reps % 2) memcpy(d + pairs * P, i + 2 * pairs * L1, L1);
        break;
    }
    case G_BUCKET:
    case G_ALT:
    case G_ALT_B2A2:
        for (size_t r = 0; r < h->reps; r++, i += L1 + L2, d += P) {
            copy_run(d, i, L1);
            copy_run(d + D, i + L1, L2);
        }
        break;
    case G_ROWCOL:
        memcpy(d, i, L1);
        scatter(d + P, i + L1, h->es, P, h->reps);
        break;
    case G_HETERO:
        for (size_t r = 0; r < h->reps; r++, d += P)
            for (int f = 0; f < 4; f++) {
                copy_run(d + h->hoff[f], i, h->hlen[f]);
                i += h->hlen[f];
            }
        break;
    default: break;
    }
}

/* ------------------------------------------------------------------ */
/* One configuration: buffers and the timed operations                 */
/* ------------------------------------------------------------------ */

typedef struct {
    MPI_Datatype type, norm; /* layout type (count elements); normalized type (count 1) */
    int count;
    mg_dt *t;
    hand_geo hand;
    size_t span, data, packcap; /* layout buffer bytes; packed bytes; packed buffer bytes */
    unsigned char *src, *dst;   /* layout buffers (span) */
    unsigned char *ref;         /* MPI_Pack's stream of src: reference and unpack input */
    unsigned char *packed;      /* pack output */
    unsigned char *cbuf;        /* memcpy: the other contiguous buffer */
} cfg_ctx;

static int op_engine_pack(void *p)
{
    cfg_ctx *c = p;
    MPI_Count got;
    int rc = mg_dt_pack(c->t, c->src, c->count, 0, c->packed, (MPI_Count)c->data, &got);
    return rc == MG_DT_SUCCESS && got == (MPI_Count)c->data ? MPI_SUCCESS : MPI_ERR_OTHER;
}
static int op_engine_unpack(void *p)
{
    cfg_ctx *c = p;
    MPI_Count got;
    int rc = mg_dt_unpack(c->t, c->ref, (MPI_Count)c->data, 0, c->dst, c->count, &got);
    return rc == MG_DT_SUCCESS && got == (MPI_Count)c->data ? MPI_SUCCESS : MPI_ERR_OTHER;
}
static int op_mpi_pack(void *p)
{
    cfg_ctx *c = p;
    int pos = 0;
    return MPI_Pack(c->src, c->count, c->type, c->packed, (int)c->packcap, &pos, MPI_COMM_SELF);
}
static int op_mpi_unpack(void *p)
{
    cfg_ctx *c = p;
    int pos = 0;
    return MPI_Unpack(c->ref, (int)c->data, &pos, c->dst, c->count, c->type, MPI_COMM_SELF);
}
static int op_norm_pack(void *p)
{
    cfg_ctx *c = p;
    int pos = 0;
    return MPI_Pack(c->src, 1, c->norm, c->packed, (int)c->packcap, &pos, MPI_COMM_SELF);
}
static int op_norm_unpack(void *p)
{
    cfg_ctx *c = p;
    int pos = 0;
    return MPI_Unpack(c->ref, (int)c->data, &pos, c->dst, 1, c->norm, MPI_COMM_SELF);
}
static int op_hand_pack(void *p)
{
    cfg_ctx *c = p;
    hand_pack(&c->hand, c->src, c->packed);
    return MPI_SUCCESS;
}
static int op_hand_unpack(void *p)
{
    cfg_ctx *c = p;
    hand_unpack(&c->hand, c->ref, c->dst);
    return MPI_SUCCESS;
}
static int op_memcpy_pack(void *p)
{
    cfg_ctx *c = p;
    memcpy(c->packed, c->cbuf, c->data);
    return MPI_SUCCESS;
}
static int op_memcpy_unpack(void *p)
{
    cfg_ctx *c = p;
    memcpy(c->cbuf, c->ref, c->data);
    return MPI_SUCCESS;
}

static const mg_bench_op ops[NMETHODS][NDIRS] = {
    {op_engine_pack, op_engine_unpack}, {op_mpi_pack, op_mpi_unpack},       {op_norm_pack, op_norm_unpack},
    {op_hand_pack, op_hand_unpack},     {op_memcpy_pack, op_memcpy_unpack},
};

static void cfg_free(cfg_ctx *c)
{
    if (c->norm != MPI_DATATYPE_NULL) MPI_Type_free(&c->norm);
    if (c->t) mg_dt_free(c->t);
    free(c->src);
    free(c->dst);
    free(c->ref);
    free(c->packed);
    free(c->cbuf);
    memset(c, 0, sizeof *c);
    c->type = c->norm = MPI_DATATYPE_NULL;
}

/* ------------------------------------------------------------------ */
/* Checks                                                              */
/* ------------------------------------------------------------------ */

typedef struct {
    mg_bench *b;
    const char *cfg; /* "<layout> <geometry> <A> <msize>" */
    int failed[NMETHODS][NDIRS];
} checker;

static void check_fail(checker *k, int m, int d, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void check_fail(checker *k, int m, int d, const char *fmt, ...)
{
    if (k->failed[m][d]) return; /* one error line per method and direction */
    k->failed[m][d] = 1;
    char what[512], label[300];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    snprintf(label, sizeof label, "%s %s %s", k->cfg, method_names[m], dir_names[d]);
    mg_bench_config_error(k->b, label, what);
}

static const char *mpi_err(int rc, char *buf)
{
    int len = 0;
    if (MPI_Error_string(rc, buf, &len) != MPI_SUCCESS) snprintf(buf, MPI_MAX_ERROR_STRING, "MPI error %d", rc);
    return buf;
}

/* Where the data of one configuration lies, by the catalog. */
typedef struct {
    const mg_layout_info *L;
    MPI_Aint *offs;
    int *sizes; /* per element, mixed element types only */
} layout_map;

static size_t elem_bytes(const layout_map *g, long i)
{
    return g->sizes ? (size_t)g->sizes[i] : (size_t)g->L->elem_size;
}

/* MPI_Pack's stream of src into c->ref, checked against the catalog's element
 * offsets; if MPI_Pack fails, ref is built from the catalog instead so that
 * the other methods are still checked. */
static void check_reference(checker *k, cfg_ctx *c, const layout_map *g)
{
    char e[MPI_MAX_ERROR_STRING];
    memset(c->ref, GUARD, c->packcap);
    int pos = 0;
    int rc = MPI_Pack(c->src, c->count, c->type, c->ref, (int)c->packcap, &pos, MPI_COMM_SELF);
    int ref_ok = rc == MPI_SUCCESS && (size_t)pos == c->data;
    if (rc != MPI_SUCCESS)
        check_fail(k, M_MPI, D_PACK, "MPI_Pack failed: %s", mpi_err(rc, e));
    else if ((size_t)pos != c->data)
        check_fail(k, M_MPI, D_PACK, "MPI_Pack wrote %d bytes, the layout has %zu data bytes", pos, c->data);
    size_t sp = 0;
    for (long i = 0; i < g->L->n && ref_ok; i++) {
        size_t sz = elem_bytes(g, i);
        if (memcmp(c->ref + sp, c->src + g->offs[i], sz) != 0) {
            long long j = mg_first_diff(c->ref + sp, c->src + g->offs[i], sz);
            check_fail(k, M_MPI, D_PACK,
                       "MPI_Pack stream differs from the layout's offsets at stream byte %lld (element %ld at "
                       "buffer offset %lld)",
                       (long long)sp + j, i, (long long)g->offs[i]);
            break;
        }
        sp += sz;
    }
    if (ref_ok) return;
    sp = 0;
    for (long i = 0; i < g->L->n; i++) {
        memcpy(c->ref + sp, c->src + g->offs[i], elem_bytes(g, i));
        sp += elem_bytes(g, i);
    }
}

/* Whether method m can run on this configuration (the engine and the
 * normalized type exist). */
static int method_ready(const cfg_ctx *c, int m)
{
    if (m == M_ENGINE) return c->t != NULL;
    if (m == M_NORMALIZED) return c->norm != MPI_DATATYPE_NULL;
    return 1;
}

/* Packs src with every method but MPI_Pack and memcpy; compares with ref. */
static void check_packs(checker *k, cfg_ctx *c)
{
    char e[MPI_MAX_ERROR_STRING];
    for (int m = M_ENGINE; m <= M_HAND; m++) {
        if (m == M_MPI || !method_ready(c, m)) continue;
        memset(c->packed, GUARD, c->packcap);
        int rc = ops[m][D_PACK](c);
        if (rc != MPI_SUCCESS) {
            check_fail(k, m, D_PACK, "%s",
                       m == M_ENGINE ? "mg_dt_pack failed or packed a short stream" : mpi_err(rc, e));
            continue;
        }
        long long j = mg_first_diff(c->packed, c->ref, c->data);
        if (j >= 0)
            check_fail(k, m, D_PACK, "stream differs from MPI_Pack's at byte %lld of %zu (got 0x%02x, want 0x%02x)", j,
                       c->data, c->packed[j], c->ref[j]);
        else if (c->packcap > c->data && c->packed[c->data] != GUARD)
            check_fail(k, m, D_PACK, "wrote past the %zu data bytes of the stream", c->data);
    }
}

/* Unpacks ref with every method but memcpy into a guard-filled buffer: each
 * element must land at its offset and nothing else may be written. */
static void check_unpacks(checker *k, cfg_ctx *c, const layout_map *g)
{
    char e[MPI_MAX_ERROR_STRING];
    for (int m = M_ENGINE; m <= M_HAND; m++) {
        if (!method_ready(c, m)) continue;
        memset(c->dst, GUARD, c->span);
        int rc = ops[m][D_UNPACK](c);
        if (rc != MPI_SUCCESS) {
            check_fail(k, m, D_UNPACK, "%s",
                       m == M_ENGINE ? "mg_dt_unpack failed or consumed a short stream" : mpi_err(rc, e));
            continue;
        }
        int bad = 0;
        for (long i = 0; i < g->L->n && !bad; i++) {
            size_t sz = elem_bytes(g, i);
            if (memcmp(c->dst + g->offs[i], c->src + g->offs[i], sz) != 0) {
                long long j = mg_first_diff(c->dst + g->offs[i], c->src + g->offs[i], sz);
                check_fail(k, m, D_UNPACK, "element %ld differs from the original at buffer byte %lld", i,
                           (long long)g->offs[i] + j);
                bad = 1;
            }
            memset(c->dst + g->offs[i], GUARD, sz);
        }
        if (bad) continue;
        for (size_t i = 0; i < c->span; i++)
            if (c->dst[i] != GUARD) {
                check_fail(k, m, D_UNPACK, "wrote buffer byte %zu, which holds no data of the layout", i);
                break;
            }
    }
}

/* Distinct 64-byte lines holding data, with the buffer 64-byte aligned. */
static long long touched_bytes(const layout_map *g, size_t span)
{
    size_t nlines = span / LINE + 1;
    unsigned char *bits = calloc(nlines / 8 + 1, 1);
    if (!bits) return -1;
    long long count = 0;
    for (long i = 0; i < g->L->n; i++) {
        size_t first = (size_t)g->offs[i] / LINE, last = ((size_t)g->offs[i] + elem_bytes(g, i) - 1) / LINE;
        for (size_t l = first; l <= last; l++)
            if (!(bits[l / 8] & (1u << (l % 8)))) {
                bits[l / 8] |= (unsigned char)(1u << (l % 8));
                count++;
            }
    }
    free(bits);
    return count * LINE;
}

/* ------------------------------------------------------------------ */
/* Options                                                             */
/* ------------------------------------------------------------------ */

typedef struct {
    /* as given */
    const char *layouts_arg, *A_arg, *sizes_arg, *methods_arg, *dirs_arg, *type_arg, *commit_arg, *span_arg;
    int check_only;
    /* read */
    int methods[NMETHODS], nmethods;
    int dirs[NDIRS], ndirs;
    long A[MAX_LIST];
    int nA;
    size_t sizes[MAX_LIST];
    int nsizes;
    long commit[MAX_LIST];
    int ncommit;
    size_t max_span;
    int basic; /* mg_layout_basic */
    named_spec defaults[MAX_DESCS];
    int ndefaults;
    desc *descs;
    int ndescs;
    char all_methods[64], all_dirs[32];
    int form; /* of the normalized types (mg_bench_dt_form) */
} options;

static const char *basic_names(char *buf, size_t len)
{
    const char *names[MG_LAYOUT_NBASIC];
    for (int t = 0; t < MG_LAYOUT_NBASIC; t++) names[t] = mg_layout_basic_name((mg_layout_basic)t);
    return mg_join_names(names, MG_LAYOUT_NBASIC, ", ", buf, len);
}

static void options_init(options *o)
{
    memset(o, 0, sizeof *o);
    o->A_arg = DEFAULT_A;
    o->sizes_arg = DEFAULT_SIZES;
    o->methods_arg = mg_join_names(method_names, NMETHODS, ",", o->all_methods, sizeof o->all_methods);
    o->dirs_arg = mg_join_names(dir_names, NDIRS, ",", o->all_dirs, sizeof o->all_dirs);
    o->type_arg = DEFAULT_TYPE;
    o->commit_arg = DEFAULT_COMMIT;
    o->span_arg = DEFAULT_SPAN;
    o->ndefaults = default_descs(o->defaults, MAX_DESCS);
    o->descs = calloc(MAX_DESCS, sizeof *o->descs);
    if (!o->descs) MPI_Abort(MPI_COMM_WORLD, 2);
}

static void list(mg_json *j, const mg_bench *b)
{
    (void)b;
    const char *names[MAX_DESCS];
    named_spec defaults[MAX_DESCS];
    int nd = default_descs(defaults, MAX_DESCS), nk = mg_layouts_count();
    for (int k = 0; k < nk; k++) names[k] = mg_layouts_get(k)->name;
    mg_json_strings(j, "layouts", names, nk);
    mg_json_strings(j, "methods", method_names, NMETHODS);
    mg_json_strings(j, "directions", dir_names, NDIRS);
    for (int t = 0; t < MG_LAYOUT_NBASIC; t++) names[t] = mg_layout_basic_name((mg_layout_basic)t);
    mg_json_strings(j, "types", names, MG_LAYOUT_NBASIC);
    mg_json_strings(j, "geometries", geo_names, NGEOS);
    mg_json_object(j, "defaults");
    mg_json_long_list(j, "A", DEFAULT_A);
    mg_json_size_list(j, "sizes", DEFAULT_SIZES);
    mg_json_long_list(j, "commit_blocks", DEFAULT_COMMIT);
    for (int i = 0; i < nd; i++) names[i] = defaults[i].label;
    mg_json_strings(j, "descriptions", names, nd);
    mg_json_string(j, "type", DEFAULT_TYPE);
    size_t bytes = 0;
    mg_parse_size(DEFAULT_SPAN, &bytes);
    mg_json_long(j, "max_span", (long long)bytes);
    mg_json_close(j);
}

/* Layout column of a user spec: the default description's label if the spec is
 * one, else name[:sub] followed by the other given parameters. */
static void spec_label(const options *o, const mg_layout_params *p, char *out, size_t len)
{
    for (int i = 0; i < o->ndefaults; i++) {
        mg_layout_params q;
        if (mg_layout_parse(o->defaults[i].spec, &q, NULL, 0) == MG_LAYOUT_OK && q.kind == p->kind &&
            q.given == p->given && memcmp(q.value, p->value, sizeof q.value) == 0) {
            snprintf(out, len, "%s", o->defaults[i].label);
            return;
        }
    }
    size_t pos = (size_t)snprintf(out, len, "%s", mg_layouts_get(p->kind)->name);
    if (p->given & MG_LAYOUT_BIT(MG_LAYOUT_P_SUB) && pos < len)
        pos += (size_t)snprintf(out + pos, len - pos, ":%s", mg_layouts_get((int)p->value[MG_LAYOUT_P_SUB])->name);
    int first = 1;
    for (int i = 0; i < MG_LAYOUT_NPARAMS && pos < len; i++) {
        if (i == MG_LAYOUT_P_SUB || !(p->given & MG_LAYOUT_BIT(i))) continue;
        if (i == MG_LAYOUT_P_TYPE)
            pos += (size_t)snprintf(out + pos, len - pos, "%stype=%s", first ? ":" : ",",
                                    mg_layout_basic_name((mg_layout_basic)p->value[i]));
        else
            pos += (size_t)snprintf(out + pos, len - pos, "%s%s=%ld", first ? ":" : ",",
                                    mg_layout_param_name((mg_layout_param)i), p->value[i]);
        first = 0;
    }
}

static int add_desc(mg_bench *b, options *o, const char *spec, const char *label)
{
    if (o->ndescs >= MAX_DESCS) {
        mg_bench_error(b, "too many layouts (at most %d)", MAX_DESCS);
        return -1;
    }
    desc *d = &o->descs[o->ndescs];
    char err[512];
    if (mg_layout_parse(spec, &d->params, err, sizeof err) != MG_LAYOUT_OK) {
        mg_bench_error(b, "bad layout '%s': %s", spec, err);
        return -1;
    }
    if (d->params.given & MG_LAYOUT_BIT(MG_LAYOUT_P_A)) {
        mg_bench_error(b, "bad layout '%s': give A with --A, not in the spec", spec);
        return -1;
    }
    if (label)
        snprintf(d->label, sizeof d->label, "%s", label);
    else
        spec_label(o, &d->params, d->label, sizeof d->label);
    for (int i = 0; i < o->ndescs; i++)
        if (strcmp(o->descs[i].label, d->label) == 0) {
            mg_bench_error(b, "layout '%s' is given twice (as '%s')", d->label, spec);
            return -1;
        }
    const char *geometry = mg_layout_geometry(&d->params);
    int geo = geo_of(geometry);
    if (geo < 0) {
        mg_bench_error(b, "layout '%s': mg_dtbench has no hand-written loop for its geometry '%s'", spec,
                       geometry ? geometry : "(none)");
        return -1;
    }
    d->geo = (geo_kind)geo;
    mg_unit u;
    if (mg_desc_complete(&d->params, (int)o->basic, o->A, o->nA, &u) != 0) {
        mg_bench_error(b, "layout '%s' is invalid for every A: %s", d->label, u.err);
        return -1;
    }
    o->ndescs++;
    return 0;
}

typedef struct {
    mg_bench *b;
    options *o;
} adder;

static int add_spec(void *ctx, const char *spec)
{
    adder *a = ctx;
    return add_desc(a->b, a->o, spec, NULL);
}

/* --layouts, or the default descriptions. */
static int read_layouts(mg_bench *b, options *o)
{
    if (!o->layouts_arg) {
        for (int i = 0; i < o->ndefaults; i++)
            if (add_desc(b, o, o->defaults[i].spec, o->defaults[i].label) != 0) return -1;
        return 0;
    }
    adder a = {b, o};
    int n = mg_each_spec(o->layouts_arg, add_spec, &a);
    if (n == 0) mg_bench_error(b, "empty --layouts '%s'", o->layouts_arg);
    return n > 0 ? 0 : -1;
}

/* Every option but --layouts; 0, or -1 after the message. */
static int read_values(mg_bench *b, options *o)
{
    char known[64];
    o->basic = -1;
    for (int t = 0; t < MG_LAYOUT_NBASIC; t++)
        if (strcmp(mg_layout_basic_name((mg_layout_basic)t), o->type_arg) == 0) o->basic = t;
    if (o->basic < 0) {
        mg_bench_error(b, "unknown --type '%s' (known: %s)", o->type_arg, basic_names(known, sizeof known));
        return -1;
    }
    if (mg_parse_long_list(o->A_arg, o->A, MAX_LIST, &o->nA, 1) != 0) {
        mg_bench_error(b, "bad --A '%s': expected comma-separated blocksizes >= 1 (at most %d)", o->A_arg, MAX_LIST);
        return -1;
    }
    if (mg_parse_sizes_option(b, o->sizes_arg, o->sizes, MAX_LIST, &o->nsizes) != 0) return -1;
    if ((o->nmethods = mg_parse_names(b, "method", o->methods_arg, method_names, NMETHODS, o->methods)) < 0 ||
        (o->ndirs = mg_parse_names(b, "direction", o->dirs_arg, dir_names, NDIRS, o->dirs)) < 0)
        return -1;
    if (strcmp(o->commit_arg, "none") == 0) {
        o->ncommit = 0;
    } else if (mg_parse_long_list(o->commit_arg, o->commit, MAX_LIST, &o->ncommit, 1) != 0) {
        mg_bench_error(b, "bad --commit-blocks '%s': expected comma-separated block counts >= 1 (or none)",
                       o->commit_arg);
        return -1;
    }
    if (mg_parse_size(o->span_arg, &o->max_span) != 0 || o->max_span == 0) {
        mg_bench_error(b, "bad --max-span '%s': expected a byte count above 0, k/m/g = KiB/MiB/GiB", o->span_arg);
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------------ */
/* Sizing: n for about m bytes                                         */
/* ------------------------------------------------------------------ */

typedef struct {
    int configs, skipped;
} counters;

static void run_config(mg_bench *b, const options *o, const desc *d, long A, size_t m, long n, counters *cnt);

/* Every description at (A, m). n is the nearest multiple of the common unit of
 * every description of the same geometry and element size, so that they all
 * move the same data and compare directly. units and in: scratch space of
 * o->ndescs entries. */
static void run_grid_point(mg_bench *b, const options *o, long A, size_t m, mg_unit *units, int *in, counters *cnt)
{
    for (int i = 0; i < o->ndescs; i++) mg_unit_at(&o->descs[i].params, A, &units[i]);
    for (int i = 0; i < o->ndescs; i++) {
        const desc *d = &o->descs[i];
        const mg_unit *u = &units[i];
        char cfg[256];
        snprintf(cfg, sizeof cfg, "%s %s %ld %zu", d->label, geo_names[d->geo], A, m);
        if (u->rc) {
            mg_bench_note(b, "skip", cfg, "%s", u->err);
            cnt->skipped++;
            continue;
        }
        for (int j = 0; j < o->ndescs; j++)
            in[j] = !units[j].rc && o->descs[j].geo == d->geo &&
                    units[j].unit_bytes * u->unit == u->unit_bytes * units[j].unit;
        long long common, nunits;
        long n;
        int rc = mg_common_unit(units, o->ndescs, in, &common, NULL);
        if (rc != 0) {
            mg_bench_note(b, "skip", cfg, "%s: the common unit of the descriptions of the %s geometry overflows",
                          d->label, geo_names[d->geo]);
        } else if ((rc = mg_sizing_n(u, common, m, &nunits, &n)) != MG_SIZING_OK) {
            mg_bench_note(b, "skip", cfg,
                          "%s: m=%zu bytes is %s the %lld bytes of one unit of %lld elements that every "
                          "description of the %s geometry can take",
                          d->label, m, rc == MG_SIZING_TOO_SMALL ? "less than half" : "too many units of", common,
                          common / u->unit_bytes * u->unit, geo_names[d->geo]);
        } else {
            run_config(b, o, d, A, m, n, cnt);
            continue;
        }
        cnt->skipped++;
    }
}

/* ------------------------------------------------------------------ */
/* Commit cost                                                         */
/* ------------------------------------------------------------------ */

typedef struct {
    int nested;
    long N;
    int *displs;       /* indexed: block displacements (ints) */
    int S;             /* nested: inner vector count */
    MPI_Datatype base; /* uncommitted */
} commit_ctx;

/* Builds a fresh type from scratch (the displacements are computed outside). */
static int commit_create(commit_ctx *c, MPI_Datatype *out)
{
    if (!c->nested) return MPI_Type_create_indexed_block((int)c->N, 2, c->displs, MPI_INT, out);
    MPI_Datatype inner;
    int rc = MPI_Type_vector(c->S, 2, 4, MPI_INT, &inner);
    if (rc != MPI_SUCCESS) return rc;
    rc = MPI_Type_create_hvector((int)(c->N / c->S), 1, (MPI_Aint)c->S * 4 * (MPI_Aint)sizeof(int), inner, out);
    MPI_Type_free(&inner);
    return rc;
}

/* The timed region holds the dup and the free as well as the commit: the core
 * times the whole callback, and each repetition needs an uncommitted copy
 * (MPI_Type_dup keeps the committed state, and base is never committed). */
static int op_commit_mpi(void *p)
{
    commit_ctx *c = p;
    MPI_Datatype t;
    int rc = MPI_Type_dup(c->base, &t);
    if (rc != MPI_SUCCESS) return rc;
    rc = MPI_Type_commit(&t);
    MPI_Type_free(&t);
    return rc;
}

/* Constructor + commit + free: some libraries (MPICH with yaksa) do their work
 * at construction, which a dup shares. */
static int op_commit_mpi_create(void *p)
{
    commit_ctx *c = p;
    MPI_Datatype t;
    int rc = commit_create(c, &t);
    if (rc != MPI_SUCCESS) return rc;
    rc = MPI_Type_commit(&t);
    MPI_Type_free(&t);
    return rc;
}

static int op_commit_engine(void *p)
{
    commit_ctx *c = p;
    mg_dt *t;
    int rc = mg_dt_from_mpi(c->base, &t);
    if (rc != MG_DT_SUCCESS) return MPI_ERR_OTHER;
    mg_dt_free(t);
    return MPI_SUCCESS;
}

/* Engine pack of the commit type against MPI_Pack; returns an error text or NULL. */
static const char *commit_check(commit_ctx *c, char *msg, size_t len)
{
    MPI_Datatype t;
    MPI_Aint tlb, text;
    int size, pos = 0;
    if (MPI_Type_dup(c->base, &t) != MPI_SUCCESS || MPI_Type_commit(&t) != MPI_SUCCESS)
        return "MPI_Type_dup/MPI_Type_commit failed";
    MPI_Type_get_true_extent(t, &tlb, &text);
    MPI_Type_size(t, &size);
    unsigned char *buf = mg_alloc64((size_t)text), *a = mg_alloc64((size_t)size), *b = mg_alloc64((size_t)size);
    mg_dt *e = NULL;
    const char *res = NULL;
    int rc;
    if (!buf || !a || !b) {
        res = "out of memory";
    } else if ((rc = mg_dt_from_mpi(c->base, &e)) != MG_DT_SUCCESS) {
        snprintf(msg, len, "mg_dt_from_mpi failed: %s", mg_dt_strerror(rc));
        res = msg;
    } else {
        mg_fill_pattern(buf, (size_t)text);
        MPI_Count got = 0;
        if (MPI_Pack(buf - tlb, 1, t, a, size, &pos, MPI_COMM_SELF) != MPI_SUCCESS || pos != size) {
            res = "MPI_Pack failed";
        } else if ((rc = mg_dt_pack(e, buf - tlb, 1, 0, b, size, &got)) != MG_DT_SUCCESS || got != size) {
            snprintf(msg, len, "mg_dt_pack failed: %s", mg_dt_strerror(rc));
            res = msg;
        } else {
            long long j = mg_first_diff(a, b, (size_t)size);
            if (j >= 0) {
                snprintf(msg, len, "engine stream differs from MPI_Pack's at byte %lld of %d", j, size);
                res = msg;
            } else if (mg_dt_blocks(e) != c->N) {
                snprintf(msg, len, "engine reports %lld blocks, the type has %ld", (long long)mg_dt_blocks(e), c->N);
                res = msg;
            }
        }
    }
    if (e) mg_dt_free(e);
    free(buf);
    free(a);
    free(b);
    MPI_Type_free(&t);
    return res;
}

/* The displacements (indexed) or the inner count S (nested) of c->N blocks. */
static void commit_shape(commit_ctx *c)
{
    if (!c->nested) {
        /* Blocks of 2 ints at stride 3, every 7th gap 5 ints wider: irregular, no merging. */
        c->displs = malloc(sizeof(int) * (size_t)c->N);
        if (!c->displs) MPI_Abort(MPI_COMM_WORLD, 2);
        long d = 0;
        for (long j = 0; j < c->N; j++) {
            c->displs[j] = (int)d;
            d += (j % 7 == 6) ? 8 : 3;
        }
        return;
    }
    /* vector-tiled-like: inner vector of S blocks of 2 ints, stride 4; outer hvector. */
    static const int divs[] = {5, 4, 3, 2, 1};
    for (int s = 0; s < 5; s++)
        if (c->N % divs[s] == 0) {
            c->S = divs[s];
            break;
        }
}

/* Times the commit of c->base with every requested method; the engine only
 * if its check passed. */
static void measure_commit(mg_bench *b, const options *o, commit_ctx *c, const char *cfg, int engine_ok)
{
    static const struct {
        int method;
        const char *name;
        mg_bench_op op;
    } runs[] = {{M_MPI, "mpi", op_commit_mpi},
                {M_MPI, "mpi-create", op_commit_mpi_create},
                {M_ENGINE, "engine", op_commit_engine}};
    char label[192];
    for (size_t r = 0; r < sizeof runs / sizeof *runs; r++) {
        int want = 0;
        for (int m = 0; m < o->nmethods; m++) want |= o->methods[m] == runs[r].method;
        if (!want || (runs[r].method == M_ENGINE && !engine_ok)) continue;
        snprintf(label, sizeof label, "%s %s commit", cfg, runs[r].name);
        if (runs[r].op(c) != MPI_SUCCESS || mg_bench_measure(b, label, 0, runs[r].op, c) != MPI_SUCCESS)
            mg_bench_config_error(b, label, "the operation failed during measurement");
    }
}

static void run_commit(mg_bench *b, const options *o, counters *cnt)
{
    for (int kind = 0; kind < 2; kind++) {
        for (int i = 0; i < o->ncommit; i++) {
            commit_ctx c = {.nested = kind, .N = o->commit[i], .base = MPI_DATATYPE_NULL};
            char cfg[128], label[192], msg[256];
            snprintf(cfg, sizeof cfg, "%s commit %ld 0", kind ? "commit-nested" : "commit-indexed", c.N);
            commit_shape(&c);
            int rc = commit_create(&c, &c.base);
            if (rc != MPI_SUCCESS) {
                char e[MPI_MAX_ERROR_STRING];
                snprintf(label, sizeof label, "%s mpi commit", cfg);
                mg_bench_config_error(b, label, mpi_err(rc, e));
                free(c.displs);
                continue;
            }
            cnt->configs++;
            const char *bad = commit_check(&c, msg, sizeof msg);
            if (bad) {
                snprintf(label, sizeof label, "%s engine commit", cfg);
                mg_bench_config_error(b, label, bad);
            }
            if (!o->check_only) measure_commit(b, o, &c, cfg, bad == NULL);
            MPI_Type_free(&c.base);
            free(c.displs);
        }
    }
}

/* ------------------------------------------------------------------ */
/* One layout configuration                                            */
/* ------------------------------------------------------------------ */

/* Builds d at A for n elements into *lt and writes the configuration's key
 * into cfg. Returns 0 if it is to be measured; else -1 after recording why not
 * (a skip note, or an error when MPI failed). */
static int build_config(mg_bench *b, const options *o, const desc *d, long A, size_t m, long n, mg_layout_type *lt,
                        char *cfg, size_t cfglen, counters *cnt)
{
    char err[512], label[320];
    mg_layout_params p;
    int rc = mg_layout_at_A(&d->params, A, &p, err, sizeof err);
    if (!rc) rc = mg_layout_build(&p, n, lt, err, sizeof err);
    if (rc) {
        mg_layout_info L;
        long long msize =
            (!mg_layout_at_A(&d->params, A, &p, NULL, 0) && !mg_layout_check(&p, 0, &L, NULL, 0) && L.elem_size > 0)
                ? (long long)n * L.elem_size
                : (long long)m;
        snprintf(cfg, cfglen, "%s %s %ld %lld", d->label, geo_names[d->geo], A, msize);
        if (rc == MG_LAYOUT_EMPI || rc == MG_LAYOUT_ENOMEM) { /* a failure, not an impossible configuration */
            snprintf(label, sizeof label, "%s mpi pack", cfg);
            mg_bench_config_error(b, label, err);
            return -1;
        }
        mg_bench_note(b, "skip", cfg, "%s", err);
        cnt->skipped++;
        return -1;
    }
    const mg_layout_info *L = &lt->info;
    snprintf(cfg, cfglen, "%s %s %ld %lld", d->label, geo_names[d->geo], A, (long long)L->data_size);
    if ((size_t)L->buffer_size > o->max_span)
        mg_bench_note(b, "skip", cfg, "%s: the layout buffer spans %lld bytes, more than --max-span %zu", d->label,
                      (long long)L->buffer_size, o->max_span);
    else if (L->data_size > INT_MAX)
        mg_bench_note(b, "skip", cfg, "%s: %lld data bytes do not fit MPI_Pack's int sizes", d->label,
                      (long long)L->data_size);
    else {
        cnt->configs++;
        return 0;
    }
    mg_layout_type_free(lt);
    cnt->skipped++;
    return -1;
}

/* The sizes of the configuration's buffers and its hand-written loop. Returns
 * 0, or -1 (errors recorded) if MPI's idea of where the data lies does not fit
 * the catalog's buffer. */
static int cfg_setup(checker *k, cfg_ctx *c, const mg_layout_type *lt, geo_kind geo)
{
    const mg_layout_info *L = &lt->info;
    memset(c, 0, sizeof *c);
    c->type = lt->type;
    c->norm = MPI_DATATYPE_NULL;
    c->count = lt->count;
    c->span = (size_t)L->buffer_size;
    c->data = (size_t)L->data_size;
    int psize = 0;
    MPI_Pack_size(c->count, c->type, MPI_COMM_SELF, &psize);
    c->packcap = (size_t)psize > c->data ? (size_t)psize : c->data + 64;
    if (c->packcap > (size_t)INT_MAX) c->packcap = (size_t)INT_MAX;
    hand_setup(&c->hand, L, geo);

    MPI_Aint lb, ext, tlb, text;
    MPI_Type_get_extent(c->type, &lb, &ext);
    MPI_Type_get_true_extent(c->type, &tlb, &text);
    long long lo = tlb + (ext < 0 ? (long long)(c->count - 1) * ext : 0);
    long long hi = (long long)tlb + text + (ext > 0 ? (long long)(c->count - 1) * ext : 0);
    if (lo >= 0 && hi <= (long long)c->span) return 0;
    for (int m = 0; m < NMETHODS; m++)
        for (int d = 0; d < NDIRS; d++)
            if (m != M_MEMCPY)
                check_fail(k, m, d, "MPI puts the data at [%lld, %lld), outside the layout's buffer of %zu bytes", lo,
                           hi, c->span);
    return -1;
}

/* Allocates and first-touches the buffers (outside any timing), and the
 * catalog's map of the data into g (freed by the caller). */
static void cfg_alloc(mg_bench *b, cfg_ctx *c, const mg_layout_info *L, layout_map *g, const char *cfg)
{
    c->src = mg_alloc64(c->span);
    c->dst = mg_alloc64(c->span);
    c->ref = mg_alloc64(c->packcap);
    c->packed = mg_alloc64(c->packcap);
    c->cbuf = mg_alloc64(c->data);
    g->L = L;
    g->offs = malloc(sizeof *g->offs * (size_t)L->n);
    g->sizes = L->elem_size == 0 ? malloc(sizeof *g->sizes * (size_t)L->n) : NULL;
    if (!c->src || !c->dst || !c->ref || !c->packed || !c->cbuf || !g->offs || (L->elem_size == 0 && !g->sizes)) {
        mg_bench_error(b, "%s: cannot allocate the buffers (%zu + %zu bytes)", cfg, 2 * c->span, 3 * c->packcap);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (mg_layout_offsets(L, g->offs, g->sizes) != MG_LAYOUT_OK) {
        mg_bench_error(b, "%s: mg_layout_offsets failed", cfg);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    mg_fill_pattern(c->src, c->span);
    memset(c->dst, GUARD, c->span);
    memset(c->ref, GUARD, c->packcap);
    memset(c->packed, GUARD, c->packcap);
    mg_fill_pattern(c->cbuf, c->data);
}

/* The engine's compiled type and the normalized MPI type (never timed), with
 * the info and normal notes; a failure marks the engine's methods failed. */
static void engine_prepare(mg_bench *b, const options *o, checker *k, cfg_ctx *c, const layout_map *g)
{
    MPI_Count blocks = -1;
    char *normal = malloc(NORMAL_MAX);
    if (!normal) MPI_Abort(MPI_COMM_WORLD, 2);
    snprintf(normal, NORMAL_MAX, "(engine failed)");
    int rc = mg_dt_from_mpi(c->type, &c->t);
    if (rc != MG_DT_SUCCESS) {
        c->t = NULL;
        for (int d = 0; d < NDIRS; d++) {
            check_fail(k, M_ENGINE, d, "mg_dt_from_mpi failed: %s", mg_dt_strerror(rc));
            check_fail(k, M_NORMALIZED, d, "mg_dt_from_mpi failed: %s", mg_dt_strerror(rc));
        }
    } else {
        blocks = mg_dt_blocks(c->t) * (MPI_Count)c->count;
        rc = mg_dt_describe_count(c->t, c->count, normal, NORMAL_MAX);
        if (rc == MG_DT_ERR_TRUNCATED)
            strcpy(normal + NORMAL_MAX - 16, " ...(truncated)");
        else if (rc != MG_DT_SUCCESS)
            snprintf(normal, NORMAL_MAX, "(mg_dt_describe_count: %s)", mg_dt_strerror(rc));
        if (mg_dt_size(c->t) * (MPI_Count)c->count != (MPI_Count)c->data)
            for (int d = 0; d < NDIRS; d++)
                check_fail(k, M_ENGINE, d, "engine size %lld x count %d differs from the %zu data bytes",
                           (long long)mg_dt_size(c->t), c->count, c->data);
        rc = mg_dt_to_mpi_form(c->t, c->count, o->form, &c->norm);
        if (rc != MG_DT_SUCCESS) {
            c->norm = MPI_DATATYPE_NULL;
            for (int d = 0; d < NDIRS; d++)
                check_fail(k, M_NORMALIZED, d, "mg_dt_to_mpi_form failed: %s", mg_dt_strerror(rc));
        }
    }
    mg_bench_note(b, "info", k->cfg, "packed=%zu,span=%lld,touched=%lld,blocks=%lld,n=%ld", c->data,
                  (long long)g->L->true_extent, touched_bytes(g, c->span), (long long)blocks, g->L->n);
    mg_bench_note(b, "normal", k->cfg, "%s", normal);
    free(normal);
}

/* A single pack of a few kB takes 50-500 ns, close to the timer's own cost
 * and resolution on a virtual machine: one call per repetition measured the
 * same loop at 102, 137 or 180 ns depending on buffer placement and order. A
 * repetition times a batch of calls of at least BATCH_S instead (the caches
 * stay warm, as they do in a loop of calls) and records the time per call. */
#define BATCH_S   20e-6
#define BATCH_MAX 1000

static int batch_calls(mg_bench_op op, void *ctx)
{
    enum { PROBE = 8 };
    double t0 = MPI_Wtime();
    for (int k = 0; k < PROBE; k++)
        if (op(ctx) != MPI_SUCCESS) return 1;
    double per = (MPI_Wtime() - t0) / PROBE;
    return per <= 0 ? BATCH_MAX : per >= BATCH_S ? 1 : (int)fmin(BATCH_MAX, ceil(BATCH_S / per));
}

/* Times every requested method whose check passed, side by side per
 * direction (mg_bench_measure_side_by_side): engine/hand and engine/MPI are
 * ratios of times taken in the same moments. The checks leave ref holding the
 * stream (the unpack input) and every buffer touched. */
static void measure_methods(mg_bench *b, const options *o, const checker *k, cfg_ctx *c)
{
    char label[NMETHODS][320];
    const char *labels[NMETHODS];
    mg_bench_op run[NMETHODS];
    int calls[NMETHODS];
    for (int di = 0; di < o->ndirs; di++) {
        int d = o->dirs[di], n = 0;
        for (int mi = 0; mi < o->nmethods; mi++) {
            int m = o->methods[mi];
            if (!method_ready(c, m) || k->failed[m][d]) continue;
            snprintf(label[n], sizeof label[n], "%s %s %s", k->cfg, method_names[m], dir_names[d]);
            labels[n] = label[n];
            run[n] = ops[m][d];
            calls[n] = batch_calls(run[n], c);
            n++;
        }
        int failed;
        if (n && mg_bench_measure_side_by_side(b, n, labels, c->data, run, c, calls, &failed) != MPI_SUCCESS)
            mg_bench_config_error(b, failed >= 0 ? labels[failed] : labels[0],
                                  failed >= 0 ? "the operation failed during measurement"
                                              : "the measurement failed (synchronization or memory)");
    }
}

static void run_config(mg_bench *b, const options *o, const desc *d, long A, size_t m, long n, counters *cnt)
{
    char cfg[256];
    mg_layout_type lt;
    if (build_config(b, o, d, A, m, n, &lt, cfg, sizeof cfg, cnt) != 0) return;
    checker k = {.b = b, .cfg = cfg};
    cfg_ctx c;
    if (cfg_setup(&k, &c, &lt, d->geo) == 0) {
        layout_map g;
        cfg_alloc(b, &c, &lt.info, &g, cfg);
        engine_prepare(b, o, &k, &c, &g);
        check_reference(&k, &c, &g);
        check_packs(&k, &c);
        check_unpacks(&k, &c, &g);
        free(g.offs);
        free(g.sizes);
        if (!o->check_only) measure_methods(b, o, &k, &c);
        cfg_free(&c);
    }
    mg_layout_type_free(&lt);
}

/* ------------------------------------------------------------------ */
/* Driver                                                              */
/* ------------------------------------------------------------------ */

typedef struct {
    unsigned char *a, *b;
    size_t len;
} calib_ctx;

static int op_calib(void *p)
{
    calib_ctx *c = p;
    memcpy(c->b, c->a, c->len);
    return MPI_SUCCESS;
}

/* t_nrep1 (estimate mode): a memcpy of the smallest size. */
static void calibrate(mg_bench *b, const options *o)
{
    size_t smallest = o->sizes[0];
    for (int s = 0; s < o->nsizes; s++) smallest = o->sizes[s] < smallest ? o->sizes[s] : smallest;
    calib_ctx cc = {mg_alloc64(smallest), mg_alloc64(smallest), smallest};
    if (!cc.a || !cc.b) MPI_Abort(MPI_COMM_WORLD, 2);
    mg_fill_pattern(cc.a, smallest);
    memset(cc.b, 0, smallest);
    if (mg_bench_calibrate(b, op_calib, &cc) != MPI_SUCCESS) MPI_Abort(MPI_COMM_WORLD, 2);
    free(cc.a);
    free(cc.b);
}

static void write_header(mg_bench *b, const options *o)
{
    char list[4096];
    size_t pos = 0;
    list[0] = '\0';
    for (int i = 0; i < o->ndescs && pos < sizeof list; i++)
        pos += (size_t)snprintf(list + pos, sizeof list - pos, "%s%s", i ? ";" : "", o->descs[i].label);
    mg_bench_param(b, "layouts", "%s", list);
    mg_bench_param(b, "A", "%s", o->A_arg);
    mg_bench_param(b, "sizes", "%s", o->sizes_arg);
    mg_bench_param(b, "methods", "%s", o->methods_arg);
    mg_bench_param(b, "directions", "%s", o->dirs_arg);
    mg_bench_param(b, "type", "%s", o->type_arg);
    mg_bench_param(b, "commit_blocks", "%s", o->commit_arg);
    mg_bench_param(b, "max_span", "%zu", o->max_span);
    mg_bench_param(b, "check_only", "%d", o->check_only);
    mg_bench_param(b, "hand", "memcpy per run; runs of <= 32 bytes with a fixed-size memcpy");
    mg_bench_param(b, "batch", "%s",
                   "each repetition times consecutive calls lasting >= 20 us together (at most 1000) "
                   "and records the time per call");
    mg_bench_param(b, "commit_timing",
                   "mpi: MPI_Type_dup+MPI_Type_commit+MPI_Type_free of an uncommitted type; mpi-create: "
                   "constructor+MPI_Type_commit+MPI_Type_free; engine: mg_dt_from_mpi+mg_dt_free");
    if (mg_bench_begin(b, "layout geometry A msize method direction") != 0) MPI_Abort(MPI_COMM_WORLD, 2);
}

/* The command line: MG_ARGS_RUN, or the exit status. */
static int read_command_line(mg_bench *b, options *o, int argc, char **argv)
{
    char m[64], d[32], t[64], methods_help[96], dirs_help[64], type_help[96];
    snprintf(methods_help, sizeof methods_help, "%s (default all)",
             mg_join_names(method_names, NMETHODS, ",", m, sizeof m));
    snprintf(dirs_help, sizeof dirs_help, "%s (default both)", mg_join_names(dir_names, NDIRS, ",", d, sizeof d));
    snprintf(type_help, sizeof type_help, "basic type: %s (default " DEFAULT_TYPE ")", basic_names(t, sizeof t));
    const mg_opt opts[] = {
        {"--layouts", MG_OPT_VALUE, &o->layouts_arg, 0, NULL, "'SPEC;SPEC;...'",
         "layout descriptions without A, e.g. 'tiled;tiled-struct S1=1 S2=1' (default: every description, see "
         "--list)"},
        {"--A", MG_OPT_VALUE, &o->A_arg, 0, NULL, "LIST", "blocksizes A (default " DEFAULT_A ")"},
        {"--sizes", MG_OPT_VALUE, &o->sizes_arg, 0, NULL, "LIST",
         "data sizes m in bytes, k/m/g = KiB/MiB/GiB (default " DEFAULT_SIZES ")"},
        {"--methods", MG_OPT_VALUE, &o->methods_arg, 0, NULL, "LIST", methods_help},
        {"--directions", MG_OPT_VALUE, &o->dirs_arg, 0, NULL, "LIST", dirs_help},
        {"--type", MG_OPT_VALUE, &o->type_arg, 0, NULL, "NAME", type_help},
        {"--commit-blocks", MG_OPT_VALUE, &o->commit_arg, 0, NULL, "LIST",
         "blocks of the types whose commit cost is measured (default " DEFAULT_COMMIT ")"},
        {"--no-commit", MG_OPT_SET, &o->commit_arg, 0, "none", NULL, "measure no commit cost"},
        {"--max-span", MG_OPT_VALUE, &o->span_arg, 0, NULL, "BYTES",
         "skip configurations whose layout buffer is larger (default " DEFAULT_SPAN "; k/m/g)"},
        {"--check-only", MG_OPT_FLAG, &o->check_only, 1, NULL, NULL,
         "check every configuration, write the info lines, time nothing"},
    };
    const mg_cli cli = {"mg_dtbench", "mpiexec -n 1 mg_dtbench [options]", opts,
                        (int)(sizeof opts / sizeof *opts), 0, list};
    int st = mg_bench_args(b, &cli, argc, argv);
    if (st != MG_ARGS_RUN) return st;
    if (read_values(b, o) != 0 || read_layouts(b, o) != 0) return 2;
    if (b->size != 1) {
        mg_bench_error(b, "mg_dtbench measures memory operations on one process (got %d)", b->size);
        return 2;
    }
    char err[200];
    if (mg_bench_dt_form(&o->form, err, sizeof err) != 0) {
        mg_bench_error(b, "%s", err);
        return 2;
    }
    return MG_ARGS_RUN;
}

static int run(int argc, char **argv)
{
    mg_bench b;
    mg_bench_init(&b, "dtbench", MPI_COMM_WORLD);
    options o;
    options_init(&o);
    int st = read_command_line(&b, &o, argc, argv);
    if (st != MG_ARGS_RUN) {
        free(o.descs);
        return mg_bench_quit(&b, st);
    }
    write_header(&b, &o);
    if (!o.check_only) calibrate(&b, &o);

    counters cnt = {0, 0};
    mg_unit *units = calloc((size_t)o.ndescs, sizeof *units);
    int *in = calloc((size_t)o.ndescs, sizeof *in);
    if (!units || !in) MPI_Abort(MPI_COMM_WORLD, 2);
    for (int s = 0; s < o.nsizes && !b.calibrate_only; s++)
        for (int a = 0; a < o.nA; a++) run_grid_point(&b, &o, o.A[a], o.sizes[s], units, in, &cnt);
    free(units);
    free(in);
    if (!b.calibrate_only && o.ncommit > 0) run_commit(&b, &o, &cnt);

    if (o.check_only && b.rank == 0)
        fprintf(stderr, "dtbench: %d configurations checked, %d skipped, %d method/direction checks failed\n",
                cnt.configs, cnt.skipped, b.errors);
    free(o.descs);
    return mg_bench_end(&b);
}

int main(int argc, char **argv) { return mg_bench_main(argc, argv, run); }
