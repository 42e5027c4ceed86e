#define _POSIX_C_SOURCE 200809L
/* mg_collbench: the regular collectives of Hunold and Carpen-Amarie (2018) with
 * their native implementation and each mock-up of libmpiguide-tune (forced
 * mode), or with the tuned library (profiles), over a list of message sizes.
 * The collectives, their mock-ups and guidelines are the library's
 * (mpiguide/tune.h); this driver knows how to call each. Timing follows their
 * Algorithm 1 through the measurement core (use --sync dissem and --nrep
 * estimate for the paper's method). Before a configuration is timed, its result
 * is compared on every rank with the native PMPI call, and the native call's
 * with MPI's definition of the call (so an algorithm forced on the library, for
 * COLL-SEL, is checked too; a call the library refuses is a skip). A mock-up
 * that does not apply to the call (the library ran the native code) is
 * recorded as a skip, not timed: so are all reduction mock-ups under
 * --datatype double --op sum, because floating-point MPI_SUM/MPI_PROD always
 * runs natively (docs/tuning.md, "Reductions"). The library's usage report is
 * appended to the raw file as `#@tune_alg[...]` and `#@tune_config[...]`
 * lines (docs/formats.md). */
#include "bench_util.h"
#include "collcalls.h"
#include "mg_bench.h"
#include "mg_options.h"
#include "mg_size.h"
#include "mpiguide/tune.h"
#include "tune/defaults.h" /* the library's defaults only: src/tune/defaults.h */

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_SIZES 64
#define MAX_IMPLS 64
#define MAX_COLLS 32

/* Hunold and Carpen-Amarie (2018), Figure 4 (--help and --list print it). */
#define DEFAULT_SIZES "1,2,4,8,32,64,100,512,1024,4096,8192,16000,32768,50000,100000"

typedef struct {
    const char *name;
    MPI_Datatype type;
} named_type;
static const named_type types[] = {{"byte", MPI_BYTE}, {"int", MPI_INT}, {"double", MPI_DOUBLE}};
#define NTYPES (int)(sizeof types / sizeof *types)
typedef struct {
    const char *name;
    MPI_Op op;
} named_op;
static const named_op ops[] = {{"bor", MPI_BOR}, {"sum", MPI_SUM}, {"max", MPI_MAX}};
#define NOPS (int)(sizeof ops / sizeof *ops)

/* Runs the native call with the process's stdout and stderr going to a temporary file: what the library
 * prints there (MPICH with MPIR_CVAR_COLLECTIVE_FALLBACK=print says so when it does not apply a forced
 * algorithm; with MPIR_CVAR_COLL_SCHED_DUMP it prints the schedules of its nonblocking algorithms) into
 * text, at most len - 1 bytes, newlines as " | ". Without a temporary file, the call runs as it is. */
static int call_capturing_output(call_ctx *c, char *text, size_t len)
{
    const int fds[2] = {STDOUT_FILENO, STDERR_FILENO};
    int saved[2] = {-1, -1};
    text[0] = '\0';
    FILE *tmp = tmpfile();
    fflush(stdout);
    fflush(stderr);
    int ok = tmp != NULL;
    for (int i = 0; i < 2 && ok; i++) ok = (saved[i] = dup(fds[i])) >= 0 && dup2(fileno(tmp), fds[i]) >= 0;
    int rc = ok ? mg_coll_call(c) : MPI_SUCCESS;
    fflush(stdout);
    fflush(stderr);
    for (int i = 0; i < 2; i++)
        if (saved[i] >= 0) dup2(saved[i], fds[i]), close(saved[i]);
    if (!ok) {
        if (tmp) fclose(tmp);
        return mg_coll_call(c);
    }
    rewind(tmp);
    size_t n = 0;
    for (int ch; (ch = fgetc(tmp)) != EOF && n + 4 < len;) {
        if (ch == '\n') {
            if (n > 0 && text[n - 1] != ' ') memcpy(text + n, " | ", 3), n += 3;
        } else {
            text[n++] = (char)ch;
        }
    }
    while (n >= 3 && memcmp(text + n - 3, " | ", 3) == 0) n -= 3;
    text[n] = '\0';
    fclose(tmp);
    return rc;
}

/* Scratch space of the checks: the reference result and another rank's send buffer. */
typedef struct {
    unsigned char *want, *ref, *scratch;
    int capture; /* --capture-output */
} check_bufs;

/* The first rank's text that is not empty, on rank 0 (bookkeeping around the library), prefixed with "rank R: "
 * unless it says so itself (named). */
