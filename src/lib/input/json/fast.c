/*
 * The converter's fast path for NDJSON lines: the bytes of a flat record go straight into the
 * row sink, without a tape (scan.c) and without the generic walk (convert.c). Most lines of a
 * real feed are flat objects of scalars whose keys come in the same order every time; for those,
 * building a tape and walking it again cost more than half of a whole `s3land write`.
 *
 * The fast path is exact or silent: it reads the whole line into one value per column first,
 * and calls the sink only when every value is one it can write exactly as s3l_convert would
 * (same parse functions, same coercions). Whatever it does not take on -- escapes, nested values,
 * unknown or repeated keys, values that need a coercion or do not fit, malformed JSON -- makes it
 * answer S3L__CONVERT_FALLBACK with nothing written, and the generic path (which also writes every
 * error message) handles the record. tests/unit/test_json_fast.c checks that both paths give the
 * same sink calls, and tests/fuzz/fuzz_json_fast.c does so on arbitrary lines.
 *
 * The grammar checked is RFC 8259's (sections 2, 4, 6, 7), on the parts the fast path accepts;
 * the per-value scanners are in fast_value.h.
 */
#include <string.h>

#include "input/convert.h"
#include "input/json/fast_value.h"
#include "input/value.h"
#include "schema/schema_int.h"

int s3l__fast_init(struct s3l_converter *c)
{
    size_t n = c->schema->n_fields;
    c->fast = s3l_calloc(n + 1, sizeof(*c->fast));
    c->fval = s3l_calloc(n + 1, sizeof(*c->fval));
    if (!c->fast || !c->fval)
        return S3L_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        const struct s3l_field *f = &c->schema->fields[i];
        struct s3l__fast_col *fc = &c->fast[i];
        fc->nullable = f->nullable;
        /* A name matched against a key's raw bytes must read the same raw and decoded. */
        fc->plain_name = true;
        for (const char *q = f->name; *q; q++)
            if (*q == '"' || *q == '\\' || (uint8_t)*q < 0x20)
                fc->plain_name = false;
        /* The name and its closing quote as two masked words, when they fit in 16 bytes. */
        size_t len = strlen(f->name);
        if (fc->plain_name && len + 1 <= 16) {
            uint8_t tok[16] = {0}, mask[16] = {0};
            memcpy(tok, f->name, len);
            tok[len] = '"';
            memset(mask, 0xff, len + 1);
            memcpy(fc->tok, tok, 16);
            memcpy(fc->tok_mask, mask, 16);
            fc->tok_len = (uint8_t)(len + 1);
        }
        switch (f->type.id) {
        case S3L_TYPE_INT8: fc->kind = S3L__F_INT, fc->lo = INT8_MIN, fc->hi = INT8_MAX; break;
        case S3L_TYPE_INT16: fc->kind = S3L__F_INT, fc->lo = INT16_MIN, fc->hi = INT16_MAX; break;
        case S3L_TYPE_INT32: fc->kind = S3L__F_INT, fc->lo = INT32_MIN, fc->hi = INT32_MAX; break;
        case S3L_TYPE_INT64: fc->kind = S3L__F_INT, fc->lo = INT64_MIN, fc->hi = INT64_MAX; break;
        case S3L_TYPE_UINT8: fc->kind = S3L__F_UINT, fc->hi = UINT8_MAX; break;
        case S3L_TYPE_UINT16: fc->kind = S3L__F_UINT, fc->hi = UINT16_MAX; break;
        case S3L_TYPE_UINT32: fc->kind = S3L__F_UINT, fc->hi = UINT32_MAX; break;
        case S3L_TYPE_FLOAT16:
        case S3L_TYPE_FLOAT32:
        case S3L_TYPE_FLOAT64:
            fc->kind = S3L__F_FLOAT, fc->max = s3l__float_limit(f->type.id);
            break;
        case S3L_TYPE_UTF8: fc->kind = S3L__F_UTF8; break;
        case S3L_TYPE_BOOL: fc->kind = S3L__F_BOOL; break;
        case S3L_TYPE_DATE32: fc->kind = S3L__F_TIME, fc->time_kind = S3L__DATE; break;
        case S3L_TYPE_TIMESTAMP:
            fc->kind = S3L__F_TIME, fc->time_kind = S3L__TIMESTAMP;
            fc->unit = (uint8_t)f->type.unit;
            break;
        case S3L_TYPE_TIME32:
        case S3L_TYPE_TIME64: fc->kind = S3L__F_TIME, fc->time_kind = S3L__TIME; break;
        default: fc->kind = S3L__F_NONE; break; /* uint64 too: its text may pass int64 */
        }
    }
    return 0;
}

