/* Shared by the libmpiguide-tune tests (one translation unit each): failure
 * counting (test_expect.h), files in a per-rank temporary directory, and the warnings the
 * library wrote (rank 0 writes them to warn_file). */
#ifndef MG_TUNE_TESTKIT_H
#define MG_TUNE_TESTKIT_H

#include "test_expect.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char dir[64];
static FILE *warn_file;

static void write_file(const char *name, const char *text)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        exit(2);
    }
    fputs(text, f);
    fclose(f);
}

/* Everything warned so far (rank 0) or "" (other ranks). Static buffer. */
static const char *warnings(void)
{
    static char buf[65536];
    fflush(warn_file);
    long end = ftell(warn_file);
    rewind(warn_file);
    size_t n = fread(buf, 1, sizeof buf - 1, warn_file);
    buf[n] = '\0';
    fseek(warn_file, end, SEEK_SET);
    return buf;
}

static int occurrences(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = hay; (p = strstr(p, needle)) != NULL; p += strlen(needle)) n++;
    return n;
}

/* On rank 0 the warning must be there exactly once; elsewhere nowhere. */
static void expect_warning(const char *text, int line)
{
    const char *w = warnings();
    int n = occurrences(w, text);
    if (n != (rank == 0 ? 1 : 0)) {
        fprintf(stderr, "rank %d: %s:%d: warning seen %d times (expected %d): %s\n--- warnings:\n%s---\n", rank,
                __FILE__, line, n, rank == 0 ? 1 : 0, text, w);
        failures++;
    }
}
#define EXPECT_WARNING(...)                         \
    do {                                            \
        char text_[1024];                           \
        snprintf(text_, sizeof text_, __VA_ARGS__); \
        expect_warning(text_, __LINE__);            \
    } while (0)

#endif
