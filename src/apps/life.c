/* Stencil applications: Conway's Game of Life.
 *
 * Model: a periodic (toroidal) grid of cells, each dead (0) or alive (1). In one
 * generation every cell counts its eight neighbours (including the diagonal ones,
 * so the halo corners matter); a dead cell with exactly 3 live neighbours is born,
 * a live cell with 2 or 3 survives, every other cell is dead (rule B3/S23).
 * The neighbour count is an integer sum, exact in any order.
 */
#include "stencil.h"

#include <stdint.h>

void mg_life_step(const unsigned char *in, unsigned char *out, int nx, int ny)
{
    for (int j = 1; j <= ny; j++) {
        const unsigned char *c = in + MG_IDX(nx, 0, j);
        const unsigned char *up = in + MG_IDX(nx, 0, j - 1), *dn = in + MG_IDX(nx, 0, j + 1);
        unsigned char *o = out + MG_IDX(nx, 0, j);
        for (int i = 1; i <= nx; i++) {
            const int n = up[i - 1] + up[i] + up[i + 1] + c[i - 1] + c[i + 1] + dn[i - 1] + dn[i] + dn[i + 1];
            o[i] = (unsigned char)(n == 3 || (n == 2 && c[i]));
        }
    }
}

void mg_life_wrap_halo(unsigned char *g, int nx, int ny)
{
    /* Left and right columns of the interior rows, then whole rows (with their
     * halo columns, which gives the corners). */
    for (int j = 1; j <= ny; j++) {
        g[MG_IDX(nx, 0, j)] = g[MG_IDX(nx, nx, j)];
        g[MG_IDX(nx, nx + 1, j)] = g[MG_IDX(nx, 1, j)];
    }
    for (int i = 0; i <= nx + 1; i++) {
        g[MG_IDX(nx, i, 0)] = g[MG_IDX(nx, i, ny)];
        g[MG_IDX(nx, i, ny + 1)] = g[MG_IDX(nx, i, 1)];
    }
}

static int wrap(int v, int n)
{
    v %= n;
    return v < 0 ? v + n : v;
}

static void set_global(unsigned char *g, const mg_block *b, int gx, int gy)
{
    gx = wrap(gx, b->gnx);
    gy = wrap(gy, b->gny);
    const int i = gx - b->x0 + 1, j = gy - b->y0 + 1;
    if (i >= 1 && i <= b->nx && j >= 1 && j <= b->ny) g[MG_IDX(b->nx, i, j)] = 1;
}

int mg_life_place(unsigned char *g, const mg_block *b, mg_life_pattern p, int px, int py)
{
    static const int glider[][2] = {{1, 0}, {2, 1}, {0, 2}, {1, 2}, {2, 2}};
    static const int blinker[][2] = {{0, 1}, {1, 1}, {2, 1}};
    static const int block[][2] = {{0, 0}, {1, 0}, {0, 1}, {1, 1}};
    const int(*cells)[2];
    int n;
    switch (p) {
    case MG_LIFE_GLIDER: cells = glider, n = 5; break;
    case MG_LIFE_BLINKER: cells = blinker, n = 3; break;
    case MG_LIFE_BLOCK: cells = block, n = 4; break;
    default: return -1;
    }
    for (int k = 0; k < n; k++) set_global(g, b, px + cells[k][0], py + cells[k][1]);
    return 0;
}

/* A 32-bit integer hash (lowbias32 by C. Wellons). */
static uint32_t hash32(uint32_t x)
{
    x ^= x >> 16;
    x *= 0x7feb352dU;
    x ^= x >> 15;
    x *= 0x846ca68bU;
    x ^= x >> 16;
    return x;
}

void mg_life_random(unsigned char *g, const mg_block *b, double density, unsigned seed)
{
    const double lim = density <= 0.0 ? 0.0 : density >= 1.0 ? 4294967296.0 : density * 4294967296.0;
    for (int j = 0; j <= b->ny + 1; j++) {
        for (int i = 0; i <= b->nx + 1; i++) {
            unsigned char v = 0;
            if (i >= 1 && i <= b->nx && j >= 1 && j <= b->ny) {
                const uint32_t gx = (uint32_t)(b->x0 + i - 1), gy = (uint32_t)(b->y0 + j - 1);
                const uint32_t h = hash32(hash32(hash32((uint32_t)seed) ^ gx) ^ (gy * 0x9e3779b9U));
                v = (double)h < lim;
            }
            g[MG_IDX(b->nx, i, j)] = v;
        }
    }
}

long mg_life_count(const unsigned char *g, int nx, int ny)
{
    long n = 0;
    for (int j = 1; j <= ny; j++)
        for (int i = 1; i <= nx; i++) n += g[MG_IDX(nx, i, j)];
    return n;
}
