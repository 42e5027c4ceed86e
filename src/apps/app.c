/* mg_stencil: the stencil application driver.
 *
 * Runs one of the three 2D stencil codes of Adefemi (2025), Jacobi CFD, Game of
 * Life or lattice image reconstruction, on a 2D block decomposition (halo.h)
 * with every requested halo-exchange variant (packing x mode) and writes a raw
 * file in the format of the measurement core (mg_bench.h, docs/formats.md):
 *
 *   columns  app packing mode gnx gny steps rep time_s
 *            time_s = seconds per iteration (halo exchange + kernel + swap) of one
 *            of the --nrep N repetitions (default 5) of `steps` iterations: the
 *            loop is timed with MPI_Wtime after the --sync synchronization
 *            (barrier or dissem, as the measurement core's), maximum over ranks,
 *            divided by steps. The header holds #@sync and #@nrep (mg_bench_begin).
 *            Order (#@order): interleaved (default) prepares every variant first,
 *            then runs repetition r of each in turn, in an order drawn for every
 *            repetition from --order-seed (#@order_seed), so that a slow phase of
 *            a shared machine hits all variants alike;
 *            --sequential times one variant after the other and frees it before
 *            the next (one variant's grids in memory at a time).
 *   Preparing a variant: create its grids and halo objects, check it (below),
 *   reset it to the initial state and run one warm-up exchange (it rewrites halo
 *   cells with the values the first timed exchange writes, so lazy allocations of
 *   the MPI library happen before the timing and count as the variant's memory).
 *   notes    #@rss_before[app packing mode]=bytes  peak RSS (getrusage ru_maxrss,
 *                                      max over ranks) before the variant's grids
 *                                      and halo objects exist
 *            #@setup[app packing mode]=seconds      halo setup (datatypes, comms,
 *                                      persistent requests) of both halo objects,
 *                                      max over ranks; never inside the timing
 *            #@comm[app packing mode]=fraction      time in mg_halo_exchange / loop
 *                                      time over all repetitions, max over ranks
 *            #@rss[app packing mode]=bytes          peak RSS after preparing it;
 *                                      ru_maxrss is monotone per process, so a
 *                                      variant's own footprint is visible only as
 *                                      the increment over rss_before (0 if an
 *                                      earlier variant already needed more)
 *            #@mem[app packing mode]=bytes          increase of the CURRENT resident
 *                                      set (VmRSS: /proc/self/statm resident pages
 *                                      x page size) from when the variant's grids
 *                                      are written (the same for every variant, so
 *                                      left out) to the end of its preparation: its
 *                                      halo objects and what the MPI library
 *                                      allocates for them; max over ranks; may be 0
 *                                      or negative (freed pages are reused); only
 *                                      for variants ready to be timed, and only if
 *                                      every rank can read /proc/self/statm. Before
 *                                      the first variant, one BASIC exchange per
 *                                      requested mode takes the library's one-time
 *                                      setup out of the variants' numbers
 *            #@halo_bytes[app packing mode]=bytes   scratch buffers of both halo
 *                                      objects (mg_halo_buffer_bytes), max over
 *                                      ranks; 0 for the datatype packings
 *            #@error[app packing mode]=step S rank R cell (x,y): got G want W
 *                                      (global coordinates; the variant is not timed)
 *
 * Check (--check, default): before timing, each variant runs `steps` iterations
 * from the initial state. (b) After each of the first 3 exchanges its whole local
 * array (halo included) must equal bitwise that of a BASIC:NONBLOCKING reference
 * run made once per launch (the method of Adefemi 2025). (a) The final interior
 * must equal bitwise the serial reference: every rank runs the kernels on one
 * block covering the whole grid (so --check needs gnx*gny cells per rank; use
 * --no-check for big benchmark grids) and compares its own block with the
 * corresponding cells.
 * --save-image FILE.pgm (image app, with --check) writes that serial reference:
 * the image reconstructed from its edge image after `steps` iterations, which
 * every variant that passed its check computed bitwise too.
 * Exit status: 0, 2 for bad options or input (also --nrep rule|estimate: the
 * driver times its own loop and needs a count), 3 if any variant failed its check.
 */
#define _POSIX_C_SOURCE 200809L
#include "halo.h"
#include "mg_bench.h"
#include "mg_options.h"
#include "pgm.h"
#include "stencil.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

enum { APP_JACOBI, APP_LIFE, APP_IMAGE, APP_COUNT_ };
static const char *const app_names[] = {"jacobi", "life", "image"};

/* Defaults of the options (--help and --list print them). */
#define DEFAULT_NX    256
#define DEFAULT_NY    256
#define DEFAULT_STEPS 100
#define DEFAULT_NREP  5

#define LIFE_SEED        20261121u
#define LIFE_DENSITY     0.3
#define IMAGE_FRAME      0.0
#define CHECK_HALO_STEPS 3
#define MAX_VARIANTS     (MG_HALO_PACKING_COUNT_ * MG_HALO_MODE_COUNT_)

typedef struct {
    int app;
    size_t es; /* element size */
    MPI_Datatype elem;
    int periodic, corners;
    mg_decomp d;
    mg_block blk;
    double *edge;       /* image: local edge image */
    double *img_global; /* image from --image: whole image on every rank (gnx*gny) */
    int img_maxval;     /* its maxval; 255 for the generated image */
    int corrupt;
} app_ctx;

/* Current resident set of this process (VmRSS), or -1 if /proc is unreadable. */
static long current_rss_bytes(void)
{
    long size = 0, resident = -1;
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f) return -1;
    if (fscanf(f, "%ld %ld", &size, &resident) != 2) resident = -1;
    fclose(f);
    long page = sysconf(_SC_PAGESIZE);
    return resident >= 0 && page > 0 ? resident * page : -1;
}

