/* mg_dt_to_mpi: the count-aware normal form as an MPI datatype.
 *
 * Counts, block lengths and element strides beyond int go to the MPI-4 `_c`
 * constructors where the stack has them (MG_HAVE_MPI_LARGE_COUNT). Elsewhere
 * (Open MPI 5) such a node is built from constructors whose int arguments
 * fit: a block of more than INT_MAX elements as an hindexed list of chunks of
 * at most MG_CHUNK_ELEMS elements, more than INT_MAX copies as copies of
 * chunks of copies. Only an index list of more than INT_MAX entries stays
 * MG_DT_ERR_OVERFLOW there (a struct of more than INT_MAX members does on
 * every stack). Inner types are always placed by explicit byte positions
 * (hvector of one block, struct, hindexed), never by their own extent, so
 * their lb/extent do not matter: the result's lb/extent are set once, at the
 * top. */
#include "internal.h"
#include <limits.h>
#include <stdlib.h>

/* Elements per chunk when a block is split for int arguments. */
#define MG_CHUNK_ELEMS ((MPI_Count)1 << 30)

static int ok(int mpi_rc) { return mpi_rc == MPI_SUCCESS ? MG_DT_SUCCESS : MG_DT_ERR_MPI; }
static int fits_int(MPI_Count v) { return v >= INT_MIN && v <= INT_MAX; }
static void drop(MPI_Datatype *t)
{
    if (*t != MPI_DATATYPE_NULL) MPI_Type_free(t);
}

/* Two pieces at byte positions 0 and d2 (b may be MPI_DATATYPE_NULL: a alone). */
static int pair(MPI_Datatype a, MPI_Datatype b, MPI_Aint d2, MPI_Datatype *out)
{
    if (b == MPI_DATATYPE_NULL) return ok(MPI_Type_dup(a, out));
    int ones[2] = {1, 1};
    MPI_Aint d[2] = {0, d2};
    MPI_Datatype ty[2] = {a, b};
    return ok(MPI_Type_create_struct(2, ones, d, ty, out));
}

/* n elements of e back to back. */
static int contig(MPI_Count n, MPI_Datatype e, MPI_Datatype *out)
{
    if (fits_int(n)) return ok(MPI_Type_contiguous((int)n, e, out));
#ifdef MG_HAVE_MPI_LARGE_COUNT
    return ok(MPI_Type_contiguous_c(n, e, out));
#else
    /* chunks of MG_CHUNK_ELEMS elements and the rest, as one index list */
    MPI_Aint ext, lb;
    MPI_Count k = (n + MG_CHUNK_ELEMS - 1) / MG_CHUNK_ELEMS;
    if (!fits_int(k)) return MG_DT_ERR_OVERFLOW;
    MG_TRY(ok(MPI_Type_get_extent(e, &lb, &ext)));
    int *lens = malloc(sizeof(int) * (size_t)k);
    MPI_Aint *d = malloc(sizeof(MPI_Aint) * (size_t)k);
    int rc = lens && d ? MG_DT_SUCCESS : MG_DT_ERR_NOMEM;
    for (MPI_Count i = 0; !rc && i < k; i++) {
        MPI_Count first = i * MG_CHUNK_ELEMS;
        lens[i] = (int)(n - first < MG_CHUNK_ELEMS ? n - first : MG_CHUNK_ELEMS);
        d[i] = (MPI_Aint)first * ext;
    }
    if (!rc) rc = ok(MPI_Type_create_hindexed((int)k, lens, d, e, out));
    free(lens);
    free(d);
    return rc;
#endif
}

