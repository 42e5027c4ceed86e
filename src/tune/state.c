/* The library's state (one struct), its lock, warnings, names, start and stop
 * at MPI_Init/MPI_Finalize, and the public control API of mpiguide/tune.h. */
#define _POSIX_C_SOURCE 200809L
#include "tune_state.h"
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

mg_tune_state mg_tune_g = {
    .mu = PTHREAD_MUTEX_INITIALIZER,
    .warn_mu = PTHREAD_MUTEX_INITIALIZER,
    .world_rank = -1,
    .thread_level = MPI_THREAD_SINGLE,
    .count_override = -1,
};

void mg_tune__lock(void) { pthread_mutex_lock(&mg_tune_g.mu); }
void mg_tune__unlock(void) { pthread_mutex_unlock(&mg_tune_g.mu); }

/* ---- warnings ---- */

static void print_warning(const mg_tune_warning *w, int rank)
{
    FILE *out = mg_tune_g.warn_out ? mg_tune_g.warn_out : stderr;
    if (w->local)
        fprintf(out, "mpiguide-tune: warning: rank %d: %s\n", rank, w->text);
    else
        fprintf(out, "mpiguide-tune: warning: %s\n", w->text);
    fflush(out);
}

static void vwarn(int local, const char *fmt, va_list ap)
{
    mg_tune_state *g = &mg_tune_g;
    char text[2048];
    vsnprintf(text, sizeof text, fmt, ap);
    pthread_mutex_lock(&g->warn_mu);
    for (int i = 0; i < g->nwarnings; i++)
        if (g->warnings[i].local == local && strcmp(g->warnings[i].text, text) == 0) {
            pthread_mutex_unlock(&g->warn_mu);
            return;
        }
    mg_tune_warning w = {strdup(text), 0, local};
    if (g->nwarnings == g->cap_warnings) {
        int cap = g->cap_warnings ? 2 * g->cap_warnings : 8;
        mg_tune_warning *n = realloc(g->warnings, (size_t)cap * sizeof *n);
        if (n) {
            g->warnings = n;
            g->cap_warnings = cap;
        }
    }
    if (g->world_rank >= 0) {
        if (g->world_rank == 0 || local) print_warning(&(mg_tune_warning){text, 1, local}, g->world_rank);
        w.printed = 1;
    }
    if (w.text && g->nwarnings < g->cap_warnings) {
        g->warnings[g->nwarnings++] = w;
    } else {
        if (!w.printed) print_warning(&(mg_tune_warning){text, 1, local}, 0); /* out of memory: now, not never */
        free(w.text);
    }
    pthread_mutex_unlock(&g->warn_mu);
}

void mg_tune__warn(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vwarn(0, fmt, ap);
    va_end(ap);
}

void mg_tune__warn_local(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vwarn(1, fmt, ap);
    va_end(ap);
}

void mg_tune__warnings_start(int world_rank)
{
    mg_tune_state *g = &mg_tune_g;
    pthread_mutex_lock(&g->warn_mu);
    g->world_rank = world_rank;
    for (int i = 0; i < g->nwarnings; i++) {
        mg_tune_warning *w = &g->warnings[i];
        if (!w->printed && (world_rank == 0 || w->local)) print_warning(w, world_rank);
        w->printed = 1;
    }
    pthread_mutex_unlock(&g->warn_mu);
}

void mg_tune__warnings_free(void)
{
    mg_tune_state *g = &mg_tune_g;
    pthread_mutex_lock(&g->warn_mu);
    for (int i = 0; i < g->nwarnings; i++) free(g->warnings[i].text);
    free(g->warnings);
    g->warnings = NULL;
    g->nwarnings = g->cap_warnings = 0;
    pthread_mutex_unlock(&g->warn_mu);
}

void mg_tune__set_warning_stream(FILE *out)
{
    pthread_mutex_lock(&mg_tune_g.warn_mu);
    mg_tune_g.warn_out = out;
    pthread_mutex_unlock(&mg_tune_g.warn_mu);
}

/* ---- names ---- */

