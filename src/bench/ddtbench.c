#define _POSIX_C_SOURCE 200809L
/* mg_ddtbench: the derived-datatype expectation tests of Carpen-Amarie et al.
 * (2016, Sections 2.3.2 and 3.1). One launch measures one communication pattern
 * (ping-pong, MPI_Bcast, MPI_Allgather) for every layout description x
 * blocksize A x data size m x mode: the derived type in the call, MPI_Pack +
 * contiguous transfer + MPI_Unpack, the same with the datatype engine, or the
 * engine's normalized type in the call.
 *
 * All descriptions of one (A, m) move the same data bytes, so that they compare
 * directly. Every configuration and mode is checked with known data before it
 * is timed; type construction, engine compilation, allocation and filling are
 * never timed. Columns and keyed lines are described in docs/formats.md. */
#include "bench_util.h"
#include "layouts.h"
#include "mg_bench.h"
#include "mg_options.h"
#include "mg_size.h"
#include "mpiguide/dt.h"
#include "tuned_mode.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LIST   64
#define MAX_DESCS  128
#define GUARD      MG_BENCH_GUARD
#define GAP        0x5A /* send-buffer bytes that hold no data: differs from GUARD */
#define NORMAL_MAX 8192
#define MSG_LEN    512
#define TAG        23

/* The defaults of the options (--help and --list print them). */
#define DEFAULT_LAYOUTS "contiguous;tiled;block;bucket;alternating"
#define DEFAULT_A       "2,10,100,1000,1024,10000"
#define DEFAULT_SIZES   "3200,2560000"
#define DEFAULT_TYPE    "int"
#define DEFAULT_MEMORY  "1g"

enum { PAT_PINGPONG, PAT_BCAST, PAT_ALLGATHER, NPATTERNS };
static const char *const pattern_names[NPATTERNS] = {"pingpong", "bcast", "allgather"};
/* tuned: the datatype mode under libmpiguide-tune (tuned_mode.h) */
enum { MODE_DATATYPE, MODE_PACK, MODE_ENGINE, MODE_NORMALIZED, MODE_TUNED, NMODES };
static const char *const mode_names[NMODES] = {"datatype", "pack", "engine", "normalized", "tuned"};
/* the modes this binary lists (--list, --help) */
#define MODES_HERE (mg_bench_tuned_built() ? NMODES : MODE_TUNED)
/* The element types of --type: the catalog's basic types but byte. */
static const char *const type_names[] = {"int", "char", "short", "double"};
#define NTYPES (int)(sizeof type_names / sizeof *type_names)

typedef struct {
    char spec[256];  /* as given, trimmed */
    char label[256]; /* layout column: blanks collapsed to ':' */
    mg_layout_params params;
} desc;

typedef struct {
    /* as given */
    const char *pattern_arg, *layouts_arg, *A_arg, *sizes_arg, *modes_arg, *type_arg, *root_arg, *mem_arg,
        *rotate_arg;
    const char *profiles_arg; /* --datatype-profiles */
    int check_only, corrupt;
    /* read */
    int pattern, root, rotate;
    int modes[NMODES], nmodes;
    long A[MAX_LIST];
    int nA;
    size_t sizes[MAX_LIST];
    int nsizes;
    long basic;        /* mg_layout_basic */
    size_t max_memory; /* skip configurations whose buffers need more per rank */
    desc *descs;
    int ndescs;
    int form; /* of the normalized types (mg_bench_dt_form) */
} options;

/* ------------------------------------------------------------------ */
/* The timed operations                                                */
/* ------------------------------------------------------------------ */

typedef struct {
    int rank, size, root;
    MPI_Comm comm;
    MPI_Datatype type; /* datatype and normalized modes: what goes into the call */
    int count;
    MPI_Datatype ltype; /* pack and engine modes: the layout's type */
    int lcount;
    mg_dt *dt;
    int engine; /* pack/engine ops: 1 = mg_dt_pack/mg_dt_unpack, MPI_BYTE messages */
    unsigned char *sbuf, *rbuf, *pbuf, *pbuf2;
    MPI_Aint ext; /* extent of count x type: where allgather block i goes */
    int packsize; /* MPI_Pack_size */
    int packed;   /* MPI_Pack's position after one pack */
    int msize;    /* data bytes */
} xfer;

static void keep(int *rc, int r)
{
    if (*rc == MPI_SUCCESS) *rc = r;
}

/* The engine's failures become MPI_ERR_OTHER; the op still does its
 * communication so that the peer does not wait forever. */
static int pack_to(const xfer *c, unsigned char *out)
{
    if (c->engine) {
        MPI_Count got = 0;
        int rc = mg_dt_pack(c->dt, c->sbuf, c->lcount, 0, out, c->msize, &got);
        return rc == MG_DT_SUCCESS && got == c->msize ? MPI_SUCCESS : MPI_ERR_OTHER;
    }
    int pos = 0;
    return MPI_Pack(c->sbuf, c->lcount, c->ltype, out, c->packsize, &pos, c->comm);
}

static int unpack_from(const xfer *c, const unsigned char *in, unsigned char *out)
{
    if (c->engine) {
        MPI_Count got = 0;
        int rc = mg_dt_unpack(c->dt, in, c->msize, 0, out, c->lcount, &got);
        return rc == MG_DT_SUCCESS && got == c->msize ? MPI_SUCCESS : MPI_ERR_OTHER;
    }
    int pos = 0;
    return MPI_Unpack(in, c->packed, &pos, out, c->lcount, c->ltype, c->comm);
}

static MPI_Datatype wire_type(const xfer *c) { return c->engine ? MPI_BYTE : MPI_PACKED; }
static int wire_count(const xfer *c) { return c->engine ? c->msize : c->packed; }

static int op_dt_pingpong(void *p)
{
    xfer *c = p;
    int rc = MPI_SUCCESS;
    if (c->rank == 0) {
        keep(&rc, MPI_Send(c->sbuf, c->count, c->type, 1, TAG, c->comm));
        keep(&rc, MPI_Recv(c->rbuf, c->count, c->type, 1, TAG, c->comm, MPI_STATUS_IGNORE));
    } else if (c->rank == 1) {
        keep(&rc, MPI_Recv(c->rbuf, c->count, c->type, 0, TAG, c->comm, MPI_STATUS_IGNORE));
        keep(&rc, MPI_Send(c->sbuf, c->count, c->type, 0, TAG, c->comm));
    }
    return rc;
}

