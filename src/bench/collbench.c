#define _POSIX_C_SOURCE 200809L
/* mg_collbench: the nine regular collectives of paper 002 with their native
 * implementation and each mock-up of libmpiguide-tune (forced mode), or with
 * the tuned library (profiles), over a list of message sizes. Timing follows
 * 002 Algorithm 1 through the measurement core (use --sync dissem and
 * --nrep estimate for the paper's method). Before a configuration is timed,
 * its result is compared on every rank with the native PMPI call; a
 * mock-up that does not apply to the call (the library ran the native code)
 * is recorded as a skip, not timed: so are all reduction mock-ups under
 * --datatype double --op sum, because floating-point MPI_SUM/MPI_PROD always
 * runs natively (docs/tuning.md, "Reductions"). The library's usage report is
 * appended to the raw file as `#@tune_alg[...]` and `#@tune_config[...]` lines
 * (docs/formats.md). */
#include "bench_util.h"
#include "mg_bench.h"
#include "mpiguide/tune.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SIZES 64
#define MAX_IMPLS 16

enum { C_ALLGATHER, C_ALLREDUCE, C_ALLTOALL, C_BCAST, C_GATHER, C_REDUCE, C_RSB, C_SCAN, C_SCATTER, NCOLLS };
static const char *const coll_names[NCOLLS] = {
    "allgather", "allreduce", "alltoall", "bcast", "gather", "reduce", "reduce_scatter_block", "scan", "scatter"};

typedef struct {
    int coll, root, rank, size, native;
    int count; /* elements per block (RSB: per process) */
    MPI_Datatype type;
    MPI_Op op;
    MPI_Comm comm;
    unsigned char *sbuf, *rbuf;
} call_ctx;

/* The call, through the library (MPI_) or natively (PMPI_). */
static int do_call(void *p)
{
    call_ctx *c = p;
    int n = c->count;
    if (c->native) switch (c->coll) {
        case C_ALLGATHER: return PMPI_Allgather(c->sbuf, n, c->type, c->rbuf, n, c->type, c->comm);
        case C_ALLREDUCE: return PMPI_Allreduce(c->sbuf, c->rbuf, n, c->type, c->op, c->comm);
        case C_ALLTOALL: return PMPI_Alltoall(c->sbuf, n, c->type, c->rbuf, n, c->type, c->comm);
        case C_BCAST: return PMPI_Bcast(c->rank == c->root ? c->sbuf : c->rbuf, n, c->type, c->root, c->comm);
        case C_GATHER: return PMPI_Gather(c->sbuf, n, c->type, c->rbuf, n, c->type, c->root, c->comm);
        case C_REDUCE: return PMPI_Reduce(c->sbuf, c->rbuf, n, c->type, c->op, c->root, c->comm);
        case C_RSB: return PMPI_Reduce_scatter_block(c->sbuf, c->rbuf, n, c->type, c->op, c->comm);
        case C_SCAN: return PMPI_Scan(c->sbuf, c->rbuf, n, c->type, c->op, c->comm);
        case C_SCATTER: return PMPI_Scatter(c->sbuf, n, c->type, c->rbuf, n, c->type, c->root, c->comm);
        }
    switch (c->coll) {
    case C_ALLGATHER: return MPI_Allgather(c->sbuf, n, c->type, c->rbuf, n, c->type, c->comm);
    case C_ALLREDUCE: return MPI_Allreduce(c->sbuf, c->rbuf, n, c->type, c->op, c->comm);
    case C_ALLTOALL: return MPI_Alltoall(c->sbuf, n, c->type, c->rbuf, n, c->type, c->comm);
    case C_BCAST: return MPI_Bcast(c->rank == c->root ? c->sbuf : c->rbuf, n, c->type, c->root, c->comm);
    case C_GATHER: return MPI_Gather(c->sbuf, n, c->type, c->rbuf, n, c->type, c->root, c->comm);
    case C_REDUCE: return MPI_Reduce(c->sbuf, c->rbuf, n, c->type, c->op, c->root, c->comm);
    case C_RSB: return MPI_Reduce_scatter_block(c->sbuf, c->rbuf, n, c->type, c->op, c->comm);
    case C_SCAN: return MPI_Scan(c->sbuf, c->rbuf, n, c->type, c->op, c->comm);
    case C_SCATTER: return MPI_Scatter(c->sbuf, n, c->type, c->rbuf, n, c->type, c->root, c->comm);
    }
    return MPI_ERR_OTHER;
}

