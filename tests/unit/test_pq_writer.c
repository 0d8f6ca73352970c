/*
 * Unit tests of the Parquet writer's behaviour that needs no reader: a rejected row leaves no
 * trace (the file is byte-identical to one written without it), errors name the row and column,
 * state misuse, sticky sink errors, the shared budget, the row sink adapter, bad schemas and
 * options, and every allocation failing in turn (no crash, no leak under ASan).
 * Values themselves are checked by DuckDB in tests/integration/test_pq_types.mjs.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>

#include "s3l/parquet.h"
#include "util/util.h"

struct mem {
    struct s3l_buf b;
    size_t fail_after; /* fail writes once this many bytes went through; 0: never */
};

static int mem_write(void *ctx, const void *data, size_t len, struct s3l_error *err)
{
    struct mem *m = ctx;
    if (m->fail_after && m->b.len + len > m->fail_after)
        return s3l_error_set(err, S3L_EIO, "sink full at %zu bytes", m->b.len);
    int rc = s3l_buf_append(&m->b, data, len);
    return rc ? s3l_error_set(err, rc, "sink") : 0;
}

static struct s3l_field leaf(const char *name, enum s3l_type_id id, bool nullable)
{
    struct s3l_field f;
    memset(&f, 0, sizeof(f));
    f.name = (char *)name;
    f.type.id = id;
    f.nullable = nullable;
    return f;
}

/* Schema: i int8, s utf8, l list<int32>, r int64 required. */
static struct s3l_field g_item;
static struct s3l_field g_fields[4];
static struct s3l_schema g_schema = {4, g_fields};

static void setup_schema(void)
{
    g_item = leaf("item", S3L_TYPE_INT32, true);
    g_fields[0] = leaf("i", S3L_TYPE_INT8, true);
    g_fields[1] = leaf("s", S3L_TYPE_UTF8, true);
    g_fields[2] = leaf("l", S3L_TYPE_LIST, true);
    g_fields[2].type.n_children = 1;
    g_fields[2].type.children = &g_item;
    g_fields[3] = leaf("r", S3L_TYPE_INT64, false);
}

static int good_row(struct s3l_pq_writer *w, int k)
{
    struct s3l_error err = {0};
    assert_int_equal(s3l_pq_row_begin(w), 0);
    s3l_pq_put_int(w, k % 100);
    char s[16];
    snprintf(s, sizeof(s), "v%d", k);
    s3l_pq_put_bytes(w, s, strlen(s));
    s3l_pq_begin_list(w);
    for (int i = 0; i < k % 3; i++)
        s3l_pq_put_int(w, i);
    s3l_pq_end_list(w);
    s3l_pq_put_int(w, (int64_t)k * 1000);
    return s3l_pq_row_end(w, &err);
}

static struct s3l_pq_writer *open_writer(struct mem *m, const struct s3l_pq_options *o)
{
    struct s3l_pq_writer *w = NULL;
    struct s3l_error err = {0};
    struct s3l_pq_sink sink = {mem_write, m};
    assert_int_equal(s3l_pq_writer_new(&g_schema, o, sink, &w, &err), 0);
    return w;
}

static void finish(struct s3l_pq_writer *w)
{
    struct s3l_error err = {0};
    assert_int_equal(s3l_pq_writer_close(w, &err), 0);
    s3l_pq_writer_free(w);
}

static void rejected_rows_leave_no_trace(void **state)
{
    (void)state;
    struct mem a = {0}, b = {0};
    s3l_buf_init(&a.b, SIZE_MAX / 2);
    s3l_buf_init(&b.b, SIZE_MAX / 2);
    struct s3l_pq_writer *wa = open_writer(&a, NULL), *wb = open_writer(&b, NULL);
    for (int k = 0; k < 50; k++) {
        assert_int_equal(good_row(wa, k), 0);
        assert_int_equal(good_row(wb, k), 0);
        /* Bad rows into wb only, failing at different depths after partial values. */
        struct s3l_error err = {0};
        s3l_pq_row_begin(wb);
        s3l_pq_put_int(wb, 1);
        s3l_pq_put_bytes(wb, "ok", 2);
        s3l_pq_begin_list(wb);
        s3l_pq_put_int(wb, 7);
        assert_int_equal(s3l_pq_put_bytes(wb, "x", 1), S3L_EINVALID_INPUT);
        assert_int_equal(s3l_pq_put_int(wb, 8), S3L_EINVALID_INPUT); /* poisoned */
        assert_int_equal(s3l_pq_row_end(wb, &err), S3L_EINVALID_INPUT);
        assert_non_null(strstr(err.message, "column l.element"));
        s3l_error_clear(&err);
        s3l_pq_row_begin(wb);
        assert_int_equal(s3l_pq_put_int(wb, 300), S3L_EINVALID_INPUT);
        assert_int_equal(s3l_pq_row_end(wb, &err), S3L_EINVALID_INPUT);
        assert_non_null(strstr(err.message, "column i: 300 is out of range [-128, 127]"));
        /* A row that ends early, and an aborted one. */
        s3l_error_clear(&err);
        s3l_pq_row_begin(wb);
        s3l_pq_put_int(wb, 1);
        s3l_pq_put_null(wb);
        assert_int_equal(s3l_pq_row_end(wb, &err), S3L_EINVALID_INPUT);
        assert_non_null(strstr(err.message, "column l: missing"));
        s3l_pq_row_begin(wb);
        s3l_pq_put_int(wb, 1);
        s3l_pq_row_abort(wb);
    }
    assert_int_equal(s3l_pq_writer_rows(wa), 50);
    assert_int_equal(s3l_pq_writer_rows(wb), 50);
    finish(wa);
    finish(wb);
    assert_int_equal(a.b.len, b.b.len);
    assert_memory_equal(a.b.ptr, b.b.ptr, a.b.len);
    /* The file is framed: PAR1 ... footer, u32 footer length, PAR1. */
    assert_memory_equal(a.b.ptr, "PAR1", 4);
    assert_memory_equal(a.b.ptr + a.b.len - 4, "PAR1", 4);
    s3l_buf_free(&a.b);
    s3l_buf_free(&b.b);
}

