/*
 * pq_write: a test helper that writes a Parquet file with the library's writer from a JSON
 * description, so the Node tests can read it back with independent readers.
 *
 * Usage: pq_write IN.json OUT.parquet. IN.json:
 *   {"schema": [FIELD...], "rows": [[VALUE...]...], "options": {...}}
 *   FIELD  = {"name": s, "type": TYPE, "nullable": bool (default true)}
 *   TYPE   = {"id": "int8".."uint64" | "bool" | "float16" | "float32" | "float64" | "utf8" |
 *             "binary" | "json" | "uuid" | "date32" | "interval",
 *             "fixed" + "width", "time32"/"time64"/"timestamp" + "unit" (s|ms|us|ns) [+ "tz"],
 *             "decimal" + "precision" + "scale", "list" + "item": FIELD,
 *             "struct" + "fields": [FIELD...], "map" + "key": TYPE + "value": FIELD}
 *   VALUE is directed by the type: null; true/false; integers; numbers or "NaN", "Infinity",
 *   "-Infinity", "-0"; strings; {"hex": "..."} for bytes; {"repeat": s, "n": k} for s repeated k
 *   times; decimals as a string of the unscaled integer; uint64 also as a decimal string;
 *   intervals as [months, days, nanos]; lists as arrays; structs as objects; maps as [[k, v]...].
 *   Raw calls for bad-input tests: {"$raw": "int"|"double"|"string"|"list"|"struct", "v": ...}.
 *   options: codec, level, page_version, dictionary, dictionary_page_limit, page_size,
 *   row_group_rows, row_group_bytes, statistics, page_index, statistics_max_len.
 * Prints one line per rejected row: "reject ROW: MESSAGE", then "rows N".
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "s3l/parquet.h"
#include "schema/schema_int.h"

static void die(const char *msg, const char *detail)
{
    fprintf(stderr, "pq_write: %s%s%s\n", msg, detail ? ": " : "", detail ? detail : "");
    exit(2);
}

static enum s3l_time_unit unit_of(json_t *t)
{
    const char *u = json_string_value(json_object_get(t, "unit"));
    if (!u || !strcmp(u, "s"))
        return S3L_UNIT_SECOND;
    if (!strcmp(u, "ms"))
        return S3L_UNIT_MILLI;
    if (!strcmp(u, "us"))
        return S3L_UNIT_MICRO;
    return S3L_UNIT_NANO;
}

static void field_from_json(json_t *j, struct s3l_field *f);

static void type_from_json(json_t *t, struct s3l_type *ty)
{
    static const struct {
        const char *name;
        enum s3l_type_id id;
    } simple[] = {
        {"bool", S3L_TYPE_BOOL},
        {"int8", S3L_TYPE_INT8},
        {"int16", S3L_TYPE_INT16},
        {"int32", S3L_TYPE_INT32},
        {"int64", S3L_TYPE_INT64},
        {"uint8", S3L_TYPE_UINT8},
        {"uint16", S3L_TYPE_UINT16},
        {"uint32", S3L_TYPE_UINT32},
        {"uint64", S3L_TYPE_UINT64},
        {"float16", S3L_TYPE_FLOAT16},
        {"float32", S3L_TYPE_FLOAT32},
        {"float64", S3L_TYPE_FLOAT64},
        {"utf8", S3L_TYPE_UTF8},
        {"binary", S3L_TYPE_BINARY},
        {"json", S3L_TYPE_JSON},
        {"uuid", S3L_TYPE_UUID},
        {"date32", S3L_TYPE_DATE32},
        {"interval", S3L_TYPE_INTERVAL},
        {"fixed", S3L_TYPE_FIXED_SIZE_BINARY},
        {"time32", S3L_TYPE_TIME32},
        {"time64", S3L_TYPE_TIME64},
        {"timestamp", S3L_TYPE_TIMESTAMP},
        {"decimal", S3L_TYPE_DECIMAL128},
        {"list", S3L_TYPE_LIST},
        {"struct", S3L_TYPE_STRUCT},
        {"map", S3L_TYPE_MAP},
    };
    memset(ty, 0, sizeof(*ty));
    const char *id = json_string_value(json_object_get(t, "id"));
    if (!id)
        die("type without id", NULL);
    for (size_t i = 0; i < sizeof(simple) / sizeof(simple[0]); i++)
        if (!strcmp(id, simple[i].name))
            ty->id = simple[i].id;
    if (!ty->id)
        die("unknown type", id);
    ty->unit = unit_of(t);
    const char *tz = json_string_value(json_object_get(t, "tz"));
    ty->tz = tz ? strdup(tz) : NULL;
    ty->byte_width = (int32_t)json_integer_value(json_object_get(t, "width"));
    if (ty->id == S3L_TYPE_UUID)
        ty->byte_width = 16;
    ty->precision = (int32_t)json_integer_value(json_object_get(t, "precision"));
    ty->scale = (int32_t)json_integer_value(json_object_get(t, "scale"));
    if (ty->id == S3L_TYPE_LIST) {
        ty->n_children = 1;
        ty->children = calloc(1, sizeof(struct s3l_field));
        field_from_json(json_object_get(t, "item"), &ty->children[0]);
    } else if (ty->id == S3L_TYPE_STRUCT) {
        json_t *fs = json_object_get(t, "fields");
        ty->n_children = json_array_size(fs);
        ty->children = calloc(ty->n_children ? ty->n_children : 1, sizeof(struct s3l_field));
        for (size_t i = 0; i < ty->n_children; i++)
            field_from_json(json_array_get(fs, i), &ty->children[i]);
    } else if (ty->id == S3L_TYPE_MAP) {
        ty->n_children = 2;
        ty->children = calloc(2, sizeof(struct s3l_field));
        ty->children[0].name = strdup("key");
        type_from_json(json_object_get(t, "key"), &ty->children[0].type);
        field_from_json(json_object_get(t, "value"), &ty->children[1]);
    }
}

static void field_from_json(json_t *j, struct s3l_field *f)
{
    if (!json_is_object(j))
        die("field is not an object", NULL);
    const char *name = json_string_value(json_object_get(j, "name"));
    f->name = strdup(name ? name : "item");
    json_t *nl = json_object_get(j, "nullable");
    f->nullable = nl ? json_is_true(nl) : true;
    type_from_json(json_object_get(j, "type"), &f->type);
}

static void free_type(struct s3l_type *t)
{
    for (size_t i = 0; i < t->n_children; i++) {
        free(t->children[i].name);
        free_type(&t->children[i].type);
    }
    free(t->children);
    free(t->tz);
}

static uint8_t *hex_decode(const char *s, size_t *n)
{
    size_t len = strlen(s) / 2;
    uint8_t *p = malloc(len + 1);
    for (size_t i = 0; i < len; i++) {
        unsigned v;
        sscanf(s + 2 * i, "%2x", &v);
        p[i] = (uint8_t)v;
    }
    *n = len;
    return p;
}

/* A string, {"hex": ...} or {"repeat": s, "n": k} as bytes (malloc'd). */
static uint8_t *bytes_of(json_t *v, size_t *n)
{
    if (json_is_string(v)) {
        *n = json_string_length(v);
        uint8_t *p = malloc(*n + 1);
        memcpy(p, json_string_value(v), *n);
        return p;
    }
    if (json_object_get(v, "hex"))
        return hex_decode(json_string_value(json_object_get(v, "hex")), n);
    const char *s = json_string_value(json_object_get(v, "repeat"));
    size_t k = (size_t)json_integer_value(json_object_get(v, "n"));
    size_t sl = s ? strlen(s) : 0;
    *n = sl * k;
    uint8_t *p = malloc(*n + 1);
    for (size_t i = 0; i < k; i++)
        memcpy(p + i * sl, s, sl);
    return p;
}

