/* The MPI library bugs the tests know of (known_bugs.h), each with the
 * versions that have it and a reproducer that checks the library against
 * MPI's definition, computed here by hand. */
#define _POSIX_C_SOURCE 200809L
#include "known_bugs.h"

#include <fcntl.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* ------------------------------------------------------------ helpers */

/* Pseudo-random bytes at base - 256 .. base + 767, the same every time: a
 * piece of the data tells where it was read. */
static unsigned char mem[1024] __attribute__((aligned(64)));
static unsigned char *const base = mem + 256;

static void fill(void)
{
    unsigned x = 2463534242u;
    for (int i = 0; i < (int)sizeof mem; i++) {
        x ^= x << 13, x ^= x >> 17, x ^= x << 5;
        mem[i] = (unsigned char)(x >> 24);
    }
}

/* Where (relative to base) the len bytes at p were read; -9999 if nowhere. */
static long origin(const unsigned char *p, int len)
{
    for (long o = -256; o + len <= 768; o++)
        if (!memcmp(base + o, p, (size_t)len)) return o;
    return -9999;
}

/* MPI_Pack of count x t at base against blocks of `len` bytes at offs[]:
 * the number of blocks packed wrongly, and where they were read from. */
static int pack_wrong(MPI_Datatype t, int count, const long *offs, int nblocks, int len, char *detail, size_t dl,
                      const char *what)
{
    unsigned char out[512];
    int pos = 0, wrong = 0;
    fill();
    MPI_Type_commit(&t);
    if (MPI_Pack(base, count, t, out, (int)sizeof out, &pos, MPI_COMM_SELF) != MPI_SUCCESS) {
        snprintf(detail, dl, "MPI_Pack of %s failed", what);
        return 1;
    }
    size_t at = (size_t)snprintf(detail, dl, "MPI_Pack of %s read its pieces from", what);
    for (int k = 0; k < nblocks; k++) {
        int bad = pos < (k + 1) * len || memcmp(out + k * len, base + offs[k], (size_t)len);
        wrong += bad;
        if (at < dl) at += (size_t)snprintf(detail + at, dl - at, " %ld", origin(out + k * len, len));
    }
    if (at < dl) at += (size_t)snprintf(detail + at, dl - at, " (MPI:");
    for (int k = 0; k < nblocks && at < dl; k++) at += (size_t)snprintf(detail + at, dl - at, " %ld", offs[k]);
    if (at < dl) snprintf(detail + at, dl - at, "): %d of %d wrong", wrong, nblocks);
    return wrong > 0;
}

/* ------------------------------------------------------------ reproducers */

/* hvector(4, 1, 1 byte, MPI_INT): int k holds bytes k..k+3. */
static int hvector_byte_stride(MPI_Comm comm, char *d, size_t len)
{
    (void)comm;
    MPI_Datatype t;
    MPI_Type_create_hvector(4, 1, 1, MPI_INT, &t);
    const long offs[4] = {0, 1, 2, 3};
    int bad = pack_wrong(t, 1, offs, 4, 4, d, len, "hvector(count=4, block=1, stride=1, int)");
    MPI_Type_free(&t);
    return bad;
}

/* Every rank sends n x contiguous(3, MPI_INT) and receives 3n MPI_INT per
 * rank, into a buffer with guard ints on both sides (Intel MPI writes there). */
