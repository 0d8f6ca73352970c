/*
 * Unit tests of the JSON scanner against RFC 8259 (grammar, escapes, surrogate pairs) and
 * RFC 3629 section 4 (well-formed UTF-8). Each case gives the text and either the compact JSON the
 * tape writes back (written by hand) or the byte offset and expectation of the failure.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "input/json/json.h"

#define VALUE "a value (object, array, string, number, true, false, null)"
#define LOW_SURROGATE "a low surrogate \\uDC00-\\uDFFF after a high one"
#define ESCAPES "an escape \\\" \\\\ \\/ \\b \\f \\n \\r \\t or \\uXXXX"
#define NO_CONTROL "no control character in a string (escape it)"

static const char *scan_n(const char *text, size_t len)
{
    static char out[4096];
    struct s3l__jscan s;
    s3l__jscan_init(&s, 0);
    int rc = s3l__json_scan(&s, text, len);
    if (rc) {
        snprintf(out, sizeof(out), "ERR %zu %s", s.err_pos, s.err_what ? s.err_what : "?");
    } else {
        struct s3l_buf b;
        s3l_buf_init(&b, sizeof(out) - 1);
        assert_int_equal(s3l__json_write(&b, s.tape, 0), 0);
        assert_int_equal(s.tape[0].end, s.n);
        memcpy(out, b.ptr, b.len + 1);
        s3l_buf_free(&b);
    }
    s3l__jscan_cleanup(&s);
    return out;
}

static const char *scan(const char *text)
{
    return scan_n(text, strlen(text));
}

static void valid_documents(void **state)
{
    (void)state;
    assert_string_equal(scan("{}"), "{}");
    assert_string_equal(scan(" \t{ \"a\" : 1 , \"b\":[true,false,null, -0.5e+3, 0, -0] }\r\n"),
                        "{\"a\":1,\"b\":[true,false,null,-0.5e+3,0,-0]}");
    assert_string_equal(scan("{\"a\":{\"b\":{\"c\":[[],{}]}}}"), "{\"a\":{\"b\":{\"c\":[[],{}]}}}");
    assert_string_equal(scan("[1,2]"), "[1,2]");
    assert_string_equal(scan("\"x\""), "\"x\"");
    assert_string_equal(scan("{\"a\":\"\\u00e9\\n\\t\\\"\\\\\\/\\b\\f\\r\"}"),
                        "{\"a\":\"\xc3\xa9\\n\\t\\\"\\\\/\\b\\f\\r\"}");
    /* U+1F600 as a surrogate pair and as raw UTF-8 */
    assert_string_equal(scan("{\"e\":\"\\ud83d\\ude00\xf0\x9f\x98\x80\"}"),
                        "{\"e\":\"\xf0\x9f\x98\x80\xf0\x9f\x98\x80\"}");
    assert_string_equal(scan("{\"nul\":\"a\\u0000b\"}"), "{\"nul\":\"a\\u0000b\"}");
    assert_string_equal(scan("{\"long\":\"abcdefghijklmnopqrstuvwxyz0123456789\"}"),
                        "{\"long\":\"abcdefghijklmnopqrstuvwxyz0123456789\"}");
    /* Each UTF-8 length, including the limits of RFC 3629's table. */
    assert_string_equal(scan("[\"\xc2\x80\xdf\xbf\xe0\xa0\x80\xed\x9f\xbf\xee\x80\x80\xf0\x90\x80"
                             "\x80\xf4\x8f\xbf\xbf\"]"),
                        "[\"\xc2\x80\xdf\xbf\xe0\xa0\x80\xed\x9f\xbf\xee\x80\x80\xf0\x90\x80"
                        "\x80\xf4\x8f\xbf\xbf\"]");
}

static void tape_shape(void **state)
{
    (void)state;
    struct s3l__jscan s;
    s3l__jscan_init(&s, 0);
    const char *t = "{\"a\":[1,2.5],\"b\":\"x\\ty\"}";
    assert_int_equal(s3l__json_scan(&s, t, strlen(t)), 0);
    assert_int_equal(s.n, 7);
    assert_int_equal(s.tape[0].kind, S3L_VALUE_OBJECT);
    assert_int_equal(s.tape[0].len, 2);
    assert_int_equal(s.tape[1].kind, S3L_VALUE_STRING); /* key "a" */
    assert_int_equal(s.tape[2].kind, S3L_VALUE_ARRAY);
    assert_int_equal(s.tape[2].end, 5);
    assert_int_equal(s.tape[3].flags, S3L_VALUE_INT);
    assert_int_equal(s.tape[4].flags, 0);
    assert_memory_equal(s.tape[4].str, "2.5", 3);
    assert_int_equal(s.tape[4].pos, 8);
    assert_int_equal(s.tape[6].len, 3);
    assert_memory_equal(s.tape[6].str, "x\ty", 3);
    assert_ptr_equal(s.tape[1].str, t + 2); /* no escape: points into the text */
    s3l__jscan_cleanup(&s);
}

