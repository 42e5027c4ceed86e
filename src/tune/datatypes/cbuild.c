/* The builder of the collectives' native calls (cbuild.h; the rules of PACK
 * in a collective are at the top of collectives.c).
 *
 * A call has a send side and a receive side, each of k blocks (count x type
 * at a displacement of its buffer) where it is significant on this rank: the
 * regular forms' blocks follow each other, the v forms' lie at displacements
 * in elements of one type, the w forms' at byte displacements with a type
 * each. NORMALIZED gives the native call normal(t) for every type (the w
 * forms: arrays of them, kept until the operation completes). PACK gives it
 * MPI_PACKED: every block's bytes, where they already lie in the buffer (each
 * block one contiguous run whose displacement fits the form's integers), else
 * in a stream of the side's blocks one after the other, packed from the
 * application's buffer when the operation starts (the send blocks, and the
 * blocks MPI_IN_PLACE sends from the receive buffer) and unpacked into it
 * when the operation completes (the receive blocks, but a block that stays in
 * place and the blocks of MPI_PROC_NULL neighbours, which MPI does not
 * write). */
#define _POSIX_C_SOURCE 200809L
#include "cbuild.h"
#include "../comms.h"
#include "coll_util.h"
#include <limits.h>
#include <stdint.h>
#include <string.h>

enum { REG, V, W };              /* a side's form */
enum { PUT_NONE = -1, PUT_ALL = -2 }; /* which blocks of a side are packed at the start (else one block's index) */

typedef struct {
    mg_dtcoll_kind kind;
    int form, cw, dw; /* cw, dw: counts are MPI_Count, displacements MPI_Aint (else ints) */
    MPI_Comm comm;
    int me, p, in, out, cart; /* rank, size; a topology's in- and outdegree, and whether it is Cartesian */
} ctx;

/* One side of the call as the application makes it. */
typedef struct {
    int present, form, k;
    char *buf;
    MPI_Count count;             /* REG */
    MPI_Datatype type;           /* REG, V */
    MPI_Aint extent;             /* of type */
    const void *counts, *displs; /* V, W */
    const MPI_Datatype *types;   /* W */
    int put, get, skip;          /* packed at the start (PUT_*); unpacked at the end, but block `skip` */
    int nbr;                     /* block i is neighbour i's: none at MPI_PROC_NULL */
    /* under PACK */
    int direct;      /* the bytes lie in buf: no stream */
    MPI_Aint off;    /* REG, direct: where the run starts */
    MPI_Count total; /* bytes */
    char *stream;
} side;

static MPI_Count count_at(const void *a, int wide, int i)
{
    return wide ? ((const MPI_Count *)a)[i] : (MPI_Count)((const int *)a)[i];
}

static MPI_Aint displ_at(const void *a, int wide, int i)
{
    return wide ? ((const MPI_Aint *)a)[i] : (MPI_Aint)((const int *)a)[i];
}

static void count_put(void *a, int wide, int i, MPI_Count v)
{
    if (wide)
        ((MPI_Count *)a)[i] = v;
    else
        ((int *)a)[i] = (int)v;
}

static void displ_put(void *a, int wide, int i, MPI_Aint v)
{
    if (wide)
        ((MPI_Aint *)a)[i] = v;
    else
        ((int *)a)[i] = (int)v;
}

/* Block i of u: its byte displacement from u->buf, its count and type. */
static MPI_Aint block(const ctx *c, const side *u, int i, MPI_Count *count, MPI_Datatype *type)
{
    switch (u->form) {
    case REG: *count = u->count, *type = u->type; return (MPI_Aint)i * (MPI_Aint)u->count * u->extent;
    case V:
        *count = count_at(u->counts, c->cw, i), *type = u->type;
        return displ_at(u->displs, c->dw, i) * u->extent;
    default: *count = count_at(u->counts, c->cw, i), *type = u->types[i]; return displ_at(u->displs, c->dw, i);
    }
}

/* 1 if neighbour i of a Cartesian communicator is MPI_PROC_NULL. */
static int null_neighbour(const ctx *c, int i)
{
    int src, dst;
    if (!c->cart || PMPI_Cart_shift(c->comm, i / 2, 1, &src, &dst) != MPI_SUCCESS) return 0;
    return (i % 2 ? dst : src) == MPI_PROC_NULL;
}

