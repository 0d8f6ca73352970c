/*
 * Unit tests of util: the error table, the capped buffer, the arena, hex, and the allocator hook.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "fail_alloc.h"
#include "util/util.h"

static void error_names_and_first_message_wins(void **state)
{
    (void)state;
    assert_string_equal(s3l_error_name(S3L_ESCHEMA_DRIFT), "SCHEMA_DRIFT");
    assert_string_equal(s3l_error_name(12345), "UNKNOWN");
    assert_true(s3l_error_retryable(S3L_ETHROTTLED));
    assert_false(s3l_error_retryable(S3L_EPERMISSION_DENIED));
    struct s3l_error err = {0};
    assert_int_equal(s3l_error_set(&err, S3L_EINVALID_INPUT, "line %d", 7), S3L_EINVALID_INPUT);
    assert_int_equal(s3l_error_set(&err, S3L_EIO, "second"), S3L_EIO);
    assert_int_equal(err.code, S3L_EINVALID_INPUT);
    assert_string_equal(err.message, "line 7");
    s3l_error_prefix(&err, "table %s", "t");
    assert_string_equal(err.message, "table t: line 7");
    s3l_error_clear(&err);
    s3l_error_set_errno(&err, S3L_EIO, ENOENT, "open %s", "/x");
    assert_string_equal(err.message, "open /x: No such file or directory");
    assert_int_equal(err.sys_errno, ENOENT);
}

static void buf_cap_is_hard(void **state)
{
    (void)state;
    struct s3l_buf b;
    s3l_buf_init(&b, 10);
    assert_int_equal(s3l_buf_append(&b, "hello", 5), 0);
    assert_int_equal(s3l_buf_printf(&b, "%d", 12345), 0);
    assert_int_equal(b.len, 10);
    assert_string_equal((char *)b.ptr, "hello12345");
    assert_int_equal(s3l_buf_append_byte(&b, 'x'), S3L_ETOO_LARGE);
    assert_int_equal(b.len, 10);
    s3l_buf_consume(&b, 5);
    assert_string_equal((char *)b.ptr, "12345");
    s3l_buf_truncate(&b, 2);
    assert_string_equal((char *)b.ptr, "12");
    uint8_t *p;
    size_t n;
    assert_int_equal(s3l_buf_detach(&b, &p, &n), 0);
    assert_int_equal(n, 2);
    assert_null(b.ptr);
    s3l_free(p);
    s3l_buf_free(&b);
}

static void arena_reuses_blocks(void **state)
{
    (void)state;
    struct s3l_arena a;
    s3l_arena_init(&a, 128);
    char *s = s3l_arena_strndup(&a, "abcdef", 3);
    assert_string_equal(s, "abc");
    void *big = s3l_arena_alloc(&a, 1000);
    assert_non_null(big);
    assert_int_equal((uintptr_t)big % 8, 0);
    s3l_arena_reset(&a);
    assert_int_equal(a.used_total, 0);
    void *again = s3l_arena_alloc(&a, 900);
    assert_ptr_equal(again, big); /* the 1000-byte block is reused after reset */
    s3l_arena_free(&a);
}

static void hex_matches_hand_computed(void **state)
{
    (void)state;
    const uint8_t in[] = {0x00, 0x7f, 0xab, 0xff};
    char out[9];
    s3l_hex_encode(in, sizeof(in), out);
    assert_string_equal(out, "007fabff");
}

/* s3l_hex_value over every byte against the digit tables written out by hand, and back from
 * s3l_hex_encode's text; the neighbours of the ranges ('/', ':', '@', 'G', '`', 'g') and bytes
 * past ASCII (as char they are negative) are not digits. */
