/* The two pools (message bytes, int vectors) and the leases on them.
 *
 * The pools are allocated once at MPI_Init with the configured sizes (Hunold
 * and Carpen-Amarie 2018, Section 3.2.3: size_msg_buffer_bytes,
 * size_int_buffer_bytes) so that a mock-up makes no system call for its
 * buffers. One lease holds both pools for one call; sub-allocations are
 * bump-allocated, 64-byte aligned, and all returned at release. A second,
 * concurrent lease (another thread) and every lease before MPI_Init or with
 * pools of size 0 malloc its pieces instead: the choice of the mock-up never
 * depends on the free space, so all ranks make the same one. */
#define _POSIX_C_SOURCE 200809L
#include "tune_internal.h"
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MG_ALIGN ((size_t)64)

/* Allocated at MPI_Init with the configured sizes (NULL if 0 or failed). The
 * lock is held only to take or return the pools and to (de)allocate them. */
static struct {
    pthread_mutex_t mu;
    unsigned char *msg_pool, *int_pool;
    size_t msg_pool_size, int_pool_size;
    int leased;
    struct mg_lease lease; /* the one lease that holds the pools */
} pools = {.mu = PTHREAD_MUTEX_INITIALIZER};

/* n rounded up to a multiple of 64 (at least 64); 0 if that overflows. */
static size_t round_up(size_t n)
{
    if (n == 0) n = 1;
    if (n > SIZE_MAX - (MG_ALIGN - 1)) return 0;
    return (n + MG_ALIGN - 1) & ~(MG_ALIGN - 1);
}

static void *alloc_aligned(size_t bytes)
{
    void *p = NULL;
    if (posix_memalign(&p, MG_ALIGN, bytes) != 0) return NULL;
    return p;
}

/* mu held. */
static void free_locked(void)
{
    if (pools.leased) return; /* a call still runs (erroneous program): keep the memory */
    free(pools.msg_pool);
    free(pools.int_pool);
    pools.msg_pool = pools.int_pool = NULL;
    pools.msg_pool_size = pools.int_pool_size = 0;
}

/* A pool of bytes (> 0), rounded up to 64 bytes; NULL if it cannot be allocated. */
static unsigned char *alloc_pool(size_t bytes)
{
    size_t r = round_up(bytes);
    return r ? alloc_aligned(r) : NULL;
}

void mg_tune__pools_alloc(size_t msg_bytes, size_t int_bytes)
{
    pthread_mutex_lock(&pools.mu);
    free_locked();
    if (msg_bytes > 0 && (pools.msg_pool = alloc_pool(msg_bytes)) == NULL)
        mg_tune__warn_local("cannot allocate the message pool of %zu bytes; mock-ups malloc their buffers "
                            "(lower msg_pool_bytes / MPIGUIDE_TUNE_MSG_POOL)",
                            msg_bytes);
    else if (msg_bytes > 0)
        pools.msg_pool_size = msg_bytes;
    if (int_bytes > 0 && (pools.int_pool = alloc_pool(int_bytes)) == NULL)
        mg_tune__warn_local("cannot allocate the int pool of %zu bytes; mock-ups malloc their vectors "
                            "(lower int_pool_bytes / MPIGUIDE_TUNE_INT_POOL)",
                            int_bytes);
    else if (int_bytes > 0)
        pools.int_pool_size = int_bytes;
    pthread_mutex_unlock(&pools.mu);
}

void mg_tune__pools_free(void)
{
    pthread_mutex_lock(&pools.mu);
    free_locked();
    pthread_mutex_unlock(&pools.mu);
}

mg_tune_pool_info mg_tune__pool_info(void)
{
    pthread_mutex_lock(&pools.mu);
    mg_tune_pool_info info = {pools.msg_pool, pools.int_pool, pools.msg_pool_size, pools.int_pool_size, pools.leased};
    pthread_mutex_unlock(&pools.mu);
    return info;
}

mg_lease *mg_lease_acquire(size_t msg_bytes, size_t int_bytes)
{
    (void)msg_bytes; /* pieces beyond the pool are malloc'ed, so the need only matters for the choice */
    (void)int_bytes;
    pthread_mutex_lock(&pools.mu);
    if (!pools.leased && (pools.msg_pool || pools.int_pool)) {
        pools.leased = 1;
        mg_lease *l = &pools.lease;
        memset(l, 0, sizeof *l);
        l->pooled = 1;
        pthread_mutex_unlock(&pools.mu);
        return l;
    }
    pthread_mutex_unlock(&pools.mu);
    return calloc(1, sizeof(mg_lease));
}

/* A malloc'ed piece, remembered for release. */
static void *extra_piece(mg_lease *l, size_t rounded)
{
    if (l->nextra == l->cap_extra) {
        size_t cap = l->cap_extra ? 2 * l->cap_extra : 4;
        void **e = realloc(l->extra, cap * sizeof *e);
        if (!e) return NULL;
        l->extra = e;
        l->cap_extra = cap;
    }
    void *p = alloc_aligned(rounded);
    if (p) l->extra[l->nextra++] = p;
    return p;
}

/* Bump allocation from a pool the lease holds; NULL if the rest is too small. */
static void *bump(unsigned char *pool, size_t size, size_t *used, size_t rounded)
{
    if (!pool || *used > size) return NULL;
    /* the pool itself is rounded up to 64 bytes at allocation */
    size_t cap = round_up(size);
    if (rounded > cap - *used) return NULL;
    void *p = pool + *used;
    *used += rounded;
    return p;
}

void *mg_lease_msg(mg_lease *l, size_t bytes)
{
    if (!l) return NULL;
    size_t r = round_up(bytes);
    if (!r) return NULL;
    if (l->pooled) {
        void *p = bump(pools.msg_pool, pools.msg_pool_size, &l->msg_used, r);
        if (p) return p;
    }
    return extra_piece(l, r);
}

int *mg_lease_ints(mg_lease *l, size_t count)
{
    if (!l || count > SIZE_MAX / sizeof(int)) return NULL;
    size_t r = round_up(count * sizeof(int));
    if (!r) return NULL;
    if (l->pooled) {
        void *p = bump(pools.int_pool, pools.int_pool_size, &l->int_used, r);
        if (p) return p;
    }
    return extra_piece(l, r);
}

void mg_lease_release(mg_lease *l)
{
    if (!l) return;
    for (size_t i = 0; i < l->nextra; i++) free(l->extra[i]);
    free(l->extra);
    if (l->pooled) {
        memset(l, 0, sizeof *l);
        pthread_mutex_lock(&pools.mu);
        pools.leased = 0;
        pthread_mutex_unlock(&pools.mu);
    } else {
        free(l);
    }
}
