/* The intercepted nonblocking, persistent and matched-probe calls of the
 * datatype strategies, and every call that completes, tests or inspects a
 * request, which finish their packed sides (pending.h). Those go straight to
 * the native ones while no request has a packed side. tests/c/
 * request_functions.txt says, for each MPI function that takes a request,
 * why it is intercepted or needs not be (the test request_functions checks it
 * against the stack's mpi.h). */
#define _POSIX_C_SOURCE 200809L
#include "../comms.h"
#include "pending.h"
#include <stdlib.h>

/* The side x goes with the new request req. A send already complete lets its
 * side go at once: its request may be one handle shared by every send that
 * completed at its start (Open MPI hands the same one to two threads), so
 * only requests still in flight, which are unique, are tracked. If a side
 * cannot be tracked (out of memory), a nonblocking operation is completed
 * here, so nothing is lost, and a persistent request is freed: the caller
 * makes it again natively (MG_REDO). */
#define MG_REDO (-1)
static int started(int rc, MPI_Request *req, mg_dt_side *x, int persistent)
{
    if (x->s != MG_DTS_PACK && !x->online.key) return rc; /* nothing to finish or time at completion */
    int done = 0;
    if (rc == MPI_SUCCESS && x->send && !persistent) PMPI_Request_get_status(*req, &done, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS || done) {
        mg_tune__dt_release(x);
        if (done) mg_tune__dt_online_done(&x->online); /* complete at its start: that is its time */
        return rc;
    }
    if (mg_tune__dt_track(*req, x, persistent) != 0) {
        if (persistent) {
            PMPI_Request_free(req);
            mg_tune__dt_release(x);
            return MG_REDO;
        }
        MPI_Status st;
        int wrc = PMPI_Wait(req, &st);
        mg_tune__dt_finish(x, wrc, &st);
        return wrc;
    }
    mg_tune__dt_progress_orphans(0);
    return rc;
}

/* Isend, Issend and Send_init (BUFQ const), Irecv and Recv_init; CNT is the
 * count type of the entry point. */
#define DEF_START(NAME, PNAME, BUFQ, HOW, PERSISTENT, OP, CNT)                                                   \
    MG_TUNE_API int NAME(BUFQ void *buf, CNT count, MPI_Datatype datatype, int peer, int tag, MPI_Comm comm,     \
                         MPI_Request *request)                                                                   \
    {                                                                                                            \
        if (!mg_tune__dt_active_online()) return PNAME(buf, count, datatype, peer, tag, comm, request);             \
        mg_tune__rec_begin(__func__);                                                                            \
        mg_dt_side x;                                                                                            \
        mg_tune__dt_side(&x, OP, comm, peer, buf, count, datatype, HOW);                                         \
        int rc = started(PNAME(x.buf, (CNT)x.count, x.type, peer, tag, comm, request), request, &x, PERSISTENT); \
        return mg_tune__rec_done(rc == MG_REDO ? PNAME(buf, count, datatype, peer, tag, comm, request) : rc);    \
    }

/* A matched message has no communicator argument: the strategy's checks of
 * the communicator were made when the message was probed (MPI_COMM_WORLD
 * stands in). A message of MPI_PROC_NULL, or none, goes to the native call. */
static int looked_at(const MPI_Message *message)
{
    return mg_tune__dt_active() && *message != MPI_MESSAGE_NO_PROC && *message != MPI_MESSAGE_NULL;
}

#define DEF_MRECV(NAME, PNAME, CNT)                                                                             \
    MG_TUNE_API int NAME(void *buf, CNT count, MPI_Datatype datatype, MPI_Message *message, MPI_Status *status) \
    {                                                                                                           \
        if (!looked_at(message)) return PNAME(buf, count, datatype, message, status);                           \
        mg_tune__rec_begin(__func__);                                                                           \
        mg_dt_side x;                                                                                           \
        mg_tune__dt_side(&x, MG_DTOP_MRECV, MPI_COMM_WORLD, 0, buf, count, datatype, MG_DT_RECV);               \
        MG_DT_STATUS(x, status);                                                                                \
        int rc = PNAME(x.buf, (CNT)x.count, x.type, message, st);                                               \
        mg_tune__dt_finish(&x, rc, st);                                                                         \
        mg_tune__dt_progress_orphans(0);                                                                        \
        return mg_tune__rec_done(rc);                                                                           \
    }