/* count copies of k, stride bytes apart (one copy per block). */
static int copies(MPI_Count count, MPI_Aint stride, MPI_Datatype k, MPI_Datatype *out)
{
    if (stride == -1) {
        /* Open MPI packs an hvector of byte stride -1 as if it were
         * contiguous; contiguous copies of k resized to extent -1 are the same
         * typemap and pack right in MPICH and Open MPI (MPICH steps wrongly by
         * count * -1 only when such a contiguous type is itself repeated by
         * its extent, which never happens here: tests/c/test_dt_stackbugs.c). */
        MPI_Datatype r;
        MG_TRY(ok(MPI_Type_create_resized(k, 0, -1, &r)));
        int rc = fits_int(count) ? ok(MPI_Type_contiguous((int)count, r, out)) : MG_DT_ERR_OVERFLOW;
#ifdef MG_HAVE_MPI_LARGE_COUNT
        if (!fits_int(count)) rc = ok(MPI_Type_contiguous_c(count, r, out));
#endif
        MPI_Type_free(&r);
        if (rc != MG_DT_ERR_OVERFLOW) return rc;
    } else if (fits_int(count)) {
        return ok(MPI_Type_create_hvector((int)count, 1, stride, k, out));
    } else {
#ifdef MG_HAVE_MPI_LARGE_COUNT
        return ok(MPI_Type_create_hvector_c(count, 1, stride, k, out));
#endif
    }
    /* copies of chunks of MG_CHUNK_ELEMS copies, then the rest */
    MPI_Count q = count / MG_CHUNK_ELEMS, r = count % MG_CHUNK_ELEMS;
    MPI_Aint big = stride * (MPI_Aint)MG_CHUNK_ELEMS;
    MPI_Datatype chunk = MPI_DATATYPE_NULL, a = MPI_DATATYPE_NULL, b = MPI_DATATYPE_NULL;
    int rc = copies(MG_CHUNK_ELEMS, stride, k, &chunk);
    if (!rc) rc = copies(q, big, chunk, &a);
    if (!rc && r) rc = copies(r, stride, k, &b);
    if (!rc) rc = pair(a, b, (MPI_Aint)q * big, out);
    drop(&chunk);
    drop(&a);
    drop(&b);
    return rc;
}

static int build(const mg_node *n, MPI_Datatype *out);

/* VEC over BLOCK: count blocks of b elements of e, stride bytes apart. */
static int strided(MPI_Count count, MPI_Count b, MPI_Aint stride, MPI_Datatype e, MPI_Count esize, MPI_Datatype *out)
{
    if (stride != -1 && fits_int(count) && fits_int(b)) {
        if (stride % esize == 0 && fits_int(stride / esize))
            return ok(MPI_Type_vector((int)count, (int)b, (int)(stride / esize), e, out));
        return ok(MPI_Type_create_hvector((int)count, (int)b, stride, e, out));
    }
#ifdef MG_HAVE_MPI_LARGE_COUNT
    if (stride != -1) return ok(MPI_Type_create_hvector_c(count, b, stride, e, out));
#endif
    MPI_Datatype block = MPI_DATATYPE_NULL;
    if (b > 1) MG_TRY(contig(b, e, &block));
    int rc = copies(count, stride, b > 1 ? block : e, out);
    drop(&block);
    return rc;
}

/* Index list entries for a block of len elements: one per chunk. */
static MPI_Count chunks(MPI_Count len)
{
    return len <= MG_CHUNK_ELEMS ? 1 : (len + MG_CHUNK_ELEMS - 1) / MG_CHUNK_ELEMS;
}

static int build_idx(const mg_node *n, MPI_Datatype *out)
{
    int small = fits_int(n->count);
    for (MPI_Count i = 0; small && i < n->count; i++) small = fits_int(mg__len(n, i));
    if (small && n->fixed)
        return ok(MPI_Type_create_hindexed_block((int)n->count, (int)mg__len(n, 0), n->displs, n->elem, out));
#ifdef MG_HAVE_MPI_LARGE_COUNT
    if (!small) {
        MPI_Count *d = malloc(sizeof(MPI_Count) * (size_t)(n->count + 1));
        if (!d) return MG_DT_ERR_NOMEM;
        for (MPI_Count i = 0; i < n->count; i++) d[i] = n->displs[i];
        int rc = n->fixed ? MPI_Type_create_hindexed_block_c(n->count, mg__len(n, 0), d, n->elem, out)
                          : MPI_Type_create_hindexed_c(n->count, n->lens, d, n->elem, out);
        free(d);
        return ok(rc);
    }
#endif
    /* Blocks longer than int are cut into chunks: adjacent blocks of one
     * type are the same typemap. */
    MPI_Count m = 0;
    for (MPI_Count i = 0; i < n->count && fits_int(m); i++) m += chunks(mg__len(n, i));
    if (!fits_int(m)) return MG_DT_ERR_OVERFLOW;
    int *lens = malloc(sizeof(int) * (size_t)(m + 1));
    MPI_Aint *d = malloc(sizeof(MPI_Aint) * (size_t)(m + 1));
    int rc = lens && d ? MG_DT_SUCCESS : MG_DT_ERR_NOMEM;
    for (MPI_Count i = 0, j = 0; !rc && i < n->count; i++)
        for (MPI_Count c = 0, k = chunks(mg__len(n, i)); c < k; c++, j++) {
            MPI_Count first = c * MG_CHUNK_ELEMS, rest = mg__len(n, i) - first;
            lens[j] = (int)(rest < MG_CHUNK_ELEMS ? rest : MG_CHUNK_ELEMS);
            d[j] = n->displs[i] + (MPI_Aint)(first * n->esize);
        }
    if (!rc) rc = ok(MPI_Type_create_hindexed((int)m, lens, d, n->elem, out));
    free(lens);
    free(d);
    return rc;
}

