/* libmpiguide-tune: the library's state (one struct, mg_tune_g) and the
 * functions its files share: state.c (locking, warnings, names, public API),
 * config.c (environment and configuration file), profile.c (profiles),
 * report.c (usage counters and report), pool.c (pools and leases),
 * intercept.c (MPI_ entry points). Mock-ups do not include this file: their
 * contract is tune_internal.h. Every .c file defines _POSIX_C_SOURCE first. */
#ifndef MG_TUNE_STATE_H
#define MG_TUNE_STATE_H

#include "defaults.h"
#include "mpiguide/tune.h"
#include "tune_internal.h"
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>

/* Implementation indices: 0 is "default" (the native call by choice), k >= 1 is
 * mock-up k - 1 of the collective's table, MG_TUNE_NATIVE the native call as a
 * fallback (a mock-up was chosen but does not apply, or memory is short). */
#define MG_TUNE_NATIVE (-1)


/* One message range of a profile: inclusive byte range of mg_call.bytes. */
typedef struct {
    MPI_Count from, to;
    int impl; /* 0 = default, k = mock-up k - 1 */
    int line; /* where it was read (for messages) */
} mg_tune_range;

/* The profile of one (collective, communicator size): ranges sorted by `from`, disjoint. */
typedef struct {
    mg_coll coll;
    int procs;
    int procs_line; /* where procs was read (for messages) */
    int nranges;
    mg_tune_range *ranges;
    char *path;
} mg_tune_profile;

/* All loaded profiles, sorted by (coll, procs), at most one per pair. */
typedef struct {
    int n;
    mg_tune_profile *p;
} mg_tune_profiles;

/* A loaded set of profiles as the hot path sees it: immutable once published.
 * A set that is replaced (mg_tune_load_profiles) is kept on a list until
 * MPI_Finalize, because a call in another thread may still be reading it. */
typedef struct mg_tune_live {
    mg_tune_profiles ps;
    unsigned coll_mask; /* bit c: some profile of collective c exists */
    struct mg_tune_live *retired_next;
} mg_tune_live;

/* The hot word (mg_tune_state.hot): what every intercepted call reads first. */
#define MG_HOT_ON         1u /* between our MPI_Init and MPI_Finalize */
#define MG_HOT_COUNT      2u /* count the calls (a report is requested) */
#define MG_HOT_MODE_SHIFT 2
#define MG_HOT_MODE(h)    ((mg_tune_mode)(((h) >> MG_HOT_MODE_SHIFT) & 3u))

/* The configuration: defaults, then the configuration file, then the environment. */
typedef struct {
    mg_tune_mode mode;
    int forced[MG_NCOLLS]; /* implementation index per collective (forced mode) */
    char *profiles;        /* directory or NULL */
    size_t msg_pool_bytes; /* pool capacities: the need-vs-capacity rule uses these */
    size_t int_pool_bytes;
    MPI_Count chunk; /* C of the chunked round-robin mock-ups, elements */
    char *report;    /* report file at MPI_Finalize, "-" = stderr, or NULL */
} mg_tune_config;

/* A lease (tune_internal.h). The lease that holds the pools lives in the state;
 * malloc-mode leases are malloc'ed. */
struct mg_lease {
    int pooled; /* holds the pools */
    size_t msg_used, int_used;
    void **extra; /* malloc'ed pieces, freed at release */
    size_t nextra, cap_extra;
};

/* One usage counter: calls of a collective with a message size that ran an implementation. */
typedef struct {
    uint64_t calls; /* 0: empty slot */
    MPI_Count bytes;
    int coll;
    int impl; /* as above, MG_TUNE_NATIVE included */
} mg_tune_counter;

typedef struct {
    char *text;
    int printed;
    int local; /* a rank-local problem: printed on any rank */
} mg_tune_warning;

typedef struct {
    /* The hot path (intercept.c) reads only these, without the lock: copies of
     * the fields below, written under mu by mg_tune__publish after every
     * change. Relaxed/acquire atomics: a call that races with a change sees
     * the old or the new value of each, never a torn one. */
    _Atomic unsigned hot;                    /* MG_HOT_ON | MG_HOT_COUNT | mode << MG_HOT_MODE_SHIFT */
    _Atomic int hot_forced[MG_NCOLLS];       /* cfg.forced */
    _Atomic size_t hot_msg_cap, hot_int_cap; /* cfg.msg_pool_bytes, cfg.int_pool_bytes */
    _Atomic(mg_tune_live *) live;            /* the profiles (NULL: none); replaced, never changed */

    pthread_mutex_t mu; /* everything below but the warnings */
    int configured;     /* the configuration has been read (first API call or MPI_Init) */
    int initialized;    /* between our MPI_Init and MPI_Finalize */
    int thread_level;   /* provided by MPI_Init(_thread) */
    mg_tune_config cfg;
    mg_tune_live *retired; /* replaced profile sets, freed at MPI_Finalize */
    int api_used;          /* the control API changed mode, force or profiles */
    int count_override;    /* -1: automatic (report set or api_used), 0: never count, 1: always */
    /* pools: allocated at MPI_Init with the configured sizes (NULL if 0 or failed) */
    unsigned char *msg_pool, *int_pool;
    size_t msg_pool_size, int_pool_size;
    int pool_leased;
    struct mg_lease pool_lease;
    /* usage counters: open addressing, keyed by (coll, bytes, impl) */
    mg_tune_counter *counters;
    size_t ncounters, cap_counters;

    pthread_mutex_t warn_mu; /* the warnings (taken after mu, never before) */
    int world_rank;          /* -1 before MPI_Init: warnings wait for it */
    mg_tune_warning *warnings;
    int nwarnings, cap_warnings;
    FILE *warn_out; /* NULL: stderr */
} mg_tune_state;

