/*
 * The model pipeline and its checker (model_runner.h). The checker's right answers come from
 * the model (row i exists once), and it verifies file digests with its own SHA-256 call.
 */
#include "model_runner.h"

#include <jansson.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commit/commit.h"
#include "s3l/destination.h"
#include "s3_env.h"
#include "s3l/store.h"
#include "s3l/sys/store.h"
#include "schema/schema_int.h"
#include "test_format.h"
#include "util/util.h"

/* Opens the run's store; an s3:// one with the client config the CLI would give it (region,
 * endpoint and trace from the environment, s3_env.h: the library reads none). */
static int open_store(const char *url, struct s3l_store **out, struct s3l_error *err)
{
    struct s3l_test_s3_store env;
    bool s3 = strncmp(url, "s3://", 5) == 0;
    if (s3 && s3l_test_s3_store_env(&env) != 0)
        return s3l_error_set(err, S3L_EIO, "$S3LAND_TRACE cannot be opened");
    return s3l_store_open(url, s3 ? &env.so : NULL, out, err);
}

static struct s3l_field fields[] = {
    {"id", {.id = S3L_TYPE_INT64}, false, true},
    {"name", {.id = S3L_TYPE_UTF8}, true, false},
};
static const struct s3l_schema schema = {2, fields};

static void table_name(unsigned t, char *ns, char *name)
{
    snprintf(ns, 8, "%s", t == 0 ? "ns" : "");
    snprintf(name, 16, "t%u", t);
}

static int write_row(struct s3l_row_sink *sink, uint64_t i, struct s3l_error *err)
{
    char text[32];
    int n = snprintf(text, sizeof(text), "r%llu", (unsigned long long)i);
    int rc = sink->ops->row_begin(sink->ctx);
    if (rc == 0)
        rc = sink->ops->put_int(sink->ctx, (int64_t)i);
    if (rc == 0)
        rc = sink->ops->put_bytes(sink->ctx, text, (size_t)n);
    if (rc) {
        sink->ops->row_abort(sink->ctx);
        return s3l_error_set(err, rc, "row %llu refused", (unsigned long long)i);
    }
    return sink->ops->row_end(sink->ctx, err);
}

static int run_epochs(const struct s3l_test_run *r, struct s3l_dest *d,
                      struct s3l_dest_stream **streams, struct s3l_error *err)
{
    uint64_t next = 0;
    const char *state = s3l_dest_state(d);
    if (state) {
        json_t *j = json_loads(state, 0, NULL);
        next = (uint64_t)json_integer_value(json_object_get(j, "next"));
        json_decref(j);
    }
    int rc = 0;
    while (rc == 0 && next < r->total_rows) {
        uint64_t end = S3L_MIN(next + r->epoch_rows, r->total_rows);
        for (uint64_t i = next; i < end && rc == 0; i++) {
            struct s3l_dest_stream *st = streams[i % r->tables];
            if (r->reject_every && i % r->reject_every == r->reject_every - 1) {
                char rec[48];
                int n = snprintf(rec, sizeof(rec), "{\"id\": %llu}", (unsigned long long)i);
                rc = s3l_dest_reject(st, rec, (size_t)n, "model reject", err);
                continue;
            }
            struct s3l_row_sink sink;
            s3l_dest_lane_sink(st, (unsigned)(i % r->lanes), &sink);
            rc = write_row(&sink, i, err);
        }
        char st[64];
        snprintf(st, sizeof(st), "{\"next\": %llu}", (unsigned long long)end);
        if (rc == 0)
            rc = s3l_dest_commit(d, st, NULL, err);
        if (rc)
            s3l_dest_abort(d);
        next = end;
    }
    return rc;
}

int s3l_test_run(const struct s3l_test_run *r, struct s3l_error *err)
{
    struct s3l_store *s = NULL;
    struct s3l_dest *d = NULL;
    struct s3l_dest_stream *streams[8] = {0};
    int rc = open_store(r->url, &s, err);
    if (rc)
        return rc;
    struct s3l_dest_options o = {0};
    o.version = S3L_DEST_OPTIONS_VERSION;
    o.pipeline_id = r->pipeline;
    o.lanes = r->lanes;
    o.file_size = r->file_size;
    o.serial_commit = r->serial;
    o.defer_commit_point = true; /* as the runner (pipeline/table.c) */
    struct s3l__dest_format format;
    s3l_test_format(&format);
    rc = s3l__dest_open_format(s, &o, &format, &d, err);
    if (rc == 0 && r->gc)
        rc = s3l_dest_gc(d, NULL, err);
    for (unsigned t = 0; rc == 0 && t < r->tables; t++) {
        char ns[8], name[16];
        table_name(t, ns, name);
        rc = s3l_dest_stream(d, ns, name, &schema, &streams[t], err);
    }
    if (rc == 0)
        rc = run_epochs(r, d, streams, err);
    if (rc == 0 && d)
        rc = s3l_dest_sync(d, NULL, err); /* the run ends when its last epoch is finished */
    s3l_dest_free(d);
    s3l_store_free(s);
    return rc;
}

