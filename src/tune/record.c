/* Record mode's tables (record.h). Each thread adds its calls to a table of
 * its own, without a lock or a locked instruction: a loop that repeats one
 * call finds its entry at the first comparison. The tables are read once, at
 * MPI_Finalize, when no other thread may make calls. An entry holds the plans
 * of its types, so that their normal form can still be described then. */
#define _POSIX_C_SOURCE 200809L
#include "record.h"

#include "mpiguide/dt.h"
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

_Thread_local mg_rec_call mg_tune__rec_now __attribute__((tls_model("initial-exec")));
_Thread_local mg_rec_slot mg_tune__rec_slots[MG_REC_SLOTS] __attribute__((tls_model("initial-exec")));
static _Thread_local uint32_t rng __attribute__((tls_model("initial-exec")));

uint32_t mg_tune__rec_gap(mg_rec_slot *s)
{
    if (s->warm < MG_REC_WARM) {
        s->warm++;
        return 0;
    }
    if (!rng) rng = (uint32_t)mg_tune__rec_clock() | 1u; /* xorshift32: any nonzero seed */
    rng ^= rng << 13;
    rng ^= rng >> 17;
    rng ^= rng << 5;
    return rng % (2 * MG_REC_EVERY - 1); /* 0 to 2 x EVERY - 2: mean EVERY - 1 skipped */
}

typedef struct {
    const char *op, *impl;
    const mg_type_plan *types[2];
    MPI_Datatype elem;
    MPI_Op redop;
    char elem_name[32]; /* named when the entry is made: at MPI_Finalize a derived elem may be freed */
    MPI_Count bytes;
    int size, strategy;
    uint64_t calls, timed, ticks; /* ticks: of the timed calls */
} entry;

typedef struct table table;
struct table {
    entry **slots; /* open addressing over entry pointers (NULL: empty), power-of-two capacity */
    size_t n, cap;
    entry *recent[MG_REC_SLOTS]; /* the entry used last per slot of entry points: a loop of several kinds
                                  * of calls finds each at the first comparison */
    int lost; /* calls not recorded: out of memory */
    table *next;
};

static struct {
    pthread_mutex_t mu; /* the list of tables */
    table *threads;
    uint64_t start_ticks;     /* at MPI_Init */
    struct timespec start_ts; /* the same moment, in CLOCK_MONOTONIC */
} rec = {.mu = PTHREAD_MUTEX_INITIALIZER};

static _Thread_local table *mine __attribute__((tls_model("initial-exec")));

int mg_tune__rec_tsc;


/* The CPU says its time-stamp counter runs at one rate in every state
 * (constant_tsc and nonstop_tsc in /proc/cpuinfo). */
static int invariant_tsc(void)
{
#if defined(__x86_64__) || defined(__i386__)
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f) return 0;
    char line[4096];
    int found = 0;
    while (!found && fgets(line, sizeof line, f))
        if (strncmp(line, "flags", 5) == 0) found = strstr(line, " constant_tsc") && strstr(line, " nonstop_tsc");
    fclose(f);
    return found;
#else
    return 0;
#endif
}

const char *mg_tune__rec_clock_name(void) { return mg_tune__rec_tsc ? "tsc" : "monotonic"; }

void mg_tune__rec_start(void)
{
    mg_tune__rec_tsc = invariant_tsc();
    clock_gettime(CLOCK_MONOTONIC, &rec.start_ts);
    rec.start_ticks = mg_tune__rec_clock();
}

static int same(const entry *e, const mg_rec_call *c)
{
    return e->op == c->op && e->bytes == c->bytes && e->size == c->size && e->impl == c->impl &&
           e->strategy == c->strategy && e->types[0] == c->types[0] && e->types[1] == c->types[1] &&
           e->elem == c->elem && e->redop == c->redop;
}