static double double_of(json_t *v)
{
    if (json_is_string(v)) {
        const char *s = json_string_value(v);
        if (!strcmp(s, "NaN"))
            return NAN;
        if (!strcmp(s, "Infinity"))
            return INFINITY;
        if (!strcmp(s, "-Infinity"))
            return -INFINITY;
        return strtod(s, NULL);
    }
    return json_number_value(v);
}

static int put_decimal_text(struct s3l_pq_writer *w, const char *s)
{
    __extension__ unsigned __int128 mag = 0;
    bool neg = *s == '-';
    for (s += neg; *s; s++)
        mag = mag * 10 + (unsigned)(*s - '0');
    __extension__ unsigned __int128 u = neg ? 0 - mag : mag;
    return s3l_pq_put_decimal(w, (int64_t)(uint64_t)(u >> 64), (uint64_t)u);
}

static int put_raw(struct s3l_pq_writer *w, json_t *v)
{
    const char *k = json_string_value(json_object_get(v, "$raw"));
    json_t *x = json_object_get(v, "v");
    if (!strcmp(k, "int"))
        return s3l_pq_put_int(w, json_integer_value(x));
    if (!strcmp(k, "double"))
        return s3l_pq_put_double(w, double_of(x));
    if (!strcmp(k, "list"))
        return s3l_pq_begin_list(w);
    if (!strcmp(k, "struct"))
        return s3l_pq_begin_struct(w);
    size_t n;
    uint8_t *p = bytes_of(x, &n);
    int rc = s3l_pq_put_bytes(w, p, n);
    free(p);
    return rc;
}

