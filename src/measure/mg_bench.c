#define _POSIX_C_SOURCE 200809L
#include "mg_bench.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MG_DISSEM_TAG 4711
#define MG_CHECK_TAG 4712

const mg_nrep_estimate mg_nrep_estimate_defaults = {.rse_calib = 0.01,
                                                    .rse_batch = 0.05,
                                                    .b1 = 5,
                                                    .b2 = 5,
                                                    .k_min = 10,
                                                    .nrep_max = 10000,
                                                    .t1 = -1.0,
                                                    .calib_max_s = 10.0};

static const char *const sync_names[] = {"barrier", "dissem"};
static const char *const nrep_names[] = {"rule", "fixed", "estimate"};

const char *mg_sync_name(mg_sync_kind s) { return (unsigned)s < 2 ? sync_names[s] : NULL; }
const char *mg_nrep_method_name(mg_nrep_method m) { return (unsigned)m < 3 ? nrep_names[m] : NULL; }

static const struct {
    const char *name;
    int level;
} thread_levels[] = {{"single", MPI_THREAD_SINGLE},
                     {"funneled", MPI_THREAD_FUNNELED},
                     {"serialized", MPI_THREAD_SERIALIZED},
                     {"multiple", MPI_THREAD_MULTIPLE}};

int mg_thread_level_of(const char *name)
{
    for (size_t k = 0; name && k < sizeof thread_levels / sizeof thread_levels[0]; k++)
        if (strcmp(name, thread_levels[k].name) == 0) return thread_levels[k].level;
    return -1;
}

const char *mg_thread_level_name(int level)
{
    for (size_t k = 0; k < sizeof thread_levels / sizeof thread_levels[0]; k++)
        if (thread_levels[k].level == level) return thread_levels[k].name;
    return NULL;
}

int mg_nrep_rule(size_t msize_bytes)
{
    if (msize_bytes <= 32 * 1024) return 100;
    if (msize_bytes <= 320 * 1024) return 50;
    return 20;
}

double mg_rse(const double *x, int n)
{
    if (n < 2) return INFINITY;
    double mean = 0.0;
    for (int i = 0; i < n; i++) mean += x[i];
    mean /= n;
    if (mean <= 0.0) return INFINITY;
    double ss = 0.0;
    for (int i = 0; i < n; i++) ss += (x[i] - mean) * (x[i] - mean);
    double sd = sqrt(ss / (n - 1));
    return sd / sqrt((double)n) / mean;
}

int mg_nrep_from_latencies(double t1, const double *lat, int n, int k_min, int nrep_max)
{
    double lmin = INFINITY;
    for (int i = 0; i < n; i++)
        if (lat[i] < lmin) lmin = lat[i];
    double want = (lmin > 0.0 && isfinite(lmin)) ? ceil(t1 / lmin) : (double)nrep_max;
    if (want > nrep_max) want = nrep_max;
    int nrep = (int)want;
    return nrep < k_min ? k_min : nrep;
}

int mg_dissem_barrier(MPI_Comm comm)
{
    int rank, size, rc;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    for (int d = 1; d < size; d <<= 1) {
        rc = MPI_Sendrecv(NULL, 0, MPI_BYTE, (rank + d) % size, MG_DISSEM_TAG, NULL, 0, MPI_BYTE,
                          (rank - d + size) % size, MG_DISSEM_TAG, comm, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS) return rc;
    }
    return MPI_SUCCESS;
}

int mg_bench_sync(const mg_bench *b)
{
    return b->sync == MG_SYNC_DISSEM ? mg_dissem_barrier(b->comm) : MPI_Barrier(b->comm);
}