static long peak_rss_bytes(MPI_Comm comm)
{
    struct rusage ru;
    long mine = 0, all = 0;
    if (getrusage(RUSAGE_SELF, &ru) == 0) mine = ru.ru_maxrss * 1024L; /* Linux: KiB */
    MPI_Allreduce(&mine, &all, 1, MPI_LONG, MPI_MAX, comm);
    return all;
}

/* ---------------------------------------------------------------- */
/* Application kernels on a local block                              */
/* ---------------------------------------------------------------- */

/* Initial state of the two arrays of a block b (grid cells of a->es bytes). */
static void app_init(const app_ctx *a, const mg_block *b, void *g0, void *g1)
{
    size_t n = mg_grid_cells(b->nx, b->ny);
    memset(g0, 0, n * a->es);
    memset(g1, 0, n * a->es);
    if (a->app == APP_JACOBI) {
        mg_cavity c = mg_cavity_default(b->gnx, b->gny);
        mg_jacobi_init_cavity(g0, b, &c);
        mg_jacobi_init_cavity(g1, b, &c);
    } else if (a->app == APP_LIFE) {
        mg_life_random(g0, b, LIFE_DENSITY, LIFE_SEED);
    } else {
        mg_image_set_boundary(g0, b, IMAGE_FRAME);
        mg_image_set_boundary(g1, b, IMAGE_FRAME);
    }
}

static void app_step(const app_ctx *a, const double *edge, const void *in, void *out, int nx, int ny)
{
    if (a->app == APP_JACOBI)
        mg_jacobi_step(in, out, nx, ny);
    else if (a->app == APP_LIFE)
        mg_life_step(in, out, nx, ny);
    else
        mg_image_step(edge, in, out, nx, ny);
}

/* The image of block b: generated, or copied from the whole --image, frame set. */
static void image_fill(const app_ctx *a, const mg_block *b, double *img)
{
    memset(img, 0, mg_grid_cells(b->nx, b->ny) * sizeof *img);
    if (a->img_global) {
        for (int j = 1; j <= b->ny; j++)
            for (int i = 1; i <= b->nx; i++)
                img[MG_IDX(b->nx, i, j)] =
                    a->img_global[(size_t)(b->y0 + j - 1) * (size_t)b->gnx + (size_t)(b->x0 + i - 1)];
    } else {
        mg_image_generate(img, b, MG_IMAGE_MIXED);
    }
    mg_image_set_boundary(img, b, IMAGE_FRAME);
}

/* Serial reference: `steps` iterations on one block covering the whole grid.
 * Returns the final array (gnx+2 x gny+2) or NULL. */
static void *serial_reference(const app_ctx *a, int steps)
{
    mg_block b = mg_block_serial(a->blk.gnx, a->blk.gny);
    size_t n = mg_grid_cells(b.nx, b.ny);
    char *g[2] = {malloc(n * a->es), malloc(n * a->es)};
    double *edge = NULL;
    if (!g[0] || !g[1]) goto oom;
    app_init(a, &b, g[0], g[1]);
    if (a->app == APP_IMAGE) {
        double *img = malloc(n * sizeof *img);
        edge = calloc(n, sizeof *edge);
        if (!img || !edge) {
            free(img);
            goto oom;
        }
        image_fill(a, &b, img);
        mg_image_edge(img, edge, b.nx, b.ny);
        free(img);
    }
    int cur = 0;
    for (int s = 0; s < steps; s++) {
        if (a->app == APP_LIFE) mg_life_wrap_halo((unsigned char *)g[cur], b.nx, b.ny);
        app_step(a, edge, g[cur], g[1 - cur], b.nx, b.ny);
        cur = 1 - cur;
    }
    free(edge);
    free(g[1 - cur]);
    return g[cur];
oom:
    free(edge);
    free(g[0]);
    free(g[1]);
    return NULL;
}

/* ---------------------------------------------------------------- */
/* One variant                                                       */
/* ---------------------------------------------------------------- */

typedef struct {
    char *g[2];
    mg_halo *h[2];
    double setup_s;
    /* timing state */
    int cur;            /* grid holding the current state */
    double comm, total; /* seconds in the exchange and in the whole loop, summed over repetitions */
    double *loop;       /* per repetition: seconds of the loop on this rank */
} variant;

static void variant_free(variant *v)
{
    mg_halo_free(&v->h[0]);
    mg_halo_free(&v->h[1]);
    free(v->g[0]);
    free(v->g[1]);
    free(v->loop);
    memset(v, 0, sizeof *v);
}

/* Allocates the grids (initial state) and the two halo objects. Collective:
 * returns the same MPI code on every rank. rss_grids (or NULL): this rank's
 * current resident set once the grids are written, before any halo object. */
static int variant_create(const app_ctx *a, mg_halo_packing p, mg_halo_mode m, variant *v, long *rss_grids)
{
    memset(v, 0, sizeof *v);
    size_t n = mg_grid_cells(a->d.nx, a->d.ny);
    int rc = MPI_SUCCESS;
    v->g[0] = malloc(n * a->es);
    v->g[1] = malloc(n * a->es);
    if (!v->g[0] || !v->g[1])
        rc = MPI_ERR_NO_MEM;
    else
        app_init(a, &a->blk, v->g[0], v->g[1]);
    if (rss_grids) *rss_grids = current_rss_bytes();
    for (int k = 0; k < 2 && rc == MPI_SUCCESS; k++) {
        rc = mg_halo_create(&a->d, a->elem, a->corners, p, m, v->g[k], &v->h[k]);
        if (rc == MPI_SUCCESS) v->setup_s += mg_halo_setup_seconds(v->h[k]);
    }
    int all;
    MPI_Allreduce(&rc, &all, 1, MPI_INT, MPI_MAX, a->d.cart);
    if (all != MPI_SUCCESS) variant_free(v);
    return all;
}

