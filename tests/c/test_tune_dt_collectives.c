/* libmpiguide-tune's datatype strategies in the collectives give exactly what
 * the native calls give: MPI_Bcast, MPI_Gather(v), MPI_Scatter(v),
 * MPI_Allgather(v), MPI_Alltoall(v) (with and without MPI_IN_PLACE),
 * MPI_Neighbor_alltoallw on periodic and open rings and MPI_Sendrecv_replace,
 * forced to normalized and to pack, leave every rank's buffers (guard bytes
 * and gaps included) and return codes as the native calls do. Every rank
 * uses either the same type or a type of its own with the same signature
 * (ints only: a vector, an indexed type, a resized type with lb < 0, a
 * subarray, a contiguous type, MPI_INT), with 0, 12 and 36 ints per block,
 * blocks of different sizes (empty ones included) in the v forms, and the
 * root first and last. The native result of each case is measured first,
 * with the library forced to native; tuned mode with datatype profiles
 * (strategies by size and by shape) must give it too. The report counts these
 * calls. Run with 1 to 4 processes. */
#define _POSIX_C_SOURCE 200809L
#include "mpiguide/tune.h"
#include "test_expect.h"
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* the last: tuned mode with the profiles of write_profiles() */
static const char *const strategies[] = {"native", "normalized", "pack", "tuned"};
enum { NSTRAT = 4, TUNED = 3, GUARD = 64, NTYPES = 6 };

typedef struct {
    const char *name;
    MPI_Datatype t;
    int ints; /* per element */
} ityp;
static ityp types[NTYPES];

/* n elements of t with GUARD bytes on both sides: MPI gets at = base + GUARD - true_lb. */
typedef struct {
    unsigned char *base, *at;
    size_t len;
} buffer;

static buffer buffer_new(MPI_Datatype t, int n, int seed)
{
    MPI_Aint lb, ext, tlb, text;
    MPI_Type_get_extent(t, &lb, &ext);
    MPI_Type_get_true_extent(t, &tlb, &text);
    MPI_Aint span = n > 0 ? text + (n - 1) * ext : 0;
    buffer b = {NULL, NULL, (size_t)span + 2 * GUARD};
    b.base = malloc(b.len);
    b.at = b.base + GUARD - tlb;
    for (size_t i = 0; i < b.len; i++) b.base[i] = seed < 0 ? 0xA5 : (unsigned char)(i * 7 + (size_t)seed * 29 + 1);
    return b;
}

enum {
    BCAST,
    GATHER,
    GATHERV,
    SCATTER,
    SCATTERV,
    ALLGATHER,
    ALLGATHERV,
    ALLTOALL,
    ALLTOALLV,
    NEIGHBOR,
    REPLACE,
    NCOLL
};
static const char *const names[] = {
    "MPI_Bcast",           "MPI_Gather",     "MPI_Gatherv",  "MPI_Scatter",   "MPI_Scatterv",
    "MPI_Allgather",       "MPI_Allgatherv", "MPI_Alltoall", "MPI_Alltoallv", "MPI_Neighbor_alltoallw",
    "MPI_Sendrecv_replace"};

typedef struct {
    int coll, ti, mixed, k, root, in_place, periodic;
} kase;

/* This rank's type in a case: the case's, or one of its own. */
static const ityp *mine(const kase *c, int r) { return &types[c->mixed ? (c->ti + r) % NTYPES : c->ti]; }

/* Ints from rank i to rank j in the v forms: 12k x 0, 1 or 2. */
static int vints(const kase *c, int i, int j) { return 12 * c->k * ((i + 2 * j) % 3); }

/* Counts (elements of t) of blocks of ints[j] ints, laid out backwards with a
 * one-element gap between blocks; returns the elements spanned. */
static int vlayout(const int *ints, const ityp *t, int *counts, int *displs)
{
    int at = 0;
    for (int j = size - 1; j >= 0; j--) {
        counts[j] = ints[j] / t->ints;
        displs[j] = at;
        at += counts[j] + 1;
    }
    return at;
}