/* Whether the key at key (just after its opening quote) is column h, the column last seen at this
 * member's position (most likely this one again): h with *q at its closing quote, or -1. */
static inline int hinted_column(const struct s3l_converter *c, uint32_t h, const char *key,
                                const char *e, const char **q)
{
    const struct s3l__fast_col *hc = &c->fast[h];
    if (hc->tok_len && e - key >= 16) {
        /* name and closing quote against two words, masked to their length */
        uint64_t w0, w1;
        memcpy(&w0, key, 8);
        memcpy(&w1, key + 8, 8);
        if ((((w0 ^ hc->tok[0]) & hc->tok_mask[0]) | ((w1 ^ hc->tok[1]) & hc->tok_mask[1])) != 0)
            return -1;
        *q = key + hc->tok_len - 1;
        return (int)h;
    }
    if (hc->plain_name) {
        size_t len = c->name_len[h];
        if ((size_t)(e - key) > len && key[len] == '"' &&
            name_eq(key, c->schema->fields[h].name, len)) {
            *q = key + len;
            return (int)h;
        }
    }
    return -1;
}

/* Columns not given (set_small: the first 64 given; past them c->fval[i].kind 0xff is "not
 * given") are null, which they must allow: false when one does not. */
static bool nulls_for_missing(struct s3l_converter *c, uint64_t set_small)
{
    for (size_t i = 0; i < c->schema->n_fields; i++) {
        bool given = i < 64 ? (set_small >> i) & 1 : c->fval[i].kind != 0xff;
        if (!given) {
            if (!c->fast[i].nullable)
                return false;
            c->fval[i].kind = V_NULL;
        }
    }
    return true;
}

/* Reads the line's members into c->fval. false: fall back. */
static bool read_line(struct s3l_converter *c, const char *p, const char *e, size_t *seen_out)
{
    size_t nf = c->schema->n_fields, seen = 0;
    uint64_t set_small = 0; /* columns given, for the first 64 columns */
    p = skip_ws(p, e);
    if (p >= e || *p != '{')
        return false;
    p = skip_ws(p + 1, e);
    if (p < e && *p == '}') {
        p++;
    } else {
        for (uint32_t m = 0;; m++) {
            if (p >= e || *p != '"')
                return false;
            const char *key = p + 1, *q = NULL;
            uint32_t h = m < c->hint_cap ? c->hint[m] : 0;
            int col = h ? hinted_column(c, h - 1, key, e, &q) : -1;
            if (col < 0) {
                bool high;
                if (!(q = string_end(key, e, &high)))
                    return false;
                col = s3l__convert_column(c, m, key, (size_t)(q - key));
                if (col < 0)
                    return false; /* unknown (or an empty or non-UTF-8 name): counted there */
            }
            if ((size_t)col < 64) {
                if (set_small & (1ULL << col))
                    return false; /* a repeated key: the last one wins there */
                set_small |= 1ULL << col;
            } else if (c->fval[col].kind != 0xff) {
                return false;
            }
            /* Compact JSON ("k":v,"k":v) is taken without a look for white space. */
            p = q + 1;
            if (p < e && *p == ':') {
                p++;
            } else {
                p = skip_ws(p, e);
                if (p >= e || *p != ':')
                    return false;
                p++;
            }
            if (p < e && (uint8_t)*p <= ' ')
                p = skip_ws(p, e);
            if (!take_value(c, (size_t)col, &p, e))
                return false;
            seen++;
            if (p < e && (uint8_t)*p <= ' ')
                p = skip_ws(p, e);
            if (p < e && *p == ',') {
                p++;
                if (p < e && (uint8_t)*p <= ' ')
                    p = skip_ws(p, e);
                continue;
            }
            if (p < e && *p == '}') {
                p++;
                break;
            }
            return false;
        }
    }
    if (skip_ws(p, e) != e || (seen < nf && !nulls_for_missing(c, set_small)))
        return false;
    *seen_out = seen;
    return true;
}

