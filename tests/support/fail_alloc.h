/*
 * An allocator whose k-th allocation fails, for the allocation-failure torture tests (the style
 * of SQLite's and curl's): arm it with k, run the code under test with s3l_set_allocator, then
 * ask whether the armed allocation was reached. malloc and realloc both count; free never fails.
 * The count is atomic, so code that allocates from several threads (the lanes) is counted
 * without a race.
 */
#ifndef S3L_TEST_FAIL_ALLOC_H
#define S3L_TEST_FAIL_ALLOC_H

#include <stdbool.h>
#include <stdint.h>

#include "s3l/alloc.h"

/* The allocator; pass &s3l_test_fail_alloc to s3l_set_allocator. */
extern const struct s3l_allocator s3l_test_fail_alloc;

/* Resets the count and makes allocation number k (1-based) fail; k = 0 fails none. */
void s3l_test_fail_alloc_arm(uint64_t k);

/* Whether the armed allocation was reached (and failed) since the last arm. */
bool s3l_test_fail_alloc_hit(void);

/* Allocations made since the last arm, the failed one included. */
uint64_t s3l_test_fail_alloc_count(void);

#endif