static side make(int form, const void *buf, int k, MPI_Count count, MPI_Datatype type, const void *counts,
                 const void *displs, const MPI_Datatype *types)
{
    side u = {.present = 1, .form = form, .k = k, .buf = (char *)buf, .count = count, .type = type, .counts = counts,
              .displs = displs, .types = types, .put = PUT_NONE, .get = 1, .skip = -1};
    MPI_Aint lb;
    if (form != W && PMPI_Type_get_extent(type, &lb, &u.extent) != MPI_SUCCESS) u.extent = 0;
    return u;
}
#define REGULAR(buf, k, count, type) make(REG, buf, k, count, type, NULL, NULL, NULL)
#define VECTOR(buf, k, counts, displs, type) make(V, buf, k, 0, type, counts, displs, NULL)
#define TYPES(buf, k, counts, displs, types) make(W, buf, k, 0, MPI_DATATYPE_NULL, counts, displs, types)

/* The bytes of the receive side's blocks; -1 if a count or type is wrong. */
static MPI_Count received(const ctx *c, const side *u)
{
    MPI_Count all = 0, count, n;
    MPI_Datatype type;
    for (int i = 0; i < u->k; i++) {
        block(c, u, i, &count, &type);
        if (count < 0 || (n = mg_type_bytes(count, type)) < 0 || __builtin_add_overflow(all, n, &all)) return -1;
    }
    return all;
}

/* The sides of the call on this rank; returns the bytes it is counted and
 * looked up by (docs/tuning.md, "The report"). */
static MPI_Count describe(const ctx *c, const mg_cb_args *a, side *S, side *R)
{
    int k = c->kind, root = c->me == a->root, ips = a->sbuf == MPI_IN_PLACE, ipr = a->rbuf == MPI_IN_PLACE;
    /* a side's bytes, asked only where it is significant (elsewhere its type may be anything) */
#define sent mg_type_bytes(a->scount, a->stype)
#define got mg_type_bytes(a->rcount, a->rtype)
    MPI_Count key = -1;
    switch (k) {
    case MG_DTK_BCAST:
        *R = REGULAR(a->rbuf, 1, a->rcount, a->rtype);
        if (root) R->put = PUT_ALL, R->get = 0;
        key = got;
        break;
    case MG_DTK_GATHER:
    case MG_DTK_GATHERV:
        if (!ips) *S = REGULAR(a->sbuf, 1, a->scount, a->stype);
        if (root) {
            *R = k == MG_DTK_GATHER ? REGULAR(a->rbuf, c->p, a->rcount, a->rtype)
                                    : VECTOR(a->rbuf, c->p, a->rcounts, a->rdispls, a->rtype);
            if (ips) R->skip = c->me;
        }
        key = k == MG_DTK_GATHERV ? (ips ? 0 : sent) : root ? got : sent;
        break;
    case MG_DTK_SCATTER:
    case MG_DTK_SCATTERV:
        if (root)
            *S = k == MG_DTK_SCATTER ? REGULAR(a->sbuf, c->p, a->scount, a->stype)
                                     : VECTOR(a->sbuf, c->p, a->scounts, a->sdispls, a->stype);
        if (!(root && ipr)) *R = REGULAR(a->rbuf, 1, a->rcount, a->rtype);
        key = k == MG_DTK_SCATTERV ? (ipr ? 0 : got) : root ? sent : got;
        break;
    case MG_DTK_ALLGATHER:
    case MG_DTK_ALLGATHERV:
        if (!ips) *S = REGULAR(a->sbuf, 1, a->scount, a->stype);
        *R = k == MG_DTK_ALLGATHER ? REGULAR(a->rbuf, c->p, a->rcount, a->rtype)
                                   : VECTOR(a->rbuf, c->p, a->rcounts, a->rdispls, a->rtype);
        if (ips) R->put = R->skip = c->me; /* the own block is sent from the receive buffer, and stays */
        key = k == MG_DTK_ALLGATHER ? (ips ? got : sent) : ips ? 0 : sent;
        break;
    case MG_DTK_ALLTOALL:
    case MG_DTK_ALLTOALLV:
    case MG_DTK_ALLTOALLW:
        if (!ips)
            *S = k == MG_DTK_ALLTOALL    ? REGULAR(a->sbuf, c->p, a->scount, a->stype)
                 : k == MG_DTK_ALLTOALLV ? VECTOR(a->sbuf, c->p, a->scounts, a->sdispls, a->stype)
                                         : TYPES(a->sbuf, c->p, a->scounts, a->sdispls, a->stypes);
        *R = k == MG_DTK_ALLTOALL    ? REGULAR(a->rbuf, c->p, a->rcount, a->rtype)
             : k == MG_DTK_ALLTOALLV ? VECTOR(a->rbuf, c->p, a->rcounts, a->rdispls, a->rtype)
                                     : TYPES(a->rbuf, c->p, a->rcounts, a->rdispls, a->rtypes);
        if (ips) R->put = PUT_ALL; /* every block is sent from the receive buffer */
        key = k == MG_DTK_ALLTOALL ? (ips ? got : sent) : received(c, R);
        break;
    case MG_DTK_NEIGHBOR_ALLGATHER:
    case MG_DTK_NEIGHBOR_ALLGATHERV:
        *S = REGULAR(a->sbuf, 1, a->scount, a->stype); /* to every neighbour */
        *R = k == MG_DTK_NEIGHBOR_ALLGATHER ? REGULAR(a->rbuf, c->in, a->rcount, a->rtype)
                                            : VECTOR(a->rbuf, c->in, a->rcounts, a->rdispls, a->rtype);
        R->nbr = 1;
        key = sent;
        break;
    default: /* the neighbourhood all-to-alls */
        *S = k == MG_DTK_NEIGHBOR_ALLTOALL    ? REGULAR(a->sbuf, c->out, a->scount, a->stype)
             : k == MG_DTK_NEIGHBOR_ALLTOALLV ? VECTOR(a->sbuf, c->out, a->scounts, a->sdispls, a->stype)
                                              : TYPES(a->sbuf, c->out, a->scounts, a->sdispls, a->stypes);
        *R = k == MG_DTK_NEIGHBOR_ALLTOALL    ? REGULAR(a->rbuf, c->in, a->rcount, a->rtype)
             : k == MG_DTK_NEIGHBOR_ALLTOALLV ? VECTOR(a->rbuf, c->in, a->rcounts, a->rdispls, a->rtype)
                                              : TYPES(a->rbuf, c->in, a->rcounts, a->rdispls, a->rtypes);
        S->nbr = R->nbr = 1;
        key = k == MG_DTK_NEIGHBOR_ALLTOALL ? sent : received(c, R);
        break;
    }
#undef sent
#undef got
    if (S->present) S->put = PUT_ALL, S->get = 0;
    return key;
}