static int put_fvals(struct s3l_converter *c, const struct s3l_record *rec,
                     const struct s3l_row_sink *sink, struct s3l_error *err);

int s3l__convert_fast(struct s3l_converter *c, const struct s3l_record *rec,
                     const struct s3l_row_sink *sink, struct s3l_error *err)
{
    size_t nf = c->schema->n_fields, seen = 0;
    if (!rec->raw)
        return S3L__CONVERT_FALLBACK;
    if (c->hint_cap < nf + 1) { /* a hint per member of a record with every column, and one */
        uint32_t *h = s3l_realloc(c->hint, (nf + 1) * sizeof(*h));
        if (!h)
            return S3L__CONVERT_FALLBACK; /* the other path reports the shortage */
        memset(h + c->hint_cap, 0, (nf + 1 - c->hint_cap) * sizeof(*h));
        c->hint = h;
        c->hint_cap = nf + 1;
    }
    for (size_t i = 64; i < nf; i++)
        c->fval[i].kind = 0xff; /* "not given yet", past the bit set */
    if (!read_line(c, rec->raw, rec->raw + rec->raw_len, &seen))
        return S3L__CONVERT_FALLBACK;
    return put_fvals(c, rec, sink, err);
}

/* The row read into c->fval, as one row of sink calls. */
static int put_fvals(struct s3l_converter *c, const struct s3l_record *rec,
                     const struct s3l_row_sink *sink, struct s3l_error *err)
{
    size_t nf = c->schema->n_fields;
    const struct s3l_row_sink_ops *o = sink->ops;
    void *k = sink->ctx;
    int rc = o->row_begin(k);
    if (rc)
        return rc;
    for (size_t i = 0; i < nf && rc == 0; i++) {
        const struct s3l__fast_val *v = &c->fval[i];
        switch (v->kind) {
        case V_NULL: rc = o->put_null(k); break;
        case V_INT: rc = o->put_int(k, v->u.i); break;
        case V_UINT: rc = o->put_uint(k, (uint64_t)v->u.i); break;
        case V_DOUBLE: rc = o->put_double(k, v->u.d); break;
        case V_BYTES: rc = o->put_bytes(k, v->str, v->len); break;
        default: rc = o->put_bool(k, v->u.b); break;
        }
    }
    /* As s3l_convert: a put the sink refused is reported by row_end. */
    int end = o->row_end(k, err);
    if (rc && end == 0)
        return s3l_error_set(err, S3L_EINTERNAL, "%s line %llu: the row sink refused a value",
                             rec->source ? rec->source : "input", (unsigned long long)rec->line);
    return end;
}

int s3l__convert_line(struct s3l_converter *c, const struct s3l_record *rec,
                     const struct s3l_row_sink *sink, struct s3l_error *err)
{
    if (rec->values)
        return s3l_convert(c, rec, sink, err);
    int rc = s3l__convert_fast(c, rec, sink, err);
    if (rc != S3L__CONVERT_FALLBACK)
        return rc;
    c->line_rec = *rec;
    rc = s3l__line_scan(&c->line_scan, &c->line_rec, err);
    if (rc != 1)
        return rc;
    return s3l_convert(c, &c->line_rec, sink, err);
}


/* ---- column batches (s3l__convert_fast_lines) ------------------------------------------------ */

/*
 * Rows the fast path reads reach a sink with put_columns (the Parquet writer, the destination's
 * lanes) up to S3L__BATCH_ROWS at a time (fewer for wide schemas), instead of row_begin, a put per
 * value and row_end per row. read_line writes each row's values straight into a row-major stage
 * (c->fval points at the row's slot while it reads), and a flush turns the stage into the columns
 * of struct s3l_column_batch one column at a time, with one tight loop per column type. Each
 * column's values are stored exactly as the row path's put would store them (the writer's rows.c):
 * integers at the column's width, DATE32 and TIME32 as int32, TIMESTAMP and TIME64 as int64 in the
 * column's unit (what take_string computed), float32 as (float)d, bool as 0/1, strings as bytes
 * and offsets, nulls as a validity bit. The Parquet writer cuts pages, row groups and (with the
 * lanes) files on the same rows either way, so the files are byte-identical
 * (tests/unit/test_json_batch.c, tests/fuzz/fuzz_json_batch.c). A value the batch would refuse
 * where the row path might not (a time of day or a timestamp[s] out of range, strings over 1 GiB)
 * sends its row down the row path after the rows before it.
 *
 * A column's values come as one fast value kind only (s3l__fast_init and take_value: an integer
 * column gets V_INT, unsigned V_UINT, float V_DOUBLE, string V_BYTES, bool V_BOOL, date and time
 * V_INT) or V_NULL, so the flush reads each column by its kind alone.
 */

