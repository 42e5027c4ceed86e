/* Whole-buffer execution: pack or unpack all `count` elements in one call.
 *
 * mg_dt_pack and mg_dt_unpack live here: a complete stream (offset 0, room
 * for all of it) runs here instead of in the cursor (pack.c, which gets
 * everything else): no seek, no frame stack, no partial blocks, so the
 * per-call cost is a few branches and each primitive runs as one loop nest.
 * Copies of a node whose pitch continues the node's own vector fuse into one
 * longer loop, and the copies of a type whose last block runs into the next
 * copy's first block use the rotation (internal.h), which the cursor does
 * not: fewer, longer blocks.
 */
#include "internal.h"
#include "kernels.h"

typedef unsigned char uc;

static uc *exec_pack(const mg_node *n, MPI_Count count, MPI_Aint pitch, uc *user, uc *stream);
static uc *exec_unpack(const mg_node *n, MPI_Count count, MPI_Aint pitch, uc *user, uc *stream);

/* The leaf loops as functions of their own: inlined into the dispatcher they
 * ran out of registers (the stride reloaded from the stack per block made the
 * Block layout's two-block rows 1.8x slower than the hand loop). */
#define MG_NOINLINE static __attribute__((noinline))
MG_NOINLINE void strided_pack(uc *user, ptrdiff_t stride, uc *stream, size_t n, size_t b)
{
    mg__strided(1, user, stride, stream, n, b);
}
MG_NOINLINE void strided_unpack(uc *user, ptrdiff_t stride, uc *stream, size_t n, size_t b)
{
    mg__strided(0, user, stride, stream, n, b);
}
MG_NOINLINE void strided2_pack(uc *user, ptrdiff_t s2, uc *stream, size_t rows, size_t c1, ptrdiff_t s1, size_t b)
{
    mg__strided2(1, user, s2, stream, rows, c1, s1, b);
}
MG_NOINLINE void strided2_unpack(uc *user, ptrdiff_t s2, uc *stream, size_t rows, size_t c1, ptrdiff_t s1, size_t b)
{
    mg__strided2(0, user, s2, stream, rows, c1, s1, b);
}
MG_NOINLINE void indexed_fixed_pack(uc *user, ptrdiff_t pitch, uc *stream, size_t copies, const MPI_Aint *d, size_t c,
                                    size_t b)
{
    mg__indexed_fixed(1, user, pitch, stream, copies, d, c, b);
}
MG_NOINLINE void indexed_fixed_unpack(uc *user, ptrdiff_t pitch, uc *stream, size_t copies, const MPI_Aint *d, size_t c,
                                      size_t b)
{
    mg__indexed_fixed(0, user, pitch, stream, copies, d, c, b);
}
MG_NOINLINE void indexed_pack(uc *user, ptrdiff_t pitch, uc *stream, size_t copies, const MPI_Aint *d,
                              const MPI_Count *lens, size_t c, size_t esz)
{
    mg__indexed(1, user, pitch, stream, copies, d, lens, c, esz);
}
MG_NOINLINE void indexed_unpack(uc *user, ptrdiff_t pitch, uc *stream, size_t copies, const MPI_Aint *d,
                                const MPI_Count *lens, size_t c, size_t esz)
{
    mg__indexed(0, user, pitch, stream, copies, d, lens, c, esz);
}
MG_INLINE void strided(int pack, uc *user, ptrdiff_t stride, uc *stream, size_t n, size_t b)
{
    (pack ? strided_pack : strided_unpack)(user, stride, stream, n, b);
}
MG_INLINE void strided2(int pack, uc *user, ptrdiff_t s2, uc *stream, size_t rows, size_t c1, ptrdiff_t s1, size_t b)
{
    (pack ? strided2_pack : strided2_unpack)(user, s2, stream, rows, c1, s1, b);
}

/* copies of the index list k, pitch apart; returns the stream's end. */
MG_INLINE uc *indexed(int pack, const mg_node *k, uc *user, ptrdiff_t pitch, uc *stream, size_t copies)
{
    if (k->op == MG_OP_INDEXED_FIXED)
        (pack ? indexed_fixed_pack : indexed_fixed_unpack)(user, pitch, stream, copies, k->displs, (size_t)k->count,
                                                           (size_t)(mg__len(k, 0) * k->esize));
    else
        (pack ? indexed_pack : indexed_unpack)(user, pitch, stream, copies, k->displs, k->lens, (size_t)k->count,
                                               (size_t)k->esize);
    return stream + (size_t)k->size * copies;
}

/* exec of a child node, through the function of the direction. */
MG_INLINE uc *descend(int pack, const mg_node *n, MPI_Count count, MPI_Aint pitch, uc *user, uc *stream)
{
    return (pack ? exec_pack : exec_unpack)(n, count, pitch, user, stream);
}