static size_t slot_of(const mg_rec_call *c, size_t cap)
{
    uint64_t h = (uint64_t)(uintptr_t)c->op * 0x9E3779B97F4A7C15ull;
    h ^= (uint64_t)c->bytes * 0xBF58476D1CE4E5B9ull + (uint64_t)(unsigned)c->size;
    h ^= (uint64_t)(uintptr_t)c->types[0] * 0x94D049BB133111EBull ^ (uint64_t)(uintptr_t)c->types[1];
    h ^= (uint64_t)(uintptr_t)c->impl + (uint64_t)(unsigned)(c->strategy + 1);
    h ^= h >> 31;
    return (size_t)h & (cap - 1);
}

static entry **find(entry **slots, size_t cap, const mg_rec_call *c)
{
    for (size_t i = slot_of(c, cap);; i = (i + 1) & (cap - 1))
        if (!slots[i] || same(slots[i], c)) return &slots[i];
}

/* 0 on success. */
static int grow(table *t)
{
    size_t cap = t->cap ? 2 * t->cap : 64;
    entry **slots = calloc(cap, sizeof *slots);
    if (!slots) return -1;
    for (size_t i = 0; i < t->cap; i++)
        if (t->slots[i]) {
            entry *e = t->slots[i];
            mg_rec_call key = {.op = e->op, .bytes = e->bytes, .size = e->size, .impl = e->impl,
                               .strategy = e->strategy, .types = {e->types[0], e->types[1]}, .elem = e->elem,
                               .redop = e->redop};
            *find(slots, cap, &key) = e;
        }
    free(t->slots);
    t->slots = slots;
    t->cap = cap;
    return 0;
}

static table *my_table(void)
{
    if (mine) return mine;
    table *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    pthread_mutex_lock(&rec.mu);
    t->next = rec.threads;
    rec.threads = t;
    pthread_mutex_unlock(&rec.mu);
    return mine = t;
}

void mg_tune__rec_add(const mg_rec_call *c, uint64_t ticks)
{
    table *t = mine;
    entry *r = t ? t->recent[MG_REC_SLOT(c->op)] : NULL;
    if (__builtin_expect(r && same(r, c), 1)) {
        r->calls++;
        r->timed += (uint64_t)c->timed;
        r->ticks += ticks;
        return;
    }
    if (!(t = my_table())) return;
    if ((t->n + 1) * 10 > t->cap * 7 && grow(t) != 0) {
        t->lost++;
        return;
    }
    entry **slot = find(t->slots, t->cap, c);
    if (!*slot) {
        entry *e = malloc(sizeof *e);
        if (!e) {
            t->lost++;
            return;
        }
        *e = (entry){.op = c->op, .impl = c->impl, .types = {c->types[0], c->types[1]}, .elem = c->elem,
                     .redop = c->redop, .bytes = c->bytes, .size = c->size, .strategy = c->strategy};
        for (int k = 0; k < 2; k++)
            if (e->types[k]) mg_tune__plan_hold(e->types[k]);
        char name[128];
        snprintf(e->elem_name, sizeof e->elem_name, "%s", mg_tune__elem_name(c->elem, name, sizeof name));
        *slot = e;
        t->n++;
        if (!c->timed) mg_tune__rec_slots[MG_REC_SLOT(c->op)].skip = 0; /* a new kind of call: time the next */
    }
    r = t->recent[MG_REC_SLOT(c->op)] = *slot;
    r->calls++;
    r->timed += (uint64_t)c->timed;
    r->ticks += ticks;
}

/* An entry's ticks, estimated from its timed calls; one that has none (a few
 * calls among many of its function, none drawn) takes the mean timed call of
 * its function in every thread (a function's first call is timed). Under rec.mu. */
static double estimated_ticks(const entry *e)
{
    if (e->timed) return (double)e->ticks * ((double)e->calls / (double)e->timed);
    uint64_t ticks = 0, timed = 0;
    for (table *t = rec.threads; t; t = t->next)
        for (size_t i = 0; i < t->cap; i++)
            if (t->slots[i] && t->slots[i]->op == e->op) ticks += t->slots[i]->ticks, timed += t->slots[i]->timed;
    return timed ? (double)ticks * ((double)e->calls / (double)timed) : 0;
}

