/* Normalization: rewrite rules applied bottom-up until none applies.
 *
 * The invariant of every rule is the same: the sequence of (address, byte) pairs
 * the node describes, in typemap order, does not change. Each rule below names
 * the reason it keeps that order. Results are memoized on the node because
 * decoding shares children (a struct of many copies of one subtype).
 */
#include "internal.h"
#include <stdlib.h>
#include <string.h>

typedef struct {
    MPI_Aint d;
    mg_node *n;
} piece;
typedef struct {
    piece *p;
    MPI_Count len, cap;
} plist;
/* A list of blocks as arrays (those of an IDX node, or scratch): block i
 * holds rlen(r, i) elements at d[i] (len NULL: every block holds len0). */
typedef struct {
    MPI_Aint *d;
    MPI_Count *len;
    MPI_Count len0;
} runs;
static inline MPI_Count rlen(const runs *r, MPI_Count i) { return r->len ? r->len[i] : r->len0; }

static int norm(mg_arena *a, mg_node *n, mg_node **out, MPI_Aint *disp);
static int seq_rules(mg_arena *a, plist *pl, mg_node **out, MPI_Aint *disp);

static int plist_push(plist *pl, MPI_Aint d, mg_node *n)
{
    if (pl->len == pl->cap) {
        MPI_Count cap = pl->cap ? 2 * pl->cap : 8;
        piece *p = realloc(pl->p, sizeof(piece) * (size_t)cap);
        if (!p) return MG_DT_ERR_NOMEM;
        pl->p = p;
        pl->cap = cap;
    }
    pl->p[pl->len++] = (piece){d, n};
    return MG_DT_SUCCESS;
}

static int finished(mg_arena *a, mg_node *n, mg_node **out)
{
    if (!n) return MG_DT_ERR_NOMEM;
    MG_TRY(mg__finish(a, n));
    *out = n;
    return MG_DT_SUCCESS;
}

static int new_block(mg_arena *a, MPI_Datatype e, MPI_Count esz, MPI_Count count, mg_node **out)
{
    return finished(a, mg__block(a, e, esz, count), out);
}

static int new_vec(mg_arena *a, MPI_Count count, MPI_Aint stride, mg_node *kid, mg_node **out)
{
    if (count == 1) {
        *out = kid;
        return MG_DT_SUCCESS;
    }
    return finished(a, mg__vec(a, count, stride, kid), out);
}

static int is_leaf(const mg_node *n) { return n->kind == MG_N_BLOCK || n->kind == MG_N_IDX; }

/* ---- IDX: a list of blocks of one element type ---- */

/* An IDX of m blocks from r starting at block `first`, displaced by -base.
 * share: r's arrays may become the node's own lists as they are (nothing else
 * will write them), which saves a copy of lists of millions of blocks. */
static int make_idx(mg_arena *a, MPI_Datatype e, MPI_Count esz, const runs *r, MPI_Count first, MPI_Count m,
                    MPI_Aint base, int share, mg_node **out)
{
    if (share && first == 0 && base == 0) {
        mg_node *n = mg__alloc(a, sizeof *n);
        if (!n) return MG_DT_ERR_NOMEM;
        *n = (mg_node){.kind = MG_N_IDX, .elem = e, .esize = esz, .count = m, .displs = r->d, .lens = r->len,
                       .blen = r->len0};
        return finished(a, n, out);
    }
    mg_node *n = r->len ? mg__idx(a, e, esz, m) : mg__idx_fixed(a, e, esz, m, r->len0);
    if (!n) return MG_DT_ERR_NOMEM;
    for (MPI_Count i = 0; i < m; i++) n->displs[i] = r->d[first + i] - base;
    if (r->len) memcpy(n->lens, r->len + first, sizeof(MPI_Count) * (size_t)m);
    return finished(a, n, out);
}

