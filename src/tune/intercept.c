/* The intercepted MPI functions: MPI_Init, MPI_Init_thread, MPI_Finalize and
 * nine blocking collectives (and their MPI-4 large-count forms where the stack
 * has them). Each collective becomes an mg_call, gets an implementation
 * (native, or a mock-up with a lease on the pools) and is counted. Bcast,
 * Gather, Scatter, Allgather and Alltoall pass through the datatype strategies
 * first where those are in play (datatypes/collectives.h), and then see
 * normal(t) or MPI_PACKED in place of the application's types.
 *
 * The choice must be the same on every rank of the call, so it depends only
 * on values all ranks agree on: mode, forced choice and profiles (the same
 * configuration everywhere), the communicator's size, `bytes`, the reduction's
 * count, datatype and op, and the mock-up's supports() and need() (which look
 * at such values only). The pools' configured capacity decides whether a
 * need() fits, never the free space. */
#define _POSIX_C_SOURCE 200809L
#include "call.h"
#include "comms.h"
#include "datatypes/collectives.h"
#include "datatypes/pending.h"
#include "datatypes/vonline.h"
#include "handles.h"
#include "lifecycle.h"
#include "online.h"
#include "record.h"
#include "types.h"
#include <limits.h>

/* What the calling thread's last call of each collective ran. initial-exec:
 * no __tls_get_addr call per collective in the shared library (it is loaded at
 * start-up, by LD_PRELOAD or as a dependency, where static TLS is available). */
static _Thread_local const char *last_impl[MG_NCOLLS] __attribute__((tls_model("initial-exec")));

static const char *const label_default = "default";

const char *mg_tune_last_impl(const char *collective)
{
    int c = mg_tune__public_coll_index(collective);
    return c < 0 ? NULL : last_impl[c];
}

static int is_reduction(mg_coll c)
{
    return c == MG_COLL_ALLREDUCE || c == MG_COLL_REDUCE || c == MG_COLL_SCAN || c == MG_COLL_REDUCE_SCATTER_BLOCK;
}

/* The hot path, before anything else of a call: 1 if the call runs natively
 * without more questions (nothing to choose and nothing to count), 0 if
 * decide() must look at it. No lock, no MPI call: one atomic load of the hot
 * word, and in forced or tuned mode one more (the forced choice, or the
 * profiles' collective mask, which is immutable once published). Calls on
 * intercommunicators that end here are labelled "default" (no choice was
 * made); decide() labels them "native" when it sees them. */
static inline __attribute__((always_inline)) int native_fast(mg_coll coll, MPI_Comm comm)
{
    unsigned h = atomic_load_explicit(&mg_tune_hot.word, memory_order_acquire);
    /* before MPI_Init, after MPI_Finalize, on MPI_COMM_NULL: the native call says what is wrong */
    if (__builtin_expect(!(h & MG_HOT_ON) || comm == MPI_COMM_NULL, 0)) return 1;
    if (h & (MG_HOT_COUNT | MG_HOT_RECORD)) return 0;
    switch (MG_HOT_MODE(h)) {
    case MG_TUNE_ONLINE: return 0;
    case MG_TUNE_FORCED:
        if (atomic_load_explicit(&mg_tune_hot.forced[coll], memory_order_relaxed) != 0) return 0;
        break;
    case MG_TUNE_TUNED: {
        const mg_tune_live *l = atomic_load_explicit(&mg_tune_hot.live, memory_order_acquire);
        if (l && (l->coll_mask >> coll & 1u)) return 0;
        break;
    }
    default: break;
    }
    last_impl[coll] = label_default;
    return 1;
}

/* Mock-up impl (>= 1) of the call if it applies and its need fits the pools'
 * configured capacities (never their free space: the choice must be the same
 * on every rank), with the need in *need; NULL for the native call. */
