/*
 * The fast path's per-value scanners (json/fast.c): white space, a string's end, a number's end
 * and magnitude, a key's name, and the takers that turn one JSON value into a column's value
 * (struct s3l__fast_val) exactly as the generic path would, or answer false (fall back).
 *
 * Included by fast.c only, and all static inline, so they stay in its translation unit and the
 * compiler inlines them into the per-line loop (read_line) as when they were in fast.c.
 * The grammar checked is RFC 8259's (sections 2, 4, 6, 7), on the parts the fast path accepts.
 */
#ifndef S3L_JSON_FAST_VALUE_H
#define S3L_JSON_FAST_VALUE_H

#include <string.h>

#include "input/convert.h"
#include "input/value.h"
#include "schema/schema_int.h"

/* The kind of a value read into struct s3l__fast_val. */
enum { V_NULL, V_INT, V_UINT, V_DOUBLE, V_BYTES, V_BOOL };

static inline const char *skip_ws(const char *p, const char *e)
{
    /* compact JSON has none: one test of the byte's range sees that */
    while (p < e && (uint8_t)*p <= ' ' && (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n'))
        p++;
    return p;
}

/* A string's body from p (just after its opening quote): its end (the closing quote), or NULL
 * when it holds an escape or a control character. *high: it holds bytes >= 0x80. Eight bytes
 * at a time while there are eight. */
static inline const char *string_end(const char *p, const char *e, bool *high)
{
    bool h = false;
    while (p < e) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        if (e - p >= 8) { /* the lowest flagged byte is the first one only when loaded so */
            uint64_t w;
            memcpy(&w, p, 8);
            uint64_t m = s3l__json_special_bytes(w);
            if (!m) {
                p += 8;
                continue;
            }
            p += __builtin_ctzll(m) >> 3;
        }
#endif
        uint8_t ch = (uint8_t)*p;
        if (ch == '"') {
            *high = h;
            return p;
        }
        if (ch == '\\' || ch < 0x20)
            return NULL;
        h |= ch >= 0x80;
        p++;
    }
    return NULL;
}

/* A JSON number at p (RFC 8259 section 6): its end, or NULL. *is_int: no fraction or exponent;
 * *mag and *nd: the integer part's value and digit count (the value is exact up to 19 digits). */
static inline const char *number_end(const char *p, const char *e, bool *is_int, uint64_t *mag,
                                     size_t *nd)
{
    if (p < e && *p == '-')
        p++;
    if (p >= e || *p < '0' || *p > '9')
        return NULL;
    const char *d0 = p;
    uint64_t m = 0;
    if (*p == '0')
        p++;
    else
        while (p < e && *p >= '0' && *p <= '9')
            m = m * 10 + (uint64_t)(*p++ - '0');
    *mag = m;
    *nd = (size_t)(p - d0);
    *is_int = true;
    if (p < e && *p == '.') {
        const char *d = ++p;
        while (p < e && *p >= '0' && *p <= '9')
            p++;
        if (p == d)
            return NULL;
        *is_int = false;
    }
    if (p < e && (*p == 'e' || *p == 'E')) {
        p++;
        if (p < e && (*p == '+' || *p == '-'))
            p++;
        const char *d = p;
        while (p < e && *p >= '0' && *p <= '9')
            p++;
        if (p == d)
            return NULL;
        *is_int = false;
    }
    return p;
}

/* Whether a[0..n) equals b[0..n): names are short, a call to memcmp costs more than this. */
static inline bool name_eq(const char *a, const char *b, size_t n)
{
    for (; n >= 8; a += 8, b += 8, n -= 8) {
        uint64_t x, y;
        memcpy(&x, a, 8);
        memcpy(&y, b, 8);
        if (x != y)
            return false;
    }
    while (n--)
        if (*a++ != *b++)
            return false;
    return true;
}

/* A number's text into column fc as s3l_convert's put_number would: false when it cannot. */
static inline bool take_number(const struct s3l__fast_col *fc, const char *s, size_t len,
                               bool is_int, struct s3l__fast_val *v)
{
    const char *why;
    switch (fc->kind) {
    case S3L__F_INT:
        if (!is_int || s3l__parse_int(s, len, fc->lo, fc->hi, &v->u.i, &why) != 0)
            return false;
        v->kind = V_INT;
        return true;
    case S3L__F_UINT: {
        uint64_t x;
        if (!is_int || s3l__parse_uint(s, len, (uint64_t)fc->hi, &x, &why) != 0)
            return false;
        v->u.i = (int64_t)x;
        v->kind = V_UINT;
        return true;
    }
    case S3L__F_FLOAT:
        if (s3l__parse_double(s, len, &v->u.d, &why) != 0 || v->u.d >= fc->max ||
            v->u.d <= -fc->max)
            return false;
        v->kind = V_DOUBLE;
        return true;
    case S3L__F_UTF8: /* a number keeps its text */
        v->kind = V_BYTES;
        v->str = s;
        v->len = (uint32_t)len;
        return true;
    default:
        return false;
    }
}

static inline int two_digits(const char *s)
{
    unsigned a = (unsigned)(s[0] - '0'), b = (unsigned)(s[1] - '0');
    return a <= 9 && b <= 9 ? (int)(a * 10 + b) : -1;
}

/*
 * "YYYY-MM-DD HH:MM:SS" (or with 'T'/'t') whose date part is the one fc->dates holds, as
 * s3l__parse_time would read it (value.c: a date, then HH:MM:SS with hours <= 23, minutes and
 * seconds <= 59, no fraction, no offset, then scaled to the unit with an overflow check); false
 * for anything else, which s3l__parse_time_cached then reads.
 */
static inline bool quick_timestamp(const struct s3l__fast_col *fc, const char *s, int64_t *out)
{
    static const int64_t per_second[] = {1, 1000, 1000000, 1000000000};
    if (!fc->dates.valid || memcmp(s, fc->dates.text, 10) != 0 ||
        (s[10] != ' ' && s[10] != 'T' && s[10] != 't') || s[13] != ':' || s[16] != ':')
        return false;
    int h = two_digits(s + 11), mi = two_digits(s + 14), sec = two_digits(s + 17);
    if (h < 0 || h > 23 || mi < 0 || mi > 59 || sec < 0 || sec > 59)
        return false;
    int64_t secs = fc->dates.days * 86400 + h * 3600 + mi * 60 + sec;
    return !__builtin_mul_overflow(secs, per_second[fc->unit], out);
}

/* Whether the 19 bytes at a and b are equal: three overlapping loads, no call. */
static inline bool same19(const char *a, const char *b)
{
    uint64_t a0, a1, b0, b1;
    uint32_t a2, b2;
    memcpy(&a0, a, 8), memcpy(&b0, b, 8);
    memcpy(&a1, a + 8, 8), memcpy(&b1, b + 8, 8);
    memcpy(&a2, a + 15, 4), memcpy(&b2, b + 15, 4);
    return ((a0 ^ b0) | (a1 ^ b1) | (uint64_t)(a2 ^ b2)) == 0;
}

/* A string (no escapes, valid UTF-8) into column fc, as put_text / put_time would. */
static inline bool take_string(struct s3l_converter *c, size_t col, const char *s, size_t len,
                               struct s3l__fast_val *v)
{
    struct s3l__fast_col *fc = &c->fast[col];
    if (fc->kind == S3L__F_UTF8) {
        v->kind = V_BYTES;
        v->str = s;
        v->len = (uint32_t)len;
        return true;
    }
    if (fc->kind != S3L__F_TIME)
        return false;
    if (len == 19 && fc->time_kind == S3L__TIMESTAMP) {
        if (fc->ts_valid && same19(s, fc->ts_text)) {
            v->u.i = fc->ts_value;
            v->kind = V_INT;
            return true;
        }
        if (quick_timestamp(fc, s, &v->u.i)) {
            memcpy(fc->ts_text, s, 19);
            fc->ts_value = v->u.i;
            fc->ts_valid = true;
            v->kind = V_INT;
            return true;
        }
    }
    bool off;
    const char *why;
    if (s3l__parse_time_cached(&fc->dates, s, len, (enum s3l__time_kind)fc->time_kind,
                               c->schema->fields[col].type.unit, &v->u.i, &off, &why) != 0)
        return false;
    v->kind = V_INT;
    return true;
}

/* The value at *pp for column col; moves *pp past it. false: the fast path cannot take it. */
static inline bool take_value(struct s3l_converter *c, size_t col, const char **pp, const char *e)
{
    const char *p = *pp;
    struct s3l__fast_col *fc = &c->fast[col];
    struct s3l__fast_val *v = &c->fval[col];
    if (p >= e)
        return false;
    if (*p == '"') {
        bool high;
        const char *q = string_end(p + 1, e, &high);
        if (!q || (high && !s3l__utf8_valid((const uint8_t *)p + 1, (size_t)(q - p - 1), NULL)))
            return false;
        *pp = q + 1;
        return take_string(c, col, p + 1, (size_t)(q - p - 1), v);
    }
    if (*p == '-' || (*p >= '0' && *p <= '9')) {
        bool is_int;
        uint64_t mag;
        size_t nd;
        const char *q = number_end(p, e, &is_int, &mag, &nd);
        if (!q)
            return false;
        *pp = q;
        if (fc->kind == S3L__F_INT && is_int && nd <= 18) {
            /* as s3l__parse_int's own fast path: 18 digits cannot overflow */
            int64_t x = *p == '-' ? -(int64_t)mag : (int64_t)mag;
            if (x < fc->lo || x > fc->hi)
                return false;
            v->kind = V_INT;
            v->u.i = x;
            return true;
        }
        return take_number(fc, p, (size_t)(q - p), is_int, v);
    }
    if (e - p >= 4 && memcmp(p, "null", 4) == 0) {
        *pp = p + 4;
        v->kind = V_NULL;
        return fc->nullable;
    }
    bool t = e - p >= 4 && memcmp(p, "true", 4) == 0;
    if (t || (e - p >= 5 && memcmp(p, "false", 5) == 0)) {
        *pp = p + (t ? 4 : 5);
        if (fc->kind == S3L__F_BOOL) {
            v->kind = V_BOOL;
            v->u.b = t;
            return true;
        }
        if (fc->kind == S3L__F_UTF8) { /* as put_text: the literal's text */
            v->kind = V_BYTES;
            v->str = t ? "true" : "false";
            v->len = t ? 4 : 5;
            return true;
        }
    }
    return false; /* a nested value, another literal, or not JSON */
}

#endif
