#define _POSIX_C_SOURCE 200809L
/* Ping-pong between ranks 0 and 1 (Carpen-Amarie et al. 2016, Section 2.3.2)
 * over a list of message sizes, in several point-to-point variants, so that
 * guidelines between the variants can be checked. Other ranks only take part
 * in synchronization. */
#include "mg_bench.h"
#include "mg_options.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define TAG           17
#define MAX_SIZES     256
#define DEFAULT_SIZES "4,1k,64k" /* --help and --list print it */

typedef struct {
    const char *name;
    MPI_Datatype type;
} basic_type;

static const basic_type basic_types[] = {
    {"int", MPI_INT}, {"char", MPI_CHAR}, {"short", MPI_SHORT}, {"double", MPI_DOUBLE}, {"byte", MPI_BYTE},
};
#define NTYPES (sizeof basic_types / sizeof *basic_types)

typedef struct {
    int rank, count;
    MPI_Datatype type;
    unsigned char *sbuf, *rbuf;
    MPI_Comm comm;
} pp_ctx;

/* Rank 0 sends a message to rank 1, which sends one back. */
static int op_send_recv(void *p)
{
    pp_ctx *c = p;
    int rc = MPI_SUCCESS;
    if (c->rank == 0) {
        rc = MPI_Send(c->sbuf, c->count, c->type, 1, TAG, c->comm);
        if (rc == MPI_SUCCESS) rc = MPI_Recv(c->rbuf, c->count, c->type, 1, TAG, c->comm, MPI_STATUS_IGNORE);
    } else if (c->rank == 1) {
        rc = MPI_Recv(c->rbuf, c->count, c->type, 0, TAG, c->comm, MPI_STATUS_IGNORE);
        if (rc == MPI_SUCCESS) rc = MPI_Send(c->sbuf, c->count, c->type, 0, TAG, c->comm);
    }
    return rc;
}

/* Rank 0 combines its send and receive into one MPI_Sendrecv. */
static int op_sendrecv(void *p)
{
    pp_ctx *c = p;
    if (c->rank == 0)
        return MPI_Sendrecv(c->sbuf, c->count, c->type, 1, TAG, c->rbuf, c->count, c->type, 1, TAG, c->comm,
                            MPI_STATUS_IGNORE);
    return c->rank == 1 ? op_send_recv(p) : MPI_SUCCESS;
}

/* The same exchange with non-blocking calls, receive posted first. */
static int op_isend_irecv(void *p)
{
    pp_ctx *c = p;
    MPI_Request req[2];
    int rc = MPI_SUCCESS;
    if (c->rank == 0) {
        rc = MPI_Irecv(c->rbuf, c->count, c->type, 1, TAG, c->comm, &req[0]);
        if (rc == MPI_SUCCESS) rc = MPI_Isend(c->sbuf, c->count, c->type, 1, TAG, c->comm, &req[1]);
        if (rc == MPI_SUCCESS) rc = MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
    } else if (c->rank == 1) {
        rc = MPI_Irecv(c->rbuf, c->count, c->type, 0, TAG, c->comm, &req[0]);
        if (rc == MPI_SUCCESS) rc = MPI_Wait(&req[0], MPI_STATUS_IGNORE);
        if (rc == MPI_SUCCESS) rc = MPI_Isend(c->sbuf, c->count, c->type, 0, TAG, c->comm, &req[1]);
        if (rc == MPI_SUCCESS) rc = MPI_Wait(&req[1], MPI_STATUS_IGNORE);
    }
    return rc;
}

typedef struct {
    const char *name;
    mg_bench_op op;
} variant;

static const variant variants[] = {
    {"send_recv", op_send_recv},
    {"sendrecv", op_sendrecv},
    {"isend_irecv", op_isend_irecv},
};
#define NVARIANTS (sizeof variants / sizeof *variants)

static unsigned char pattern(int sender, size_t i) { return (unsigned char)(i * 31u + 7u * (unsigned)sender + 1u); }

/* Exchanges known data once and checks every received byte on both sides;
 * returns 1 on every rank if the data arrived intact. */
