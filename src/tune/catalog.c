/* The catalog: the nine collectives, their mock-up tables (one per
 * mockups/<collective>.c) and the names of collectives and implementations.
 * Immutable, so it needs no lock. */
#define _POSIX_C_SOURCE 200809L
#include "mpiguide/dt.h"
#include "tune_internal.h"
#include <stdio.h>
#include <string.h>
#include <strings.h>

static const mg_coll_mockups *const tables[MG_NCOLLS] = {
    [MG_COLL_ALLGATHER] = &mg_allgather_mockups,
    [MG_COLL_ALLREDUCE] = &mg_allreduce_mockups,
    [MG_COLL_ALLTOALL] = &mg_alltoall_mockups,
    [MG_COLL_BCAST] = &mg_bcast_mockups,
    [MG_COLL_GATHER] = &mg_gather_mockups,
    [MG_COLL_REDUCE] = &mg_reduce_mockups,
    [MG_COLL_REDUCE_SCATTER_BLOCK] = &mg_reduce_scatter_block_mockups,
    [MG_COLL_SCAN] = &mg_scan_mockups,
    [MG_COLL_SCATTER] = &mg_scatter_mockups,
};

const mg_coll_mockups *mg_tune__table(mg_coll coll) { return (int)coll >= 0 && coll < MG_NCOLLS ? tables[coll] : NULL; }

int mg_tune__coll_index(const char *name)
{
    if (!name) return -1;
    for (int i = 0; i < MG_NCOLLS; i++)
        if (strcmp(name, tables[i]->name) == 0 || strcasecmp(name, tables[i]->mpi_name) == 0) return i;
    return -1;
}

int mg_tune__public_coll_index(const char *name)
{
    if (!name) return -1;
    for (int i = 0; i < MG_NCOLLS; i++)
        if (strcmp(name, tables[i]->name) == 0) return i;
    return -1;
}

int mg_tune__impl_index(mg_coll coll, const char *name)
{
    const mg_coll_mockups *t = mg_tune__table(coll);
    if (!t || !name) return -1;
    if (strcmp(name, "default") == 0) return 0;
    for (int i = 0; i < t->nmockups; i++)
        if (strcmp(name, t->mockups[i].name) == 0) return i + 1;
    return -1;
}

const char *mg_tune__impl_label(mg_coll coll, int impl)
{
    const mg_coll_mockups *t = mg_tune__table(coll);
    if (impl == MG_TUNE_NATIVE) return "native";
    if (impl == 0 || !t || impl > t->nmockups) return "default";
    return t->mockups[impl - 1].name;
}

static void append(char *buf, size_t len, size_t *at, const char *s)
{
    int n = snprintf(buf + *at, len - *at, "%s%s", *at ? ", " : "", s);
    if (n > 0) *at = *at + (size_t)n < len ? *at + (size_t)n : len - 1;
}

const char *mg_tune__impl_list(mg_coll coll, char *buf, size_t len)
{
    const mg_coll_mockups *t = mg_tune__table(coll);
    size_t at = 0;
    buf[0] = '\0';
    append(buf, len, &at, "default");
    for (int i = 0; t && i < t->nmockups; i++) append(buf, len, &at, t->mockups[i].name);
    return buf;
}

const char *mg_tune__coll_list(char *buf, size_t len)
{
    size_t at = 0;
    buf[0] = '\0';
    for (int i = 0; i < MG_NCOLLS; i++) append(buf, len, &at, tables[i]->name);
    return buf;
}

static const char *const dts_names[MG_NDTS] = {"default", "native", "normalized", "pack"};

int mg_tune__dts_index(const char *name)
{
    for (int s = 0; s < MG_NDTS; s++)
        if (strcmp(name, dts_names[s]) == 0) return s;
    return -1;
}

const char *mg_tune__dts_name(mg_dts s) { return s >= 0 && s < MG_NDTS ? dts_names[s] : "?"; }

#define MG_DT_NAME_(E, name, mpi, shared) mpi,
#define MG_DT_INAME_(E, name, mpi, shared) "MPI_I" name,
#define MG_DT_PNAME_(E, name, mpi, shared) mpi "_init",
static const char *const dtop_names[MG_NDTOPS] = {
    "MPI_Send", "MPI_Ssend", "MPI_Rsend", "MPI_Recv", "MPI_Sendrecv:send", "MPI_Sendrecv:recv",
    "MPI_Sendrecv_replace:send", "MPI_Sendrecv_replace:recv", "MPI_Isend", "MPI_Issend", "MPI_Irecv",
    "MPI_Send_init", "MPI_Recv_init", "MPI_Mrecv", "MPI_Imrecv",
    MG_DT_COLLECTIVES(MG_DT_NAME_) MG_DT_COLLECTIVES(MG_DT_INAME_) MG_DT_COLLECTIVES(MG_DT_PNAME_)};

