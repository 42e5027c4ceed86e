/* Tests of the measurement core: pure helpers with known answers, option
 * parsing (the core's options, a driver's option table, the strict parsers),
 * the JSON writer of --list, the dissemination barrier's semantics, the
 * max-over-ranks reduction and the raw output as it lands in a file. Runs with
 * 1..4 processes. No check depends on the machine's speed: timings are only
 * compared with what the same clock measured. */
#define _POSIX_C_SOURCE 200809L
#include "mg_bench.h"
#include "mg_json.h"
#include "mg_options.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int failures, checks;
#define CHECK(cond)                                                                  \
    do {                                                                             \
        checks++;                                                                    \
        if (!(cond)) {                                                               \
            failures++;                                                              \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
        }                                                                            \
    } while (0)

static double now_realtime(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void busy_wait(double seconds)
{
    double end = MPI_Wtime() + seconds;
    while (MPI_Wtime() < end) {
    }
}

static void test_pure_helpers(void)
{
    CHECK(mg_nrep_rule(1) == 100);
    CHECK(mg_nrep_rule(32768) == 100);
    CHECK(mg_nrep_rule(32769) == 50);
    CHECK(mg_nrep_rule(327680) == 50);
    CHECK(mg_nrep_rule(327681) == 20);

    const double x[] = {1, 2, 3, 4, 5};
    CHECK(fabs(mg_rse(x, 5) - sqrt(2.5) / sqrt(5.0) / 3.0) < 1e-12);
    CHECK(isinf(mg_rse(x, 1)));
    const double same[] = {2, 2, 2};
    CHECK(mg_rse(same, 3) == 0.0);

    const double lat[] = {0.002, 0.001, 0.003};
    CHECK(mg_nrep_from_latencies(0.01, lat, 3, 5, 1000) == 10);  /* ceil(t1 / l_min) */
    CHECK(mg_nrep_from_latencies(0.01, lat, 3, 20, 1000) == 20); /* K wins */
    CHECK(mg_nrep_from_latencies(0.01, lat, 3, 5, 8) == 8);      /* capped */
    CHECK(mg_nrep_from_latencies(0.0105, lat, 3, 1, 1000) == 11);
    const double zero[] = {0.0};
    CHECK(mg_nrep_from_latencies(0.01, zero, 1, 1, 500) == 500);

    size_t sizes[8];
    int n;
    CHECK(mg_parse_size_list("4,1k,2M", sizes, 8, &n) == 0 && n == 3);
    CHECK(sizes[0] == 4 && sizes[1] == 1024 && sizes[2] == 2u * 1024 * 1024);
    CHECK(mg_parse_size_list("4,,5", sizes, 8, &n) != 0);
    CHECK(mg_parse_size_list("-3", sizes, 8, &n) != 0);
    CHECK(mg_parse_size_list("3x", sizes, 8, &n) != 0);
    CHECK(mg_parse_size_list("", sizes, 8, &n) != 0);
    CHECK(mg_parse_size_list("1,2,3", sizes, 2, &n) != 0);
    /* mg_parse_size's forms, and what the lists accepted before it. */
    CHECK(mg_parse_size_list("1g,64MiB,4096B,2kb", sizes, 8, &n) == 0 && n == 4);
    CHECK(sizes[0] == 1024u * 1024 * 1024 && sizes[1] == 64u * 1024 * 1024 && sizes[2] == 4096 && sizes[3] == 2048);
    CHECK(mg_parse_size_list("4,8,", sizes, 8, &n) == 0 && n == 2 && sizes[1] == 8);
    CHECK(mg_parse_size_list(" 4, 8 ", sizes, 8, &n) == 0 && n == 2 && sizes[0] == 4 && sizes[1] == 8);
    CHECK(mg_parse_size_list("0", sizes, 8, &n) == 0 && n == 1 && sizes[0] == 0);
    CHECK(mg_parse_size_list("1.5k", sizes, 8, &n) != 0);
    CHECK(mg_parse_size_list("k", sizes, 8, &n) != 0);
    CHECK(mg_parse_size_list("99999999999999999999", sizes, 8, &n) != 0);

    long v[4];
    CHECK(mg_parse_long_list("2,10,1000", v, 4, &n, 1) == 0 && n == 3 && v[2] == 1000);
    CHECK(mg_parse_long_list("0", v, 4, &n, 1) != 0);
    CHECK(mg_parse_long_list("1,x", v, 4, &n, 1) != 0);
    CHECK(mg_parse_long_list("3000000000", v, 4, &n, 1) != 0);
    int k;
    CHECK(mg_parse_int("42", 1, 100, &k) == 0 && k == 42);
    CHECK(mg_parse_int("0", 1, 100, &k) != 0 && mg_parse_int("101", 1, 100, &k) != 0);
    CHECK(mg_parse_int("4x", 1, 100, &k) != 0 && mg_parse_int("", 1, 100, &k) != 0);

    const char *names[] = {"red", "green", "blue"};
    char buf[32];
    CHECK(strcmp(mg_join_names(names, 3, ", ", buf, sizeof buf), "red, green, blue") == 0);
    CHECK(strcmp(mg_join_names(names, 3, ",", buf, 6), "red,g") == 0); /* cut, terminated */
}

/* mg_parse_names prints its errors on rank 0 of b: they land in the test log. */
static void test_name_lists(void)
{
    mg_bench b;
    mg_bench_init(&b, "test", MPI_COMM_WORLD);
    const char *names[] = {"red", "green", "blue"};
    int chosen[3];
    CHECK(mg_parse_names(&b, "color", "blue,red,blue", names, 3, chosen) == 2 && chosen[0] == 2 && chosen[1] == 0);
    CHECK(mg_parse_names(&b, "color", "red,pink", names, 3, chosen) == -1);
    CHECK(mg_parse_names(&b, "color", ",", names, 3, chosen) == -1);
    mg_bench_end(&b);
}

/* The bookkeeping on a duplicate of the driver's communicator (freed at the end), or on that one itself
 * (mg_bench_init_shared: left to the driver). */
static void test_bookkeeping_communicator(void)
{
    mg_bench b;
    int cmp = MPI_UNEQUAL;
    CHECK(mg_bench_init(&b, "test", MPI_COMM_WORLD) == MPI_SUCCESS);
    MPI_Comm_compare(b.comm, MPI_COMM_WORLD, &cmp);
    CHECK(cmp == MPI_CONGRUENT);
    mg_bench_end(&b);
    CHECK(b.comm == MPI_COMM_NULL);
    CHECK(mg_bench_init_shared(&b, "test", MPI_COMM_WORLD) == MPI_SUCCESS);
    CHECK(b.comm == MPI_COMM_WORLD);
    int size = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(b.size == size);
    mg_bench_end(&b);
    int sum = 0, one = 1;
    CHECK(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD) == MPI_SUCCESS && sum == size);
}