static void text_to_root(mg_bench *b, char *text, size_t len, int named)
{
    int mine = text[0] ? b->rank : b->size, first = b->size;
    PMPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, b->comm);
    if (first == b->size || first == 0) return;
    if (b->rank == first) PMPI_Send(text, (int)len, MPI_CHAR, 0, 0, b->comm);
    if (b->rank == 0) {
        int n = named ? 0 : snprintf(text, len, "rank %d: ", first);
        PMPI_Recv(text + n, (int)len - n, MPI_CHAR, first, 0, b->comm, MPI_STATUS_IGNORE);
    }
}

static void first_text_to_root(mg_bench *b, char *text, size_t len) { text_to_root(b, text, len, 0); }

/* Runs the call under test, call(arg) (the library's call, or a form of the
 * call), and the native one on the same inputs; returns 1 on every rank if all
 * results match, and sets *fell_back if the library ran the native code instead
 * of the forced mock-up (library: the call under test is the library's). For `default`, the native result
 * is also compared with MPI's definition of the call (reference), and with
 * --capture-output what the library prints during the native call is noted. */
static int check(mg_bench *b, call_ctx *c, size_t sbytes, size_t rbytes, size_t tsize, const check_bufs *k,
                 const char *impl, const char *label, mg_bench_op call, void *arg, int library, int *fell_back,
                 int *refused, char *msg, size_t len)
{
    int is_default = strcmp(impl, "default") == 0;
    char printed[1024];
    c->native = 1;
    /* MPICH builds what some algorithms need (smp: the node communicators) during the first calls on a
     * communicator and refuses them until then: the capture watches a call after a first one */
    if (is_default && k->capture) {
        mg_coll_fill(c, sbytes, rbytes, tsize);
        mg_coll_call(c);
    }
    mg_coll_fill(c, sbytes, rbytes, tsize);
    int rc = is_default && k->capture ? call_capturing_output(c, printed, sizeof printed) : mg_coll_call(c);
    if (is_default && k->capture) {
        first_text_to_root(b, printed, sizeof printed);
        if (b->rank == 0 && printed[0]) mg_bench_note(b, "printed", label, "%s", printed);
    }
    /* the library refuses the call (Open MPI forced to an algorithm that does not apply: its two_proc
     * allgather on 4 processes): not timed, with the library's words on rank 0 */
    char why[MPI_MAX_ERROR_STRING] = "";
    int mine = is_default && rc != MPI_SUCCESS, wlen = 0;
    if (mine) MPI_Error_string(rc, why, &wlen);
    PMPI_Allreduce(&mine, refused, 1, MPI_INT, MPI_LOR, b->comm);
    if (*refused) {
        first_text_to_root(b, why, sizeof why);
        snprintf(msg, len, "the library returned an error for the native call: %.180s", why);
        c->native = 0;
        return 0;
    }
    memcpy(k->want, c->rbuf, rbytes);
    long long wrong = -1;
    if (is_default && rc == MPI_SUCCESS) {
        size_t significant;
        mg_coll_reference(c, sbytes, rbytes, tsize, k->ref, k->scratch, &significant);
        wrong = mg_first_diff(k->want, k->ref, significant);
    }
    memset(c->rbuf, MG_BENCH_GUARD, rbytes);
    c->native = 0;
    int rc2 = call(arg);
    const char *ran = library ? mg_tune_last_impl(c->name) : NULL;
    int local_fb = ran && strcmp(ran, impl) != 0 && strcmp(impl, "tuned") != 0;
    long long j = mg_first_diff(c->rbuf, k->want, rbytes);
    int ok = rc == rc2 && j < 0 && wrong < 0, all_ok = 0;
    msg[0] = '\0';
    if (wrong >= 0)
        snprintf(msg, len, "rank %d: the native call's result differs from MPI's definition of the call at byte %lld",
                 b->rank, wrong);
    else if (!ok)
        snprintf(msg, len, "rank %d: %s", b->rank,
                 rc != rc2 ? "return codes differ from the native call" : "result differs from the native call");
    /* bookkeeping goes around the library, whatever it is forced to */
    PMPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, b->comm);
    PMPI_Allreduce(&local_fb, fell_back, 1, MPI_INT, MPI_LOR, b->comm);
    c->native = 0;
    return all_ok;
}

/* ------------------------------------------------------------------ */
/* Options                                                             */
/* ------------------------------------------------------------------ */

typedef struct {
    /* as given */
    const char *colls_arg, *sizes_arg, *impls_arg, *profiles, *type_arg, *op_arg, *root_arg, *msg_pool, *int_pool,
        *forms_arg;
    int check_only, capture_output;
    /* read */
    const char *names[MAX_COLLS]; /* the library's collectives, then the driver's neighbourhood ones */
    int ncolls_all, ncolls_library;
    int forms[MG_NFORMS]; /* --forms: nonblocking, persistent */
    int colls[MAX_COLLS], ncolls; /* chosen: indices into names */
    size_t sizes[MAX_SIZES];
    int nsizes;
    const named_type *nt;
    const named_op *no;
    int root, tsize;
    char all[512]; /* the library's collectives, comma-separated: the default */
} options;

