/* Online mode's irregular collectives (vonline.h).
 *
 * The candidates move exactly the blocks the native call moves, each as one
 * point-to-point message of the call's own counts and types (the native
 * call's arguments after the datatype strategy: cbuild.c), so the result is
 * the native call's whatever the layout. Every pair of processes exchanges the
 * same messages whatever the counts (an empty block is an empty message):
 * counts that disagree between two ranks, an erroneous call, end in a
 * truncation error where MPI sees it, never in a message one side waits for
 * in vain.
 *
 * The key of a call is the same on every rank: MPI_Allgatherv's by its total
 * bytes (every rank knows every count), the others' by the collective alone
 * (each rank knows only its own counts). MPI_IN_PLACE must be given on every
 * rank of an MPI_Allgatherv or MPI_Alltoallv alike; an MPI_Alltoallv in place
 * stays native, the candidates would need a copy of the buffer. */
#define _POSIX_C_SOURCE 200809L
#include "vonline.h"
#include "../comms.h"
#include "../lifecycle.h"
#include "../record.h"
#include <stdlib.h>

enum { TAG = 1 }; /* the shadow communicator's: only the library's calls are on it */

/* Implementations by index (0: the native call) and the labels of the report. */
enum {
    V_NATIVE,
    V_ALLGATHERV_RING,
    V_ALLGATHERV_GATHERV_BCAST,
    V_ALLTOALLV_PAIRWISE,
    V_ALLTOALLV_LINEAR,
    V_GATHERV_LINEAR,
    V_SCATTERV_LINEAR,
    V_N
};
static const char *const labels[V_N] = {"default",           "allgatherv_ring",  "allgatherv_as_gatherv_bcast",
                                        "alltoallv_pairwise", "alltoallv_linear", "gatherv_linear",
                                        "scatterv_linear"};
static const mg_online_names names[] = {
    {"MPI_Allgatherv", labels}, {"MPI_Alltoallv", labels}, {"MPI_Gatherv", labels}, {"MPI_Scatterv", labels}};

void mg_tune__online_agree(mg_online_key *k, MPI_Comm comm)
{
    double v[MG_ONLINE_MAX];
    int n = mg_online_to_agree(k, &mg_online_default_policy, v);
    MPI_Comm shadow;
    if (mg_tune__shadow_comm(comm, &shadow) != MPI_SUCCESS ||
        PMPI_Allreduce(MPI_IN_PLACE, v, n, MPI_DOUBLE, MPI_MAX, shadow) != MPI_SUCCESS)
        mg_tune__abort_diverging("online mode: the ranks' agreement on a call's times failed");
    mg_online_decide(k, &mg_online_default_policy, v);
}

/* The candidates of a key (the call's kind in *ctx). */
static int candidates(void *ctx, int *impl)
{
    int n = 0;
    impl[n++] = V_NATIVE;
    switch (*(const mg_dtcoll_kind *)ctx) {
    case MG_DTK_ALLGATHERV: impl[n++] = V_ALLGATHERV_RING, impl[n++] = V_ALLGATHERV_GATHERV_BCAST; break;
    case MG_DTK_ALLTOALLV: impl[n++] = V_ALLTOALLV_PAIRWISE, impl[n++] = V_ALLTOALLV_LINEAR; break;
    case MG_DTK_GATHERV: impl[n++] = V_GATHERV_LINEAR; break;
    case MG_DTK_SCATTERV: impl[n++] = V_SCATTERV_LINEAR; break;
    default: break;
    }
    return n;
}

static int first(int err, int rc) { return err != MPI_SUCCESS ? err : rc; }

static MPI_Aint extent_of(MPI_Datatype t)
{
    MPI_Aint lb, ext = 0;
    PMPI_Type_get_extent(t, &lb, &ext);
    return ext;
}

/* A call's arrays: int counts and displacements, or (its `_c` form, wide) MPI_Count counts and MPI_Aint
 * displacements; and its point-to-point calls in the same form. */
