/*
 * Unit tests of the value coercions. Expected values are hand computations written down here:
 * 2024-01-01T00:00:00Z is 1704067200 s since the epoch (date -u -d 2024-01-01 +%s), 1900-01-01 is
 * 25567 days before it (2208988800 s, the NTP era offset), 10^38 is
 * 0x4B3B4CA85A86C47A098A224000000000 (the Decimal128 maximum + 1 used by Arrow's decimal.cc).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "input/value.h"
#include "schema/schema_int.h"

#define S(x) x, strlen(x)

static void civil_days(void **state)
{
    (void)state;
    assert_int_equal(s3l__days_from_civil(1970, 1, 1), 0);
    assert_int_equal(s3l__days_from_civil(1969, 12, 31), -1);
    assert_int_equal(s3l__days_from_civil(2000, 1, 1), 10957);
    assert_int_equal(s3l__days_from_civil(2024, 1, 1), 19723);
    assert_int_equal(s3l__days_from_civil(2024, 2, 29), 19782);
    assert_int_equal(s3l__days_from_civil(1900, 1, 1), -25567);
    assert_int_equal(s3l__days_from_civil(1900, 3, 1), -25508);
}

static int64_t ts(const char *s, enum s3l__time_kind k, enum s3l_time_unit u, bool *off)
{
    int64_t v = 0;
    const char *why = NULL;
    bool o;
    int rc = s3l__parse_time(s, strlen(s), k, u, &v, &o, &why);
    if (rc)
        fail_msg("%s: %s", s, why);
    if (off)
        *off = o;
    return v;
}

static const char *ts_err(const char *s, enum s3l__time_kind k, enum s3l_time_unit u)
{
    int64_t v;
    const char *why = NULL;
    bool o;
    assert_int_equal(s3l__parse_time(s, strlen(s), k, u, &v, &o, &why), S3L_EINVALID_INPUT);
    return why;
}

static void iso8601(void **state)
{
    (void)state;
    bool off;
    assert_int_equal(ts("2024-01-01", S3L__DATE, 0, NULL), 19723);
    assert_int_equal(ts("2024-01-01T00:00:00Z", S3L__TIMESTAMP, S3L_UNIT_MICRO, &off),
                     1704067200000000LL);
    assert_true(off);
    assert_int_equal(ts("2024-01-01T01:30:00+01:30", S3L__TIMESTAMP, S3L_UNIT_SECOND, NULL),
                     1704067200LL);
    assert_int_equal(ts("2023-12-31t19:00-0500", S3L__TIMESTAMP, S3L_UNIT_SECOND, NULL),
                     1704067200LL);
    assert_int_equal(ts("2024-01-01 00:00:00.123456", S3L__TIMESTAMP, S3L_UNIT_MICRO, &off),
                     1704067200123456LL);
    assert_false(off);
    assert_int_equal(ts("2024-01-01T00:00:00.123456789", S3L__TIMESTAMP, S3L_UNIT_NANO, NULL),
                     1704067200123456789LL);
    assert_int_equal(ts("2024-01-01T00:00:00.120", S3L__TIMESTAMP, S3L_UNIT_MILLI, NULL),
                     1704067200120LL);
    assert_int_equal(ts("2024-01-01", S3L__TIMESTAMP, S3L_UNIT_MILLI, NULL), 1704067200000LL);
    assert_int_equal(ts("1969-12-31T23:59:59.5Z", S3L__TIMESTAMP, S3L_UNIT_MILLI, NULL), -500);
    assert_int_equal(ts("12:34:56.789", S3L__TIME, S3L_UNIT_MILLI, NULL), 45296789);
    assert_int_equal(ts("00:01", S3L__TIME, S3L_UNIT_SECOND, NULL), 60);
    assert_string_equal(ts_err("2024-01-01T00:00:00.123456789", S3L__TIMESTAMP, S3L_UNIT_MICRO),
                        "a fraction finer than the column's unit");
    assert_string_equal(ts_err("2023-02-29", S3L__DATE, 0), "an ISO-8601 date YYYY-MM-DD");
    assert_string_equal(ts_err("2024-13-01", S3L__DATE, 0), "an ISO-8601 date YYYY-MM-DD");
    assert_string_equal(ts_err("2024-01-01T25:00", S3L__TIMESTAMP, S3L_UNIT_MICRO),
                        "an ISO-8601 timestamp YYYY-MM-DD[THH:MM:SS[.fraction][Z|+HH:MM]]");
    assert_string_equal(ts_err("2024-01-01T10:00+1", S3L__TIMESTAMP, S3L_UNIT_MICRO),
                        "an ISO-8601 timestamp YYYY-MM-DD[THH:MM:SS[.fraction][Z|+HH:MM]]");
    assert_string_equal(ts_err("9999-01-01", S3L__TIMESTAMP, S3L_UNIT_NANO),
                        "out of range for the column's unit");
    assert_string_equal(ts_err("12:60", S3L__TIME, S3L_UNIT_SECOND),
                        "an ISO-8601 time HH:MM:SS[.fraction]");
}

static void integers(void **state)
{
    (void)state;
    int64_t v;
    uint64_t u;
    const char *why;
    assert_int_equal(s3l__parse_int(S("9223372036854775807"), INT64_MIN, INT64_MAX, &v, &why), 0);
    assert_true(v == INT64_MAX);
    assert_int_equal(s3l__parse_int(S("-9223372036854775808"), INT64_MIN, INT64_MAX, &v, &why), 0);
    assert_true(v == INT64_MIN);
    assert_int_equal(s3l__parse_int(S("9223372036854775808"), INT64_MIN, INT64_MAX, &v, &why),
                     S3L_EINVALID_INPUT);
    assert_string_equal(why, "out of range");
    assert_int_equal(s3l__parse_int(S("1.5"), INT64_MIN, INT64_MAX, &v, &why), S3L_EINVALID_INPUT);
    assert_string_equal(why, "a fraction");
    assert_int_equal(s3l__parse_int(S("1.0"), INT64_MIN, INT64_MAX, &v, &why), 0);
    assert_int_equal(v, 1);
    assert_int_equal(s3l__parse_int(S("2e3"), INT64_MIN, INT64_MAX, &v, &why), 0);
    assert_int_equal(v, 2000);
    assert_int_equal(s3l__parse_int(S("-0"), INT64_MIN, INT64_MAX, &v, &why), 0);
    assert_int_equal(v, 0);
    assert_int_equal(s3l__parse_int(S("128"), -128, 127, &v, &why), S3L_EINVALID_INPUT);
    assert_int_equal(s3l__parse_int(S("-128"), -128, 127, &v, &why), 0);
    assert_int_equal(v, -128);
    assert_int_equal(s3l__parse_int(S("01"), INT64_MIN, INT64_MAX, &v, &why), S3L_EINVALID_INPUT);
    assert_string_equal(why, "not a number");
    assert_int_equal(s3l__parse_int(S("1e999999999999"), INT64_MIN, INT64_MAX, &v, &why),
                     S3L_EINVALID_INPUT);
    assert_int_equal(s3l__parse_int(S(" 1"), INT64_MIN, INT64_MAX, &v, &why), S3L_EINVALID_INPUT);
    assert_int_equal(s3l__parse_uint(S("18446744073709551615"), UINT64_MAX, &u, &why), 0);
    assert_true(u == UINT64_MAX);
    assert_int_equal(s3l__parse_uint(S("-1"), UINT64_MAX, &u, &why), S3L_EINVALID_INPUT);
    assert_int_equal(s3l__parse_uint(S("256"), 255, &u, &why), S3L_EINVALID_INPUT);
}

static void doubles(void **state)
{
    (void)state;
    double d;
    const char *why;
    assert_int_equal(s3l__parse_double(S("0.1"), &d, &why), 0);
    assert_true(d == 0.1);
    assert_int_equal(s3l__parse_double(S("-2.5e-3"), &d, &why), 0);
    assert_true(d == -0.0025);
    assert_int_equal(s3l__parse_double(S("1e400"), &d, &why), S3L_EINVALID_INPUT);
    assert_int_equal(s3l__parse_double(S("nan"), &d, &why), S3L_EINVALID_INPUT);
    assert_int_equal(s3l__parse_double(S("0x10"), &d, &why), S3L_EINVALID_INPUT);
    assert_int_equal(s3l__parse_double(S("1e-400"), &d, &why), 0);
    assert_true(d == 0.0);
}

static void decimals(void **state)
{
    (void)state;
    int64_t hi;
    uint64_t lo;
    const char *why;
    assert_int_equal(s3l__parse_decimal(S("123.45"), 18, 3, &hi, &lo, &why), 0);
    assert_int_equal(hi, 0);
    assert_int_equal(lo, 123450);
    assert_int_equal(s3l__parse_decimal(S("-1.5"), 18, 2, &hi, &lo, &why), 0);
    assert_int_equal(hi, -1);
    assert_true(lo == UINT64_MAX - 149);
    assert_int_equal(s3l__parse_decimal(S("1.2340"), 5, 3, &hi, &lo, &why), 0);
    assert_int_equal(lo, 1234);
    assert_int_equal(s3l__parse_decimal(S("1.2345"), 18, 3, &hi, &lo, &why), S3L_EINVALID_INPUT);
    assert_string_equal(why, "more fractional digits than the scale");
    assert_int_equal(s3l__parse_decimal(S("100.0"), 4, 2, &hi, &lo, &why), S3L_EINVALID_INPUT);
    assert_string_equal(why, "more digits than the precision");
    assert_int_equal(s3l__parse_decimal(S("99.99"), 4, 2, &hi, &lo, &why), 0);
    assert_int_equal(lo, 9999);
    assert_int_equal(s3l__parse_decimal(S("99999999999999999999999999999999999999"), 38, 0, &hi,
                                        &lo, &why), 0);
    assert_true((uint64_t)hi == 0x4B3B4CA85A86C47AULL);
    assert_true(lo == 0x098A223FFFFFFFFFULL);
    assert_int_equal(s3l__parse_decimal(S("1e38"), 38, 0, &hi, &lo, &why), S3L_EINVALID_INPUT);
    assert_int_equal(s3l__parse_decimal(S("0.000"), 3, 3, &hi, &lo, &why), 0);
    assert_int_equal(lo, 0);
    assert_int_equal(s3l__parse_decimal(S("12a"), 3, 3, &hi, &lo, &why), S3L_EINVALID_INPUT);
    assert_string_equal(why, "not a number");
}

static void shapes(void **state)
{
    (void)state;
    assert_int_equal(s3l__text_shape(S("123")), S3L__SHAPE_INT);
    assert_int_equal(s3l__text_shape(S("-7")), S3L__SHAPE_INT);
    assert_int_equal(s3l__text_shape(S("-1.5")), S3L__SHAPE_FLOAT);
    assert_int_equal(s3l__text_shape(S("1e3")), S3L__SHAPE_FLOAT);
    assert_int_equal(s3l__text_shape(S("1.0")), S3L__SHAPE_FLOAT);
    /* Whole numbers past int64: decimal128(38, 0) up to 38 digits, then text. */
    assert_int_equal(s3l__text_shape(S("99999999999999999999")), S3L__SHAPE_BIGINT);
    assert_int_equal(s3l__text_shape(S("9223372036854775808")), S3L__SHAPE_BIGINT);
    assert_int_equal(s3l__text_shape(S("-9223372036854775808")), S3L__SHAPE_INT);
    assert_int_equal(s3l__text_shape(S("-99999999999999999999999999999999999999")),
                     S3L__SHAPE_BIGINT);
    assert_int_equal(s3l__text_shape(S("100000000000000000000000000000000000000")),
                     S3L__SHAPE_TEXT);
    assert_int_equal(s3l__text_shape(S("1e30")), S3L__SHAPE_FLOAT);
    assert_int_equal(s3l__text_shape(S("True")), S3L__SHAPE_BOOL);
    assert_int_equal(s3l__text_shape(S("false")), S3L__SHAPE_BOOL);
    assert_int_equal(s3l__text_shape(S("2024-02-29")), S3L__SHAPE_DATE);
    assert_int_equal(s3l__text_shape(S("2023-02-29")), S3L__SHAPE_TEXT);
    assert_int_equal(s3l__text_shape(S("2024-01-01T10:00:00")), S3L__SHAPE_TIMESTAMP);
    assert_int_equal(s3l__text_shape(S("2024-01-01 10:00:00Z")), S3L__SHAPE_TIMESTAMP_TZ);
    assert_int_equal(s3l__text_shape(S("007")), S3L__SHAPE_TEXT);
    assert_int_equal(s3l__text_shape(S("")), S3L__SHAPE_TEXT);
    assert_int_equal(s3l__text_shape(S("NaN")), S3L__SHAPE_TEXT);
    assert_int_equal(s3l__text_shape(S("tru")), S3L__SHAPE_TEXT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(civil_days), cmocka_unit_test(iso8601),  cmocka_unit_test(integers),
        cmocka_unit_test(doubles),    cmocka_unit_test(decimals), cmocka_unit_test(shapes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
