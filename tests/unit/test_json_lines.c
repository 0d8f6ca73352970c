/*
 * Unit tests of NDJSON spans (s3l__reader_next_lines, s3l__lines_next): the lines, line numbers and
 * byte offsets of every row (counted by hand in the inputs below, the same as the per-record
 * reader's in test_json_reader.c), blank lines, CRLF, a last line without a line end, a byte
 * order mark, the row and byte limits of a span, tiny read blocks, pipes, resuming, and lines over
 * the record size limit left to s3l__reader_next_raw.
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

struct spans {
    size_t block, max_record, max_bytes;
    uint64_t max_rows, start, start_line;
};

/*
 * Reads fd by spans into out: "S<rows>" for each span then "L<line> O<offset>-<end> <raw>" for each
 * of its rows, "R" + the same (or "E <message>") for a line read with s3l__reader_next_raw after
 * S3L__READER_ONE. Checks that every span ends where the reader's offset and line now are.
 */
static void read_spans(int fd, const struct spans *sp, char *out, size_t cap, uint64_t *final)
{
    struct s3l_reader_options opt = {.version = S3L_READER_OPTIONS_VERSION,
                                     .format = S3L_INPUT_NDJSON, .name = "in.ndjson",
                                     .block_bytes = sp->block, .max_record_bytes = sp->max_record,
                                     .start_offset = sp->start, .start_line = sp->start_line};
    struct s3l_reader *r;
    struct s3l_error err = {0};
    assert_int_equal(s3l_reader_open(fd, &opt, &r, &err), 0);
    out[0] = 0;
    for (int i = 0; i < 100; i++) {
        struct s3l__lines s;
        struct s3l_record rec;
        s3l_error_clear(&err);
        int rc = s3l__reader_next_lines(r, sp->max_rows, sp->max_bytes, &s, &err);
        size_t n = strlen(out);
        if (rc == 0)
            break;
        if (rc == S3L__READER_ONE) {
            rc = s3l__reader_next_raw(r, &rec, &err);
            if (rc == 0)
                break;
            if (rc < 0)
                snprintf(out + n, cap - n, "E %s\n", err.message);
            else
                snprintf(out + n, cap - n, "R L%llu O%llu-%llu %.*s\n",
                         (unsigned long long)rec.line, (unsigned long long)rec.offset,
                         (unsigned long long)rec.end_offset, (int)rec.raw_len, rec.raw);
            if (r->sticky)
                break;
            continue;
        }
        assert_int_equal(rc, 1);
        assert_string_equal(s.source, "in.ndjson");
        snprintf(out + n, cap - n, "S%llu\n", (unsigned long long)s.rows);
        uint64_t rows = 0;
        while (s3l__lines_next(&s, &rec) == 1) {
            n = strlen(out);
            assert_null(rec.values);
            snprintf(out + n, cap - n, "L%llu O%llu-%llu %.*s\n", (unsigned long long)rec.line,
                     (unsigned long long)rec.offset, (unsigned long long)rec.end_offset,
                     (int)rec.raw_len, rec.raw);
            rows++;
        }
        assert_int_equal(rows, s.rows);
        assert_ptr_equal(s.p, s.end);
        assert_int_equal(s.offset, s3l_reader_offset(r));
        assert_int_equal(s.line, s3l_reader_line(r));
    }
    *final = s3l_reader_offset(r);
    s3l_reader_free(r);
    close(fd);
}

static const char ND[] = "{\"a\":1}\n"                  /* line 1, bytes 0-8 */
                         "\n"                           /* line 2, byte 8 */
                         "  {\"b\":\"x\"}\r\n"          /* line 3, bytes 9-22 */
                         "{\"c\":[1,{\"d\":null}]}";    /* line 4, bytes 22-42, no newline */

