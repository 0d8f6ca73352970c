/*
 * Statistics of pages and column chunks (parquet.thrift Statistics, ColumnOrder; PageIndex.md):
 * null_count, nan_count for floating point, and min_value/max_value compared in the column's sort
 * order: signed or unsigned integers, IEEE floats with NaN left out and zeros written as -0.0 (min)
 * and +0.0 (max), unsigned byte-wise for strings and binaries, signed big-endian two's complement
 * for FIXED_LEN_BYTE_ARRAY decimals. Values are kept in their PLAIN form without a length prefix,
 * the form Statistics.min_value/max_value use.
 *
 * Long BYTE_ARRAY bounds are truncated on export: min to a prefix, max to a prefix rounded up
 * (the last byte that can be incremented is, for UTF-8 the last code point), so the truncated max
 * is never below the true max.
 */
#include <math.h>

#include "parquet/pq.h"

void s3l__pq_stats_init(struct pq_stats *s)
{
    memset(s, 0, sizeof(*s));
    s3l_buf_init(&s->min, SIZE_MAX / 2);
    s3l_buf_init(&s->max, SIZE_MAX / 2);
}

void s3l__pq_stats_reset(struct pq_stats *s)
{
    s->null_count = 0;
    s->nan_count = 0;
    s->has_minmax = false;
    s->min_exact = s->max_exact = true;
    s3l_buf_reset(&s->min);
    s3l_buf_reset(&s->max);
}

void s3l__pq_stats_free(struct pq_stats *s)
{
    s3l_buf_free(&s->min);
    s3l_buf_free(&s->max);
}

uint16_t s3l__pq_half_from_double(double d)
{
    float f = (float)d;
    uint32_t x;
    memcpy(&x, &f, 4);
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000);
    uint32_t mant = x & 0x7fffff;
    int exp = (int)((x >> 23) & 0xff);
    if (exp == 0xff) /* inf or NaN (a quiet NaN keeps a mantissa bit) */
        return (uint16_t)(sign | 0x7c00 | (mant ? 0x200 : 0));
    /* Round the double directly to half to avoid double rounding through float. */
    double a = fabs(d);
    if (a >= 65520.0)
        return (uint16_t)(sign | 0x7c00);
    if (a < 0x1p-25)
        return sign;
    int e;
    double m = frexp(a, &e); /* a = m * 2^e, 0.5 <= m < 1 */
    int he = e - 1 + 15;     /* biased half exponent of a = 1.f * 2^(e-1) */
    double scaled;
    uint32_t bits;
    if (he <= 0) { /* subnormal: units of 2^-24 */
        scaled = ldexp(a, 24);
        bits = (uint32_t)nearbyint(scaled);
        return (uint16_t)(sign | bits);
    }
    scaled = ldexp(m * 2.0 - 1.0, 10); /* fraction in units of 2^-10 */
    uint32_t frac = (uint32_t)nearbyint(scaled);
    if (frac == 1024) {
        frac = 0;
        he++;
    }
    if (he >= 31)
        return (uint16_t)(sign | 0x7c00);
    bits = ((uint32_t)he << 10) | frac;
    return (uint16_t)(sign | bits);
}

double s3l__pq_half_to_double(uint16_t h)
{
    int exp = (h >> 10) & 0x1f;
    int frac = h & 0x3ff;
    double v;
    if (exp == 0)
        v = ldexp(frac, -24);
    else if (exp == 31)
        v = frac ? NAN : INFINITY;
    else
        v = ldexp(frac + 1024, exp - 25);
    return (h & 0x8000) ? -v : v;
}

