/*
 * The delivery gate (issue 12, item 5): the capability records of the source kinds, and
 * s3l_pipeline_run refusing at start, before any data moves, a pipeline whose weakest source
 * delivers less than delivery_require, with a message that names the source, its kind and level
 * and the setting that accepts it. The at_least_once path uses the test source kind of
 * tests/support/least_once_source.c: refused by default (exactly_once), accepted with
 * at_least_once, its rows then counted against the input's line count. An unknown kind is
 * refused; without a requirement (write) there is no gate.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "s3l/pipeline.h"
#include "least_once_source.h"

static char dir[64], input[128], lake[128];

static int setup(void **state)
{
    (void)state;
    strcpy(dir, "/tmp/s3l-delivery-XXXXXX");
    if (!mkdtemp(dir))
        return -1;
    snprintf(input, sizeof(input), "%s/in.ndjson", dir);
    snprintf(lake, sizeof(lake), "file://%s/lake", dir);
    FILE *f = fopen(input, "w");
    if (!f)
        return -1;
    for (int i = 0; i < 25; i++)
        fprintf(f, "{\"id\": %d}\n", i);
    fclose(f);
    return s3l_test_least_once_register();
}

static int teardown(void **state)
{
    (void)state;
    char cmd[256];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static int count_kind(void *ctx, const struct s3l_source_kind *k)
{
    const char **want = ctx;
    for (int i = 0; want[i]; i += 2)
        if (strcmp(k->name, want[i]) == 0 && strcmp(s3l_delivery_name(k->delivery), want[i + 1]) == 0)
            want[i] = "";
    return 0;
}

static void kinds_are_declared(void **state)
{
    (void)state;
    const char *want[] = {"files", "exactly_once", "stdin", "at_most_once", "pipe",
                          "at_most_once", "s3_ndjson_source", "exactly_once",
                          S3L_TEST_LEAST_ONCE_KIND, "at_least_once", NULL};
    assert_int_equal(s3l_source_kinds(count_kind, want), 0);
    for (int i = 0; want[i]; i += 2)
        assert_string_equal(want[i], "");
    for (int d = S3L_DELIVERY_AT_MOST_ONCE; d <= S3L_DELIVERY_EXACTLY_ONCE; d++)
        assert_int_equal(s3l_delivery_parse(s3l_delivery_name((enum s3l_delivery)d)), d);
    assert_int_equal(s3l_delivery_parse("twice"), S3L_DELIVERY_NONE);
    assert_int_equal(s3l_source_kind_register(s3l_source_kind_find("files")), S3L_EEXISTS);
}

/* A run of one source named "events" of kind `kind` into table t, requiring `req`. */
static int run(const char *kind, enum s3l_delivery req, struct s3l_pipeline_stats *st,
               struct s3l_error *err)
{
    const char *inputs[] = {input};
    struct s3l_pipeline_source src = {0};
    src.name = "events";
    src.table = "t";
    src.inputs = inputs;
    src.n_inputs = 1;
    src.kind = kind;
    struct s3l_pipeline_options o;
    s3l_pipeline_options_init(&o);
    o.url = lake;
    o.sources = &src;
    o.n_sources = 1;
    o.name = "gate";
    o.delivery_require = req;
    memset(err, 0, sizeof(*err));
    return s3l_pipeline_run(&o, st, NULL, err);
}

static bool lake_exists(void)
{
    struct stat sb;
    return stat(lake + strlen("file://"), &sb) == 0;
}

static void at_least_once_refused_by_default(void **state)
{
    (void)state;
    struct s3l_pipeline_stats st;
    struct s3l_error err;
    assert_int_equal(run(S3L_TEST_LEAST_ONCE_KIND, S3L_DELIVERY_EXACTLY_ONCE, &st, &err),
                     S3L_EINVALID_CONFIG);
    assert_non_null(strstr(err.message, "source events"));
    assert_non_null(strstr(err.message, "at_least_once (" S3L_TEST_LEAST_ONCE_KIND));
    assert_non_null(strstr(err.message, "delivery: { require: at_least_once }"));
    assert_int_equal(st.rows, 0);
    assert_false(lake_exists()); /* refused before any data moves: not even the lake */
}

static void at_least_once_accepted_when_required(void **state)
{
    (void)state;
    struct s3l_pipeline_stats st;
    struct s3l_error err;
    assert_int_equal(run(S3L_TEST_LEAST_ONCE_KIND, S3L_DELIVERY_AT_LEAST_ONCE, &st, &err), 0);
    assert_int_equal(st.rows, 25); /* the 25 lines setup wrote */
    assert_int_equal(st.epochs, 1);
}

static void files_pass_every_requirement(void **state)
{
    (void)state;
    struct s3l_pipeline_stats st;
    struct s3l_error err;
    /* Files are exactly once: the rerun finds them committed, whatever the requirement. */
    for (int d = S3L_DELIVERY_NONE; d <= S3L_DELIVERY_EXACTLY_ONCE; d++) {
        assert_int_equal(run(NULL, (enum s3l_delivery)d, &st, &err), 0);
        assert_int_equal(st.rows, 0);
    }
}

static void unknown_kind_refused(void **state)
{
    (void)state;
    struct s3l_pipeline_stats st;
    struct s3l_error err;
    assert_int_equal(run("carrier-pigeon", S3L_DELIVERY_NONE, &st, &err), S3L_EINVALID_CONFIG);
    assert_non_null(strstr(err.message, "unknown source kind carrier-pigeon"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(kinds_are_declared),
        cmocka_unit_test(at_least_once_refused_by_default),
        cmocka_unit_test(at_least_once_accepted_when_required),
        cmocka_unit_test(files_pass_every_requirement),
        cmocka_unit_test(unknown_kind_refused),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
