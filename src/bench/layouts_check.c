/* Checking a layout's parameters (defaults, rules, sizes; no MPI): the shape
 * of each layout, where each element lives (the geometry), and
 * mg_layout_check. See layouts.c for the catalog these work from. */
#include "layouts_internal.h"

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static long V(const ctx *c, mg_layout_param id) { return c->L->params.value[id]; }

/* "A1=0 from A=1 with variant 1", or "A1=0" when it was given. */
static const char *why(const ctx *c, mg_layout_param id, char *buf, size_t len)
{
    const mg_layout_params *p = &c->L->params;
    if (c->derived & MG_LAYOUT_BIT(id)) {
        if (c->g->d.params & P(VARIANT))
            snprintf(buf, len, "%s=%ld from A=%ld with variant %ld", mg_layout__param_names[id], p->value[id],
                     p->value[MG_LAYOUT_P_A], p->value[MG_LAYOUT_P_VARIANT]);
        else
            snprintf(buf, len, "%s=%ld from A=%ld", mg_layout__param_names[id], p->value[id], p->value[MG_LAYOUT_P_A]);
    } else {
        snprintf(buf, len, "%s=%ld", mg_layout__param_names[id], p->value[id]);
    }
    return buf;
}

static int need_A(ctx *c)
{
    if (!(c->L->params.given & P(A))) return mg_layout__fail(c, MG_LAYOUT_EINVALID, "A is required");
    return MG_LAYOUT_OK;
}

/* Value `id` must be greater than (strict) or at least the value of `than`. */
static int need_cmp(ctx *c, mg_layout_param id, mg_layout_param than, int strict)
{
    long a = V(c, id), b = V(c, than);
    if (strict ? a > b : a >= b) return MG_LAYOUT_OK;
    char w1[96], w2[96];
    return mg_layout__fail(c, MG_LAYOUT_EINVALID, "%s must be %s %s (%s, %s)", mg_layout__param_names[id],
                           strict ? ">" : ">=", mg_layout__param_names[than], why(c, id, w1, sizeof w1),
                           why(c, than, w2, sizeof w2));
}

/* Records the divisibility unit and the block size, and checks n against them. */
static int finish_shape(ctx *c, long unit, const char *expr, const char *what)
{
    mg_layout_info *L = c->L;
    int dynamic = c->r->d.dynamic;
    L->n_unit = unit;
    if (L->n_min < unit) L->n_min = unit;
    if (L->n > 0 && L->n % unit != 0)
        return mg_layout__fail(c, MG_LAYOUT_EINVALID, "%s=%ld does not divide n=%ld (n must be a multiple of %s)", expr,
                               unit, L->n, what);
    L->k = dynamic ? L->n : unit;
    L->count = L->n == 0 ? 0 : dynamic ? 1 : (int)(L->n / unit);
    return MG_LAYOUT_OK;
}

/* ------------------------------------------------------------------ */
/* Shapes: rules of each layout and its block size                     */
/* ------------------------------------------------------------------ */

static const char *const per_block = "the elements per block k";
static const char *const per_rep = "what the construction repeats";

int mg_layout__shape_contig(ctx *c) { return finish_shape(c, 1, "1", per_block); }

int mg_layout__shape_tiled(ctx *c)
{
    int rc = need_A(c);
    if (!rc) rc = need_cmp(c, MG_LAYOUT_P_B, MG_LAYOUT_P_A, 1);
    return rc ? rc : finish_shape(c, V(c, MG_LAYOUT_P_A), "k=A", per_block);
}

/* The other descriptions of Tiled accept the degenerate B = A. */
static int shape_tiled_loose(ctx *c)
{
    int rc = need_A(c);
    if (!rc) rc = need_cmp(c, MG_LAYOUT_P_B, MG_LAYOUT_P_A, 0);
    return rc;
}

