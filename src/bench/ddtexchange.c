#define _POSIX_C_SOURCE 200809L
/* mg_ddtexchange: the expectation tests 12 and 13 of mpiguide's datatype suite
 * (docs/ddt.md), the exchanges of exchange.h: the 3D FFT's transposition by
 * MPI_Alltoallw and a 2D or 3D halo exchange by MPI_Neighbor_alltoallw, each with
 * subarray types against packing by hand, by MPI_Pack and by the engine,
 * against the normalized types, point-to-point messages, and the call's
 * nonblocking and persistent forms. One launch measures one pattern at every
 * A (the dimensions) x m (bytes of the local array) x mode.
 *
 * As in mg_ddtbench: every configuration and mode is checked with known data
 * before it is timed (every byte of every receive array, against what the
 * geometry says each cell must hold), the modes of a configuration are measured
 * interleaved, and setup (types, _init calls, buffers) is never timed. The raw
 * columns are mg_ddtbench's (docs/formats.md). */
#include "bench_util.h"
#include "exchange.h"
#include "mg_bench.h"
#include "mg_options.h"
#include "mg_size.h"
#include "tuned_mode.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#define MSG_LEN 512
#define NORMAL_MAX 2048
#define MAX_LIST 64

#define DEFAULT_SIZES "131072,1048576,8388608"
#define DEFAULT_A_TRANSPOSE "2"
#define DEFAULT_A_HALO "2,3"
#define DEFAULT_TYPE "int"
#define DEFAULT_MEMORY "1g"

static const char *const layout_names[MG_XCHG_NPATTERNS] = {"pencils", "halo"};
static const struct {
    const char *name;
    MPI_Datatype type;
    size_t size;
} types[] = {{"int", MPI_INT, sizeof(int)},
             {"char", MPI_CHAR, 1},
             {"short", MPI_SHORT, sizeof(short)},
             {"double", MPI_DOUBLE, sizeof(double)}};
#define NTYPES (int)(sizeof types / sizeof *types)

typedef struct {
    const char *pattern_arg, *A_arg, *sizes_arg, *modes_arg, *type_arg, *mem_arg, *profiles_arg;
    int check_only, corrupt;
    int pattern, type;
    long A[MAX_LIST];
    int nA;
    size_t sizes[MAX_LIST];
    int nsizes;
    int modes[MG_XM_NMODES], nmodes;
    size_t max_memory;
    int form;
} options;

typedef struct {
    int configs, checks, skipped;
} counters;

static int want(const options *o, int mode)
{
    for (int i = 0; i < o->nmodes; i++)
        if (o->modes[i] == mode) return 1;
    return 0;
}

/* ---- Data check ---------------------------------------------------------------- */

/* Runs the side once on freshly filled arrays and compares the whole receive array with expect. */
static int check_side(mg_bench *b, const options *o, mg_xchg_side *s, const unsigned char *expect, const char *label)
{
    mg_xchg_data *d = s->d;
    const mg_xchg *x = d->x;
    unsigned char *rarr = x->in_place ? d->sbuf : d->rbuf;
    char msg[MSG_LEN] = "";
    mg_xchg_fill(x, d->sbuf);
    if (!x->in_place) memset(d->rbuf, MG_BENCH_GUARD, x->rbytes);
    int rc = s->op(s);
    long long flip = mg_xchg_some_received_byte(x);
    if (rc != MPI_SUCCESS) {
        char e[MPI_MAX_ERROR_STRING];
        int len = 0;
        if (rc == MPI_ERR_OTHER && s->mode == MG_XM_ENGINE)
            snprintf(e, sizeof e, "mg_dt_pack or mg_dt_unpack failed");
        else if (MPI_Error_string(rc, e, &len) != MPI_SUCCESS)
            snprintf(e, sizeof e, "MPI error %d", rc);
        snprintf(msg, sizeof msg, "the operation failed on rank %d: %.400s", b->rank, e);
    } else {
        if (o->corrupt && flip >= 0) rarr[flip] ^= 0xFF;
        long long j = mg_first_diff(rarr, expect, x->rbytes);
        if (j >= 0)
            snprintf(msg, sizeof msg,
                     "received data differ: first differing byte %lld of %zu on rank %d (got 0x%02x, want 0x%02x)%s", j,
                     x->rbytes, b->rank, rarr[j], expect[j],
                     expect[j] == MG_BENCH_GUARD ? "; no data belongs at that byte" : "");
    }
    return mg_bench_check_agreed(b, msg, MSG_LEN, label);
}

