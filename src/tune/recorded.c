/* The MPI_ entry points the library only records (record.h; layer top): the
 * collectives it has no mock-up or datatype strategy for, the reductions'
 * nonblocking and persistent forms, MPI_Exscan, MPI_Reduce_scatter and the
 * nonblocking and persistent barriers. Without them a program's time in them
 * would show only in the completion calls, under the wrong name. Each goes
 * straight to the PMPI function; in record mode it notes its communicator's
 * size, its bytes as the blocking forms note theirs (a rank's block; of a
 * v form, this rank's own) and, of a reduction, its datatype and operation. */
#define _POSIX_C_SOURCE 200809L
#include "comms.h"
#include "lifecycle.h"
#include "record.h"
#include "types.h"

/* The notes of a call on comm moving count x type (count < 0: no bytes), times the communicator's size
 * where per_rank (a reduce-scatter's block: its whole vector, as MPI_Reduce_scatter_block notes it). */
static void note(MPI_Comm comm, MPI_Count count, MPI_Datatype type, MPI_Op op, int per_rank)
{
    if (!mg_tune__rec_active()) return;
    const mg_comm_info *info = comm != MPI_COMM_NULL ? mg_tune__comm_info(comm) : NULL;
    MPI_Count n = count;
    if (per_rank && (!info || __builtin_mul_overflow(count, (MPI_Count)info->size, &n))) n = -1;
    mg_tune__rec_note_size(info ? info->size : -1, n < 0 ? -1 : mg_type_bytes(n, type));
    if (op != MPI_OP_NULL) mg_tune__rec_note_reduction(type, op);
}

/* This rank's count of a v form's counts (count -1 where the rank's index is unknown). */
static MPI_Count own_count(MPI_Comm comm, const void *counts, int wide)
{
    int me;
    if (!mg_tune__rec_active() || !counts || comm == MPI_COMM_NULL || PMPI_Comm_rank(comm, &me) != MPI_SUCCESS)
        return -1;
    return wide ? ((const MPI_Count *)counts)[me] : (MPI_Count)((const int *)counts)[me];
}

#define RECORDED_(CALL, COMM, COUNT, TYPE, OP, PER_RANK) \
    mg_tune__rec_begin(__func__);                       \
    note(COMM, COUNT, TYPE, OP, PER_RANK);              \
    return mg_tune__rec_done(CALL)
#define RECORDED(CALL, COMM, COUNT, TYPE, OP) RECORDED_(CALL, COMM, COUNT, TYPE, OP, 0)

/* ---- nonblocking (MPI-3) ---- */

#ifdef MG_HAVE_PMPI_NONBLOCKING_REDUCTIONS

#define DEF_IREDUCTION(NAME, PNAME, CNT)                                                                            \
    MG_TUNE_API int NAME(const void *sendbuf, void *recvbuf, CNT count, MPI_Datatype datatype, MPI_Op op,           \
                         MPI_Comm comm, MPI_Request *request)                                                       \
    {                                                                                                               \
        RECORDED(PNAME(sendbuf, recvbuf, count, datatype, op, comm, request), comm, count, datatype, op);           \
    }
#define DEF_IREDUCE_SCATTER_BLOCK(NAME, PNAME, CNT)                                                            \
    MG_TUNE_API int NAME(const void *sendbuf, void *recvbuf, CNT count, MPI_Datatype datatype, MPI_Op op,     \
                         MPI_Comm comm, MPI_Request *request)                                                 \
    {                                                                                                         \
        RECORDED_(PNAME(sendbuf, recvbuf, count, datatype, op, comm, request), comm, count, datatype, op, 1); \
    }
#define DEF_IREDUCE(NAME, PNAME, CNT)                                                                               \
    MG_TUNE_API int NAME(const void *sendbuf, void *recvbuf, CNT count, MPI_Datatype datatype, MPI_Op op, int root, \
                         MPI_Comm comm, MPI_Request *request)                                                       \
    {                                                                                                               \
        RECORDED(PNAME(sendbuf, recvbuf, count, datatype, op, root, comm, request), comm, count, datatype, op);     \
    }
