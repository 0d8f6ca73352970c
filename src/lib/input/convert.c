/*
 * The converter: one record (a tape) and a schema into row-sink calls (include/s3l/row.h). Top-
 * level keys are matched to columns through a hash of the column names; each value is coerced to
 * its column's type only when no information is lost (issue 3 item 5): a number keeps its text in
 * a string column, an integer goes into float and decimal columns, text holding a valid number,
 * bool, decimal, date, time, timestamp, UUID or interval goes into that column. Everything else is
 * an error naming the source, line, column path and what was expected.
 */
#include <stdio.h>
#include <string.h>

#include "input/convert.h"
#include "input/value.h"
#include "schema/schema_int.h"

typedef unsigned long long ull;

/* An internal marker: the sink refused a put; row_end gives its error. */
#define SINK_FAILED 1

static uint32_t fnv1a(const char *s, size_t n)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (uint8_t)s[i]) * 16777619u;
    return h;
}

int s3l__convert_lookup(const struct s3l_converter *c, const char *name, size_t len)
{
    size_t mask = c->n_slots - 1;
    for (size_t i = fnv1a(name, len) & mask;; i = (i + 1) & mask) {
        uint32_t s = c->slots[i];
        if (s == 0)
            return -1;
        if (c->name_len[s - 1] == len && memcmp(c->schema->fields[s - 1].name, name, len) == 0)
            return (int)(s - 1);
    }
}

static bool supported(const struct s3l_type *t)
{
    for (size_t i = 0; i < t->n_children; i++)
        if (!supported(&t->children[i].type))
            return false;
    return t->id >= S3L_TYPE_BOOL && t->id <= S3L_TYPE_MAP;
}

int s3l_converter_new(const struct s3l_schema *schema, const struct s3l_converter_options *opt,
                      struct s3l_converter **out, struct s3l_error *err)
{
    for (size_t i = 0; i < schema->n_fields; i++) {
        if (!supported(&schema->fields[i].type)) {
            char tn[128];
            return s3l_error_set(err, S3L_EUNSUPPORTED, "column \"%s\": type %s cannot be filled",
                                 schema->fields[i].name,
                                 s3l__type_name(&schema->fields[i].type, tn, sizeof(tn)));
        }
    }
    struct s3l_converter *c = s3l_calloc(1, sizeof(*c));
    if (!c)
        return s3l_error_set(err, S3L_ENOMEM, "out of memory for a converter");
    if (opt)
        c->opt = *opt;
    s3l_buf_init(&c->text, SIZE_MAX / 4);
    s3l_buf_init(&c->upaths, SIZE_MAX / 4);
    s3l__jscan_init(&c->scan, 0);
    s3l__jscan_init(&c->line_scan, 0);
    c->n_slots = 16;
    while (c->n_slots < 2 * schema->n_fields + 2)
        c->n_slots *= 2;
    c->schema = s3l_schema_copy(schema);
    c->slots = s3l_calloc(c->n_slots, sizeof(*c->slots));
    c->col_value = s3l_calloc(schema->n_fields + 1, sizeof(*c->col_value));
    c->name_len = s3l_calloc(schema->n_fields + 1, sizeof(*c->name_len));
    if (!c->schema || !c->slots || !c->col_value || !c->name_len) {
        s3l_converter_free(c);
        return s3l_error_set(err, S3L_ENOMEM, "out of memory for a converter");
    }
    for (size_t i = 0; i < schema->n_fields; i++) {
        const char *n = schema->fields[i].name;
        c->name_len[i] = strlen(n);
        size_t k = fnv1a(n, c->name_len[i]) & (c->n_slots - 1);
        while (c->slots[k])
            k = (k + 1) & (c->n_slots - 1);
        c->slots[k] = (uint32_t)(i + 1);
    }
    if (s3l__fast_init(c) != 0) {
        s3l_converter_free(c);
        return s3l_error_set(err, S3L_ENOMEM, "out of memory for a converter");
    }
    *out = c;
    return 0;
}

