/* The loop program interpreter: pack and unpack any byte range.
 *
 * State is an explicit stack of frames (no recursion), so a pack can stop in
 * the middle of a basic element and resume there. Leaf-level primitives run
 * whole loops per visit, with the copy kernels of kernels.h. Complete streams
 * do not come here (whole.c).
 */
#include "internal.h"
#include "kernels.h"
#include <stdlib.h>
#include <string.h>

typedef unsigned char uc;

typedef struct {
    const mg_node *n;
    MPI_Aint base;  /* origin of n relative to the user buffer */
    MPI_Count i, j; /* loop indices (meaning depends on the primitive) */
} frame;

#define MG_LOCAL_FRAMES 16

struct mg_dt_cursor {
    const mg_dt *t;
    mg_node top; /* count copies of the root */
    MPI_Count off, total;
    MPI_Count pos; /* bytes done of the current block of the top frame */
    int sp, cap;
    frame *st;
    frame local[MG_LOCAL_FRAMES];
};

static MPI_Count min_count(MPI_Count a, MPI_Count b) { return a < b ? a : b; }

/* The top node: count copies of the root at extent pitch, with the two cheap
 * count-aware rules applied (contiguous copies, vector continuing a vector). */
static void make_top(mg_dt_cursor *c, const mg_dt *t, MPI_Count count)
{
    const mg_node *r = t->root;
    mg_node *top = &c->top;
    memset(top, 0, sizeof *top);
    top->kind = MG_N_VEC;
    top->count = count;
    top->stride = t->extent;
    top->kid = (mg_node *)r;
    if (r->kind == MG_N_BLOCK && t->extent == r->size) {
        *top = *r;
        top->count = r->count * count;
        top->size = r->size * count;
    } else if (r->kind == MG_N_VEC && r->kid->kind == MG_N_BLOCK && t->extent == r->count * r->stride) {
        top->count = count * r->count;
        top->stride = r->stride;
        top->kid = r->kid;
    }
    if (top->kind == MG_N_VEC) top->size = top->count * top->kid->size;
    top->op = mg__op_of(top);
}

/* Position the cursor at byte `off` of the stream: logarithmic in the blocks
 * (divisions for vectors, binary search over prefix sums for lists). */
static void seek(mg_dt_cursor *c, MPI_Count off)
{
    c->off = off;
    c->pos = 0;
    c->sp = 0;
    if (off >= c->total) return;
    c->st[c->sp++] = (frame){&c->top, c->t->disp, 0, 0};
    for (;;) {
        frame *f = &c->st[c->sp - 1];
        const mg_node *n = f->n;
        MPI_Count i, lo, hi, b;
        switch (n->op) {
        case MG_OP_CONTIG: c->pos = off; return;
        case MG_OP_STRIDED:
            b = n->kid->size;
            f->i = off / b;
            c->pos = off % b;
            return;
        case MG_OP_STRIDED2:
            b = n->kid->kid->size;
            i = off / b;
            f->i = i / n->kid->count;
            f->j = i % n->kid->count;
            c->pos = off % b;
            return;
        case MG_OP_INDEXED_FIXED:
            b = mg__len(n, 0) * n->esize;
            f->i = off / b;
            c->pos = off % b;
            return;
        case MG_OP_REPEAT_INDEXED:
            i = off / n->kid->size;
            f->i = i;
            off -= i * n->kid->size;
            n = n->kid; /* the block within copy i, as for INDEXED */
            if (n->fixed) {
                b = mg__len(n, 0) * n->esize;
                f->j = off / b;
                c->pos = off % b;
                return;
            }
            /* fall through */
        case MG_OP_INDEXED:
        case MG_OP_SEQUENCE:
            /* last entry whose prefix is <= off (entries are never empty) */
            lo = 0;
            hi = n->count - 1;
            while (lo < hi) {
                MPI_Count mid = lo + (hi - lo + 1) / 2;
                if (n->prefix[mid] <= off)
                    lo = mid;
                else
                    hi = mid - 1;
            }
            off -= n->prefix[lo];
            if (f->n->op == MG_OP_REPEAT_INDEXED) {
                f->j = lo;
                c->pos = off;
                return;
            }
            if (n->op == MG_OP_INDEXED) {
                f->i = lo;
                c->pos = off;
                return;
            }
            f->i = lo + 1;
            c->st[c->sp++] = (frame){n->kids[lo], f->base + n->displs[lo], 0, 0};
            break;
        case MG_OP_REPEAT:
            i = off / n->kid->size;
            off -= i * n->kid->size;
            f->i = i + 1;
            c->st[c->sp++] = (frame){n->kid, f->base + (MPI_Aint)i * n->stride, 0, 0};
            break;
        default: return;
        }
    }
}

