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

/* How each collective is called; which collectives exist is the library's. */
typedef enum { C_ALLGATHER, C_ALLREDUCE, C_ALLTOALL, C_BCAST, C_GATHER, C_REDUCE, C_RSB, C_SCAN, C_SCATTER } call_kind;
static const struct {
    const char *name; /* the library's name of the collective */
    call_kind kind;
} calls[] = {
    {"allgather", C_ALLGATHER}, {"allreduce", C_ALLREDUCE}, {"alltoall", C_ALLTOALL},        {"bcast", C_BCAST},
    {"gather", C_GATHER},       {"reduce", C_REDUCE},       {"reduce_scatter_block", C_RSB}, {"scan", C_SCAN},
    {"scatter", C_SCATTER}};

/* The call kind of a collective of the library, or -1 if this driver cannot call it. */
static int call_of(const char *name)
{
    for (size_t i = 0; i < sizeof calls / sizeof *calls; i++)
        if (strcmp(calls[i].name, name) == 0) return (int)calls[i].kind;
    return -1;
}

typedef struct {
    const char *name; /* collective */
    int kind, root, rank, size, native;
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
    if (c->native) switch (c->kind) {
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
    switch (c->kind) {
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
static void buffer_sizes(int kind, size_t block, int p, size_t *s, size_t *r)
{
    switch (kind) {
    case C_ALLGATHER: *s = block, *r = block * (size_t)p; break;
    case C_ALLTOALL: *s = *r = block * (size_t)p; break;
    case C_GATHER: *s = block, *r = block * (size_t)p; break;
    case C_SCATTER: *s = block * (size_t)p, *r = block; break;
    case C_RSB: *s = block * (size_t)p, *r = block; break;
    default: *s = *r = block; break;
    }
}

/* The message size the library keys profiles by (docs/tuning.md). */
static size_t key_bytes(int kind, size_t block, int p) { return kind == C_RSB ? block * (size_t)p : block; }

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

/* The send buffer of `rank`: rank-dependent bytes; for reductions on int or
 * double, small values so that sums stay exact and identical in any order. */
static void send_image(int rank, MPI_Datatype type, unsigned char *buf, size_t sbytes, size_t tsize)
{
    for (size_t i = 0; i < sbytes; i++) buf[i] = mg_pattern_byte((unsigned)rank + 1u, i);
    if (type == MPI_INT)
        for (size_t i = 0; i < sbytes / tsize; i++) ((int *)buf)[i] = (int)((i * 7u + (size_t)rank) % 100u);
    if (type == MPI_DOUBLE)
        for (size_t i = 0; i < sbytes / tsize; i++) ((double *)buf)[i] = (double)((i + (size_t)rank) % 64u);
}

static void fill(call_ctx *c, size_t sbytes, size_t rbytes, size_t tsize)
{
    send_image(c->rank, c->type, c->sbuf, sbytes, tsize);
    memset(c->rbuf, MG_BENCH_GUARD, rbytes);
}

/* acc op= x, elementwise over n elements of the call's type. */
static void combine(const call_ctx *c, unsigned char *acc, const unsigned char *x, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (c->type == MPI_INT) {
            int *a = (int *)acc + i, v = ((const int *)x)[i];
            *a = c->op == MPI_SUM ? *a + v : c->op == MPI_MAX ? (v > *a ? v : *a) : (*a | v);
        } else if (c->type == MPI_DOUBLE) {
            double *a = (double *)acc + i, v = ((const double *)x)[i];
            *a = c->op == MPI_SUM ? *a + v : (v > *a ? v : *a);
        } else {
            acc[i] |= x[i];
        }
    }
}

/* Whether MPI defines the reduction of the call (MPI_BYTE takes the bitwise operations only), so that its
 * result can be computed here. */
static int defined_reduction(const call_ctx *c) { return c->type != MPI_BYTE || c->op == MPI_BOR; }

/* What MPI's definition of the call leaves in this rank's receive buffer, from every rank's send_image:
 * into ref (rbytes), with *len the significant bytes (0: nothing to compare on this rank, or no reference
 * for an undefined reduction). scratch holds sbytes. Every algorithm of a library must give exactly this,
 * since the sums of send_image are exact in any order. */
static void reference(const call_ctx *c, size_t sbytes, size_t rbytes, size_t tsize, unsigned char *ref,
                      unsigned char *scratch, size_t *len)
{
    size_t block = (size_t)c->count * tsize;
    int p = c->size, me = c->rank, root = c->root;
    memset(ref, MG_BENCH_GUARD, rbytes);
    *len = 0;
    switch (c->kind) {
    case C_ALLGATHER:
    case C_GATHER:
        if (c->kind == C_GATHER && me != root) return;
        for (int r = 0; r < p; r++) send_image(r, c->type, ref + (size_t)r * block, block, tsize);
        *len = block * (size_t)p;
        return;
    case C_ALLTOALL:
        for (int r = 0; r < p; r++) {
            send_image(r, c->type, scratch, sbytes, tsize);
            memcpy(ref + (size_t)r * block, scratch + (size_t)me * block, block);
        }
        *len = block * (size_t)p;
        return;
    case C_BCAST: /* the root's buffer is its send buffer */
        if (me == root) return;
        send_image(root, c->type, ref, block, tsize);
        *len = block;
        return;
    case C_SCATTER:
        send_image(root, c->type, scratch, sbytes, tsize);
        memcpy(ref, scratch + (size_t)me * block, block);
        *len = block;
        return;
    case C_ALLREDUCE:
    case C_REDUCE:
    case C_SCAN:
    case C_RSB: {
        if (!defined_reduction(c) || (c->kind == C_REDUCE && me != root)) return;
        int last = c->kind == C_SCAN ? me : p - 1;
        size_t whole = c->kind == C_RSB ? block * (size_t)p : block;
        send_image(0, c->type, scratch, whole, tsize);
        memcpy(ref, scratch + (c->kind == C_RSB ? (size_t)me * block : 0), block);
        for (int r = 1; r <= last; r++) {
            send_image(r, c->type, scratch, whole, tsize);
            combine(c, ref, scratch + (c->kind == C_RSB ? (size_t)me * block : 0), (size_t)c->count);
        }
        *len = block;
        return;
    }
    }
}

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
    int rc = ok ? do_call(c) : MPI_SUCCESS;
    fflush(stdout);
    fflush(stderr);
    for (int i = 0; i < 2; i++)
        if (saved[i] >= 0) dup2(saved[i], fds[i]), close(saved[i]);
    if (!ok) {
        if (tmp) fclose(tmp);
        return do_call(c);
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

/* The first rank's text that is not empty, on rank 0 (bookkeeping around the library). */
static void first_text_to_root(mg_bench *b, char *text, size_t len)
{
    int mine = text[0] ? b->rank : b->size, first = b->size;
    PMPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, b->comm);
    if (first == b->size || first == 0) return;
    if (b->rank == first) PMPI_Send(text, (int)len, MPI_CHAR, 0, 0, b->comm);
    if (b->rank == 0) {
        int n = snprintf(text, len, "rank %d: ", first);
        PMPI_Recv(text + n, (int)len - n, MPI_CHAR, first, 0, b->comm, MPI_STATUS_IGNORE);
    }
}

/* Runs the library's call and the native one on the same inputs; returns 1 on
 * every rank if all results match, and sets *fell_back if the library ran the
 * native code instead of the forced mock-up. For `default`, the native result
 * is also compared with MPI's definition of the call (reference), and with
 * --capture-output what the library prints during the native call is noted. */
static int check(mg_bench *b, call_ctx *c, size_t sbytes, size_t rbytes, size_t tsize, const check_bufs *k,
                 const char *impl, const char *label, int *fell_back, int *refused, char *msg, size_t len)
{
    int is_default = strcmp(impl, "default") == 0;
    char printed[1024];
    c->native = 1;
    /* MPICH builds what some algorithms need (smp: the node communicators) during the first calls on a
     * communicator and refuses them until then: the capture watches a call after a first one */
    if (is_default && k->capture) {
        fill(c, sbytes, rbytes, tsize);
        do_call(c);
    }
    fill(c, sbytes, rbytes, tsize);
    int rc = is_default && k->capture ? call_capturing_output(c, printed, sizeof printed) : do_call(c);
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
        snprintf(msg, len, "the library returned an error for the native call: %s", why);
        c->native = 0;
        return 0;
    }
    memcpy(k->want, c->rbuf, rbytes);
    long long wrong = -1;
    if (is_default && rc == MPI_SUCCESS) {
        size_t significant;
        reference(c, sbytes, rbytes, tsize, k->ref, k->scratch, &significant);
        wrong = mg_first_diff(k->want, k->ref, significant);
    }
    memset(c->rbuf, MG_BENCH_GUARD, rbytes);
    c->native = 0;
    int rc2 = do_call(c);
    const char *ran = mg_tune_last_impl(c->name);
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
    const char *colls_arg, *sizes_arg, *impls_arg, *profiles, *type_arg, *op_arg, *root_arg, *msg_pool, *int_pool;
    int check_only, capture_output;
    /* read */
    const char *names[MAX_COLLS]; /* the library's collectives */
    int ncolls_all;
    int colls[MAX_COLLS], ncolls; /* chosen: indices into names */
    size_t sizes[MAX_SIZES];
    int nsizes;
    const named_type *nt;
    const named_op *no;
    int root, tsize;
    char all[512]; /* every collective, comma-separated */
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
    mg_json_string(j, "datatype", types[0].name);
    mg_json_string(j, "op", ops[0].name);
    mg_json_long(j, "root", 0);
    mg_json_close(j);
}

/* Whether name is an implementation of some collective of the library. */
static int known_impl(const char *name)
{
    for (int c = 0; c < mg_tune_ncollectives(); c++)
        for (int i = 0; i < mg_tune_nimpls(mg_tune_collective_name(c)); i++)
            if (strcmp(name, mg_tune_impl_name(mg_tune_collective_name(c), i)) == 0) return 1;
    return 0;
}

/* --collectives and --impls against the library's catalog; 0 or -1. */
static int read_collectives(mg_bench *b, options *o)
{
    o->ncolls_all = mg_tune_ncollectives();
    if (o->ncolls_all > MAX_COLLS) o->ncolls_all = MAX_COLLS;
    for (int i = 0; i < o->ncolls_all; i++) o->names[i] = mg_tune_collective_name(i);
    mg_join_names(o->names, o->ncolls_all, ",", o->all, sizeof o->all);
    if (!o->colls_arg) o->colls_arg = o->all;
    o->ncolls = mg_parse_names(b, "collective", o->colls_arg, o->names, o->ncolls_all, o->colls);
    if (o->ncolls < 0) return -1;
    for (int k = 0; k < o->ncolls; k++) {
        const char *name = o->names[o->colls[k]];
        if (call_of(name) < 0 || mg_tune_nimpls(name) > MAX_IMPLS) {
            mg_bench_error(b, "mg_collbench cannot call libmpiguide-tune's collective '%s'", name);
            return -1;
        }
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
    char colls[512], colls_help[600], msg_pool[160], int_pool[120];
    const char *names[MAX_COLLS];
    int n = mg_tune_ncollectives();
    for (int i = 0; i < n && i < MAX_COLLS; i++) names[i] = mg_tune_collective_name(i);
    snprintf(colls_help, sizeof colls_help, "%s (default all)",
             mg_join_names(names, n < MAX_COLLS ? n : MAX_COLLS, ",", colls, sizeof colls));
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
    mg_bench_param(b, "profiles", "%s", o->profiles ? o->profiles : "");
    mg_bench_param(b, "datatype", "%s", o->nt->name);
    mg_bench_param(b, "op", "%s", o->no->name);
    mg_bench_param(b, "root", "%d", o->root);
    mg_bench_param(b, "check_only", "%d", o->check_only);
    mg_bench_param(b, "capture_output", "%d", o->capture_output);
    if (mg_bench_begin(b, "collective impl msize") != 0) MPI_Abort(MPI_COMM_WORLD, 2);
}

/* The implementations of c->name to measure (--impls, then `tuned` with
 * --profiles), and one mockup note per implementation; returns their count. */
static int select_impls(mg_bench *b, const options *o, const char *name, const char **impls)
{
    int n = 0, total = mg_tune_nimpls(name);
    for (int i = 0; i < total; i++) {
        const char *impl = mg_tune_impl_name(name, i);
        if (strcmp(o->impls_arg, "all") == 0) {
            impls[n++] = impl;
            continue;
        }
        char *copy = strdup(o->impls_arg), *save = NULL;
        if (!copy) MPI_Abort(MPI_COMM_WORLD, 2);
        for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save))
            if (strcmp(t, impl) == 0) impls[n++] = impl;
        free(copy);
    }
    for (int i = 0; i < total; i++)
        mg_bench_note(b, "mockup", mg_tune_impl_name(name, i), "%d %s", mg_tune_impl_guideline(name, i),
                      mg_tune_impl_formula(name, i));
    if (o->profiles) impls[n++] = "tuned";
    return n;
}

