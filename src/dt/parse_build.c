/* mg_dt_parse, second half: the checks of a constructor term's values against
 * what the MPI standard makes erroneous, and the constructor calls (the MPI-4
 * `_c` constructors for values beyond int where the stack has them).
 * The grammar is in parse.c. */
#include "parse.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void nomem(parser *p) { mg__parse_fail(p, MG_DT_ERR_NOMEM, p->pos, "out of memory"); }

/* ---------------------------------------------------------------- checks */

/* Lists that give one entry per block / dimension must have equal lengths.
 * The list written first is the reference; the first other list that differs
 * is reported at its keyword. */
static int check_lengths(parser *p, const ctorspec *c, const kwval *kv, const int *idx, int n)
{
    int ref = -1;
    for (int i = 0; i < n; i++)
        if (kv[idx[i]].seen && (ref < 0 || kv[idx[i]].kpos < kv[ref].kpos)) ref = idx[i];
    if (ref < 0) return 0;
    int bad = -1;
    for (int i = 0; i < n; i++) {
        int j = idx[i];
        if (!kv[j].seen || j == ref || kv[j].n == kv[ref].n) continue;
        if (bad < 0 || kv[j].kpos < kv[bad].kpos) bad = j;
    }
    if (bad < 0) return 0;
    mg__parse_fail(p, MG_DT_ERR_PARSE, kv[bad].kpos, "'%s' has %zu entries but '%s' has %zu", c->kw[bad].name,
                   kv[bad].n, c->kw[ref].name, kv[ref].n);
    return -1;
}

/* kv[k] is the first list of a subarray or darray: ndims is its length. */
static int check_ndims(parser *p, const ctorspec *c, const kwval *kv, int k)
{
    if (kv[k].n > 0) return 0;
    mg__parse_fail(p, MG_DT_ERR_PARSE, kv[k].vpos, "%s needs at least one dimension ('%s' is empty)", c->name,
                   c->kw[k].name);
    return -1;
}

static int check_count(parser *p, const ctorspec *c, const kwval *kv)
{
    if (kv->n <= INT_MAX) return 0;
    mg__parse_fail(p, MG_DT_ERR_PARSE, kv->vpos, "%s: more than INT_MAX entries", c->name);
    return -1;
}

typedef struct {
    MPI_Count size, lb, extent, tlb, textent;
} tinfo;

static double dabs(double x) { return x < 0 ? -x : x; }

static int get_info(parser *p, MPI_Datatype t, size_t at, tinfo *ti)
{
    if (MPI_Type_size_x(t, &ti->size) != MPI_SUCCESS || MPI_Type_get_extent_x(t, &ti->lb, &ti->extent) != MPI_SUCCESS ||
        MPI_Type_get_true_extent_x(t, &ti->tlb, &ti->textent) != MPI_SUCCESS) {
        mg__parse_fail(p, MG_DT_ERR_MPI, at, "querying the size and extent of a type failed");
        return -1;
    }
    /* A type without data has no true bounds; some libraries report garbage. */
    if (ti->size == 0) ti->tlb = ti->textent = 0;
    return 0;
}

/* Bytes around the origin that the old type itself may reach. */
static double own_span(const tinfo *t)
{
    return dabs((double)t->lb) + dabs((double)t->extent) + dabs((double)t->tlb) + dabs((double)t->textent);
}

static double max_abs(const kwval *kv)
{
    double m = 0;
    for (size_t i = 0; i < kv->n; i++)
        if (dabs((double)kv->items[i]) > m) m = dabs((double)kv->items[i]);
    return m;
}
static double sum_items(const kwval *kv)
{
    double s = 0;
    for (size_t i = 0; i < kv->n; i++) s += (double)kv->items[i];
    return s;
}
static double prod_items(const kwval *kv)
{
    double s = 1;
    for (size_t i = 0; i < kv->n; i++) s *= (double)kv->items[i];
    return s;
}

/* A conservative bound on the size and on the bytes spanned by the new type,
 * computed in floating point so that it cannot overflow itself. */
