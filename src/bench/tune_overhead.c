#define _POSIX_C_SOURCE 200809L
/* mg_tuneoverhead: what libmpiguide-tune adds to a collective that stays
 * native. A benchmark, not a test: it prints numbers and never judges them.
 *
 * For cheap calls (MPI_Bcast and MPI_Allreduce of one int, on MPI_COMM_SELF
 * and, with more than one process, on MPI_COMM_WORLD) it times, side by side in
 * one run:
 *   pmpi         PMPI_Bcast / PMPI_Allreduce called directly (the native call)
 *   off          MPI_Bcast / MPI_Allreduce through the interceptor, mode off
 *   tuned-none   the same in mode tuned with no profile loaded
 *   tuned-miss   mode tuned with a profile of (collective, communicator size)
 *                whose ranges do not cover the call (the full look-up)
 *   off-report   mode off with a report requested (every call is counted)
 *   off-record   mode off in record mode (every call's key and time kept)
 *   forced-pack  mode forced with datatypes=pack (the datatype strategies look
 *                at every call; the point-to-point calls' types here stay
 *                native, while MPI_Bcast passes MPI_PACKED, as every rank of
 *                a packed collective does)
 *   online       mode online without profiles: on MPI_COMM_WORLD each call's
 *                key settles during the warm-up on the implementation its
 *                exploration found fastest (printed below the table: a
 *                mock-up's own time is then part of the side), and the rounds
 *                time the settled key; on MPI_COMM_SELF the call stays native
 * and MPI_Sendrecv of one int (to itself on MPI_COMM_SELF, around the ring on
 * MPI_COMM_WORLD) with MPI_INT and with a committed derived type of one int
 * (MPI_Type_contiguous: contiguous, so it stays native under every strategy).
 * All but off-report and off-record do not count calls (no report requested), as in an
 * application configured by the environment without MPIGUIDE_TUNE_REPORT.
 * The sides run in interleaved rounds (A, B, C, D, A, B, ...; the order rotates
 * each round) of --calls calls each; each side's time per call is the median
 * over --rounds rounds, and "added" the median over the rounds of the side's
 * time minus pmpi's in the same round. On MPI_COMM_WORLD a last line gives
 * online's time over tuned-miss's (the goal of online mode's settled calls).
 *
 * Linked with the static library (mg_tuneoverhead): MPI_Bcast is the
 * interceptor and PMPI_Bcast the MPI library's. mg_tuneoverhead_shared is the
 * same program linked with libmpiguide-tune.so, which resolves symbols exactly
 * as LD_PRELOAD does (the interceptor is a call through the PLT into the .so,
 * and its own PMPI_ call another PLT call into libmpi). No report is requested
 * but on the off-report side. */
#include "mpiguide/tune.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

enum { S_PMPI, S_OFF, S_TUNED_NONE, S_TUNED_MISS, S_OFF_COUNT, S_OFF_RECORD, S_FORCED_PACK, S_ONLINE, NSIDES };
static const char *const side_names[NSIDES] = {"pmpi",       "off",        "tuned-none",  "tuned-miss",
                                               "off-report", "off-record", "forced-pack", "online"};

enum { OP_BCAST, OP_ALLREDUCE, OP_SENDRECV, OP_SENDRECV_DT, NOPS };
static const char *const op_names[NOPS] = {"MPI_Bcast", "MPI_Allreduce", "MPI_Sendrecv", "MPI_Sendrecv/dt"};
static MPI_Datatype one_int; /* derived, contiguous */

static char profile_dir[64];

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The median over the rounds of side a's time minus side b's in the same round (t: rounds per side):
 * a slow spell of the machine that spans a round moves both, which the difference of medians does not
 * cancel. */
static double paired_difference(const double *t, int a, int b, long rounds, double *scratch)
{
    for (long r = 0; r < rounds; r++) scratch[r] = t[a * rounds + r] - t[b * rounds + r];
    return median(scratch, (int)rounds);
}

