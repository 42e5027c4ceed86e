/* Tests of the stencil kernels and PGM I/O (src/apps). Serial, no MPI.
 *
 * Usage: test_stencil [work-directory]   (PGM files are written there; default ".")
 *
 * Life: glider moves by (1,1) every 4 generations and wraps around an 8x8 torus in
 * 32; blinker has period 2. Jacobi: linear boundary values give the linear exact
 * solution; the cavity converges and stays within its boundary values. Image: the
 * original is a bitwise fixed point of the reconstruction step and iteration from
 * zero converges to it. Every kernel run on a block decomposition (each block a
 * local array with a one-cell halo copied from the global grid) is bitwise equal
 * to the serial run. PGM: P5 8/16-bit round trip, P2 read, malformed files.
 */
#define _POSIX_C_SOURCE 200809L
#include "pgm.h"
#include "stencil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures, checks;

#define CHECK(cond, ...)                                             \
    do {                                                             \
        checks++;                                                    \
        if (!(cond)) {                                               \
            failures++;                                              \
            if (failures <= 50) {                                    \
                fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
                fprintf(stderr, __VA_ARGS__);                        \
                fputc('\n', stderr);                                 \
            }                                                        \
        }                                                            \
    } while (0)

static void *xcalloc(size_t n, size_t sz)
{
    void *p = calloc(n, sz);
    if (!p) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }
    return p;
}

/* ---------------------------------------------------------------- */
/* Block decomposition by copying (stands in for the halo exchange)  */
/* ---------------------------------------------------------------- */

/* A step function on one local array: in -> out, with an extra read-only array
 * (the edge image) or NULL. */
typedef void (*step_fn)(const void *extra, const void *in, void *out, int nx, int ny);

/* Copy the local block b plus its halo out of a global array (gnx x gny + halo). */
static void extract(const void *g, void *l, const mg_block *b, size_t es)
{
    for (int j = 0; j <= b->ny + 1; j++)
        memcpy((char *)l + MG_IDX(b->nx, 0, j) * es, (const char *)g + MG_IDX(b->gnx, b->x0, b->y0 + j) * es,
               ((size_t)b->nx + 2) * es);
}

/* Copy the interior of a local block back into the global array. */
static void insert(void *g, const void *l, const mg_block *b, size_t es)
{
    for (int j = 1; j <= b->ny; j++)
        memcpy((char *)g + MG_IDX(b->gnx, b->x0 + 1, b->y0 + j) * es, (const char *)l + MG_IDX(b->nx, 1, j) * es,
               (size_t)b->nx * es);
}

/* One step on a px x py decomposition of the global grid: every block is copied
 * out with its halo, stepped locally and its interior copied back into gout. */
static void decomposed_step(step_fn f, const void *gextra, const void *gin, void *gout, int gnx, int gny, int px,
                            int py, size_t es)
{
    for (int by = 0; by < py; by++)
        for (int bx = 0; bx < px; bx++) {
            mg_block b;
            b.gnx = gnx, b.gny = gny;
            b.x0 = gnx * bx / px, b.nx = gnx * (bx + 1) / px - b.x0;
            b.y0 = gny * by / py, b.ny = gny * (by + 1) / py - b.y0;
            const size_t n = mg_grid_cells(b.nx, b.ny);
            void *li = xcalloc(n, es), *lo = xcalloc(n, es), *le = NULL;
            extract(gin, li, &b, es);
            extract(gout, lo, &b, es); /* the out halo as the serial run has it */
            if (gextra) {
                le = xcalloc(n, es);
                extract(gextra, le, &b, es);
            }
            f(le, li, lo, b.nx, b.ny);
            insert(gout, lo, &b, es);
            free(li), free(lo), free(le);
        }
}

static void life_fn(const void *e, const void *in, void *out, int nx, int ny)
{
    (void)e;
    mg_life_step(in, out, nx, ny);
}
static void jacobi_fn(const void *e, const void *in, void *out, int nx, int ny)
{
    (void)e;
    mg_jacobi_step(in, out, nx, ny);
}
static void image_fn(const void *e, const void *in, void *out, int nx, int ny) { mg_image_step(e, in, out, nx, ny); }

/* ---------------------------------------------------------------- */
/* Life                                                              */
/* ---------------------------------------------------------------- */

