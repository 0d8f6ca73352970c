/*
 * bench/ndjson_batch.c: NDJSON into one Parquet file through the library alone, the way the
 * runner's inline lane does it (s3l__reader_next_lines, s3l__convert_fast_lines, s3l__convert_line
 * for the lines the fast path leaves), either in column batches (the Parquet writer's row sink
 * as it is) or row by row (the same sink with put_columns hidden). Used to time the converter
 * and writer without the CLI, and to check that both ways give byte-identical files
 * (bench/ndjson_batch.sh). Not built by CMake: see the script.
 * Usage: ndjson_batch SCHEMA.json INPUT.ndjson OUT.parquet batch|rows [ROW_GROUP_ROWS [LEVEL]]
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "input/steps.h"
#include "s3l/input.h"
#include "s3l/parquet.h"

static int fd_write(void *ctx, const void *data, size_t len, struct s3l_error *err)
{
    FILE *f = ctx;
    if (fwrite(data, 1, len, f) != len)
        return s3l_error_set(err, S3L_EIO, "write failed");
    return 0;
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    static char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = 0;
    return buf;
}

int main(int argc, char **argv)
{
    if (argc < 5) {
        fprintf(stderr, "usage: %s SCHEMA INPUT OUT batch|rows [RG_ROWS [LEVEL]]\n", argv[0]);
        return 2;
    }
    struct s3l_error err = {0};
    struct s3l_schema *schema = NULL;
    const char *sj = slurp(argv[1]);
    if (!sj || s3l_schema_from_json(sj, strlen(sj), &schema, &err) != 0) {
        fprintf(stderr, "schema: %s\n", err.message);
        return 1;
    }
    struct s3l_pq_options o;
    s3l_pq_options_init(&o);
    o.codec = S3L_CODEC_ZSTD;
    o.row_group_rows = argc > 5 ? strtoull(argv[5], NULL, 10) : 122880;
    o.level = argc > 6 ? atoi(argv[6]) : 3;
    struct s3l_pq_budget *budget = s3l_pq_budget_new(0); /* as the destination's writers */
    o.budget = budget;
    FILE *out = fopen(argv[3], "wb");
    int in = open(argv[2], O_RDONLY);
    if (!out || in < 0 || !budget) {
        perror("open");
        return 1;
    }
    struct s3l_pq_writer *w = NULL;
    struct s3l_converter *c = NULL;
    struct s3l_reader *r = NULL;
    struct s3l_reader_options ro = {0};
    ro.version = S3L_READER_OPTIONS_VERSION, ro.format = S3L_INPUT_NDJSON, ro.name = argv[2];
    if (s3l_pq_writer_new(schema, &o, (struct s3l_pq_sink){fd_write, out}, &w, &err) ||
        s3l_converter_new(schema, NULL, &c, &err) || s3l_reader_open(in, &ro, &r, &err)) {
        fprintf(stderr, "%s\n", err.message);
        return 1;
    }
    struct s3l_row_sink sink = s3l_pq_writer_row_sink(w);
    struct s3l_row_sink_ops rows_ops = *sink.ops;
    if (strcmp(argv[4], "rows") == 0) {
        rows_ops.put_columns = NULL;
        sink.ops = &rows_ops;
    }
    uint64_t total = 0, slow = 0;
    int rc;
    struct s3l__lines span;
    struct s3l_record rec;
    while ((rc = s3l__reader_next_lines(r, 4096, 1 << 20, &span, &err)) > 0) {
        if (rc == S3L__READER_ONE) {
            if ((rc = s3l__reader_next_raw(r, &rec, &err)) <= 0 ||
                (rc = s3l__convert_line(c, &rec, &sink, &err)) != 0)
                break;
            total++, slow++;
            continue;
        }
        for (;;) {
            uint64_t n = 0;
            rc = s3l__convert_fast_lines(c, &span, UINT64_MAX, &sink, &n, &err);
            total += n;
            if (rc || !s3l__lines_next(&span, &rec))
                break;
            if ((rc = s3l__convert_line(c, &rec, &sink, &err)) != 0)
                break;
            total++, slow++;
        }
        if (rc)
            break;
    }
    if (rc == 0)
        rc = s3l_pq_writer_close(w, &err);
    if (rc) {
        fprintf(stderr, "failed: %s\n", err.message);
        return 1;
    }
    fprintf(stderr, "%llu rows (%llu by the generic path)\n", (unsigned long long)total,
            (unsigned long long)slow);
    s3l_pq_writer_free(w);
    s3l_converter_free(c);
    s3l_reader_free(r);
    s3l_schema_free(schema);
    s3l_pq_budget_free(budget);
    close(in);
    fclose(out);
    return 0;
}
