/*
 * The row API of the Parquet writer (include/s3l/parquet.h): a cursor walks the schema tree as
 * values arrive depth-first, validates each value against its column, and appends definition
 * levels, repetition levels and PLAIN values to the leaf's page buffers (Dremel encoding).
 *
 * Levels: a value present at a leaf has the leaf's max definition level; a null at a node gives
 * every leaf below it the node's level minus one; an empty list gives the leaves below it the
 * list's own level. The repetition level of an entry is that of the deepest list or map whose
 * current item is not its first (0 at the start of a row): beginning item i > 0 of a list sets it
 * to the list's item level, and ending the list restores the level it began with.
 *
 * Rollback: the first write of a row to a leaf records the leaf's buffer lengths (marks); a
 * rejected row truncates the leaves it touched back to them. The fast paths of top-level leaves
 * (one entry per row) record no marks: a rejected row takes back the last entry of each
 * top-level leaf the row completed without marks.
 */
#include <limits.h>
#include <math.h>
#include <stdio.h>

#include "parquet/pq.h"

static const char *kind_name(const struct pq_node *n)
{
    switch (n->kind) {
    case PQ_LIST:
        return "a list";
    case PQ_MAP:
        return "a map";
    case PQ_STRUCT:
        return "a struct";
    case PQ_INTERVAL:
        return "an interval";
    default:
        break;
    }
    switch (n->type.id) {
    case S3L_TYPE_BOOL:
        return "a boolean";
    case S3L_TYPE_FLOAT16:
    case S3L_TYPE_FLOAT32:
    case S3L_TYPE_FLOAT64:
        return "a number";
    case S3L_TYPE_UTF8:
    case S3L_TYPE_JSON:
        return "a UTF-8 string";
    case S3L_TYPE_BINARY:
        return "bytes";
    case S3L_TYPE_FIXED_SIZE_BINARY:
        return "fixed-size bytes";
    case S3L_TYPE_UUID:
        return "a UUID";
    case S3L_TYPE_DECIMAL128:
        return "a decimal";
    case S3L_TYPE_TIMESTAMP:
        return "a timestamp";
    case S3L_TYPE_DATE32:
        return "a date";
    case S3L_TYPE_TIME32:
    case S3L_TYPE_TIME64:
        return "a time of day";
    default:
        return "an integer";
    }
}

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static int
fail(struct s3l_pq_writer *w, const struct pq_node *n, const char *fmt, ...)
{
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    w->poisoned = true;
    w->top = false;
    return s3l_error_set(&w->row_err, S3L_EINVALID_INPUT, "row %llu, column %s: %s",
                         (unsigned long long)w->rows_seen, n && n->path[0] ? n->path : "(row)",
                         msg);
}

static inline int guard(struct s3l_pq_writer *w)
{
    if (!w->in_row)
        return S3L_ESTATE;
    if (w->poisoned)
        return w->row_err.code ? w->row_err.code : S3L_EINVALID_INPUT;
    return 0;
}

/* The node the next value belongs to; sets the repetition level of a new list/map item. */
static int expect(struct s3l_pq_writer *w, const struct pq_node **out)
{
    struct pq_frame *f = &w->frames[w->depth - 1];
    const struct pq_node *g = f->node;
    switch (g->kind) {
    case PQ_LIST:
        w->cur_rep = f->items ? g->item_rep : f->rep_before;
        *out = &g->children[0];
        return 0;
    case PQ_MAP:
        if (f->child == 0)
            w->cur_rep = f->items ? g->item_rep : f->rep_before;
        *out = &g->children[f->child];
        return 0;
    default:
        if (f->child >= g->n_children) {
            *out = NULL; /* callers look at *out only on success; defined on every path */
            return fail(w, g, "more values than the %zu fields of %s", g->n_children,
                        w->depth == 1 ? "the row" : "the struct");
        }
        *out = &g->children[f->child];
        return 0;
    }
}