static void invalid_documents(void **state)
{
    (void)state;
    assert_string_equal(scan(""), "ERR 0 " VALUE);
    assert_string_equal(scan("{"), "ERR 1 a member name in double quotes");
    assert_string_equal(scan("{\"a\" 1}"), "ERR 5 ':' after the member name");
    assert_string_equal(scan("{\"a\":1,}"), "ERR 7 a member name in double quotes");
    assert_string_equal(scan("[1,]"), "ERR 3 " VALUE);
    assert_string_equal(scan("{\"a\":1 \"b\":2}"), "ERR 7 ',' or '}'");
    assert_string_equal(scan("[1 2]"), "ERR 3 ',' or ']'");
    assert_string_equal(scan("{} {}"), "ERR 3 the end of the record after the value");
    assert_string_equal(scan("[01]"), "ERR 2 ',' or ']'");
    assert_string_equal(scan("[1.]"), "ERR 3 a digit after '.'");
    assert_string_equal(scan("[1e]"), "ERR 3 a digit in the exponent");
    assert_string_equal(scan("[-]"), "ERR 2 a digit");
    assert_string_equal(scan("[+1]"), "ERR 1 " VALUE);
    assert_string_equal(scan("[NaN]"), "ERR 1 " VALUE);
    assert_string_equal(scan("[tru]"), "ERR 1 " VALUE);
    assert_string_equal(scan("['a']"), "ERR 1 " VALUE);
    assert_string_equal(scan("[\"abc"), "ERR 1 a closing '\"' of this string");
    assert_string_equal(scan("[\"a\tb\"]"), "ERR 3 " NO_CONTROL);
    assert_string_equal(scan("[\"\\x\"]"), "ERR 2 " ESCAPES);
    assert_string_equal(scan("[\"\\u12G4\"]"), "ERR 2 four hex digits after \\u");
    assert_string_equal(scan("[\"\\udc00\"]"),
                        "ERR 2 a \\u escape that is not a lone low surrogate");
    assert_string_equal(scan("[\"\\ud800x\"]"), "ERR 2 " LOW_SURROGATE);
    assert_string_equal(scan("[\"\\ud800\\u0041\"]"), "ERR 2 " LOW_SURROGATE);
    /* Ill-formed UTF-8: overlong, surrogate, past U+10FFFF, stray continuation, truncated. */
    assert_string_equal(scan("[\"\xc0\xaf\"]"), "ERR 2 valid UTF-8");
    assert_string_equal(scan("[\"\xe0\x80\xaf\"]"), "ERR 2 valid UTF-8");
    assert_string_equal(scan("[\"\xed\xa0\x80\"]"), "ERR 2 valid UTF-8");
    assert_string_equal(scan("[\"\xf4\x90\x80\x80\"]"), "ERR 2 valid UTF-8");
    assert_string_equal(scan("[\"abcdefgh\x80\"]"), "ERR 10 valid UTF-8");
    assert_string_equal(scan("[\"\xe2\x82\"]"), "ERR 2 valid UTF-8");
    assert_string_equal(scan("[\xc3\xa9]"), "ERR 1 " VALUE);
    assert_string_equal(scan("[\xff]"), "ERR 1 valid UTF-8");
    assert_string_equal(scan_n("[\"a\0b\"]", 6), "ERR 3 " NO_CONTROL);
    char deep[2100];
    memset(deep, '[', 1001);
    deep[1001] = 0;
    assert_string_equal(scan(deep), "ERR 1000 nesting at most 1000 deep");
}

static void value_bound(void **state)
{
    (void)state;
    struct s3l__jscan s;
    s3l__jscan_init(&s, 4);
    assert_int_equal(s3l__json_scan(&s, "[1,2,3]", 7), 0);
    assert_int_equal(s3l__json_scan(&s, "[1,2,3,4]", 9), S3L_ETOO_LARGE);
    s3l__jscan_cleanup(&s);
}

static void utf8_and_string_writer(void **state)
{
    (void)state;
    size_t bad = 99;
    assert_true(s3l__utf8_valid((const uint8_t *)"plain ascii text", 16, &bad));
    assert_false(s3l__utf8_valid((const uint8_t *)"0123456789\xc3", 11, &bad));
    assert_int_equal(bad, 10);
    struct s3l_buf b;
    s3l_buf_init(&b, 100);
    assert_int_equal(s3l__json_write_string(&b, "a\"\\\x01\n\xc3\xa9", 7), 0);
    assert_string_equal((char *)b.ptr, "\"a\\\"\\\\\\u0001\\n\xc3\xa9\"");
    s3l_buf_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(valid_documents),   cmocka_unit_test(tape_shape),
        cmocka_unit_test(invalid_documents), cmocka_unit_test(value_bound),
        cmocka_unit_test(utf8_and_string_writer),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
