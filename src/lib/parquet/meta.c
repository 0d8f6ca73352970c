/*
 * The Thrift structures of parquet.thrift that the writer emits besides page headers:
 * Statistics, FileMetaData (with RowGroup, ColumnChunk, ColumnMetaData, KeyValue, ColumnOrder),
 * ColumnIndex and OffsetIndex (PageIndex.md). Field ids are cited at each call.
 */
#include "parquet/pq.h"

void s3l__pq_write_stats(struct s3l_tc_enc *e, int16_t id, const struct pq_stats_out *s,
                         const struct pq_col *c)
{
    /* Statistics: 1 max, 2 min (deprecated), 3 null_count, 5 max_value, 6 min_value,
     * 7 is_max_value_exact, 8 is_min_value_exact, 9 nan_count (FLOAT, DOUBLE, FLOAT16 only). */
    s3l__tc_field_struct(e, id);
    /* The deprecated max/min carry no sort order: readers that know only them (parquet-mr before
     * 1.10, Hive, older Impala and Presto) compare them signed, as every reader did before
     * ColumnOrder. So, as Arrow C++ and parquet-mr write them, they are written for the
     * columns whose TypeDefinedOrder is signed (parquet.thrift ColumnOrder: BOOLEAN, INT32,
     * INT64, FLOAT, DOUBLE with signed logical types: integers, dates, times, timestamps,
     * INT32/INT64 decimals), with the same bytes as max_value/min_value. Unsigned integers,
     * byte arrays, fixed-length byte arrays (float16, FLBA decimals, uuid) get only
     * min_value/max_value: a signed or bytewise comparison of those would be wrong. */
    bool legacy = s->has_minmax && (c->order == PQ_ORD_SIGNED || c->order == PQ_ORD_FLOAT ||
                                    c->order == PQ_ORD_BOOL);
    if (legacy) {
        s3l__tc_field_binary(e, 1, s->max, s->max_len);
        s3l__tc_field_binary(e, 2, s->min, s->min_len);
    }
    s3l__tc_field_i64(e, 3, s->null_count);
    if (s->has_minmax) {
        s3l__tc_field_binary(e, 5, s->max, s->max_len);
        s3l__tc_field_binary(e, 6, s->min, s->min_len);
        s3l__tc_field_bool(e, 7, s->max_exact);
        s3l__tc_field_bool(e, 8, s->min_exact);
    }
    if (c->order == PQ_ORD_FLOAT || c->order == PQ_ORD_FLOAT16)
        s3l__tc_field_i64(e, 9, s->nan_count);
    s3l__tc_struct_end(e);
}

static void column_meta(struct s3l_pq_writer *w, struct s3l_tc_enc *e, const struct pq_col *c,
                        const struct pq_chunk_meta *m)
{
    /* ColumnMetaData: 1 type, 2 encodings, 3 path_in_schema, 4 codec, 5 num_values,
     * 6 total_uncompressed_size, 7 total_compressed_size, 9 data_page_offset,
     * 11 dictionary_page_offset, 12 statistics. */
    s3l__tc_field_struct(e, 3);
    s3l__tc_field_i32(e, 1, (int32_t)c->phys);
    uint32_t n_enc = (uint32_t)__builtin_popcount(m->encodings);
    s3l__tc_field_list(e, 2, S3L_TC_I32, n_enc);
    for (int i = 0; i < 32; i++)
        if (m->encodings & (1u << i))
            s3l__tc_elem_i32(e, i);
    s3l__tc_field_list(e, 3, S3L_TC_BINARY, (uint32_t)c->n_path);
    for (size_t i = 0; i < c->n_path; i++)
        s3l__tc_elem_binary(e, c->path[i], strlen(c->path[i]));
    s3l__tc_field_i32(e, 4, (int32_t)w->opts.codec);
    s3l__tc_field_i64(e, 5, m->num_values);
    s3l__tc_field_i64(e, 6, m->total_uncompressed);
    s3l__tc_field_i64(e, 7, m->total_compressed);
    s3l__tc_field_i64(e, 9, m->data_page_offset);
    if (m->dict_page_offset >= 0)
        s3l__tc_field_i64(e, 11, m->dict_page_offset);
    if (w->opts.statistics)
        s3l__pq_write_stats(e, 12, &m->stats, c);
    /* 13: encoding_stats, list<PageEncodingStats {1 page_type, 2 encoding, 3 count}>: tells a
     * reader whether every data page is dictionary-encoded (PageType DICTIONARY_PAGE 2,
     * DATA_PAGE 0, DATA_PAGE_V2 3). */
    int32_t data_type = w->opts.data_page_version == 2 ? 3 : 0;
    const struct {
        int32_t type, enc, count;
    } es[3] = {{2, PQ_ENC_PLAIN, m->dict_pages},
               {data_type, PQ_ENC_RLE_DICTIONARY, m->dict_data_pages},
               {data_type, PQ_ENC_PLAIN, m->plain_data_pages}};
    uint32_t n_es = (es[0].count > 0) + (es[1].count > 0) + (es[2].count > 0);
    s3l__tc_field_list(e, 13, S3L_TC_STRUCT, n_es);
    for (int i = 0; i < 3; i++) {
        if (!es[i].count)
            continue;
        s3l__tc_elem_struct(e);
        s3l__tc_field_i32(e, 1, es[i].type);
        s3l__tc_field_i32(e, 2, es[i].enc);
        s3l__tc_field_i32(e, 3, es[i].count);
        s3l__tc_struct_end(e);
    }
    s3l__tc_struct_end(e);
}

