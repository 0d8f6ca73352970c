/*
 * Lanes: each (stream, lane) writes one file at a time through the file format into a store
 * upload under the staging prefix, hashing its bytes (SHA-256) as they pass, and publishes it to
 * staging when the format's size estimate reaches file_size (or at prepare). The lane's row sink
 * is a forwarder over the format's: it opens a file at a lane's first row, closes it when full,
 * and makes any failure sticky, so that the epoch cannot commit with a lane's rows missing.
 * Threads: a lane touches only its own state, the store (thread-safe) and the staged list (under
 * d->mu). Every PROGRESS_ROWS rows the lane lets its upload's parts in flight move on
 * (s3l_store_upload_progress): the format emits bytes only now and then (Parquet: at a row group's
 * end), and on S3 a part sent then would otherwise travel only at the next write, so the upload
 * of a file overlaps the encoding of its next row group.
 */
#include <pthread.h>
#include <string.h>

#include "commit/commit.h"
#include "s3l/store.h"
#include "util/util.h"

/* --- staging files --- */

int s3l__staging_begin(struct s3l_dest *d, struct s3l__staging *f, const char *table,
                       const char *name, bool deadletter, struct s3l_error *err)
{
    memset(f, 0, sizeof(*f));
    f->staged = s3l__key_staged(d->pipeline, d->generation, table, name);
    f->final = deadletter ? s3l__key_deadletter(table, name) : s3l__key_final(table, name);
    int rc = f->staged && f->final
                 ? 0
                 : s3l_error_set(err, S3L_ENOMEM, "out of memory naming a file of table %s", table);
    if (rc == 0)
        rc = s3l__md_init(&f->sha, S3L__MD_SHA256, err);
    /* The store sizes its parts so that a file of file_size fits (S3: 10,000 parts). */
    struct s3l_put_options po = {.size_hint = d->file_size};
    if (rc == 0)
        rc = s3l_store_upload_begin(d->store, f->staged, &po, &f->up, err);
    return rc;
}

int s3l__staging_write(struct s3l__staging *f, const void *data, size_t len, struct s3l_error *err)
{
    int rc = s3l__md_update(&f->sha, data, len, err);
    if (rc)
        return rc;
    f->bytes += len;
    return s3l_store_upload_write(f->up, data, len, err);
}

void s3l__staging_cleanup(struct s3l__staging *f)
{
    s3l_store_upload_abort(f->up);
    s3l__md_free(&f->sha);
    s3l_free(f->staged);
    s3l_free(f->final);
    memset(f, 0, sizeof(*f));
}

/*
 * Adds the file to the epoch's staged list (taking its keys), with its size, rows and SHA-256.
 * up: its upload when not published yet (sealed: d->sealed gets it, and the commit publishes it
 * before its commit point), or NULL when it was.
 */
static int add_staged(struct s3l_dest *d, struct s3l__staging *f, const char *table, uint64_t rows,
                      bool deadletter, const uint8_t md[32], struct s3l_upload *up,
                      struct s3l_error *err)
{
    char *t = s3l_strdup(table);
    pthread_mutex_lock(&d->mu);
    int rc = t ? s3l__array_reserve(&d->staged, &d->cap_staged, d->n_staged + 1,
                                    sizeof(*d->staged), 16)
               : S3L_ENOMEM;
    if (rc == 0 && up)
        rc = s3l__array_reserve(&d->sealed, &d->cap_sealed, d->n_sealed + 1, sizeof(*d->sealed),
                                16);
    if (rc) {
        pthread_mutex_unlock(&d->mu);
        s3l_free(t);
        if (up)
            s3l_store_upload_abort(up);
        else
            s3l_store_remove(d->store, f->staged, NULL);
        return s3l_error_set(err, S3L_ENOMEM,
                             "out of memory adding a staged file of table %s to the epoch", table);
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
    if (up)
        d->sealed[d->n_sealed++] = (struct s3l__sealed){up, cf->staged};
    pthread_mutex_unlock(&d->mu);
    f->staged = NULL;
    f->final = NULL;
    s3l__staging_cleanup(f);
    return 0;
}

int s3l__staging_publish(struct s3l_dest *d, struct s3l__staging *f, const char *table,
                         uint64_t rows, bool deadletter, bool seal, struct s3l_error *err)
{
    uint8_t md[32];
    /* No file is published (made an object under the staging prefix) before this writer's claim
     * succeeded (claim.c); its parts may travel before (an upload is invisible until completed). */
    int rc = s3l__dest_claim_wait(d, err);
    if (rc == 0)
        rc = s3l__md_final(&f->sha, md, err);
    if (rc)
        return rc;
    struct s3l_upload *up = f->up;
    f->up = NULL;
    if (seal)
        return add_staged(d, f, table, rows, deadletter, md, up, err);
    rc = s3l_store_upload_publish(up, NULL, err);
    if (rc)
        return rc;
    s3l_store_event(d->store, S3L__EV_AFTER_STAGE);
    return add_staged(d, f, table, rows, deadletter, md, NULL, err);
}

int s3l__staging_publish_sealed(struct s3l_dest *d, struct s3l__sealed *sealed, size_t n,
                                struct s3l_error *err)
{
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        struct s3l_upload *up = sealed[i].up;
        sealed[i].up = NULL;
        if (rc) {
            s3l_store_upload_abort(up);
            continue;
        }
        rc = s3l_store_upload_publish(up, NULL, err);
        if (rc)
            s3l_error_prefix(err, "staging %s", sealed[i].staged);
        else
            s3l_store_event(d->store, S3L__EV_AFTER_STAGE);
    }
    return rc;
}

