/* libmpiguide-tune: configuration (file and environment), profiles in both
 * formats (look-ups, malformed files warned about with file:line and ignored),
 * the choice rules of real calls, the pools' leases, the helpers and the
 * report. Runs under mpiexec -n 2 (any size >= 2 works); files go to a temporary
 * directory per rank. Mock-up names are taken from the tables at run time, so
 * the test also runs with empty tables. */
#define _POSIX_C_SOURCE 200809L
#include "lifecycle.h"
#include "mg_size.h"
#include "mpiguide/dt.h"
#include "mpiguide/tune.h"
#include "types.h"
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tune_testkit.h"

/* Mock-up k (1-based) of a collective, or "default" when the table is shorter. */
static const char *mockup(const char *coll, int k)
{
    return k < mg_tune_nimpls(coll) ? mg_tune_impl_name(coll, k) : "default";
}

static int impl_of(mg_coll c, const char *name) { return mg_tune__impl_index(c, name); }

/* ---- configuration ---- */

/* The configuration in force (strings borrowed until the next change). */
static mg_tune_config in_force(void)
{
    mg_tune_config cfg;
    mg_tune__config_in_force(&cfg);
    return cfg;
}

static void check_config_at_init(void)
{
    /* file: mode forced, chunk 16 (env 32 wins), msg pool 2M (env 1M wins), int pool 8k */
    mg_tune_config cfg = in_force();
    mg_tune_pool_info pools = mg_tune__pool_info();
    EXPECT(mg_tune_get_mode() == MG_TUNE_FORCED);
    EXPECT(cfg.chunk == 32 && atomic_load(&mg_tune_hot.chunk) == 32);
    EXPECT(cfg.msg_pool_bytes == ((size_t)1 << 20));
    EXPECT(cfg.int_pool_bytes == 8192);
    EXPECT(pools.msg_pool != NULL && pools.int_pool != NULL);
    EXPECT(((uintptr_t)pools.msg_pool & 63) == 0 && ((uintptr_t)pools.int_pool & 63) == 0);
    EXPECT(cfg.forced[MG_COLL_ALLREDUCE] == impl_of(MG_COLL_ALLREDUCE, mockup("allreduce", 1)));
    EXPECT(cfg.forced[MG_COLL_BCAST] == 0);
    char want[256];
    snprintf(want, sizeof want, "%s/nonexistent_profiles", dir);
    EXPECT(cfg.profiles && strcmp(cfg.profiles, want) == 0);
    EXPECT(cfg.report && strcmp(cfg.report, "-") == 0);

    EXPECT_WARNING("mpiguide-tune: warning: %s/tune.conf:4: unknown key 'mdoe' (keys: mode, force, profiles, "
                   "msg_pool_bytes, int_pool_bytes, chunk, report, record, allow_regrouping, dt_form); this line "
                   "is ignored\n",
                   dir);
    EXPECT_WARNING("mpiguide-tune: warning: %s/tune.conf:5: expected 'key = value', found 'just words'; this line "
                   "is ignored\n",
                   dir);
    EXPECT_WARNING("mpiguide-tune: warning: %s/tune.conf:6: int_pool_bytes '12 parsecs': expected a size in bytes "
                   "such as 67108864, 64M or 256k; this line is ignored\n",
                   dir);
    EXPECT_WARNING("mpiguide-tune: warning: %s/tune.conf:8: force entry 'allreduce=no_such_mockup': unknown "
                   "implementation 'no_such_mockup' of allreduce",
                   dir);
    EXPECT_WARNING("mpiguide-tune: warning: %s/tune.conf:8: force entry 'allgathr=default': unknown collective "
                   "'allgathr'",
                   dir);
    EXPECT_WARNING("mpiguide-tune: warning: %s/tune.conf:13: dt_form 'lists': expected auto, vector, resized, list "
                   "or copies; this line is ignored\n",
                   dir);
    EXPECT(cfg.dt_form == MG_DT_FORM_LIST);
    EXPECT_WARNING("mpiguide-tune: warning: unknown variable MPIGUIDE_TUNE_PROFILE ignored");
    EXPECT_WARNING("mpiguide-tune: warning: profile directory %s/nonexistent_profiles: cannot open it", dir);
    /* the good lines were used: nothing else was warned about */
    if (rank == 0) EXPECT(occurrences(warnings(), "mpiguide-tune: warning:") == 8);
}

