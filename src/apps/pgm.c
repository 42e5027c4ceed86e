/* Stencil applications: PGM reading and writing (see pgm.h). */
#include "pgm.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *mg_pgm_strerror(mg_pgm_status st)
{
    switch (st) {
    case MG_PGM_OK: return "success";
    case MG_PGM_EIO: return "I/O error";
    case MG_PGM_EMAGIC: return "bad magic number";
    case MG_PGM_EHEADER: return "bad header";
    case MG_PGM_EMAXVAL: return "maxval out of range";
    case MG_PGM_ETRUNC: return "truncated data";
    case MG_PGM_EDATA: return "bad sample";
    case MG_PGM_ENOMEM: return "out of memory";
    case MG_PGM_EARG: return "invalid argument";
    }
    return "unknown error";
}

/* Formats "<path>: <kind>: <details>" into err; returns st. */
#if defined(__GNUC__)
__attribute__((format(printf, 5, 6)))
#endif
static mg_pgm_status
fail(mg_pgm_status st, char *err, size_t errlen, const char *path, const char *fmt, ...)
{
    if (err && errlen > 0) {
        int n = snprintf(err, errlen, "%s: %s: ", path ? path : "(null)", mg_pgm_strerror(st));
        if (n >= 0 && (size_t)n < errlen) {
            va_list ap;
            va_start(ap, fmt);
            vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
            va_end(ap);
        }
    }
    return st;
}

void mg_pgm_free(mg_pgm *img)
{
    if (!img) return;
    free(img->pixels);
    memset(img, 0, sizeof *img);
}

static int is_space(int c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }

/* Skips whitespace and '#' comments. Returns the next character (not consumed) or EOF. */
static int skip_space(FILE *f)
{
    int c;
    for (;;) {
        c = getc(f);
        if (c == '#') {
            while (c != '\n' && c != '\r' && c != EOF) c = getc(f);
            continue;
        }
        if (is_space(c)) continue;
        break;
    }
    if (c != EOF) ungetc(c, f);
    return c;
}

/* Reads an unsigned decimal number after whitespace/comments. Returns 0 on success,
 * -1 at end of file, -2 if the next token is not a number, -3 if above limit. */
static int read_uint(FILE *f, unsigned long limit, unsigned long *out, int *bad)
{
    int c = skip_space(f);
    if (c == EOF) return -1;
    if (c < '0' || c > '9') {
        *bad = c;
        return -2;
    }
    unsigned long v = 0;
    int over = 0;
    while ((c = getc(f)) != EOF && c >= '0' && c <= '9') {
        if (v > (limit - (unsigned long)(c - '0')) / 10)
            over = 1;
        else
            v = v * 10 + (unsigned long)(c - '0');
    }
    if (c != EOF) {
        /* A number must end at whitespace, a comment or EOF. */
        if (!(is_space(c) || c == '#')) {
            *bad = c;
            return -2;
        }
        ungetc(c, f);
    }
    if (over) return -3;
    *out = v;
    return 0;
}

static const char *field_names[3] = {"width", "height", "maxval"};

static void describe_char(int c, char *buf, size_t n)
{
    if (c >= 0x21 && c < 0x7f)
        snprintf(buf, n, "'%c'", c);
    else
        snprintf(buf, n, "byte 0x%02x", (unsigned)(c & 0xff));
}

/* Where a read stands: the open file, its path and the caller's message buffer. */
typedef struct {
    FILE *f;
    const char *path;
    char *err;
    size_t errlen;
} reader;

/* "P5" or "P2" and the whitespace after it; *ascii for P2. */
static mg_pgm_status read_magic(reader *r, int *ascii)
{
    int m0 = getc(r->f), m1 = getc(r->f);
    if (m0 != 'P' || (m1 != '5' && m1 != '2')) {
        char a[16], b[16];
        describe_char(m0, a, sizeof a);
        describe_char(m1, b, sizeof b);
        if (m0 == EOF || m1 == EOF)
            return fail(MG_PGM_EMAGIC, r->err, r->errlen, r->path,
                        "file too short for the magic number (expected \"P5\" or \"P2\")");
        return fail(MG_PGM_EMAGIC, r->err, r->errlen, r->path, "expected \"P5\" or \"P2\", found %s %s", a, b);
    }
    *ascii = m1 == '2';
    /* The magic number must be followed by whitespace (or a comment). */
    int c = getc(r->f);
    if (!(is_space(c) || c == '#')) {
        char a[16];
        describe_char(c, a, sizeof a);
        if (c == EOF) return fail(MG_PGM_EHEADER, r->err, r->errlen, r->path, "file ends after the magic number");
        return fail(MG_PGM_EMAGIC, r->err, r->errlen, r->path, "magic number P%c followed by %s", m1, a);
    }
    ungetc(c, r->f);
    return MG_PGM_OK;
}