/* The text a JSON writer produced, read back from its file. */
static void read_back(FILE *f, char *buf, size_t len)
{
    rewind(f);
    size_t n = fread(buf, 1, len - 1, f);
    buf[n] = '\0';
}

static void test_json(void)
{
    char got[2048];
    FILE *f = tmpfile();
    CHECK(f != NULL);
    if (!f) return;
    mg_json j;
    mg_json_start(&j, f);
    mg_json_string(&j, "s", "a\"b\\c\n\t\x01\xc3\xa9/");
    mg_json_long(&j, "n", -42);
    mg_json_double(&j, "x", 0.01);
    mg_json_double(&j, "y", 10.0);
    mg_json_double(&j, "inf", INFINITY);
    mg_json_bool(&j, "t", 1);
    mg_json_string(&j, "null", NULL);
    const char *list[] = {"p", "q\"r"};
    const long long nums[] = {1, 1024};
    mg_json_strings(&j, "list", list, 2);
    mg_json_longs(&j, "nums", nums, 2);
    mg_json_strings(&j, "none", list, 0);
    mg_json_array(&j, "objects");
    mg_json_object(&j, NULL);
    mg_json_string(&j, "k", "v");
    mg_json_close(&j);
    mg_json_object(&j, NULL);
    mg_json_close(&j);
    mg_json_flat_object(&j, NULL);
    mg_json_long(&j, "a", 1);
    mg_json_strings(&j, "b", list, 1);
    mg_json_close(&j);
    mg_json_close(&j);
    mg_json_object(&j, "open"); /* closed by finish */
    CHECK(mg_json_finish(&j) == 0);
    read_back(f, got, sizeof got);
    const char *want = "{\n"
                       "  \"s\": \"a\\\"b\\\\c\\n\\t\\u0001\xc3\xa9/\",\n"
                       "  \"n\": -42,\n"
                       "  \"x\": 0.01,\n"
                       "  \"y\": 10,\n"
                       "  \"inf\": null,\n"
                       "  \"t\": true,\n"
                       "  \"null\": null,\n"
                       "  \"list\": [\"p\", \"q\\\"r\"],\n"
                       "  \"nums\": [1, 1024],\n"
                       "  \"none\": [],\n"
                       "  \"objects\": [\n"
                       "    {\n"
                       "      \"k\": \"v\"\n"
                       "    },\n"
                       "    {},\n"
                       "    {\"a\": 1, \"b\": [\"p\"]}\n"
                       "  ],\n"
                       "  \"open\": {}\n"
                       "}\n";
    CHECK(strcmp(got, want) == 0);
    if (strcmp(got, want) != 0) fprintf(stderr, "JSON written:\n%s", got);

    /* Misuse is reported, not written: a key inside an array, a member without one. */
    rewind(f);
    mg_json_start(&j, f);
    mg_json_array(&j, "a");
    mg_json_long(&j, "key", 1);
    CHECK(j.error);
    CHECK(mg_json_finish(&j) != 0);
    mg_json_start(&j, f);
    mg_json_long(&j, NULL, 1);
    CHECK(mg_json_finish(&j) != 0);
    fclose(f);
}

