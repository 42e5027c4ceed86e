/* The form policies of mg_dt_to_mpi (dt.h: mg_dt_form_policy), one per MPI
 * family, as measured with the DT-GL4-BEST comparisons of docs/dt-engine.md
 * ("Which form"), where the numbers behind each entry are. The caller may pass
 * its own (mg_dt_to_mpi_policy); nothing here reads the environment. */
#include "internal.h"
#include <string.h>

#define ANY_SIZE (-1)

/* Matched in order against MPI_Get_library_version's text: Intel MPI and
 * MVAPICH report MPICH's version too, so they come before it. */
static const struct {
    const char *family;
    mg_dt_form_policy policy;
} policies[] = {
    /* Intel MPI: lists of small blocks at any size; a plain vector of blocks
     * of 384 bytes and more as a resized array */
    {"Intel", {.base = MG_DT_FORM_VECTOR, .list_below = ANY_SIZE, .resized_block = 384, .resized_max = PTRDIFF_MAX}},
    {"MVAPICH", {.base = MG_DT_FORM_VECTOR, .list_below = ANY_SIZE}},
    {"Open MPI", {.base = MG_DT_FORM_VECTOR, .list_below = ANY_SIZE}},
    /* MPICH: resized arrays; below 8 KiB lists of small blocks, and a vector
     * of blocks of 16 B to 1 KiB resized; elements and periods of 4 KiB and
     * more as copies of one (its single-copy transfer) */
    {"MPICH", {.base = MG_DT_FORM_RESIZED, .list_below = 8192, .resized_block = 16, .resized_max = 1024,
               .repeat_from = 4096}},
};
static const mg_dt_form_policy unknown_family = {.base = MG_DT_FORM_VECTOR, .list_below = ANY_SIZE};

int mg_dt_form_policy_for(const char *library_version, mg_dt_form_policy *out)
{
    if (!out) return MG_DT_ERR_ARG;
    char running[MPI_MAX_LIBRARY_VERSION_STRING];
    if (!library_version) {
        int len = 0;
        if (MPI_Get_library_version(running, &len) != MPI_SUCCESS) return MG_DT_ERR_MPI;
        running[len >= 0 && len < (int)sizeof running ? len : (int)sizeof running - 1] = '\0';
        library_version = running;
    }
    *out = unknown_family;
    for (size_t i = 0; i < sizeof policies / sizeof policies[0]; i++)
        if (strstr(library_version, policies[i].family)) {
            *out = policies[i].policy;
            break;
        }
    return MG_DT_SUCCESS;
}

static const char *const form_names[] = {"auto", "vector", "resized", "list", "copies"};

const char *mg_dt_form_name(int form)
{
    return form >= MG_DT_FORM_AUTO && form <= MG_DT_FORM_COPIES ? form_names[form] : "?";
}

int mg_dt_form_parse(const char *name, int *form)
{
    if (!name || !form) return MG_DT_ERR_ARG;
    for (int f = MG_DT_FORM_AUTO; f <= MG_DT_FORM_COPIES; f++)
        if (!strcmp(name, form_names[f])) {
            *form = f;
            return MG_DT_SUCCESS;
        }
    return MG_DT_ERR_ARG;
}

int mg__policy_valid(const mg_dt_form_policy *p)
{
    return p && p->base >= MG_DT_FORM_VECTOR && p->base <= MG_DT_FORM_COPIES && p->list_below >= ANY_SIZE &&
           p->resized_block >= 0 && p->resized_max >= p->resized_block && p->repeat_from >= 0;
}
