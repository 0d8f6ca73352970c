/*
 * `s3land check`'s step 7, the real load path: a scratch destination inside the real one
 * (s3l_store_sub_new at URL/_openetl/check/<uuid>/, through the same backend, connection and
 * credentials), written by the destination code a run uses (s3l_dest_open claims a generation in
 * the checkpoint; the lane stages a Parquet file; s3l_dest_commit records the epoch in the
 * checkpoint, copies the file to its final name and writes the marker), then read back the way
 * a reader and the next run would: the markers' row counts, each file's Parquet footer, and the
 * pipeline state of a reopened destination. Then every object of it is removed and the area is
 * listed empty, so the destination is left as it was.
 */
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "cli.h"

#define TABLE "check"

static const char schema_json[] =
    "[{\"name\": \"id\", \"type\": \"int64\", \"nullable\": false},"
    " {\"name\": \"s\", \"type\": \"string\", \"nullable\": true}]";

/* What the markers and the footers of the scratch table say. */
struct counted {
    struct s3l_store *store;
    uint64_t marker_rows, footer_rows, files, markers;
    int rc;
    struct s3l_error *err;
};

static int count_marker(void *ctx, const struct s3l_dest_marker *m)
{
    struct counted *c = ctx;
    c->markers++;
    c->marker_rows += m->rows;
    for (size_t i = 0; i < m->n_files; i++) {
        struct s3l_pq_footer_options o;
        s3l_pq_footer_options_init(&o);
        struct s3l_pq_footer *f = NULL;
        int rc = s3l_pq_footer_read_store(c->store, m->files[i].key, &o, &f, c->err);
        if (rc) {
            c->rc = rc;
            return rc;
        }
        c->footer_rows += f->num_rows > 0 ? (uint64_t)f->num_rows : 0;
        c->files++;
        s3l_pq_footer_free(f);
    }
    return 0;
}

/* Opens the scratch pipeline (a new generation each time). */
static int open_dest(struct s3l_store *sub, const char *pipeline, struct s3l_dest **d,
                     struct s3l_error *err)
{
    struct s3l_dest_options o = {0};
    o.version = S3L_DEST_OPTIONS_VERSION;
    o.pipeline_id = pipeline;
    o.file_size = 1 << 20;
    o.memory = 8 << 20;
    return s3l_dest_open(sub, &o, d, err);
}

/* rows rows of (id, "row ID") into lane 0, committed as one epoch with state. */
static int write_epoch(struct s3l_dest *d, const struct s3l_schema *sc, unsigned rows,
                       const char *state, struct s3l_error *err)
{
    struct s3l_dest_stream *st = NULL;
    struct s3l_row_sink k;
    int rc = s3l_dest_stream(d, NULL, TABLE, sc, &st, err);
    if (rc == 0 && (rc = s3l_dest_lane_sink(st, 0, &k)) != 0)
        s3l_error_set(err, rc, "the scratch table's lane");
    for (unsigned i = 0; rc == 0 && i < rows; i++) {
        char text[32];
        int n = snprintf(text, sizeof(text), "row %u", i);
        rc = k.ops->row_begin(k.ctx);
        rc = rc ? rc : k.ops->put_int(k.ctx, (int64_t)i);
        rc = rc ? rc : k.ops->put_bytes(k.ctx, text, (size_t)n);
        int end = k.ops->row_end(k.ctx, err);
        rc = rc ? rc : end;
    }
    if (rc == 0)
        rc = s3l_dest_commit(d, state, NULL, err);
    if (rc == 0)
        rc = s3l_dest_sync(d, NULL, err); /* the check reads the epoch back: finished first */
    return rc;
}

static int add_key(void *ctx, const struct s3l_object_info *info)
{
    return cli_strings_add(ctx, info->key);
}

int cli_check_remove_under(struct s3l_store *store, const char *prefix, size_t *n,
                           struct s3l_error *err)
{
    struct cli_strings keys = {0};
    int rc = s3l_store_list(store, prefix, add_key, &keys, err);
    if (n)
        *n = keys.n;
    if (rc == 0 && keys.n > 0)
        rc = s3l_store_remove_many(store, (const char *const *)keys.v, keys.n, err);
    cli_strings_free(&keys);
    return rc;
}

