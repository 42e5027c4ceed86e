/* Stencil applications: a 2D CFD model solved by Jacobi iteration.
 *
 * Model: steady, incompressible, irrotational (potential) flow of a fluid through a
 * square cavity. Fluid enters through an inlet in the bottom wall and leaves
 * through an outlet in the right wall. The flow is described by its stream function
 * psi(x, y): the velocity is u = dpsi/dy, v = -dpsi/dx, and lines of constant psi are
 * streamlines. Irrotational flow means the vorticity -laplace(psi) vanishes, so psi
 * solves the Laplace equation  d2psi/dx2 + d2psi/dy2 = 0  inside the cavity.
 *
 * Boundary conditions (Dirichlet, on the ring of cells just outside the gnx x gny
 * grid, i.e. at global x = -1, x = gnx, y = -1, y = gny): a solid wall is a
 * streamline, so psi is constant along each stretch of wall; across an opening psi
 * changes by the volume flux that passes through it. With total flux `flow`:
 *   - bottom wall (y = -1): psi = 0 left of the inlet, rises linearly across the
 *     inlet, psi = flow right of it (uniform inflow);
 *   - right wall (x = gnx): psi = flow below the outlet, falls linearly across the
 *     outlet, psi = 0 above it (uniform outflow);
 *   - left wall and top wall: psi = 0.
 * The values agree at the corners, so the boundary is continuous.
 *
 * Discretisation: five-point Laplacian on a uniform grid; one Jacobi sweep sets
 * every interior cell to the mean of its four neighbours in the previous iterate.
 */
#include "stencil.h"

mg_cavity mg_cavity_default(int gnx, int gny)
{
    mg_cavity c;
    c.inlet_w = gnx / 3 > 0 ? gnx / 3 : 1;
    c.inlet_x0 = (gnx - c.inlet_w) / 2;
    c.outlet_w = gny / 3 > 0 ? gny / 3 : 1;
    c.outlet_y0 = (gny - c.outlet_w) / 2;
    c.flow = 1.0;
    return c;
}

/* Fraction of an opening [o0, o0 + w) passed at coordinate t: 0 before it, 1 after,
 * linear in between (cell t of the opening has passed (t - o0 + 1) / (w + 1)). */
static double ramp(int t, int o0, int w)
{
    if (t < o0) return 0.0;
    if (t >= o0 + w) return 1.0;
    return (double)(t - o0 + 1) / (double)(w + 1);
}

double mg_cavity_psi(const mg_cavity *c, int gnx, int gny, int gx, int gy)
{
    if (gy == -1) return c->flow * ramp(gx, c->inlet_x0, c->inlet_w); /* bottom: inlet */
    if (gx == gnx) {                                                  /* right: outlet */
        /* Flow upwards along the right wall: psi falls from flow to 0 across the outlet. */
        return c->flow * (1.0 - ramp(gy, c->outlet_y0, c->outlet_w));
    }
    (void)gny;
    return 0.0; /* left wall, top wall */
}

void mg_jacobi_init(double *psi, const mg_block *b, mg_boundary_fn f, void *ctx)
{
    const int nx = b->nx, ny = b->ny;
    for (int j = 0; j <= ny + 1; j++) {
        const int gy = b->y0 + j - 1;
        for (int i = 0; i <= nx + 1; i++) {
            const int gx = b->x0 + i - 1;
            const int outside = gx < 0 || gx >= b->gnx || gy < 0 || gy >= b->gny;
            /* Only the one-cell ring around the global grid is boundary. */
            psi[MG_IDX(nx, i, j)] =
                outside && gx >= -1 && gx <= b->gnx && gy >= -1 && gy <= b->gny ? f(gx, gy, ctx) : 0.0;
        }
    }
}

typedef struct {
    const mg_cavity *c;
    int gnx, gny;
} cavity_ctx;

static double cavity_fn(int gx, int gy, void *ctx)
{
    const cavity_ctx *k = ctx;
    return mg_cavity_psi(k->c, k->gnx, k->gny, gx, gy);
}

void mg_jacobi_init_cavity(double *psi, const mg_block *b, const mg_cavity *c)
{
    cavity_ctx k = {c, b->gnx, b->gny};
    mg_jacobi_init(psi, b, cavity_fn, &k);
}

void mg_jacobi_step(const double *in, double *out, int nx, int ny)
{
    for (int j = 1; j <= ny; j++) {
        const double *c = in + MG_IDX(nx, 0, j);
        const double *up = in + MG_IDX(nx, 0, j - 1), *dn = in + MG_IDX(nx, 0, j + 1);
        double *o = out + MG_IDX(nx, 0, j);
        for (int i = 1; i <= nx; i++) {
            /* Fixed order: north (row above), south, west, east. */
            o[i] = 0.25 * (((up[i] + dn[i]) + c[i - 1]) + c[i + 1]);
        }
    }
}

double mg_jacobi_diff2(const double *a, const double *b, int nx, int ny)
{
    double sum = 0.0;
    for (int j = 1; j <= ny; j++) {
        for (int i = 1; i <= nx; i++) {
            const double d = b[MG_IDX(nx, i, j)] - a[MG_IDX(nx, i, j)];
            sum += d * d;
        }
    }
    return sum;
}