static int check_bounds(parser *p, const ctorspec *c, size_t cpos, const kwval *kv, MPI_Datatype old)
{
    tinfo o = {0, 0, 0, 0, 0};
    double size = 0, span = 0;
    if (c->id == C_STRUCT) {
        const kwval *bl = &kv[0], *dis = &kv[1], *ty = &kv[2];
        for (size_t i = 0; i < ty->n; i++) {
            tinfo t;
            if (get_info(p, ty->types[i], ty->at[i], &t) != 0) return -1;
            double b = bl->seen ? (double)bl->items[i] : 1.0;
            double s = dabs((double)dis->items[i]) + b * dabs((double)t.extent) + own_span(&t);
            size += b * (double)t.size;
            if (s > span) span = s;
        }
    } else {
        if (get_info(p, old, cpos, &o) != 0) return -1;
        double e = dabs((double)o.extent), s = (double)o.size, own = own_span(&o);
        switch (c->id) {
        case C_CONTIG:
            size = (double)kv[0].v * s;
            span = (double)kv[0].v * e + own;
            break;
        case C_VECTOR:
            size = (double)kv[0].v * (double)kv[1].v * s;
            span = ((double)kv[0].v * dabs((double)kv[2].v) + (double)kv[1].v) * e + own;
            break;
        case C_HVECTOR:
            size = (double)kv[0].v * (double)kv[1].v * s;
            span = (double)kv[0].v * dabs((double)kv[2].v) + (double)kv[1].v * e + own;
            break;
        case C_INDEXED:
            size = sum_items(&kv[0]) * s;
            span = (max_abs(&kv[1]) + max_abs(&kv[0])) * e + own;
            break;
        case C_HINDEXED:
            size = sum_items(&kv[0]) * s;
            span = max_abs(&kv[1]) + max_abs(&kv[0]) * e + own;
            break;
        case C_INDEXED_BLOCK:
            size = (double)kv[1].n * (double)kv[0].v * s;
            span = (max_abs(&kv[1]) + (double)kv[0].v) * e + own;
            break;
        case C_HINDEXED_BLOCK:
            size = (double)kv[1].n * (double)kv[0].v * s;
            span = max_abs(&kv[1]) + (double)kv[0].v * e + own;
            break;
        case C_RESIZED:
            size = s;
            span = dabs((double)kv[0].v) + dabs((double)kv[1].v) + own;
            break;
        case C_SUBARRAY:
            size = prod_items(&kv[1]) * s;
            span = prod_items(&kv[0]) * e + own;
            break;
        case C_DARRAY:
            size = prod_items(&kv[2]) * s;
            span = prod_items(&kv[2]) * e + own;
            break;
        default: return 0;
        }
    }
    if (size > MG_PARSE_MAX_BYTES || span > MG_PARSE_MAX_BYTES) {
        mg__parse_fail(p, MG_DT_ERR_PARSE, cpos, "%s is too large: its size or extent would exceed 2^62 bytes",
                       c->name);
        return -1;
    }
    return 0;
}

static int check_subarray(parser *p, const kwval *kv)
{
    const kwval *sz = &kv[0], *sub = &kv[1], *st = &kv[2];
    for (size_t i = 0; i < sz->n; i++) {
        if (sub->items[i] > sz->items[i]) {
            mg__parse_fail(p, MG_DT_ERR_PARSE, sub->at[i], "subsizes[%zu] = %lld is larger than sizes[%zu] = %lld", i,
                           (long long)sub->items[i], i, (long long)sz->items[i]);
            return -1;
        }
        if (st->items[i] > sz->items[i] - sub->items[i]) {
            mg__parse_fail(p, MG_DT_ERR_PARSE, st->at[i],
                           "starts[%zu] = %lld plus subsizes[%zu] = %lld exceeds sizes[%zu] = %lld", i,
                           (long long)st->items[i], i, (long long)sub->items[i], i, (long long)sz->items[i]);
            return -1;
        }
    }
    return 0;
}

