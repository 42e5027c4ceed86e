/* Tests of the measurement core: pure helpers with known answers, option
 * parsing, the dissemination barrier's semantics, the max-over-ranks reduction
 * and the raw output as it lands in a file. Runs with 1..4 processes. */
#define _POSIX_C_SOURCE 200809L
#include "mg_bench.h"

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
}

static int parse(mg_bench *b, int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        int r = mg_bench_option(b, argc, argv, &i);
        if (r <= 0) return r;
    }
    return 1;
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
    CHECK(b.est.t1 >= 10 * 0.001); /* at least 10 calibration repetitions of >= 1 ms */
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
    CHECK(strstr(header, "#@t_nrep1=") != NULL);
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
    test_options();
    test_dissem_barrier();
    test_measure_writes_max_over_ranks(path);
    test_estimate(path);
    if (rank == 0) remove(path);

    int total_failures = 0;
    MPI_Allreduce(&failures, &total_failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) printf("test_bench_core (%d processes): %d checks, %d failed\n", size, checks, total_failures);
    MPI_Finalize();
    return total_failures ? 1 : 0;
}
