/* The intercepted MPI functions of the datatype strategies (datatypes/
 * strategy.h): MPI_Type_commit and MPI_Type_dup, which tell the library which
 * types are committed, and the blocking point-to-point calls (requests.c has
 * the others). A call whose
 * datatypes are predefined, contiguous or stay native is the native call with
 * the same arguments. */
#define _POSIX_C_SOURCE 200809L
#include "pending.h"

MG_TUNE_API int MPI_Type_commit(MPI_Datatype *type)
{
    int rc = PMPI_Type_commit(type);
    if (rc == MPI_SUCCESS) mg_tune__type_committed(*type);
    return rc;
}

MG_TUNE_API int MPI_Type_dup(MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    int rc = PMPI_Type_dup(oldtype, newtype);
    if (rc == MPI_SUCCESS && mg_tune__type_is_committed(oldtype)) mg_tune__type_committed(*newtype);
    return rc;
}

/* Each call has one body for the int and the large-count entry point; CNT
 * is the count type of the entry point. */

/* MPI_Send, MPI_Ssend, MPI_Rsend. */
#define DEF_SEND(NAME, PNAME, OP, CNT)                                                                        \
    MG_TUNE_API int NAME(const void *buf, CNT count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) \
    {                                                                                                         \
        if (!mg_tune__dt_active_online()) return PNAME(buf, count, datatype, dest, tag, comm);                       \
        mg_tune__rec_begin(__func__);                                                                         \
        mg_dt_side x;                                                                                         \
        mg_tune__dt_side(&x, OP, comm, dest, buf, count, datatype, MG_DT_SEND);                               \
        int rc = PNAME(x.buf, (CNT)x.count, x.type, dest, tag, comm);                                         \
        mg_tune__dt_finish(&x, rc, NULL);                                                                     \
        mg_tune__dt_progress_orphans(0);                                                                      \
        return mg_tune__rec_done(rc);                                                                         \
    }

#define DEF_RECV(NAME, PNAME, CNT)                                                                        \
    MG_TUNE_API int NAME(void *buf, CNT count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm, \
                         MPI_Status *status)                                                              \
    {                                                                                                     \
        if (!mg_tune__dt_active_online()) return PNAME(buf, count, datatype, source, tag, comm, status);         \
        mg_tune__rec_begin(__func__);                                                                     \
        mg_dt_side x;                                                                                     \
        mg_tune__dt_side(&x, MG_DTOP_RECV, comm, source, buf, count, datatype, MG_DT_RECV);               \
        MG_DT_STATUS(x, status);                                                                          \
        int rc = PNAME(x.buf, (CNT)x.count, x.type, source, tag, comm, st);                               \
        mg_tune__dt_finish(&x, rc, st);                                                                   \
        mg_tune__dt_progress_orphans(0);                                                                  \
        return mg_tune__rec_done(rc);                                                                     \
    }

#define DEF_SENDRECV(NAME, PNAME, CNT)                                                                                 \
    MG_TUNE_API int NAME(const void *sendbuf, CNT sendcount, MPI_Datatype sendtype, int dest, int sendtag,             \
                         void *recvbuf, CNT recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm,  \
                         MPI_Status *status)                                                                           \
    {                                                                                                                  \
        if (!mg_tune__dt_active_online() ||                                                                            \
            (!mg_tune__dt_active() && !mg_tune__dt_has_plan(sendtype) && !mg_tune__dt_has_plan(recvtype)))          \
            return mg_tune__dt_with_orphans(PNAME(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount,     \
                                                  recvtype, source, recvtag, comm, status));                           \
        mg_tune__rec_begin(__func__);                                                                                  \
        mg_dt_side s, r;                                                                                               \
        mg_tune__dt_side(&s, MG_DTOP_SENDRECV_SEND, comm, dest, sendbuf, sendcount, sendtype, MG_DT_SEND);             \
        mg_tune__dt_side_with(&r, &s, MG_DTOP_SENDRECV_RECV, comm, source, recvbuf, recvcount, recvtype, MG_DT_RECV);  \
        MG_DT_STATUS(r, status);                                                                                       \
        int rc =                                                                                                       \
            PNAME(s.buf, (CNT)s.count, s.type, dest, sendtag, r.buf, (CNT)r.count, r.type, source, recvtag, comm, st); \
        mg_tune__dt_finish(&r, rc, st); /* first: the send side's time (online) ends after the unpacking */          \
        mg_tune__dt_finish(&s, rc, NULL);                                                                              \
        mg_tune__dt_progress_orphans(0);                                                                               \
        return mg_tune__rec_done(rc);                                                                                  \
    }

