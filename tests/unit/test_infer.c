/*
 * Unit tests of inference: NDJSON samples (ints mixed with floats, numbers mixed with strings,
 * ISO-8601 dates and timestamps with and without offsets, nested objects and arrays, all-null
 * columns that wait, objects with no typed member), the json-text option, CSV text shapes, and
 * typing a late value. Expected schemas are written by hand as Arrow type names.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "input/json/json.h"
#include "schema/schema_int.h"

/* Feeds every record of text (format fmt) to a new inference; returns "name: type, ..." and the
 * pending names after " | ". */
static const char *infer(const char *text, enum s3l_input_format fmt, bool as_json)
{
    static char out[1024];
    int p[2];
    assert_int_equal(pipe(p), 0);
    assert_int_equal(write(p[1], text, strlen(text)), (ssize_t)strlen(text));
    close(p[1]);
    struct s3l_reader_options ro = {.version = S3L_READER_OPTIONS_VERSION, .format = fmt};
    struct s3l_reader *r;
    struct s3l_error err = {0};
    assert_int_equal(s3l_reader_open(p[0], &ro, &r, &err), 0);
    struct s3l_infer_options io = {.version = S3L_INFER_OPTIONS_VERSION,
                                   .nested_as_json = as_json};
    struct s3l_infer *inf = s3l_infer_new(&io);
    struct s3l_record rec;
    int rc;
    while ((rc = s3l_reader_next(r, &rec, &err)) == 1)
        assert_int_equal(s3l_infer_add(inf, &rec), 0);
    assert_int_equal(rc, 0);
    struct s3l_schema *s;
    assert_int_equal(s3l_infer_schema(inf, &s), 0);
    out[0] = 0;
    for (size_t i = 0; i < s->n_fields; i++) {
        char tn[768];
        s3l__type_format(&s->fields[i].type, tn, sizeof(tn));
        assert_true(s->fields[i].nullable);
        snprintf(out + strlen(out), sizeof(out) - strlen(out), "%s%s: %s", i ? ", " : "",
                 s->fields[i].name, tn);
    }
    for (size_t i = 0; i < s3l_infer_n_pending(inf); i++)
        snprintf(out + strlen(out), sizeof(out) - strlen(out), "%s%s", i ? ", " : " | ",
                 s3l_infer_pending(inf, i));
    assert_null(s3l_infer_pending(inf, s3l_infer_n_pending(inf)));
    s3l_schema_free(s);
    s3l_infer_free(inf);
    s3l_reader_free(r);
    close(p[0]);
    return out;
}

static void ndjson_sample(void **state)
{
    (void)state;
    const char *nd =
        "{\"a\":1,\"b\":\"x\",\"c\":null,\"d\":\"2024-01-01\",\"e\":{\"x\":1,\"y\":null},"
        "\"f\":[1,2.5],\"g\":true,\"n\":{\"q\":null},\"l\":[null]}\n"
        "{\"a\":2.5,\"b\":3,\"c\":null,\"d\":\"2024-01-01T10:00:00\",\"e\":{\"x\":2,\"z\":\"s\"},"
        "\"f\":[],\"h\":\"2024-01-01T10:00:00Z\",\"i\":\"12345\",\"k\":9223372036854775808}\n";
    assert_string_equal(infer(nd, S3L_INPUT_NDJSON, false),
                        "a: double, b: string, d: timestamp[us], e: struct<x: int64, z: string>, "
                        "f: list<item: double>, g: bool, h: timestamp[us, tz=UTC], i: string, "
                        "k: decimal128(38, 0) | c, n, l"); /* k is past int64 */
    assert_string_equal(infer(nd, S3L_INPUT_NDJSON, true),
                        "a: double, b: string, d: timestamp[us], e: json, f: json, g: bool, "
                        "n: json, l: json, h: timestamp[us, tz=UTC], i: string, k: decimal128(38, 0) | c");
    /* A struct in one record and a scalar in another: json text. */
    assert_string_equal(infer("{\"v\":{\"a\":1}}\n{\"v\":2}\n", S3L_INPUT_NDJSON, false),
                        "v: json");
    assert_string_equal(infer("{\"v\":\"2024-01-01\"}\n{\"v\":\"2024-01-01T00:00:00+02:00\"}\n",
                              S3L_INPUT_NDJSON, false),
                        "v: string");
}

static void never_a_type_the_value_does_not_fit(void **state)
{
    (void)state;
    /* ns digits do not fit timestamp[us], 1e400 fits no double: both stay strings; a member
     * name that is empty or holds U+0000 cannot be a column name and is ignored. */
    assert_string_equal(infer("{\"t\":\"2024-01-01T00:00:00.123456789\",\"x\":1e400,\"\":3,"
                              "\"k\\u0000\":1,\"s\":{\"a\\u0000\":1,\"b\":2,\"\":4}}\n",
                              S3L_INPUT_NDJSON, false),
                        "t: string, x: string, s: struct<b: int64>");
    assert_string_equal(infer("c\n1e400\n2\n", S3L_INPUT_CSV, false), "c: string");
    /* Nesting deeper than 32 lists or structs becomes json text (type names stop at 64). */
    char deep[256] = "{\"a\":";
    for (int i = 0; i < 40; i++)
        strcat(deep, "[");
    strcat(deep, "1");
    for (int i = 0; i < 40; i++)
        strcat(deep, "]");
    strcat(deep, "}\n");
    const char *t = infer(deep, S3L_INPUT_NDJSON, false);
    assert_int_equal(strlen(t), strlen("a: ") + 32 * strlen("list<item: >") + strlen("json"));
    assert_non_null(strstr(t, "list<item: json>"));
}

