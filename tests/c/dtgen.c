/* dtgen: random MPI datatypes with their own tree description and reference
 * typemap; see dtgen.h. Included by the tests (not a library source). */
#include "dtgen.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

/* ------------------------------------------------------------------ rng */

uint64_t dtg_next(dtg_rng *r)
{
    uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

void dtg_seed(dtg_rng *r, uint64_t seed, uint64_t stream)
{
    r->s = seed ^ (stream * 0xD1B54A32D192ED03ull);
    dtg_next(r);
    r->s ^= dtg_next(r);
}

long dtg_range(dtg_rng *r, long lo, long hi)
{
    if (hi <= lo) return lo;
    return lo + (long)(dtg_next(r) % (uint64_t)(hi - lo + 1));
}

int dtg_chance(dtg_rng *r, int percent) { return (int)(dtg_next(r) % 100) < percent; }

/* --------------------------------------------------------------- basics */

struct dtg_short_int_s {
    short a;
    int b;
};
struct dtg_float_int_s {
    float a;
    int b;
};
struct dtg_double_int_s {
    double a;
    int b;
};
struct dtg_long_int_s {
    long a;
    int b;
};
struct dtg_2int_s {
    int a;
    int b;
};
struct dtg_long_double_int_s {
    long double a;
    int b;
};

dtg_basic dtg_basics[40];
int dtg_nbasics;
static int basic_weight[40];
static int basic_weight_sum;

static void add_basic(const char *name, MPI_Datatype t, int ncomp, MPI_Aint off0, MPI_Aint len0, MPI_Aint off1,
                      MPI_Aint len1, MPI_Aint extent, int align, int weight)
{
    dtg_basic *b = &dtg_basics[dtg_nbasics];
    b->ld[0] = t == MPI_LONG_DOUBLE || t == MPI_LONG_DOUBLE_INT;
    b->ld[1] = 0;
    b->name = name;
    b->type = t;
    b->ncomp = ncomp;
    b->off[0] = off0;
    b->len[0] = len0;
    b->off[1] = off1;
    b->len[1] = len1;
    b->extent = extent;
    b->align = align;
    b->enabled = 1;
    basic_weight[dtg_nbasics] = weight;
    dtg_nbasics++;
}

#define SIMPLE(nm, T, ctype, w) add_basic(nm, T, 1, 0, sizeof(ctype), 0, 0, sizeof(ctype), _Alignof(ctype), w)
#define PAIR(nm, T, st, w)                                                                                        \
    add_basic(nm, T, 2, offsetof(st, a), sizeof(((st *)0)->a), offsetof(st, b), sizeof(((st *)0)->b), sizeof(st), \
              _Alignof(st), w)

void dtg_init_basics(void)
{
    if (dtg_nbasics) return;
    SIMPLE("char", MPI_CHAR, char, 6);
    SIMPLE("signed_char", MPI_SIGNED_CHAR, signed char, 1);
    SIMPLE("unsigned_char", MPI_UNSIGNED_CHAR, unsigned char, 1);
    SIMPLE("byte", MPI_BYTE, unsigned char, 2);
    SIMPLE("short", MPI_SHORT, short, 4);
    SIMPLE("unsigned_short", MPI_UNSIGNED_SHORT, unsigned short, 1);
    SIMPLE("int", MPI_INT, int, 8);
    SIMPLE("unsigned", MPI_UNSIGNED, unsigned, 1);
    SIMPLE("long", MPI_LONG, long, 1);
    SIMPLE("unsigned_long", MPI_UNSIGNED_LONG, unsigned long, 1);
    SIMPLE("long_long", MPI_LONG_LONG, long long, 1);
    SIMPLE("float", MPI_FLOAT, float, 2);
    SIMPLE("double", MPI_DOUBLE, double, 8);
    SIMPLE("long_double", MPI_LONG_DOUBLE, long double, 3);
    SIMPLE("wchar", MPI_WCHAR, wchar_t, 1);
    SIMPLE("c_bool", MPI_C_BOOL, _Bool, 1);
    SIMPLE("int8_t", MPI_INT8_T, int8_t, 1);
    SIMPLE("int16_t", MPI_INT16_T, int16_t, 1);
    SIMPLE("int32_t", MPI_INT32_T, int32_t, 1);
    SIMPLE("int64_t", MPI_INT64_T, int64_t, 1);
    SIMPLE("uint8_t", MPI_UINT8_T, uint8_t, 1);
    SIMPLE("uint16_t", MPI_UINT16_T, uint16_t, 1);
    SIMPLE("uint32_t", MPI_UINT32_T, uint32_t, 1);
    SIMPLE("uint64_t", MPI_UINT64_T, uint64_t, 1);
    SIMPLE("unsigned_long_long", MPI_UNSIGNED_LONG_LONG, unsigned long long, 1);
    SIMPLE("aint", MPI_AINT, MPI_Aint, 1);
    SIMPLE("offset", MPI_OFFSET, MPI_Offset, 1);
    SIMPLE("count", MPI_COUNT, MPI_Count, 1);
    PAIR("short_int", MPI_SHORT_INT, struct dtg_short_int_s, 3);
    PAIR("float_int", MPI_FLOAT_INT, struct dtg_float_int_s, 3);
    PAIR("double_int", MPI_DOUBLE_INT, struct dtg_double_int_s, 3);
    PAIR("long_int", MPI_LONG_INT, struct dtg_long_int_s, 3);
    PAIR("2int", MPI_2INT, struct dtg_2int_s, 3);
    PAIR("long_double_int", MPI_LONG_DOUBLE_INT, struct dtg_long_double_int_s, 3);
    for (int i = 0; i < dtg_nbasics; i++) basic_weight_sum += basic_weight[i];
}

static int is_pair(int b) { return dtg_basics[b].ncomp == 2; }

void dtg_probe_basics(int verbose)
{
    dtg_init_basics();
    dtg_rng r;
    dtg_seed(&r, 12345, 1);
    for (int i = 0; i < dtg_nbasics; i++) {
        dtg_basic *b = &dtg_basics[i];
        const int n = 3;
        unsigned char in[3 * 64], out[3 * 64 + 64], ref[3 * 64];
        for (size_t k = 0; k < sizeof in; k++) in[k] = (unsigned char)dtg_next(&r);
        int pos = 0, rc = MPI_Pack(in, n, b->type, out, (int)sizeof out, &pos, MPI_COMM_WORLD);
        MPI_Count sz = -1, lb = -1, ext = -1;
        MPI_Type_size_x(b->type, &sz);
        MPI_Type_get_extent_x(b->type, &lb, &ext);
        size_t rp = 0;
        for (int e = 0; e < n; e++)
            for (int c = 0; c < b->ncomp; c++) {
                memcpy(ref + rp, in + e * b->extent + b->off[c], (size_t)b->len[c]);
                rp += (size_t)b->len[c];
            }
        const char *why = NULL;
        if (rc != MPI_SUCCESS)
            why = "MPI_Pack failed";
        else if (sz != (MPI_Count)(rp / n))
            why = "MPI_Type_size differs";
        else if (lb != 0 || ext != b->extent)
            why = "lb/extent differ";
        else if ((size_t)pos != rp)
            why = "packed size differs";
        else {
            /* value bytes only: padding of a long double is not data */
            size_t q = 0;
            for (int e = 0; e < n && !why; e++)
                for (int c = 0; c < b->ncomp && !why; c++) {
                    size_t cmp = b->ld[c] ? DTG_LDBL_VALUE_BYTES : (size_t)b->len[c];
                    if (memcmp(ref + q, out + q, cmp) != 0) why = "packed bytes differ";
                    q += (size_t)b->len[c];
                }
        }
        if (why) {
            b->enabled = 0;
            printf("note: this stack's %s for MPI_%s disagrees with the C layout (size %lld lb %lld "
                   "extent %lld, expected size %zu lb 0 extent %ld); %s is not generated on this stack\n",
                   why, b->name, (long long)sz, (long long)lb, (long long)ext, rp / n, (long)b->extent, b->name);
        } else if (verbose) {
            printf("basic %-16s size %lld extent %ld align %d ok\n", b->name, (long long)sz, (long)b->extent, b->align);
        }
    }
}

/* --------------------------------------------------------------- naming */

const char *dtg_kind_name(int kind)
{
    static const char *names[DTG_NKINDS] = {
        "basic",          "contig", "vector",   "hvector", "indexed", "hindexed", "indexed_block",
        "hindexed_block", "struct", "subarray", "darray",  "resized", "dup"};
    return kind >= 0 && kind < DTG_NKINDS ? names[kind] : "?";
}

/* ------------------------------------------------------------- printing */

typedef struct {
    char *s;
    size_t n, cap;
} sbuf;

static void sb_put(sbuf *b, const char *fmt, ...)
{
    va_list ap;
    for (;;) {
        size_t room = b->cap - b->n;
        va_start(ap, fmt);
        int k = vsnprintf(b->s ? b->s + b->n : NULL, b->s ? room : 0, fmt, ap);
        va_end(ap);
        if (k < 0) return;
        if (b->s && (size_t)k < room) {
            b->n += (size_t)k;
            return;
        }
        size_t nc = b->cap ? b->cap * 2 : 256;
        while (nc < b->n + (size_t)k + 1) nc *= 2;
        char *ns = realloc(b->s, nc);
        if (!ns) return;
        b->s = ns;
        b->cap = nc;
    }
}

static void print_list_int(sbuf *b, const int *v, int n)
{
    sb_put(b, "[");
    for (int i = 0; i < n; i++) sb_put(b, i ? ", %d" : "%d", v[i]);
    sb_put(b, "]");
}

static void print_list_aint(sbuf *b, const MPI_Aint *v, int n)
{
    sb_put(b, "[");
    for (int i = 0; i < n; i++) sb_put(b, i ? ", %ld" : "%ld", (long)v[i]);
    sb_put(b, "]");
}

static void print_node(sbuf *b, const dtg_node *n)
{
    switch (n->kind) {
    case DTG_BASIC: sb_put(b, "%s", dtg_basics[n->basic].name); return;
    case DTG_CONTIG: sb_put(b, "contig(count=%d, ", n->count); break;
    case DTG_VECTOR:
    case DTG_HVECTOR:
        sb_put(b, "%s(count=%d, block=%d, stride=%ld, ", dtg_kind_name(n->kind), n->count, n->block, (long)n->stride);
        break;
    case DTG_INDEXED:
    case DTG_HINDEXED:
        sb_put(b, "%s(blocks=", dtg_kind_name(n->kind));
        print_list_int(b, n->blens, n->count);
        sb_put(b, ", displs=");
        print_list_aint(b, n->displs, n->count);
        sb_put(b, ", ");
        break;
    case DTG_INDEXED_BLOCK:
    case DTG_HINDEXED_BLOCK:
        sb_put(b, "%s(block=%d, displs=", dtg_kind_name(n->kind), n->block);
        print_list_aint(b, n->displs, n->count);
        sb_put(b, ", ");
        break;
    case DTG_STRUCT:
        sb_put(b, "struct(blocks=");
        print_list_int(b, n->blens, n->count);
        sb_put(b, ", displs=");
        print_list_aint(b, n->displs, n->count);
        sb_put(b, ", types=[");
        for (int i = 0; i < n->count; i++) {
            if (i) sb_put(b, ", ");
            print_node(b, n->kids[i]);
        }
        sb_put(b, "])");
        return;
    case DTG_SUBARRAY:
        sb_put(b, "subarray(sizes=");
        print_list_int(b, n->sizes, n->ndims);
        sb_put(b, ", subsizes=");
        print_list_int(b, n->subsizes, n->ndims);
        sb_put(b, ", starts=");
        print_list_int(b, n->starts, n->ndims);
        sb_put(b, ", order=%s, ", n->order == MPI_ORDER_C ? "c" : "fortran");
        break;
    case DTG_DARRAY:
        sb_put(b, "darray(size=%d, rank=%d, gsizes=", n->psize, n->prank);
        print_list_int(b, n->sizes, n->ndims);
        sb_put(b, ", distribs=[");
        for (int i = 0; i < n->ndims; i++)
            sb_put(b, "%s%s", i ? ", " : "",
                   n->distribs[i] == MPI_DISTRIBUTE_BLOCK    ? "block"
                   : n->distribs[i] == MPI_DISTRIBUTE_CYCLIC ? "cyclic"
                                                             : "none");
        sb_put(b, "], dargs=[");
        for (int i = 0; i < n->ndims; i++) {
            if (i) sb_put(b, ", ");
            if (n->dargs[i] == MPI_DISTRIBUTE_DFLT_DARG)
                sb_put(b, "default");
            else
                sb_put(b, "%d", n->dargs[i]);
        }
        sb_put(b, "], psizes=");
        print_list_int(b, n->psizes, n->ndims);
        sb_put(b, ", order=%s, ", n->order == MPI_ORDER_C ? "c" : "fortran");
        break;
    case DTG_RESIZED: sb_put(b, "resized(lb=%ld, extent=%ld, ", (long)n->rlb, (long)n->rext); break;
    case DTG_DUP: sb_put(b, "dup("); break;
    }
    print_node(b, n->kids[0]);
    sb_put(b, ")");
}

char *dtg_print(const dtg_node *n)
{
    sbuf b = {0};
    print_node(&b, n);
    if (!b.s) {
        b.s = malloc(1);
        if (b.s) b.s[0] = 0;
    }
    return b.s;
}

/* ---------------------------------------------------------- tree memory */

void dtg_free(dtg_node *n)
{
    if (!n) return;
    for (int i = 0; i < n->nkids; i++) dtg_free(n->kids[i]);
    if (n->kind != DTG_BASIC && n->mpi != MPI_DATATYPE_NULL) MPI_Type_free(&n->mpi);
    free(n->kids);
    free(n->blens);
    free(n->displs);
    free(n->map);
    free(n);
}

int dtg_any_deviation(const dtg_node *n)
{
    if (n->deviates) return 1;
    for (int i = 0; i < n->nkids; i++)
        if (dtg_any_deviation(n->kids[i])) return 1;
    return 0;
}

static dtg_node *new_node(int kind, int nkids)
{
    dtg_node *n = calloc(1, sizeof *n);
    if (!n) abort();
    n->kind = kind;
    n->mpi = MPI_DATATYPE_NULL;
    n->nkids = nkids;
    if (nkids) {
        n->kids = calloc((size_t)nkids, sizeof *n->kids);
        if (!n->kids) abort();
    }
    return n;
}

static void *xcalloc(size_t n, size_t sz)
{
    void *p = calloc(n ? n : 1, sz);
    if (!p) abort();
    return p;
}

/* ------------------------------------------------- replicas and bounds */

/* A node's typemap is the concatenation, in typemap order, of copies of its
 * children's typemaps, each shifted by a byte displacement. */
typedef struct {
    int kid;
    MPI_Aint shift;
} rep;

typedef struct {
    rep *r;
    size_t n, cap;
    int overflow;
} reps;

static void radd(reps *R, int kid, MPI_Aint shift)
{
    if (R->overflow) return;
    if (R->n >= DTG_MAX_REPS) {
        R->overflow = 1;
        return;
    }
    if (R->n == R->cap) {
        R->cap = R->cap ? R->cap * 2 : 16;
        R->r = realloc(R->r, R->cap * sizeof *R->r);
        if (!R->r) abort();
    }
    R->r[R->n].kid = kid;
    R->r[R->n].shift = shift;
    R->n++;
}

static MPI_Aint ext_of(const dtg_node *k) { return k->ub - k->lb; }

/* Owned global indices of one darray dimension, in increasing order. */
static int darray_dim(int gsize, int distrib, int darg, int psize, int coord, int *out)
{
    int n = 0;
    if (distrib == MPI_DISTRIBUTE_NONE) {
        for (int i = 0; i < gsize; i++) out[n++] = i;
    } else if (distrib == MPI_DISTRIBUTE_BLOCK) {
        int b = darg == MPI_DISTRIBUTE_DFLT_DARG ? (gsize + psize - 1) / psize : darg;
        for (int i = coord * b; i < (coord + 1) * b && i < gsize; i++) out[n++] = i;
    } else {
        int b = darg == MPI_DISTRIBUTE_DFLT_DARG ? 1 : darg;
        for (int i = 0; i < gsize; i++)
            if ((i / b) % psize == coord) out[n++] = i;
    }
    return n;
}

/* Subarray and darray: the elements in typemap order (C: last index fastest;
 * Fortran: first index fastest), each at its linear index in the whole array
 * times the extent of the old type. */
static void array_reps(const dtg_node *n, reps *R)
{
    int idx[3][64], cnt[3];
    MPI_Aint mult[3];
    int nd = n->ndims;
    int coord[3] = {0, 0, 0};
    if (n->kind == DTG_DARRAY) {
        int r = n->prank; /* process grid is row-major for both orders */
        for (int d = nd - 1; d >= 0; d--) {
            coord[d] = r % n->psizes[d];
            r /= n->psizes[d];
        }
    }
    for (int d = 0; d < nd; d++) {
        if (n->kind == DTG_SUBARRAY) {
            cnt[d] = n->subsizes[d];
            for (int i = 0; i < cnt[d]; i++) idx[d][i] = n->starts[d] + i;
        } else {
            cnt[d] = darray_dim(n->sizes[d], n->distribs[d], n->dargs[d], n->psizes[d], coord[d], idx[d]);
        }
        if (cnt[d] == 0) return;
    }
    if (n->order == MPI_ORDER_C) {
        mult[nd - 1] = 1;
        for (int d = nd - 2; d >= 0; d--) mult[d] = mult[d + 1] * n->sizes[d + 1];
    } else {
        mult[0] = 1;
        for (int d = 1; d < nd; d++) mult[d] = mult[d - 1] * n->sizes[d - 1];
    }
    MPI_Aint E = ext_of(n->kids[0]);
    int pos[3] = {0, 0, 0};
    for (;;) {
        MPI_Aint lin = 0;
        for (int d = 0; d < nd; d++) lin += idx[d][pos[d]] * mult[d];
        radd(R, 0, lin * E);
        if (R->overflow) return;
        /* odometer: fastest dimension last (C) or first (Fortran) */
        int d = n->order == MPI_ORDER_C ? nd - 1 : 0;
        for (;;) {
            if (++pos[d] < cnt[d]) break;
            pos[d] = 0;
            d += n->order == MPI_ORDER_C ? -1 : 1;
            if (d < 0 || d >= nd) return;
        }
    }
}

static void build_reps(const dtg_node *n, reps *R)
{
    switch (n->kind) {
    case DTG_CONTIG: {
        MPI_Aint E = ext_of(n->kids[0]);
        for (int i = 0; i < n->count; i++) radd(R, 0, i * E);
        break;
    }
    case DTG_VECTOR:
    case DTG_HVECTOR: {
        MPI_Aint E = ext_of(n->kids[0]);
        MPI_Aint s = n->kind == DTG_VECTOR ? n->stride * E : n->stride;
        for (int i = 0; i < n->count; i++)
            for (int j = 0; j < n->block; j++) radd(R, 0, i * s + j * E);
        break;
    }
    case DTG_INDEXED:
    case DTG_HINDEXED: {
        MPI_Aint E = ext_of(n->kids[0]);
        for (int i = 0; i < n->count; i++) {
            MPI_Aint d = n->kind == DTG_INDEXED ? n->displs[i] * E : n->displs[i];
            for (int j = 0; j < n->blens[i]; j++) radd(R, 0, d + j * E);
        }
        break;
    }
    case DTG_INDEXED_BLOCK:
    case DTG_HINDEXED_BLOCK: {
        MPI_Aint E = ext_of(n->kids[0]);
        for (int i = 0; i < n->count; i++) {
            MPI_Aint d = n->kind == DTG_INDEXED_BLOCK ? n->displs[i] * E : n->displs[i];
            for (int j = 0; j < n->block; j++) radd(R, 0, d + j * E);
        }
        break;
    }
    case DTG_STRUCT:
        for (int i = 0; i < n->count; i++) {
            MPI_Aint E = ext_of(n->kids[i]);
            for (int j = 0; j < n->blens[i]; j++) radd(R, i, n->displs[i] + j * E);
        }
        break;
    case DTG_SUBARRAY:
    case DTG_DARRAY: array_reps(n, R); break;
    case DTG_RESIZED:
    case DTG_DUP: radd(R, 0, 0); break;
    }
}

static MPI_Aint round_up(MPI_Aint x, MPI_Aint a)
{
    if (a <= 1) return x;
    MPI_Aint r = x % a;
    return r ? x + (a - r) : x;
}

static MPI_Aint iabs_(MPI_Aint x) { return x < 0 ? -x : x; }

static void add_note(dtg_gen *g, const char *category, const char *example)
{
    for (int i = 0; i < g->nnotes; i++)
        if (strcmp(g->notes[i].category, category) == 0) {
            g->notes[i].count++;
            return;
        }
    if (g->nnotes == (int)(sizeof g->notes / sizeof g->notes[0])) return;
    dtg_note *nt = &g->notes[g->nnotes++];
    snprintf(nt->category, sizeof nt->category, "%s", category);
    snprintf(nt->example, sizeof nt->example, "%s", example);
    nt->count = 1;
}

static void set_err(dtg_gen *g, const dtg_node *n, const char *fmt, ...)
{
    g->errors++;
    if (g->err[0]) return;
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    char *s = dtg_print(n);
    snprintf(g->err, sizeof g->err, "%.200s: %.300s", msg, s ? s : "?");
    free(s);
}

/* Create the MPI type of n from its parameters and its children's types. */
static int create_mpi(dtg_node *n)
{
    MPI_Datatype k0 = n->nkids ? n->kids[0]->mpi : MPI_DATATYPE_NULL;
    int rc = MPI_ERR_OTHER;
    int *ids = NULL;
    if (n->kind == DTG_INDEXED || n->kind == DTG_INDEXED_BLOCK) {
        ids = xcalloc((size_t)n->count, sizeof *ids);
        for (int i = 0; i < n->count; i++) ids[i] = (int)n->displs[i];
    }
    switch (n->kind) {
    case DTG_CONTIG: rc = MPI_Type_contiguous(n->count, k0, &n->mpi); break;
    case DTG_VECTOR: rc = MPI_Type_vector(n->count, n->block, (int)n->stride, k0, &n->mpi); break;
    case DTG_HVECTOR: rc = MPI_Type_create_hvector(n->count, n->block, n->stride, k0, &n->mpi); break;
    case DTG_INDEXED: rc = MPI_Type_indexed(n->count, n->blens, ids, k0, &n->mpi); break;
    case DTG_HINDEXED: rc = MPI_Type_create_hindexed(n->count, n->blens, n->displs, k0, &n->mpi); break;
    case DTG_INDEXED_BLOCK: rc = MPI_Type_create_indexed_block(n->count, n->block, ids, k0, &n->mpi); break;
    case DTG_HINDEXED_BLOCK: rc = MPI_Type_create_hindexed_block(n->count, n->block, n->displs, k0, &n->mpi); break;
    case DTG_STRUCT: {
        MPI_Datatype *ts = xcalloc((size_t)n->count, sizeof *ts);
        for (int i = 0; i < n->count; i++) ts[i] = n->kids[i]->mpi;
        rc = MPI_Type_create_struct(n->count, n->blens, n->displs, ts, &n->mpi);
        free(ts);
        break;
    }
    case DTG_SUBARRAY:
        rc = MPI_Type_create_subarray(n->ndims, n->sizes, n->subsizes, n->starts, n->order, k0, &n->mpi);
        break;
    case DTG_DARRAY:
        rc = MPI_Type_create_darray(n->psize, n->prank, n->ndims, n->sizes, n->distribs, n->dargs, n->psizes, n->order,
                                    k0, &n->mpi);
        break;
    case DTG_RESIZED: rc = MPI_Type_create_resized(k0, n->rlb, n->rext, &n->mpi); break;
    case DTG_DUP: rc = MPI_Type_dup(k0, &n->mpi); break;
    }
    free(ids);
    if (rc != MPI_SUCCESS) n->mpi = MPI_DATATYPE_NULL;
    return rc;
}

/* Why the library's lb/ub of n differ from the standard's. v3: bounds of the
 * members taken in order, the extent rounded up to the alignment after each
 * (what Open MPI does; order-dependent). */
static const char *classify(const dtg_node *n, MPI_Aint b_lb, MPI_Aint b_ub, int any_rep, int v3)
{
    MPI_Aint mlb = n->mpi_lb, mub = n->mpi_lb + n->mpi_ext;
    int v1 = any_rep && mlb == b_lb && mub == b_ub;
    int v2 = any_rep && mlb == b_lb && mub == b_lb + round_up(b_ub - b_lb, n->align);
    if (n->empty && !n->has_mk) return "empty typemap (lb/ub not defined by the standard)";
    if (n->empty) return "zero-size type with lb/ub markers (resized members)";
    if (n->has_mk && (v1 || v2)) return "lb/ub markers of resized members not honoured (bounds of all members used)";
    if (v1) return "extent from members' lb/ub without alignment epsilon (standard: typemap + epsilon)";
    if (v2) return "extent from members' lb/ub incl. their padding, then aligned (standard: typemap + epsilon)";
    if (v3)
        return "extent rounded to the alignment after each block in turn (order-dependent; standard: typemap + "
               "epsilon)";
    return "other";
}

static int zero_block_of_derived(const dtg_node *k)
{
    while (k->kind == DTG_RESIZED || k->kind == DTG_DUP) k = k->kids[0];
    return (k->kind == DTG_VECTOR || k->kind == DTG_HVECTOR || k->kind == DTG_INDEXED_BLOCK ||
            k->kind == DTG_HINDEXED_BLOCK) &&
           k->block == 0 && k->count > 0 && k->kids[0]->kind != DTG_BASIC;
}

/* Compute everything about n from its children and parameters, create its MPI
 * type and compare with MPI. Returns 0, 1 (too large: rejected, no MPI type
 * created) or -1 (internal error, recorded in g). */
static int finish(dtg_gen *g, dtg_node *n)
{
    if (n->kind == DTG_BASIC) {
        const dtg_basic *b = &dtg_basics[n->basic];
        n->mpi = b->type;
        n->nmap = (size_t)b->ncomp;
        n->map = xcalloc(n->nmap, sizeof *n->map);
        n->size = 0;
        for (int c = 0; c < b->ncomp; c++) {
            n->map[c].off = b->off[c];
            n->map[c].len = b->len[c];
            n->map[c].ld = b->ld[c];
            n->size += b->len[c];
        }
        n->empty = 0;
        n->has_mk = 0;
        n->align = b->align;
        n->tlb = b->off[0];
        n->tub = b->off[b->ncomp - 1] + b->len[b->ncomp - 1];
        n->std_lb = 0;
        n->std_ub = b->extent;
    } else {
        if (n->kind == DTG_STRUCT && g->avoid_zero_block_member)
            for (int i = 0; i < n->count; i++)
                if (n->blens[i] > 0 && zero_block_of_derived(n->kids[i])) {
                    if (!g->avoided++) {
                        char *s = dtg_print(n);
                        snprintf(g->avoided_example, sizeof g->avoided_example, "%.500s", s ? s : "?");
                        free(s);
                    }
                    return 1;
                }
        if ((n->kind == DTG_VECTOR || n->kind == DTG_HVECTOR) && g->avoid_stride_minus1 && n->count > 1 &&
            n->block > 0 && (n->kind == DTG_HVECTOR ? n->stride : n->stride * ext_of(n->kids[0])) == -1) {
            if (!g->avoided_m1++) {
                char *s = dtg_print(n);
                snprintf(g->avoided_m1_example, sizeof g->avoided_m1_example, "%.500s", s ? s : "?");
                free(s);
            }
            return 1;
        }
        if (n->kind == DTG_INDEXED && g->avoid_indexed_zero_extent && n->count >= 3 && ext_of(n->kids[0]) == 0) {
            int unequal = 0;
            for (int i = 1; i < n->count; i++) unequal |= n->blens[i] != n->blens[0];
            if (unequal) {
                if (!g->avoided_ie++) {
                    char *s = dtg_print(n);
                    snprintf(g->avoided_ie_example, sizeof g->avoided_ie_example, "%.500s", s ? s : "?");
                    free(s);
                }
                return 1;
            }
        }
        reps R = {0};
        build_reps(n, &R);
        if (R.overflow) {
            free(R.r);
            return 1;
        }
        MPI_Count size = 0;
        size_t nmap = 0;
        int empty = 1, has_mk = 0, align = 1, any_rep = R.n > 0;
        MPI_Aint tlb = 0, tub = 0, mk_lb = 0, mk_ub = 0, b_lb = 0, b_ub = 0, v3_lb = 0, v3_ub = 0;
        int v3_align = 1;
        for (size_t i = 0; i < R.n; i++) {
            const dtg_node *k = n->kids[R.r[i].kid];
            MPI_Aint s = R.r[i].shift;
            size += k->size;
            nmap += k->nmap;
            if (!k->empty) {
                if (empty || s + k->tlb < tlb) tlb = s + k->tlb;
                if (empty || s + k->tub > tub) tub = s + k->tub;
                empty = 0;
                if (k->align > align) align = k->align;
            }
            if (k->has_mk) {
                if (!has_mk || s + k->lb < mk_lb) mk_lb = s + k->lb;
                if (!has_mk || s + k->ub > mk_ub) mk_ub = s + k->ub;
                has_mk = 1;
            }
            MPI_Aint lo = k->lb < k->ub ? k->lb : k->ub, hi = k->lb < k->ub ? k->ub : k->lb;
            if (i == 0 || s + lo < b_lb) b_lb = s + lo;
            if (i == 0 || s + hi > b_ub) b_ub = s + hi;
            if (k->align > v3_align) v3_align = k->align;
            if (i == 0 || s + lo < v3_lb) v3_lb = s + lo;
            if (i == 0 || s + hi > v3_ub) v3_ub = s + hi;
            v3_ub = v3_lb + round_up(v3_ub - v3_lb, v3_align);
        }
        if (size > DTG_MAX_ELEM_BYTES || nmap > DTG_MAX_ELEM_COMPS ||
            (!empty &&
             (tub - tlb > DTG_MAX_ELEM_SPAN || iabs_(tlb) > DTG_MAX_ABS_BOUND || iabs_(tub) > DTG_MAX_ABS_BOUND))) {
            free(R.r);
            return 1;
        }
        n->size = size;
        n->nmap = nmap;
        n->empty = empty;
        n->align = align;
        n->tlb = tlb;
        n->tub = tub;
        if (n->kind == DTG_RESIZED) {
            n->has_mk = 1;
            n->std_lb = n->rlb;
            n->std_ub = n->rlb + n->rext;
        } else if (n->kind == DTG_SUBARRAY || n->kind == DTG_DARRAY) {
            /* defined as resized to the whole array: lb 0, extent prod(sizes) * ex */
            MPI_Aint total = 1;
            for (int d = 0; d < n->ndims; d++) total *= n->sizes[d];
            n->has_mk = 1;
            n->std_lb = 0;
            n->std_ub = total * ext_of(n->kids[0]);
        } else if (n->kind == DTG_DUP) {
            n->has_mk = n->kids[0]->has_mk;
            n->std_lb = n->kids[0]->lb;
            n->std_ub = n->kids[0]->ub;
        } else if (has_mk) {
            n->has_mk = 1;
            n->std_lb = mk_lb;
            n->std_ub = mk_ub;
        } else if (!empty) {
            n->std_lb = tlb;
            n->std_ub = tlb + round_up(tub - tlb, align);
        } else {
            n->std_lb = n->std_ub = 0;
        }
        if (iabs_(n->std_lb) > DTG_MAX_ABS_BOUND || iabs_(n->std_ub) > DTG_MAX_ABS_BOUND) {
            free(R.r);
            return 1;
        }
        int rc = create_mpi(n);
        if (rc != MPI_SUCCESS && n->kind == DTG_DARRAY && n->kids[0]->size == 0) {
            if (!g->refused++) {
                char *s = dtg_print(n);
                snprintf(g->refused_example, sizeof g->refused_example, "%.500s", s ? s : "?");
                free(s);
            }
            free(R.r);
            return 1;
        }
        if (rc != MPI_SUCCESS) {
            char es[MPI_MAX_ERROR_STRING] = "";
            int el = 0;
            MPI_Error_string(rc, es, &el);
            set_err(g, n, "MPI constructor failed (%s)", es);
            free(R.r);
            return -1;
        }
        n->map = xcalloc(nmap, sizeof *n->map);
        size_t p = 0;
        for (size_t i = 0; i < R.n; i++) {
            const dtg_node *k = n->kids[R.r[i].kid];
            for (size_t c = 0; c < k->nmap; c++) {
                n->map[p].off = k->map[c].off + R.r[i].shift;
                n->map[p].len = k->map[c].len;
                n->map[p].ld = k->map[c].ld;
                p++;
            }
        }
        free(R.r);
        /* Compare with MPI (below) using b_lb/b_ub for the classification. */
        n->lb = n->std_lb;
        n->ub = n->std_ub;
        MPI_Count sz = -1, mlb = 0, mext = 0, tl = 0, te = 0;
        MPI_Type_size_x(n->mpi, &sz);
        MPI_Type_get_extent_x(n->mpi, &mlb, &mext);
        MPI_Type_get_true_extent_x(n->mpi, &tl, &te);
        n->mpi_lb = (MPI_Aint)mlb;
        n->mpi_ext = (MPI_Aint)mext;
        if (sz != n->size) {
            set_err(g, n, "MPI_Type_size_x %lld != reference size %lld", (long long)sz, (long long)n->size);
            return -1;
        }
        if (mlb != n->std_lb || mext != n->std_ub - n->std_lb) {
            n->deviates = 1;
            g->deviating_nodes++;
            char cat[160], ex[512];
            snprintf(cat, sizeof cat, "%s: %s", dtg_kind_name(n->kind),
                     classify(n, b_lb, b_ub, any_rep, any_rep && mlb == v3_lb && mlb + mext == v3_ub));
            char *s = dtg_print(n);
            snprintf(ex, sizeof ex, "%.380s: MPI lb %lld extent %lld, standard lb %ld extent %ld", s ? s : "?",
                     (long long)mlb, (long long)mext, (long)n->std_lb, (long)(n->std_ub - n->std_lb));
            free(s);
            add_note(g, cat, ex);
            n->lb = n->mpi_lb;
            n->ub = n->mpi_lb + n->mpi_ext;
        }
        if (!n->empty && (tl != n->tlb || te != n->tub - n->tlb)) {
            n->true_deviates = 1;
            g->true_deviating_nodes++;
            char cat[160], ex[512];
            snprintf(cat, sizeof cat, "%s: true lb/extent differ from the data's bounds", dtg_kind_name(n->kind));
            char *s = dtg_print(n);
            snprintf(ex, sizeof ex, "%.380s: MPI true lb %lld extent %lld, data %ld..%ld", s ? s : "?", (long long)tl,
                     (long long)te, (long)n->tlb, (long)n->tub);
            free(s);
            add_note(g, cat, ex);
        }
        return 0;
    }
    /* basic: compare too (validates the table) */
    MPI_Count sz = -1, mlb = 0, mext = 0;
    MPI_Type_size_x(n->mpi, &sz);
    MPI_Type_get_extent_x(n->mpi, &mlb, &mext);
    n->mpi_lb = (MPI_Aint)mlb;
    n->mpi_ext = (MPI_Aint)mext;
    n->lb = n->std_lb;
    n->ub = n->std_ub;
    if (sz != n->size || mlb != n->std_lb || mext != n->std_ub - n->std_lb) {
        set_err(g, n, "basic type size/lb/extent %lld/%lld/%lld differ from the C layout", (long long)sz,
                (long long)mlb, (long long)mext);
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------ generator */

static int pick_basic(dtg_gen *g)
{
    for (;;) {
        long w = dtg_range(&g->rng, 0, basic_weight_sum - 1);
        int i = 0;
        while (w >= basic_weight[i]) w -= basic_weight[i++];
        if (dtg_basics[i].enabled) return i;
    }
}

static int gen_count(dtg_gen *g)
{
    int r = (int)dtg_range(&g->rng, 0, 99);
    if (r < 5) return 0;
    if (r < 78) return (int)dtg_range(&g->rng, 1, 4);
    if (r < 95) return (int)dtg_range(&g->rng, 5, 40);
    return (int)dtg_range(&g->rng, 50, 4000);
}

static int gen_block(dtg_gen *g)
{
    int r = (int)dtg_range(&g->rng, 0, 99);
    if (r < 7) return 0;
    if (r < 96) return (int)dtg_range(&g->rng, 1, 4);
    return (int)dtg_range(&g->rng, 10, 100);
}

static dtg_node *gen(dtg_gen *g, int depth, int top);

static dtg_node *gen_leaf(dtg_gen *g)
{
    dtg_node *n = new_node(DTG_BASIC, 0);
    n->basic = pick_basic(g);
    g->nodes++;
    if (finish(g, n) != 0) {
        dtg_free(n);
        return NULL;
    }
    return n;
}

/* A child for subarray/darray: positive extent. */
static dtg_node *gen_array_kid(dtg_gen *g, int depth)
{
    for (int t = 0; t < 3; t++) {
        dtg_node *k = gen(g, depth, 0);
        if (!k) return NULL;
        if (ext_of(k) > 0 && ext_of(k) <= 4096) return k;
        dtg_free(k);
    }
    return gen_leaf(g);
}

/* Byte displacements laid out one after another with gaps, sometimes shuffled,
 * or random (negative, overlapping). */
static void gen_byte_displs(dtg_gen *g, MPI_Aint *d, int n, const int *blens, int block, const dtg_node *const *kids,
                            const dtg_node *kid)
{
    int mode = (int)dtg_range(&g->rng, 0, 99);
    MPI_Aint pos = dtg_chance(&g->rng, 20) ? -dtg_range(&g->rng, 1, 64) : 0;
    for (int i = 0; i < n; i++) {
        const dtg_node *k = kids ? kids[i] : kid;
        MPI_Aint E = ext_of(k);
        int bl = blens ? blens[i] : block;
        if (mode < 55) {
            d[i] = pos;
            MPI_Aint span = bl * (E > 0 ? E : 1);
            pos += span + (dtg_chance(&g->rng, 50) ? 0 : dtg_range(&g->rng, 1, 12));
            if (dtg_chance(&g->rng, 30)) pos = round_up(pos, k->align);
        } else if (mode < 80) {
            d[i] = dtg_range(&g->rng, -96, 128);
        } else {
            d[i] = pos;
            pos += bl * (E > 0 ? E : 1) + dtg_range(&g->rng, 0, 8);
        }
    }
    if (mode >= 80)
        for (int i = n - 1; i > 0; i--) {
            int j = (int)dtg_range(&g->rng, 0, i);
            MPI_Aint t = d[i];
            d[i] = d[j];
            d[j] = t;
        }
}

static void gen_elem_displs(dtg_gen *g, MPI_Aint *d, int n, const int *blens, int block)
{
    int mode = (int)dtg_range(&g->rng, 0, 99);
    long pos = dtg_chance(&g->rng, 20) ? -dtg_range(&g->rng, 1, 8) : 0;
    for (int i = 0; i < n; i++) {
        int bl = blens ? blens[i] : block;
        if (mode < 60) {
            d[i] = pos;
            pos += bl + (dtg_chance(&g->rng, 40) ? 0 : dtg_range(&g->rng, 1, 3));
        } else {
            d[i] = dtg_range(&g->rng, -10, 12);
        }
    }
}

static dtg_node *gen_inner(dtg_gen *g, int kind, int depth)
{
    dtg_node *n = NULL;
    dtg_rng *r = &g->rng;
    switch (kind) {
    case DTG_CONTIG:
    case DTG_VECTOR:
    case DTG_HVECTOR:
    case DTG_INDEXED:
    case DTG_HINDEXED:
    case DTG_INDEXED_BLOCK:
    case DTG_HINDEXED_BLOCK:
    case DTG_RESIZED:
    case DTG_DUP: {
        dtg_node *k = gen(g, depth - 1, 0);
        if (!k) return NULL;
        n = new_node(kind, 1);
        n->kids[0] = k;
        MPI_Aint E = ext_of(k);
        if (kind == DTG_CONTIG) {
            n->count = gen_count(g);
        } else if (kind == DTG_VECTOR || kind == DTG_HVECTOR) {
            n->count = gen_count(g);
            n->block = gen_block(g);
            int m = (int)dtg_range(r, 0, 99);
            if (kind == DTG_VECTOR) {
                if (m < 15)
                    n->stride = n->block;
                else if (m < 50)
                    n->stride = n->block + dtg_range(r, 1, 4);
                else if (m < 70)
                    n->stride = -(n->block + dtg_range(r, 0, 4));
                else
                    n->stride = dtg_range(r, -8, 8);
            } else {
                MPI_Aint nat = n->block * E;
                if (m < 35)
                    n->stride = nat + dtg_range(r, 0, 12);
                else if (m < 55)
                    n->stride = -(iabs_(nat) + dtg_range(r, 0, 12));
                else if (m < 65)
                    n->stride = nat;
                else if (m < 90)
                    n->stride = dtg_range(r, -64, 64);
                else
                    n->stride = dtg_range(r, -4, 4) * (E ? E : 1);
            }
        } else if (kind == DTG_INDEXED || kind == DTG_HINDEXED) {
            int m = (int)dtg_range(r, 0, 99);
            n->count = m < 5 ? 0 : m < 96 ? (int)dtg_range(r, 1, 5) : (int)dtg_range(r, 10, 60);
            n->blens = xcalloc((size_t)n->count, sizeof *n->blens);
            n->displs = xcalloc((size_t)n->count, sizeof *n->displs);
            for (int i = 0; i < n->count; i++) n->blens[i] = dtg_chance(r, 10) ? 0 : (int)dtg_range(r, 1, 4);
            if (kind == DTG_INDEXED)
                gen_elem_displs(g, n->displs, n->count, n->blens, 0);
            else
                gen_byte_displs(g, n->displs, n->count, n->blens, 0, NULL, k);
        } else if (kind == DTG_INDEXED_BLOCK || kind == DTG_HINDEXED_BLOCK) {
            int m = (int)dtg_range(r, 0, 99);
            n->count = m < 5 ? 0 : m < 96 ? (int)dtg_range(r, 1, 5) : (int)dtg_range(r, 10, 60);
            n->block = gen_block(g);
            n->displs = xcalloc((size_t)n->count, sizeof *n->displs);
            if (kind == DTG_INDEXED_BLOCK)
                gen_elem_displs(g, n->displs, n->count, NULL, n->block);
            else
                gen_byte_displs(g, n->displs, n->count, NULL, n->block, NULL, k);
        } else if (kind == DTG_RESIZED) {
            MPI_Aint L = k->lb;
            int m = (int)dtg_range(r, 0, 99);
            if (m < 40)
                n->rlb = L;
            else if (m < 60)
                n->rlb = L - dtg_range(r, 1, 16);
            else if (m < 70)
                n->rlb = L + dtg_range(r, 1, 8);
            else
                n->rlb = dtg_range(r, -64, 32);
            m = (int)dtg_range(r, 0, 99);
            MPI_Aint X = E;
            if (m < 20)
                n->rext = X;
            else if (m < 50)
                n->rext = X + dtg_range(r, 1, 32);
            else if (m < 68)
                n->rext = X > 1 ? dtg_range(r, 1, X - 1) : 1;
            else if (m < 73)
                n->rext = 0;
            else if (m < 83)
                n->rext = dtg_range(r, 1, 3);
            else if (m < 89)
                n->rext = -dtg_range(r, 1, (X > 0 ? X : 0) + 8);
            else
                n->rext = dtg_range(r, 1, 128);
        }
        break;
    }
    case DTG_STRUCT: {
        int m = (int)dtg_range(r, 0, 99);
        int cnt = m < 4 ? 0 : (int)dtg_range(r, 1, 4);
        n = new_node(kind, cnt);
        n->count = cnt;
        n->blens = xcalloc((size_t)cnt, sizeof *n->blens);
        n->displs = xcalloc((size_t)cnt, sizeof *n->displs);
        for (int i = 0; i < cnt; i++) {
            n->kids[i] = gen(g, depth - 1, 0);
            if (!n->kids[i]) {
                dtg_free(n);
                return NULL;
            }
            n->blens[i] = dtg_chance(r, 8) ? 0 : (int)dtg_range(r, 1, 3);
        }
        gen_byte_displs(g, n->displs, cnt, n->blens, 0, (const dtg_node *const *)n->kids, NULL);
        break;
    }
    case DTG_SUBARRAY: {
        dtg_node *k = gen_array_kid(g, depth - 1);
        if (!k) return NULL;
        n = new_node(kind, 1);
        n->kids[0] = k;
        n->ndims = (int)dtg_range(r, 1, 3);
        n->order = dtg_chance(r, 50) ? MPI_ORDER_C : MPI_ORDER_FORTRAN;
        for (int d = 0; d < n->ndims; d++) {
            n->sizes[d] = dtg_chance(r, 8) ? (int)dtg_range(r, 8, 20) : (int)dtg_range(r, 1, 6);
            n->subsizes[d] = (int)dtg_range(r, 1, n->sizes[d]);
            n->starts[d] = (int)dtg_range(r, 0, n->sizes[d] - n->subsizes[d]);
        }
        break;
    }
    case DTG_DARRAY: {
        dtg_node *k = gen_array_kid(g, depth - 1);
        if (!k) return NULL;
        n = new_node(kind, 1);
        n->kids[0] = k;
        n->ndims = (int)dtg_range(r, 1, 3);
        n->order = dtg_chance(r, 50) ? MPI_ORDER_C : MPI_ORDER_FORTRAN;
        int size = 1;
        for (int d = 0; d < n->ndims; d++) {
            int m = (int)dtg_range(r, 0, 99);
            n->distribs[d] = m < 45 ? MPI_DISTRIBUTE_BLOCK : m < 85 ? MPI_DISTRIBUTE_CYCLIC : MPI_DISTRIBUTE_NONE;
            n->sizes[d] = dtg_chance(r, 8) ? (int)dtg_range(r, 8, 16) : (int)dtg_range(r, 1, 7);
            if (n->distribs[d] == MPI_DISTRIBUTE_NONE)
                n->psizes[d] = 1;
            else {
                int maxp = 6 / size;
                n->psizes[d] = (int)dtg_range(r, 1, maxp < 3 ? maxp : 3);
            }
            size *= n->psizes[d];
            int g_ = n->sizes[d], p = n->psizes[d];
            if (n->distribs[d] == MPI_DISTRIBUTE_BLOCK) {
                n->dargs[d] = dtg_chance(r, 60) ? MPI_DISTRIBUTE_DFLT_DARG
                                                : (int)dtg_range(r, (g_ + p - 1) / p, (g_ + p - 1) / p + 2);
            } else if (n->distribs[d] == MPI_DISTRIBUTE_CYCLIC) {
                n->dargs[d] = dtg_chance(r, 50) ? MPI_DISTRIBUTE_DFLT_DARG : (int)dtg_range(r, 1, 3);
            } else {
                n->dargs[d] = MPI_DISTRIBUTE_DFLT_DARG;
            }
        }
        n->psize = size;
        n->prank = (int)dtg_range(r, 0, size - 1);
        break;
    }
    }
    return n;
}

static dtg_node *gen(dtg_gen *g, int depth, int top)
{
    if (g->errors) return NULL;
    if (depth <= 0 || g->nodes >= DTG_MAX_NODES || (!top && dtg_chance(&g->rng, 18))) return gen_leaf(g);
    for (int attempt = 0; attempt < 4; attempt++) {
        int kind = (int)dtg_range(&g->rng, DTG_CONTIG, DTG_DUP);
        g->nodes++;
        dtg_node *n = gen_inner(g, kind, depth);
        if (!n) {
            if (g->errors) return NULL;
            continue;
        }
        int rc = finish(g, n);
        if (rc == 0) return n;
        dtg_free(n);
        if (rc < 0) return NULL;
    }
    return gen_leaf(g);
}

static void count_tree(dtg_gen *g, const dtg_node *n)
{
    g->hist[n->kind]++;
    if (n->kind == DTG_BASIC && is_pair(n->basic)) g->pair_types++;
    if (n->kind == DTG_SUBARRAY) g->subarray_order[n->order == MPI_ORDER_C ? 0 : 1]++;
    if (n->kind == DTG_DARRAY) {
        g->darray_order[n->order == MPI_ORDER_C ? 0 : 1]++;
        for (int d = 0; d < n->ndims; d++)
            g->darray_distrib[n->distribs[d] == MPI_DISTRIBUTE_BLOCK    ? 0
                              : n->distribs[d] == MPI_DISTRIBUTE_CYCLIC ? 1
                                                                        : 2]++;
    }
    if (n->kind == DTG_RESIZED && n->rext < 0) g->neg_extent++;
    if ((n->kind == DTG_CONTIG || n->kind == DTG_VECTOR || n->kind == DTG_HVECTOR || n->kind == DTG_INDEXED ||
         n->kind == DTG_HINDEXED || n->kind == DTG_INDEXED_BLOCK || n->kind == DTG_HINDEXED_BLOCK ||
         n->kind == DTG_STRUCT) &&
        n->count == 0)
        g->zero_count_ctor++;
    if ((n->kind == DTG_CONTIG || n->kind == DTG_VECTOR || n->kind == DTG_HVECTOR) && n->count >= 50) g->large_count++;
    for (int i = 0; i < n->nkids; i++) count_tree(g, n->kids[i]);
}

dtg_node *dtg_generate(dtg_gen *g)
{
    dtg_init_basics();
    static const int depth_pct[5] = {6, 22, 30, 26, 16};
    int r = (int)dtg_range(&g->rng, 0, 99), d = 0;
    while (d < 4 && r >= depth_pct[d]) r -= depth_pct[d++];
    g->max_depth = d;
    g->nodes = 0;
    dtg_node *n = gen(g, d, 1);
    if (n) count_tree(g, n);
    return n;
}

/* --------------------------------------------------------------- parser */

typedef struct {
    const char *s, *p;
    dtg_gen *g;
    int bad;
} pstate;

static void pskip(pstate *P)
{
    while (*P->p == ' ' || *P->p == '\t' || *P->p == '\n') P->p++;
}

static void perr(pstate *P, const char *what)
{
    if (!P->bad) snprintf(P->g->err, sizeof P->g->err, "parse error at character %ld: %s", (long)(P->p - P->s), what);
    P->bad = 1;
}

static int peat(pstate *P, char c)
{
    pskip(P);
    if (*P->p == c) {
        P->p++;
        return 1;
    }
    return 0;
}

static void pexpect(pstate *P, char c)
{
    if (!peat(P, c)) {
        char m[32];
        snprintf(m, sizeof m, "expected '%c'", c);
        perr(P, m);
    }
}

static int pword(pstate *P, char *w, size_t len)
{
    pskip(P);
    size_t n = 0;
    while ((*P->p >= 'a' && *P->p <= 'z') || (*P->p >= '0' && *P->p <= '9') || *P->p == '_') {
        if (n + 1 < len) w[n++] = *P->p;
        P->p++;
    }
    w[n] = 0;
    return n > 0;
}

static long pint(pstate *P)
{
    pskip(P);
    char *end;
    long v = strtol(P->p, &end, 10);
    if (end == P->p) perr(P, "expected an integer");
    P->p = end;
    return v;
}

/* [a, b, ...] of integers (or words mapped by `word`, for distribs/dargs) */
static int plist(pstate *P, long *v, int max, int (*word)(const char *, long *))
{
    pexpect(P, '[');
    int n = 0;
    if (peat(P, ']')) return 0;
    do {
        long x;
        pskip(P);
        if (word && *P->p >= 'a' && *P->p <= 'z') {
            char w[32];
            pword(P, w, sizeof w);
            if (!word(w, &x)) perr(P, "unknown word in list");
        } else {
            x = pint(P);
        }
        if (n < max) v[n] = x;
        n++;
    } while (!P->bad && peat(P, ','));
    pexpect(P, ']');
    if (n > max) perr(P, "list too long");
    return n;
}

static int distrib_word(const char *w, long *x)
{
    if (!strcmp(w, "block"))
        *x = MPI_DISTRIBUTE_BLOCK;
    else if (!strcmp(w, "cyclic"))
        *x = MPI_DISTRIBUTE_CYCLIC;
    else if (!strcmp(w, "none"))
        *x = MPI_DISTRIBUTE_NONE;
    else
        return 0;
    return 1;
}

static int darg_word(const char *w, long *x)
{
    if (strcmp(w, "default")) return 0;
    *x = MPI_DISTRIBUTE_DFLT_DARG;
    return 1;
}

static int plist3(pstate *P, int *dst, int (*word)(const char *, long *))
{
    long v[3] = {0, 0, 0};
    int n = plist(P, v, 3, word);
    for (int i = 0; i < 3; i++) dst[i] = (int)v[i];
    return n;
}

static dtg_node *ptype(pstate *P);

#define PMAX 4096
static dtg_node *ptype(pstate *P)
{
    char name[40];
    if (!pword(P, name, sizeof name)) {
        perr(P, "expected a type");
        return NULL;
    }
    int kind = -1;
    for (int k = DTG_CONTIG; k < DTG_NKINDS; k++)
        if (!strcmp(name, dtg_kind_name(k))) kind = k;
    if (kind < 0) {
        for (int b = 0; b < dtg_nbasics; b++)
            if (!strcmp(name, dtg_basics[b].name)) {
                dtg_node *n = new_node(DTG_BASIC, 0);
                n->basic = b;
                if (finish(P->g, n) != 0) {
                    dtg_free(n);
                    perr(P, "basic type");
                    return NULL;
                }
                return n;
            }
        perr(P, "unknown type name");
        return NULL;
    }
    pexpect(P, '(');
    dtg_node *n = new_node(kind, 0);
    dtg_node *kids[64];
    int nk = 0, nblocks = -1, ndispls = -1;
    long blocks[PMAX], displs_[PMAX];
    while (!P->bad) {
        pskip(P);
        const char *save = P->p;
        char key[40];
        pword(P, key, sizeof key);
        pskip(P);
        if (*P->p != '=') { /* positional: the old type */
            P->p = save;
            dtg_node *k = ptype(P);
            if (!k) break;
            if (nk < 64)
                kids[nk++] = k;
            else
                dtg_free(k);
        } else {
            P->p++;
            if (!strcmp(key, "count"))
                n->count = (int)pint(P);
            else if (!strcmp(key, "block"))
                n->block = (int)pint(P);
            else if (!strcmp(key, "stride"))
                n->stride = pint(P);
            else if (!strcmp(key, "lb"))
                n->rlb = pint(P);
            else if (!strcmp(key, "extent"))
                n->rext = pint(P);
            else if (!strcmp(key, "size"))
                n->psize = (int)pint(P);
            else if (!strcmp(key, "rank"))
                n->prank = (int)pint(P);
            else if (!strcmp(key, "blocks"))
                nblocks = plist(P, blocks, PMAX, NULL);
            else if (!strcmp(key, "displs"))
                ndispls = plist(P, displs_, PMAX, NULL);
            else if (!strcmp(key, "sizes") || !strcmp(key, "gsizes"))
                n->ndims = plist3(P, n->sizes, NULL);
            else if (!strcmp(key, "subsizes"))
                plist3(P, n->subsizes, NULL);
            else if (!strcmp(key, "starts"))
                plist3(P, n->starts, NULL);
            else if (!strcmp(key, "psizes"))
                plist3(P, n->psizes, NULL);
            else if (!strcmp(key, "distribs"))
                plist3(P, n->distribs, distrib_word);
            else if (!strcmp(key, "dargs"))
                plist3(P, n->dargs, darg_word);
            else if (!strcmp(key, "order")) {
                char w[16];
                pword(P, w, sizeof w);
                if (!strcmp(w, "c"))
                    n->order = MPI_ORDER_C;
                else if (!strcmp(w, "fortran"))
                    n->order = MPI_ORDER_FORTRAN;
                else
                    perr(P, "order must be c or fortran");
            } else if (!strcmp(key, "types")) {
                pexpect(P, '[');
                if (!peat(P, ']')) {
                    do {
                        dtg_node *k = ptype(P);
                        if (!k) break;
                        if (nk < 64)
                            kids[nk++] = k;
                        else
                            dtg_free(k);
                    } while (!P->bad && peat(P, ','));
                    pexpect(P, ']');
                }
            } else {
                perr(P, "unknown keyword");
            }
        }
        if (!peat(P, ',')) break;
    }
    pexpect(P, ')');
    n->nkids = nk;
    n->kids = xcalloc((size_t)nk, sizeof *n->kids);
    memcpy(n->kids, kids, (size_t)nk * sizeof *kids);
    if (kind == DTG_INDEXED || kind == DTG_HINDEXED || kind == DTG_STRUCT || kind == DTG_INDEXED_BLOCK ||
        kind == DTG_HINDEXED_BLOCK) {
        int cnt = ndispls >= 0 ? ndispls : 0;
        if (kind == DTG_STRUCT && nblocks < 0) { /* blocks optional: all 1 */
            nblocks = cnt;
            for (int i = 0; i < cnt; i++) blocks[i] = 1;
        }
        if (kind != DTG_INDEXED_BLOCK && kind != DTG_HINDEXED_BLOCK && nblocks != cnt)
            perr(P, "blocks and displs differ in length");
        n->count = cnt;
        n->displs = xcalloc((size_t)cnt, sizeof *n->displs);
        for (int i = 0; i < cnt; i++) n->displs[i] = displs_[i];
        if (kind != DTG_INDEXED_BLOCK && kind != DTG_HINDEXED_BLOCK) {
            n->blens = xcalloc((size_t)cnt, sizeof *n->blens);
            for (int i = 0; i < cnt; i++) n->blens[i] = (int)blocks[i];
        }
    }
    if (!P->bad && (kind == DTG_STRUCT ? nk != n->count : nk != 1)) perr(P, "wrong number of types");
    if (P->bad) {
        dtg_free(n);
        return NULL;
    }
    int rc = finish(P->g, n);
    if (rc != 0) {
        if (rc > 0) perr(P, "type too large for the test's limits or avoided on this stack");
        P->bad = 1;
        dtg_free(n);
        return NULL;
    }
    return n;
}

dtg_node *dtg_parse(dtg_gen *g, const char *text)
{
    dtg_init_basics();
    pstate P = {text, text, g, 0};
    g->err[0] = 0;
    dtg_node *n = ptype(&P);
    if (n && !P.bad) {
        pskip(&P);
        if (*P.p) perr(&P, "trailing text");
    }
    if (P.bad) {
        dtg_free(n);
        return NULL;
    }
    count_tree(g, n);
    return n;
}