void s3l_converter_free(struct s3l_converter *c)
{
    if (!c)
        return;
    s3l__fast_batch_free(c); /* before the schema: it sizes the batch */
    s3l_schema_free(c->schema);
    s3l_free(c->slots);
    s3l_free(c->col_value);
    s3l_free(c->hint);
    s3l_free(c->name_len);
    s3l_free(c->unknown);
    s3l_free(c->upath);
    s3l_buf_free(&c->upaths);
    s3l_buf_free(&c->text);
    s3l__jscan_cleanup(&c->scan);
    s3l__jscan_cleanup(&c->line_scan);
    s3l_free(c->fast);
    s3l_free(c->fval);
    s3l_free(c);
}

size_t s3l_converter_n_unknown(const struct s3l_converter *c)
{
    return c->n_unknown;
}

size_t s3l_converter_unknown(const struct s3l_converter *c, size_t i)
{
    return i < c->n_unknown ? c->unknown[i] : 0;
}

const char *s3l_converter_unknown_path(const struct s3l_converter *c, size_t i)
{
    if (i >= c->n_unknown || !c->opt.stop_on_unknown)
        return NULL;
    return (const char *)c->upaths.ptr + c->upath[i];
}

uint64_t s3l_converter_ignored(const struct s3l_converter *c)
{
    return c->ignored;
}

/* ---- messages ------------------------------------------------------------------------------ */

static inline size_t path_push(struct s3l_converter *c, const char *name, size_t len)
{
    size_t old = c->depth;
    if (old < S3L_ARRAY_LEN(c->steps)) {
        c->steps[old].name = name;
        c->steps[old].len = len;
        c->depth = old + 1;
    }
    return old;
}

/* "a.b[2].c", at most cap - 1 bytes. */
static void path_format(const struct s3l_converter *c, char *out, size_t cap)
{
    size_t o = 0;
    out[0] = 0;
    for (size_t i = 0; i < c->depth && o + 1 < cap; i++) {
        const struct step *st = &c->steps[i];
        int w = st->name ? snprintf(out + o, cap - o, "%s%.*s", i ? "." : "",
                                    (int)S3L_MIN(st->len, 64), st->name)
                         : snprintf(out + o, cap - o, "[%zu]", st->len);
        if (w < 0)
            break;
        o = S3L_MIN(o + (size_t)w, cap - 1);
    }
}

static void describe(const struct s3l_value *v, char *out, size_t cap)
{
    if (!v) {
        snprintf(out, cap, "nothing (the key is missing)");
        return;
    }
    switch (v->kind) {
    case S3L_VALUE_NULL: snprintf(out, cap, "null"); return;
    case S3L_VALUE_TRUE: snprintf(out, cap, "true"); return;
    case S3L_VALUE_FALSE: snprintf(out, cap, "false"); return;
    case S3L_VALUE_NUMBER:
        snprintf(out, cap, "%.*s%s", (int)S3L_MIN(v->len, 40), v->str, v->len > 40 ? "..." : "");
        return;
    case S3L_VALUE_STRING: {
        /* Printable ASCII only, so that a message stays one line. */
        size_t o = 0, n = S3L_MIN(v->len, 40);
        out[o++] = '"';
        for (size_t i = 0; i < n && o + 6 < cap; i++) {
            unsigned char ch = (unsigned char)v->str[i];
            out[o++] = ch >= 0x20 && ch < 0x7f ? (char)ch : '?';
        }
        snprintf(out + o, cap - o, "\"%s", v->len > 40 ? "..." : "");
        return;
    }
    case S3L_VALUE_ARRAY: snprintf(out, cap, "an array"); return;
    default: snprintf(out, cap, "an object"); return;
    }
}