/* Length of the arithmetic run of equal-length blocks starting at i. */
static MPI_Count arith_run(const runs *r, MPI_Count m, MPI_Count i)
{
    const MPI_Aint *d = r->d;
    const MPI_Count *len = r->len;
    if (i + 1 >= m || rlen(r, i + 1) != rlen(r, i)) return 1;
    MPI_Aint s = d[i + 1] - d[i];
    MPI_Count j = i + 1;
    if (len)
        while (j + 1 < m && len[j + 1] == len[i] && d[j + 1] - d[j] == s) j++;
    else
        while (j + 1 < m && d[j + 1] - d[j] == s) j++;
    return j - i + 1;
}

/* Smallest period q (2..16) with block i+q = block i shifted by a constant; 0 if none. */
static MPI_Count find_period(const runs *r, MPI_Count m, MPI_Aint *shift)
{
    const MPI_Aint *d = r->d;
    const MPI_Count *len = r->len;
    for (MPI_Count q = 2; q <= 16 && 2 * q <= m; q++) {
        MPI_Aint p = d[q] - d[0];
        MPI_Count i = 0;
        if (len)
            while (i + q < m && len[i + q] == len[i] && d[i + q] - d[i] == p) i++;
        else
            while (i + q < m && d[i + q] - d[i] == p) i++;
        if (i + q >= m) {
            *shift = p;
            return q;
        }
    }
    return 0;
}

/* Drop empty blocks; merge a block with the next when it ends where the next
 * begins (the bytes stay in the same order, now in one block). In place (r
 * has its len list); returns the blocks left. */
static MPI_Count merge_runs(runs *r, MPI_Count m, MPI_Count esz)
{
    MPI_Aint *d = r->d;
    MPI_Count *len = r->len, k = 0;
    for (MPI_Count i = 0; i < m; i++) {
        if (len[i] == 0) continue;
        if (k && d[k - 1] + len[k - 1] * esz == d[i]) {
            len[k - 1] += len[i];
        } else {
            d[k] = d[i];
            len[k] = len[i];
            k++;
        }
    }
    return k;
}

/* The normal form of the blocks of r, which are merged already (merge_runs).
 * share: make_idx may keep r's arrays. split: allow the piecewise rule, which
 * hands the pieces to seq_rules; seq_rules calls back with split = 0. */
static int norm_runs(mg_arena *a, MPI_Datatype e, MPI_Count esz, const runs *r, MPI_Count m, int share, int split,
                     mg_node **out, MPI_Aint *disp)
{
    *disp = 0;
    *out = NULL;
    if (m == 0) return MG_DT_SUCCESS;
    mg_node *blk;
    if (arith_run(r, m, 0) == m) {
        /* Equal blocks at a constant distance are a vector (same order: i-th block is copy i). */
        MG_TRY(new_block(a, e, esz, rlen(r, 0), &blk));
        *disp = r->d[0];
        return new_vec(a, m, m > 1 ? r->d[1] - r->d[0] : 0, blk, out);
    }
    MPI_Aint shift;
    MPI_Count q = find_period(r, m, &shift);
    if (q) {
        /* A periodic list is a vector of its first period; the remainder follows. */
        MPI_Count reps = m / q, rest = m - reps * q;
        mg_node *period, *v;
        MPI_Aint vd;
        MG_TRY(make_idx(a, e, esz, r, 0, q, r->d[0], 0, &period));
        MG_TRY(finished(a, mg__vec(a, reps, shift, period), &v));
        MG_TRY(norm(a, v, &v, &vd));
        if (!rest) {
            *out = v;
            *disp = vd + r->d[0];
            return MG_DT_SUCCESS;
        }
        mg_node *tail;
        plist pl = {0};
        int rc = make_idx(a, e, esz, r, reps * q, rest, 0, 0, &tail);
        if (rc == MG_DT_SUCCESS) rc = plist_push(&pl, vd + r->d[0], v);
        if (rc == MG_DT_SUCCESS) rc = plist_push(&pl, 0, tail);
        if (rc == MG_DT_SUCCESS) rc = seq_rules(a, &pl, out, disp);
        free(pl.p);
        return rc;
    }
    if (split) {
        /* Piecewise regular: a short list of vectors (each run keeps its order). */
        MPI_Count nruns = 0;
        for (MPI_Count i = 0; i < m && nruns * 4 <= m; i += arith_run(r, m, i)) nruns++;
        if (nruns * 4 <= m) {
            plist pl = {0};
            int rc = MG_DT_SUCCESS;
            for (MPI_Count i = 0, len; i < m && rc == MG_DT_SUCCESS; i += len) {
                len = arith_run(r, m, i);
                mg_node *v;
                rc = new_block(a, e, esz, rlen(r, i), &blk);
                if (rc == MG_DT_SUCCESS) rc = new_vec(a, len, len > 1 ? r->d[i + 1] - r->d[i] : 0, blk, &v);
                if (rc == MG_DT_SUCCESS) rc = plist_push(&pl, r->d[i], v);
            }
            if (rc == MG_DT_SUCCESS) rc = seq_rules(a, &pl, out, disp);
            free(pl.p);
            return rc;
        }
    }
    return make_idx(a, e, esz, r, 0, m, 0, share, out);
}

