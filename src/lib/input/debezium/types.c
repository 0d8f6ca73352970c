/*
 * Kafka Connect's types in a Debezium event's schema wrapper, mapped to ours, and the rewrite of
 * their JSON values into the text our converter takes (docs/cli.md lists the mapping). Connect's
 * JsonConverter writes a struct's schema as {"type": "struct", "fields": [{"type": "int32",
 * "optional": false, "field": "id"}, ...]}, a logical type as its base type plus "name" (and
 * "parameters"), bytes as base64, and a Decimal as the base64 of its unscaled value in two's
 * complement, big-endian, with "parameters": {"scale": "2"} (Connect's Decimal,
 * org.apache.kafka.connect.data.Decimal; Debezium adds "connect.decimal.precision"). Debezium's
 * temporal types (io.debezium.time.*) are counts since the epoch or midnight in the unit their
 * name says (Debezium's connector documentation, "Temporal types"); ZonedTimestamp is ISO-8601
 * text with an offset.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schema/schema_int.h"
#include "input/debezium/debezium.h"

size_t s3l__dbz_member(const struct s3l_value *v, size_t obj, const char *key)
{
    if (v[obj].kind != S3L_VALUE_OBJECT)
        return 0;
    size_t n = strlen(key);
    for (size_t i = obj + 1; i < v[obj].end; i = v[i + 1].end)
        if (v[i].len == n && memcmp(v[i].str, key, n) == 0)
            return i + 1;
    return 0;
}

/* Connect type, logical name -> our type and rewrite. */
struct mapping {
    const char *connect; /* base type, or NULL for any */
    const char *name;    /* logical name, or NULL for none */
    const char *type;
    enum s3l__dbz_conv conv;
};

static const struct mapping mappings[] = {
    {NULL, "org.apache.kafka.connect.data.Date", "date32[day]", S3L__DBZ_DATE},
    {NULL, "io.debezium.time.Date", "date32[day]", S3L__DBZ_DATE},
    {NULL, "org.apache.kafka.connect.data.Time", "time32[ms]", S3L__DBZ_TIME_MS},
    {NULL, "io.debezium.time.Time", "time32[ms]", S3L__DBZ_TIME_MS},
    {NULL, "io.debezium.time.MicroTime", "time64[us]", S3L__DBZ_TIME_US},
    {NULL, "io.debezium.time.NanoTime", "time64[ns]", S3L__DBZ_TIME_NS},
    {NULL, "org.apache.kafka.connect.data.Timestamp", "timestamp[ms]", S3L__DBZ_TS_MS},
    {NULL, "io.debezium.time.Timestamp", "timestamp[ms]", S3L__DBZ_TS_MS},
    {NULL, "io.debezium.time.MicroTimestamp", "timestamp[us]", S3L__DBZ_TS_US},
    {NULL, "io.debezium.time.NanoTimestamp", "timestamp[ns]", S3L__DBZ_TS_NS},
    {NULL, "io.debezium.time.ZonedTimestamp", "timestamp[us, tz=UTC]", S3L__DBZ_COPY},
    {NULL, "io.debezium.time.ZonedTime", "string", S3L__DBZ_COPY},
    {NULL, "io.debezium.time.Year", "int32", S3L__DBZ_COPY},
    {NULL, "io.debezium.data.Json", "json", S3L__DBZ_JSON},
    {NULL, "io.debezium.data.Uuid", "uuid", S3L__DBZ_COPY},
    {NULL, "io.debezium.data.Enum", "string", S3L__DBZ_COPY},
    {NULL, "io.debezium.data.Bits", "binary", S3L__DBZ_BYTES},
    {"int8", NULL, "int8", S3L__DBZ_COPY},
    {"int16", NULL, "int16", S3L__DBZ_COPY},
    {"int32", NULL, "int32", S3L__DBZ_COPY},
    {"int64", NULL, "int64", S3L__DBZ_COPY},
    {"float32", NULL, "float32", S3L__DBZ_COPY},
    {"float64", NULL, "float64", S3L__DBZ_COPY},
    {"double", NULL, "float64", S3L__DBZ_COPY},
    {"boolean", NULL, "bool", S3L__DBZ_COPY},
    {"string", NULL, "string", S3L__DBZ_COPY},
    {"bytes", NULL, "binary", S3L__DBZ_BYTES},
};

