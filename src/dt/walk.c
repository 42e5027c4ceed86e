/* mg_dt_walk: the contiguous blocks of the count-aware normal form. */
#include "internal.h"

typedef int (*walk_fn)(MPI_Aint, MPI_Count, void *);

/* Recursion follows the nesting of the normal form, which is shallow. */
static int walk(const mg_node *n, MPI_Aint base, walk_fn fn, void *arg)
{
    int rc = 0;
    switch (n->kind) {
    case MG_N_BLOCK:
        return fn(base, n->size, arg);
    case MG_N_VEC:
        for (MPI_Count i = 0; i < n->count && !rc; i++) rc = walk(n->kid, base + (MPI_Aint)i * n->stride, fn, arg);
        return rc;
    case MG_N_IDX:
        for (MPI_Count i = 0; i < n->count && !rc; i++) rc = fn(base + n->displs[i], n->lens[i] * n->esize, arg);
        return rc;
    case MG_N_SEQ:
        for (MPI_Count i = 0; i < n->count && !rc; i++) rc = walk(n->kids[i], base + n->displs[i], fn, arg);
        return rc;
    }
    return rc;
}

int mg_dt_walk(const mg_dt *t, MPI_Count count, walk_fn fn, void *arg)
{
    if (!t || !fn || count < 0) return MG_DT_ERR_ARG;
    mg_arena *a = mg__arena_new();
    if (!a) return MG_DT_ERR_NOMEM;
    mg_node *n;
    MPI_Aint disp;
    int rc = mg__repeat(a, t, count, &n, &disp);
    if (!rc && n) rc = walk(n, disp, fn, arg);
    mg__arena_free(a);
    return rc;
}