static void fmt_value(const app_ctx *a, const void *g, size_t k, char *buf, size_t len)
{
    if (a->es == 1)
        snprintf(buf, len, "%d", ((const unsigned char *)g)[k]);
    else
        snprintf(buf, len, "%.17g", ((const double *)g)[k]);
}

/* First differing cell of two local arrays of the block (both with the local
 * layout), or -1. With ref_global the reference is the serial array and only the
 * interior is compared. */
static int first_diff(const app_ctx *a, const char *got, const char *want, int ref_global, int *ci, int *cj)
{
    int nx = a->d.nx, ny = a->d.ny, gnx = a->blk.gnx;
    int lo = ref_global ? 1 : 0, hi_x = ref_global ? nx : nx + 1, hi_y = ref_global ? ny : ny + 1;
    for (int j = lo; j <= hi_y; j++)
        for (int i = lo; i <= hi_x; i++) {
            size_t kg = MG_IDX(nx, i, j);
            size_t kw = ref_global ? MG_IDX(gnx, a->d.x0 + i, a->d.y0 + j) : kg;
            if (memcmp(got + kg * a->es, want + kw * a->es, a->es) != 0) {
                *ci = i;
                *cj = j;
                return 0;
            }
        }
    return -1;
}

/* Runs the check of one variant from its initial state. ref_halo: NULL for the
 * reference run itself (then the snapshots are stored into snap), else the
 * snapshots of the reference run. serial: final serial state (or NULL for the
 * reference run). Writes a message into msg and returns 1 on a mismatch found on
 * some rank (same on every rank), 0 if fine, or -(MPI code). */
static int variant_check(const app_ctx *a, variant *v, int steps, int corrupt, char **snap, const void *serial,
                         char *msg, size_t msglen)
{
    size_t n = mg_grid_cells(a->d.nx, a->d.ny);
    int cur = 0, bad_step = 0, ci = 0, cj = 0, rc = MPI_SUCCESS;
    char got[64] = "", want[64] = "";
    for (int s = 1; s <= steps; s++) {
        rc = mg_halo_exchange(v->h[cur]);
        if (rc != MPI_SUCCESS) break;
        if (corrupt && s == 1) {
            int last;
            MPI_Comm_size(a->d.cart, &last);
            if (a->d.rank == last - 1) {
                int nx = a->d.nx, ny = a->d.ny, i = 0, j = 1;
                if (a->d.nbr[MG_DIR_W] != MPI_PROC_NULL)
                    i = 0, j = 1;
                else if (a->d.nbr[MG_DIR_E] != MPI_PROC_NULL)
                    i = nx + 1, j = 1;
                else if (a->d.nbr[MG_DIR_N] != MPI_PROC_NULL)
                    i = 1, j = 0;
                else if (a->d.nbr[MG_DIR_S] != MPI_PROC_NULL)
                    i = 1, j = ny + 1;
                size_t k = MG_IDX(nx, i, j);
                if (a->es == 1)
                    v->g[cur][k] ^= 1;
                else
                    ((double *)(void *)v->g[cur])[k] += 1.0;
            }
        }
        if (s <= CHECK_HALO_STEPS) {
            if (!serial) {
                memcpy(snap[s - 1], v->g[cur], n * a->es);
            } else if (!bad_step && first_diff(a, v->g[cur], snap[s - 1], 0, &ci, &cj) == 0) {
                bad_step = s;
                fmt_value(a, v->g[cur], MG_IDX(a->d.nx, ci, cj), got, sizeof got);
                fmt_value(a, snap[s - 1], MG_IDX(a->d.nx, ci, cj), want, sizeof want);
            }
        }
        app_step(a, a->edge, v->g[cur], v->g[1 - cur], a->d.nx, a->d.ny);
        cur = 1 - cur;
    }
    int all;
    MPI_Allreduce(&rc, &all, 1, MPI_INT, MPI_MAX, a->d.cart);
    if (all != MPI_SUCCESS) return -all;
    if (serial && !bad_step && first_diff(a, v->g[cur], serial, 1, &ci, &cj) == 0) {
        bad_step = steps;
        fmt_value(a, v->g[cur], MG_IDX(a->d.nx, ci, cj), got, sizeof got);
        fmt_value(a, serial, MG_IDX(a->blk.gnx, a->d.x0 + ci, a->d.y0 + cj), want, sizeof want);
    }
    /* The earliest step, then the lowest rank, reports. */
    int size;
    long key, first;
    MPI_Comm_size(a->d.cart, &size);
    key = bad_step ? (long)bad_step * size + a->d.rank : -1L;
    if (key < 0) key = __LONG_MAX__;
    MPI_Allreduce(&key, &first, 1, MPI_LONG, MPI_MIN, a->d.cart);
    if (first == __LONG_MAX__) return 0;
    int root = (int)(first % size);
    if (a->d.rank == root)
        snprintf(msg, msglen, "step %d rank %d cell (%d,%d): got %s want %s", bad_step, a->d.rank, a->d.x0 + ci - 1,
                 a->d.y0 + cj - 1, got, want);
    MPI_Bcast(msg, (int)msglen, MPI_CHAR, root, a->d.cart);
    return 1;
}

/* One timed repetition r of `steps` iterations, after the synchronization.
 * Returns this rank's MPI code (the caller agrees on it over the ranks). */