/* ---- the text of this rank ---- */

typedef struct {
    char *buf;
    size_t len, cap;
    int failed;
} out_text;

static void put(out_text *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(out_text *o, const char *fmt, ...)
{
    if (o->failed) return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(o->buf ? o->buf + o->len : NULL, o->buf ? o->cap - o->len : 0, fmt, ap);
        va_end(ap);
        if (n < 0) {
            o->failed = 1;
            return;
        }
        if (o->buf && o->len + (size_t)n < o->cap) {
            o->len += (size_t)n;
            return;
        }
        size_t cap = o->cap ? o->cap : 4096;
        while (cap <= o->len + (size_t)n) cap *= 2;
        char *b = realloc(o->buf, cap);
        if (!b) {
            o->failed = 1;
            return;
        }
        o->buf = b;
        o->cap = cap;
    }
}

/* A plan's type in the notation, in full (so that it parses back; malloc'ed),
 * "?" where the engine cannot say; NULL if out of memory. */
static char *type_text(const mg_type_plan *p)
{
    size_t len = 4096;
    for (int tries = 0; tries < 12; tries++, len *= 4) {
        char *s = malloc(len);
        if (!s) return NULL;
        int rc = mg_dt_describe_full(p->dt, s, len);
        if (rc == MG_DT_SUCCESS) return s;
        free(s);
        if (rc != MG_DT_ERR_TRUNCATED) break;
    }
    return strdup("?");
}

/* The types of a rank's rows: one number per distinct text (programs make
 * many types of one layout). */
typedef struct {
    const mg_type_plan **plans; /* every plan seen, and the number of its text */
    int *ids, nplans;
    char **texts;
    const mg_type_plan **first; /* a plan of each text: its shape and block, the datatype profiles' keys */
    int ntexts;
} type_names;

/* The number of p's text, -1 if out of memory. */
static int type_id(type_names *tn, const mg_type_plan *p)
{
    for (int i = 0; i < tn->nplans; i++)
        if (tn->plans[i] == p) return tn->ids[i];
    char *text = type_text(p);
    const mg_type_plan **plans = text ? realloc(tn->plans, sizeof *plans * (size_t)(tn->nplans + 1)) : NULL;
    if (plans) tn->plans = plans;
    int *ids = plans ? realloc(tn->ids, sizeof *ids * (size_t)(tn->nplans + 1)) : NULL;
    if (ids) tn->ids = ids;
    char **texts = ids ? realloc(tn->texts, sizeof *texts * (size_t)(tn->ntexts + 1)) : NULL;
    if (texts) tn->texts = texts;
    const mg_type_plan **first = texts ? realloc(tn->first, sizeof *first * (size_t)(tn->ntexts + 1)) : NULL;
    if (!first) {
        free(text);
        return -1;
    }
    tn->first = first;
    int id = 0;
    while (id < tn->ntexts && strcmp(tn->texts[id], text) != 0) id++;
    if (id == tn->ntexts) {
        tn->first[id] = p;
        tn->texts[tn->ntexts++] = text;
    } else
        free(text);
    tn->plans[tn->nplans] = p;
    tn->ids[tn->nplans++] = id;
    return id;
}

static void type_names_free(type_names *tn)
{
    for (int i = 0; i < tn->ntexts; i++) free(tn->texts[i]);
    free(tn->texts);
    free(tn->first);
    free(tn->plans);
    free(tn->ids);
}

static const char *const strategies[] = {"default", "native", "normalized", "pack"};

/* Seconds since mg_tune__rec_start, and the seconds of a tick of the clock
 * (the time-stamp counter's rate, measured over that time). */
static double elapsed(double *per_tick)
{
    uint64_t ticks = mg_tune__rec_clock();
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    double wall = (double)(now.tv_sec - rec.start_ts.tv_sec) + 1e-9 * (double)(now.tv_nsec - rec.start_ts.tv_nsec);
    *per_tick = !mg_tune__rec_tsc                          ? 1e-9
                : ticks > rec.start_ticks && wall > 0 ? wall / (double)(ticks - rec.start_ticks)
                                                      : 0;
    return wall;
}