static void life_run(unsigned char **g, unsigned char **t, int nx, int ny, int steps)
{
    for (int s = 0; s < steps; s++) {
        mg_life_wrap_halo(*g, nx, ny);
        mg_life_step(*g, *t, nx, ny);
        unsigned char *x = *g;
        *g = *t, *t = x;
    }
}

static int life_equal(const unsigned char *a, const unsigned char *b, int nx, int ny)
{
    for (int j = 1; j <= ny; j++)
        for (int i = 1; i <= nx; i++)
            if (a[MG_IDX(nx, i, j)] != b[MG_IDX(nx, i, j)]) return 0;
    return 1;
}

static void life_print(const char *what, const unsigned char *g, int nx, int ny)
{
    fprintf(stderr, "%s:\n", what);
    for (int j = 1; j <= ny; j++) {
        for (int i = 1; i <= nx; i++) fputc(g[MG_IDX(nx, i, j)] ? '#' : '.', stderr);
        fputc('\n', stderr);
    }
}

static void test_life(void)
{
    const int n = 8;
    const mg_block b = mg_block_serial(n, n);
    const size_t cells = mg_grid_cells(n, n);
    unsigned char *g = xcalloc(cells, 1), *t = xcalloc(cells, 1), *start = xcalloc(cells, 1), *want = xcalloc(cells, 1);

    /* Glider at (5,5): its cells wrap across both edges within 4 generations. */
    for (int pos = 0; pos < 2; pos++) {
        const int p0 = pos == 0 ? 1 : 5;
        memset(g, 0, cells);
        CHECK(mg_life_place(g, &b, MG_LIFE_GLIDER, p0, p0) == 0, "place glider");
        memcpy(start, g, cells);
        CHECK(mg_life_count(g, n, n) == 5, "glider has 5 cells, got %ld", mg_life_count(g, n, n));
        for (int k = 1; k <= 8; k++) {
            life_run(&g, &t, n, n, 4);
            memset(want, 0, cells);
            mg_life_place(want, &b, MG_LIFE_GLIDER, p0 + k, p0 + k);
            const int ok = life_equal(g, want, n, n);
            CHECK(ok, "glider from (%d,%d) after %d generations is not at (%d,%d)", p0, p0, 4 * k, p0 + k, p0 + k);
            if (!ok) {
                life_print("got", g, n, n);
                life_print("want", want, n, n);
            }
        }
        CHECK(life_equal(g, start, n, n), "glider not back at its start after 32 generations");
    }

    /* Blinker: period 2, and not period 1. */
    memset(g, 0, cells);
    mg_life_place(g, &b, MG_LIFE_BLINKER, 3, 2);
    memcpy(start, g, cells);
    life_run(&g, &t, n, n, 1);
    CHECK(!life_equal(g, start, n, n), "blinker did not change in one generation");
    CHECK(g[MG_IDX(n, 5, 3)] && g[MG_IDX(n, 5, 4)] && g[MG_IDX(n, 5, 5)] && mg_life_count(g, n, n) == 3,
          "blinker phase 2 is not vertical at column 4 (global), rows 2..4");
    life_run(&g, &t, n, n, 1);
    CHECK(life_equal(g, start, n, n), "blinker not back after 2 generations");
    /* A block is still. */
    memset(g, 0, cells);
    mg_life_place(g, &b, MG_LIFE_BLOCK, 7, 7); /* wraps into all four corners */
    memcpy(start, g, cells);
    life_run(&g, &t, n, n, 3);
    CHECK(life_equal(g, start, n, n) && mg_life_count(g, n, n) == 4, "wrapped block is not still");
    CHECK(mg_life_place(g, &b, (mg_life_pattern)99, 0, 0) == -1, "unknown pattern accepted");
    free(g), free(t), free(start), free(want);

    /* Placing on local blocks with offsets equals placing on the global grid. */
    {
        const int gnx = 11, gny = 9;
        const mg_block gb = mg_block_serial(gnx, gny);
        unsigned char *glob = xcalloc(mg_grid_cells(gnx, gny), 1);
        unsigned char *asm_ = xcalloc(mg_grid_cells(gnx, gny), 1);
        mg_life_place(glob, &gb, MG_LIFE_GLIDER, 9, 7);
        mg_life_place(glob, &gb, MG_LIFE_BLINKER, 4, 3);
        for (int by = 0; by < 2; by++)
            for (int bx = 0; bx < 3; bx++) {
                mg_block lb = {0, 0, gnx * bx / 3, gny * by / 2, gnx, gny};
                lb.nx = gnx * (bx + 1) / 3 - lb.x0, lb.ny = gny * (by + 1) / 2 - lb.y0;
                unsigned char *l = xcalloc(mg_grid_cells(lb.nx, lb.ny), 1);
                mg_life_place(l, &lb, MG_LIFE_GLIDER, 9, 7);
                mg_life_place(l, &lb, MG_LIFE_BLINKER, 4, 3);
                insert(asm_, l, &lb, 1);
                free(l);
            }
        CHECK(life_equal(glob, asm_, gnx, gny), "patterns placed on blocks differ from the global grid");
        free(glob), free(asm_);
    }

    /* Random soup, 300 generations: 2x3 and 3x1 decompositions bitwise equal to serial. */
    {
        const int gnx = 37, gny = 23;
        const size_t c = mg_grid_cells(gnx, gny);
        const mg_block gb = mg_block_serial(gnx, gny);
        unsigned char *s = xcalloc(c, 1), *st = xcalloc(c, 1);
        unsigned char *d1 = xcalloc(c, 1), *d1t = xcalloc(c, 1), *d2 = xcalloc(c, 1), *d2t = xcalloc(c, 1);
        mg_life_random(s, &gb, 0.35, 42);
        const long alive0 = mg_life_count(s, gnx, gny);
        CHECK(alive0 > 200 && alive0 < 400, "random soup density: %ld of %d alive", alive0, gnx * gny);
        memcpy(d1, s, c), memcpy(d2, s, c);
        int same = 1;
        for (int k = 0; k < 300; k++) {
            mg_life_wrap_halo(s, gnx, gny), mg_life_wrap_halo(d1, gnx, gny), mg_life_wrap_halo(d2, gnx, gny);
            mg_life_step(s, st, gnx, gny);
            decomposed_step(life_fn, NULL, d1, d1t, gnx, gny, 2, 3, 1);
            decomposed_step(life_fn, NULL, d2, d2t, gnx, gny, 3, 1, 1);
            unsigned char *x;
            x = s, s = st, st = x;
            x = d1, d1 = d1t, d1t = x;
            x = d2, d2 = d2t, d2t = x;
            if (!life_equal(s, d1, gnx, gny) || !life_equal(s, d2, gnx, gny)) same = 0;
        }
        CHECK(same, "decomposed Life differs from serial");
        CHECK(mg_life_count(s, gnx, gny) != alive0 || !life_equal(s, d1, gnx, gny), "soup did not evolve");
        free(s), free(st), free(d1), free(d1t), free(d2), free(d2t);
    }
}

