#define _POSIX_C_SOURCE 200809L
/* A driver's command line; see mg_options.h. */
#include "mg_options.h"

#include "mg_size.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* Strict parsers                                                      */
/* ------------------------------------------------------------------ */

int mg_parse_int(const char *s, int lo, int hi, int *out)
{
    char *end;
    errno = 0;
    long x = strtol(s, &end, 10);
    if (end == s || *end != '\0' || errno || x < lo || x > hi) return -1;
    *out = (int)x;
    return 0;
}

static int parse_double(const char *s, double *v)
{
    char *end;
    errno = 0;
    *v = strtod(s, &end);
    return (end != s && *end == '\0' && !errno && isfinite(*v)) ? 0 : -1;
}

int mg_parse_size_list(const char *s, size_t *out, int max, int *n)
{
    *n = 0;
    const char *p = s;
    while (*p) {
        size_t len = strcspn(p, ","), v;
        char item[64];
        if (len >= sizeof item || *n >= max) return -1;
        memcpy(item, p, len);
        item[len] = '\0';
        if (mg_parse_size(item, &v) != 0) return -1;
        out[(*n)++] = v;
        p += len;
        if (*p == ',') p++;
    }
    return *n > 0 ? 0 : -1;
}

int mg_parse_long_list(const char *s, long *out, int max, int *n, long min)
{
    *n = 0;
    const char *p = s;
    while (*p) {
        char *end;
        errno = 0;
        long v = strtol(p, &end, 10);
        if (end == p || errno || v < min || v > INT_MAX || (*end != ',' && *end != '\0') || *n >= max) return -1;
        out[(*n)++] = v;
        p = *end ? end + 1 : end;
    }
    return *n > 0 ? 0 : -1;
}

int mg_parse_sizes_option(const mg_bench *b, const char *arg, size_t *out, int max, int *n)
{
    if (mg_parse_size_list(arg, out, max, n) != 0) {
        mg_bench_error(b, "bad --sizes '%s': expected comma-separated byte counts, k/m/g = KiB/MiB/GiB (at most %d)",
                       arg, max);
        return -1;
    }
    for (int s = 0; s < *n; s++)
        if (out[s] == 0 || out[s] > (size_t)INT_MAX) {
            mg_bench_error(b, "bad --sizes value %zu: sizes must be between 1 and %d bytes", out[s], INT_MAX);
            return -1;
        }
    return 0;
}

int mg_parse_names(const mg_bench *b, const char *what, const char *list, const char *const *names, int nnames,
                   int *chosen)
{
    char *copy = strdup(list), *save = NULL;
    if (!copy || nnames > MG_MAX_NAMES) {
        mg_bench_error(b, "cannot read the %s list", what);
        free(copy);
        return -1;
    }
    int n = 0, seen[MG_MAX_NAMES] = {0};
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        int k = 0;
        while (k < nnames && strcmp(names[k], tok) != 0) k++;
        if (k == nnames) {
            char known[1024];
            mg_bench_error(b, "unknown %s '%s' (known: %s)", what, tok,
                           mg_join_names(names, nnames, ", ", known, sizeof known));
            free(copy);
            return -1;
        }
        if (!seen[k]) chosen[n++] = k;
        seen[k] = 1;
    }
    free(copy);
    if (n == 0) mg_bench_error(b, "empty %s list '%s'", what, list);
    return n ? n : -1;
}

const char *mg_join_names(const char *const *names, int n, const char *sep, char *buf, size_t len)
{
    size_t pos = 0;
    buf[0] = '\0';
    for (int i = 0; i < n && pos < len; i++)
        pos += (size_t)snprintf(buf + pos, len - pos, "%s%s", i ? sep : "", names[i]);
    return buf;
}

#define LIST_MAX 256

void mg_json_size_list(mg_json *j, const char *key, const char *text)
{
    size_t v[LIST_MAX];
    long long out[LIST_MAX];
    int n = 0;
    if (mg_parse_size_list(text, v, LIST_MAX, &n) != 0) n = 0;
    for (int i = 0; i < n; i++) out[i] = (long long)v[i];
    mg_json_longs(j, key, out, n);
}