static void check_config_variants(void)
{
    size_t v = 0;
    EXPECT(mg_parse_size("64M", &v) == 0 && v == ((size_t)64 << 20));
    EXPECT(mg_parse_size("64MiB", &v) == 0 && v == ((size_t)64 << 20));
    EXPECT(mg_parse_size("256k", &v) == 0 && v == 262144);
    EXPECT(mg_parse_size("1G", &v) == 0 && v == ((size_t)1 << 30));
    EXPECT(mg_parse_size("67108864", &v) == 0 && v == 67108864);
    EXPECT(mg_parse_size("0", &v) == 0 && v == 0);
    EXPECT(mg_parse_size("-1", &v) != 0);
    EXPECT(mg_parse_size("12x", &v) != 0);
    EXPECT(mg_parse_size("", &v) != 0);
    EXPECT(mg_parse_size("99999999999999999999999", &v) != 0);

    /* the environment alone, then a bad mode in it: the file's mode stays */
    mg_tune_config cfg;
    setenv("MPIGUIDE_TUNE_MODE", "tuned", 1);
    setenv("MPIGUIDE_TUNE_FORCE", "bcast=default, allgather=default", 1); /* replaces the file's force */
    setenv("MPIGUIDE_TUNE_REPORT", "/tmp/report.txt", 1);
    setenv("MPIGUIDE_TUNE_RECORD", "/tmp/record.txt", 1);
    mg_tune__config_read(&cfg);
    EXPECT(cfg.mode == MG_TUNE_TUNED);
    EXPECT(cfg.forced[MG_COLL_ALLREDUCE] == 0);
    EXPECT(cfg.report && strcmp(cfg.report, "/tmp/report.txt") == 0);
    EXPECT(cfg.record && strcmp(cfg.record, "/tmp/record.txt") == 0);
    mg_tune__config_free(&cfg);
    unsetenv("MPIGUIDE_TUNE_RECORD");
    /* the three path keys of a file, relative to its directory */
    const char *conf_env = getenv("MPIGUIDE_TUNE_CONFIG");
    char saved_conf[256], paths_conf[256], want[512];
    snprintf(saved_conf, sizeof saved_conf, "%s", conf_env ? conf_env : "");
    snprintf(paths_conf, sizeof paths_conf, "%s/paths.conf", dir);
    write_file("paths.conf", "record = rec.txt\nreport = rep.txt\nprofiles = profs\n");
    setenv("MPIGUIDE_TUNE_CONFIG", paths_conf, 1);
    unsetenv("MPIGUIDE_TUNE_REPORT");
    mg_tune__config_read(&cfg);
    snprintf(want, sizeof want, "%s/rec.txt", dir);
    EXPECT(cfg.record && strcmp(cfg.record, want) == 0);
    snprintf(want, sizeof want, "%s/rep.txt", dir);
    EXPECT(cfg.report && strcmp(cfg.report, want) == 0);
    snprintf(want, sizeof want, "%s/profs", dir);
    EXPECT(cfg.profiles && strcmp(cfg.profiles, want) == 0);
    mg_tune__config_free(&cfg);
    if (conf_env)
        setenv("MPIGUIDE_TUNE_CONFIG", saved_conf, 1);
    else
        unsetenv("MPIGUIDE_TUNE_CONFIG");
    setenv("MPIGUIDE_TUNE_REPORT", "/tmp/report.txt", 1);
    setenv("MPIGUIDE_TUNE_DT_FORM", "copies", 1);
    mg_tune__config_read(&cfg);
    EXPECT(cfg.dt_form == MG_DT_FORM_COPIES);
    mg_tune__config_free(&cfg);
    setenv("MPIGUIDE_TUNE_MODE", "tunde", 1);
    setenv("MPIGUIDE_TUNE_CHUNK", "0", 1);
    setenv("MPIGUIDE_TUNE_DT_FORM", "Copies", 1);
    mg_tune__config_read(&cfg);
    EXPECT(cfg.mode == MG_TUNE_FORCED && cfg.chunk == 16 && cfg.dt_form == MG_DT_FORM_LIST);
    mg_tune__config_free(&cfg);
    EXPECT_WARNING("mpiguide-tune: warning: MPIGUIDE_TUNE_DT_FORM=Copies: expected auto, vector, resized, list or "
                   "copies; ignored\n");
    unsetenv("MPIGUIDE_TUNE_DT_FORM");
    EXPECT_WARNING("mpiguide-tune: warning: MPIGUIDE_TUNE_MODE=tunde: expected off, forced, tuned or online; ignored\n");
    EXPECT_WARNING("mpiguide-tune: warning: MPIGUIDE_TUNE_CHUNK=0: expected a number of elements from 1 to "
                   "2147483647; ignored\n");
    unsetenv("MPIGUIDE_TUNE_MODE");
    unsetenv("MPIGUIDE_TUNE_FORCE");
    unsetenv("MPIGUIDE_TUNE_REPORT");
    setenv("MPIGUIDE_TUNE_CHUNK", "32", 1);

    /* force strings */
    mg_tune_config forced = {0};
    char spec[256];
    snprintf(spec, sizeof spec, " allgather = %s ,bcast=default,,scan, datatypes = pack", mockup("allgather", 1));
    EXPECT(mg_tune__parse_force(spec, &forced, "test") == 1);
    EXPECT(forced.forced[MG_COLL_ALLGATHER] == impl_of(MG_COLL_ALLGATHER, mockup("allgather", 1)));
    EXPECT(forced.dt_forced == MG_DTS_PACK);
    EXPECT_WARNING("mpiguide-tune: warning: test: force entry 'scan': expected COLLECTIVE=IMPLEMENTATION");
    EXPECT(mg_tune__parse_force("datatypes=packed,datatypes=normalized", &forced, "test") == 1);
    EXPECT(forced.dt_forced == MG_DTS_NORMALIZED);
    EXPECT_WARNING("mpiguide-tune: warning: test: force entry 'datatypes=packed': unknown strategy 'packed' for "
                   "derived datatypes (strategies: default, native, normalized, pack); this entry is ignored");

    /* the public API's argument checks */
    EXPECT(mg_tune_force("allgather", "no_such_mockup") == MG_TUNE_ERR_ARG);
    EXPECT(mg_tune_force("MPI_Allgather", "default") == MG_TUNE_ERR_ARG);
    EXPECT(mg_tune_force("nope", "default") == MG_TUNE_ERR_ARG);
    EXPECT(mg_tune_force(NULL, "default") == MG_TUNE_ERR_ARG);
    EXPECT(mg_tune_set_mode((mg_tune_mode)7) == MG_TUNE_ERR_ARG);
    EXPECT(mg_tune_load_profiles(NULL) == MG_TUNE_ERR_ARG);
    EXPECT(mg_tune_write_report(NULL) == MG_TUNE_ERR_ARG);
    EXPECT(mg_tune_ncollectives() == 9);
    EXPECT(strcmp(mg_tune_collective_name(0), "allgather") == 0);
    EXPECT(strcmp(mg_tune_collective_name(6), "reduce_scatter_block") == 0);
    EXPECT(mg_tune_collective_name(9) == NULL);
    EXPECT(mg_tune_nimpls("nope") == -1 && mg_tune_nimpls("bcast") >= 1);
    EXPECT(strcmp(mg_tune_impl_name("bcast", 0), "default") == 0);
    EXPECT(mg_tune_impl_name("bcast", mg_tune_nimpls("bcast")) == NULL);
    EXPECT(mg_tune_impl_guideline("bcast", 0) == 0);
    for (int i = 1; i < mg_tune_nimpls("bcast"); i++)
        EXPECT(mg_tune_impl_guideline("bcast", i) == 9 || mg_tune_impl_guideline("bcast", i) == 10);
    EXPECT(strstr(mg_tune_strerror(MG_TUNE_ERR_PROFILE), "profile") != NULL);
}

/* ---- profiles ---- */

