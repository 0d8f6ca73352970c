/*
 * The column-batch API (include/s3l/parquet.h, s3l_pq_write_columns): rows of flat schemas given
 * as one array per column (Arrow's memory layout: values, int32 offsets for variable-length
 * values, an LSB-first validity bitmap). The whole batch is validated first, so a rejected batch
 * leaves no trace; then it is appended in pieces of at most SLICE rows, each piece column by
 * column, cut where the row API would look at the columns after a row (a page or the row group
 * full, a budget charge), so that pages, row groups and statistics come out byte-identical to
 * the same rows given through the row API (tests/unit/test_pq_writer.c, test_json_batch.c).
 */
#include <stdio.h>

#include "schema/schema_int.h"
#include "parquet/pq.h"

#define SLICE 4096

static inline bool present(const struct s3l_pq_column_batch *b, size_t r)
{
    return !b->validity || (b->validity[r >> 3] >> (r & 7)) & 1;
}

static const int64_t per_day[4] = {86400LL, 86400000LL, 86400000000LL, 86400000000000LL};

__extension__ typedef __int128 pq_i128;

static pq_i128 decimal_at(const struct s3l_pq_column_batch *b, size_t r)
{
    uint64_t lo, hi;
    memcpy(&lo, (const uint8_t *)b->values + 16 * r, 8);
    memcpy(&hi, (const uint8_t *)b->values + 16 * r + 8, 8);
    __extension__ unsigned __int128 u = ((unsigned __int128)hi << 64) | lo;
    return (pq_i128)u;
}

/* Checks one value of column n at row r of the batch; fills err and returns its code. */
static int check_value(const struct pq_node *n, const struct s3l_pq_column_batch *b, size_t r,
                       struct s3l_error *err)
{
    const struct s3l_type *t = &n->type;
    switch (t->id) {
    case S3L_TYPE_UTF8:
    case S3L_TYPE_JSON:
    case S3L_TYPE_BINARY: {
        int32_t a = b->offsets[r], e = b->offsets[r + 1];
        if (a < 0 || e < a || e - a > INT32_MAX / 2)
            return s3l_error_set(err, S3L_EINVALID_INPUT,
                                 "row %zu of the batch, column %s: bad offsets %d..%d", r, n->path,
                                 a, e);
        if (t->id != S3L_TYPE_BINARY) {
            const uint8_t *p = (const uint8_t *)b->values + a;
            size_t ok = s3l__pq_utf8_valid_prefix(p, (size_t)(e - a));
            if (ok != (size_t)(e - a))
                return s3l_error_set(err, S3L_EINVALID_INPUT,
                                     "row %zu of the batch, column %s: "
                                     "invalid UTF-8 at byte %zu",
                                     r, n->path, ok);
        }
        return 0;
    }
    case S3L_TYPE_DECIMAL128: {
        pq_i128 v = decimal_at(b, r);
        __extension__ unsigned __int128 mag = v < 0 ? -(unsigned __int128)v : (unsigned __int128)v,
                                        lim = 1;
        for (int i = 0; i < t->precision; i++)
            lim *= 10;
        if (mag >= lim)
            return s3l_error_set(err, S3L_EINVALID_INPUT,
                                 "row %zu of the batch, column %s: "
                                 "more than %d digits for decimal128(%d, %d)",
                                 r, n->path, t->precision, t->precision, t->scale);
        return 0;
    }
    case S3L_TYPE_TIME32:
    case S3L_TYPE_TIME64: {
        int64_t v = 0;
        if (t->id == S3L_TYPE_TIME32) {
            int32_t x;
            memcpy(&x, (const uint8_t *)b->values + 4 * r, 4);
            v = x;
        } else {
            memcpy(&v, (const uint8_t *)b->values + 8 * r, 8);
        }
        if (v < 0 || v >= per_day[t->unit])
            return s3l_error_set(err, S3L_EINVALID_INPUT,
                                 "row %zu of the batch, column %s: "
                                 "%lld is not a time of day",
                                 r, n->path, (long long)v);
        return 0;
    }
    case S3L_TYPE_TIMESTAMP: {
        int64_t v;
        memcpy(&v, (const uint8_t *)b->values + 8 * r, 8);
        if (t->unit == S3L_UNIT_SECOND && (v > INT64_MAX / 1000 || v < INT64_MIN / 1000))
            return s3l_error_set(err, S3L_EINVALID_INPUT,
                                 "row %zu of the batch, column %s: "
                                 "%lld seconds cannot be held in milliseconds",
                                 r, n->path, (long long)v);
        return 0;
    }
    default:
        return 0;
    }
}

