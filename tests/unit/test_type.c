/*
 * Unit tests of Arrow type names: every accepted spelling parses, and prints back exactly the
 * string arrow::DataType::ToString prints (expected strings written by hand from Arrow's
 * type.cc conventions: "list<item: int64>", "timestamp[us, tz=UTC]", "decimal128(18, 3)"), and the
 * widening lattice used by inference.
 */
#include <setjmp.h>
#include <stdio.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "schema/schema_int.h"

/* Parses text and returns its printed form (static buffer), or the error message. */
static const char *roundtrip(const char *text)
{
    static char out[600];
    struct s3l_error err = {0};
    struct s3l_type t;
    if (s3l__type_parse(text, strlen(text), &t, &err) != 0) {
        snprintf(out, sizeof(out), "ERR %s", err.message);
        return out;
    }
    size_t n = s3l__type_format(&t, out, sizeof(out));
    assert_true(n < sizeof(out));
    struct s3l_type c;
    assert_int_equal(s3l__type_copy(&c, &t), 0);
    assert_true(s3l__type_equal(&c, &t));
    s3l__type_cleanup(&c);
    s3l__type_cleanup(&t);
    return out;
}

static void canonical_names_round_trip(void **state)
{
    (void)state;
    static const char *const names[] = {
        "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
        "halffloat", "float", "double", "string", "binary", "fixed_size_binary[16]", "uuid",
        "json", "date32[day]", "time32[s]", "time32[ms]", "time64[us]", "time64[ns]",
        "timestamp[s]", "timestamp[ms]", "timestamp[us]", "timestamp[ns]",
        "timestamp[us, tz=UTC]", "timestamp[ns, tz=Europe/Paris]", "timestamp[ms, tz=+01:00]",
        "decimal128(18, 3)", "decimal128(38, 0)", "decimal128(1, 1)",
        "interval[month_day_nano]", "list<item: int64>", "list<item: int64 not null>",
        "list<item: list<item: string>>", "struct<a: int64, b: string>", "struct<>",
        "struct<a: struct<b: list<item: double not null>> not null, c: bool>",
        "map<string, int64>", "map<int32, list<item: string>>", "map<string, double not null>",
        "list<element: int32>",
    };
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        assert_string_equal(roundtrip(names[i]), names[i]);
}

static void aliases_normalise(void **state)
{
    (void)state;
    static const char *const pairs[][2] = {
        {"utf8", "string"},
        {"str", "string"},
        {"boolean", "bool"},
        {"float16", "halffloat"},
        {"f2", "halffloat"},
        {"float32", "float"},
        {"f4", "float"},
        {"float64", "double"},
        {"f8", "double"},
        {"i8", "int64"},
        {"u1", "uint8"},
        {"date32", "date32[day]"},
        {"month_day_nano_interval", "interval[month_day_nano]"},
        {"decimal(10,2)", "decimal128(10, 2)"},
        {" list< int64 > ", "list<item: int64>"},
        {"timestamp[us,tz=UTC]", "timestamp[us, tz=UTC]"},
        {"struct<a:int64,b:utf8 not null>", "struct<a: int64, b: string not null>"},
        {"map<utf8,i8>", "map<string, int64>"},
        {"struct<\"a:b\": int64, \"x y\": bool>", "struct<\"a:b\": int64, x y: bool>"},
        {"struct<\"t\\u0009ab\": int64>", "struct<\"t\\u0009ab\": int64>"},
        {"struct<caf\xc3\xa9: int64>", "struct<caf\xc3\xa9: int64>"},
    };
    for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++)
        assert_string_equal(roundtrip(pairs[i][0]), pairs[i][1]);
}

