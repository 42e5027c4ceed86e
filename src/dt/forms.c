/* Form classes (dt.h): the kinds of step an MPI datatype is built of. With
 * form_probe.c (each class's canonical instance, and the probe that packs it
 * with MPI and with the engine) they tell whether the MPI library running
 * moves a type the engine built as the MPI definitions say.
 *
 * A datatype places pieces (copies of an inner type) in typemap order. A step
 * is the distance from the data of one piece, or block of pieces, to the data
 * of the next, start to start:
 *   INNER     between the copies inside one block: the inner type's extent
 *             (MPI_Type_contiguous's only step, a vector's within a block);
 *   BLOCK     between the starts of blocks of one piece;
 *   MULTI     between the starts of blocks of several pieces.
 * Its size is judged against the data the step leaves behind (from the true
 * lower bound to the true upper bound of a piece, or of a block): zero; as
 * many bytes as the block has pieces (1 byte after one piece; BYTE), where
 * that is less than the data, the step of a library that takes an hvector's
 * bytes for a vector's elements; overlapping; dense (exactly the data); a
 * gap. EMPTY is a block or a piece without data. With the constructor, the
 * sign, whether the step is a multiple of the element's extent, whether the
 * pieces are derived and the basic element, that is the class.
 *
 * The canonical instance of a class is three blocks of its constructor a step
 * of that kind apart, and nothing else unusual: hvector(count=3, block=1,
 * stride=1, int) for a 1-byte step between blocks of one int. The probe packs
 * it with MPI_Pack and with the engine, whose own pack follows the MPI
 * definitions (test_dt_random checks it on thousands of types against an
 * independent walk of the typemap).
 *
 * Nothing here keeps state: callers keep the verdicts (libmpiguide-tune one
 * per class and process, src/tune/form_verdicts.c). */
#include "internal.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One piece: what a step is judged against. */
typedef struct {
    MPI_Count size;
    MPI_Aint ext, tlb, span; /* extent; true lower bound and true extent */
    MPI_Datatype elem;       /* the first basic element */
    MPI_Count esize; /* the element's extent */
    int derived;
} piece;

/* The classes found so far: distinct ones stored while they fit. */
typedef struct {
    mg_dt_form_class *out;
    int max, n;
} found;

static int is_predefined(int comb)
{
    return comb == MPI_COMBINER_NAMED || comb == MPI_COMBINER_F90_REAL || comb == MPI_COMBINER_F90_COMPLEX ||
           comb == MPI_COMBINER_F90_INTEGER;
}

/* The first basic element of t (a struct's first member with data, else its first). */
static int first_elem(MPI_Datatype t, MPI_Datatype *e, int depth)
{
    mg_contents ct;
    if (depth > 64) return MG_DT_ERR_UNSUPPORTED;
    MG_TRY(mg__contents_get(t, &ct));
    int rc = MG_DT_SUCCESS;
    if (is_predefined(ct.combiner)) {
        *e = t;
    } else if (ct.nd < 1) {
        rc = MG_DT_ERR_UNSUPPORTED;
    } else {
        MPI_Count k = 0;
        if (ct.combiner == MPI_COMBINER_STRUCT)
            for (MPI_Count j = 0; j < ct.nd; j++) {
                MPI_Count size = 0;
                if (MPI_Type_size_x(ct.d[j], &size) == MPI_SUCCESS && size > 0) {
                    k = j;
                    break;
                }
            }
        rc = first_elem(ct.d[k], e, depth + 1);
    }
    mg__contents_free(&ct);
    return rc;
}

