/*
 * footer_index: the page index of one column chunk (apache/parquet-format PageIndex.md;
 * parquet.thrift structs ColumnIndex, OffsetIndex, PageLocation). Its location is in the
 * ColumnChunk (fields 4-7); this file reads that byte range and decodes it. Lists of bools are
 * accepted with either element type code (1 or 2) since writers differ, and the per-page lists
 * must all have one entry per page.
 */
#include "parquet/footer_internal.h"

#define BIT(id) (1u << (id))

static int i64_list(struct s3l__pqf_ctx *c, const struct s3l_tdec_field *f, int64_t **out,
                    size_t *n)
{
    int rc = s3l__pqf_list_enter(c, f, S3L_TDEC_I64, sizeof(int64_t), (void **)out, n);
    for (size_t i = 0; rc == 0 && i < *n; i++)
        rc = s3l__tdec_i64(&c->d, &(*out)[i]);
    return rc ? rc : s3l__tdec_list_end(&c->d);
}

static int bool_list(struct s3l__pqf_ctx *c, const struct s3l_tdec_field *f, bool **out,
                     size_t *n)
{
    int rc = s3l__pqf_list_enter(c, f, S3L_TDEC_FALSE, sizeof(bool), (void **)out, n);
    for (size_t i = 0; rc == 0 && i < *n; i++)
        rc = s3l__tdec_bool_elem(&c->d, &(*out)[i]);
    return rc ? rc : s3l__tdec_list_end(&c->d);
}

static int bytes_list(struct s3l__pqf_ctx *c, const struct s3l_tdec_field *f,
                      struct s3l_pq_bytes **out, size_t *n)
{
    int rc = s3l__pqf_list_enter(c, f, S3L_TDEC_BINARY, sizeof(**out), (void **)out, n);
    struct s3l_slice s;
    for (size_t i = 0; rc == 0 && i < *n; i++) {
        rc = s3l__tdec_binary(&c->d, &s);
        if (rc == 0)
            rc = s3l__pqf_bytes(c, s, &(*out)[i]);
    }
    return rc ? rc : s3l__tdec_list_end(&c->d);
}

/* ColumnIndex: 1 null_pages, 2 min_values, 3 max_values, 4 boundary_order (required),
 * 5 null_counts; 6-8 (histograms, nan_counts) are skipped. */
static int decode_column_index(struct s3l__pqf_ctx *c, struct s3l_pq_column_index *ci)
{
    struct s3l_tdec_field f;
    uint32_t seen = 0;
    size_t n_null = 0, n_min = 0, n_max = 0, n_counts = 0;
    int rc = s3l__tdec_struct_begin(&c->d);
    while (s3l__pqf_more(c, &f, &rc)) {
        seen |= f.id < 32 ? BIT(f.id) : 0;
        switch (f.id) {
        case 1: rc = bool_list(c, &f, &ci->null_pages, &n_null); break;
        case 2: rc = bytes_list(c, &f, &ci->min_values, &n_min); break;
        case 3: rc = bytes_list(c, &f, &ci->max_values, &n_max); break;
        case 4:
            rc = s3l__tdec_expect(&c->d, &f, S3L_TDEC_I32);
            if (rc == 0)
                rc = s3l__tdec_i32(&c->d, &ci->boundary_order);
            break;
        case 5:
            rc = i64_list(c, &f, &ci->null_counts, &n_counts);
            ci->has_null_counts = rc == 0;
            break;
        default: rc = s3l__tdec_skip_field(&c->d, &f); break;
        }
    }
    rc = s3l__pqf_end(c, rc, seen, BIT(1) | BIT(2) | BIT(3) | BIT(4),
                      "ColumnIndex misses a required field (1-4)");
    if (rc == 0 && (n_min != n_null || n_max != n_null ||
                    (ci->has_null_counts && n_counts != n_null)))
        rc = s3l__tdec_fail(&c->d, "ColumnIndex lists of different lengths");
    ci->n_pages = n_null;
    return rc;
}

