/* record.c: record mode (MPIGUIDE_TUNE_RECORD; layer record, tune_internal.h).
 * Per thread, what the application's intercepted calls were and the time they
 * took, keyed as the profiles key them: the MPI function, the communicator's
 * size, the message bytes, the implementation a collective ran, the datatype
 * strategy and the derived types (their plans: the engine's normal form).
 *
 * An entry point brackets its work with mg_tune__rec_begin and _end; the
 * layers that decide note what they decided (mg_tune__rec_note_*) into the
 * calling thread's current call. Nothing here changes what a call does. For
 * the layers above the lifecycle (the hot word) only. */
#ifndef MG_TUNE_RECORD_H
#define MG_TUNE_RECORD_H

#include "lifecycle.h"
#include "online.h"
#include "types.h"
#include <stdint.h>

/* The call this thread is making, between begin and end. */
typedef struct {
    const char *op;               /* the entry point's __func__ ("MPI_Allgather") */
    uint64_t t0;                  /* mg_tune__rec_clock() at its start, where the call is timed */
    int timed;                    /* whether it is (the sample below) */
    int size;                     /* the communicator's size; -1: none (a completion call) */
    MPI_Count bytes;              /* as the profiles key the call; -1: none */
    const char *impl;             /* the implementation a collective ran; NULL: none */
    int strategy;                 /* the mg_dts of its derived types; -1: none */
    const mg_type_plan *types[2]; /* the plans of its derived types (send side first) */
    MPI_Datatype elem;            /* a reduction's datatype and operation (MPI_DATATYPE_NULL, MPI_OP_NULL: none) */
    MPI_Op redop;
    int depth; /* entry points inside entry points: the outermost records */
} mg_rec_call;

extern _Thread_local mg_rec_call mg_tune__rec_now __attribute__((tls_model("initial-exec")));

/* Ticks of the record's clock (the time-stamp counter where it is invariant,
 * else CLOCK_MONOTONIC in ns); converted to seconds when the record is written.
 * Inline: two clock_gettime calls cost twice the 50 ns a recorded call may take. */
extern int mg_tune__rec_tsc; /* set by mg_tune__rec_start */
static inline uint64_t mg_tune__rec_clock(void)
{
#if defined(__x86_64__) || defined(__i386__)
    if (__builtin_expect(mg_tune__rec_tsc, 1)) return __builtin_ia32_rdtsc();
#endif
    return mg_online_clock_ns();
}

/* Every call is counted; its time is taken on a sample: all of a thread's first
 * MG_REC_WARM calls of an entry point, then one in MG_REC_EVERY on average, at
 * random gaps (so that no loop's period hides a kind of call), and the first
 * call of an entry point after another's in its slot (so that every function
 * has a timed call). An entry's time is its timed calls' mean times its calls.
 * Why: reading the clock twice costs more (about 23 ns on the project's VM)
 * than the rest of recording a call. The entry points share MG_REC_SLOTS
 * slots by their name's address. */
enum { MG_REC_SLOTS = 16, MG_REC_WARM = 1024, MG_REC_EVERY = 8 };
#define MG_REC_SLOT(op) (((uintptr_t)(op) >> 3) & (MG_REC_SLOTS - 1))
typedef struct {
    const char *op; /* the entry point that used the slot last */
    uint32_t skip;  /* its calls not to time before the next timed one */
    uint32_t warm;  /* the slot's timed calls so far, up to MG_REC_WARM */
} mg_rec_slot;
extern _Thread_local mg_rec_slot mg_tune__rec_slots[MG_REC_SLOTS] __attribute__((tls_model("initial-exec")));
/* The calls of s's entry points not to time before the next timed one. */
uint32_t mg_tune__rec_gap(mg_rec_slot *s);
/* Adds the finished call c, which took `ticks` if c->timed, to this thread's table. */
void mg_tune__rec_add(const mg_rec_call *c, uint64_t ticks);

