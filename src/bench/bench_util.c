#define _POSIX_C_SOURCE 200809L
#include "bench_util.h"

#include <limits.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int mg_each_spec(const char *list, int (*add)(void *ctx, const char *spec), void *ctx)
{
    char *copy = strdup(list), *save = NULL;
    if (!copy) return -1;
    int n = 0;
    for (char *tok = strtok_r(copy, ";", &save); tok; tok = strtok_r(NULL, ";", &save)) {
        tok += strspn(tok, " \t\n\r");
        for (size_t l = strlen(tok); l > 0 && strchr(" \t\n\r", tok[l - 1]); l--) tok[l - 1] = '\0';
        if (!*tok) continue;
        if (add(ctx, tok) != 0) {
            free(copy);
            return -1;
        }
        n++;
    }
    free(copy);
    return n;
}

int mg_layout_at_A(const mg_layout_params *base, long A, mg_layout_params *p, char *err, size_t errlen)
{
    *p = *base;
    if (!(mg_layouts_get(base->kind)->params & MG_LAYOUT_BIT(MG_LAYOUT_P_A))) return MG_LAYOUT_OK;
    return mg_layout_params_set(p, MG_LAYOUT_P_A, A, err, errlen);
}

void mg_unit_at(const mg_layout_params *base, long A, mg_unit *u)
{
    mg_layout_params p;
    mg_layout_info L;
    u->err[0] = '\0';
    u->rc = mg_layout_at_A(base, A, &p, u->err, sizeof u->err);
    if (!u->rc) u->rc = mg_layout_check(&p, 0, &L, u->err, sizeof u->err);
    if (u->rc) return;
    u->unit = L.n_unit;
    if (L.elem_size > 0) {
        u->unit_bytes = (long long)L.n_unit * L.elem_size;
        return;
    }
    /* Mixed element types: the data bytes of one unit. */
    mg_layout_info L1;
    u->rc = mg_layout_check(&p, L.n_unit < L.n_min ? L.n_min : L.n_unit, &L1, u->err, sizeof u->err);
    if (!u->rc) u->unit_bytes = (long long)L1.data_size;
}

int mg_unit_somewhere(const mg_layout_params *base, const long *A, int nA, mg_unit *u)
{
    for (int a = 0; a < nA; a++) {
        mg_unit_at(base, A[a], u);
        if (u->rc == MG_LAYOUT_OK) return 0;
    }
    return -1;
}

int mg_desc_complete(mg_layout_params *base, int basic, const long *A, int nA, mg_unit *u)
{
    const unsigned type = MG_LAYOUT_BIT(MG_LAYOUT_P_TYPE);
    if ((mg_layouts_get(base->kind)->params & type) && !(base->given & type))
        mg_layout_params_set(base, MG_LAYOUT_P_TYPE, basic, NULL, 0);
    return mg_unit_somewhere(base, A, nA, u);
}

static long long gcd(long long a, long long b)
{
    while (b) {
        long long t = a % b;
        a = b;
        b = t;
    }
    return a;
}

int mg_common_unit(const mg_unit *units, int n, const int *in, long long *bytes, int *nvalid)
{
    long long cb = 1;
    int overflow = 0, valid = 0;
    for (int i = 0; i < n; i++) {
        if (units[i].rc || (in && !in[i])) continue;
        valid++;
        long long ub = units[i].unit_bytes;
        if (__builtin_mul_overflow(cb / gcd(cb, ub), ub, &cb)) overflow = 1;
    }
    *bytes = cb;
    if (nvalid) *nvalid = valid;
    return overflow ? -1 : 0;
}

int mg_sizing_n(const mg_unit *u, long long common, size_t m, long long *units, long *n)
{
    long long per = common / u->unit_bytes, elems; /* unit_bytes divides common */
    *units = ((long long)m + common / 2) / common;
    if (*units == 0) return MG_SIZING_TOO_SMALL;
    if (__builtin_mul_overflow(*units, per, &elems) || __builtin_mul_overflow(elems, (long long)u->unit, &elems) ||
        elems > INT_MAX)
        return MG_SIZING_TOO_LARGE;
    *n = (long)elems;
    return MG_SIZING_OK;
}

unsigned char mg_pattern_byte(unsigned seed, size_t i)
{
    uint32_t h = (uint32_t)(i * 2654435761u) ^ (uint32_t)(i >> 7) ^ (uint32_t)(seed * 2654435769u);
    unsigned v = (h >> 11) % 255u;
    return (unsigned char)(v >= MG_BENCH_GUARD ? v + 1 : v);
}

void mg_fill_pattern(unsigned char *p, size_t len)
{
    for (size_t i = 0; i < len; i++) p[i] = mg_pattern_byte(0, i);
}

long long mg_first_diff(const unsigned char *a, const unsigned char *b, size_t len)
{
    const size_t chunk = 4096;
    for (size_t off = 0; off < len; off += chunk) {
        size_t l = len - off < chunk ? len - off : chunk;
        if (memcmp(a + off, b + off, l) != 0)
            for (size_t i = off; i < off + l; i++)
                if (a[i] != b[i]) return (long long)i;
    }
    return -1;
}

void *mg_alloc64(size_t len)
{
    void *p = NULL;
    if (posix_memalign(&p, 64, len ? len : 64) != 0) return NULL;
    return p;
}

int mg_bench_dt_form(int *form, char *err, size_t errlen)
{
    const char *name = getenv("MPIGUIDE_DT_FORM");
    *form = MG_DT_FORM_AUTO;
    if (name && *name && mg_dt_form_parse(name, form) != MG_DT_SUCCESS) {
        snprintf(err, errlen, "MPIGUIDE_DT_FORM=%s: expected auto, vector, resized, list or copies", name);
        return -1;
    }
    return 0;
}
