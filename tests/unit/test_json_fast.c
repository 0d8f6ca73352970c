/*
 * Unit tests of the converter's fast path for NDJSON lines (src/lib/input/json/fast.c): which lines it
 * takes and which it leaves to the generic path, the exact sink calls for the lines it takes
 * (expectations computed by hand: 2001-01-01 is day 11323, so "2001-01-01 00:01:00" is
 * 978307260 s; 2024-02-29 is day 19782; 2024-01-01T00:00:00Z is 1704067200 s; 12:00:00.5 is
 * 43200.5 s), and for every line that s3l__convert_line gives the same calls, result and message
 * as scanning the line and calling s3l_convert.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "input/json/json.h"
#include "input/value.h"
#include "log_sink.h"

/* ---- fixture ------------------------------------------------------------------------------- */

static const char SCHEMA[] =
    "[{\"name\": \"id\", \"type\": \"int64\", \"key\": true},"
    " {\"name\": \"name\", \"type\": \"string\"},"
    " {\"name\": \"score\", \"type\": \"double\"},"
    " {\"name\": \"ok\", \"type\": \"bool\"},"
    " {\"name\": \"d\", \"type\": \"date32[day]\"},"
    " {\"name\": \"ts\", \"type\": \"timestamp[us]\"},"
    " {\"name\": \"tz\", \"type\": \"timestamp[us, tz=UTC]\"},"
    " {\"name\": \"small\", \"type\": \"int8\"},"
    " {\"name\": \"n\", \"type\": \"uint32\"},"
    " {\"name\": \"t\", \"type\": \"time64[us]\"},"
    " {\"name\": \"dec\", \"type\": \"decimal128(10, 2)\"},"
    " {\"name\": \"tags\", \"type\": \"list<item: string>\"}]";

static struct s3l_schema *schema;

static int setup(void **state)
{
    (void)state;
    struct s3l_error err = {0};
    return s3l_schema_from_json(SCHEMA, strlen(SCHEMA), &schema, &err);
}

static int teardown(void **state)
{
    (void)state;
    s3l_schema_free(schema);
    return 0;
}

static struct s3l_record line_record(const char *line)
{
    struct s3l_record rec = {0};
    rec.raw = line;
    rec.raw_len = strlen(line);
    rec.line = 7;
    rec.offset = 1000;
    rec.end_offset = 1000 + rec.raw_len + 1;
    rec.source = "in.ndjson";
    return rec;
}

/* The generic path: scan the line, then s3l_convert. Its result, log and message. */
static int generic(const char *line, struct log_sink *out, struct s3l_error *err)
{
    struct s3l_converter *c = NULL;
    assert_int_equal(s3l_converter_new(schema, NULL, &c, err), 0);
    struct s3l__jscan scan;
    s3l__jscan_init(&scan, 0);
    struct s3l_record rec = line_record(line);
    int rc = s3l__record_scan(&scan, &rec, rec.offset, err);
    if (rc == 1) {
        struct s3l_row_sink sink = {&log_ops, out};
        rc = s3l_convert(c, &rec, &sink, err);
    }
    s3l__jscan_cleanup(&scan);
    s3l_converter_free(c);
    return rc;
}

/*
 * Checks one line: whether the fast path takes it (and then its log is `want`, unless NULL),
 * and that s3l__convert_line agrees with the generic path in result, log and message. The
 * converter is reused over two calls, so hints learnt from one line serve the next.
 */
static void check(const char *line, bool fast, const char *want)
{
    struct s3l_error err = {0}, gerr = {0};
    struct s3l_converter *c = NULL;
    assert_int_equal(s3l_converter_new(schema, NULL, &c, &err), 0);
    for (int round = 0; round < 2; round++) {
        struct s3l_record rec = line_record(line);
        struct log_sink a = {0}, b = {0}, g = {0};
        struct s3l_row_sink sa = {&log_ops, &a}, sb = {&log_ops, &b};
        int rc = s3l__convert_fast(c, &rec, &sa, &err);
        if (fast) {
            if (rc != 0)
                fail_msg("fast path refused: %s", line);
            if (want && strcmp(a.log, want) != 0)
                fail_msg("line %s\n got  %s\n want %s", line, a.log, want);
        } else {
            if (rc != S3L__CONVERT_FALLBACK)
                fail_msg("fast path took: %s", line);
            assert_string_equal(a.log, ""); /* nothing was written */
        }
        memset(&err, 0, sizeof(err));
        memset(&gerr, 0, sizeof(gerr));
        int lrc = s3l__convert_line(c, &rec, &sb, &err);
        int grc = generic(line, &g, &gerr);
        if (grc == 1)
            grc = 0;
        assert_int_equal(lrc, grc);
        assert_string_equal(b.log, g.log);
        assert_string_equal(err.message, gerr.message);
        if (fast)
            assert_string_equal(b.log, a.log);
    }
    s3l_converter_free(c);
}