static int parse(mg_bench *b, int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        int r = mg_bench_option(b, argc, argv, &i);
        if (r <= 0) return r;
    }
    return 1;
}

/* A driver's option table through mg_bench_args. */
static int args(mg_bench *b, const mg_cli *cli, int argc, char **argv) { return mg_bench_args(b, cli, argc, argv); }

static void test_driver_args(void)
{
    mg_bench b;
    const char *value = "default", *set = NULL;
    int flag = 0, count = 7;
    const mg_opt opts[] = {
        {"--value", MG_OPT_VALUE, &value, 0, NULL, "V", "a value"},
        {"--set", MG_OPT_SET, &set, 0, "none", NULL, "sets the text"},
        {"--flag", MG_OPT_FLAG, &flag, 3, NULL, NULL, "sets the flag"},
        {"--count", MG_OPT_POSITIVE, &count, 0, NULL, "N", NULL},
    };
    mg_cli cli = {"mg_test", "mg_test [options]", opts, 4, 0, NULL};
    mg_bench_init(&b, "test", MPI_COMM_WORLD);
    char *ok[] = {"x", "--value", "v", "--set", "--flag", "--count", "12", "--nrep", "9", "--b1", "3"};
    CHECK(args(&b, &cli, 11, ok) == MG_ARGS_RUN);
    CHECK(strcmp(value, "v") == 0 && strcmp(set, "none") == 0 && flag == 3 && count == 12);
    CHECK(b.nrep_method == MG_NREP_FIXED && b.nrep_fixed == 9 && b.est.b1 == 3);
    char *unknown[] = {"x", "--bogus"};
    CHECK(args(&b, &cli, 2, unknown) == 2);
    char *missing[] = {"x", "--value"};
    CHECK(args(&b, &cli, 2, missing) == 2);
    char *zero[] = {"x", "--count", "0"};
    CHECK(args(&b, &cli, 3, zero) == 2);
    char *help[] = {"x", "--help", "--bogus"};
    CHECK(args(&b, &cli, 3, help) == 0); /* --help stops reading */
    mg_bench_end(&b);

    /* A driver that times its own loop: --nrep N (default from the table), no estimation. */
    cli.fixed_nrep = 5;
    mg_bench_init(&b, "test", MPI_COMM_WORLD);
    char *none[] = {"x"};
    CHECK(args(&b, &cli, 1, none) == MG_ARGS_RUN && b.nrep_method == MG_NREP_FIXED && b.nrep_fixed == 5);
    char *rule[] = {"x", "--nrep", "rule"};
    CHECK(args(&b, &cli, 3, rule) == 2);
    char *estimation[] = {"x", "--rse-calib", "0.1"};
    CHECK(args(&b, &cli, 3, estimation) == 2);
    char *sync[] = {"x", "--sync", "dissem", "--nrep", "2"};
    CHECK(args(&b, &cli, 5, sync) == MG_ARGS_RUN && b.sync == MG_SYNC_DISSEM && b.nrep_fixed == 2);
    mg_bench_end(&b);
}

