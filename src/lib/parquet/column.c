/*
 * Column chunks: turns the page in progress of a leaf column into an encoded, compressed data
 * page (v1 or v2) in the chunk buffer, and writes a finished chunk (dictionary page first) to the
 * sink, keeping what the footer and the page index need.
 *
 * Page layout (parquet-format README "Data Pages"; parquet.thrift DataPageHeader/-V2):
 * v1: [rep levels: u32 length + RLE][def levels: u32 length + RLE][values], all compressed;
 *     a level section is absent when its max level is 0.
 * v2: [rep levels RLE][def levels RLE] uncompressed, then the compressed values; the lengths go
 *     in the header.
 * Values are PLAIN, or RLE_DICTIONARY: one byte of bit width then the indices in the RLE hybrid.
 * Pages always end at a row boundary, as the OffsetIndex and v2 pages require.
 */
#include "parquet/pq.h"

#define BUF_MAX (SIZE_MAX / 4)

int s3l__pq_col_init(struct pq_col *c)
{
    s3l_buf_init(&c->defs, BUF_MAX);
    s3l_buf_init(&c->reps, BUF_MAX);
    s3l_buf_init(&c->values, BUF_MAX);
    s3l_buf_init(&c->chunk, BUF_MAX);
    s3l__pq_dict_init(&c->dict);
    s3l__pq_stats_init(&c->chunk_stats);
    s3l__pq_stats_reset(&c->chunk_stats);
    c->page_index_ok = true;
    return 0;
}

void s3l__pq_col_free(struct pq_col *c)
{
    s3l_buf_free(&c->defs);
    s3l_buf_free(&c->reps);
    s3l_buf_free(&c->values);
    s3l_buf_free(&c->chunk);
    s3l__pq_dict_free(&c->dict);
    s3l__pq_stats_free(&c->chunk_stats);
    s3l_free(c->pages);
    c->pages = NULL;
}

int s3l__pq_sink_write(struct s3l_pq_writer *w, const void *p, size_t n)
{
    if (w->sticky)
        return w->sticky;
    if (n == 0)
        return 0;
    int rc = w->sink.write(w->sink.ctx, p, n, &w->sticky_err);
    if (rc) {
        w->sticky = rc;
        if (!w->sticky_err.code)
            s3l_error_set(&w->sticky_err, rc, "writing the Parquet file: %s", s3l_strerror(rc));
        return rc;
    }
    w->written += n;
    return 0;
}

