/* Online mode's irregular collectives (src/tune/datatypes/vonline.c): MPI_Allgatherv,
 * MPI_Alltoallv, MPI_Gatherv and MPI_Scatterv with unequal counts (some
 * zero), displacements in reverse order with gaps, a derived receive type and
 * MPI_IN_PLACE, on MPI_COMM_WORLD and on a communicator of every other rank,
 * each called 60 times while online mode explores its algorithms: every call
 * leaves exactly the buffers the native call leaves (measured first with the
 * library off), gaps and guard cells included. The report then shows that every
 * candidate of every key ran (each runs in both rounds before the first look),
 * and that keys of fewer calls than the warm-up ran only natively. Run with 2
 * to 4 processes. */
#define _POSIX_C_SOURCE 200809L
#include "mpiguide/tune.h"
#include "test_expect.h"
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { SPAN = 256, CALLS = 60, FEW = 2 }; /* FEW: a key of three cases stays below the warm-up's 8 calls */

typedef enum {
    ALLGATHERV,
    ALLGATHERV_IN_PLACE,
    ALLGATHERV_VECTOR,
    ALLTOALLV,
    GATHERV,
    GATHERV_IN_PLACE,
    SCATTERV,
    SCATTERV_IN_PLACE,
    ALLGATHERV_C, /* the `_c` forms: the same keys as their int forms' (where the MPI library has them) */
    ALLTOALLV_C,
    NCASES
} which;

static MPI_Datatype vec; /* 2 ints at a stride of 2: extent 3 ints */

/* Reverse-order displacements with a gap of 2 after each block. */
static void reverse_displs(const int *counts, int p, int *displs)
{
    int at = 1;
    for (int i = p - 1; i >= 0; i--) {
        displs[i] = at;
        at += counts[i] + 2;
    }
}

/* One call of case w on comm into out[0..SPAN) (the receive buffer, or the send buffer where the call writes
 * none here), from a buffer filled with -1. */
static void call(which w, MPI_Comm comm, int *out)
{
    int me, p;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &p);
    int send[SPAN], counts[16], displs[16], rcounts[16], rdispls[16];
    for (int i = 0; i < SPAN; i++) send[i] = me * 1000 + i, out[i] = -1;
    for (int i = 0; i < p; i++) counts[i] = (i * 3 + 1) % 5; /* 1, 4, 2, 0, ... */
    switch (w) {
    case ALLGATHERV:
    case ALLGATHERV_IN_PLACE:
        reverse_displs(counts, p, displs);
        if (w == ALLGATHERV_IN_PLACE) {
            memcpy(out + displs[me], send, sizeof(int) * (size_t)counts[me]);
            MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, out, counts, displs, MPI_INT, comm);
        } else {
            MPI_Allgatherv(send, counts[me], MPI_INT, out, counts, displs, MPI_INT, comm);
        }
        break;
    case ALLGATHERV_VECTOR: /* each element: 2 ints sent, a vec received (displacements in extents of 3 ints) */
        reverse_displs(counts, p, displs);
        MPI_Allgatherv(send, 2 * counts[me], MPI_INT, out, counts, displs, vec, comm);
        break;
    case ALLTOALLV:
        for (int j = 0; j < p; j++) {
            counts[j] = (me + 2 * j) % 4;  /* what this rank sends j */
            rcounts[j] = (j + 2 * me) % 4; /* what j sends this rank */
            displs[j] = 5 * j;
        }
        reverse_displs(rcounts, p, rdispls);
        MPI_Alltoallv(send, counts, displs, MPI_INT, out, rcounts, rdispls, MPI_INT, comm);
        break;
    case GATHERV:
    case GATHERV_IN_PLACE: {
        int root = p - 1;
        reverse_displs(counts, p, displs);
        if (w == GATHERV_IN_PLACE && me == root) {
            memcpy(out + displs[me], send, sizeof(int) * (size_t)counts[me]);
            MPI_Gatherv(MPI_IN_PLACE, 0, MPI_INT, out, counts, displs, MPI_INT, root, comm);
        } else {
            MPI_Gatherv(send, counts[me], MPI_INT, out, counts, displs, MPI_INT, root, comm);
        }
        break;
    }
    case SCATTERV:
    case SCATTERV_IN_PLACE:
        reverse_displs(counts, p, displs);
        if (w == SCATTERV_IN_PLACE && me == 0) /* the root's block stays in the send buffer */
            MPI_Scatterv(out, counts, displs, MPI_INT, MPI_IN_PLACE, counts[me], MPI_INT, 0, comm);
        else
            MPI_Scatterv(me == 0 ? send : NULL, counts, displs, MPI_INT, out, counts[me], MPI_INT, 0, comm);
        break;
    case ALLGATHERV_C:
    case ALLTOALLV_C: {
#ifdef MG_HAVE_MPI_LARGE_COUNT
        MPI_Count c[16], rc[16];
        MPI_Aint d[16], rd[16];
        if (w == ALLGATHERV_C) {
            reverse_displs(counts, p, displs);
            for (int i = 0; i < p; i++) c[i] = counts[i], d[i] = displs[i];
            MPI_Allgatherv_c(send, counts[me], MPI_INT, out, c, d, MPI_INT, comm);
        } else {
            for (int j = 0; j < p; j++) {
                c[j] = (me + 2 * j) % 4, d[j] = 5 * j;
                rcounts[j] = (j + 2 * me) % 4, rc[j] = rcounts[j];
            }
            reverse_displs(rcounts, p, rdispls);
            for (int j = 0; j < p; j++) rd[j] = rdispls[j];
            MPI_Alltoallv_c(send, c, d, MPI_INT, out, rc, rd, MPI_INT, comm);
        }
#endif
        break;
    }
    default: break;
    }
}