static int fail(struct s3l_converter *c, struct s3l_error *err, const struct s3l_value *v,
                const char *expected, const char *why)
{
    char got[64], path[256];
    describe(v, got, sizeof(got));
    path_format(c, path, sizeof(path));
    const struct s3l_record *r = c->rec;
    /* The line of the value itself: a pretty-printed JSON element or a CSV row with quoted line
     * breaks spans lines (pos is the value's offset within the record's raw bytes). */
    ull line = r->line;
    for (size_t k = 0; v && r->raw && k < v->pos && k < r->raw_len; k++)
        line += r->raw[k] == '\n';
    return s3l_error_set(err, S3L_EINVALID_INPUT,
                         "%s line %llu, column \"%s\": expected %s, got %s%s%s%s",
                         r->source ? r->source : "input", line, path, expected, got,
                         why ? " (" : "", why ? why : "", why ? ")" : "");
}

static int fail_type(struct s3l_converter *c, struct s3l_error *err, const struct s3l_value *v,
                     const struct s3l_type *t, const char *why)
{
    char tn[160];
    return fail(c, err, v, s3l__type_name(t, tn, sizeof(tn)), why);
}

/* ---- values -------------------------------------------------------------------------------- */

#define PUT(call)                                                                                  \
    do {                                                                                           \
        if ((call) != 0)                                                                           \
            return SINK_FAILED;                                                                    \
    } while (0)

static int put_value(struct s3l_converter *c, const struct s3l_field *f,
                     const struct s3l_value *values, size_t i, struct s3l_error *err);

static bool int_range(enum s3l_type_id id, int64_t *lo, int64_t *hi)
{
    switch (id) {
    case S3L_TYPE_INT8: *lo = INT8_MIN, *hi = INT8_MAX; return true;
    case S3L_TYPE_INT16: *lo = INT16_MIN, *hi = INT16_MAX; return true;
    case S3L_TYPE_INT32: *lo = INT32_MIN, *hi = INT32_MAX; return true;
    case S3L_TYPE_INT64: *lo = INT64_MIN, *hi = INT64_MAX; return true;
    default: return false;
    }
}

static uint64_t uint_max(enum s3l_type_id id)
{
    switch (id) {
    case S3L_TYPE_UINT8: return UINT8_MAX;
    case S3L_TYPE_UINT16: return UINT16_MAX;
    case S3L_TYPE_UINT32: return UINT32_MAX;
    default: return UINT64_MAX;
    }
}

static bool is_numeric_text(const struct s3l_value *v)
{
    return v->kind == S3L_VALUE_NUMBER || v->kind == S3L_VALUE_STRING;
}

/* xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx (RFC 9562 section 4) or 32 hex digits. */
static bool parse_uuid(const char *s, size_t n, uint8_t out[16])
{
    if (n != 36 && n != 32)
        return false;
    size_t o = 0;
    for (size_t i = 0; i < n;) {
        if (n == 36 && (i == 8 || i == 13 || i == 18 || i == 23)) {
            if (s[i++] != '-')
                return false;
            continue;
        }
        int hi = s3l_hex_value(s[i]), lo = s3l_hex_value(s[i + 1]);
        if (hi < 0 || lo < 0)
            return false;
        out[o++] = (uint8_t)(hi << 4 | lo);
        i += 2;
    }
    return o == 16;
}