static int check_darray(parser *p, const kwval *kv)
{
    const kwval *size = &kv[0], *rank = &kv[1], *gs = &kv[2], *dist = &kv[3], *dargs = &kv[4], *ps = &kv[5];
    if (rank->v >= size->v) {
        mg__parse_fail(p, MG_DT_ERR_PARSE, rank->vpos, "rank %lld is not below size %lld", (long long)rank->v,
                       (long long)size->v);
        return -1;
    }
    int64_t prod = 1;
    for (size_t i = 0; i < ps->n; i++) {
        if (prod <= size->v) prod *= ps->items[i]; /* both <= INT_MAX: no overflow */
        if (dist->items[i] == MPI_DISTRIBUTE_NONE && ps->items[i] != 1) {
            mg__parse_fail(p, MG_DT_ERR_PARSE, ps->at[i],
                           "psizes[%zu] must be 1 for a dimension distributed as 'none', got %lld", i,
                           (long long)ps->items[i]);
            return -1;
        }
        if (dist->items[i] == MPI_DISTRIBUTE_BLOCK && dargs->items[i] != MPI_DISTRIBUTE_DFLT_DARG &&
            dargs->items[i] * ps->items[i] < gs->items[i]) {
            mg__parse_fail(p, MG_DT_ERR_PARSE, dargs->at[i],
                           "dargs[%zu] = %lld times psizes[%zu] = %lld does not cover gsizes[%zu] = %lld "
                           "(block distribution)",
                           i, (long long)dargs->items[i], i, (long long)ps->items[i], i, (long long)gs->items[i]);
            return -1;
        }
    }
    if (prod != size->v) {
        if (prod > size->v)
            mg__parse_fail(p, MG_DT_ERR_PARSE, ps->vpos, "the product of 'psizes' exceeds size %lld (it must equal it)",
                           (long long)size->v);
        else
            mg__parse_fail(p, MG_DT_ERR_PARSE, ps->vpos,
                           "the product of 'psizes' is %lld but size is %lld (they must be equal)", (long long)prod,
                           (long long)size->v);
        return -1;
    }
    return 0;
}

/* ---------------------------------------------------------------- building */

static void *xcalloc(parser *p, size_t n, size_t sz)
{
    void *r = calloc(n ? n : 1, sz);
    if (!r) nomem(p);
    return r;
}

static int *to_ints(parser *p, const kwval *kv)
{
    int *r = xcalloc(p, kv->n, sizeof *r);
    if (r)
        for (size_t i = 0; i < kv->n; i++) r[i] = (int)kv->items[i];
    return r;
}

static MPI_Aint *to_aints(parser *p, const kwval *kv)
{
    MPI_Aint *r = xcalloc(p, kv->n, sizeof *r);
    if (r)
        for (size_t i = 0; i < kv->n; i++) r[i] = (MPI_Aint)kv->items[i];
    return r;
}

int mg__parse_mpi_check(parser *p, int rc, size_t at, const char *fn)
{
    if (rc == MPI_SUCCESS) return 0;
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(rc, msg, &len) != MPI_SUCCESS) len = 0;
    if (len < 0 || len >= MPI_MAX_ERROR_STRING) len = 0;
    msg[len] = '\0';
    for (int i = 0; i < len; i++)
        if (msg[i] == '\n' || msg[i] == '\r') msg[i] = ' ';
    mg__parse_fail(p, MG_DT_ERR_MPI, at, "%s failed: %s", fn, len ? msg : "(no message)");
    return -1;
}

/* MPI_Type_create_f90_*: the library raises an error if no Fortran kind has
 * the precision and range asked for, which the text cannot know; it is asked
 * with errors returned (MPI-4 raises such errors on MPI_COMM_SELF, MPI-3 on
 * MPI_COMM_WORLD) and the error handlers are restored afterwards. */
static int f90(enum ctor_id id, const kwval *kv, MPI_Datatype *out, const char **fn)
{
    MPI_Errhandler self = MPI_ERRHANDLER_NULL, world = MPI_ERRHANDLER_NULL;
    MPI_Comm_get_errhandler(MPI_COMM_SELF, &self);
    MPI_Comm_get_errhandler(MPI_COMM_WORLD, &world);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rc;
    if (id == C_F90_INTEGER) {
        *fn = "MPI_Type_create_f90_integer";
        rc = MPI_Type_create_f90_integer((int)kv[0].v, out);
    } else if (id == C_F90_REAL) {
        *fn = "MPI_Type_create_f90_real";
        rc = MPI_Type_create_f90_real((int)kv[0].v, (int)kv[1].v, out);
    } else {
        *fn = "MPI_Type_create_f90_complex";
        rc = MPI_Type_create_f90_complex((int)kv[0].v, (int)kv[1].v, out);
    }
    if (self != MPI_ERRHANDLER_NULL) {
        MPI_Comm_set_errhandler(MPI_COMM_SELF, self);
        MPI_Errhandler_free(&self);
    }
    if (world != MPI_ERRHANDLER_NULL) {
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, world);
        MPI_Errhandler_free(&world);
    }
    return rc;
}