typedef struct {
    const mg_cb_args *n;
    int wide, me, p;
    MPI_Comm sh;
} vcall;

static MPI_Count count_at(const vcall *v, const void *a, int i)
{
    return v->wide ? ((const MPI_Count *)a)[i] : ((const int *)a)[i];
}

/* Block i of an array of blocks of extent ext at base. */
static char *block_at(const vcall *v, const void *base, const void *displs, int i, MPI_Aint ext)
{
    MPI_Aint d = v->wide ? ((const MPI_Aint *)displs)[i] : ((const int *)displs)[i];
    return (char *)base + d * ext;
}

static int sendrecv(const vcall *v, const void *sb, MPI_Count sc, MPI_Datatype st, int to, void *rb, MPI_Count rc,
                    MPI_Datatype rt, int from)
{
#ifdef MG_HAVE_MPI_LARGE_COUNT
    if (v->wide) return PMPI_Sendrecv_c(sb, sc, st, to, TAG, rb, rc, rt, from, TAG, v->sh, MPI_STATUS_IGNORE);
#endif
    return PMPI_Sendrecv(sb, (int)sc, st, to, TAG, rb, (int)rc, rt, from, TAG, v->sh, MPI_STATUS_IGNORE);
}

static int isend(const vcall *v, const void *b, MPI_Count c, MPI_Datatype t, int to, MPI_Request *r)
{
#ifdef MG_HAVE_MPI_LARGE_COUNT
    if (v->wide) return PMPI_Isend_c(b, c, t, to, TAG, v->sh, r);
#endif
    return PMPI_Isend(b, (int)c, t, to, TAG, v->sh, r);
}

static int irecv(const vcall *v, void *b, MPI_Count c, MPI_Datatype t, int from, MPI_Request *r)
{
#ifdef MG_HAVE_MPI_LARGE_COUNT
    if (v->wide) return PMPI_Irecv_c(b, c, t, from, TAG, v->sh, r);
#endif
    return PMPI_Irecv(b, (int)c, t, from, TAG, v->sh, r);
}

/* Waits for reqs[0..k-1] (NULL reqs: none were posted, as the calls went one at a time); the first error. */
static int wait_all(MPI_Request *reqs, int k)
{
    int rc = reqs && k ? PMPI_Waitall(k, reqs, MPI_STATUSES_IGNORE) : MPI_SUCCESS;
    free(reqs);
    return rc;
}

/* A receive (recv) or send posted as request k of reqs, or made at once where reqs is NULL (no memory). */
static int post(const vcall *v, int recv, void *b, MPI_Count c, MPI_Datatype t, int peer, MPI_Request *reqs, int *k)
{
    if (!reqs) /* one at a time: the same message as the peer's */
        return recv ? sendrecv(v, NULL, 0, MPI_BYTE, MPI_PROC_NULL, b, c, t, peer)
                    : sendrecv(v, b, c, t, peer, NULL, 0, MPI_BYTE, MPI_PROC_NULL);
    int rc = recv ? irecv(v, b, c, t, peer, &reqs[*k]) : isend(v, b, c, t, peer, &reqs[*k]);
    *k += rc == MPI_SUCCESS;
    return rc;
}

static int allgatherv_ring(const vcall *v)
{
    const mg_cb_args *n = v->n;
    MPI_Aint ext = extent_of(n->rtype);
    int err = MPI_SUCCESS, me = v->me, p = v->p;
    if (n->sbuf != MPI_IN_PLACE) /* the rank's own block, by MPI: any two types of one signature */
        err = sendrecv(v, n->sbuf, n->scount, n->stype, me, block_at(v, n->rbuf, n->rdispls, me, ext),
                       count_at(v, n->rcounts, me), n->rtype, me);
    int right = (me + 1) % p, left = (me + p - 1) % p;
    for (int s = 0; s < p - 1; s++) { /* step s: the block of rank me - s goes right, that of me - s - 1 comes */
        int out = (me - s + p) % p, in = (me - s - 1 + p) % p;
        err = first(err, sendrecv(v, block_at(v, n->rbuf, n->rdispls, out, ext), count_at(v, n->rcounts, out),
                                  n->rtype, right, block_at(v, n->rbuf, n->rdispls, in, ext),
                                  count_at(v, n->rcounts, in), n->rtype, left));
    }
    return err;
}

