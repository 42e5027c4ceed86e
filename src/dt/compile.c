/* Compilation: pick the loop primitive of each node of the normal form.
 * Leaf-level loops (contiguous, strided, two-level strided, indexed) run
 * without touching the frame stack; only REPEAT and SEQUENCE push frames. */
#include "internal.h"

int mg__op_of(const mg_node *n)
{
    switch (n->kind) {
    case MG_N_BLOCK: return MG_OP_CONTIG;
    case MG_N_IDX: return n->fixed ? MG_OP_INDEXED_FIXED : MG_OP_INDEXED;
    case MG_N_SEQ: return MG_OP_SEQUENCE;
    case MG_N_VEC:
        if (n->kid->kind == MG_N_BLOCK) return MG_OP_STRIDED;
        if (n->kid->kind == MG_N_VEC && n->kid->kid->kind == MG_N_BLOCK) return MG_OP_STRIDED2;
        if (n->kid->kind == MG_N_IDX) return MG_OP_REPEAT_INDEXED;
        return MG_OP_REPEAT;
    }
    return MG_OP_NONE;
}

int mg__compile(mg_arena *a, mg_node *n)
{
    if (n->op != MG_OP_NONE) return MG_DT_SUCCESS; /* shared child, already done */
    n->op = mg__op_of(n);
    /* Every node of the normal form is its own normal form; marking it here
     * means later count-aware normalization only reads the type. */
    n->normalized = 1;
    n->norm = n;
    n->norm_disp = 0;
    if (n->op == MG_OP_INDEXED || n->op == MG_OP_SEQUENCE) {
        if (!(n->prefix = mg__alloc(a, sizeof(MPI_Count) * (size_t)(n->count + 1)))) return MG_DT_ERR_NOMEM;
        MPI_Count total = 0;
        for (MPI_Count i = 0; i < n->count; i++) {
            n->prefix[i] = total;
            total += n->kind == MG_N_IDX ? n->lens[i] * n->esize : n->kids[i]->size;
        }
        n->prefix[n->count] = total;
    }
    if (n->kind == MG_N_VEC) return mg__compile(a, n->kid);
    if (n->kind == MG_N_SEQ)
        for (MPI_Count i = 0; i < n->count; i++) MG_TRY(mg__compile(a, n->kids[i]));
    return MG_DT_SUCCESS;
}
