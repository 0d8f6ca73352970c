/*
 * The replaceable allocator. Every allocation of libs3land goes through these functions, so an
 * embedder can route memory to its own allocator and tests can fail the k-th allocation.
 * The library never aborts on out-of-memory: it returns S3L_ENOMEM.
 */
#ifndef S3L_ALLOC_H
#define S3L_ALLOC_H

#include <stddef.h>

/*
 * An allocator: malloc(ctx, size), realloc(ctx, ptr, new_size), free(ctx, ptr), with the C
 * library's semantics (free(NULL) is a no-op; realloc(NULL, n) allocates). ctx is passed back.
 */
struct s3l_allocator {
    void *(*malloc)(void *ctx, size_t size);
    void *(*realloc)(void *ctx, void *ptr, size_t size);
    void (*free)(void *ctx, void *ptr);
    void *ctx;
};

/*
 * Installs a (copied) allocator; NULL restores the C library's. Call it before any other s3l_
 * function and never while objects made with the previous allocator are alive. Not thread-safe.
 * jansson allocates through it too: libs3land sets jansson's allocator (json_set_alloc_funcs)
 * when the program starts, to blocks taken with s3l_malloc and wiped when freed; an embedder that
 * uses jansson itself shares it and frees json_dumps text with jansson's free
 * (json_get_alloc_funcs), never with free().
 */
void s3l_set_allocator(const struct s3l_allocator *allocator);

/* Allocation wrappers. Each returns NULL on failure (s3l_malloc(0) may return NULL too). */
void *s3l_malloc(size_t size);
void *s3l_calloc(size_t count, size_t size); /* NULL also when count * size overflows */
void *s3l_realloc(void *ptr, size_t size);
void s3l_free(void *ptr);
/* A copy of the NUL-terminated string s (NULL gives NULL), or NULL on failure. */
char *s3l_strdup(const char *s);
/* A NUL-terminated copy of the first n bytes of s, or NULL on failure. */
char *s3l_strndup(const char *s, size_t n);

#endif
