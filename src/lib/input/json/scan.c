/*
 * The JSON scanner (RFC 8259): one value's text into a flat tape of struct s3l_value, with no
 * allocation per value. This is the NDJSON hot path, so strings are scanned eight bytes at a time
 * (SWAR) for the bytes that need a look: '"', '\\', control characters and non-ASCII; strings
 * without escapes are not copied. UTF-8 is validated per RFC 3629 section 4 (the table of
 * well-formed byte sequences). The grammar follows RFC 8259 sections 2-7 exactly: no comments,
 * no trailing commas, no NaN, no leading zeros, no single quotes.
 */
#include <string.h>

#include "input/json/json.h"

struct ctx {
    const uint8_t *base;
    const uint8_t *p;
    const uint8_t *end;
    struct s3l__jscan *s;
    int depth;
};

static int fail_at(struct ctx *c, const uint8_t *at, const char *what)
{
    c->s->err_pos = (size_t)(at - c->base);
    c->s->err_what = what;
    return S3L_EINVALID_INPUT;
}

static int grow(struct s3l__jscan *s)
{
    return s3l__array_reserve_max(&s->tape, &s->cap, s->n + 1, sizeof(*s->tape), 256,
                                  s->max_values);
}

/* Appends an entry; returns its index or a negative code. */
static inline long push(struct ctx *c, uint16_t kind, const uint8_t *at)
{
    struct s3l__jscan *s = c->s;
    if (s->n == s->cap) {
        int rc = grow(s);
        if (rc) {
            if (rc == S3L_ETOO_LARGE)
                fail_at(c, at, "a record with fewer values (max_record_bytes bounds it)");
            return rc;
        }
    }
    size_t n = s->n;
    s->tape[n] = (struct s3l_value){.kind = kind, .end = (uint32_t)(n + 1),
                                    .pos = (uint32_t)(at - c->base)};
    s->n = n + 1;
    return (long)n;
}

static inline void skip_ws(struct ctx *c)
{
    const uint8_t *p = c->p, *end = c->end;
    while (p < end && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t'))
        p++;
    c->p = p;
}


/* Inlining the string scanner into its two callers was worth 15% on flights NDJSON. */
#if defined(__GNUC__)
#define ALWAYS_INLINE static inline __attribute__((always_inline))
#else
#define ALWAYS_INLINE static inline
#endif


static int hex4(const uint8_t *p, unsigned *out)
{
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        uint8_t ch = p[i];
        v <<= 4;
        if (ch >= '0' && ch <= '9')
            v |= ch - '0';
        else if ((ch | 0x20) >= 'a' && (ch | 0x20) <= 'f')
            v |= (ch | 0x20) - 'a' + 10;
        else
            return -1;
    }
    *out = v;
    return 0;
}

static size_t put_utf8(uint8_t *o, unsigned cp)
{
    if (cp < 0x80) {
        o[0] = (uint8_t)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (uint8_t)(0xC0 | (cp >> 6));
        o[1] = (uint8_t)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (uint8_t)(0xE0 | (cp >> 12));
        o[1] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
        o[2] = (uint8_t)(0x80 | (cp & 0x3F));
        return 3;
    }
    o[0] = (uint8_t)(0xF0 | (cp >> 18));
    o[1] = (uint8_t)(0x80 | ((cp >> 12) & 0x3F));
    o[2] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
    o[3] = (uint8_t)(0x80 | (cp & 0x3F));
    return 4;
}

/* Decodes the escaped string body [s, e) (already checked for bad bytes) into the arena. */
static int decode_escapes(struct ctx *c, const uint8_t *s, const uint8_t *e, struct s3l_value *v)
{
    uint8_t *out = s3l_arena_alloc(&c->s->arena, (size_t)(e - s) + 1);
    if (!out)
        return S3L_ENOMEM;
    uint8_t *o = out;
    while (s < e) {
        const uint8_t *bs = memchr(s, '\\', (size_t)(e - s));
        size_t plain = bs ? (size_t)(bs - s) : (size_t)(e - s);
        memcpy(o, s, plain);
        o += plain;
        s += plain;
        if (!bs)
            break;
        uint8_t ch = s[1];
        s += 2;
        switch (ch) {
        case '"': *o++ = '"'; break;
        case '\\': *o++ = '\\'; break;
        case '/': *o++ = '/'; break;
        case 'b': *o++ = '\b'; break;
        case 'f': *o++ = '\f'; break;
        case 'n': *o++ = '\n'; break;
        case 'r': *o++ = '\r'; break;
        case 't': *o++ = '\t'; break;
        case 'u': {
            unsigned cp, lo;
            if (e - s < 4 || hex4(s, &cp) != 0)
                return fail_at(c, s - 2, "four hex digits after \\u");
            s += 4;
            /* RFC 8259 section 7: a code point above the BMP is a UTF-16 surrogate pair. */
            if (cp >= 0xDC00 && cp <= 0xDFFF)
                return fail_at(c, s - 6, "a \\u escape that is not a lone low surrogate");
            if (cp >= 0xD800 && cp <= 0xDBFF) {
                if (e - s < 6 || s[0] != '\\' || s[1] != 'u' || hex4(s + 2, &lo) != 0 ||
                    lo < 0xDC00 || lo > 0xDFFF)
                    return fail_at(c, s - 6, "a low surrogate \\uDC00-\\uDFFF after a high one");
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                s += 6;
            }
            o += put_utf8(o, cp);
            break;
        }
        default:
            return fail_at(c, s - 2, "an escape \\\" \\\\ \\/ \\b \\f \\n \\r \\t or \\uXXXX");
        }
    }
    v->str = (const char *)out;
    v->len = (uint32_t)(o - out);
    return 0;
}