/* ISO-8601 duration [-]P[nY][nM][nW][nD][T[nH][nM][n[.f]S]] into month_day_nano. */
static bool parse_duration(const char *s, size_t n, int32_t *months, int32_t *days,
                           int64_t *nanos)
{
    size_t i = 0;
    int64_t sign = 1, mo = 0, d = 0, ns = 0;
    if (i < n && s[i] == '-')
        sign = -1, i++;
    if (i >= n || s[i++] != 'P' || i >= n)
        return false;
    bool time = false, any = false;
    while (i < n) {
        if (s[i] == 'T' && !time) {
            time = true;
            i++;
            continue;
        }
        int64_t v = 0, frac = 0, scale = 1000000000;
        size_t start = i;
        while (i < n && s[i] >= '0' && s[i] <= '9' && i - start < 12)
            v = v * 10 + (s[i++] - '0');
        if (i == start || i >= n)
            return false;
        if (s[i] == '.' && time) {
            i++;
            while (i < n && s[i] >= '0' && s[i] <= '9' && scale > 1)
                frac += (s[i++] - '0') * (scale /= 10);
            if (i >= n || s[i] != 'S')
                return false;
        }
        char u = s[i++];
        any = true;
        if (!time && u == 'Y') mo += v * 12;
        else if (!time && u == 'M') mo += v;
        else if (!time && u == 'W') d += v * 7;
        else if (!time && u == 'D') d += v;
        else if (time && u == 'H') ns += v * 3600000000000LL;
        else if (time && u == 'M') ns += v * 60000000000LL;
        else if (time && u == 'S') ns += v * 1000000000LL + frac;
        else return false;
        if (mo > INT32_MAX || d > INT32_MAX || ns > INT64_MAX / 4)
            return false;
    }
    *months = (int32_t)(sign * mo);
    *days = (int32_t)(sign * d);
    *nanos = sign * ns;
    return any;
}

static int put_number(struct s3l_converter *c, const struct s3l_field *f,
                      const struct s3l_value *v, struct s3l_error *err)
{
    const struct s3l_type *t = &f->type;
    const struct s3l_row_sink *k = c->sink;
    const char *why = NULL;
    if (!is_numeric_text(v))
        return fail_type(c, err, v, t, NULL);
    int64_t lo, hi;
    if (int_range(t->id, &lo, &hi)) {
        int64_t x;
        if (s3l__parse_int(v->str, v->len, lo, hi, &x, &why) != 0)
            return fail_type(c, err, v, t, why);
        PUT(k->ops->put_int(k->ctx, x));
        return 0;
    }
    if (t->id >= S3L_TYPE_UINT8 && t->id <= S3L_TYPE_UINT64) {
        uint64_t x;
        if (s3l__parse_uint(v->str, v->len, uint_max(t->id), &x, &why) != 0)
            return fail_type(c, err, v, t, why);
        PUT(k->ops->put_uint(k->ctx, x));
        return 0;
    }
    if (t->id == S3L_TYPE_DECIMAL128) {
        int64_t h;
        uint64_t l;
        if (s3l__parse_decimal(v->str, v->len, t->precision, t->scale, &h, &l, &why) != 0)
            return fail_type(c, err, v, t, why);
        PUT(k->ops->put_decimal(k->ctx, h, l));
        return 0;
    }
    double d;
    int rc = s3l__parse_double(v->str, v->len, &d, &why);
    if (rc == S3L_ENOMEM)
        return rc;
    double lim = s3l__float_limit(t->id);
    if (rc == 0 && (d >= lim || d <= -lim)) {
        rc = S3L_EINVALID_INPUT;
        why = "out of range";
    }
    if (rc)
        return fail_type(c, err, v, t, why);
    PUT(k->ops->put_double(k->ctx, d));
    return 0;
}

