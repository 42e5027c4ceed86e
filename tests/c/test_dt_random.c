/* Randomized correctness test of libmpiguide-dt.
 *
 * For each of N random datatypes (tests/c/dtgen.c builds the MPI type and its
 * own tree in parallel) and a random count, with a buffer of random bytes:
 *   (a) the reference stream (from the tree's typemap, never from the MPI type)
 *       equals MPI_Pack, and lb/extent/size of every node equal MPI's
 *       (deviations of the library from the standard are reported, see dtgen.h);
 *   (b) mg_dt_from_mpi + mg_dt_pack of the whole stream equals it, and size,
 *       lb, extent agree with MPI;
 *   (c) packing in random pieces (mg_dt_pack at successive offsets, the cursor)
 *       and from a random offset to the end gives the same bytes;
 *   (d) unpacking (whole, pieces at offsets, cursor) into a guard-filled buffer
 *       writes exactly the typemap's bytes (types without overlapping bytes);
 *   (e) mg_dt_to_mpi(t, count), and mg_dt_to_mpi_form in each form: one element
 *       has the size, lb/extent and packed bytes of count elements;
 *       mg_dt_from_mpi of it packs the same;
 *   (f) every engine return code is checked;
 *   (g) mg_dt_describe / mg_dt_describe_count parse back (mg_dt_parse) into
 *       types with the size, lb/extent (the type's as MPI has them; those of
 *       mg_dt_to_mpi for describe_count), true lb/extent (the data's) and
 *       packed bytes of the original, and the parsed type is described by the
 *       same text again (round trip); mg_dt_program succeeds;
 *   (h) the generator's own notation of the type parses into a type that
 *       packs the same (so the printed reproducers are faithful).
 * Plus fixed error-path cases.
 *
 * Usage: test_dt_random [ntypes [seed [first]]]   (default 10000 types, seed
 *          from the clock; or MG_DT_RANDOM_NTYPES / MG_DT_RANDOM_SEED)
 *        test_dt_random --type 'NOTATION' [count [seed]]   (one given type)
 * A failure prints the command that replays its type alone. Environment:
 * MG_DT_RANDOM_STRICT=1 skips types on which the library's lb/extent deviate
 * from the standard instead of following the library; MG_DT_RANDOM_VERBOSE=1
 * prints every type; MG_DT_RANDOM_DETAILS=N prints N failures of each check in
 * full (default 3). Build with -DDTGEN_NO_ENGINE to run without the engine
 * (generator, reference and the comparison with MPI_Pack only).
 *
 * Where a stack itself is wrong (its MPI_Pack disagrees with the MPI
 * definitions at a node whose children it packs right, or it crashes or
 * refuses a valid type), the type is skipped or not generated on that stack,
 * and the end of the output says so with a reproducer. The same analysis runs
 * on the types the engine builds (mg_dt_to_mpi, mg_dt_parse of describe):
 * their text is rebuilt with dtgen's parser, and only if the definitions
 * applied to it give the right bytes while MPI packs one of its nodes wrongly
 * is the stack blamed; anything else is an engine failure. Where MPI's own
 * lb/extent of a type without data differ from the standard's and the engine
 * has the standard's (or the type has no data), it is a "soft" note. */
#include <mpi.h>

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifndef DTGEN_NO_ENGINE
#include "mpiguide/dt.h"
#endif
#include "dtgen.h"
#include "known_bugs.h"

#define MAX_TOTAL_BYTES (256 * 1024) /* packed bytes of count elements */
#define MAX_TOTAL_COMPS (64 * 1024)
#define MAX_TOTAL_SPAN  (4L * 1024 * 1024)
/* Failures printed in full for each check (MG_DT_RANDOM_DETAILS=N). */
static long max_detailed_per_check = 3;
#define MAX_DETAILED_PER_CHECK max_detailed_per_check

/* ------------------------------------------------------------ bookkeeping */

static struct {
    long types, checked, skipped_strict, deviating_types, elements;
    long long bytes; /* bytes compared */
    long failures, failed_types;
    long unpack_checked, unpack_skipped_overlap;
    long blocks_equal_runs, blocks_more_than_runs;
    long pieces, cursor_calls;
    long soft;
} st;

#define NCHECKS 32
static const char *check_names[NCHECKS];
static long check_fail[NCHECKS];
static long check_runs[NCHECKS];

static int check_id(const char *name)
{
    for (int i = 0; i < NCHECKS; i++) {
        if (!check_names[i]) {
            check_names[i] = name;
            return i;
        }
        if (strcmp(check_names[i], name) == 0) return i;
    }
    return NCHECKS - 1;
}

typedef struct {
    uint64_t seed;
    long index;
    dtg_node *top;
    char *notation;
    MPI_Datatype type;
    MPI_Count count, size, total;
    MPI_Aint ext;
    dtg_comp *comps; /* typemap of count elements, byte offsets from base */
    size_t ncomps;
    MPI_Aint min_off, span;
    unsigned char *buf, *base, *stream, *covered;
    /* The same data with a wide margin on both sides, for MPI_Pack: a stack
     * that computes a wrong address must give wrong bytes, not an ASan abort.
     * The engine reads the tight buffer (base), where ASan catches overruns. */
    unsigned char *pbuf, *pbase;
    int overlap;
    long runs; /* contiguous runs of one element */
    dtg_rng rng;
    int failed, printed;
    const char *engine_text; /* while classifying a type the engine built */
} tcase;

/* While soft_mode is set, fail() only records its first message (used for the
 * comparison with the stack's MPI_Pack, whose disagreements are classified). */
static int soft_mode, soft_failed;
static char soft_msg[1024];

static void fail(tcase *T, const char *check, const char *fmt, ...)
{
    if (soft_mode) {
        if (!soft_failed) {
            va_list ap;
            va_start(ap, fmt);
            vsnprintf(soft_msg, sizeof soft_msg, fmt, ap);
            va_end(ap);
        }
        soft_failed = 1;
        return;
    }
    st.failures++;
    int id = check_id(check);
    check_fail[id]++;
    if (!T->failed) st.failed_types++;
    /* details for the first few failures of each check */
    if (check_fail[id] <= MAX_DETAILED_PER_CHECK) {
        char msg[1024];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
        printf("FAIL [%s] seed=%" PRIu64 " index=%ld count=%lld: %s\n", check, T->seed, T->index, (long long)T->count,
               msg);
        if (T->printed != 1) {
            T->printed = 1;
            printf("  type: %s\n", T->notation ? T->notation : "?");
            printf("  size %lld, lb %ld, extent %ld (MPI), typemap of one element: %zu basic "
                   "components; replay: test_dt_random 1 %" PRIu64 " %ld\n",
                   (long long)T->size, (long)T->top->mpi_lb, (long)T->top->mpi_ext, T->top->nmap, T->seed, T->index);
        }
    } else if (check_fail[id] == MAX_DETAILED_PER_CHECK + 1) {
        printf("(further failures of [%s] are counted only)\n", check);
    }
    T->failed = 1;
}

static void ran(const char *check) { check_runs[check_id(check)]++; }

#ifndef DTGEN_NO_ENGINE
/* Soft findings: counted and reported with a first example, not failures. */
typedef struct {
    const char *key;
    long count;
    char example[1200];
} softnote;
static softnote softnotes[16];

static void soft_note(tcase *T, const char *key, const char *fmt, ...)
{
    st.soft++;
    int i = 0;
    while (i < 16 && softnotes[i].key && strcmp(softnotes[i].key, key) != 0) i++;
    if (i == 16) return;
    softnotes[i].key = key;
    if (softnotes[i].count++ == 0) {
        char msg[600];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
        snprintf(softnotes[i].example, sizeof softnotes[i].example,
                 "seed %" PRIu64 " index %ld count %lld: %s; type: %.500s", T->seed, T->index, (long long)T->count, msg,
                 T->notation);
    }
}
#endif

/* Where stream byte `off` comes from: element, component, memory offset. */
static void where(const tcase *T, MPI_Count off, char *out, size_t len)
{
    MPI_Count p = 0;
    for (size_t i = 0; i < T->ncomps; i++) {
        if (off < p + T->comps[i].len) {
            size_t per = T->top->nmap ? T->top->nmap : 1;
            snprintf(out, len, "element %zu, component %zu (%ld bytes at memory offset %ld), byte %lld of it", i / per,
                     i % per, (long)T->comps[i].len, (long)T->comps[i].off, (long long)(off - p));
            return;
        }
        p += T->comps[i].len;
    }
    snprintf(out, len, "beyond the stream");
}

/* Where in the data buffer the wrong bytes of a component came from (helps
 * to tell a wrong displacement from a wrong order). */
static void source_of(const tcase *T, MPI_Count streampos, const unsigned char *gotcomp, char *out, size_t len)
{
    out[0] = 0;
    MPI_Count p = 0;
    size_t i = 0;
    for (; i < T->ncomps; i++) {
        if (streampos < p + T->comps[i].len) break;
        p += T->comps[i].len;
    }
    if (i == T->ncomps) return;
    MPI_Aint clen = T->comps[i].len, cmp = clen;
    if (T->comps[i].ld) cmp = DTG_LDBL_VALUE_BYTES;
    const unsigned char *c = gotcomp - (streampos - p);
    if (cmp < 2) return;
    for (MPI_Aint m = 0; m + cmp <= T->span; m++)
        if (memcmp(T->buf + m, c, (size_t)cmp) == 0) {
            snprintf(out, len, "; the %ld bytes got for that component are the data at memory offset %ld", (long)clen,
                     (long)(m + T->min_off));
            return;
        }
    snprintf(out, len, "; the bytes got for that component are not found in the data");
}