/* Width, height and maxval into v[0..2], each checked. */
static mg_pgm_status read_header(reader *r, unsigned long *v)
{
    for (int k = 0; k < 3; k++) {
        int bad = 0;
        /* Fields above these limits are reported, not wrapped. */
        const unsigned long limit = k < 2 ? 0x7fffffffUL : 0xffffffffUL;
        int rc = read_uint(r->f, limit, &v[k], &bad);
        if (rc == -1)
            return fail(MG_PGM_EHEADER, r->err, r->errlen, r->path, "file ends before the %s field", field_names[k]);
        if (rc == -2) {
            char a[16];
            describe_char(bad, a, sizeof a);
            return fail(MG_PGM_EHEADER, r->err, r->errlen, r->path, "%s field is not a decimal number (found %s)",
                        field_names[k], a);
        }
        if (rc == -3)
            return fail(k == 2 ? MG_PGM_EMAXVAL : MG_PGM_EHEADER, r->err, r->errlen, r->path, "%s field is too large",
                        field_names[k]);
    }
    if (v[0] == 0 || v[1] == 0)
        return fail(MG_PGM_EHEADER, r->err, r->errlen, r->path, "empty image (width %lu, height %lu)", v[0], v[1]);
    if (v[2] == 0 || v[2] > 65535)
        return fail(MG_PGM_EMAXVAL, r->err, r->errlen, r->path, "maxval %lu (must be 1..65535)", v[2]);
    if (v[0] > MG_PGM_MAX_PIXELS / v[1])
        return fail(MG_PGM_EHEADER, r->err, r->errlen, r->path, "image %lu x %lu is too large (limit %zu samples)",
                    v[0], v[1], (size_t)MG_PGM_MAX_PIXELS);
    return MG_PGM_OK;
}

/* P2: n decimal samples, each at most maxval. */
static mg_pgm_status read_ascii(reader *r, uint16_t *px, size_t n, unsigned long maxval)
{
    for (size_t k = 0; k < n; k++) {
        unsigned long s = 0;
        int bad = 0;
        int rc = read_uint(r->f, 0xffffffffUL, &s, &bad);
        if (rc == -1) return fail(MG_PGM_ETRUNC, r->err, r->errlen, r->path, "%zu of %zu samples present", k, n);
        if (rc == -2) {
            char a[16];
            describe_char(bad, a, sizeof a);
            return fail(MG_PGM_EDATA, r->err, r->errlen, r->path, "sample %zu is not a decimal number (found %s)", k,
                        a);
        }
        if (rc == -3 || s > maxval)
            return fail(MG_PGM_EDATA, r->err, r->errlen, r->path, "sample %zu exceeds maxval %lu", k, maxval);
        px[k] = (uint16_t)s;
    }
    return MG_PGM_OK;
}

/* P5: one whitespace character, then n samples of 1 byte (maxval <= 255) or
 * 2 bytes, big-endian, each at most maxval. */
static mg_pgm_status read_binary(reader *r, uint16_t *px, size_t n, unsigned long maxval)
{
    if (getc(r->f) == EOF) return fail(MG_PGM_ETRUNC, r->err, r->errlen, r->path, "0 of %zu samples present", n);
    const size_t bps = maxval > 255 ? 2 : 1;
    unsigned char *raw = malloc(n * bps);
    if (!raw) return fail(MG_PGM_ENOMEM, r->err, r->errlen, r->path, "%zu bytes", n * bps);
    mg_pgm_status st = MG_PGM_OK;
    const size_t got = fread(raw, 1, n * bps, r->f);
    if (got < n * bps) {
        if (ferror(r->f))
            st = fail(MG_PGM_EIO, r->err, r->errlen, r->path, "read error: %s", strerror(errno));
        else
            st = fail(MG_PGM_ETRUNC, r->err, r->errlen, r->path, "%zu of %zu samples present (%zu of %zu bytes)",
                      got / bps, n, got, n * bps);
    }
    for (size_t k = 0; k < n && st == MG_PGM_OK; k++) {
        const unsigned long s = bps == 2 ? ((unsigned long)raw[2 * k] << 8) | raw[2 * k + 1] : raw[k];
        if (s > maxval)
            st = fail(MG_PGM_EDATA, r->err, r->errlen, r->path, "sample %zu is %lu, above maxval %lu", k, s, maxval);
        px[k] = (uint16_t)s;
    }
    free(raw);
    return st;
}

