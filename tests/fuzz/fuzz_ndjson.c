/*
 * Fuzz target: the JSON scanner against jansson (an independent RFC 8259 parser from Debian) on
 * the same bytes: both accept or both reject, and accepted documents hold equal values (objects
 * compared with jansson's last-duplicate-wins rule). Known, documented differences are skipped:
 * jansson refuses integers outside long long and reals that overflow a double (we keep the text),
 * nests 2048 deep where we stop at 1000, refuses "\u0000" in member names, and reads on past a
 * raw NUL byte, which we always refuse. Then the same bytes go through the NDJSON and JSON-array
 * readers with tiny blocks and record limits, checking offsets and line numbers. An object must
 * also convert without error under the schema inferred from it (and bring no new key to it, at
 * any depth), and that schema must read back from its JSON form unchanged. NDJSON read by spans
 * of lines must give what it gives record by record.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "input/json/json.h"
#include "schema/schema_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool same(const struct s3l_value *t, size_t i, const json_t *j)
{
    const struct s3l_value *v = &t[i];
    switch (v->kind) {
    case S3L_VALUE_NULL: return json_is_null(j);
    case S3L_VALUE_TRUE: return json_is_true(j);
    case S3L_VALUE_FALSE: return json_is_false(j);
    case S3L_VALUE_NUMBER: {
        char tmp[512];
        if (v->len >= sizeof(tmp))
            return json_is_number(j); /* long numbers: only the kind is compared */
        memcpy(tmp, v->str, v->len);
        tmp[v->len] = 0;
        if (v->flags & S3L_VALUE_INT)
            return json_is_integer(j) && json_integer_value(j) == strtoll(tmp, NULL, 10);
        return json_is_real(j) && json_real_value(j) == strtod(tmp, NULL);
    }
    case S3L_VALUE_STRING:
        return json_is_string(j) && json_string_length(j) == v->len &&
               memcmp(json_string_value(j), v->str, v->len) == 0;
    case S3L_VALUE_ARRAY: {
        if (!json_is_array(j) || json_array_size(j) != v->len)
            return false;
        size_t k = i + 1;
        for (uint32_t e = 0; e < v->len; e++, k = t[k].end)
            if (!same(t, k, json_array_get(j, e)))
                return false;
        return true;
    }
    default: {
        if (!json_is_object(j))
            return false;
        size_t distinct = 0, k = i + 1;
        for (uint32_t m = 0; m < v->len; m++, k = t[k + 1].end) {
            /* Is this the last member with this key? */
            bool last = true;
            for (size_t q = t[k + 1].end, r = m + 1; r < v->len; r++, q = t[q + 1].end)
                if (t[q].len == t[k].len && memcmp(t[q].str, t[k].str, t[k].len) == 0)
                    last = false;
            if (!last)
                continue;
            distinct++;
            const json_t *jv = json_object_getn(j, t[k].str, t[k].len);
            if (!jv || !same(t, k + 1, jv))
                return false;
        }
        return distinct == json_object_size(j);
    }
    }
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

/* A schema inferred from a record must accept that record (inference never guesses a type the
 * value does not fit), in both the struct/list and the json-text modes. */