static bool needs_value_check(enum s3l_type_id id)
{
    return id == S3L_TYPE_UTF8 || id == S3L_TYPE_JSON || id == S3L_TYPE_BINARY ||
           id == S3L_TYPE_DECIMAL128 || id == S3L_TYPE_TIME32 || id == S3L_TYPE_TIME64 ||
           id == S3L_TYPE_TIMESTAMP;
}

/* Whether data[0..n) is all ASCII (then every UTF-8 value inside it is valid). */
static bool all_ascii(const uint8_t *p, size_t n)
{
    uint64_t acc = 0;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t x;
        memcpy(&x, p + i, 8);
        acc |= x;
    }
    for (; i < n; i++)
        acc |= p[i];
    return !(acc & 0x8080808080808080ull);
}

/* Checks rows [first, n_rows) of the batch. */
static int validate(struct s3l_pq_writer *w, size_t first, size_t n_rows,
                    const struct s3l_pq_column_batch *cols, struct s3l_error *err)
{
    for (size_t i = 0; i < w->root.n_children; i++) {
        const struct pq_node *n = &w->root.children[i];
        const struct s3l_pq_column_batch *b = &cols[i];
        enum s3l_type_id id = n->type.id;
        bool var = id == S3L_TYPE_UTF8 || id == S3L_TYPE_JSON || id == S3L_TYPE_BINARY;
        if (first < n_rows && (!b->values || (var && !b->offsets)))
            return s3l_error_set(err, S3L_EINVALID_ARGUMENT, "column %s: no values%s", n->path,
                                 var ? " or offsets" : "");
        bool check = needs_value_check(id);
        if (var && first < n_rows) {
            /* Offsets in order and all-ASCII text: nothing more to look at per value. One
             * unsigned compare per value (a negative step wraps high), no early exit: the loop
             * vectorises. */
            bool ordered = b->offsets[first] >= 0;
            uint64_t bad = 0;
            for (size_t r = first; r < n_rows; r++)
                bad |= (uint64_t)((int64_t)b->offsets[r + 1] - b->offsets[r]) > INT32_MAX / 2;
            ordered = ordered && !bad;
            if (ordered && (id == S3L_TYPE_BINARY ||
                            all_ascii((const uint8_t *)b->values + b->offsets[first],
                                      (size_t)(b->offsets[n_rows] - b->offsets[first]))))
                check = false;
        }
        if (id == S3L_TYPE_TIMESTAMP && n->type.unit != S3L_UNIT_SECOND)
            check = false;
        if (!check && (n->nullable || !b->validity))
            continue;
        for (size_t r = first; r < n_rows; r++) {
            if (!present(b, r)) {
                if (!n->nullable)
                    return s3l_error_set(err, S3L_EINVALID_INPUT,
                                         "row %zu of the batch, column "
                                         "%s: null in a required column",
                                         r, n->path);
                continue;
            }
            int rc = check ? check_value(n, b, r, err) : 0;
            if (rc)
                return rc;
        }
    }
    return 0;
}

/* Whether a value is stored exactly as the batch gives it (same width, no conversion). */
static bool stored_as_given(const struct pq_col *c, const struct s3l_type *t)
{
    switch (t->id) {
    case S3L_TYPE_INT32:
    case S3L_TYPE_INT64:
    case S3L_TYPE_UINT32:
    case S3L_TYPE_UINT64:
    case S3L_TYPE_DATE32:
    case S3L_TYPE_TIME64:
    case S3L_TYPE_FLOAT16:
    case S3L_TYPE_FLOAT32:
    case S3L_TYPE_FLOAT64:
    case S3L_TYPE_BOOL:
    case S3L_TYPE_FIXED_SIZE_BINARY:
    case S3L_TYPE_UUID:
        return true;
    case S3L_TYPE_TIMESTAMP:
    case S3L_TYPE_TIME32:
        return t->unit != S3L_UNIT_SECOND;
    default:
        (void)c;
        return false;
    }
}