static void check_profiles(void)
{
    const char *ag1 = mockup("allgather", 1), *ag2 = mockup("allgather", 2);
    int i1 = impl_of(MG_COLL_ALLGATHER, ag1), i2 = impl_of(MG_COLL_ALLGATHER, ag2);
    char text[2048];
    /* good, mpiguide format, ranges out of order */
    snprintf(text, sizeof text,
             "# mpiguide tune profile 1\n"
             "collective allgather\n"
             "procs %d\n"
             "# from_bytes to_bytes implementation\n"
             "2048 4096 default\n"
             "1 100 %s   # small\n"
             "\n"
             "200 1000 %s\n",
             size, ag1, ag2);
    write_file("p/allgather_np.prof", text);
    /* the same collective for another size */
    snprintf(text, sizeof text, "# mpiguide tune profile 1\ncollective MPI_Allgather\nprocs %d\n1 1000000 %s\n",
             size + 2, ag2);
    write_file("p/allgather_np_plus2.prof", text);
    /* a second profile of (allgather, size): ignored */
    snprintf(text, sizeof text, "# mpiguide tune profile 1\ncollective allgather\nprocs %d\n1 5 default\n", size);
    write_file("p/zz_second.prof", text);
    /* malformed ones */
    snprintf(text, sizeof text,
             "# mpiguide tune profile 1\ncollective bcast\nprocs %d\n# two ranges\n1 10 default\n5 20 default\n", size);
    write_file("p/bad_overlap.prof", text);
    snprintf(text, sizeof text, "# mpiguide tune profile 1\ncollective reduce\nprocs %d\n100 50 default\n", size);
    write_file("p/bad_inverted.prof", text);
    snprintf(text, sizeof text, "# mpiguide tune profile 1\ncollective gather\nprocs %d\n1 10 no_such_mockup\n", size);
    write_file("p/bad_impl.prof", text);
    snprintf(text, sizeof text, "# mpiguide tune profile 1\ncollective scan\nprocs %d\n1x 10 default\n", size);
    write_file("p/bad_number.prof", text);
    write_file("p/bad_missing.prof", "# mpiguide tune profile 1\ncollective alltoall\n1 10 default\n");
    write_file("p/bad_coll.prof", "# mpiguide tune profile 1\ncollective allgathr\nprocs 2\n");
    write_file("p/bad_version.prof", "# mpiguide tune profile 2\ncollective allgather\nprocs 2\n");
    write_file("p/not_a_profile.txt", "garbage that is never read\n");

    /* PGMPITuneLib's format: Hunold and Carpen-Amarie (2018), Listing 1, with
     * this communicator size and, where mpiguide has no mock-up of that name,
     * "default" */
    const char *sb = impl_of(MG_COLL_SCATTER, "scatter_as_bcast") > 0 ? "scatter_as_bcast" : "default";
    const char *sv = impl_of(MG_COLL_SCATTER, "scatter_as_scatterv") > 0 ? "scatter_as_scatterv" : "default";
    snprintf(text, sizeof text,
             "# pgtune profile\n"
             "MPI_Scatter\n"
             "%d # nb. of. processes\n"
             "2 # nb. of mock -up impl.\n"
             "2 %s\n"
             "3 %s\n"
             "8 # nb. of ranges\n"
             "1 1 2 # byte_range_start byte_range_end alg_id\n"
             "8 8 2\n32 32 2\n64 64 2\n100 100 2\n512 512 2\n1024 1024 2\n10000 10000 3\n",
             size, sb, sv);
    write_file("p/scatter.prf", text);
    write_file("p/pg_bad_name.prf", "# pgtune profile\nMPI_Gather\n3\n1\n4 gather_as_magic\n1\n1 1 4\n");
    write_file("p/pg_short.prf", "# pgtune profile\nMPI_Allreduce\n3\n1\n1 default\n3\n1 1 1\n");
    write_file("p/pg_bad_id.prf", "MPI_Scan\n3\n1\n1 default\n1\n1 1 7\n");

    char p[128];
    snprintf(p, sizeof p, "%s/p", dir);
    EXPECT(mg_tune_load_profiles(p) == MG_TUNE_ERR_PROFILE); /* some were skipped */

    /* range edges, gaps, other sizes */
    EXPECT(mg_tune__lookup(MG_COLL_ALLGATHER, size, 0) == -1);
    EXPECT(mg_tune__lookup(MG_COLL_ALLGATHER, size, 1) == i1);
    EXPECT(mg_tune__lookup(MG_COLL_ALLGATHER, size, 100) == i1);
    EXPECT(mg_tune__lookup(MG_COLL_ALLGATHER, size, 101) == -1);
    EXPECT(mg_tune__lookup(MG_COLL_ALLGATHER, size, 199) == -1);
    EXPECT(mg_tune__lookup(MG_COLL_ALLGATHER, size, 200) == i2);
    EXPECT(mg_tune__lookup(MG_COLL_ALLGATHER, size, 1000) == i2);
    EXPECT(mg_tune__lookup(MG_COLL_ALLGATHER, size, 1001) == -1);
    EXPECT(mg_tune__lookup(MG_COLL_ALLGATHER, size, 2048) == 0);
    EXPECT(mg_tune__lookup(MG_COLL_ALLGATHER, size, 4096) == 0);
    EXPECT(mg_tune__lookup(MG_COLL_ALLGATHER, size, 4097) == -1);
    EXPECT(mg_tune__lookup(MG_COLL_ALLGATHER, size + 2, 1) == i2);
    EXPECT(mg_tune__lookup(MG_COLL_ALLGATHER, size + 2, 1000000) == i2);
    EXPECT(mg_tune__lookup(MG_COLL_ALLGATHER, size + 1, 1) == -1);
    EXPECT(mg_tune__lookup(MG_COLL_ALLTOALL, size, 1) == -1);
    /* malformed files are ignored entirely */
    EXPECT(mg_tune__lookup(MG_COLL_BCAST, size, 1) == -1);
    EXPECT(mg_tune__lookup(MG_COLL_REDUCE, size, 60) == -1);
    EXPECT(mg_tune__lookup(MG_COLL_GATHER, size, 1) == -1);
    EXPECT(mg_tune__lookup(MG_COLL_SCAN, size, 5) == -1);
    /* PGMPITuneLib import */
    int isb = impl_of(MG_COLL_SCATTER, sb), isv = impl_of(MG_COLL_SCATTER, sv);
    EXPECT(mg_tune__lookup(MG_COLL_SCATTER, size, 1) == isb);
    EXPECT(mg_tune__lookup(MG_COLL_SCATTER, size, 2) == -1);
    EXPECT(mg_tune__lookup(MG_COLL_SCATTER, size, 1024) == isb);
    EXPECT(mg_tune__lookup(MG_COLL_SCATTER, size, 10000) == isv);
    EXPECT(mg_tune__lookup(MG_COLL_SCATTER, size, 10001) == -1);
    EXPECT(mg_tune__lookup(MG_COLL_SCATTER, size + 1, 1) == -1);
    /* the parser on its own, in case the names above were "default" */
    mg_tune_profile prof;
    snprintf(text, sizeof text, "%s/p/scatter.prf", dir);
    EXPECT(mg_tune__profile_parse(text, &prof) == 0);
    EXPECT(prof.coll == MG_COLL_SCATTER && prof.procs == size && prof.nranges == 8);
    EXPECT(prof.ranges[7].from == 10000 && prof.ranges[7].to == 10000 && prof.ranges[7].impl == isv);
    mg_tune__profile_free(&prof);

    /* one warning each, with file:line */
    EXPECT_WARNING("mpiguide-tune: warning: %s/p/bad_overlap.prof:6: range 5 20 overlaps range 1 10 of line 5; "
                   "this profile is ignored\n",
                   dir);
    EXPECT_WARNING("mpiguide-tune: warning: %s/p/bad_inverted.prof:4: inverted range 100 50 (the start is above "
                   "the end); this profile is ignored\n",
                   dir);
    EXPECT_WARNING("mpiguide-tune: warning: %s/p/bad_impl.prof:4: unknown implementation 'no_such_mockup' of "
                   "gather (implementations: default",
                   dir);
    EXPECT_WARNING("mpiguide-tune: warning: %s/p/bad_number.prof:4: range start '1x' is not a non-negative number "
                   "of bytes; this profile is ignored\n",
                   dir);
    EXPECT_WARNING("mpiguide-tune: warning: %s/p/bad_missing.prof:3: no 'procs N' line; this profile is ignored\n",
                   dir);
    EXPECT_WARNING("mpiguide-tune: warning: %s/p/bad_coll.prof:2: unknown collective 'allgathr' (collectives: "
                   "allgather, allreduce, alltoall, bcast, gather, reduce, reduce_scatter_block, scan, scatter); "
                   "this profile is ignored\n",
                   dir);
    EXPECT_WARNING("mpiguide-tune: warning: %s/p/bad_version.prof:1: profile version '2' is not supported (this "
                   "library reads version 1); this profile is ignored\n",
                   dir);
    EXPECT_WARNING("mpiguide-tune: warning: %s/p/zz_second.prof:3: a second profile of allgather for %d processes "
                   "(the first is %s/p/allgather_np.prof); this profile is ignored\n",
                   dir, size, dir);
    EXPECT_WARNING("mpiguide-tune: warning: %s/p/pg_bad_name.prf:5: unknown mock-up 'gather_as_magic' of "
                   "MPI_Gather (mpiguide has: default",
                   dir);
    EXPECT_WARNING("mpiguide-tune: warning: %s/p/pg_short.prf:7: the file ends before range 2 of 3; this profile "
                   "is ignored\n",
                   dir);
    EXPECT_WARNING("mpiguide-tune: warning: %s/p/pg_bad_id.prf:6: alg_id '7' is not among the mock-ups declared "
                   "above; this profile is ignored\n",
                   dir);
    EXPECT(occurrences(warnings(), "this profile is ignored") == (rank == 0 ? 11 : 0));
    /* loading again warns no more, and the good profiles are still there */
    EXPECT(mg_tune_load_profiles(p) == MG_TUNE_ERR_PROFILE);
    EXPECT(occurrences(warnings(), "this profile is ignored") == (rank == 0 ? 11 : 0));
    EXPECT(mg_tune__lookup(MG_COLL_ALLGATHER, size, 100) == i1);
}

/* Datatype profiles: rules by shape and bytes, rules for any type after the
 * shape's, procs "any" behind an exact size; a bad header drops the file, a
 * bad rule only its line (with file:line). */
