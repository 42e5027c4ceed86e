/* Configuration: defaults, then the file named by MPIGUIDE_TUNE_CONFIG
 * (`key = value` lines, # comments), then the MPIGUIDE_TUNE_* variables (the
 * environment wins). Never argv. A bad line or value is reported once with
 * where it is (file:line or the variable) and skipped; nothing aborts. */
#define _POSIX_C_SOURCE 200809L
#include "mg_size.h"
#include "mpiguide/dt.h"
#include "tune_internal.h"
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

extern char **environ;

static const char *const keys =
    "mode, force, profiles, msg_pool_bytes, int_pool_bytes, chunk, report, record, allow_regrouping, dt_form";

/* "auto, vector, resized, list or copies" (the engine's form names) in text[96]. */
enum { DT_FORMS_LEN = 96 };
static const char *dt_forms(char text[DT_FORMS_LEN])
{
    size_t pos = 0;
    text[0] = '\0';
    for (int f = MG_DT_FORM_AUTO; f <= MG_DT_FORM_COPIES && pos < DT_FORMS_LEN; f++)
        pos += (size_t)snprintf(text + pos, DT_FORMS_LEN - pos, "%s%s",
                                f == MG_DT_FORM_AUTO ? "" : f == MG_DT_FORM_COPIES ? " or " : ", ", mg_dt_form_name(f));
    return text;
}

static const char *const env_names[] = {
    "MPIGUIDE_TUNE_MODE",   "MPIGUIDE_TUNE_FORCE",    "MPIGUIDE_TUNE_PROFILES",
    "MPIGUIDE_TUNE_CONFIG", "MPIGUIDE_TUNE_MSG_POOL", "MPIGUIDE_TUNE_INT_POOL",
    "MPIGUIDE_TUNE_CHUNK",  "MPIGUIDE_TUNE_REPORT",   "MPIGUIDE_TUNE_ALLOW_REGROUPING",
    "MPIGUIDE_TUNE_DT_FORM", "MPIGUIDE_TUNE_RECORD"};
#define N_ENV ((int)(sizeof env_names / sizeof env_names[0]))

void mg_tune__config_defaults(mg_tune_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->mode = MG_TUNE_OFF;
    cfg->msg_pool_bytes = MG_TUNE_DEFAULT_MSG_POOL;
    cfg->int_pool_bytes = MG_TUNE_DEFAULT_INT_POOL;
    cfg->chunk = MG_TUNE_DEFAULT_CHUNK;
}

void mg_tune__config_free(mg_tune_config *cfg)
{
    free(cfg->profiles);
    free(cfg->report);
    free(cfg->record);
    cfg->profiles = cfg->report = cfg->record = NULL;
}

static char *trim(char *s)
{
    while (isspace((unsigned char)*s)) s++;
    size_t n = strlen(s);
    while (n > 0 && isspace((unsigned char)s[n - 1])) s[--n] = '\0';
    return s;
}

static int parse_mode(const char *s, mg_tune_mode *m)
{
    if (strcasecmp(s, "off") == 0)
        *m = MG_TUNE_OFF;
    else if (strcasecmp(s, "forced") == 0)
        *m = MG_TUNE_FORCED;
    else if (strcasecmp(s, "tuned") == 0)
        *m = MG_TUNE_TUNED;
    else if (strcasecmp(s, "online") == 0)
        *m = MG_TUNE_ONLINE;
    else
        return -1;
    return 0;
}

/* yes/no, true/false, on/off, 1/0 */
static int parse_switch(const char *s, int *out)
{
    static const char *const yes[] = {"yes", "true", "on", "1"}, *const no[] = {"no", "false", "off", "0"};
    for (int i = 0; i < 4; i++) {
        if (strcasecmp(s, yes[i]) == 0) return *out = 1, 0;
        if (strcasecmp(s, no[i]) == 0) return *out = 0, 0;
    }
    return -1;
}

static int parse_chunk(const char *s, MPI_Count *out)
{
    while (isspace((unsigned char)*s)) s++;
    if (!isdigit((unsigned char)*s)) return -1;
    errno = 0;
    char *end;
    long long v = strtoll(s, &end, 10);
    while (isspace((unsigned char)*end)) end++;
    if (errno == ERANGE || *end || v < 1 || v > INT_MAX) return -1;
    *out = (MPI_Count)v;
    return 0;
}