static int piece_of(MPI_Datatype t, piece *p)
{
    MPI_Count lb, ext, tlb, text, esize;
    int comb;
    mg_contents ct;
    if (MPI_Type_size_x(t, &p->size) != MPI_SUCCESS || MPI_Type_get_extent_x(t, &lb, &ext) != MPI_SUCCESS ||
        MPI_Type_get_true_extent_x(t, &tlb, &text) != MPI_SUCCESS)
        return MG_DT_ERR_MPI;
    MG_TRY(mg__contents_get(t, &ct));
    comb = ct.combiner;
    mg__contents_free(&ct);
    p->ext = (MPI_Aint)ext;
    p->tlb = (MPI_Aint)tlb;
    p->span = (MPI_Aint)text;
    p->derived = !is_predefined(comb);
    MG_TRY(first_elem(t, &p->elem, 0));
    /* the element's own step in an array: its extent (a pair type's has a hole) */
    if (MPI_Type_get_extent_x(p->elem, &lb, &esize) != MPI_SUCCESS) return MG_DT_ERR_MPI;
    p->esize = esize > 0 ? esize : 1;
    return MG_DT_SUCCESS;
}

static int same_class(const mg_dt_form_class *x, const mg_dt_form_class *y)
{
    return x->ctor == y->ctor && x->step == y->step && x->size == y->size && x->negative == y->negative &&
           x->odd == y->odd && x->derived == y->derived && x->elem == y->elem;
}

static void add(found *f, mg_dt_form_class c)
{
    int stored = f->n < f->max ? f->n : f->max;
    for (int i = 0; i < stored; i++)
        if (same_class(&f->out[i], &c)) return;
    if (f->n < f->max) f->out[f->n] = c;
    f->n++;
}

static void add_empty(found *f, int ctor, const piece *p)
{
    mg_dt_form_class c = {.ctor = ctor, .step = MG_DT_FC_BLOCK, .size = MG_DT_FC_EMPTY, .derived = p->derived,
                          .elem = p->elem};
    add(f, c);
}

/* The class of a step of d bytes from one piece (INNER), or from a block of
 * `pieces` pieces whose data spans `span` bytes, to the next. A step of as
 * many bytes as the block has pieces (1 byte after one piece) is a class of
 * its own, below the data's length: where bytes and pieces are mixed up, it
 * looks like no gap at all. */
static void add_step(found *f, int ctor, int step, MPI_Aint d, MPI_Aint span, MPI_Count pieces, const piece *p)
{
    mg_dt_form_class c = {.ctor = ctor, .step = step, .derived = p->derived, .elem = p->elem};
    if (p->size == 0) {
        add_empty(f, ctor, p);
        return;
    }
    MPI_Aint m = d < 0 ? -d : d;
    c.negative = d < 0;
    if (ctor == MG_DT_FC_CONTIG) c.step = MG_DT_FC_INNER; /* a contiguous type is one block */
    if (m == 0)
        c.size = MG_DT_FC_ZERO;
    else if (m == (c.step == MG_DT_FC_INNER ? 1 : (MPI_Aint)pieces) && m < span)
        c.size = MG_DT_FC_BYTE;
    else if (m < span)
        c.size = MG_DT_FC_OVERLAP;
    else if (m == span)
        c.size = MG_DT_FC_DENSE;
    else
        c.size = MG_DT_FC_GAP;
    /* only an overlap or a gap may be of any length; a byte step is odd by nature */
    c.odd = (c.size == MG_DT_FC_OVERLAP || c.size == MG_DT_FC_GAP) && m % (MPI_Aint)p->esize != 0;
    add(f, c);
}

/* The data a block of bl pieces spans. */
static MPI_Aint block_span(MPI_Count bl, const piece *p)
{
    return (MPI_Aint)(bl - 1) * (p->ext < 0 ? -p->ext : p->ext) + p->span;
}

/* The steps of `n` blocks of blens[k] pieces p (else fixed_blen each) at byte
 * displacements displs[k] (else k * stride). */
