/*
 * Unit tests of the config documents (src/lib/config, include/s3l/config.h): sizes and durations
 * as the CLI writes them; YAML's core schema and what is refused (aliases, tags, duplicate keys);
 * the typed views of each kind; the checks beyond the schema; secrets resolved through a lookup,
 * with a canary value that must appear in no message, path or problem of any failure path and
 * in no freed block (the config wipes secret values); and every allocation failing in turn.
 */
#define _GNU_SOURCE /* memmem */
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

#define CANARY "CaNaRy-9f3e-s3cr3t-VALUE"

static const char dest_head[] = "apiVersion: openetl.io/v1alpha1\n"
                                "kind: Destination\n"
                                "metadata:\n"
                                "  name: lake\n"
                                "spec:\n"
                                "  connector: s3\n"
                                "  config:\n";

static void sizes(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        bool ok;
        uint64_t v;
    } cases[] = {
        {"256MiB", true, 268435456ULL}, {"256mib", true, 268435456ULL}, {"1K", true, 1024},
        {"1KB", true, 1000},           {"1kb", true, 1000},            {"5 MiB", true, 5242880},
        {"7", true, 7},                {"7B", true, 7},                {"2G", true, 2147483648ULL},
        {"3GB", true, 3000000000ULL},  {"1TiB", true, 1099511627776ULL},
        {"18446744073709551615", true, UINT64_MAX},
        {"18446744073709551616", false, 0}, {"16777216TiB", false, 0}, {"big", false, 0},
        {"", false, 0},                {"-1", false, 0},               {"1.5G", false, 0},
        {"1Ki", false, 0},             {"1 ", true, 1},               {" 1", false, 0},
        {"1EiB", false, 0},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        uint64_t v = 12345;
        bool ok = s3l_parse_size(cases[i].text, &v);
        if (ok != cases[i].ok)
            fail_msg("size \"%s\": %s", cases[i].text, ok ? "accepted" : "refused");
        if (ok)
            assert_int_equal(v, cases[i].v);
        else
            assert_int_equal(v, 12345);
    }
    assert_false(s3l_parse_size(NULL, NULL));
}

static void durations(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        bool ok;
        int64_t ns;
    } cases[] = {
        {"500ms", true, 500000000LL},   {"30s", true, 30000000000LL},
        {"30", true, 30000000000LL},    {"1m", true, 60000000000LL},
        {"2min", true, 120000000000LL}, {"1h", true, 3600000000000LL},
        {"1H", true, 3600000000000LL},  {"0", true, 0},
        {"1d", false, 0},               {"soon", false, 0},
        {"-1s", false, 0},              {"1.5s", false, 0},
        {"", false, 0},                 {"9223372037s", false, 0},
        {"1 m", false, 0},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int64_t v = -7;
        bool ok = s3l_parse_duration(cases[i].text, &v);
        if (ok != cases[i].ok)
            fail_msg("duration \"%s\": %s", cases[i].text, ok ? "accepted" : "refused");
        assert_int_equal(v, ok ? cases[i].ns : -7);
    }
}

/* Adds text as file name; returns the config (caller frees) and the code in *rc. */
static struct s3l_config *load(const char *text, const char *file,
                               const struct s3l_config_options *opts, int *rc,
                               struct s3l_error *err)
{
    struct s3l_config *c = NULL;
    assert_int_equal(s3l_config_new(&c), 0);
    *rc = s3l_config_add_text(c, text, strlen(text), file, opts, err);
    return c;
}

/* The one problem of a config of one bad document: its path and text. */
static void expect_problem(const char *text, const char *path, const char *words)
{
    struct s3l_error err = {0};
    int rc;
    struct s3l_config *c = load(text, "dir/t.yaml", NULL, &rc, &err);
    assert_int_equal(rc, S3L_EINVALID_CONFIG);
    assert_int_equal(s3l_config_problem_count(c), 1);
    const struct s3l_config_problem *p = s3l_config_problem(c, 0);
    if (strcmp(p->path, path) != 0 || !strstr(p->message, words))
        fail_msg("expected %s: ...%s..., got %s (%s)", path, words, p->path, p->message);
    assert_string_equal(err.message, p->message);
    assert_non_null(strstr(p->message, "dir/t.yaml (document 1): "));
    s3l_config_free(c);
}