/* Removes every object of the sub-store and checks that none is left. */
static int remove_all(struct s3l_store *sub, const char *area, size_t *n, struct s3l_error *err)
{
    struct cli_strings keys = {0};
    int rc = cli_check_remove_under(sub, "", n, err);
    if (rc == 0)
        rc = s3l_store_sweep(sub, "", INT64_MAX, NULL, err); /* the local store's temp files */
    if (rc == 0)
        rc = s3l_store_list(sub, "", add_key, &keys, err);
    if (rc == 0 && keys.n > 0)
        rc = s3l_error_set(err, S3L_EIO, "%s%s is still there after the scratch table was "
                           "removed", area, keys.v[0]);
    cli_strings_free(&keys);
    return rc;
}

/* The scratch table written, then read back; *rows_back and *files as found. */
static int load(struct s3l_store *sub, const char *pipeline, unsigned rows, const char *state,
                struct counted *cnt, struct s3l_error *err)
{
    struct s3l_schema *sc = NULL;
    int rc = s3l_schema_from_json(schema_json, strlen(schema_json), &sc, err);
    struct s3l_dest *d = NULL;
    if (rc == 0)
        rc = open_dest(sub, pipeline, &d, err);
    if (rc == 0)
        rc = write_epoch(d, sc, rows, state, err);
    s3l_dest_free(d);
    d = NULL;
    if (rc == 0)
        rc = s3l_dest_list_markers(sub, TABLE, count_marker, cnt, err);
    if (rc == 0 && cnt->rc)
        rc = cnt->rc;
    if (rc == 0 && (cnt->marker_rows != rows || cnt->footer_rows != rows || cnt->files == 0))
        rc = s3l_error_set(err, S3L_ECORRUPT, "the scratch table was committed with %u rows, "
                           "but its %llu marker(s) say %llu and the Parquet footers of its "
                           "%llu file(s) %llu", rows, (unsigned long long)cnt->markers,
                           (unsigned long long)cnt->marker_rows, (unsigned long long)cnt->files,
                           (unsigned long long)cnt->footer_rows);
    /* the pipeline state, as the next run reads it from the checkpoint */
    if (rc == 0)
        rc = open_dest(sub, pipeline, &d, err);
    if (rc == 0) {
        const char *got = s3l_dest_state(d);
        json_t *a = json_loads(state, 0, NULL), *b = got ? json_loads(got, 0, NULL) : NULL;
        if (!a || !b || !json_equal(a, b) || s3l_dest_committed_epoch(d) != 1)
            rc = s3l_error_set(err, S3L_ECORRUPT, "the scratch pipeline's state read back from "
                               "its checkpoint is %.200s at epoch %llu, not %s at epoch 1",
                               got ? got : "none", (unsigned long long)s3l_dest_committed_epoch(d),
                               state);
        json_decref(a);
        json_decref(b);
    }
    s3l_dest_free(d);
    s3l_schema_free(sc);
    return rc;
}

int cli_check_load(struct s3l_store *store, const char *area, unsigned rows, char *detail,
                   size_t cap, struct s3l_error *err)
{
    struct s3l_store *sub = NULL;
    int rc = s3l_store_sub_new(store, area, &sub, err);
    if (rc)
        return rc;
    /* the pipeline id: the area's uuid ("_openetl/check/<uuid>/") */
    char pipeline[64];
    const char *id = area + strlen(s3l_dest_scratch_prefix());
    snprintf(pipeline, sizeof(pipeline), "%.*s", (int)strcspn(id, "/"), id);
    char state[128];
    snprintf(state, sizeof(state), "{\"check\":\"%s\",\"rows\":%u}", pipeline, rows);
    struct counted cnt = {sub, 0, 0, 0, 0, 0, err};
    rc = load(sub, pipeline, rows, state, &cnt, err);
    if (rc)
        s3l_error_prefix(err, "scratch table %s%s", area, TABLE);
    size_t removed = 0;
    struct s3l_error e2 = {0};
    int rc2 = remove_all(sub, area, &removed, rc ? &e2 : err);
    if (rc == 0 && rc2)
        rc = rc2;
    s3l_store_free(sub);
    if (rc == 0)
        snprintf(detail, cap, "table %s%s: %u rows staged, checkpointed, copied and marked "
                 "(epoch 1); %llu rows in the marker and in the Parquet footers of %llu "
                 "file(s); the pipeline state read back from the checkpoint; its %zu objects "
                 "removed", area, TABLE, rows, (unsigned long long)cnt.footer_rows,
                 (unsigned long long)cnt.files, removed);
    return rc;
}
