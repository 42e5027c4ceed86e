/* The library's own communicators: the probe communicator, and one shadow per
 * application communicator that a mock-up ran on.
 *
 * A mock-up's inner calls run on the shadow, not on the application's
 * communicator: an error of an inner call must reach the application's error
 * handler once, with the mock-up's first error (intercept.c raises it), as the
 * native call would raise it, and not once per failing inner call. The shadow
 * is made with MPI_Comm_split, which copies no attribute (MPI_Comm_dup would
 * run the application's copy callbacks), is kept in the communicator's record
 * (below) and freed with it. */
#define _POSIX_C_SOURCE 200809L
#include "comms.h"
#include "handles.h"
#include "online.h"

#include <stdlib.h>

/* What the library keeps per application communicator: an attribute (freed
 * with the communicator by its delete callback) and an entry of the handle
 * map, through which every call finds it without an MPI call. */
typedef struct {
    mg_comm_info info;      /* first: mg_tune__comm_profile finds the record from it */
    MPI_Comm shadow;        /* MPI_COMM_NULL until a mock-up runs on the communicator */
    MPI_Errhandler handler; /* the one set on shadow */
    /* the profiles of the communicator's size in the set `live`; a call racing
     * with a refill may read one of the next set's: as valid (sets are kept
     * until MPI_Finalize) and of the same (collective, size) */
    _Atomic(const mg_tune_live *) live;
    _Atomic(const mg_tune_profile *) profile[MG_NCOLLS];
    _Atomic(mg_online_table *) online; /* online mode's keys (NULL until the first call that asks) */
} comm_record;

static MPI_Comm probe = MPI_COMM_NULL;
static int record_key = MPI_KEYVAL_INVALID;
static mg_hmap records = MG_HMAP_INIT;
static pthread_mutex_t making = PTHREAD_MUTEX_INITIALIZER; /* one maker per communicator */

static int delete_record(MPI_Comm comm, int key, void *value, void *extra)
{
    (void)key, (void)extra;
    comm_record *r = value;
    mg_hmap_take(&records, MG_HANDLE_KEY(comm));
    mg_online_table *t = atomic_load_explicit(&r->online, memory_order_acquire);
    if (t) mg_tune__online_free_table(t);
    int rc = r->shadow != MPI_COMM_NULL ? PMPI_Comm_free(&r->shadow) : MPI_SUCCESS;
    free(r);
    return rc;
}

void mg_tune__comms_start(void)
{
    if (PMPI_Comm_dup(MPI_COMM_SELF, &probe) != MPI_SUCCESS) probe = MPI_COMM_NULL;
    if (probe != MPI_COMM_NULL) PMPI_Comm_set_errhandler(probe, MPI_ERRORS_RETURN);
    if (PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_record, &record_key, NULL) != MPI_SUCCESS)
        record_key = MPI_KEYVAL_INVALID;
}

void mg_tune__comms_stop(void)
{
    if (record_key != MPI_KEYVAL_INVALID) {
        /* MPI_Finalize need not delete MPI_COMM_WORLD's attributes, and deletes
         * MPI_COMM_SELF's only after this library has stopped */
        MPI_Comm builtin[2] = {MPI_COMM_WORLD, MPI_COMM_SELF};
        for (int i = 0; i < 2; i++) {
            void *value;
            int found = 0;
            if (PMPI_Comm_get_attr(builtin[i], record_key, &value, &found) == MPI_SUCCESS && found)
                PMPI_Comm_delete_attr(builtin[i], record_key);
        }
        PMPI_Comm_free_keyval(&record_key);
    }
    if (probe != MPI_COMM_NULL) PMPI_Comm_free(&probe);
    mg_hmap_clear(&records);
}

MPI_Comm mg_tune__probe_comm(void) { return probe; }

/* The record of comm, made by the first call that asks (NULL if comm is not
 * a valid communicator or memory ran out). */
