/*
 * Arrow type names: parsing and printing them, and the deep copy, equality and cleanup of
 * struct s3l_type. Names are printed exactly as arrow::DataType::ToString prints them
 * (arrow/type.cc), with three project names for types Arrow prints as extensions or otherwise:
 * uuid, json and interval[month_day_nano]. docs/internals/schema.md lists the accepted aliases.
 */
#include <stdio.h>
#include <string.h>

#include "schema/schema_int.h"

/* ---- printing ------------------------------------------------------------------------------ */

/* An appender that counts what the full text needs, like snprintf, while writing what fits. */
struct out {
    char *p;
    size_t cap;
    size_t len;
};

static void put(struct out *o, const char *s, size_t n)
{
    if (o->len < o->cap) {
        size_t room = o->cap - o->len;
        memcpy(o->p + o->len, s, n < room ? n : room);
    }
    o->len += n;
}

static void puts_(struct out *o, const char *s)
{
    put(o, s, strlen(s));
}

static const char *unit_name(enum s3l_time_unit u)
{
    static const char *const names[] = {"s", "ms", "us", "ns"};
    return (unsigned)u < 4 ? names[u] : "?";
}

/*
 * Whether a field name must be quoted to be read back: Arrow prints names raw, which is
 * ambiguous for names holding the separators; we quote those (JSON string syntax).
 */
static bool name_needs_quotes(const char *name)
{
    size_t n = strlen(name);
    if (n == 0 || name[0] == ' ' || name[n - 1] == ' ')
        return true;
    for (const char *c = name; *c; c++)
        if ((unsigned char)*c < 0x20)
            return true;
    return strpbrk(name, ":,<>\"\\[]()") != NULL;
}

static void put_name(struct out *o, const char *name)
{
    if (!name_needs_quotes(name)) {
        puts_(o, name);
        return;
    }
    put(o, "\"", 1);
    for (const char *s = name; *s; s++) {
        char esc[8];
        if (*s == '"' || *s == '\\') {
            esc[0] = '\\';
            esc[1] = *s;
            put(o, esc, 2);
        } else if ((unsigned char)*s < 0x20) {
            snprintf(esc, sizeof(esc), "\\u%04x", (unsigned char)*s);
            put(o, esc, 6);
        } else {
            put(o, s, 1);
        }
    }
    put(o, "\"", 1);
}

static void format_type(struct out *o, const struct s3l_type *t);

static void format_field(struct out *o, const struct s3l_field *f)
{
    put_name(o, f->name);
    puts_(o, ": ");
    format_type(o, &f->type);
    if (!f->nullable)
        puts_(o, " not null");
}

static const char *simple_name(enum s3l_type_id id)
{
    switch (id) {
    case S3L_TYPE_BOOL: return "bool";
    case S3L_TYPE_INT8: return "int8";
    case S3L_TYPE_INT16: return "int16";
    case S3L_TYPE_INT32: return "int32";
    case S3L_TYPE_INT64: return "int64";
    case S3L_TYPE_UINT8: return "uint8";
    case S3L_TYPE_UINT16: return "uint16";
    case S3L_TYPE_UINT32: return "uint32";
    case S3L_TYPE_UINT64: return "uint64";
    case S3L_TYPE_FLOAT16: return "halffloat";
    case S3L_TYPE_FLOAT32: return "float";
    case S3L_TYPE_FLOAT64: return "double";
    case S3L_TYPE_UTF8: return "string";
    case S3L_TYPE_BINARY: return "binary";
    case S3L_TYPE_UUID: return "uuid";
    case S3L_TYPE_JSON: return "json";
    case S3L_TYPE_DATE32: return "date32[day]";
    case S3L_TYPE_INTERVAL: return "interval[month_day_nano]";
    default: return NULL;
    }
}

