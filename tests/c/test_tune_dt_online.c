/* Online mode's datatype strategies (src/tune/datatypes/online_dt.c): rank 0
 * sends rank 1 messages of derived types with MPI_Send (and MPI_Ssend, and
 * MPI_Isend two at a time, as a halo exchange does) and rank 1 receives them
 * with MPI_Recv (MPI_Irecv), while each side explores native, normalized and
 * pack on its own; every message arrives exactly as the native call delivers
 * it (data, gaps, guard bytes, MPI_Get_count), measured first with the
 * library off. The receives have room for more elements than arrive: the
 * elements beyond the message keep their bytes, as do those of a cancelled
 * receive. The report then lists per side and key what was explored: a key
 * of 120 calls explored and settled (its strategies' served calls add up to
 * its calls), not anew though its type was made again half-way (a key is the
 * layout, not the handle), a key of 6 calls ran natively only; a call is
 * counted when it starts where it is not timed, else when it completes (a
 * cancelled receive or a send whose request was freed in flight is then
 * not), and the freed send's data are right. MPI_Sendrecv and
 * MPI_Sendrecv_replace (data, guard bytes and count exact) have one key per
 * call, the send side's, whose choice the receive side takes; the receive
 * side's own where the send side's type is contiguous.
 * What is chosen is not checked: it depends on the machine's speed. Run with
 * 2 or more processes (the others wait). */
#define _POSIX_C_SOURCE 200809L
#include "mpiguide/tune.h"
#include "test_expect.h"
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* FEW: below the warm-up's 8 calls; ROOM: the elements a receive has room for beyond those that arrive */
enum { COUNT = 8, ROOM = 2, GUARD = 32, MANY = 120, FEW = 6 };

static size_t span_of(MPI_Datatype t, int count, MPI_Aint *tlb)
{
    MPI_Aint lb, ext, text;
    MPI_Type_get_extent(t, &lb, &ext);
    MPI_Type_get_true_extent(t, tlb, &text);
    return (size_t)(text + (count - 1) * ext) + 2 * GUARD;
}

enum { BLOCKING, SSEND, NONBLOCKING };

/* Two messages of COUNT x t from 0 to 1 (how: MPI_Send and MPI_Recv, MPI_Ssend,
 * or MPI_Isend and MPI_Irecv, both in flight at once), received with room for
 * COUNT + ROOM into buffers of a pattern: rank 1's whole buffers (len bytes)
 * and the counts it got. */
static void messages(MPI_Datatype t, int how, int seq, unsigned char *got[2], size_t len, int n[2])
{
    MPI_Aint tlb;
    span_of(t, COUNT + ROOM, &tlb);
    unsigned char *buf[2] = {malloc(len), malloc(len)};
    MPI_Request req[2];
    MPI_Status st[2];
    for (int m = 0; m < 2; m++) {
        int tag = 2 * seq + m;
        void *at = buf[m] + GUARD - tlb;
        if (rank == 0) {
            for (size_t i = 0; i < len; i++) buf[m][i] = (unsigned char)(i * 7 + (size_t)tag % 9 + 1);
            if (how == NONBLOCKING)
                MPI_Isend(at, COUNT, t, 1, tag, MPI_COMM_WORLD, &req[m]);
            else if (how == SSEND)
                MPI_Ssend(at, COUNT, t, 1, tag, MPI_COMM_WORLD);
            else
                MPI_Send(at, COUNT, t, 1, tag, MPI_COMM_WORLD);
        } else if (rank == 1) {
            for (size_t i = 0; i < len; i++) buf[m][i] = (unsigned char)(i * 13 + (size_t)tag % 5 + 128);
            if (how == NONBLOCKING)
                MPI_Irecv(at, COUNT + ROOM, t, 0, tag, MPI_COMM_WORLD, &req[m]);
            else
                MPI_Recv(at, COUNT + ROOM, t, 0, tag, MPI_COMM_WORLD, &st[m]);
        }
    }
    if (how == NONBLOCKING && rank <= 1) MPI_Waitall(2, req, st);
    for (int m = 0; m < 2 && rank == 1; m++) {
        MPI_Get_count(&st[m], t, &n[m]);
        memcpy(got[m], buf[m], len);
    }
    free(buf[0]);
    free(buf[1]);
}