int mg_layout__shape_tiled_struct(ctx *c)
{
    int rc = shape_tiled_loose(c);
    if (rc) return rc;
    long k = (V(c, MG_LAYOUT_P_S1) + V(c, MG_LAYOUT_P_S2)) * V(c, MG_LAYOUT_P_A);
    if (k > INT_MAX) return mg_layout__fail(c, MG_LAYOUT_EINVALID, "(S1+S2)*A=%ld exceeds INT_MAX", k);
    return finish_shape(c, k, "k=(S1+S2)*A", per_block);
}

int mg_layout__shape_tiled_vector(ctx *c)
{
    int rc = shape_tiled_loose(c);
    return rc ? rc : finish_shape(c, V(c, MG_LAYOUT_P_A), "A", per_rep);
}

int mg_layout__shape_vector_tiled(ctx *c)
{
    int rc = shape_tiled_loose(c);
    if (rc) return rc;
    long u = V(c, MG_LAYOUT_P_S) * V(c, MG_LAYOUT_P_A);
    if (u > INT_MAX) return mg_layout__fail(c, MG_LAYOUT_EINVALID, "S*A=%ld exceeds INT_MAX", u);
    return finish_shape(c, u, "S*A", per_rep);
}

int mg_layout__shape_hetero(ctx *c)
{
    int rc = shape_tiled_loose(c);
    if (rc) return rc;
    long A = V(c, MG_LAYOUT_P_A);
    if (A > INT_MAX / HET_PARTS) return mg_layout__fail(c, MG_LAYOUT_EINVALID, "4*A exceeds INT_MAX");
    return finish_shape(c, HET_PARTS * A, "k=4A", per_block);
}

int mg_layout__shape_block(ctx *c)
{
    int rc = need_A(c);
    if (!rc) rc = need_cmp(c, MG_LAYOUT_P_B1, MG_LAYOUT_P_A, 1);
    if (!rc) rc = need_cmp(c, MG_LAYOUT_P_B2, MG_LAYOUT_P_A, 1);
    if (rc) return rc;
    if (V(c, MG_LAYOUT_P_B1) == V(c, MG_LAYOUT_P_B2)) {
        char w1[96], w2[96];
        return mg_layout__fail(c, MG_LAYOUT_EINVALID, "B1 must differ from B2 (%s, %s)",
                               why(c, MG_LAYOUT_P_B1, w1, sizeof w1), why(c, MG_LAYOUT_P_B2, w2, sizeof w2));
    }
    long A = V(c, MG_LAYOUT_P_A);
    if (c->r->d.dynamic) return finish_shape(c, A, "A", per_rep);
    if (A > INT_MAX / 2) return mg_layout__fail(c, MG_LAYOUT_EINVALID, "2A exceeds INT_MAX");
    return finish_shape(c, 2 * A, "k=2A", per_block);
}

static int pair_unit(ctx *c)
{
    long k = V(c, MG_LAYOUT_P_A1) + V(c, MG_LAYOUT_P_A2);
    if (k > INT_MAX) return mg_layout__fail(c, MG_LAYOUT_EINVALID, "A1+A2=%ld exceeds INT_MAX", k);
    return c->r->d.dynamic ? finish_shape(c, k, "A1+A2", per_rep) : finish_shape(c, k, "k=A1+A2", per_block);
}

int mg_layout__shape_bucket(ctx *c)
{
    long B = V(c, MG_LAYOUT_P_B), A1 = V(c, MG_LAYOUT_P_A1), A2 = V(c, MG_LAYOUT_P_A2);
    if (!(B > A1 && B > A2)) {
        char w0[96], w1[96], w2[96];
        return mg_layout__fail(c, MG_LAYOUT_EINVALID, "B must be > A1 and > A2 (%s, %s, %s)",
                               why(c, MG_LAYOUT_P_B, w0, sizeof w0), why(c, MG_LAYOUT_P_A1, w1, sizeof w1),
                               why(c, MG_LAYOUT_P_A2, w2, sizeof w2));
    }
    return pair_unit(c);
}

