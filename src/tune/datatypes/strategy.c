/* The datatype strategies of one side of a call (strategy.h).
 *
 * NORMALIZED hands the native call normal(t) in place of t: the same type map,
 * lb, extent and signature, so either side may use it whatever the other does;
 * where the MPI library packs a form class of normal(t) wrongly (form_verdicts.h) the
 * side takes PACK instead.
 * PACK hands it the engine's stream as MPI_PACKED: a message sent with any
 * type may be received as MPI_PACKED and one sent as MPI_PACKED may be
 * received with any type of the same signature (the stream is what MPI_Pack
 * writes on a homogeneous system), so PACK too mixes with anything. A
 * receive's status then counts the bytes that arrived, which is what
 * MPI_Get_count and MPI_Get_elements read with the application's type. */
#define _POSIX_C_SOURCE 200809L
#include "strategy.h"
#include "../comms.h"
#include "../handles.h"
#include "../lifecycle.h"
#include "mpiguide/dt.h"
#include <limits.h>

/* Each thread's last two answers of mg_tune__type_plan (the two sides of a
 * call): a loop of calls with predefined types asks no map. Valid while no
 * record was deleted (a handle may name another type) and no type was
 * committed (a type may have become eligible). */
typedef struct {
    MPI_Datatype type;
    const mg_type_plan *plan;
    unsigned deletions, commits;
    int valid;
} plan_memo;
static _Thread_local plan_memo memos[2] __attribute__((tls_model("initial-exec")));
static _Thread_local int memo_next __attribute__((tls_model("initial-exec")));

static const mg_type_plan *plan_of(MPI_Datatype type)
{
    unsigned d = atomic_load_explicit(&mg_hmap_deletions, memory_order_acquire);
    unsigned c = atomic_load_explicit(&mg_tune__commits, memory_order_acquire);
    for (int i = 0; i < 2; i++)
        if (memos[i].valid && memos[i].type == type && memos[i].deletions == d && memos[i].commits == c)
            return memos[i].plan;
    const mg_type_plan *p = mg_tune__type_plan(type);
    memos[memo_next] = (plan_memo){type, p, d, c, 1};
    memo_next ^= 1;
    return p;
}

int mg_tune__dt_has_plan(MPI_Datatype type) { return plan_of(type) != NULL; }

static void native(mg_dt_side *x)
{
    x->s = MG_DTS_NATIVE;
    x->buf = x->user;
    x->count = x->ucount;
    x->type = x->utype;
}

/* The strategy the mode gives a call: the forced one (forced mode), DEFAULT
 * (tuned mode with datatype profiles and online mode: the profiles, then online
 * mode's keys, decide per call), else NATIVE. */
static mg_dts configured(void)
{
    unsigned h = atomic_load_explicit(&mg_tune_hot.word, memory_order_acquire);
    if (MG_HOT_MODE(h) == MG_TUNE_ONLINE) return MG_DTS_DEFAULT;
    if (MG_HOT_MODE(h) == MG_TUNE_TUNED) {
        const mg_tune_live *l = atomic_load_explicit(&mg_tune_hot.live, memory_order_acquire);
        return l && l->ps.ndt > 0 ? MG_DTS_DEFAULT : MG_DTS_NATIVE;
    }
    if (MG_HOT_MODE(h) != MG_TUNE_FORCED) return MG_DTS_NATIVE;
    mg_dts s = (mg_dts)atomic_load_explicit(&mg_tune_hot.dt_forced, memory_order_relaxed);
    return s == MG_DTS_NORMALIZED || s == MG_DTS_PACK ? s : MG_DTS_NATIVE;
}

/* What the datatype profile of (op, procs) says for the type of plan t (NULL:
 * the rules for any type only) and bytes; DEFAULT if nothing. */