static int put_text(struct s3l_converter *c, const struct s3l_field *f, const struct s3l_value *v,
                    struct s3l_error *err)
{
    const struct s3l_type *t = &f->type;
    const struct s3l_row_sink *k = c->sink;
    switch (t->id) {
    case S3L_TYPE_UTF8:
        if (v->kind == S3L_VALUE_STRING || v->kind == S3L_VALUE_NUMBER)
            PUT(k->ops->put_bytes(k->ctx, v->str, v->len));
        else if (v->kind == S3L_VALUE_TRUE || v->kind == S3L_VALUE_FALSE)
            PUT(k->ops->put_bytes(k->ctx, v->kind == S3L_VALUE_TRUE ? "true" : "false",
                                  v->kind == S3L_VALUE_TRUE ? 4 : 5));
        else
            return fail_type(c, err, v, t, NULL);
        return 0;
    case S3L_TYPE_BINARY:
    case S3L_TYPE_FIXED_SIZE_BINARY:
        if (v->kind != S3L_VALUE_STRING)
            return fail_type(c, err, v, t, NULL);
        if (t->id == S3L_TYPE_FIXED_SIZE_BINARY && v->len != (uint32_t)t->byte_width)
            return fail_type(c, err, v, t, "a different length");
        PUT(k->ops->put_bytes(k->ctx, v->str, v->len));
        return 0;
    case S3L_TYPE_UUID: {
        uint8_t u[16];
        if (v->kind != S3L_VALUE_STRING || !parse_uuid(v->str, v->len, u))
            return fail(c, err, v, "a UUID xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", NULL);
        PUT(k->ops->put_bytes(k->ctx, u, 16));
        return 0;
    }
    default: /* JSON */
        if (v->kind == S3L_VALUE_STRING && (v->flags & S3L_VALUE_TEXT)) {
            int rc = s3l__json_scan(&c->scan, v->str, v->len);
            if (rc == S3L_ENOMEM)
                return rc;
            if (rc)
                return fail(c, err, v, "JSON text", c->scan.err_what);
            PUT(k->ops->put_bytes(k->ctx, v->str, v->len));
            return 0;
        }
        return 2; /* written by the caller, which has the tape */
    }
}

static int put_time(struct s3l_converter *c, const struct s3l_field *f, const struct s3l_value *v,
                    struct s3l_error *err)
{
    const struct s3l_type *t = &f->type;
    const struct s3l_row_sink *k = c->sink;
    if (v->kind != S3L_VALUE_STRING)
        return fail_type(c, err, v, t, "dates and times are ISO-8601 text");
    if (t->id == S3L_TYPE_INTERVAL) {
        int32_t mo, d;
        int64_t ns;
        if (!parse_duration(v->str, v->len, &mo, &d, &ns))
            return fail(c, err, v, "an ISO-8601 duration such as P1Y2M3DT4H5M6.5S", NULL);
        PUT(k->ops->put_interval(k->ctx, mo, d, ns));
        return 0;
    }
    enum s3l__time_kind kind = t->id == S3L_TYPE_DATE32       ? S3L__DATE
                               : t->id == S3L_TYPE_TIMESTAMP ? S3L__TIMESTAMP
                                                             : S3L__TIME;
    int64_t x;
    bool off;
    const char *why;
    if (s3l__parse_time(v->str, v->len, kind, t->unit, &x, &off, &why) != 0) {
        char tn[96];
        char exp[200];
        snprintf(exp, sizeof(exp), "%s as %s", s3l__type_name(t, tn, sizeof(tn)),
                 strncmp(why, "an ISO", 6) == 0 ? why : "ISO-8601 text");
        return fail(c, err, v, exp, strncmp(why, "an ISO", 6) == 0 ? NULL : why);
    }
    PUT(k->ops->put_int(k->ctx, x));
    return 0;
}

static int put_list(struct s3l_converter *c, const struct s3l_field *f,
                    const struct s3l_value *values, size_t i, struct s3l_error *err)
{
    const struct s3l_row_sink *k = c->sink;
    const struct s3l_value *v = &values[i];
    if (v->kind != S3L_VALUE_ARRAY)
        return fail_type(c, err, v, &f->type, NULL);
    PUT(k->ops->begin_list(k->ctx));
    size_t j = i + 1;
    for (uint32_t e = 0; e < v->len; e++) {
        size_t old = path_push(c, NULL, e);
        int rc = put_value(c, &f->type.children[0], values, j, err);
        c->depth = old;
        if (rc)
            return rc;
        j = values[j].end;
    }
    PUT(k->ops->end_list(k->ctx));
    return 0;
}

/* Notes the key values[key_index] the schema lacks; nested: inside the value at c's path. With
 * stop_on_unknown its path is kept too ("s.z", "l[1].q"), for the caller's messages. */