static const mg_mockup *applicable(mg_call *c, int impl, mg_need *need)
{
    const mg_mockup *m = &mg_tune__table(c->coll)->mockups[impl - 1];
    PMPI_Comm_rank(c->comm, &c->rank);
    if (is_reduction(c->coll) && c->op != MPI_OP_NULL) PMPI_Op_commutative(c->op, &c->commutative);
    c->chunk = atomic_load_explicit(&mg_tune_hot.chunk, memory_order_relaxed);
    c->regroup = atomic_load_explicit(&mg_tune_hot.regroup, memory_order_relaxed);
    mg_tune__local_blocks(c);
    if (c->size < 2 || c->bytes <= 0 || mg_tune__locally_erroneous(c)) return NULL;
    int fits = is_reduction(c->coll) ? mg_fits_int(c->sendcount) && mg_fits_int(c->recvcount)
                                     : mg_fits_int(c->bytes) && mg_fits_int_product(c->size, c->block);
    if (!fits || (m->supports && !m->supports(c))) return NULL;
    *need = m->need ? m->need(c) : (mg_need){0, 0};
    if (need->msg_bytes > atomic_load_explicit(&mg_tune_hot.msg_cap, memory_order_relaxed) ||
        need->int_bytes > atomic_load_explicit(&mg_tune_hot.int_cap, memory_order_relaxed))
        return NULL;
    return m;
}

/* What decide() found for a call that may run a mock-up. */
typedef struct {
    int impl; /* >= 1, or ONLINE_PICK */
    int size;
} mg_choice;
#define ONLINE_PICK INT_MAX /* online mode: complete() asks the call's key (online_pick) */

/* Each thread's last call per collective and what decide() made of it: a
 * loop that repeats one call skips the look-ups. Valid while the hot word,
 * the profile set and every record (mg_hmap_deletions) are what they were. */
typedef struct {
    MPI_Comm comm;
    MPI_Datatype type;
    MPI_Op op;
    MPI_Count n, bytes;
    const mg_tune_live *live;
    unsigned h, gen;
    int impl, size;     /* size 0: nothing remembered */
    mg_online_key *key; /* impl ONLINE_PICK: the call's key once online_pick found it (freed only with a
                         * record, which changes gen) */
} memo;
static _Thread_local memo memos[MG_NCOLLS] __attribute__((tls_model("initial-exec")));

/* ---- online mode (online.h): the call's key picks its implementation ---- */

/* The call this thread is making in online mode: its key and candidate, timed
 * from t0 (ns) where the key wants its time; key NULL: none. */
static _Thread_local struct {
    mg_online_key *key;
    int cand, timed;
    uint64_t t0;
    MPI_Comm comm;
} online_now __attribute__((tls_model("initial-exec")));

/* After an online call: its time to its key, and at a decision point the agreement of every rank (the
 * maximum over the ranks, one reduction on the library's shadow of the communicator). */
static inline int online_done(int rc)
{
    if (__builtin_expect(!online_now.key, 1)) return rc;
    mg_online_key *k = online_now.key;
    online_now.key = NULL;
    double seconds = online_now.timed ? 1e-9 * (double)(mg_online_clock_ns() - online_now.t0) : -1.0;
    mg_tune__online_finish(k, online_now.cand, seconds, online_now.comm);
    return rc;
}

/* The pick of the key k for the call this thread makes now, timed from here where the key wants
 * its time (online.h); the previous call's first where the datatype layer ran it twice in one call. */
static inline int online_begin(mg_online_key *k, MPI_Comm comm)
{
    if (online_now.key) online_done(MPI_SUCCESS);
    int timed, cand = mg_online_next(k, &mg_online_default_policy, &timed);
    online_now.key = k, online_now.cand = cand, online_now.timed = timed, online_now.comm = comm;
    online_now.t0 = timed ? mg_online_clock_ns() : 0;
    return k->impl[cand];
}

/* The first half of the choice, from the call's key alone (n elements of
 * type: the message the profiles are keyed by, mg_tune__message_bytes; times
 * the communicator's size where per_rank): 0 when the call runs natively
 * without a mock-up being considered (counted and labelled here), 1 with the
 * implementation to try in *ch. Most calls end here, before an mg_call is
 * built. Lock-free. */