/* Scratch lists of m blocks (free with runs_free). */
static int runs_alloc(runs *r, MPI_Count m)
{
    r->d = malloc(sizeof(MPI_Aint) * (size_t)(m ? m : 1));
    r->len = malloc(sizeof(MPI_Count) * (size_t)(m ? m : 1));
    return r->d && r->len ? MG_DT_SUCCESS : MG_DT_ERR_NOMEM;
}

static void runs_free(runs *r)
{
    free(r->d);
    free(r->len);
}

/* The normal form of an IDX node. Its lists are read where nothing merges,
 * rewritten in place where the node owns them (a node fresh from decoding,
 * which nothing reads after its normalization), and copied otherwise. */
static int norm_idx(mg_arena *a, mg_node *n, mg_node **out, MPI_Aint *disp)
{
    runs r = {n->displs, n->lens, n->blen};
    MPI_Count m = n->count;
    int own = n->own_lists;
    n->own_lists = 0; /* the result may share them */
    if (!n->merges) return norm_runs(a, n->elem, n->esize, &r, m, 1, 1, out, disp);
    if (own && r.len) {
        m = merge_runs(&r, m, n->esize);
        return norm_runs(a, n->elem, n->esize, &r, m, 1, 1, out, disp);
    }
    runs c;
    int rc = runs_alloc(&c, m);
    if (rc == MG_DT_SUCCESS) {
        memcpy(c.d, r.d, sizeof(MPI_Aint) * (size_t)m);
        for (MPI_Count i = 0; i < m; i++) c.len[i] = rlen(&r, i);
        m = merge_runs(&c, m, n->esize);
        rc = norm_runs(a, n->elem, n->esize, &c, m, 0, 1, out, disp);
    }
    runs_free(&c);
    return rc;
}

/* Leaf pieces (BLOCK, IDX) as one run list; mixed element types become bytes. */
static int leaves_to_runs(const plist *pl, MPI_Datatype *e, MPI_Count *esz, runs *r, MPI_Count *m)
{
    MPI_Count total = 0;
    *e = pl->p[0].n->elem;
    *esz = pl->p[0].n->esize;
    for (MPI_Count i = 0; i < pl->len; i++) {
        const mg_node *n = pl->p[i].n;
        total += n->kind == MG_N_BLOCK ? 1 : n->count;
        if (n->elem != *e || n->esize != *esz) {
            *e = MPI_BYTE;
            *esz = 1;
        }
    }
    MG_TRY(runs_alloc(r, total));
    MPI_Count k = 0;
    for (MPI_Count i = 0; i < pl->len; i++) {
        const mg_node *n = pl->p[i].n;
        MPI_Count scale = n->esize / *esz;
        if (n->kind == MG_N_BLOCK) {
            r->d[k] = pl->p[i].d;
            r->len[k++] = n->count * scale;
        } else {
            for (MPI_Count j = 0; j < n->count; j++, k++) {
                r->d[k] = pl->p[i].d + n->displs[j];
                r->len[k] = mg__len(n, j) * scale;
            }
        }
    }
    *m = merge_runs(r, k, *esz);
    return MG_DT_SUCCESS;
}

