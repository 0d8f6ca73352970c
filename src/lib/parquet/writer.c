/*
 * The Parquet writer's life cycle (include/s3l/parquet.h): options, construction, committing rows
 * (page and row-group boundaries, the shared budget), flushing row groups, and closing the file
 * with the page index and the footer (parquet-format README "File format":
 * PAR1, row groups, ColumnIndex/OffsetIndex, FileMetaData, u32 footer length, PAR1).
 */
#include "parquet/pq.h"

#define MAGIC "PAR1"
#ifndef S3L_VERSION
#define S3L_VERSION "0.0.0"
#endif

void s3l_pq_options_init(struct s3l_pq_options *o)
{
    memset(o, 0, sizeof(*o));
    o->version = S3L_PQ_OPTIONS_VERSION;
    o->codec = S3L_CODEC_ZSTD;
    o->page_size = (size_t)1 << 20;
    o->row_group_bytes = (size_t)128 << 20;
    o->dictionary = true;
    o->dictionary_page_limit = (size_t)1 << 20;
    o->data_page_version = 1;
    o->statistics = true;
    o->statistics_max_len = 64;
    o->page_index = true;
}

static int check_options(struct s3l_pq_options *o, struct s3l_error *err)
{
    if (o->version != S3L_PQ_OPTIONS_VERSION)
        return s3l_error_set(err, S3L_EINVALID_CONFIG, "parquet options: version %d, expected %d",
                             o->version, S3L_PQ_OPTIONS_VERSION);
    if (o->data_page_version != 1 && o->data_page_version != 2)
        return s3l_error_set(err, S3L_EINVALID_CONFIG,
                             "parquet options: data page version %d, expected 1 or 2",
                             o->data_page_version);
    if (o->page_size == 0)
        o->page_size = (size_t)1 << 20;
    if (o->page_size > ((size_t)1 << 30))
        return s3l_error_set(err, S3L_EINVALID_CONFIG,
                             "parquet options: page size %zu bytes is over 1 GiB", o->page_size);
    if (o->row_group_bytes == 0)
        o->row_group_bytes = (size_t)128 << 20;
    if (o->dictionary_page_limit == 0)
        o->dictionary_page_limit = (size_t)1 << 20;
    if (o->dictionary_page_limit > ((size_t)1 << 30))
        return s3l_error_set(err, S3L_EINVALID_CONFIG,
                             "parquet options: dictionary page limit over 1 GiB");
    if (o->n_kv && (!o->kv_keys || !o->kv_values))
        return s3l_error_set(err, S3L_EINVALID_CONFIG,
                             "parquet options: %zu key/value pairs without keys or values",
                             o->n_kv);
    return 0;
}

static int copy_kv(struct s3l_pq_writer *w)
{
    size_t n = w->opts.n_kv;
    if (!n)
        return 0;
    w->kv_keys = s3l_calloc(n, sizeof(char *));
    w->kv_values = s3l_calloc(n, sizeof(char *));
    if (!w->kv_keys || !w->kv_values)
        return S3L_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        w->kv_keys[i] = s3l_strdup(w->opts.kv_keys[i] ? w->opts.kv_keys[i] : "");
        w->kv_values[i] = w->opts.kv_values[i] ? s3l_strdup(w->opts.kv_values[i]) : NULL;
        if (!w->kv_keys[i] || (w->opts.kv_values[i] && !w->kv_values[i]))
            return S3L_ENOMEM;
    }
    return 0;
}

