/*
 * Memory tests of the input path, with a counting allocator installed through s3l_set_allocator:
 *  - memory is bounded by configuration, not input size: reading 40,000 records (3 MB) of
 *    NDJSON, JSON and CSV with 4 KiB blocks and a 1 KiB record limit never holds more than
 *    128 KiB (a 64 KiB arena block, the buffer of max + 2 blocks, the tape), and the peak is the
 *    same for 4,000 records as for 40,000;
 *  - out of memory is an error, never a crash or a leak: every allocation k of parsing a type and
 *    a schema, opening and reading each format, inferring and converting is failed in turn, and
 *    the scenario must return an error (ASan in CI catches leaks and bad frees).
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

#include "input/json/json.h"
#include "input_fd.h"

/* ---- a counting, failing allocator (a size header before each block) ----------------------- */

static size_t cur, peak;
static long allocs, fail_at;

static void *c_malloc(void *ctx, size_t n)
{
    (void)ctx;
    if (fail_at && ++allocs == fail_at)
        return NULL;
    size_t *p = malloc(n + 16);
    if (!p)
        return NULL;
    *p = n;
    cur += n;
    if (cur > peak)
        peak = cur;
    return (char *)p + 16;
}

static void c_free(void *ctx, void *ptr)
{
    (void)ctx;
    if (!ptr)
        return;
    size_t *p = (size_t *)((char *)ptr - 16);
    cur -= *p;
    free(p);
}

static void *c_realloc(void *ctx, void *ptr, size_t n)
{
    if (!ptr)
        return c_malloc(ctx, n);
    if (fail_at && ++allocs == fail_at)
        return NULL;
    size_t *p = (size_t *)((char *)ptr - 16);
    size_t old = *p;
    size_t *q = realloc(p, n + 16);
    if (!q)
        return NULL;
    *q = n;
    cur = cur - old + n;
    if (cur > peak)
        peak = cur;
    return (char *)q + 16;
}

static const struct s3l_allocator counting = {c_malloc, c_realloc, c_free, NULL};

/* ---- inputs -------------------------------------------------------------------------------- */

/* n records of the format, about 80 bytes each. */
static char *make_input(enum s3l_input_format fmt, int n, size_t *len)
{
    size_t cap = (size_t)n * 100 + 100, o = 0;
    char *s = malloc(cap);
    if (fmt == S3L_INPUT_CSV)
        o += (size_t)sprintf(s + o, "id,name,when,score\n");
    if (fmt == S3L_INPUT_JSON)
        s[o++] = '[';
    for (int i = 0; i < n; i++) {
        if (fmt == S3L_INPUT_CSV)
            o += (size_t)sprintf(s + o, "%d,\"name, %d\",2024-01-%02d,%d.5\n", i, i, i % 28 + 1, i);
        else
            o += (size_t)sprintf(s + o,
                                 "%s{\"id\":%d,\"name\":\"name \\u00e9 %d\","
                                 "\"when\":\"2024-01-%02d\",\"score\":%d.5,\"tags\":[1,2]}%s",
                                 fmt == S3L_INPUT_JSON && i ? "," : "", i, i, i % 28 + 1, i,
                                 fmt == S3L_INPUT_NDJSON ? "\n" : "");
    }
    if (fmt == S3L_INPUT_JSON)
        s[o++] = ']';
    *len = o;
    return s;
}

/* A row sink that accepts everything. */
static int n_row(void *c) { (void)c; return 0; }
static int n_bool(void *c, bool v) { (void)c; (void)v; return 0; }
static int n_int(void *c, int64_t v) { (void)c; (void)v; return 0; }
static int n_uint(void *c, uint64_t v) { (void)c; (void)v; return 0; }
static int n_double(void *c, double v) { (void)c; (void)v; return 0; }
static int n_bytes(void *c, const void *d, size_t n) { (void)c; (void)d; (void)n; return 0; }
static int n_dec(void *c, int64_t h, uint64_t l) { (void)c; (void)h; (void)l; return 0; }
static int n_ivl(void *c, int32_t m, int32_t d, int64_t n)
{
    (void)c, (void)m, (void)d, (void)n;
    return 0;
}
static int n_end(void *c, struct s3l_error *e) { (void)c; (void)e; return 0; }
static void n_abort(void *c) { (void)c; }
static const struct s3l_row_sink_ops nop_ops = {
    n_row, n_row, n_bool, n_int, n_uint, n_double, n_bytes, n_dec, n_ivl,
    n_row, n_row, n_row,  n_row, n_row,  n_row,    n_end,   n_abort, NULL,
};