static int decide(mg_coll coll, MPI_Comm comm, MPI_Count n, MPI_Datatype type, MPI_Op op, int per_rank,
                  mg_choice *ch)
{
    unsigned h = atomic_load_explicit(&mg_tune_hot.word, memory_order_acquire);
    mg_tune_mode mode = MG_HOT_MODE(h);
    int count = (h & MG_HOT_COUNT) != 0, record = (h & MG_HOT_RECORD) != 0;
    if (!(h & MG_HOT_ON) || comm == MPI_COMM_NULL) return 0;
    unsigned gen = atomic_load_explicit(&mg_hmap_deletions, memory_order_acquire);
    const mg_tune_live *live = atomic_load_explicit(&mg_tune_hot.live, memory_order_acquire);
    memo *m = &memos[coll];
    int impl = 0, size;
    MPI_Count bytes = 0;
    if (m->size && m->comm == comm && m->type == type && m->op == op && m->n == n && m->h == h && m->gen == gen &&
        m->live == live) {
        impl = m->impl, size = m->size, bytes = m->bytes;
        /* online mode, the key known: no call struct, no look-up (a settled key's calls end here) */
        if (impl == ONLINE_PICK && m->key) impl = online_begin(m->key, comm);
    } else {
        const mg_comm_info *info = mg_tune__comm_info(comm);
        if (!info) {
            /* not a communicator: the native call says so; a communicator whose record could not be
             * made would run natively here while its peers may run a mock-up */
            int size;
            if (mode != MG_TUNE_OFF && PMPI_Comm_size(comm, &size) == MPI_SUCCESS)
                mg_tune__abort_diverging("no memory for a communicator's record");
            return 0;
        }
        if (info->inter) {
            /* intercommunicators: other semantics, and arguments we must not read; not counted */
            last_impl[coll] = mode == MG_TUNE_OFF ? label_default : "native";
            return 0;
        }
        if (mode == MG_TUNE_FORCED) impl = atomic_load_explicit(&mg_tune_hot.forced[coll], memory_order_relaxed);
        int online = mode == MG_TUNE_ONLINE;
        const mg_tune_profile *profile = mode == MG_TUNE_TUNED || online ? mg_tune__comm_profile(info, coll) : NULL;
        /* tuned mode without a profile of (collective, size), and mode off, choose nothing: the
         * size of the message is only needed for the counter */
        if (count || record || impl > 0 || profile || online) {
            MPI_Count key = n;
            if (per_rank && __builtin_mul_overflow(n, (MPI_Count)info->size, &key)) key = -1;
            bytes = key >= 0 ? mg_type_bytes(key, type) : -1;
            int covered = profile && bytes > 0 ? mg_tune__profile_impl(profile, bytes) : -1;
            if (covered >= 0) impl = covered;
            /* online: a profile's choice comes first, the rest is learnt in the run */
            if (online && covered < 0 && bytes > 0 && info->size > 1) impl = ONLINE_PICK;
        }
        size = info->size;
        /* the forced choice may change without the hot word: not remembered */
        if (mode != MG_TUNE_FORCED) *m = (memo){comm, type, op, n, bytes, live, h, gen, impl, size, NULL};
    }
    if (record) mg_tune__rec_note_size(size, bytes);
    if (impl > 0) {
        *ch = (mg_choice){impl, size};
        return 1;
    }
    if (count) mg_tune__count(coll, bytes, 0);
    if (record) mg_tune__rec_note_impl(label_default);
    last_impl[coll] = label_default;
    return 0;
}

/* The native call and every mock-up that applies to c (the same on every rank: applicable() looks at
 * values all ranks share). */
static int candidates(void *ctx, int *impl)
{
    mg_call *c = ctx;
    const mg_coll_mockups *t = mg_tune__table(c->coll);
    int n = 0;
    impl[n++] = 0;
    for (int k = 1; k <= t->nmockups && n < MG_ONLINE_MAX; k++) {
        mg_need need;
        if (applicable(c, k, &need)) impl[n++] = k;
    }
    return n;
}

/* The implementation of c its key picks now (0: the native call); the key goes to the thread's memo of
 * the call (decide() wrote it for this very call), whose next calls then skip the look-up. */
static int online_pick(mg_call *c)
{
    const mg_comm_info *info = mg_tune__comm_info(c->comm);
    mg_online_table *t = info ? mg_tune__comm_online(info) : NULL;
    int reduction = is_reduction(c->coll);
    mg_online_key *k = t ? mg_tune__online_lookup(t, c->coll, c->bytes, reduction ? c->sendtype : MPI_DATATYPE_NULL,
                                                  reduction ? c->op : MPI_OP_NULL, candidates, c, NULL)
                         : NULL;
    if (!k) return 0;
    memo *m = &memos[c->coll];
    if (m->size && m->comm == c->comm && m->impl == ONLINE_PICK) m->key = k;
    return online_begin(k, c->comm);
}

