/*
 * footer_pages: the page headers of a column chunk (parquet.thrift PageHeader, DataPageHeader,
 * DictionaryPageHeader, DataPageHeaderV2), for `check` and the tests: each page is a Thrift
 * compact header followed by compressed_page_size bytes, and a chunk's pages must tile its bytes
 * [dictionary_page_offset or data_page_offset, + total_compressed_size) exactly (parquet.thrift
 * ColumnMetaData fields 7, 9, 11). Headers are decoded without allocating; page statistics and
 * other fields are skipped.
 */
#include "parquet/footer_internal.h"

#define BIT(id) (1u << (id))
#define HEADER_WINDOW 4096 /* first read per header; grown when a header is longer */

/* DataPageHeader: 1 num_values, 2 encoding, 3 definition_level_encoding,
 * 4 repetition_level_encoding (required), 5 statistics (skipped). DictionaryPageHeader:
 * 1 num_values, 2 encoding (required), 3 is_sorted. DataPageHeaderV2: 1 num_values, 2 num_nulls,
 * 3 num_rows, 4 encoding, 5 definition_levels_byte_length, 6 repetition_levels_byte_length
 * (required), 7 is_compressed (default true), 8 statistics (skipped). */
static int decode_sub(struct s3l__pqf_ctx *c, int kind, struct s3l_pq_page_header *h)
{
    struct s3l_tdec_field f;
    uint32_t seen = 0, req = kind == 8 ? 0x7e : kind == 7 ? 0x06 : 0x1e;
    int32_t *v2[] = {NULL, &h->num_values, &h->num_nulls, &h->num_rows, &h->encoding,
                     &h->def_levels_byte_length, &h->rep_levels_byte_length};
    int rc = s3l__tdec_struct_begin(&c->d);
    while (s3l__pqf_more(c, &f, &rc)) {
        seen |= f.id < 32 ? BIT(f.id) : 0;
        int32_t *dst = NULL;
        if (kind == 8 && f.id >= 1 && f.id <= 6)
            dst = v2[f.id];
        else if (kind != 8 && f.id == 1)
            dst = &h->num_values;
        else if (kind != 8 && f.id == 2)
            dst = &h->encoding;
        if (dst) {
            rc = s3l__tdec_expect(&c->d, &f, S3L_TDEC_I32);
            if (rc == 0)
                rc = s3l__tdec_i32(&c->d, dst);
        } else if (kind == 8 && f.id == 7) {
            rc = s3l__tdec_expect(&c->d, &f, S3L_TDEC_TRUE);
            h->is_compressed = f.bool_value;
        } else {
            rc = s3l__tdec_skip_field(&c->d, &f);
        }
    }
    return s3l__pqf_end(c, rc, seen, req, "page header misses a required field");
}

/* PageHeader: 1 type, 2 uncompressed_page_size, 3 compressed_page_size (required), 4 crc,
 * 5 data_page_header, 6 index_page_header, 7 dictionary_page_header, 8 data_page_header_v2. */
static int decode_header(struct s3l__pqf_ctx *c, struct s3l_pq_page_header *h)
{
    struct s3l_tdec_field f;
    uint32_t seen = 0;
    int rc = s3l__tdec_struct_begin(&c->d);
    while (s3l__pqf_more(c, &f, &rc)) {
        seen |= f.id < 32 ? BIT(f.id) : 0;
        if (f.id >= 1 && f.id <= 4) {
            int32_t *dst[] = {NULL, &h->type, &h->uncompressed_page_size,
                              &h->compressed_page_size, &h->crc};
            rc = s3l__tdec_expect(&c->d, &f, S3L_TDEC_I32);
            if (rc == 0)
                rc = s3l__tdec_i32(&c->d, dst[f.id]);
            h->has_crc = h->has_crc || f.id == 4;
        } else if (f.id == 5 || f.id == 7 || f.id == 8) {
            rc = s3l__tdec_expect(&c->d, &f, S3L_TDEC_STRUCT);
            if (rc == 0)
                rc = decode_sub(c, f.id, h);
        } else {
            rc = s3l__tdec_skip_field(&c->d, &f);
        }
    }
    return s3l__pqf_end(c, rc, seen, BIT(1) | BIT(2) | BIT(3),
                        "PageHeader misses a required field (1-3)");
}