static void hex_value_decodes_every_digit(void **state)
{
    (void)state;
    const char *lower = "0123456789abcdef", *upper = "0123456789ABCDEF";
    for (int c = 0; c < 256; c++) {
        int want = -1;
        for (int d = 0; d < 16; d++)
            if (c == lower[d] || c == upper[d])
                want = d;
        assert_int_equal(s3l_hex_value(c), want);
        assert_int_equal(s3l_hex_value((char)c), want); /* a negative char past 0x7f */
    }
    assert_int_equal(s3l_hex_value('/'), -1);
    assert_int_equal(s3l_hex_value(':'), -1);
    assert_int_equal(s3l_hex_value('@'), -1);
    assert_int_equal(s3l_hex_value('G'), -1);
    assert_int_equal(s3l_hex_value('`'), -1);
    assert_int_equal(s3l_hex_value('g'), -1);
    uint8_t in[256], back[256];
    char text[513];
    for (int i = 0; i < 256; i++)
        in[i] = (uint8_t)i;
    s3l_hex_encode(in, sizeof(in), text);
    for (int i = 0; i < 256; i++)
        back[i] = (uint8_t)(s3l_hex_value(text[2 * i]) << 4 | s3l_hex_value(text[2 * i + 1]));
    assert_memory_equal(back, in, sizeof(in));
}

static int fail_after;
static void *counting_malloc(void *ctx, size_t n)
{
    (void)ctx;
    if (fail_after-- <= 0)
        return NULL;
    return malloc(n);
}
static void *counting_realloc(void *ctx, void *p, size_t n)
{
    (void)ctx;
    if (fail_after-- <= 0)
        return NULL;
    return realloc(p, n);
}
static void plain_free(void *ctx, void *p)
{
    (void)ctx;
    free(p);
}

static void allocator_failure_is_reported(void **state)
{
    (void)state;
    struct s3l_allocator a = {counting_malloc, counting_realloc, plain_free, NULL};
    s3l_set_allocator(&a);
    fail_after = 0;
    struct s3l_buf b;
    s3l_buf_init(&b, 100);
    assert_int_equal(s3l_buf_append(&b, "x", 1), S3L_ENOMEM);
    assert_null(s3l_strdup("abc"));
    s3l_set_allocator(NULL);
    s3l_buf_free(&b);
}

/* Decimal text, computed by hand: 0x3039 = 12345; 0xCFC7 = -12345 (two's complement); 5 at scale
 * 2 is 0.05; 16 bytes of 0x7f ff.. is 2^127 - 1 = 170141183460469231731687303715884105727. */
static void decimal_text_matches_hand_computed(void **state)
{
    (void)state;
    char buf[S3L_DECIMAL_TEXT_MAX];
    const uint8_t a[] = {0x30, 0x39}, b[] = {0xcf, 0xc7}, c[] = {0x05}, z[] = {0x00};
    assert_int_equal(s3l__decimal_be_text(a, 2, 2, buf), 6);
    assert_string_equal(buf, "123.45");
    assert_int_equal(s3l__decimal_be_text(b, 2, 0, buf), 6);
    assert_string_equal(buf, "-12345");
    assert_int_equal(s3l__decimal_be_text(b, 2, 7, buf), 10);
    assert_string_equal(buf, "-0.0012345");
    assert_int_equal(s3l__decimal_be_text(c, 1, 2, buf), 4);
    assert_string_equal(buf, "0.05");
    assert_int_equal(s3l__decimal_be_text(z, 1, 0, buf), 1);
    assert_string_equal(buf, "0");
    uint8_t max[16];
    memset(max, 0xff, sizeof(max));
    max[0] = 0x7f;
    assert_int_equal(s3l__decimal_be_text(max, 16, 0, buf), 39);
    assert_string_equal(buf, "170141183460469231731687303715884105727");
    uint8_t min[16] = {0x80};
    assert_int_equal(s3l__decimal_be_text(min, 16, 76, buf), 80 - 1);
    assert_string_equal(buf, "-0.0000000000000000000000000000000000000170141183460469231731687303715884105728");
    assert_int_equal(s3l__decimal_be_text(a, 0, 0, buf), -1);
    assert_int_equal(s3l__decimal_be_text(max, 17 - 1, 77, buf), -1);
    assert_int_equal(s3l__decimal_be_text(a, 2, -1, buf), -1);
}