#ifndef DTGEN_NO_ENGINE
/* Compare `n` bytes of the stream starting at stream offset `at`. */
static int same_stream(tcase *T, const char *check, const unsigned char *got, MPI_Count at, MPI_Count n,
                       const char *what)
{
    st.bytes += n;
    if (n <= 0 || memcmp(got, T->stream + at, (size_t)n) == 0) return 1;
    MPI_Count i = 0;
    while (got[i] == T->stream[at + i]) i++;
    char w[200], src[160] = "";
    where(T, at + i, w, sizeof w);
    /* only if the whole component is in `got` */
    {
        MPI_Count p = 0;
        size_t c = 0;
        while (c < T->ncomps && at + i >= p + T->comps[c].len) p += T->comps[c++].len;
        if (c < T->ncomps && p >= at && p + T->comps[c].len <= at + n) source_of(T, at + i, got + i, src, sizeof src);
    }
    fail(T, check, "%s: first differing stream byte %lld (%s): expected 0x%02x, got 0x%02x%s", what,
         (long long)(at + i), w, T->stream[at + i], got[i], src);
    return 0;
}

#endif

/* Compare what MPI_Pack produced with the reference stream. The bytes of a
 * long double beyond its value bytes are padding, which some stacks do not copy
 * (MPICH's non-contiguous pack moves the 10 value bytes of an x87 long double);
 * they are counted and reported, not failed. The engine is held to all bytes. */
static long ld_pad_streams, ld_pad_bytes;

static int same_stream_mpi(tcase *T, const char *check, const unsigned char *got, MPI_Count nbytes, const char *what)
{
    st.bytes += nbytes;
    if (nbytes <= 0 || memcmp(got, T->stream, (size_t)nbytes) == 0) return 1;
    MPI_Count p = 0;
    long pad = 0;
    for (size_t i = 0; i < T->ncomps && p < nbytes; i++) {
        MPI_Aint len = T->comps[i].len, val = T->comps[i].ld ? DTG_LDBL_VALUE_BYTES : len;
        for (MPI_Aint b = 0; b < len; b++) {
            if (got[p + b] == T->stream[p + b]) continue;
            if (b >= val) {
                pad++;
                continue;
            }
            char w[200], src[160];
            where(T, p + b, w, sizeof w);
            source_of(T, p + b, got + p + b, src, sizeof src);
            fail(T, check, "%s: first differing stream byte %lld (%s): expected 0x%02x, got 0x%02x%s", what,
                 (long long)(p + b), w, T->stream[p + b], got[p + b], src);
            return 0;
        }
        p += len;
    }
    if (pad) {
        ld_pad_streams++;
        ld_pad_bytes += pad;
    }
    return 1;
}

/* --------------------------------------------------------------- helpers */

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "out of memory\n");
        abort();
    }
    return p;
}

#ifndef DTGEN_NO_ENGINE
static unsigned char guard_byte(MPI_Aint i) { return (unsigned char)(0xA5 ^ (i * 29)); }

/* Buffers for the pieces: exactly `len` usable bytes, so that ASan catches a
 * write or read past them. One malloc per piece is slow under ASan with full
 * unwinding (as ctest runs it), so one scratch buffer is reused: the piece
 * sits at its end (the allocation's redzone follows) and the bytes before it
 * are poisoned. */
#if defined(__SANITIZE_ADDRESS__)
#define DTR_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define DTR_ASAN 1
#endif
#endif
#ifdef DTR_ASAN
#include <sanitizer/asan_interface.h>
#define POISON(p, n)   ASAN_POISON_MEMORY_REGION(p, n)
#define UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION(p, n)
#else
#define POISON(p, n)   ((void)(p), (void)(n))
#define UNPOISON(p, n) ((void)(p), (void)(n))
#endif
static unsigned char *scratch;
static size_t scratch_cap;

static unsigned char *piece_buf(MPI_Count len)
{
    size_t n = len > 0 ? (size_t)len : 0;
    if (n > scratch_cap || !scratch) {
        if (scratch) UNPOISON(scratch, scratch_cap);
        free(scratch);
        scratch_cap = n > 4096 ? n : 4096;
        scratch = xmalloc(scratch_cap);
    }
    UNPOISON(scratch, scratch_cap);
    POISON(scratch, scratch_cap - n);
    return scratch + (scratch_cap - n);
}

static void piece_buf_release(void)
{
    if (scratch) UNPOISON(scratch, scratch_cap);
    free(scratch);
    scratch = NULL;
    scratch_cap = 0;
}

static MPI_Count piece_len(dtg_rng *r, MPI_Count remaining, MPI_Count total)
{
    int m = (int)dtg_range(r, 0, 99);
    if (m < 20) return 1;
    if (m < 40) return dtg_range(r, 2, 7);
    if (m < 80) return dtg_range(r, 1, remaining / 4 + 1);
    if (m < 92) return dtg_range(r, 1, total / 2 + 1);
    return remaining + dtg_range(r, 0, 8); /* the rest and more */
}

#endif

static MPI_Count choose_count(dtg_rng *r, const dtg_node *top)
{
    int m = (int)dtg_range(r, 0, 99);
    long c = m < 8    ? 0
             : m < 45 ? 1
             : m < 85 ? dtg_range(r, 2, 4)
             : m < 96 ? dtg_range(r, 5, 20)
                      : dtg_range(r, 21, 200);
    MPI_Aint E = top->ub - top->lb;
    for (;;) {
        if (c <= 1) break;
        MPI_Aint span = 0;
        if (!top->empty) {
            MPI_Aint lo = top->tlb + (E < 0 ? (c - 1) * E : 0);
            MPI_Aint hi = top->tub + (E > 0 ? (c - 1) * E : 0);
            span = hi - lo;
        }
        if (c * top->size <= MAX_TOTAL_BYTES && c * (long)top->nmap <= MAX_TOTAL_COMPS && span <= MAX_TOTAL_SPAN) break;
        c /= 2;
    }
    return c;
}

/* -------------------------------------------------------------- the case */

static void build_case(tcase *T)
{
    dtg_node *top = T->top;
    T->size = top->size;
    T->total = T->count * T->size;
    T->ext = top->ub - top->lb;
    T->ncomps = (size_t)T->count * top->nmap;
    T->comps = xmalloc(T->ncomps * sizeof *T->comps);
    size_t p = 0;
    for (MPI_Count k = 0; k < T->count; k++)
        for (size_t c = 0; c < top->nmap; c++) {
            T->comps[p].off = k * T->ext + top->map[c].off;
            T->comps[p].len = top->map[c].len;
            T->comps[p].ld = top->map[c].ld;
            p++;
        }
    MPI_Aint lo = 0, hi = 0;
    for (size_t i = 0; i < T->ncomps; i++) {
        if (i == 0 || T->comps[i].off < lo) lo = T->comps[i].off;
        if (i == 0 || T->comps[i].off + T->comps[i].len > hi) hi = T->comps[i].off + T->comps[i].len;
    }
    T->min_off = lo;
    T->span = hi - lo;
    T->buf = xmalloc((size_t)T->span);
    for (MPI_Aint i = 0; i < T->span; i += 8) {
        uint64_t r = dtg_next(&T->rng);
        memcpy(T->buf + i, &r, (size_t)(T->span - i < 8 ? T->span - i : 8));
    }
    T->base = T->buf - T->min_off;
    MPI_Aint pad = T->span + 65536;
    T->pbuf = xmalloc((size_t)(T->span + 2 * pad));
    memset(T->pbuf, 0xA7, (size_t)(T->span + 2 * pad));
    memcpy(T->pbuf + pad, T->buf, (size_t)T->span);
    T->pbase = T->pbuf + pad - T->min_off;
    T->stream = xmalloc((size_t)T->total);
    MPI_Count pos = 0;
    for (size_t i = 0; i < T->ncomps; i++) {
        memcpy(T->stream + pos, T->base + T->comps[i].off, (size_t)T->comps[i].len);
        pos += T->comps[i].len;
    }
    T->covered = calloc(T->span ? (size_t)T->span : 1, 1);
    if (!T->covered) abort();
    T->overlap = 0;
    for (size_t i = 0; i < T->ncomps; i++)
        for (MPI_Aint b = 0; b < T->comps[i].len; b++) {
            unsigned char *c = &T->covered[T->comps[i].off + b - T->min_off];
            if (*c) T->overlap = 1;
            *c = 1;
        }
    T->runs = 0;
    for (size_t c = 0; c < top->nmap; c++)
        if (c == 0 || top->map[c].off != top->map[c - 1].off + top->map[c - 1].len) T->runs++;
}

static void free_case(tcase *T)
{
    free(T->comps);
    free(T->buf);
    free(T->pbuf);
    free(T->stream);
    free(T->covered);
    free(T->notation);
    dtg_free(T->top);
}

/* Does MPI_Pack of one element of node n give n's reference typemap bytes
 * (long double padding aside)? Returns 1 yes, 0 no, -1 MPI error. */
static int node_packs_as_reference(dtg_node *n, dtg_rng *r)
{
    if (n->empty || n->size == 0) return 1;
    if (n->kind != DTG_BASIC) MPI_Type_commit(&n->mpi);
    MPI_Aint span = n->tub - n->tlb, pad = span + 65536;
    unsigned char *buf = xmalloc((size_t)(span + 2 * pad)), *base = buf + pad - n->tlb;
    for (MPI_Aint i = 0; i < span + 2 * pad; i++) buf[i] = (unsigned char)dtg_next(r);
    int psz = 0, pos = 0, res = 1;
    MPI_Pack_size(1, n->mpi, MPI_COMM_WORLD, &psz);
    unsigned char *out = xmalloc((size_t)psz);
    if (MPI_Pack(base, 1, n->mpi, out, psz, &pos, MPI_COMM_WORLD) != MPI_SUCCESS)
        res = -1;
    else if (pos != n->size)
        res = 0;
    else {
        MPI_Count p = 0;
        for (size_t c = 0; c < n->nmap && res; c++) {
            MPI_Aint len = n->map[c].ld ? DTG_LDBL_VALUE_BYTES : n->map[c].len;
            if (memcmp(out + p, base + n->map[c].off, (size_t)len) != 0) res = 0;
            p += n->map[c].len;
        }
    }
    free(out);
    free(buf);
    return res;
}

