/* The library's record of each datatype a call carries: its size and whether
 * it is one contiguous run (mg_type_contiguous), found without an MPI call
 * after the first call that asks, whether the library saw it committed, and
 * the plan of the datatype strategies.
 *
 * A predefined type's record lives until MPI_Finalize. A derived type's record
 * is an attribute of the type: MPI runs its delete callback whenever the type
 * is freed (by MPI_Type_free from C or Fortran, or inside the library), and
 * the callback drops the record before the handle can name another type.
 * Types made before MPI_Init or by the MPI library itself get their record at
 * the first call that carries them, like any other. */
#define _POSIX_C_SOURCE 200809L
#include "types.h"
#include "form_verdicts.h"
#include "handles.h"
#include "mockups/mockup_api.h"

#include "mpiguide/dt.h"
#include <stdlib.h>

typedef struct type_record type_record;
struct type_record {
    MPI_Count size;       /* -1: MPI_UNDEFINED */
    _Atomic int run;      /* mg_type_contiguous's answer (RUN_*), found by the first call that asks */
    _Atomic MPI_Aint tlb; /* with it: the true lower bound */
    MPI_Datatype type;
    int named;                    /* predefined (and f90 types): no attribute */
    _Atomic int committed;        /* MPI_Type_commit or MPI_Type_dup said so */
    _Atomic(mg_type_plan *) plan; /* NULL: not asked yet; &no_plan: the calls stay native */
    type_record *prev, *next;     /* every live record, for mg_tune__types_stop */
};

static mg_type_plan no_plan;
/* Plans whose last holder let go: freed outside MPI's callbacks (freeing their
 * normal type inside the delete callback of another type's MPI_Type_free
 * would re-enter the MPI library), at the next plan made or at the stop. */
static _Atomic(mg_type_plan *) dead;
static pthread_mutex_t planning = PTHREAD_MUTEX_INITIALIZER;
static _Atomic int normal_form = MG_DT_FORM_AUTO; /* mg_tune__types_set_form */

static int record_key = MPI_KEYVAL_INVALID;
static mg_hmap records = MG_HMAP_INIT;
/* One maker at a time, across its MPI calls; the list's lock is never held
 * across an MPI call, so the delete callback (run inside MPI, perhaps under
 * the MPI library's own lock) takes only that one and the map's. */
static pthread_mutex_t making = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t listing = PTHREAD_MUTEX_INITIALIZER;
static type_record *live;

static void link_record(type_record *r)
{
    pthread_mutex_lock(&listing);
    r->prev = NULL;
    r->next = live;
    if (live) live->prev = r;
    live = r;
    pthread_mutex_unlock(&listing);
}

void mg_tune__plan_hold(const mg_type_plan *p)
{
    atomic_fetch_add_explicit(&((mg_type_plan *)p)->refs, 1, memory_order_relaxed);
}

void mg_tune__plan_release(const mg_type_plan *p)
{
    mg_type_plan *q = (mg_type_plan *)p;
    if (!q || q == &no_plan || atomic_fetch_sub_explicit(&q->refs, 1, memory_order_acq_rel) != 1) return;
    q->next_dead = atomic_load_explicit(&dead, memory_order_relaxed);
    while (!atomic_compare_exchange_weak_explicit(&dead, &q->next_dead, q, memory_order_release, memory_order_relaxed))
        ;
}

static void bury_dead(void)
{
    mg_type_plan *p = atomic_exchange_explicit(&dead, NULL, memory_order_acquire);
    while (p) {
        mg_type_plan *next = p->next_dead;
        mg_dt_free(p->dt);
        if (p->normal != MPI_DATATYPE_NULL) PMPI_Type_free(&p->normal);
        free(p);
        p = next;
    }
}

static void drop(type_record *r)
{
    mg_tune__plan_release(atomic_load_explicit(&r->plan, memory_order_acquire));
    mg_hmap_take(&records, MG_HANDLE_KEY(r->type));
    pthread_mutex_lock(&listing);
    if (r->prev)
        r->prev->next = r->next;
    else
        live = r->next;
    if (r->next) r->next->prev = r->prev;
    pthread_mutex_unlock(&listing);
    free(r);
}

static int delete_record(MPI_Datatype type, int key, void *value, void *extra)
{
    (void)type, (void)key, (void)extra;
    drop(value);
    return MPI_SUCCESS;
}

void mg_tune__types_start(void)
{
    if (PMPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, delete_record, &record_key, NULL) != MPI_SUCCESS)
        record_key = MPI_KEYVAL_INVALID;
}

