/*
 * pq_footer_dump: prints a Parquet file's footer as JSON through the library's footer reader
 * (include/s3l/pq_footer.h), independent of the CLI. Tests compare its output with DuckDB's
 * parquet_metadata() / parquet_schema(); people use it to look at a file.
 *   pq_footer_dump FILE|URL/KEY [--page-index] [--arrow] [--pages]
 * A file:// or s3:// argument names a store object: the store rooted at the URL up to the last
 * '/', and the key after it; the footer and page indexes are then read by ranged GETs.
 * "validation" is null, or what s3l_pq_footer_validate found wrong.
 * --page-index adds each chunk's ColumnIndex and OffsetIndex; --pages its page headers; --arrow adds the schema mapped to
 * Arrow types. Statistics and index bounds are printed as lowercase hex of their raw bytes;
 * statistics also as text (min_text, max_text) in the forms of s3l_pq_value_format.
 * Exit status: 0 ok, 1 the file could not be read (the message on stderr), 2 usage.
 */
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "s3l/destination.h"
#include "pq_fd.h"
#include "s3_env.h"
#include "s3l/pq_footer.h"
#include "s3l/store.h"
#include "schema/schema_int.h"
#include "util/util.h"

static json_t *hex(const struct s3l_pq_bytes *b)
{
    if (!b->ptr)
        return json_null();
    char *s = malloc(2 * b->len + 1);
    s3l_hex_encode(b->ptr, b->len, s);
    json_t *j = json_string(s);
    free(s);
    return j;
}

static json_t *opt_int(int64_t v)
{
    return v < 0 ? json_null() : json_integer(v);
}

static json_t *logical(const struct s3l_pq_logical *lt)
{
    if (lt->kind == S3L_PQ_LT_NONE)
        return json_null();
    json_t *o = json_pack("{s:i}", "kind", (int)lt->kind);
    if (lt->kind == S3L_PQ_LT_TIME || lt->kind == S3L_PQ_LT_TIMESTAMP) {
        json_object_set_new(o, "unit", json_integer(lt->unit));
        json_object_set_new(o, "adjusted_to_utc", json_boolean(lt->adjusted_to_utc));
    } else if (lt->kind == S3L_PQ_LT_INTEGER) {
        json_object_set_new(o, "bit_width", json_integer(lt->bit_width));
        json_object_set_new(o, "is_signed", json_boolean(lt->is_signed));
    } else if (lt->kind == S3L_PQ_LT_DECIMAL) {
        json_object_set_new(o, "precision", json_integer(lt->precision));
        json_object_set_new(o, "scale", json_integer(lt->scale));
    }
    return o;
}

static json_t *schema_json(const struct s3l_pq_footer *f)
{
    json_t *a = json_array();
    for (size_t i = 0; i < f->n_schema; i++) {
        const struct s3l_pq_schema_element *se = &f->schema[i];
        json_t *o = json_object();
        json_object_set_new(o, "name", json_string(se->name));
        json_object_set_new(o, "type", se->type < 0 ? json_null()
                                                    : json_string(s3l_pq_physical_name(se->type)));
        json_object_set_new(o, "type_length", opt_int(se->type_length));
        json_object_set_new(o, "repetition", se->repetition < 0 ? json_null()
                                : json_string(s3l_pq_repetition_name(se->repetition)));
        json_object_set_new(o, "num_children", json_integer(se->num_children));
        json_object_set_new(o, "converted_type", se->converted_type < 0 ? json_null()
                                : json_string(s3l_pq_converted_name(se->converted_type)));
        json_object_set_new(o, "scale", opt_int(se->scale));
        json_object_set_new(o, "precision", opt_int(se->precision));
        json_object_set_new(o, "field_id", opt_int(se->field_id));
        json_object_set_new(o, "logical", logical(&se->logical));
        json_object_set_new(o, "parent", json_integer(se->parent));
        json_object_set_new(o, "leaf", json_integer(se->leaf));
        json_object_set_new(o, "max_def", json_integer(se->max_def));
        json_object_set_new(o, "max_rep", json_integer(se->max_rep));
        json_array_append_new(a, o);
    }
    return a;
}

static json_t *text(const struct s3l_pq_schema_element *se, const struct s3l_pq_bytes *b)
{
    if (!b->ptr || !se)
        return json_null();
    char buf[512];
    int n = s3l_pq_value_format(se, b->ptr, b->len, buf, sizeof(buf));
    return n < 0 ? json_null() : json_stringn(buf, (size_t)n < sizeof(buf) ? (size_t)n
                                                                            : sizeof(buf) - 1);
}