/* The type a side is counted and looked up by: its type, the first derived one of a w side's. */
static MPI_Datatype side_type(const side *u)
{
    if (!u->present) return MPI_DATATYPE_NULL;
    if (u->form != W) return u->type;
    MPI_Datatype t = MPI_DATATYPE_NULL;
    for (int i = 0; i < u->k; i++) t = derived_of(t, u->types[i]);
    return t;
}

/* ctx of the call: rank, and a neighbourhood collective's topology; -1 if comm has none. */
static int setup(ctx *c)
{
    c->me = rank_of(c->comm);
    if (c->kind < MG_DTK_NEIGHBOR_ALLGATHER) return 0;
    int topo = MPI_UNDEFINED, nd, weighted;
    if (PMPI_Topo_test(c->comm, &topo) != MPI_SUCCESS) return -1;
    switch (topo) {
    case MPI_CART:
        if (PMPI_Cartdim_get(c->comm, &nd) != MPI_SUCCESS) return -1;
        c->in = c->out = 2 * nd, c->cart = 1;
        return 0;
    case MPI_GRAPH:
        if (PMPI_Graph_neighbors_count(c->comm, c->me, &c->in) != MPI_SUCCESS) return -1;
        c->out = c->in;
        return 0;
    case MPI_DIST_GRAPH:
        return PMPI_Dist_graph_neighbors_count(c->comm, &c->in, &c->out, &weighted) == MPI_SUCCESS ? 0 : -1;
    default: return -1;
    }
}

static size_t round64(size_t n) { return (n + 63) / 64 * 64; }

/* 1 on Intel MPI 2021 (asked once; every rank gets the same answer), whose
 * persistent collectives have bugs the strategies must not change
 * (docs/tuning.md, "Known MPI library bugs"): MPI_Gather_init and
 * MPI_Scatter_init send the data of their _init and write the root's own
 * block there, whatever the type, so PACK there would give other wrong
 * results than the native call; MPI_Allgather_init releases its datatype once
 * per start, which would free the library's normal(t). */
static int intel_2021(void)
{
    static _Atomic int known; /* 0: not asked yet, 1: no, 2: yes */
    int k = atomic_load_explicit(&known, memory_order_relaxed);
    if (!k) {
        char v[MPI_MAX_LIBRARY_VERSION_STRING] = "";
        int len = 0;
        k = PMPI_Get_library_version(v, &len) == MPI_SUCCESS && strstr(v, "Intel(R) MPI Library 2021") ? 2 : 1;
        atomic_store_explicit(&known, k, memory_order_relaxed);
    }
    return k == 2;
}

