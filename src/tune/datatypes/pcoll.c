/* The MPI-4 persistent collectives of cbuild.c (MPI_Bcast_init ...
 * MPI_Neighbor_alltoallw_init), each with its `_c` form where the stack has
 * it: their send blocks are packed at every MPI_Start or MPI_Startall (and at
 * the _init, where Intel MPI 2021 takes some of them), their receive blocks
 * unpacked by whichever call completes the operation (requests.c, pending.h). */
#define _POSIX_C_SOURCE 200809L
#include "cbuild_entry.h"

MG_CB_BCAST(MPI_Bcast_init, PMPI_Bcast_init, MG_DTK_BCAST, int, int, 0, P)
MG_CB_ROOTED(MPI_Gather_init, PMPI_Gather_init, MG_DTK_GATHER, int, int, 0, P)
MG_CB_ROOTED(MPI_Scatter_init, PMPI_Scatter_init, MG_DTK_SCATTER, int, int, 0, P)
MG_CB_ALL(MPI_Allgather_init, PMPI_Allgather_init, MG_DTK_ALLGATHER, int, int, 0, P)
MG_CB_ALL(MPI_Alltoall_init, PMPI_Alltoall_init, MG_DTK_ALLTOALL, int, int, 0, P)
MG_CB_GATHERV(MPI_Gatherv_init, PMPI_Gatherv_init, MG_DTK_GATHERV, int, int, 0, P)
MG_CB_SCATTERV(MPI_Scatterv_init, PMPI_Scatterv_init, MG_DTK_SCATTERV, int, int, 0, P)
MG_CB_ALLGATHERV(MPI_Allgatherv_init, PMPI_Allgatherv_init, MG_DTK_ALLGATHERV, int, int, 0, P)
MG_CB_ALLTOALLV(MPI_Alltoallv_init, PMPI_Alltoallv_init, MG_DTK_ALLTOALLV, int, int, 0, P)
MG_CB_ALLTOALLW(MPI_Alltoallw_init, PMPI_Alltoallw_init, MG_DTK_ALLTOALLW, int, int, 0, P)
MG_CB_ALL(MPI_Neighbor_allgather_init, PMPI_Neighbor_allgather_init, MG_DTK_NEIGHBOR_ALLGATHER, int, int, 0, P)
MG_CB_ALLGATHERV(MPI_Neighbor_allgatherv_init, PMPI_Neighbor_allgatherv_init, MG_DTK_NEIGHBOR_ALLGATHERV, int, int, 0,
                 P)
MG_CB_ALL(MPI_Neighbor_alltoall_init, PMPI_Neighbor_alltoall_init, MG_DTK_NEIGHBOR_ALLTOALL, int, int, 0, P)
MG_CB_ALLTOALLV(MPI_Neighbor_alltoallv_init, PMPI_Neighbor_alltoallv_init, MG_DTK_NEIGHBOR_ALLTOALLV, int, int, 0, P)
MG_CB_ALLTOALLW(MPI_Neighbor_alltoallw_init, PMPI_Neighbor_alltoallw_init, MG_DTK_NEIGHBOR_ALLTOALLW, int, MPI_Aint, 0,
                P)

#ifdef MG_HAVE_MPI_LARGE_COUNT
MG_CB_BCAST(MPI_Bcast_init_c, PMPI_Bcast_init_c, MG_DTK_BCAST, MPI_Count, MPI_Aint, 1, P)
MG_CB_ROOTED(MPI_Gather_init_c, PMPI_Gather_init_c, MG_DTK_GATHER, MPI_Count, MPI_Aint, 1, P)
MG_CB_ROOTED(MPI_Scatter_init_c, PMPI_Scatter_init_c, MG_DTK_SCATTER, MPI_Count, MPI_Aint, 1, P)
MG_CB_ALL(MPI_Allgather_init_c, PMPI_Allgather_init_c, MG_DTK_ALLGATHER, MPI_Count, MPI_Aint, 1, P)
MG_CB_ALL(MPI_Alltoall_init_c, PMPI_Alltoall_init_c, MG_DTK_ALLTOALL, MPI_Count, MPI_Aint, 1, P)
MG_CB_GATHERV(MPI_Gatherv_init_c, PMPI_Gatherv_init_c, MG_DTK_GATHERV, MPI_Count, MPI_Aint, 1, P)
MG_CB_SCATTERV(MPI_Scatterv_init_c, PMPI_Scatterv_init_c, MG_DTK_SCATTERV, MPI_Count, MPI_Aint, 1, P)
MG_CB_ALLGATHERV(MPI_Allgatherv_init_c, PMPI_Allgatherv_init_c, MG_DTK_ALLGATHERV, MPI_Count, MPI_Aint, 1, P)
MG_CB_ALLTOALLV(MPI_Alltoallv_init_c, PMPI_Alltoallv_init_c, MG_DTK_ALLTOALLV, MPI_Count, MPI_Aint, 1, P)
MG_CB_ALLTOALLW(MPI_Alltoallw_init_c, PMPI_Alltoallw_init_c, MG_DTK_ALLTOALLW, MPI_Count, MPI_Aint, 1, P)
MG_CB_ALL(MPI_Neighbor_allgather_init_c, PMPI_Neighbor_allgather_init_c, MG_DTK_NEIGHBOR_ALLGATHER, MPI_Count, MPI_Aint,
          1, P)
MG_CB_ALLGATHERV(MPI_Neighbor_allgatherv_init_c, PMPI_Neighbor_allgatherv_init_c, MG_DTK_NEIGHBOR_ALLGATHERV, MPI_Count,
                 MPI_Aint, 1, P)
MG_CB_ALL(MPI_Neighbor_alltoall_init_c, PMPI_Neighbor_alltoall_init_c, MG_DTK_NEIGHBOR_ALLTOALL, MPI_Count, MPI_Aint, 1,
          P)
MG_CB_ALLTOALLV(MPI_Neighbor_alltoallv_init_c, PMPI_Neighbor_alltoallv_init_c, MG_DTK_NEIGHBOR_ALLTOALLV, MPI_Count,
                MPI_Aint, 1, P)
MG_CB_ALLTOALLW(MPI_Neighbor_alltoallw_init_c, PMPI_Neighbor_alltoallw_init_c, MG_DTK_NEIGHBOR_ALLTOALLW, MPI_Count,
                MPI_Aint, 1, P)
#endif