/* A string starting at c->p ('"'); as a value or a key. */
ALWAYS_INLINE int scan_string(struct ctx *c)
{
    const uint8_t *start = c->p + 1, *p = start, *end = c->end;
    bool escaped = false;
    for (;;) {
        while (end - p >= 8) {
            uint64_t w;
            memcpy(&w, p, 8);
            uint64_t m = s3l__json_special_bytes(w);
            if (m) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
                p += __builtin_ctzll(m) >> 3;
#endif
                break;
            }
            p += 8;
        }
        if (p >= end)
            return fail_at(c, c->p, "a closing '\"' of this string");
        uint8_t ch = *p;
        if (ch == '"')
            break;
        if (ch == '\\') {
            if (end - p < 2)
                return fail_at(c, c->p, "a closing '\"' of this string");
            escaped = true;
            p += 2;
        } else if (ch < 0x20) {
            return fail_at(c, p, "no control character in a string (escape it)");
        } else if (ch >= 0x80) {
            size_t k = s3l_utf8_seq(p, end);
            if (k == 0)
                return fail_at(c, p, "valid UTF-8");
            p += k;
        } else {
            p++;
        }
    }
    long i = push(c, S3L_VALUE_STRING, c->p);
    if (i < 0)
        return (int)i;
    struct s3l_value *v = &c->s->tape[i];
    c->p = p + 1;
    if (!escaped) {
        v->str = (const char *)start;
        v->len = (uint32_t)(p - start);
        return 0;
    }
    return decode_escapes(c, start, p, v);
}

static int scan_number(struct ctx *c)
{
    const uint8_t *s = c->p, *p = s, *end = c->end;
    uint16_t flags = S3L_VALUE_INT;
    if (*p == '-')
        p++;
    if (p < end && *p == '0') {
        p++;
    } else if (p < end && *p >= '1' && *p <= '9') {
        while (p < end && *p >= '0' && *p <= '9')
            p++;
    } else {
        return fail_at(c, p, "a digit");
    }
    if (p < end && *p == '.') {
        flags = 0;
        p++;
        const uint8_t *d = p;
        while (p < end && *p >= '0' && *p <= '9')
            p++;
        if (p == d)
            return fail_at(c, p, "a digit after '.'");
    }
    if (p < end && (*p == 'e' || *p == 'E')) {
        flags = 0;
        p++;
        if (p < end && (*p == '+' || *p == '-'))
            p++;
        const uint8_t *d = p;
        while (p < end && *p >= '0' && *p <= '9')
            p++;
        if (p == d)
            return fail_at(c, p, "a digit in the exponent");
    }
    long i = push(c, S3L_VALUE_NUMBER, s);
    if (i < 0)
        return (int)i;
    struct s3l_value *v = &c->s->tape[i];
    v->flags = flags;
    v->str = (const char *)s;
    v->len = (uint32_t)(p - s);
    c->p = p;
    return 0;
}

static int scan_literal(struct ctx *c, const char *lit, size_t n, uint16_t kind)
{
    if ((size_t)(c->end - c->p) < n || memcmp(c->p, lit, n) != 0)
        return fail_at(c, c->p, "a value (object, array, string, number, true, false, null)");
    long i = push(c, kind, c->p);
    if (i < 0)
        return (int)i;
    c->p += n;
    return 0;
}

static int scan_value(struct ctx *c);

static int scan_container(struct ctx *c, bool object)
{
    if (++c->depth > S3L_JSON_MAX_DEPTH)
        return fail_at(c, c->p, "nesting at most 1000 deep");
    long idx = push(c, object ? S3L_VALUE_OBJECT : S3L_VALUE_ARRAY, c->p);
    if (idx < 0)
        return (int)idx;
    uint8_t close = object ? '}' : ']';
    c->p++;
    skip_ws(c);
    uint32_t count = 0;
    int rc;
    if (c->p < c->end && *c->p == close) {
        c->p++;
    } else {
        for (;;) {
            if (object) {
                skip_ws(c);
                if (c->p >= c->end || *c->p != '"')
                    return fail_at(c, c->p, "a member name in double quotes");
                if ((rc = scan_string(c)) != 0)
                    return rc;
                skip_ws(c);
                if (c->p >= c->end || *c->p != ':')
                    return fail_at(c, c->p, "':' after the member name");
                c->p++;
            }
            if ((rc = scan_value(c)) != 0)
                return rc;
            count++;
            skip_ws(c);
            if (c->p < c->end && *c->p == ',') {
                c->p++;
                continue;
            }
            if (c->p < c->end && *c->p == close) {
                c->p++;
                break;
            }
            return fail_at(c, c->p, object ? "',' or '}'" : "',' or ']'");
        }
    }
    struct s3l_value *v = &c->s->tape[idx];
    v->len = count;
    v->end = (uint32_t)c->s->n;
    c->depth--;
    return 0;
}

