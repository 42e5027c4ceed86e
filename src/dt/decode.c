/* Decoding: MPI datatype -> engine tree, through get_envelope/get_contents.
 *
 * Positions are computed with the extents MPI reports for each inner handle,
 * so resized and dup need no node of their own, and MPI's alignment padding
 * of struct extents is taken as the library applies it.
 */
#include "internal.h"
#include <stddef.h>
#include <stdlib.h>

typedef mg_contents contents;

/* A type built with `_c` constructors can only be queried with the `_c` call. */
static int combiner_of(MPI_Datatype t, int *comb)
{
#ifdef MG_HAVE_MPI_LARGE_COUNT
    MPI_Count ni, na, nc, nd;
    return MPI_Type_get_envelope_c(t, &ni, &na, &nc, &nd, comb);
#else
    int ni, na, nd;
    return MPI_Type_get_envelope(t, &ni, &na, &nd, comb);
#endif
}

void mg__contents_free(contents *ct)
{
    for (MPI_Count k = 0; k < ct->nd; k++) {
        int comb;
        if (combiner_of(ct->d[k], &comb) != MPI_SUCCESS) continue;
        /* Predefined handles (named, f90 parameterized) must not be freed. */
        if (comb != MPI_COMBINER_NAMED && comb != MPI_COMBINER_F90_REAL && comb != MPI_COMBINER_F90_COMPLEX &&
            comb != MPI_COMBINER_F90_INTEGER)
            MPI_Type_free(&ct->d[k]);
    }
    free(ct->i);
    free(ct->a);
    free(ct->c);
    free(ct->d);
}

int mg__contents_get(MPI_Datatype t, contents *ct)
{
    *ct = (contents){0};
#ifdef MG_HAVE_MPI_LARGE_COUNT
    if (MPI_Type_get_envelope_c(t, &ct->ni, &ct->na, &ct->nc, &ct->nd, &ct->combiner) != MPI_SUCCESS)
        return MG_DT_ERR_MPI;
#else
    int ni, na, nd;
    if (MPI_Type_get_envelope(t, &ni, &na, &nd, &ct->combiner) != MPI_SUCCESS) return MG_DT_ERR_MPI;
    ct->ni = ni;
    ct->na = na;
    ct->nd = nd;
#endif
    if (ct->combiner == MPI_COMBINER_NAMED) return MG_DT_SUCCESS;
    ct->large = ct->nc > 0;
    ct->i = malloc(sizeof(int) * (size_t)(ct->ni + 1));
    ct->a = malloc(sizeof(MPI_Aint) * (size_t)(ct->na + 1));
    ct->c = malloc(sizeof(MPI_Count) * (size_t)(ct->nc + 1));
    ct->d = malloc(sizeof(MPI_Datatype) * (size_t)(ct->nd + 1));
    if (!ct->i || !ct->a || !ct->c || !ct->d) {
        ct->nd = 0;
        mg__contents_free(ct);
        return MG_DT_ERR_NOMEM;
    }
#ifdef MG_HAVE_MPI_LARGE_COUNT
    int rc = MPI_Type_get_contents_c(t, ct->ni, ct->na, ct->nc, ct->nd, ct->i, ct->a, ct->c, ct->d);
#else
    int rc = MPI_Type_get_contents(t, (int)ct->ni, (int)ct->na, (int)ct->nd, ct->i, ct->a, ct->d);
#endif
    if (rc != MPI_SUCCESS) {
        ct->nd = 0;
        mg__contents_free(ct);
        return MG_DT_ERR_MPI;
    }
    return MG_DT_SUCCESS;
}

/* A count-like argument: in the int array for classic constructors, in the
 * large-count array for the MPI-4 `_c` ones (same positions after the shift
 * the standard defines for each combiner). */
static MPI_Count arg(const contents *ct, MPI_Count k) { return mg__contents_arg(ct, k); }