int s3l_pq_page_header_decode(const void *data, size_t len, uint64_t base,
                              struct s3l_pq_page_header *out, struct s3l_error *err)
{
    struct s3l_pq_footer_mem mem = {.max = 0}; /* nothing is allocated */
    struct s3l__pqf_ctx c = {.mem = &mem};
    memset(out, 0, sizeof(*out));
    out->num_nulls = out->num_rows = -1;
    out->def_levels_byte_length = out->rep_levels_byte_length = -1;
    out->encoding = -1;
    out->is_compressed = true;
    s3l__tdec_init(&c.d, data, len, 0);
    int rc = decode_header(&c, out);
    if (rc == 0 && (out->compressed_page_size < 0 || out->uncompressed_page_size < 0))
        rc = s3l__tdec_fail(&c.d, "negative page size");
    if (rc)
        return s3l__tdec_error(&c.d, base, "page header", err);
    out->header_len = c.d.pos;
    return 0;
}

/* Reads and decodes the header at off, reading more when it is longer than the window. */
static int read_header(s3l_pq_read_fn read_at, void *ctx, uint64_t off, uint64_t end,
                       const struct s3l_pq_footer_options *o, const char *col, size_t k,
                       struct s3l_pq_page_header *h, struct s3l_error *err)
{
    for (uint64_t want = HEADER_WINDOW;; want *= 4) {
        uint64_t n = S3L_MIN(want, end - off);
        uint8_t *buf = s3l_malloc(n ? (size_t)n : 1);
        if (!buf)
            return s3l_error_set(err, S3L_ENOMEM, "%s: out of memory reading a page header",
                                 o->name);
        struct s3l_error tmp = {0};
        int rc = n ? read_at(ctx, off, buf, (size_t)n, err) : 0;
        if (rc == 0)
            rc = s3l_pq_page_header_decode(buf, (size_t)n, off, h, &tmp);
        s3l_free(buf);
        /* A header cut by the window is truncated Thrift: read more, unless nothing is left. */
        if (rc == S3L_ECORRUPT && n == want && want < o->max_footer_bytes)
            continue;
        if (rc == S3L_ECORRUPT)
            return s3l_error_set(err, rc, "%s: column %s, page %zu: %s", o->name, col, k,
                                 tmp.message);
        return rc;
    }
}

int s3l_pq_chunk_pages(s3l_pq_read_fn read_at, void *ctx, uint64_t file_size,
                       const struct s3l_pq_column_chunk *cc,
                       const struct s3l_pq_footer_options *opts, s3l_pq_page_fn cb, void *cb_ctx,
                       struct s3l_error *err)
{
    struct s3l_pq_footer_options o;
    s3l__pqf_options(opts, &o);
    const char *col = cc->path_str ? cc->path_str : "?";
    int64_t start = cc->dictionary_page_offset >= 0 ? cc->dictionary_page_offset
                                                    : cc->data_page_offset;
    if (!cc->has_meta_data || start < 0 || cc->total_compressed_size < 0 ||
        (uint64_t)start > file_size ||
        (uint64_t)cc->total_compressed_size > file_size - (uint64_t)start)
        return s3l_error_set(err, S3L_ECORRUPT, "%s: column %s: chunk bytes lie beyond the file",
                             o.name, col);
    uint64_t off = (uint64_t)start, end = off + (uint64_t)cc->total_compressed_size;
    for (size_t k = 0; off < end; k++) {
        struct s3l_pq_page_header h;
        int rc = read_header(read_at, ctx, off, end, &o, col, k, &h, err);
        if (rc)
            return rc;
        uint64_t size = h.header_len + (uint64_t)h.compressed_page_size;
        if (size > end - off)
            return s3l_error_set(err, S3L_ECORRUPT, "%s: column %s, page %zu at offset %llu: "
                                 "%llu bytes overrun the chunk's end at %llu", o.name, col, k,
                                 (unsigned long long)off, (unsigned long long)size,
                                 (unsigned long long)end);
        rc = cb ? cb(cb_ctx, off, &h) : 0;
        if (rc)
            return rc;
        off += size;
    }
    return 0;
}
