/*
 * The production file format of the destination: data files are Parquet (include/s3l/parquet.h),
 * all writers of a destination share one memory budget, and the schema record is the column list of
 * s3l_schema_to_json (include/s3l/schema.h), merged by s3l_schema_merge: a new column is added; a
 * recorded column whose type differs is SCHEMA_DRIFT (or, allowed, takes the new type).
 * s3l_dest_open lives here so that programs using only s3l__dest_open_format (the protocol tests)
 * do not link the Parquet writer.
 */
#include <string.h>

#include "commit/commit.h"
#include "schema/schema_int.h"
#include "util/util.h"

struct pq_ctx {
    struct s3l_pq_options opts;
    struct s3l_pq_budget *budget;
};

static int pq_open(void *ctx, const struct s3l_schema *schema, struct s3l_pq_sink sink, void **w,
                   struct s3l_error *err)
{
    struct pq_ctx *c = ctx;
    struct s3l_pq_writer *pw = NULL;
    int rc = s3l_pq_writer_new(schema, &c->opts, sink, &pw, err);
    if (rc == 0)
        *w = pw;
    return rc;
}

static struct s3l_row_sink pq_row_sink(void *w)
{
    return s3l_pq_writer_row_sink(w);
}

static uint64_t pq_rows(void *w)
{
    return s3l_pq_writer_rows(w);
}

static uint64_t pq_size(void *w)
{
    return s3l_pq_writer_size_estimate(w);
}

static int pq_put_columns(void *w, size_t n_rows, const struct s3l_column_batch *cols,
                          size_t first, uint64_t size_limit, size_t *done, struct s3l_error *err)
{
    return s3l_pq_write_columns_until(w, n_rows, cols, first, size_limit, done, err);
}

static int pq_close(void *w, struct s3l_error *err)
{
    return s3l_pq_writer_close(w, err);
}

static void pq_free(void *w)
{
    s3l_pq_writer_free(w);
}

/* The record merge of the schema module (s3l_schema_merge: append-only, drift named). */
static int pq_merge(void *ctx, const char *table, const char *record_url, const char *record,
                    size_t len, const struct s3l_schema *schema, bool allow, char **out,
                    struct s3l_error *err)
{
    (void)ctx;
    struct s3l_schema *rec = NULL, *merged = NULL;
    struct s3l_error e2 = {0};
    *out = NULL;
    int rc = record ? s3l_schema_from_json(record, len, &rec, &e2) : 0;
    if (rc)
        return s3l_error_set(err, S3L_ECORRUPT, "schema record %s: %s", record_url, e2.message);
    struct s3l_schema_merge_options mo = {table, record_url, allow};
    bool changed = false;
    rc = s3l_schema_merge(rec, schema, &mo, &merged, &changed, err);
    if (rc == 0 && (changed || !record)) {
        size_t n = 0;
        rc = s3l_schema_to_json(merged, out, &n);
    }
    s3l_schema_free(merged);
    s3l_schema_free(rec);
    return s3l__oom(err, rc, "merging a schema record");
}

/*
 * A concurrent writer's record (current) with the columns of ours (carried) it lacks appended,
 * and a struct column both name grown by the nested fields ours adds (s3l__type_grow, as a merge
 * at open grows it; two writers adding different fields to one struct at once kept only one's).
 * A column both name with another type keeps current's type: the files carry their own types in
 * their footers.
 */