static int check_exchange(pp_ctx *c, const variant *v, size_t bytes, MPI_Comm sync_comm)
{
    for (size_t i = 0; i < bytes; i++) {
        c->sbuf[i] = pattern(c->rank, i);
        c->rbuf[i] = 0;
    }
    int ok = v->op(c) == MPI_SUCCESS;
    if (ok && c->rank <= 1) {
        int peer = 1 - c->rank;
        for (size_t i = 0; i < bytes && ok; i++) ok = c->rbuf[i] == pattern(peer, i);
    }
    int all_ok = 0;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, sync_comm);
    return all_ok;
}

static void list(mg_json *j, const mg_bench *b)
{
    (void)b;
    const char *names[NVARIANTS];
    for (size_t v = 0; v < NVARIANTS; v++) names[v] = variants[v].name;
    mg_json_strings(j, "variants", names, NVARIANTS);
    mg_json_object(j, "datatypes");
    for (size_t t = 0; t < NTYPES; t++) {
        int size;
        MPI_Type_size(basic_types[t].type, &size);
        mg_json_long(j, basic_types[t].name, size);
    }
    mg_json_close(j);
    mg_json_object(j, "defaults");
    mg_json_size_list(j, "sizes", DEFAULT_SIZES);
    mg_json_strings(j, "variants", names, NVARIANTS);
    mg_json_string(j, "datatype", basic_types[0].name);
    mg_json_close(j);
}

typedef struct {
    const char *sizes_arg, *variants_arg, *type_arg;
    int check_only;
    const basic_type *bt;
    int tsize;
    size_t sizes[MAX_SIZES];
    int nsizes;
    int chosen[NVARIANTS], nvar;
    char all_variants[64];
} options;

/* The values of the options; 0, or -1 after the message. */
static int read_values(mg_bench *b, options *o)
{
    for (size_t k = 0; k < NTYPES && !o->bt; k++)
        if (strcmp(basic_types[k].name, o->type_arg) == 0) o->bt = &basic_types[k];
    if (!o->bt) {
        mg_bench_error(b, "unknown datatype '%s' (known: int, char, short, double, byte)", o->type_arg);
        return -1;
    }
    MPI_Type_size(o->bt->type, &o->tsize);
    if (mg_parse_size_list(o->sizes_arg, o->sizes, MAX_SIZES, &o->nsizes) != 0) {
        mg_bench_error(b, "bad --sizes '%s': expected comma-separated byte counts, at most %d", o->sizes_arg,
                       MAX_SIZES);
        return -1;
    }
    for (int s = 0; s < o->nsizes; s++) {
        if (o->sizes[s] == 0 || o->sizes[s] % (size_t)o->tsize != 0 || o->sizes[s] / (size_t)o->tsize > INT32_MAX) {
            mg_bench_error(b, "message size %zu is not a positive multiple of the %s size (%d bytes)", o->sizes[s],
                           o->bt->name, o->tsize);
            return -1;
        }
    }
    const char *names[NVARIANTS];
    for (size_t v = 0; v < NVARIANTS; v++) names[v] = variants[v].name;
    if ((o->nvar = mg_parse_names(b, "variant", o->variants_arg, names, NVARIANTS, o->chosen)) < 0) return -1;
    if (b->size < 2) {
        mg_bench_error(b, "ping-pong needs at least 2 processes (got %d)", b->size);
        return -1;
    }
    return 0;
}

/* The command line: MG_ARGS_RUN, or the exit status. */
static int read_command_line(mg_bench *b, options *o, int argc, char **argv)
{
    const mg_opt opts[] = {
        {"--sizes", MG_OPT_VALUE, &o->sizes_arg, 0, NULL, "LIST",
         "message sizes in bytes, comma separated, k/m/g = KiB/MiB/GiB (default " DEFAULT_SIZES ")"},
        {"--variants", MG_OPT_VALUE, &o->variants_arg, 0, NULL, "LIST", "send_recv,sendrecv,isend_irecv (default all)"},
        {"--datatype", MG_OPT_VALUE, &o->type_arg, 0, NULL, "NAME", "int (default), char, short, double, byte"},
        {"--check-only", MG_OPT_FLAG, &o->check_only, 1, NULL, NULL,
         "verify the data of every configuration, measure nothing"},
    };
    const mg_cli cli = {"mg_pingpong", "mpiexec -n 2 mg_pingpong [options]", opts,
                        (int)(sizeof opts / sizeof *opts), 0, list};
    int st = mg_bench_args(b, &cli, argc, argv);
    if (st == MG_ARGS_RUN && read_values(b, o) != 0) st = 2;
    return st;
}

