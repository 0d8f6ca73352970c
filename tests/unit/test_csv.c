/*
 * Unit tests of the CSV reader against RFC 4180 section 2: quoted fields holding delimiters,
 * doubled quotes and line breaks, CRLF and LF rows, empty unquoted fields as null and "" as the
 * empty string, the header (recorded, and given back to a resumed reader), a custom delimiter,
 * the delimiter detected from the header (also when resumed), a JSON first line refused as a
 * header, rows with the wrong number of fields, an unterminated quote. Offsets are counted by
 * hand.
 */
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

static int file_with(const char *text)
{
    return test_file_with(text, strlen(text));
}

static char out[8192];
static char delim_out; /* s3l_reader_csv_delimiter after the last read_csv */

static void read_csv(const char *text, size_t block, char delim, uint64_t start, uint64_t line,
                     const char *header, char *header_out)
{
    int fd = file_with(text);
    struct s3l_reader_options opt = {.version = S3L_READER_OPTIONS_VERSION,
                                     .format = S3L_INPUT_CSV, .name = "in.csv",
                                     .block_bytes = block, .csv_delimiter = delim,
                                     .start_offset = start, .start_line = line,
                                     .csv_header = header,
                                     .csv_header_len = header ? strlen(header) : 0};
    struct s3l_reader *r;
    struct s3l_error err = {0};
    assert_int_equal(s3l_reader_open(fd, &opt, &r, &err), 0);
    out[0] = 0;
    struct s3l_buf b;
    s3l_buf_init(&b, 4096);
    for (int i = 0; i < 50; i++) {
        struct s3l_record rec;
        s3l_error_clear(&err);
        int rc = s3l_reader_next(r, &rec, &err);
        size_t n = strlen(out);
        if (rc == 0)
            break;
        if (rc < 0) {
            snprintf(out + n, sizeof(out) - n, "E %s\n", err.message);
            if (r->sticky)
                break;
            continue;
        }
        for (size_t v = 2; v < rec.n_values; v += 2)
            if (rec.values[v].kind == S3L_VALUE_STRING)
                assert_int_equal(rec.values[v].flags, S3L_VALUE_TEXT);
        s3l_buf_reset(&b);
        assert_int_equal(s3l__json_write(&b, rec.values, 0), 0);
        snprintf(out + n, sizeof(out) - n, "L%llu O%llu-%llu %s\n", (unsigned long long)rec.line,
                 (unsigned long long)rec.offset, (unsigned long long)rec.end_offset,
                 (char *)b.ptr);
    }
    if (header_out) {
        size_t hl;
        const char *h = s3l_reader_csv_header(r, &hl);
        memcpy(header_out, h, hl);
        header_out[hl] = 0;
    }
    delim_out = s3l_reader_csv_delimiter(r);
    s3l_buf_free(&b);
    s3l_reader_free(r);
    close(fd);
}

static const char CSV[] = "id,name,note\r\n"           /* line 1, bytes 0-14 */
                          "1,\"Smith, J\",\"said \"\"hi\"\"\"\r\n" /* line 2, bytes 14-42 */
                          "2,,\"\"\r\n"                 /* line 3, bytes 42-49 */
                          "\r\n"                        /* line 4, bytes 49-51 (blank) */
                          "3,\"multi\nline\",x\n"       /* lines 5-6, bytes 51-68 */
                          "4,b,";                       /* line 7, bytes 68-72 */

