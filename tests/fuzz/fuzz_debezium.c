/*
 * Fuzz target: the debezium format (src/lib/input/debezium). The bytes are an input file of
 * change events, read with tiny blocks and record limits chosen by the first byte. Checks:
 *  - the reader never crashes, and every error has a code and a message naming the input;
 *  - a row it returns is a well-formed tape (every entry's end inside its parent's, the root an
 *    object covering the whole tape) whose last three members are _openetl_op (insert, update or
 *    delete), _openetl_seq (an integer) and _openetl_id (a lower-case 8-4-4-4-12 UUID);
 *  - jansson (an independent JSON parser) reads the same line as an event whose "op" (or its
 *    payload's) is the one the row names: c and r insert, u update, d delete;
 *  - the row converts without error under the schema inferred from it, and under the columns
 *    the reader declares (s3l_reader_schema_hint): its own columns always fit their types;
 *  - reading the input again gives the same ids in the same order (an id depends on the event
 *    only), and the skipped tombstones are counted the same.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "s3l/input.h"
#include "schema/schema_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int nop(void *ctx) { (void)ctx; return 0; }
static int nop_bool(void *ctx, bool v) { (void)ctx; (void)v; return 0; }
static int nop_int(void *ctx, int64_t v) { (void)ctx; (void)v; return 0; }
static int nop_uint(void *ctx, uint64_t v) { (void)ctx; (void)v; return 0; }
static int nop_double(void *ctx, double v) { (void)ctx; (void)v; return 0; }
static int nop_bytes(void *ctx, const void *p, size_t n) { (void)ctx; (void)p; (void)n; return 0; }
static int nop_dec(void *ctx, int64_t hi, uint64_t lo) { (void)ctx; (void)hi; (void)lo; return 0; }
static int nop_iv(void *ctx, int32_t m, int32_t d, int64_t n)
{
    (void)ctx; (void)m; (void)d; (void)n;
    return 0;
}
static int nop_end(void *ctx, struct s3l_error *err) { (void)ctx; (void)err; return 0; }
static void nop_abort(void *ctx) { (void)ctx; }

static const struct s3l_row_sink_ops nop_ops = {
    .row_begin = nop, .put_null = nop, .put_bool = nop_bool, .put_int = nop_int,
    .put_uint = nop_uint, .put_double = nop_double, .put_bytes = nop_bytes,
    .put_decimal = nop_dec, .put_interval = nop_iv, .begin_list = nop, .end_list = nop,
    .begin_struct = nop, .end_struct = nop, .begin_map = nop, .end_map = nop,
    .row_end = nop_end, .row_abort = nop_abort,
};

static bool key_is(const struct s3l_value *k, const char *s)
{
    return k->kind == S3L_VALUE_STRING && k->len == strlen(s) && memcmp(k->str, s, k->len) == 0;
}

static bool uuid_text(const struct s3l_value *v)
{
    if (v->kind != S3L_VALUE_STRING || v->len != 36)
        return false;
    for (size_t i = 0; i < 36; i++) {
        char c = v->str[i];
        bool dash = i == 8 || i == 13 || i == 18 || i == 23;
        if (dash ? c != '-' : !((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
            return false;
    }
    return true;
}

/* The tape is well formed; returns the index of the key of the last-but-two member. */
static size_t check_tape(const struct s3l_record *rec)
{
    const struct s3l_value *v = rec->values;
    if (!v || rec->n_values < 7 || v[0].kind != S3L_VALUE_OBJECT || v[0].end != rec->n_values)
        abort();
    for (size_t i = 0; i < rec->n_values; i++)
        if (v[i].end <= i || v[i].end > rec->n_values)
            abort();
    size_t keys[3] = {0}, m = 0;
    for (size_t i = 1; i < v[0].end; i = v[i + 1].end, m++) {
        if (v[i].kind != S3L_VALUE_STRING || i + 1 >= v[0].end || v[i + 1].end > v[0].end)
            abort();
        keys[0] = keys[1], keys[1] = keys[2], keys[2] = i;
    }
    if (m != v[0].len || m < 3 || !key_is(&v[keys[0]], "_openetl_op") ||
        !key_is(&v[keys[1]], "_openetl_seq") || !key_is(&v[keys[2]], "_openetl_id"))
        abort();
    const struct s3l_value *seq = &v[keys[1] + 1];
    if (seq->kind != S3L_VALUE_NUMBER || !(seq->flags & S3L_VALUE_INT) || !uuid_text(&v[keys[2] + 1]))
        abort();
    return keys[0];
}

/* jansson's reading of the line names the op the row does (lines with duplicate keys, where
 * jansson would keep the last and we the first, say nothing). */