static const mg_coll_mockups *const tables[MG_NCOLLS] = {
    [MG_COLL_ALLGATHER] = &mg_allgather_mockups,
    [MG_COLL_ALLREDUCE] = &mg_allreduce_mockups,
    [MG_COLL_ALLTOALL] = &mg_alltoall_mockups,
    [MG_COLL_BCAST] = &mg_bcast_mockups,
    [MG_COLL_GATHER] = &mg_gather_mockups,
    [MG_COLL_REDUCE] = &mg_reduce_mockups,
    [MG_COLL_REDUCE_SCATTER_BLOCK] = &mg_reduce_scatter_block_mockups,
    [MG_COLL_SCAN] = &mg_scan_mockups,
    [MG_COLL_SCATTER] = &mg_scatter_mockups,
};

const mg_coll_mockups *mg_tune__table(mg_coll coll) { return (int)coll >= 0 && coll < MG_NCOLLS ? tables[coll] : NULL; }

int mg_tune__coll_index(const char *name)
{
    if (!name) return -1;
    for (int i = 0; i < MG_NCOLLS; i++)
        if (strcmp(name, tables[i]->name) == 0 || strcasecmp(name, tables[i]->mpi_name) == 0) return i;
    return -1;
}

int mg_tune__impl_index(mg_coll coll, const char *name)
{
    const mg_coll_mockups *t = mg_tune__table(coll);
    if (!t || !name) return -1;
    if (strcmp(name, "default") == 0) return 0;
    for (int i = 0; i < t->nmockups; i++)
        if (strcmp(name, t->mockups[i].name) == 0) return i + 1;
    return -1;
}

const char *mg_tune__impl_label(mg_coll coll, int impl)
{
    const mg_coll_mockups *t = mg_tune__table(coll);
    if (impl == MG_TUNE_NATIVE) return "native";
    if (impl == 0 || !t || impl > t->nmockups) return "default";
    return t->mockups[impl - 1].name;
}

static void append(char *buf, size_t len, size_t *at, const char *s)
{
    int n = snprintf(buf + *at, len - *at, "%s%s", *at ? ", " : "", s);
    if (n > 0) *at = *at + (size_t)n < len ? *at + (size_t)n : len - 1;
}

const char *mg_tune__impl_list(mg_coll coll, char *buf, size_t len)
{
    const mg_coll_mockups *t = mg_tune__table(coll);
    size_t at = 0;
    buf[0] = '\0';
    append(buf, len, &at, "default");
    for (int i = 0; t && i < t->nmockups; i++) append(buf, len, &at, t->mockups[i].name);
    return buf;
}

const char *mg_tune__coll_list(char *buf, size_t len)
{
    size_t at = 0;
    buf[0] = '\0';
    for (int i = 0; i < MG_NCOLLS; i++) append(buf, len, &at, tables[i]->name);
    return buf;
}

/* ---- the hot fields, the profiles ---- */

void mg_tune__publish(void)
{
    mg_tune_state *g = &mg_tune_g;
    for (int c = 0; c < MG_NCOLLS; c++)
        atomic_store_explicit(&g->hot_forced[c], g->cfg.forced[c], memory_order_relaxed);
    atomic_store_explicit(&g->hot_msg_cap, g->cfg.msg_pool_bytes, memory_order_relaxed);
    atomic_store_explicit(&g->hot_int_cap, g->cfg.int_pool_bytes, memory_order_relaxed);
    int count = g->count_override >= 0 ? g->count_override : g->cfg.report != NULL || g->api_used;
    unsigned h =
        (g->initialized ? MG_HOT_ON : 0u) | (count ? MG_HOT_COUNT : 0u) | ((unsigned)g->cfg.mode << MG_HOT_MODE_SHIFT);
    atomic_store_explicit(&g->hot, h, memory_order_release);
}

void mg_tune__set_counting(int mode)
{
    mg_tune__lock();
    mg_tune_g.count_override = mode < 0 ? -1 : mode > 0;
    mg_tune__publish();
    mg_tune__unlock();
}

/* A published set of profiles (NULL: out of memory). Takes ps over. */
static mg_tune_live *live_new(mg_tune_profiles *ps)
{
    mg_tune_live *l = calloc(1, sizeof *l);
    if (!l) {
        mg_tune__profiles_free(ps);
        return NULL;
    }
    l->ps = *ps;
    for (int i = 0; i < ps->n; i++) l->coll_mask |= 1u << ps->p[i].coll;
    return l;
}

/* mu held: makes l the profiles of the hot path; the previous set is retired
 * (freed at MPI_Finalize: another thread may still read it). */