static void check_dt_profiles(void)
{
    char text[1024], d[160];
    snprintf(d, sizeof d, "%s/d", dir);
    EXPECT(mkdir(d, 0700) == 0);
    snprintf(text, sizeof text,
             "# mpiguide tune profile 1\n"
             "datatypes send\n"
             "procs %d\n"
             "resized/hvector/indexed 1 4096 normalized\n"
             "* 1 100000 pack\n"
             "vector 0 10 native\n"
             "vector 5 20 pack         # overlaps line 6\n"
             "Vector 1 2 pack\n"
             "vector 30 20 pack\n"
             "vector 30 40 packed\n"
             "vector 30 40\n"
             "contig 0 100 pack block 1 8\n"
             "contig 0 100 normalized block 9 1000\n"
             "contig 50 60 native block 8 9      # overlaps line 12\n"
             "contig 200 300 pack block 9 2\n"
             "contig 200 300 pack blocks 1 2\n"
             "contig 0 100 native               # every block: overlaps line 12\n",
             size);
    write_file("d/send.prof", text);
    write_file("d/send_any.prof", "# mpiguide tune profile 1\ndatatypes send\nprocs any\n* 0 10 normalized\n");
    write_file("d/recv_any.prof", "# mpiguide tune profile 1\ndatatypes recv\nprocs any\nvector 0 99 pack\n");
    write_file("d/bcast.prof", "# mpiguide tune profile 1\ndatatypes bcast\nprocs any\nvector 0 99 pack\n"
                               "vector 0 99 normalized\n* 100 200 pack\n* 300 400 pack block 1 8\n"
                               "vector 300 400 normalized block 1 8\n");
    write_file("d/gatherv.prof", "# mpiguide tune profile 1\ndatatypes gatherv\nprocs any\n* 0 99 pack\n");
    /* the nonblocking and persistent forms and the neighbourhood collectives are operations of their own */
    write_file("d/ialltoallw.prof", "# mpiguide tune profile 1\ndatatypes ialltoallw\nprocs any\n"
                                    "* 0 99 pack\nvector 0 99 normalized\n");
    write_file("d/ibcast.prof", "# mpiguide tune profile 1\ndatatypes ibcast\nprocs any\n* 0 99 pack\n");
    write_file("d/nag_init.prof", "# mpiguide tune profile 1\ndatatypes neighbor_allgather_init\nprocs any\n"
                                  "* 0 99 normalized\n");
    write_file("d/bad_op.prof", "# mpiguide tune profile 1\ndatatypes sendd\nprocs 2\n* 0 9 pack\n");
    write_file("d/bad_rule_first.prof", "# mpiguide tune profile 1\ndatatypes scatter\n* 0 9 pack\nprocs 2\n");
    mg_tune_profiles ps;
    int nbad = -1;
    EXPECT(mg_tune__profiles_load(d, &ps, &nbad) == MG_TUNE_SUCCESS && nbad == 2 && ps.n == 0 && ps.ndt == 8);
    const mg_tune_dt_profile *ialltoallw = mg_tune__dt_profiles_get(&ps, MG_DTC_IALLTOALLW, size),
                             *ibcast = mg_tune__dt_profiles_get(&ps, MG_DTC_IBCAST, size),
                             *nag_init = mg_tune__dt_profiles_get(&ps, MG_DTC_NEIGHBOR_ALLGATHER_INIT, size);
    EXPECT(ialltoallw && ialltoallw->nrules == 1 && ibcast && ibcast->nrules == 1 && nag_init && nag_init->nrules == 1);
    EXPECT(!mg_tune__dt_profiles_get(&ps, MG_DTC_ALLTOALLW, size));
    EXPECT(!mg_tune__dt_profiles_get(&ps, MG_DTC_BCAST_INIT, size));
    if (ialltoallw && ibcast && nag_init) {
        EXPECT(mg_tune__dt_profile_rule(ialltoallw, "vector", 4, 50) == MG_DTS_NORMALIZED);
        EXPECT(mg_tune__dt_profile_rule(ibcast, NULL, 4, 50) == MG_DTS_PACK);
        EXPECT(mg_tune__dt_profile_rule(nag_init, "indexed", 4, 50) == MG_DTS_NORMALIZED);
    }
    /* each operation's profile class, and the report's names */
    EXPECT(mg_tune__dtclass_of(MG_DTOP_IALLTOALLW) == MG_DTC_IALLTOALLW);
    EXPECT(mg_tune__dtclass_of(MG_DTOP_NEIGHBOR_ALLGATHER_INIT) == MG_DTC_NEIGHBOR_ALLGATHER_INIT);
    EXPECT(mg_tune__dtclass_of(MG_DTOP_ISEND) == MG_DTC_SEND && mg_tune__dtclass_of(MG_DTOP_IMRECV) == MG_DTC_RECV);
    EXPECT(strcmp(mg_tune__dtop_name(MG_DTOP_INEIGHBOR_ALLTOALLW), "MPI_Ineighbor_alltoallw") == 0);
    EXPECT(strcmp(mg_tune__dtop_name(MG_DTOP_ALLTOALLW_INIT), "MPI_Alltoallw_init") == 0);
    EXPECT(strcmp(mg_tune__dtclass_name(MG_DTC_SCATTERV_INIT), "scatterv_init") == 0);
    EXPECT(mg_tune__dtclass_index("ineighbor_alltoallv") == MG_DTC_INEIGHBOR_ALLTOALLV);
    EXPECT(mg_tune__dtop_of(MG_DTK_GATHERV, MG_DT_PERSISTENT) == MG_DTOP_GATHERV_INIT);
    const mg_tune_dt_profile *send = mg_tune__dt_profiles_get(&ps, MG_DTC_SEND, size),
                             *send_any = mg_tune__dt_profiles_get(&ps, MG_DTC_SEND, size + 1),
                             *recv = mg_tune__dt_profiles_get(&ps, MG_DTC_RECV, size),
                             *bcast = mg_tune__dt_profiles_get(&ps, MG_DTC_BCAST, size),
                             *gatherv = mg_tune__dt_profiles_get(&ps, MG_DTC_GATHERV, size);
    EXPECT(send && send->procs == size && send->nrules == 5);
    EXPECT(send_any && send_any->procs == 0 && send_any->nrules == 1);
    EXPECT(recv && recv->nrules == 1 && bcast && bcast->nrules == 3 && gatherv && gatherv->nrules == 0);
    EXPECT(!mg_tune__dt_profiles_get(&ps, MG_DTC_SCATTER, size));
    if (send && send_any && recv && bcast) {
        EXPECT(mg_tune__dt_profile_rule(send, "resized/hvector/indexed", 4, 4096) == MG_DTS_NORMALIZED);
        EXPECT(mg_tune__dt_profile_rule(send, "resized/hvector/indexed", 4, 4097) == MG_DTS_PACK);
        EXPECT(mg_tune__dt_profile_rule(send, "resized/hvector", 4, 1) == MG_DTS_PACK);
        EXPECT(mg_tune__dt_profile_rule(send, "vector", 4, 10) == MG_DTS_NATIVE);
        EXPECT(mg_tune__dt_profile_rule(send, "vector", 4, 0) == MG_DTS_NATIVE);
        EXPECT(mg_tune__dt_profile_rule(send, NULL, 4, 0) == MG_DTS_DEFAULT);
        EXPECT(mg_tune__dt_profile_rule(send, NULL, 4, 100000) == MG_DTS_PACK);
        EXPECT(mg_tune__dt_profile_rule(send, "vector", 4, 100001) == MG_DTS_DEFAULT);
        EXPECT(mg_tune__dt_profile_rule(send_any, "vector", 4, 10) == MG_DTS_NORMALIZED);
        EXPECT(mg_tune__dt_profile_rule(recv, "vector", 4, 99) == MG_DTS_PACK);
        EXPECT(mg_tune__dt_profile_rule(bcast, "vector", 4, 50) == MG_DTS_NORMALIZED);
        EXPECT(mg_tune__dt_profile_rule(bcast, NULL, 4, 150) == MG_DTS_PACK);
        /* a block range: the shape's rules by the type's mean block; without a type none of them */
        EXPECT(mg_tune__dt_profile_rule(send, "contig", 8, 0) == MG_DTS_PACK);
        EXPECT(mg_tune__dt_profile_rule(send, "contig", 1, 100) == MG_DTS_PACK);
        EXPECT(mg_tune__dt_profile_rule(send, "contig", 9, 50) == MG_DTS_NORMALIZED);
        EXPECT(mg_tune__dt_profile_rule(send, "contig", 1000, 100) == MG_DTS_NORMALIZED);
        EXPECT(mg_tune__dt_profile_rule(send, "contig", 1001, 0) == MG_DTS_DEFAULT);
        EXPECT(mg_tune__dt_profile_rule(send, "contig", 0, 0) == MG_DTS_DEFAULT);
        EXPECT(mg_tune__dt_profile_rule(send, "contig", 1001, 50) == MG_DTS_PACK); /* then '*' */
        EXPECT(mg_tune__dt_profile_rule(bcast, "vector", 4, 350) == MG_DTS_NORMALIZED);
        EXPECT(mg_tune__dt_profile_rule(bcast, "vector", 9, 350) == MG_DTS_DEFAULT);
        EXPECT(mg_tune__dt_profile_rule(bcast, NULL, 4, 350) == MG_DTS_DEFAULT);
    }
    mg_tune__profiles_free(&ps);
    /* the shape a rule matches: the constructors of normal(t) */
    MPI_Datatype vec, strided;
    MPI_Type_vector(5, 1, 3, MPI_INT, &vec);
    MPI_Type_create_resized(vec, 0, 64, &strided);
    MPI_Type_commit(&vec);
    MPI_Type_commit(&strided);
    const mg_type_plan *pv = mg_tune__type_plan(vec), *ps2 = mg_tune__type_plan(strided);
    EXPECT(pv && strcmp(pv->shape, "vector") == 0 && pv->block == 4);
    EXPECT(ps2 && strcmp(ps2->shape, "resized/vector") == 0 && ps2->block == 4);
    MPI_Type_free(&vec);
    MPI_Type_free(&strided);
    EXPECT_WARNING("mpiguide-tune: warning: %s/send.prof:7: range 5 20 of 'vector' overlaps range 0 10 of line 6; "
                   "this line is ignored\n",
                   d);
    EXPECT_WARNING("mpiguide-tune: warning: %s/send.prof:14: range 50 60 (block 8 9) of 'contig' overlaps range 0 100 "
                   "(block 1 8) of line 12; this line is ignored\n",
                   d);
    EXPECT_WARNING("mpiguide-tune: warning: %s/send.prof:15: block '9 2' is not a range FROM <= TO of non-negative "
                   "numbers; this line is ignored\n",
                   d);
    EXPECT_WARNING("mpiguide-tune: warning: %s/send.prof:16: expected 'SHAPE FROM_BYTES TO_BYTES STRATEGY [block "
                   "FROM_BYTES TO_BYTES]', found 'contig 200 300 pack blocks 1 2'; this line is ignored\n",
                   d);
    EXPECT_WARNING("mpiguide-tune: warning: %s/send.prof:17: range 0 100 of 'contig' overlaps range 0 100 (block 1 8) "
                   "of line 12; this line is ignored\n",
                   d);
    EXPECT_WARNING("mpiguide-tune: warning: %s/bcast.prof:7: pack in a collective must be chosen alike by every "
                   "rank: only for shape '*' without a block range; this line is ignored\n",
                   d);
    EXPECT_WARNING("mpiguide-tune: warning: %s/send.prof:8: shape 'Vector' is neither '*' nor constructor names "
                   "joined by '/' (resized/hvector/indexed); this line is ignored\n",
                   d);
    EXPECT_WARNING("mpiguide-tune: warning: %s/send.prof:9: '30 20' is not a byte range FROM <= TO of non-negative "
                   "numbers; this line is ignored\n",
                   d);
    EXPECT_WARNING("mpiguide-tune: warning: %s/send.prof:10: unknown strategy 'packed' (strategies: native, "
                   "normalized, pack); this line is ignored\n",
                   d);
    EXPECT_WARNING("mpiguide-tune: warning: %s/send.prof:11: expected 'SHAPE FROM_BYTES TO_BYTES STRATEGY [block "
                   "FROM_BYTES TO_BYTES]', found 'vector 30 40'; this line is ignored\n",
                   d);
    EXPECT_WARNING("mpiguide-tune: warning: %s/bcast.prof:4: pack in a collective must be chosen alike by every "
                   "rank: only for shape '*' without a block range; this line is ignored\n",
                   d);
    EXPECT_WARNING("mpiguide-tune: warning: %s/gatherv.prof:4: pack needs a message size every rank knows, which "
                   "gatherv has not; this line is ignored\n",
                   d);
    EXPECT_WARNING("mpiguide-tune: warning: %s/ialltoallw.prof:4: pack needs a message size every rank knows, which "
                   "ialltoallw has not; this line is ignored\n",
                   d);
    char list[1024];
    mg_tune__dtclass_list(list, sizeof list);
    const char *first = "send, recv, bcast, gather, scatter, allgather, alltoall, gatherv, scatterv, allgatherv, "
                        "alltoallv, alltoallw, neighbor_allgather, neighbor_allgatherv, neighbor_alltoall, "
                        "neighbor_alltoallv, neighbor_alltoallw, ibcast, igather, ";
    EXPECT(strncmp(list, first, strlen(first)) == 0);
    EXPECT(strstr(list, ", ineighbor_alltoallw, bcast_init, gather_init, ") &&
           strlen(list) > strlen(", neighbor_alltoallw_init") &&
           strcmp(list + strlen(list) - strlen(", neighbor_alltoallw_init"), ", neighbor_alltoallw_init") == 0);
    char message[2048];
    snprintf(message, sizeof message,
             "mpiguide-tune: warning: %s/bad_op.prof:2: unknown operation 'sendd' (operations: %s); this profile is "
             "ignored\n",
             d, list);
    expect_warning(message, __LINE__);
    EXPECT_WARNING("mpiguide-tune: warning: %s/bad_rule_first.prof:3: a rule before the 'datatypes OPERATION' and "
                   "'procs N|any' lines; this profile is ignored\n",
                   d);
}