/* Puts the library into the state of a side; returns 0 on success. */
static int enter_side(int side)
{
    /* The control API alone would turn counting on (a linked program may write
     * the report at any time); an application configured by the environment
     * counts only with a report, so only the off-report side counts. */
    mg_tune_set_counting(side == S_OFF_COUNT ? MG_TUNE_COUNT_ALWAYS : MG_TUNE_COUNT_NEVER);
    mg_tune_set_recording(side == S_OFF_RECORD ? MG_TUNE_COUNT_ALWAYS : MG_TUNE_COUNT_NEVER);
    int rc = mg_tune_force("datatypes", side == S_FORCED_PACK ? "pack" : "default");
    if (rc) return rc;
    switch (side) {
    case S_OFF: return mg_tune_set_mode(MG_TUNE_OFF);
    case S_FORCED_PACK: return mg_tune_set_mode(MG_TUNE_FORCED);
    case S_TUNED_NONE:
    case S_TUNED_MISS:
    case S_ONLINE: {
        /* an empty directory: no profiles; the other one: ranges that miss 4 bytes */
        char dir[128];
        snprintf(dir, sizeof dir, "%s/%s", profile_dir, side == S_TUNED_MISS ? "miss" : "none");
        int rc = mg_tune_load_profiles(dir);
        return rc ? rc : mg_tune_set_mode(side == S_ONLINE ? MG_TUNE_ONLINE : MG_TUNE_TUNED);
    }
    default: return mg_tune_set_mode(MG_TUNE_OFF);
    }
}

/* ns per call of `calls` calls of op on comm, through the side's entry point. */
static double run_round(int side, int op, MPI_Comm comm, long calls)
{
    int v = 1, r = 0;
    double t0 = now_ns();
    if (op == OP_BCAST) {
        if (side == S_PMPI)
            for (long i = 0; i < calls; i++) PMPI_Bcast(&v, 1, MPI_INT, 0, comm);
        else
            for (long i = 0; i < calls; i++) MPI_Bcast(&v, 1, MPI_INT, 0, comm);
    } else if (op == OP_ALLREDUCE) {
        if (side == S_PMPI)
            for (long i = 0; i < calls; i++) PMPI_Allreduce(&v, &r, 1, MPI_INT, MPI_SUM, comm);
        else
            for (long i = 0; i < calls; i++) MPI_Allreduce(&v, &r, 1, MPI_INT, MPI_SUM, comm);
    } else {
        int me, n;
        MPI_Comm_rank(comm, &me);
        MPI_Comm_size(comm, &n);
        int to = (me + 1) % n, from = (me + n - 1) % n;
        MPI_Datatype t = op == OP_SENDRECV ? MPI_INT : one_int;
        if (side == S_PMPI)
            for (long i = 0; i < calls; i++) PMPI_Sendrecv(&v, 1, t, to, 0, &r, 1, t, from, 0, comm, MPI_STATUS_IGNORE);
        else
            for (long i = 0; i < calls; i++) MPI_Sendrecv(&v, 1, t, to, 0, &r, 1, t, from, 0, comm, MPI_STATUS_IGNORE);
    }
    return (now_ns() - t0) / (double)calls;
}

