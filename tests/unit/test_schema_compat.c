/*
 * Unit tests of schema/compat.c: which inferred types fit a recorded column (s3l__type_fits),
 * table-driven with the expected answers written by hand from the rules in
 * docs/internals/schema.md, and the fitting of an inference sample's schema to a schema record
 * (s3l__schema_fit_sample): recorded order kept, fitting types kept, a type that does not fit
 * taken from the sample (for the merge to report as drift), new columns appended.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "schema/schema_int.h"

static void type_of(const char *text, struct s3l_type *t)
{
    struct s3l_error err = {0};
    if (s3l__type_parse(text, strlen(text), t, &err) != 0)
        fail_msg("%s: %s", text, err.message);
}

static void fits_table(void **state)
{
    (void)state;
    static const struct {
        const char *in, *rec;
        bool fits;      /* from JSON */
        int csv;        /* from CSV (all text): -1 as from JSON */
    } cases[] = {
        {"int64", "int64", true, -1},
        {"int64", "int8", true, -1}, /* range-checked per value by the converter */
        {"int64", "uint32", true, -1},
        {"int64", "double", true, -1},
        {"int64", "float", true, -1},
        {"int64", "decimal128(18, 3)", true, -1},
        {"int64", "string", true, -1}, /* a JSON number keeps its text */
        {"double", "double", true, -1},
        {"double", "float", false, -1},
        {"double", "int64", false, -1},
        {"double", "decimal128(18, 3)", false, -1},
        {"date32[day]", "timestamp[us]", true, -1},
        {"timestamp[ms]", "timestamp[us, tz=UTC]", true, -1},
        {"date32[day]", "string", true, -1}, /* "2024-01-01" is text */
        {"timestamp[us]", "date32[day]", false, -1},
        {"string", "date32[day]", false, -1},
        {"bool", "string", false, true}, /* JSON true is not text; CSV true is */
        {"timestamp[us]", "string", true, -1},
        {"double", "string", true, -1},
        {"decimal128(38, 0)", "string", true, -1},
        {"struct<a: int64>", "string", false, false},
        {"list<item: string>", "string", false, false},
        {"string", "timestamp[us]", false, -1}, /* text into a timestamp is drift */
        {"string", "int64", false, -1},
        {"string", "json", true, -1},
        {"struct<a: int64>", "json", true, -1},
        {"struct<a: int64, b: string>", "struct<a: double, c: bool>", true, -1},
        {"struct<a: double>", "struct<a: int64>", false, -1},
        {"list<item: int64>", "list<item: double>", true, -1},
        {"list<item: double>", "list<item: int64>", false, -1},
        {"map<string, int64>", "map<string, decimal128(20, 2)>", true, -1},
        {"list<item: int64>", "struct<a: int64>", false, -1},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct s3l_type in, rec;
        type_of(cases[i].in, &in);
        type_of(cases[i].rec, &rec);
        bool csv = cases[i].csv < 0 ? cases[i].fits : cases[i].csv;
        if (s3l__type_fits(&in, &rec, false) != cases[i].fits)
            fail_msg("JSON %s into %s: expected %s", cases[i].in, cases[i].rec,
                     cases[i].fits ? "fits" : "does not fit");
        if (s3l__type_fits(&in, &rec, true) != csv)
            fail_msg("CSV %s into %s: expected %s", cases[i].in, cases[i].rec,
                     csv ? "fits" : "does not fit");
        s3l__type_cleanup(&in);
        s3l__type_cleanup(&rec);
    }
    /* No value seen yet fits anything. */
    struct s3l_type none = {0}, rec;
    type_of("date32[day]", &rec);
    assert_true(s3l__type_fits(&none, &rec, false));
    s3l__type_cleanup(&rec);
}

static struct s3l_schema *schema_of(const char *json)
{
    struct s3l_schema *s = NULL;
    struct s3l_error err = {0};
    if (s3l_schema_from_json(json, strlen(json), &s, &err) != 0)
        fail_msg("%s", err.message);
    return s;
}

static void fit_sample_keeps_record_order_and_types(void **state)
{
    (void)state;
    struct s3l_schema *rec = schema_of("[{\"name\": \"a\", \"type\": \"double\"},"
                                       " {\"name\": \"b\", \"type\": \"timestamp[us]\"},"
                                       " {\"name\": \"c\", \"type\": \"int64\", \"nullable\": false},"
                                       " {\"name\": \"d\", \"type\": \"string\"}]");
    struct s3l_schema *inf = schema_of("[{\"name\": \"e\", \"type\": \"bool\"},"
                                       " {\"name\": \"c\", \"type\": \"string\"},"
                                       " {\"name\": \"a\", \"type\": \"int64\"},"
                                       " {\"name\": \"b\", \"type\": \"date32\"},"
                                       " {\"name\": \"f\", \"type\": \"int64\"}]");
    struct s3l_error err = {0};
    assert_int_equal(s3l__schema_fit_sample(rec, inf, false, &err), 0);
    char *text = NULL;
    size_t len = 0;
    assert_int_equal(s3l_schema_to_json(rec, &text, &len), 0);
    /* a: int64 fits double, kept; b: date32 fits timestamp, kept; c: string does not fit int64,
     * the sample's type, nullable as the sample; d: not in the sample, kept; e, f appended. */
    assert_string_equal(
        text, "[\n"
              "  {\"name\": \"a\", \"type\": \"double\", \"nullable\": true, \"key\": false},\n"
              "  {\"name\": \"b\", \"type\": \"timestamp[us]\", \"nullable\": true, "
              "\"key\": false},\n"
              "  {\"name\": \"c\", \"type\": \"string\", \"nullable\": true, \"key\": false},\n"
              "  {\"name\": \"d\", \"type\": \"string\", \"nullable\": true, \"key\": false},\n"
              "  {\"name\": \"e\", \"type\": \"bool\", \"nullable\": true, \"key\": false},\n"
              "  {\"name\": \"f\", \"type\": \"int64\", \"nullable\": true, \"key\": false}\n"
              "]\n");
    s3l_free(text);
    s3l_schema_free(rec);
    s3l_schema_free(inf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fits_table),
        cmocka_unit_test(fit_sample_keeps_record_order_and_types),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