/* ---- real calls: the choice, the counters, the report ---- */

static const char *allgather_bytes(MPI_Comm comm, int n)
{
    int p;
    MPI_Comm_size(comm, &p);
    unsigned char *s = malloc((size_t)n + 1), *r = malloc((size_t)n * (size_t)p + 1);
    for (int i = 0; i < n; i++) s[i] = (unsigned char)(rank * 31 + i);
    memset(r, 0xEE, (size_t)n * (size_t)p);
    EXPECT(MPI_Allgather(s, n, MPI_BYTE, r, n, MPI_BYTE, comm) == MPI_SUCCESS);
    int crank;
    MPI_Comm_rank(comm, &crank);
    for (int q = 0; q < p; q++) {
        int wr = q; /* world rank of q: comm is WORLD or SELF */
        if (p == 1) wr = rank;
        for (int i = 0; i < n; i++)
            if (r[(size_t)q * (size_t)n + (size_t)i] != (unsigned char)(wr * 31 + i)) {
                EXPECT(!"allgather result");
                q = p;
                break;
            }
    }
    free(s);
    free(r);
    (void)crank;
    return mg_tune_last_impl("allgather");
}

static void *other_thread_last(void *arg)
{
    (void)arg;
    return (void *)mg_tune_last_impl("allgather");
}