/* The fast cases: values copied as they are, and strings. */
static bool append_fast(struct pq_col *c, const struct pq_node *n,
                        const struct s3l_pq_column_batch *b, size_t r0, size_t k, uint64_t *nv)
{
    uint8_t *dst = c->values.ptr + c->values.len;
    const uint8_t *src = b->values;
    size_t w = c->value_width;
    if (stored_as_given(c, &n->type)) {
        if (!b->validity) {
            memcpy(dst, src + r0 * w, k * w);
            dst += k * w;
        } else if (w == 8) {
            for (size_t r = r0; r < r0 + k; r++)
                if (present(b, r))
                    memcpy(dst, src + 8 * r, 8), dst += 8;
        } else {
            for (size_t r = r0; r < r0 + k; r++)
                if (present(b, r))
                    memcpy(dst, src + w * r, w), dst += w;
        }
    } else if (c->phys == PQ_BYTE_ARRAY) {
        const int32_t *off = b->offsets;
        int32_t end = off[r0 + k]; /* reads stay inside the caller's data */
        for (size_t r = r0; r < r0 + k; r++) {
            if (!present(b, r))
                continue;
            uint32_t len = (uint32_t)(off[r + 1] - off[r]);
            memcpy(dst, &len, 4);
            if (len <= 8 && off[r] + 8 <= end) /* short: one 8-byte move into the slack */
                memcpy(dst + 4, src + off[r], 8);
            else
                memcpy(dst + 4, src + off[r], len);
            dst += 4 + (size_t)len;
        }
    } else {
        return false;
    }
    size_t got = (size_t)(dst - (c->values.ptr + c->values.len));
    if (c->phys != PQ_BYTE_ARRAY)
        *nv = got / w;
    else
        *nv = 0; /* counted by the caller from the validity */
    c->values.len += got;
    return true;
}

/* Writes present row r of the batch as column c's PLAIN value at dst; returns the byte after it.
 * Every Arrow type of the batch API (s3l/parquet.h) is converted here: narrow integers widen to
 * INT32, second units become milliseconds, decimals take the column's physical type. */
static inline uint8_t *put_value(const struct pq_col *c, const struct s3l_type *t,
                                 const struct s3l_pq_column_batch *b, size_t r, uint8_t *dst)
{
    const uint8_t *src = b->values;
    int64_t v64;
    int32_t v32;
    switch (t->id) {
    case S3L_TYPE_INT8:
        v32 = ((const int8_t *)src)[r];
        goto put32;
    case S3L_TYPE_UINT8:
        v32 = src[r];
        goto put32;
    case S3L_TYPE_INT16:
        v32 = ((const int16_t *)(const void *)src)[r];
        goto put32;
    case S3L_TYPE_UINT16:
        v32 = ((const uint16_t *)(const void *)src)[r];
        goto put32;
    case S3L_TYPE_TIME32:
        memcpy(&v32, src + 4 * r, 4);
        if (t->unit == S3L_UNIT_SECOND)
            v32 *= 1000; /* Parquet has no second unit; checked to fit a day */
        goto put32;
    case S3L_TYPE_TIMESTAMP:
        memcpy(&v64, src + 8 * r, 8);
        if (t->unit == S3L_UNIT_SECOND)
            v64 *= 1000;
        memcpy(dst, &v64, 8);
        return dst + 8;
    case S3L_TYPE_DECIMAL128: {
        pq_i128 v = decimal_at(b, r);
        if (c->phys == PQ_INT32) {
            v32 = (int32_t)v;
            goto put32;
        }
        if (c->phys == PQ_INT64) {
            v64 = (int64_t)v;
            memcpy(dst, &v64, 8);
            return dst + 8;
        }
        __extension__ unsigned __int128 u = (unsigned __int128)v;
        for (int i = c->type_length - 1; i >= 0; i--, u >>= 8)
            dst[i] = (uint8_t)u;
        return dst + c->type_length;
    }
    case S3L_TYPE_UTF8:
    case S3L_TYPE_JSON:
    case S3L_TYPE_BINARY: {
        uint32_t len = (uint32_t)(b->offsets[r + 1] - b->offsets[r]);
        memcpy(dst, &len, 4);
        memcpy(dst + 4, src + b->offsets[r], len);
        return dst + (4 + (size_t)len);
    }
    default: /* stored as given: bool bytes, int32/64, floats, float16 bits, fixed bytes */
        memcpy(dst, src + c->value_width * r, c->value_width);
        return dst + c->value_width;
    }
put32:
    memcpy(dst, &v32, 4);
    return dst + 4;
}