static int variant_rep(mg_bench *b, const app_ctx *a, variant *v, int steps, int r)
{
    int rc = mg_bench_sync(b);
    if (rc != MPI_SUCCESS) return rc;
    double t0 = MPI_Wtime();
    for (int s = 0; s < steps; s++) {
        double tc = MPI_Wtime();
        rc = mg_halo_exchange(v->h[v->cur]);
        v->comm += MPI_Wtime() - tc;
        if (rc != MPI_SUCCESS) return rc;
        app_step(a, a->edge, v->g[v->cur], v->g[1 - v->cur], a->d.nx, a->d.ny);
        v->cur = 1 - v->cur;
    }
    v->loop[r] = MPI_Wtime() - t0;
    v->total += v->loop[r];
    return MPI_SUCCESS;
}

/* Writes a timed variant's rows (maximum over ranks per repetition, per
 * iteration) and its comm note. */
static void variant_write(mg_bench *b, const app_ctx *a, variant *v, int steps, const char *label)
{
    const int nrep = b->nrep_fixed;
    double *maxloop = v->loop + nrep, share = v->total > 0 ? v->comm / v->total : 0.0, maxshare = 0.0;
    MPI_Reduce(v->loop, maxloop, nrep, MPI_DOUBLE, MPI_MAX, 0, b->comm);
    MPI_Reduce(&share, &maxshare, 1, MPI_DOUBLE, MPI_MAX, 0, b->comm);
    if (b->rank == 0) {
        for (int r = 0; r < nrep; r++)
            fprintf(b->out, "%s %d %d %d %d %.9e\n", label, a->blk.gnx, a->blk.gny, steps, r, maxloop[r] / steps);
        fflush(b->out);
    }
    mg_bench_note(b, "comm", label, "%.6f", maxshare);
}

/* Repetition r of a ready variant; on an MPI error on any rank the variant is
 * recorded as failed. Returns 1 if it is still ready. Collective. */
static int variant_timed_rep(mg_bench *b, const app_ctx *a, variant *v, int steps, int r, const char *label)
{
    int rc = variant_rep(b, a, v, steps, r), all;
    MPI_Allreduce(&rc, &all, 1, MPI_INT, MPI_MAX, b->comm);
    if (all == MPI_SUCCESS) return 1;
    char msg[64];
    snprintf(msg, sizeof msg, "MPI error %d in the timed loop", all);
    mg_bench_config_error(b, label, msg);
    return 0;
}

typedef struct {
    int steps, check, corrupt;
    char **snap;        /* halos of the BASIC:NONBLOCKING reference (check) */
    const void *serial; /* final state of the serial run (check) */
} check_ctx;

/* Creates a variant, records its setup and buffers, checks it, puts it back to
 * its initial state, warms it up and records its memory. Collective. Returns 1
 * if it is ready to be timed; 0 if not (the reason is recorded, nothing kept). */
static int variant_prepare(mg_bench *b, const app_ctx *a, mg_halo_packing p, mg_halo_mode m, const char *label,
                           const check_ctx *c, variant *v)
{
    char msg[MPI_MAX_ERROR_STRING + 64] = "";
    mg_bench_note(b, "rss_before", label, "%ld", peak_rss_bytes(b->comm));
    long rss0;
    int rc = variant_create(a, p, m, v, &rss0);
    if (rc != MPI_SUCCESS) {
        char es[MPI_MAX_ERROR_STRING];
        int len;
        MPI_Error_string(rc, es, &len);
        snprintf(msg, sizeof msg, "mg_halo_create failed: %s", es);
        mg_bench_config_error(b, label, msg);
        return 0;
    }
    double setup;
    MPI_Reduce(&v->setup_s, &setup, 1, MPI_DOUBLE, MPI_MAX, 0, b->comm);
    mg_bench_note(b, "setup", label, "%.9e", setup);
    unsigned long long hb = mg_halo_buffer_bytes(v->h[0]) + mg_halo_buffer_bytes(v->h[1]), maxhb = 0;
    MPI_Reduce(&hb, &maxhb, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, 0, b->comm);
    mg_bench_note(b, "halo_bytes", label, "%llu", maxhb);
    if (c->check) {
        int r = variant_check(a, v, c->steps, c->corrupt && p != MG_HALO_BASIC, c->snap, c->serial, msg, sizeof msg);
        if (r < 0) snprintf(msg, sizeof msg, "MPI error %d in the halo exchange", -r);
        if (r != 0) {
            mg_bench_config_error(b, label, msg);
            variant_free(v);
            return 0;
        }
        app_init(a, &a->blk, v->g[0], v->g[1]); /* the halo objects stay bound to the grids */
    }
    /* Warm-up: one exchange of the initial state. It writes only halo cells, with
     * the values the first timed exchange writes again, so the state is unchanged;
     * lazy allocations inside the MPI library then happen here, not in the first
     * timed repetition, and count in the memory below. */
    rc = mg_halo_exchange(v->h[0]);
    v->loop = calloc(2 * (size_t)b->nrep_fixed, sizeof *v->loop); /* this rank's times, then the maxima */
    int ok = rc == MPI_SUCCESS && v->loop, allok;
    MPI_Allreduce(&ok, &allok, 1, MPI_INT, MPI_LAND, b->comm);
    if (!allok) {
        mg_bench_config_error(b, label, "the warm-up exchange failed or out of memory");
        variant_free(v);
        return 0;
    }
    long rss1 = current_rss_bytes();
    /* {increase, unreadable}: the note only when every rank could read /proc */
    long mem[2] = {rss1 - rss0, rss0 < 0 || rss1 < 0}, maxmem[2] = {0, 1};
    MPI_Reduce(mem, maxmem, 2, MPI_LONG, MPI_MAX, 0, b->comm);
    if (!maxmem[1]) mg_bench_note(b, "mem", label, "%ld", maxmem[0]);
    mg_bench_note(b, "rss", label, "%ld", peak_rss_bytes(b->comm));
    return 1;
}

