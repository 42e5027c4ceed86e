/* Failure counting of the C tests (one translation unit each): EXPECT(cond)
 * reports a failed condition with its rank and line and counts it; main sums
 * `failures` over the ranks. */
#ifndef MG_TEST_EXPECT_H
#define MG_TEST_EXPECT_H

#include <stdio.h>

static int failures, rank, size;
#define EXPECT(cond)                                                                           \
    do {                                                                                       \
        if (!(cond)) {                                                                         \
            fprintf(stderr, "rank %d: %s:%d: expected %s\n", rank, __FILE__, __LINE__, #cond); \
            failures++;                                                                        \
        }                                                                                      \
    } while (0)

#endif