static int extent_of(MPI_Datatype t, MPI_Aint *ext)
{
    MPI_Aint lb;
    return MPI_Type_get_extent(t, &lb, ext) == MPI_SUCCESS ? MG_DT_SUCCESS : MG_DT_ERR_MPI;
}

/* The pair types of MINLOC/MAXLOC: value then int, laid out like a C struct. */
#define PAIR(T) \
    struct {    \
        T v;    \
        int i;  \
    }
static int decode_pair(mg_arena *a, MPI_Datatype t, mg_node **out)
{
    MPI_Datatype first;
    MPI_Aint ioff;
    if (t == MPI_FLOAT_INT)
        first = MPI_FLOAT, ioff = offsetof(PAIR(float), i);
    else if (t == MPI_DOUBLE_INT)
        first = MPI_DOUBLE, ioff = offsetof(PAIR(double), i);
    else if (t == MPI_LONG_INT)
        first = MPI_LONG, ioff = offsetof(PAIR(long), i);
    else if (t == MPI_SHORT_INT)
        first = MPI_SHORT, ioff = offsetof(PAIR(short), i);
    else if (t == MPI_LONG_DOUBLE_INT)
        first = MPI_LONG_DOUBLE, ioff = offsetof(PAIR(long double), i);
    else
        return MG_DT_ERR_UNSUPPORTED;
    int fsize, isize;
    if (MPI_Type_size(first, &fsize) != MPI_SUCCESS || MPI_Type_size(MPI_INT, &isize) != MPI_SUCCESS)
        return MG_DT_ERR_MPI;
    mg_node *s = mg__seq(a, 2);
    if (!s || !(s->kids[0] = mg__block(a, first, fsize, 1)) || !(s->kids[1] = mg__block(a, MPI_INT, isize, 1)))
        return MG_DT_ERR_NOMEM;
    s->displs[1] = ioff;
    MG_TRY(mg__finish(a, s->kids[0]));
    MG_TRY(mg__finish(a, s->kids[1]));
    *out = s;
    return mg__finish(a, s);
}

static int decode_named(mg_arena *a, MPI_Datatype t, mg_node **out)
{
    MPI_Count size;
    MPI_Aint lb, ext;
    if (MPI_Type_size_x(t, &size) != MPI_SUCCESS || MPI_Type_get_extent(t, &lb, &ext) != MPI_SUCCESS)
        return MG_DT_ERR_MPI;
    if (size == 0 || (size == ext && lb == 0)) {
        /* Also MPI_LB/MPI_UB where a library still has them: no data. */
        if (!(*out = mg__block(a, t, size ? size : 1, size ? 1 : 0))) return MG_DT_ERR_NOMEM;
        return mg__finish(a, *out);
    }
    return decode_pair(a, t, out);
}

/* count blocks of blens[k] copies of `kid` (extent ext) at displs[k] bytes,
 * where kid is not a dense basic element (those are one IDX: dense_list). */
static int make_blocks(mg_arena *a, mg_node *kid, MPI_Aint ext, MPI_Count count, const MPI_Count *blens,
                       const MPI_Aint *displs, mg_node **out)
{
    mg_node *s = mg__seq(a, count);
    if (!s) return MG_DT_ERR_NOMEM;
    mg_node *shared = NULL;
    for (MPI_Count k = 0; k < count; k++) {
        if (!shared || shared->count != blens[k]) {
            if (!(shared = mg__vec(a, blens[k], ext, kid))) return MG_DT_ERR_NOMEM;
            MG_TRY(mg__finish(a, shared));
        }
        s->kids[k] = shared;
        s->displs[k] = displs[k];
    }
    *out = s;
    return mg__finish(a, s);
}

/* Block k of an (h)indexed(_block) combiner: its displacement in bytes and its
 * block length. The flags are constants wherever fill_list inlines them. */