static mg_dts rule_of(mg_dtop op, int procs, const mg_type_plan *t, MPI_Count bytes)
{
    const mg_tune_live *l = atomic_load_explicit(&mg_tune_hot.live, memory_order_acquire);
    const mg_tune_dt_profile *p = l ? mg_tune__dt_profiles_get(&l->ps, mg_tune__dtclass_of(op), procs) : NULL;
    return p ? mg_tune__dt_profile_rule(p, t ? t->shape : NULL, t ? t->block : 0, bytes) : MG_DTS_DEFAULT;
}

/* Tuned mode: the profile's strategy; NATIVE if nothing. */
static mg_dts profiled(mg_dtop op, int procs, const mg_type_plan *t, MPI_Count bytes)
{
    mg_dts s = rule_of(op, procs, t, bytes);
    return s == MG_DTS_DEFAULT ? MG_DTS_NATIVE : s;
}

void mg_tune__dt_count(mg_dtop op, MPI_Count bytes, mg_dts s)
{
    if (atomic_load_explicit(&mg_tune_hot.word, memory_order_relaxed) & MG_HOT_COUNT) mg_tune__count_dt(op, bytes, s);
}

static void side(mg_dt_side *x, const mg_dt_side *lead, mg_dtop op, MPI_Comm comm, int peer, const void *buf,
                 MPI_Count count, MPI_Datatype type, int how);

/* What the record notes of a side of a call, remembered per thread (valid as
 * plan_of's memos are; the oldest of NOTES replaced): a loop of a few kinds of
 * calls looks nothing up. */
typedef struct {
    MPI_Comm comm;
    MPI_Datatype type;
    MPI_Count count, bytes;
    unsigned deletions, commits;
    int size, valid;
    const mg_type_plan *plan;
} note_memo;
enum { NOTES = 4 };
static _Thread_local note_memo notes[NOTES] __attribute__((tls_model("initial-exec")));
static _Thread_local int note_next __attribute__((tls_model("initial-exec")));

void mg_tune__dt_rec_note(int k, MPI_Comm comm, MPI_Count count, MPI_Datatype type, mg_dts s)
{
    if (type == MPI_DATATYPE_NULL) { /* the side is not significant on this rank */
        mg_tune__rec_note_type(k, s, NULL);
        return;
    }
    unsigned d = atomic_load_explicit(&mg_hmap_deletions, memory_order_acquire);
    unsigned c = atomic_load_explicit(&mg_tune__commits, memory_order_acquire);
    note_memo *m = notes;
    while (m < notes + NOTES && !(m->valid && m->comm == comm && m->type == type && m->count == count &&
                                  m->deletions == d && m->commits == c))
        m++;
    if (m == notes + NOTES) {
        const mg_comm_info *info = comm != MPI_COMM_NULL ? mg_tune__comm_info(comm) : NULL;
        const mg_type_plan *p = count > 0 ? plan_of(type) : NULL;
        MPI_Count bytes = count < 0 ? -1 : p ? count * p->size : mg_type_bytes(count, type);
        m = &notes[note_next];
        note_next = (note_next + 1) % NOTES;
        *m = (note_memo){comm, type, count, bytes, d, c, info ? info->size : -1, 1, p};
    }
    mg_tune__rec_note_size(m->size, m->bytes);
    mg_tune__rec_note_type(k, s, m->plan);
}

void mg_tune__dt_side(mg_dt_side *x, mg_dtop op, MPI_Comm comm, int peer, const void *buf, MPI_Count count,
                      MPI_Datatype type, int how)
{
    mg_tune__dt_side_with(x, NULL, op, comm, peer, buf, count, type, how);
}

void mg_tune__dt_side_with(mg_dt_side *x, const mg_dt_side *lead, mg_dtop op, MPI_Comm comm, int peer,
                           const void *buf, MPI_Count count, MPI_Datatype type, int how)
{
    side(x, lead, op, comm, peer, buf, count, type, how);
    /* a message to or from MPI_PROC_NULL moves nothing: recorded without bytes or type (a call's other side
     * may give them), not as a transfer that `mpiguide app tune` would measure */
    if (mg_tune__rec_active())
        mg_tune__dt_rec_note(how == MG_DT_RECV, comm, count, peer == MPI_PROC_NULL ? MPI_DATATYPE_NULL : type, x->s);
}

