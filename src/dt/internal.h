/* Internal representation of libmpiguide-dt.
 *
 * A type is a tree of four node kinds. A node describes contiguous byte blocks
 * relative to its origin, in typemap order; parents place children:
 *   BLOCK  `count` basic elements back to back at the origin
 *   VEC    `count` copies of `kid` at i * stride
 *   IDX    `count` blocks of basic elements: block i holds mg__len(n, i) elements at displs[i]
 *   SEQ    `count` children: kids[i] at displs[i]
 * After normalization the same tree is the loop program: VEC over BLOCK is a
 * strided copy, VEC over VEC over BLOCK a two-level strided copy, IDX an
 * indexed copy (fixed-length when all lens are equal), VEC and SEQ otherwise
 * push frames on an explicit stack. Packing is in bytes (homogeneous systems);
 * `elem` only names the elements for describe and mg_dt_to_mpi.
 */
#ifndef MG_DT_INTERNAL_H
#define MG_DT_INTERNAL_H

#include "mpiguide/dt.h"
#include "mpi_entry.h"
#include <stddef.h>
#include <stdint.h>

typedef enum { MG_N_BLOCK, MG_N_VEC, MG_N_IDX, MG_N_SEQ } mg_kind;

typedef struct mg_node mg_node;
struct mg_node {
    mg_kind kind;
    MPI_Datatype elem; /* BLOCK, IDX: element type (MPI_BYTE when mixed) */
    MPI_Count esize;   /* BLOCK, IDX: bytes per element */
    MPI_Count count;
    MPI_Aint stride;   /* VEC */
    mg_node *kid;      /* VEC */
    MPI_Aint *displs;  /* IDX, SEQ */
    MPI_Count *lens;   /* IDX: elements per block; NULL when every block holds blen (a blocked
                        * constructor's list: no second list of millions of equal entries) */
    MPI_Count blen;    /* IDX without lens */
    mg_node **kids;    /* SEQ (children may be shared) */
    MPI_Count *prefix; /* SEQ, IDX of unequal blocks, of the compiled program: packed bytes before entry i,
                        * count + 1 entries (equal blocks seek by a division) */
    int fixed;         /* IDX: all blocks equally long */
    int own_lists;     /* IDX: its lists are this node's alone (normalization may rewrite them in place) */
    int merges;        /* IDX: a block is empty or ends where the next begins */
    /* derived by mg__finish */
    MPI_Count size;    /* packed bytes */
    MPI_Count nblocks; /* contiguous blocks */
    MPI_Aint tlb, tub; /* true bounds of the data relative to the origin */
    int depth;         /* frames needed to walk this node */
    /* set by normalization (memo for shared children) and compilation */
    mg_node *norm;
    MPI_Aint norm_disp;
    int normalized;
    int op; /* mg_op: the loop primitive that executes this node */
};

/* Elements of block i of an IDX. */
static inline MPI_Count mg__len(const mg_node *n, MPI_Count i) { return n->lens ? n->lens[i] : n->blen; }

/* Loop primitives of the compiled program. */
typedef enum {
    MG_OP_NONE,           /* not compiled yet */
    MG_OP_CONTIG,         /* BLOCK: one contiguous copy */
    MG_OP_STRIDED,        /* VEC of BLOCK: fixed length, fixed stride */
    MG_OP_STRIDED2,       /* VEC of VEC of BLOCK: two strided levels in one loop */
    MG_OP_INDEXED_FIXED,  /* IDX, equal lengths */
    MG_OP_INDEXED,        /* IDX, variable lengths */
    MG_OP_REPEAT_INDEXED, /* VEC of IDX: each copy's blocks, no frame per copy */
    MG_OP_REPEAT,         /* VEC of anything else: push the child count times */
    MG_OP_SEQUENCE,       /* SEQ: push each child */
} mg_op;
/* The primitive for a node whose children are compiled. */
int mg__op_of(const mg_node *n);

/* All nodes and arrays of one mg_dt live in one arena, freed at once. */
typedef struct mg_arena mg_arena;
mg_arena *mg__arena_new(void);
void *mg__alloc(mg_arena *a, size_t bytes); /* zeroed; NULL on failure */
void mg__arena_free(mg_arena *a);

