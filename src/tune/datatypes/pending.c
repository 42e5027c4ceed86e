/* Requests with a packed side (pending.h). Only PACK needs this: a normalized
 * side hands MPI a type of its own, which MPI keeps alive for the operation
 * even if the plan is freed meanwhile. Online mode also tracks the sides it
 * times (online_dt.h), whatever their strategy, to time them at completion;
 * such a side without a stream is freed natively when its request is.
 *
 * The entry of a request is found by its handle in a lock-free map; the
 * completion calls take the entries of their requests before the native call
 * and finish those very entries after it. A handle MPI has freed can name a
 * new request of another thread before its old entry is gone, so entries of
 * one handle form a list, newest (the live request's) first, and an entry
 * leaves it by identity. A request freed with
 * MPI_Request_free while its operation is in flight (nonblocking, or a
 * started persistent one) is not freed natively: it becomes an orphan the
 * library tests at the end of later calls, so that a receive is unpacked as
 * soon as the library can see it complete, and waits for at MPI_Finalize
 * (MPI requires every pending operation to be matched by then).
 *
 * A collective's request (mg_dt_coll: several blocks and the memory of its
 * native arguments) is tracked the same way; its entry is allocated with its
 * blocks, so that tracking it needs no memory: where the map cannot take it,
 * it waits in a list of its own that the look-ups search too. Freeing an
 * active collective request is erroneous in MPI-4.1; one the library tracks
 * becomes an orphan like any other, and is freed natively once complete. */
#define _POSIX_C_SOURCE 200809L
#include "pending.h"
#include "../handles.h"
#include "mpiguide/dt.h"
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

typedef struct mg_dt_pending entry;
struct mg_dt_pending {
    mg_dt_side x;      /* a point-to-point side */
    mg_dt_coll *coll;  /* or a collective's blocks (x unused) */
    MPI_Request req;
    int persistent, unpacked;
    int active; /* persistent: started and not yet completed */
    entry *older; /* the next entry of the same handle */
    entry *next_orphan;
    entry *next_spilled; /* in the list of entries the map could not take */
    int spilled;
};

/* A nonblocking or persistent collective's memory: its entry, its blocks and
 * the rest (64-byte aligned). */
typedef struct {
    entry e;
    mg_dt_coll c;
} coll_alloc;
enum { ALIGN = 64 };
#define COLL_HEAD (((sizeof(coll_alloc) + ALIGN - 1) / ALIGN) * ALIGN)

static mg_hmap entries = MG_HMAP_INIT;
static pthread_mutex_t lists_mu = PTHREAD_MUTEX_INITIALIZER; /* changes of the lists of one handle */
static _Atomic int npending;                                 /* entries and orphans */
static pthread_mutex_t orphans_mu = PTHREAD_MUTEX_INITIALIZER;
static _Atomic(entry *) orphans; /* written under orphans_mu */
static _Atomic int nspilled;      /* entries in `spilled`, under lists_mu */
static entry *spilled;

int mg_tune__dt_any_pending(void) { return atomic_load_explicit(&npending, memory_order_acquire) != 0; }

int mg_tune__dt_track(MPI_Request req, mg_dt_side *x, int persistent)
{
    entry *e = malloc(sizeof *e);
    if (!e) return -1;
    *e = (entry){.x = *x, .req = req, .persistent = persistent};
    if (x->plan) mg_tune__plan_hold(x->plan); /* (a native side timed by online mode has none) */
    atomic_fetch_add_explicit(&npending, 1, memory_order_acq_rel);
    pthread_mutex_lock(&lists_mu);
    e->older = mg_hmap_get(&entries, MG_HANDLE_KEY(req));
    int rc = mg_hmap_put(&entries, MG_HANDLE_KEY(req), e);
    pthread_mutex_unlock(&lists_mu);
    if (rc != 0) {
        atomic_fetch_sub_explicit(&npending, 1, memory_order_acq_rel);
        mg_tune__plan_release(x->plan);
        free(e);
        return -1;
    }
    return 0;
}

mg_dt_coll *mg_tune__dt_coll_new(size_t bytes, int blocking, char **mem)
{
    size_t head = ((sizeof(mg_dt_coll) + ALIGN - 1) / ALIGN) * ALIGN;
    if (blocking) {
        mg_lease *l = mg_lease_acquire(head + bytes, 0);
        mg_dt_coll *c = l ? mg_lease_msg(l, head + bytes) : NULL;
        if (!c) {
            if (l) mg_lease_release(l);
            return NULL;
        }
        *c = (mg_dt_coll){.lease = l};
        *mem = (char *)c + head;
        return c;
    }
    coll_alloc *a = aligned_alloc(ALIGN, COLL_HEAD + ((bytes + ALIGN - 1) / ALIGN) * ALIGN);
    if (!a) return NULL;
    memset(a, 0, sizeof *a);
    *mem = (char *)a + COLL_HEAD;
    return &a->c;
}