const char *mg_tune__dtop_name(mg_dtop op) { return op >= 0 && op < MG_NDTOPS ? dtop_names[op] : "?"; }

#define MG_DT_CNAME_(E, name, mpi, shared) name,
#define MG_DT_ICNAME_(E, name, mpi, shared) "i" name,
#define MG_DT_PCNAME_(E, name, mpi, shared) name "_init",
static const char *const dtclass_names[MG_NDTCS] = {
    "send", "recv",
    MG_DT_COLLECTIVES(MG_DT_CNAME_) MG_DT_COLLECTIVES(MG_DT_ICNAME_) MG_DT_COLLECTIVES(MG_DT_PCNAME_)};

#define MG_DT_SHARED_(E, name, mpi, shared) shared,
static const int dtcoll_shared[MG_NDTCOLLS] = {MG_DT_COLLECTIVES(MG_DT_SHARED_)};

mg_dtclass mg_tune__dtclass_of(mg_dtop op)
{
    switch (op) {
    case MG_DTOP_SEND:
    case MG_DTOP_SSEND:
    case MG_DTOP_RSEND:
    case MG_DTOP_SENDRECV_SEND:
    case MG_DTOP_REPLACE_SEND:
    case MG_DTOP_ISEND:
    case MG_DTOP_ISSEND:
    case MG_DTOP_SEND_INIT: return MG_DTC_SEND;
    default:
        /* the collectives: in the same order */
        return op >= MG_DTOP_COLL && op < MG_NDTOPS ? (mg_dtclass)(MG_DTC_BCAST + (op - MG_DTOP_COLL)) : MG_DTC_RECV;
    }
}

int mg_tune__dtclass_collective(mg_dtclass c, int *shared)
{
    int k = (int)c - MG_DTC_BCAST;
    if (k < 0 || c >= MG_NDTCS) {
        *shared = 0;
        return 0;
    }
    *shared = dtcoll_shared[k % MG_NDTCOLLS];
    return 1;
}

int mg_tune__dtclass_index(const char *name)
{
    for (int c = 0; c < MG_NDTCS; c++)
        if (strcmp(name, dtclass_names[c]) == 0) return c;
    return -1;
}

const char *mg_tune__dtclass_name(mg_dtclass c) { return c >= 0 && c < MG_NDTCS ? dtclass_names[c] : "?"; }

const char *mg_tune__dtclass_list(char *buf, size_t len)
{
    size_t at = 0;
    buf[0] = '\0';
    for (int c = 0; c < MG_NDTCS && at < len; c++)
        at += (size_t)snprintf(buf + at, len - at, "%s%s", c ? ", " : "", dtclass_names[c]);
    return buf;
}

/* A reduction's predefined datatype in the notation ("double"), "-" for none, "?" for one the engine does not
 * name (a derived type: the mock-ups take no such reduction). */
const char *mg_tune__elem_name(MPI_Datatype t, char *buf, size_t len)
{
    mg_dt *dt = NULL;
    if (t == MPI_DATATYPE_NULL) return "-";
    if (mg_dt_from_mpi(t, &dt) != MG_DT_SUCCESS || mg_dt_describe(dt, buf, len) != MG_DT_SUCCESS || strchr(buf, '('))
        snprintf(buf, len, "?");
    mg_dt_free(dt);
    return buf;
}

const char *mg_tune__op_name(MPI_Op op)
{
    static const struct {
        MPI_Op op;
        const char *name;
    } ops[] = {{MPI_SUM, "sum"},   {MPI_PROD, "prod"}, {MPI_MAX, "max"},   {MPI_MIN, "min"},
               {MPI_BAND, "band"}, {MPI_BOR, "bor"},   {MPI_BXOR, "bxor"}, {MPI_LAND, "land"},
               {MPI_LOR, "lor"},   {MPI_LXOR, "lxor"}, {MPI_MAXLOC, "maxloc"}, {MPI_MINLOC, "minloc"},
               {MPI_REPLACE, "replace"}, {MPI_NO_OP, "no_op"}};
    if (op == MPI_OP_NULL) return "-";
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (ops[i].op == op) return ops[i].name;
    return "user";
}

static const char *const mode_names[] = {"off", "forced", "tuned", "online"};

const char *mg_tune__mode_name(mg_tune_mode mode)
{
    return mode >= MG_TUNE_OFF && mode <= MG_TUNE_ONLINE ? mode_names[mode] : "?";
}
