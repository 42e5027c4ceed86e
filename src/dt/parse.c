/* mg_dt_parse: build an MPI datatype from the notation of docs/dt-notation.md.
 *
 * A recursive-descent parser over
 *
 *   type  := basic | ctor ws* "(" args ")"
 *   args  := [ arg { "," arg } ]
 *   arg   := keyword ws* "=" value | type        (the old type, last argument)
 *   value := int | "[" [ item { "," item } ] "]" | word
 *   int   := ["-"] digit+                        (64-bit, decimal; no space after '-')
 *
 * with whitespace allowed between any two tokens. Each constructor term maps to
 * one MPI constructor call; every value is checked against the range of the MPI
 * parameter it becomes (int or MPI_Aint) and against the conditions the MPI
 * standard makes erroneous (negative counts, subarray/darray geometry, ...), so
 * that the MPI library is never handed arguments it would reject: with the
 * default error handler such a call would abort the program. A term whose type
 * would span more than 2^62 bytes is also rejected (MPI implementations
 * compute sizes and extents in MPI_Aint without checking for overflow).
 *
 * Ownership: the result is always a newly created, uncommitted derived datatype
 * that the caller frees with MPI_Type_free. A bare basic type ("int") yields
 * MPI_Type_dup of the predefined handle, so "the caller frees *out" holds for
 * every successful call. Every intermediate type (old types, struct member
 * types) is freed once the constructor that uses it has been called (MPI
 * constructors keep what they need), on success and on every error path.
 *
 * Errors: the first error found wins; errbuf gets one line "at N: message",
 * where N is the 0-based character offset into text. */
#include "mpiguide/dt.h"

#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Terms nested deeper than this are rejected (bounds the recursion). */
#define MG_PARSE_MAX_DEPTH 100
/* Sizes and spans beyond this many bytes are rejected. */
#define MG_PARSE_MAX_BYTES 4611686018427387904.0 /* 2^62 */
/* Identifiers quoted in messages are cut to this many characters. */
#define MG_PARSE_QUOTE 40

/* ---------------------------------------------------------------- tables */

enum kind {
    K_INT,      /* one integer, MPI int */
    K_AINT,     /* one integer, MPI_Aint */
    K_INTS,     /* list of MPI int */
    K_AINTS,    /* list of MPI_Aint */
    K_TYPES,    /* list of types */
    K_ORDER,    /* c | fortran */
    K_DISTRIBS, /* list of block | cyclic | none */
    K_DARGS     /* list of MPI int (positive) or default */
};

#define NOMIN INT64_MIN

typedef struct {
    const char *name;
    enum kind kind;
    int64_t min; /* smallest allowed value of the integer(s), NOMIN: any */
    int optional;
} kwspec;

/* clang-format off */
enum ctor_id {
    C_CONTIG, C_VECTOR, C_HVECTOR, C_INDEXED, C_HINDEXED, C_INDEXED_BLOCK,
    C_HINDEXED_BLOCK, C_STRUCT, C_RESIZED, C_SUBARRAY, C_DARRAY, C_DUP
};
/* clang-format on */

#define MAX_KW 7

typedef struct {
    const char *name;
    enum ctor_id id;
    int has_old; /* takes the old type as its last (positional) argument */
    int nkw;
    kwspec kw[MAX_KW];
} ctorspec;