static int leaves(mg_arena *a, const plist *pl, int split, mg_node **out, MPI_Aint *disp)
{
    MPI_Datatype e;
    MPI_Count esz, m;
    runs r = {0};
    int rc = leaves_to_runs(pl, &e, &esz, &r, &m);
    if (rc == MG_DT_SUCCESS) rc = norm_runs(a, e, esz, &r, m, 0, split, out, disp);
    runs_free(&r);
    return rc;
}

/* ---- SEQ: pairwise rules on consecutive pieces ---- */

/* Try to combine x and y (y follows x in typemap order). Returns 1 if they
 * became one piece (in *x), 2 if both were rewritten, 0 if nothing applies. */
static int combine(mg_arena *a, piece *x, piece *y, int *rc)
{
    mg_node *p = x->n, *q = y->n, *n;
    *rc = MG_DT_SUCCESS;
    if (p->kind == MG_N_BLOCK && q->kind == MG_N_BLOCK && x->d + p->size == y->d) {
        /* Adjacent blocks: one block holding both, first p's bytes then q's. */
        int same = p->elem == q->elem && p->esize == q->esize;
        *rc = new_block(a, same ? p->elem : MPI_BYTE, same ? p->esize : 1,
                        same ? p->count + q->count : p->size + q->size, &x->n);
        return 1;
    }
    if (p->kind == MG_N_VEC && q->kind == MG_N_VEC && p->stride == q->stride && y->d == x->d + p->count * p->stride &&
        mg__node_equal(p->kid, q->kid)) {
        /* Vectors of one shape where the second continues the first: one vector. */
        *rc = finished(a, mg__vec(a, p->count + q->count, p->stride, p->kid), &x->n);
        return 1;
    }
    if (p->kind == MG_N_VEC && y->d == x->d + p->count * p->stride && mg__node_equal(p->kid, q)) {
        /* The next copy of the vector's child, at the next stride: append it. */
        *rc = finished(a, mg__vec(a, p->count + 1, p->stride, p->kid), &x->n);
        return 1;
    }
    if (q->kind == MG_N_VEC && x->d == y->d - q->stride && mg__node_equal(p, q->kid)) {
        /* The copy before the vector's first one: prepend it. */
        *rc = finished(a, mg__vec(a, q->count + 1, q->stride, q->kid), &x->n);
        return 1;
    }
    if (p->kind != MG_N_VEC && q->kind != MG_N_VEC && mg__node_equal(p, q)) {
        /* Two equal pieces: a vector of two. */
        *rc = finished(a, mg__vec(a, 2, y->d - x->d, p), &x->n);
        return 1;
    }
    if (p->kind == MG_N_BLOCK && q->kind == MG_N_VEC && q->kid->kind == MG_N_BLOCK && q->kid->elem == p->elem &&
        y->d == x->d + p->size) {
        /* A block ending where a vector's first block begins absorbs that block;
         * the vector starts one stride later (order: p, q's first block, rest). */
        if ((*rc = new_block(a, p->elem, p->esize, p->count + q->kid->count, &n))) return 0;
        x->n = n;
        *rc = new_vec(a, q->count - 1, q->stride, q->kid, &y->n);
        y->d += q->stride;
        return 2;
    }
    if (p->kind == MG_N_VEC && p->kid->kind == MG_N_BLOCK && q->kind == MG_N_BLOCK && q->elem == p->kid->elem &&
        y->d == x->d + (p->count - 1) * p->stride + p->kid->size) {
        /* Mirror image: the vector's last block and the block after it. */
        if ((*rc = new_block(a, q->elem, q->esize, p->kid->count + q->count, &n))) return 0;
        y->n = n;
        y->d = x->d + (p->count - 1) * p->stride;
        *rc = new_vec(a, p->count - 1, p->stride, p->kid, &x->n);
        return 2;
    }
    return 0;
}