static void self_convert(const struct s3l_value *tape, size_t n, const uint8_t *data, size_t size)
{
    for (int as_json = 0; as_json < 2; as_json++) {
        struct s3l_infer_options io = {.version = S3L_INFER_OPTIONS_VERSION,
                                       .nested_as_json = as_json};
        struct s3l_record rec = {tape, n, 1, 0, size, (const char *)data, size, "fuzz"};
        struct s3l_infer *inf = s3l_infer_new(&io);
        struct s3l_schema *schema = NULL;
        struct s3l_converter *conv = NULL;
        struct s3l_error err = {0};
        /* stop_on_unknown: the schema inferred from the record has every key of it, at every
         * depth, so the record never asks to grow it (neither does s3l_infer_grow). */
        struct s3l_converter_options co = {S3L_CONVERTER_OPTIONS_VERSION, true};
        if (!inf || s3l_infer_add(inf, &rec) != 0 || s3l_infer_schema(inf, &schema) != 0 ||
            s3l_converter_new(schema, &co, &conv, &err) != 0)
            abort();
        struct s3l_row_sink sink = {&nop_ops, NULL};
        if (s3l_convert(conv, &rec, &sink, &err) != 0) {
            fprintf(stderr, "self conversion failed: %s\n", err.message);
            abort();
        }
        struct s3l_schema *grown = NULL;
        if (s3l_infer_grow(schema, &rec, &io, &grown, &err) != 0 || grown) {
            fprintf(stderr, "the record grows the schema inferred from it\n");
            abort();
        }
        /* The inferred schema survives its JSON form (the schema record). */
        char *text;
        size_t len;
        struct s3l_schema *back = NULL;
        if (s3l_schema_to_json(schema, &text, &len) != 0)
            abort();
        if (s3l_schema_from_json(text, len, &back, &err) != 0) {
            fprintf(stderr, "inferred schema does not read back: %s\n%s\n", err.message, text);
            abort();
        }
        for (size_t i = 0; i < schema->n_fields; i++)
            if (back->n_fields != schema->n_fields ||
                strcmp(back->fields[i].name, schema->fields[i].name) != 0 ||
                !s3l__type_equal(&back->fields[i].type, &schema->fields[i].type))
                abort();
        s3l_schema_free(back);
        s3l_free(text);
        s3l_converter_free(conv);
        s3l_schema_free(schema);
        s3l_infer_free(inf);
    }
}

static void compare_with_jansson(const uint8_t *data, size_t size)
{
    struct s3l__jscan s;
    s3l__jscan_init(&s, 0);
    int rc = s3l__json_scan(&s, (const char *)data, size);
    json_error_t e;
    json_t *j = json_loadb((const char *)data, size, JSON_DECODE_ANY | JSON_ALLOW_NUL, &e);
    /* jansson's stream reader takes a raw NUL byte for the end of its chunk and reads on. */
    bool skip = memchr(data, 0, size) != NULL ||
                (rc && s.err_what && strstr(s.err_what, "nesting")) ||
                (!j && (strstr(e.text, "too big") || strstr(e.text, "overflow") ||
                        strstr(e.text, "maximum parsing depth") ||
                        strstr(e.text, "NUL byte in object key")));
    if (!skip) {
        if ((rc == 0) != (j != NULL)) {
            fprintf(stderr, "disagree: ours %d (%s at %zu), jansson %s\n", rc,
                    rc ? s.err_what : "ok", s.err_pos, j ? "ok" : e.text);
            abort();
        }
        if (rc == 0 && !same(s.tape, 0, j)) {
            fprintf(stderr, "values differ\n");
            abort();
        }
    }
    json_decref(j);
    if (rc == 0 && s.tape[0].kind == S3L_VALUE_OBJECT)
        self_convert(s.tape, s.n, data, size);
    s3l__jscan_cleanup(&s);
}

static void read_through(const uint8_t *data, size_t size, enum s3l_input_format fmt,
                         size_t block, size_t max)
{
    FILE *f = tmpfile();
    if (!f)
        abort();
    if (size && fwrite(data, 1, size, f) != size)
        abort();
    fflush(f);
    rewind(f);
    struct s3l_reader_options opt = {.version = S3L_READER_OPTIONS_VERSION, .format = fmt,
                                     .name = "fuzz", .block_bytes = block,
                                     .max_record_bytes = max};
    struct s3l_reader *r;
    struct s3l_error err = {0};
    if (s3l_reader_open(fileno(f), &opt, &r, &err) != 0)
        abort();
    uint64_t last_end = 0;
    for (int n = 0; n < 10000; n++) {
        struct s3l_record rec;
        s3l_error_clear(&err);
        int rc = s3l_reader_next(r, &rec, &err);
        if (rc == 0)
            break;
        if (rc < 0 && r->sticky)
            break;
        if (rc < 0 && (err.code != S3L_EINVALID_INPUT || strlen(err.message) == 0))
            abort();
        if (rec.end_offset > size || rec.offset > rec.end_offset || rec.end_offset < last_end)
            abort();
        if (rc == 1 && (rec.values[0].kind != S3L_VALUE_OBJECT ||
                        rec.values[0].end != rec.n_values))
            abort();
        last_end = rec.end_offset;
    }
    s3l_reader_free(r);
    fclose(f);
}