void mg_json_long_list(mg_json *j, const char *key, const char *text)
{
    long v[LIST_MAX];
    long long out[LIST_MAX];
    int n = 0;
    if (mg_parse_long_list(text, v, LIST_MAX, &n, 0) != 0) n = 0;
    for (int i = 0; i < n; i++) out[i] = v[i];
    mg_json_longs(j, key, out, n);
}

/* ------------------------------------------------------------------ */
/* The core's options                                                  */
/* ------------------------------------------------------------------ */

/* The core's options as table entries for --help and --list (mg_bench_option
 * reads them): all of them, or for a driver with a fixed nrep the four it
 * takes. Returns their count; the help texts live until the next call. */
enum { CORE_OPTS = 15 };
static int core_options(const mg_cli *cli, mg_opt *o)
{
    static char sync[96], nrep[192], calib[80], batch[80], b1[48], b2[48], kmin[64], kmax[64], cmax[80];
    const mg_nrep_estimate *e = &mg_nrep_estimate_defaults;
    snprintf(sync, sizeof sync, "synchronization before each repetition (default %s)",
             mg_sync_name(MG_BENCH_DEFAULT_SYNC));
    if (cli->fixed_nrep)
        snprintf(nrep, sizeof nrep, "repetitions (default %d)", cli->fixed_nrep);
    else
        snprintf(nrep, sizeof nrep,
                 "repetitions: the size rule (Carpen-Amarie et al. 2016), a fixed count, or the estimation "
                 "(Hunold and Carpen-Amarie 2018) (default %s)",
                 mg_nrep_method_name(MG_BENCH_DEFAULT_NREP));
    snprintf(calib, sizeof calib, "estimation: RSE target for the smallest message (%g)", e->rse_calib);
    snprintf(batch, sizeof batch, "estimation: RSE after b1 that skips batch b2 (%g)", e->rse_batch);
    snprintf(b1, sizeof b1, "estimation: first batch size (%d)", e->b1);
    snprintf(b2, sizeof b2, "estimation: second batch size (%d)", e->b2);
    snprintf(kmin, sizeof kmin, "estimation: lower bound K on nrep (%d)", e->k_min);
    snprintf(kmax, sizeof kmax, "estimation: upper bound on nrep (%d)", e->nrep_max);
    snprintf(cmax, sizeof cmax, "estimation: stop calibrating after this long (%g)", e->calib_max_s);
    const mg_opt all[CORE_OPTS] = {
        {"--output", MG_OPT_VALUE, NULL, 0, NULL, "FILE", "raw output file (default: standard output)"},
        {"--sync", MG_OPT_VALUE, NULL, 0, NULL, "barrier|dissem", sync},
        {"--nrep", MG_OPT_VALUE, NULL, 0, NULL, cli->fixed_nrep ? "N" : "rule|N|estimate", nrep},
        {"--order-seed", MG_OPT_VALUE, NULL, 0, NULL, "N",
         "the order of the sides measured interleaved, drawn anew for every repetition from this seed (default "
         "1; the runner gives each launch its own)"},
        {"--thread-level", MG_OPT_VALUE, NULL, 0, NULL, "single|funneled|serialized|multiple",
         "start MPI with MPI_Init_thread at this level, as the application does (default: MPI_Init); a library "
         "may run its calls at another speed at another level"},
        {"--t1", MG_OPT_VALUE, NULL, 0, NULL, "SECONDS", "estimation: t_nrep1 measured earlier (else calibrated here)"},
        {"--rse-calib", MG_OPT_VALUE, NULL, 0, NULL, "X", calib},
        {"--rse-batch", MG_OPT_VALUE, NULL, 0, NULL, "X", batch},
        {"--b1", MG_OPT_VALUE, NULL, 0, NULL, "N", b1},
        {"--b2", MG_OPT_VALUE, NULL, 0, NULL, "N", b2},
        {"--nrep-min", MG_OPT_VALUE, NULL, 0, NULL, "K", kmin},
        {"--nrep-max", MG_OPT_VALUE, NULL, 0, NULL, "N", kmax},
        {"--calib-max", MG_OPT_VALUE, NULL, 0, NULL, "SECONDS", cmax},
        {"--calibrate-only", MG_OPT_FLAG, NULL, 0, NULL, NULL, "estimation: only measure t_nrep1 and stop"},
        {"--list", MG_OPT_FLAG, NULL, 0, NULL, NULL,
         "print the driver's catalogs, defaults and options as one JSON object"},
    };
    int n = 0;
    for (int k = 0; k < CORE_OPTS; k++)
        if (!cli->fixed_nrep || k < 5 || k == CORE_OPTS - 1) o[n++] = all[k];
    return n;
}

