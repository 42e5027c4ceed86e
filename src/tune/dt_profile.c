/* Datatype profiles (docs/tuning.md, "Datatype profiles"), in mpiguide's
 * format only:
 *     datatypes send                         # an mg_dtclass name
 *     procs any                              # or a number of processes
 *     resized/hvector/indexed 1 65536 normalized   # shape from_bytes to_bytes strategy
 *     resized/contig 0 65536 pack block 1 64       # ... and the type's mean block bytes
 *     * 65537 1000000000 pack                # "*": any type
 * A bad header line makes the file unusable; a bad rule is warned about
 * ("FILE:LINE: what; this line is ignored") and skipped. */
#define _POSIX_C_SOURCE 200809L
#include "profile_read.h"
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* 1 if path is in mpiguide's format and its first line says 'datatypes'. */
int mg_tune__is_dt_profile(const char *path)
{
    mg_tune_reader r = {.path = path};
    if (!(r.f = fopen(path, "r"))) return 0;
    int mine = 0, is = mg_tune__read_format(&r, &mine) == 0 && mine && mg_tune__read_line(&r) &&
                       strcmp(r.tok[0], "datatypes") == 0;
    free(r.buf);
    fclose(r.f);
    return is;
}

static void bad_rule(mg_tune_reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void bad_rule(mg_tune_reader *r, const char *fmt, ...)
{
    char what[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    mg_tune__warn("%s:%d: %s; this line is ignored", r->path, r->lineno, what);
}

/* A shape: "*" or constructor names joined by '/'. */
static int shape_word(const char *s)
{
    if (strcmp(s, "*") == 0) return 1;
    for (const char *c = s; *c; c++)
        if (!(islower((unsigned char)*c) || *c == '_' || *c == '/')) return 0;
    return *s != '\0';
}

/* "FROM TO" or "FROM TO (block BFROM BTO)" for a message. */
static const char *range_text(char *buf, size_t len, MPI_Count from, MPI_Count to, int has_block, MPI_Count bfrom,
                              MPI_Count bto)
{
    int n = snprintf(buf, len, "%lld %lld", (long long)from, (long long)to);
    if (has_block && n > 0 && (size_t)n < len)
        snprintf(buf + n, len - (size_t)n, " (block %lld %lld)", (long long)bfrom, (long long)bto);
    return buf;
}

/* One rule line into p (or a warning). */
static void dt_rule(mg_tune_reader *r, mg_tune_dt_profile *p, int *cap)
{
    MPI_Count from, to, bfrom = 0, bto = 0;
    int has_block = r->ntok == 7 && strcmp(r->tok[4], "block") == 0;
    if (r->ntok != 4 && !has_block) {
        bad_rule(r, "expected 'SHAPE FROM_BYTES TO_BYTES STRATEGY [block FROM_BYTES TO_BYTES]', found '%s'", r->raw);
        return;
    }
    if (!shape_word(r->tok[0])) {
        bad_rule(r, "shape '%s' is neither '*' nor constructor names joined by '/' (resized/hvector/indexed)",
                 r->tok[0]);
        return;
    }
    if (mg_tune__read_number(r->tok[1], &from) != 0 || mg_tune__read_number(r->tok[2], &to) != 0 || from > to) {
        bad_rule(r, "'%s %s' is not a byte range FROM <= TO of non-negative numbers", r->tok[1], r->tok[2]);
        return;
    }
    if (has_block &&
        (mg_tune__read_number(r->tok[5], &bfrom) != 0 || mg_tune__read_number(r->tok[6], &bto) != 0 || bfrom > bto)) {
        bad_rule(r, "block '%s %s' is not a range FROM <= TO of non-negative numbers", r->tok[5], r->tok[6]);
        return;
    }
    int s = mg_tune__dts_index(r->tok[3]);
    if (s != MG_DTS_NATIVE && s != MG_DTS_NORMALIZED && s != MG_DTS_PACK) {
        bad_rule(r, "unknown strategy '%s' (strategies: native, normalized, pack)", r->tok[3]);
        return;
    }
    int any = strcmp(r->tok[0], "*") == 0;
    int shared, collective = mg_tune__dtclass_collective(p->op, &shared);
    if (s == MG_DTS_PACK && collective && !shared) {
        bad_rule(r, "pack needs a message size every rank knows, which %s has not", mg_tune__dtclass_name(p->op));
        return;
    }
    if (s == MG_DTS_PACK && collective && (!any || has_block)) {
        bad_rule(r, "pack in a collective must be chosen alike by every rank: only for shape '*' without a block range");
        return;
    }
    for (int i = 0; i < p->nrules; i++) {
        const mg_tune_dt_rule *o = &p->rules[i];
        if ((o->shape == NULL) == any && (any || strcmp(o->shape, r->tok[0]) == 0) && from <= o->to && o->from <= to &&
            (!has_block || !o->has_block || (bfrom <= o->bto && o->bfrom <= bto))) {
            char mine[80], theirs[80];
            bad_rule(r, "range %s of '%s' overlaps range %s of line %d",
                     range_text(mine, sizeof mine, from, to, has_block, bfrom, bto), r->tok[0],
                     range_text(theirs, sizeof theirs, o->from, o->to, o->has_block, o->bfrom, o->bto), o->line);
            return;
        }
    }
    if (p->nrules == *cap) {
        int n = *cap ? 2 * *cap : 8;
        mg_tune_dt_rule *rs = realloc(p->rules, (size_t)n * sizeof *rs);
        if (!rs) {
            bad_rule(r, "out of memory");
            return;
        }
        p->rules = rs;
        *cap = n;
    }
    char *shape = any ? NULL : strdup(r->tok[0]);
    if (!any && !shape) {
        bad_rule(r, "out of memory");
        return;
    }
    p->rules[p->nrules++] = (mg_tune_dt_rule){shape, from, to, has_block, bfrom, bto, (mg_dts)s, r->lineno};
}

void mg_tune__dt_profile_free(mg_tune_dt_profile *p)
{
    for (int i = 0; i < p->nrules; i++) free(p->rules[i].shape);
    free(p->rules);
    free(p->path);
    memset(p, 0, sizeof *p);
}

/* -1 (after a warning) if the header is bad; bad rules are skipped. */
int mg_tune__dt_profile_parse(const char *path, mg_tune_dt_profile *p)
{
    memset(p, 0, sizeof *p);
    mg_tune_reader r = {.path = path};
    if (!(r.f = fopen(path, "r"))) {
        mg_tune__warn("%s: cannot open the profile (%s); this profile is ignored", path, strerror(errno));
        return -1;
    }
    int mine, rc = mg_tune__read_format(&r, &mine), cap = 0, op_line = 0;
    char list[1024];
    p->path = strdup(path);
    if (!p->path) rc = mg_tune__read_bad(&r, 1, "out of memory");
    while (rc == 0 && mg_tune__read_line(&r)) {
        int is_op = strcmp(r.tok[0], "datatypes") == 0;
        if (is_op || strcmp(r.tok[0], "procs") == 0) {
            if (r.ntok != 2)
                rc = mg_tune__read_bad(&r, r.lineno, "expected '%s %s', found '%s'", r.tok[0],
                                       is_op ? "OPERATION" : "N|any", r.raw);
            else if ((is_op ? op_line : p->procs_line) != 0)
                rc = mg_tune__read_bad(&r, r.lineno, "a second '%s' line (the first is line %d)", r.tok[0],
                                       is_op ? op_line : p->procs_line);
            else if (is_op && mg_tune__dtclass_index(r.tok[1]) < 0)
                rc = mg_tune__read_bad(&r, r.lineno, "unknown operation '%s' (operations: %s)", r.tok[1],
                                       mg_tune__dtclass_list(list, sizeof list));
            else if (!is_op && strcmp(r.tok[1], "any") != 0 && mg_tune__read_procs(r.tok[1], &p->procs) != 0)
                rc = mg_tune__read_bad(&r, r.lineno, "procs '%s' is neither a number of processes >= 1 nor 'any'",
                                       r.tok[1]);
            if (is_op) p->op = (mg_dtclass)mg_tune__dtclass_index(r.tok[1]);
            *(is_op ? &op_line : &p->procs_line) = r.lineno;
            continue;
        }
        if (!op_line || !p->procs_line)
            rc = mg_tune__read_bad(&r, r.lineno, "a rule before the 'datatypes OPERATION' and 'procs N|any' lines");
        else
            dt_rule(&r, p, &cap);
    }
    if (rc == 0 && (!op_line || !p->procs_line)) rc = mg_tune__read_bad(&r, r.lineno, "no 'datatypes' or 'procs' line");
    free(r.buf);
    fclose(r.f);
    if (rc != 0) mg_tune__dt_profile_free(p);
    return rc == 0 ? 0 : -1;
}

const mg_tune_dt_profile *mg_tune__dt_profiles_get(const mg_tune_profiles *ps, mg_dtclass op, int procs)
{
    const mg_tune_dt_profile *any = NULL;
    for (int i = 0; i < ps->ndt; i++)
        if (ps->dt[i].op == op) {
            if (ps->dt[i].procs == procs) return &ps->dt[i];
            if (ps->dt[i].procs == 0) any = &ps->dt[i];
        }
    return any;
}

mg_dts mg_tune__dt_profile_rule(const mg_tune_dt_profile *p, const char *shape, MPI_Count block, MPI_Count bytes)
{
    for (int pass = shape ? 0 : 1; pass < 2; pass++)
        for (int i = 0; i < p->nrules; i++) {
            const mg_tune_dt_rule *r = &p->rules[i];
            /* without a type (shape NULL), only the rules that ask nothing of it */
            if ((pass == 0 ? r->shape && strcmp(r->shape, shape) == 0 : !r->shape) && r->from <= bytes &&
                bytes <= r->to && (!r->has_block || (shape && r->bfrom <= block && block <= r->bto)))
                return r->s;
        }
    return MG_DTS_DEFAULT;
}
