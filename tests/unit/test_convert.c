/*
 * Unit tests of the converter with a recording row sink: each record's exact call sequence is
 * compared with a hand-written expectation (values computed by hand: 2024-01-01T00:00:00Z is
 * 1704067200 s; 2024-02-29 is day 19782; 12:00:00.5 is 43200.5 s; P1Y2M3DT4H5M6.5S is 14 months,
 * 3 days and 14706.5 s), and every lossy coercion's error message is checked.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "input/json/json.h"
#include "schema/schema_int.h"

/* ---- a recording row sink ------------------------------------------------------------------ */

struct rec_sink {
    char log[4096];
    int fail_at;  /* fail the n-th put (1-based), 0: never */
    int puts;
};

static void logf_(struct rec_sink *s, const char *fmt, ...)
{
    size_t n = strlen(s->log);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->log + n, sizeof(s->log) - n, fmt, ap);
    va_end(ap);
}

static int counted(struct rec_sink *s)
{
    return ++s->puts == s->fail_at ? S3L_ETOO_LARGE : 0;
}

static int r_begin(void *c) { logf_(c, "begin"); return 0; }
static int r_null(void *c) { logf_(c, " null"); return counted(c); }
static int r_bool(void *c, bool v) { logf_(c, " bool:%d", v); return counted(c); }
static int r_int(void *c, int64_t v) { logf_(c, " int:%lld", (long long)v); return counted(c); }
static int r_uint(void *c, uint64_t v)
{
    logf_(c, " uint:%llu", (unsigned long long)v);
    return counted(c);
}
static int r_double(void *c, double v) { logf_(c, " dbl:%.17g", v); return counted(c); }
static int r_bytes(void *c, const void *d, size_t n)
{
    logf_(c, " bytes:");
    const unsigned char *p = d;
    for (size_t i = 0; i < n; i++)
        logf_(c, p[i] >= 0x20 && p[i] < 0x7f ? "%c" : "\\x%02x", p[i]);
    return counted(c);
}
static int r_dec(void *c, int64_t hi, uint64_t lo)
{
    logf_(c, " dec:%lld,%llu", (long long)hi, (unsigned long long)lo);
    return counted(c);
}
static int r_ivl(void *c, int32_t m, int32_t d, int64_t ns)
{
    logf_(c, " ivl:%d,%d,%lld", m, d, (long long)ns);
    return counted(c);
}
static int r_bl(void *c) { logf_(c, " ["); return 0; }
static int r_el(void *c) { logf_(c, " ]"); return 0; }
static int r_bs(void *c) { logf_(c, " {"); return 0; }
static int r_es(void *c) { logf_(c, " }"); return 0; }
static int r_bm(void *c) { logf_(c, " <"); return 0; }
static int r_em(void *c) { logf_(c, " >"); return 0; }
static int r_end(void *c, struct s3l_error *err)
{
    struct rec_sink *s = c;
    if (s->fail_at && s->puts >= s->fail_at) {
        logf_(c, " end!");
        return s3l_error_set(err, S3L_ETOO_LARGE, "sink: value too large");
    }
    logf_(c, " end");
    return 0;
}
static void r_abort(void *c) { logf_(c, " abort"); }

static const struct s3l_row_sink_ops rec_ops = {
    r_begin, r_null, r_bool, r_int, r_uint, r_double, r_bytes, r_dec, r_ivl,
    r_bl,    r_el,   r_bs,   r_es,  r_bm,   r_em,     r_end,   r_abort, NULL,
};

/* ---- helpers ------------------------------------------------------------------------------- */

