/* Building a layout's MPI datatypes: one builder per description of the
 * catalog (layouts.c), mg_layout_build and the reference type of every layout. */
#include "layouts_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* Building                                                            */
/* ------------------------------------------------------------------ */

static void free_type(MPI_Datatype *t)
{
    if (*t != MPI_DATATYPE_NULL) MPI_Type_free(t);
    *t = MPI_DATATYPE_NULL;
}

static int mpi_ok(ctx *c, int rc, const char *call)
{
    if (rc == MPI_SUCCESS) return MG_LAYOUT_OK;
    char s[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(rc, s, &len) != MPI_SUCCESS) snprintf(s, sizeof s, "error %d", rc);
    return mg_layout__fail(c, MG_LAYOUT_EMPI, "%s failed: %s", call, s);
}

static int iv(const ctx *c, mg_layout_param id) { return (int)c->L->params.value[id]; }
static MPI_Aint es(const ctx *c) { return c->L->elem_size; }

/* Wraps `inner` into resized(0, extent) and frees it. */
static int resize(ctx *c, MPI_Datatype *inner, MPI_Aint extent, MPI_Datatype *out)
{
    int rc = mpi_ok(c, MPI_Type_create_resized(*inner, 0, extent, out), "MPI_Type_create_resized");
    free_type(inner);
    return rc;
}

int mg_layout__build_contig(ctx *c, MPI_Datatype *out)
{
    *out = c->L->basic; /* predefined: nothing to build or free */
    return MG_LAYOUT_OK;
}

int mg_layout__build_tiled(ctx *c, MPI_Datatype *out)
{
    MPI_Datatype t = MPI_DATATYPE_NULL;
    int rc = mpi_ok(c, MPI_Type_contiguous(iv(c, MG_LAYOUT_P_A), c->L->basic, &t), "MPI_Type_contiguous");
    return rc ? rc : resize(c, &t, (MPI_Aint)iv(c, MG_LAYOUT_P_B) * es(c), out);
}

int mg_layout__build_block(ctx *c, MPI_Datatype *out)
{
    int displs[2] = {0, iv(c, MG_LAYOUT_P_B1)};
    MPI_Datatype t = MPI_DATATYPE_NULL;
    int rc = mpi_ok(c, MPI_Type_create_indexed_block(2, iv(c, MG_LAYOUT_P_A), displs, c->L->basic, &t),
                    "MPI_Type_create_indexed_block");
    MPI_Aint ext = ((MPI_Aint)iv(c, MG_LAYOUT_P_B1) + iv(c, MG_LAYOUT_P_B2)) * es(c);
    return rc ? rc : resize(c, &t, ext, out);
}

static int build_pair(ctx *c, int B1, MPI_Aint ext, MPI_Datatype *out)
{
    int blens[2] = {iv(c, MG_LAYOUT_P_A1), iv(c, MG_LAYOUT_P_A2)}, displs[2] = {0, B1};
    MPI_Datatype t = MPI_DATATYPE_NULL;
    int rc = mpi_ok(c, MPI_Type_indexed(2, blens, displs, c->L->basic, &t), "MPI_Type_indexed");
    return rc ? rc : resize(c, &t, ext, out);
}

int mg_layout__build_bucket(ctx *c, MPI_Datatype *out)
{
    int B = iv(c, MG_LAYOUT_P_B);
    return build_pair(c, B, 2 * (MPI_Aint)B * es(c), out);
}

/* Also Alternating-repeated, whose B2 (= A2) mg_layout__shape_alt stored in the value array. */
int mg_layout__build_alt(ctx *c, MPI_Datatype *out)
{
    MPI_Aint ext = ((MPI_Aint)iv(c, MG_LAYOUT_P_B1) + iv(c, MG_LAYOUT_P_B2)) * es(c);
    return build_pair(c, iv(c, MG_LAYOUT_P_B1), ext, out);
}

