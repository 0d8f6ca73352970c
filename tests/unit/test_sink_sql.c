/*
 * Unit tests of the sinks' SQL binding (src/lib/config/sql.c, s3l_config_add_sql): the
 * statement of issue 13 becomes the Sink document it states; quoted and unquoted names,
 * '' escapes, comments, keywords in any case, an optional trailing ';', several statements;
 * each error names the file, line, column and the word at fault (the positions are counted here
 * by hand from the statement texts); every allocation failing in turn.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "s3l/config.h"
#include "s3l/s3l.h"

#include "fail_alloc.h"

static struct s3l_config *parse(const char *sql, int want_rc, struct s3l_error *err)
{
    struct s3l_config *c = NULL;
    assert_int_equal(s3l_config_new(&c), 0);
    memset(err, 0, sizeof(*err));
    int rc = s3l_config_add_sql(c, sql, strlen(sql), "q.sql", NULL, err);
    if (rc != want_rc)
        fail_msg("%s: rc %s, want %s: %s", sql, s3l_error_name(rc), s3l_error_name(want_rc),
                 err->message);
    return c;
}

static void the_issue_statement(void **state)
{
    (void)state;
    struct s3l_error err;
    /* The issue's statement names bucket 'b', which S3's naming rules (3 to 63 characters)
     * refuse: the error points at it. */
    struct s3l_config *c =
        parse("CREATE TABLE out_s3 (line STRING) WITH (connector = 's3', bucket = 'b', "
              "key_prefix = 'events', delivery_guarantee = 'exactly_once')",
              S3L_EINVALID_CONFIG, &err);
    assert_non_null(strstr(err.message, "q.sql:1:68: at 'b': bucket: expected a bucket name"));
    s3l_config_free(c);
    c = parse("CREATE TABLE out_s3 (line STRING) WITH (connector = 's3', bucket = 'b-1', "
              "key_prefix = 'events', delivery_guarantee = 'exactly_once')",
              0, &err);
    assert_int_equal(s3l_config_count(c), 1);
    const struct s3l_config_doc *d = s3l_config_doc(c, 0);
    assert_int_equal(d->kind, S3L_CONFIG_SINK);
    assert_string_equal(d->name, "out_s3");
    assert_string_equal(d->file, "q.sql");
    assert_int_equal(d->index, 1);
    assert_non_null(d->sink);
    assert_string_equal(d->sink->connector, "s3");
    assert_string_equal(d->sink->bucket.value, "b-1");
    assert_string_equal(d->sink->key_prefix.value, "events");
    assert_string_equal(d->sink->delivery_guarantee.value, "exactly_once");
    assert_null(d->sink->region.value);
    assert_int_equal(d->sink->part_size, 0);
    s3l_config_free(c);
}