void mg_bench_error(const mg_bench *b, const char *fmt, ...)
{
    if (b->rank != 0) return;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: error: ", b->driver);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

static int init_on(mg_bench *b, const char *driver, MPI_Comm comm, int duplicate)
{
    memset(b, 0, sizeof *b);
    b->driver = driver;
    b->sync = MG_BENCH_DEFAULT_SYNC;
    b->nrep_method = MG_BENCH_DEFAULT_NREP;
    b->est = mg_nrep_estimate_defaults;
    b->order = 1;
    b->comm = comm;
    if (duplicate) {
        int rc = MPI_Comm_dup(comm, &b->comm);
        if (rc != MPI_SUCCESS) return rc;
        b->owns_comm = 1;
    }
    MPI_Comm_rank(b->comm, &b->rank);
    MPI_Comm_size(b->comm, &b->size);
    return MPI_SUCCESS;
}

int mg_bench_init(mg_bench *b, const char *driver, MPI_Comm comm)
{
    return init_on(b, driver, comm, 1);
}

int mg_bench_init_shared(mg_bench *b, const char *driver, MPI_Comm comm)
{
    return init_on(b, driver, comm, 0);
}

void mg_bench_param(mg_bench *b, const char *key, const char *fmt, ...)
{
    if (b->nparams >= MG_BENCH_MAX_PARAMS) return;
    char val[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(val, sizeof val, fmt, ap);
    va_end(ap);
    size_t len = strlen(key) + strlen(val) + 2;
    char *kv = malloc(len);
    if (!kv) return;
    snprintf(kv, len, "%s=%s", key, val);
    b->params[b->nparams++] = kv;
}

/* Header values are single lines: the library version string has newlines. */
static void put_oneline(FILE *f, const char *s)
{
    for (; *s; s++) {
        if (*s == '\n') {
            if (s[1]) fputs(" | ", f);
        } else if (*s != '\r') {
            fputc(*s == '\t' ? ' ' : *s, f);
        }
    }
}

/* The host of every rank (MPI_Get_processor_name), gathered on rank 0: rank i's
 * name at i * MPI_MAX_PROCESSOR_NAME there, NULL elsewhere or without memory
 * (the header then leaves the placement out). Collective. */
static char *gather_hosts(const mg_bench *b)
{
    char mine[MPI_MAX_PROCESSOR_NAME] = {0};
    int len = 0, ok = 1;
    MPI_Get_processor_name(mine, &len);
    char *all = NULL;
    if (b->rank == 0) {
        all = calloc((size_t)b->size, MPI_MAX_PROCESSOR_NAME);
        ok = all != NULL;
    }
    /* every rank takes part whatever rank 0's memory says: a collective is never skipped on one rank */
    PMPI_Gather(mine, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, 0, b->comm);
    return ok ? all : NULL;
}

/* #@hosts (rank order), #@nodes and #@ppn (processes per node; 0 when the nodes
 * hold different numbers): the placement the launch really got. */
static void put_placement(FILE *f, const char *hosts, int size)
{
    if (!hosts) return;
    int nodes = 0, ppn = -1;
    fputs("#@hosts=", f);
    for (int i = 0; i < size; i++) {
        const char *h = hosts + (size_t)i * MPI_MAX_PROCESSOR_NAME;
        fprintf(f, "%s%s", i ? "," : "", h);
        int first = 1, count = 0;
        for (int j = 0; j < size; j++) {
            if (strcmp(h, hosts + (size_t)j * MPI_MAX_PROCESSOR_NAME) != 0) continue;
            if (j < i) first = 0;
            count++;
        }
        if (!first) continue;
        nodes++;
        ppn = ppn < 0 || ppn == count ? count : 0;
    }
    fprintf(f, "\n#@nodes=%d\n#@ppn=%d\n", nodes, ppn);
}

int mg_bench_begin(mg_bench *b, const char *columns)
{
    char *hosts = gather_hosts(b);
    if (b->rank != 0) return 0;
    if (b->out_path) {
        b->out = fopen(b->out_path, "w");
        if (!b->out) {
            mg_bench_error(b, "cannot write %s: %s", b->out_path, strerror(errno));
            free(hosts);
            return -1;
        }
    } else {
        b->out = stdout;
    }
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int len, major, minor, flag, *is_global = NULL;
    MPI_Get_library_version(version, &len);
    MPI_Get_version(&major, &minor);
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_WTIME_IS_GLOBAL, &is_global, &flag);
    time_t now = time(NULL);
    char stamp[32];
    strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));

    FILE *f = b->out;
    fprintf(f, "#@mpiguide_raw=1\n#@driver=%s\n#@library_version=", b->driver);
    put_oneline(f, version);
    fprintf(f, "\n#@mpi_version=%d.%d\n#@nprocs=%d\n", major, minor, b->size);
    put_placement(f, hosts, b->size);
    free(hosts);
    fprintf(f, "#@sync=%s\n", mg_sync_name(b->sync));
    int provided;
    MPI_Query_thread(&provided);
    fprintf(f, "#@thread_level=%s\n", mg_thread_level_name(provided));
    fprintf(f, "#@clock=MPI_Wtime\n#@wtick=%.3e\n#@wtime_is_global=%d\n", MPI_Wtick(),
            (flag && is_global) ? *is_global : 0);
    fprintf(f, "#@time_reduction=max_over_ranks\n#@start_time=%s\n", stamp);
    fprintf(f, "#@nrep_method=%s\n", mg_nrep_method_name(b->nrep_method));
    if (b->nrep_method == MG_NREP_FIXED) fprintf(f, "#@nrep=%d\n", b->nrep_fixed);
    if (b->nrep_method == MG_NREP_ESTIMATE)
        fprintf(f, "#@nrep_estimate=rse_calib=%g,rse_batch=%g,b1=%d,b2=%d,K=%d,nrep_max=%d\n", b->est.rse_calib,
                b->est.rse_batch, b->est.b1, b->est.b2, b->est.k_min, b->est.nrep_max);
    /* the core's measurements interleave; a driver that times its own loop says how (mg_stencil) */
    fprintf(f, "#@order_seed=%lu\n", b->order);
    int own_order = 0;
    for (int i = 0; i < b->nparams; i++) own_order |= strncmp(b->params[i], "order=", 6) == 0;
    if (!own_order) fputs("#@order=interleaved\n", f);
    for (int i = 0; i < b->nparams; i++) {
        fputs("#@", f);
        put_oneline(f, b->params[i]);
        fputc('\n', f);
    }
    fprintf(f, "%s rep time_s\n", columns);
    fflush(f);
    return 0;
}