static void advance(struct s3l_pq_writer *w)
{
    struct pq_frame *f = &w->frames[w->depth - 1];
    switch (f->node->kind) {
    case PQ_LIST:
        f->items++;
        break;
    case PQ_MAP:
        if (f->child == 0) {
            f->child = 1;
        } else {
            f->child = 0;
            f->items++;
        }
        break;
    default:
        f->child++;
        break;
    }
}

static inline int buf_put(struct s3l_buf *b, const void *p, size_t n)
{
    if (b->len + n < b->cap) {
        memcpy(b->ptr + b->len, p, n);
        b->len += n;
        b->ptr[b->len] = 0;
        return 0;
    }
    return s3l_buf_append(b, p, n);
}

/* Records c's lengths the first time the row in progress writes to it (rollback marks). */
static inline void touch(struct s3l_pq_writer *w, struct pq_col *c)
{
    if (c->mark_row != w->rows_seen) {
        c->mark_row = w->rows_seen;
        c->mark_values = c->values.len;
        c->mark_levels = c->n_levels;
        c->mark_nvalues = c->n_values;
    }
}

static inline int put_level(struct s3l_pq_writer *w, struct pq_col *c, uint8_t def)
{
    int rc = 0;
    touch(w, c);
    if (c->max_def)
        rc = buf_put(&c->defs, &def, 1);
    if (!rc && c->max_rep)
        rc = buf_put(&c->reps, &w->cur_rep, 1);
    c->n_levels++;
    w->added += (c->max_def != 0) + (c->max_rep != 0);
    return rc;
}

/* Records an out-of-memory (or size) failure while buffering: the row is dropped. */
static int oom(struct s3l_pq_writer *w, const struct pq_node *n, int rc)
{
    w->poisoned = true;
    w->top = false;
    return s3l_error_set(&w->row_err, rc, "row %llu, column %s: buffering the value: %s",
                         (unsigned long long)w->rows_seen, n->path, s3l_strerror(rc));
}

static inline int emit(struct s3l_pq_writer *w, const struct pq_node *n, size_t leaf, const void *p,
                       size_t len)
{
    struct pq_col *c = &w->cols[n->first_leaf + leaf];
    int rc = put_level(w, c, c->max_def);
    if (!rc)
        rc = buf_put(&c->values, p, len);
    if (rc)
        return oom(w, n, rc);
    w->added += len;
    c->n_values++;
    return 0;
}

/*
 * Appends a present value to a column without repetition levels when its buffers have room (the
 * common case): the value v[0..n), after its 4-byte length when prefixed (BYTE_ARRAY PLAIN), and
 * the max definition level. n is usually a constant at the call site, so the copy is one move.
 * false: nothing was written, take the general path. No rollback marks: callers other than the
 * top-level fast paths touch() first.
 */
static inline bool fast_append(struct s3l_pq_writer *w, struct pq_col *c, const void *v, size_t n,
                               bool prefixed)
{
    struct s3l_buf *b = &c->values;
    size_t need = prefixed ? n + 4 : n;
    if (b->len + need >= b->cap || (c->max_def && c->defs.len + 1 >= c->defs.cap))
        return false;
    uint8_t *p = b->ptr + b->len;
    /* The page buffers outgrow the caches: ask for the line a few values ahead now, so that
     * its read-for-ownership is not waited for (a prefetch never faults). */
    __builtin_prefetch((const void *)((uintptr_t)p + 256), 1);
    if (prefixed) {
        c->last_start = b->len;
        uint32_t l32 = (uint32_t)n;
        memcpy(p, &l32, 4);
        s3l_copy_short(p + 4, v, n);
    } else {
        memcpy(p, v, n);
    }
    b->len += need;
    if (c->max_def) {
        c->defs.ptr[c->defs.len++] = c->max_def;
        need++;
    }
    w->added += need;
    c->n_levels++;
    c->n_values++;
    return true;
}

/* emit() with the size known at the call site, so the copy is a single move. */
#define EMIT_FIXED(NAME, T)                                                                        \
    static inline int NAME(struct s3l_pq_writer *w, const struct pq_node *n, T v)                  \
    {                                                                                              \
        struct pq_col *c = &w->cols[n->first_leaf];                                                \
        touch(w, c);                                                                               \
        if (c->max_rep == 0 && fast_append(w, c, &v, sizeof(T), false))                            \
            return 0;                                                                              \
        return emit(w, n, 0, &v, sizeof(T));                                                       \
    }
