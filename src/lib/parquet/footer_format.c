/*
 * footer_format: renders one PLAIN-encoded value (a statistics min/max or a page index bound) of
 * a leaf column as text, for `ls`, `check` and the JSON dump. The column's LogicalType (or its
 * ConvertedType, or its physical type) decides the form, and the forms are DuckDB's, so that
 * output can be compared with parquet_metadata(): integers in decimal (unsigned where the type
 * says so), dates as YYYY-MM-DD, times as HH:MM:SS with the fraction's trailing zeros dropped,
 * timestamps as "YYYY-MM-DD HH:MM:SS[.f]" with "+00" when adjusted to UTC, decimals exactly at
 * their scale, UUIDs 8-4-4-4-12, floats in the shortest form that reads back (".0" added to an
 * integral value in fixed notation), strings as their bytes, binary with bytes outside
 * 0x20..0x7e (and '\') as \xHH. PLAIN encoding: apache/parquet-format Encodings.md; the value
 * layouts per logical type: LogicalTypes.md.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "parquet/footer_internal.h"

struct out {
    char *p;
    size_t cap, len;
};

static void emit(struct out *o, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

static void emit(struct out *o, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *dst = o->len < o->cap ? o->p + o->len : NULL;
    size_t room = o->len < o->cap ? o->cap - o->len : 0;
    int n = vsnprintf(dst, room, fmt, ap);
    va_end(ap);
    if (n > 0)
        o->len += (size_t)n;
}

static int64_t le_signed(const uint8_t *v, size_t n)
{
    uint64_t u = 0;
    for (size_t i = n; i-- > 0;)
        u = u << 8 | v[i];
    if (n < 8 && (u >> (8 * n - 1)) & 1)
        u |= ~(uint64_t)0 << (8 * n); /* sign-extend */
    return (int64_t)u;
}

/* Days since 1970-01-01 to a civil date (proleptic Gregorian; H. Hinnant's days_from_civil
 * inverse). */
static void civil(int64_t z, int64_t *y, unsigned *m, unsigned *d)
{
    z += 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    unsigned doe = (unsigned)(z - era * 146097);
    unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    unsigned mp = (5 * doy + 2) / 153;
    *d = doy - (153 * mp + 2) / 5 + 1;
    *m = mp < 10 ? mp + 3 : mp - 9;
    *y = (int64_t)yoe + era * 400 + (*m <= 2);
}

static void emit_date(struct out *o, int64_t days)
{
    int64_t y;
    unsigned m, d;
    /* INT32 days and INT64 timestamps stay far inside this; a hostile INT64 DATE does not. */
    if (days > ((int64_t)1 << 40) || days < -((int64_t)1 << 40)) {
        emit(o, "%lld days", (long long)days);
        return;
    }
    civil(days, &y, &m, &d);
    emit(o, "%04lld-%02u-%02u", (long long)y, m, d);
}

/* HH:MM:SS and a fraction of `digits` digits without its trailing zeros. */
static void emit_time(struct out *o, int64_t units_of_day, int64_t per_second, int digits)
{
    int64_t secs = units_of_day / per_second, frac = units_of_day % per_second;
    emit(o, "%02lld:%02lld:%02lld", (long long)(secs / 3600), (long long)(secs / 60 % 60),
         (long long)(secs % 60));
    if (frac) {
        char f[16];
        snprintf(f, sizeof(f), "%0*lld", digits, (long long)frac);
        size_t n = strlen(f);
        while (n > 0 && f[n - 1] == '0')
            n--;
        emit(o, ".%.*s", (int)n, f);
    }
}