/* Bytes of the send and receive buffers a call of `count` elements touches. */
static void buffer_sizes(int coll, size_t block, int p, size_t *s, size_t *r)
{
    switch (coll) {
    case C_ALLGATHER: *s = block, *r = block * (size_t)p; break;
    case C_ALLTOALL: *s = *r = block * (size_t)p; break;
    case C_GATHER: *s = block, *r = block * (size_t)p; break;
    case C_SCATTER: *s = block * (size_t)p, *r = block; break;
    case C_RSB: *s = block * (size_t)p, *r = block; break;
    default: *s = *r = block; break;
    }
}

/* The message size the library keys profiles by (tune_internal.h: mg_call.bytes). */
static size_t key_bytes(int coll, size_t block, int p) { return coll == C_RSB ? block * (size_t)p : block; }

typedef struct {
    const char *name;
    MPI_Datatype type;
} named_type;
static const named_type types[] = {{"byte", MPI_BYTE}, {"int", MPI_INT}, {"double", MPI_DOUBLE}};
typedef struct {
    const char *name;
    MPI_Op op;
} named_op;
static const named_op ops[] = {{"bor", MPI_BOR}, {"sum", MPI_SUM}, {"max", MPI_MAX}};

static void usage(const mg_bench *b)
{
    if (b->rank != 0) return;
    fprintf(stderr,
            "usage: mpiexec -n P mg_collbench [options]\n"
            "  --collectives LIST   allgather,allreduce,alltoall,bcast,gather,reduce,reduce_scatter_block,scan,\n"
            "                       scatter (default all)\n"
            "  --sizes LIST         message sizes in bytes (default 002 Fig. 4: 1,2,4,8,32,64,100,512,1024,4096,\n"
            "                       8192,16000,32768,50000,100000); reduce_scatter_block: the whole vector\n"
            "  --impls LIST         default and mock-up names, or all (default all)\n"
            "  --profiles DIR       also measure `tuned`: the library with the profiles in DIR\n"
            "  --datatype NAME      byte (default), int, double\n"
            "  --op NAME            bor (default), sum, max\n"
            "  --root R             root of the rooted collectives (default 0)\n"
            "  --msg-pool BYTES     capacity of the library's message pool (MPIGUIDE_TUNE_MSG_POOL, 64M):\n"
            "                       a mock-up that needs more runs natively (recorded as a skip)\n"
            "  --int-pool BYTES     capacity of the library's int-vector pool (MPIGUIDE_TUNE_INT_POOL, 256k)\n"
            "  --check-only         compare every configuration with the native call, time nothing\n"
            "%s",
            mg_bench_common_usage());
}

/* Fills the send buffer with rank-dependent bytes; for reductions on int or
 * double, small values so that sums stay exact and identical in any order. */
static void fill(call_ctx *c, size_t sbytes, size_t rbytes, size_t tsize)
{
    for (size_t i = 0; i < sbytes; i++) c->sbuf[i] = mg_pattern_byte((unsigned)c->rank + 1u, i);
    if (c->type == MPI_INT)
        for (size_t i = 0; i < sbytes / tsize; i++) ((int *)c->sbuf)[i] = (int)((i * 7u + (size_t)c->rank) % 100u);
    if (c->type == MPI_DOUBLE)
        for (size_t i = 0; i < sbytes / tsize; i++) ((double *)c->sbuf)[i] = (double)((i + (size_t)c->rank) % 64u);
    memset(c->rbuf, MG_BENCH_GUARD, rbytes);
}

