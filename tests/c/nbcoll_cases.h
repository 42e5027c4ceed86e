/* The cases of test_tune_dt_nbcoll.c (one translation unit): the types, each
 * case's buffers and arguments, the call in its three forms, and the test of
 * requests freed while active. */
#ifndef MG_NBCOLL_CASES_H
#define MG_NBCOLL_CASES_H

#include "mpiguide/tune.h"
#include "test_expect.h"
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { GUARD = 64, MAXB = 8, NHOW = 10, NVARIANTS = 8 };
enum { FORM_B, FORM_I, FORM_P, NFORMS };
enum {
    K_BCAST,
    K_GATHER,
    K_SCATTER,
    K_ALLGATHER,
    K_ALLTOALL,
    K_GATHERV,
    K_SCATTERV,
    K_ALLGATHERV,
    K_ALLTOALLV,
    K_ALLTOALLW,
    K_NALLGATHER,
    K_NALLGATHERV,
    K_NALLTOALL,
    K_NALLTOALLV,
    K_NALLTOALLW,
    NKINDS
};
static const char *const kind_names[NKINDS] = {
    "MPI_Bcast",        "MPI_Gather",         "MPI_Scatter",           "MPI_Allgather",
    "MPI_Alltoall",     "MPI_Gatherv",        "MPI_Scatterv",          "MPI_Allgatherv",
    "MPI_Alltoallv",    "MPI_Alltoallw",      "MPI_Neighbor_allgather", "MPI_Neighbor_allgatherv",
    "MPI_Neighbor_alltoall", "MPI_Neighbor_alltoallv", "MPI_Neighbor_alltoallw"};

/* What a run gives: bytes appended. */
typedef struct {
    unsigned char *data;
    size_t len, cap;
} out;

static void out_add(out *o, const void *p, size_t n)
{
    if (o->len + n > o->cap) {
        o->cap = 2 * (o->len + n) + 256;
        o->data = realloc(o->data, o->cap);
    }
    memcpy(o->data + o->len, p, n);
    o->len += n;
}

/* ---- types: ints only, so that any two of them match by counts ---- */
typedef struct {
    const char *name;
    MPI_Datatype t;
    int ints; /* per element */
} ityp;
enum { T_VEC, T_IDX, T_NEG, T_INT, NTYPES };
static ityp types[NTYPES];
static MPI_Datatype two; /* under T_NEG */

static void types_make(void)
{
    MPI_Datatype vec, idx, neg;
    MPI_Type_vector(3, 2, 5, MPI_INT, &vec);
    int blens[3] = {1, 3, 2}, displs[3] = {0, 2, 8};
    MPI_Type_indexed(3, blens, displs, MPI_INT, &idx);
    MPI_Type_vector(2, 1, 3, MPI_INT, &two);
    MPI_Type_create_resized(two, -4, 40, &neg);
    MPI_Type_commit(&vec);
    MPI_Type_commit(&idx);
    MPI_Type_commit(&neg);
    types[T_VEC] = (ityp){"vector", vec, 6};
    types[T_IDX] = (ityp){"indexed", idx, 6};
    types[T_NEG] = (ityp){"resized, lb < 0", neg, 2};
    types[T_INT] = (ityp){"MPI_INT", MPI_INT, 1};
}

static void types_free(void)
{
    for (int i = 0; i < T_INT; i++) MPI_Type_free(&types[i].t);
    MPI_Type_free(&two);
}

/* ---- cases ---- */
enum { TS_VEC, TS_NEG, TS_MIX, TS_INT };
static const char *const ts_names[] = {"vector", "resized lb < 0", "per-rank types", "MPI_INT"};

typedef struct {
    int kind, form, ts, k, root, in_place, periodic, bottom, wide;
} kase;

static int has_in_place(int kind) { return kind != K_BCAST && kind < K_NALLGATHER; }
static int rooted(int kind) { return kind <= K_SCATTER || kind == K_GATHERV || kind == K_SCATTERV; }
static int w_form(int kind) { return kind == K_ALLTOALLW || kind == K_NALLTOALLW; }