int mg_layout__build_hetero(ctx *c, MPI_Datatype *out)
{
    int A = iv(c, MG_LAYOUT_P_A);
    int blens[HET_PARTS];
    MPI_Aint displs[HET_PARTS];
    MPI_Datatype types[HET_PARTS];
    MPI_Aint d = 0;
    for (int t = 0; t < HET_PARTS; t++) {
        blens[t] = A;
        displs[t] = d;
        types[t] = mg_layout__het_type(t);
        d += (MPI_Aint)iv(c, MG_LAYOUT_P_B) * mg_layout__het_sizes[t]; /* stride in units of this member */
    }
    /* No resize: the padding MPI adds for alignment is part of what Test 2 looks at. */
    return mpi_ok(c, MPI_Type_create_struct(HET_PARTS, blens, displs, types, out), "MPI_Type_create_struct");
}

int mg_layout__build_contig_sub(ctx *c, MPI_Datatype *out)
{
    MPI_Datatype blk = MPI_DATATYPE_NULL;
    int rc = c->g->build(c, &blk);
    if (rc) return rc;
    rc = mpi_ok(c, MPI_Type_contiguous((int)(c->L->n / c->L->n_unit), blk, out), "MPI_Type_contiguous");
    free_type(&blk);
    return rc;
}

int mg_layout__build_tiled_struct(ctx *c, MPI_Datatype *out)
{
    MPI_Datatype tiled = MPI_DATATYPE_NULL, m[2] = {MPI_DATATYPE_NULL, MPI_DATATYPE_NULL};
    int S[2] = {iv(c, MG_LAYOUT_P_S1), iv(c, MG_LAYOUT_P_S2)}, blens[2] = {1, 1};
    MPI_Aint displs[2] = {0, (MPI_Aint)S[0] * iv(c, MG_LAYOUT_P_B) * es(c)};
    int rc = mg_layout__build_tiled(c, &tiled);
    for (int i = 0; i < 2 && !rc; i++) rc = mpi_ok(c, MPI_Type_contiguous(S[i], tiled, &m[i]), "MPI_Type_contiguous");
    if (!rc) rc = mpi_ok(c, MPI_Type_create_struct(2, blens, displs, m, out), "MPI_Type_create_struct");
    free_type(&tiled);
    free_type(&m[0]);
    free_type(&m[1]);
    return rc;
}

int mg_layout__build_tiled_vector(ctx *c, MPI_Datatype *out)
{
    int A = iv(c, MG_LAYOUT_P_A), B = iv(c, MG_LAYOUT_P_B), units = (int)(c->L->n / A);
    MPI_Datatype t = MPI_DATATYPE_NULL;
    int rc = mpi_ok(c, MPI_Type_vector(units, A, B, c->L->basic, &t), "MPI_Type_vector");
    /* Resized so that the extent is that of n/A Tiled blocks, as the paper does. */
    return rc ? rc : resize(c, &t, (MPI_Aint)units * B * es(c), out);
}

int mg_layout__build_vector_tiled(ctx *c, MPI_Datatype *out)
{
    int A = iv(c, MG_LAYOUT_P_A), B = iv(c, MG_LAYOUT_P_B), S = iv(c, MG_LAYOUT_P_S);
    MPI_Datatype inner = MPI_DATATYPE_NULL;
    int rc = mpi_ok(c, MPI_Type_vector(S, A, B, c->L->basic, &inner), "MPI_Type_vector");
    /* The outer stride S*B is not a multiple of the inner extent, hence bytes. */
    if (!rc)
        rc = mpi_ok(c, MPI_Type_create_hvector((int)(c->L->n / ((long)S * A)), 1, (MPI_Aint)S * B * es(c), inner, out),
                    "MPI_Type_create_hvector");
    free_type(&inner);
    return rc;
}

int mg_layout__build_block_indexed(ctx *c, MPI_Datatype *out)
{
    int A = iv(c, MG_LAYOUT_P_A), B1 = iv(c, MG_LAYOUT_P_B1), B2 = iv(c, MG_LAYOUT_P_B2);
    int units = (int)(c->L->n / A);
    int *displs = malloc(sizeof(int) * (size_t)units);
    if (!displs) return mg_layout__fail(c, MG_LAYOUT_ENOMEM, "out of memory for %d displacements", units);
    long d = 0;
    for (int u = 0; u < units; u++) {
        displs[u] = (int)d;
        d += (u % 2 == 0) ? B1 : B2;
    }
    int rc =
        mpi_ok(c, MPI_Type_create_indexed_block(units, A, displs, c->L->basic, out), "MPI_Type_create_indexed_block");
    free(displs);
    return rc;
}