/* Choose the primitive of every node reachable from n and give its lists
 * their prefix sums (only the program's nodes need them: the cursor seeks
 * with them; intermediate lists of normalization never get any). */
int mg__compile(mg_arena *a, mg_node *n);

/* Copies of a type whose last block ends where the next copy's first block
 * begins, rotated so that the two join: the head (the first copy's first
 * block), count - 1 copies of mid at extent pitch (the middle blocks and the
 * joined block), the tail (the last copy without its first block, at
 * (count - 1) * extent). Displacements are relative to the root's origin. */
typedef struct {
    mg_node *head, *mid, *tail; /* mid NULL: the copies do not join */
    MPI_Aint head_d, mid_d, tail_d;
} mg_rotation;
int mg__rotation(mg_arena *a, mg_node *k, MPI_Aint stride, mg_rotation *r);

struct mg_dt {
    mg_arena *arena;
    mg_node *root; /* NULL when the type holds no data */
    MPI_Aint disp; /* origin of root relative to the buffer address */
    mg_rotation rot;
    int whole;    /* whole streams go to the executor of whole.c (holds data, not too deep) */
    int dense;    /* holds data, and count elements are one block: the stream is the memory */
    int one_elem; /* every basic element is of one type (mg_dt_same_signature) */
    MPI_Count size;
    MPI_Aint lb, extent; /* as MPI reports them */
    MPI_Aint tlb, textent;
};

/* mg_dt_pack and mg_dt_unpack (whole.c) execute a whole stream of a type
 * with t->whole set (it holds data, and its normal form is at most
 * MG_WHOLE_MAX_DEPTH deep: the executor recurses) without a cursor; all else,
 * errors included, goes to mg__transfer_rest (pack.c): user is the layout's
 * buffer, stream the packed one, max the stream's room (pack) or length
 * (unpack). */
#define MG_WHOLE_MAX_DEPTH 64
int mg__transfer_rest(const mg_dt *t, char *user, char *stream, MPI_Count count, MPI_Count offset, MPI_Count max,
                      MPI_Count *actual, int pack);

/* Node construction (arena-allocated); NULL on allocation failure. */
mg_node *mg__block(mg_arena *a, MPI_Datatype elem, MPI_Count esize, MPI_Count count);
mg_node *mg__vec(mg_arena *a, MPI_Count count, MPI_Aint stride, mg_node *kid);
mg_node *mg__idx(mg_arena *a, MPI_Datatype elem, MPI_Count esize, MPI_Count count);
/* An IDX whose count blocks all hold blen elements: displs only. */
mg_node *mg__idx_fixed(mg_arena *a, MPI_Datatype elem, MPI_Count esize, MPI_Count count, MPI_Count blen);
mg_node *mg__seq(mg_arena *a, MPI_Count count);
/* Compute size, nblocks, bounds and depth from the children. */
int mg__finish(mg_arena *a, mg_node *n);
int mg__node_equal(const mg_node *x, const mg_node *y);

/* What mg__finish derives for an IDX, accumulated block by block so that a
 * list of millions of blocks is measured in the pass that fills it. Few
 * accumulators (they must stay in registers): the bounds include empty blocks
 * and the flags share a word; mg__idx_stats_set takes one more pass over the
 * rare lists that merge (they may have empty blocks). */
enum { MG_IDX_UNEVEN = 1, MG_IDX_MERGES = 2, MG_IDX_OVERFLOW = 4 };
typedef struct {
    MPI_Count elems, first_len;
    MPI_Aint lo, hi, prev_end; /* prev_end: where the previous block ends */
    unsigned flags;
} mg_idx_stats;
/* Before the first block (d0, len0) of a list (prev_end: anything but d0). */
static inline void mg__idx_stats_init(mg_idx_stats *st, MPI_Aint d0, MPI_Count len0)
{
    *st = (mg_idx_stats){.first_len = len0, .prev_end = d0 ^ 1, .lo = PTRDIFF_MAX, .hi = PTRDIFF_MIN};
}
static inline void mg__idx_stats_add(mg_idx_stats *st, MPI_Aint d, MPI_Count len, MPI_Count esize)
{
    MPI_Count bytes;
    MPI_Aint end;
    unsigned over = __builtin_add_overflow(st->elems, len, &st->elems) | __builtin_mul_overflow(len, esize, &bytes) |
                    __builtin_add_overflow(d, bytes, &end);
    st->flags |= (unsigned)(len != st->first_len) * MG_IDX_UNEVEN |
                 (unsigned)((len == 0) | (d == st->prev_end)) * MG_IDX_MERGES | over * MG_IDX_OVERFLOW;
    st->prev_end = end;
    st->lo = d < st->lo ? d : st->lo;
    st->hi = end > st->hi ? end : st->hi;
}
int mg__idx_stats_set(mg_node *n, mg_idx_stats st); /* by value: the accumulator stays in registers */