static void yaml_core_schema(void **state)
{
    (void)state;
    char doc[1024];
    /* YAML 1.2: yes is a string, not a boolean, so pathStyle refuses it. */
    snprintf(doc, sizeof(doc), "%s    url: s3://bkt/p\n    pathStyle: yes\n", dest_head);
    expect_problem(doc, "spec.config.pathStyle", "expected true or false, got \"yes\"");
    /* 0x10 is an integer (16) by the core schema: not a level in 1..22? It is: accepted. */
    snprintf(doc, sizeof(doc), "%s    url: s3://bkt/p\n    compressionLevel: 0x10\n", dest_head);
    struct s3l_error err = {0};
    int rc;
    struct s3l_config *c = load(doc, "t.yaml", NULL, &rc, &err);
    assert_int_equal(rc, 0);
    assert_int_equal(s3l_config_doc(c, 0)->destination->compression_level, 16);
    s3l_config_free(c);
    /* A quoted number is a string. */
    snprintf(doc, sizeof(doc), "%s    url: s3://bkt/p\n    compressionLevel: \"3\"\n", dest_head);
    expect_problem(doc, "spec.config.compressionLevel", "expected an integer, got \"3\"");
    /* ~ is null. */
    snprintf(doc, sizeof(doc), "%s    url: ~\n", dest_head);
    expect_problem(doc, "spec.config.url", "got null");
    /* !!str makes a string of a number; other tags are refused. */
    snprintf(doc, sizeof(doc), "%s    url: s3://bkt/p\n    region: !!str 5\n", dest_head);
    c = load(doc, "t.yaml", NULL, &rc, &err);
    assert_int_equal(rc, 0);
    assert_string_equal(s3l_config_doc(c, 0)->destination->region.value, "5");
    s3l_config_free(c);
    snprintf(doc, sizeof(doc), "%s    url: s3://bkt/p\n    compressionLevel: !!int 3\n", dest_head);
    expect_problem(doc, "", "tags other than !!str");
    /* Aliases are refused (they can expand a small file into a huge document). */
    snprintf(doc, sizeof(doc), "%s    url: &u s3://bkt/p\n    region: *u\n", dest_head);
    expect_problem(doc, "", "aliases");
    /* Duplicate keys and syntax errors are named with their line. */
    snprintf(doc, sizeof(doc), "%s    url: s3://bkt/p\n    url: s3://bkt/q\n", dest_head);
    expect_problem(doc, "", "line 9, column 5: duplicate key");
    /* counted by hand: the second "a" starts line 2 (a break-it run saw line 3, column 2) */
    expect_problem("a: 1\na: 2\n", "", "line 2, column 1: duplicate key");
    expect_problem("a: [1, 2\n", "", "line ");
    /* JSON: one document, duplicate keys refused. */
    c = load("{\"apiVersion\": 1, \"apiVersion\": 2}", "t.json", NULL, &rc, &err);
    assert_int_equal(rc, S3L_EINVALID_CONFIG);
    assert_non_null(strstr(s3l_config_problem(c, 0)->message, "t.json (document 1): line 1"));
    s3l_config_free(c);
}