static void side(mg_dt_side *x, const mg_dt_side *lead, mg_dtop op, MPI_Comm comm, int peer, const void *buf,
                 MPI_Count count, MPI_Datatype type, int how)
{
    int send = how != MG_DT_RECV;
    /* field by field: a compound literal zeroes the whole struct (a rep stos of about 20 ns per side on the
     * project's VM, the largest cost of recording a point-to-point call) */
    x->send = send;
    x->plan = NULL;
    x->user = (void *)buf;
    x->ucount = count;
    x->utype = type;
    x->lease = NULL;
    x->online.key = NULL; /* the rest of the mark is read only with a key, or where a key picked */
    x->online.picked = MG_DTS_DEFAULT;
    native(x);
    /* MPI_BOTTOM: absolute addresses, which the engine does not take */
    if (count <= 0 || peer == MPI_PROC_NULL || buf == MPI_BOTTOM) return;
    /* the type first: most calls carry predefined types, which have no plan */
    const mg_type_plan *p = plan_of(type);
    MPI_Count bytes;
    mg_dts s;
    if (!p || __builtin_mul_overflow(count, p->size, &bytes) || bytes > INT_MAX || (s = configured()) == MG_DTS_NATIVE)
        return;
    const mg_comm_info *info = mg_tune__comm_info(comm);
    if (!info || info->inter) return;
    if (s == MG_DTS_DEFAULT) {
        s = rule_of(op, info->size, p, bytes);
        /* online mode: what no profile covers is learnt in the run, where the call's time is its own */
        unsigned h = atomic_load_explicit(&mg_tune_hot.word, memory_order_relaxed);
        int online = MG_HOT_MODE(h) == MG_TUNE_ONLINE && mg_tune__dt_online_takes(op);
        if (s == MG_DTS_DEFAULT && !online)
            s = MG_DTS_NATIVE;
        else if (s == MG_DTS_DEFAULT && lead && lead->online.picked != MG_DTS_DEFAULT)
            s = lead->online.picked; /* chosen with the call's other side: its key has the call's time */
        else if (s == MG_DTS_DEFAULT)
            s = mg_tune__dt_online_pick(&x->online, op, p, bytes, 1);
    }
    /* the library packs normal(t) wrongly (types.h): the engine's stream, which
     * MPI defines for any peer, keeps the result exact */
    if (s == MG_DTS_NORMALIZED && p->refused) s = MG_DTS_PACK;
    if (s == MG_DTS_NORMALIZED && p->normal != MPI_DATATYPE_NULL) {
        x->s = s;
        x->plan = p;
        x->type = p->normal;
    } else if (s == MG_DTS_PACK) {
        mg_lease *l = mg_lease_acquire((size_t)bytes, 0);
        void *stream = l ? mg_lease_msg(l, (size_t)bytes) : NULL;
        MPI_Count done = 0;
        if (!stream || (how == MG_DT_SEND &&
                        (mg_dt_pack(p->dt, buf, count, 0, stream, bytes, &done) != MG_DT_SUCCESS || done != bytes))) {
            if (l) mg_lease_release(l);
        } else {
            x->s = s;
            x->plan = p;
            x->lease = l;
            x->buf = stream;
            x->count = bytes;
            x->type = MPI_PACKED;
        }
    }
    /* a side that could not take its candidate (out of memory) does not time it */
    if (x->online.key && x->s != x->online.picked) x->online.key = NULL;
    mg_tune__dt_count(op, bytes, x->s);
}