static comm_record *record(MPI_Comm comm)
{
    if (comm == MPI_COMM_NULL) return NULL;
    comm_record *r = mg_hmap_get(&records, MG_HANDLE_KEY(comm));
    if (r || record_key == MPI_KEYVAL_INVALID) return r;
    pthread_mutex_lock(&making);
    int found = 0;
    if (PMPI_Comm_get_attr(comm, record_key, &r, &found) != MPI_SUCCESS) {
        r = NULL;
    } else if (!found) {
        int inter = 0, size = 0;
        if (PMPI_Comm_test_inter(comm, &inter) == MPI_SUCCESS && PMPI_Comm_size(comm, &size) == MPI_SUCCESS &&
            (r = malloc(sizeof *r)) != NULL) {
            *r = (comm_record){.info = {inter, size}, .shadow = MPI_COMM_NULL, .handler = MPI_ERRORS_RETURN};
            if (PMPI_Comm_set_attr(comm, record_key, r) != MPI_SUCCESS) {
                free(r);
                r = NULL;
            }
        }
    }
    /* found but not in the map: an earlier insertion ran out of memory */
    if (r && mg_hmap_put(&records, MG_HANDLE_KEY(comm), r) != 0) r = NULL;
    pthread_mutex_unlock(&making);
    return r;
}

const mg_comm_info *mg_tune__comm_info(MPI_Comm comm)
{
    comm_record *r = record(comm);
    return r ? &r->info : NULL;
}

const mg_tune_profile *mg_tune__comm_profile(const mg_comm_info *info, mg_coll coll)
{
    const mg_tune_live *l = atomic_load_explicit(&mg_tune_hot.live, memory_order_acquire);
    if (!l || !(l->coll_mask >> coll & 1u)) return NULL;
    comm_record *r = (comm_record *)info;
    if (atomic_load_explicit(&r->live, memory_order_acquire) != l) {
        for (int c = 0; c < MG_NCOLLS; c++)
            atomic_store_explicit(&r->profile[c], mg_tune__profiles_get(&l->ps, (mg_coll)c, info->size),
                                  memory_order_relaxed);
        atomic_store_explicit(&r->live, l, memory_order_release);
    }
    return atomic_load_explicit(&r->profile[coll], memory_order_relaxed);
}

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

int mg_tune__shadow_comm(MPI_Comm comm, MPI_Comm *shadow)
{
    comm_record *r = record(comm);
    if (!r) return raise(comm, MPI_ERR_INTERN);
    int rc;
    if (r->shadow == MPI_COMM_NULL) {
        /* one color, key 0: the ranks keep their order */
        if ((rc = PMPI_Comm_split(comm, 0, 0, &r->shadow)) != MPI_SUCCESS) return rc;
        if ((rc = PMPI_Comm_set_errhandler(r->shadow, MPI_ERRORS_RETURN)) != MPI_SUCCESS) {
            PMPI_Comm_free(&r->shadow);
            return rc;
        }
        r->handler = MPI_ERRORS_RETURN;
    }
    MPI_Errhandler want = shadow_handler(comm);
    if (want != r->handler) {
        if ((rc = PMPI_Comm_set_errhandler(r->shadow, want)) != MPI_SUCCESS) return rc;
        r->handler = want;
    }
    *shadow = r->shadow;
    return MPI_SUCCESS;
}

mg_online_table *mg_tune__comm_online(const mg_comm_info *info)
{
    comm_record *r = (comm_record *)info;
    mg_online_table *t = atomic_load_explicit(&r->online, memory_order_acquire);
    if (t) return t;
    pthread_mutex_lock(&making);
    if (!(t = atomic_load_explicit(&r->online, memory_order_relaxed)) && (t = mg_tune__online_table(info->size)))
        atomic_store_explicit(&r->online, t, memory_order_release);
    pthread_mutex_unlock(&making);
    return t; /* freed with the communicator (delete_record) */
}