int mg_tune__parse_force(const char *spec, mg_tune_config *cfg, const char *where)
{
    char *copy = strdup(spec), *save = NULL, list[512];
    if (!copy) return 1;
    int bad = 0;
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *entry = trim(tok);
        if (!*entry) continue;
        char *eq = strchr(entry, '=');
        if (!eq) {
            mg_tune__warn(
                "%s: force entry '%s': expected COLLECTIVE=IMPLEMENTATION (allgather=allgather_as_gather_bcast); "
                "this entry is ignored",
                where, entry);
            bad++;
            continue;
        }
        *eq = '\0';
        char *coll = trim(entry), *impl = trim(eq + 1);
        if (strcmp(coll, MG_TUNE_DATATYPES) == 0) {
            int s = mg_tune__dts_index(impl);
            if (s < 0) {
                mg_tune__warn("%s: force entry '%s=%s': unknown strategy '%s' for derived datatypes (strategies: "
                              "default, native, normalized, pack); this entry is ignored",
                              where, coll, impl, impl);
                bad++;
            } else {
                cfg->dt_forced = (mg_dts)s;
            }
            continue;
        }
        int c = mg_tune__coll_index(coll);
        if (c < 0) {
            mg_tune__warn("%s: force entry '%s=%s': unknown collective '%s' (collectives: %s; " MG_TUNE_DATATYPES
                          " for calls with derived datatypes); this entry is ignored",
                          where, coll, impl, coll, mg_tune__coll_list(list, sizeof list));
            bad++;
            continue;
        }
        int i = mg_tune__impl_index((mg_coll)c, impl);
        if (i < 0) {
            mg_tune__warn(
                "%s: force entry '%s=%s': unknown implementation '%s' of %s (implementations: %s); this entry "
                "is ignored",
                where, coll, impl, impl, mg_tune__table((mg_coll)c)->name,
                mg_tune__impl_list((mg_coll)c, list, sizeof list));
            bad++;
            continue;
        }
        cfg->forced[c] = i;
    }
    free(copy);
    return bad;
}

/* A path of the configuration file: relative ones are relative to the file's directory. */
static char *config_path(const char *file, const char *value)
{
    const char *slash = strrchr(file, '/');
    if (value[0] == '/' || strcmp(value, "-") == 0 || !slash) return strdup(value);
    size_t dlen = (size_t)(slash - file) + 1, vlen = strlen(value);
    char *p = malloc(dlen + vlen + 1);
    if (!p) return NULL;
    memcpy(p, file, dlen);
    memcpy(p + dlen, value, vlen + 1);
    return p;
}

static void set_string(char **dst, char *value)
{
    free(*dst);
    *dst = value;
}

/* One `key = value` of the file at `where` (FILE:LINE) into cfg; returns the
 * number of problems (each warned about). */
static int apply_key(const char *path, const char *where, const char *key, const char *val, mg_tune_config *cfg)
{
    int ok;
    const char *expected;
    char forms[DT_FORMS_LEN];
    if (strcmp(key, "mode") == 0) {
        ok = parse_mode(val, &cfg->mode) == 0;
        expected = "off, forced, tuned or online";
    } else if (strcmp(key, "force") == 0) {
        return mg_tune__parse_force(val, cfg, where);
    } else if (strcmp(key, "profiles") == 0 || strcmp(key, "report") == 0 || strcmp(key, "record") == 0) {
        ok = *val != '\0';
        expected = "a path";
        char **dst = key[1] == 'r' ? &cfg->profiles : key[2] == 'p' ? &cfg->report : &cfg->record;
        if (ok) set_string(dst, config_path(path, val));
    } else if (strcmp(key, "msg_pool_bytes") == 0 || strcmp(key, "int_pool_bytes") == 0) {
        size_t v;
        ok = mg_parse_size(val, &v) == 0;
        expected = "a size in bytes such as 67108864, 64M or 256k";
        if (ok) *(key[0] == 'm' ? &cfg->msg_pool_bytes : &cfg->int_pool_bytes) = v;
    } else if (strcmp(key, "chunk") == 0) {
        ok = parse_chunk(val, &cfg->chunk) == 0;
        expected = "a number of elements from 1 to 2147483647";
    } else if (strcmp(key, "allow_regrouping") == 0) {
        ok = parse_switch(val, &cfg->allow_regrouping) == 0;
        expected = "yes or no";
    } else if (strcmp(key, "dt_form") == 0) {
        ok = mg_dt_form_parse(val, &cfg->dt_form) == MG_DT_SUCCESS;
        expected = dt_forms(forms);
    } else {
        mg_tune__warn("%s: unknown key '%s' (keys: %s); this line is ignored", where, key, keys);
        return 1;
    }
    if (ok) return 0;
    mg_tune__warn("%s: %s '%s': expected %s; this line is ignored", where, key, val, expected);
    return 1;
}

/* A comment starts with # at the beginning of the line or after a blank. */
static void strip_comment(char *line)
{
    for (char *h = line; (h = strchr(h, '#')) != NULL; h++)
        if (h == line || isspace((unsigned char)h[-1])) {
            *h = '\0';
            return;
        }
}

