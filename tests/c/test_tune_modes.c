/* libmpiguide-tune: real calls in tuned and forced mode that test_tune_config
 * (configuration, look-ups) and test_tune_exact (forced mode, every mock-up vs
 * the native call) leave out. Every case runs the native PMPI_ call and the
 * intercepted MPI_ call on identical inputs and compares the receive buffers
 * byte for byte (guard bytes included); mg_tune_last_impl must be what the
 * rules predict and the same on every rank.
 *
 * One phase per run (argv[1]):
 *   tuned      profiles (both formats) whose ranges choose different mock-ups
 *              at different sizes, for Bcast, Allreduce, Allgather, Gather,
 *              Scatter, Reduce; rooted collectives whose non-roots pass other
 *              legal arguments than the root (NULL or differently typed
 *              buffers that are not significant, another datatype of the same
 *              signature, MPI_IN_PLACE at the root); the MPI-4 _c entry points
 *              where the stack has them; then malformed profiles: one warning
 *              each with file:line, those collectives run natively ("default")
 *              and exactly, a good profile next to them is still used; the
 *              shadow communicators of the mock-ups' inner calls: made once
 *              per communicator without copying its attributes, freed with
 *              it, with the handler that matches the communicator's.
 *   config     a malformed configuration file and variable: warnings with
 *              file:line (or the variable), the good lines used, every call
 *              native and exact; without a report nothing is counted.
 *   smallpool  pools of 256 message bytes and 0 int bytes: every mock-up of
 *              the six collectives forced at several sizes runs exactly when
 *              its stated need fits and natively otherwise; every lease is
 *              returned (the pool is intact afterwards).
 *   regroup    allow_regrouping = yes (a variable with a bad value first, then
 *              the configuration file): every Allreduce mock-up runs on
 *              floating-point MPI_SUM, MPI_MAX and a user op, with values whose
 *              sum is exact in any grouping (so results still equal native),
 *              long double included (compared by value: its padding bytes are
 *              unspecified, natively too). Without the key (phase config) the
 *              same calls run natively.
 * Runs under mpiexec with 2 to 4 processes. */
#define _POSIX_C_SOURCE 200809L
#include "comms.h"
#include "lifecycle.h"
#include "mpiguide/tune.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tune_testkit.h"

/* ---- the collectives under test ---- */

typedef enum { K_BCAST, K_ALLREDUCE, K_ALLGATHER, K_GATHER, K_SCATTER, K_REDUCE, NK } kind;
static const char *const kname[NK] = {"bcast", "allreduce", "allgather", "gather", "scatter", "reduce"};
static const mg_coll kcoll[NK] = {MG_COLL_BCAST,  MG_COLL_ALLREDUCE, MG_COLL_ALLGATHER,
                                  MG_COLL_GATHER, MG_COLL_SCATTER,   MG_COLL_REDUCE};
/* the two mock-ups the profiles choose (if the table has them; else "default") */
static const char *const kmock[NK][2] = {
    {"bcast_as_allgatherv", "bcast_as_scatter_allgather"},
    {"allreduce_as_reduce_bcast", "allreduce_as_reducescatterblock_allgather"},
    {"allgather_as_gather_bcast", "allgather_as_allgatherv"},
    {"gather_as_allgather", "gather_as_gatherv"},
    {"scatter_as_bcast", "scatter_as_scatterv"},
    {"reduce_as_allreduce", "reduce_as_reducescatterblock_gather"},
};

/* variants: how the ranks' arguments differ */
enum {
    V_PLAIN,    /* every rank the same arguments */
    V_NONROOT,  /* non-roots: arguments that are not significant differ (NULL, other count and type), Bcast: another
                    datatype with the same signature */
    V_IN_PLACE, /* V_NONROOT and MPI_IN_PLACE at the root (all ranks for Allreduce, Allgather) */
    NV
};
static const char *const vname[NV] = {"plain", "non-root args differ", "non-root args differ + in place"};

#define GUARD 0xA5
#define MAXC  320

typedef struct {
    int sbuf[MAXC * 4];
    unsigned char rbuf[(MAXC * 4 + 16) * sizeof(int)];
} bufs;