static const char SCHEMA[] =
    "[{\"name\": \"id\", \"type\": \"int64\", \"key\": true},"
    " {\"name\": \"name\", \"type\": \"string\"},"
    " {\"name\": \"price\", \"type\": \"decimal128(10, 2)\"},"
    " {\"name\": \"ts\", \"type\": \"timestamp[us, tz=UTC]\"},"
    " {\"name\": \"d\", \"type\": \"date32[day]\"},"
    " {\"name\": \"ok\", \"type\": \"bool\"},"
    " {\"name\": \"tags\", \"type\": \"list<item: string>\"},"
    " {\"name\": \"attrs\", \"type\": \"struct<a: int64, b: double>\"},"
    " {\"name\": \"m\", \"type\": \"map<string, int64>\"},"
    " {\"name\": \"j\", \"type\": \"json\"},"
    " {\"name\": \"u\", \"type\": \"uuid\"},"
    " {\"name\": \"t\", \"type\": \"time64[us]\"},"
    " {\"name\": \"iv\", \"type\": \"interval[month_day_nano]\"},"
    " {\"name\": \"f\", \"type\": \"float\"},"
    " {\"name\": \"small\", \"type\": \"int8\"},"
    " {\"name\": \"big\", \"type\": \"uint64\"}]";

struct fixture {
    struct s3l_schema *schema;
    struct s3l_converter *conv;
    struct s3l__jscan scan;
    struct rec_sink sink;
    struct s3l_error err;
};

static struct fixture fx;

static void setup_conv(bool stop_on_unknown)
{
    memset(&fx, 0, sizeof(fx));
    assert_int_equal(s3l_schema_from_json(SCHEMA, strlen(SCHEMA), &fx.schema, &fx.err), 0);
    struct s3l_converter_options opt = {S3L_CONVERTER_OPTIONS_VERSION, stop_on_unknown};
    assert_int_equal(s3l_converter_new(fx.schema, &opt, &fx.conv, &fx.err), 0);
    s3l__jscan_init(&fx.scan, 0);
}

static void teardown_conv(void)
{
    s3l_converter_free(fx.conv);
    s3l_schema_free(fx.schema);
    s3l__jscan_cleanup(&fx.scan);
}

/* Converts one JSON line (line 7 of t.json); returns the code, the log in fx.sink.log. */
static int conv(const char *json)
{
    assert_int_equal(s3l__json_scan(&fx.scan, json, strlen(json)), 0);
    struct s3l_record rec = {fx.scan.tape, fx.scan.n, 7, 0, 0, json, strlen(json), "t.json"};
    fx.sink.log[0] = 0;
    fx.sink.puts = 0;
    s3l_error_clear(&fx.err);
    struct s3l_row_sink sink = {&rec_ops, &fx.sink};
    return s3l_convert(fx.conv, &rec, &sink, &fx.err);
}

static const char *conv_err(const char *json)
{
    assert_int_equal(conv(json), S3L_EINVALID_INPUT);
    assert_non_null(strstr(fx.sink.log, " abort"));
    return fx.err.message;
}

/* ---- tests --------------------------------------------------------------------------------- */

static void every_type_and_lossless_coercions(void **state)
{
    (void)state;
    setup_conv(false);
    assert_int_equal(
        conv("{\"id\":1,\"name\":123.50,\"price\":\"12.3\",\"ts\":\"2024-01-01T01:00:00+01:00\","
             "\"d\":\"2024-02-29\",\"ok\":\"TRUE\",\"tags\":[\"a\",null],\"attrs\":{\"b\":2,"
             "\"x\":5},\"m\":{\"k\":1,\"l\":null},\"j\":{\"z\":[1,\"q\\n\"]},"
             "\"u\":\"123e4567-e89b-12d3-a456-426614174000\",\"t\":\"12:00:00.5\","
             "\"iv\":\"P1Y2M3DT4H5M6.5S\",\"f\":1,\"small\":-128,"
             "\"big\":\"18446744073709551615\",\"extra\":1,\"nothing\":null}"),
        0);
    assert_string_equal(fx.sink.log,
                        "begin int:1 bytes:123.50 dec:0,1230 int:1704067200000000 int:19782 "
                        "bool:1 [ bytes:a null ] { null dbl:2 } < bytes:k int:1 bytes:l null > "
                        "bytes:{\"z\":[1,\"q\\n\"]} "
                        "bytes:\\x12>Eg\\xe8\\x9b\\x12\\xd3\\xa4VBf\\x14\\x17@\\x00 "
                        "int:43200500000 "
                        "ivl:14,3,14706500000000 dbl:1 int:-128 uint:18446744073709551615 end");
    /* "extra" and attrs.x (a struct field the schema lacks) are not written: both counted. */
    assert_int_equal(s3l_converter_ignored(fx.conv), 2);
    /* Missing nullable columns are nulls; a number and a bool into a string keep their text. */
    assert_int_equal(conv("{\"name\":true,\"id\":\"42\",\"price\":7,\"f\":\"-2.5e1\",\"j\":\"s\"}"),
                     0);
    assert_string_equal(fx.sink.log, "begin int:42 bytes:true dec:0,700 null null null null null "
                                     "null bytes:\"s\" null null null dbl:-25 null null end");
    teardown_conv();
}