/* Under PACK: the side's bytes and whether they lie in its buffer where the
 * native call can take them; -1 if this rank cannot pack it (a wrong count,
 * a size beyond the form's integers, MPI_BOTTOM). */
static int side_size(const ctx *c, side *u)
{
    MPI_Count cmax = c->cw ? INT64_MAX : INT_MAX, count, n;
    MPI_Aint dmax = c->dw ? INTPTR_MAX : INT_MAX, dmin = c->dw ? INTPTR_MIN : INT_MIN, off;
    MPI_Datatype type;
    u->total = 0, u->direct = 1, u->off = 0;
    if (!u->present) return 0;
    if (u->form == REG) {
        n = mg_type_bytes(u->count, u->type);
        if (u->count < 0 || n < 0 || n > cmax || __builtin_mul_overflow(n, (MPI_Count)u->k, &u->total)) return -1;
        u->direct = u->total == 0 || mg_type_contiguous((MPI_Count)u->k * u->count, u->type, &u->off);
    } else {
        for (int i = 0; i < u->k; i++) {
            MPI_Aint d = block(c, u, i, &count, &type);
            if (count < 0 || (n = mg_type_bytes(count, type)) < 0 || n > cmax ||
                __builtin_add_overflow(u->total, n, &u->total))
                return -1;
            if (n > 0 && (!mg_type_contiguous(count, type, &off) || d + off < dmin || d + off > dmax)) u->direct = 0;
        }
        if (!u->direct && u->total > dmax) return -1;
    }
    return u->total > 0 && (u->buf == (char *)MPI_BOTTOM || u->buf == NULL) ? -1 : 0;
}

/* Memory of the side's stream and native arrays. */
static size_t side_mem(const ctx *c, const side *u)
{
    if (!u->present) return 0;
    size_t m = u->direct ? 0 : round64((size_t)u->total), k = (size_t)u->k;
    size_t cs = c->cw ? sizeof(MPI_Count) : sizeof(int), ds = c->dw ? sizeof(MPI_Aint) : sizeof(int);
    if (u->form != REG) m += round64(k * cs) + round64(k * ds) + (u->form == W ? round64(k * sizeof(MPI_Datatype)) : 0);
    return m;
}

/* What the native call gets for one side. */
typedef struct {
    void **buf;
    MPI_Count *count;
    const void **counts, **displs;
    MPI_Datatype *type;
    const MPI_Datatype **types;
} native_side;

static char *take(char **mem, size_t n)
{
    char *p = *mem;
    *mem += round64(n);
    return p;
}

/* Lays the side out for the native call as MPI_PACKED, from mem. */
static void side_fill(const ctx *c, side *u, char **mem, native_side ns)
{
    if (!u->present) return;
    u->stream = u->direct ? NULL : take(mem, (size_t)u->total);
    *ns.type = MPI_PACKED;
    if (u->form == REG) {
        *ns.buf = u->stream ? u->stream : u->off ? u->buf + u->off : u->buf;
        *ns.count = mg_type_bytes(u->count, u->type);
        return;
    }
    void *counts = take(mem, (size_t)u->k * (c->cw ? sizeof(MPI_Count) : sizeof(int)));
    void *displs = take(mem, (size_t)u->k * (c->dw ? sizeof(MPI_Aint) : sizeof(int)));
    MPI_Datatype *types = u->form == W ? (MPI_Datatype *)take(mem, (size_t)u->k * sizeof(MPI_Datatype)) : NULL;
    MPI_Count at = 0, count, n;
    MPI_Datatype type;
    MPI_Aint off = 0;
    for (int i = 0; i < u->k; i++) {
        MPI_Aint d = block(c, u, i, &count, &type);
        n = mg_type_bytes(count, type);
        count_put(counts, c->cw, i, n);
        if (u->stream)
            displ_put(displs, c->dw, i, (MPI_Aint)at);
        else
            displ_put(displs, c->dw, i, n > 0 && mg_type_contiguous(count, type, &off) ? d + off : 0);
        if (types) types[i] = MPI_PACKED;
        at += n;
    }
    *ns.buf = u->stream ? u->stream : u->buf;
    *ns.counts = counts, *ns.displs = displs;
    if (types) *ns.types = types;
}