/* Every block of the call at once: an indexed type of the receive type over its counts and displacements. */
static int blocks_type(const vcall *v, MPI_Datatype *all)
{
    const mg_cb_args *n = v->n;
    int rc;
    if (!v->wide) {
        rc = PMPI_Type_indexed(v->p, n->rcounts, n->rdispls, n->rtype, all);
    } else {
#ifdef MG_HAVE_MPI_LARGE_COUNT
        MPI_Count *displs = malloc(sizeof *displs * (size_t)v->p);
        if (!displs) return MPI_ERR_NO_MEM;
        for (int i = 0; i < v->p; i++) displs[i] = ((const MPI_Aint *)n->rdispls)[i];
        rc = PMPI_Type_indexed_c(v->p, n->rcounts, displs, n->rtype, all);
        free(displs);
#else
        rc = MPI_ERR_INTERN;
#endif
    }
    return rc == MPI_SUCCESS ? PMPI_Type_commit(all) : rc;
}

static int allgatherv_gatherv_bcast(const vcall *v)
{
    const mg_cb_args *n = v->n;
    MPI_Aint ext = extent_of(n->rtype);
    const void *sbuf = n->sbuf;
    MPI_Count scount = n->scount;
    MPI_Datatype stype = n->stype;
    if (sbuf == MPI_IN_PLACE && v->me != 0) /* in place: the rank's block is in the receive buffer */
        sbuf = block_at(v, n->rbuf, n->rdispls, v->me, ext), scount = count_at(v, n->rcounts, v->me), stype = n->rtype;
    int err;
#ifdef MG_HAVE_MPI_LARGE_COUNT
    if (v->wide)
        err = PMPI_Gatherv_c(sbuf, scount, stype, n->rbuf, n->rcounts, n->rdispls, n->rtype, 0, v->sh);
    else
#endif
        err = PMPI_Gatherv(sbuf, (int)scount, stype, n->rbuf, n->rcounts, n->rdispls, n->rtype, 0, v->sh);
    MPI_Datatype all;
    /* without it (no memory) this rank cannot take part in the broadcast its peers make: they would hang */
    if (blocks_type(v, &all) != MPI_SUCCESS)
        mg_tune__abort_diverging("online mode: no memory for the type of an MPI_Allgatherv");
    err = first(err, PMPI_Bcast(n->rbuf, 1, all, 0, v->sh));
    PMPI_Type_free(&all);
    return err;
}

static int alltoallv_pairwise(const vcall *v)
{
    const mg_cb_args *n = v->n;
    MPI_Aint sext = extent_of(n->stype), rext = extent_of(n->rtype);
    int err = MPI_SUCCESS, me = v->me, p = v->p;
    for (int s = 0; s < p; s++) { /* step s: to me + s, from me - s (step 0: the rank's own block) */
        int to = (me + s) % p, from = (me - s + p) % p;
        err = first(err, sendrecv(v, block_at(v, n->sbuf, n->sdispls, to, sext), count_at(v, n->scounts, to),
                                  n->stype, to, block_at(v, n->rbuf, n->rdispls, from, rext),
                                  count_at(v, n->rcounts, from), n->rtype, from));
    }
    return err;
}