enum batch_kind { B_INT, B_FLOAT32, B_FLOAT64, B_BOOL, B_STRING };

/* A batch holds at most this many rows, and is handed on once its strings reach
 * S3L__BATCH_TEXT bytes: small enough that a file closed at fileSize after a batch is at most
 * that much over (well within a page), large enough to spread the sink's per-call costs. */
#define S3L__BATCH_ROWS 1024
#define S3L__BATCH_TEXT ((size_t)256 << 10)
/* The stage takes at most this much (24 bytes a value): wide schemas get fewer rows a batch
 * (1,024 rows up to 42 columns, 8 rows from 5,461 columns), so memory follows the schema, not
 * S3L__BATCH_ROWS times its width. */
#define S3L__BATCH_STAGE ((size_t)1 << 20)
#define S3L__BATCH_MAX_VALUE ((size_t)INT32_MAX / 2) /* the writer's largest string */

void s3l__fast_batch_free(struct s3l_converter *c)
{
    struct s3l__batch *b = c->batch;
    if (!b)
        return;
    for (size_t i = 0; b->cols && i < c->schema->n_fields; i++) {
        s3l_free(b->cols[i].values);
        s3l_free(b->cols[i].offsets);
        s3l_free(b->cols[i].validity);
        s3l_buf_free(&b->cols[i].text);
    }
    s3l_free(b->cols);
    s3l_free(b->out);
    s3l_free(b->stage);
    s3l_free(b->checked);
    s3l_free(b);
    c->batch = NULL;
}

/* How column f's fast values go into a batch column; false for a type the batch does not map
 * (everything the fast path does not fill, and float16). */
static bool batch_map(const struct s3l_field *f, struct s3l__batch_col *bc)
{
    static const int64_t per_day[4] = {86400LL, 86400000LL, 86400000000LL, 86400000000000LL};
    bc->kind = B_INT, bc->lo = INT64_MIN, bc->hi = INT64_MAX;
    switch (f->type.id) {
    case S3L_TYPE_INT8: bc->width = 1; return true;
    case S3L_TYPE_INT16: bc->width = 2; return true;
    case S3L_TYPE_INT32:
    case S3L_TYPE_DATE32: bc->width = 4; return true;
    case S3L_TYPE_INT64: bc->width = 8; return true;
    case S3L_TYPE_UINT8: bc->width = 1; return true;
    case S3L_TYPE_UINT16: bc->width = 2; return true;
    case S3L_TYPE_UINT32: bc->width = 4; return true;
    case S3L_TYPE_TIME32:
    case S3L_TYPE_TIME64: /* the writer refuses a time of day outside [0, one day) */
        bc->width = f->type.id == S3L_TYPE_TIME32 ? 4 : 8;
        bc->lo = 0, bc->hi = per_day[f->type.unit] - 1;
        return true;
    case S3L_TYPE_TIMESTAMP: /* seconds are stored as milliseconds: they must fit that */
        bc->width = 8;
        if (f->type.unit == S3L_UNIT_SECOND)
            bc->lo = INT64_MIN / 1000, bc->hi = INT64_MAX / 1000;
        return true;
    case S3L_TYPE_FLOAT32: bc->kind = B_FLOAT32, bc->width = 4; return true;
    case S3L_TYPE_FLOAT64: bc->kind = B_FLOAT64, bc->width = 8; return true;
    case S3L_TYPE_BOOL: bc->kind = B_BOOL, bc->width = 1; return true;
    case S3L_TYPE_UTF8: bc->kind = B_STRING, bc->width = 0; return true;
    default: return false;
    }
}

