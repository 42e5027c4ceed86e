/* Layout parameter sets: setting, parsing and formatting the text spec
 * (`tiled A=2 variant=1`; docs/layouts.md). */
#include "layouts_internal.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* Parameter sets, parsing and formatting                              */
/* ------------------------------------------------------------------ */

void mg_layout_params_init(mg_layout_params *p, mg_layout_kind kind)
{
    if (!p) return;
    memset(p, 0, sizeof *p);
    p->kind = kind;
}

/* Whether the layout takes every given parameter (for contiguous-subtype: the sub's). */
int mg_layout__takes_check(const mg_layout_params *p, char *err, size_t errlen)
{
    const row *r = &mg_layout__catalog[p->kind];
    char list[160];
    unsigned extra = p->given & ~r->d.params;
    if (extra) {
        int id = __builtin_ctz(extra);
        mg_layout__names_of(r->d.params, list, sizeof list);
        mg_layout__put_msg(err, errlen, "%s does not take %s (%s takes: %s)", r->d.name, mg_layout__param_names[id],
                           r->d.name, list);
        return MG_LAYOUT_ESPEC;
    }
    if (p->kind != MG_LAYOUT_CONTIGUOUS_SUBTYPE || !(p->given & P(SUB))) return MG_LAYOUT_OK;
    long sub = p->value[MG_LAYOUT_P_SUB];
    if (!mg_layout__is_sub(sub)) {
        mg_layout__put_msg(err, errlen, "%s: sub must be one of %s", r->d.name,
                           mg_layout__sub_names(", ", list, sizeof list));
        return MG_LAYOUT_EINVALID;
    }
    const row *s = &mg_layout__catalog[sub];
    extra = p->given & ~(s->d.params | P(SUB));
    if (extra) {
        int id = __builtin_ctz(extra);
        mg_layout__names_of(s->d.params, list, sizeof list);
        mg_layout__put_msg(err, errlen, "%s sub=%s does not take %s (%s takes: %s)", r->d.name, s->d.name,
                           mg_layout__param_names[id], s->d.name, list);
        return MG_LAYOUT_ESPEC;
    }
    return MG_LAYOUT_OK;
}

int mg_layout_params_set(mg_layout_params *p, mg_layout_param id, long value, char *err, size_t errlen)
{
    if (!p || (int)p->kind < 0 || p->kind >= MG_LAYOUT_NKINDS || (int)id < 0 || id >= MG_LAYOUT_NPARAMS) {
        mg_layout__put_msg(err, errlen, "mg_layout_params_set: bad layout or parameter id");
        return MG_LAYOUT_EARG;
    }
    const row *r = &mg_layout__catalog[p->kind];
    if (!(r->d.params & MG_LAYOUT_BIT(id))) {
        char list[160];
        mg_layout__names_of(r->d.params, list, sizeof list);
        mg_layout__put_msg(err, errlen, "%s does not take %s (%s takes: %s)", r->d.name, mg_layout__param_names[id],
                           r->d.name, list);
        return MG_LAYOUT_ESPEC;
    }
    if (value < INT_MIN || value > INT_MAX) {
        mg_layout__put_msg(err, errlen, "%s=%ld does not fit in an int", mg_layout__param_names[id], value);
        return MG_LAYOUT_EINVALID;
    }
    p->value[id] = value;
    p->given |= MG_LAYOUT_BIT(id);
    return MG_LAYOUT_OK;
}

static int parse_int(const char *s, size_t len, long *out)
{
    char tmp[32];
    if (len == 0 || len >= sizeof tmp) return 0;
    memcpy(tmp, s, len);
    tmp[len] = '\0';
    char *end;
    long long v = strtoll(tmp, &end, 10);
    if (*end != '\0' || end == tmp || v < INT_MIN || v > INT_MAX) return 0;
    *out = (long)v;
    return 1;
}

/* The value val[0..vl) of parameter id of layout `name`: a type, a sub or an int. */
static int parse_value(const char *name, int id, const char *val, size_t vl, long *v, char *err, size_t errlen)
{
    int shown = (int)(vl < 32 ? vl : 32);
    if (id == MG_LAYOUT_P_TYPE) {
        for (int b = 0; b < MG_LAYOUT_NBASIC; b++)
            if (mg_layout__eq_ci(val, vl, mg_layout__basic_names[b])) {
                *v = b;
                return MG_LAYOUT_OK;
            }
        mg_layout__put_msg(err, errlen, "%s: bad type '%.*s'; types are: int char short double byte", name, shown, val);
        return MG_LAYOUT_ESPEC;
    }
    if (id == MG_LAYOUT_P_SUB) {
        int sk = mg_layout__find_kind(val, vl);
        if (mg_layout__is_sub(sk)) {
            *v = sk;
            return MG_LAYOUT_OK;
        }
        char subs[160];
        mg_layout__put_msg(err, errlen, "%s: bad sub '%.*s'; sub must be one of: %s", name, shown, val,
                           mg_layout__sub_names(" ", subs, sizeof subs));
        return MG_LAYOUT_ESPEC;
    }
    if (parse_int(val, vl, v)) return MG_LAYOUT_OK;
    mg_layout__put_msg(err, errlen, "%s: bad integer '%.*s' for %s", name, shown, val, mg_layout__param_names[id]);
    return MG_LAYOUT_ESPEC;
}

