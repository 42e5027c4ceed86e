/* The library's own communicators: the probe communicator, and one shadow per
 * application communicator that a mock-up ran on.
 *
 * A mock-up's inner calls run on the shadow, not on the application's
 * communicator: an error of an inner call must reach the application's error
 * handler once, with the mock-up's first error (intercept.c raises it), as the
 * native call would raise it, and not once per failing inner call. The shadow
 * is made with MPI_Comm_split, which copies no attribute (MPI_Comm_dup would
 * run the application's copy callbacks), is cached as an attribute of the
 * application's communicator and freed with it by the attribute's delete
 * callback (MPI_COMM_WORLD's at MPI_Finalize, whose attributes MPI keeps). */
#define _POSIX_C_SOURCE 200809L
#include "comms.h"

#include <stdlib.h>

typedef struct {
    MPI_Comm comm;
    MPI_Errhandler handler; /* the one set on comm */
} shadow_comm;

static MPI_Comm probe = MPI_COMM_NULL;
static int shadow_key = MPI_KEYVAL_INVALID;

static int delete_shadow(MPI_Comm comm, int key, void *value, void *extra)
{
    (void)comm, (void)key, (void)extra;
    shadow_comm *s = value;
    int rc = PMPI_Comm_free(&s->comm);
    free(s);
    return rc;
}

void mg_tune__comms_start(void)
{
    if (PMPI_Comm_dup(MPI_COMM_SELF, &probe) != MPI_SUCCESS) probe = MPI_COMM_NULL;
    if (probe != MPI_COMM_NULL) PMPI_Comm_set_errhandler(probe, MPI_ERRORS_RETURN);
    if (PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_shadow, &shadow_key, NULL) != MPI_SUCCESS)
        shadow_key = MPI_KEYVAL_INVALID;
}

void mg_tune__comms_stop(void)
{
    if (shadow_key != MPI_KEYVAL_INVALID) {
        void *value;
        int found = 0;
        /* every rank of MPI_COMM_WORLD has its shadow or none: they ran the same mock-ups */
        if (PMPI_Comm_get_attr(MPI_COMM_WORLD, shadow_key, &value, &found) == MPI_SUCCESS && found)
            PMPI_Comm_delete_attr(MPI_COMM_WORLD, shadow_key);
        PMPI_Comm_free_keyval(&shadow_key);
    }
    if (probe != MPI_COMM_NULL) PMPI_Comm_free(&probe);
}

MPI_Comm mg_tune__probe_comm(void) { return probe; }

/* The handler the shadow needs: comm's, where that one ends the job, else MPI_ERRORS_RETURN. */
static MPI_Errhandler shadow_handler(MPI_Comm comm)
{
    MPI_Errhandler h = MPI_ERRHANDLER_NULL, want = MPI_ERRORS_RETURN;
    if (PMPI_Comm_get_errhandler(comm, &h) != MPI_SUCCESS) return want;
    if (h == MPI_ERRORS_ARE_FATAL) want = MPI_ERRORS_ARE_FATAL;
#ifdef MPI_ERRORS_ABORT
    if (h == MPI_ERRORS_ABORT) want = MPI_ERRORS_ABORT;
#endif
    PMPI_Errhandler_free(&h);
    return want;
}

/* An error of the library's own, raised on comm as MPI raises its errors. */
static int raise(MPI_Comm comm, int code)
{
    PMPI_Comm_call_errhandler(comm, code);
    return code;
}

static int make_shadow(MPI_Comm comm, shadow_comm **out)
{
    shadow_comm *s = malloc(sizeof *s);
    if (!s) return raise(comm, MPI_ERR_NO_MEM);
    /* one color, key 0: the ranks keep their order */
    int rc = PMPI_Comm_split(comm, 0, 0, &s->comm);
    if (rc == MPI_SUCCESS) {
        s->handler = MPI_ERRORS_RETURN;
        rc = PMPI_Comm_set_errhandler(s->comm, s->handler);
        if (rc == MPI_SUCCESS) rc = PMPI_Comm_set_attr(comm, shadow_key, s);
        if (rc != MPI_SUCCESS) PMPI_Comm_free(&s->comm);
    }
    if (rc != MPI_SUCCESS) {
        free(s);
        return rc;
    }
    *out = s;
    return MPI_SUCCESS;
}

int mg_tune__shadow_comm(MPI_Comm comm, MPI_Comm *shadow)
{
    if (shadow_key == MPI_KEYVAL_INVALID) return raise(comm, MPI_ERR_INTERN);
    shadow_comm *s = NULL;
    int found = 0;
    int rc = PMPI_Comm_get_attr(comm, shadow_key, &s, &found);
    if (rc == MPI_SUCCESS && !found) rc = make_shadow(comm, &s);
    if (rc != MPI_SUCCESS) return rc;
    MPI_Errhandler want = shadow_handler(comm);
    if (want != s->handler) {
        rc = PMPI_Comm_set_errhandler(s->comm, want);
        if (rc != MPI_SUCCESS) return rc;
        s->handler = want;
    }
    *shadow = s->comm;
    return MPI_SUCCESS;
}