static int allgather_retyped(MPI_Comm comm, char *d, size_t len)
{
    enum { GUARD = 1024 };
    static const int ns[] = {2, 3, 4, 5, 6, 100};
    int r, p, wrong = 0;
    MPI_Comm_rank(comm, &r);
    MPI_Comm_size(comm, &p);
    MPI_Datatype c3;
    MPI_Type_contiguous(3, MPI_INT, &c3);
    MPI_Type_commit(&c3);
    size_t at = (size_t)snprintf(d, len, "MPI_Allgather of n x contiguous(3, MPI_INT) into 3n MPI_INT per rank, %d "
                                         "processes, this rank's wrong ints (guard ints written):", p);
    for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++) {
        int n = ns[k], mine = 0, guards = 0, total = 3 * n * p;
        int *s = malloc(sizeof(int) * 3 * (size_t)n), *all = malloc(sizeof(int) * (size_t)(total + 2 * GUARD));
        int *g = all + GUARD;
        for (int i = 0; i < 3 * n; i++) s[i] = r * 100000 + i;
        for (int i = 0; i < total + 2 * GUARD; i++) all[i] = -1;
        MPI_Allgather(s, n, c3, g, 3 * n, MPI_INT, comm);
        for (int q = 0; q < p; q++)
            for (int i = 0; i < 3 * n; i++) mine += g[q * 3 * n + i] != q * 100000 + i;
        for (int i = 0; i < GUARD; i++) guards += (all[i] != -1) + (g[total + i] != -1);
        if (at < len) at += (size_t)snprintf(d + at, len - at, " n=%d: %d of %d (%d)", n, mine, total, guards);
        wrong += mine + guards;
        free(s);
        free(all);
    }
    MPI_Type_free(&c3);
    return wrong > 0;
}

/* darray(size 6, rank 4, gsizes [9, 7], distribs [cyclic(2), block], psizes
 * [2, 3], C order, MPI_INT): rank 4 is process (1, 1), rows 2, 3, 6, 7 and
 * columns 3..5, the ints at 7 * row + column. */
static int darray_pack(MPI_Comm comm, char *d, size_t len)
{
    (void)comm;
    int gs[2] = {9, 7}, dist[2] = {MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_BLOCK}, dargs[2] = {2, MPI_DISTRIBUTE_DFLT_DARG},
        ps[2] = {2, 3};
    MPI_Datatype t;
    MPI_Type_create_darray(6, 4, 2, gs, dist, dargs, ps, MPI_ORDER_C, MPI_INT, &t);
    long offs[12];
    static const int rows[4] = {2, 3, 6, 7};
    for (int i = 0; i < 12; i++) offs[i] = 4L * (7 * rows[i / 3] + 3 + i % 3);
    int bad = pack_wrong(t, 1, offs, 12, 4, d, len,
                         "darray(size=6, rank=4, gsizes=[9, 7], distribs=[cyclic, block], dargs=[2, default], "
                         "psizes=[2, 3], order=c, int)");
    MPI_Type_free(&t);
    return bad;
}

/* MPI_Pack of indexed(blocks=[1, 1, 2], displs=[0, 5, 10], resized(int, lb 0,
 * extent 0)): four ints, all at offset 0 (crashes where the bug is). */
static int indexed_zero_extent(MPI_Comm comm, char *d, size_t len)
{
    (void)comm;
    MPI_Datatype r, t;
    MPI_Type_create_resized(MPI_INT, 0, 0, &r);
    int bl[3] = {1, 1, 2}, dp[3] = {0, 5, 10};
    MPI_Type_indexed(3, bl, dp, r, &t);
    const long offs[4] = {0, 0, 0, 0};
    int bad = pack_wrong(t, 1, offs, 4, 4, d, len,
                         "indexed(blocks=[1, 1, 2], displs=[0, 5, 10], resized(lb=0, extent=0, int))");
    MPI_Type_free(&t);
    MPI_Type_free(&r);
    return bad;
}

/* struct(blocks=[1, 1], displs=[30, 90], types=[hindexed_block(block=0, ...
 * of a derived type), float]): the float at 90 (crashes where the bug is). */
static int zero_block_member(MPI_Comm comm, char *d, size_t len)
{
    (void)comm;
    MPI_Datatype h, hb, s;
    MPI_Type_create_hvector(2, 2, 3, MPI_CHAR, &h);
    MPI_Aint hd[3] = {0, 5, 9};
    MPI_Type_create_hindexed_block(3, 0, hd, h, &hb);
    int bl[2] = {1, 1};
    MPI_Aint sd[2] = {30, 90};
    MPI_Datatype ty[2] = {hb, MPI_FLOAT};
    MPI_Type_create_struct(2, bl, sd, ty, &s);
    const long offs[1] = {90};
    int bad = pack_wrong(s, 1, offs, 1, 4, d, len,
                         "struct(blocks=[1, 1], displs=[30, 90], types=[hindexed_block(block=0, displs=[0, 5, 9], "
                         "hvector(count=2, block=2, stride=3, char)), float])");
    MPI_Type_free(&s);
    MPI_Type_free(&hb);
    MPI_Type_free(&h);
    return bad;
}