/* Compares two bounds in the column's order: <0, 0, >0. Floats here are never NaN. */
int s3l__pq_cmp_values(const struct pq_col *c, const uint8_t *a, size_t an, const uint8_t *b,
                       size_t bn)
{
    switch (c->phys) {
    case PQ_BOOLEAN:
        return (int)a[0] - (int)b[0];
    case PQ_INT32: {
        int32_t x, y;
        memcpy(&x, a, 4), memcpy(&y, b, 4);
        if (c->order == PQ_ORD_UNSIGNED)
            return (uint32_t)x < (uint32_t)y ? -1 : (uint32_t)x > (uint32_t)y;
        return x < y ? -1 : x > y;
    }
    case PQ_INT64: {
        int64_t x, y;
        memcpy(&x, a, 8), memcpy(&y, b, 8);
        if (c->order == PQ_ORD_UNSIGNED)
            return (uint64_t)x < (uint64_t)y ? -1 : (uint64_t)x > (uint64_t)y;
        return x < y ? -1 : x > y;
    }
    case PQ_FLOAT: {
        float x, y;
        memcpy(&x, a, 4), memcpy(&y, b, 4);
        return x < y ? -1 : x > y;
    }
    case PQ_DOUBLE: {
        double x, y;
        memcpy(&x, a, 8), memcpy(&y, b, 8);
        return x < y ? -1 : x > y;
    }
    default:
        break;
    }
    if (c->order == PQ_ORD_FLOAT16) {
        uint16_t x, y;
        memcpy(&x, a, 2), memcpy(&y, b, 2);
        double dx = s3l__pq_half_to_double(x), dy = s3l__pq_half_to_double(y);
        return dx < dy ? -1 : dx > dy;
    }
    if (c->order == PQ_ORD_DECIMAL && an && bn) {
        if ((int8_t)a[0] != (int8_t)b[0])
            return (int8_t)a[0] < (int8_t)b[0] ? -1 : 1;
        return memcmp(a + 1, b + 1, an - 1);
    }
    size_t n = an < bn ? an : bn;
    int r = n ? memcmp(a, b, n) : 0;
    if (r)
        return r;
    return an < bn ? -1 : an > bn;
}

static bool is_nan_value(const struct pq_col *c, const uint8_t *p)
{
    if (c->phys == PQ_FLOAT) {
        float f;
        memcpy(&f, p, 4);
        return isnan(f);
    }
    if (c->phys == PQ_DOUBLE) {
        double d;
        memcpy(&d, p, 8);
        return isnan(d);
    }
    if (c->order == PQ_ORD_FLOAT16) {
        uint16_t h;
        memcpy(&h, p, 2);
        return (h & 0x7c00) == 0x7c00 && (h & 0x3ff);
    }
    return false;
}

/* Zero bounds of float columns: min -0.0, max +0.0 (ColumnOrder, TYPE_ORDER rules). */
static void fix_zeros(const struct pq_col *c, struct pq_stats *s)
{
    if (!s->has_minmax)
        return;
    if (c->phys == PQ_FLOAT) {
        float f;
        memcpy(&f, s->min.ptr, 4);
        if (f == 0.0f)
            f = -0.0f, memcpy(s->min.ptr, &f, 4);
        memcpy(&f, s->max.ptr, 4);
        if (f == 0.0f)
            f = 0.0f, memcpy(s->max.ptr, &f, 4);
    } else if (c->phys == PQ_DOUBLE) {
        double d;
        memcpy(&d, s->min.ptr, 8);
        if (d == 0.0)
            d = -0.0, memcpy(s->min.ptr, &d, 8);
        memcpy(&d, s->max.ptr, 8);
        if (d == 0.0)
            d = 0.0, memcpy(s->max.ptr, &d, 8);
    } else if (c->order == PQ_ORD_FLOAT16) {
        uint16_t h;
        memcpy(&h, s->min.ptr, 2);
        if ((h & 0x7fff) == 0)
            h = 0x8000, memcpy(s->min.ptr, &h, 2);
        memcpy(&h, s->max.ptr, 2);
        if ((h & 0x7fff) == 0)
            h = 0, memcpy(s->max.ptr, &h, 2);
    }
}