/* count copies of n, pitch bytes apart from user; returns the stream's end. */
MG_INLINE uc *exec(int pack, const mg_node *n, MPI_Count count, MPI_Aint pitch, uc *user, uc *stream)
{
    switch (n->op) {
    case MG_OP_CONTIG: {
        size_t b = (size_t)n->size;
        if (count == 1 || pitch == n->size)
            mg__move(pack, user, stream, b * (size_t)count);
        else
            strided(pack, user, pitch, stream, (size_t)count, b);
        return stream + b * (size_t)count;
    }
    case MG_OP_STRIDED: {
        size_t b = (size_t)n->kid->size, c = (size_t)n->count;
        if (count == 1 || pitch == n->count * n->stride)
            strided(pack, user, n->stride, stream, c * (size_t)count, b);
        else
            strided2(pack, user, pitch, stream, (size_t)count, c, n->stride, b);
        return stream + (size_t)n->size * (size_t)count;
    }
    case MG_OP_STRIDED2: {
        const mg_node *in = n->kid;
        size_t b = (size_t)in->kid->size;
        if (count == 1 || pitch == n->count * n->stride) {
            strided2(pack, user, n->stride, stream, (size_t)(n->count * count), (size_t)in->count, in->stride, b);
            return stream + (size_t)n->size * (size_t)count;
        }
        for (MPI_Count e = 0; e < count; e++, user += pitch, stream += n->size)
            strided2(pack, user, n->stride, stream, (size_t)n->count, (size_t)in->count, in->stride, b);
        return stream;
    }
    case MG_OP_INDEXED_FIXED:
    case MG_OP_INDEXED: return indexed(pack, n, user, pitch, stream, (size_t)count);
    case MG_OP_REPEAT_INDEXED:
        /* the index list's loop called from here, not through a second
         * dispatch (Alternating A=100, 3.2 kB: 8 blocks of ~400 bytes in
         * ~60 ns, a tenth of it in that dispatch) */
        if (count == 1 || pitch == n->count * n->stride)
            return indexed(pack, n->kid, user, n->stride, stream, (size_t)(n->count * count));
        __attribute__((fallthrough));
    case MG_OP_REPEAT:
        /* copies of a vector whose pitch continues it are one longer vector */
        if (count == 1 || pitch == n->count * n->stride)
            return descend(pack, n->kid, n->count * count, n->stride, user, stream);
        for (MPI_Count e = 0; e < count; e++, user += pitch)
            stream = descend(pack, n->kid, n->count, n->stride, user, stream);
        return stream;
    case MG_OP_SEQUENCE:
        for (MPI_Count e = 0; e < count; e++, user += pitch)
            for (MPI_Count i = 0; i < n->count; i++) {
                const mg_node *k = n->kids[i];
                if (k->op == MG_OP_CONTIG) { /* a struct's plain members without a call each */
                    mg__move(pack, user + n->displs[i], stream, (size_t)k->size);
                    stream += k->size;
                } else {
                    stream = descend(pack, k, 1, 0, user + n->displs[i], stream);
                }
            }
        return stream;
    default: return stream;
    }
}

static uc *exec_pack(const mg_node *n, MPI_Count count, MPI_Aint pitch, uc *user, uc *stream)
{
    return exec(1, n, count, pitch, user, stream);
}

static uc *exec_unpack(const mg_node *n, MPI_Count count, MPI_Aint pitch, uc *user, uc *stream)
{
    return exec(0, n, count, pitch, user, stream);
}

/* count >= 2 copies that join (the rotation): out of line, so that the
 * common path keeps a small stack frame. */
MG_NOINLINE void rotated(int pack, const mg_dt *t, MPI_Count count, uc *base, uc *stream)
{
    const mg_rotation *r = &t->rot;
    MPI_Aint last = (MPI_Aint)(count - 1) * t->extent;
    stream = descend(pack, r->head, 1, 0, base + r->head_d, stream);
    stream = descend(pack, r->mid, count - 1, t->extent, base + r->mid_d, stream);
    descend(pack, r->tail, 1, 0, base + r->tail_d + last, stream);
}

/* The top level, inlined into mg_dt_pack and mg_dt_unpack. */
MG_INLINE void whole(int pack, const mg_dt *t, MPI_Count count, uc *user, uc *stream)
{
    uc *base = user + t->disp;
    if (count >= 2 && t->rot.mid)
        rotated(pack, t, count, base, stream);
    else
        exec(pack, t->root, count, t->extent, base, stream);
}

/* The common case in few branches: a whole stream, the executor inlined so
 * that the call from the application reaches the leaf loop directly. Large
 * packs take the same loops: packing above 8 MB through a buffer in L1 and
 * non-temporal stores beat them by 1.3-1.6x on one day and lost to them by
 * as much on another, on the same machine (docs/dt-engine.md). */
MG_INLINE int transfer(const mg_dt *t, char *user, char *stream, MPI_Count count, MPI_Count offset, MPI_Count max,
                       MPI_Count *actual, int pack)
{
    MPI_Count total;
    if (__builtin_expect(t && actual && user && stream && offset == 0 && count > 0 && t->whole, 1) &&
        mg__mul(count, t->size, &total) && max >= total) {
        if (t->dense)
            mg__move(pack, (uc *)user + t->disp, (uc *)stream, (size_t)total);
        else
            whole(pack, t, count, (uc *)user, (uc *)stream);
        *actual = total;
        return MG_DT_SUCCESS;
    }
    return mg__transfer_rest(t, user, stream, count, offset, max, actual, pack);
}

int mg_dt_pack(const mg_dt *t, const void *inbuf, MPI_Count incount, MPI_Count offset, void *outbuf,
               MPI_Count max_bytes, MPI_Count *actual)
{
    return transfer(t, (char *)inbuf, outbuf, incount, offset, max_bytes, actual, 1);
}

int mg_dt_unpack(const mg_dt *t, const void *inbuf, MPI_Count in_bytes, MPI_Count offset, void *outbuf,
                 MPI_Count outcount, MPI_Count *actual)
{
    return transfer(t, outbuf, (char *)inbuf, outcount, offset, in_bytes, actual, 0);
}
