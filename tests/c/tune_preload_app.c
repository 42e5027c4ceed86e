/* A plain MPI program, not linked with libmpiguide-tune: the LD_PRELOAD test
 * (tune_preload.cmake) runs it with the library preloaded and a forced
 * mock-up per collective, and the program checks its own results (exit 1 on
 * a wrong result). Allreduce (sum of ints), Bcast and Allgather at a few
 * sizes, on MPI_COMM_WORLD; `--repeat N` makes the whole N times (online mode:
 * enough calls of each size for the library to explore and settle). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, bad = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int repeat = argc == 3 && strcmp(argv[1], "--repeat") == 0 ? atoi(argv[2]) : 1;
    if (repeat < 1 || (argc != 1 && argc != 3)) {
        if (rank == 0) fprintf(stderr, "usage: tune_preload_app [--repeat N]  (N >= 1)\n");
        MPI_Finalize();
        return 2;
    }
    static const int counts[] = {1, 2, 7, 100, 1000};
    for (int it = 0; it < 5 * repeat; it++) {
        int n = counts[it % 5];
        int *a = malloc(sizeof(int) * (size_t)n * (size_t)size), *b = malloc(sizeof(int) * (size_t)n * (size_t)size);
        for (int i = 0; i < n; i++) a[i] = rank * 100000 + i;
        /* Allreduce: sum over ranks of rank * 100000 + i */
        if (MPI_Allreduce(a, b, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD) != MPI_SUCCESS) bad++;
        for (int i = 0; i < n; i++)
            if (b[i] != 100000 * (size * (size - 1) / 2) + size * i) bad++;
        /* Bcast from the last rank */
        for (int i = 0; i < n; i++) b[i] = rank == size - 1 ? 7 * i + 3 : -1;
        if (MPI_Bcast(b, n, MPI_INT, size - 1, MPI_COMM_WORLD) != MPI_SUCCESS) bad++;
        for (int i = 0; i < n; i++)
            if (b[i] != 7 * i + 3) bad++;
        /* Allgather */
        if (MPI_Allgather(a, n, MPI_INT, b, n, MPI_INT, MPI_COMM_WORLD) != MPI_SUCCESS) bad++;
        for (int q = 0; q < size; q++)
            for (int i = 0; i < n; i++)
                if (b[q * n + i] != q * 100000 + i) bad++;
        free(a);
        free(b);
    }
    int all = 0;
    MPI_Allreduce(&bad, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) printf("tune_preload_app: %s (%d wrong values over all ranks)\n", all ? "FAILED" : "ok", all);
    MPI_Finalize();
    return all ? 1 : 0;
}
