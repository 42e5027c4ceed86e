/* mg_dt_to_mpi: the count-aware normal form as an MPI datatype. */
#include "internal.h"
#include <limits.h>
#include <stdlib.h>

static int ok(int mpi_rc) { return mpi_rc == MPI_SUCCESS ? MG_DT_SUCCESS : MG_DT_ERR_MPI; }
static int fits_int(MPI_Count v) { return v >= INT_MIN && v <= INT_MAX; }

/* Counts beyond int need the MPI-4 `_c` constructors. */
#ifdef MG_HAVE_MPI_LARGE_COUNT
#define LARGE(x) (x)
#else
#define LARGE(x) MG_DT_ERR_OVERFLOW
#endif

static int contig(MPI_Count n, MPI_Datatype e, MPI_Datatype *out)
{
    if (fits_int(n)) return ok(MPI_Type_contiguous((int)n, e, out));
    return LARGE(ok(MPI_Type_contiguous_c(n, e, out)));
}

static int hvector(MPI_Count count, MPI_Count block, MPI_Aint stride, MPI_Datatype e, MPI_Datatype *out)
{
    if (stride == -1 && fits_int(count) && fits_int(block)) {
        /* Open MPI packs an hvector of byte stride -1 as if it were contiguous;
         * the same layout as explicit displacements is packed right. */
        MPI_Aint *d = malloc(sizeof(MPI_Aint) * (size_t)(count + 1));
        if (!d) return MG_DT_ERR_NOMEM;
        for (MPI_Count i = 0; i < count; i++) d[i] = -(MPI_Aint)i;
        int rc = ok(MPI_Type_create_hindexed_block((int)count, (int)block, d, e, out));
        free(d);
        return rc;
    }
    if (fits_int(count) && fits_int(block)) return ok(MPI_Type_create_hvector((int)count, (int)block, stride, e, out));
    return LARGE(ok(MPI_Type_create_hvector_c(count, block, stride, e, out)));
}

static int build(const mg_node *n, MPI_Datatype *out);

static int build_idx(const mg_node *n, MPI_Datatype *out)
{
    int small = fits_int(n->count);
    for (MPI_Count i = 0; small && i < n->count; i++) small = fits_int(n->lens[i]);
    if (!small) {
#ifdef MG_HAVE_MPI_LARGE_COUNT
        MPI_Count *d = malloc(sizeof(MPI_Count) * (size_t)(n->count + 1));
        if (!d) return MG_DT_ERR_NOMEM;
        for (MPI_Count i = 0; i < n->count; i++) d[i] = n->displs[i];
        int rc = n->fixed ? MPI_Type_create_hindexed_block_c(n->count, n->lens[0], d, n->elem, out)
                          : MPI_Type_create_hindexed_c(n->count, n->lens, d, n->elem, out);
        free(d);
        return ok(rc);
#else
        return MG_DT_ERR_OVERFLOW;
#endif
    }
    if (n->fixed) return ok(MPI_Type_create_hindexed_block((int)n->count, (int)n->lens[0], n->displs, n->elem, out));
    int *lens = malloc(sizeof(int) * (size_t)(n->count + 1));
    if (!lens) return MG_DT_ERR_NOMEM;
    for (MPI_Count i = 0; i < n->count; i++) lens[i] = (int)n->lens[i];
    int rc = ok(MPI_Type_create_hindexed((int)n->count, lens, n->displs, n->elem, out));
    free(lens);
    return rc;
}

static int build_seq(const mg_node *n, MPI_Datatype *out)
{
    if (!fits_int(n->count)) return MG_DT_ERR_OVERFLOW;
    int c = (int)n->count;
    int *ones = malloc(sizeof(int) * (size_t)(c + 1));
    MPI_Datatype *types = calloc((size_t)c + 1, sizeof(MPI_Datatype));
    int rc = ones && types ? MG_DT_SUCCESS : MG_DT_ERR_NOMEM, built = 0;
    for (; built < c && !rc; built++) {
        ones[built] = 1;
        rc = build(n->kids[built], &types[built]);
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
        if (n->kid->kind == MG_N_BLOCK) {
            if (n->stride != -1 && n->stride % n->kid->esize == 0 && fits_int(n->count) && fits_int(n->kid->count) &&
                fits_int(n->stride / n->kid->esize))
                return ok(MPI_Type_vector((int)n->count, (int)n->kid->count, (int)(n->stride / n->kid->esize),
                                          n->kid->elem, out));
            return hvector(n->count, n->kid->count, n->stride, n->kid->elem, out);
        } else {
            MPI_Datatype kid;
            MG_TRY(build(n->kid, &kid));
            int rc = hvector(n->count, 1, n->stride, kid, out);
            MPI_Type_free(&kid);
            return rc;
        }
    case MG_N_IDX: return build_idx(n, out);
    case MG_N_SEQ: return build_seq(n, out);
    }
    return MG_DT_ERR_ARG;
}

typedef struct {
    const mg_dt *t;
    MPI_Count count;
    MPI_Datatype *out;
} rebuild_ctx;

static int rebuild_visit(const mg_node *n, MPI_Aint disp, void *arg)
{
    const rebuild_ctx *r = arg;
    const mg_dt *t = r->t;
    MPI_Count count = r->count;
    MPI_Datatype *out = r->out;
    MPI_Datatype body = MPI_DATATYPE_NULL, placed = MPI_DATATYPE_NULL;
    int rc = n ? build(n, &body) : ok(MPI_Type_contiguous(0, MPI_BYTE, &body));
    if (!rc && n && disp) {
        int one = 1;
        rc = ok(MPI_Type_create_hindexed_block(1, one, &disp, body, &placed));
    }
    /* lb and extent of MPI_Type_contiguous(count, t), so arrays of the result
     * line up as arrays of count elements of t would. */
    if (!rc) {
        MPI_Aint lb = t->lb, ext = t->extent, span = count ? (count - 1) * ext : 0;
        MPI_Aint clb = count ? lb + (ext < 0 ? span : 0) : 0;
        MPI_Aint cub = count ? lb + ext + (ext > 0 ? span : 0) : 0;
        rc = ok(MPI_Type_create_resized(placed != MPI_DATATYPE_NULL ? placed : body, clb, cub - clb, out));
    }
    if (!rc) rc = ok(MPI_Type_commit(out));
    if (rc && *out != MPI_DATATYPE_NULL) MPI_Type_free(out);
    if (body != MPI_DATATYPE_NULL) MPI_Type_free(&body);
    if (placed != MPI_DATATYPE_NULL) MPI_Type_free(&placed);
    return rc;
}

int mg_dt_to_mpi(const mg_dt *t, MPI_Count count, MPI_Datatype *out)
{
    if (!t || !out || count < 0) return MG_DT_ERR_ARG;
    *out = MPI_DATATYPE_NULL;
    rebuild_ctx r = {t, count, out};
    return mg__repeat(t, count, rebuild_visit, &r);
}