int s3l_pq_writer_new(const struct s3l_schema *schema, const struct s3l_pq_options *opts,
                      struct s3l_pq_sink sink, struct s3l_pq_writer **out, struct s3l_error *err)
{
    *out = NULL;
    if (!sink.write)
        return s3l_error_set(err, S3L_EINVALID_ARGUMENT, "parquet writer: no sink");
    struct s3l_pq_writer *w = s3l_calloc(1, sizeof(*w));
    if (!w)
        return s3l_error_set(err, S3L_ENOMEM, "parquet writer: out of memory");
    if (opts)
        w->opts = *opts;
    else
        s3l_pq_options_init(&w->opts);
    w->sink = sink;
    s3l_arena_init(&w->arena, 64 * 1024);
    s3l_buf_init(&w->scratch, SIZE_MAX / 4);
    s3l_buf_init(&w->scratch2, SIZE_MAX / 4);
    s3l_buf_init(&w->idx, SIZE_MAX / 4);
    s3l_buf_init(&w->hdr, SIZE_MAX / 4);
    s3l_buf_init(&w->bitmap, SIZE_MAX / 4);
    s3l_buf_init(&w->dense, PQ_DENSE_RANGE * sizeof(uint32_t));
    s3l__pq_stats_init(&w->pstats);
    int rc = check_options(&w->opts, err);
    if (!rc)
        rc = s3l__pq_schema_build(w, schema, err);
    if (!rc)
        rc = s3l__codec_open(&w->codec, w->opts.codec, w->opts.level, err);
    if (!rc) {
        w->created_by =
            s3l_strdup(w->opts.created_by ? w->opts.created_by : "s3land version " S3L_VERSION);
        rc = w->created_by ? copy_kv(w) : S3L_ENOMEM;
    }
    if (!rc && w->opts.budget) {
        rc = s3l__pq_budget_join(w->opts.budget, w);
        if (!rc)
            w->budget = w->opts.budget;
    }
    w->opts.created_by = NULL;
    w->opts.kv_keys = w->opts.kv_values = NULL;
    if (rc) {
        if (rc == S3L_ENOMEM)
            s3l_error_set(err, rc, "parquet writer: out of memory");
        s3l_pq_writer_free(w);
        return rc;
    }
    /* stats.c set_bound: more than the export needs, and more than PQ_STATS_WHOLE_MAX. */
    size_t keep = 0;
    if (w->opts.statistics_max_len)
        keep = S3L_MAX((size_t)PQ_STATS_WHOLE_MAX, w->opts.statistics_max_len + 4) + 1;
    for (size_t i = 0; i < w->n_cols; i++) {
        w->cols[i].dict_on = w->opts.dictionary && w->cols[i].phys != PQ_BOOLEAN;
        w->cols[i].bound_keep = keep;
    }
    w->n_top = (uint32_t)w->root.n_children;
    for (size_t i = 0; i < w->n_cols; i++)
        w->cols[i].top_field = -1;
    w->rg_rows_max = w->opts.row_group_rows ? w->opts.row_group_rows : UINT64_MAX;
    for (size_t i = 0; i < w->root.n_children; i++) {
        struct pq_node *n = &w->root.children[i];
        if (n->kind == PQ_LEAF) {
            n->col = &w->cols[n->first_leaf]; /* the row API's fast paths */
            n->col->top_field = (int32_t)i;
        }
    }
    rc = s3l__pq_size_init(w);
    if (rc) {
        s3l_error_set(err, rc, "parquet writer: measuring the footer: %s", s3l_strerror(rc));
        s3l_pq_writer_free(w);
        return rc;
    }
    *out = w;
    return 0;
}

static size_t col_bytes(const struct pq_col *c)
{
    return c->values.len + c->defs.len + c->reps.len;
}

/*
 * The memory that ending the row group would give back, which the budget is charged: the page
 * buffers, the dictionary's values, and the chunk buffers at their capacity (they grow by
 * doubling; a flush frees one larger than PQ_TRIM_CHUNK). What a flush keeps (small chunk
 * buffers, the dictionary's hash table) is not charged: charging it would make an idle writer
 * look like the one to flush, forever.
 */
static size_t held_bytes(const struct s3l_pq_writer *w)
{
    size_t n = 0;
    for (size_t i = 0; i < w->n_cols; i++) {
        const struct pq_col *c = &w->cols[i];
        n += (c->chunk.cap > PQ_TRIM_CHUNK ? c->chunk.cap : c->chunk.len) + col_bytes(c) +
             c->dict.values.len;
    }
    return n;
}