static void row_group(struct s3l_pq_writer *w, struct s3l_tc_enc *e,
                      const struct pq_row_group_meta *rg, int16_t ordinal)
{
    /* RowGroup: 1 columns, 2 total_byte_size, 3 num_rows, 5 file_offset,
     * 6 total_compressed_size, 7 ordinal. */
    s3l__tc_elem_struct(e);
    s3l__tc_field_list(e, 1, S3L_TC_STRUCT, (uint32_t)w->n_cols);
    for (size_t i = 0; i < w->n_cols; i++) {
        const struct pq_chunk_meta *m = &rg->chunks[i];
        /* ColumnChunk: 2 file_offset (0: no metadata outside the footer), 3 meta_data,
         * 4 offset_index_offset, 5 offset_index_length, 6 column_index_offset,
         * 7 column_index_length. */
        s3l__tc_elem_struct(e);
        s3l__tc_field_i64(e, 2, 0);
        column_meta(w, e, &w->cols[i], m);
        if (m->oi_len > 0) {
            s3l__tc_field_i64(e, 4, m->oi_offset);
            s3l__tc_field_i32(e, 5, m->oi_len);
        }
        if (m->ci_len > 0) {
            s3l__tc_field_i64(e, 6, m->ci_offset);
            s3l__tc_field_i32(e, 7, m->ci_len);
        }
        s3l__tc_struct_end(e);
    }
    s3l__tc_field_i64(e, 2, rg->total_byte_size);
    s3l__tc_field_i64(e, 3, rg->num_rows);
    s3l__tc_field_i64(e, 5, rg->file_offset);
    s3l__tc_field_i64(e, 6, rg->total_compressed);
    s3l__tc_field_i16(e, 7, ordinal);
    s3l__tc_struct_end(e);
}

int s3l__pq_footer(struct s3l_pq_writer *w, struct s3l_buf *out)
{
    struct s3l_tc_enc e;
    s3l__tc_init(&e, out);
    /* FileMetaData: 1 version, 2 schema, 3 num_rows, 4 row_groups, 5 key_value_metadata,
     * 6 created_by, 7 column_orders. */
    s3l__tc_field_i32(&e, 1, 2);
    s3l__tc_field_list(&e, 2, S3L_TC_STRUCT, s3l__pq_schema_elements(w));
    s3l__pq_schema_write(w, &e);
    s3l__tc_field_i64(&e, 3, (int64_t)w->rows);
    s3l__tc_field_list(&e, 4, S3L_TC_STRUCT, (uint32_t)w->n_rgs);
    for (size_t i = 0; i < w->n_rgs; i++)
        row_group(w, &e, &w->rgs[i], (int16_t)i);
    if (w->opts.n_kv) {
        s3l__tc_field_list(&e, 5, S3L_TC_STRUCT, (uint32_t)w->opts.n_kv);
        for (size_t i = 0; i < w->opts.n_kv; i++) {
            s3l__tc_elem_struct(&e); /* KeyValue: 1 key, 2 value */
            s3l__tc_field_string(&e, 1, w->kv_keys[i]);
            if (w->kv_values[i])
                s3l__tc_field_string(&e, 2, w->kv_values[i]);
            s3l__tc_struct_end(&e);
        }
    }
    s3l__tc_field_string(&e, 6, w->created_by);
    /* ColumnOrder union, 1: TypeDefinedOrder (empty struct), one per leaf column. */
    s3l__tc_field_list(&e, 7, S3L_TC_STRUCT, (uint32_t)w->n_cols);
    for (size_t i = 0; i < w->n_cols; i++) {
        s3l__tc_elem_struct(&e);
        s3l__tc_field_struct(&e, 1);
        s3l__tc_struct_end(&e);
        s3l__tc_struct_end(&e);
    }
    s3l__tc_struct_end(&e);
    return s3l__tc_status(&e);
}

