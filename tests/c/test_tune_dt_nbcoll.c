/* libmpiguide-tune's datatype strategies in every collective that cbuild.c
 * builds, blocking, nonblocking (MPI_I...) and persistent (..._init with
 * MPI_Start / MPI_Startall), with their `_c` forms where the stack has them:
 * MPI_Bcast ... MPI_Alltoallw and the five neighbourhood collectives, forced
 * to normalized and to pack and in tuned mode, leave every rank's buffers
 * (guard bytes and gaps included), return classes, and the indices and flags
 * of the completion calls exactly as the native calls do, and call the
 * error handler as often. Cases: the same
 * type on every rank or one of each rank's own (ints only: a vector, an
 * indexed type, a resized type with lb < 0, MPI_INT; a w form mixes them per
 * block), 0, 12 and 24 ints per block, blocks of different sizes (empty ones
 * too) laid out backwards with gaps, MPI_IN_PLACE where MPI allows it, the root
 * first and last, periodic and open Cartesian rings (MPI_PROC_NULL
 * neighbours), w forms at MPI_BOTTOM with absolute addresses, and a root out
 * of range (an error class). Nonblocking and persistent requests are completed
 * by every completion call in turn (MPI_Wait ... MPI_Testsome,
 * MPI_Request_get_status and the MPI-4.1 array inspections, whose buffers are
 * compared before the request is freed); persistent ones run three times with
 * new send data each time and are freed afterwards. Run with 2 to 4
 * processes.
 *
 * test_tune_dt_nbcoll [freed]: `freed` frees active requests under pack
 * (erroneous in MPI-4.1 for collectives; the library keeps them and completes
 * them) and checks after MPI_Finalize that their data arrived. */
#define _POSIX_C_SOURCE 200809L
#include "known_bugs.h"
#include "mpiguide/tune.h"
#include "nbcoll_cases.h"
#include <stdlib.h>
#include <string.h>

static const char *const strategies[] = {"native", "normalized", "pack", "tuned"};
/* The error handler of MPI_COMM_WORLD, MPI_COMM_SELF and the rings: it counts its calls (the library must
 * raise no error the native call does not). */
static int handler_calls;
static void count_errors(MPI_Comm *comm, int *code, ...)
{
    (void)comm, (void)code;
    handler_calls++;
}
enum { NSTRAT = 4, PACK = 2, TUNED = 3 };
static const char *const form_names[] = {"", " (nonblocking)", " (persistent)"};

/* Completes *req by completion function `how` (all of them in turn); its
 * return class goes to the output, with what the call says of the request. */
static void complete(MPI_Request *req, int how, out *o)
{
    MPI_Request rs[2] = {MPI_REQUEST_NULL, *req};
    MPI_Status st[2];
    int flag = 0, index = -1, n = 0, ids[2] = {-1, -1}, rc = MPI_SUCCESS;
    switch (how % NHOW) {
    case 0: rc = MPI_Wait(req, &st[0]); break;
    case 1:
        while (!flag && rc == MPI_SUCCESS) rc = MPI_Test(req, &flag, MPI_STATUS_IGNORE);
        break;
    case 2: rc = MPI_Waitall(2, rs, st); break;
    case 3:
        while (!flag && rc == MPI_SUCCESS) rc = MPI_Testall(2, rs, &flag, MPI_STATUSES_IGNORE);
        break;
    case 4: rc = MPI_Waitany(2, rs, &index, MPI_STATUS_IGNORE); break;
    case 5:
        while (!flag && rc == MPI_SUCCESS) rc = MPI_Testany(2, rs, &index, &flag, &st[0]);
        break;
    case 6: rc = MPI_Waitsome(2, rs, &n, ids, MPI_STATUSES_IGNORE); break;
    case 7:
        while (n == 0 && rc == MPI_SUCCESS) rc = MPI_Testsome(2, rs, &n, ids, st);
        break;
    case 8: /* an inspection completes nothing: the data is there when it says so, the request stays */
        while (!flag && rc == MPI_SUCCESS) rc = MPI_Request_get_status(*req, &flag, MPI_STATUS_IGNORE);
        break;
    default:
#ifdef MG_HAVE_MPI_REQUEST_GET_STATUS_ALL
        switch ((how / NHOW) % 3) {
        case 0:
            while (!flag && rc == MPI_SUCCESS) rc = MPI_Request_get_status_all(2, rs, &flag, MPI_STATUSES_IGNORE);
            break;
        case 1:
            while (!flag && rc == MPI_SUCCESS) rc = MPI_Request_get_status_any(2, rs, &index, &flag, &st[0]);
            break;
        default:
            while (n == 0 && rc == MPI_SUCCESS) rc = MPI_Request_get_status_some(2, rs, &n, ids, st);
        }
#else
        rc = MPI_Wait(req, MPI_STATUS_IGNORE);
#endif
        break;
    }
    if (how % NHOW >= 2 && how % NHOW <= 7) *req = rs[1];
    int cls = MPI_SUCCESS;
    MPI_Error_class(rc, &cls);
    int said[4] = {cls, flag, index, n > 0 ? ids[0] : -1};
    out_add(o, said, sizeof said);
}

