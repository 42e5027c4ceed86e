/* Arena and node construction for the engine's tree. */
#include "internal.h"
#include <stdlib.h>
#include <string.h>

#define MG_CHUNK (64 * 1024)

struct mg_arena {
    struct chunk {
        struct chunk *next;
        size_t used, cap;
        max_align_t data[];
    } * head;
};

mg_arena *mg__arena_new(void) { return calloc(1, sizeof(mg_arena)); }

/* zero: clear the memory (mg__alloc); lists about to be written whole skip it. */
static void *arena_take(mg_arena *a, size_t bytes, int zero)
{
    bytes = (bytes + 15) & ~(size_t)15;
    if (!a->head || a->head->cap - a->head->used < bytes) {
        /* Large requests get their own chunk behind the current one so the
         * current chunk keeps serving small ones. */
        size_t cap = bytes > MG_CHUNK / 4 ? bytes : MG_CHUNK;
        struct chunk *c = malloc(sizeof *c + cap);
        if (!c) return NULL;
        c->used = 0;
        c->cap = cap;
        if (a->head && cap != MG_CHUNK) {
            c->next = a->head->next;
            a->head->next = c;
        } else {
            c->next = a->head;
            a->head = c;
        }
        c->used = bytes;
        if (zero) memset(c->data, 0, bytes);
        return c->data;
    }
    void *p = (char *)a->head->data + a->head->used;
    a->head->used += bytes;
    if (zero) memset(p, 0, bytes);
    return p;
}

void *mg__alloc(mg_arena *a, size_t bytes) { return arena_take(a, bytes, 1); }

/* Memory the caller writes in full before anything reads it (index lists of
 * millions of entries: clearing them first cost a pass). */
static void *alloc_filled(mg_arena *a, size_t bytes) { return arena_take(a, bytes, 0); }

void mg__arena_free(mg_arena *a)
{
    if (!a) return;
    for (struct chunk *c = a->head, *n; c; c = n) {
        n = c->next;
        free(c);
    }
    free(a);
}

static mg_node *node(mg_arena *a, mg_kind kind, MPI_Count count)
{
    mg_node *n = mg__alloc(a, sizeof *n);
    if (n) {
        n->kind = kind;
        n->count = count;
        n->elem = MPI_BYTE;
        n->esize = 1;
    }
    return n;
}

mg_node *mg__block(mg_arena *a, MPI_Datatype elem, MPI_Count esize, MPI_Count count)
{
    mg_node *n = node(a, MG_N_BLOCK, count);
    if (n) {
        n->elem = elem;
        n->esize = esize;
    }
    return n;
}

mg_node *mg__vec(mg_arena *a, MPI_Count count, MPI_Aint stride, mg_node *kid)
{
    mg_node *n = node(a, MG_N_VEC, count);
    if (n) {
        n->stride = stride;
        n->kid = kid;
    }
    return n;
}

mg_node *mg__idx_fixed(mg_arena *a, MPI_Datatype elem, MPI_Count esize, MPI_Count count, MPI_Count blen)
{
    mg_node *n = node(a, MG_N_IDX, count);
    if (!n) return NULL;
    n->elem = elem;
    n->esize = esize;
    n->blen = blen;
    /* every caller writes all entries */
    n->displs = alloc_filled(a, sizeof(MPI_Aint) * (size_t)(count ? count : 1));
    n->own_lists = 1;
    return n->displs ? n : NULL;
}

mg_node *mg__idx(mg_arena *a, MPI_Datatype elem, MPI_Count esize, MPI_Count count)
{
    mg_node *n = mg__idx_fixed(a, elem, esize, count, 0);
    if (n && !(n->lens = alloc_filled(a, sizeof(MPI_Count) * (size_t)(count ? count : 1)))) return NULL;
    return n;
}

mg_node *mg__seq(mg_arena *a, MPI_Count count)
{
    mg_node *n = node(a, MG_N_SEQ, count);
    if (!n) return NULL;
    n->displs = mg__alloc(a, sizeof(MPI_Aint) * (size_t)(count ? count : 1));
    n->kids = mg__alloc(a, sizeof(mg_node *) * (size_t)(count ? count : 1));
    return n->displs && n->kids ? n : NULL;
}

