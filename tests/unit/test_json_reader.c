/*
 * Unit tests of the NDJSON and JSON-array readers: records, line numbers and byte offsets
 * (counted by hand in the inputs below), blank lines, CRLF, a byte order mark, errors naming
 * line, column and offset, recovery after a bad line, the record size limit, tiny read blocks
 * (every record crosses a block boundary), pipes, and resuming at a recorded offset.
 */
#include <errno.h>
#include <fcntl.h>
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

struct run {
    char out[8192]; /* one line per call: "L<line> O<offset>-<end> <json>" or "E <message>" */
    uint64_t final_offset;
};

/* Reads everything (continuing after recoverable errors, at most 50 calls) into run->out. */
static void read_all(int fd, enum s3l_input_format fmt, size_t block, size_t max_record,
                     uint64_t start, uint64_t start_line, struct run *run)
{
    struct s3l_reader_options opt = {.version = S3L_READER_OPTIONS_VERSION, .format = fmt,
                                     .name = "in.json", .block_bytes = block,
                                     .max_record_bytes = max_record, .start_offset = start,
                                     .start_line = start_line};
    struct s3l_reader *r;
    struct s3l_error err = {0};
    assert_int_equal(s3l_reader_open(fd, &opt, &r, &err), 0);
    run->out[0] = 0;
    struct s3l_buf b;
    s3l_buf_init(&b, 4096);
    for (int i = 0; i < 50; i++) {
        struct s3l_record rec;
        s3l_error_clear(&err);
        int rc = s3l_reader_next(r, &rec, &err);
        size_t n = strlen(run->out);
        if (rc == 0)
            break;
        if (rc < 0) {
            snprintf(run->out + n, sizeof(run->out) - n, "E %s\n", err.message);
            if (r->sticky)
                break;
            continue;
        }
        s3l_buf_reset(&b);
        assert_int_equal(s3l__json_write(&b, rec.values, 0), 0);
        snprintf(run->out + n, sizeof(run->out) - n, "L%llu O%llu-%llu %s\n",
                 (unsigned long long)rec.line, (unsigned long long)rec.offset,
                 (unsigned long long)rec.end_offset, (char *)b.ptr);
        assert_int_equal(rec.end_offset, s3l_reader_offset(r));
    }
    run->final_offset = s3l_reader_offset(r);
    s3l_buf_free(&b);
    s3l_reader_free(r);
    close(fd);
}

static const char ND[] = "{\"a\":1}\n"          /* line 1, bytes 0-8 */
                         "\n"                   /* line 2, byte 8 */
                         "  {\"b\":\"x\"}\r\n"  /* line 3, bytes 9-22 */
                         "{\"c\":[1,{\"d\":null}]}"; /* line 4, bytes 22-42, no newline */

static void ndjson_records_lines_offsets(void **state)
{
    (void)state;
    const char *want = "L1 O0-8 {\"a\":1}\n"
                       "L3 O9-22 {\"b\":\"x\"}\n"
                       "L4 O22-42 {\"c\":[1,{\"d\":null}]}\n";
    struct run run;
    size_t blocks[] = {1, 2, 3, 7, 1 << 20};
    for (size_t i = 0; i < sizeof(blocks) / sizeof(blocks[0]); i++) {
        read_all(test_file_with(ND, sizeof(ND) - 1), S3L_INPUT_NDJSON, blocks[i], 0, 0, 0, &run);
        assert_string_equal(run.out, want);
        assert_int_equal(run.final_offset, 42);
    }
    read_all(test_pipe_with(ND), S3L_INPUT_NDJSON, 4, 0, 0, 0, &run);
    assert_string_equal(run.out, want);
    /* Resume after the first record: the reader is told the line number there. */
    read_all(test_file_with(ND, sizeof(ND) - 1), S3L_INPUT_NDJSON, 5, 0, 8, 2, &run);
    assert_string_equal(run.out, "L3 O9-22 {\"b\":\"x\"}\nL4 O22-42 {\"c\":[1,{\"d\":null}]}\n");
    read_all(test_pipe_with(ND), S3L_INPUT_NDJSON, 5, 0, 22, 4, &run);
    assert_string_equal(run.out, "L4 O22-42 {\"c\":[1,{\"d\":null}]}\n");
    /* A byte order mark at the start is skipped. */
    read_all(test_file_with("\xEF\xBB\xBF{\"a\":1}\n", 11), S3L_INPUT_NDJSON, 2, 0, 0, 0, &run);
    assert_string_equal(run.out, "L1 O3-11 {\"a\":1}\n");
    read_all(test_file_with("", 0), S3L_INPUT_NDJSON, 0, 0, 0, 0, &run);
    assert_string_equal(run.out, "");
    /* Trailing blank lines are consumed: the resume offset is the end. */
    read_all(test_file_with("{}\n\n \r\n", 7), S3L_INPUT_NDJSON, 2, 0, 0, 0, &run);
    assert_string_equal(run.out, "L1 O0-3 {}\n");
    assert_int_equal(run.final_offset, 7);
}