static void lexical_forms(void **state)
{
    (void)state;
    struct s3l_error err;
    /* Keywords in any case, quoted names with doubled quotes, '' in a string, both comment
     * forms, sizes as strings and numbers, a duration, a trailing ';' and an empty one. */
    const char *sql = "-- the events sink\n"
                      "create Table IF not EXISTS \"My \"\"Out\"\"\" ( `li``ne` string )\n"
                      "  /* options,\n   over lines */ wItH (\n"
                      "    'connector' = 's3', BUCKET = 'file:///tmp/x',\n"
                      "    key_prefix = 'it''s', part_size = '6MiB', rollover_bytes = 1048576,\n"
                      "    rollover_interval = '30s', compression = 'gzip',\n"
                      "    content_type = 'text/plain', region = 'eu-west-1',\n"
                      "    endpoint_override = 'http://127.0.0.1:8000', commit_group = 'g1',\n"
                      "    delivery_guarantee = 'at_least_once');;\n";
    struct s3l_config *c = parse(sql, 0, &err);
    assert_int_equal(s3l_config_count(c), 1);
    const struct s3l_config_sink *s = s3l_config_doc(c, 0)->sink;
    assert_string_equal(s3l_config_doc(c, 0)->name, "My \"Out\"");
    assert_string_equal(s->bucket.value, "file:///tmp/x");
    assert_string_equal(s->key_prefix.value, "it's");
    assert_int_equal(s->part_size, 6u << 20);
    assert_int_equal(s->rollover_bytes, 1048576);
    assert_int_equal(s->rollover_interval_ns, 30000000000LL);
    assert_string_equal(s->compression.value, "gzip");
    assert_string_equal(s->content_type.value, "text/plain");
    assert_string_equal(s->region.value, "eu-west-1");
    assert_string_equal(s->endpoint_override.value, "http://127.0.0.1:8000");
    assert_string_equal(s->commit_group.value, "g1");
    assert_string_equal(s->delivery_guarantee.value, "at_least_once");
    s3l_config_free(c);

    /* Two statements: two Sink documents, numbered. */
    c = parse("CREATE TABLE a (l STRING) WITH (connector='s3', bucket='bk1');\n"
              "CREATE TABLE b (l STRING) WITH (connector='s3', bucket='bk2', "
              "delivery_guarantee='exactly_once')",
              0, &err);
    assert_int_equal(s3l_config_count(c), 2);
    assert_string_equal(s3l_config_doc(c, 1)->name, "b");
    assert_int_equal(s3l_config_doc(c, 1)->index, 2);
    assert_string_equal(s3l_config_doc(c, 1)->sink->bucket.value, "bk2");
    s3l_config_free(c);
}

/* Each bad statement's message: the place (line:column, counted by hand) and the word. */
static void errors_name_the_word(void **state)
{
    (void)state;
    static const struct {
        const char *sql;
        const char *want; /* the message after "q.sql:" */
    } cases[] = {
        {"CREATE TABLE t (l STRING) WITH (connector = 's3', bucket = 'bkt', colour = 'red')",
         "1:67: at colour: unknown option"},
        {"CREATE TABLE t (l STRING, m STRING) WITH (connector = 's3', bucket = 'bkt')",
         "1:27: at m: a second column"},
        {"CREATE TABLE t (l INT) WITH (connector = 's3', bucket = 'bkt')",
         "1:19: at INT: expected the type STRING"},
        {"CREATE TABLE t () WITH (connector = 's3', bucket = 'bkt')",
         "1:17: at ): expected a column name"},
        {"CREATE TABLE t (l STRING)\nWITH (connector = 's3', bucket = 'bkt',\n part_size = '1MiB')",
         "3:14: at '1MiB': part_size: 1048576 bytes is below 5 MiB"},
        {"CREATE TABLE t (l STRING) WITH (connector = 's3', key_prefix = 'x')",
         "1:27: at WITH: bucket: missing (required)"},
        {"CREATE TABLE t (l STRING) WITH (connector = 'kafka', bucket = 'bkt')",
         "1:45: at 'kafka': connector: expected 's3'"},
        {"CREATE TABLE t (l STRING) WITH (bucket = 'bkt')",
         "1:27: at WITH: connector: missing (required)"},
        {"CREATE TABLE t (l STRING) WITH (connector = 's3', bucket = 'B_ad')",
         "1:60: at 'B_ad': bucket: "},
        {"CREATE TABLE t (l STRING) WITH (connector = 's3', bucket = 'bkt', "
         "delivery_guarantee = 'twice')",
         "1:88: at 'twice': delivery_guarantee: "},
        {"CREATE TABLE t (l STRING) WITH (connector = 's3', bucket = 'bkt', bucket = 'ckt')",
         "1:67: at bucket: option given twice"},
        {"CREATE TABLE t (l STRING) WITH (connector = 's3', bucket = 'bkt', "
         "secret_access_key = 'x')",
         "1:67: at secret_access_key: credentials are not options"},
        {"CREATE TABLE t (l STRING) WITH (connector = 's3', bucket = 'bkt", "1:60: at 'bkt: a string"},
        {"CREATE TABLE t (l STRING) /* WITH", "1:27: at /*: a comment"},
        {"CREATE VIEW t", "1:8: at VIEW: expected TABLE"},
        {"SELECT 1", "1:1: at SELECT: expected CREATE TABLE"},
        {"  -- nothing\n", "2:1: at the end of the text: no statement"},
        {"CREATE TABLE t (l STRING) WITH (connector = 's3', bucket = 'bkt') x",
         "1:67: at x: expected ; or the end"},
        {"CREATE TABLE t (l STRING) WITH (connector = 's3', part_size = 5MiB, bucket = 'bkt')",
         "1:63: at 5MiB: expected a number"},
        {"CREATE TABLE t (l STRING) WITH (connector = 's3' bucket = 'bkt')",
         "1:50: at bucket: expected , or )"},
        {"CREATE TABLE \xc3\xa9t\xc3\xa9 (l STRING) WITH (connector = 's3', bucket = 'bkt', x = 1)",
         "1:69: at x: unknown option"},
        {"CREATE TABLE t (l STRING) WITH (connector = 's3', bucket = 'bkt', part_size = '5MiB');"
         "\nCREATE TABLE u (l STRING) WITH (connector = 's3', bucket = 'bkt', rollover_bytes = 'x')",
         "2:84: at 'x': rollover_bytes: "},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct s3l_error err;
        struct s3l_config *c = parse(cases[i].sql, S3L_EINVALID_CONFIG, &err);
        char want[512];
        snprintf(want, sizeof(want), "q.sql:%s", cases[i].want);
        if (strncmp(err.message, want, strlen(want)) != 0)
            fail_msg("case %zu: %s\n got: %s\nwant: %s...", i, cases[i].sql, err.message, want);
        assert_int_equal(s3l_config_problem_count(c), 1);
        assert_string_equal(s3l_config_problem(c, 0)->message, err.message);
        s3l_config_free(c);
    }
    /* Not UTF-8, and bad arguments. */
    struct s3l_error err;
    struct s3l_config *c = parse("CREATE TABLE \xff", S3L_EINVALID_CONFIG, &err);
    assert_non_null(strstr(err.message, "byte 13: not UTF-8"));
    s3l_config_free(c);
    assert_int_equal(s3l_config_new(&c), 0);
    assert_int_equal(s3l_config_add_sql(c, NULL, 3, NULL, NULL, &err), S3L_EINVALID_ARGUMENT);
    struct s3l_config_options bad = {99, NULL};
    assert_int_equal(s3l_config_add_sql(c, "x", 1, NULL, &bad, &err), S3L_EINVALID_ARGUMENT);
    s3l_config_free(c);
}

