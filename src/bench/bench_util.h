/* Helpers shared by the datatype drivers (mg_dtbench, mg_ddtbench): the sizing
 * of layout descriptions (n for about m data bytes, the same bytes for every
 * description compared), data patterns and aligned buffers. */
#ifndef MG_BENCH_UTIL_H
#define MG_BENCH_UTIL_H

#include "layouts.h"
#include "mpiguide/dt.h"

#include <stddef.h>

/* Byte that marks memory nobody may write; mg_pattern_byte() never returns it. */
#define MG_BENCH_GUARD 0xA5

/* ---- Layout lists --------------------------------------------------------- */

/* Calls add(ctx, spec) for each ';'-separated entry of a --layouts list, with
 * blanks trimmed at both ends; empty entries are skipped. Returns the number of
 * entries, or -1 as soon as add returns nonzero (add says why). */
int mg_each_spec(const char *list, int (*add)(void *ctx, const char *spec), void *ctx);

/* ---- The normalized types ------------------------------------------------- */

/* The form of the drivers' normalized types (for mg_dt_to_mpi_form):
 * MPIGUIDE_DT_FORM (auto, vector, resized, list or copies) forces one for
 * experiments; unset, MG_DT_FORM_AUTO, the engine's policy for the MPI
 * library running. Returns 0, or -1 with the reason in err. */
int mg_bench_dt_form(int *form, char *err, size_t errlen);

/* ---- Sizing -------------------------------------------------------------- */

/* A description at blocksize A: p = base with A set if the layout takes A
 * (a layout without A, such as contiguous, is the same at every A). */
int mg_layout_at_A(const mg_layout_params *base, long A, mg_layout_params *p, char *err, size_t errlen);

/* What n of a description must be a multiple of at one A. */
typedef struct {
    int rc;               /* MG_LAYOUT_OK, or the catalog's code: invalid at this A whatever n is */
    char err[512];        /* the catalog's message when rc != MG_LAYOUT_OK */
    long unit;            /* n must be a multiple of unit elements, */
    long long unit_bytes; /* which hold unit_bytes data bytes (of mixed types: those of one unit) */
} mg_unit;

void mg_unit_at(const mg_layout_params *base, long A, mg_unit *u);
/* 0 if the description is valid at one A of the list at least; else -1, and
 * u holds the catalog's message for the last A. */
int mg_unit_somewhere(const mg_layout_params *base, const long *A, int nA, mg_unit *u);
/* A description given without A, made complete: the element type `basic`
 * (--type) where the layout takes a type and the spec gives none; then, as
 * mg_unit_somewhere(), 0 if it is valid at one A of the list (a description
 * valid at none is a mistake in the spec). */
int mg_desc_complete(mg_layout_params *base, int basic, const long *A, int nA, mg_unit *u);

/* The common unit of descriptions compared at one A: the least common
 * multiple of unit_bytes over units[0..n-1] that are valid and, if `in` is not
 * NULL, have in[i] set (*nvalid of them). Returns 0, or -1 if it overflows. */
int mg_common_unit(const mg_unit *units, int n, const int *in, long long *bytes, int *nvalid);

enum { MG_SIZING_OK, MG_SIZING_TOO_SMALL, MG_SIZING_TOO_LARGE };
/* n of a description for m data bytes: the number of common units nearest to m
 * (*units, half up) times the elements of one common unit. Returns
 * MG_SIZING_TOO_SMALL if m is less than half a common unit, MG_SIZING_TOO_LARGE
 * if n would exceed INT_MAX, else MG_SIZING_OK. */
int mg_sizing_n(const mg_unit *u, long long common, size_t m, long long *units, long *n);

/* ---- Data ---------------------------------------------------------------- */

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
