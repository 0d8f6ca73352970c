/*
 * The capped owning buffer and the hex helper (util.h).
 */
#include <stdarg.h>
#include <stdio.h>

#include "util/util.h"

void s3l_buf_init(struct s3l_buf *b, size_t max)
{
    b->ptr = NULL;
    b->len = 0;
    b->cap = 0;
    b->max = max;
}

void s3l_buf_free(struct s3l_buf *b)
{
    s3l_free(b->ptr);
    b->ptr = NULL;
    b->len = 0;
    b->cap = 0;
}

void s3l_buf_reset(struct s3l_buf *b)
{
    b->len = 0;
    if (b->ptr)
        b->ptr[0] = 0;
}

int s3l_buf_reserve(struct s3l_buf *b, size_t extra)
{
    if (extra > b->max || b->len > b->max - extra)
        return S3L_ETOO_LARGE;
    size_t need = b->len + extra + 1;
    if (need <= b->cap)
        return 0;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < need)
        cap = cap > SIZE_MAX / 2 ? need : cap * 2;
    uint8_t *p = s3l_realloc(b->ptr, cap);
    if (!p)
        return S3L_ENOMEM;
    b->ptr = p;
    b->cap = cap;
    return 0;
}

int s3l_buf_append(struct s3l_buf *b, const void *p, size_t n)
{
    int rc = s3l_buf_reserve(b, n);
    if (rc)
        return rc;
    if (n)
        memcpy(b->ptr + b->len, p, n);
    b->len += n;
    b->ptr[b->len] = 0;
    return 0;
}

int s3l_buf_append_byte(struct s3l_buf *b, uint8_t c)
{
    return s3l_buf_append(b, &c, 1);
}

int s3l_buf_append_str(struct s3l_buf *b, const char *s)
{
    return s3l_buf_append(b, s, strlen(s));
}

int s3l_buf_printf(struct s3l_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        return S3L_EINVALID_ARGUMENT;
    int rc = s3l_buf_reserve(b, (size_t)n);
    if (rc)
        return rc;
    va_start(ap, fmt);
    vsnprintf((char *)b->ptr + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
    return 0;
}

int s3l_buf_detach(struct s3l_buf *b, uint8_t **out, size_t *out_len)
{
    if (!b->ptr) {
        int rc = s3l_buf_reserve(b, 0);
        if (rc)
            return rc;
        b->ptr[0] = 0;
    }
    *out = b->ptr;
    *out_len = b->len;
    b->ptr = NULL;
    b->len = 0;
    b->cap = 0;
    return 0;
}

void s3l_buf_consume(struct s3l_buf *b, size_t n)
{
    if (n >= b->len) {
        s3l_buf_reset(b);
        return;
    }
    memmove(b->ptr, b->ptr + n, b->len - n);
    b->len -= n;
    b->ptr[b->len] = 0;
}

void s3l_hex_encode(const uint8_t *in, size_t n, char *out)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = digits[in[i] >> 4];
        out[2 * i + 1] = digits[in[i] & 15];
    }
    out[2 * n] = 0;
}
