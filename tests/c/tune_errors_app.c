/* tune_errors_app: one erroneous collective call, natively or with a forced
 * mock-up of libmpiguide-tune, and whether it ended as the native call would.
 *
 *   tune_errors_app --list          the cases: "CASE KIND MOCKUP..." per line
 *                                   (KIND below; the mock-ups of its collective,
 *                                   MOCKUP!BUG where a known bug of the library
 *                                   makes its inner call hang on the case)
 *   tune_errors_app CASE native     the native (PMPI) call
 *   tune_errors_app CASE IMPL       the intercepted call, IMPL forced
 *   tune_errors_app CASE IMPL,IMPL,...  each in turn in one launch, on a
 *                                   communicator of its own; the launch
 *                                   ends 0
 * After each run rank 0 prints "status CASE IMPL S", S the exit status below.
 *
 * The cases are the erroneous calls of MPICH's test/mpi/errors/coll suite
 * (lengths that differ between ranks, aliased buffers on all ranks or on the
 * root alone, with the other ranks not calling at all), plus uncommitted
 * datatypes and NULL buffers (with predefined and derived datatypes), and
 * MPICH's errors/pt2pt/truncmsg2. Each names the ranks that must see an error
 * (MPICH's criterion), and its KIND: "local" where some rank's own arguments
 * show the error, "hidden" where no rank can see it alone (a Bcast count that
 * differs between ranks: MPI may abort inside an inner call, as MPICH's
 * shared-memory Allgather does), "signature" for a type signature mismatch
 * (a packed receive gets the bytes with the signature of MPI_PACKED). A case
 * with derived datatypes is also run under the datatype strategies
 * (IMPL datatypes:normalized, datatypes:pack). Every buffer has guard bytes on both sides.
 * The communicator's error handler counts its calls and returns; a rank got
 * an error when the handler ran (MPICH then returns MPI_SUCCESS) or the call
 * returned one. The handler must run at most once, never for a probe of the
 * library's own, and whenever the call returns an error.
 * Exit status: 0 when every rank that must fail got an error and no guard byte
 * changed, 1 when the call completed without the error somewhere, 3 when a
 * guard byte changed, 4 when the error handler ran twice, or not for an error
 * returned; a hang is the caller's timeout to catch
 * (tune_errors.cmake compares each mock-up with the native call). Rank 0
 * prints one line per rank: its return code's class, its guards and whether
 * the library ran the call natively. */
#define _POSIX_C_SOURCE 200809L
#include "known_bugs.h"
#include "mpiguide/tune.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GUARD 64
#define N     10 /* ints per block, as in MPICH's tests */

/* ---- guarded buffers: GUARD pattern bytes before and after */

typedef struct {
    unsigned char *mem;
    size_t len;
} gbuf;

static unsigned char pattern(size_t i) { return (unsigned char)(0xA5 ^ (i * 7u)); }

static void *galloc(gbuf *g, size_t len)
{
    g->len = len;
    g->mem = malloc(len + 2 * GUARD);
    for (size_t i = 0; i < len + 2 * GUARD; i++) g->mem[i] = pattern(i);
    return g->mem + GUARD;
}

/* 1 if no guard byte changed. */
static int gintact(const gbuf *g)
{
    if (!g->mem) return 1;
    for (size_t i = 0; i < GUARD; i++)
        if (g->mem[i] != pattern(i) || g->mem[GUARD + g->len + i] != pattern(GUARD + g->len + i)) return 0;
    return 1;
}

/* ---- the error handler: counts, and returns */

static int handler_calls;

static void count_error(MPI_Comm *comm, int *code, ...)
{
    (void)comm, (void)code;
    handler_calls++;
}

/* ---- the cases */

typedef struct {
    int rank, size, tuned;
    MPI_Comm comm;
    gbuf a, b; /* send side, receive side */
} env;