EMIT_FIXED(emit_i32, int32_t)
EMIT_FIXED(emit_i64, int64_t)
EMIT_FIXED(emit_f64, double)

static int emit_bytes(struct s3l_pq_writer *w, const struct pq_node *n, const void *p, size_t len)
{
    struct pq_col *c = &w->cols[n->first_leaf];
    touch(w, c);
    if (c->max_rep == 0 && fast_append(w, c, p, len, true))
        return 0;
    uint32_t l32 = (uint32_t)len;
    int rc = put_level(w, c, c->max_def);
    if (!rc)
        rc = buf_put(&c->values, &l32, 4);
    if (!rc)
        rc = buf_put(&c->values, p, len);
    if (rc)
        return oom(w, n, rc);
    w->added += 4 + len;
    c->n_values++;
    return 0;
}

/*
 * The top-level leaf the next value goes to, when the fast paths of the puts apply: a value at
 * the top level of a row that has not failed. NULL: take the general path (expect() etc.).
 */
static inline const struct pq_node *fast_node(const struct s3l_pq_writer *w)
{
    if (!w->top)
        return NULL;
    uint32_t i = w->frames[0].child;
    if (i >= w->root.n_children)
        return NULL;
    const struct pq_node *n = &w->root.children[i];
    return n->col ? n : NULL;
}

/* Every leaf below n gets an entry at definition level def (a null, or an empty list). */
static int emit_absent(struct s3l_pq_writer *w, const struct pq_node *n, uint8_t def)
{
    for (size_t i = 0; i < n->n_leaves; i++) {
        int rc = put_level(w, &w->cols[n->first_leaf + i], def);
        if (rc)
            return oom(w, n, rc);
    }
    return 0;
}

int s3l_pq_row_begin(struct s3l_pq_writer *w)
{
    if (w->closed || w->in_row)
        return S3L_ESTATE;
    w->in_row = true;
    if (w->poisoned) { /* row_err is cleared lazily: most rows never fail */
        s3l_error_clear(&w->row_err);
        w->poisoned = false;
    }
    w->depth = 1;
    w->top = true;
    w->frames[0] = (struct pq_frame){.node = &w->root};
    w->cur_rep = 0;
    w->rows_seen++;
    return 0;
}

/* Takes back the last entry of a top-level leaf, a present value that a fast path appended. */
static void drop_last(struct pq_col *c)
{
    size_t len = c->phys == PQ_BYTE_ARRAY ? c->last_start : c->values.len - c->value_width;
    s3l_buf_truncate(&c->values, len);
    if (c->max_def)
        s3l_buf_truncate(&c->defs, c->defs.len - 1);
    c->n_levels--;
    c->n_values--;
}

void s3l_pq_row_abort(struct s3l_pq_writer *w)
{
    if (!w->in_row)
        return;
    uint32_t done = w->depth ? w->frames[0].child : 0; /* top-level fields the row completed */
    for (size_t i = 0; i < w->n_cols; i++) {
        struct pq_col *c = &w->cols[i];
        if (c->mark_row != w->rows_seen) {
            if (c->top_field >= 0 && (uint32_t)c->top_field < done)
                drop_last(c); /* written by a fast path */
            continue;
        }
        s3l_buf_truncate(&c->defs, (size_t)c->mark_levels); /* one byte per level entry */
        s3l_buf_truncate(&c->reps, (size_t)c->mark_levels);
        s3l_buf_truncate(&c->values, c->mark_values);
        c->n_levels = c->mark_levels;
        c->n_values = c->mark_nvalues;
    }
    s3l__pq_recount(w); /* what the row had added is gone */
    w->in_row = false;
    w->depth = 0;
    w->top = false;
}

