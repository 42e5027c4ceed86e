/* mg_mpit: the MPI library's control variables (MPI_T), as one JSON object on
 * standard output, for tools that must learn from the library itself what it
 * can be told (mpiguide lists each library's collective algorithms from it).
 *
 *   mg_mpit [--match TEXT[,TEXT...]]
 *
 * {"driver": "mg_mpit", "library_version": "...", "cvars": [{"name": ...,
 * "description": ..., "datatype": "int", "verbosity": 1, "scope": 3,
 * "value": 2, "enum": [{"value": 0, "name": "ignore"}, ...]}, ...]}: every
 * control variable whose name contains one of the TEXTs (all without
 * --match); "value" (its value in this process's environment) for a single
 * int or a string bound to no object, "enum" only where the library attaches
 * an enumeration. Needs no MPI_Init: MPI_T alone. Exit status 0, 2 on a bad
 * command line, 3 where the library offers no MPI_T. */
#define _POSIX_C_SOURCE 200809L
#include "mg_json.h"
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_MATCH 64

static const char *datatype_name(MPI_Datatype t)
{
    if (t == MPI_INT) return "int";
    if (t == MPI_UNSIGNED) return "unsigned";
    if (t == MPI_UNSIGNED_LONG) return "unsigned long";
    if (t == MPI_UNSIGNED_LONG_LONG) return "unsigned long long";
    if (t == MPI_COUNT) return "count";
    if (t == MPI_CHAR) return "char";
    if (t == MPI_DOUBLE) return "double";
    return "other";
}

static int wanted(const char *name, char *const *match, int nmatch)
{
    for (int i = 0; i < nmatch; i++)
        if (strstr(name, match[i])) return 1;
    return nmatch == 0;
}

/* The variable's value into j's open object ("value"): a single int, or a
 * string; nothing for other types, bound variables or what cannot be read. */
static void write_value(mg_json *j, int index, MPI_Datatype type, int bind)
{
    MPI_T_cvar_handle h;
    int count = 0;
    if (bind != MPI_T_BIND_NO_OBJECT || (type != MPI_INT && type != MPI_CHAR)) return;
    if (MPI_T_cvar_handle_alloc(index, NULL, &h, &count) != MPI_SUCCESS) return;
    if (type == MPI_INT && count == 1) {
        int v;
        if (MPI_T_cvar_read(h, &v) == MPI_SUCCESS) mg_json_long(j, "value", v);
    } else if (type == MPI_CHAR && count > 0 && count <= 65536) {
        char *v = calloc((size_t)count + 1, 1);
        if (v && MPI_T_cvar_read(h, v) == MPI_SUCCESS) mg_json_string(j, "value", v);
        free(v);
    }
    MPI_T_cvar_handle_free(&h);
}

/* The enumeration's items into j's open object ("enum"), if it has one. */
static void write_enum(mg_json *j, MPI_T_enum e)
{
    int n = 0, len;
    char ename[256];
    len = sizeof ename;
    if (e == MPI_T_ENUM_NULL || MPI_T_enum_get_info(e, &n, ename, &len) != MPI_SUCCESS || n <= 0) return;
    mg_json_array(j, "enum");
    for (int k = 0; k < n; k++) {
        int value;
        char item[256];
        len = sizeof item;
        if (MPI_T_enum_get_item(e, k, &value, item, &len) != MPI_SUCCESS) continue;
        mg_json_flat_object(j, NULL);
        mg_json_long(j, "value", value);
        mg_json_string(j, "name", item);
        mg_json_close(j);
    }
    mg_json_close(j);
}

static void usage(FILE *out)
{
    fprintf(out, "usage: mg_mpit [--match TEXT[,TEXT...]]\n"
                 "Prints the MPI library's control variables (MPI_T) whose names contain one of the TEXTs (all\n"
                 "without --match) as one JSON object: name, description, datatype, verbosity, scope, the value\n"
                 "(a single int or a string not bound to an object) and the enumeration's items where the library\n"
                 "gives one.\n");
}

int main(int argc, char **argv)
{
    char *match[MAX_MATCH], *copy = NULL;
    int nmatch = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help")) {
            usage(stdout);
            return 0;
        }
        const char *bad = strcmp(argv[i], "--match") ? "unknown argument (see --help)"
                          : i + 1 >= argc            ? "needs a value"
                          : copy                     ? "given twice"
                                                     : NULL;
        if (bad) {
            fprintf(stderr, "mg_mpit: error: %s: %s\n", argv[i], bad);
            free(copy);
            return 2;
        }
        copy = strdup(argv[++i]);
        if (!copy) return 2;
        for (char *save = NULL, *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save))
            if (*t && nmatch < MAX_MATCH) match[nmatch++] = t;
        if (nmatch == 0) {
            fprintf(stderr, "mg_mpit: error: --match '%s' names nothing\n", argv[i]);
            free(copy);
            return 2;
        }
    }
    int provided, n = 0;
    if (MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS || MPI_T_cvar_get_num(&n) != MPI_SUCCESS) {
        fprintf(stderr, "mg_mpit: error: the MPI library offers no MPI_T control variables\n");
        free(copy);
        return 3;
    }
    char version[MPI_MAX_LIBRARY_VERSION_STRING] = "";
    int vlen = 0;
    MPI_Get_library_version(version, &vlen);
    mg_json j;
    mg_json_start(&j, stdout);
    mg_json_string(&j, "driver", "mg_mpit");
    mg_json_string(&j, "library_version", version);
    mg_json_array(&j, "cvars");
    for (int i = 0; i < n; i++) {
        char name[1024], desc[16384];
        int nlen = sizeof name, dlen = sizeof desc, verbosity, bind, scope;
        MPI_Datatype type;
        MPI_T_enum e;
        if (MPI_T_cvar_get_info(i, name, &nlen, &verbosity, &type, &e, desc, &dlen, &bind, &scope) != MPI_SUCCESS)
            continue;
        if (!wanted(name, match, nmatch)) continue;
        mg_json_object(&j, NULL);
        mg_json_string(&j, "name", name);
        mg_json_string(&j, "description", desc);
        mg_json_string(&j, "datatype", datatype_name(type));
        mg_json_long(&j, "verbosity", verbosity);
        mg_json_long(&j, "scope", scope);
        write_value(&j, i, type, bind);
        write_enum(&j, e);
        mg_json_close(&j);
    }
    int rc = mg_json_finish(&j);
    MPI_T_finalize();
    free(copy);
    return rc == 0 ? 0 : 1;
}
