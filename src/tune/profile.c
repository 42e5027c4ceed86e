/* Profiles: which implementation a collective uses for which message sizes on
 * a communicator of a given size. Two formats, told apart by the first line:
 *
 * mpiguide's own (first line "# mpiguide tune profile 1"):
 *     collective allgather
 *     procs 4
 *     1 1024 allgather_as_gather_bcast      # from_bytes to_bytes implementation
 *
 * PGMPITuneLib's (Hunold and Carpen-Amarie 2018, Listing 1; anything else, e.g. "# pgtune profile"):
 *     MPI_Scatter
 *     1024 # nb. of processes
 *     2    # nb. of mock-up impl.
 *     2 scatter_as_bcast
 *     3 scatter_as_scatterv
 *     8    # nb. of ranges
 *     1 1 2  # byte_range_start byte_range_end alg_id
 *     ...
 *
 * Ranges are inclusive byte ranges of mg_call.bytes, sorted at load, and must
 * not overlap. Any problem makes the whole file unusable: one warning
 * "FILE:LINE: what; this profile is ignored", and the collective runs natively
 * for that communicator size. Datatype profiles (dt_profile.c) are read from
 * the same directory. */
#define _POSIX_C_SOURCE 200809L
#include "profile_read.h"
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static int add_range(mg_tune_profile *p, int *cap, MPI_Count from, MPI_Count to, int impl, int line)
{
    if (p->nranges == *cap) {
        int n = *cap ? 2 * *cap : 16;
        mg_tune_range *rs = realloc(p->ranges, (size_t)n * sizeof *rs);
        if (!rs) return -1;
        p->ranges = rs;
        *cap = n;
    }
    p->ranges[p->nranges++] = (mg_tune_range){from, to, impl, line};
    return 0;
}

static int by_from(const void *a, const void *b)
{
    const mg_tune_range *x = a, *y = b;
    if (x->from != y->from) return x->from < y->from ? -1 : 1;
    return x->line - y->line;
}

/* A range line's numbers; -1 after a warning. */
static int range_numbers(mg_tune_reader *r, MPI_Count *from, MPI_Count *to)
{
    if (mg_tune__read_number(r->tok[0], from) != 0)
        return mg_tune__read_bad(r, r->lineno, "range start '%s' is not a non-negative number of bytes", r->tok[0]);
    if (mg_tune__read_number(r->tok[1], to) != 0)
        return mg_tune__read_bad(r, r->lineno, "range end '%s' is not a non-negative number of bytes", r->tok[1]);
    if (*from > *to)
        return mg_tune__read_bad(r, r->lineno, "inverted range %s %s (the start is above the end)", r->tok[0],
                                 r->tok[1]);
    return 0;
}

/* A 'collective NAME' or 'procs N' line; *coll_line or *procs_line records where it was. */
static int mpiguide_header_line(mg_tune_reader *r, mg_tune_profile *p, int *coll_line, int *procs_line)
{
    char list[1024];
    int is_coll = r->tok[0][0] == 'c';
    int *seen = is_coll ? coll_line : procs_line;
    if (r->ntok != 2)
        return mg_tune__read_bad(r, r->lineno, "expected '%s %s', found '%s'", r->tok[0], is_coll ? "NAME" : "N",
                                 r->raw);
    if (*seen != 0)
        return mg_tune__read_bad(r, r->lineno, "a second '%s' line (the first is line %d)", r->tok[0], *seen);
    if (is_coll) {
        int c = mg_tune__coll_index(r->tok[1]);
        if (c < 0)
            return mg_tune__read_bad(r, r->lineno, "unknown collective '%s' (collectives: %s)", r->tok[1],
                                     mg_tune__coll_list(list, sizeof list));
        p->coll = (mg_coll)c;
    } else if (mg_tune__read_procs(r->tok[1], &p->procs) != 0) {
        return mg_tune__read_bad(r, r->lineno, "procs '%s' is not a number of processes >= 1", r->tok[1]);
    } else {
        p->procs_line = r->lineno;
    }
    *seen = r->lineno;
    return 0;
}

