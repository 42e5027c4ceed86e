/* Online mode's datatype strategies (online_dt.h): the side of a one-sided
 * point-to-point call that carries a derived datatype no profile covers
 * learns in the run which of native, normalized and pack is fastest for its
 * (operation, type layout, bytes), with online.h's state machine (the sides'
 * policy); so does a blocking v, w or neighbourhood collective's rank, between
 * native and normalized (cbuild.c).
 *
 * The choice is the rank's own: either side of a point-to-point message may
 * use any strategy whatever the other does (strategy.c), so nothing is agreed
 * and each thread keeps its own keys (no lock on the call path). The time of a
 * side runs from before its packing to after its unpacking: a blocking call's,
 * or a nonblocking one's from its start to the return of the call that
 * completes it (pending.c carries the side there; a call its key does not
 * time is counted when the key picks, and carried nowhere). A sendrecv's two sides
 * share one time, so they are chosen together: the send side's key picks for
 * both and has the call's time (the receive side's own key only where the
 * send side has none: a predefined type, MPI_PROC_NULL). Several
 * nonblocking sides of one key may be in flight at once; each is timed as the
 * candidate it ran, and a side that ends after its key settled on another
 * candidate is not timed. */
#define _POSIX_C_SOURCE 200809L
#include "online_dt.h"
#include "../online.h"
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_KEYS = 64 }; /* per thread; a thread's later keys stay native */

/* A key is the layout, not the handle: a program that frees its types and makes them again (per phase, per
 * variant) goes on with what its earlier calls learnt, as a profile's rule (shape, mean block, bytes) would. */
typedef struct {
    mg_dtop op;
    MPI_Count bytes;
    char shape[sizeof ((mg_type_plan *)0)->shape];
    MPI_Count block;
    int normal; /* the type has a normal form the library packs right: normalized is a candidate */
    mg_online_key key;
} dt_key;

typedef struct dt_table dt_table;
struct dt_table {
    dt_key keys[MAX_KEYS];
    int n, last;
    uint64_t budget; /* exploration calls this thread may still make (mg_online_policy.budget) */
    dt_table *next;
};

static struct {
    pthread_mutex_t mu; /* the list of tables */
    dt_table *tables;
    unsigned generation; /* bumped at MPI_Finalize: every thread's table is gone */
} all = {.mu = PTHREAD_MUTEX_INITIALIZER};

static _Thread_local dt_table *mine __attribute__((tls_model("initial-exec")));
static _Thread_local unsigned mine_generation __attribute__((tls_model("initial-exec")));

int mg_tune__dt_online_takes(mg_dtop op)
{
    switch (op) {
    case MG_DTOP_SEND:
    case MG_DTOP_SSEND:
    case MG_DTOP_RSEND:
    case MG_DTOP_RECV:
    case MG_DTOP_SENDRECV_SEND:
    case MG_DTOP_SENDRECV_RECV:
    case MG_DTOP_REPLACE_SEND:
    case MG_DTOP_REPLACE_RECV:
    case MG_DTOP_ISEND:
    case MG_DTOP_ISSEND:
    case MG_DTOP_IRECV: return 1;
    default: return 0;
    }
}

static dt_table *my_table(void)
{
    unsigned gen = __atomic_load_n(&all.generation, __ATOMIC_ACQUIRE);
    if (mine && mine_generation == gen) return mine;
    dt_table *t = calloc(1, sizeof *t);
    if (!t) return NULL; /* a local choice: without memory the side just stays native */
    t->budget = mg_online_side_policy.budget;
    pthread_mutex_lock(&all.mu);
    t->next = all.tables;
    all.tables = t;
    mine_generation = all.generation;
    pthread_mutex_unlock(&all.mu);
    return mine = t;
}

