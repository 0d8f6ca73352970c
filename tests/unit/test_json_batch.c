/*
 * Unit tests of s3l__convert_fast_lines' column batches (src/lib/input/json/fast.c) into the Parquet
 * writer's put_columns (src/lib/parquet/batch.c): the same NDJSON lines converted (a) through the
 * writer's row sink as it is (column batches) and (b) through the same sink with put_columns
 * hidden (one row_begin, put per value and row_end per row, the path every row took before) must
 * give byte-identical files, under options that cut pages, row groups, dictionary fallbacks and
 * budget flushes inside batches. The lines cover every type the batch maps, explicit nulls,
 * missing keys, numbers and literals into a string column, non-ASCII and long strings, and lines
 * the fast path leaves to the generic path (an escape, an unknown key) in the middle of batches.
 * The oracle is the row path (itself checked against DuckDB by the golden and integration
 * tests); tests/integration/test_cli_batches.mjs reads batch-written files with DuckDB against
 * values written by hand.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <unistd.h>

#include "s3l/destination.h"
#include "input/steps.h"
#include "s3l/input.h"
#include "s3l/parquet.h"
#include "s3l/store.h"
#include "util/util.h"

static const char SCHEMA[] =
    "[{\"name\": \"i8\", \"type\": \"int8\"}, {\"name\": \"i16\", \"type\": \"int16\"},"
    " {\"name\": \"i32\", \"type\": \"int32\"}, {\"name\": \"i64\", \"type\": \"int64\"},"
    " {\"name\": \"u8\", \"type\": \"uint8\"}, {\"name\": \"u16\", \"type\": \"uint16\"},"
    " {\"name\": \"u32\", \"type\": \"uint32\"}, {\"name\": \"f32\", \"type\": \"float\"},"
    " {\"name\": \"f64\", \"type\": \"double\"}, {\"name\": \"b\", \"type\": \"bool\"},"
    " {\"name\": \"s\", \"type\": \"string\"}, {\"name\": \"d\", \"type\": \"date32[day]\"},"
    " {\"name\": \"t32\", \"type\": \"time32[ms]\"}, {\"name\": \"t64\", \"type\": \"time64[us]\"},"
    " {\"name\": \"ts_s\", \"type\": \"timestamp[s]\"},"
    " {\"name\": \"ts_ms\", \"type\": \"timestamp[ms]\"},"
    " {\"name\": \"ts_us\", \"type\": \"timestamp[us, tz=UTC]\"},"
    " {\"name\": \"ts_ns\", \"type\": \"timestamp[ns]\"},"
    " {\"name\": \"req\", \"type\": \"int64\", \"nullable\": false}]";

#define NROWS 6000

/* ---- input --------------------------------------------------------------------------------- */

static uint64_t rng = 88172645463325252ull;
static uint32_t next_rand(void)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17; /* xorshift64 */
    return (uint32_t)(rng >> 32);
}

/* Appends ",\"name\":" then the value (or nothing: a missing key, one time in 11; or null, one
 * time in 7). */
