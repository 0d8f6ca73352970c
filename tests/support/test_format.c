/*
 * The test file format (test_format.h): lets the destination's protocol be tested without the Parquet
 * writer, with files whose content a test can read back by hand.
 */
#include "test_format.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schema/schema_int.h"
#include "util/util.h"

struct tw {
    struct s3l_pq_sink sink;
    struct s3l_buf row;
    bool bad;
    bool first;
    uint64_t rows;
    uint64_t bytes;
    int sticky;
    struct s3l_error err;
};

static int emit(struct tw *w, const void *p, size_t n, struct s3l_error *err)
{
    if (w->sticky)
        return w->sticky;
    int rc = w->sink.write(w->sink.ctx, p, n, err);
    if (rc)
        return w->sticky = rc;
    w->bytes += n;
    return 0;
}

static int sep(struct tw *w)
{
    if (!w->first)
        s3l_buf_append_byte(&w->row, ',');
    w->first = false;
    return 0;
}

static int t_row_begin(void *ctx)
{
    struct tw *w = ctx;
    s3l_buf_reset(&w->row);
    w->bad = false;
    w->first = true;
    return 0;
}
static int t_null(void *ctx)
{
    struct tw *w = ctx;
    sep(w);
    return s3l_buf_append_byte(&w->row, 'N');
}
static int t_bool(void *ctx, bool v)
{
    struct tw *w = ctx;
    sep(w);
    return s3l_buf_append_byte(&w->row, v ? '1' : '0');
}
static int t_int(void *ctx, int64_t v)
{
    struct tw *w = ctx;
    sep(w);
    return s3l_buf_printf(&w->row, "%lld", (long long)v);
}
static int t_uint(void *ctx, uint64_t v)
{
    struct tw *w = ctx;
    sep(w);
    return s3l_buf_printf(&w->row, "%llu", (unsigned long long)v);
}
static int t_double(void *ctx, double v)
{
    struct tw *w = ctx;
    sep(w);
    return s3l_buf_printf(&w->row, "%.17g", v);
}
static int t_bytes(void *ctx, const void *p, size_t n)
{
    struct tw *w = ctx;
    sep(w);
    if (n == 3 && memcmp(p, "BAD", 3) == 0) {
        w->bad = true;
        return S3L_EINVALID_INPUT;
    }
    return s3l_buf_append(&w->row, p, n);
}
static int t_decimal(void *ctx, int64_t hi, uint64_t lo)
{
    (void)hi;
    return t_uint(ctx, lo);
}
static int t_interval(void *ctx, int32_t m, int32_t d, int64_t ns)
{
    (void)m;
    (void)d;
    return t_int(ctx, ns);
}
static int t_open_nested(void *ctx)
{
    struct tw *w = ctx;
    sep(w);
    w->first = true;
    return s3l_buf_append_byte(&w->row, '[');
}
static int t_close_nested(void *ctx)
{
    struct tw *w = ctx;
    w->first = false;
    return s3l_buf_append_byte(&w->row, ']');
}
static int t_row_end(void *ctx, struct s3l_error *err)
{
    struct tw *w = ctx;
    if (w->bad)
        return s3l_error_set(err, S3L_EINVALID_INPUT, "row %llu: value BAD refused",
                             (unsigned long long)w->rows + 1);
    int rc = s3l_buf_append_byte(&w->row, '\n');
    if (rc == 0)
        rc = emit(w, w->row.ptr, w->row.len, err);
    if (rc == 0)
        w->rows++;
    return rc;
}
static void t_row_abort(void *ctx)
{
    struct tw *w = ctx;
    s3l_buf_reset(&w->row);
}

static const struct s3l_row_sink_ops t_ops = {
    t_row_begin,    t_null,        t_bool,         t_int,         t_uint,         t_double,
    t_bytes,        t_decimal,     t_interval,     t_open_nested, t_close_nested, t_open_nested,
    t_close_nested, t_open_nested, t_close_nested, t_row_end,     t_row_abort, NULL,
};

static int c_open(void *ctx, const struct s3l_schema *schema, struct s3l_pq_sink sink, void **out,
                  struct s3l_error *err)
{
    (void)ctx;
    (void)schema;
    struct tw *w = s3l_calloc(1, sizeof(*w));
    if (!w)
        return S3L_ENOMEM;
    w->sink = sink;
    s3l_buf_init(&w->row, 1 << 20);
    int rc = emit(w, "TESTFMT\n", 8, err);
    if (rc) {
        s3l_buf_free(&w->row);
        s3l_free(w);
        return rc;
    }
    *out = w;
    return 0;
}
static struct s3l_row_sink c_sink(void *w)
{
    struct s3l_row_sink s = {&t_ops, w};
    return s;
}
static uint64_t c_rows(void *w)
{
    return ((struct tw *)w)->rows;
}
static uint64_t c_size(void *w)
{
    return ((struct tw *)w)->bytes;
}
static int c_close(void *vw, struct s3l_error *err)
{
    struct tw *w = vw;
    char t[64];
    int n = snprintf(t, sizeof(t), "END rows=%llu\n", (unsigned long long)w->rows);
    return emit(w, t, (size_t)n, err);
}
static void c_free(void *vw)
{
    struct tw *w = vw;
    if (!w)
        return;
    s3l_buf_free(&w->row);
    s3l_free(w);
}

