#include "tuned_mode.h"

#include <stddef.h>

#ifdef MG_BENCH_TUNED
#include "mpiguide/tune.h"

int mg_bench_tuned_built(void) { return 1; }

void mg_bench_tuned(int on)
{
    if (mg_tune_set_mode(on ? MG_TUNE_TUNED : MG_TUNE_OFF) != MG_TUNE_SUCCESS) MPI_Abort(MPI_COMM_WORLD, 2);
}

int mg_bench_use_profiles(mg_bench *b, int want, const char *profiles, const char *driver)
{
    (void)driver;
    if (want != (profiles != NULL)) {
        mg_bench_error(b, "the mode tuned and --datatype-profiles DIR come together");
        return -1;
    }
    /* the modes but tuned run natively, and nothing is counted */
    if (mg_tune_set_counting(MG_TUNE_COUNT_NEVER) != MG_TUNE_SUCCESS) return -1;
    mg_bench_tuned(0);
    if (want && mg_tune_load_profiles(profiles) != MG_TUNE_SUCCESS) {
        mg_bench_error(b, "--datatype-profiles %s: the profiles could not all be loaded (see the warnings)", profiles);
        return -1;
    }
    return 0;
}
#else
int mg_bench_tuned_built(void) { return 0; }

void mg_bench_tuned(int on) { (void)on; }

int mg_bench_use_profiles(mg_bench *b, int want, const char *profiles, const char *driver)
{
    if (!want && !profiles) return 0;
    mg_bench_error(b, "the mode tuned and --datatype-profiles need %s_tuned, which is linked with libmpiguide-tune",
                   driver);
    return -1;
}
#endif

int mg_bench_library_off(void *ctx)
{
    (void)ctx;
    mg_bench_tuned(0);
    return MPI_SUCCESS;
}

int mg_bench_library_tuned(void *ctx)
{
    (void)ctx;
    mg_bench_tuned(1);
    return MPI_SUCCESS;
}