/* Alternating and its descriptions; units may touch (B2 = A2) but not overlap. */
int mg_layout__shape_alt(ctx *c)
{
    if (c->g->geo == GEO_ALT_B2A2) c->L->params.value[MG_LAYOUT_P_B2] = V(c, MG_LAYOUT_P_A2);
    int rc = need_cmp(c, MG_LAYOUT_P_B1, MG_LAYOUT_P_A1, 0);
    if (!rc && c->g->geo != GEO_ALT_B2A2) rc = need_cmp(c, MG_LAYOUT_P_B2, MG_LAYOUT_P_A2, 0);
    return rc ? rc : pair_unit(c);
}

int mg_layout__shape_rowcol(ctx *c)
{
    int rc = need_A(c);
    if (rc) return rc;
    long A = V(c, MG_LAYOUT_P_A), n = c->L->n;
    c->L->n_min = A + 1;
    if (n > 0 && !(A < n))
        return mg_layout__fail(c, MG_LAYOUT_EINVALID,
                               "A must be < n (A=%ld, n=%ld): the column needs at least one element", A, n);
    return finish_shape(c, 1, "1", per_rep);
}

int mg_layout__shape_contig_sub(ctx *c)
{
    /* The sub's own rules and block size, then one contiguous type around n/k of them. */
    ctx sc = *c;
    sc.r = c->g;
    int rc = c->g->shape(&sc);
    if (rc) return rc;
    char expr[48];
    snprintf(expr, sizeof expr, "k of %s", c->g->d.name);
    return finish_shape(c, c->L->n_unit, expr, "the elements per block of the sub");
}

/* ------------------------------------------------------------------ */
/* Geometry: where element e lives, from the layout's definition       */
/* ------------------------------------------------------------------ */

static int mul64(int64_t a, int64_t b, int64_t *r) { return !__builtin_mul_overflow(a, b, r); }
static int add64(int64_t a, int64_t b, int64_t *r) { return !__builtin_add_overflow(a, b, r); }

static const row *geo_row(const mg_layout_info *L)
{
    if (L->params.kind == MG_LAYOUT_CONTIGUOUS_SUBTYPE) return &mg_layout__catalog[L->params.value[MG_LAYOUT_P_SUB]];
    return &mg_layout__catalog[L->params.kind];
}

/* The two runs of a pair for Bucket, Alternating and Alternating-repeated. */
static void alt_values(const row *g, const long *v, int64_t *A1, int64_t *A2, int64_t *B1, int64_t *B2)
{
    *A1 = v[MG_LAYOUT_P_A1];
    *A2 = v[MG_LAYOUT_P_A2];
    if (g->geo == GEO_BUCKET) {
        *B1 = *B2 = v[MG_LAYOUT_P_B];
    } else {
        *B1 = v[MG_LAYOUT_P_B1];
        *B2 = g->geo == GEO_ALT_B2A2 ? *A2 : v[MG_LAYOUT_P_B2];
    }
}

static int64_t het_period(int64_t A, int64_t B)
{
    int64_t end = 0, al = mg_layout__het_align();
    for (int t = 0; t < HET_PARTS - 1; t++) end += B * mg_layout__het_sizes[t];
    end += A * mg_layout__het_sizes[HET_PARTS - 1];
    return (end + al - 1) / al * al;
}