static int seq_rules(mg_arena *a, plist *pl, mg_node **out, MPI_Aint *disp)
{
    int rc = MG_DT_SUCCESS;
    for (int changed = 1, pass = 0; changed && pass < 8; pass++) {
        changed = 0;
        MPI_Count k = 0;
        for (MPI_Count i = 0; i < pl->len; i++) {
            pl->p[k++] = pl->p[i];
            while (k >= 2) {
                int r = combine(a, &pl->p[k - 2], &pl->p[k - 1], &rc);
                if (rc) return rc;
                if (!r) break;
                changed = 1;
                if (r == 1)
                    k--;
                else
                    break;
            }
        }
        pl->len = k;
    }
    *disp = 0;
    if (pl->len == 1) {
        *out = pl->p[0].n;
        *disp = pl->p[0].d;
        return MG_DT_SUCCESS;
    }
    int all_leaves = 1;
    for (MPI_Count i = 0; i < pl->len; i++) all_leaves &= is_leaf(pl->p[i].n);
    if (all_leaves) return leaves(a, pl, 0, out, disp);
    mg_node *s = mg__seq(a, pl->len);
    if (!s) return MG_DT_ERR_NOMEM;
    for (MPI_Count i = 0; i < pl->len; i++) {
        s->kids[i] = pl->p[i].n;
        s->displs[i] = pl->p[i].d;
    }
    return finished(a, s, out);
}

/* Normalized children of a SEQ, nested SEQs spliced in (a struct inside a
 * struct lists its pieces in place, so the order is unchanged), empty ones
 * dropped. */
static int collect(mg_arena *a, const mg_node *s, MPI_Aint base, plist *pl)
{
    for (MPI_Count i = 0; i < s->count; i++) {
        mg_node *k;
        MPI_Aint d;
        MG_TRY(norm(a, s->kids[i], &k, &d));
        if (!k) continue;
        if (k->kind == MG_N_SEQ) {
            for (MPI_Count j = 0; j < k->count; j++)
                MG_TRY(plist_push(pl, base + s->displs[i] + d + k->displs[j], k->kids[j]));
        } else {
            MG_TRY(plist_push(pl, base + s->displs[i] + d, k));
        }
    }
    return MG_DT_SUCCESS;
}

static int norm_seq(mg_arena *a, const mg_node *s, mg_node **out, MPI_Aint *disp)
{
    plist pl = {0};
    int rc = collect(a, s, 0, &pl);
    *out = NULL;
    *disp = 0;
    if (rc == MG_DT_SUCCESS && pl.len) {
        int all_leaves = 1;
        for (MPI_Count i = 0; i < pl.len; i++) all_leaves &= is_leaf(pl.p[i].n);
        /* A struct of pieces of basic elements is an index over them. */
        rc = all_leaves ? leaves(a, &pl, 1, out, disp) : seq_rules(a, &pl, out, disp);
    }
    free(pl.p);
    return rc;
}

/* ---- VEC ---- */

/* Blocks of one copy of k as pieces (for the rotation rule). */
static int pieces_of(mg_arena *a, mg_node *k, plist *pl)
{
    if (k->kind == MG_N_SEQ) {
        for (MPI_Count i = 0; i < k->count; i++) MG_TRY(plist_push(pl, k->displs[i], k->kids[i]));
        return MG_DT_SUCCESS;
    }
    for (MPI_Count i = 0; i < k->count; i++) {
        mg_node *b;
        MG_TRY(new_block(a, k->elem, k->esize, mg__len(k, i), &b));
        MG_TRY(plist_push(pl, k->displs[i], b));
    }
    return MG_DT_SUCCESS;
}

/* A piece at d; a struct's pieces in its place (as collect() splices them), so
 * that the rules see them and the result has no struct inside a struct. */
static int push_spliced(plist *pl, MPI_Aint d, mg_node *n)
{
    if (n->kind != MG_N_SEQ) return plist_push(pl, d, n);
    for (MPI_Count i = 0; i < n->count; i++) MG_TRY(plist_push(pl, d + n->displs[i], n->kids[i]));
    return MG_DT_SUCCESS;
}

/* The rotation of copies of k at stride (internal.h); r->mid stays NULL when
 * k's last block does not end where the next copy's first block begins. */