void s3l__pq_recount(struct s3l_pq_writer *w)
{
    size_t total = 0;
    for (size_t i = 0; i < w->n_cols; i++) {
        const struct pq_col *c = &w->cols[i];
        total += c->chunk.len + col_bytes(c) + c->dict.values.len;
    }
    /* A rollback takes back only bytes of the row in progress, which a look never counted: the
     * writer is as it was before the row (added back to what the committed rows had added), so
     * the estimate and the next look are those of a writer that never saw the row. */
    if (total >= w->rg_bytes) {
        w->added = total - w->rg_bytes;
        return;
    }
    w->rg_bytes = total;
    w->added = 0;
    w->slack = 0;
    w->est_base = s3l__pq_size_now(w);
}

int s3l__pq_set_sticky(struct s3l_pq_writer *w, int rc, const char *what)
{
    if (!w->sticky) {
        w->sticky = rc;
        s3l_error_set(&w->sticky_err, rc, "parquet writer: %s: %s", what, s3l_strerror(rc));
    }
    return w->sticky;
}

int s3l__pq_report(struct s3l_pq_writer *w, struct s3l_error *err)
{
    if (err && !err->code)
        *err = w->sticky_err;
    return w->sticky;
}

/* Another writer may have asked this one, the largest, to flush (budget.c). The plain load
 * first keeps the common case free of a locked instruction. */
static bool flush_asked(struct s3l_pq_writer *w)
{
    return w->budget && __atomic_load_n(&w->flush_requested, __ATOMIC_RELAXED) &&
           __atomic_exchange_n(&w->flush_requested, 0, __ATOMIC_RELAXED);
}

/*
 * Most rows: the columns grew by w->added bytes in all since they were last looked at, less
 * than any page's room, the row group's room and the budget mark's, and the row group has room
 * for rows: the full look would decide nothing (except the budget's every 16 rows).
 */
static inline bool quiet_commit(const struct s3l_pq_writer *w)
{
    return w->added < w->slack && w->rg_rows < w->rg_rows_max &&
           !(w->budget && (w->rg_rows & 15) == 0);
}

int s3l__pq_rows_committed(struct s3l_pq_writer *w, bool check_all, struct s3l_error *err)
{
    bool rows_due = w->rg_rows >= w->rg_rows_max;
    if (!check_all && quiet_commit(w))
        return flush_asked(w) ? s3l_pq_writer_flush(w, err) : 0;
    size_t total = 0;
    uint64_t slack = UINT64_MAX;
    for (size_t i = 0; i < w->n_cols; i++) {
        struct pq_col *c = &w->cols[i];
        size_t n = col_bytes(c);
        if (n >= w->opts.page_size) {
            int rc = s3l__pq_page_flush(w, c);
            if (rc)
                return s3l__pq_report(w, (s3l__pq_set_sticky(w, rc, "encoding a page"), err));
            n = 0;
        }
        slack = S3L_MIN(slack, (uint64_t)(w->opts.page_size - n));
        total += c->chunk.len + n + c->dict.values.len;
    }
    bool measured = false;
    int rc = s3l__pq_size_look(w, &measured);
    if (rc)
        return s3l__pq_report(w, (s3l__pq_set_sticky(w, rc, "encoding a page"), err));
    if (measured) { /* every page was encoded: the page buffers are empty */
        total = 0;
        slack = w->opts.page_size;
        for (size_t i = 0; i < w->n_cols; i++)
            total += w->cols[i].chunk.len + w->cols[i].dict.values.len;
    }
    w->rg_bytes = total;
    w->added = 0;
    /* The next look comes before the estimate can pass file_size (size.c). */
    if (w->opts.file_size && !w->size_reached)
        slack = S3L_MIN(slack, w->opts.file_size > w->est_base ? w->opts.file_size - w->est_base
                                                                 : 0);
    bool flush = rows_due || total >= w->opts.row_group_bytes;
    /* The budget (a mutex) is charged every 16 rows (a row usually adds little), and as soon as
     * the row group grew by a page since the last charge: wide rows (a 15 MiB string each) must
     * not run 16 rows past the budget. */
    if (w->budget && ((w->rg_rows & 15) == 0 || flush || check_all || total >= w->budget_mark)) {
        w->budget_mark = total + w->opts.page_size;
        if (s3l__pq_budget_update(w->budget, w, held_bytes(w)))
            flush = true;
    }
    if (!flush) {
        slack = S3L_MIN(slack, (uint64_t)(w->opts.row_group_bytes - total));
        if (w->budget)
            slack = S3L_MIN(slack, (uint64_t)(w->budget_mark - total));
    }
    w->slack = flush ? 0 : slack;
    if (flush_asked(w))
        flush = true;
    if (flush)
        return s3l_pq_writer_flush(w, err);
    return 0;
}

