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
 * parameter it becomes (int or MPI_Aint; MPI_Count for counts, blocks, strides
 * and sizes where the stack has the MPI-4 `_c` constructors, which are then
 * called for values beyond int) and against the conditions the MPI standard
 * makes erroneous (negative counts, subarray/darray geometry, ...), so that the
 * MPI library is never handed arguments it would reject: with the default
 * error handler such a call would abort the program. A term whose type would
 * span more than 2^62 bytes is also rejected (MPI implementations compute sizes
 * and extents in MPI_Aint without checking for overflow). A struct without
 * members is built as a contiguous type of none (Open MPI is reported to crash
 * on MPI_Type_create_struct with count 0). The basic type names are the
 * engine's table (basics.c), the one describe prints from; the checks and
 * constructor calls are in parse_build.c.
 *
 * Ownership: the result is always a newly created, uncommitted derived datatype
 * that the caller frees with MPI_Type_free. A bare basic type ("int") or f90
 * term ("f90_real(p=6, r=30)", a predefined handle) yields MPI_Type_dup of the
 * predefined handle, so "the caller frees *out" holds for every successful call. Every intermediate type (old types, struct member
 * types) is freed once the constructor that uses it has been called (MPI
 * constructors keep what they need), on success and on every error path.
 *
 * Errors: the first error found wins; errbuf gets one line "at N: message",
 * where N is the 0-based character offset into text. */
#include "parse.h"

#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Terms nested deeper than this are rejected (bounds the recursion). */
#define MG_PARSE_MAX_DEPTH 100
/* Identifiers quoted in messages are cut to this many characters. */
#define MG_PARSE_QUOTE 40

/* ---------------------------------------------------------------- tables */

/* Keyword order here is the MPI parameter order; the kw indices below rely on it. */
/* clang-format off */
static const ctorspec CTORS[] = {
    {"contig", C_CONTIG, 1, 1, {{"count", K_INT, 0, 0, 1}}},
    {"vector", C_VECTOR, 1, 3,
     {{"count", K_INT, 0, 0, 1}, {"block", K_INT, 0, 0, 1}, {"stride", K_INT, NOMIN, 0, 1}}},
    {"hvector", C_HVECTOR, 1, 3,
     {{"count", K_INT, 0, 0, 1}, {"block", K_INT, 0, 0, 1}, {"stride", K_AINT, NOMIN, 0, 1}}},
    {"indexed", C_INDEXED, 1, 2, {{"blocks", K_INTS, 0, 0, 1}, {"displs", K_INTS, NOMIN, 0, 1}}},
    {"hindexed", C_HINDEXED, 1, 2, {{"blocks", K_INTS, 0, 0, 1}, {"displs", K_AINTS, NOMIN, 0, 1}}},
    {"indexed_block", C_INDEXED_BLOCK, 1, 2,
     {{"block", K_INT, 0, 0, 1}, {"displs", K_INTS, NOMIN, 0, 1}}},
    {"hindexed_block", C_HINDEXED_BLOCK, 1, 2,
     {{"block", K_INT, 0, 0, 1}, {"displs", K_AINTS, NOMIN, 0, 1}}},
    {"struct", C_STRUCT, 0, 3,
     {{"blocks", K_INTS, 0, 1, 1}, {"displs", K_AINTS, NOMIN, 0, 1}, {"types", K_TYPES, NOMIN, 0, 0}}},
    {"resized", C_RESIZED, 1, 2, {{"lb", K_AINT, NOMIN, 0, 1}, {"extent", K_AINT, NOMIN, 0, 1}}},
    {"subarray", C_SUBARRAY, 1, 4,
     {{"sizes", K_INTS, 1, 0, 1}, {"subsizes", K_INTS, 1, 0, 1}, {"starts", K_INTS, 0, 0, 1},
      {"order", K_ORDER, NOMIN, 0, 0}}},
    {"darray", C_DARRAY, 1, 7,
     {{"size", K_INT, 1, 0, 0}, {"rank", K_INT, 0, 0, 0}, {"gsizes", K_INTS, 1, 0, 1},
      {"distribs", K_DISTRIBS, NOMIN, 0, 0}, {"dargs", K_DARGS, 1, 0, 0}, {"psizes", K_INTS, 1, 0, 0},
      {"order", K_ORDER, NOMIN, 0, 0}}},
    {"dup", C_DUP, 1, 0, {{NULL, K_INT, 0, 0, 0}}},
    /* MPI_Type_create_f90_*: predefined types of a Fortran precision/range */
    {"f90_real", C_F90_REAL, 0, 2, {{"p", K_F90, 0, 0, 0}, {"r", K_F90, 0, 0, 0}}},
    {"f90_complex", C_F90_COMPLEX, 0, 2, {{"p", K_F90, 0, 0, 0}, {"r", K_F90, 0, 0, 0}}},
    {"f90_integer", C_F90_INTEGER, 0, 1, {{"r", K_F90, 0, 0, 0}}},
};
/* clang-format on */
#define NCTORS (sizeof CTORS / sizeof CTORS[0])