mg_pgm_status mg_pgm_read(const char *path, mg_pgm *img, char *err, size_t errlen)
{
    if (err && errlen > 0) err[0] = '\0';
    if (!path || !img) return fail(MG_PGM_EARG, err, errlen, path, "NULL path or image");
    memset(img, 0, sizeof *img);
    reader r = {fopen(path, "rb"), path, err, errlen};
    if (!r.f) return fail(MG_PGM_EIO, err, errlen, path, "cannot open: %s", strerror(errno));
    int ascii = 0;
    unsigned long v[3];
    uint16_t *px = NULL;
    mg_pgm_status st = read_magic(&r, &ascii);
    if (st == MG_PGM_OK) st = read_header(&r, v);
    const size_t n = st == MG_PGM_OK ? (size_t)v[0] * (size_t)v[1] : 0;
    if (st == MG_PGM_OK && !(px = malloc(n * sizeof *px)))
        st = fail(MG_PGM_ENOMEM, err, errlen, path, "%zu samples", n);
    if (st == MG_PGM_OK) st = ascii ? read_ascii(&r, px, n, v[2]) : read_binary(&r, px, n, v[2]);
    fclose(r.f);
    if (st != MG_PGM_OK) {
        free(px);
        return st;
    }
    img->width = (int)v[0];
    img->height = (int)v[1];
    img->maxval = (int)v[2];
    img->pixels = px;
    return MG_PGM_OK;
}

mg_pgm_status mg_pgm_write(const char *path, const mg_pgm *img, char *err, size_t errlen)
{
    if (err && errlen > 0) err[0] = '\0';
    if (!path || !img || !img->pixels) return fail(MG_PGM_EARG, err, errlen, path, "NULL path or image");
    if (img->width <= 0 || img->height <= 0)
        return fail(MG_PGM_EARG, err, errlen, path, "empty image (width %d, height %d)", img->width, img->height);
    if (img->maxval < 1 || img->maxval > 65535)
        return fail(MG_PGM_EMAXVAL, err, errlen, path, "maxval %d (must be 1..65535)", img->maxval);
    const size_t n = (size_t)img->width * (size_t)img->height;
    for (size_t k = 0; k < n; k++)
        if (img->pixels[k] > img->maxval)
            return fail(MG_PGM_EDATA, err, errlen, path, "sample %zu is %u, above maxval %d", k,
                        (unsigned)img->pixels[k], img->maxval);
    const size_t bps = img->maxval > 255 ? 2 : 1;
    unsigned char *raw = malloc(n * bps);
    if (!raw) return fail(MG_PGM_ENOMEM, err, errlen, path, "%zu bytes", n * bps);
    for (size_t k = 0; k < n; k++) {
        if (bps == 2) {
            raw[2 * k] = (unsigned char)(img->pixels[k] >> 8);
            raw[2 * k + 1] = (unsigned char)(img->pixels[k] & 0xff);
        } else {
            raw[k] = (unsigned char)img->pixels[k];
        }
    }
    FILE *f = fopen(path, "wb");
    if (!f) {
        free(raw);
        return fail(MG_PGM_EIO, err, errlen, path, "cannot open for writing: %s", strerror(errno));
    }
    int ok = fprintf(f, "P5\n%d %d\n%d\n", img->width, img->height, img->maxval) > 0;
    ok = ok && fwrite(raw, 1, n * bps, f) == n * bps;
    const int e = errno;
    free(raw);
    if (fclose(f) != 0 && ok) return fail(MG_PGM_EIO, err, errlen, path, "close failed: %s", strerror(errno));
    if (!ok) return fail(MG_PGM_EIO, err, errlen, path, "write failed: %s", strerror(e));
    return MG_PGM_OK;
}
