/*
 * Value coercions from text: numbers (RFC 8259 section 6 grammar) into int64, uint64, double and
 * decimal128 unscaled integers, and ISO-8601 dates, times and timestamps into integers in a unit
 * (Arrow's date32 days, time32/time64 and timestamp units). Every conversion is lossless or fails:
 * a fraction into an integer, digits finer than a decimal's scale or a timestamp's unit, an
 * overflow of the column's width. Shapes of text drive CSV inference.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "input/value.h"
#include "util/util.h"

#define MAX_DIGITS 40

bool s3l__decnum_parse(const char *s, size_t len, struct s3l__decnum *out)
{
    size_t i = 0;
    memset(out, 0, sizeof(*out));
    if (i < len && s[i] == '-') {
        out->neg = true;
        i++;
    }
    if (i >= len)
        return false;
    /* int = zero / ( digit1-9 *DIGIT ) */
    if (s[i] == '0') {
        i++;
    } else if (s[i] >= '1' && s[i] <= '9') {
        while (i < len && s[i] >= '0' && s[i] <= '9') {
            if (out->n_digits < MAX_DIGITS)
                out->digits[out->n_digits++] = (uint8_t)(s[i] - '0');
            else
                out->exp++, out->too_many = out->too_many || s[i] != '0';
            i++;
        }
    } else {
        return false;
    }
    if (i < len && s[i] == '.') {
        i++;
        size_t start = i;
        while (i < len && s[i] >= '0' && s[i] <= '9') {
            if (out->n_digits == 0 && s[i] == '0') {
                out->exp--; /* a leading zero of the fraction */
            } else if (out->n_digits < MAX_DIGITS) {
                out->digits[out->n_digits++] = (uint8_t)(s[i] - '0');
                out->exp--;
            } else {
                out->too_many = out->too_many || s[i] != '0';
            }
            i++;
        }
        if (i == start)
            return false;
    }
    if (i < len && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        bool eneg = false;
        if (i < len && (s[i] == '+' || s[i] == '-'))
            eneg = s[i++] == '-';
        size_t start = i;
        int64_t e = 0;
        while (i < len && s[i] >= '0' && s[i] <= '9') {
            if (e < 1000000000)
                e = e * 10 + (s[i] - '0');
            i++;
        }
        if (i == start)
            return false;
        out->exp += eneg ? -e : e;
    }
    if (i != len)
        return false;
    /* Trim trailing zeros into the exponent, so that exp < 0 means a real fraction. */
    while (out->n_digits && out->digits[out->n_digits - 1] == 0) {
        out->n_digits--;
        out->exp++;
    }
    if (out->n_digits == 0)
        out->exp = 0;
    return true;
}

/* The magnitude digits * 10^exp as a 128-bit integer; false when it does not fit in `max_digits`
 * digits or has a fraction (exp < 0). */
static bool magnitude(const struct s3l__decnum *d, int64_t extra_exp, int max_digits,
                      unsigned __int128 *out, const char **why)
{
    int64_t exp = d->exp + extra_exp;
    *out = 0;
    if (d->n_digits == 0)
        return true;
    if (exp < 0) {
        *why = "a fraction";
        return false;
    }
    if (d->too_many || (int64_t)d->n_digits + exp > max_digits) {
        *why = "out of range";
        return false;
    }
    unsigned __int128 v = 0;
    for (unsigned i = 0; i < d->n_digits; i++)
        v = v * 10 + d->digits[i];
    for (int64_t i = 0; i < exp; i++)
        v *= 10;
    *out = v;
    return true;
}