/* Packs (put) or unpacks one block. */
static int move(const mg_dt_block *b, int put)
{
    if (b->bytes <= 0) return MPI_SUCCESS;
    if (b->plan) {
        MPI_Count done = 0;
        int rc = put ? mg_dt_pack(b->plan->dt, b->user, b->count, 0, b->stream, b->bytes, &done)
                     : mg_dt_unpack(b->plan->dt, b->stream, b->bytes, 0, b->user, b->count, &done);
        return rc == MG_DT_SUCCESS && done == b->bytes ? MPI_SUCCESS : MPI_ERR_INTERN;
    }
    if (b->run >= 0) {
        if (put)
            memcpy(b->stream, b->user + b->run, (size_t)b->bytes);
        else
            memcpy(b->user + b->run, b->stream, (size_t)b->bytes);
        return MPI_SUCCESS;
    }
    return put ? mg_call_pack(b->user, b->count, b->type, b->stream, MPI_COMM_SELF)
               : mg_call_unpack(b->stream, b->user, b->count, b->type, MPI_COMM_SELF);
}

int mg_tune__dt_coll_put(const mg_dt_coll *c)
{
    int rc = MPI_SUCCESS;
    for (int i = 0; i < c->nput && rc == MPI_SUCCESS; i++) rc = move(&c->blocks[i], 1);
    return rc;
}

int mg_tune__dt_coll_get(const mg_dt_coll *c)
{
    int rc = MPI_SUCCESS;
    for (int i = c->nput; i < c->nput + c->nget && rc == MPI_SUCCESS; i++) rc = move(&c->blocks[i], 0);
    return rc;
}

void mg_tune__dt_coll_free(mg_dt_coll *c)
{
    if (!c) return;
    for (int i = 0; i < c->nput + c->nget; i++) mg_tune__plan_release(c->blocks[i].plan);
    if (c->lease)
        mg_lease_release(c->lease);
    else
        free((char *)c - offsetof(coll_alloc, c));
}

void mg_tune__dt_track_coll(MPI_Request req, mg_dt_coll *c, int persistent)
{
    entry *e = &((coll_alloc *)((char *)c - offsetof(coll_alloc, c)))->e;
    *e = (entry){.coll = c, .req = req, .persistent = persistent};
    atomic_fetch_add_explicit(&npending, 1, memory_order_acq_rel);
    pthread_mutex_lock(&lists_mu);
    e->older = mg_hmap_get(&entries, MG_HANDLE_KEY(req));
    if (mg_hmap_put(&entries, MG_HANDLE_KEY(req), e) != 0) {
        e->older = NULL;
        e->spilled = 1;
        e->next_spilled = spilled;
        spilled = e;
        atomic_fetch_add_explicit(&nspilled, 1, memory_order_release);
    }
    pthread_mutex_unlock(&lists_mu);
    mg_tune__dt_progress_orphans(0);
}

/* e leaves the list of its handle. */
static void unlink_entry(entry *e)
{
    uintptr_t key = MG_HANDLE_KEY(e->req);
    pthread_mutex_lock(&lists_mu);
    if (e->spilled) {
        entry **p = &spilled;
        while (*p && *p != e) p = &(*p)->next_spilled;
        if (*p) *p = e->next_spilled;
        e->spilled = 0;
        atomic_fetch_sub_explicit(&nspilled, 1, memory_order_release);
        pthread_mutex_unlock(&lists_mu);
        return;
    }
    entry *head = mg_hmap_get(&entries, key);
    if (head == e) {
        /* the older entries are of completed requests whose callers still hold
         * them: if memory runs out here they just stay out of the map */
        mg_hmap_take(&entries, key);
        if (e->older) mg_hmap_put(&entries, key, e->older);
    } else {
        entry *p = head;
        while (p && p->older != e) p = p->older;
        if (p) p->older = e->older;
    }
    pthread_mutex_unlock(&lists_mu);
}

mg_dt_pending *mg_tune__dt_pending_of(MPI_Request req)
{
    if (req == MPI_REQUEST_NULL) return NULL;
    entry *e = mg_hmap_get(&entries, MG_HANDLE_KEY(req));
    if (e || !atomic_load_explicit(&nspilled, memory_order_acquire)) return e;
    pthread_mutex_lock(&lists_mu);
    for (e = spilled; e && e->req != req; e = e->next_spilled)
        ;
    pthread_mutex_unlock(&lists_mu);
    return e;
}

