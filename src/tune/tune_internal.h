/* libmpiguide-tune's internals, in layers. A file uses only functions and data
 * of lower layers (and its own), so the dependencies form a tree, and a lock
 * is only ever taken after those of higher layers (lifecycle, then report or
 * pool, then warn). The test tune_layers checks this on the built objects.
 *
 *   top        api.c        the control API (mg_tune_* of mpiguide/tune.h)
 *              intercept.c  the MPI_ entry points of the collectives and mg_tune_last_impl
 *              datatypes/entry.c, datatypes/requests.c  the MPI_ entry points of
 *                           the datatype strategies
 *              recorded.c   the MPI_ entry points the library only records
 *   dtcoll     datatypes/collectives.c  the datatype strategies of the regular
 *                           blocking collectives, around intercept.c's
 *                           collectives (datatypes/collectives.h)
 *              datatypes/vcoll.c  the entry points of the blocking v and w forms
 *                           and neighbourhood collectives; datatypes/nbcoll.c of
 *                           the nonblocking collectives, datatypes/pcoll.c of the
 *                           persistent ones (datatypes/cbuild_entry.h)
 *   vonline    datatypes/vonline.c  online mode's irregular collectives: the
 *                           algorithms a blocking MPI_Allgatherv, MPI_Alltoallv,
 *                           MPI_Gatherv or MPI_Scatterv may run (datatypes/vonline.h)
 *   dtbuild    datatypes/cbuild.c  the native arguments of those collectives
 *                           under the strategies, and their blocks (datatypes/cbuild.h)
 *   pending    datatypes/pending.c  the packed sides of requests, point-to-point
 *                           and collective, finished by the completion calls
 *                           (datatypes/pending.h)
 *   strategy   datatypes/strategy.c  how one side of a call with a derived
 *                           datatype moves its data (datatypes/strategy.h)
 *   call       call.c       what a call's arguments say: its message sizes, and
 *                           whether they are erroneous on this rank (call.h)
 *   recfile    recfile.c    record mode's file, gathered from every rank at
 *                           MPI_Finalize (record.h)
 *   comms      comms.c      the library's own communicators: the probe
 *                           communicator, and the shadows the mock-ups' inner
 *                           calls run on (comms.h)
 *   lifecycle  lifecycle.c  the configuration in force, the profiles in use and
 *                           the hot words the call path reads lock-free;
 *                           configure, start at MPI_Init, stop at MPI_Finalize
 *   middle     config.c     reads a configuration (no state)
 *              profile.c    parses and searches profile sets (no state)
 *              report.c     the usage counters and the report
 *              record.c     record mode: each thread's calls, their keys and
 *                           times (record.h)
 *   dtonline   datatypes/online_dt.c  online mode's datatype strategies: each
 *                           thread's keys of the blocking one-sided calls
 *                           (datatypes/online_dt.h)
 *   online     online.c     online mode: the choice of each call key measured in
 *                           the run itself, per communicator (online.h)
 *   dtprofile  dt_profile.c parses and searches datatype profiles (no state)
 *   reader     profile_read.c  reads the lines of a profile file (profile_read.h)
 *   catalog    catalog.c    the collectives, their mock-up tables, the names
 *   mock-ups   mockups/     one file per collective; common.c, their helpers;
 *                           reduction_rule.c, which reductions they may take
 *   pools      pool.c       the pools and the leases on them (the mock-ups' memory)
 *   types      types.c      what is kept per datatype: its size and whether it is
 *                           one contiguous run, without an MPI call after the
 *                           first (types.h; mg_type_bytes, mg_type_contiguous),
 *                           and the plan of the datatype strategies
 *   bottom     warn.c       warnings
 *              handles.c    the handle map: what is cached per communicator and type
 *              form_verdicts.c  which form classes of datatypes the MPI library
 *                           packs right, probed once per class (form_verdicts.h)
 *   engine     the datatype engine (src/dt), built to call MPI through PMPI_
 *                           (src/dt/mpi_entry.h), so its own calls never reach
 *                           the interceptors above
 *
 * Headers: mockups/mockup_api.h is the mock-ups' API and the only project
 * header a mock-up includes; this header declares everything below the
 * lifecycle, layer by layer; handles.h, types.h, lifecycle.h, comms.h and call.h their layers, for
 * the layers above (and the tests) only. Each stateful file owns its state, a
 * static struct with its own lock (lifecycle.c, report.c, pool.c, warn.c, form_verdicts.c,
 * each handle map; comms.c's two handles are written at MPI_Init and MPI_Finalize only); the one global is the
 * lifecycle's hot words (mg_tune_hot), written by lifecycle.c alone. Every .c
 * file defines _POSIX_C_SOURCE first. Nothing here is exported from the shared
 * library (hidden visibility); the tests link the static one. */