int s3l_pq_row_end(struct s3l_pq_writer *w, struct s3l_error *err)
{
    if (!w->in_row)
        return s3l_error_set(err, S3L_ESTATE, "parquet writer: row_end without row_begin");
    if (!w->poisoned && (w->depth != 1 || w->frames[0].child != w->n_top)) {
        const struct pq_frame *f = &w->frames[w->depth - 1];
        const struct pq_node *n = f->node;
        if (f->child < n->n_children && n->kind != PQ_LIST && n->kind != PQ_MAP)
            n = &n->children[f->child];
        w->poisoned = true;
        w->top = false;
        s3l_error_set(&w->row_err, S3L_EINVALID_INPUT,
                      "row %llu, column %s: missing (the row "
                      "ended early)",
                      (unsigned long long)w->rows_seen, n->path);
    }
    if (w->poisoned) {
        s3l_pq_row_abort(w);
        int code = w->row_err.code ? w->row_err.code : S3L_EINVALID_INPUT;
        if (err && !err->code)
            *err = w->row_err;
        return code;
    }
    w->in_row = false;
    w->depth = 0;
    w->top = false;
    w->rows++;
    w->rg_rows++;
    if (w->sticky)
        return s3l__pq_report(w, err);
    if (quiet_commit(w))
        return flush_asked(w) ? s3l_pq_writer_flush(w, err) : 0;
    return s3l__pq_rows_committed(w, false, err);
}

static int push_row_group(struct s3l_pq_writer *w, struct pq_row_group_meta **out)
{
    if (s3l__array_reserve(&w->rgs, &w->rgs_cap, w->n_rgs + 1, sizeof(*w->rgs), 4))
        return S3L_ENOMEM;
    struct pq_row_group_meta *rg = &w->rgs[w->n_rgs];
    memset(rg, 0, sizeof(*rg));
    rg->chunks = s3l_calloc(w->n_cols, sizeof(*rg->chunks));
    if (!rg->chunks)
        return S3L_ENOMEM;
    w->n_rgs++;
    *out = rg;
    return 0;
}

int s3l_pq_writer_flush(struct s3l_pq_writer *w, struct s3l_error *err)
{
    if (w->sticky)
        return s3l__pq_report(w, err);
    if (w->closed)
        return s3l_error_set(err, S3L_ESTATE, "parquet writer: flush after close");
    if (w->rg_rows == 0)
        return 0;
    int rc = 0;
    if (w->written == 0)
        rc = s3l__pq_sink_write(w, MAGIC, 4);
    struct pq_row_group_meta *rg = NULL;
    if (!rc)
        rc = push_row_group(w, &rg);
    if (rc)
        return s3l__pq_report(w, (s3l__pq_set_sticky(w, rc, "starting a row group"), err));
    rg->num_rows = (int64_t)w->rg_rows;
    rg->file_offset = (int64_t)w->written;
    for (size_t i = 0; i < w->n_cols; i++) {
        rc = s3l__pq_chunk_write(w, &w->cols[i], &rg->chunks[i]);
        if (rc)
            return s3l__pq_report(w, (s3l__pq_set_sticky(w, rc, "writing a column chunk"), err));
        rg->total_byte_size += rg->chunks[i].total_uncompressed;
        rg->total_compressed += rg->chunks[i].total_compressed;
    }
    uint64_t footer = 0;
    rc = s3l__pq_row_group_footer_bytes(w, w->n_rgs - 1, &footer);
    if (rc)
        return s3l__pq_report(w, (s3l__pq_set_sticky(w, rc, "measuring the footer"), err));
    w->footer_done += footer;
    w->rg_rows = 0;
    w->rg_bytes = 0;
    w->added = 0;
    w->slack = 0; /* the next row looks at the columns (and charges the budget) */
    w->budget_mark = 0;
    w->est_base = s3l__pq_size_now(w);
    if (w->budget)
        s3l__pq_budget_update(w->budget, w, held_bytes(w));
    return 0;
}