static int reserve(mg_bench *b, size_t n)
{
    if (n <= b->cap) return 0;
    if (n < 2 * b->cap) n = 2 * b->cap;
    double *l = realloc(b->local, n * sizeof *l);
    if (!l) return -1;
    b->local = l;
    double *r = realloc(b->reduced, n * sizeof *r);
    if (!r) return -1;
    b->reduced = r;
    b->cap = n;
    return 0;
}

/* One synchronized, timed repetition; every rank returns the maximum over ranks. */
static int timed_max(mg_bench *b, mg_bench_op op, void *ctx, double *t)
{
    int rc = mg_bench_sync(b);
    if (rc != MPI_SUCCESS) return rc;
    double t0 = MPI_Wtime();
    rc = op(ctx);
    double local = MPI_Wtime() - t0;
    if (rc != MPI_SUCCESS) return rc;
    /* The core's own collectives use the profiling names, so that a tuning
     * library linked into a driver never intercepts them. */
    return PMPI_Allreduce(&local, t, 1, MPI_DOUBLE, MPI_MAX, b->comm);
}

int mg_bench_calibrate(mg_bench *b, mg_bench_op op, void *ctx)
{
    if (b->nrep_method != MG_NREP_ESTIMATE || b->est.t1 > 0) return MPI_SUCCESS;
    /* A single early outlier keeps the RSE near 1 for a long time, so the
     * search is bounded by wall-clock time as well as by its target. */
    const int min_reps = 10;
    double total = 0.0, rse = INFINITY, start = MPI_Wtime();
    int n = 0, over_time = 0;
    while (!over_time) {
        if (reserve(b, (size_t)n + 1)) return MPI_ERR_NO_MEM;
        int rc = timed_max(b, op, ctx, &b->reduced[n]);
        if (rc != MPI_SUCCESS) return rc;
        total += b->reduced[n++];
        if (n >= min_reps) rse = mg_rse(b->reduced, n);
        if (rse < b->est.rse_calib) break;
        /* Rank 0's clock decides for everyone, so all ranks stop together. */
        over_time = MPI_Wtime() - start >= b->est.calib_max_s;
        rc = PMPI_Bcast(&over_time, 1, MPI_INT, 0, b->comm);
        if (rc != MPI_SUCCESS) return rc;
    }
    b->est.t1 = total;
    if (b->rank == 0) {
        fprintf(b->out, "#@t_nrep1=%.9e\n#@t_nrep1_reps=%d\n#@t_nrep1_rse=%.6f\n#@t_nrep1_converged=%d\n", total, n,
                rse, rse < b->est.rse_calib);
        fflush(b->out);
    }
    return MPI_SUCCESS;
}