/* Reads, infers from 100 records and converts everything; returns 0 or the first error. */
static int read_infer_convert(const char *text, size_t len, enum s3l_input_format fmt)
{
    int fd = test_file_with(text, len);
    struct s3l_reader_options ro = {.version = S3L_READER_OPTIONS_VERSION, .format = fmt,
                                    .name = "m", .block_bytes = 4096, .max_record_bytes = 1024};
    struct s3l_reader *r = NULL;
    struct s3l_infer *inf = NULL;
    struct s3l_schema *schema = NULL;
    struct s3l_converter *conv = NULL;
    struct s3l_error err = {0};
    int rc = s3l_reader_open(fd, &ro, &r, &err);
    if (rc == 0 && !(inf = s3l_infer_new(NULL)))
        rc = S3L_ENOMEM;
    struct s3l_record rec;
    for (int i = 0; rc == 0 && i < 100 && (rc = s3l_reader_next(r, &rec, &err)) == 1; i++)
        rc = s3l_infer_add(inf, &rec);
    if (rc == 1)
        rc = 0;
    if (rc == 0)
        rc = s3l_infer_schema(inf, &schema);
    if (rc == 0)
        rc = s3l_converter_new(schema, NULL, &conv, &err);
    struct s3l_row_sink sink = {&nop_ops, NULL};
    while (rc == 0 && (rc = s3l_reader_next(r, &rec, &err)) == 1)
        rc = s3l_convert(conv, &rec, &sink, &err);
    s3l_converter_free(conv);
    s3l_schema_free(schema);
    s3l_infer_free(inf);
    s3l_reader_free(r);
    close(fd);
    return rc;
}

static void memory_is_bounded_by_configuration(void **state)
{
    (void)state;
    enum s3l_input_format fmts[] = {S3L_INPUT_NDJSON, S3L_INPUT_JSON, S3L_INPUT_CSV};
    for (int f = 0; f < 3; f++) {
        size_t peaks[2];
        int counts[2] = {4000, 40000};
        for (int k = 0; k < 2; k++) {
            size_t len;
            char *text = make_input(fmts[f], counts[k], &len);
            s3l_set_allocator(&counting);
            cur = peak = 0;
            fail_at = 0;
            assert_int_equal(read_infer_convert(text, len, fmts[f]), 0);
            s3l_set_allocator(NULL);
            assert_int_equal(cur, 0);
            peaks[k] = peak;
            free(text);
        }
        if (peaks[0] != peaks[1] || peaks[1] > 128 * 1024)
            fail_msg("format %d: peak %zu bytes for 4,000 records, %zu for 40,000", f, peaks[0],
                     peaks[1]);
    }
}

static void every_allocation_failure_is_an_error(void **state)
{
    (void)state;
    static const char schema[] =
        "[{\"name\": \"a\", \"type\": \"struct<x: list<item: int64>, y: map<string, double>>\"},"
        " {\"name\": \"b\", \"type\": \"timestamp[us, tz=UTC]\", \"key\": true}]";
    enum s3l_input_format fmts[] = {S3L_INPUT_NDJSON, S3L_INPUT_JSON, S3L_INPUT_CSV};
    char *inputs[3];
    size_t lens[3];
    for (int f = 0; f < 3; f++)
        inputs[f] = make_input(fmts[f], 30, &lens[f]);
    long failures = 0;
    for (long k = 1;; k++) {
        s3l_set_allocator(&counting);
        allocs = 0;
        fail_at = k;
        int rc = 0;
        struct s3l_schema *s = NULL, *m = NULL;
        struct s3l_error err = {0};
        rc = s3l_schema_from_json(schema, strlen(schema), &s, &err);
        if (rc == 0)
            rc = s3l_schema_merge(s, s, NULL, &m, NULL, &err);
        char *json = NULL;
        size_t jl;
        if (rc == 0)
            rc = s3l_schema_to_json(m, &json, &jl);
        s3l_free(json);
        s3l_schema_free(m);
        s3l_schema_free(s);
        for (int f = 0; f < 3 && rc == 0; f++)
            rc = read_infer_convert(inputs[f], lens[f], fmts[f]);
        bool hit = allocs >= k;
        s3l_set_allocator(NULL);
        assert_int_equal(cur, 0);
        if (!hit) {
            assert_int_equal(rc, 0);
            break;
        }
        if (rc == 0)
            fail_msg("allocation %ld failed but the scenario succeeded", k);
        failures++;
    }
    assert_true(failures > 20);
    for (int f = 0; f < 3; f++)
        free(inputs[f]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(memory_is_bounded_by_configuration),
        cmocka_unit_test(every_allocation_failure_is_an_error),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
