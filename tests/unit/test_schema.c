/*
 * Unit tests of schemas: the declared-schema JSON (parse, errors naming the column, round trip
 * through s3l_schema_to_json with the exact text written by hand) and the schema-record merge:
 * added columns appended, drift refused with the message the issue asks for, drift allowed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "schema/schema_int.h"

static struct s3l_schema *parse_ok(const char *json)
{
    struct s3l_schema *s = NULL;
    struct s3l_error err = {0};
    int rc = s3l_schema_from_json(json, strlen(json), &s, &err);
    if (rc)
        fail_msg("%s", err.message);
    return s;
}

static const char *parse_err(const char *json)
{
    static struct s3l_error err;
    memset(&err, 0, sizeof(err));
    struct s3l_schema *s = NULL;
    assert_int_equal(s3l_schema_from_json(json, strlen(json), &s, &err), S3L_EINVALID_CONFIG);
    assert_null(s);
    return err.message;
}

static void declared_schema_parses_and_round_trips(void **state)
{
    (void)state;
    struct s3l_schema *s =
        parse_ok("[{\"name\": \"ts\", \"type\": \"timestamp[us, tz=UTC]\", \"nullable\": true, "
                 "\"key\": false},"
                 " {\"name\": \"id\", \"type\": \"i8\", \"key\": true},"
                 " {\"name\": \"tags\", \"type\": \"list<utf8>\"},"
                 " {\"name\": \"caf\\u00e9 \\\"x\\\"\", \"type\": \"decimal128(18, 3)\", "
                 "\"nullable\": false}]");
    assert_int_equal(s->n_fields, 4);
    assert_int_equal(s->fields[1].type.id, S3L_TYPE_INT64);
    assert_true(s->fields[1].key);
    assert_false(s->fields[1].nullable); /* key defaults to not null */
    assert_true(s->fields[2].nullable);
    assert_int_equal(s3l_schema_find(s, "tags", 4), 2);
    assert_int_equal(s3l_schema_find(s, "tag", 3), -1);
    char *text;
    size_t len;
    assert_int_equal(s3l_schema_to_json(s, &text, &len), 0);
    assert_string_equal(
        text, "[\n"
              "  {\"name\": \"ts\", \"type\": \"timestamp[us, tz=UTC]\", \"nullable\": true, "
              "\"key\": false},\n"
              "  {\"name\": \"id\", \"type\": \"int64\", \"nullable\": false, \"key\": true},\n"
              "  {\"name\": \"tags\", \"type\": \"list<item: string>\", \"nullable\": true, "
              "\"key\": false},\n"
              "  {\"name\": \"caf\xc3\xa9 \\\"x\\\"\", \"type\": \"decimal128(18, 3)\", "
              "\"nullable\": false, "
              "\"key\": false}\n"
              "]\n");
    assert_int_equal(len, strlen(text));
    struct s3l_schema *back = parse_ok(text);
    assert_int_equal(back->n_fields, s->n_fields);
    for (size_t i = 0; i < s->n_fields; i++) {
        assert_string_equal(back->fields[i].name, s->fields[i].name);
        assert_true(s3l__type_equal(&back->fields[i].type, &s->fields[i].type));
        assert_int_equal(back->fields[i].nullable, s->fields[i].nullable);
        assert_int_equal(back->fields[i].key, s->fields[i].key);
    }
    s3l_free(text);
    s3l_schema_free(back);
    struct s3l_schema *obj = parse_ok("{\"columns\": [{\"name\": \"a\", \"type\": \"bool\"}]}");
    assert_int_equal(obj->n_fields, 1);
    s3l_schema_free(obj);
    s3l_schema_free(s);
    struct s3l_schema *empty = s3l_schema_new();
    assert_int_equal(s3l_schema_to_json(empty, &text, &len), 0);
    assert_string_equal(text, "[]\n");
    s3l_free(text);
    s3l_schema_free(empty);
}

