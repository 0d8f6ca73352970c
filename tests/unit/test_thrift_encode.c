/*
 * Unit tests of the Thrift compact encoder against bytes derived by hand from
 * apache/thrift doc/specs/thrift-compact-protocol.md. Each expected array carries its derivation.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "thrift/thrift.h"

struct fx {
    struct s3l_buf b;
    struct s3l_tc_enc e;
};

static void start(struct fx *f)
{
    s3l_buf_init(&f->b, 1 << 20);
    s3l__tc_init(&f->e, &f->b);
}

static void expect_bytes(struct fx *f, const uint8_t *want, size_t n)
{
    assert_int_equal(s3l__tc_status(&f->e), 0);
    assert_int_equal(f->b.len, n);
    assert_memory_equal(f->b.ptr, want, n);
    s3l_buf_free(&f->b);
}

static void short_field_headers(void **state)
{
    (void)state;
    struct fx f;
    start(&f);
    s3l__tc_field_i32(&f.e, 1, 5);  /* delta 1, type I32 5: 0x15; zigzag(5) = 10: 0x0A */
    s3l__tc_field_i64(&f.e, 3, -1); /* delta 2, type I64 6: 0x26; zigzag(-1) = 1: 0x01 */
    s3l__tc_struct_end(&f.e);       /* STOP: 0x00 */
    const uint8_t want[] = {0x15, 0x0A, 0x26, 0x01, 0x00};
    expect_bytes(&f, want, sizeof(want));
}

static void long_field_header(void **state)
{
    (void)state;
    struct fx f;
    start(&f);
    s3l__tc_field_i32(&f.e, 3, 0); /* 0x35 0x00 */
    /* id 20 is 17 above 3 (> 15): type byte 0x05, then zigzag(20) = 40 = 0x28 as a varint;
     * the value 300: zigzag 600 = 0x258 -> varint 0xD8 0x04 (0x58 | 0x80, 0x258 >> 7 = 4). */
    s3l__tc_field_i32(&f.e, 20, 300);
    /* id 2 is below 20 (delta negative): long form again, type I16 4, zigzag(2) = 4; value
     * -2: zigzag 3. */
    s3l__tc_field_i16(&f.e, 2, -2);
    const uint8_t want[] = {0x35, 0x00, 0x05, 0x28, 0xD8, 0x04, 0x04, 0x04, 0x03};
    expect_bytes(&f, want, sizeof(want));
}

static void bools_bytes_binary(void **state)
{
    (void)state;
    struct fx f;
    start(&f);
    s3l__tc_field_bool(&f.e, 1, true);       /* 0x11: delta 1, BOOLEAN_TRUE 1 */
    s3l__tc_field_bool(&f.e, 2, false);      /* 0x12: delta 1, BOOLEAN_FALSE 2 */
    s3l__tc_field_i8(&f.e, 3, -3);           /* 0x13 then the raw byte 0xFD */
    s3l__tc_field_binary(&f.e, 7, "abc", 3); /* delta 4, BINARY 8: 0x48; len 3; bytes */
    s3l__tc_field_string(&f.e, 8, "");       /* 0x18, len 0 */
    const uint8_t want[] = {0x11, 0x12, 0x13, 0xFD, 0x48, 0x03, 'a', 'b', 'c', 0x18, 0x00};
    expect_bytes(&f, want, sizeof(want));
}