static int name_is(const char *s, size_t n, const char *name) { return strlen(name) == n && memcmp(s, name, n) == 0; }

/* A predefined type of the notation (basics.c, shared with describe). */
static int basic_lookup(const char *s, size_t n, MPI_Datatype *out) { return mg__basic_lookup(s, n, out); }

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

void mg__parse_fail(parser *p, int code, size_t at, const char *fmt, ...)
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

static void nomem(parser *p) { mg__parse_fail(p, MG_DT_ERR_NOMEM, p->pos, "out of memory"); }

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
    mg__parse_fail(p, MG_DT_ERR_PARSE, p->pos, "expected '%c' %s, found %s", c, ctx, found(p, p->pos, fb, sizeof fb));
    return -1;
}

/* ---------------------------------------------------------------- values */

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
        mg__parse_fail(p, MG_DT_ERR_PARSE, i, "expected an integer for %s, found %s", what, found(p, i, fb, sizeof fb));
        return -1;
    }
    uint64_t limit = neg ? (uint64_t)INT64_MAX + 1u : (uint64_t)INT64_MAX;
    uint64_t acc = 0;
    for (; is_digit(s[i]); i++) {
        unsigned d = (unsigned)(s[i] - '0');
        if (acc > (limit - d) / 10u) {
            size_t n = *at;
            while (s[n] == '-' || is_digit(s[n])) n++;
            mg__parse_fail(p, MG_DT_ERR_PARSE, *at, "integer %.*s%s for %s does not fit in 64 bits", qlen(n - *at),
                           s + *at, qmore(n - *at), what);
            return -1;
        }
        acc = acc * 10u + d;
    }
    if (is_ident(s[i])) {
        size_t n = ident_len(p, *at + (size_t)neg) + (size_t)neg;
        mg__parse_fail(p, MG_DT_ERR_PARSE, *at, "malformed integer '%.*s%s' for %s", qlen(n), s + *at, qmore(n), what);
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
        mg__parse_fail(p, MG_DT_ERR_PARSE, at, "%s must be >= %lld, got %lld", what, (long long)k->min, (long long)v);
        return -1;
    }
    if (aint) {
        if ((int64_t)(MPI_Aint)v != v) {
            mg__parse_fail(p, MG_DT_ERR_PARSE, at, "%s = %lld does not fit in an MPI_Aint", what, (long long)v);
            return -1;
        }
    } else if (v < INT_MIN || v > INT_MAX) {
#ifdef MG_HAVE_MPI_LARGE_COUNT
        /* the `_c` constructor takes it as an MPI_Count */
        if (k->large && (int64_t)(MPI_Count)v == v) return 0;
#endif
        if (k->large)
            mg__parse_fail(p, MG_DT_ERR_PARSE, at,
                           "%s = %lld does not fit in an int: this MPI library has no MPI-4 large-count "
                           "constructors (MPI_Type_contiguous_c, ...), so counts, blocks, strides and "
                           "sizes are limited to INT_MAX = %d",
                           what, (long long)v, INT_MAX);
        else
            mg__parse_fail(p, MG_DT_ERR_PARSE, at, "%s = %lld does not fit in an int (the MPI parameter)", what,
                           (long long)v);
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
    mg__parse_fail(p, MG_DT_ERR_PARSE, p->pos, "expected %s for %s, found %s", expected, what,
                   found(p, p->pos, fb, sizeof fb));
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
                mg__parse_fail(p, MG_DT_ERR_PARSE, at, "expected an integer or 'default' for %s, found %s", what,
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
            mg__parse_fail(p, MG_DT_ERR_PARSE, p->pos, "expected ',' or ']' in the list of '%s', found %s", k->name,
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
    case K_F90:
        if (name_is(p->s + kv->vpos, ident_len(p, kv->vpos), "undefined")) {
            p->pos += strlen("undefined");
            kv->v = MPI_UNDEFINED;
            return 0;
        }
        if (parse_int(p, what, &kv->v, &at) != 0) return -1;
        return check_int(p, k, 0, what, kv->v, at);
    default: return parse_list(p, k, kv);
    }
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
                        mg__parse_fail(p, MG_DT_ERR_PARSE, apos, "unknown keyword '%.*s%s' for %s (expected %s)",
                                       qlen(ilen), p->s + apos, qmore(ilen), c->name, kws);
                    else
                        mg__parse_fail(p, MG_DT_ERR_PARSE, apos,
                                       "unknown keyword '%.*s%s': %s takes no keywords, only the old type", qlen(ilen),
                                       p->s + apos, qmore(ilen), c->name);
                    goto done;
                }
                if (kv[k].seen) {
                    mg__parse_fail(p, MG_DT_ERR_PARSE, apos, "repeated keyword '%s' for %s", c->kw[k].name, c->name);
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
                    mg__parse_fail(p, MG_DT_ERR_PARSE, p->pos, "expected ',' or ')' after the value of '%s', found %s",
                                   c->kw[k].name, found(p, p->pos, fb, sizeof fb));
                    goto done;
                }
            } else if (k >= 0 && nc != '(' && !(is_basic && (nc == ',' || nc == ')'))) {
                /* a keyword without '=' (unless it reads as a basic type, e.g. 'count') */
                mg__parse_fail(p, MG_DT_ERR_PARSE, after, "expected '=' after '%s'", c->kw[k].name);
                goto done;
            } else {
                /* positional: the old type, which must be the last argument */
                if (!c->has_old) {
                    if (p->s[apos] == ')' || p->s[apos] == '\0')
                        mg__parse_fail(p, MG_DT_ERR_PARSE, apos, "expected a keyword argument after ','");
                    else
                        mg__parse_fail(p, MG_DT_ERR_PARSE, apos, "%s takes no positional argument%s", c->name,
                                       c->id == C_STRUCT ? "; its types go in 'types=[..]'" : "");
                    goto done;
                }
                if (p->s[apos] == ')') {
                    mg__parse_fail(p, MG_DT_ERR_PARSE, apos, "expected an argument after ','");
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
                    mg__parse_fail(p, MG_DT_ERR_PARSE, after, "expected '=' after '%s'", c->kw[k].name);
                else
                    mg__parse_fail(p, MG_DT_ERR_PARSE, p->pos,
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
            mg__parse_fail(p, MG_DT_ERR_PARSE, p->pos - 1, "%s is missing keyword '%s'", c->name, c->kw[k].name);
            goto done;
        }
    if (c->has_old && !have_old) {
        mg__parse_fail(p, MG_DT_ERR_PARSE, p->pos - 1, "%s is missing the old type (its last argument)", c->name);
        goto done;
    }
    ret = mg__parse_build(p, c, cpos, kv, old, out);
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
        mg__parse_fail(p, MG_DT_ERR_PARSE, start, "expected a type, found %s", found(p, start, fb, sizeof fb));
        return -1;
    }
    const char *name = p->s + start;
    size_t after = skip_ws_from(p, start + len);
    if (p->s[after] == '(') {
        const ctorspec *c = ctor_lookup(name, len);
        if (!c) {
            MPI_Datatype dummy;
            if (basic_lookup(name, len, &dummy))
                mg__parse_fail(p, MG_DT_ERR_PARSE, after, "basic type '%.*s' takes no arguments", (int)len, name);
            else
                mg__parse_fail(p, MG_DT_ERR_PARSE, start, "unknown constructor '%.*s%s'", qlen(len), name, qmore(len));
            return -1;
        }
        if (p->depth >= MG_PARSE_MAX_DEPTH) {
            mg__parse_fail(p, MG_DT_ERR_PARSE, start, "types nested more than %d deep", MG_PARSE_MAX_DEPTH);
            return -1;
        }
        p->pos = after + 1;
        p->depth++;
        int rc = parse_ctor(p, c, start, out);
        p->depth--;
        if (rc != 0) return -1;
        /* the f90_* terms give predefined types, which are never freed */
        *owned = c->id != C_F90_REAL && c->id != C_F90_COMPLEX && c->id != C_F90_INTEGER;
        return 0;
    }
    if (basic_lookup(name, len, out)) {
        /* A handle of size 0 is a type the library lacks (Open MPI's
         * MPI_COMPLEX32 without a Fortran REAL*16 complex, for instance). */
        int size = 0;
        if (MPI_Type_size(*out, &size) != MPI_SUCCESS || size == 0) {
            mg__parse_fail(p, MG_DT_ERR_PARSE, start, "basic type '%.*s' is not available in this MPI library",
                           (int)len, name);
            *out = MPI_DATATYPE_NULL;
            return -1;
        }
        p->pos = start + len;
        return 0;
    }
    if (ctor_lookup(name, len)) {
        mg__parse_fail(p, MG_DT_ERR_PARSE, after, "expected '(' after '%.*s'", (int)len, name);
        return -1;
    }
    if (mg__basic_named(name, len)) {
        /* mpi.h defines it as MPI_DATATYPE_NULL: the standard's way of saying
         * the library lacks an optional type (Intel MPI's MPI_REAL2, ...) */
        mg__parse_fail(p, MG_DT_ERR_PARSE, start, "basic type '%.*s' is not available in this MPI library",
                       (int)len, name);
        return -1;
    }
    size_t digits = 0;
    while (digits < len && is_digit(name[digits])) digits++;
    if (digits == len) {
        mg__parse_fail(p, MG_DT_ERR_PARSE, start, "expected a type, found the number %.*s%s", qlen(len), name,
                       qmore(len));
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
        mg__parse_fail(p, MG_DT_ERR_PARSE, start, "unknown basic type '%.*s' (did you mean '%s'?)", (int)len, name,
                       hint);
    else
        mg__parse_fail(p, MG_DT_ERR_PARSE, start, "unknown basic type '%.*s%s'", qlen(len), name, qmore(len));
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
        mg__parse_fail(&p, MG_DT_ERR_PARSE, 0, "empty input: expected a type");
        return p.err;
    }
    MPI_Datatype t = MPI_DATATYPE_NULL;
    int owned = 0;
    if (parse_type(&p, &t, &owned) != 0) return p.err;
    skip_ws(&p);
    if (text[p.pos] != '\0') {
        char fb[64];
        mg__parse_fail(&p, MG_DT_ERR_PARSE, p.pos, "trailing text after the type: %s", found(&p, p.pos, fb, sizeof fb));
        if (owned) free_type(&t);
        return p.err;
    }
    if (!owned) {
        /* a bare basic type: hand out a duplicate so that the caller always frees */
        MPI_Datatype d = MPI_DATATYPE_NULL;
        if (mg__parse_mpi_check(&p, MPI_Type_dup(t, &d), 0, "MPI_Type_dup") != 0) return p.err;
        t = d;
    }
    *out = t;
    return MG_DT_SUCCESS;
}