static void declared_schema_errors_name_the_column(void **state)
{
    (void)state;
    assert_string_equal(parse_err("[{\"name\": \"a\", \"type\": \"int\"}]"),
                        "schema column 0 (\"a\"): type \"int\": expected a sized integer type "
                        "(int32 or int64; \"int\" is ambiguous) at offset 0 (\"int\")");
    assert_string_equal(parse_err("[{\"name\": \"a\", \"type\": \"int64\"}, {\"name\": \"a\", "
                                  "\"type\": \"string\"}]"),
                        "schema column 1: the name \"a\" is used twice");
    assert_string_equal(parse_err("[{\"name\": \"\", \"type\": \"int64\"}]"),
                        "schema column 0: \"name\" must be a non-empty string");
    assert_string_equal(parse_err("[{\"name\": \"k\", \"type\": \"int64\", \"key\": true, "
                                  "\"nullable\": true}]"),
                        "schema column 0 (\"k\"): a key column cannot be nullable");
    assert_string_equal(parse_err("[{\"name\": \"a\", \"type\": \"int64\", \"nulable\": true}]"),
                        "schema column 0 (\"a\"): unknown member \"nulable\" (expected name, "
                        "type, nullable, key)");
    assert_string_equal(parse_err("[{\"name\": \"a\", \"type\": 5}]"),
                        "schema column 0 (\"a\"): \"type\" must be a string");
    assert_string_equal(parse_err("{\"a\": 1}"),
                        "schema: expected a list of columns [{\"name\", \"type\"}, ...]");
    assert_string_equal(parse_err("[1]"),
                        "schema column 0: expected an object {\"name\", \"type\"}");
    assert_memory_equal(parse_err("[{\"name\": \"a\""), "schema: line 1, column 13: ", 27);
}

static struct s3l_schema *sch(const char *json)
{
    return parse_ok(json);
}

/* A recorded key column stays a required key when the incoming schema (inferred: every column
 * nullable, no keys) has it as nullable, also with type changes allowed; the merged record must
 * read back. */
static void merge_keeps_key_columns_required(void **state)
{
    (void)state;
    struct s3l_schema *rec = sch("[{\"name\": \"id\", \"type\": \"int64\", \"key\": true},"
                                 " {\"name\": \"v\", \"type\": \"int64\"}]");
    struct s3l_schema *in = sch("[{\"name\": \"id\", \"type\": \"int64\"},"
                                " {\"name\": \"v\", \"type\": \"string\"}]");
    struct s3l_schema_merge_options opt = {"t", "file:///lake/_openetl/schemas/t.json", true};
    struct s3l_schema *m = NULL;
    bool changed = false;
    assert_int_equal(s3l_schema_merge(rec, in, &opt, &m, &changed, NULL), 0);
    assert_true(changed);
    char *text;
    size_t len;
    assert_int_equal(s3l_schema_to_json(m, &text, &len), 0);
    assert_string_equal(text, "[\n"
                              "  {\"name\": \"id\", \"type\": \"int64\", \"nullable\": false, "
                              "\"key\": true},\n"
                              "  {\"name\": \"v\", \"type\": \"string\", \"nullable\": true, "
                              "\"key\": false}\n"
                              "]\n");
    struct s3l_schema *back = NULL;
    struct s3l_error err = {0};
    assert_int_equal(s3l_schema_from_json(text, len, &back, &err), 0);
    s3l_free(text);
    s3l_schema_free(back);
    s3l_schema_free(m);
    s3l_schema_free(in);
    s3l_schema_free(rec);
}