static void rows_lines_offsets(void **state)
{
    (void)state;
    char out[4096];
    uint64_t end;
    const char *rows = "L1 O0-8 {\"a\":1}\n"
                       "L3 O9-22   {\"b\":\"x\"}\n"
                       "L4 O22-42 {\"c\":[1,{\"d\":null}]}\n";
    /* A big block: the rows ended by a line feed in one span; the last line only once the
     * input's end is known (a read returned 0), in a span of its own. */
    struct spans sp = {.max_rows = 100, .max_bytes = 1 << 20};
    read_spans(test_file_with(ND, sizeof(ND) - 1), &sp, out, sizeof(out), &end);
    char want[1024];
    snprintf(want, sizeof(want), "S2\nL1 O0-8 {\"a\":1}\nL3 O9-22   {\"b\":\"x\"}\n"
                                 "S1\nL4 O22-42 {\"c\":[1,{\"d\":null}]}\n");
    assert_string_equal(out, want);
    assert_int_equal(end, 42);
    /* Blocks of 1, 2, 3, 7 bytes and a pipe: the same rows, whatever the spans. */
    size_t blocks[] = {1, 2, 3, 7};
    for (size_t i = 0; i < 4; i++) {
        sp.block = blocks[i];
        read_spans(test_file_with(ND, sizeof(ND) - 1), &sp, out, sizeof(out), &end);
        char got[1024] = "";
        for (const char *p = out; *p;) { /* drop the span headers */
            const char *nl = strchr(p, '\n');
            if (*p != 'S')
                strncat(got, p, (size_t)(nl - p + 1));
            p = nl + 1;
        }
        assert_string_equal(got, rows);
        assert_int_equal(end, 42);
    }
    sp.block = 4;
    read_spans(test_pipe_with(ND), &sp, out, sizeof(out), &end);
    assert_non_null(strstr(out, "L4 O22-42"));
    /* One row per span; then a span of at most 10 bytes past its first row. */
    sp.block = 0;
    sp.max_rows = 1;
    read_spans(test_file_with(ND, sizeof(ND) - 1), &sp, out, sizeof(out), &end);
    snprintf(want, sizeof(want), "S1\nL1 O0-8 {\"a\":1}\nS1\nL3 O9-22   {\"b\":\"x\"}\n"
                                 "S1\nL4 O22-42 {\"c\":[1,{\"d\":null}]}\n");
    assert_string_equal(out, want);
    sp.max_rows = 100;
    sp.max_bytes = 10; /* line 1 is 8 bytes, the blank line 9: line 3 still starts before 10 */
    read_spans(test_file_with(ND, sizeof(ND) - 1), &sp, out, sizeof(out), &end);
    snprintf(want, sizeof(want), "S2\nL1 O0-8 {\"a\":1}\nL3 O9-22   {\"b\":\"x\"}\n"
                                 "S1\nL4 O22-42 {\"c\":[1,{\"d\":null}]}\n");
    assert_string_equal(out, want);
}

static void resume_bom_blank(void **state)
{
    (void)state;
    char out[4096];
    uint64_t end;
    struct spans sp = {.block = 5, .max_rows = 100, .max_bytes = 1 << 20, .start = 8,
                       .start_line = 2};
    read_spans(test_file_with(ND, sizeof(ND) - 1), &sp, out, sizeof(out), &end);
    assert_string_equal(out, "S1\nL3 O9-22   {\"b\":\"x\"}\nS1\nL4 O22-42 {\"c\":[1,{\"d\":null}]}\n");
    /* A byte order mark at offset 0 is skipped. */
    struct spans bom = {.block = 2, .max_rows = 100, .max_bytes = 1 << 20};
    read_spans(test_file_with("\xEF\xBB\xBF{\"a\":1}\n", 11), &bom, out, sizeof(out), &end);
    assert_string_equal(out, "S1\nL1 O3-11 {\"a\":1}\n");
    /* Only blank lines (and an empty input): no span, everything consumed. */
    read_spans(test_file_with("\n \r\n\t", 5), &bom, out, sizeof(out), &end);
    assert_string_equal(out, "");
    assert_int_equal(end, 5);
    read_spans(test_file_with("", 0), &bom, out, sizeof(out), &end);
    assert_string_equal(out, "");
    assert_int_equal(end, 0);
    /* Trailing blank lines are not in the span, but consumed at the end. */
    bom.block = 0;
    read_spans(test_file_with("{}\n\n \r\n", 7), &bom, out, sizeof(out), &end);
    assert_string_equal(out, "S1\nL1 O0-3 {}\n");
    assert_int_equal(end, 7);
}

