/*
 * Unit tests of the RLE / bit-packing hybrid and boolean bit-packing against bytes derived by hand
 * from parquet-format Encodings.md ("Run Length Encoding / Bit-Packing Hybrid"), and of the
 * statistics helpers (float16 conversion against IEEE 754 binary16 bit patterns, truncation).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "parquet/pq.h"

static void check_u8(const uint8_t *v, size_t n, int bw, const uint8_t *want, size_t wn)
{
    struct s3l_buf b;
    s3l_buf_init(&b, 1 << 20);
    assert_int_equal(s3l__pq_rle_u8(v, n, bw, &b), 0);
    assert_int_equal(b.len, wn);
    assert_memory_equal(b.ptr, want, wn);
    s3l_buf_free(&b);
}

static void spec_bit_packed_example(void **state)
{
    (void)state;
    /* Encodings.md: values 0..7 at bit width 3 bit-pack to 10001000 11000110 11111010
     * (0x88 0xC6 0xFA); one group of 8: header varint(1 << 1 | 1) = 0x03. */
    const uint8_t v[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    const uint8_t want[] = {0x03, 0x88, 0xC6, 0xFA};
    check_u8(v, 8, 3, want, sizeof(want));
}

static void rle_runs(void **state)
{
    (void)state;
    /* 100 ones at width 1: header varint(100 << 1 = 200) = 0xC8 0x01, value in 1 byte. */
    uint8_t v[300];
    memset(v, 1, 100);
    const uint8_t want1[] = {0xC8, 0x01, 0x01};
    check_u8(v, 100, 1, want1, sizeof(want1));
    /* Ten 2s then one 3 at width 2: rle-run (10 << 1 = 0x14, value 0x02), then the 3 alone as
     * a bit-packed group padded with zeros: header 0x03, then 8 values x 2 bits = 2 bytes:
     * 0x03 (the 3 in bits 0-1), 0x00. */
    memset(v, 2, 10);
    v[10] = 3;
    const uint8_t want2[] = {0x14, 0x02, 0x03, 0x03, 0x00};
    check_u8(v, 11, 2, want2, sizeof(want2));
}

static void literal_borrows_from_run(void **state)
{
    (void)state;
    /* 0,1,0 then nine 1s (width 1): the 3 literals borrow 5 ones to fill a group of 8, leaving
     * a run of 4 (< 8), so all 12 values are bit-packed in 2 groups: header varint(2<<1|1)=0x05;
     * group 1 = 0,1,0,1,1,1,1,1 -> LSB first 0b11111010 = 0xFA; group 2 = 1,1,1,1 + 4 zero pads
     * = 0x0F. */
    const uint8_t v[12] = {0, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1};
    const uint8_t want[] = {0x05, 0xFA, 0x0F};
    check_u8(v, 12, 1, want, sizeof(want));
    /* 0,1,0 then twenty 1s: borrow 5 -> group 0xFA bit-packed (0x03 0xFA), then an rle-run of
     * the remaining 15 ones: varint(15 << 1) = 0x1E, value 0x01. */
    uint8_t w[23] = {0, 1, 0};
    memset(w + 3, 1, 20);
    const uint8_t want2[] = {0x03, 0xFA, 0x1E, 0x01};
    check_u8(w, 23, 1, want2, sizeof(want2));
}

