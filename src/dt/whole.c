/* Whole-buffer execution: pack or unpack all `count` elements in one call.
 *
 * mg_dt_pack and mg_dt_unpack of a complete stream (offset 0, room for all of
 * it) end here instead of in the cursor: no seek, no frame stack, no partial
 * blocks, so the per-call cost is a few branches and each primitive runs as
 * one loop nest. Copies of a node whose pitch continues the node's own vector
 * fuse into one longer loop, and the copies of a type whose last block runs
 * into the next copy's first block use the rotation (internal.h), which the
 * cursor does not: fewer, longer blocks.
 */
#include "internal.h"
#include "kernels.h"
#include <stdint.h>

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
        (pack ? indexed_fixed_pack : indexed_fixed_unpack)(user, pitch, stream, (size_t)count, n->displs,
                                                           (size_t)n->count, (size_t)(n->lens[0] * n->esize));
        return stream + (size_t)n->size * (size_t)count;
    case MG_OP_INDEXED:
        (pack ? indexed_pack : indexed_unpack)(user, pitch, stream, (size_t)count, n->displs, n->lens, (size_t)n->count,
                                               (size_t)n->esize);
        return stream + (size_t)n->size * (size_t)count;
    case MG_OP_REPEAT_INDEXED:
    case MG_OP_REPEAT:
        /* copies of a vector whose pitch continues it are one longer vector */
        if (count == 1 || pitch == n->count * n->stride)
            return descend(pack, n->kid, n->count * count, n->stride, user, stream);
        for (MPI_Count e = 0; e < count; e++, user += pitch)
            stream = descend(pack, n->kid, n->count, n->stride, user, stream);
        return stream;
    case MG_OP_SEQUENCE:
        for (MPI_Count e = 0; e < count; e++, user += pitch)
            for (MPI_Count i = 0; i < n->count; i++)
                stream = descend(pack, n->kids[i], 1, 0, user + n->displs[i], stream);
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

/* The top level inlined per direction: one call less per pack. */
MG_INLINE void whole(int pack, const mg_dt *t, MPI_Count count, uc *user, uc *stream)
{
    uc *base = user + t->disp;
    const mg_rotation *r = &t->rot;
    if (count >= 2 && r->mid) {
        MPI_Aint last = (MPI_Aint)(count - 1) * t->extent;
        stream = exec(pack, r->head, 1, 0, base + r->head_d, stream);
        stream = exec(pack, r->mid, count - 1, t->extent, base + r->mid_d, stream);
        exec(pack, r->tail, 1, 0, base + r->tail_d + last, stream);
        return;
    }
    exec(pack, t->root, count, t->extent, base, stream);
}

#if defined(__SSE2__)
#include <emmintrin.h>
/* Packing a stream larger than the caches: a few elements at a time into a
 * buffer that stays in L1, then to the output with non-temporal stores, which
 * do not read the output's lines before writing them (64 MB of 40-byte
 * blocks: 5.4-5.8 ms instead of 7.1-9.5; 8-byte blocks gain nothing). */
#define MG_STREAM_MIN   ((MPI_Count)8 << 20)
#define MG_STREAM_PIECE 16384

static void stream_out(uc *dst, const uc *src, size_t n)
{
    size_t head = (size_t)(-(uintptr_t)dst & 15);
    if (head > n) head = n;
    memcpy(dst, src, head);
    dst += head, src += head, n -= head;
    for (; n >= 64; n -= 64, dst += 64, src += 64) {
        __m128i a = _mm_loadu_si128((const __m128i *)src), b = _mm_loadu_si128((const __m128i *)(src + 16));
        __m128i c = _mm_loadu_si128((const __m128i *)(src + 32)), d = _mm_loadu_si128((const __m128i *)(src + 48));
        _mm_stream_si128((__m128i *)dst, a);
        _mm_stream_si128((__m128i *)(dst + 16), b);
        _mm_stream_si128((__m128i *)(dst + 32), c);
        _mm_stream_si128((__m128i *)(dst + 48), d);
    }
    memcpy(dst, src, n);
}

MG_NOINLINE int pack_streamed(const mg_dt *t, MPI_Count count, uc *user, uc *stream)
{
    MPI_Count per = MG_STREAM_PIECE / t->size;
    if (per < 1) return 0;
    _Alignas(64) uc piece[MG_STREAM_PIECE];
    for (MPI_Count i = 0; i < count; i += per) {
        MPI_Count k = count - i < per ? count - i : per;
        whole(1, t, k, user + i * t->extent, piece);
        stream_out(stream, piece, (size_t)(k * t->size));
        stream += k * t->size;
    }
    _mm_sfence(); /* the streamed stores are ordered before anything the caller does next */
    return 1;
}
#else
#define MG_STREAM_MIN ((MPI_Count)INT64_MAX) /* no streaming stores on this target */
static int pack_streamed(const mg_dt *t, MPI_Count count, uc *user, uc *stream)
{
    (void)t, (void)count, (void)user, (void)stream;
    return 0;
}
#endif

void mg__whole(const mg_dt *t, MPI_Count count, void *user, void *stream, int pack)
{
    /* the size test before the call: pack_streamed's division and 16 kB frame
     * cost a pack of a few kB more than its loop (Tiled A=100, 3.2 kB: 51 ns,
     * 43 ns without) */
    if (pack && count * t->size >= MG_STREAM_MIN && pack_streamed(t, count, user, stream)) return;
    if (pack)
        whole(1, t, count, user, stream);
    else
        whole(0, t, count, user, stream);
}