static inline MPI_Aint list_disp(const contents *ct, MPI_Count first, MPI_Count k, MPI_Aint ext, int large, int bytes)
{
    if (large) return bytes ? (MPI_Aint)ct->c[first + k] : (MPI_Aint)ct->c[first + k] * ext;
    return bytes ? ct->a[k] : (MPI_Aint)ct->i[first + k] * ext;
}
static inline MPI_Count list_blen(const contents *ct, MPI_Count k, int large, int blocked)
{
    MPI_Count j = blocked ? 1 : 1 + k;
    return large ? ct->c[j] : ct->i[j];
}

/* The displacements of a blocked list (count blocks of blen * per elements
 * each), measured in the same pass. Equal lengths leave few things to track
 * per block: the bounds, and whether a block starts where the last ended. */
static inline __attribute__((always_inline)) int fill_fixed(mg_node *x, const contents *ct, MPI_Count per, MPI_Aint ext,
                                                            const int large, const int bytes)
{
    MPI_Count n = x->count, len = 0, b = 0;
    if (n && (!mg__mul(list_blen(ct, 0, large, 1), per, &len) || !mg__mul(len, x->esize, &b)))
        return MG_DT_ERR_OVERFLOW;
    x->blen = len;
    MPI_Aint *d = x->displs, lo = PTRDIFF_MAX, top = PTRDIFF_MIN, prev_end = 0;
    unsigned joins = 0;
    for (MPI_Count k = 0; k < n; k++) {
        MPI_Aint v = list_disp(ct, 2, k, ext, large, bytes);
        d[k] = v;
        joins |= k && v == prev_end;
        prev_end = (MPI_Aint)((size_t)v + (size_t)b); /* wraps only where top + b overflows below */
        lo = v < lo ? v : lo;
        top = v > top ? v : top;
    }
    mg_idx_stats st = {.first_len = len, .lo = lo, .hi = top, .prev_end = prev_end};
    st.flags = (n && (joins || !len)) * MG_IDX_MERGES;
    if ((n && __builtin_add_overflow(top, b, &st.hi)) || !mg__mul(n, len, &st.elems)) st.flags |= MG_IDX_OVERFLOW;
    return mg__idx_stats_set(x, st);
}

/* Fills the lists of x (count blocks of per elements each per block length)
 * and measures them in the same pass: one pass over millions of blocks. */
static inline __attribute__((always_inline)) int fill_list(mg_node *x, const contents *ct, MPI_Count per, MPI_Aint ext,
                                                           const int large, const int blocked, const int bytes)
{
    if (blocked) return fill_fixed(x, ct, per, ext, large, bytes);
    MPI_Count n = x->count, first = 1 + n, l0 = 0; /* first: position of the displacements */
    MPI_Aint *d = x->displs;
    MPI_Count *len = x->lens, esz = x->esize;
    mg_idx_stats st;
    int bad = n && !mg__mul(list_blen(ct, 0, large, 0), per, &l0);
    mg__idx_stats_init(&st, n ? list_disp(ct, first, 0, ext, large, bytes) : 0, l0);
    for (MPI_Count k = 0; k < n; k++) {
        d[k] = list_disp(ct, first, k, ext, large, bytes);
        bad |= !mg__mul(list_blen(ct, k, large, 0), per, &len[k]);
        mg__idx_stats_add(&st, d[k], len[k], esz);
    }
    st.flags |= bad ? MG_IDX_OVERFLOW : 0;
    return mg__idx_stats_set(x, st);
}

/* One function per combination of the flags: the loop specialized, and in a
 * function of its own so that its accumulators get registers (inlined into
 * the decoder they were kept on the stack, 2x slower). */
typedef int (*fill_fn)(mg_node *x, const contents *ct, MPI_Count per, MPI_Aint ext);
#define FILL(large, blocked, bytes)                                                                                  \
    static __attribute__((noinline)) int fill_##large##blocked##bytes(mg_node *x, const contents *ct, MPI_Count per, \
                                                                      MPI_Aint ext)                                  \
    {                                                                                                                \
        return fill_list(x, ct, per, ext, large, blocked, bytes);                                                    \
    }
