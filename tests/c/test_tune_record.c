/* Record mode (MPIGUIDE_TUNE_RECORD, src/tune/record.h): a program with known
 * calls, in mode off, then forced to datatypes=pack; its results are checked,
 * and rank 0 reads the record file the library wrote at MPI_Finalize and
 * checks every row the program's calls make: the operation, the
 * communicator's size, the bytes, the implementation, the strategy, the
 * calls per rank and the derived types in the notation (as mg_dt_describe_full
 * writes them, so that they parse back). Past the first calls of a function,
 * only a sample is timed: a function's rows still count every call and have a
 * time, a row met once among thousands too.
 *
 * test_tune_record PATH off|pack */
#define _POSIX_C_SOURCE 200809L
#include "mpiguide/dt.h"
#include "test_expect.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { ALLREDUCES = 7, BCASTS = 3, SENDRECVS = 5, EXCHANGES = 4, IBCASTS = 2, STARTS = 3, NULLS = 6 };
enum { REDUCES = 5000 }; /* past the calls of a function that are all timed (MG_REC_WARM) */
enum { IALLREDUCES = 4, EXSCANS = 3 }; /* calls the library only records */
#define VECTOR "vector(count=4, block=2, stride=3, int)"

static void calls(void)
{
    int v[2] = {rank, 1}, sum[2];
    for (int i = 0; i < ALLREDUCES; i++) MPI_Allreduce(v, sum, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    EXPECT(sum[0] == size * (size - 1) / 2 && sum[1] == size);

    MPI_Datatype vec;
    MPI_Type_vector(4, 2, 3, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    int buf[12];
    for (int i = 0; i < BCASTS; i++) {
        for (int k = 0; k < 12; k++) buf[k] = rank == 0 ? 100 * i + k : -1;
        MPI_Bcast(buf, 1, vec, 0, MPI_COMM_WORLD);
        for (int k = 0; k < 12; k++) EXPECT(buf[k] == (k % 3 == 2 && rank != 0 ? -1 : 100 * i + k));
    }
    MPI_Type_free(&vec);

    double out[3] = {rank, rank, rank}, in[3];
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    for (int i = 0; i < SENDRECVS; i++)
        MPI_Sendrecv(out, 3, MPI_DOUBLE, next, 1, in, 3, MPI_DOUBLE, prev, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    EXPECT(in[2] == prev);

    for (int i = 0; i < EXCHANGES; i++) {
        MPI_Request q[2];
        int x = rank, y = -1;
        MPI_Irecv(&y, 1, MPI_INT, prev, 2, MPI_COMM_WORLD, &q[0]);
        MPI_Isend(&x, 1, MPI_INT, next, 2, MPI_COMM_WORLD, &q[1]);
        MPI_Waitall(2, q, MPI_STATUSES_IGNORE);
        EXPECT(y == prev);
    }

    /* the nonblocking and persistent collectives record themselves too (MPI_Bcast_init once) */
    MPI_Type_vector(4, 2, 3, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    MPI_Request r;
    for (int i = 0; i < IBCASTS + STARTS; i++) {
        for (int k = 0; k < 12; k++) buf[k] = rank == 0 ? 1000 * i + k : -1;
        if (i < IBCASTS) {
            MPI_Ibcast(buf, 1, vec, 0, MPI_COMM_WORLD, &r);
        } else {
            if (i == IBCASTS) MPI_Bcast_init(buf, 1, vec, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &r);
            MPI_Start(&r);
        }
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        for (int k = 0; k < 12; k++) EXPECT(buf[k] == (k % 3 == 2 && rank != 0 ? -1 : 1000 * i + k));
    }
    MPI_Request_free(&r);

    /* messages of MPI_PROC_NULL move nothing: no bytes, no type in the record */
    for (int i = 0; i < NULLS; i++) {
        MPI_Ssend(buf, 1, vec, MPI_PROC_NULL, 3, MPI_COMM_WORLD);
        MPI_Recv(buf, 1, vec, MPI_PROC_NULL, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    MPI_Type_free(&vec);

    /* many calls of one kind, then one of another kind of the same function */
    int one = rank + 1, got = 0;
    for (int i = 0; i < REDUCES; i++) MPI_Reduce(&one, &got, 1, MPI_INT, MPI_MAX, 0, MPI_COMM_SELF);
    int three[3] = {rank, rank, rank}, got3[3];
    MPI_Reduce(three, got3, 3, MPI_INT, MPI_MAX, 0, MPI_COMM_SELF);
    EXPECT(got == rank + 1 && got3[2] == rank);

    /* collectives the library has nothing to choose for are recorded too, with their results */
    for (int i = 0; i < IALLREDUCES; i++) {
        long x = rank + i, y = -1;
        MPI_Request q;
        MPI_Iallreduce(&x, &y, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD, &q);
        MPI_Wait(&q, MPI_STATUS_IGNORE);
        EXPECT(y == (long)size * (size - 1) / 2 + (long)size * i);
    }
    for (int i = 0; i < EXSCANS; i++) {
        int x = rank + 1, y = -1;
        MPI_Exscan(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        EXPECT(rank == 0 || y == rank * (rank + 1) / 2);
    }
    int *counts = malloc(sizeof(int) * (size_t)size), mine[2] = {-1, -1};
    double part[2];
    for (int j = 0; j < size; j++) counts[j] = 2;
    double *all = malloc(sizeof(double) * 2 * (size_t)size);
    for (int j = 0; j < 2 * size; j++) all[j] = j;
    MPI_Reduce_scatter(all, part, counts, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    EXPECT(part[1] == (2.0 * rank + 1) * size);
    MPI_Request q;
    MPI_Ibarrier(MPI_COMM_WORLD, &q);
    MPI_Wait(&q, MPI_STATUS_IGNORE);
    int one_each = 1;
    MPI_Allreduce_init(&one_each, mine, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &q);
    MPI_Start(&q);
    MPI_Wait(&q, MPI_STATUS_IGNORE);
    MPI_Request_free(&q);
    EXPECT(mine[0] == size);
    free(counts);
    free(all);
}

/* The record's lines. */
static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) return NULL;
    static char text[1 << 16];
    size_t n = fread(text, 1, sizeof text - 1, f);
    text[n] = '\0';
    fclose(f);
    return text;
}

/* The row of rank r for op (the first), NULL if none: its fields after "r op ". */
static const char *row(const char *text, int r, const char *op)
{
    char head[64];
    snprintf(head, sizeof head, "\n%d %s ", r, op);
    const char *p = strstr(text, head);
    return p ? p + strlen(head) : NULL;
}

/* The fields after "comm_size bytes " of rank r's row of op with those, NULL if none. */
static const char *row_of(const char *text, int r, const char *op, int comm_size, long long bytes)
{
    char head[96];
    snprintf(head, sizeof head, "\n%d %s %d %lld ", r, op, comm_size, bytes);
    const char *p = strstr(text, head);
    return p ? p + strlen(head) : NULL;
}

static int provided_level; /* of MPI_Init: the record names it */

static void check(const char *path, const char *strategy)
{
    const char *text = slurp(path);
    EXPECT(text != NULL);
    if (!text) return;
    char want[128];
    snprintf(want, sizeof want, "#@nprocs=%d\n", size);
    EXPECT(strstr(text, want) != NULL);
    EXPECT(strstr(text, "#@end=ok\n") != NULL);
    int level = provided_level; /* (MPI_Query_thread may not be called after MPI_Finalize) */
    snprintf(want, sizeof want, "#@thread_level=%s\n",
             level == MPI_THREAD_MULTIPLE     ? "multiple"
             : level == MPI_THREAD_SERIALIZED ? "serialized"
             : level == MPI_THREAD_FUNNELED   ? "funneled"
                                              : "single");
    EXPECT(strstr(text, want) != NULL);
    EXPECT(strstr(text, "\nrank op comm_size bytes impl strategy calls seconds send_type recv_type datatype "
                        "reduce_op\n") != NULL);
    for (int r = 0; r < size; r++) {
        snprintf(want, sizeof want, "#@wall_s[%d]=", r);
        EXPECT(strstr(text, want) != NULL);
        snprintf(want, sizeof want, "#@host[%d]=", r);
        EXPECT(strstr(text, want) != NULL);
        /* comm_size bytes impl strategy calls seconds send_type recv_type */
        int n, calls_;
        long long bytes;
        char impl[64], strat[32], st[32], rt[32];
        double secs;
        const char *fmt = "%d %lld %63s %31s %d %lf %31s %31s %31s %31s";
        char elem[32], redop[32];
        const char *a = row(text, r, "MPI_Allreduce");
        EXPECT(a && sscanf(a, fmt, &n, &bytes, impl, strat, &calls_, &secs, st, rt, elem, redop) == 10);
        if (a) {
            EXPECT(n == size && bytes == 8 && strcmp(impl, "default") == 0 && strcmp(strat, "-") == 0);
            EXPECT(calls_ == ALLREDUCES && secs >= 0 && strcmp(st, "-") == 0 && strcmp(rt, "-") == 0);
            EXPECT(strcmp(elem, "int") == 0 && strcmp(redop, "sum") == 0);
        }
        const char *b = row(text, r, "MPI_Bcast");
        EXPECT(b && sscanf(b, fmt, &n, &bytes, impl, strat, &calls_, &secs, st, rt, elem, redop) == 10);
        if (b) {
            EXPECT(strcmp(elem, "-") == 0 && strcmp(redop, "-") == 0);
            EXPECT(n == size && bytes == 32 && calls_ == BCASTS && strcmp(strat, strategy) == 0);
            /* the type named in the row is the vector, with the shape and mean block profiles key it by */
            snprintf(want, sizeof want, "#@type[%s]=%s\n", st, VECTOR);
            EXPECT(strstr(text, want) != NULL);
            snprintf(want, sizeof want, "#@shape[%s]=vector\n#@block[%s]=8\n", st, st);
            EXPECT(strstr(text, want) != NULL);
        }
        const char *s = row(text, r, "MPI_Sendrecv");
        EXPECT(s && sscanf(s, "%d %lld %63s %31s %d", &n, &bytes, impl, strat, &calls_) == 5);
        if (s) EXPECT(n == size && bytes == 24 && calls_ == SENDRECVS && strcmp(strat, "native") == 0);
        const char *w = row(text, r, "MPI_Waitall");
        EXPECT(w && sscanf(w, "%d %lld %63s %31s %d", &n, &bytes, impl, strat, &calls_) == 5);
        if (w) EXPECT(n == -1 && bytes == -1 && calls_ == EXCHANGES);
        EXPECT(row(text, r, "MPI_Isend") && row(text, r, "MPI_Irecv"));
        const char *names[2] = {"MPI_Ibcast", "MPI_Bcast_init"};
        for (int k = 0; k < 2; k++) {
            const char *c = row(text, r, names[k]);
            EXPECT(c && sscanf(c, fmt, &n, &bytes, impl, strat, &calls_, &secs, st, rt, elem, redop) == 10);
            if (!c) continue;
            EXPECT(n == size && bytes == 32 && calls_ == (k ? 1 : IBCASTS) && strcmp(strat, strategy) == 0);
            snprintf(want, sizeof want, "#@type[%s]=%s\n", st, VECTOR);
            EXPECT(strstr(text, want) != NULL);
        }
        const char *s2 = row(text, r, "MPI_Start");
        EXPECT(s2 && sscanf(s2, "%d %lld %63s %31s %d", &n, &bytes, impl, strat, &calls_) == 5 &&
               calls_ == STARTS + 1); /* and MPI_Allreduce_init's */
        long long reduce_bytes[2] = {4, 12};
        for (int k = 0; k < 2; k++) {
            const char *c = row_of(text, r, "MPI_Reduce", 1, reduce_bytes[k]);
            EXPECT(c && sscanf(c, "%63s %31s %d %lf", impl, strat, &calls_, &secs) == 4);
            if (c) EXPECT(calls_ == (k ? 1 : REDUCES) && secs > 0);
        }
        /* op, bytes, calls; all of them timed: the first calls of each function */
        struct {
            const char *op;
            long long bytes;
            int calls;
        } only[] = {{"MPI_Iallreduce", 8, IALLREDUCES},  {"MPI_Exscan", 4, EXSCANS},
                    {"MPI_Reduce_scatter", 16, 1},       {"MPI_Ibarrier", 0, 1},
                    {"MPI_Allreduce_init", 4, 1}};
        for (size_t k = 0; k < sizeof only / sizeof only[0]; k++) {
            const char *c = row_of(text, r, only[k].op, size, only[k].bytes);
            EXPECT(c && sscanf(c, "%63s %31s %d %lf", impl, strat, &calls_, &secs) == 4);
            if (c) EXPECT(calls_ == only[k].calls && secs > 0 && strcmp(impl, "-") == 0);
            if (!c) fprintf(stderr, "no row of %s on rank %d\n", only[k].op, r);
        }
        const char *nulls[2] = {"MPI_Ssend", "MPI_Recv"};
        for (int k = 0; k < 2; k++) {
            const char *c = row(text, r, nulls[k]);
            EXPECT(c && sscanf(c, fmt, &n, &bytes, impl, strat, &calls_, &secs, st, rt, elem, redop) == 10);
            if (c)
                EXPECT(bytes == -1 && calls_ == NULLS && strcmp(strat, "native") == 0 && strcmp(st, "-") == 0 &&
                       strcmp(rt, "-") == 0);
        }
    }
}

int main(int argc, char **argv)
{
    if (argc != 3 || (strcmp(argv[2], "off") && strcmp(argv[2], "pack"))) {
        fprintf(stderr, "usage: test_tune_record PATH off|pack\n");
        return 2;
    }
    setenv("MPIGUIDE_TUNE_RECORD", argv[1], 1);
    if (strcmp(argv[2], "pack") == 0) {
        setenv("MPIGUIDE_TUNE_MODE", "forced", 1);
        setenv("MPIGUIDE_TUNE_FORCE", "datatypes=pack", 1);
    }
    MPI_Init(&argc, &argv);
    MPI_Query_thread(&provided_level);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (rank == 0) remove(argv[1]);
    MPI_Barrier(MPI_COMM_WORLD);
    calls();
    int all = 0;
    PMPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD); /* not a call of the program's */
    MPI_Finalize();
    if (rank == 0) { /* the record, written at MPI_Finalize */
        check(argv[1], strcmp(argv[2], "pack") == 0 ? "pack" : "native");
        all += failures;
        printf("test_tune_record %s: %s\n", argv[2], all ? "FAILED" : "ok");
    }
    return all ? 1 : 0;
}