/* Variant v of (kind, form); 0 if it does not apply. */
static int kase_of(int kind, int form, int v, int seq, kase *c)
{
    static const int var[NVARIANTS][6] = {
        /* ts, k, root last, in place, periodic, special (1: MPI_BOTTOM, 2: a root out of range) */
        {TS_VEC, 1, 0, 0, 1, 0}, {TS_NEG, 2, 1, 1, 0, 0}, {TS_MIX, 1, 1, 0, 0, 0}, {TS_MIX, 2, 0, 1, 1, 0},
        {TS_INT, 1, 0, 1, 0, 0}, {TS_VEC, 0, 1, 0, 1, 0}, {TS_VEC, 1, 0, 0, 0, 1}, {TS_VEC, 1, 0, 0, 0, 2}};
    const int *x = var[v];
    if ((x[5] == 1 && !w_form(kind)) || (x[5] == 2 && !rooted(kind))) return 0;
    *c = (kase){kind, form, x[0], x[1], x[5] == 2 ? size : x[2] ? size - 1 : 0, x[3] && has_in_place(kind), x[4],
                x[5] == 1, 0};
#ifdef MG_HAVE_MPI_LARGE_COUNT
    c->wide = seq % 2;
#else
    (void)seq;
#endif
    return 1;
}

static void kase_text(const kase *c, char *buf, size_t len)
{
    snprintf(buf, len, "%s%s%s, %s, %d ints a block, root %d%s%s%s", kind_names[c->kind], c->wide ? " (_c)" : "",
             c->in_place ? " (MPI_IN_PLACE)" : "", ts_names[c->ts], 12 * c->k, c->root,
             c->kind >= K_NALLGATHER ? (c->periodic ? ", periodic" : ", open ring") : "",
             c->bottom ? ", MPI_BOTTOM" : "", c->root == size ? " (out of range)" : "");
}

/* This rank's type (r: a rank), and a w form's type of block j. */
static const ityp *type_of(const kase *c, int r)
{
    static const int fixed[] = {T_VEC, T_NEG, -1, T_INT};
    return &types[c->ts == TS_MIX ? r % NTYPES : fixed[c->ts]];
}

static const ityp *wtype_of(const kase *c, int r, int j) { return (j + r) % 2 ? type_of(c, r) : &types[T_INT]; }

/* Ints in the v forms from rank i to rank j, and from a neighbour of rank r. */
static int vints(const kase *c, int i, int j) { return 12 * c->k * ((i + 2 * j) % 3); }
static int nints(const kase *c, int r) { return r == MPI_PROC_NULL ? 12 * c->k : 12 * c->k * (r % 3); }

/* A buffer of n elements of t with GUARD bytes on both sides (at: what MPI gets), or of n bytes (t NULL). */
typedef struct {
    unsigned char *base, *at;
    size_t len;
} buffer;

static buffer buffer_new(MPI_Datatype t, int n)
{
    MPI_Aint lb, ext, tlb = 0, text = n;
    if (t != MPI_DATATYPE_NULL) {
        MPI_Type_get_extent(t, &lb, &ext);
        MPI_Type_get_true_extent(t, &tlb, &text);
    }
    MPI_Aint span = t == MPI_DATATYPE_NULL ? n : n > 0 ? text + (n - 1) * ext : 0;
    buffer b = {NULL, NULL, (size_t)span + 2 * GUARD};
    b.base = malloc(b.len);
    b.at = b.base + GUARD - tlb;
    return b;
}

/* A case's arguments. */
typedef struct {
    buffer s, r;
    const void *sbuf;
    void *rbuf;
    int scount, rcount, seeded; /* seeded: the receive buffer holds data (MPI_IN_PLACE, a Bcast's root) */
    MPI_Datatype stype, rtype;
    int sc[MAXB], sd[MAXB], rc[MAXB], rd[MAXB];
    MPI_Count wsc[MAXB], wrc[MAXB];
    MPI_Aint wsd[MAXB], wrd[MAXB]; /* the `_c` forms' and MPI_Neighbor_alltoallw's displacements */
    MPI_Datatype st[MAXB], rt[MAXB];
    MPI_Datatype owned[2 * MAXB];
    int nowned, ks, kr;
    MPI_Comm comm;
} setup;