/* After append_fast copied the values: the definition levels and the counts of rows
 * [r0, r0 + k) (nv: the values written, recounted for BYTE_ARRAY from the validity). */
static void append_fast_levels(struct pq_col *c, const struct s3l_pq_column_batch *b, size_t r0,
                               size_t k, uint8_t *def, uint64_t nv)
{
    if (def) {
        if (!b->validity) {
            memset(def, c->max_def, k);
        } else {
            for (size_t r = r0; r < r0 + k; r++)
                *def++ = present(b, r) ? c->max_def : (uint8_t)(c->max_def - 1);
        }
        c->defs.len += k;
    }
    if (c->phys == PQ_BYTE_ARRAY) {
        nv = 0;
        for (size_t r = r0; r < r0 + k; r++)
            nv += present(b, r);
    }
    c->values.ptr[c->values.len] = 0;
    c->n_levels += k;
    c->n_values += nv;
}

/* Appends rows [r0, r0 + k) of one column. */
static int append(struct pq_col *c, const struct pq_node *n, const struct s3l_pq_column_batch *b,
                  size_t r0, size_t k)
{
    const struct s3l_type *t = &n->type;
    bool var = c->phys == PQ_BYTE_ARRAY;
    size_t need =
        var ? (size_t)(b->offsets[r0 + k] - b->offsets[r0]) + 4 * k + 8 : k * c->value_width;
    /* s3l_buf_reserve only when short of room: a piece is often 16 rows, the call adds up */
    int rc = c->values.len + need + 1 > c->values.cap ? s3l_buf_reserve(&c->values, need) : 0;
    if (!rc && c->max_def && c->defs.len + k + 1 > c->defs.cap)
        rc = s3l_buf_reserve(&c->defs, k);
    if (rc)
        return rc;
    uint8_t *def = c->max_def ? c->defs.ptr + c->defs.len : NULL;
    uint64_t nv = 0;
    if (append_fast(c, n, b, r0, k, &nv)) {
        append_fast_levels(c, b, r0, k, def, nv);
        return 0;
    }
    uint8_t *dst = c->values.ptr + c->values.len;
    for (size_t r = r0; r < r0 + k; r++) {
        bool ok = present(b, r);
        if (def)
            *def++ = ok ? c->max_def : (uint8_t)(c->max_def - 1);
        if (!ok)
            continue;
        nv++;
        dst = put_value(c, t, b, r, dst);
    }
    c->values.len = (size_t)(dst - c->values.ptr);
    c->values.ptr[c->values.len] = 0;
    if (def)
        c->defs.len += k;
    c->n_levels += k;
    c->n_values += nv;
    return 0;
}

/* The bytes row r of column c adds to its page buffers, as the row API counts them in
 * w->added: the definition level byte, and a present value's PLAIN bytes. */
static inline uint64_t row_growth(const struct pq_col *c, const struct s3l_pq_column_batch *b,
                                  size_t r)
{
    uint64_t g = c->max_def ? 1 : 0;
    if (!present(b, r))
        return g;
    if (c->phys == PQ_BYTE_ARRAY)
        return g + 4 + (uint64_t)(b->offsets[r + 1] - b->offsets[r]);
    return g + c->value_width;
}

/* The bytes rows [r0, r0 + k) of column c add to its page buffers. */
static uint64_t rows_growth(const struct pq_col *c, const struct s3l_pq_column_batch *b, size_t r0,
                            size_t k)
{
    if (!b->validity)
        return (c->max_def ? k : 0) +
               (c->phys == PQ_BYTE_ARRAY
                    ? 4 * (uint64_t)k + (uint64_t)(b->offsets[r0 + k] - b->offsets[r0])
                    : (uint64_t)k * c->value_width);
    uint64_t g = 0;
    for (size_t r = r0; r < r0 + k; r++)
        g += row_growth(c, b, r);
    return g;
}