/* Runs the case with the strategy forced on every rank; returns this rank's
 * buffers after the call, one after the other, and the return code in *rc. */
static unsigned char *run(const kase *c, int strategy, size_t *len, int *rc)
{
    if (strategy == TUNED) {
        EXPECT(mg_tune_set_mode(MG_TUNE_TUNED) == MG_TUNE_SUCCESS);
    } else {
        EXPECT(mg_tune_set_mode(MG_TUNE_FORCED) == MG_TUNE_SUCCESS);
        EXPECT(mg_tune_force("datatypes", strategies[strategy]) == MG_TUNE_SUCCESS);
    }
    const ityp *t = mine(c, rank);
    int n = 12 * c->k / t->ints, p = size, root = c->root, at_root = rank == root;
    int sint[4] = {0}, rint[4] = {0}, scounts[4], sdispls[4], rcounts[4], rdispls[4];
    buffer s = {0}, r = {0};
    switch (c->coll) {
    case BCAST:
        r = buffer_new(t->t, n, at_root ? 1 : -1);
        *rc = MPI_Bcast(r.at, n, t->t, root, MPI_COMM_WORLD);
        break;
    case GATHER:
        s = buffer_new(t->t, n, rank + 1);
        r = buffer_new(t->t, at_root ? p * n : 0, c->in_place ? 5 : -1);
        *rc = MPI_Gather(c->in_place && at_root ? MPI_IN_PLACE : s.at, n, t->t, r.at, n, t->t, root, MPI_COMM_WORLD);
        break;
    case SCATTER:
        s = buffer_new(t->t, at_root ? p * n : 0, 3);
        r = buffer_new(t->t, n, -1);
        *rc = MPI_Scatter(s.at, n, t->t, c->in_place && at_root ? MPI_IN_PLACE : r.at, n, t->t, root, MPI_COMM_WORLD);
        break;
    case ALLGATHER:
    case ALLTOALL: {
        int all = c->coll == ALLTOALL;
        s = buffer_new(t->t, all ? p * n : n, rank + 1);
        r = buffer_new(t->t, p * n, c->in_place ? rank + 7 : -1);
        const void *sb = c->in_place ? MPI_IN_PLACE : s.at;
        *rc = all ? MPI_Alltoall(sb, n, t->t, r.at, n, t->t, MPI_COMM_WORLD)
                  : MPI_Allgather(sb, n, t->t, r.at, n, t->t, MPI_COMM_WORLD);
        break;
    }
    case GATHERV:
    case ALLGATHERV: {
        for (int j = 0; j < p; j++) rint[j] = vints(c, j, 0);
        int span = vlayout(rint, t, rcounts, rdispls), sn = rint[rank] / t->ints;
        s = buffer_new(t->t, sn, rank + 1);
        /* in place: the own block is where the layout puts it */
        if (c->coll == GATHERV) {
            r = buffer_new(t->t, at_root ? span : 0, c->in_place ? 5 : -1);
            *rc = MPI_Gatherv(c->in_place && at_root ? MPI_IN_PLACE : s.at, sn, t->t, r.at, rcounts, rdispls, t->t,
                              root, MPI_COMM_WORLD);
        } else {
            r = buffer_new(t->t, span, c->in_place ? rank + 5 : -1);
            *rc = MPI_Allgatherv(c->in_place ? MPI_IN_PLACE : s.at, sn, t->t, r.at, rcounts, rdispls, t->t,
                                 MPI_COMM_WORLD);
        }
        break;
    }
    case SCATTERV: {
        for (int j = 0; j < p; j++) sint[j] = vints(c, j, 0);
        int span = vlayout(sint, t, scounts, sdispls), rn = sint[rank] / t->ints;
        s = buffer_new(t->t, at_root ? span : 0, 3);
        r = buffer_new(t->t, rn, -1);
        *rc = MPI_Scatterv(s.at, scounts, sdispls, t->t, c->in_place && at_root ? MPI_IN_PLACE : r.at, rn, t->t, root,
                           MPI_COMM_WORLD);
        break;
    }
    case ALLTOALLV: {
        for (int j = 0; j < p; j++) sint[j] = vints(c, rank, j), rint[j] = vints(c, j, rank);
        int sspan = vlayout(sint, t, scounts, sdispls), rspan = vlayout(rint, t, rcounts, rdispls);
        if (c->in_place) {
            /* MPI_IN_PLACE needs equal send and receive layouts: symmetric counts */
            for (int j = 0; j < p; j++) rint[j] = 12 * c->k * ((rank + j) % 3);
            rspan = vlayout(rint, t, rcounts, rdispls);
        }
        s = buffer_new(t->t, sspan, rank + 1);
        r = buffer_new(t->t, rspan, c->in_place ? rank + 9 : -1);
        *rc = MPI_Alltoallv(c->in_place ? MPI_IN_PLACE : s.at, scounts, sdispls, t->t, r.at, rcounts, rdispls, t->t,
                            MPI_COMM_WORLD);
        break;
    }
    case NEIGHBOR: {
        MPI_Comm ring;
        int periods = c->periodic;
        MPI_Cart_create(MPI_COMM_WORLD, 1, &p, &periods, 0, &ring);
        MPI_Aint lb, ext;
        MPI_Type_get_extent(t->t, &lb, &ext);
        int counts[2] = {n, n};
        /* the two blocks backwards, one element apart */
        MPI_Aint displs[2] = {(MPI_Aint)(n + 1) * ext, 0};
        MPI_Datatype tt[2] = {t->t, t->t};
        s = buffer_new(t->t, 2 * n + 1, rank + 1);
        r = buffer_new(t->t, 2 * n + 1, -1);
        *rc = MPI_Neighbor_alltoallw(s.at, counts, displs, tt, r.at, counts, displs, tt, ring);
        MPI_Comm_free(&ring);
        break;
    }
    case REPLACE: {
        r = buffer_new(t->t, n, rank + 1);
        MPI_Status st;
        *rc = MPI_Sendrecv_replace(r.at, n, t->t, (rank + 1) % p, 4, (rank + p - 1) % p, 4, MPI_COMM_WORLD, &st);
        int got = -1;
        MPI_Get_count(&st, t->t, &got);
        EXPECT(st.MPI_SOURCE == (rank + p - 1) % p && st.MPI_TAG == 4 && got == n);
        break;
    }
    }
    *len = s.len + r.len;
    unsigned char *out = malloc(*len + 1);
    if (s.len) memcpy(out, s.base, s.len);
    if (r.len) memcpy(out + s.len, r.base, r.len);
    free(s.base);
    free(r.base);
    return out;
}

