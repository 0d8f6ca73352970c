/*
 * Unit tests of the committable codec (src/lib/sink/codec.c) on its own: a golden vector whose
 * bytes come from the independent Python encoder of tests/fuzz/corpus/sink_committable/gen.py
 * (zlib.crc32 as the checksum), decode(encode(x)) == x over varied committables, and refusals:
 * every truncation, every single-byte change, foreign bytes, a newer version, and committables
 * the encoder must not write. A refused committable leaves nothing decoded.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "fail_alloc.h"
#include "s3l/alloc.h"
#include "s3l/ndjson_sink.h"
#include "sink/sink.h"
#include "util/util.h"

/* gen.py's `golden`: key, uploadId "2~abc", a 32-hex token, 3 records, parts 1 (5 MiB, "e1")
 * and 2 (17 bytes, "e2"), checkpoint 7. */
static const char golden_hex[] =
    "53334c4301000107000000000000003e0000006576656e74732f737562302d313736343631343430303030302d"
    "30613162326333642d30303030303030303030303030303030303030372e6e646a736f6e05000000327e616263"
    "200000003030313132323333343435353636373738383939616162626363646465656666030000000000000011"
    "005000000000000200000001000000000050000000000004000000226531220200000011000000000000000400"
    "000022653222a657567f";

static size_t unhex(const char *h, uint8_t *out)
{
    size_t n = strlen(h) / 2;
    for (size_t i = 0; i < n; i++) {
        unsigned v;
        sscanf(h + 2 * i, "%2x", &v);
        out[i] = (uint8_t)v;
    }
    return n;
}

static struct s3l_committable_part golden_parts[] = {
    {1, 5242880, "\"e1\""},
    {2, 17, "\"e2\""},
};
static const struct s3l_committable golden = {
    .kind = S3L_COMMITTABLE_MULTIPART,
    .checkpoint = 7,
    .key = "events/sub0-1764614400000-0a1b2c3d-00000000000000000007.ndjson",
    .upload_id = "2~abc",
    .token = "00112233445566778899aabbccddeeff",
    .n_parts = 2,
    .parts = golden_parts,
    .records = 3,
    .bytes = 5242897,
};

static void assert_same(const struct s3l_committable *a, const struct s3l_committable *b)
{
    assert_int_equal(a->kind, b->kind);
    assert_true(a->checkpoint == b->checkpoint);
    assert_true(a->records == b->records);
    assert_true(a->bytes == b->bytes);
    assert_int_equal(a->n_parts, b->n_parts);
#define SAME_STR(x, y) assert_string_equal((x) ? (x) : "", (y) ? (y) : "")
    SAME_STR(a->key, b->key);
    SAME_STR(a->upload_id, b->upload_id);
    SAME_STR(a->token, b->token);
    for (uint32_t i = 0; i < a->n_parts; i++) {
        assert_int_equal(a->parts[i].number, b->parts[i].number);
        assert_true(a->parts[i].size == b->parts[i].size);
        assert_string_equal(a->parts[i].etag, b->parts[i].etag);
    }
}

static void golden_vector(void **state)
{
    (void)state;
    uint8_t want[512];
    size_t n = unhex(golden_hex, want);
    uint8_t *got = NULL;
    size_t len = 0;
    struct s3l_error err = {0};
    assert_int_equal(s3l_committable_encode(&golden, &got, &len, &err), 0);
    assert_int_equal(len, n);
    assert_memory_equal(got, want, n);
    struct s3l_committable c;
    assert_int_equal(s3l_committable_decode(want, n, &c, &err), 0);
    assert_same(&c, &golden);
    s3l_committable_cleanup(&c);
    s3l_free(got);
}