static int put_value(struct s3l_pq_writer *w, const struct s3l_type *t, json_t *v)
{
    if (json_is_null(v))
        return s3l_pq_put_null(w);
    if (json_is_object(v) && json_object_get(v, "$raw"))
        return put_raw(w, v);
    int rc = 0;
    switch (t->id) {
    case S3L_TYPE_BOOL:
        return s3l_pq_put_bool(w, json_is_true(v));
    case S3L_TYPE_FLOAT16:
    case S3L_TYPE_FLOAT32:
    case S3L_TYPE_FLOAT64:
        return s3l_pq_put_double(w, double_of(v));
    case S3L_TYPE_UINT64:
        if (json_is_string(v))
            return s3l_pq_put_uint(w, strtoull(json_string_value(v), NULL, 10));
        return s3l_pq_put_int(w, json_integer_value(v));
    case S3L_TYPE_UTF8:
    case S3L_TYPE_JSON:
    case S3L_TYPE_BINARY:
    case S3L_TYPE_FIXED_SIZE_BINARY:
    case S3L_TYPE_UUID: {
        size_t n;
        uint8_t *p = bytes_of(v, &n);
        rc = s3l_pq_put_bytes(w, p, n);
        free(p);
        return rc;
    }
    case S3L_TYPE_DECIMAL128:
        return put_decimal_text(w, json_string_value(v));
    case S3L_TYPE_INTERVAL: {
        json_t *ns = json_array_get(v, 2);
        return s3l_pq_put_interval(w, (int32_t)json_integer_value(json_array_get(v, 0)),
                                   (int32_t)json_integer_value(json_array_get(v, 1)),
                                   json_is_string(ns) ? strtoll(json_string_value(ns), NULL, 10)
                                                      : json_integer_value(ns));
    }
    case S3L_TYPE_LIST:
        rc = s3l_pq_begin_list(w);
        for (size_t i = 0; !rc && i < json_array_size(v); i++)
            rc = put_value(w, &t->children[0].type, json_array_get(v, i));
        return rc ? rc : s3l_pq_end_list(w);
    case S3L_TYPE_STRUCT:
        rc = s3l_pq_begin_struct(w);
        for (size_t i = 0; !rc && i < t->n_children; i++)
            rc = put_value(w, &t->children[i].type, json_object_get(v, t->children[i].name));
        return rc ? rc : s3l_pq_end_struct(w);
    case S3L_TYPE_MAP:
        rc = s3l_pq_begin_map(w);
        for (size_t i = 0; !rc && i < json_array_size(v); i++) {
            json_t *kv = json_array_get(v, i);
            rc = put_value(w, &t->children[0].type, json_array_get(kv, 0));
            if (!rc)
                rc = put_value(w, &t->children[1].type, json_array_get(kv, 1));
        }
        return rc ? rc : s3l_pq_end_map(w);
    default:
        if (json_is_string(v))
            return s3l_pq_put_int(w, strtoll(json_string_value(v), NULL, 10));
        return s3l_pq_put_int(w, json_integer_value(v));
    }
}

