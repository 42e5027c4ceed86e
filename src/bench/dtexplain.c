/* mg_dtexplain: what the datatype engine makes of one type.
 *
 *   mg_dtexplain [--count C] [--n N] [--bytes M] '<type in the notation>' | '<layout spec>'
 *
 * Prints the type as given, what MPI reports for it, the normalized form of
 * one element and of the communicated count, the loop program, and the bytes
 * a pack reads and writes. A layout spec (`tiled A=2 B=4`) is built by the
 * catalog of the layouts of Carpen-Amarie et al. (2016) for N elements (default
 * 1000) or M data bytes. */
#include "layouts.h"
#include "mg_json.h"
#include "mpiguide/dt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LINE          64
#define DEFAULT_COUNT 1
#define DEFAULT_N     1000

typedef struct {
    MPI_Aint lo, hi; /* span of the data */
    MPI_Count blocks;
    unsigned char *lines; /* bitmap of touched cache lines over [lo, hi) */
} touch;

static int span_fn(MPI_Aint d, MPI_Count len, void *arg)
{
    touch *t = arg;
    if (!t->blocks || d < t->lo) t->lo = d;
    if (!t->blocks || d + len > t->hi) t->hi = d + len;
    t->blocks++;
    return 0;
}

static int line_fn(MPI_Aint d, MPI_Count len, void *arg)
{
    touch *t = arg;
    MPI_Aint first = (d - t->lo) / LINE, last = (d + len - 1 - t->lo) / LINE;
    for (MPI_Aint l = first; l <= last; l++) t->lines[l / 8] |= (unsigned char)(1u << (l % 8));
    return 0;
}

static int usage(const char *msg)
{
    if (msg) fprintf(stderr, "mg_dtexplain: %s\n", msg);
    fprintf(stderr,
            "usage: mg_dtexplain [--count C] [--n N | --bytes M] '<type>' | '<layout spec>'\n"
            "  <type>        the notation of docs/dt-notation.md, e.g. 'vector(count=4, block=2, stride=6, int)'\n"
            "  <layout spec> a layout of Carpen-Amarie et al. 2016, e.g. 'tiled A=2 B=4' (docs/layouts.md)\n"
            "  --count C     elements of <type> communicated (default 1)\n"
            "  --n N         elements of the layout (default 1000); --bytes M: data bytes instead\n"
            "  --list        the layouts it takes by name and the defaults, as one JSON object\n");
    return 2;
}

/* --list (rank 0). */
static void list(void)
{
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank != 0) return;
    const char *names[MG_LAYOUT_NKINDS];
    for (int k = 0; k < mg_layouts_count() && k < MG_LAYOUT_NKINDS; k++) names[k] = mg_layouts_get(k)->name;
    mg_json j;
    mg_json_start(&j, stdout);
    mg_json_string(&j, "driver", "mg_dtexplain");
    mg_json_strings(&j, "layouts", names, mg_layouts_count());
    mg_json_object(&j, "defaults");
    mg_json_long(&j, "count", DEFAULT_COUNT);
    mg_json_long(&j, "n", DEFAULT_N);
    mg_json_close(&j);
    mg_json_finish(&j);
}