static const char pipeline_doc[] =
    "apiVersion: openetl.io/v1alpha1\n"
    "kind: Pipeline\n"
    "metadata: {name: web-logs}\n"
    "spec:\n"
    "  sources:\n"
    "    - name: access\n"
    "      files: [logs/a-*.ndjson, /abs/b.ndjson]\n"
    "      exclude: ['logs/*.gz']\n"
    "      follow: true\n"
    "      inferRows: 500\n"
    "      maxRecordSize: 1MiB\n"
    "      badRecords: skip\n"
    "    - name: orders\n"
    "      files: [orders.csv]\n"
    "      format: csv\n"
    "      csvDelimiter: ';'\n"
    "      schema:\n"
    "        - {name: id, type: int64, nullable: false, key: true}\n"
    "    - name: cdc\n"
    "      files: [cdc.json]\n"
    "      schema: cols.json\n"
    "  streams:\n"
    "    - {source: orders, table: orders, namespace: shop}\n"
    "  destination: {name: lake-files, namespace: web, typeChanges: allow}\n"
    "  delivery: {require: at_least_once, commit: {interval: 500ms}}\n"
    "  runner: {inherit: true}\n";

static void pipeline_view(void **state)
{
    (void)state;
    struct s3l_error err = {0};
    int rc;
    struct s3l_config *c = load(pipeline_doc, "/etc/s3land/p.yaml", NULL, &rc, &err);
    assert_int_equal(rc, 0);
    assert_int_equal(s3l_config_count(c), 1);
    const struct s3l_config_doc *d = s3l_config_find(c, S3L_CONFIG_PIPELINE, "web-logs");
    assert_non_null(d);
    assert_null(s3l_config_find(c, S3L_CONFIG_DESTINATION, "web-logs"));
    assert_int_equal(d->index, 1);
    const struct s3l_config_pipeline *p = d->pipeline;
    assert_non_null(p);
    assert_null(d->destination);
    assert_int_equal(p->n_sources, 3);
    const struct s3l_config_source *s = &p->sources[0];
    assert_string_equal(s->name, "access");
    assert_int_equal(s->n_files, 2);
    assert_string_equal(s->files[0], "/etc/s3land/logs/a-*.ndjson");
    assert_string_equal(s->files[1], "/abs/b.ndjson");
    assert_string_equal(s->exclude[0], "/etc/s3land/logs/*.gz");
    assert_int_equal(s->follow, 1);
    assert_int_equal(s->infer_rows, 500);
    assert_int_equal(s->max_record_size, 1048576);
    assert_string_equal(s->bad_records, "skip");
    assert_null(s->format);
    assert_int_equal(s->nested_as_json, -1);
    s = &p->sources[1];
    assert_int_equal(s->csv_delimiter, ';');
    assert_string_equal(s->format, "csv");
    assert_int_equal(s->follow, -1);
    assert_string_equal(s->schema_json,
                        "[{\"name\":\"id\",\"type\":\"int64\",\"nullable\":false,\"key\":true}]");
    assert_string_equal(p->sources[2].schema_file, "/etc/s3land/cols.json");
    assert_int_equal(p->n_streams, 1);
    assert_string_equal(p->streams[0].source, "orders");
    assert_string_equal(p->streams[0].namespace_, "shop");
    assert_string_equal(p->streams[0].disposition, "append");
    assert_string_equal(p->destination, "lake-files");
    assert_string_equal(p->destination_namespace, "web");
    assert_string_equal(p->type_changes, "allow");
    assert_string_equal(p->delivery_require, "at_least_once");
    assert_int_equal(p->commit_interval_ns, 500000000LL);
    assert_int_equal(p->runner_inherit, 1);
    s3l_config_free(c);
}

