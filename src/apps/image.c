/* Stencil applications: lattice image reconstruction.
 *
 * Model: an image I on a gnx x gny lattice is known only through its edge image
 * (discrete negative Laplacian)  E = 4*I - (I_N + I_S + I_W + I_E). Recovering I
 * from E means solving the Poisson problem  4*I - sum(neighbours of I) = E, which
 * Jacobi iteration does: I_new = (E + sum(neighbours of I_old)) / 4, starting from
 * any guess (zero here). The error decays like the slowest mode of the lattice, so
 * small images converge in hundreds to thousands of sweeps.
 *
 * Boundary handling: the image is surrounded by a one-cell frame of constant value
 * bval (Dirichlet): the halo cells on the physical boundary hold bval both when the
 * edge image is computed and during the reconstruction, so the problem is the same
 * and the original image is its unique solution.
 *
 * Exactness: the neighbour sum s is formed in one fixed order in both the edge
 * computation and the sweep. For integer-valued images (0..255, as the generators
 * and 8-bit PGM files give) with an integer bval, 4*I - s, E + s and the product by
 * 0.25 are all exact in double precision, so one sweep maps the original image to
 * itself bitwise: step(E, I) == I.
 */
#include "stencil.h"

#include <math.h>

void mg_image_set_boundary(double *img, const mg_block *b, double bval)
{
    const int nx = b->nx, ny = b->ny;
    if (b->y0 == 0)
        for (int i = 0; i <= nx + 1; i++) img[MG_IDX(nx, i, 0)] = bval;
    if (b->y0 + ny == b->gny)
        for (int i = 0; i <= nx + 1; i++) img[MG_IDX(nx, i, ny + 1)] = bval;
    if (b->x0 == 0)
        for (int j = 0; j <= ny + 1; j++) img[MG_IDX(nx, 0, j)] = bval;
    if (b->x0 + nx == b->gnx)
        for (int j = 0; j <= ny + 1; j++) img[MG_IDX(nx, nx + 1, j)] = bval;
}

void mg_image_edge(const double *img, double *edge, int nx, int ny)
{
    for (int j = 1; j <= ny; j++) {
        const double *c = img + MG_IDX(nx, 0, j);
        const double *up = img + MG_IDX(nx, 0, j - 1), *dn = img + MG_IDX(nx, 0, j + 1);
        double *e = edge + MG_IDX(nx, 0, j);
        for (int i = 1; i <= nx; i++) {
            const double sum = ((up[i] + dn[i]) + c[i - 1]) + c[i + 1];
            e[i] = 4.0 * c[i] - sum;
        }
    }
}

void mg_image_step(const double *edge, const double *in, double *out, int nx, int ny)
{
    for (int j = 1; j <= ny; j++) {
        const double *c = in + MG_IDX(nx, 0, j);
        const double *up = in + MG_IDX(nx, 0, j - 1), *dn = in + MG_IDX(nx, 0, j + 1);
        const double *e = edge + MG_IDX(nx, 0, j);
        double *o = out + MG_IDX(nx, 0, j);
        for (int i = 1; i <= nx; i++) {
            const double sum = ((up[i] + dn[i]) + c[i - 1]) + c[i + 1];
            o[i] = 0.25 * (e[i] + sum);
        }
    }
}

/* Pixel value of global cell (x, y) of a w x h test image; integer arithmetic only,
 * so the image is the same on every machine and decomposition. */
static int pixel(mg_image_kind kind, int x, int y, int w, int h)
{
    const long wm = w > 1 ? w - 1 : 1, hm = h > 1 ? h - 1 : 1;
    /* Smooth part: a diagonal ramp plus a parabolic bowl, 0..160. */
    const long ramp = (80L * x) / wm + (40L * y) / hm;                         /* 0..120 */
    const long dx = 2L * x - wm, dy = 2L * y - hm;                             /* -wm..wm */
    const long bowl = 40L - (40L * (dx * dx + dy * dy)) / (wm * wm + hm * hm); /* 0..40 */
    long v = ramp + bowl;
    if (kind == MG_IMAGE_SMOOTH) return (int)v;
    /* Shapes: a bright disc, a dark rectangle, a thin bright cross. */
    long shapes = -1;
    const long cx = (long)w / 3, cy = (long)h / 3, r = (w < h ? w : h) / 5 + 1;
    if ((x - cx) * (x - cx) + (y - cy) * (y - cy) <= r * r) shapes = 250;
    if (x >= (2 * w) / 3 - w / 8 && x < (2 * w) / 3 + w / 8 && y >= (3 * h) / 5 && y < (3 * h) / 5 + h / 4) shapes = 10;
    if (x == (3 * w) / 4 || y == h / 6) shapes = 200;
    if (kind == MG_IMAGE_SHAPES) return shapes >= 0 ? (int)shapes : 128;
    if (shapes >= 0) v = (v + 3 * shapes) / 4;
    /* Mixed also gets a fine checkerboard texture in one quadrant. */
    if (x < w / 2 && y >= h / 2 && ((x / 2 + y / 2) & 1)) v += 30;
    return (int)(v > 255 ? 255 : v);
}

void mg_image_generate(double *img, const mg_block *b, mg_image_kind kind)
{
    const int nx = b->nx, ny = b->ny;
    for (int j = 0; j <= ny + 1; j++)
        for (int i = 0; i <= nx + 1; i++) {
            double v = 0.0;
            if (i >= 1 && i <= nx && j >= 1 && j <= ny) v = pixel(kind, b->x0 + i - 1, b->y0 + j - 1, b->gnx, b->gny);
            img[MG_IDX(nx, i, j)] = v;
        }
}

double mg_image_maxdiff(const double *a, const double *b, int nx, int ny)
{
    double m = 0.0;
    for (int j = 1; j <= ny; j++)
        for (int i = 1; i <= nx; i++) {
            const double d = fabs(a[MG_IDX(nx, i, j)] - b[MG_IDX(nx, i, j)]);
            if (d > m || d != d) m = d;
        }
    return m;
}

void mg_image_to_u8(const double *img, unsigned char *px, int nx, int ny)
{
    for (int j = 1; j <= ny; j++)
        for (int i = 1; i <= nx; i++) {
            const double v = img[MG_IDX(nx, i, j)];
            /* NaN and below 0 give 0. */
            px[(size_t)(j - 1) * (size_t)nx + (size_t)(i - 1)] = (unsigned char)(v >= 255.0 ? 255
                                                                                 : v > 0.0  ? (int)(v + 0.5)
                                                                                            : 0);
        }
}

void mg_image_from_u8(const unsigned char *px, double *img, int nx, int ny)
{
    for (int j = 1; j <= ny; j++)
        for (int i = 1; i <= nx; i++) img[MG_IDX(nx, i, j)] = px[(size_t)(j - 1) * (size_t)nx + (size_t)(i - 1)];
}