static void format_type(struct out *o, const struct s3l_type *t)
{
    char tmp[64];
    const char *simple = simple_name(t->id);
    if (simple) {
        puts_(o, simple);
        return;
    }
    switch (t->id) {
    case S3L_TYPE_FIXED_SIZE_BINARY:
        snprintf(tmp, sizeof(tmp), "fixed_size_binary[%d]", (int)t->byte_width);
        puts_(o, tmp);
        return;
    case S3L_TYPE_TIME32:
    case S3L_TYPE_TIME64:
        snprintf(tmp, sizeof(tmp), "time%s[%s]", t->id == S3L_TYPE_TIME32 ? "32" : "64",
                 unit_name(t->unit));
        puts_(o, tmp);
        return;
    case S3L_TYPE_TIMESTAMP:
        snprintf(tmp, sizeof(tmp), "timestamp[%s", unit_name(t->unit));
        puts_(o, tmp);
        if (t->tz) {
            puts_(o, ", tz=");
            puts_(o, t->tz);
        }
        puts_(o, "]");
        return;
    case S3L_TYPE_DECIMAL128:
        snprintf(tmp, sizeof(tmp), "decimal128(%d, %d)", (int)t->precision, (int)t->scale);
        puts_(o, tmp);
        return;
    case S3L_TYPE_LIST:
        puts_(o, "list<");
        if (t->n_children == 1)
            format_field(o, &t->children[0]);
        puts_(o, ">");
        return;
    case S3L_TYPE_STRUCT:
        puts_(o, "struct<");
        for (size_t i = 0; i < t->n_children; i++) {
            if (i)
                puts_(o, ", ");
            format_field(o, &t->children[i]);
        }
        puts_(o, ">");
        return;
    case S3L_TYPE_MAP:
        /* arrow MapType::ToString: map<KEY, VALUE>; the item's nullability is not printed by
         * Arrow, we add " not null" when the value is not nullable so that it round-trips. */
        puts_(o, "map<");
        if (t->n_children == 2) {
            format_type(o, &t->children[0].type);
            puts_(o, ", ");
            format_type(o, &t->children[1].type);
            if (!t->children[1].nullable)
                puts_(o, " not null");
        }
        puts_(o, ">");
        return;
    default:
        puts_(o, "?");
        return;
    }
}

size_t s3l__type_format(const struct s3l_type *t, char *out, size_t cap)
{
    struct out o = {out, cap ? cap - 1 : 0, 0};
    format_type(&o, t);
    if (cap)
        out[o.len < cap - 1 ? o.len : cap - 1] = 0;
    return o.len;
}

char *s3l__type_name(const struct s3l_type *t, char *buf, size_t cap)
{
    size_t need = s3l__type_format(t, buf, cap);
    if (need >= cap && cap > 4)
        memcpy(buf + cap - 4, "...", 4);
    return buf;
}

/* ---- copy, equality, cleanup --------------------------------------------------------------- */

void s3l__type_cleanup(struct s3l_type *t)
{
    if (!t)
        return;
    s3l_free(t->tz);
    for (size_t i = 0; i < t->n_children; i++)
        s3l__field_cleanup(&t->children[i]);
    s3l_free(t->children);
    memset(t, 0, sizeof(*t));
}

void s3l__field_cleanup(struct s3l_field *f)
{
    if (!f)
        return;
    s3l_free(f->name);
    s3l__type_cleanup(&f->type);
    f->name = NULL;
}

int s3l__field_copy(struct s3l_field *dst, const struct s3l_field *src)
{
    memset(dst, 0, sizeof(*dst));
    dst->name = s3l_strdup(src->name ? src->name : "");
    if (!dst->name)
        return S3L_ENOMEM;
    dst->nullable = src->nullable;
    dst->key = src->key;
    int rc = s3l__type_copy(&dst->type, &src->type);
    if (rc) {
        s3l_free(dst->name);
        dst->name = NULL;
    }
    return rc;
}

