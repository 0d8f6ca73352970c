/*
 * Unit tests of the Parquet writer's behaviour that needs no reader: a rejected row leaves no
 * trace (the file is byte-identical to one written without it; also for random rows rejected at
 * random points), errors name the row and column,
 * state misuse, sticky sink errors, the shared budget, the row sink adapter, bad schemas and
 * options, and every allocation failing in turn (no crash, no leak under ASan).
 * Values themselves are checked by DuckDB in tests/integration/test_pq_types.mjs.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>

#include "s3l/parquet.h"
#include "s3l/pq_footer.h"
#include "schema/schema_int.h"
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
        /* Every field complete (top-level ones by the fast paths), then one value too many; and
         * a string where the last (required) int64 goes. */
        s3l_error_clear(&err);
        s3l_pq_row_begin(wb);
        s3l_pq_put_int(wb, 2);
        s3l_pq_put_bytes(wb, "a longer string value", 21);
        s3l_pq_begin_list(wb);
        s3l_pq_end_list(wb);
        s3l_pq_put_int(wb, -5);
        assert_int_equal(s3l_pq_put_int(wb, 9), S3L_EINVALID_INPUT);
        assert_int_equal(s3l_pq_row_end(wb, &err), S3L_EINVALID_INPUT);
        assert_non_null(strstr(err.message, "more values than the 4 fields"));
        s3l_pq_row_begin(wb);
        s3l_pq_put_null(wb);
        s3l_pq_put_bytes(wb, "zz", 2);
        s3l_pq_put_null(wb);
        assert_int_equal(s3l_pq_put_bytes(wb, "r", 1), S3L_EINVALID_INPUT);
        s3l_pq_row_abort(wb);
        /* What a file would hold if closed now counts the same bytes. */
        assert_int_equal(s3l_pq_writer_size_estimate(wa), s3l_pq_writer_size_estimate(wb));
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

/*
 * Random rows, some rejected at every point (a bad value in any field, a row ended early, one
 * value too many, an abort), across small pages, row groups and dictionaries (fallbacks to
 * PLAIN): the file must be byte-identical to one written with only the good rows, and the size
 * estimate equal after every good row. Top-level fields take the fast paths (no rollback marks),
 * the list and the double the general path.
 */
static uint64_t rnd_state;
static uint32_t rnd(uint32_t n)
{
    rnd_state = rnd_state * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(rnd_state >> 33) % n;
}

/* Fields: i int8, s utf8, l list<int32>, t timestamp[us] required, b binary, x int64, f double. */
enum { RF = 7 };

/* Puts field k of a good row; r selects the value. */
static void put_good(struct s3l_pq_writer *w, int k, uint32_t r)
{
    static const char *words[] = {"", "a", "LAX", "JFK", "caf\xc3\xa9", "a longer string value"};
    if (k != 3 && r % 10 == 0) {
        s3l_pq_put_null(w);
        return;
    }
    switch (k) {
    case 0:
        s3l_pq_put_int(w, (int64_t)(r % 256) - 128);
        break;
    case 1:
    case 4: {
        const char *s = words[r % 6];
        s3l_pq_put_bytes(w, s, strlen(s));
        break;
    }
    case 2:
        s3l_pq_begin_list(w);
        for (uint32_t j = 0; j < r % 4; j++)
            s3l_pq_put_int(w, (int64_t)(r % 7) + j);
        s3l_pq_end_list(w);
        break;
    case 3:
        s3l_pq_put_int(w, 1000000 + (int64_t)(r % 50));
        break;
    case 5:
        s3l_pq_put_int(w, (int64_t)(r % 3000) - 1500);
        break;
    default:
        s3l_pq_put_double(w, (double)(r % 100) / 4);
        break;
    }
}

/* Puts a value field k refuses. */
static void put_bad(struct s3l_pq_writer *w, int k)
{
    switch (k) {
    case 0:
        assert_int_equal(s3l_pq_put_int(w, 300), S3L_EINVALID_INPUT);
        break;
    case 1:
        assert_int_equal(s3l_pq_put_bytes(w, "ab\xff", 3), S3L_EINVALID_INPUT);
        break;
    case 3:
        assert_int_equal(s3l_pq_put_null(w), S3L_EINVALID_INPUT);
        break;
    default:
        assert_int_equal(s3l_pq_put_bool(w, true), S3L_EINVALID_INPUT);
        break;
    }
}

