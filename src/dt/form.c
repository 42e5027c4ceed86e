/* Which form of count elements mg_dt_to_mpi gives (dt.h: MG_DT_FORM_*). */
#define _POSIX_C_SOURCE 200809L
#include "internal.h"
#include <stdlib.h>
#include <string.h>

int mg__auto_form(const mg_dt *t, MPI_Count count)
{
    (void)t, (void)count;
    const char *env = getenv("MPIGUIDE_DT_FORM");
    if (env && !strcmp(env, "elements")) return MG_DT_FORM_ELEMENTS;
    return MG_DT_FORM_WHOLE;
}