static int parse_mpiguide(mg_tune_reader *r, mg_tune_profile *p)
{
    int cap = 0, coll_line = 0, procs_line = 0;
    char list[1024];
    while (mg_tune__read_line(r)) {
        if (strcmp(r->tok[0], "collective") == 0 || strcmp(r->tok[0], "procs") == 0) {
            if (mpiguide_header_line(r, p, &coll_line, &procs_line) != 0) return -1;
            continue;
        }
        if (r->ntok != 3)
            return mg_tune__read_bad(r, r->lineno,
                                     "expected 'collective NAME', 'procs N' or 'FROM_BYTES TO_BYTES IMPLEMENTATION', "
                                     "found '%s'",
                                     r->raw);
        if (!coll_line) return mg_tune__read_bad(r, r->lineno, "a range before the 'collective NAME' line");
        MPI_Count from, to;
        if (range_numbers(r, &from, &to) != 0) return -1;
        int impl = mg_tune__impl_index(p->coll, r->tok[2]);
        if (impl < 0)
            return mg_tune__read_bad(r, r->lineno, "unknown implementation '%s' of %s (implementations: %s)", r->tok[2],
                                     mg_tune__table(p->coll)->name, mg_tune__impl_list(p->coll, list, sizeof list));
        if (add_range(p, &cap, from, to, impl, r->lineno) != 0) return mg_tune__read_bad(r, r->lineno, "out of memory");
    }
    if (!coll_line) return mg_tune__read_bad(r, r->lineno, "no 'collective NAME' line");
    if (!procs_line) return mg_tune__read_bad(r, r->lineno, "no 'procs N' line");
    return 0;
}

/* The next line must exist; what names it in the message. */
static int expect_line(mg_tune_reader *r, const char *what)
{
    if (mg_tune__read_line(r)) return 0;
    return mg_tune__read_bad(r, r->lineno, "the file ends before %s", what);
}

/* PGMPITuneLib's first two lines: the collective's MPI name and the number of processes. */
static int pgmpi_header(mg_tune_reader *r, mg_tune_profile *p)
{
    if (expect_line(r, "the collective's name (MPI_Allgather, ...)") != 0) return -1;
    int c = mg_tune__coll_index(r->tok[0]);
    if (r->ntok != 1 || c < 0 || strncmp(r->tok[0], "MPI_", 4) != 0)
        return mg_tune__read_bad(
            r, r->lineno,
            "expected the first line '# mpiguide tune profile 1' or a PGMPITuneLib profile starting with a "
            "collective such as MPI_Allgather, found '%s'",
            r->raw);
    p->coll = (mg_coll)c;
    if (expect_line(r, "the number of processes") != 0) return -1;
    if (r->ntok != 1 || mg_tune__read_procs(r->tok[0], &p->procs) != 0)
        return mg_tune__read_bad(r, r->lineno, "expected the number of processes (>= 1), found '%s'", r->raw);
    p->procs_line = r->lineno;
    return 0;
}

/* The mock-ups a PGMPITuneLib profile declares: alg ids (labels local to the
 * file) and the implementation each stands for. At most 1000. */
typedef struct {
    int n;
    MPI_Count ids[1000];
    int impls[1000];
} pgmpi_algs;

static int pgmpi_mockups(mg_tune_reader *r, const mg_tune_profile *p, pgmpi_algs *algs)
{
    char list[1024];
    MPI_Count nalg;
    if (expect_line(r, "the number of mock-ups") != 0) return -1;
    if (r->ntok != 1 || mg_tune__read_number(r->tok[0], &nalg) != 0 || nalg > 1000)
        return mg_tune__read_bad(r, r->lineno, "expected the number of mock-ups, found '%s'", r->raw);
    algs->n = (int)nalg;
    for (int i = 0; i < algs->n; i++) {
        char what[64];
        snprintf(what, sizeof what, "mock-up %d of %d", i + 1, algs->n);
        if (expect_line(r, what) != 0) return -1;
        if (r->ntok != 2 || mg_tune__read_number(r->tok[0], &algs->ids[i]) != 0)
            return mg_tune__read_bad(r, r->lineno, "expected 'ALG_ID NAME' of %s, found '%s'", what, r->raw);
        for (int j = 0; j < i; j++)
            if (algs->ids[j] == algs->ids[i])
                return mg_tune__read_bad(r, r->lineno, "alg_id %s is declared twice", r->tok[0]);
        algs->impls[i] = mg_tune__impl_index(p->coll, r->tok[1]);
        if (algs->impls[i] < 0)
            return mg_tune__read_bad(r, r->lineno, "unknown mock-up '%s' of %s (mpiguide has: %s)", r->tok[1],
                                     mg_tune__table(p->coll)->mpi_name, mg_tune__impl_list(p->coll, list, sizeof list));
    }
    return 0;
}

/* The implementation of a declared alg id, -1 if the token is none. */
static int pgmpi_impl(const pgmpi_algs *algs, const char *tok)
{
    MPI_Count id;
    int impl = -1;
    if (mg_tune__read_number(tok, &id) == 0)
        for (int j = 0; j < algs->n; j++)
            if (algs->ids[j] == id) impl = algs->impls[j];
    return impl;
}