static json_t *stats_json(const struct s3l_pq_stats *s, const struct s3l_pq_schema_element *se)
{
    if (!s->present)
        return json_null();
    json_t *o = json_object();
    json_object_set_new(o, "null_count", s->has_null_count ? json_integer(s->null_count)
                                                           : json_null());
    json_object_set_new(o, "distinct_count",
                        s->has_distinct_count ? json_integer(s->distinct_count) : json_null());
    json_object_set_new(o, "nan_count", s->has_nan_count ? json_integer(s->nan_count)
                                                         : json_null());
    json_object_set_new(o, "min_value", hex(&s->min_value));
    json_object_set_new(o, "max_value", hex(&s->max_value));
    json_object_set_new(o, "min_text", text(se, &s->min_value));
    json_object_set_new(o, "max_text", text(se, &s->max_value));
    json_object_set_new(o, "min", hex(&s->min));
    json_object_set_new(o, "max", hex(&s->max));
    json_object_set_new(o, "is_min_exact", s->has_min_exact ? json_boolean(s->is_min_exact)
                                                            : json_null());
    json_object_set_new(o, "is_max_exact", s->has_max_exact ? json_boolean(s->is_max_exact)
                                                            : json_null());
    return o;
}

static json_t *kv_json(const struct s3l_pq_kv *kv, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; i < n; i++) {
        json_t *v = kv[i].value.ptr ? json_stringn((const char *)kv[i].value.ptr,
                                                   kv[i].value.len)
                                    : json_null();
        json_array_append_new(a, json_pack("{s:s, s:o, s:o}", "key", kv[i].key, "value",
                                           v ? v : json_null(), "value_hex", hex(&kv[i].value)));
    }
    return a;
}

/* Where the page indexes are read from: a file descriptor or a store object. */
struct src {
    s3l_pq_read_fn fn;
    void *ctx;
};

static json_t *index_json(const struct src *src, const struct s3l_pq_footer *f,
                          const struct s3l_pq_column_chunk *cc)
{
    json_t *o = json_object();
    struct s3l_error err = {0};
    struct s3l_pq_column_index *ci;
    struct s3l_pq_offset_index *oi;
    if (s3l_pq_column_index_read(src->fn, src->ctx, f->file_size, cc, NULL, &ci, &err) == 0) {
        json_t *c = json_object(), *np = json_array(), *mn = json_array(), *mx = json_array(),
               *nc = json_array();
        for (size_t i = 0; i < ci->n_pages; i++) {
            json_array_append_new(np, json_boolean(ci->null_pages[i]));
            json_array_append_new(mn, hex(&ci->min_values[i]));
            json_array_append_new(mx, hex(&ci->max_values[i]));
            if (ci->has_null_counts)
                json_array_append_new(nc, json_integer(ci->null_counts[i]));
        }
        json_object_set_new(c, "null_pages", np);
        json_object_set_new(c, "min_values", mn);
        json_object_set_new(c, "max_values", mx);
        json_object_set_new(c, "boundary_order", json_integer(ci->boundary_order));
        json_object_set_new(c, "null_counts", ci->has_null_counts ? nc : (json_decref(nc),
                                                                          json_null()));
        json_object_set_new(o, "column_index", c);
        s3l_pq_column_index_free(ci);
    } else {
        json_object_set_new(o, "column_index_error", json_string(err.message));
    }
    s3l_error_clear(&err);
    if (s3l_pq_offset_index_read(src->fn, src->ctx, f->file_size, cc, NULL, &oi, &err) == 0) {
        json_t *a = json_array();
        for (size_t i = 0; i < oi->n_pages; i++)
            json_array_append_new(a, json_pack("{s:I, s:i, s:I}", "offset",
                                               (json_int_t)oi->pages[i].offset,
                                               "compressed_page_size",
                                               oi->pages[i].compressed_page_size,
                                               "first_row_index",
                                               (json_int_t)oi->pages[i].first_row_index));
        json_object_set_new(o, "page_locations", a);
        s3l_pq_offset_index_free(oi);
    } else {
        json_object_set_new(o, "offset_index_error", json_string(err.message));
    }
    return o;
}