/* The second half: completes c (rank, size, bytes, commutative, chunk) and
 * returns the mock-up to run (with its need in *need), or NULL for the native
 * call. Lock-free but for the mock-up's lease (and online mode's key look-up). */
static const mg_mockup *complete(mg_call *c, const mg_choice *ch, mg_need *need)
{
    int impl = ch->impl;
    c->size = ch->size;
    c->bytes = mg_tune__message_bytes(c);
    if (impl == ONLINE_PICK) impl = online_pick(c);
    const mg_mockup *m = impl > 0 ? applicable(c, impl, need) : NULL;
    if (!m && impl > 0) impl = MG_TUNE_NATIVE;
    if (atomic_load_explicit(&mg_tune_hot.word, memory_order_relaxed) & MG_HOT_COUNT)
        mg_tune__count(c->coll, c->bytes, impl);
    last_impl[c->coll] = mg_tune__impl_label(c->coll, impl);
    mg_tune__rec_note_impl(last_impl[c->coll]);
    return m;
}

/* Runs the mock-up on the shadow of the call's communicator (comms.h) and
 * raises its first error, or MPI_ERR_TRUNCATE where this rank's own arguments
 * disagree (mockup_api.h), once on the application's communicator. */
static int run(const mg_call *c, const mg_mockup *m, const mg_need *need)
{
    mg_call inner = *c;
    int rc = mg_tune__shadow_comm(c->comm, &inner.comm);
    if (rc != MPI_SUCCESS) return rc; /* MPI raised it on c->comm */
    mg_lease *l = mg_lease_acquire(need->msg_bytes, need->int_bytes);
    if (!l) {
        /* other ranks run the mock-up: the native call is no way out */
        rc = MPI_ERR_NO_MEM;
    } else {
        rc = m->run(&inner, l);
        mg_lease_release(l);
        if (rc == MPI_SUCCESS && c->mismatch) rc = MPI_ERR_TRUNCATE;
    }
    if (rc != MPI_SUCCESS) PMPI_Comm_call_errhandler(c->comm, rc);
    return rc;
}

/* ---- start and end ---- */

MG_TUNE_API int MPI_Init(int *argc, char ***argv)
{
    int rc = PMPI_Init(argc, argv);
    if (rc == MPI_SUCCESS) {
        mg_tune__comms_start();
        mg_tune__types_start();
        mg_tune__rec_start();
        mg_tune__start();
    }
    return rc;
}

MG_TUNE_API int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    int rc = PMPI_Init_thread(argc, argv, required, provided);
    if (rc == MPI_SUCCESS) {
        mg_tune__comms_start();
        mg_tune__types_start();
        mg_tune__rec_start();
        mg_tune__start();
    }
    return rc;
}

MG_TUNE_API int MPI_Finalize(void)
{
    mg_tune__dt_progress_orphans(1); /* while their memory is still the library's */
    mg_tune__rec_write();             /* while the shadow of MPI_COMM_WORLD and the plans are there */
    mg_tune__stop();
    mg_tune__comms_stop();
    mg_tune__online_stop();
    mg_tune__dt_online_stop();
    mg_tune__rec_stop();
    mg_tune__types_stop();
    return PMPI_Finalize();
}

/* ---- the collectives ----
 * Each has one body for the int and the large-count entry point; CNT is the
 * count type of the entry point and SFX the PMPI suffix. */


/* The end of every collective's entry point: a collective synchronizes, so a receive whose request the
 * program freed may have completed meanwhile (pending.h); then online mode's time and the record's. */
static inline int end_call(int rc) { return mg_tune__rec_done(online_done(mg_tune__dt_with_orphans(rc))); }

#define MG_CALL(cl) \
    mg_call c = {.coll = (cl), .sendtype = MPI_DATATYPE_NULL, .recvtype = MPI_DATATYPE_NULL, .op = MPI_OP_NULL}