/* --- the checker --- */

struct check {
    struct s3l_store *s;
    uint8_t *seen; /* per row: times visible */
    uint64_t total;
    char *why;
    size_t cap;
    int bad;
    unsigned markers, files;
};

static void on_row(void *ctx, const char *line, size_t len)
{
    struct check *c = ctx;
    char buf[64];
    snprintf(buf, sizeof(buf), "%.*s", (int)S3L_MIN(len, (size_t)63), line);
    unsigned long long i = strtoull(buf, NULL, 10);
    char want[64];
    snprintf(want, sizeof(want), "%llu,r%llu", i, i);
    if (i >= c->total || strcmp(buf, want) != 0) {
        if (!c->bad)
            snprintf(c->why, c->cap, "unexpected row '%s'", buf);
        c->bad = 1;
        return;
    }
    if (++c->seen[i] > 1 && !c->bad) {
        snprintf(c->why, c->cap, "row %llu visible twice", i);
        c->bad = 1;
    }
}

static int check_file(struct check *c, const struct s3l_dest_file *f, bool data)
{
    uint8_t *buf = NULL;
    size_t n = 0;
    struct s3l_error err = {0};
    if (s3l_store_get(c->s, f->key, 0, UINT64_MAX, 1 << 30, &buf, &n, NULL, &err) != 0) {
        snprintf(c->why, c->cap, "marker lists %s: %s", f->key, err.message);
        return c->bad = -1;
    }
    uint8_t md[32];
    char hex[65];
    unsigned int mdlen;
    EVP_Digest(buf, n, md, &mdlen, EVP_sha256(), NULL);
    s3l_hex_encode(md, 32, hex);
    int rc = 0;
    if (n != f->size || strcmp(hex, f->sha256) != 0) {
        snprintf(c->why, c->cap, "%s: size %zu sha %s, marker says %llu %s", f->key, n, hex,
                 (unsigned long long)f->size, f->sha256);
        rc = c->bad = -1;
    } else if (data) {
        long rows = s3l_test_format_parse((const char *)buf, n, on_row, c);
        if (rows < 0 || (uint64_t)rows != f->rows) {
            snprintf(c->why, c->cap, "%s: %ld rows, marker says %llu", f->key, rows,
                     (unsigned long long)f->rows);
            rc = c->bad = -1;
        }
    } else {
        /* A dead-letter file: lines {"reason":..,"record":"{\"id\": i}"}. */
        for (char *p = (char *)buf; p && *p;) {
            char *nl = strchr(p, '\n');
            const char *id = strstr(p, "id\\\": ");
            if (id) {
                unsigned long long i = strtoull(id + 6, NULL, 10);
                if (i < c->total && ++c->seen[i] > 1 && !c->bad) {
                    snprintf(c->why, c->cap, "rejected row %llu visible twice", i);
                    c->bad = -1;
                }
            }
            p = nl ? nl + 1 : NULL;
        }
    }
    s3l_free(buf);
    return rc;
}

static int on_marker(void *ctx, const struct s3l_dest_marker *m)
{
    struct check *c = ctx;
    c->markers++;
    for (size_t i = 0; i < m->n_files; i++, c->files++)
        check_file(c, &m->files[i], true);
    for (size_t i = 0; i < m->n_deadletter; i++)
        check_file(c, &m->deadletter[i], false);
    return 0;
}

static int on_table_file(void *ctx, const struct s3l_object_info *info, bool committed)
{
    struct check *c = ctx;
    if (!committed && !c->bad) {
        snprintf(c->why, c->cap, "data file %s outside any marker", info->key);
        c->bad = -1;
    }
    return 0;
}

static int count_marker_cb(void *ctx, const struct s3l_dest_marker *m)
{
    (void)m;
    (*(unsigned *)ctx)++;
    return 0;
}