/* The deepest node whose MPI_Pack disagrees with its reference while all its
 * children agree with theirs, or NULL. */
static dtg_node *culprit(dtg_node *n, dtg_rng *r)
{
    for (int i = 0; i < n->nkids; i++) {
        dtg_node *c = culprit(n->kids[i], r);
        if (c) return c;
    }
    return node_packs_as_reference(n, r) == 1 ? NULL : n;
}

/* (a) MPI_Pack of the stack equals the reference stream. */
static void check_mpi_pack(tcase *T, MPI_Datatype type, int count, MPI_Count nbytes, const char *check,
                           const char *what)
{
    int psz = 0, pos = 0;
    int rc = MPI_Pack_size(count, type, MPI_COMM_WORLD, &psz);
    if (rc != MPI_SUCCESS) {
        fail(T, check, "%s: MPI_Pack_size failed (%d)", what, rc);
        return;
    }
    unsigned char *out = xmalloc((size_t)psz);
    memset(out, 0x3C, (size_t)psz);
    rc = MPI_Pack(T->pbase, count, type, out, psz, &pos, MPI_COMM_WORLD);
    if (rc != MPI_SUCCESS)
        fail(T, check, "%s: MPI_Pack failed (%d)", what, rc);
    else if (pos != nbytes || pos > psz)
        fail(T, check, "%s: MPI_Pack wrote %d bytes, expected %lld (MPI_Pack_size %d)", what, pos, (long long)nbytes,
             psz);
    else
        same_stream_mpi(T, check, out, nbytes, what);
    free(out);
}

/* ----------------------------------------------------------------- engine */

#ifndef DTGEN_NO_ENGINE

#define ECHECK(T, check, rc, what) \
    ((rc) == MG_DT_SUCCESS ? 1 : (fail(T, check, "%s returned %d (%s)", what, rc, mg_dt_strerror(rc)), 0))

static void check_pack_whole(tcase *T, mg_dt *t)
{
    const char *ck = "pack whole";
    ran(ck);
    MPI_Count actual = -1;
    /* exactly sized output (ASan catches an overrun) */
    unsigned char *out = xmalloc((size_t)T->total);
    int rc = mg_dt_pack(t, T->base, T->count, 0, out, T->total, &actual);
    if (ECHECK(T, ck, rc, "mg_dt_pack(offset 0, max_bytes = total)")) {
        if (actual != T->total)
            fail(T, ck, "*actual %lld, expected %lld", (long long)actual, (long long)T->total);
        else
            same_stream(T, ck, out, 0, T->total, "mg_dt_pack whole");
    }
    free(out);
    /* more room than needed: writes exactly total bytes */
    out = xmalloc((size_t)T->total + 16);
    memset(out, 0xEE, (size_t)T->total + 16);
    actual = -1;
    rc = mg_dt_pack(t, T->base, T->count, 0, out, T->total + 16, &actual);
    if (ECHECK(T, ck, rc, "mg_dt_pack(offset 0, max_bytes = total + 16)")) {
        if (actual != T->total)
            fail(T, ck, "max_bytes total+16: *actual %lld, expected %lld", (long long)actual, (long long)T->total);
        else if (same_stream(T, ck, out, 0, T->total, "mg_dt_pack whole, larger max_bytes")) {
            for (int i = 0; i < 16; i++)
                if (out[T->total + i] != 0xEE) {
                    fail(T, ck, "mg_dt_pack wrote past *actual (byte %lld)", (long long)(T->total + i));
                    break;
                }
        }
    }
    free(out);
}

/* (c) pieces at successive offsets, then with the cursor, then a random offset
 * to the end (both ways). */
static void check_pack_pieces(tcase *T, mg_dt *t)
{
    const char *ck = "pack pieces (offsets)";
    ran(ck);
    unsigned char *got = xmalloc((size_t)T->total);
    MPI_Count pos = 0;
    int ok = 1;
    while (ok && pos < T->total) {
        MPI_Count len = piece_len(&T->rng, T->total - pos, T->total);
        MPI_Count expect = len < T->total - pos ? len : T->total - pos;
        unsigned char *tmp = piece_buf(len);
        MPI_Count actual = -1;
        int rc = mg_dt_pack(t, T->base, T->count, pos, tmp, len, &actual);
        st.pieces++;
        if (!ECHECK(T, ck, rc, "mg_dt_pack(piece)"))
            ok = 0;
        else if (actual != expect) {
            fail(T, ck, "piece at offset %lld, max_bytes %lld: *actual %lld, expected %lld", (long long)pos,
                 (long long)len, (long long)actual, (long long)expect);
            ok = 0;
        } else {
            memcpy(got + pos, tmp, (size_t)actual);
            pos += actual;
        }
    }
    if (ok) {
        same_stream(T, ck, got, 0, T->total, "pieces at offsets");
        unsigned char tmp[8];
        MPI_Count actual = -1;
        int rc = mg_dt_pack(t, T->base, T->count, T->total, tmp, 8, &actual);
        if (ECHECK(T, ck, rc, "mg_dt_pack(offset = total)") && actual != 0)
            fail(T, ck, "mg_dt_pack at offset = total: *actual %lld, expected 0", (long long)actual);
    }

    ck = "pack pieces (cursor)";
    ran(ck);
    mg_dt_cursor *cur = NULL;
    int rc = mg_dt_cursor_create(t, T->count, 0, &cur);
    if (ECHECK(T, ck, rc, "mg_dt_cursor_create(offset 0)")) {
        pos = 0;
        ok = 1;
        memset(got, 0, (size_t)T->total);
        while (ok && pos < T->total) {
            MPI_Count len = piece_len(&T->rng, T->total - pos, T->total);
            MPI_Count expect = len < T->total - pos ? len : T->total - pos;
            unsigned char *tmp = piece_buf(len);
            MPI_Count actual = -1;
            rc = mg_dt_cursor_pack(cur, T->base, tmp, len, &actual);
            st.cursor_calls++;
            if (!ECHECK(T, ck, rc, "mg_dt_cursor_pack"))
                ok = 0;
            else if (actual != expect) {
                fail(T, ck, "cursor at %lld, max_bytes %lld: *actual %lld, expected %lld", (long long)pos,
                     (long long)len, (long long)actual, (long long)expect);
                ok = 0;
            } else {
                memcpy(got + pos, tmp, (size_t)actual);
                pos += actual;
                if (mg_dt_cursor_offset(cur) != pos) {
                    fail(T, ck, "mg_dt_cursor_offset %lld, expected %lld", (long long)mg_dt_cursor_offset(cur),
                         (long long)pos);
                    ok = 0;
                }
            }
        }
        if (ok) {
            same_stream(T, ck, got, 0, T->total, "cursor pieces");
            unsigned char tmp[8];
            MPI_Count actual = -1;
            rc = mg_dt_cursor_pack(cur, T->base, tmp, 8, &actual);
            if (ECHECK(T, ck, rc, "mg_dt_cursor_pack at the end") && actual != 0)
                fail(T, ck, "cursor at the end: *actual %lld, expected 0", (long long)actual);
        }
        mg_dt_cursor_free(cur);
    }

    ck = "pack from random offset";
    ran(ck);
    MPI_Count off = dtg_range(&T->rng, 0, T->total);
    if (dtg_chance(&T->rng, 30) && T->total > 0) {
        /* start inside a basic component */
        size_t c = (size_t)dtg_range(&T->rng, 0, (long)T->ncomps - 1);
        MPI_Count p = 0;
        for (size_t i = 0; i < c; i++) p += T->comps[i].len;
        off = p + (T->comps[c].len > 1 ? dtg_range(&T->rng, 1, T->comps[c].len - 1) : 0);
    }
    MPI_Count rest = T->total - off;
    unsigned char *tmp = xmalloc((size_t)rest);
    MPI_Count actual = -1;
    rc = mg_dt_pack(t, T->base, T->count, off, tmp, rest, &actual);
    if (ECHECK(T, ck, rc, "mg_dt_pack(random offset to end)")) {
        if (actual != rest)
            fail(T, ck, "offset %lld to end: *actual %lld, expected %lld", (long long)off, (long long)actual,
                 (long long)rest);
        else
            same_stream(T, ck, tmp, off, rest, "mg_dt_pack from a random offset");
    }
    cur = NULL;
    rc = mg_dt_cursor_create(t, T->count, off, &cur);
    if (ECHECK(T, ck, rc, "mg_dt_cursor_create(random offset)")) {
        if (mg_dt_cursor_offset(cur) != off)
            fail(T, ck, "new cursor at %lld reports offset %lld", (long long)off, (long long)mg_dt_cursor_offset(cur));
        pos = off;
        ok = 1;
        while (ok && pos < T->total) {
            MPI_Count len = piece_len(&T->rng, T->total - pos, T->total);
            MPI_Count expect = len < T->total - pos ? len : T->total - pos;
            unsigned char *p2 = piece_buf(len);
            actual = -1;
            rc = mg_dt_cursor_pack(cur, T->base, p2, len, &actual);
            st.cursor_calls++;
            if (!ECHECK(T, ck, rc, "mg_dt_cursor_pack(from random offset)"))
                ok = 0;
            else if (actual != expect) {
                fail(T, ck, "cursor from %lld at %lld: *actual %lld, expected %lld", (long long)off, (long long)pos,
                     (long long)actual, (long long)expect);
                ok = 0;
            } else {
                memcpy(got + pos, p2, (size_t)actual);
                pos += actual;
            }
        }
        if (ok && rest > 0) same_stream(T, ck, got + off, off, rest, "cursor from a random offset");
        mg_dt_cursor_free(cur);
    }
    free(tmp);
    free(got);
}

