/* A small JSON writer for the drivers' --list: one object, written member by
 * member, with strings escaped as RFC 8259 requires. Objects and arrays of
 * objects are written one member per line; arrays of scalars and flat objects
 * on one line.
 *
 *   mg_json j;
 *   mg_json_start(&j, stdout);            {
 *   mg_json_string(&j, "driver", "x");      "driver": "x",
 *   mg_json_object(&j, "defaults");         "defaults": {
 *   mg_json_long(&j, "nrep", 5);              "nrep": 5
 *   mg_json_close(&j);                      }
 *   mg_json_finish(&j);                   }
 *
 * A key is given inside an object and NULL inside an array. Misuse (a key in
 * an array, nesting deeper than MG_JSON_MAX_DEPTH, closing too often) is
 * recorded in `error` and the call writes nothing. */
#ifndef MG_JSON_H
#define MG_JSON_H

#include <stdio.h>

#define MG_JSON_MAX_DEPTH 16

typedef struct {
    FILE *out;
    int depth;                    /* open objects and arrays */
    char kind[MG_JSON_MAX_DEPTH]; /* '{' or '[' per level */
    char flat[MG_JSON_MAX_DEPTH]; /* level written on one line */
    int count[MG_JSON_MAX_DEPTH]; /* members written per level */
    int error;                    /* a call was misused */
} mg_json;

void mg_json_start(mg_json *j, FILE *out); /* the top-level object */
/* Closes every open level and ends the line. Returns 0, or -1 after misuse. */
int mg_json_finish(mg_json *j);

void mg_json_object(mg_json *j, const char *key);
void mg_json_array(mg_json *j, const char *key);
/* An object written on one line (for small objects of scalars). */
void mg_json_flat_object(mg_json *j, const char *key);
void mg_json_close(mg_json *j); /* the innermost object or array */

void mg_json_string(mg_json *j, const char *key, const char *value); /* NULL: null */
void mg_json_long(mg_json *j, const char *key, long long value);
void mg_json_double(mg_json *j, const char *key, double value); /* shortest exact form; NaN, inf: null */
void mg_json_bool(mg_json *j, const char *key, int value);

/* Arrays of scalars on one line. */
void mg_json_strings(mg_json *j, const char *key, const char *const *values, int n);
void mg_json_longs(mg_json *j, const char *key, const long long *values, int n);

/* `value` as a JSON string literal, quotes included. */
void mg_json_write_string(FILE *out, const char *value);

#endif