static bool is_str(const struct s3l_value *v, size_t i, const char *s)
{
    return i && v[i].kind == S3L_VALUE_STRING && v[i].len == strlen(s) &&
           memcmp(v[i].str, s, v[i].len) == 0;
}

/* A member's value as a small decimal integer (a JSON number or a string of digits), or dflt. */
static long small_int(const struct s3l_value *v, size_t i, long dflt)
{
    if (!i || (v[i].kind != S3L_VALUE_NUMBER && v[i].kind != S3L_VALUE_STRING) || v[i].len == 0 ||
        v[i].len > 9)
        return dflt;
    char tmp[12];
    memcpy(tmp, v[i].str, v[i].len);
    tmp[v[i].len] = 0;
    char *end;
    long n = strtol(tmp, &end, 10);
    return *end ? dflt : n;
}

/* Fills col from the Connect field schema v[f]. S3L_EINVALID_INPUT when it is not one. */
static int read_col(struct s3l__dbz_col *col, const struct s3l_value *v, size_t f,
                    const char **what)
{
    size_t field = s3l__dbz_member(v, f, "field"), type = s3l__dbz_member(v, f, "type");
    size_t name = s3l__dbz_member(v, f, "name");
    if (!field || v[field].kind != S3L_VALUE_STRING || !type || v[type].kind != S3L_VALUE_STRING) {
        *what = "a Connect field schema with \"field\" and \"type\" strings";
        return S3L_EINVALID_INPUT;
    }
    memset(col, 0, sizeof(*col));
    col->name = v[field].str;
    col->name_len = v[field].len;
    if (is_str(v, name, "org.apache.kafka.connect.data.Decimal")) {
        size_t p = s3l__dbz_member(v, f, "parameters");
        col->scale = (int)small_int(v, p ? s3l__dbz_member(v, p, "scale") : 0, 0);
        col->precision =
            (int)small_int(v, p ? s3l__dbz_member(v, p, "connect.decimal.precision") : 0, 38);
        if (col->scale < 0 || col->scale > 38 || col->precision < 1 || col->precision > 38 ||
            col->precision < col->scale) {
            *what = "a Decimal with a scale of 0 to 38 and a precision of 1 to 38, not below it";
            return S3L_EINVALID_INPUT;
        }
        col->conv = S3L__DBZ_DECIMAL;
        snprintf(col->type_buf, sizeof(col->type_buf), "decimal128(%d, %d)", col->precision,
                 col->scale);
        col->type = col->type_buf;
        return 0;
    }
    for (size_t k = 0; k < sizeof(mappings) / sizeof(mappings[0]); k++) {
        const struct mapping *m = &mappings[k];
        if (m->name ? !is_str(v, name, m->name) : !is_str(v, type, m->connect))
            continue;
        col->conv = m->conv;
        col->type = m->type;
        return 0;
    }
    return 0; /* struct, array, map, or an unknown logical type over one: inferred from values */
}

int s3l__dbz_read_schema(struct s3l__dbz *d, const struct s3l_value *v, size_t i,
                         const char **what)
{
    d->n_cols = 0;
    size_t fields = s3l__dbz_member(v, i, "fields"), image = 0;
    if (!fields || v[fields].kind != S3L_VALUE_ARRAY) {
        *what = "a \"schema\" object with \"fields\" (a Connect struct schema)";
        return S3L_EINVALID_INPUT;
    }
    for (size_t e = fields + 1; e < v[fields].end; e = v[e].end) {
        size_t f = s3l__dbz_member(v, e, "field");
        if (is_str(v, f, "after") || (!image && is_str(v, f, "before")))
            image = e;
    }
    size_t cols = image ? s3l__dbz_member(v, image, "fields") : 0;
    if (!cols)
        return 0; /* no row schema: the values are inferred */
    if (v[cols].kind != S3L_VALUE_ARRAY) {
        *what = "the \"fields\" of the after struct's schema as an array";
        return S3L_EINVALID_INPUT;
    }
    if (v[cols].len > d->cap_cols) {
        struct s3l__dbz_col *c = s3l_realloc(d->cols, v[cols].len * sizeof(*c));
        if (!c)
            return S3L_ENOMEM;
        d->cols = c;
        d->cap_cols = v[cols].len;
    }
    for (size_t e = cols + 1; e < v[cols].end; e = v[e].end) {
        int rc = read_col(&d->cols[d->n_cols], v, e, what);
        if (rc)
            return rc;
        d->n_cols++;
    }
    return 0;
}