static int c_merge(void *ctx, const char *table, const char *record_url, const char *record,
                   size_t len, const struct s3l_schema *schema, bool allow, char **out,
                   struct s3l_error *err)
{
    (void)ctx;
    (void)record_url;
    json_t *doc = record ? json_loadb(record, len, 0, NULL) : json_pack("{s:[]}", "columns");
    json_t *cols = doc ? json_object_get(doc, "columns") : NULL;
    if (!json_is_array(cols)) {
        json_decref(doc);
        return s3l_error_set(err, S3L_ECORRUPT, "schema record of %s unreadable", table);
    }
    bool changed = record == NULL;
    for (size_t i = 0; i < schema->n_fields; i++) {
        const struct s3l_field *f = &schema->fields[i];
        json_t *found = NULL;
        for (size_t j = 0; j < json_array_size(cols) && !found; j++) {
            json_t *c = json_array_get(cols, j);
            if (strcmp(json_string_value(json_object_get(c, "name")), f->name) == 0)
                found = c;
        }
        if (!found) {
            json_array_append_new(
                cols, json_pack("{s:s, s:i}", "name", f->name, "type", (int)f->type.id));
            changed = true;
        } else if (json_integer_value(json_object_get(found, "type")) != (int)f->type.id) {
            int old = (int)json_integer_value(json_object_get(found, "type"));
            if (!allow) {
                json_decref(doc);
                return s3l_error_set(err, S3L_ESCHEMA_DRIFT,
                                     "table %s: column %s changed type from %d to %d; remove "
                                     "_openetl/schemas/%s.json to accept it",
                                     table, f->name, old, (int)f->type.id, table);
            }
            json_object_set_new(found, "type", json_integer((int)f->type.id));
            changed = true;
        }
    }
    *out = NULL;
    if (changed) {
        char *t = s3l__json_dumps(doc, JSON_COMPACT | JSON_PRESERVE_ORDER);
        *out = t ? s3l_strdup(t) : NULL;
        s3l_free(t);
    }
    json_decref(doc);
    return changed && !*out ? s3l_error_set(err, S3L_ENOMEM, "out of memory merging %s", table) : 0;
}

/* The columns of carried that current lacks, appended; a column both name keeps current's type. */
static int c_union(void *ctx, const char *record_url, const char *current, size_t clen,
                   const char *carried, size_t alen, char **out, struct s3l_error *err)
{
    (void)ctx;
    json_t *cur = json_loadb(current, clen, 0, NULL), *ours = json_loadb(carried, alen, 0, NULL);
    json_t *cc = json_object_get(cur, "columns"), *oc = json_object_get(ours, "columns");
    int rc = 0;
    *out = NULL;
    if (!json_is_array(cc) || !json_is_array(oc))
        rc = s3l_error_set(err, S3L_ECORRUPT, "schema record %s unreadable", record_url);
    bool added = false;
    for (size_t i = 0; rc == 0 && i < json_array_size(oc); i++) {
        json_t *c = json_array_get(oc, i);
        const char *name = json_string_value(json_object_get(c, "name"));
        bool seen = false;
        for (size_t j = 0; j < json_array_size(cc) && !seen; j++)
            seen = name && strcmp(json_string_value(json_object_get(json_array_get(cc, j), "name")),
                                  name) == 0;
        if (!seen) {
            json_array_append(cc, c);
            added = true;
        }
    }
    if (rc == 0 && added) {
        char *t = s3l__json_dumps(cur, JSON_COMPACT | JSON_PRESERVE_ORDER);
        *out = t ? s3l_strdup(t) : NULL;
        s3l_free(t);
        rc = *out ? 0 : S3L_ENOMEM;
    }
    json_decref(cur);
    json_decref(ours);
    return rc;
}

void s3l_test_format(struct s3l__dest_format *c)
{
    memset(c, 0, sizeof(*c));
    c->ext = ".parquet";
    c->open = c_open;
    c->row_sink = c_sink;
    c->rows = c_rows;
    c->size_estimate = c_size;
    c->close = c_close;
    c->free = c_free;
    c->schema_merge = c_merge;
    c->record_union = c_union;
}

long s3l_test_format_parse(const char *data, size_t len,
                          void (*row)(void *ctx, const char *line, size_t len), void *ctx)
{
    if (len < 8 || memcmp(data, "TESTFMT\n", 8) != 0)
        return -1;
    size_t i = 8;
    while (i < len) {
        const char *nl = memchr(data + i, '\n', len - i);
        if (!nl)
            return -1;
        size_t n = (size_t)(nl - (data + i));
        if (n > 9 && memcmp(data + i, "END rows=", 9) == 0)
            return nl + 1 == data + len ? strtol(data + i + 9, NULL, 10) : -1;
        row(ctx, data + i, n);
        i += n + 1;
    }
    return -1;
}
