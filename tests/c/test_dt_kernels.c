/* The copy kernels at every length where they change (kernels.h): the moves
 * of blocks up to 64 bytes, the lengths with loops of their own, memcpy
 * above. For each block length, the primitives that call them (one dense
 * block, a vector, a vector of vectors, index lists of equal and of unequal
 * lengths, a struct's plain member) pack and unpack with mg_dt_pack and
 * mg_dt_unpack; the result must equal MPI_Pack's and MPI_Unpack's byte for
 * byte, with guard bytes around every buffer: nothing outside the data may
 * change. */
#include "mpiguide/dt.h"
#include "test_expect.h"

#include <stdlib.h>
#include <string.h>

#define GUARD 192

/* Bytes of the layout from `user` in type-map order, by MPI's own pack. */
static void reference(MPI_Datatype type, const unsigned char *user, unsigned char *out, int bytes)
{
    int pos = 0;
    MPI_Pack(user, 1, type, out, bytes, &pos, MPI_COMM_SELF);
}

static void fill(unsigned char *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++) p[i] = (unsigned char)(seed * 31u + i * 7u + (i >> 8));
}

static int untouched(const unsigned char *p, size_t n, unsigned char v)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != v) return 0;
    return 1;
}

static void check(MPI_Datatype type, const char *what, int b)
{
    MPI_Type_commit(&type);
    int bytes;
    MPI_Aint tlb, textent;
    MPI_Type_size(type, &bytes);
    MPI_Type_get_true_extent(type, &tlb, &textent);
    size_t span = (size_t)textent + 2 * GUARD, ssz = (size_t)bytes + 2 * GUARD;
    unsigned char *user = malloc(span), *stream = malloc(ssz), *want = malloc((size_t)bytes);
    unsigned char *back = malloc(span), *expect = malloc(span);
    unsigned char *ubase = user + GUARD - tlb, *bbase = back + GUARD - tlb;
    mg_dt *t = NULL;
    if (!user || !stream || !want || !back || !expect || mg_dt_from_mpi(type, &t) != MG_DT_SUCCESS) {
        fprintf(stderr, "%s, blocks of %d bytes: no engine type\n", what, b);
        failures++;
        goto out;
    }
    fill(user, span, (unsigned)b);
    reference(type, ubase, want, bytes);

    /* pack: exactly the stream, nothing before or after it */
    memset(stream, 0xA5, ssz);
    MPI_Count got = -1;
    int rc = mg_dt_pack(t, ubase, 1, 0, stream + GUARD, bytes, &got);
    if (rc != MG_DT_SUCCESS || got != bytes || memcmp(stream + GUARD, want, (size_t)bytes) ||
        !untouched(stream, GUARD, 0xA5) || !untouched(stream + GUARD + bytes, GUARD, 0xA5)) {
        fprintf(stderr, "%s, blocks of %d bytes: pack differs (rc %d, %lld bytes)\n", what, b, rc, (long long)got);
        failures++;
    }

    /* unpack into a buffer of another pattern: the data where MPI puts it,
     * every other byte (gaps and guards) as it was */
    memset(back, 0x5A, span);
    memcpy(expect, back, span);
    int pos = 0;
    MPI_Unpack(want, bytes, &pos, expect + GUARD - tlb, 1, type, MPI_COMM_SELF);
    got = -1;
    rc = mg_dt_unpack(t, want, bytes, 0, bbase, 1, &got);
    if (rc != MG_DT_SUCCESS || got != bytes || memcmp(back, expect, span)) {
        fprintf(stderr, "%s, blocks of %d bytes: unpack differs (rc %d, %lld bytes)\n", what, b, rc, (long long)got);
        failures++;
    }
out:
    mg_dt_free(t);
    free(user), free(stream), free(want), free(back), free(expect);
    MPI_Type_free(&type);
}

/* 3 copies of two byte blocks, extent apart: a vector of an index list. */
static MPI_Datatype pairs(const int *lens, const MPI_Aint *displs, MPI_Aint extent)
{
    MPI_Datatype in, one, t;
    MPI_Type_create_hindexed(2, lens, displs, MPI_BYTE, &in);
    MPI_Type_create_resized(in, 0, extent, &one);
    MPI_Type_contiguous(3, one, &t);
    MPI_Type_free(&in);
    MPI_Type_free(&one);
    return t;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    /* every kernel boundary and its neighbours (1..70), then lengths
     * around powers of two and the paper's blocks (A x 4 bytes) */
    int lens[200], n = 0;
    for (int b = 1; b <= 70; b++) lens[n++] = b;
    const int more[] = {96, 127, 128, 129, 191, 255, 256, 257, 300, 383, 384, 385, 400, 511, 512, 513,
                        800, 1000, 1023, 1024, 1025, 2047, 2048, 2049, 3200, 4000, 4095, 4096, 4097, 5000, 8192};
    for (size_t i = 0; i < sizeof more / sizeof more[0]; i++) lens[n++] = more[i];

    for (int i = 0; i < n; i++) {
        int b = lens[i], gap = 3 + b % 13; /* strides that are no multiple of anything */
        MPI_Datatype t, in, blocks[2];
        int bl2[2] = {b, b / 2 + 1}, bl1[2] = {b, b};
        MPI_Aint d2[2] = {0, b + gap};

        MPI_Type_contiguous(b, MPI_BYTE, &t);
        check(t, "one block", b);

        MPI_Type_vector(5, b, b + gap, MPI_BYTE, &t);
        check(t, "vector", b);

        MPI_Type_vector(3, b, b + gap, MPI_BYTE, &in);
        MPI_Type_create_hvector(4, 1, 3 * (b + gap) + 5, in, &t);
        MPI_Type_free(&in);
        check(t, "vector of vectors", b);

        check(pairs(bl1, d2, 2 * (b + gap) + 7), "index list, equal lengths", b);
        check(pairs(bl2, d2, 2 * (b + gap) + 7), "index list, unequal lengths", b);

        /* a struct of a plain block and a vector: the block is copied inline */
        int sl[2] = {b, 1};
        MPI_Aint sd[2] = {0, b + gap};
        MPI_Type_vector(2, 3, 5, MPI_BYTE, &blocks[1]);
        blocks[0] = MPI_BYTE;
        MPI_Type_create_struct(2, sl, sd, blocks, &t);
        MPI_Type_free(&blocks[1]);
        check(t, "struct member", b);
    }
    int total = 0;
    MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (total == 0) printf("test_dt_kernels: %d block lengths x 6 shapes, pack and unpack: all equal\n", n);
    MPI_Finalize();
    return total != 0;
}
