/* The mode `tuned` of the datatype drivers (mg_ddtbench, mg_ddtexchange): the
 * datatype mode's call under libmpiguide-tune in tuned mode with the profiles
 * of --datatype-profiles, the validation of `mpiguide ddt tune`. Only their
 * _tuned binaries are linked with the library (built with MG_BENCH_TUNED); it
 * stays off in every other mode, and counts nothing. */
#ifndef MG_BENCH_TUNED_MODE_H
#define MG_BENCH_TUNED_MODE_H

#include "mg_bench.h"

/* Whether this binary has the mode (its --list and --help name it only then). */
int mg_bench_tuned_built(void);
/* The library tuned while on, else off (nothing where it is not linked). */
void mg_bench_tuned(int on);
/* mg_bench_side.before of the timed sides: the library's mode for the side's. */
int mg_bench_library_off(void *ctx);
int mg_bench_library_tuned(void *ctx);
/* The mode tuned (want) and --datatype-profiles DIR (profiles) come together,
 * and need the _tuned binary of `driver`: loads the profiles and turns the
 * library off; 0, or -1 after mg_bench_error. */
int mg_bench_use_profiles(mg_bench *b, int want, const char *profiles, const char *driver);

#endif