/* BoundaryOrder (parquet.thrift): 1 ASCENDING, 2 DESCENDING, 0 UNORDERED; null pages skipped. */
static int boundary_order(const struct pq_col *c, const struct pq_chunk_meta *m)
{
    bool asc = true, desc = true;
    const struct pq_page_info *prev = NULL;
    for (size_t i = 0; i < m->n_pages; i++) {
        const struct pq_page_info *p = &m->pages[i];
        if (p->null_page)
            continue;
        if (prev) {
            int a = s3l__pq_cmp_values(c, prev->min, prev->min_len, p->min, p->min_len);
            int b = s3l__pq_cmp_values(c, prev->max, prev->max_len, p->max, p->max_len);
            if (a > 0 || b > 0)
                asc = false;
            if (a < 0 || b < 0)
                desc = false;
        }
        prev = p;
    }
    return asc ? 1 : desc ? 2 : 0;
}

int s3l__pq_column_index(const struct pq_col *c, const struct pq_chunk_meta *m, struct s3l_buf *out)
{
    struct s3l_tc_enc e;
    s3l__tc_init(&e, out);
    uint32_t n = (uint32_t)m->n_pages;
    /* ColumnIndex: 1 null_pages, 2 min_values, 3 max_values, 4 boundary_order, 5 null_counts.
     * A null page has empty min and max (byte[0]). */
    s3l__tc_field_list(&e, 1, S3L_TC_BOOL_TRUE, n);
    for (uint32_t i = 0; i < n; i++)
        s3l__tc_elem_bool(&e, m->pages[i].null_page);
    s3l__tc_field_list(&e, 2, S3L_TC_BINARY, n);
    for (uint32_t i = 0; i < n; i++)
        s3l__tc_elem_binary(&e, m->pages[i].min, m->pages[i].null_page ? 0 : m->pages[i].min_len);
    s3l__tc_field_list(&e, 3, S3L_TC_BINARY, n);
    for (uint32_t i = 0; i < n; i++)
        s3l__tc_elem_binary(&e, m->pages[i].max, m->pages[i].null_page ? 0 : m->pages[i].max_len);
    s3l__tc_field_i32(&e, 4, boundary_order(c, m));
    s3l__tc_field_list(&e, 5, S3L_TC_I64, n);
    for (uint32_t i = 0; i < n; i++)
        s3l__tc_elem_i64(&e, m->pages[i].null_count);
    s3l__tc_struct_end(&e);
    return s3l__tc_status(&e);
}

int s3l__pq_offset_index(const struct pq_chunk_meta *m, struct s3l_buf *out)
{
    struct s3l_tc_enc e;
    s3l__tc_init(&e, out);
    /* OffsetIndex: 1 page_locations; PageLocation: 1 offset, 2 compressed_page_size
     * (header included), 3 first_row_index. */
    s3l__tc_field_list(&e, 1, S3L_TC_STRUCT, (uint32_t)m->n_pages);
    for (size_t i = 0; i < m->n_pages; i++) {
        s3l__tc_elem_struct(&e);
        s3l__tc_field_i64(&e, 1, m->pages[i].offset);
        s3l__tc_field_i32(&e, 2, m->pages[i].size);
        s3l__tc_field_i64(&e, 3, m->pages[i].first_row);
        s3l__tc_struct_end(&e);
    }
    s3l__tc_struct_end(&e);
    return s3l__tc_status(&e);
}

int s3l__pq_row_group_footer_bytes(struct s3l_pq_writer *w, size_t g, uint64_t *out)
{
    const struct pq_row_group_meta *rg = &w->rgs[g];
    struct s3l_tc_enc e;
    s3l_buf_reset(&w->scratch);
    s3l__tc_init(&e, &w->scratch);
    row_group(w, &e, rg, (int16_t)g);
    int rc = s3l__tc_status(&e);
    uint64_t n = w->scratch.len;
    for (size_t i = 0; rc == 0 && i < w->n_cols; i++) {
        const struct pq_chunk_meta *m = &rg->chunks[i];
        if (!w->opts.page_index || m->n_pages == 0)
            continue;
        /* ColumnChunk 4-7 are written at close: two i64 offsets and two i32 lengths, each a
         * field header and a zigzag varint (<= 10 and <= 5 bytes). */
        n += 2 * (1 + 10 + 1 + 5);
        if (m->ci_offset >= 0) {
            s3l_buf_reset(&w->scratch);
            rc = s3l__pq_column_index(&w->cols[i], m, &w->scratch);
            n += w->scratch.len;
        }
        if (rc == 0) {
            s3l_buf_reset(&w->scratch);
            rc = s3l__pq_offset_index(m, &w->scratch);
            n += w->scratch.len;
        }
    }
    *out = n;
    return rc;
}
