/*
 * The file size estimate (s3l_pq_writer_size_estimate): what the file would have on storage if
 * closed now, so that a caller closing files at a size (the destination's fileSize) gets files
 * of that size, not of that many uncompressed bytes (issue 10, item 5: with zstd, files closed
 * at a tenth of the size asked, because page buffers were counted raw).
 *
 * The parts, per column: the chunk buffer (data pages already encoded: exact), the page buffers
 * (raw PLAIN values and one byte per level) at the ratio this column's encoded pages had so far
 * (their header and compressed body over their raw bytes, plus the dictionary values they
 * added), the dictionary page (its values at the ratio measured when it was last compressed),
 * and a guess of its footer entries (ColumnChunk metadata and, per page, ColumnIndex and
 * OffsetIndex entries); for the file: bytes written, the exact footer bytes of written row
 * groups, and the footer's fixed part, measured once at creation.
 *
 * The ratios are a guess for the bytes not encoded yet. When opts.file_size is set and the
 * estimate reaches 7/8 of it, the look encodes every pending page (the close would encode them
 * anyway) and compresses every dictionary that grew since it was measured, then estimates
 * again: now exact but for the footer of the row group in progress. It measures again halfway
 * from there to file_size, and so on, and at file_size itself: only a measured estimate may
 * take the file as full (size_reached). So a file's last pages are smaller than page_size (a
 * few halvings: about 7 for the last 1/8 at 1 MiB pages). Between looks the row API adds raw bytes to `added` (an over-estimate of
 * what they will compress to), and the writer's slack keeps the next look before the estimate
 * can pass file_size, so a caller comparing the estimate with file_size after each row sees it
 * reach file_size at a measured look only.
 *
 * The reserve (file_size / 50) is counted in the estimate: it covers the last row's bytes past
 * the look and the footer's guess, so files end between about 96% and 100% of file_size
 * (tests/unit/test_pq_file_size.c checks 95%-100% on the flights data with zstd and snappy).
 */
#include "parquet/pq.h"

/* The options col_estimate needs. */
struct pq_writer_view {
    bool stats, page_index;
    size_t max_len;
};

/* Bytes of one column buffered for the row group in progress as they will be on storage. */
static uint64_t col_estimate(const struct pq_writer_view *v, const struct pq_col *c)
{
    uint64_t pending = c->values.len + c->defs.len + c->reps.len;
    double dict_ratio = c->est_dict_ratio;
    /* A min or max in the footer: fixed-width values whole, byte arrays as long as the longest
     * max so far, at most statistics_max_len (+1 when rounded up), each with its length. */
    uint64_t bound = 0;
    if (v->stats) {
        bound = c->value_width ? c->value_width : S3L_MIN(c->chunk_stats.max.len, v->max_len + 1);
        bound += 2;
    }
    /* The chunk's Statistics hold two bounds (four: fields 1/2 and 5/6 for signed orders), each
     * page's ColumnIndex entry two. */
    uint64_t n = c->chunk.len + c->meta_chunk + 4 * bound +
                 (uint64_t)c->n_pages * (c->meta_page + (v->page_index ? 2 * bound : 0));
    if (pending) {
        n += (uint64_t)((double)pending * c->est_per_byte) + 1 + c->meta_page +
             (v->page_index ? 2 * bound : 0);
    }
    if (c->dict_used || c->dict.values.len)
        n += (uint64_t)((double)c->dict.values.len * dict_ratio) + 32; /* + its PageHeader */
    return n;
}

void s3l__pq_size_ratios(struct pq_col *c)
{
    /* Kept in the column rather than divided at every look: with a budget the writer looks at
     * its columns every 16 rows, and two divisions per column per look were 1% of `s3land
     * write` (the bench's callgrind count); the values are the same doubles either way. */
    c->est_dict_ratio =
        c->dict_meas_raw ? (double)c->dict_meas_out / (double)c->dict_meas_raw : 1;
    c->est_per_byte = c->est_raw ? ((double)c->est_out + (double)c->est_dict * c->est_dict_ratio) /
                                       (double)c->est_raw
                                 : 1;
}

uint64_t s3l__pq_size_now(const struct s3l_pq_writer *w)
{
    uint64_t n = (w->written ? w->written : 4) + w->footer_fixed + w->footer_done;
    struct pq_writer_view v = {w->opts.statistics, w->opts.page_index, w->opts.statistics_max_len};
    if (w->rg_rows)
        for (size_t i = 0; i < w->n_cols; i++)
            n += col_estimate(&v, &w->cols[i]);
    return n + w->opts.file_size / 50;
}

int s3l__pq_size_init(struct s3l_pq_writer *w)
{
    for (size_t i = 0; i < w->n_cols; i++) {
        struct pq_col *c = &w->cols[i];
        size_t path = 0;
        for (size_t k = 0; k < c->n_path; k++)
            path += strlen(c->path[k]) + 2;
        /* ColumnChunk + ColumnMetaData: fields, encodings, path, encoding_stats, the
         * statistics' counts and flags (about 64 bytes), the page-index locations (34). The
         * statistics' bounds are added per chunk (col_estimate). */
        c->meta_chunk = (uint32_t)(64 + 34 + path);
        /* Per page: ColumnIndex null flag and null count, OffsetIndex's PageLocation; the
         * ColumnIndex bounds are added per page (col_estimate). */
        c->meta_page = w->opts.page_index ? 20 : 0;
        s3l__pq_size_ratios(c);
    }
    /* The footer of a file without row groups, with room for num_rows and the list headers to
     * grow, plus the 4-byte length and the magic. */
    s3l_buf_reset(&w->scratch);
    int rc = s3l__pq_footer(w, &w->scratch);
    w->footer_fixed = w->scratch.len + 16 + 8;
    w->next_measure = w->opts.file_size - w->opts.file_size / 8;
    w->est_base = s3l__pq_size_now(w);
    return rc;
}

/* Encodes every pending page and compresses every dictionary that grew since last measured. */
static int measure(struct s3l_pq_writer *w)
{
    for (size_t i = 0; i < w->n_cols; i++) {
        struct pq_col *c = &w->cols[i];
        int rc = s3l__pq_page_flush(w, c);
        if (rc)
            return rc;
        if (c->dict.values.len && c->dict.values.len != c->dict_meas_raw) {
            s3l_buf_reset(&w->scratch2);
            rc = s3l__codec_compress(&w->codec, c->dict.values.ptr, c->dict.values.len,
                                     &w->scratch2);
            if (rc)
                return rc;
            c->dict_meas_raw = c->dict.values.len;
            c->dict_meas_out = w->scratch2.len;
            s3l__pq_size_ratios(c);
        }
    }
    return 0;
}

int s3l__pq_size_look(struct s3l_pq_writer *w, bool *measured)
{
    *measured = false;
    uint64_t est = s3l__pq_size_now(w), limit = w->opts.file_size;
    if (limit && !w->size_reached && est >= S3L_MIN(limit, w->next_measure)) {
        int rc = measure(w);
        if (rc)
            return rc;
        *measured = true;
        est = s3l__pq_size_now(w);
        w->size_reached = est >= limit;
        /* Measured again halfway to the limit, so that the ratios of the last pages are known
         * before the limit is near (a page's dictionary values may outweigh its raw bytes). */
        w->next_measure = est + (limit > est ? (limit - est) / 2 : 0);
    }
    w->est_base = est;
    return 0;
}
