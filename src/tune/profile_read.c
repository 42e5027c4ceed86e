/* Reading the lines of a profile file (profile_read.h). */
#define _POSIX_C_SOURCE 200809L
#include "profile_read.h"
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

int mg_tune__read_line(mg_tune_reader *r)
{
    while (getline(&r->buf, &r->cap, r->f) != -1) {
        r->lineno++;
        char *h = strchr(r->buf, '#');
        if (h) *h = '\0';
        size_t n = strlen(r->buf);
        while (n > 0 && isspace((unsigned char)r->buf[n - 1])) r->buf[--n] = '\0';
        char *s = r->buf;
        while (isspace((unsigned char)*s)) s++;
        if (!*s) continue;
        snprintf(r->raw, sizeof r->raw, "%s", s);
        r->ntok = 0;
        char *save = NULL;
        for (char *t = strtok_r(s, " \t\r\n\v\f", &save); t && r->ntok <= MG_TUNE_MAX_TOKENS;
             t = strtok_r(NULL, " \t\r\n\v\f", &save))
            r->tok[r->ntok++] = t;
        return 1;
    }
    return 0;
}

int mg_tune__read_bad(mg_tune_reader *r, int line, const char *fmt, ...)
{
    char what[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    mg_tune__warn("%s:%d: %s; this profile is ignored", r->path, line > 0 ? line : 1, what);
    return -1;
}

int mg_tune__read_number(const char *s, MPI_Count *out)
{
    if (!isdigit((unsigned char)*s)) return -1;
    errno = 0;
    char *end;
    long long v = strtoll(s, &end, 10);
    if (errno == ERANGE || *end) return -1;
    *out = (MPI_Count)v;
    return 0;
}

int mg_tune__read_procs(const char *s, int *out)
{
    MPI_Count v;
    if (mg_tune__read_number(s, &v) != 0 || v < 1 || v > INT_MAX) return -1;
    *out = (int)v;
    return 0;
}

/* The first line tells the format: *mine = 1 for mpiguide's (whose version
 * must be 1), else the mg_tune_reader is rewound for PGMPITuneLib's. -1 after a warning. */
int mg_tune__read_format(mg_tune_reader *r, int *mine)
{
    *mine = 0;
    if (getline(&r->buf, &r->cap, r->f) == -1) return 0;
    r->lineno = 1;
    char *s = r->buf;
    while (isspace((unsigned char)*s)) s++;
    const char *magic = "# mpiguide tune profile";
    if (strncmp(s, magic, strlen(magic)) != 0) {
        rewind(r->f);
        r->lineno = 0;
        return 0;
    }
    *mine = 1;
    char *v = s + strlen(magic), *end;
    long ver = strtol(v, &end, 10);
    while (isspace((unsigned char)*end)) end++;
    if (end == v || *end || ver != 1) {
        v[strcspn(v, "\r\n")] = '\0';
        return mg_tune__read_bad(r, 1, "profile version '%s' is not supported (this library reads version 1)",
                                 v + strspn(v, " \t"));
    }
    return 0;
}