/* If argv[*i] is names[k], stores the next argument in *value, advances *i
 * past it and returns k; -1 if argv[*i] is none of the names, -2 if its value
 * is missing (message printed). */
static int valued_option(const mg_bench *b, int argc, char **argv, int *i, const char *const *names, int n,
                         const char **value)
{
    for (int k = 0; k < n; k++) {
        if (strcmp(argv[*i], names[k]) != 0) continue;
        if (*i + 1 >= argc) {
            mg_bench_error(b, "option %s needs a value", argv[*i]);
            return -2;
        }
        *value = argv[++*i];
        return k;
    }
    return -1;
}

int mg_bench_base_option(mg_bench *b, int argc, char **argv, int *i)
{
    static const char *const names[] = {"--output", "--sync", "--nrep", "--order-seed", "--thread-level"};
    const char *val;
    int k = valued_option(b, argc, argv, i, names, 5, &val), n, bad = 0;
    if (k < 0) return k == -1 ? 0 : -1;
    if (k == 4) { /* MPI was started at this level (mg_bench_main) */
        int wanted = mg_thread_level_of(val), provided;
        MPI_Query_thread(&provided);
        bad = wanted < 0;
        if (!bad && provided < wanted) {
            mg_bench_error(b, "--thread-level %s: the MPI library provides %s only", val,
                           mg_thread_level_name(provided));
            return -1;
        }
    } else if (k == 3) {
        char *end;
        errno = 0;
        unsigned long v = strtoul(val, &end, 10);
        bad = errno || end == val || *end || val[0] == '-';
        if (!bad) b->order = v;
    } else if (k == 0) {
        b->out_path = val;
    } else if (k == 1) {
        if (strcmp(val, mg_sync_name(MG_SYNC_BARRIER)) == 0)
            b->sync = MG_SYNC_BARRIER;
        else if (strcmp(val, mg_sync_name(MG_SYNC_DISSEM)) == 0)
            b->sync = MG_SYNC_DISSEM;
        else
            bad = 1;
    } else {
        if (strcmp(val, mg_nrep_method_name(MG_NREP_RULE)) == 0)
            b->nrep_method = MG_NREP_RULE;
        else if (strcmp(val, mg_nrep_method_name(MG_NREP_ESTIMATE)) == 0)
            b->nrep_method = MG_NREP_ESTIMATE;
        else if (mg_parse_int(val, 1, INT32_MAX, &n) == 0)
            b->nrep_method = MG_NREP_FIXED, b->nrep_fixed = n;
        else
            bad = 1;
    }
    if (bad) {
        mg_bench_error(b, "bad value '%s' for %s", val, names[k]);
        return -1;
    }
    return 1;
}

/* The value of one of the estimation's options (opt, val); 0 or -1. */
static int estimation_value(mg_bench *b, const char *opt, const char *val)
{
    double d;
    int n;
    if (strcmp(opt, "--t1") == 0 || strcmp(opt, "--calib-max") == 0) {
        if (parse_double(val, &d) != 0 || d <= 0) return -1;
        *(opt[2] == 't' ? &b->est.t1 : &b->est.calib_max_s) = d;
    } else if (strcmp(opt, "--rse-calib") == 0 || strcmp(opt, "--rse-batch") == 0) {
        if (parse_double(val, &d) != 0 || d <= 0 || d >= 1) return -1;
        *(opt[6] == 'c' ? &b->est.rse_calib : &b->est.rse_batch) = d;
    } else {
        int *dst = strcmp(opt, "--b1") == 0         ? &b->est.b1
                   : strcmp(opt, "--b2") == 0       ? &b->est.b2
                   : strcmp(opt, "--nrep-min") == 0 ? &b->est.k_min
                                                    : &b->est.nrep_max;
        int min = (dst == &b->est.b2) ? 0 : (dst == &b->est.b1) ? 2 : 1;
        if (mg_parse_int(val, min, INT32_MAX, &n) != 0) return -1;
        *dst = n;
    }
    return 0;
}