/* Keyword order here is the MPI parameter order; the kw indices below rely on it. */
/* clang-format off */
static const ctorspec CTORS[] = {
    {"contig", C_CONTIG, 1, 1, {{"count", K_INT, 0, 0}}},
    {"vector", C_VECTOR, 1, 3,
     {{"count", K_INT, 0, 0}, {"block", K_INT, 0, 0}, {"stride", K_INT, NOMIN, 0}}},
    {"hvector", C_HVECTOR, 1, 3,
     {{"count", K_INT, 0, 0}, {"block", K_INT, 0, 0}, {"stride", K_AINT, NOMIN, 0}}},
    {"indexed", C_INDEXED, 1, 2, {{"blocks", K_INTS, 0, 0}, {"displs", K_INTS, NOMIN, 0}}},
    {"hindexed", C_HINDEXED, 1, 2, {{"blocks", K_INTS, 0, 0}, {"displs", K_AINTS, NOMIN, 0}}},
    {"indexed_block", C_INDEXED_BLOCK, 1, 2,
     {{"block", K_INT, 0, 0}, {"displs", K_INTS, NOMIN, 0}}},
    {"hindexed_block", C_HINDEXED_BLOCK, 1, 2,
     {{"block", K_INT, 0, 0}, {"displs", K_AINTS, NOMIN, 0}}},
    {"struct", C_STRUCT, 0, 3,
     {{"blocks", K_INTS, 0, 1}, {"displs", K_AINTS, NOMIN, 0}, {"types", K_TYPES, NOMIN, 0}}},
    {"resized", C_RESIZED, 1, 2, {{"lb", K_AINT, NOMIN, 0}, {"extent", K_AINT, NOMIN, 0}}},
    {"subarray", C_SUBARRAY, 1, 4,
     {{"sizes", K_INTS, 1, 0}, {"subsizes", K_INTS, 1, 0}, {"starts", K_INTS, 0, 0},
      {"order", K_ORDER, NOMIN, 0}}},
    {"darray", C_DARRAY, 1, 7,
     {{"size", K_INT, 1, 0}, {"rank", K_INT, 0, 0}, {"gsizes", K_INTS, 1, 0},
      {"distribs", K_DISTRIBS, NOMIN, 0}, {"dargs", K_DARGS, 1, 0}, {"psizes", K_INTS, 1, 0},
      {"order", K_ORDER, NOMIN, 0}}},
    {"dup", C_DUP, 1, 0, {{NULL, K_INT, 0, 0}}},
};
/* clang-format on */
#define NCTORS (sizeof CTORS / sizeof CTORS[0])

/* The basic types. Handles are looked up at run time: in some MPI libraries
 * they are not constant expressions. */
/* clang-format off */
#define MG_BASIC_TYPES(X)                                                                  \
    X("char", MPI_CHAR) X("signed_char", MPI_SIGNED_CHAR)                                  \
    X("unsigned_char", MPI_UNSIGNED_CHAR) X("byte", MPI_BYTE) X("short", MPI_SHORT)        \
    X("unsigned_short", MPI_UNSIGNED_SHORT) X("int", MPI_INT) X("unsigned", MPI_UNSIGNED)  \
    X("long", MPI_LONG) X("unsigned_long", MPI_UNSIGNED_LONG) X("long_long", MPI_LONG_LONG) \
    X("unsigned_long_long", MPI_UNSIGNED_LONG_LONG) X("float", MPI_FLOAT)                  \
    X("double", MPI_DOUBLE) X("long_double", MPI_LONG_DOUBLE) X("wchar", MPI_WCHAR)        \
    X("c_bool", MPI_C_BOOL) X("int8_t", MPI_INT8_T) X("int16_t", MPI_INT16_T)              \
    X("int32_t", MPI_INT32_T) X("int64_t", MPI_INT64_T) X("uint8_t", MPI_UINT8_T)          \
    X("uint16_t", MPI_UINT16_T) X("uint32_t", MPI_UINT32_T) X("uint64_t", MPI_UINT64_T)    \
    X("aint", MPI_AINT) X("offset", MPI_OFFSET) X("count", MPI_COUNT)                      \
    X("float_int", MPI_FLOAT_INT) X("double_int", MPI_DOUBLE_INT)                          \
    X("long_int", MPI_LONG_INT) X("2int", MPI_2INT) X("short_int", MPI_SHORT_INT)          \
    X("long_double_int", MPI_LONG_DOUBLE_INT)
/* clang-format on */

static int name_is(const char *s, size_t n, const char *name) { return strlen(name) == n && memcmp(s, name, n) == 0; }

static int basic_lookup(const char *s, size_t n, MPI_Datatype *out)
{
#define MG_BASIC_MATCH(name, handle) \
    if (name_is(s, n, name)) {       \
        *out = handle;               \
        return 1;                    \
    }
    MG_BASIC_TYPES(MG_BASIC_MATCH)
#undef MG_BASIC_MATCH
    return 0;
}

static const ctorspec *ctor_lookup(const char *s, size_t n)
{
    for (size_t i = 0; i < NCTORS; i++)
        if (name_is(s, n, CTORS[i].name)) return &CTORS[i];
    return NULL;
}

static int kw_lookup(const ctorspec *c, const char *s, size_t n)
{
    for (int i = 0; i < c->nkw; i++)
        if (name_is(s, n, c->kw[i].name)) return i;
    return -1;
}

/* ---------------------------------------------------------------- parser state */

typedef struct {
    const char *s;
    size_t pos;
    int depth;
    int err; /* MG_DT_SUCCESS until the first error */
    char *errbuf;
    size_t errlen;
} parser;

