/* Online selection's state machine (online.h). Every transition depends on
 * the key's call count and on agreed values only, never on a rank's own
 * times: ranks that make the same calls of a key stay in the same state. */
#define _POSIX_C_SOURCE 200809L
#include "online.h"
#include "tune_internal.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define POLICY                                                                                                \
    .warmup = 8, .rounds = 5, .first_look = 2, .drop = 2.0, .window = 1024, .margin = 0.5, .max_explorations = 3, \
    .budget = 16384
const mg_online_policy mg_online_default_policy = {POLICY, .by_fastest = 0, .look_again = 0};
const mg_online_policy mg_online_side_policy = {POLICY, .by_fastest = 1, .look_again = 4};

#define UNMEASURED (-1.0) /* a time no rank measured (the reduction is a maximum: any rank's time wins) */

uint64_t mg_online_clock_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The median of v[0..n-1] (n >= 1), which it sorts. */
static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The policy's rounds, within what a key holds. */
static int rounds(const mg_online_policy *p)
{
    return p->rounds < 1 ? 1 : p->rounds > MG_ONLINE_ROUNDS ? MG_ONLINE_ROUNDS : p->rounds;
}

static int alive_count(const mg_online_key *k) { return __builtin_popcount(k->alive); }

/* The alive candidate of position i (0 <= i < alive_count). */
static int alive_at(const mg_online_key *k, int i)
{
    for (int c = 0; c < k->n; c++)
        if ((k->alive >> c & 1u) && i-- == 0) return c;
    return 0;
}

static void settle(mg_online_key *k, int c, double seconds)
{
    k->phase = MG_ONLINE_SETTLED;
    k->chosen = c;
    k->chosen_s = seconds;
    k->since = 0;
    k->window_count = 0;
    k->look_again_at = 0;
}

/* Whether the last look of the key's exploration compares fastest calls (the first look always does: it
 * drops the clearly slower). A look again compares medians: the peers have settled by then, and a median
 * sees a candidate whose calls are fast only now and then (normalized, at times, where a peer packs). */
static int by_fastest(const mg_online_key *k, const mg_online_policy *p)
{
    return p->by_fastest && k->explorations == 1;
}

/* Settles at the end of an exploration; after the first, the policy may look again later. */
static void settle_explored(mg_online_key *k, const mg_online_policy *p, int c, double seconds)
{
    settle(k, c, seconds);
    if (k->explorations == 1 && p->look_again > 0) k->look_again_at = k->calls * (uint64_t)p->look_again;
}

/* Reserves an exploration's calls from the key's budget; 0 where they are not left. */
static int afford(mg_online_key *k, const mg_online_policy *p)
{
    uint64_t cost = (uint64_t)rounds(p) * (uint64_t)k->n;
    if (!k->budget) return 1;
    if (*k->budget < cost) {
        k->over_budget = 1;
        return 0;
    }
    *k->budget -= cost;
    return 1;
}

static void explore(mg_online_key *k)
{
    k->phase = MG_ONLINE_EXPLORE;
    k->alive = (1u << k->n) - 1u;
    k->since = 0;
    k->rounds_done = 0;
    k->explorations++;
    for (int c = 0; c < k->n; c++) k->count[c] = 0;
}

void mg_online_init(mg_online_key *k, const int *impl, int n, uint64_t *budget)
{
    memset(k, 0, sizeof *k);
    k->budget = budget;
    k->n = n < 1 ? 1 : n > MG_ONLINE_MAX ? MG_ONLINE_MAX : n;
    for (int c = 0; c < k->n; c++) {
        k->impl[c] = impl[c];
        k->agreed[c] = UNMEASURED;
    }
    k->phase = MG_ONLINE_WARMUP;
    k->alive = 1u;
}

int mg_online__next_exploring(const mg_online_key *k, int *timed)
{
    if (k->phase == MG_ONLINE_EXPLORE) {
        *timed = 1;
        return alive_at(k, (int)(k->since % (uint64_t)alive_count(k)));
    }
    *timed = 0; /* warm-up: native, untimed */
    return 0;
}

