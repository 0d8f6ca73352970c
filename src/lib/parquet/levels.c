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

__extension__ typedef unsigned __int128 u128;

/* Room for a header (10) plus a value (4) or a packed group of 8 (32 bytes max). */
#define RUN_SLACK 48

/*
 * Whole groups of 8 values of bit width bw <= 16: a group is 8 * bw <= 128 bits, gathered in one
 * register (two 64-bit halves of four values each) and stored as its bw low bytes, little-endian
 * and LSB first as the format wants. Instantiated per width (constant shifts, no loop-carried
 * bit count). Writes up to 16 bytes at p for the last group: the caller reserves that slack.
 */
#define DEFINE_GROUPS(NAME, T)                                                                     \
    static inline __attribute__((always_inline))                                                   \
    uint8_t *NAME##_groups_w(const T *v, size_t groups, const int bw, uint8_t *p)                  \
    {                                                                                              \
        for (size_t g = 0; g < groups; g++, v += 8, p += bw) {                                     \
            uint64_t a = (uint64_t)v[0] | (uint64_t)v[1] << bw | (uint64_t)v[2] << (2 * bw) |      \
                         (uint64_t)v[3] << (3 * bw);                                               \
            uint64_t b = (uint64_t)v[4] | (uint64_t)v[5] << bw | (uint64_t)v[6] << (2 * bw) |      \
                         (uint64_t)v[7] << (3 * bw);                                               \
            u128 x = (u128)a | (u128)b << (4 * bw);                                                \
            memcpy(p, &x, 16);                                                                     \
        }                                                                                          \
        return p;                                                                                  \
    }                                                                                              \
    static uint8_t *NAME##_groups(const T *v, size_t groups, int bw, uint8_t *p)                   \
    {                                                                                              \
        switch (bw) {                                                                              \
        case 1:                                                                                    \
            return NAME##_groups_w(v, groups, 1, p);                                               \
        case 2:                                                                                    \
            return NAME##_groups_w(v, groups, 2, p);                                               \
        case 3:                                                                                    \
            return NAME##_groups_w(v, groups, 3, p);                                               \
        case 4:                                                                                    \
            return NAME##_groups_w(v, groups, 4, p);                                               \
        case 5:                                                                                    \
            return NAME##_groups_w(v, groups, 5, p);                                               \
        case 6:                                                                                    \
            return NAME##_groups_w(v, groups, 6, p);                                               \
        case 7:                                                                                    \
            return NAME##_groups_w(v, groups, 7, p);                                               \
        case 8:                                                                                    \
            return NAME##_groups_w(v, groups, 8, p);                                               \
        case 9:                                                                                    \
            return NAME##_groups_w(v, groups, 9, p);                                               \
        case 10:                                                                                   \
            return NAME##_groups_w(v, groups, 10, p);                                              \
        case 11:                                                                                   \
            return NAME##_groups_w(v, groups, 11, p);                                              \
        case 12:                                                                                   \
            return NAME##_groups_w(v, groups, 12, p);                                              \
        case 13:                                                                                   \
            return NAME##_groups_w(v, groups, 13, p);                                              \
        case 14:                                                                                   \
            return NAME##_groups_w(v, groups, 14, p);                                              \
        case 15:                                                                                   \
            return NAME##_groups_w(v, groups, 15, p);                                              \
        default:                                                                                   \
            return NAME##_groups_w(v, groups, 16, p);                                              \
        }                                                                                          \
    }

DEFINE_GROUPS(u8, uint8_t)
DEFINE_GROUPS(u32, uint32_t)

/* The end of the run of values equal to v[i] (levels: usually one run of the whole page, so
 * eight bytes are compared at a time). */
static inline size_t u8_run_end(const uint8_t *v, size_t i, size_t n)
{
    uint64_t pat = v[i] * 0x0101010101010101ull;
    size_t j = i + 1;
    for (; j + 8 <= n; j += 8) {
        uint64_t x;
        memcpy(&x, v + j, 8);
        if ((x ^= pat) != 0)
            return j + (size_t)__builtin_ctzll(x) / 8; /* little-endian: lowest byte first */
    }
    while (j < n && v[j] == v[i])
        j++;
    return j;
}

static inline size_t u32_run_end(const uint32_t *v, size_t i, size_t n)
{
    size_t j = i + 1;
    while (j < n && v[j] == v[i])
        j++;
    return j;
}

/* True when no two neighbours of v[0..8] are equal. */
#define no_pair_8(p)                                                                               \
    (((p)[0] == (p)[1]) + ((p)[1] == (p)[2]) + ((p)[2] == (p)[3]) + ((p)[3] == (p)[4]) +           \
         ((p)[4] == (p)[5]) + ((p)[5] == (p)[6]) + ((p)[6] == (p)[7]) + ((p)[7] == (p)[8]) ==      \
     0)

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
        int rc = s3l_buf_reserve(out, 10 + groups * (size_t)bw + 16);                              \
        if (rc)                                                                                    \
            return rc;                                                                             \
        uint8_t *p = put_varint(out->ptr + out->len, ((uint64_t)groups << 1) | 1);                 \
        size_t i = 0;                                                                              \
        if (bw >= 1 && bw <= 16) {                                                                 \
            p = NAME##_groups(v, n / 8, bw, p);                                                    \
            i = n / 8 * 8;                                                                         \
        }                                                                                          \
        uint64_t acc = 0;                                                                          \
        int bits = 0;                                                                              \
        for (; i < groups * 8; i++) {                                                              \
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
            /* i starts a run. With no two neighbours equal in v[i..i+8], the runs starting at     \
             * i..i+7 are single values (literals): skip them 8 at a time, one branch. */          \
            while (i + 9 <= n && no_pair_8(v + i))                                                 \
                i += 8;                                                                            \
            if (i >= n)                                                                            \
                break;                                                                             \
            size_t j = NAME##_run_end(v, i, n);                                                    \
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
