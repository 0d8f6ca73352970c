/*
 * footer_check: the consistency of a decoded footer, for `check` and the tests, before anything
 * trusts its offsets: rows add up, every column chunk describes its leaf (physical type, path),
 * its pages and page index lie in the data area between the leading "PAR1" and the
 * FileMetaData, and its counts are possible. Rules from parquet.thrift (RowGroup, ColumnChunk,
 * ColumnMetaData) and PageIndex.md; the first violation is reported.
 */
#include "parquet/footer_internal.h"

static int bad(const struct s3l_pq_footer *f, struct s3l_error *err, size_t g,
               const struct s3l_pq_column_chunk *cc, const char *what, long long a, long long b)
{
    return s3l_error_set(err, S3L_ECORRUPT, "%s: row group %zu, column %s: %s (%lld, %lld)",
                         f->name, g, cc->path_str ? cc->path_str : "?", what, a, b);
}

/* Whether path_in_schema names leaf se: the names from below the root down to se. */
static bool path_matches(const struct s3l_pq_footer *f, const struct s3l_pq_schema_element *se,
                         const struct s3l_pq_column_chunk *cc)
{
    size_t k = cc->n_path;
    const struct s3l_pq_schema_element *e = se;
    while (e->parent >= 0) {
        if (k == 0 || strcmp(cc->path[--k], e->name) != 0)
            return false;
        e = &f->schema[e->parent];
    }
    return k == 0;
}

/* [off, off + len) inside the data area [4, end); end 0 means unknown (no check). */
static bool inside(int64_t off, int64_t len, uint64_t end)
{
    if (off < 4 || len < 0)
        return false;
    return end == 0 || ((uint64_t)off <= end && (uint64_t)len <= end - (uint64_t)off);
}

static int check_chunk(const struct s3l_pq_footer *f, size_t g, size_t i, uint64_t end,
                       struct s3l_error *err)
{
    const struct s3l_pq_row_group *rg = &f->row_groups[g];
    const struct s3l_pq_column_chunk *cc = &rg->columns[i];
    const struct s3l_pq_schema_element *se = s3l_pq_footer_leaf(f, i);
    if (!cc->has_meta_data)
        return f->encrypted ? 0 : bad(f, err, g, cc, "no ColumnMetaData", 0, 0);
    if (cc->type != se->type)
        return bad(f, err, g, cc, "physical type differs from the schema's", cc->type, se->type);
    if (!path_matches(f, se, cc))
        return bad(f, err, g, cc, "path_in_schema does not name its leaf column", (long long)i, 0);
    int64_t start = cc->data_page_offset;
    if (cc->dictionary_page_offset >= 0) {
        if (cc->dictionary_page_offset >= cc->data_page_offset)
            return bad(f, err, g, cc, "dictionary page not before the data pages",
                       cc->dictionary_page_offset, cc->data_page_offset);
        start = cc->dictionary_page_offset;
    }
    if (!inside(start, cc->total_compressed_size, end))
        return bad(f, err, g, cc, "pages (offset, bytes) outside the data area", start,
                   cc->total_compressed_size);
    if (cc->data_page_offset - start >= cc->total_compressed_size)
        return bad(f, err, g, cc, "data_page_offset beyond the chunk's bytes (offset, end)",
                   cc->data_page_offset, start + cc->total_compressed_size);
    if (cc->num_values < 0 || (se->max_rep == 0 && cc->num_values != rg->num_rows))
        return bad(f, err, g, cc, "num_values does not match the row group's rows", cc->num_values,
                   rg->num_rows);
    if (cc->stats.has_null_count && (cc->stats.null_count < 0 ||
                                     cc->stats.null_count > cc->num_values))
        return bad(f, err, g, cc, "null_count beyond num_values", cc->stats.null_count,
                   cc->num_values);
    if (cc->offset_index_offset >= 0 && !inside(cc->offset_index_offset,
                                                cc->offset_index_length, end))
        return bad(f, err, g, cc, "OffsetIndex (offset, bytes) outside the data area",
                   cc->offset_index_offset, cc->offset_index_length);
    if (cc->column_index_offset >= 0 && !inside(cc->column_index_offset,
                                                cc->column_index_length, end))
        return bad(f, err, g, cc, "ColumnIndex (offset, bytes) outside the data area",
                   cc->column_index_offset, cc->column_index_length);
    return 0;
}

int s3l_pq_footer_validate(const struct s3l_pq_footer *f, struct s3l_error *err)
{
    uint64_t end = f->file_size ? f->metadata_offset : 0;
    int64_t rows = 0;
    for (size_t g = 0; g < f->n_row_groups; g++) {
        const struct s3l_pq_row_group *rg = &f->row_groups[g];
        if (rg->num_rows < 0 || rg->num_rows > INT64_MAX - rows)
            return s3l_error_set(err, S3L_ECORRUPT, "%s: row group %zu: num_rows %lld", f->name,
                                 g, (long long)rg->num_rows);
        rows += rg->num_rows;
        for (size_t i = 0; i < rg->n_columns; i++) {
            int rc = check_chunk(f, g, i, end, err);
            if (rc)
                return rc;
        }
    }
    if (rows != f->num_rows)
        return s3l_error_set(err, S3L_ECORRUPT,
                             "%s: num_rows is %lld but the row groups hold %lld rows", f->name,
                             (long long)f->num_rows, (long long)rows);
    if (f->n_column_orders != 0 && f->n_column_orders != f->n_leaves)
        return s3l_error_set(err, S3L_ECORRUPT, "%s: %zu column orders for %zu leaf columns",
                             f->name, f->n_column_orders, f->n_leaves);
    return 0;
}