static void check_op(const struct s3l_record *rec, const struct s3l_value *op)
{
    json_error_t e;
    json_t *j = json_loadb(rec->raw, rec->raw_len, JSON_REJECT_DUPLICATES, &e);
    if (!j)
        return; /* a line only we accept (a NUL in a key, a duplicate key) says nothing here */
    json_t *env = json_object_get(j, "op") ? j : json_object_get(j, "payload");
    const char *o = json_string_value(json_object_get(env, "op"));
    const char *want = !o ? NULL
                       : !strcmp(o, "c") || !strcmp(o, "r") ? "insert"
                       : !strcmp(o, "u")                    ? "update"
                       : !strcmp(o, "d")                    ? "delete"
                                                            : NULL;
    if (!want || op->len != strlen(want) || memcmp(op->str, want, op->len) != 0) {
        fprintf(stderr, "jansson reads op %s, the row says %.*s\n", o ? o : "(none)",
                (int)op->len, op->str);
        abort();
    }
    json_decref(j);
}

static void convert_under(const struct s3l_schema *schema, const struct s3l_record *rec,
                          bool must)
{
    struct s3l_converter *conv = NULL;
    struct s3l_error err = {0};
    if (s3l_converter_new(schema, NULL, &conv, &err) != 0)
        abort();
    struct s3l_row_sink sink = {&nop_ops, NULL};
    int rc = s3l_convert(conv, rec, &sink, &err);
    if (rc < 0 && (must || err.code == 0 || !err.message[0])) {
        fprintf(stderr, "conversion failed: %s\n", err.message);
        abort();
    }
    s3l_converter_free(conv);
}

static void self_convert(const struct s3l_reader *r, const struct s3l_record *rec)
{
    struct s3l_infer *inf = s3l_infer_new(NULL);
    struct s3l_schema *schema = NULL, *hint = NULL;
    if (!inf || s3l_infer_add(inf, rec) != 0 || s3l_infer_schema(inf, &schema) != 0 ||
        s3l_reader_schema_hint(r, &hint) != 0 || !hint)
        abort();
    convert_under(schema, rec, true);
    /* The declared columns: the reader's own three always fit; the table's may not (a value
     * past a Decimal's precision), but then with a message. */
    struct s3l_schema *own = s3l_schema_new();
    for (size_t i = 0; own && i < hint->n_fields; i++)
        if (strncmp(hint->fields[i].name, "_openetl_", 9) == 0 &&
            s3l__schema_add_field(own, &hint->fields[i], NULL) != 0)
            abort();
    if (!own || own->n_fields != 3)
        abort();
    convert_under(own, rec, true);
    convert_under(hint, rec, false);
    s3l_schema_free(own);
    s3l_schema_free(hint);
    s3l_schema_free(schema);
    s3l_infer_free(inf);
}

/* Reads the whole input; appends every row's id to ids (36 bytes each). */
static uint64_t read_all(FILE *f, size_t block, size_t max, char *ids, size_t *n_ids, bool deep)
{
    rewind(f);
    struct s3l_reader_options opt = {.version = S3L_READER_OPTIONS_VERSION,
                                     .format = S3L_INPUT_DEBEZIUM, .name = "fuzz",
                                     .block_bytes = block, .max_record_bytes = max};
    struct s3l_reader *r;
    struct s3l_error err = {0};
    if (s3l_reader_open(fileno(f), &opt, &r, &err) != 0)
        abort();
    for (int guard = 0; guard < 100000; guard++) {
        struct s3l_record rec;
        struct s3l_error e = {0};
        int rc = s3l_reader_next(r, &rec, &e);
        if (rc == 0)
            break;
        if (rc < 0) {
            if (e.code != rc || !strstr(e.message, "fuzz"))
                abort(); /* an error without its code, or not naming the input */
            if (s3l_reader_broken(r) || rc == S3L_ENOMEM || rc == S3L_EIO)
                break;
            continue;
        }
        size_t op_key = check_tape(&rec);
        const struct s3l_value *id = &rec.values[rec.n_values - 1];
        if (*n_ids < 4096) {
            memcpy(ids + 36 * *n_ids, id->str, 36);
            ++*n_ids;
        }
        if (deep) {
            check_op(&rec, &rec.values[op_key + 1]);
            self_convert(r, &rec);
        }
    }
    uint64_t skipped = s3l_reader_skipped(r);
    s3l_reader_free(r);
    return skipped;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    static const size_t blocks[] = {1, 3, 64, 1u << 20};
    static const size_t maxes[] = {16, 200, 4096, 1u << 20};
    size_t block = blocks[data[0] & 3], max = maxes[(data[0] >> 2) & 3];
    FILE *f = tmpfile();
    if (!f || (size > 1 && fwrite(data + 1, 1, size - 1, f) != size - 1) || fflush(f) != 0)
        abort();
    static char a[4096 * 36], b[4096 * 36];
    size_t na = 0, nb = 0;
    uint64_t sa = read_all(f, block, max, a, &na, true);
    uint64_t sb = read_all(f, 1u << 20, max, b, &nb, false);
    if (na != nb || sa != sb || memcmp(a, b, 36 * na) != 0)
        abort(); /* the same events read again (in other blocks) give other ids or counts */
    fclose(f);
    return 0;
}
