/*
 * The replaceable allocator (include/s3l/alloc.h). The default routes to the C library.
 */
#include <stdlib.h>
#include <string.h>

#include "s3l/alloc.h"

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