static void fail(parser *p, int code, size_t at, const char *fmt, ...)
{
    if (p->err) return; /* the first error wins */
    p->err = code;
    if (!p->errbuf || p->errlen == 0) return;
    int n = snprintf(p->errbuf, p->errlen, "at %zu: ", at);
    if (n < 0) {
        p->errbuf[0] = '\0';
        return;
    }
    if ((size_t)n >= p->errlen) return; /* already truncated */
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->errbuf + n, p->errlen - (size_t)n, fmt, ap);
    va_end(ap);
}

static void nomem(parser *p) { fail(p, MG_DT_ERR_NOMEM, p->pos, "out of memory"); }

static int is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }
static int is_digit(char c) { return c >= '0' && c <= '9'; }
static int is_ident(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || is_digit(c) || c == '_'; }

static size_t skip_ws_from(const parser *p, size_t at)
{
    while (is_space(p->s[at])) at++;
    return at;
}
static void skip_ws(parser *p) { p->pos = skip_ws_from(p, p->pos); }

static size_t ident_len(const parser *p, size_t at)
{
    size_t n = 0;
    while (is_ident(p->s[at + n])) n++;
    return n;
}

/* Quote-able form of an identifier: at most MG_PARSE_QUOTE characters. */
static int qlen(size_t n) { return n > MG_PARSE_QUOTE ? MG_PARSE_QUOTE : (int)n; }
static const char *qmore(size_t n) { return n > MG_PARSE_QUOTE ? "..." : ""; }

/* What stands at `at`, for "found ..." in messages; single line, no raw bytes. */
static const char *found(const parser *p, size_t at, char *buf, size_t len)
{
    char c = p->s[at];
    size_t n = ident_len(p, at);
    if (c == '\0')
        snprintf(buf, len, "end of input");
    else if (n > 0)
        snprintf(buf, len, "'%.*s%s'", qlen(n), p->s + at, qmore(n));
    else if ((unsigned char)c >= 0x20 && (unsigned char)c < 0x7f)
        snprintf(buf, len, "'%c'", c);
    else
        snprintf(buf, len, "byte 0x%02x", (unsigned)(unsigned char)c);
    return buf;
}

/* Consume character c (after whitespace) or fail with "expected 'c' <ctx>". */
static int expect(parser *p, char c, const char *ctx)
{
    skip_ws(p);
    if (p->s[p->pos] == c) {
        p->pos++;
        return 0;
    }
    char fb[64];
    fail(p, MG_DT_ERR_PARSE, p->pos, "expected '%c' %s, found %s", c, ctx, found(p, p->pos, fb, sizeof fb));
    return -1;
}

/* ---------------------------------------------------------------- values */

/* A keyword's value: a scalar, or a list of integers or types. */
typedef struct {
    int seen;
    size_t kpos; /* where the keyword starts */
    size_t vpos; /* where its value starts */
    int64_t v;   /* K_INT, K_AINT, K_ORDER */
    size_t n, cap;
    int64_t *items;
    size_t *at; /* position of each item */
    MPI_Datatype *types;
    unsigned char *owned; /* types[i] was created here and must be freed */
} kwval;

static void free_type(MPI_Datatype *t)
{
    if (*t != MPI_DATATYPE_NULL) MPI_Type_free(t);
    *t = MPI_DATATYPE_NULL;
}

static void kwval_free(kwval *kv)
{
    if (kv->types)
        for (size_t i = 0; i < kv->n; i++)
            if (kv->owned[i]) free_type(&kv->types[i]);
    free(kv->items);
    free(kv->at);
    free(kv->types);
    free(kv->owned);
    memset(kv, 0, sizeof *kv);
}

/* Make room for one more item. */
static int kwval_grow(parser *p, kwval *kv, int with_types)
{
    if (kv->n < kv->cap) return 0;
    size_t cap = kv->cap ? kv->cap * 2 : 8;
    if (cap > SIZE_MAX / sizeof(int64_t) || cap > SIZE_MAX / sizeof(MPI_Datatype) || cap > SIZE_MAX / sizeof(size_t)) {
        nomem(p);
        return -1;
    }
    int64_t *items = realloc(kv->items, cap * sizeof *items);
    if (items) kv->items = items;
    size_t *at = realloc(kv->at, cap * sizeof *at);
    if (at) kv->at = at;
    if (!items || !at) {
        nomem(p);
        return -1;
    }
    if (with_types) {
        MPI_Datatype *types = realloc(kv->types, cap * sizeof *types);
        if (types) kv->types = types;
        unsigned char *owned = realloc(kv->owned, cap * sizeof *owned);
        if (owned) kv->owned = owned;
        if (!types || !owned) {
            nomem(p);
            return -1;
        }
    }
    kv->cap = cap;
    return 0;
}

