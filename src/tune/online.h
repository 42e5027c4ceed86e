/* online.c: online selection (MPIGUIDE_TUNE_MODE=online; layer online,
 * tune_internal.h). For each key (a communicator and a collective and its
 * message bytes), the first calls explore the implementations that apply,
 * interleaved, each timed; then every rank settles on the one whose time, the
 * maximum over the ranks, was least (each rank's median of its samples, so a
 * preempted call does not decide): the times are agreed by one reduction on
 * the library's shadow of the communicator at a decision point, a call every
 * rank reaches alike (the calls of a collective on a communicator come in the
 * same order everywhere), so every rank always runs the same implementation.
 *
 * The state machine below is pure: what a call runs, what a call's time adds,
 * and what the agreed times decide. The integration (intercept.c) looks the
 * state up, times the call and makes the reduction. */
#ifndef MG_TUNE_ONLINE_H
#define MG_TUNE_ONLINE_H

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>

enum {
    MG_ONLINE_MAX = 8,     /* candidates per key: the native call and up to 7 mock-ups */
    MG_ONLINE_ROUNDS = 8,  /* the most rounds of exploration (samples per candidate) */
    MG_ONLINE_WINDOW = 32  /* the most samples of a settled key's window */
};

/* CLOCK_MONOTONIC in ns: online mode's clock (one rate on every node, so the
 * ranks' times compare), and record mode's where the time-stamp counter is not
 * invariant (record.h). */
uint64_t mg_online_clock_ns(void);

/* The policy: what the exploration may cost and when it looks again. */
typedef struct {
    int warmup;         /* calls of a key run natively before it explores (a rare key never does) */
    int rounds;         /* rounds of exploration (each candidate once per round, interleaved; <= MG_ONLINE_ROUNDS) */
    int first_look;     /* after this many rounds, candidates whose fastest call was slower than `drop` x the
                         * best's fastest are left */
    double drop;        /* 2.0: a candidate twice as slow as the best so far is dropped */
    int window;         /* a settled key's calls per check of its time (agreed, as the decision); one call in
                         * MG_ONLINE_SAMPLE is timed, at most MG_ONLINE_WINDOW of them */
    double margin;      /* re-explore where the settled choice's agreed time grew by more than this (0.5: 50%) */
    int max_explorations; /* per key: the first exploration and the re-explorations (3: two again) */
    uint64_t budget;    /* calls a communicator may spend exploring, all its keys together (reserved at
                         * each exploration's start: rounds x candidates); beyond, keys stay as they are */
    int by_fastest;     /* the first exploration's last look too compares each candidate's fastest call, not
                         * its median; the choice's first settled window is then its baseline */
    int look_again;     /* a key settled by its first exploration explores once more when its calls reach
                         * this many times those it had when it settled (0: never) */
} mg_online_policy;

/* The collectives' policy: all ranks explore a key together, and a median keeps a preempted call from
 * deciding. */
extern const mg_online_policy mg_online_default_policy;
/* The point-to-point sides' (datatypes/online_dt.c): a side's time runs until the call that completes it,
 * so it includes its peers' sides, whose keys warm up and explore at other calls (a rank with two
 * neighbours calls a key twice as often as one with one): most of a candidate's calls may take its peer's
 * slowest candidate's time, and only its fastest call is its own. Where every call of the first
 * exploration met a peer still warming up, the choice is noise: the key looks again once its peers have
 * settled (4 times the calls it settled at; the peers' looks again come at other calls). */
extern const mg_online_policy mg_online_side_policy;

typedef enum { MG_ONLINE_WARMUP, MG_ONLINE_EXPLORE, MG_ONLINE_SETTLED } mg_online_phase;

/* What is known of one key. */
typedef struct {
    mg_online_phase phase;
    int n;                       /* candidates (0 is the native call) */
    int impl[MG_ONLINE_MAX];     /* their implementation indices */
    unsigned alive;              /* bit c: candidate c is still explored */
    uint64_t calls;              /* calls of the key */
    uint64_t since;              /* calls since the phase (or the exploration's look) began */
    int rounds_done;             /* EXPLORE: rounds of the candidates completed */
    double sample[MG_ONLINE_MAX][MG_ONLINE_ROUNDS]; /* this exploration's local seconds per candidate */
    int count[MG_ONLINE_MAX];    /* and their number */
    double agreed[MG_ONLINE_MAX]; /* the last agreed median per candidate (negative: not measured) */
    int chosen;                  /* SETTLED: the candidate */
    double chosen_s;             /* its agreed median when chosen */
    double window[MG_ONLINE_WINDOW]; /* SETTLED: this window's sampled local seconds */
    int window_count;
    int explorations;            /* how many explorations began */
    uint64_t served[MG_ONLINE_MAX]; /* calls each candidate ran */
    uint64_t explore_calls;      /* calls made while exploring (every candidate's) */
    uint64_t *budget;            /* the exploration calls its communicator has left (NULL: no limit) */
    int over_budget;             /* an exploration was due but the budget was spent */
    uint64_t look_again_at;      /* SETTLED: the call that explores once more (mg_online_policy.look_again; 0: none) */
} mg_online_key;

