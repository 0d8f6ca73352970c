/*
 * Unit tests of the Thrift compact decoder (src/lib/thrift/decode.h). Expected values are hand
 * encodings written down from apache/thrift doc/specs/thrift-compact-protocol.md (its example
 * 50399 = DF 89 03, its zigzag table 0 -1 1 -2 2), never produced by our encoder.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "thrift/decode.h"

static void varint_spec_example(void **state)
{
    (void)state;
    static const uint8_t b[] = {0xdf, 0x89, 0x03};
    struct s3l_tdec d;
    uint64_t v;
    s3l__tdec_init(&d, b, sizeof(b), 0);
    assert_int_equal(s3l__tdec_varint(&d, &v), 0);
    assert_int_equal(v, 50399);
    assert_int_equal(d.pos, 3);
}

static void varint_limits(void **state)
{
    (void)state;
    /* 2^64 - 1: nine 0xff then 0x01. */
    static const uint8_t max[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
    static const uint8_t over[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02};
    static const uint8_t longer[] = {0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
                                     0x00};
    struct s3l_tdec d;
    uint64_t v;
    int64_t i;
    s3l__tdec_init(&d, max, sizeof(max), 0);
    assert_int_equal(s3l__tdec_varint(&d, &v), 0);
    assert_true(v == UINT64_MAX);
    /* zigzag(INT64_MIN) = 2^64 - 1. */
    s3l__tdec_init(&d, max, sizeof(max), 0);
    assert_int_equal(s3l__tdec_i64(&d, &i), 0);
    assert_true(i == INT64_MIN);
    s3l__tdec_init(&d, over, sizeof(over), 0);
    assert_int_equal(s3l__tdec_varint(&d, &v), S3L_ECORRUPT);
    s3l__tdec_init(&d, longer, sizeof(longer), 0);
    assert_int_equal(s3l__tdec_varint(&d, &v), S3L_ECORRUPT);
    assert_string_equal(d.error_what, "varint overflows 64 bits");
    /* Sticky: the next read fails the same way without moving. */
    size_t pos = d.pos;
    assert_int_equal(s3l__tdec_varint(&d, &v), S3L_ECORRUPT);
    assert_int_equal(d.pos, pos);
}

static void zigzag_table(void **state)
{
    (void)state;
    static const uint8_t b[] = {0, 1, 2, 3, 4};
    static const int32_t want[] = {0, -1, 1, -2, 2};
    struct s3l_tdec d;
    s3l__tdec_init(&d, b, sizeof(b), 0);
    for (size_t k = 0; k < 5; k++) {
        int32_t v;
        assert_int_equal(s3l__tdec_i32(&d, &v), 0);
        assert_int_equal(v, want[k]);
    }
    /* An i32 whose zigzag needs 33 bits is corrupt: raw 2^32 = 80 80 80 80 10. */
    static const uint8_t big[] = {0x80, 0x80, 0x80, 0x80, 0x10};
    int32_t v;
    s3l__tdec_init(&d, big, sizeof(big), 0);
    assert_int_equal(s3l__tdec_i32(&d, &v), S3L_ECORRUPT);
    /* INT32_MIN: zigzag 2^32 - 1 = ff ff ff ff 0f. */
    static const uint8_t min[] = {0xff, 0xff, 0xff, 0xff, 0x0f};
    s3l__tdec_init(&d, min, sizeof(min), 0);
    assert_int_equal(s3l__tdec_i32(&d, &v), 0);
    assert_int_equal(v, INT32_MIN);
}

/*
 * struct {1: i32 = 2; 3: binary = "ab"; 100: i64 = -1 (long form); 101: bool = true;
 *         102: double = 1.5; 103: list<i32> = [1, -1]; 104: struct {1: bool false} }
 */
