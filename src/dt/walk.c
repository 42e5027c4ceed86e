/* mg_dt_walk: the contiguous blocks of the count-aware normal form. */
#include "internal.h"

typedef int (*walk_fn)(MPI_Aint, MPI_Count, void *);

/* Recursion follows the nesting of the normal form, which is shallow. */
int mg__walk(const mg_node *n, MPI_Aint base, walk_fn fn, void *arg)
{
    int rc = 0;
    switch (n->kind) {
    case MG_N_BLOCK: return fn(base, n->size, arg);
    case MG_N_VEC:
        for (MPI_Count i = 0; i < n->count && !rc; i++) rc = mg__walk(n->kid, base + (MPI_Aint)i * n->stride, fn, arg);
        return rc;
    case MG_N_IDX:
        for (MPI_Count i = 0; i < n->count && !rc; i++) rc = fn(base + n->displs[i], mg__len(n, i) * n->esize, arg);
        return rc;
    case MG_N_SEQ:
        for (MPI_Count i = 0; i < n->count && !rc; i++) rc = mg__walk(n->kids[i], base + n->displs[i], fn, arg);
        return rc;
    }
    return rc;
}

typedef struct {
    walk_fn fn;
    void *arg;
} walk_ctx;

static int walk_visit(const mg_node *n, MPI_Aint disp, void *arg)
{
    const walk_ctx *w = arg;
    return n ? mg__walk(n, disp, w->fn, w->arg) : 0;
}

int mg_dt_walk(const mg_dt *t, MPI_Count count, walk_fn fn, void *arg)
{
    if (!t || !fn || count < 0) return MG_DT_ERR_ARG;
    walk_ctx w = {fn, arg};
    return mg__repeat(t, count, walk_visit, &w);
}