/* One implementation of a collective: what an interleaved side needs. */
typedef struct {
    call_ctx *c;
    const char *impl;
    char label[256];
} impl_side;

/* Untimed, before each repetition of a side: the library runs the side's implementation. */
static int use_impl(void *p)
{
    impl_side *s = p;
    if (strcmp(s->impl, "tuned") == 0) return mg_tune_set_mode(MG_TUNE_TUNED) == MG_TUNE_SUCCESS ? MPI_SUCCESS : MPI_ERR_OTHER;
    if (mg_tune_set_mode(MG_TUNE_FORCED) != MG_TUNE_SUCCESS || mg_tune_force(s->c->name, s->impl) != MG_TUNE_SUCCESS)
        return MPI_ERR_OTHER;
    return MPI_SUCCESS;
}

static int side_call(void *p)
{
    impl_side *s = p;
    return do_call(s->c);
}

/* One implementation at one size, checked against the native call: 1 if it can be timed. */
static int check_impl(mg_bench *b, const options *o, impl_side *s, size_t sbytes, size_t rbytes, const check_bufs *k)
{
    char msg[256];
    use_impl(s);
    int fell_back = 0, refused = 0;
    if (!check(b, s->c, sbytes, rbytes, (size_t)o->tsize, k, s->impl, s->label, &fell_back, &refused, msg,
               sizeof msg)) {
        if (refused)
            mg_bench_note(b, "skip", s->label, "%s", msg);
        else
            mg_bench_config_error(b, s->label, msg);
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

/* Every implementation of one collective at every size: each size's implementations are checked,
 * then timed interleaved (mg_bench_measure_interleaved), so that the native call and its mock-ups
 * see the same state of the machine. Returns the number of configurations. */
static int measure_collective(mg_bench *b, const options *o, call_ctx *c, const check_bufs *k)
{
    const char *impls[MAX_IMPLS + 1];
    int nimpls = select_impls(b, o, c->name, impls), nconfigs = 0;
    impl_side sides[MAX_IMPLS + 1];
    mg_bench_side timed[MAX_IMPLS + 1];
    for (int s = 0; s < o->nsizes; s++) {
        size_t block = o->sizes[s];
        if (c->kind == C_RSB) block = block / (size_t)b->size / (size_t)o->tsize * (size_t)o->tsize;
        if (block == 0) continue; /* reduce_scatter_block needs one element per process */
        size_t sbytes, rbytes, msize = key_bytes(c->kind, block, b->size);
        buffer_sizes(c->kind, block, b->size, &sbytes, &rbytes);
        c->count = (int)(block / (size_t)o->tsize);
        int n = 0;
        for (int i = 0; i < nimpls; i++, nconfigs++) {
            impl_side *x = &sides[n];
            *x = (impl_side){.c = c, .impl = impls[i]};
            snprintf(x->label, sizeof x->label, "%s %s %zu", c->name, impls[i], msize);
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
        mg_tune_set_mode(MG_TUNE_FORCED);
        mg_tune_force(c->name, "default");
    }
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
    options o = {.sizes_arg = DEFAULT_SIZES, .impls_arg = "all", .type_arg = "byte", .op_arg = "bor", .root_arg = "0"};
    int st = read_command_line(&b, &o, argc, argv);
    if (st != MG_ARGS_RUN) return mg_bench_quit(&b, st);
    write_header(&b, &o);

    size_t max_block = 0;
    for (int s = 0; s < o.nsizes; s++) max_block = o.sizes[s] > max_block ? o.sizes[s] : max_block;
    size_t cap = max_block * (size_t)b.size;
    call_ctx c = {
        .root = o.root, .rank = b.rank, .size = b.size, .type = o.nt->type, .op = o.no->op, .comm = MPI_COMM_WORLD};
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
        c.kind = call_of(c.name);
        c.count = 1;
        c.native = 1;
        fill(&c, (size_t)o.tsize * (size_t)b.size, (size_t)o.tsize * (size_t)b.size, (size_t)o.tsize);
        if (mg_bench_calibrate(&b, do_call, &c) != MPI_SUCCESS) MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int nconfigs = 0;
    for (int i = 0; i < o.ncolls && !b.calibrate_only; i++) {
        c.name = o.names[o.colls[i]];
        c.kind = call_of(c.name);
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