static void long_lines_go_one_by_one(void **state)
{
    (void)state;
    char out[4096];
    uint64_t end;
    /* Limit 10 bytes: line 2 (12 bytes) is over it, reported by s3l__reader_next_raw; the spans
     * go on after it. */
    static const char in[] = "{\"a\":1}\n"            /* line 1, bytes 0-8 */
                             "{\"b\":123456}\n"       /* line 2, bytes 8-21, 12 bytes */
                             "{\"c\":2}\n";           /* line 3, bytes 21-29 */
    struct spans sp = {.block = 0, .max_record = 10, .max_rows = 100, .max_bytes = 1 << 20};
    read_spans(test_file_with(in, sizeof(in) - 1), &sp, out, sizeof(out), &end);
    assert_string_equal(out, "S1\nL1 O0-8 {\"a\":1}\n"
                             "E in.ndjson line 2 (byte offset 8): the record is longer than the "
                             "maximum record size (10 bytes)\n"
                             "S1\nL3 O21-29 {\"c\":2}\n");
    assert_int_equal(end, 29);
    /* Small blocks: line 2 is found over the limit before its end; the rest is skipped. */
    sp.block = 4;
    read_spans(test_file_with(in, sizeof(in) - 1), &sp, out, sizeof(out), &end);
    assert_non_null(strstr(out, "S1\nL1 O0-8 {\"a\":1}\nE in.ndjson line 2 (byte offset 8): "));
    assert_non_null(strstr(out, "L3 O21-29 {\"c\":2}\n"));
    assert_int_equal(end, 29);
}

/* A quiet stream: with idle_ms the reader answers S3L_READER_IDLE instead of waiting for more
 * bytes, having consumed nothing of a line not yet whole; the line comes once it is. */
static void quiet_stream_hands_control_back(void **state)
{
    (void)state;
    int p[2];
    assert_int_equal(pipe(p), 0);
    assert_int_equal(write(p[1], "{\"a\":1}\n{\"b\"", 12), 12);
    struct s3l_reader_options opt = {.version = S3L_READER_OPTIONS_VERSION,
                                     .format = S3L_INPUT_NDJSON, .name = "pipe", .idle_ms = 20};
    struct s3l_reader *r;
    struct s3l_error err = {0};
    assert_int_equal(s3l_reader_open(p[0], &opt, &r, &err), 0);
    struct s3l__lines s;
    assert_int_equal(s3l__reader_next_lines(r, 10, 1024, &s, &err), 1);
    assert_int_equal(s.rows, 1);
    assert_int_equal(s3l_reader_offset(r), 8);
    assert_int_equal(s3l__reader_next_lines(r, 10, 1024, &s, &err), S3L_READER_IDLE);
    assert_int_equal(s3l_reader_offset(r), 8); /* the half line is not consumed */
    assert_int_equal(write(p[1], ":2}\n", 4), 4);
    close(p[1]);
    assert_int_equal(s3l__reader_next_lines(r, 10, 1024, &s, &err), 1);
    struct s3l_record rec;
    assert_int_equal(s3l__lines_next(&s, &rec), 1);
    assert_int_equal(rec.raw_len, 7);
    assert_memory_equal(rec.raw, "{\"b\":2}", 7);
    assert_int_equal(rec.line, 2);
    assert_int_equal(s3l__reader_next_lines(r, 10, 1024, &s, &err), 0);
    assert_int_equal(s3l_reader_offset(r), 16);
    s3l_reader_free(r);
    close(p[0]);
}

static void bad_arguments(void **state)
{
    (void)state;
    struct s3l_reader_options opt = {.version = S3L_READER_OPTIONS_VERSION,
                                     .format = S3L_INPUT_CSV, .name = "in.csv"};
    struct s3l_reader *r;
    struct s3l_error err = {0};
    int fd = test_file_with("a\n1\n", 4);
    assert_int_equal(s3l_reader_open(fd, &opt, &r, &err), 0);
    struct s3l__lines s;
    assert_int_equal(s3l__reader_next_lines(r, 10, 100, &s, &err), S3L_EINVALID_ARGUMENT);
    s3l_reader_free(r);
    close(fd);
    opt.format = S3L_INPUT_NDJSON;
    fd = test_file_with("{}\n", 3);
    assert_int_equal(s3l_reader_open(fd, &opt, &r, &err), 0);
    assert_int_equal(s3l__reader_next_lines(r, 0, 100, &s, &err), S3L_EINVALID_ARGUMENT);
    s3l_reader_free(r);
    close(fd);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(rows_lines_offsets),
        cmocka_unit_test(resume_bom_blank),
        cmocka_unit_test(long_lines_go_one_by_one),
        cmocka_unit_test(quiet_stream_hands_control_back),
        cmocka_unit_test(bad_arguments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