int s3l_pq_put_null(struct s3l_pq_writer *w)
{
    const struct pq_node *n;
    int rc = guard(w);
    if (rc || (rc = expect(w, &n)) != 0)
        return rc;
    if (!n->nullable)
        return fail(w, n, "null in a required column");
    rc = emit_absent(w, n, (uint8_t)(n->def - 1));
    if (!rc)
        advance(w);
    return rc;
}

int s3l_pq_put_bool(struct s3l_pq_writer *w, bool v)
{
    const struct pq_node *n;
    int rc = guard(w);
    if (rc || (rc = expect(w, &n)) != 0)
        return rc;
    if (n->kind != PQ_LEAF || n->type.id != S3L_TYPE_BOOL)
        return fail(w, n, "expected %s, got a boolean", kind_name(n));
    uint8_t b = v ? 1 : 0;
    rc = emit(w, n, 0, &b, 1);
    if (!rc)
        advance(w);
    return rc;
}

static int put_double_node(struct s3l_pq_writer *w, const struct pq_node *n, double v)
{
    switch (n->type.id) {
    case S3L_TYPE_FLOAT64:
        return emit_f64(w, n, v);
    case S3L_TYPE_FLOAT32: {
        float f = (float)v;
        if (isfinite(v) && !isfinite(f))
            return fail(w, n, "%g is out of range for float32", v);
        return emit(w, n, 0, &f, 4);
    }
    case S3L_TYPE_FLOAT16: {
        if (isfinite(v) && fabs(v) >= 65520.0)
            return fail(w, n, "%g is out of range for float16", v);
        uint16_t h = s3l__pq_half_from_double(v);
        return emit(w, n, 0, &h, 2);
    }
    default:
        return fail(w, n, "expected %s, got a floating-point number", kind_name(n));
    }
}

/* Multiplies v by k into *out, false on overflow. */
static bool scale_i64(int64_t v, int64_t k, int64_t *out)
{
    return !__builtin_mul_overflow(v, k, out);
}

static int put_signed_node(struct s3l_pq_writer *w, const struct pq_node *n, int64_t v)
{
    static const int64_t per_day[4] = {86400LL, 86400000LL, 86400000000LL, 86400000000000LL};
    int64_t lo = INT32_MIN, hi = INT32_MAX;
    switch (n->type.id) {
    case S3L_TYPE_INT8:
        lo = INT8_MIN, hi = INT8_MAX;
        break;
    case S3L_TYPE_INT16:
        lo = INT16_MIN, hi = INT16_MAX;
        break;
    case S3L_TYPE_INT32:
    case S3L_TYPE_DATE32:
        break;
    case S3L_TYPE_UINT8:
        lo = 0, hi = UINT8_MAX;
        break;
    case S3L_TYPE_UINT16:
        lo = 0, hi = UINT16_MAX;
        break;
    case S3L_TYPE_UINT32:
        lo = 0, hi = UINT32_MAX;
        break;
    case S3L_TYPE_INT64:
    case S3L_TYPE_UINT64:
    case S3L_TYPE_TIMESTAMP:
    case S3L_TYPE_TIME64:
        lo = INT64_MIN, hi = INT64_MAX;
        if (n->type.id == S3L_TYPE_UINT64 && v < 0)
            return fail(w, n, "%lld is out of range for uint64", (long long)v);
        break;
    case S3L_TYPE_TIME32:
        lo = 0, hi = per_day[n->type.unit] - 1;
        break;
    case S3L_TYPE_FLOAT16:
    case S3L_TYPE_FLOAT32:
    case S3L_TYPE_FLOAT64:
        return put_double_node(w, n, (double)v);
    default:
        return fail(w, n, "expected %s, got an integer", kind_name(n));
    }
    if (n->type.id == S3L_TYPE_TIME64 && (v < 0 || v >= per_day[n->type.unit]))
        return fail(w, n, "%lld is not a time of day in %s", (long long)v,
                    n->type.unit == S3L_UNIT_NANO ? "nanoseconds" : "microseconds");
    if (v < lo || v > hi) {
        if (n->type.id == S3L_TYPE_TIME32)
            return fail(w, n, "%lld is not a time of day", (long long)v);
        return fail(w, n, "%lld is out of range [%lld, %lld]", (long long)v, (long long)lo,
                    (long long)hi);
    }
    /* Parquet has no second unit: time32[s] and timestamp[s] are stored in milliseconds. */
    if ((n->type.id == S3L_TYPE_TIME32 || n->type.id == S3L_TYPE_TIMESTAMP) &&
        n->type.unit == S3L_UNIT_SECOND && !scale_i64(v, 1000, &v))
        return fail(w, n, "%lld seconds cannot be held in milliseconds", (long long)v);
    if (w->cols[n->first_leaf].phys == PQ_INT32)
        return emit_i32(w, n, (int32_t)v);
    return emit_i64(w, n, v);
}