int mg__rotation(mg_arena *a, mg_node *k, MPI_Aint stride, mg_rotation *r)
{
    memset(r, 0, sizeof *r);
    if ((k->kind != MG_N_IDX && k->kind != MG_N_SEQ) || k->count < 2) return MG_DT_SUCCESS;
    /* the join test first: the pieces of a long list are not made for nothing */
    MPI_Count last = k->count - 1;
    if (k->kind == MG_N_IDX && k->displs[last] + mg__len(k, last) * k->esize != stride + k->displs[0])
        return MG_DT_SUCCESS;
    if (k->kind == MG_N_SEQ && (k->kids[0]->kind != MG_N_BLOCK || k->kids[last]->kind != MG_N_BLOCK ||
                                k->displs[last] + k->kids[last]->size != stride + k->displs[0]))
        return MG_DT_SUCCESS;
    plist pl = {0}, mid = {0};
    int rc = pieces_of(a, k, &pl);
    piece *f = pl.p, *l = pl.p + pl.len - 1;
    if (rc || f->n->kind != MG_N_BLOCK || l->n->kind != MG_N_BLOCK || f->n->elem != l->n->elem ||
        l->d + l->n->size != stride + f->d)
        goto out;
    mg_node *joined, *midnode = NULL, *tailnode = NULL;
    MPI_Aint md = 0, td = 0;
    for (MPI_Count i = 1; i + 1 < pl.len && !rc; i++) rc = plist_push(&mid, pl.p[i].d, pl.p[i].n);
    if (!rc) rc = new_block(a, l->n->elem, l->n->esize, l->n->count + f->n->count, &joined);
    if (!rc) rc = plist_push(&mid, l->d, joined);
    if (!rc) rc = seq_rules(a, &mid, &midnode, &md);
    mid.len = 0;
    for (MPI_Count i = 1; i < pl.len && !rc; i++) rc = plist_push(&mid, pl.p[i].d, pl.p[i].n);
    if (!rc) rc = seq_rules(a, &mid, &tailnode, &td);
    if (!rc) *r = (mg_rotation){f->n, midnode, tailnode, f->d, md, td};
out:
    free(pl.p);
    free(mid.p);
    return rc;
}

/* count copies of k as their rotation: head block, the vector of count - 1
 * middle copies, the tail; *done = 0 when the copies do not join. */
static int rotate(mg_arena *a, MPI_Count count, MPI_Aint stride, mg_node *k, int *done, mg_node **out, MPI_Aint *disp)
{
    *done = 0;
    mg_rotation r;
    MG_TRY(mg__rotation(a, k, stride, &r));
    if (!r.mid) return MG_DT_SUCCESS;
    plist all = {0};
    mg_node *v;
    MPI_Aint vd;
    int rc = finished(a, mg__vec(a, count - 1, stride, r.mid), &v);
    if (!rc) rc = norm(a, v, &v, &vd);
    if (!rc) rc = plist_push(&all, r.head_d, r.head);
    if (!rc) rc = push_spliced(&all, r.mid_d + vd, v);
    if (!rc) rc = push_spliced(&all, r.tail_d + (count - 1) * stride, r.tail);
    if (!rc) rc = seq_rules(a, &all, out, disp);
    if (!rc) *done = 1;
    free(all.p);
    return rc;
}

static int norm_vec(mg_arena *a, const mg_node *n, mg_node **out, MPI_Aint *disp)
{
    mg_node *k;
    MPI_Aint kd;
    MG_TRY(norm(a, n->kid, &k, &kd));
    *out = NULL;
    *disp = kd;
    if (!k || n->count == 0) return MG_DT_SUCCESS;
    MPI_Count count = n->count;
    MPI_Aint stride = n->stride;
    for (;;) {
        if (count == 1) {
            *out = k;
            return MG_DT_SUCCESS;
        }
        if (k->kind == MG_N_BLOCK && stride == k->size) {
            /* Copies of a block placed end to end: one longer block. */
            return new_block(a, k->elem, k->esize, count * k->count, out);
        }
        if (k->kind == MG_N_VEC && stride == k->count * k->stride) {
            /* Outer stride = inner count x inner stride: the inner copies continue
             * at the same pitch across outer copies, so it is one vector. */
            count *= k->count;
            stride = k->stride;
            k = k->kid;
            continue;
        }
        break;
    }
    int done;
    MPI_Aint rd;
    MG_TRY(rotate(a, count, stride, k, &done, out, &rd));
    if (done) {
        *disp += rd;
        return MG_DT_SUCCESS;
    }
    /* A block repeated at a larger pitch (resized contiguous) stays a vector. */
    return finished(a, mg__vec(a, count, stride, k), out);
}