/* A decimal 64-bit integer; `what` names it in messages. */
static int parse_int(parser *p, const char *what, int64_t *out, size_t *at)
{
    skip_ws(p);
    *at = p->pos;
    const char *s = p->s;
    size_t i = p->pos;
    int neg = 0;
    if (s[i] == '-') {
        neg = 1;
        i++;
    }
    if (!is_digit(s[i])) {
        char fb[64];
        fail(p, MG_DT_ERR_PARSE, i, "expected an integer for %s, found %s", what, found(p, i, fb, sizeof fb));
        return -1;
    }
    uint64_t limit = neg ? (uint64_t)INT64_MAX + 1u : (uint64_t)INT64_MAX;
    uint64_t acc = 0;
    for (; is_digit(s[i]); i++) {
        unsigned d = (unsigned)(s[i] - '0');
        if (acc > (limit - d) / 10u) {
            size_t n = *at;
            while (s[n] == '-' || is_digit(s[n])) n++;
            fail(p, MG_DT_ERR_PARSE, *at, "integer %.*s%s for %s does not fit in 64 bits", qlen(n - *at), s + *at,
                 qmore(n - *at), what);
            return -1;
        }
        acc = acc * 10u + d;
    }
    if (is_ident(s[i])) {
        size_t n = ident_len(p, *at + (size_t)neg) + (size_t)neg;
        fail(p, MG_DT_ERR_PARSE, *at, "malformed integer '%.*s%s' for %s", qlen(n), s + *at, qmore(n), what);
        return -1;
    }
    p->pos = i;
    if (!neg)
        *out = (int64_t)acc;
    else if (acc == (uint64_t)INT64_MAX + 1u)
        *out = INT64_MIN;
    else
        *out = -(int64_t)acc;
    return 0;
}

/* Range of the MPI parameter an integer becomes, and the keyword's minimum. */
static int check_int(parser *p, const kwspec *k, int aint, const char *what, int64_t v, size_t at)
{
    if (k->min != NOMIN && v < k->min) {
        fail(p, MG_DT_ERR_PARSE, at, "%s must be >= %lld, got %lld", what, (long long)k->min, (long long)v);
        return -1;
    }
    if (aint) {
        if ((int64_t)(MPI_Aint)v != v) {
            fail(p, MG_DT_ERR_PARSE, at, "%s = %lld does not fit in an MPI_Aint", what, (long long)v);
            return -1;
        }
    } else if (v < INT_MIN || v > INT_MAX) {
        fail(p, MG_DT_ERR_PARSE, at, "%s = %lld does not fit in an int (the MPI parameter)", what, (long long)v);
        return -1;
    }
    return 0;
}

static int parse_word(parser *p, const char *what, const char *const *words, const int *vals, int n,
                      const char *expected, int64_t *out, size_t *at)
{
    skip_ws(p);
    *at = p->pos;
    size_t len = ident_len(p, p->pos);
    if (len > 0)
        for (int i = 0; i < n; i++)
            if (name_is(p->s + p->pos, len, words[i])) {
                *out = vals[i];
                p->pos += len;
                return 0;
            }
    char fb[64];
    fail(p, MG_DT_ERR_PARSE, p->pos, "expected %s for %s, found %s", expected, what, found(p, p->pos, fb, sizeof fb));
    return -1;
}

static int parse_order(parser *p, const char *what, int64_t *out, size_t *at)
{
    static const char *const words[] = {"c", "fortran"};
    const int vals[] = {MPI_ORDER_C, MPI_ORDER_FORTRAN};
    return parse_word(p, what, words, vals, 2, "c or fortran", out, at);
}

static int parse_distrib(parser *p, const char *what, int64_t *out, size_t *at)
{
    static const char *const words[] = {"block", "cyclic", "none"};
    const int vals[] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_NONE};
    return parse_word(p, what, words, vals, 3, "block, cyclic or none", out, at);
}

static int parse_type(parser *p, MPI_Datatype *out, int *owned);