#define DEF_IMRECV(NAME, PNAME, CNT)                                                                              \
    MG_TUNE_API int NAME(void *buf, CNT count, MPI_Datatype datatype, MPI_Message *message, MPI_Request *request) \
    {                                                                                                             \
        if (!looked_at(message)) return PNAME(buf, count, datatype, message, request);                            \
        mg_tune__rec_begin(__func__);                                                                             \
        mg_dt_side x;                                                                                             \
        mg_tune__dt_side(&x, MG_DTOP_IMRECV, MPI_COMM_WORLD, 0, buf, count, datatype, MG_DT_RECV);                \
        return mg_tune__rec_done(started(PNAME(x.buf, (CNT)x.count, x.type, message, request), request, &x, 0));  \
    }

DEF_START(MPI_Isend, PMPI_Isend, const, MG_DT_SEND, 0, MG_DTOP_ISEND, int)
DEF_START(MPI_Issend, PMPI_Issend, const, MG_DT_SEND, 0, MG_DTOP_ISSEND, int)
DEF_START(MPI_Send_init, PMPI_Send_init, const, MG_DT_SEND_LATER, 1, MG_DTOP_SEND_INIT, int)
DEF_START(MPI_Irecv, PMPI_Irecv, , MG_DT_RECV, 0, MG_DTOP_IRECV, int)
DEF_START(MPI_Recv_init, PMPI_Recv_init, , MG_DT_RECV, 1, MG_DTOP_RECV_INIT, int)
DEF_MRECV(MPI_Mrecv, PMPI_Mrecv, int)
DEF_IMRECV(MPI_Imrecv, PMPI_Imrecv, int)

#ifdef MG_HAVE_MPI_LARGE_COUNT
DEF_START(MPI_Isend_c, PMPI_Isend_c, const, MG_DT_SEND, 0, MG_DTOP_ISEND, MPI_Count)
DEF_START(MPI_Issend_c, PMPI_Issend_c, const, MG_DT_SEND, 0, MG_DTOP_ISSEND, MPI_Count)
DEF_START(MPI_Send_init_c, PMPI_Send_init_c, const, MG_DT_SEND_LATER, 1, MG_DTOP_SEND_INIT, MPI_Count)
DEF_START(MPI_Irecv_c, PMPI_Irecv_c, , MG_DT_RECV, 0, MG_DTOP_IRECV, MPI_Count)
DEF_START(MPI_Recv_init_c, PMPI_Recv_init_c, , MG_DT_RECV, 1, MG_DTOP_RECV_INIT, MPI_Count)
DEF_MRECV(MPI_Mrecv_c, PMPI_Mrecv_c, MPI_Count)
DEF_IMRECV(MPI_Imrecv_c, PMPI_Imrecv_c, MPI_Count)
#endif

MG_TUNE_API int MPI_Start(MPI_Request *request)
{
    mg_tune__rec_begin(__func__);
    if (mg_tune__dt_any_pending()) mg_tune__dt_before_start(*request);
    return mg_tune__rec_done(PMPI_Start(request));
}

MG_TUNE_API int MPI_Startall(int count, MPI_Request requests[])
{
    mg_tune__rec_begin(__func__);
    if (mg_tune__dt_any_pending())
        for (int i = 0; i < count; i++) mg_tune__dt_before_start(requests[i]);
    return mg_tune__rec_done(PMPI_Startall(count, requests));
}

MG_TUNE_API int MPI_Request_free(MPI_Request *request)
{
    mg_tune__rec_begin(__func__);
    if (!mg_tune__dt_any_pending()) return mg_tune__rec_done(PMPI_Request_free(request));
    return mg_tune__rec_done(mg_tune__dt_free(request));
}

/* rc of a single inspection says the operation is done (its flag is then
 * valid): success, or a truncated receive, whose bytes are unpacked too. */
static int finished(int rc)
{
    int cls = MPI_SUCCESS;
    if (rc != MPI_SUCCESS) PMPI_Error_class(rc, &cls);
    return cls == MPI_SUCCESS || cls == MPI_ERR_TRUNCATE;
}

MG_TUNE_API int MPI_Request_get_status(MPI_Request request, int *flag, MPI_Status *status)
{
    mg_tune__rec_begin(__func__);
    if (!mg_tune__dt_any_pending()) return mg_tune__rec_done(PMPI_Request_get_status(request, flag, status));
    MPI_Status own, *st = status == MPI_STATUS_IGNORE ? &own : status;
    int rc = PMPI_Request_get_status(request, flag, st);
    if (finished(rc) && *flag) mg_tune__dt_peeked(request, rc, st);
    return mg_tune__rec_done(rc);
}