/* One record or error as text: line, offsets and raw bytes, or the error message. */
static void describe(struct s3l_buf *out, int rc, const struct s3l_record *rec,
                     const struct s3l_error *err)
{
    char head[160];
    if (rc < 0) {
        if (s3l_buf_append(out, err->message, strlen(err->message)) != 0 ||
            s3l_buf_append(out, "\n", 1) != 0)
            abort();
        return;
    }
    int n = snprintf(head, sizeof(head), "L%llu O%llu-%llu ", (unsigned long long)rec->line,
                     (unsigned long long)rec->offset, (unsigned long long)rec->end_offset);
    if (s3l_buf_append(out, head, (size_t)n) != 0 ||
        s3l_buf_append(out, rec->raw, rec->raw_len) != 0 || s3l_buf_append(out, "\n", 1) != 0)
        abort();
}

static struct s3l_reader *open_tmp(const uint8_t *data, size_t size, size_t block, size_t max,
                                   FILE **f)
{
    *f = tmpfile();
    if (!*f || (size && fwrite(data, 1, size, *f) != size))
        abort();
    fflush(*f);
    rewind(*f);
    struct s3l_reader_options opt = {.version = S3L_READER_OPTIONS_VERSION,
                                     .format = S3L_INPUT_NDJSON, .name = "fuzz",
                                     .block_bytes = block, .max_record_bytes = max};
    struct s3l_reader *r;
    struct s3l_error err = {0};
    if (s3l_reader_open(fileno(*f), &opt, &r, &err) != 0)
        abort();
    return r;
}

/*
 * NDJSON read by spans (s3l__reader_next_lines, and s3l__reader_next_raw where it answers
 * S3L__READER_ONE) gives the same lines, line numbers, offsets and errors as record by record, and
 * ends at the same offset and line.
 */
static void spans_match_records(const uint8_t *data, size_t size, size_t block, size_t max,
                                uint64_t max_rows, size_t max_bytes)
{
    struct s3l_buf a, b;
    s3l_buf_init(&a, 1u << 24);
    s3l_buf_init(&b, 1u << 24);
    FILE *fa, *fb;
    struct s3l_reader *ra = open_tmp(data, size, block, max, &fa);
    struct s3l_reader *rb = open_tmp(data, size, block, max, &fb);
    struct s3l_error err = {0};
    struct s3l_record rec;
    for (int n = 0; n < 10000; n++) {
        s3l_error_clear(&err);
        int rc = s3l__reader_next_raw(ra, &rec, &err);
        if (rc == 0 || (rc < 0 && ra->sticky))
            break;
        describe(&a, rc, &rec, &err);
    }
    for (int n = 0; n < 10000; n++) {
        struct s3l__lines sp;
        s3l_error_clear(&err);
        int rc = s3l__reader_next_lines(rb, max_rows, max_bytes, &sp, &err);
        if (rc == 0)
            break;
        if (rc == 1) {
            uint64_t rows = 0;
            while (s3l__lines_next(&sp, &rec) == 1) {
                describe(&b, 1, &rec, &err);
                rows++;
            }
            if (rows != sp.rows || rows == 0 || rows > max_rows ||
                sp.offset != s3l_reader_offset(rb) || sp.line != s3l_reader_line(rb))
                abort();
            continue;
        }
        if (rc != S3L__READER_ONE)
            abort();
        rc = s3l__reader_next_raw(rb, &rec, &err);
        if (rc == 0 || (rc < 0 && rb->sticky))
            break;
        describe(&b, rc, &rec, &err);
    }
    if (a.len != b.len || (a.len && memcmp(a.ptr, b.ptr, a.len) != 0) ||
        s3l_reader_offset(ra) != s3l_reader_offset(rb) ||
        s3l_reader_line(ra) != s3l_reader_line(rb))
        abort();
    s3l_reader_free(ra);
    s3l_reader_free(rb);
    fclose(fa);
    fclose(fb);
    s3l_buf_free(&a);
    s3l_buf_free(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    spans_match_records(data, size, 3, 64, 2, 10);
    spans_match_records(data, size, 1 << 16, 1 << 20, UINT64_MAX, 1 << 18);
    compare_with_jansson(data, size);
    read_through(data, size, S3L_INPUT_NDJSON, 3, 64);
    read_through(data, size, S3L_INPUT_NDJSON, 1 << 16, 1 << 20);
    read_through(data, size, S3L_INPUT_JSON, 5, 128);
    return 0;
}