/* ---------------------------------------------------------------- */
/* Options                                                           */
/* ---------------------------------------------------------------- */

static int parse_variants(mg_bench *b, const char *s, int *pk, int *md, int *n)
{
    *n = 0;
    if (strcmp(s, "all") == 0) {
        for (int p = 0; p < MG_HALO_PACKING_COUNT_; p++)
            for (int m = 0; m < MG_HALO_MODE_COUNT_; m++)
                if (mg_halo_mode_supported((mg_halo_mode)m)) pk[*n] = p, md[*n] = m, ++*n;
        return 0;
    }
    char *copy = strdup(s);
    if (!copy) return -1;
    int bad = 0;
    char *save = NULL;
    for (char *tok = strtok_r(copy, ",", &save); tok && !bad; tok = strtok_r(NULL, ",", &save)) {
        char *colon = strchr(tok, ':');
        int p = -1, m = -1;
        if (colon) {
            *colon = '\0';
            for (int k = 0; k < MG_HALO_PACKING_COUNT_; k++)
                if (strcmp(tok, mg_halo_packing_name((mg_halo_packing)k)) == 0) p = k;
            for (int k = 0; k < MG_HALO_MODE_COUNT_; k++)
                if (strcmp(colon + 1, mg_halo_mode_name((mg_halo_mode)k)) == 0) m = k;
            *colon = ':';
        }
        if (p < 0 || m < 0) {
            mg_bench_error(b, "bad value '%s' for --variants (want packing:mode, e.g. ddt:neighbor, or all)", tok);
            bad = 1;
        } else if (!mg_halo_mode_supported((mg_halo_mode)m)) {
            mg_bench_error(b, "bad value '%s' for --variants: mode %s is not supported by this MPI build", tok,
                           mg_halo_mode_name((mg_halo_mode)m));
            bad = 1;
        } else if (*n >= MAX_VARIANTS) {
            mg_bench_error(b, "bad value '%s' for --variants: more than %d variants", s, MAX_VARIANTS);
            bad = 1;
        } else {
            pk[*n] = p, md[*n] = m, ++*n;
        }
    }
    free(copy);
    if (!bad && *n == 0) {
        mg_bench_error(b, "bad value '%s' for --variants: empty list", s);
        bad = 1;
    }
    return bad ? -1 : 0;
}

/* Reads --image on rank 0 and broadcasts it (as doubles, sample values). */
static int load_image(mg_bench *b, const char *path, app_ctx *a, int *w, int *h)
{
    int dims[3] = {0, 0, 0};
    mg_pgm img = {0};
    char err[512] = "";
    if (b->rank == 0) {
        mg_pgm_status st = mg_pgm_read(path, &img, err, sizeof err);
        if (st == MG_PGM_OK)
            dims[0] = img.width, dims[1] = img.height;
        else
            dims[2] = 1;
    }
    MPI_Bcast(dims, 3, MPI_INT, 0, b->comm);
    if (dims[2]) {
        mg_bench_error(b, "--image: %s", err); /* err names the file */
        return -1;
    }
    size_t n = (size_t)dims[0] * (size_t)dims[1];
    a->img_global = malloc(n * sizeof *a->img_global);
    uint16_t *px = b->rank == 0 ? img.pixels : malloc(n * sizeof *px);
    int ok = a->img_global && px, allok;
    MPI_Allreduce(&ok, &allok, 1, MPI_INT, MPI_LAND, b->comm);
    if (!allok) {
        mg_bench_error(b, "--image %s: out of memory", path);
        if (b->rank != 0) free(px);
        mg_pgm_free(&img);
        return -1;
    }
    /* n <= MG_PGM_MAX_PIXELS = 2^28 fits an int count. */
    MPI_Bcast(px, (int)n, MPI_UNSIGNED_SHORT, 0, b->comm);
    for (size_t k = 0; k < n; k++) a->img_global[k] = (double)px[k];
    if (b->rank != 0) free(px);
    int maxval = img.maxval;
    MPI_Bcast(&maxval, 1, MPI_INT, 0, b->comm);
    a->img_maxval = maxval;
    mg_pgm_free(&img);
    *w = dims[0];
    *h = dims[1];
    return 0;
}

/* --save-image: rank 0 writes the interior of the serial reference's final state
 * (which every checked variant equals bitwise), rounded and clamped to 0..maxval.
 * Returns 0, or -1 with the message printed (same on every rank). */
static int save_image(mg_bench *b, const app_ctx *a, const double *serial, const char *path)
{
    char err[512] = "";
    int st = MG_PGM_OK;
    if (b->rank == 0) {
        const int w = a->blk.gnx, h = a->blk.gny;
        mg_pgm img = {w, h, a->img_maxval, malloc((size_t)w * (size_t)h * sizeof(uint16_t))};
        if (!img.pixels) {
            st = MG_PGM_ENOMEM;
            snprintf(err, sizeof err, "%s: out of memory", path);
        } else {
            for (int j = 1; j <= h; j++)
                for (int i = 1; i <= w; i++) {
                    double v = serial[MG_IDX(w, i, j)] + 0.5;
                    v = v < 0.0 ? 0.0 : v > img.maxval ? img.maxval : v;
                    img.pixels[(size_t)(j - 1) * (size_t)w + (size_t)(i - 1)] = (uint16_t)v;
                }
            st = mg_pgm_write(path, &img, err, sizeof err);
            free(img.pixels);
        }
    }
    MPI_Bcast(&st, 1, MPI_INT, 0, b->comm);
    if (st != MG_PGM_OK) {
        mg_bench_error(b, "--save-image: %s", err); /* err names the file */
        return -1;
    }
    return 0;
}