static int pgmpi_ranges(mg_tune_reader *r, mg_tune_profile *p, const pgmpi_algs *algs)
{
    MPI_Count nranges;
    if (expect_line(r, "the number of ranges") != 0) return -1;
    if (r->ntok != 1 || mg_tune__read_number(r->tok[0], &nranges) != 0 || nranges > INT_MAX)
        return mg_tune__read_bad(r, r->lineno, "expected the number of ranges, found '%s'", r->raw);
    int cap = 0;
    for (MPI_Count k = 0; k < nranges; k++) {
        char what[80];
        snprintf(what, sizeof what, "range %lld of %lld", (long long)k + 1, (long long)nranges);
        if (expect_line(r, what) != 0) return -1;
        if (r->ntok != 3)
            return mg_tune__read_bad(
                r, r->lineno, "expected 'BYTE_RANGE_START BYTE_RANGE_END ALG_ID' of %s, found '%s'", what, r->raw);
        MPI_Count from, to;
        if (range_numbers(r, &from, &to) != 0) return -1;
        int impl = pgmpi_impl(algs, r->tok[2]);
        if (impl < 0)
            return mg_tune__read_bad(r, r->lineno, "alg_id '%s' is not among the mock-ups declared above", r->tok[2]);
        if (add_range(p, &cap, from, to, impl, r->lineno) != 0) return mg_tune__read_bad(r, r->lineno, "out of memory");
    }
    if (mg_tune__read_line(r))
        return mg_tune__read_bad(r, r->lineno, "'%s' after the %lld ranges declared", r->raw, (long long)nranges);
    return 0;
}

static int parse_pgmpi(mg_tune_reader *r, mg_tune_profile *p)
{
    pgmpi_algs algs;
    algs.n = 0;
    if (pgmpi_header(r, p) != 0 || pgmpi_mockups(r, p, &algs) != 0) return -1;
    return pgmpi_ranges(r, p, &algs);
}

void mg_tune__profile_free(mg_tune_profile *p)
{
    free(p->ranges);
    free(p->path);
    p->ranges = NULL;
    p->path = NULL;
    p->nranges = 0;
}

/* Sorts the ranges; -1 after a warning if two overlap (named by the later line). */
static int sort_ranges(mg_tune_reader *r, mg_tune_profile *p)
{
    if (p->nranges > 1) qsort(p->ranges, (size_t)p->nranges, sizeof *p->ranges, by_from);
    for (int i = 1; i < p->nranges; i++) {
        const mg_tune_range *a = &p->ranges[i - 1], *b = &p->ranges[i];
        if (b->from <= a->to) {
            const mg_tune_range *later = a->line > b->line ? a : b, *earlier = later == a ? b : a;
            return mg_tune__read_bad(r, later->line, "range %lld %lld overlaps range %lld %lld of line %d",
                                     (long long)later->from, (long long)later->to, (long long)earlier->from,
                                     (long long)earlier->to, earlier->line);
        }
    }
    return 0;
}

int mg_tune__profile_parse(const char *path, mg_tune_profile *out)
{
    memset(out, 0, sizeof *out);
    mg_tune_reader r = {.path = path};
    r.f = fopen(path, "r");
    if (!r.f) {
        mg_tune__warn("%s: cannot open the profile (%s); this profile is ignored", path, strerror(errno));
        return -1;
    }
    int mine, rc = mg_tune__read_format(&r, &mine);
    if (rc == 0) {
        out->path = strdup(path);
        rc = out->path ? (mine ? parse_mpiguide(&r, out) : parse_pgmpi(&r, out))
                       : mg_tune__read_bad(&r, r.lineno, "out of memory");
    }
    if (rc == 0) rc = sort_ranges(&r, out);
    free(r.buf);
    fclose(r.f);
    if (rc != 0) mg_tune__profile_free(out);
    return rc == 0 ? 0 : -1;
}

/* A datatype profile into out (room for it is there). */
static void add_dt_profile(const char *path, mg_tune_profiles *out, int *nbad)
{
    mg_tune_dt_profile p;
    if (mg_tune__dt_profile_parse(path, &p) != 0) {
        (*nbad)++;
        return;
    }
    for (int j = 0; j < out->ndt; j++)
        if (out->dt[j].op == p.op && out->dt[j].procs == p.procs) {
            mg_tune__warn("%s:%d: a second datatype profile of %s for %s processes (the first is %s); this profile "
                          "is ignored",
                          path, p.procs_line, mg_tune__dtclass_name(p.op), p.procs ? "these" : "any number of",
                          out->dt[j].path);
            mg_tune__dt_profile_free(&p);
            (*nbad)++;
            return;
        }
    out->dt[out->ndt++] = p;
}