static int explain(MPI_Datatype type, MPI_Count count)
{
    MPI_Aint lb, ext, tlb, text;
    MPI_Count size;
    MPI_Type_get_extent(type, &lb, &ext);
    MPI_Type_get_true_extent(type, &tlb, &text);
    MPI_Type_size_x(type, &size);
    printf("MPI:         size=%lld extent=%lld lb=%lld true_lb=%lld true_extent=%lld\n", (long long)size,
           (long long)ext, (long long)lb, (long long)tlb, (long long)text);
    mg_dt *t;
    int rc = mg_dt_from_mpi(type, &t);
    if (rc) {
        fprintf(stderr, "mg_dtexplain: the engine cannot take this type: %s\n", mg_dt_strerror(rc));
        return 1;
    }
    size_t cap = 1 << 16;
    char *buf = malloc(cap);
    mg_dt_describe(t, buf, cap);
    printf("normalized:  %s\n", buf);
    mg_dt_shape(t, buf, cap);
    printf("shape:       %s   (what a datatype profile's rules match, docs/tuning.md)\n", buf);
    printf("block:       %lld bytes on average (the rules' block range)\n", (long long)mg_dt_mean_block(t));
    mg_dt_describe_count(t, count, buf, cap);
    printf("count=%-6lld %s\n", (long long)count, buf);
    mg_dt_program(t, count, buf, cap);
    printf("program:\n");
    for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) printf("  %s\n", line);

    touch tc = {0};
    mg_dt_walk(t, count, span_fn, &tc);
    MPI_Aint nlines = 0;
    if (tc.blocks) {
        size_t bits = (size_t)((tc.hi - tc.lo + LINE - 1) / LINE) + 1;
        tc.lines = calloc(bits / 8 + 1, 1);
        if (tc.lines) {
            mg_dt_walk(t, count, line_fn, &tc);
            for (size_t i = 0; i < bits; i++) nlines += (tc.lines[i / 8] >> (i % 8)) & 1;
        }
    }
    printf("packed:      %lld bytes in %lld blocks (after normalization of %lld elements)\n", (long long)(size * count),
           (long long)tc.blocks, (long long)count);
    printf("memory:      data spans %lld bytes from offset %lld; a pack reads %lld cache lines of %d bytes "
           "(%lld bytes) and writes %lld bytes\n",
           (long long)(tc.hi - tc.lo), (long long)tc.lo, (long long)nlines, LINE, (long long)(nlines * LINE),
           (long long)(size * count));
    free(tc.lines);
    free(buf);
    mg_dt_free(t);
    return 0;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    long count = DEFAULT_COUNT, n = DEFAULT_N, bytes = 0;
    const char *text = NULL;
    int status = 0;
    for (int i = 1; i < argc && !status; i++) {
        const char *a = argv[i];
        long *target = !strcmp(a, "--count") ? &count : !strcmp(a, "--n") ? &n : !strcmp(a, "--bytes") ? &bytes : NULL;
        if (target) {
            char *end;
            if (i + 1 >= argc)
                status = usage("option needs a value");
            else if ((*target = strtol(argv[++i], &end, 10)) < 1 || *end)
                status = usage("expected a positive integer");
        } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            status = usage(NULL);
        } else if (!strcmp(a, "--list")) {
            list();
            MPI_Finalize();
            return 0;
        } else if (a[0] == '-' && a[1] == '-') {
            fprintf(stderr, "mg_dtexplain: unknown option '%s'\n", a);
            status = usage(NULL);
        } else if (text) {
            status = usage("give one type (quote it)");
        } else {
            text = a;
        }
    }
    if (!status && !text) status = usage("no type given");
    if (status) {
        MPI_Finalize();
        return status;
    }

    char err[512] = "";
    mg_layout_params lp;
    mg_layout_kind kind;
    char name[64];
    sscanf(text, "%63s", name);
    if (mg_layouts_find(name, &kind) == MG_LAYOUT_OK) {
        mg_layout_type lt;
        int rc = mg_layout_parse(text, &lp, err, sizeof err);
        if (!rc && bytes) rc = mg_layout_n_for_bytes(&lp, bytes, &n, err, sizeof err);
        if (!rc) rc = mg_layout_build(&lp, n, &lt, err, sizeof err);
        if (rc) {
            fprintf(stderr, "mg_dtexplain: %s\n", err);
            status = 2;
        } else {
            char spec[256];
            mg_layout_format(&lt.info.params, spec, sizeof spec);
            printf("given:       %s (%s), n=%ld elements as count=%d of one type\n", spec, lt.info.desc->constructors,
                   n, lt.count);
            status = explain(lt.type, lt.count);
            mg_layout_type_free(&lt);
        }
    } else {
        MPI_Datatype type;
        int rc = mg_dt_parse(text, &type, err, sizeof err);
        if (rc) {
            fprintf(stderr, "mg_dtexplain: %s: %s\n", rc == MG_DT_ERR_PARSE ? "not a type" : mg_dt_strerror(rc), err);
            fprintf(stderr, "  (the text is neither a layout of docs/layouts.md nor a type in the notation of "
                            "docs/dt-notation.md)\n");
            status = 2;
        } else {
            printf("given:       %s\n", text);
            MPI_Type_commit(&type);
            status = explain(type, count);
            MPI_Type_free(&type);
        }
    }
    MPI_Finalize();
    return status;
}
