/* Usage counters (per collective, message size and implementation that ran)
 * and the report, in the spirit of 002 Listing 2, as keyed notes of a raw file
 * (`#@kind[config]=value`, docs/formats.md), so that a report appended to a
 * raw file is read with it:
 *   #@tune_alg[MPI_Allgather 100 allgather_as_gather_bcast]=25
 *   #@tune_config[msg_pool_bytes]=67108864
 *   #@tune_config[int_pool_bytes]=262144
 *   #@tune_config[mode]=tuned
 *   #@tune_config[chunk]=64
 *   #@tune_config[allow_regrouping]=no */
#define _POSIX_C_SOURCE 200809L
#include "tune_internal.h"
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* One usage counter: calls of a collective with a message size that ran an implementation. */
typedef struct {
    uint64_t calls; /* 0: empty slot */
    MPI_Count bytes;
    int coll;
    int impl; /* an implementation index, MG_TUNE_NATIVE included */
} counter;

/* Open addressing, keyed by (coll, bytes, impl); a power-of-two capacity. */
static struct {
    pthread_mutex_t mu;
    counter *table;
    size_t n, cap;
} counters = {.mu = PTHREAD_MUTEX_INITIALIZER};

static size_t slot_of(int coll, MPI_Count bytes, int impl, size_t cap)
{
    uint64_t h = (uint64_t)bytes * 0x9E3779B97F4A7C15ull;
    h ^= ((uint64_t)(unsigned)coll << 32) ^ (uint64_t)(unsigned)(impl + 1) * 0xBF58476D1CE4E5B9ull;
    h ^= h >> 29;
    return (size_t)h & (cap - 1);
}

static counter *find(counter *t, size_t cap, int coll, MPI_Count bytes, int impl)
{
    for (size_t i = slot_of(coll, bytes, impl, cap);; i = (i + 1) & (cap - 1)) {
        counter *e = &t[i];
        if (e->calls == 0 || (e->coll == coll && e->bytes == bytes && e->impl == impl)) return e;
    }
}

/* mu held. 0 on success. */
static int grow(void)
{
    size_t cap = counters.cap ? 2 * counters.cap : 64;
    counter *t = calloc(cap, sizeof *t);
    if (!t) return -1;
    for (size_t i = 0; i < counters.cap; i++) {
        counter *e = &counters.table[i];
        if (e->calls) *find(t, cap, e->coll, e->bytes, e->impl) = *e;
    }
    free(counters.table);
    counters.table = t;
    counters.cap = cap;
    return 0;
}

void mg_tune__count(mg_coll coll, MPI_Count bytes, int impl)
{
    pthread_mutex_lock(&counters.mu);
    if ((counters.n + 1) * 10 > counters.cap * 7 && grow() != 0) {
        pthread_mutex_unlock(&counters.mu);
        mg_tune__warn_local("out of memory for the usage counters; the report is incomplete");
        return;
    }
    counter *e = find(counters.table, counters.cap, (int)coll, bytes, impl);
    if (e->calls == 0) {
        e->coll = (int)coll;
        e->bytes = bytes;
        e->impl = impl;
        counters.n++;
    }
    e->calls++;
    pthread_mutex_unlock(&counters.mu);
}

uint64_t mg_tune__counted(mg_coll coll, MPI_Count bytes, int impl)
{
    pthread_mutex_lock(&counters.mu);
    uint64_t n = 0;
    if (counters.cap) n = find(counters.table, counters.cap, (int)coll, bytes, impl)->calls;
    pthread_mutex_unlock(&counters.mu);
    return n;
}

void mg_tune__counters_reset(void)
{
    pthread_mutex_lock(&counters.mu);
    if (counters.table) memset(counters.table, 0, counters.cap * sizeof *counters.table);
    counters.n = 0;
    pthread_mutex_unlock(&counters.mu);
}

void mg_tune__counters_free(void)
{
    pthread_mutex_lock(&counters.mu);
    free(counters.table);
    counters.table = NULL;
    counters.n = counters.cap = 0;
    pthread_mutex_unlock(&counters.mu);
}

/* Report order: collective, message size, then default, the mock-ups, native. */
static int by_report_order(const void *a, const void *b)
{
    const counter *x = a, *y = b;
    if (x->coll != y->coll) return x->coll < y->coll ? -1 : 1;
    if (x->bytes != y->bytes) return x->bytes < y->bytes ? -1 : 1;
    unsigned ix = (unsigned)x->impl, iy = (unsigned)y->impl; /* MG_TUNE_NATIVE sorts last */
    return ix < iy ? -1 : ix > iy;
}

/* The used counters in report order into *rows (malloc'ed; NULL if none). */
static int sorted_rows(counter **rows, size_t *n)
{
    pthread_mutex_lock(&counters.mu);
    *n = 0;
    *rows = counters.n ? malloc(counters.n * sizeof **rows) : NULL;
    if (counters.n && !*rows) {
        pthread_mutex_unlock(&counters.mu);
        return MG_TUNE_ERR_NOMEM;
    }
    for (size_t i = 0; i < counters.cap; i++)
        if (counters.table[i].calls) (*rows)[(*n)++] = counters.table[i];
    pthread_mutex_unlock(&counters.mu);
    if (*n > 1) qsort(*rows, *n, sizeof **rows, by_report_order);
    return MG_TUNE_SUCCESS;
}

int mg_tune__report_write(FILE *out, const mg_tune_config *cfg)
{
    counter *rows;
    size_t n;
    int rc = sorted_rows(&rows, &n);
    if (rc != MG_TUNE_SUCCESS) return rc;
    static const char *const modes[] = {"off", "forced", "tuned"};
    for (size_t i = 0; i < n; i++)
        fprintf(out, "#@tune_alg[%s %lld %s]=%llu\n", mg_tune__table((mg_coll)rows[i].coll)->mpi_name,
                (long long)rows[i].bytes, mg_tune__impl_label((mg_coll)rows[i].coll, rows[i].impl),
                (unsigned long long)rows[i].calls);
    free(rows);
    fprintf(out, "#@tune_config[msg_pool_bytes]=%zu\n", cfg->msg_pool_bytes);
    fprintf(out, "#@tune_config[int_pool_bytes]=%zu\n", cfg->int_pool_bytes);
    fprintf(out, "#@tune_config[mode]=%s\n", modes[cfg->mode]);
    fprintf(out, "#@tune_config[chunk]=%lld\n", (long long)cfg->chunk);
    fprintf(out, "#@tune_config[allow_regrouping]=%s\n", cfg->allow_regrouping ? "yes" : "no");
    if (fflush(out) != 0 || ferror(out)) return MG_TUNE_ERR_ARG;
    return MG_TUNE_SUCCESS;
}