/* decode(encode(x)) == x, and encode(decode(b)) == b, over committables of every shape. */
static void round_trips(void **state)
{
    (void)state;
    static struct s3l_committable_part many[S3L_COMMITTABLE_PARTS_MAX];
    static char etags[S3L_COMMITTABLE_PARTS_MAX][40];
    uint64_t sum = 0;
    for (uint32_t i = 0; i < S3L_COMMITTABLE_PARTS_MAX; i++) {
        snprintf(etags[i], sizeof(etags[i]), "\"%032x\"", i * 2654435761u);
        many[i] = (struct s3l_committable_part){i + 1, 5u << 20, etags[i]};
        sum += 5u << 20;
    }
    static char long_key[S3L_COMMITTABLE_KEY_MAX + 1];
    memset(long_key, 'k', S3L_COMMITTABLE_KEY_MAX);
    const struct s3l_committable cases[] = {
        {.kind = S3L_COMMITTABLE_EMPTY},
        {.kind = S3L_COMMITTABLE_EMPTY, .checkpoint = UINT64_MAX},
        golden,
        {.kind = S3L_COMMITTABLE_MULTIPART, .key = "k", .upload_id = "u"},
        {.kind = S3L_COMMITTABLE_MULTIPART,
         .checkpoint = 1,
         .key = long_key,
         .upload_id = "u",
         .token = "t",
         .n_parts = S3L_COMMITTABLE_PARTS_MAX,
         .parts = many,
         .records = 1u << 30,
         .bytes = sum},
        {.kind = S3L_COMMITTABLE_MULTIPART,
         .key = "d\xc3\xa9j\xc3\xa0 vu/\x01 x",
         .upload_id = "a+b/c=",
         .n_parts = 1,
         .parts = &many[9999],
         .bytes = 5u << 20},
    };
    for (size_t i = 0; i < S3L_ARRAY_LEN(cases); i++) {
        uint8_t *b = NULL, *b2 = NULL;
        size_t n = 0, n2 = 0;
        struct s3l_error err = {0};
        assert_int_equal(s3l_committable_encode(&cases[i], &b, &n, &err), 0);
        struct s3l_committable c;
        assert_int_equal(s3l_committable_decode(b, n, &c, &err), 0);
        assert_same(&c, &cases[i]);
        assert_int_equal(s3l_committable_encode(&c, &b2, &n2, &err), 0);
        assert_int_equal(n2, n);
        assert_memory_equal(b2, b, n);
        s3l_committable_cleanup(&c);
        s3l_free(b);
        s3l_free(b2);
    }
}

static void refused(const uint8_t *b, size_t n, const char *says)
{
    struct s3l_committable c;
    struct s3l_error err = {0};
    int rc = s3l_committable_decode(b, n, &c, &err);
    if (rc != S3L_ECORRUPT)
        fail_msg("%zu bytes: decode gave %s, not CORRUPT", n, s3l_error_name(rc));
    if (says && !strstr(err.message, says))
        fail_msg("%zu bytes: '%s' does not say '%s'", n, err.message, says);
    assert_null(c.key);
    assert_null(c.parts);
    assert_int_equal(c.n_parts, 0);
}

/* Every prefix of the golden bytes, and every single-byte change of them, is refused. */
static void truncated_and_altered(void **state)
{
    (void)state;
    uint8_t b[512];
    size_t n = unhex(golden_hex, b);
    for (size_t cut = 0; cut < n; cut++)
        refused(b, cut, cut < 4 ? "truncated" : NULL);
    /* A cut the checksum does not catch (the checksum recomputed over the cut bytes): the
     * fields are what refuses it. */
    uint8_t head[10];
    memcpy(head, b, 6);
    uint32_t hc = s3l__sink_crc32(head, 6);
    for (int i = 0; i < 4; i++)
        head[6 + i] = (uint8_t)(hc >> (8 * i));
    refused(head, 10, "truncated at byte 6 (the kind needs 1 bytes, 0 left)");
    refused(b, n - 1, "checksum mismatch");
    for (size_t i = 0; i < n; i++) {
        for (int bit = 0; bit < 8; bit++) {
            b[i] ^= (uint8_t)(1u << bit);
            refused(b, n, NULL);
            b[i] ^= (uint8_t)(1u << bit);
        }
    }
    uint8_t longer[513];
    memcpy(longer, b, n);
    longer[n] = 0;
    refused(longer, n + 1, "checksum mismatch");
}

