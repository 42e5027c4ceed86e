/* Helpers shared by the datatype drivers (mg_dtbench, mg_ddtbench): option
 * lists, the sizing unit of a layout, data patterns and aligned buffers. */
#ifndef MG_BENCH_UTIL_H
#define MG_BENCH_UTIL_H

#include "layouts.h"
#include "mg_bench.h"

#include <stddef.h>

/* Byte that marks memory nobody may write; mg_pattern_byte() never returns it. */
#define MG_BENCH_GUARD 0xA5

/* Comma-separated integers in [min, INT_MAX], at most max of them. */
int mg_parse_long_list(const char *s, long *out, int max, int *n, long min);

/* A byte count > 0 with an optional k/m/g suffix (KiB/MiB/GiB). */
int mg_parse_bytes(const char *s, size_t *out);

/* Comma-separated names out of names[0..nnames-1] (nnames <= 16); chosen gets
 * their indices in order, duplicates dropped. Returns the count, or -1 after
 * printing the error (rank 0) that names the bad entry and the known names. */
int mg_parse_names(mg_bench *b, const char *what, const char *list, const char *const *names, int nnames, int *chosen);

long long mg_gcd(long long a, long long b);

/* For parameters with A set: n must be a multiple of *unit elements, which hold
 * *unit_bytes data bytes (for mixed element types, those of one whole unit).
 * Returns the catalog's code and message if the layout is invalid whatever n is. */
int mg_sizing_unit(const mg_layout_params *p, long *unit, long long *unit_bytes, char *err, size_t errlen);

/* A position-dependent byte for stream position i; different seeds give
 * different sequences. Never MG_BENCH_GUARD. */
unsigned char mg_pattern_byte(unsigned seed, size_t i);
/* p[i] = mg_pattern_byte(0, i). */
void mg_fill_pattern(unsigned char *p, size_t len);

/* Index of the first differing byte, or -1. */
long long mg_first_diff(const unsigned char *a, const unsigned char *b, size_t len);

/* 64-byte aligned, at least 64 bytes; NULL on failure; free() releases it. */
void *mg_alloc64(size_t len);

#endif
