/* The normal form in the type notation (docs/dt-notation.md), and the loop
 * program as text. */
#include "internal.h"
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Lists longer than this are shown by their first entries and a count. */
#define MG_LIST_SHOWN 16
#define MG_LIST_FULL  64

typedef struct {
    char *buf;
    size_t len, pos;
    int cut;
    int full; /* every list entry (mg_dt_describe_full), however long */
} text;

static void put(text *o, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    size_t room = o->pos < o->len ? o->len - o->pos : 0;
    int n = vsnprintf(room ? o->buf + o->pos : NULL, room, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if ((size_t)n >= room) o->cut = 1;
    o->pos += (size_t)n;
}

/* f90_real(p=.., r=..), f90_complex(p=.., r=..), f90_integer(r=..): the
 * parameterized types of MPI_Type_create_f90_*, with the arguments they were
 * created with. Returns 0 if e is not one. */
static int f90_term(text *o, MPI_Datatype e)
{
    int ni = 0, na = 0, nd = 0, comb = MPI_UNDEFINED, v[2] = {0, 0};
    MPI_Aint a[1];
    MPI_Datatype d[1];
    if (MPI_Type_get_envelope(e, &ni, &na, &nd, &comb) != MPI_SUCCESS) return 0;
    const char *name = comb == MPI_COMBINER_F90_REAL      ? "f90_real"
                       : comb == MPI_COMBINER_F90_COMPLEX ? "f90_complex"
                       : comb == MPI_COMBINER_F90_INTEGER ? "f90_integer"
                                                          : NULL;
    int want = comb == MPI_COMBINER_F90_INTEGER ? 1 : 2;
    if (!name || ni != want || na || nd || MPI_Type_get_contents(e, ni, 0, 0, v, a, d) != MPI_SUCCESS) return 0;
    put(o, "%s(", name);
    const char *kw[2] = {want == 2 ? "p" : "r", "r"};
    for (int i = 0; i < want; i++) {
        put(o, "%s%s=", i ? ", " : "", kw[i]);
        if (v[i] == MPI_UNDEFINED)
            put(o, "undefined");
        else
            put(o, "%d", v[i]);
    }
    put(o, ")");
    return 1;
}

static void elem(text *o, MPI_Datatype e)
{
    const char *name = mg__basic_name(e);
    if (name) {
        put(o, "%s", name);
        return;
    }
    if (f90_term(o, e)) return;
    /* Any other predefined type (none in MPICH 5 and Open MPI 5): its MPI
     * name, lower case, without "MPI_"; such text does not parse back. */
    char buf[MPI_MAX_OBJECT_NAME] = "";
    int n = 0;
    MPI_Type_get_name(e, buf, &n);
    const char *s = strncmp(buf, "MPI_", 4) ? buf : buf + 4;
    put(o, "%s", *s ? "" : "unnamed");
    for (; *s; s++) put(o, "%c", isalnum((unsigned char)*s) ? tolower((unsigned char)*s) : '_');
}

/* [a, b, ...] with each value divided by unit. */
static void list_aint(text *o, const MPI_Aint *v, MPI_Count n, MPI_Count unit)
{
    put(o, "[");
    MPI_Count shown = n > MG_LIST_FULL && !o->full ? MG_LIST_SHOWN : n;
    for (MPI_Count i = 0; i < shown; i++) put(o, "%s%lld", i ? ", " : "", (long long)(v[i] / unit));
    if (shown < n) put(o, ", ... %lld entries", (long long)n);
    put(o, "]");
}

static void list_count(text *o, const MPI_Count *v, MPI_Count n)
{
    put(o, "[");
    MPI_Count shown = n > MG_LIST_FULL && !o->full ? MG_LIST_SHOWN : n;
    for (MPI_Count i = 0; i < shown; i++) put(o, "%s%lld", i ? ", " : "", (long long)v[i]);
    if (shown < n) put(o, ", ... %lld entries", (long long)n);
    put(o, "]");
}

static int divisible(const MPI_Aint *v, MPI_Count n, MPI_Count unit)
{
    for (MPI_Count i = 0; i < n; i++)
        if (v[i] % unit) return 0;
    return 1;
}

static void node(text *o, const mg_node *n);

/* `count` copies of kid, a byte stride of -1 apart. Open MPI
 * packs an hvector (or vector) of that byte stride as if it were contiguous;
 * a contiguous type of the copy resized to extent -1 is the same typemap and
 * packs right in MPICH and Open MPI. Its lb/extent come from the resized
 * markers, so a form holding it always gets the outer resized of form(). */
static void minus_one(text *o, MPI_Count count, const mg_node *kid)
{
    put(o, "contig(count=%lld, resized(lb=0, extent=-1, ", (long long)count);
    node(o, kid);
    put(o, "))");
}

/* Recursion follows the nesting of the normal form, which is shallow. */
static void node(text *o, const mg_node *n)
{
    switch (n->kind) {
    case MG_N_BLOCK:
        if (n->count == 1) {
            elem(o, n->elem);
        } else {
            put(o, "contig(count=%lld, ", (long long)n->count);
            elem(o, n->elem);
            put(o, ")");
        }
        return;
    case MG_N_VEC:
        if (n->stride == -1) {
            minus_one(o, n->count, n->kid);
            return;
        }
        if (n->kid->kind == MG_N_BLOCK) {
            const mg_node *b = n->kid;
            int el = n->stride % b->esize == 0;
            put(o, "%s(count=%lld, block=%lld, stride=%lld, ", el ? "vector" : "hvector", (long long)n->count,
                (long long)b->count, (long long)(el ? n->stride / b->esize : n->stride));
            elem(o, b->elem);
        } else {
            put(o, "hvector(count=%lld, block=1, stride=%lld, ", (long long)n->count, (long long)n->stride);
            node(o, n->kid);
        }
        put(o, ")");
        return;
    case MG_N_IDX: {
        int el = divisible(n->displs, n->count, n->esize);
        MPI_Count unit = el ? n->esize : 1;
        if (n->fixed) {
            put(o, "%s(block=%lld, displs=", el ? "indexed_block" : "hindexed_block", (long long)mg__len(n, 0));
        } else {
            put(o, "%s(blocks=", el ? "indexed" : "hindexed");
            list_count(o, n->lens, n->count);
            put(o, ", displs=");
        }
        list_aint(o, n->displs, n->count, unit);
        put(o, ", ");
        elem(o, n->elem);
        put(o, ")");
        return;
    }
    case MG_N_SEQ:
        put(o, "struct(displs=");
        list_aint(o, n->displs, n->count, 1);
        put(o, ", types=[");
        for (MPI_Count i = 0; i < n->count; i++) {
            if (i == MG_LIST_SHOWN && n->count > MG_LIST_FULL) {
                put(o, ", ... %lld entries", (long long)n->count);
                break;
            }
            if (i) put(o, ", ");
            node(o, n->kids[i]);
        }
        put(o, "])");
        return;
    }
}

/* ---- the lb and extent the printed form implies ----
 *
 * MPI libraries derive a type's lb/ub from its members' and then round the
 * extent up to the alignment of the basic types inside, each in its own way:
 * MPICH rounds struct extents only, Open MPI every constructor's, after each
 * block in turn (hvector(count=2, block=1, stride=6, int) has extent 10 in
 * MPICH and 12 in Open MPI). A form's lb/extent are its data bounds in every
 * library when no rounding can happen: every block of every node starts and
 * ends at a multiple of L, the least common multiple of the sizes of its basic
 * types (an alignment divides the type's size in C). Otherwise, or when the
 * wanted lb/extent are not the data bounds, form() wraps the form in resized. */

#define MG_LCM_MAX (1 << 20) /* beyond this, the bounds count as unknown */

/* lcm of l and the element sizes of n; 0 when it exceeds MG_LCM_MAX. */
static MPI_Count esize_lcm(const mg_node *n, MPI_Count l)
{
    if (!l) return 0;
    switch (n->kind) {
    case MG_N_BLOCK:
    case MG_N_IDX: l = l / mg__gcd(l, n->esize) * n->esize; return l > MG_LCM_MAX ? 0 : l;
    case MG_N_VEC: return esize_lcm(n->kid, l);
    case MG_N_SEQ:
        for (MPI_Count i = 0; i < n->count && l; i++) l = esize_lcm(n->kids[i], l);
        return l;
    }
    return 0;
}

/* Every block of n starts and ends at a multiple of l from n's origin, and n
 * prints no form with resized markers inside. */
static int on_grid(const mg_node *n, MPI_Count l)
{
    switch (n->kind) {
    case MG_N_BLOCK: return n->size % l == 0;
    case MG_N_VEC: return n->stride != -1 && n->stride % l == 0 && on_grid(n->kid, l);
    case MG_N_IDX:
        for (MPI_Count i = 0; i < n->count; i++)
            if (n->displs[i] % l || (mg__len(n, i) * n->esize) % l) return 0;
        return 1;
    case MG_N_SEQ:
        for (MPI_Count i = 0; i < n->count; i++)
            if (n->displs[i] % l || !on_grid(n->kids[i], l)) return 0;
        return 1;
    }
    return 0;
}

/* Whether MPI gives the form of n placed at disp exactly the lb/extent wanted. */
static int implies(const mg_node *n, MPI_Aint disp, MPI_Aint lb, MPI_Aint extent)
{
    if (!n) return lb == 0 && extent == 0; /* contig(count=0, byte) */
    if (lb != disp + n->tlb || extent != n->tub - n->tlb) return 0;
    MPI_Count l = esize_lcm(n, 1);
    return l && disp % l == 0 && on_grid(n, l);
}

/* n placed at disp, with lb and extent: the form, in resized where needed.
 * The displacement is an hindexed_block of one block, as mg_dt_to_mpi builds it. */
static void form(text *o, const mg_node *n, MPI_Aint disp, MPI_Aint lb, MPI_Aint extent)
{
    int wrap = !implies(n, disp, lb, extent);
    if (wrap) put(o, "resized(lb=%lld, extent=%lld, ", (long long)lb, (long long)extent);
    if (!n) {
        put(o, "contig(count=0, byte)");
    } else if (disp) {
        put(o, "hindexed_block(block=1, displs=[%lld], ", (long long)disp);
        node(o, n);
        put(o, ")");
    } else {
        node(o, n);
    }
    if (wrap) put(o, ")");
}

static int finish(text *o)
{
    if (o->len) o->buf[o->pos < o->len ? o->pos : o->len - 1] = 0;
    return o->cut ? MG_DT_ERR_TRUNCATED : MG_DT_SUCCESS;
}

static int describe(const mg_dt *t, char *buf, size_t len, int full)
{
    if (!t || (!buf && len)) return MG_DT_ERR_ARG;
    text o = {buf, len, 0, 0, full};
    form(&o, t->root, t->disp, t->lb, t->extent);
    return finish(&o);
}

int mg_dt_describe(const mg_dt *t, char *buf, size_t len) { return describe(t, buf, len, 0); }

int mg_dt_describe_full(const mg_dt *t, char *buf, size_t len) { return describe(t, buf, len, 1); }

int mg_dt_shape(const mg_dt *t, char *buf, size_t len)
{
    if (!t || !buf || !len) return MG_DT_ERR_ARG;
    /* the description's lists are shortened, so its constructors fit */
    char text[4096];
    mg_dt_describe(t, text, sizeof text);
    buf[0] = '\0';
    size_t at = 0;
    for (const char *c = text; *c; c++) {
        if (!(*c >= 'a' && *c <= 'z') || (c > text && ((c[-1] >= 'a' && c[-1] <= 'z') || c[-1] == '_'))) continue;
        size_t n = strspn(c, "abcdefghijklmnopqrstuvwxyz_");
        if (c[n] != '(') continue;
        int w = snprintf(buf + at, len - at, "%s%.*s", at ? "/" : "", (int)n, c);
        if (w < 0 || (size_t)w >= len - at) {
            buf[at] = '\0';
            return MG_DT_ERR_TRUNCATED;
        }
        at += (size_t)w;
        if (n == 6 && strncmp(c, "struct", 6) == 0) break;
    }
    return MG_DT_SUCCESS;
}

typedef struct {
    text o;
    MPI_Aint lb, extent;
} count_text;

static int describe_visit(const mg_node *n, MPI_Aint disp, void *arg)
{
    count_text *c = arg;
    form(&c->o, n, disp, c->lb, c->extent);
    return finish(&c->o);
}

int mg_dt_describe_count(const mg_dt *t, MPI_Count count, char *buf, size_t len)
{
    if (!t || count < 0 || (!buf && len)) return MG_DT_ERR_ARG;
    count_text c = {{buf, len, 0, 0, 0}, 0, 0};
    mg__count_bounds(t, count, &c.lb, &c.extent);
    return mg__repeat(t, count, describe_visit, &c);
}

static const char *op_name(int op)
{
    switch (op) {
    case MG_OP_CONTIG: return "contig";
    case MG_OP_STRIDED: return "strided";
    case MG_OP_STRIDED2: return "strided2";
    case MG_OP_INDEXED_FIXED: return "indexed-fixed";
    case MG_OP_INDEXED: return "indexed";
    case MG_OP_REPEAT_INDEXED: return "repeat-indexed";
    case MG_OP_REPEAT: return "repeat";
    case MG_OP_SEQUENCE: return "sequence";
    }
    return "?";
}

static void program(text *o, const mg_node *n, MPI_Aint disp, int depth)
{
    int op = mg__op_of(n);
    put(o, "%*s%s @%lld", 2 * depth, "", op_name(op), (long long)disp);
    switch (op) {
    case MG_OP_CONTIG: put(o, " bytes=%lld\n", (long long)n->size); return;
    case MG_OP_STRIDED:
        put(o, " count=%lld block=%lldB stride=%lldB\n", (long long)n->count, (long long)n->kid->size,
            (long long)n->stride);
        return;
    case MG_OP_STRIDED2:
        put(o, " outer=%lld stride=%lldB inner=%lld block=%lldB stride=%lldB\n", (long long)n->count,
            (long long)n->stride, (long long)n->kid->count, (long long)n->kid->kid->size, (long long)n->kid->stride);
        return;
    case MG_OP_INDEXED_FIXED:
        put(o, " count=%lld block=%lldB\n", (long long)n->count, (long long)(mg__len(n, 0) * n->esize));
        return;
    case MG_OP_INDEXED: put(o, " count=%lld bytes=%lld\n", (long long)n->count, (long long)n->size); return;
    case MG_OP_REPEAT_INDEXED:
    case MG_OP_REPEAT:
        put(o, " count=%lld stride=%lldB\n", (long long)n->count, (long long)n->stride);
        program(o, n->kid, 0, depth + 1);
        return;
    case MG_OP_SEQUENCE:
        put(o, " count=%lld\n", (long long)n->count);
        for (MPI_Count i = 0; i < n->count; i++) {
            if (i == MG_LIST_SHOWN && n->count > MG_LIST_FULL) {
                put(o, "%*s... %lld entries\n", 2 * depth + 2, "", (long long)n->count);
                break;
            }
            program(o, n->kids[i], n->displs[i], depth + 1);
        }
        return;
    }
}

static int program_visit(const mg_node *n, MPI_Aint disp, void *o)
{
    if (n)
        program(o, n, disp, 0);
    else
        put(o, "(no data)\n");
    return finish(o);
}

int mg_dt_program(const mg_dt *t, MPI_Count count, char *buf, size_t len)
{
    if (!t || count < 0 || (!buf && len)) return MG_DT_ERR_ARG;
    text o = {buf, len, 0, 0, 0};
    return mg__repeat(t, count, program_visit, &o);
}