/* "[" items "]" for the list kinds. */
static int parse_list(parser *p, const kwspec *k, kwval *kv)
{
    char what[48];
    snprintf(what, sizeof what, "an entry of '%s'", k->name);
    if (expect(p, '[', "to open the list") != 0) return -1;
    skip_ws(p);
    if (p->s[p->pos] == ']') {
        p->pos++;
        return 0;
    }
    for (;;) {
        if (kwval_grow(p, kv, k->kind == K_TYPES) != 0) return -1;
        size_t i = kv->n;
        int64_t v = 0;
        skip_ws(p);
        size_t at = p->pos;
        switch (k->kind) {
        case K_INTS:
        case K_AINTS:
            if (parse_int(p, what, &v, &at) != 0) return -1;
            if (check_int(p, k, k->kind == K_AINTS, what, v, at) != 0) return -1;
            break;
        case K_DARGS:
            if (name_is(p->s + at, ident_len(p, at), "default")) {
                p->pos += strlen("default");
                v = MPI_DISTRIBUTE_DFLT_DARG;
            } else if (p->s[at] == '-' || is_digit(p->s[at])) {
                if (parse_int(p, what, &v, &at) != 0) return -1;
                if (check_int(p, k, 0, what, v, at) != 0) return -1;
            } else {
                char fb[64];
                fail(p, MG_DT_ERR_PARSE, at, "expected an integer or 'default' for %s, found %s", what,
                     found(p, at, fb, sizeof fb));
                return -1;
            }
            break;
        case K_DISTRIBS:
            if (parse_distrib(p, what, &v, &at) != 0) return -1;
            break;
        case K_TYPES: {
            int own = 0;
            kv->types[i] = MPI_DATATYPE_NULL;
            if (parse_type(p, &kv->types[i], &own) != 0) return -1;
            kv->owned[i] = (unsigned char)own;
            break;
        }
        default: return -1; /* not a list kind */
        }
        kv->items[i] = v;
        kv->at[i] = at;
        kv->n++;
        skip_ws(p);
        char c = p->s[p->pos];
        if (c == ']') {
            p->pos++;
            return 0;
        }
        if (c != ',') {
            char fb[64];
            fail(p, MG_DT_ERR_PARSE, p->pos, "expected ',' or ']' in the list of '%s', found %s", k->name,
                 found(p, p->pos, fb, sizeof fb));
            return -1;
        }
        p->pos++;
    }
}

static int parse_value(parser *p, const kwspec *k, kwval *kv)
{
    char what[48];
    snprintf(what, sizeof what, "'%s'", k->name);
    skip_ws(p);
    kv->vpos = p->pos;
    size_t at;
    switch (k->kind) {
    case K_INT:
    case K_AINT:
        if (parse_int(p, what, &kv->v, &at) != 0) return -1;
        return check_int(p, k, k->kind == K_AINT, what, kv->v, at);
    case K_ORDER: return parse_order(p, what, &kv->v, &at);
    default: return parse_list(p, k, kv);
    }
}

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
    fail(p, MG_DT_ERR_PARSE, kv[bad].kpos, "'%s' has %zu entries but '%s' has %zu", c->kw[bad].name, kv[bad].n,
         c->kw[ref].name, kv[ref].n);
    return -1;
}

/* kv[k] is the first list of a subarray or darray: ndims is its length. */
static int check_ndims(parser *p, const ctorspec *c, const kwval *kv, int k)
{
    if (kv[k].n > 0) return 0;
    fail(p, MG_DT_ERR_PARSE, kv[k].vpos, "%s needs at least one dimension ('%s' is empty)", c->name, c->kw[k].name);
    return -1;
}

static int check_count(parser *p, const ctorspec *c, const kwval *kv)
{
    if (kv->n <= INT_MAX) return 0;
    fail(p, MG_DT_ERR_PARSE, kv->vpos, "%s: more than INT_MAX entries", c->name);
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
        fail(p, MG_DT_ERR_MPI, at, "querying the size and extent of a type failed");
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
        fail(p, MG_DT_ERR_PARSE, cpos, "%s is too large: its size or extent would exceed 2^62 bytes", c->name);
        return -1;
    }
    return 0;
}

static int check_subarray(parser *p, const kwval *kv)
{
    const kwval *sz = &kv[0], *sub = &kv[1], *st = &kv[2];
    for (size_t i = 0; i < sz->n; i++) {
        if (sub->items[i] > sz->items[i]) {
            fail(p, MG_DT_ERR_PARSE, sub->at[i], "subsizes[%zu] = %lld is larger than sizes[%zu] = %lld", i,
                 (long long)sub->items[i], i, (long long)sz->items[i]);
            return -1;
        }
        if (st->items[i] > sz->items[i] - sub->items[i]) {
            fail(p, MG_DT_ERR_PARSE, st->at[i],
                 "starts[%zu] = %lld plus subsizes[%zu] = %lld exceeds sizes[%zu] = %lld", i, (long long)st->items[i],
                 i, (long long)sub->items[i], i, (long long)sz->items[i]);
            return -1;
        }
    }
    return 0;
}

