/* The handle map (src/tune/handles.c) and the communicator records built on it
 * (src/tune/comms.c):
 *   - put/get/take of many keys, through several table growths, with removed
 *     keys never found again and re-put keys found with their new value;
 *   - four reader threads looking up live keys while the writer grows the
 *     table and removes other keys: every lookup of a live key finds its value;
 *   - the usage counters (src/tune/report.c): four threads count calls of a few
 *     (collective, size, implementation) keys, repeated and interleaved, and
 *     mg_tune__counted gives every key's exact total, threads' cells included,
 *     also after a fifth thread read the counters all along;
 *   - mg_tune__comm_info: size and inter flag of MPI_COMM_WORLD, MPI_COMM_SELF,
 *     a split and an intercommunicator; after MPI_Comm_free the record is gone,
 *     and a new communicator (which may reuse the freed handle) gets its own.
 * Run under mpiexec -n 2 (the intercommunicator needs two processes). */
#define _POSIX_C_SOURCE 200809L
#include "comms.h"
#include "handles.h"
#include "mpiguide/tune.h"
#include "tune_internal.h"

#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static int failures;
#define CHECK(cond, ...)                                         \
    do {                                                         \
        if (!(cond)) {                                           \
            failures++;                                          \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
            fprintf(stderr, __VA_ARGS__);                        \
            fputc('\n', stderr);                                 \
        }                                                        \
    } while (0)

enum { NKEYS = 20000, NLIVE = 512, NREADERS = 4 };
static long values[NKEYS];
static mg_hmap map = MG_HMAP_INIT;
static _Atomic int stop;
static _Atomic long reader_misses, reader_lookups;

/* Keys as handles look: small integers in a range, or aligned pointers. */
static uintptr_t key_of(int i) { return (uintptr_t)0x44000000u + (uintptr_t)i * 16u; }

static void serial(void)
{
    for (int i = 0; i < NKEYS; i++) {
        values[i] = i;
        CHECK(mg_hmap_put(&map, key_of(i), &values[i]) == 0, "put %d", i);
    }
    for (int i = 0; i < NKEYS; i++) CHECK(mg_hmap_get(&map, key_of(i)) == &values[i], "get %d after the puts", i);
    CHECK(mg_hmap_get(&map, key_of(NKEYS)) == NULL, "a key never put is found");
    for (int i = 0; i < NKEYS; i += 2) CHECK(mg_hmap_take(&map, key_of(i)) == &values[i], "take %d", i);
    CHECK(mg_hmap_take(&map, key_of(0)) == NULL, "a key taken twice");
    for (int i = 0; i < NKEYS; i++)
        CHECK(mg_hmap_get(&map, key_of(i)) == (i % 2 ? &values[i] : NULL), "get %d after taking the even keys", i);
    /* re-put with another value, and churn: many puts and takes of fresh keys leave GONE slots behind */
    for (int i = 0; i < NKEYS; i += 2) mg_hmap_put(&map, key_of(i), &values[(i + 1) % NKEYS]);
    for (int round = 0; round < 20; round++)
        for (int i = 0; i < 1000; i++) {
            uintptr_t k = key_of(NKEYS + 1 + round * 1000 + i);
            mg_hmap_put(&map, k, &values[i]);
            CHECK(mg_hmap_take(&map, k) == &values[i], "churn key %d/%d", round, i);
        }
    for (int i = 0; i < NKEYS; i++)
        CHECK(mg_hmap_get(&map, key_of(i)) == (i % 2 ? &values[i] : &values[(i + 1) % NKEYS]), "get %d after re-put",
              i);
    mg_hmap_clear(&map);
    CHECK(mg_hmap_get(&map, key_of(1)) == NULL, "found after clear");
}

static void *reader(void *arg)
{
    (void)arg;
    long lookups = 0, misses = 0;
    while (!atomic_load(&stop))
        for (int i = 0; i < NLIVE; i++, lookups++) misses += mg_hmap_get(&map, key_of(i)) != &values[i];
    atomic_fetch_add(&reader_misses, misses);
    atomic_fetch_add(&reader_lookups, lookups);
    return NULL;
}

static void concurrent(void)
{
    for (int i = 0; i < NLIVE; i++) mg_hmap_put(&map, key_of(i), &values[i]);
    pthread_t th[NREADERS];
    for (int t = 0; t < NREADERS; t++) pthread_create(&th[t], NULL, reader, NULL);
    /* growth and removals of other keys while the readers run */
    for (int i = NLIVE; i < NKEYS; i++) mg_hmap_put(&map, key_of(i), &values[i]);
    for (int i = NLIVE; i < NKEYS; i++) mg_hmap_take(&map, key_of(i));
    for (int i = NLIVE; i < NKEYS; i++) mg_hmap_put(&map, key_of(i), &values[i]);
    atomic_store(&stop, 1);
    for (int t = 0; t < NREADERS; t++) pthread_join(th[t], NULL);
    CHECK(atomic_load(&reader_misses) == 0, "%ld of %ld concurrent lookups of live keys missed",
          atomic_load(&reader_misses), atomic_load(&reader_lookups));
    mg_hmap_clear(&map);
}

enum { NCOUNTERS = 4, CALLS = 20000 };