static void live_replace(mg_tune_live *l)
{
    mg_tune_state *g = &mg_tune_g;
    mg_tune_live *old = atomic_exchange_explicit(&g->live, l, memory_order_acq_rel);
    if (old) {
        old->retired_next = g->retired;
        g->retired = old;
    }
}

/* mu held, no call running: frees every set. */
static void live_free_all(void)
{
    mg_tune_state *g = &mg_tune_g;
    live_replace(NULL);
    while (g->retired) {
        mg_tune_live *n = g->retired->retired_next;
        mg_tune__profiles_free(&g->retired->ps);
        free(g->retired);
        g->retired = n;
    }
}

/* ---- configuration, start, stop ---- */

/* mu held. */
static void configure_locked(void)
{
    mg_tune_state *g = &mg_tune_g;
    mg_tune__config_free(&g->cfg);
    mg_tune__config_read(&g->cfg);
    live_replace(NULL);
    if (g->cfg.profiles) {
        int nbad = 0;
        mg_tune_profiles ps;
        int rc = mg_tune__profiles_load(g->cfg.profiles, &ps, &nbad);
        mg_tune_live *l = rc == MG_TUNE_ERR_NOMEM ? NULL : live_new(&ps);
        if (rc == MG_TUNE_ERR_NOMEM || !l)
            mg_tune__warn_local("out of memory while loading the profiles of %s; tuned mode runs natively",
                                g->cfg.profiles);
        live_replace(l);
    }
    g->configured = 1;
    mg_tune__publish();
}

void mg_tune__ensure_configured(void)
{
    mg_tune__lock();
    if (!mg_tune_g.configured) configure_locked();
    mg_tune__unlock();
}

void mg_tune__start(void)
{
    mg_tune_state *g = &mg_tune_g;
    int rank = 0, level = MPI_THREAD_SINGLE;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    PMPI_Query_thread(&level);
    mg_tune__warnings_start(rank);
    mg_tune__lock();
    if (!g->configured) configure_locked();
    g->thread_level = level;
    mg_tune__pools_alloc(g->cfg.msg_pool_bytes, g->cfg.int_pool_bytes);
    mg_tune__counters_reset();
    g->initialized = 1;
    mg_tune__publish();
    mg_tune__unlock();
}

void mg_tune__stop(void)
{
    mg_tune_state *g = &mg_tune_g;
    mg_tune__lock();
    int was = g->initialized;
    char *report = g->cfg.report ? strdup(g->cfg.report) : NULL;
    mg_tune__unlock();
    if (was && report) {
        int rank = 0;
        PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
        if (rank == 0) {
            int to_stderr = strcmp(report, "-") == 0;
            FILE *out = to_stderr ? stderr : fopen(report, "a");
            if (!out)
                mg_tune__warn_local("report file %s (MPIGUIDE_TUNE_REPORT / report): cannot open it (%s); no report "
                                    "written",
                                    report, strerror(errno));
            else {
                if (mg_tune_write_report(out) != MG_TUNE_SUCCESS)
                    mg_tune__warn_local("report file %s: writing failed", report);
                if (!to_stderr && fclose(out) != 0) mg_tune__warn_local("report file %s: writing failed", report);
            }
        }
    }
    free(report);
    mg_tune__lock();
    g->initialized = 0;
    mg_tune__publish();
    mg_tune__pools_free();
    live_free_all();
    mg_tune__counters_reset();
    free(g->counters);
    g->counters = NULL;
    g->cap_counters = 0;
    free(g->cfg.profiles);
    free(g->cfg.report);
    g->cfg.profiles = g->cfg.report = NULL;
    mg_tune__unlock();
    mg_tune__warnings_free();
}

int mg_tune__lookup(mg_coll coll, int procs, MPI_Count bytes)
{
    const mg_tune_live *l = atomic_load_explicit(&mg_tune_g.live, memory_order_acquire);
    return l ? mg_tune__profiles_find(&l->ps, coll, procs, bytes) : -1;
}

int mg_tune__has_profile(mg_coll coll, int procs)
{
    const mg_tune_live *l = atomic_load_explicit(&mg_tune_g.live, memory_order_acquire);
    if (!l || !(l->coll_mask >> coll & 1u)) return 0;
    int lo = 0, hi = l->ps.n - 1;
    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2;
        const mg_tune_profile *m = &l->ps.p[mid];
        if (m->coll == coll && m->procs == procs) return 1;
        if (m->coll < coll || (m->coll == coll && m->procs < procs))
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return 0;
}