void mg_tune__types_set_form(int form) { atomic_store_explicit(&normal_form, form, memory_order_relaxed); }

void mg_tune__types_stop(void)
{
    for (;;) {
        pthread_mutex_lock(&listing);
        type_record *r = live;
        pthread_mutex_unlock(&listing);
        if (!r) break;
        /* the callback drops a derived type's record; MPI_Finalize need not */
        if (r->named || PMPI_Type_delete_attr(r->type, record_key) != MPI_SUCCESS) drop(r);
    }
    if (record_key != MPI_KEYVAL_INVALID) PMPI_Type_free_keyval(&record_key);
    mg_hmap_clear(&records);
    bury_dead();
    mg_tune__forms_free();
}

/* MPI_Type_get_envelope's combiner. A type made by an MPI-4 `_c` constructor
 * can only be asked with MPI_Type_get_envelope_c (MPICH raises an error on
 * the int call, through the application's error handler), so where the stack
 * has it, every question the library asks of a type goes through it. */
static int envelope(MPI_Datatype type, int *combiner)
{
#ifdef MG_HAVE_MPI_LARGE_COUNT
    MPI_Count ni, na, nc, nd;
    return PMPI_Type_get_envelope_c(type, &ni, &na, &nc, &nd, combiner);
#else
    int ni, na, nd;
    return PMPI_Type_get_envelope(type, &ni, &na, &nd, combiner);
#endif
}

static int is_predefined_combiner(int c)
{
    return c == MPI_COMBINER_NAMED || c == MPI_COMBINER_F90_REAL || c == MPI_COMBINER_F90_COMPLEX ||
           c == MPI_COMBINER_F90_INTEGER;
}

int mg_type_combiner(MPI_Datatype type)
{
    int c;
    return type != MPI_DATATYPE_NULL && envelope(type, &c) == MPI_SUCCESS ? c : -1;
}

int mg_type_predefined(MPI_Datatype type) { return is_predefined_combiner(mg_type_combiner(type)); }

/* The record of type, made by the first call that asks (NULL if memory ran
 * out or the library is not started: then ask MPI). *size_rc is MPI's error
 * if the size could not be had. */
static type_record *make(MPI_Datatype type, int *size_rc)
{
    type_record *r = NULL;
    int found = 0, combiner;
    pthread_mutex_lock(&making);
    if ((*size_rc = envelope(type, &combiner)) != MPI_SUCCESS) goto out;
    /* predefined: never freed (the f90 types too), and no attribute may be set on them */
    int named = is_predefined_combiner(combiner);
    if (!named && PMPI_Type_get_attr(type, record_key, &r, &found) != MPI_SUCCESS) goto out;
    if (!found) {
        MPI_Count size;
        if ((*size_rc = PMPI_Type_size_x(type, &size)) != MPI_SUCCESS || !(r = malloc(sizeof *r))) goto out;
        *r = (type_record){.size = size == MPI_UNDEFINED ? -1 : size, .type = type, .named = named};
        link_record(r); /* before the callback can see it */
        if (!named && PMPI_Type_set_attr(type, record_key, r) != MPI_SUCCESS) {
            drop(r);
            r = NULL;
            goto out;
        }
    }
    /* found but not in the map: an earlier insertion ran out of memory */
    if (mg_hmap_put(&records, MG_HANDLE_KEY(type), r) != 0) r = NULL;
out:
    pthread_mutex_unlock(&making);
    return r;
}

/* The record of type, made if there is none yet (NULL: see make). */
static type_record *record_of(MPI_Datatype type, int *rc)
{
    type_record *r = mg_hmap_get(&records, MG_HANDLE_KEY(type));
    *rc = MPI_SUCCESS;
    if (!r && record_key != MPI_KEYVAL_INVALID) r = make(type, rc);
    return r;
}

_Atomic unsigned mg_tune__commits;

void mg_tune__type_committed(MPI_Datatype type)
{
    int rc;
    type_record *r = record_of(type, &rc);
    if (r && !r->named) atomic_store_explicit(&r->committed, 1, memory_order_release);
    atomic_fetch_add_explicit(&mg_tune__commits, 1, memory_order_release);
}

int mg_tune__type_is_committed(MPI_Datatype type)
{
    type_record *r = mg_hmap_get(&records, MG_HANDLE_KEY(type));
    return r && atomic_load_explicit(&r->committed, memory_order_acquire);
}

/* The plan of a committed derived type (planning held): &no_plan where the
 * calls stay native. */