/* ---- One configuration ------------------------------------------------------------- */

/* Records an error for every mode flagged in bad (all of them if bad is NULL). */
static void modes_error(mg_bench *b, const options *o, const char *cfg, long long msize, const int *bad,
                        const char *what)
{
    char label[300];
    for (int i = 0; i < o->nmodes; i++)
        if (!bad || bad[o->modes[i]]) {
            snprintf(label, sizeof label, "%s %lld %s", cfg, msize, mg_xchg_mode_names[o->modes[i]]);
            mg_bench_config_error(b, label, what);
        }
}

/* An error of one rank (err not empty) known to all: 1 if some rank had one (err then holds rank 0's or a
 * general text). */
static int any_failed(mg_bench *b, char *err, size_t len)
{
    int mine = err[0] != 0, any = 0;
    MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_LOR, b->comm);
    if (any && !err[0]) snprintf(err, len, "failed on another rank");
    return any;
}

/* The engine's and normalized types and MPI_Pack's size, where wanted; failures flag the modes in bad. */
static void prepare_modes(mg_bench *b, const options *o, const char *cfg, mg_xchg_data *d, int *bad)
{
    char err[400] = "", normal[NORMAL_MAX] = "";
    int eng = want(o, MG_XM_ENGINE), norm = want(o, MG_XM_NORMALIZED);
    if (eng || norm) {
        mg_xchg_engine_init(d, eng, norm, o->form, normal, sizeof normal, err, sizeof err);
        if (normal[0]) mg_bench_note(b, "normal", cfg, "%s", normal);
        if (any_failed(b, err, sizeof err)) {
            int only[MG_XM_NMODES] = {[MG_XM_ENGINE] = 1, [MG_XM_NORMALIZED] = 1};
            modes_error(b, o, cfg, d->x->msize, only, err);
            bad[MG_XM_ENGINE] = bad[MG_XM_NORMALIZED] = 1;
        }
    }
    err[0] = '\0';
    if (want(o, MG_XM_PACK) && mg_xchg_pack_init(d, err, sizeof err) != 0) {
        int only[MG_XM_NMODES] = {[MG_XM_PACK] = 1};
        modes_error(b, o, cfg, d->x->msize, only, err);
        bad[MG_XM_PACK] = 1;
    }
}

/* The normalized shape and mean block of the first send region's type: what libmpiguide-tune's datatype
 * profiles key a w call on (its first derived type), for mpiguide ddt tune. */
static void note_shape(mg_bench *b, const char *cfg, const mg_xchg_data *d)
{
    mg_dt *t = NULL;
    char shape[NORMAL_MAX];
    if (b->rank != 0 || mg_dt_from_mpi(d->st[0], &t) != MG_DT_SUCCESS) return;
    if (mg_dt_shape(t, shape, sizeof shape) == MG_DT_SUCCESS) {
        mg_bench_note(b, "shape", cfg, "%s", shape);
        mg_bench_note(b, "block", cfg, "%lld", (long long)mg_dt_mean_block(t));
    }
    mg_dt_free(t);
}

