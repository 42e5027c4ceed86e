/* The names of form classes, their canonical instances and the probe that
 * packs an instance with MPI and with the engine (dt.h; the classes
 * themselves are found by forms.c). */
#include "internal.h"
#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const ctor_names[] = {"contig",         "vector",  "hvector",  "indexed_block",
                                         "hindexed_block", "indexed", "hindexed", "struct"};

/* The element's name in the notation, or "" if it has none. */
static void elem_name(MPI_Datatype e, char *buf, size_t len)
{
    const char *name = mg__basic_name(e);
    buf[0] = '\0';
    if (name) {
        snprintf(buf, len, "%s", name);
        return;
    }
    mg_dt *d = NULL;
    if (mg_dt_from_mpi(e, &d) == MG_DT_SUCCESS && mg_dt_describe(d, buf, len) != MG_DT_SUCCESS) buf[0] = '\0';
    mg_dt_free(d);
}

int mg_dt_form_class_name(const mg_dt_form_class *c, char *buf, size_t len)
{
    static const char *const steps[] = {"inner", "block", "multi-block"};
    static const char *const sizes[] = {"zero", "1-byte-per-piece", "overlapping", "dense", "gap", "empty"};
    if (!buf || len == 0) return MG_DT_ERR_ARG;
    buf[0] = '\0';
    if (mg_dt_form_class_index(c) < 0) return MG_DT_ERR_ARG;
    char e[128];
    elem_name(c->elem, e, sizeof e);
    int n = snprintf(buf, len, "%s %s step %s%s%s of %s%s", ctor_names[c->ctor], steps[c->step], sizes[c->size],
                     c->negative ? " backwards" : "", c->odd ? " odd" : "", c->derived ? "derived " : "",
                     e[0] ? e : "?");
    return n >= 0 && (size_t)n < len ? MG_DT_SUCCESS : MG_DT_ERR_TRUNCATED;
}

/* The step of a class for pieces (or blocks) of `span` data bytes and
 * elements of extent e; *ok 0 where no step of that kind exists. */
static MPI_Aint canonical_step(const mg_dt_form_class *c, MPI_Aint span, MPI_Aint pieces, MPI_Aint e, int *ok)
{
    MPI_Aint d = -1;
    switch (c->size) {
    case MG_DT_FC_ZERO: d = 0; break;
    case MG_DT_FC_BYTE: d = pieces < span ? pieces : -1; break;
    case MG_DT_FC_OVERLAP: /* a byte per piece is a class of its own */
        if (c->odd) {
            for (MPI_Aint t = span - 1; t > 1 && d < 0; t--)
                if (t % e && t != pieces) d = t;
        } else {
            for (MPI_Aint t = e; t < span && d < 0; t += e)
                if (t > 1 && t != pieces) d = t;
        }
        break;
    case MG_DT_FC_DENSE: d = span; break;
    case MG_DT_FC_GAP:
        if (c->odd) {
            for (MPI_Aint t = span + 1; t <= span + e && d < 0; t++)
                if (t % e) d = t;
        } else {
            d = (span / e + 1) * e;
        }
        break;
    default: d = 0; break;
    }
    *ok = d >= 0;
    return c->negative ? -d : d;
}

/* Three blocks of bl pieces pc (lens: their lengths; NULL: all bl), k apart:
 * a vector's stride, or displacements 0, k, 2k, as the constructor counts. */
static int three_blocks(char *buf, size_t len, int ctor, int bl, const int *lens, long k, const char *pc)
{
    const char *name = ctor_names[ctor];
    int l0 = lens ? lens[0] : bl, l1 = lens ? lens[1] : bl, l2 = lens ? lens[2] : bl;
    switch (ctor) {
    case MG_DT_FC_VECTOR:
    case MG_DT_FC_HVECTOR: return snprintf(buf, len, "%s(count=3, block=%d, stride=%ld, %s)", name, bl, k, pc);
    case MG_DT_FC_INDEXED_BLOCK:
    case MG_DT_FC_HINDEXED_BLOCK:
        return snprintf(buf, len, "%s(block=%d, displs=[0, %ld, %ld], %s)", name, bl, k, 2 * k, pc);
    case MG_DT_FC_INDEXED:
    case MG_DT_FC_HINDEXED:
        return snprintf(buf, len, "%s(blocks=[%d, %d, %d], displs=[0, %ld, %ld], %s)", name, l0, l1, l2, k, 2 * k, pc);
    default:
        return snprintf(buf, len, "struct(blocks=[%d, %d, %d], displs=[0, %ld, %ld], types=[%s, %s, %s])", l0, l1, l2,
                        k, 2 * k, pc, pc, pc);
    }
}