static void member(struct s3l_buf *b, bool *first, const char *name, const char *fmt, ...)
{
    uint32_t x = next_rand() % 77;
    if (x < 7)
        return;
    s3l_buf_printf(b, "%s\"%s\":", *first ? "" : ",", name);
    *first = false;
    if (x < 18) {
        s3l_buf_append_str(b, "null");
        return;
    }
    char v[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(v, sizeof(v), fmt, ap);
    va_end(ap);
    s3l_buf_append_str(b, v);
}

static const char *const POOL[] = {"LAS", "PHL", "ATL", "SAV", "MCI", "MDW", "h\xc3\xa9llo",
                                   "\xe2\x9c\x93 ok", "", "a longer string of some bytes"};

/* NROWS lines; *fallbacks: how many the fast path leaves to the generic path. */
static void make_lines(struct s3l_buf *b, size_t *fallbacks)
{
    static char big[3001];
    memset(big, 'x', 3000);
    *fallbacks = 0;
    for (int k = 0; k < NROWS; k++) {
        bool first = true;
        s3l_buf_append_byte(b, '{');
        member(b, &first, "i8", "%d", (int)(next_rand() % 256) - 128);
        member(b, &first, "i16", "%d", (int)(next_rand() % 65536) - 32768);
        member(b, &first, "i32", "%d", (int32_t)next_rand());
        member(b, &first, "i64", "%lld",
               k % 13 == 0 ? (long long)INT64_MIN + k : (long long)k * -1000003);
        member(b, &first, "u8", "%u", next_rand() % 256);
        member(b, &first, "u16", "%u", next_rand() % 65536);
        member(b, &first, "u32", "%u", next_rand());
        member(b, &first, "f32", k % 3 ? "%d.25" : "%d", (int)(next_rand() % 100000) - 50000);
        member(b, &first, "f64", "%.17g", (double)next_rand() / 7.0 - 1e8);
        member(b, &first, "b", k % 2 ? "true" : "false");
        uint32_t s = next_rand() % 100;
        if (s < 60)
            member(b, &first, "s", "\"%s\"", POOL[s % 10]);
        else if (s < 80)
            member(b, &first, "s", "\"unique %d\"", k); /* grows the dictionary */
        else if (s < 85)
            member(b, &first, "s", "%d", k); /* a number keeps its text */
        else if (s < 88)
            member(b, &first, "s", "true");
        else if (s < 90)
            member(b, &first, "s", "\"%s\"", big);
        else if (s < 93 && k % 4 == 0) {
            member(b, &first, "s", "\"esc\\\"aped %d\"", k); /* the generic path */
        } else
            member(b, &first, "s", "\"s%u\"", next_rand() % 300);
        member(b, &first, "d", "\"2024-%02d-%02d\"", 1 + k % 12, 1 + k % 28);
        member(b, &first, "t32", "\"%02d:%02d:%02d.%03d\"", k % 24, k % 60, (k * 7) % 60,
               k % 1000);
        member(b, &first, "t64", "\"%02d:%02d:%02d.%06d\"", (k * 5) % 24, k % 60, k % 59,
               k * 37 % 1000000);
        member(b, &first, "ts_s", "\"2001-01-%02d %02d:%02d:00\"", 1 + k / 1000, k % 24, k % 60);
        member(b, &first, "ts_ms", "\"2001-01-%02dT%02d:00:%02d.%03d\"", 1 + k / 500, k % 24,
               k % 60, k % 1000);
        member(b, &first, "ts_us", "\"2024-01-01T00:%02d:%02dZ\"", k % 60, (k / 60) % 60);
        member(b, &first, "ts_ns", "\"1999-12-31 23:59:%02d.%09d\"", k % 60, k * 7919);
        if (k % 211 == 5)
            s3l_buf_printf(b, "%s\"unknown\": 1", first ? "" : ","), first = false;
        s3l_buf_printf(b, "%s\"req\":%d}\n", first ? "" : ",", k);
        if (k % 500 == 7)
            s3l_buf_append_str(b, "\n \r\n"); /* blank lines */
    }
    /* the fallbacks, counted from the text: lines with an escaped string or an unknown key */
    s3l_buf_append_byte(b, 0);
    b->len--;
    for (char *p = (char *)b->ptr, *nl; (nl = strchr(p, '\n')) != NULL; p = nl + 1) {
        *nl = 0;
        if (strstr(p, "esc\\\"") || strstr(p, "\"unknown\""))
            (*fallbacks)++;
        *nl = '\n';
    }
}

/* ---- sinks --------------------------------------------------------------------------------- */

struct mem {
    struct s3l_buf b;
};

static int mem_write(void *ctx, const void *data, size_t len, struct s3l_error *err)
{
    (void)err;
    return s3l_buf_append(&((struct mem *)ctx)->b, data, len);
}

static const struct s3l_row_sink_ops *real_ops;
static size_t n_row_begins, n_batches, n_batch_rows;

static int count_row_begin(void *ctx)
{
    n_row_begins++;
    return real_ops->row_begin(ctx);
}

static int count_put_columns(void *ctx, size_t n, const struct s3l_column_batch *cols,
                             struct s3l_error *err)
{
    n_batches++;
    n_batch_rows += n;
    return real_ops->put_columns(ctx, n, cols, err);
}

/*
 * Converts text as the pipeline's lanes do (lanes.c convert_lines): spans from the reader, runs
 * of lines through s3l__convert_fast_lines (at most 333 rows a call), each line it leaves through
 * s3l__convert_line. Into a writer with options o; batches: through put_columns or row by row.
 * The file's bytes go to out; returns the rows written.
 */
static uint64_t convert(const struct s3l_buf *text, const char *schema_json,
                        const struct s3l_pq_options *o, bool batches, struct s3l_buf *out)
{
    struct s3l_error err = {0};
    struct s3l_schema *schema = NULL;
    assert_int_equal(s3l_schema_from_json(schema_json, strlen(schema_json), &schema, &err), 0);
    FILE *f = tmpfile();
    assert_non_null(f);
    assert_int_equal(fwrite(text->ptr, 1, text->len, f), text->len);
    fflush(f);
    rewind(f);
    struct s3l_reader_options ro = {0};
    ro.version = S3L_READER_OPTIONS_VERSION, ro.format = S3L_INPUT_NDJSON, ro.name = "in.ndjson";
    ro.block_bytes = 64 << 10;
    struct s3l_reader *r = NULL;
    assert_int_equal(s3l_reader_open(fileno(f), &ro, &r, &err), 0);
    struct s3l_converter *c = NULL;
    assert_int_equal(s3l_converter_new(schema, NULL, &c, &err), 0);
    struct mem m = {0};
    s3l_buf_init(&m.b, SIZE_MAX / 2);
    struct s3l_pq_writer *w = NULL;
    assert_int_equal(s3l_pq_writer_new(schema, o, (struct s3l_pq_sink){mem_write, &m}, &w, &err),
                     0);
    struct s3l_row_sink sink = s3l_pq_writer_row_sink(w);
    real_ops = sink.ops;
    struct s3l_row_sink_ops ops = *sink.ops;
    ops.row_begin = count_row_begin;
    ops.put_columns = batches ? count_put_columns : NULL;
    sink.ops = &ops;
    n_row_begins = n_batches = n_batch_rows = 0;
    struct s3l__lines span;
    int rc;
    while ((rc = s3l__reader_next_lines(r, 1000, 32 << 10, &span, &err)) == 1) {
        for (;;) {
            uint64_t n = 0;
            assert_int_equal(s3l__convert_fast_lines(c, &span, 333, &sink, &n, &err), 0);
            if (n)
                continue;
            struct s3l_record rec;
            if (!s3l__lines_next(&span, &rec))
                break;
            assert_int_equal(s3l__convert_line(c, &rec, &sink, &err), 0);
        }
    }
    assert_int_equal(rc, 0);
    uint64_t rows = s3l_pq_writer_rows(w);
    assert_int_equal(s3l_pq_writer_close(w, &err), 0);
    s3l_pq_writer_free(w);
    s3l_converter_free(c);
    s3l_reader_free(r);
    fclose(f);
    s3l_schema_free(schema);
    *out = m.b;
    return rows;
}

/* ---- tests --------------------------------------------------------------------------------- */

/* Options that cut pages, row groups, dictionaries and budget flushes inside batches. */
static void config(int i, struct s3l_pq_options *o, struct s3l_pq_budget **budget)
{
    s3l_pq_options_init(o);
    *budget = NULL;
    switch (i) {
    case 0: /* small pages, row groups of 1,000 rows (not a batch multiple), a budget */
        o->page_size = 2048;
        o->row_group_rows = 1000;
        *budget = s3l_pq_budget_new(0);
        break;
    case 1: /* row groups by bytes, dictionaries falling back to PLAIN, v2 pages, snappy */
        o->page_size = 64 << 10;
        o->row_group_bytes = 48 << 10;
        o->dictionary_page_limit = 1024;
        o->data_page_version = 2;
        o->codec = S3L_CODEC_SNAPPY;
        o->statistics_max_len = 8;
        break;
    default: /* a budget small enough to flush row groups early */
        o->page_size = 8192;
        *budget = s3l_pq_budget_new(96 << 10);
        break;
    }
    o->budget = *budget;
}

static void test_batches_match_rows(void **state)
{
    (void)state;
    struct s3l_buf text;
    s3l_buf_init(&text, SIZE_MAX / 2);
    size_t fallbacks = 0;
    make_lines(&text, &fallbacks);
    assert_true(fallbacks >= 30);
    for (int i = 0; i < 3; i++) {
        struct s3l_pq_options o;
        struct s3l_pq_budget *budget;
        config(i, &o, &budget);
        struct s3l_buf a, b;
        assert_int_equal(convert(&text, SCHEMA, &o, true, &a), NROWS);
        /* rows went in batches, except the lines the fast path left */
        assert_int_equal(n_row_begins, fallbacks);
        assert_int_equal(n_batch_rows, NROWS - fallbacks);
        assert_true(n_batches >= NROWS / 1024 + fallbacks / 2);
        assert_int_equal(convert(&text, SCHEMA, &o, false, &b), NROWS);
        assert_int_equal(n_row_begins, NROWS);
        assert_int_equal(n_batches, 0);
        print_message("config %d: %zu bytes, %zu lines by the generic path\n", i, a.len,
                      fallbacks);
        assert_int_equal(a.len, b.len);
        assert_memory_equal(a.ptr, b.ptr, a.len);
        s3l_buf_free(&a);
        s3l_buf_free(&b);
        s3l_pq_budget_free(budget);
    }
    s3l_buf_free(&text);
}

/* A column type the batch does not map (float16): every row goes one by one, as before. */
static void test_unmapped_type_goes_by_rows(void **state)
{
    (void)state;
    static const char schema[] = "[{\"name\": \"h\", \"type\": \"halffloat\"},"
                                 " {\"name\": \"n\", \"type\": \"int64\"}]";
    struct s3l_buf text;
    s3l_buf_init(&text, SIZE_MAX / 2);
    for (int k = 0; k < 3000; k++)
        s3l_buf_printf(&text, "{\"h\": %d.5, \"n\": %d}\n", k % 100, k);
    struct s3l_pq_options o;
    s3l_pq_options_init(&o);
    o.page_size = 1024;
    struct s3l_buf a, b;
    assert_int_equal(convert(&text, schema, &o, true, &a), 3000);
    assert_int_equal(n_batches, 0);
    assert_int_equal(n_row_begins, 3000);
    assert_int_equal(convert(&text, schema, &o, false, &b), 3000);
    assert_int_equal(a.len, b.len);
    assert_memory_equal(a.ptr, b.ptr, a.len);
    s3l_buf_free(&a);
    s3l_buf_free(&b);
    s3l_buf_free(&text);
}

/* A wide schema (70 columns: past the fast path's 64-column bit set, and fewer rows a batch)
 * with missing keys and nulls: the same bytes both ways. */
static void test_wide_schema(void **state)
{
    (void)state;
    struct s3l_buf schema, text;
    s3l_buf_init(&schema, SIZE_MAX / 2);
    s3l_buf_init(&text, SIZE_MAX / 2);
    s3l_buf_append_str(&schema, "[");
    for (int i = 0; i < 70; i++)
        s3l_buf_printf(&schema, "%s{\"name\": \"c%d\", \"type\": \"%s\"}", i ? ", " : "", i,
                       i % 3 == 0 ? "string" : i % 3 == 1 ? "int64" : "double");
    s3l_buf_append_str(&schema, "]");
    for (int k = 0; k < 2500; k++) {
        bool first = true;
        s3l_buf_append_byte(&text, '{');
        for (int i = 0; i < 70; i++) {
            uint32_t x = next_rand() % 20;
            if (x == 0)
                continue; /* missing */
            s3l_buf_printf(&text, "%s\"c%d\":", first ? "" : ",", i);
            first = false;
            if (x == 1)
                s3l_buf_append_str(&text, "null");
            else if (i % 3 == 0)
                s3l_buf_printf(&text, "\"v%u\"", next_rand() % 50);
            else
                s3l_buf_printf(&text, "%d", (int)(next_rand() % 1000) - 500);
        }
        s3l_buf_append_str(&text, "}\n");
    }
    struct s3l_pq_options o;
    s3l_pq_options_init(&o);
    o.page_size = 4096;
    o.row_group_rows = 700;
    struct s3l_buf a, b;
    assert_int_equal(convert(&text, (const char *)schema.ptr, &o, true, &a), 2500);
    assert_int_equal(n_row_begins, 0);
    assert_true(n_batches >= 2500 / 624);
    assert_int_equal(convert(&text, (const char *)schema.ptr, &o, false, &b), 2500);
    assert_int_equal(a.len, b.len);
    assert_memory_equal(a.ptr, b.ptr, a.len);
    s3l_buf_free(&a);
    s3l_buf_free(&b);
    s3l_buf_free(&text);
    s3l_buf_free(&schema);
}

/* ---- through the destination's lanes -------------------------------------------------------- */

struct files {
    struct s3l_store *store;
    size_t n;
    struct s3l_buf bytes[128];
};

static int take_files(void *ctx, const struct s3l_dest_marker *m)
{
    struct files *f = ctx;
    for (size_t i = 0; i < m->n_files && f->n < 128; i++) {
        uint8_t *p = NULL;
        size_t n = 0;
        struct s3l_error err = {0};
        assert_int_equal(
            s3l_store_get(f->store, m->files[i].key, 0, UINT64_MAX, 1 << 26, &p, &n, NULL, &err),
            0);
        s3l_buf_init(&f->bytes[f->n], SIZE_MAX / 2);
        assert_int_equal(s3l_buf_append(&f->bytes[f->n], p, n), 0);
        f->n++;
        s3l_free(p);
    }
    return 0;
}

/*
 * The lines through a destination (Parquet codec, one lane, 40 KiB files) in a new directory,
 * with the lane sink as it is (batches) or without put_columns (rows); the committed files'
 * bytes in key order into *out.
 */
static void dest_files(const struct s3l_buf *text, bool batches, struct files *out)
{
    char dir[64], url[96];
    snprintf(dir, sizeof(dir), "%s/s3l-batch-XXXXXX",
             access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
    assert_non_null(mkdtemp(dir));
    snprintf(url, sizeof(url), "file://%s", dir);
    struct s3l_error err = {0};
    struct s3l_store *store = NULL;
    assert_int_equal(s3l_store_open(url, NULL, &store, &err), 0);
    struct s3l_dest_options o = {0};
    o.version = S3L_DEST_OPTIONS_VERSION;
    o.pipeline_id = "batches";
    o.lanes = 1;
    o.file_size = 40 << 10;
    struct s3l_pq_options pq;
    s3l_pq_options_init(&pq);
    pq.row_group_rows = 300;
    pq.page_size = 2048;
    o.parquet = &pq;
    o.memory = 1 << 20;
    struct s3l_dest *d = NULL;
    assert_int_equal(s3l_dest_open(store, &o, &d, &err), 0);
    struct s3l_schema *schema = NULL;
    assert_int_equal(s3l_schema_from_json(SCHEMA, strlen(SCHEMA), &schema, &err), 0);
    struct s3l_dest_stream *st;
    assert_int_equal(s3l_dest_stream(d, NULL, "t", schema, &st, &err), 0);
    struct s3l_row_sink sink;
    assert_int_equal(s3l_dest_lane_sink(st, 0, &sink), 0);
    assert_non_null(sink.ops->put_columns); /* the Parquet codec takes batches */
    struct s3l_row_sink_ops ops = *sink.ops;
    if (!batches)
        ops.put_columns = NULL;
    sink.ops = &ops;
    struct s3l_converter *c = NULL;
    assert_int_equal(s3l_converter_new(schema, NULL, &c, &err), 0);
    struct s3l__lines span = {(const char *)text->ptr, (const char *)text->ptr + text->len, 0, 1,
                             0, "in", NULL};
    for (;;) {
        uint64_t n = 0;
        assert_int_equal(s3l__convert_fast_lines(c, &span, UINT64_MAX, &sink, &n, &err), 0);
        struct s3l_record rec;
        if (!s3l__lines_next(&span, &rec))
            break;
        assert_int_equal(s3l__convert_line(c, &rec, &sink, &err), 0);
    }
    struct s3l_dest_commit_info ci;
    assert_int_equal(s3l_dest_commit(d, "{}", &ci, &err), 0);
    assert_int_equal(s3l_dest_sync(d, &ci, &err), 0); /* pipelined: the epoch's finish */
    assert_int_equal(ci.rows, NROWS);
    s3l_dest_free(d);
    out->store = store;
    out->n = 0;
    assert_int_equal(s3l_dest_list_markers(store, "t", take_files, out, &err), 0);
    s3l_store_free(store);
    s3l_converter_free(c);
    s3l_schema_free(schema);
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
}

/* Files closed at fileSize by the lane: on the same rows with batches as with rows (the writer
 * stops a batch on the row that reaches the size), so the same files, byte for byte. */
static void test_lane_files_match_rows(void **state)
{
    (void)state;
    struct s3l_buf text;
    s3l_buf_init(&text, SIZE_MAX / 2);
    size_t fallbacks = 0;
    rng = 88172645463325252ull;
    make_lines(&text, &fallbacks);
    static struct files a, b;
    dest_files(&text, true, &a);
    dest_files(&text, false, &b);
    print_message("%zu files\n", a.n);
    assert_true(a.n >= 5 && a.n < 128);
    assert_int_equal(a.n, b.n);
    for (size_t i = 0; i < a.n; i++) {
        assert_int_equal(a.bytes[i].len, b.bytes[i].len);
        assert_memory_equal(a.bytes[i].ptr, b.bytes[i].ptr, a.bytes[i].len);
        s3l_buf_free(&a.bytes[i]);
        s3l_buf_free(&b.bytes[i]);
    }
    s3l_buf_free(&text);
}

/* A line the fast path leaves stops the call there: the rows before it are all in the sink
 * (one batch), the line is left in the span. */
static void test_stops_at_a_fallback_line(void **state)
{
    (void)state;
    static const char schema_json[] = "[{\"name\": \"n\", \"type\": \"int64\"},"
                                      " {\"name\": \"s\", \"type\": \"string\"}]";
    static const char text[] = "{\"n\": 1, \"s\": \"a\"}\n{\"n\": 2, \"s\": null}\n"
                               "{\"n\": 3, \"s\": \"\\u0041\"}\n{\"n\": 4}\n";
    struct s3l_error err = {0};
    struct s3l_schema *schema = NULL;
    assert_int_equal(s3l_schema_from_json(schema_json, strlen(schema_json), &schema, &err), 0);
    struct s3l_converter *c = NULL;
    assert_int_equal(s3l_converter_new(schema, NULL, &c, &err), 0);
    struct mem m = {0};
    s3l_buf_init(&m.b, SIZE_MAX / 2);
    struct s3l_pq_writer *w = NULL;
    assert_int_equal(
        s3l_pq_writer_new(schema, NULL, (struct s3l_pq_sink){mem_write, &m}, &w, &err), 0);
    struct s3l_row_sink sink = s3l_pq_writer_row_sink(w);
    real_ops = sink.ops;
    struct s3l_row_sink_ops ops = *sink.ops;
    ops.row_begin = count_row_begin;
    ops.put_columns = count_put_columns;
    sink.ops = &ops;
    n_row_begins = n_batches = n_batch_rows = 0;
    struct s3l__lines span = {text, text + strlen(text), 0, 1, 4, "in", NULL};
    uint64_t n = 0;
    assert_int_equal(s3l__convert_fast_lines(c, &span, 100, &sink, &n, &err), 0);
    assert_int_equal(n, 2);
    assert_int_equal(n_batches, 1);
    assert_int_equal(n_batch_rows, 2);
    assert_int_equal(s3l_pq_writer_rows(w), 2);
    assert_int_equal(span.line, 3); /* the escaped line is next */
    struct s3l_record rec;
    assert_int_equal(s3l__lines_next(&span, &rec), 1);
    assert_int_equal(s3l__convert_line(c, &rec, &sink, &err), 0);
    assert_int_equal(s3l__convert_fast_lines(c, &span, 100, &sink, &n, &err), 0);
    assert_int_equal(n, 1);
    assert_int_equal(n_batches, 2);
    assert_int_equal(s3l_pq_writer_rows(w), 4);
    assert_int_equal(s3l__convert_fast_lines(c, &span, 100, &sink, &n, &err), 0);
    assert_int_equal(n, 0); /* the span is used up */
    /* max_rows stops a call too, with its rows in the sink */
    span = (struct s3l__lines){text, text + strlen(text), 0, 1, 4, "in", NULL};
    assert_int_equal(s3l__convert_fast_lines(c, &span, 1, &sink, &n, &err), 0);
    assert_int_equal(n, 1);
    assert_int_equal(n_batches, 3);
    assert_int_equal(span.line, 2);
    assert_int_equal(s3l_pq_writer_rows(w), 5);
    assert_int_equal(s3l_pq_writer_close(w, &err), 0);
    s3l_pq_writer_free(w);
    s3l_converter_free(c);
    s3l_schema_free(schema);
    s3l_buf_free(&m.b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_batches_match_rows),
        cmocka_unit_test(test_unmapped_type_goes_by_rows),
        cmocka_unit_test(test_wide_schema),
        cmocka_unit_test(test_lane_files_match_rows),
        cmocka_unit_test(test_stops_at_a_fallback_line),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