static int read_file(const char *path, mg_tune_config *cfg)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        mg_tune__warn("MPIGUIDE_TUNE_CONFIG=%s: cannot open the configuration file (%s); the defaults and the "
                      "environment are used",
                      path, strerror(errno));
        return 1;
    }
    char *buf = NULL, where[4200];
    size_t cap = 0;
    int lineno = 0, problems = 0;
    while (getline(&buf, &cap, f) != -1) {
        lineno++;
        strip_comment(buf);
        char *line = trim(buf);
        if (!*line) continue;
        snprintf(where, sizeof where, "%s:%d", path, lineno);
        char *eq = strchr(line, '=');
        if (!eq) {
            mg_tune__warn("%s: expected 'key = value', found '%s'; this line is ignored", where, line);
            problems++;
            continue;
        }
        *eq = '\0';
        problems += apply_key(path, where, trim(line), trim(eq + 1), cfg);
    }
    free(buf);
    fclose(f);
    return problems;
}

static const char *env(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

/* A misspelled variable would otherwise be ignored silently. Returns how many there are. */
static int warn_unknown_variables(void)
{
    int problems = 0;
    for (char **e = environ; e && *e; e++) {
        if (strncmp(*e, "MPIGUIDE_TUNE_", 14) != 0) continue;
        size_t n = strcspn(*e, "=");
        int known = 0;
        for (int i = 0; i < N_ENV && !known; i++)
            known = strlen(env_names[i]) == n && strncmp(*e, env_names[i], n) == 0;
        if (!known) {
            mg_tune__warn("unknown variable %.*s ignored (known: MPIGUIDE_TUNE_MODE, _FORCE, _PROFILES, _CONFIG, "
                          "_MSG_POOL, _INT_POOL, _CHUNK, _REPORT, _RECORD, _ALLOW_REGROUPING, _DT_FORM)",
                          (int)n, *e);
            problems++;
        }
    }
    return problems;
}

/* The MPIGUIDE_TUNE_* variables but _CONFIG over cfg; returns the number of problems. */
static int read_environment(mg_tune_config *cfg)
{
    int problems = 0;
    const char *v;
    if ((v = env("MPIGUIDE_TUNE_MODE")) != NULL && parse_mode(v, &cfg->mode) != 0) {
        mg_tune__warn("MPIGUIDE_TUNE_MODE=%s: expected off, forced, tuned or online; ignored", v);
        problems++;
    }
    if ((v = env("MPIGUIDE_TUNE_FORCE")) != NULL) {
        memset(cfg->forced, 0, sizeof cfg->forced); /* the variable replaces the file's force */
        cfg->dt_forced = MG_DTS_DEFAULT;
        problems += mg_tune__parse_force(v, cfg, "MPIGUIDE_TUNE_FORCE");
    }
    if ((v = env("MPIGUIDE_TUNE_PROFILES")) != NULL) set_string(&cfg->profiles, strdup(v));
    if ((v = env("MPIGUIDE_TUNE_REPORT")) != NULL) set_string(&cfg->report, strdup(v));
    if ((v = env("MPIGUIDE_TUNE_RECORD")) != NULL) set_string(&cfg->record, strdup(v));
    const char *pools[2] = {"MPIGUIDE_TUNE_MSG_POOL", "MPIGUIDE_TUNE_INT_POOL"};
    size_t *dst[2] = {&cfg->msg_pool_bytes, &cfg->int_pool_bytes};
    for (int i = 0; i < 2; i++)
        if ((v = env(pools[i])) != NULL && mg_parse_size(v, dst[i]) != 0) {
            mg_tune__warn("%s=%s: expected a size in bytes such as 67108864, 64M or 256k; ignored", pools[i], v);
            problems++;
        }
    if ((v = env("MPIGUIDE_TUNE_CHUNK")) != NULL && parse_chunk(v, &cfg->chunk) != 0) {
        mg_tune__warn("MPIGUIDE_TUNE_CHUNK=%s: expected a number of elements from 1 to 2147483647; ignored", v);
        problems++;
    }
    if ((v = env("MPIGUIDE_TUNE_ALLOW_REGROUPING")) != NULL && parse_switch(v, &cfg->allow_regrouping) != 0) {
        mg_tune__warn("MPIGUIDE_TUNE_ALLOW_REGROUPING=%s: expected yes or no; ignored", v);
        problems++;
    }
    if ((v = env("MPIGUIDE_TUNE_DT_FORM")) != NULL && mg_dt_form_parse(v, &cfg->dt_form) != MG_DT_SUCCESS) {
        char forms[DT_FORMS_LEN];
        mg_tune__warn("MPIGUIDE_TUNE_DT_FORM=%s: expected %s; ignored", v, dt_forms(forms));
        problems++;
    }
    return problems;
}

int mg_tune__config_read(mg_tune_config *cfg)
{
    mg_tune__config_defaults(cfg);
    int problems = 0;
    const char *file = env("MPIGUIDE_TUNE_CONFIG");
    if (file) problems += read_file(file, cfg);
    problems += read_environment(cfg);
    return problems + warn_unknown_variables();
}
