/*
 * Unit tests of the debezium format (src/lib/input/debezium) through the public reader API:
 * the rows of c, r, u and d events (a delete's row from `before`), _openetl_seq from source.lsn or
 * the line's offset, _openetl_id the same for the same event at another offset, re-spaced and
 * re-escaped, and different for another op or another row of one snapshot; tombstones skipped
 * and counted; truncate, unknown ops, reserved names and non-envelopes refused naming line and
 * column; Connect's logical types rewritten (the expected texts were computed with Python's
 * datetime, decimal and base64 modules, an independent implementation) and declared in the
 * schema hint; `format: debezium` in a Pipeline document names this format.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "s3l/config.h"
#include "s3l/input.h"
#include "input_fd.h"
#include "schema/schema_int.h"

#define MAX_ROWS 16

/* The rows of an input: each member "key=value" (strings and numbers as their text), one line
 * per row, and the error messages met, one per line. */
static char rows[MAX_ROWS][2048];
static size_t n_rows;
static char errors[4096];
static uint64_t skipped;
static struct s3l_schema *hint;

static void read_all(const char *text)
{
    int fd = test_file_with(text, strlen(text));
    struct s3l_reader_options opt = {.version = S3L_READER_OPTIONS_VERSION,
                                     .format = S3L_INPUT_DEBEZIUM, .name = "cdc.ndjson"};
    struct s3l_reader *r;
    struct s3l_error err = {0};
    assert_int_equal(s3l_reader_open(fd, &opt, &r, &err), 0);
    n_rows = 0;
    errors[0] = 0;
    for (;;) {
        struct s3l_record rec;
        struct s3l_error e = {0};
        int rc = s3l_reader_next(r, &rec, &e);
        if (rc == 0)
            break;
        if (rc < 0) {
            assert_int_equal(rc, S3L_EINVALID_INPUT);
            assert_false(s3l_reader_broken(r)); /* the next line reads normally */
            strcat(errors, e.message);
            strcat(errors, "\n");
            continue;
        }
        assert_true(n_rows < MAX_ROWS);
        char *o = rows[n_rows++];
        o[0] = 0;
        const struct s3l_value *v = rec.values;
        for (size_t i = 1; i < v[0].end; i = v[i + 1].end) {
            const struct s3l_value *x = &v[i + 1];
            char val[600];
            if (x->kind == S3L_VALUE_STRING || x->kind == S3L_VALUE_NUMBER) {
                size_t n = 0;
                for (uint32_t k = 0; k < x->len && n + 4 < sizeof(val); k++) {
                    unsigned char c = (unsigned char)x->str[k];
                    n += (size_t)snprintf(val + n, sizeof(val) - n, c < 32 || c > 126 ? "\\x%02x"
                                                                                       : "%c", c);
                }
            } else {
                snprintf(val, sizeof(val), "<%u>", (unsigned)x->kind);
            }
            snprintf(o + strlen(o), 2048 - strlen(o), "%s%.*s=%s", o[0] ? " " : "",
                     (int)v[i].len, v[i].str, val);
        }
    }
    skipped = s3l_reader_skipped(r);
    s3l_schema_free(hint);
    hint = NULL;
    assert_int_equal(s3l_reader_schema_hint(r, &hint), 0);
    s3l_reader_free(r);
    close(fd);
}

/* The value of key in row i ("" when absent). */
static const char *get(size_t i, const char *key)
{
    static char out[600];
    out[0] = 0;
    char pat[64];
    snprintf(pat, sizeof(pat), " %s=", key);
    char line[2100];
    snprintf(line, sizeof(line), " %s", rows[i]);
    const char *p = strstr(line, pat);
    if (p) {
        p += strlen(pat);
        size_t n = strcspn(p, " ");
        snprintf(out, sizeof(out), "%.*s", (int)n, p);
    }
    return out;
}

#define SRC(lsn) "\"source\":{\"db\":\"shop\",\"schema\":\"public\",\"table\":\"t\",\"lsn\":" lsn ",\"txId\":9}"