static int check_darray(parser *p, const kwval *kv)
{
    const kwval *size = &kv[0], *rank = &kv[1], *gs = &kv[2], *dist = &kv[3], *dargs = &kv[4], *ps = &kv[5];
    if (rank->v >= size->v) {
        fail(p, MG_DT_ERR_PARSE, rank->vpos, "rank %lld is not below size %lld", (long long)rank->v,
             (long long)size->v);
        return -1;
    }
    int64_t prod = 1;
    for (size_t i = 0; i < ps->n; i++) {
        if (prod <= size->v) prod *= ps->items[i]; /* both <= INT_MAX: no overflow */
        if (dist->items[i] == MPI_DISTRIBUTE_NONE && ps->items[i] != 1) {
            fail(p, MG_DT_ERR_PARSE, ps->at[i], "psizes[%zu] must be 1 for a dimension distributed as 'none', got %lld",
                 i, (long long)ps->items[i]);
            return -1;
        }
        if (dist->items[i] == MPI_DISTRIBUTE_BLOCK && dargs->items[i] != MPI_DISTRIBUTE_DFLT_DARG &&
            dargs->items[i] * ps->items[i] < gs->items[i]) {
            fail(p, MG_DT_ERR_PARSE, dargs->at[i],
                 "dargs[%zu] = %lld times psizes[%zu] = %lld does not cover gsizes[%zu] = %lld "
                 "(block distribution)",
                 i, (long long)dargs->items[i], i, (long long)ps->items[i], i, (long long)gs->items[i]);
            return -1;
        }
    }
    if (prod != size->v) {
        if (prod > size->v)
            fail(p, MG_DT_ERR_PARSE, ps->vpos, "the product of 'psizes' exceeds size %lld (it must equal it)",
                 (long long)size->v);
        else
            fail(p, MG_DT_ERR_PARSE, ps->vpos, "the product of 'psizes' is %lld but size is %lld (they must be equal)",
                 (long long)prod, (long long)size->v);
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

static int mpi_check(parser *p, int rc, size_t at, const char *fn)
{
    if (rc == MPI_SUCCESS) return 0;
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(rc, msg, &len) != MPI_SUCCESS) len = 0;
    if (len < 0 || len >= MPI_MAX_ERROR_STRING) len = 0;
    msg[len] = '\0';
    for (int i = 0; i < len; i++)
        if (msg[i] == '\n' || msg[i] == '\r') msg[i] = ' ';
    fail(p, MG_DT_ERR_MPI, at, "%s failed: %s", fn, len ? msg : "(no message)");
    return -1;
}

/* Call the MPI constructor; arguments are already checked. */
static int build(parser *p, const ctorspec *c, size_t cpos, kwval *kv, MPI_Datatype old, MPI_Datatype *out)
{
    int rc = MPI_SUCCESS, ret = -1;
    const char *fn = "";
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
        fn = "MPI_Type_create_struct";
        size_t n = kv[2].n;
        if (!(i0 = xcalloc(p, n, sizeof *i0)) || !(a0 = to_aints(p, &kv[1]))) goto done;
        for (size_t i = 0; i < n; i++) i0[i] = kv[0].seen ? (int)kv[0].items[i] : 1;
        MPI_Datatype none[1] = {MPI_BYTE}; /* never a NULL array, even for count 0 */
        rc = MPI_Type_create_struct((int)n, i0, a0, n ? kv[2].types : none, out);
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
    }
    if (mpi_check(p, rc, cpos, fn) != 0) {
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
static int finish(parser *p, const ctorspec *c, size_t cpos, kwval *kv, MPI_Datatype old, MPI_Datatype *out)
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
    default: break;
    }
    if (check_bounds(p, c, cpos, kv, old) != 0) return -1;
    return build(p, c, cpos, kv, old, out);
}

/* ---------------------------------------------------------------- terms */

static void list_keywords(const ctorspec *c, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < c->nkw && used < len; i++) {
        int n = snprintf(buf + used, len - used, "%s%s", i ? ", " : "", c->kw[i].name);
        if (n < 0) break;
        used += (size_t)n;
    }
}