static int op_dt_bcast(void *p)
{
    xfer *c = p;
    return MPI_Bcast(c->rank == c->root ? c->sbuf : c->rbuf, c->count, c->type, c->root, c->comm);
}

static int op_dt_allgather(void *p)
{
    xfer *c = p;
    return MPI_Allgather(c->sbuf, c->count, c->type, c->rbuf, c->count, c->type, c->comm);
}

/* Carpen-Amarie et al. (2016), Section 3.1: ping side pack, send, receive,
 * unpack; pong side receive, unpack, pack, send. */
static int op_pk_pingpong(void *p)
{
    xfer *c = p;
    int rc = MPI_SUCCESS, rcount = c->engine ? c->msize : c->packsize;
    if (c->rank == 0) {
        keep(&rc, pack_to(c, c->pbuf));
        keep(&rc, MPI_Send(c->pbuf, wire_count(c), wire_type(c), 1, TAG, c->comm));
        keep(&rc, MPI_Recv(c->pbuf2, rcount, wire_type(c), 1, TAG, c->comm, MPI_STATUS_IGNORE));
        keep(&rc, unpack_from(c, c->pbuf2, c->rbuf));
    } else if (c->rank == 1) {
        keep(&rc, MPI_Recv(c->pbuf2, rcount, wire_type(c), 0, TAG, c->comm, MPI_STATUS_IGNORE));
        keep(&rc, unpack_from(c, c->pbuf2, c->rbuf));
        keep(&rc, pack_to(c, c->pbuf));
        keep(&rc, MPI_Send(c->pbuf, wire_count(c), wire_type(c), 0, TAG, c->comm));
    }
    return rc;
}

static int op_pk_bcast(void *p)
{
    xfer *c = p;
    int rc = MPI_SUCCESS;
    if (c->rank == c->root) {
        keep(&rc, pack_to(c, c->pbuf));
        keep(&rc, MPI_Bcast(c->pbuf, wire_count(c), wire_type(c), c->root, c->comm));
    } else {
        keep(&rc, MPI_Bcast(c->pbuf, wire_count(c), wire_type(c), c->root, c->comm));
        keep(&rc, unpack_from(c, c->pbuf, c->rbuf));
    }
    return rc;
}

/* One unpack per received block: a catenation of packing units is not a
 * packing unit (Carpen-Amarie et al. 2016, Section 3.1; MPI 4.2). */
static int op_pk_allgather(void *p)
{
    xfer *c = p;
    int rc = MPI_SUCCESS, w = wire_count(c);
    keep(&rc, pack_to(c, c->pbuf));
    keep(&rc, MPI_Allgather(c->pbuf, w, wire_type(c), c->pbuf2, w, wire_type(c), c->comm));
    for (int i = 0; i < c->size; i++)
        keep(&rc, unpack_from(c, c->pbuf2 + (size_t)i * (size_t)w, c->rbuf + (size_t)i * (size_t)c->ext));
    return rc;
}

static const mg_bench_op dt_ops[NPATTERNS] = {op_dt_pingpong, op_dt_bcast, op_dt_allgather};
static const mg_bench_op pk_ops[NPATTERNS] = {op_pk_pingpong, op_pk_bcast, op_pk_allgather};

/* ------------------------------------------------------------------ */
/* Data check                                                          */
/* ------------------------------------------------------------------ */

/* One layout configuration: its geometry, buffers and expected image. */
typedef struct {
    const mg_layout_info *L;
    MPI_Aint *offs;
    int *sizes;            /* per element, mixed element types only */
    size_t span, rsize;    /* send buffer, receive buffer bytes */
    unsigned char *expect; /* what the receive buffer must hold after the op */
    int receives;          /* this rank checks its receive buffer */
    size_t flip;           /* --corrupt: a received data byte */
} layout_cfg;

static unsigned seed_of(int rank) { return (unsigned)rank + 1u; }

/* pat(sender, q) at the data bytes of one instance, q the packed stream position. */
static void put_stream(unsigned char *buf, const layout_cfg *g, int sender)
{
    size_t q = 0;
    for (long e = 0; e < g->L->n; e++) {
        size_t sz = g->sizes ? (size_t)g->sizes[e] : (size_t)g->L->elem_size;
        unsigned char *d = buf + g->offs[e];
        for (size_t j = 0; j < sz; j++) d[j] = mg_pattern_byte(seed_of(sender), q++);
    }
}

/* The expected receive buffer of this rank and whether it receives at all. */
static void build_expect(layout_cfg *g, int pattern, int rank, int size, int root)
{
    memset(g->expect, GUARD, g->rsize);
    g->receives = 0;
    if (pattern == PAT_PINGPONG && rank <= 1) {
        put_stream(g->expect, g, 1 - rank);
        g->receives = 1;
    } else if (pattern == PAT_BCAST && rank != root) {
        put_stream(g->expect, g, root);
        g->receives = 1;
    } else if (pattern == PAT_ALLGATHER) {
        for (int i = 0; i < size; i++) put_stream(g->expect + (size_t)i * (size_t)g->L->extent, g, i);
        g->receives = 1;
    }
    g->flip = (size_t)g->offs[g->L->n / 2];
}

/* Runs op once on freshly filled buffers and compares every rank's whole
 * receive buffer with its expected image. Returns 1 on every rank if all
 * ranks got what they should; else records the error of the lowest failing
 * rank under `label` and returns 0. The buffers keep their state. */