static int norm(mg_arena *a, mg_node *n, mg_node **out, MPI_Aint *disp)
{
    if (n->normalized) {
        *out = n->norm;
        *disp = n->norm_disp;
        return MG_DT_SUCCESS;
    }
    int rc;
    *out = NULL;
    *disp = 0;
    switch (n->kind) {
    case MG_N_BLOCK:
        rc = MG_DT_SUCCESS;
        if (n->count) *out = n;
        break;
    case MG_N_VEC: rc = norm_vec(a, n, out, disp); break;
    case MG_N_IDX: rc = norm_idx(a, n, out, disp); break;
    default: rc = norm_seq(a, n, out, disp); break;
    }
    if (rc) return rc;
    if (*out && (*out)->size == 0) *out = NULL;
    n->norm = *out;
    n->norm_disp = *disp;
    n->normalized = 1;
    if (*out && !(*out)->normalized) {
        (*out)->norm = *out; /* a normal form is its own normal form */
        (*out)->norm_disp = 0;
        (*out)->normalized = 1;
    }
    return MG_DT_SUCCESS;
}

/* ---- a fixed point ----
 *
 * The rules are applied greedily, so a normal form read back from its own
 * text (mg_dt_describe, mg_dt_parse, mg_dt_from_mpi) can meet them in another
 * order and come out differently. The normal form is therefore taken again
 * from a fresh copy of itself until it no longer changes: the result is what
 * its text normalizes to, and describe -> parse -> describe gives the same
 * text (tests/c/test_dt_random.c checks it on every type). */
#define MG_NORM_ROUNDS 4

/* A copy of the normal form n whose nodes are not marked normalized. Lists
 * are shared: the rules only read them. */
static mg_node *renew(mg_arena *a, const mg_node *n)
{
    mg_node *c = mg__alloc(a, sizeof *c);
    if (!c) return NULL;
    *c = *n;
    c->own_lists = 0;
    c->norm = NULL;
    c->norm_disp = 0;
    c->normalized = 0;
    c->op = MG_OP_NONE;
    if (n->kind == MG_N_VEC && !(c->kid = renew(a, n->kid))) return NULL;
    if (n->kind == MG_N_SEQ) {
        if (!(c->kids = mg__alloc(a, sizeof(mg_node *) * (size_t)(n->count ? n->count : 1)))) return NULL;
        for (MPI_Count i = 0; i < n->count; i++)
            if (!(c->kids[i] = renew(a, n->kids[i]))) return NULL;
    }
    return c;
}

static int norm_stable(mg_arena *a, mg_node *n, mg_node **out, MPI_Aint *disp)
{
    MG_TRY(norm(a, n, out, disp));
    for (int r = 0; r < MG_NORM_ROUNDS && *out; r++) {
        mg_node *c = renew(a, *out), *again = NULL;
        MPI_Aint d = 0;
        if (!c) return MG_DT_ERR_NOMEM;
        MG_TRY(norm(a, c, &again, &d));
        if (!again || (d == 0 && mg__node_equal(again, *out))) break;
        *out = again;
        *disp += d;
    }
    return MG_DT_SUCCESS;
}

int mg__normalize(mg_arena *a, mg_node *n, mg_node **out, MPI_Aint *disp) { return norm_stable(a, n, out, disp); }

int mg__repeat(const mg_dt *t, MPI_Count count, mg_visit fn, void *arg)
{
    if (!t->root || count == 0) return fn(NULL, 0, arg);
    mg_arena *a = mg__arena_new();
    if (!a) return MG_DT_ERR_NOMEM;
    mg_node *v = mg__vec(a, count, t->extent, t->root), *n = NULL;
    MPI_Aint disp = 0;
    int rc = v ? mg__finish(a, v) : MG_DT_ERR_NOMEM;
    if (!rc) rc = norm_stable(a, v, &n, &disp);
    if (!rc) rc = fn(n, disp + t->disp, arg);
    mg__arena_free(a);
    return rc;
}