int s3l_pq_put_int(struct s3l_pq_writer *w, int64_t v)
{
    /* Fast path: a top-level integer column that needs only a range check. */
    const struct pq_node *fn = fast_node(w);
    if (fn && fn->fast_int && v >= fn->lo && v <= fn->hi) {
        int32_t v32 = (int32_t)v;
        if (fn->fast_int == 1 ? fast_append(w, fn->col, &v32, 4, false)
                              : fast_append(w, fn->col, &v, 8, false)) {
            w->frames[0].child++;
            return 0;
        }
    }
    const struct pq_node *n;
    int rc = guard(w);
    if (rc || (rc = expect(w, &n)) != 0)
        return rc;
    if (n->kind != PQ_LEAF)
        return fail(w, n, "expected %s, got an integer", kind_name(n));
    rc = put_signed_node(w, n, v);
    if (!rc)
        advance(w);
    return rc;
}

int s3l_pq_put_uint(struct s3l_pq_writer *w, uint64_t v)
{
    const struct pq_node *n;
    int rc = guard(w);
    if (rc || (rc = expect(w, &n)) != 0)
        return rc;
    if (n->kind != PQ_LEAF)
        return fail(w, n, "expected %s, got an integer", kind_name(n));
    if (v <= INT64_MAX)
        rc = put_signed_node(w, n, (int64_t)v);
    else if (n->type.id == S3L_TYPE_UINT64)
        rc = emit(w, n, 0, &v, 8);
    else if (n->type.id == S3L_TYPE_FLOAT32 || n->type.id == S3L_TYPE_FLOAT64 ||
             n->type.id == S3L_TYPE_FLOAT16)
        rc = put_double_node(w, n, (double)v);
    else if (n->type.id >= S3L_TYPE_INT8 && n->type.id <= S3L_TYPE_UINT32)
        rc = fail(w, n, "%llu is out of range", (unsigned long long)v);
    else
        rc = fail(w, n, "expected %s, got an integer", kind_name(n));
    if (!rc)
        advance(w);
    return rc;
}

int s3l_pq_put_double(struct s3l_pq_writer *w, double v)
{
    const struct pq_node *n;
    int rc = guard(w);
    if (rc || (rc = expect(w, &n)) != 0)
        return rc;
    if (n->kind != PQ_LEAF)
        return fail(w, n, "expected %s, got a number", kind_name(n));
    rc = put_double_node(w, n, v);
    if (!rc)
        advance(w);
    return rc;
}

/* Length of the valid UTF-8 prefix (RFC 3629: no overlongs, surrogates or > U+10FFFF). */
size_t s3l__pq_utf8_valid_prefix(const uint8_t *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        if (i + 8 <= n) {
            uint64_t x;
            memcpy(&x, s + i, 8);
            if (!(x & 0x8080808080808080ull)) {
                i += 8;
                continue;
            }
        }
        uint8_t c = s[i];
        if (c < 0x80) {
            i++;
            continue;
        }
        size_t k;
        uint32_t cp, min;
        if ((c & 0xE0) == 0xC0)
            k = 2, cp = c & 0x1F, min = 0x80;
        else if ((c & 0xF0) == 0xE0)
            k = 3, cp = c & 0x0F, min = 0x800;
        else if ((c & 0xF8) == 0xF0)
            k = 4, cp = c & 0x07, min = 0x10000;
        else
            return i;
        if (i + k > n)
            return i;
        for (size_t j = 1; j < k; j++) {
            if ((s[i + j] & 0xC0) != 0x80)
                return i;
            cp = cp << 6 | (s[i + j] & 0x3F);
        }
        if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
            return i;
        i += k;
    }
    return n;
}

