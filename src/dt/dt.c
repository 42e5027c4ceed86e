/* The engine's pipeline: decode -> normalize -> compile, and accessors. */
#include "internal.h"
#include <stdlib.h>

/* Whether every leaf of the decoded tree n that holds data has the element
 * type *elem (set by the first such leaf). */
static int one_element(const mg_node *n, MPI_Datatype *elem, MPI_Count *esize, int *seen)
{
    if (!n->size) return 1;
    switch (n->kind) {
    case MG_N_BLOCK:
    case MG_N_IDX:
        if (!*seen) {
            *seen = 1;
            *elem = n->elem;
            *esize = n->esize;
        }
        return n->elem == *elem && n->esize == *esize;
    case MG_N_VEC: return one_element(n->kid, elem, esize, seen);
    case MG_N_SEQ:
        for (MPI_Count i = 0; i < n->count; i++)
            if (!one_element(n->kids[i], elem, esize, seen)) return 0;
        return 1;
    }
    return 0;
}

int mg_dt_from_mpi(MPI_Datatype type, mg_dt **out)
{
    if (!out || type == MPI_DATATYPE_NULL) return MG_DT_ERR_ARG;
    *out = NULL;
    mg_dt *t = calloc(1, sizeof *t);
    if (!t) return MG_DT_ERR_NOMEM;
    int rc = (t->arena = mg__arena_new()) ? MG_DT_SUCCESS : MG_DT_ERR_NOMEM;
    MPI_Aint lb, ext, tlb, text;
    MPI_Count size;
    if (!rc &&
        (MPI_Type_get_extent(type, &lb, &ext) != MPI_SUCCESS ||
         MPI_Type_get_true_extent(type, &tlb, &text) != MPI_SUCCESS || MPI_Type_size_x(type, &size) != MPI_SUCCESS))
        rc = MG_DT_ERR_MPI;
    mg_node *tree = NULL;
    if (!rc) rc = mg__decode(t->arena, type, &tree);
    if (!rc) {
        MPI_Datatype elem = MPI_DATATYPE_NULL;
        MPI_Count esize = 0;
        int seen = 0;
        t->one_elem = one_element(tree, &elem, &esize, &seen);
    }
    if (!rc) rc = mg__normalize(t->arena, tree, &t->root, &t->disp);
    /* The decoded data must be exactly what MPI says the type holds. */
    if (!rc && (t->root ? t->root->size : 0) != size) rc = MG_DT_ERR_UNSUPPORTED;
    if (rc) {
        mg_dt_free(t);
        return rc;
    }
    if (t->root) {
        rc = mg__compile(t->arena, t->root);
        /* Joined copies for the whole-buffer executor (whole.c). */
        if (!rc) rc = mg__rotation(t->arena, t->root, ext, &t->rot);
        if (!rc && t->rot.mid) rc = mg__compile(t->arena, t->rot.head);
        if (!rc && t->rot.mid) rc = mg__compile(t->arena, t->rot.mid);
        if (!rc && t->rot.mid) rc = mg__compile(t->arena, t->rot.tail);
        if (rc) {
            mg_dt_free(t);
            return rc;
        }
    }
    t->whole = t->root && t->root->depth <= MG_WHOLE_MAX_DEPTH;
    t->dense = t->root && t->root->kind == MG_N_BLOCK && ext == t->root->size;
    t->size = size;
    t->lb = lb;
    t->extent = ext;
    t->tlb = tlb;
    t->textent = text;
    *out = t;
    return MG_DT_SUCCESS;
}

void mg_dt_free(mg_dt *t)
{
    if (!t) return;
    mg__arena_free(t->arena);
    free(t);
}

MPI_Count mg_dt_size(const mg_dt *t) { return t ? t->size : 0; }
MPI_Count mg_dt_extent(const mg_dt *t) { return t ? t->extent : 0; }
MPI_Count mg_dt_lb(const mg_dt *t) { return t ? t->lb : 0; }
int mg_dt_same_signature(const mg_dt *t) { return t ? t->one_elem : 0; }
MPI_Count mg_dt_blocks(const mg_dt *t) { return t && t->root ? t->root->nblocks : 0; }
MPI_Count mg_dt_mean_block(const mg_dt *t) { return t && t->root && t->root->nblocks ? t->size / t->root->nblocks : 0; }

void mg__count_bounds(const mg_dt *t, MPI_Count count, MPI_Aint *lb, MPI_Aint *extent)
{
    /* The copies of t's [lb, lb + extent) at k * extent, k < count. */
    MPI_Aint ext = t->extent, span = count ? (count - 1) * ext : 0;
    MPI_Aint clb = count ? t->lb + (ext < 0 ? span : 0) : 0;
    MPI_Aint cub = count ? t->lb + ext + (ext > 0 ? span : 0) : 0;
    *lb = clb;
    *extent = cub - clb;
}