static void cases(MPI_Comm comm, int calls)
{
    static int ref[NCASES][SPAN], got[SPAN];
    EXPECT(mg_tune_set_mode(MG_TUNE_OFF) == MG_TUNE_SUCCESS);
    for (int w = 0; w < NCASES; w++) call((which)w, comm, ref[w]);
    EXPECT(mg_tune_set_mode(MG_TUNE_ONLINE) == MG_TUNE_SUCCESS);
    for (int i = 0; i < calls; i++)
        for (int w = 0; w < NCASES; w++) {
            call((which)w, comm, got);
            EXPECT(memcmp(got, ref[w], sizeof got) == 0);
        }
}

static unsigned long field(const char *line, const char *name)
{
    const char *p = strstr(line, name);
    return p ? strtoul(p + strlen(name), NULL, 10) : 0;
}

/* The report's #@tune_online lines of the irregular collectives: a key of
 * many calls served every candidate at least twice, a key of few calls the
 * native call alone. Counts such lines in *many and *few. */
static void check_report(const char *report, int *many, int *few)
{
    static const char *const names[] = {"MPI_Allgatherv ", "MPI_Alltoallv ", "MPI_Gatherv ", "MPI_Scatterv "};
    *many = *few = 0;
    for (const char *l = strstr(report, "#@tune_online["); l; l = strstr(l + 1, "#@tune_online[")) {
        int ours = 0;
        for (int k = 0; k < 4; k++) ours |= strncmp(l + 14, names[k], strlen(names[k])) == 0;
        if (!ours) continue;
        const char *end = strchr(l, '\n'), *s = strstr(l, " served=");
        EXPECT(end && s && s < end);
        if (!end || !s || s > end) continue;
        unsigned long calls = field(l, " calls=");
        int candidates = 0, others_ran = 0, least = 1 << 30;
        for (const char *c = strchr(s, ':'); c && c < end; c = strchr(c + 1, ':')) {
            int served = (int)strtol(c + 1, NULL, 10);
            int native = strncmp(c - 7, "default", 7) == 0;
            candidates++;
            least = served < least ? served : least;
            others_ran |= !native && served > 0;
        }
        EXPECT(candidates >= 2); /* the native call and an algorithm at least */
        if (calls >= CALLS) {
            EXPECT(least >= 2 && field(l, " explore_calls=") > 0);
            ++*many;
        } else {
            EXPECT(calls <= 3 * FEW && !others_ran && field(l, " explore_calls=") == 0);
            ++*few;
        }
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Type_vector(2, 1, 2, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    cases(MPI_COMM_WORLD, CALLS);
    MPI_Comm half, few;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    int hs;
    MPI_Comm_size(half, &hs);
    if (hs > 1) cases(half, CALLS);
    MPI_Comm_dup(MPI_COMM_WORLD, &few);
    cases(few, FEW); /* fewer calls than a key's warm-up */

    char *report = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&report, &len);
    EXPECT(f && mg_tune_write_report(f) == MG_TUNE_SUCCESS);
    if (f) fclose(f);
    if (rank == 0 && report) {
        /* per communicator 5 keys: MPI_Allgatherv of ints (in place or not: one size) and of vec (another
         * size), MPI_Alltoallv, MPI_Gatherv, MPI_Scatterv (keyed by the collective alone) */
        int many, few_keys;
        check_report(report, &many, &few_keys);
        EXPECT(many == 5 * (hs > 1 ? 2 : 1));
        EXPECT(few_keys == 5);
    }
    free(report);
    MPI_Comm_free(&half);
    MPI_Comm_free(&few);
    MPI_Type_free(&vec);
    int all = 0;
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Finalize();
    if (rank == 0) printf("test_tune_vonline: %s\n", all ? "FAILED" : "ok");
    return all ? 1 : 0;
}
