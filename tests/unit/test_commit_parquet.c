/*
 * The destination with its production codec (Parquet, s3l_dest_open): files committed by two
 * lanes are read back by the footer reader of src/lib/parquet (code independent of the writer):
 * magic bytes, row counts equal to the marker's, and the file schema equal to the declared one.
 * Schema records through s3l_schema_merge: written on first use, a new column added, a changed
 * type refused with SCHEMA_DRIFT naming table, column, both types and the record's URL, and
 * taken when type changes are allowed. (DuckDB reads what the CLI writes in the integration
 * and crash tests.)
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "commit/commit.h"
#include "s3l/destination.h"
#include "s3l/pq_footer.h"
#include "s3l/schema.h"
#include "s3l/store.h"
#include "schema/schema_int.h"
#include "util/util.h"

static char dir[64], url[96];
static struct s3l_store *store;

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof(dir), "%s/s3l-pqdest-XXXXXX",
             access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
    if (!mkdtemp(dir))
        return -1;
    snprintf(url, sizeof(url), "file://%s", dir);
    struct s3l_error err = {0};
    return s3l_store_open(url, NULL, &store, &err);
}

static int teardown(void **state)
{
    (void)state;
    s3l_store_free(store);
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    return system(cmd);
}

static struct s3l_schema *schema_of(const char *json)
{
    struct s3l_schema *s = NULL;
    struct s3l_error err = {0};
    if (s3l_schema_from_json(json, strlen(json), &s, &err) != 0)
        fail_msg("schema: %s in %s", err.message, json);
    return s;
}

static struct s3l_dest *open_dest(bool allow)
{
    struct s3l_dest_options o = {0};
    o.version = S3L_DEST_OPTIONS_VERSION;
    o.pipeline_id = "pq";
    o.lanes = 2;
    o.file_size = 16 << 10;
    o.allow_type_changes = allow;
    struct s3l_pq_options pq;
    s3l_pq_options_init(&pq);
    pq.row_group_rows = 500;
    o.parquet = &pq;
    o.memory = 8 << 20;
    struct s3l_dest *d = NULL;
    struct s3l_error err = {0};
    if (s3l_dest_open(store, &o, &d, &err) != 0)
        fail_msg("open: %s", err.message);
    return d;
}

struct seen {
    uint64_t rows, files;
    const struct s3l_schema *schema;
};

static int check_marker(void *ctx, const struct s3l_dest_marker *m)
{
    struct seen *s = ctx;
    for (size_t i = 0; i < m->n_files; i++) {
        uint8_t *p = NULL;
        size_t n = 0;
        struct s3l_error err = {0};
        assert_int_equal(
            s3l_store_get(store, m->files[i].key, 0, UINT64_MAX, 1 << 26, &p, &n, NULL, &err), 0);
        assert_int_equal(n, m->files[i].size);
        assert_memory_equal(p, "PAR1", 4);
        assert_memory_equal(p + n - 4, "PAR1", 4);
        struct s3l_pq_footer *f = NULL;
        if (s3l_pq_footer_read_buf(p, n, NULL, &f, &err) != 0)
            fail_msg("%s: %s", m->files[i].key, err.message);
        assert_int_equal(f->num_rows, (int64_t)m->files[i].rows);
        struct s3l_schema *fs = NULL;
        assert_int_equal(s3l_pq_footer_schema(f, &fs, &err), 0);
        assert_int_equal(fs->n_fields, s->schema->n_fields);
        for (size_t c = 0; c < fs->n_fields; c++) {
            assert_string_equal(fs->fields[c].name, s->schema->fields[c].name);
            assert_int_equal(fs->fields[c].type.id, s->schema->fields[c].type.id);
        }
        s3l_schema_free(fs);
        s3l_pq_footer_free(f);
        s3l_free(p);
        s->rows += m->files[i].rows;
        s->files++;
    }
    return 0;
}

/* One row (id, then a string in every other column) committed as an epoch of its own. */
static void commit_one_row(struct s3l_dest *d, struct s3l_dest_stream *st, size_t n_cols, bool id_text)
{
    struct s3l_row_sink k;
    struct s3l_error err = {0};
    assert_int_equal(s3l_dest_lane_sink(st, 0, &k), 0);
    assert_int_equal(k.ops->row_begin(k.ctx), 0);
    if (id_text)
        assert_int_equal(k.ops->put_bytes(k.ctx, "7", 1), 0);
    else
        assert_int_equal(k.ops->put_int(k.ctx, 7), 0);
    for (size_t c = 1; c < n_cols; c++)
        assert_int_equal(k.ops->put_null(k.ctx), 0);
    assert_int_equal(k.ops->row_end(k.ctx, &err), 0);
    assert_int_equal(s3l_dest_commit(d, "{}", NULL, &err), 0);
    assert_int_equal(s3l_dest_sync(d, NULL, &err), 0);
}