/* Makes c->batch for c's schema: 0, 1 when a column is not mapped, S3L_ENOMEM. */
static int batch_init(struct s3l_converter *c)
{
    size_t nf = c->schema->n_fields;
    struct s3l__batch *b = s3l_calloc(1, sizeof(*b));
    if (!b)
        return S3L_ENOMEM;
    c->batch = b;
    size_t cap = S3L__BATCH_STAGE / (nf * sizeof(*b->stage)) & ~(size_t)7;
    b->cap = cap < 8 ? 8 : cap > S3L__BATCH_ROWS ? S3L__BATCH_ROWS : cap;
    b->cols = s3l_calloc(nf, sizeof(*b->cols));
    b->out = s3l_calloc(nf, sizeof(*b->out));
    b->checked = s3l_calloc(nf, sizeof(*b->checked));
    /* zeroed: a null leaves its slot as it was, which the flush reads (and ignores) */
    b->stage = s3l_calloc(b->cap * nf, sizeof(*b->stage));
    if (!b->cols || !b->out || !b->checked || !b->stage)
        return S3L_ENOMEM;
    for (size_t i = 0; i < nf; i++)
        s3l_buf_init(&b->cols[i].text, SIZE_MAX / 4);
    for (size_t i = 0; i < nf; i++) {
        struct s3l__batch_col *bc = &b->cols[i];
        if (!batch_map(&c->schema->fields[i], bc))
            return 1;
        if (bc->kind == B_STRING || bc->lo != INT64_MIN || bc->hi != INT64_MAX)
            b->checked[b->n_checked++] = i;
        bc->validity = s3l_calloc(b->cap / 8, 1);
        if (bc->kind == B_STRING)
            bc->offsets = s3l_calloc(b->cap + 1, sizeof(int32_t));
        else
            bc->values = s3l_calloc(b->cap, bc->width);
        if (!bc->validity || (!bc->offsets && !bc->values))
            return S3L_ENOMEM;
    }
    return 0;
}

/* Whether rows go to sink in batches: it takes them and every column of c's schema maps. */
static bool batch_usable(struct s3l_converter *c, const struct s3l_row_sink *sink)
{
    if (!sink->ops->put_columns || c->schema->n_fields == 0)
        return false;
    if (c->batch_state == 0) {
        int rc = batch_init(c);
        c->batch_state = rc == 0 ? 1 : 2;
        if (rc) /* unmapped (or short of memory): rows go one by one, as before */
            s3l__fast_batch_free(c);
    }
    return c->batch_state == 1;
}

/*
 * Takes the row read into the stage's next slot (c->fval) into the batch: 0, or 1 when it must
 * take the row path instead (a value out of the range the writer takes in a batch, or strings
 * past the writer's limit). Only the columns that need a look (b->checked) are looked at.
 */
static int batch_take(struct s3l_converter *c)
{
    struct s3l__batch *b = c->batch;
    const struct s3l__fast_val *v = c->fval;
    size_t text = 0;
    for (size_t j = 0; j < b->n_checked; j++) {
        size_t i = b->checked[j];
        const struct s3l__batch_col *bc = &b->cols[i];
        if (v[i].kind == V_NULL)
            continue;
        if (bc->kind == B_STRING)
            text += v[i].len;
        else if (v[i].u.i < bc->lo || v[i].u.i > bc->hi)
            return 1;
    }
    if (b->text_bytes + text > S3L__BATCH_MAX_VALUE)
        return 1;
    b->text_bytes += text;
    b->rows++;
    return 0;
}

/* One loop per integer width: the value's low bytes (the C conversion to the unsigned type of
 * that width is two's complement truncation: -5 as int8 is 0xfb). */
#define INT_COLUMN(T)                                                                              \
    do {                                                                                           \
        T *out = (T *)(void *)bc->values;                                                          \
        for (size_t r = 0; r < n; r++) {                                                           \
            bool ok = v[r * nf].kind != V_NULL;                                                    \
            out[r] = (T)(uint64_t)(ok ? v[r * nf].u.i : 0);                                        \
            present += ok;                                                                         \
        }                                                                                          \
    } while (0)