/* (d) unpack; out is the whole span, filled with the guard pattern. */
static int verify_unpacked(tcase *T, const char *check, const unsigned char *out, const char *what)
{
    st.bytes += T->span;
    for (MPI_Aint i = 0; i < T->span; i++) {
        unsigned char want = T->covered[i] ? T->buf[i] : guard_byte(i);
        if (out[i] != want) {
            fail(T, check,
                 "%s: memory byte at offset %ld from base (%s by the typemap): expected 0x%02x, "
                 "got 0x%02x",
                 what, (long)(i + T->min_off), T->covered[i] ? "covered" : "NOT covered", want, out[i]);
            return 0;
        }
    }
    return 1;
}

static void fill_guard(unsigned char *out, MPI_Aint span)
{
    for (MPI_Aint i = 0; i < span; i++) out[i] = guard_byte(i);
}

static void check_unpack(tcase *T, mg_dt *t)
{
    if (T->overlap) {
        st.unpack_skipped_overlap++;
        return;
    }
    st.unpack_checked++;
    unsigned char *out = xmalloc((size_t)T->span);
    unsigned char *obase = out - T->min_off;
    const char *ck = "unpack whole";
    ran(ck);
    fill_guard(out, T->span);
    MPI_Count actual = -1;
    int rc = mg_dt_unpack(t, T->stream, T->total, 0, obase, T->count, &actual);
    if (ECHECK(T, ck, rc, "mg_dt_unpack(whole)")) {
        if (actual != T->total)
            fail(T, ck, "*actual %lld, expected %lld", (long long)actual, (long long)T->total);
        else
            verify_unpacked(T, ck, out, "whole");
    }

    ck = "unpack pieces (offsets)";
    ran(ck);
    fill_guard(out, T->span);
    MPI_Count pos = 0;
    int ok = 1;
    while (ok && pos < T->total) {
        MPI_Count len = piece_len(&T->rng, T->total - pos, T->total);
        MPI_Count expect = len < T->total - pos ? len : T->total - pos;
        unsigned char *in = piece_buf(len);
        memset(in, 0x5C, (size_t)len);
        memcpy(in, T->stream + pos, (size_t)expect);
        actual = -1;
        rc = mg_dt_unpack(t, in, len, pos, obase, T->count, &actual);
        st.pieces++;
        if (!ECHECK(T, ck, rc, "mg_dt_unpack(piece)"))
            ok = 0;
        else if (actual != expect) {
            fail(T, ck, "piece at offset %lld, in_bytes %lld: *actual %lld, expected %lld", (long long)pos,
                 (long long)len, (long long)actual, (long long)expect);
            ok = 0;
        } else
            pos += actual;
    }
    if (ok) verify_unpacked(T, ck, out, "pieces at offsets");

    ck = "unpack pieces (cursor)";
    ran(ck);
    fill_guard(out, T->span);
    mg_dt_cursor *cur = NULL;
    rc = mg_dt_cursor_create(t, T->count, 0, &cur);
    if (ECHECK(T, ck, rc, "mg_dt_cursor_create")) {
        pos = 0;
        ok = 1;
        while (ok && pos < T->total) {
            MPI_Count len = piece_len(&T->rng, T->total - pos, T->total);
            MPI_Count expect = len < T->total - pos ? len : T->total - pos;
            unsigned char *in = piece_buf(len);
            memset(in, 0x5C, (size_t)len);
            memcpy(in, T->stream + pos, (size_t)expect);
            actual = -1;
            rc = mg_dt_cursor_unpack(cur, in, len, obase, &actual);
            st.cursor_calls++;
            if (!ECHECK(T, ck, rc, "mg_dt_cursor_unpack"))
                ok = 0;
            else if (actual != expect) {
                fail(T, ck, "cursor at %lld, in_bytes %lld: *actual %lld, expected %lld", (long long)pos,
                     (long long)len, (long long)actual, (long long)expect);
                ok = 0;
            } else {
                pos += actual;
                if (mg_dt_cursor_offset(cur) != pos) {
                    fail(T, ck, "mg_dt_cursor_offset %lld, expected %lld", (long long)mg_dt_cursor_offset(cur),
                         (long long)pos);
                    ok = 0;
                }
            }
        }
        if (ok) verify_unpacked(T, ck, out, "cursor pieces");
        mg_dt_cursor_free(cur);
    }
    free(out);
}

/* lb/extent of contiguous(count, top) as the standard defines them (typemap
 * with markers, alignment epsilon), from the top's lb/extent as MPI has them. */
static void std_contig_bounds(const dtg_node *top, MPI_Count count, MPI_Count *lb, MPI_Count *ext)
{
    MPI_Aint E = top->ub - top->lb, lo = 0, hi = 0;
    *lb = *ext = 0;
    if (count == 0) return;
    MPI_Aint k0 = 0, k1 = (MPI_Aint)(count - 1) * E; /* shifts of the first and last element */
    MPI_Aint smin = k0 < k1 ? k0 : k1, smax = k0 < k1 ? k1 : k0;
    if (top->has_mk) {
        lo = smin + top->lb;
        hi = smax + top->ub;
    } else if (!top->empty) {
        lo = smin + top->tlb;
        MPI_Aint th = smax + top->tub, a = top->align, x = th - lo;
        hi = lo + (a > 1 && x % a ? x + (a - x % a) : x);
    }
    *lb = lo;
    *ext = hi - lo;
}

/* lb/extent of `type` equal those of MPI_Type_contiguous(count, T->type). Where
 * MPI's differ from the standard's and `type` has the standard's, it is a
 * soft note (MPICH makes any zero-size contiguous type lb 0, extent 0). */
static void check_contig_bounds(tcase *T, const char *check, MPI_Datatype type, MPI_Count count, const char *what)
{
    MPI_Datatype ct;
    MPI_Count lb1, ex1, lb2, ex2, lb3, ex3;
    if (MPI_Type_contiguous((int)count, T->type, &ct) != MPI_SUCCESS) return;
    MPI_Type_get_extent_x(ct, &lb1, &ex1);
    MPI_Type_get_extent_x(type, &lb2, &ex2);
    MPI_Type_free(&ct);
    if (lb1 == lb2 && ex1 == ex2) return;
    std_contig_bounds(T->top, count, &lb3, &ex3);
    if ((lb2 == lb3 && ex2 == ex3) || T->size == 0)
        soft_note(T, check,
                  "%s has lb %lld extent %lld, MPI_Type_contiguous(%lld, type) lb %lld extent %lld, "
                  "the standard's contiguous lb %lld extent %lld%s",
                  what, (long long)lb2, (long long)ex2, (long long)count, (long long)lb1, (long long)ex1,
                  (long long)lb3, (long long)ex3, T->size == 0 ? " (a type without data)" : "");
    else
        fail(T, check,
             "%s: lb %lld extent %lld, MPI_Type_contiguous(%lld, type) has lb %lld extent %lld"
             " (standard: lb %lld extent %lld)",
             what, (long long)lb2, (long long)ex2, (long long)count, (long long)lb1, (long long)ex1, (long long)lb3,
             (long long)ex3);
}

/* Pack one element of `type` (count elements' worth) through MPI and through
 * a fresh mg_dt; both must give the reference stream. */
static void stack_disagreement(tcase *T, const dtg_node *c, const char *cnot, const char *where);
static void record_disagreement(tcase *T, const char *cat, const char *cnot);

/* MPI_Pack of a type the engine built (mg_dt_to_mpi) or parsed (mg_dt_parse)
 * disagrees with the reference. Is the stack at fault? The type's text (the
 * engine's describe_count, or the parsed text) is rebuilt with the generator's
 * parser: if the MPI definitions applied to it give the reference bytes, and
 * MPI packs a node of it wrongly although it packs that node's children right,
 * the stack is wrong (as on Open MPI, which packs a vector with a stride of
 * -1 byte as contiguous). Returns 1 if so (and records it); else 0 with the
 * reason in `why`. */
static int stack_at_fault(tcase *T, const char *text, int count, MPI_Count nbytes, char *why, size_t len)
{
    static dtg_gen *sg; /* scratch generator: no avoidance, statistics discarded */
    if (!sg) sg = calloc(1, sizeof *sg);
    if (!sg || !text) {
        snprintf(why, len, "no text of the type to analyze");
        return 0;
    }
    if (strstr(text, "entries")) {
        snprintf(why, len, "the engine's text of the type is abbreviated");
        return 0;
    }
    dtg_node *R = dtg_parse(sg, text);
    sg->errors = 0;
    if (!R) {
        snprintf(why, len, "the generator cannot rebuild the text: %.150s", sg->err);
        return 0;
    }
    int res = 0;
    MPI_Aint E = R->ub - R->lb;
    MPI_Count p = 0;
    int same = R->size * count == nbytes;
    for (int k = 0; k < count && same; k++)
        for (size_t c = 0; c < R->nmap && same; c++) {
            MPI_Aint off = k * E + R->map[c].off, l = R->map[c].len;
            if (off < T->min_off || off + l > T->min_off + T->span ||
                memcmp(T->base + off, T->stream + p, (size_t)l) != 0)
                same = 0;
            p += l;
        }
    if (!same) {
        snprintf(why, len, "the MPI definitions applied to the engine's text do not give the type's bytes");
    } else {
        dtg_node *c = culprit(R, &T->rng);
        int count_issue = 0;
        if (!c && count > 1) {
            int save = soft_mode, save_failed = soft_failed;
            char save_msg[sizeof soft_msg];
            memcpy(save_msg, soft_msg, sizeof soft_msg);
            soft_mode = 1;
            soft_failed = 0;
            check_mpi_pack(T, R->mpi, count, nbytes, "classify", "rebuilt text");
            count_issue = soft_failed;
            soft_mode = save;
            soft_failed = save_failed;
            memcpy(soft_msg, save_msg, sizeof soft_msg);
        }
        if (c || count_issue) {
            char *cs = c ? dtg_print(c) : NULL;
            T->engine_text = text;
            stack_disagreement(T, c, cs, "in a type the engine built: ");
            T->engine_text = NULL;
            free(cs);
            res = 1;
        } else {
            snprintf(why, len, "MPI packs the engine's text right; the engine's MPI type is not its text");
        }
    }
    dtg_free(R);
    return res;
}