FILL(0, 0, 0)
FILL(0, 0, 1)
FILL(0, 1, 0)
FILL(0, 1, 1)
FILL(1, 0, 0)
FILL(1, 0, 1)
FILL(1, 1, 0)
FILL(1, 1, 1)
#undef FILL

/* An (h)indexed(_block) combiner over a dense basic element: one IDX node. */
static int dense_list(mg_arena *a, const contents *ct, const mg_node *kid, MPI_Aint ext, int blocked, int bytes,
                      mg_node **out)
{
    static const fill_fn fill[8] = {fill_000, fill_001, fill_010, fill_011, fill_100, fill_101, fill_110, fill_111};
    mg_node *x = blocked ? mg__idx_fixed(a, kid->elem, kid->esize, arg(ct, 0), 0)
                         : mg__idx(a, kid->elem, kid->esize, arg(ct, 0));
    if (!x) return MG_DT_ERR_NOMEM;
    *out = x;
    return fill[ct->large * 4 + blocked * 2 + bytes](x, ct, kid->count, ext);
}

static int vec(mg_arena *a, MPI_Count count, MPI_Aint stride, mg_node *kid, mg_node **out)
{
    if (!(*out = mg__vec(a, count, stride, kid))) return MG_DT_ERR_NOMEM;
    return mg__finish(a, *out);
}

static int displaced(mg_arena *a, MPI_Aint disp, mg_node *kid, mg_node **out)
{
    mg_node *s = mg__seq(a, 1);
    if (!s) return MG_DT_ERR_NOMEM;
    s->kids[0] = kid;
    s->displs[0] = disp;
    *out = s;
    return mg__finish(a, s);
}

/* Byte stride of each dimension of a row-major (C) or column-major array. */
static void array_strides(int nd, const MPI_Count *sizes, int order, MPI_Aint ext, MPI_Aint *stride)
{
    if (order == MPI_ORDER_C) {
        for (int d = nd - 1; d >= 0; d--) stride[d] = d == nd - 1 ? ext : stride[d + 1] * sizes[d + 1];
    } else {
        for (int d = 0; d < nd; d++) stride[d] = d == 0 ? ext : stride[d - 1] * sizes[d - 1];
    }
}

static int decode_subarray(mg_arena *a, const contents *ct, mg_node *kid, MPI_Aint ext, mg_node **out)
{
    int nd = ct->i[0], order;
    MPI_Count *v = malloc(sizeof(MPI_Count) * (size_t)(3 * nd + 1));
    MPI_Aint *stride = malloc(sizeof(MPI_Aint) * (size_t)(nd + 1));
    int rc = (v && stride) ? MG_DT_SUCCESS : MG_DT_ERR_NOMEM;
    if (rc == MG_DT_SUCCESS) {
        for (int k = 0; k < 3 * nd; k++) v[k] = ct->large ? ct->c[k] : ct->i[1 + k];
        order = ct->large ? ct->i[1] : ct->i[1 + 3 * nd];
        array_strides(nd, v, order, ext, stride);
        MPI_Aint off = 0;
        mg_node *n = kid;
        for (int s = 0; s < nd && rc == MG_DT_SUCCESS; s++) {
            int d = order == MPI_ORDER_C ? nd - 1 - s : s; /* innermost first */
            off += (MPI_Aint)v[2 * nd + d] * stride[d];
            rc = vec(a, v[nd + d], stride[d], n, &n);
        }
        if (rc == MG_DT_SUCCESS) rc = displaced(a, off, n, out);
    }
    free(v);
    free(stride);
    return rc;
}