/* A new key of candidates impl[0..n-1] (impl[0]: the native call), drawing
 * on *budget (its communicator's, the same on its ranks; NULL: no limit). */
void mg_online_init(mg_online_key *k, const int *impl, int n, uint64_t *budget);

/* A settled key times one call in MG_ONLINE_SAMPLE (its window's median is a sample's): two clock reads
 * of ~30 ns and one agreement per window are most of what a settled call costs. */
#define MG_ONLINE_SAMPLE 64

/* The candidate the next call runs, and whether it is timed (*timed).
 * (Inline, as the fast half of mg_online_done: a settled key's calls are most
 * of a run, and their cost is the mode's overhead.) */
int mg_online__next_exploring(const mg_online_key *k, int *timed);
static inline int mg_online_next(const mg_online_key *k, const mg_online_policy *p, int *timed)
{
    (void)p;
    if (k->phase == MG_ONLINE_SETTLED) {
        *timed = k->since % MG_ONLINE_SAMPLE == 0;
        return k->chosen;
    }
    return mg_online__next_exploring(k, timed);
}

/* After the call ran candidate c and took `seconds` locally (negative: not timed). Returns
 * 1 when the call was a decision point: the caller then agrees the values of
 * mg_online_to_agree over the ranks (maximum) and passes them to
 * mg_online_decide before the next call of the key. */
int mg_online__done_slow(mg_online_key *k, const mg_online_policy *p, int c, double seconds);
static inline int mg_online_done(mg_online_key *k, const mg_online_policy *p, int c, double seconds)
{
    /* a settled key's untimed call that ends no window and is not its look again: counted, nothing more */
    if (k->phase == MG_ONLINE_SETTLED && seconds < 0 && (p->window <= 0 || (k->since + 1) % (uint64_t)p->window) &&
        k->calls + 1 != k->look_again_at) {
        k->calls++, k->served[c]++, k->since++;
        return 0;
    }
    return mg_online__done_slow(k, p, c, seconds);
}

/* What the ranks agree on at a decision point: per candidate its local
 * median (at the first look its fastest call; negative where not measured),
 * or in SETTLED its window's median in slot 0; n values into out. */
int mg_online_to_agree(const mg_online_key *k, const mg_online_policy *p, double *out);

/* The decision from the agreed values (maximum over the ranks). */
void mg_online_decide(mg_online_key *k, const mg_online_policy *p, const double *agreed);

/* The value of a key's report line (docs/formats.md, tune_online):
 * "chosen=... calls=... explore_calls=... explorations=... over_budget=...
 * times=... served=..." and the line's end, label(ctx, impl) naming each
 * implementation. */
void mg_online_write_value(FILE *out, const mg_online_key *k, const char *(*label)(const void *ctx, int impl),
                           const void *ctx);

/* ---- the keys of the process ----
 * A communicator's keys live in a table the communicator's record holds
 * (comms.c), freed with the communicator; the report keeps their lines (up to
 * 1 MiB of them). One lock guards them all: a call looks a key up only where
 * its thread's last one does not fit. Out of memory, the job is aborted: a
 * rank that ran natively where its peers ran a mock-up would hang them. */
typedef struct mg_online_table mg_online_table;

/* The names a key's report line gives a collective the catalog does not have
 * (coll >= MG_NCOLLS: the irregular ones, datatypes/vonline.c): its MPI name
 * and its implementations' labels by index. */
typedef struct {
    const char *mpi_name;
    const char *const *labels;
} mg_online_names;

/* A new, empty table for a communicator of `size` processes. */
mg_online_table *mg_tune__online_table(int size);
/* The key of (coll, bytes, elem, op) in t (elem and op: a reduction's
 * datatype and operation, else MPI_DATATYPE_NULL and MPI_OP_NULL), made where
 * new with the n candidates cands(ctx, impl) writes (impl[0]: the native
 * call) and names (NULL: the catalog's collective coll). NULL when the
 * communicator has its most keys (the same on its ranks): the call runs
 * natively. */
mg_online_key *mg_tune__online_lookup(mg_online_table *t, int coll, MPI_Count bytes, MPI_Datatype elem, MPI_Op op,
                                      int (*cands)(void *ctx, int *impl), void *ctx, const mg_online_names *names);
/* The communicator of t is freed: its keys go, their report lines stay. */
void mg_tune__online_free_table(mg_online_table *t);
/* `#@tune_online[...]` lines of every key (docs/formats.md). */
void mg_tune__online_report(FILE *out);
/* MPI_Finalize: every table freed. */
void mg_tune__online_stop(void);

#endif