void s3l__staging_abort_sealed(struct s3l_dest *d)
{
    for (size_t i = 0; i < d->n_sealed; i++)
        s3l_store_upload_abort(d->sealed[i].up);
    d->n_sealed = 0;
}

/* --- lanes --- */

/* Rows between two calls of s3l_store_upload_progress: a call costs a loop over the upload's few
 * part slots when nothing travels, one non-blocking round of libcurl when something does; 64
 * rows take some microseconds to encode, far less than a part takes to travel. */
#define PROGRESS_ROWS 64

static void lane_progress(struct s3l__lane *l, size_t rows)
{
    l->rows_since_progress += (unsigned)S3L_MIN(rows, (size_t)PROGRESS_ROWS);
    if (l->rows_since_progress < PROGRESS_ROWS || !l->f.up)
        return;
    l->rows_since_progress = 0;
    s3l_store_upload_progress(l->f.up);
}

static int lane_sink_write(void *ctx, const void *data, size_t len, struct s3l_error *err)
{
    struct s3l__lane *l = ctx;
    return s3l__staging_write(&l->f, data, len, err);
}

static int lane_open_file(struct s3l__lane *l)
{
    struct s3l_dest *d = l->st->d;
    char name[256];
    int rc = s3l__name_data(name, sizeof(name), d->pipeline, d->stage_epoch,
                            d->generation, l->index, l->next_file, d->format.ext);
    if (rc)
        rc = s3l_error_set(&l->err, rc, "file name of pipeline %s: too long", d->pipeline);
    if (rc == 0)
        rc = s3l__dest_claim_begin(d, &l->err); /* in the background; a publish waits for it */
    if (rc == 0)
        rc = s3l__staging_begin(d, &l->f, l->st->table, name, false, &l->err);
    if (rc == 0) {
        struct s3l_pq_sink sink = {lane_sink_write, l};
        rc = d->format.open(d->format.ctx, l->st->schema, sink, &l->w, &l->err);
    }
    if (rc) {
        s3l__staging_cleanup(&l->f);
        l->w = NULL;
        return l->sticky = rc;
    }
    l->inner = d->format.row_sink(l->w);
    l->next_file++;
    return 0;
}

int s3l__lane_close_file(struct s3l__lane *l, bool seal, struct s3l_error *err)
{
    struct s3l_dest *d = l->st->d;
    uint64_t rows = d->format.rows(l->w);
    if (rows == 0) {
        /* Every row of this file was refused: no rows, no file (the upload is aborted). */
        s3l__lane_drop(l);
        l->next_file--;
        return 0;
    }
    int rc = d->format.close(l->w, err);
    d->format.free(l->w);
    l->w = NULL;
    if (rc == 0)
        rc = s3l__staging_publish(d, &l->f, l->st->table, rows, false, seal, err);
    s3l__staging_cleanup(&l->f);
    return rc;
}

void s3l__lane_drop(struct s3l__lane *l)
{
    if (l->w)
        l->st->d->format.free(l->w);
    l->w = NULL;
    s3l__staging_cleanup(&l->f);
}

#define LANE_READY(l)                                                                              \
    do {                                                                                           \
        if (!(l)->w)                                                                               \
            return (l)->sticky ? (l)->sticky : S3L_ESTATE;                                         \
    } while (0)