static void test_options(void)
{
    mg_bench b;
    mg_bench_init(&b, "test", MPI_COMM_WORLD);
    char *ok[] = {"x", "--sync", "dissem", "--nrep", "estimate", "--t1", "0.5", "--b2", "0", "--nrep-min", "3"};
    CHECK(parse(&b, 11, ok) == 1);
    CHECK(b.sync == MG_SYNC_DISSEM && b.nrep_method == MG_NREP_ESTIMATE);
    CHECK(b.est.t1 == 0.5 && b.est.b2 == 0 && b.est.k_min == 3);
    char *fixed[] = {"x", "--nrep", "42"};
    CHECK(parse(&b, 3, fixed) == 1 && b.nrep_method == MG_NREP_FIXED && b.nrep_fixed == 42);
    char *bad_sync[] = {"x", "--sync", "tree"};
    CHECK(parse(&b, 3, bad_sync) == -1);
    char *bad_nrep[] = {"x", "--nrep", "0"};
    CHECK(parse(&b, 3, bad_nrep) == -1);
    char *missing[] = {"x", "--t1"};
    CHECK(parse(&b, 2, missing) == -1);
    char *unknown[] = {"x", "--bogus"};
    CHECK(parse(&b, 2, unknown) == 0);
    char *seed[] = {"x", "--order-seed", "4294967295"};
    CHECK(parse(&b, 3, seed) == 1 && b.order == 4294967295ul);
    char *bad_seed[] = {"x", "--order-seed", "-3"}, *bad_seed2[] = {"x", "--order-seed", "12x"};
    CHECK(parse(&b, 3, bad_seed) == -1 && parse(&b, 3, bad_seed2) == -1);
    mg_bench_end(&b);
}

/* Nobody may leave the barrier before the last rank has entered it. */
static void test_dissem_barrier(void)
{
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int round = 0; round < 3; round++) {
        int late = (round + 1) % size;
        if (rank == late) busy_wait(0.03);
        double t[2];
        t[0] = now_realtime();
        CHECK(mg_dissem_barrier(MPI_COMM_WORLD) == MPI_SUCCESS);
        t[1] = now_realtime();
        double *all = malloc(2 * sizeof(double) * (size_t)size);
        MPI_Allgather(t, 2, MPI_DOUBLE, all, 2, MPI_DOUBLE, MPI_COMM_WORLD);
        double last_entry = 0, first_exit = INFINITY;
        for (int r = 0; r < size; r++) {
            last_entry = all[2 * r] > last_entry ? all[2 * r] : last_entry;
            first_exit = all[2 * r + 1] < first_exit ? all[2 * r + 1] : first_exit;
        }
        CHECK(first_exit >= last_entry);
        free(all);
    }
}

typedef struct {
    int rank, slow_rank;
    double seconds;
} busy_ctx;

static int op_busy(void *p)
{
    busy_ctx *c = p;
    if (c->rank == c->slow_rank || c->slow_rank < 0) busy_wait(c->seconds);
    return MPI_SUCCESS;
}

/* Reads the file rank 0 wrote; counts data rows and checks header lines. */
static int count_rows(const char *path, double *min_time, char *header, size_t hlen)
{
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    char line[4096];
    int rows = 0, seen_columns = 0;
    *min_time = INFINITY;
    header[0] = '\0';
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "#@", 2) == 0) {
            strncat(header, line, hlen - strlen(header) - 1);
        } else if (!seen_columns) {
            seen_columns = 1;
        } else {
            char variant[64];
            int rep;
            double t;
            if (sscanf(line, "%63s %d %lf", variant, &rep, &t) == 3) {
                rows++;
                *min_time = t < *min_time ? t : *min_time;
            }
        }
    }
    fclose(f);
    return rows;
}

