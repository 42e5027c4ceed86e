/* The one parser of byte counts in mpiguide's C code: the drivers' --sizes and
 * memory options, and libmpiguide-tune's pool sizes (configuration file and
 * environment). Header-only and MPI-free, so that both libraries and every
 * driver use it without a dependency between them.
 *
 * Accepted: decimal digits, then optionally k, m or g (any case: KiB, MiB,
 * GiB), then optionally "iB" (after a suffix) or "B"; blanks around the whole.
 * "4096", "4096B", "1k", "64M", "64MiB", "2g" are sizes; "-1", "1.5k", "k",
 * "1kb x" and values above SIZE_MAX are not. Zero is a size: callers that need
 * a positive count say so themselves. */
#ifndef MG_SIZE_H
#define MG_SIZE_H

#include <ctype.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

/* 0 and *out = the byte count, or -1 (and *out unchanged). */
static inline int mg_parse_size(const char *s, size_t *out)
{
    while (isspace((unsigned char)*s)) s++;
    if (!isdigit((unsigned char)*s)) return -1;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno == ERANGE) return -1;
    unsigned long long mul = 1;
    switch (*end) {
    case 'k':
    case 'K': mul = 1ull << 10; break;
    case 'm':
    case 'M': mul = 1ull << 20; break;
    case 'g':
    case 'G': mul = 1ull << 30; break;
    default: break;
    }
    if (mul > 1) end++;
    if (mul > 1 && (end[0] == 'i' || end[0] == 'I') && (end[1] == 'b' || end[1] == 'B'))
        end += 2;
    else if (*end == 'b' || *end == 'B')
        end++;
    while (isspace((unsigned char)*end)) end++;
    if (*end || v > SIZE_MAX / mul) return -1;
    *out = (size_t)(v * mul);
    return 0;
}

#endif