static int fwd_row_begin(void *ctx)
{
    struct s3l__lane *l = ctx;
    if (l->sticky)
        return l->sticky;
    if (!l->w && lane_open_file(l) != 0)
        return l->sticky;
    return l->inner.ops->row_begin(l->inner.ctx);
}

#define FWD(name, params, args)                                                                    \
    static int fwd_##name params                                                                   \
    {                                                                                              \
        struct s3l__lane *l = ctx;                                                                 \
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

int s3l__lane_sticky_out(struct s3l__lane *l, struct s3l_error *err)
{
    if (err && err->code == 0)
        *err = l->err;
    return l->sticky;
}

/* A lane's failure rc: sticky from now on, its open file dropped; returns rc (err as sticky_out).
 */
static int lane_fail(struct s3l__lane *l, int rc, struct s3l_error *err)
{
    l->sticky = rc;
    s3l__lane_drop(l);
    return s3l__lane_sticky_out(l, err);
}

static int fwd_row_end(void *ctx, struct s3l_error *err)
{
    struct s3l__lane *l = ctx;
    if (l->sticky)
        return s3l__lane_sticky_out(l, err);
    if (!l->w)
        return s3l_error_set(err, S3L_ESTATE, "row_end without row_begin");
    int rc = l->inner.ops->row_end(l->inner.ctx, err);
    if (rc == S3L_EINVALID_INPUT)
        return rc; /* the row is dropped; the file goes on */
    if (rc == 0 && l->st->d->format.size_estimate(l->w) >= l->st->d->file_size)
        rc = s3l__lane_close_file(l, false, &l->err);
    else if (rc && l->err.code == 0 && err)
        l->err = *err;
    if (rc)
        return lane_fail(l, rc, err);
    lane_progress(l, 1);
    return 0;
}

static void fwd_row_abort(void *ctx)
{
    struct s3l__lane *l = ctx;
    if (l->w)
        l->inner.ops->row_abort(l->inner.ctx);
}

/*
 * A batch of whole rows (formats with put_columns): as fwd_row_begin + fwd_row_end around each
 * row. The file is opened if none is, and closed on the row at which its size estimate reaches
 * fileSize, exactly as with rows one by one (the format stops there); the rest of the batch goes
 * on into the next file. A refused batch (S3L_EINVALID_INPUT) wrote nothing and the file goes
 * on; any other failure is sticky, as in fwd_row_end.
 */
static int fwd_put_columns(void *ctx, size_t n, const struct s3l_column_batch *cols,
                           struct s3l_error *err)
{
    struct s3l__lane *l = ctx;
    const struct s3l_dest *d = l->st->d;
    for (size_t first = 0; first < n;) {
        if (l->sticky)
            return s3l__lane_sticky_out(l, err);
        if (!l->w && lane_open_file(l) != 0)
            return s3l__lane_sticky_out(l, err);
        size_t done = 0;
        int rc = d->format.put_columns(l->w, n, cols, first, d->file_size, &done, err);
        if (rc == S3L_EINVALID_INPUT && done == 0)
            return rc;
        first += done;
        if (rc == 0 && d->format.size_estimate(l->w) >= d->file_size)
            rc = s3l__lane_close_file(l, false, &l->err);
        else if (rc == 0 && done == 0 && first < n)
            rc = s3l_error_set(&l->err, S3L_EINTERNAL, "a column batch made no progress");
        else if (rc && l->err.code == 0 && err)
            l->err = *err;
        if (rc)
            return lane_fail(l, rc, err);
        lane_progress(l, done);
    }
    return 0;
}

static const struct s3l_row_sink_ops lane_ops = {
    fwd_row_begin,    fwd_put_null,   fwd_put_bool,  fwd_put_int,
    fwd_put_uint,     fwd_put_double, fwd_put_bytes, fwd_put_decimal,
    fwd_put_interval, fwd_begin_list, fwd_end_list,  fwd_begin_struct,
    fwd_end_struct,   fwd_begin_map,  fwd_end_map,   fwd_row_end,
    fwd_row_abort,    NULL,
};

/* The same with column batches, for formats whose row sinks take them. */
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
    struct s3l__lane *l = &st->lanes[lane];
    if (l->sticky)
        return s3l__lane_sticky_out(l, err);
    if (!l->w)
        return 0;
    int rc = s3l__lane_close_file(l, s3l__dest_seals(st->d), &l->err);
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
    out->ops = st->d->format.put_columns ? &lane_batch_ops : &lane_ops;
    out->ctx = &st->lanes[lane];
    return 0;
}