/* One leaf-level block: finish the partial block at pos, return bytes moved. */
static inline __attribute__((always_inline)) MPI_Count partial(int pack, char *user, char *stream, MPI_Count b,
                                                               MPI_Count *pos, MPI_Count left)
{
    MPI_Count take = min_count(b - *pos, left);
    mg__move(pack, (uc *)user + *pos, (uc *)stream, (size_t)take);
    *pos += take;
    return take;
}

static inline __attribute__((always_inline)) MPI_Count run(mg_dt_cursor *c, char *ubuf, char *stream, MPI_Count max,
                                                           const int pack)
{
    MPI_Count left = max;
    while (left > 0 && c->sp > 0) {
        frame *f = &c->st[c->sp - 1];
        const mg_node *n = f->n;
        switch (n->op) {
        case MG_OP_CONTIG: {
            MPI_Count take = partial(pack, ubuf + f->base, stream, n->size, &c->pos, left);
            stream += take;
            left -= take;
            if (c->pos == n->size) {
                c->pos = 0;
                c->sp--;
            }
            break;
        }
        case MG_OP_STRIDED:
        case MG_OP_STRIDED2: {
            /* STRIDED2: outer loop i over n, inner loop j over n->kid */
            const mg_node *in = n->op == MG_OP_STRIDED2 ? n->kid : n;
            MPI_Count b = in->kid->size, outer = n->op == MG_OP_STRIDED2 ? n->count : 1;
            MPI_Count *jp = n->op == MG_OP_STRIDED2 ? &f->j : &f->i;
            MPI_Count *ip = n->op == MG_OP_STRIDED2 ? &f->i : NULL;
            while (left > 0) {
                char *row = ubuf + f->base + (ip ? (MPI_Aint)*ip * n->stride : 0);
                if (ip && !c->pos && !*jp) {
                    /* whole rows at once */
                    MPI_Count rows = min_count(outer - *ip, left / in->size);
                    mg__strided2(pack, (uc *)row, n->stride, (uc *)stream, (size_t)rows, (size_t)in->count, in->stride,
                                 (size_t)b);
                    stream += rows * in->size;
                    left -= rows * in->size;
                    if ((*ip += rows) == outer || left == 0) break;
                    row = ubuf + f->base + (MPI_Aint)*ip * n->stride;
                }
                if (c->pos) {
                    MPI_Count take = partial(pack, row + (MPI_Aint)*jp * in->stride, stream, b, &c->pos, left);
                    stream += take;
                    left -= take;
                    if (c->pos < b) break;
                    c->pos = 0;
                    ++*jp;
                }
                MPI_Count full = min_count(in->count - *jp, left / b);
                mg__strided(pack, (uc *)row + (MPI_Aint)*jp * in->stride, in->stride, (uc *)stream, (size_t)full,
                            (size_t)b);
                *jp += full;
                stream += full * b;
                left -= full * b;
                if (*jp < in->count) {
                    if (left > 0) { /* the block the stream ends in */
                        MPI_Count take = partial(pack, row + (MPI_Aint)*jp * in->stride, stream, b, &c->pos, left);
                        stream += take;
                        left -= take;
                    }
                    break;
                }
                if (!ip) break;
                *jp = 0;
                if (++*ip == outer) break;
            }
            if ((ip ? *ip == outer : *jp == in->count) && c->pos == 0) c->sp--;
            break;
        }
        case MG_OP_INDEXED_FIXED:
        case MG_OP_INDEXED: {
            char *u = ubuf + f->base;
            const MPI_Aint *d = n->displs;
            MPI_Count esz = n->esize;
            if (c->pos) {
                MPI_Count b = mg__len(n, f->i) * esz;
                MPI_Count take = partial(pack, u + d[f->i], stream, b, &c->pos, left);
                stream += take;
                left -= take;
                if (c->pos < b) break;
                c->pos = 0;
                f->i++;
            }
            MPI_Count i = f->i;
            if (n->op == MG_OP_INDEXED_FIXED) {
                MPI_Count b = mg__len(n, 0) * esz, full = min_count(n->count - i, left / b);
                MPI_Count end = i + full;
                MG_WITH_BLOCK(b, for (; i < end; i++, stream += B) mg__move(pack, (uc *)u + d[i], (uc *)stream, B))
                left -= full * b;
            } else {
                MPI_Count b;
                while (i < n->count && (b = n->lens[i] * esz) <= left) {
                    mg__move(pack, (uc *)u + d[i], (uc *)stream, (size_t)b);
                    stream += b;
                    left -= b;
                    i++;
                }
            }
            f->i = i;
            if (i < n->count && left > 0) {
                MPI_Count take = partial(pack, u + d[i], stream, mg__len(n, i) * esz, &c->pos, left);
                stream += take;
                left -= take;
            }
            if (f->i == n->count) c->sp--;
            break;
        }
        case MG_OP_REPEAT_INDEXED: {
            /* i: copy, j: block within the copy */
            const mg_node *in = n->kid;
            const MPI_Aint *d = in->displs;
            const MPI_Count esz = in->esize;
            if (!c->pos && !f->j) {
                /* whole copies at once */
                MPI_Count full = min_count(n->count - f->i, left / in->size);
                char *u = ubuf + f->base + (MPI_Aint)f->i * n->stride;
                for (MPI_Count e = 0; e < full; e++, u += n->stride)
                    for (MPI_Count j = 0; j < in->count; j++) {
                        MPI_Count b = mg__len(in, j) * esz;
                        mg__move(pack, (uc *)u + d[j], (uc *)stream, (size_t)b);
                        stream += b;
                    }
                f->i += full;
                left -= full * in->size;
            }
            while (left > 0 && f->i < n->count) {
                char *u = ubuf + f->base + (MPI_Aint)f->i * n->stride;
                MPI_Count j = f->j, b;
                if (c->pos) {
                    b = mg__len(in, j) * esz;
                    MPI_Count take = partial(pack, u + d[j], stream, b, &c->pos, left);
                    stream += take;
                    left -= take;
                    if (c->pos < b) break;
                    c->pos = 0;
                    j++;
                }
                while (j < in->count && (b = mg__len(in, j) * esz) <= left) {
                    mg__move(pack, (uc *)u + d[j], (uc *)stream, (size_t)b);
                    stream += b;
                    left -= b;
                    j++;
                }
                if (j < in->count) {
                    if (left > 0) {
                        MPI_Count take = partial(pack, u + d[j], stream, mg__len(in, j) * esz, &c->pos, left);
                        stream += take;
                        left -= take;
                    }
                    f->j = j;
                    break;
                }
                f->j = 0;
                if (++f->i == n->count) break;
            }
            if (f->i == n->count && c->pos == 0) c->sp--;
            break;
        }
        case MG_OP_REPEAT:
            if (f->i == n->count) {
                c->sp--;
                break;
            }
            c->st[c->sp++] = (frame){n->kid, f->base + (MPI_Aint)f->i * n->stride, 0, 0};
            f->i++;
            break;
        case MG_OP_SEQUENCE:
            if (f->i == n->count) {
                c->sp--;
                break;
            }
            c->st[c->sp++] = (frame){n->kids[f->i], f->base + n->displs[f->i], 0, 0};
            f->i++;
            break;
        default: c->sp = 0; break;
        }
    }
    MPI_Count done = max - left;
    c->off += done;
    return done;
}