/* Whether a value that the `_c` constructor takes as an MPI_Count lies
 * beyond int (check_int let it through only where the stack has `_c`). */
static int beyond_int(const ctorspec *c, const kwval *kv)
{
    for (int k = 0; k < c->nkw; k++) {
        if (!c->kw[k].large || !kv[k].seen) continue;
        if (c->kw[k].kind == K_INT && (kv[k].v < INT_MIN || kv[k].v > INT_MAX)) return 1;
        if (c->kw[k].kind == K_INTS)
            for (size_t i = 0; i < kv[k].n; i++)
                if (kv[k].items[i] < INT_MIN || kv[k].items[i] > INT_MAX) return 1;
    }
    return 0;
}

#ifdef MG_HAVE_MPI_LARGE_COUNT
/* A list as MPI_Count, or all ones when the (optional) list was not given. */
static MPI_Count *to_counts(parser *p, const kwval *kv, size_t n)
{
    MPI_Count *r = xcalloc(p, n, sizeof *r);
    if (r)
        for (size_t i = 0; i < n; i++) r[i] = kv->seen ? (MPI_Count)kv->items[i] : 1;
    return r;
}

/* The MPI-4 `_c` constructor of c; values are checked. Returns the MPI code,
 * or -1 (with the error recorded) when memory ran out. */
static int build_c(parser *p, const ctorspec *c, kwval *kv, MPI_Datatype old, MPI_Datatype *out, const char **fn)
{
    int rc = -1;
    MPI_Count *c0 = NULL, *c1 = NULL, *c2 = NULL;
    int *i0 = NULL, *i1 = NULL, *i2 = NULL;
    switch (c->id) {
    case C_CONTIG:
        *fn = "MPI_Type_contiguous_c";
        rc = MPI_Type_contiguous_c(kv[0].v, old, out);
        break;
    case C_VECTOR:
        *fn = "MPI_Type_vector_c";
        rc = MPI_Type_vector_c(kv[0].v, kv[1].v, kv[2].v, old, out);
        break;
    case C_HVECTOR:
        *fn = "MPI_Type_create_hvector_c";
        rc = MPI_Type_create_hvector_c(kv[0].v, kv[1].v, kv[2].v, old, out);
        break;
    case C_INDEXED:
    case C_HINDEXED:
        *fn = c->id == C_INDEXED ? "MPI_Type_indexed_c" : "MPI_Type_create_hindexed_c";
        if (!(c0 = to_counts(p, &kv[0], kv[0].n)) || !(c1 = to_counts(p, &kv[1], kv[1].n))) break;
        rc = c->id == C_INDEXED ? MPI_Type_indexed_c((MPI_Count)kv[0].n, c0, c1, old, out)
                                : MPI_Type_create_hindexed_c((MPI_Count)kv[0].n, c0, c1, old, out);
        break;
    case C_INDEXED_BLOCK:
    case C_HINDEXED_BLOCK:
        *fn = c->id == C_INDEXED_BLOCK ? "MPI_Type_create_indexed_block_c" : "MPI_Type_create_hindexed_block_c";
        if (!(c1 = to_counts(p, &kv[1], kv[1].n))) break;
        rc = c->id == C_INDEXED_BLOCK ? MPI_Type_create_indexed_block_c((MPI_Count)kv[1].n, kv[0].v, c1, old, out)
                                      : MPI_Type_create_hindexed_block_c((MPI_Count)kv[1].n, kv[0].v, c1, old, out);
        break;
    case C_STRUCT: /* at least one member: build() takes the empty struct */
        *fn = "MPI_Type_create_struct_c";
        if (!(c0 = to_counts(p, &kv[0], kv[2].n)) || !(c1 = to_counts(p, &kv[1], kv[1].n))) break;
        rc = MPI_Type_create_struct_c((MPI_Count)kv[2].n, c0, c1, kv[2].types, out);
        break;
    case C_SUBARRAY:
        *fn = "MPI_Type_create_subarray_c";
        if (!(c0 = to_counts(p, &kv[0], kv[0].n)) || !(c1 = to_counts(p, &kv[1], kv[1].n)) ||
            !(c2 = to_counts(p, &kv[2], kv[2].n)))
            break;
        rc = MPI_Type_create_subarray_c((int)kv[0].n, c0, c1, c2, (int)kv[3].v, old, out);
        break;
    case C_DARRAY:
        *fn = "MPI_Type_create_darray_c";
        if (!(c0 = to_counts(p, &kv[2], kv[2].n)) || !(i0 = to_ints(p, &kv[3])) || !(i1 = to_ints(p, &kv[4])) ||
            !(i2 = to_ints(p, &kv[5])))
            break;
        rc = MPI_Type_create_darray_c((int)kv[0].v, (int)kv[1].v, (int)kv[2].n, c0, i0, i1, i2, (int)kv[6].v, old, out);
        break;
    default: /* no value of the other terms goes beyond int */
        mg__parse_fail(p, MG_DT_ERR_PARSE, p->pos, "internal error: %s has no large-count constructor", c->name);
        break;
    }
    free(c0);
    free(c1);
    free(c2);
    free(i0);
    free(i1);
    free(i2);
    return rc;
}
#endif