static void lossy_values_are_errors(void **state)
{
    (void)state;
    setup_conv(false);
    assert_string_equal(conv_err("{\"id\":null}"),
                        "t.json line 7, column \"id\": expected a value, got null (a key column "
                        "refuses nulls)");
    assert_string_equal(conv_err("{\"name\":\"x\"}"),
                        "t.json line 7, column \"id\": expected a value, got nothing (the key is "
                        "missing) (a key column refuses nulls)");
    assert_string_equal(conv_err("{\"id\":1.5}"),
                        "t.json line 7, column \"id\": expected int64, got 1.5 (a fraction)");
    assert_string_equal(conv_err("{\"id\":\"abc\"}"),
                        "t.json line 7, column \"id\": expected int64, got \"abc\" (not a number)");
    assert_string_equal(conv_err("{\"id\":1e19}"),
                        "t.json line 7, column \"id\": expected int64, got 1e19 (out of range)");
    assert_string_equal(conv_err("{\"id\":1,\"small\":200}"),
                        "t.json line 7, column \"small\": expected int8, got 200 (out of range)");
    assert_string_equal(conv_err("{\"id\":1,\"big\":-1}"),
                        "t.json line 7, column \"big\": expected uint64, got -1 (out of range)");
    assert_string_equal(conv_err("{\"id\":1,\"price\":\"1.234\"}"),
                        "t.json line 7, column \"price\": expected decimal128(10, 2), got "
                        "\"1.234\" (more fractional digits than the scale)");
    assert_string_equal(conv_err("{\"id\":1,\"price\":123456789}"),
                        "t.json line 7, column \"price\": expected decimal128(10, 2), got "
                        "123456789 (more digits than the precision)");
    assert_string_equal(conv_err("{\"id\":1,\"tags\":[1,{\"a\":1}]}"),
                        "t.json line 7, column \"tags[1]\": expected string, got an object");
    assert_string_equal(conv_err("{\"id\":1,\"tags\":\"a\"}"),
                        "t.json line 7, column \"tags\": expected list<item: string>, got \"a\"");
    assert_string_equal(conv_err("{\"id\":1,\"attrs\":{\"a\":\"x\"}}"),
                        "t.json line 7, column \"attrs.a\": expected int64, got \"x\" (not a "
                        "number)");
    /* A record spanning lines (pretty-printed, starting on line 7): the value's own line. */
    assert_string_equal(conv_err("{\"id\":1,\n \"attrs\": {\n  \"a\": \"x\"}}"),
                        "t.json line 9, column \"attrs.a\": expected int64, got \"x\" (not a "
                        "number)");
    assert_string_equal(conv_err("{\"id\":1,\"m\":{\"k\":true}}"),
                        "t.json line 7, column \"m.k\": expected int64, got true");
    assert_string_equal(conv_err("{\"id\":1,\"ts\":\"garbage\"}"),
                        "t.json line 7, column \"ts\": expected timestamp[us, tz=UTC] as an "
                        "ISO-8601 timestamp YYYY-MM-DD[THH:MM:SS[.fraction][Z|+HH:MM]], got "
                        "\"garbage\"");
    assert_string_equal(conv_err("{\"id\":1,\"ts\":\"2024-01-01T00:00:00.0000001Z\"}"),
                        "t.json line 7, column \"ts\": expected timestamp[us, tz=UTC] as ISO-8601 "
                        "text, got \"2024-01-01T00:00:00.0000001Z\" (a fraction finer than the "
                        "column's unit)");
    assert_string_equal(conv_err("{\"id\":1,\"ts\":1704067200}"),
                        "t.json line 7, column \"ts\": expected timestamp[us, tz=UTC], got "
                        "1704067200 (dates and times are ISO-8601 text)");
    assert_string_equal(conv_err("{\"id\":1,\"u\":\"nope\"}"),
                        "t.json line 7, column \"u\": expected a UUID "
                        "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx, got \"nope\"");
    assert_string_equal(conv_err("{\"id\":1,\"name\":{\"a\":1}}"),
                        "t.json line 7, column \"name\": expected string, got an object");
    assert_string_equal(conv_err("{\"id\":1,\"ok\":1}"),
                        "t.json line 7, column \"ok\": expected bool, got 1");
    assert_string_equal(conv_err("{\"id\":1,\"f\":1e39}"),
                        "t.json line 7, column \"f\": expected float, got 1e39 (out of range)");
    assert_string_equal(conv_err("{\"id\":1,\"iv\":\"P1X\"}"),
                        "t.json line 7, column \"iv\": expected an ISO-8601 duration such as "
                        "P1Y2M3DT4H5M6.5S, got \"P1X\"");
    assert_string_equal(conv_err("{\"id\":1,\"small\":\"\\u00e9\\n0123456789012345678901234567890"
                                 "123456789\"}"),
                        "t.json line 7, column \"small\": expected int8, got \"???"
                        "0123456789012345678901234567890123456\"... (not a number)");
    teardown_conv();
}

