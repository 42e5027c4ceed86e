/* A driver's command line.
 *
 * mg_bench_args() reads the whole command line of a driver: the measurement
 * core's options (--output, --sync, --nrep and the NREP estimation's), the
 * driver's own options from a table (which also gives --help and --list their
 * text), --help, --list, and an error for anything else. --list prints one
 * JSON object on rank 0: "driver", "measurement" (the core's defaults),
 * "options" (every option with its value's name and help) and whatever the
 * driver's list callback adds (its catalogs and defaults; docs/formats.md). Every message goes to rank 0's standard
 * error, prefixed with the driver's name (mg_bench_error).
 *
 * The strict parsers below are what the drivers use for option values; byte
 * counts are read by mg_parse_size() (src/common/mg_size.h), the one parser of
 * byte counts in mpiguide's C code.
 */
#ifndef MG_OPTIONS_H
#define MG_OPTIONS_H

#include "mg_bench.h"
#include "mg_json.h"

#include <stddef.h>
#include <stdio.h>

/* ---- Strict parsers: 0, or -1 for anything else ----------------------- */

/* A decimal integer in lo..hi, as strtol reads it (leading blanks and a sign
 * allowed), with nothing after it and no overflow. */
int mg_parse_int(const char *s, int lo, int hi, int *out);
/* Comma-separated byte counts as mg_parse_size() reads them (digits, then
 * optionally k, m or g for KiB, MiB, GiB, then optionally iB or B; blanks
 * around), at most max of them; one trailing comma is allowed. Zero is a
 * count: callers that need more say so. */
int mg_parse_size_list(const char *s, size_t *out, int max, int *n);
/* Comma-separated decimal integers in [min, INT_MAX], at most max of them. */
int mg_parse_long_list(const char *s, long *out, int max, int *n, long min);

/* A driver's --sizes: comma-separated byte counts (k/m/g = KiB/MiB/GiB) from 1 to INT_MAX, at most max of
 * them. 0, or -1 after the message that names the bad list or value. */
int mg_parse_sizes_option(const mg_bench *b, const char *arg, size_t *out, int max, int *n);

/* Comma-separated names out of names[0..nnames-1] (nnames <= MG_MAX_NAMES):
 * chosen gets their indices in the order given, duplicates dropped. Returns
 * the count, or -1 after printing the error that names the bad entry and the
 * known names (or says the list is empty). */
#define MG_MAX_NAMES 64
int mg_parse_names(const mg_bench *b, const char *what, const char *list, const char *const *names, int nnames,
                   int *chosen);

/* names[0..n-1] joined by sep into buf[len] (cut at len); returns buf. */
const char *mg_join_names(const char *const *names, int n, const char *sep, char *buf, size_t len);

/* --list helpers: a comma-separated list of byte counts (mg_parse_size_list)
 * or of integers (mg_parse_long_list, min 0) as a JSON array of numbers;
 * an empty array if the text does not parse. */
void mg_json_size_list(mg_json *j, const char *key, const char *text);
void mg_json_long_list(mg_json *j, const char *key, const char *text);

/* ---- The core's options -------------------------------------------------- */

/* Returns 1 if argv[*i] (and its value) was a core option and is consumed, 0 if
 * it is none, -1 on a bad or missing value (message printed). */
int mg_bench_option(mg_bench *b, int argc, char **argv, int *i);
/* The part of mg_bench_option() for drivers that time their own loop and have
 * no NREP estimation (mg_stencil): only --output, --sync, --nrep and --order-seed. */
int mg_bench_base_option(mg_bench *b, int argc, char **argv, int *i);
/* ---- A driver's command line --------------------------------------------- */

typedef enum {
    MG_OPT_VALUE,    /* --name VALUE: *(const char **)target = VALUE */
    MG_OPT_SET,      /* --name: *(const char **)target = text */
    MG_OPT_FLAG,     /* --name: *(int *)target = flag */
    MG_OPT_POSITIVE, /* --name N: *(int *)target = N, a decimal integer from 1 to INT_MAX */
} mg_opt_kind;

/* One option of a driver: how it is read, and what --help and --list say of
 * it. The table is the one description of the driver's command line. */
typedef struct {
    const char *name; /* "--sizes" */
    mg_opt_kind kind;
    void *target;
    int flag;         /* MG_OPT_FLAG */
    const char *text; /* MG_OPT_SET */
    const char *arg;  /* the value's name in --help ("LIST"); NULL for an option without a value */
    const char *help; /* what it does and its default; NULL: not shown (a testing aid) */
} mg_opt;

typedef struct {
    const char *name;     /* the executable, e.g. "mg_dtbench": --list's "driver" */
    const char *synopsis; /* --help's first line after "usage: " */
    const mg_opt *opts;   /* the driver's own options */
    int nopts;
    /* 0: every option of the core, --nrep rule by default. N > 0: a driver that
     * times its own loop: only --output, --sync, --order-seed and --nrep N,
     * default N. */
    int fixed_nrep;
    /* Adds the driver's members to --list's object (rank 0 only); may be NULL. */
    void (*list)(mg_json *j, const mg_bench *b);
} mg_cli;

#define MG_ARGS_RUN (-1)
/* Reads argv[1..argc-1] into b and the targets of cli->opts. Returns
 * MG_ARGS_RUN if the driver goes on, else its exit status: 0 after --help or
 * --list (written on rank 0), 2 after a bad option (message printed). Every
 * rank returns the same. --help prints the synopsis, the driver's options, the
 * core's; --list's "options" lists the same (name, value, help). */
int mg_bench_args(mg_bench *b, const mg_cli *cli, int argc, char **argv);

/* Ends b (mg_bench_end) and returns status: for a driver that stops early. */
int mg_bench_quit(mg_bench *b, int status);

/* A driver's main(): MPI_Init, run(argc, argv), MPI_Finalize; run's status. */
int mg_bench_main(int argc, char **argv, int (*run)(int argc, char **argv));

#endif