static void random_rejections_leave_no_trace(void **state)
{
    (void)state;
    struct s3l_field item = leaf("item", S3L_TYPE_INT32, true);
    struct s3l_field f[RF] = {
        leaf("i", S3L_TYPE_INT8, true),    leaf("s", S3L_TYPE_UTF8, true),
        leaf("l", S3L_TYPE_LIST, true),    leaf("t", S3L_TYPE_TIMESTAMP, false),
        leaf("b", S3L_TYPE_BINARY, true),  leaf("x", S3L_TYPE_INT64, true),
        leaf("f", S3L_TYPE_FLOAT64, true),
    };
    f[2].type.n_children = 1;
    f[2].type.children = &item;
    f[3].type.unit = S3L_UNIT_MICRO;
    struct s3l_schema sch = {RF, f};
    for (uint64_t seed = 1; seed <= 12; seed++) {
        rnd_state = seed;
        struct s3l_pq_options o;
        s3l_pq_options_init(&o);
        o.codec = S3L_CODEC_NONE;
        o.page_size = 64 + rnd(4096);
        o.row_group_rows = 20 + rnd(600);
        o.dictionary_page_limit = rnd(2) ? 1u << 20 : 64 + rnd(512);
        o.data_page_version = 1 + (int)rnd(2);
        struct mem a = {0}, b = {0};
        s3l_buf_init(&a.b, SIZE_MAX / 2);
        s3l_buf_init(&b.b, SIZE_MAX / 2);
        struct s3l_pq_writer *wa = NULL, *wb = NULL;
        struct s3l_error err = {0};
        assert_int_equal(
            s3l_pq_writer_new(&sch, &o, (struct s3l_pq_sink){mem_write, &a}, &wa, &err), 0);
        assert_int_equal(
            s3l_pq_writer_new(&sch, &o, (struct s3l_pq_sink){mem_write, &b}, &wb, &err), 0);
        for (int row = 0; row < 2500; row++) {
            uint32_t r[RF];
            for (int k = 0; k < RF; k++)
                r[k] = rnd(1u << 30);
            if (rnd(4) == 0) { /* a rejected row, into wa only */
                int at = (int)rnd(RF), kind = (int)rnd(4);
                s3l_pq_row_begin(wa);
                for (int k = 0; k < at; k++)
                    put_good(wa, k, r[k]);
                if (kind == 0)
                    put_bad(wa, at);
                if (kind == 2) { /* the whole row, then one value too many */
                    for (int k = at; k < RF; k++)
                        put_good(wa, k, r[k]);
                    assert_int_equal(s3l_pq_put_int(wa, 1), S3L_EINVALID_INPUT);
                }
                if (kind == 3) {
                    s3l_pq_row_abort(wa);
                } else {
                    s3l_error_clear(&err);
                    assert_int_equal(s3l_pq_row_end(wa, &err), S3L_EINVALID_INPUT);
                }
            }
            for (int side = 0; side < 2; side++) {
                struct s3l_pq_writer *w = side ? wb : wa;
                assert_int_equal(s3l_pq_row_begin(w), 0);
                for (int k = 0; k < RF; k++)
                    put_good(w, k, r[k]);
                s3l_error_clear(&err);
                assert_int_equal(s3l_pq_row_end(w, &err), 0);
            }
            assert_int_equal(s3l_pq_writer_size_estimate(wa), s3l_pq_writer_size_estimate(wb));
        }
        assert_int_equal(s3l_pq_writer_rows(wa), 2500);
        finish(wa);
        finish(wb);
        assert_int_equal(a.b.len, b.b.len);
        assert_memory_equal(a.b.ptr, b.b.ptr, a.b.len);
        s3l_buf_free(&a.b);
        s3l_buf_free(&b.b);
    }
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

/* Four threads, each with its own writer, share one small budget: every file is complete and the
 * budget made writers flush early (more than one row group each). */
struct budget_job {
    struct s3l_pq_budget *b;
    struct mem m;
    int rc;
    uint64_t rows;
};

static void *budget_thread(void *arg)
{
    struct budget_job *j = arg;
    struct s3l_pq_options o;
    s3l_pq_options_init(&o);
    o.budget = j->b;
    o.codec = S3L_CODEC_NONE;
    struct s3l_pq_writer *w = NULL;
    struct s3l_error err = {0};
    j->rc = s3l_pq_writer_new(&g_schema, &o, (struct s3l_pq_sink){mem_write, &j->m}, &w, &err);
    for (int k = 0; j->rc == 0 && k < 20000; k++)
        j->rc = good_row(w, k);
    if (j->rc == 0)
        j->rc = s3l_pq_writer_close(w, &err);
    j->rows = w ? s3l_pq_writer_rows(w) : 0;
    s3l_pq_writer_free(w);
    return NULL;
}

static void budget_shared_by_threads(void **state)
{
    (void)state;
    struct s3l_pq_budget *b = s3l_pq_budget_new(256 * 1024);
    assert_non_null(b);
    struct budget_job jobs[4];
    pthread_t th[4];
    for (int i = 0; i < 4; i++) {
        memset(&jobs[i], 0, sizeof(jobs[i]));
        jobs[i].b = b;
        s3l_buf_init(&jobs[i].m.b, SIZE_MAX / 2);
        assert_int_equal(pthread_create(&th[i], NULL, budget_thread, &jobs[i]), 0);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(th[i], NULL);
        assert_int_equal(jobs[i].rc, 0);
        assert_int_equal(jobs[i].rows, 20000);
        /* Each file buffers about 20000 rows x ~20 bytes = 400 KB, and the budget is 256 KB for
         * all four writers together, so each must have flushed early: the footer reader
         * (src/lib/parquet/footer.c) finds several row groups and every row. */
        struct s3l_pq_footer *ft = NULL;
        struct s3l_error err = {0};
        assert_int_equal(s3l_pq_footer_read_buf(jobs[i].m.b.ptr, jobs[i].m.b.len, NULL, &ft, &err),
                         0);
        assert_int_equal(ft->num_rows, 20000);
        assert_true(ft->n_row_groups > 1);
        s3l_pq_footer_free(ft);
        s3l_buf_free(&jobs[i].m.b);
    }
    s3l_pq_budget_free(b);
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

static void key_columns_refuse_nulls(void **state)
{
    (void)state;
    struct s3l_field k = leaf("id", S3L_TYPE_INT64, true);
    k.key = true; /* schema.h: a key column refuses nulls even when marked nullable */
    struct s3l_schema ks = {1, &k};
    struct mem m = {0};
    s3l_buf_init(&m.b, SIZE_MAX / 2);
    struct s3l_pq_writer *w = NULL;
    struct s3l_error err = {0};
    assert_int_equal(s3l_pq_writer_new(&ks, NULL, (struct s3l_pq_sink){mem_write, &m}, &w, &err),
                     0);
    s3l_pq_row_begin(w);
    assert_int_equal(s3l_pq_put_null(w), S3L_EINVALID_INPUT);
    assert_int_equal(s3l_pq_row_end(w, &err), S3L_EINVALID_INPUT);
    assert_string_equal(err.message, "row 1, column id: null in a required column");
    finish(w);
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
        int new_rc = s3l_pq_writer_new(&g_schema, &o, sink, &w, &err), rc = new_rc;
        for (int r = 0; rc == 0 && r < 20; r++) {
            rc = good_row(w, r);
            if (rc == S3L_EINVALID_INPUT) /* an allocation failed while buffering the row */
                rc = 0;
        }
        bool in_rows = new_rc == 0 && rc != 0; /* the row calls take no err: codes only */
        if (rc == 0)
            rc = s3l_pq_writer_close(w, &err);
        assert_true(rc == 0 || rc == S3L_ENOMEM || rc == S3L_ECODEC);
        if (rc != 0 && !in_rows && !err.message[0]) /* new and close say what failed */
            fail_msg("allocation %ld failing gave %s without a message", k, s3l_error_name(rc));
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

/* Every primitive type, through the column-batch API and through the row API: same bytes. */
static void column_batch_matches_rows(void **state)
{
    (void)state;
    enum { NC = 14, NR = 5000 };
    struct s3l_field f[NC] = {
        leaf("i8", S3L_TYPE_INT8, true),
        leaf("u16", S3L_TYPE_UINT16, true),
        leaf("i64", S3L_TYPE_INT64, false),
        leaf("u64", S3L_TYPE_UINT64, true),
        leaf("h", S3L_TYPE_FLOAT16, true),
        leaf("f", S3L_TYPE_FLOAT32, true),
        leaf("b", S3L_TYPE_BOOL, true),
        leaf("s", S3L_TYPE_UTF8, true),
        leaf("fx", S3L_TYPE_FIXED_SIZE_BINARY, true),
        leaf("t32", S3L_TYPE_TIME32, true),
        leaf("ts", S3L_TYPE_TIMESTAMP, true),
        leaf("d9", S3L_TYPE_DECIMAL128, true),
        leaf("d30", S3L_TYPE_DECIMAL128, true),
        leaf("day", S3L_TYPE_DATE32, true),
    };
    f[8].type.byte_width = 3;
    f[9].type.unit = S3L_UNIT_SECOND;
    f[10].type.unit = S3L_UNIT_SECOND;
    f[11].type.precision = 9, f[11].type.scale = 2;
    f[12].type.precision = 30, f[12].type.scale = 4;
    struct s3l_schema sc = {NC, f};
    static int8_t i8[NR];
    static uint16_t u16[NR], h[NR];
    static int64_t i64[NR], ts[NR];
    static uint64_t u64[NR];
    static float fl[NR];
    static uint8_t bo[NR], fx[NR * 3], dec9[NR * 16], dec30[NR * 16], valid[(NR + 7) / 8];
    static int32_t t32[NR], day[NR], off[NR + 1];
    static char text[NR * 8];
    size_t tl = 0;
    for (int r = 0; r < NR; r++) {
        i8[r] = (int8_t)(r * 7), u16[r] = (uint16_t)(r * 13), i64[r] = (int64_t)r * -1000003;
        u64[r] = UINT64_MAX - (uint64_t)r, h[r] = (uint16_t)(0x3C00 + r % 50);
        fl[r] = (float)r / 3, bo[r] = r % 3 == 0, t32[r] = r % 86400, ts[r] = r * 3600 - 99999;
        day[r] = r - 2500;
        for (int k = 0; k < 3; k++)
            fx[r * 3 + k] = (uint8_t)(r + k);
        int64_t d = (r % 2 ? -1 : 1) * (int64_t)r * 12345;
        uint64_t hi = d < 0 ? UINT64_MAX : 0;
        memcpy(dec9 + 16 * r, &d, 8), memcpy(dec9 + 16 * r + 8, &hi, 8);
        memcpy(dec30 + 16 * r, &d, 8), memcpy(dec30 + 16 * r + 8, &hi, 8);
        off[r] = (int32_t)tl;
        tl += (size_t)snprintf(text + tl, 8, "s%d", r % 500);
        if (r % 7 != 3)
            valid[r / 8] |= (uint8_t)(1u << (r % 8));
    }
    off[NR] = (int32_t)tl;
    struct s3l_pq_column_batch cols[NC] = {
        {i8, NULL, valid},    {u16, NULL, valid}, {i64, NULL, NULL}, {u64, NULL, valid},
        {h, NULL, valid},     {fl, NULL, valid},  {bo, NULL, valid}, {text, off, valid},
        {fx, NULL, valid},    {t32, NULL, valid}, {ts, NULL, valid}, {dec9, NULL, valid},
        {dec30, NULL, valid}, {day, NULL, valid},
    };
    struct mem a = {0}, b = {0};
    s3l_buf_init(&a.b, SIZE_MAX / 2);
    s3l_buf_init(&b.b, SIZE_MAX / 2);
    struct s3l_pq_options o;
    s3l_pq_options_init(&o);
    o.row_group_rows = 3000; /* pages are whole row groups here: page cuts differ by design */
    struct s3l_pq_writer *wa = NULL, *wb = NULL;
    struct s3l_error err = {0};
    assert_int_equal(s3l_pq_writer_new(&sc, &o, (struct s3l_pq_sink){mem_write, &a}, &wa, &err), 0);
    assert_int_equal(s3l_pq_writer_new(&sc, &o, (struct s3l_pq_sink){mem_write, &b}, &wb, &err), 0);
    /* A bad batch is refused whole, naming the row: invalid UTF-8 at row 4 of the batch. */
    static char bad[NR * 8];
    memcpy(bad, text, tl);
    bad[off[4]] = (char)0xC0;
    struct s3l_pq_column_batch badcols[NC];
    memcpy(badcols, cols, sizeof(cols));
    badcols[7].values = bad;
    assert_int_equal(s3l_pq_write_columns(wa, 10, badcols, &err), S3L_EINVALID_INPUT);
    assert_string_equal(err.message, "row 4 of the batch, column s: invalid UTF-8 at byte 0");
    s3l_error_clear(&err);
    /* Valid non-ASCII text takes the per-value check and passes; a required column's null does
     * not (checked on a scratch writer, so wa's bytes stay comparable). */
    {
        struct mem m = {0};
        s3l_buf_init(&m.b, SIZE_MAX / 2);
        struct s3l_pq_writer *wx = NULL;
        assert_int_equal(s3l_pq_writer_new(&sc, &o, (struct s3l_pq_sink){mem_write, &m}, &wx, &err),
                         0);
        static const char utf[] = "s0\xc3\xa9t\xe2\x9c\x93";
        static const int32_t uoff[3] = {0, 4, 8};
        struct s3l_pq_column_batch ucols[NC];
        memcpy(ucols, cols, sizeof(cols));
        ucols[7].values = utf;
        ucols[7].offsets = uoff;
        assert_int_equal(s3l_pq_write_columns(wx, 2, ucols, &err), 0);
        static const uint8_t no_row1[1] = {0x01};
        ucols[2].validity = no_row1;
        assert_int_equal(s3l_pq_write_columns(wx, 2, ucols, &err), S3L_EINVALID_INPUT);
        assert_string_equal(err.message,
                            "row 1 of the batch, column i64: null in a required column");
        s3l_error_clear(&err);
        assert_int_equal(s3l_pq_writer_rows(wx), 2);
        finish(wx);
        s3l_buf_free(&m.b);
    }
    assert_int_equal(s3l_pq_write_columns(wa, 1000, cols, &err), 0);
    struct s3l_pq_column_batch rest[NC];
    for (int i = 0; i < NC; i++) { /* rows 1000.. as a second batch (bitmap offset: 1000 % 8 = 0) */
        size_t w8 = i == 8                        ? 3
                    : i == 11 || i == 12          ? 16
                    : i == 0 || i == 6            ? 1
                    : i == 1 || i == 4            ? 2
                    : i == 2 || i == 3 || i == 10 ? 8
                                                  : 4;
        rest[i].values = i == 7 ? cols[i].values : (const uint8_t *)cols[i].values + 1000 * w8;
        rest[i].offsets = i == 7 ? off + 1000 : NULL;
        rest[i].validity = cols[i].validity ? valid + 1000 / 8 : NULL;
    }
    assert_int_equal(s3l_pq_write_columns(wa, NR - 1000, rest, &err), 0);
    for (int r = 0; r < NR; r++) {
        bool ok = r % 7 != 3;
        assert_int_equal(s3l_pq_row_begin(wb), 0);
        ok ? s3l_pq_put_int(wb, i8[r]) : s3l_pq_put_null(wb);
        ok ? s3l_pq_put_uint(wb, u16[r]) : s3l_pq_put_null(wb);
        s3l_pq_put_int(wb, i64[r]);
        ok ? s3l_pq_put_uint(wb, u64[r]) : s3l_pq_put_null(wb);
        ok ? s3l_pq_put_double(wb, 1.0 + (r % 50) / 1024.0) : s3l_pq_put_null(wb);
        ok ? s3l_pq_put_double(wb, fl[r]) : s3l_pq_put_null(wb);
        ok ? s3l_pq_put_bool(wb, bo[r]) : s3l_pq_put_null(wb);
        ok ? s3l_pq_put_bytes(wb, text + off[r], (size_t)(off[r + 1] - off[r]))
           : s3l_pq_put_null(wb);
        ok ? s3l_pq_put_bytes(wb, fx + 3 * r, 3) : s3l_pq_put_null(wb);
        ok ? s3l_pq_put_int(wb, t32[r]) : s3l_pq_put_null(wb);
        ok ? s3l_pq_put_int(wb, ts[r]) : s3l_pq_put_null(wb);
        int64_t d;
        memcpy(&d, dec9 + 16 * r, 8);
        ok ? s3l_pq_put_decimal(wb, d < 0 ? -1 : 0, (uint64_t)d) : s3l_pq_put_null(wb);
        ok ? s3l_pq_put_decimal(wb, d < 0 ? -1 : 0, (uint64_t)d) : s3l_pq_put_null(wb);
        ok ? s3l_pq_put_int(wb, day[r]) : s3l_pq_put_null(wb);
        assert_int_equal(s3l_pq_row_end(wb, &err), 0);
    }
    assert_int_equal(s3l_pq_writer_rows(wa), NR);
    finish(wa);
    finish(wb);
    assert_int_equal(a.b.len, b.b.len);
    assert_memory_equal(a.b.ptr, b.b.ptr, a.b.len);
    s3l_buf_free(&a.b);
    s3l_buf_free(&b.b);
}

int main(void)
{
    setup_schema();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(rejected_rows_leave_no_trace),
        cmocka_unit_test(random_rejections_leave_no_trace),
        cmocka_unit_test(error_names_row_and_column),
        cmocka_unit_test(state_misuse),
        cmocka_unit_test(sink_errors_are_sticky),
        cmocka_unit_test(budget_flushes_the_largest),
        cmocka_unit_test(budget_shared_by_threads),
        cmocka_unit_test(row_sink_adapter_matches),
        cmocka_unit_test(bad_schemas_and_options),
        cmocka_unit_test(every_allocation_may_fail),
        cmocka_unit_test(column_batch_matches_rows),
        cmocka_unit_test(key_columns_refuse_nulls),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
