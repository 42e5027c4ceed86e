/* Copy kernels shared by the whole-buffer executor (whole.c) and the cursor
 * (pack.c). `pack` is a compile-time constant at every call site: 1 copies
 * user memory to the stream, 0 the stream to user memory.
 *
 * Blocks of up to 64 bytes never call memcpy: they are one or two moves of a
 * power-of-two width, overlapping when the length is not one (12 bytes = two
 * 8-byte moves at 0 and 4). The length is loop-invariant in every loop below,
 * so the branches that pick the width are predicted after the first block;
 * the most common lengths get loops of their own with the width folded in.
 */
#ifndef MG_DT_KERNELS_H
#define MG_DT_KERNELS_H

#include <mpi.h>
#include <stddef.h>
#include <string.h>

#define MG_INLINE      static inline __attribute__((always_inline))
#define MG_SMALL_BLOCK 64

/* Both loads before both stores: the two halves may overlap in the target. */
#define MG_PAIR(W, d, s, b)              \
    do {                                 \
        unsigned char lo_[W], hi_[W];    \
        memcpy(lo_, (s), W);             \
        memcpy(hi_, (s) + (b) - (W), W); \
        memcpy((d), lo_, W);             \
        memcpy((d) + (b) - (W), hi_, W); \
    } while (0)

/* Above 32 bytes, 16-byte moves that overlap only in the last one: measured
 * faster than two overlapping 32-byte halves for strided blocks of 40 bytes
 * (213 vs 281 us for 2.56 MB; glibc's memcpy 241 us). */
MG_INLINE void mg__copy_small(unsigned char *d, const unsigned char *s, size_t b)
{
    if (b > 32) {
        unsigned char x[16], y[16], z[16];
        memcpy(x, s, 16);
        memcpy(y, s + 16, 16);
        if (b > 48) {
            memcpy(z, s + 32, 16);
            memcpy(d + 32, z, 16);
        }
        memcpy(z, s + b - 16, 16);
        memcpy(d, x, 16);
        memcpy(d + 16, y, 16);
        memcpy(d + b - 16, z, 16);
    } else if (b >= 16) {
        MG_PAIR(16, d, s, b);
    } else if (b >= 8) {
        MG_PAIR(8, d, s, b);
    } else if (b >= 4) {
        MG_PAIR(4, d, s, b);
    } else if (b >= 2) {
        MG_PAIR(2, d, s, b);
    } else if (b) {
        *d = *s;
    }
}

MG_INLINE void mg__copy(unsigned char *d, const unsigned char *s, size_t b)
{
    if ((ptrdiff_t)b < 0) __builtin_unreachable(); /* sizes fit MPI_Count */
    if (__builtin_constant_p(b))
        memcpy(d, s, b); /* the compiler emits the moves for a known length */
    else if (b <= MG_SMALL_BLOCK)
        mg__copy_small(d, s, b);
    else
        memcpy(d, s, b);
}

/* One block between user memory and the stream. */
MG_INLINE void mg__move(int pack, unsigned char *user, unsigned char *stream, size_t b)
{
    if (pack)
        mg__copy(stream, user, b);
    else
        mg__copy(user, stream, b);
}

/* Two blocks of b bytes, s1 apart in user memory, back to back in the stream.
 * Packed blocks of up to 8 bytes are staged so that the stream gets one store
 * for both: such loops are bound by stores (the Block layout's rows of two
 * 8-byte blocks packed 1.24x slower than a hand loop that the compiler had
 * vectorized this way). */
MG_INLINE void mg__move_pair(int pack, unsigned char *user, ptrdiff_t s1, unsigned char *stream, size_t b)
{
    if (pack && __builtin_constant_p(b) && b <= 8) {
        unsigned char row[16];
        memcpy(row, user, b);
        memcpy(row + b, user + s1, b);
        memcpy(stream, row, 2 * b);
        return;
    }
    mg__move(pack, user, stream, b);
    mg__move(pack, user + s1, stream + b, b);
}

/* BODY with the block length B: a constant for the common lengths, a loop-
 * invariant variable for the rest (small and large variants kept apart so that
 * neither loop tests the length per block). */