static mg_online_key *lookup(mg_dtop op, const mg_type_plan *p, MPI_Count bytes, int may_pack)
{
    dt_table *t = my_table();
    if (!t) return NULL;
    int normal = p->normal != MPI_DATATYPE_NULL && !p->refused;
    for (int i = 0, j = t->last; i < t->n; i++, j = (j + 1) % t->n) {
        dt_key *e = &t->keys[j];
        if (e->op == op && e->bytes == bytes && e->block == p->block && e->normal == normal &&
            strcmp(e->shape, p->shape) == 0) {
            t->last = j;
            return &e->key;
        }
    }
    if (t->n == MAX_KEYS) return NULL;
    int impl[3], n = 0;
    impl[n++] = MG_DTS_NATIVE;
    if (normal) impl[n++] = MG_DTS_NORMALIZED;
    if (may_pack) impl[n++] = MG_DTS_PACK;
    dt_key *e = &t->keys[t->n];
    *e = (dt_key){.op = op, .bytes = bytes, .block = p->block, .normal = normal};
    memcpy(e->shape, p->shape, sizeof e->shape);
    e->shape[sizeof e->shape - 1] = 0;
    mg_online_init(&e->key, impl, n, &t->budget);
    t->last = t->n++;
    return &e->key;
}

/* Key k's call ran candidate c and took seconds (negative: not timed). */
static void account(mg_online_key *k, int c, double seconds)
{
    if (mg_online_done(k, &mg_online_side_policy, c, seconds)) {
        double v[MG_ONLINE_MAX]; /* the rank's own times decide: nothing to agree on */
        mg_online_to_agree(k, &mg_online_side_policy, v);
        mg_online_decide(k, &mg_online_side_policy, v);
    }
}

mg_dts mg_tune__dt_online_pick(mg_dt_online_mark *m, mg_dtop op, const mg_type_plan *p, MPI_Count bytes,
                               int may_pack)
{
    mg_online_key *k = lookup(op, p, bytes, may_pack);
    *m = (mg_dt_online_mark){.owner = mine, .picked = MG_DTS_DEFAULT};
    if (!k) return MG_DTS_NATIVE;
    m->cand = mg_online_next(k, &mg_online_side_policy, &m->timed);
    m->picked = (mg_dts)k->impl[m->cand];
    if (!m->timed) {
        /* counted now: nothing travels with the side (a nonblocking one is not tracked to its completion),
         * so most of a settled key's calls cost what tuned mode's do */
        account(k, m->cand, -1.0);
        return m->picked;
    }
    m->key = k;
    m->t0 = mg_online_clock_ns();
    return m->picked;
}

void mg_tune__dt_online_done(const mg_dt_online_mark *m)
{
    if (__builtin_expect(!m->key, 1)) return;
    unsigned gen = __atomic_load_n(&all.generation, __ATOMIC_ACQUIRE);
    if (m->owner != mine || mine_generation != gen) return; /* another thread's key, or keys gone */
    mg_online_key *k = m->key;
    /* a side of a candidate the key no longer explores or runs says nothing of the one it runs now */
    int stale = k->phase == MG_ONLINE_SETTLED ? m->cand != k->chosen : !(k->alive >> m->cand & 1u);
    account(k, m->cand, stale ? -1.0 : 1e-9 * (double)(mg_online_clock_ns() - m->t0));
}

static const char *strategy_label(const void *ctx, int impl)
{
    (void)ctx;
    return mg_tune__dts_name((mg_dts)impl);
}

void mg_tune__dt_online_report(FILE *out)
{
    pthread_mutex_lock(&all.mu);
    int thread = 0;
    for (const dt_table *t = all.tables; t; t = t->next, thread++)
        for (int i = 0; i < t->n; i++) {
            const dt_key *e = &t->keys[i];
            fprintf(out, "#@tune_online_dt[%s %lld %s %lld %d]=", mg_tune__dtop_name(e->op), (long long)e->bytes,
                    e->shape[0] ? e->shape : "-", (long long)e->block, thread);
            mg_online_write_value(out, &e->key, strategy_label, NULL);
        }
    pthread_mutex_unlock(&all.mu);
}

void mg_tune__dt_online_stop(void)
{
    pthread_mutex_lock(&all.mu);
    while (all.tables) {
        dt_table *t = all.tables;
        all.tables = t->next;
        free(t);
    }
    __atomic_add_fetch(&all.generation, 1u, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&all.mu);
}