static void merge_appends_keeps_and_detects_drift(void **state)
{
    (void)state;
    struct s3l_schema *rec = sch("[{\"name\": \"a\", \"type\": \"int64\", \"nullable\": false},"
                                 " {\"name\": \"b\", \"type\": \"string\"}]");
    struct s3l_schema *in = sch("[{\"name\": \"c\", \"type\": \"bool\"},"
                                " {\"name\": \"b\", \"type\": \"string\"}]");
    struct s3l_schema_merge_options opt = {"ns/t", "file:///lake/_openetl/schemas/ns/t.json",
                                           false};
    struct s3l_schema *m = NULL;
    struct s3l_error err = {0};
    bool changed = false;
    assert_int_equal(s3l_schema_merge(rec, in, &opt, &m, &changed, &err), 0);
    assert_true(changed);
    char *text;
    size_t len;
    assert_int_equal(s3l_schema_to_json(m, &text, &len), 0);
    assert_string_equal(text, "[\n"
                              "  {\"name\": \"a\", \"type\": \"int64\", \"nullable\": true, "
                              "\"key\": false},\n"
                              "  {\"name\": \"b\", \"type\": \"string\", \"nullable\": true, "
                              "\"key\": false},\n"
                              "  {\"name\": \"c\", \"type\": \"bool\", \"nullable\": true, "
                              "\"key\": false}\n"
                              "]\n");
    s3l_free(text);

    /* Merging the result again changes nothing. */
    struct s3l_schema *m2 = NULL;
    assert_int_equal(s3l_schema_merge(m, in, &opt, &m2, &changed, &err), 0);
    assert_false(changed);
    s3l_schema_free(m2);

    struct s3l_schema *drift = sch("[{\"name\": \"a\", \"type\": \"string\"}]");
    assert_int_equal(s3l_schema_merge(m, drift, &opt, &m2, &changed, &err), S3L_ESCHEMA_DRIFT);
    assert_string_equal(err.message,
                        "table ns/t: column \"a\" changed type from int64 to string; remove "
                        "file:///lake/_openetl/schemas/ns/t.json to accept it, or allow type "
                        "changes (s3land write --type-changes allow)");
    opt.allow_type_changes = true;
    assert_int_equal(s3l_schema_merge(m, drift, &opt, &m2, &changed, NULL), 0);
    assert_true(changed);
    assert_int_equal(m2->fields[0].type.id, S3L_TYPE_UTF8);
    assert_int_equal(m2->n_fields, 3);
    s3l_schema_free(m2);

    /* No record yet: the incoming schema is the record. */
    assert_int_equal(s3l_schema_merge(NULL, in, &opt, &m2, &changed, NULL), 0);
    assert_true(changed);
    assert_int_equal(m2->n_fields, 2);
    s3l_schema_free(m2);

    s3l_schema_free(drift);
    s3l_schema_free(m);
    s3l_schema_free(in);
    s3l_schema_free(rec);
}