/* The side's blocks that are packed (putting) or unpacked, appended to k's. -1
 * if a block's type can be kept neither by its plan nor as a run or a
 * predefined type (a request outlives the application's handle). */
static int side_blocks(const ctx *c, const side *u, int putting, mg_dt_coll *k)
{
    if (!u->present || u->direct) return 0;
    MPI_Count at = 0, count, n;
    MPI_Datatype type;
    for (int i = 0; i < u->k; i++) {
        MPI_Aint d = block(c, u, i, &count, &type);
        n = mg_type_bytes(count, type);
        MPI_Count pos = at;
        at += n;
        int want = putting ? u->put == PUT_ALL || u->put == i : u->get && u->skip != i;
        if (!want || n == 0 || (u->nbr && null_neighbour(c, i))) continue;
        mg_dt_block *b = &k->blocks[k->nput + k->nget];
        *b = (mg_dt_block){.user = u->buf + d, .count = count, .type = type, .run = -1, .bytes = n,
                           .stream = u->stream + pos};
        *(putting ? &k->nput : &k->nget) += 1;
        const mg_type_plan *p = mg_tune__type_plan(type);
        MPI_Aint off;
        if (p) {
            mg_tune__plan_hold(p);
            b->plan = p;
        } else if (mg_type_contiguous(count, type, &off)) {
            b->run = off;
        } else if (c->form != MG_DT_BLOCKING && !mg_type_predefined(type)) {
            return -1;
        }
    }
    return 0;
}

static native_side send_of(mg_cb_args *n)
{
    return (native_side){(void **)&n->sbuf, &n->scount, &n->scounts, &n->sdispls, &n->stype, &n->stypes};
}

static native_side recv_of(mg_cb_args *n)
{
    return (native_side){&n->rbuf, &n->rcount, &n->rcounts, &n->rdispls, &n->rtype, &n->rtypes};
}

/* PACK: x's native arguments, blocks and memory; -1 if this rank cannot take part (x unchanged). */
static int packed(const ctx *c, side *S, side *R, mg_cb_call *x)
{
    if (side_size(c, S) != 0 || side_size(c, R) != 0) return -1;
    size_t nblocks = (S->present && !S->direct ? (size_t)S->k : 0) + (R->present && !R->direct ? 2 * (size_t)R->k : 0);
    size_t bytes = round64(nblocks * sizeof(mg_dt_block)), rest = side_mem(c, S) + side_mem(c, R);
    mg_cb_args n = x->n;
    if (nblocks == 0 && rest == 0) { /* every byte lies where the native call finds it */
        char *none = NULL;
        side_fill(c, S, &none, send_of(&n));
        side_fill(c, R, &none, recv_of(&n));
        x->n = n;
        return 0;
    }
    char *mem;
    mg_dt_coll *k = mg_tune__dt_coll_new(bytes + rest, c->form == MG_DT_BLOCKING, &mem);
    if (!k) return -1;
    k->blocks = (mg_dt_block *)take(&mem, bytes);
    side_fill(c, S, &mem, send_of(&n));
    side_fill(c, R, &mem, recv_of(&n));
    /* a persistent call packs at its _init too: Intel MPI 2021 takes some persistent collectives' send
     * buffers there (and then gets what the native call gets) */
    if (side_blocks(c, S, 1, k) || side_blocks(c, R, 1, k) || side_blocks(c, R, 0, k) ||
        mg_tune__dt_coll_put(k) != MPI_SUCCESS) {
        mg_tune__dt_coll_free(k);
        return -1;
    }
    x->n = n;
    x->keep = k;
    return 0;
}

/* NORMALIZED: normal(t) for every type of a significant side; a w side's in
 * an array of the call's (if there is no memory for it, its own types). */
static void normalize(const ctx *c, const side *S, const side *R, mg_cb_call *x)
{
    if (S->present && S->form != W) x->n.stype = mg_tune__dt_normal(S->type);
    if (R->present && R->form != W) x->n.rtype = mg_tune__dt_normal(R->type);
    size_t ks = S->present && S->form == W ? (size_t)S->k : 0, kr = R->present && R->form == W ? (size_t)R->k : 0;
    char *mem;
    mg_dt_coll *k = ks + kr ? mg_tune__dt_coll_new((ks + kr) * sizeof(MPI_Datatype), c->form == MG_DT_BLOCKING, &mem)
                            : NULL;
    if (!k) return;
    MPI_Datatype *ts = (MPI_Datatype *)mem, *tr = ts + ks;
    for (size_t i = 0; i < ks; i++) ts[i] = mg_tune__dt_normal(S->types[i]);
    for (size_t i = 0; i < kr; i++) tr[i] = mg_tune__dt_normal(R->types[i]);
    if (ks) x->n.stypes = ts;
    if (kr) x->n.rtypes = tr;
    x->keep = k;
}

