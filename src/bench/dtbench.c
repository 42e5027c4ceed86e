#define _POSIX_C_SOURCE 200809L
/* mg_dtbench: the datatype engine against the stack's MPI_Pack/MPI_Unpack, the
 * engine's normalized type inside MPI, a hand-written loop and memcpy, on one
 * process, for the layout descriptions of paper 000 (src/bench/layouts.h).
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
#include "mpiguide/dt.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LIST   64
#define MAX_DESCS  128
#define GUARD      MG_BENCH_GUARD
#define LINE       64
#define NORMAL_MAX 8192

/* ------------------------------------------------------------------ */
/* Methods, directions, geometries                                     */
/* ------------------------------------------------------------------ */

enum { M_ENGINE, M_MPI, M_NORMALIZED, M_HAND, M_MEMCPY, NMETHODS };
static const char *const method_names[NMETHODS] = {"engine", "mpi", "normalized", "hand", "memcpy"};
enum { D_PACK, D_UNPACK, NDIRS };
static const char *const dir_names[NDIRS] = {"pack", "unpack"};

/* Memory layout families: every description of one layout shares its geometry. */
typedef enum { G_CONTIG, G_TILED, G_BLOCK, G_BUCKET, G_ALT, G_ALT_B2A2, G_ROWCOL, G_HETERO, NGEOS } geo_kind;
static const char *const geo_names[NGEOS] = {"contiguous",       "tiled",  "block",        "bucket", "alternating",
                                             "alternating-b2a2", "rowcol", "heterogeneous"};

static geo_kind geo_of(mg_layout_kind k, long sub)
{
    switch (k) {
    case MG_LAYOUT_CONTIGUOUS: return G_CONTIG;
    case MG_LAYOUT_TILED:
    case MG_LAYOUT_TILED_STRUCT:
    case MG_LAYOUT_TILED_VECTOR:
    case MG_LAYOUT_VECTOR_TILED: return G_TILED;
    case MG_LAYOUT_BLOCK:
    case MG_LAYOUT_BLOCK_INDEXED: return G_BLOCK;
    case MG_LAYOUT_BUCKET: return G_BUCKET;
    case MG_LAYOUT_ALTERNATING:
    case MG_LAYOUT_ALTERNATING_INDEXED: return G_ALT;
    case MG_LAYOUT_ALTERNATING_REPEATED:
    case MG_LAYOUT_ALTERNATING_STRUCT: return G_ALT_B2A2;
    case MG_LAYOUT_ROWCOL_FULLY_INDEXED:
    case MG_LAYOUT_ROWCOL_CONTIGUOUS_AND_INDEXED:
    case MG_LAYOUT_ROWCOL_STRUCT: return G_ROWCOL;
    case MG_LAYOUT_TILED_HETEROGENEOUS: return G_HETERO;
    case MG_LAYOUT_CONTIGUOUS_SUBTYPE: return geo_of((mg_layout_kind)sub, 0);
    default: return G_CONTIG;
    }
}

/* The default descriptions: every layout of the catalog, Alternating in
 * Variant 1 (the catalog's default), Contiguous-subtype over each basic layout,
 * Tiled-struct with S1=2, S2=3. */
typedef struct {
    const char *label; /* layout column */
    const char *spec;
} default_desc;

static const default_desc default_descs[] = {
    {"contiguous", "contiguous"},
    {"tiled", "tiled"},
    {"block", "block"},
    {"bucket", "bucket"},
    {"alternating", "alternating"},
    {"tiled-heterogeneous", "tiled-heterogeneous"},
    {"contiguous-subtype:tiled", "contiguous-subtype sub=tiled"},
    {"contiguous-subtype:block", "contiguous-subtype sub=block"},
    {"contiguous-subtype:bucket", "contiguous-subtype sub=bucket"},
    {"contiguous-subtype:alternating", "contiguous-subtype sub=alternating"},
    {"tiled-struct", "tiled-struct S1=2 S2=3"},
    {"tiled-vector", "tiled-vector"},
    {"vector-tiled", "vector-tiled"},
    {"block-indexed", "block-indexed"},
    {"alternating-indexed", "alternating-indexed"},
    {"alternating-repeated", "alternating-repeated"},
    {"alternating-struct", "alternating-struct"},
    {"rowcol-fully-indexed", "rowcol-fully-indexed"},
    {"rowcol-contiguous-and-indexed", "rowcol-contiguous-and-indexed"},
    {"rowcol-struct", "rowcol-struct"},
};
#define NDEFAULTS (sizeof default_descs / sizeof *default_descs)