static void add_blocks(found *f, int ctor, MPI_Count n, const MPI_Count *blens, MPI_Count fixed_blen,
                       const MPI_Aint *displs, MPI_Aint stride, const piece *p)
{
    MPI_Aint prev = 0;
    MPI_Count prev_bl = 0;
    for (MPI_Count k = 0; k < n; k++) {
        MPI_Count bl = blens ? blens[k] : fixed_blen;
        MPI_Aint at = displs ? displs[k] : (MPI_Aint)k * stride;
        if (bl == 0) {
            add_empty(f, ctor, p);
            continue;
        }
        if (bl > 1) add_step(f, ctor, MG_DT_FC_INNER, p->ext, p->span, 1, p);
        if (prev_bl)
            add_step(f, ctor, prev_bl > 1 ? MG_DT_FC_MULTI : MG_DT_FC_BLOCK, at - prev, block_span(prev_bl, p), prev_bl,
                     p);
        prev = at;
        prev_bl = bl;
        if (!displs && k >= 2) break; /* a vector's steps are all alike */
    }
}

static int classify(MPI_Datatype t, found *f, int depth);

/* The steps of one combiner's contents, and of its inner types. */
static int classify_contents(const mg_contents *ct, found *f, int depth)
{
    int comb = ct->combiner;
    if (comb == MPI_COMBINER_DUP || comb == MPI_COMBINER_RESIZED) return classify(ct->d[0], f, depth + 1);
    if (comb == MPI_COMBINER_STRUCT) {
        MPI_Count n = mg__contents_arg(ct, 0);
        piece prev = {0};
        MPI_Aint prev_at = 0;
        MPI_Count prev_bl = 0;
        for (MPI_Count k = 0; k < n; k++) {
            piece p;
            MG_TRY(piece_of(ct->d[k], &p));
            MPI_Count bl = mg__contents_arg(ct, 1 + k);
            MPI_Aint at = ct->large ? (MPI_Aint)ct->c[1 + n + k] : ct->a[k];
            if (bl == 0 || p.size == 0) {
                add_empty(f, MG_DT_FC_STRUCT, &p);
            } else {
                if (bl > 1) add_step(f, MG_DT_FC_STRUCT, MG_DT_FC_INNER, p.ext, p.span, 1, &p);
                /* from the data of one member's first piece to the next's */
                if (prev_bl)
                    add_step(f, MG_DT_FC_STRUCT, prev_bl > 1 ? MG_DT_FC_MULTI : MG_DT_FC_BLOCK,
                             (at + p.tlb) - (prev_at + prev.tlb), block_span(prev_bl, &prev), prev_bl, &prev);
                prev = p;
                prev_at = at;
                prev_bl = bl;
            }
            MG_TRY(classify(ct->d[k], f, depth + 1));
        }
        return MG_DT_SUCCESS;
    }
    if (ct->nd != 1) return MG_DT_ERR_UNSUPPORTED;
    piece p;
    MG_TRY(piece_of(ct->d[0], &p));
    MPI_Count n = mg__contents_arg(ct, 0);
    int rc = MG_DT_SUCCESS;
    switch (comb) {
    case MPI_COMBINER_CONTIGUOUS:
        if (n > 1) add_step(f, MG_DT_FC_CONTIG, MG_DT_FC_INNER, p.ext, p.span, 1, &p);
        if (n > 0 && p.size == 0) add_empty(f, MG_DT_FC_CONTIG, &p);
        break;
    case MPI_COMBINER_VECTOR:
    case MPI_COMBINER_HVECTOR: {
        int h = comb == MPI_COMBINER_HVECTOR;
        MPI_Aint stride = !h ? (MPI_Aint)mg__contents_arg(ct, 2) * p.ext
                          : ct->large ? (MPI_Aint)ct->c[2]
                                      : ct->a[0];
        add_blocks(f, h ? MG_DT_FC_HVECTOR : MG_DT_FC_VECTOR, n, NULL, mg__contents_arg(ct, 1), NULL, stride, &p);
        break;
    }
    case MPI_COMBINER_INDEXED:
    case MPI_COMBINER_HINDEXED:
    case MPI_COMBINER_INDEXED_BLOCK:
    case MPI_COMBINER_HINDEXED_BLOCK: {
        int blocked = comb == MPI_COMBINER_INDEXED_BLOCK || comb == MPI_COMBINER_HINDEXED_BLOCK;
        int bytes = comb == MPI_COMBINER_HINDEXED || comb == MPI_COMBINER_HINDEXED_BLOCK;
        int ctor = blocked ? (bytes ? MG_DT_FC_HINDEXED_BLOCK : MG_DT_FC_INDEXED_BLOCK)
                           : (bytes ? MG_DT_FC_HINDEXED : MG_DT_FC_INDEXED);
        MPI_Count first = blocked ? 2 : 1 + n;
        MPI_Count *blens = blocked ? NULL : malloc(sizeof(MPI_Count) * (size_t)(n + 1));
        MPI_Aint *displs = malloc(sizeof(MPI_Aint) * (size_t)(n + 1));
        if ((!blocked && !blens) || !displs) {
            rc = MG_DT_ERR_NOMEM;
        } else {
            for (MPI_Count k = 0; k < n; k++) {
                if (blens) blens[k] = mg__contents_arg(ct, 1 + k);
                if (bytes)
                    displs[k] = ct->large ? (MPI_Aint)ct->c[first + k] : ct->a[k];
                else
                    displs[k] = (MPI_Aint)mg__contents_arg(ct, first + k) * p.ext;
            }
            add_blocks(f, ctor, n, blens, blocked ? mg__contents_arg(ct, 1) : 0, displs, 0, &p);
        }
        free(blens);
        free(displs);
        break;
    }
    default: rc = MG_DT_ERR_UNSUPPORTED; /* never built by mg_dt_to_mpi: subarray, darray, ... */
    }
    if (rc == MG_DT_SUCCESS) rc = classify(ct->d[0], f, depth + 1);
    return rc;
}