/* s3l__array_reserve: the capacities doubling gives (4, 8, 32: worked by hand), the elements kept
 * across growth, nothing allocated when the room is there, a size that overflows a size_t
 * refused before any allocation, and a failed allocation that leaves the array as it was. */
static void array_reserve_doubles_and_fails_cleanly(void **state)
{
    (void)state;
    uint64_t *a = NULL;
    size_t cap = 0;
    assert_int_equal(s3l__array_reserve(&a, &cap, 1, sizeof(*a), 4), 0);
    assert_non_null(a);
    assert_int_equal(cap, 4);
    for (uint64_t i = 0; i < 4; i++)
        a[i] = 1000 + i;
    assert_int_equal(s3l__array_reserve(&a, &cap, 5, sizeof(*a), 4), 0);
    assert_int_equal(cap, 8);
    assert_int_equal(s3l__array_reserve(&a, &cap, 17, sizeof(*a), 4), 0); /* 8 -> 16 -> 32 */
    assert_int_equal(cap, 32);
    for (uint64_t i = 0; i < 4; i++)
        assert_int_equal(a[i], 1000 + i);

    /* Enough room: no allocation at all (the failing allocator would refuse the first). */
    s3l_set_allocator(&s3l_test_fail_alloc);
    s3l_test_fail_alloc_arm(1);
    uint64_t *before = a;
    assert_int_equal(s3l__array_reserve(&a, &cap, 32, sizeof(*a), 4), 0);
    assert_int_equal(s3l_test_fail_alloc_count(), 0);
    /* The allocation fails: S3L_ENOMEM, the array, its capacity and its elements untouched. */
    assert_int_equal(s3l__array_reserve(&a, &cap, 33, sizeof(*a), 4), S3L_ENOMEM);
    assert_true(s3l_test_fail_alloc_hit());
    assert_ptr_equal(a, before);
    assert_int_equal(cap, 32);
    for (uint64_t i = 0; i < 4; i++)
        assert_int_equal(a[i], 1000 + i);
    /* From empty too: the pointer stays NULL and the capacity 0. */
    char **none = NULL;
    size_t none_cap = 0;
    s3l_test_fail_alloc_arm(1);
    assert_int_equal(s3l__array_reserve(&none, &none_cap, 1, sizeof(*none), 8), S3L_ENOMEM);
    assert_null(none);
    assert_int_equal(none_cap, 0);
    /* More elements than a size_t can count in bytes: refused before allocating anything. */
    s3l_test_fail_alloc_arm(0);
    assert_int_equal(s3l__array_reserve(&a, &cap, SIZE_MAX / sizeof(*a) + 1, sizeof(*a), 4),
                     S3L_ENOMEM);
    assert_int_equal(s3l_test_fail_alloc_count(), 0);
    assert_ptr_equal(a, before);
    assert_int_equal(cap, 32);
    /* Doubling that would pass SIZE_MAX elements stops there and is refused the same way. */
    size_t huge = SIZE_MAX / 2 + 2;
    assert_int_equal(s3l__array_reserve(&a, &huge, SIZE_MAX / 2 + 3, 2, 4), S3L_ENOMEM);
    assert_int_equal(huge, SIZE_MAX / 2 + 2);
    assert_int_equal(s3l_test_fail_alloc_count(), 0);
    s3l_set_allocator(NULL);

    /* With a ceiling: the last doubling stops at max_cap; past it S3L_ETOO_LARGE. */
    assert_int_equal(s3l__array_reserve_max(&a, &cap, 33, sizeof(*a), 4, 40), 0);
    assert_int_equal(cap, 40);
    assert_int_equal(s3l__array_reserve_max(&a, &cap, 41, sizeof(*a), 4, 40), S3L_ETOO_LARGE);
    assert_int_equal(cap, 40);
    for (uint64_t i = 0; i < 4; i++)
        assert_int_equal(a[i], 1000 + i);
    s3l_free(a);
}