/* MPI_Pack of a type the engine built disagrees with the reference: does it
 * have a form class (dt.h) this library packs wrongly, one that a known bug
 * listed for the library names (tests/c/known_bugs.c)? libmpiguide-tune never
 * hands such a type to MPI. Returns 1 if so (and records it); else 0 with
 * the reason in `why`: a refused class no known bug names is a new bug. */
static int refused_form(tcase *T, MPI_Datatype type, int count, char *why, size_t len)
{
    mg_dt_form_class cs[64];
    int n = 0;
    if (mg_dt_form_classes(type, count > 1, cs, 64, &n) != MG_DT_SUCCESS) {
        snprintf(why, len, "its form classes cannot be told");
        return 0;
    }
    snprintf(why, len, "MPI packs every form class of it right on its own");
    for (int i = 0; i < n; i++) {
        int right = 1;
        char name[256], inst[512], cat[224];
        if (mg_dt_form_class_probe(&cs[i], &right) != MG_DT_SUCCESS || right) continue;
        mg_dt_form_class_name(&cs[i], name, sizeof name);
        mg_dt_form_class_instance(&cs[i], inst, sizeof inst);
        const mg_known_bug *b = mg_known_bug_refusing(name);
        if (!b) {
            snprintf(why, len, "this library packs its form class '%.120s' wrongly (%.160s), which no known bug "
                               "listed for it names (tests/c/known_bugs.c)", name, inst);
            return 0;
        }
        snprintf(cat, sizeof cat, "in a type the engine built: form class %.100s (known bug %.40s)", name, b->name);
        record_disagreement(T, cat, inst);
        return 1;
    }
    return 0;
}

/* The describe_count text of t, or NULL. */
static char *describe_count_text(mg_dt *t, MPI_Count count)
{
    for (size_t len = 4096; len <= (64u << 20); len *= 8) {
        char *s = xmalloc(len);
        int rc = mg_dt_describe_count(t, count, s, len);
        if (rc == MG_DT_SUCCESS) return s;
        free(s);
        if (rc != MG_DT_ERR_TRUNCATED) return NULL;
    }
    return NULL;
}

/* check_mpi_pack for a type the engine built or parsed; a disagreement the
 * stack is at fault for is recorded, not failed. `text`: the type's notation,
 * or NULL to use describe_count of `t`. */
static void check_engine_type_pack(tcase *T, MPI_Datatype type, int count, MPI_Count nbytes, const char *check,
                                   const char *what, const char *text, mg_dt *t)
{
    soft_mode = 1;
    soft_failed = 0;
    check_mpi_pack(T, type, count, nbytes, check, what);
    soft_mode = 0;
    if (!soft_failed) return;
    char msg[sizeof soft_msg], why[768];
    memcpy(msg, soft_msg, sizeof msg);
    char *own = text ? NULL : describe_count_text(t, T->count);
    int stack = stack_at_fault(T, text ? text : own, count, nbytes, why, sizeof why);
    if (!stack) {
        char why2[512];
        stack = refused_form(T, type, count, why2, sizeof why2);
        if (!stack) snprintf(why + strlen(why), sizeof why - strlen(why), "; %.200s", why2);
    }
    if (!stack) fail(T, check, "%s [%s]; text: %.300s", msg, why, text ? text : own ? own : "?");
    free(own);
}

static void check_one_element_type(tcase *T, const char *check, MPI_Datatype type, const char *what, const char *text,
                                   mg_dt *t)
{
    MPI_Count sz = -1;
    MPI_Type_size_x(type, &sz);
    if (sz != T->total) {
        fail(T, check, "%s: MPI_Type_size_x %lld, expected %lld", what, (long long)sz, (long long)T->total);
        return;
    }
    check_engine_type_pack(T, type, 1, T->total, check, what, text, t);
}

/* One form of mg_dt_to_mpi_form (MG_DT_FORM_AUTO: mg_dt_to_mpi itself). */
static void check_to_mpi_form(tcase *T, mg_dt *t, int form, const char *fname)
{
    const char *ck = "to_mpi";
    char what[160];
    MPI_Datatype nt = MPI_DATATYPE_NULL;
    int rc = form == MG_DT_FORM_AUTO ? mg_dt_to_mpi(t, T->count, &nt) : mg_dt_to_mpi_form(t, T->count, form, &nt);
    snprintf(what, sizeof what, "mg_dt_to_mpi (%s form)", fname);
    if (!ECHECK(T, ck, rc, what)) return;
    check_contig_bounds(T, ck, nt, T->count, what);
    snprintf(what, sizeof what, "MPI_Pack of one element of mg_dt_to_mpi(t, count) (%s form)", fname);
    check_one_element_type(T, ck, nt, what, NULL, t);
    mg_dt *t2 = NULL;
    rc = mg_dt_from_mpi(nt, &t2);
    snprintf(what, sizeof what, "mg_dt_from_mpi(mg_dt_to_mpi(t, count)) (%s form)", fname);
    if (ECHECK(T, ck, rc, what)) {
        if (mg_dt_size(t2) != T->total)
            fail(T, ck, "mg_dt_size of the rebuilt type (%s form) %lld, expected %lld", fname,
                 (long long)mg_dt_size(t2), (long long)T->total);
        unsigned char *out = xmalloc((size_t)T->total);
        MPI_Count actual = -1;
        rc = mg_dt_pack(t2, T->base, 1, 0, out, T->total, &actual);
        if (ECHECK(T, ck, rc, "mg_dt_pack of the rebuilt type")) {
            if (actual != T->total)
                fail(T, ck, "rebuilt type (%s form): *actual %lld, expected %lld", fname, (long long)actual,
                     (long long)T->total);
            else
                same_stream(T, ck, out, 0, T->total, "mg_dt_from_mpi(to_mpi) pack");
        }
        free(out);
        mg_dt_free(t2);
    }
    if (nt != MPI_DATATYPE_NULL) MPI_Type_free(&nt);
}

/* mg_dt_to_mpi and each form it can build (dt.h), whichever the stack gets. */
static void check_to_mpi(tcase *T, mg_dt *t)
{
    ran("to_mpi");
    check_to_mpi_form(T, t, MG_DT_FORM_AUTO, "auto");
    check_to_mpi_form(T, t, MG_DT_FORM_VECTOR, "vector");
    check_to_mpi_form(T, t, MG_DT_FORM_RESIZED, "resized");
    check_to_mpi_form(T, t, MG_DT_FORM_LIST, "list");
    check_to_mpi_form(T, t, MG_DT_FORM_COPIES, "copies");
}

/* Text of describe/describe_count/program, growing the buffer on truncation. */
static char *engine_text(tcase *T, const char *check, mg_dt *t, int which, MPI_Count count)
{
    size_t len = 4096;
    for (;;) {
        char *s = xmalloc(len);
        int rc = which == 0   ? mg_dt_describe(t, s, len)
                 : which == 1 ? mg_dt_describe_count(t, count, s, len)
                              : mg_dt_program(t, count, s, len);
        if (rc == MG_DT_ERR_TRUNCATED && len < (64u << 20)) {
            if (strlen(s) >= len) fail(T, check, "truncated text is not NUL-terminated");
            free(s);
            len *= 8;
            continue;
        }
        const char *fn = which == 0 ? "mg_dt_describe" : which == 1 ? "mg_dt_describe_count" : "mg_dt_program";
        if (!ECHECK(T, check, rc, fn)) {
            free(s);
            return NULL;
        }
        if (!s[0]) {
            fail(T, check, "%s returned an empty text", fn);
            free(s);
            return NULL;
        }
        return s;
    }
}

/* Parse `text` and check the type packs like the reference: `one`: one
 * element of it is `count` elements of the type (describe_count, whose lb and
 * extent are mg_dt_to_mpi's, those the standard gives count copies); otherwise it is one element of the type
 * (describe, the generator's notation), with the type's lb and extent as MPI
 * reports them. `engine`: the text is the engine's (describe, describe_count):
 * its true lb/extent must be those of the data, and describing the parsed type
 * must give the same text again (the round trip). */
static long describe_abbreviated, round_trips;