static int note_unknown(struct s3l_converter *c, const struct s3l_value *values,
                        size_t key_index, bool nested)
{
    if (c->n_unknown == c->unknown_cap) { /* two arrays of one capacity, as in config.c */
        size_t cu = c->unknown_cap, cp = c->unknown_cap;
        if (s3l__array_reserve(&c->unknown, &cu, c->n_unknown + 1, sizeof(*c->unknown), 8) ||
            s3l__array_reserve(&c->upath, &cp, c->n_unknown + 1, sizeof(*c->upath), 8))
            return S3L_ENOMEM;
        c->unknown_cap = cu;
    }
    if (c->opt.stop_on_unknown) {
        char path[256];
        if (nested)
            path_format(c, path, sizeof(path));
        const struct s3l_value *k = &values[key_index];
        c->upath[c->n_unknown] = c->upaths.len;
        if (s3l_buf_printf(&c->upaths, "%s%s%.*s", nested ? path : "", nested ? "." : "",
                           (int)S3L_MIN(k->len, 200), k->str) != 0 ||
            s3l_buf_append_byte(&c->upaths, 0) != 0)
            return S3L_ENOMEM;
    }
    c->unknown[c->n_unknown++] = key_index;
    return 0;
}

/* Whether values[i] holds any non-null scalar (an empty array or an object of nulls does not). */
static bool has_value(const struct s3l_value *values, size_t i)
{
    const struct s3l_value *v = &values[i];
    if (v->kind != S3L_VALUE_ARRAY && v->kind != S3L_VALUE_OBJECT)
        return v->kind != S3L_VALUE_NULL;
    bool object = v->kind == S3L_VALUE_OBJECT;
    size_t j = i + 1;
    for (uint32_t k = 0; k < v->len; k++) {
        j += object; /* the member's key */
        if (has_value(values, j))
            return true;
        j = values[j].end;
    }
    return false;
}

/* The members of the object values[i] that struct t lacks: new keys (noted, like top-level
 * ones), or values no field can hold (empty or NUL names: ignored with the row). */
static int nested_unknown(struct s3l_converter *c, const struct s3l_type *t,
                          const struct s3l_value *values, size_t i)
{
    size_t j = i + 1;
    for (uint32_t m = 0; m < values[i].len; m++, j = values[j + 1].end) {
        const struct s3l_value *key = &values[j];
        bool known = false;
        for (size_t x = 0; x < t->n_children && !known; x++)
            known = strlen(t->children[x].name) == key->len &&
                    memcmp(t->children[x].name, key->str, key->len) == 0;
        if (known || !has_value(values, j + 1))
            continue;
        if (key->len == 0 || memchr(key->str, 0, key->len))
            c->row_ignored++;
        else if (note_unknown(c, values, j, true) != 0)
            return S3L_ENOMEM;
    }
    return 0;
}