static int alltoallv_linear(const vcall *v)
{
    const mg_cb_args *n = v->n;
    MPI_Request *reqs = malloc(sizeof *reqs * 2 * (size_t)v->p);
    if (!reqs) return alltoallv_pairwise(v); /* the same messages, one pair at a time */
    MPI_Aint sext = extent_of(n->stype), rext = extent_of(n->rtype);
    int err = MPI_SUCCESS, k = 0, me = v->me, p = v->p;
    for (int i = 0; i < p; i++) {
        int from = (me - i + p) % p;
        err = first(err, post(v, 1, block_at(v, n->rbuf, n->rdispls, from, rext), count_at(v, n->rcounts, from),
                              n->rtype, from, reqs, &k));
    }
    for (int i = 0; i < p; i++) {
        int to = (me + i) % p;
        err = first(err, post(v, 0, block_at(v, n->sbuf, n->sdispls, to, sext), count_at(v, n->scounts, to),
                              n->stype, to, reqs, &k));
    }
    return first(err, wait_all(reqs, k));
}

/* Gatherv (gather) or Scatterv from the root: the root exchanges with each rank directly. */
static int rooted_linear(const vcall *v, int gather)
{
    const mg_cb_args *n = v->n;
    if (v->me != n->root) /* one message with the root: the rank's own arguments */
        return gather ? sendrecv(v, n->sbuf, n->scount, n->stype, n->root, NULL, 0, MPI_BYTE, MPI_PROC_NULL)
                      : sendrecv(v, NULL, 0, MPI_BYTE, MPI_PROC_NULL, n->rbuf, n->rcount, n->rtype, n->root);
    /* the root's blocks: the receive buffer's (gather) or the send buffer's (scatter) */
    void *base = gather ? n->rbuf : (void *)n->sbuf;
    const void *counts = gather ? n->rcounts : n->scounts, *displs = gather ? n->rdispls : n->sdispls;
    MPI_Datatype type = gather ? n->rtype : n->stype;
    MPI_Aint ext = extent_of(type);
    int err = MPI_SUCCESS, k = 0, me = v->me;
    char *own = block_at(v, base, displs, me, ext);
    if (gather && n->sbuf != MPI_IN_PLACE)
        err = sendrecv(v, n->sbuf, n->scount, n->stype, me, own, count_at(v, counts, me), type, me);
    else if (!gather && n->rbuf != MPI_IN_PLACE)
        err = sendrecv(v, own, count_at(v, counts, me), type, me, n->rbuf, n->rcount, n->rtype, me);
    MPI_Request *reqs = malloc(sizeof *reqs * (size_t)v->p);
    for (int i = 0; i < v->p; i++)
        if (i != me)
            err = first(err, post(v, gather, block_at(v, base, displs, i, ext), count_at(v, counts, i), type, i, reqs,
                                  &k));
    return first(err, wait_all(reqs, k));
}

static int native(mg_dtcoll_kind kind, const mg_cb_args *n, int wide)
{
#ifdef MG_HAVE_MPI_LARGE_COUNT
    if (wide) switch (kind) {
        case MG_DTK_ALLGATHERV:
            return PMPI_Allgatherv_c(n->sbuf, n->scount, n->stype, n->rbuf, n->rcounts, n->rdispls, n->rtype, n->comm);
        case MG_DTK_ALLTOALLV:
            return PMPI_Alltoallv_c(n->sbuf, n->scounts, n->sdispls, n->stype, n->rbuf, n->rcounts, n->rdispls,
                                    n->rtype, n->comm);
        case MG_DTK_GATHERV:
            return PMPI_Gatherv_c(n->sbuf, n->scount, n->stype, n->rbuf, n->rcounts, n->rdispls, n->rtype, n->root,
                                  n->comm);
        default:
            return PMPI_Scatterv_c(n->sbuf, n->scounts, n->sdispls, n->stype, n->rbuf, n->rcount, n->rtype, n->root,
                                   n->comm);
        }
#else
    (void)wide;
#endif
    switch (kind) {
    case MG_DTK_ALLGATHERV:
        return PMPI_Allgatherv(n->sbuf, (int)n->scount, n->stype, n->rbuf, n->rcounts, n->rdispls, n->rtype, n->comm);
    case MG_DTK_ALLTOALLV:
        return PMPI_Alltoallv(n->sbuf, n->scounts, n->sdispls, n->stype, n->rbuf, n->rcounts, n->rdispls, n->rtype,
                              n->comm);
    case MG_DTK_GATHERV:
        return PMPI_Gatherv(n->sbuf, (int)n->scount, n->stype, n->rbuf, n->rcounts, n->rdispls, n->rtype, n->root,
                            n->comm);
    default:
        return PMPI_Scatterv(n->sbuf, n->scounts, n->sdispls, n->stype, n->rbuf, (int)n->rcount, n->rtype, n->root,
                             n->comm);
    }
}