void mg_tune__profiles_free(mg_tune_profiles *ps)
{
    for (int i = 0; i < ps->n; i++) mg_tune__profile_free(&ps->p[i]);
    for (int i = 0; i < ps->ndt; i++) mg_tune__dt_profile_free(&ps->dt[i]);
    free(ps->p);
    free(ps->dt);
    ps->p = NULL;
    ps->dt = NULL;
    ps->n = ps->ndt = 0;
}

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static int by_key(const void *a, const void *b)
{
    const mg_tune_profile *x = a, *y = b;
    if (x->coll != y->coll) return x->coll < y->coll ? -1 : 1;
    return x->procs < y->procs ? -1 : x->procs > y->procs;
}

static int is_profile_name(const char *n)
{
    size_t l = strlen(n);
    return (l > 5 && strcmp(n + l - 5, ".prof") == 0) || (l > 4 && strcmp(n + l - 4, ".prf") == 0);
}

/* The paths of the profile files of an open directory, sorted by name so
 * that every rank reads them in the same order and makes the same choices. */
static int list_profiles(DIR *d, const char *dir, char ***names, size_t *n)
{
    size_t cap = 0;
    *names = NULL;
    *n = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (!is_profile_name(e->d_name)) continue;
        if (*n == cap) {
            cap = cap ? 2 * cap : 16;
            char **nn = realloc(*names, cap * sizeof *nn);
            if (!nn) return MG_TUNE_ERR_NOMEM;
            *names = nn;
        }
        size_t len = strlen(dir) + strlen(e->d_name) + 2;
        if (((*names)[*n] = malloc(len)) == NULL) return MG_TUNE_ERR_NOMEM;
        snprintf((*names)[(*n)++], len, "%s/%s", dir, e->d_name);
    }
    if (*n > 1) qsort(*names, *n, sizeof **names, by_name);
    return MG_TUNE_SUCCESS;
}

/* Parses one file into out (room for it is there); a malformed file or a
 * second profile of the same (collective, size) is warned about and counted. */
static void add_profile(const char *path, mg_tune_profiles *out, int *nbad)
{
    mg_tune_profile p;
    if (mg_tune__profile_parse(path, &p) != 0) {
        (*nbad)++;
        return;
    }
    for (int j = 0; j < out->n; j++)
        if (out->p[j].coll == p.coll && out->p[j].procs == p.procs) {
            mg_tune__warn("%s:%d: a second profile of %s for %d processes (the first is %s); this profile is ignored",
                          path, p.procs_line, mg_tune__table(p.coll)->name, p.procs, out->p[j].path);
            mg_tune__profile_free(&p);
            (*nbad)++;
            return;
        }
    out->p[out->n++] = p;
}

int mg_tune__profiles_load(const char *dir, mg_tune_profiles *out, int *nbad)
{
    memset(out, 0, sizeof *out);
    *nbad = 0;
    DIR *d = opendir(dir);
    if (!d) {
        mg_tune__warn("profile directory %s: cannot open it (%s); tuned mode runs every collective natively", dir,
                      strerror(errno));
        return MG_TUNE_ERR_PROFILE;
    }
    char **names;
    size_t n;
    int rc = list_profiles(d, dir, &names, &n);
    closedir(d);
    if (rc == MG_TUNE_SUCCESS && n > 0 &&
        ((out->p = calloc(n, sizeof *out->p)) == NULL || (out->dt = calloc(n, sizeof *out->dt)) == NULL))
        rc = MG_TUNE_ERR_NOMEM;
    for (size_t i = 0; rc == MG_TUNE_SUCCESS && i < n; i++)
        if (mg_tune__is_dt_profile(names[i]))
            add_dt_profile(names[i], out, nbad);
        else
            add_profile(names[i], out, nbad);
    for (size_t i = 0; i < n; i++) free(names[i]);
    free(names);
    if (rc != MG_TUNE_SUCCESS) {
        mg_tune__profiles_free(out);
        return rc;
    }
    if (out->n > 1) qsort(out->p, (size_t)out->n, sizeof *out->p, by_key);
    return MG_TUNE_SUCCESS;
}

const mg_tune_profile *mg_tune__profiles_get(const mg_tune_profiles *ps, mg_coll coll, int procs)
{
    int lo = 0, hi = ps->n - 1;
    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2;
        const mg_tune_profile *m = &ps->p[mid];
        if (m->coll == coll && m->procs == procs) return m;
        if (m->coll < coll || (m->coll == coll && m->procs < procs))
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return NULL;
}

int mg_tune__profile_impl(const mg_tune_profile *p, MPI_Count bytes)
{
    /* the last range starting at or below bytes */
    int lo = 0, hi = p->nranges - 1, at = -1;
    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2;
        if (p->ranges[mid].from <= bytes) {
            at = mid;
            lo = mid + 1;
        } else {
            hi = mid - 1;
        }
    }
    return at >= 0 && bytes <= p->ranges[at].to ? p->ranges[at].impl : -1;
}