/* ---- tests --------------------------------------------------------------------------------- */

static void test_flat_rows_take_the_fast_path(void **state)
{
    (void)state;
    check("{\"id\":1,\"name\":\"a\",\"score\":1.5,\"ok\":true,\"d\":\"2024-02-29\","
          "\"ts\":\"2001-01-01 00:01:00\",\"tz\":\"2024-01-01T00:00:00Z\",\"small\":-128,"
          "\"n\":4294967295,\"t\":\"12:00:00.5\"}",
          true,
          "begin int:1 bytes:61 dbl:1.5 bool:1 int:19782 int:978307260000000 "
          "int:1704067200000000 int:-128 uint:4294967295 int:43200500000 null null end");
    /* keys in another order, white space everywhere, missing keys, explicit nulls */
    check(" { \"small\" : 127 , \"id\" : -9223372036854775808 ,\"dec\":null,\"tags\":null }\t\r",
          true, "begin int:-9223372036854775808 null null null null null null int:127 null null "
          "null null end");
    /* an integer and an exponent into double, a number into a string keeps its text,
     * false into a string is its text, valid non-ASCII UTF-8 */
    check("{\"id\":0,\"score\":-2,\"name\":1e3}", true,
          "begin int:0 bytes:316533 dbl:-2 null null null null null null null null null end");
    check("{\"id\":2,\"score\":2.5e-3,\"name\":false}", true,
          "begin int:2 bytes:66616c7365 dbl:0.0025000000000000001 null null null null null null "
          "null null null end");
    check("{\"id\":3,\"name\":\"caf\xc3\xa9 \xe2\x82\xac\"}", true,
          "begin int:3 bytes:636166c3a920e282ac null null null null null null null null null "
          "null end");
    /* 19 digits go through s3l__parse_int; an empty object fails on the key column */
    check("{\"id\":1234567890123456789}", true,
          "begin int:1234567890123456789 null null null null null null null null null null null "
          "end");
    check("{\"id\":4,\"ts\":\"2001-01-01T00:01:00.123456\",\"d\":\"2001-01-01\"}", true,
          "begin int:4 null null null int:11323 int:978307260123456 null null null null null "
          "null end");
}

static void test_other_lines_fall_back(void **state)
{
    (void)state;
    const char *lines[] = {
        "{\"id\":1,\"name\":\"a\\\"b\"}",           /* an escape in a value */
        "{\"i\\u0064\":1}",                          /* an escape in a key */
        "{\"id\":1,\"tags\":[\"x\"]}",               /* a nested value */
        "{\"id\":1,\"zz\":2}",                       /* an unknown key (ignored, counted) */
        "{\"id\":1,\"id\":2}",                       /* a repeated key (the last one wins) */
        "{\"id\":1,\"small\":128}",                  /* out of int8's range */
        "{\"id\":1.5}",                              /* a fraction into an integer */
        "{\"id\":1e2}",                              /* an exponent into an integer */
        "{\"id\":\"12\"}",                           /* text holding a number (a coercion) */
        "{\"name\":\"x\"}",                          /* the key column missing */
        "{\"id\":null}",                             /* a null key */
        "{\"id\":01}",                               /* a leading zero: not JSON */
        "{\"id\":1,}",                               /* a trailing comma */
        "{\"id\":1} x",                              /* something after the object */
        "{\"id\":1,\"name\":\"\xff\"}",              /* invalid UTF-8 */
        "{\"id\":1,\"name\":\"a\tb\"}",              /* a raw control character */
        "{\"id\":1,\"ok\":\"true\"}",                /* a string into bool */
        "{\"id\":1,\"d\":\"2023-02-29\"}",           /* no such day */
        "{\"id\":1,\"ts\":\"2001-01-01 00:01:00.1234567\"}", /* finer than the unit */
        "{\"id\":1,\"n\":-1}",                       /* negative into uint32 */
        "{\"id\":1,\"score\":1e999}",                /* past a double's range */
        "{\"id\":1,\"dec\":1.25}",                   /* decimal: left to the generic path */
        "[1,2]",                                     /* not an object */
        "{\"id\":1",                                 /* cut short */
        "{\"id\":tru}",                              /* a bad literal */
        "",
    };
    for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++)
        check(lines[i], false, NULL);
}