static void ndjson_errors_and_recovery(void **state)
{
    (void)state;
    static const char bad[] = "{\"a\":1}\n"
                              "{\"a\":1,}\n"
                              "[1,2]\n"
                              "{\"s\":\"\xff\"}\n"
                              "{\"long\":\"0123456789012345678901234567890123456789\"}\n"
                              "{\"ok\":true}\n";
    struct run run;
    read_all(test_file_with(bad, sizeof(bad) - 1), S3L_INPUT_NDJSON, 3, 40, 0, 0, &run);
    assert_string_equal(
        run.out,
        "L1 O0-8 {\"a\":1}\n"
        "E in.json line 2, column 8 (byte offset 15): expected a member name in double quotes\n"
        "E in.json line 3, column 1 (byte offset 17): expected a JSON object, got an array\n"
        "E in.json line 4, column 7 (byte offset 29): expected valid UTF-8\n"
        /* 3-byte blocks: the limit is crossed when 42 bytes of line 5 (33..84) are buffered,
         * at byte offset 75; the error comes then, and the next call skips 75..85. */
        "E in.json line 5 (byte offset 33): the record is longer than the maximum record size "
        "(40 bytes): no line end by byte offset 75 (reading on skips the rest of the line)\n"
        "L6 O85-97 {\"ok\":true}\n");
    assert_int_equal(run.final_offset, 97);
    /* Past the limit with a large block: the whole line was read, still refused. */
    read_all(test_file_with(bad, sizeof(bad) - 1), S3L_INPUT_NDJSON, 1 << 20, 40, 0, 0, &run);
    assert_non_null(strstr(run.out, "E in.json line 5 (byte offset 33): the record is longer"));
    assert_non_null(strstr(run.out, "L6 O85-97 {\"ok\":true}\n"));
}

static void json_array_stream(void **state)
{
    (void)state;
    static const char arr[] = "[\n"                        /* line 1 */
                              "  {\"a\": 1, \"s\": \"]}\"},\n" /* line 2, bytes 4-23 */
                              "  {\"a\": [2, {\"b\": 3}]}\n"   /* line 3, bytes 27-47 */
                              ",{\"a\":\n4}\n"                /* lines 4-5, bytes 49-57 */
                              "]\n";
    const char *want = "L2 O4-23 {\"a\":1,\"s\":\"]}\"}\n"
                       "L3 O27-47 {\"a\":[2,{\"b\":3}]}\n"
                       "L4 O49-57 {\"a\":4}\n";
    struct run run;
    size_t blocks[] = {1, 3, 1 << 20};
    for (size_t i = 0; i < 3; i++) {
        read_all(test_file_with(arr, sizeof(arr) - 1), S3L_INPUT_JSON, blocks[i], 0, 0, 0, &run);
        assert_string_equal(run.out, want);
        assert_int_equal(run.final_offset, 60); /* "]\n" consumed at the end */
    }
    read_all(test_file_with(arr, sizeof(arr) - 1), S3L_INPUT_JSON, 4, 0, 23, 2, &run);
    assert_string_equal(run.out, "L3 O27-47 {\"a\":[2,{\"b\":3}]}\nL4 O49-57 {\"a\":4}\n");
    read_all(test_file_with(arr, sizeof(arr) - 1), S3L_INPUT_JSON, 4, 0, 57, 5, &run);
    assert_string_equal(run.out, "");
    assert_int_equal(run.final_offset, 60);
    read_all(test_file_with(arr, sizeof(arr) - 1), S3L_INPUT_JSON, 4, 0, 60, 6, &run);
    assert_string_equal(run.out, "");
    assert_int_equal(run.final_offset, 60);
    read_all(test_pipe_with("[]"), S3L_INPUT_JSON, 1, 0, 0, 0, &run);
    assert_string_equal(run.out, "");
    read_all(test_pipe_with(" "), S3L_INPUT_JSON, 1, 0, 0, 0, &run);
    assert_string_equal(run.out, "");
}

