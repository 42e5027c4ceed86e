/* Usage counters (per collective, message size and implementation that ran)
 * and the report, in the spirit of 002 Listing 2, as keyed notes of a raw file
 * (`#@kind[config]=value`, docs/formats.md), so that a report appended to a
 * raw file is read with it:
 *   #@tune_alg[MPI_Allgather 100 allgather_as_gather_bcast]=25
 *   #@tune_config[msg_pool_bytes]=67108864
 *   #@tune_config[int_pool_bytes]=262144
 *   #@tune_config[mode]=tuned
 *   #@tune_config[chunk]=64 */
#define _POSIX_C_SOURCE 200809L
#include "tune_state.h"
#include <stdlib.h>
#include <string.h>

static size_t slot_of(int coll, MPI_Count bytes, int impl, size_t cap)
{
    uint64_t h = (uint64_t)bytes * 0x9E3779B97F4A7C15ull;
    h ^= ((uint64_t)(unsigned)coll << 32) ^ (uint64_t)(unsigned)(impl + 1) * 0xBF58476D1CE4E5B9ull;
    h ^= h >> 29;
    return (size_t)h & (cap - 1);
}

static mg_tune_counter *find(mg_tune_counter *t, size_t cap, int coll, MPI_Count bytes, int impl)
{
    for (size_t i = slot_of(coll, bytes, impl, cap);; i = (i + 1) & (cap - 1)) {
        mg_tune_counter *e = &t[i];
        if (e->calls == 0 || (e->coll == coll && e->bytes == bytes && e->impl == impl)) return e;
    }
}

/* mu held. 0 on success. */
static int grow(void)
{
    mg_tune_state *g = &mg_tune_g;
    size_t cap = g->cap_counters ? 2 * g->cap_counters : 64;
    mg_tune_counter *t = calloc(cap, sizeof *t);
    if (!t) return -1;
    for (size_t i = 0; i < g->cap_counters; i++) {
        mg_tune_counter *e = &g->counters[i];
        if (e->calls) *find(t, cap, e->coll, e->bytes, e->impl) = *e;
    }
    free(g->counters);
    g->counters = t;
    g->cap_counters = cap;
    return 0;
}

void mg_tune__count(mg_coll coll, MPI_Count bytes, int impl)
{
    mg_tune_state *g = &mg_tune_g;
    mg_tune__lock();
    if ((g->ncounters + 1) * 10 > g->cap_counters * 7 && grow() != 0) {
        mg_tune__unlock();
        mg_tune__warn_local("out of memory for the usage counters; the report is incomplete");
        return;
    }
    mg_tune_counter *e = find(g->counters, g->cap_counters, (int)coll, bytes, impl);
    if (e->calls == 0) {
        e->coll = (int)coll;
        e->bytes = bytes;
        e->impl = impl;
        g->ncounters++;
    }
    e->calls++;
    mg_tune__unlock();
}

uint64_t mg_tune__counted(mg_coll coll, MPI_Count bytes, int impl)
{
    mg_tune_state *g = &mg_tune_g;
    mg_tune__lock();
    uint64_t n = 0;
    if (g->cap_counters) n = find(g->counters, g->cap_counters, (int)coll, bytes, impl)->calls;
    mg_tune__unlock();
    return n;
}

void mg_tune__counters_reset(void)
{
    mg_tune_state *g = &mg_tune_g;
    if (g->counters) memset(g->counters, 0, g->cap_counters * sizeof *g->counters);
    g->ncounters = 0;
}

/* Report order: collective, message size, then default, the mock-ups, native. */
static int by_report_order(const void *a, const void *b)
{
    const mg_tune_counter *x = a, *y = b;
    if (x->coll != y->coll) return x->coll < y->coll ? -1 : 1;
    if (x->bytes != y->bytes) return x->bytes < y->bytes ? -1 : 1;
    unsigned ix = (unsigned)x->impl, iy = (unsigned)y->impl; /* MG_TUNE_NATIVE sorts last */
    return ix < iy ? -1 : ix > iy;
}

int mg_tune_write_report(FILE *out)
{
    if (!out) return MG_TUNE_ERR_ARG;
    mg_tune__ensure_configured();
    mg_tune_state *g = &mg_tune_g;
    mg_tune__lock();
    size_t n = 0;
    mg_tune_counter *rows = g->ncounters ? malloc(g->ncounters * sizeof *rows) : NULL;
    if (g->ncounters && !rows) {
        mg_tune__unlock();
        return MG_TUNE_ERR_NOMEM;
    }
    for (size_t i = 0; i < g->cap_counters; i++)
        if (g->counters[i].calls) rows[n++] = g->counters[i];
    mg_tune_config cfg = g->cfg;
    mg_tune__unlock();
    if (n > 1) qsort(rows, n, sizeof *rows, by_report_order);
    static const char *const modes[] = {"off", "forced", "tuned"};
    for (size_t i = 0; i < n; i++)
        fprintf(out, "#@tune_alg[%s %lld %s]=%llu\n", mg_tune__table((mg_coll)rows[i].coll)->mpi_name,
                (long long)rows[i].bytes, mg_tune__impl_label((mg_coll)rows[i].coll, rows[i].impl),
                (unsigned long long)rows[i].calls);
    free(rows);
    fprintf(out, "#@tune_config[msg_pool_bytes]=%zu\n", cfg.msg_pool_bytes);
    fprintf(out, "#@tune_config[int_pool_bytes]=%zu\n", cfg.int_pool_bytes);
    fprintf(out, "#@tune_config[mode]=%s\n", modes[cfg.mode]);
    fprintf(out, "#@tune_config[chunk]=%lld\n", (long long)cfg.chunk);
    if (fflush(out) != 0 || ferror(out)) return MG_TUNE_ERR_ARG;
    return MG_TUNE_SUCCESS;
}