/*
 * Stores a bound. A BYTE_ARRAY bound keeps at most c->bound_keep bytes: truncation to a fixed
 * length is monotone (a <= b implies prefix(a) <= prefix(b)), so the kept prefix of the min (max)
 * of any values is the min (max) of their kept prefixes, and merging kept prefixes is exact. The
 * export cuts them further to statistics_max_len; bound_keep is larger than PQ_STATS_WHOLE_MAX,
 * so a kept bound that may have been cut is never mistaken for a whole one. Without this, a page
 * of 15 MiB strings would copy 15 MiB per bound, four times (page and chunk, min and max).
 */
static int set_bound(const struct pq_col *c, struct s3l_buf *b, const uint8_t *p, size_t n)
{
    s3l_buf_reset(b);
    if (c->phys == PQ_BYTE_ARRAY && c->bound_keep && n > c->bound_keep)
        n = c->bound_keep;
    return s3l_buf_append(b, p, n);
}

/* Fast loops for the fixed-width integer columns. */
#define SCAN_INT(T, UT)                                                                            \
    do {                                                                                           \
        const uint8_t *p = c->values.ptr;                                                          \
        T v0;                                                                                      \
        memcpy(&v0, p, sizeof(T));                                                                 \
        if (c->order == PQ_ORD_UNSIGNED) {                                                         \
            UT lo = (UT)v0, hi = (UT)v0;                                                           \
            for (uint64_t i = 1; i < c->n_values; i++) {                                           \
                UT v;                                                                              \
                memcpy(&v, p + i * sizeof(T), sizeof(T));                                          \
                lo = v < lo ? v : lo;                                                              \
                hi = v > hi ? v : hi;                                                              \
            }                                                                                      \
            rc = set_bound(c, &s->min, (const uint8_t *)&lo, sizeof(T));                           \
            rc = rc ? rc : set_bound(c, &s->max, (const uint8_t *)&hi, sizeof(T));                 \
        } else {                                                                                   \
            T lo = v0, hi = v0;                                                                    \
            for (uint64_t i = 1; i < c->n_values; i++) {                                           \
                T v;                                                                               \
                memcpy(&v, p + i * sizeof(T), sizeof(T));                                          \
                lo = v < lo ? v : lo;                                                              \
                hi = v > hi ? v : hi;                                                              \
            }                                                                                      \
            rc = set_bound(c, &s->min, (const uint8_t *)&lo, sizeof(T));                           \
            rc = rc ? rc : set_bound(c, &s->max, (const uint8_t *)&hi, sizeof(T));                 \
        }                                                                                          \
        s->has_minmax = true;                                                                      \
    } while (0)

int s3l__pq_stats_page(const struct pq_col *c, struct pq_stats *s)
{
    s3l__pq_stats_reset(s);
    s->null_count = (int64_t)(c->n_levels - c->n_values);
    if (c->n_values == 0)
        return 0;
    int rc = 0;
    if (c->phys == PQ_INT32) {
        SCAN_INT(int32_t, uint32_t);
        return rc;
    }
    if (c->phys == PQ_INT64) {
        SCAN_INT(int64_t, uint64_t);
        return rc;
    }
    const uint8_t *p = c->values.ptr;
    const uint8_t *lo = NULL, *hi = NULL;
    size_t lon = 0, hin = 0;
    bool var = c->phys == PQ_BYTE_ARRAY;
    for (uint64_t i = 0; i < c->n_values; i++) {
        const uint8_t *v = p;
        size_t n = c->value_width;
        if (var) {
            uint32_t len;
            memcpy(&len, p, 4);
            v = p + 4;
            n = len;
            p += 4 + (size_t)len;
        } else {
            p += n;
        }
        if (is_nan_value(c, v)) {
            s->nan_count++;
            continue;
        }
        if (!lo || s3l__pq_cmp_values(c, v, n, lo, lon) < 0)
            lo = v, lon = n;
        if (!hi || s3l__pq_cmp_values(c, v, n, hi, hin) > 0)
            hi = v, hin = n;
    }
    if (!lo)
        return 0; /* all NaN: no bounds (ColumnOrder rules) */
    rc = set_bound(c, &s->min, lo, lon);
    rc = rc ? rc : set_bound(c, &s->max, hi, hin);
    s->has_minmax = true;
    fix_zeros(c, s);
    return rc;
}

