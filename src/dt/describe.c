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

const char *mg__elem_name(MPI_Datatype elem, char *buf, size_t len)
{
    const struct {
        MPI_Datatype t;
        const char *name;
    } names[] = {
        {MPI_CHAR, "char"},
        {MPI_SIGNED_CHAR, "signed_char"},
        {MPI_UNSIGNED_CHAR, "unsigned_char"},
        {MPI_BYTE, "byte"},
        {MPI_SHORT, "short"},
        {MPI_UNSIGNED_SHORT, "unsigned_short"},
        {MPI_INT, "int"},
        {MPI_UNSIGNED, "unsigned"},
        {MPI_LONG, "long"},
        {MPI_UNSIGNED_LONG, "unsigned_long"},
        {MPI_LONG_LONG, "long_long"},
        {MPI_UNSIGNED_LONG_LONG, "unsigned_long_long"},
        {MPI_FLOAT, "float"},
        {MPI_DOUBLE, "double"},
        {MPI_LONG_DOUBLE, "long_double"},
        {MPI_WCHAR, "wchar"},
        {MPI_C_BOOL, "c_bool"},
        {MPI_INT8_T, "int8_t"},
        {MPI_INT16_T, "int16_t"},
        {MPI_INT32_T, "int32_t"},
        {MPI_INT64_T, "int64_t"},
        {MPI_UINT8_T, "uint8_t"},
        {MPI_UINT16_T, "uint16_t"},
        {MPI_UINT32_T, "uint32_t"},
        {MPI_UINT64_T, "uint64_t"},
        {MPI_AINT, "aint"},
        {MPI_OFFSET, "offset"},
        {MPI_COUNT, "count"},
        {MPI_2INT, "2int"},
        {MPI_PACKED, "packed"},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (names[i].t == elem) return names[i].name;
    /* Any other predefined type: its MPI name, lower case, without "MPI_". */
    char name[MPI_MAX_OBJECT_NAME] = "";
    int n = 0;
    MPI_Type_get_name(elem, name, &n);
    const char *s = strncmp(name, "MPI_", 4) ? name : name + 4;
    size_t k = 0;
    for (; s[k] && k + 1 < len; k++) buf[k] = (char)tolower((unsigned char)s[k]);
    buf[k] = 0;
    return k ? buf : "unnamed";
}

static void elem(text *o, MPI_Datatype e)
{
    char buf[MPI_MAX_OBJECT_NAME];
    put(o, "%s", mg__elem_name(e, buf, sizeof buf));
}

/* [a, b, ...] with each value divided by unit. */
static void list_aint(text *o, const MPI_Aint *v, MPI_Count n, MPI_Count unit)
{
    put(o, "[");
    MPI_Count shown = n > MG_LIST_FULL ? MG_LIST_SHOWN : n;
    for (MPI_Count i = 0; i < shown; i++) put(o, "%s%lld", i ? ", " : "", (long long)(v[i] / unit));
    if (shown < n) put(o, ", ... %lld entries", (long long)n);
    put(o, "]");
}

static void list_count(text *o, const MPI_Count *v, MPI_Count n)
{
    put(o, "[");
    MPI_Count shown = n > MG_LIST_FULL ? MG_LIST_SHOWN : n;
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
            put(o, "%s(block=%lld, displs=", el ? "indexed_block" : "hindexed_block", (long long)n->lens[0]);
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

static void placed(text *o, const mg_node *n, MPI_Aint disp)
{
    if (!n) {
        put(o, "contig(count=0, byte)");
    } else if (disp) {
        put(o, "struct(displs=[%lld], types=[", (long long)disp);
        node(o, n);
        put(o, "])");
    } else {
        node(o, n);
    }
}

static int finish(text *o)
{
    if (o->len) o->buf[o->pos < o->len ? o->pos : o->len - 1] = 0;
    return o->cut ? MG_DT_ERR_TRUNCATED : MG_DT_SUCCESS;
}

int mg_dt_describe(const mg_dt *t, char *buf, size_t len)
{
    if (!t || (!buf && len)) return MG_DT_ERR_ARG;
    text o = {buf, len, 0, 0};
    /* The extent matters when the type is repeated: show it when it is not
     * the one the data alone would give. */
    MPI_Aint dlb = t->root ? t->disp + t->root->tlb : 0, dub = t->root ? t->disp + t->root->tub : 0;
    int resized = t->lb != dlb || t->extent != dub - dlb;
    if (resized) put(&o, "resized(lb=%lld, extent=%lld, ", (long long)t->lb, (long long)t->extent);
    placed(&o, t->root, t->disp);
    if (resized) put(&o, ")");
    return finish(&o);
}

static int describe_visit(const mg_node *n, MPI_Aint disp, void *o)
{
    placed(o, n, disp);
    return finish(o);
}

int mg_dt_describe_count(const mg_dt *t, MPI_Count count, char *buf, size_t len)
{
    if (!t || count < 0 || (!buf && len)) return MG_DT_ERR_ARG;
    text o = {buf, len, 0, 0};
    return mg__repeat(t, count, describe_visit, &o);
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
        put(o, " count=%lld block=%lldB\n", (long long)n->count, (long long)(n->lens[0] * n->esize));
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
    text o = {buf, len, 0, 0};
    return mg__repeat(t, count, program_visit, &o);
}