/*
 * The rows of the batch from r0 (at most n) that go in before the row API would look at the
 * columns after a row (writer.c quiet_commit fails: the row group reaches row_group_rows rows,
 * a 16th row with a budget, or the bytes added since the last look reach w->slack), or before
 * the size estimate reaches size_limit: up to and including that row. *grew: the bytes they add
 * to the page buffers. Ending each piece there and then committing as row_end does puts every
 * page, row group and budget charge on the same row as the row API would (the files are
 * byte-identical), and lets a caller close a file on the row where it would with rows.
 */
static size_t piece(const struct s3l_pq_writer *w, const struct s3l_pq_column_batch *cols,
                    size_t r0, size_t n, uint64_t size_limit, uint64_t *grew)
{
    size_t k = n;
    uint64_t room = w->rg_rows_max - w->rg_rows; /* >= 1: a full row group was flushed */
    if (room < k)
        k = (size_t)room;
    if (w->budget)
        k = S3L_MIN(k, (size_t)(16 - (w->rg_rows & 15)));
    /* s3l_pq_writer_size_estimate is base + added: it reaches the limit when added does this */
    uint64_t base = w->est_base;
    uint64_t slack = S3L_MIN(w->slack, size_limit > base ? size_limit - base : 0);
    uint64_t g = 0;
    for (size_t i = 0; i < w->n_cols; i++)
        g += rows_growth(&w->cols[i], &cols[i], r0, k);
    if (w->added + g < slack) {
        *grew = g;
        return k;
    }
    /* Some row of the piece fills a page (or the row group, the budget mark, the file): which. */
    g = 0;
    for (size_t r = r0; r < r0 + k; r++) {
        for (size_t i = 0; i < w->n_cols; i++)
            g += row_growth(&w->cols[i], &cols[i], r);
        if (w->added + g >= slack) {
            *grew = g;
            return r - r0 + 1;
        }
    }
    *grew = g; /* not reached: the sum over the piece reached the slack */
    return k;
}

int s3l_pq_write_columns_until(struct s3l_pq_writer *w, size_t n_rows,
                               const struct s3l_pq_column_batch *cols, size_t first,
                               uint64_t size_limit, size_t *done_out, struct s3l_error *err)
{
    *done_out = 0;
    if (w->closed || w->in_row)
        return s3l_error_set(err, S3L_ESTATE, "parquet writer: a column batch %s",
                             w->closed ? "after close" : "inside a row");
    if (w->sticky)
        return s3l__pq_report(w, err);
    for (size_t i = 0; i < w->root.n_children; i++)
        if (w->root.children[i].kind != PQ_LEAF)
            return s3l_error_set(err, S3L_EUNSUPPORTED,
                                 "column %s: the column-batch API takes "
                                 "primitive columns only",
                                 w->root.children[i].path);
    int rc = validate(w, first, n_rows, cols, err);
    if (rc)
        return rc;
    for (size_t done = first; done < n_rows;) {
        uint64_t grew = 0;
        size_t k = piece(w, cols, done, S3L_MIN((size_t)SLICE, n_rows - done), size_limit, &grew);
        for (size_t i = 0; i < w->n_cols; i++) {
            rc = append(&w->cols[i], &w->root.children[i], &cols[i], done, k);
            if (rc)
                return s3l__pq_report(w, (s3l__pq_set_sticky(w, rc, "buffering a batch"), err));
        }
        w->rows += k;
        w->rg_rows += k;
        w->rows_seen += k;
        w->added += grew;
        done += k;
        *done_out = done - first;
        /* As s3l_pq_row_end after the piece's last row: a quiet commit unless a look is due. */
        rc = s3l__pq_rows_committed(w, false, err);
        if (rc)
            return rc;
        if (s3l_pq_writer_size_estimate(w) >= size_limit)
            break; /* as a caller closing the file after this row would */
    }
    return 0;
}

int s3l_pq_write_columns(struct s3l_pq_writer *w, size_t n_rows,
                         const struct s3l_pq_column_batch *cols, struct s3l_error *err)
{
    size_t done;
    return s3l_pq_write_columns_until(w, n_rows, cols, 0, UINT64_MAX, &done, err);
}
