#define _POSIX_C_SOURCE 200809L
/* mg_callbench: an application's own calls with derived datatypes, as its
 * record names them (libmpiguide-tune's record mode; `mpiguide app tune`),
 * rebuilt from the type notation and measured under each datatype strategy of
 * the library (native, normalized, pack: mg_tune_force("datatypes", ...)),
 * interleaved repetition by repetition. Each shape is one line of --shapes:
 *
 *   KEY <tab> PATTERN <tab> BYTES <tab> SEND_TYPE <tab> RECV_TYPE
 *
 * PATTERN: send (rank 0 sends BYTES with the type, rank 1 receives them as
 * MPI_PACKED), recv (rank 0 sends packed bytes, rank 1 receives them with the
 * type), bcast, gather, scatter, allgather, alltoall (root 0; BYTES per block;
 * a side without a type moves MPI_PACKED bytes, which MPI lets meet any type of
 * the same data). A type is the notation of docs/dt-notation.md, or "-".
 * Before a shape is timed, every strategy's received bytes (the whole span
 * of every receive buffer, gaps included) must equal the native call's on
 * every rank; a shape that fails or cannot be built is noted, not timed. */
#include "mg_bench.h"
#include "mg_options.h"
#include "mpiguide/dt.h"
#include "mpiguide/tune.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define TAG 23
enum { P_SEND, P_RECV, P_BCAST, P_GATHER, P_SCATTER, P_ALLGATHER, P_ALLTOALL, NPATTERNS };
static const char *const pattern_names[NPATTERNS] = {"send",    "recv",      "bcast",   "gather",
                                                     "scatter", "allgather", "alltoall"};
enum { NSTRATEGIES = 3 };
static const char *const strategy_names[NSTRATEGIES] = {"native", "normalized", "pack"};

/* One side of the call: a type (or MPI_PACKED), its count, and a buffer over
 * the span of `blocks` blocks of count elements. */
typedef struct {
    MPI_Datatype type;
    int derived;
    MPI_Count count;
    char *mem, *base; /* base: the address the calls get */
    size_t span;
} side;

typedef struct {
    int pattern, rank, size;
    side s, r;
    char *expect; /* the native call's receive buffer */
} shape_ctx;

static void side_free(side *x)
{
    if (x->derived) MPI_Type_free(&x->type);
    free(x->mem);
    *x = (side){0};
}

/* x for `blocks` blocks of BYTES bytes, with type text ("-": MPI_PACKED). 0, or -1 with why. */
static int side_make(side *x, const char *text, MPI_Count bytes, int blocks, char *why, size_t len)
{
    *x = (side){.type = MPI_PACKED, .count = bytes};
    if (strcmp(text, "-") != 0) {
        char err[256];
        if (mg_dt_parse(text, &x->type, err, sizeof err) != MG_DT_SUCCESS) {
            snprintf(why, len, "the type does not parse: %s", err);
            return -1;
        }
        MPI_Type_commit(&x->type);
        x->derived = 1;
        MPI_Count tsize;
        MPI_Type_size_x(x->type, &tsize);
        if (tsize <= 0 || bytes % tsize != 0) {
            snprintf(why, len, "%lld bytes are not a whole number of the type's %lld", (long long)bytes,
                     (long long)tsize);
            return -1;
        }
        x->count = bytes / tsize;
    }
    if (x->count > INT32_MAX) {
        snprintf(why, len, "more than INT_MAX elements");
        return -1;
    }
    MPI_Count lb, extent, tlb, textent;
    MPI_Type_get_extent_x(x->type, &lb, &extent);
    MPI_Type_get_true_extent_x(x->type, &tlb, &textent);
    MPI_Count n = x->count * blocks, last = (n - 1) * extent;
    MPI_Count lo = tlb + (last < 0 ? last : 0), hi = tlb + textent + (last > 0 ? last : 0);
    x->span = (size_t)(hi - lo);
    x->mem = malloc(x->span ? x->span : 1);
    if (!x->mem) {
        snprintf(why, len, "cannot allocate %zu bytes", x->span);
        return -1;
    }
    x->base = x->mem - lo;
    return 0;
}