/* Runs the library's call and the native one on the same inputs; returns 1 on
 * every rank if all results match, and sets *fell_back if the library ran the
 * native code instead of the forced mock-up. */
static int check(mg_bench *b, call_ctx *c, size_t sbytes, size_t rbytes, size_t tsize, unsigned char *want,
                 const char *impl, int *fell_back, char *msg, size_t len)
{
    fill(c, sbytes, rbytes, tsize);
    c->native = 1;
    int rc = do_call(c);
    memcpy(want, c->rbuf, rbytes);
    memset(c->rbuf, MG_BENCH_GUARD, rbytes);
    c->native = 0;
    int rc2 = do_call(c);
    const char *ran = mg_tune_last_impl(coll_names[c->coll]);
    int local_fb = ran && strcmp(ran, impl) != 0 && strcmp(impl, "tuned") != 0;
    long long j = mg_first_diff(c->rbuf, want, rbytes);
    int ok = rc == rc2 && j < 0, all_ok = 0;
    msg[0] = '\0';
    if (!ok)
        snprintf(msg, len, "rank %d: %s", b->rank,
                 rc != rc2 ? "return codes differ from the native call" : "result differs from the native call");
    /* bookkeeping goes around the library, whatever it is forced to */
    PMPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, b->comm);
    PMPI_Allreduce(&local_fb, fell_back, 1, MPI_INT, MPI_LOR, b->comm);
    c->native = 0;
    return all_ok;
}

static int fail(mg_bench *b)
{
    mg_bench_end(b);
    return 2;
}