/* Returns 0 on arithmetic overflow. */
static int geo_offset(const mg_layout_info *L, int64_t e, int64_t *off, int *size)
{
    const row *g = geo_row(L);
    const long *v = L->params.value;
    int64_t A = v[MG_LAYOUT_P_A], x = 0, t1, t2;
    int ok = 1;
    *size = L->elem_size;
    switch (g->geo) {
    case GEO_CONTIG: x = e; break;
    case GEO_TILED: ok = mul64(e / A, v[MG_LAYOUT_P_B], &t1) && add64(t1, e % A, &x); break;
    case GEO_BLOCK: {
        int64_t u = e / A;
        ok = mul64(u / 2, (int64_t)v[MG_LAYOUT_P_B1] + v[MG_LAYOUT_P_B2], &t1) &&
             add64(t1, (u % 2) * v[MG_LAYOUT_P_B1] + e % A, &x);
        break;
    }
    case GEO_BUCKET:
    case GEO_ALT:
    case GEO_ALT_B2A2: {
        int64_t A1, A2, B1, B2;
        alt_values(g, v, &A1, &A2, &B1, &B2);
        int64_t j = e / (A1 + A2), r = e % (A1 + A2);
        ok = mul64(j, B1 + B2, &t1) && add64(t1, r < A1 ? r : B1 + (r - A1), &x);
        break;
    }
    case GEO_ROWCOL:
        if (e < A)
            x = e;
        else
            ok = mul64(e - A + 1, A, &x);
        break;
    case GEO_HETERO: {
        int64_t B = v[MG_LAYOUT_P_B], j = e / (HET_PARTS * A), r = e % (HET_PARTS * A);
        int part = (int)(r / A);
        int64_t d = 0;
        for (int t = 0; t < part; t++) d += B * mg_layout__het_sizes[t];
        *size = mg_layout__het_sizes[part];
        ok = mul64(j, het_period(A, B), &t1) && add64(t1, d + (r % A) * mg_layout__het_sizes[part], off);
        return ok;
    }
    }
    if (ok) ok = mul64(x, L->elem_size, &t2);
    if (ok) *off = t2;
    return ok;
}

MPI_Aint mg_layout_offset(const mg_layout_info *info, long e, int *size)
{
    int64_t off = -1;
    int sz = 0;
    if (!info || !info->desc || e < 0 || e > info->n || !geo_offset(info, e, &off, &sz)) off = -1;
    if (size) *size = sz;
    return (MPI_Aint)off;
}

int mg_layout_offsets(const mg_layout_info *info, MPI_Aint *offsets, int *sizes)
{
    if (!info || !offsets || info->n <= 0 || !info->desc) return MG_LAYOUT_EARG;
    for (long e = 0; e < info->n; e++) {
        int64_t off;
        int sz;
        if (!geo_offset(info, e, &off, &sz)) return MG_LAYOUT_EINVALID;
        offsets[e] = (MPI_Aint)off;
        if (sizes) sizes[e] = sz;
    }
    return MG_LAYOUT_OK;
}

/* ------------------------------------------------------------------ */
/* Checking                                                            */
/* ------------------------------------------------------------------ */

static const default_rule *find_default(dset set, int id)
{
    for (size_t i = 0; i < mg_layout__ndefaults; i++)
        if (mg_layout__defaults[i].set == set && (int)mg_layout__defaults[i].id == id) return &mg_layout__defaults[i];
    return NULL;
}

/* Fills in the defaults of every parameter the geometry row uses and checks
 * the rules that hold for all layouts (ranges, variant, type). */