static MPI_Count run_pack(mg_dt_cursor *c, const void *in, void *out, MPI_Count max)
{
    return run(c, (char *)in, out, max, 1);
}

static MPI_Count run_unpack(mg_dt_cursor *c, void *out, const void *in, MPI_Count max)
{
    return run(c, out, (char *)in, max, 0);
}

/* Set up a cursor; frames come from c->local when the type is shallow. */
static int cursor_init(mg_dt_cursor *c, const mg_dt *t, MPI_Count count, MPI_Count offset)
{
    if (!t || count < 0 || offset < 0) return MG_DT_ERR_ARG;
    memset(c, 0, offsetof(mg_dt_cursor, local));
    c->t = t;
    if (!mg__mul(count, t->size, &c->total)) return MG_DT_ERR_OVERFLOW;
    if (offset > c->total) return MG_DT_ERR_OFFSET;
    c->st = c->local;
    c->cap = MG_LOCAL_FRAMES;
    if (!t->root || count == 0) {
        c->off = offset;
        return MG_DT_SUCCESS;
    }
    make_top(c, t, count);
    int need = t->root->depth + 2;
    if (need > MG_LOCAL_FRAMES) {
        if (!(c->st = malloc(sizeof(frame) * (size_t)need))) return MG_DT_ERR_NOMEM;
        c->cap = need;
    }
    seek(c, offset);
    return MG_DT_SUCCESS;
}