/* Blocks of ints[j] ints of t, backwards, one element apart (v forms); the elements spanned. */
static int vlayout(int k, const int *ints, const ityp *t, int *counts, int *displs)
{
    int at = 0;
    for (int j = k - 1; j >= 0; j--) {
        counts[j] = ints[j] / t->ints;
        displs[j] = at;
        at += counts[j] + 1;
    }
    return at;
}

/* The w forms: block j of ints[j] ints of types[j], backwards, 8 bytes apart; the bytes spanned. */
static int wlayout(int k, const int *ints, const ityp **t, int *counts, MPI_Aint *displs, MPI_Datatype *tt)
{
    MPI_Aint at = 0, lb, ext, tlb, text;
    for (int j = k - 1; j >= 0; j--) {
        counts[j] = ints[j] / t[j]->ints;
        tt[j] = t[j]->t;
        MPI_Type_get_extent(tt[j], &lb, &ext);
        MPI_Type_get_true_extent(tt[j], &tlb, &text);
        displs[j] = at - tlb;
        at += (counts[j] ? text + (counts[j] - 1) * ext : 0) + 8;
    }
    return (int)at;
}

/* MPI_BOTTOM: block j becomes one element of a type at its absolute address. */
static void to_bottom(setup *u, unsigned char *at, int k, int *counts, MPI_Aint *displs, MPI_Datatype *tt)
{
    for (int j = 0; j < k; j++) {
        MPI_Aint addr;
        MPI_Datatype run, abs;
        MPI_Get_address(at + displs[j], &addr);
        if (counts[j] == 0) {
            displs[j] = 0, tt[j] = MPI_INT;
            continue;
        }
        MPI_Type_contiguous(counts[j], tt[j], &run);
        MPI_Type_create_hindexed_block(1, 1, &addr, run, &abs);
        MPI_Type_commit(&abs);
        MPI_Type_free(&run);
        u->owned[u->nowned++] = abs;
        counts[j] = 1, displs[j] = 0, tt[j] = abs;
    }
}