static void json_top_level_objects(void **state)
{
    (void)state;
    static const char objs[] = "{\"a\": {\"b\": [1,\n2]}}\n" /* lines 1-2, bytes 0-20 */
                               "{\"c\": \"}\"}{\"d\":1}\n";   /* line 3, bytes 21-31, 31-38 */
    const char *want = "L1 O0-20 {\"a\":{\"b\":[1,2]}}\n"
                       "L3 O21-31 {\"c\":\"}\"}\n"
                       "L3 O31-38 {\"d\":1}\n";
    struct run run;
    read_all(test_file_with(objs, sizeof(objs) - 1), S3L_INPUT_JSON, 2, 0, 0, 0, &run);
    assert_string_equal(run.out, want);
    assert_int_equal(run.final_offset, 39);
    read_all(test_file_with(objs, sizeof(objs) - 1), S3L_INPUT_JSON, 2, 0, 20, 2, &run);
    assert_string_equal(run.out, "L3 O21-31 {\"c\":\"}\"}\nL3 O31-38 {\"d\":1}\n");
    read_all(test_file_with(objs, sizeof(objs) - 1), S3L_INPUT_JSON, 2, 0, 38, 3, &run);
    assert_string_equal(run.out, "");
    read_all(test_pipe_with("{\"a\":1} [1]"), S3L_INPUT_JSON, 0, 0, 0, 0, &run);
    assert_string_equal(run.out, "L1 O0-7 {\"a\":1}\nE in.json line 1 (byte offset 8): expected "
                                 "'{' (the next top-level object)\n");
}

static void json_array_errors(void **state)
{
    (void)state;
    struct run run;
    read_all(test_pipe_with("x"), S3L_INPUT_JSON, 0, 0, 0, 0, &run);
    assert_string_equal(run.out, "E in.json line 1 (byte offset 0): expected '[' (a JSON array of "
                                 "objects) or '{' (objects)\n");
    read_all(test_pipe_with("[{\"a\":1} {\"a\":2}]"), S3L_INPUT_JSON, 0, 0, 0, 0, &run);
    assert_string_equal(run.out, "L1 O1-8 {\"a\":1}\n"
                                 "E in.json line 1 (byte offset 9): expected ',' or ']' after an "
                                 "array element\n");
    read_all(test_pipe_with("[{\"a\":1},\n{\"a\":"), S3L_INPUT_JSON, 0, 0, 0, 0, &run);
    assert_string_equal(run.out, "L1 O1-8 {\"a\":1}\n"
                                 "E in.json line 2 (byte offset 10): expected the rest of the "
                                 "array element (the input ended)\n");
    /* A bad element whose extent is known is skipped; so is a scalar. */
    read_all(test_pipe_with("[{\"a\":tru}, 5, {\"b\":2}] x"), S3L_INPUT_JSON, 2, 0, 0, 0, &run);
    assert_string_equal(run.out,
                        /* columns count from the start of the line: 't' is its 7th byte */
                        "E in.json line 1, column 7 (byte offset 6): expected a value (object, "
                        "array, string, number, true, false, null)\n"
                        "E in.json line 1, column 13 (byte offset 12): expected a JSON object, "
                        "got a number\n"
                        "L1 O15-22 {\"b\":2}\n"
                        "E in.json line 1 (byte offset 24): expected the end of the input after "
                        "the array's ']'\n");
    read_all(test_pipe_with("[{\"a\":1}"), S3L_INPUT_JSON, 0, 0, 0, 0, &run);
    assert_string_equal(run.out, "L1 O1-8 {\"a\":1}\n"
                                 "E in.json line 1 (byte offset 8): expected ',' or ']' (the "
                                 "input ended inside the array)\n");
    read_all(test_pipe_with("[{\"a\":\"0123456789012345678901234567890123456789\"}]"), S3L_INPUT_JSON,
             4, 20, 0, 0, &run);
    assert_string_equal(run.out, "E in.json line 1 (byte offset 1): the array element is longer "
                                 "than the maximum record size (20 bytes)\n");
    /* The same when the whole element fits in one block. */
    read_all(test_pipe_with("[{\"a\":1},{\"a\":\"0123456789012345678901234567890123456789\"}]"),
             S3L_INPUT_JSON, 1 << 16, 20, 0, 0, &run);
    assert_string_equal(run.out, "L1 O1-8 {\"a\":1}\nE in.json line 1 (byte offset 9): the array "
                                 "element is longer than the maximum record size (20 bytes)\n");
}