static int run(int argc, char **argv)
{
    mg_bench b;
    mg_bench_init(&b, "collbench", MPI_COMM_WORLD);
    const char *colls_arg = "allgather,allreduce,alltoall,bcast,gather,reduce,reduce_scatter_block,scan,scatter";
    const char *sizes_arg = "1,2,4,8,32,64,100,512,1024,4096,8192,16000,32768,50000,100000";
    const char *impls_arg = "all", *profiles = NULL, *type_arg = "byte", *op_arg = "bor", *root_arg = "0";
    int check_only = 0;
    for (int i = 1; i < argc; i++) {
        int r = mg_bench_option(&b, argc, argv, &i);
        if (r > 0) continue;
        if (r < 0) return fail(&b);
        const char *opt = argv[i];
        static const char *const valued[] = {"--collectives", "--sizes", "--impls",    "--profiles", "--datatype",
                                             "--op",          "--root",  "--msg-pool", "--int-pool"};
        const char *pool_arg; /* read by main() before MPI_Init */
        const char **dst[] = {&colls_arg, &sizes_arg, &impls_arg, &profiles, &type_arg,
                              &op_arg,    &root_arg,  &pool_arg,  &pool_arg};
        const char *val;
        int known = mg_bench_valued_option(&b, argc, argv, &i, valued, (int)(sizeof valued / sizeof *valued), &val);
        if (known == -2) return fail(&b);
        if (known >= 0) {
            *dst[known] = val;
        } else if (strcmp(opt, "--check-only") == 0) {
            check_only = 1;
        } else if (strcmp(opt, "--help") == 0) {
            usage(&b);
            mg_bench_end(&b);
            return 0;
        } else {
            mg_bench_error(&b, "unknown option '%s' (try --help)", opt);
            return fail(&b);
        }
    }

    int colls[NCOLLS], ncolls = mg_parse_names(&b, "collective", colls_arg, coll_names, NCOLLS, colls);
    if (ncolls < 0) return fail(&b);
    size_t sizes[MAX_SIZES];
    int nsizes;
    if (mg_parse_size_list(sizes_arg, sizes, MAX_SIZES, &nsizes) != 0) {
        mg_bench_error(&b, "bad --sizes '%s': comma-separated byte counts (at most %d)", sizes_arg, MAX_SIZES);
        return fail(&b);
    }
    const named_type *nt = NULL;
    const named_op *no = NULL;
    for (size_t k = 0; k < sizeof types / sizeof *types; k++)
        if (strcmp(type_arg, types[k].name) == 0) nt = &types[k];
    for (size_t k = 0; k < sizeof ops / sizeof *ops; k++)
        if (strcmp(op_arg, ops[k].name) == 0) no = &ops[k];
    if (!nt || !no) {
        mg_bench_error(
            &b, !nt ? "unknown --datatype '%s' (known: byte, int, double)" : "unknown --op '%s' (known: bor, sum, max)",
            !nt ? type_arg : op_arg);
        return fail(&b);
    }
    if (no->op == MPI_BOR && nt->type == MPI_DOUBLE) {
        mg_bench_error(&b, "--op bor needs an integer or byte --datatype");
        return fail(&b);
    }
    int root;
    if (mg_parse_int(root_arg, 0, b.size - 1, &root) != 0) {
        mg_bench_error(&b, "bad --root '%s': a rank from 0 to %d", root_arg, b.size - 1);
        return fail(&b);
    }
    if (b.size < 2) {
        mg_bench_error(&b, "collectives need at least 2 processes (got %d)", b.size);
        return fail(&b);
    }
    if (profiles && mg_tune_load_profiles(profiles) != MG_TUNE_SUCCESS) {
        mg_bench_error(&b, "cannot use the profiles in %s (see the warnings above)", profiles);
        return fail(&b);
    }
    int tsize;
    MPI_Type_size(nt->type, &tsize);
    for (int s = 0; s < nsizes; s++)
        if (sizes[s] == 0 || sizes[s] % (size_t)tsize || sizes[s] > (size_t)INT_MAX / (size_t)b.size) {
            mg_bench_error(&b, "message size %zu is not a positive multiple of the %s size (%d bytes) below %d",
                           sizes[s], nt->name, tsize, INT_MAX / b.size);
            return fail(&b);
        }

    mg_bench_param(&b, "collectives", "%s", colls_arg);
    mg_bench_param(&b, "sizes", "%s", sizes_arg);
    mg_bench_param(&b, "impls", "%s", impls_arg);
    mg_bench_param(&b, "profiles", "%s", profiles ? profiles : "");
    mg_bench_param(&b, "datatype", "%s", nt->name);
    mg_bench_param(&b, "op", "%s", no->name);
    mg_bench_param(&b, "root", "%d", root);
    mg_bench_param(&b, "check_only", "%d", check_only);
    if (mg_bench_begin(&b, "collective impl msize") != 0) MPI_Abort(MPI_COMM_WORLD, 2);

    size_t max_block = 0;
    for (int s = 0; s < nsizes; s++) max_block = sizes[s] > max_block ? sizes[s] : max_block;
    size_t cap = max_block * (size_t)b.size;
    call_ctx c = {.root = root, .rank = b.rank, .size = b.size, .type = nt->type, .op = no->op, .comm = MPI_COMM_WORLD};
    c.sbuf = mg_alloc64(cap);
    c.rbuf = mg_alloc64(cap);
    unsigned char *want = mg_alloc64(cap);
    if (!c.sbuf || !c.rbuf || !want) {
        mg_bench_error(&b, "cannot allocate 3 x %zu bytes", cap);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }

    /* t_nrep1 (002 Sec. 4.2): the first collective, native, on its smallest size. */
    if (!check_only) {
        mg_tune_set_mode(MG_TUNE_OFF);
        c.coll = colls[0];
        c.count = 1;
        c.native = 1;
        fill(&c, (size_t)tsize * (size_t)b.size, (size_t)tsize * (size_t)b.size, (size_t)tsize);
        if (mg_bench_calibrate(&b, do_call, &c) != MPI_SUCCESS) MPI_Abort(MPI_COMM_WORLD, 2);
    }

    int nconfigs = 0;
    for (int k = 0; k < ncolls && !b.calibrate_only; k++) {
        c.coll = colls[k];
        const char *cname = coll_names[c.coll];
        const char *impls[MAX_IMPLS + 1];
        int nimpls = 0, total = mg_tune_nimpls(cname);
        for (int i = 0; i < total && nimpls < MAX_IMPLS; i++) {
            const char *name = mg_tune_impl_name(cname, i);
            if (strcmp(impls_arg, "all") == 0)
                impls[nimpls++] = name;
            else {
                char *copy = strdup(impls_arg), *save = NULL;
                for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save))
                    if (strcmp(t, name) == 0) impls[nimpls++] = name;
                free(copy);
            }
        }
        for (int i = 0; i < total; i++)
            mg_bench_note(&b, "mockup", mg_tune_impl_name(cname, i), "%d %s", mg_tune_impl_guideline(cname, i),
                          mg_tune_impl_formula(cname, i));
        if (profiles) impls[nimpls++] = "tuned";
        for (int s = 0; s < nsizes; s++) {
            size_t block = sizes[s];
            if (c.coll == C_RSB) block = block / (size_t)b.size / (size_t)tsize * (size_t)tsize;
            if (block == 0) continue; /* reduce_scatter_block needs one element per process */
            size_t sbytes, rbytes, msize = key_bytes(c.coll, block, b.size);
            buffer_sizes(c.coll, block, b.size, &sbytes, &rbytes);
            c.count = (int)(block / (size_t)tsize);
            for (int i = 0; i < nimpls; i++) {
                char label[256], msg[256];
                snprintf(label, sizeof label, "%s %s %zu", cname, impls[i], msize);
                if (strcmp(impls[i], "tuned") == 0)
                    mg_tune_set_mode(MG_TUNE_TUNED);
                else {
                    mg_tune_set_mode(MG_TUNE_FORCED);
                    mg_tune_force(cname, impls[i]);
                }
                int fell_back = 0;
                nconfigs++;
                if (!check(&b, &c, sbytes, rbytes, (size_t)tsize, want, impls[i], &fell_back, msg, sizeof msg)) {
                    mg_bench_config_error(&b, label, msg);
                    continue;
                }
                if (fell_back) {
                    mg_bench_note(&b, "skip", label,
                                  "the library ran the native call: %s does not apply here "
                                  "or its extra memory exceeds the pool",
                                  impls[i]);
                    continue;
                }
                if (!check_only && mg_bench_measure(&b, label, msize, do_call, &c) != MPI_SUCCESS)
                    mg_bench_config_error(&b, label, "an MPI call failed during measurement");
            }
            mg_tune_force(cname, "default");
        }
    }
    mg_tune_set_mode(MG_TUNE_OFF);
    if (b.rank == 0 && b.out) mg_tune_write_report(b.out);
    if (check_only && b.rank == 0)
        fprintf(stderr, "collbench: %d configurations compared with the native calls, %d differ\n", nconfigs, b.errors);
    free(c.sbuf);
    free(c.rbuf);
    free(want);
    return mg_bench_end(&b);
}

/* The library reads its pool sizes at MPI_Init, from the environment. */
static void set_pools_from_options(int argc, char **argv)
{
    for (int i = 1; i + 1 < argc; i++) {
        if (strcmp(argv[i], "--msg-pool") == 0) setenv("MPIGUIDE_TUNE_MSG_POOL", argv[i + 1], 1);
        if (strcmp(argv[i], "--int-pool") == 0) setenv("MPIGUIDE_TUNE_INT_POOL", argv[i + 1], 1);
    }
}

int main(int argc, char **argv)
{
    set_pools_from_options(argc, argv);
    MPI_Init(&argc, &argv);
    int status = run(argc, argv);
    MPI_Finalize();
    return status;
}