static void lists(void **state)
{
    (void)state;
    struct fx f;
    start(&f);
    /* list<i32> [1, -1, 64]: field 0x19 (delta 1, LIST 9); header (3 << 4) | 5 = 0x35;
     * zigzag 1 -> 2, -1 -> 1, 64 -> 128 = varint 0x80 0x01. */
    s3l__tc_field_list(&f.e, 1, S3L_TC_I32, 3);
    s3l__tc_elem_i32(&f.e, 1);
    s3l__tc_elem_i32(&f.e, -1);
    s3l__tc_elem_i32(&f.e, 64);
    /* list<i64> of 20 zeros: field 0x19; size >= 15: 0xF0 | 6 = 0xF6 then varint 20 = 0x14. */
    s3l__tc_field_list(&f.e, 2, S3L_TC_I64, 20);
    for (int i = 0; i < 20; i++)
        s3l__tc_elem_i64(&f.e, 0);
    /* list<bool> [true, false]: field 0x19; header (2 << 4) | 1 = 0x21; elements 1 and 2. */
    s3l__tc_field_list(&f.e, 3, S3L_TC_BOOL_TRUE, 2);
    s3l__tc_elem_bool(&f.e, true);
    s3l__tc_elem_bool(&f.e, false);
    uint8_t want[64];
    size_t n = 0;
    const uint8_t a[] = {0x19, 0x35, 0x02, 0x01, 0x80, 0x01, 0x19, 0xF6, 0x14};
    memcpy(want, a, sizeof(a));
    n = sizeof(a);
    memset(want + n, 0, 20);
    n += 20;
    const uint8_t b[] = {0x19, 0x21, 0x01, 0x02};
    memcpy(want + n, b, sizeof(b));
    n += sizeof(b);
    expect_bytes(&f, want, n);
}

static void nested_structs(void **state)
{
    (void)state;
    struct fx f;
    start(&f);
    s3l__tc_field_struct(&f.e, 2); /* 0x2C: delta 2, STRUCT 12 */
    s3l__tc_field_i32(&f.e, 1, 1); /* inner ids restart at 0: 0x15, zigzag(1) = 0x02 */
    s3l__tc_struct_end(&f.e);      /* 0x00 */
    s3l__tc_field_i32(&f.e, 3, 2); /* outer continues from id 2: delta 1 -> 0x15, 0x04 */
    /* A list of 2 structs: field 4 (0x19 | delta 1 << 4 = 0x19), header 0x2C; each struct
     * restarts ids: {1: i32 0} = 0x15 0x00 0x00; {} = 0x00. */
    s3l__tc_field_list(&f.e, 4, S3L_TC_STRUCT, 2);
    s3l__tc_elem_struct(&f.e);
    s3l__tc_field_i32(&f.e, 1, 0);
    s3l__tc_struct_end(&f.e);
    s3l__tc_elem_struct(&f.e);
    s3l__tc_struct_end(&f.e);
    s3l__tc_struct_end(&f.e);
    const uint8_t want[] = {0x2C, 0x15, 0x02, 0x00, 0x15, 0x04, 0x19,
                            0x2C, 0x15, 0x00, 0x00, 0x00, 0x00};
    expect_bytes(&f, want, sizeof(want));
}

static void varint_extremes(void **state)
{
    (void)state;
    struct fx f;
    start(&f);
    /* INT64_MIN zigzags to 2^64 - 1: nine 0xFF bytes (7 bits each, 63 bits) then 0x01. */
    s3l__tc_elem_i64(&f.e, INT64_MIN);
    /* INT64_MAX zigzags to 2^64 - 2: 0xFE, eight 0xFF, 0x01. */
    s3l__tc_elem_i64(&f.e, INT64_MAX);
    const uint8_t want[] = {0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01,
                            0xFE, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01};
    expect_bytes(&f, want, sizeof(want));
}

static void sticky_status(void **state)
{
    (void)state;
    struct s3l_buf b;
    s3l_buf_init(&b, 4); /* a hard cap of 4 bytes */
    struct s3l_tc_enc e;
    s3l__tc_init(&e, &b);
    s3l__tc_field_binary(&e, 1, "abcdef", 6);
    s3l__tc_field_i32(&e, 2, 1);
    assert_int_equal(s3l__tc_status(&e), S3L_ETOO_LARGE);
    s3l_buf_free(&b);
    /* Closing more structs than were opened is misuse. */
    s3l_buf_init(&b, 64);
    s3l__tc_init(&e, &b);
    s3l__tc_struct_end(&e);
    s3l__tc_struct_end(&e);
    assert_int_equal(s3l__tc_status(&e), S3L_EINTERNAL);
    s3l_buf_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(short_field_headers), cmocka_unit_test(long_field_header),
        cmocka_unit_test(bools_bytes_binary),  cmocka_unit_test(lists),
        cmocka_unit_test(nested_structs),      cmocka_unit_test(varint_extremes),
        cmocka_unit_test(sticky_status),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