/* hvector(3, 2, -1 byte, MPI_CHAR): blocks of 2 bytes at 0, -1, -2. */
static int hvector_minus_one(MPI_Comm comm, char *d, size_t len)
{
    (void)comm;
    MPI_Datatype t;
    MPI_Type_create_hvector(3, 2, -1, MPI_CHAR, &t);
    const long offs[3] = {0, -1, -2};
    int bad = pack_wrong(t, 1, offs, 3, 2, d, len, "hvector(count=3, block=2, stride=-1, char)");
    MPI_Type_free(&t);
    return bad;
}

/* hvector(2, 1, 24 bytes, MPI_C_DOUBLE_COMPLEX), data 8-byte aligned. */
static int complex_stride(MPI_Comm comm, char *d, size_t len)
{
    (void)comm;
    MPI_Datatype t;
    MPI_Type_create_hvector(2, 1, 24, MPI_C_DOUBLE_COMPLEX, &t);
    const long offs[2] = {0, 24};
    int bad = pack_wrong(t, 1, offs, 2, 16, d, len, "hvector(count=2, block=1, stride=24, c_double_complex)");
    MPI_Type_free(&t);
    return bad;
}

/* 2 x contig(3, resized(contig(4, byte), lb 6, extent -9)): element k at 9k,
 * its copies at 0, -9, -18 from there. */
static int contig_negative_extent(MPI_Comm comm, char *d, size_t len)
{
    (void)comm;
    MPI_Datatype c4, r, t;
    MPI_Type_contiguous(4, MPI_BYTE, &c4);
    MPI_Type_create_resized(c4, 6, -9, &r);
    MPI_Type_contiguous(3, r, &t);
    const long offs[6] = {0, -9, -18, 9, 0, -9};
    int bad = pack_wrong(t, 2, offs, 6, 4, d, len,
                         "2 x contig(count=3, resized(lb=6, extent=-9, contig(count=4, byte)))");
    MPI_Type_free(&t);
    MPI_Type_free(&r);
    MPI_Type_free(&c4);
    return bad;
}

/* MPI_Gatherv whose root receives 1 int from every rank, which sends 10 (an
 * erroneous call): MPI_Gather with the same blocks reports MPI_ERR_TRUNCATE at
 * the root and returns on all ranks; here the other ranks must return too.
 * Does not return where the bug is. */
static int gatherv_truncation(MPI_Comm comm, char *d, size_t len)
{
    int r, p, s[10] = {0}, g[64], counts[64], displs[64];
    MPI_Comm_rank(comm, &r);
    MPI_Comm_size(comm, &p);
    MPI_Comm c;
    MPI_Comm_dup(comm, &c);
    MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
    for (int i = 0; i < p && i < 64; i++) counts[i] = 1, displs[i] = i;
    int rc = MPI_Gatherv(s, 10, MPI_INT, g, counts, displs, MPI_INT, 0, c);
    snprintf(d, len, "MPI_Gatherv of 10 ints per rank into 1 int per rank returned %s on rank %d",
             rc == MPI_SUCCESS ? "MPI_SUCCESS" : "an error", r);
    MPI_Comm_free(&c);
    return 0;
}

/* MPI_Gather_init and MPI_Scatter_init of one MPI_INT per rank, started
 * twice with new send data: each start must move the data of its own time. */
