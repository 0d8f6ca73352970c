/*
 * util: the internal toolbox every module uses: a capped owning buffer, a non-owning slice,
 * an arena that is reset per row group or per request, and small helpers (hex, overflow checks).
 * docs/internals/util.md has the invariants.
 */
#ifndef S3L_UTIL_H
#define S3L_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "s3l/alloc.h"
#include "s3l/error.h"

#define S3L_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))
#define S3L_MIN(a, b) ((a) < (b) ? (a) : (b))
#define S3L_MAX(a, b) ((a) > (b) ? (a) : (b))

/* A non-owning view of bytes; never assumed NUL-terminated. */
struct s3l_slice {
    const uint8_t *ptr;
    size_t len;
};

static inline struct s3l_slice s3l_slice_make(const void *ptr, size_t len)
{
    struct s3l_slice s = {(const uint8_t *)ptr, len};
    return s;
}

static inline struct s3l_slice s3l_slice_cstr(const char *s)
{
    return s3l_slice_make(s, s ? strlen(s) : 0);
}

static inline bool s3l_slice_eq(struct s3l_slice a, struct s3l_slice b)
{
    return a.len == b.len && (a.len == 0 || memcmp(a.ptr, b.ptr, a.len) == 0);
}

static inline bool s3l_slice_eq_cstr(struct s3l_slice a, const char *s)
{
    return s3l_slice_eq(a, s3l_slice_cstr(s));
}

/*
 * An owning, growable byte buffer with a hard cap set at init (curl's dynbuf). Appending past
 * the cap fails with S3L_ETOO_LARGE and leaves the buffer unchanged. The bytes are always
 * followed by a NUL that is not counted in len, so ptr can be used as a C string.
 */
struct s3l_buf {
    uint8_t *ptr;
    size_t len;
    size_t cap; /* allocated bytes, including room for the NUL */
    size_t max; /* hard cap on len */
};