static void ops_and_rows(void **state)
{
    (void)state;
    const char *line1 = "{\"before\":null,\"after\":{\"id\":1,\"v\":\"a\"}," SRC("100") ",\"op\":\"r\"}\n";
    char text[2048];
    snprintf(text, sizeof(text), "%s%s%s%s%s%s", line1,
             "{\"before\":null,\"after\":{\"id\":2,\"v\":\"b\"}," SRC("100") ",\"op\":\"r\"}\n",
             "{\"before\":{\"id\":1,\"v\":\"a\"},\"after\":{\"id\":1,\"v\":\"c\"}," SRC("200")
             ",\"op\":\"u\"}\n",
             "{\"before\":{\"id\":2,\"v\":null},\"after\":null," SRC("300") ",\"op\":\"d\"}\n"
             "null\n\n",
             "{\"after\":{\"id\":3},\"op\":\"c\"}\n",
             "  null \n");
    read_all(text);
    assert_string_equal(errors, "");
    assert_int_equal(n_rows, 5);
    assert_int_equal(skipped, 2);
    assert_string_equal(get(0, "_openetl_op"), "insert");
    assert_string_equal(get(1, "_openetl_op"), "insert");
    assert_string_equal(get(2, "_openetl_op"), "update");
    assert_string_equal(get(3, "_openetl_op"), "delete");
    assert_string_equal(get(4, "_openetl_op"), "insert");
    assert_string_equal(get(2, "v"), "c");
    /* A delete's row is its before image. */
    const char *del = "id=2 v=<0> _openetl_op=delete _openetl_seq=300 _openetl_id=";
    assert_int_equal(strncmp(rows[3], del, strlen(del)), 0);
    assert_string_equal(get(0, "_openetl_seq"), "100");
    assert_string_equal(get(1, "_openetl_seq"), "100");
    /* Without an LSN: the byte offset of the event's line. */
    char off[32];
    const char *c = strstr(text, "{\"after\":{\"id\":3}");
    snprintf(off, sizeof(off), "%td", c - text);
    assert_string_equal(get(4, "_openetl_seq"), off);
    /* Two rows of one snapshot share the position, not the id. */
    char id0[64];
    snprintf(id0, sizeof(id0), "%s", get(0, "_openetl_id"));
    assert_string_not_equal(id0, get(1, "_openetl_id"));
}

static void same_event_same_id(void **state)
{
    (void)state;
    const char *a = "{\"before\":null,\"after\":{\"id\":1,\"v\":\"\xc3\xa9\"}," SRC("100")
                    ",\"op\":\"c\",\"ts_ms\":1}\n";
    /* The same event at another offset, re-spaced, with an escape, and the wrapper around it. */
    const char *b = "{ \"schema\" : null , \"payload\" : { \"op\" : \"c\", \"after\" : {\"id\" : 1, "
                    "\"v\" : \"\\u00e9\"}, \"before\" : null , \"source\" : {\"txId\":9, \"lsn\": "
                    "100, \"table\":\"t\",\"schema\":\"public\",\"db\":\"shop\"}, \"ts_ms\": 2}}\n";
    const char *u = "{\"before\":null,\"after\":{\"id\":1,\"v\":\"\xc3\xa9\"}," SRC("100")
                    ",\"op\":\"u\"}\n";
    char text[2048];
    snprintf(text, sizeof(text), "%s{\"op\":\"c\",\"after\":{\"x\":0}}\n%s%s", a, b, u);
    read_all(text);
    assert_string_equal(errors, "");
    assert_int_equal(n_rows, 4);
    char id[64];
    snprintf(id, sizeof(id), "%s", get(0, "_openetl_id"));
    assert_int_equal(strlen(id), 36);
    assert_string_equal(get(2, "_openetl_id"), id);
    assert_string_not_equal(get(3, "_openetl_id"), id); /* another op */
    assert_string_not_equal(get(1, "_openetl_id"), id);
}

