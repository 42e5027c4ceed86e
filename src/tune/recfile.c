/* The record file of record mode (record.h; layer recfile, tune_internal.h),
 * written at MPI_Finalize: every rank's part gathered to rank 0 of
 * MPI_COMM_WORLD on the library's shadow of it (every rank of the job is in
 * MPI_Finalize, so the gather is collective), which writes the file whole or
 * not at all (a temporary file renamed over it). docs/formats.md describes
 * the format. */
#define _POSIX_C_SOURCE 200809L
#include "comms.h"
#include "record.h"
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define COLUMNS "rank op comm_size bytes impl strategy calls seconds send_type recv_type datatype reduce_op"

/* The lines of parts (n texts back to back) that start with "#@" (headers = 1) or not. */
static void put_lines(FILE *out, const char *all, size_t len, int headers)
{
    for (const char *line = all, *end = all + len; line < end;) {
        const char *nl = memchr(line, '\n', (size_t)(end - line));
        size_t n = nl ? (size_t)(nl - line) + 1 : (size_t)(end - line);
        if (n > 1 && (strncmp(line, "#@", 2) == 0) == headers) fwrite(line, 1, n, out);
        line += n;
    }
}

static int write_file(const char *path, const char *all, size_t len, int nprocs)
{
    size_t plen = strlen(path);
    char *tmp = malloc(plen + 16);
    if (!tmp) return ENOMEM;
    snprintf(tmp, plen + 16, "%s.partial", path);
    FILE *out = fopen(tmp, "w");
    if (!out) {
        int e = errno;
        free(tmp);
        return e;
    }
    char version[MPI_MAX_LIBRARY_VERSION_STRING] = "";
    int vlen = 0;
    PMPI_Get_library_version(version, &vlen);
    for (char *c = version; *c; c++)
        if (*c == '\n' || *c == '\r') *c = ' ';
    fprintf(out, "#@mpiguide_record=1\n#@library_version=%s\n#@nprocs=%d\n#@mode=%s\n#@clock=%s\n", version, nprocs,
            mg_tune__mode_name(mg_tune__mode()), mg_tune__rec_clock_name());
    /* the level the program runs at: its calls may cost otherwise at another (mpiguide app tune measures at it) */
    int level = MPI_THREAD_SINGLE;
    PMPI_Query_thread(&level);
    fprintf(out, "#@thread_level=%s\n", level == MPI_THREAD_MULTIPLE     ? "multiple"
                                        : level == MPI_THREAD_SERIALIZED ? "serialized"
                                        : level == MPI_THREAD_FUNNELED   ? "funneled"
                                                                         : "single");
    put_lines(out, all, len, 1);
    fprintf(out, "%s\n", COLUMNS);
    put_lines(out, all, len, 0);
    fprintf(out, "#@end=ok\n");
    int e = ferror(out) ? EIO : 0;
    if (fclose(out) != 0 && !e) e = errno;
    if (!e && rename(tmp, path) != 0) e = errno;
    if (e) remove(tmp);
    free(tmp);
    return e;
}

void mg_tune__rec_write(void)
{
    char *path = mg_tune__record_path();
    if (!path) return;
    mg_tune__record_off(); /* the gather below is the library's, not the application's */
    int rank = 0, size = 1;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &size);
    size_t len = 0;
    char *text = mg_tune__rec_rank_text(rank, &len);
    char oom[64];
    if (!text || len > (size_t)(INT_MAX / size)) { /* so that the parts together fit an int */
        free(text);
        len = (size_t)snprintf(oom, sizeof oom, "#@lost_rank[%d]=its record was too large for memory\n", rank);
        text = strdup(oom);
        if (!text) len = 0;
    }
    MPI_Comm world;
    int n = (int)len, *counts = NULL, *displs = NULL;
    char *all = NULL;
    size_t total = 0;
    if (mg_tune__shadow_comm(MPI_COMM_WORLD, &world) != MPI_SUCCESS) {
        mg_tune__warn_local("record file %s: no communicator to gather the ranks' records on; none written", path);
        goto out;
    }
    /* every rank takes part as rank 0 can: the gathers must match */
    int room = rank != 0 || (counts = malloc(sizeof *counts * (size_t)size)) != NULL;
    PMPI_Bcast(&room, 1, MPI_INT, 0, world);
    if (room) PMPI_Gather(&n, 1, MPI_INT, counts, 1, MPI_INT, 0, world);
    if (room && rank == 0 && (displs = malloc(sizeof *displs * (size_t)size)) != NULL) {
        for (int r = 0; r < size; r++) {
            displs[r] = (int)total;
            total += (size_t)counts[r];
        }
        all = malloc(total ? total : 1);
    }
    room = room && (rank != 0 || all != NULL);
    PMPI_Bcast(&room, 1, MPI_INT, 0, world);
    if (room) PMPI_Gatherv(text ? text : "", n, MPI_CHAR, all, counts, displs, MPI_CHAR, 0, world);
    if (rank == 0) {
        int e = room ? write_file(path, all, total, size) : ENOMEM;
        if (e) mg_tune__warn_local("record file %s: cannot write it (%s); no record written", path, strerror(e));
    }
out:
    free(all);
    free(counts);
    free(displs);
    free(text);
    free(path);
}