/* 2 x calls messages of t in online mode, each checked against the native one of the same seq % 4. */
static void exchanges(MPI_Datatype t, int how, int calls)
{
    MPI_Aint tlb;
    size_t len = span_of(t, COUNT + ROOM, &tlb);
    unsigned char *ref[4][2], *got[2] = {malloc(len), malloc(len)};
    int ref_n[4][2], n[2] = {-1, -1};
    EXPECT(mg_tune_set_mode(MG_TUNE_OFF) == MG_TUNE_SUCCESS);
    for (int s = 0; s < 4; s++) {
        ref[s][0] = malloc(len), ref[s][1] = malloc(len);
        messages(t, how, s, ref[s], len, ref_n[s]);
    }
    EXPECT(mg_tune_set_mode(MG_TUNE_ONLINE) == MG_TUNE_SUCCESS);
    for (int i = 0; i < calls; i++) {
        messages(t, how, i % 4, got, len, n);
        for (int m = 0; m < 2 && rank == 1; m++) {
            EXPECT(memcmp(got[m], ref[i % 4][m], len) == 0);
            EXPECT(n[m] == ref_n[i % 4][m] && n[m] == COUNT);
        }
    }
    for (int s = 0; s < 4; s++) free(ref[s][0]), free(ref[s][1]);
    free(got[0]);
    free(got[1]);
}

enum { SENDRECV, REPLACE };

/* One exchange between ranks 0 and 1 (the others return): each sends COUNT x t and receives COUNT x u
 * with MPI_Sendrecv, or (REPLACE) COUNT x t both ways in one buffer with MPI_Sendrecv_replace; the
 * receive buffer (guards included; 0xEE where nothing is received, or the data sent) and the count. */
static void swap(MPI_Datatype t, MPI_Datatype u, int how, int seq, unsigned char *got, size_t len, int *n)
{
    if (rank > 1) return;
    MPI_Aint tlb, ulb;
    size_t slen = span_of(t, COUNT, &tlb);
    span_of(u, COUNT, &ulb);
    unsigned char *sbuf = malloc(slen);
    for (size_t i = 0; i < slen; i++) sbuf[i] = (unsigned char)(i * 5 + (size_t)rank * 3 + (size_t)seq + 1);
    int peer = 1 - rank;
    MPI_Status st;
    if (how == REPLACE) {
        memcpy(got, sbuf, slen); /* len == slen */
        MPI_Sendrecv_replace(got + GUARD - tlb, COUNT, t, peer, seq, peer, seq, MPI_COMM_WORLD, &st);
        MPI_Get_count(&st, t, n);
    } else {
        memset(got, 0xEE, len);
        MPI_Sendrecv(sbuf + GUARD - tlb, COUNT, t, peer, seq, got + GUARD - ulb, COUNT, u, peer, seq, MPI_COMM_WORLD,
                     &st);
        MPI_Get_count(&st, u, n);
    }
    free(sbuf);
}

/* calls exchanges in online mode, each checked against the native one of the same seq % 4. */
static void swaps(MPI_Datatype t, MPI_Datatype u, int how, int calls)
{
    MPI_Aint lb;
    size_t len = span_of(how == REPLACE ? t : u, COUNT, &lb);
    unsigned char *ref[4], *got = malloc(len);
    int ref_n[4], n = -1;
    EXPECT(mg_tune_set_mode(MG_TUNE_OFF) == MG_TUNE_SUCCESS);
    for (int s = 0; s < 4; s++) {
        ref[s] = malloc(len);
        swap(t, u, how, s, ref[s], len, &ref_n[s]);
    }
    EXPECT(mg_tune_set_mode(MG_TUNE_ONLINE) == MG_TUNE_SUCCESS);
    for (int i = 0; i < calls && rank <= 1; i++) {
        swap(t, u, how, i % 4, got, len, &n);
        EXPECT(memcmp(got, ref[i % 4], len) == 0);
        EXPECT(n == ref_n[i % 4] && n == COUNT);
    }
    for (int s = 0; s < 4; s++) free(ref[s]);
    free(got);
}