#define DEF_ALLGATHER_LIKE(NAME, PNAME, CNT, COLL, DT)                                                                \
    static inline __attribute__((always_inline)) int NAME##_coll(const void *sendbuf, CNT sendcount,                  \
                                                                 MPI_Datatype sendtype, void *recvbuf, CNT recvcount, \
                                                                 MPI_Datatype recvtype, MPI_Comm comm)                \
    {                                                                                                                 \
        mg_choice ch;                                                                                                 \
        int in_place = sendbuf == MPI_IN_PLACE;                                                                       \
        if (native_fast(COLL, comm) ||                                                                                \
            !decide(COLL, comm, in_place ? recvcount : sendcount, in_place ? recvtype : sendtype, MPI_OP_NULL, 0,      \
                    &ch))                                                                                             \
            return PNAME(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);                           \
        MG_CALL(COLL);                                                                                                \
        c.sendbuf = sendbuf, c.recvbuf = recvbuf, c.sendcount = sendcount, c.recvcount = recvcount;                   \
        c.sendtype = sendtype, c.recvtype = recvtype, c.comm = comm, c.in_place = in_place;                           \
        mg_need need;                                                                                                 \
        const mg_mockup *m = complete(&c, &ch, &need);                                                                \
        if (!m) return PNAME(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);                       \
        return run(&c, m, &need);                                                                                     \
    }                                                                                                                 \
    static int NAME##_wide(const void *sb, MPI_Count sc, MPI_Datatype st, void *rb, MPI_Count rc, MPI_Datatype rt,    \
                           MPI_Comm comm)                                                                             \
    {                                                                                                                 \
        return NAME##_coll(sb, (CNT)sc, st, rb, (CNT)rc, rt, comm);                                                   \
    }                                                                                                                 \
    MG_TUNE_API int NAME(const void *sendbuf, CNT sendcount, MPI_Datatype sendtype, void *recvbuf, CNT recvcount,     \
                         MPI_Datatype recvtype, MPI_Comm comm)                                                        \
    {                                                                                                                 \
        mg_tune__rec_begin(__func__);                                                                                 \
        int rc = mg_tune__dt_active()                                                                                 \
                     ? DT(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, NAME##_wide)              \
                     : NAME##_coll(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);                 \
        return end_call(rc);                                                                                          \
    }

#define DEF_ROOTED(NAME, PNAME, CNT, COLL, DT)                                                                        \
    static inline __attribute__((always_inline)) int NAME##_coll(const void *sendbuf, CNT sendcount,                  \
                                                                 MPI_Datatype sendtype, void *recvbuf, CNT recvcount, \
                                                                 MPI_Datatype recvtype, int root, MPI_Comm comm)      \
    {                                                                                                                 \
        mg_choice ch;                                                                                                 \
        /* the key: Gather's send block (recv at an MPI_IN_PLACE root), Scatter's receive block (send at one) */      \
        int send_side = (COLL) == MG_COLL_SCATTER ? recvbuf == MPI_IN_PLACE : sendbuf != MPI_IN_PLACE;                \
        if (native_fast(COLL, comm) ||                                                                                \
            !decide(COLL, comm, send_side ? sendcount : recvcount, send_side ? sendtype : recvtype, MPI_OP_NULL, 0,    \
                    &ch))                                                                                             \
            return PNAME(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);                     \
        MG_CALL(COLL);                                                                                                \
        c.sendbuf = sendbuf, c.recvbuf = recvbuf, c.sendcount = sendcount, c.recvcount = recvcount;                   \
        c.sendtype = sendtype, c.recvtype = recvtype, c.root = root, c.comm = comm;                                   \
        if ((COLL) == MG_COLL_SCATTER)                                                                                \
            c.in_place = recvbuf == MPI_IN_PLACE, c.recvbuf = c.in_place ? NULL : recvbuf;                            \
        else                                                                                                          \
            c.in_place = sendbuf == MPI_IN_PLACE;                                                                     \
        mg_need need;                                                                                                 \
        const mg_mockup *m = complete(&c, &ch, &need);                                                                \
        if (!m) return PNAME(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);                 \
        return run(&c, m, &need);                                                                                     \
    }                                                                                                                 \
    static int NAME##_wide(const void *sb, MPI_Count sc, MPI_Datatype st, void *rb, MPI_Count rc, MPI_Datatype rt,    \
                           int root, MPI_Comm comm)                                                                   \
    {                                                                                                                 \
        return NAME##_coll(sb, (CNT)sc, st, rb, (CNT)rc, rt, root, comm);                                             \
    }                                                                                                                 \
    MG_TUNE_API int NAME(const void *sendbuf, CNT sendcount, MPI_Datatype sendtype, void *recvbuf, CNT recvcount,     \
                         MPI_Datatype recvtype, int root, MPI_Comm comm)                                              \
    {                                                                                                                 \
        mg_tune__rec_begin(__func__);                                                                                 \
        int rc = mg_tune__dt_active()                                                                                 \
                     ? DT(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, NAME##_wide)        \
                     : NAME##_coll(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);           \
        return end_call(rc);                                                                                          \
    }

/* Allreduce, Scan (no root), Reduce_scatter_block (count is recvcount). */
#define DEF_REDUCTION(NAME, PNAME, CNT, COLL)                                                                       \
    static inline __attribute__((always_inline)) int NAME##_coll(const void *sendbuf, void *recvbuf, CNT count,     \
                                                                 MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)   \
    {                                                                                                               \
        mg_choice ch;                                                                                               \
        if (native_fast(COLL, comm) ||                                                                              \
            !decide(COLL, comm, count, datatype, op, (COLL) == MG_COLL_REDUCE_SCATTER_BLOCK, &ch))                  \
            return PNAME(sendbuf, recvbuf, count, datatype, op, comm);                                              \
        MG_CALL(COLL);                                                                                              \
        c.sendbuf = sendbuf, c.recvbuf = recvbuf, c.sendcount = count, c.recvcount = count;                         \
        c.sendtype = datatype, c.recvtype = datatype, c.op = op, c.comm = comm;                                     \
        c.in_place = sendbuf == MPI_IN_PLACE;                                                                       \
        mg_need need;                                                                                               \
        const mg_mockup *m = complete(&c, &ch, &need);                                                              \
        if (!m) return PNAME(sendbuf, recvbuf, count, datatype, op, comm);                                          \
        return run(&c, m, &need);                                                                                   \
    }                                                                                                               \
    MG_TUNE_API int NAME(const void *sendbuf, void *recvbuf, CNT count, MPI_Datatype datatype, MPI_Op op,           \
                         MPI_Comm comm)                                                                             \
    {                                                                                                               \
        mg_tune__rec_begin(__func__);                                                                               \
        mg_tune__rec_note_reduction(datatype, op);                                                                  \
        return end_call(NAME##_coll(sendbuf, recvbuf, count, datatype, op, comm));                                  \
    }

#define DEF_REDUCE(NAME, PNAME, CNT)                                                                                \
    static inline __attribute__((always_inline)) int NAME##_coll(const void *sendbuf, void *recvbuf, CNT count,     \
                                                                 MPI_Datatype datatype, MPI_Op op, int root,        \
                                                                 MPI_Comm comm)                                     \
    {                                                                                                               \
        mg_choice ch;                                                                                               \
        if (native_fast(MG_COLL_REDUCE, comm) || !decide(MG_COLL_REDUCE, comm, count, datatype, op, 0, &ch))        \
            return PNAME(sendbuf, recvbuf, count, datatype, op, root, comm);                                        \
        MG_CALL(MG_COLL_REDUCE);                                                                                    \
        c.sendbuf = sendbuf, c.recvbuf = recvbuf, c.sendcount = count, c.recvcount = count;                         \
        c.sendtype = datatype, c.recvtype = datatype, c.op = op, c.root = root, c.comm = comm;                      \
        c.in_place = sendbuf == MPI_IN_PLACE;                                                                       \
        mg_need need;                                                                                               \
        const mg_mockup *m = complete(&c, &ch, &need);                                                              \
        if (!m) return PNAME(sendbuf, recvbuf, count, datatype, op, root, comm);                                    \
        return run(&c, m, &need);                                                                                   \
    }                                                                                                               \
    MG_TUNE_API int NAME(const void *sendbuf, void *recvbuf, CNT count, MPI_Datatype datatype, MPI_Op op, int root, \
                         MPI_Comm comm)                                                                             \
    {                                                                                                               \
        mg_tune__rec_begin(__func__);                                                                               \
        mg_tune__rec_note_reduction(datatype, op);                                                                  \
        return end_call(NAME##_coll(sendbuf, recvbuf, count, datatype, op, root, comm));                            \
    }

#define DEF_BCAST(NAME, PNAME, CNT)                                                                              \
    static inline __attribute__((always_inline)) int NAME##_coll(void *buffer, CNT count, MPI_Datatype datatype, \
                                                                 int root, MPI_Comm comm)                        \
    {                                                                                                            \
        mg_choice ch;                                                                                            \
        if (native_fast(MG_COLL_BCAST, comm) || !decide(MG_COLL_BCAST, comm, count, datatype, MPI_OP_NULL, 0, &ch))  \
            return PNAME(buffer, count, datatype, root, comm);                                                   \
        MG_CALL(MG_COLL_BCAST);                                                                                  \
        c.sendbuf = buffer, c.recvbuf = buffer, c.sendcount = count, c.recvcount = count;                        \
        c.sendtype = datatype, c.recvtype = datatype, c.root = root, c.comm = comm;                              \
        mg_need need;                                                                                            \
        const mg_mockup *m = complete(&c, &ch, &need);                                                           \
        if (!m) return PNAME(buffer, count, datatype, root, comm);                                               \
        return run(&c, m, &need);                                                                                \
    }                                                                                                            \
    static int NAME##_wide(void *b, MPI_Count n, MPI_Datatype t, int root, MPI_Comm comm)                        \
    {                                                                                                            \
        return NAME##_coll(b, (CNT)n, t, root, comm);                                                            \
    }                                                                                                            \
    MG_TUNE_API int NAME(void *buffer, CNT count, MPI_Datatype datatype, int root, MPI_Comm comm)                \
    {                                                                                                            \
        mg_tune__rec_begin(__func__);                                                                            \
        int rc = mg_tune__dt_active() ? mg_tune__dt_bcast(buffer, count, datatype, root, comm, NAME##_wide)      \
                                      : NAME##_coll(buffer, count, datatype, root, comm);                        \
        return end_call(rc);                                                                                     \
    }

DEF_ALLGATHER_LIKE(MPI_Allgather, PMPI_Allgather, int, MG_COLL_ALLGATHER, mg_tune__dt_allgather)
DEF_ALLGATHER_LIKE(MPI_Alltoall, PMPI_Alltoall, int, MG_COLL_ALLTOALL, mg_tune__dt_alltoall)
DEF_ROOTED(MPI_Gather, PMPI_Gather, int, MG_COLL_GATHER, mg_tune__dt_gather)
DEF_ROOTED(MPI_Scatter, PMPI_Scatter, int, MG_COLL_SCATTER, mg_tune__dt_scatter)
DEF_REDUCTION(MPI_Allreduce, PMPI_Allreduce, int, MG_COLL_ALLREDUCE)
DEF_REDUCTION(MPI_Scan, PMPI_Scan, int, MG_COLL_SCAN)
DEF_REDUCTION(MPI_Reduce_scatter_block, PMPI_Reduce_scatter_block, int, MG_COLL_REDUCE_SCATTER_BLOCK)
DEF_REDUCE(MPI_Reduce, PMPI_Reduce, int)
DEF_BCAST(MPI_Bcast, PMPI_Bcast, int)

#ifdef MG_HAVE_MPI_LARGE_COUNT
DEF_ALLGATHER_LIKE(MPI_Allgather_c, PMPI_Allgather_c, MPI_Count, MG_COLL_ALLGATHER, mg_tune__dt_allgather)
DEF_ALLGATHER_LIKE(MPI_Alltoall_c, PMPI_Alltoall_c, MPI_Count, MG_COLL_ALLTOALL, mg_tune__dt_alltoall)
DEF_ROOTED(MPI_Gather_c, PMPI_Gather_c, MPI_Count, MG_COLL_GATHER, mg_tune__dt_gather)
DEF_ROOTED(MPI_Scatter_c, PMPI_Scatter_c, MPI_Count, MG_COLL_SCATTER, mg_tune__dt_scatter)
DEF_REDUCTION(MPI_Allreduce_c, PMPI_Allreduce_c, MPI_Count, MG_COLL_ALLREDUCE)
DEF_REDUCTION(MPI_Scan_c, PMPI_Scan_c, MPI_Count, MG_COLL_SCAN)
DEF_REDUCTION(MPI_Reduce_scatter_block_c, PMPI_Reduce_scatter_block_c, MPI_Count, MG_COLL_REDUCE_SCATTER_BLOCK)
DEF_REDUCE(MPI_Reduce_c, PMPI_Reduce_c, MPI_Count)
DEF_BCAST(MPI_Bcast_c, PMPI_Bcast_c, MPI_Count)
#endif