static int check_mode(mg_bench *b, const options *o, const layout_cfg *g, xfer *x, mg_bench_op op, const char *label)
{
    char msg[MSG_LEN] = "";
    memset(x->sbuf, GAP, g->span);
    put_stream(x->sbuf, g, b->rank);
    memset(x->rbuf, GUARD, g->rsize);
    int rc = op(x);
    if (rc != MPI_SUCCESS) {
        char e[MPI_MAX_ERROR_STRING];
        int len = 0;
        if (x->engine && rc == MPI_ERR_OTHER)
            snprintf(e, sizeof e, "mg_dt_pack or mg_dt_unpack failed");
        else if (MPI_Error_string(rc, e, &len) != MPI_SUCCESS)
            snprintf(e, sizeof e, "MPI error %d", rc);
        snprintf(msg, sizeof msg, "the operation failed on rank %d: %.400s", b->rank, e);
    } else if (g->receives) {
        if (o->corrupt) x->rbuf[g->flip] ^= 0xFF;
        long long j = mg_first_diff(x->rbuf, g->expect, g->rsize);
        if (j >= 0)
            snprintf(msg, sizeof msg,
                     "received data differ: first differing byte %lld of %zu on rank %d (got 0x%02x, want 0x%02x)%s", j,
                     g->rsize, b->rank, x->rbuf[j], g->expect[j],
                     g->expect[j] == GUARD ? "; no data belongs at that byte" : "");
    }
    return mg_bench_check_agreed(b, msg, MSG_LEN, label);
}

/* ------------------------------------------------------------------ */
/* One layout configuration                                            */
/* ------------------------------------------------------------------ */

typedef struct {
    int configs, skipped, checks;
} counters;

/* Records an error for every requested mode whose flag in bad[] is set. */
static void modes_error(mg_bench *b, const options *o, const char *cfg, long long msize, const int *bad,
                        const char *what)
{
    char label[400];
    for (int i = 0; i < o->nmodes; i++)
        if (!bad || bad[o->modes[i]]) {
            snprintf(label, sizeof label, "%s %lld %s", cfg, msize, mode_names[o->modes[i]]);
            mg_bench_config_error(b, label, what);
        }
}

static int want_mode(const options *o, int mode)
{
    for (int i = 0; i < o->nmodes; i++)
        if (o->modes[i] == mode) return 1;
    return 0;
}

/* d at A for n elements, checked by the catalog, against MPI's int counts and
 * against --max-memory. Returns 0 with *p and *info if it can be built, else
 * -1 after the skip note. */
static int plan_config(mg_bench *b, const options *o, const desc *d, long A, long n, const char *cfg,
                       mg_layout_params *p, mg_layout_info *info, counters *cnt)
{
    char err[512];
    int rc = mg_layout_at_A(&d->params, A, p, err, sizeof err);
    if (!rc) rc = mg_layout_check(p, n, info, err, sizeof err);
    if (rc) {
        mg_bench_note(b, "skip", cfg, "%s", err);
        cnt->skipped++;
        return -1;
    }
    double msize = (double)info->data_size;
    /* RowCol at a large A spans A times its data: keep such grids from exhausting memory. */
    double rbytes =
        o->pattern == PAT_ALLGATHER ? (b->size - 1.0) * info->extent + info->buffer_size : info->buffer_size;
    double need = info->buffer_size + 2.0 * rbytes + (o->pattern == PAT_ALLGATHER ? b->size + 1.0 : 2.0) * msize;
    if (info->data_size > INT_MAX)
        mg_bench_note(b, "skip", cfg, "%s: %lld data bytes do not fit MPI's int counts", d->label,
                      (long long)info->data_size);
    else if (need > (double)o->max_memory)
        mg_bench_note(b, "skip", cfg, "%s: the buffers need %.0f bytes per rank, more than --max-memory %zu", d->label,
                      need, o->max_memory);
    else
        return 0;
    cnt->skipped++;
    return -1;
}

/* Builds the type of p for n elements into *lt. The catalog accepted it, so a
 * failure is MPI's; so is a type that MPI places elsewhere than the catalog
 * (allgather blocks are one MPI extent apart). Returns 0, or -1 after errors
 * for every mode. */
static int build_config(mg_bench *b, const options *o, const mg_layout_params *p, long n, const char *cfg,
                        long long msize, mg_layout_type *lt, counters *cnt)
{
    char err[512];
    if (mg_layout_build(p, n, lt, err, sizeof err) != MG_LAYOUT_OK) {
        modes_error(b, o, cfg, msize, NULL, err);
        return -1;
    }
    cnt->configs++;
    const mg_layout_info *L = &lt->info;
    MPI_Aint lb, text, tlb, tspan;
    MPI_Type_get_extent(lt->type, &lb, &text);
    MPI_Type_get_true_extent(lt->type, &tlb, &tspan);
    if (lb == 0 && text * lt->count == L->extent && tlb >= 0 && tlb + (lt->count - 1) * text + tspan <= L->buffer_size)
        return 0;
    snprintf(err, sizeof err,
             "MPI gives the type lb %lld, extent %lld and true extent [%lld, +%lld) for count %d; the layout "
             "needs lb 0, an extent of %lld for count x type and a buffer of %lld bytes",
             (long long)lb, (long long)text, (long long)tlb, (long long)tspan, lt->count, (long long)L->extent,
             (long long)L->buffer_size);
    modes_error(b, o, cfg, msize, NULL, err);
    mg_layout_type_free(lt);
    return -1;
}

/* The buffers of one configuration, the expected receive image and the first
 * touch of everything (outside any timing). */
