/* Which form mg_dt_to_mpi builds (dt.h: MG_DT_FORM_*). The choice per MPI
 * family comes from the DT-GL4-BEST measurements in docs/dt-engine.md: MPICH
 * moves a large count of a resized element several times faster than a
 * vector of as many blocks; Open MPI and Intel MPI the other way round. */
#define _POSIX_C_SOURCE 200809L
#include "internal.h"
#include <stdlib.h>
#include <string.h>

int mg__auto_form(void)
{
    const char *env = getenv("MPIGUIDE_DT_FORM");
    if (env && !strcmp(env, "resized")) return MG_DT_FORM_RESIZED;
    if (env && !strcmp(env, "vector")) return MG_DT_FORM_VECTOR;
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    if (MPI_Get_library_version(version, &len) != MPI_SUCCESS) return MG_DT_FORM_VECTOR;
    version[len < (int)sizeof version ? len : (int)sizeof version - 1] = '\0';
    /* Intel MPI and MVAPICH report MPICH's version too: test them first */
    if (strstr(version, "Intel") || strstr(version, "MVAPICH") || strstr(version, "Open MPI")) return MG_DT_FORM_VECTOR;
    return strstr(version, "MPICH") ? MG_DT_FORM_RESIZED : MG_DT_FORM_VECTOR;
}