static int op(void *p)
{
    shape_ctx *c = p;
    side *s = &c->s, *r = &c->r;
    switch (c->pattern) {
    case P_SEND:
    case P_RECV:
        if (c->rank == 0) return MPI_Send(s->base, (int)s->count, s->type, 1, TAG, MPI_COMM_WORLD);
        if (c->rank == 1) return MPI_Recv(r->base, (int)r->count, r->type, 0, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        return MPI_SUCCESS;
    case P_BCAST: return MPI_Bcast(s->base, (int)s->count, s->type, 0, MPI_COMM_WORLD);
    case P_GATHER:
        return MPI_Gather(s->base, (int)s->count, s->type, r->base, (int)r->count, r->type, 0, MPI_COMM_WORLD);
    case P_SCATTER:
        return MPI_Scatter(s->base, (int)s->count, s->type, r->base, (int)r->count, r->type, 0, MPI_COMM_WORLD);
    case P_ALLGATHER:
        return MPI_Allgather(s->base, (int)s->count, s->type, r->base, (int)r->count, r->type, MPI_COMM_WORLD);
    default:
        return MPI_Alltoall(s->base, (int)s->count, s->type, r->base, (int)r->count, r->type, MPI_COMM_WORLD);
    }
}

/* The receive buffer of this rank's side of the pattern (Bcast: its one buffer). */
static side *received(shape_ctx *c) { return c->pattern == P_BCAST ? &c->s : &c->r; }

static int force(const char *strategy) { return mg_tune_force("datatypes", strategy); }
static int before_native(void *p) { return (void)p, force("native"); }
static int before_normalized(void *p) { return (void)p, force("normalized"); }
static int before_pack(void *p) { return (void)p, force("pack"); }
static const mg_bench_op befores[NSTRATEGIES] = {before_native, before_normalized, before_pack};

/* Fills the buffers, runs the call under the strategy; 0 if it succeeded. */
static int run_once(shape_ctx *c, int strategy)
{
    for (size_t i = 0; i < c->s.span; i++) c->s.mem[i] = (char)(i * 131u + 17u * (unsigned)c->rank + 3u);
    if (c->r.mem) memset(c->r.mem, 0, c->r.span);
    if (c->pattern == P_BCAST && c->rank != 0) memset(c->s.mem, 0, c->s.span);
    befores[strategy](c);
    return op(c) == MPI_SUCCESS ? 0 : -1;
}

/* Every strategy's received bytes equal the native call's, on every rank. */
static int check(shape_ctx *c, const int *chosen, int n, char *why, size_t len)
{
    side *r = received(c);
    int ok = run_once(c, 0) == 0;
    if (ok && r->span) memcpy(c->expect, r->mem, r->span);
    for (int k = 0; k < n && ok; k++) {
        if (chosen[k] == 0) continue;
        ok = run_once(c, chosen[k]) == 0 && (!r->span || memcmp(c->expect, r->mem, r->span) == 0);
        if (!ok) snprintf(why, len, "under %s the received bytes differ from the native call's",
                          strategy_names[chosen[k]]);
    }
    int all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    if (ok && !all) snprintf(why, len, "another rank's received bytes differ from the native call's");
    return all;
}

typedef struct {
    const char *shapes_arg, *strategies_arg;
    int check_only;
    int chosen[NSTRATEGIES], nchosen;
    char all_strategies[64];
} options;

/* The --shapes file, read by rank 0 and sent to the others (NULL after a message). */
static char *read_shapes(mg_bench *b, const char *path)
{
    long len = -1;
    char *text = NULL;
    if (b->rank == 0) {
        FILE *f = fopen(path, "r");
        if (f && fseek(f, 0, SEEK_END) == 0 && (len = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
            (text = malloc((size_t)len + 1)) != NULL && fread(text, 1, (size_t)len, f) == (size_t)len)
            text[len] = '\0';
        else
            len = -1;
        if (f) fclose(f);
    }
    MPI_Bcast(&len, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    if (len < 0) {
        mg_bench_error(b, "cannot read --shapes %s", path);
        free(text);
        return NULL;
    }
    if (b->rank != 0 && !(text = malloc((size_t)len + 1))) MPI_Abort(MPI_COMM_WORLD, 2);
    MPI_Bcast(text, (int)len + 1, MPI_CHAR, 0, MPI_COMM_WORLD);
    return text;
}

static void list(mg_json *j, const mg_bench *b)
{
    (void)b;
    mg_json_strings(j, "patterns", pattern_names, NPATTERNS);
    mg_json_strings(j, "strategies", strategy_names, NSTRATEGIES);
}

/* The shape's engine keys: the constructors and mean block of the type the
 * datatype profiles look the call up by (the derived one). */
static void note_keys(mg_bench *b, const char *key, const shape_ctx *c)
{
    const side *x = c->s.derived && c->pattern != P_RECV ? &c->s : &c->r;
    mg_dt *dt = NULL;
    if (!x->derived || mg_dt_from_mpi(x->type, &dt) != MG_DT_SUCCESS) return;
    char shape[256];
    mg_dt_shape(dt, shape, sizeof shape);
    mg_bench_note(b, "shape", key, "%s", shape);
    mg_bench_note(b, "block", key, "%lld", (long long)mg_dt_mean_block(dt));
    mg_dt_free(dt);
}

/* One line of --shapes: built, checked, timed (or noted as skipped). */
static void measure_shape(mg_bench *b, const options *o, char *line)
{
    char *field[5];
    int n = 0;
    for (char *t = line; n < 5; n++) {
        field[n] = t;
        char *tab = strchr(t, '\t');
        if (!tab) {
            n++;
            break;
        }
        *tab = '\0';
        t = tab + 1;
    }
    if (n != 5) {
        mg_bench_note(b, "skip", field[0], "a line of --shapes needs 5 tab-separated fields, it has %d", n);
        return;
    }
    const char *key = field[0];
    int pattern = -1;
    for (int k = 0; k < NPATTERNS; k++)
        if (strcmp(field[1], pattern_names[k]) == 0) pattern = k;
    char *end;
    long long bytes = strtoll(field[2], &end, 10);
    char why[512] = "";
    if (pattern < 0)
        snprintf(why, sizeof why, "unknown pattern '%s'", field[1]);
    else if (*end || bytes <= 0)
        snprintf(why, sizeof why, "bad bytes '%s'", field[2]);
    else if (b->size < 2)
        snprintf(why, sizeof why, "needs at least 2 processes");
    shape_ctx c = {.pattern = pattern, .rank = b->rank, .size = b->size};
    int rooted_blocks = b->rank == 0 ? b->size : 0;
    int sblocks = pattern == P_SCATTER ? rooted_blocks : pattern == P_ALLTOALL ? b->size : 1;
    int rblocks = pattern == P_GATHER    ? rooted_blocks
                  : pattern == P_ALLGATHER || pattern == P_ALLTOALL ? b->size
                                                                    : 1;
    int has_r = pattern != P_BCAST;
    if (!*why && side_make(&c.s, field[3], bytes, sblocks > 0 ? sblocks : 1, why, sizeof why) == 0 && has_r)
        side_make(&c.r, field[4], bytes, rblocks > 0 ? rblocks : 1, why, sizeof why);
    side *r = received(&c);
    if (!*why && r->span && !(c.expect = malloc(r->span))) snprintf(why, sizeof why, "out of memory");
    int bad = *why != '\0', any = 0;
    MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
    char label[NSTRATEGIES][512];
    if (any) {
        mg_bench_note(b, "skip", key, "%s", *why ? why : "another rank could not build it");
    } else {
        note_keys(b, key, &c);
        if (!check(&c, o->chosen, o->nchosen, why, sizeof why)) {
            snprintf(label[0], sizeof label[0], "%s %s %lld *", key, field[1], bytes);
            mg_bench_config_error(b, label[0], *why ? why : "the received bytes differ");
        } else if (!o->check_only) {
            mg_bench_side sides[NSTRATEGIES];
            for (int k = 0; k < o->nchosen; k++) {
                snprintf(label[k], sizeof label[k], "%s %s %lld %s", key, field[1], bytes,
                         strategy_names[o->chosen[k]]);
                sides[k] = (mg_bench_side){label[k], op, &c, 1, befores[o->chosen[k]]};
            }
            int failed = -1;
            if (mg_bench_measure_interleaved(b, o->nchosen, sides, (size_t)bytes, &failed) != MPI_SUCCESS)
                mg_bench_config_error(b, label[failed >= 0 ? failed : 0], "an MPI call failed during measurement");
        }
    }
    free(c.expect);
    side_free(&c.s);
    side_free(&c.r);
}

static int run(int argc, char **argv)
{
    mg_bench b;
    mg_bench_init(&b, "callbench", MPI_COMM_WORLD);
    options o = {.shapes_arg = NULL};
    o.strategies_arg = mg_join_names(strategy_names, NSTRATEGIES, ",", o.all_strategies, sizeof o.all_strategies);
    const mg_opt opts[] = {
        {"--shapes", MG_OPT_VALUE, &o.shapes_arg, 0, NULL, "FILE",
         "the calls, one a line: KEY, PATTERN, BYTES, SEND_TYPE, RECV_TYPE, tab-separated (required)"},
        {"--strategies", MG_OPT_VALUE, &o.strategies_arg, 0, NULL, "LIST",
         "native,normalized,pack (default all; native is always measured: the reference)"},
        {"--check-only", MG_OPT_FLAG, &o.check_only, 1, NULL, NULL, "check every shape's data, measure nothing"},
    };
    const mg_cli cli = {"mg_callbench", "mpiexec -n P mg_callbench --shapes FILE [options]", opts,
                        (int)(sizeof opts / sizeof *opts), 0, list};
    int st = mg_bench_args(&b, &cli, argc, argv);
    if (st != MG_ARGS_RUN) return mg_bench_quit(&b, st);
    if (!o.shapes_arg) {
        mg_bench_error(&b, "--shapes FILE is required");
        return mg_bench_quit(&b, 2);
    }
    int chosen[NSTRATEGIES];
    int n = mg_parse_names(&b, "strategy", o.strategies_arg, strategy_names, NSTRATEGIES, chosen);
    if (n < 0) return mg_bench_quit(&b, 2);
    o.chosen[o.nchosen++] = 0; /* native first: the reference of the check */
    for (int k = 0; k < n; k++)
        if (chosen[k] != 0) o.chosen[o.nchosen++] = chosen[k];
    char *text = read_shapes(&b, o.shapes_arg);
    if (!text) return mg_bench_quit(&b, 2);
    mg_tune_set_counting(MG_TUNE_COUNT_NEVER);
    mg_tune_set_mode(MG_TUNE_FORCED);
    mg_bench_param(&b, "shapes", "%s", o.shapes_arg);
    mg_bench_param(&b, "strategies", "%s", o.strategies_arg);
    mg_bench_param(&b, "check_only", "%d", o.check_only);
    if (mg_bench_begin(&b, "call pattern msize strategy") != 0) MPI_Abort(MPI_COMM_WORLD, 2);
    for (char *line = text, *next; line && *line; line = next) {
        next = strchr(line, '\n');
        if (next) *next++ = '\0';
        if (*line && *line != '#') measure_shape(&b, &o, line);
    }
    free(text);
    force("default");
    return mg_bench_end(&b);
}

int main(int argc, char **argv) { return mg_bench_main(argc, argv, run); }