/* "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" (RFC 9562 text form) into 16 bytes. */
static bool parse_uuid_text(const uint8_t *s, uint8_t out[16])
{
    int k = 0;
    for (int i = 0; i < 36; i++) {
        if (i == 8 || i == 13 || i == 18 || i == 23) {
            if (s[i] != '-')
                return false;
            continue;
        }
        int a = s3l_hex_value(s[i]), b = i + 1 < 36 ? s3l_hex_value(s[i + 1]) : -1;
        if (a < 0 || b < 0)
            return false;
        out[k++] = (uint8_t)(a << 4 | b);
        i++;
    }
    return k == 16;
}

/* True when s[0..n) is ASCII: the common short string needs no UTF-8 decoding. */
static inline bool ascii(const uint8_t *s, size_t n)
{
    uint8_t any = 0;
    for (size_t i = 0; i < n; i++)
        any |= s[i];
    return any < 0x80;
}

int s3l_pq_put_bytes(struct s3l_pq_writer *w, const void *data, size_t len)
{
    /* Fast path: a top-level UTF8 or BINARY column and a short value. */
    const struct pq_node *fn = fast_node(w);
    if (fn && fn->fast_bytes && len <= 4096 &&
        (fn->fast_bytes == 2 || (len <= 16 && ascii(data, len)) ||
         s3l__pq_utf8_valid_prefix(data, len) == len) &&
        fast_append(w, fn->col, data, len, true)) {
        w->frames[0].child++;
        return 0;
    }
    const struct pq_node *n;
    int rc = guard(w);
    if (rc || (rc = expect(w, &n)) != 0)
        return rc;
    if (n->kind != PQ_LEAF)
        return fail(w, n, "expected %s, got a string", kind_name(n));
    switch (n->type.id) {
    case S3L_TYPE_UTF8:
    case S3L_TYPE_JSON: {
        size_t ok = s3l__pq_utf8_valid_prefix(data, len);
        if (ok != len)
            return fail(w, n, "invalid UTF-8 at byte %zu", ok);
    }
        /* fall through */
    case S3L_TYPE_BINARY:
        if (len > (size_t)INT32_MAX / 2)
            return fail(w, n, "a value of %zu bytes is too large (at most 1 GiB)", len);
        rc = emit_bytes(w, n, data, len);
        break;
    case S3L_TYPE_UUID:
        if (len == 36) {
            uint8_t u[16];
            if (!parse_uuid_text(data, u))
                return fail(w, n, "expected 16 bytes or a UUID in text form");
            rc = emit(w, n, 0, u, 16);
            break;
        }
        /* fall through */
    case S3L_TYPE_FIXED_SIZE_BINARY:
        if (len != w->cols[n->first_leaf].value_width)
            return fail(w, n, "expected exactly %zu bytes, got %zu",
                        w->cols[n->first_leaf].value_width, len);
        rc = emit(w, n, 0, data, len);
        break;
    default:
        return fail(w, n, "expected %s, got a string", kind_name(n));
    }
    if (!rc)
        advance(w);
    return rc;
}