void mg_tune__cb_build(mg_dtcoll_kind kind, int form, int wide, const mg_cb_args *a, mg_cb_call *x)
{
    *x = (mg_cb_call){.n = *a, .form = form};
    mg_dtop op = mg_tune__dtop_of(kind, form);
    ctx c = {.kind = kind, .form = form, .cw = wide, .dw = wide || kind == MG_DTK_NEIGHBOR_ALLTOALLW, .comm = a->comm};
    const mg_comm_info *info = a->comm == MPI_COMM_NULL ? NULL : mg_tune__comm_info(a->comm);
    int rooted = kind == MG_DTK_BCAST || kind == MG_DTK_GATHER || kind == MG_DTK_GATHERV || kind == MG_DTK_SCATTER ||
                 kind == MG_DTK_SCATTERV;
    /* the native call: arguments that are not ours to read, or a root MPI refuses (its error handler may
     * return, and the call with it: nothing arrived) */
    if (!info || info->inter || setup(&c) != 0 || (rooted && (a->root < 0 || a->root >= info->size))) {
        count_call(a->comm, op, MPI_DATATYPE_NULL, MPI_DATATYPE_NULL, -1, MG_DTS_NATIVE);
        return;
    }
    c.p = info->size;
    side S = {0}, R = {0};
    MPI_Count key = describe(&c, a, &S, &R);
    MPI_Datatype ts = side_type(&S), tr = side_type(&R);
    if (kind == MG_DTK_BCAST) ts = tr, tr = MPI_DATATYPE_NULL; /* noted as MPI_Bcast notes its type */
    int shared;
    mg_tune__dtclass_collective(mg_tune__dtclass_of(op), &shared);
    mg_dts s = mg_tune__dt_coll_strategy(op, a->comm, key, shared, derived_of(ts, tr),
                                         form == MG_DT_BLOCKING ? &x->online : NULL);
    /* PACK by size: all ranks know the bytes of a block */
    if (s == MG_DTS_PACK && shared && (key <= 0 || key > (wide ? INT64_MAX : INT_MAX))) s = MG_DTS_NATIVE;
    if (s != MG_DTS_NATIVE && form == MG_DT_PERSISTENT && intel_2021() &&
        ((s == MG_DTS_PACK && (kind == MG_DTK_GATHER || kind == MG_DTK_SCATTER)) ||
         (s == MG_DTS_NORMALIZED && kind == MG_DTK_ALLGATHER)))
        s = MG_DTS_NATIVE;
    count_call(a->comm, op, ts, tr, key, s);
    if (s == MG_DTS_NORMALIZED) normalize(&c, &S, &R, x);
    if (s == MG_DTS_PACK) packed(&c, &S, &R, x); /* or this rank makes the call with its own arguments */
}

int mg_tune__cb_done(mg_cb_call *x, int rc, MPI_Request *req)
{
    mg_dt_coll *k = x->keep;
    int done = 0;
    MPI_Status st;
    if (k && x->form == MG_DT_BLOCKING) {
        int got = rc == MPI_SUCCESS ? mg_tune__dt_coll_get(k) : MPI_SUCCESS;
        if (got != MPI_SUCCESS) rc = got;
        mg_tune__dt_coll_free(k);
    } else if (k && x->form == MG_DT_NONBLOCKING) {
        /* complete already (perhaps a handle shared by every such request): finished here, not tracked */
        if (rc == MPI_SUCCESS && PMPI_Request_get_status(*req, &done, &st) == MPI_SUCCESS && done) {
            mg_tune__dt_coll_get(k);
            mg_tune__dt_coll_free(k);
        } else if (rc != MPI_SUCCESS) {
            mg_tune__dt_coll_free(k);
        } else {
            mg_tune__dt_track_coll(*req, k, 0);
        }
    } else if (k) {
        if (rc == MPI_SUCCESS)
            mg_tune__dt_track_coll(*req, k, 1);
        else
            mg_tune__dt_coll_free(k);
    }
    if (x->form == MG_DT_BLOCKING && rc == MPI_SUCCESS) mg_tune__dt_online_done(&x->online);
    mg_tune__dt_progress_orphans(0);
    return rc;
}