static int page_cb(void *ctx, uint64_t offset, const struct s3l_pq_page_header *h)
{
    json_t *o = json_pack("{s:I, s:i, s:I, s:i, s:i, s:i, s:i}", "offset", (json_int_t)offset,
                          "type", h->type, "header_len", (json_int_t)h->header_len,
                          "compressed_page_size", h->compressed_page_size,
                          "uncompressed_page_size", h->uncompressed_page_size, "num_values",
                          h->num_values, "encoding", h->encoding);
    if (h->type == 3)
        json_object_update_new(o, json_pack("{s:i, s:i, s:i, s:i, s:b}", "num_nulls", h->num_nulls,
                                            "num_rows", h->num_rows, "def_levels_byte_length",
                                            h->def_levels_byte_length, "rep_levels_byte_length",
                                            h->rep_levels_byte_length, "is_compressed",
                                            h->is_compressed));
    json_array_append_new(ctx, o);
    return 0;
}

static json_t *pages_json(const struct src *src, const struct s3l_pq_footer *f,
                          const struct s3l_pq_column_chunk *cc)
{
    json_t *a = json_array();
    struct s3l_error err = {0};
    if (s3l_pq_chunk_pages(src->fn, src->ctx, f->file_size, cc, NULL, page_cb, a, &err) != 0) {
        json_decref(a);
        return json_pack("{s:s}", "error", err.message);
    }
    return a;
}

static json_t *chunk_json(const struct src *src, const struct s3l_pq_footer *f, size_t col,
                          const struct s3l_pq_column_chunk *cc, bool page_index, bool pages)
{
    json_t *o = json_object();
    json_t *enc = json_array();
    for (size_t i = 0; i < cc->n_encodings; i++)
        json_array_append_new(enc, json_string(s3l_pq_encoding_name(cc->encodings[i])));
    json_object_set_new(o, "path", json_string(cc->path_str ? cc->path_str : ""));
    json_object_set_new(o, "file_offset", json_integer(cc->file_offset));
    json_object_set_new(o, "type", json_string(s3l_pq_physical_name(cc->type)));
    json_object_set_new(o, "codec", json_string(s3l_pq_codec_name(cc->codec)));
    json_object_set_new(o, "encodings", enc);
    json_object_set_new(o, "num_values", json_integer(cc->num_values));
    json_object_set_new(o, "total_compressed_size", json_integer(cc->total_compressed_size));
    json_object_set_new(o, "total_uncompressed_size", json_integer(cc->total_uncompressed_size));
    json_object_set_new(o, "data_page_offset", json_integer(cc->data_page_offset));
    json_object_set_new(o, "dictionary_page_offset", opt_int(cc->dictionary_page_offset));
    json_object_set_new(o, "index_page_offset", opt_int(cc->index_page_offset));
    json_object_set_new(o, "statistics", stats_json(&cc->stats, s3l_pq_footer_leaf(f, col)));
    json_object_set_new(o, "bloom_filter_offset", opt_int(cc->bloom_filter_offset));
    json_object_set_new(o, "bloom_filter_length", opt_int(cc->bloom_filter_length));
    json_object_set_new(o, "offset_index_offset", opt_int(cc->offset_index_offset));
    json_object_set_new(o, "offset_index_length", opt_int(cc->offset_index_length));
    json_object_set_new(o, "column_index_offset", opt_int(cc->column_index_offset));
    json_object_set_new(o, "column_index_length", opt_int(cc->column_index_length));
    json_object_set_new(o, "key_value_metadata", kv_json(cc->kv, cc->n_kv));
    if (page_index)
        json_object_set_new(o, "page_index", index_json(src, f, cc));
    if (pages)
        json_object_set_new(o, "pages", pages_json(src, f, cc));
    return o;
}

static json_t *arrow_json(const struct s3l_pq_footer *f)
{
    struct s3l_schema *s;
    struct s3l_error err = {0};
    if (s3l_pq_footer_schema(f, &s, &err) != 0)
        return json_pack("{s:s}", "error", err.message);
    json_t *a = json_array();
    for (size_t i = 0; i < s->n_fields; i++) {
        char buf[4096];
        s3l__type_format(&s->fields[i].type, buf, sizeof(buf));
        json_array_append_new(a, json_pack("{s:s, s:s, s:b}", "name", s->fields[i].name, "type",
                                           buf, "nullable", s->fields[i].nullable));
    }
    s3l_schema_free(s);
    return a;
}

