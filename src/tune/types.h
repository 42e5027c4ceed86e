/* types.c: what the library keeps per datatype (layer types, tune_internal.h). */
#ifndef MG_TUNE_TYPES_H
#define MG_TUNE_TYPES_H

#include <mpi.h>

/* After MPI_Init, and before MPI_Finalize once no call can run any more. */
void mg_tune__types_start(void);
void mg_tune__types_stop(void);
/* The form of the plans' normal types from now on (MG_DT_FORM_*, the
 * configuration's dt_form; AUTO: the engine's policy for the library). */
void mg_tune__types_set_form(int form);

/* MPI_Type_size_x of type, cached (handles.h): after the first call with a
 * type, no MPI call. -1 if MPI says the size is undefined or type is not a
 * datatype (MPI raised that error, as the native call would). */
MPI_Count mg_tune__type_size(MPI_Datatype type);

/* MPI_Type_commit and MPI_Type_dup said type is committed (after their
 * success; the dup's original must have been committed): only such types get
 * a plan. Types committed elsewhere (by a Fortran binding that bypasses the C
 * one, say) have none, and their calls stay native. */
void mg_tune__type_committed(MPI_Datatype type);
/* Changed by every mg_tune__type_committed: with mg_hmap_deletions, what a
 * thread remembers of mg_tune__type_plan's answers stays valid while both are
 * unchanged. */
extern _Atomic unsigned mg_tune__commits;
int mg_tune__type_is_committed(MPI_Datatype type);

/* What the datatype strategies use of a committed derived type, built by the
 * first call that asks and kept until the type is freed and no operation that
 * holds it is pending. */
typedef struct mg_type_plan {
    _Atomic int refs;    /* the record's, and one per pending operation */
    struct mg_dt *dt;    /* the engine's description */
    MPI_Datatype normal; /* normal(t): one element with t's lb and extent and t's
                          * signature; MPI_DATATYPE_NULL where t mixes element types,
                          * or where refused */
    int refused;         /* normal(t) has a form class the MPI library packs wrongly
                          * (form_verdicts.h): NORMALIZED takes another way */
    MPI_Count size;      /* bytes of one element */
    char shape[64];      /* the constructors of the engine's normal form, "resized/hvector/indexed" */
    MPI_Count block;     /* mg_dt_mean_block: the profiles' other key */
    struct mg_type_plan *next_dead;
} mg_type_plan;
/* The plan of type; NULL when the calls with it stay native: predefined,
 * contiguous (count elements are one block), not committed (as far as the
 * library saw), or not decodable. Lock-free once built. */
const mg_type_plan *mg_tune__type_plan(MPI_Datatype type);
/* A pending operation keeps the plan it uses (MPI allows freeing the type meanwhile). */
void mg_tune__plan_hold(const mg_type_plan *p);
void mg_tune__plan_release(const mg_type_plan *p);

#endif