static void cross_checks(void **state)
{
    (void)state;
    char doc[2048];
    static const char head[] = "apiVersion: openetl.io/v1alpha1\nkind: Pipeline\n"
                               "metadata: {name: p}\nspec:\n  destination: {name: lake}\n";
    snprintf(doc, sizeof(doc), "%s  sources: [{name: a, files: [x]}]\n"
             "  streams: [{source: b, table: t}]\n", head);
    expect_problem(doc, "spec.streams[0].source", "b is not a source of this pipeline");
    snprintf(doc, sizeof(doc), "%s  sources: [{name: a, files: [x]}, {name: a, files: [y]}]\n", head);
    expect_problem(doc, "spec.sources[1].name", "also the name of spec.sources[0]");
    snprintf(doc, sizeof(doc), "%s  sources: [{name: a, files: [x]}]\n"
             "  streams: [{source: a, table: t}, {source: a, table: t}]\n", head);
    expect_problem(doc, "spec.streams[1]", "the same source and table as spec.streams[0]");
    snprintf(doc, sizeof(doc), "%s  sources: [{name: a, files: [x], schema: [{name: c, type: "
             "int65}]}]\n", head);
    expect_problem(doc, "spec.sources[0].schema", "int65");
    snprintf(doc, sizeof(doc), "%s  sources: [{name: a, files: [x], csvDelimiter: \"\xc3\xa9\"}]\n",
             head);
    expect_problem(doc, "spec.sources[0].csvDelimiter", "one printable character");
    /* The rule --csv-delimiter follows (util/delim.c): a quote, a line break or two characters
     * are refused; tab, "tab" and "\\t" are a tab. */
    static const char *const refused[] = {"'\"'", "\"\\n\"", "\"\\r\"", "';;'", "''",
                                          "\"\\x01\""};
    for (size_t i = 0; i < sizeof(refused) / sizeof(*refused); i++) {
        snprintf(doc, sizeof(doc), "%s  sources: [{name: a, files: [x], csvDelimiter: %s}]\n",
                 head, refused[i]);
        expect_problem(doc, "spec.sources[0].csvDelimiter", "one printable character");
    }
    static const char *const tabs[] = {"tab", "'\\t'", "\"\\t\""};
    for (size_t i = 0; i < sizeof(tabs) / sizeof(*tabs); i++) {
        snprintf(doc, sizeof(doc), "%s  sources: [{name: a, files: [x], csvDelimiter: %s}]\n",
                 head, tabs[i]);
        struct s3l_error err = {0};
        int rc;
        struct s3l_config *c = load(doc, "dir/t.yaml", NULL, &rc, &err);
        if (rc != 0)
            fail_msg("csvDelimiter %s: %s", tabs[i], err.message);
        const struct s3l_config_doc *d = s3l_config_find(c, S3L_CONFIG_PIPELINE, "p");
        assert_non_null(d);
        assert_int_equal(d->pipeline->sources[0].csv_delimiter, '\t');
        s3l_config_free(c);
    }
}

static void destination_and_sink_views(void **state)
{
    (void)state;
    char doc[2048];
    snprintf(doc, sizeof(doc),
             "%s    url: s3://bkt/p\n    pathStyle: false\n    fileSize: 64MiB\n"
             "    rowGroupSize: 1048576\n    aws: {role: 'arn:aws:iam::123456789012:role/w', "
             "durationSeconds: 900}\n"
             "---\n"
             "apiVersion: openetl.io/v1alpha1\nkind: Sink\nmetadata: {name: raw}\n"
             "spec:\n  connector: s3\n  config:\n    bucket: bkt\n    key_prefix: ev\n"
             "    rollover_bytes: 16MiB\n    rollover_interval: 1m\n    part_size: 5MiB\n"
             "    delivery_guarantee: exactly_once\n",
             dest_head);
    struct s3l_error err = {0};
    int rc;
    struct s3l_config *c = load(doc, "t.yaml", NULL, &rc, &err);
    assert_int_equal(rc, 0);
    assert_int_equal(s3l_config_count(c), 2);
    const struct s3l_config_destination *d = s3l_config_doc(c, 0)->destination;
    assert_string_equal(d->connector, "s3");
    assert_string_equal(d->url.value, "s3://bkt/p");
    assert_null(d->url.secret);
    assert_null(d->region.value);
    assert_int_equal(d->path_style, -1);
    assert_int_equal(d->file_size, 64ULL << 20);
    assert_int_equal(d->row_group_size, 1048576);
    assert_string_equal(d->aws.role.value, "arn:aws:iam::123456789012:role/w");
    assert_int_equal(d->aws.duration_seconds, 900);
    assert_int_equal(d->compression_level, 0);
    const struct s3l_config_doc *sd = s3l_config_doc(c, 1);
    assert_int_equal(sd->index, 2);
    assert_int_equal(sd->kind, S3L_CONFIG_SINK);
    assert_string_equal(sd->sink->bucket.value, "bkt");
    assert_int_equal(sd->sink->rollover_bytes, 16ULL << 20);
    assert_int_equal(sd->sink->rollover_interval_ns, 60000000000LL);
    assert_int_equal(sd->sink->part_size, 5ULL << 20);
    assert_string_equal(sd->sink->delivery_guarantee.value, "exactly_once");
    s3l_config_free(c);
    /* The schemas come out byte for byte and by name. */
    size_t len = 0;
    const char *t = s3l_config_schema(S3L_CONFIG_SINK, &len);
    assert_non_null(t);
    assert_int_equal(strlen(t), len);
    assert_non_null(strstr(t, "\"key_prefix\""));
    assert_int_equal(s3l_config_kind_from_name("pipeline"), S3L_CONFIG_PIPELINE);
    assert_int_equal(s3l_config_kind_from_name("Pipeline"), 0);
}