/* Every variant at every size: checked, then the variants of a size timed interleaved
 * (mg_bench_measure_interleaved), so that each sees the same state of the machine. */
static void measure(mg_bench *b, const options *o, pp_ctx *ctx)
{
    mg_bench_side sides[NVARIANTS];
    char labels[NVARIANTS][128];
    for (int s = 0; s < o->nsizes && !b->calibrate_only; s++) {
        int n = 0;
        ctx->count = (int)(o->sizes[s] / (size_t)o->tsize);
        for (int v = 0; v < o->nvar; v++) {
            const variant *var = &variants[o->chosen[v]];
            snprintf(labels[n], sizeof labels[n], "%s %zu %d", var->name, o->sizes[s], ctx->count);
            if (!check_exchange(ctx, var, o->sizes[s], b->comm)) {
                mg_bench_config_error(b, labels[n], "received data differs from what was sent");
                continue;
            }
            if (!o->check_only) sides[n] = (mg_bench_side){labels[n], var->op, ctx, 1, NULL}, n++;
        }
        while (n > 0) {
            int failed = -1;
            if (mg_bench_measure_interleaved(b, n, sides, o->sizes[s], &failed) == MPI_SUCCESS) break;
            if (failed < 0) {
                for (int j = 0; j < n; j++) mg_bench_config_error(b, sides[j].label, "an MPI call failed during measurement");
                break;
            }
            mg_bench_config_error(b, sides[failed].label, "an MPI call failed during measurement");
            sides[failed] = sides[--n];
        }
    }
}

static int run(int argc, char **argv)
{
    mg_bench b;
    mg_bench_init(&b, "pingpong", MPI_COMM_WORLD);
    options o = {.sizes_arg = DEFAULT_SIZES, .type_arg = "int"};
    const char *names[NVARIANTS];
    for (size_t v = 0; v < NVARIANTS; v++) names[v] = variants[v].name;
    o.variants_arg = mg_join_names(names, (int)NVARIANTS, ",", o.all_variants, sizeof o.all_variants);
    int st = read_command_line(&b, &o, argc, argv);
    if (st != MG_ARGS_RUN) return mg_bench_quit(&b, st);

    size_t max_bytes = 0, smallest = o.sizes[0];
    for (int s = 0; s < o.nsizes; s++) {
        max_bytes = o.sizes[s] > max_bytes ? o.sizes[s] : max_bytes;
        smallest = o.sizes[s] < smallest ? o.sizes[s] : smallest;
    }
    pp_ctx ctx = {.rank = b.rank, .type = o.bt->type, .comm = MPI_COMM_WORLD};
    ctx.sbuf = malloc(max_bytes);
    ctx.rbuf = malloc(max_bytes);
    if (!ctx.sbuf || !ctx.rbuf) {
        mg_bench_error(&b, "cannot allocate 2 x %zu bytes", max_bytes);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    mg_bench_param(&b, "datatype", "%s", o.bt->name);
    mg_bench_param(&b, "sizes", "%s", o.sizes_arg);
    mg_bench_param(&b, "variants", "%s", o.variants_arg);
    mg_bench_param(&b, "check_only", "%d", o.check_only);
    if (mg_bench_begin(&b, "variant msize_bytes count") != 0) MPI_Abort(MPI_COMM_WORLD, 2);

    /* t_nrep1 from the smallest message of the first variant. The data check
     * doubles as warm-up, so connection setup cannot land in the calibration. */
    const variant *first = &variants[o.chosen[0]];
    ctx.count = (int)(smallest / (size_t)o.tsize);
    if (!o.check_only && check_exchange(&ctx, first, smallest, b.comm) &&
        mg_bench_calibrate(&b, first->op, &ctx) != MPI_SUCCESS)
        MPI_Abort(MPI_COMM_WORLD, 2);
    measure(&b, &o, &ctx);
    if (o.check_only && b.rank == 0)
        fprintf(stderr, "pingpong: %d of %d configurations passed the data check\n", o.nsizes * o.nvar - b.errors,
                o.nsizes * o.nvar);
    free(ctx.sbuf);
    free(ctx.rbuf);
    return mg_bench_end(&b);
}

int main(int argc, char **argv) { return mg_bench_main(argc, argv, run); }