static int resized_fits(const mg_node *n);
static int resized_copies(const mg_node *n, MPI_Datatype *out);

/* resized: members that are repetitions as resized_copies (MG_DT_FORM_RESIZED). */
static int build_seq(const mg_node *n, int resized, MPI_Datatype *out)
{
    /* Open MPI crashes on MPI_Type_create_struct with count 0 (the same
     * empty typemap, lb 0 and extent 0, as a contiguous type of none). */
    if (n->count == 0) return ok(MPI_Type_contiguous(0, MPI_BYTE, out));
    if (!fits_int(n->count)) return MG_DT_ERR_OVERFLOW;
    int c = (int)n->count;
    int *ones = malloc(sizeof(int) * (size_t)(c + 1));
    MPI_Datatype *types = calloc((size_t)c + 1, sizeof(MPI_Datatype));
    int rc = ones && types ? MG_DT_SUCCESS : MG_DT_ERR_NOMEM, built = 0;
    for (; built < c && !rc; built++) {
        const mg_node *k = n->kids[built];
        ones[built] = 1;
        rc = resized && resized_fits(k) ? resized_copies(k, &types[built]) : build(k, &types[built]);
    }
    if (rc) built--; /* the failed one was not created */
    if (!rc) rc = ok(MPI_Type_create_struct(c, ones, n->displs, types, out));
    for (int i = 0; i < built; i++) MPI_Type_free(&types[i]);
    free(ones);
    free(types);
    return rc;
}

/* Recursion follows the nesting of the normal form, which is shallow. */
static int build(const mg_node *n, MPI_Datatype *out)
{
    switch (n->kind) {
    case MG_N_BLOCK: return contig(n->count, n->elem, out);
    case MG_N_VEC:
        if (n->kid->kind == MG_N_BLOCK)
            return strided(n->count, n->kid->count, n->stride, n->kid->elem, n->kid->esize, out);
        MPI_Datatype kid;
        MG_TRY(build(n->kid, &kid));
        int rc = copies(n->count, n->stride, kid, out);
        MPI_Type_free(&kid);
        return rc;
    case MG_N_IDX: return build_idx(n, out);
    case MG_N_SEQ: return build_seq(n, 0, out);
    }
    return MG_DT_ERR_ARG;
}

typedef struct {
    const mg_dt *t;
    MPI_Count count;
    int form;
    mg_dt_form_policy policy; /* MG_DT_FORM_AUTO's */
    MPI_Datatype *out;
} rebuild_ctx;

/* MG_DT_FORM_RESIZED: the outermost repetition, count copies of k at a
 * positive stride, as MPI_Type_contiguous of k resized to that stride -- where
 * MPICH moves that form faster (docs/dt-engine.md): many small copies in a
 * message beyond its first few kB. Fewer or larger copies stay vectors. */
#define MG_RESIZED_MIN_BYTES 8192
#define MG_RESIZED_MAX_COPY  1024
/* copies at a positive stride, each small enough to be a resized element */
static int small_copies(const mg_node *n)
{
    return n && n->kind == MG_N_VEC && n->stride > 0 && n->kid->size <= MG_RESIZED_MAX_COPY;
}
static int resized_fits(const mg_node *n) { return small_copies(n) && n->size >= MG_RESIZED_MIN_BYTES; }
/* A plain vector of blocks of min..max bytes, which the policy may want as
 * resized copies at any size (mg_dt_form_policy). */
static int resized_blocks(const mg_node *n, MPI_Count min, MPI_Count max)
{
    return min > 0 && n && n->kind == MG_N_VEC && n->stride > 0 && n->kid->kind == MG_N_BLOCK &&
           n->kid->size >= min && n->kid->size <= max;
}

