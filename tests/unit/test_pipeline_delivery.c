/*
 * The delivery gate (issue 12, item 5): the capability records of the source kinds, and
 * s3l_pipeline_run refusing at start, before any data moves, a pipeline whose weakest source
 * delivers less than delivery_require, with a message that names the source, its kind and level
 * and the setting that accepts it. The at_least_once path uses the test source kind of
 * tests/support/least_once_source.c: refused by default (exactly_once), accepted with
 * at_least_once, its rows then counted against the input's line count. An unknown kind is
 * refused; without a requirement (write) there is no gate.
 *
 * The rows of an at_least_once source carry _openetl_id (pipeline/ident.c): the test source
 * sends records again further on in its input, with the same position ("pos"); DuckDB reads the
 * landed table back (tests/oracle/duck.mjs) and the test requires each record's rows to share
 * one id, distinct records distinct ids, count(DISTINCT _openetl_id) the number of records, and
 * the ids to be the UUIDs Python's uuid.uuid5 gives (vectors below, computed outside this code).
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

static char dir[64], input[128], lake[128], dup[128];

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
        fprintf(f, "{\"pos\": %d, \"id\": %d}\n", i, i);
    fclose(f);
    /* Five records; 2 and 4 sent again later (at other byte offsets and lines), 2 twice; "b"
     * positions are strings. */
    snprintf(dup, sizeof(dup), "%s/dup.ndjson", dir);
    if (!(f = fopen(dup, "w")))
        return -1;
    fputs("{\"pos\": 1, \"msg\": \"one\"}\n"
          "{\"pos\": 2, \"msg\": \"two\"}\n"
          "{\"pos\": \"b-3\", \"msg\": \"three\"}\n"
          "{\"pos\": 2, \"msg\": \"two\"}\n"
          "{\"pos\": 4, \"msg\": \"four\"}\n"
          "{\"pos\": 5, \"msg\": \"five\"}\n"
          "{\"msg\": \"four\", \"pos\": 4}\n"
          "{\"pos\": 2, \"msg\": \"two\"}\n", f);
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

/* A run of the test source over in (table tbl, pipeline name), schema declared or NULL. */
static int run_least_once(const char *in, const char *tbl, const char *name, const char *schema,
                          struct s3l_pipeline_stats *st, struct s3l_error *err)
{
    const char *inputs[] = {in};
    struct s3l_schema *sch = NULL;
    memset(err, 0, sizeof(*err));
    if (schema && s3l_schema_from_json(schema, strlen(schema), &sch, err) != 0)
        return err->code;
    struct s3l_pipeline_source src = {0};
    src.name = "events";
    src.table = tbl;
    src.inputs = inputs;
    src.n_inputs = 1;
    src.kind = S3L_TEST_LEAST_ONCE_KIND;
    src.schema = sch;
    struct s3l_pipeline_options o;
    s3l_pipeline_options_init(&o);
    o.url = lake;
    o.sources = &src;
    o.n_sources = 1;
    o.name = name;
    o.delivery_require = S3L_DELIVERY_AT_LEAST_ONCE;
    int rc = s3l_pipeline_run(&o, st, NULL, err);
    s3l_schema_free(sch);
    return rc;
}

/* What DuckDB reads in table tbl: sql over view t (the table's Parquet files), one line per row
 * as JSON (the oracle's canon), into out. */
static void duck(const char *tbl, const char *sql, char *out, size_t cap)
{
    const char *srcdir = getenv("S3L_SOURCE_DIR");
    char script[256], cmd[512];
    snprintf(script, sizeof(script), "%s/q.mjs", dir);
    FILE *f = fopen(script, "w");
    assert_non_null(f);
    fprintf(f,
            "import { openDuck } from '%s/tests/oracle/duck.mjs';\n"
            "const d = await openDuck();\n"
            "await d.run(\"CREATE VIEW t AS SELECT * FROM read_parquet('%s/lake/%s/*.parquet')\");\n"
            "for (const r of await d.all(process.argv[2], {canon: true}))\n"
            "  console.log(JSON.stringify(r));\n"
            "d.close();\n", srcdir ? srcdir : ".", dir, tbl);
    fclose(f);
    snprintf(cmd, sizeof(cmd), "node '%s' \"%s\"", script, sql);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    size_t n = fread(out, 1, cap - 1, p);
    out[n] = 0;
    assert_int_equal(pclose(p), 0);
}

/*
 * The expected ids, from Python's uuid (independent of this code):
 *   ns = uuid.UUID('7d1c2a5e-3f4b-5c6d-8e9f-0a1b2c3d4e5f')
 *   uuid.uuid5(ns, 'dup\npos=1:1\n') ... uuid.uuid5(ns, 'dup\npos=3:b-3\n'), and
 *   uuid.uuid5(ns, 'dup2\npos=1:2\n') for table dup2 (the table is hashed too)
 */