static void list_collective(mg_json *j, const char *name)
{
    mg_json_object(j, NULL);
    mg_json_string(j, "name", name);
    mg_json_string(j, "mpi_name", mg_tune_impl_formula(name, 0));
    mg_json_array(j, "mockups");
    for (int i = 1; i < mg_tune_nimpls(name); i++) {
        mg_json_flat_object(j, NULL);
        mg_json_string(j, "name", mg_tune_impl_name(name, i));
        mg_json_long(j, "guideline", mg_tune_impl_guideline(name, i));
        mg_json_string(j, "formula", mg_tune_impl_formula(name, i));
        mg_json_close(j);
    }
    mg_json_close(j);
    mg_json_close(j);
}

static void list(mg_json *j, const mg_bench *b)
{
    (void)b;
    mg_json_array(j, "collectives");
    for (int i = 0; i < mg_tune_ncollectives(); i++) list_collective(j, mg_tune_collective_name(i));
    mg_json_close(j);
    mg_json_array(j, "neighborhoods");
    for (int i = 0; i < mg_coll_nneighborhoods; i++) {
        const mg_coll_neighborhood *x = &mg_coll_neighborhoods[i];
        const char *impls[] = {mg_coll_forms[MG_FORM_BLOCKING].name, mg_coll_forms[MG_FORM_P2P].name};
        mg_json_flat_object(j, NULL);
        mg_json_string(j, "name", x->name);
        mg_json_string(j, "mpi_name", x->mpi_name);
        mg_json_string(j, "topology", x->topology);
        mg_json_strings(j, "impls", impls, 2);
        mg_json_close(j);
    }
    mg_json_close(j);
    mg_json_array(j, "forms");
    for (int f = MG_FORM_NONBLOCKING; f < MG_NFORMS; f++) {
        mg_json_flat_object(j, NULL);
        mg_json_string(j, "name", mg_coll_forms[f].name);
        mg_json_string(j, "guideline", mg_coll_forms[f].guideline);
        mg_json_close(j);
    }
    mg_json_close(j);
    mg_json_bool(j, "persistent_built", mg_coll_persistent_built());
    mg_json_object(j, "datatypes");
    for (int i = 0; i < NTYPES; i++) {
        int size;
        MPI_Type_size(types[i].type, &size);
        mg_json_long(j, types[i].name, size);
    }
    mg_json_close(j);
    const char *names[NOPS];
    for (int i = 0; i < NOPS; i++) names[i] = ops[i].name;
    mg_json_strings(j, "ops", names, NOPS);
    mg_json_object(j, "library_defaults");
    mg_json_long(j, "msg_pool", (long long)MG_TUNE_DEFAULT_MSG_POOL);
    mg_json_long(j, "int_pool", (long long)MG_TUNE_DEFAULT_INT_POOL);
    mg_json_long(j, "chunk", (long long)MG_TUNE_DEFAULT_CHUNK);
    mg_json_close(j);
    mg_json_object(j, "defaults");
    mg_json_size_list(j, "sizes", DEFAULT_SIZES);
    mg_json_string(j, "impls", "all");
    mg_json_string(j, "forms", "none");
    mg_json_string(j, "datatype", types[0].name);
    mg_json_string(j, "op", ops[0].name);
    mg_json_long(j, "root", 0);
    mg_json_close(j);
}

/* Whether name is an implementation of some collective: the library's, or the neighbourhood ones' p2p. */
static int known_impl(const char *name)
{
    if (strcmp(name, mg_coll_forms[MG_FORM_P2P].name) == 0) return 1;
    for (int c = 0; c < mg_tune_ncollectives(); c++)
        for (int i = 0; i < mg_tune_nimpls(mg_tune_collective_name(c)); i++)
            if (strcmp(name, mg_tune_impl_name(mg_tune_collective_name(c), i)) == 0) return 1;
    return 0;
}