static const uint8_t sample[] = {
    0x15, 0x04,                         /* delta 1, I32; zigzag(2) = 4 */
    0x28, 0x02, 'a', 'b',               /* delta 2, BINARY; length 2 */
    0x06, 0xc8, 0x01, 0x01,             /* long form I64, id zigzag(100) = 200; zigzag(-1) = 1 */
    0x11,                               /* delta 1, BOOLEAN_TRUE */
    0x17, 0, 0, 0, 0, 0, 0, 0xf8, 0x3f, /* delta 1, DOUBLE 1.5 little-endian */
    0x19, 0x25, 0x02, 0x01,             /* delta 1, LIST; 2 elements of I32: 1, -1 */
    0x1c, 0x12, 0x00,                   /* delta 1, STRUCT { delta 1 BOOLEAN_FALSE } */
    0x00,                               /* stop */
};

static int walk_sample(struct s3l_tdec *d)
{
    struct s3l_tdec_field f;
    int32_t i32 = 0;
    int64_t i64 = 0;
    double dbl = 0;
    struct s3l_slice s;
    int rc = s3l__tdec_struct_begin(d);
    while (rc == 0 && (rc = s3l__tdec_field(d, &f)) == 0 && f.type != S3L_TDEC_STOP) {
        switch (f.id) {
        case 1: rc = s3l__tdec_i32(d, &i32); break;
        case 3: rc = s3l__tdec_binary(d, &s); break;
        case 100: rc = s3l__tdec_i64(d, &i64); break;
        case 102: rc = s3l__tdec_double(d, &dbl); break;
        default: rc = s3l__tdec_skip_field(d, &f); break;
        }
    }
    return rc ? rc : s3l__tdec_struct_end(d);
}

static void struct_fields_short_and_long(void **state)
{
    (void)state;
    struct s3l_tdec d;
    struct s3l_tdec_field f;
    int32_t i32;
    int64_t i64;
    double dbl;
    struct s3l_slice s;
    uint8_t et;
    uint32_t n;
    s3l__tdec_init(&d, sample, sizeof(sample), 0);
    assert_int_equal(s3l__tdec_struct_begin(&d), 0);
    assert_int_equal(s3l__tdec_field(&d, &f), 0);
    assert_int_equal(f.id, 1);
    assert_int_equal(s3l__tdec_expect(&d, &f, S3L_TDEC_I32), 0);
    assert_int_equal(s3l__tdec_i32(&d, &i32), 0);
    assert_int_equal(i32, 2);
    assert_int_equal(s3l__tdec_field(&d, &f), 0);
    assert_int_equal(f.id, 3);
    assert_int_equal(s3l__tdec_binary(&d, &s), 0);
    assert_true(s3l_slice_eq_cstr(s, "ab"));
    assert_int_equal(s3l__tdec_field(&d, &f), 0);
    assert_int_equal(f.id, 100);
    assert_int_equal(f.type, S3L_TDEC_I64);
    assert_int_equal(s3l__tdec_i64(&d, &i64), 0);
    assert_int_equal(i64, -1);
    assert_int_equal(s3l__tdec_field(&d, &f), 0);
    assert_int_equal(f.id, 101);
    assert_true(f.bool_value);
    assert_int_equal(s3l__tdec_expect(&d, &f, S3L_TDEC_TRUE), 0);
    assert_int_equal(s3l__tdec_field(&d, &f), 0);
    assert_int_equal(f.id, 102);
    assert_int_equal(s3l__tdec_double(&d, &dbl), 0);
    assert_true(dbl == 1.5);
    assert_int_equal(s3l__tdec_field(&d, &f), 0);
    assert_int_equal(f.id, 103);
    assert_int_equal(s3l__tdec_list_begin(&d, &et, &n), 0);
    assert_int_equal(et, S3L_TDEC_I32);
    assert_int_equal(n, 2);
    assert_int_equal(s3l__tdec_i32(&d, &i32), 0);
    assert_int_equal(i32, 1);
    assert_int_equal(s3l__tdec_i32(&d, &i32), 0);
    assert_int_equal(i32, -1);
    assert_int_equal(s3l__tdec_list_end(&d), 0);
    assert_int_equal(s3l__tdec_field(&d, &f), 0);
    assert_int_equal(f.id, 104);
    /* The wrong expectation is corrupt, not a misread. */
    assert_int_equal(s3l__tdec_expect(&d, &f, S3L_TDEC_I32), S3L_ECORRUPT);
    assert_string_equal(d.error_what, "field of unexpected type");
}

