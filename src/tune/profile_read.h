/* profile_read.c: reading the lines of a profile file (layer reader,
 * tune_internal.h), for profile.c and dt_profile.c. */
#ifndef MG_TUNE_PROFILE_READ_H
#define MG_TUNE_PROFILE_READ_H

#include "tune_internal.h"

#define MG_TUNE_MAX_TOKENS 7 /* a datatype rule with its block range */

/* A profile file being read: the current line's tokens. */
typedef struct {
    FILE *f;
    const char *path;
    char *buf;
    size_t cap;
    int lineno;
    int ntok;
    char *tok[MG_TUNE_MAX_TOKENS + 1]; /* one more to see extra tokens */
    char raw[200];                     /* the line as read, shortened, for messages */
} mg_tune_reader;

/* Next line with at least one token (comments and blank lines skipped); 0 at the end. */
int mg_tune__read_line(mg_tune_reader *r);
/* Warns "FILE:LINE: what; this profile is ignored" (once) and returns -1. */
int mg_tune__read_bad(mg_tune_reader *r, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* A whole token as a non-negative number; 0, or -1. */
int mg_tune__read_number(const char *s, MPI_Count *out);
/* A number of processes (1 to INT_MAX); 0, or -1. */
int mg_tune__read_procs(const char *s, int *out);
/* The first line tells the format: *mine = 1 for mpiguide's (whose version
 * must be 1), else the reader is rewound for PGMPITuneLib's. -1 after a warning. */
int mg_tune__read_format(mg_tune_reader *r, int *mine);

#endif