static void cursor_release(mg_dt_cursor *c)
{
    if (c->st != c->local) free(c->st);
    c->st = c->local;
}

/* mg_dt_pack and mg_dt_unpack of anything but a whole stream (whole.c): a
 * piece of a stream, to a cursor, and every argument error. */
int mg__transfer_rest(const mg_dt *t, char *user, char *stream, MPI_Count count, MPI_Count offset, MPI_Count max,
                      MPI_Count *actual, int pack)
{
    MPI_Count total;
    if (!actual || max < 0) return MG_DT_ERR_ARG;
    *actual = 0;
    if (!t || count < 0 || offset < 0) return MG_DT_ERR_ARG;
    if (!mg__mul(count, t->size, &total)) return MG_DT_ERR_OVERFLOW;
    if (offset > total) return MG_DT_ERR_OFFSET;
    MPI_Count want = min_count(max, total - offset);
    if (want == 0) return MG_DT_SUCCESS;
    if (!user || !stream) return MG_DT_ERR_ARG;
    if (t->dense) {
        mg__move(pack, (uc *)user + t->disp + offset, (uc *)stream, (size_t)want);
        *actual = want;
        return MG_DT_SUCCESS;
    }
    mg_dt_cursor c;
    MG_TRY(cursor_init(&c, t, count, offset));
    *actual = pack ? run_pack(&c, user, stream, want) : run_unpack(&c, user, stream, want);
    cursor_release(&c);
    return MG_DT_SUCCESS;
}

int mg_dt_cursor_create(const mg_dt *t, MPI_Count count, MPI_Count offset, mg_dt_cursor **out)
{
    if (!out) return MG_DT_ERR_ARG;
    *out = NULL;
    mg_dt_cursor *c = malloc(sizeof *c);
    if (!c) return MG_DT_ERR_NOMEM;
    int rc = cursor_init(c, t, count, offset);
    if (rc) {
        free(c);
        return rc;
    }
    *out = c;
    return MG_DT_SUCCESS;
}

int mg_dt_cursor_pack(mg_dt_cursor *c, const void *inbuf, void *outbuf, MPI_Count max_bytes, MPI_Count *actual)
{
    if (!c || !actual || max_bytes < 0) return MG_DT_ERR_ARG;
    MPI_Count want = min_count(max_bytes, c->total - c->off);
    if (want > 0 && (!inbuf || !outbuf)) return MG_DT_ERR_ARG;
    *actual = run_pack(c, inbuf, outbuf, want);
    return MG_DT_SUCCESS;
}

int mg_dt_cursor_unpack(mg_dt_cursor *c, const void *inbuf, MPI_Count in_bytes, void *outbuf, MPI_Count *actual)
{
    if (!c || !actual || in_bytes < 0) return MG_DT_ERR_ARG;
    MPI_Count want = min_count(in_bytes, c->total - c->off);
    if (want > 0 && (!inbuf || !outbuf)) return MG_DT_ERR_ARG;
    *actual = run_unpack(c, outbuf, inbuf, want);
    return MG_DT_SUCCESS;
}

MPI_Count mg_dt_cursor_offset(const mg_dt_cursor *c) { return c ? c->off : 0; }

void mg_dt_cursor_free(mg_dt_cursor *c)
{
    if (!c) return;
    cursor_release(c);
    free(c);
}