static void allocation_failures(void **state)
{
    (void)state;
    const char *sql = "CREATE TABLE out_s3 (line STRING) WITH (connector = 's3', bucket = 'bkt', "
                      "key_prefix = 'events', part_size = 6291456, rollover_interval = '1m');"
                      "CREATE TABLE `x` (l STRING) WITH (connector = 's3', bucket = 'ckt')";
    uint64_t total = 0;
    for (uint64_t k = 1;; k++) {
        s3l_test_fail_alloc_arm(k);
        s3l_set_allocator(&s3l_test_fail_alloc);
        struct s3l_config *c = NULL;
        struct s3l_error err = {0};
        int rc = s3l_config_new(&c);
        if (rc == 0)
            rc = s3l_config_add_sql(c, sql, strlen(sql), "q.sql", NULL, &err);
        if (rc != 0 && rc != S3L_ENOMEM)
            fail_msg("allocation %llu failing gave %s: %s", (unsigned long long)k,
                     s3l_error_name(rc), err.message);
        if (rc == S3L_ENOMEM && c && !err.message[0]) /* add_sql says what it was doing */
            fail_msg("allocation %llu failing gave S3L_ENOMEM without a message",
                     (unsigned long long)k);
        if (rc == 0)
            assert_int_equal(s3l_config_count(c), 2);
        s3l_config_free(c);
        s3l_set_allocator(NULL);
        if (s3l_test_fail_alloc_count() < k) {
            total = k;
            break;
        }
    }
    assert_true(total > 10);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_issue_statement),
        cmocka_unit_test(lexical_forms),
        cmocka_unit_test(errors_name_the_word),
        cmocka_unit_test(allocation_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