#define CALL(fn, ...) (e->tuned ? MPI_##fn(__VA_ARGS__) : PMPI_##fn(__VA_ARGS__))

static int *ints(env *e, gbuf *g, size_t n)
{
    int *p = galloc(g, n * sizeof(int));
    for (size_t i = 0; i < n; i++) p[i] = e->rank * 1000 + (int)i;
    return p;
}

static int allgather_len(env *e)
{
    int *s = ints(e, &e->a, N), *r = ints(e, &e->b, (size_t)N * e->size);
    return CALL(Allgather, s, e->rank == 0 ? 1 : N, MPI_INT, r, N, MPI_INT, e->comm);
}

static int alltoall_len(env *e)
{
    int *s = ints(e, &e->a, 2 * (size_t)N * e->size), *r = ints(e, &e->b, (size_t)N * e->size);
    return CALL(Alltoall, s, e->rank == 0 ? 2 * N : N, MPI_INT, r, N, MPI_INT, e->comm);
}

static int gather_len(env *e)
{
    int *s = ints(e, &e->a, N), *r = e->rank == 0 ? ints(e, &e->b, (size_t)N * e->size) : NULL;
    return CALL(Gather, s, N, MPI_INT, r, e->rank == 0 ? 1 : N, MPI_INT, 0, e->comm);
}

static int scatter_len(env *e)
{
    int *s = e->rank == 0 ? ints(e, &e->a, (size_t)N * e->size) : NULL, *r = ints(e, &e->b, N);
    return CALL(Scatter, s, e->rank == 0 ? 1 : N, MPI_INT, r, N, MPI_INT, 0, e->comm);
}

static int bcast_long(env *e) { return CALL(Bcast, ints(e, &e->b, N), e->rank == 0 ? 1 : N, MPI_INT, 0, e->comm); }

static int bcast_short(env *e) { return CALL(Bcast, ints(e, &e->b, N), e->rank == 0 ? N : 1, MPI_INT, 0, e->comm); }

static int reduce_len(env *e)
{
    int *s = ints(e, &e->a, N), *r = ints(e, &e->b, N);
    return CALL(Reduce, s, r, e->rank == 0 ? N : 1, MPI_INT, MPI_SUM, 0, e->comm);
}

static int allreduce_len(env *e)
{
    int *s = ints(e, &e->a, N), *r = ints(e, &e->b, N);
    return CALL(Allreduce, s, r, e->rank == 0 ? 1 : N, MPI_INT, MPI_SUM, e->comm);
}

/* Aliased buffers: one buffer of 2 ints per rank serves as send and receive buffer. */
static int *shared(env *e) { return ints(e, &e->b, 2 * (size_t)e->size); }

static int alias_allreduce(env *e)
{
    int *b = shared(e);
    return CALL(Allreduce, b, b, 2, MPI_INT, MPI_SUM, e->comm);
}

static int alias_gather_root(env *e)
{
    int *b = shared(e);
    return CALL(Gather, b, 2, MPI_INT, b, 2, MPI_INT, 0, e->comm);
}

static int alias_scatter_root(env *e)
{
    int *b = shared(e);
    return CALL(Scatter, b, 2, MPI_INT, b, 2, MPI_INT, 0, e->comm);
}

static int alias_reduce_root(env *e)
{
    int *b = shared(e);
    return CALL(Reduce, b, b, 2, MPI_INT, MPI_SUM, 0, e->comm);
}

static int alias_allgather(env *e)
{
    int *b = shared(e);
    return CALL(Allgather, b + e->rank, 1, MPI_INT, b, 1, MPI_INT, e->comm);
}

static int alias_alltoall(env *e)
{
    int *b = shared(e);
    return CALL(Alltoall, b, 2, MPI_INT, b, 2, MPI_INT, e->comm);
}

static int alias_rsb(env *e)
{
    int *b = shared(e);
    return CALL(Reduce_scatter_block, b, b, 2, MPI_INT, MPI_SUM, e->comm);
}

