/* libmpiguide-tune: PMPI interposition that replaces a collective with a
 * semantically equivalent composition of other collectives (a mock-up; Hunold
 * and Carpen-Amarie 2018) when that is faster, and never changes a result
 * (docs/tuning.md).
 *
 * Normally controlled by the environment (MPIGUIDE_TUNE_MODE, ...); this API
 * lets a benchmark or test linked with the library choose directly. All
 * functions are thread-safe and may be called before MPI_Init. Names of
 * collectives are lower case without the MPI_ prefix ("allgather", ...,
 * "reduce_scatter_block"); implementation names are "default" (the native
 * call) or a mock-up name such as "allgather_as_gather_bcast". */
#ifndef MPIGUIDE_TUNE_H
#define MPIGUIDE_TUNE_H

#include <stdio.h>

/* What libmpiguide-tune exports: the functions below and the intercepted MPI_
 * functions; everything else is hidden. */
#if defined(__GNUC__) || defined(__clang__)
#define MG_TUNE_API __attribute__((visibility("default")))
#else
#define MG_TUNE_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

enum {
    MG_TUNE_SUCCESS = 0,
    MG_TUNE_ERR_ARG,     /* unknown collective or implementation, bad mode */
    MG_TUNE_ERR_PROFILE, /* a profile or configuration file could not be used (see the warning) */
    MG_TUNE_ERR_NOMEM
};

/* online: the library learns the fastest implementation of each call inside the run (docs/tuning.md,
 * "Online selection"); a profile's choice, where one covers the call, comes first. */
typedef enum { MG_TUNE_OFF = 0, MG_TUNE_FORCED = 1, MG_TUNE_TUNED = 2, MG_TUNE_ONLINE = 3 } mg_tune_mode;

MG_TUNE_API int mg_tune_set_mode(mg_tune_mode mode);
MG_TUNE_API mg_tune_mode mg_tune_get_mode(void);

/* Forced mode: which implementation a collective uses ("default" resets);
 * collective "datatypes": how calls with derived datatypes move their data
 * ("native", "normalized", "pack"; "default" resets). */
MG_TUNE_API int mg_tune_force(const char *collective, const char *impl);

/* Tuned mode: (re)load every profile in a directory; malformed files are
 * skipped with one warning each (file:line) and the rest is used. */
MG_TUNE_API int mg_tune_load_profiles(const char *dir);

/* The collectives and their implementations: index 0 is "default". */
MG_TUNE_API int mg_tune_ncollectives(void);
MG_TUNE_API const char *mg_tune_collective_name(int i);
MG_TUNE_API int mg_tune_nimpls(const char *collective); /* 1 + mock-ups; -1 if unknown */
MG_TUNE_API const char *mg_tune_impl_name(const char *collective, int i);
MG_TUNE_API int mg_tune_impl_guideline(const char *collective, int i); /* n of COLL-GLn; 0 for default */
/* What implementation i calls: "MPI_Gather + MPI_Bcast"; the collective's MPI name for default. */
MG_TUNE_API const char *mg_tune_impl_formula(const char *collective, int i);

/* What the calling thread's last call of a collective ran ("default" or a
 * mock-up; "native" when the library fell back to the native call because
 * the mock-up does not apply or memory is short). NULL if never called. */
MG_TUNE_API const char *mg_tune_last_impl(const char *collective);

/* Whether intercepted calls are counted for the report. By default
 * (MG_TUNE_COUNT_AUTO) they are when a report file is configured or this API
 * has changed the mode, a forced choice or the profiles; the other two values
 * override that until the next call. A hook for benchmarks that measure what
 * counting costs (mg_tuneoverhead); MG_TUNE_ERR_ARG for any other value. */
typedef enum { MG_TUNE_COUNT_AUTO = -1, MG_TUNE_COUNT_NEVER = 0, MG_TUNE_COUNT_ALWAYS = 1 } mg_tune_counting;
MG_TUNE_API int mg_tune_set_counting(mg_tune_counting counting);

/* Whether intercepted calls are recorded (record mode: their keys and times,
 * written at MPI_Finalize to the file MPIGUIDE_TUNE_RECORD names; docs/apps.md).
 * By default (MG_TUNE_COUNT_AUTO) they are when a record file is configured;
 * the other two values override that until the next call (a record without a
 * file is kept and dropped at MPI_Finalize). A hook for benchmarks that
 * measure what recording costs (mg_tuneoverhead). */
MG_TUNE_API int mg_tune_set_recording(mg_tune_counting recording);

/* Usage report (per collective and message size: which implementation ran and
 * how often, and the pool sizes), the format of docs/tuning.md. */
MG_TUNE_API int mg_tune_write_report(FILE *out);

MG_TUNE_API const char *mg_tune_strerror(int code);

#ifdef __cplusplus
}
#endif
#endif