/* A line that never ends (/dev/zero) is reported as soon as the limit is crossed, and every
 * later call returns after bounded work (max_record_bytes and a block) instead of spinning. */
static void endless_line_is_reported_at_once(void **state)
{
    (void)state;
    int fd = open("/dev/zero", O_RDONLY);
    assert_true(fd >= 0);
    struct s3l_reader_options opt = {.version = S3L_READER_OPTIONS_VERSION,
                                     .format = S3L_INPUT_NDJSON, .name = "zero",
                                     .block_bytes = 256, .max_record_bytes = 1000};
    struct s3l_reader *r;
    struct s3l_error err = {0};
    assert_int_equal(s3l_reader_open(fd, &opt, &r, &err), 0);
    struct s3l_record rec;
    /* 256-byte reads: 1024 bytes buffered is the first time more than 1000 are. */
    assert_int_equal(s3l_reader_next(r, &rec, &err), S3L_EINVALID_INPUT);
    assert_string_equal(err.message, "zero line 1 (byte offset 0): the record is longer than the "
                                     "maximum record size (1000 bytes): no line end by byte "
                                     "offset 1024 (reading on skips the rest of the line)");
    assert_int_equal(rec.offset, 0);
    assert_int_equal(rec.end_offset, 1024);
    assert_null(rec.raw);
    /* Each later call skips a little over 1000 bytes: from 1024 to 2048, then to 3072. */
    s3l_error_clear(&err);
    assert_int_equal(s3l_reader_next(r, &rec, &err), S3L_EINVALID_INPUT);
    assert_string_equal(err.message, "zero line 1 (byte offset 1024): still skipping the record "
                                     "longer than the maximum record size (1000 bytes): no line "
                                     "end by byte offset 2048");
    s3l_error_clear(&err);
    assert_int_equal(s3l_reader_next(r, &rec, &err), S3L_EINVALID_INPUT);
    assert_int_equal(rec.end_offset, 3072);
    assert_int_equal(s3l_reader_offset(r), 3072);
    s3l_reader_free(r);
    close(fd);
    /* A top-level object (not an array) over the limit is named as such. */
    struct run run;
    read_all(test_pipe_with("{\"a\":\"0123456789012345678901234567890123456789\"}"), S3L_INPUT_JSON,
             4, 20, 0, 0, &run);
    assert_string_equal(run.out, "E in.json line 1 (byte offset 0): the top-level object is "
                                 "longer than the maximum record size (20 bytes)\n");
}

/* Pretty-printed JSON: an error's line and column are those of the offending byte itself, not
 * of the element's first line (positions counted by hand; 2-byte blocks drop the line starts
 * from the buffer long before the errors). */