int s3l__pq_stats_page_dict(const struct pq_col *c, const uint32_t *idx, const struct pq_dict *d,
                            struct s3l_buf *scratch, struct pq_stats *s)
{
    s3l__pq_stats_reset(s);
    s->null_count = (int64_t)(c->n_levels - c->n_values);
    if (c->n_values == 0 || d->n == 0)
        return 0;
    size_t words = ((size_t)d->n + 63) / 64;
    s3l_buf_reset(scratch);
    int rc = s3l_buf_reserve(scratch, words * 8);
    if (rc)
        return rc;
    uint64_t *bm = (uint64_t *)(void *)scratch->ptr;
    memset(bm, 0, words * 8);
    for (uint64_t i = 0; i < c->n_values; i++)
        bm[idx[i] >> 6] |= 1ull << (idx[i] & 63);
    bool var = c->phys == PQ_BYTE_ARRAY;
    const uint8_t *lo = NULL, *hi = NULL;
    size_t lon = 0, hin = 0;
    for (size_t wi = 0; wi < words; wi++) {
        for (uint64_t m = bm[wi]; m; m &= m - 1) {
            uint32_t e = (uint32_t)(wi * 64 + (size_t)__builtin_ctzll(m));
            const uint8_t *v;
            size_t n;
            if (var) {
                v = d->values.ptr + d->offsets[e] + 4;
                n = d->offsets[e + 1] - d->offsets[e] - 4;
            } else {
                v = d->values.ptr + (size_t)e * c->value_width;
                n = c->value_width;
            }
            if (is_nan_value(c, v)) {
                /* Count each NaN value, not each distinct one. */
                for (uint64_t i = 0; i < c->n_values; i++)
                    s->nan_count += idx[i] == e;
                continue;
            }
            if (!lo || s3l__pq_cmp_values(c, v, n, lo, lon) < 0)
                lo = v, lon = n;
            if (!hi || s3l__pq_cmp_values(c, v, n, hi, hin) > 0)
                hi = v, hin = n;
        }
    }
    if (!lo)
        return 0;
    rc = set_bound(c, &s->min, lo, lon);
    rc = rc ? rc : set_bound(c, &s->max, hi, hin);
    s->has_minmax = true;
    fix_zeros(c, s);
    return rc;
}

int s3l__pq_stats_merge(const struct pq_col *c, struct pq_stats *into, const struct pq_stats *s)
{
    into->null_count += s->null_count;
    into->nan_count += s->nan_count;
    if (!s->has_minmax)
        return 0;
    int rc = 0;
    if (!into->has_minmax ||
        s3l__pq_cmp_values(c, s->min.ptr, s->min.len, into->min.ptr, into->min.len) < 0)
        rc = set_bound(c, &into->min, s->min.ptr, s->min.len);
    if (!rc && (!into->has_minmax ||
                s3l__pq_cmp_values(c, s->max.ptr, s->max.len, into->max.ptr, into->max.len) > 0))
        rc = set_bound(c, &into->max, s->max.ptr, s->max.len);
    into->has_minmax = true;
    fix_zeros(c, into);
    return rc;
}

static bool is_utf8_col(const struct pq_col *c)
{
    return c->node->type.id == S3L_TYPE_UTF8 || c->node->type.id == S3L_TYPE_JSON;
}

/* The longest prefix of p[0..n) of at most max bytes that ends on a UTF-8 boundary. */
static size_t utf8_cut(const uint8_t *p, size_t n, size_t max)
{
    if (n <= max)
        return n;
    size_t k = max;
    while (k > 0 && (p[k] & 0xC0) == 0x80)
        k--;
    return k;
}

static size_t utf8_put(uint8_t *o, uint32_t cp)
{
    if (cp < 0x80) {
        o[0] = (uint8_t)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (uint8_t)(0xC0 | cp >> 6), o[1] = (uint8_t)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (uint8_t)(0xE0 | cp >> 12), o[1] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
        o[2] = (uint8_t)(0x80 | (cp & 0x3F));
        return 3;
    }
    o[0] = (uint8_t)(0xF0 | cp >> 18), o[1] = (uint8_t)(0x80 | ((cp >> 12) & 0x3F));
    o[2] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F)), o[3] = (uint8_t)(0x80 | (cp & 0x3F));
    return 4;
}

