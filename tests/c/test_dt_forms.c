/* Form classes (dt.h: mg_dt_form_classes, _instance, _probe): what the
 * classes of some types are; that every class's canonical instance is of its
 * class; and which classes this MPI library packs wrongly, which must be
 * exactly those the known bugs listed for it name (tests/c/known_bugs.c:
 * their `refuses` patterns), so that a new library bug, or a fixed one, shows
 * here. Last, the case of the issue that made the probe: one
 * contiguous(10, resized(MPI_INT, lb 0, extent 1)) in mpiguide's normal form
 * is refused exactly where MPI packs that form wrongly. */
#include "known_bugs.h"
#include "mpiguide/dt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;
#define FAIL(...)                                                 \
    do {                                                          \
        failures++;                                               \
        fprintf(stderr, "%s:%d: FAIL: ", __FILE__, __LINE__);     \
        fprintf(stderr, __VA_ARGS__);                             \
        fprintf(stderr, "\n");                                    \
    } while (0)

static MPI_Datatype parsed(const char *text)
{
    MPI_Datatype t = MPI_DATATYPE_NULL;
    char err[256];
    if (mg_dt_parse(text, &t, err, sizeof err) != MG_DT_SUCCESS) FAIL("'%s': %s", text, err);
    return t;
}

/* The class names of t, sorted, joined by "; ". */
static int names_of(MPI_Datatype t, int repeated, char *out, size_t len)
{
    mg_dt_form_class cs[32];
    int n = 0, rc = mg_dt_form_classes(t, repeated, cs, 32, &n);
    char names[32][128];
    for (int i = 0; i < n && i < 32; i++) mg_dt_form_class_name(&cs[i], names[i], sizeof names[i]);
    for (int i = 1; i < n && i < 32; i++)
        for (int j = i; j > 0 && strcmp(names[j - 1], names[j]) > 0; j--) {
            char tmp[128];
            memcpy(tmp, names[j], sizeof tmp);
            memcpy(names[j], names[j - 1], sizeof tmp);
            memcpy(names[j - 1], tmp, sizeof tmp);
        }
    size_t at = 0;
    out[0] = '\0';
    for (int i = 0; i < n && i < 32 && at < len; i++) at += (size_t)snprintf(out + at, len - at, "%s%s", i ? "; " : "", names[i]);
    return rc;
}