int s3l__parse_int(const char *s, size_t len, int64_t lo, int64_t hi, int64_t *out,
                   const char **why)
{
    /* Fast path: up to 18 plain digits (no leading zero) cannot overflow an int64. */
    size_t i = len && s[0] == '-';
    if (len > i && len - i <= 18 && (s[i] != '0' || len - i == 1)) {
        int64_t v = 0;
        size_t k = i;
        for (; k < len && s[k] >= '0' && s[k] <= '9'; k++)
            v = v * 10 + (s[k] - '0');
        if (k == len) {
            v = i ? -v : v;
            if (v < lo || v > hi) {
                *why = "out of range";
                return S3L_EINVALID_INPUT;
            }
            *out = v;
            return 0;
        }
    }
    struct s3l__decnum d;
    unsigned __int128 m;
    if (!s3l__decnum_parse(s, len, &d)) {
        *why = "not a number";
        return S3L_EINVALID_INPUT;
    }
    if (!magnitude(&d, 0, 20, &m, why))
        return S3L_EINVALID_INPUT;
    if (d.neg ? m > (unsigned __int128)-(__int128)lo : m > (unsigned __int128)hi) {
        *why = "out of range";
        return S3L_EINVALID_INPUT;
    }
    *out = d.neg ? (int64_t)-(__int128)m : (int64_t)m;
    return 0;
}

int s3l__parse_uint(const char *s, size_t len, uint64_t hi, uint64_t *out, const char **why)
{
    struct s3l__decnum d;
    unsigned __int128 m;
    if (!s3l__decnum_parse(s, len, &d)) {
        *why = "not a number";
        return S3L_EINVALID_INPUT;
    }
    if (!magnitude(&d, 0, 20, &m, why))
        return S3L_EINVALID_INPUT;
    if ((d.neg && m != 0) || m > hi) {
        *why = "out of range";
        return S3L_EINVALID_INPUT;
    }
    *out = (uint64_t)m;
    return 0;
}

int s3l__parse_double(const char *s, size_t len, double *out, const char **why)
{
    struct s3l__decnum d;
    if (!s3l__decnum_parse(s, len, &d)) {
        *why = "not a number";
        return S3L_EINVALID_INPUT;
    }
    char small[64];
    char *tmp = len < sizeof(small) ? small : s3l_malloc(len + 1);
    if (!tmp)
        return S3L_ENOMEM;
    memcpy(tmp, s, len);
    tmp[len] = 0;
    errno = 0;
    double v = strtod(tmp, NULL);
    int e = errno;
    if (tmp != small)
        s3l_free(tmp);
    /* ERANGE on underflow gives a denormal or zero, which we accept; overflow gives HUGE_VAL. */
    if (e == ERANGE && (v > 1e308 || v < -1e308)) {
        *why = "out of range for a double";
        return S3L_EINVALID_INPUT;
    }
    *out = v;
    return 0;
}

int s3l__parse_decimal(const char *s, size_t len, int precision, int scale, int64_t *hi,
                       uint64_t *lo, const char **why)
{
    struct s3l__decnum d;
    unsigned __int128 m;
    if (!s3l__decnum_parse(s, len, &d)) {
        *why = "not a number";
        return S3L_EINVALID_INPUT;
    }
    if (!magnitude(&d, scale, precision, &m, why)) {
        if (d.exp + scale < 0)
            *why = "more fractional digits than the scale";
        else
            *why = "more digits than the precision";
        return S3L_EINVALID_INPUT;
    }
    unsigned __int128 v = d.neg ? (unsigned __int128)0 - m : m;
    *hi = (int64_t)(uint64_t)(v >> 64);
    *lo = (uint64_t)v;
    return 0;
}

/* ---- dates and times ----------------------------------------------------------------------- */

/* http://howardhinnant.github.io/date_algorithms.html#days_from_civil */
int64_t s3l__days_from_civil(int64_t y, unsigned m, unsigned d)
{
    y -= m <= 2;
    const int64_t era = (y >= 0 ? y : y - 399) / 400;
    const unsigned yoe = (unsigned)(y - era * 400);
    const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
    const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + (int64_t)doe - 719468;
}

static bool digits(const char *s, size_t n, int *out)
{
    int v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        v = v * 10 + (s[i] - '0');
    }
    *out = v;
    return true;
}

static bool parse_date(const char *s, size_t len, int64_t *days)
{
    int y, m, d;
    if (len != 10 || s[4] != '-' || s[7] != '-' || !digits(s, 4, &y) || !digits(s + 5, 2, &m) ||
        !digits(s + 8, 2, &d))
        return false;
    static const int mdays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (m < 1 || m > 12 || d < 1)
        return false;
    bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    if (d > mdays[m - 1] + (m == 2 && leap))
        return false;
    *days = s3l__days_from_civil(y, (unsigned)m, (unsigned)d);
    return true;
}

