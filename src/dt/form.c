/* Which form mg_dt_to_mpi builds (dt.h: MG_DT_FORM_*). The choice per MPI
 * family comes from the DT-GL4-BEST measurements in docs/dt-engine.md: MPICH
 * moves a large count of a resized element several times faster than a
 * vector of as many blocks, Open MPI and Intel MPI the other way round (Intel
 * MPI only for blocks below a few hundred bytes, and the other way round
 * again above); all
 * three move many small blocks fastest as one index list, MPICH only in
 * messages of a few kB; MPICH moves arrays of large elements fastest as
 * copies of one element (its single-copy transfer). */
#define _POSIX_C_SOURCE 200809L
#include "internal.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* MPICH: index lists below this many bytes, resized arrays above; below it,
 * a plain vector of blocks of 16 bytes to 1 KiB as a resized array too
 * (Tiled A=10, 40-byte blocks, 2-3.2 kB: 1.00-1.02x the fastest native
 * description, 1.04-1.21x as a list; 8-byte blocks move fastest as a list or
 * vector, 0.87-0.96x, as resized copies 1.00x) */
#define MG_MPICH_LIST_BELOW    8192
#define MG_MPICH_RESIZED_BLOCK 16
#define MG_MPICH_RESIZED_MAX   1024
/* Intel MPI: a plain vector of blocks of this many bytes and more as a
 * resized array, at any size (Tiled, resized array vs vector: 40-byte blocks
 * 1.8-2.1x slower, 256 bytes 0.94-1.10x, 400 bytes 0.81-1.02x, 4 kB
 * 0.58-1.00x, 40 kB 0.54-1.00x, from 3 kB to 2.56 MB) */
#define MG_INTEL_RESIZED_BLOCK 384
/* MPICH: elements and periods of this many bytes and more as copies of one
 * (Alternating of Test 10, 2.56 MB: with A=10000, 80 kB periods, 0.46 ms as
 * copies, 2.8 ms as the count-aware form's joined blocks; with A=1000, 8 kB
 * periods, 0.9 ms as copies in every launch, 2.8 ms joined in 3 of 8; with
 * A=500 no difference) */
#define MG_MPICH_REPEAT_FROM   4096

mg_form_policy mg__auto_form(void)
{
    const char *env = getenv("MPIGUIDE_DT_FORM");
    if (env && !strcmp(env, "resized")) return (mg_form_policy){.base = MG_DT_FORM_RESIZED};
    if (env && !strcmp(env, "vector")) return (mg_form_policy){.base = MG_DT_FORM_VECTOR};
    if (env && !strcmp(env, "list")) return (mg_form_policy){.base = MG_DT_FORM_LIST};
    if (env && !strcmp(env, "copies")) return (mg_form_policy){.base = MG_DT_FORM_COPIES};
    static int warned;
    if (env && *env && !__atomic_exchange_n(&warned, 1, __ATOMIC_RELAXED))
        fprintf(stderr,
                "mpiguide: MPIGUIDE_DT_FORM='%s' is none of vector, resized, list, copies: ignored, the form is "
                "chosen for the MPI library\n",
                env);
    mg_form_policy others = {.base = MG_DT_FORM_VECTOR, .list_below = -1};
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    if (MPI_Get_library_version(version, &len) != MPI_SUCCESS) return others;
    version[len < (int)sizeof version ? len : (int)sizeof version - 1] = '\0';
    /* Intel MPI and MVAPICH report MPICH's version too: test them first */
    if (strstr(version, "Intel"))
        return (mg_form_policy){.base = MG_DT_FORM_VECTOR, .list_below = -1, .resized_block = MG_INTEL_RESIZED_BLOCK,
                                .resized_max = PTRDIFF_MAX};
    if (strstr(version, "MVAPICH") || strstr(version, "Open MPI")) return others;
    if (strstr(version, "MPICH"))
        return (mg_form_policy){.base = MG_DT_FORM_RESIZED, .list_below = MG_MPICH_LIST_BELOW,
                                .resized_block = MG_MPICH_RESIZED_BLOCK, .resized_max = MG_MPICH_RESIZED_MAX,
                                .repeat_from = MG_MPICH_REPEAT_FROM};
    return others;
}