/* Secrets: a lookup that knows two names; GOOD holds the canary. */
struct lookup_log {
    int calls;
};

static int lookup(void *ctx, const char *name, char **value, struct s3l_error *err)
{
    struct lookup_log *log = ctx;
    log->calls++;
    if (strcmp(name, "GOOD") == 0 || strcmp(name, "OTHER") == 0) {
        *value = s3l_strdup(CANARY);
        return *value ? 0 : S3L_ENOMEM;
    }
    if (strcmp(name, "BROKEN") == 0)
        return s3l_error_set(err, S3L_EIO, "read /run/secrets/BROKEN failed");
    return S3L_ENOT_FOUND;
}

/* A counting allocator that remembers sizes, so freed blocks can be searched for the canary. */
static bool canary_freed;
static uint64_t n_alloc, fail_at;

static void *t_malloc(void *ctx, size_t n)
{
    (void)ctx;
    if (++n_alloc == fail_at)
        return NULL;
    size_t *p = malloc(n + 16);
    if (!p)
        return NULL;
    p[0] = n;
    return (char *)p + 16;
}

static void t_free(void *ctx, void *q)
{
    (void)ctx;
    if (!q)
        return;
    size_t *p = (size_t *)((char *)q - 16);
    size_t n = p[0];
    if (n >= strlen(CANARY) && memmem(q, n, CANARY, strlen(CANARY)))
        canary_freed = true;
    free(p);
}

static void *t_realloc(void *ctx, void *q, size_t n)
{
    if (!q)
        return t_malloc(ctx, n);
    if (++n_alloc == fail_at)
        return NULL;
    size_t old = ((size_t *)((char *)q - 16))[0];
    void *r = t_malloc(ctx, n);
    n_alloc--;
    if (!r)
        return NULL;
    memcpy(r, q, old < n ? old : n);
    t_free(ctx, q);
    return r;
}

static const struct s3l_allocator counting = {t_malloc, t_realloc, t_free, NULL};

static void no_canary(const struct s3l_config *c, const struct s3l_error *err)
{
    assert_null(strstr(err->message, CANARY));
    for (size_t i = 0; i < s3l_config_problem_count(c); i++) {
        const struct s3l_config_problem *p = s3l_config_problem(c, i);
        assert_null(strstr(p->message, CANARY));
        assert_null(strstr(p->path, CANARY));
    }
}