static void pretty_printed_positions(void **state)
{
    (void)state;
    struct run run;
    /* The user's report: '@' is byte 13, the 12th byte of line 2. */
    read_all(test_pipe_with("[\n  {\"a\": 3, @}\n]"), S3L_INPUT_JSON, 2, 0, 0, 0, &run);
    assert_string_equal(run.out, "E in.json line 2, column 12 (byte offset 13): expected a member "
                                 "name in double quotes\n");
    /* Line 1 "[{"a":1}," (0-9), line 2 " {"b":" (10-16), line 3 "   [1," (17-23), line 4
     * "  2,]}, 5]": ']' at 28 is its 5th byte, '5' at 32 its 9th. */
    read_all(test_pipe_with("[{\"a\":1},\n {\"b\":\n   [1,\n  2,]}, 5]"), S3L_INPUT_JSON, 2, 0, 0, 0,
             &run);
    assert_string_equal(run.out, "L1 O1-8 {\"a\":1}\n"
                                 "E in.json line 4, column 5 (byte offset 28): expected a value "
                                 "(object, array, string, number, true, false, null)\n"
                                 "E in.json line 4, column 9 (byte offset 32): expected a JSON "
                                 "object, got a number\n");
    /* Objects back to back, pretty-printed: 'x' (byte 18) is the 8th byte of line 3 (11-21). */
    read_all(test_pipe_with("{\"a\": 1}\n{\n  \"b\": x\n}\n"), S3L_INPUT_JSON, 2, 0, 0, 0, &run);
    assert_string_equal(run.out, "L1 O0-8 {\"a\":1}\n"
                                 "E in.json line 3, column 8 (byte offset 18): expected a value "
                                 "(object, array, string, number, true, false, null)\n");
}

static void records_can_be_kept(void **state)
{
    (void)state;
    int fd = test_pipe_with("{\"a\":\"x\\ty\",\"b\":[1.5,{\"c\":null}]}\n{\"d\":2}\n");
    struct s3l_reader_options opt = {.version = S3L_READER_OPTIONS_VERSION,
                                     .format = S3L_INPUT_NDJSON, .name = "kept"};
    struct s3l_reader *r;
    struct s3l_error err = {0};
    assert_int_equal(s3l_reader_open(fd, &opt, &r, &err), 0);
    struct s3l_record rec, *copy;
    assert_int_equal(s3l_reader_next(r, &rec, &err), 1);
    assert_int_equal(s3l_record_clone(&rec, &copy), 0);
    assert_int_equal(s3l_reader_next(r, &rec, &err), 1); /* the reader's tape is reused */
    s3l_reader_free(r);
    close(fd);
    struct s3l_buf b;
    s3l_buf_init(&b, 1024);
    assert_int_equal(s3l__json_write(&b, copy->values, 0), 0);
    assert_string_equal((char *)b.ptr, "{\"a\":\"x\\ty\",\"b\":[1.5,{\"c\":null}]}");
    assert_int_equal(copy->n_values, 9);
    assert_int_equal(copy->end_offset, 34);
    assert_memory_equal(copy->raw, "{\"a\":\"x\\ty\",", 12);
    assert_string_equal(copy->source, "kept");
    s3l_buf_free(&b);
    s3l_free(copy);
}

static void bad_options(void **state)
{
    (void)state;
    struct s3l_reader_options opt = {.version = 99, .format = S3L_INPUT_NDJSON};
    struct s3l_reader *r;
    struct s3l_error err = {0};
    assert_int_equal(s3l_reader_open(0, &opt, &r, &err), S3L_EINVALID_ARGUMENT);
    enum s3l_input_format f;
    s3l_error_clear(&err);
    assert_int_equal(s3l_input_format_parse("jsonl", &f, &err), 0);
    assert_int_equal(f, S3L_INPUT_NDJSON);
    assert_int_equal(s3l_input_format_parse("xml", &f, &err), S3L_EINVALID_CONFIG);
    assert_string_equal(err.message,
                        "input format \"xml\": expected ndjson (or jsonl), json, csv or "
                        "debezium");
    /* A pipe that ends before the resume offset. */
    opt.version = S3L_READER_OPTIONS_VERSION;
    opt.start_offset = 100;
    opt.name = "p";
    s3l_error_clear(&err);
    int fd = test_pipe_with("{}\n");
    assert_int_equal(s3l_reader_open(fd, &opt, &r, &err), S3L_EIO);
    assert_string_equal(err.message, "p ends before byte offset 100");
    close(fd);
    /* read() failing (a directory) is an I/O error naming the input, and it sticks. */
    fd = open("/", O_RDONLY | O_DIRECTORY);
    assert_true(fd >= 0);
    opt.start_offset = 0;
    opt.name = "/";
    s3l_error_clear(&err);
    assert_int_equal(s3l_reader_open(fd, &opt, &r, &err), 0);
    struct s3l_record rec;
    assert_int_equal(s3l_reader_next(r, &rec, &err), S3L_EIO);
    assert_string_equal(err.message, "read / at byte offset 0: Is a directory");
    assert_int_equal(err.sys_errno, EISDIR);
    s3l_error_clear(&err);
    assert_int_equal(s3l_reader_next(r, &rec, &err), S3L_EIO);
    assert_string_equal(err.message, "read / at byte offset 0: Is a directory");
    s3l_reader_free(r);
    close(fd);
}