/* --collectives and --impls against the library's catalog; 0 or -1. */
static int read_collectives(mg_bench *b, options *o)
{
    o->ncolls_library = mg_tune_ncollectives();
    if (o->ncolls_library > MAX_COLLS - mg_coll_nneighborhoods) o->ncolls_library = MAX_COLLS - mg_coll_nneighborhoods;
    for (int i = 0; i < o->ncolls_library; i++) o->names[i] = mg_tune_collective_name(i);
    mg_join_names(o->names, o->ncolls_library, ",", o->all, sizeof o->all);
    o->ncolls_all = o->ncolls_library;
    for (int i = 0; i < mg_coll_nneighborhoods; i++) o->names[o->ncolls_all++] = mg_coll_neighborhoods[i].name;
    if (!o->colls_arg) o->colls_arg = o->all;
    o->ncolls = mg_parse_names(b, "collective", o->colls_arg, o->names, o->ncolls_all, o->colls);
    if (o->ncolls < 0) return -1;
    for (int k = 0; k < o->ncolls; k++) {
        const char *name = o->names[o->colls[k]];
        if (mg_coll_kind_of(name) < 0 || (o->colls[k] < o->ncolls_library && mg_tune_nimpls(name) > MAX_IMPLS)) {
            mg_bench_error(b, "mg_collbench cannot call libmpiguide-tune's collective '%s'", name);
            return -1;
        }
    }
    static const char *const form_names[] = {"nonblocking", "persistent"};
    int chosen[2];
    if (strcmp(o->forms_arg, "none") != 0) {
        int n = mg_parse_names(b, "form", o->forms_arg, form_names, 2, chosen);
        if (n < 0) return -1;
        for (int i = 0; i < n; i++) o->forms[chosen[i] == 0 ? MG_FORM_NONBLOCKING : MG_FORM_PERSISTENT] = 1;
    }
    if (strcmp(o->impls_arg, "all") == 0) return 0;
    char *copy = strdup(o->impls_arg), *save = NULL;
    if (!copy) MPI_Abort(MPI_COMM_WORLD, 2);
    int bad = 0, n = 0;
    for (char *t = strtok_r(copy, ",", &save); t && !bad; t = strtok_r(NULL, ",", &save), n++) {
        if (strcmp(t, "tuned") == 0) { /* measured whenever --profiles is given */
            if ((bad = !o->profiles)) mg_bench_error(b, "--impls tuned needs --profiles DIR");
        } else if ((bad = !known_impl(t))) {
            mg_bench_error(b,
                           "unknown implementation '%s' in --impls (known: all, default and the mock-ups that "
                           "--list shows)",
                           t);
        }
    }
    free(copy);
    if (!bad && n == 0) {
        mg_bench_error(b, "empty --impls list '%s'", o->impls_arg);
        bad = 1;
    }
    return bad ? -1 : 0;
}

/* --sizes, --datatype, --op, --root, --profiles and the pools; 0 or -1. */
static int read_values(mg_bench *b, options *o)
{
    if (mg_parse_size_list(o->sizes_arg, o->sizes, MAX_SIZES, &o->nsizes) != 0) {
        mg_bench_error(b, "bad --sizes '%s': comma-separated byte counts (at most %d)", o->sizes_arg, MAX_SIZES);
        return -1;
    }
    for (int k = 0; k < NTYPES; k++)
        if (strcmp(o->type_arg, types[k].name) == 0) o->nt = &types[k];
    for (int k = 0; k < NOPS; k++)
        if (strcmp(o->op_arg, ops[k].name) == 0) o->no = &ops[k];
    if (!o->nt || !o->no) {
        mg_bench_error(b,
                       !o->nt ? "unknown --datatype '%s' (known: byte, int, double)"
                              : "unknown --op '%s' (known: bor, sum, max)",
                       !o->nt ? o->type_arg : o->op_arg);
        return -1;
    }
    if (o->no->op == MPI_BOR && o->nt->type == MPI_DOUBLE) {
        mg_bench_error(b, "--op bor needs an integer or byte --datatype");
        return -1;
    }
    if (mg_parse_int(o->root_arg, 0, b->size - 1, &o->root) != 0) {
        mg_bench_error(b, "bad --root '%s': a rank from 0 to %d", o->root_arg, b->size - 1);
        return -1;
    }
    size_t pool;
    const char *pools[2][2] = {{"--msg-pool", o->msg_pool}, {"--int-pool", o->int_pool}};
    for (int k = 0; k < 2; k++)
        if (pools[k][1] && mg_parse_size(pools[k][1], &pool) != 0) {
            mg_bench_error(b, "bad %s '%s': expected a byte count, k/m/g = KiB/MiB/GiB", pools[k][0], pools[k][1]);
            return -1;
        }
    return 0;
}