/* Thread t counts CALLS calls: runs of the same key (the per-thread cell) and
 * switches between keys (the cell flushed into the shared counter). */
static void *counting(void *arg)
{
    long t = (long)arg;
    for (int i = 0; i < CALLS; i++) {
        int key = (i / (1 + (int)t * 7)) % 3; /* runs of 1, 8, 15, 22 calls per key */
        mg_tune__count(key == 2 ? MG_COLL_BCAST : MG_COLL_ALLREDUCE, 4 + 4 * key, key == 1 ? MG_TUNE_NATIVE : 0);
    }
    return NULL;
}

static _Atomic int counting_done;

/* Reads the counters while the threads count: a read must never move or lose
 * a thread's pending calls (the totals below would be off). */
static void *reading(void *arg)
{
    (void)arg;
    uint64_t seen = 0;
    while (!atomic_load(&counting_done)) seen += mg_tune__counted(MG_COLL_ALLREDUCE, 4, 0);
    return (void *)(uintptr_t)(seen > 0);
}

static void counters(void)
{
    mg_tune__counters_reset();
    pthread_t th[NCOUNTERS], reader_th;
    pthread_create(&reader_th, NULL, reading, NULL);
    for (long t = 0; t < NCOUNTERS; t++) pthread_create(&th[t], NULL, counting, (void *)t);
    for (int t = 0; t < NCOUNTERS; t++) pthread_join(th[t], NULL);
    atomic_store(&counting_done, 1);
    pthread_join(reader_th, NULL);
    uint64_t want[3] = {0, 0, 0};
    for (int t = 0; t < NCOUNTERS; t++)
        for (int i = 0; i < CALLS; i++) want[(i / (1 + t * 7)) % 3]++;
    uint64_t got[3] = {mg_tune__counted(MG_COLL_ALLREDUCE, 4, 0),
                       mg_tune__counted(MG_COLL_ALLREDUCE, 8, MG_TUNE_NATIVE), mg_tune__counted(MG_COLL_BCAST, 12, 0)};
    for (int k = 0; k < 3; k++)
        CHECK(got[k] == want[k], "key %d counted %llu calls, expected %llu", k, (unsigned long long)got[k],
              (unsigned long long)want[k]);
    CHECK(mg_tune__counted(MG_COLL_BCAST, 4, 0) == 0, "a key never counted has calls");
    mg_tune__counters_reset();
    CHECK(mg_tune__counted(MG_COLL_ALLREDUCE, 4, 0) == 0, "calls left after a reset");
    mg_tune__count(MG_COLL_ALLREDUCE, 4, 0); /* the thread's cell was emptied by the reset */
    CHECK(mg_tune__counted(MG_COLL_ALLREDUCE, 4, 0) == 1, "a call after a reset counted %llu times",
          (unsigned long long)mg_tune__counted(MG_COLL_ALLREDUCE, 4, 0));
    mg_tune__counters_reset();
}

static void comm_records(int rank, int size)
{
    const mg_comm_info *w = mg_tune__comm_info(MPI_COMM_WORLD), *s = mg_tune__comm_info(MPI_COMM_SELF);
    CHECK(w && w->size == size && !w->inter, "MPI_COMM_WORLD: size %d inter %d", w ? w->size : -1, w ? w->inter : -1);
    CHECK(s && s->size == 1 && !s->inter, "MPI_COMM_SELF: size %d", s ? s->size : -1);
    CHECK(mg_tune__comm_info(MPI_COMM_WORLD) == w, "a second lookup makes another record");
    for (int round = 0; round < 50; round++) {
        MPI_Comm half, inter;
        MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
        const mg_comm_info *h = mg_tune__comm_info(half);
        int want = (size + 1 - rank % 2) / 2;
        CHECK(h && h->size == want && !h->inter, "split round %d: size %d, expected %d", round, h ? h->size : -1, want);
        MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, rank % 2 ? 0 : 1, 7, &inter);
        const mg_comm_info *ic = mg_tune__comm_info(inter);
        CHECK(ic && ic->inter && ic->size == want, "intercommunicator round %d: inter %d size %d", round,
              ic ? ic->inter : -1, ic ? ic->size : -1);
        uintptr_t hk = MG_HANDLE_KEY(half);
        MPI_Comm_free(&inter);
        MPI_Comm_free(&half);
        /* the delete callback took the record out: the handle may come back for another communicator */
        MPI_Comm dup;
        MPI_Comm_dup(MPI_COMM_SELF, &dup);
        const mg_comm_info *d = mg_tune__comm_info(dup);
        CHECK(d && d->size == 1 && !d->inter, "a new communicator %s the freed one's record (size %d)",
              MG_HANDLE_KEY(dup) == hk ? "with the freed handle got" : "got", d ? d->size : -1);
        MPI_Comm_free(&dup);
    }
    CHECK(mg_tune__comm_info(MPI_COMM_NULL) == NULL, "MPI_COMM_NULL has a record");
}

int main(int argc, char **argv)
{
    serial();
    concurrent();
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    counters();
    if (size >= 2) comm_records(rank, size);
    int all = 0;
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) printf("%s: %d failure(s)\n", all ? "FAIL" : "PASS", all);
    MPI_Finalize();
    return all != 0;
}
