/*
 * The schema as an embedder sees it: only the public header, where struct s3l_schema and struct
 * s3l_field are opaque (issue 9). A schema built column by column reads back through the
 * accessors, serialises to the same JSON as the same columns declared in JSON, and refuses what
 * s3l_schema_from_json refuses, with the same kind of message.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "s3l/alloc.h"
#include "s3l/schema.h"

static void built_reads_back_and_matches_declared(void **state)
{
    (void)state;
    struct s3l_error err = {0};
    struct s3l_schema *s = s3l_schema_new();
    assert_non_null(s);
    assert_int_equal(s3l_schema_add_column(s, "id", "int64", false, true, &err), 0);
    assert_int_equal(s3l_schema_add_column(s, "ts", "timestamp[us, tz=UTC]", true, false, &err), 0);
    /* a short form, read as Arrow prints it */
    assert_int_equal(s3l_schema_add_column(s, "tags", "list<item: utf8>", true, false, &err), 0);
    assert_int_equal(s3l_schema_add_column(s, "amount", "decimal128(18, 3)", false, false, &err),
                     0);
    assert_int_equal(s3l_schema_n_fields(s), 4);

    const struct s3l_field *f = s3l_schema_field(s, 0);
    assert_string_equal(s3l_field_name(f), "id");
    assert_true(s3l_field_key(f));
    assert_false(s3l_field_nullable(f));
    assert_int_equal(s3l_field_type_id(f), S3L_TYPE_INT64);

    f = s3l_schema_field(s, 1);
    char name[64];
    assert_int_equal(s3l_field_type_name(f, name, sizeof(name)), strlen("timestamp[us, tz=UTC]"));
    assert_string_equal(name, "timestamp[us, tz=UTC]");
    assert_int_equal(s3l_field_type_id(f), S3L_TYPE_TIMESTAMP);
    assert_true(s3l_field_nullable(f));

    f = s3l_schema_field(s, 2);
    assert_int_equal(s3l_field_type_id(f), S3L_TYPE_LIST);
    size_t need = s3l_field_type_name(f, NULL, 0); /* the length alone, like snprintf */
    assert_int_equal(need, strlen("list<item: string>"));
    char small[5];
    assert_int_equal(s3l_field_type_name(f, small, sizeof(small)), need);
    assert_string_equal(small, "list"); /* cut short, NUL-terminated */

    assert_int_equal(s3l_schema_find(s, "amount", 6), 3);
    assert_int_equal(s3l_schema_find(s, "nope", 4), -1);

    /* the same columns declared in JSON give the same schema record */
    const char *declared =
        "[{\"name\": \"id\", \"type\": \"int64\", \"key\": true},"
        " {\"name\": \"ts\", \"type\": \"timestamp[us, tz=UTC]\"},"
        " {\"name\": \"tags\", \"type\": \"list<item: string>\"},"
        " {\"name\": \"amount\", \"type\": \"decimal128(18, 3)\", \"nullable\": false}]";
    struct s3l_schema *d = NULL;
    assert_int_equal(s3l_schema_from_json(declared, strlen(declared), &d, &err), 0);
    char *a = NULL, *b = NULL;
    size_t alen = 0, blen = 0;
    assert_int_equal(s3l_schema_to_json(s, &a, &alen), 0);
    assert_int_equal(s3l_schema_to_json(d, &b, &blen), 0);
    assert_string_equal(a, b);
    s3l_free(a);
    s3l_free(b);
    s3l_schema_free(d);
    s3l_schema_free(s);
}

static void add_column_refuses_bad_columns(void **state)
{
    (void)state;
    struct s3l_error err = {0};
    struct s3l_schema *s = s3l_schema_new();
    assert_non_null(s);
    assert_int_equal(s3l_schema_add_column(s, "a", "int32", true, false, &err), 0);

    assert_int_equal(s3l_schema_add_column(s, "a", "int64", true, false, &err),
                     S3L_EINVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "\"a\""));
    s3l_error_clear(&err);

    assert_int_equal(s3l_schema_add_column(s, "b", "int65", true, false, &err), S3L_EINVALID_CONFIG);
    assert_non_null(strstr(err.message, "column \"b\""));
    assert_non_null(strstr(err.message, "int65"));
    s3l_error_clear(&err);

    assert_int_equal(s3l_schema_add_column(s, "k", "utf8", true, true, &err), S3L_EINVALID_CONFIG);
    assert_non_null(strstr(err.message, "key column cannot be nullable"));
    s3l_error_clear(&err);

    assert_int_equal(s3l_schema_add_column(s, "", "utf8", true, false, &err), S3L_EINVALID_CONFIG);
    s3l_error_clear(&err);
    assert_int_equal(s3l_schema_add_column(s, "c", "", true, false, &err), S3L_EINVALID_CONFIG);
    s3l_error_clear(&err);
    assert_int_equal(s3l_schema_add_column(s, "c", NULL, true, false, &err), S3L_EINVALID_CONFIG);
    s3l_error_clear(&err);

    assert_int_equal(s3l_schema_n_fields(s), 1); /* nothing refused was added */
    s3l_schema_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(built_reads_back_and_matches_declared),
        cmocka_unit_test(add_column_refuses_bad_columns),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
