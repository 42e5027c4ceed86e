/* Stencil applications: PGM (portable graymap) files.
 *
 * Reads P5 (binary) and P2 (ASCII) graymaps with maxval 1..65535 (16-bit P5
 * samples are big-endian, as Netpbm defines); writes P5. Header comments ('#'
 * to end of line) are accepted between header fields. The functions never exit:
 * they return an mg_pgm_status and, when err is not NULL, write a message that
 * names the file and the problem into err (at most errlen bytes, NUL-terminated).
 */
#ifndef MG_PGM_H
#define MG_PGM_H

#include <stddef.h>
#include <stdint.h>

typedef enum {
    MG_PGM_OK = 0,
    MG_PGM_EIO,     /* cannot open, read or write the file */
    MG_PGM_EMAGIC,  /* not "P5" or "P2" */
    MG_PGM_EHEADER, /* malformed width, height or maxval field, or image too large */
    MG_PGM_EMAXVAL, /* maxval 0 or above 65535 */
    MG_PGM_ETRUNC,  /* fewer samples than width * height */
    MG_PGM_EDATA,   /* a sample above maxval or not a number (P2) */
    MG_PGM_ENOMEM,  /* allocation failed */
    MG_PGM_EARG     /* invalid argument (NULL, empty image, maxval out of range) */
} mg_pgm_status;

/* An image: width x height samples, row-major, top row first. */
typedef struct {
    int width, height;
    int maxval;       /* 1..65535 */
    uint16_t *pixels; /* width * height samples, each 0..maxval (malloc'ed by mg_pgm_read) */
} mg_pgm;

/* Largest number of samples mg_pgm_read accepts (guards against absurd headers). */
#define MG_PGM_MAX_PIXELS ((size_t)1 << 28)

mg_pgm_status mg_pgm_read(const char *path, mg_pgm *img, char *err, size_t errlen);
/* Writes P5: one byte per sample if maxval <= 255, else two (big-endian). */
mg_pgm_status mg_pgm_write(const char *path, const mg_pgm *img, char *err, size_t errlen);
/* Frees img->pixels and zeroes img. */
void mg_pgm_free(mg_pgm *img);
/* A short name of a status ("bad magic number", ...). */
const char *mg_pgm_strerror(mg_pgm_status st);

#endif