int s3l__type_copy(struct s3l_type *dst, const struct s3l_type *src)
{
    struct s3l_type t = *src;
    t.tz = NULL;
    t.children = NULL;
    t.n_children = 0;
    if (src->tz && !(t.tz = s3l_strdup(src->tz)))
        return S3L_ENOMEM;
    if (src->n_children) {
        t.children = s3l_calloc(src->n_children, sizeof(*t.children));
        if (!t.children) {
            s3l__type_cleanup(&t);
            return S3L_ENOMEM;
        }
        for (size_t i = 0; i < src->n_children; i++) {
            if (s3l__field_copy(&t.children[i], &src->children[i]) != 0) {
                s3l__type_cleanup(&t);
                return S3L_ENOMEM;
            }
            t.n_children = i + 1;
        }
    }
    *dst = t;
    return 0;
}

static bool str_eq(const char *a, const char *b)
{
    if (!a || !b)
        return a == b;
    return strcmp(a, b) == 0;
}

bool s3l__type_equal(const struct s3l_type *a, const struct s3l_type *b)
{
    if (a->id != b->id || a->n_children != b->n_children)
        return false;
    switch (a->id) {
    case S3L_TYPE_TIME32:
    case S3L_TYPE_TIME64:
        if (a->unit != b->unit)
            return false;
        break;
    case S3L_TYPE_TIMESTAMP:
        if (a->unit != b->unit || !str_eq(a->tz, b->tz))
            return false;
        break;
    case S3L_TYPE_FIXED_SIZE_BINARY:
        if (a->byte_width != b->byte_width)
            return false;
        break;
    case S3L_TYPE_DECIMAL128:
        if (a->precision != b->precision || a->scale != b->scale)
            return false;
        break;
    default:
        break;
    }
    for (size_t i = 0; i < a->n_children; i++) {
        const struct s3l_field *fa = &a->children[i], *fb = &b->children[i];
        if (!str_eq(fa->name, fb->name) || fa->nullable != fb->nullable ||
            !s3l__type_equal(&fa->type, &fb->type))
            return false;
    }
    return true;
}

/* ---- parsing ------------------------------------------------------------------------------- */

struct parser {
    const char *s;
    size_t len;
    size_t pos;
    int depth;
    struct s3l_error *err;
};

#define MAX_TYPE_DEPTH 64

static void skip_ws(struct parser *p)
{
    while (p->pos < p->len && (p->s[p->pos] == ' ' || p->s[p->pos] == '\t'))
        p->pos++;
}

static int fail(struct parser *p, const char *expected)
{
    if (p->pos >= p->len)
        return s3l_error_set(p->err, S3L_EINVALID_CONFIG,
                             "type \"%.*s\": expected %s at the end", (int)S3L_MIN(p->len, 200),
                             p->s, expected);
    return s3l_error_set(p->err, S3L_EINVALID_CONFIG,
                         "type \"%.*s\": expected %s at offset %zu (\"%.*s\")",
                         (int)S3L_MIN(p->len, 200), p->s, expected, p->pos,
                         (int)S3L_MIN(p->len - p->pos, 20), p->s + p->pos);
}

static bool eat(struct parser *p, char c)
{
    skip_ws(p);
    if (p->pos < p->len && p->s[p->pos] == c) {
        p->pos++;
        return true;
    }
    return false;
}

static int expect(struct parser *p, char c)
{
    if (eat(p, c))
        return 0;
    char what[8] = {'\'', c, '\'', 0};
    return fail(p, what);
}

/* An identifier: letters, digits and underscores. */
static size_t ident(struct parser *p, const char **start)
{
    skip_ws(p);
    *start = p->s + p->pos;
    size_t n = 0;
    while (p->pos + n < p->len) {
        char c = p->s[p->pos + n];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_'))
            break;
        n++;
    }
    p->pos += n;
    return n;
}

static int parse_int(struct parser *p, int32_t lo, int32_t hi, int32_t *out, const char *what)
{
    skip_ws(p);
    int64_t v = 0;
    size_t n = 0;
    bool neg = false;
    if (p->pos < p->len && p->s[p->pos] == '-') {
        neg = true;
        p->pos++;
    }
    while (p->pos < p->len && p->s[p->pos] >= '0' && p->s[p->pos] <= '9' && n < 10) {
        v = v * 10 + (p->s[p->pos] - '0');
        p->pos++;
        n++;
    }
    if (neg)
        v = -v;
    if (n == 0 || v < lo || v > hi)
        return fail(p, what);
    *out = (int32_t)v;
    return 0;
}