/* Candidate impl of the call v. */
static int run(int impl, const vcall *v)
{
    switch (impl) {
    case V_ALLGATHERV_RING: return allgatherv_ring(v);
    case V_ALLGATHERV_GATHERV_BCAST: return allgatherv_gatherv_bcast(v);
    case V_ALLTOALLV_PAIRWISE: return alltoallv_pairwise(v);
    case V_ALLTOALLV_LINEAR: return alltoallv_linear(v);
    case V_GATHERV_LINEAR: return rooted_linear(v, 1);
    default: return rooted_linear(v, 0);
    }
}

int mg_tune__vonline_run(mg_dtcoll_kind kind, const mg_cb_args *n, int wide, int *rc)
{
    unsigned h = atomic_load_explicit(&mg_tune_hot.word, memory_order_acquire);
    if (!(h & MG_HOT_ON) || MG_HOT_MODE(h) != MG_TUNE_ONLINE || n->comm == MPI_COMM_NULL) return 0;
    int which = kind == MG_DTK_ALLGATHERV ? 0 : kind == MG_DTK_ALLTOALLV ? 1 : kind == MG_DTK_GATHERV ? 2
              : kind == MG_DTK_SCATTERV ? 3 : -1;
    if (which < 0 || (kind == MG_DTK_ALLTOALLV && n->sbuf == MPI_IN_PLACE)) return 0;
    const mg_comm_info *info = mg_tune__comm_info(n->comm);
    mg_online_table *t = info && !info->inter && info->size > 1 ? mg_tune__comm_online(info) : NULL;
    if (!t) return 0;
    MPI_Count bytes = 0;
    if (kind == MG_DTK_ALLGATHERV) { /* (the int and the `_c` form of a call have one key) */
        vcall v = {.n = n, .wide = wide};
        for (int i = 0; i < info->size; i++) bytes += count_at(&v, n->rcounts, i);
        bytes = mg_type_bytes(bytes, n->rtype);
    }
    mg_online_key *k = mg_tune__online_lookup(t, MG_NCOLLS + which, bytes, MPI_DATATYPE_NULL, MPI_OP_NULL,
                                              candidates, &kind, &names[which]);
    if (!k) return 0;
    int timed, cand = mg_online_next(k, &mg_online_default_policy, &timed), impl = k->impl[cand];
    mg_tune__rec_note_impl(labels[impl]);
    uint64_t t0 = timed ? mg_online_clock_ns() : 0;
    if (impl == V_NATIVE) {
        *rc = native(kind, n, wide);
    } else {
        vcall v = {.n = n, .wide = wide, .p = info->size};
        *rc = mg_tune__shadow_comm(n->comm, &v.sh);
        if (*rc == MPI_SUCCESS) {
            PMPI_Comm_rank(v.sh, &v.me);
            *rc = run(impl, &v);
            if (*rc != MPI_SUCCESS) PMPI_Comm_call_errhandler(n->comm, *rc);
        }
    }
    mg_tune__online_finish(k, cand, timed ? 1e-9 * (double)(mg_online_clock_ns() - t0) : -1.0, n->comm);
    return 1;
}