static int add_hint(struct s3l_schema *s, const char *name, size_t len, const char *type)
{
    if (s3l_schema_find(s, name, len) >= 0)
        return 0;
    struct s3l_field f = {0};
    int rc = s3l__type_parse(type, strlen(type), &f.type, NULL);
    if (rc)
        return rc == S3L_ENOMEM ? rc : S3L_EINTERNAL;
    f.nullable = true;
    f.name = s3l_strndup(name, len);
    rc = f.name ? s3l__schema_add_field(s, &f, NULL) : S3L_ENOMEM;
    s3l__field_cleanup(&f);
    return rc;
}

int s3l__dbz_hint_add(struct s3l__dbz *d, bool with_cols)
{
    if (!d->hint && !(d->hint = s3l_schema_new()))
        return S3L_ENOMEM;
    int rc = 0;
    for (size_t i = 0; with_cols && rc == 0 && i < d->n_cols; i++)
        if (d->cols[i].type)
            rc = add_hint(d->hint, d->cols[i].name, d->cols[i].name_len, d->cols[i].type);
    if (rc == 0)
        rc = add_hint(d->hint, "_openetl_op", 11, "string");
    if (rc == 0)
        rc = add_hint(d->hint, "_openetl_seq", 12, "int64");
    if (rc == 0)
        rc = add_hint(d->hint, "_openetl_id", 11, "uuid");
    return rc;
}

/* ---- value rewrites ------------------------------------------------------------------------ */

static int b64_digit(unsigned char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    return c == '+' ? 62 : c == '/' ? 63 : -1;
}

/* Decodes base64 (RFC 4648 section 4, padded) s[0..n) into out (n / 4 * 3 bytes of room). */
static int b64_decode(const char *s, size_t n, unsigned char *out, size_t *out_len)
{
    if (n % 4)
        return -1;
    size_t o = 0;
    for (size_t i = 0; i < n; i += 4) {
        int a = b64_digit((unsigned char)s[i]), b = b64_digit((unsigned char)s[i + 1]);
        bool last = i + 4 == n;
        int c = last && s[i + 2] == '=' ? -2 : b64_digit((unsigned char)s[i + 2]);
        int e = last && s[i + 3] == '=' ? -2 : b64_digit((unsigned char)s[i + 3]);
        if (a < 0 || b < 0 || c == -1 || e == -1 || (c == -2 && e != -2))
            return -1;
        out[o++] = (unsigned char)(a << 2 | b >> 4);
        if (c >= 0)
            out[o++] = (unsigned char)((b & 15) << 4 | c >> 2);
        if (e >= 0)
            out[o++] = (unsigned char)((c & 3) << 6 | e);
    }
    *out_len = o;
    return 0;
}

/* The unscaled value (base64, two's complement, big-endian, at most 16 bytes) as decimal text
 * with scale digits after the point, into buf (S3L_DECIMAL_TEXT_MAX bytes). */
static int decimal_text(const char *s, size_t n, int scale, char *buf, const char **what)
{
    unsigned char bytes[24];
    size_t len;
    if (n > 24 || b64_decode(s, n, bytes, &len) != 0 || len == 0 || len > 16) {
        *what = "a Decimal's unscaled value: base64 of 1 to 16 bytes";
        return -1;
    }
    return s3l__decimal_be_text(bytes, len, scale, buf);
}

/* The integer text of v[i] (an integer NUMBER that fits int64) into *out. */
static bool int_of(const struct s3l_value *v, size_t i, int64_t *out)
{
    if (v[i].kind != S3L_VALUE_NUMBER || !(v[i].flags & S3L_VALUE_INT) || v[i].len > 20)
        return false;
    char tmp[24];
    memcpy(tmp, v[i].str, v[i].len);
    tmp[v[i].len] = 0;
    char *end;
    long long n = strtoll(tmp, &end, 10);
    *out = (int64_t)n;
    return *end == 0 && !(n == LLONG_MAX || n == LLONG_MIN);
}

/* Days since 1970-01-01 to a civil date (H. Hinnant's days_from_civil inverse). */
static int date_text(int64_t z, char *buf)
{
    z += 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    int64_t doe = z - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t y = yoe + era * 400, doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153, day = doy - (153 * mp + 2) / 5 + 1;
    int64_t m = mp < 10 ? mp + 3 : mp - 9;
    y += m <= 2;
    if (y < 0 || y > 9999)
        return -1;
    return snprintf(buf, 16, "%04d-%02d-%02d", (int)y, (int)m, (int)day);
}