static void setup_make(const kase *c, setup *u)
{
    memset(u, 0, sizeof *u);
    u->comm = MPI_COMM_WORLD;
    const ityp *t = type_of(c, rank);
    int p = size, me = rank, at_root = me == c->root, n = 12 * c->k / t->ints, sint[MAXB], rint[MAXB];
    int in = 0, out = 0, nbr[MAXB];
    u->stype = u->rtype = t->t;
    u->scount = u->rcount = n;
    if (c->kind >= K_NALLGATHER) {
        int periods = c->periodic;
        MPI_Cart_create(MPI_COMM_WORLD, 1, &p, &periods, 0, &u->comm);
        MPI_Cart_shift(u->comm, 0, 1, &nbr[0], &nbr[1]);
        in = out = 2;
    }
    switch (c->kind) {
    case K_BCAST: u->r = buffer_new(t->t, n), u->seeded = at_root; break;
    case K_GATHER:
        u->s = buffer_new(t->t, n);
        u->r = buffer_new(t->t, at_root ? p * n : 0), u->seeded = c->in_place;
        break;
    case K_SCATTER: u->s = buffer_new(t->t, at_root ? p * n : 0), u->r = buffer_new(t->t, n); break;
    case K_ALLGATHER:
    case K_ALLTOALL:
        u->s = buffer_new(t->t, c->kind == K_ALLTOALL ? p * n : n);
        u->r = buffer_new(t->t, p * n), u->seeded = c->in_place;
        break;
    case K_GATHERV:
    case K_ALLGATHERV:
        for (int j = 0; j < p; j++) rint[j] = vints(c, j, 0);
        u->scount = rint[me] / t->ints;
        u->s = buffer_new(t->t, u->scount);
        u->r = buffer_new(t->t, c->kind == K_ALLGATHERV || at_root ? vlayout(p, rint, t, u->rc, u->rd) : 0);
        u->seeded = c->in_place, u->kr = p;
        break;
    case K_SCATTERV:
        for (int j = 0; j < p; j++) sint[j] = vints(c, j, 0);
        u->s = buffer_new(t->t, at_root ? vlayout(p, sint, t, u->sc, u->sd) : 0);
        u->rcount = sint[me] / t->ints, u->r = buffer_new(t->t, u->rcount), u->ks = p;
        break;
    case K_ALLTOALLV:
    case K_ALLTOALLW:
        for (int j = 0; j < p; j++) /* MPI_IN_PLACE needs equal send and receive layouts: symmetric counts */
            sint[j] = vints(c, me, j), rint[j] = c->in_place ? 12 * c->k * ((me + j) % 3) : vints(c, j, me);
        u->ks = u->kr = p, u->seeded = c->in_place;
        /* fall through */
    case K_NALLTOALLV:
    case K_NALLTOALLW:
        if (c->kind >= K_NALLGATHER) {
            for (int j = 0; j < 2; j++) sint[j] = nints(c, me), rint[j] = nints(c, nbr[j]);
            u->ks = out, u->kr = in;
        }
        if (!w_form(c->kind)) {
            u->s = buffer_new(t->t, vlayout(u->ks, sint, t, u->sc, u->sd));
            u->r = buffer_new(t->t, vlayout(u->kr, rint, t, u->rc, u->rd));
        } else {
            const ityp *ws[MAXB], *wr[MAXB];
            for (int j = 0; j < MAXB; j++) ws[j] = wr[j] = wtype_of(c, me, j);
            u->s = buffer_new(MPI_DATATYPE_NULL, wlayout(u->ks, sint, ws, u->sc, u->wsd, u->st));
            u->r = buffer_new(MPI_DATATYPE_NULL, wlayout(u->kr, rint, wr, u->rc, u->wrd, u->rt));
            if (c->bottom) {
                to_bottom(u, u->s.at, u->ks, u->sc, u->wsd, u->st);
                to_bottom(u, u->r.at, u->kr, u->rc, u->wrd, u->rt);
            }
            for (int j = 0; j < MAXB; j++) u->sd[j] = (int)u->wsd[j], u->rd[j] = (int)u->wrd[j];
        }
        break;
    case K_NALLGATHER:
    case K_NALLTOALL:
        u->s = buffer_new(t->t, c->kind == K_NALLTOALL ? out * n : n);
        u->r = buffer_new(t->t, in * n);
        break;
    case K_NALLGATHERV:
        u->scount = nints(c, me) / t->ints;
        u->s = buffer_new(t->t, u->scount);
        for (int j = 0; j < in; j++) rint[j] = nints(c, nbr[j]);
        u->r = buffer_new(t->t, vlayout(in, rint, t, u->rc, u->rd)), u->kr = in;
        break;
    }
    for (int j = 0; j < MAXB; j++) {
        u->wsc[j] = u->sc[j], u->wrc[j] = u->rc[j];
        if (!w_form(c->kind)) u->wsd[j] = u->sd[j], u->wrd[j] = u->rd[j];
    }
    u->sbuf = c->bottom ? MPI_BOTTOM : u->s.at;
    u->rbuf = c->bottom ? MPI_BOTTOM : u->r.at;
    if (c->in_place) {
        int scatter = c->kind == K_SCATTER || c->kind == K_SCATTERV;
        if (!rooted(c->kind) || at_root) *(scatter ? (const void **)&u->rbuf : &u->sbuf) = MPI_IN_PLACE;
        if (scatter) u->seeded = 0;
    }
}

/* The data of round `round`: new send bytes, and a receive buffer set to data or to a pattern. */
static void setup_fill(const kase *c, setup *u, int round)
{
    (void)c;
    for (size_t i = 0; i < u->s.len; i++) u->s.base[i] = (unsigned char)(i * 7 + (size_t)(rank + 1 + 7 * round) * 29 + 1);
    for (size_t i = 0; i < u->r.len; i++)
        u->r.base[i] = u->seeded ? (unsigned char)(i * 11 + (size_t)(rank + 5 + 7 * round) * 13 + 3) : 0xA5;
}

static void setup_capture(const setup *u, out *o)
{
    if (u->s.len) out_add(o, u->s.base, u->s.len);
    if (u->r.len) out_add(o, u->r.base, u->r.len);
}

