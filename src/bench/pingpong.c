#define _POSIX_C_SOURCE 200809L
/* Ping-pong between ranks 0 and 1 (000 Sec. 2.3.2) over a list of message
 * sizes, in several point-to-point variants, so that guidelines between the
 * variants can be checked. Other ranks only take part in synchronization. */
#include "mg_bench.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define TAG       17
#define MAX_SIZES 256

typedef struct {
    const char *name;
    MPI_Datatype type;
} basic_type;

static const basic_type basic_types[] = {
    {"int", MPI_INT}, {"char", MPI_CHAR}, {"short", MPI_SHORT}, {"double", MPI_DOUBLE}, {"byte", MPI_BYTE},
};

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

static int select_variants(const char *list, int *chosen, mg_bench *b)
{
    char *copy = strdup(list), *save = NULL;
    int n = 0;
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        size_t k = 0;
        while (k < NVARIANTS && strcmp(variants[k].name, tok) != 0) k++;
        if (k == NVARIANTS) {
            mg_bench_error(b, "unknown variant '%s' (known: send_recv, sendrecv, isend_irecv)", tok);
            free(copy);
            return -1;
        }
        chosen[n++] = (int)k;
        if (n == (int)NVARIANTS) break;
    }
    free(copy);
    return n;
}

static void usage(const mg_bench *b)
{
    if (b->rank != 0) return;
    fprintf(stderr,
            "usage: mpiexec -n 2 mg_pingpong [options]\n"
            "  --sizes LIST         message sizes in bytes, comma separated, k/m = KiB/MiB (default 4,1k,64k)\n"
            "  --variants LIST      send_recv,sendrecv,isend_irecv (default all)\n"
            "  --datatype NAME      int (default), char, short, double, byte\n"
            "  --check-only         verify the data of every configuration, measure nothing\n"
            "%s",
            mg_bench_common_usage());
}

static int run(int argc, char **argv)
{
    mg_bench b;
    mg_bench_init(&b, "pingpong", MPI_COMM_WORLD);
    const char *sizes_arg = "4,1k,64k", *variants_arg = "send_recv,sendrecv,isend_irecv";
    const basic_type *bt = &basic_types[0];
    int check_only = 0;
    for (int i = 1; i < argc; i++) {
        int r = mg_bench_option(&b, argc, argv, &i);
        if (r > 0) continue;
        if (r < 0) {
            mg_bench_end(&b);
            return 2;
        }
        const char *opt = argv[i];
        if (strcmp(opt, "--check-only") == 0) {
            check_only = 1;
        } else if (strcmp(opt, "--help") == 0) {
            usage(&b);
            mg_bench_end(&b);
            return 0;
        } else if ((strcmp(opt, "--sizes") == 0 || strcmp(opt, "--variants") == 0 || strcmp(opt, "--datatype") == 0) &&
                   i + 1 < argc) {
            const char *val = argv[++i];
            if (opt[2] == 's')
                sizes_arg = val;
            else if (opt[2] == 'v')
                variants_arg = val;
            else {
                size_t k = 0, nt = sizeof basic_types / sizeof *basic_types;
                while (k < nt && strcmp(basic_types[k].name, val) != 0) k++;
                if (k == nt) {
                    mg_bench_error(&b, "unknown datatype '%s' (known: int, char, short, double, byte)", val);
                    mg_bench_end(&b);
                    return 2;
                }
                bt = &basic_types[k];
            }
        } else {
            mg_bench_error(&b, "unknown option '%s' (try --help)", opt);
            mg_bench_end(&b);
            return 2;
        }
    }

    size_t sizes[MAX_SIZES];
    int nsizes, chosen[NVARIANTS], nvar, tsize;
    MPI_Type_size(bt->type, &tsize);
    if (mg_parse_size_list(sizes_arg, sizes, MAX_SIZES, &nsizes) != 0) {
        mg_bench_error(&b, "bad --sizes '%s': expected comma-separated byte counts, at most %d", sizes_arg, MAX_SIZES);
        mg_bench_end(&b);
        return 2;
    }
    for (int s = 0; s < nsizes; s++) {
        if (sizes[s] == 0 || sizes[s] % (size_t)tsize != 0 || sizes[s] / (size_t)tsize > INT32_MAX) {
            mg_bench_error(&b, "message size %zu is not a positive multiple of the %s size (%d bytes)", sizes[s],
                           bt->name, tsize);
            mg_bench_end(&b);
            return 2;
        }
    }
    if ((nvar = select_variants(variants_arg, chosen, &b)) < 0) {
        mg_bench_end(&b);
        return 2;
    }
    if (b.size < 2) {
        mg_bench_error(&b, "ping-pong needs at least 2 processes (got %d)", b.size);
        mg_bench_end(&b);
        return 2;
    }

    size_t max_bytes = 0;
    for (int s = 0; s < nsizes; s++) max_bytes = sizes[s] > max_bytes ? sizes[s] : max_bytes;
    pp_ctx ctx = {.rank = b.rank, .type = bt->type, .comm = MPI_COMM_WORLD};
    ctx.sbuf = malloc(max_bytes);
    ctx.rbuf = malloc(max_bytes);
    if (!ctx.sbuf || !ctx.rbuf) {
        mg_bench_error(&b, "cannot allocate 2 x %zu bytes", max_bytes);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }

    mg_bench_param(&b, "datatype", "%s", bt->name);
    mg_bench_param(&b, "sizes", "%s", sizes_arg);
    mg_bench_param(&b, "variants", "%s", variants_arg);
    mg_bench_param(&b, "check_only", "%d", check_only);
    if (mg_bench_begin(&b, "variant msize_bytes count") != 0) MPI_Abort(MPI_COMM_WORLD, 2);

    /* t_nrep1 from the smallest message of the first variant. */
    size_t smallest = sizes[0];
    for (int s = 0; s < nsizes; s++) smallest = sizes[s] < smallest ? sizes[s] : smallest;
    ctx.count = (int)(smallest / (size_t)tsize);
    /* The data check doubles as warm-up, so connection setup cannot land in the calibration. */
    if (!check_only && check_exchange(&ctx, &variants[chosen[0]], smallest, b.comm) &&
        mg_bench_calibrate(&b, variants[chosen[0]].op, &ctx) != MPI_SUCCESS)
        MPI_Abort(MPI_COMM_WORLD, 2);

    for (int s = 0; s < nsizes && !b.calibrate_only; s++) {
        for (int v = 0; v < nvar; v++) {
            const variant *var = &variants[chosen[v]];
            char label[128];
            ctx.count = (int)(sizes[s] / (size_t)tsize);
            snprintf(label, sizeof label, "%s %zu %d", var->name, sizes[s], ctx.count);
            if (!check_exchange(&ctx, var, sizes[s], b.comm)) {
                mg_bench_config_error(&b, label, "received data differs from what was sent");
                continue;
            }
            if (!check_only && mg_bench_measure(&b, label, sizes[s], var->op, &ctx) != MPI_SUCCESS) {
                mg_bench_config_error(&b, label, "an MPI call failed during measurement");
            }
        }
    }
    if (check_only && b.rank == 0)
        fprintf(stderr, "pingpong: %d of %d configurations passed the data check\n", nsizes * nvar - b.errors,
                nsizes * nvar);
    free(ctx.sbuf);
    free(ctx.rbuf);
    return mg_bench_end(&b);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int status = run(argc, argv);
    MPI_Finalize();
    return status;
}