/* Checks every requested mode of one configuration, then times those that passed interleaved. */
static void measure_config(mg_bench *b, const options *o, mg_xchg_data *d, const char *cfg, const int *bad,
                           counters *cnt)
{
    const mg_xchg *x = d->x;
    mg_xchg_side sides[MG_XM_NMODES];
    mg_bench_side timed[MG_XM_NMODES];
    char labels[MG_XM_NMODES][300];
    int n = 0, ns = 0;
    unsigned char *expect = mg_alloc64(x->rbytes);
    if (!expect) MPI_Abort(MPI_COMM_WORLD, 2);
    mg_xchg_expect(x, expect);
    for (int i = 0; i < o->nmodes; i++) {
        int mode = o->modes[i];
        if (bad[mode]) continue;
        if (!mg_xchg_mode_built(mode)) {
            mg_bench_note(b, "skip", cfg, "mode %s: not supported by this library (MPI-4's %s is not declared)",
                          mg_xchg_mode_names[mode],
                          x->pattern == MG_XCHG_HALO ? "MPI_Neighbor_alltoallw_init" : "MPI_Alltoallw_init");
            continue;
        }
        mg_xchg_side *s = &sides[ns];
        char *label = labels[ns];
        snprintf(label, sizeof labels[0], "%s %lld %s", cfg, x->msize, mg_xchg_mode_names[mode]);
        double init_s = 0, max_s = 0;
        int rc = mg_xchg_side_init(d, mode, s, &init_s), ok = rc == MPI_SUCCESS, all = 0;
        ns++;
        MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, b->comm);
        if (!all) {
            char e[MPI_MAX_ERROR_STRING] = "", msg[MSG_LEN] = "";
            int len = 0;
            if (!ok && MPI_Error_string(rc, e, &len) != MPI_SUCCESS) snprintf(e, sizeof e, "MPI error %d", rc);
            if (!ok) snprintf(msg, sizeof msg, "MPI_%s_init failed on rank %d: %.400s",
                              x->pattern == MG_XCHG_HALO ? "Neighbor_alltoallw" : "Alltoallw", b->rank, e);
            mg_bench_check_agreed(b, msg, MSG_LEN, label);
            continue;
        }
        if (mode == MG_XM_PERSISTENT) {
            MPI_Reduce(&init_s, &max_s, 1, MPI_DOUBLE, MPI_MAX, 0, b->comm);
            mg_bench_note(b, "init", label, "%.9e", max_s);
        }
        cnt->checks++;
        mg_bench_tuned(mode == MG_XM_TUNED);
        int passed = check_side(b, o, s, expect, label);
        mg_bench_tuned(0);
        if (!passed || o->check_only) continue;
        timed[n++] = (mg_bench_side){label, s->op, s, 1,
                                     mode == MG_XM_TUNED ? mg_bench_library_tuned : mg_bench_library_off};
    }
    while (n > 0) {
        int failed = -1;
        int rc = mg_bench_measure_interleaved(b, n, timed, (size_t)x->msize, &failed);
        mg_bench_tuned(0);
        if (rc == MPI_SUCCESS) break;
        if (failed < 0) {
            for (int j = 0; j < n; j++)
                mg_bench_config_error(b, timed[j].label, "an MPI call failed during measurement");
            break;
        }
        mg_bench_config_error(b, timed[failed].label, "an MPI call failed during measurement");
        timed[failed] = timed[--n];
    }
    for (int i = 0; i < ns; i++) mg_xchg_side_free(&sides[i]);
    free(expect);
}

static void run_config(mg_bench *b, const options *o, long A, size_t m, counters *cnt)
{
    char cfg[160], err[400] = "";
    snprintf(cfg, sizeof cfg, "%s %s %ld %zu", mg_xchg_pattern_names[o->pattern], layout_names[o->pattern], A, m);
    mg_xchg x;
    if (mg_xchg_setup(o->pattern, MPI_COMM_WORLD, A, m, types[o->type].size, types[o->type].type, &x, err,
                      sizeof err) != 0) {
        mg_bench_note(b, "skip", cfg, "%s", err);
        cnt->skipped++;
        return;
    }
    double need = (double)x.sbytes + 2.0 * (double)x.rbytes + 2.0 * (double)x.npeers * (double)x.region_bytes;
    int fits = need <= (double)o->max_memory, all = 0;
    MPI_Allreduce(&fits, &all, 1, MPI_INT, MPI_LAND, b->comm);
    if (!all) {
        mg_bench_note(b, "skip", cfg, "the arrays need %.0f bytes per rank, more than --max-memory %zu", need,
                      o->max_memory);
        cnt->skipped++;
        mg_xchg_free(&x);
        return;
    }
    cnt->configs++;
    mg_bench_note(b, "info", cfg, "%s,msize=%lld,region=%lld", x.info, x.msize, x.region_bytes);
    mg_xchg_data d;
    int bad[MG_XM_NMODES] = {0};
    int rc = mg_xchg_data_init(&x, &d, err, sizeof err);
    if (any_failed(b, err, sizeof err) || rc != 0)
        modes_error(b, o, cfg, x.msize, NULL, err);
    else {
        note_shape(b, cfg, &d);
        prepare_modes(b, o, cfg, &d, bad);
        measure_config(b, o, &d, cfg, bad, cnt);
    }
    mg_xchg_data_free(&d);
    mg_xchg_free(&x);
}

/* ---- Options ------------------------------------------------------------------------ */

/* the modes this binary lists (--list, --help): tuned only in mg_ddtexchange_tuned */
static int modes_here(void) { return mg_bench_tuned_built() ? MG_XM_NMODES : MG_XM_TUNED; }