/* Runs case c under strategy s; the output: every buffer after every round,
 * and every return class. */
static int verbose; /* MG_NBCOLL_CASE: each run named on stderr */

static out run(const kase *c, int s, int seq)
{
    if (verbose && rank == 0) fprintf(stderr, "  %s\n", strategies[s]);
    if (s == TUNED) {
        EXPECT(mg_tune_set_mode(MG_TUNE_TUNED) == MG_TUNE_SUCCESS);
    } else {
        EXPECT(mg_tune_set_mode(MG_TUNE_FORCED) == MG_TUNE_SUCCESS);
        EXPECT(mg_tune_force("datatypes", strategies[s]) == MG_TUNE_SUCCESS);
    }
    out o = {0};
    setup u;
    setup_make(c, &u);
    MPI_Request req = MPI_REQUEST_NULL;
    int rounds = c->form == FORM_P ? 3 : 1;
    for (int round = 0; round < rounds; round++) {
        setup_fill(c, &u, round);
        int rc = MPI_SUCCESS, cls;
        if (c->form != FORM_P || round == 0) rc = issue(c, &u, &req);
        MPI_Error_class(rc, &cls);
        out_add(&o, &cls, sizeof cls);
        if (rc != MPI_SUCCESS) rounds = 0; /* an erroneous call: no request */
        if (rc == MPI_SUCCESS && c->form == FORM_P) {
            rc = round % 2 ? MPI_Startall(1, &req) : MPI_Start(&req);
            MPI_Error_class(rc, &cls);
            out_add(&o, &cls, sizeof cls);
        }
        if (rc == MPI_SUCCESS && c->form != FORM_B) complete(&req, seq + round, &o);
        setup_capture(&u, &o);
        /* after an inspection: the request completes now (a persistent one: it is inactive) */
        if (req != MPI_REQUEST_NULL && rc == MPI_SUCCESS) EXPECT(MPI_Wait(&req, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    }
    if (req != MPI_REQUEST_NULL) EXPECT(MPI_Request_free(&req) == MPI_SUCCESS);
    setup_free(&u);
    out_add(&o, &handler_calls, sizeof handler_calls);
    handler_calls = 0;
    return o;
}

/* Known bugs of the running library (known_bugs.c) where the native call is not the reference:
 * impi-allgather-init-release frees the application's datatype after a second start of MPI_Allgather_init,
 * so its native run would break the test's types, and under impi-scatter-init-restart the second start
 * of a native MPI_Scatter_init never completes on 3 or more processes (neither is run); under
 * impi-alltoallw-in-place the native MPI_Ialltoallw and MPI_Alltoallw_init with MPI_IN_PLACE are wrong and pack gives MPI's result (not compared).
 * s < 0: whether the case runs at all. */
static int native_bug(const kase *c, int s)
{
    const char *name = NULL;
    if (s < 0 && c->form == FORM_P && c->kind == K_ALLGATHER && c->ts != TS_INT)
        name = "impi-allgather-init-release";
    else if (s < 0 && c->form == FORM_P && c->kind == K_SCATTER && size >= 3)
        name = "impi-scatter-init-restart";
    else if (s == PACK && c->form != FORM_B && c->kind == K_ALLTOALLW && c->in_place)
        name = "impi-alltoallw-in-place";
    if (!name || !mg_known_bug_listed(name)) return 0;
    char what[256];
    kase_text(c, what, sizeof what);
    if (rank == 0) mg_known_bug_note(name, what);
    return 1;
}

static void check(const kase *c, int seq)
{
    out ref = run(c, 0, seq);
    for (int s = 1; s < NSTRAT; s++) {
        if (native_bug(c, s)) continue;
        out got = run(c, s, seq);
        if (got.len != ref.len || memcmp(got.data, ref.data, ref.len)) {
            char what[256];
            kase_text(c, what, sizeof what);
            size_t at = 0;
            while (at < got.len && at < ref.len && got.data[at] == ref.data[at]) at++;
            fprintf(stderr, "rank %d: %s%s: %s differs from native (%zu bytes, native %zu, from byte %zu)\n", rank,
                    what, form_names[c->form], strategies[s], got.len, ref.len, at);
            if (at < got.len && at < ref.len) fprintf(stderr, "  got %02x, native %02x\n", got.data[at], ref.data[at]);
            failures++;
        }
        free(got.data);
    }
    free(ref.data);
}

/* Datatype profiles for tuned mode: every strategy somewhere, for some forms. */
static void write_profiles(char *dir, size_t len)
{
    static const char *const profiles[][2] = {{"ibcast", "* 1 100 pack\nvector 0 1000000 normalized\n"},
                                              {"bcast_init", "* 1 1000000 pack\n"},
                                              {"iallgather", "* 1 1000000 pack\n"},
                                              {"alltoall_init", "resized/vector 0 1000000 normalized\n"},
                                              {"ialltoallw", "* 0 1000000 normalized\n"},
                                              {"alltoallw", "vector 0 1000000 normalized\n"},
                                              {"neighbor_alltoallv", "* 0 1000000 normalized\n"},
                                              {"ineighbor_allgather", "* 0 1000000 normalized\n"},
                                              {"igatherv", "* 0 1000000 normalized\n"},
                                              {"scatter_init", "* 1 1000000 pack\n"}};
    snprintf(dir, len, "/tmp/mg_nbcoll_profiles_XXXXXX");
    EXPECT(mkdtemp(dir) != NULL);
    for (size_t i = 0; i < sizeof profiles / sizeof profiles[0]; i++) {
        char path[128];
        snprintf(path, sizeof path, "%s/%s.prof", dir, profiles[i][0]);
        FILE *f = fopen(path, "w");
        EXPECT(f != NULL);
        if (!f) continue;
        fprintf(f, "# mpiguide tune profile 1\ndatatypes %s\nprocs any\n%s", profiles[i][0], profiles[i][1]);
        fclose(f);
    }
    EXPECT(mg_tune_load_profiles(dir) == MG_TUNE_SUCCESS);
}

/* The report counts the new operations under their own names (made before
 * any case, so that only these calls are counted). */
static void report(void)
{
    EXPECT(mg_tune_set_mode(MG_TUNE_FORCED) == MG_TUNE_SUCCESS);
    EXPECT(mg_tune_force("datatypes", "pack") == MG_TUNE_SUCCESS);
    MPI_Datatype three;
    MPI_Type_vector(3, 3, 4, MPI_INT, &three);
    MPI_Type_commit(&three);
    int buf[12] = {0}, all[48] = {0};
    MPI_Request req;
    MPI_Ibcast(buf, 1, three, 0, MPI_COMM_WORLD, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    MPI_Bcast_init(buf, 1, three, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &req);
    for (int i = 0; i < 2; i++) {
        MPI_Start(&req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
    }
    MPI_Request_free(&req);
    int counts[4] = {1, 1, 1, 1}, displs[4] = {0, 48, 96, 144}, got[48];
    MPI_Datatype three4[4] = {three, three, three, three};
    /* every rank receives 9 ints from each: 36 x size bytes */
    MPI_Alltoallw(all, counts, displs, three4, got, counts, displs, three4, MPI_COMM_WORLD);
    MPI_Type_free(&three);
    FILE *f = tmpfile();
    EXPECT(f && mg_tune_write_report(f) == MG_TUNE_SUCCESS);
    if (!f) return;
    rewind(f);
    char line[256], text[4096] = "", want[512];
    while (fgets(line, sizeof line, f))
        if (strncmp(line, "#@tune_dt[", 10) == 0 && strlen(text) + strlen(line) < sizeof text)
            strcat(text, line);
    fclose(f);
    snprintf(want, sizeof want,
             "#@tune_dt[MPI_Alltoallw %d pack]=1\n#@tune_dt[MPI_Ibcast 36 pack]=1\n#@tune_dt[MPI_Bcast_init 36 pack]=1\n",
             36 * size);
    if (strcmp(text, want)) {
        fprintf(stderr, "rank %d: the report's #@tune_dt lines are\n%swhere\n%swas expected\n", rank, text, want);
        failures++;
    }
}

int main(int argc, char **argv)
{
    int freed = argc > 1 && strcmp(argv[1], "freed") == 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size > 4) {
        if (rank == 0) fprintf(stderr, "test_tune_dt_nbcoll: run with 1 to 4 processes\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_Errhandler counting;
    MPI_Comm_create_errhandler(count_errors, &counting);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, counting);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, counting);
    MPI_Errhandler_free(&counting);
    types_make();
    if (freed) return freed_requests();

    report(); /* first: its sizes are counted by its calls only */
    char profiles[64];
    write_profiles(profiles, sizeof profiles);
    /* MG_NBCOLL_CASE=N runs case N alone, named on stderr (to look at one case) */
    const char *only = getenv("MG_NBCOLL_CASE");
    verbose = only != NULL;
    int seq = 0;
    for (int form = 0; form < NFORMS; form++)
        for (int kind = 0; kind < NKINDS; kind++)
            for (int v = 0; v < NVARIANTS; v++) {
                kase c;
                if (!kase_of(kind, form, v, seq, &c)) continue;
                if ((only && atoi(only) != seq) || native_bug(&c, -1)) {
                    seq++;
                    continue;
                }
                if (only && rank == 0) {
                    char what[256];
                    kase_text(&c, what, sizeof what);
                    fprintf(stderr, "case %d: %s%s\n", seq, what, form_names[c.form]);
                }
                check(&c, seq++);
            }
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", profiles);
    EXPECT(system(cmd) == 0);
    EXPECT(mg_tune_force("datatypes", "native") == MG_TUNE_SUCCESS);
    types_free();
    int all;
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf(all ? "test_tune_dt_nbcoll: %d failure(s) in %d cases\n" : "test_tune_dt_nbcoll: ok (%d failures, %d cases)\n",
               all, seq);
    MPI_Finalize();
    return all != 0;
}