static int alias_scan(env *e)
{
    int *b = shared(e);
    return CALL(Scan, b, b, 2, MPI_INT, MPI_SUM, e->comm);
}

/* A vector type that nobody committed. */
static MPI_Datatype uncommitted(void)
{
    MPI_Datatype t;
    MPI_Type_vector(N / 2, 1, 2, MPI_INT, &t);
    return t;
}

static int uncommitted_allgather(env *e)
{
    MPI_Datatype t = uncommitted();
    int *s = ints(e, &e->a, N), *r = ints(e, &e->b, (size_t)N * e->size);
    int rc = CALL(Allgather, s, 1, t, r, 1, t, e->comm);
    MPI_Type_free(&t);
    return rc;
}

static int uncommitted_bcast(env *e)
{
    MPI_Datatype t = uncommitted();
    int rc = CALL(Bcast, ints(e, &e->b, N), 1, t, 0, e->comm);
    MPI_Type_free(&t);
    return rc;
}

static int uncommitted_allreduce(env *e)
{
    MPI_Datatype t = uncommitted();
    int *s = ints(e, &e->a, N), *r = ints(e, &e->b, N);
    int rc = CALL(Allreduce, s, r, 1, t, MPI_SUM, e->comm);
    MPI_Type_free(&t);
    return rc;
}

static int null_allgather(env *e)
{
    int *r = ints(e, &e->b, (size_t)N * e->size);
    return CALL(Allgather, NULL, N, MPI_INT, r, N, MPI_INT, e->comm);
}

static int null_reduce(env *e)
{
    int *r = ints(e, &e->b, N);
    return CALL(Reduce, NULL, r, N, MPI_INT, MPI_SUM, 0, e->comm);
}

/* The send side is fine: the size the choice sees is positive. */
static int negative_allgather(env *e)
{
    int *s = ints(e, &e->a, N), *r = ints(e, &e->b, (size_t)N * e->size);
    return CALL(Allgather, s, N, MPI_INT, r, -1, MPI_INT, e->comm);
}

static int root_out_of_range(env *e) { return CALL(Bcast, ints(e, &e->b, N), N, MPI_INT, e->size, e->comm); }

/* A committed vector of N ints with true lower bound 0: at NULL (MPI_BOTTOM),
 * its data would start at address 0. */
static MPI_Datatype every_other_int(void)
{
    MPI_Datatype t;
    MPI_Type_vector(N, 1, 2, MPI_INT, &t);
    MPI_Type_commit(&t);
    return t;
}

static int null_bcast_derived(env *e)
{
    MPI_Datatype t = every_other_int();
    int rc = CALL(Bcast, NULL, 1, t, 0, e->comm);
    MPI_Type_free(&t);
    return rc;
}

static int null_scatter_recv_derived(env *e)
{
    MPI_Datatype t = every_other_int();
    int *s = e->rank == 0 ? ints(e, &e->a, (size_t)N * e->size) : NULL;
    int rc = CALL(Scatter, s, N, MPI_INT, NULL, 1, t, 0, e->comm);
    MPI_Type_free(&t);
    return rc;
}

/* MPICH's errors/pt2pt/truncmsg2: 3 chars sent, received with an indexed
 * type of 4 ints (a type signature mismatch). Ranks 0 and 1 only. */
static int signature_recv(env *e)
{
    if (e->rank == 0) return CALL(Send, "abc", 3, MPI_CHAR, 1, 0, e->comm);
    int blens[2] = {2, 2}, displs[2] = {0, 3};
    MPI_Datatype t;
    MPI_Type_indexed(2, blens, displs, MPI_INT, &t);
    MPI_Type_commit(&t);
    int rc = CALL(Recv, ints(e, &e->b, 5), 1, t, 0, 0, e->comm, MPI_STATUS_IGNORE);
    MPI_Type_free(&t);
    return rc;
}