/* HH:MM[:SS[.f{1,9}]] into nanoseconds since midnight; returns the bytes used, 0 on failure. */
static size_t parse_clock(const char *s, size_t len, int64_t *ns)
{
    int h, mi, sec = 0;
    if (len < 5 || s[2] != ':' || !digits(s, 2, &h) || !digits(s + 3, 2, &mi) || h > 23 ||
        mi > 59)
        return 0;
    size_t i = 5;
    int64_t frac = 0;
    if (i < len && s[i] == ':') {
        if (len < 8 || !digits(s + 6, 2, &sec) || sec > 59)
            return 0;
        i = 8;
        if (i < len && (s[i] == '.' || s[i] == ',')) {
            i++;
            size_t start = i;
            int64_t scale = 100000000;
            while (i < len && s[i] >= '0' && s[i] <= '9') {
                if (i - start >= 9)
                    return 0; /* finer than nanoseconds */
                frac += (s[i] - '0') * scale;
                scale /= 10;
                i++;
            }
            if (i == start)
                return 0;
        }
    }
    *ns = ((int64_t)h * 3600 + mi * 60 + sec) * 1000000000 + frac;
    return i;
}

/* Z | (+|-)HH[:MM] | (+|-)HHMM into seconds east of UTC; false when malformed. */
static bool parse_offset(const char *s, size_t len, int64_t *secs)
{
    if (len == 1 && (s[0] == 'Z' || s[0] == 'z')) {
        *secs = 0;
        return true;
    }
    int h, m = 0;
    if (len < 3 || (s[0] != '+' && s[0] != '-') || !digits(s + 1, 2, &h) || h > 23)
        return false;
    if (len == 6 && s[3] == ':' && digits(s + 4, 2, &m) && m <= 59) {
    } else if (len == 5 && digits(s + 3, 2, &m) && m <= 59) {
    } else if (len != 3) {
        return false;
    }
    *secs = (s[0] == '-' ? -1 : 1) * ((int64_t)h * 3600 + m * 60);
    return true;
}

static const int64_t unit_ns[] = {1000000000, 1000000, 1000, 1};

/* ns (split into whole seconds and nanoseconds) into `unit`s, failing when a fraction remains. */
static int to_unit(int64_t secs, int64_t ns, enum s3l_time_unit unit, int64_t *out,
                   const char **why)
{
    int64_t per = unit_ns[unit];
    if (ns % per != 0) {
        *why = "a fraction finer than the column's unit";
        return S3L_EINVALID_INPUT;
    }
    int64_t v;
    if (__builtin_mul_overflow(secs, 1000000000 / per, &v) ||
        __builtin_add_overflow(v, ns / per, &v)) {
        *why = "out of range for the column's unit";
        return S3L_EINVALID_INPUT;
    }
    *out = v;
    return 0;
}

int s3l__parse_time(const char *s, size_t len, enum s3l__time_kind kind, enum s3l_time_unit unit,
                    int64_t *out, bool *has_offset, const char **why)
{
    return s3l__parse_time_cached(NULL, s, len, kind, unit, out, has_offset, why);
}

/* The date part through dc: consecutive values of a feed mostly share their day. */
static bool cached_date(struct s3l__date_cache *dc, const char *s, int64_t *days)
{
    if (dc && dc->valid && memcmp(dc->text, s, 10) == 0) {
        *days = dc->days;
        return true;
    }
    if (!parse_date(s, 10, days))
        return false;
    if (dc) {
        memcpy(dc->text, s, 10);
        dc->days = *days;
        dc->valid = true;
    }
    return true;
}

