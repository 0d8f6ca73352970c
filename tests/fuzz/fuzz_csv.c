/*
 * Fuzz target: the CSV reader on arbitrary bytes, with several block sizes, record limits and
 * delimiters. Every answer must be a record, the end, or an INVALID_INPUT with a message; records
 * must be objects whose keys are the header's and whose offsets only grow; the same input read
 * with a one-byte block and a large block must give the same records (the quote state survives
 * refills). The first byte picks the delimiter. Rows must all convert under the schema inferred
 * from all of them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "input/json/json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Reads everything, hashing the records' JSON text and offsets into *digest. */
static void read_all(const uint8_t *data, size_t size, char delim, size_t block, size_t max,
                     uint64_t *digest)
{
    FILE *f = tmpfile();
    if (!f)
        abort();
    if (size && fwrite(data, 1, size, f) != size)
        abort();
    fflush(f);
    rewind(f);
    struct s3l_reader_options opt = {.version = S3L_READER_OPTIONS_VERSION,
                                     .format = S3L_INPUT_CSV, .name = "fuzz.csv",
                                     .block_bytes = block, .max_record_bytes = max,
                                     .csv_delimiter = delim};
    struct s3l_reader *r;
    struct s3l_error err = {0};
    if (s3l_reader_open(fileno(f), &opt, &r, &err) != 0)
        abort();
    struct s3l_buf b;
    s3l_buf_init(&b, 1 << 24);
    uint64_t h = 1469598103934665603ULL, last_end = 0;
    for (int n = 0; n < 10000; n++) {
        struct s3l_record rec;
        s3l_error_clear(&err);
        int rc = s3l_reader_next(r, &rec, &err);
        if (rc == 0)
            break;
        if (rc < 0) {
            if (err.code != S3L_EINVALID_INPUT || !err.message[0])
                abort();
            h = (h ^ 0xE) * 1099511628211ULL;
            if (r->sticky)
                break;
            continue;
        }
        if (rec.values[0].kind != S3L_VALUE_OBJECT || rec.values[0].len != r->n_columns ||
            rec.end_offset < last_end || rec.end_offset > size)
            abort();
        last_end = rec.end_offset;
        s3l_buf_reset(&b);
        if (s3l__json_write(&b, rec.values, 0) != 0)
            abort();
        for (size_t i = 0; i < b.len; i++)
            h = (h ^ b.ptr[i]) * 1099511628211ULL;
        h = (h ^ rec.end_offset) * 1099511628211ULL;
        /* The JSON we write back is valid JSON: scan it. */
        struct s3l__jscan s;
        s3l__jscan_init(&s, 0);
        if (s3l__json_scan(&s, (const char *)b.ptr, b.len) != 0)
            abort();
        s3l__jscan_cleanup(&s);
    }
    *digest = h;
    s3l_buf_free(&b);
    s3l_reader_free(r);
    fclose(f);
}

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

/* Infers a schema from every row, then converts every row under it: no row may be refused. */
static void infer_then_convert(const uint8_t *data, size_t size, char delim)
{
    FILE *f = tmpfile();
    if (!f)
        abort();
    if (size && fwrite(data, 1, size, f) != size)
        abort();
    fflush(f);
    struct s3l_infer *inf = s3l_infer_new(NULL);
    struct s3l_schema *schema = NULL;
    struct s3l_converter *conv = NULL;
    for (int pass = 0; pass < 2; pass++) {
        rewind(f);
        struct s3l_reader_options opt = {.version = S3L_READER_OPTIONS_VERSION,
                                         .format = S3L_INPUT_CSV, .name = "fuzz.csv",
                                         .csv_delimiter = delim};
        struct s3l_reader *r;
        struct s3l_error err = {0};
        if (s3l_reader_open(fileno(f), &opt, &r, &err) != 0)
            abort();
        if (pass == 1 && (s3l_infer_schema(inf, &schema) != 0 ||
                          s3l_converter_new(schema, NULL, &conv, &err) != 0))
            abort();
        struct s3l_row_sink sink = {&nop_ops, NULL};
        for (int n = 0; n < 10000; n++) {
            struct s3l_record rec;
            s3l_error_clear(&err);
            int rc = s3l_reader_next(r, &rec, &err);
            if (rc == 0 || (rc < 0 && r->sticky))
                break;
            if (rc < 0)
                continue;
            if (pass == 0 && s3l_infer_add(inf, &rec) != 0)
                abort();
            if (pass == 1 && s3l_convert(conv, &rec, &sink, &err) != 0) {
                fprintf(stderr, "row refused under its inferred schema: %s\n", err.message);
                abort();
            }
        }
        s3l_reader_free(r);
    }
    s3l_converter_free(conv);
    s3l_schema_free(schema);
    s3l_infer_free(inf);
    fclose(f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char delims[] = {',', ';', '\t', '|'};
    char delim = size ? delims[data[0] % 4] : ',';
    uint64_t a, b, c;
    read_all(data, size, delim, 1, 1 << 20, &a);
    read_all(data, size, delim, 1 << 16, 1 << 20, &b);
    if (a != b) {
        fprintf(stderr, "block size changed the records\n");
        abort();
    }
    read_all(data, size, delim, 7, 48, &c);
    infer_then_convert(data, size, delim);
    return 0;
}