static int parse_unit(struct parser *p, enum s3l_time_unit *u, unsigned allowed)
{
    const char *w;
    size_t n = ident(p, &w);
    static const char *const names[] = {"s", "ms", "us", "ns"};
    for (unsigned i = 0; i < 4; i++) {
        if ((allowed & (1u << i)) && strlen(names[i]) == n && memcmp(w, names[i], n) == 0) {
            *u = (enum s3l_time_unit)i;
            return 0;
        }
    }
    p->pos -= n;
    return fail(p, allowed == 3 ? "a unit s or ms" : allowed == 12 ? "a unit us or ns"
                                                                   : "a unit s, ms, us or ns");
}

static int parse_type(struct parser *p, struct s3l_type *t);

/* A field name: an identifier-like run up to ':' (trimmed), or a JSON-style quoted string. */
static int parse_name(struct parser *p, char **out)
{
    skip_ws(p);
    struct s3l_buf b;
    s3l_buf_init(&b, 4096);
    int rc = 0;
    if (p->pos < p->len && p->s[p->pos] == '"') {
        p->pos++;
        while (rc == 0) {
            if (p->pos >= p->len) {
                rc = fail(p, "a closing '\"'");
                break;
            }
            char c = p->s[p->pos++];
            if (c == '"')
                break;
            if ((unsigned char)c < 0x20) {
                p->pos--;
                rc = fail(p, "no raw control character in a field name (escape it)");
                break;
            }
            if (c == '\\' && p->pos < p->len) {
                c = p->s[p->pos++];
                if (c == 'u') {
                    unsigned v = 0;
                    bool hex = p->pos + 4 <= p->len;
                    for (size_t i = 0; hex && i < 4; i++) {
                        char h = p->s[p->pos + i];
                        int d = h >= '0' && h <= '9'   ? h - '0'
                                : h >= 'a' && h <= 'f' ? h - 'a' + 10
                                : h >= 'A' && h <= 'F' ? h - 'A' + 10
                                                       : -1;
                        hex = d >= 0;
                        v = v * 16 + (unsigned)(d < 0 ? 0 : d);
                    }
                    if (!hex || v > 0x7f || v == 0) {
                        rc = fail(p, "a \\u00XX escape (01..7f)");
                        break;
                    }
                    p->pos += 4;
                    c = (char)v;
                } else if (c != '"' && c != '\\') {
                    rc = fail(p, "an escape \\\" \\\\ or \\u00XX");
                    break;
                }
            }
            rc = s3l_buf_append_byte(&b, (uint8_t)c) ? S3L_ENOMEM : 0;
        }
    } else {
        size_t start = p->pos;
        while (p->pos < p->len && p->s[p->pos] != ':' && p->s[p->pos] != ',' &&
               p->s[p->pos] != '>' && p->s[p->pos] != '<')
            p->pos++;
        size_t end = p->pos;
        while (end > start && (p->s[end - 1] == ' ' || p->s[end - 1] == '\t'))
            end--;
        if (end == start)
            rc = fail(p, "a field name");
        for (size_t i = start; rc == 0 && i < end; i++) {
            if ((unsigned char)p->s[i] < 0x20) {
                p->pos = i;
                rc = fail(p, "no control character in a field name (quote and escape it)");
            }
        }
        if (rc == 0 && s3l_buf_append(&b, p->s + start, end - start))
            rc = S3L_ENOMEM;
    }
    size_t bad;
    if (rc == 0 && b.ptr && !s3l__utf8_valid(b.ptr, b.len, &bad))
        rc = fail(p, "a field name in valid UTF-8");
    if (rc == 0 && s3l_buf_append(&b, "", 0) == 0 && b.ptr) {
        *out = (char *)b.ptr;
        return 0;
    }
    s3l_buf_free(&b);
    return rc ? rc : S3L_ENOMEM;
}