/* MPI_Alltoallw: every rank sends COUNT x t to each rank and receives its bytes as contiguous ints, calls
 * times in online mode, each result (guards included) equal to the native call's of the same seq % 4. */
static void alltoallws(MPI_Datatype t, int calls)
{
    MPI_Aint tlb;
    size_t slen = span_of(t, COUNT, &tlb), rlen = 0;
    int tsize;
    MPI_Type_size(t, &tsize);
    int n = COUNT * tsize / (int)sizeof(int);
    int *sc = malloc(sizeof(int) * (size_t)size), *sd = malloc(sizeof(int) * (size_t)size);
    int *rc = malloc(sizeof(int) * (size_t)size), *rd = malloc(sizeof(int) * (size_t)size);
    MPI_Datatype *st = malloc(sizeof(MPI_Datatype) * (size_t)size), *rt = malloc(sizeof(MPI_Datatype) * (size_t)size);
    for (int r = 0; r < size; r++) {
        sc[r] = COUNT, sd[r] = (int)((size_t)r * slen), st[r] = t;
        rc[r] = n, rd[r] = (int)rlen, rt[r] = MPI_INT;
        rlen += (size_t)n * sizeof(int) + 16; /* a gap between the blocks: it must stay untouched */
    }
    unsigned char *sbuf = malloc(slen * (size_t)size), *ref[4], *got = malloc(rlen);
    for (int m = 0; m < 5; m++) {
        int online = m == 4;
        EXPECT(mg_tune_set_mode(online ? MG_TUNE_ONLINE : MG_TUNE_OFF) == MG_TUNE_SUCCESS);
        for (int i = 0; i < (online ? calls : 1); i++) {
            int seq = online ? i % 4 : m;
            unsigned char *out = online ? got : (ref[m] = malloc(rlen));
            for (size_t b = 0; b < slen * (size_t)size; b++)
                sbuf[b] = (unsigned char)(b * 11 + (size_t)rank * 5 + (size_t)seq + 1);
            memset(out, 0xEE, rlen);
            MPI_Alltoallw(sbuf + GUARD - tlb, sc, sd, st, out, rc, rd, rt, MPI_COMM_WORLD);
            if (online) EXPECT(memcmp(got, ref[seq], rlen) == 0);
        }
    }
    for (int s = 0; s < 4; s++) free(ref[s]);
    free(sbuf), free(got), free(sc), free(sd), free(rc), free(rd), free(st), free(rt);
}

/* A receive cancelled, its buffer as it was, and a send whose request is
 * freed, whose data arrive as they do natively. */
static void cancelled_and_freed(MPI_Datatype t)
{
    enum { N = COUNT * 48 };
    double v[N], ref[N];
    MPI_Request r;
    MPI_Status st;
    EXPECT(mg_tune_set_mode(MG_TUNE_OFF) == MG_TUNE_SUCCESS);
    for (int i = 0; i < N; i++) ref[i] = rank == 0 ? i : -1;
    if (rank == 0)
        MPI_Send(ref, COUNT, t, 1, 778, MPI_COMM_WORLD);
    else if (rank == 1)
        MPI_Recv(ref, COUNT, t, 0, 778, MPI_COMM_WORLD, &st);
    EXPECT(mg_tune_set_mode(MG_TUNE_ONLINE) == MG_TUNE_SUCCESS);
    for (int i = 0; i < N; i++) v[i] = rank == 0 ? i : -1 - i;
    if (rank == 1) {
        MPI_Irecv(v, COUNT, t, 0, 777, MPI_COMM_WORLD, &r); /* never sent */
        MPI_Cancel(&r);
        MPI_Wait(&r, &st);
        int cancelled = 0;
        MPI_Test_cancelled(&st, &cancelled);
        EXPECT(cancelled);
        for (int i = 0; i < N; i++) EXPECT(v[i] == -1 - i);
        for (int i = 0; i < N; i++) v[i] = -1;
    }
    if (rank == 0) {
        MPI_Isend(v, COUNT, t, 1, 778, MPI_COMM_WORLD, &r);
        MPI_Request_free(&r);
    } else if (rank == 1) {
        MPI_Recv(v, COUNT, t, 0, 778, MPI_COMM_WORLD, &st);
        EXPECT(memcmp(v, ref, sizeof v) == 0);
    }
    MPI_Barrier(MPI_COMM_WORLD); /* the freed send has arrived */
}

