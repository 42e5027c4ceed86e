/* The lifecycle: the configuration in force and the profiles in use, read once
 * (at MPI_Init or at the first call of the control API), changed by the control
 * API, and published as hot words after every change; start at MPI_Init, stop
 * at MPI_Finalize (report, free). */
#define _POSIX_C_SOURCE 200809L
#include "lifecycle.h"
#include "types.h"
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

mg_tune_hot_words mg_tune_hot;

static struct {
    pthread_mutex_t mu;
    int configured;   /* the configuration has been read (first API call or MPI_Init) */
    int initialized;  /* between our MPI_Init and MPI_Finalize */
    int thread_level; /* provided by MPI_Init(_thread) */
    mg_tune_config cfg;
    mg_tune_live *retired; /* replaced profile sets, freed at MPI_Finalize */
    int api_used;          /* the control API changed mode, force or profiles */
    int count_override;    /* -1: automatic (report set or api_used), 0: never count, 1: always */
    int record_done;       /* MPI_Finalize has ended record mode */
    int record_override;   /* -1: record when a record file is configured, 0: never, 1: always */
} life = {.mu = PTHREAD_MUTEX_INITIALIZER, .thread_level = MPI_THREAD_SINGLE, .count_override = -1,
          .record_override = -1};

static void lock(void) { pthread_mutex_lock(&life.mu); }
static void unlock(void) { pthread_mutex_unlock(&life.mu); }

/* mu held: copies the configuration into the hot words. Calls are counted when
 * a report file is configured or the control API has changed mode, force or
 * profiles (a program linked with the library may call mg_tune_write_report at
 * any time), unless overridden (mg_tune__set_counting). */
static void publish(void)
{
    for (int c = 0; c < MG_NCOLLS; c++)
        atomic_store_explicit(&mg_tune_hot.forced[c], life.cfg.forced[c], memory_order_relaxed);
    atomic_store_explicit(&mg_tune_hot.dt_forced, (int)life.cfg.dt_forced, memory_order_relaxed);
    atomic_store_explicit(&mg_tune_hot.msg_cap, life.cfg.msg_pool_bytes, memory_order_relaxed);
    atomic_store_explicit(&mg_tune_hot.int_cap, life.cfg.int_pool_bytes, memory_order_relaxed);
    atomic_store_explicit(&mg_tune_hot.chunk, (int)life.cfg.chunk, memory_order_relaxed);
    atomic_store_explicit(&mg_tune_hot.regroup, life.cfg.allow_regrouping, memory_order_relaxed);
    mg_tune__types_set_form(life.cfg.dt_form);
    int count = life.count_override >= 0 ? life.count_override : life.cfg.report != NULL || life.api_used;
    int record = life.initialized && !life.record_done &&
                 (life.record_override >= 0 ? life.record_override : life.cfg.record != NULL);
    unsigned h = (life.initialized ? MG_HOT_ON : 0u) | (count ? MG_HOT_COUNT : 0u) | (record ? MG_HOT_RECORD : 0u) |
                 ((unsigned)life.cfg.mode << MG_HOT_MODE_SHIFT);
    atomic_store_explicit(&mg_tune_hot.word, h, memory_order_release);
}

/* ---- the profiles in use ---- */

/* A set of profiles ready to publish (NULL: out of memory). Takes ps over. */
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
    mg_tune_live *old = atomic_exchange_explicit(&mg_tune_hot.live, l, memory_order_acq_rel);
    if (old) {
        old->retired_next = life.retired;
        life.retired = old;
    }
}

/* mu held, no call running: frees every set. */
static void live_free_all(void)
{
    live_replace(NULL);
    while (life.retired) {
        mg_tune_live *n = life.retired->retired_next;
        mg_tune__profiles_free(&life.retired->ps);
        free(life.retired);
        life.retired = n;
    }
}

int mg_tune__lookup(mg_coll coll, int procs, MPI_Count bytes)
{
    const mg_tune_live *l = atomic_load_explicit(&mg_tune_hot.live, memory_order_acquire);
    const mg_tune_profile *p = l ? mg_tune__profiles_get(&l->ps, coll, procs) : NULL;
    return p ? mg_tune__profile_impl(p, bytes) : -1;
}

/* ---- configuration, start, stop ---- */

/* mu held: the profiles of the configured directory, if any, in use. */
static void use_configured_profiles(void)
{
    live_replace(NULL);
    if (!life.cfg.profiles) return;
    int nbad = 0;
    mg_tune_profiles ps;
    int rc = mg_tune__profiles_load(life.cfg.profiles, &ps, &nbad);
    mg_tune_live *l = rc == MG_TUNE_ERR_NOMEM ? NULL : live_new(&ps);
    if (!l)
        mg_tune__warn_local("out of memory while loading the profiles of %s; tuned mode runs natively",
                            life.cfg.profiles);
    live_replace(l);
}

/* mu held. */
static void configure_locked(void)
{
    mg_tune__config_free(&life.cfg);
    mg_tune__config_read(&life.cfg);
    use_configured_profiles();
    life.configured = 1;
    publish();
}

void mg_tune__ensure_configured(void)
{
    lock();
    if (!life.configured) configure_locked();
    unlock();
}

void mg_tune__start(void)
{
    int rank = 0, level = MPI_THREAD_SINGLE;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    PMPI_Query_thread(&level);
    mg_tune__warnings_start(rank);
    lock();
    if (!life.configured) configure_locked();
    life.thread_level = level;
    mg_tune__pools_alloc(life.cfg.msg_pool_bytes, life.cfg.int_pool_bytes);
    mg_tune__counters_reset();
    life.initialized = 1;
    life.record_done = 0;
    publish();
    unlock();
}

