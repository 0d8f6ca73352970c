/*
 * Fuzz target: the converter's fast path for NDJSON lines (src/lib/input/json/fast.c) against the
 * generic path (scan the line, then s3l_convert), on the same bytes as one line, under two
 * schemas: a fixed flat one with every type the fast path fills (and two it leaves alone), and
 * the one inferred from the line itself when it is an object. The fast path must either write
 * exactly the sink calls the generic path writes, or answer S3L__CONVERT_FALLBACK without a single
 * sink call; and s3l__convert_line must give the generic path's result, calls and message.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "input/json/json.h"
#define LOG_SINK_BYTES (1u << 20) /* inputs up to 64 KiB log far less than this */
#include "log_sink.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char FIXED[] =
    "[{\"name\": \"id\", \"type\": \"int64\", \"key\": true},"
    " {\"name\": \"name\", \"type\": \"string\"}, {\"name\": \"x\", \"type\": \"double\"},"
    " {\"name\": \"f\", \"type\": \"float\"}, {\"name\": \"h\", \"type\": \"halffloat\"},"
    " {\"name\": \"ok\", \"type\": \"bool\"}, {\"name\": \"d\", \"type\": \"date32[day]\"},"
    " {\"name\": \"ts\", \"type\": \"timestamp[ms]\"},"
    " {\"name\": \"tz\", \"type\": \"timestamp[ns, tz=UTC]\"},"
    " {\"name\": \"s\", \"type\": \"int8\"}, {\"name\": \"i\", \"type\": \"int32\"},"
    " {\"name\": \"u\", \"type\": \"uint16\"}, {\"name\": \"t\", \"type\": \"time32[ms]\"},"
    " {\"name\": \"big\", \"type\": \"uint64\"}, {\"name\": \"l\", \"type\": \"list<item: int64>\"}]";

static void check(const struct s3l_schema *schema, const uint8_t *data, size_t size)
{
    struct s3l_error err = {0}, gerr = {0};
    struct s3l_converter *c = NULL, *g = NULL;
    if (s3l_converter_new(schema, NULL, &c, &err) != 0 ||
        s3l_converter_new(schema, NULL, &g, &err) != 0)
        abort();
    struct s3l_record rec = {0};
    rec.raw = (const char *)data;
    rec.raw_len = size;
    rec.line = 3;
    rec.offset = 100;
    rec.end_offset = 100 + size + 1;
    rec.source = "fuzz";
    struct s3l__jscan scan;
    s3l__jscan_init(&scan, 0);
    for (int round = 0; round < 2; round++) { /* the second round runs on learnt hints */
        static struct log_sink a, b, gl;
        log_reset(&a);
        log_reset(&b);
        log_reset(&gl);
        struct s3l_row_sink sa = {&log_ops, &a}, sb = {&log_ops, &b}, sg = {&log_ops, &gl};
        memset(&err, 0, sizeof(err));
        memset(&gerr, 0, sizeof(gerr));
        int fast = s3l__convert_fast(c, &rec, &sa, &err);
        int line = s3l__convert_line(c, &rec, &sb, &err);
        struct s3l_record grec = rec;
        int gen = s3l__record_scan(&scan, &grec, rec.offset, &gerr);
        if (gen == 1)
            gen = s3l_convert(g, &grec, &sg, &gerr);
        if (a.truncated || b.truncated || gl.truncated) {
            fprintf(stderr, "a log passed LOG_SINK_BYTES: raise it\n");
            abort();
        }
        if (fast == S3L__CONVERT_FALLBACK && a.n != 0) {
            fprintf(stderr, "the fast path fell back after writing: %s\n", a.log);
            abort();
        }
        if (fast != S3L__CONVERT_FALLBACK && (fast != 0 || gen != 0 || strcmp(a.log, gl.log))) {
            fprintf(stderr, "fast %d: %s\ngeneric %d: %s\n", fast, a.log, gen, gl.log);
            abort();
        }
        if (line != gen || strcmp(b.log, gl.log) || strcmp(err.message, gerr.message)) {
            fprintf(stderr, "line %d: %s (%s)\ngeneric %d: %s (%s)\n", line, b.log, err.message,
                    gen, gl.log, gerr.message);
            abort();
        }
    }
    s3l__jscan_cleanup(&scan);
    s3l_converter_free(c);
    s3l_converter_free(g);
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
    /* the schema inferred from the line: every key is a column */
    struct s3l__jscan scan;
    s3l__jscan_init(&scan, 0);
    struct s3l_record rec = {0};
    rec.raw = (const char *)data;
    rec.raw_len = size;
    rec.line = 1;
    rec.source = "fuzz";
    struct s3l_schema *inferred = NULL;
    struct s3l_infer_options io = {.version = S3L_INFER_OPTIONS_VERSION};
    struct s3l_infer *inf = s3l_infer_new(&io);
    if (inf && s3l__record_scan(&scan, &rec, 0, &err) == 1 && s3l_infer_add(inf, &rec) == 0 &&
        s3l_infer_schema(inf, &inferred) == 0)
        check(inferred, data, size);
    s3l_schema_free(inferred);
    s3l_infer_free(inf);
    s3l__jscan_cleanup(&scan);
    return 0;
}