static void error_names_row_and_column(void **state)
{
    (void)state;
    struct mem m = {0};
    s3l_buf_init(&m.b, SIZE_MAX / 2);
    struct s3l_pq_writer *w = open_writer(&m, NULL);
    struct s3l_error err = {0};
    assert_int_equal(good_row(w, 1), 0);
    s3l_pq_row_begin(w);
    s3l_pq_put_int(w, 1);
    assert_int_equal(s3l_pq_put_bytes(w, "\xff", 1), S3L_EINVALID_INPUT);
    assert_int_equal(s3l_pq_row_end(w, &err), S3L_EINVALID_INPUT);
    assert_string_equal(err.message, "row 2, column s: invalid UTF-8 at byte 0");
    s3l_error_clear(&err);
    s3l_pq_row_begin(w);
    s3l_pq_put_int(w, 1);
    s3l_pq_put_null(w);
    s3l_pq_put_null(w);
    assert_int_equal(s3l_pq_put_null(w), S3L_EINVALID_INPUT);
    assert_int_equal(s3l_pq_row_end(w, &err), S3L_EINVALID_INPUT);
    assert_string_equal(err.message, "row 3, column r: null in a required column");
    s3l_error_clear(&err);
    s3l_pq_row_begin(w);
    assert_int_equal(s3l_pq_begin_struct(w), S3L_EINVALID_INPUT);
    assert_int_equal(s3l_pq_row_end(w, &err), S3L_EINVALID_INPUT);
    assert_string_equal(err.message, "row 4, column i: expected an integer, got a struct");
    assert_int_equal(good_row(w, 2), 0);
    assert_int_equal(s3l_pq_writer_rows(w), 2);
    finish(w);
    s3l_buf_free(&m.b);
}

static void state_misuse(void **state)
{
    (void)state;
    struct mem m = {0};
    s3l_buf_init(&m.b, SIZE_MAX / 2);
    struct s3l_pq_writer *w = open_writer(&m, NULL);
    struct s3l_error err = {0};
    assert_int_equal(s3l_pq_put_int(w, 1), S3L_ESTATE);
    assert_int_equal(s3l_pq_row_end(w, &err), S3L_ESTATE);
    assert_int_equal(s3l_pq_row_begin(w), 0);
    assert_int_equal(s3l_pq_row_begin(w), S3L_ESTATE);
    s3l_pq_row_abort(w);
    /* A file of zero rows is valid: PAR1, footer, length, PAR1. */
    s3l_error_clear(&err);
    assert_int_equal(s3l_pq_writer_close(w, &err), 0);
    assert_int_equal(s3l_pq_writer_bytes_written(w), m.b.len);
    uint32_t flen;
    memcpy(&flen, m.b.ptr + m.b.len - 8, 4);
    assert_int_equal((size_t)flen + 12, m.b.len);
    assert_int_equal(s3l_pq_writer_close(w, &err), S3L_ESTATE);
    assert_int_equal(s3l_pq_row_begin(w), S3L_ESTATE);
    s3l_pq_writer_free(w);
    s3l_pq_writer_free(NULL);
    s3l_buf_free(&m.b);
}