int mg_layout_parse(const char *spec, mg_layout_params *p, char *err, size_t errlen)
{
    if (!spec || !p) {
        mg_layout__put_msg(err, errlen, "mg_layout_parse: NULL argument");
        return MG_LAYOUT_EARG;
    }
    const char *s = spec;
    while (*s == ' ' || *s == '\t' || *s == '\n') s++;
    size_t nl = strcspn(s, " \t\n");
    if (nl == 0) {
        mg_layout__put_msg(err, errlen, "empty layout spec: expected a layout name such as 'tiled A=2'");
        return MG_LAYOUT_ESPEC;
    }
    int kind = mg_layout__find_kind(s, nl);
    if (kind < 0) {
        char names[512];
        mg_layout__kind_names(names, sizeof names);
        mg_layout__put_msg(err, errlen, "unknown layout '%.*s'; valid layouts: %s", (int)(nl < 64 ? nl : 64), s, names);
        return MG_LAYOUT_ESPEC;
    }
    mg_layout_params q;
    mg_layout_params_init(&q, (mg_layout_kind)kind);
    const char *name = mg_layout__catalog[kind].d.name;
    s += nl;
    for (;;) {
        while (*s == ' ' || *s == '\t' || *s == '\n') s++;
        if (!*s) break;
        size_t tl = strcspn(s, " \t\n");
        int tlp = (int)(tl < 64 ? tl : 64); /* printed length */
        const char *eq = memchr(s, '=', tl);
        if (!eq || eq == s) {
            mg_layout__put_msg(err, errlen, "%s: bad token '%.*s': expected key=value", name, tlp, s);
            return MG_LAYOUT_ESPEC;
        }
        size_t kl = (size_t)(eq - s), vl = tl - kl - 1;
        const char *val = eq + 1;
        int id = -1;
        for (int i = 0; i < MG_LAYOUT_NPARAMS; i++)
            if (mg_layout__eq_ci(s, kl, mg_layout__param_names[i])) id = i;
        if (id < 0) {
            char list[160];
            mg_layout__names_of(~0u & ((1u << MG_LAYOUT_NPARAMS) - 1), list, sizeof list);
            mg_layout__put_msg(err, errlen, "%s: unknown parameter '%.*s'; parameters are: %s", name,
                               (int)(kl < 32 ? kl : 32), s, list);
            return MG_LAYOUT_ESPEC;
        }
        if (q.given & MG_LAYOUT_BIT(id)) {
            mg_layout__put_msg(err, errlen, "%s: %s given twice", name, mg_layout__param_names[id]);
            return MG_LAYOUT_ESPEC;
        }
        if (!(mg_layout__catalog[kind].d.params & MG_LAYOUT_BIT(id))) {
            char list[160];
            mg_layout__names_of(mg_layout__catalog[kind].d.params, list, sizeof list);
            mg_layout__put_msg(err, errlen, "%s does not take %s (%s takes: %s)", name, mg_layout__param_names[id],
                               name, list);
            return MG_LAYOUT_ESPEC;
        }
        long v;
        if (parse_value(name, id, val, vl, &v, err, errlen) != MG_LAYOUT_OK) return MG_LAYOUT_ESPEC;
        q.value[id] = v;
        q.given |= MG_LAYOUT_BIT(id);
        s += tl;
    }
    int rc = mg_layout__takes_check(&q, err, errlen);
    if (rc) return rc;
    *p = q;
    return MG_LAYOUT_OK;
}

int mg_layout_format(const mg_layout_params *p, char *buf, size_t len)
{
    if (!p || !buf || len == 0 || (int)p->kind < 0 || p->kind >= MG_LAYOUT_NKINDS) return MG_LAYOUT_EARG;
    size_t pos = 0;
    int trunc = 0;
    mg_layout__app(buf, len, &pos, &trunc, "%s", mg_layout__catalog[p->kind].d.name);
    for (int i = 0; i < MG_LAYOUT_NPARAMS; i++) {
        if (!(p->given & MG_LAYOUT_BIT(i))) continue;
        long v = p->value[i];
        if (i == MG_LAYOUT_P_SUB)
            mg_layout__app(buf, len, &pos, &trunc, " sub=%s",
                           (v >= 0 && v < MG_LAYOUT_NKINDS) ? mg_layout__catalog[v].d.name : "?");
        else if (i == MG_LAYOUT_P_TYPE)
            mg_layout__app(buf, len, &pos, &trunc, " type=%s",
                           (v >= 0 && v < MG_LAYOUT_NBASIC) ? mg_layout__basic_names[v] : "?");
        else
            mg_layout__app(buf, len, &pos, &trunc, " %s=%ld", mg_layout__param_names[i], v);
    }
    return trunc ? MG_LAYOUT_EARG : MG_LAYOUT_OK;
}