/*
 * Rounds the prefix m[0..*n) up in place: the result is greater than every string that starts
 * with the prefix. false when impossible (all 0xFF, or all U+10FFFF). m has room for *n + 4.
 */
static bool round_up(uint8_t *m, size_t *n, bool utf8)
{
    size_t len = *n;
    while (len > 0) {
        if (!utf8) {
            if (m[len - 1] != 0xFF) {
                m[len - 1]++;
                *n = len;
                return true;
            }
            len--;
            continue;
        }
        size_t start = len - 1;
        while (start > 0 && (m[start] & 0xC0) == 0x80)
            start--;
        uint32_t cp = m[start];
        size_t k = len - start;
        if (k > 1) {
            cp &= 0xFF >> (k + 1);
            for (size_t i = start + 1; i < len; i++)
                cp = cp << 6 | (m[i] & 0x3F);
        }
        if (cp < 0x10FFFF) {
            cp = cp + 1 == 0xD800 ? 0xE000 : cp + 1;
            uint8_t tmp[4];
            size_t tn = utf8_put(tmp, cp);
            /* The encoding may grow by a byte; the caller leaves room for 4 more. */
            memcpy(m + start, tmp, tn);
            *n = start + tn;
            return true;
        }
        len = start;
    }
    return false;
}

int s3l__pq_stats_export(const struct pq_col *c, const struct pq_stats *s, size_t max_len,
                         struct s3l_arena *a, struct pq_stats_out *out)
{
    memset(out, 0, sizeof(*out));
    out->null_count = s->null_count;
    out->nan_count = s->nan_count;
    out->has_minmax = s->has_minmax;
    out->min_exact = out->max_exact = true;
    if (!s->has_minmax)
        return 0;
    size_t mn = s->min.len, mx = s->max.len;
    bool utf8 = is_utf8_col(c);
    if (c->phys == PQ_BYTE_ARRAY && max_len > 0 && mn > max_len) {
        mn = utf8 ? utf8_cut(s->min.ptr, s->min.len, max_len) : max_len;
        out->min_exact = false;
    }
    /* Only the bytes that go out are copied: a bound of a 15 MiB string costs max_len + 5 bytes
     * of the arena, which lives as long as the file (one per page for the page index). */
    bool cut_max = c->phys == PQ_BYTE_ARRAY && max_len > 0 && mx > max_len;
    size_t cut = cut_max ? (utf8 ? utf8_cut(s->max.ptr, mx, max_len) : max_len) : mx;
    out->min = s3l_arena_alloc(a, mn + 1);
    out->max = s3l_arena_alloc(a, (cut_max ? cut + 4 : mx) + 1);
    if (!out->min || !out->max)
        return S3L_ENOMEM;
    memcpy(out->min, s->min.ptr, mn);
    out->min_len = (uint32_t)mn;
    memcpy(out->max, s->max.ptr, cut);
    out->max_len = (uint32_t)cut;
    if (cut_max) {
        size_t nn = cut;
        if (round_up(out->max, &nn, utf8)) {
            out->max_len = (uint32_t)nn;
            out->max_exact = false;
        } else if (mx <= PQ_STATS_WHOLE_MAX) {
            /* No shorter bound exists (all 0xFF or U+10FFFF): keep the max whole, exact. */
            out->max = s3l_arena_alloc(a, mx + 1);
            if (!out->max)
                return S3L_ENOMEM;
            memcpy(out->max, s->max.ptr, mx);
            out->max_len = (uint32_t)mx;
        } else {
            /* ... unless that is long: no bounds then (both are optional in Statistics; a page
             * without them leaves the chunk without a ColumnIndex). Memory stays bounded. */
            out->has_minmax = false;
            out->min_len = out->max_len = 0;
        }
    }
    return 0;
}