static void check_parsed(tcase *T, const char *check, const char *text, MPI_Count count, int one, mg_dt *engine)
{
    if (engine && strstr(text, "entries")) {
        describe_abbreviated++; /* long lists are abbreviated: for reading only */
        return;
    }
    MPI_Datatype pt = MPI_DATATYPE_NULL;
    char err[256] = "";
    int rc = mg_dt_parse(text, &pt, err, sizeof err);
    if (rc != MG_DT_SUCCESS) {
        fail(T, check, "mg_dt_parse returned %d (%s): %s; text: %.300s", rc, mg_dt_strerror(rc), err, text);
        return;
    }
    if (MPI_Type_commit(&pt) != MPI_SUCCESS) {
        fail(T, check, "MPI_Type_commit of the parsed type failed");
        return;
    }
    MPI_Count sz = -1, lb, ex, tlb, tex, want_lb = T->top->mpi_lb, want_ex = T->top->mpi_ext;
    MPI_Type_size_x(pt, &sz);
    MPI_Type_get_extent_x(pt, &lb, &ex);
    MPI_Type_get_true_extent_x(pt, &tlb, &tex);
    if (one) {
        /* mg_dt_to_mpi's: the copies of [lb, lb + extent) at k * extent, k < count
         * (check_to_mpi compares them with MPI_Type_contiguous) */
        MPI_Count e = T->top->mpi_ext, span = count ? (count - 1) * e : 0;
        want_lb = count ? T->top->mpi_lb + (e < 0 ? span : 0) : 0;
        want_ex = count ? T->top->mpi_lb + e + (e > 0 ? span : 0) - want_lb : 0;
    }
    /* the data's true bounds (the reference typemap) */
    MPI_Count want_tlb = one ? T->min_off : T->top->tlb, want_tex = one ? T->span : T->top->tub - T->top->tlb;
    MPI_Count want_sz = one ? T->total : T->size;
    if (sz != want_sz) {
        fail(T, check, "parsed type size %lld, expected %lld; text: %.300s", (long long)sz, (long long)want_sz, text);
    } else if (lb != want_lb || ex != want_ex) {
        fail(T, check, "parsed type lb %lld extent %lld, expected %lld %lld; text: %.300s", (long long)lb,
             (long long)ex, (long long)want_lb, (long long)want_ex, text);
    } else if (engine && sz > 0 && (tlb != want_tlb || tex != want_tex)) {
        fail(T, check, "parsed type true lb %lld true extent %lld, the data's %lld %lld; text: %.300s", (long long)tlb,
             (long long)tex, (long long)want_tlb, (long long)want_tex, text);
    } else {
        check_engine_type_pack(T, pt, one ? 1 : (int)count, T->total, check, "MPI_Pack of the parsed type", text, NULL);
    }
    if (engine) {
        /* describe -> parse -> describe gives the same text */
        ran("describe round trip");
        mg_dt *d2 = NULL;
        rc = mg_dt_from_mpi(pt, &d2);
        char *again = ECHECK(T, "describe round trip", rc, "mg_dt_from_mpi(parsed)")
                          ? engine_text(T, "describe round trip", d2, 0, 0)
                          : NULL;
        if (again && strcmp(again, text))
            fail(T, "describe round trip",
                 "%s text described again differs:\n          first  %.400s\n          again  %.400s",
                 one ? "describe_count" : "describe", text, again);
        else if (again)
            round_trips++;
        free(again);
        mg_dt_free(d2);
    }
    MPI_Type_free(&pt);
}

static void check_text(tcase *T, mg_dt *t)
{
    const char *ck = "describe+parse";
    ran(ck);
    char *s = engine_text(T, ck, t, 0, 0);
    if (s) check_parsed(T, ck, s, T->count, 0, t);
    free(s);
    ck = "describe_count+parse";
    ran(ck);
    s = engine_text(T, ck, t, 1, T->count);
    if (s) check_parsed(T, ck, s, T->count, 1, t);
    free(s);
    ck = "program";
    ran(ck);
    s = engine_text(T, ck, t, 2, T->count);
    free(s);
    ck = "parse(generator notation)";
    ran(ck);
    check_parsed(T, ck, T->notation, T->count, 0, NULL);
}

static void check_engine(tcase *T, mg_dt *t)
{
    const char *ck = "properties";
    ran(ck);
    if (mg_dt_size(t) != T->size)
        fail(T, ck, "mg_dt_size %lld, MPI_Type_size %lld", (long long)mg_dt_size(t), (long long)T->size);
    if (mg_dt_lb(t) != T->top->mpi_lb || mg_dt_extent(t) != T->top->mpi_ext)
        fail(T, ck, "mg_dt_lb/extent %lld/%lld, MPI lb/extent %ld/%ld", (long long)mg_dt_lb(t),
             (long long)mg_dt_extent(t), (long)T->top->mpi_lb, (long)T->top->mpi_ext);
    MPI_Count blocks = mg_dt_blocks(t);
    if (T->size > 0) {
        if (blocks < T->runs)
            fail(T, ck, "mg_dt_blocks %lld < %ld contiguous runs in the typemap", (long long)blocks, T->runs);
        else if (blocks == T->runs)
            st.blocks_equal_runs++;
        else
            st.blocks_more_than_runs++;
    }
    check_pack_whole(T, t);
    check_pack_pieces(T, t);
    check_unpack(T, t);
    check_to_mpi(T, t);
    check_text(T, t);
}
#endif

/* ------------------------------------------------------------- per type */

/* The stack's MPI_Pack disagrees with the reference. The culprit node's
 * children pack as the MPI definitions say and the node does not (or, with
 * no culprit, one element packs right and `count` elements do not): the stack
 * is wrong on something the standard defines, so the type is reported and
 * skipped on this stack. */
typedef struct {
    char category[224];
    char *example; /* of the smallest reproducer seen */
    size_t size;
    long count;
} disagreement;
static disagreement disagreements[32];
static int ndisagreements;
static long disagreeing_types;

static void stack_disagreement(tcase *T, const dtg_node *c, const char *cnot, const char *where)
{
    char cat[96];
    if (c)
        snprintf(cat, sizeof cat, "%s%s node", where, dtg_kind_name(c->kind));
    else
        snprintf(cat, sizeof cat, "%scount > 1 of a type that packs right with count 1", where);
    record_disagreement(T, cat, cnot);
}

/* One type MPI_Pack disagrees on, under category cat, with cnot the part at
 * fault in the notation (NULL: the type itself). */
static void record_disagreement(tcase *T, const char *cat, const char *cnot)
{
    disagreeing_types++;
    int i = 0;
    while (i < ndisagreements && strcmp(disagreements[i].category, cat) != 0) i++;
    if (i == ndisagreements) {
        if (ndisagreements == (int)(sizeof disagreements / sizeof disagreements[0])) return;
        ndisagreements++;
        snprintf(disagreements[i].category, sizeof disagreements[i].category, "%s", cat);
    }
    disagreements[i].count++;
    /* keep the smallest reproducer: the node at fault (or the type) shortest */
    const char *key = T->engine_text ? T->engine_text : cnot ? cnot : T->notation;
    size_t size = strlen(key ? key : "");
    if (disagreements[i].example && size >= disagreements[i].size) return;
    const char *fmt = "seed %" PRIu64 " index %ld count %lld: %.300s\n          node at fault: %.3000s\n"
                      "          type: %.3000s%s%.3000s";
    const char *ntext = cnot ? cnot : "(none: count > 1)";
    const char *et = T->engine_text ? "\n          engine's type (its describe_count): " : "";
    const char *etext = T->engine_text ? T->engine_text : "";
    int n = snprintf(NULL, 0, fmt, T->seed, T->index, (long long)T->count, soft_msg, ntext, T->notation, et, etext);
    char *ex = malloc((size_t)n + 1);
    if (!ex) return;
    snprintf(ex, (size_t)n + 1, fmt, T->seed, T->index, (long long)T->count, soft_msg, ntext, T->notation, et, etext);
    free(disagreements[i].example);
    disagreements[i].example = ex;
    disagreements[i].size = size;
}

static int strict_mode, verbose;

static const char *given_type; /* --type NOTATION */
static long given_count = -1;

static void run_type(dtg_gen *g, uint64_t seed, long index)
{
    tcase T;
    memset(&T, 0, sizeof T);
    T.seed = seed;
    T.index = index;
    dtg_seed(&g->rng, seed, (uint64_t)index);
    dtg_seed(&T.rng, seed ^ 0x5bd1e995u, (uint64_t)index);
    st.types++;
    T.top = given_type ? dtg_parse(g, given_type) : dtg_generate(g);
    if (!T.top) {
        T.notation = NULL;
        T.top = calloc(1, sizeof *T.top);
        fail(&T, "generator", "%s", g->err);
        free(T.top);
        g->err[0] = 0;
        g->errors = 0;
        return;
    }
    T.notation = dtg_print(T.top);
    if (g->errors) { /* a size/constructor problem in a discarded subtree */
        fail(&T, "generator", "%s", g->err);
        g->err[0] = 0;
        g->errors = 0;
    }
    int dev = dtg_any_deviation(T.top);
    if (dev) st.deviating_types++;
    if (dev && strict_mode) {
        st.skipped_strict++;
        free_case(&T);
        return;
    }
    T.count = choose_count(&T.rng, T.top);
    if (given_count >= 0) T.count = given_count;
    T.type = T.top->mpi;

#ifndef DTGEN_NO_ENGINE
    /* Decode before commit for half of the types: the engine takes both. */
    mg_dt *t = NULL;
    int early = T.top->kind != DTG_BASIC && dtg_chance(&T.rng, 50);
    int rc_early = early ? mg_dt_from_mpi(T.type, &t) : 0;
#endif
    if (T.top->kind != DTG_BASIC) MPI_Type_commit(&T.top->mpi);
    T.type = T.top->mpi;
    build_case(&T);
    if (verbose)
        printf("type %ld count %lld: %s\n  size %lld, MPI lb %ld extent %ld, standard lb %ld extent "
               "%ld, data %ld..%ld, span of count elements %ld%s\n",
               index, (long long)T.count, T.notation, (long long)T.size, (long)T.top->mpi_lb, (long)T.top->mpi_ext,
               (long)T.top->std_lb, (long)(T.top->std_ub - T.top->std_lb), (long)T.top->tlb, (long)T.top->tub,
               (long)T.span, T.overlap ? ", overlapping" : "");
    st.checked++;
    st.elements += (long)T.count;
    ran("reference vs MPI_Pack");
    soft_mode = 1;
    soft_failed = 0;
    check_mpi_pack(&T, T.type, (int)T.count, T.total, "reference vs MPI_Pack", "MPI_Pack of the stack");
    soft_mode = 0;
    if (soft_failed) {
        /* Find the constructor at fault: the deepest node whose MPI_Pack
         * disagrees with the definition applied to its children while every
         * child packs as defined. */
        dtg_node *c = culprit(T.top, &T.rng);
        if (!c && T.count <= 1) {
            /* every node packs right alone, yet the type does not: unexplained,
             * so it is a failure (of the reference or of the stack) */
            fail(&T, "reference vs MPI_Pack", "%s (no node at fault found)", soft_msg);
        } else {
            char *cs = c ? dtg_print(c) : NULL;
            stack_disagreement(&T, c, cs, "");
            free(cs);
        }
#ifndef DTGEN_NO_ENGINE
        if (t) mg_dt_free(t);
#endif
        free_case(&T);
        return;
    }

#ifndef DTGEN_NO_ENGINE
    int rc = early ? rc_early : mg_dt_from_mpi(T.type, &t);
    ran("from_mpi");
    if (rc != MG_DT_SUCCESS || !t) {
        fail(&T, "from_mpi", "mg_dt_from_mpi%s returned %d (%s)", early ? " (uncommitted type)" : "", rc,
             mg_dt_strerror(rc));
    } else {
        check_engine(&T, t);
    }
    if (t) mg_dt_free(t);
#endif
    free_case(&T);
}