/* Optional " not null" after a nested type. */
static bool parse_not_null(struct parser *p)
{
    size_t save = p->pos;
    const char *w;
    size_t n = ident(p, &w);
    if (n == 3 && memcmp(w, "not", 3) == 0) {
        n = ident(p, &w);
        if (n == 4 && memcmp(w, "null", 4) == 0)
            return true;
    }
    p->pos = save;
    return false;
}

static int parse_field(struct parser *p, struct s3l_field *f, const char *default_name)
{
    memset(f, 0, sizeof(*f));
    f->nullable = true;
    int rc;
    /* list<int64> (no "item:") is accepted: look ahead for a ':' before any '<' or '>'. */
    size_t look = p->pos;
    bool named = false;
    skip_ws(p);
    if (p->pos < p->len && p->s[p->pos] == '"')
        named = true;
    for (size_t i = p->pos; !named && i < p->len; i++) {
        if (p->s[i] == ':')
            named = true;
        if (p->s[i] == '<' || p->s[i] == '>' || p->s[i] == ',' || p->s[i] == '[' ||
            p->s[i] == '(')
            break;
    }
    p->pos = look;
    if (named) {
        if ((rc = parse_name(p, &f->name)) != 0)
            return rc;
        if ((rc = expect(p, ':')) != 0)
            goto fail;
    } else if (!(f->name = s3l_strdup(default_name))) {
        return S3L_ENOMEM;
    }
    if ((rc = parse_type(p, &f->type)) != 0)
        goto fail;
    if (parse_not_null(p))
        f->nullable = false;
    return 0;
fail:
    s3l__field_cleanup(f);
    return rc;
}

static int add_child(struct s3l_type *t, size_t *cap)
{
    return s3l__array_reserve(&t->children, cap, t->n_children + 1, sizeof(*t->children), 4);
}

static int parse_struct(struct parser *p, struct s3l_type *t)
{
    size_t cap = 0;
    int rc;
    if ((rc = expect(p, '<')) != 0)
        return rc;
    if (eat(p, '>'))
        return 0; /* struct<> */
    do {
        if ((rc = add_child(t, &cap)) != 0)
            return rc;
        if ((rc = parse_field(p, &t->children[t->n_children], "")) != 0)
            return rc;
        t->n_children++;
        for (size_t i = 0; i + 1 < t->n_children; i++)
            if (strcmp(t->children[i].name, t->children[t->n_children - 1].name) == 0)
                return fail(p, "distinct struct field names");
    } while (eat(p, ','));
    return expect(p, '>');
}

static int parse_map(struct parser *p, struct s3l_type *t)
{
    int rc;
    if ((rc = expect(p, '<')) != 0)
        return rc;
    if (!(t->children = s3l_calloc(2, sizeof(*t->children))))
        return S3L_ENOMEM;
    struct s3l_field *k = &t->children[0], *v = &t->children[1];
    if (!(k->name = s3l_strdup("key")))
        return S3L_ENOMEM;
    t->n_children = 1;
    if ((rc = parse_type(p, &k->type)) != 0)
        return rc;
    if ((rc = expect(p, ',')) != 0)
        return rc;
    if (!(v->name = s3l_strdup("value")))
        return S3L_ENOMEM;
    v->nullable = true;
    t->n_children = 2;
    if ((rc = parse_type(p, &v->type)) != 0)
        return rc;
    if (parse_not_null(p))
        v->nullable = false;
    if (k->type.id == S3L_TYPE_LIST || k->type.id == S3L_TYPE_STRUCT ||
        k->type.id == S3L_TYPE_MAP)
        return fail(p, "a primitive map key type");
    return expect(p, '>');
}

struct simple {
    const char *name;
    enum s3l_type_id id;
};