static void test_measure_writes_max_over_ranks(const char *path)
{
    mg_bench b;
    mg_bench_init(&b, "test", MPI_COMM_WORLD);
    char *argv[] = {"x", "--nrep", "4", "--sync", "dissem", "--output", (char *)path};
    CHECK(parse(&b, 7, argv) == 1);
    mg_bench_param(&b, "answer", "%d", 42);
    CHECK(mg_bench_begin(&b, "variant") == 0);
    busy_ctx ctx = {.rank = b.rank, .slow_rank = b.size - 1, .seconds = 0.002};
    CHECK(mg_bench_measure(&b, "slowlast", 8, op_busy, &ctx) == MPI_SUCCESS);
    int rank = b.rank, size = b.size;
    CHECK(mg_bench_end(&b) == 0);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank != 0) return;
    double tmin;
    char header[8192], want[64];
    CHECK(count_rows(path, &tmin, header, sizeof header) == 4);
    CHECK(tmin >= 0.002); /* the slow rank's time reached rank 0 */
    snprintf(want, sizeof want, "#@nprocs=%d\n", size);
    CHECK(strstr(header, want) != NULL);
    CHECK(strstr(header, "#@sync=dissem\n") != NULL);
    CHECK(strstr(header, "#@nrep_method=fixed\n#@nrep=4\n") != NULL);
    CHECK(strstr(header, "#@answer=42\n") != NULL);
    CHECK(strstr(header, "#@library_version=") != NULL);
    CHECK(strstr(header, "#@end=ok\n") != NULL);
    /* every rank runs on this host: its name size times, one node of size processes */
    char host[MPI_MAX_PROCESSOR_NAME], hosts[4096] = "#@hosts=";
    int len;
    MPI_Get_processor_name(host, &len);
    for (int i = 0; i < size; i++)
        snprintf(hosts + strlen(hosts), sizeof hosts - strlen(hosts), "%s%s", i ? "," : "", host);
    snprintf(hosts + strlen(hosts), sizeof hosts - strlen(hosts), "\n#@nodes=1\n#@ppn=%d\n", size);
    CHECK(strstr(header, hosts) != NULL);
}

static void test_estimate(const char *path)
{
    mg_bench b;
    mg_bench_init(&b, "test", MPI_COMM_WORLD);
    /* Oversubscribed runs may never reach 1%: bound the calibration. */
    char *argv[] = {"x", "--nrep", "estimate", "--nrep-min", "3", "--calib-max", "0.5", "--output", (char *)path};
    CHECK(parse(&b, 9, argv) == 1);
    CHECK(b.est.calib_max_s == 0.5);
    CHECK(mg_bench_begin(&b, "variant") == 0);
    busy_ctx ctx = {.rank = b.rank, .slow_rank = -1, .seconds = 0.001};
    CHECK(mg_bench_calibrate(&b, op_busy, &ctx) == MPI_SUCCESS);
    double t1 = b.est.t1;
    CHECK(mg_bench_measure(&b, "busy", 1, op_busy, &ctx) == MPI_SUCCESS);
    int rank = b.rank;
    mg_bench_end(&b);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank != 0) return;
    double tmin;
    char header[8192];
    int rows = count_rows(path, &tmin, header, sizeof header);
    const char *est = strstr(header, "#@estimate[busy]=nrep:");
    CHECK(est != NULL);
    if (!est) return;
    int nrep = atoi(est + strlen("#@estimate[busy]=nrep:"));
    CHECK(rows == nrep);                  /* exactly the estimated number of rows */
    CHECK(nrep >= 3);                     /* K */
    CHECK(nrep <= (int)ceil(t1 / 0.001)); /* l_min >= 1 ms bounds nrep from above */
    /* t_nrep1 sums the calibration repetitions, each at least 1 ms by the same
     * clock; how many fit into --calib-max depends on the machine, so only
     * their number as written is checked against the sum. */
    const char *reps = strstr(header, "#@t_nrep1_reps=");
    CHECK(strstr(header, "#@t_nrep1=") != NULL && reps != NULL);
    if (reps) {
        int ncalib = atoi(reps + strlen("#@t_nrep1_reps="));
        CHECK(ncalib >= 1);
        CHECK(t1 >= ncalib * 0.001);
    }
}