static void setup_free(setup *u)
{
    for (int i = 0; i < u->nowned; i++) MPI_Type_free(&u->owned[i]);
    if (u->comm != MPI_COMM_WORLD) MPI_Comm_free(&u->comm);
    free(u->s.base);
    free(u->r.base);
}

/* ---- the call in its form: B the blocking name, I the nonblocking one ---- */
#define WITH_REQ(...) (__VA_ARGS__, req)
#define WITH_INFO(...) (__VA_ARGS__, MPI_INFO_NULL, req)
#define CALL3(B, I, ARGS) \
    (c->form == FORM_B ? MPI_##B ARGS : c->form == FORM_I ? MPI_##I WITH_REQ ARGS : MPI_##B##_init WITH_INFO ARGS)
#ifdef MG_HAVE_MPI_LARGE_COUNT
#define CALL3_C(B, I, ARGS)                                                            \
    (c->form == FORM_B ? MPI_##B##_c ARGS : c->form == FORM_I ? MPI_##I##_c WITH_REQ ARGS \
                                                              : MPI_##B##_init_c WITH_INFO ARGS)
#else
#define CALL3_C(B, I, ARGS) MPI_ERR_OTHER
#endif
#define CALL(B, I, ARGS, WARGS) (c->wide ? CALL3_C(B, I, WARGS) : CALL3(B, I, ARGS))

static int issue(const kase *c, setup *u, MPI_Request *req)
{
    MPI_Comm m = u->comm;
    int root = c->root;
    const void *sb = u->sbuf;
    void *rb = u->rbuf;
    switch (c->kind) {
    case K_BCAST:
        return CALL(Bcast, Ibcast, (u->r.at, u->rcount, u->rtype, root, m), (u->r.at, u->rcount, u->rtype, root, m));
    case K_GATHER:
        return CALL(Gather, Igather, (sb, u->scount, u->stype, rb, u->rcount, u->rtype, root, m),
                    (sb, u->scount, u->stype, rb, u->rcount, u->rtype, root, m));
    case K_SCATTER:
        return CALL(Scatter, Iscatter, (sb, u->scount, u->stype, rb, u->rcount, u->rtype, root, m),
                    (sb, u->scount, u->stype, rb, u->rcount, u->rtype, root, m));
    case K_ALLGATHER:
        return CALL(Allgather, Iallgather, (sb, u->scount, u->stype, rb, u->rcount, u->rtype, m),
                    (sb, u->scount, u->stype, rb, u->rcount, u->rtype, m));
    case K_ALLTOALL:
        return CALL(Alltoall, Ialltoall, (sb, u->scount, u->stype, rb, u->rcount, u->rtype, m),
                    (sb, u->scount, u->stype, rb, u->rcount, u->rtype, m));
    case K_GATHERV:
        return CALL(Gatherv, Igatherv, (sb, u->scount, u->stype, rb, u->rc, u->rd, u->rtype, root, m),
                    (sb, u->scount, u->stype, rb, u->wrc, u->wrd, u->rtype, root, m));
    case K_SCATTERV:
        return CALL(Scatterv, Iscatterv, (sb, u->sc, u->sd, u->stype, rb, u->rcount, u->rtype, root, m),
                    (sb, u->wsc, u->wsd, u->stype, rb, u->rcount, u->rtype, root, m));
    case K_ALLGATHERV:
        return CALL(Allgatherv, Iallgatherv, (sb, u->scount, u->stype, rb, u->rc, u->rd, u->rtype, m),
                    (sb, u->scount, u->stype, rb, u->wrc, u->wrd, u->rtype, m));
    case K_ALLTOALLV:
        return CALL(Alltoallv, Ialltoallv, (sb, u->sc, u->sd, u->stype, rb, u->rc, u->rd, u->rtype, m),
                    (sb, u->wsc, u->wsd, u->stype, rb, u->wrc, u->wrd, u->rtype, m));
    case K_ALLTOALLW:
        return CALL(Alltoallw, Ialltoallw, (sb, u->sc, u->sd, u->st, rb, u->rc, u->rd, u->rt, m),
                    (sb, u->wsc, u->wsd, u->st, rb, u->wrc, u->wrd, u->rt, m));
    case K_NALLGATHER:
        return CALL(Neighbor_allgather, Ineighbor_allgather, (sb, u->scount, u->stype, rb, u->rcount, u->rtype, m),
                    (sb, u->scount, u->stype, rb, u->rcount, u->rtype, m));
    case K_NALLGATHERV:
        return CALL(Neighbor_allgatherv, Ineighbor_allgatherv, (sb, u->scount, u->stype, rb, u->rc, u->rd, u->rtype, m),
                    (sb, u->scount, u->stype, rb, u->wrc, u->wrd, u->rtype, m));
    case K_NALLTOALL:
        return CALL(Neighbor_alltoall, Ineighbor_alltoall, (sb, u->scount, u->stype, rb, u->rcount, u->rtype, m),
                    (sb, u->scount, u->stype, rb, u->rcount, u->rtype, m));
    case K_NALLTOALLV:
        return CALL(Neighbor_alltoallv, Ineighbor_alltoallv, (sb, u->sc, u->sd, u->stype, rb, u->rc, u->rd, u->rtype, m),
                    (sb, u->wsc, u->wsd, u->stype, rb, u->wrc, u->wrd, u->rtype, m));
    default:
        return CALL(Neighbor_alltoallw, Ineighbor_alltoallw, (sb, u->sc, u->wsd, u->st, rb, u->rc, u->wrd, u->rt, m),
                    (sb, u->wsc, u->wsd, u->st, rb, u->wrc, u->wrd, u->rt, m));
    }
}

/* ---- requests freed while active (erroneous in MPI-4.1 for collectives) ----
 * Under pack the library keeps them and completes them, at MPI_Finalize at
 * the latest: the data must be in the buffers after it. */
static int freed_requests(void)
{
    kase c = {.kind = K_ALLTOALLW, .form = FORM_I, .ts = TS_VEC, .k = 2};
    kase b = {.kind = K_BCAST, .form = FORM_P, .ts = TS_VEC, .k = 1, .root = size - 1};
    setup u, ref, ub, refb;
    MPI_Request req = MPI_REQUEST_NULL;
    setup_make(&c, &u), setup_make(&c, &ref), setup_make(&b, &ub), setup_make(&b, &refb);
    setup_fill(&c, &u, 0), setup_fill(&c, &ref, 0), setup_fill(&b, &ub, 1), setup_fill(&b, &refb, 1);
    EXPECT(mg_tune_set_mode(MG_TUNE_FORCED) == MG_TUNE_SUCCESS);
    EXPECT(mg_tune_force("datatypes", "native") == MG_TUNE_SUCCESS);
    kase cb = c, bb = b;
    cb.form = bb.form = FORM_B;
    EXPECT(issue(&cb, &ref, NULL) == MPI_SUCCESS && issue(&bb, &refb, NULL) == MPI_SUCCESS);
    EXPECT(mg_tune_force("datatypes", "pack") == MG_TUNE_SUCCESS);
    EXPECT(issue(&c, &u, &req) == MPI_SUCCESS && MPI_Request_free(&req) == MPI_SUCCESS && req == MPI_REQUEST_NULL);
    EXPECT(issue(&b, &ub, &req) == MPI_SUCCESS && MPI_Start(&req) == MPI_SUCCESS);
    EXPECT(MPI_Request_free(&req) == MPI_SUCCESS && req == MPI_REQUEST_NULL);
    types_free(); /* MPI lets the application free the types of pending operations */
    MPI_Finalize();
    EXPECT(u.r.len == ref.r.len && memcmp(u.r.base, ref.r.base, u.r.len) == 0);
    EXPECT(ub.r.len == refb.r.len && memcmp(ub.r.base, refb.r.base, ub.r.len) == 0);
    setup *all[] = {&u, &ref, &ub, &refb};
    for (int i = 0; i < 4; i++) free(all[i]->s.base), free(all[i]->r.base);
    printf("test_tune_dt_nbcoll freed, rank %d: %s\n", rank, failures ? "FAILED" : "ok");
    return failures != 0;
}

#endif