/* Checks that need the communicator and the library; 0 or -1. */
static int check_setup(mg_bench *b, options *o)
{
    if (b->size < 2) {
        mg_bench_error(b, "collectives need at least 2 processes (got %d)", b->size);
        return -1;
    }
    if (o->profiles && mg_tune_load_profiles(o->profiles) != MG_TUNE_SUCCESS) {
        mg_bench_error(b, "cannot use the profiles in %s (see the warnings above)", o->profiles);
        return -1;
    }
    MPI_Type_size(o->nt->type, &o->tsize);
    for (int s = 0; s < o->nsizes; s++)
        if (o->sizes[s] == 0 || o->sizes[s] % (size_t)o->tsize || o->sizes[s] > (size_t)INT_MAX / (size_t)b->size) {
            mg_bench_error(b, "message size %zu is not a positive multiple of the %s size (%d bytes) below %d",
                           o->sizes[s], o->nt->name, o->tsize, INT_MAX / b->size);
            return -1;
        }
    return 0;
}

/* The command line: MG_ARGS_RUN, or the exit status. */
static int read_command_line(mg_bench *b, options *o, int argc, char **argv)
{
    char colls[512], colls_help[700], msg_pool[160], int_pool[120];
    const char *names[MAX_COLLS];
    int n = mg_tune_ncollectives();
    for (int i = 0; i < n && i < MAX_COLLS - 2; i++) names[i] = mg_tune_collective_name(i);
    snprintf(colls_help, sizeof colls_help,
             "%s (default: these, the library's), and the neighbourhood collectives %s, %s (MPI_Neighbor_allgather "
             "on a periodic 2D Cartesian grid, on the complete graph; against their point-to-point exchange, p2p)",
             mg_join_names(names, n < MAX_COLLS - 2 ? n : MAX_COLLS - 2, ",", colls, sizeof colls),
             mg_coll_neighborhoods[0].name, mg_coll_neighborhoods[1].name);
    snprintf(msg_pool, sizeof msg_pool,
             "capacity of the library's message pool (MPIGUIDE_TUNE_MSG_POOL, %zu): a mock-up that needs more runs "
             "natively (recorded as a skip)",
             (size_t)MG_TUNE_DEFAULT_MSG_POOL);
    snprintf(int_pool, sizeof int_pool, "capacity of the library's int-vector pool (MPIGUIDE_TUNE_INT_POOL, %zu)",
             (size_t)MG_TUNE_DEFAULT_INT_POOL);
    const mg_opt opts[] = {
        {"--collectives", MG_OPT_VALUE, &o->colls_arg, 0, NULL, "LIST", colls_help},
        {"--sizes", MG_OPT_VALUE, &o->sizes_arg, 0, NULL, "LIST",
         "message sizes in bytes, k/m/g = KiB/MiB/GiB (default " DEFAULT_SIZES
         ", Hunold and Carpen-Amarie 2018, Figure 4); reduce_scatter_block: the whole vector"},
        {"--impls", MG_OPT_VALUE, &o->impls_arg, 0, NULL, "LIST",
         "default and mock-up names (--list shows them), or all (default all)"},
        {"--forms", MG_OPT_VALUE, &o->forms_arg, 0, NULL, "LIST",
         "also measure each collective's nonblocking form (MPI_IX + MPI_Wait) and persistent form (MPI-4: MPI_X_init "
         "once, MPI_Start + MPI_Wait per call): nonblocking,persistent, or none (default)"},
        {"--profiles", MG_OPT_VALUE, &o->profiles, 0, NULL, "DIR",
         "also measure `tuned`: the library with the profiles in DIR"},
        {"--datatype", MG_OPT_VALUE, &o->type_arg, 0, NULL, "NAME", "byte (default), int, double"},
        {"--op", MG_OPT_VALUE, &o->op_arg, 0, NULL, "NAME", "bor (default), sum, max"},
        {"--root", MG_OPT_VALUE, &o->root_arg, 0, NULL, "R", "root of the rooted collectives (default 0)"},
        {"--msg-pool", MG_OPT_VALUE, &o->msg_pool, 0, NULL, "BYTES", msg_pool},
        {"--int-pool", MG_OPT_VALUE, &o->int_pool, 0, NULL, "BYTES", int_pool},
        {"--check-only", MG_OPT_FLAG, &o->check_only, 1, NULL, NULL,
         "compare every configuration with the native call, time nothing"},
        {"--capture-output", MG_OPT_FLAG, &o->capture_output, 1, NULL, NULL,
         "note what the library prints during each size's checked native call (#@printed: how MPICH says it did "
         "not apply a forced algorithm)"},
    };
    const mg_cli cli = {"mg_collbench", "mpiexec -n P mg_collbench [options]", opts,
                        (int)(sizeof opts / sizeof *opts), 0, list};
    int st = mg_bench_args(b, &cli, argc, argv);
    if (st != MG_ARGS_RUN) return st;
    if (read_collectives(b, o) != 0 || read_values(b, o) != 0 || check_setup(b, o) != 0) return 2;
    return MG_ARGS_RUN;
}