/* Columns and offsets counted by a short Python script over the same lines. */
static void refusals(void **state)
{
    (void)state;
    read_all("{\"op\":\"c\",\"after\":{\"id\":1}}\n"
             "{\"op\":\"t\",\"before\":null,\"after\":null," SRC("5") "}\n"
             "{\"op\":\"x\",\"after\":{}}\n"
             "{\"op\":\"c\",\"after\":{\"_openetl_op\":1}}\n"
             "{\"op\":\"d\",\"before\":null}\n"
             "{\"id\":1}\n"
             "{\"payload\":5}\n"
             "[1]\n"
             "{\"op\":\"c\",\"after\":{\"id\":2}}\n");
    assert_int_equal(n_rows, 2);
    const char *want =
        "cdc.ndjson line 2, column 7 (byte offset 34): a truncate event (op \"t\"): a truncated "
        "table cannot be landed as rows; expected op \"c\", \"r\", \"u\" or \"d\" (remove the "
        "line, or skip it with --bad-records skip)\n"
        "cdc.ndjson line 3, column 7 (byte offset 142): expected op \"c\", \"r\", \"u\" or \"d\"\n"
        "cdc.ndjson line 4, column 20 (byte offset 177): expected no column named _openetl_*: "
        "those names are the ones this format adds\n"
        "cdc.ndjson line 5, column 20 (byte offset 214): expected \"before\": an object (a "
        "delete's old row, at least its key)\n"
        "cdc.ndjson line 6, column 1 (byte offset 220): expected a Debezium change event: an "
        "object with \"op\" (a string), \"before\" and \"after\", or {\"schema\": ..., "
        "\"payload\": ...} holding one\n"
        "cdc.ndjson line 7, column 12 (byte offset 240): expected \"payload\": a Debezium change "
        "event\n"
        "cdc.ndjson line 8, column 1 (byte offset 243): expected a JSON object, got an array\n";
    assert_string_equal(errors, want);
}

/* A wrapped event whose after struct has the fields below, then its payload. */
#define FIELD(t, n, f) "{\"type\":\"" t "\",\"name\":\"" n "\",\"field\":\"" f "\"}"
#define WRAPPED(after)                                                                           \
    "{\"schema\":{\"type\":\"struct\",\"fields\":[{\"type\":\"struct\",\"field\":\"after\","     \
    "\"fields\":[{\"type\":\"int32\",\"field\":\"id\"},"                                         \
    "{\"type\":\"bytes\",\"name\":\"org.apache.kafka.connect.data.Decimal\",\"parameters\":"    \
    "{\"scale\":\"2\"},\"field\":\"p\"}," FIELD("int32", "io.debezium.time.Date", "d") ","       \
    FIELD("int64", "io.debezium.time.MicroTimestamp", "ts") ","                                  \
    FIELD("int64", "io.debezium.time.NanoTimestamp", "ns") ","                                   \
    FIELD("int64", "org.apache.kafka.connect.data.Timestamp", "ms") ","                          \
    FIELD("int32", "org.apache.kafka.connect.data.Time", "tm") ","                               \
    FIELD("int64", "io.debezium.time.NanoTime", "nt") ","                                        \
    FIELD("string", "io.debezium.time.ZonedTimestamp", "z") ","                                  \
    FIELD("bytes", "", "bin") "]},{\"type\":\"string\",\"field\":\"op\"}]},"                     \
    "\"payload\":{\"op\":\"c\",\"after\":" after "}}\n"