/* Who must see an error, who calls at all. */
enum { FAIL_ALL, FAIL_ROOT, FAIL_NONROOT };

/* What a case is checked with besides its collective's mock-ups: the
 * datatype strategies (its calls carry a derived datatype), or only those (a
 * point-to-point case between ranks 0 and 1, whose KIND is "signature": a
 * type signature mismatch that a packed receive cannot see, docs/tuning.md). */
enum { MOCKUPS, AND_STRATEGIES, STRATEGIES_ONLY };

typedef struct {
    const char *name, *coll;
    int (*call)(env *e);
    int fail;      /* FAIL_ */
    int root_only; /* only rank 0 calls (the others never enter the collective) */
    int hidden;    /* no rank's own arguments show the error */
    int with;      /* MOCKUPS, AND_STRATEGIES, STRATEGIES_ONLY */
} errcase;

static const errcase cases[] = {
    {"allgather_length", "allgather", allgather_len, FAIL_NONROOT, 0, 0, MOCKUPS},
    {"alltoall_length", "alltoall", alltoall_len, FAIL_ROOT, 0, 0, MOCKUPS},
    {"gather_length", "gather", gather_len, FAIL_ROOT, 0, 0, MOCKUPS},
    {"scatter_length", "scatter", scatter_len, FAIL_NONROOT, 0, 0, MOCKUPS},
    {"bcast_length_long", "bcast", bcast_long, FAIL_NONROOT, 0, 1, MOCKUPS},
    {"bcast_length_short", "bcast", bcast_short, FAIL_NONROOT, 0, 1, MOCKUPS},
    {"reduce_length", "reduce", reduce_len, FAIL_ROOT, 0, 1, MOCKUPS},
    {"allreduce_length", "allreduce", allreduce_len, FAIL_NONROOT, 0, 1, MOCKUPS},
    {"alias_allreduce", "allreduce", alias_allreduce, FAIL_ALL, 0, 0, MOCKUPS},
    {"alias_gather_root_alone", "gather", alias_gather_root, FAIL_ROOT, 1, 0, MOCKUPS},
    {"alias_scatter_root_alone", "scatter", alias_scatter_root, FAIL_ROOT, 1, 0, MOCKUPS},
    {"alias_reduce_root_alone", "reduce", alias_reduce_root, FAIL_ROOT, 1, 0, MOCKUPS},
    {"alias_allgather", "allgather", alias_allgather, FAIL_ALL, 0, 0, MOCKUPS},
    {"alias_alltoall", "alltoall", alias_alltoall, FAIL_ALL, 0, 0, MOCKUPS},
    {"alias_reduce_scatter_block", "reduce_scatter_block", alias_rsb, FAIL_ALL, 0, 0, MOCKUPS},
    {"alias_scan", "scan", alias_scan, FAIL_ALL, 0, 0, MOCKUPS},
    {"uncommitted_allgather", "allgather", uncommitted_allgather, FAIL_ALL, 0, 0, MOCKUPS},
    {"uncommitted_bcast", "bcast", uncommitted_bcast, FAIL_ALL, 0, 0, MOCKUPS},
    {"uncommitted_allreduce", "allreduce", uncommitted_allreduce, FAIL_ALL, 0, 0, MOCKUPS},
    {"null_send_allgather", "allgather", null_allgather, FAIL_ALL, 0, 0, MOCKUPS},
    {"null_send_reduce", "reduce", null_reduce, FAIL_ALL, 0, 0, MOCKUPS},
    {"negative_count_allgather", "allgather", negative_allgather, FAIL_ALL, 0, 0, MOCKUPS},
    {"root_out_of_range_bcast", "bcast", root_out_of_range, FAIL_ALL, 0, 0, MOCKUPS},
    {"null_bcast_derived", "bcast", null_bcast_derived, FAIL_ALL, 0, 0, AND_STRATEGIES},
    {"null_scatter_recv_derived", "scatter", null_scatter_recv_derived, FAIL_ALL, 0, 0, AND_STRATEGIES},
    {"signature_recv", "recv", signature_recv, FAIL_NONROOT, 0, 0, STRATEGIES_ONLY},
};
static const char *const strategies[] = {"datatypes:normalized", "datatypes:pack"};