static mg_type_plan *make_plan(MPI_Datatype type)
{
    mg_dt *dt = NULL;
    int ok = mg_dt_from_mpi(type, &dt) == MG_DT_SUCCESS && mg_dt_size(dt) > 0 &&
             /* count elements in one block: nothing to repair */
             !(mg_dt_blocks(dt) == 1 && mg_dt_extent(dt) == mg_dt_size(dt));
    mg_type_plan *p = ok ? calloc(1, sizeof *p) : NULL;
    if (p) {
        atomic_init(&p->refs, 1);
        p->dt = dt;
        p->size = mg_dt_size(dt);
        p->normal = MPI_DATATYPE_NULL;
        int form = atomic_load_explicit(&normal_form, memory_order_relaxed);
        if (mg_dt_same_signature(dt) && mg_dt_to_mpi_form(dt, 1, form, &p->normal) != MG_DT_SUCCESS)
            p->normal = MPI_DATATYPE_NULL;
        /* never hand the library a form it packs wrongly (form_verdicts.h) */
        if (p->normal != MPI_DATATYPE_NULL && !mg_tune__forms_accept(p->normal)) {
            PMPI_Type_free(&p->normal);
            p->refused = 1;
        }
        mg_dt_shape(dt, p->shape, sizeof p->shape);
        p->block = mg_dt_mean_block(dt);
    } else {
        mg_dt_free(dt);
    }
    return p ? p : &no_plan;
}

const mg_type_plan *mg_tune__type_plan(MPI_Datatype type)
{
    type_record *r = mg_hmap_get(&records, MG_HANDLE_KEY(type));
    if (!r || !atomic_load_explicit(&r->committed, memory_order_acquire)) return NULL;
    mg_type_plan *p = atomic_load_explicit(&r->plan, memory_order_acquire);
    if (!p) {
        pthread_mutex_lock(&planning);
        bury_dead();
        if (!(p = atomic_load_explicit(&r->plan, memory_order_acquire))) {
            p = make_plan(type);
            atomic_store_explicit(&r->plan, p, memory_order_release);
        }
        pthread_mutex_unlock(&planning);
    }
    return p == &no_plan ? NULL : p;
}

MPI_Count mg_tune__type_size(MPI_Datatype type)
{
    int rc;
    type_record *r = record_of(type, &rc);
    if (r) return r->size;
    /* without a record, nothing tells when the handle names another type:
     * drop what every thread remembered of its calls (intercept.c) */
    atomic_fetch_add_explicit(&mg_hmap_deletions, 1, memory_order_release);
    MPI_Count size;
    if (rc != MPI_SUCCESS || PMPI_Type_size_x(type, &size) != MPI_SUCCESS || size == MPI_UNDEFINED) return -1;
    return size;
}

/* The combiner, the first three count-like arguments (count, blocklength,
 * stride; an hvector's stride in bytes) and the one inner type of t, for the
 * combiners one_run recognizes, whether t came from a classic or an MPI-4
 * `_c` constructor (whose arguments are in the large-count array); 0 for any
 * other type. */
static int small_contents(MPI_Datatype t, int *comb, MPI_Count args[3], MPI_Datatype *inner)
{
    int ints[3] = {0, 0, 0};
    MPI_Aint aints[2] = {0, 0};
#ifdef MG_HAVE_MPI_LARGE_COUNT
    MPI_Count ni, na, nc, nd, counts[3] = {0, 0, 0};
    if (PMPI_Type_get_envelope_c(t, &ni, &na, &nc, &nd, comb) != MPI_SUCCESS) return 0;
    if (*comb == MPI_COMBINER_NAMED) return 1;
    if (ni > 3 || na > 2 || nc > 3 || nd != 1) return 0;
    if (PMPI_Type_get_contents_c(t, ni, na, nc, nd, ints, aints, counts, inner) != MPI_SUCCESS) return 0;
    if (nc > 0) {
        for (int k = 0; k < 3; k++) args[k] = counts[k];
        return 1;
    }
#else
    int ni, na, nd;
    if (PMPI_Type_get_envelope(t, &ni, &na, &nd, comb) != MPI_SUCCESS) return 0;
    if (*comb == MPI_COMBINER_NAMED) return 1;
    if (ni > 3 || na > 2 || nd != 1) return 0;
    if (PMPI_Type_get_contents(t, ni, na, nd, ints, aints, inner) != MPI_SUCCESS) return 0;
#endif
    for (int k = 0; k < 3; k++) args[k] = ints[k];
    if (*comb == MPI_COMBINER_HVECTOR) args[2] = aints[0];
    return 1;
}

/* 1 if one element of t is a gap-free run of size bytes in typemap order
 * starting at its true lower bound. Conservative: 0 when not sure. */