int mg_dt_form_class_instance(const mg_dt_form_class *c, char *buf, size_t len)
{
    if (!buf || len == 0) return MG_DT_ERR_ARG;
    buf[0] = '\0';
    if (mg_dt_form_class_index(c) < 0) return MG_DT_ERR_ARG;
    char e[128], p0[192], pc[256];
    elem_name(c->elem, e, sizeof e);
    MPI_Count esize = 0, lb, ext, tlb, text;
    if (!e[0] || MPI_Type_size_x(c->elem, &esize) != MPI_SUCCESS || esize <= 0 ||
        MPI_Type_get_extent_x(c->elem, &lb, &ext) != MPI_SUCCESS ||
        MPI_Type_get_true_extent_x(c->elem, &tlb, &text) != MPI_SUCCESS || ext <= 0)
        return MG_DT_ERR_UNSUPPORTED;
    /* the base piece: the element, or a derived type of three; its extent
     * and the span of its data */
    MPI_Aint ext0 = (MPI_Aint)ext, span0 = (MPI_Aint)text, d;
    if (c->derived) {
        snprintf(p0, sizeof p0, "contig(count=3, %s)", e);
        span0 += 2 * ext0;
        ext0 *= 3;
    } else {
        snprintf(p0, sizeof p0, "%s", e);
    }
    int ok = 1, n = 0, h = c->ctor == MG_DT_FC_HVECTOR || c->ctor == MG_DT_FC_HINDEXED_BLOCK ||
                           c->ctor == MG_DT_FC_HINDEXED || c->ctor == MG_DT_FC_STRUCT;
    const char *name = ctor_names[c->ctor];
    if (c->size == MG_DT_FC_EMPTY) {
        /* a block of no pieces between two of one; a contiguous type of
         * pieces without data */
        static const int lens[3] = {1, 0, 1};
        MPI_Aint g = 2 * ext0;
        if (c->ctor == MG_DT_FC_CONTIG) {
            n = snprintf(buf, len, "contig(count=3, contig(count=0, %s))", e);
        } else if (c->ctor == MG_DT_FC_VECTOR || c->ctor == MG_DT_FC_HVECTOR) {
            n = snprintf(buf, len, "%s(count=3, block=0, stride=%ld, %s)", name, h ? (long)g : 2L, p0);
        } else if (c->ctor == MG_DT_FC_INDEXED_BLOCK || c->ctor == MG_DT_FC_HINDEXED_BLOCK) {
            n = snprintf(buf, len, "%s(block=0, displs=[0, %ld, %ld], %s)", name, h ? (long)g : 2L, h ? 2 * (long)g : 4L,
                         p0);
        } else {
            n = three_blocks(buf, len, c->ctor, 1, lens, h ? (long)g : 2L, p0);
        }
    } else if (c->step == MG_DT_FC_INNER) {
        /* one block of three pieces, each the step after the last: a basic
         * piece's step is its extent, a derived one is resized to the step */
        d = canonical_step(c, span0, 1, (MPI_Aint)ext, &ok);
        if (!ok || (!c->derived && d != ext0)) return MG_DT_ERR_UNSUPPORTED;
        if (c->derived)
            snprintf(pc, sizeof pc, "resized(lb=0, extent=%ld, %s)", (long)d, p0);
        else
            snprintf(pc, sizeof pc, "%s", p0);
        switch (c->ctor) {
        case MG_DT_FC_CONTIG: n = snprintf(buf, len, "contig(count=3, %s)", pc); break;
        case MG_DT_FC_VECTOR:
        case MG_DT_FC_HVECTOR: n = snprintf(buf, len, "%s(count=1, block=3, stride=1, %s)", name, pc); break;
        case MG_DT_FC_INDEXED_BLOCK:
        case MG_DT_FC_HINDEXED_BLOCK: n = snprintf(buf, len, "%s(block=3, displs=[0], %s)", name, pc); break;
        case MG_DT_FC_INDEXED:
        case MG_DT_FC_HINDEXED: n = snprintf(buf, len, "%s(blocks=[3], displs=[0], %s)", name, pc); break;
        default: n = snprintf(buf, len, "struct(blocks=[3], displs=[0], types=[%s])", pc); break;
        }
    } else {
        /* three blocks of one piece (BLOCK) or three (MULTI), the step apart;
         * a byte per piece counted in extents: blocks of one extent's bytes */
        int bl = c->step == MG_DT_FC_BLOCK ? 1 : !h && c->size == MG_DT_FC_BYTE && ext0 > 1 ? (int)ext0 : 3;
        if (bl > 16) return MG_DT_ERR_UNSUPPORTED; /* small instances only */
        MPI_Aint unit = ext0, span_b = (MPI_Aint)(bl - 1) * ext0 + span0;
        d = canonical_step(c, span_b, bl, (MPI_Aint)ext, &ok);
        if (!ok) return MG_DT_ERR_UNSUPPORTED;
        snprintf(pc, sizeof pc, "%s", p0);
        if (!h && d % unit) {
            /* steps counted in extents: a derived piece of one is resized to
             * the step; blocks of several take another step of the class */
            MPI_Aint m = d < 0 ? -d : d, sign = d < 0 ? -1 : 1;
            if (c->derived && bl == 1) {
                snprintf(pc, sizeof pc, "resized(lb=0, extent=%ld, %s)", (long)m, p0);
                unit = m;
            } else if (!c->odd && c->size == MG_DT_FC_GAP) {
                d = sign * (span_b / unit + 1) * unit;
            } else if (!c->odd && c->size == MG_DT_FC_OVERLAP && unit < span_b && unit != bl) {
                d = sign * unit;
            } else {
                return MG_DT_ERR_UNSUPPORTED;
            }
        }
        n = three_blocks(buf, len, c->ctor, bl, NULL, h ? (long)d : (long)(d / unit), pc);
    }
    return n >= 0 && (size_t)n < len ? MG_DT_SUCCESS : MG_DT_ERR_TRUNCATED;
}