static int resized_copies(const mg_node *n, MPI_Datatype *out)
{
    MPI_Datatype kid = MPI_DATATYPE_NULL, step = MPI_DATATYPE_NULL;
    int rc = build(n->kid, &kid);
    if (!rc) rc = ok(MPI_Type_create_resized(kid, 0, n->stride, &step));
    if (!rc) rc = contig(n->count, step, out);
    drop(&kid);
    drop(&step);
    return rc;
}

/* MG_DT_FORM_LIST: the blocks of a node of one element type as one index
 * list. Lists longer than MG_LIST_MAX_BLOCKS (their displacements alone
 * would rival the data), of blocks above MG_LIST_MAX_COPY bytes on average
 * (where a vector is as fast) or with one block of half the data or more
 * (the average says nothing of the others; Test 11 with A=10000, a 40 kB row
 * and 239 column elements, moved 1.22-1.27x slower on Intel MPI as a list
 * than as the struct of a contiguous row and a vector) are not built. */
#define MG_LIST_MAX_BLOCKS ((MPI_Count)1 << 20)
#define MG_LIST_MAX_COPY   512

/* The element type of every block of n (its size in *esize), or
 * MPI_DATATYPE_NULL if they differ. */
static MPI_Datatype sole_elem(const mg_node *n, MPI_Count *esize)
{
    *esize = 0;
    switch (n->kind) {
    case MG_N_BLOCK:
    case MG_N_IDX: *esize = n->esize; return n->elem;
    case MG_N_VEC: return sole_elem(n->kid, esize);
    case MG_N_SEQ: {
        MPI_Count sz = 0, ksz;
        MPI_Datatype e = n->count ? sole_elem(n->kids[0], &sz) : MPI_DATATYPE_NULL;
        for (MPI_Count i = 1; i < n->count && e != MPI_DATATYPE_NULL; i++)
            if (sole_elem(n->kids[i], &ksz) != e || ksz != sz) e = MPI_DATATYPE_NULL;
        *esize = sz;
        return e;
    }
    }
    return MPI_DATATYPE_NULL;
}

static int widest(MPI_Aint disp, MPI_Count bytes, void *arg)
{
    (void)disp;
    MPI_Count *max = arg;
    if (bytes > *max) *max = bytes;
    return 0;
}

static int list_fits(const mg_node *n)
{
    MPI_Count esize, max = 0;
    return n && n->kind != MG_N_BLOCK && n->nblocks >= 2 && n->nblocks <= MG_LIST_MAX_BLOCKS &&
           n->size / n->nblocks <= MG_LIST_MAX_COPY && sole_elem(n, &esize) != MPI_DATATYPE_NULL && esize > 0 &&
           !mg__walk(n, 0, widest, &max) && 2 * max < n->size;
}

typedef struct {
    MPI_Aint *displs;
    MPI_Count *bytes, n, cap;
} block_list;

static int add_block(MPI_Aint disp, MPI_Count bytes, void *arg)
{
    block_list *l = arg;
    if (!bytes) return 0; /* not counted in nblocks */
    if (l->n == l->cap) return 1;
    l->displs[l->n] = disp;
    l->bytes[l->n++] = bytes;
    return 0;
}

/* Blocks of unequal lengths are cut into pieces of their common divisor
 * where that adds at most half as many entries again: MPI libraries move a
 * list of equal blocks (hindexed_block) faster than one of varying lengths
 * (the row-column layout of Test 11 on Intel MPI, docs/dt-engine.md). */
static int list_type(const block_list *l, MPI_Datatype e, MPI_Count esize, MPI_Count elems, MPI_Datatype *out)
{
    MPI_Count g = 0, m = l->n;
    for (MPI_Count i = 0; i < m; i++) g = mg__gcd(l->bytes[i] / esize, g); /* blocks are not empty: g >= 1 */
    if (elems / g <= m + m / 2) {
        MPI_Aint *d = malloc(sizeof(MPI_Aint) * (size_t)(elems / g));
        if (!d) return MG_DT_ERR_NOMEM;
        MPI_Count k = 0;
        for (MPI_Count i = 0; i < m; i++)
            for (MPI_Aint at = 0; at < l->bytes[i]; at += g * esize) d[k++] = l->displs[i] + at;
        int rc = ok(MPI_Type_create_hindexed_block((int)k, (int)g, d, e, out));
        free(d);
        return rc;
    }
    int *lens = malloc(sizeof(int) * (size_t)m);
    if (!lens) return MG_DT_ERR_NOMEM;
    for (MPI_Count i = 0; i < m; i++) lens[i] = (int)(l->bytes[i] / esize);
    int rc = ok(MPI_Type_create_hindexed((int)m, lens, l->displs, e, out));
    free(lens);
    return rc;
}