int mg_layout__build_alt_indexed(ctx *c, MPI_Datatype *out)
{
    int A1 = iv(c, MG_LAYOUT_P_A1), A2 = iv(c, MG_LAYOUT_P_A2);
    int B1 = iv(c, MG_LAYOUT_P_B1), B2 = iv(c, MG_LAYOUT_P_B2);
    int runs = (int)(2 * (c->L->n / ((long)A1 + A2)));
    int *blens = malloc(sizeof(int) * (size_t)runs), *displs = malloc(sizeof(int) * (size_t)runs);
    int rc;
    if (!blens || !displs) {
        rc = mg_layout__fail(c, MG_LAYOUT_ENOMEM, "out of memory for %d runs", runs);
    } else {
        long d = 0;
        for (int i = 0; i < runs; i++) {
            blens[i] = (i % 2 == 0) ? A1 : A2;
            displs[i] = (int)d;
            d += (i % 2 == 0) ? B1 : B2;
        }
        rc = mpi_ok(c, MPI_Type_indexed(runs, blens, displs, c->L->basic, out), "MPI_Type_indexed");
    }
    free(blens);
    free(displs);
    return rc;
}

int mg_layout__build_alt_struct(ctx *c, MPI_Datatype *out)
{
    int A1 = iv(c, MG_LAYOUT_P_A1), A2 = iv(c, MG_LAYOUT_P_A2), B1 = iv(c, MG_LAYOUT_P_B1);
    int pairs = (int)(c->L->n / ((long)A1 + A2));
    MPI_Aint period = (MPI_Aint)B1 + A2; /* B1 + B2 with B2 = A2 */
    MPI_Datatype mid = MPI_DATATYPE_NULL;
    /* Each A2 run touches the following A1 run, so the middle is one vector of
     * A2+A1 runs; only the first A1 and the last A2 run stand alone. */
    int rc = mpi_ok(c, MPI_Type_vector(pairs - 1, A2 + A1, (int)period, c->L->basic, &mid), "MPI_Type_vector");
    if (rc) return rc;
    int blens[3] = {A1, 1, A2};
    MPI_Aint displs[3] = {0, (MPI_Aint)B1 * es(c), ((pairs - 1) * period + B1) * es(c)};
    MPI_Datatype types[3] = {c->L->basic, mid, c->L->basic};
    rc = mpi_ok(c, MPI_Type_create_struct(3, blens, displs, types, out), "MPI_Type_create_struct");
    free_type(&mid);
    return rc;
}

/* Column element j (1 <= j <= n-A) sits j rows below the first, at j*A. */
int mg_layout__build_rowcol_full(ctx *c, MPI_Datatype *out)
{
    int A = iv(c, MG_LAYOUT_P_A), n = (int)c->L->n;
    int *displs = malloc(sizeof(int) * (size_t)n);
    if (!displs) return mg_layout__fail(c, MG_LAYOUT_ENOMEM, "out of memory for %d displacements", n);
    for (int e = 0; e < n; e++) displs[e] = e < A ? e : (e - A + 1) * A;
    int rc = mpi_ok(c, MPI_Type_create_indexed_block(n, 1, displs, c->L->basic, out), "MPI_Type_create_indexed_block");
    free(displs);
    return rc;
}

int mg_layout__build_rowcol_ci(ctx *c, MPI_Datatype *out)
{
    int A = iv(c, MG_LAYOUT_P_A), n = (int)c->L->n, blocks = n - A + 1;
    int *blens = malloc(sizeof(int) * (size_t)blocks), *displs = malloc(sizeof(int) * (size_t)blocks);
    int rc;
    if (!blens || !displs) {
        rc = mg_layout__fail(c, MG_LAYOUT_ENOMEM, "out of memory for %d blocks", blocks);
    } else {
        for (int i = 0; i < blocks; i++) {
            blens[i] = i == 0 ? A : 1;
            displs[i] = i * A;
        }
        rc = mpi_ok(c, MPI_Type_indexed(blocks, blens, displs, c->L->basic, out), "MPI_Type_indexed");
    }
    free(blens);
    free(displs);
    return rc;
}