static void config_alloc(mg_bench *b, const options *o, const mg_layout_type *lt, layout_cfg *g, xfer *x,
                         const char *cfg)
{
    const mg_layout_info *L = &lt->info;
    *g = (layout_cfg){.L = L, .span = (size_t)L->buffer_size};
    g->rsize = o->pattern == PAT_ALLGATHER ? (size_t)(b->size - 1) * (size_t)L->extent + g->span : g->span;
    *x = (xfer){.rank = b->rank,
                .size = b->size,
                .root = o->root,
                .comm = MPI_COMM_WORLD,
                .ltype = lt->type,
                .lcount = lt->count,
                .ext = L->extent,
                .msize = (int)L->data_size};
    MPI_Pack_size(lt->count, lt->type, x->comm, &x->packsize);
    size_t pcap = (size_t)(x->packsize > x->msize ? x->packsize : x->msize);
    size_t p2cap = o->pattern == PAT_ALLGATHER ? (size_t)b->size * pcap : pcap;
    x->sbuf = mg_alloc64(g->span);
    x->rbuf = mg_alloc64(g->rsize);
    g->expect = mg_alloc64(g->rsize);
    x->pbuf = mg_alloc64(pcap);
    x->pbuf2 = mg_alloc64(p2cap);
    g->offs = malloc(sizeof *g->offs * (size_t)L->n);
    g->sizes = L->elem_size == 0 ? malloc(sizeof *g->sizes * (size_t)L->n) : NULL;
    if (!x->sbuf || !x->rbuf || !g->expect || !x->pbuf || !x->pbuf2 || !g->offs || (L->elem_size == 0 && !g->sizes)) {
        fprintf(stderr, "ddtbench: error: %s: rank %d cannot allocate the buffers (%zu + 2 x %zu + %zu + %zu bytes)\n",
                cfg, b->rank, g->span, g->rsize, pcap, p2cap);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (mg_layout_offsets(L, g->offs, g->sizes) != MG_LAYOUT_OK) {
        fprintf(stderr, "ddtbench: error: %s: mg_layout_offsets failed\n", cfg);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    build_expect(g, o->pattern, b->rank, b->size, o->root);
    memset(x->sbuf, GAP, g->span);
    put_stream(x->sbuf, g, b->rank);
    memset(x->rbuf, GUARD, g->rsize);
    memset(x->pbuf, 0, pcap);
    memset(x->pbuf2, 0, p2cap);
}

static void config_free(layout_cfg *g, xfer *x)
{
    if (x->dt) mg_dt_free(x->dt);
    free(x->sbuf);
    free(x->rbuf);
    free(g->expect);
    free(x->pbuf);
    free(x->pbuf2);
    free(g->offs);
    free(g->sizes);
}

/* MPI_Pack once at setup: MPI_PACKED messages of x->packed bytes need the same
 * size on every rank, else the pack mode fails (marked in bad). */
static void pack_setup(mg_bench *b, const options *o, const char *cfg, long long msize, xfer *x, int *bad)
{
    int pos = 0, range[2];
    int rc = MPI_Pack(x->sbuf, x->lcount, x->ltype, x->pbuf, x->packsize, &pos, x->comm);
    x->packed = pos;
    int mm[2] = {rc == MPI_SUCCESS ? pos : INT_MAX, rc == MPI_SUCCESS ? -pos : INT_MAX};
    MPI_Allreduce(mm, range, 2, MPI_INT, MPI_MAX, b->comm);
    if (range[0] == -range[1]) return;
    char err[128];
    int only[NMODES] = {[MODE_PACK] = 1};
    bad[MODE_PACK] = 1;
    if (range[0] == INT_MAX)
        snprintf(err, sizeof err, "MPI_Pack failed at setup");
    else
        snprintf(err, sizeof err, "MPI_Pack gives %d to %d bytes on different ranks", -range[1], range[0]);
    modes_error(b, o, cfg, msize, only, err);
}

/* mg_dt_to_mpi of the engine's type: one element of count x type with its lb
 * and extent. Returns 0, or -1 with the reason in err. */
static int normalized_type(const options *o, const xfer *x, const mg_layout_type *lt, MPI_Datatype *norm, char *err,
                           size_t len)
{
    int rc = mg_dt_to_mpi_form(x->dt, lt->count, o->form, norm);
    if (rc != MG_DT_SUCCESS) {
        *norm = MPI_DATATYPE_NULL;
        snprintf(err, len, "mg_dt_to_mpi_form failed: %s", mg_dt_strerror(rc));
        return -1;
    }
    MPI_Aint nlb = -1, next = -1;
    MPI_Type_get_extent(*norm, &nlb, &next);
    if (nlb == 0 && next == lt->info.extent) return 0;
    snprintf(err, len, "the normalized type has lb %lld and extent %lld, not 0 and %lld", (long long)nlb,
             (long long)next, (long long)lt->info.extent);
    MPI_Type_free(norm);
    return -1;
}

/* With the engine or normalized mode: the engine's type (x->dt) and the
 * normalized type (returned; never timed), and the normal note. A failure
 * records errors for those modes and marks them in bad. */
static MPI_Datatype engine_prepare(mg_bench *b, const options *o, const char *cfg, const mg_layout_type *lt, xfer *x,
                                   int *bad)
{
    MPI_Datatype norm = MPI_DATATYPE_NULL;
    if (!want_mode(o, MODE_ENGINE) && !want_mode(o, MODE_NORMALIZED)) return norm;
    long long msize = x->msize;
    int ebad[NMODES] = {0};
    char err[512] = "", *normal = malloc(NORMAL_MAX);
    if (!normal) MPI_Abort(MPI_COMM_WORLD, 2);
    int rc = mg_dt_from_mpi(lt->type, &x->dt);
    if (rc != MG_DT_SUCCESS) {
        x->dt = NULL;
        snprintf(err, sizeof err, "mg_dt_from_mpi failed: %s", mg_dt_strerror(rc));
        snprintf(normal, NORMAL_MAX, "(%s)", err);
        ebad[MODE_ENGINE] = ebad[MODE_NORMALIZED] = 1;
    } else {
        rc = mg_dt_describe_count(x->dt, lt->count, normal, NORMAL_MAX);
        if (rc == MG_DT_ERR_TRUNCATED)
            strcpy(normal + NORMAL_MAX - 16, " ...(truncated)");
        else if (rc != MG_DT_SUCCESS)
            snprintf(normal, NORMAL_MAX, "(mg_dt_describe_count: %s)", mg_dt_strerror(rc));
        if (mg_dt_size(x->dt) * lt->count != msize) {
            snprintf(err, sizeof err, "engine size %lld x count %d differs from the %lld data bytes",
                     (long long)mg_dt_size(x->dt), lt->count, msize);
            ebad[MODE_ENGINE] = ebad[MODE_NORMALIZED] = 1;
        } else if (want_mode(o, MODE_NORMALIZED) && normalized_type(o, x, lt, &norm, err, sizeof err) != 0) {
            ebad[MODE_NORMALIZED] = 1;
        }
    }
    mg_bench_note(b, "normal", cfg, "%s", normal);
    if (x->dt && mg_dt_shape(x->dt, normal, NORMAL_MAX) == MG_DT_SUCCESS) {
        mg_bench_note(b, "shape", cfg, "%s", normal);
        mg_bench_note(b, "block", cfg, "%lld", (long long)mg_dt_mean_block(x->dt));
    }
    free(normal);
    modes_error(b, o, cfg, msize, ebad, err);
    for (int i = 0; i < NMODES; i++) bad[i] |= ebad[i];
    return norm;
}

/* One configuration (a layout at (A, m)) prepared for its modes: its type, buffers and
 * normalized type, and per mode whether it failed before it could be timed. */
typedef struct {
    char cfg[320];
    mg_layout_type lt;
    layout_cfg g;
    xfer x;
    MPI_Datatype norm;
    int bad[NMODES];
    double bytes; /* what its buffers take per rank */
} prepared;

/* Builds, allocates and prepares configuration d at (A, m) with n elements into *pc.
 * Returns 0, or -1 when it was skipped or failed (notes and errors written). */
static int prepare_config(mg_bench *b, const options *o, const desc *d, long A, size_t m, long n, counters *cnt,
                          prepared *pc)
{
    memset(pc, 0, sizeof *pc);
    snprintf(pc->cfg, sizeof pc->cfg, "%s %s %ld %zu", pattern_names[o->pattern], d->label, A, m);
    mg_layout_params p;
    mg_layout_info info;
    if (plan_config(b, o, d, A, n, pc->cfg, &p, &info, cnt) != 0) return -1;
    long long msize = (long long)info.data_size;
    if (build_config(b, o, &p, n, pc->cfg, msize, &pc->lt, cnt) != 0) return -1;
    const mg_layout_info *L = &pc->lt.info;
    config_alloc(b, o, &pc->lt, &pc->g, &pc->x, pc->cfg);
    pc->bytes = (double)pc->g.span + 2.0 * (double)pc->g.rsize + 2.0 * (double)pc->x.packsize;
    pack_setup(b, o, pc->cfg, msize, &pc->x, pc->bad);
    mg_bench_note(b, "info", pc->cfg, "n=%ld,count=%d,k=%ld,msize=%lld,extent=%lld,packed=%d", L->n, pc->lt.count,
                  L->k, msize, (long long)L->extent, pc->x.packed);
    pc->norm = engine_prepare(b, o, pc->cfg, &pc->lt, &pc->x, pc->bad);
    return 0;
}

static void prepared_free(prepared *pc)
{
    if (pc->norm != MPI_DATATYPE_NULL) MPI_Type_free(&pc->norm);
    config_free(&pc->g, &pc->x);
    mg_layout_type_free(&pc->lt);
}

/* A side of a group: one mode of one prepared configuration, with the transfer of that mode. */
typedef struct {
    char label[400];
    xfer x;
    const layout_cfg *g;
} mode_side;

/* Checks every requested mode of every configuration of the group, then times those that
 * passed interleaved (mg_bench_measure_interleaved): a slow phase of the machine hits every
 * layout and mode of the group alike, so their ratios hold within a launch. A side whose
 * measurement fails is recorded and the others are measured again without it. */
static void measure_group(mg_bench *b, const options *o, prepared *pcs, int npc, counters *cnt)
{
    int cap = npc * o->nmodes, n = 0;
    mode_side *ms = calloc((size_t)(cap > 0 ? cap : 1), sizeof *ms);
    mg_bench_side *sides = calloc((size_t)(cap > 0 ? cap : 1), sizeof *sides);
    if (!ms || !sides) MPI_Abort(MPI_COMM_WORLD, 2);
    size_t msize = 0;
    for (int c = 0; c < npc; c++) {
        prepared *pc = &pcs[c];
        for (int i = 0; i < o->nmodes; i++) {
            int mode = o->modes[i];
            if (pc->bad[mode]) continue;
            mode_side *m = &ms[n];
            snprintf(m->label, sizeof m->label, "%s %d %s", pc->cfg, pc->x.msize, mode_names[mode]);
            m->x = pc->x;
            m->g = &pc->g;
            m->x.engine = mode == MODE_ENGINE;
            m->x.type = mode == MODE_NORMALIZED ? pc->norm : pc->lt.type;
            m->x.count = mode == MODE_NORMALIZED ? 1 : pc->lt.count;
            mg_bench_op op = mode == MODE_PACK || mode == MODE_ENGINE ? pk_ops[o->pattern] : dt_ops[o->pattern];
            cnt->checks++;
            mg_bench_tuned(mode == MODE_TUNED);
            int ok = check_mode(b, o, &pc->g, &m->x, op, m->label);
            mg_bench_tuned(0);
            if (!ok || o->check_only) continue;
            sides[n] = (mg_bench_side){m->label, op, &m->x, 1,
                                       mode == MODE_TUNED ? mg_bench_library_tuned : mg_bench_library_off};
            msize = (size_t)pc->x.msize;
            n++;
        }
    }
    while (n > 0) {
        int failed = -1;
        int rc = mg_bench_measure_interleaved(b, n, sides, msize, &failed);
        mg_bench_tuned(0);
        if (rc == MPI_SUCCESS) break;
        if (failed < 0) { /* not one side's failure: none of them was timed */
            for (int j = 0; j < n; j++) mg_bench_config_error(b, sides[j].label, "an MPI call failed during measurement");
            break;
        }
        mg_bench_config_error(b, sides[failed].label, "an MPI call failed during measurement");
        sides[failed] = sides[--n];
    }
    free(sides);
    free(ms);
}

/* ------------------------------------------------------------------ */
/* Sizing: one n per (A, m) and layout, the same data bytes for all    */
/* ------------------------------------------------------------------ */

/* Every description at (A, m): n of each is round(m / common unit) common
 * units, the common unit being that of every description valid at A. The
 * configurations are prepared together and measured interleaved, in groups
 * whose buffers fit --max-memory together. units: scratch space of
 * o->ndescs entries. */
static void run_grid_point(mg_bench *b, const options *o, long A, size_t m, mg_unit *units, counters *cnt)
{
    char cfg[320];
    long long cb, nunits;
    int nvalid, npc = 0;
    double held = 0;
    prepared *pcs = calloc((size_t)o->ndescs, sizeof *pcs);
    if (!pcs) MPI_Abort(MPI_COMM_WORLD, 2);
    for (int i = 0; i < o->ndescs; i++) mg_unit_at(&o->descs[i].params, A, &units[i]);
    int overflow = mg_common_unit(units, o->ndescs, NULL, &cb, &nvalid) != 0;
    for (int i = 0; i < o->ndescs; i++) {
        const desc *d = &o->descs[i];
        const mg_unit *u = &units[i];
        long n;
        int rc = u->rc || overflow ? MG_SIZING_OK : mg_sizing_n(u, cb, m, &nunits, &n);
        snprintf(cfg, sizeof cfg, "%s %s %ld %zu", pattern_names[o->pattern], d->label, A, m);
        if (u->rc)
            mg_bench_note(b, "skip", cfg, "%s", u->err);
        else if (overflow)
            mg_bench_note(b, "skip", cfg, "%s: the common unit of the %d layouts valid at A=%ld overflows", d->label,
                          nvalid, A);
        else if (rc == MG_SIZING_TOO_SMALL)
            mg_bench_note(b, "skip", cfg,
                          "%s: m=%zu bytes is less than half of the common unit of %lld bytes of the %d layouts "
                          "valid at A=%ld",
                          d->label, m, cb, nvalid, A);
        else if (rc == MG_SIZING_TOO_LARGE)
            mg_bench_note(b, "skip", cfg, "%s: %lld units of %lld bytes need more than INT_MAX elements", d->label,
                          nunits, cb);
        else {
            if (prepare_config(b, o, d, A, m, n, cnt, &pcs[npc]) != 0) continue;
            /* the group so far is measured before its buffers and this one's exceed --max-memory */
            if (npc > 0 && held + pcs[npc].bytes > (double)o->max_memory) {
                prepared next = pcs[npc];
                measure_group(b, o, pcs, npc, cnt);
                for (int k = 0; k < npc; k++) prepared_free(&pcs[k]);
                pcs[0] = next;
                npc = 0, held = 0;
            }
            held += pcs[npc++].bytes;
            continue;
        }
        cnt->skipped++;
    }
    measure_group(b, o, pcs, npc, cnt);
    for (int k = 0; k < npc; k++) prepared_free(&pcs[k]);
    free(pcs);
}

/* ------------------------------------------------------------------ */
/* Options                                                             */
/* ------------------------------------------------------------------ */

static void list(mg_json *j, const mg_bench *b)
{
    (void)b;
    const char *names[MAX_DESCS];
    int nk = mg_layouts_count();
    mg_json_strings(j, "patterns", pattern_names, NPATTERNS);
    mg_json_strings(j, "modes", mode_names, MODES_HERE);
    mg_json_object(j, "types");
    for (int t = 0; t < MG_LAYOUT_NBASIC; t++) {
        const char *name = mg_layout_basic_name((mg_layout_basic)t);
        for (int k = 0; k < NTYPES; k++)
            if (strcmp(name, type_names[k]) == 0) {
                mg_layout_params p;
                mg_layout_info L;
                mg_layout_params_init(&p, MG_LAYOUT_CONTIGUOUS);
                mg_layout_params_set(&p, MG_LAYOUT_P_TYPE, t, NULL, 0);
                mg_json_long(j, name, mg_layout_check(&p, 0, &L, NULL, 0) == MG_LAYOUT_OK ? L.elem_size : -1);
            }
    }
    mg_json_close(j);
    for (int k = 0; k < nk; k++) names[k] = mg_layouts_get(k)->name;
    mg_json_strings(j, "layouts", names, nk);
    mg_json_object(j, "defaults");
    mg_json_string(j, "pattern", pattern_names[PAT_PINGPONG]);
    char layouts[] = DEFAULT_LAYOUTS, *save = NULL;
    int nl = 0;
    for (char *t = strtok_r(layouts, ";", &save); t && nl < MAX_DESCS; t = strtok_r(NULL, ";", &save)) names[nl++] = t;
    mg_json_strings(j, "layouts", names, nl);
    mg_json_long_list(j, "A", DEFAULT_A);
    mg_json_size_list(j, "sizes", DEFAULT_SIZES);
    mg_json_strings(j, "modes", &mode_names[MODE_DATATYPE], 1);
    mg_json_string(j, "type", DEFAULT_TYPE);
    mg_json_long(j, "root", 0);
    size_t bytes = 0;
    mg_parse_size(DEFAULT_MEMORY, &bytes);
    mg_json_long(j, "max_memory", (long long)bytes);
    mg_json_close(j);
}

/* "tiled  variant=2" -> "tiled:variant=2". */
static void make_label(const char *spec, char *out, size_t len)
{
    size_t pos = 0;
    const char *s = spec;
    while (*s) {
        size_t blank = strspn(s, " \t\n\r"), word;
        s += blank;
        word = strcspn(s, " \t\n\r");
        if (!word) break;
        if (pos && pos + 1 < len) out[pos++] = ':';
        for (size_t i = 0; i < word && pos + 1 < len; i++) out[pos++] = s[i];
        s += word;
    }
    out[pos] = '\0';
}

static int add_desc(mg_bench *b, options *o, const char *spec)
{
    if (o->ndescs >= MAX_DESCS) {
        mg_bench_error(b, "too many layouts (at most %d)", MAX_DESCS);
        return -1;
    }
    desc *d = &o->descs[o->ndescs];
    if (strlen(spec) >= sizeof d->spec) {
        mg_bench_error(b, "layout spec '%.40s...' is too long (at most %zu characters)", spec, sizeof d->spec - 1);
        return -1;
    }
    snprintf(d->spec, sizeof d->spec, "%s", spec);
    make_label(d->spec, d->label, sizeof d->label);
    for (const char *t = d->label; t; t = strchr(t, ':')) {
        if (*t == ':') t++;
        if ((t[0] == 'A' || t[0] == 'a') && t[1] == '=') {
            mg_bench_error(b, "bad layout '%s': give A with --A, not in the spec", d->spec);
            return -1;
        }
    }
    char err[512];
    if (mg_layout_parse(d->spec, &d->params, err, sizeof err) != MG_LAYOUT_OK) {
        mg_bench_error(b, "bad layout '%s': %s", d->spec, err);
        return -1;
    }
    for (int i = 0; i < o->ndescs; i++)
        if (strcmp(o->descs[i].label, d->label) == 0) {
            mg_bench_error(b, "layout '%s' is given twice", d->spec);
            return -1;
        }
    mg_unit u;
    if (mg_desc_complete(&d->params, (int)o->basic, o->A, o->nA, &u) != 0) {
        mg_bench_error(b, "layout '%s' is invalid for every A: %s", d->spec, u.err);
        return -1;
    }
    o->ndescs++;
    return 0;
}

typedef struct {
    mg_bench *b;
    options *o;
} adder;

static int add_spec(void *ctx, const char *spec)
{
    adder *a = ctx;
    return add_desc(a->b, a->o, spec);
}

/* --layouts. */
static int read_layouts(mg_bench *b, options *o)
{
    adder a = {b, o};
    int n = mg_each_spec(o->layouts_arg, add_spec, &a);
    if (n == 0) mg_bench_error(b, "empty --layouts '%s'", o->layouts_arg);
    return n > 0 ? 0 : -1;
}

/* --pattern, --type, --root, --max-memory; 0, or -1 after the message. */
static int read_choices(mg_bench *b, options *o)
{
    char known[64];
    o->pattern = -1;
    for (int k = 0; k < NPATTERNS; k++)
        if (strcmp(o->pattern_arg, pattern_names[k]) == 0) o->pattern = k;
    if (o->pattern < 0) {
        mg_bench_error(b, "unknown --pattern '%s' (known: %s)", o->pattern_arg,
                       mg_join_names(pattern_names, NPATTERNS, ", ", known, sizeof known));
        return -1;
    }
    o->basic = -1;
    for (int k = 0; k < NTYPES; k++)
        if (strcmp(o->type_arg, type_names[k]) == 0)
            for (int t = 0; t < MG_LAYOUT_NBASIC; t++)
                if (strcmp(mg_layout_basic_name((mg_layout_basic)t), o->type_arg) == 0) o->basic = t;
    if (o->basic < 0) {
        mg_bench_error(b, "unknown --type '%s' (known: %s)", o->type_arg,
                       mg_join_names(type_names, NTYPES, ", ", known, sizeof known));
        return -1;
    }
    if (mg_parse_int(o->root_arg, 0, b->size - 1, &o->root) != 0) {
        mg_bench_error(b, "bad --root '%s': expected a rank from 0 to %d", o->root_arg, b->size - 1);
        return -1;
    }
    if (mg_parse_int(o->rotate_arg, 0, INT_MAX, &o->rotate) != 0) {
        mg_bench_error(b, "bad --rotate '%s': expected a count of layouts from 0", o->rotate_arg);
        return -1;
    }
    if (mg_parse_size(o->mem_arg, &o->max_memory) != 0 || o->max_memory == 0) {
        mg_bench_error(b, "bad --max-memory '%s': expected a byte count above 0, k/m/g = KiB/MiB/GiB", o->mem_arg);
        return -1;
    }
    return 0;
}

/* --A, --sizes, --modes; 0, or -1 after the message. */
static int read_lists(mg_bench *b, options *o)
{
    if (mg_parse_long_list(o->A_arg, o->A, MAX_LIST, &o->nA, 1) != 0) {
        mg_bench_error(b, "bad --A '%s': expected comma-separated blocksizes >= 1 (at most %d)", o->A_arg, MAX_LIST);
        return -1;
    }
    if (mg_parse_sizes_option(b, o->sizes_arg, o->sizes, MAX_LIST, &o->nsizes) != 0) return -1;
    o->nmodes = mg_parse_names(b, "mode", o->modes_arg, mode_names, NMODES, o->modes);
    return o->nmodes < 0 ? -1 : 0;
}

/* ------------------------------------------------------------------ */
/* Driver                                                              */
/* ------------------------------------------------------------------ */

/* The tuned mode and --datatype-profiles come together, in mg_ddtbench_tuned. */
static int use_profiles(mg_bench *b, const options *o)
{
    int want = 0;
    for (int i = 0; i < o->nmodes; i++) want |= o->modes[i] == MODE_TUNED;
    return mg_bench_use_profiles(b, want, o->profiles_arg, "mg_ddtbench");
}

/* The command line: MG_ARGS_RUN, or the exit status. */
static int read_command_line(mg_bench *b, options *o, int argc, char **argv)
{
    char m[64], t[64], modes_help[128], type_help[160];
    snprintf(modes_help, sizeof modes_help, "%s (default datatype)",
             mg_join_names(mode_names, MODES_HERE, ", ", m, sizeof m));
    snprintf(type_help, sizeof type_help, "basic type of specs without type=: %s (default " DEFAULT_TYPE ")",
             mg_join_names(type_names, NTYPES, ", ", t, sizeof t));
    const mg_opt opts[] = {
        {"--pattern", MG_OPT_VALUE, &o->pattern_arg, 0, NULL, "NAME",
         "pingpong (default; P >= 2, ranks >= 2 only synchronize), bcast, allgather"},
        {"--layouts", MG_OPT_VALUE, &o->layouts_arg, 0, NULL, "'SPEC;...'",
         "layout descriptions without A, e.g. 'tiled;tiled-struct S1=2 S2=3' (default " DEFAULT_LAYOUTS
         "; see --list)"},
        {"--A", MG_OPT_VALUE, &o->A_arg, 0, NULL, "LIST", "blocksizes A (default " DEFAULT_A ")"},
        {"--sizes", MG_OPT_VALUE, &o->sizes_arg, 0, NULL, "LIST",
         "data sizes m in bytes, k/m/g = KiB/MiB/GiB (default " DEFAULT_SIZES ")"},
        {"--modes", MG_OPT_VALUE, &o->modes_arg, 0, NULL, "LIST", modes_help},
        {"--type", MG_OPT_VALUE, &o->type_arg, 0, NULL, "NAME", type_help},
        {"--root", MG_OPT_VALUE, &o->root_arg, 0, NULL, "R", "root of bcast (default 0)"},
        {"--max-memory", MG_OPT_VALUE, &o->mem_arg, 0, NULL, "BYTES",
         "skip configurations whose buffers need more per rank (default " DEFAULT_MEMORY "; k/m/g)"},
        {"--rotate", MG_OPT_VALUE, &o->rotate_arg, 0, NULL, "K",
         "accepted and ignored (runs planned before the layouts and modes of each (A, m) were measured "
         "interleaved, in the order of --order-seed)"},
        {"--check-only", MG_OPT_FLAG, &o->check_only, 1, NULL, NULL,
         "check the data of every configuration and mode, time nothing"},
        {"--datatype-profiles", MG_OPT_VALUE, &o->profiles_arg, 0, NULL, "DIR",
         "mode tuned (mg_ddtbench_tuned): libmpiguide-tune's profiles"},
        {"--corrupt", MG_OPT_FLAG, &o->corrupt, 1, NULL, NULL,
         "testing aid: flip one received byte in every check, so that all fail"},
    };
    const mg_cli cli = {"mg_ddtbench", "mpiexec -n P mg_ddtbench [options]", opts,
                        (int)(sizeof opts / sizeof *opts), 0, list};
    int st = mg_bench_args(b, &cli, argc, argv);
    if (st != MG_ARGS_RUN) return st;
    if (read_choices(b, o) != 0 || read_lists(b, o) != 0 || read_layouts(b, o) != 0 || use_profiles(b, o) != 0)
        return 2;
    if (o->pattern == PAT_PINGPONG && b->size < 2) {
        mg_bench_error(b, "the ping-pong needs at least 2 processes (got %d)", b->size);
        return 2;
    }
    if (o->corrupt && o->pattern == PAT_BCAST && b->size < 2) {
        mg_bench_error(b, "--corrupt with bcast needs a rank that receives: at least 2 processes (got %d)", b->size);
        return 2;
    }
    char err[200];
    if (mg_bench_dt_form(&o->form, err, sizeof err) != 0) {
        mg_bench_error(b, "%s", err);
        return 2;
    }
    return MG_ARGS_RUN;
}

static void write_header(mg_bench *b, const options *o)
{
    char list[8192];
    size_t pos = 0;
    list[0] = '\0';
    for (int i = 0; i < o->ndescs && pos < sizeof list; i++)
        pos += (size_t)snprintf(list + pos, sizeof list - pos, "%s%s", i ? ";" : "", o->descs[i].label);
    mg_bench_param(b, "pattern", "%s", pattern_names[o->pattern]);
    mg_bench_param(b, "layouts", "%s", list);
    mg_bench_param(b, "A", "%s", o->A_arg);
    mg_bench_param(b, "sizes", "%s", o->sizes_arg);
    mg_bench_param(b, "modes", "%s", o->modes_arg);
    mg_bench_param(b, "type", "%s", o->type_arg);
    mg_bench_param(b, "root", "%d", o->root);
    mg_bench_param(b, "max_memory", "%zu", o->max_memory);
    mg_bench_param(b, "check_only", "%d", o->check_only);
    if (o->corrupt) mg_bench_param(b, "corrupt", "1");
    if (o->profiles_arg) mg_bench_param(b, "datatype_profiles", "%s", o->profiles_arg);
    if (mg_bench_begin(b, "pattern layout A m msize mode") != 0) MPI_Abort(MPI_COMM_WORLD, 2);
}

/* t_nrep1 (estimate mode): the pattern on 1 MPI_BYTE, after a warm-up exchange. */
static void calibrate(mg_bench *b, const options *o)
{
    unsigned char one = 1, *all = calloc((size_t)b->size, 1);
    if (!all) MPI_Abort(MPI_COMM_WORLD, 2);
    xfer cx = {.rank = b->rank,
               .size = b->size,
               .root = o->root,
               .comm = MPI_COMM_WORLD,
               .type = MPI_BYTE,
               .count = 1,
               .sbuf = &one,
               .rbuf = all,
               .ext = 1};
    if (dt_ops[o->pattern](&cx) != MPI_SUCCESS || mg_bench_calibrate(b, dt_ops[o->pattern], &cx) != MPI_SUCCESS)
        MPI_Abort(MPI_COMM_WORLD, 2);
    free(all);
}

static int run(int argc, char **argv)
{
    mg_bench b;
    mg_bench_init(&b, "ddtbench", MPI_COMM_WORLD);
    options o = {.pattern_arg = "pingpong",
                 .layouts_arg = DEFAULT_LAYOUTS,
                 .A_arg = DEFAULT_A,
                 .sizes_arg = DEFAULT_SIZES,
                 .modes_arg = "datatype",
                 .type_arg = DEFAULT_TYPE,
                 .root_arg = "0",
                 .rotate_arg = "0",
                 .mem_arg = DEFAULT_MEMORY};
    o.descs = calloc(MAX_DESCS, sizeof *o.descs);
    if (!o.descs) MPI_Abort(MPI_COMM_WORLD, 2);
    int st = read_command_line(&b, &o, argc, argv);
    if (st != MG_ARGS_RUN) {
        free(o.descs);
        return mg_bench_quit(&b, st);
    }
    write_header(&b, &o);
    if (!o.check_only) calibrate(&b, &o);

    counters cnt = {0, 0, 0};
    mg_unit *units = calloc((size_t)o.ndescs, sizeof *units);
    if (!units) MPI_Abort(MPI_COMM_WORLD, 2);
    for (int s = 0; s < o.nsizes && !b.calibrate_only; s++)
        for (int a = 0; a < o.nA; a++) run_grid_point(&b, &o, o.A[a], o.sizes[s], units, &cnt);
    free(units);

    if (o.check_only && b.rank == 0)
        fprintf(stderr, "ddtbench: %d configurations, %d mode checks, %d skipped, %d failed\n", cnt.configs, cnt.checks,
                cnt.skipped, b.errors);
    free(o.descs);
    return mg_bench_end(&b);
}

int main(int argc, char **argv) { return mg_bench_main(argc, argv, run); }