static int page_indexes(struct s3l_pq_writer *w)
{
    int rc = 0;
    /* All ColumnIndex structures first, then all OffsetIndex ones (PageIndex.md layout). */
    for (int pass = 0; pass < 2 && !rc; pass++) {
        for (size_t g = 0; g < w->n_rgs && !rc; g++) {
            for (size_t i = 0; i < w->n_cols && !rc; i++) {
                struct pq_chunk_meta *m = &w->rgs[g].chunks[i];
                if (m->n_pages == 0 || (pass == 0 && m->ci_offset < 0)) {
                    if (pass == 0)
                        m->ci_len = 0;
                    continue;
                }
                s3l_buf_reset(&w->scratch);
                rc = pass == 0 ? s3l__pq_column_index(&w->cols[i], m, &w->scratch)
                               : s3l__pq_offset_index(m, &w->scratch);
                if (rc || w->scratch.len > INT32_MAX)
                    return rc ? rc : S3L_ETOO_LARGE;
                int64_t at = (int64_t)w->written;
                rc = s3l__pq_sink_write(w, w->scratch.ptr, w->scratch.len);
                if (pass == 0)
                    m->ci_offset = at, m->ci_len = (int32_t)w->scratch.len;
                else
                    m->oi_offset = at, m->oi_len = (int32_t)w->scratch.len;
            }
        }
    }
    return rc;
}

int s3l_pq_writer_close(struct s3l_pq_writer *w, struct s3l_error *err)
{
    if (w->closed)
        return s3l_error_set(err, S3L_ESTATE, "parquet writer: closed twice");
    s3l_pq_row_abort(w);
    int rc = s3l_pq_writer_flush(w, err);
    if (rc)
        return rc;
    if (w->written == 0)
        rc = s3l__pq_sink_write(w, MAGIC, 4);
    if (!rc && w->opts.page_index)
        rc = page_indexes(w);
    if (!rc) {
        s3l_buf_reset(&w->scratch);
        rc = s3l__pq_footer(w, &w->scratch);
    }
    if (!rc && w->scratch.len > UINT32_MAX)
        rc = S3L_ETOO_LARGE;
    if (!rc) {
        uint32_t n = (uint32_t)w->scratch.len;
        uint8_t tail[8] = {
            (uint8_t)n, (uint8_t)(n >> 8), (uint8_t)(n >> 16), (uint8_t)(n >> 24), 'P', 'A', 'R',
            '1'};
        rc = s3l__pq_sink_write(w, w->scratch.ptr, w->scratch.len);
        if (!rc)
            rc = s3l__pq_sink_write(w, tail, 8);
    }
    w->closed = true;
    if (w->budget)
        s3l__pq_budget_update(w->budget, w, 0);
    if (rc)
        return s3l__pq_report(w, (s3l__pq_set_sticky(w, rc, "writing the footer"), err));
    return 0;
}

