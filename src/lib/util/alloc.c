/*
 * The replaceable allocator (include/s3l/alloc.h). The default routes to the C library.
 * jansson allocates through it too (json_set_alloc_funcs, set when the program starts), so the
 * allocation-failure tests reach jansson's allocations. Each jansson block carries its size in
 * front, so that freeing it wipes it: credentials and config secrets pass through buffers of
 * jansson's parser that it frees itself (unit.creds checks that no freed block holds a secret).
 * Text from json_dumps is therefore freed with jansson's free (json_get_alloc_funcs); the library
 * uses s3l__json_dumps (json_text.c), whose text is freed with s3l_free. The growable array's
 * reserve (s3l__array_reserve, util.h), the one grow-by-doubling of the tree, is here too.
 */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "s3l/alloc.h"
#include "util/util.h"

static void *libc_malloc(void *ctx, size_t size)
{
    (void)ctx;
    return malloc(size);
}

static void *libc_realloc(void *ctx, void *ptr, size_t size)
{
    (void)ctx;
    return realloc(ptr, size);
}

static void libc_free(void *ctx, void *ptr)
{
    (void)ctx;
    free(ptr);
}

static struct s3l_allocator current = {libc_malloc, libc_realloc, libc_free, NULL};

void s3l_set_allocator(const struct s3l_allocator *allocator)
{
    if (allocator)
        current = *allocator;
    else
        current = (struct s3l_allocator){libc_malloc, libc_realloc, libc_free, NULL};
}

/* jansson's allocations that failed on this thread (s3l__json_loadb looks at it). */
static _Thread_local unsigned long json_failed;

unsigned long s3l__json_alloc_failures(void)
{
    return json_failed;
}

/* jansson's blocks: 16 bytes in front (the size; alignment kept), wiped when freed. */
static void *json_block(size_t size)
{
    size_t *p = size <= SIZE_MAX - 16 ? s3l_malloc(size + 16) : NULL;
    if (!p) {
        json_failed++;
        return NULL;
    }
    p[0] = size;
    return (char *)p + 16;
}

static void json_block_free(void *ptr)
{
    if (!ptr)
        return;
    size_t *p = (size_t *)(void *)((char *)ptr - 16);
    volatile unsigned char *v = ptr; /* not optimised away as a dead store */
    for (size_t i = 0; i < p[0]; i++)
        v[i] = 0;
    s3l_free(p);
}

/* Before main, so that every jansson value of the process is made and freed the same way. */
__attribute__((constructor)) static void json_blocks(void)
{
    json_set_alloc_funcs(json_block, json_block_free);
}

void *s3l_malloc(size_t size)
{
    return current.malloc(current.ctx, size);
}

void *s3l_calloc(size_t count, size_t size)
{
    size_t total;
    if (__builtin_mul_overflow(count, size, &total))
        return NULL;
    void *p = current.malloc(current.ctx, total ? total : 1);
    if (p)
        memset(p, 0, total);
    return p;
}

void *s3l_realloc(void *ptr, size_t size)
{
    return current.realloc(current.ctx, ptr, size);
}

void s3l_free(void *ptr)
{
    if (ptr)
        current.free(current.ctx, ptr);
}

char *s3l_strndup(const char *s, size_t n)
{
    if (!s)
        return NULL;
    char *p = s3l_malloc(n + 1);
    if (p) {
        memcpy(p, s, n);
        p[n] = 0;
    }
    return p;
}

char *s3l_strdup(const char *s)
{
    return s ? s3l_strndup(s, strlen(s)) : NULL;
}

int s3l__array_reserve_max(void *items, size_t *cap, size_t need, size_t elem_size,
                           size_t min_cap, size_t max_cap)
{
    if (need <= *cap)
        return 0;
    if (need > max_cap)
        return S3L_ETOO_LARGE;
    size_t ncap = *cap ? *cap : (min_cap ? min_cap : 1);
    while (ncap < need)
        ncap = ncap > SIZE_MAX / 2 ? SIZE_MAX : ncap * 2;
    if (ncap > max_cap)
        ncap = max_cap;
    size_t bytes;
    if (!s3l_mul_size(ncap, elem_size, &bytes))
        return S3L_ENOMEM;
    void *old;
    memcpy(&old, items, sizeof(old));
    void *p = s3l_realloc(old, bytes);
    if (!p)
        return S3L_ENOMEM;
    memcpy(items, &p, sizeof(p));
    *cap = ncap;
    return 0;
}

int s3l__array_reserve(void *items, size_t *cap, size_t need, size_t elem_size, size_t min_cap)
{
    return s3l__array_reserve_max(items, cap, need, elem_size, min_cap, SIZE_MAX);
}