/* One relaxed load when record mode is off. */
static inline void mg_tune__rec_begin(const char *op)
{
    if (!(atomic_load_explicit(&mg_tune_hot.word, memory_order_relaxed) & MG_HOT_RECORD)) return;
    mg_rec_call *c = &mg_tune__rec_now;
    if (c->depth++) return;
    *c = (mg_rec_call){.op = op, .size = -1, .bytes = -1, .strategy = -1, .elem = MPI_DATATYPE_NULL,
                       .redop = MPI_OP_NULL, .depth = 1};
    mg_rec_slot *s = &mg_tune__rec_slots[MG_REC_SLOT(op)];
    if (s->op == op && s->skip) {
        --s->skip;
        return;
    }
    s->op = op;
    s->skip = mg_tune__rec_gap(s);
    c->timed = 1;
    c->t0 = mg_tune__rec_clock();
}

static inline void mg_tune__rec_end(void)
{
    mg_rec_call *c = &mg_tune__rec_now;
    if (__builtin_expect(c->depth != 0, 0) && --c->depth == 0)
        mg_tune__rec_add(c, c->timed ? mg_tune__rec_clock() - c->t0 : 0);
}

/* mg_tune__rec_end, then rc: `return mg_tune__rec_done(rc);` ends an entry point. */
static inline int mg_tune__rec_done(int rc)
{
    mg_tune__rec_end();
    return rc;
}

/* Whether this thread's current call is being recorded (the notes below are
 * only looked at then). */
static inline int mg_tune__rec_active(void) { return mg_tune__rec_now.depth != 0; }

/* What the deciding layers know of the call: the first note of each kind counts
 * (an outer layer's, which sees the application's arguments); -1: not known. */
static inline void mg_tune__rec_note_size(int size, MPI_Count bytes)
{
    mg_rec_call *c = &mg_tune__rec_now;
    if (!c->depth) return;
    if (c->size < 0) c->size = size;
    if (c->bytes < 0) c->bytes = bytes;
}

static inline void mg_tune__rec_note_impl(const char *label)
{
    mg_rec_call *c = &mg_tune__rec_now;
    if (c->depth && !c->impl) c->impl = label;
}

/* A reduction's datatype and operation: the measurement of its mock-ups needs
 * them (which apply depends on both). */
static inline void mg_tune__rec_note_reduction(MPI_Datatype elem, MPI_Op op)
{
    mg_rec_call *c = &mg_tune__rec_now;
    if (c->depth && c->elem == MPI_DATATYPE_NULL) c->elem = elem, c->redop = op;
}

/* One side's derived type (side 0: the send side, 1: the receive side; NULL
 * for a predefined or contiguous one) and the strategy that moved it: a call's
 * strategy is the first other than native of its sides. */
static inline void mg_tune__rec_note_type(int side, int strategy, const mg_type_plan *plan)
{
    mg_rec_call *c = &mg_tune__rec_now;
    if (!c->depth) return;
    if (c->strategy < 0 || (c->strategy == MG_DTS_NATIVE && strategy != MG_DTS_NATIVE)) c->strategy = strategy;
    if (!c->types[side]) c->types[side] = plan;
}

/* MPI_Init: the run's wall time is measured from here. */
void mg_tune__rec_start(void);
/* This rank's part of the record file (docs/formats.md): its wall and MPI
 * time, its types and its rows, as text (malloc'ed, *len bytes; NULL if out of
 * memory). */
char *mg_tune__rec_rank_text(int rank, size_t *len);
/* MPI_Finalize, once no call is recorded any more: every table is freed and
 * the plans let go. */
void mg_tune__rec_stop(void);
/* "tsc" or "monotonic": the clock of the record. */
const char *mg_tune__rec_clock_name(void);
/* recfile.c, at MPI_Finalize (collective over MPI_COMM_WORLD): recording
 * ends, and rank 0 writes every rank's record to the record file. */
void mg_tune__rec_write(void);
/* Tests: calls and seconds (estimated as the record's are) recorded by this
 * process for (op, bytes), all other keys summed. */
uint64_t mg_tune__rec_calls(const char *op, MPI_Count bytes, double *seconds);

#endif