typedef struct {
    char label[128];         /* layout column: name[:sub][:k=v,...] */
    mg_layout_params params; /* as given (no A); --type applied */
    geo_kind geo;
    int takes_A;
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
/* Keyed header lines                                                  */
/* ------------------------------------------------------------------ */

/* Writes `#@key[label]=value` on rank 0 (value on one line). The core has no
 * public helper for keyed lines yet, so this writes to b->out directly. */
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

/* Packs src with every method but memcpy, compares the streams with MPI_Pack's
 * (ref), and checks MPI_Pack's stream against the catalog's element offsets.
 * Then unpacks ref with every method into a guard-filled buffer and checks
 * that each element landed at its offset and nothing else was written. */
static void check_config(checker *k, cfg_ctx *c, const mg_layout_info *L, const MPI_Aint *offs, const int *sizes)
{
    char e[MPI_MAX_ERROR_STRING];
    long n = L->n;

    /* Reference: MPI_Pack. */
    memset(c->ref, GUARD, c->packcap);
    int pos = 0;
    int rc = MPI_Pack(c->src, c->count, c->type, c->ref, (int)c->packcap, &pos, MPI_COMM_SELF);
    int ref_ok = rc == MPI_SUCCESS && (size_t)pos == c->data;
    if (rc != MPI_SUCCESS)
        check_fail(k, M_MPI, D_PACK, "MPI_Pack failed: %s", mpi_err(rc, e));
    else if ((size_t)pos != c->data)
        check_fail(k, M_MPI, D_PACK, "MPI_Pack wrote %d bytes, the layout has %zu data bytes", pos, c->data);
    /* ... against the catalog, element by element. */
    size_t sp = 0;
    for (long i = 0; i < n && ref_ok; i++) {
        size_t sz = sizes ? (size_t)sizes[i] : (size_t)L->elem_size;
        if (memcmp(c->ref + sp, c->src + offs[i], sz) != 0) {
            long long j = mg_first_diff(c->ref + sp, c->src + offs[i], sz);
            check_fail(k, M_MPI, D_PACK,
                       "MPI_Pack stream differs from the layout's offsets at stream byte %lld (element %ld at "
                       "buffer offset %lld)",
                       (long long)sp + j, i, (long long)offs[i]);
            break;
        }
        sp += sz;
    }
    if (!ref_ok) { /* build the reference from the catalog so the other methods are still checked */
        sp = 0;
        for (long i = 0; i < n; i++) {
            size_t sz = sizes ? (size_t)sizes[i] : (size_t)L->elem_size;
            memcpy(c->ref + sp, c->src + offs[i], sz);
            sp += sz;
        }
    }

    /* Pack with the other methods, compare with the reference. */
    for (int m = M_ENGINE; m <= M_HAND; m++) {
        if (m == M_MPI || (m != M_HAND && !(m == M_ENGINE ? c->t != NULL : c->norm != MPI_DATATYPE_NULL))) continue;
        memset(c->packed, GUARD, c->packcap);
        rc = ops[m][D_PACK](c);
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

    /* Unpack the reference with every method. */
    for (int m = M_ENGINE; m <= M_HAND; m++) {
        if (m != M_HAND && m != M_MPI && !(m == M_ENGINE ? c->t != NULL : c->norm != MPI_DATATYPE_NULL)) continue;
        memset(c->dst, GUARD, c->span);
        rc = ops[m][D_UNPACK](c);
        if (rc != MPI_SUCCESS) {
            check_fail(k, m, D_UNPACK, "%s",
                       m == M_ENGINE ? "mg_dt_unpack failed or consumed a short stream" : mpi_err(rc, e));
            continue;
        }
        int bad = 0;
        for (long i = 0; i < n && !bad; i++) {
            size_t sz = sizes ? (size_t)sizes[i] : (size_t)L->elem_size;
            if (memcmp(c->dst + offs[i], c->src + offs[i], sz) != 0) {
                long long j = mg_first_diff(c->dst + offs[i], c->src + offs[i], sz);
                check_fail(k, m, D_UNPACK, "element %ld differs from the original at buffer byte %lld", i,
                           (long long)offs[i] + j);
                bad = 1;
            }
            memset(c->dst + offs[i], GUARD, sz);
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
static long long touched_bytes(const mg_layout_info *L, const MPI_Aint *offs, const int *sizes, size_t span)
{
    size_t nlines = span / LINE + 1;
    unsigned char *bits = calloc(nlines / 8 + 1, 1);
    if (!bits) return -1;
    long long count = 0;
    for (long i = 0; i < L->n; i++) {
        size_t sz = sizes ? (size_t)sizes[i] : (size_t)L->elem_size;
        size_t first = (size_t)offs[i] / LINE, last = ((size_t)offs[i] + sz - 1) / LINE;
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
    int check_only;
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
    desc *descs;
    int ndescs;
} options;

static void usage(const mg_bench *b)
{
    if (b->rank != 0) return;
    fprintf(stderr,
            "usage: mpiexec -n 1 mg_dtbench [options]\n"
            "  --layouts 'SPEC;SPEC;...'  layout descriptions without A, e.g. 'tiled;tiled-struct S1=1 S2=1'\n"
            "                        (default: every description, see --list)\n"
            "  --A LIST              blocksizes A (default 2,10,100,1000,1024,10000)\n"
            "  --sizes LIST          data sizes m in bytes, k/m = KiB/MiB (default 3200,2560000,64000000)\n"
            "  --methods LIST        engine,mpi,normalized,hand,memcpy (default all)\n"
            "  --directions LIST     pack,unpack (default both)\n"
            "  --type NAME           basic type: int (default), char, short, double, byte\n"
            "  --commit-blocks LIST  blocks of the types whose commit cost is measured (default 10,1000,1000000)\n"
            "  --no-commit           measure no commit cost\n"
            "  --max-span BYTES      skip configurations whose layout buffer is larger (default 1g; k/m/g)\n"
            "  --check-only          check every configuration, write the info lines, time nothing\n"
            "  --list                list the layouts of the catalog\n"
            "%s",
            mg_bench_common_usage());
}

/* Layout column of a user spec: the default description's label if the spec is
 * one, else name[:sub] followed by the other given parameters. */
static void spec_label(const mg_layout_params *p, char *out, size_t len)
{
    for (size_t i = 0; i < NDEFAULTS; i++) {
        mg_layout_params q;
        if (mg_layout_parse(default_descs[i].spec, &q, NULL, 0) == MG_LAYOUT_OK && q.kind == p->kind &&
            q.given == p->given && memcmp(q.value, p->value, sizeof q.value) == 0) {
            snprintf(out, len, "%s", default_descs[i].label);
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
        spec_label(&d->params, d->label, sizeof d->label);
    const mg_layout_desc *dd = mg_layouts_get(d->params.kind);
    for (int i = 0; i < o->ndescs; i++)
        if (strcmp(o->descs[i].label, d->label) == 0) {
            mg_bench_error(b, "layout '%s' is given twice (as '%s')", d->label, spec);
            return -1;
        }
    d->takes_A = (dd->params & MG_LAYOUT_BIT(MG_LAYOUT_P_A)) != 0;
    d->geo = geo_of(d->params.kind, d->params.value[MG_LAYOUT_P_SUB]);
    if ((dd->params & MG_LAYOUT_BIT(MG_LAYOUT_P_TYPE)) && !(d->params.given & MG_LAYOUT_BIT(MG_LAYOUT_P_TYPE)))
        mg_layout_params_set(&d->params, MG_LAYOUT_P_TYPE, o->basic, NULL, 0);
    o->ndescs++;
    return 0;
}

/* The spec's parameters with A set (if the layout takes A). */
static int with_A(const desc *d, long A, mg_layout_params *p, char *err, size_t errlen)
{
    *p = d->params;
    if (!d->takes_A) return MG_LAYOUT_OK;
    return mg_layout_params_set(p, MG_LAYOUT_P_A, A, err, errlen);
}

/* ------------------------------------------------------------------ */
/* Sizing: n for about m bytes                                         */
/* ------------------------------------------------------------------ */

/* Per description and A: the unit n must be a multiple of, and the data bytes
 * of one unit; rc != OK (with the catalog's message) if the parameters break a
 * rule of the layout whatever n is. */
typedef struct {
    int rc;
    char err[512];
    long unit;
    long long unit_bytes;
} unit_info;

static void unit_of(const desc *d, long A, unit_info *u)
{
    mg_layout_params p;
    u->err[0] = '\0';
    u->rc = with_A(d, A, &p, u->err, sizeof u->err);
    if (!u->rc) u->rc = mg_sizing_unit(&p, &u->unit, &u->unit_bytes, u->err, sizeof u->err);
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

static void run_commit(mg_bench *b, const options *o, int *nconfigs)
{
    for (int kind = 0; kind < 2; kind++) {
        for (int i = 0; i < o->ncommit; i++) {
            commit_ctx c = {.nested = kind, .N = o->commit[i], .base = MPI_DATATYPE_NULL};
            const char *layout = kind ? "commit-nested" : "commit-indexed";
            char cfg[128], label[192], msg[256];
            snprintf(cfg, sizeof cfg, "%s commit %ld 0", layout, c.N);
            if (!kind) {
                /* Blocks of 2 ints at stride 3, every 7th gap 5 ints wider: irregular, no merging. */
                c.displs = malloc(sizeof(int) * (size_t)c.N);
                if (!c.displs) MPI_Abort(MPI_COMM_WORLD, 2);
                long d = 0;
                for (long j = 0; j < c.N; j++) {
                    c.displs[j] = (int)d;
                    d += (j % 7 == 6) ? 8 : 3;
                }
            } else {
                /* vector-tiled-like: inner vector of S blocks of 2 ints, stride 4; outer hvector. */
                static const int divs[] = {5, 4, 3, 2, 1};
                for (int s = 0; s < 5; s++)
                    if (c.N % divs[s] == 0) {
                        c.S = divs[s];
                        break;
                    }
            }
            int rc = commit_create(&c, &c.base);
            if (rc != MPI_SUCCESS) {
                char e[MPI_MAX_ERROR_STRING];
                snprintf(label, sizeof label, "%s mpi commit", cfg);
                mg_bench_config_error(b, label, mpi_err(rc, e));
                free(c.displs);
                continue;
            }
            (*nconfigs)++;
            const char *bad = commit_check(&c, msg, sizeof msg);
            if (bad) {
                snprintf(label, sizeof label, "%s engine commit", cfg);
                mg_bench_config_error(b, label, bad);
            }
            if (!o->check_only) {
                struct {
                    int method;
                    const char *name;
                    mg_bench_op op;
                } runs[] = {{M_MPI, "mpi", op_commit_mpi},
                            {M_MPI, "mpi-create", op_commit_mpi_create},
                            {M_ENGINE, "engine", op_commit_engine}};
                for (size_t r = 0; r < sizeof runs / sizeof *runs; r++) {
                    int want = 0;
                    for (int m = 0; m < o->nmethods; m++) want |= o->methods[m] == runs[r].method;
                    if (!want || (runs[r].method == M_ENGINE && bad)) continue;
                    snprintf(label, sizeof label, "%s %s commit", cfg, runs[r].name);
                    if (runs[r].op(&c) != MPI_SUCCESS || mg_bench_measure(b, label, 0, runs[r].op, &c) != MPI_SUCCESS)
                        mg_bench_config_error(b, label, "the operation failed during measurement");
                }
            }
            MPI_Type_free(&c.base);
            free(c.displs);
        }
    }
}

/* ------------------------------------------------------------------ */
/* One layout configuration                                            */
/* ------------------------------------------------------------------ */

static void run_config(mg_bench *b, const options *o, const desc *d, long A, size_t m, long n, int *nconfigs,
                       int *nskipped)
{
    char cfg[256], err[512], label[320];
    long Acol = A;
    mg_layout_params p;
    mg_layout_type lt;
    int rc = with_A(d, A, &p, err, sizeof err);
    if (!rc) rc = mg_layout_build(&p, n, &lt, err, sizeof err);
    if (rc) {
        mg_layout_info L;
        long long msize = (!with_A(d, A, &p, NULL, 0) && !mg_layout_check(&p, 0, &L, NULL, 0) && L.elem_size > 0)
                              ? (long long)n * L.elem_size
                              : (long long)m;
        snprintf(cfg, sizeof cfg, "%s %s %ld %lld", d->label, geo_names[d->geo], Acol, msize);
        if (rc == MG_LAYOUT_EMPI || rc == MG_LAYOUT_ENOMEM) { /* a failure, not an impossible configuration */
            snprintf(label, sizeof label, "%s mpi pack", cfg);
            mg_bench_config_error(b, label, err);
            return;
        }
        mg_bench_note(b, "skip", cfg, "%s", err);
        (*nskipped)++;
        return;
    }
    const mg_layout_info *L = &lt.info;
    snprintf(cfg, sizeof cfg, "%s %s %ld %lld", d->label, geo_names[d->geo], Acol, (long long)L->data_size);
    if ((size_t)L->buffer_size > o->max_span) {
        mg_bench_note(b, "skip", cfg, "%s: the layout buffer spans %lld bytes, more than --max-span %zu", d->label,
                      (long long)L->buffer_size, o->max_span);
        mg_layout_type_free(&lt);
        (*nskipped)++;
        return;
    }
    if (L->data_size > INT_MAX) {
        mg_bench_note(b, "skip", cfg, "%s: %lld data bytes do not fit MPI_Pack's int sizes", d->label,
                      (long long)L->data_size);
        mg_layout_type_free(&lt);
        (*nskipped)++;
        return;
    }
    (*nconfigs)++;
    checker k = {.b = b, .cfg = cfg};

    cfg_ctx c;
    memset(&c, 0, sizeof c);
    c.type = lt.type;
    c.norm = MPI_DATATYPE_NULL;
    c.count = lt.count;
    c.span = (size_t)L->buffer_size;
    c.data = (size_t)L->data_size;
    int psize = 0;
    MPI_Pack_size(c.count, c.type, MPI_COMM_SELF, &psize);
    c.packcap = (size_t)psize > c.data ? (size_t)psize : c.data + 64;
    if (c.packcap > (size_t)INT_MAX) c.packcap = (size_t)INT_MAX;
    hand_setup(&c.hand, L, d->geo);

    /* MPI's idea of where the data lies must fit the catalog's buffer. */
    MPI_Aint lb, ext, tlb, text;
    MPI_Type_get_extent(c.type, &lb, &ext);
    MPI_Type_get_true_extent(c.type, &tlb, &text);
    long long lo = tlb + (ext < 0 ? (long long)(c.count - 1) * ext : 0);
    long long hi = (long long)tlb + text + (ext > 0 ? (long long)(c.count - 1) * ext : 0);
    if (lo < 0 || hi > (long long)c.span) {
        for (int mm = 0; mm < NMETHODS; mm++)
            for (int dd = 0; dd < NDIRS; dd++)
                if (mm != M_MEMCPY)
                    check_fail(&k, mm, dd,
                               "MPI puts the data at [%lld, %lld), outside the layout's buffer of %zu bytes", lo, hi,
                               c.span);
        mg_layout_type_free(&lt);
        return;
    }

    c.src = mg_alloc64(c.span);
    c.dst = mg_alloc64(c.span);
    c.ref = mg_alloc64(c.packcap);
    c.packed = mg_alloc64(c.packcap);
    c.cbuf = mg_alloc64(c.data);
    MPI_Aint *offs = malloc(sizeof *offs * (size_t)L->n);
    int *sizes = L->elem_size == 0 ? malloc(sizeof *sizes * (size_t)L->n) : NULL;
    if (!c.src || !c.dst || !c.ref || !c.packed || !c.cbuf || !offs || (L->elem_size == 0 && !sizes)) {
        mg_bench_error(b, "%s: cannot allocate the buffers (%zu + %zu bytes)", cfg, 2 * c.span, 3 * c.packcap);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (mg_layout_offsets(L, offs, sizes) != MG_LAYOUT_OK) {
        mg_bench_error(b, "%s: mg_layout_offsets failed", cfg);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    /* First touch of every buffer, outside any timing. */
    mg_fill_pattern(c.src, c.span);
    memset(c.dst, GUARD, c.span);
    memset(c.ref, GUARD, c.packcap);
    memset(c.packed, GUARD, c.packcap);
    mg_fill_pattern(c.cbuf, c.data);

    /* Engine: compile and normalized type (never timed). */
    MPI_Count blocks = -1;
    char *normal = malloc(NORMAL_MAX);
    if (!normal) MPI_Abort(MPI_COMM_WORLD, 2);
    snprintf(normal, NORMAL_MAX, "(engine failed)");
    rc = mg_dt_from_mpi(c.type, &c.t);
    if (rc != MG_DT_SUCCESS) {
        c.t = NULL;
        for (int dd = 0; dd < NDIRS; dd++) {
            check_fail(&k, M_ENGINE, dd, "mg_dt_from_mpi failed: %s", mg_dt_strerror(rc));
            check_fail(&k, M_NORMALIZED, dd, "mg_dt_from_mpi failed: %s", mg_dt_strerror(rc));
        }
    } else {
        blocks = mg_dt_blocks(c.t) * (MPI_Count)c.count;
        rc = mg_dt_describe_count(c.t, c.count, normal, NORMAL_MAX);
        if (rc == MG_DT_ERR_TRUNCATED)
            strcpy(normal + NORMAL_MAX - 16, " ...(truncated)");
        else if (rc != MG_DT_SUCCESS)
            snprintf(normal, NORMAL_MAX, "(mg_dt_describe_count: %s)", mg_dt_strerror(rc));
        if (mg_dt_size(c.t) * (MPI_Count)c.count != (MPI_Count)c.data)
            for (int dd = 0; dd < NDIRS; dd++)
                check_fail(&k, M_ENGINE, dd, "engine size %lld x count %d differs from the %zu data bytes",
                           (long long)mg_dt_size(c.t), c.count, c.data);
        rc = mg_dt_to_mpi(c.t, c.count, &c.norm);
        if (rc != MG_DT_SUCCESS) {
            c.norm = MPI_DATATYPE_NULL;
            for (int dd = 0; dd < NDIRS; dd++)
                check_fail(&k, M_NORMALIZED, dd, "mg_dt_to_mpi failed: %s", mg_dt_strerror(rc));
        }
    }
    mg_bench_note(b, "info", cfg, "packed=%zu,span=%lld,touched=%lld,blocks=%lld,n=%ld", c.data,
                  (long long)L->true_extent, touched_bytes(L, offs, sizes, c.span), (long long)blocks, L->n);
    mg_bench_note(b, "normal", cfg, "%s", normal);
    free(normal);

    check_config(&k, &c, L, offs, sizes);
    free(offs);
    free(sizes);

    if (!o->check_only) {
        /* The checks leave ref holding the stream (the unpack input) and every
         * buffer touched. */
        for (int mi = 0; mi < o->nmethods; mi++) {
            int meth = o->methods[mi];
            if ((meth == M_ENGINE && !c.t) || (meth == M_NORMALIZED && c.norm == MPI_DATATYPE_NULL)) continue;
            for (int di = 0; di < o->ndirs; di++) {
                int dd = o->dirs[di];
                if (k.failed[meth][dd]) continue;
                snprintf(label, sizeof label, "%s %s %s", cfg, method_names[meth], dir_names[dd]);
                /* One untimed warm-up call. */
                if (ops[meth][dd](&c) != MPI_SUCCESS ||
                    mg_bench_measure(b, label, c.data, ops[meth][dd], &c) != MPI_SUCCESS)
                    mg_bench_config_error(b, label, "the operation failed during measurement");
            }
        }
    }
    cfg_free(&c);
    mg_layout_type_free(&lt);
}

/* ------------------------------------------------------------------ */
/* Calibration (estimate mode): memcpy of the smallest size            */
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

/* ------------------------------------------------------------------ */
/* Driver                                                              */
/* ------------------------------------------------------------------ */

static int fail_opt(mg_bench *b, options *o)
{
    free(o->descs);
    mg_bench_end(b);
    return 2;
}

static int run(int argc, char **argv)
{
    mg_bench b;
    mg_bench_init(&b, "dtbench", MPI_COMM_WORLD);
    const char *layouts_arg = NULL, *A_arg = "2,10,100,1000,1024,10000", *sizes_arg = "3200,2560000,64000000";
    const char *methods_arg = "engine,mpi,normalized,hand,memcpy", *dirs_arg = "pack,unpack";
    const char *commit_arg = "10,1000,1000000", *type_arg = "int", *span_arg = "1g";
    options o;
    memset(&o, 0, sizeof o);
    o.descs = calloc(MAX_DESCS, sizeof *o.descs);
    if (!o.descs) MPI_Abort(MPI_COMM_WORLD, 2);

    for (int i = 1; i < argc; i++) {
        int r = mg_bench_option(&b, argc, argv, &i);
        if (r > 0) continue;
        if (r < 0) return fail_opt(&b, &o);
        const char *opt = argv[i];
        static const char *const valued[] = {"--layouts",    "--A",    "--sizes",         "--methods",
                                             "--directions", "--type", "--commit-blocks", "--max-span"};
        const char **dst[] = {&layouts_arg, &A_arg,    &sizes_arg,  &methods_arg,
                              &dirs_arg,    &type_arg, &commit_arg, &span_arg};
        const char *val;
        int known = mg_bench_valued_option(&b, argc, argv, &i, valued, (int)(sizeof valued / sizeof *valued), &val);
        if (known == -2) return fail_opt(&b, &o);
        if (known >= 0) {
            *dst[known] = val;
        } else if (strcmp(opt, "--check-only") == 0) {
            o.check_only = 1;
        } else if (strcmp(opt, "--no-commit") == 0) {
            commit_arg = "none";
        } else if (strcmp(opt, "--list") == 0) {
            if (b.rank == 0) {
                char *buf = malloc(1 << 16);
                if (buf && mg_layouts_list(buf, 1 << 16) == MG_LAYOUT_OK) fputs(buf, stdout);
                free(buf);
            }
            free(o.descs);
            mg_bench_end(&b);
            return 0;
        } else if (strcmp(opt, "--help") == 0) {
            usage(&b);
            free(o.descs);
            mg_bench_end(&b);
            return 0;
        } else {
            mg_bench_error(&b, "unknown option '%s' (try --help)", opt);
            return fail_opt(&b, &o);
        }
    }

    /* Validate. */
    o.basic = -1;
    for (int t = 0; t < MG_LAYOUT_NBASIC; t++)
        if (strcmp(mg_layout_basic_name((mg_layout_basic)t), type_arg) == 0) o.basic = t;
    if (o.basic < 0) {
        mg_bench_error(&b, "unknown --type '%s' (known: int, char, short, double, byte)", type_arg);
        return fail_opt(&b, &o);
    }
    if (mg_parse_long_list(A_arg, o.A, MAX_LIST, &o.nA, 1) != 0) {
        mg_bench_error(&b, "bad --A '%s': expected comma-separated blocksizes >= 1 (at most %d)", A_arg, MAX_LIST);
        return fail_opt(&b, &o);
    }
    if (mg_parse_size_list(sizes_arg, o.sizes, MAX_LIST, &o.nsizes) != 0) {
        mg_bench_error(&b, "bad --sizes '%s': expected comma-separated byte counts, k/m = KiB/MiB (at most %d)",
                       sizes_arg, MAX_LIST);
        return fail_opt(&b, &o);
    }
    for (int s = 0; s < o.nsizes; s++)
        if (o.sizes[s] == 0 || o.sizes[s] > (size_t)INT_MAX) {
            mg_bench_error(&b, "bad --sizes value %zu: sizes must be between 1 and %d bytes", o.sizes[s], INT_MAX);
            return fail_opt(&b, &o);
        }
    if ((o.nmethods = mg_parse_names(&b, "method", methods_arg, method_names, NMETHODS, o.methods)) < 0 ||
        (o.ndirs = mg_parse_names(&b, "direction", dirs_arg, dir_names, NDIRS, o.dirs)) < 0)
        return fail_opt(&b, &o);
    if (strcmp(commit_arg, "none") == 0)
        o.ncommit = 0;
    else if (mg_parse_long_list(commit_arg, o.commit, MAX_LIST, &o.ncommit, 1) != 0) {
        mg_bench_error(&b, "bad --commit-blocks '%s': expected comma-separated block counts >= 1 (or none)",
                       commit_arg);
        return fail_opt(&b, &o);
    }
    if (mg_parse_bytes(span_arg, &o.max_span) != 0) {
        mg_bench_error(&b, "bad --max-span '%s': expected a byte count, k/m/g = KiB/MiB/GiB", span_arg);
        return fail_opt(&b, &o);
    }
    if (layouts_arg) {
        char *copy = strdup(layouts_arg), *save = NULL;
        for (char *tok = strtok_r(copy, ";", &save); tok; tok = strtok_r(NULL, ";", &save)) {
            while (*tok == ' ' || *tok == '\t') tok++;
            if (!*tok) continue;
            if (add_desc(&b, &o, tok, NULL) != 0) {
                free(copy);
                return fail_opt(&b, &o);
            }
        }
        free(copy);
        if (o.ndescs == 0) {
            mg_bench_error(&b, "empty --layouts '%s'", layouts_arg);
            return fail_opt(&b, &o);
        }
    } else {
        for (size_t i = 0; i < NDEFAULTS; i++)
            if (add_desc(&b, &o, default_descs[i].spec, default_descs[i].label) != 0) return fail_opt(&b, &o);
    }
    /* A description that breaks a rule for every A is a mistake in the spec. */
    for (int i = 0; i < o.ndescs; i++) {
        unit_info u;
        int ok = 0;
        for (int a = 0; a < o.nA && !ok; a++) {
            unit_of(&o.descs[i], o.A[a], &u);
            ok = u.rc == MG_LAYOUT_OK;
        }
        if (!ok) {
            mg_bench_error(&b, "layout '%s' is invalid for every A: %s", o.descs[i].label, u.err);
            return fail_opt(&b, &o);
        }
    }
    if (b.size != 1) {
        mg_bench_error(&b, "mg_dtbench measures memory operations on one process (got %d)", b.size);
        return fail_opt(&b, &o);
    }

    /* Header. */
    char list[4096];
    size_t pos = 0;
    list[0] = '\0';
    for (int i = 0; i < o.ndescs && pos < sizeof list; i++)
        pos += (size_t)snprintf(list + pos, sizeof list - pos, "%s%s", i ? ";" : "", o.descs[i].label);
    mg_bench_param(&b, "layouts", "%s", list);
    mg_bench_param(&b, "A", "%s", A_arg);
    mg_bench_param(&b, "sizes", "%s", sizes_arg);
    mg_bench_param(&b, "methods", "%s", methods_arg);
    mg_bench_param(&b, "directions", "%s", dirs_arg);
    mg_bench_param(&b, "type", "%s", type_arg);
    mg_bench_param(&b, "commit_blocks", "%s", commit_arg);
    mg_bench_param(&b, "max_span", "%zu", o.max_span);
    mg_bench_param(&b, "check_only", "%d", o.check_only);
    mg_bench_param(&b, "hand", "memcpy per run; runs of <= 32 bytes with a fixed-size memcpy");
    mg_bench_param(&b, "commit_timing",
                   "mpi: MPI_Type_dup+MPI_Type_commit+MPI_Type_free of an uncommitted type; mpi-create: "
                   "constructor+MPI_Type_commit+MPI_Type_free; engine: mg_dt_from_mpi+mg_dt_free");
    if (mg_bench_begin(&b, "layout geometry A msize method direction") != 0) MPI_Abort(MPI_COMM_WORLD, 2);

    /* t_nrep1 (estimate mode) from a memcpy of the smallest size. */
    if (!o.check_only) {
        size_t smallest = o.sizes[0];
        for (int s = 0; s < o.nsizes; s++) smallest = o.sizes[s] < smallest ? o.sizes[s] : smallest;
        calib_ctx cc = {mg_alloc64(smallest), mg_alloc64(smallest), smallest};
        if (!cc.a || !cc.b) MPI_Abort(MPI_COMM_WORLD, 2);
        mg_fill_pattern(cc.a, smallest);
        memset(cc.b, 0, smallest);
        if (mg_bench_calibrate(&b, op_calib, &cc) != MPI_SUCCESS) MPI_Abort(MPI_COMM_WORLD, 2);
        free(cc.a);
        free(cc.b);
    }

    int nconfigs = 0, nskipped = 0;
    unit_info *units = calloc((size_t)o.ndescs, sizeof *units);
    if (!units) MPI_Abort(MPI_COMM_WORLD, 2);
    for (int s = 0; s < o.nsizes && !b.calibrate_only; s++) {
        size_t m = o.sizes[s];
        for (int a = 0; a < o.nA; a++) {
            long A = o.A[a];
            for (int i = 0; i < o.ndescs; i++) unit_of(&o.descs[i], A, &units[i]);
            for (int i = 0; i < o.ndescs; i++) {
                const desc *d = &o.descs[i];
                unit_info *u = &units[i];
                char cfg[256];
                if (u->rc) {
                    snprintf(cfg, sizeof cfg, "%s %s %ld %zu", d->label, geo_names[d->geo], A, m);
                    mg_bench_note(&b, "skip", cfg, "%s", u->err);
                    nskipped++;
                    continue;
                }
                /* n: the nearest multiple of the common unit of every description of
                 * the same geometry and element size, so that they all move the same
                 * data and compare directly. */
                long Lu = u->unit;
                int overflow = 0;
                for (int j = 0; j < o.ndescs; j++) {
                    const unit_info *v = &units[j];
                    if (v->rc || o.descs[j].geo != d->geo || v->unit_bytes * u->unit != u->unit_bytes * v->unit)
                        continue;
                    long g = (long)mg_gcd(Lu, v->unit);
                    if (Lu / g > INT_MAX / v->unit)
                        overflow = 1;
                    else
                        Lu = Lu / g * v->unit;
                }
                long long Lbytes = u->unit_bytes * (Lu / u->unit);
                long long units_n = overflow ? 0 : ((long long)m + Lbytes / 2) / Lbytes;
                if (units_n == 0 || units_n * Lu > INT_MAX) {
                    snprintf(cfg, sizeof cfg, "%s %s %ld %zu", d->label, geo_names[d->geo], A, m);
                    mg_bench_note(&b, "skip", cfg,
                                  "%s: m=%zu bytes is %s the %lld bytes of one unit of %ld elements that every "
                                  "description of the %s geometry can take",
                                  d->label, m, units_n == 0 ? "less than half" : "too many units of", Lbytes, Lu,
                                  geo_names[d->geo]);
                    nskipped++;
                    continue;
                }
                run_config(&b, &o, d, A, m, (long)(units_n * Lu), &nconfigs, &nskipped);
            }
        }
    }
    free(units);
    if (!b.calibrate_only && o.ncommit > 0) run_commit(&b, &o, &nconfigs);

    if (o.check_only && b.rank == 0)
        fprintf(stderr, "dtbench: %d configurations checked, %d skipped, %d method/direction checks failed\n", nconfigs,
                nskipped, b.errors);
    free(o.descs);
    return mg_bench_end(&b);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int status = run(argc, argv);
    MPI_Finalize();
    return status;
}
