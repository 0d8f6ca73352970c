/* The k-th-allocation-fails allocator of fail_alloc.h. */
#include "fail_alloc.h"

#include <stdatomic.h>
#include <stdlib.h>

static atomic_uint_fast64_t n_alloc;
static uint64_t fail_at;
static atomic_bool hit;

static bool fails(void)
{
    uint64_t k = (uint64_t)atomic_fetch_add(&n_alloc, 1) + 1;
    if (fail_at == 0 || k != fail_at)
        return false;
    atomic_store(&hit, true);
    return true;
}

static void *f_malloc(void *ctx, size_t n)
{
    (void)ctx;
    return fails() ? NULL : malloc(n);
}

static void *f_realloc(void *ctx, void *p, size_t n)
{
    (void)ctx;
    return fails() ? NULL : realloc(p, n);
}

static void f_free(void *ctx, void *p)
{
    (void)ctx;
    free(p);
}

const struct s3l_allocator s3l_test_fail_alloc = {f_malloc, f_realloc, f_free, NULL};

void s3l_test_fail_alloc_arm(uint64_t k)
{
    atomic_store(&n_alloc, 0);
    atomic_store(&hit, false);
    fail_at = k;
}

bool s3l_test_fail_alloc_hit(void)
{
    return atomic_load(&hit);
}

uint64_t s3l_test_fail_alloc_count(void)
{
    return (uint64_t)atomic_load(&n_alloc);
}