static void sink_errors_are_sticky(void **state)
{
    (void)state;
    struct mem m = {0};
    s3l_buf_init(&m.b, SIZE_MAX / 2);
    m.fail_after = 100;
    struct s3l_pq_options o;
    s3l_pq_options_init(&o);
    o.row_group_rows = 10;
    struct s3l_pq_writer *w = open_writer(&m, &o);
    struct s3l_error err = {0};
    int rc = 0, k = 0;
    for (; k < 100 && rc == 0; k++)
        rc = good_row(w, k);
    assert_int_equal(rc, S3L_EIO);
    assert_int_equal(k, 10); /* the first row group flush failed */
    assert_int_equal(good_row(w, 1), S3L_EIO);
    assert_int_equal(s3l_pq_writer_close(w, &err), S3L_EIO);
    assert_non_null(strstr(err.message, "sink full"));
    s3l_pq_writer_free(w);
    s3l_buf_free(&m.b);
}

static void budget_flushes_the_largest(void **state)
{
    (void)state;
    struct s3l_pq_budget *b = s3l_pq_budget_new(64 * 1024);
    assert_non_null(b);
    struct s3l_pq_options o;
    s3l_pq_options_init(&o);
    o.budget = b;
    o.codec = S3L_CODEC_NONE;
    struct mem m1 = {0}, m2 = {0};
    s3l_buf_init(&m1.b, SIZE_MAX / 2);
    s3l_buf_init(&m2.b, SIZE_MAX / 2);
    struct s3l_pq_writer *w1 = open_writer(&m1, &o), *w2 = open_writer(&m2, &o);
    /* w1 buffers about 40 KiB: under the budget, nothing is written. */
    int k = 0;
    while (s3l_pq_writer_size_estimate(w1) < 40 * 1024)
        assert_int_equal(good_row(w1, k++), 0);
    assert_int_equal(s3l_pq_writer_bytes_written(w1), 0);
    /* w2 grows until the sum reaches 64 KiB: w1, the largest, is asked to flush... */
    while (s3l_pq_writer_size_estimate(w2) < 30 * 1024)
        assert_int_equal(good_row(w2, k++), 0);
    assert_int_equal(s3l_pq_writer_bytes_written(w1), 0);
    assert_int_equal(s3l_pq_writer_bytes_written(w2), 0);
    /* ... and does so at its next row boundary. */
    assert_int_equal(good_row(w1, k++), 0);
    assert_true(s3l_pq_writer_bytes_written(w1) > 4);
    assert_int_equal(s3l_pq_writer_bytes_written(w2), 0);
    /* A writer alone over the budget flushes itself at once. */
    while (s3l_pq_writer_bytes_written(w2) == 0)
        assert_int_equal(good_row(w2, k++), 0);
    assert_true(s3l_pq_writer_size_estimate(w2) >= s3l_pq_writer_bytes_written(w2));
    finish(w1);
    finish(w2);
    s3l_pq_budget_free(b);
    s3l_buf_free(&m1.b);
    s3l_buf_free(&m2.b);
}

static void row_sink_adapter_matches(void **state)
{
    (void)state;
    struct mem a = {0}, b = {0};
    s3l_buf_init(&a.b, SIZE_MAX / 2);
    s3l_buf_init(&b.b, SIZE_MAX / 2);
    struct s3l_pq_writer *wa = open_writer(&a, NULL), *wb = open_writer(&b, NULL);
    struct s3l_row_sink rs = s3l_pq_writer_row_sink(wb);
    struct s3l_error err = {0};
    for (int k = 0; k < 20; k++) {
        assert_int_equal(good_row(wa, k), 0);
        rs.ops->row_begin(rs.ctx);
        rs.ops->put_int(rs.ctx, k % 100);
        char s[16];
        snprintf(s, sizeof(s), "v%d", k);
        rs.ops->put_bytes(rs.ctx, s, strlen(s));
        rs.ops->begin_list(rs.ctx);
        for (int i = 0; i < k % 3; i++)
            rs.ops->put_uint(rs.ctx, (uint64_t)i);
        rs.ops->end_list(rs.ctx);
        rs.ops->put_int(rs.ctx, (int64_t)k * 1000);
        assert_int_equal(rs.ops->row_end(rs.ctx, &err), 0);
    }
    finish(wa);
    finish(wb);
    assert_int_equal(a.b.len, b.b.len);
    assert_memory_equal(a.b.ptr, b.b.ptr, a.b.len);
    s3l_buf_free(&a.b);
    s3l_buf_free(&b.b);
}