static void emit_timestamp(struct out *o, int64_t v, enum s3l_pq_time_unit unit, bool utc)
{
    int64_t per = unit == S3L_PQ_UNIT_MILLIS ? 1000 : unit == S3L_PQ_UNIT_MICROS ? 1000000
                                                                                : 1000000000;
    int digits = unit == S3L_PQ_UNIT_MILLIS ? 3 : unit == S3L_PQ_UNIT_MICROS ? 6 : 9;
    int64_t per_day = per * 86400;
    int64_t days = v / per_day, rest = v % per_day;
    if (rest < 0) {
        rest += per_day;
        days--;
    }
    emit_date(o, days);
    emit(o, " ");
    emit_time(o, rest, per, digits);
    if (utc)
        emit(o, "+00");
}

/* Shortest %g form that reads back as the same double (or float, when is_float). */
static void emit_float(struct out *o, double v, bool is_float)
{
    if (isnan(v)) {
        emit(o, "nan");
        return;
    }
    if (isinf(v)) {
        emit(o, v < 0 ? "-inf" : "inf");
        return;
    }
    char b[40];
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(b, sizeof(b), "%.*g", prec, v);
        if (is_float ? strtof(b, NULL) == (float)v : strtod(b, NULL) == v)
            break;
    }
    emit(o, "%s%s", b, strpbrk(b, ".e") ? "" : ".0");
}

static double half_to_double(uint16_t h)
{
    int e = (h >> 10) & 0x1f, m = h & 0x3ff;
    double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(m + 1024, e - 25);
    return (h & 0x8000) ? -v : v;
}

/* A big-endian two's complement integer of up to 16 bytes, at scale s. */
static int emit_decimal_be(struct out *o, const uint8_t *v, size_t n, int32_t scale)
{
    char text[S3L_DECIMAL_TEXT_MAX];
    if (s3l__decimal_be_text(v, n, (int)scale, text) < 0)
        return -1;
    emit(o, "%s", text);
    return 0;
}

static int emit_decimal(struct out *o, const struct s3l_pq_schema_element *se,
                        const uint8_t *v, size_t n, int32_t scale)
{
    if (se->type == S3L_PQ_INT32 || se->type == S3L_PQ_INT64) {
        uint8_t be[8];
        for (size_t i = 0; i < n; i++)
            be[i] = v[n - 1 - i];
        return emit_decimal_be(o, be, n, scale);
    }
    return emit_decimal_be(o, v, n, scale);
}

static void emit_bytes(struct out *o, const uint8_t *v, size_t n, bool text)
{
    for (size_t i = 0; i < n; i++) {
        if (text || (v[i] >= 0x20 && v[i] <= 0x7e && v[i] != '\\'))
            emit(o, "%c", v[i]);
        else
            emit(o, "\\x%02X", v[i]);
    }
}

/* The logical type with converted types translated (footer_schema.c has the same rules). */
static struct s3l_pq_logical effective(const struct s3l_pq_schema_element *se)
{
    struct s3l_pq_logical lt = se->logical;
    int32_t ct = se->converted_type;
    if (lt.kind != S3L_PQ_LT_NONE || ct < 0)
        return lt;
    if (ct == 0 || ct == 4 || ct == 19)
        lt.kind = ct == 19 ? S3L_PQ_LT_JSON : S3L_PQ_LT_STRING;
    else if (ct == 5) {
        lt.kind = S3L_PQ_LT_DECIMAL;
        lt.scale = se->scale < 0 ? 0 : se->scale;
    } else if (ct == 6)
        lt.kind = S3L_PQ_LT_DATE;
    else if (ct >= 7 && ct <= 10) {
        lt.kind = ct <= 8 ? S3L_PQ_LT_TIME : S3L_PQ_LT_TIMESTAMP;
        lt.unit = (ct == 7 || ct == 9) ? S3L_PQ_UNIT_MILLIS : S3L_PQ_UNIT_MICROS;
        lt.adjusted_to_utc = true;
    } else if (ct >= 11 && ct <= 18) {
        lt.kind = S3L_PQ_LT_INTEGER;
        lt.is_signed = ct >= 15;
        lt.bit_width = 8 << ((ct - 11) % 4);
    }
    return lt;
}

