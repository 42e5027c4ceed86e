/* Usage counters (per collective, message size and implementation that ran;
 * per operation with a derived datatype, bytes and strategy) and the report,
 * in the spirit of Hunold and Carpen-Amarie (2018), Listing 2, as keyed notes
 * of a raw file (`#@kind[config]=value`, docs/formats.md), so that a report
 * appended to a raw file is read with it:
 *   #@tune_alg[MPI_Allgather 100 allgather_as_gather_bcast]=25
 *   #@tune_dt[MPI_Send 3200 pack]=12
 *   #@tune_online[MPI_Allreduce 4 64 int sum]=chosen=... (online mode, online.c)
 *   #@tune_dt_refused[hvector block step 1-byte-per-piece of int: hvector(count=3, block=1, stride=1, int)]=1
 *   #@tune_config[msg_pool_bytes]=67108864
 *   #@tune_config[int_pool_bytes]=262144
 *   #@tune_config[mode]=tuned
 *   #@tune_config[chunk]=64
 *   #@tune_config[allow_regrouping]=no
 *   #@tune_config[dt_form]=auto */
#define _POSIX_C_SOURCE 200809L
#include "form_verdicts.h"
#include "datatypes/online_dt.h"
#include "online.h"
#include "mpiguide/dt.h"
#include "tune_internal.h"
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* One usage counter: calls of a collective with a message size that ran an
 * implementation, or of an operation with a derived datatype that took a
 * strategy. Counters never move once made (the table holds pointers). */
typedef struct {
    uint64_t calls; /* under mu */
    MPI_Count bytes;
    int coll; /* a collective, or MG_NCOLLS + an mg_dtop */
    int impl; /* an implementation index, MG_TUNE_NATIVE included, or an mg_dts */
} counter;
enum { NKEYS = MG_NCOLLS + MG_NDTOPS };

/* Each thread counts a repeated call (same collective, size and
 * implementation as its last one) in a cell of its own, without a lock or a
 * locked instruction; the thread adds the cell to its counter when it moves
 * on to another counter, and readers add the cells to what they read. The cells are
 * kept in a list (never freed before the counters: a thread may end). */
typedef struct cells cells;
struct cells {
    struct {
        counter *c; /* NULL: none yet */
        MPI_Count bytes;
        int impl;
        _Atomic uint64_t pending; /* written by the owning thread only */
    } last[NKEYS];
    cells *next;
};

/* Open addressing over counter pointers (NULL: empty), keyed by (coll, bytes,
 * impl); a power-of-two capacity. */
static struct {
    pthread_mutex_t mu;
    counter **table;
    size_t n, cap;
    cells *threads;
} counters = {.mu = PTHREAD_MUTEX_INITIALIZER};

static _Thread_local cells *my_cells __attribute__((tls_model("initial-exec")));

static size_t slot_of(int coll, MPI_Count bytes, int impl, size_t cap)
{
    uint64_t h = (uint64_t)bytes * 0x9E3779B97F4A7C15ull;
    h ^= ((uint64_t)(unsigned)coll << 32) ^ (uint64_t)(unsigned)(impl + 1) * 0xBF58476D1CE4E5B9ull;
    h ^= h >> 29;
    return (size_t)h & (cap - 1);
}

static counter **find(counter **t, size_t cap, int coll, MPI_Count bytes, int impl)
{
    for (size_t i = slot_of(coll, bytes, impl, cap);; i = (i + 1) & (cap - 1)) {
        counter *e = t[i];
        if (!e || (e->coll == coll && e->bytes == bytes && e->impl == impl)) return &t[i];
    }
}

/* mu held. 0 on success. */
static int grow(void)
{
    size_t cap = counters.cap ? 2 * counters.cap : 64;
    counter **t = calloc(cap, sizeof *t);
    if (!t) return -1;
    for (size_t i = 0; i < counters.cap; i++) {
        counter *e = counters.table[i];
        if (e) *find(t, cap, e->coll, e->bytes, e->impl) = e;
    }
    free(counters.table);
    counters.table = t;
    counters.cap = cap;
    return 0;
}

/* mu held: e's calls, those still in threads' cells included. A cell is only
 * read here: its owner adds to it without the lock, so moving its calls from
 * here could count some twice. */
static uint64_t calls_of(const counter *e)
{
    uint64_t n = e->calls;
    for (const cells *t = counters.threads; t; t = t->next)
        for (int k = 0; k < NKEYS; k++)
            if (t->last[k].c == e) n += atomic_load_explicit(&t->last[k].pending, memory_order_relaxed);
    return n;
}