static void check_calls(void)
{
    const char *ag1 = mockup("allgather", 1), *ag2 = mockup("allgather", 2);
    const int have1 = strcmp(ag1, "default") != 0;
    /* tuned: the profile of this size */
    EXPECT(mg_tune_set_mode(MG_TUNE_TUNED) == MG_TUNE_SUCCESS);
    const char *ran = allgather_bytes(MPI_COMM_WORLD, 100);
    EXPECT(ran && strcmp(ran, ag1) == 0);
    EXPECT(strcmp(allgather_bytes(MPI_COMM_WORLD, 101), "default") == 0);  /* a gap */
    EXPECT(strcmp(allgather_bytes(MPI_COMM_WORLD, 4096), "default") == 0); /* "default" range */
    EXPECT(strcmp(allgather_bytes(MPI_COMM_SELF, 100), "default") == 0);   /* no profile for size 1 */
    pthread_t th;
    void *other = (void *)1;
    pthread_create(&th, NULL, other_thread_last, NULL);
    pthread_join(th, &other);
    EXPECT(other == NULL); /* last_impl is per thread */

    /* forced */
    EXPECT(mg_tune_set_mode(MG_TUNE_FORCED) == MG_TUNE_SUCCESS);
    EXPECT(mg_tune_force("allgather", ag1) == MG_TUNE_SUCCESS);
    EXPECT(strcmp(allgather_bytes(MPI_COMM_WORLD, 8), ag1) == 0);
    if (have1) {
        EXPECT(strcmp(allgather_bytes(MPI_COMM_SELF, 8), "native") == 0);  /* size 1 */
        EXPECT(strcmp(allgather_bytes(MPI_COMM_WORLD, 0), "native") == 0); /* 0 bytes */
    }
    /* need vs capacity (1 MiB message pool): what every mock-up of allgather
     * declares decides, for a small and a large block */
    const mg_coll_mockups *t = mg_tune__table(MG_COLL_ALLGATHER);
    for (int k = 0; k < t->nmockups; k++) {
        const mg_mockup *m = &t->mockups[k];
        EXPECT(mg_tune_force("allgather", m->name) == MG_TUNE_SUCCESS);
        int sizes[2] = {1000, 400000};
        for (int s = 0; s < 2; s++) {
            mg_call c = {.coll = MG_COLL_ALLGATHER,
                         .chunk = in_force().chunk,
                         .sendcount = sizes[s],
                         .recvcount = sizes[s],
                         .sendtype = MPI_BYTE,
                         .recvtype = MPI_BYTE,
                         .op = MPI_OP_NULL,
                         .comm = MPI_COMM_WORLD,
                         .rank = rank,
                         .size = size,
                         .bytes = sizes[s]};
            int ok = !m->supports || m->supports(&c);
            mg_need need = m->need ? m->need(&c) : (mg_need){0, 0};
            ok = ok && need.msg_bytes <= in_force().msg_pool_bytes && need.int_bytes <= in_force().int_pool_bytes;
            const char *got = allgather_bytes(MPI_COMM_WORLD, sizes[s]);
            if (strcmp(got, ok ? m->name : "native") != 0) {
                fprintf(stderr, "rank %d: forced %s, %d bytes (need %zu+%zu): ran %s\n", rank, m->name, sizes[s],
                        need.msg_bytes, need.int_bytes, got);
                failures++;
            }
        }
    }
    EXPECT(mg_tune_force("allgather", "default") == MG_TUNE_SUCCESS);
    EXPECT(strcmp(allgather_bytes(MPI_COMM_WORLD, 8), "default") == 0);
    /* off */
    EXPECT(mg_tune_set_mode(MG_TUNE_OFF) == MG_TUNE_SUCCESS);
    EXPECT(mg_tune_force("allgather", ag2) == MG_TUNE_SUCCESS);
    EXPECT(strcmp(allgather_bytes(MPI_COMM_WORLD, 8), "default") == 0);

    /* the counters and the report */
    EXPECT(mg_tune__counted(MG_COLL_ALLGATHER, 100, impl_of(MG_COLL_ALLGATHER, ag1)) == (have1 ? 1u : 2u));
    EXPECT(mg_tune__counted(MG_COLL_ALLGATHER, 8, 0) == (have1 ? 2u : 3u));
    FILE *f = tmpfile();
    EXPECT(mg_tune_write_report(f) == MG_TUNE_SUCCESS);
    char buf[16384];
    rewind(f);
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    char line[256];
    if (have1) {
        snprintf(line, sizeof line, "#@tune_alg[MPI_Allgather 100 default]=1\n#@tune_alg[MPI_Allgather 100 %s]=1\n",
                 ag1);
        EXPECT(strstr(buf, line) != NULL);
        snprintf(line, sizeof line, "#@tune_alg[MPI_Allgather 8 %s]=1\n#@tune_alg[MPI_Allgather 8 native]=1\n", ag1);
        EXPECT(strstr(buf, line) != NULL);
    }
    EXPECT(strstr(buf, "#@tune_alg[MPI_Allgather 101 default]=1\n") != NULL);
    EXPECT(strstr(buf, "#@tune_alg[MPI_Allgather 4096 default]=1\n") != NULL);
    const char *tail = "#@tune_config[msg_pool_bytes]=1048576\n"
                       "#@tune_config[int_pool_bytes]=8192\n"
                       "#@tune_config[mode]=off\n"
                       "#@tune_config[chunk]=32\n"
                       "#@tune_config[allow_regrouping]=no\n"
                       "#@tune_config[dt_form]=list\n";
    EXPECT(n >= strlen(tail) && strcmp(buf + n - strlen(tail), tail) == 0);
    /* every line is a keyed note `#@kind[config]=value` (docs/formats.md) */
    for (const char *q = buf; *q; q = strchr(q, '\n') + 1) {
        EXPECT(strncmp(q, "#@tune_alg[", 11) == 0 || strncmp(q, "#@tune_config[", 14) == 0);
        const char *close = strchr(q, ']'), *eol = strchr(q, '\n');
        EXPECT(eol && close && close < eol && close[1] == '=');
        if (!eol) break;
    }
    /* the lines are sorted: 4 before 8 before 100 ... within MPI_Allgather */
    const char *a = strstr(buf, "MPI_Allgather 8 "), *b = strstr(buf, "MPI_Allgather 100 ");
    EXPECT(a && b && a < b);
    if (failures) fprintf(stderr, "rank %d: report:\n%s", rank, buf);
}

/* ---- pools ---- */

static int in_pool(const void *p, const unsigned char *pool, size_t size)
{
    return pool && (const unsigned char *)p >= pool && (const unsigned char *)p < pool + size;
}

static void *lease_in_thread(void *arg)
{
    (void)arg;
    mg_lease *l = mg_lease_acquire(64, 0);
    char *p = mg_lease_msg(l, 64);
    mg_tune_pool_info pools = mg_tune__pool_info();
    int ok = l && !l->pooled && p && !in_pool(p, pools.msg_pool, pools.msg_pool_size) && ((uintptr_t)p & 63) == 0;
    if (p) memset(p, 1, 64);
    mg_lease_release(l);
    return ok ? (void *)1 : NULL;
}

static void check_pool(void)
{
    mg_tune_pool_info pools = mg_tune__pool_info();
    unsigned char *mp = pools.msg_pool, *ip = pools.int_pool;
    size_t ms = pools.msg_pool_size, is = pools.int_pool_size;
    EXPECT(ms == ((size_t)1 << 20) && is == 8192);
    mg_lease *l = mg_lease_acquire(1000, 100);
    EXPECT(l && l->pooled);
    char *p1 = mg_lease_msg(l, 100), *p2 = mg_lease_msg(l, 1), *p0 = mg_lease_msg(l, 0);
    EXPECT(p1 == (char *)mp);       /* bump from the start */
    EXPECT(p2 == (char *)mp + 128); /* 100 rounded to 64 */
    EXPECT(p0 && ((uintptr_t)p0 & 63) == 0);
    int *i1 = mg_lease_ints(l, 10), *i2 = mg_lease_ints(l, 3);
    EXPECT(i1 == (int *)ip && (char *)i2 == (char *)ip + 64);
    memset(p1, 1, 100);
    /* larger than the rest of the pool: malloc'ed, still aligned */
    char *big = mg_lease_msg(l, ms);
    EXPECT(big && !in_pool(big, mp, ms) && ((uintptr_t)big & 63) == 0);
    if (big) big[0] = big[ms - 1] = 1;
    int *many = mg_lease_ints(l, is); /* is ints > is bytes */
    EXPECT(many && !in_pool(many, ip, is));
    if (many) many[is - 1] = 1;
    /* the pool is held: a second lease (this or another thread) mallocs */
    mg_lease *l2 = mg_lease_acquire(64, 64);
    EXPECT(l2 && !l2->pooled);
    char *q = mg_lease_msg(l2, 200);
    int *qi = mg_lease_ints(l2, 5);
    EXPECT(q && !in_pool(q, mp, ms) && ((uintptr_t)q & 63) == 0);
    EXPECT(qi && !in_pool(qi, ip, is));
    if (q) memset(q, 2, 200);
    pthread_t th;
    void *ok = NULL;
    pthread_create(&th, NULL, lease_in_thread, NULL);
    pthread_join(th, &ok);
    EXPECT(ok != NULL);
    mg_lease_release(l2);
    mg_lease_release(l);
    /* everything was returned */
    mg_lease *l3 = mg_lease_acquire(0, 0);
    EXPECT(l3 && l3->pooled && mg_lease_msg(l3, 10) == (void *)mp && mg_lease_ints(l3, 1) == (int *)ip);
    mg_lease_release(l3);
    EXPECT(!mg_tune__pool_info().leased);
    EXPECT(mg_lease_msg(NULL, 1) == NULL && mg_lease_ints(NULL, 1) == NULL);
    mg_lease_release(NULL);
}

/* ---- helpers of the mock-ups ---- */