int s3l__parse_time_cached(struct s3l__date_cache *dc, const char *s, size_t len,
                           enum s3l__time_kind kind, enum s3l_time_unit unit, int64_t *out,
                           bool *has_offset, const char **why)
{
    int64_t days = 0, ns = 0, off = 0;
    *has_offset = false;
    *why = kind == S3L__DATE ? "an ISO-8601 date YYYY-MM-DD"
           : kind == S3L__TIME ? "an ISO-8601 time HH:MM:SS[.fraction]"
                               : "an ISO-8601 timestamp YYYY-MM-DD[THH:MM:SS[.fraction][Z|+HH:MM]]";
    if (kind == S3L__TIME) {
        if (parse_clock(s, len, &ns) != len)
            return S3L_EINVALID_INPUT;
        return to_unit(ns / 1000000000, ns % 1000000000, unit, out, why);
    }
    if (len < 10 || !cached_date(dc, s, &days))
        return S3L_EINVALID_INPUT;
    if (kind == S3L__DATE) {
        if (len != 10)
            return S3L_EINVALID_INPUT;
        *out = days;
        return 0;
    }
    if (len > 10) {
        if (s[10] != 'T' && s[10] != 't' && s[10] != ' ')
            return S3L_EINVALID_INPUT;
        size_t used = parse_clock(s + 11, len - 11, &ns);
        if (used == 0)
            return S3L_EINVALID_INPUT;
        size_t rest = 11 + used;
        if (rest < len) {
            if (!parse_offset(s + rest, len - rest, &off))
                return S3L_EINVALID_INPUT;
            *has_offset = true;
        }
    }
    int64_t secs = days * 86400 + ns / 1000000000 - off;
    return to_unit(secs, ns % 1000000000, unit, out, why);
}

static bool ieq(const char *s, size_t len, const char *lit)
{
    size_t n = strlen(lit);
    if (len != n)
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (c >= 'A' && c <= 'Z')
            c = (char)(c - 'A' + 'a');
        if (c != lit[i])
            return false;
    }
    return true;
}

int s3l__int_digits(const char *s, size_t len)
{
    size_t i = len && s[0] == '-';
    if (i == len)
        return -1;
    if (s[i] == '0' && len - i > 1)
        return -1; /* "007" is text (an identifier), as in the int64 shape */
    for (size_t k = i; k < len; k++)
        if (s[k] < '0' || s[k] > '9')
            return -1;
    return (int)S3L_MIN(len - i, (size_t)INT32_MAX);
}

enum s3l__text_shape s3l__text_shape(const char *s, size_t len)
{
    if (len == 0)
        return S3L__SHAPE_TEXT;
    char c = s[0];
    if (c == 't' || c == 'T' || c == 'f' || c == 'F')
        return ieq(s, len, "true") || ieq(s, len, "false") ? S3L__SHAPE_BOOL : S3L__SHAPE_TEXT;
    if (!(c == '-' || (c >= '0' && c <= '9')))
        return S3L__SHAPE_TEXT;
    if (len >= 10 && s[4] == '-') {
        int64_t v;
        bool off;
        const char *why;
        if (len == 10)
            return s3l__parse_time(s, len, S3L__DATE, S3L_UNIT_SECOND, &v, &off, &why) == 0
                       ? S3L__SHAPE_DATE
                       : S3L__SHAPE_TEXT;
        if (s3l__parse_time(s, len, S3L__TIMESTAMP, S3L_UNIT_NANO, &v, &off, &why) == 0 ||
            s3l__parse_time(s, len, S3L__TIMESTAMP, S3L_UNIT_MICRO, &v, &off, &why) == 0)
            return off ? S3L__SHAPE_TIMESTAMP_TZ : S3L__SHAPE_TIMESTAMP;
        return S3L__SHAPE_TEXT;
    }
    struct s3l__decnum d;
    if (!s3l__decnum_parse(s, len, &d))
        return S3L__SHAPE_TEXT;
    int64_t v;
    const char *why;
    if (s3l__parse_int(s, len, INT64_MIN, INT64_MAX, &v, &why) == 0 && d.exp >= 0 &&
        memchr(s, '.', len) == NULL && memchr(s, 'e', len) == NULL && memchr(s, 'E', len) == NULL)
        return S3L__SHAPE_INT;
    /* A whole number past int64 is not a float (that would lose the digits of the others):
     * decimal128(38, 0) holds up to 38 digits; beyond that it is text. */
    int digits = s3l__int_digits(s, len);
    if (digits > 0)
        return digits <= 38 ? S3L__SHAPE_BIGINT : S3L__SHAPE_TEXT;
    double dv;
    /* A number past a double's range is only text: a double column would refuse it. */
    return s3l__parse_double(s, len, &dv, &why) == 0 ? S3L__SHAPE_FLOAT : S3L__SHAPE_TEXT;
}