static int build_list(const mg_node *n, MPI_Datatype *out)
{
    MPI_Count esize, m = n->nblocks;
    MPI_Datatype e = sole_elem(n, &esize);
    block_list l = {malloc(sizeof(MPI_Aint) * (size_t)m), malloc(sizeof(MPI_Count) * (size_t)m), 0, m};
    int rc = l.displs && l.bytes ? MG_DT_SUCCESS : MG_DT_ERR_NOMEM;
    /* nblocks counts the blocks walk sees; were it not so, a vector form */
    if (!rc && (mg__walk(n, 0, add_block, &l) || l.n != m))
        rc = build(n, out);
    else if (!rc)
        rc = list_type(&l, e, esize, n->size / esize, out);
    free(l.displs);
    free(l.bytes);
    return rc;
}

/* MG_DT_FORM_COPIES. A node that is copies of a two-block period whose
 * copies join: the count-aware form rotates them into a head block, a vector
 * of joined blocks (each the period's second block and the next copy's
 * first) and a tail block; unrotated() builds the copies of the period. */
static int rotated_period(const mg_node *n)
{
    if (!n || n->kind != MG_N_SEQ || n->count != 3) return 0;
    const mg_node *h = n->kids[0], *v = n->kids[1], *t = n->kids[2];
    if (h->kind != MG_N_BLOCK || v->kind != MG_N_VEC || v->kid->kind != MG_N_BLOCK || t->kind != MG_N_BLOCK)
        return 0;
    if (h->elem != t->elem || v->kid->elem != h->elem || h->esize != t->esize || v->kid->esize != h->esize)
        return 0;
    MPI_Aint d0 = n->displs[0], d1 = n->displs[1], d2 = n->displs[2], p = v->stride;
    return h->size + t->size == v->kid->size && p > v->kid->size && d1 + t->size == d0 + p &&
           d2 == d1 + (MPI_Aint)v->count * p;
}

static int unrotated(const mg_node *n, MPI_Aint disp, MPI_Datatype *out)
{
    const mg_node *h = n->kids[0], *v = n->kids[1], *t = n->kids[2];
    if (!fits_int(h->count) || !fits_int(t->count)) return MG_DT_ERR_OVERFLOW;
    int lens[2] = {(int)h->count, (int)t->count};
    MPI_Aint displs[2] = {disp + n->displs[0], disp + n->displs[1]};
    MPI_Datatype pair = MPI_DATATYPE_NULL, period = MPI_DATATYPE_NULL;
    int rc = ok(MPI_Type_create_hindexed(2, lens, displs, h->elem, &pair));
    if (!rc) rc = ok(MPI_Type_create_resized(pair, 0, v->stride, &period));
    if (!rc) rc = contig(v->count + 1, period, out);
    drop(&pair);
    drop(&period);
    return rc;
}