#define MG_WITH_BLOCK(b, ...)             \
    switch (b) {                          \
    case 4: {                             \
        enum { B = 4 };                   \
        __VA_ARGS__;                      \
    } break;                              \
    case 8: {                             \
        enum { B = 8 };                   \
        __VA_ARGS__;                      \
    } break;                              \
    case 16: {                            \
        enum { B = 16 };                  \
        __VA_ARGS__;                      \
    } break;                              \
    case 32: {                            \
        enum { B = 32 };                  \
        __VA_ARGS__;                      \
    } break;                              \
    case 12: {                            \
        enum { B = 12 };                  \
        __VA_ARGS__;                      \
    } break;                              \
    case 24: {                            \
        enum { B = 24 };                  \
        __VA_ARGS__;                      \
    } break;                              \
    case 40: {                            \
        enum { B = 40 };                  \
        __VA_ARGS__;                      \
    } break;                              \
    case 64: {                            \
        enum { B = 64 };                  \
        __VA_ARGS__;                      \
    } break;                              \
    default:                              \
        if ((b) <= MG_SMALL_BLOCK) {      \
            const size_t B = (size_t)(b); \
            __VA_ARGS__;                  \
        } else {                          \
            const size_t B = (size_t)(b); \
            __VA_ARGS__;                  \
        }                                 \
    }

/* n blocks of b bytes, stride apart in user memory, back to back in the stream. */
MG_INLINE void mg__strided(int pack, unsigned char *user, ptrdiff_t stride, unsigned char *stream, size_t n, size_t b)
{
    /* loops run on the stream pointer up to its end: no separate counter */
    unsigned char *end = stream + n * b;
    MG_WITH_BLOCK(b, for (; stream != end; user += stride, stream += B) mg__move(pack, user, stream, B))
}

/* rows x (c1 blocks of b bytes, s1 apart), rows s2 apart. Two blocks per row
 * (the Block layout) is unrolled. */
MG_INLINE void mg__strided2(int pack, unsigned char *user, ptrdiff_t s2, unsigned char *stream, size_t rows, size_t c1,
                            ptrdiff_t s1, size_t b)
{
    unsigned char *end = stream + rows * c1 * b;
    if (c1 == 2) {
        MG_WITH_BLOCK(b, for (; stream != end; user += s2, stream += 2 * B) mg__move_pair(pack, user, s1, stream, B))
        return;
    }
    MG_WITH_BLOCK(
        b, for (; stream != end; user += s2) {
            unsigned char *u = user, *row_end = stream + c1 * B;
            for (; stream != row_end; u += s1, stream += B) mg__move(pack, u, stream, B);
        })
}

/* copies x (c blocks of b bytes at displs d[i]), copies pitch apart. */
MG_INLINE void mg__indexed_fixed(int pack, unsigned char *user, ptrdiff_t pitch, unsigned char *stream, size_t copies,
                                 const MPI_Aint *d, size_t c, size_t b)
{
    unsigned char *end = stream + copies * c * b;
    MG_WITH_BLOCK(
        b, for (; stream != end; user += pitch) {
            for (size_t i = 0; i < c; i++, stream += B) mg__move(pack, user + d[i], stream, B);
        })
}

/* copies x (blocks of lens[i] * esz bytes at d[i]); two blocks (the
 * Alternating layouts, two-field structs) with both lengths hoisted. */
MG_INLINE void mg__indexed(int pack, unsigned char *user, ptrdiff_t pitch, unsigned char *stream, size_t copies,
                           const MPI_Aint *d, const MPI_Count *lens, size_t c, size_t esz)
{
    if (c == 2) {
        /* the first length as a constant where it is a common one: with both
         * lengths variable the loop was 1.36x slower (4 + 12 bytes, 2.56 MB) */
        size_t b0 = (size_t)lens[0] * esz, b1 = (size_t)lens[1] * esz;
        ptrdiff_t d0 = d[0], d1 = d[1];
        unsigned char *end = stream + copies * (b0 + b1);
        MG_WITH_BLOCK(
            b0, for (; stream != end; user += pitch, stream += B + b1) {
                mg__move(pack, user + d0, stream, B);
                mg__move(pack, user + d1, stream + B, b1);
            })
        return;
    }
    for (size_t e = 0; e < copies; e++, user += pitch)
        for (size_t i = 0; i < c; i++) {
            size_t b = (size_t)lens[i] * esz;
            mg__move(pack, user + d[i], stream, b);
            stream += b;
        }
}

#endif