/* Mock-ups whose inner call does not return on a case by a known bug of the
 * library running (tests/c/known_bugs.c): listed as IMPL!BUG, so that
 * tune_errors.cmake runs them alone and reports the hang as the bug's. */
static const struct {
    const char *caze, *impl, *bug;
} inner_hangs[] = {
    /* Intel MPI's MPI_Gatherv never returns on the ranks that send more than
     * the root receives, where its MPI_Gather returns */
    {"gather_length", "gather_as_gatherv", "impi-gatherv-truncation"},
};

static const char *hanging_by(const char *caze, const char *impl)
{
    for (size_t i = 0; i < sizeof inner_hangs / sizeof inner_hangs[0]; i++)
        if (!strcmp(inner_hangs[i].caze, caze) && !strcmp(inner_hangs[i].impl, impl) &&
            mg_known_bug_listed(inner_hangs[i].bug))
            return inner_hangs[i].bug;
    return NULL;
}
#define NCASES (int)(sizeof cases / sizeof *cases)

static int must_fail(const errcase *c, int rank)
{
    return c->fail == FAIL_ALL || (c->fail == FAIL_ROOT) == (rank == 0);
}

/* Whether a rank takes part: the root alone, ranks 0 and 1 of a
 * point-to-point case, or all. */
static int calls(const errcase *c, int rank)
{
    return c->root_only ? rank == 0 : c->with == STRATEGIES_ONLY ? rank < 2 : 1;
}

/* Runs the case once with IMPL ("native", a mock-up, "datatypes:STRATEGY") on
 * a communicator of its own and returns the exit status described at the top. */