static void classes(void)
{
    static const struct {
        const char *type;
        int repeated;
        const char *want;
    } cases[] = {
        {"hvector(count=10, block=1, stride=1, int)", 0, "hvector block step 1-byte-per-piece of int"},
        {"contig(count=10, resized(lb=0, extent=1, int))", 0, "contig inner step 1-byte-per-piece of derived int"},
        {"vector(count=3, block=2, stride=5, int)", 0, "vector inner step dense of int; vector multi-block step gap of int"},
        {"hvector(count=3, block=2, stride=2, short)", 0,
         "hvector inner step dense of short; hvector multi-block step 1-byte-per-piece of short"},
        {"hvector(count=4, block=1, stride=-1, char)", 0, "hvector block step dense backwards of char"},
        {"hindexed(blocks=[2, 0, 1], displs=[0, 20, -7], double)", 0,
         "hindexed block step empty of double; hindexed inner step dense of double; "
         "hindexed multi-block step overlapping backwards odd of double"},
        {"struct(blocks=[1, 1], displs=[0, 12], types=[int, contig(count=2, int)])", 0,
         "contig inner step dense of int; struct block step gap of int"},
        {"resized(lb=0, extent=10, hvector(count=10, block=1, stride=1, int))", 1,
         "contig inner step overlapping odd of derived int; hvector block step 1-byte-per-piece of int"},
        {"indexed_block(block=1, displs=[0, 0, 3], int)", 0,
         "indexed_block block step gap of int; indexed_block block step zero of int"},
        {"vector(count=1, block=1, stride=1, int)", 0, ""},
        {"vector(count=1, block=1, stride=1, int)", 1, "contig inner step dense of derived int"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        MPI_Datatype t = parsed(cases[i].type);
        if (t == MPI_DATATYPE_NULL) continue;
        char got[1024];
        int rc = names_of(t, cases[i].repeated, got, sizeof got);
        if (rc != MG_DT_SUCCESS || strcmp(got, cases[i].want))
            FAIL("%s%s: classes '%s' (rc %d), expected '%s'", cases[i].type, cases[i].repeated ? " repeated" : "", got,
                 rc, cases[i].want);
        MPI_Type_free(&t);
    }
    /* more classes than room: how many, and MG_DT_ERR_TRUNCATED */
    MPI_Datatype t = parsed("vector(count=3, block=2, stride=5, int)");
    mg_dt_form_class one[1];
    int n = 0;
    mg_dt_form_class two[4];
    if (mg_dt_form_classes(t, 0, one, 1, &n) != MG_DT_ERR_TRUNCATED || n < 2 || n > 4 ||
        mg_dt_form_classes(t, 0, two, n, &n) != MG_DT_SUCCESS || n != 2)
        FAIL("truncated: n = %d", n);
    MPI_Type_free(&t);
    int sizes[2] = {4, 4}, subs[2] = {2, 2}, starts[2] = {1, 1};
    MPI_Type_create_subarray(2, sizes, subs, starts, MPI_ORDER_C, MPI_INT, &t);
    if (mg_dt_form_classes(t, 0, one, 1, &n) != MG_DT_ERR_UNSUPPORTED) FAIL("subarray: not MG_DT_ERR_UNSUPPORTED");
    MPI_Type_free(&t);
}

/* Every class of each element: its instance (where one exists) has it, and
 * the probe's verdict matches the known bugs listed for this library. */
static void instances_and_probes(void)
{
    MPI_Datatype elems[] = {MPI_CHAR,    MPI_SHORT,  MPI_INT,         MPI_DOUBLE,
                            MPI_C_DOUBLE_COMPLEX, MPI_DOUBLE_INT, MPI_LONG_DOUBLE};
    int nelems = (int)(sizeof elems / sizeof elems[0]), probed = 0, refused = 0;
    char used[64] = {0}; /* which known bugs refused something */
    for (int e = 0; e < nelems; e++)
        for (int idx = 0; idx < MG_DT_FORM_CLASSES; idx++) {
            int r = idx;
            mg_dt_form_class c = {.elem = elems[e]};
            c.derived = r % 2, r /= 2;
            c.odd = r % 2, r /= 2;
            c.negative = r % 2, r /= 2;
            c.size = r % 6, r /= 6;
            c.step = r % 3, r /= 3;
            c.ctor = r;
            if (mg_dt_form_class_index(&c) != idx) continue; /* no such class */
            char name[256], inst[1024];
            mg_dt_form_class_name(&c, name, sizeof name);
            if (mg_dt_form_class_instance(&c, inst, sizeof inst) != MG_DT_SUCCESS) continue;
            MPI_Datatype t = parsed(inst);
            if (t == MPI_DATATYPE_NULL) continue;
            mg_dt_form_class cs[16];
            int n = 0, has = 0;
            if (mg_dt_form_classes(t, 0, cs, 16, &n) != MG_DT_SUCCESS) FAIL("%s: classes of %s", name, inst);
            for (int i = 0; i < n && i < 16; i++) has |= mg_dt_form_class_index(&cs[i]) == idx && cs[i].elem == c.elem;
            if (!has) FAIL("%s: its instance %s is not of the class", name, inst);
            MPI_Type_free(&t);
            int right = 0;
            if (mg_dt_form_class_probe(&c, &right) != MG_DT_SUCCESS) FAIL("%s: the probe of %s failed", name, inst);
            probed++;
            /* the patterns say where a bug may show; the probe decides */
            const mg_known_bug *b = right ? NULL : mg_known_bug_refusing(name);
            if (!right) refused++;
            if (b) used[b - mg_known_bugs] = 1;
            if (!right && b)
                printf("refused (known %s bug %s): %s: %s\n", b->family, b->name, name, inst);
            else if (!right)
                FAIL("this library packs %s wrongly, a form class no known bug listed for it names (tests/c/"
                     "known_bugs.c): %s",
                     inst, name);
        }
    for (int i = 0; i < mg_nknown_bugs; i++)
        if (mg_known_bugs[i].refuses && mg_known_bug_listed(mg_known_bugs[i].name) && !used[i])
            FAIL("known bug %s refuses no form class here", mg_known_bugs[i].name);
    printf("test_dt_forms: %d classes of %d elements probed, %d refused\n", probed, nelems, refused);
}

/* contiguous(10, resized(MPI_INT, lb 0, extent 1)) in mpiguide's normal form
 * (each form mg_dt_to_mpi_form can build): refused exactly where MPI packs it
 * wrongly, and int k holds bytes k..k+3. */
static void overlapping_ints(void)
{
    MPI_Datatype r, t;
    MPI_Type_create_resized(MPI_INT, 0, 1, &r);
    MPI_Type_contiguous(10, r, &t);
    MPI_Type_commit(&t);
    mg_dt *d = NULL;
    if (mg_dt_from_mpi(t, &d) != MG_DT_SUCCESS) FAIL("mg_dt_from_mpi");
    unsigned char buf[64], want[40];
    for (int i = 0; i < 64; i++) buf[i] = (unsigned char)(i * 37 + 11);
    for (int k = 0; k < 10; k++) memcpy(want + 4 * k, buf + k, 4);
    for (int form = MG_DT_FORM_AUTO; form <= MG_DT_FORM_COPIES && d; form++) {
        MPI_Datatype nt = MPI_DATATYPE_NULL;
        if (mg_dt_to_mpi_form(d, 1, form, &nt) != MG_DT_SUCCESS) {
            FAIL("mg_dt_to_mpi_form %s", mg_dt_form_name(form));
            continue;
        }
        mg_dt_form_class cs[16];
        int n = 0, accepted = 1;
        mg_dt_form_classes(nt, 1, cs, 16, &n);
        for (int i = 0; i < n && i < 16; i++) {
            int right = 0;
            mg_dt_form_class_probe(&cs[i], &right);
            accepted &= right;
        }
        unsigned char out[40];
        int pos = 0;
        MPI_Pack(buf, 1, nt, out, (int)sizeof out, &pos, MPI_COMM_SELF);
        int wrong = 0;
        for (int k = 0; k < 10; k++) wrong += pos != 40 || memcmp(out + 4 * k, want + 4 * k, 4);
        printf("contig(10, resized(int, 0, 1)) in the %s form: MPI packs %d of 10 ints wrongly; %s\n",
               mg_dt_form_name(form), wrong, accepted ? "accepted" : "refused");
        if (!accepted != (wrong > 0))
            FAIL("the %s form: %d ints packed wrongly but %s by the probe", mg_dt_form_name(form), wrong,
                 accepted ? "accepted" : "refused");
        MPI_Type_free(&nt);
    }
    mg_dt_free(d);
    MPI_Type_free(&t);
    MPI_Type_free(&r);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    classes();
    instances_and_probes();
    overlapping_ints();
    MPI_Finalize();
    if (failures) fprintf(stderr, "test_dt_forms: %d failure(s)\n", failures);
    return failures != 0;
}
