/*
 * Fuzz target: s3l__convert_fast_lines' column batches (src/lib/input/json/fast.c) into the Parquet
 * writer's put_columns (src/lib/parquet/batch.c), against the same lines written row by row. The
 * input is NDJSON text; its first byte picks max_rows per call (1..64, so that most inputs make
 * many batches), the page size and the row group size. It is converted as the pipeline's lanes
 * do (s3l__convert_fast_lines over the whole text, each line it leaves through s3l__convert_line,
 * a refused line skipped) twice: into a writer through its row sink as it is (batches), and into
 * a writer through the same sink without put_columns (rows one by one). Both must accept the same
 * rows and give byte-identical files, under a flat schema of every type the batch maps and under
 * the schema inferred from the first line (often nested or unmapped: then rows go one by one).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "input/json/json.h"
#include "s3l/parquet.h"
#include "schema/schema_int.h"
#include "util/util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char FIXED[] =
    "[{\"name\": \"id\", \"type\": \"int64\", \"nullable\": false},"
    " {\"name\": \"name\", \"type\": \"string\"}, {\"name\": \"x\", \"type\": \"double\"},"
    " {\"name\": \"f\", \"type\": \"float\"}, {\"name\": \"ok\", \"type\": \"bool\"},"
    " {\"name\": \"d\", \"type\": \"date32[day]\"},"
    " {\"name\": \"ts\", \"type\": \"timestamp[ms]\"},"
    " {\"name\": \"tz\", \"type\": \"timestamp[ns, tz=UTC]\"},"
    " {\"name\": \"sec\", \"type\": \"timestamp[s]\"},"
    " {\"name\": \"s\", \"type\": \"int8\"}, {\"name\": \"i\", \"type\": \"int32\"},"
    " {\"name\": \"j\", \"type\": \"int16\"}, {\"name\": \"u\", \"type\": \"uint16\"},"
    " {\"name\": \"v\", \"type\": \"uint8\"}, {\"name\": \"w\", \"type\": \"uint32\"},"
    " {\"name\": \"t\", \"type\": \"time32[ms]\"}, {\"name\": \"t64\", \"type\": \"time64[us]\"}]";

static int mem_write(void *ctx, const void *data, size_t len, struct s3l_error *err)
{
    (void)err;
    return s3l_buf_append(ctx, data, len);
}

/* Converts text into a new writer; *rows: rows written. The file's bytes go to out. */
static void convert(const struct s3l_schema *schema, const char *text, size_t len,
                    uint64_t max_rows, const struct s3l_pq_options *o, bool batches,
                    struct s3l_buf *out, uint64_t *rows)
{
    struct s3l_error err = {0};
    struct s3l_converter *c = NULL;
    struct s3l_pq_writer *w = NULL;
    s3l_buf_init(out, SIZE_MAX / 4);
    if (s3l_converter_new(schema, NULL, &c, &err) != 0 ||
        s3l_pq_writer_new(schema, o, (struct s3l_pq_sink){mem_write, out}, &w, &err) != 0)
        abort();
    struct s3l_row_sink sink = s3l_pq_writer_row_sink(w);
    struct s3l_row_sink_ops ops = *sink.ops;
    if (!batches)
        ops.put_columns = NULL;
    sink.ops = &ops;
    struct s3l__lines span = {text, text + len, 0, 1, 0, "fuzz", NULL};
    for (;;) {
        uint64_t n = 0;
        if (s3l__convert_fast_lines(c, &span, max_rows, &sink, &n, &err) != 0) {
            fprintf(stderr, "the fast path's rows were refused: %s\n", err.message);
            abort();
        }
        if (n)
            continue;
        struct s3l_record rec;
        if (!s3l__lines_next(&span, &rec))
            break;
        s3l_error_clear(&err);
        int rc = s3l__convert_line(c, &rec, &sink, &err);
        if (rc != 0 && rc != S3L_EINVALID_INPUT && rc != S3L_CONVERT_NEW_COLUMNS) {
            fprintf(stderr, "line %llu: %d %s\n", (unsigned long long)rec.line, rc,
                    err.message);
            abort();
        }
        s3l_error_clear(&err);
    }
    *rows = s3l_pq_writer_rows(w);
    if (s3l_pq_writer_close(w, &err) != 0)
        abort();
    s3l_pq_writer_free(w);
    s3l_converter_free(c);
}

static void check(const struct s3l_schema *schema, const uint8_t *data, size_t size)
{
    uint8_t k = size ? data[0] : 0;
    struct s3l_pq_options o;
    s3l_pq_options_init(&o);
    o.codec = S3L_CODEC_NONE;
    o.page_size = (size_t)64 << (k >> 6);  /* 64 .. 512 bytes */
    o.row_group_rows = 1 + ((k >> 3) & 7) * 5; /* 1 .. 36 rows */
    o.row_group_bytes = 4096;
    o.dictionary_page_limit = 256;
    struct s3l_pq_budget *budget = k & 1 ? s3l_pq_budget_new(2048) : NULL;
    o.budget = budget;
    uint64_t max_rows = 1 + (k & 63);
    struct s3l_buf a, b;
    uint64_t ra = 0, rb = 0;
    convert(schema, (const char *)data, size, max_rows, &o, true, &a, &ra);
    convert(schema, (const char *)data, size, max_rows, &o, false, &b, &rb);
    if (ra != rb || a.len != b.len || memcmp(a.ptr, b.ptr, a.len) != 0) {
        fprintf(stderr, "batches: %llu rows, %zu bytes; rows: %llu rows, %zu bytes\n",
                (unsigned long long)ra, a.len, (unsigned long long)rb, b.len);
        abort();
    }
    s3l_buf_free(&a);
    s3l_buf_free(&b);
    s3l_pq_budget_free(budget);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct s3l_schema *fixed;
    struct s3l_error err = {0};
    if (!fixed && s3l_schema_from_json(FIXED, strlen(FIXED), &fixed, &err) != 0)
        abort();
    if (size > 1 << 16)
        return 0;
    check(fixed, data, size);
    /* the schema inferred from the first line that is an object */
    struct s3l__lines span = {(const char *)data, (const char *)data + size, 0, 1, 0, "fuzz",
                             NULL};
    struct s3l__jscan scan;
    s3l__jscan_init(&scan, 0);
    struct s3l_record rec;
    struct s3l_schema *inferred = NULL;
    struct s3l_infer_options io = {.version = S3L_INFER_OPTIONS_VERSION};
    struct s3l_infer *inf = s3l_infer_new(&io);
    if (inf && s3l__lines_next(&span, &rec) && s3l__record_scan(&scan, &rec, 0, &err) == 1 &&
        s3l_infer_add(inf, &rec) == 0 && s3l_infer_schema(inf, &inferred) == 0 &&
        inferred->n_fields > 0)
        check(inferred, data, size);
    s3l_schema_free(inferred);
    s3l_infer_free(inf);
    s3l__jscan_cleanup(&scan);
    return 0;
}