static int estimate_nrep(mg_bench *b, const char *label, mg_bench_op op, void *ctx, int *nrep)
{
    int n = b->est.b1 + b->est.b2, done = 0;
    if (reserve(b, (size_t)n)) return MPI_ERR_NO_MEM;
    for (int batch = 0; batch < 2; batch++) {
        int len = batch == 0 ? b->est.b1 : b->est.b2;
        for (int i = 0; i < len; i++, done++) {
            int rc = timed_max(b, op, ctx, &b->reduced[done]);
            if (rc != MPI_SUCCESS) return rc;
        }
        if (mg_rse(b->reduced, done) < b->est.rse_batch) break;
    }
    *nrep = mg_nrep_from_latencies(b->est.t1, b->reduced, done, b->est.k_min, b->est.nrep_max);
    if (b->rank == 0) {
        double lmin = INFINITY;
        for (int i = 0; i < done; i++) lmin = b->reduced[i] < lmin ? b->reduced[i] : lmin;
        fprintf(b->out, "#@estimate[%s]=nrep:%d,l_min:%.9e,batch_reps:%d,rse:%.6f\n", label, *nrep, lmin, done,
                mg_rse(b->reduced, done));
    }
    return MPI_SUCCESS;
}

int mg_bench_measure(mg_bench *b, const char *label, size_t msize_bytes, mg_bench_op op, void *ctx)
{
    return mg_bench_measure_calls(b, label, msize_bytes, op, ctx, 1);
}

int mg_bench_measure_calls(mg_bench *b, const char *label, size_t msize_bytes, mg_bench_op op, void *ctx, int calls)
{
    return mg_bench_measure_side_by_side(b, 1, &label, msize_bytes, &op, ctx, &calls, NULL);
}