/* Arrow's names (first per id) and the aliases of pyarrow's type_for_alias. */
static const struct simple simple_types[] = {
    {"bool", S3L_TYPE_BOOL},       {"boolean", S3L_TYPE_BOOL},     {"int8", S3L_TYPE_INT8},
    {"i1", S3L_TYPE_INT8},         {"int16", S3L_TYPE_INT16},      {"i2", S3L_TYPE_INT16},
    {"int32", S3L_TYPE_INT32},     {"i4", S3L_TYPE_INT32},         {"int64", S3L_TYPE_INT64},
    {"i8", S3L_TYPE_INT64},        {"uint8", S3L_TYPE_UINT8},      {"u1", S3L_TYPE_UINT8},
    {"uint16", S3L_TYPE_UINT16},   {"u2", S3L_TYPE_UINT16},        {"uint32", S3L_TYPE_UINT32},
    {"u4", S3L_TYPE_UINT32},       {"uint64", S3L_TYPE_UINT64},    {"u8", S3L_TYPE_UINT64},
    {"halffloat", S3L_TYPE_FLOAT16}, {"float16", S3L_TYPE_FLOAT16}, {"f2", S3L_TYPE_FLOAT16},
    {"float", S3L_TYPE_FLOAT32},   {"float32", S3L_TYPE_FLOAT32},  {"f4", S3L_TYPE_FLOAT32},
    {"double", S3L_TYPE_FLOAT64},  {"float64", S3L_TYPE_FLOAT64},  {"f8", S3L_TYPE_FLOAT64},
    {"string", S3L_TYPE_UTF8},     {"str", S3L_TYPE_UTF8},         {"utf8", S3L_TYPE_UTF8},
    {"binary", S3L_TYPE_BINARY},   {"uuid", S3L_TYPE_UUID},        {"json", S3L_TYPE_JSON},
    {"month_day_nano_interval", S3L_TYPE_INTERVAL},
};

/* timestamp[UNIT] or timestamp[UNIT, tz=ZONE], after the word "timestamp". */
static int parse_timestamp(struct parser *p, struct s3l_type *t)
{
    int rc;
    t->id = S3L_TYPE_TIMESTAMP;
    if ((rc = expect(p, '[')) != 0 || (rc = parse_unit(p, &t->unit, 15)) != 0)
        return rc;
    if (eat(p, ',')) {
        const char *k;
        size_t kn = ident(p, &k);
        if (kn != 2 || memcmp(k, "tz", 2) != 0 || !eat(p, '='))
            return fail(p, "'tz='");
        skip_ws(p);
        size_t start = p->pos;
        while (p->pos < p->len && p->s[p->pos] != ']')
            p->pos++;
        size_t end = p->pos;
        while (end > start && p->s[end - 1] == ' ')
            end--;
        /* IANA names (Europe/Paris, Etc/GMT+1) and offsets (+01:00) use only these. */
        for (size_t i = start; i < end; i++) {
            char ch = p->s[i];
            if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                  (ch >= '0' && ch <= '9') || (ch && strchr("/_+-:.", ch)))) {
                p->pos = i;
                return fail(p, "a time zone name (letters, digits, / _ + - : .)");
            }
        }
        if (end == start)
            return fail(p, "a time zone name");
        if (!(t->tz = s3l_strndup(p->s + start, end - start)))
            return S3L_ENOMEM;
    }
    return expect(p, ']');
}