static void unknown_keys_and_sink_failures(void **state)
{
    (void)state;
    setup_conv(true);
    const char *grows = "{\"id\":1,\"new\":[1],\"gone\":null,\"x\":2,\"e\":[[],{\"q\":null}]}";
    assert_int_equal(conv(grows), S3L_CONVERT_NEW_COLUMNS);
    assert_string_equal(fx.sink.log, ""); /* nothing written */
    assert_int_equal(s3l_converter_n_unknown(fx.conv), 2);
    assert_int_equal(s3l_converter_unknown(fx.conv, 0), 3);
    assert_memory_equal(fx.scan.tape[s3l_converter_unknown(fx.conv, 1)].str, "x", 1);
    assert_string_equal(s3l_converter_unknown_path(fx.conv, 0), "new");
    assert_string_equal(s3l_converter_unknown_path(fx.conv, 1), "x");
    /* Grow the schema from the record, convert it again with a new converter. */
    struct s3l_record rec = {fx.scan.tape, fx.scan.n, 7, 0, 0, grows, strlen(grows), "t.json"};
    size_t added = 0;
    assert_int_equal(s3l_converter_grow(fx.conv, &rec, NULL, fx.schema, &added, &fx.err), 0);
    assert_int_equal(added, 2);
    assert_int_equal(fx.schema->n_fields, 18);
    char tn[64];
    s3l__type_format(&fx.schema->fields[16].type, tn, sizeof(tn));
    assert_string_equal(tn, "list<item: int64>");
    assert_string_equal(fx.schema->fields[17].name, "x");
    s3l_converter_free(fx.conv);
    struct s3l_converter_options opt = {S3L_CONVERTER_OPTIONS_VERSION, true};
    assert_int_equal(s3l_converter_new(fx.schema, &opt, &fx.conv, &fx.err), 0);
    fx.sink.log[0] = 0;
    struct s3l_row_sink sink = {&rec_ops, &fx.sink};
    assert_int_equal(s3l_convert(fx.conv, &rec, &sink, &fx.err), 0);
    assert_string_equal(fx.sink.log, "begin int:1 null null null null null null null null null "
                                     "null null null null null null [ int:1 ] int:2 end");
    assert_int_equal(conv("{\"id\":1,\"gone\":null,\"e\":{}}"), 0);
    fx.sink.fail_at = 2;
    assert_int_equal(conv("{\"id\":1,\"name\":\"a\",\"price\":1}"), S3L_ETOO_LARGE);
    assert_string_equal(fx.sink.log, "begin int:1 bytes:a end!");
    assert_string_equal(fx.err.message, "sink: value too large");
    teardown_conv();
}

/* A struct (also a list's struct items) that gains a field is growth like a new column: reported
 * with stop_on_unknown, counted as ignored otherwise, never dropped silently. */