#define DEF_EXSCAN(NAME, PNAME, CNT)                                                                      \
    MG_TUNE_API int NAME(const void *sendbuf, void *recvbuf, CNT count, MPI_Datatype datatype, MPI_Op op, \
                         MPI_Comm comm)                                                                   \
    {                                                                                                     \
        RECORDED(PNAME(sendbuf, recvbuf, count, datatype, op, comm), comm, count, datatype, op);          \
    }
#define DEF_REDUCE_SCATTER(NAME, PNAME, CNT, WIDE)                                                                 \
    MG_TUNE_API int NAME(const void *sendbuf, void *recvbuf, const CNT recvcounts[], MPI_Datatype datatype,       \
                         MPI_Op op, MPI_Comm comm)                                                                 \
    {                                                                                                              \
        RECORDED(PNAME(sendbuf, recvbuf, recvcounts, datatype, op, comm), comm, own_count(comm, recvcounts, WIDE), \
                 datatype, op);                                                                                    \
    }
#define DEF_IREDUCE_SCATTER(NAME, PNAME, CNT, WIDE)                                                          \
    MG_TUNE_API int NAME(const void *sendbuf, void *recvbuf, const CNT recvcounts[], MPI_Datatype datatype, \
                         MPI_Op op, MPI_Comm comm, MPI_Request *request)                                     \
    {                                                                                                        \
        RECORDED(PNAME(sendbuf, recvbuf, recvcounts, datatype, op, comm, request), comm,                    \
                 own_count(comm, recvcounts, WIDE), datatype, op);                                           \
    }

DEF_IREDUCTION(MPI_Iallreduce, PMPI_Iallreduce, int)
DEF_IREDUCTION(MPI_Iscan, PMPI_Iscan, int)
DEF_IREDUCTION(MPI_Iexscan, PMPI_Iexscan, int)
DEF_IREDUCE_SCATTER_BLOCK(MPI_Ireduce_scatter_block, PMPI_Ireduce_scatter_block, int)
DEF_IREDUCE(MPI_Ireduce, PMPI_Ireduce, int)
DEF_EXSCAN(MPI_Exscan, PMPI_Exscan, int)
DEF_REDUCE_SCATTER(MPI_Reduce_scatter, PMPI_Reduce_scatter, int, 0)
DEF_IREDUCE_SCATTER(MPI_Ireduce_scatter, PMPI_Ireduce_scatter, int, 0)

MG_TUNE_API int MPI_Ibarrier(MPI_Comm comm, MPI_Request *request)
{
    RECORDED(PMPI_Ibarrier(comm, request), comm, 0, MPI_BYTE, MPI_OP_NULL);
}

#ifdef MG_HAVE_MPI_LARGE_COUNT
DEF_IREDUCTION(MPI_Iallreduce_c, PMPI_Iallreduce_c, MPI_Count)
DEF_IREDUCTION(MPI_Iscan_c, PMPI_Iscan_c, MPI_Count)
DEF_IREDUCTION(MPI_Iexscan_c, PMPI_Iexscan_c, MPI_Count)
DEF_IREDUCE_SCATTER_BLOCK(MPI_Ireduce_scatter_block_c, PMPI_Ireduce_scatter_block_c, MPI_Count)
DEF_IREDUCE(MPI_Ireduce_c, PMPI_Ireduce_c, MPI_Count)
DEF_EXSCAN(MPI_Exscan_c, PMPI_Exscan_c, MPI_Count)
DEF_REDUCE_SCATTER(MPI_Reduce_scatter_c, PMPI_Reduce_scatter_c, MPI_Count, 1)
DEF_IREDUCE_SCATTER(MPI_Ireduce_scatter_c, PMPI_Ireduce_scatter_c, MPI_Count, 1)
#endif
#endif

/* ---- persistent (MPI-4), where the stack has them ---- */