/* Whether pipeline's checkpoint holds a pending epoch carrying a schema record of table. */
static bool pending_carries(struct s3l_store *s, const char *pipeline, const char *table)
{
    char *key = s3l__key_checkpoint(pipeline);
    uint8_t *p = NULL;
    size_t n = 0;
    bool found = false;
    if (key && s3l_store_get(s, key, 0, UINT64_MAX, S3L__DOC_MAX, &p, &n, NULL, NULL) == 0) {
        json_t *doc = json_loadb((const char *)p, n, 0, NULL);
        json_t *a = json_object_get(json_object_get(doc, "pending"), "schemas");
        for (size_t i = 0; i < json_array_size(a) && !found; i++) {
            const char *t = json_string_value(json_object_get(json_array_get(a, i), "table"));
            found = t && strcmp(t, table) == 0;
        }
        json_decref(doc);
    }
    s3l_free(p);
    s3l_free(key);
    return found;
}

/*
 * The schema record never runs ahead of the data (issue 10 item 14): every run of the model has
 * one schema, so a record of T may exist only once an epoch holding T's rows passed its commit
 * point: a marker of T exists, or the pending epoch carries T's record (finish writes it first).
 */
static int record_behind_data(struct check *c, const char *pipeline, const char *path)
{
    char *rec = NULL;
    size_t len = 0;
    if (s3l_dest_read_schema(c->s, path, &rec, &len, NULL) != 0)
        return 0; /* no record: nothing ahead */
    s3l_free(rec);
    unsigned markers = 0;
    struct s3l_error err = {0};
    s3l_dest_list_markers(c->s, path, count_marker_cb, &markers, &err);
    if (markers || pending_carries(c->s, pipeline, path))
        return 0;
    snprintf(c->why, c->cap, "schema record of %s exists, but no epoch holding its rows passed "
                             "its commit point", path);
    return -1;
}

int s3l_test_verify(const struct s3l_test_run *r, bool complete, char *why, size_t cap)
{
    struct check c = {0};
    c.why = why;
    c.cap = cap;
    c.total = r->total_rows;
    c.seen = calloc(r->total_rows + 1, 1);
    struct s3l_error err = {0};
    if (open_store(r->url, &c.s, &err) != 0) {
        snprintf(why, cap, "open: %s", err.message);
        free(c.seen);
        return -1;
    }
    for (unsigned t = 0; t < r->tables && !c.bad; t++) {
        char ns[8], name[16], *path = NULL;
        table_name(t, ns, name);
        s3l_dest_table_path(ns, name, &path, NULL);
        if (s3l_dest_list_markers(c.s, path, on_marker, &c, &err) != 0) {
            snprintf(why, cap, "markers of %s: %s", path, err.message);
            c.bad = -1;
        }
        if (!c.bad)
            c.bad = record_behind_data(&c, r->pipeline, path);
        if (complete && !c.bad)
            s3l_dest_list_files(c.s, path, false, on_table_file, &c, &err);
        s3l_free(path);
    }
    for (uint64_t i = 0; complete && !c.bad && i < r->total_rows; i++)
        if (c.seen[i] != 1) {
            snprintf(why, cap, "row %llu visible %d times", (unsigned long long)i, c.seen[i]);
            c.bad = -1;
        }
    s3l_store_free(c.s);
    free(c.seen);
    return c.bad ? -1 : 0;
}

static int count_obj(void *ctx, const struct s3l_object_info *info)
{
    (void)info;
    (*(unsigned *)ctx)++;
    return 0;
}

static int count_marker(void *ctx, const struct s3l_dest_marker *m)
{
    (void)m;
    (*(unsigned *)ctx)++;
    return 0;
}

static int count_file(void *ctx, const struct s3l_object_info *info, bool committed)
{
    (void)info;
    (void)committed;
    (*(unsigned *)ctx)++;
    return 0;
}

int s3l_test_census(const struct s3l_test_run *r, struct s3l_test_census *c)
{
    memset(c, 0, sizeof(*c));
    struct s3l_store *s;
    struct s3l_error err = {0};
    if (open_store(r->url, &s, &err) != 0)
        return -1;
    char prefix[128];
    snprintf(prefix, sizeof(prefix), "_openetl/staging/%s/", r->pipeline);
    int rc = s3l_store_list(s, prefix, count_obj, &c->staged, &err);
    for (unsigned t = 0; rc == 0 && t < r->tables; t++) {
        char ns[8], name[16], *path = NULL;
        table_name(t, ns, name);
        s3l_dest_table_path(ns, name, &path, NULL);
        rc = s3l_dest_list_markers(s, path, count_marker, &c->markers, &err);
        if (rc == 0)
            rc = s3l_dest_list_files(s, path, false, count_file, &c->data_files, &err);
        s3l_free(path);
    }
    struct s3l__ckpt ck;
    if (rc == 0 && s3l__ckpt_read(s, r->pipeline, &ck, &err) == 0) {
        c->pending = ck.has_pending;
        c->committed_epoch = ck.committed_epoch;
        s3l__ckpt_cleanup(&ck);
    }
    s3l_store_free(s);
    return rc;
}