void s3l_pq_writer_free(struct s3l_pq_writer *w)
{
    if (!w)
        return;
    if (w->budget)
        s3l__pq_budget_leave(w->budget, w);
    for (size_t g = 0; g < w->n_rgs; g++) {
        for (size_t i = 0; i < w->n_cols; i++)
            s3l_free(w->rgs[g].chunks[i].pages);
        s3l_free(w->rgs[g].chunks);
    }
    s3l_free(w->rgs);
    s3l__pq_schema_free(w);
    s3l__codec_close(&w->codec);
    s3l_arena_free(&w->arena);
    s3l_buf_free(&w->scratch);
    s3l_buf_free(&w->scratch2);
    s3l_buf_free(&w->idx);
    s3l_buf_free(&w->hdr);
    s3l_buf_free(&w->bitmap);
    s3l_buf_free(&w->dense);
    s3l__pq_stats_free(&w->pstats);
    for (size_t i = 0; w->kv_keys && i < w->opts.n_kv; i++) {
        s3l_free(w->kv_keys[i]);
        if (w->kv_values)
            s3l_free(w->kv_values[i]);
    }
    s3l_free(w->kv_keys);
    s3l_free(w->kv_values);
    s3l_free(w->created_by);
    s3l_free(w);
}

uint64_t s3l_pq_writer_rows(const struct s3l_pq_writer *w)
{
    return w->rows;
}

uint64_t s3l_pq_writer_bytes_written(const struct s3l_pq_writer *w)
{
    return w->written;
}

uint64_t s3l_pq_writer_size_estimate(const struct s3l_pq_writer *w)
{
    /* size.c: est_base at the last look, and the raw bytes the rows added since (an upper
     * bound of what they compress to). */
    return w->est_base + w->added;
}

/* The row sink adapter (include/s3l/row.h). */
static int rs_row_begin(void *c)
{
    return s3l_pq_row_begin(c);
}
static int rs_put_null(void *c)
{
    return s3l_pq_put_null(c);
}
static int rs_put_bool(void *c, bool v)
{
    return s3l_pq_put_bool(c, v);
}
static int rs_put_int(void *c, int64_t v)
{
    return s3l_pq_put_int(c, v);
}
static int rs_put_uint(void *c, uint64_t v)
{
    return s3l_pq_put_uint(c, v);
}
static int rs_put_double(void *c, double v)
{
    return s3l_pq_put_double(c, v);
}
static int rs_put_bytes(void *c, const void *d, size_t n)
{
    return s3l_pq_put_bytes(c, d, n);
}
static int rs_put_decimal(void *c, int64_t hi, uint64_t lo)
{
    return s3l_pq_put_decimal(c, hi, lo);
}
static int rs_put_interval(void *c, int32_t m, int32_t d, int64_t ns)
{
    return s3l_pq_put_interval(c, m, d, ns);
}
static int rs_begin_list(void *c)
{
    return s3l_pq_begin_list(c);
}
static int rs_end_list(void *c)
{
    return s3l_pq_end_list(c);
}
static int rs_begin_struct(void *c)
{
    return s3l_pq_begin_struct(c);
}
static int rs_end_struct(void *c)
{
    return s3l_pq_end_struct(c);
}
static int rs_begin_map(void *c)
{
    return s3l_pq_begin_map(c);
}
static int rs_end_map(void *c)
{
    return s3l_pq_end_map(c);
}
static int rs_row_end(void *c, struct s3l_error *err)
{
    return s3l_pq_row_end(c, err);
}
static void rs_row_abort(void *c)
{
    s3l_pq_row_abort(c);
}

static int rs_put_columns(void *c, size_t n, const struct s3l_column_batch *cols,
                          struct s3l_error *err)
{
    return s3l_pq_write_columns(c, n, cols, err);
}

static const struct s3l_row_sink_ops row_sink_ops = {
    rs_row_begin,  rs_put_null,    rs_put_bool,     rs_put_int,    rs_put_uint,  rs_put_double,
    rs_put_bytes,  rs_put_decimal, rs_put_interval, rs_begin_list, rs_end_list,  rs_begin_struct,
    rs_end_struct, rs_begin_map,   rs_end_map,      rs_row_end,    rs_row_abort, rs_put_columns,
};

struct s3l_row_sink s3l_pq_writer_row_sink(struct s3l_pq_writer *w)
{
    struct s3l_row_sink s = {&row_sink_ops, w};
    return s;
}