MPI_Count mg_tune_chunk(void)
{
    mg_tune__ensure_configured();
    mg_tune__lock();
    MPI_Count c = mg_tune_g.cfg.chunk;
    mg_tune__unlock();
    return c;
}

/* ---- public API ---- */

/* Lower-case names only in the public API. */
static int public_coll(const char *name)
{
    if (!name) return -1;
    for (int i = 0; i < MG_NCOLLS; i++)
        if (strcmp(name, tables[i]->name) == 0) return i;
    return -1;
}

int mg_tune_set_mode(mg_tune_mode mode)
{
    if (mode != MG_TUNE_OFF && mode != MG_TUNE_FORCED && mode != MG_TUNE_TUNED) return MG_TUNE_ERR_ARG;
    mg_tune__ensure_configured();
    mg_tune__lock();
    mg_tune_g.cfg.mode = mode;
    mg_tune_g.api_used = 1;
    mg_tune__publish();
    mg_tune__unlock();
    return MG_TUNE_SUCCESS;
}

mg_tune_mode mg_tune_get_mode(void)
{
    mg_tune__ensure_configured();
    mg_tune__lock();
    mg_tune_mode m = mg_tune_g.cfg.mode;
    mg_tune__unlock();
    return m;
}

int mg_tune_force(const char *collective, const char *impl)
{
    int c = public_coll(collective);
    if (c < 0) return MG_TUNE_ERR_ARG;
    int i = mg_tune__impl_index((mg_coll)c, impl);
    if (i < 0) return MG_TUNE_ERR_ARG;
    mg_tune__ensure_configured();
    mg_tune__lock();
    mg_tune_g.cfg.forced[c] = i;
    mg_tune_g.api_used = 1;
    mg_tune__publish();
    mg_tune__unlock();
    return MG_TUNE_SUCCESS;
}

int mg_tune_load_profiles(const char *dir)
{
    if (!dir) return MG_TUNE_ERR_ARG;
    mg_tune__ensure_configured();
    mg_tune_profiles ps = {0, NULL};
    int nbad = 0, rc = mg_tune__profiles_load(dir, &ps, &nbad);
    mg_tune_live *l = live_new(&ps);
    if (!l && rc == MG_TUNE_SUCCESS) rc = MG_TUNE_ERR_NOMEM;
    mg_tune__lock();
    live_replace(l);
    mg_tune_g.api_used = 1;
    mg_tune__publish();
    mg_tune__unlock();
    if (rc != MG_TUNE_SUCCESS) return rc;
    return nbad ? MG_TUNE_ERR_PROFILE : MG_TUNE_SUCCESS;
}

int mg_tune_ncollectives(void) { return MG_NCOLLS; }

const char *mg_tune_collective_name(int i) { return i >= 0 && i < MG_NCOLLS ? tables[i]->name : NULL; }

int mg_tune_nimpls(const char *collective)
{
    int c = public_coll(collective);
    return c < 0 ? -1 : 1 + tables[c]->nmockups;
}

const char *mg_tune_impl_name(const char *collective, int i)
{
    int c = public_coll(collective);
    if (c < 0 || i < 0 || i > tables[c]->nmockups) return NULL;
    return i == 0 ? "default" : tables[c]->mockups[i - 1].name;
}

int mg_tune_impl_guideline(const char *collective, int i)
{
    int c = public_coll(collective);
    if (c < 0 || i < 0 || i > tables[c]->nmockups) return -1;
    return i == 0 ? 0 : tables[c]->mockups[i - 1].guideline;
}

const char *mg_tune_impl_formula(const char *collective, int i)
{
    int c = public_coll(collective);
    if (c < 0 || i < 0 || i > tables[c]->nmockups) return NULL;
    return i == 0 ? tables[c]->mpi_name : tables[c]->mockups[i - 1].formula;
}

const char *mg_tune_strerror(int code)
{
    switch (code) {
    case MG_TUNE_SUCCESS: return "success";
    case MG_TUNE_ERR_ARG:
        return "bad argument: unknown collective or implementation, bad mode, or a stream that cannot be written";
    case MG_TUNE_ERR_PROFILE: return "a profile or configuration file could not be used (see the warning)";
    case MG_TUNE_ERR_NOMEM: return "out of memory";
    default: return "unknown mg_tune error code";
    }
}