/* The arguments of constructor c, whose name starts at cpos; '(' is consumed. */
static int parse_ctor(parser *p, const ctorspec *c, size_t cpos, MPI_Datatype *out)
{
    kwval kv[MAX_KW];
    memset(kv, 0, sizeof kv);
    MPI_Datatype old = MPI_DATATYPE_NULL;
    int old_owned = 0, have_old = 0, ret = -1;
    char fb[64];

    skip_ws(p);
    if (p->s[p->pos] == ')') {
        p->pos++;
    } else {
        for (;;) {
            skip_ws(p);
            size_t apos = p->pos;
            size_t ilen = ident_len(p, apos);
            size_t after = skip_ws_from(p, apos + ilen);
            char nc = p->s[after];
            int k = ilen ? kw_lookup(c, p->s + apos, ilen) : -1;
            MPI_Datatype b;
            int is_basic = ilen ? basic_lookup(p->s + apos, ilen, &b) : 0;
            if (ilen > 0 && nc == '=') {
                /* keyword = value */
                if (k < 0) {
                    char kws[128];
                    list_keywords(c, kws, sizeof kws);
                    if (c->nkw)
                        fail(p, MG_DT_ERR_PARSE, apos, "unknown keyword '%.*s%s' for %s (expected %s)", qlen(ilen),
                             p->s + apos, qmore(ilen), c->name, kws);
                    else
                        fail(p, MG_DT_ERR_PARSE, apos,
                             "unknown keyword '%.*s%s': %s takes no keywords, only the old type", qlen(ilen),
                             p->s + apos, qmore(ilen), c->name);
                    goto done;
                }
                if (kv[k].seen) {
                    fail(p, MG_DT_ERR_PARSE, apos, "repeated keyword '%s' for %s", c->kw[k].name, c->name);
                    goto done;
                }
                kv[k].seen = 1;
                kv[k].kpos = apos;
                p->pos = after + 1;
                if (parse_value(p, &c->kw[k], &kv[k]) != 0) goto done;
                skip_ws(p);
                if (p->s[p->pos] == ',') {
                    p->pos++;
                } else if (p->s[p->pos] == ')') {
                    p->pos++;
                    break;
                } else {
                    fail(p, MG_DT_ERR_PARSE, p->pos, "expected ',' or ')' after the value of '%s', found %s",
                         c->kw[k].name, found(p, p->pos, fb, sizeof fb));
                    goto done;
                }
            } else if (k >= 0 && nc != '(' && !(is_basic && (nc == ',' || nc == ')'))) {
                /* a keyword without '=' (unless it reads as a basic type, e.g. 'count') */
                fail(p, MG_DT_ERR_PARSE, after, "expected '=' after '%s'", c->kw[k].name);
                goto done;
            } else {
                /* positional: the old type, which must be the last argument */
                if (!c->has_old) {
                    if (p->s[apos] == ')' || p->s[apos] == '\0')
                        fail(p, MG_DT_ERR_PARSE, apos, "expected a keyword argument after ','");
                    else
                        fail(p, MG_DT_ERR_PARSE, apos, "%s takes no positional argument; its types go in 'types=[..]'",
                             c->name);
                    goto done;
                }
                if (p->s[apos] == ')') {
                    fail(p, MG_DT_ERR_PARSE, apos, "expected an argument after ','");
                    goto done;
                }
                if (parse_type(p, &old, &old_owned) != 0) goto done;
                have_old = 1;
                skip_ws(p);
                if (p->s[p->pos] == ')') {
                    p->pos++;
                    break;
                }
                if (p->s[p->pos] == ',' && k >= 0 && p->pos == after)
                    fail(p, MG_DT_ERR_PARSE, after, "expected '=' after '%s'", c->kw[k].name);
                else
                    fail(p, MG_DT_ERR_PARSE, p->pos,
                         "expected ')' after the old type (it is the last argument of %s), "
                         "found %s",
                         c->name, found(p, p->pos, fb, sizeof fb));
                goto done;
            }
        }
    }
    /* The closing ')' is at p->pos - 1. */
    for (int k = 0; k < c->nkw; k++)
        if (!kv[k].seen && !c->kw[k].optional) {
            fail(p, MG_DT_ERR_PARSE, p->pos - 1, "%s is missing keyword '%s'", c->name, c->kw[k].name);
            goto done;
        }
    if (c->has_old && !have_old) {
        fail(p, MG_DT_ERR_PARSE, p->pos - 1, "%s is missing the old type (its last argument)", c->name);
        goto done;
    }
    ret = finish(p, c, cpos, kv, old, out);
done:
    for (int k = 0; k < MAX_KW; k++) kwval_free(&kv[k]);
    if (old_owned) free_type(&old);
    return ret;
}

/* One type term. *owned tells whether *out was created here (and must be freed
 * by the caller) or is a predefined handle. */