/* Runs (start, length) of the indices of one dimension owned by coordinate `coord`. */
static int darray_runs(mg_arena *a, MPI_Count g, int distrib, int darg, int p, int coord, MPI_Aint stride, mg_node *kid,
                       mg_node **out)
{
    MPI_Count first = 0, len = g, step = g, blk;
    if (distrib == MPI_DISTRIBUTE_BLOCK) {
        blk = darg == MPI_DISTRIBUTE_DFLT_DARG ? (g + p - 1) / p : darg;
        first = blk * coord;
        len = first >= g ? 0 : (g - first < blk ? g - first : blk);
        step = g;
    } else if (distrib == MPI_DISTRIBUTE_CYCLIC) {
        blk = darg == MPI_DISTRIBUTE_DFLT_DARG ? 1 : darg;
        first = blk * coord;
        len = blk;
        step = blk * p;
    }
    MPI_Count nruns = first >= g ? 0 : (g - first + step - 1) / step;
    mg_node *s = mg__seq(a, nruns);
    if (!s) return MG_DT_ERR_NOMEM;
    for (MPI_Count r = 0; r < nruns; r++) {
        MPI_Count start = first + r * step, l = g - start < len ? g - start : len;
        s->displs[r] = (MPI_Aint)start * stride;
        MG_TRY(vec(a, l, stride, kid, &s->kids[r]));
    }
    *out = s;
    return mg__finish(a, s);
}

static int decode_darray(mg_arena *a, const contents *ct, mg_node *kid, MPI_Aint ext, mg_node **out)
{
    int rank = ct->i[1], nd = ct->i[2];
    /* classic: gsizes at i[3..]; large: gsizes in c[], the rest shifted down */
    const int *rest = ct->large ? ct->i + 3 : ct->i + 3 + nd;
    const int *distribs = rest, *dargs = rest + nd, *psizes = rest + 2 * nd;
    int order = rest[3 * nd];
    MPI_Count *g = calloc((size_t)nd + 1, sizeof(MPI_Count));
    MPI_Aint *stride = malloc(sizeof(MPI_Aint) * (size_t)(nd + 1));
    int *coord = malloc(sizeof(int) * (size_t)(nd + 1));
    int rc = (g && stride && coord) ? MG_DT_SUCCESS : MG_DT_ERR_NOMEM;
    if (rc == MG_DT_SUCCESS) {
        for (int d = 0; d < nd; d++) g[d] = ct->large ? ct->c[d] : ct->i[3 + d];
        /* Process coordinates are row-major over psizes whatever the order. */
        for (int d = nd - 1, r = rank; d >= 0; d--) {
            coord[d] = r % psizes[d];
            r /= psizes[d];
        }
        array_strides(nd, g, order, ext, stride);
        mg_node *n = kid;
        for (int s = 0; s < nd && rc == MG_DT_SUCCESS; s++) {
            int d = order == MPI_ORDER_C ? nd - 1 - s : s;
            rc = darray_runs(a, g[d], distribs[d], dargs[d], psizes[d], coord[d], stride[d], n, &n);
        }
        if (rc == MG_DT_SUCCESS) *out = n;
    }
    free(g);
    free(stride);
    free(coord);
    return rc;
}