int mg_online__done_slow(mg_online_key *k, const mg_online_policy *p, int c, double seconds)
{
    k->calls++;
    k->served[c]++;
    k->since++;
    switch (k->phase) {
    case MG_ONLINE_WARMUP:
        if (k->since >= (uint64_t)p->warmup) {
            if (k->n == 1 || !afford(k, p))
                settle(k, 0, UNMEASURED); /* nothing else applies, or the budget is spent: native */
            else
                explore(k);
        }
        return 0;
    case MG_ONLINE_EXPLORE: {
        k->explore_calls++;
        /* (untimed: a nonblocking side started before the exploration, online_dt.c) */
        if (seconds >= 0 && k->count[c] < MG_ONLINE_ROUNDS) k->sample[c][k->count[c]++] = seconds;
        int n = alive_count(k);
        if (k->since % (uint64_t)n != 0) return 0;
        k->rounds_done++;
        return k->rounds_done == p->first_look || k->rounds_done >= rounds(p);
    }
    default:
        /* nothing to choose from, or no budget to choose again: no window, no decision point */
        if (k->n == 1 || k->over_budget) return 0;
        if (seconds >= 0 && k->window_count < MG_ONLINE_WINDOW) k->window[k->window_count++] = seconds;
        return (p->window > 0 && k->since % (uint64_t)p->window == 0) || k->calls == k->look_again_at;
    }
}

int mg_online_to_agree(const mg_online_key *k, const mg_online_policy *p, double *out)
{
    double v[MG_ONLINE_WINDOW > MG_ONLINE_ROUNDS ? MG_ONLINE_WINDOW : MG_ONLINE_ROUNDS];
    if (k->phase == MG_ONLINE_SETTLED) {
        memcpy(v, k->window, sizeof(double) * (size_t)k->window_count);
        out[0] = k->window_count ? median(v, k->window_count) : UNMEASURED;
        return 1;
    }
    for (int c = 0; c < k->n; c++) {
        int m = k->count[c];
        out[c] = UNMEASURED;
        if (!(k->alive >> c & 1u) || m == 0) continue;
        memcpy(v, k->sample[c], sizeof(double) * (size_t)m);
        if (k->rounds_done < rounds(p) || by_fastest(k, p)) {
            qsort(v, (size_t)m, sizeof *v, cmp_double);
            out[c] = v[0];
        } else {
            out[c] = median(v, m);
        }
    }
    return k->n;
}

void mg_online_decide(mg_online_key *k, const mg_online_policy *p, const double *agreed)
{
    if (k->phase == MG_ONLINE_SETTLED) {
        double now = agreed[0];
        if (k->look_again_at && k->calls >= k->look_again_at) { /* (its window goes on if it cannot) */
            k->look_again_at = 0;
            if (k->explorations < p->max_explorations && afford(k, p)) {
                explore(k);
                return;
            }
        }
        if (k->chosen_s <= 0 && now > 0)
            k->chosen_s = now; /* chosen at the first look (by fastest calls): the first window is its baseline */
        else if (now >= 0 && k->chosen_s > 0 && now > (1 + p->margin) * k->chosen_s &&
                 k->explorations < p->max_explorations && afford(k, p)) {
            explore(k);
            return;
        }
        k->since = 0, k->window_count = 0;
        return;
    }
    if (k->phase != MG_ONLINE_EXPLORE) return;
    int best = -1;
    for (int c = 0; c < k->n; c++) {
        if (!(k->alive >> c & 1u)) continue;
        k->agreed[c] = agreed[c];
        if (agreed[c] >= 0 && (best < 0 || agreed[c] < agreed[best])) best = c;
    }
    if (best < 0) { /* nothing measured anywhere (cannot happen for a call that ran): stay native */
        settle(k, 0, UNMEASURED);
        return;
    }
    if (k->rounds_done < rounds(p)) { /* the first look: drop the clearly slower */
        for (int c = 0; c < k->n; c++)
            if ((k->alive >> c & 1u) && agreed[c] > p->drop * agreed[best]) k->alive &= ~(1u << c);
        if (alive_count(k) > 1) {
            k->since = 0; /* the round robin of the candidates left starts anew */
            return;
        }
        settle_explored(k, p, best, UNMEASURED); /* its median is not known yet */
        return;
    }
    settle_explored(k, p, best, by_fastest(k, p) ? UNMEASURED : agreed[best]);
}

/* ---- the keys of the process ---- */

/* keys of one communicator at most: beyond, its new keys run natively. Per
 * communicator, as its keys are the same on its ranks: every rank stops alike. */
enum { MAX_KEYS = 1024 };

/* A key's identity, the same on every rank: a reduction's derived datatype and
 * user-defined operation are keyed as such, not by their handles, which differ
 * between ranks (and between calls of a program that makes them anew). */