/* ---------------------------------------------------------- error paths */

#ifndef DTGEN_NO_ENGINE
static long ep_fail;
#define EP(cond, ...)                                                            \
    do {                                                                         \
        ran("error paths");                                                      \
        if (!(cond)) {                                                           \
            ep_fail++;                                                           \
            st.failures++;                                                       \
            check_fail[check_id("error paths")]++;                               \
            printf("FAIL [error paths] %s:%d: %s: ", __FILE__, __LINE__, #cond); \
            printf(__VA_ARGS__);                                                 \
            printf("\n");                                                        \
        }                                                                        \
    } while (0)

static void test_error_paths(void)
{
    for (int c = 0; c < MG_DT_ERR_COUNT_; c++) {
        const char *s = mg_dt_strerror(c);
        EP(s && s[0], "mg_dt_strerror(%d) is NULL or empty", c);
    }
    EP(mg_dt_strerror(-1) != NULL, "mg_dt_strerror(-1) is NULL");
    EP(mg_dt_strerror(MG_DT_ERR_COUNT_ + 7) != NULL, "mg_dt_strerror(out of range) is NULL");

    mg_dt *t = NULL;
    int rc = mg_dt_from_mpi(MPI_DATATYPE_NULL, &t);
    EP(rc == MG_DT_ERR_ARG, "mg_dt_from_mpi(MPI_DATATYPE_NULL) returned %d", rc);
    if (rc == MG_DT_SUCCESS && t) mg_dt_free(t);
    rc = mg_dt_from_mpi(MPI_INT, NULL);
    EP(rc == MG_DT_ERR_ARG, "mg_dt_from_mpi(MPI_INT, NULL) returned %d", rc);

    /* vector(count=3, block=2, stride=4, int): 24 bytes per element */
    MPI_Datatype v;
    MPI_Type_vector(3, 2, 4, MPI_INT, &v);
    MPI_Type_commit(&v);
    t = NULL;
    rc = mg_dt_from_mpi(v, &t);
    EP(rc == MG_DT_SUCCESS && t, "mg_dt_from_mpi(vector) returned %d", rc);
    if (rc != MG_DT_SUCCESS || !t) {
        MPI_Type_free(&v);
        return;
    }
    int in[2 * 12];
    for (int i = 0; i < 24; i++) in[i] = i;
    unsigned char out[128];
    MPI_Count actual = -7;
    const MPI_Count total = 2 * 24;

    rc = mg_dt_pack(t, in, -1, 0, out, 8, &actual);
    EP(rc == MG_DT_ERR_ARG, "mg_dt_pack(incount -1) returned %d", rc);
    rc = mg_dt_pack(t, in, 2, total + 1, out, 8, &actual);
    EP(rc == MG_DT_ERR_OFFSET, "mg_dt_pack(offset beyond the stream) returned %d", rc);
    rc = mg_dt_pack(t, in, 2, 1000000, out, 8, &actual);
    EP(rc == MG_DT_ERR_OFFSET, "mg_dt_pack(offset far beyond) returned %d", rc);
    rc = mg_dt_pack(t, in, 0, 1, out, 8, &actual);
    EP(rc == MG_DT_ERR_OFFSET, "mg_dt_pack(count 0, offset 1) returned %d", rc);
    rc = mg_dt_pack(t, in, 2, -1, out, 8, &actual);
    EP(rc != MG_DT_SUCCESS, "mg_dt_pack(offset -1) returned success");
    actual = -7;
    memset(out, 0xEE, sizeof out);
    rc = mg_dt_pack(t, in, 2, 0, out, 0, &actual);
    EP(rc == MG_DT_SUCCESS && actual == 0, "mg_dt_pack(max_bytes 0) returned %d, *actual %lld", rc, (long long)actual);
    EP(out[0] == 0xEE, "mg_dt_pack(max_bytes 0) wrote to outbuf");
    actual = -7;
    rc = mg_dt_pack(t, in, 2, total, out, 8, &actual);
    EP(rc == MG_DT_SUCCESS && actual == 0, "mg_dt_pack(offset = total) returned %d, *actual %lld", rc,
       (long long)actual);
    rc = mg_dt_pack(t, in, 2, 0, out, -1, &actual);
    EP(rc != MG_DT_SUCCESS || actual == 0, "mg_dt_pack(max_bytes -1) returned success with *actual %lld",
       (long long)actual);
    rc = mg_dt_pack(NULL, in, 2, 0, out, 8, &actual);
    EP(rc == MG_DT_ERR_ARG, "mg_dt_pack(NULL type) returned %d", rc);
    rc = mg_dt_pack(t, in, 2, 0, out, 8, NULL);
    EP(rc == MG_DT_ERR_ARG, "mg_dt_pack(actual NULL) returned %d", rc);

    rc = mg_dt_unpack(t, out, 8, 0, in, -1, &actual);
    EP(rc == MG_DT_ERR_ARG, "mg_dt_unpack(outcount -1) returned %d", rc);
    rc = mg_dt_unpack(t, out, 8, total + 1, in, 2, &actual);
    EP(rc == MG_DT_ERR_OFFSET, "mg_dt_unpack(offset beyond) returned %d", rc);
    actual = -7;
    rc = mg_dt_unpack(t, out, 0, 0, in, 2, &actual);
    EP(rc == MG_DT_SUCCESS && actual == 0, "mg_dt_unpack(in_bytes 0) returned %d, *actual %lld", rc, (long long)actual);
    rc = mg_dt_unpack(t, out, 8, 0, in, 2, NULL);
    EP(rc == MG_DT_ERR_ARG, "mg_dt_unpack(actual NULL) returned %d", rc);
    rc = mg_dt_unpack(NULL, out, 8, 0, in, 2, &actual);
    EP(rc == MG_DT_ERR_ARG, "mg_dt_unpack(NULL type) returned %d", rc);

    mg_dt_cursor *c = NULL;
    rc = mg_dt_cursor_create(t, -1, 0, &c);
    EP(rc == MG_DT_ERR_ARG, "mg_dt_cursor_create(count -1) returned %d", rc);
    if (rc == MG_DT_SUCCESS && c) mg_dt_cursor_free(c);
    c = NULL;
    rc = mg_dt_cursor_create(t, 2, total + 1, &c);
    EP(rc == MG_DT_ERR_OFFSET, "mg_dt_cursor_create(offset beyond) returned %d", rc);
    if (rc == MG_DT_SUCCESS && c) mg_dt_cursor_free(c);
    rc = mg_dt_cursor_create(t, 2, 0, NULL);
    EP(rc == MG_DT_ERR_ARG, "mg_dt_cursor_create(out NULL) returned %d", rc);
    c = NULL;
    rc = mg_dt_cursor_create(t, 2, 0, &c);
    EP(rc == MG_DT_SUCCESS && c, "mg_dt_cursor_create returned %d", rc);
    if (c) {
        actual = -7;
        rc = mg_dt_cursor_pack(c, in, out, 0, &actual);
        EP(rc == MG_DT_SUCCESS && actual == 0 && mg_dt_cursor_offset(c) == 0,
           "mg_dt_cursor_pack(max_bytes 0) returned %d, *actual %lld", rc, (long long)actual);
        rc = mg_dt_cursor_pack(c, in, out, 8, NULL);
        EP(rc == MG_DT_ERR_ARG, "mg_dt_cursor_pack(actual NULL) returned %d", rc);
        mg_dt_cursor_free(c);
    }

    MPI_Datatype nt = MPI_DATATYPE_NULL;
    rc = mg_dt_to_mpi(t, -1, &nt);
    EP(rc == MG_DT_ERR_ARG, "mg_dt_to_mpi(count -1) returned %d", rc);
    if (rc == MG_DT_SUCCESS && nt != MPI_DATATYPE_NULL) MPI_Type_free(&nt);
    rc = mg_dt_to_mpi(t, 1, NULL);
    EP(rc == MG_DT_ERR_ARG, "mg_dt_to_mpi(out NULL) returned %d", rc);
    nt = MPI_DATATYPE_NULL;
    rc = mg_dt_to_mpi(t, 0, &nt);
    EP(rc == MG_DT_SUCCESS, "mg_dt_to_mpi(count 0) returned %d", rc);
    if (rc == MG_DT_SUCCESS && nt != MPI_DATATYPE_NULL) {
        MPI_Count sz = -1;
        MPI_Type_size_x(nt, &sz);
        EP(sz == 0, "mg_dt_to_mpi(count 0) has size %lld", (long long)sz);
        MPI_Type_free(&nt);
    }

    char small[4];
    rc = mg_dt_describe(t, small, sizeof small);
    EP(rc == MG_DT_ERR_TRUNCATED && memchr(small, 0, sizeof small) != NULL, "mg_dt_describe into 4 bytes returned %d",
       rc);
    MPI_Datatype pt = MPI_DATATYPE_NULL;
    char err[128] = "";
    rc = mg_dt_parse("vector(count=2, block=1, stride=3, nosuchtype)", &pt, err, sizeof err);
    EP(rc == MG_DT_ERR_PARSE && err[0], "mg_dt_parse(unknown basic) returned %d (errbuf '%s')", rc, err);
    if (rc == MG_DT_SUCCESS) MPI_Type_free(&pt);
    rc = mg_dt_parse("vector(count=2, block=1, stride=3, int", &pt, err, sizeof err);
    EP(rc == MG_DT_ERR_PARSE, "mg_dt_parse(unclosed) returned %d", rc);
    if (rc == MG_DT_SUCCESS) MPI_Type_free(&pt);

    mg_dt_free(t);
    MPI_Type_free(&v);
}
#endif

/* ------------------------------------------------------------------ main */

static long env_long(const char *name, long dflt)
{
    const char *s = getenv(name);
    return s && *s ? strtol(s, NULL, 0) : dflt;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    setvbuf(stdout, NULL, _IOLBF, 0);

    long ntypes = env_long("MG_DT_RANDOM_NTYPES", 10000);
    uint64_t seed = (uint64_t)time(NULL) * 2654435761u ^ (uint64_t)clock();
    const char *se = getenv("MG_DT_RANDOM_SEED");
    if (se && *se) seed = strtoull(se, NULL, 0);
    long first = 0;
    if (argc > 2 && strcmp(argv[1], "--type") == 0) {
        /* test_dt_random --type NOTATION [count [seed]]: one given type */
        given_type = argv[2];
        ntypes = 1;
        given_count = argc > 3 ? strtol(argv[3], NULL, 0) : 1;
        if (argc > 4) seed = strtoull(argv[4], NULL, 0);
    } else {
        if (argc > 1) ntypes = strtol(argv[1], NULL, 0);
        if (argc > 2) seed = strtoull(argv[2], NULL, 0);
        if (argc > 3) first = strtol(argv[3], NULL, 0);
    }
    strict_mode = env_long("MG_DT_RANDOM_STRICT", 0) != 0;
    verbose = env_long("MG_DT_RANDOM_VERBOSE", 0) != 0;
    max_detailed_per_check = env_long("MG_DT_RANDOM_DETAILS", 3);

    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int liblen = 0;
    MPI_Get_library_version(lib, &liblen);
    char *nl = strchr(lib, '\n');
    if (nl) *nl = 0;
    if (rank == 0)
        printf("test_dt_random: %ld types from index %ld, seed %" PRIu64 " (replay: test_dt_random %ld %" PRIu64
               " %ld)%s\nMPI: %.120s\n",
               ntypes, first, seed, ntypes, seed, first, strict_mode ? ", strict" : "", lib);

    double t0 = MPI_Wtime();
    dtg_init_basics();
    dtg_probe_basics(0);
#ifndef DTGEN_NO_ENGINE
    test_error_paths();
#endif
    dtg_gen *g = calloc(1, sizeof *g);
    if (!g) abort();
    /* The crashes and the wrong packing of the libraries listed with them in
     * tests/c/known_bugs.c (dtgen.h): such nodes are not generated there. */
    g->avoid_zero_block_member = mg_known_bug_listed("mpich-zero-block-member");
    g->avoid_stride_minus1 = mg_known_bug_listed("ompi-hvector-minus-one");
    g->avoid_indexed_zero_extent = mg_known_bug_listed("impi-indexed-zero-extent");
    for (long i = first; i < first + ntypes; i++) run_type(g, seed, i);
    double t1 = MPI_Wtime();

    if (ld_pad_streams)
        printf("note: this MPI's MPI_Pack did not copy the padding bytes %d..%d of long double in "
               "%ld streams (%ld bytes); those bytes were not compared with MPI_Pack (the engine is "
               "checked on all bytes)\n",
               DTG_LDBL_VALUE_BYTES, (int)sizeof(long double) - 1, ld_pad_streams, ld_pad_bytes);
    if (g->avoided)
        printf("note: %ld structs not generated on this stack: its MPI_Pack crashes (SIGFPE) on a "
               "struct whose member is a zero-blocklength vector/hvector/(h)indexed_block of a "
               "derived type, e.g. struct(blocks=[1, 1], displs=[30, 90], "
               "types=[hindexed_block(block=0, displs=[0, 5, 9], hvector(count=2, block=2, stride=3, "
               "char)), float]) (known bug mpich-zero-block-member); first avoided here: %s\n",
               g->avoided, g->avoided_example);
    if (g->avoided_m1)
        printf("note: %ld vector/hvector nodes not generated on this stack: with a stride of -1 byte "
               "its MPI_Pack packs them as contiguous and reads beyond the typemap, e.g. "
               "hvector(count=2, block=1, stride=-1, char) packs offsets 0, 1 instead of 0, -1 (known bug "
               "ompi-hvector-minus-one); first avoided here: %s\n",
               g->avoided_m1, g->avoided_m1_example);
    if (g->avoided_ie)
        printf("note: %ld indexed nodes not generated on this stack: its MPI_Pack crashes (SIGSEGV) on an indexed "
               "type of 3 or more blocks of unequal lengths of an element of extent 0 (known bug "
               "impi-indexed-zero-extent); first avoided here: %s\n",
               g->avoided_ie, g->avoided_ie_example);
    if (g->refused)
        printf("note: %ld darray nodes refused by this stack (MPI_ERR_TYPE for a zero-size oldtype, "
               "which the standard allows); not generated. First: %s\n",
               g->refused, g->refused_example);
    if (ndisagreements) {
        printf("This MPI's MPI_Pack disagrees with the MPI definitions on %ld types (skipped; "
               "smallest reproducer of each kind below; the node at fault is packed wrongly although "
               "its children are packed right):\n",
               disagreeing_types);
        for (int i = 0; i < ndisagreements; i++) {
            printf("  note: %ld x %s\n        e.g. %s\n", disagreements[i].count, disagreements[i].category,
                   disagreements[i].example);
            free(disagreements[i].example);
        }
    }
    if (g->nnotes) {
        printf("Deviations of this MPI from the standard's lb/extent or true extent, by constructor "
               "(not failures: the reference follows the library at these nodes%s; "
               "MG_DT_RANDOM_VERBOSE=1 shows an example of each):\n",
               strict_mode ? ", strict mode skips the types" : "");
        for (int i = 0; i < g->nnotes; i++) {
            printf("  note: %ld x %s\n", g->notes[i].count, g->notes[i].category);
            if (verbose) printf("        e.g. %s\n", g->notes[i].example);
        }
    }
#ifndef DTGEN_NO_ENGINE
    for (int i = 0; i < 16 && softnotes[i].key; i++)
        printf("soft: %ld x [%s] lb/extent differ from MPI's (not counted as failures; the bytes "
               "were compared):\n        e.g. %s\n",
               softnotes[i].count, softnotes[i].key, softnotes[i].example);
#endif
#ifndef DTGEN_NO_ENGINE
    if (describe_abbreviated)
        printf("note: %ld describe texts abbreviate long lists (docs/dt-engine.md: for reading, "
               "they do not parse back); not parsed\n",
               describe_abbreviated);
    printf("round trips: %ld describe/describe_count texts parsed and described again to the same text\n", round_trips);
#endif
    printf("checks:");
    for (int i = 0; i < NCHECKS && check_names[i]; i++)
        printf(" %s=%ld%s", check_names[i], check_runs[i], check_fail[i] ? "(FAILED)" : "");
    printf("\n");
    printf("details: unpack checked on %ld types, skipped on %ld with overlapping typemaps; "
           "%ld pieces, %ld cursor calls; mg_dt_blocks == typemap runs on %ld types, more on %ld; "
           "pair types %ld, negative extents %ld, zero-count constructors %ld, large counts %ld, "
           "subarray c/fortran %ld/%ld, darray c/fortran %ld/%ld, darray dims block/cyclic/none "
           "%ld/%ld/%ld\n",
           st.unpack_checked, st.unpack_skipped_overlap, st.pieces, st.cursor_calls, st.blocks_equal_runs,
           st.blocks_more_than_runs, g->pair_types, g->neg_extent, g->zero_count_ctor, g->large_count,
           g->subarray_order[0], g->subarray_order[1], g->darray_order[0], g->darray_order[1], g->darray_distrib[0],
           g->darray_distrib[1], g->darray_distrib[2]);
    printf("dt_random: seed %" PRIu64 ", %ld types (%ld checked, %ld deviating from the standard's "
           "lb/extent%s, %ld skipped), %ld elements, ctors:",
           seed, st.types, st.checked, st.deviating_types, strict_mode ? "" : " followed", st.skipped_strict,
           st.elements);
    for (int k = 0; k < DTG_NKINDS; k++) printf(" %s=%ld", dtg_kind_name(k), g->hist[k]);
    printf(", %.1f MB compared, %.1f s, %ld failures (%ld types)\n", st.bytes / 1e6, t1 - t0, st.failures,
           st.failed_types);
    free(g);
#ifndef DTGEN_NO_ENGINE
    piece_buf_release();
#endif
    int failed = st.failures > 0;
    MPI_Finalize();
    return failed ? 1 : 0;
}
