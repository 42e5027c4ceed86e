/* The control API of mpiguide/tune.h (but mg_tune_last_impl, which reads the
 * call path's per-thread record in intercept.c): argument checks here, the
 * changes in lifecycle.c, the names from the catalog. */
#define _POSIX_C_SOURCE 200809L
#include "lifecycle.h"
#include <string.h>

int mg_tune_set_mode(mg_tune_mode mode)
{
    if (mode != MG_TUNE_OFF && mode != MG_TUNE_FORCED && mode != MG_TUNE_TUNED && mode != MG_TUNE_ONLINE)
        return MG_TUNE_ERR_ARG;
    mg_tune__set_mode(mode);
    return MG_TUNE_SUCCESS;
}

mg_tune_mode mg_tune_get_mode(void) { return mg_tune__mode(); }

int mg_tune_force(const char *collective, const char *impl)
{
    if (collective && impl && strcmp(collective, MG_TUNE_DATATYPES) == 0) {
        int s = mg_tune__dts_index(impl);
        if (s < 0) return MG_TUNE_ERR_ARG;
        mg_tune__set_dt_forced((mg_dts)s);
        return MG_TUNE_SUCCESS;
    }
    int c = mg_tune__public_coll_index(collective);
    if (c < 0) return MG_TUNE_ERR_ARG;
    int i = mg_tune__impl_index((mg_coll)c, impl);
    if (i < 0) return MG_TUNE_ERR_ARG;
    mg_tune__set_forced((mg_coll)c, i);
    return MG_TUNE_SUCCESS;
}

int mg_tune_load_profiles(const char *dir)
{
    if (!dir) return MG_TUNE_ERR_ARG;
    return mg_tune__use_profiles(dir);
}

int mg_tune_set_counting(mg_tune_counting counting)
{
    if (counting != MG_TUNE_COUNT_AUTO && counting != MG_TUNE_COUNT_NEVER && counting != MG_TUNE_COUNT_ALWAYS)
        return MG_TUNE_ERR_ARG;
    mg_tune__ensure_configured();
    mg_tune__set_counting((int)counting);
    return MG_TUNE_SUCCESS;
}

int mg_tune_set_recording(mg_tune_counting recording)
{
    if (recording != MG_TUNE_COUNT_AUTO && recording != MG_TUNE_COUNT_NEVER && recording != MG_TUNE_COUNT_ALWAYS)
        return MG_TUNE_ERR_ARG;
    mg_tune__ensure_configured();
    mg_tune__set_recording((int)recording);
    return MG_TUNE_SUCCESS;
}

int mg_tune_ncollectives(void) { return MG_NCOLLS; }

const char *mg_tune_collective_name(int i) { return i >= 0 && i < MG_NCOLLS ? mg_tune__table((mg_coll)i)->name : NULL; }

/* The table of a collective named as the API names them, if i is one of its implementations. */
static const mg_coll_mockups *table_with(const char *collective, int i)
{
    int c = mg_tune__public_coll_index(collective);
    const mg_coll_mockups *t = c < 0 ? NULL : mg_tune__table((mg_coll)c);
    return t && i >= 0 && i <= t->nmockups ? t : NULL;
}

int mg_tune_nimpls(const char *collective)
{
    int c = mg_tune__public_coll_index(collective);
    return c < 0 ? -1 : 1 + mg_tune__table((mg_coll)c)->nmockups;
}

const char *mg_tune_impl_name(const char *collective, int i)
{
    const mg_coll_mockups *t = table_with(collective, i);
    if (!t) return NULL;
    return i == 0 ? "default" : t->mockups[i - 1].name;
}

int mg_tune_impl_guideline(const char *collective, int i)
{
    const mg_coll_mockups *t = table_with(collective, i);
    if (!t) return -1;
    return i == 0 ? 0 : t->mockups[i - 1].guideline;
}

const char *mg_tune_impl_formula(const char *collective, int i)
{
    const mg_coll_mockups *t = table_with(collective, i);
    if (!t) return NULL;
    return i == 0 ? t->mpi_name : t->mockups[i - 1].formula;
}

int mg_tune_write_report(FILE *out)
{
    if (!out) return MG_TUNE_ERR_ARG;
    return mg_tune__report(out);
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
