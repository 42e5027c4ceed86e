/* libmpiguide-tune's datatype strategies give exactly what the native calls
 * give: for every strategy of the sender and of the receiver (native,
 * normalized, pack, mixed as MPI's matching rules allow), every type (vector,
 * indexed, struct with gaps, resized with a negative lb, subarray, a pair
 * type, a contiguous one) and count (0, 1, prime, large), the received bytes
 * (gaps and guard bytes included) and every status field equal those of the
 * native calls; so do short messages, partial elements, truncation (with
 * MPI_ERRORS_RETURN), MPI_ANY_SOURCE/MPI_ANY_TAG and MPI_Sendrecv in a ring.
 * The native result of each case is measured first, with the library forced
 * to native on both sides. Run with 2 to 4 processes. */
#define _POSIX_C_SOURCE 200809L
#include "mpiguide/tune.h"
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures, rank, size;
#define EXPECT(cond)                                                                           \
    do {                                                                                       \
        if (!(cond)) {                                                                         \
            fprintf(stderr, "rank %d: %s:%d: expected %s\n", rank, __FILE__, __LINE__, #cond); \
            failures++;                                                                        \
        }                                                                                      \
    } while (0)

static const char *const strategies[] = {"native", "normalized", "pack"};
enum { NSTRAT = 3, GUARD = 64 };

typedef struct {
    const char *name;
    MPI_Datatype t;
    int of_ints; /* every basic element is an int */
} typ;

/* A buffer for count elements of t with GUARD bytes on both sides: the
 * address to hand MPI is at = base + GUARD - true_lb. */
typedef struct {
    unsigned char *base, *at;
    size_t len;
} buffer;

static buffer buffer_new(MPI_Datatype t, int count, unsigned char fill)
{
    MPI_Aint lb, ext, tlb, text;
    MPI_Type_get_extent(t, &lb, &ext);
    MPI_Type_get_true_extent(t, &tlb, &text);
    MPI_Aint span = count > 0 ? text + (count - 1) * ext : 0;
    buffer b;
    b.len = (size_t)span + 2 * GUARD;
    b.base = malloc(b.len);
    b.at = b.base + GUARD - tlb;
    memset(b.base, fill, b.len);
    return b;
}

static void pattern(buffer *b, int seed)
{
    for (size_t i = 0; i < b->len; i++) b->base[i] = (unsigned char)(i * 7 + (size_t)seed * 13 + 1);
}

static void force(int strategy) { EXPECT(mg_tune_force("datatypes", strategies[strategy]) == MG_TUNE_SUCCESS); }

/* What the receiver of one exchange saw. */
typedef struct {
    int rc_class, source, tag, count, elements;
    unsigned char *bytes;
    size_t len;
} seen;

static void seen_free(seen *s) { free(s->bytes); }

static int seen_equal(const seen *a, const seen *b)
{
    return a->rc_class == b->rc_class && a->source == b->source && a->tag == b->tag && a->count == b->count &&
           a->elements == b->elements && a->len == b->len && !memcmp(a->bytes, b->bytes, a->len);
}

/* How the sender sends: sendcount elements of stype (or of MPI_INT ints). */
typedef struct {
    const char *what;
    int sendcount, recvcount, any, ints; /* any: ANY_SOURCE/ANY_TAG; ints: send MPI_INT */
} exchange;

/* Rank 0 sends, rank 1 receives with the strategies given; returns what rank 1 saw. */
static seen run(MPI_Datatype t, const exchange *e, int send_strategy, int recv_strategy, MPI_Comm comm)
{
    seen s = {0};
    int tag = 17;
    if (rank == 0) {
        force(send_strategy);
        MPI_Datatype st = e->ints ? MPI_INT : t;
        buffer b = buffer_new(st, e->sendcount, 0);
        pattern(&b, 3);
        EXPECT(MPI_Send(b.at, e->sendcount, st, 1, tag, comm) == MPI_SUCCESS);
        free(b.base);
    } else if (rank == 1) {
        force(recv_strategy);
        buffer b = buffer_new(t, e->recvcount, 0xA5);
        MPI_Status status;
        memset(&status, 0x5A, sizeof status);
        int rc =
            MPI_Recv(b.at, e->recvcount, t, e->any ? MPI_ANY_SOURCE : 0, e->any ? MPI_ANY_TAG : tag, comm, &status);
        MPI_Error_class(rc, &s.rc_class);
        s.source = status.MPI_SOURCE;
        s.tag = status.MPI_TAG;
        MPI_Get_count(&status, t, &s.count);
        MPI_Get_elements(&status, t, &s.elements);
        s.bytes = b.base;
        s.len = b.len;
    }
    force(0);
    MPI_Barrier(comm);
    return s;
}

/* Every strategy pair on one exchange, against native/native. */
static void exchanges(const typ *ty, const exchange *e, MPI_Comm comm)
{
    seen ref = run(ty->t, e, 0, 0, comm);
    for (int a = 0; a < NSTRAT; a++)
        for (int b = 0; b < NSTRAT; b++) {
            if (!a && !b) continue;
            seen s = run(ty->t, e, a, b, comm);
            if (rank == 1 && !seen_equal(&ref, &s)) {
                fprintf(stderr,
                        "rank 1: %s, %s: send %s / receive %s differs from native/native (rc class %d/%d, "
                        "count %d/%d, elements %d/%d)\n",
                        ty->name, e->what, strategies[a], strategies[b], s.rc_class, ref.rc_class, s.count, ref.count,
                        s.elements, ref.elements);
                failures++;
            }
            seen_free(&s);
        }
    seen_free(&ref);
}

/* MPI_Sendrecv around the ring, every rank with the same strategy. */
static void ring(const typ *ty, int count)
{
    unsigned char *ref = NULL;
    size_t len = 0;
    for (int s = 0; s < NSTRAT; s++) {
        force(s);
        buffer out = buffer_new(ty->t, count, 0), in = buffer_new(ty->t, count, 0xA5);
        pattern(&out, rank);
        MPI_Status st;
        int rc = MPI_Sendrecv(out.at, count, ty->t, (rank + 1) % size, 5, in.at, count, ty->t, (rank + size - 1) % size,
                              5, MPI_COMM_WORLD, &st);
        int got = -1;
        MPI_Get_count(&st, ty->t, &got);
        EXPECT(rc == MPI_SUCCESS && st.MPI_SOURCE == (rank + size - 1) % size && st.MPI_TAG == 5 && got == count);
        if (!s) {
            ref = in.base;
            len = in.len;
        } else {
            if (len != in.len || memcmp(ref, in.base, len)) {
                fprintf(stderr, "rank %d: %s: MPI_Sendrecv of %d with %s differs from native\n", rank, ty->name, count,
                        strategies[s]);
                failures++;
            }
            free(in.base);
        }
        free(out.base);
    }
    free(ref);
    force(0);
}

static MPI_Datatype committed(MPI_Datatype t)
{
    MPI_Type_commit(&t);
    return t;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    EXPECT(mg_tune_set_mode(MG_TUNE_FORCED) == MG_TUNE_SUCCESS);
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);

    MPI_Datatype vec, idx, gap, neg, sub, contig, two;
    MPI_Type_vector(3, 2, 5, MPI_INT, &vec);
    int blens[3] = {1, 3, 2}, displs[3] = {0, 2, 8};
    MPI_Type_indexed(3, blens, displs, MPI_DOUBLE, &idx);
    int one[2] = {1, 1};
    MPI_Aint at[2] = {0, 8};
    MPI_Datatype mix[2] = {MPI_INT, MPI_DOUBLE};
    MPI_Datatype st;
    MPI_Type_create_struct(2, one, at, mix, &st);
    MPI_Type_create_resized(st, 0, 24, &gap);
    MPI_Type_vector(2, 1, 3, MPI_INT, &two);
    MPI_Type_create_resized(two, -4, 40, &neg);
    int sizes[2] = {6, 5}, subs[2] = {3, 2}, starts[2] = {1, 2};
    MPI_Type_create_subarray(2, sizes, subs, starts, MPI_ORDER_C, MPI_INT, &sub);
    MPI_Type_contiguous(4, MPI_INT, &contig);
    typ types[] = {{"vector", committed(vec), 1},           {"indexed", committed(idx), 0},
                   {"struct with gaps", committed(gap), 0}, {"resized, lb < 0", committed(neg), 1},
                   {"subarray", committed(sub), 1},         {"contiguous", committed(contig), 1},
                   {"MPI_DOUBLE_INT", MPI_DOUBLE_INT, 0}};
    int ntypes = (int)(sizeof types / sizeof types[0]);

    static const int counts[] = {0, 1, 7, 300};
    for (int i = 0; i < ntypes; i++) {
        for (int c = 0; c < 4; c++) {
            exchange e = {"same count", counts[c], counts[c], 0, 0};
            exchanges(&types[i], &e, comm);
        }
        exchange shorter = {"short message", 3, 7, 0, 0}, any = {"ANY_SOURCE/ANY_TAG", 7, 7, 1, 0},
                 truncated = {"truncation", 8, 7, 0, 0};
        exchanges(&types[i], &shorter, comm);
        exchanges(&types[i], &any, comm);
        exchanges(&types[i], &truncated, comm);
        if (types[i].of_ints) {
            /* 7 ints: the last element partly filled (MPI_Get_count undefined) */
            exchange partial = {"partial element", 7, 7, 0, 1};
            exchanges(&types[i], &partial, comm);
        }
        ring(&types[i], 7);
        ring(&types[i], 0);
    }

    for (int i = 0; i < ntypes - 1; i++) MPI_Type_free(&types[i].t);
    MPI_Type_free(&st);
    MPI_Type_free(&two);
    MPI_Comm_free(&comm);
    int all;
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) printf(all ? "test_tune_datatypes: %d failure(s)\n" : "test_tune_datatypes: ok\n", all);
    MPI_Finalize();
    return all != 0;
}