static int pq_union(void *ctx, const char *record_url, const char *current, size_t clen,
                    const char *carried, size_t alen, char **out, struct s3l_error *err)
{
    (void)ctx;
    struct s3l_schema *cur = NULL, *ours = NULL;
    struct s3l_error e2 = {0};
    *out = NULL;
    int rc = s3l_schema_from_json(current, clen, &cur, &e2);
    if (rc == 0)
        rc = s3l_schema_from_json(carried, alen, &ours, &e2);
    if (rc) {
        s3l_schema_free(cur);
        return s3l_error_set(err, S3L_ECORRUPT, "schema record %s: %s", record_url, e2.message);
    }
    bool added = false;
    for (size_t i = 0; rc == 0 && i < ours->n_fields; i++) {
        const struct s3l_field *f = &ours->fields[i];
        int k = s3l_schema_find(cur, f->name, strlen(f->name));
        if (k < 0) {
            rc = s3l__schema_add_field(cur, f, err);
            added = true;
            continue;
        }
        struct s3l_type grown;
        bool ch = false;
        if ((rc = s3l__type_copy(&grown, &cur->fields[k].type)) != 0)
            break;
        int g = s3l__type_grow(&grown, &f->type, &ch);
        if (g == 0 && ch) {
            s3l__type_cleanup(&cur->fields[k].type);
            cur->fields[k].type = grown;
            added = true;
            continue;
        }
        s3l__type_cleanup(&grown);
        rc = g == S3L_ENOMEM ? g : 0; /* 1: another type, current's kept */
    }
    if (rc == 0 && added) {
        size_t n = 0;
        rc = s3l_schema_to_json(cur, out, &n);
    }
    s3l_schema_free(ours);
    s3l_schema_free(cur);
    return s3l__oom(err, rc, "merging a schema record");
}

static void pq_destroy(void *ctx)
{
    struct pq_ctx *c = ctx;
    if (!c)
        return;
    s3l_pq_budget_free(c->budget);
    s3l_free(c);
}

int s3l__format_parquet(const struct s3l_pq_options *opts, size_t memory,
                        struct s3l__dest_format *out, struct s3l_error *err)
{
    struct pq_ctx *c = s3l_calloc(1, sizeof(*c));
    if (!c)
        return s3l_error_set(err, S3L_ENOMEM, "out of memory opening the Parquet format");
    if (opts)
        c->opts = *opts;
    else
        s3l_pq_options_init(&c->opts);
    if (c->opts.version != S3L_PQ_OPTIONS_VERSION) {
        s3l_free(c);
        return s3l_error_set(err, S3L_EINVALID_CONFIG, "Parquet options: bad version");
    }
    c->budget = s3l_pq_budget_new(memory);
    if (!c->budget) {
        s3l_free(c);
        return s3l_error_set(err, S3L_ENOMEM,
                             "out of memory making the Parquet writers' memory budget");
    }
    c->opts.budget = c->budget;
    memset(out, 0, sizeof(*out));
    out->ext = ".parquet";
    out->ctx = c;
    out->open = pq_open;
    out->row_sink = pq_row_sink;
    out->rows = pq_rows;
    out->size_estimate = pq_size;
    out->close = pq_close;
    out->free = pq_free;
    out->schema_merge = pq_merge;
    out->record_union = pq_union;
    out->destroy = pq_destroy;
    out->put_columns = pq_put_columns;
    return 0;
}

int s3l_dest_open(struct s3l_store *store, const struct s3l_dest_options *o, struct s3l_dest **out,
                  struct s3l_error *err)
{
    return s3l__dest_open_parquet(store, o, true, out, err);
}

int s3l__dest_open_parquet(struct s3l_store *store, const struct s3l_dest_options *o, bool recover,
                           struct s3l_dest **out, struct s3l_error *err)
{
    if (!o || o->version < 1 || o->version > S3L_DEST_OPTIONS_VERSION)
        return s3l_error_set(err, S3L_EINVALID_CONFIG, "destination options: bad version");
    /* Refused before anything is allocated or touched. */
    int rc = s3l_dest_check_disposition(o->disposition, err);
    if (rc)
        return rc;
    struct s3l__dest_format format;
    rc = s3l__format_parquet(o->parquet, o->memory, &format, err);
    if (rc)
        return rc;
    /* The writers close files at file_size: they measure their pages there (parquet/size.c). */
    ((struct pq_ctx *)format.ctx)->opts.file_size =
        o->file_size ? o->file_size : S3L_DEST_DEFAULT_FILE_SIZE;
    return recover ? s3l__dest_open_format(store, o, &format, out, err)
                   : s3l__dest_open_lazy(store, o, &format, out, err);
}