void s3l_buf_init(struct s3l_buf *b, size_t max);
void s3l_buf_free(struct s3l_buf *b);                  /* frees memory; b can be reused after init */
void s3l_buf_reset(struct s3l_buf *b);                 /* len = 0, memory kept */
int s3l_buf_reserve(struct s3l_buf *b, size_t extra); /* room for extra more bytes */
int s3l_buf_append(struct s3l_buf *b, const void *p, size_t n);
int s3l_buf_append_byte(struct s3l_buf *b, uint8_t c);
int s3l_buf_append_str(struct s3l_buf *b, const char *s);
int s3l_buf_printf(struct s3l_buf *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Hands the bytes to the caller (free with s3l_free) and leaves b empty. Never NULL on success. */
int s3l_buf_detach(struct s3l_buf *b, uint8_t **out, size_t *out_len);
/* Drops the first n bytes (n <= len), moving the rest to the front. */
void s3l_buf_consume(struct s3l_buf *b, size_t n);
static inline void s3l_buf_truncate(struct s3l_buf *b, size_t len)
{
    if (len < b->len) {
        b->len = len;
        if (b->ptr)
            b->ptr[len] = 0;
    }
}
static inline struct s3l_slice s3l_buf_slice(const struct s3l_buf *b)
{
    return s3l_slice_make(b->ptr, b->len);
}

/*
 * An arena: many small allocations freed together by reset (per row group, per request).
 * Blocks are kept across resets up to the high-water mark. Allocations are 8-byte aligned.
 */
struct s3l_arena_block;
struct s3l_arena {
    struct s3l_arena_block *head;
    size_t block_size;
    size_t used_total; /* bytes handed out since the last reset */
};

void s3l_arena_init(struct s3l_arena *a, size_t block_size);
void *s3l_arena_alloc(struct s3l_arena *a, size_t size);           /* NULL on failure */
char *s3l_arena_strndup(struct s3l_arena *a, const char *s, size_t n); /* NUL-terminated */
void s3l_arena_reset(struct s3l_arena *a);
void s3l_arena_free(struct s3l_arena *a);

/* Lowercase hex of n bytes into out (2n + 1 bytes, NUL-terminated). */
void s3l_hex_encode(const uint8_t *in, size_t n, char *out);

/* a * b into *out, false on overflow. */
/* Copies n bytes from s to d (not overlapping); short ones (most string values) without a call
 * to memcpy: two overlapping moves that stay within [0, n) of both buffers. */
static inline void s3l_copy_short(void *dst, const void *src, size_t n)
{
    uint8_t *d = dst;
    const uint8_t *s = src;
    if (n >= 4 && n <= 16) {
        if (n >= 8) {
            uint64_t a, b;
            memcpy(&a, s, 8);
            memcpy(&b, s + n - 8, 8);
            memcpy(d, &a, 8);
            memcpy(d + n - 8, &b, 8);
        } else {
            uint32_t a, b;
            memcpy(&a, s, 4);
            memcpy(&b, s + n - 4, 4);
            memcpy(d, &a, 4);
            memcpy(d + n - 4, &b, 4);
        }
    } else if (n > 0 && n < 4) {
        d[0] = s[0];
        d[n / 2] = s[n / 2];
        d[n - 1] = s[n - 1];
    } else if (n) {
        memcpy(d, s, n);
    }
}

static inline bool s3l_mul_size(size_t a, size_t b, size_t *out)
{
    return !__builtin_mul_overflow(a, b, out);
}

/* ---- UTF-8 (utf8.c) ------------------------------------------------------------------------ */

/*
 * Length of the UTF-8 sequence at p (p < end) per RFC 3629 section 4 (the table of well-formed
 * byte sequences: no overlongs, no surrogates, nothing past U+10FFFF), or 0 when it is not well
 * formed or runs past end. Inline: the JSON scanner calls it for every non-ASCII byte.
 */
static inline size_t s3l_utf8_seq(const uint8_t *p, const uint8_t *end)
{
    uint8_t b0 = p[0];
    size_t avail = (size_t)(end - p);
    if (b0 < 0x80)
        return 1;
    if (b0 >= 0xC2 && b0 <= 0xDF)
        return avail >= 2 && (p[1] & 0xC0) == 0x80 ? 2 : 0;
    if (b0 >= 0xE0 && b0 <= 0xEF) {
        if (avail < 3 || (p[2] & 0xC0) != 0x80)
            return 0;
        uint8_t lo = b0 == 0xE0 ? 0xA0 : 0x80, hi = b0 == 0xED ? 0x9F : 0xBF;
        return p[1] >= lo && p[1] <= hi ? 3 : 0;
    }
    if (b0 >= 0xF0 && b0 <= 0xF4) {
        if (avail < 4 || (p[2] & 0xC0) != 0x80 || (p[3] & 0xC0) != 0x80)
            return 0;
        uint8_t lo = b0 == 0xF0 ? 0x90 : 0x80, hi = b0 == 0xF4 ? 0x8F : 0xBF;
        return p[1] >= lo && p[1] <= hi ? 4 : 0;
    }
    return 0;
}

/*
 * Whether p[0..n) is valid UTF-8 (s3l_utf8_seq's rules; ASCII runs are skipped eight bytes at a
 * time). On false, *bad (when not NULL) is the offset of the first byte of the first bad
 * sequence. p may be NULL when n is 0. Never fails otherwise; allocates nothing.
 */
bool s3l__utf8_valid(const uint8_t *p, size_t n, size_t *bad);

/* ---- JSON text (json_text.c) --------------------------------------------------------------- */

struct json_t;       /* jansson's value */
struct json_error_t; /* and its parse error */
/*
 * json_dumps(json, flags) (jansson's flags), made sure to be whole: a NUL-terminated text to
 * free with s3l_free, or NULL when json is NULL, when jansson refuses it (a bare scalar without
 * JSON_ENCODE_ANY, a cycle) or when an allocation failed (jansson's own json_dumps can then return
 * a text with a key missing). Use it instead of json_dumps everywhere in src/lib.
 */
char *s3l__json_dumps(const struct json_t *json, size_t flags);
/*
 * json_loadb(text, len, flags, je) that tells out of memory apart: jansson 2.14 reports a failed
 * allocation while parsing as a syntax error ("invalid token") or not at all (a value may be
 * missing from what it returns). NULL with *nomem true when any of jansson's allocations failed
 * during the parse (nothing is returned then), NULL with *nomem false for text that is not JSON
 * (je says why, as json_loadb's). je may be NULL.
 */
struct json_t *s3l__json_loadb(const char *text, size_t len, size_t flags,
                               struct json_error_t *je, bool *nomem);
/* How many of jansson's allocations failed on this thread so far (alloc.c). */
unsigned long s3l__json_alloc_failures(void);

#endif