/* path with each "%r" replaced by rank (malloc'd; NULL without memory). */
static char *rank_path(const char *path, int rank)
{
    size_t n = 1;
    for (const char *c = path; *c; c++) n += c[0] == '%' && c[1] == 'r' ? 11 : 1; /* (an int's digits) */
    char *out = malloc(n), *o = out;
    if (!out) return NULL;
    for (const char *c = path; *c; c++) {
        if (c[0] == '%' && c[1] == 'r')
            o += sprintf(o, "%d", rank), c++;
        else
            *o++ = *c;
    }
    *o = 0;
    return out;
}

/* Rank 0 of MPI_COMM_WORLD appends the report to the file (stderr for "-"); a path with "%r" is every
 * rank's, with its rank there (online mode's datatype keys are each rank's own). */
static void write_report_file(const char *configured)
{
    int rank = 0;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int per_rank = strstr(configured, "%r") != NULL;
    if (rank != 0 && !per_rank) return;
    char *own = per_rank ? rank_path(configured, rank) : NULL;
    if (per_rank && !own) {
        mg_tune__warn_local("report file %s (MPIGUIDE_TUNE_REPORT / report): out of memory; no report written",
                            configured);
        return;
    }
    const char *path = per_rank ? own : configured;
    int to_stderr = strcmp(path, "-") == 0;
    FILE *out = to_stderr ? stderr : fopen(path, "a");
    if (!out) {
        mg_tune__warn_local("report file %s (MPIGUIDE_TUNE_REPORT / report): cannot open it (%s); no report written",
                            path, strerror(errno));
    } else {
        if (mg_tune__report(out) != MG_TUNE_SUCCESS) mg_tune__warn_local("report file %s: writing failed", path);
        if (!to_stderr && fclose(out) != 0) mg_tune__warn_local("report file %s: writing failed", path);
    }
    free(own);
}

void mg_tune__stop(void)
{
    lock();
    int was = life.initialized;
    char *report = life.cfg.report ? strdup(life.cfg.report) : NULL;
    unlock();
    if (was && report) write_report_file(report);
    free(report);
    lock();
    life.initialized = 0;
    publish();
    mg_tune__pools_free();
    live_free_all();
    mg_tune__counters_free();
    free(life.cfg.profiles);
    free(life.cfg.report);
    free(life.cfg.record);
    life.cfg.profiles = life.cfg.report = life.cfg.record = NULL;
    unlock();
    mg_tune__warnings_free();
}

char *mg_tune__record_path(void)
{
    lock();
    char *path = life.initialized && life.cfg.record ? strdup(life.cfg.record) : NULL;
    unlock();
    return path;
}

void mg_tune__record_off(void)
{
    lock();
    life.record_done = 1;
    publish();
    unlock();
}

/* ---- the control API's changes ---- */

void mg_tune__set_mode(mg_tune_mode mode)
{
    mg_tune__ensure_configured();
    lock();
    life.cfg.mode = mode;
    life.api_used = 1;
    publish();
    unlock();
}

mg_tune_mode mg_tune__mode(void)
{
    mg_tune__ensure_configured();
    lock();
    mg_tune_mode m = life.cfg.mode;
    unlock();
    return m;
}

void mg_tune__set_forced(mg_coll coll, int impl)
{
    mg_tune__ensure_configured();
    lock();
    life.cfg.forced[coll] = impl;
    life.api_used = 1;
    publish();
    unlock();
}

void mg_tune__set_dt_forced(mg_dts strategy)
{
    mg_tune__ensure_configured();
    lock();
    life.cfg.dt_forced = strategy;
    life.api_used = 1;
    publish();
    unlock();
}

int mg_tune__use_profiles(const char *dir)
{
    mg_tune__ensure_configured();
    mg_tune_profiles ps = {0};
    int nbad = 0, rc = mg_tune__profiles_load(dir, &ps, &nbad);
    mg_tune_live *l = live_new(&ps);
    if (!l && rc == MG_TUNE_SUCCESS) rc = MG_TUNE_ERR_NOMEM;
    lock();
    live_replace(l);
    life.api_used = 1;
    publish();
    unlock();
    if (rc != MG_TUNE_SUCCESS) return rc;
    return nbad ? MG_TUNE_ERR_PROFILE : MG_TUNE_SUCCESS;
}

void mg_tune__set_counting(int mode)
{
    lock();
    life.count_override = mode < 0 ? -1 : mode > 0;
    publish();
    unlock();
}

void mg_tune__set_recording(int mode)
{
    lock();
    life.record_override = mode < 0 ? -1 : mode > 0;
    publish();
    unlock();
}

int mg_tune__report(FILE *out)
{
    mg_tune__ensure_configured();
    lock();
    mg_tune_config cfg = life.cfg; /* only its numbers are used */
    unlock();
    return mg_tune__report_write(out, &cfg);
}

/* ---- tests ---- */

void mg_tune__config_in_force(mg_tune_config *out)
{
    mg_tune__ensure_configured();
    lock();
    *out = life.cfg;
    unlock();
}

void mg_tune__set_report_file(const char *path)
{
    mg_tune__ensure_configured();
    lock();
    free(life.cfg.report);
    life.cfg.report = path ? strdup(path) : NULL;
    publish();
    unlock();
}