extern mg_tune_state mg_tune_g;

/* state.c */
void mg_tune__lock(void);
void mg_tune__unlock(void);
/* Reads the configuration (file, environment) and the profiles once. */
void mg_tune__ensure_configured(void);
/* "mpiguide-tune: warning: <text>", once per distinct text, on rank 0 of
 * MPI_COMM_WORLD (before MPI_Init: kept and printed by rank 0 at MPI_Init).
 * Callers may hold mu. */
void mg_tune__warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The same for a problem of this process only (printed on any rank, with its rank). */
void mg_tune__warn_local(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* At MPI_Init: the rank is known, kept warnings are printed. */
void mg_tune__warnings_start(int world_rank);
void mg_tune__warnings_free(void);
/* Tests: where warnings go (NULL: stderr). */
void mg_tune__set_warning_stream(FILE *out);

const mg_coll_mockups *mg_tune__table(mg_coll coll);
/* Collective by lower-case name ("allgather") or MPI name ("MPI_Allgather"); -1 if unknown. */
int mg_tune__coll_index(const char *name);
/* Implementation index of a name for a collective ("default" = 0); -1 if unknown. */
int mg_tune__impl_index(mg_coll coll, const char *name);
/* "default", the mock-up's name or "native". */
const char *mg_tune__impl_label(mg_coll coll, int impl);
/* "default, a, b" into buf (for messages). */
const char *mg_tune__impl_list(mg_coll coll, char *buf, size_t len);
const char *mg_tune__coll_list(char *buf, size_t len);
/* MPI_Init / MPI_Finalize: configure, allocate the pools, start; report, free. */
void mg_tune__start(void);
void mg_tune__stop(void);
/* Tuned-mode choice for (coll, procs, bytes): implementation index of the
 * covering range, -1 if no profile or no range covers bytes. Lock-free. */
int mg_tune__lookup(mg_coll coll, int procs, MPI_Count bytes);
/* 1 if a profile of (coll, procs) is loaded. Lock-free. */
int mg_tune__has_profile(mg_coll coll, int procs);
/* mu held: copies the configuration into the hot fields. Calls are counted
 * (for the report) when a report file is configured or the control API has
 * changed mode, force or profiles (a program linked with the library may call
 * mg_tune_write_report at any time), unless overridden below. */
void mg_tune__publish(void);
/* Counting override (benchmarks, tests): -1 automatic (above), 0 never, 1 always. */
void mg_tune__set_counting(int mode);

/* config.c */
void mg_tune__config_defaults(mg_tune_config *cfg);
/* Defaults, then MPIGUIDE_TUNE_CONFIG's file, then the other MPIGUIDE_TUNE_*
 * variables; each problem is warned about (file:line) and skipped. Returns the
 * number of problems. */
int mg_tune__config_read(mg_tune_config *cfg);
void mg_tune__config_free(mg_tune_config *cfg);
/* "allgather=allgather_as_gather_bcast,bcast=default" into forced[]; `where`
 * names the source in warnings. Returns the number of bad entries. */
int mg_tune__parse_force(const char *spec, int *forced, const char *where);
/* Sizes: a number with an optional suffix k, M, G (KiB, MiB, GiB; "64M",
 * "64MiB", "256k"). 0 on success. */
int mg_tune__parse_size(const char *s, size_t *out);

/* profile.c */
/* Parses one profile file (either format); on a problem warns once
 * ("FILE:LINE: ...; this profile is ignored") and returns -1. */
int mg_tune__profile_parse(const char *path, mg_tune_profile *out);
void mg_tune__profile_free(mg_tune_profile *p);
/* Every *.prof and *.prf file of dir (sorted by name). Malformed files and
 * second profiles of the same (collective, size) are skipped with a warning and
 * counted in *nbad. MG_TUNE_ERR_PROFILE if dir cannot be read, MG_TUNE_ERR_NOMEM. */
int mg_tune__profiles_load(const char *dir, mg_tune_profiles *out, int *nbad);
void mg_tune__profiles_free(mg_tune_profiles *ps);
/* O(log n) look-up as mg_tune__lookup, on a given set (no locking). */
int mg_tune__profiles_find(const mg_tune_profiles *ps, mg_coll coll, int procs, MPI_Count bytes);

/* report.c */
/* Counts one call (locks; called only when MG_HOT_COUNT is set). */
void mg_tune__count(mg_coll coll, MPI_Count bytes, int impl);
/* Calls counted for (coll, bytes, impl) (locks; tests). */
uint64_t mg_tune__counted(mg_coll coll, MPI_Count bytes, int impl);
void mg_tune__counters_reset(void); /* mu held */

/* pool.c (mu held) */
void mg_tune__pools_alloc(size_t msg_bytes, size_t int_bytes);
void mg_tune__pools_free(void);

#endif