int s3l_pq_put_decimal(struct s3l_pq_writer *w, int64_t hi, uint64_t lo)
{
    const struct pq_node *n;
    int rc = guard(w);
    if (rc || (rc = expect(w, &n)) != 0)
        return rc;
    if (n->kind != PQ_LEAF || n->type.id != S3L_TYPE_DECIMAL128)
        return fail(w, n, "expected %s, got a decimal", kind_name(n));
    __extension__ typedef __int128 i128;
    __extension__ typedef unsigned __int128 u128;
    i128 v = (i128)(((u128)(uint64_t)hi << 64) | lo);
    u128 mag = v < 0 ? (u128)0 - (u128)v : (u128)v;
    u128 limit = 1;
    for (int i = 0; i < n->type.precision; i++)
        limit *= 10;
    if (mag >= limit)
        return fail(w, n, "more than %d digits for decimal128(%d, %d)", n->type.precision,
                    n->type.precision, n->type.scale);
    const struct pq_col *c = &w->cols[n->first_leaf];
    if (c->phys == PQ_INT32) {
        int32_t x = (int32_t)v;
        rc = emit(w, n, 0, &x, 4);
    } else if (c->phys == PQ_INT64) {
        int64_t x = (int64_t)v;
        rc = emit(w, n, 0, &x, 8);
    } else {
        /* Big-endian two's complement in type_length bytes (LogicalTypes.md, DECIMAL). */
        uint8_t be[16];
        u128 u = (u128)v;
        for (int i = 15; i >= 0; i--, u >>= 8)
            be[i] = (uint8_t)u;
        rc = emit(w, n, 0, be + 16 - c->type_length, (size_t)c->type_length);
    }
    if (!rc)
        advance(w);
    return rc;
}

int s3l_pq_put_interval(struct s3l_pq_writer *w, int32_t months, int32_t days, int64_t nanos)
{
    const struct pq_node *n;
    int rc = guard(w);
    if (rc || (rc = expect(w, &n)) != 0)
        return rc;
    if (n->kind != PQ_INTERVAL)
        return fail(w, n, "expected %s, got an interval", kind_name(n));
    rc = emit(w, n, 0, &months, 4);
    if (!rc)
        rc = emit(w, n, 1, &days, 4);
    if (!rc)
        rc = emit(w, n, 2, &nanos, 8);
    if (!rc)
        advance(w);
    return rc;
}

static int begin_group(struct s3l_pq_writer *w, enum pq_kind kind, const char *what)
{
    const struct pq_node *n;
    int rc = guard(w);
    if (rc || (rc = expect(w, &n)) != 0)
        return rc;
    if (n->kind != kind)
        return fail(w, n, "expected %s, got %s", kind_name(n), what);
    if (w->depth >= PQ_MAX_DEPTH)
        return fail(w, n, "nested too deep");
    w->frames[w->depth++] = (struct pq_frame){.node = n, .rep_before = w->cur_rep};
    w->top = false;
    return 0;
}

static int end_group(struct s3l_pq_writer *w, enum pq_kind kind, const char *what)
{
    int rc = guard(w);
    if (rc)
        return rc;
    struct pq_frame *f = &w->frames[w->depth - 1];
    const struct pq_node *n = f->node;
    if (w->depth < 2 || n->kind != kind)
        return fail(w, n, "end of %s where %s is open", what,
                    w->depth < 2 ? "no group" : kind_name(n));
    if (kind == PQ_STRUCT && f->child < n->n_children)
        return fail(w, &n->children[f->child], "missing (the struct ended early)");
    if (kind == PQ_MAP && f->child == 1)
        return fail(w, n, "a key without a value");
    if ((kind == PQ_LIST || kind == PQ_MAP) && f->items == 0) {
        w->cur_rep = f->rep_before;
        rc = emit_absent(w, n, n->item_def - 1); /* present but empty */
        if (rc)
            return rc;
    }
    w->cur_rep = f->rep_before;
    w->depth--;
    w->top = w->depth == 1; /* not poisoned: guard() passed and nothing failed since */
    advance(w);
    return 0;
}

int s3l_pq_begin_list(struct s3l_pq_writer *w)
{
    return begin_group(w, PQ_LIST, "a list");
}

int s3l_pq_end_list(struct s3l_pq_writer *w)
{
    return end_group(w, PQ_LIST, "a list");
}

int s3l_pq_begin_struct(struct s3l_pq_writer *w)
{
    return begin_group(w, PQ_STRUCT, "a struct");
}

int s3l_pq_end_struct(struct s3l_pq_writer *w)
{
    return end_group(w, PQ_STRUCT, "a struct");
}

int s3l_pq_begin_map(struct s3l_pq_writer *w)
{
    return begin_group(w, PQ_MAP, "a map");
}

int s3l_pq_end_map(struct s3l_pq_writer *w)
{
    return end_group(w, PQ_MAP, "a map");
}