static int parse_bracket_type(struct parser *p, const char *w, size_t n, struct s3l_type *t)
{
#define IS(lit) (n == sizeof(lit) - 1 && memcmp(w, lit, n) == 0)
    int rc;
    if (IS("date32")) {
        t->id = S3L_TYPE_DATE32;
        if (eat(p, '[')) {
            const char *u;
            size_t un = ident(p, &u);
            if (un != 3 || memcmp(u, "day", 3) != 0)
                return fail(p, "'day'");
            return expect(p, ']');
        }
        return 0;
    }
    if (IS("time32") || IS("time64")) {
        t->id = IS("time32") ? S3L_TYPE_TIME32 : S3L_TYPE_TIME64;
        if ((rc = expect(p, '[')) != 0 ||
            (rc = parse_unit(p, &t->unit, t->id == S3L_TYPE_TIME32 ? 3 : 12)) != 0)
            return rc;
        return expect(p, ']');
    }
    if (IS("timestamp"))
        return parse_timestamp(p, t);
    if (IS("fixed_size_binary")) {
        t->id = S3L_TYPE_FIXED_SIZE_BINARY;
        if ((rc = expect(p, '[')) != 0 ||
            (rc = parse_int(p, 1, INT32_MAX, &t->byte_width, "a byte width >= 1")) != 0)
            return rc;
        return expect(p, ']');
    }
    if (IS("interval")) {
        t->id = S3L_TYPE_INTERVAL;
        const char *u;
        if ((rc = expect(p, '[')) != 0)
            return rc;
        size_t un = ident(p, &u);
        if (un != 14 || memcmp(u, "month_day_nano", 14) != 0)
            return fail(p, "'month_day_nano' (the only interval supported)");
        return expect(p, ']');
    }
    if (IS("decimal128") || IS("decimal")) {
        t->id = S3L_TYPE_DECIMAL128;
        if ((rc = expect(p, '(')) != 0 ||
            (rc = parse_int(p, 1, 38, &t->precision, "a precision 1..38")) != 0 ||
            (rc = expect(p, ',')) != 0 ||
            (rc = parse_int(p, 0, t->precision, &t->scale, "a scale 0..precision")) != 0)
            return rc;
        return expect(p, ')');
    }
    if (IS("list")) {
        t->id = S3L_TYPE_LIST;
        if ((rc = expect(p, '<')) != 0)
            return rc;
        if (!(t->children = s3l_calloc(1, sizeof(*t->children))))
            return S3L_ENOMEM;
        if ((rc = parse_field(p, &t->children[0], "item")) != 0)
            return rc;
        t->n_children = 1;
        return expect(p, '>');
    }
    if (IS("struct")) {
        t->id = S3L_TYPE_STRUCT;
        return parse_struct(p, t);
    }
    if (IS("map")) {
        t->id = S3L_TYPE_MAP;
        return parse_map(p, t);
    }
    return 1; /* not one of these */
#undef IS
}

static int parse_type(struct parser *p, struct s3l_type *t)
{
    memset(t, 0, sizeof(*t));
    if (++p->depth > MAX_TYPE_DEPTH)
        return fail(p, "a type nested at most 64 deep");
    const char *w;
    size_t start = p->pos;
    size_t n = ident(p, &w);
    if (n == 0)
        return fail(p, "a type name");
    for (size_t i = 0; i < S3L_ARRAY_LEN(simple_types); i++) {
        if (strlen(simple_types[i].name) == n && memcmp(w, simple_types[i].name, n) == 0) {
            t->id = simple_types[i].id;
            if (t->id == S3L_TYPE_UUID)
                t->byte_width = 16;
            p->depth--;
            return 0;
        }
    }
    int rc = parse_bracket_type(p, w, n, t);
    if (rc == 1) {
        p->pos = start;
        skip_ws(p);
        if ((n == 3 && memcmp(w, "int", 3) == 0) || (n == 7 && memcmp(w, "integer", 7) == 0))
            return fail(p, "a sized integer type (int32 or int64; \"int\" is ambiguous)");
        return fail(p, "a type name (int64, string, timestamp[us], list<...>, ...)");
    }
    p->depth--;
    return rc;
}

int s3l__type_parse(const char *text, size_t len, struct s3l_type *out, struct s3l_error *err)
{
    struct parser p = {text, len, 0, 0, err};
    struct s3l_type t;
    int rc = parse_type(&p, &t);
    if (rc == 0) {
        skip_ws(&p);
        if (p.pos != p.len)
            rc = fail(&p, "the end of the type");
    }
    if (rc != 0) {
        s3l__type_cleanup(&t);
        if (rc == S3L_ENOMEM)
            s3l_error_set(err, S3L_ENOMEM, "out of memory parsing a type");
        return rc;
    }
    *out = t;
    return 0;
}