/* splitmix64: the order of the sides, reproducible from --order-seed alone. */
static unsigned long long next_random(unsigned long long *state)
{
    unsigned long long z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* A random permutation of 0..n-1 (Fisher-Yates). */
void mg_bench_shuffle(unsigned long long *state, int *order, int n)
{
    for (int i = 0; i < n; i++) order[i] = i;
    for (int i = n - 1; i > 0; i--) {
        int j = (int)(next_random(state) % (unsigned long long)(i + 1)), t = order[i];
        order[i] = order[j], order[j] = t;
    }
}

static int run_before(const mg_bench_side *s)
{
    return s->before ? s->before(s->ctx) : MPI_SUCCESS;
}

int mg_bench_measure_interleaved(mg_bench *b, int n, const mg_bench_side *sides, size_t msize_bytes, int *failed)
{
    int nrep = 0, rc;
    if (failed) *failed = -1;
    if (n < 1) return MPI_ERR_ARG;
    for (int j = 0; j < n; j++)
        if (sides[j].calls < 1) return MPI_ERR_ARG;
    switch (b->nrep_method) {
    case MG_NREP_FIXED: nrep = b->nrep_fixed; break;
    case MG_NREP_RULE: nrep = mg_nrep_rule(msize_bytes); break;
    default:
        if (b->est.t1 <= 0) return MPI_ERR_OTHER; /* mg_bench_calibrate() not called */
        for (int j = 0; j < n; j++) { /* the most any of them needs, for all */
            int need;
            rc = run_before(&sides[j]);
            if (rc == MPI_SUCCESS) rc = estimate_nrep(b, sides[j].label, sides[j].op, sides[j].ctx, &need);
            if (rc != MPI_SUCCESS) {
                if (failed) *failed = j;
                return rc;
            }
            nrep = need > nrep ? need : nrep;
        }
    }
    size_t total = (size_t)n * (size_t)nrep;
    if (total > INT_MAX) return MPI_ERR_ARG; /* one reduction of all of them */
    int *order = malloc(sizeof *order * (size_t)n);
    if (!order || reserve(b, total)) {
        free(order);
        return MPI_ERR_NO_MEM;
    }
    /* every measurement draws its orders from the seed alone, so a launch is reproducible */
    unsigned long long state = b->order;
    rc = MPI_SUCCESS;
    for (int i = 0; i < nrep && rc == MPI_SUCCESS; i++) {
        mg_bench_shuffle(&state, order, n);
        for (int k = 0; k < n && rc == MPI_SUCCESS; k++) {
            int j = order[k];
            rc = run_before(&sides[j]);
            if (rc == MPI_SUCCESS) rc = mg_bench_sync(b);
            double t0 = MPI_Wtime();
            for (int c = 0; c < sides[j].calls && rc == MPI_SUCCESS; c++) rc = sides[j].op(sides[j].ctx);
            b->local[(size_t)j * (size_t)nrep + (size_t)i] = (MPI_Wtime() - t0) / sides[j].calls;
            if (rc != MPI_SUCCESS && failed) *failed = j;
        }
    }
    free(order);
    if (rc != MPI_SUCCESS) return rc;
    /* The reduction happens after the loop so that it never perturbs a repetition. */
    rc = PMPI_Reduce(b->local, b->reduced, (int)total, MPI_DOUBLE, MPI_MAX, 0, b->comm);
    if (rc != MPI_SUCCESS) return rc;
    if (b->rank == 0) {
        for (int j = 0; j < n; j++)
            for (int i = 0; i < nrep; i++)
                fprintf(b->out, "%s %d %.9e\n", sides[j].label, i, b->reduced[(size_t)j * (size_t)nrep + (size_t)i]);
        fflush(b->out);
    }
    return MPI_SUCCESS;
}

int mg_bench_measure_side_by_side(mg_bench *b, int n, const char *const *labels, size_t msize_bytes,
                                  const mg_bench_op *ops, void *ctx, const int *calls, int *failed)
{
    mg_bench_side *sides = malloc(sizeof *sides * (size_t)(n > 0 ? n : 1));
    if (!sides) return MPI_ERR_NO_MEM;
    for (int j = 0; j < n; j++) sides[j] = (mg_bench_side){labels[j], ops[j], ctx, calls[j], NULL};
    int rc = mg_bench_measure_interleaved(b, n, sides, msize_bytes, failed);
    free(sides);
    return rc;
}

static void keyed_line(mg_bench *b, const char *kind, const char *label, const char *value)
{
    fprintf(b->out, "#@%s[%s]=", kind, label);
    put_oneline(b->out, value);
    fputc('\n', b->out);
    fflush(b->out);
}

void mg_bench_config_error(mg_bench *b, const char *label, const char *what)
{
    b->errors++;
    if (b->rank != 0) return;
    keyed_line(b, "error", label, what);
    mg_bench_error(b, "configuration '%s': %s", label, what);
}

int mg_bench_check_agreed(mg_bench *b, char *msg, int len, const char *label)
{
    int mine = msg[0] ? b->rank : INT_MAX, first = INT_MAX, failing = msg[0] != 0, nfailing = 0;
    MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, b->comm);
    if (first == INT_MAX) return 1;
    MPI_Allreduce(&failing, &nfailing, 1, MPI_INT, MPI_SUM, b->comm);
    if (first != 0) {
        if (b->rank == first)
            MPI_Send(msg, len, MPI_CHAR, 0, MG_CHECK_TAG, b->comm);
        else if (b->rank == 0)
            MPI_Recv(msg, len, MPI_CHAR, first, MG_CHECK_TAG, b->comm, MPI_STATUS_IGNORE);
    }
    if (nfailing > 1 && b->rank == 0) {
        size_t used = strlen(msg);
        snprintf(msg + used, (size_t)len - used, " (%d ranks failed)", nfailing);
    }
    mg_bench_config_error(b, label, msg);
    return 0;
}

void mg_bench_note(mg_bench *b, const char *kind, const char *label, const char *fmt, ...)
{
    if (b->rank != 0 || !b->out) return;
    va_list ap;
    va_start(ap, fmt);
    int len = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *value = len >= 0 ? malloc((size_t)len + 1) : NULL;
    if (!value) return;
    va_start(ap, fmt);
    vsnprintf(value, (size_t)len + 1, fmt, ap);
    va_end(ap);
    keyed_line(b, kind, label, value);
    free(value);
}

int mg_bench_end(mg_bench *b)
{
    if (b->rank == 0 && b->out) {
        fprintf(b->out, "#@end=%s\n", b->errors ? "errors" : "ok");
        if (b->out != stdout)
            fclose(b->out);
        else
            fflush(b->out);
    }
    for (int i = 0; i < b->nparams; i++) free(b->params[i]);
    free(b->local);
    free(b->reduced);
    if (b->owns_comm && b->comm != MPI_COMM_NULL) MPI_Comm_free(&b->comm);
    int status = b->errors ? 3 : 0;
    memset(b, 0, sizeof *b);
    b->comm = MPI_COMM_NULL;
    return status;
}