static int parse_type(parser *p, MPI_Datatype *out, int *owned)
{
    char fb[64];
    *owned = 0;
    skip_ws(p);
    size_t start = p->pos;
    size_t len = ident_len(p, start);
    if (len == 0) {
        fail(p, MG_DT_ERR_PARSE, start, "expected a type, found %s", found(p, start, fb, sizeof fb));
        return -1;
    }
    const char *name = p->s + start;
    size_t after = skip_ws_from(p, start + len);
    if (p->s[after] == '(') {
        const ctorspec *c = ctor_lookup(name, len);
        if (!c) {
            MPI_Datatype dummy;
            if (basic_lookup(name, len, &dummy))
                fail(p, MG_DT_ERR_PARSE, after, "basic type '%.*s' takes no arguments", (int)len, name);
            else
                fail(p, MG_DT_ERR_PARSE, start, "unknown constructor '%.*s%s'", qlen(len), name, qmore(len));
            return -1;
        }
        if (p->depth >= MG_PARSE_MAX_DEPTH) {
            fail(p, MG_DT_ERR_PARSE, start, "types nested more than %d deep", MG_PARSE_MAX_DEPTH);
            return -1;
        }
        p->pos = after + 1;
        p->depth++;
        int rc = parse_ctor(p, c, start, out);
        p->depth--;
        if (rc != 0) return -1;
        *owned = 1;
        return 0;
    }
    if (basic_lookup(name, len, out)) {
        p->pos = start + len;
        return 0;
    }
    if (ctor_lookup(name, len)) {
        fail(p, MG_DT_ERR_PARSE, after, "expected '(' after '%.*s'", (int)len, name);
        return -1;
    }
    size_t digits = 0;
    while (digits < len && is_digit(name[digits])) digits++;
    if (digits == len) {
        fail(p, MG_DT_ERR_PARSE, start, "expected a type, found the number %.*s%s", qlen(len), name, qmore(len));
        return -1;
    }
    /* A hint for MPI_INT, INT, Mpi_Double ...: lower case without the MPI_ prefix. */
    char low[MG_PARSE_QUOTE + 1];
    const char *hint = NULL;
    if (len <= MG_PARSE_QUOTE) {
        for (size_t i = 0; i < len; i++)
            low[i] = (name[i] >= 'A' && name[i] <= 'Z') ? (char)(name[i] - 'A' + 'a') : name[i];
        low[len] = '\0';
        const char *base = strncmp(low, "mpi_", 4) == 0 ? low + 4 : low;
        MPI_Datatype dummy; /* name itself is not a basic type, so a match differs from it */
        if (basic_lookup(base, strlen(base), &dummy)) hint = base;
    }
    if (hint)
        fail(p, MG_DT_ERR_PARSE, start, "unknown basic type '%.*s' (did you mean '%s'?)", (int)len, name, hint);
    else
        fail(p, MG_DT_ERR_PARSE, start, "unknown basic type '%.*s%s'", qlen(len), name, qmore(len));
    return -1;
}

/* ---------------------------------------------------------------- entry point */

int mg_dt_parse(const char *text, MPI_Datatype *out, char *errbuf, size_t errlen)
{
    parser p = {text, 0, 0, MG_DT_SUCCESS, errbuf, errlen};
    if (errbuf && errlen) errbuf[0] = '\0';
    if (out) *out = MPI_DATATYPE_NULL;
    if (!text || !out) {
        if (errbuf && errlen) snprintf(errbuf, errlen, "mg_dt_parse: %s is NULL", text ? "out" : "text");
        return MG_DT_ERR_ARG;
    }
    int init = 0, fin = 0;
    if (MPI_Initialized(&init) != MPI_SUCCESS || MPI_Finalized(&fin) != MPI_SUCCESS || !init || fin) {
        if (errbuf && errlen) snprintf(errbuf, errlen, "mg_dt_parse: MPI is not initialized (or already finalized)");
        return MG_DT_ERR_MPI;
    }
    skip_ws(&p);
    if (text[p.pos] == '\0') {
        fail(&p, MG_DT_ERR_PARSE, 0, "empty input: expected a type");
        return p.err;
    }
    MPI_Datatype t = MPI_DATATYPE_NULL;
    int owned = 0;
    if (parse_type(&p, &t, &owned) != 0) return p.err;
    skip_ws(&p);
    if (text[p.pos] != '\0') {
        char fb[64];
        fail(&p, MG_DT_ERR_PARSE, p.pos, "trailing text after the type: %s", found(&p, p.pos, fb, sizeof fb));
        if (owned) free_type(&t);
        return p.err;
    }
    if (!owned) {
        /* a bare basic type: hand out a duplicate so that the caller always frees */
        MPI_Datatype d = MPI_DATATYPE_NULL;
        if (mpi_check(&p, MPI_Type_dup(t, &d), 0, "MPI_Type_dup") != 0) return p.err;
        t = d;
    }
    *out = t;
    return MG_DT_SUCCESS;
}