/* Call the MPI constructor; arguments are already checked. */
static int build(parser *p, const ctorspec *c, size_t cpos, kwval *kv, MPI_Datatype old, MPI_Datatype *out)
{
    int rc = MPI_SUCCESS, ret = -1;
    const char *fn = "";
    if (beyond_int(c, kv)) {
#ifdef MG_HAVE_MPI_LARGE_COUNT
        rc = build_c(p, c, kv, old, out, &fn);
        if (rc == -1) return -1;
        if (mg__parse_mpi_check(p, rc, cpos, fn) != 0) {
            *out = MPI_DATATYPE_NULL;
            return -1;
        }
        return 0;
#else
        mg__parse_fail(p, MG_DT_ERR_PARSE, cpos, "internal error: a value beyond int without large-count constructors");
        return -1;
#endif
    }
    int *i0 = NULL, *i1 = NULL, *i2 = NULL, *i3 = NULL;
    MPI_Aint *a0 = NULL;
    switch (c->id) {
    case C_CONTIG:
        fn = "MPI_Type_contiguous";
        rc = MPI_Type_contiguous((int)kv[0].v, old, out);
        break;
    case C_VECTOR:
        fn = "MPI_Type_vector";
        rc = MPI_Type_vector((int)kv[0].v, (int)kv[1].v, (int)kv[2].v, old, out);
        break;
    case C_HVECTOR:
        fn = "MPI_Type_create_hvector";
        rc = MPI_Type_create_hvector((int)kv[0].v, (int)kv[1].v, (MPI_Aint)kv[2].v, old, out);
        break;
    case C_INDEXED:
        fn = "MPI_Type_indexed";
        if (!(i0 = to_ints(p, &kv[0])) || !(i1 = to_ints(p, &kv[1]))) goto done;
        rc = MPI_Type_indexed((int)kv[0].n, i0, i1, old, out);
        break;
    case C_HINDEXED:
        fn = "MPI_Type_create_hindexed";
        if (!(i0 = to_ints(p, &kv[0])) || !(a0 = to_aints(p, &kv[1]))) goto done;
        rc = MPI_Type_create_hindexed((int)kv[0].n, i0, a0, old, out);
        break;
    case C_INDEXED_BLOCK:
        fn = "MPI_Type_create_indexed_block";
        if (!(i1 = to_ints(p, &kv[1]))) goto done;
        rc = MPI_Type_create_indexed_block((int)kv[1].n, (int)kv[0].v, i1, old, out);
        break;
    case C_HINDEXED_BLOCK:
        fn = "MPI_Type_create_hindexed_block";
        if (!(a0 = to_aints(p, &kv[1]))) goto done;
        rc = MPI_Type_create_hindexed_block((int)kv[1].n, (int)kv[0].v, a0, old, out);
        break;
    case C_STRUCT: {
        size_t n = kv[2].n;
        if (n == 0) {
            /* Open MPI crashes on MPI_Type_create_struct with count 0; a
             * contiguous type of none has the same (empty) typemap, lb 0
             * and extent 0. */
            fn = "MPI_Type_contiguous";
            rc = MPI_Type_contiguous(0, MPI_BYTE, out);
            break;
        }
        fn = "MPI_Type_create_struct";
        if (!(i0 = xcalloc(p, n, sizeof *i0)) || !(a0 = to_aints(p, &kv[1]))) goto done;
        for (size_t i = 0; i < n; i++) i0[i] = kv[0].seen ? (int)kv[0].items[i] : 1;
        rc = MPI_Type_create_struct((int)n, i0, a0, kv[2].types, out);
        break;
    }
    case C_RESIZED:
        fn = "MPI_Type_create_resized";
        rc = MPI_Type_create_resized(old, (MPI_Aint)kv[0].v, (MPI_Aint)kv[1].v, out);
        break;
    case C_SUBARRAY:
        fn = "MPI_Type_create_subarray";
        if (!(i0 = to_ints(p, &kv[0])) || !(i1 = to_ints(p, &kv[1])) || !(i2 = to_ints(p, &kv[2]))) goto done;
        rc = MPI_Type_create_subarray((int)kv[0].n, i0, i1, i2, (int)kv[3].v, old, out);
        break;
    case C_DARRAY:
        fn = "MPI_Type_create_darray";
        if (!(i0 = to_ints(p, &kv[2])) || !(i1 = to_ints(p, &kv[3])) || !(i2 = to_ints(p, &kv[4])) ||
            !(i3 = to_ints(p, &kv[5])))
            goto done;
        rc = MPI_Type_create_darray((int)kv[0].v, (int)kv[1].v, (int)kv[2].n, i0, i1, i2, i3, (int)kv[6].v, old, out);
        break;
    case C_DUP:
        fn = "MPI_Type_dup";
        rc = MPI_Type_dup(old, out);
        break;
    case C_F90_REAL:
    case C_F90_COMPLEX:
    case C_F90_INTEGER: rc = f90(c->id, kv, out, &fn); break;
    }
    if (mg__parse_mpi_check(p, rc, cpos, fn) != 0) {
        *out = MPI_DATATYPE_NULL;
        goto done;
    }
    ret = 0;
done:
    free(i0);
    free(i1);
    free(i2);
    free(i3);
    free(a0);
    return ret;
}