MG_TUNE_API int MPI_Wait(MPI_Request *request, MPI_Status *status)
{
    mg_tune__rec_begin(__func__);
    if (!mg_tune__dt_any_pending()) return mg_tune__rec_done(PMPI_Wait(request, status));
    mg_dt_pending *p = mg_tune__dt_pending_of(*request);
    MPI_Status own, *st = status == MPI_STATUS_IGNORE && p ? &own : status;
    int rc = PMPI_Wait(request, st);
    mg_tune__dt_completed(p, *request, rc, st);
    mg_tune__dt_progress_orphans(0);
    return mg_tune__rec_done(rc);
}

MG_TUNE_API int MPI_Test(MPI_Request *request, int *flag, MPI_Status *status)
{
    mg_tune__rec_begin(__func__);
    if (!mg_tune__dt_any_pending()) return mg_tune__rec_done(PMPI_Test(request, flag, status));
    mg_dt_pending *p = mg_tune__dt_pending_of(*request);
    MPI_Status own, *st = status == MPI_STATUS_IGNORE && p ? &own : status;
    int rc = PMPI_Test(request, flag, st);
    if (*flag) mg_tune__dt_completed(p, *request, rc, st);
    mg_tune__dt_progress_orphans(0);
    return mg_tune__rec_done(rc);
}

/* The packed sides of an array completion call's requests, taken before it
 * runs, and statuses where the application ignores them (a packed receive
 * needs its byte count). */
typedef struct {
    mg_dt_pending *local_p[16], **p;
    MPI_Status local_st[16], *st;
} arrays;

static int arrays_get(arrays *a, int n, const MPI_Request *reqs, MPI_Status *statuses)
{
    a->p = n <= 16 ? a->local_p : malloc(sizeof(mg_dt_pending *) * (size_t)n);
    a->st = statuses != MPI_STATUSES_IGNORE ? statuses : n <= 16 ? a->local_st : malloc(sizeof(MPI_Status) * (size_t)n);
    if (!a->p || !a->st) return -1;
    for (int i = 0; i < n; i++) a->p[i] = mg_tune__dt_pending_of(reqs[i]);
    return 0;
}

static void arrays_free(arrays *a, const MPI_Status *statuses)
{
    if (a->p && a->p != a->local_p) free(a->p);
    if (a->st && a->st != statuses && a->st != a->local_st) free(a->st);
}

/* The return code of request i of an array call that returned rc. */
static int rc_of(int rc, const MPI_Status *st) { return rc == MPI_ERR_IN_STATUS ? st->MPI_ERROR : rc; }

/* Without memory for the arrays, the call waits for each request in turn. */
MG_TUNE_API int MPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[])
{
    mg_tune__rec_begin(__func__);
    if (!mg_tune__dt_any_pending()) return mg_tune__rec_done(PMPI_Waitall(count, requests, statuses));
    arrays a;
    int rc;
    if (arrays_get(&a, count, requests, statuses) != 0) {
        rc = MPI_SUCCESS;
        for (int i = 0; i < count && rc == MPI_SUCCESS; i++)
            rc = MPI_Wait(&requests[i], statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &statuses[i]);
    } else {
        rc = PMPI_Waitall(count, requests, a.st);
        for (int i = 0; i < count; i++) mg_tune__dt_completed(a.p[i], requests[i], rc_of(rc, &a.st[i]), &a.st[i]);
    }
    arrays_free(&a, statuses);
    mg_tune__dt_progress_orphans(0);
    return mg_tune__rec_done(rc);
}

MG_TUNE_API int MPI_Testall(int count, MPI_Request requests[], int *flag, MPI_Status statuses[])
{
    mg_tune__rec_begin(__func__);
    if (!mg_tune__dt_any_pending()) return mg_tune__rec_done(PMPI_Testall(count, requests, flag, statuses));
    arrays a;
    if (arrays_get(&a, count, requests, statuses) != 0) {
        arrays_free(&a, statuses);
        *flag = 0; /* not now: the application tests again */
        return mg_tune__rec_done(MPI_SUCCESS);
    }
    int rc = PMPI_Testall(count, requests, flag, a.st);
    if (*flag)
        for (int i = 0; i < count; i++) mg_tune__dt_completed(a.p[i], requests[i], rc_of(rc, &a.st[i]), &a.st[i]);
    arrays_free(&a, statuses);
    mg_tune__dt_progress_orphans(0);
    return mg_tune__rec_done(rc);
}