static int file_with(const char *text)
{
    return test_file_with(text, strlen(text));
}

/* A first record that fails because the input is in another format says which flag to give;
 * a later failure, or one whose input looks like no other format, does not. */
static void wrong_format_hints(void **state)
{
    (void)state;
    struct run run;
    read_all(file_with("symbol,date,price\nMSFT,Jan 1 2000,39.81\n"), S3L_INPUT_NDJSON, 0, 0, 0,
             0, &run);
    assert_string_equal(run.out,
                        "E in.json line 1, column 1 (byte offset 0): expected a value (object, "
                        "array, string, number, true, false, null); the input starts like CSV: "
                        "give --input-format csv\n"
                        "E in.json line 2, column 1 (byte offset 18): expected a value "
                        "(object, array, string, number, true, false, null)\n");
    static const char as_json[] = "; the input starts like JSON that is not one object per line "
                                  "(a JSON array, or objects spread over lines): give "
                                  "--input-format json\n";
    char want[512];
    read_all(file_with("[{\"a\":1},{\"a\":2}]\n"), S3L_INPUT_NDJSON, 0, 0, 0, 0, &run);
    snprintf(want, sizeof(want), "E in.json line 1, column 1 (byte offset 0): expected a JSON "
             "object, got an array%s", as_json);
    assert_string_equal(run.out, want);
    read_all(file_with("[\n"), S3L_INPUT_NDJSON, 0, 0, 0, 0, &run);
    snprintf(want, sizeof(want), "E in.json line 1, column 2 (byte offset 1): expected a value "
             "(object, array, string, number, true, false, null)%s", as_json);
    assert_string_equal(run.out, want);
    read_all(file_with("{\n"), S3L_INPUT_NDJSON, 0, 0, 0, 0, &run);
    snprintf(want, sizeof(want), "E in.json line 1, column 2 (byte offset 1): expected a member "
             "name in double quotes%s", as_json);
    assert_string_equal(run.out, want);
    read_all(file_with("oops\n"), S3L_INPUT_NDJSON, 0, 0, 0, 0, &run);
    assert_string_equal(run.out, "E in.json line 1, column 1 (byte offset 0): expected a value "
                                 "(object, array, string, number, true, false, null)\n");
    read_all(file_with("a,b\n1,2\n"), S3L_INPUT_JSON, 0, 0, 0, 0, &run);
    assert_string_equal(run.out, "E in.json line 1 (byte offset 0): expected '[' (a JSON array "
                                 "of objects) or '{' (objects); the input starts like CSV: give "
                                 "--input-format csv\n");
    /* Tab-separated. */
    read_all(file_with("id\trate\n"), S3L_INPUT_JSON, 0, 0, 0, 0, &run);
    assert_string_equal(run.out, "E in.json line 1 (byte offset 0): expected '[' (a JSON array "
                                 "of objects) or '{' (objects); the input starts like CSV: give "
                                 "--input-format csv\n");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ndjson_records_lines_offsets),
        cmocka_unit_test(ndjson_errors_and_recovery),
        cmocka_unit_test(json_array_stream),
        cmocka_unit_test(json_top_level_objects),
        cmocka_unit_test(json_array_errors),
        cmocka_unit_test(endless_line_is_reported_at_once),
        cmocka_unit_test(pretty_printed_positions),
        cmocka_unit_test(records_can_be_kept),
        cmocka_unit_test(bad_options),
        cmocka_unit_test(wrong_format_hints),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