typedef struct {
    int coll;
    MPI_Count bytes;
    int reduction;
    MPI_Datatype elem; /* predefined, or MPI_DATATYPE_NULL: derived (or no reduction) */
    MPI_Op op;         /* predefined, or MPI_OP_NULL: user-defined (or no reduction) */
    const mg_online_names *names; /* NULL: the catalog's collective */
    mg_online_key key;
} keyed;

struct mg_online_table {
    int size;
    uint64_t budget; /* exploration calls left (mg_online_policy.budget) */
    keyed **keys; /* each key allocated alone: a key never moves while a call holds it */
    int n, cap;
    mg_online_table *next;
};

enum { GONE_TEXT_MAX = 1 << 20 }; /* report text kept of freed communicators' keys */

static struct {
    pthread_mutex_t mu;
    mg_online_table *tables;
    char *gone;       /* the report lines of the keys of freed communicators */
    size_t gone_len;
    long gone_left_out; /* keys of freed communicators beyond GONE_TEXT_MAX */
} online = {.mu = PTHREAD_MUTEX_INITIALIZER};

/* Changed whenever a table is freed: a thread's last key is trusted only under the generation it saw. */
static _Atomic unsigned generation;

/* Each thread's last key: a loop of one call finds it without the lock. */
static _Thread_local struct {
    const mg_online_table *t;
    unsigned gen;
    int coll;
    MPI_Count bytes;
    MPI_Datatype elem;
    MPI_Op op;
    mg_online_key *k;
} last __attribute__((tls_model("initial-exec")));

/* A rank without the memory of a key would run another implementation than
 * its peers, and their call would hang: the job stops instead, saying why. */
static void out_of_memory(void) { mg_tune__abort_diverging("online mode: out of memory for the state of a call"); }

mg_online_table *mg_tune__online_table(int size)
{
    mg_online_table *t = calloc(1, sizeof *t);
    if (!t) {
        out_of_memory();
        return NULL;
    }
    t->size = size;
    t->budget = mg_online_default_policy.budget;
    pthread_mutex_lock(&online.mu);
    t->next = online.tables;
    online.tables = t;
    pthread_mutex_unlock(&online.mu);
    return t;
}

/* online.mu held: a new key of t. */
static keyed *add(mg_online_table *t)
{
    if (t->n == t->cap) {
        int cap = t->cap ? 2 * t->cap : 8;
        keyed **grown = realloc(t->keys, sizeof *grown * (size_t)cap);
        if (!grown) return NULL;
        t->keys = grown, t->cap = cap;
    }
    keyed *e = malloc(sizeof *e);
    if (e) t->keys[t->n++] = e;
    return e;
}

/* online.mu held: the key of t with this identity, or NULL. */
static mg_online_key *find(const mg_online_table *t, int coll, MPI_Count bytes, int reduction, MPI_Datatype elem,
                           MPI_Op op)
{
    for (int i = 0; i < t->n; i++) {
        keyed *e = t->keys[i];
        if (e->coll == coll && e->bytes == bytes && e->reduction == reduction && e->elem == elem && e->op == op)
            return &e->key;
    }
    return NULL;
}

mg_online_key *mg_tune__online_lookup(mg_online_table *t, int coll, MPI_Count bytes, MPI_Datatype elem, MPI_Op op,
                                      int (*cands)(void *ctx, int *impl), void *ctx, const mg_online_names *names)
{
    unsigned gen = atomic_load_explicit(&generation, memory_order_acquire);
    if (last.t == t && last.gen == gen && last.coll == coll && last.bytes == bytes && last.elem == elem &&
        last.op == op)
        return last.k;
    int reduction = op != MPI_OP_NULL;
    MPI_Datatype celem = reduction && mg_type_predefined(elem) ? elem : MPI_DATATYPE_NULL;
    MPI_Op cop = reduction && strcmp(mg_tune__op_name(op), "user") != 0 ? op : MPI_OP_NULL;
    pthread_mutex_lock(&online.mu);
    mg_online_key *k = find(t, coll, bytes, reduction, celem, cop);
    pthread_mutex_unlock(&online.mu);
    if (!k && t->n < MAX_KEYS) {
        /* a new key: its candidates, the call's own look at what applies, found outside the lock (only this
         * thread calls on t: MPI orders a communicator's collectives) */
        int impl[MG_ONLINE_MAX], n = cands(ctx, impl), full = 0;
        pthread_mutex_lock(&online.mu);
        keyed *e = add(t);
        if (e) {
            *e = (keyed){.coll = coll, .bytes = bytes, .reduction = reduction, .elem = celem, .op = cop,
                         .names = names};
            mg_online_init(&e->key, impl, n, &t->budget);
            k = &e->key;
        } else {
            full = 1;
        }
        pthread_mutex_unlock(&online.mu);
        if (full) out_of_memory();
    }
    if (k) last.t = t, last.gen = gen, last.coll = coll, last.bytes = bytes, last.elem = elem, last.op = op, last.k = k;
    return k;
}