int mg_bench_option(mg_bench *b, int argc, char **argv, int *i)
{
    int r = mg_bench_base_option(b, argc, argv, i);
    if (r != 0) return r;
    if (strcmp(argv[*i], "--calibrate-only") == 0) {
        b->calibrate_only = 1;
        return 1;
    }
    static const char *const names[] = {"--t1", "--rse-calib", "--rse-batch", "--b1",
                                        "--b2", "--nrep-min",  "--nrep-max",  "--calib-max"};
    const char *opt = argv[*i], *val;
    int k = valued_option(b, argc, argv, i, names, (int)(sizeof names / sizeof *names), &val);
    if (k < 0) return k == -1 ? 0 : -1;
    if (estimation_value(b, opt, val) != 0) {
        mg_bench_error(b, "bad value '%s' for %s", val, opt);
        return -1;
    }
    return 1;
}

/* ------------------------------------------------------------------ */
/* A driver's command line                                             */
/* ------------------------------------------------------------------ */

/* "  --name ARG   help", the help wrapped at 110 columns under its start. */
static void print_option(FILE *out, const mg_opt *o)
{
    enum { INDENT = 26, WIDTH = 110 };
    char head[80];
    snprintf(head, sizeof head, "  %s%s%s", o->name, o->arg ? " " : "", o->arg ? o->arg : "");
    int col = fprintf(out, "%s", head);
    for (const char *w = o->help; *w;) {
        int len = (int)strcspn(w, " ");
        if (col >= INDENT && (col + 1 + len > WIDTH || w == o->help)) {
            fputc('\n', out); /* a long head, or a full line */
            col = 0;
        }
        col += col < INDENT ? fprintf(out, "%*s", INDENT - col, "") : fprintf(out, " ");
        col += fprintf(out, "%.*s", len, w);
        for (w += len; *w == ' '; w++) continue;
    }
    fputc('\n', out);
}

static void usage(const mg_bench *b, const mg_cli *cli)
{
    if (b->rank != 0) return;
    printf("usage: %s\n", cli->synopsis);
    for (int k = 0; k < cli->nopts; k++)
        if (cli->opts[k].help) print_option(stdout, &cli->opts[k]);
    mg_opt core[CORE_OPTS];
    int n = core_options(cli, core);
    printf("common options:\n");
    for (int k = 0; k < n; k++) print_option(stdout, &core[k]);
    print_option(stdout, &(mg_opt){"--help", MG_OPT_FLAG, NULL, 0, NULL, NULL, "print this text"});
    fflush(stdout);
}

/* "options": every option --help shows, in its order. */
static void list_options(mg_json *j, const mg_cli *cli)
{
    mg_opt core[CORE_OPTS];
    int n = core_options(cli, core);
    mg_json_array(j, "options");
    for (int k = 0; k < cli->nopts + n; k++) {
        const mg_opt *o = k < cli->nopts ? &cli->opts[k] : &core[k - cli->nopts];
        if (!o->help) continue;
        mg_json_flat_object(j, NULL);
        mg_json_string(j, "name", o->name);
        mg_json_string(j, "value", o->arg);
        mg_json_string(j, "help", o->help);
        mg_json_close(j);
    }
    mg_json_close(j);
}

/* "measurement": the core's defaults for this driver. */
static void list_measurement(mg_json *j, const mg_cli *cli)
{
    const mg_nrep_estimate *e = &mg_nrep_estimate_defaults;
    mg_json_object(j, "measurement");
    mg_json_string(j, "sync", mg_sync_name(MG_BENCH_DEFAULT_SYNC));
    if (cli->fixed_nrep) {
        mg_json_long(j, "nrep", cli->fixed_nrep);
    } else {
        mg_json_string(j, "nrep", mg_nrep_method_name(MG_BENCH_DEFAULT_NREP));
        mg_json_double(j, "rse_calib", e->rse_calib);
        mg_json_double(j, "rse_batch", e->rse_batch);
        mg_json_long(j, "b1", e->b1);
        mg_json_long(j, "b2", e->b2);
        mg_json_long(j, "nrep_min", e->k_min);
        mg_json_long(j, "nrep_max", e->nrep_max);
        mg_json_double(j, "calib_max", e->calib_max_s);
    }
    mg_json_close(j);
}

