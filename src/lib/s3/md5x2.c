/*
 * MD5 (RFC 1321) of two messages of the same length at once. One MD5 is a single chain of
 * dependent additions and rotations, so a core runs it at the chain's latency (about 0.75 GB/s
 * here, OpenSSL's assembly included) with most of its ALUs idle; two independent chains
 * interleaved in one loop fill them, and hash two parts in little more than the time of one.
 * Streaming uploads use it for pairs of full parts (equal lengths: part_size) when their
 * integrity header is Content-MD5 (upload.c). The rounds, shifts and constants are RFC 1321's
 * section 3.4 (T[i] = floor(2^32 * |sin(i + 1)|)); the step order was generated, not typed.
 */
#include <string.h>

#include "s3/s3_int.h"

/* RFC 1321 section 3.4's F, G, H, I, in forms with one operation fewer on the chain */
#define F(x, y, z) ((z) ^ ((x) & ((y) ^ (z))))
#define G(x, y, z) ((y) ^ ((z) & ((x) ^ (y))))
#define H(x, y, z) ((x) ^ (y) ^ (z))
#define I(x, y, z) ((y) ^ ((x) | ~(z)))
#define ROTL(x, s) (((x) << (s)) | ((x) >> (32 - (s))))
#define STEP(f, a, b, c, d, k, s, t)                                                               \
    do {                                                                                           \
        a##0 += f(b##0, c##0, d##0) + x0[k] + (t);                                                 \
        a##1 += f(b##1, c##1, d##1) + x1[k] + (t);                                                 \
        a##0 = ROTL(a##0, s) + b##0;                                                               \
        a##1 = ROTL(a##1, s) + b##1;                                                               \
    } while (0)

