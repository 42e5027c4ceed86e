/* What the layouts_*.c files share: the catalog's row and the checking
 * context, the tables of layouts.c, its helpers, and the shape functions and
 * builders the table names. Internal to the mg_layouts library: every name
 * here starts with mg_layout__, so none can clash with a driver's own. */
#ifndef MG_LAYOUTS_INTERNAL_H
#define MG_LAYOUTS_INTERNAL_H

#include "layouts.h"

#include <stddef.h>

#define P(x)    MG_LAYOUT_BIT(MG_LAYOUT_P_##x)
#define NUMERIC (P(A) | P(A1) | P(A2) | P(B) | P(B1) | P(B2) | P(S) | P(S1) | P(S2))

typedef enum {
    DS_NONE,
    DS_TILED,   /* Table 2, Tiled */
    DS_BLOCK,   /* Table 2, Block */
    DS_BUCKET,  /* Table 2, Bucket */
    DS_ALT,     /* Table 2, Alternating */
    DS_ALTREP,  /* Expectation Test 10: A1=A-1, A2=A+1, B1=A+1 (B2=A2 is structural) */
    DS_HETERO,  /* Expectation Test 2: B = A */
    DS_TSTRUCT, /* Test 5: Tiled's B, S1 = S2 = 1 */
    DS_VTILED   /* Test 7: Tiled's B, S = MG_LAYOUT_DEFAULT_S */
} dset;

/* value = A * num / den + add, per variant; num == 0 means a constant. */
typedef struct {
    dset set;
    mg_layout_param id;
    int num[2], den[2], add[2];
} default_rule;

/* Memory layout families: every description of one layout has its geometry.
 * Bucket, Alternating and Alternating with B2 = A2 share one offset formula. */
typedef enum { GEO_CONTIG, GEO_TILED, GEO_BLOCK, GEO_BUCKET, GEO_ALT, GEO_ALT_B2A2, GEO_ROWCOL, GEO_HETERO } geometry;

typedef struct ctx ctx;
typedef int (*shape_fn)(ctx *c);
typedef int (*build_fn)(ctx *c, MPI_Datatype *out);

typedef struct {
    mg_layout_desc d;
    dset defaults;
    geometry geo;
    int tight; /* dynamic types that are not resized: extent = span of the data */
    int sub;   /* may be the sub of contiguous-subtype (a basic layout with a block type) */
    shape_fn shape;
    build_fn build;
} row;

struct ctx {
    const row *r; /* the layout's row */
    const row *g; /* row that gives defaults, rules and geometry (the sub's, if any) */
    mg_layout_info *L;
    unsigned derived; /* parameters filled in from defaults */
    char prefix[64];  /* "tiled" or "contiguous-subtype sub=block" */
    char *err;
    size_t errlen;
};

/* Tiled-heterogeneous: member types in order (layouts.c). */
enum { HET_PARTS = 4 };

extern const row mg_layout__catalog[MG_LAYOUT_NKINDS];
extern const default_rule mg_layout__defaults[];
extern const size_t mg_layout__ndefaults;
extern const char *const mg_layout__param_names[MG_LAYOUT_NPARAMS];
extern const char *const mg_layout__basic_names[MG_LAYOUT_NBASIC];
extern const int mg_layout__basic_sizes[MG_LAYOUT_NBASIC];
extern const int mg_layout__het_sizes[HET_PARTS];
int mg_layout__het_align(void);
MPI_Datatype mg_layout__het_type(int part);
MPI_Datatype mg_layout__basic_mpi(long b);

/* Messages: put_msg writes into err[errlen]; fail writes "<prefix>: <message>"
 * into the context's error and returns code; app appends to a buffer. */
void mg_layout__put_msg(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int mg_layout__fail(ctx *c, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void mg_layout__app(char *buf, size_t len, size_t *pos, int *trunc, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
int mg_layout__eq_ci(const char *s, size_t len, const char *lit);
void mg_layout__names_of(unsigned mask, char *buf, size_t len);
void mg_layout__kind_names(char *buf, size_t len);
int mg_layout__is_sub(long k);
const char *mg_layout__sub_names(const char *sep, char *buf, size_t len);
int mg_layout__find_kind(const char *s, size_t len);

/* layouts_parse.c: the parameters a layout does not take were not given. */
int mg_layout__takes_check(const mg_layout_params *p, char *err, size_t errlen);
/* layouts_check.c: mg_layout_check with its context kept, for the builders. */
int mg_layout__check_ctx(const mg_layout_params *p, long n, mg_layout_info *info, ctx *c, char *err, size_t errlen);

/* The shape functions (layouts_check.c) and builders (layouts_build.c) the catalog names. */
int mg_layout__shape_contig(ctx *c);
int mg_layout__shape_tiled(ctx *c);
int mg_layout__shape_block(ctx *c);
int mg_layout__shape_bucket(ctx *c);
int mg_layout__shape_alt(ctx *c);
int mg_layout__shape_hetero(ctx *c);
int mg_layout__shape_contig_sub(ctx *c);
int mg_layout__shape_tiled_struct(ctx *c);
int mg_layout__shape_tiled_vector(ctx *c);
int mg_layout__shape_vector_tiled(ctx *c);
int mg_layout__shape_rowcol(ctx *c);

int mg_layout__build_contig(ctx *c, MPI_Datatype *out);
int mg_layout__build_tiled(ctx *c, MPI_Datatype *out);
int mg_layout__build_block(ctx *c, MPI_Datatype *out);
int mg_layout__build_bucket(ctx *c, MPI_Datatype *out);
int mg_layout__build_alt(ctx *c, MPI_Datatype *out);
int mg_layout__build_hetero(ctx *c, MPI_Datatype *out);
int mg_layout__build_contig_sub(ctx *c, MPI_Datatype *out);
int mg_layout__build_tiled_struct(ctx *c, MPI_Datatype *out);
int mg_layout__build_tiled_vector(ctx *c, MPI_Datatype *out);
int mg_layout__build_vector_tiled(ctx *c, MPI_Datatype *out);
int mg_layout__build_block_indexed(ctx *c, MPI_Datatype *out);
int mg_layout__build_alt_indexed(ctx *c, MPI_Datatype *out);
int mg_layout__build_alt_struct(ctx *c, MPI_Datatype *out);
int mg_layout__build_rowcol_full(ctx *c, MPI_Datatype *out);
int mg_layout__build_rowcol_ci(ctx *c, MPI_Datatype *out);
int mg_layout__build_rowcol_struct(ctx *c, MPI_Datatype *out);

#endif