static void skip_everything_and_truncations(void **state)
{
    (void)state;
    struct s3l_tdec d;
    s3l__tdec_init(&d, sample, sizeof(sample), 0);
    assert_int_equal(s3l__tdec_skip_struct(&d), 0);
    assert_int_equal(d.pos, sizeof(sample));
    assert_int_equal(d.depth, 0);
    s3l__tdec_init(&d, sample, sizeof(sample), 0);
    assert_int_equal(walk_sample(&d), 0);
    /* Every proper prefix is corrupt, and the failure lies within the prefix. */
    for (size_t len = 0; len < sizeof(sample); len++) {
        uint8_t *copy = malloc(len ? len : 1);
        memcpy(copy, sample, len);
        s3l__tdec_init(&d, copy, len, 0);
        assert_int_equal(s3l__tdec_skip_struct(&d), S3L_ECORRUPT);
        assert_true(d.error_pos <= len);
        s3l__tdec_init(&d, copy, len, 0);
        assert_int_equal(walk_sample(&d), S3L_ECORRUPT);
        free(copy);
    }
}

static void skip_map_set_uuid(void **state)
{
    (void)state;
    /* struct {1: map<binary,i32> {"k": 1}; 2: set<i8> {7}; 3: uuid; 4: map {} } */
    uint8_t b[64];
    size_t n = 0;
    b[n++] = 0x1b;                               /* delta 1, MAP */
    b[n++] = 0x01;                               /* size 1 */
    b[n++] = 0x85;                               /* key BINARY, value I32 */
    b[n++] = 0x01;
    b[n++] = 'k';
    b[n++] = 0x02;                               /* zigzag(1) */
    b[n++] = 0x1a;                               /* delta 1, SET */
    b[n++] = 0x13;                               /* 1 element of I8 */
    b[n++] = 7;
    b[n++] = 0x1d;                               /* delta 1, UUID */
    memset(b + n, 0xab, 16);
    n += 16;
    b[n++] = 0x1b;                               /* delta 1, MAP: empty */
    b[n++] = 0x00;
    b[n++] = 0x00;                               /* stop */
    struct s3l_tdec d;
    s3l__tdec_init(&d, b, n, 0);
    assert_int_equal(s3l__tdec_skip_struct(&d), 0);
    assert_int_equal(d.pos, n);
    /* A map claiming more pairs than bytes is corrupt. */
    static const uint8_t bad[] = {0x1b, 0x7f, 0x55, 0x02, 0x02, 0x00};
    s3l__tdec_init(&d, bad, sizeof(bad), 0);
    assert_int_equal(s3l__tdec_skip_struct(&d), S3L_ECORRUPT);
    assert_string_equal(d.error_what, "map count beyond the buffer");
}

static void depth_is_bounded(void **state)
{
    (void)state;
    /* 200 nested structs, each "field 1 is a struct": 0x1c repeated. */
    uint8_t b[400];
    memset(b, 0x1c, 200);
    memset(b + 200, 0x00, 200);
    struct s3l_tdec d;
    s3l__tdec_init(&d, b, sizeof(b), 16);
    assert_int_equal(s3l__tdec_skip_struct(&d), S3L_ECORRUPT);
    assert_string_equal(d.error_what, "nesting too deep");
    assert_int_equal(d.error_pos, 16);
    /* The same within the limit decodes. */
    s3l__tdec_init(&d, b + 200 - 10, 10 + 11, 16);
    assert_int_equal(s3l__tdec_skip_struct(&d), 0);
    /* Lists nest too: a list of lists of lists ... (0x19 then 0x19 ...). */
    uint8_t l[300];
    l[0] = 0x19;
    memset(l + 1, 0x19, 299); /* each: 1 element of type LIST */
    s3l__tdec_init(&d, l, sizeof(l), 0);
    assert_int_equal(s3l__tdec_skip_struct(&d), S3L_ECORRUPT);
}