/* The stage's column i (rows [0, n), stride nf) into batch column bc. S3L_ENOMEM. */
static int batch_column(const struct s3l__fast_val *v, size_t nf, size_t n,
                        struct s3l__batch_col *bc)
{
    size_t present = 0;
    switch (bc->kind) {
    case B_INT:
        switch (bc->width) {
        case 1: INT_COLUMN(uint8_t); break;
        case 2: INT_COLUMN(uint16_t); break;
        case 4: INT_COLUMN(uint32_t); break;
        default: INT_COLUMN(uint64_t); break;
        }
        break;
    case B_FLOAT32: { /* (float)d as the writer's put_double: in range (take_number) */
        float *out = (float *)(void *)bc->values;
        for (size_t r = 0; r < n; r++) {
            bool ok = v[r * nf].kind != V_NULL;
            out[r] = ok ? (float)v[r * nf].u.d : 0.0f;
            present += ok;
        }
        break;
    }
    case B_FLOAT64: {
        double *out = (double *)(void *)bc->values;
        for (size_t r = 0; r < n; r++) {
            bool ok = v[r * nf].kind != V_NULL;
            out[r] = ok ? v[r * nf].u.d : 0.0;
            present += ok;
        }
        break;
    }
    case B_BOOL:
        for (size_t r = 0; r < n; r++) {
            bool ok = v[r * nf].kind == V_BOOL;
            bc->values[r] = ok && v[r * nf].u.b;
            present += ok;
        }
        break;
    default: {
        size_t total = 0;
        for (size_t r = 0; r < n; r++)
            total += v[r * nf].kind == V_NULL ? 0 : v[r * nf].len;
        struct s3l_buf *t = &bc->text;
        s3l_buf_reset(t);
        int rc = s3l_buf_reserve(t, total + 16);
        if (rc)
            return rc;
        uint8_t *dst = t->ptr;
        int32_t *off = bc->offsets, at = 0;
        for (size_t r = 0; r < n; r++) {
            if (v[r * nf].kind != V_NULL) {
                s3l_copy_short(dst + at, v[r * nf].str, v[r * nf].len);
                at += (int32_t)v[r * nf].len; /* at most S3L__BATCH_MAX_VALUE (batch_take) */
                present++;
            }
            off[r + 1] = at;
        }
        t->len = (size_t)at;
        break;
    }
    }
    /* The validity bitmap, made and passed only when a row is null. */
    bc->nulls = present < n;
    for (size_t r8 = 0; bc->nulls && r8 < n; r8 += 8) {
        uint8_t bits = 0;
        for (size_t r = r8; r < n && r < r8 + 8; r++)
            bits |= (uint8_t)((v[r * nf].kind != V_NULL) << (r - r8));
        bc->validity[r8 >> 3] = bits;
    }
    return 0;
}

/* Empties the batch; a string buffer a huge value grew is given back (memory follows the batch
 * size). */
static void batch_reset(struct s3l_converter *c)
{
    struct s3l__batch *b = c->batch;
    for (size_t i = 0; i < c->schema->n_fields; i++) {
        struct s3l__batch_col *bc = &b->cols[i];
        if (bc->kind == B_STRING && bc->text.cap > 2 * S3L__BATCH_TEXT) {
            s3l_buf_free(&bc->text);
            s3l_buf_init(&bc->text, SIZE_MAX / 4);
        }
    }
    b->rows = 0;
    b->text_bytes = 0;
}

/* Hands the batch to sink's put_columns and empties it: 0 or the sink's error, prefixed with
 * the input's lines when the sink refused a value; S3L_ENOMEM. */
static int batch_flush(struct s3l_converter *c, const struct s3l_row_sink *sink,
                       const char *source, struct s3l_error *err)
{
    struct s3l__batch *b = c->batch;
    size_t nf = c->schema->n_fields, n = b->rows;
    if (n == 0)
        return 0;
    int rc = 0;
    for (size_t i = 0; i < nf && rc == 0; i++) {
        struct s3l__batch_col *bc = &b->cols[i];
        rc = batch_column(b->stage + i, nf, n, bc);
        b->out[i].values = bc->kind == B_STRING ? (const void *)bc->text.ptr : bc->values;
        b->out[i].offsets = bc->kind == B_STRING ? bc->offsets : NULL;
        b->out[i].validity = bc->nulls ? bc->validity : NULL;
    }
    if (rc)
        rc = s3l_error_set(err, rc, "%s lines %llu..%llu: buffering a batch: %s",
                           source ? source : "input", (unsigned long long)b->first_line,
                           (unsigned long long)b->last_line, s3l_strerror(rc));
    else
        rc = sink->ops->put_columns(sink->ctx, n, b->out, err);
    if (rc == S3L_EINVALID_INPUT)
        s3l_error_prefix(err, "%s lines %llu..%llu: ", source ? source : "input",
                         (unsigned long long)b->first_line,
                         (unsigned long long)b->last_line);
    batch_reset(c);
    return rc;
}