static void bad_names_are_explained(void **state)
{
    (void)state;
    assert_string_equal(roundtrip("int"),
                        "ERR type \"int\": expected a sized integer type (int32 or int64; \"int\" "
                        "is ambiguous) at offset 0 (\"int\")");
    assert_string_equal(roundtrip("timestamp[xs]"),
                        "ERR type \"timestamp[xs]\": expected a unit s, ms, us or ns at offset "
                        "10 (\"xs]\")");
    assert_string_equal(roundtrip("time32[us]"),
                        "ERR type \"time32[us]\": expected a unit s or ms at offset 7 (\"us]\")");
    assert_string_equal(roundtrip("decimal128(39, 2)"),
                        "ERR type \"decimal128(39, 2)\": expected a precision 1..38 at offset 13 "
                        "(\", 2)\")");
    assert_string_equal(roundtrip("decimal128(5, 6)"),
                        "ERR type \"decimal128(5, 6)\": expected a scale 0..precision at offset 15 "
                        "(\")\")");
    assert_string_equal(roundtrip("list<int64"),
                        "ERR type \"list<int64\": expected '>' at the end");
    assert_string_equal(roundtrip("int64 x"),
                        "ERR type \"int64 x\": expected the end of the type at offset 6 (\"x\")");
    assert_string_equal(roundtrip("struct<a: int64, a: string>"),
                        "ERR type \"struct<a: int64, a: string>\": expected distinct struct field "
                        "names at offset 26 (\">\")");
    assert_string_equal(roundtrip("map<list<int64>, int64>"),
                        "ERR type \"map<list<int64>, int64>\": expected a primitive map key type "
                        "at offset 22 (\">\")");
    assert_string_equal(roundtrip(""), "ERR type \"\": expected a type name at the end");
    assert_string_equal(roundtrip("timestamp[us, tz=Europe Paris]"),
                        "ERR type \"timestamp[us, tz=Europe Paris]\": expected a time zone name "
                        "(letters, digits, / _ + - : .) at offset 23 (\" Paris]\")");
    assert_string_equal(roundtrip("struct<a\tb: int64>"),
                        "ERR type \"struct<a\tb: int64>\": expected no control character in a "
                        "field name (quote and escape it) at offset 8 (\"\tb: int64>\")");
    assert_string_equal(roundtrip("struct<\"\xff\": int64>"),
                        "ERR type \"struct<\"\xff\": int64>\": expected a field name in valid "
                        "UTF-8 at offset 10 (\": int64>\")");
    assert_string_equal(roundtrip("struct<\"\\u0000\": int64>"),
                        "ERR type \"struct<\"\\u0000\": int64>\": expected a \\u00XX escape "
                        "(01..7f) at offset 10 (\"0000\": int64>\")");
    char deep[400] = "";
    for (int i = 0; i < 70; i++)
        strcat(deep, "list<");
    assert_memory_equal(roundtrip(deep), "ERR type", 8);
}

static void format_truncates_like_snprintf(void **state)
{
    (void)state;
    struct s3l_type t;
    struct s3l_error err = {0};
    const char *s = "struct<a: int64, b: string>";
    assert_int_equal(s3l__type_parse(s, strlen(s), &t, &err), 0);
    char small[8];
    assert_int_equal(s3l__type_format(&t, small, sizeof(small)), strlen(s));
    assert_string_equal(small, "struct<");
    assert_int_equal(s3l__type_format(&t, NULL, 0), strlen(s));
    s3l__type_cleanup(&t);
}

static const char *widen(const char *a, const char *b)
{
    static char out[256];
    struct s3l_type ta = {0}, tb = {0}, tw;
    struct s3l_error err = {0};
    if (*a)
        assert_int_equal(s3l__type_parse(a, strlen(a), &ta, &err), 0);
    if (*b)
        assert_int_equal(s3l__type_parse(b, strlen(b), &tb, &err), 0);
    assert_int_equal(s3l__type_widen(&ta, &tb, &tw), 0);
    s3l__type_format(&tw, out, sizeof(out));
    s3l__type_cleanup(&ta);
    s3l__type_cleanup(&tb);
    s3l__type_cleanup(&tw);
    return out;
}

static void widening_lattice(void **state)
{
    (void)state;
    assert_string_equal(widen("int64", "double"), "double");
    assert_string_equal(widen("double", "int64"), "double");
    assert_string_equal(widen("", "int64"), "int64");
    assert_string_equal(widen("bool", ""), "bool");
    assert_string_equal(widen("int64", "string"), "string");
    assert_string_equal(widen("bool", "int64"), "string");
    /* Decimals keep every digit of both sides when 38 suffice (an integer has 19); fractions
     * with them make double, as ints with floats do. */
    assert_string_equal(widen("int64", "decimal128(38, 0)"), "decimal128(38, 0)");
    assert_string_equal(widen("decimal128(38, 0)", "int32"), "decimal128(38, 0)");
    assert_string_equal(widen("decimal128(10, 2)", "int64"), "decimal128(21, 2)");
    assert_string_equal(widen("decimal128(5, 1)", "decimal128(4, 3)"), "decimal128(7, 3)");
    assert_string_equal(widen("decimal128(38, 20)", "int64"), "double");
    assert_string_equal(widen("decimal128(38, 0)", "double"), "double");
    assert_string_equal(widen("float", "decimal128(38, 0)"), "double");
    assert_string_equal(widen("decimal128(38, 0)", "string"), "string");
    assert_string_equal(widen("date32[day]", "timestamp[us]"), "timestamp[us]");
    assert_string_equal(widen("date32[day]", "timestamp[us, tz=UTC]"), "string");
    assert_string_equal(widen("timestamp[us]", "timestamp[us, tz=UTC]"), "string");
    assert_string_equal(widen("struct<a: int64, b: string>", "struct<c: bool, a: double>"),
                        "struct<a: double, b: string, c: bool>");
    assert_string_equal(widen("list<item: int64>", "list<item: double>"), "list<item: double>");
    assert_string_equal(widen("list<item: int64>", "int64"), "json");
    assert_string_equal(widen("struct<a: int64>", "string"), "json");
    assert_string_equal(widen("json", "int64"), "json");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(canonical_names_round_trip),
        cmocka_unit_test(aliases_normalise),
        cmocka_unit_test(bad_names_are_explained),
        cmocka_unit_test(format_truncates_like_snprintf),
        cmocka_unit_test(widening_lattice),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