static void unpack(entry *e, int rc, const MPI_Status *st)
{
    int cancelled = 0;
    if (e->coll) {
        /* a persistent collective's request is complete (so inactive) before its first start too */
        if (!e->unpacked && rc == MPI_SUCCESS && (!e->persistent || e->active)) mg_tune__dt_coll_get(e->coll);
        e->unpacked = 1;
        return;
    }
    if (e->x.send || e->unpacked) return;
    PMPI_Test_cancelled(st, &cancelled);
    if (!cancelled) mg_tune__dt_unpack(&e->x, rc, st);
    e->unpacked = 1;
}

static void release(entry *e)
{
    if (e->coll) {
        atomic_fetch_sub_explicit(&npending, 1, memory_order_acq_rel);
        mg_tune__dt_coll_free(e->coll); /* e with it */
        return;
    }
    mg_tune__dt_release(&e->x);
    mg_tune__plan_release(e->x.plan);
    atomic_fetch_sub_explicit(&npending, 1, memory_order_acq_rel);
    free(e);
}

void mg_tune__dt_before_start(MPI_Request req)
{
    entry *e = mg_tune__dt_pending_of(req);
    if (!e) return;
    e->unpacked = 0;
    e->active = 1;
    if (e->coll)
        mg_tune__dt_coll_put(e->coll);
    else if (e->x.send)
        mg_tune__dt_repack(&e->x);
}

void mg_tune__dt_completed(entry *e, MPI_Request now, int rc, const MPI_Status *st)
{
    if (!e || rc == MPI_ERR_PENDING) return; /* pending: not done */
    unpack(e, rc, st);
    e->active = 0;
    if (now == MPI_REQUEST_NULL && !e->persistent) {
        int cancelled = 0;
        if (!e->coll && e->x.online.key && rc == MPI_SUCCESS) {
            PMPI_Test_cancelled(st, &cancelled);
            if (!cancelled) mg_tune__dt_online_done(&e->x.online);
        }
        unlink_entry(e);
        release(e);
    }
}

void mg_tune__dt_peeked(MPI_Request req, int rc, const MPI_Status *st)
{
    entry *e = mg_tune__dt_pending_of(req);
    if (e) unpack(e, rc, st);
}

int mg_tune__dt_free(MPI_Request *req)
{
    entry *e = mg_tune__dt_pending_of(*req);
    if (!e) return PMPI_Request_free(req);
    unlink_entry(e);
    /* nothing of the library's is in flight: a persistent request not started, or a side online mode times
     * (untimed now) without a stream */
    if ((e->persistent && !e->active) || (!e->coll && e->x.s != MG_DTS_PACK)) {
        int rc = PMPI_Request_free(req);
        release(e);
        return rc;
    }
    /* in flight: MPI lets the operation complete, so its stream stays until
     * the library sees it complete (a persistent request is freed then) */
    pthread_mutex_lock(&orphans_mu);
    e->next_orphan = atomic_load_explicit(&orphans, memory_order_relaxed);
    atomic_store_explicit(&orphans, e, memory_order_release);
    pthread_mutex_unlock(&orphans_mu);
    *req = MPI_REQUEST_NULL;
    return MPI_SUCCESS;
}

void mg_tune__dt_progress_orphans(int wait)
{
    if (!atomic_load_explicit(&orphans, memory_order_acquire)) return;
    pthread_mutex_lock(&orphans_mu);
    entry *list = atomic_exchange_explicit(&orphans, NULL, memory_order_acq_rel);
    pthread_mutex_unlock(&orphans_mu);
    entry *keep = NULL;
    while (list) {
        entry *e = list, *next = e->next_orphan;
        MPI_Status st;
        int done = 0, rc = wait ? PMPI_Wait(&e->req, &st) : PMPI_Test(&e->req, &done, &st);
        if (wait || done) {
            unpack(e, rc, &st);
            if (e->persistent) PMPI_Request_free(&e->req); /* complete, so inactive */
            release(e);
        } else {
            e->next_orphan = keep;
            keep = e;
        }
        list = next;
    }
    if (keep) {
        pthread_mutex_lock(&orphans_mu);
        entry *last = keep;
        while (last->next_orphan) last = last->next_orphan;
        last->next_orphan = atomic_load_explicit(&orphans, memory_order_relaxed);
        atomic_store_explicit(&orphans, keep, memory_order_release);
        pthread_mutex_unlock(&orphans_mu);
    }
}