/* Waitany and Testany: one status. */
static int any(int wait, int count, MPI_Request requests[], int *index, int *flag, MPI_Status *status)
{
    arrays a;
    MPI_Status own, *st = status == MPI_STATUS_IGNORE ? &own : status;
    if (arrays_get(&a, count, requests, MPI_STATUSES_IGNORE) != 0) {
        arrays_free(&a, MPI_STATUSES_IGNORE);
        return MPI_ERR_NO_MEM;
    }
    int done = 1,
        rc = wait ? PMPI_Waitany(count, requests, index, st) : PMPI_Testany(count, requests, index, &done, st);
    if (flag) *flag = done;
    if (done && *index != MPI_UNDEFINED) mg_tune__dt_completed(a.p[*index], requests[*index], rc, st);
    arrays_free(&a, MPI_STATUSES_IGNORE);
    mg_tune__dt_progress_orphans(0);
    return rc;
}

MG_TUNE_API int MPI_Waitany(int count, MPI_Request requests[], int *index, MPI_Status *status)
{
    mg_tune__rec_begin(__func__);
    if (!mg_tune__dt_any_pending()) return mg_tune__rec_done(PMPI_Waitany(count, requests, index, status));
    return mg_tune__rec_done(any(1, count, requests, index, NULL, status));
}

MG_TUNE_API int MPI_Testany(int count, MPI_Request requests[], int *index, int *flag, MPI_Status *status)
{
    mg_tune__rec_begin(__func__);
    if (!mg_tune__dt_any_pending()) return mg_tune__rec_done(PMPI_Testany(count, requests, index, flag, status));
    return mg_tune__rec_done(any(0, count, requests, index, flag, status));
}

/* Waitsome and Testsome. */
static int some(int wait, int incount, MPI_Request requests[], int *outcount, int indices[], MPI_Status statuses[])
{
    arrays a;
    if (arrays_get(&a, incount, requests, statuses) != 0) {
        arrays_free(&a, statuses);
        return MPI_ERR_NO_MEM;
    }
    int rc = wait ? PMPI_Waitsome(incount, requests, outcount, indices, a.st)
                  : PMPI_Testsome(incount, requests, outcount, indices, a.st);
    if (*outcount != MPI_UNDEFINED)
        for (int k = 0; k < *outcount; k++) {
            int i = indices[k];
            mg_tune__dt_completed(a.p[i], requests[i], rc_of(rc, &a.st[k]), &a.st[k]);
        }
    arrays_free(&a, statuses);
    mg_tune__dt_progress_orphans(0);
    return rc;
}

MG_TUNE_API int MPI_Waitsome(int incount, MPI_Request requests[], int *outcount, int indices[], MPI_Status statuses[])
{
    mg_tune__rec_begin(__func__);
    if (!mg_tune__dt_any_pending())
        return mg_tune__rec_done(PMPI_Waitsome(incount, requests, outcount, indices, statuses));
    return mg_tune__rec_done(some(1, incount, requests, outcount, indices, statuses));
}

MG_TUNE_API int MPI_Testsome(int incount, MPI_Request requests[], int *outcount, int indices[], MPI_Status statuses[])
{
    mg_tune__rec_begin(__func__);
    if (!mg_tune__dt_any_pending())
        return mg_tune__rec_done(PMPI_Testsome(incount, requests, outcount, indices, statuses));
    return mg_tune__rec_done(some(0, incount, requests, outcount, indices, statuses));
}

/* The MPI-4.1 inspections: like MPI_Request_get_status, they complete
 * nothing, so a packed receive found complete is unpacked once here and its
 * request finished by a later completion call. */