static void rfc4180_rows(void **state)
{
    (void)state;
    const char *want = "L2 O14-42 {\"id\":\"1\",\"name\":\"Smith, J\","
                       "\"note\":\"said \\\"hi\\\"\"}\n"
                       "L3 O42-49 {\"id\":\"2\",\"name\":null,\"note\":\"\"}\n"
                       "L5 O51-68 {\"id\":\"3\",\"name\":\"multi\\nline\",\"note\":\"x\"}\n"
                       "L7 O68-72 {\"id\":\"4\",\"name\":\"b\",\"note\":null}\n";
    size_t blocks[] = {1, 2, 5, 1 << 20};
    char header[64];
    for (size_t i = 0; i < 4; i++) {
        read_csv(CSV, blocks[i], 0, 0, 0, NULL, header);
        assert_string_equal(out, want);
        assert_string_equal(header, "id,name,note");
    }
    /* Resume after line 3 with the recorded header. */
    read_csv(CSV, 3, 0, 49, 4, "id,name,note", header);
    assert_string_equal(out, "L5 O51-68 {\"id\":\"3\",\"name\":\"multi\\nline\",\"note\":\"x\"}\n"
                             "L7 O68-72 {\"id\":\"4\",\"name\":\"b\",\"note\":null}\n");
    assert_string_equal(header, "id,name,note");
}

static void delimiter_and_quoted_header(void **state)
{
    (void)state;
    read_csv("\"a;b\";c\n1;\"x;y\"\n", 0, ';', 0, 0, NULL, NULL);
    assert_string_equal(out, "L2 O8-16 {\"a;b\":\"1\",\"c\":\"x;y\"}\n");
    read_csv("a\tb\n\"1\"\t2\n", 0, '\t', 0, 0, NULL, NULL);
    assert_string_equal(out, "L2 O4-10 {\"a\":\"1\",\"b\":\"2\"}\n");
    /* A quote inside an unquoted field is literal. */
    read_csv("a,b\n5'6\",x\n", 0, 0, 0, 0, NULL, NULL);
    assert_string_equal(out, "L2 O4-11 {\"a\":\"5'6\\\"\",\"b\":\"x\"}\n");
}

static void errors(void **state)
{
    (void)state;
    read_csv("a,b\n1,2,3\n4\n5,6\n\"7\"x,8\n9,\xff\n", 0, 0, 0, 0, NULL, NULL);
    assert_string_equal(out,
                        "E in.csv line 2 (byte offset 4): expected 2 fields (as in the header), "
                        "got 3\n"
                        "E in.csv line 3 (byte offset 10): expected 2 fields (as in the header), "
                        "got 1\n"
                        "L4 O12-16 {\"a\":\"5\",\"b\":\"6\"}\n"
                        "E in.csv line 5, field 1 (byte offset 19): expected the delimiter or the "
                        "end of the row after a closing quote\n"
                        "E in.csv line 6, column 3 (byte offset 25): expected valid UTF-8\n");
    read_csv("a,b\n1,\"open\n2,3\n", 2, 0, 0, 0, NULL, NULL);
    assert_string_equal(out, "E in.csv line 2 (byte offset 4): a quoted field is not closed "
                             "before the end of the input\n");
    read_csv("a,,b\n1,2,3\n", 0, 0, 0, 0, NULL, NULL);
    assert_string_equal(out, "E in.csv line 1: header field 2 is empty (every column needs a "
                             "name)\n");
    read_csv("a,b,a\n1,2,3\n", 0, 0, 0, 0, NULL, NULL);
    assert_string_equal(out, "E in.csv line 1: header field 3 repeats the column name \"a\"\n");
    read_csv("", 0, 0, 0, 0, NULL, NULL);
    assert_string_equal(out, "");
    /* Resuming without the header is refused. */
    struct s3l_reader_options opt = {.version = S3L_READER_OPTIONS_VERSION,
                                     .format = S3L_INPUT_CSV, .name = "in.csv", .start_offset = 5};
    struct s3l_reader *r;
    struct s3l_error err = {0};
    assert_int_equal(s3l_reader_open(0, &opt, &r, &err), S3L_EINVALID_ARGUMENT);
    assert_string_equal(err.message,
                        "in.csv: resuming a CSV input at byte offset 5 needs its header");
    opt.start_offset = 0;
    opt.csv_delimiter = '"';
    s3l_error_clear(&err);
    assert_int_equal(s3l_reader_open(0, &opt, &r, &err), S3L_EINVALID_ARGUMENT);
    assert_string_equal(err.message,
                        "CSV delimiter: a quote or a line break cannot separate fields");
}