int mg__idx_stats_set(mg_node *n, mg_idx_stats st)
{
    if ((st.flags & MG_IDX_OVERFLOW) || !mg__mul(st.elems, n->esize, &n->size)) return MG_DT_ERR_OVERFLOW;
    MPI_Aint lo = st.lo, hi = st.hi;
    MPI_Count empties = 0;
    if (st.flags & MG_IDX_MERGES) { /* bounds of the blocks that hold data only */
        lo = PTRDIFF_MAX;
        hi = PTRDIFF_MIN;
        for (MPI_Count i = 0; i < n->count; i++) {
            if (!mg__len(n, i)) {
                empties++;
                continue;
            }
            MPI_Aint d = n->displs[i], end = d + mg__len(n, i) * n->esize;
            lo = d < lo ? d : lo;
            hi = end > hi ? end : hi;
        }
    }
    n->fixed = !(st.flags & MG_IDX_UNEVEN);
    n->merges = !!(st.flags & MG_IDX_MERGES);
    n->nblocks = n->count - empties;
    n->tlb = n->nblocks ? lo : 0;
    n->tub = n->nblocks ? hi : 0;
    n->depth = 1;
    return MG_DT_SUCCESS;
}

/* Widen [lo, hi) by a piece [plo, phi) that holds data. */
static void bounds_add(MPI_Aint *lo, MPI_Aint *hi, int *empty, MPI_Aint plo, MPI_Aint phi)
{
    if (*empty || plo < *lo) *lo = plo;
    if (*empty || phi > *hi) *hi = phi;
    *empty = 0;
}

int mg__finish(mg_arena *a, mg_node *n)
{
    (void)a;
    int empty = 1;
    n->tlb = n->tub = 0;
    switch (n->kind) {
    case MG_N_BLOCK:
        if (!mg__mul(n->count, n->esize, &n->size)) return MG_DT_ERR_OVERFLOW;
        n->nblocks = n->size ? 1 : 0;
        n->tub = n->size;
        n->depth = 1;
        return MG_DT_SUCCESS;
    case MG_N_VEC: {
        mg_node *k = n->kid;
        MPI_Count span;
        if (!mg__mul(n->count, k->size, &n->size) || !mg__mul(n->count, k->nblocks, &n->nblocks))
            return MG_DT_ERR_OVERFLOW;
        if (n->size && n->count > 0) {
            if (!mg__mul(n->count - 1, n->stride, &span)) return MG_DT_ERR_OVERFLOW;
            bounds_add(&n->tlb, &n->tub, &empty, k->tlb, k->tub);
            bounds_add(&n->tlb, &n->tub, &empty, k->tlb + span, k->tub + span);
        }
        n->depth = k->depth + 1;
        return MG_DT_SUCCESS;
    }
    case MG_N_IDX: {
        mg_idx_stats st;
        mg__idx_stats_init(&st, n->count ? n->displs[0] : 0, n->count ? mg__len(n, 0) : 0);
        for (MPI_Count i = 0; i < n->count; i++) mg__idx_stats_add(&st, n->displs[i], mg__len(n, i), n->esize);
        return mg__idx_stats_set(n, st);
    }
    case MG_N_SEQ: {
        MPI_Count total = 0, blocks = 0;
        int depth = 0;
        for (MPI_Count i = 0; i < n->count; i++) {
            const mg_node *k = n->kids[i];
            MPI_Count sz = k->size, lo = k->tlb, hi = k->tub;
            if (!mg__add(blocks, k->nblocks, &blocks)) return MG_DT_ERR_OVERFLOW;
            if (k->depth > depth) depth = k->depth;
            if (!mg__add(total, sz, &total)) return MG_DT_ERR_OVERFLOW;
            if (sz) bounds_add(&n->tlb, &n->tub, &empty, n->displs[i] + lo, n->displs[i] + hi);
        }
        n->size = total;
        n->nblocks = blocks;
        n->depth = depth + 1;
        return MG_DT_SUCCESS;
    }
    }
    return MG_DT_ERR_ARG;
}

int mg__node_equal(const mg_node *x, const mg_node *y)
{
    if (x == y) return 1;
    if (x->kind != y->kind || x->count != y->count || x->size != y->size) return 0;
    switch (x->kind) {
    case MG_N_BLOCK: return x->elem == y->elem && x->esize == y->esize;
    case MG_N_VEC: return x->stride == y->stride && mg__node_equal(x->kid, y->kid);
    case MG_N_IDX:
        if (x->elem != y->elem || x->esize != y->esize ||
            (x->displs != y->displs && memcmp(x->displs, y->displs, sizeof(MPI_Aint) * (size_t)x->count)))
            return 0;
        if (!x->lens && !y->lens) return x->count == 0 || x->blen == y->blen;
        if (x->lens && y->lens)
            return x->lens == y->lens || !memcmp(x->lens, y->lens, sizeof(MPI_Count) * (size_t)x->count);
        for (MPI_Count i = 0; i < x->count; i++)
            if (mg__len(x, i) != mg__len(y, i)) return 0;
        return 1;
    case MG_N_SEQ:
        if (memcmp(x->displs, y->displs, sizeof(MPI_Aint) * (size_t)x->count)) return 0;
        for (MPI_Count i = 0; i < x->count; i++)
            if (!mg__node_equal(x->kids[i], y->kids[i])) return 0;
        return 1;
    }
    return 0;
}