void mg_tune__dt_unpack(mg_dt_side *x, int rc, const MPI_Status *st)
{
    if (x->s != MG_DTS_PACK || x->send) return;
    int cls = MPI_SUCCESS, got = 0;
    if (rc != MPI_SUCCESS) PMPI_Error_class(rc, &cls);
    if ((cls == MPI_SUCCESS || cls == MPI_ERR_TRUNCATE) && PMPI_Get_count(st, MPI_PACKED, &got) == MPI_SUCCESS &&
        got > 0) {
        MPI_Count done;
        mg_dt_unpack(x->plan->dt, x->buf, got, 0, x->user, x->ucount, &done);
    }
}

void mg_tune__dt_repack(mg_dt_side *x)
{
    MPI_Count done;
    if (x->s == MG_DTS_PACK && x->send) mg_dt_pack(x->plan->dt, x->user, x->ucount, 0, x->buf, x->count, &done);
}

void mg_tune__dt_release(mg_dt_side *x)
{
    if (x->lease) mg_lease_release(x->lease);
    x->lease = NULL;
}

void mg_tune__dt_finish(mg_dt_side *x, int rc, const MPI_Status *st)
{
    mg_tune__dt_unpack(x, rc, st);
    mg_tune__dt_release(x);
    if (rc == MPI_SUCCESS) mg_tune__dt_online_done(&x->online);
}

mg_dts mg_tune__dt_coll_strategy(mg_dtop op, MPI_Comm comm, MPI_Count bytes, int shared, MPI_Datatype type,
                                 mg_dt_online_mark *online)
{
    if (online) online->key = NULL;
    mg_dts s = configured();
    if (s == MG_DTS_NATIVE) return s;
    const mg_comm_info *info = comm == MPI_COMM_NULL ? NULL : mg_tune__comm_info(comm);
    if (!info || info->inter) return MG_DTS_NATIVE;
    if (s != MG_DTS_DEFAULT) return s;
    /* tuned: PACK as all ranks decide it, else what this rank's type asks for */
    if (shared && bytes >= 0 && profiled(op, info->size, NULL, bytes) == MG_DTS_PACK) return MG_DTS_PACK;
    const mg_type_plan *p = type != MPI_DATATYPE_NULL ? plan_of(type) : NULL;
    s = p ? rule_of(op, info->size, p, bytes) : MG_DTS_NATIVE;
    /* online mode: normalizing is this rank's own choice (the type signature stays), packing is not */
    unsigned h = atomic_load_explicit(&mg_tune_hot.word, memory_order_relaxed);
    if (s == MG_DTS_DEFAULT && online && MG_HOT_MODE(h) == MG_TUNE_ONLINE && bytes >= 0)
        s = mg_tune__dt_online_pick(online, op, p, bytes, 0);
    return s == MG_DTS_PACK || s == MG_DTS_DEFAULT ? MG_DTS_NATIVE : s;
}

MPI_Datatype mg_tune__dt_normal(MPI_Datatype type)
{
    const mg_type_plan *p = plan_of(type);
    return p && p->normal != MPI_DATATYPE_NULL ? p->normal : type;
}

int mg_tune__dt_put(const void *buf, MPI_Count count, MPI_Datatype type, void *stream, MPI_Comm comm)
{
    const mg_type_plan *p = count > 0 ? plan_of(type) : NULL;
    if (!p) return mg_call_pack(buf, count, type, stream, comm);
    MPI_Count done;
    return mg_dt_pack(p->dt, buf, count, 0, stream, count * p->size, &done) == MG_DT_SUCCESS ? MPI_SUCCESS
                                                                                             : MPI_ERR_INTERN;
}

int mg_tune__dt_get(const void *stream, void *buf, MPI_Count count, MPI_Datatype type, MPI_Comm comm)
{
    const mg_type_plan *p = count > 0 ? plan_of(type) : NULL;
    if (!p) return mg_call_unpack(stream, buf, count, type, comm);
    MPI_Count done;
    return mg_dt_unpack(p->dt, stream, count * p->size, 0, buf, count, &done) == MG_DT_SUCCESS ? MPI_SUCCESS
                                                                                               : MPI_ERR_INTERN;
}