#define ID_POS1 "37d6e736-0a51-51a9-9a9a-3cf6e1a8ede5"
#define ID_POS2 "45b5dd0f-dc0d-5fba-ac94-34c4c2041cb5"
#define ID_POS4 "03d77baa-5c3a-50ca-8052-06ed683b9163"
#define ID_POS5 "678d69ac-cf7d-53ad-8619-381854b96836"
#define ID_POSB3 "e1928ada-6847-53df-bf90-0900ecda9434"
#define ID_DUP2_POS2 "331be056-e891-5d1d-929a-6a16c2612664" /* table dup2 */
static const char *const want_ids =
    "{\"pos\":\"1\",\"n\":\"1\",\"ids\":\"1\",\"id\":\"" ID_POS1 "\"}\n"
    "{\"pos\":\"2\",\"n\":\"3\",\"ids\":\"1\",\"id\":\"" ID_POS2 "\"}\n"
    "{\"pos\":\"4\",\"n\":\"2\",\"ids\":\"1\",\"id\":\"" ID_POS4 "\"}\n"
    "{\"pos\":\"5\",\"n\":\"1\",\"ids\":\"1\",\"id\":\"" ID_POS5 "\"}\n"
    "{\"pos\":\"b-3\",\"n\":\"1\",\"ids\":\"1\",\"id\":\"" ID_POSB3 "\"}\n";

/* The rows of an at_least_once source carry _openetl_id: one per record, the same for a record
 * sent again; inferred schema (uuid), then a declared one without the column. */
static void least_once_rows_carry_ids(void **state)
{
    (void)state;
    struct s3l_pipeline_stats st;
    struct s3l_error err;
    char out[4096];
    assert_int_equal(run_least_once(dup, "dup", "ids", NULL, &st, &err), 0);
    assert_int_equal(st.rows, 8);
    duck("dup", "SELECT CAST(pos AS VARCHAR) AS pos, count(*) AS n, "
                "count(DISTINCT _openetl_id) AS ids, any_value(CAST(_openetl_id AS VARCHAR)) AS id "
                "FROM t GROUP BY ALL ORDER BY pos", out, sizeof(out));
    assert_string_equal(out, want_ids);
    duck("dup", "SELECT count(DISTINCT _openetl_id) AS d, count(DISTINCT pos) AS p, "
                "typeof(any_value(_openetl_id)) AS ty FROM t", out, sizeof(out));
    assert_string_equal(out, "{\"d\":\"5\",\"p\":\"5\",\"ty\":\"UUID\"}\n");
    /* A declared schema without the column gets it (as uuid): the same ids. */
    assert_int_equal(run_least_once(dup, "dup2", "ids2",
                                    "[{\"name\": \"pos\", \"type\": \"string\"}, "
                                    "{\"name\": \"msg\", \"type\": \"string\"}]",
                                    &st, &err), 0);
    assert_int_equal(st.rows, 8);
    duck("dup2", "SELECT count(DISTINCT _openetl_id) AS d, typeof(any_value(_openetl_id)) AS ty, "
                 "count(*) FILTER (WHERE CAST(_openetl_id AS VARCHAR) = '" ID_DUP2_POS2 "') AS two "
                 "FROM t", out, sizeof(out));
    assert_string_equal(out, "{\"d\":\"5\",\"ty\":\"UUID\",\"two\":\"3\"}\n");
}

/* A declared schema that names _openetl_id with another type is refused before data moves; a
 * record without its position is a bad record naming its line. */
static void least_once_refusals(void **state)
{
    (void)state;
    struct s3l_pipeline_stats st;
    struct s3l_error err;
    assert_int_equal(run_least_once(dup, "dup3", "ids3",
                                    "[{\"name\": \"pos\", \"type\": \"string\"}, "
                                    "{\"name\": \"_openetl_id\", \"type\": \"string\"}]",
                                    &st, &err), S3L_EINVALID_CONFIG);
    assert_non_null(strstr(err.message, "declares column _openetl_id as string"));
    assert_int_equal(st.rows, 0);
    char bad[160];
    snprintf(bad, sizeof(bad), "%s/nopos.ndjson", dir);
    FILE *f = fopen(bad, "w");
    assert_non_null(f);
    fputs("{\"pos\": 1}\n{\"pos\": 2}\n{\"at\": 3}\n", f);
    fclose(f);
    assert_int_equal(run_least_once(bad, "dup4", "ids4", NULL, &st, &err), S3L_EINVALID_INPUT);
    assert_non_null(strstr(err.message, "line 3"));
    assert_non_null(strstr(err.message, "no position in member \"pos\""));
    f = fopen(bad, "w");
    assert_non_null(f);
    fputs("{\"pos\": 1, \"_openetl_id\": \"x\"}\n", f);
    fclose(f);
    assert_int_equal(run_least_once(bad, "dup5", "ids5", NULL, &st, &err), S3L_EINVALID_INPUT);
    assert_non_null(strstr(err.message, "line 1"));
    assert_non_null(strstr(err.message, "has a member named _openetl_id"));
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
        cmocka_unit_test(least_once_rows_carry_ids),
        cmocka_unit_test(least_once_refusals),
        cmocka_unit_test(files_pass_every_requirement),
        cmocka_unit_test(unknown_kind_refused),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
