/*
 * Unit tests of the codec table: each codec's output is decompressed by its library's own
 * decoder (not ours: we have none) and must give the input back; gzip output must carry the
 * RFC 1952 header (1f 8b 08); names parse and print; bad levels and missing codecs are refused.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>
#include <snappy-c.h>
#include <zlib.h>
#include <zstd.h>

#include "codec/codec.h"

static uint8_t input[200000];

static void fill(void)
{
    uint32_t x = 12345;
    for (size_t i = 0; i < sizeof(input); i++) {
        x = x * 1103515245u + 12345u;
        input[i] = (uint8_t)((i % 97 < 50) ? 'a' + (x >> 16) % 4 : (x >> 16)); /* mixed */
    }
}

static void round_trip(enum s3l_codec id, int level, size_t n)
{
    struct s3l__codec c;
    struct s3l_error err = {0};
    assert_int_equal(s3l__codec_open(&c, id, level, &err), 0);
    struct s3l_buf out;
    s3l_buf_init(&out, SIZE_MAX / 2);
    assert_int_equal(s3l_buf_append(&out, "HDR", 3), 0); /* compress appends */
    for (int rep = 0; rep < 2; rep++) {                  /* the context is reused */
        out.len = 3;
        assert_int_equal(s3l__codec_compress(&c, input, n, &out), 0);
        const uint8_t *p = out.ptr + 3;
        size_t plen = out.len - 3;
        uint8_t *back = malloc(n + 1);
        size_t got = 0;
        if (id == S3L_CODEC_ZSTD) {
            got = ZSTD_decompress(back, n + 1, p, plen);
            assert_false(ZSTD_isError(got));
        } else if (id == S3L_CODEC_SNAPPY) {
            got = n + 1;
            assert_int_equal(snappy_uncompress((const char *)p, plen, (char *)back, &got),
                             SNAPPY_OK);
        } else if (id == S3L_CODEC_GZIP) {
            assert_true(plen >= 18);
            assert_int_equal(p[0], 0x1f);
            assert_int_equal(p[1], 0x8b);
            assert_int_equal(p[2], 8);
            z_stream z = {0};
            assert_int_equal(inflateInit2(&z, 15 + 16), Z_OK);
            z.next_in = (Bytef *)p;
            z.avail_in = (uInt)plen;
            z.next_out = back;
            z.avail_out = (uInt)(n + 1);
            assert_int_equal(inflate(&z, Z_FINISH), Z_STREAM_END);
            got = z.total_out;
            inflateEnd(&z);
        } else {
            got = plen;
            memcpy(back, p, plen);
        }
        assert_int_equal(got, n);
        assert_memory_equal(back, input, n);
        free(back);
    }
    s3l_buf_free(&out);
    s3l__codec_close(&c);
}

static void codecs_round_trip(void **state)
{
    (void)state;
    fill();
    const enum s3l_codec ids[] = {S3L_CODEC_NONE, S3L_CODEC_SNAPPY, S3L_CODEC_GZIP, S3L_CODEC_ZSTD};
    for (size_t i = 0; i < 4; i++) {
        round_trip(ids[i], 0, sizeof(input));
        round_trip(ids[i], 0, 0);
        round_trip(ids[i], 0, 1);
    }
    round_trip(S3L_CODEC_ZSTD, 19, 5000);
    round_trip(S3L_CODEC_ZSTD, -5, 5000);
    round_trip(S3L_CODEC_GZIP, 1, 5000);
}

static void compression_actually_compresses(void **state)
{
    (void)state;
    static uint8_t zeros[65536];
    const enum s3l_codec ids[] = {S3L_CODEC_SNAPPY, S3L_CODEC_GZIP, S3L_CODEC_ZSTD};
    for (size_t i = 0; i < 3; i++) {
        struct s3l__codec c;
        assert_int_equal(s3l__codec_open(&c, ids[i], 0, NULL), 0);
        struct s3l_buf out;
        s3l_buf_init(&out, SIZE_MAX / 2);
        assert_int_equal(s3l__codec_compress(&c, zeros, sizeof(zeros), &out), 0);
        assert_true(out.len < 4096);
        s3l_buf_free(&out);
        s3l__codec_close(&c);
    }
}

static void names_and_errors(void **state)
{
    (void)state;
    enum s3l_codec id;
    struct s3l_error err = {0};
    assert_int_equal(s3l_codec_parse("ZSTD", &id, &err), 0);
    assert_int_equal(id, S3L_CODEC_ZSTD);
    assert_int_equal(s3l_codec_parse("uncompressed", &id, &err), 0);
    assert_int_equal(id, S3L_CODEC_NONE);
    assert_int_equal(s3l_codec_parse("snappy", &id, &err), 0);
    assert_string_equal(s3l_codec_name(id), "snappy");
    assert_string_equal(s3l_codec_name(S3L_CODEC_GZIP), "gzip");
    assert_int_equal(s3l_codec_parse("brotli", &id, &err), S3L_EINVALID_CONFIG);
    assert_non_null(strstr(err.message, "brotli"));
    struct s3l__codec c;
    s3l_error_clear(&err);
    assert_int_equal(s3l__codec_open(&c, S3L_CODEC_ZSTD, 99, &err), S3L_EINVALID_CONFIG);
    assert_non_null(strstr(err.message, "99"));
    s3l_error_clear(&err);
    assert_int_equal(s3l__codec_open(&c, S3L_CODEC_GZIP, 10, &err), S3L_EINVALID_CONFIG);
    s3l_error_clear(&err);
    assert_int_equal(s3l__codec_open(&c, S3L_CODEC_LZ4_RAW, 0, &err), S3L_EUNSUPPORTED);
    /* The default zstd level is 3. */
    assert_int_equal(s3l__codec_open(&c, S3L_CODEC_ZSTD, 0, NULL), 0);
    assert_int_equal(c.level, 3);
    s3l__codec_close(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(codecs_round_trip),
        cmocka_unit_test(compression_actually_compresses),
        cmocka_unit_test(names_and_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