static int resolve_params(ctx *c)
{
    mg_layout_params *p = &c->L->params;
    const row *g = c->g;
    unsigned use = g->d.params;

    if (use & P(VARIANT)) {
        if (!(p->given & P(VARIANT))) {
            p->value[MG_LAYOUT_P_VARIANT] = 1;
            p->given |= P(VARIANT);
        } else if (p->value[MG_LAYOUT_P_VARIANT] != 1 && p->value[MG_LAYOUT_P_VARIANT] != 2) {
            return mg_layout__fail(c, MG_LAYOUT_EINVALID, "variant must be 1 or 2 (variant=%ld)",
                                   p->value[MG_LAYOUT_P_VARIANT]);
        }
    }
    if (use & P(TYPE)) {
        if (!(p->given & P(TYPE))) {
            p->value[MG_LAYOUT_P_TYPE] = MG_LAYOUT_INT;
            p->given |= P(TYPE);
        } else if (p->value[MG_LAYOUT_P_TYPE] < 0 || p->value[MG_LAYOUT_P_TYPE] >= MG_LAYOUT_NBASIC) {
            return mg_layout__fail(c, MG_LAYOUT_EINVALID, "type must be one of int char short double byte");
        }
    }
    if ((p->given & P(A)) && p->value[MG_LAYOUT_P_A] < 1)
        return mg_layout__fail(c, MG_LAYOUT_EINVALID, "A must be >= 1 (A=%ld)", p->value[MG_LAYOUT_P_A]);

    int var = (use & P(VARIANT)) ? (int)p->value[MG_LAYOUT_P_VARIANT] - 1 : 0;
    for (int id = 0; id < MG_LAYOUT_NPARAMS; id++) {
        unsigned bit = MG_LAYOUT_BIT(id);
        if (!(use & bit) || !(NUMERIC & bit) || id == MG_LAYOUT_P_A) continue;
        if (!(p->given & bit)) {
            const default_rule *d = find_default(g->defaults, id);
            if (!d) return mg_layout__fail(c, MG_LAYOUT_EINVALID, "%s is required", mg_layout__param_names[id]);
            long v = d->add[var];
            if (d->num[var] != 0) {
                if (!(p->given & P(A)))
                    return mg_layout__fail(c, MG_LAYOUT_EINVALID, "A is required (%s is derived from it)",
                                           mg_layout__param_names[id]);
                long A = p->value[MG_LAYOUT_P_A];
                if (d->den[var] == 2 && A % 2 != 0)
                    return mg_layout__fail(c, MG_LAYOUT_EINVALID, "variant 2 needs an even A (A=%ld)", A);
                v += A * d->num[var] / d->den[var];
                if (v > INT_MAX)
                    return mg_layout__fail(c, MG_LAYOUT_EINVALID, "%s=%ld from A=%ld exceeds INT_MAX",
                                           mg_layout__param_names[id], v, A);
            }
            p->value[id] = v;
            p->given |= bit;
            c->derived |= bit;
        }
        if (p->value[id] < 1) {
            char w[96];
            return mg_layout__fail(c, MG_LAYOUT_EINVALID, "%s must be >= 1 (%s)", mg_layout__param_names[id],
                                   why(c, (mg_layout_param)id, w, sizeof w));
        }
    }
    return MG_LAYOUT_OK;
}

/* Element size, data size, extents; the data starts at offset 0 for every layout. */
static int sizes_and_extents(ctx *c)
{
    mg_layout_info *L = c->L;
    const row *g = c->g;
    int het = g->geo == GEO_HETERO;
    if (het) {
        L->basic = MPI_DATATYPE_NULL;
        L->elem_size = 0;
    } else {
        long b = (g->d.params & P(TYPE)) ? L->params.value[MG_LAYOUT_P_TYPE] : MG_LAYOUT_INT;
        L->basic = mg_layout__basic_mpi(b);
        L->elem_size = mg_layout__basic_sizes[b];
    }
    int64_t per_elem = het ? 1 : L->elem_size, off, span;
    int sz;
    if (!c->r->d.dynamic) {
        if (!geo_offset(L, L->k, &off, &sz)) goto too_large;
        L->type_extent = (MPI_Aint)off;
        span = off / per_elem;
        if (span > INT_MAX)
            return mg_layout__fail(c, MG_LAYOUT_EINVALID, "too large: one block spans %lld elements, more than INT_MAX",
                                   (long long)span);
    }
    if (L->n == 0) return MG_LAYOUT_OK;

    if (!geo_offset(L, L->n - 1, &off, &sz) || !add64(off, sz, &span)) goto too_large;
    L->true_lb = 0;
    L->true_extent = (MPI_Aint)span;
    if (c->r->d.dynamic) {
        if (span / per_elem > INT_MAX)
            return mg_layout__fail(c, MG_LAYOUT_EINVALID,
                                   "too large: the layout spans %lld elements, more than INT_MAX",
                                   (long long)(span / per_elem));
        if (c->r->tight) {
            L->type_extent = L->true_extent;
        } else {
            if (!geo_offset(L, L->n, &off, &sz)) goto too_large;
            L->type_extent = (MPI_Aint)off;
        }
    }
    int64_t ext;
    if (!mul64(L->type_extent, L->count, &ext)) goto too_large;
    L->extent = (MPI_Aint)ext;
    L->buffer_size = L->true_lb + L->true_extent;
    if (het) { /* n/4 elements of each member type */
        L->data_size = 0;
        for (int t = 0; t < HET_PARTS; t++) L->data_size += mg_layout__het_sizes[t];
        L->data_size *= (MPI_Aint)(L->n / HET_PARTS);
    } else {
        L->data_size = (MPI_Aint)L->n * L->elem_size;
    }
    return MG_LAYOUT_OK;
too_large:
    return mg_layout__fail(c, MG_LAYOUT_EINVALID, "too large: offsets overflow");
}