static int classify(MPI_Datatype t, found *f, int depth)
{
    if (depth > 64) return MG_DT_ERR_UNSUPPORTED;
    mg_contents ct;
    MG_TRY(mg__contents_get(t, &ct));
    int rc = is_predefined(ct.combiner) ? MG_DT_SUCCESS : classify_contents(&ct, f, depth);
    mg__contents_free(&ct);
    return rc;
}

int mg_dt_form_classes(MPI_Datatype type, int repeated, mg_dt_form_class *out, int max, int *n)
{
    if (type == MPI_DATATYPE_NULL || !n || max < 0 || (max > 0 && !out)) return MG_DT_ERR_ARG;
    found f = {out, max, 0};
    *n = 0;
    MG_TRY(classify(type, &f, 0));
    if (repeated) {
        piece p;
        MG_TRY(piece_of(type, &p));
        /* count elements: copies of the type, an extent apart */
        if (p.derived) add_step(&f, MG_DT_FC_CONTIG, MG_DT_FC_INNER, p.ext, p.span, 1, &p);
    }
    *n = f.n;
    return f.n > max ? MG_DT_ERR_TRUNCATED : MG_DT_SUCCESS;
}

/* Whether c is a class mg_dt_form_classes can find: an empty block has no
 * step size, sign or step kind; a zero step no sign; only overlaps and gaps
 * may be odd; a contiguous type has one block. */
static int possible(const mg_dt_form_class *c)
{
    if (c->size == MG_DT_FC_EMPTY) /* a contiguous type's empty pieces are derived */
        return c->step == MG_DT_FC_BLOCK && !c->negative && !c->odd && (c->ctor != MG_DT_FC_CONTIG || c->derived);
    if (c->size == MG_DT_FC_ZERO && c->negative) return 0;
    if (c->odd && c->size != MG_DT_FC_OVERLAP && c->size != MG_DT_FC_GAP) return 0;
    return c->ctor != MG_DT_FC_CONTIG || c->step == MG_DT_FC_INNER;
}

int mg_dt_form_class_index(const mg_dt_form_class *c)
{
    if (!c || c->ctor < 0 || c->ctor > MG_DT_FC_STRUCT || c->step < 0 || c->step > MG_DT_FC_MULTI || c->size < 0 ||
        c->size > MG_DT_FC_EMPTY || !possible(c))
        return -1;
    return ((((c->ctor * 3 + c->step) * 6 + c->size) * 2 + !!c->negative) * 2 + !!c->odd) * 2 + !!c->derived;
}
