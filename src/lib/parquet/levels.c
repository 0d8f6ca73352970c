/*
 * The RLE / bit-packing hybrid (parquet-format Encodings.md, "Run Length Encoding / Bit-Packing
 * Hybrid (RLE = 3)") for definition levels, repetition levels and dictionary indices, and the
 * bit-packed PLAIN booleans.
 *
 * Grammar: run := bit-packed-run | rle-run. An rle-run is varint(count << 1) followed by the value
 * in ceil(bit_width / 8) little-endian bytes. A bit-packed-run is varint(groups << 1 | 1) followed
 * by groups * 8 values packed LSB first, bit_width bits each (so each group is bit_width bytes).
 * Runs of 8 or more equal values become rle-runs; values between them are bit-packed. A literal
 * stretch whose length is not a multiple of 8 borrows values from the following run so that no
 * padding appears mid-stream; only the very last group may be padded with zeros (readers stop at
 * the page's value count).
 */
#include "parquet/pq.h"

static uint8_t *put_varint(uint8_t *p, uint64_t v)
{
    while (v >= 0x80) {
        *p++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *p++ = (uint8_t)v;
    return p;
}

/* Room for a header (10) plus a value (4) or a packed group of 8 (32 bytes max). */
#define RUN_SLACK 48

#define DEFINE_RLE(NAME, T)                                                                        \
    static int NAME##_rle_run(struct s3l_buf *out, T value, size_t count, int bw)                  \
    {                                                                                              \
        int rc = s3l_buf_reserve(out, RUN_SLACK);                                                  \
        if (rc)                                                                                    \
            return rc;                                                                             \
        uint8_t *p = put_varint(out->ptr + out->len, (uint64_t)count << 1);                        \
        int nbytes = (bw + 7) / 8;                                                                 \
        for (int i = 0; i < nbytes; i++)                                                           \
            *p++ = (uint8_t)((uint32_t)value >> (8 * i));                                          \
        out->len = (size_t)(p - out->ptr);                                                         \
        return 0;                                                                                  \
    }                                                                                              \
    static int NAME##_packed(struct s3l_buf *out, const T *v, size_t n, int bw)                    \
    {                                                                                              \
        size_t groups = (n + 7) / 8;                                                               \
        int rc = s3l_buf_reserve(out, 10 + groups * (size_t)bw + 8);                               \
        if (rc)                                                                                    \
            return rc;                                                                             \
        uint8_t *p = put_varint(out->ptr + out->len, ((uint64_t)groups << 1) | 1);                 \
        uint64_t acc = 0;                                                                          \
        int bits = 0;                                                                              \
        for (size_t i = 0; i < groups * 8; i++) {                                                  \
            uint64_t x = i < n ? (uint64_t)v[i] : 0;                                               \
            acc |= x << bits;                                                                      \
            bits += bw;                                                                            \
            if (bits >= 32) {                                                                      \
                p[0] = (uint8_t)acc, p[1] = (uint8_t)(acc >> 8);                                   \
                p[2] = (uint8_t)(acc >> 16), p[3] = (uint8_t)(acc >> 24);                          \
                p += 4;                                                                            \
                acc >>= 32;                                                                        \
                bits -= 32;                                                                        \
            }                                                                                      \
        }                                                                                          \
        while (bits > 0) {                                                                         \
            *p++ = (uint8_t)acc;                                                                   \
            acc >>= 8;                                                                             \
            bits -= 8;                                                                             \
        }                                                                                          \
        out->len = (size_t)(p - out->ptr);                                                         \
        return 0;                                                                                  \
    }                                                                                              \
    int s3l__pq_rle_##NAME(const T *v, size_t n, int bw, struct s3l_buf *out)                      \
    {                                                                                              \
        size_t i = 0, lit = 0;                                                                     \
        int rc = 0;                                                                                \
        while (i < n) {                                                                            \
            size_t j = i + 1;                                                                      \
            while (j < n && v[j] == v[i])                                                          \
                j++;                                                                               \
            size_t run = j - i;                                                                    \
            if (run < 8) {                                                                         \
                i = j;                                                                             \
                continue;                                                                          \
            }                                                                                      \
            size_t pending = i - lit;                                                              \
            if (pending % 8) {                                                                     \
                size_t borrow = 8 - pending % 8;                                                   \
                i += borrow;                                                                       \
                run -= borrow;                                                                     \
                pending += borrow;                                                                 \
                if (run < 8) {                                                                     \
                    i = j;                                                                         \
                    continue;                                                                      \
                }                                                                                  \
            }                                                                                      \
            if (pending && (rc = NAME##_packed(out, v + lit, pending, bw)) != 0)                   \
                return rc;                                                                         \
            if ((rc = NAME##_rle_run(out, v[i], run, bw)) != 0)                                    \
                return rc;                                                                         \
            i = j;                                                                                 \
            lit = j;                                                                               \
        }                                                                                          \
        if (lit < n && (rc = NAME##_packed(out, v + lit, n - lit, bw)) != 0)                       \
            return rc;                                                                             \
        if (out->ptr)                                                                              \
            out->ptr[out->len] = 0;                                                                \
        return 0;                                                                                  \
    }

DEFINE_RLE(u8, uint8_t)
DEFINE_RLE(u32, uint32_t)

int s3l__pq_bitpack_bools(const uint8_t *v, size_t n, struct s3l_buf *out)
{
    int rc = s3l_buf_reserve(out, (n + 7) / 8);
    if (rc)
        return rc;
    uint8_t *p = out->ptr + out->len;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        *p++ = (uint8_t)(v[i] | v[i + 1] << 1 | v[i + 2] << 2 | v[i + 3] << 3 | v[i + 4] << 4 |
                         v[i + 5] << 5 | v[i + 6] << 6 | v[i + 7] << 7);
    }
    if (i < n) {
        uint8_t b = 0;
        for (int k = 0; i < n; i++, k++)
            b |= (uint8_t)(v[i] << k);
        *p++ = b;
    }
    out->len = (size_t)(p - out->ptr);
    out->ptr[out->len] = 0;
    return 0;
}