/* PageLocation: 1 offset, 2 compressed_page_size, 3 first_row_index; all required. */
static int decode_page_location(struct s3l__pqf_ctx *c, struct s3l_pq_page_location *pl)
{
    struct s3l_tdec_field f;
    uint32_t seen = 0;
    int rc = s3l__tdec_struct_begin(&c->d);
    while (s3l__pqf_more(c, &f, &rc)) {
        seen |= f.id < 32 ? BIT(f.id) : 0;
        if (f.id == 1 || f.id == 3) {
            rc = s3l__tdec_expect(&c->d, &f, S3L_TDEC_I64);
            if (rc == 0)
                rc = s3l__tdec_i64(&c->d, f.id == 1 ? &pl->offset : &pl->first_row_index);
        } else if (f.id == 2) {
            rc = s3l__tdec_expect(&c->d, &f, S3L_TDEC_I32);
            if (rc == 0)
                rc = s3l__tdec_i32(&c->d, &pl->compressed_page_size);
        } else {
            rc = s3l__tdec_skip_field(&c->d, &f);
        }
    }
    return s3l__pqf_end(c, rc, seen, BIT(1) | BIT(2) | BIT(3),
                        "PageLocation misses a required field (1-3)");
}

/* OffsetIndex: 1 page_locations (required), 2 unencoded_byte_array_data_bytes. */
static int decode_offset_index(struct s3l__pqf_ctx *c, struct s3l_pq_offset_index *oi)
{
    struct s3l_tdec_field f;
    uint32_t seen = 0;
    int rc = s3l__tdec_struct_begin(&c->d);
    while (s3l__pqf_more(c, &f, &rc)) {
        seen |= f.id < 32 ? BIT(f.id) : 0;
        if (f.id == 1) {
            rc = s3l__pqf_list_enter(c, &f, S3L_TDEC_STRUCT, sizeof(*oi->pages),
                                     (void **)&oi->pages, &oi->n_pages);
            for (size_t i = 0; rc == 0 && i < oi->n_pages; i++)
                rc = decode_page_location(c, &oi->pages[i]);
            if (rc == 0)
                rc = s3l__tdec_list_end(&c->d);
        } else if (f.id == 2) {
            rc = i64_list(c, &f, &oi->unencoded_byte_array_data_bytes, &oi->n_unencoded);
        } else {
            rc = s3l__tdec_skip_field(&c->d, &f);
        }
    }
    return s3l__pqf_end(c, rc, seen, BIT(1), "OffsetIndex without page_locations (field 1)");
}

/* Sets up a context and the object that owns its arena. */
static int start(const struct s3l_pq_footer_options *o, size_t obj_size, void **obj,
                 struct s3l__pqf_ctx *c, const void *data, size_t len, struct s3l_error *err)
{
    *obj = NULL; /* defined on every path: callers free or fill it only on success */
    if (len > o->max_footer_bytes)
        return s3l_error_set(err, S3L_ETOO_LARGE, "%s: page index of %zu bytes exceeds "
                             "max_footer_bytes (%zu)", o->name, len, o->max_footer_bytes);
    memset(c, 0, sizeof(*c));
    c->mem = s3l__pqf_mem_new(o->max_memory);
    *obj = s3l_calloc(1, obj_size);
    if (!c->mem || !*obj) {
        s3l__pqf_mem_free(c->mem);
        s3l_free(*obj);
        return s3l_error_set(err, S3L_ENOMEM, "%s: out of memory reading a page index", o->name);
    }
    s3l__tdec_init(&c->d, data, len, o->max_depth);
    return 0;
}

int s3l_pq_column_index_decode(const void *data, size_t len, uint64_t base,
                               const struct s3l_pq_footer_options *opts,
                               struct s3l_pq_column_index **out, struct s3l_error *err)
{
    struct s3l_pq_footer_options o;
    struct s3l__pqf_ctx c;
    struct s3l_pq_column_index *ci;
    s3l__pqf_options(opts, &o);
    int rc = start(&o, sizeof(*ci), (void **)&ci, &c, data, len, err);
    if (rc)
        return rc;
    ci->mem = c.mem;
    if (decode_column_index(&c, ci)) {
        rc = s3l__pqf_fail(&c, base, o.name, "ColumnIndex", err);
        s3l_pq_column_index_free(ci);
        return rc;
    }
    *out = ci;
    return 0;
}