#ifdef MG_HAVE_MPI_REQUEST_GET_STATUS_ALL
#ifdef MG_REQUEST_STATUS_ARRAYS_CONST
#define REQUEST_ARRAY const MPI_Request
#else /* as the stack's mpi.h declares them (Intel MPI 2021) */
#define REQUEST_ARRAY MPI_Request
#endif
MG_TUNE_API int MPI_Request_get_status_all(int count, REQUEST_ARRAY requests[], int *flag, MPI_Status statuses[])
{
    mg_tune__rec_begin(__func__);
    if (!mg_tune__dt_any_pending())
        return mg_tune__rec_done(PMPI_Request_get_status_all(count, requests, flag, statuses));
    arrays a;
    if (arrays_get(&a, count, requests, statuses) != 0) {
        arrays_free(&a, statuses);
        *flag = 0; /* not now: the application asks again */
        return mg_tune__rec_done(MPI_SUCCESS);
    }
    int rc = PMPI_Request_get_status_all(count, requests, flag, a.st);
    if (*flag)
        for (int i = 0; i < count; i++)
            if (a.p[i]) mg_tune__dt_peeked(requests[i], rc_of(rc, &a.st[i]), &a.st[i]);
    arrays_free(&a, statuses);
    mg_tune__dt_progress_orphans(0);
    return mg_tune__rec_done(rc);
}

MG_TUNE_API int MPI_Request_get_status_any(int count, REQUEST_ARRAY requests[], int *index, int *flag,
                                           MPI_Status *status)
{
    mg_tune__rec_begin(__func__);
    if (!mg_tune__dt_any_pending())
        return mg_tune__rec_done(PMPI_Request_get_status_any(count, requests, index, flag, status));
    MPI_Status own, *st = status == MPI_STATUS_IGNORE ? &own : status;
    int rc = PMPI_Request_get_status_any(count, requests, index, flag, st);
    if (finished(rc) && *flag && *index != MPI_UNDEFINED) mg_tune__dt_peeked(requests[*index], rc, st);
    mg_tune__dt_progress_orphans(0);
    return mg_tune__rec_done(rc);
}

MG_TUNE_API int MPI_Request_get_status_some(int incount, REQUEST_ARRAY requests[], int *outcount, int indices[],
                                            MPI_Status statuses[])
{
    mg_tune__rec_begin(__func__);
    if (!mg_tune__dt_any_pending())
        return mg_tune__rec_done(PMPI_Request_get_status_some(incount, requests, outcount, indices, statuses));
    arrays a;
    if (arrays_get(&a, incount, requests, statuses) != 0) {
        arrays_free(&a, statuses);
        return mg_tune__rec_done(MPI_ERR_NO_MEM);
    }
    int rc = PMPI_Request_get_status_some(incount, requests, outcount, indices, a.st);
    if (*outcount != MPI_UNDEFINED)
        for (int k = 0; k < *outcount; k++) mg_tune__dt_peeked(requests[indices[k]], rc_of(rc, &a.st[k]), &a.st[k]);
    arrays_free(&a, statuses);
    mg_tune__dt_progress_orphans(0);
    return mg_tune__rec_done(rc);
}
#endif

#ifdef MG_HAVE_MPIX_REQUEST_IS_COMPLETE
/* MPICH's test without progress: a packed receive it finds complete is
 * unpacked before the application can look at its buffer. */
MG_TUNE_API int MPIX_Request_is_complete(MPI_Request request)
{
    int done = PMPIX_Request_is_complete(request);
    if (done && mg_tune__dt_any_pending() && mg_tune__dt_pending_of(request)) {
        MPI_Status st;
        int flag = 0;
        if (PMPI_Request_get_status(request, &flag, &st) == MPI_SUCCESS && flag)
            mg_tune__dt_peeked(request, MPI_SUCCESS, &st);
    }
    return done;
}
#endif

/* Calls that complete no request of their own but after which a program may
 * look at data a freed request received: orphans are progressed after them. */
MG_TUNE_API int MPI_Barrier(MPI_Comm comm)
{
    mg_tune__rec_begin(__func__);
    if (mg_tune__rec_active()) {
        const mg_comm_info *info = mg_tune__comm_info(comm);
        mg_tune__rec_note_size(info ? info->size : -1, 0);
    }
    int rc = PMPI_Barrier(comm);
    mg_tune__dt_progress_orphans(0);
    return mg_tune__rec_done(rc);
}

MG_TUNE_API int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status)
{
    mg_tune__rec_begin(__func__);
    int rc = PMPI_Probe(source, tag, comm, status);
    mg_tune__dt_progress_orphans(0);
    return mg_tune__rec_done(rc);
}

MG_TUNE_API int MPI_Iprobe(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status)
{
    mg_tune__rec_begin(__func__);
    int rc = PMPI_Iprobe(source, tag, comm, flag, status);
    mg_tune__dt_progress_orphans(0);
    return mg_tune__rec_done(rc);
}
