/*
 * Fuzz target for the Parquet writer: the input bytes choose options, a random schema (any type,
 * nested up to depth 3, nullable or not) and a stream of rows whose values are mostly right and
 * sometimes wrong (a null in a required column, a string for an int, an int out of range, a list
 * cut short). The file is written to memory. Checked: no crash or leak; every row is either
 * committed or rejected with S3L_EINVALID_INPUT; the writer's row count equals the committed rows;
 * the file is framed (PAR1 ... footer, u32 length, PAR1) and its size is bytes_written; the
 * library's footer reader reads it back with the same row count and codec.
 * Built with libFuzzer under clang (S3L_FUZZ), else replays tests/fuzz/corpus/pq_writer/.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "s3l/parquet.h"
#include "s3l/pq_footer.h"
#include "schema/schema_int.h"
#include "util/util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct in {
    const uint8_t *p;
    size_t n, i;
};

static uint8_t next(struct in *in)
{
    return in->i < in->n ? in->p[in->i++] : 0;
}

static int sink_write(void *ctx, const void *data, size_t len, struct s3l_error *err)
{
    int rc = s3l_buf_append(ctx, data, len);
    return rc ? s3l_error_set(err, rc, "memory sink") : 0;
}

static const enum s3l_type_id leaf_ids[] = {
    S3L_TYPE_BOOL,       S3L_TYPE_INT8,     S3L_TYPE_INT16,
    S3L_TYPE_INT32,      S3L_TYPE_INT64,    S3L_TYPE_UINT8,
    S3L_TYPE_UINT16,     S3L_TYPE_UINT32,   S3L_TYPE_UINT64,
    S3L_TYPE_FLOAT16,    S3L_TYPE_FLOAT32,  S3L_TYPE_FLOAT64,
    S3L_TYPE_UTF8,       S3L_TYPE_BINARY,   S3L_TYPE_FIXED_SIZE_BINARY,
    S3L_TYPE_UUID,       S3L_TYPE_JSON,     S3L_TYPE_DATE32,
    S3L_TYPE_TIME32,     S3L_TYPE_TIME64,   S3L_TYPE_TIMESTAMP,
    S3L_TYPE_DECIMAL128, S3L_TYPE_INTERVAL,
};

static char *names[] = {"a", "b", "c", "d", "e", "f", "g", "h"};

static void make_type(struct in *in, struct s3l_type *t, int depth)
{
    memset(t, 0, sizeof(*t));
    uint8_t k = next(in);
    int nested = depth < 3 ? k % 8 : 7;
    if (nested < 3) {
        t->id = nested == 0 ? S3L_TYPE_LIST : nested == 1 ? S3L_TYPE_STRUCT : S3L_TYPE_MAP;
        t->n_children = t->id == S3L_TYPE_LIST ? 1 : t->id == S3L_TYPE_MAP ? 2 : 1u + next(in) % 3;
        t->children = calloc(t->n_children, sizeof(struct s3l_field));
        for (size_t i = 0; i < t->n_children; i++) {
            t->children[i].name = names[i];
            t->children[i].nullable = next(in) & 1;
            make_type(in, &t->children[i].type, t->id == S3L_TYPE_MAP && i == 0 ? 3 : depth + 1);
        }
        return;
    }
    t->id = leaf_ids[next(in) % S3L_ARRAY_LEN(leaf_ids)];
    t->unit = (enum s3l_time_unit)(next(in) % 4);
    if (t->id == S3L_TYPE_TIME32)
        t->unit = t->unit % 2;
    if (t->id == S3L_TYPE_TIME64)
        t->unit = 2 + t->unit % 2;
    t->byte_width = t->id == S3L_TYPE_UUID ? 16 : 1 + next(in) % 20;
    t->precision = 1 + next(in) % 38;
    t->scale = t->precision ? next(in) % (t->precision + 1) : 0;
    if (t->id == S3L_TYPE_TIMESTAMP && (next(in) & 1))
        t->tz = "UTC";
}

static void free_type(struct s3l_type *t)
{
    for (size_t i = 0; i < t->n_children; i++)
        free_type(&t->children[i].type);
    free(t->children);
}

static void put_value(struct s3l_pq_writer *w, struct in *in, const struct s3l_type *t,
                      bool nullable)
{
    uint8_t k = next(in);
    if (k == 0xFF) { /* a wrong value kind */
        s3l_pq_put_bytes(w, "zz", 2);
        return;
    }
    if (k % 16 == 0 && (nullable || k == 0x10)) {
        s3l_pq_put_null(w);
        return;
    }
    uint8_t raw[24]; /* >= the widest fixed_size_binary (20) */
    for (size_t i = 0; i < sizeof(raw); i++)
        raw[i] = next(in);
    int64_t v;
    memcpy(&v, raw, 8);
    bool valid = k % 4 != 1; /* most values fit their column; one in four is random */
    if (valid)
        for (size_t i = 0; i < sizeof(raw); i++)
            raw[i] &= 0x7F; /* ASCII, so text is valid UTF-8 */
    switch (t->id) {
    case S3L_TYPE_LIST:
    case S3L_TYPE_MAP: {
        bool map = t->id == S3L_TYPE_MAP;
        map ? s3l_pq_begin_map(w) : s3l_pq_begin_list(w);
        int n = k % 4;
        for (int i = 0; i < n; i++) {
            put_value(w, in, &t->children[0].type, map ? false : t->children[0].nullable);
            if (map && k != 0x41) /* 0x41: a key without a value */
                put_value(w, in, &t->children[1].type, t->children[1].nullable);
        }
        map ? s3l_pq_end_map(w) : s3l_pq_end_list(w);
        return;
    }
    case S3L_TYPE_STRUCT:
        s3l_pq_begin_struct(w);
        for (size_t i = 0; i < t->n_children; i++)
            if (k != 0x42 || i == 0) /* 0x42: a struct cut short */
                put_value(w, in, &t->children[i].type, t->children[i].nullable);
        s3l_pq_end_struct(w);
        return;
    case S3L_TYPE_BOOL:
        s3l_pq_put_bool(w, v & 1);
        return;
    case S3L_TYPE_FLOAT16:
    case S3L_TYPE_FLOAT32:
    case S3L_TYPE_FLOAT64: {
        double d;
        memcpy(&d, raw, 8);
        s3l_pq_put_double(w, valid ? (double)(int8_t)raw[0] / 4 : d);
        return;
    }
    case S3L_TYPE_UTF8:
    case S3L_TYPE_JSON:
    case S3L_TYPE_BINARY:
        s3l_pq_put_bytes(w, raw, raw[0] % 17);
        return;
    case S3L_TYPE_FIXED_SIZE_BINARY:
    case S3L_TYPE_UUID:
        s3l_pq_put_bytes(w, raw, valid ? (size_t)t->byte_width : raw[0] % 17);
        return;
    case S3L_TYPE_DECIMAL128: {
        uint64_t lo;
        memcpy(&lo, raw + 8, 8);
        s3l_pq_put_decimal(w, valid ? 0 : v, valid ? (uint64_t)raw[0] % 10 : lo);
        return;
    }
    case S3L_TYPE_INTERVAL:
        s3l_pq_put_interval(w, (int32_t)v, (int32_t)(v >> 32), v);
        return;
    case S3L_TYPE_UINT64:
        s3l_pq_put_uint(w, valid ? raw[0] : (uint64_t)v);
        return;
    default:
        s3l_pq_put_int(w, valid ? (int64_t)raw[0] : v);
        return;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct in in = {data, size, 0};
    struct s3l_pq_options o;
    s3l_pq_options_init(&o);
    uint8_t opt = next(&in);
    static const enum s3l_codec codecs[] = {S3L_CODEC_NONE, S3L_CODEC_SNAPPY, S3L_CODEC_GZIP,
                                            S3L_CODEC_ZSTD};
    o.codec = codecs[opt % 4];
    o.data_page_version = (opt & 4) ? 2 : 1;
    o.dictionary = !(opt & 8);
    o.page_size = 16 + (size_t)next(&in) * 8;
    o.dictionary_page_limit = 64 + (size_t)next(&in) * 16;
    o.row_group_rows = 1 + next(&in) % 64;
    o.statistics_max_len = 1 + next(&in) % 70;
    o.page_index = !(opt & 16);
    o.statistics = !(opt & 32);
    struct s3l_field fields[8];
    struct s3l_schema schema = {1u + next(&in) % 8, fields};
    for (size_t i = 0; i < schema.n_fields; i++) {
        fields[i].name = names[i];
        fields[i].nullable = next(&in) & 1;
        fields[i].key = false;
        make_type(&in, &fields[i].type, 0);
    }
    struct s3l_buf out;
    s3l_buf_init(&out, (size_t)64 << 20);
    struct s3l_pq_sink sink = {sink_write, &out};
    struct s3l_pq_writer *w = NULL;
    struct s3l_error err = {0};
    if (s3l_pq_writer_new(&schema, &o, sink, &w, &err) == 0) {
        uint64_t committed = 0;
        for (int r = 0; r < 200 && in.i < in.n; r++) {
            s3l_pq_row_begin(w);
            for (size_t i = 0; i < schema.n_fields; i++)
                put_value(w, &in, &fields[i].type, fields[i].nullable);
            s3l_error_clear(&err);
            int rc = s3l_pq_row_end(w, &err);
            if (rc == 0)
                committed++;
            else if (rc != S3L_EINVALID_INPUT)
                abort();
        }
        if (s3l_pq_writer_rows(w) != committed)
            abort();
        s3l_error_clear(&err);
        if (s3l_pq_writer_close(w, &err) != 0)
            abort();
        uint32_t flen;
        if (out.len < 12 || memcmp(out.ptr, "PAR1", 4) || memcmp(out.ptr + out.len - 4, "PAR1", 4))
            abort();
        memcpy(&flen, out.ptr + out.len - 8, 4);
        if ((size_t)flen + 12 > out.len || s3l_pq_writer_bytes_written(w) != out.len)
            abort();
        /* The footer reader (src/lib/parquet/footer.c, written apart from the writer) agrees on
         * the row count, the row groups and the codec of every chunk. */
        struct s3l_pq_footer *ft = NULL;
        s3l_error_clear(&err);
        if (s3l_pq_footer_read_buf(out.ptr, out.len, NULL, &ft, &err) != 0)
            abort();
        int64_t sum = 0;
        for (size_t g = 0; g < ft->n_row_groups; g++) {
            sum += ft->row_groups[g].num_rows;
            for (size_t c = 0; c < ft->row_groups[g].n_columns; c++)
                if (ft->row_groups[g].columns[c].codec != (int32_t)o.codec)
                    abort();
        }
        if (ft->num_rows != (int64_t)committed || sum != (int64_t)committed)
            abort();
        s3l_pq_footer_free(ft);
    } else if (err.code != S3L_EINVALID_CONFIG) {
        abort();
    }
    s3l_pq_writer_free(w);
    s3l_buf_free(&out);
    for (size_t i = 0; i < schema.n_fields; i++)
        free_type(&fields[i].type);
    return 0;
}
