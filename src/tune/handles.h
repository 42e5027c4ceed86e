/* handles.c: a map from MPI handles (communicators, datatypes) to what the
 * library caches about them, looked up on every intercepted call.
 *
 * Readers take no lock and make no MPI call: a hash of the handle's bits and a
 * short linear probe over atomically published slots. Writers (the first call
 * that sees a handle, the attribute delete callback when the application frees
 * it) serialize on a mutex. A full table is replaced by one twice the size;
 * the old one stays readable until mg_hmap_clear, so a reader never follows a
 * freed table. Values are the caller's: the map never frees them. */
#ifndef MG_TUNE_HANDLES_H
#define MG_TUNE_HANDLES_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

typedef struct mg_hmap_table mg_hmap_table;
typedef struct {
    _Atomic(mg_hmap_table *) table;
    mg_hmap_table *retired; /* replaced tables, freed by mg_hmap_clear */
    pthread_mutex_t lock;
} mg_hmap;
#define MG_HMAP_INIT                          \
    {                                         \
        NULL, NULL, PTHREAD_MUTEX_INITIALIZER \
    }

/* The bits of a handle (an int in MPICH, a pointer in Open MPI) as a key. */
#define MG_HANDLE_KEY(h)                                                  \
    ({                                                                    \
        uintptr_t k_ = 0;                                                 \
        memcpy(&k_, &(h), sizeof(h) < sizeof k_ ? sizeof(h) : sizeof k_); \
        k_;                                                               \
    })

/* Changed by every mg_hmap_take and mg_hmap_clear, of any map: what a thread
 * remembers of its last lookups (intercept.c's memo of each collective's last
 * call) stays valid while this is unchanged, since a value is only freed
 * after its take. */
extern _Atomic unsigned mg_hmap_deletions;

void *mg_hmap_get(mg_hmap *m, uintptr_t key);
/* 0, or -1 if memory ran out (the handle then stays uncached). */
int mg_hmap_put(mg_hmap *m, uintptr_t key, void *value);
/* The value stored under key, removed; NULL if there was none. */
void *mg_hmap_take(mg_hmap *m, uintptr_t key);
/* Every table freed; the map is empty again. Only when no reader can run. */
void mg_hmap_clear(mg_hmap *m);

#endif