static void parquet_files_and_schema_records(void **state)
{
    (void)state;
    struct s3l_schema *sc =
        schema_of("[{\"name\": \"id\", \"type\": \"int64\", \"nullable\": false, \"key\": true},"
                  " {\"name\": \"s\", \"type\": \"string\"}]");
    struct s3l_dest *d = open_dest(false);
    struct s3l_dest_stream *st;
    struct s3l_error err = {0};
    assert_int_equal(s3l_dest_stream(d, NULL, "t", sc, &st, &err), 0);
    for (unsigned lane = 0; lane < 2; lane++) {
        struct s3l_row_sink k;
        assert_int_equal(s3l_dest_lane_sink(st, lane, &k), 0);
        for (int i = 0; i < 3000; i++) {
            char text[48];
            int n = snprintf(text, sizeof(text), "lane %u row %d %08x", lane, i, i * 2654435761u);
            assert_int_equal(k.ops->row_begin(k.ctx), 0);
            assert_int_equal(k.ops->put_int(k.ctx, lane * 100000 + i), 0);
            assert_int_equal(k.ops->put_bytes(k.ctx, text, (size_t)n), 0);
            assert_int_equal(k.ops->row_end(k.ctx, &err), 0);
        }
    }
    struct s3l_dest_commit_info ci;
    assert_int_equal(s3l_dest_commit(d, "{}", &ci, &err), 0);
    assert_int_equal(ci.epoch, 0); /* pipelined: reported when its finish is waited for */
    assert_int_equal(s3l_dest_sync(d, &ci, &err), 0);
    assert_int_equal(ci.epoch, 1);
    assert_int_equal(ci.rows, 6000);
    assert_true(ci.files >= 3); /* 16 KiB files */
    s3l_dest_free(d);
    struct seen seen = {0, 0, sc};
    assert_int_equal(s3l_dest_list_markers(store, "t", check_marker, &seen, &err), 0);
    assert_int_equal(seen.rows, 6000);
    assert_int_equal(seen.files, ci.files);
    /* The record holds the declared schema. */
    char *rec = NULL;
    size_t len = 0;
    assert_int_equal(s3l_dest_read_schema(store, "t", &rec, &len, &err), 0);
    struct s3l_schema *rs = schema_of(rec);
    assert_int_equal(rs->n_fields, 2);
    for (size_t i = 0; i < 2; i++)
        assert_true(s3l__type_equal(&rs->fields[i].type, &sc->fields[i].type));
    s3l_schema_free(rs);
    s3l_free(rec);
    /* A new column is recorded. */
    struct s3l_schema *added = schema_of(
        "[{\"name\": \"id\", \"type\": \"int64\", \"nullable\": false, \"key\": true},"
        " {\"name\": \"s\", \"type\": \"string\"}, {\"name\": \"x\", \"type\": \"double\"}]");
    d = open_dest(false);
    assert_int_equal(s3l_dest_stream(d, NULL, "t", added, &st, &err), 0);
    /* ... with the first epoch that holds it (issue 10 item 14), not when the stream opens. */
    assert_int_equal(s3l_dest_read_schema(store, "t", &rec, &len, &err), 0);
    rs = schema_of(rec);
    assert_int_equal(rs->n_fields, 2);
    s3l_schema_free(rs);
    s3l_free(rec);
    commit_one_row(d, st, 3, false);
    s3l_dest_free(d);
    assert_int_equal(s3l_dest_read_schema(store, "t", &rec, &len, &err), 0);
    rs = schema_of(rec);
    assert_int_equal(rs->n_fields, 3);
    assert_string_equal(rs->fields[2].name, "x");
    s3l_schema_free(rs);
    s3l_free(rec);
    /* A changed type is drift, named; allowed, it updates the record. */
    struct s3l_schema *drift =
        schema_of("[{\"name\": \"id\", \"type\": \"string\", \"nullable\": false, \"key\": true}]");
    d = open_dest(false);
    assert_int_equal(s3l_dest_stream(d, NULL, "t", drift, &st, &err), S3L_ESCHEMA_DRIFT);
    if (!strstr(err.message, "int64") || !strstr(err.message, "string") ||
        !strstr(err.message, "_openetl/schemas/t.json") || !strstr(err.message, dir))
        fail_msg("drift message: %s", err.message);
    s3l_dest_free(d);
    s3l_error_clear(&err);
    d = open_dest(true);
    assert_int_equal(s3l_dest_stream(d, NULL, "t", drift, &st, &err), 0);
    commit_one_row(d, st, 1, true);
    s3l_dest_free(d);
    assert_int_equal(s3l_dest_read_schema(store, "t", &rec, &len, &err), 0);
    rs = schema_of(rec);
    assert_int_equal(rs->fields[0].type.id, S3L_TYPE_UTF8);
    s3l_schema_free(rs);
    s3l_free(rec);
    s3l_schema_free(drift);
    s3l_schema_free(added);
    s3l_schema_free(sc);
}