int mg__decode(mg_arena *a, MPI_Datatype type, mg_node **out);
/* Rewrite to the normal form; *disp receives the displacement the result
 * needs so that it describes the same bytes as n. */
int mg__normalize(mg_arena *a, mg_node *n, mg_node **out, MPI_Aint *disp);
/* Hands fn the count-aware normal form of count elements of t (NULL when they
 * hold no data) and its displacement. The form lives in a scratch arena freed
 * afterwards, so t itself is only read. Returns fn's result or an error. */
typedef int (*mg_visit)(const mg_node *n, MPI_Aint disp, void *arg);
int mg__repeat(const mg_dt *t, MPI_Count count, mg_visit fn, void *arg);

/* What MPI_Type_get_envelope(_c) and MPI_Type_get_contents(_c) say of a
 * type (decode.c): the arrays malloc'ed, the inner handles to be freed by
 * mg__contents_free (not the predefined ones). A type made by an MPI-4 `_c`
 * constructor has its count-like arguments in c (large), at the positions the
 * standard shifts them to; mg__contents_arg reads argument k either way. */
typedef struct {
    int combiner, large;
    MPI_Count ni, na, nc, nd;
    int *i;
    MPI_Aint *a;
    MPI_Count *c;
    MPI_Datatype *d;
} mg_contents;
int mg__contents_get(MPI_Datatype t, mg_contents *ct);
void mg__contents_free(mg_contents *ct);
static inline MPI_Count mg__contents_arg(const mg_contents *ct, MPI_Count k) { return ct->large ? ct->c[k] : ct->i[k]; }

/* The predefined types of the notation (basics.c): the handle of a name, and
 * the name describe prints for a handle (NULL if it has none). */
int mg__basic_lookup(const char *s, size_t n, MPI_Datatype *out);
/* 1 if the name is in the table, even where mpi.h defines it as MPI_DATATYPE_NULL. */
int mg__basic_named(const char *s, size_t n);
const char *mg__basic_name(MPI_Datatype t);

/* Call fn(disp, bytes, arg) for every contiguous block of n placed at base,
 * in typemap order, until fn returns non-zero (walk.c). */
int mg__walk(const mg_node *n, MPI_Aint base, int (*fn)(MPI_Aint, MPI_Count, void *), void *arg);

/* Whether p is a policy dt.h allows (policy.c). */
int mg__policy_valid(const mg_dt_form_policy *p);

/* lb and extent of MPI_Type_contiguous(count, t) as the standard defines them
 * from t's lb and extent: what mg_dt_to_mpi and describe_count give. */
void mg__count_bounds(const mg_dt *t, MPI_Count count, MPI_Aint *lb, MPI_Aint *extent);

/* Overflow-checked arithmetic; return 0 on overflow. */
static inline int mg__mul(MPI_Count a, MPI_Count b, MPI_Count *r) { return !__builtin_mul_overflow(a, b, r); }
static inline int mg__add(MPI_Count a, MPI_Count b, MPI_Count *r) { return !__builtin_add_overflow(a, b, r); }
/* Greatest common divisor; mg__gcd(x, 0) = x. */
static inline MPI_Count mg__gcd(MPI_Count a, MPI_Count b)
{
    while (b) {
        MPI_Count r = a % b;
        a = b;
        b = r;
    }
    return a;
}

#define MG_TRY(x)                             \
    do {                                      \
        int rc_ = (x);                        \
        if (rc_ != MG_DT_SUCCESS) return rc_; \
    } while (0)

#endif