#ifndef MG_TUNE_INTERNAL_H
#define MG_TUNE_INTERNAL_H

#include "defaults.h"
#include "mockups/mockup_api.h"
#include "mpiguide/tune.h"
#include <stdint.h>
#include <stdio.h>

/* ---- warn.c ---- */

/* "mpiguide-tune: warning: <text>", once per distinct text, on rank 0 of
 * MPI_COMM_WORLD (before MPI_Init: kept and printed by rank 0 at MPI_Init). */
void mg_tune__warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The same for a problem of this process only (printed on any rank, with its rank). */
void mg_tune__warn_local(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Stops the job (PMPI_Abort) where this rank could no longer run the implementation its peers run (out of
 * memory for what keeps them in step, a failed agreement), saying why: its peers would hang otherwise. */
void mg_tune__abort_diverging(const char *why) __attribute__((noreturn));
/* At MPI_Init: the rank is known, kept warnings are printed. */
void mg_tune__warnings_start(int world_rank);
void mg_tune__warnings_free(void);
/* Tests: where warnings go (NULL: stderr). */
void mg_tune__set_warning_stream(FILE *out);

/* ---- pool.c (the lease API is in mockups/mockup_api.h) ---- */

/* A lease. The one that holds the pools lives in pool.c; malloc-mode leases are malloc'ed. */
struct mg_lease {
    int pooled; /* holds the pools */
    size_t msg_used, int_used;
    void **extra; /* malloc'ed pieces, freed at release */
    size_t nextra, cap_extra;
};

/* At MPI_Init and MPI_Finalize. Sizes of 0 allocate nothing. */
void mg_tune__pools_alloc(size_t msg_bytes, size_t int_bytes);
void mg_tune__pools_free(void);

/* Tests: the pools as they are. */
typedef struct {
    unsigned char *msg_pool, *int_pool;
    size_t msg_pool_size, int_pool_size;
    int leased;
} mg_tune_pool_info;
mg_tune_pool_info mg_tune__pool_info(void);

/* ---- catalog.c ---- */

/* Implementation indices: 0 is "default" (the native call by choice), k >= 1 is
 * mock-up k - 1 of the collective's table, MG_TUNE_NATIVE the native call as a
 * fallback (a mock-up was chosen but does not apply, or memory is short). */
#define MG_TUNE_NATIVE (-1)

const mg_coll_mockups *mg_tune__table(mg_coll coll);
/* Collective by lower-case name ("allgather") or MPI name ("MPI_Allgather"); -1 if unknown. */
int mg_tune__coll_index(const char *name);
/* Collective by lower-case name only, as the control API names them; -1 if unknown. */
int mg_tune__public_coll_index(const char *name);
/* Implementation index of a name for a collective ("default" = 0); -1 if unknown. */
int mg_tune__impl_index(mg_coll coll, const char *name);
/* "default", the mock-up's name or "native". */
const char *mg_tune__impl_label(mg_coll coll, int impl);
/* A reduction's predefined datatype in the notation ("double"; "-" for
 * MPI_DATATYPE_NULL, "?" for one the engine does not name) into buf; returns
 * the text. */
const char *mg_tune__elem_name(MPI_Datatype t, char *buf, size_t len);
/* A reduction's operation: "sum", "max", ..., "user" for a user-defined one, "-" for MPI_OP_NULL. */
const char *mg_tune__op_name(MPI_Op op);
/* "off", "forced", "tuned", "online". */
const char *mg_tune__mode_name(mg_tune_mode mode);
/* "default, a, b" into buf (for messages). */
const char *mg_tune__impl_list(mg_coll coll, char *buf, size_t len);
const char *mg_tune__coll_list(char *buf, size_t len);

/* How a call that carries a derived datatype moves it (src/tune/datatypes/):
 * DEFAULT leaves the choice to the mode (native unless a profile says
 * otherwise), NATIVE the call as made, NORMALIZED the call made with normal(t)
 * (mg_dt_to_mpi: same type map and signature), PACK the engine packing into a
 * pooled buffer, the transfer as MPI_PACKED and the engine unpacking. */
typedef enum { MG_DTS_DEFAULT = 0, MG_DTS_NATIVE, MG_DTS_NORMALIZED, MG_DTS_PACK, MG_NDTS } mg_dts;
/* The strategy of a name ("default", "native", "normalized", "pack"); -1 if unknown. */
int mg_tune__dts_index(const char *name);
const char *mg_tune__dts_name(mg_dts s);
/* The collectives the datatype strategies take, each in three forms
 * (blocking, nonblocking MPI_I..., persistent ..._init) with its MPI-4 `_c`
 * form: X(ENUM, profile name, MPI name, shared), `shared` where every rank
 * knows the block's bytes, so that PACK may be chosen by size (the v and w
 * forms and the neighbourhood collectives decide PACK from the configuration
 * alone). The profile names of the other forms are "i" NAME and NAME "_init";
 * the MPI names MPI_I... and ..._init. */
#define MG_DT_COLLECTIVES(X)                                                    \
    X(BCAST, "bcast", "MPI_Bcast", 1)                                           \
    X(GATHER, "gather", "MPI_Gather", 1)                                        \
    X(SCATTER, "scatter", "MPI_Scatter", 1)                                     \
    X(ALLGATHER, "allgather", "MPI_Allgather", 1)                               \
    X(ALLTOALL, "alltoall", "MPI_Alltoall", 1)                                  \
    X(GATHERV, "gatherv", "MPI_Gatherv", 0)                                     \
    X(SCATTERV, "scatterv", "MPI_Scatterv", 0)                                  \
    X(ALLGATHERV, "allgatherv", "MPI_Allgatherv", 0)                            \
    X(ALLTOALLV, "alltoallv", "MPI_Alltoallv", 0)                               \
    X(ALLTOALLW, "alltoallw", "MPI_Alltoallw", 0)                               \
    X(NEIGHBOR_ALLGATHER, "neighbor_allgather", "MPI_Neighbor_allgather", 0)    \
    X(NEIGHBOR_ALLGATHERV, "neighbor_allgatherv", "MPI_Neighbor_allgatherv", 0) \
    X(NEIGHBOR_ALLTOALL, "neighbor_alltoall", "MPI_Neighbor_alltoall", 0)       \
    X(NEIGHBOR_ALLTOALLV, "neighbor_alltoallv", "MPI_Neighbor_alltoallv", 0)    \
    X(NEIGHBOR_ALLTOALLW, "neighbor_alltoallw", "MPI_Neighbor_alltoallw", 0)
#define MG_DT_KIND_(E, name, mpi, shared) MG_DTK_##E,
typedef enum { MG_DT_COLLECTIVES(MG_DT_KIND_) MG_NDTCOLLS } mg_dtcoll_kind;
#define MG_DT_OP_(E, name, mpi, shared) MG_DTOP_##E,
#define MG_DT_IOP_(E, name, mpi, shared) MG_DTOP_I##E,
#define MG_DT_POP_(E, name, mpi, shared) MG_DTOP_##E##_INIT,
/* The operations whose calls the datatype strategies count (the report's
 * #@tune_dt): the calls, and for the two-sided ones each side; then the
 * collectives, blocking, nonblocking and persistent (MG_DTOP_COLL, in the
 * order of MG_DT_COLLECTIVES each). */
typedef enum {
    MG_DTOP_SEND,
    MG_DTOP_SSEND,
    MG_DTOP_RSEND,
    MG_DTOP_RECV,
    MG_DTOP_SENDRECV_SEND,
    MG_DTOP_SENDRECV_RECV,
    MG_DTOP_REPLACE_SEND,
    MG_DTOP_REPLACE_RECV,
    MG_DTOP_ISEND,
    MG_DTOP_ISSEND,
    MG_DTOP_IRECV,
    MG_DTOP_SEND_INIT,
    MG_DTOP_RECV_INIT,
    MG_DTOP_MRECV,
    MG_DTOP_IMRECV,
    MG_DT_COLLECTIVES(MG_DT_OP_) MG_DT_COLLECTIVES(MG_DT_IOP_) MG_DT_COLLECTIVES(MG_DT_POP_) MG_NDTOPS
} mg_dtop;
#define MG_DTOP_COLL MG_DTOP_BCAST /* the first collective */
/* The form of a collective operation: 0 blocking, 1 nonblocking, 2 persistent. */
enum { MG_DT_BLOCKING, MG_DT_NONBLOCKING, MG_DT_PERSISTENT };
/* The operation of collective k in form f. */
static inline mg_dtop mg_tune__dtop_of(mg_dtcoll_kind k, int f)
{
    return (mg_dtop)(MG_DTOP_COLL + f * MG_NDTCOLLS + k);
}
/* "MPI_Send", "MPI_Sendrecv:send", "MPI_Ibcast", "MPI_Bcast_init", ... */
const char *mg_tune__dtop_name(mg_dtop op);
/* What a datatype profile is for ('datatypes NAME'): all sends, all receives
 * of the point-to-point calls, or one collective operation (blocking,
 * nonblocking and persistent apart; in the order of mg_dtop). */
#define MG_DT_CLASS_(E, name, mpi, shared) MG_DTC_##E,
#define MG_DT_ICLASS_(E, name, mpi, shared) MG_DTC_I##E,
#define MG_DT_PCLASS_(E, name, mpi, shared) MG_DTC_##E##_INIT,
typedef enum {
    MG_DTC_SEND,
    MG_DTC_RECV,
    MG_DT_COLLECTIVES(MG_DT_CLASS_) MG_DT_COLLECTIVES(MG_DT_ICLASS_) MG_DT_COLLECTIVES(MG_DT_PCLASS_) MG_NDTCS
} mg_dtclass;
mg_dtclass mg_tune__dtclass_of(mg_dtop op);
/* By name ("send", "bcast", "ialltoallw", "neighbor_allgather_init"); -1 if unknown. */
int mg_tune__dtclass_index(const char *name);
const char *mg_tune__dtclass_name(mg_dtclass c);
const char *mg_tune__dtclass_list(char *buf, size_t len);
/* 1 if c is a collective's, whose PACK every rank must choose alike; 1 in
 * *shared if every rank knows its bytes (PACK by size), else 0 (never PACK
 * by a profile). */
int mg_tune__dtclass_collective(mg_dtclass c, int *shared);
/* What MPIGUIDE_TUNE_FORCE calls them: "datatypes". */
#define MG_TUNE_DATATYPES "datatypes"

/* ---- config.c ---- */

/* The configuration: defaults, then the configuration file, then the environment. */
typedef struct {
    mg_tune_mode mode;
    int forced[MG_NCOLLS]; /* implementation index per collective (forced mode) */
    mg_dts dt_forced;      /* strategy of calls with derived datatypes (forced mode) */
    char *profiles;        /* directory or NULL */
    size_t msg_pool_bytes; /* pool capacities: the need-vs-capacity rule uses these */
    size_t int_pool_bytes;
    MPI_Count chunk;      /* C of the chunked round-robin mock-ups, elements */
    char *report;         /* report file at MPI_Finalize, "-" = stderr, or NULL */
    char *record;         /* record file (record mode) written at MPI_Finalize, or NULL */
    int allow_regrouping; /* reduction mock-ups may regroup floating-point data (bits may change) */
    int dt_form;          /* MG_DT_FORM_* of the normalized types (AUTO: the engine's policy for the library) */
} mg_tune_config;

void mg_tune__config_defaults(mg_tune_config *cfg);
/* Defaults, then MPIGUIDE_TUNE_CONFIG's file, then the other MPIGUIDE_TUNE_*
 * variables; each problem is warned about (file:line) and skipped. Returns the
 * number of problems. */
int mg_tune__config_read(mg_tune_config *cfg);
void mg_tune__config_free(mg_tune_config *cfg);
/* "allgather=allgather_as_gather_bcast,bcast=default,datatypes=pack" into
 * cfg's forced[] and dt_forced; `where` names the source in warnings. Returns
 * the number of bad entries. */
int mg_tune__parse_force(const char *spec, mg_tune_config *cfg, const char *where);

/* ---- profile.c ---- */

/* One message range of a profile: inclusive byte range of mg_call.bytes. */
typedef struct {
    MPI_Count from, to;
    int impl; /* 0 = default, k = mock-up k - 1 */
    int line; /* where it was read (for messages) */
} mg_tune_range;

/* The profile of one (collective, communicator size): ranges sorted by `from`, disjoint. */
typedef struct {
    mg_coll coll;
    int procs;
    int procs_line; /* where procs was read (for messages) */
    int nranges;
    mg_tune_range *ranges;
    char *path;
} mg_tune_profile;

/* One rule of a datatype profile: calls whose type has the shape (the
 * constructors of normal(t), types.h; NULL: any type), a mean block in
 * [bfrom, bto] (if has_block) and bytes in [from, to] take the strategy. */
typedef struct {
    char *shape;
    MPI_Count from, to;
    int has_block;
    MPI_Count bfrom, bto;
    mg_dts s;
    int line;
} mg_tune_dt_rule;

/* The datatype profile of one (operation class, communicator size). */
typedef struct {
    mg_dtclass op;
    int procs; /* 0: any size */
    int procs_line;
    int nrules;
    mg_tune_dt_rule *rules; /* in file order */
    char *path;
} mg_tune_dt_profile;

/* A set of profiles, sorted by (coll, procs), at most one per pair; and the
 * datatype profiles, at most one per (operation class, procs). */
typedef struct {
    int n;
    mg_tune_profile *p;
    int ndt;
    mg_tune_dt_profile *dt;
} mg_tune_profiles;

/* dt_profile.c: a datatype profile file (mpiguide's format whose first line
 * says 'datatypes'): 1 if path is one. Parsing warns about a bad header and
 * returns -1, and skips bad rules (each warned with file:line). */
int mg_tune__is_dt_profile(const char *path);
int mg_tune__dt_profile_parse(const char *path, mg_tune_dt_profile *p);
void mg_tune__dt_profile_free(mg_tune_dt_profile *p);

/* Parses one profile file (either format); on a problem warns once
 * ("FILE:LINE: ...; this profile is ignored") and returns -1. */
int mg_tune__profile_parse(const char *path, mg_tune_profile *out);
void mg_tune__profile_free(mg_tune_profile *p);
/* Every *.prof and *.prf file of dir (sorted by name). Malformed files and
 * second profiles of the same (collective, size) are skipped with a warning and
 * counted in *nbad. MG_TUNE_ERR_PROFILE if dir cannot be read, MG_TUNE_ERR_NOMEM. */
int mg_tune__profiles_load(const char *dir, mg_tune_profiles *out, int *nbad);
void mg_tune__profiles_free(mg_tune_profiles *ps);
/* The profile of (coll, procs) in the set, NULL if none. O(log n). */
const mg_tune_profile *mg_tune__profiles_get(const mg_tune_profiles *ps, mg_coll coll, int procs);
/* Implementation index of p's range that covers bytes, -1 if none does. O(log ranges). */
int mg_tune__profile_impl(const mg_tune_profile *p, MPI_Count bytes);
/* The datatype profile of (op, procs), else of (op, any size); NULL if none. */
const mg_tune_dt_profile *mg_tune__dt_profiles_get(const mg_tune_profiles *ps, mg_dtclass op, int procs);
/* The strategy of the first rule for (shape, mean block, bytes): rules of
 * that shape first, then those of any type; shape NULL (no type): those of
 * any type without a block range only. MG_DTS_DEFAULT if none applies. */
mg_dts mg_tune__dt_profile_rule(const mg_tune_dt_profile *p, const char *shape, MPI_Count block, MPI_Count bytes);

/* ---- report.c ---- */

/* Counts one call (the call path, only when a report is requested). */
void mg_tune__count(mg_coll coll, MPI_Count bytes, int impl);
/* Calls counted for (coll, bytes, impl) (tests). */
uint64_t mg_tune__counted(mg_coll coll, MPI_Count bytes, int impl);
/* The same for calls with derived datatypes: operation, this rank's bytes, strategy. */
void mg_tune__count_dt(mg_dtop op, MPI_Count bytes, mg_dts strategy);
uint64_t mg_tune__counted_dt(mg_dtop op, MPI_Count bytes, mg_dts strategy);
void mg_tune__counters_reset(void);
void mg_tune__counters_free(void);
/* The report (docs/tuning.md): the counters, then the pools, mode and chunk of cfg. */
int mg_tune__report_write(FILE *out, const mg_tune_config *cfg);

#endif
