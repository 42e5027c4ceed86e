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
 *     and a new communicator (which may reuse the freed handle) gets its own;
 *   - mg_tune__type_size (src/tune/types.c): predefined and derived types, a
 *     type freed and another made in its place (MPICH reuses the handle), a
 *     dup outliving its original, a type never freed (MPI_Finalize drops its
 *     record: the sanitizer builds see any leak), mg_type_bytes' overflow;
 *   - the per-thread memo of decide() (src/tune/intercept.c): a type freed and
 *     another made with the same handle is counted with its own size, and a
 *     profile's choice follows the new size (mode tuned).
 * Run under mpiexec -n 2 (the intercommunicator needs two processes). */
#define _POSIX_C_SOURCE 200809L
#include "comms.h"
#include "handles.h"
#include "mpiguide/tune.h"
#include "tune_internal.h"
#include "types.h"

#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

static void type_records(void)
{
    CHECK(mg_tune__type_size(MPI_INT) == 4 && mg_tune__type_size(MPI_INT) == 4, "MPI_INT");
    CHECK(mg_tune__type_size(MPI_DOUBLE) == 8, "MPI_DOUBLE");
    CHECK(mg_tune__type_size(MPI_2INT) == 8, "MPI_2INT");
    MPI_Datatype f90; /* predefined: no attribute can be set on it */
    int f90_size = 0;
    if (MPI_Type_create_f90_real(6, MPI_UNDEFINED, &f90) == MPI_SUCCESS && MPI_Type_size(f90, &f90_size) == MPI_SUCCESS)
        CHECK(mg_tune__type_size(f90) == f90_size && mg_tune__type_size(f90) == f90_size, "f90 real: %lld, not %d",
              (long long)mg_tune__type_size(f90), f90_size);
    MPI_Datatype kept_type;
    MPI_Type_contiguous(5, MPI_SHORT, &kept_type); /* never freed */
    MPI_Type_commit(&kept_type);
    int reused = 0;
    MPI_Datatype last = MPI_DATATYPE_NULL;
    for (int round = 1; round <= 200; round++) {
        MPI_Datatype t, d;
        MPI_Type_contiguous(round, MPI_INT, &t);
        MPI_Type_commit(&t);
        reused += t == last;
        MPI_Count got = mg_tune__type_size(t);
        CHECK(got == 4 * round, "round %d: size %lld, expected %d", round, (long long)got, 4 * round);
        CHECK(mg_tune__type_size(kept_type) == 10, "round %d: the kept type", round);
        CHECK(mg_tune__type_size(t) == 4 * round, "round %d: second lookup", round);
        MPI_Type_dup(t, &d);
        MPI_Type_free(&t);
        CHECK(mg_tune__type_size(d) == 4 * round, "round %d: the dup of a freed type", round);
        CHECK(mg_type_bytes(3, d) == 12 * round, "round %d: mg_type_bytes", round);
        last = d;
        MPI_Type_free(&d);
    }
    CHECK(mg_type_bytes((MPI_Count)1 << 62, MPI_INT) == -1, "mg_type_bytes does not see the overflow");
    CHECK(mg_type_bytes(-1, MPI_INT) == -1 && mg_type_bytes(1, MPI_DATATYPE_NULL) == -1, "bad arguments");
    printf("type records: %d of 199 new types had the handle of the last freed one\n", reused);
}

/* contiguous(n, MPI_INT), committed: made right after a free, it gets the
 * freed type's handle in MPICH and Open MPI (the last freed first). */
static MPI_Datatype ints_type(int n)
{
    MPI_Datatype t;
    MPI_Type_contiguous(n, MPI_INT, &t);
    MPI_Type_commit(&t);
    return t;
}

static void remembered_calls(int rank, int size)
{
    int buf[8] = {0};
    mg_tune_set_mode(MG_TUNE_OFF);
    mg_tune_set_counting(MG_TUNE_COUNT_ALWAYS);
    mg_tune__counters_reset();
    MPI_Datatype t = ints_type(3), old = t;
    for (int i = 0; i < 3; i++) MPI_Bcast(buf, 1, t, 0, MPI_COMM_SELF);
    MPI_Type_free(&t);
    t = ints_type(5);
    int same = t == old;
    for (int i = 0; i < 2; i++) MPI_Bcast(buf, 1, t, 0, MPI_COMM_SELF);
    CHECK(mg_tune__counted(MG_COLL_BCAST, 12, 0) == 3 && mg_tune__counted(MG_COLL_BCAST, 20, 0) == 2,
          "counted 12 bytes x %llu and 20 bytes x %llu, expected 3 and 2 (same handle: %d)",
          (unsigned long long)mg_tune__counted(MG_COLL_BCAST, 12, 0),
          (unsigned long long)mg_tune__counted(MG_COLL_BCAST, 20, 0), same);
    MPI_Type_free(&t);
    mg_tune_set_counting(MG_TUNE_COUNT_AUTO);
    mg_tune__counters_reset();

    char dir[64] = "", name[128], text[256];
    if (rank == 0 && !mkdtemp(strcpy(dir, "/tmp/mg_memo_XXXXXX"))) dir[0] = '\0';
    MPI_Bcast(dir, sizeof dir, MPI_CHAR, 0, MPI_COMM_WORLD);
    CHECK(dir[0], "no temporary directory");
    if (!dir[0]) return;
    if (rank == 0) {
        snprintf(name, sizeof name, "%s/bcast_%d.prof", dir, size);
        snprintf(text, sizeof text, "# mpiguide tune profile 1\ncollective bcast\nprocs %d\n1 16 bcast_as_allgatherv\n",
                 size);
        FILE *f = fopen(name, "w");
        if (f) fputs(text, f), fclose(f);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(mg_tune_load_profiles(dir) == MG_TUNE_SUCCESS && mg_tune_set_mode(MG_TUNE_TUNED) == MG_TUNE_SUCCESS,
          "profile not loaded");
    t = ints_type(3);
    for (int i = 0; i < 3; i++) {
        MPI_Bcast(buf, 1, t, 0, MPI_COMM_WORLD);
        CHECK(!strcmp(mg_tune_last_impl("bcast"), "bcast_as_allgatherv"), "12 bytes ran %s",
              mg_tune_last_impl("bcast"));
    }
    MPI_Type_free(&t);
    t = ints_type(5);
    MPI_Bcast(buf, 1, t, 0, MPI_COMM_WORLD);
    CHECK(!strcmp(mg_tune_last_impl("bcast"), "default"), "20 bytes ran %s", mg_tune_last_impl("bcast"));
    MPI_Type_free(&t);
    mg_tune_set_mode(MG_TUNE_OFF);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) remove(name), rmdir(dir);
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
    type_records();
    if (size >= 2) remembered_calls(rank, size);
    int all = 0;
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) printf("%s: %d failure(s)\n", all ? "FAIL" : "PASS", all);
    MPI_Finalize();
    return all != 0;
}