static void list_counts_and_bools(void **state)
{
    (void)state;
    struct s3l_tdec d;
    uint8_t et;
    uint32_t n;
    /* Long form: 0xf5 then varint 1000000 with 2 bytes left. */
    static const uint8_t huge[] = {0xf5, 0xc0, 0x84, 0x3d, 0x00, 0x00};
    s3l__tdec_init(&d, huge, sizeof(huge), 0);
    assert_int_equal(s3l__tdec_list_begin(&d, &et, &n), S3L_ECORRUPT);
    assert_string_equal(d.error_what, "list count beyond the buffer");
    /* Long form with 15 elements of bool written as 1/2 (C++) and 0 (spec). */
    uint8_t b[17] = {0xf2, 15};
    for (int i = 0; i < 15; i++)
        b[2 + i] = (uint8_t)(i % 3);
    s3l__tdec_init(&d, b, sizeof(b), 0);
    assert_int_equal(s3l__tdec_list_begin(&d, &et, &n), 0);
    assert_int_equal(n, 15);
    assert_int_equal(et, S3L_TDEC_FALSE);
    for (int i = 0; i < 15; i++) {
        bool v;
        assert_int_equal(s3l__tdec_bool_elem(&d, &v), 0);
        assert_int_equal(v, i % 3 == 1);
    }
    assert_int_equal(s3l__tdec_list_end(&d), 0);
    static const uint8_t three[] = {3};
    bool v;
    s3l__tdec_init(&d, three, 1, 0);
    assert_int_equal(s3l__tdec_bool_elem(&d, &v), S3L_ECORRUPT);
    /* An unknown element type (14) is corrupt. */
    static const uint8_t unk[] = {0x1e, 0x00};
    s3l__tdec_init(&d, unk, sizeof(unk), 0);
    assert_int_equal(s3l__tdec_list_begin(&d, &et, &n), S3L_ECORRUPT);
}

static void field_ids_and_messages(void **state)
{
    (void)state;
    struct s3l_tdec d;
    struct s3l_tdec_field f;
    /* Long form with id 0 (zigzag 0) is out of range for parquet.thrift. */
    static const uint8_t zero[] = {0x05, 0x00, 0x02, 0x00};
    s3l__tdec_init(&d, zero, sizeof(zero), 0);
    assert_int_equal(s3l__tdec_struct_begin(&d), 0);
    assert_int_equal(s3l__tdec_field(&d, &f), S3L_ECORRUPT);
    struct s3l_error err = {0};
    assert_int_equal(s3l__tdec_error(&d, 1000, "f.parquet: FileMetaData", &err), S3L_ECORRUPT);
    assert_string_equal(err.message,
                        "f.parquet: FileMetaData: corrupt thrift at offset 1002: field id out of "
                        "range");
    /* Type 14 and 15 are unknown field types. */
    static const uint8_t t15[] = {0x1f};
    s3l__tdec_init(&d, t15, 1, 0);
    assert_int_equal(s3l__tdec_skip_struct(&d), S3L_ECORRUPT);
    assert_string_equal(d.error_what, "unknown field type");
    /* Reading a field outside a struct is a usage error reported as corrupt, not a crash. */
    s3l__tdec_init(&d, t15, 1, 0);
    assert_int_equal(s3l__tdec_field(&d, &f), S3L_ECORRUPT);
    /* A NULL buffer decodes as empty. */
    s3l__tdec_init(&d, NULL, 5, 0);
    assert_int_equal(s3l__tdec_skip_struct(&d), S3L_ECORRUPT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(varint_spec_example),
        cmocka_unit_test(varint_limits),
        cmocka_unit_test(zigzag_table),
        cmocka_unit_test(struct_fields_short_and_long),
        cmocka_unit_test(skip_everything_and_truncations),
        cmocka_unit_test(skip_map_set_uuid),
        cmocka_unit_test(depth_is_bounded),
        cmocka_unit_test(list_counts_and_bools),
        cmocka_unit_test(field_ids_and_messages),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