/* ---------------------------------------------------------------- */
/* Jacobi                                                            */
/* ---------------------------------------------------------------- */

typedef struct {
    double a, b, c;
} linear;
static double linear_fn(int gx, int gy, void *ctx)
{
    const linear *l = ctx;
    return l->a * gx + l->b * gy + l->c;
}

static void test_jacobi(void)
{
    /* Linear boundary values: the discrete solution is the same linear function. */
    {
        const int nx = 7, ny = 5;
        const mg_block b = mg_block_serial(nx, ny);
        linear l = {0.75, -1.5, 2.0};
        double *p = xcalloc(mg_grid_cells(nx, ny), sizeof *p), *q = xcalloc(mg_grid_cells(nx, ny), sizeof *q);
        mg_jacobi_init(p, &b, linear_fn, &l);
        mg_jacobi_init(q, &b, linear_fn, &l);
        CHECK(p[MG_IDX(nx, 0, 0)] == linear_fn(-1, -1, &l) && p[MG_IDX(nx, nx + 1, 3)] == linear_fn(nx, 2, &l) &&
                  p[MG_IDX(nx, 2, ny + 1)] == linear_fn(1, ny, &l) && p[MG_IDX(nx, 3, 3)] == 0.0,
              "jacobi init: boundary or interior wrong");
        double prev = INFINITY;
        int monotone = 1;
        for (int k = 0; k < 2000; k++) {
            mg_jacobi_step(p, q, nx, ny);
            const double d = mg_jacobi_diff2(p, q, nx, ny);
            if (prev > 1e-20 && d > prev) monotone = 0;
            prev = d;
            double *x = p;
            p = q, q = x;
        }
        CHECK(monotone, "jacobi: squared change not monotone");
        CHECK(prev < 1e-24, "jacobi: not converged, last squared change %g", prev);
        double err = 0;
        for (int j = 1; j <= ny; j++)
            for (int i = 1; i <= nx; i++) err = fmax(err, fabs(p[MG_IDX(nx, i, j)] - linear_fn(i - 1, j - 1, &l)));
        CHECK(err < 1e-12, "jacobi: linear solution error %g", err);
        free(p), free(q);
    }
    /* Cavity: boundary values, bounds, serial == decomposed bitwise. */
    {
        const int gnx = 30, gny = 24;
        const mg_block b = mg_block_serial(gnx, gny);
        const mg_cavity cav = mg_cavity_default(gnx, gny);
        CHECK(mg_cavity_psi(&cav, gnx, gny, -1, 5) == 0.0 && mg_cavity_psi(&cav, gnx, gny, 4, gny) == 0.0,
              "cavity: left/top wall not 0");
        CHECK(mg_cavity_psi(&cav, gnx, gny, cav.inlet_x0 - 1, -1) == 0.0 &&
                  mg_cavity_psi(&cav, gnx, gny, cav.inlet_x0 + cav.inlet_w, -1) == cav.flow,
              "cavity: inlet ramp ends wrong");
        CHECK(mg_cavity_psi(&cav, gnx, gny, gnx, cav.outlet_y0 - 1) == cav.flow &&
                  mg_cavity_psi(&cav, gnx, gny, gnx, cav.outlet_y0 + cav.outlet_w) == 0.0 &&
                  mg_cavity_psi(&cav, gnx, gny, gnx, -1) == cav.flow,
              "cavity: outlet ramp ends wrong");
        const size_t c = mg_grid_cells(gnx, gny);
        double *s = xcalloc(c, 8), *st = xcalloc(c, 8), *d = xcalloc(c, 8), *dt = xcalloc(c, 8);
        mg_jacobi_init_cavity(s, &b, &cav);
        mg_jacobi_init_cavity(st, &b, &cav);
        memcpy(d, s, c * 8), memcpy(dt, st, c * 8);
        /* Local initialisation of every block equals the global one (halo on the boundary). */
        int init_ok = 1;
        for (int by = 0; by < 3; by++)
            for (int bx = 0; bx < 2; bx++) {
                mg_block lb = {0, 0, gnx * bx / 2, gny * by / 3, gnx, gny};
                lb.nx = gnx * (bx + 1) / 2 - lb.x0, lb.ny = gny * (by + 1) / 3 - lb.y0;
                double *l = xcalloc(mg_grid_cells(lb.nx, lb.ny), 8), *e = xcalloc(mg_grid_cells(lb.nx, lb.ny), 8);
                mg_jacobi_init_cavity(l, &lb, &cav);
                extract(s, e, &lb, 8);
                for (int j = 0; j <= lb.ny + 1; j++)
                    for (int i = 0; i <= lb.nx + 1; i++) {
                        const int gx = lb.x0 + i - 1, gy = lb.y0 + j - 1;
                        const int phys = gx < 0 || gy < 0 || gx >= gnx || gy >= gny;
                        if (phys && l[MG_IDX(lb.nx, i, j)] != e[MG_IDX(lb.nx, i, j)]) init_ok = 0;
                        if (!phys && l[MG_IDX(lb.nx, i, j)] != 0.0) init_ok = 0;
                    }
                free(l), free(e);
            }
        CHECK(init_ok, "cavity: local block initialisation differs from the global grid");
        double first = -1, last = 0;
        int same = 1;
        for (int k = 0; k < 3000; k++) {
            mg_jacobi_step(s, st, gnx, gny);
            if (k < 200) decomposed_step(jacobi_fn, NULL, d, dt, gnx, gny, 2, 3, 8);
            last = mg_jacobi_diff2(s, st, gnx, gny);
            if (first < 0) first = last;
            double *x = s;
            s = st, st = x;
            if (k < 200) {
                x = d, d = dt, dt = x;
                if (memcmp(s, d, c * 8) != 0) same = 0;
            }
        }
        CHECK(same, "decomposed Jacobi differs from serial (bitwise)");
        CHECK(last < 1e-12 * first, "cavity not converging: change %g -> %g", first, last);
        double lo = INFINITY, hi = -INFINITY;
        for (int j = 1; j <= gny; j++)
            for (int i = 1; i <= gnx; i++) lo = fmin(lo, s[MG_IDX(gnx, i, j)]), hi = fmax(hi, s[MG_IDX(gnx, i, j)]);
        CHECK(lo > 0.0 && hi < cav.flow, "cavity psi outside (0, flow): %g..%g", lo, hi);
        free(s), free(st), free(d), free(dt);
    }
}