typedef struct {
    /* as given */
    const char *variants_arg, *image_path, *app_arg, *save_path;
    int nx, ny, lnx, lny, steps, check, corrupt, sequential;
    /* read */
    int pk[MAX_VARIANTS], md[MAX_VARIANTS], nvar;
    int gnx, gny;
} options;

static void list(mg_json *j, const mg_bench *b)
{
    (void)b;
    const char *names[MAX_VARIANTS];
    int n = 0;
    mg_json_strings(j, "apps", app_names, APP_COUNT_);
    for (int p = 0; p < MG_HALO_PACKING_COUNT_; p++) names[p] = mg_halo_packing_name((mg_halo_packing)p);
    mg_json_strings(j, "packings", names, MG_HALO_PACKING_COUNT_);
    for (int m = 0; m < MG_HALO_MODE_COUNT_; m++) names[m] = mg_halo_mode_name((mg_halo_mode)m);
    mg_json_strings(j, "modes", names, MG_HALO_MODE_COUNT_);
    for (int m = 0; m < MG_HALO_MODE_COUNT_; m++)
        if (mg_halo_mode_supported((mg_halo_mode)m)) names[n++] = mg_halo_mode_name((mg_halo_mode)m);
    mg_json_strings(j, "modes_built", names, n);
    mg_json_object(j, "defaults");
    mg_json_long(j, "nrep", DEFAULT_NREP);
    mg_json_string(j, "app", app_names[APP_JACOBI]);
    mg_json_string(j, "variants", "all");
    mg_json_long(j, "nx", DEFAULT_NX);
    mg_json_long(j, "ny", DEFAULT_NY);
    mg_json_long(j, "steps", DEFAULT_STEPS);
    mg_json_bool(j, "check", 1);
    mg_json_string(j, "order", "interleaved");
    mg_json_close(j);
}

/* The grid options; 0, or -1 after the message. */
static int read_grid(mg_bench *b, const options *o, int app)
{
    if ((o->lnx || o->lny) && (o->nx || o->ny)) {
        mg_bench_error(b, "--local-nx/--local-ny and --nx/--ny exclude each other");
        return -1;
    }
    if (!o->lnx != !o->lny) {
        mg_bench_error(b, "%s needs %s too", o->lnx ? "--local-nx" : "--local-ny",
                       o->lnx ? "--local-ny" : "--local-nx");
        return -1;
    }
    if (o->image_path && app != APP_IMAGE) {
        mg_bench_error(b, "--image %s: only for --app image", o->image_path);
        return -1;
    }
    if (o->save_path && (app != APP_IMAGE || !o->check)) {
        mg_bench_error(b,
                       "--save-image %s: only for --app image, with --check (it writes the serial reference "
                       "that every variant is checked against)",
                       o->save_path);
        return -1;
    }
    if (o->image_path && (o->nx || o->ny || o->lnx)) {
        mg_bench_error(b, "--image %s: the grid size is the image size (drop --nx/--ny/--local-*)", o->image_path);
        return -1;
    }
    return 0;
}

/* The command line: MG_ARGS_RUN, or the exit status. */
static int read_command_line(mg_bench *b, options *o, app_ctx *a, int argc, char **argv)
{
    char grid[64], steps[64];
    snprintf(grid, sizeof grid, "global grid size (default %d x %d)", DEFAULT_NX, DEFAULT_NY);
    snprintf(steps, sizeof steps, "iterations per repetition (default %d)", DEFAULT_STEPS);
    const mg_opt opts[] = {
        {"--app", MG_OPT_VALUE, &o->app_arg, 0, NULL, "jacobi|life|image", "application (default jacobi)"},
        {"--variants", MG_OPT_VALUE, &o->variants_arg, 0, NULL, "LIST|all",
         "packing:mode pairs, comma separated; packing basic|ddt|subarray|normalized, mode "
         "nonblocking|neighbor|persistent|neighbor-persistent (default all)"},
        {"--nx", MG_OPT_POSITIVE, &o->nx, 0, NULL, "N", grid},
        {"--ny", MG_OPT_POSITIVE, &o->ny, 0, NULL, "N", "(with --nx)"},
        {"--local-nx", MG_OPT_POSITIVE, &o->lnx, 0, NULL, "N", "weak scaling: global = local x process dims"},
        {"--local-ny", MG_OPT_POSITIVE, &o->lny, 0, NULL, "N", "(with --local-nx)"},
        {"--steps", MG_OPT_POSITIVE, &o->steps, 0, NULL, "N", steps},
        {"--image", MG_OPT_VALUE, &o->image_path, 0, NULL, "FILE.pgm",
         "image app: input image (default: a generated image)"},
        {"--save-image", MG_OPT_VALUE, &o->save_path, 0, NULL, "FILE.pgm",
         "image app: write the reconstruction after --steps iterations (the serial reference of the check; needs "
         "--check)"},
        {"--check", MG_OPT_FLAG, &o->check, 1, NULL, NULL,
         "compare with the serial reference before timing (default on)"},
        {"--no-check", MG_OPT_FLAG, &o->check, 0, NULL, NULL, "time without the comparison"},
        {"--sequential", MG_OPT_FLAG, &o->sequential, 1, NULL, NULL,
         "time one variant after the other (default: repetitions of all variants interleaved; needs every "
         "variant's grids at once)"},
        {"--corrupt", MG_OPT_FLAG, &o->corrupt, 1, NULL, NULL, NULL}, /* hidden: test of the check */
    };
    const mg_cli cli = {"mg_stencil", "mpiexec -n P mg_stencil [options]", opts,
                        (int)(sizeof opts / sizeof *opts), DEFAULT_NREP, list};
    int st = mg_bench_args(b, &cli, argc, argv);
    if (st != MG_ARGS_RUN) return st;
    a->app = -1;
    for (int k = 0; k < APP_COUNT_; k++)
        if (strcmp(o->app_arg, app_names[k]) == 0) a->app = k;
    if (a->app < 0) {
        mg_bench_error(b, "bad value '%s' for --app (want jacobi, life or image)", o->app_arg);
        return 2;
    }
    if (parse_variants(b, o->variants_arg, o->pk, o->md, &o->nvar) != 0 || read_grid(b, o, a->app) != 0) return 2;
    return MG_ARGS_RUN;
}