int mg_layout__check_ctx(const mg_layout_params *p, long n, mg_layout_info *info, ctx *c, char *err, size_t errlen)
{
    if (!p || !info) {
        mg_layout__put_msg(err, errlen, "mg_layout_check: NULL argument");
        return MG_LAYOUT_EARG;
    }
    if ((int)p->kind < 0 || p->kind >= MG_LAYOUT_NKINDS) {
        mg_layout__put_msg(err, errlen, "mg_layout_check: bad layout kind %d", (int)p->kind);
        return MG_LAYOUT_EARG;
    }
    memset(info, 0, sizeof *info);
    memset(c, 0, sizeof *c);
    c->r = c->g = &mg_layout__catalog[p->kind];
    c->L = info;
    c->err = err;
    c->errlen = errlen;
    snprintf(c->prefix, sizeof c->prefix, "%s", c->r->d.name);
    info->params = *p;
    info->desc = &c->r->d;
    info->n = n;
    info->basic = MPI_DATATYPE_NULL;

    int rc = mg_layout__takes_check(p, err, errlen);
    if (rc) return rc;
    if (p->kind == MG_LAYOUT_CONTIGUOUS_SUBTYPE) {
        char subs[160];
        if (!(p->given & P(SUB)))
            return mg_layout__fail(c, MG_LAYOUT_EINVALID, "sub is required (sub=%s)",
                                   mg_layout__sub_names("|", subs, sizeof subs));
        c->g = &mg_layout__catalog[p->value[MG_LAYOUT_P_SUB]];
        snprintf(c->prefix, sizeof c->prefix, "%s sub=%s", c->r->d.name, c->g->d.name);
    }
    if (n < 0) return mg_layout__fail(c, MG_LAYOUT_EARG, "n must be >= 0 (n=%ld)", n);
    if (n > INT_MAX) return mg_layout__fail(c, MG_LAYOUT_EINVALID, "n=%ld exceeds INT_MAX", n);
    rc = resolve_params(c);
    if (!rc) rc = c->r->shape(c);
    if (!rc && n > 0 && n < info->n_min)
        rc = mg_layout__fail(c, MG_LAYOUT_EINVALID, "n=%ld is less than the minimum %ld", n, info->n_min);
    if (!rc) rc = sizes_and_extents(c);
    return rc;
}

int mg_layout_check(const mg_layout_params *p, long n, mg_layout_info *info, char *err, size_t errlen)
{
    ctx c;
    return mg_layout__check_ctx(p, n, info, &c, err, errlen);
}

int mg_layout_n_for_bytes(const mg_layout_params *p, MPI_Aint bytes, long *n, char *err, size_t errlen)
{
    mg_layout_info info;
    int rc = mg_layout_check(p, 0, &info, err, errlen);
    if (rc) return rc;
    if (!n || bytes < 0) {
        mg_layout__put_msg(err, errlen, "mg_layout_n_for_bytes: bad argument");
        return MG_LAYOUT_EARG;
    }
    MPI_Aint per = info.elem_size, elems = 1;
    if (per == 0) { /* mixed types: whole blocks only */
        per = 0;
        for (int t = 0; t < HET_PARTS; t++) per += mg_layout__het_sizes[t];
        per *= info.params.value[MG_LAYOUT_P_A];
        elems = info.k;
    }
    if (bytes % per != 0) {
        mg_layout__put_msg(err, errlen, "%s: %ld bytes is not a multiple of %ld bytes", info.desc->name, (long)bytes,
                           (long)per);
        return MG_LAYOUT_EINVALID;
    }
    *n = (long)(bytes / per * elems);
    return MG_LAYOUT_OK;
}
