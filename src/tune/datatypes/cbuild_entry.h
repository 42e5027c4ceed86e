/* The entry points of the collectives built by cbuild.c, one macro per
 * argument list (layer dtcoll): each takes the name, the PMPI function, the
 * collective (mg_dtcoll_kind), the count and displacement types (int, or
 * MPI_Count and MPI_Aint in the `_c` forms), WIDE (1 in the `_c` forms) and
 * the form: B (blocking), I (nonblocking: a request) or P (persistent: an
 * info and a request). Every one records itself (record.h), goes straight to
 * the PMPI function while the strategies look at nothing, and progresses
 * orphans (pending.h) at its end. */
#ifndef MG_TUNE_DT_CBUILD_ENTRY_H
#define MG_TUNE_DT_CBUILD_ENTRY_H

#include "cbuild.h"
#include "vonline.h"

#define MG_CB_PARAMS_B
#define MG_CB_PARAMS_I , MPI_Request *request
#define MG_CB_PARAMS_P , MPI_Info info, MPI_Request *request
#define MG_CB_PASS_B
#define MG_CB_PASS_I , request
#define MG_CB_PASS_P , info, request
#define MG_CB_REQ_B NULL
#define MG_CB_REQ_I request
#define MG_CB_REQ_P request
#define MG_CB_FORM_B MG_DT_BLOCKING
#define MG_CB_FORM_I MG_DT_NONBLOCKING
#define MG_CB_FORM_P MG_DT_PERSISTENT
/* whether the strategies look at the call: a blocking one's sides learn in online mode too */
#define MG_CB_ACTIVE_B mg_tune__dt_active_online
#define MG_CB_ACTIVE_I mg_tune__dt_active
#define MG_CB_ACTIVE_P mg_tune__dt_active
/* R: Y where the collective has a root, else N */
#define MG_CB_ROOTP_Y , int root
#define MG_CB_ROOTP_N
#define MG_CB_ROOTA_Y , root
#define MG_CB_ROOTA_N
#define MG_CB_ROOTV_Y root
#define MG_CB_ROOTV_N 0