static int64_t floor_div(int64_t a, int64_t b)
{
    return a / b - (a % b != 0 && (a < 0) != (b < 0));
}

/* A time of day: sub units of 10^digits per second. */
static int time_text(int64_t t, int digits, char *buf)
{
    int64_t per = 1;
    for (int k = 0; k < digits; k++)
        per *= 10;
    if (t < 0 || t > 86400 * per)
        return -1;
    int64_t s = t / per, f = t % per;
    return snprintf(buf, 32, "%02d:%02d:%02d.%0*lld", (int)(s / 3600), (int)(s / 60 % 60),
                    (int)(s % 60), digits, (long long)f);
}

static int rewrite_time(enum s3l__dbz_conv conv, int64_t n, char *buf)
{
    static const int digits[] = {[S3L__DBZ_TIME_MS] = 3, [S3L__DBZ_TIME_US] = 6,
                                 [S3L__DBZ_TIME_NS] = 9, [S3L__DBZ_TS_MS] = 3,
                                 [S3L__DBZ_TS_US] = 6,   [S3L__DBZ_TS_NS] = 9};
    if (conv == S3L__DBZ_DATE)
        return n < INT32_MIN || n > INT32_MAX ? -1 : date_text(n, buf);
    int dg = digits[conv];
    if (conv <= S3L__DBZ_TIME_NS)
        return time_text(n, dg, buf);
    int64_t per_day = 86400;
    for (int k = 0; k < dg; k++)
        per_day *= 10;
    int64_t day = floor_div(n, per_day), rest = n - day * per_day;
    int len = date_text(day, buf);
    if (len < 0)
        return -1;
    buf[len++] = 'T';
    int t = time_text(rest, dg, buf + len);
    return t < 0 ? -1 : len + t;
}

static int emit(struct s3l__dbz *d, const struct s3l_value *src, const char *p, size_t n,
                struct s3l_value *out)
{
    char *s = s3l_arena_alloc(&d->arena, n + 1);
    if (!s)
        return S3L_ENOMEM;
    memcpy(s, p, n);
    s[n] = 0;
    *out = (struct s3l_value){S3L_VALUE_STRING, 0, (uint32_t)n, 0, src->pos, s};
    return 0;
}

int s3l__dbz_rewrite(struct s3l__dbz *d, const struct s3l__dbz_col *col,
                     const struct s3l_value *v, size_t i, struct s3l_value *out,
                     const char **what)
{
    *out = v[i];
    if (v[i].kind == S3L_VALUE_NULL || col->conv == S3L__DBZ_COPY)
        return 0;
    char buf[S3L_DECIMAL_TEXT_MAX];
    int len;
    int64_t n;
    switch (col->conv) {
    case S3L__DBZ_DECIMAL:
        if (v[i].kind != S3L_VALUE_STRING)
            return *what = "a Decimal as a base64 string", S3L_EINVALID_INPUT;
        len = decimal_text(v[i].str, v[i].len, col->scale, buf, what);
        return len < 0 ? S3L_EINVALID_INPUT : emit(d, &v[i], buf, (size_t)len, out);
    case S3L__DBZ_BYTES: {
        size_t cap = v[i].len / 4 * 3 + 1, got = 0;
        unsigned char *b = v[i].kind == S3L_VALUE_STRING ? s3l_arena_alloc(&d->arena, cap) : NULL;
        if (v[i].kind == S3L_VALUE_STRING && !b)
            return S3L_ENOMEM;
        if (!b || b64_decode(v[i].str, v[i].len, b, &got) != 0)
            return *what = "bytes as a base64 string", S3L_EINVALID_INPUT;
        *out = (struct s3l_value){S3L_VALUE_STRING, 0, (uint32_t)got, 0, v[i].pos,
                                  (const char *)b};
        return 0;
    }
    case S3L__DBZ_JSON:
        out->flags |= S3L_VALUE_TEXT; /* JSON text, kept as written in a json column */
        return 0;
    default:
        if (!int_of(v, i, &n) || (len = rewrite_time(col->conv, n, buf)) < 0)
            return *what = col->conv == S3L__DBZ_DATE
                               ? "a Date as an integer count of days between years 0 and 9999"
                               : "a time or timestamp as an integer count of its unit, within "
                                 "years 0 to 9999 (a time within one day)",
                   S3L_EINVALID_INPUT;
        return emit(d, &v[i], buf, (size_t)len, out);
    }
}
