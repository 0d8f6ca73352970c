/*
 * The arena (util.h): a list of blocks; reset keeps them for reuse, free releases them.
 */
#include <openssl/crypto.h>

#include "util/util.h"

struct s3l_arena_block {
    struct s3l_arena_block *next;
    size_t size;
    size_t used;
    _Alignas(8) uint8_t data[];
};

void s3l_arena_init(struct s3l_arena *a, size_t block_size)
{
    a->head = NULL;
    a->block_size = block_size ? block_size : 64 * 1024;
    a->used_total = 0;
}

void *s3l_arena_alloc(struct s3l_arena *a, size_t size)
{
    size = (size + 7) & ~(size_t)7;
    if (size == 0)
        size = 8;
    for (struct s3l_arena_block *b = a->head; b; b = b->next) {
        if (b->size - b->used >= size) {
            void *p = b->data + b->used;
            b->used += size;
            a->used_total += size;
            return p;
        }
    }
    size_t bsize = size > a->block_size ? size : a->block_size;
    struct s3l_arena_block *b = s3l_malloc(sizeof(*b) + bsize);
    if (!b)
        return NULL;
    b->size = bsize;
    b->used = size;
    b->next = a->head;
    a->head = b;
    a->used_total += size;
    return b->data;
}

char *s3l_arena_strndup(struct s3l_arena *a, const char *s, size_t n)
{
    char *p = s3l_arena_alloc(a, n + 1);
    if (p) {
        memcpy(p, s, n);
        p[n] = 0;
    }
    return p;
}

void s3l_arena_reset(struct s3l_arena *a)
{
    for (struct s3l_arena_block *b = a->head; b; b = b->next)
        b->used = 0;
    a->used_total = 0;
}

void s3l_arena_free(struct s3l_arena *a)
{
    struct s3l_arena_block *b = a->head;
    while (b) {
        struct s3l_arena_block *next = b->next;
        s3l_free(b);
        b = next;
    }
    a->head = NULL;
    a->used_total = 0;
}

void s3l_arena_wipe(struct s3l_arena *a)
{
    for (struct s3l_arena_block *b = a->head; b; b = b->next)
        OPENSSL_cleanse(b->data, b->used);
}