static int run_case(const errcase *c, const char *impl, MPI_Comm control)
{
    env e = {.tuned = strcmp(impl, "native") != 0};
    PMPI_Comm_dup(MPI_COMM_WORLD, &e.comm); /* not freed: an erroneous call may have left it unusable */
    MPI_Errhandler counting;
    PMPI_Comm_create_errhandler(count_error, &counting);
    PMPI_Comm_set_errhandler(e.comm, counting);
    PMPI_Errhandler_free(&counting);
    PMPI_Comm_rank(e.comm, &e.rank);
    PMPI_Comm_size(e.comm, &e.size);
    handler_calls = 0;
    const char *strategy = strncmp(impl, "datatypes:", 10) == 0 ? impl + 10 : NULL;
    if (e.tuned &&
        (mg_tune_set_mode(MG_TUNE_FORCED) != MG_TUNE_SUCCESS ||
         (c->with != STRATEGIES_ONLY && mg_tune_force(c->coll, "default")) || mg_tune_force("datatypes", "default") ||
         (strategy ? mg_tune_force("datatypes", strategy) : mg_tune_force(c->coll, impl)))) {
        if (e.rank == 0) fprintf(stderr, "tune_errors_app: '%s' is not an implementation of %s\n", impl, c->coll);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int rc = MPI_SUCCESS;
    if (calls(c, e.rank)) rc = c->call(&e);
    int eclass = MPI_SUCCESS;
    if (rc != MPI_SUCCESS) PMPI_Error_class(rc, &eclass);
    const char *ran = !e.tuned ? "native" : c->with == STRATEGIES_ONLY ? NULL : mg_tune_last_impl(c->coll);
    int mine[4] = {eclass, gintact(&e.a) && gintact(&e.b), ran && strcmp(ran, "native") == 0, handler_calls};
    int *all = malloc(4 * sizeof(int) * (size_t)e.size);
    PMPI_Gather(mine, 4, MPI_INT, all, 4, MPI_INT, 0, control);
    int ok = 1, intact = 1, handled = 1;
    if (e.rank == 0) {
        for (int r = 0; r < e.size; r++) {
            int *x = all + 4 * r, called = calls(c, r);
            int got_error = x[0] != MPI_SUCCESS || x[3] > 0;
            int good = !called || !must_fail(c, r) || got_error;
            intact &= x[1];
            handled &= x[3] <= 1 && (x[0] == MPI_SUCCESS || x[3] == 1);
            printf("%s %s rank %d: %s, error class %d%s, error handler ran %d times, guards %s%s\n", c->name, impl, r,
                   called ? "called" : "not called", x[0], called && must_fail(c, r) ? " (an error is due)" : "", x[3],
                   x[1] ? "intact" : "OVERWRITTEN", e.tuned && x[2] ? ", ran natively" : "");
            ok &= good;
        }
        printf("%s %s: %s\n", c->name, impl,
               !intact    ? "GUARDS OVERWRITTEN"
               : !handled ? "ERROR HANDLER RUN TWICE OR NOT AT ALL"
               : ok       ? "ok"
                          : "error not reported");
    }
    int status = !intact ? 3 : !handled ? 4 : ok ? 0 : 1;
    PMPI_Bcast(&status, 1, MPI_INT, 0, control);
    free(all);
    free(e.a.mem);
    free(e.b.mem);
    return status;
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "--list") == 0) {
        for (int i = 0; i < NCASES; i++) {
            const errcase *c = &cases[i];
            printf("%s %s", c->name, c->hidden ? "hidden" : c->with == STRATEGIES_ONLY ? "signature" : "local");
            for (int k = 1; c->with != STRATEGIES_ONLY && k < mg_tune_nimpls(c->coll); k++) {
                const char *impl = mg_tune_impl_name(c->coll, k), *bug = hanging_by(c->name, impl);
                printf(" %s%s%s", impl, bug ? "!" : "", bug ? bug : "");
            }
            for (int k = 0; c->with != MOCKUPS && k < 2; k++) printf(" %s", strategies[k]);
            printf("\n");
        }
        return 0;
    }
    if (argc != 3) {
        fprintf(stderr, "usage: tune_errors_app --list | CASE native|IMPL[,IMPL...]\n");
        return 2;
    }
    const errcase *c = NULL;
    for (int i = 0; i < NCASES; i++)
        if (strcmp(argv[1], cases[i].name) == 0) c = &cases[i];
    if (!c) {
        fprintf(stderr, "tune_errors_app: unknown case '%s' (--list shows them)\n", argv[1]);
        return 2;
    }
    MPI_Init(&argc, &argv);
    MPI_Comm control;
    PMPI_Comm_dup(MPI_COMM_WORLD, &control); /* the results travel here, whatever happens to the case's own */
    int rank;
    PMPI_Comm_rank(control, &rank);
    const char *impls = argv[2];
    int several = strchr(impls, ',') != NULL, status = 0;
    for (const char *impl = impls; impl; impl = strchr(impl, ',') ? strchr(impl, ',') + 1 : NULL) {
        char name[96];
        size_t len = strcspn(impl, ",");
        if (len == 0 || len >= sizeof name) {
            if (rank == 0) fprintf(stderr, "tune_errors_app: bad implementation list '%s'\n", impls);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        memcpy(name, impl, len);
        name[len] = '\0';
        status = run_case(c, name, control);
        /* tune_errors.cmake reads this line: a launch's exit status alone cannot tell an abort by MPI from
         * these statuses (Open MPI exits with the error code, and MPI_ERR_BUFFER is 1) */
        if (rank == 0) printf("status %s %s %d\n", c->name, name, status);
        fflush(stdout);
    }
    PMPI_Comm_free(&control);
    MPI_Finalize();
    return several ? 0 : status;
}