/* One buffer both ways: a packed send is in its stream before anything is
 * received, so with PACK on either side the call is a sendrecv (PSENDRECV). */
#define DEF_REPLACE(NAME, PNAME, PSENDRECV, CNT)                                                                      \
    MG_TUNE_API int NAME(void *buf, CNT count, MPI_Datatype datatype, int dest, int sendtag, int source, int recvtag, \
                         MPI_Comm comm, MPI_Status *status)                                                           \
    {                                                                                                                 \
        if (!mg_tune__dt_active_online() || (!mg_tune__dt_active() && !mg_tune__dt_has_plan(datatype)))             \
            return mg_tune__dt_with_orphans(                                                                          \
                PNAME(buf, count, datatype, dest, sendtag, source, recvtag, comm, status));                           \
        mg_tune__rec_begin(__func__);                                                                                 \
        mg_dt_side s, r;                                                                                              \
        mg_tune__dt_side(&s, MG_DTOP_REPLACE_SEND, comm, dest, buf, count, datatype, MG_DT_SEND);                     \
        mg_tune__dt_side_with(&r, &s, MG_DTOP_REPLACE_RECV, comm, source, buf, count, datatype, MG_DT_RECV);          \
        int rc;                                                                                                       \
        if (s.s != MG_DTS_PACK && r.s != MG_DTS_PACK) {                                                               \
            /* one side may stay native at MPI_PROC_NULL: the other's type serves both */                             \
            rc = PNAME(buf, count, s.s == MG_DTS_NORMALIZED ? s.type : r.type, dest, sendtag, source, recvtag, comm,  \
                       status);                                                                                       \
            mg_tune__dt_finish(&r, rc, NULL); /* nothing to unpack; its time, where its key has it (online) */        \
        } else {                                                                                                      \
            MG_DT_STATUS(r, status);                                                                                  \
            rc = PSENDRECV(s.buf, (CNT)s.count, s.type, dest, sendtag, r.buf, (CNT)r.count, r.type, source, recvtag,  \
                           comm, st);                                                                                 \
            mg_tune__dt_finish(&r, rc, st);                                                                           \
        }                                                                                                             \
        mg_tune__dt_finish(&s, rc, NULL);                                                                             \
        mg_tune__dt_progress_orphans(0);                                                                              \
        return mg_tune__rec_done(rc);                                                                                 \
    }

DEF_SEND(MPI_Send, PMPI_Send, MG_DTOP_SEND, int)
DEF_SEND(MPI_Ssend, PMPI_Ssend, MG_DTOP_SSEND, int)
DEF_SEND(MPI_Rsend, PMPI_Rsend, MG_DTOP_RSEND, int)
DEF_RECV(MPI_Recv, PMPI_Recv, int)
DEF_SENDRECV(MPI_Sendrecv, PMPI_Sendrecv, int)
DEF_REPLACE(MPI_Sendrecv_replace, PMPI_Sendrecv_replace, PMPI_Sendrecv, int)

#ifdef MG_HAVE_MPI_LARGE_COUNT
DEF_SEND(MPI_Send_c, PMPI_Send_c, MG_DTOP_SEND, MPI_Count)
DEF_SEND(MPI_Ssend_c, PMPI_Ssend_c, MG_DTOP_SSEND, MPI_Count)
DEF_SEND(MPI_Rsend_c, PMPI_Rsend_c, MG_DTOP_RSEND, MPI_Count)
DEF_RECV(MPI_Recv_c, PMPI_Recv_c, MPI_Count)
DEF_SENDRECV(MPI_Sendrecv_c, PMPI_Sendrecv_c, MPI_Count)
DEF_REPLACE(MPI_Sendrecv_replace_c, PMPI_Sendrecv_replace_c, PMPI_Sendrecv_c, MPI_Count)
#endif