int main(int argc, char **argv)
{
    const char *path = NULL;
    bool page_index = false, arrow = false, pages = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--page-index") == 0)
            page_index = true;
        else if (strcmp(argv[i], "--arrow") == 0)
            arrow = true;
        else if (strcmp(argv[i], "--pages") == 0)
            pages = true;
        else if (!path)
            path = argv[i];
        else
            path = NULL, i = argc;
    }
    if (!path) {
        fprintf(stderr, "usage: pq_footer_dump FILE|URL/KEY [--page-index] [--arrow] [--pages]\n");
        return 2;
    }
    struct s3l_pq_footer_options o;
    s3l_pq_footer_options_init(&o);
    o.name = path;
    struct s3l_pq_footer *f;
    struct s3l_error err = {0};
    int fd = -1, rc;
    struct s3l_store *store = NULL;
    struct s3l_pq_store_src ssrc = {NULL, NULL};
    struct src source = {s3l_test_pq_read_fd, &fd};
    const char *slash = strrchr(path, '/');
    if ((!strncmp(path, "file://", 7) || !strncmp(path, "s3://", 5)) && slash) {
        /* URL/KEY: the store rooted at URL, the object KEY (one path segment). */
        char *root = strndup(path, (size_t)(slash - path));
        struct s3l_test_s3_store env; /* s3://: the environment, read as the CLI reads it */
        rc = s3l_test_s3_store_env(&env) ? s3l_error_set(&err, S3L_EIO, "open S3LAND_TRACE") : 0;
        if (rc == 0)
            rc = s3l_store_open(root, strncmp(root, "s3://", 5) ? NULL : &env.so, &store, &err);
        free(root);
        ssrc = (struct s3l_pq_store_src){store, slash + 1};
        source = (struct src){s3l_pq_read_store, &ssrc};
        if (rc == 0)
            rc = s3l_pq_footer_read_store(store, slash + 1, &o, &f, &err);
    } else {
        fd = open(path, O_RDONLY);
        if (fd < 0) {
            perror(path);
            return 1;
        }
        rc = s3l_test_pq_footer_read_fd(fd, &o, &f, &err);
    }
    if (rc != 0) {
        fprintf(stderr, "pq_footer_dump: %s (%s)\n", err.message, s3l_error_name(err.code));
        if (fd >= 0)
            close(fd);
        s3l_store_free(store);
        return 1;
    }
    json_t *root = json_object();
    json_object_set_new(root, "file_size", json_integer((json_int_t)f->file_size));
    json_object_set_new(root, "metadata_offset", json_integer((json_int_t)f->metadata_offset));
    json_object_set_new(root, "metadata_len", json_integer(f->metadata_len));
    json_object_set_new(root, "version", json_integer(f->version));
    json_object_set_new(root, "num_rows", json_integer(f->num_rows));
    json_object_set_new(root, "created_by", f->created_by ? json_string(f->created_by)
                                                          : json_null());
    json_object_set_new(root, "encrypted", json_boolean(f->encrypted));
    struct s3l_error verr = {0};
    json_object_set_new(root, "validation", s3l_pq_footer_validate(f, &verr) == 0
                                                ? json_null()
                                                : json_string(verr.message));
    json_object_set_new(root, "schema", schema_json(f));
    json_t *leaves = json_array();
    for (size_t i = 0; i < f->n_leaves; i++)
        json_array_append_new(leaves, json_integer((json_int_t)f->leaves[i]));
    json_object_set_new(root, "leaves", leaves);
    json_t *orders = json_array();
    for (size_t i = 0; i < f->n_column_orders; i++)
        json_array_append_new(orders, json_integer(f->column_orders[i]));
    json_object_set_new(root, "column_orders", orders);
    json_object_set_new(root, "key_value_metadata", kv_json(f->kv, f->n_kv));
    json_t *rgs = json_array();
    for (size_t g = 0; g < f->n_row_groups; g++) {
        const struct s3l_pq_row_group *rg = &f->row_groups[g];
        json_t *cols = json_array();
        for (size_t i = 0; i < rg->n_columns; i++)
            json_array_append_new(cols, chunk_json(&source, f, i, &rg->columns[i], page_index, pages));
        json_array_append_new(rgs, json_pack("{s:I, s:I, s:o, s:o, s:o, s:o}", "num_rows",
                                             (json_int_t)rg->num_rows, "total_byte_size",
                                             (json_int_t)rg->total_byte_size, "file_offset",
                                             opt_int(rg->file_offset), "total_compressed_size",
                                             opt_int(rg->total_compressed_size), "ordinal",
                                             opt_int(rg->ordinal), "columns", cols));
    }
    json_object_set_new(root, "row_groups", rgs);
    if (arrow)
        json_object_set_new(root, "arrow_schema", arrow_json(f));
    json_dumpf(root, stdout, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
    fputc('\n', stdout);
    json_decref(root);
    s3l_pq_footer_free(f);
    if (fd >= 0)
        close(fd);
    s3l_store_free(store);
    return 0;
}
