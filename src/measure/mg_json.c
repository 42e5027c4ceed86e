/* The JSON writer of --list; see mg_json.h. */
#include "mg_json.h"

#include <math.h>
#include <stdlib.h>

void mg_json_write_string(FILE *out, const char *s)
{
    fputc('"', out);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '"': fputs("\\\"", out); break;
        case '\\': fputs("\\\\", out); break;
        case '\b': fputs("\\b", out); break;
        case '\f': fputs("\\f", out); break;
        case '\n': fputs("\\n", out); break;
        case '\r': fputs("\\r", out); break;
        case '\t': fputs("\\t", out); break;
        default:
            if (*p < 0x20)
                fprintf(out, "\\u%04x", *p);
            else
                fputc(*p, out); /* bytes >= 0x80 pass through: UTF-8 stays UTF-8 */
        }
    }
    fputc('"', out);
}

static void indent(const mg_json *j)
{
    fputc('\n', j->out);
    for (int i = 0; i < j->depth; i++) fputs("  ", j->out);
}

/* Separator, line break and key before a member of the innermost level;
 * returns 0 if the member may be written. */
static int member(mg_json *j, const char *key)
{
    if (j->error || j->depth == 0 || (j->kind[j->depth - 1] == '{') != (key != NULL)) {
        j->error = 1;
        return -1;
    }
    int later = j->count[j->depth - 1]++ > 0;
    if (later) fputc(',', j->out);
    if (!j->flat[j->depth - 1])
        indent(j);
    else if (later)
        fputc(' ', j->out);
    if (key) {
        mg_json_write_string(j->out, key);
        fputs(": ", j->out);
    }
    return 0;
}

static void open_level(mg_json *j, const char *key, char kind, int flat)
{
    if (j->depth >= MG_JSON_MAX_DEPTH) j->error = 1;
    if (member(j, key)) return;
    fputc(kind, j->out);
    j->kind[j->depth] = kind;
    j->flat[j->depth] = (char)(flat || j->flat[j->depth - 1]);
    j->count[j->depth] = 0;
    j->depth++;
}

void mg_json_start(mg_json *j, FILE *out)
{
    j->out = out;
    j->error = 0;
    j->depth = 1;
    j->kind[0] = '{';
    j->flat[0] = 0;
    j->count[0] = 0;
    fputc('{', out);
}

void mg_json_object(mg_json *j, const char *key) { open_level(j, key, '{', 0); }
void mg_json_array(mg_json *j, const char *key) { open_level(j, key, '[', 0); }
void mg_json_flat_object(mg_json *j, const char *key) { open_level(j, key, '{', 1); }

void mg_json_close(mg_json *j)
{
    if (j->error || j->depth <= 1) {
        j->error = 1;
        return;
    }
    int empty = j->count[--j->depth] == 0;
    if (!empty && !j->flat[j->depth]) indent(j);
    fputc(j->kind[j->depth] == '{' ? '}' : ']', j->out);
}

int mg_json_finish(mg_json *j)
{
    while (!j->error && j->depth > 1) mg_json_close(j);
    if (j->count[0]) fputc('\n', j->out);
    fputs("}\n", j->out);
    fflush(j->out);
    j->depth = 0;
    return j->error ? -1 : 0;
}

void mg_json_string(mg_json *j, const char *key, const char *value)
{
    if (member(j, key)) return;
    if (value)
        mg_json_write_string(j->out, value);
    else
        fputs("null", j->out);
}

void mg_json_long(mg_json *j, const char *key, long long value)
{
    if (!member(j, key)) fprintf(j->out, "%lld", value);
}

static void put_double(FILE *out, double v)
{
    if (!isfinite(v)) {
        fputs("null", out);
        return;
    }
    if (v == (double)(long long)v && v > -1e15 && v < 1e15) {
        fprintf(out, "%lld", (long long)v); /* integral: no exponent */
        return;
    }
    /* The shortest %g that reads back as the same double. */
    char buf[32];
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, sizeof buf, "%.*g", prec, v);
        if (strtod(buf, NULL) == v) break;
    }
    fputs(buf, out);
}

void mg_json_double(mg_json *j, const char *key, double value)
{
    if (!member(j, key)) put_double(j->out, value);
}

void mg_json_bool(mg_json *j, const char *key, int value)
{
    if (!member(j, key)) fputs(value ? "true" : "false", j->out);
}

void mg_json_strings(mg_json *j, const char *key, const char *const *values, int n)
{
    if (member(j, key)) return;
    fputc('[', j->out);
    for (int i = 0; i < n; i++) {
        if (i) fputs(", ", j->out);
        mg_json_write_string(j->out, values[i]);
    }
    fputc(']', j->out);
}

void mg_json_longs(mg_json *j, const char *key, const long long *values, int n)
{
    if (member(j, key)) return;
    fputc('[', j->out);
    for (int i = 0; i < n; i++) fprintf(j->out, "%s%lld", i ? ", " : "", values[i]);
    fputc(']', j->out);
}