/* The digest wrapper against published vectors: SHA-256 of "abc" and of the 448-bit message of
 * FIPS 180-2 appendix B, MD5 of "" and "message digest" (RFC 1321 appendix A.5); incremental in
 * pieces equals one-shot; a context started again hashes afresh; an update of a never-started
 * context is an error with a message. */
static void digest_matches_published_vectors(void **state)
{
    (void)state;
    const char *b448 = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    uint8_t md[S3L__MD_MAX];
    char hex[2 * S3L__MD_MAX + 1];
    struct s3l_error err = {0};
    struct s3l__md m = {0};
    assert_int_equal(s3l__md_init(&m, S3L__MD_SHA256, &err), 0);
    assert_int_equal(s3l__md_update(&m, "a", 1, &err), 0);
    assert_int_equal(s3l__md_update(&m, "bc", 2, &err), 0);
    assert_int_equal(s3l__md_final(&m, md, &err), 0);
    s3l_hex_encode(md, s3l__md_size(S3L__MD_SHA256), hex);
    assert_string_equal(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    assert_int_equal(s3l__md_init(&m, S3L__MD_SHA256, &err), 0); /* the context again */
    for (size_t i = 0; i < strlen(b448); i += 7)
        assert_int_equal(s3l__md_update(&m, b448 + i, S3L_MIN(7, strlen(b448) - i), &err), 0);
    assert_int_equal(s3l__md_final(&m, md, &err), 0);
    s3l_hex_encode(md, 32, hex);
    assert_string_equal(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    assert_int_equal(s3l__md_init(&m, S3L__MD_MD5, &err), 0); /* and for another algorithm */
    assert_int_equal(s3l__md_final(&m, md, &err), 0);
    s3l_hex_encode(md, s3l__md_size(S3L__MD_MD5), hex);
    assert_string_equal(hex, "d41d8cd98f00b204e9800998ecf8427e");
    assert_int_equal(s3l__md_init(&m, S3L__MD_MD5, &err), 0);
    assert_int_equal(s3l__md_update(&m, "message ", 8, &err), 0);
    assert_int_equal(s3l__md_update(&m, "digest", 6, &err), 0);
    assert_int_equal(s3l__md_final(&m, md, &err), 0);
    s3l_hex_encode(md, 16, hex);
    assert_string_equal(hex, "f96b697d7cb7938d525a2f31aaf161d0");
    s3l__md_free(&m);
    assert_null(m.ctx);
    s3l__md_free(&m); /* twice: a no-op */
    assert_int_equal(err.code, 0);

    assert_int_equal(s3l__sha256(b448, strlen(b448), md, &err), 0);
    s3l_hex_encode(md, 32, hex);
    assert_string_equal(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    assert_int_equal(s3l__sha256_hex("abc", 3, hex), 0);
    assert_string_equal(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    assert_int_equal(s3l__sha256_hex("", 0, hex), 0);
    assert_string_equal(hex, S3L_SIGV4_EMPTY_SHA256);

    struct s3l__md never = {0};
    assert_int_equal(s3l__md_update(&never, "x", 1, &err), S3L_EINTERNAL);
    assert_non_null(strstr(err.message, "SHA-256"));
    s3l__md_free(&never);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(error_names_and_first_message_wins),
        cmocka_unit_test(buf_cap_is_hard),
        cmocka_unit_test(arena_reuses_blocks),
        cmocka_unit_test(hex_matches_hand_computed),
        cmocka_unit_test(hex_value_decodes_every_digit),
        cmocka_unit_test(digest_matches_published_vectors),
        cmocka_unit_test(decimal_text_matches_hand_computed),
        cmocka_unit_test(allocator_failure_is_reported),
        cmocka_unit_test(array_reserve_doubles_and_fails_cleanly),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