static int same_as_mpi_pack(MPI_Datatype t, int count)
{
    MPI_Aint lb, ext, tlb, text;
    MPI_Type_get_extent(t, &lb, &ext);
    MPI_Type_get_true_extent(t, &tlb, &text);
    MPI_Aint span = text + (count > 1 ? (count - 1) * ext : 0);
    unsigned char *buf = malloc((size_t)span), *back = malloc((size_t)span);
    for (MPI_Aint i = 0; i < span; i++) buf[i] = (unsigned char)(i * 7 + 3), back[i] = 0xEE;
    int psize, pos = 0, tsize;
    MPI_Type_size(t, &tsize);
    MPI_Pack_size(count, t, MPI_COMM_WORLD, &psize);
    unsigned char *ref = malloc((size_t)psize + 1), *mine = malloc((size_t)psize + 1);
    MPI_Pack(buf - tlb, count, t, ref, psize, &pos, MPI_COMM_WORLD);
    int ok = pos == tsize * count && mg_call_pack(buf - tlb, count, t, mine, MPI_COMM_WORLD) == MPI_SUCCESS &&
             memcmp(ref, mine, (size_t)pos) == 0;
    /* unpack: the data bytes come back, the gaps stay */
    ok = ok && mg_call_unpack(mine, back - tlb, count, t, MPI_COMM_WORLD) == MPI_SUCCESS;
    unsigned char *back2 = malloc((size_t)span);
    memset(back2, 0xEE, (size_t)span);
    pos = 0;
    MPI_Unpack(ref, psize, &pos, back2 - tlb, count, t, MPI_COMM_WORLD);
    ok = ok && memcmp(back, back2, (size_t)span) == 0;
    /* typed copy: the same bytes as the unpack, gaps untouched */
    memset(back, 0xEE, (size_t)span);
    ok = ok && mg_copy_typed(buf - tlb, back - tlb, count, t) == MPI_SUCCESS && memcmp(back, back2, (size_t)span) == 0;
    free(buf), free(back), free(back2), free(ref), free(mine);
    return ok;
}

/* A user-defined op for the reduction rule (never called). */
static void op_first(void *in, void *inout, int *len, MPI_Datatype *type)
{
    (void)in, (void)inout, (void)len, (void)type;
}

/* mg_reduction_supported for (type, op) as a reduction mock-up sees it. */
static mg_call reduction_call(MPI_Datatype type, MPI_Op op, int regroup)
{
    mg_call c;
    memset(&c, 0, sizeof c);
    c.coll = MG_COLL_ALLREDUCE;
    c.sendtype = c.recvtype = type;
    c.op = op;
    c.comm = MPI_COMM_WORLD;
    c.size = size;
    c.regroup = regroup;
    MPI_Op_commutative(op, &c.commutative);
    return c;
}

static int reduction_ok(MPI_Datatype type, MPI_Op op)
{
    mg_call c = reduction_call(type, op, 0);
    return mg_reduction_supported(&c);
}

static int regrouped_ok(MPI_Datatype type, MPI_Op op)
{
    mg_call c = reduction_call(type, op, 1);
    return mg_reduction_supported(&c);
}

/* The rule of the reduction mock-ups: floating-point MPI_SUM/MPI_PROD (and
 * under Open MPI 8/16-bit integer SUM/PROD) and awkward layouts run natively. */
static void check_reduction_rule(void)
{
#ifdef OMPI_MAJOR_VERSION
    const int small_ints = 0; /* Open MPI's vectorized 8/16-bit SUM/PROD saturate */
#else
    const int small_ints = 1;
#endif
    EXPECT(reduction_ok(MPI_INT, MPI_SUM) && reduction_ok(MPI_INT, MPI_PROD) && reduction_ok(MPI_INT, MPI_MAX));
    EXPECT(reduction_ok(MPI_LONG_LONG, MPI_PROD) && reduction_ok(MPI_UNSIGNED, MPI_SUM));
    EXPECT(reduction_ok(MPI_INT64_T, MPI_SUM) && reduction_ok(MPI_UINT32_T, MPI_PROD) &&
           reduction_ok(MPI_AINT, MPI_SUM));
    EXPECT(reduction_ok(MPI_SHORT, MPI_SUM) == small_ints && reduction_ok(MPI_INT8_T, MPI_SUM) == small_ints);
    EXPECT(reduction_ok(MPI_UNSIGNED_CHAR, MPI_PROD) == small_ints &&
           reduction_ok(MPI_UINT16_T, MPI_SUM) == small_ints);
    EXPECT(reduction_ok(MPI_SHORT, MPI_MAX) && reduction_ok(MPI_UNSIGNED_CHAR, MPI_BOR));
    EXPECT(!reduction_ok(MPI_CHAR, MPI_SUM) && !reduction_ok(MPI_BYTE, MPI_SUM)); /* not integer types for SUM */
    /* floating-point data: native whatever the op (rounding, +-0 and NaN depend on the grouping) ... */
    EXPECT(!reduction_ok(MPI_DOUBLE, MPI_SUM) && !reduction_ok(MPI_DOUBLE, MPI_PROD));
    EXPECT(!reduction_ok(MPI_FLOAT, MPI_SUM) && !reduction_ok(MPI_LONG_DOUBLE, MPI_PROD));
    EXPECT(!reduction_ok(MPI_C_DOUBLE_COMPLEX, MPI_SUM) && !reduction_ok(MPI_C_FLOAT_COMPLEX, MPI_PROD));
    EXPECT(!reduction_ok(MPI_DOUBLE, MPI_MAX) && !reduction_ok(MPI_FLOAT, MPI_MIN));
    EXPECT(!reduction_ok(MPI_DOUBLE_INT, MPI_MINLOC) && !reduction_ok(MPI_FLOAT_INT, MPI_MAXLOC));
    EXPECT(!reduction_ok(MPI_DOUBLE_INT, MPI_SUM) && !reduction_ok(MPI_LONG_DOUBLE, MPI_MAX));
    MPI_Op user;
    MPI_Op_create(op_first, 1, &user);
    EXPECT(!reduction_ok(MPI_DOUBLE, user) && !reduction_ok(MPI_FLOAT, user) &&
           !reduction_ok(MPI_C_DOUBLE_COMPLEX, user));
    EXPECT(reduction_ok(MPI_INT, user) && reduction_ok(MPI_2INT, MPI_MINLOC)); /* integer data: any op */
    /* ... unless the configuration allows regrouping (allow_regrouping) */
    EXPECT(regrouped_ok(MPI_DOUBLE, MPI_SUM) && regrouped_ok(MPI_FLOAT, MPI_MAX) && regrouped_ok(MPI_DOUBLE, user));
    EXPECT(regrouped_ok(MPI_C_DOUBLE_COMPLEX, MPI_PROD) && regrouped_ok(MPI_DOUBLE_INT, MPI_MINLOC));
    EXPECT(!regrouped_ok(MPI_CHAR, MPI_SUM)); /* not a type for SUM: stays native */
    /* padding only under predefined ops (a user op sees the elements the program passed only) */
    mg_call padded = reduction_call(MPI_INT, user, 0);
    EXPECT(!mg_padding_allowed(&padded));
    padded.op = MPI_MAX;
    EXPECT(mg_padding_allowed(&padded));
    /* derived types: the base types decide, through nested constructors */
    MPI_Datatype c4i, c4d, nest, sfi, sii, gaps;
    MPI_Type_contiguous(4, MPI_INT, &c4i);
    MPI_Type_contiguous(2, MPI_DOUBLE, &c4d);
    MPI_Type_contiguous(2, c4d, &nest);
    int lens[2] = {1, 1};
    MPI_Aint disps[2] = {0, 4};
    MPI_Datatype fi[2] = {MPI_INT, MPI_FLOAT}, ii[2] = {MPI_INT, MPI_INT};
    MPI_Type_create_struct(2, lens, disps, fi, &sfi);
    MPI_Type_create_struct(2, lens, disps, ii, &sii);
    MPI_Type_vector(2, 1, 3, MPI_INT, &gaps);
    MPI_Datatype all[] = {c4i, c4d, nest, sfi, sii, gaps};
    for (int i = 0; i < 6; i++) MPI_Type_commit(&all[i]);
    EXPECT(reduction_ok(c4i, MPI_SUM) && reduction_ok(c4i, user) && !reduction_ok(c4d, MPI_SUM));
    EXPECT(!reduction_ok(c4d, MPI_MAX) && regrouped_ok(c4d, MPI_MAX));
    EXPECT(!reduction_ok(nest, MPI_PROD) && !reduction_ok(nest, user) && regrouped_ok(nest, user));
    EXPECT(!reduction_ok(sfi, MPI_SUM) && !reduction_ok(sfi, MPI_MAX) && reduction_ok(sii, MPI_SUM));
    EXPECT(!reduction_ok(gaps, MPI_MAX) && !reduction_ok(gaps, user)); /* the layout part */
    for (int i = 0; i < 6; i++) MPI_Type_free(&all[i]);
    MPI_Op_free(&user);
}