static int op_count(void *ctx)
{
    ++*(int *)ctx;
    return MPI_SUCCESS;
}

/* mg_bench_measure_calls: `calls` calls of op per repetition, one row each;
 * a count below 1 is refused before anything runs. */
static void test_measure_calls(const char *path)
{
    mg_bench b;
    mg_bench_init(&b, "test", MPI_COMM_WORLD);
    char *argv[] = {"x", "--nrep", "5", "--output", (char *)path};
    CHECK(parse(&b, 5, argv) == 1);
    CHECK(mg_bench_begin(&b, "variant") == 0);
    int calls = 0;
    CHECK(mg_bench_measure_calls(&b, "batched", 8, op_count, &calls, 3) == MPI_SUCCESS);
    CHECK(calls == 15);
    CHECK(mg_bench_measure_calls(&b, "none", 8, op_count, &calls, 0) == MPI_ERR_ARG);
    CHECK(calls == 15);
    int rank = b.rank;
    CHECK(mg_bench_end(&b) == 0);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank != 0) return;
    double tmin;
    char header[8192];
    CHECK(count_rows(path, &tmin, header, sizeof header) == 5);
    CHECK(tmin >= 0);
}

/* Which operation ran in which order: each appends its letter. */
typedef struct {
    char trace[64];
    int len, fail_at; /* the call (counted over all) that returns an error; -1 none */
} order_ctx;
static int op_letter(order_ctx *c, char letter)
{
    if (c->len + 1 < (int)sizeof c->trace) c->trace[c->len] = letter;
    c->len++;
    return c->len == c->fail_at ? MPI_ERR_OTHER : MPI_SUCCESS;
}
static int op_a(void *ctx) { return op_letter(ctx, 'a'); }
static int op_b(void *ctx) { return op_letter(ctx, 'b'); }
static int op_c(void *ctx) { return op_letter(ctx, 'c'); }

/* Which side opened each repetition of a measurement of three one-call sides. */
static int calls_seen, first_of[3];
static int op_first(int k)
{
    if (calls_seen++ % 3 == 0) first_of[k]++;
    return MPI_SUCCESS;
}
static int op_first0(void *ctx) { return (void)ctx, op_first(0); }
static int op_first1(void *ctx) { return (void)ctx, op_first(1); }
static int op_first2(void *ctx) { return (void)ctx, op_first(2); }