/* The global grid: --nx/--ny, --local-nx/--local-ny times the process grid,
 * or the image's size (--image, read here). 0, or -1 after the message. */
static int grid_size(mg_bench *b, options *o, app_ctx *a)
{
    int pdims[2] = {0, 0};
    MPI_Dims_create(b->size, 2, pdims);
    o->gnx = o->nx ? o->nx : DEFAULT_NX;
    o->gny = o->ny ? o->ny : DEFAULT_NY;
    if (o->lnx) {
        if ((long)o->lnx * pdims[1] > INT32_MAX || (long)o->lny * pdims[0] > INT32_MAX) {
            mg_bench_error(b, "bad value for --local-nx/--local-ny: global grid too large");
            return -1;
        }
        o->gnx = o->lnx * pdims[1];
        o->gny = o->lny * pdims[0];
    }
    if (o->image_path) return load_image(b, o->image_path, a, &o->gnx, &o->gny);
    a->img_maxval = 255;
    return 0;
}

/* Image: the edge image of the local block, from the image with its halo exchanged. */
static int edge_image(mg_bench *b, app_ctx *a)
{
    size_t n = mg_grid_cells(a->d.nx, a->d.ny);
    double *img = malloc(n * sizeof *img);
    a->edge = calloc(n, sizeof *a->edge);
    mg_halo *h = NULL;
    int rc = (img && a->edge) ? MPI_SUCCESS : MPI_ERR_NO_MEM, all;
    if (rc == MPI_SUCCESS) {
        image_fill(a, &a->blk, img);
        rc = mg_halo_create(&a->d, MPI_DOUBLE, 0, MG_HALO_BASIC, MG_HALO_NONBLOCKING, img, &h);
    }
    if (rc == MPI_SUCCESS) rc = mg_halo_exchange(h);
    if (rc == MPI_SUCCESS) mg_image_edge(img, a->edge, a->d.nx, a->d.ny);
    mg_halo_free(&h);
    free(img);
    MPI_Allreduce(&rc, &all, 1, MPI_INT, MPI_MAX, b->comm);
    if (all == MPI_SUCCESS) return 0;
    mg_bench_error(b, "cannot build the edge image (MPI error %d)", all);
    return -1;
}

/* The application on its decomposition (and the edge image). Returns 0, 2
 * for a grid the processes cannot share (a->d stays MPI_COMM_NULL), or 2
 * after an MPI failure. */
static int setup_app(mg_bench *b, const options *o, app_ctx *a)
{
    a->es = a->app == APP_LIFE ? 1 : sizeof(double);
    a->elem = a->app == APP_LIFE ? MPI_UNSIGNED_CHAR : MPI_DOUBLE;
    a->periodic = a->app == APP_LIFE;
    a->corners = a->app == APP_LIFE;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (mg_decomp_create(MPI_COMM_WORLD, o->gnx, o->gny, a->periodic, &a->d) != MPI_SUCCESS) {
        mg_bench_error(b, "cannot decompose a %dx%d grid over %d processes (--nx/--ny or --local-nx/--local-ny)",
                       o->gnx, o->gny, b->size);
        a->d.cart = MPI_COMM_NULL;
        return 2;
    }
    MPI_Comm_set_errhandler(a->d.cart, MPI_ERRORS_RETURN);
    a->blk = (mg_block){a->d.nx, a->d.ny, a->d.x0, a->d.y0, o->gnx, o->gny};
    return a->app == APP_IMAGE && edge_image(b, a) != 0 ? 2 : 0;
}

static int write_header(mg_bench *b, const options *o, const app_ctx *a)
{
    mg_bench_param(b, "app", "%s", app_names[a->app]);
    mg_bench_param(b, "gnx", "%d", o->gnx);
    mg_bench_param(b, "gny", "%d", o->gny);
    if (o->lnx) {
        mg_bench_param(b, "local_nx", "%d", o->lnx);
        mg_bench_param(b, "local_ny", "%d", o->lny);
    }
    mg_bench_param(b, "process_dims", "%dx%d", a->d.dims[1], a->d.dims[0]);
    mg_bench_param(b, "steps", "%d", o->steps);
    mg_bench_param(b, "check", "%s", o->check ? "serial_final+basic_nonblocking_halo_3_steps" : "off");
    mg_bench_param(b, "time_unit", "seconds_per_iteration");
    mg_bench_param(b, "order", "%s", o->sequential ? "sequential" : "interleaved");
    mg_bench_param(b, "variants", "%s", o->variants_arg);
    if (a->app == APP_JACOBI) mg_bench_param(b, "init", "cavity_default");
    if (a->app == APP_LIFE) mg_bench_param(b, "init", "random density=%g seed=%u periodic", LIFE_DENSITY, LIFE_SEED);
    if (a->app == APP_IMAGE)
        mg_bench_param(b, "init", "edge of %s, start 0, frame %g", o->image_path ? o->image_path : "generated mixed",
                       IMAGE_FRAME);
    return mg_bench_begin(b, "app packing mode gnx gny steps") != 0 ? 2 : 0;
}

/* --check: the serial run's final state (*serial) and the halos of the
 * BASIC:NONBLOCKING reference after its first exchanges (snap); --save-image
 * writes the serial image. 0, or 2 after the message. */