/* ------------------------------------------------------------------ */
/* Measurement                                                         */
/* ------------------------------------------------------------------ */

static void write_header(mg_bench *b, const options *o)
{
    mg_bench_param(b, "collectives", "%s", o->colls_arg);
    mg_bench_param(b, "sizes", "%s", o->sizes_arg);
    mg_bench_param(b, "impls", "%s", o->impls_arg);
    mg_bench_param(b, "forms", "%s", o->forms_arg);
    mg_bench_param(b, "profiles", "%s", o->profiles ? o->profiles : "");
    mg_bench_param(b, "datatype", "%s", o->nt->name);
    mg_bench_param(b, "op", "%s", o->no->name);
    mg_bench_param(b, "root", "%d", o->root);
    mg_bench_param(b, "check_only", "%d", o->check_only);
    mg_bench_param(b, "capture_output", "%d", o->capture_output);
    if (mg_bench_begin(b, "collective impl msize") != 0) MPI_Abort(MPI_COMM_WORLD, 2);
}

/* One implementation or form of a collective: what an interleaved side needs. */
typedef struct {
    call_ctx *c;
    const char *impl;
    int form;        /* MG_FORM_BLOCKING: the library's call with impl forced; else the form */
    int library;     /* the collective is the library's */
    MPI_Request req; /* persistent: the request of MPI_X_init */
    char label[256];
} impl_side;

/* The implementations and forms of c->name to measure (--impls, --forms, then `tuned` with --profiles) into
 * sides, and one note per implementation (#@mockup) and form (#@form); returns their count. */
static int select_sides(mg_bench *b, const options *o, call_ctx *c, int library, impl_side *sides)
{
    int n = 0, total = library ? mg_tune_nimpls(c->name) : 2;
    char formula[160];
    for (int i = 0; i < total; i++) {
        const char *impl = library ? mg_tune_impl_name(c->name, i) : mg_coll_forms[i ? MG_FORM_P2P : 0].name;
        int wanted = strcmp(o->impls_arg, "all") == 0;
        char *copy = wanted ? NULL : strdup(o->impls_arg), *save = NULL;
        if (!wanted && !copy) MPI_Abort(MPI_COMM_WORLD, 2);
        for (char *t = copy ? strtok_r(copy, ",", &save) : NULL; t; t = strtok_r(NULL, ",", &save))
            wanted |= strcmp(t, impl) == 0;
        free(copy);
        if (wanted) sides[n++] = (impl_side){.c = c, .impl = impl, .form = library || !i ? 0 : MG_FORM_P2P};
        if (library)
            mg_bench_note(b, "mockup", impl, "%d %s", mg_tune_impl_guideline(c->name, i),
                          mg_tune_impl_formula(c->name, i));
    }
    for (int f = MG_FORM_NONBLOCKING; f < MG_NFORMS; f++) {
        int p2p = f == MG_FORM_P2P && !library;
        if (!o->forms[f] && !p2p) continue;
        char key[160];
        snprintf(key, sizeof key, "%s %s", c->name, mg_coll_forms[f].name);
        mg_bench_note(b, "form", key, "%s %s", mg_coll_forms[f].guideline,
                      mg_coll_form_formula(c, f, formula, sizeof formula));
        if (!p2p) sides[n++] = (impl_side){.c = c, .impl = mg_coll_forms[f].name, .form = f};
    }
    if (o->profiles && library) sides[n++] = (impl_side){.c = c, .impl = "tuned"};
    for (int i = 0; i < n; i++) sides[i].library = library, sides[i].req = MPI_REQUEST_NULL;
    return n;
}

/* Untimed, before each repetition of a side: the library runs the side's implementation (the forms and the
 * neighbourhood collectives: the library off). */
static int use_impl(void *p)
{
    impl_side *s = p;
    if (!s->library || s->form != MG_FORM_BLOCKING)
        return mg_tune_set_mode(MG_TUNE_OFF) == MG_TUNE_SUCCESS ? MPI_SUCCESS : MPI_ERR_OTHER;
    if (strcmp(s->impl, "tuned") == 0) return mg_tune_set_mode(MG_TUNE_TUNED) == MG_TUNE_SUCCESS ? MPI_SUCCESS : MPI_ERR_OTHER;
    if (mg_tune_set_mode(MG_TUNE_FORCED) != MG_TUNE_SUCCESS || mg_tune_force(s->c->name, s->impl) != MG_TUNE_SUCCESS)
        return MPI_ERR_OTHER;
    return MPI_SUCCESS;
}