static void check_helpers(void)
{
    check_reduction_rule();
    EXPECT(mg_type_bytes(10, MPI_INT) == 40);
    EXPECT(mg_type_bytes(-1, MPI_INT) == -1);
    EXPECT(mg_type_bytes(1, MPI_DATATYPE_NULL) == -1);
    MPI_Datatype huge;
    MPI_Type_contiguous(1 << 30, MPI_DOUBLE, &huge); /* 8 GiB per element */
    EXPECT(mg_type_bytes(1 << 30, huge) == -1 || sizeof(MPI_Count) > 8);
    EXPECT(mg_type_bytes(4, huge) == (MPI_Count)4 * 8 * (1 << 30));
    MPI_Type_free(&huge);
    EXPECT(mg_fits_int(0) && mg_fits_int(2147483647) && !mg_fits_int(2147483648LL) && !mg_fits_int(-1));

    MPI_Aint off = -1;
    EXPECT(mg_type_contiguous(10, MPI_INT, &off) && off == 0);
    EXPECT(!mg_type_contiguous(2, MPI_SHORT_INT, &off)); /* a hole after the short */
    MPI_Datatype v, c, rev, res, cv;
    MPI_Type_vector(3, 2, 4, MPI_INT, &v);
    MPI_Type_contiguous(5, MPI_INT, &c);
    int lens[2] = {1, 1}, disps[2] = {1, 0};
    MPI_Type_indexed(2, lens, disps, MPI_INT, &rev); /* size == true extent, but reversed */
    MPI_Type_create_resized(c, -8, 28, &res);        /* lb -8, extent 28 > size 20 */
    MPI_Type_vector(2, 3, 3, MPI_INT, &cv);          /* a vector that is contiguous */
    MPI_Datatype all[] = {v, c, rev, res, cv};
    for (int i = 0; i < 5; i++) MPI_Type_commit(&all[i]);
    EXPECT(!mg_type_contiguous(1, v, &off));
    EXPECT(mg_type_contiguous(3, c, &off) && off == 0);
    EXPECT(!mg_type_contiguous(1, rev, &off));
    EXPECT(mg_type_contiguous(1, res, &off) && off == 0);
    EXPECT(!mg_type_contiguous(2, res, &off)); /* extent 28: a gap between elements */
    EXPECT(mg_type_contiguous(4, cv, &off));
    for (int i = 0; i < 5; i++)
        for (int count = 1; count <= 3; count++)
            if (!same_as_mpi_pack(all[i], count)) {
                fprintf(stderr, "rank %d: type %d count %d: mg_call_pack/unpack/mg_copy_typed differ from MPI\n", rank,
                        i, count);
                failures++;
            }
    for (int i = 0; i < 5; i++) MPI_Type_free(&all[i]);

    int counts[4], displs[4];
    mg_round_robin_counts(130, 2, 64, counts, displs); /* chunks 64, 64, 2 */
    EXPECT(counts[0] == 66 && counts[1] == 64 && displs[0] == 0 && displs[1] == 66);
    mg_round_robin_counts(10, 4, 3, counts, displs); /* chunks 3, 3, 3, 1 */
    EXPECT(counts[0] == 3 && counts[1] == 3 && counts[2] == 3 && counts[3] == 1);
    EXPECT(displs[0] == 0 && displs[1] == 3 && displs[2] == 6 && displs[3] == 9);
    mg_round_robin_counts(700, 4, 64, counts, displs); /* 10 full chunks + 60: 3,3,2,2 chunks, the 60 to rank 2 */
    EXPECT(counts[0] == 192 && counts[1] == 192 && counts[2] == 188 && counts[3] == 128);
    EXPECT(displs[3] == 572);
    mg_round_robin_counts(0, 3, 64, counts, displs);
    EXPECT(counts[0] == 0 && counts[2] == 0 && displs[2] == 0);
}

int main(int argc, char **argv)
{
    /* per-rank directory: the ranks do not know each other before MPI_Init */
    snprintf(dir, sizeof dir, "/tmp/mg_tune_test_XXXXXX");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 2;
    }
    char sub[128];
    snprintf(sub, sizeof sub, "%s/p", dir);
    if (mkdir(sub, 0700) != 0) {
        perror(sub);
        return 2;
    }
    /* the configuration file (lines 4, 5, 6, 13 and two entries of 8 are bad) and the environment */
    write_file("tune.conf", "# mpiguide-tune test configuration\n"
                            "mode = forced   # a comment\n"
                            "chunk = 16\n"
                            "mdoe = tuned\n"
                            "just words\n"
                            "int_pool_bytes = 12 parsecs\n"
                            "int_pool_bytes = 8k\n"
                            "force = allgathr=default, allreduce=no_such_mockup\n"
                            "msg_pool_bytes = 2M\n"
                            "profiles = nonexistent_profiles\n"
                            "report = -\n"
                            "dt_form = list\n"
                            "dt_form = lists\n");
    char conf[128];
    snprintf(conf, sizeof conf, "%s/tune.conf", dir);
    setenv("MPIGUIDE_TUNE_CONFIG", conf, 1);
    setenv("MPIGUIDE_TUNE_CHUNK", "32", 1);
    setenv("MPIGUIDE_TUNE_MSG_POOL", "1M", 1);
    setenv("MPIGUIDE_TUNE_PROFILE", "misspelled", 1);
    unsetenv("MPIGUIDE_TUNE_MODE");
    unsetenv("MPIGUIDE_TUNE_FORCE");
    unsetenv("MPIGUIDE_TUNE_PROFILES");
    unsetenv("MPIGUIDE_TUNE_REPORT");
    unsetenv("MPIGUIDE_TUNE_INT_POOL");
    warn_file = tmpfile();
    mg_tune__set_warning_stream(warn_file);

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    unsetenv("MPIGUIDE_TUNE_PROFILE");
    /* the file's force entry of allreduce was bad; this one is good */
    EXPECT(mg_tune_force("allreduce", mockup("allreduce", 1)) == MG_TUNE_SUCCESS);
    check_config_at_init();
    check_config_variants();
    check_profiles();
    check_dt_profiles();
    check_calls();
    check_pool();
    check_helpers();
    /* the report at MPI_Finalize: to a file instead of the configured "-" */
    char report[128];
    snprintf(report, sizeof report, "%s/report.txt", dir);
    mg_tune__set_report_file(report);

    int all = 0;
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Finalize();
    /* after MPI_Finalize: no pools, leases malloc */
    mg_lease *l = mg_lease_acquire(10, 10);
    char *p = mg_lease_msg(l, 10);
    EXPECT(l && !l->pooled && p && ((uintptr_t)p & 63) == 0);
    mg_lease_release(l);
    /* the report file: written by rank 0 of MPI_COMM_WORLD only */
    FILE *rf = fopen(report, "r");
    EXPECT((rf != NULL) == (rank == 0));
    if (rf) {
        char buf[8192];
        size_t n = fread(buf, 1, sizeof buf - 1, rf);
        buf[n] = '\0';
        fclose(rf);
        EXPECT(strstr(buf, "#@tune_alg[MPI_Allgather 4096 default]=1\n") != NULL);
        EXPECT(strstr(buf, "#@tune_alg[MPI_Allreduce 4 default]=1\n") != NULL); /* the last allreduce */
        EXPECT(strstr(buf, "#@tune_config[mode]=off\n#@tune_config[chunk]=32\n") != NULL);
    }
    fclose(warn_file);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0) fprintf(stderr, "rank %d: could not remove %s\n", rank, dir);
    if (rank == 0) printf("test_tune_config: %s (%d failure(s) over all ranks)\n", all ? "FAILED" : "ok", all);
    return all || failures ? 1 : 0;
}