static void nested_unknown_keys(void **state)
{
    (void)state;
    const char *schema = "[{\"name\": \"s\", \"type\": \"struct<x: int64>\"},"
                         " {\"name\": \"l\", \"type\": \"list<item: struct<p: string>>\"}]";
    struct s3l_schema *s;
    struct s3l_error err = {0};
    assert_int_equal(s3l_schema_from_json(schema, strlen(schema), &s, &err), 0);
    struct s3l_converter *ign, *stop;
    struct s3l_converter_options opt = {S3L_CONVERTER_OPTIONS_VERSION, true};
    assert_int_equal(s3l_converter_new(s, NULL, &ign, &err), 0);
    assert_int_equal(s3l_converter_new(s, &opt, &stop, &err), 0);
    struct s3l__jscan sc;
    s3l__jscan_init(&sc, 0);
    /* z is new in s, q in the second item of l; "" can never be a field; w only holds a null. */
    const char *j = "{\"s\":{\"x\":1,\"z\":true,\"\":3,\"w\":null},"
                    "\"l\":[{\"p\":\"a\"},{\"p\":\"b\",\"q\":[2.5]}]}";
    assert_int_equal(s3l__json_scan(&sc, j, strlen(j)), 0);
    struct s3l_record rec = {sc.tape, sc.n, 3, 0, 0, j, strlen(j), "n.json"};
    struct rec_sink rs = {0};
    struct s3l_row_sink sink = {&rec_ops, &rs};
    assert_int_equal(s3l_convert(ign, &rec, &sink, &err), 0);
    assert_string_equal(rs.log, "begin { int:1 } [ { bytes:a } { bytes:b } ] end");
    assert_int_equal(s3l_converter_ignored(ign), 3); /* z, "" and q; not w */
    /* Duplicate keys: the last wins (as in jansson); each earlier value with a value is counted
     * (the first "s" whole, and the nested x:1), an earlier null is not. */
    const char *dup = "{\"s\":{\"x\":7},\"l\":null,\"s\":{\"x\":1,\"x\":2},\"l\":[]}";
    struct s3l__jscan sd;
    s3l__jscan_init(&sd, 0);
    assert_int_equal(s3l__json_scan(&sd, dup, strlen(dup)), 0);
    struct s3l_record drec = {sd.tape, sd.n, 4, 0, 0, dup, strlen(dup), "n.json"};
    assert_int_equal(s3l_convert(ign, &drec, &sink, &err), 0);
    assert_string_equal(rs.log, "begin { int:1 } [ { bytes:a } { bytes:b } ] end"
                                "begin { int:2 } [ ] end");
    assert_int_equal(s3l_converter_ignored(ign), 5);
    s3l__jscan_cleanup(&sd);
    rs.log[0] = 0;
    assert_int_equal(s3l_convert(stop, &rec, &sink, &err), S3L_CONVERT_NEW_COLUMNS);
    assert_string_equal(rs.log, "begin { int:1 } [ { bytes:a } { bytes:b } ] abort");
    assert_int_equal(s3l_converter_n_unknown(stop), 2);
    assert_memory_equal(sc.tape[s3l_converter_unknown(stop, 0)].str, "z", 1);
    assert_memory_equal(sc.tape[s3l_converter_unknown(stop, 1)].str, "q", 1);
    assert_string_equal(s3l_converter_unknown_path(stop, 0), "s.z");
    assert_string_equal(s3l_converter_unknown_path(stop, 1), "l[1].q");
    assert_null(s3l_converter_unknown_path(stop, 2));
    assert_null(s3l_converter_unknown_path(ign, 0));
    /* Nothing counted yet: the row is not written, the caller converts it again once grown. */
    assert_int_equal(s3l_converter_ignored(stop), 0);
    /* s3l_infer_grow: a grown copy, the fields appended where they belong. */
    struct s3l_schema *g = NULL;
    assert_int_equal(s3l_infer_grow(s, &rec, NULL, &g, &err), 0);
    assert_non_null(g);
    char tn[128];
    s3l__type_format(&g->fields[0].type, tn, sizeof(tn));
    assert_string_equal(tn, "struct<x: int64, z: bool>");
    s3l__type_format(&g->fields[1].type, tn, sizeof(tn));
    assert_string_equal(tn, "list<item: struct<p: string, q: list<item: double>>>");
    /* The grown schema has everything: nothing new, and the row converts in full. */
    struct s3l_schema *g2 = (struct s3l_schema *)1;
    assert_int_equal(s3l_infer_grow(g, &rec, NULL, &g2, &err), 0);
    assert_null(g2);
    struct s3l_converter *c2;
    assert_int_equal(s3l_converter_new(g, &opt, &c2, &err), 0);
    rs.log[0] = 0;
    assert_int_equal(s3l_convert(c2, &rec, &sink, &err), 0);
    assert_string_equal(rs.log, "begin { int:1 bool:1 } [ { bytes:a null } { bytes:b [ dbl:2.5 ] "
                                "} ] end");
    assert_int_equal(s3l_converter_ignored(c2), 1); /* the "" key, with the row written */
    s3l_converter_free(c2);
    /* s3l_converter_grow grows the caller's schema in place the same way. */
    size_t added = 0;
    assert_int_equal(s3l_converter_grow(stop, &rec, NULL, s, &added, &err), 0);
    assert_int_equal(added, 2);
    assert_true(s3l__type_equal(&s->fields[0].type, &g->fields[0].type));
    assert_true(s3l__type_equal(&s->fields[1].type, &g->fields[1].type));
    s3l_schema_free(g);
    s3l__jscan_cleanup(&sc);
    s3l_converter_free(ign);
    s3l_converter_free(stop);
    s3l_schema_free(s);
}

