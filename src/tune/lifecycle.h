/* The lifecycle layer of libmpiguide-tune (tune_internal.h has the layers):
 * the configuration in force, the profiles in use, and the hot words that
 * every intercepted call reads without a lock. For api.c, intercept.c and the
 * tests only. */
#ifndef MG_TUNE_LIFECYCLE_H
#define MG_TUNE_LIFECYCLE_H

#include "tune_internal.h"
#include <stdatomic.h>

/* A loaded set of profiles as the hot path sees it: immutable once published.
 * A set that is replaced (mg_tune_load_profiles) is kept until MPI_Finalize,
 * because a call in another thread may still be reading it. */
typedef struct mg_tune_live {
    mg_tune_profiles ps;
    unsigned coll_mask; /* bit c: some profile of collective c exists */
    struct mg_tune_live *retired_next;
} mg_tune_live;

/* The hot word: what every intercepted call reads first. */
#define MG_HOT_ON         1u /* between our MPI_Init and MPI_Finalize */
#define MG_HOT_COUNT      2u /* count the calls (a report is requested) */
#define MG_HOT_RECORD     4u /* record the calls and their times (record.h) */
#define MG_HOT_MODE_SHIFT 3
#define MG_HOT_MODE(h)    ((mg_tune_mode)(((h) >> MG_HOT_MODE_SHIFT) & 3u))

/* Copies of the configuration in force, published by lifecycle.c (under its
 * lock) after every change and read by intercept.c without a lock.
 * Relaxed/acquire atomics: a call that races with a change sees the old or the
 * new value of each, never a torn one. */
typedef struct {
    _Atomic unsigned word;           /* MG_HOT_ON | MG_HOT_COUNT | MG_HOT_RECORD | mode << MG_HOT_MODE_SHIFT */
    _Atomic int forced[MG_NCOLLS];   /* the forced implementation per collective */
    _Atomic int dt_forced;           /* the forced strategy of calls with derived datatypes (mg_dts) */
    _Atomic size_t msg_cap, int_cap; /* the pools' configured capacities */
    _Atomic int chunk;               /* C of the round-robin mock-ups (1 to INT_MAX) */
    _Atomic int regroup;             /* allow_regrouping */
    _Atomic(mg_tune_live *) live;    /* the profiles (NULL: none); replaced, never changed */
} mg_tune_hot_words;

extern mg_tune_hot_words mg_tune_hot;

/* Reads the configuration (file, environment) and the profiles once. */
void mg_tune__ensure_configured(void);
/* MPI_Init (after PMPI_Init): configure, allocate the pools, start counting.
 * MPI_Finalize (before PMPI_Finalize): write the report, free everything. */
void mg_tune__start(void);
void mg_tune__stop(void);
/* The record file of record mode (a copy, the caller frees it), NULL if none;
 * and, at MPI_Finalize before the record is written, the end of recording. */
char *mg_tune__record_path(void);
void mg_tune__record_off(void);

/* Tuned-mode choice for (coll, procs, bytes): implementation index of the
 * covering range, -1 if no profile or no range covers bytes. Lock-free. */
int mg_tune__lookup(mg_coll coll, int procs, MPI_Count bytes);

/* The changes the control API makes (each counts as "the API was used": calls
 * are then counted, since a linked program may write the report at any time). */
void mg_tune__set_mode(mg_tune_mode mode);
mg_tune_mode mg_tune__mode(void);
void mg_tune__set_forced(mg_coll coll, int impl);
void mg_tune__set_dt_forced(mg_dts strategy);
/* Loads dir's profiles and puts them in use; MG_TUNE_ERR_PROFILE if a file was
 * skipped or dir cannot be read, MG_TUNE_ERR_NOMEM. */
int mg_tune__use_profiles(const char *dir);
/* Counting for the report: -1 as above, 0 never, 1 always. */
void mg_tune__set_counting(int mode);
/* Recording: -1 when a record file is configured, 0 never, 1 always. */
void mg_tune__set_recording(int mode);
/* The report with the configuration in force. */
int mg_tune__report(FILE *out);

/* Tests: a copy of the configuration in force (its strings are borrowed:
 * valid until the next change), and the report file of MPI_Finalize. */
void mg_tune__config_in_force(mg_tune_config *out);
void mg_tune__set_report_file(const char *path);

#endif