static void logical_types(void **state)
{
    (void)state;
    read_all(WRAPPED("{\"id\":1,\"p\":\"f////////////////////w==\",\"d\":-719162,\"ts\":-1,"
                     "\"ns\":1700000000123456789,\"ms\":253402300799999,\"tm\":86399999,"
                     "\"nt\":1,\"z\":\"2024-01-02T03:04:05+02:00\",\"bin\":\"AP8=\"}")
             WRAPPED("{\"id\":2,\"p\":\"gAAAAAAAAAAAAAAAAAAAAA==\",\"d\":2932896,"
                     "\"ts\":1700000000123456,\"ms\":null}")
             WRAPPED("{\"id\":3,\"p\":\"+w==\",\"d\":-1}")
             WRAPPED("{\"id\":4,\"p\":\"AA==\"}")
             WRAPPED("{\"id\":5,\"p\":\"!!!!\"}")
             WRAPPED("{\"id\":6,\"d\":1.5}")
             WRAPPED("{\"id\":7,\"tm\":86400001}")
             WRAPPED("{\"id\":8,\"p\":\"AAAAAAAAAAAAAAAAAAAAAAAA\"}"));
    assert_int_equal(n_rows, 4);
    assert_string_equal(get(0, "p"), "1701411834604692317316873037158841057.27");
    assert_string_equal(get(1, "p"), "-1701411834604692317316873037158841057.28");
    assert_string_equal(get(2, "p"), "-0.05");
    assert_string_equal(get(3, "p"), "0.00");
    assert_string_equal(get(0, "d"), "0001-01-01");
    assert_string_equal(get(1, "d"), "9999-12-31");
    assert_string_equal(get(2, "d"), "1969-12-31");
    assert_string_equal(get(0, "ts"), "1969-12-31T23:59:59.999999");
    assert_string_equal(get(1, "ts"), "2023-11-14T22:13:20.123456");
    assert_string_equal(get(0, "ns"), "2023-11-14T22:13:20.123456789");
    assert_string_equal(get(0, "ms"), "9999-12-31T23:59:59.999");
    assert_string_equal(get(1, "ms"), "<0>");
    assert_string_equal(get(0, "tm"), "23:59:59.999");
    assert_string_equal(get(0, "nt"), "00:00:00.000000001");
    assert_string_equal(get(0, "z"), "2024-01-02T03:04:05+02:00");
    assert_string_equal(get(0, "bin"), "\\x00\\xff");
    assert_non_null(strstr(errors, "line 5, column "));
    assert_non_null(strstr(errors, "expected a Decimal's unscaled value: base64 of 1 to 16 bytes "
                                   "in column \"p\"\n"));
    assert_non_null(strstr(errors, "line 6, column "));
    assert_non_null(strstr(errors, "expected a Date as an integer count of days"));
    assert_non_null(strstr(errors, "line 7, column "));
    assert_non_null(strstr(errors, "line 8, column "));
    /* The hint: the declared columns, then the format's own. */
    assert_non_null(hint);
    static const char *const want[][2] = {
        {"id", "int32"}, {"p", "decimal128(38, 2)"}, {"d", "date32[day]"},
        {"ts", "timestamp[us]"}, {"ns", "timestamp[ns]"}, {"ms", "timestamp[ms]"},
        {"tm", "time32[ms]"}, {"nt", "time64[ns]"}, {"z", "timestamp[us, tz=UTC]"},
        {"bin", "binary"}, {"_openetl_op", "string"}, {"_openetl_seq", "int64"},
        {"_openetl_id", "uuid"}};
    assert_int_equal(hint->n_fields, sizeof(want) / sizeof(want[0]));
    for (size_t i = 0; i < hint->n_fields; i++) {
        char t[64];
        s3l__type_format(&hint->fields[i].type, t, sizeof(t));
        assert_string_equal(hint->fields[i].name, want[i][0]);
        assert_string_equal(t, want[i][1]);
    }
}

static void plain_hint(void **state)
{
    (void)state;
    read_all("{\"op\":\"c\",\"after\":{\"id\":1}}\n");
    assert_int_equal(hint->n_fields, 3);
    assert_string_equal(hint->fields[0].name, "_openetl_op");
    assert_string_equal(hint->fields[2].name, "_openetl_id");
    enum s3l_input_format f;
    struct s3l_error err = {0};
    assert_int_equal(s3l_input_format_parse("debezium", &f, &err), 0);
    assert_int_equal(f, S3L_INPUT_DEBEZIUM);
}

static void config_format(void **state)
{
    (void)state;
    const char *doc = "apiVersion: openetl.io/v1alpha1\n"
                      "kind: Pipeline\n"
                      "metadata: {name: cdc}\n"
                      "spec:\n"
                      "  sources:\n"
                      "    - {name: orders, files: [orders.ndjson], format: debezium}\n"
                      "  destination: {name: lake}\n";
    struct s3l_config *c = NULL;
    struct s3l_error err = {0};
    assert_int_equal(s3l_config_new(&c), 0);
    assert_int_equal(s3l_config_add_text(c, doc, strlen(doc), "/p.yaml", NULL, &err), 0);
    const struct s3l_config_doc *d = s3l_config_find(c, S3L_CONFIG_PIPELINE, "cdc");
    assert_non_null(d);
    assert_string_equal(d->pipeline->sources[0].format, "debezium");
    enum s3l_input_format f;
    assert_int_equal(s3l_input_format_parse(d->pipeline->sources[0].format, &f, &err), 0);
    assert_int_equal(f, S3L_INPUT_DEBEZIUM);
    s3l_config_free(c);
}

static int teardown(void **state)
{
    (void)state;
    s3l_schema_free(hint);
    hint = NULL;
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ops_and_rows),  cmocka_unit_test(same_event_same_id),
        cmocka_unit_test(refusals),      cmocka_unit_test(logical_types),
        cmocka_unit_test(plain_hint),    cmocka_unit_test(config_format),
    };
    return cmocka_run_group_tests(tests, NULL, teardown);
}