static int fd_write(void *ctx, const void *data, size_t len, struct s3l_error *err)
{
    int fd = *(int *)ctx;
    const char *p = data;
    while (len) {
        ssize_t k = write(fd, p, len);
        if (k < 0)
            return s3l_error_set_errno(err, S3L_EIO, errno, "write");
        p += k;
        len -= (size_t)k;
    }
    return 0;
}

static void read_options(json_t *o, struct s3l_pq_options *opts)
{
    s3l_pq_options_init(opts);
    if (!o)
        return;
    const char *codec = json_string_value(json_object_get(o, "codec"));
    if (codec && s3l_codec_parse(codec, &opts->codec, NULL) != 0)
        die("bad codec", codec);
    json_t *x;
    if ((x = json_object_get(o, "level")))
        opts->level = (int)json_integer_value(x);
    if ((x = json_object_get(o, "page_version")))
        opts->data_page_version = (int)json_integer_value(x);
    if ((x = json_object_get(o, "dictionary")))
        opts->dictionary = json_is_true(x);
    if ((x = json_object_get(o, "dictionary_page_limit")))
        opts->dictionary_page_limit = (size_t)json_integer_value(x);
    if ((x = json_object_get(o, "page_size")))
        opts->page_size = (size_t)json_integer_value(x);
    if ((x = json_object_get(o, "row_group_rows")))
        opts->row_group_rows = (uint64_t)json_integer_value(x);
    if ((x = json_object_get(o, "row_group_bytes")))
        opts->row_group_bytes = (size_t)json_integer_value(x);
    if ((x = json_object_get(o, "statistics")))
        opts->statistics = json_is_true(x);
    if ((x = json_object_get(o, "page_index")))
        opts->page_index = json_is_true(x);
    if ((x = json_object_get(o, "statistics_max_len")))
        opts->statistics_max_len = (size_t)json_integer_value(x);
}

int main(int argc, char **argv)
{
    if (argc != 3)
        die("usage: pq_write IN.json OUT.parquet", NULL);
    json_error_t jerr;
    json_t *doc = json_load_file(argv[1], JSON_DECODE_ANY, &jerr);
    if (!doc)
        die("cannot parse input", jerr.text);
    json_t *js = json_object_get(doc, "schema");
    struct s3l_schema schema = {json_array_size(js),
                                calloc(json_array_size(js) + 1, sizeof(struct s3l_field))};
    for (size_t i = 0; i < schema.n_fields; i++)
        field_from_json(json_array_get(js, i), &schema.fields[i]);
    struct s3l_pq_options opts;
    read_options(json_object_get(doc, "options"), &opts);
    int fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0)
        die("cannot open output", strerror(errno));
    struct s3l_pq_sink sink = {fd_write, &fd};
    struct s3l_pq_writer *w;
    struct s3l_error err = {0};
    if (s3l_pq_writer_new(&schema, &opts, sink, &w, &err) != 0)
        die("writer_new", err.message);
    json_t *rows = json_object_get(doc, "rows");
    for (size_t r = 0; r < json_array_size(rows); r++) {
        json_t *row = json_array_get(rows, r);
        s3l_pq_row_begin(w);
        for (size_t i = 0; i < schema.n_fields && i < json_array_size(row); i++)
            if (put_value(w, &schema.fields[i].type, json_array_get(row, i)) != 0)
                break;
        s3l_error_clear(&err);
        if (s3l_pq_row_end(w, &err) != 0) {
            if (err.code != S3L_EINVALID_INPUT)
                die("row_end", err.message);
            printf("reject %zu: %s\n", r, err.message);
        }
    }
    s3l_error_clear(&err);
    if (s3l_pq_writer_close(w, &err) != 0)
        die("close", err.message);
    printf("rows %llu\n", (unsigned long long)s3l_pq_writer_rows(w));
    s3l_pq_writer_free(w);
    close(fd);
    for (size_t i = 0; i < schema.n_fields; i++) {
        free(schema.fields[i].name);
        free_type(&schema.fields[i].type);
    }
    free(schema.fields);
    json_decref(doc);
    return 0;
}
