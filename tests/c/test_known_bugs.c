/* test_known_bugs: every reproducer of tests/c/known_bugs.c on the MPI
 * library running. A bug listed for this library must show ("known <family>
 * bug <name>: ..."); where it does not, the library got it right and the
 * entry must go or name fewer versions (fail). A bug not listed for this
 * library must not show; where it does, this version must be added (fail).
 * With one process the local reproducers run, with more the collective ones
 * (at least `procs` processes), so each runs in one ctest. One that hangs
 * where the bug is runs alone (known_bug_hang.cmake stops it):
 *   test_known_bugs --hangs        the names of those, one a line
 *   test_known_bugs --hang NAME    "listed=0|1" and the bug, then its
 *                                  reproducer, then "returned" */
#include "known_bugs.h"

#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, failures = 0, ran = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int n = 0;
    MPI_Get_library_version(version, &n);
    char *nl = strchr(version, '\n');
    if (nl) *nl = '\0';
    if (argc > 1 && !strcmp(argv[1], "--hangs")) {
        for (int i = 0; rank == 0 && i < mg_nknown_bugs; i++)
            if (mg_known_bugs[i].hangs) printf("%s\n", mg_known_bugs[i].name);
        MPI_Finalize();
        return 0;
    }
    if (argc > 2 && !strcmp(argv[1], "--hang")) {
        const mg_known_bug *b = mg_known_bug_named(argv[2]);
        if (!b || size < b->procs) {
            if (rank == 0) fprintf(stderr, "test_known_bugs: no hanging bug %s for %d processes\n", argv[2], size);
            MPI_Finalize();
            return 2;
        }
        if (rank == 0) {
            printf("listed=%d\nknown %s bug %s: %s\n", mg_known_bug_listed(b->name), b->family, b->name, b->what);
            fflush(stdout);
        }
        char detail[1024];
        b->reproduce(MPI_COMM_WORLD, detail, sizeof detail);
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0) printf("returned: %s\n", detail);
        MPI_Finalize();
        return 0;
    }
    for (int i = 0; i < mg_nknown_bugs; i++) {
        const mg_known_bug *b = &mg_known_bugs[i];
        if (b->hangs) continue;
        if (argc > 1 && strcmp(argv[1], b->name)) continue;
        if (argc == 1 && (size == 1) != (b->procs == 1)) continue;
        char detail[1024];
        int shows = mg_known_bug_reproduce(b, MPI_COMM_WORLD, detail, sizeof detail);
        if (shows < 0) continue;
        ran++;
        int listed = mg_known_bug_listed(b->name);
        if (rank != 0) continue;
        if (listed && shows) {
            printf("known %s bug %s: %s; reproduced: %s\n", b->family, b->name, b->what, detail);
        } else if (listed) {
            printf("FAIL %s: listed for this library (%s) but it gives MPI's result now: remove the entry or narrow "
                   "its versions (%s) in tests/c/known_bugs.c\n",
                   b->name, version, b->library);
            failures++;
        } else if (shows) {
            printf("FAIL %s (%s bug, listed for %s): this library (%s) shows it too: %s; add this version in "
                   "tests/c/known_bugs.c\n",
                   b->name, b->family, b->library, version, detail);
            failures++;
        } else {
            printf("ok: %s (%s bug) is not in this library\n", b->name, b->family);
        }
    }
    if (rank == 0) printf("test_known_bugs: %d reproducer(s) on %d process(es), %d failure(s)\n", ran, size, failures);
    MPI_Finalize();
    return failures != 0;
}