static void csv_text_values(void **state)
{
    (void)state;
    const char *schema = "[{\"name\": \"a\", \"type\": \"int32\"}, {\"name\": \"b\", \"type\": "
                         "\"string\"}, {\"name\": \"c\", \"type\": \"json\"}, {\"name\": \"m\", "
                         "\"type\": \"map<int32, bool>\"}]";
    struct s3l_schema *s;
    struct s3l_error err = {0};
    assert_int_equal(s3l_schema_from_json(schema, strlen(schema), &s, &err), 0);
    struct s3l_converter *c;
    assert_int_equal(s3l_converter_new(s, NULL, &c, &err), 0);
    int p[2];
    assert_int_equal(pipe(p), 0);
    const char *csv = "a,b,c\n12,,\"{\"\"k\"\": [1]}\"\n1.5,x,\n7,y,{bad\n";
    assert_int_equal(write(p[1], csv, strlen(csv)), (ssize_t)strlen(csv));
    close(p[1]);
    struct s3l_reader_options ro = {.version = S3L_READER_OPTIONS_VERSION,
                                    .format = S3L_INPUT_CSV, .name = "in.csv"};
    struct s3l_reader *r;
    assert_int_equal(s3l_reader_open(p[0], &ro, &r, &err), 0);
    struct s3l_record rec;
    struct rec_sink rs = {0};
    struct s3l_row_sink sink = {&rec_ops, &rs};
    assert_int_equal(s3l_reader_next(r, &rec, &err), 1);
    assert_int_equal(s3l_convert(c, &rec, &sink, &err), 0);
    assert_string_equal(rs.log, "begin int:12 null bytes:{\"k\": [1]} null end");
    rs.log[0] = 0;
    assert_int_equal(s3l_reader_next(r, &rec, &err), 1);
    assert_int_equal(s3l_convert(c, &rec, &sink, &err), S3L_EINVALID_INPUT);
    assert_string_equal(err.message,
                        "in.csv line 3, column \"a\": expected int32, got \"1.5\" (a fraction)");
    s3l_error_clear(&err);
    assert_int_equal(s3l_reader_next(r, &rec, &err), 1);
    assert_int_equal(s3l_convert(c, &rec, &sink, &err), S3L_EINVALID_INPUT);
    assert_string_equal(err.message, "in.csv line 4, column \"c\": expected JSON text, got "
                                     "\"{bad\" (a member name in double quotes)");
    s3l_reader_free(r);
    close(p[0]);
    s3l_converter_free(c);
    s3l_schema_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_type_and_lossless_coercions),
        cmocka_unit_test(lossy_values_are_errors),
        cmocka_unit_test(unknown_keys_and_sink_failures),
        cmocka_unit_test(nested_unknown_keys),
        cmocka_unit_test(csv_text_values),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