static void secrets(void **state)
{
    (void)state;
    s3l_set_allocator(&counting);
    struct lookup_log log = {0};
    struct s3l_config_secrets sec = {lookup, &log};
    struct s3l_config_options opts = {S3L_CONFIG_OPTIONS_VERSION, &sec};
    char doc[4096];
    /* Resolved: the view has the value and the name; each name looked up once. */
    snprintf(doc, sizeof(doc), "%s    url: s3://bkt/p\n    accessKeyId: {secret: GOOD}\n"
             "    secretAccessKey: {secret: GOOD}\n    sessionToken: {secret: OTHER}\n", dest_head);
    struct s3l_error err = {0};
    int rc;
    canary_freed = false;
    struct s3l_config *c = load(doc, "t.yaml", &opts, &rc, &err);
    assert_int_equal(rc, 0);
    assert_int_equal(log.calls, 2);
    const struct s3l_config_destination *d = s3l_config_doc(c, 0)->destination;
    assert_string_equal(d->secret_access_key.value, CANARY);
    assert_string_equal(d->secret_access_key.secret, "GOOD");
    assert_string_equal(d->session_token.secret, "OTHER");
    s3l_config_free(c);
    assert_false(canary_freed);

    /* Unresolved (no lookup): the name, no value. */
    c = load(doc, "t.yaml", NULL, &rc, &err);
    assert_int_equal(rc, 0);
    d = s3l_config_doc(c, 0)->destination;
    assert_null(d->secret_access_key.value);
    assert_string_equal(d->secret_access_key.secret, "GOOD");
    s3l_config_free(c);

    /* Every failure path with the canary resolved somewhere in the document. */
    static const struct {
        const char *extra, *path, *words;
        int code;
    } bad[] = {
        /* A missing secret names itself and the field. */
        {"    secretAccessKey: {secret: MISSING}\n", "spec.config.secretAccessKey",
         "secret MISSING not found", S3L_EINVALID_CONFIG},
        /* A lookup that fails says so, with its own words. */
        {"    sessionToken: {secret: BROKEN}\n", "spec.config.sessionToken",
         "secret BROKEN could not be read: read /run/secrets/BROKEN failed", S3L_EIO},
        /* The canary is not a URL, a size, a region, an enum value: named, not shown. */
        {"    endpoint: {secret: OTHER}\n", "spec.config.endpoint",
         "expected an endpoint http(s)://HOST[:PORT], got the value of secret OTHER (not shown)",
         S3L_EINVALID_CONFIG},
        {"    fileSize: {secret: OTHER}\n", "spec.config.fileSize",
         "got the value of secret OTHER (not shown)", S3L_EINVALID_CONFIG},
        {"    compression: {secret: OTHER}\n", "spec.config.compression", "one of zstd",
         S3L_EINVALID_CONFIG},
        {"    aws: {role: {secret: OTHER}}\n", "spec.config.aws.role",
         "got the value of secret OTHER (not shown)", S3L_EINVALID_CONFIG},
        /* Another field wrong beside a resolved secret. */
        {"    compressionLevel: 99\n", "spec.config.compressionLevel", "from 1 to 22",
         S3L_EINVALID_CONFIG},
        {"    secretAccesKey: {secret: GOOD}\n", "spec.config.secretAccesKey", "unknown field",
         S3L_EINVALID_CONFIG},
        {"    secretAccessKey: {secret: GOOD, value: x}\n", "spec.config.secretAccessKey.value",
         "unknown field", S3L_EINVALID_CONFIG},
        {"    secretAccessKey: {secret: 'GOOD OTHER'}\n", "spec.config.secretAccessKey.secret",
         "a secret name", S3L_EINVALID_CONFIG},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        snprintf(doc, sizeof(doc), "%s    url: s3://bkt/p\n    accessKeyId: {secret: GOOD}\n%s",
                 dest_head, bad[i].extra);
        s3l_error_clear(&err);
        canary_freed = false;
        c = load(doc, "t.yaml", &opts, &rc, &err);
        assert_int_not_equal(rc, 0);
        assert_int_equal(s3l_config_count(c), 0);
        assert_int_equal(s3l_config_problem_count(c), 1);
        const struct s3l_config_problem *p = s3l_config_problem(c, 0);
        if (strcmp(p->path, bad[i].path) != 0 || !strstr(p->message, bad[i].words) ||
            p->code != bad[i].code)
            fail_msg("case %zu: %s %s [%d]", i, p->path, p->message, p->code);
        no_canary(c, &err);
        s3l_config_free(c);
        assert_false(canary_freed);
    }
    s3l_set_allocator(NULL);
}