/* --list on rank 0; 0, or 2 if the driver's list misused the writer. */
static int list(const mg_bench *b, const mg_cli *cli)
{
    int status = 0;
    if (b->rank == 0) {
        mg_json j;
        mg_json_start(&j, stdout);
        mg_json_string(&j, "driver", cli->name);
        list_measurement(&j, cli);
        list_options(&j, cli);
        if (cli->list) cli->list(&j, b);
        if (mg_json_finish(&j) != 0) {
            mg_bench_error(b, "internal error: --list wrote malformed JSON");
            status = 2;
        }
    }
    MPI_Bcast(&status, 1, MPI_INT, 0, b->comm);
    return status;
}

/* One of the driver's options at argv[*i]: 1 consumed, 0 none, -1 bad value. */
static int driver_option(const mg_bench *b, const mg_cli *cli, int argc, char **argv, int *i)
{
    for (int k = 0; k < cli->nopts; k++) {
        const mg_opt *o = &cli->opts[k];
        if (strcmp(argv[*i], o->name) != 0) continue;
        if (o->kind == MG_OPT_FLAG) {
            *(int *)o->target = o->flag;
            return 1;
        }
        if (o->kind == MG_OPT_SET) {
            *(const char **)o->target = o->text;
            return 1;
        }
        if (*i + 1 >= argc) {
            mg_bench_error(b, "option %s needs a value", o->name);
            return -1;
        }
        const char *val = argv[++*i];
        if (o->kind == MG_OPT_VALUE) {
            *(const char **)o->target = val;
        } else if (mg_parse_int(val, 1, INT_MAX, (int *)o->target) != 0) {
            mg_bench_error(b, "bad value '%s' for %s (want a positive integer)", val, o->name);
            return -1;
        }
        return 1;
    }
    return 0;
}

int mg_bench_args(mg_bench *b, const mg_cli *cli, int argc, char **argv)
{
    if (cli->fixed_nrep) {
        b->nrep_method = MG_NREP_FIXED;
        b->nrep_fixed = cli->fixed_nrep;
    }
    for (int i = 1; i < argc; i++) {
        int r = cli->fixed_nrep ? mg_bench_base_option(b, argc, argv, &i) : mg_bench_option(b, argc, argv, &i);
        if (r == 0) r = driver_option(b, cli, argc, argv, &i);
        if (r < 0) return 2;
        if (r > 0) continue;
        if (strcmp(argv[i], "--help") == 0) {
            usage(b, cli);
            return 0;
        }
        if (strcmp(argv[i], "--list") == 0) return list(b, cli);
        mg_bench_error(b, "unknown option '%s' (try --help)", argv[i]);
        return 2;
    }
    if (cli->fixed_nrep && b->nrep_method != MG_NREP_FIXED) {
        mg_bench_error(b, "--nrep %s: %s needs a number of repetitions (--nrep N, default %d)",
                       mg_nrep_method_name(b->nrep_method), cli->name, cli->fixed_nrep);
        return 2;
    }
    return MG_ARGS_RUN;
}

int mg_bench_quit(mg_bench *b, int status)
{
    mg_bench_end(b);
    return status;
}

int mg_bench_main(int argc, char **argv, int (*run)(int argc, char **argv))
{
    int level = -1, provided;
    for (int i = 1; i + 1 < argc; i++)
        if (strcmp(argv[i], "--thread-level") == 0) level = mg_thread_level_of(argv[i + 1]);
    if (level >= 0)
        MPI_Init_thread(&argc, &argv, level, &provided);
    else /* (a bad level is refused by the option parser) */
        MPI_Init(&argc, &argv);
    int status = run(argc, argv);
    MPI_Finalize();
    return status;
}