/* Dates repeat from line to line (the fast path keeps the last date part): a change of day
 * in between must be seen. */
static void test_date_cache_follows_the_day(void **state)
{
    (void)state;
    struct s3l_error err = {0};
    struct s3l_converter *c = NULL;
    assert_int_equal(s3l_converter_new(schema, NULL, &c, &err), 0);
    /* Whole timestamps repeat too (the fast path keeps the last one read): a repeat, a change
     * of second, minute or year only, and a return to an earlier one must all be seen. */
    const char *lines[] = {
        "{\"id\":1,\"ts\":\"2001-01-01 00:01:00\"}", "{\"id\":1,\"ts\":\"2001-01-02 00:01:00\"}",
        "{\"id\":1,\"ts\":\"2001-01-02 23:59:59\"}", "{\"id\":1,\"ts\":\"2000-02-29 00:00:00\"}",
        "{\"id\":1,\"ts\":\"2000-02-29 00:00:00\"}", "{\"id\":1,\"ts\":\"2000-02-29 00:00:01\"}",
        "{\"id\":1,\"ts\":\"2000-02-29 00:01:01\"}", "{\"id\":1,\"ts\":\"2001-02-28 00:01:01\"}",
        "{\"id\":1,\"ts\":\"2001-01-01 00:01:00\"}",
    };
    /* by hand: days since 1970 * 86400 + seconds of the day */
    const long long want[] = {978307260, 978393660, 978479999, 951782400, 951782400,
                              951782401, 951782461, 983318461, 978307260};
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        struct s3l_record rec = line_record(lines[i]);
        struct log_sink a = {0};
        struct s3l_row_sink sa = {&log_ops, &a};
        assert_int_equal(s3l__convert_fast(c, &rec, &sa, &err), 0);
        char exp[64];
        snprintf(exp, sizeof(exp), " int:%lld000000 ", want[i]);
        if (!strstr(a.log, exp))
            fail_msg("%s: %s lacks %s", lines[i], a.log, exp);
    }
    s3l_converter_free(c);
}

/* A column name that needs an escape in JSON is never matched on raw bytes. */
static void test_names_needing_escapes(void **state)
{
    (void)state;
    static const char s[] = "[{\"name\": \"a\\\\b\", \"type\": \"int64\"},"
                            " {\"name\": \"q\\\"\", \"type\": \"int64\"}]";
    struct s3l_schema *sc = NULL;
    struct s3l_error err = {0};
    assert_int_equal(s3l_schema_from_json(s, strlen(s), &sc, &err), 0);
    struct s3l_converter *c = NULL;
    assert_int_equal(s3l_converter_new(sc, NULL, &c, &err), 0);
    const char *lines[] = {"{\"a\\\\b\":1}", "{\"a\\b\":1}", "{\"q\\\"\":2}"};
    for (int round = 0; round < 2; round++) {
        for (size_t i = 0; i < 3; i++) {
            struct s3l_record rec = line_record(lines[i]);
            struct log_sink a = {0};
            struct s3l_row_sink sa = {&log_ops, &a};
            assert_int_equal(s3l__convert_fast(c, &rec, &sa, &err), S3L__CONVERT_FALLBACK);
            assert_int_equal(s3l__convert_line(c, &rec, &sa, &err), 0);
        }
    }
    s3l_converter_free(c);
    s3l_schema_free(sc);
}