static int put_struct(struct s3l_converter *c, const struct s3l_field *f,
                      const struct s3l_value *values, size_t i, struct s3l_error *err)
{
    const struct s3l_row_sink *k = c->sink;
    const struct s3l_value *v = &values[i];
    if (v->kind != S3L_VALUE_OBJECT)
        return fail_type(c, err, v, &f->type, NULL);
    bool map = f->type.id == S3L_TYPE_MAP;
    PUT(map ? k->ops->begin_map(k->ctx) : k->ops->begin_struct(k->ctx));
    uint32_t hits = 0; /* members matching a field: fewer than v->len means unknown keys */
    for (size_t x = 0; !map && x < f->type.n_children; x++) {
        const struct s3l_field *cf = &f->type.children[x];
        size_t name_len = strlen(cf->name), found = 0, j = i + 1;
        for (uint32_t m = 0; m < v->len; m++, j = values[j + 1].end)
            if (values[j].len == name_len && memcmp(values[j].str, cf->name, name_len) == 0) {
                if (found) /* the last duplicate wins, as in jansson; the others are counted */
                    c->row_ignored += has_value(values, found);
                found = j + 1, hits++;
            }
        size_t old = path_push(c, cf->name, name_len);
        int rc = put_value(c, cf, found ? values : NULL, found, err);
        c->depth = old;
        if (rc)
            return rc;
    }
    if (!map && hits < v->len && nested_unknown(c, &f->type, values, i) != 0)
        return s3l_error_set(err, S3L_ENOMEM,
                             "out of memory noting the unknown keys of column %s", f->name);
    size_t j = i + 1;
    for (uint32_t m = 0; map && m < v->len; m++) {
        /* A map key is text: it goes into the key column as CSV text would. */
        struct s3l_value key = values[j];
        key.flags |= S3L_VALUE_TEXT;
        size_t old = path_push(c, key.str, key.len);
        int rc = put_value(c, &f->type.children[0], &key, 0, err);
        if (rc == 0)
            rc = put_value(c, &f->type.children[1], values, j + 1, err);
        c->depth = old;
        if (rc)
            return rc;
        j = values[j + 1].end;
    }
    PUT(map ? k->ops->end_map(k->ctx) : k->ops->end_struct(k->ctx));
    return 0;
}

/* values[i] into field f; values is NULL when the value is missing (a null if f allows it). */
static int put_value(struct s3l_converter *c, const struct s3l_field *f,
                     const struct s3l_value *values, size_t i, struct s3l_error *err)
{
    const struct s3l_row_sink *k = c->sink;
    const struct s3l_value *v = values ? &values[i] : NULL;
    if (!v || v->kind == S3L_VALUE_NULL) {
        if (!f->nullable)
            return fail(c, err, v, "a value",
                        f->key ? "a key column refuses nulls" : "the column is not nullable");
        PUT(k->ops->put_null(k->ctx));
        return 0;
    }
    const struct s3l_type *t = &f->type;
    switch (t->id) {
    case S3L_TYPE_BOOL:
        if (v->kind == S3L_VALUE_TRUE || v->kind == S3L_VALUE_FALSE) {
            PUT(k->ops->put_bool(k->ctx, v->kind == S3L_VALUE_TRUE));
            return 0;
        }
        if (v->kind == S3L_VALUE_STRING && s3l__text_shape(v->str, v->len) == S3L__SHAPE_BOOL) {
            PUT(k->ops->put_bool(k->ctx, v->str[0] == 't' || v->str[0] == 'T'));
            return 0;
        }
        return fail_type(c, err, v, t, NULL);
    case S3L_TYPE_UTF8:
    case S3L_TYPE_BINARY:
    case S3L_TYPE_FIXED_SIZE_BINARY:
    case S3L_TYPE_UUID:
    case S3L_TYPE_JSON: {
        int rc = put_text(c, f, v, err);
        if (rc != 2)
            return rc;
        c->text.len = 0;
        if ((rc = s3l__json_write(&c->text, values, i)) != 0)
            return rc;
        PUT(k->ops->put_bytes(k->ctx, c->text.ptr, c->text.len));
        return 0;
    }
    case S3L_TYPE_DATE32:
    case S3L_TYPE_TIME32:
    case S3L_TYPE_TIME64:
    case S3L_TYPE_TIMESTAMP:
    case S3L_TYPE_INTERVAL:
        return put_time(c, f, v, err);
    case S3L_TYPE_LIST:
        return put_list(c, f, values, i, err);
    case S3L_TYPE_STRUCT:
    case S3L_TYPE_MAP:
        return put_struct(c, f, values, i, err);
    default:
        return put_number(c, f, v, err);
    }
}