static void check(const kase *c)
{
    size_t ref_len, len;
    int ref_rc, rc;
    unsigned char *ref = run(c, 0, &ref_len, &ref_rc);
    for (int s = 1; s < NSTRAT; s++) {
        unsigned char *got = run(c, s, &len, &rc);
        if (rc != ref_rc || len != ref_len || memcmp(got, ref, len)) {
            fprintf(
                stderr,
                "rank %d: %s%s, %s types from %s, %d ints a block, root %d%s: %s differs from native (rc %d vs %d)\n",
                rank, names[c->coll], c->in_place ? " (MPI_IN_PLACE)" : "", c->mixed ? "per-rank" : "the same",
                types[c->ti].name, 12 * c->k, c->root, c->coll == NEIGHBOR && c->periodic ? ", periodic" : "",
                strategies[s], rc, ref_rc);
            failures++;
        }
        free(got);
    }
    free(ref);
}

/* Datatype profiles for tuned mode, in a directory of this rank's: every
 * strategy somewhere, by size and by shape. */
static void write_profiles(char *dir)
{
    static const char *const profiles[][2] = {{"send", "* 0 1000000000 pack\n"},
                                              {"recv", "* 0 1000000000 normalized\n"},
                                              {"bcast", "* 0 100 pack\nvector 0 1000000 normalized\n"},
                                              {"gather", "* 1 100 pack\n* 101 1000000 normalized\n"},
                                              {"scatter", "* 1 1000000 pack\n"},
                                              {"allgather", "* 1 1000000 pack\n"},
                                              {"alltoall", "vector 0 1000000 normalized\n* 1 1000000 pack\n"},
                                              {"gatherv", "* 0 1000000 normalized\n"},
                                              {"scatterv", "subarray 0 1000000 normalized\n"},
                                              {"allgatherv", "* 0 1000000 normalized\n"},
                                              {"alltoallv", "* 0 1000000 normalized\n"},
                                              {"neighbor_alltoallw", "* 0 1000000 normalized\n"}};
    snprintf(dir, 64, "/tmp/mg_dt_profiles_XXXXXX");
    EXPECT(mkdtemp(dir) != NULL);
    for (size_t i = 0; i < sizeof profiles / sizeof profiles[0]; i++) {
        char path[128];
        snprintf(path, sizeof path, "%s/%s.prof", dir, profiles[i][0]);
        FILE *f = fopen(path, "w");
        EXPECT(f != NULL);
        if (!f) continue;
        fprintf(f, "# mpiguide tune profile 1\ndatatypes %s\nprocs any\n%s", profiles[i][0], profiles[i][1]);
        fclose(f);
    }
    EXPECT(mg_tune_load_profiles(dir) == MG_TUNE_SUCCESS);
}

