/* Measurement core shared by every mpiguide driver.
 *
 * A driver reads its command line (mg_options.h: the core's options, the
 * driver's own, --help and --list), declares its parameters, writes the raw
 * header, then calls mg_bench_measure() once per configuration with an
 * operation callback. The core synchronizes every
 * repetition, times it locally with MPI_Wtime, reduces the per-repetition
 * maximum over ranks to rank 0 and writes one raw row per repetition. Nothing
 * is averaged here: statistics live in the Python analysis.
 *
 * Raw format (docs/formats.md): `#@key=value` lines, one line of column names,
 * one row per repetition, and `#@end=ok` once the driver finished normally.
 */
#ifndef MG_BENCH_H
#define MG_BENCH_H

#include <mpi.h>
#include <stddef.h>
#include <stdio.h>

typedef enum { MG_SYNC_BARRIER, MG_SYNC_DISSEM } mg_sync_kind;
typedef enum { MG_NREP_RULE, MG_NREP_FIXED, MG_NREP_ESTIMATE } mg_nrep_method;

/* Parameters of the NREP estimation of Hunold and Carpen-Amarie (2018), Section 4.2. */
typedef struct {
    double rse_calib;   /* RSE the smallest message must reach (0.01) */
    double rse_batch;   /* RSE after b1 below which b2 is skipped */
    int b1, b2;         /* batch sizes per configuration (5, 5) */
    int k_min;          /* K: lower bound on nrep */
    int nrep_max;       /* upper bound so that a tiny l_min cannot explode nrep */
    double t1;          /* t_nrep1 in seconds; < 0 means: calibrate in this launch */
    double calib_max_s; /* give up calibrating after this much measured time */
} mg_nrep_estimate;

/* What mg_bench_init() sets and --list prints: --sync barrier, --nrep rule
 * and the estimation's parameters. */
#define MG_BENCH_DEFAULT_SYNC MG_SYNC_BARRIER
#define MG_BENCH_DEFAULT_NREP MG_NREP_RULE
extern const mg_nrep_estimate mg_nrep_estimate_defaults;

/* "barrier", "dissem"; "rule", "fixed", "estimate" (as --sync, --nrep and the header say). */
const char *mg_sync_name(mg_sync_kind s);
const char *mg_nrep_method_name(mg_nrep_method m);
/* "single", "funneled", "serialized", "multiple" (--thread-level, #@thread_level): the MPI_THREAD_ level of a
 * name, -1 if none; the name of a level, NULL if none. */
int mg_thread_level_of(const char *name);
const char *mg_thread_level_name(int level);

#define MG_BENCH_MAX_PARAMS 64

typedef struct {
    MPI_Comm comm; /* for sync and reductions: a private duplicate, or the driver's (mg_bench_init_shared) */
    int owns_comm;
    int rank, size;
    const char *driver;
    mg_sync_kind sync;
    mg_nrep_method nrep_method;
    int nrep_fixed;
    mg_nrep_estimate est;
    int calibrate_only;
    const char *out_path;
    FILE *out; /* rank 0 only */
    int nparams;
    char *params[MG_BENCH_MAX_PARAMS]; /* "key=value", written in the header */
    double *local, *reduced;
    size_t cap;
    int errors;          /* configurations that failed their data check */
    unsigned long order; /* --order-seed: the order of interleaved sides, the same on every rank */
} mg_bench;

/* One timed operation. Returns MPI_SUCCESS or an MPI error code. */
typedef int (*mg_bench_op)(void *ctx);

/* Pure helpers (unit-tested). */
int mg_nrep_rule(size_t msize_bytes);  /* Carpen-Amarie et al. (2016), Section 2.3.2: 100 / 50 / 20 */
double mg_rse(const double *x, int n); /* relative standard error, sd/sqrt(n)/mean */
int mg_nrep_from_latencies(double t1, const double *lat, int n, int k_min, int nrep_max);

int mg_dissem_barrier(MPI_Comm comm);
/* The synchronization of b->sync (--sync) on b->comm, as before every repetition. */
int mg_bench_sync(const mg_bench *b);