int s3l_pq_offset_index_decode(const void *data, size_t len, uint64_t base,
                               const struct s3l_pq_footer_options *opts,
                               struct s3l_pq_offset_index **out, struct s3l_error *err)
{
    struct s3l_pq_footer_options o;
    struct s3l__pqf_ctx c;
    struct s3l_pq_offset_index *oi;
    s3l__pqf_options(opts, &o);
    int rc = start(&o, sizeof(*oi), (void **)&oi, &c, data, len, err);
    if (rc)
        return rc;
    oi->mem = c.mem;
    if (decode_offset_index(&c, oi)) {
        rc = s3l__pqf_fail(&c, base, o.name, "OffsetIndex", err);
        s3l_pq_offset_index_free(oi);
        return rc;
    }
    *out = oi;
    return 0;
}

void s3l_pq_column_index_free(struct s3l_pq_column_index *ci)
{
    if (ci) {
        s3l__pqf_mem_free(ci->mem);
        s3l_free(ci);
    }
}

void s3l_pq_offset_index_free(struct s3l_pq_offset_index *oi)
{
    if (oi) {
        s3l__pqf_mem_free(oi->mem);
        s3l_free(oi);
    }
}

/* Reads the index bytes at (off, len) of a chunk; S3L_ENOT_FOUND when the chunk has none. */
static int read_index(s3l_pq_read_fn read_at, void *ctx, uint64_t file_size, int64_t off,
                      int32_t len, const struct s3l_pq_footer_options *o,
                      const struct s3l_pq_column_chunk *cc, const char *what, uint8_t **buf,
                      struct s3l_error *err)
{
    if (off < 0 || len < 0)
        return s3l_error_set(err, S3L_ENOT_FOUND, "%s: column %s has no %s", o->name,
                             cc->path_str ? cc->path_str : "?", what);
    if ((size_t)len > o->max_footer_bytes)
        return s3l_error_set(err, S3L_ETOO_LARGE, "%s: %s of column %s is %d bytes, more than "
                             "max_footer_bytes (%zu)", o->name, what,
                             cc->path_str ? cc->path_str : "?", len, o->max_footer_bytes);
    return s3l__pqf_read_range(read_at, ctx, file_size, (uint64_t)off, (uint64_t)len, o->name, what,
                               buf, err);
}

int s3l_pq_column_index_read(s3l_pq_read_fn read_at, void *ctx, uint64_t file_size,
                             const struct s3l_pq_column_chunk *cc,
                             const struct s3l_pq_footer_options *opts,
                             struct s3l_pq_column_index **out, struct s3l_error *err)
{
    struct s3l_pq_footer_options o;
    uint8_t *buf;
    s3l__pqf_options(opts, &o);
    int rc = read_index(read_at, ctx, file_size, cc->column_index_offset, cc->column_index_length,
                        &o, cc, "ColumnIndex", &buf, err);
    if (rc)
        return rc;
    rc = s3l_pq_column_index_decode(buf, (size_t)cc->column_index_length,
                                    (uint64_t)cc->column_index_offset, &o, out, err);
    s3l_free(buf);
    return rc;
}

int s3l_pq_offset_index_read(s3l_pq_read_fn read_at, void *ctx, uint64_t file_size,
                             const struct s3l_pq_column_chunk *cc,
                             const struct s3l_pq_footer_options *opts,
                             struct s3l_pq_offset_index **out, struct s3l_error *err)
{
    struct s3l_pq_footer_options o;
    uint8_t *buf;
    s3l__pqf_options(opts, &o);
    int rc = read_index(read_at, ctx, file_size, cc->offset_index_offset, cc->offset_index_length,
                        &o, cc, "OffsetIndex", &buf, err);
    if (rc)
        return rc;
    rc = s3l_pq_offset_index_decode(buf, (size_t)cc->offset_index_length,
                                    (uint64_t)cc->offset_index_offset, &o, out, err);
    s3l_free(buf);
    return rc;
}