static int rebuild_visit(const mg_node *n, MPI_Aint disp, void *arg)
{
    const rebuild_ctx *r = arg;
    MPI_Datatype *out = r->out;
    MPI_Datatype body = MPI_DATATYPE_NULL, placed = MPI_DATATYPE_NULL;
    int form = r->form, small_resized = 0, listed = 0; /* listed: list_fits(n) */
    if (form == MG_DT_FORM_AUTO) {
        const mg_dt_form_policy p = r->policy;
        int small = p.list_below < 0 || (n && n->size < p.list_below);
        small_resized = p.list_below && small &&
                        (resized_blocks(n, p.resized_block, p.resized_max) ||
                         (rotated_period(n) && resized_blocks(n->kids[1], p.resized_block, p.resized_max)));
        int unrotate = p.repeat_from > 0 && rotated_period(n) && n->kids[1]->kid->size >= p.repeat_from;
        listed = !unrotate && !small_resized && p.list_below && small && list_fits(n);
        form = unrotate ? MG_DT_FORM_COPIES : small_resized ? MG_DT_FORM_RESIZED : listed ? MG_DT_FORM_LIST : p.base;
    }
    /* list_fits walks every block: once per element form */
    if (form == MG_DT_FORM_LIST && !listed) listed = list_fits(n);
    int rc;
    if (!n)
        rc = ok(MPI_Type_contiguous(0, MPI_BYTE, &body));
    else if (form == MG_DT_FORM_COPIES && rotated_period(n)) {
        rc = unrotated(n, disp, &body);
        disp = 0; /* the period's displacements include it */
    } else if (listed)
        rc = build_list(n, &body);
    else if (form == MG_DT_FORM_RESIZED && n->kind == MG_N_SEQ)
        rc = build_seq(n, 1, &body);
    else if (form == MG_DT_FORM_RESIZED && (small_resized || resized_fits(n)))
        rc = resized_copies(n, &body);
    else
        rc = build(n, &body);
    if (!rc && n && disp) {
        int one = 1;
        rc = ok(MPI_Type_create_hindexed_block(1, one, &disp, body, &placed));
    }
    /* lb and extent of MPI_Type_contiguous(count, t), so arrays of the result
     * line up as arrays of count elements of t would. */
    if (!rc) {
        MPI_Aint lb, extent;
        mg__count_bounds(r->t, r->count, &lb, &extent);
        rc = ok(MPI_Type_create_resized(placed != MPI_DATATYPE_NULL ? placed : body, lb, extent, out));
    }
    if (!rc) rc = ok(MPI_Type_commit(out));
    if (rc && *out != MPI_DATATYPE_NULL) MPI_Type_free(out);
    drop(&body);
    drop(&placed);
    return rc;
}

/* count copies of the one-element form: its lb and extent are t's, so the
 * array has those of MPI_Type_contiguous(count, t). */
static int repeated(const mg_dt *t, MPI_Count count, int form, mg_dt_form_policy p, MPI_Datatype *out)
{
    MPI_Datatype one = MPI_DATATYPE_NULL;
    rebuild_ctx r = {t, 1, form, p, &one};
    int rc = mg__repeat(t, 1, rebuild_visit, &r);
    if (!rc) rc = contig(count, one, out);
    if (!rc) rc = ok(MPI_Type_commit(out));
    if (rc && *out != MPI_DATATYPE_NULL) MPI_Type_free(out);
    drop(&one);
    return rc;
}

/* form: MG_DT_FORM_AUTO with policy p, or a form forced (p unused) */
static int to_mpi(const mg_dt *t, MPI_Count count, int form, mg_dt_form_policy p, MPI_Datatype *out)
{
    int copies = form == MG_DT_FORM_COPIES ||
                 (form == MG_DT_FORM_AUTO &&
                  (p.base == MG_DT_FORM_COPIES || (p.repeat_from > 0 && t->size >= p.repeat_from)));
    if (copies && count > 1 && t->extent > 0) return repeated(t, count, form, p, out);
    rebuild_ctx r = {t, count, form, p, out};
    return mg__repeat(t, count, rebuild_visit, &r);
}

int mg_dt_to_mpi_policy(const mg_dt *t, MPI_Count count, const mg_dt_form_policy *policy, MPI_Datatype *out)
{
    if (out) *out = MPI_DATATYPE_NULL;
    if (!t || !out || count < 0 || !mg__policy_valid(policy)) return MG_DT_ERR_ARG;
    return to_mpi(t, count, MG_DT_FORM_AUTO, *policy, out);
}

int mg_dt_to_mpi_form(const mg_dt *t, MPI_Count count, int form, MPI_Datatype *out)
{
    if (out) *out = MPI_DATATYPE_NULL;
    if (!t || !out || count < 0 || form < MG_DT_FORM_AUTO || form > MG_DT_FORM_COPIES) return MG_DT_ERR_ARG;
    mg_dt_form_policy p = {0};
    if (form == MG_DT_FORM_AUTO) {
        int rc = mg_dt_form_policy_for(NULL, &p);
        if (rc) return rc;
    }
    return to_mpi(t, count, form, p, out);
}

int mg_dt_to_mpi(const mg_dt *t, MPI_Count count, MPI_Datatype *out)
{
    return mg_dt_to_mpi_form(t, count, MG_DT_FORM_AUTO, out);
}
