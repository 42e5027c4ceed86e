/* The handle map (handles.h): open addressing, linear probing. A slot's key
 * is EMPTY, GONE (a removed entry, skipped by lookups) or a handle; a writer
 * stores the value before the key (release), so a reader that sees the key
 * (acquire) sees its value. */
#define _POSIX_C_SOURCE 200809L
#include "handles.h"

#include <stdlib.h>

_Atomic unsigned mg_hmap_deletions;

#define EMPTY          ((uintptr_t)0)
#define GONE           UINTPTR_MAX
#define FIRST_CAPACITY 256

typedef struct {
    _Atomic uintptr_t key;
    _Atomic(void *) value;
} slot;

struct mg_hmap_table {
    size_t mask;         /* capacity - 1 (a power of two) */
    size_t used;         /* slots not EMPTY (live and GONE), under the lock */
    mg_hmap_table *next; /* the retired list */
    slot slots[];
};

static size_t hash(uintptr_t k)
{
    uint64_t x = (uint64_t)k * 0x9E3779B97F4A7C15ull; /* Fibonacci hashing: handles differ in few bits */
    return (size_t)(x >> 32 ^ x);
}

void *mg_hmap_get(mg_hmap *m, uintptr_t key)
{
    mg_hmap_table *t = atomic_load_explicit(&m->table, memory_order_acquire);
    if (!t) return NULL;
    for (size_t i = hash(key) & t->mask;; i = (i + 1) & t->mask) {
        uintptr_t k = atomic_load_explicit(&t->slots[i].key, memory_order_acquire);
        if (k == key) return atomic_load_explicit(&t->slots[i].value, memory_order_relaxed);
        if (k == EMPTY) return NULL;
    }
}

static mg_hmap_table *table_new(size_t capacity)
{
    mg_hmap_table *t = calloc(1, sizeof *t + capacity * sizeof(slot));
    if (t) t->mask = capacity - 1;
    return t;
}

/* Under the lock: key's slot in t, or the first free one for it. */
static slot *find(mg_hmap_table *t, uintptr_t key, int for_insert)
{
    slot *free_slot = NULL;
    for (size_t i = hash(key) & t->mask;; i = (i + 1) & t->mask) {
        uintptr_t k = atomic_load_explicit(&t->slots[i].key, memory_order_relaxed);
        if (k == key) return &t->slots[i];
        if (k == GONE && !free_slot) free_slot = &t->slots[i];
        if (k == EMPTY) return for_insert ? (free_slot ? free_slot : &t->slots[i]) : NULL;
    }
}

static void publish(mg_hmap_table *t, slot *s, uintptr_t key, void *value)
{
    if (atomic_load_explicit(&s->key, memory_order_relaxed) == EMPTY) t->used++;
    atomic_store_explicit(&s->value, value, memory_order_relaxed);
    atomic_store_explicit(&s->key, key, memory_order_release);
}

/* Under the lock: a table with room for one more, the live entries moved
 * into a fresh one when more than half the slots are taken. */
static mg_hmap_table *room(mg_hmap *m)
{
    mg_hmap_table *t = atomic_load_explicit(&m->table, memory_order_relaxed);
    if (t && 2 * (t->used + 1) <= t->mask + 1) return t;
    size_t live = 0, cap = FIRST_CAPACITY;
    if (t)
        for (size_t i = 0; i <= t->mask; i++) {
            uintptr_t k = atomic_load_explicit(&t->slots[i].key, memory_order_relaxed);
            live += k != EMPTY && k != GONE;
        }
    while (4 * (live + 1) > cap) cap *= 2;
    mg_hmap_table *n = table_new(cap);
    if (!n) return NULL;
    if (t) {
        for (size_t i = 0; i <= t->mask; i++) {
            uintptr_t k = atomic_load_explicit(&t->slots[i].key, memory_order_relaxed);
            if (k != EMPTY && k != GONE)
                publish(n, find(n, k, 1), k, atomic_load_explicit(&t->slots[i].value, memory_order_relaxed));
        }
        t->next = m->retired;
        m->retired = t;
    }
    atomic_store_explicit(&m->table, n, memory_order_release);
    return n;
}

int mg_hmap_put(mg_hmap *m, uintptr_t key, void *value)
{
    pthread_mutex_lock(&m->lock);
    mg_hmap_table *t = room(m);
    if (t) publish(t, find(t, key, 1), key, value);
    pthread_mutex_unlock(&m->lock);
    return t ? 0 : -1;
}

void *mg_hmap_take(mg_hmap *m, uintptr_t key)
{
    void *value = NULL;
    pthread_mutex_lock(&m->lock);
    mg_hmap_table *t = atomic_load_explicit(&m->table, memory_order_relaxed);
    slot *s = t ? find(t, key, 0) : NULL;
    if (s) {
        value = atomic_load_explicit(&s->value, memory_order_relaxed);
        atomic_store_explicit(&s->key, GONE, memory_order_release);
    }
    pthread_mutex_unlock(&m->lock);
    atomic_fetch_add_explicit(&mg_hmap_deletions, 1, memory_order_release);
    return value;
}

void mg_hmap_clear(mg_hmap *m)
{
    pthread_mutex_lock(&m->lock);
    free(atomic_exchange(&m->table, NULL));
    while (m->retired) {
        mg_hmap_table *t = m->retired;
        m->retired = t->next;
        free(t);
    }
    pthread_mutex_unlock(&m->lock);
    atomic_fetch_add_explicit(&mg_hmap_deletions, 1, memory_order_release);
}