static void merge_nested_and_keys(void **state)
{
    (void)state;
    struct s3l_schema *rec = sch("[{\"name\": \"k\", \"type\": \"int64\", \"key\": true},"
                                 " {\"name\": \"s\", \"type\": \"struct<a: int64>\"}]");
    struct s3l_schema *grown = sch("[{\"name\": \"s\", \"type\": \"struct<a: int64, b: bool>\"}]");
    struct s3l_schema_merge_options opt = {"t", "file:///l/_openetl/schemas/t.json", false};
    struct s3l_schema *m = NULL;
    struct s3l_error err = {0};
    bool changed = false;
    /* A struct that gains a nullable field grows, like a table gaining a column (records written
     * before simply lack it); the missing key column stays a key. */
    assert_int_equal(s3l_schema_merge(rec, grown, &opt, &m, &changed, &err), 0);
    assert_true(changed);
    assert_true(m->fields[0].key);
    assert_false(m->fields[0].nullable);
    char tn[96];
    s3l__type_format(&m->fields[1].type, tn, sizeof(tn));
    assert_string_equal(tn, "struct<a: int64, b: bool>");
    /* Merging the grown record with the old incoming schema keeps b (a nested field missing from
     * incoming is kept, as a missing column is) and changes nothing. */
    struct s3l_schema *m2 = NULL;
    assert_int_equal(s3l_schema_merge(m, rec, &opt, &m2, &changed, &err), 0);
    assert_false(changed);
    s3l__type_format(&m2->fields[1].type, tn, sizeof(tn));
    assert_string_equal(tn, "struct<a: int64, b: bool>");
    s3l_schema_free(m2);
    s3l_schema_free(m);
    /* Growth at depth: a list of structs whose items gain a field, inside a struct. */
    struct s3l_schema *lr =
        sch("[{\"name\": \"l\", \"type\": \"struct<p: list<item: struct<x: int64>>>\"}]");
    struct s3l_schema *lg =
        sch("[{\"name\": \"l\", \"type\": \"struct<p: list<item: struct<x: int64, "
            "y: struct<z: string>>>>\"}]");
    assert_int_equal(s3l_schema_merge(lr, lg, &opt, &m, &changed, &err), 0);
    assert_true(changed);
    s3l__type_format(&m->fields[0].type, tn, sizeof(tn));
    assert_string_equal(tn, "struct<p: list<item: struct<x: int64, y: struct<z: string>>>>");
    s3l_schema_free(m);
    s3l_schema_free(lg);
    s3l_schema_free(lr);
    /* A nested field that changes type is drift, named by its column. */
    struct s3l_schema *ty = sch("[{\"name\": \"s\", \"type\": \"struct<a: string, b: bool>\"}]");
    assert_int_equal(s3l_schema_merge(rec, ty, &opt, &m, &changed, &err), S3L_ESCHEMA_DRIFT);
    assert_string_equal(err.message, "table t: column \"s\" changed type from struct<a: int64> to "
                                     "struct<a: string, b: bool>; remove "
                                     "file:///l/_openetl/schemas/t.json to accept it, or allow "
                                     "type changes (s3land write --type-changes allow)");
    opt.allow_type_changes = true;
    assert_int_equal(s3l_schema_merge(rec, ty, &opt, &m, &changed, NULL), 0);
    assert_true(changed);
    s3l__type_format(&m->fields[1].type, tn, sizeof(tn));
    assert_string_equal(tn, "struct<a: string, b: bool>");
    s3l_schema_free(m);
    s3l_schema_free(ty);
    /* A stricter nested field changes nothing (as a stricter column); a looser one widens. */
    opt.allow_type_changes = false;
    struct s3l_schema *st = sch("[{\"name\": \"s\", \"type\": \"struct<a: int64 not null>\"}]");
    assert_int_equal(s3l_schema_merge(rec, st, &opt, &m, &changed, &err), 0);
    assert_false(changed);
    s3l__type_format(&m->fields[1].type, tn, sizeof(tn));
    assert_string_equal(tn, "struct<a: int64>");
    struct s3l_schema *m3 = NULL;
    assert_int_equal(s3l_schema_merge(st, rec, &opt, &m3, &changed, &err), 0);
    assert_true(changed);
    s3l__type_format(&m3->fields[0].type, tn, sizeof(tn));
    assert_string_equal(tn, "struct<a: int64>");
    s3l_schema_free(m3);
    s3l_schema_free(m);
    s3l_schema_free(st);
    /* A new nested field that refuses nulls cannot be added: the records before it lack it. */
    struct s3l_schema *nn =
        sch("[{\"name\": \"s\", \"type\": \"struct<a: int64, c: int64 not null>\"}]");
    opt.allow_type_changes = false;
    s3l_error_clear(&err);
    assert_int_equal(s3l_schema_merge(rec, nn, &opt, &m, &changed, &err), S3L_ESCHEMA_DRIFT);
    s3l_schema_free(nn);
    s3l_schema_free(grown);
    s3l_schema_free(rec);
}

static void add_field_refuses_duplicates(void **state)
{
    (void)state;
    struct s3l_schema *s = s3l_schema_new();
    struct s3l_field f = {.name = "x", .type = {.id = S3L_TYPE_INT64}, .nullable = true};
    struct s3l_error err = {0};
    assert_int_equal(s3l__schema_add_field(s, &f, &err), 0);
    assert_int_equal(s3l__schema_add_field(s, &f, &err), S3L_EINVALID_ARGUMENT);
    assert_string_equal(err.message, "column \"x\" is already in the schema");
    struct s3l_schema *c = s3l_schema_copy(s);
    assert_int_equal(c->n_fields, 1);
    assert_string_equal(c->fields[0].name, "x");
    s3l_schema_free(c);
    s3l_schema_free(s);
    s3l_schema_free(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(declared_schema_parses_and_round_trips),
        cmocka_unit_test(declared_schema_errors_name_the_column),
        cmocka_unit_test(merge_appends_keeps_and_detects_drift),
        cmocka_unit_test(merge_keeps_key_columns_required),
        cmocka_unit_test(merge_nested_and_keys),
        cmocka_unit_test(add_field_refuses_duplicates),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