static int put_u32(struct s3l_buf *b, uint32_t v)
{
    uint8_t le[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
    return s3l_buf_append(b, le, 4);
}

/* A level section; v1 prefixes its byte length (Encodings.md, RLE "length prefix" for v1). */
static int levels(const struct s3l_buf *lv, uint64_t n, uint8_t max, bool prefix,
                  struct s3l_buf *out, size_t *len)
{
    size_t start = out->len;
    int rc = 0;
    if (prefix)
        rc = put_u32(out, 0);
    size_t body = out->len;
    if (!rc)
        rc = s3l__pq_rle_u8(lv->ptr, (size_t)n, s3l__pq_bit_width(max), out);
    if (rc)
        return rc;
    size_t k = out->len - body;
    if (k > INT32_MAX)
        return S3L_ETOO_LARGE;
    if (prefix) {
        uint32_t v = (uint32_t)k;
        uint8_t le[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
        memcpy(out->ptr + start, le, 4);
    }
    *len = k;
    return 0;
}

/*
 * The values section of the page into out; *enc gets its encoding. A PLAIN page of other than
 * BOOLEAN is already what c->values holds: it is left there (*in_place) for compress_page.
 */
static int encode_values(struct s3l_pq_writer *w, struct pq_col *c, struct s3l_buf *out,
                         enum pq_encoding *enc, bool *in_place)
{
    *enc = PQ_ENC_PLAIN;
    *in_place = false;
    int rc;
    /* A page of only nulls has no values to look up: it is PLAIN (and empty). */
    if (c->dict_on && c->n_values > 0) {
        rc = s3l__pq_dict_encode(&c->dict, c, w->opts.dictionary_page_limit, &w->idx, &w->dense);
        if (rc < 0)
            return rc;
        if (rc == 0) {
            int bw = s3l__pq_bit_width(c->dict.n ? c->dict.n - 1 : 0);
            bw = bw ? bw : 1;
            rc = s3l_buf_append_byte(out, (uint8_t)bw);
            if (!rc)
                rc = s3l__pq_rle_u32((const uint32_t *)(const void *)w->idx.ptr,
                                     (size_t)c->n_values, bw, out);
            *enc = PQ_ENC_RLE_DICTIONARY;
            c->dict_used = true;
            c->n_dict_pages++;
            return rc;
        }
        c->dict_on = false; /* the dictionary is full: this page and the rest are PLAIN */
        s3l__pq_dict_drop_table(&c->dict); /* only its values are needed now, for its page */
    }
    c->plain_used = true;
    c->n_plain_pages++;
    if (c->phys == PQ_BOOLEAN)
        return s3l__pq_bitpack_bools(c->values.ptr, (size_t)c->n_values, out);
    *in_place = true;
    return 0;
}

/*
 * Compresses the page into w->scratch2: v1 the levels and values together, v2 only the values
 * (the levels are copied as they are). The levels are in w->scratch (levels_len bytes), the
 * values after them, or still in c->values when in_place. *raw gets the uncompressed size.
 * In place, v1 moves the values up in their own buffer and puts the levels before them instead
 * of copying them into the scratch buffer: a page of 15 MiB strings costs one copy less. The
 * values are not needed afterwards (statistics are taken before).
 */
static int compress_page(struct s3l_pq_writer *w, struct pq_col *c, bool v2, size_t levels_len,
                         bool in_place, size_t *raw)
{
    struct s3l_buf *body = &w->scratch, *comp = &w->scratch2;
    int rc = v2 ? s3l_buf_append(comp, body->ptr, levels_len) : 0;
    if (rc)
        return rc;
    if (!in_place) {
        *raw = body->len;
        size_t skip = v2 ? levels_len : 0;
        return s3l__codec_compress(&w->codec, body->ptr + skip, body->len - skip, comp);
    }
    *raw = levels_len + c->values.len;
    if (levels_len && !v2) {
        if ((rc = s3l_buf_reserve(&c->values, levels_len)) != 0)
            return rc;
        memmove(c->values.ptr + levels_len, c->values.ptr, c->values.len);
        memcpy(c->values.ptr, body->ptr, levels_len);
        c->values.len += levels_len;
        c->values.ptr[c->values.len] = 0;
    }
    static const uint8_t none[1];
    const uint8_t *p = c->values.ptr ? c->values.ptr : none; /* an empty page of only nulls */
    return s3l__codec_compress(&w->codec, p, c->values.len, comp);
}

static void write_page_header(struct s3l_pq_writer *w, struct pq_col *c, struct s3l_tc_enc *e,
                              enum pq_encoding enc, size_t raw, size_t comp, size_t def_len,
                              size_t rep_len, const struct pq_stats_out *so)
{
    /* PageHeader: 1 type, 2 uncompressed_page_size, 3 compressed_page_size. */
    bool v2 = w->opts.data_page_version == 2;
    s3l__tc_field_i32(e, 1, v2 ? 3 : 0); /* PageType DATA_PAGE_V2 = 3, DATA_PAGE = 0 */
    s3l__tc_field_i32(e, 2, (int32_t)raw);
    s3l__tc_field_i32(e, 3, (int32_t)comp);
    if (!v2) {
        /* 5: DataPageHeader {1 num_values, 2 encoding, 3 def enc, 4 rep enc, 5 statistics} */
        s3l__tc_field_struct(e, 5);
        s3l__tc_field_i32(e, 1, (int32_t)c->n_levels);
        s3l__tc_field_i32(e, 2, (int32_t)enc);
        s3l__tc_field_i32(e, 3, PQ_ENC_RLE);
        s3l__tc_field_i32(e, 4, PQ_ENC_RLE);
    } else {
        /* 8: DataPageHeaderV2 {1 num_values, 2 num_nulls, 3 num_rows, 4 encoding,
         *    5 definition_levels_byte_length, 6 repetition_levels_byte_length,
         *    7 is_compressed, 8 statistics} */
        s3l__tc_field_struct(e, 8);
        s3l__tc_field_i32(e, 1, (int32_t)c->n_levels);
        s3l__tc_field_i32(e, 2, (int32_t)(c->n_levels - c->n_values));
        s3l__tc_field_i32(e, 3, (int32_t)c->page_rows);
        s3l__tc_field_i32(e, 4, (int32_t)enc);
        s3l__tc_field_i32(e, 5, (int32_t)def_len);
        s3l__tc_field_i32(e, 6, (int32_t)rep_len);
        s3l__tc_field_bool(e, 7, w->opts.codec != S3L_CODEC_NONE);
    }
    if (so)
        s3l__pq_write_stats(e, v2 ? 8 : 5, so, c);
    s3l__tc_struct_end(e); /* the data page header */
    s3l__tc_struct_end(e); /* PageHeader */
}

static int record_page(struct s3l_pq_writer *w, struct pq_col *c, size_t offset, size_t size,
                       const struct pq_stats_out *so)
{
    if (s3l__array_reserve(&c->pages, &c->pages_cap, c->n_pages + 1, sizeof(*c->pages), 8))
        return S3L_ENOMEM;
    struct pq_page_info *pi = &c->pages[c->n_pages++];
    memset(pi, 0, sizeof(*pi));
    pi->offset = (int64_t)offset;
    pi->size = (int32_t)size;
    pi->first_row = (int64_t)c->page_first_row;
    pi->null_count = (int64_t)(c->n_levels - c->n_values);
    pi->null_page = c->n_values == 0;
    if (so) {
        pi->has_minmax = so->has_minmax;
        pi->min = so->min, pi->min_len = so->min_len;
        pi->max = so->max, pi->max_len = so->max_len;
    }
    if (!pi->null_page && !pi->has_minmax)
        c->page_index_ok = false; /* e.g. a page of only NaN: no column index (ColumnOrder) */
    return 0;
}

void s3l__pq_buf_trim(struct s3l_buf *b, size_t keep)
{
    if (b->cap > keep) {
        size_t max = b->max;
        s3l_buf_free(b);
        s3l_buf_init(b, max);
    }
}

/*
 * Page buffers are reused from page to page; one that a huge value (a 15 MiB string) grew is
 * given back, so that what stays allocated is bounded by the page size, not by the largest value
 * seen so far (the budget does not see reused capacity).
 */
static void trim_page_buffers(struct s3l_pq_writer *w, struct pq_col *c)
{
    size_t keep = 4 * w->opts.page_size;
    s3l__pq_buf_trim(&c->values, keep);
    s3l__pq_buf_trim(&c->defs, keep);
    s3l__pq_buf_trim(&c->reps, keep);
    s3l__pq_buf_trim(&w->scratch, keep);
    s3l__pq_buf_trim(&w->scratch2, keep);
    s3l__pq_buf_trim(&w->idx, keep);
    s3l__pq_buf_trim(&w->bitmap, keep);
    s3l__pq_buf_trim(&w->pstats.min, PQ_TRIM_BOUND);
    s3l__pq_buf_trim(&w->pstats.max, PQ_TRIM_BOUND);
}

/*
 * Room for extra more bytes in a chunk buffer, growing it by a quarter (at least step bytes)
 * instead of doubling: the chunk holds most of a row group, the budget charges its capacity, and
 * doubling would overshoot the budget by up to the whole row group.
 */
static int chunk_reserve(struct s3l_buf *b, size_t extra, size_t step)
{
    if (b->len + extra < b->cap)
        return 0;
    if (extra > b->max || b->len > b->max - extra)
        return S3L_ETOO_LARGE;
    size_t grow = S3L_MAX(b->len / 4, step);
    size_t cap = b->len + extra + 1;
    cap = cap > SIZE_MAX - grow ? cap : cap + grow;
    uint8_t *p = s3l_realloc(b->ptr, cap);
    if (!p)
        return S3L_ENOMEM;
    b->ptr = p;
    b->cap = cap;
    return 0;
}

/* The page's statistics (for its header and the page index), merged into the chunk's. */
static int page_stats(struct s3l_pq_writer *w, struct pq_col *c, enum pq_encoding enc,
                      struct pq_stats_out *so)
{
    int rc;
    if (enc == PQ_ENC_RLE_DICTIONARY && (c->phys == PQ_BYTE_ARRAY || c->phys == PQ_FLBA))
        rc = s3l__pq_stats_page_dict(c, (const uint32_t *)(const void *)w->idx.ptr, &c->dict,
                                     &w->bitmap, &w->pstats);
    else
        rc = s3l__pq_stats_page(c, &w->pstats);
    if (!rc)
        rc = s3l__pq_stats_export(c, &w->pstats, w->opts.statistics_max_len, &w->arena, so);
    if (!rc)
        rc = s3l__pq_stats_merge(c, &c->chunk_stats, &w->pstats);
    return rc;
}

int s3l__pq_page_flush(struct s3l_pq_writer *w, struct pq_col *c)
{
    if (c->n_levels == 0)
        return 0;
    /* Every committed row adds one row to every leaf's page. */
    c->page_rows = w->rg_rows - c->page_first_row;
    if (c->n_levels > INT32_MAX || c->values.len > INT32_MAX)
        return S3L_ETOO_LARGE;
    bool v2 = w->opts.data_page_version == 2;
    /* For the size estimate (size.c): what this page's buffers hold, and the dictionary before. */
    uint64_t buffered = c->values.len + c->defs.len + c->reps.len;
    size_t dict_before = c->dict.values.len;
    struct s3l_buf *body = &w->scratch, *comp = &w->scratch2;
    s3l_buf_reset(body);
    s3l_buf_reset(comp);
    size_t rep_len = 0, def_len = 0;
    int rc = 0;
    if (c->max_rep)
        rc = levels(&c->reps, c->n_levels, c->max_rep, !v2, body, &rep_len);
    if (!rc && c->max_def)
        rc = levels(&c->defs, c->n_levels, c->max_def, !v2, body, &def_len);
    size_t levels_len = body->len;
    enum pq_encoding enc;
    bool in_place = false;
    if (!rc)
        rc = encode_values(w, c, body, &enc, &in_place);
    if (rc)
        return rc;

    /* Statistics first: they read c->values, which compress_page may rewrite. */
    struct pq_stats_out so;
    bool want_stats = w->opts.statistics || w->opts.page_index;
    if (want_stats && (rc = page_stats(w, c, enc, &so)) != 0)
        return rc;
    size_t raw = 0;
    if ((rc = compress_page(w, c, v2, levels_len, in_place, &raw)) != 0)
        return rc;
    if (raw > INT32_MAX || comp->len > INT32_MAX)
        return S3L_ETOO_LARGE;
    s3l_buf_reset(&w->hdr);
    struct s3l_tc_enc e;
    s3l__tc_init(&e, &w->hdr);
    write_page_header(w, c, &e, enc, raw, comp->len, def_len, rep_len,
                      w->opts.statistics ? &so : NULL);
    if ((rc = s3l__tc_status(&e)) != 0)
        return rc;
    size_t offset = c->chunk.len;
    rc = chunk_reserve(&c->chunk, w->hdr.len + comp->len, w->opts.page_size);
    if (!rc)
        rc = s3l_buf_append(&c->chunk, w->hdr.ptr, w->hdr.len);
    if (!rc)
        rc = s3l_buf_append(&c->chunk, comp->ptr, comp->len);
    if (!rc)
        rc = record_page(w, c, offset, w->hdr.len + comp->len, want_stats ? &so : NULL);
    if (rc)
        return rc;
    c->est_raw += buffered;
    c->est_out += w->hdr.len + comp->len;
    if (c->dict.values.len > dict_before)
        c->est_dict += c->dict.values.len - dict_before;
    s3l__pq_size_ratios(c);
    c->chunk_values += (int64_t)c->n_levels;
    c->chunk_uncompressed += (int64_t)(w->hdr.len + raw);
    /* The page buffers are reused for the next page. */
    s3l_buf_reset(&c->defs);
    s3l_buf_reset(&c->reps);
    s3l_buf_reset(&c->values);
    c->n_levels = c->n_values = 0;
    c->page_first_row += c->page_rows;
    c->page_rows = 0;
    trim_page_buffers(w, c);
    return 0;
}

static int dictionary_page(struct s3l_pq_writer *w, struct pq_col *c, size_t *raw_total)
{
    struct s3l_buf *comp = &w->scratch2;
    s3l_buf_reset(comp);
    int rc = s3l__codec_compress(&w->codec, c->dict.values.ptr, c->dict.values.len, comp);
    if (rc)
        return rc;
    if (c->dict.values.len > INT32_MAX || comp->len > INT32_MAX)
        return S3L_ETOO_LARGE;
    s3l_buf_reset(&w->hdr);
    struct s3l_tc_enc e;
    s3l__tc_init(&e, &w->hdr);
    s3l__tc_field_i32(&e, 1, 2); /* PageType DICTIONARY_PAGE */
    s3l__tc_field_i32(&e, 2, (int32_t)c->dict.values.len);
    s3l__tc_field_i32(&e, 3, (int32_t)comp->len);
    s3l__tc_field_struct(&e, 7); /* DictionaryPageHeader {1 num_values, 2 encoding} */
    s3l__tc_field_i32(&e, 1, (int32_t)c->dict.n);
    s3l__tc_field_i32(&e, 2, PQ_ENC_PLAIN);
    s3l__tc_struct_end(&e);
    s3l__tc_struct_end(&e);
    if ((rc = s3l__tc_status(&e)) != 0)
        return rc;
    *raw_total = w->hdr.len + c->dict.values.len;
    rc = s3l__pq_sink_write(w, w->hdr.ptr, w->hdr.len);
    if (!rc)
        rc = s3l__pq_sink_write(w, comp->ptr, comp->len);
    return rc;
}

int s3l__pq_chunk_write(struct s3l_pq_writer *w, struct pq_col *c, struct pq_chunk_meta *meta)
{
    int rc = s3l__pq_page_flush(w, c);
    if (rc)
        return rc;
    memset(meta, 0, sizeof(*meta));
    int64_t start = (int64_t)w->written;
    meta->dict_page_offset = -1;
    size_t dict_raw = 0;
    if (c->dict_used) {
        meta->dict_page_offset = start;
        rc = dictionary_page(w, c, &dict_raw);
        if (rc)
            return rc;
    }
    meta->data_page_offset = (int64_t)w->written;
    rc = s3l__pq_sink_write(w, c->chunk.ptr, c->chunk.len);
    if (rc)
        return rc;
    meta->num_values = c->chunk_values;
    meta->total_compressed = (int64_t)w->written - start;
    meta->total_uncompressed = c->chunk_uncompressed + (int64_t)dict_raw;
    meta->encodings = 1u << PQ_ENC_RLE;
    meta->dict_pages = c->dict_used ? 1 : 0;
    meta->dict_data_pages = c->n_dict_pages;
    meta->plain_data_pages = c->n_plain_pages;
    if (c->dict_used)
        meta->encodings |= 1u << PQ_ENC_RLE_DICTIONARY | 1u << PQ_ENC_PLAIN;
    if (c->plain_used)
        meta->encodings |= 1u << PQ_ENC_PLAIN;
    if (w->opts.statistics) {
        rc = s3l__pq_stats_export(c, &c->chunk_stats, w->opts.statistics_max_len, &w->arena,
                                  &meta->stats);
        if (rc)
            return rc;
    }
    for (size_t i = 0; i < c->n_pages; i++)
        c->pages[i].offset += meta->data_page_offset;
    meta->pages = c->pages;
    meta->n_pages = c->n_pages;
    meta->ci_offset = c->page_index_ok && w->opts.page_index ? 0 : -1;
    c->pages = NULL;
    c->n_pages = c->pages_cap = 0;
    /* Reset for the next row group; buffers keep their memory. */
    /* The chunk buffer held a whole row group (the budget charged its capacity): give it back
     * unless small, so that a writer between row groups holds little. */
    s3l_buf_reset(&c->chunk);
    s3l__pq_buf_trim(&c->chunk, PQ_TRIM_CHUNK);
    s3l__pq_buf_trim(&c->chunk_stats.min, PQ_TRIM_BOUND);
    s3l__pq_buf_trim(&c->chunk_stats.max, PQ_TRIM_BOUND);
    s3l__pq_dict_reset(&c->dict);
    s3l__pq_buf_trim(&c->dict.values, 2 * w->opts.dictionary_page_limit + 64);
    c->dict_on = w->opts.dictionary && c->phys != PQ_BOOLEAN;
    c->dict_used = c->plain_used = false;
    c->n_dict_pages = c->n_plain_pages = 0;
    c->chunk_values = c->chunk_uncompressed = 0;
    s3l__pq_stats_reset(&c->chunk_stats);
    c->page_index_ok = true;
    c->page_first_row = 0;
    return 0;
}