/* The body: with a (the application's arguments) made, the native call CALL with x.n's. */
#define MG_CB_BODY(KIND, WIDE, FORM, CALL)                                \
    mg_tune__rec_begin(__func__);                                         \
    mg_cb_call x;                                                         \
    mg_tune__cb_build(KIND, MG_CB_FORM_##FORM, WIDE, &a, &x);             \
    int rc = CALL;                                                        \
    return mg_tune__rec_done(mg_tune__cb_done(&x, rc, MG_CB_REQ_##FORM));
/* The irregular collectives' body: in online mode, a blocking call may run
 * another algorithm than CALL with x.n's arguments (vonline.h). */
#define MG_CB_VBODY(KIND, WIDE, FORM, CALL)                                                                   \
    mg_tune__rec_begin(__func__);                                                                             \
    mg_cb_call x;                                                                                             \
    mg_tune__cb_build(KIND, MG_CB_FORM_##FORM, WIDE, &a, &x);                                                 \
    int rc;                                                                                                   \
    if (!(MG_CB_FORM_##FORM == MG_DT_BLOCKING && mg_tune__vonline_run(KIND, &x.n, WIDE, &rc))) rc = CALL;         \
    return mg_tune__rec_done(mg_tune__cb_done(&x, rc, MG_CB_REQ_##FORM));

#define MG_CB_BCAST(NAME, PNAME, KIND, CNT, DSP, WIDE, FORM)                                                          \
    MG_TUNE_API int NAME(void *buffer, CNT count, MPI_Datatype datatype, int root, MPI_Comm comm MG_CB_PARAMS_##FORM) \
    {                                                                                                                 \
        if (!mg_tune__dt_active()) return PNAME(buffer, count, datatype, root, comm MG_CB_PASS_##FORM);               \
        mg_cb_args a = {.rbuf = buffer, .rcount = count, .rtype = datatype, .root = root, .comm = comm};              \
        MG_CB_BODY(KIND, WIDE, FORM, PNAME(x.n.rbuf, (CNT)x.n.rcount, x.n.rtype, root, comm MG_CB_PASS_##FORM))       \
    }

/* Gather, Scatter (R = Y: a root) and Allgather, Alltoall and their neighbourhood forms (N). */
#define MG_CB_REGULAR_(NAME, PNAME, KIND, CNT, WIDE, FORM, R)                                                     \
    MG_TUNE_API int NAME(const void *sendbuf, CNT sendcount, MPI_Datatype sendtype, void *recvbuf, CNT recvcount, \
                         MPI_Datatype recvtype MG_CB_ROOTP_##R, MPI_Comm comm MG_CB_PARAMS_##FORM)                \
    {                                                                                                             \
        if (!MG_CB_ACTIVE_##FORM())                                                                               \
            return PNAME(sendbuf, sendcount, sendtype, recvbuf, recvcount,                                        \
                         recvtype MG_CB_ROOTA_##R, comm MG_CB_PASS_##FORM);                                       \
        mg_cb_args a = {.sbuf = sendbuf, .scount = sendcount, .stype = sendtype, .rbuf = recvbuf,                 \
                        .rcount = recvcount, .rtype = recvtype, .root = MG_CB_ROOTV_##R, .comm = comm};           \
        MG_CB_BODY(KIND, WIDE, FORM,                                                                              \
                   PNAME(x.n.sbuf, (CNT)x.n.scount, x.n.stype, x.n.rbuf, (CNT)x.n.rcount,                         \
                         x.n.rtype MG_CB_ROOTA_##R, comm MG_CB_PASS_##FORM))                                      \
    }

#define MG_CB_ROOTED(NAME, PNAME, KIND, CNT, DSP, WIDE, FORM) MG_CB_REGULAR_(NAME, PNAME, KIND, CNT, WIDE, FORM, Y)
#define MG_CB_ALL(NAME, PNAME, KIND, CNT, DSP, WIDE, FORM) MG_CB_REGULAR_(NAME, PNAME, KIND, CNT, WIDE, FORM, N)
/* Gatherv (R = Y) and Allgatherv, Neighbor_allgatherv (N). */
#define MG_CB_GATHERV_(NAME, PNAME, KIND, CNT, DSP, WIDE, FORM, R)                                     \
    MG_TUNE_API int NAME(const void *sendbuf, CNT sendcount, MPI_Datatype sendtype, void *recvbuf,     \
                         const CNT recvcounts[], const DSP displs[],                                   \
                         MPI_Datatype recvtype MG_CB_ROOTP_##R, MPI_Comm comm MG_CB_PARAMS_##FORM)     \
    {                                                                                                  \
        if (!mg_tune__dt_active_online())                                                                     \
            return PNAME(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,                    \
                         recvtype MG_CB_ROOTA_##R, comm MG_CB_PASS_##FORM);                            \
        mg_cb_args a = {.sbuf = sendbuf, .scount = sendcount, .stype = sendtype, .rbuf = recvbuf,      \
                        .rcounts = recvcounts, .rdispls = displs, .rtype = recvtype,                   \
                        .root = MG_CB_ROOTV_##R, .comm = comm};                                        \
        MG_CB_VBODY(KIND, WIDE, FORM,                                                                   \
                   PNAME(x.n.sbuf, (CNT)x.n.scount, x.n.stype, x.n.rbuf, (const CNT *)x.n.rcounts,     \
                         (const DSP *)x.n.rdispls, x.n.rtype MG_CB_ROOTA_##R, comm MG_CB_PASS_##FORM)) \
    }

#define MG_CB_GATHERV(NAME, PNAME, KIND, CNT, DSP, WIDE, FORM) \
    MG_CB_GATHERV_(NAME, PNAME, KIND, CNT, DSP, WIDE, FORM, Y)
#define MG_CB_ALLGATHERV(NAME, PNAME, KIND, CNT, DSP, WIDE, FORM) \
    MG_CB_GATHERV_(NAME, PNAME, KIND, CNT, DSP, WIDE, FORM, N)
#define MG_CB_SCATTERV(NAME, PNAME, KIND, CNT, DSP, WIDE, FORM)                                                  \
    MG_TUNE_API int NAME(const void *sendbuf, const CNT sendcounts[], const DSP displs[], MPI_Datatype sendtype, \
                         void *recvbuf, CNT recvcount, MPI_Datatype recvtype, int root,                          \
                         MPI_Comm comm MG_CB_PARAMS_##FORM)                                                      \
    {                                                                                                            \
        if (!mg_tune__dt_active_online())                                                                               \
            return PNAME(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root,              \
                         comm MG_CB_PASS_##FORM);                                                                \
        mg_cb_args a = {.sbuf = sendbuf, .scounts = sendcounts, .sdispls = displs, .stype = sendtype,            \
                        .rbuf = recvbuf, .rcount = recvcount, .rtype = recvtype, .root = root, .comm = comm};    \
        MG_CB_VBODY(KIND, WIDE, FORM,                                                                             \
                   PNAME(x.n.sbuf, (const CNT *)x.n.scounts, (const DSP *)x.n.sdispls, x.n.stype, x.n.rbuf,      \
                         (CNT)x.n.rcount, x.n.rtype, root, comm MG_CB_PASS_##FORM))                              \
    }

/* Alltoallv, Neighbor_alltoallv. */
#define MG_CB_ALLTOALLV(NAME, PNAME, KIND, CNT, DSP, WIDE, FORM)                                                  \
    MG_TUNE_API int NAME(const void *sendbuf, const CNT sendcounts[], const DSP sdispls[], MPI_Datatype sendtype, \
                         void *recvbuf, const CNT recvcounts[], const DSP rdispls[], MPI_Datatype recvtype,       \
                         MPI_Comm comm MG_CB_PARAMS_##FORM)                                                       \
    {                                                                                                             \
        if (!mg_tune__dt_active_online())                                                                                \
            return PNAME(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype,          \
                         comm MG_CB_PASS_##FORM);                                                                 \
        mg_cb_args a = {.sbuf = sendbuf, .scounts = sendcounts, .sdispls = sdispls, .stype = sendtype,            \
                        .rbuf = recvbuf, .rcounts = recvcounts, .rdispls = rdispls, .rtype = recvtype,            \
                        .comm = comm};                                                                            \
        MG_CB_VBODY(KIND, WIDE, FORM,                                                                              \
                   PNAME(x.n.sbuf, (const CNT *)x.n.scounts, (const DSP *)x.n.sdispls, x.n.stype, x.n.rbuf,       \
                         (const CNT *)x.n.rcounts, (const DSP *)x.n.rdispls, x.n.rtype, comm MG_CB_PASS_##FORM))  \
    }

/* Alltoallw, Neighbor_alltoallw. */
#define MG_CB_ALLTOALLW(NAME, PNAME, KIND, CNT, DSP, WIDE, FORM)                                                     \
    MG_TUNE_API int NAME(const void *sendbuf, const CNT sendcounts[], const DSP sdispls[],                           \
                         const MPI_Datatype sendtypes[], void *recvbuf, const CNT recvcounts[], const DSP rdispls[], \
                         const MPI_Datatype recvtypes[], MPI_Comm comm MG_CB_PARAMS_##FORM)                          \
    {                                                                                                                \
        if (!MG_CB_ACTIVE_##FORM())                                                                                  \
            return PNAME(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes,           \
                         comm MG_CB_PASS_##FORM);                                                                    \
        mg_cb_args a = {.sbuf = sendbuf, .scounts = sendcounts, .sdispls = sdispls, .stypes = sendtypes,             \
                        .rbuf = recvbuf, .rcounts = recvcounts, .rdispls = rdispls, .rtypes = recvtypes,             \
                        .comm = comm};                                                                               \
        MG_CB_BODY(KIND, WIDE, FORM,                                                                                 \
                   PNAME(x.n.sbuf, (const CNT *)x.n.scounts, (const DSP *)x.n.sdispls, x.n.stypes, x.n.rbuf,         \
                         (const CNT *)x.n.rcounts, (const DSP *)x.n.rdispls, x.n.rtypes, comm MG_CB_PASS_##FORM))    \
    }

#endif