/* ---------------------------------------------------------------- */
/* Image reconstruction                                              */
/* ---------------------------------------------------------------- */

static void test_image(void)
{
    const int kinds[3] = {MG_IMAGE_SMOOTH, MG_IMAGE_SHAPES, MG_IMAGE_MIXED};
    const double bvals[3] = {0.0, 255.0, 128.0};
    for (int kk = 0; kk < 3; kk++) {
        const int nx = 20, ny = 16;
        const mg_block b = mg_block_serial(nx, ny);
        const size_t c = mg_grid_cells(nx, ny);
        double *img = xcalloc(c, 8), *edge = xcalloc(c, 8), *p = xcalloc(c, 8), *q = xcalloc(c, 8);
        mg_image_generate(img, &b, (mg_image_kind)kinds[kk]);
        double lo = 1e9, hi = -1e9;
        int integral = 1;
        for (int j = 1; j <= ny; j++)
            for (int i = 1; i <= nx; i++) {
                const double v = img[MG_IDX(nx, i, j)];
                lo = fmin(lo, v), hi = fmax(hi, v);
                if (v != floor(v)) integral = 0;
            }
        CHECK(integral && lo >= 0 && hi <= 255 && hi - lo >= 40, "image kind %d: values %g..%g integral %d", kinds[kk],
              lo, hi, integral);
        mg_image_set_boundary(img, &b, bvals[kk]);
        mg_image_edge(img, edge, nx, ny);
        /* Fixed point: one step on the original gives the original, bitwise. */
        mg_image_set_boundary(p, &b, bvals[kk]);
        mg_image_step(edge, img, p, nx, ny);
        int fixed = 1;
        for (int j = 1; j <= ny; j++)
            if (memcmp(p + MG_IDX(nx, 1, j), img + MG_IDX(nx, 1, j), (size_t)nx * 8) != 0) fixed = 0;
        CHECK(fixed, "image kind %d: original is not a bitwise fixed point", kinds[kk]);
        /* From zero: the error decreases and converges. */
        memset(p, 0, c * 8), memset(q, 0, c * 8);
        mg_image_set_boundary(p, &b, bvals[kk]);
        mg_image_set_boundary(q, &b, bvals[kk]);
        double err = mg_image_maxdiff(p, img, nx, ny);
        int decreasing = 1;
        for (int k = 1; k <= 4000; k++) {
            mg_image_step(edge, p, q, nx, ny);
            double *x = p;
            p = q, q = x;
            if (k % 100 == 0) {
                const double e = mg_image_maxdiff(p, img, nx, ny);
                if (err > 1e-9 && !(e < err)) decreasing = 0;
                err = e;
            }
        }
        CHECK(decreasing, "image kind %d: error not decreasing", kinds[kk]);
        CHECK(err < 1e-9, "image kind %d: error %g after 4000 sweeps", kinds[kk], err);
        /* Bytes round trip. */
        unsigned char *px = xcalloc((size_t)nx * ny, 1);
        mg_image_to_u8(p, px, nx, ny);
        memset(q, 0, c * 8);
        mg_image_from_u8(px, q, nx, ny);
        CHECK(mg_image_maxdiff(q, img, nx, ny) == 0.0, "image kind %d: u8 round trip", kinds[kk]);
        free(px), free(img), free(edge), free(p), free(q);
    }
    /* Decomposed == serial, bitwise, including the edge image and the generator. */
    {
        const int gnx = 33, gny = 26;
        const mg_block b = mg_block_serial(gnx, gny);
        const size_t c = mg_grid_cells(gnx, gny);
        double *img = xcalloc(c, 8), *edge = xcalloc(c, 8), *dedge = xcalloc(c, 8), *s = xcalloc(c, 8),
               *st = xcalloc(c, 8), *d = xcalloc(c, 8), *dt = xcalloc(c, 8), *gen = xcalloc(c, 8);
        mg_image_generate(img, &b, MG_IMAGE_MIXED);
        for (int by = 0; by < 2; by++)
            for (int bx = 0; bx < 3; bx++) {
                mg_block lb = {0, 0, gnx * bx / 3, gny * by / 2, gnx, gny};
                lb.nx = gnx * (bx + 1) / 3 - lb.x0, lb.ny = gny * (by + 1) / 2 - lb.y0;
                double *l = xcalloc(mg_grid_cells(lb.nx, lb.ny), 8);
                mg_image_generate(l, &lb, MG_IMAGE_MIXED);
                insert(gen, l, &lb, 8);
                free(l);
            }
        CHECK(memcmp(gen, img, c * 8) == 0, "image generated on blocks differs from the global image");
        mg_image_set_boundary(img, &b, 255.0);
        mg_image_edge(img, edge, gnx, gny);
        /* The edge image by blocks (step_fn shape: edge(in) -> out). */
        for (int by = 0; by < 2; by++)
            for (int bx = 0; bx < 3; bx++) {
                mg_block lb = {0, 0, gnx * bx / 3, gny * by / 2, gnx, gny};
                lb.nx = gnx * (bx + 1) / 3 - lb.x0, lb.ny = gny * (by + 1) / 2 - lb.y0;
                double *l = xcalloc(mg_grid_cells(lb.nx, lb.ny), 8), *e = xcalloc(mg_grid_cells(lb.nx, lb.ny), 8);
                extract(img, l, &lb, 8);
                mg_image_edge(l, e, lb.nx, lb.ny);
                insert(dedge, e, &lb, 8);
                free(l), free(e);
            }
        CHECK(memcmp(edge, dedge, c * 8) == 0, "edge image by blocks differs");
        for (double *a[4] = {s, st, d, dt}, **x = a; x < a + 4; x++) mg_image_set_boundary(*x, &b, 255.0);
        int same = 1;
        for (int k = 0; k < 300; k++) {
            mg_image_step(edge, s, st, gnx, gny);
            decomposed_step(image_fn, edge, d, dt, gnx, gny, 3, 2, 8);
            double *x = s;
            s = st, st = x;
            x = d, d = dt, dt = x;
            if (memcmp(s, d, c * 8) != 0) same = 0;
        }
        CHECK(same, "decomposed image reconstruction differs from serial (bitwise)");
        free(img), free(edge), free(dedge), free(s), free(st), free(d), free(dt), free(gen);
    }
}