static int side_call(void *p)
{
    impl_side *s = p;
    switch (s->form) {
    case MG_FORM_NONBLOCKING: return mg_coll_nonblocking(s->c);
    case MG_FORM_P2P: return mg_coll_p2p(s->c);
    case MG_FORM_PERSISTENT: {
        int rc = MPI_Start(&s->req);
        return rc == MPI_SUCCESS ? MPI_Wait(&s->req, MPI_STATUS_IGNORE) : rc;
    }
    default: return mg_coll_call(s->c);
    }
}

/* The persistent form's MPI_X_init (untimed; its time, the maximum over ranks, as an #@init note): 1 if every
 * rank has its request, else 0 after a skip note. The send buffer holds other bytes at the _init than at the
 * MPI_Start of the check, so that a library that reads it at _init fails the check (MPI reads it at the start). */
static int persistent_init(mg_bench *b, impl_side *s, size_t sbytes)
{
    char mpi[64], why[MPI_MAX_ERROR_STRING] = "";
    mg_coll_mpi_name(s->c->name, mpi, sizeof mpi);
    if (!mg_coll_persistent_built()) {
        mg_bench_note(b, "skip", s->label, "not supported by this library (MPI-4's %s_init is not declared)", mpi);
        return 0;
    }
    memset(s->c->sbuf, 0x3C, sbytes);
    double t = PMPI_Wtime();
    int rc = mg_coll_persistent_init(s->c, &s->req), ok = rc == MPI_SUCCESS, all = 0, len = 0;
    double took = PMPI_Wtime() - t, most = 0;
    PMPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, b->comm);
    PMPI_Reduce(&took, &most, 1, MPI_DOUBLE, MPI_MAX, 0, b->comm);
    if (all) {
        mg_bench_note(b, "init", s->label, "%.9e", most);
        return 1;
    }
    if (!ok) MPI_Error_string(rc, why, &len);
    first_text_to_root(b, why, sizeof why);
    mg_bench_note(b, "skip", s->label, "the library returned an error for %s_init: %s", mpi, why);
    if (s->req != MPI_REQUEST_NULL) MPI_Request_free(&s->req);
    return 0;
}

/* One implementation or form at one size, checked against the native call: 1 if it can be timed. */
static int check_impl(mg_bench *b, const options *o, impl_side *s, size_t sbytes, size_t rbytes, const check_bufs *k)
{
    char msg[256];
    if (s->form == MG_FORM_PERSISTENT && !persistent_init(b, s, sbytes)) return 0;
    use_impl(s);
    int fell_back = 0, refused = 0;
    if (!check(b, s->c, sbytes, rbytes, (size_t)o->tsize, k, s->impl, s->label, side_call, s,
               s->library && s->form == MG_FORM_BLOCKING, &fell_back, &refused, msg, sizeof msg)) {
        if (refused) {
            mg_bench_note(b, "skip", s->label, "%s", msg);
        } else {
            text_to_root(b, msg, sizeof msg, 1); /* the first failing rank's words, which name it */
            mg_bench_config_error(b, s->label, msg);
        }
        return 0;
    }
    if (fell_back) {
        mg_bench_note(b, "skip", s->label,
                      "the library ran the native call: %s does not apply here or its extra memory exceeds the pool",
                      s->impl);
        return 0;
    }
    return 1;
}

/* Every implementation and form of one collective at every size: each size's sides are checked, then timed
 * interleaved (mg_bench_measure_interleaved), so that the native call, its mock-ups and its forms see the same
 * state of the machine. Returns the number of configurations. */