/* Bytes that are no committable of ours, or of a newer version, or valid CRC but bad fields. */
static void foreign(void **state)
{
    (void)state;
    static const char json[] = "{\"key\":\"a\",\"uploadId\":\"u\",\"parts\":[]}";
    refused((const uint8_t *)json, sizeof(json) - 1, "not an s3land sink committable");
    refused(NULL, 0, "truncated at byte 0");
    uint8_t b[512];
    size_t n = unhex(golden_hex, b);
    b[4] = 2; /* version 2: checked before the checksum, so it is what the message names */
    refused(b, n, "version 2 is not one this build reads");
    /* A valid checksum over a bad field: part 2 renumbered 1 (out of order). */
    n = unhex(golden_hex, b);
    static const uint8_t p2[] = {0x02, 0, 0, 0, 0x11, 0, 0, 0};
    uint8_t *at = NULL;
    for (size_t i = 0; i + sizeof(p2) <= n; i++)
        if (memcmp(b + i, p2, sizeof(p2)) == 0)
            at = b + i;
    assert_non_null(at);
    at[0] = 1;
    uint32_t crc = s3l__sink_crc32(b, n - 4);
    for (int i = 0; i < 4; i++)
        b[n - 4 + (size_t)i] = (uint8_t)(crc >> (8 * i));
    refused(b, n, "increasing");
}

static void encoder_refuses(void **state)
{
    (void)state;
    struct s3l_committable_part bad_order[] = {{2, 1, "\"a\""}, {1, 1, "\"b\""}};
    struct s3l_committable_part no_etag[] = {{1, 1, ""}};
    const struct {
        struct s3l_committable c;
        const char *says;
    } cases[] = {
        {{.kind = S3L_COMMITTABLE_EMPTY, .key = "k"}, "empty committable"},
        {{.kind = (enum s3l_committable_kind)5}, "unknown kind"},
        {{.kind = S3L_COMMITTABLE_MULTIPART, .key = "k"}, "needs a key and an upload id"},
        {{.kind = S3L_COMMITTABLE_MULTIPART,
          .key = "k",
          .upload_id = "u",
          .n_parts = 2,
          .parts = bad_order,
          .bytes = 2},
         "increasing"},
        {{.kind = S3L_COMMITTABLE_MULTIPART,
          .key = "k",
          .upload_id = "u",
          .n_parts = 1,
          .parts = no_etag,
          .bytes = 1},
         "no ETag"},
        {{.kind = S3L_COMMITTABLE_MULTIPART,
          .key = "k",
          .upload_id = "u",
          .n_parts = 1,
          .parts = bad_order + 1,
          .bytes = 9},
         "not the parts' sum"},
    };
    for (size_t i = 0; i < S3L_ARRAY_LEN(cases); i++) {
        uint8_t *b = NULL;
        size_t n = 0;
        struct s3l_error err = {0};
        assert_int_equal(s3l_committable_encode(&cases[i].c, &b, &n, &err), S3L_EINVALID_ARGUMENT);
        assert_null(b);
        if (!strstr(err.message, cases[i].says))
            fail_msg("case %zu: '%s' does not say '%s'", i, err.message, cases[i].says);
    }
}

/* Allocation k fails, for every k: encode and decode either give the golden result or NOMEM,
 * with nothing half-decoded and nothing leaked (ASan's leak check in the sanitizer build). */
static void fail_every_allocation(void **state)
{
    (void)state;
    uint8_t want[512];
    size_t n = unhex(golden_hex, want);
    for (unsigned k = 1;; k++) {
        s3l_test_fail_alloc_arm(k);
        s3l_set_allocator(&s3l_test_fail_alloc);
        uint8_t *b = NULL;
        size_t len = 0;
        struct s3l_error err = {0};
        int erc = s3l_committable_encode(&golden, &b, &len, &err);
        struct s3l_committable c;
        s3l_error_clear(&err);
        int drc = s3l_committable_decode(want, n, &c, &err);
        s3l_set_allocator(NULL);
        if (erc == 0) {
            assert_int_equal(len, n);
            assert_memory_equal(b, want, n);
        } else {
            assert_int_equal(erc, S3L_ENOMEM);
            assert_null(b);
        }
        if (drc == 0) {
            assert_same(&c, &golden);
        } else {
            assert_int_equal(drc, S3L_ENOMEM);
            assert_null(c.key);
            assert_null(c.parts);
        }
        s3l_committable_cleanup(&c);
        s3l_free(b);
        if (!s3l_test_fail_alloc_hit())
            break; /* k is past the last allocation: every one has been failed once */
        assert_true(erc != 0 || drc != 0);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(golden_vector),         cmocka_unit_test(round_trips),
        cmocka_unit_test(truncated_and_altered), cmocka_unit_test(foreign),
        cmocka_unit_test(encoder_refuses),       cmocka_unit_test(fail_every_allocation),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