static int check_reference(mg_bench *b, const options *o, const app_ctx *a, void **serial, char **snap)
{
    *serial = serial_reference(a, o->steps);
    size_t n = mg_grid_cells(a->d.nx, a->d.ny);
    int ok = *serial != NULL, allok, rc = MPI_SUCCESS;
    for (int s = 0; s < CHECK_HALO_STEPS; s++) ok &= (snap[s] = malloc(n * a->es)) != NULL;
    MPI_Allreduce(&ok, &allok, 1, MPI_INT, MPI_LAND, b->comm);
    variant ref;
    char msg[512] = "";
    if (allok && (rc = variant_create(a, MG_HALO_BASIC, MG_HALO_NONBLOCKING, &ref, NULL)) == MPI_SUCCESS) {
        rc = variant_check(a, &ref, o->steps < CHECK_HALO_STEPS ? o->steps : CHECK_HALO_STEPS, 0, snap, NULL, msg,
                           sizeof msg);
        variant_free(&ref);
    }
    if (!allok || rc != MPI_SUCCESS) {
        mg_bench_error(b, "cannot run the check's reference (%s)", allok ? "MPI error" : "out of memory");
        return 2;
    }
    return o->save_path && save_image(b, a, *serial, o->save_path) != 0 ? 2 : 0;
}

/* One BASIC exchange per requested mode first, so that what the MPI library
 * sets up once per process for a kind of communication (shared-memory queues,
 * collective buffers) is not charged to the memory of whichever variant
 * happens to use that mode first. */
static void warm_modes(const options *o, const app_ctx *a)
{
    for (int m = 0; m < MG_HALO_MODE_COUNT_; m++) {
        int wanted = 0;
        for (int v = 0; v < o->nvar; v++) wanted |= o->md[v] == m;
        variant warm;
        if (wanted && variant_create(a, MG_HALO_BASIC, (mg_halo_mode)m, &warm, NULL) == MPI_SUCCESS) {
            mg_halo_exchange(warm.h[0]); /* a failure shows again, recorded, in the variant itself */
            variant_free(&warm);
        }
    }
}

/* Interleaved (default): every variant is prepared first and repetition r of
 * each runs in turn, in an order drawn for each repetition from --order-seed,
 * so that a slow phase of a shared machine hits all variants alike.
 * Sequential: one variant at a time.
 * 0, or 2 when memory is short. */
static int run_variants(mg_bench *b, const options *o, const app_ctx *a, const check_ctx *cc)
{
    const int nvar = o->nvar, nrep = b->nrep_fixed;
    const int rounds = o->sequential ? nvar : 1, per_round = o->sequential ? 1 : nvar;
    variant *vars = calloc((size_t)nvar, sizeof *vars);
    char(*labels)[128] = calloc((size_t)nvar, sizeof *labels);
    int *ready = calloc((size_t)nvar, sizeof *ready), status = 0;
    if (!vars || !labels || !ready) {
        mg_bench_error(b, "out of memory");
        status = 2;
    }
    if (!status) warm_modes(o, a);
    for (int round = 0; round < rounds && !status; round++) {
        const int first = round * per_round;
        for (int v = first; v < first + per_round; v++) {
            mg_halo_packing p = (mg_halo_packing)o->pk[v];
            mg_halo_mode m = (mg_halo_mode)o->md[v];
            snprintf(labels[v], sizeof labels[v], "%s %s %s", app_names[a->app], mg_halo_packing_name(p),
                     mg_halo_mode_name(m));
            ready[v] = variant_prepare(b, a, p, m, labels[v], cc, &vars[v]);
        }
        unsigned long long state = b->order;
        int order[MAX_VARIANTS];
        for (int r = 0; r < nrep; r++) {
            mg_bench_shuffle(&state, order, per_round);
            for (int k = 0; k < per_round; k++) {
                int v = first + order[k];
                if (ready[v]) ready[v] = variant_timed_rep(b, a, &vars[v], o->steps, r, labels[v]);
            }
        }
        for (int v = first; v < first + per_round; v++) {
            if (ready[v]) variant_write(b, a, &vars[v], o->steps, labels[v]);
            variant_free(&vars[v]);
        }
    }
    free(vars);
    free(labels);
    free(ready);
    return status;
}

static int run(int argc, char **argv)
{
    mg_bench b;
    mg_bench_init(&b, "stencil", MPI_COMM_WORLD);
    options o = {.variants_arg = "all", .app_arg = "jacobi", .steps = DEFAULT_STEPS, .check = 1};
    app_ctx a;
    memset(&a, 0, sizeof a);
    a.d.cart = MPI_COMM_NULL;
    int status = read_command_line(&b, &o, &a, argc, argv);
    if (status != MG_ARGS_RUN) return mg_bench_quit(&b, status);
    if (grid_size(&b, &o, &a) != 0) {
        free(a.img_global);
        return mg_bench_quit(&b, 2);
    }
    void *serial = NULL;
    char *snap[CHECK_HALO_STEPS] = {NULL, NULL, NULL};
    status = setup_app(&b, &o, &a);
    if (!status) status = write_header(&b, &o, &a);
    if (!status && o.check) status = check_reference(&b, &o, &a, &serial, snap);
    const check_ctx cc = {o.steps, o.check, o.corrupt, snap, serial};
    if (!status) status = run_variants(&b, &o, &a, &cc);

    free(serial);
    for (int s = 0; s < CHECK_HALO_STEPS; s++) free(snap[s]);
    free(a.edge);
    free(a.img_global);
    mg_decomp_free(&a.d);
    int st = mg_bench_end(&b);
    return status ? status : st;
}

int main(int argc, char **argv) { return mg_bench_main(argc, argv, run); }