#ifdef MG_HAVE_PMPI_PERSISTENT_REDUCTIONS
#define DEF_REDUCTION_INIT(NAME, PNAME, CNT)                                                                      \
    MG_TUNE_API int NAME(const void *sendbuf, void *recvbuf, CNT count, MPI_Datatype datatype, MPI_Op op,         \
                         MPI_Comm comm, MPI_Info info, MPI_Request *request)                                      \
    {                                                                                                             \
        RECORDED(PNAME(sendbuf, recvbuf, count, datatype, op, comm, info, request), comm, count, datatype, op);   \
    }
#define DEF_REDUCE_SCATTER_BLOCK_INIT(NAME, PNAME, CNT)                                                       \
    MG_TUNE_API int NAME(const void *sendbuf, void *recvbuf, CNT count, MPI_Datatype datatype, MPI_Op op,       \
                         MPI_Comm comm, MPI_Info info, MPI_Request *request)                                    \
    {                                                                                                           \
        RECORDED_(PNAME(sendbuf, recvbuf, count, datatype, op, comm, info, request), comm, count, datatype, op, \
                  1);                                                                                           \
    }
#define DEF_REDUCE_INIT(NAME, PNAME, CNT)                                                                         \
    MG_TUNE_API int NAME(const void *sendbuf, void *recvbuf, CNT count, MPI_Datatype datatype, MPI_Op op,         \
                         int root, MPI_Comm comm, MPI_Info info, MPI_Request *request)                            \
    {                                                                                                             \
        RECORDED(PNAME(sendbuf, recvbuf, count, datatype, op, root, comm, info, request), comm, count, datatype, \
                 op);                                                                                             \
    }
#define DEF_REDUCE_SCATTER_INIT(NAME, PNAME, CNT, WIDE)                                                      \
    MG_TUNE_API int NAME(const void *sendbuf, void *recvbuf, const CNT recvcounts[], MPI_Datatype datatype, \
                         MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request)                      \
    {                                                                                                        \
        RECORDED(PNAME(sendbuf, recvbuf, recvcounts, datatype, op, comm, info, request), comm,              \
                 own_count(comm, recvcounts, WIDE), datatype, op);                                           \
    }

DEF_REDUCTION_INIT(MPI_Allreduce_init, PMPI_Allreduce_init, int)
DEF_REDUCTION_INIT(MPI_Scan_init, PMPI_Scan_init, int)
DEF_REDUCTION_INIT(MPI_Exscan_init, PMPI_Exscan_init, int)
DEF_REDUCE_SCATTER_BLOCK_INIT(MPI_Reduce_scatter_block_init, PMPI_Reduce_scatter_block_init, int)
DEF_REDUCE_INIT(MPI_Reduce_init, PMPI_Reduce_init, int)
DEF_REDUCE_SCATTER_INIT(MPI_Reduce_scatter_init, PMPI_Reduce_scatter_init, int, 0)

MG_TUNE_API int MPI_Barrier_init(MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    RECORDED(PMPI_Barrier_init(comm, info, request), comm, 0, MPI_BYTE, MPI_OP_NULL);
}

#ifdef MG_HAVE_MPI_LARGE_COUNT
DEF_REDUCTION_INIT(MPI_Allreduce_init_c, PMPI_Allreduce_init_c, MPI_Count)
DEF_REDUCTION_INIT(MPI_Scan_init_c, PMPI_Scan_init_c, MPI_Count)
DEF_REDUCTION_INIT(MPI_Exscan_init_c, PMPI_Exscan_init_c, MPI_Count)
DEF_REDUCE_SCATTER_BLOCK_INIT(MPI_Reduce_scatter_block_init_c, PMPI_Reduce_scatter_block_init_c, MPI_Count)
DEF_REDUCE_INIT(MPI_Reduce_init_c, PMPI_Reduce_init_c, MPI_Count)
DEF_REDUCE_SCATTER_INIT(MPI_Reduce_scatter_init_c, PMPI_Reduce_scatter_init_c, MPI_Count, 1)
#endif
#endif
