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

void mg_tune__online_finish(mg_online_key *k, int cand, double seconds, MPI_Comm comm)
{
    if (!mg_online_done(k, &mg_online_default_policy, cand, seconds)) return;
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

/* Block i of count x type at base + displs[i] extents. */
#define AT(base, displs, i, ext) ((char *)(base) + (MPI_Aint)(displs)[i] * (ext))

/* The rank's own block from its send arguments to its receive block, by MPI (any two types of one signature). */
static int self_copy(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype,
                     int me, MPI_Comm sh)
{
    return PMPI_Sendrecv(sbuf, scount, stype, me, TAG, rbuf, rcount, rtype, me, TAG, sh, MPI_STATUS_IGNORE);
}

/* Every request of reqs[0..n-1] waited for; the first error. */
static int wait_all(MPI_Request *reqs, int n)
{
    return n ? PMPI_Waitall(n, reqs, MPI_STATUSES_IGNORE) : MPI_SUCCESS;
}

static int allgatherv_ring(const mg_cb_args *n, int me, int p, MPI_Comm sh)
{
    const int *counts = n->rcounts, *displs = n->rdispls;
    MPI_Aint ext = extent_of(n->rtype);
    int err = MPI_SUCCESS;
    if (n->sbuf != MPI_IN_PLACE)
        err = self_copy(n->sbuf, (int)n->scount, n->stype, AT(n->rbuf, displs, me, ext), counts[me], n->rtype, me, sh);
    int right = (me + 1) % p, left = (me + p - 1) % p;
    for (int s = 0; s < p - 1; s++) { /* step s: the block of rank me - s goes right, that of me - s - 1 comes */
        int out = (me - s + p) % p, in = (me - s - 1 + p) % p;
        err = first(err, PMPI_Sendrecv(AT(n->rbuf, displs, out, ext), counts[out], n->rtype, right, TAG,
                                       AT(n->rbuf, displs, in, ext), counts[in], n->rtype, left, TAG, sh,
                                       MPI_STATUS_IGNORE));
    }
    return err;
}

static int allgatherv_gatherv_bcast(const mg_cb_args *n, int me, int p, MPI_Comm sh)
{
    const int *counts = n->rcounts, *displs = n->rdispls;
    MPI_Aint ext = extent_of(n->rtype);
    const void *sbuf = n->sbuf;
    int scount = (int)n->scount;
    MPI_Datatype stype = n->stype;
    if (sbuf == MPI_IN_PLACE && me != 0) /* in place: the rank's block is in the receive buffer */
        sbuf = AT(n->rbuf, displs, me, ext), scount = counts[me], stype = n->rtype;
    int err = PMPI_Gatherv(sbuf, scount, stype, n->rbuf, counts, displs, n->rtype, 0, sh);
    /* every block at once: an indexed type of the receive type over the call's counts and displacements */
    MPI_Datatype all;
    int rc = PMPI_Type_indexed(p, counts, displs, n->rtype, &all);
    if (rc == MPI_SUCCESS) rc = PMPI_Type_commit(&all);
    /* without it (no memory) this rank cannot take part in the broadcast its peers make: they would hang */
    if (rc != MPI_SUCCESS) mg_tune__abort_diverging("online mode: no memory for the type of an MPI_Allgatherv");
    err = first(err, PMPI_Bcast(n->rbuf, 1, all, 0, sh));
    PMPI_Type_free(&all);
    return err;
}

static int alltoallv_pairwise(const mg_cb_args *n, int me, int p, MPI_Comm sh)
{
    const int *sc = n->scounts, *sd = n->sdispls, *rc = n->rcounts, *rd = n->rdispls;
    MPI_Aint sext = extent_of(n->stype), rext = extent_of(n->rtype);
    int err = MPI_SUCCESS;
    for (int s = 0; s < p; s++) { /* step s: to me + s, from me - s (step 0: the rank's own block) */
        int to = (me + s) % p, from = (me - s + p) % p;
        err = first(err, PMPI_Sendrecv(AT(n->sbuf, sd, to, sext), sc[to], n->stype, to, TAG, AT(n->rbuf, rd, from, rext),
                                       rc[from], n->rtype, from, TAG, sh, MPI_STATUS_IGNORE));
    }
    return err;
}

static int alltoallv_linear(const mg_cb_args *n, int me, int p, MPI_Comm sh)
{
    MPI_Request *reqs = malloc(sizeof *reqs * 2 * (size_t)p);
    if (!reqs) return alltoallv_pairwise(n, me, p, sh); /* the same messages, one pair at a time */
    const int *sc = n->scounts, *sd = n->sdispls, *rc = n->rcounts, *rd = n->rdispls;
    MPI_Aint sext = extent_of(n->stype), rext = extent_of(n->rtype);
    int err = MPI_SUCCESS, k = 0;
    for (int i = 0; i < p; i++) {
        int from = (me - i + p) % p;
        int e = PMPI_Irecv(AT(n->rbuf, rd, from, rext), rc[from], n->rtype, from, TAG, sh, &reqs[k]);
        k += e == MPI_SUCCESS, err = first(err, e);
    }
    for (int i = 0; i < p; i++) {
        int to = (me + i) % p;
        int e = PMPI_Isend(AT(n->sbuf, sd, to, sext), sc[to], n->stype, to, TAG, sh, &reqs[k]);
        k += e == MPI_SUCCESS, err = first(err, e);
    }
    err = first(err, wait_all(reqs, k));
    free(reqs);
    return err;
}

static int gatherv_linear(const mg_cb_args *n, int me, int p, MPI_Comm sh)
{
    if (me != n->root) return PMPI_Send(n->sbuf, (int)n->scount, n->stype, n->root, TAG, sh);
    const int *counts = n->rcounts, *displs = n->rdispls;
    MPI_Aint ext = extent_of(n->rtype);
    int err = MPI_SUCCESS, k = 0;
    if (n->sbuf != MPI_IN_PLACE)
        err = self_copy(n->sbuf, (int)n->scount, n->stype, AT(n->rbuf, displs, me, ext), counts[me], n->rtype, me, sh);
    MPI_Request *reqs = malloc(sizeof *reqs * (size_t)p);
    for (int i = 0; i < p; i++) {
        if (i == me) continue;
        if (!reqs) { /* one at a time */
            err = first(err, PMPI_Recv(AT(n->rbuf, displs, i, ext), counts[i], n->rtype, i, TAG, sh, MPI_STATUS_IGNORE));
            continue;
        }
        int e = PMPI_Irecv(AT(n->rbuf, displs, i, ext), counts[i], n->rtype, i, TAG, sh, &reqs[k]);
        k += e == MPI_SUCCESS, err = first(err, e);
    }
    if (reqs) err = first(err, wait_all(reqs, k));
    free(reqs);
    return err;
}

static int scatterv_linear(const mg_cb_args *n, int me, int p, MPI_Comm sh)
{
    if (me != n->root) return PMPI_Recv(n->rbuf, (int)n->rcount, n->rtype, n->root, TAG, sh, MPI_STATUS_IGNORE);
    const int *counts = n->scounts, *displs = n->sdispls;
    MPI_Aint ext = extent_of(n->stype);
    int err = MPI_SUCCESS, k = 0;
    if (n->rbuf != MPI_IN_PLACE)
        err = self_copy(AT(n->sbuf, displs, me, ext), counts[me], n->stype, n->rbuf, (int)n->rcount, n->rtype, me, sh);
    MPI_Request *reqs = malloc(sizeof *reqs * (size_t)p);
    for (int i = 0; i < p; i++) {
        if (i == me) continue;
        if (!reqs) {
            err = first(err, PMPI_Send(AT(n->sbuf, displs, i, ext), counts[i], n->stype, i, TAG, sh));
            continue;
        }
        int e = PMPI_Isend(AT(n->sbuf, displs, i, ext), counts[i], n->stype, i, TAG, sh, &reqs[k]);
        k += e == MPI_SUCCESS, err = first(err, e);
    }
    if (reqs) err = first(err, wait_all(reqs, k));
    free(reqs);
    return err;
}

static int native(mg_dtcoll_kind kind, const mg_cb_args *n)
{
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

/* Candidate impl on the shadow sh of the call's communicator (me, p: its rank and size). */
static int run(int impl, const mg_cb_args *n, int me, int p, MPI_Comm sh)
{
    switch (impl) {
    case V_ALLGATHERV_RING: return allgatherv_ring(n, me, p, sh);
    case V_ALLGATHERV_GATHERV_BCAST: return allgatherv_gatherv_bcast(n, me, p, sh);
    case V_ALLTOALLV_PAIRWISE: return alltoallv_pairwise(n, me, p, sh);
    case V_ALLTOALLV_LINEAR: return alltoallv_linear(n, me, p, sh);
    case V_GATHERV_LINEAR: return gatherv_linear(n, me, p, sh);
    default: return scatterv_linear(n, me, p, sh);
    }
}

int mg_tune__vonline_run(mg_dtcoll_kind kind, const mg_cb_args *n, int *rc)
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
    if (kind == MG_DTK_ALLGATHERV) {
        const int *counts = n->rcounts;
        for (int i = 0; i < info->size; i++) bytes += counts[i];
        bytes = mg_type_bytes(bytes, n->rtype);
    }
    mg_online_key *k = mg_tune__online_lookup(t, MG_NCOLLS + which, bytes, MPI_DATATYPE_NULL, MPI_OP_NULL,
                                              candidates, &kind, &names[which]);
    if (!k) return 0;
    int timed, cand = mg_online_next(k, &mg_online_default_policy, &timed), impl = k->impl[cand];
    mg_tune__rec_note_impl(labels[impl]);
    uint64_t t0 = timed ? mg_tune__rec_monotonic() : 0;
    if (impl == V_NATIVE) {
        *rc = native(kind, n);
    } else {
        MPI_Comm sh;
        int me;
        *rc = mg_tune__shadow_comm(n->comm, &sh);
        if (*rc == MPI_SUCCESS) {
            PMPI_Comm_rank(sh, &me);
            *rc = run(impl, n, me, info->size, sh);
            if (*rc != MPI_SUCCESS) PMPI_Comm_call_errhandler(n->comm, *rc);
        }
    }
    mg_tune__online_finish(k, cand, timed ? 1e-9 * (double)(mg_tune__rec_monotonic() - t0) : -1.0, n->comm);
    return 1;
}