/* ------------------------------------------------------------ the probe */

enum { PROBE_BYTES = 8192 };

/* MPI_Pack and MPI_Unpack of one element of t against the engine's, data at
 * the middle of a buffer of pseudo-random bytes. */
/* Elements whose values leave bytes unused (x86's 80-bit long double in 16
 * bytes): MPI moves their values, and may leave the padding unwritten. */
static int padded(MPI_Datatype e)
{
#if LDBL_MANT_DIG == 64
    if (e == MPI_LONG_DOUBLE || e == MPI_C_LONG_DOUBLE_COMPLEX || e == MPI_LONG_DOUBLE_INT) return 1;
#ifdef MPI_CXX_LONG_DOUBLE_COMPLEX
    if (e == MPI_CXX_LONG_DOUBLE_COMPLEX) return 1;
#endif
#endif
    (void)e;
    return 0;
}

static int compare(MPI_Datatype t, MPI_Datatype elem, int *right)
{
    MPI_Count size, tlb, text;
    if (MPI_Type_size_x(t, &size) != MPI_SUCCESS || MPI_Type_get_true_extent_x(t, &tlb, &text) != MPI_SUCCESS)
        return MG_DT_ERR_MPI;
    MPI_Count mid = PROBE_BYTES / 2;
    if (size > mid || tlb < -mid || tlb + text > mid) return MG_DT_ERR_UNSUPPORTED;
    unsigned char *mem = malloc(5 * PROBE_BYTES);
    if (!mem) return MG_DT_ERR_NOMEM;
    unsigned char *data = mem, *lib = mem + PROBE_BYTES, *eng = mem + 2 * PROBE_BYTES, *out = mem + 3 * PROBE_BYTES,
                  *lib2 = mem + 4 * PROBE_BYTES;
    uint32_t x = 2463534242u;
    for (int i = 0; i < PROBE_BYTES; i++) {
        x ^= x << 13, x ^= x >> 17, x ^= x << 5;
        data[i] = (unsigned char)x;
    }
    mg_dt *d = NULL;
    MPI_Count act = -1;
    int pos = 0, rc = mg_dt_from_mpi(t, &d);
    if (rc == MG_DT_SUCCESS) rc = mg_dt_pack(d, data + mid, 1, 0, eng, size, &act);
    if (rc == MG_DT_SUCCESS) {
        /* packed twice, into zeros and into ones: a byte that differs between
         * the two was not written, which only a padded element's padding may be */
        int pos2 = 0, pad = padded(elem);
        memset(lib, 0, (size_t)size);
        memset(lib2, 0xff, (size_t)size);
        int mrc = MPI_Pack(data + mid, 1, t, lib, (int)size, &pos, MPI_COMM_SELF);
        if (mrc == MPI_SUCCESS) mrc = MPI_Pack(data + mid, 1, t, lib2, (int)size, &pos2, MPI_COMM_SELF);
        *right = mrc == MPI_SUCCESS && act == size && pos == size && pos2 == size;
        for (MPI_Count i = 0; i < size && *right; i++)
            *right = lib[i] == lib2[i] ? lib[i] == eng[i] : pad;
    }
    /* unpacking where the pieces do not overlap (a receive's type must not) */
    int overlap = 0;
    MPI_Count runs = 0;
    if (rc == MG_DT_SUCCESS && *right) {
        /* the typemap's bytes in order cover exactly `size` distinct bytes? */
        memset(out, 0, PROBE_BYTES);
        for (MPI_Count i = 0; i < size; i++) lib[i] = 1;
        if (mg_dt_unpack(d, lib, size, 0, out + mid, 1, &act) == MG_DT_SUCCESS)
            for (int i = 0; i < PROBE_BYTES; i++) runs += out[i];
        overlap = runs != size;
    }
    if (rc == MG_DT_SUCCESS && *right && !overlap) {
        memcpy(lib, data, PROBE_BYTES);
        memcpy(out, data, PROBE_BYTES);
        int upos = 0;
        int mrc = MPI_Unpack(eng, (int)size, &upos, lib + mid, 1, t, MPI_COMM_SELF);
        rc = mg_dt_unpack(d, eng, size, 0, out + mid, 1, &act);
        *right = mrc == MPI_SUCCESS && upos == size && !memcmp(lib, out, PROBE_BYTES);
    }
    mg_dt_free(d);
    free(mem);
    return rc;
}

int mg_dt_form_class_probe(const mg_dt_form_class *c, int *right)
{
    if (!right) return MG_DT_ERR_ARG;
    *right = 0;
    char text[1024];
    MG_TRY(mg_dt_form_class_instance(c, text, sizeof text));
    /* a library's error is its verdict, not the caller's: returned, not raised */
    MPI_Errhandler self = MPI_ERRHANDLER_NULL;
    MPI_Comm_get_errhandler(MPI_COMM_SELF, &self);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Datatype t = MPI_DATATYPE_NULL;
    int rc = mg_dt_parse(text, &t, NULL, 0);
    if (rc == MG_DT_SUCCESS) rc = MPI_Type_commit(&t) == MPI_SUCCESS ? MG_DT_SUCCESS : MG_DT_ERR_MPI;
    if (rc == MG_DT_SUCCESS) rc = compare(t, c->elem, right);
    if (t != MPI_DATATYPE_NULL) MPI_Type_free(&t);
    if (self != MPI_ERRHANDLER_NULL) {
        MPI_Comm_set_errhandler(MPI_COMM_SELF, self);
        MPI_Errhandler_free(&self);
    }
    return rc;
}