static int persistent_gather_scatter(MPI_Comm comm, char *d, size_t len)
{
    int r, p, wrong = 0, s[64], g[64];
    MPI_Comm_rank(comm, &r);
    MPI_Comm_size(comm, &p);
    if (p > 64) p = 64;
    MPI_Request q[2];
    MPI_Gather_init(s, 1, MPI_INT, g, 1, MPI_INT, 0, comm, MPI_INFO_NULL, &q[0]);
    MPI_Scatter_init(s, 1, MPI_INT, g + 32, 1, MPI_INT, 0, comm, MPI_INFO_NULL, &q[1]);
    for (int round = 1; round <= 2; round++) {
        for (int i = 0; i < 64; i++) s[i] = 1000 * round + 100 * r + i, g[i] = -1;
        MPI_Start(&q[0]);
        MPI_Wait(&q[0], MPI_STATUS_IGNORE);
        for (int i = 0; i < p && r == 0; i++) wrong += g[i] != 1000 * round + 100 * i;
        MPI_Start(&q[1]);
        MPI_Wait(&q[1], MPI_STATUS_IGNORE);
        wrong += g[32] != 1000 * round + r; /* the root's int r */
    }
    MPI_Request_free(&q[0]);
    MPI_Request_free(&q[1]);
    snprintf(d, len, "MPI_Gather_init and MPI_Scatter_init of 1 MPI_INT, started twice with new data: %d of %d ints "
             "wrong on rank %d", wrong, 2 * (r == 0 ? p + 1 : 1), r);
    return wrong > 0;
}

/* One MPI_Scatter_init started twice on a communicator of its own: both starts
 * must complete (where the bug is, the second never does on 3 or more processes;
 * under MPI_ERRORS_ARE_FATAL it aborts with "Invalid communicator"). */
static int scatter_init_restart(MPI_Comm comm, char *d, size_t len)
{
    int r, s[64], g = -1;
    MPI_Comm c;
    MPI_Comm_dup(comm, &c);
    MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
    MPI_Comm_rank(c, &r);
    for (int i = 0; i < 64; i++) s[i] = i;
    MPI_Request q;
    MPI_Scatter_init(s, 1, MPI_INT, &g, 1, MPI_INT, 0, c, MPI_INFO_NULL, &q);
    int rc = MPI_SUCCESS;
    for (int round = 0; round < 2 && rc == MPI_SUCCESS; round++) {
        rc = MPI_Start(&q);
        if (rc == MPI_SUCCESS) rc = MPI_Wait(&q, MPI_STATUS_IGNORE);
    }
    MPI_Request_free(&q);
    snprintf(d, len, "MPI_Scatter_init of 1 MPI_INT started twice returned %s on rank %d (int %d, %d expected)",
             rc == MPI_SUCCESS ? "MPI_SUCCESS" : "an error", r, g, r);
    MPI_Comm_free(&c);
    return rc != MPI_SUCCESS || g != r;
}

/* MPI_Allgather_init of a vector started three times, freed: the vector must
 * still be a datatype (crashes where the bug is). */