/* Whole numbers past int64 (+-9223372036854775807 is its range) are decimal128(38, 0), so that
 * no value loses a digit; past 38 digits text; whole numbers mixed with fractions double, as
 * DuckDB infers them. */
static void big_integers(void **state)
{
    (void)state;
    assert_string_equal(infer("a\n9223372036854775807\n-9223372036854775808\n9223372036854775808\n",
                              S3L_INPUT_CSV, false),
                        "a: decimal128(38, 0)");
    assert_string_equal(infer("a,b,c,d\n-9223372036854775809,99999999999999999999999999999999999999,"
                              "1,1\n1,2,123456789012345678901234567890123456789,1e30\n",
                              S3L_INPUT_CSV, false),
                        "a: decimal128(38, 0), b: decimal128(38, 0), c: string, d: double");
    assert_string_equal(infer("{\"a\":1,\"b\":18446744073709551616,\"c\":1.5,\"d\":1}\n"
                              "{\"a\":9223372036854775808,\"b\":2.5,\"c\":99999999999999999999,"
                              "\"d\":1234567890123456789012345678901234567890}\n",
                              S3L_INPUT_NDJSON, false),
                        "a: decimal128(38, 0), b: double, c: double, d: string");
    /* Still text: leading zeros; still int64: the range's ends. */
    assert_string_equal(infer("a,b\n09223372036854775808,-9223372036854775808\n", S3L_INPUT_CSV,
                              false),
                        "a: string, b: int64");
}

static void csv_shapes(void **state)
{
    (void)state;
    const char *csv = "i,f,b,d,t,s,z,e,m\n"
                      "1,1.5,true,2024-01-01,2024-01-01 10:00:00,x,007,,1\n"
                      "-2,3,FALSE,2023-12-31,2024-01-01T10:00:00.5,4,010,,2.5\n";
    assert_string_equal(infer(csv, S3L_INPUT_CSV, false),
                        "i: int64, f: double, b: bool, d: date32[day], t: timestamp[us], "
                        "s: string, z: string, m: double | e");
}

static void late_value_typing(void **state)
{
    (void)state;
    struct s3l__jscan sc;
    s3l__jscan_init(&sc, 0);
    const char *j = "{\"late\":{\"a\":[{\"b\":\"2024-02-29\"}],\"c\":null}}";
    assert_int_equal(s3l__json_scan(&sc, j, strlen(j)), 0);
    struct s3l_type t;
    assert_int_equal(s3l__infer_value(sc.tape, 2, NULL, &t), 0);
    char tn[128];
    s3l__type_format(&t, tn, sizeof(tn));
    assert_string_equal(tn, "struct<a: list<item: struct<b: date32[day]>>>");
    s3l__type_cleanup(&t);
    struct s3l_infer_options ns = {.version = 1, .timestamp_unit = S3L_UNIT_NANO};
    j = "{\"t\":\"2024-01-01T00:00:00.123456789Z\", \"n\": null}";
    assert_int_equal(s3l__json_scan(&sc, j, strlen(j)), 0);
    assert_int_equal(s3l__infer_value(sc.tape, 2, &ns, &t), 0);
    s3l__type_format(&t, tn, sizeof(tn));
    assert_string_equal(tn, "timestamp[ns, tz=UTC]");
    s3l__type_cleanup(&t);
    assert_int_equal(s3l__infer_value(sc.tape, 4, &ns, &t), 0);
    assert_int_equal(t.id, 0);
    s3l__jscan_cleanup(&sc);
}

/* An object with no typed member ({} or {"c": null}) is still an object: beside a scalar, in one
 * list or across records, the column is json text (before: it was taken for a null, so
 * [1, {"c": null}] gave list<item: int64> and the converter then refused the object); beside a
 * struct it adds no field; alone it has no type yet, as a null. */
static void fieldless_objects_are_objects(void **state)
{
    (void)state;
    assert_string_equal(infer("{\"b\":[1,{\"c\":null}]}\n", S3L_INPUT_NDJSON, false),
                        "b: list<item: json>");
    assert_string_equal(infer("{\"b\":[{},1]}\n", S3L_INPUT_NDJSON, false),
                        "b: list<item: json>");
    assert_string_equal(infer("{\"a\":{\"b\":[1,{\"c\":null}]}}\n", S3L_INPUT_NDJSON, false),
                        "a: struct<b: list<item: json>>");
    assert_string_equal(infer("{\"a\":1}\n{\"a\":{}}\n", S3L_INPUT_NDJSON, false), "a: json");
    assert_string_equal(infer("{\"a\":{}}\n{\"a\":{\"b\":1}}\n", S3L_INPUT_NDJSON, false),
                        "a: struct<b: int64>");
    assert_string_equal(infer("{\"a\":{\"x\":{},\"y\":1},\"l\":[{}],\"e\":{}}\n",
                              S3L_INPUT_NDJSON, false),
                        "a: struct<y: int64> | l, e");
    assert_string_equal(infer("{\"a\":[{\"x\":null},{\"x\":2}]}\n", S3L_INPUT_NDJSON, false),
                        "a: list<item: struct<x: int64>>");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ndjson_sample),
        cmocka_unit_test(never_a_type_the_value_does_not_fit),
        cmocka_unit_test(big_integers),
        cmocka_unit_test(csv_shapes),
        cmocka_unit_test(late_value_typing),
        cmocka_unit_test(fieldless_objects_are_objects),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