/* Semantic checks, then the constructor. */
int mg__parse_build(parser *p, const ctorspec *c, size_t cpos, kwval *kv, MPI_Datatype old, MPI_Datatype *out)
{
    static const int two[] = {0, 1}, three[] = {0, 1, 2}, four[] = {2, 3, 4, 5};
    switch (c->id) {
    case C_INDEXED:
    case C_HINDEXED:
        if (check_lengths(p, c, kv, two, 2) != 0 || check_count(p, c, &kv[0]) != 0) return -1;
        break;
    case C_INDEXED_BLOCK:
    case C_HINDEXED_BLOCK:
        if (check_count(p, c, &kv[1]) != 0) return -1;
        break;
    case C_STRUCT:
        if (check_lengths(p, c, kv, three, 3) != 0 || check_count(p, c, &kv[2]) != 0) return -1;
        break;
    case C_SUBARRAY:
        if (check_lengths(p, c, kv, three, 3) != 0 || check_ndims(p, c, kv, 0) != 0 || check_subarray(p, kv) != 0)
            return -1;
        break;
    case C_DARRAY:
        if (check_lengths(p, c, kv, four, 4) != 0 || check_ndims(p, c, kv, 2) != 0 || check_darray(p, kv) != 0)
            return -1;
        break;
    case C_F90_REAL:
    case C_F90_COMPLEX:
        if (kv[0].v == MPI_UNDEFINED && kv[1].v == MPI_UNDEFINED) {
            mg__parse_fail(p, MG_DT_ERR_PARSE, cpos, "%s needs p or r (both are undefined)", c->name);
            return -1;
        }
        return build(p, c, cpos, kv, old, out);
    case C_F90_INTEGER:
        if (kv[0].v == MPI_UNDEFINED) {
            mg__parse_fail(p, MG_DT_ERR_PARSE, kv[0].vpos, "%s needs r (it is undefined)", c->name);
            return -1;
        }
        return build(p, c, cpos, kv, old, out);
    default: break;
    }
    if (check_bounds(p, c, cpos, kv, old) != 0) return -1;
    return build(p, c, cpos, kv, old, out);
}
