/* The MPI library bugs the tests know of: one list (known_bugs.c), each bug
 * with the versions that have it and a reproducer that checks the library
 * against MPI's definition. A test that meets one asks whether the running
 * library is listed with it (mg_known_bug_listed) and then reports it as
 * "known <family> bug <name>: ..." instead of failing; test_known_bugs runs
 * every reproducer and fails where a listed library gets it right (the entry
 * must go or name fewer versions) or an unlisted one shows it (it must be
 * listed), so the list stays true. docs/dt-engine.md and docs/tuning.md
 * ("MPI library bugs") say what each one is. Plain MPI and C: programs that
 * do not link mpiguide's libraries compile it too. */
#ifndef MG_TEST_KNOWN_BUGS_H
#define MG_TEST_KNOWN_BUGS_H

#include <mpi.h>
#include <stddef.h>

typedef struct {
    const char *name;    /* "impi-hvector-byte-stride" */
    const char *family;  /* "Intel MPI", for messages */
    const char *library; /* the versions with the bug: fnmatch(3) patterns of MPI_Get_library_version's
                          * text, '|' between them ("Intel(R) MPI Library 2021.18*") */
    const char *what;    /* what the library does wrong */
    int procs;           /* processes the reproducer needs (1: it is local to each process) */
    int crashes;         /* it ends the process where the library has the bug: run in a child process */
    int hangs;           /* it does not return where the library has the bug: run by known_bug_hang.cmake,
                          * which stops it (test_known_bugs --hang NAME) */
    /* Collective over comm (at least `procs` processes): 1 if this library
     * shows the bug (detail says what it did), 0 if it gives MPI's result. */
    int (*reproduce)(MPI_Comm comm, char *detail, size_t len);
    /* fnmatch(3) patterns of the form classes (mg_dt_form_class_name) the bug
     * makes the library pack wrongly, NULL-terminated; NULL: none. */
    const char *const *refuses;
} mg_known_bug;

extern const mg_known_bug mg_known_bugs[];
extern const int mg_nknown_bugs;

/* The entry of that name (NULL: none; a test naming an unknown bug is wrong). */
const mg_known_bug *mg_known_bug_named(const char *name);
/* 1 if the running library is listed with the bug. */
int mg_known_bug_listed(const char *name);
/* "known <family> bug <name>: <what> (<context>)" on stdout, once per name
 * and process. */
void mg_known_bug_note(const char *name, const char *context);
/* Runs b's reproducer on comm (collective; a crashing one in a child process
 * of rank 0): 1 if the bug shows on any rank, 0 if not, -1 if it cannot run
 * here (too few processes). The detail of the lowest rank that saw it. */
int mg_known_bug_reproduce(const mg_known_bug *b, MPI_Comm comm, char *detail, size_t len);
/* A form class name (mg_dt_form_class_name) is refused by a bug listed for
 * the running library: that bug, else NULL. */
const mg_known_bug *mg_known_bug_refusing(const char *class_name);

#endif