/* The trace of one interleaved measurement of a, b (2 calls) and c at --order-seed seed, nrep 3. */
static void trace_of(const char *path, const char *seed, order_ctx *c, int *failed, int *rc)
{
    mg_bench b;
    mg_bench_init(&b, "test", MPI_COMM_WORLD);
    char *argv[] = {"x", "--nrep", "3", "--order-seed", (char *)seed, "--output", (char *)path};
    CHECK(parse(&b, 7, argv) == 1);
    CHECK(mg_bench_begin(&b, "variant") == 0);
    const char *labels[] = {"first", "second", "third"};
    const mg_bench_op ops[] = {op_a, op_b, op_c};
    const int calls[] = {1, 2, 1};
    *rc = mg_bench_measure_side_by_side(&b, 3, labels, 8, ops, c, calls, failed);
    c->trace[c->len < (int)sizeof c->trace ? c->len : (int)sizeof c->trace - 1] = '\0';
    mg_bench_end(&b);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* 1 if each repetition's part of the trace holds a, bb and c once, in some order. */
static int permutations(const char *trace, int reps)
{
    if ((int)strlen(trace) != 4 * reps) return 0;
    for (int r = 0; r < reps; r++) {
        const char *t = trace + 4 * r, *bb = strstr(t, "bb");
        if (!bb || bb - t > 2 || !memchr(t, 'a', 4) || !memchr(t, 'c', 4)) return 0;
    }
    return 1;
}

static int before_calls;
static int count_before(void *ctx)
{
    (void)ctx;
    before_calls++;
    return MPI_SUCCESS;
}

/* mg_bench_measure_interleaved (and side_by_side): every repetition runs each
 * side's batch once, in an order drawn from --order-seed alone (the same
 * seed, the same order; another seed, another); before runs untimed before
 * each batch; the rows come out grouped by label; a failing side is named by
 * its index; the seed is in the header. */
static void test_interleaved(const char *path)
{
    order_ctx c = {.fail_at = -1}, again = {.fail_at = -1}, other = {.fail_at = -1};
    int failed = 7, rc;
    trace_of(path, "5", &c, &failed, &rc);
    CHECK(rc == MPI_SUCCESS && failed == -1 && permutations(c.trace, 3));
    trace_of(path, "5", &again, &failed, &rc);
    CHECK(rc == MPI_SUCCESS && strcmp(c.trace, again.trace) == 0);
    trace_of(path, "6", &other, &failed, &rc);
    CHECK(rc == MPI_SUCCESS && permutations(other.trace, 3) && strcmp(c.trace, other.trace) != 0);
    /* the seventh call fails: the side it belongs to in seed 5's order is named */
    order_ctx f = {.fail_at = 7};
    trace_of(path, "5", &f, &failed, &rc);
    int want = c.trace[6] == 'a' ? 0 : c.trace[6] == 'b' ? 1 : 2;
    CHECK(rc == MPI_ERR_OTHER && failed == want);

    /* every side first about equally often over many repetitions; before once per batch */
    mg_bench b;
    mg_bench_init(&b, "test", MPI_COMM_WORLD);
    char *argv[] = {"x", "--nrep", "300", "--order-seed", "11", "--output", (char *)path};
    CHECK(parse(&b, 7, argv) == 1);
    CHECK(mg_bench_begin(&b, "variant") == 0);
    mg_bench_side sides[3] = {{"first", op_first0, NULL, 1, count_before},
                              {"second", op_first1, NULL, 1, count_before},
                              {"third", op_first2, NULL, 1, count_before}};
    before_calls = 0;
    CHECK(mg_bench_measure_interleaved(&b, 3, sides, 8, &failed) == MPI_SUCCESS);
    CHECK(before_calls == 900);
    mg_bench_side zero = sides[1];
    zero.calls = 0;
    CHECK(mg_bench_measure_interleaved(&b, 1, &zero, 8, &failed) == MPI_ERR_ARG);
    int rank = b.rank;
    CHECK(mg_bench_end(&b) == 0);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank != 0) return;
    FILE *fp = fopen(path, "r");
    CHECK(fp != NULL);
    if (!fp) return;
    char line[512], seen[8] = "";
    int rows = 0, seed_line = 0;
    while (fgets(line, sizeof line, fp)) {
        seed_line |= strcmp(line, "#@order_seed=11\n") == 0;
        if (line[0] == '#' || !strncmp(line, "variant", 7)) continue;
        if (rows++ % 300 == 0) {
            size_t k = strlen(seen);
            seen[k] = line[0], seen[k + 1] = '\0';
        }
    }
    fclose(fp);
    CHECK(seed_line && rows == 900 && strcmp(seen, "fst") == 0);
    /* over 300 repetitions each side went first between 70 and 130 times (seed 11: fixed, so exact) */
    CHECK(first_of[0] + first_of[1] + first_of[2] == 300);
    for (int k = 0; k < 3; k++) CHECK(first_of[k] > 70 && first_of[k] < 130);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    char path[256];
    snprintf(path, sizeof path, "test_bench_core_np%d.raw", size);

    test_pure_helpers();
    test_name_lists();
    test_bookkeeping_communicator();
    if (rank == 0) test_json();
    test_driver_args();
    test_options();
    test_dissem_barrier();
    test_measure_writes_max_over_ranks(path);
    test_estimate(path);
    test_measure_calls(path);
    test_interleaved(path);
    if (rank == 0) remove(path);

    int total_failures = 0;
    MPI_Allreduce(&failures, &total_failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) printf("test_bench_core (%d processes): %d checks, %d failed\n", size, checks, total_failures);
    MPI_Finalize();
    return total_failures ? 1 : 0;
}