#ifdef MG_HAVE_MPI_LARGE_COUNT
#define CALL(native, use_c, F, ...)                                           \
    ((native) ? ((use_c) ? PMPI_##F##_c(__VA_ARGS__) : PMPI_##F(__VA_ARGS__)) \
              : ((use_c) ? MPI_##F##_c(__VA_ARGS__) : MPI_##F(__VA_ARGS__)))
#else
#define CALL(native, use_c, F, ...) ((void)(use_c), (native) ? PMPI_##F(__VA_ARGS__) : MPI_##F(__VA_ARGS__))
#endif

/* The same initial state before the native and the intercepted call. */
static void fill(bufs *b, kind k, int count, int root, int variant, int me, int p)
{
    for (int i = 0; i < count * p; i++) b->sbuf[i] = me * 1000003 + i * 7 + 1;
    memset(b->rbuf, GUARD, sizeof b->rbuf);
    int *r = (int *)b->rbuf;
    if (variant != V_IN_PLACE && k != K_BCAST) return;
    switch (k) {
    case K_BCAST:
        if (me == root) memcpy(r, b->sbuf, (size_t)count * sizeof(int));
        break;
    case K_ALLREDUCE: memcpy(r, b->sbuf, (size_t)count * sizeof(int)); break;
    case K_ALLGATHER: memcpy(r + (size_t)me * count, b->sbuf, (size_t)count * sizeof(int)); break;
    case K_GATHER:
        if (me == root) memcpy(r + (size_t)me * count, b->sbuf, (size_t)count * sizeof(int));
        break;
    case K_REDUCE:
        if (me == root) memcpy(r, b->sbuf, (size_t)count * sizeof(int));
        break;
    default: break;
    }
}

static int do_call(bufs *b, kind k, int native, int use_c, int count, int root, int variant, MPI_Comm comm, int me)
{
    int nonroot = me != root && variant != V_PLAIN, inroot = me == root && variant == V_IN_PLACE;
    int all_in_place = variant == V_IN_PLACE;
    void *r = b->rbuf;
    int *s = b->sbuf;
    (void)use_c;
    switch (k) {
    case K_BCAST:
        if (nonroot && count > 0) {
            /* one element of count ints: the same type signature */
            MPI_Datatype t;
            MPI_Type_contiguous(count, MPI_INT, &t);
            MPI_Type_commit(&t);
            int rc = CALL(native, use_c, Bcast, r, 1, t, root, comm);
            MPI_Type_free(&t);
            return rc;
        }
        return CALL(native, use_c, Bcast, r, count, MPI_INT, root, comm);
    case K_ALLREDUCE:
        return CALL(native, use_c, Allreduce, all_in_place ? MPI_IN_PLACE : s, r, count, MPI_INT, MPI_SUM, comm);
    case K_ALLGATHER:
        return CALL(native, use_c, Allgather, all_in_place ? MPI_IN_PLACE : s, count, MPI_INT, r, count, MPI_INT, comm);
    case K_GATHER:
        if (nonroot) return CALL(native, use_c, Gather, s, count, MPI_INT, NULL, count + 5, MPI_DOUBLE, root, comm);
        if (inroot)
            return CALL(native, use_c, Gather, MPI_IN_PLACE, count + 9, MPI_DOUBLE, r, count, MPI_INT, root, comm);
        return CALL(native, use_c, Gather, s, count, MPI_INT, r, count, MPI_INT, root, comm);
    case K_SCATTER:
        if (nonroot) return CALL(native, use_c, Scatter, NULL, count + 3, MPI_DOUBLE, r, count, MPI_INT, root, comm);
        if (inroot)
            return CALL(native, use_c, Scatter, s, count, MPI_INT, MPI_IN_PLACE, count + 7, MPI_DOUBLE, root, comm);
        return CALL(native, use_c, Scatter, s, count, MPI_INT, r, count, MPI_INT, root, comm);
    case K_REDUCE:
        if (nonroot) return CALL(native, use_c, Reduce, s, NULL, count, MPI_INT, MPI_SUM, root, comm);
        if (inroot) return CALL(native, use_c, Reduce, MPI_IN_PLACE, r, count, MPI_INT, MPI_SUM, root, comm);
        return CALL(native, use_c, Reduce, s, r, count, MPI_INT, MPI_SUM, root, comm);
    default: return MPI_ERR_OTHER;
    }
}

/* What the library must run for implementation impl of k (0 = default): the
 * mock-up, or "native" if it does not apply or its need exceeds a pool. */
static const char *predicted(kind k, int impl, int count, int root, MPI_Comm comm)
{
    if (impl <= 0) return "default";
    const mg_mockup *m = &mg_tune__table(kcoll[k])->mockups[impl - 1];
    int me, p;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &p);
    int red = k == K_ALLREDUCE || k == K_REDUCE;
    mg_tune_config cfg;
    mg_tune__config_in_force(&cfg);
    mg_call c = {.coll = kcoll[k],
                 .chunk = cfg.chunk,
                 .sendcount = count,
                 .recvcount = count,
                 .sendtype = MPI_INT,
                 .recvtype = MPI_INT,
                 .op = red ? MPI_SUM : MPI_OP_NULL,
                 .root = root,
                 .comm = comm,
                 .rank = me,
                 .size = p,
                 .bytes = (MPI_Count)count * (MPI_Count)sizeof(int),
                 .commutative = red};
    if (p < 2 || c.bytes <= 0 || (m->supports && !m->supports(&c))) return "native";
    mg_need need = m->need ? m->need(&c) : (mg_need){0, 0};
    if (need.msg_bytes > cfg.msg_pool_bytes || need.int_bytes > cfg.int_pool_bytes) return "native";
    return m->name;
}

/* Index of an implementation label for the cross-rank comparison. */
static int label_index(kind k, const char *s)
{
    if (!s) return -3;
    if (strcmp(s, "native") == 0) return -1;
    return mg_tune__impl_index(kcoll[k], s);
}

static long ncases, nmockups_ran;

/* Runs one case natively and intercepted, compares, checks the label against
 * `expect` (NULL: no expectation). Returns what ran. */
static const char *run_case(kind k, int count, int root, int variant, int use_c, MPI_Comm comm, const char *expect,
                            const char *what)
{
    static bufs b, want;
    int me, p;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &p);
    fill(&b, k, count, root, variant, me, p);
    int rc_native = do_call(&b, k, 1, use_c, count, root, variant, comm, me);
    memcpy(&want, &b, sizeof b);
    fill(&b, k, count, root, variant, me, p);
    int rc = do_call(&b, k, 0, use_c, count, root, variant, comm, me);
    const char *ran = mg_tune_last_impl(kname[k]);
    ncases++;
    char where[320];
    snprintf(where, sizeof where, "%s%s, %d ints, root %d, %s, %d procs (%s)", kname[k], use_c ? "_c" : "", count, root,
             vname[variant], p, what);
    if (rc != rc_native || rc != MPI_SUCCESS) {
        fprintf(stderr, "rank %d: %s: return code %d, native %d\n", rank, where, rc, rc_native);
        failures++;
    }
    if (memcmp(b.rbuf, want.rbuf, sizeof b.rbuf) != 0 || memcmp(b.sbuf, want.sbuf, sizeof b.sbuf) != 0) {
        size_t i = 0;
        while (i < sizeof b.rbuf && b.rbuf[i] == want.rbuf[i]) i++;
        fprintf(stderr, "rank %d: %s: ran %s; result differs from the native call at byte %zu\n", rank, where,
                ran ? ran : "(null)", i);
        failures++;
    }
    /* the same choice on every rank */
    int mine = label_index(k, ran), lo = mine, hi = mine;
    PMPI_Allreduce(&mine, &lo, 1, MPI_INT, MPI_MIN, comm);
    PMPI_Allreduce(&mine, &hi, 1, MPI_INT, MPI_MAX, comm);
    if (lo != hi) {
        fprintf(stderr, "rank %d: %s: the ranks ran different implementations (this one %s)\n", rank, where,
                ran ? ran : "(null)");
        failures++;
    }
    if (expect && (!ran || strcmp(ran, expect) != 0)) {
        fprintf(stderr, "rank %d: %s: ran %s, expected %s\n", rank, where, ran ? ran : "(null)", expect);
        failures++;
    }
    if (ran && strcmp(ran, "default") != 0 && strcmp(ran, "native") != 0) nmockups_ran++;
    return ran;
}

/* ---- shadow communicators (comms.c) ---- */

static int copies, errors_handled;

static int count_copy(MPI_Comm comm, int key, void *extra, void *in, void *out, int *flag)
{
    (void)comm, (void)key, (void)extra;
    copies++;
    *(void **)out = in;
    *flag = 1;
    return MPI_SUCCESS;
}

static void count_error(MPI_Comm *comm, int *code, ...)
{
    (void)comm, (void)code;
    errors_handled++;
}

/* The handler set on comm, compared with h. */
static int has_handler(MPI_Comm comm, MPI_Errhandler h)
{
    MPI_Errhandler got;
    PMPI_Comm_get_errhandler(comm, &got);
    int same = got == h;
    PMPI_Errhandler_free(&got);
    return same;
}

/* Forced Bcast mock-ups on communicators the test makes and frees: each gets
 * one shadow, the application's attributes are not copied to it, its handler
 * follows the communicator's, and it goes with the communicator (MPICH has
 * 2048 context ids for communicators: a leak would exhaust them). */
static void check_shadows(void)
{
    int key;
    MPI_Errhandler counting;
    PMPI_Comm_create_keyval(count_copy, MPI_COMM_NULL_DELETE_FN, &key, NULL);
    PMPI_Comm_create_errhandler(count_error, &counting);
    EXPECT(mg_tune_force("bcast", mg_tune_impl_name("bcast", 1)) == MG_TUNE_SUCCESS);
    for (int i = 0; i < 2100; i++) {
        MPI_Comm c, shadow, again;
        PMPI_Comm_dup(MPI_COMM_WORLD, &c);
        PMPI_Comm_set_attr(c, key, &copies);
        PMPI_Comm_set_errhandler(c, counting);
        int v[4] = {i, i, i, i};
        if (rank != 0) memset(v, 0, sizeof v);
        EXPECT(MPI_Bcast(v, 4, MPI_INT, 0, c) == MPI_SUCCESS && v[0] == i && v[3] == i);
        if (i == 0) {
            EXPECT(strcmp(mg_tune_last_impl("bcast"), mg_tune_impl_name("bcast", 1)) == 0);
            EXPECT(mg_tune__shadow_comm(c, &shadow) == MPI_SUCCESS && mg_tune__shadow_comm(c, &again) == MPI_SUCCESS);
            int cmp = MPI_UNEQUAL;
            PMPI_Comm_compare(c, shadow, &cmp);
            EXPECT(shadow == again && shadow != c && cmp == MPI_CONGRUENT);
            EXPECT(has_handler(shadow, MPI_ERRORS_RETURN));
            PMPI_Comm_set_errhandler(c, MPI_ERRORS_ARE_FATAL);
            EXPECT(mg_tune__shadow_comm(c, &shadow) == MPI_SUCCESS && has_handler(shadow, MPI_ERRORS_ARE_FATAL));
            PMPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
            EXPECT(mg_tune__shadow_comm(c, &shadow) == MPI_SUCCESS && has_handler(shadow, MPI_ERRORS_RETURN));
        }
        PMPI_Comm_free(&c);
    }
    EXPECT(copies == 0 && errors_handled == 0);
    EXPECT(mg_tune_force("bcast", "default") == MG_TUNE_SUCCESS);
    PMPI_Errhandler_free(&counting);
    PMPI_Comm_free_keyval(&key);
}

/* ---- phase tuned ---- */

/* byte ranges of every test profile: [1,16] first mock-up, [20,400] second, [404,800] default */
static int profile_impl(kind k, int count, int valid)
{
    long bytes = (long)count * 4;
    if (!valid) return 0;
    int slot = bytes >= 1 && bytes <= 16 ? 0 : bytes >= 20 && bytes <= 400 ? 1 : -1;
    if (slot < 0) return 0;
    int i = mg_tune__impl_index(kcoll[k], kmock[k][slot]);
    return i > 0 ? i : 0;
}

static const char *impl_or_default(kind k, int slot)
{
    return mg_tune__impl_index(kcoll[k], kmock[k][slot]) > 0 ? kmock[k][slot] : "default";
}

static void write_good_profiles(const char *sub, int p)
{
    char text[1024], name[128];
    for (int k = 0; k < NK; k++) {
        if (k == K_REDUCE) {
            /* PGMPITuneLib's format (Hunold and Carpen-Amarie 2018, Listing 1); alg ids are local labels,
             * "default" is native */
            snprintf(text, sizeof text,
                     "# pgtune profile\nMPI_Reduce\n%d # nb. of processes\n3 # nb. of mock-up impl.\n3 %s\n5 %s\n"
                     "9 default\n3 # nb. of ranges\n404 800 9\n1 16 3\n20 400 5\n",
                     p, impl_or_default(k, 0), impl_or_default(k, 1));
            snprintf(name, sizeof name, "%s/reduce_%d.prf", sub, p);
        } else {
            snprintf(text, sizeof text,
                     "# mpiguide tune profile 1\ncollective %s\nprocs %d\n# from to implementation\n"
                     "404 800 default\n20 400 %s\n1 16 %s   # out of order on purpose\n",
                     kname[k], p, impl_or_default(k, 1), impl_or_default(k, 0));
            snprintf(name, sizeof name, "%s/%s_%d.prof", sub, kname[k], p);
        }
        write_file(name, text);
    }
}

static const int counts[] = {0, 1, 4, 5, 50, 100, 101, 200, 300};
#define NCOUNTS ((int)(sizeof counts / sizeof counts[0]))

static void tuned_calls(int use_c, const char *what)
{
    for (int k = 0; k < NK; k++)
        for (int ci = 0; ci < NCOUNTS; ci++) {
            int count = counts[ci];
            int rooted = k == K_BCAST || k == K_GATHER || k == K_SCATTER || k == K_REDUCE;
            for (int v = 0; v < NV; v++) {
                if (v != V_PLAIN && ci % 2 == 0 && !rooted) continue; /* fewer unrooted in-place cases */
                int root = rooted ? (ci + v) % size : 0;
                int impl = profile_impl((kind)k, count, 1);
                run_case((kind)k, count, root, v, use_c, MPI_COMM_WORLD,
                         predicted((kind)k, impl, count, root, MPI_COMM_WORLD), what);
            }
        }
}

static void phase_tuned(void)
{
    char sub[128];
    snprintf(sub, sizeof sub, "%s/good", dir);
    mkdir(sub, 0700);
    write_good_profiles("good", size);
    EXPECT(mg_tune_load_profiles(sub) == MG_TUNE_SUCCESS);
    EXPECT(mg_tune_set_mode(MG_TUNE_TUNED) == MG_TUNE_SUCCESS);
    EXPECT(occurrences(warnings(), "mpiguide-tune: warning:") == 0);

    /* the look-ups themselves: different choices at different sizes */
    for (int k = 0; k < NK; k++) {
        int i0 = mg_tune__impl_index(kcoll[k], impl_or_default((kind)k, 0));
        int i1 = mg_tune__impl_index(kcoll[k], impl_or_default((kind)k, 1));
        EXPECT(mg_tune__lookup(kcoll[k], size, 1) == i0 && mg_tune__lookup(kcoll[k], size, 16) == i0);
        EXPECT(mg_tune__lookup(kcoll[k], size, 17) == -1 && mg_tune__lookup(kcoll[k], size, 19) == -1);
        EXPECT(mg_tune__lookup(kcoll[k], size, 20) == i1 && mg_tune__lookup(kcoll[k], size, 400) == i1);
        EXPECT(mg_tune__lookup(kcoll[k], size, 404) == 0 && mg_tune__lookup(kcoll[k], size, 801) == -1);
        EXPECT(mg_tune__lookup(kcoll[k], size + 1, 4) == -1);
    }
    long before = nmockups_ran;
    tuned_calls(0, "tuned");
    /* the profile's mock-ups really ran (both of each collective, where the table has them) */
    EXPECT(nmockups_ran - before >= 2 * NK - 2);
    for (int k = 0; k < NK; k++)
        for (int slot = 0; slot < 2; slot++) {
            const char *want = impl_or_default((kind)k, slot);
            const char *got = run_case((kind)k, slot ? 50 : 2, 0, V_PLAIN, 0, MPI_COMM_WORLD, NULL, "tuned, mock-up");
            if (strcmp(want, "default") != 0 && got && strcmp(got, want) != 0 && strcmp(got, "native") != 0) {
                fprintf(stderr, "rank %d: tuned %s ran %s, profile says %s\n", rank, kname[k], got, want);
                failures++;
            }
        }
    /* a communicator without a profile of its size: default */
    for (int k = 0; k < NK; k++) run_case((kind)k, 4, 0, V_PLAIN, 0, MPI_COMM_SELF, "default", "tuned, size 1");

#ifdef MG_HAVE_MPI_LARGE_COUNT
    /* the MPI-4 large-count entry points: the same profiles, the same choices */
    before = nmockups_ran;
    tuned_calls(1, "tuned, _c");
    EXPECT(nmockups_ran - before >= 2 * NK - 2);
#else
    if (rank == 0) printf("test_tune_modes: the stack has no MPI_Allgather_c: _c entry points not tested\n");
#endif

    /* forced mode with the non-root variants: every mock-up of the rooted collectives */
    EXPECT(mg_tune_set_mode(MG_TUNE_FORCED) == MG_TUNE_SUCCESS);
    kind rooted[4] = {K_BCAST, K_GATHER, K_SCATTER, K_REDUCE};
    for (int r = 0; r < 4; r++) {
        kind k = rooted[r];
        for (int i = 1; i < mg_tune_nimpls(kname[k]); i++) {
            EXPECT(mg_tune_force(kname[k], mg_tune_impl_name(kname[k], i)) == MG_TUNE_SUCCESS);
            for (int v = V_NONROOT; v < NV; v++)
                for (int root = 0; root < size; root++)
                    run_case(k, 7 + root, root, v, 0, MPI_COMM_WORLD, predicted(k, i, 7 + root, root, MPI_COMM_WORLD),
                             "forced");
        }
        EXPECT(mg_tune_force(kname[k], "default") == MG_TUNE_SUCCESS);
    }
    check_shadows();

    /* malformed profiles: one warning each with file:line; those collectives run natively */
    snprintf(sub, sizeof sub, "%s/bad", dir);
    mkdir(sub, 0700);
    char text[1024];
    snprintf(text, sizeof text, "# mpiguide tune profile 1\ncollective bcast\nprocs %d\n1 400 %s\n200 800 default\n",
             size, impl_or_default(K_BCAST, 0));
    write_file("bad/bcast_overlap.prof", text);
    snprintf(text, sizeof text,
             "# mpiguide tune profile 1\ncollective allreduce\nprocs %d\n\n1 400 allreduce_as_magic\n", size);
    write_file("bad/allreduce_badimpl.prof", text);
    snprintf(text, sizeof text, "# mpiguide tune profile 1\ncollective gather\nprocs %d\n4x00 800 %s\n", size,
             impl_or_default(K_GATHER, 0));
    write_file("bad/gather_badnum.prof", text);
    snprintf(text, sizeof text, "# pgtune profile\nMPI_Scatter\n%d\n1\n2 %s\n1\n1 400 7\n", size,
             impl_or_default(K_SCATTER, 0));
    write_file("bad/scatter_badid.prf", text);
    snprintf(text, sizeof text, "# mpiguide tune profile 1\ncollective reduce\n1 400 %s\n",
             impl_or_default(K_REDUCE, 0));
    write_file("bad/reduce_noprocs.prof", text);
    /* and a good one next to them */
    snprintf(text, sizeof text, "# mpiguide tune profile 1\ncollective allgather\nprocs %d\n1 400 %s\n", size,
             impl_or_default(K_ALLGATHER, 0));
    write_file("bad/allgather_good.prof", text);
    EXPECT(mg_tune_load_profiles(sub) == MG_TUNE_ERR_PROFILE);
    EXPECT(mg_tune_set_mode(MG_TUNE_TUNED) == MG_TUNE_SUCCESS);
    EXPECT_WARNING("mpiguide-tune: warning: %s/bad/bcast_overlap.prof:5: range 200 800 overlaps range 1 400 of line "
                   "4; this profile is ignored\n",
                   dir);
    EXPECT_WARNING("mpiguide-tune: warning: %s/bad/allreduce_badimpl.prof:5: unknown implementation "
                   "'allreduce_as_magic' of allreduce (implementations: default",
                   dir);
    EXPECT_WARNING("mpiguide-tune: warning: %s/bad/gather_badnum.prof:4: range start '4x00' is not a non-negative "
                   "number of bytes; this profile is ignored\n",
                   dir);
    EXPECT_WARNING("mpiguide-tune: warning: %s/bad/scatter_badid.prf:7: alg_id '7' is not among the mock-ups "
                   "declared above; this profile is ignored\n",
                   dir);
    EXPECT_WARNING("mpiguide-tune: warning: %s/bad/reduce_noprocs.prof:", dir);
    EXPECT(occurrences(warnings(), "this profile is ignored") == (rank == 0 ? 5 : 0));
    kind bad[5] = {K_BCAST, K_ALLREDUCE, K_GATHER, K_SCATTER, K_REDUCE};
    for (int b = 0; b < 5; b++)
        for (int ci = 0; ci < NCOUNTS; ci++)
            run_case(bad[b], counts[ci], ci % size, ci % NV, 0, MPI_COMM_WORLD, "default", "malformed profile");
    for (int ci = 1; ci < NCOUNTS; ci++) {
        int impl = counts[ci] * 4 <= 400 ? profile_impl(K_ALLGATHER, 1, 1) : 0;
        run_case(K_ALLGATHER, counts[ci], 0, V_PLAIN, 0, MPI_COMM_WORLD,
                 predicted(K_ALLGATHER, impl, counts[ci], 0, MPI_COMM_WORLD), "good profile next to malformed ones");
    }
    /* loading again warns no more */
    EXPECT(mg_tune_load_profiles(sub) == MG_TUNE_ERR_PROFILE);
    EXPECT(occurrences(warnings(), "this profile is ignored") == (rank == 0 ? 5 : 0));
}

/* ---- floating-point reductions (phases config and regroup) ---- */

/* op on doubles: inout = in + inout */
static void user_dsum(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    for (int i = 0; i < *len; i++) ((double *)inout)[i] += ((const double *)in)[i];
}

/* One Allreduce of count values of type t (small integers: exact in any order), native and intercepted:
 * results must be equal; returns what the library ran. */
static const char *allreduce_floats(MPI_Datatype t, size_t size, MPI_Op op, int count, const char *what)
{
    unsigned char in[64 * 16], out_n[64 * 16], out_t[64 * 16];
    memset(in, 0, sizeof in);
    for (int i = 0; i < count; i++) {
        double d = (double)((rank + 1) * (i + 3) % 17);
        long double ld = d;
        if (t == MPI_LONG_DOUBLE)
            memcpy(in + (size_t)i * size, &ld, sizeof ld);
        else
            memcpy(in + (size_t)i * size, &d, sizeof d);
    }
    memset(out_n, GUARD, sizeof out_n);
    memset(out_t, GUARD, sizeof out_t);
    int rc_n = PMPI_Allreduce(in, out_n, count, t, op, MPI_COMM_WORLD);
    int rc_t = MPI_Allreduce(in, out_t, count, t, op, MPI_COMM_WORLD);
    const char *ran = mg_tune_last_impl("allreduce");
    ncases++;
    int same = 1; /* values, not bytes: 6 of a long double's 16 bytes are padding, unspecified even natively */
    for (int i = 0; i < count; i++) {
        long double a, b;
        double da, db;
        if (t == MPI_LONG_DOUBLE) {
            memcpy(&a, out_n + (size_t)i * size, sizeof a), memcpy(&b, out_t + (size_t)i * size, sizeof b);
        } else {
            memcpy(&da, out_n + (size_t)i * size, sizeof da), memcpy(&db, out_t + (size_t)i * size, sizeof db);
            a = da, b = db;
        }
        same &= a == b;
    }
    if (rc_n != MPI_SUCCESS || rc_t != MPI_SUCCESS || !same) {
        fprintf(stderr, "rank %d: allreduce %s: ran %s; rc %d (native %d) or a different result\n", rank, what,
                ran ? ran : "(null)", rc_t, rc_n);
        failures++;
    }
    if (ran && strcmp(ran, "native") != 0 && strcmp(ran, "default") != 0) nmockups_ran++;
    return ran;
}

/* ---- phase config ---- */

static void phase_config(void)
{
    /* the good lines: mode forced; every force entry was bad or default: native by choice */
    mg_tune_config cfg;
    mg_tune__config_in_force(&cfg);
    EXPECT(mg_tune_get_mode() == MG_TUNE_FORCED);
    EXPECT(cfg.msg_pool_bytes == MG_TUNE_DEFAULT_MSG_POOL);
    EXPECT(cfg.int_pool_bytes == 4096); /* the file's; the variable's value was bad */
    EXPECT(cfg.chunk == 8 && atomic_load(&mg_tune_hot.chunk) == 8);
    for (int c = 0; c < MG_NCOLLS; c++) EXPECT(cfg.forced[c] == 0);
    const char *conf = "tune.conf";
    EXPECT_WARNING("mpiguide-tune: warning: %s/%s:3: force entry 'allgather=allgather_as_magic': unknown "
                   "implementation 'allgather_as_magic' of allgather (implementations: default",
                   dir, conf);
    EXPECT_WARNING("mpiguide-tune: warning: %s/%s:3: force entry 'bcats=default': unknown collective 'bcats'", dir,
                   conf);
    EXPECT_WARNING("mpiguide-tune: warning: %s/%s:5: msg_pool_bytes 'lots': expected a size in bytes such as "
                   "67108864, 64M or 256k; this line is ignored\n",
                   dir, conf);
    EXPECT_WARNING("mpiguide-tune: warning: %s/%s:6: chunk '0': expected a number of elements from 1 to 2147483647; "
                   "this line is ignored\n",
                   dir, conf);
    EXPECT_WARNING("mpiguide-tune: warning: %s/%s:7: mode 'tunde': expected off, forced, tuned or online; this line is "
                   "ignored\n",
                   dir, conf);
    EXPECT_WARNING("mpiguide-tune: warning: %s/%s:8: profiles '': expected a path; this line is ignored\n", dir, conf);
    EXPECT_WARNING("mpiguide-tune: warning: %s/%s:9: unknown key 'wibble' (keys: mode, force, profiles, "
                   "msg_pool_bytes, int_pool_bytes, chunk, report, record, allow_regrouping, dt_form); this line "
                   "is ignored\n",
                   dir, conf);
    EXPECT_WARNING("mpiguide-tune: warning: MPIGUIDE_TUNE_INT_POOL=12q: expected a size in bytes such as 67108864, "
                   "64M or 256k; ignored\n");
    if (rank == 0) EXPECT(occurrences(warnings(), "mpiguide-tune: warning:") == 8);
    /* every call runs natively and exactly */
    for (int k = 0; k < NK; k++)
        for (int ci = 0; ci < NCOUNTS; ci++)
            for (int v = 0; v < NV; v++)
                run_case((kind)k, counts[ci], ci % size, v, 0, MPI_COMM_WORLD, "default", "malformed configuration");
    /* no report requested and the control API not used: nothing is counted */
    EXPECT(mg_tune__counted(MG_COLL_BCAST, 4, 0) == 0);
    EXPECT(mg_tune__counted(MG_COLL_ALLREDUCE, 400, 0) == 0);
    EXPECT((atomic_load(&mg_tune_hot.word) & MG_HOT_COUNT) == 0);
    /* without allow_regrouping, floating-point reductions run natively under every forced mock-up */
    EXPECT(cfg.allow_regrouping == 0); /* last: the control API turns counting on */
    EXPECT(mg_tune_set_mode(MG_TUNE_FORCED) == MG_TUNE_SUCCESS);
    for (int i = 1; i < mg_tune_nimpls("allreduce"); i++) {
        EXPECT(mg_tune_force("allreduce", mg_tune_impl_name("allreduce", i)) == MG_TUNE_SUCCESS);
        const char *ran = allreduce_floats(MPI_DOUBLE, sizeof(double), MPI_MAX, 2 * size, "double MPI_MAX");
        if (!ran || strcmp(ran, "native") != 0) {
            fprintf(stderr, "rank %d: double MPI_MAX without allow_regrouping ran %s\n", rank, ran ? ran : "(null)");
            failures++;
        }
    }
    EXPECT(mg_tune_force("allreduce", "default") == MG_TUNE_SUCCESS);
}

/* ---- phase regroup ---- */

static void phase_regroup(void)
{
    EXPECT_WARNING("mpiguide-tune: warning: MPIGUIDE_TUNE_ALLOW_REGROUPING=maybe: expected yes or no; ignored\n");
    mg_tune_config cfg;
    mg_tune__config_in_force(&cfg);
    EXPECT(cfg.allow_regrouping == 1 && atomic_load(&mg_tune_hot.regroup) == 1); /* the file's yes */
    MPI_Op dsum;
    MPI_Op_create(user_dsum, 1, &dsum);
    EXPECT(mg_tune_set_mode(MG_TUNE_FORCED) == MG_TUNE_SUCCESS);
    for (int i = 1; i < mg_tune_nimpls("allreduce"); i++) {
        const char *m = mg_tune_impl_name("allreduce", i);
        EXPECT(mg_tune_force("allreduce", m) == MG_TUNE_SUCCESS);
        int count = 2 * size; /* divisible by p: no padding, so the user op may run in every mock-up */
        const char *ran = allreduce_floats(MPI_DOUBLE, sizeof(double), MPI_SUM, count, "double MPI_SUM");
        if (!ran || strcmp(ran, m) != 0) {
            fprintf(stderr, "rank %d: double MPI_SUM with allow_regrouping: ran %s, not %s\n", rank,
                    ran ? ran : "(null)", m);
            failures++;
        }
        ran = allreduce_floats(MPI_DOUBLE, sizeof(double), MPI_MAX, count, "double MPI_MAX");
        if (!ran || strcmp(ran, m) != 0) failures++;
        ran = allreduce_floats(MPI_DOUBLE, sizeof(double), dsum, count, "double user op");
        if (!ran || strcmp(ran, m) != 0) failures++;
        ran = allreduce_floats(MPI_LONG_DOUBLE, sizeof(long double), MPI_MAX, count, "long double MPI_MAX");
        if (!ran || strcmp(ran, m) != 0) failures++;
    }
    MPI_Op_free(&dsum);
}

/* ---- phase smallpool ---- */

static void phase_smallpool(void)
{
    mg_tune_config cfg;
    mg_tune__config_in_force(&cfg);
    mg_tune_pool_info pools = mg_tune__pool_info();
    EXPECT(cfg.msg_pool_bytes == 256 && cfg.int_pool_bytes == 0);
    unsigned char *mp = pools.msg_pool;
    EXPECT(mp != NULL && pools.msg_pool_size == 256 && pools.int_pool == NULL);
    EXPECT(mg_tune_set_mode(MG_TUNE_FORCED) == MG_TUNE_SUCCESS);
    long too_big = 0, fit = 0;
    static const int sizes[] = {1, 16, 100, 300};
    for (int k = 0; k < NK; k++) {
        for (int i = 1; i < mg_tune_nimpls(kname[k]); i++) {
            const char *name = mg_tune_impl_name(kname[k], i);
            EXPECT(mg_tune_force(kname[k], name) == MG_TUNE_SUCCESS);
            const mg_mockup *m = &mg_tune__table(kcoll[k])->mockups[i - 1];
            for (int s = 0; s < 4; s++) {
                int count = sizes[s], root = s % size;
                const char *want = predicted((kind)k, i, count, root, MPI_COMM_WORLD);
                if (strcmp(want, "native") == 0) {
                    /* does it only fall back because of the pools? */
                    mg_call c = {.coll = kcoll[k],
                                 .chunk = cfg.chunk,
                                 .sendcount = count,
                                 .recvcount = count,
                                 .sendtype = MPI_INT,
                                 .recvtype = MPI_INT,
                                 .op = k == K_ALLREDUCE || k == K_REDUCE ? MPI_SUM : MPI_OP_NULL,
                                 .root = root,
                                 .comm = MPI_COMM_WORLD,
                                 .rank = rank,
                                 .size = size,
                                 .bytes = count * 4,
                                 .commutative = 1};
                    if (!m->supports || m->supports(&c)) too_big++;
                } else {
                    fit++;
                }
                run_case((kind)k, count, root, s % NV, 0, MPI_COMM_WORLD, want, "small pools");
                EXPECT(!mg_tune__pool_info().leased); /* every lease was returned */
            }
        }
        EXPECT(mg_tune_force(kname[k], "default") == MG_TUNE_SUCCESS);
    }
    /* both sides of the rule were exercised */
    EXPECT(too_big > 0);
    EXPECT(fit > 0);
    /* fallbacks are counted as "native" (a report is requested) */
    uint64_t natives = 0;
    for (int k = 0; k < NK; k++)
        for (int s = 0; s < 4; s++) natives += mg_tune__counted(kcoll[k], sizes[s] * 4, MG_TUNE_NATIVE);
    EXPECT(natives > 0);
    /* the pool is intact: the same memory, leased from its start */
    pools = mg_tune__pool_info();
    EXPECT(pools.msg_pool == mp && pools.msg_pool_size == 256);
    mg_lease *l = mg_lease_acquire(256, 0);
    EXPECT(l && l->pooled && mg_lease_msg(l, 256) == (void *)mp);
    mg_lease_release(l);
    EXPECT(!mg_tune__pool_info().leased);
}

int main(int argc, char **argv)
{
    const char *phase = argc > 1 ? argv[1] : "tuned";
    if (strcmp(phase, "tuned") != 0 && strcmp(phase, "config") != 0 && strcmp(phase, "smallpool") != 0 &&
        strcmp(phase, "regroup") != 0) {
        fprintf(stderr, "usage: test_tune_modes [tuned|config|smallpool|regroup]\n");
        return 2;
    }
    snprintf(dir, sizeof dir, "/tmp/mg_tune_modes_XXXXXX");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 2;
    }
    const char *vars[] = {"MPIGUIDE_TUNE_MODE",   "MPIGUIDE_TUNE_FORCE",    "MPIGUIDE_TUNE_PROFILES",
                          "MPIGUIDE_TUNE_CONFIG", "MPIGUIDE_TUNE_MSG_POOL", "MPIGUIDE_TUNE_INT_POOL",
                          "MPIGUIDE_TUNE_CHUNK",  "MPIGUIDE_TUNE_REPORT",   "MPIGUIDE_TUNE_ALLOW_REGROUPING"};
    for (size_t i = 0; i < sizeof vars / sizeof *vars; i++) unsetenv(vars[i]);
    char path[160];
    if (strcmp(phase, "config") == 0) {
        write_file("tune.conf", "# a configuration with mistakes\n"
                                "mode = forced\n"
                                "force = allgather=allgather_as_magic, bcats=default\n"
                                "int_pool_bytes = 4k\n"
                                "msg_pool_bytes = lots\n"
                                "chunk = 0\n"
                                "mode = tunde\n"
                                "profiles =\n"
                                "wibble = 3\n"
                                "chunk = 8   # good again\n");
        snprintf(path, sizeof path, "%s/tune.conf", dir);
        setenv("MPIGUIDE_TUNE_CONFIG", path, 1);
        setenv("MPIGUIDE_TUNE_INT_POOL", "12q", 1);
    } else if (strcmp(phase, "regroup") == 0) {
        write_file("tune.conf", "allow_regrouping = yes\n");
        snprintf(path, sizeof path, "%s/tune.conf", dir);
        setenv("MPIGUIDE_TUNE_CONFIG", path, 1);
        setenv("MPIGUIDE_TUNE_ALLOW_REGROUPING", "maybe", 1);
    } else if (strcmp(phase, "smallpool") == 0) {
        setenv("MPIGUIDE_TUNE_MSG_POOL", "256", 1);
        setenv("MPIGUIDE_TUNE_INT_POOL", "0", 1);
        snprintf(path, sizeof path, "%s/report.txt", dir);
        setenv("MPIGUIDE_TUNE_REPORT", path, 1);
    }
    warn_file = tmpfile();
    mg_tune__set_warning_stream(warn_file);

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2 || size > 4) {
        if (rank == 0) fprintf(stderr, "test_tune_modes: run with 2 to 4 processes\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (strcmp(phase, "tuned") == 0)
        phase_tuned();
    else if (strcmp(phase, "config") == 0)
        phase_config();
    else if (strcmp(phase, "regroup") == 0)
        phase_regroup();
    else
        phase_smallpool();

    int all = 0;
    PMPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    long cases = ncases, ran = nmockups_ran;
    MPI_Finalize();
    mg_tune__set_warning_stream(NULL);
    fclose(warn_file);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0) fprintf(stderr, "rank %d: could not remove %s\n", rank, dir);
    if (rank == 0)
        printf("test_tune_modes %s: %s (%ld cases on rank 0, %ld ran a mock-up; %d failure(s) over all ranks)\n", phase,
               all ? "FAILED" : "ok", cases, ran, all);
    return all || failures ? 1 : 0;
}