/*
 * The Parquet format's record_union (a concurrent writer's record, current, with the carried one):
 * top-level columns current lacks are appended; a struct both have grows by the nested fields the
 * carried one adds (two writers adding s.a and s.b at once kept only one before: found by a
 * break-it run); a column both have with another type keeps current's; nothing to add gives none.
 */
static void record_union_appends_and_grows_structs(void **state)
{
    (void)state;
    struct s3l__dest_format f;
    struct s3l_error err = {0};
    assert_int_equal(s3l__format_parquet(NULL, 0, &f, &err), 0);
    const char *cur = "[{\"name\": \"id\", \"type\": \"int64\"}, "
                      "{\"name\": \"s\", \"type\": \"struct<a: int64>\"}, "
                      "{\"name\": \"v\", \"type\": \"string\"}]";
    const char *ours = "[{\"name\": \"id\", \"type\": \"int64\"}, "
                       "{\"name\": \"s\", \"type\": \"struct<b: string>\"}, "
                       "{\"name\": \"v\", \"type\": \"int64\"}, {\"name\": \"w\", \"type\": \"double\"}]";
    char *out = NULL;
    assert_int_equal(f.record_union(f.ctx, "u", cur, strlen(cur), ours, strlen(ours), &out, &err), 0);
    assert_non_null(out);
    struct s3l_schema *got = NULL;
    assert_int_equal(s3l_schema_from_json(out, strlen(out), &got, &err), 0);
    char names[256] = "";
    for (size_t i = 0; i < got->n_fields; i++) {
        char t[96];
        s3l__type_format(&got->fields[i].type, t, sizeof(t));
        snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s %s", i ? ", " : "",
                 got->fields[i].name, t);
    }
    assert_string_equal(names, "id int64, s struct<a: int64, b: string>, v string, w double");
    s3l_schema_free(got);
    s3l_free(out);
    /* current already holds every column and field of ours: nothing to write */
    out = NULL;
    assert_int_equal(f.record_union(f.ctx, "u", cur, strlen(cur), cur, strlen(cur), &out, &err), 0);
    assert_null(out);
    f.destroy(f.ctx);
}

static void disposition_refused_before_anything(void **state)
{
    (void)state;
    struct s3l_dest_options o = {0};
    o.version = S3L_DEST_OPTIONS_VERSION;
    o.pipeline_id = "pq2";
    o.disposition = "merge";
    struct s3l_dest *d = NULL;
    struct s3l_error err = {0};
    assert_int_equal(s3l_dest_open(store, &o, &d, &err), S3L_EUNSUPPORTED);
    assert_non_null(strstr(err.message, "merge"));
    struct s3l_object_info info;
    assert_int_equal(s3l_store_stat(store, "_openetl/checkpoints/pq2.json", &info, NULL),
                     S3L_ENOT_FOUND);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(parquet_files_and_schema_records),
        cmocka_unit_test(disposition_refused_before_anything),
        cmocka_unit_test(record_union_appends_and_grows_structs),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