int mg_layout__build_rowcol_struct(ctx *c, MPI_Datatype *out)
{
    int A = iv(c, MG_LAYOUT_P_A), n = (int)c->L->n;
    MPI_Datatype m[2] = {MPI_DATATYPE_NULL, MPI_DATATYPE_NULL};
    int blens[2] = {1, 1};
    MPI_Aint displs[2] = {0, (MPI_Aint)A * es(c)};
    int rc = mpi_ok(c, MPI_Type_contiguous(A, c->L->basic, &m[0]), "MPI_Type_contiguous");
    if (!rc) rc = mpi_ok(c, MPI_Type_vector(n - A, 1, A, c->L->basic, &m[1]), "MPI_Type_vector");
    if (!rc) rc = mpi_ok(c, MPI_Type_create_struct(2, blens, displs, m, out), "MPI_Type_create_struct");
    free_type(&m[0]);
    free_type(&m[1]);
    return rc;
}

static void type_init(mg_layout_type *t)
{
    memset(t, 0, sizeof *t);
    t->type = MPI_DATATYPE_NULL;
    t->info.basic = MPI_DATATYPE_NULL;
}

int mg_layout_build(const mg_layout_params *p, long n, mg_layout_type *t, char *err, size_t errlen)
{
    if (!t) {
        mg_layout__put_msg(err, errlen, "mg_layout_build: NULL argument");
        return MG_LAYOUT_EARG;
    }
    type_init(t);
    ctx c;
    int rc = mg_layout__check_ctx(p, n, &t->info, &c, err, errlen);
    if (rc) return rc;
    if (n == 0) return mg_layout__fail(&c, MG_LAYOUT_EARG, "n must be >= 1 to build a type");
    int inited = 0, finalized = 0;
    MPI_Initialized(&inited);
    MPI_Finalized(&finalized);
    if (!inited || finalized) return mg_layout__fail(&c, MG_LAYOUT_EARG, "MPI is not initialized");

    MPI_Datatype out = MPI_DATATYPE_NULL;
    rc = c.r->build(&c, &out);
    if (rc) return rc;
    if (p->kind != MG_LAYOUT_CONTIGUOUS) {
        rc = mpi_ok(&c, MPI_Type_commit(&out), "MPI_Type_commit");
        if (rc) {
            free_type(&out);
            return rc;
        }
        t->owned = 1;
    }
    t->type = out;
    t->count = t->info.count;
    return MG_LAYOUT_OK;
}

int mg_layout_reference(const mg_layout_params *p, long n, mg_layout_type *t, char *err, size_t errlen)
{
    if (!t) {
        mg_layout__put_msg(err, errlen, "mg_layout_reference: NULL argument");
        return MG_LAYOUT_EARG;
    }
    type_init(t);
    mg_layout_info info;
    int rc = mg_layout_check(p, n, &info, err, errlen);
    if (rc) return rc;
    mg_layout_params ref;
    mg_layout_params_init(&ref, MG_LAYOUT_CONTIGUOUS);
    ref.given = P(TYPE);
    if (info.elem_size == 0) { /* mixed elements: compare with raw bytes */
        ref.value[MG_LAYOUT_P_TYPE] = MG_LAYOUT_BYTE;
        return mg_layout_build(&ref, (long)info.data_size, t, err, errlen);
    }
    ref.value[MG_LAYOUT_P_TYPE] = info.params.value[MG_LAYOUT_P_TYPE];
    return mg_layout_build(&ref, n, t, err, errlen);
}

void mg_layout_type_free(mg_layout_type *t)
{
    if (!t) return;
    if (t->owned) free_type(&t->type);
    t->type = MPI_DATATYPE_NULL;
    t->owned = 0;
    t->count = 0;
}