static void remove_profiles(const char *dir)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    EXPECT(system(cmd) == 0);
}

/* The report counts the calls with derived types that the strategies look
 * at per operation, bytes and strategy (#@tune_dt), and no others: the calls here have a size (72 bytes,
 * 18 ints, and 168) that the cases above never use. Calls are counted: the control
 * API was used. */
static void report(void)
{
    MPI_Datatype vec = types[0].t; /* 24 bytes */
    buffer b = buffer_new(vec, 3, 1);
    int ints[18] = {0};
    EXPECT(mg_tune_set_mode(MG_TUNE_FORCED) == MG_TUNE_SUCCESS);
    EXPECT(mg_tune_force("datatypes", "pack") == MG_TUNE_SUCCESS);
    for (int i = 0; i < 3; i++) MPI_Bcast(b.at, 3, vec, 0, MPI_COMM_WORLD);
    MPI_Bcast(ints, 18, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Sendrecv_replace(b.at, 3, vec, (rank + 1) % size, 6, (rank + size - 1) % size, 6, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
    /* forced native: the strategies look at nothing, nothing is counted */
    EXPECT(mg_tune_force("datatypes", "native") == MG_TUNE_SUCCESS);
    MPI_Bcast(b.at, 3, vec, 0, MPI_COMM_WORLD);
    free(b.base);
    /* tuned: the profile's rule for vectors above 100 bytes; no rule for vectors in MPI_Scatterv */
    b = buffer_new(vec, 7, 1);
    buffer all = buffer_new(vec, 3 * size, 2), one = buffer_new(vec, 3, -1);
    int counts[4] = {3, 3, 3, 3}, displs[4] = {0, 3, 6, 9};
    EXPECT(mg_tune_set_mode(MG_TUNE_TUNED) == MG_TUNE_SUCCESS);
    MPI_Bcast(b.at, 7, vec, 0, MPI_COMM_WORLD);
    MPI_Scatterv(all.at, counts, displs, vec, one.at, 3, vec, 0, MPI_COMM_WORLD);
    /* online mode takes the datatype profiles as tuned mode does */
    EXPECT(mg_tune_set_mode(MG_TUNE_ONLINE) == MG_TUNE_SUCCESS);
    MPI_Bcast(b.at, 7, vec, 0, MPI_COMM_WORLD);
    MPI_Scatterv(all.at, counts, displs, vec, one.at, 3, vec, 0, MPI_COMM_WORLD);
    EXPECT(mg_tune_set_mode(MG_TUNE_FORCED) == MG_TUNE_SUCCESS);
    free(b.base);
    free(all.base);
    free(one.base);
    FILE *f = tmpfile();
    EXPECT(f && mg_tune_write_report(f) == MG_TUNE_SUCCESS);
    if (!f) return;
    rewind(f);
    char line[256], text[4096] = "";
    while (fgets(line, sizeof line, f))
        if (strncmp(line, "#@tune_dt[", 10) == 0 && (strstr(line, " 72 ") || strstr(line, " 168 ")) &&
            strlen(text) + strlen(line) < sizeof text)
            strcat(text, line);
    fclose(f);
    const char *want = "#@tune_dt[MPI_Sendrecv_replace:send 72 pack]=1\n"
                       "#@tune_dt[MPI_Sendrecv_replace:recv 72 pack]=1\n"
                       "#@tune_dt[MPI_Bcast 72 pack]=3\n"
                       "#@tune_dt[MPI_Bcast 168 normalized]=2\n"
                       "#@tune_dt[MPI_Scatterv 72 native]=2\n";
    if (strcmp(text, want)) {
        fprintf(stderr, "rank %d: the report's #@tune_dt lines are\n%swhere\n%swas expected\n", rank, text, want);
        failures++;
    }
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
    if (size > 4) {
        if (rank == 0) fprintf(stderr, "test_tune_dt_collectives: run with 1 to 4 processes\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    EXPECT(mg_tune_set_mode(MG_TUNE_FORCED) == MG_TUNE_SUCCESS);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    MPI_Datatype vec, idx, two, neg, sub, contig;
    MPI_Type_vector(3, 2, 5, MPI_INT, &vec);
    int blens[3] = {1, 3, 2}, displs[3] = {0, 2, 8};
    MPI_Type_indexed(3, blens, displs, MPI_INT, &idx);
    MPI_Type_vector(2, 1, 3, MPI_INT, &two);
    MPI_Type_create_resized(two, -4, 40, &neg);
    int sizes[2] = {6, 5}, subs[2] = {3, 2}, starts[2] = {1, 2};
    MPI_Type_create_subarray(2, sizes, subs, starts, MPI_ORDER_C, MPI_INT, &sub);
    MPI_Type_contiguous(4, MPI_INT, &contig);
    types[0] = (ityp){"vector", committed(vec), 6};
    types[1] = (ityp){"indexed", committed(idx), 6};
    types[2] = (ityp){"resized, lb < 0", committed(neg), 2};
    types[3] = (ityp){"subarray", committed(sub), 6};
    types[4] = (ityp){"contiguous", committed(contig), 4};
    types[5] = (ityp){"MPI_INT", MPI_INT, 1};

    char profiles[64];
    write_profiles(profiles);
    static const int ks[] = {0, 1, 3};
    for (int coll = 0; coll < NCOLL; coll++)
        for (int ti = 0; ti < NTYPES; ti++)
            for (int mixed = 0; mixed < 2; mixed++)
                for (int k = 0; k < 3; k++)
                    for (int root = 0; root < 2; root++)
                        for (int in_place = 0; in_place < 2; in_place++) {
                            int rooted = coll == BCAST || coll == GATHER || coll == GATHERV || coll == SCATTER ||
                                         coll == SCATTERV;
                            int has_in_place = coll != BCAST && coll != NEIGHBOR && coll != REPLACE;
                            /* the periodic flag of MPI_Neighbor_alltoallw rides on `root` */
                            if ((root && !rooted && coll != NEIGHBOR) || (in_place && !has_in_place)) continue;
                            kase c = {coll, ti, mixed, ks[k], root ? size - 1 : 0, in_place, root};
                            check(&c);
                        }

    report();
    remove_profiles(profiles);
    EXPECT(mg_tune_force("datatypes", "native") == MG_TUNE_SUCCESS);
    for (int i = 0; i < NTYPES - 1; i++) MPI_Type_free(&types[i].t);
    MPI_Type_free(&two);
    int all;
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) printf(all ? "test_tune_dt_collectives: %d failure(s)\n" : "test_tune_dt_collectives: ok\n", all);
    MPI_Finalize();
    return all != 0;
}