/* ---------------------------------------------------------------- */
/* PGM                                                               */
/* ---------------------------------------------------------------- */

static char workdir[512] = ".";

static void path_of(char *buf, size_t n, const char *name) { snprintf(buf, n, "%s/%s", workdir, name); }

static void write_bytes(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data, 1, n, f) != n) {
        fprintf(stderr, "cannot write %s\n", path);
        exit(2);
    }
    fclose(f);
}

/* Reading the file must fail with the given status and a message naming the file. */
static void expect_error(const char *name, const void *data, size_t n, mg_pgm_status want, const char *needle)
{
    char path[600], err[512];
    path_of(path, sizeof path, name);
    if (data) write_bytes(path, data, n);
    mg_pgm img;
    memset(err, 'x', sizeof err);
    mg_pgm_status st = mg_pgm_read(path, &img, err, sizeof err);
    CHECK(st == want, "%s: status %d (%s), want %d (%s); message: %s", name, st, mg_pgm_strerror(st), want,
          mg_pgm_strerror(want), err);
    CHECK(strstr(err, path) != NULL, "%s: message does not name the file: %s", name, err);
    CHECK(!needle || strstr(err, needle) != NULL, "%s: message lacks \"%s\": %s", name, needle, err);
    CHECK(img.pixels == NULL, "%s: pixels set on error", name);
    mg_pgm_free(&img);
}

