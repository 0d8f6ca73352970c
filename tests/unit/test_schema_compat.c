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
    if (s3l_type_parse(text, strlen(text), t, &err) != 0)
        fail_msg("%s: %s", text, err.message);
}

static void fits_table(void **state)
{
    (void)state;
    static const struct {
        const char *in, *rec;
        bool fits;
    } cases[] = {
        {"int64", "int64", true},
        {"int64", "int8", true}, /* range-checked per value by the converter */
        {"int64", "uint32", true},
        {"int64", "double", true},
        {"int64", "float", true},
        {"int64", "decimal128(18, 3)", true},
        {"int64", "string", false},
        {"double", "double", true},
        {"double", "float", false},
        {"double", "int64", false},
        {"double", "decimal128(18, 3)", false},
        {"date32[day]", "timestamp[us]", true},
        {"timestamp[ms]", "timestamp[us, tz=UTC]", true},
        {"date32[day]", "string", false},
        {"timestamp[us]", "date32[day]", false},
        {"string", "date32[day]", false},
        {"bool", "string", false},
        {"string", "json", true},
        {"struct<a: int64>", "json", true},
        {"struct<a: int64, b: string>", "struct<a: double, c: bool>", true},
        {"struct<a: double>", "struct<a: int64>", false},
        {"list<item: int64>", "list<item: double>", true},
        {"list<item: double>", "list<item: int64>", false},
        {"map<string, int64>", "map<string, decimal128(20, 2)>", true},
        {"list<item: int64>", "struct<a: int64>", false},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct s3l_type in, rec;
        type_of(cases[i].in, &in);
        type_of(cases[i].rec, &rec);
        if (s3l__type_fits(&in, &rec) != cases[i].fits)
            fail_msg("%s into %s: expected %s", cases[i].in, cases[i].rec,
                     cases[i].fits ? "fits" : "does not fit");
        s3l_type_cleanup(&in);
        s3l_type_cleanup(&rec);
    }
    /* No value seen yet fits anything. */
    struct s3l_type none = {0}, rec;
    type_of("date32[day]", &rec);
    assert_true(s3l__type_fits(&none, &rec));
    s3l_type_cleanup(&rec);
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
    assert_int_equal(s3l__schema_fit_sample(rec, inf, &err), 0);
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