int s3l_converter_grow(const struct s3l_converter *c, const struct s3l_record *rec,
                       const struct s3l_infer_options *opt, struct s3l_schema *schema,
                       size_t *added, struct s3l_error *err)
{
    (void)c; /* the walk finds every new key again, nested ones included */
    *added = 0;
    if (!rec->n_values || rec->values[0].kind != S3L_VALUE_OBJECT)
        return 0;
    if (s3l__grow_fields(&schema->fields, &schema->n_fields, rec->values, 0, opt, 0, true,
                         added) != 0)
        return s3l_error_set(err, S3L_ENOMEM, "out of memory growing the schema");
    return 0;
}

int s3l_convert(struct s3l_converter *c, const struct s3l_record *rec,
                const struct s3l_row_sink *sink, struct s3l_error *err)
{
    const struct s3l_value *values = rec->values;
    if (!values || values[0].kind != S3L_VALUE_OBJECT)
        return s3l_error_set(err, S3L_EINVALID_ARGUMENT, "convert: the record is not an object");
    size_t nf = c->schema->n_fields;
    memset(c->col_value, 0, nf * sizeof(*c->col_value));
    c->n_unknown = 0;
    c->row_ignored = 0;
    s3l_buf_reset(&c->upaths);
    size_t j = 1;
    if (values[0].len > c->hint_cap) {
        uint32_t *h = s3l_realloc(c->hint, values[0].len * sizeof(*h));
        if (!h)
            return s3l_error_set(err, S3L_ENOMEM, "out of memory converting a record");
        memset(h + c->hint_cap, 0, (values[0].len - c->hint_cap) * sizeof(*h));
        c->hint = h;
        c->hint_cap = values[0].len;
    }
    for (uint32_t m = 0; m < values[0].len; m++) {
        const struct s3l_value *key = &values[j];
        int idx = s3l__convert_column(c, m, key->str, key->len);
        if (idx >= 0) {
            /* A duplicate key: the last one wins (as in jansson); the earlier value is not
             * written, so it is counted. */
            if (c->col_value[idx])
                c->row_ignored += has_value(values, c->col_value[idx]);
            c->col_value[idx] = (uint32_t)(j + 1);
        } else if (values[j].len == 0 || memchr(values[j].str, 0, values[j].len))
            c->row_ignored += has_value(values, j + 1); /* no column can have this name */
        else if (has_value(values, j + 1) && note_unknown(c, values, j, false) != 0)
            return s3l_error_set(err, S3L_ENOMEM, "out of memory converting a record");
        j = values[j + 1].end;
    }
    if (c->n_unknown && c->opt.stop_on_unknown)
        return S3L_CONVERT_NEW_COLUMNS;
    size_t top = c->n_unknown; /* nested unknown keys are noted after these */
    c->rec = rec;
    c->sink = sink;
    int rc = sink->ops->row_begin(sink->ctx);
    if (rc)
        return rc;
    for (size_t i = 0; i < nf && rc == 0; i++) {
        const struct s3l_field *f = &c->schema->fields[i];
        c->depth = 0;
        path_push(c, f->name, c->name_len[i]);
        rc = put_value(c, f, c->col_value[i] ? values : NULL, c->col_value[i], err);
    }
    if (rc == 0 && c->n_unknown > top && c->opt.stop_on_unknown) {
        sink->ops->row_abort(sink->ctx);
        return S3L_CONVERT_NEW_COLUMNS;
    }
    if (rc == 0 || rc == SINK_FAILED) {
        int end = sink->ops->row_end(sink->ctx, err);
        if (rc == 0 && end == 0)
            c->ignored += c->n_unknown + c->row_ignored;
        if (rc == SINK_FAILED && end == 0)
            return s3l_error_set(err, S3L_EINTERNAL, "%s line %llu: the row sink refused a value",
                                 rec->source ? rec->source : "input", (ull)rec->line);
        return end;
    }
    sink->ops->row_abort(sink->ctx);
    if (rc == S3L_ENOMEM)
        return s3l_error_set(err, S3L_ENOMEM, "out of memory converting a record");
    return rc;
}
