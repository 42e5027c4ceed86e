/* form_verdicts.c: which form classes of datatypes the MPI library running packs
 * right (layer bottom, tune_internal.h), for the plans of types.c: a normal
 * type with a class the library gets wrong is never handed to it. */
#ifndef MG_TUNE_FORM_VERDICTS_H
#define MG_TUNE_FORM_VERDICTS_H

#include <mpi.h>

/* 1 if MPI packs every form class of `type`, used with any count, as the MPI
 * definitions say (mg_dt_form_classes, repeated); 0 if it gets one wrong, or
 * a class cannot be probed. Each class (with its element) is probed once per
 * process (mg_dt_form_class_probe) and the verdict kept; a refusal is counted
 * under every class that failed. The answer depends only on the type and the
 * MPI library, never on timing or rank, so all ranks decide alike. */
int mg_tune__forms_accept(MPI_Datatype type);

/* fn(name, instance, types, arg) for each class refused so far (its name, its
 * canonical instance, the number of types refused for it), in the order the
 * classes were first probed. */
void mg_tune__forms_refused(void (*fn)(const char *name, const char *instance, long types, void *arg), void *arg);

/* Every verdict forgotten (MPI_Finalize: a next MPI_Init may run another library). */
void mg_tune__forms_free(void);

#endif
