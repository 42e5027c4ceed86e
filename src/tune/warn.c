/* Warnings: each distinct text once, on rank 0 of MPI_COMM_WORLD (a rank-local
 * problem on any rank). Before MPI_Init no rank is known, so warnings are kept
 * and printed at MPI_Init. The bottom of the library: it calls nothing else. */
#define _POSIX_C_SOURCE 200809L
#include "tune_internal.h"
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    char *text;
    int printed;
    int local; /* a rank-local problem: printed on any rank */
} warning;

/* Taken after any other lock of the library, never before: every layer warns. */
static struct {
    pthread_mutex_t mu;
    int world_rank; /* -1 before MPI_Init: warnings wait for it */
    warning *list;
    int n, cap;
    FILE *out; /* NULL: stderr */
} warn_state = {.mu = PTHREAD_MUTEX_INITIALIZER, .world_rank = -1};

static void print_warning(const warning *w, int rank)
{
    FILE *out = warn_state.out ? warn_state.out : stderr;
    if (w->local)
        fprintf(out, "mpiguide-tune: warning: rank %d: %s\n", rank, w->text);
    else
        fprintf(out, "mpiguide-tune: warning: %s\n", w->text);
    fflush(out);
}

/* mu held. */
static int seen(int local, const char *text)
{
    for (int i = 0; i < warn_state.n; i++)
        if (warn_state.list[i].local == local && strcmp(warn_state.list[i].text, text) == 0) return 1;
    return 0;
}

/* mu held: room for one more entry (the list stays as it is if realloc fails). */
static void make_room(void)
{
    if (warn_state.n < warn_state.cap) return;
    int cap = warn_state.cap ? 2 * warn_state.cap : 8;
    warning *n = realloc(warn_state.list, (size_t)cap * sizeof *n);
    if (n) {
        warn_state.list = n;
        warn_state.cap = cap;
    }
}

static void vwarn(int local, const char *fmt, va_list ap)
{
    char text[2048];
    vsnprintf(text, sizeof text, fmt, ap);
    pthread_mutex_lock(&warn_state.mu);
    if (seen(local, text)) {
        pthread_mutex_unlock(&warn_state.mu);
        return;
    }
    warning w = {strdup(text), 0, local};
    make_room();
    int rank = warn_state.world_rank;
    if (rank >= 0) {
        if (rank == 0 || local) print_warning(&(warning){text, 1, local}, rank);
        w.printed = 1;
    }
    if (w.text && warn_state.n < warn_state.cap) {
        warn_state.list[warn_state.n++] = w;
    } else {
        if (!w.printed) print_warning(&(warning){text, 1, local}, 0); /* out of memory: now, not never */
        free(w.text);
    }
    pthread_mutex_unlock(&warn_state.mu);
}

void mg_tune__warn(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vwarn(0, fmt, ap);
    va_end(ap);
}

void mg_tune__warn_local(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vwarn(1, fmt, ap);
    va_end(ap);
}

void mg_tune__abort_diverging(const char *why)
{
    mg_tune__warn_local("%s; stopping the job, as this process could no longer run the same implementation of "
                        "its calls as its peers",
                        why);
    PMPI_Abort(MPI_COMM_WORLD, 1);
    abort(); /* PMPI_Abort does not return */
}

void mg_tune__warnings_start(int world_rank)
{
    pthread_mutex_lock(&warn_state.mu);
    warn_state.world_rank = world_rank;
    for (int i = 0; i < warn_state.n; i++) {
        warning *w = &warn_state.list[i];
        if (!w->printed && (world_rank == 0 || w->local)) print_warning(w, world_rank);
        w->printed = 1;
    }
    pthread_mutex_unlock(&warn_state.mu);
}

void mg_tune__warnings_free(void)
{
    pthread_mutex_lock(&warn_state.mu);
    for (int i = 0; i < warn_state.n; i++) free(warn_state.list[i].text);
    free(warn_state.list);
    warn_state.list = NULL;
    warn_state.n = warn_state.cap = 0;
    pthread_mutex_unlock(&warn_state.mu);
}

void mg_tune__set_warning_stream(FILE *out)
{
    pthread_mutex_lock(&warn_state.mu);
    warn_state.out = out;
    pthread_mutex_unlock(&warn_state.mu);
}
