/*
 * The table destination: streams (one per table), lanes (one file writer each), staging, and the
 * epoch protocol of docs/internals/commit.md driven from s3l_dest_commit. Files are encoded by a
 * pluggable codec (commit.h) and streamed into a store upload under the staging prefix while a
 * SHA-256 of their bytes is kept; a file is staged (published under staging) when it reaches
 * file_size or at prepare. The commit point is the conditional checkpoint write that records the
 * pending epoch; protocol.c finishes it. Threads: lanes only touch their own state, the store
 * (thread-safe) and the staged list (under d->mu); dead letters go under the stream's dl_mu.
 */
#include <jansson.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commit/commit.h"
#include "os/os.h"
#include "s3l/store.h"
#include "util/util.h"

/* A file being written into staging: the upload, its running SHA-256 and size. */
struct staging {
    struct s3l_upload *up;
    EVP_MD_CTX *sha;
    uint64_t bytes;
    char *staged;
    char *final;
};

struct lane {
    struct s3l_dest_stream *st;
    unsigned index;
    unsigned next_file;
    void *w; /* the codec's writer of the open file, or NULL */
    struct s3l_row_sink inner;
    struct staging f;
    int sticky;
    struct s3l_error err;
};

struct s3l_dest_stream {
    struct s3l_dest *d;
    char *table;
    const struct s3l_schema *schema;
    struct lane *lanes;
    pthread_mutex_t dl_mu;
    struct staging dl;
    uint64_t dl_rows;
    int dl_sticky;
};

struct s3l_dest {
    struct s3l_store *store;
    struct s3l__dest_codec codec;
    char *pipeline;
    uint64_t file_size;
    unsigned lanes;
    bool allow_type_changes;
    uint64_t generation; /* this writer's: the checkpoint's at open + 1 */
    bool claimed;        /* the checkpoint holds this generation (step 0 done) */
    int64_t claim_ns;    /* wall clock just before the claim was written (ns since epoch) */
    int broken;          /* a commit failed at or after its commit point: only reopening recovers */
    struct s3l__ckpt ck;
    struct s3l_dest_stream **streams;
    size_t n_streams;
    pthread_mutex_t mu;
    struct s3l__ckpt_file *staged;
    size_t n_staged, cap_staged;
};

int s3l_dest_check_disposition(const char *disposition, struct s3l_error *err)
{
    if (!disposition || strcmp(disposition, "append") == 0)
        return 0;
    if (strcmp(disposition, "replace") == 0 || strcmp(disposition, "merge") == 0)
        return s3l_error_set(err, S3L_EUNSUPPORTED,
                             "disposition '%s' refused: plain Parquet files on object storage "
                             "cannot be %s atomically (readers would see a mix of old and new "
                             "files); only 'append' is supported, use a table format such as "
                             "Iceberg for %s",
                             disposition, disposition[0] == 'r' ? "replaced" : "merged",
                             disposition);
    return s3l_error_set(err, S3L_EINVALID_CONFIG, "disposition '%s' unknown (expected append)",
                         disposition);
}

int s3l_dest_table_path(const char *ns, const char *table, char **out, struct s3l_error *err)
{
    int rc = s3l_name_check(table, table ? strlen(table) : 0, "table", err);
    if (rc == 0 && ns && *ns)
        rc = s3l_name_check(ns, strlen(ns), "namespace", err);
    if (rc)
        return rc;
    size_t n = strlen(table) + (ns ? strlen(ns) : 0) + 2;
    char *p = s3l_malloc(n);
    if (!p)
        return S3L_ENOMEM;
    if (ns && *ns)
        snprintf(p, n, "%s/%s", ns, table);
    else
        snprintf(p, n, "%s", table);
    *out = p;
    return 0;
}