/* Every allocation failing in turn: NOMEM or success, never a crash or a leak (ASan). */
static void allocation_failures(void **state)
{
    (void)state;
    struct lookup_log log = {0};
    struct s3l_config_secrets sec = {lookup, &log};
    struct s3l_config_options opts = {S3L_CONFIG_OPTIONS_VERSION, &sec};
    char doc[4096];
    snprintf(doc, sizeof(doc), "%s    url: s3://bkt/p\n    accessKeyId: {secret: GOOD}\n---\n%s",
             dest_head, pipeline_doc);
    uint64_t total = 0;
    for (uint64_t k = 1;; k++) {
        n_alloc = 0;
        fail_at = k;
        s3l_set_allocator(&counting);
        struct s3l_config *c = NULL;
        struct s3l_error err = {0};
        int rc = s3l_config_new(&c);
        if (rc == 0)
            rc = s3l_config_add_text(c, doc, strlen(doc), "t.yaml", &opts, &err);
        if (rc != 0 && rc != S3L_ENOMEM)
            fail_msg("allocation %llu failing gave %s: %s", (unsigned long long)k,
                     s3l_error_name(rc), err.message);
        if (rc == S3L_ENOMEM && c && !err.message[0]) /* add_text says what it was doing */
            fail_msg("allocation %llu failing gave S3L_ENOMEM without a message",
                     (unsigned long long)k);
        if (rc == 0)
            assert_int_equal(s3l_config_count(c), 2);
        s3l_config_free(c);
        s3l_set_allocator(NULL);
        if (n_alloc < k) {
            total = k;
            break;
        }
    }
    fail_at = 0;
    assert_true(total > 10);
}

static void options_and_files(void **state)
{
    (void)state;
    struct s3l_config *c = NULL;
    assert_int_equal(s3l_config_new(&c), 0);
    struct s3l_config_options bad = {99, NULL};
    struct s3l_error err = {0};
    assert_int_equal(s3l_config_add_text(c, "a: 1", 4, "t.yaml", &bad, &err),
                     S3L_EINVALID_ARGUMENT);
    s3l_error_clear(&err);
    assert_int_equal(s3l_config_add_file(c, "/nonexistent/s3land.yaml", NULL, &err),
                     S3L_ENOT_FOUND);
    assert_int_equal(s3l_config_problem_count(c), 1);
    assert_int_equal(s3l_config_problem(c, 0)->index, 0);
    assert_int_equal(s3l_config_problem(c, 0)->check, S3L_CONFIG_CHECK_READ);
    assert_non_null(strstr(err.message, "/nonexistent/s3land.yaml"));
    /* Bytes that are not UTF-8 are refused before libfyaml sees them (it can loop on some). */
    s3l_error_clear(&err);
    assert_int_equal(s3l_config_add_text(c, "a: 1\nb: \xc3\x28\n", 11, "u.yaml", NULL, &err),
                     S3L_EINVALID_CONFIG);
    assert_non_null(strstr(err.message, "u.yaml: line 2, column 4: not valid UTF-8"));
    /* An empty YAML stream has no documents: nothing added, nothing wrong. */
    s3l_error_clear(&err);
    assert_int_equal(s3l_config_add_text(c, "", 0, "empty.yaml", NULL, &err), 0);
    assert_int_equal(s3l_config_count(c), 0);
    s3l_config_free(c);
    s3l_config_free(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sizes),
        cmocka_unit_test(durations),
        cmocka_unit_test(yaml_core_schema),
        cmocka_unit_test(pipeline_view),
        cmocka_unit_test(cross_checks),
        cmocka_unit_test(destination_and_sink_views),
        cmocka_unit_test(secrets),
        cmocka_unit_test(allocation_failures),
        cmocka_unit_test(options_and_files),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