static void bad_schemas_and_options(void **state)
{
    (void)state;
    struct mem m = {0};
    s3l_buf_init(&m.b, 1 << 20);
    struct s3l_pq_sink sink = {mem_write, &m};
    struct s3l_pq_writer *w = NULL;
    struct s3l_error err = {0};
    struct s3l_schema empty = {0, NULL};
    assert_int_equal(s3l_pq_writer_new(&empty, NULL, sink, &w, &err), S3L_EINVALID_CONFIG);
    assert_null(w);
    struct s3l_field d = leaf("price", S3L_TYPE_DECIMAL128, true);
    d.type.precision = 39;
    struct s3l_schema ds = {1, &d};
    s3l_error_clear(&err);
    assert_int_equal(s3l_pq_writer_new(&ds, NULL, sink, &w, &err), S3L_EINVALID_CONFIG);
    assert_non_null(strstr(err.message, "column price: decimal128(39, 0)"));
    struct s3l_field kv[2] = {leaf("key", S3L_TYPE_STRUCT, false), leaf("v", S3L_TYPE_INT8, true)};
    struct s3l_field inner = leaf("a", S3L_TYPE_INT8, true);
    kv[0].type.n_children = 1;
    kv[0].type.children = &inner;
    struct s3l_field mp = leaf("m", S3L_TYPE_MAP, true);
    mp.type.n_children = 2;
    mp.type.children = kv;
    struct s3l_schema ms = {1, &mp};
    s3l_error_clear(&err);
    assert_int_equal(s3l_pq_writer_new(&ms, NULL, sink, &w, &err), S3L_EINVALID_CONFIG);
    assert_non_null(strstr(err.message, "column m: map keys must be of a primitive type"));
    struct s3l_pq_options o;
    s3l_pq_options_init(&o);
    o.data_page_version = 3;
    s3l_error_clear(&err);
    assert_int_equal(s3l_pq_writer_new(&g_schema, &o, sink, &w, &err), S3L_EINVALID_CONFIG);
    assert_non_null(strstr(err.message, "data page version 3"));
    s3l_pq_options_init(&o);
    o.version = 99;
    s3l_error_clear(&err);
    assert_int_equal(s3l_pq_writer_new(&g_schema, &o, sink, &w, &err), S3L_EINVALID_CONFIG);
    s3l_pq_options_init(&o);
    o.codec = S3L_CODEC_ZSTD;
    o.level = 100;
    s3l_error_clear(&err);
    assert_int_equal(s3l_pq_writer_new(&g_schema, &o, sink, &w, &err), S3L_EINVALID_CONFIG);
    s3l_buf_free(&m.b);
}

/* An allocator that fails the k-th allocation (counting from 0). */
static long g_fail_at = -1, g_count;
static void *f_malloc(void *ctx, size_t n)
{
    (void)ctx;
    return g_count++ == g_fail_at ? NULL : malloc(n);
}
static void *f_realloc(void *ctx, void *p, size_t n)
{
    (void)ctx;
    return g_count++ == g_fail_at ? NULL : realloc(p, n);
}
static void f_free(void *ctx, void *p)
{
    (void)ctx;
    free(p);
}

static void every_allocation_may_fail(void **state)
{
    (void)state;
    struct s3l_allocator al = {f_malloc, f_realloc, f_free, NULL};
    s3l_set_allocator(&al);
    long total = -1;
    for (long k = 0; total < 0 || k < total; k++) {
        g_fail_at = total < 0 ? -1 : k;
        g_count = 0;
        struct mem m = {0};
        s3l_buf_init(&m.b, SIZE_MAX / 2);
        struct s3l_pq_sink sink = {mem_write, &m};
        struct s3l_pq_writer *w = NULL;
        struct s3l_error err = {0};
        struct s3l_pq_options o;
        s3l_pq_options_init(&o);
        o.row_group_rows = 7;
        o.page_size = 64;
        int rc = s3l_pq_writer_new(&g_schema, &o, sink, &w, &err);
        for (int r = 0; rc == 0 && r < 20; r++) {
            rc = good_row(w, r);
            if (rc == S3L_EINVALID_INPUT) /* an allocation failed while buffering the row */
                rc = 0;
        }
        if (rc == 0)
            rc = s3l_pq_writer_close(w, &err);
        assert_true(rc == 0 || rc == S3L_ENOMEM || rc == S3L_ECODEC);
        s3l_pq_writer_free(w);
        s3l_set_allocator(NULL);
        s3l_buf_free(&m.b);
        s3l_set_allocator(&al);
        if (total < 0) {
            total = g_count; /* the first pass counts the allocations */
            k = -1;
        }
    }
    s3l_set_allocator(NULL);
    assert_true(total > 20);
}

int main(void)
{
    setup_schema();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(rejected_rows_leave_no_trace),
        cmocka_unit_test(error_names_row_and_column),
        cmocka_unit_test(state_misuse),
        cmocka_unit_test(sink_errors_are_sticky),
        cmocka_unit_test(budget_flushes_the_largest),
        cmocka_unit_test(row_sink_adapter_matches),
        cmocka_unit_test(bad_schemas_and_options),
        cmocka_unit_test(every_allocation_may_fail),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