static int decode_derived(mg_arena *a, const contents *ct, mg_node **out)
{
    int comb = ct->combiner;
    if (comb == MPI_COMBINER_F90_REAL || comb == MPI_COMBINER_F90_COMPLEX || comb == MPI_COMBINER_F90_INTEGER)
        return MG_DT_ERR_UNSUPPORTED;  /* handled by the caller, which has the handle */
    if (comb == MPI_COMBINER_STRUCT) { /* may have no members at all */
        MPI_Count n = arg(ct, 0);
        mg_node *s = mg__seq(a, n);
        if (!s) return MG_DT_ERR_NOMEM;
        for (MPI_Count k = 0; k < n; k++) {
            mg_node *kid;
            MPI_Aint ext;
            MG_TRY(mg__decode(a, ct->d[k], &kid));
            MG_TRY(extent_of(ct->d[k], &ext));
            MG_TRY(vec(a, arg(ct, 1 + k), ext, kid, &s->kids[k]));
            s->displs[k] = ct->large ? (MPI_Aint)ct->c[1 + n + k] : ct->a[k];
        }
        *out = s;
        return mg__finish(a, s);
    }

    if (ct->nd < 1) return MG_DT_ERR_UNSUPPORTED;
    mg_node *kid;
    MPI_Aint ext;
    MG_TRY(mg__decode(a, ct->d[0], &kid));
    MG_TRY(extent_of(ct->d[0], &ext));

    switch (comb) {
    case MPI_COMBINER_DUP:
    case MPI_COMBINER_RESIZED:
        *out = kid; /* only the extent changes, and parents ask MPI for it */
        return MG_DT_SUCCESS;
    case MPI_COMBINER_CONTIGUOUS: return vec(a, arg(ct, 0), ext, kid, out);
    case MPI_COMBINER_VECTOR:
    case MPI_COMBINER_HVECTOR: {
        mg_node *block;
        MPI_Aint stride = comb == MPI_COMBINER_VECTOR ? (MPI_Aint)arg(ct, 2) * ext
                          : ct->large                 ? (MPI_Aint)ct->c[2]
                                                      : ct->a[0];
        MG_TRY(vec(a, arg(ct, 1), ext, kid, &block));
        return vec(a, arg(ct, 0), stride, block, out);
    }
    case MPI_COMBINER_INDEXED:
    case MPI_COMBINER_HINDEXED:
    case MPI_COMBINER_INDEXED_BLOCK:
    case MPI_COMBINER_HINDEXED_BLOCK: {
        MPI_Count n = arg(ct, 0);
        int blocked = comb == MPI_COMBINER_INDEXED_BLOCK || comb == MPI_COMBINER_HINDEXED_BLOCK;
        int bytes = comb == MPI_COMBINER_HINDEXED || comb == MPI_COMBINER_HINDEXED_BLOCK;
        MPI_Count first = blocked ? 2 : 1 + n; /* position of the displacements */
        if (kid->kind == MG_N_BLOCK && ext == kid->size) return dense_list(a, ct, kid, ext, blocked, bytes, out);
        MPI_Count *blens = malloc(sizeof(MPI_Count) * (size_t)(n + 1));
        MPI_Aint *displs = malloc(sizeof(MPI_Aint) * (size_t)(n + 1));
        int rc = blens && displs ? MG_DT_SUCCESS : MG_DT_ERR_NOMEM;
        for (MPI_Count k = 0; rc == MG_DT_SUCCESS && k < n; k++) {
            blens[k] = blocked ? arg(ct, 1) : arg(ct, 1 + k);
            if (bytes && !ct->large)
                displs[k] = ct->a[k];
            else if (bytes)
                displs[k] = (MPI_Aint)ct->c[first + k];
            else
                displs[k] = (MPI_Aint)arg(ct, first + k) * ext;
        }
        if (rc == MG_DT_SUCCESS) rc = make_blocks(a, kid, ext, n, blens, displs, out);
        free(blens);
        free(displs);
        return rc;
    }
    case MPI_COMBINER_SUBARRAY: return decode_subarray(a, ct, kid, ext, out);
    case MPI_COMBINER_DARRAY: return decode_darray(a, ct, kid, ext, out);
    default: return MG_DT_ERR_UNSUPPORTED;
    }
}

int mg__decode(mg_arena *a, MPI_Datatype type, mg_node **out)
{
    if (type == MPI_DATATYPE_NULL) return MG_DT_ERR_ARG;
    contents ct;
    MG_TRY(mg__contents_get(type, &ct));
    int rc;
    if (ct.combiner == MPI_COMBINER_NAMED) {
        rc = decode_named(a, type, out);
    } else if (ct.combiner == MPI_COMBINER_F90_REAL || ct.combiner == MPI_COMBINER_F90_COMPLEX ||
               ct.combiner == MPI_COMBINER_F90_INTEGER) {
        int size;
        rc = MPI_Type_size(type, &size) == MPI_SUCCESS ? MG_DT_SUCCESS : MG_DT_ERR_MPI;
        if (rc == MG_DT_SUCCESS) rc = (*out = mg__block(a, type, size, 1)) ? mg__finish(a, *out) : MG_DT_ERR_NOMEM;
    } else {
        rc = decode_derived(a, &ct, out);
    }
    mg__contents_free(&ct);
    return rc;
}