static int scan_value(struct ctx *c)
{
    skip_ws(c);
    if (c->p >= c->end)
        return fail_at(c, c->p, "a value (object, array, string, number, true, false, null)");
    switch (*c->p) {
    case '{': return scan_container(c, true);
    case '[': return scan_container(c, false);
    case '"': return scan_string(c);
    case 't': return scan_literal(c, "true", 4, S3L_VALUE_TRUE);
    case 'f': return scan_literal(c, "false", 5, S3L_VALUE_FALSE);
    case 'n': return scan_literal(c, "null", 4, S3L_VALUE_NULL);
    case '-':
    case '0': case '1': case '2': case '3': case '4':
    case '5': case '6': case '7': case '8': case '9':
        return scan_number(c);
    default:
        if (*c->p >= 0x80 && s3l_utf8_seq(c->p, c->end) == 0)
            return fail_at(c, c->p, "valid UTF-8");
        return fail_at(c, c->p, "a value (object, array, string, number, true, false, null)");
    }
}

int s3l__json_scan_prefix(struct s3l__jscan *s, const char *text, size_t len, size_t *used)
{
    struct ctx c = {(const uint8_t *)text, (const uint8_t *)text, (const uint8_t *)text + len, s,
                    0};
    s->n = 0;
    s->err_pos = 0;
    s->err_what = NULL;
    s3l_arena_reset(&s->arena);
    int rc = scan_value(&c);
    *used = (size_t)(c.p - c.base);
    return rc;
}

int s3l__json_scan(struct s3l__jscan *s, const char *text, size_t len)
{
    struct ctx c = {(const uint8_t *)text, (const uint8_t *)text, (const uint8_t *)text + len, s,
                    0};
    s->n = 0;
    s->err_pos = 0;
    s->err_what = NULL;
    s3l_arena_reset(&s->arena);
    int rc = scan_value(&c);
    if (rc)
        return rc;
    skip_ws(&c);
    if (c.p != c.end)
        return fail_at(&c, c.p, "the end of the record after the value");
    return 0;
}

/* ---- writing ------------------------------------------------------------------------------- */

int s3l__json_write_string(struct s3l_buf *b, const char *s, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    int rc = s3l_buf_append_byte(b, '"');
    size_t run = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        uint8_t ch = (uint8_t)s[i];
        if (ch >= 0x20 && ch != '"' && ch != '\\') {
            run++;
            continue;
        }
        rc = s3l_buf_append(b, s + i - run, run);
        run = 0;
        char esc[6] = {'\\', 0, 0, 0, 0, 0};
        size_t k = 2;
        switch (ch) {
        case '"': esc[1] = '"'; break;
        case '\\': esc[1] = '\\'; break;
        case '\n': esc[1] = 'n'; break;
        case '\r': esc[1] = 'r'; break;
        case '\t': esc[1] = 't'; break;
        case '\b': esc[1] = 'b'; break;
        case '\f': esc[1] = 'f'; break;
        default:
            esc[1] = 'u';
            esc[2] = '0';
            esc[3] = '0';
            esc[4] = hex[ch >> 4];
            esc[5] = hex[ch & 15];
            k = 6;
        }
        if (rc == 0)
            rc = s3l_buf_append(b, esc, k);
    }
    if (rc == 0)
        rc = s3l_buf_append(b, s + n - run, run);
    if (rc == 0)
        rc = s3l_buf_append_byte(b, '"');
    return rc;
}

int s3l__json_write(struct s3l_buf *b, const struct s3l_value *values, size_t i)
{
    const struct s3l_value *v = &values[i];
    switch (v->kind) {
    case S3L_VALUE_NULL: return s3l_buf_append(b, "null", 4);
    case S3L_VALUE_TRUE: return s3l_buf_append(b, "true", 4);
    case S3L_VALUE_FALSE: return s3l_buf_append(b, "false", 5);
    case S3L_VALUE_NUMBER: return s3l_buf_append(b, v->str, v->len);
    case S3L_VALUE_STRING: return s3l__json_write_string(b, v->str, v->len);
    default: break;
    }
    bool object = v->kind == S3L_VALUE_OBJECT;
    int rc = s3l_buf_append_byte(b, object ? '{' : '[');
    size_t j = i + 1;
    for (uint32_t k = 0; k < v->len && rc == 0; k++) {
        if (k)
            rc = s3l_buf_append_byte(b, ',');
        if (object && rc == 0) {
            rc = s3l__json_write_string(b, values[j].str, values[j].len);
            if (rc == 0)
                rc = s3l_buf_append_byte(b, ':');
            j++;
        }
        if (rc == 0)
            rc = s3l__json_write(b, values, j);
        j = values[j].end;
    }
    if (rc == 0)
        rc = s3l_buf_append_byte(b, object ? '}' : ']');
    return rc;
}