static char *fmt_alloc(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

static char *fmt_alloc(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *p = n >= 0 ? s3l_malloc((size_t)n + 1) : NULL;
    if (p) {
        va_start(ap, fmt);
        vsnprintf(p, (size_t)n + 1, fmt, ap);
        va_end(ap);
    }
    return p;
}

/*
 * Step 0 of the protocol: write this writer's generation into the checkpoint, conditionally on
 * the version read at open, before anything is staged. It is done at the first thing that needs
 * it (staging a file, a dead letter, a changed state, gc, a recovery), so that rerunning a
 * finished command writes nothing at all. A checkpoint changed since open means another writer
 * started (and may have committed epochs this one would re-read): this one is fenced.
 */
static int claim(struct s3l_dest *d, struct s3l_error *err)
{
    pthread_mutex_lock(&d->mu);
    int rc = 0;
    if (!d->claimed) {
        uint64_t before = d->ck.generation;
        d->claim_ns = s3l__os_now_ns();
        d->ck.generation = d->generation;
        struct s3l_error e2 = {0};
        rc = s3l__ckpt_write(d->store, &d->ck, d->generation, &e2);
        if (rc == S3L_ECONFLICT)
            rc = s3l_error_set(err, S3L_EFENCED,
                               "pipeline %s: another writer took the checkpoint since this one "
                               "opened; it stops without staging anything",
                               d->pipeline);
        else if (rc && err && err->code == 0)
            *err = e2;
        if (rc)
            d->ck.generation = before;
        else
            d->claimed = true;
    }
    pthread_mutex_unlock(&d->mu);
    return rc;
}

/* --- staging files --- */

static int staging_begin(struct s3l_dest *d, struct staging *f, const char *table, const char *name,
                         bool deadletter, struct s3l_error *err)
{
    memset(f, 0, sizeof(*f));
    f->staged = fmt_alloc("_openetl/staging/%s/g%020llu/%s/%s", d->pipeline,
                          (unsigned long long)d->generation, table, name);
    f->final = deadletter ? fmt_alloc("_openetl/deadletter/%s/%s", table, name)
                          : fmt_alloc("%s/%s", table, name);
    f->sha = EVP_MD_CTX_new();
    int rc = f->staged && f->final && f->sha ? 0 : S3L_ENOMEM;
    if (rc == 0 && !EVP_DigestInit_ex(f->sha, EVP_sha256(), NULL))
        rc = s3l_error_set(err, S3L_EINTERNAL, "sha256 init failed");
    /* The store sizes its parts so that a file of file_size fits (S3: 10,000 parts). */
    struct s3l_put_options po = {.size_hint = d->file_size};
    if (rc == 0)
        rc = s3l_store_upload_begin(d->store, f->staged, &po, &f->up, err);
    return rc;
}

static int staging_write(struct staging *f, const void *data, size_t len, struct s3l_error *err)
{
    if (!EVP_DigestUpdate(f->sha, data, len))
        return s3l_error_set(err, S3L_EINTERNAL, "sha256 update failed");
    f->bytes += len;
    return s3l_store_upload_write(f->up, data, len, err);
}

static void staging_cleanup(struct staging *f)
{
    s3l_store_upload_abort(f->up);
    EVP_MD_CTX_free(f->sha);
    s3l_free(f->staged);
    s3l_free(f->final);
    memset(f, 0, sizeof(*f));
}

/* Publishes the staged file and adds it to the epoch's staged list (taking its names). */
static int staging_publish(struct s3l_dest *d, struct staging *f, const char *table, uint64_t rows,
                           bool deadletter, struct s3l_error *err)
{
    uint8_t md[32];
    unsigned int mdlen = 0;
    if (!EVP_DigestFinal_ex(f->sha, md, &mdlen))
        return s3l_error_set(err, S3L_EINTERNAL, "sha256 final failed");
    struct s3l_upload *up = f->up;
    f->up = NULL;
    int rc = s3l_store_upload_publish(up, NULL, err);
    if (rc)
        return rc;
    s3l_store_event(d->store, S3L__EV_AFTER_STAGE);
    char *t = s3l_strdup(table);
    if (!t)
        return S3L_ENOMEM;
    pthread_mutex_lock(&d->mu);
    if (d->n_staged == d->cap_staged) {
        size_t cap = d->cap_staged ? d->cap_staged * 2 : 16;
        struct s3l__ckpt_file *p = s3l_realloc(d->staged, cap * sizeof(*p));
        if (!p) {
            pthread_mutex_unlock(&d->mu);
            s3l_free(t);
            s3l_store_remove(d->store, f->staged, NULL);
            return S3L_ENOMEM;
        }
        d->staged = p;
        d->cap_staged = cap;
    }
    struct s3l__ckpt_file *cf = &d->staged[d->n_staged++];
    memset(cf, 0, sizeof(*cf));
    cf->table = t;
    cf->staged = f->staged;
    cf->final = f->final;
    cf->size = f->bytes;
    cf->rows = rows;
    cf->deadletter = deadletter;
    s3l_hex_encode(md, 32, cf->sha256);
    pthread_mutex_unlock(&d->mu);
    f->staged = NULL;
    f->final = NULL;
    staging_cleanup(f);
    return 0;
}

/* --- lanes --- */

static int lane_sink_write(void *ctx, const void *data, size_t len, struct s3l_error *err)
{
    struct lane *l = ctx;
    return staging_write(&l->f, data, len, err);
}

static int lane_open_file(struct lane *l)
{
    struct s3l_dest *d = l->st->d;
    char name[256];
    unsigned long long e = (unsigned long long)(d->ck.committed_epoch + 1);
    unsigned long long g = (unsigned long long)d->generation;
    if (l->index == 0)
        snprintf(name, sizeof(name), "%s-%020llu-g%020llu-%05u%s", d->pipeline, e, g, l->next_file,
                 d->codec.ext);
    else
        snprintf(name, sizeof(name), "%s-%020llu-g%020llu-%05u-%05u%s", d->pipeline, e, g, l->index,
                 l->next_file, d->codec.ext);
    int rc = claim(d, &l->err);
    if (rc == 0)
        rc = staging_begin(d, &l->f, l->st->table, name, false, &l->err);
    if (rc == 0) {
        struct s3l_pq_sink sink = {lane_sink_write, l};
        rc = d->codec.open(d->codec.ctx, l->st->schema, sink, &l->w, &l->err);
    }
    if (rc) {
        staging_cleanup(&l->f);
        l->w = NULL;
        return l->sticky = rc;
    }
    l->inner = d->codec.row_sink(l->w);
    l->next_file++;
    return 0;
}

static void lane_drop(struct lane *l);

static int lane_close_file(struct lane *l, struct s3l_error *err)
{
    struct s3l_dest *d = l->st->d;
    uint64_t rows = d->codec.rows(l->w);
    if (rows == 0) {
        /* Every row of this file was refused: no rows, no file (the upload is aborted). */
        lane_drop(l);
        l->next_file--;
        return 0;
    }
    int rc = d->codec.close(l->w, err);
    d->codec.free(l->w);
    l->w = NULL;
    if (rc == 0)
        rc = staging_publish(d, &l->f, l->st->table, rows, false, err);
    staging_cleanup(&l->f);
    return rc;
}

static void lane_drop(struct lane *l)
{
    if (l->w)
        l->st->d->codec.free(l->w);
    l->w = NULL;
    staging_cleanup(&l->f);
}

#define LANE_READY(l)                                                                              \
    do {                                                                                           \
        if (!(l)->w)                                                                               \
            return (l)->sticky ? (l)->sticky : S3L_ESTATE;                                         \
    } while (0)

static int fwd_row_begin(void *ctx)
{
    struct lane *l = ctx;
    if (l->sticky)
        return l->sticky;
    if (!l->w && lane_open_file(l) != 0)
        return l->sticky;
    return l->inner.ops->row_begin(l->inner.ctx);
}

#define FWD(name, params, args)                                                                    \
    static int fwd_##name params                                                                   \
    {                                                                                              \
        struct lane *l = ctx;                                                                      \
        LANE_READY(l);                                                                             \
        return l->inner.ops->name args;                                                            \
    }

FWD(put_null, (void *ctx), (l->inner.ctx))
FWD(put_bool, (void *ctx, bool v), (l->inner.ctx, v))
FWD(put_int, (void *ctx, int64_t v), (l->inner.ctx, v))
FWD(put_uint, (void *ctx, uint64_t v), (l->inner.ctx, v))
FWD(put_double, (void *ctx, double v), (l->inner.ctx, v))
FWD(put_bytes, (void *ctx, const void *p, size_t n), (l->inner.ctx, p, n))
FWD(put_decimal, (void *ctx, int64_t hi, uint64_t lo), (l->inner.ctx, hi, lo))
FWD(put_interval, (void *ctx, int32_t m, int32_t dd, int64_t ns), (l->inner.ctx, m, dd, ns))
FWD(begin_list, (void *ctx), (l->inner.ctx))
FWD(end_list, (void *ctx), (l->inner.ctx))
FWD(begin_struct, (void *ctx), (l->inner.ctx))
FWD(end_struct, (void *ctx), (l->inner.ctx))
FWD(begin_map, (void *ctx), (l->inner.ctx))
FWD(end_map, (void *ctx), (l->inner.ctx))

static int sticky_out(struct lane *l, struct s3l_error *err)
{
    if (err && err->code == 0)
        *err = l->err;
    return l->sticky;
}

/* A lane's failure rc: sticky from now on, its open file dropped; returns rc (err as sticky_out). */
static int lane_fail(struct lane *l, int rc, struct s3l_error *err)
{
    l->sticky = rc;
    lane_drop(l);
    return sticky_out(l, err);
}

static int fwd_row_end(void *ctx, struct s3l_error *err)
{
    struct lane *l = ctx;
    if (l->sticky)
        return sticky_out(l, err);
    if (!l->w)
        return s3l_error_set(err, S3L_ESTATE, "row_end without row_begin");
    int rc = l->inner.ops->row_end(l->inner.ctx, err);
    if (rc == S3L_EINVALID_INPUT)
        return rc; /* the row is dropped; the file goes on */
    if (rc == 0 && l->st->d->codec.size_estimate(l->w) >= l->st->d->file_size)
        rc = lane_close_file(l, &l->err);
    else if (rc && l->err.code == 0 && err)
        l->err = *err;
    if (rc)
        return lane_fail(l, rc, err);
    return 0;
}

static void fwd_row_abort(void *ctx)
{
    struct lane *l = ctx;
    if (l->w)
        l->inner.ops->row_abort(l->inner.ctx);
}

/*
 * A batch of whole rows (codecs with put_columns): as fwd_row_begin + fwd_row_end around each
 * row. The file is opened if none is, and closed on the row at which its size estimate reaches
 * fileSize, exactly as with rows one by one (the codec stops there); the rest of the batch goes
 * on into the next file. A refused batch (S3L_EINVALID_INPUT) wrote nothing and the file goes
 * on; any other failure is sticky, as in fwd_row_end.
 */
static int fwd_put_columns(void *ctx, size_t n, const struct s3l_column_batch *cols,
                           struct s3l_error *err)
{
    struct lane *l = ctx;
    const struct s3l_dest *d = l->st->d;
    for (size_t first = 0; first < n;) {
        if (l->sticky)
            return sticky_out(l, err);
        if (!l->w && lane_open_file(l) != 0)
            return sticky_out(l, err);
        size_t done = 0;
        int rc = d->codec.put_columns(l->w, n, cols, first, d->file_size, &done, err);
        if (rc == S3L_EINVALID_INPUT && done == 0)
            return rc;
        first += done;
        if (rc == 0 && d->codec.size_estimate(l->w) >= d->file_size)
            rc = lane_close_file(l, &l->err);
        else if (rc == 0 && done == 0 && first < n)
            rc = s3l_error_set(&l->err, S3L_EINTERNAL, "a column batch made no progress");
        else if (rc && l->err.code == 0 && err)
            l->err = *err;
        if (rc)
            return lane_fail(l, rc, err);
    }
    return 0;
}

static const struct s3l_row_sink_ops lane_ops = {
    fwd_row_begin,  fwd_put_null,     fwd_put_bool,    fwd_put_int,      fwd_put_uint,
    fwd_put_double, fwd_put_bytes,    fwd_put_decimal, fwd_put_interval, fwd_begin_list,
    fwd_end_list,   fwd_begin_struct, fwd_end_struct,  fwd_begin_map,    fwd_end_map,
    fwd_row_end,    fwd_row_abort,    NULL,
};

/* The same with column batches, for codecs whose row sinks take them. */
static const struct s3l_row_sink_ops lane_batch_ops = {
    fwd_row_begin,  fwd_put_null,     fwd_put_bool,    fwd_put_int,      fwd_put_uint,
    fwd_put_double, fwd_put_bytes,    fwd_put_decimal, fwd_put_interval, fwd_begin_list,
    fwd_end_list,   fwd_begin_struct, fwd_end_struct,  fwd_begin_map,    fwd_end_map,
    fwd_row_end,    fwd_row_abort,    fwd_put_columns,
};

int s3l_dest_lane_close(struct s3l_dest_stream *st, unsigned lane, struct s3l_error *err)
{
    if (lane >= st->d->lanes)
        return s3l_error_set(err, S3L_EINVALID_ARGUMENT, "lane %u of %u", lane, st->d->lanes);
    struct lane *l = &st->lanes[lane];
    if (l->sticky)
        return sticky_out(l, err);
    if (!l->w)
        return 0;
    int rc = lane_close_file(l, &l->err);
    if (rc) {
        s3l_error_prefix(&l->err, "staging a file of %s", st->table);
        return lane_fail(l, rc, err);
    }
    return 0;
}

int s3l_dest_lane_sink(struct s3l_dest_stream *st, unsigned lane, struct s3l_row_sink *out)
{
    if (lane >= st->d->lanes)
        return S3L_EINVALID_ARGUMENT;
    out->ops = st->d->codec.put_columns ? &lane_batch_ops : &lane_ops;
    out->ctx = &st->lanes[lane];
    return 0;
}

/* --- dead letters --- */

static char *reject_line(const void *record, size_t len, const char *reason)
{
    json_t *rec = json_stringn(record, len);
    const char *field = "record";
    if (!rec) {
        /* Not valid UTF-8: JSON strings cannot hold it, so keep the bytes as hex. */
        char *hex = s3l_malloc(len * 2 + 1);
        if (!hex)
            return NULL;
        s3l_hex_encode(record, len, hex);
        rec = json_string(hex);
        s3l_free(hex);
        field = "record_hex";
    }
    json_t *o = json_pack("{s:s, s:o}", "reason", reason ? reason : "", field, rec);
    char *text = o ? json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    json_decref(o);
    char *line = text ? fmt_alloc("%s\n", text) : NULL;
    free(text);
    return line;
}

int s3l_dest_reject(struct s3l_dest_stream *st, const void *record, size_t len, const char *reason,
                    struct s3l_error *err)
{
    struct s3l_dest *d = st->d;
    char *line = reject_line(record, len, reason);
    if (!line)
        return S3L_ENOMEM;
    pthread_mutex_lock(&st->dl_mu);
    int rc = st->dl_sticky;
    if (rc == 0 && !st->dl.up)
        rc = claim(d, err);
    if (rc == 0 && !st->dl.up) {
        char name[192];
        snprintf(name, sizeof(name), "%s-%020llu-g%020llu.ndjson", d->pipeline,
                 (unsigned long long)(d->ck.committed_epoch + 1),
                 (unsigned long long)d->generation);
        rc = staging_begin(d, &st->dl, st->table, name, true, err);
    }
    if (rc == 0)
        rc = staging_write(&st->dl, line, strlen(line), err);
    if (rc == 0)
        st->dl_rows++;
    else if (!st->dl_sticky)
        st->dl_sticky = rc;
    pthread_mutex_unlock(&st->dl_mu);
    s3l_free(line);
    return rc;
}

/* --- streams --- */

static int record_schema(struct s3l_dest *d, const char *table, const struct s3l_schema *schema,
                         struct s3l_error *err)
{
    char *key = fmt_alloc("_openetl/schemas/%s.json", table);
    if (!key)
        return S3L_ENOMEM;
    int rc = 0;
    /* Conditional writes: two writers adding columns at once cannot lose each other's. */
    for (int attempt = 0; attempt < 10; attempt++) {
        uint8_t *rec = NULL;
        size_t len = 0;
        struct s3l_object_info info;
        struct s3l_error e2 = {0};
        rc = s3l_store_get(d->store, key, 0, UINT64_MAX, S3L__DOC_MAX, &rec, &len, &info, &e2);
        bool exists = rc == 0;
        if (rc && rc != S3L_ENOT_FOUND) {
            if (err && err->code == 0)
                *err = e2;
            break;
        }
        char *merged = NULL;
        char *url = fmt_alloc("%s/%s", d->store->url, key);
        rc =
            url ? d->codec.schema_merge(d->codec.ctx, table, url, exists ? (const char *)rec : NULL,
                                        len, schema, d->allow_type_changes, &merged, err)
                : S3L_ENOMEM;
        s3l_free(url);
        s3l_free(rec);
        if (rc || !merged)
            break;
        struct s3l_put_options po = {.if_none_match = !exists,
                                     .if_match = exists ? info.etag : NULL,
                                     .content_type = "application/json"};
        s3l_error_clear(&e2);
        rc = s3l_store_put(d->store, key, merged, strlen(merged), &po, NULL, &e2);
        s3l_free(merged);
        if (rc != S3L_EPRECONDITION_FAILED) {
            if (rc && err && err->code == 0)
                *err = e2;
            break;
        }
    }
    s3l_free(key);
    return rc;
}

static int found_one(void *ctx, const struct s3l_object_info *info)
{
    (void)ctx;
    (void)info;
    return 1; /* stops the listing: one is enough */
}

/*
 * A table must not lie inside another one's directory, nor hold one in its own: namespace "a"
 * next to table "a" would put URL/a/b/ inside URL/a/, and readers of a table's directory
 * (read_parquet over URL/a and all below it, a LOCATION in Athena) would mix both tables' rows.
 * Schema records tell which tables exist: _openetl/schemas/a.json for a, .../a/b.json for a/b.
 */
static int check_nesting(struct s3l_dest *d, const char *table, struct s3l_error *err)
{
    const char *slash = strchr(table, '/');
    int rc = 0;
    if (slash) {
        char *outer = fmt_alloc("_openetl/schemas/%.*s.json", (int)(slash - table), table);
        struct s3l_object_info info;
        struct s3l_error e2 = {0};
        rc = outer ? s3l_store_stat(d->store, outer, &info, &e2) : S3L_ENOMEM;
        s3l_free(outer);
        if (rc == 0)
            return s3l_error_set(err, S3L_EINVALID_CONFIG,
                                 "table %s would lie inside the directory of table %.*s: readers "
                                 "of that table's directory would mix both tables' rows; choose "
                                 "another namespace", table, (int)(slash - table), table);
        if (rc != S3L_ENOT_FOUND) {
            if (err && err->code == 0)
                *err = e2;
            return rc;
        }
    }
    char *inner = fmt_alloc("_openetl/schemas/%s/", table);
    rc = inner ? s3l_store_list(d->store, inner, found_one, NULL, err) : S3L_ENOMEM;
    s3l_free(inner);
    if (rc == 1)
        return s3l_error_set(err, S3L_EINVALID_CONFIG,
                             "table %s: %s is already a namespace of other tables, whose files lie "
                             "in its directory; readers of it would mix their rows; choose another "
                             "table name", table, table);
    return rc;
}

static void stream_free(struct s3l_dest_stream *st)
{
    if (!st)
        return;
    for (unsigned i = 0; st->lanes && i < st->d->lanes; i++)
        lane_drop(&st->lanes[i]);
    staging_cleanup(&st->dl);
    pthread_mutex_destroy(&st->dl_mu);
    s3l_free(st->lanes);
    s3l_free(st->table);
    s3l_free(st);
}

int s3l_dest_stream(struct s3l_dest *d, const char *ns, const char *table,
                    const struct s3l_schema *schema, struct s3l_dest_stream **out,
                    struct s3l_error *err)
{
    char *t = NULL;
    int rc = s3l_dest_table_path(ns, table, &t, err);
    if (rc)
        return rc;
    for (size_t i = 0; i < d->n_streams; i++)
        if (strcmp(d->streams[i]->table, t) == 0) {
            rc = s3l_error_set(err, S3L_EINVALID_CONFIG, "table %s added twice", t);
            s3l_free(t);
            return rc;
        }
    rc = check_nesting(d, t, err);
    if (rc == 0)
        rc = record_schema(d, t, schema, err);
    struct s3l_dest_stream *st = rc ? NULL : s3l_calloc(1, sizeof(*st));
    struct s3l_dest_stream **arr = NULL;
    if (rc == 0 && st) {
        st->d = d;
        st->table = t;
        t = NULL;
        st->schema = schema;
        pthread_mutex_init(&st->dl_mu, NULL);
        st->lanes = s3l_calloc(d->lanes, sizeof(*st->lanes));
        arr = s3l_realloc(d->streams, (d->n_streams + 1) * sizeof(*arr));
    }
    if (rc == 0 && (!st || !st->lanes || !arr)) {
        if (arr)
            d->streams = arr;
        stream_free(st);
        s3l_free(t);
        return S3L_ENOMEM;
    }
    s3l_free(t);
    if (rc)
        return rc;
    for (unsigned i = 0; i < d->lanes; i++) {
        st->lanes[i].st = st;
        st->lanes[i].index = i;
    }
    d->streams = arr;
    d->streams[d->n_streams++] = st;
    *out = st;
    return 0;
}

/* --- the epoch --- */

static void reset_epoch(struct s3l_dest *d)
{
    for (size_t i = 0; i < d->n_streams; i++) {
        struct s3l_dest_stream *st = d->streams[i];
        for (unsigned j = 0; j < d->lanes; j++) {
            lane_drop(&st->lanes[j]);
            st->lanes[j].next_file = 0;
            st->lanes[j].sticky = 0;
            s3l_error_clear(&st->lanes[j].err);
        }
        staging_cleanup(&st->dl);
        st->dl_rows = 0;
        st->dl_sticky = 0;
    }
}

static void free_staged(struct s3l_dest *d, bool remove)
{
    for (size_t i = 0; i < d->n_staged; i++) {
        if (remove)
            s3l_store_remove(d->store, d->staged[i].staged, NULL);
        s3l_free(d->staged[i].table);
        s3l_free(d->staged[i].staged);
        s3l_free(d->staged[i].final);
    }
    d->n_staged = 0;
}

void s3l_dest_abort(struct s3l_dest *d)
{
    if (!d)
        return;
    reset_epoch(d);
    free_staged(d, true);
}

/* Step 2: close and stage every open file. A lane's sticky failure is returned first. */
static int prepare(struct s3l_dest *d, struct s3l_error *err)
{
    for (size_t i = 0; i < d->n_streams; i++) {
        struct s3l_dest_stream *st = d->streams[i];
        for (unsigned j = 0; j < d->lanes; j++)
            if (st->lanes[j].sticky)
                return sticky_out(&st->lanes[j], err);
        if (st->dl_sticky)
            return s3l_error_set(err, st->dl_sticky, "dead-letter file of %s failed earlier",
                                 st->table);
    }
    for (size_t i = 0; i < d->n_streams; i++) {
        struct s3l_dest_stream *st = d->streams[i];
        for (unsigned j = 0; j < d->lanes; j++) {
            if (!st->lanes[j].w)
                continue;
            int rc = lane_close_file(&st->lanes[j], err);
            if (rc) {
                s3l_error_prefix(err, "staging a file of %s", st->table);
                return rc; /* not prefix's result: ENOMEM leaves err empty (code 0) */
            }
        }
        if (st->dl.up) {
            int rc = staging_publish(d, &st->dl, st->table, st->dl_rows, true, err);
            if (rc)
                return rc;
        }
    }
    s3l_store_event(d->store, S3L__EV_AFTER_PREPARE);
    return 0;
}

static int set_state(struct s3l_dest *d, const char *state_json, char **old)
{
    *old = d->ck.state;
    if (!state_json) {
        *old = NULL;
        return 0;
    }
    d->ck.state = s3l_strdup(state_json);
    if (!d->ck.state) {
        d->ck.state = *old;
        return S3L_ENOMEM;
    }
    return 0;
}

/* Whether the runner's state text is the recorded one, compared as JSON values. */
static bool same_state(const char *recorded, const char *state_json)
{
    if (!recorded)
        return false;
    json_t *a = json_loads(recorded, JSON_DECODE_ANY, NULL);
    json_t *b = json_loads(state_json, JSON_DECODE_ANY, NULL);
    bool same = a && b && json_equal(a, b);
    json_decref(a);
    json_decref(b);
    return same;
}

int s3l_dest_commit(struct s3l_dest *d, const char *state_json, struct s3l_dest_commit_info *info,
                    struct s3l_error *err)
{
    struct s3l_dest_commit_info ci = {0};
    if (d->broken)
        return s3l_error_set(err, S3L_ESTATE,
                             "an earlier commit failed after its commit point; reopen to recover");
    int rc = prepare(d, err);
    if (rc)
        return rc;
    char *old_state = NULL;
    rc = set_state(d, state_json, &old_state);
    if (rc)
        return rc;
    if (d->n_staged == 0) {
        /* No stream had rows: no file, no marker; only the runner's positions move (and
         * nothing at all is written when they did not). */
        if (state_json && !same_state(old_state, state_json)) {
            rc = claim(d, err);
            if (rc == 0)
                rc = s3l__ckpt_write(d->store, &d->ck, d->generation, err);
        }
    } else {
        for (size_t i = 0; i < d->n_staged; i++) {
            if (d->staged[i].deadletter) {
                ci.rejected += d->staged[i].rows;
            } else {
                ci.files++;
                ci.rows += d->staged[i].rows;
            }
        }
        ci.epoch = d->ck.committed_epoch + 1;
        d->ck.has_pending = true;
        d->ck.pending_epoch = ci.epoch;
        d->ck.pending_generation = d->generation;
        d->ck.files = d->staged;
        d->ck.n_files = d->n_staged;
        /* The commit point. */
        rc = s3l__ckpt_write(d->store, &d->ck, d->generation, err);
        d->ck.files = NULL;
        d->ck.n_files = 0;
        if (rc) {
            d->ck.has_pending = false;
            d->ck.pending_epoch = d->ck.pending_generation = 0;
            /* The write may have happened even so (a reply lost after the publish, an error
             * after the rename): the staged files may be pending now, so they must not be
             * deleted. They are left for recovery or gc, and this writer stops. */
            free_staged(d, false);
            d->broken = rc;
        } else {
            s3l_store_event(d->store, S3L__EV_AFTER_CHECKPOINT);
            d->ck.files = d->staged;
            d->ck.n_files = d->n_staged;
            d->staged = NULL;
            d->n_staged = d->cap_staged = 0;
            rc = s3l__finish_pending(d->store, &d->ck, d->generation, err);
            if (rc)
                d->broken = rc;
        }
    }
    if (rc && !d->broken) {
        s3l_free(d->ck.state);
        d->ck.state = old_state;
    } else {
        s3l_free(old_state);
    }
    if (rc)
        return rc;
    reset_epoch(d);
    if (info)
        *info = ci;
    return 0;
}

/* --- gc --- */

struct gc_ctx {
    struct s3l_dest *d;
    size_t prefix_len;
    char **keys;
    size_t n, cap;
};

static int gc_collect(void *ctx, const struct s3l_object_info *info)
{
    struct gc_ctx *g = ctx;
    const char *rest = info->key + g->prefix_len;
    unsigned long long gen = 0;
    if (rest[0] != 'g' || sscanf(rest + 1, "%20llu", &gen) != 1 || gen >= g->d->generation)
        return 0;
    for (size_t i = 0; i < g->d->ck.n_files; i++)
        if (strcmp(g->d->ck.files[i].staged, info->key) == 0)
            return 0; /* pending: recovery will commit it */
    if (g->n == g->cap) {
        size_t cap = g->cap ? g->cap * 2 : 32;
        char **k = s3l_realloc(g->keys, cap * sizeof(*k));
        if (!k)
            return S3L_ENOMEM;
        g->keys = k;
        g->cap = cap;
    }
    if (!(g->keys[g->n] = s3l_strdup(info->key)))
        return S3L_ENOMEM;
    g->n++;
    return 0;
}

/*
 * Temp files of uploads that died (docs/internals/store.md, "Stale temp files"): a temp file is
 * removed only when no live process holds it AND its inode changed more than the grace before
 * `since` (the claim of this generation, or now): the grace covers the instants in which a live
 * writer's new temp file is not locked yet, and clocks of coarse granularity.
 */
#define SWEEP_GRACE_NS 1000000000LL

static int sweep_temps(struct s3l_dest *d, const char *prefix, int64_t since, uint64_t *n,
                       struct s3l_error *err)
{
    return s3l_store_sweep(d->store, prefix, since - SWEEP_GRACE_NS, n, err);
}

int s3l_dest_gc(struct s3l_dest *d, uint64_t *removed, struct s3l_error *err)
{
    /* Claim first: a writer of the generation gc is about to judge dead must be fenced. */
    int rc = claim(d, err);
    if (rc)
        return rc;
    char *prefix = fmt_alloc("_openetl/staging/%s/", d->pipeline);
    if (!prefix)
        return S3L_ENOMEM;
    struct gc_ctx g = {d, strlen(prefix), NULL, 0, 0};
    rc = s3l_store_list(d->store, prefix, gc_collect, &g, err);
    uint64_t n = 0;
    for (size_t i = 0; i < g.n; i++) {
        if (rc == 0) {
            s3l_store_event(d->store, S3L__EV_IN_GC);
            rc = s3l_store_remove(d->store, g.keys[i], err);
            n += rc == 0;
        }
        s3l_free(g.keys[i]);
    }
    s3l_free(g.keys);
    s3l_free(prefix);
    /* Then the hidden temp files of killed writers, anywhere in the destination (staging and
     * table directories: a kill during a copy leaves one next to the table's files). */
    uint64_t swept = 0;
    if (rc == 0)
        rc = sweep_temps(d, "", d->claim_ns, &swept, err);
    if (removed)
        *removed = n + swept;
    return rc;
}

/* --- open and free --- */

static int check_options(const struct s3l_dest_options *o, struct s3l_error *err)
{
    if (!o || o->version != S3L_DEST_OPTIONS_VERSION)
        return s3l_error_set(err, S3L_EINVALID_CONFIG, "destination options: bad version");
    int rc = s3l_dest_check_disposition(o->disposition, err);
    if (rc)
        return rc;
    const char *p = o->pipeline_id;
    size_t n = p ? strlen(p) : 0;
    bool ok = n >= 1 && n <= 64 && strcmp(p, ".") != 0 && strcmp(p, "..") != 0;
    for (size_t i = 0; ok && i < n; i++)
        ok = (p[i] >= 'a' && p[i] <= 'z') || (p[i] >= 'A' && p[i] <= 'Z') ||
             (p[i] >= '0' && p[i] <= '9') || p[i] == '-' || p[i] == '_' || p[i] == '.';
    if (!ok)
        return s3l_error_set(err, S3L_EINVALID_CONFIG,
                             "pipeline id '%.80s' refused: expected 1 to 64 of A-Z a-z 0-9 . _ -",
                             p ? p : "");
    if (o->lanes > S3L_DEST_MAX_LANES)
        return s3l_error_set(err, S3L_EINVALID_CONFIG, "lanes %u: at most %d", o->lanes,
                             S3L_DEST_MAX_LANES);
    return 0;
}

static void dest_free_fields(struct s3l_dest *d)
{
    for (size_t i = 0; i < d->n_streams; i++)
        stream_free(d->streams[i]);
    s3l_free(d->streams);
    free_staged(d, false);
    s3l_free(d->staged);
    s3l__ckpt_cleanup(&d->ck);
    s3l_free(d->pipeline);
    if (d->codec.destroy)
        d->codec.destroy(d->codec.ctx);
    pthread_mutex_destroy(&d->mu);
    s3l_free(d);
}

int s3l__dest_open_codec(struct s3l_store *store, const struct s3l_dest_options *o,
                         const struct s3l__dest_codec *codec, struct s3l_dest **out,
                         struct s3l_error *err)
{
    int rc = check_options(o, err);
    struct s3l_dest *d = rc ? NULL : s3l_calloc(1, sizeof(*d));
    if (!d) {
        if (codec->destroy)
            codec->destroy(codec->ctx);
        return rc ? rc : S3L_ENOMEM;
    }
    pthread_mutex_init(&d->mu, NULL);
    d->store = store;
    d->codec = *codec;
    d->file_size = o->file_size ? o->file_size : S3L_DEST_DEFAULT_FILE_SIZE;
    d->lanes = o->lanes ? o->lanes : 1;
    d->allow_type_changes = o->allow_type_changes;
    d->pipeline = s3l_strdup(o->pipeline_id);
    rc = d->pipeline ? 0 : S3L_ENOMEM;
    if (rc == 0)
        rc = s3l__ckpt_read(store, d->pipeline, &d->ck, err);
    if (rc == 0) {
        d->generation = d->ck.generation + 1;
        /* Step 5: a pending epoch is committed under the generation recorded with it, by a
         * writer that claimed its own generation first (so an older one is fenced). */
        if (d->ck.has_pending) {
            rc = claim(d, err);
            if (rc == 0)
                rc = s3l__finish_pending(store, &d->ck, d->generation, err);
        }
    }
    if (rc == 0 && d->ck.has_pending) {
        /* Recovery's housekeeping after a crash, cheap (this pipeline's staging area only) and
         * best effort: temp files of its killed writers. Only when a pending epoch was
         * recovered, so that opening after a clean run changes nothing; gc sweeps everything. */
        char *staging = fmt_alloc("_openetl/staging/%s/", d->pipeline);
        if (staging)
            sweep_temps(d, staging, s3l__os_now_ns(), NULL, NULL);
        s3l_free(staging);
    }
    if (rc) {
        dest_free_fields(d);
        return rc;
    }
    *out = d;
    return 0;
}

void s3l_dest_free(struct s3l_dest *d)
{
    if (!d)
        return;
    s3l_dest_abort(d);
    dest_free_fields(d);
}

uint64_t s3l_dest_generation(const struct s3l_dest *d)
{
    return d->generation;
}

uint64_t s3l_dest_committed_epoch(const struct s3l_dest *d)
{
    return d->ck.committed_epoch;
}

const char *s3l_dest_state(const struct s3l_dest *d)
{
    return d->ck.state;
}