static void test_pgm(void)
{
    char path[600], err[512];
    /* P5 round trips: 8-bit and 16-bit. */
    for (int wide = 0; wide < 2; wide++) {
        mg_pgm a = {17, 5, wide ? 65535 : 255, NULL}, r;
        a.pixels = xcalloc(17 * 5, sizeof *a.pixels);
        for (int k = 0; k < 17 * 5; k++) a.pixels[k] = (uint16_t)(wide ? (k * 7919u) % 65536u : (k * 37u) % 256u);
        a.pixels[3] = (uint16_t)a.maxval, a.pixels[4] = 0;
        path_of(path, sizeof path, wide ? "rt16.pgm" : "rt8.pgm");
        mg_pgm_status st = mg_pgm_write(path, &a, err, sizeof err);
        CHECK(st == MG_PGM_OK, "write %s: %s", path, err);
        st = mg_pgm_read(path, &r, err, sizeof err);
        CHECK(st == MG_PGM_OK, "read %s: %s", path, err);
        if (st == MG_PGM_OK) {
            CHECK(r.width == 17 && r.height == 5 && r.maxval == a.maxval, "%s: header %dx%d/%d", path, r.width,
                  r.height, r.maxval);
            CHECK(memcmp(r.pixels, a.pixels, 17 * 5 * sizeof *a.pixels) == 0, "%s: pixels differ", path);
        }
        /* The file itself: header and size. */
        FILE *f = fopen(path, "rb");
        char hdr[32] = {0};
        long size = -1;
        if (f) {
            if (fread(hdr, 1, 12, f) != 12) hdr[0] = 0;
            fseek(f, 0, SEEK_END);
            size = ftell(f);
            fclose(f);
        }
        const char *want = wide ? "P5\n17 5\n65535\n" : "P5\n17 5\n255\n";
        CHECK(strncmp(hdr, want, 12) == 0, "%s: header bytes", path);
        CHECK(size == (long)(strlen(want) + 17 * 5 * (wide ? 2 : 1)), "%s: size %ld", path, size);
        mg_pgm_free(&r);
        CHECK(r.pixels == NULL && r.width == 0, "mg_pgm_free does not reset");
        free(a.pixels);
    }
    /* P2 with comments everywhere in the header and free-form layout. */
    {
        const char *p2 = "P2 # ascii\n# a comment line\n4 # width\n 3\n# maxval next\n15\n"
                         "0 1 2 3\n4 5 6 7 8 9\n10 11\n";
        path_of(path, sizeof path, "ascii.pgm");
        write_bytes(path, p2, strlen(p2));
        mg_pgm r;
        mg_pgm_status st = mg_pgm_read(path, &r, err, sizeof err);
        CHECK(st == MG_PGM_OK, "read P2: %s", err);
        if (st == MG_PGM_OK) {
            int ok = r.width == 4 && r.height == 3 && r.maxval == 15;
            for (int k = 0; k < 12 && ok; k++) ok = r.pixels[k] == k;
            CHECK(ok, "P2 content wrong");
        }
        mg_pgm_free(&r);
    }
    /* P5 whose single separator is a newline and whose first sample is a whitespace byte. */
    {
        const unsigned char p5[] = {'P', '5', '\n', '2', ' ', '1', '\n', '2', '5', '5', '\n', ' ', 200};
        path_of(path, sizeof path, "ws.pgm");
        write_bytes(path, p5, sizeof p5);
        mg_pgm r;
        mg_pgm_status st = mg_pgm_read(path, &r, err, sizeof err);
        CHECK(st == MG_PGM_OK && r.pixels[0] == ' ' && r.pixels[1] == 200, "P5 sample bytes after header: %s", err);
        mg_pgm_free(&r);
    }
    /* Malformed files. */
    const char *s;
    expect_error("missing.pgm", NULL, 0, MG_PGM_EIO, "cannot open");
    expect_error("empty.pgm", "", 0, MG_PGM_EMAGIC, "magic");
    s = "P6\n2 2\n255\nabcdefghijkl";
    expect_error("p6.pgm", s, strlen(s), MG_PGM_EMAGIC, "'6'");
    s = "GIF89a....";
    expect_error("gif.pgm", s, strlen(s), MG_PGM_EMAGIC, "magic");
    s = "P55\n2 2\n255\nabcd";
    expect_error("p55.pgm", s, strlen(s), MG_PGM_EMAGIC, "magic");
    s = "P5\n4 x4\n255\nabcdabcdabcdabcd";
    expect_error("garbage_height.pgm", s, strlen(s), MG_PGM_EHEADER, "height");
    s = "P5\n4 4z 255\nabcdabcdabcdabcd";
    expect_error("garbage_suffix.pgm", s, strlen(s), MG_PGM_EHEADER, "height");
    s = "P5\n-4 4\n255\n";
    expect_error("negative.pgm", s, strlen(s), MG_PGM_EHEADER, "width");
    s = "P5\n4 4\n";
    expect_error("no_maxval.pgm", s, strlen(s), MG_PGM_EHEADER, "maxval");
    s = "P5\n0 4\n255\n";
    expect_error("zero_width.pgm", s, strlen(s), MG_PGM_EHEADER, "empty");
    s = "P5\n99999999999 4\n255\n";
    expect_error("huge_width.pgm", s, strlen(s), MG_PGM_EHEADER, "width");
    s = "P5\n100000 100000\n255\n";
    expect_error("too_large.pgm", s, strlen(s), MG_PGM_EHEADER, "too large");
    s = "P5\n2 2\n0\nabcd";
    expect_error("maxval0.pgm", s, strlen(s), MG_PGM_EMAXVAL, "maxval 0");
    s = "P5\n2 2\n65536\nabcdabcd";
    expect_error("maxval65536.pgm", s, strlen(s), MG_PGM_EMAXVAL, "65536");
    s = "P5\n2 2\n99999999999999999999\nabcdabcd";
    expect_error("maxval_huge.pgm", s, strlen(s), MG_PGM_EMAXVAL, "maxval");
    s = "P5\n4 4\n255\nabcdabcd";
    expect_error("truncated.pgm", s, strlen(s), MG_PGM_ETRUNC, "8 of 16");
    s = "P5\n4 4\n255";
    expect_error("truncated_hdr.pgm", s, strlen(s), MG_PGM_ETRUNC, "0 of 16");
    s = "P5\n2 2\n300\nabcdef";
    expect_error("truncated16.pgm", s, strlen(s), MG_PGM_ETRUNC, "3 of 4");
    s = "P5\n2 1\n100\n\x10\xf0";
    expect_error("above_maxval.pgm", s, strlen(s), MG_PGM_EDATA, "above maxval");
    s = "P2\n3 2\n9\n1 2 3 4 5";
    expect_error("p2_truncated.pgm", s, strlen(s), MG_PGM_ETRUNC, "5 of 6");
    s = "P2\n3 2\n9\n1 2 3 4 10 6";
    expect_error("p2_above.pgm", s, strlen(s), MG_PGM_EDATA, "sample 4");
    s = "P2\n3 2\n9\n1 2 x 4 5 6";
    expect_error("p2_garbage.pgm", s, strlen(s), MG_PGM_EDATA, "'x'");

    /* Write errors. */
    mg_pgm bad = {2, 2, 0, NULL};
    uint16_t px[4] = {1, 2, 3, 300};
    bad.pixels = px;
    path_of(path, sizeof path, "w.pgm");
    CHECK(mg_pgm_write(path, &bad, err, sizeof err) == MG_PGM_EMAXVAL && strstr(err, path), "write maxval 0: %s", err);
    bad.maxval = 255;
    CHECK(mg_pgm_write(path, &bad, err, sizeof err) == MG_PGM_EDATA && strstr(err, path), "write sample>maxval: %s",
          err);
    bad.maxval = 300;
    CHECK(mg_pgm_write("/nonexistent-dir/x.pgm", &bad, err, sizeof err) == MG_PGM_EIO &&
              strstr(err, "/nonexistent-dir/x.pgm"),
          "write to a missing directory: %s", err);
    /* A tiny error buffer is still NUL-terminated. */
    char small[8];
    expect_error("p6.pgm", NULL, 0, MG_PGM_EMAGIC, NULL);
    path_of(path, sizeof path, "p6.pgm");
    mg_pgm r;
    mg_pgm_read(path, &r, small, sizeof small);
    CHECK(memchr(small, '\0', sizeof small) != NULL, "small error buffer not terminated");
}

int main(int argc, char **argv)
{
    if (argc > 1) snprintf(workdir, sizeof workdir, "%s", argv[1]);
    test_life();
    test_jacobi();
    test_image();
    test_pgm();
    if (failures) {
        fprintf(stderr, "test_stencil: %d of %d checks FAILED\n", failures, checks);
        return 1;
    }
    printf("test_stencil: all %d checks passed\n", checks);
    return 0;
}