static void count(int coll, MPI_Count bytes, int impl)
{
    cells *mine = my_cells;
    if (mine && mine->last[coll].c && mine->last[coll].bytes == bytes && mine->last[coll].impl == impl) {
        _Atomic uint64_t *p = &mine->last[coll].pending;
        atomic_store_explicit(p, atomic_load_explicit(p, memory_order_relaxed) + 1, memory_order_relaxed);
        return;
    }
    pthread_mutex_lock(&counters.mu);
    if (!mine && (mine = calloc(1, sizeof *mine)) != NULL) {
        mine->next = counters.threads;
        counters.threads = my_cells = mine;
    }
    counter **slot = NULL, *e = NULL;
    if (mine && ((counters.n + 1) * 10 <= counters.cap * 7 || grow() == 0)) {
        slot = find(counters.table, counters.cap, (int)coll, bytes, impl);
        if (!*slot && (*slot = calloc(1, sizeof **slot)) != NULL) {
            **slot = (counter){.bytes = bytes, .coll = (int)coll, .impl = impl};
            counters.n++;
        }
        e = *slot;
    }
    if (e) {
        __typeof__(mine->last[0]) *l = &mine->last[coll];
        if (l->c) l->c->calls += atomic_exchange_explicit(&l->pending, 0, memory_order_relaxed);
        l->c = e;
        l->bytes = bytes;
        l->impl = impl;
        e->calls++;
    }
    pthread_mutex_unlock(&counters.mu);
    if (!e) mg_tune__warn_local("out of memory for the usage counters; the report is incomplete");
}

void mg_tune__count(mg_coll coll, MPI_Count bytes, int impl) { count((int)coll, bytes, impl); }

void mg_tune__count_dt(mg_dtop op, MPI_Count bytes, mg_dts strategy)
{
    count(MG_NCOLLS + (int)op, bytes, (int)strategy);
}

static uint64_t counted(int coll, MPI_Count bytes, int impl)
{
    pthread_mutex_lock(&counters.mu);
    counter *e = counters.cap ? *find(counters.table, counters.cap, (int)coll, bytes, impl) : NULL;
    uint64_t n = e ? calls_of(e) : 0;
    pthread_mutex_unlock(&counters.mu);
    return n;
}

uint64_t mg_tune__counted(mg_coll coll, MPI_Count bytes, int impl) { return counted((int)coll, bytes, impl); }

uint64_t mg_tune__counted_dt(mg_dtop op, MPI_Count bytes, mg_dts strategy)
{
    return counted(MG_NCOLLS + (int)op, bytes, (int)strategy);
}

/* mu held: every counter freed, every thread's cells emptied. Only while no
 * other thread makes calls (the API's reset, MPI_Finalize). */
static void drop_all(void)
{
    for (cells *t = counters.threads; t; t = t->next) memset(t->last, 0, sizeof t->last);
    for (size_t i = 0; i < counters.cap; i++) free(counters.table[i]);
    if (counters.table) memset(counters.table, 0, counters.cap * sizeof *counters.table);
    counters.n = 0;
}

void mg_tune__counters_reset(void)
{
    pthread_mutex_lock(&counters.mu);
    drop_all();
    pthread_mutex_unlock(&counters.mu);
}

void mg_tune__counters_free(void)
{
    pthread_mutex_lock(&counters.mu);
    drop_all();
    free(counters.table);
    counters.table = NULL;
    counters.cap = 0;
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
        if (counters.table[i]) {
            (*rows)[*n] = *counters.table[i];
            (*rows)[(*n)++].calls = calls_of(counters.table[i]);
        }
    pthread_mutex_unlock(&counters.mu);
    if (*n > 1) qsort(*rows, *n, sizeof **rows, by_report_order);
    return MG_TUNE_SUCCESS;
}

/* One form class the MPI library packs wrongly: its name and canonical
 * instance, and how many normal types it refused (form_verdicts.h). */
static void refused_line(const char *name, const char *instance, long types, void *arg)
{
    fprintf((FILE *)arg, "#@tune_dt_refused[%s: %s]=%ld\n", name, instance, types);
}

int mg_tune__report_write(FILE *out, const mg_tune_config *cfg)
{
    counter *rows;
    size_t n;
    int rc = sorted_rows(&rows, &n);
    if (rc != MG_TUNE_SUCCESS) return rc;
    for (size_t i = 0; i < n; i++) {
        int c = rows[i].coll;
        if (c < MG_NCOLLS)
            fprintf(out, "#@tune_alg[%s %lld %s]=%llu\n", mg_tune__table((mg_coll)c)->mpi_name,
                    (long long)rows[i].bytes, mg_tune__impl_label((mg_coll)c, rows[i].impl),
                    (unsigned long long)rows[i].calls);
        else
            fprintf(out, "#@tune_dt[%s %lld %s]=%llu\n", mg_tune__dtop_name((mg_dtop)(c - MG_NCOLLS)),
                    (long long)rows[i].bytes, mg_tune__dts_name((mg_dts)rows[i].impl),
                    (unsigned long long)rows[i].calls);
    }
    free(rows);
    mg_tune__online_report(out);
    mg_tune__dt_online_report(out);
    mg_tune__forms_refused(refused_line, out);
    fprintf(out, "#@tune_config[msg_pool_bytes]=%zu\n", cfg->msg_pool_bytes);
    fprintf(out, "#@tune_config[int_pool_bytes]=%zu\n", cfg->int_pool_bytes);
    fprintf(out, "#@tune_config[mode]=%s\n", mg_tune__mode_name(cfg->mode));
    fprintf(out, "#@tune_config[chunk]=%lld\n", (long long)cfg->chunk);
    fprintf(out, "#@tune_config[allow_regrouping]=%s\n", cfg->allow_regrouping ? "yes" : "no");
    fprintf(out, "#@tune_config[dt_form]=%s\n", mg_dt_form_name(cfg->dt_form));
    if (fflush(out) != 0 || ferror(out)) return MG_TUNE_ERR_ARG;
    return MG_TUNE_SUCCESS;
}
