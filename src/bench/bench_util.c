#define _POSIX_C_SOURCE 200809L
#include "bench_util.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int mg_parse_long_list(const char *s, long *out, int max, int *n, long min)
{
    *n = 0;
    const char *p = s;
    while (*p) {
        char *end;
        errno = 0;
        long v = strtol(p, &end, 10);
        if (end == p || errno || v < min || v > INT_MAX || (*end != ',' && *end != '\0') || *n >= max) return -1;
        out[(*n)++] = v;
        p = *end ? end + 1 : end;
    }
    return *n > 0 ? 0 : -1;
}

int mg_parse_bytes(const char *s, size_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (end == s || errno || *s == '-') return -1;
    if (*end == 'k' || *end == 'K')
        v <<= 10, end++;
    else if (*end == 'm' || *end == 'M')
        v <<= 20, end++;
    else if (*end == 'g' || *end == 'G')
        v <<= 30, end++;
    if (*end != '\0' || v == 0) return -1;
    *out = (size_t)v;
    return 0;
}

int mg_parse_names(mg_bench *b, const char *what, const char *list, const char *const *names, int nnames, int *chosen)
{
    char *copy = strdup(list), *save = NULL;
    if (!copy) {
        mg_bench_error(b, "out of memory reading the %s list", what);
        return -1;
    }
    int n = 0, seen[16] = {0};
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        int k = 0;
        while (k < nnames && strcmp(names[k], tok) != 0) k++;
        if (k == nnames) {
            char known[256] = "";
            for (int i = 0; i < nnames; i++) {
                strcat(known, i ? ", " : "");
                strcat(known, names[i]);
            }
            mg_bench_error(b, "unknown %s '%s' (known: %s)", what, tok, known);
            free(copy);
            return -1;
        }
        if (!seen[k]) chosen[n++] = k;
        seen[k] = 1;
    }
    free(copy);
    if (n == 0) mg_bench_error(b, "empty %s list '%s'", what, list);
    return n ? n : -1;
}

long long mg_gcd(long long a, long long b)
{
    while (b) {
        long long t = a % b;
        a = b;
        b = t;
    }
    return a;
}

int mg_sizing_unit(const mg_layout_params *p, long *unit, long long *unit_bytes, char *err, size_t errlen)
{
    mg_layout_info L;
    if (err && errlen) err[0] = '\0';
    int rc = mg_layout_check(p, 0, &L, err, errlen);
    if (rc) return rc;
    *unit = L.n_unit;
    if (L.elem_size > 0) {
        *unit_bytes = (long long)L.n_unit * L.elem_size;
        return MG_LAYOUT_OK;
    }
    /* Mixed element types: the data bytes of one unit. */
    mg_layout_info L1;
    rc = mg_layout_check(p, L.n_unit < L.n_min ? L.n_min : L.n_unit, &L1, err, errlen);
    if (!rc) *unit_bytes = (long long)L1.data_size;
    return rc;
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
