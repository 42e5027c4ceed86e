/* The blocking collectives of cbuild.c: the v and w forms and the
 * neighbourhood collectives, each with its `_c` form where the stack has it
 * (the regular ones wrap the mock-ups: collectives.c). */
#define _POSIX_C_SOURCE 200809L
#include "cbuild_entry.h"

MG_CB_GATHERV(MPI_Gatherv, PMPI_Gatherv, MG_DTK_GATHERV, int, int, 0, B)
MG_CB_SCATTERV(MPI_Scatterv, PMPI_Scatterv, MG_DTK_SCATTERV, int, int, 0, B)
MG_CB_ALLGATHERV(MPI_Allgatherv, PMPI_Allgatherv, MG_DTK_ALLGATHERV, int, int, 0, B)
MG_CB_ALLTOALLV(MPI_Alltoallv, PMPI_Alltoallv, MG_DTK_ALLTOALLV, int, int, 0, B)
MG_CB_ALLTOALLW(MPI_Alltoallw, PMPI_Alltoallw, MG_DTK_ALLTOALLW, int, int, 0, B)
MG_CB_ALL(MPI_Neighbor_allgather, PMPI_Neighbor_allgather, MG_DTK_NEIGHBOR_ALLGATHER, int, int, 0, B)
MG_CB_ALLGATHERV(MPI_Neighbor_allgatherv, PMPI_Neighbor_allgatherv, MG_DTK_NEIGHBOR_ALLGATHERV, int, int, 0, B)
MG_CB_ALL(MPI_Neighbor_alltoall, PMPI_Neighbor_alltoall, MG_DTK_NEIGHBOR_ALLTOALL, int, int, 0, B)
MG_CB_ALLTOALLV(MPI_Neighbor_alltoallv, PMPI_Neighbor_alltoallv, MG_DTK_NEIGHBOR_ALLTOALLV, int, int, 0, B)
MG_CB_ALLTOALLW(MPI_Neighbor_alltoallw, PMPI_Neighbor_alltoallw, MG_DTK_NEIGHBOR_ALLTOALLW, int, MPI_Aint, 0, B)

#ifdef MG_HAVE_MPI_LARGE_COUNT
MG_CB_GATHERV(MPI_Gatherv_c, PMPI_Gatherv_c, MG_DTK_GATHERV, MPI_Count, MPI_Aint, 1, B)
MG_CB_SCATTERV(MPI_Scatterv_c, PMPI_Scatterv_c, MG_DTK_SCATTERV, MPI_Count, MPI_Aint, 1, B)
MG_CB_ALLGATHERV(MPI_Allgatherv_c, PMPI_Allgatherv_c, MG_DTK_ALLGATHERV, MPI_Count, MPI_Aint, 1, B)
MG_CB_ALLTOALLV(MPI_Alltoallv_c, PMPI_Alltoallv_c, MG_DTK_ALLTOALLV, MPI_Count, MPI_Aint, 1, B)
MG_CB_ALLTOALLW(MPI_Alltoallw_c, PMPI_Alltoallw_c, MG_DTK_ALLTOALLW, MPI_Count, MPI_Aint, 1, B)
MG_CB_ALL(MPI_Neighbor_allgather_c, PMPI_Neighbor_allgather_c, MG_DTK_NEIGHBOR_ALLGATHER, MPI_Count, MPI_Aint, 1, B)
MG_CB_ALLGATHERV(MPI_Neighbor_allgatherv_c, PMPI_Neighbor_allgatherv_c, MG_DTK_NEIGHBOR_ALLGATHERV, MPI_Count,
                 MPI_Aint, 1, B)
MG_CB_ALL(MPI_Neighbor_alltoall_c, PMPI_Neighbor_alltoall_c, MG_DTK_NEIGHBOR_ALLTOALL, MPI_Count, MPI_Aint, 1, B)
MG_CB_ALLTOALLV(MPI_Neighbor_alltoallv_c, PMPI_Neighbor_alltoallv_c, MG_DTK_NEIGHBOR_ALLTOALLV, MPI_Count, MPI_Aint,
                1, B)
MG_CB_ALLTOALLW(MPI_Neighbor_alltoallw_c, PMPI_Neighbor_alltoallw_c, MG_DTK_NEIGHBOR_ALLTOALLW, MPI_Count, MPI_Aint,
                1, B)
#endif
