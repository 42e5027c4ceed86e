/* A plain MPI program, not linked with libmpiguide-tune, that happens to define
 * functions and data named like the library's internals (today's names and
 * older ones), and exports them as a program that loads plugins does
 * (ENABLE_EXPORTS, -rdynamic). tune_preload.cmake runs it with the library
 * preloaded and mock-ups forced: if the library exported its internals, the
 * dynamic linker would bind the library's own calls to these impostors. The
 * program checks its collective results and that no impostor ran (exit 1). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

/* ---- the impostors: what they return would break any caller ---- */

static int impostor_calls;

#define IMPOSTOR(name)    \
    int name(void);       \
    int name(void)        \
    {                     \
        impostor_calls++; \
        return 0;         \
    }

IMPOSTOR(mg_lease_acquire)
IMPOSTOR(mg_lease_msg)
IMPOSTOR(mg_lease_ints)
IMPOSTOR(mg_lease_release)
IMPOSTOR(mg_fits_int)
IMPOSTOR(mg_type_bytes)
IMPOSTOR(mg_type_contiguous)
IMPOSTOR(mg_call_pack)
IMPOSTOR(mg_call_unpack)
IMPOSTOR(mg_copy_typed)
IMPOSTOR(mg_round_robin_counts)
IMPOSTOR(mg_reduction_supported)
IMPOSTOR(mg_tune__warn)
IMPOSTOR(mg_tune__warn_local)
IMPOSTOR(mg_tune__warnings_start)
IMPOSTOR(mg_tune__start)
IMPOSTOR(mg_tune__stop)
IMPOSTOR(mg_tune__ensure_configured)
IMPOSTOR(mg_tune__config_read)
IMPOSTOR(mg_tune__parse_force)
IMPOSTOR(mg_tune__coll_index)
IMPOSTOR(mg_tune__impl_index)
IMPOSTOR(mg_tune__impl_label)
IMPOSTOR(mg_tune__table)
IMPOSTOR(mg_tune__lookup)
IMPOSTOR(mg_tune__profile_impl)
IMPOSTOR(mg_tune__count)
IMPOSTOR(mg_tune__pools_alloc)
IMPOSTOR(mg_tune__report_write)
IMPOSTOR(mg_tune__report)
/* names of earlier versions of the library */
IMPOSTOR(mg_tune_chunk)
IMPOSTOR(mg_tune__parse_size)
IMPOSTOR(mg_tune__lock)
IMPOSTOR(mg_tune__unlock)
IMPOSTOR(mg_tune__publish)
IMPOSTOR(mg_tune__set_counting)

/* Data with the names of the library's tables and state: a library that
 * reached them would take these bytes for its own (text where it expects
 * pointers; zeros, large enough, where it keeps its state: the library would
 * seem off, not hang on a lock). */
char mg_allgather_mockups[64] = "not a table of mock-ups";
char mg_allreduce_mockups[64] = "not a table of mock-ups";
char mg_tune_hot[4096];
char mg_tune_g[4096];

/* ---- the collectives ---- */

static int check_allreduce(const int *a, int *b, int n, int size)
{
    int bad = MPI_Allreduce(a, b, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD) != MPI_SUCCESS;
    for (int i = 0; i < n; i++)
        if (b[i] != 100000 * (size * (size - 1) / 2) + size * i) bad++;
    return bad;
}

static int check_reduce(const int *a, int *b, int n, int rank, int size)
{
    int root = size - 1;
    for (int i = 0; i < n; i++) b[i] = -1;
    int bad = MPI_Reduce(a, b, n, MPI_INT, MPI_MAX, root, MPI_COMM_WORLD) != MPI_SUCCESS;
    for (int i = 0; rank == root && i < n; i++)
        if (b[i] != (size - 1) * 100000 + i) bad++;
    return bad;
}

static int check_bcast(int *b, int n, int rank, int size)
{
    for (int i = 0; i < n; i++) b[i] = rank == 0 ? 7 * i + 3 : -1;
    int bad = MPI_Bcast(b, n, MPI_INT, 0, MPI_COMM_WORLD) != MPI_SUCCESS;
    for (int i = 0; i < n; i++)
        if (b[i] != 7 * i + 3) bad++;
    (void)size;
    return bad;
}

static int check_allgather(const int *a, int *b, int n, int size)
{
    int bad = MPI_Allgather(a, n, MPI_INT, b, n, MPI_INT, MPI_COMM_WORLD) != MPI_SUCCESS;
    for (int q = 0; q < size; q++)
        for (int i = 0; i < n; i++)
            if (b[q * n + i] != q * 100000 + i) bad++;
    return bad;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, bad = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    static const int counts[] = {1, 2, 7, 100, 1000};
    for (int ci = 0; ci < 5; ci++) {
        int n = counts[ci];
        int *a = malloc(sizeof(int) * (size_t)n), *b = malloc(sizeof(int) * (size_t)n * (size_t)size);
        for (int i = 0; i < n; i++) a[i] = rank * 100000 + i;
        bad += check_allreduce(a, b, n, size);
        bad += check_reduce(a, b, n, rank, size);
        bad += check_bcast(b, n, rank, size);
        bad += check_allgather(a, b, n, size);
        free(a);
        free(b);
    }
    int mine[2] = {bad, impostor_calls}, all[2] = {0, 0};
    PMPI_Allreduce(mine, all, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("tune_preload_clash_app: %s (%d wrong values, %d calls of the application's impostors of the library's "
               "internals, over all ranks)\n",
               all[0] || all[1] ? "FAILED" : "ok", all[0], all[1]);
    MPI_Finalize();
    return all[0] || all[1] ? 1 : 0;
}