static int format_int(struct out *o, const struct s3l_pq_schema_element *se,
                      const struct s3l_pq_logical *lt, const uint8_t *v, size_t n)
{
    if (n != (se->type == S3L_PQ_INT32 ? 4u : 8u))
        return -1;
    int64_t x = le_signed(v, n);
    switch (lt->kind) {
    case S3L_PQ_LT_DATE: emit_date(o, x); return 0;
    case S3L_PQ_LT_DECIMAL: return emit_decimal(o, se, v, n, lt->scale);
    case S3L_PQ_LT_TIMESTAMP: emit_timestamp(o, x, lt->unit, lt->adjusted_to_utc); return 0;
    case S3L_PQ_LT_TIME: {
        int64_t per = lt->unit == S3L_PQ_UNIT_MILLIS ? 1000 : lt->unit == S3L_PQ_UNIT_MICROS
                                                              ? 1000000 : 1000000000;
        int digits = lt->unit == S3L_PQ_UNIT_MILLIS ? 3 : lt->unit == S3L_PQ_UNIT_MICROS ? 6 : 9;
        if (x < 0)
            return -1;
        emit_time(o, x, per, digits);
        return 0;
    }
    case S3L_PQ_LT_INTEGER:
        if (!lt->is_signed) {
            emit(o, "%llu", (unsigned long long)(n == 4 ? (uint32_t)x : (uint64_t)x));
            return 0;
        }
        break;
    default: break;
    }
    emit(o, "%lld", (long long)x);
    return 0;
}

static int format_fixed(struct out *o, const struct s3l_pq_schema_element *se,
                        const struct s3l_pq_logical *lt, const uint8_t *v, size_t n)
{
    if (lt->kind == S3L_PQ_LT_DECIMAL)
        return emit_decimal(o, se, v, n, lt->scale);
    if (lt->kind == S3L_PQ_LT_UUID && n == 16) {
        for (size_t i = 0; i < 16; i++)
            emit(o, "%s%02x", (i == 4 || i == 6 || i == 8 || i == 10) ? "-" : "", v[i]);
        return 0;
    }
    if (lt->kind == S3L_PQ_LT_FLOAT16 && n == 2) {
        emit_float(o, half_to_double((uint16_t)(v[0] | v[1] << 8)), true);
        return 0;
    }
    bool text = lt->kind == S3L_PQ_LT_STRING || lt->kind == S3L_PQ_LT_JSON ||
                lt->kind == S3L_PQ_LT_ENUM;
    emit_bytes(o, v, n, text);
    return 0;
}

int s3l_pq_value_format(const struct s3l_pq_schema_element *se, const void *value, size_t len,
                        char *out, size_t cap)
{
    struct out o = {out, cap, 0};
    const uint8_t *v = value;
    struct s3l_pq_logical lt = effective(se);
    int rc = 0;
    if (cap)
        out[0] = 0;
    switch (se->type) {
    case S3L_PQ_BOOLEAN:
        if (len != 1)
            return -1;
        emit(&o, v[0] ? "true" : "false");
        break;
    case S3L_PQ_INT32:
    case S3L_PQ_INT64: rc = format_int(&o, se, &lt, v, len); break;
    case S3L_PQ_FLOAT:
    case S3L_PQ_DOUBLE: {
        if (len != (se->type == S3L_PQ_FLOAT ? 4u : 8u))
            return -1;
        float f;
        double d;
        if (len == 4)
            memcpy(&f, v, 4), d = f;
        else
            memcpy(&d, v, 8);
        emit_float(&o, d, len == 4);
        break;
    }
    case S3L_PQ_INT96:
        emit_bytes(&o, v, len, false);
        break;
    case S3L_PQ_BYTE_ARRAY:
    case S3L_PQ_FIXED_LEN_BYTE_ARRAY: rc = format_fixed(&o, se, &lt, v, len); break;
    default: return -1;
    }
    if (rc)
        return -1;
    if (o.len > INT32_MAX)
        return -1;
    return (int)o.len;
}