/* Delimiter 0: taken from the header row (',' first, else the most frequent of ';', tab, '|'
 * outside quotes), and reported by s3l_reader_csv_delimiter. */
static void detected_delimiter(void **state)
{
    (void)state;
    read_csv("a;b;c\n1;2,5;x\n", 0, 0, 0, 0, NULL, NULL);
    assert_string_equal(out, "L2 O6-14 {\"a\":\"1\",\"b\":\"2,5\",\"c\":\"x\"}\n");
    assert_int_equal(delim_out, ';');
    read_csv("id\trate\n1001\t.097\n", 0, 0, 0, 0, NULL, NULL);
    assert_string_equal(out, "L2 O8-18 {\"id\":\"1001\",\"rate\":\".097\"}\n");
    assert_int_equal(delim_out, '\t');
    read_csv("a|b\n1|2\n", 0, 0, 0, 0, NULL, NULL);
    assert_string_equal(out, "L2 O4-8 {\"a\":\"1\",\"b\":\"2\"}\n");
    assert_int_equal(delim_out, '|');
    /* A ',' anywhere outside quotes wins; one inside quotes does not count. */
    read_csv("a,b;c\n1,2;3\n", 0, 0, 0, 0, NULL, NULL);
    assert_string_equal(out, "L2 O6-12 {\"a\":\"1\",\"b;c\":\"2;3\"}\n");
    assert_int_equal(delim_out, ',');
    read_csv("\"x,y\";z|w;v\n1;2|3;4\n", 0, 0, 0, 0, NULL, NULL);
    assert_string_equal(out, "L2 O12-20 {\"x,y\":\"1\",\"z|w\":\"2|3\",\"v\":\"4\"}\n");
    assert_int_equal(delim_out, ';');
    read_csv("a\n1\n", 0, 0, 0, 0, NULL, NULL);
    assert_int_equal(delim_out, ',');
    /* A resumed reader detects it from the recorded header, as the first run did. */
    read_csv("a;b\n1;2\n3;4\n", 0, 0, 8, 3, "a;b", NULL);
    assert_string_equal(out, "L3 O8-12 {\"a\":\"3\",\"b\":\"4\"}\n");
    assert_int_equal(delim_out, ';');
    /* Given explicitly, it is not detected. */
    read_csv("a;b\n1;2\n", 0, ',', 0, 0, NULL, NULL);
    assert_string_equal(out, "L2 O4-8 {\"a;b\":\"1;2\"}\n");
    assert_int_equal(delim_out, ',');
}

/* A first line that looks like JSON is not taken for a header; names in brackets are fine. */
static void json_is_not_a_header(void **state)
{
    (void)state;
    static const char hint[] = "; the input starts like JSON, not CSV: give --input-format ndjson "
                               "(one object per line) or json (an array)\n";
    char want[512];
    read_csv("{\"a\":1}\n{\"a\":2}\n", 0, 0, 0, 0, NULL, NULL);
    snprintf(want, sizeof(want), "E in.csv line 1: expected a CSV header row, got what looks "
             "like JSON%s", hint);
    assert_string_equal(out, want);
    read_csv("\xEF\xBB\xBF[\n  {\"a\": 1}\n]\n", 0, 0, 0, 0, NULL, NULL);
    assert_string_equal(out, want);
    read_csv("[id],[name]\n1,x\n", 0, 0, 0, 0, NULL, NULL);
    assert_string_equal(out, "L2 O12-16 {\"[id]\":\"1\",\"[name]\":\"x\"}\n");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(rfc4180_rows),
        cmocka_unit_test(delimiter_and_quoted_header),
        cmocka_unit_test(errors),
        cmocka_unit_test(detected_delimiter),
        cmocka_unit_test(json_is_not_a_header),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