/* A number rounds to the nearest value of a float column's type (IEEE 754, ties to even):
 * FLT_MAX's usual printed form 3.4028235e38 is in range (2^128 - 2^103 = 3.4028235677973366e38 is
 * the first magnitude that rounds to infinity), 3.4028236e38 is not; binary16 takes up to 65520
 * exclusive (65504 + half its last unit, 32). Both paths agree. */
static void test_float_ranges(void **state)
{
    (void)state;
    static const char s[] = "[{\"name\": \"f\", \"type\": \"float\"},"
                            " {\"name\": \"h\", \"type\": \"halffloat\"}]";
    struct s3l_schema *sc = NULL;
    struct s3l_error err = {0};
    assert_int_equal(s3l_schema_from_json(s, strlen(s), &sc, &err), 0);
    struct s3l_converter *c = NULL;
    assert_int_equal(s3l_converter_new(sc, NULL, &c, &err), 0);
    const struct {
        const char *line;
        int rc;
    } cases[] = {
        {"{\"f\":3.4028235e38}", 0},  {"{\"f\":-3.4028235e38}", 0},
        {"{\"f\":3.4028236e38}", S3L_EINVALID_INPUT}, {"{\"h\":65519}", 0},
        {"{\"h\":65520}", S3L_EINVALID_INPUT}, {"{\"h\":-65504}", 0},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct s3l_record rec = line_record(cases[i].line);
        struct log_sink a = {0};
        struct s3l_row_sink sa = {&log_ops, &a};
        memset(&err, 0, sizeof(err));
        int fast = s3l__convert_fast(c, &rec, &sa, &err);
        assert_int_equal(fast, cases[i].rc ? S3L__CONVERT_FALLBACK : 0);
        memset(&err, 0, sizeof(err));
        if (s3l__convert_line(c, &rec, &sa, &err) != cases[i].rc)
            fail_msg("%s: %s", cases[i].line, err.message);
        if (cases[i].rc)
            assert_non_null(strstr(err.message, "out of range"));
    }
    s3l_converter_free(c);
    s3l_schema_free(sc);
}

/* Integers of 1 to 20 digits, every digit in every place, signed, then followed by each byte a
 * number may meet: the fast path takes up to 19 digits into int64 with the value strtoll gives,
 * and the rest (past int64, a fraction or an exponent into an integer, a leading zero) falls
 * back. */
static void test_numbers_of_every_length(void **state)
{
    (void)state;
    static const char *after[] = {"}", ",\"small\":1}", " }", ".5}", "e2}", "x}"};
    for (int nd = 1; nd <= 20; nd++) {
        for (int d = 0; d <= 9; d++) {
            char digits[24];
            for (int i = 0; i < nd; i++)
                digits[i] = (char)('0' + (i == 0 ? (d ? d : 1) : (d + i * 7) % 10));
            digits[nd] = '\0';
            for (int neg = 0; neg <= 1; neg++) {
                for (size_t a = 0; a < sizeof(after) / sizeof(after[0]); a++) {
                    char line[96], want[128];
                    snprintf(line, sizeof(line), "{\"id\":%s%s%s", neg ? "-" : "", digits,
                             after[a]);
                    bool more = after[a][0] == '.' || after[a][0] == 'e' || after[a][0] == 'x';
                    errno = 0;
                    long long v = strtoll(line + 6, NULL, 10);
                    bool fast = !more && errno == 0; /* 19 digits past int64: the generic path */
                    if (fast) {
                        snprintf(want, sizeof(want),
                                 "begin int:%lld null null null null null null %s null null null "
                                 "null end",
                                 v, after[a][0] == ',' ? "int:1" : "null");
                    }
                    check(line, fast, fast ? want : NULL);
                }
            }
        }
    }
    check("{\"id\":0}", true,
          "begin int:0 null null null null null null null null null null null end");
    check("{\"id\":-0,\"small\":00}", false, NULL); /* a leading zero in the second */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_flat_rows_take_the_fast_path),
        cmocka_unit_test(test_other_lines_fall_back),
        cmocka_unit_test(test_date_cache_follows_the_day),
        cmocka_unit_test(test_names_needing_escapes),
        cmocka_unit_test(test_float_ranges),
        cmocka_unit_test(test_numbers_of_every_length),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
