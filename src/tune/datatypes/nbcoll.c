/* The nonblocking collectives of cbuild.c (MPI_Ibcast ... MPI_Ineighbor_alltoallw),
 * each with its `_c` form where the stack has it: their send blocks are packed
 * here, their receive blocks unpacked by whichever call completes their
 * request (requests.c, pending.h). */
#define _POSIX_C_SOURCE 200809L
#include "cbuild_entry.h"

MG_CB_BCAST(MPI_Ibcast, PMPI_Ibcast, MG_DTK_BCAST, int, int, 0, I)
MG_CB_ROOTED(MPI_Igather, PMPI_Igather, MG_DTK_GATHER, int, int, 0, I)
MG_CB_ROOTED(MPI_Iscatter, PMPI_Iscatter, MG_DTK_SCATTER, int, int, 0, I)
MG_CB_ALL(MPI_Iallgather, PMPI_Iallgather, MG_DTK_ALLGATHER, int, int, 0, I)
MG_CB_ALL(MPI_Ialltoall, PMPI_Ialltoall, MG_DTK_ALLTOALL, int, int, 0, I)
MG_CB_GATHERV(MPI_Igatherv, PMPI_Igatherv, MG_DTK_GATHERV, int, int, 0, I)
MG_CB_SCATTERV(MPI_Iscatterv, PMPI_Iscatterv, MG_DTK_SCATTERV, int, int, 0, I)
MG_CB_ALLGATHERV(MPI_Iallgatherv, PMPI_Iallgatherv, MG_DTK_ALLGATHERV, int, int, 0, I)
MG_CB_ALLTOALLV(MPI_Ialltoallv, PMPI_Ialltoallv, MG_DTK_ALLTOALLV, int, int, 0, I)
MG_CB_ALLTOALLW(MPI_Ialltoallw, PMPI_Ialltoallw, MG_DTK_ALLTOALLW, int, int, 0, I)
MG_CB_ALL(MPI_Ineighbor_allgather, PMPI_Ineighbor_allgather, MG_DTK_NEIGHBOR_ALLGATHER, int, int, 0, I)
MG_CB_ALLGATHERV(MPI_Ineighbor_allgatherv, PMPI_Ineighbor_allgatherv, MG_DTK_NEIGHBOR_ALLGATHERV, int, int, 0, I)
MG_CB_ALL(MPI_Ineighbor_alltoall, PMPI_Ineighbor_alltoall, MG_DTK_NEIGHBOR_ALLTOALL, int, int, 0, I)
MG_CB_ALLTOALLV(MPI_Ineighbor_alltoallv, PMPI_Ineighbor_alltoallv, MG_DTK_NEIGHBOR_ALLTOALLV, int, int, 0, I)
MG_CB_ALLTOALLW(MPI_Ineighbor_alltoallw, PMPI_Ineighbor_alltoallw, MG_DTK_NEIGHBOR_ALLTOALLW, int, MPI_Aint, 0, I)

#ifdef MG_HAVE_MPI_LARGE_COUNT
MG_CB_BCAST(MPI_Ibcast_c, PMPI_Ibcast_c, MG_DTK_BCAST, MPI_Count, MPI_Aint, 1, I)
MG_CB_ROOTED(MPI_Igather_c, PMPI_Igather_c, MG_DTK_GATHER, MPI_Count, MPI_Aint, 1, I)
MG_CB_ROOTED(MPI_Iscatter_c, PMPI_Iscatter_c, MG_DTK_SCATTER, MPI_Count, MPI_Aint, 1, I)
MG_CB_ALL(MPI_Iallgather_c, PMPI_Iallgather_c, MG_DTK_ALLGATHER, MPI_Count, MPI_Aint, 1, I)
MG_CB_ALL(MPI_Ialltoall_c, PMPI_Ialltoall_c, MG_DTK_ALLTOALL, MPI_Count, MPI_Aint, 1, I)
MG_CB_GATHERV(MPI_Igatherv_c, PMPI_Igatherv_c, MG_DTK_GATHERV, MPI_Count, MPI_Aint, 1, I)
MG_CB_SCATTERV(MPI_Iscatterv_c, PMPI_Iscatterv_c, MG_DTK_SCATTERV, MPI_Count, MPI_Aint, 1, I)
MG_CB_ALLGATHERV(MPI_Iallgatherv_c, PMPI_Iallgatherv_c, MG_DTK_ALLGATHERV, MPI_Count, MPI_Aint, 1, I)
MG_CB_ALLTOALLV(MPI_Ialltoallv_c, PMPI_Ialltoallv_c, MG_DTK_ALLTOALLV, MPI_Count, MPI_Aint, 1, I)
MG_CB_ALLTOALLW(MPI_Ialltoallw_c, PMPI_Ialltoallw_c, MG_DTK_ALLTOALLW, MPI_Count, MPI_Aint, 1, I)
MG_CB_ALL(MPI_Ineighbor_allgather_c, PMPI_Ineighbor_allgather_c, MG_DTK_NEIGHBOR_ALLGATHER, MPI_Count, MPI_Aint, 1, I)
MG_CB_ALLGATHERV(MPI_Ineighbor_allgatherv_c, PMPI_Ineighbor_allgatherv_c, MG_DTK_NEIGHBOR_ALLGATHERV, MPI_Count,
                 MPI_Aint, 1, I)
MG_CB_ALL(MPI_Ineighbor_alltoall_c, PMPI_Ineighbor_alltoall_c, MG_DTK_NEIGHBOR_ALLTOALL, MPI_Count, MPI_Aint, 1, I)
MG_CB_ALLTOALLV(MPI_Ineighbor_alltoallv_c, PMPI_Ineighbor_alltoallv_c, MG_DTK_NEIGHBOR_ALLTOALLV, MPI_Count, MPI_Aint,
                1, I)
MG_CB_ALLTOALLW(MPI_Ineighbor_alltoallw_c, PMPI_Ineighbor_alltoallw_c, MG_DTK_NEIGHBOR_ALLTOALLW, MPI_Count, MPI_Aint,
                1, I)
#endif