static void list(mg_json *j, const mg_bench *b)
{
    (void)b;
    mg_json_strings(j, "patterns", mg_xchg_pattern_names, MG_XCHG_NPATTERNS);
    mg_json_strings(j, "layouts", layout_names, MG_XCHG_NPATTERNS);
    mg_json_strings(j, "modes", mg_xchg_mode_names, modes_here());
    mg_json_bool(j, "persistent_built", mg_xchg_mode_built(MG_XM_PERSISTENT));
    mg_json_object(j, "types");
    for (int t = 0; t < NTYPES; t++) mg_json_long(j, types[t].name, (long long)types[t].size);
    mg_json_close(j);
    mg_json_object(j, "defaults");
    mg_json_string(j, "pattern", mg_xchg_pattern_names[MG_XCHG_TRANSPOSE]);
    mg_json_object(j, "A");
    mg_json_long_list(j, "transpose", DEFAULT_A_TRANSPOSE);
    mg_json_long_list(j, "halo", DEFAULT_A_HALO);
    mg_json_close(j);
    mg_json_size_list(j, "sizes", DEFAULT_SIZES);
    mg_json_strings(j, "modes", &mg_xchg_mode_names[MG_XM_DATATYPE], 1);
    mg_json_string(j, "type", DEFAULT_TYPE);
    size_t bytes = 0;
    mg_parse_size(DEFAULT_MEMORY, &bytes);
    mg_json_long(j, "max_memory", (long long)bytes);
    mg_json_close(j);
}

static int read_options(mg_bench *b, options *o)
{
    char known[128];
    o->pattern = o->type = -1;
    for (int k = 0; k < MG_XCHG_NPATTERNS; k++)
        if (strcmp(o->pattern_arg, mg_xchg_pattern_names[k]) == 0) o->pattern = k;
    for (int k = 0; k < NTYPES; k++)
        if (strcmp(o->type_arg, types[k].name) == 0) o->type = k;
    if (o->pattern < 0) {
        mg_bench_error(b, "unknown --pattern '%s' (known: %s)", o->pattern_arg,
                       mg_join_names(mg_xchg_pattern_names, MG_XCHG_NPATTERNS, ", ", known, sizeof known));
        return -1;
    }
    if (o->type < 0) {
        mg_bench_error(b, "unknown --type '%s' (known: int, char, short, double)", o->type_arg);
        return -1;
    }
    if (!o->A_arg) o->A_arg = o->pattern == MG_XCHG_HALO ? DEFAULT_A_HALO : DEFAULT_A_TRANSPOSE;
    if (mg_parse_long_list(o->A_arg, o->A, MAX_LIST, &o->nA, 1) != 0) {
        mg_bench_error(b, "bad --A '%s': the dimensions, comma-separated (transpose: 1, 2; halo: 2, 3)", o->A_arg);
        return -1;
    }
    if (mg_parse_sizes_option(b, o->sizes_arg, o->sizes, MAX_LIST, &o->nsizes) != 0) return -1;
    if (mg_parse_size(o->mem_arg, &o->max_memory) != 0 || o->max_memory == 0) {
        mg_bench_error(b, "bad --max-memory '%s': expected a byte count above 0, k/m/g = KiB/MiB/GiB", o->mem_arg);
        return -1;
    }
    o->nmodes = mg_parse_names(b, "mode", o->modes_arg, mg_xchg_mode_names, MG_XM_NMODES, o->modes);
    if (o->nmodes < 0 || mg_bench_use_profiles(b, want(o, MG_XM_TUNED), o->profiles_arg, "mg_ddtexchange") != 0)
        return -1;
    char err[200];
    if (mg_bench_dt_form(&o->form, err, sizeof err) != 0) {
        mg_bench_error(b, "%s", err);
        return -1;
    }
    return 0;
}