static int measure_collective(mg_bench *b, const options *o, call_ctx *c, const check_bufs *k)
{
    enum { MAX_SIDES = MAX_IMPLS + MG_NFORMS + 1 };
    impl_side proto[MAX_SIDES], sides[MAX_SIDES];
    mg_bench_side timed[MAX_SIDES];
    int library = !mg_coll_is_neighborhood(c->kind), nconfigs = 0;
    int nsides = select_sides(b, o, c, library, proto);
    if (mg_coll_topology(c) != MPI_SUCCESS) {
        mg_bench_error(b, "%s: the topology's communicator could not be made", c->name);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    for (int s = 0; s < o->nsizes; s++) {
        size_t block = o->sizes[s];
        if (c->kind == C_RSB) block = block / (size_t)b->size / (size_t)o->tsize * (size_t)o->tsize;
        if (block == 0) continue; /* reduce_scatter_block needs one element per process */
        size_t sbytes, rbytes, msize = mg_coll_key_bytes(c->kind, block, b->size);
        mg_coll_buffer_sizes(c, block, &sbytes, &rbytes);
        c->count = (int)(block / (size_t)o->tsize);
        int n = 0;
        for (int i = 0; i < nsides; i++, nconfigs++) {
            impl_side *x = &sides[i];
            *x = proto[i];
            snprintf(x->label, sizeof x->label, "%s %s %zu", c->name, x->impl, msize);
            if (check_impl(b, o, x, sbytes, rbytes, k) && !o->check_only)
                timed[n] = (mg_bench_side){x->label, side_call, x, 1, use_impl}, n++;
        }
        while (n > 0) {
            int failed = -1;
            if (mg_bench_measure_interleaved(b, n, timed, msize, &failed) == MPI_SUCCESS) break;
            if (failed < 0) {
                for (int j = 0; j < n; j++) mg_bench_config_error(b, timed[j].label, "an MPI call failed during measurement");
                break;
            }
            mg_bench_config_error(b, timed[failed].label, "an MPI call failed during measurement");
            timed[failed] = timed[--n];
        }
        for (int i = 0; i < nsides; i++)
            if (sides[i].req != MPI_REQUEST_NULL) MPI_Request_free(&sides[i].req);
        mg_tune_set_mode(MG_TUNE_FORCED);
        if (library) mg_tune_force(c->name, "default");
    }
    mg_coll_topology_free(c);
    return nconfigs;
}

static int run(int argc, char **argv)
{
    mg_bench b;
#ifdef SMPI_H /* SimGrid SMPI: each communicator costs a minute of wall time at 1024 ranks (mg_bench.h) */
    mg_bench_init_shared(&b, "collbench", MPI_COMM_WORLD);
#else
    mg_bench_init(&b, "collbench", MPI_COMM_WORLD);
#endif
    /* a call the library refuses is a result (a skip note), not the end of the launch */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    options o = {.sizes_arg = DEFAULT_SIZES,
                 .impls_arg = "all",
                 .type_arg = "byte",
                 .op_arg = "bor",
                 .root_arg = "0",
                 .forms_arg = "none"};
    int st = read_command_line(&b, &o, argc, argv);
    if (st != MG_ARGS_RUN) return mg_bench_quit(&b, st);
    write_header(&b, &o);

    size_t max_block = 0;
    for (int s = 0; s < o.nsizes; s++) max_block = o.sizes[s] > max_block ? o.sizes[s] : max_block;
    /* p blocks, or one per neighbour (4 on the Cartesian grid) */
    size_t cap = max_block * (size_t)(b.size > 4 ? b.size : 4);
    call_ctx c = {.root = o.root,
                  .rank = b.rank,
                  .size = b.size,
                  .type = o.nt->type,
                  .op = o.no->op,
                  .comm = MPI_COMM_WORLD,
                  .topo = MPI_COMM_NULL};
    c.sbuf = mg_alloc64(cap);
    c.rbuf = mg_alloc64(cap);
    check_bufs bufs = {mg_alloc64(cap), mg_alloc64(cap), mg_alloc64(cap), o.capture_output};
    if (!c.sbuf || !c.rbuf || !bufs.want || !bufs.ref || !bufs.scratch) {
        mg_bench_error(&b, "cannot allocate 5 x %zu bytes", cap);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    /* t_nrep1 (Hunold and Carpen-Amarie 2018, Section 4.2): the first collective, native, on its smallest
     * size. */
    if (!o.check_only) {
        mg_tune_set_mode(MG_TUNE_OFF);
        c.name = o.names[o.colls[0]];
        c.kind = mg_coll_kind_of(c.name);
        c.count = 1;
        c.native = 1;
        if (mg_coll_topology(&c) != MPI_SUCCESS) MPI_Abort(MPI_COMM_WORLD, 2);
        mg_coll_fill(&c, (size_t)o.tsize * (size_t)b.size, (size_t)o.tsize * (size_t)b.size, (size_t)o.tsize);
        if (mg_bench_calibrate(&b, mg_coll_call, &c) != MPI_SUCCESS) MPI_Abort(MPI_COMM_WORLD, 2);
        mg_coll_topology_free(&c);
    }
    int nconfigs = 0;
    for (int i = 0; i < o.ncolls && !b.calibrate_only; i++) {
        c.name = o.names[o.colls[i]];
        c.kind = mg_coll_kind_of(c.name);
        nconfigs += measure_collective(&b, &o, &c, &bufs);
    }
    mg_tune_set_mode(MG_TUNE_OFF);
    if (b.rank == 0 && b.out) mg_tune_write_report(b.out);
    if (o.check_only && b.rank == 0)
        fprintf(stderr, "collbench: %d configurations compared with the native calls, %d differ\n", nconfigs, b.errors);
    free(c.sbuf);
    free(c.rbuf);
    free(bufs.want);
    free(bufs.ref);
    free(bufs.scratch);
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
    return mg_bench_main(argc, argv, run);
}