/* The 16 little-endian words of a block (a plain load on little-endian machines). */
static void load(uint32_t x[16], const uint8_t *p)
{
    for (int i = 0; i < 16; i++, p += 4)
        x[i] = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* The four rounds of RFC 1321 section 3.4, 16 steps each, on both messages (STEP above). */
#define ROUND1()                                                                                   \
    STEP(F, a, b, c, d, 0, 7, 0xd76aa478u);                                                        \
    STEP(F, d, a, b, c, 1, 12, 0xe8c7b756u);                                                       \
    STEP(F, c, d, a, b, 2, 17, 0x242070dbu);                                                       \
    STEP(F, b, c, d, a, 3, 22, 0xc1bdceeeu);                                                       \
    STEP(F, a, b, c, d, 4, 7, 0xf57c0fafu);                                                        \
    STEP(F, d, a, b, c, 5, 12, 0x4787c62au);                                                       \
    STEP(F, c, d, a, b, 6, 17, 0xa8304613u);                                                       \
    STEP(F, b, c, d, a, 7, 22, 0xfd469501u);                                                       \
    STEP(F, a, b, c, d, 8, 7, 0x698098d8u);                                                        \
    STEP(F, d, a, b, c, 9, 12, 0x8b44f7afu);                                                       \
    STEP(F, c, d, a, b, 10, 17, 0xffff5bb1u);                                                      \
    STEP(F, b, c, d, a, 11, 22, 0x895cd7beu);                                                      \
    STEP(F, a, b, c, d, 12, 7, 0x6b901122u);                                                       \
    STEP(F, d, a, b, c, 13, 12, 0xfd987193u);                                                      \
    STEP(F, c, d, a, b, 14, 17, 0xa679438eu);                                                      \
    STEP(F, b, c, d, a, 15, 22, 0x49b40821u)
#define ROUND2()                                                                                   \
    STEP(G, a, b, c, d, 1, 5, 0xf61e2562u);                                                        \
    STEP(G, d, a, b, c, 6, 9, 0xc040b340u);                                                        \
    STEP(G, c, d, a, b, 11, 14, 0x265e5a51u);                                                      \
    STEP(G, b, c, d, a, 0, 20, 0xe9b6c7aau);                                                       \
    STEP(G, a, b, c, d, 5, 5, 0xd62f105du);                                                        \
    STEP(G, d, a, b, c, 10, 9, 0x02441453u);                                                       \
    STEP(G, c, d, a, b, 15, 14, 0xd8a1e681u);                                                      \
    STEP(G, b, c, d, a, 4, 20, 0xe7d3fbc8u);                                                       \
    STEP(G, a, b, c, d, 9, 5, 0x21e1cde6u);                                                        \
    STEP(G, d, a, b, c, 14, 9, 0xc33707d6u);                                                       \
    STEP(G, c, d, a, b, 3, 14, 0xf4d50d87u);                                                       \
    STEP(G, b, c, d, a, 8, 20, 0x455a14edu);                                                       \
    STEP(G, a, b, c, d, 13, 5, 0xa9e3e905u);                                                       \
    STEP(G, d, a, b, c, 2, 9, 0xfcefa3f8u);                                                        \
    STEP(G, c, d, a, b, 7, 14, 0x676f02d9u);                                                       \
    STEP(G, b, c, d, a, 12, 20, 0x8d2a4c8au)
#define ROUND3()                                                                                   \
    STEP(H, a, b, c, d, 5, 4, 0xfffa3942u);                                                        \
    STEP(H, d, a, b, c, 8, 11, 0x8771f681u);                                                       \
    STEP(H, c, d, a, b, 11, 16, 0x6d9d6122u);                                                      \
    STEP(H, b, c, d, a, 14, 23, 0xfde5380cu);                                                      \
    STEP(H, a, b, c, d, 1, 4, 0xa4beea44u);                                                        \
    STEP(H, d, a, b, c, 4, 11, 0x4bdecfa9u);                                                       \
    STEP(H, c, d, a, b, 7, 16, 0xf6bb4b60u);                                                       \
    STEP(H, b, c, d, a, 10, 23, 0xbebfbc70u);                                                      \
    STEP(H, a, b, c, d, 13, 4, 0x289b7ec6u);                                                       \
    STEP(H, d, a, b, c, 0, 11, 0xeaa127fau);                                                       \
    STEP(H, c, d, a, b, 3, 16, 0xd4ef3085u);                                                       \
    STEP(H, b, c, d, a, 6, 23, 0x04881d05u);                                                       \
    STEP(H, a, b, c, d, 9, 4, 0xd9d4d039u);                                                        \
    STEP(H, d, a, b, c, 12, 11, 0xe6db99e5u);                                                      \
    STEP(H, c, d, a, b, 15, 16, 0x1fa27cf8u);                                                      \
    STEP(H, b, c, d, a, 2, 23, 0xc4ac5665u)
#define ROUND4()                                                                                   \
    STEP(I, a, b, c, d, 0, 6, 0xf4292244u);                                                        \
    STEP(I, d, a, b, c, 7, 10, 0x432aff97u);                                                       \
    STEP(I, c, d, a, b, 14, 15, 0xab9423a7u);                                                      \
    STEP(I, b, c, d, a, 5, 21, 0xfc93a039u);                                                       \
    STEP(I, a, b, c, d, 12, 6, 0x655b59c3u);                                                       \
    STEP(I, d, a, b, c, 3, 10, 0x8f0ccc92u);                                                       \
    STEP(I, c, d, a, b, 10, 15, 0xffeff47du);                                                      \
    STEP(I, b, c, d, a, 1, 21, 0x85845dd1u);                                                       \
    STEP(I, a, b, c, d, 8, 6, 0x6fa87e4fu);                                                        \
    STEP(I, d, a, b, c, 15, 10, 0xfe2ce6e0u);                                                      \
    STEP(I, c, d, a, b, 6, 15, 0xa3014314u);                                                       \
    STEP(I, b, c, d, a, 13, 21, 0x4e0811a1u);                                                      \
    STEP(I, a, b, c, d, 4, 6, 0xf7537e82u);                                                        \
    STEP(I, d, a, b, c, 11, 10, 0xbd3af235u);                                                      \
    STEP(I, c, d, a, b, 2, 15, 0x2ad7d2bbu);                                                       \
    STEP(I, b, c, d, a, 9, 21, 0xeb86d391u)

static void blocks2(uint32_t s0[4], uint32_t s1[4], const uint8_t *p0, const uint8_t *p1, size_t n)
{
    uint32_t a0 = s0[0], b0 = s0[1], c0 = s0[2], d0 = s0[3];
    uint32_t a1 = s1[0], b1 = s1[1], c1 = s1[2], d1 = s1[3];
    for (; n > 0; n--, p0 += 64, p1 += 64) {
        uint32_t x0[16], x1[16];
        load(x0, p0);
        load(x1, p1);
        uint32_t aa0 = a0, bb0 = b0, cc0 = c0, dd0 = d0;
        uint32_t aa1 = a1, bb1 = b1, cc1 = c1, dd1 = d1;
        ROUND1();
        ROUND2();
        ROUND3();
        ROUND4();
        a0 += aa0, b0 += bb0, c0 += cc0, d0 += dd0;
        a1 += aa1, b1 += bb1, c1 += cc1, d1 += dd1;
    }
    s0[0] = a0, s0[1] = b0, s0[2] = c0, s0[3] = d0;
    s1[0] = a1, s1[1] = b1, s1[2] = c1, s1[3] = d1;
}

/* RFC 1321 sections 3.1-3.2: 0x80, zeros to 56 mod 64, the length in bits (64-bit LE). */
static size_t pad(uint8_t out[128], const uint8_t *tail, size_t r, uint64_t len)
{
    memset(out, 0, 128);
    memcpy(out, tail, r);
    out[r] = 0x80;
    size_t n = r < 56 ? 64 : 128;
    uint64_t bits = len * 8;
    for (int i = 0; i < 8; i++)
        out[n - 8 + i] = (uint8_t)(bits >> (8 * i));
    return n / 64;
}

void s3l__md5x2(const void *m0, const void *m1, size_t len, uint8_t d0[16], uint8_t d1[16])
{
    /* RFC 1321 section 3.3's initial state */
    uint32_t s0[4] = {0x67452301u, 0xefcdab89u, 0x98badcfeu, 0x10325476u};
    uint32_t s1[4] = {0x67452301u, 0xefcdab89u, 0x98badcfeu, 0x10325476u};
    size_t full = len / 64, r = len % 64;
    blocks2(s0, s1, m0, m1, full);
    uint8_t t0[128], t1[128];
    size_t n = pad(t0, (const uint8_t *)m0 + full * 64, r, len);
    pad(t1, (const uint8_t *)m1 + full * 64, r, len);
    blocks2(s0, s1, t0, t1, n);
    for (int i = 0; i < 16; i++) {
        d0[i] = (uint8_t)(s0[i / 4] >> (8 * (i % 4)));
        d1[i] = (uint8_t)(s1[i / 4] >> (8 * (i % 4)));
    }
}
