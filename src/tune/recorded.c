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

/* FORM: B (blocking), I (nonblocking: a request) or P (persistent: an info and a request). */
#define PARAMS_B
#define PARAMS_I , MPI_Request *request
#define PARAMS_P , MPI_Info info, MPI_Request *request
#define PASS_B
#define PASS_I , request
#define PASS_P , info, request

#define RECORDED(CALL, COMM, COUNT, TYPE, OP, PER_RANK) \
    mg_tune__rec_begin(__func__);                       \
    note(COMM, COUNT, TYPE, OP, PER_RANK);              \
    return mg_tune__rec_done(CALL)

/* Allreduce, Scan, Exscan (PER_RANK 0) and Reduce_scatter_block (1: its block is a rank's). */
#define DEF_REDUCTION(NAME, PNAME, CNT, FORM, PER_RANK)                                                          \
    MG_TUNE_API int NAME(const void *sendbuf, void *recvbuf, CNT count, MPI_Datatype datatype, MPI_Op op,        \
                         MPI_Comm comm PARAMS_##FORM)                                                            \
    {                                                                                                            \
        RECORDED(PNAME(sendbuf, recvbuf, count, datatype, op, comm PASS_##FORM), comm, count, datatype, op,      \
                 PER_RANK);                                                                                      \
    }
#define DEF_REDUCE(NAME, PNAME, CNT, FORM)                                                                       \
    MG_TUNE_API int NAME(const void *sendbuf, void *recvbuf, CNT count, MPI_Datatype datatype, MPI_Op op,        \
                         int root, MPI_Comm comm PARAMS_##FORM)                                                  \
    {                                                                                                            \
        RECORDED(PNAME(sendbuf, recvbuf, count, datatype, op, root, comm PASS_##FORM), comm, count, datatype, op, \
                 0);                                                                                             \
    }
/* Reduce_scatter: this rank's own block (WIDE: MPI_Count counts). */
#define DEF_REDUCE_SCATTER(NAME, PNAME, CNT, WIDE, FORM)                                                     \
    MG_TUNE_API int NAME(const void *sendbuf, void *recvbuf, const CNT recvcounts[], MPI_Datatype datatype, \
                         MPI_Op op, MPI_Comm comm PARAMS_##FORM)                                             \
    {                                                                                                        \
        RECORDED(PNAME(sendbuf, recvbuf, recvcounts, datatype, op, comm PASS_##FORM), comm,                 \
                 own_count(comm, recvcounts, WIDE), datatype, op, 0);                                        \
    }
#define DEF_BARRIER(NAME, PNAME, FORM)                                                                  \
    MG_TUNE_API int NAME(MPI_Comm comm PARAMS_##FORM)                                                   \
    {                                                                                                   \
        RECORDED(PNAME(comm PASS_##FORM), comm, 0, MPI_BYTE, MPI_OP_NULL, 0);                           \
    }

DEF_REDUCTION(MPI_Exscan, PMPI_Exscan, int, B, 0)
DEF_REDUCE_SCATTER(MPI_Reduce_scatter, PMPI_Reduce_scatter, int, 0, B)
#ifdef MG_HAVE_MPI_LARGE_COUNT
DEF_REDUCTION(MPI_Exscan_c, PMPI_Exscan_c, MPI_Count, B, 0)
DEF_REDUCE_SCATTER(MPI_Reduce_scatter_c, PMPI_Reduce_scatter_c, MPI_Count, 1, B)
#endif

/* ---- nonblocking (MPI-3) ---- */

#ifdef MG_HAVE_PMPI_NONBLOCKING_REDUCTIONS
DEF_REDUCTION(MPI_Iallreduce, PMPI_Iallreduce, int, I, 0)
DEF_REDUCTION(MPI_Iscan, PMPI_Iscan, int, I, 0)
DEF_REDUCTION(MPI_Iexscan, PMPI_Iexscan, int, I, 0)
DEF_REDUCTION(MPI_Ireduce_scatter_block, PMPI_Ireduce_scatter_block, int, I, 1)
DEF_REDUCE(MPI_Ireduce, PMPI_Ireduce, int, I)
DEF_REDUCE_SCATTER(MPI_Ireduce_scatter, PMPI_Ireduce_scatter, int, 0, I)
DEF_BARRIER(MPI_Ibarrier, PMPI_Ibarrier, I)
#ifdef MG_HAVE_MPI_LARGE_COUNT
DEF_REDUCTION(MPI_Iallreduce_c, PMPI_Iallreduce_c, MPI_Count, I, 0)
DEF_REDUCTION(MPI_Iscan_c, PMPI_Iscan_c, MPI_Count, I, 0)
DEF_REDUCTION(MPI_Iexscan_c, PMPI_Iexscan_c, MPI_Count, I, 0)
DEF_REDUCTION(MPI_Ireduce_scatter_block_c, PMPI_Ireduce_scatter_block_c, MPI_Count, I, 1)
DEF_REDUCE(MPI_Ireduce_c, PMPI_Ireduce_c, MPI_Count, I)
DEF_REDUCE_SCATTER(MPI_Ireduce_scatter_c, PMPI_Ireduce_scatter_c, MPI_Count, 1, I)
#endif
#endif

/* ---- persistent (MPI-4), where the stack has them ---- */

#ifdef MG_HAVE_PMPI_PERSISTENT_REDUCTIONS
DEF_REDUCTION(MPI_Allreduce_init, PMPI_Allreduce_init, int, P, 0)
DEF_REDUCTION(MPI_Scan_init, PMPI_Scan_init, int, P, 0)
DEF_REDUCTION(MPI_Exscan_init, PMPI_Exscan_init, int, P, 0)
DEF_REDUCTION(MPI_Reduce_scatter_block_init, PMPI_Reduce_scatter_block_init, int, P, 1)
DEF_REDUCE(MPI_Reduce_init, PMPI_Reduce_init, int, P)
DEF_REDUCE_SCATTER(MPI_Reduce_scatter_init, PMPI_Reduce_scatter_init, int, 0, P)
DEF_BARRIER(MPI_Barrier_init, PMPI_Barrier_init, P)
#ifdef MG_HAVE_MPI_LARGE_COUNT
DEF_REDUCTION(MPI_Allreduce_init_c, PMPI_Allreduce_init_c, MPI_Count, P, 0)
DEF_REDUCTION(MPI_Scan_init_c, PMPI_Scan_init_c, MPI_Count, P, 0)
DEF_REDUCTION(MPI_Exscan_init_c, PMPI_Exscan_init_c, MPI_Count, P, 0)
DEF_REDUCTION(MPI_Reduce_scatter_block_init_c, PMPI_Reduce_scatter_block_init_c, MPI_Count, P, 1)
DEF_REDUCE(MPI_Reduce_init_c, PMPI_Reduce_init_c, MPI_Count, P)
DEF_REDUCE_SCATTER(MPI_Reduce_scatter_init_c, PMPI_Reduce_scatter_init_c, MPI_Count, 1, P)
#endif
#endif