static int read_command_line(mg_bench *b, options *o, int argc, char **argv)
{
    char m[160], modes_help[220];
    snprintf(modes_help, sizeof modes_help, "%s (default datatype)",
             mg_join_names(mg_xchg_mode_names, modes_here(), ", ", m, sizeof m));
    const mg_opt opts[] = {
        {"--pattern", MG_OPT_VALUE, &o->pattern_arg, 0, NULL, "NAME",
         "transpose (default: a 3D FFT's transposition by MPI_Alltoallw) or halo (MPI_Neighbor_alltoallw)"},
        {"--A", MG_OPT_VALUE, &o->A_arg, 0, NULL, "LIST",
         "dimensions: of the transpose's process grid, 1 (slabs) or 2 (pencils; default " DEFAULT_A_TRANSPOSE
         "); of the halo exchange, 2 or 3 (default " DEFAULT_A_HALO ")"},
        {"--sizes", MG_OPT_VALUE, &o->sizes_arg, 0, NULL, "LIST",
         "bytes of each process's local array (its interior for halo), k/m/g = KiB/MiB/GiB (default " DEFAULT_SIZES
         ")"},
        {"--modes", MG_OPT_VALUE, &o->modes_arg, 0, NULL, "LIST", modes_help},
        {"--type", MG_OPT_VALUE, &o->type_arg, 0, NULL, "NAME", "element type: int (default), char, short, double"},
        {"--max-memory", MG_OPT_VALUE, &o->mem_arg, 0, NULL, "BYTES",
         "skip configurations whose arrays need more per rank (default " DEFAULT_MEMORY "; k/m/g)"},
        {"--check-only", MG_OPT_FLAG, &o->check_only, 1, NULL, NULL,
         "check the data of every configuration and mode, time nothing"},
        {"--datatype-profiles", MG_OPT_VALUE, &o->profiles_arg, 0, NULL, "DIR",
         "mode tuned (mg_ddtexchange_tuned): libmpiguide-tune's profiles"},
        {"--corrupt", MG_OPT_FLAG, &o->corrupt, 1, NULL, NULL,
         "testing aid: flip one received byte in every check, so that all fail"},
    };
    const mg_cli cli = {"mg_ddtexchange", "mpiexec -n P mg_ddtexchange [options]", opts,
                        (int)(sizeof opts / sizeof *opts), 0, list};
    int st = mg_bench_args(b, &cli, argc, argv);
    if (st != MG_ARGS_RUN) return st;
    if (read_options(b, o) != 0) return 2;
    if (b->size < 2) {
        mg_bench_error(b, "the exchanges need at least 2 processes (got %d)", b->size);
        return 2;
    }
    return MG_ARGS_RUN;
}

/* t_nrep1 (estimate mode): an MPI_Alltoall of one byte per process. */
typedef struct {
    unsigned char *buf;
    int size;
} calib;

static int calib_op(void *ctx)
{
    calib *c = ctx;
    return MPI_Alltoall(c->buf, 1, MPI_BYTE, c->buf + c->size, 1, MPI_BYTE, MPI_COMM_WORLD);
}

static int run(int argc, char **argv)
{
    mg_bench b;
    mg_bench_init(&b, "ddtexchange", MPI_COMM_WORLD);
    options o = {.pattern_arg = "transpose",
                 .sizes_arg = DEFAULT_SIZES,
                 .modes_arg = "datatype",
                 .type_arg = DEFAULT_TYPE,
                 .mem_arg = DEFAULT_MEMORY};
    int st = read_command_line(&b, &o, argc, argv);
    if (st != MG_ARGS_RUN) return mg_bench_quit(&b, st);
    mg_bench_param(&b, "pattern", "%s", mg_xchg_pattern_names[o.pattern]);
    mg_bench_param(&b, "A", "%s", o.A_arg);
    mg_bench_param(&b, "sizes", "%s", o.sizes_arg);
    mg_bench_param(&b, "modes", "%s", o.modes_arg);
    mg_bench_param(&b, "type", "%s", o.type_arg);
    mg_bench_param(&b, "max_memory", "%zu", o.max_memory);
    mg_bench_param(&b, "check_only", "%d", o.check_only);
    if (o.corrupt) mg_bench_param(&b, "corrupt", "1");
    if (o.profiles_arg) mg_bench_param(&b, "datatype_profiles", "%s", o.profiles_arg);
    if (mg_bench_begin(&b, "pattern layout A m msize mode") != 0) MPI_Abort(MPI_COMM_WORLD, 2);
    if (!o.check_only) {
        calib c = {calloc(2 * (size_t)b.size, 1), b.size};
        if (!c.buf || calib_op(&c) != MPI_SUCCESS || mg_bench_calibrate(&b, calib_op, &c) != MPI_SUCCESS)
            MPI_Abort(MPI_COMM_WORLD, 2);
        free(c.buf);
    }
    counters cnt = {0, 0, 0};
    for (int s = 0; s < o.nsizes && !b.calibrate_only; s++)
        for (int a = 0; a < o.nA; a++) run_config(&b, &o, o.A[a], o.sizes[s], &cnt);
    if (o.check_only && b.rank == 0)
        fprintf(stderr, "ddtexchange: %d configurations, %d mode checks, %d skipped, %d failed\n", cnt.configs,
                cnt.checks, cnt.skipped, b.errors);
    return mg_bench_end(&b);
}

int main(int argc, char **argv) { return mg_bench_main(argc, argv, run); }