static void make_dir(const char *path)
{
    if (mkdir(path, 0700) != 0) {
        perror(path);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
}

/* profile_dir/none (empty) and profile_dir/miss (bcast and allreduce for sizes
 * 1 and world_size, ranges around, never on, the 4 bytes of the calls). */
static void write_profiles(int world_size)
{
    snprintf(profile_dir, sizeof profile_dir, "/tmp/mg_tuneoverhead_XXXXXX");
    if (!mkdtemp(profile_dir)) {
        perror("mg_tuneoverhead: mkdtemp");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    char path[256];
    snprintf(path, sizeof path, "%s/none", profile_dir);
    make_dir(path);
    snprintf(path, sizeof path, "%s/miss", profile_dir);
    make_dir(path);
    const char *colls[2] = {"bcast", "allreduce"};
    int sizes[2] = {1, world_size};
    for (int c = 0; c < 2; c++)
        for (int s = 0; s < (world_size > 1 ? 2 : 1); s++) {
            char file[320];
            snprintf(file, sizeof file, "%s/%s_%d.prof", path, colls[c], sizes[s]);
            FILE *f = fopen(file, "w");
            if (!f) {
                perror(file);
                MPI_Abort(MPI_COMM_WORLD, 2);
            }
            fprintf(f,
                    "# mpiguide tune profile 1\ncollective %s\nprocs %d\n1 3 default\n8 1024 default\n"
                    "2048 4096 default\n",
                    colls[c], sizes[s]);
            fclose(f);
        }
}

static void remove_profiles(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", profile_dir);
    if (system(cmd) != 0) fprintf(stderr, "mg_tuneoverhead: could not remove %s\n", profile_dir);
}

static void usage(FILE *out)
{
    fprintf(out, "usage: mg_tuneoverhead [--calls N] [--rounds R] [--comm self|world|both]\n"
                 "Time per call that libmpiguide-tune adds to MPI_Bcast, MPI_Allreduce and MPI_Sendrecv (MPI_INT\n"
                 "and a derived contiguous type) of one int that stay native: PMPI_ directly vs the interceptor in\n"
                 "mode off, in mode tuned without profiles (tuned-none), in mode tuned with a profile that does not\n"
                 "cover the call (tuned-miss), in mode off with a report requested (off-report: every call\n"
                 "counted), in mode off in record mode (off-record: every call's key and time kept) and in\n"
                 "mode forced with datatypes=pack (forced-pack) and in mode online (online: on world, the call's\n"
                 "key settled on the implementation its exploration chose).\n"
                 "  --calls N    calls per round and side (default 100000)\n"
                 "  --rounds R   interleaved rounds; each side's median over them is shown (default 21)\n"
                 "  --comm C     communicators: self, world or both (default both; world needs -n >= 2)\n"
                 "  --help       this text\n");
}

static long parse_long(const char *s, long lo, long hi)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (!*s || *end || v < lo || v > hi) return -1;
    return v;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long calls = 100000, rounds = 21;
    int use_self = 1, use_world = 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
        const char *bad = NULL;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            if (rank == 0) usage(stdout);
            MPI_Finalize();
            return 0;
        } else if (strcmp(a, "--calls") == 0 || strcmp(a, "--rounds") == 0) {
            long v = val ? parse_long(val, 1, a[2] == 'c' ? 1000000000L : 100001L) : -1;
            if (v < 0)
                bad = a[2] == 'c' ? "--calls needs a number of calls from 1 to 1000000000"
                                  : "--rounds needs a number from 1 to 100001";
            else
                *(a[2] == 'c' ? &calls : &rounds) = v, i++;
        } else if (strcmp(a, "--comm") == 0) {
            if (val && strcmp(val, "self") == 0)
                use_self = 1, use_world = 0, i++;
            else if (val && strcmp(val, "world") == 0)
                use_self = 0, use_world = 1, i++;
            else if (val && strcmp(val, "both") == 0)
                use_self = use_world = 1, i++;
            else
                bad = "--comm needs self, world or both";
        } else {
            bad = "unknown option";
        }
        if (bad) {
            if (rank == 0) {
                fprintf(stderr, "mg_tuneoverhead: %s: %s\n", a, bad);
                usage(stderr);
            }
            MPI_Finalize();
            return 2;
        }
    }
    if (size == 1 && use_world && !use_self) {
        if (rank == 0) fprintf(stderr, "mg_tuneoverhead: --comm world needs at least 2 processes\n");
        MPI_Finalize();
        return 2;
    }
    if (size == 1) use_world = 0;
    write_profiles(size);
    MPI_Type_contiguous(1, MPI_INT, &one_int);
    MPI_Type_commit(&one_int);

    double *t = malloc(sizeof(double) * (size_t)rounds * NSIDES), *scratch = malloc(sizeof(double) * (size_t)rounds);
    if (!t || !scratch) MPI_Abort(MPI_COMM_WORLD, 2);
    if (rank == 0) {
        printf("# mg_tuneoverhead: %d process(es), %ld calls x %ld interleaved rounds per side; medians over "
               "rounds\n",
               size, calls, rounds);
        printf("%-14s %-6s %-11s %10s %10s %7s\n", "call", "comm", "side", "ns/call", "added_ns", "ratio");
    }
    MPI_Comm comms[2] = {MPI_COMM_SELF, MPI_COMM_WORLD};
    const char *comm_names[2] = {"self", "world"};
    for (int ci = 0; ci < 2; ci++) {
        if ((ci == 0 && !use_self) || (ci == 1 && !use_world)) continue;
        for (int op = 0; op < NOPS; op++) {
            /* warm-up of every side */
            for (int s = 0; s < NSIDES; s++) {
                if (enter_side(s) != MG_TUNE_SUCCESS && rank == 0)
                    fprintf(stderr, "mg_tuneoverhead: cannot set up side %s\n", side_names[s]);
                run_round(s, op, comms[ci], calls / 10 + 1);
            }
            for (long r = 0; r < rounds; r++)
                for (int k = 0; k < NSIDES; k++) {
                    int s = (int)((k + r) % NSIDES);
                    enter_side(s);
                    if (ci == 1) PMPI_Barrier(MPI_COMM_WORLD);
                    t[s * rounds + r] = run_round(s, op, comms[ci], calls);
                }
            double med[NSIDES];
            for (int s = 0; s < NSIDES; s++) { /* (the rounds stay in order: they are paired below) */
                memcpy(scratch, &t[s * rounds], sizeof(double) * (size_t)rounds);
                med[s] = median(scratch, (int)rounds);
            }
            if (rank == 0)
                for (int s = 0; s < NSIDES; s++) {
                    if (s == S_PMPI)
                        printf("%-14s %-6s %-11s %10.2f %10s %7s\n", op_names[op], comm_names[ci], side_names[s],
                               med[s], "-", "-");
                    else
                        printf("%-14s %-6s %-11s %10.2f %10.2f %7.3f\n", op_names[op], comm_names[ci], side_names[s],
                               med[s], paired_difference(t, s, S_PMPI, rounds, scratch), med[s] / med[S_PMPI]);
                }
            if (rank == 0 && ci == 1)
                printf("# online over tuned-miss on world: %.2f ns per call (median of the rounds' differences)\n",
                       paired_difference(t, S_ONLINE, S_TUNED_MISS, rounds, scratch));
            if (rank == 0 && ci == 1 && op <= OP_ALLREDUCE) {
                const char *coll = op == OP_BCAST ? "bcast" : "allreduce", *chose;
                enter_side(S_ONLINE);
                run_round(S_ONLINE, op, comms[ci], 1);
                chose = mg_tune_last_impl(coll);
                printf("# online on world settled %s on %s\n", op_names[op], chose ? chose : "?");
            } else if (ci == 1 && op <= OP_ALLREDUCE) {
                enter_side(S_ONLINE);
                run_round(S_ONLINE, op, comms[ci], 1);
            }
            fflush(stdout);
        }
    }
    mg_tune_set_mode(MG_TUNE_OFF);
    mg_tune_set_counting(MG_TUNE_COUNT_NEVER); /* no report at MPI_Finalize from the off-report side */
    MPI_Type_free(&one_int);
    free(t);
    free(scratch);
    PMPI_Barrier(MPI_COMM_WORLD);
    remove_profiles();
    MPI_Finalize();
    return 0;
}
