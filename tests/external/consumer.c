/* A program outside mpiguide that uses its installed libraries (the install
 * tests build it with CMake and with pkg-config, then run it under mpiexec -n 2):
 * the engine packs a strided type exactly as MPI_Pack does, and the tuning
 * library, forced to the Allgather mock-up of COLL-GL1, gives the native
 * result. Prints "consumer: ok" on rank 0 and exits 0 only if all holds. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "mpiguide/dt.h"
#include "mpiguide/tune.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, bad = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    /* the engine: 5 blocks of 2 ints, 3 ints apart, against MPI_Pack */
    int data[15], mine[10], theirs[10], pos = 0;
    for (int i = 0; i < 15; i++) data[i] = 100 * rank + i;
    MPI_Datatype vec;
    MPI_Type_vector(5, 2, 3, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    mg_dt *t = NULL;
    MPI_Count got = 0;
    if (mg_dt_from_mpi(vec, &t) != MG_DT_SUCCESS || mg_dt_pack(t, data, 1, 0, mine, sizeof mine, &got) != MG_DT_SUCCESS ||
        got != (MPI_Count)sizeof mine)
        bad = 1;
    MPI_Pack(data, 1, vec, theirs, sizeof theirs, &pos, MPI_COMM_SELF);
    if (memcmp(mine, theirs, sizeof mine) != 0) bad = 1;
    mg_dt_free(t);
    MPI_Type_free(&vec);

    /* the tuning library: a forced mock-up returns what the native call does */
    int native[64], mocked[64], v = rank * 7 + 1;
    if (size > 64) size = 64;
    MPI_Allgather(&v, 1, MPI_INT, native, 1, MPI_INT, MPI_COMM_WORLD);
    if (mg_tune_set_mode(MG_TUNE_FORCED) != MG_TUNE_SUCCESS ||
        mg_tune_force("allgather", "allgather_as_gather_bcast") != MG_TUNE_SUCCESS)
        bad = 1;
    MPI_Allgather(&v, 1, MPI_INT, mocked, 1, MPI_INT, MPI_COMM_WORLD);
    const char *ran = mg_tune_last_impl("allgather");
    if (!ran || strcmp(ran, "allgather_as_gather_bcast") != 0 || memcmp(native, mocked, sizeof(int) * size) != 0)
        bad = 1;

    int any = 0;
    MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0) printf(any ? "consumer: FAILED\n" : "consumer: ok\n");
    MPI_Finalize();
    return any;
}