void mg_online_write_value(FILE *out, const mg_online_key *k, const char *(*label)(const void *ctx, int impl),
                           const void *ctx)
{
    fprintf(out, "chosen=%s calls=%llu explore_calls=%llu explorations=%d over_budget=%d times=",
            k->phase == MG_ONLINE_SETTLED ? label(ctx, k->impl[k->chosen]) : "-", (unsigned long long)k->calls,
            (unsigned long long)k->explore_calls, k->explorations, k->over_budget);
    for (int j = 0; j < k->n; j++) fprintf(out, "%s%s:%.6g", j ? "," : "", label(ctx, k->impl[j]), k->agreed[j]);
    fprintf(out, " served=");
    for (int j = 0; j < k->n; j++)
        fprintf(out, "%s%s:%llu", j ? "," : "", label(ctx, k->impl[j]), (unsigned long long)k->served[j]);
    fprintf(out, "\n");
}

/* The label of an implementation of the key e (its names, or the catalog's collective). */
static const char *key_label(const void *ctx, int impl)
{
    const keyed *e = ctx;
    return e->names ? e->names->labels[impl] : mg_tune__impl_label((mg_coll)e->coll, impl);
}

/* online.mu held: the `#@tune_online` lines of t's keys. */
static void table_lines(FILE *out, const mg_online_table *t)
{
    for (int i = 0; i < t->n; i++) {
        const keyed *e = t->keys[i];
        mg_coll c = (mg_coll)e->coll;
        char elem[128];
        fprintf(out, "#@tune_online[%s %d %lld", e->names ? e->names->mpi_name : mg_tune__table(c)->mpi_name, t->size,
                (long long)e->bytes);
        if (e->reduction)
            fprintf(out, " %s %s",
                    e->elem == MPI_DATATYPE_NULL ? "derived" : mg_tune__elem_name(e->elem, elem, sizeof elem),
                    e->op == MPI_OP_NULL ? "user" : mg_tune__op_name(e->op));
        fprintf(out, "]=");
        mg_online_write_value(out, &e->key, key_label, e);
    }
}

static void free_keys(mg_online_table *t)
{
    for (int i = 0; i < t->n; i++) free(t->keys[i]);
    free(t->keys);
    free(t);
}

void mg_tune__online_free_table(mg_online_table *t)
{
    char *text = NULL;
    size_t len = 0;
    pthread_mutex_lock(&online.mu);
    for (mg_online_table **p = &online.tables; *p; p = &(*p)->next)
        if (*p == t) {
            *p = t->next;
            break;
        }
    /* its lines stay for the report, within a bound: a program may make a communicator per step */
    FILE *f = t->n ? open_memstream(&text, &len) : NULL;
    if (f) {
        table_lines(f, t);
        fclose(f);
    }
    char *grown = text && online.gone_len + len <= GONE_TEXT_MAX ? realloc(online.gone, online.gone_len + len + 1)
                                                                 : NULL;
    if (grown) {
        memcpy(grown + online.gone_len, text, len + 1);
        online.gone = grown, online.gone_len += len;
    } else {
        online.gone_left_out += t->n;
    }
    free(text);
    free_keys(t);
    atomic_fetch_add_explicit(&generation, 1u, memory_order_release);
    pthread_mutex_unlock(&online.mu);
}

void mg_tune__online_report(FILE *out)
{
    pthread_mutex_lock(&online.mu);
    for (const mg_online_table *t = online.tables; t; t = t->next) table_lines(out, t);
    if (online.gone_len) fputs(online.gone, out);
    if (online.gone_left_out) fprintf(out, "#@tune_online_left_out=%ld\n", online.gone_left_out);
    pthread_mutex_unlock(&online.mu);
}

void mg_tune__online_stop(void)
{
    pthread_mutex_lock(&online.mu);
    while (online.tables) {
        mg_online_table *t = online.tables;
        online.tables = t->next;
        free_keys(t);
    }
    free(online.gone);
    online.gone = NULL, online.gone_len = 0, online.gone_left_out = 0;
    atomic_fetch_add_explicit(&generation, 1u, memory_order_release);
    pthread_mutex_unlock(&online.mu);
}