/* Sets the defaults; the driver then reads its command line (mg_options.h). */
int mg_bench_init(mg_bench *b, const char *driver, MPI_Comm comm);
/* The same with the bookkeeping on comm itself rather than a duplicate: for a driver whose own calls on comm are
 * all collectives (the bookkeeping's point-to-point messages cannot match them), where a communicator costs much
 * (SimGrid SMPI maps each one's nodes with p^2 simulated messages at its first collective). */
int mg_bench_init_shared(mg_bench *b, const char *driver, MPI_Comm comm);

/* printf-style: records one header parameter. */
void mg_bench_param(mg_bench *b, const char *key, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Prints an error on rank 0 prefixed with the driver name. */
void mg_bench_error(const mg_bench *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Opens the output and writes the header and the column line. `columns` are the
 * configuration columns; the core appends "rep time_s". */
int mg_bench_begin(mg_bench *b, const char *columns);

/* In estimate mode without a given t1, measures t_nrep1 with `op` (the smallest
 * message) and records it; a no-op otherwise. */
int mg_bench_calibrate(mg_bench *b, mg_bench_op op, void *ctx);

/* Measures one configuration. `label` holds the values of the configuration
 * columns, space separated; msize_bytes drives the nrep rule. */
int mg_bench_measure(mg_bench *b, const char *label, size_t msize_bytes, mg_bench_op op, void *ctx);
/* The same with `calls` consecutive calls of op per repetition, recording the
 * time per call: for operations too short to time one by one. */
int mg_bench_measure_calls(mg_bench *b, const char *label, size_t msize_bytes, mg_bench_op op, void *ctx, int calls);
/* One side of an interleaved measurement: `calls` calls of op(ctx) per
 * repetition; before(ctx), if given, runs untimed before each of them (to set
 * a library mode, say). */
typedef struct {
    const char *label;
    mg_bench_op op;
    void *ctx;
    int calls;
    mg_bench_op before;
} mg_bench_side;
/* n sides measured interleaved: each repetition times every side once, in an
 * order drawn anew for every repetition from --order-seed (the same on every
 * rank, recorded in the header as #@order_seed), so that a slow phase of the
 * machine hits all sides alike and their ratios hold. Writes the lines n
 * calls of mg_bench_measure_calls would; with the estimated nrep, all take
 * the largest any of them needs. If a side fails, its index goes to *failed
 * (when failed is not NULL; else -1). */
int mg_bench_measure_interleaved(mg_bench *b, int n, const mg_bench_side *sides, size_t msize_bytes, int *failed);
/* The order of one repetition of n interleaved sides: a permutation of 0..n-1
 * drawn from *state, which starts at b->order (--order-seed) for a driver's
 * own interleaved loop. */
void mg_bench_shuffle(unsigned long long *state, int *order, int n);
/* n operations on one context measured interleaved (mg_bench_measure_interleaved). */
int mg_bench_measure_side_by_side(mg_bench *b, int n, const char *const *labels, size_t msize_bytes,
                                  const mg_bench_op *ops, void *ctx, const int *calls, int *failed);

/* Records that a configuration failed its data check (no timing is written). */
void mg_bench_config_error(mg_bench *b, const char *label, const char *what);
/* A data check's verdict agreed on by every rank (collective over b->comm): msg (len bytes) is this rank's
 * failure, empty if it passed. 1 on every rank if all passed; else 0, and the lowest failing rank's msg,
 * with how many ranks failed, is recorded under label (mg_bench_config_error; msg then holds it on rank 0). */
int mg_bench_check_agreed(mg_bench *b, char *msg, int len, const char *label);

/* Writes a per-configuration note `#@<kind>[<label>]=<value>` (rank 0), e.g. the
 * engine bench's info, normal and skip lines; newlines in the value become spaces. */
void mg_bench_note(mg_bench *b, const char *kind, const char *label, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Writes the end marker, closes the output and frees. Returns the driver's exit
 * status: 0, or 3 if any configuration failed its check. */
int mg_bench_end(mg_bench *b);

#endif