static void wide_indices(void **state)
{
    (void)state;
    /* Width 10: values 1..8 bit-packed LSB first; 80 bits = 10 bytes. Hand-packed:
     * bits 0-9 = 1, 10-19 = 2, 20-29 = 3, 30-39 = 4, ... byte0 = 0x01, byte1 = 2<<2 = 0x08,
     * byte2 = 3<<4 = 0x30, byte3 = 4<<6 = 0x00 (low bits of 4<<6 = 0x100 -> 0x00), byte4 = 0x01,
     * byte5 = 5 = 0x05, byte6 = 6<<2 = 0x18, byte7 = 7<<4 = 0x70, byte8 = 8<<6 = 0x00,
     * byte9 = 8>>2 = 0x02. Header 0x03. */
    const uint32_t v[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    const uint8_t want[] = {0x03, 0x01, 0x08, 0x30, 0x00, 0x01, 0x05, 0x18, 0x70, 0x00, 0x02};
    struct s3l_buf b;
    s3l_buf_init(&b, 1 << 20);
    assert_int_equal(s3l__pq_rle_u32(v, 8, 10, &b), 0);
    assert_int_equal(b.len, sizeof(want));
    assert_memory_equal(b.ptr, want, sizeof(want));
    /* An rle-run of width 17 writes its value in 3 bytes: 70000 = 0x011170. */
    uint32_t r[9];
    for (int i = 0; i < 9; i++)
        r[i] = 70000;
    s3l_buf_reset(&b);
    assert_int_equal(s3l__pq_rle_u32(r, 9, 17, &b), 0);
    const uint8_t want2[] = {0x12, 0x70, 0x11, 0x01};
    assert_int_equal(b.len, sizeof(want2));
    assert_memory_equal(b.ptr, want2, sizeof(want2));
    s3l_buf_free(&b);
}

/*
 * Bit-packing at every width, against a packer written from the definition in Encodings.md
 * ("the values are packed from the least significant bit of each byte to the most significant
 * bit": bit b of value i is bit i * bw + b of the run, byte (i * bw + b) / 8). No two neighbours
 * are equal, so the whole input is one bit-packed run: varint(groups << 1 | 1), then groups * bw
 * bytes, the last group padded with zeros. Lengths cover whole groups and a partial last one.
 */
static void every_width(void **state)
{
    (void)state;
    enum { MAXN = 203 };
    static const size_t lens[] = {1, 7, 8, 9, 16, 64, 67, 200, MAXN};
    uint32_t v[MAXN];
    uint8_t v8[MAXN];
    uint8_t want[10 + (MAXN + 7) / 8 * 32];
    struct s3l_buf b;
    s3l_buf_init(&b, 1 << 20);
    for (int bw = 1; bw <= 32; bw++) {
        uint64_t mask = bw == 32 ? 0xFFFFFFFFull : (1ull << bw) - 1;
        uint64_t x = 0x9E3779B97F4A7C15ull;
        for (size_t i = 0; i < MAXN; i++) {
            x = x * 6364136223846793005ull + 1442695040888963407ull;
            v[i] = (uint32_t)((x >> 17) & mask);
            if (i && v[i] == v[i - 1])
                v[i] ^= 1;
            v8[i] = (uint8_t)v[i];
        }
        for (size_t li = 0; li < sizeof(lens) / sizeof(lens[0]); li++) {
            size_t n = lens[li], groups = (n + 7) / 8;
            size_t hdr = 0;
            for (uint64_t h = groups << 1 | 1;; h >>= 7) {
                want[hdr++] = (uint8_t)(h < 0x80 ? h : (h & 0x7F) | 0x80);
                if (h < 0x80)
                    break;
            }
            memset(want + hdr, 0, groups * (size_t)bw);
            for (size_t i = 0; i < n; i++)
                for (int bit = 0; bit < bw; bit++)
                    if (v[i] >> bit & 1) {
                        size_t at = i * (size_t)bw + (size_t)bit;
                        want[hdr + at / 8] |= (uint8_t)(1u << (at % 8));
                    }
            size_t wn = hdr + groups * (size_t)bw;
            s3l_buf_reset(&b);
            assert_int_equal(s3l__pq_rle_u32(v, n, bw, &b), 0);
            assert_int_equal(b.len, wn);
            assert_memory_equal(b.ptr, want, wn);
            if (bw <= 8)
                check_u8(v8, n, bw, want, wn);
        }
    }
    s3l_buf_free(&b);
}

/* Runs of every length from 8 to 40 (definition levels: long runs of one value), ended by a
 * different value: rle-run varint(L << 1), value byte 0x01; then the lone 0 as one bit-packed
 * group, 0x03 0x00 (Encodings.md grammar). */
static void run_lengths(void **state)
{
    (void)state;
    uint8_t v[41];
    for (size_t len = 8; len <= 40; len++) {
        memset(v, 1, len);
        v[len] = 0;
        const uint8_t want[] = {(uint8_t)(len << 1), 0x01, 0x03, 0x00};
        check_u8(v, len + 1, 1, want, sizeof(want));
    }
}

static void booleans(void **state)
{
    (void)state;
    /* PLAIN booleans: 1 bit each, LSB first (Encodings.md PLAIN, BOOLEAN). */
    const uint8_t v[10] = {1, 0, 1, 1, 0, 0, 0, 1, 1, 1};
    struct s3l_buf b;
    s3l_buf_init(&b, 64);
    assert_int_equal(s3l__pq_bitpack_bools(v, 10, &b), 0);
    const uint8_t want[] = {0x8D, 0x03}; /* 0b10001101, 0b00000011 */
    assert_int_equal(b.len, 2);
    assert_memory_equal(b.ptr, want, 2);
    s3l_buf_free(&b);
}

static void half_floats(void **state)
{
    (void)state;
    /* IEEE 754 binary16 patterns: 1.0 = 0x3C00, -2.0 = 0xC000, 65504 = 0x7BFF (max),
     * 2^-24 = 0x0001 (smallest subnormal), 0.1 -> 0x2E66 (nearest), inf 0x7C00, -0.0 0x8000;
     * 1 + 2^-11 is a tie between 0x3C00 and 0x3C01: round to even gives 0x3C00. */
    assert_int_equal(s3l__pq_half_from_double(1.0), 0x3C00);
    assert_int_equal(s3l__pq_half_from_double(-2.0), 0xC000);
    assert_int_equal(s3l__pq_half_from_double(65504.0), 0x7BFF);
    assert_int_equal(s3l__pq_half_from_double(ldexp(1, -24)), 0x0001);
    assert_int_equal(s3l__pq_half_from_double(0.1), 0x2E66);
    assert_int_equal(s3l__pq_half_from_double(INFINITY), 0x7C00);
    assert_int_equal(s3l__pq_half_from_double(-0.0), 0x8000);
    assert_int_equal(s3l__pq_half_from_double(1.0 + ldexp(1, -11)), 0x3C00);
    assert_int_equal(s3l__pq_half_from_double(1.0 + 3 * ldexp(1, -11)), 0x3C02);
    assert_true(isnan(s3l__pq_half_to_double(s3l__pq_half_from_double(NAN))));
    assert_true(s3l__pq_half_to_double(0x3555) > 0.333 && s3l__pq_half_to_double(0x3555) < 0.334);
}

/* Truncated BYTE_ARRAY bounds: min is a prefix, max a prefix rounded up past every value. */
static void truncated_bounds(void **state)
{
    (void)state;
    struct pq_node node;
    memset(&node, 0, sizeof(node));
    struct pq_col col;
    memset(&col, 0, sizeof(col));
    col.node = &node;
    col.phys = PQ_BYTE_ARRAY;
    col.order = PQ_ORD_BYTES;
    struct s3l_arena a;
    s3l_arena_init(&a, 4096);
    struct pq_stats st;
    s3l__pq_stats_init(&st);
    struct pq_stats_out out;
    const struct {
        enum s3l_type_id id;
        const char *min, *max; /* values */
        const char *want_min, *want_max;
        bool max_exact;
    } cases[] = {
        /* binary: "abcdef" / "abcxyz" at 4 bytes: min "abcd", max "abcx" + 1 = "abcy" */
        {S3L_TYPE_BINARY, "abcdef", "abcxyz", "abcd", "abcy", false},
        /* binary max ab\xff\xff..: trailing 0xFF bytes cannot be incremented: "ac" */
        {S3L_TYPE_BINARY, "a", "ab\xff\xff\xff\xff", "a", "ac", false},
        /* all 0xFF: no shorter bound exists, the max stays whole and exact */
        {S3L_TYPE_BINARY, "a", "\xff\xff\xff\xff\xff", "a", "\xff\xff\xff\xff\xff", true},
        /* utf8: "ab\xc3\xa9cd" (ab + U+00E9 + cd) cut at 4 bytes keeps whole characters:
         * min "ab\xc3\xa9", max: U+00E9 + 1 = U+00EA = c3 aa -> "ab\xc3\xaa" */
        {S3L_TYPE_UTF8, "ab\xc3\xa9" "cd", "ab\xc3\xa9" "cd", "ab\xc3\xa9", "ab\xc3\xaa", false},
        /* utf8: min "aa" + U+2713 (e2 9c 93) would be cut inside the character at 4 bytes, so
         * it keeps "aa"; max "a" + U+2713 + "z" cut at 4 bytes ends after the character, which
         * is incremented to U+2714 (e2 9c 94) */
        {S3L_TYPE_UTF8, "aa\xe2\x9c\x93", "a\xe2\x9c\x93z", "aa", "a\xe2\x9c\x94", false},
        /* utf8: U+10FFFF cannot be incremented; the previous character is: "a" -> "b" */
        {S3L_TYPE_UTF8, "a", "a\xf4\x8f\xbf\xbfzz", "a", "b", false},
        /* utf8: "a" + U+D7FF (ed 9f bf) + "zz" cut at 4 ends with U+D7FF, whose successor skips
         * the surrogates: U+E000 (ee 80 80) */
        {S3L_TYPE_UTF8, "a", "a\xed\x9f\xbfzz", "a", "a\xee\x80\x80", false},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        node.type.id = cases[i].id;
        s3l__pq_stats_reset(&st);
        st.has_minmax = true;
        s3l_buf_append(&st.min, cases[i].min, strlen(cases[i].min));
        s3l_buf_append(&st.max, cases[i].max, strlen(cases[i].max));
        assert_int_equal(s3l__pq_stats_export(&col, &st, 4, &a, &out), 0);
        assert_int_equal(out.min_len, strlen(cases[i].want_min));
        assert_memory_equal(out.min, cases[i].want_min, out.min_len);
        assert_int_equal(out.max_len, strlen(cases[i].want_max));
        assert_memory_equal(out.max, cases[i].want_max, out.max_len);
        assert_int_equal(out.max_exact, cases[i].max_exact);
        /* The rounded-up max is above the true max (byte-wise). */
        size_t n = strlen(cases[i].max);
        int c = memcmp(out.max, cases[i].max, out.max_len < n ? out.max_len : n);
        assert_true(c > 0 || (c == 0 && out.max_len >= n));
    }
    s3l__pq_stats_free(&st);
    s3l_arena_free(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(spec_bit_packed_example),
        cmocka_unit_test(rle_runs),
        cmocka_unit_test(literal_borrows_from_run),
        cmocka_unit_test(wide_indices),
        cmocka_unit_test(every_width),
        cmocka_unit_test(run_lengths),
        cmocka_unit_test(booleans),
        cmocka_unit_test(truncated_bounds),
        cmocka_unit_test(half_floats),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