char *mg_tune__rec_rank_text(int rank, size_t *len)
{
    double per_tick, wall = elapsed(&per_tick);
    out_text o = {0};
    pthread_mutex_lock(&rec.mu);
    double total = 0;
    int lost = 0;
    type_names tn = {0};
    for (table *t = rec.threads; t; t = t->next) {
        lost += t->lost;
        for (size_t i = 0; i < t->cap; i++)
            if (t->slots[i]) total += estimated_ticks(t->slots[i]);
    }
    char host[MPI_MAX_PROCESSOR_NAME] = "?";
    int hlen = 0;
    PMPI_Get_processor_name(host, &hlen);
    put(&o, "#@host[%d]=%s\n#@wall_s[%d]=%.9g\n#@mpi_s[%d]=%.9g\n", rank, host, rank, wall, rank,
        total * per_tick);
    if (lost) put(&o, "#@lost_calls[%d]=%d\n", rank, lost);
    /* the rows, naming their types t<rank>.<k>; the types' lines after them */
    for (table *t = rec.threads; t; t = t->next)
        for (size_t i = 0; i < t->cap; i++) {
            entry *e = t->slots[i];
            if (!e) continue;
            put(&o, "%d %s %d %lld %s %s %llu %.9g", rank, e->op, e->size, (long long)e->bytes,
                e->impl ? e->impl : "-", e->strategy >= 0 ? strategies[e->strategy] : "-",
                (unsigned long long)e->calls, estimated_ticks(e) * per_tick);
            for (int k = 0; k < 2; k++) {
                int id = e->types[k] ? type_id(&tn, e->types[k]) : -1;
                if (e->types[k] && id < 0) o.failed = 1;
                if (id >= 0)
                    put(&o, " t%d.%d", rank, id);
                else
                    put(&o, " -");
            }
            put(&o, " %s %s\n", e->elem_name, mg_tune__op_name(e->redop));
        }
    for (int k = 0; k < tn.ntexts; k++)
        put(&o, "#@type[t%d.%d]=%s\n#@shape[t%d.%d]=%s\n#@block[t%d.%d]=%lld\n", rank, k, tn.texts[k], rank, k,
            tn.first[k]->shape, rank, k, (long long)tn.first[k]->block);
    type_names_free(&tn);
    pthread_mutex_unlock(&rec.mu);
    if (o.failed) {
        free(o.buf);
        return NULL;
    }
    *len = o.len;
    return o.buf ? o.buf : calloc(1, 1);
}

void mg_tune__rec_stop(void)
{
    pthread_mutex_lock(&rec.mu);
    /* the tables go, and with them the entries' hold on the plans */
    for (table *t = rec.threads, *next; t; t = next) {
        next = t->next;
        for (size_t i = 0; i < t->cap; i++)
            if (t->slots[i]) {
                for (int k = 0; k < 2; k++)
                    if (t->slots[i]->types[k]) mg_tune__plan_release(t->slots[i]->types[k]);
                free(t->slots[i]);
            }
        free(t->slots);
        free(t);
    }
    rec.threads = NULL;
    mine = NULL; /* the other threads' are gone too: no thread makes calls after MPI_Finalize */
    pthread_mutex_unlock(&rec.mu);
}

uint64_t mg_tune__rec_calls(const char *op, MPI_Count bytes, double *seconds)
{
    uint64_t calls = 0;
    double ticks = 0;
    pthread_mutex_lock(&rec.mu);
    for (table *t = rec.threads; t; t = t->next)
        for (size_t i = 0; i < t->cap; i++) {
            const entry *e = t->slots[i];
            if (e && strcmp(e->op, op) == 0 && e->bytes == bytes) calls += e->calls, ticks += estimated_ticks(e);
        }
    pthread_mutex_unlock(&rec.mu);
    double per_tick;
    elapsed(&per_tick);
    if (seconds) *seconds = ticks * per_tick;
    return calls;
}
