/* libmpiguide-tune: PMPI interposition that replaces a collective with a
 * semantically equivalent composition of other collectives (a mock-up, 002)
 * when that is faster, and never changes a result (docs/tuning.md).
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

#ifdef __cplusplus
extern "C" {
#endif

enum {
    MG_TUNE_SUCCESS = 0,
    MG_TUNE_ERR_ARG,     /* unknown collective or implementation, bad mode */
    MG_TUNE_ERR_PROFILE, /* a profile or configuration file could not be used (see the warning) */
    MG_TUNE_ERR_NOMEM
};

typedef enum { MG_TUNE_OFF = 0, MG_TUNE_FORCED = 1, MG_TUNE_TUNED = 2 } mg_tune_mode;

int mg_tune_set_mode(mg_tune_mode mode);
mg_tune_mode mg_tune_get_mode(void);

/* Forced mode: which implementation a collective uses ("default" resets). */
int mg_tune_force(const char *collective, const char *impl);

/* Tuned mode: (re)load every profile in a directory; malformed files are
 * skipped with one warning each (file:line) and the rest is used. */
int mg_tune_load_profiles(const char *dir);

/* The collectives and their implementations: index 0 is "default". */
int mg_tune_ncollectives(void);
const char *mg_tune_collective_name(int i);
int mg_tune_nimpls(const char *collective); /* 1 + mock-ups; -1 if unknown */
const char *mg_tune_impl_name(const char *collective, int i);
int mg_tune_impl_guideline(const char *collective, int i); /* n of COLL-GLn; 0 for default */
/* What implementation i calls: "MPI_Gather + MPI_Bcast"; the collective's MPI name for default. */
const char *mg_tune_impl_formula(const char *collective, int i);

/* What the calling thread's last call of a collective ran ("default" or a
 * mock-up; "native" when the library fell back to the native call because
 * the mock-up does not apply or memory is short). NULL if never called. */
const char *mg_tune_last_impl(const char *collective);

/* Usage report (per collective and message size: which implementation ran and
 * how often, and the pool sizes), the format of docs/tuning.md. */
int mg_tune_write_report(FILE *out);

const char *mg_tune_strerror(int code);

#ifdef __cplusplus
}
#endif
#endif