static int one_run(MPI_Datatype t, int depth)
{
    int comb;
    MPI_Count a[3] = {0, 0, 0};
    MPI_Datatype inner = MPI_DATATYPE_NULL;
    MPI_Count size, lb, ext, tlb, text;
    if (PMPI_Type_size_x(t, &size) != MPI_SUCCESS || size == MPI_UNDEFINED) return 0;
    if (size == 0) return 1;
    if (PMPI_Type_get_true_extent_x(t, &tlb, &text) != MPI_SUCCESS || text != size) return 0;
    if (depth > 16 || !small_contents(t, &comb, a, &inner)) return 0;
    /* A predefined type with size == true extent: one block (pair types like
     * MPI_SHORT_INT have a hole and were rejected above). */
    if (comb == MPI_COMBINER_NAMED) return 1;

    int r = 0, inner_run = one_run(inner, depth + 1);
    MPI_Count isize = 0;
    int ok = inner_run && PMPI_Type_size_x(inner, &isize) == MPI_SUCCESS &&
             PMPI_Type_get_extent_x(inner, &lb, &ext) == MPI_SUCCESS;
    /* copies of inner back to back are one run iff its extent is its size */
    int packs_tight = ok && ext == isize;
    switch (comb) {
    case MPI_COMBINER_DUP:
    case MPI_COMBINER_RESIZED: r = inner_run; break;
    case MPI_COMBINER_CONTIGUOUS: r = ok && (a[0] <= 1 || packs_tight); break;
    case MPI_COMBINER_VECTOR: /* count, blocklength, stride (in extents) */
        r = ok && ((a[0] <= 1 && a[1] <= 1) || (packs_tight && (a[0] <= 1 || a[1] == a[2])));
        break;
    case MPI_COMBINER_HVECTOR: /* count, blocklength; stride in bytes */
        r = ok && ((a[0] <= 1 && a[1] <= 1) || (packs_tight && (a[0] <= 1 || a[2] == a[1] * ext)));
        break;
    default: r = 0; break;
    }
    if (!mg_type_predefined(inner)) PMPI_Type_free(&inner);
    return r;
}

/* What mg_type_contiguous needs of a type of size > 0: RUN_NONE, or one run
 * starting at *tlb (RUN_DENSE: and elements back to back). */
enum { RUN_UNKNOWN = 0, RUN_NONE, RUN_ONE, RUN_DENSE };
static int run_of(MPI_Datatype type, MPI_Count size, MPI_Aint *tlb)
{
    MPI_Count lb, ext, t, text;
    if (PMPI_Type_get_extent_x(type, &lb, &ext) != MPI_SUCCESS ||
        PMPI_Type_get_true_extent_x(type, &t, &text) != MPI_SUCCESS || text != size || !one_run(type, 0))
        return RUN_NONE;
    *tlb = (MPI_Aint)t;
    return ext == size ? RUN_DENSE : RUN_ONE;
}

int mg_type_contiguous(MPI_Count count, MPI_Datatype type, MPI_Aint *offset)
{
    if (offset) *offset = 0;
    if (count < 0 || type == MPI_DATATYPE_NULL) return 0;
    int rc;
    type_record *r = record_of(type, &rc);
    MPI_Count size;
    if (r)
        size = r->size;
    else if (PMPI_Type_size_x(type, &size) != MPI_SUCCESS || size == MPI_UNDEFINED)
        return 0;
    if (size < 0) return 0;
    if (count == 0 || size == 0) return 1;
    MPI_Aint tlb = 0;
    int run = r ? atomic_load_explicit(&r->run, memory_order_acquire) : RUN_UNKNOWN;
    if (run == RUN_UNKNOWN) {
        run = run_of(type, size, &tlb);
        if (r) {
            /* racing threads store the same answer */
            atomic_store_explicit(&r->tlb, tlb, memory_order_relaxed);
            atomic_store_explicit(&r->run, run, memory_order_release);
        }
    } else {
        tlb = atomic_load_explicit(&r->tlb, memory_order_relaxed);
    }
    if (run == RUN_NONE || (count > 1 && run != RUN_DENSE)) return 0;
    if (offset) *offset = tlb;
    return 1;
}

MPI_Count mg_type_bytes(MPI_Count count, MPI_Datatype type)
{
    if (count < 0 || type == MPI_DATATYPE_NULL) return -1;
    MPI_Count size = mg_tune__type_size(type), r;
    if (size < 0 || __builtin_mul_overflow(count, size, &r)) return -1;
    return r;
}