/* The lines of s one row at a time (a sink without put_columns, or a schema the batch does not
 * map). */
static int lines_by_row(struct s3l_converter *c, struct s3l__lines *s, uint64_t max_rows,
                        const struct s3l_row_sink *sink, uint64_t *rows, struct s3l_error *err)
{
    uint64_t n = 0;
    int rc = 0;
    struct s3l_record rec;
    while (n < max_rows) {
        struct s3l__lines before = *s;
        if (!s3l__lines_next_inline(s, &rec))
            break;
        rc = s3l__convert_fast(c, &rec, sink, err);
        if (rc == S3L__CONVERT_FALLBACK) {
            *s = before; /* the caller converts this line */
            rc = 0;
            break;
        }
        if (rc)
            break;
        n++;
    }
    *rows = n;
    return rc;
}

/*
 * Reads the next line of s into c->fval (as s3l__convert_fast does before its sink calls): 1 with
 * a row in c->fval and *rec, 0 at the end of s, S3L__CONVERT_FALLBACK with the line left in s.
 */
static int next_row(struct s3l_converter *c, struct s3l__lines *s, struct s3l_record *rec)
{
    struct s3l__lines before = *s;
    if (!s3l__lines_next_inline(s, rec))
        return 0;
    size_t nf = c->schema->n_fields, seen = 0;
    for (size_t i = 64; i < nf; i++)
        c->fval[i].kind = 0xff; /* "not given yet", past the bit set */
    if (!read_line(c, rec->raw, rec->raw + rec->raw_len, &seen)) {
        *s = before;
        return S3L__CONVERT_FALLBACK;
    }
    return 1;
}

/* s3l__convert_fast_lines with batches: c->fval is the stage's next slot while a line is read. */
static int lines_by_batch(struct s3l_converter *c, struct s3l__lines *s, uint64_t max_rows,
                          const struct s3l_row_sink *sink, uint64_t *rows, struct s3l_error *err)
{
    struct s3l__batch *b = c->batch;
    size_t nf = c->schema->n_fields;
    uint64_t n = 0, written = 0; /* rows read; rows in the sink */
    int rc = 0;
    struct s3l_record rec;
    while (n < max_rows) {
        c->fval = b->stage + b->rows * nf;
        if (next_row(c, s, &rec) != 1)
            break;
        if (b->rows == 0)
            b->first_line = rec.line;
        if (batch_take(c) != 0) { /* the row path for this row, after the rows before it */
            if ((rc = batch_flush(c, sink, rec.source, err)) != 0)
                break;
            written = n;
            if ((rc = put_fvals(c, &rec, sink, err)) != 0)
                break;
            written = ++n;
            continue;
        }
        b->last_line = rec.line;
        n++;
        if (b->rows == b->cap || b->text_bytes >= S3L__BATCH_TEXT) {
            if ((rc = batch_flush(c, sink, rec.source, err)) != 0)
                break;
            written = n;
        }
    }
    if (rc == 0 && (rc = batch_flush(c, sink, s->source, err)) == 0)
        written = n;
    batch_reset(c); /* a failed batch is dropped */
    *rows = written;
    return rc;
}

int s3l__convert_fast_lines(struct s3l_converter *c, struct s3l__lines *s, uint64_t max_rows,
                           const struct s3l_row_sink *sink, uint64_t *rows,
                           struct s3l_error *err)
{
    size_t nf = c->schema->n_fields;
    if (!batch_usable(c, sink))
        return lines_by_row(c, s, max_rows, sink, rows, err);
    if (c->hint_cap < nf + 1) { /* as s3l__convert_fast */
        uint32_t *h = s3l_realloc(c->hint, (nf + 1) * sizeof(*h));
        if (!h)
            return lines_by_row(c, s, max_rows, sink, rows, err);
        memset(h + c->hint_cap, 0, (nf + 1 - c->hint_cap) * sizeof(*h));
        c->hint = h;
        c->hint_cap = nf + 1;
    }
    struct s3l__fast_val *fval = c->fval;
    int rc = lines_by_batch(c, s, max_rows, sink, rows, err);
    c->fval = fval;
    return rc;
}