static int allgather_init_release(MPI_Comm comm, char *d, size_t len)
{
    int s[64] = {0}, g[4096], size = -1;
    MPI_Datatype vec;
    MPI_Type_vector(3, 2, 5, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    MPI_Request q;
    MPI_Allgather_init(s, 1, vec, g, 1, vec, comm, MPI_INFO_NULL, &q);
    for (int i = 0; i < 3; i++) {
        MPI_Start(&q);
        MPI_Wait(&q, MPI_STATUS_IGNORE);
    }
    MPI_Request_free(&q);
    MPI_Type_size(vec, &size);
    snprintf(d, len, "after MPI_Allgather_init of vector(3, 2, 5, MPI_INT), three starts and MPI_Request_free, "
             "MPI_Type_size says %d (24)", size);
    MPI_Type_free(&vec);
    return size != 24;
}

/* MPI_Ialltoallw and MPI_Alltoallw_init with MPI_IN_PLACE, rank r's block j
 * 24 x ((r + j) mod 3) ints, of MPI_INT where r + j is even, else of
 * resized(vector(2, 1, 3, MPI_INT), lb -4, extent 40): every int must arrive
 * where the receive block's type puts it (computed here with MPI_Pack and
 * MPI_Unpack of each rank's known data). */
static void in_place_layout(int r, int p, MPI_Datatype neg, int *counts, int *displs, MPI_Datatype *types,
                            int *ints)
{
    int at = 0;
    for (int j = 0; j < p; j++) {
        int n = 24 * ((r + j) % 3), odd = (r + j) % 2;
        types[j] = odd ? neg : MPI_INT;
        counts[j] = odd ? n / 2 : n;
        displs[j] = at + (odd ? 4 : 0);
        at += 4 * (odd ? (counts[j] ? counts[j] * 10 : 0) : n) + 16;
    }
    *ints = at / 4;
}

static void in_place_data(int r, int *buf, int ints)
{
    for (int i = 0; i < ints; i++) buf[i] = 100000 * r + i;
}

static int alltoallw_in_place(MPI_Comm comm, char *d, size_t len)
{
    int r, p, wrong = 0;
    MPI_Comm_rank(comm, &r);
    MPI_Comm_size(comm, &p);
    if (p > 8) p = 8; /* not needed by the callers: they run it on 2 to 4 processes */
    MPI_Datatype two, neg;
    MPI_Type_vector(2, 1, 3, MPI_INT, &two);
    MPI_Type_create_resized(two, -4, 40, &neg);
    MPI_Type_commit(&neg);
    int counts[8], displs[8], ints, oc[8], od[8], oints, packed[4096];
    MPI_Datatype types[8], ot[8];
    in_place_layout(r, p, neg, counts, displs, types, &ints);
    int *buf = malloc(sizeof(int) * (size_t)ints), *want = malloc(sizeof(int) * (size_t)ints), *other = NULL;
    for (int form = 0; form < 2; form++) {
        in_place_data(r, buf, ints);
        in_place_data(r, want, ints);
        for (int j = 0; j < p; j++) { /* rank j's block r arrives in block j */
            in_place_layout(j, p, neg, oc, od, ot, &oints);
            other = realloc(other, sizeof(int) * (size_t)oints);
            in_place_data(j, other, oints);
            int pos = 0;
            MPI_Pack((char *)other + od[r], oc[r], ot[r], packed, (int)sizeof packed, &pos, MPI_COMM_SELF);
            pos = 0;
            MPI_Unpack(packed, (int)sizeof packed, &pos, (char *)want + displs[j], counts[j], types[j], MPI_COMM_SELF);
        }
        MPI_Request q;
        if (form == 0) {
            MPI_Ialltoallw(MPI_IN_PLACE, NULL, NULL, NULL, buf, counts, displs, types, comm, &q);
        } else {
            MPI_Alltoallw_init(MPI_IN_PLACE, NULL, NULL, NULL, buf, counts, displs, types, comm, MPI_INFO_NULL, &q);
            MPI_Start(&q);
        }
        MPI_Wait(&q, MPI_STATUS_IGNORE);
        if (form == 1) MPI_Request_free(&q);
        for (int i = 0; i < ints; i++) wrong += buf[i] != want[i];
    }
    snprintf(d, len, "MPI_Ialltoallw and MPI_Alltoallw_init with MPI_IN_PLACE, blocks of MPI_INT and of a resized "
             "type with lb -4, %d processes: %d ints wrong on rank %d", p, wrong, r);
    free(buf), free(want), free(other);
    MPI_Type_free(&neg);
    MPI_Type_free(&two);
    return wrong > 0;
}

/* ------------------------------------------------------------ the list */

/* Where a canonical instance takes such steps (docs/dt-engine.md, "MPI
 * library bugs"); the probe decides which of them the library refuses. */
static const char *const impi_byte_stride_refuses[] = {
    "h* block step 1-byte-per-piece of *", "h* multi-block step 1-byte-per-piece of *",
    "struct block step 1-byte-per-piece of *", "struct multi-block step 1-byte-per-piece of *",
    "indexed* multi-block step 1-byte-per-piece of *", NULL};
static const char *const ompi_minus_one_refuses[] = {"*vector block step 1-byte-per-piece backwards of *",
                                                     "*vector block step dense backwards of char", NULL};

#define LIB_INTEL "Intel(R) MPI Library 2021.18*"
#define LIB_MPICH "MPICH Version:*5.0.2*"
#define LIB_OMPI "Open MPI v5.0.11*"
const mg_known_bug mg_known_bugs[] = {
    {"impi-hvector-byte-stride", "Intel MPI", LIB_INTEL,
     "an hvector whose stride in bytes equals its block length packs as if contiguous (hindexed and struct of such "
     "steps too): MPI_Type_create_hvector(n, 1, 1, MPI_INT) packs n consecutive ints",
     1, 0, 0, hvector_byte_stride, impi_byte_stride_refuses},
    {"impi-allgather-retyped", "Intel MPI", LIB_INTEL,
     "MPI_Allgather whose send and receive types differ (n x contiguous(3, MPI_INT) against 3n MPI_INT) returns "
     "wrong data for some n, and writes outside the receive buffer",
     2, 0, 0, allgather_retyped, NULL},
    {"impi-darray-pack", "Intel MPI", LIB_INTEL,
     "MPI_Pack of a darray with a cyclic(2) dimension over a block one reads each block's second row right after its "
     "first (MPICH and Open MPI follow the standard)",
     1, 0, 0, darray_pack, NULL},
    {"impi-indexed-zero-extent", "Intel MPI", LIB_INTEL,
     "MPI_Pack dies (SIGSEGV) on an indexed type of unequal blocks of an element resized to extent 0", 1, 1, 0,
     indexed_zero_extent, NULL},
    {"mpich-zero-block-member", "MPICH", LIB_MPICH,
     "MPI_Pack dies (SIGFPE) on a struct one of whose members is a zero-blocklength hindexed_block of a derived type",
     1, 1, 0, zero_block_member, NULL},
    {"mpich-contig-negative-extent", "MPICH", LIB_MPICH,
     "contig(3, resized(derived, lb 6, extent -9)) is repeated 3 x -9 bytes apart at count > 1 instead of its extent "
     "+9",
     1, 0, 0, contig_negative_extent, NULL},
    {"ompi-hvector-minus-one", "Open MPI", LIB_OMPI,
     "an hvector (or vector) of stride -1 byte packs as if contiguous", 1, 0, 0, hvector_minus_one,
     ompi_minus_one_refuses},
    {"ompi-complex-stride", "Open MPI", LIB_OMPI,
     "complex elements at a stride that is a multiple of their component but not of their size pack from the wrong "
     "offset when the data is aligned",
     1, 0, 0, complex_stride, NULL},
    {"impi-gatherv-truncation", "Intel MPI", LIB_INTEL,
     "MPI_Gatherv whose root receives fewer bytes than a rank sends (an erroneous call) returns an error at the root "
     "but never returns on the other ranks (MPI_Gather with the same blocks returns on all of them)",
     2, 0, 1, gatherv_truncation, NULL},
    {"impi-persistent-gather-scatter", "Intel MPI", LIB_INTEL,
     "MPI_Gather_init and MPI_Scatter_init move the data the send buffers held at the _init at every start, and "
     "write the root's own block at the _init only",
     1, 0, 0, persistent_gather_scatter, NULL},
    {"impi-scatter-init-restart", "Intel MPI", LIB_INTEL,
     "on 3 or more processes the second MPI_Start of an MPI_Scatter_init never completes (or, under "
     "MPI_ERRORS_ARE_FATAL, aborts with \"Invalid communicator\")",
     3, 0, 1, scatter_init_restart, NULL},
    {"impi-allgather-init-release", "Intel MPI", LIB_INTEL,
     "MPI_Allgather_init releases its datatype at every start: after more than one start and MPI_Request_free, the "
     "application's datatype is freed",
     1, 1, 0, allgather_init_release, NULL},
    {"impi-alltoallw-in-place", "Intel MPI", LIB_INTEL,
     "MPI_Ialltoallw and MPI_Alltoallw_init with MPI_IN_PLACE write wrong blocks of a resized type with a negative "
     "lb among MPI_INT blocks (the blocking MPI_Alltoallw is right)",
     2, 0, 0, alltoallw_in_place, NULL},
};
const int mg_nknown_bugs = (int)(sizeof mg_known_bugs / sizeof mg_known_bugs[0]);

/* ------------------------------------------------------------ queries */

const mg_known_bug *mg_known_bug_named(const char *name)
{
    for (int i = 0; i < mg_nknown_bugs; i++)
        if (!strcmp(mg_known_bugs[i].name, name)) return &mg_known_bugs[i];
    return NULL;
}

/* The library field: fnmatch(3) patterns of MPI_Get_library_version's text, '|' between them. */
static int listed(const mg_known_bug *b)
{
    static char version[MPI_MAX_LIBRARY_VERSION_STRING];
    if (!version[0]) {
        int n = 0;
        MPI_Get_library_version(version, &n);
    }
    char parts[256];
    snprintf(parts, sizeof parts, "%s", b->library);
    for (char *save = NULL, *p = strtok_r(parts, "|", &save); p; p = strtok_r(NULL, "|", &save))
        if (fnmatch(p, version, 0) == 0) return 1;
    return 0;
}

int mg_known_bug_listed(const char *name)
{
    const mg_known_bug *b = mg_known_bug_named(name);
    if (!b) {
        fprintf(stderr, "known_bugs: no bug named %s in tests/c/known_bugs.c\n", name);
        abort();
    }
    return listed(b);
}

void mg_known_bug_note(const char *name, const char *context)
{
    static char noted[64];
    const mg_known_bug *b = mg_known_bug_named(name);
    int i = b ? (int)(b - mg_known_bugs) : -1;
    if (i < 0 || i >= (int)sizeof noted || noted[i]) return;
    noted[i] = 1;
    printf("known %s bug %s: %s (%s)\n", b->family, b->name, b->what, context);
    fflush(stdout);
}

int mg_known_bug_reproduce(const mg_known_bug *b, MPI_Comm comm, char *detail, size_t len)
{
    int r, p, shows = 0;
    MPI_Comm_rank(comm, &r);
    MPI_Comm_size(comm, &p);
    if (p < b->procs) return -1;
    detail[0] = '\0';
    if (!b->crashes) {
        shows = b->reproduce(comm, detail, len) != 0;
    } else if (r == 0) {
        /* MPI_Pack is local: a child process may call it on its own */
        fflush(NULL);
        pid_t child = fork();
        if (child == 0) {
            int null = open("/dev/null", O_WRONLY);
            if (null >= 0) dup2(null, 2);
            char d[512];
            _exit(b->reproduce(MPI_COMM_SELF, d, sizeof d) ? 3 : 0);
        }
        int st = 0;
        if (child < 0 || waitpid(child, &st, 0) != child) {
            snprintf(detail, len, "could not run the reproducer in a child process");
            shows = 1;
        } else if (WIFSIGNALED(st) || (WIFEXITED(st) && WEXITSTATUS(st) != 0)) {
            shows = 1;
            if (WIFSIGNALED(st))
                snprintf(detail, len, "the reproducer died of signal %d", WTERMSIG(st));
            else
                snprintf(detail, len, "the reproducer ended with status %d (a sanitizer's report of a crash is 1)",
                         WEXITSTATUS(st));
        }
    }
    /* the lowest rank that saw it says what it saw */
    int who = shows ? r : p, first;
    MPI_Allreduce(&who, &first, 1, MPI_INT, MPI_MIN, comm);
    if (first < p) MPI_Bcast(detail, (int)len, MPI_CHAR, first, comm);
    return first < p;
}

const mg_known_bug *mg_known_bug_refusing(const char *class_name)
{
    for (int i = 0; i < mg_nknown_bugs; i++) {
        const mg_known_bug *b = &mg_known_bugs[i];
        if (!b->refuses || !listed(b)) continue;
        for (const char *const *pat = b->refuses; *pat; pat++)
            if (fnmatch(*pat, class_name, 0) == 0) return b;
    }
    return NULL;
}