/* The report's #@tune_online_dt line of op at bytes; NULL if none. */
static const char *line_of(const char *report, const char *op, long long bytes)
{
    char head[96];
    snprintf(head, sizeof head, "#@tune_online_dt[%s %lld ", op, bytes);
    return strstr(report, head);
}

static unsigned long long field(const char *line, const char *name)
{
    const char *p = strstr(line, name);
    return p ? strtoull(p + strlen(name), NULL, 10) : 0;
}

/* A key of `calls` calls: explored and settled (many), or native only (few). */
static void expect_key(const char *report, const char *op, long long bytes, int calls, int explored)
{
    const char *line = line_of(report, op, bytes);
    EXPECT(line != NULL);
    if (!line) return;
    const char *end = strchr(line, '\n');
    EXPECT(field(line, " calls=") == (unsigned long long)calls);
    unsigned long long explore = field(line, " explore_calls="), served = 0;
    const char *s = strstr(line, " served=");
    EXPECT(s && s < end);
    for (const char *p = s ? s + 8 : end; p && p < end; p = strchr(p, ',')) {
        p = strchr(p, ':');
        if (!p || p > end) break;
        served += strtoull(p + 1, NULL, 10);
    }
    EXPECT(served == (unsigned long long)calls);
    if (explored) {
        EXPECT(explore > 0 && explore < (unsigned long long)calls);
        EXPECT(strncmp(strstr(line, "]=chosen=") + 9, "-", 1) != 0); /* settled */
        EXPECT(strstr(line, "times=native:") != NULL && strstr(line, "pack:") != NULL);
    } else {
        EXPECT(explore == 0);
        EXPECT(strstr(line, "]=chosen=-") != NULL);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Datatype vec, idx, gap;
    MPI_Type_vector(16, 1, 3, MPI_DOUBLE, &vec); /* 128 bytes per element */
    int blens[3] = {2, 1, 3}, displs[3] = {0, 5, 9};
    MPI_Type_indexed(3, blens, displs, MPI_INT, &idx); /* 24 bytes */
    MPI_Type_create_resized(idx, -8, 64, &gap);
    MPI_Type_commit(&vec);
    MPI_Type_commit(&idx);
    MPI_Type_commit(&gap);

    /* half the sends with one handle, half with another of the same layout (both alive at the switch: not
     * the same handle): one key, whose explorations do not start over */
    exchanges(vec, BLOCKING, MANY / 4);
    MPI_Datatype again;
    MPI_Type_vector(16, 1, 3, MPI_DOUBLE, &again);
    MPI_Type_commit(&again);
    MPI_Type_free(&vec);
    vec = again;
    exchanges(vec, BLOCKING, MANY / 4);
    exchanges(gap, SSEND, MANY / 2);
    exchanges(idx, BLOCKING, FEW / 2);
    exchanges(vec, NONBLOCKING, MANY / 2);
    cancelled_and_freed(vec);
    MPI_Datatype six; /* contiguous: native, no key */
    MPI_Type_contiguous(6, MPI_INT, &six);
    MPI_Type_commit(&six);
    swaps(vec, vec, SENDRECV, MANY);
    swaps(six, gap, SENDRECV, MANY);
    swaps(vec, vec, REPLACE, MANY);
    alltoallws(gap, MANY);

    char *report = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&report, &len);
    EXPECT(f && mg_tune_write_report(f) == MG_TUNE_SUCCESS);
    if (f) fclose(f);
    if (rank == 0 && report) {
        expect_key(report, "MPI_Send", COUNT * 128, MANY, 1);
        const char *send = line_of(report, "MPI_Send", COUNT * 128);
        /* its first exploration and its look again (at 4 times the calls it settled at, within 120) */
        EXPECT(send && field(send, " explorations=") == 2 && !line_of(send + 1, "MPI_Send", COUNT * 128));
        expect_key(report, "MPI_Ssend", COUNT * 24, MANY, 1);
        expect_key(report, "MPI_Send", COUNT * 24, FEW, 0);
        /* the freed send counts where it was untimed (at its start) or complete at its start (an eager message) */
        const char *isend = line_of(report, "MPI_Isend", COUNT * 128);
        expect_key(report, "MPI_Isend", COUNT * 128, isend && field(isend, " calls=") == MANY + 1 ? MANY + 1 : MANY, 1);
        EXPECT(line_of(report, "MPI_Recv", (COUNT + ROOM) * 128) == NULL); /* rank 0 receives nothing */
    } else if (rank == 1 && report) {
        expect_key(report, "MPI_Recv", (COUNT + ROOM) * 128, MANY, 1);
        expect_key(report, "MPI_Recv", COUNT * 128, 1, 0); /* the freed send's receive */
        expect_key(report, "MPI_Recv", (COUNT + ROOM) * 24, MANY, 1); /* gap's key, */
        const char *first = line_of(report, "MPI_Recv", (COUNT + ROOM) * 24);
        if (first) expect_key(strchr(first, '\n'), "MPI_Recv", (COUNT + ROOM) * 24, FEW, 0); /* then idx's */
        expect_key(report, "MPI_Irecv", (COUNT + ROOM) * 128, MANY, 1);
        /* the cancelled one: its key's first call, warming up, untimed: counted when started */
        const char *cancelled = line_of(report, "MPI_Irecv", COUNT * 128);
        EXPECT(cancelled && field(cancelled, " calls=") == 1);
    }
    if (rank <= 1 && report) {
        /* a sendrecv's sides are chosen together, by the send side's key; by the receive side's where the
         * send side has none (a contiguous type) */
        expect_key(report, "MPI_Sendrecv:send", COUNT * 128, MANY, 1);
        EXPECT(line_of(report, "MPI_Sendrecv:recv", COUNT * 128) == NULL);
        expect_key(report, "MPI_Sendrecv:recv", COUNT * 24, MANY, 1);
        expect_key(report, "MPI_Sendrecv_replace:send", COUNT * 128, MANY, 1);
        EXPECT(line_of(report, "MPI_Sendrecv_replace:recv", COUNT * 128) == NULL);
    }
    if (report) {
        /* a collective's side: this rank's own choice between native and normalized (pack would have to be
         * every rank's) */
        const char *w = strstr(report, "#@tune_online_dt[MPI_Alltoallw ");
        EXPECT(w && field(w, " calls=") == MANY && field(w, " explore_calls=") > 0);
        const char *end = w ? strchr(w, '\n') : NULL, *pack = w ? strstr(w, "pack:") : NULL;
        EXPECT(w && strstr(w, "times=native:") && strstr(w, ",normalized:") && (!pack || pack > end));
    }
    free(report);
    MPI_Type_free(&vec);
    MPI_Type_free(&idx);
    MPI_Type_free(&gap);
    MPI_Type_free(&six);
    int all = 0;
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Finalize();
    if (rank == 0) printf("test_tune_dt_online: %s\n", all ? "FAILED" : "ok");
    return all ? 1 : 0;
}
