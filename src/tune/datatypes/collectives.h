/* datatypes/collectives.c: the datatype strategies of the collectives (layer
 * dtcoll, tune_internal.h). Bcast, Gather, Scatter, Allgather and Alltoall wrap
 * the collective layer of intercept.c (`inner`: its mock-ups or the native
 * call), which then sees normal(t) or MPI_PACKED; the v forms and
 * MPI_Neighbor_alltoallw are entry points of collectives.c itself. Callers
 * have seen mg_tune__dt_active(). */
#ifndef MG_TUNE_DT_COLLECTIVES_H
#define MG_TUNE_DT_COLLECTIVES_H

#include <mpi.h>

typedef int (*mg_bcast_fn)(void *buf, MPI_Count count, MPI_Datatype type, int root, MPI_Comm comm);
typedef int (*mg_rooted_fn)(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                            MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm);
typedef int (*mg_allgather_fn)(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                               MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm);

int mg_tune__dt_bcast(void *buf, MPI_Count count, MPI_Datatype type, int root, MPI_Comm comm, mg_bcast_fn inner);
int mg_tune__dt_gather(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                       MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, mg_rooted_fn inner);
int mg_tune__dt_scatter(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                        MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, mg_rooted_fn inner);
int mg_tune__dt_allgather(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                          MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, mg_allgather_fn inner);
int mg_tune__dt_alltoall(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                         MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, mg_allgather_fn inner);

#endif
