/*
 * Steps 4 and 5 of the protocol (docs/internals/commit.md): finishing a pending epoch, whether
 * right after its commit point or on the next start (recovery). First the schema records the epoch
 * carries (a record changes only with the first epoch holding its new columns or types, and only
 * once that epoch passed its commit point; on a store with batched puts all at once); then copy
 * every staged file of the epoch to its final name (every stream's in one batch on a store with
 * batched copies); then write the streams' markers put-if-absent (all at once on a store with
 * batched puts: each depends only on its own stream's copies, all done by then); then record the
 * epoch as committed, while the staged files are deleted (once every marker is there no step
 * reads them again: a recovery skips a stream whose marker exists). Every step is idempotent (a
 * copy replaces its target with the same bytes, a marker that exists with the same bytes is
 * success), so a crash anywhere is repaired by running this again with the same checkpoint; the
 * names come from the checkpoint, so recovery writes under the generation recorded with the
 * epoch.
 */
#include <pthread.h>
#include <string.h>

#include "commit/commit.h"
#include "util/util.h"

static int copy_one(struct s3l_store *s, const struct s3l__ckpt_file *f, struct s3l_error *err)
{
    struct s3l_error e2 = {0};
    /* The size is the checkpoint's: S3 needs no HeadObject to choose how to copy. */
    int rc = s3l_store_copy_sized(s, f->staged, f->size, f->final, &e2);
    if (rc == S3L_ENOT_FOUND) {
        /* The staged file is gone: fine only if the final one is there, whole. */
        struct s3l_object_info info;
        if (s3l_store_stat(s, f->final, &info, NULL) == 0 && info.size == f->size)
            return 0;
        return s3l_error_set(err, S3L_ECORRUPT,
                             "pending file %s: neither the staged copy %s nor the final file is "
                             "there",
                             f->final, f->staged);
    }
    if (rc && err && err->code == 0)
        *err = e2;
    return rc;
}

/*
 * Writes the record an epoch carries for table T, conditionally on the record it was merged with
 * at open (If-Match on that ETag; If-None-Match when there was none). On a race (412) it re-reads:
 * a concurrent writer's record is united with ours through the format's record_union, columns
 * only added. A column the other writer recorded with another type keeps the recorded type: every
 * data file carries its own types in its footer, so the record keeps naming every column and
 * taking ours would undo the other writer's choice. Finding the record already holding every
 * column (a repeated finish in recovery, whose first write then fails its condition, or a writer
 * that added the same columns) writes nothing.
 */
static int write_record(struct s3l_store *s, const struct s3l__dest_format *f,
                        const struct s3l__ckpt_schema *cs, const struct s3l_put_item *sent,
                        struct s3l_error *err)
{
    char *key = s3l__key_schema(cs->table);
    char *url = key ? s3l__key_url(s, key) : NULL;
    if (!url) {
        s3l_free(key);
        return s3l_error_set(err, S3L_ENOMEM,
                             "out of memory naming the schema record of table %s", cs->table);
    }
    size_t alen = strlen(cs->record);
    struct s3l_put_options po = {.if_none_match = !cs->etag,
                                 .if_match = cs->etag,
                                 .content_type = "application/json"};
    struct s3l_error e2 = {0};
    int rc;
    if (sent) { /* the first put went out with the others (write_records) */
        rc = sent->rc;
        e2 = sent->err;
    } else {
        rc = s3l_store_put(s, key, cs->record, alen, &po, NULL, &e2);
    }
    for (int attempt = 0; attempt < 10 && rc == S3L_EPRECONDITION_FAILED; attempt++) {
        uint8_t *cur = NULL;
        size_t len = 0;
        struct s3l_object_info info;
        s3l_error_clear(&e2);
        rc = s3l_store_get(s, key, 0, UINT64_MAX, S3L__DOC_MAX, &cur, &len, &info, &e2);
        bool exists = rc == 0;
        if (rc && rc != S3L_ENOT_FOUND)
            break;
        char *text = NULL;
        rc = 0;
        if (!exists)
            rc = (text = s3l_strdup(cs->record)) ? 0 : S3L_ENOMEM;
        else if (!(len == alen && memcmp(cur, cs->record, len) == 0))
            rc = f && f->record_union ? f->record_union(f->ctx, url, (const char *)cur, len,
                                                        cs->record, alen, &text, err)
                                      : s3l_error_set(err, S3L_ECONFLICT,
                                                      "schema record %s changed under this "
                                                      "writer",
                                                      url);
        s3l_free(cur);
        if (rc || !text)
            break; /* an error, or the record already holds every column */
        po.if_none_match = !exists;
        po.if_match = exists ? info.etag : NULL;
        s3l_error_clear(&e2);
        rc = s3l_store_put(s, key, text, strlen(text), &po, NULL, &e2);
        s3l_free(text);
    }
    if (rc == S3L_EPRECONDITION_FAILED)
        rc = s3l_error_set(err, S3L_ECONFLICT, "schema record %s kept changing under this writer",
                           url);
    else if (rc && err && err->code == 0 && e2.code)
        *err = e2;
    s3l_free(url);
    s3l_free(key);
    return s3l__oom(err, rc, "writing a schema record");
}

/*
 * The epoch's schema records (write_record each). Two or more on a store with batched puts: the
 * first conditional put of each goes out at once (S3 sends the PutObjects together: a record
 * depends on no other, issue 14 item 2), then each one that failed its condition (412) is
 * settled by write_record from there (re-read, union, put again), one after the other. The first
 * failure is returned.
 */
static int write_records(struct s3l_store *s, const struct s3l__dest_format *f,
                         const struct s3l__ckpt *c, struct s3l_error *err)
{
    size_t n = c->n_schemas;
    struct s3l_put_item *items = NULL;
    struct s3l_put_options *po = NULL;
    if (n >= 2 && s3l_store_puts_in_batches(s)) {
        items = s3l_calloc(n, sizeof(*items));
        po = s3l_calloc(n, sizeof(*po));
    }
    bool batch = items && po;
    for (size_t i = 0; batch && i < n; i++) {
        const struct s3l__ckpt_schema *cs = &c->schemas[i];
        po[i] = (struct s3l_put_options){.if_none_match = !cs->etag, .if_match = cs->etag,
                                         .content_type = "application/json"};
        items[i] = (struct s3l_put_item){.key = s3l__key_schema(cs->table), .data = cs->record,
                                         .len = strlen(cs->record), .opts = &po[i]};
        batch = items[i].key != NULL;
    }
    if (batch)
        s3l_store_put_many(s, items, n, NULL);
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++)
        rc = batch && items[i].rc == 0 ? 0
                                       : write_record(s, f, &c->schemas[i],
                                                      batch ? &items[i] : NULL, err);
    for (size_t i = 0; items && i < n; i++)
        s3l_free((char *)items[i].key);
    s3l_free(items);
    s3l_free(po);
    return rc;
}

/*
 * Copies the staged files c->files[order[0..n)] (those of the streams without a marker yet, in
 * the checkpoint's order of streams, by their first file, then of files) to their final names. A
 * store that copies in batches (ops->copy_many: S3 sends the CopyObjects at once) gets them all
 * together, every stream's, since no copy depends on another (issue 14 item 2: one round trip
 * for the epoch, not one per stream); should the batch fail (a staged file gone in a recovery, a
 * store error), they are copied again one by one, which settles each case as copy_one does
 * (copies are idempotent). Otherwise one by one, with the event between-copies between two.
 */
static int copy_files(struct s3l_store *s, const struct s3l__ckpt *c, const size_t *order,
                      size_t n, struct s3l_error *err)
{
    struct s3l_copy_item *items =
        n >= 2 && s3l_store_copies_in_batches(s) ? s3l_calloc(n, sizeof(*items)) : NULL;
    if (items) {
        for (size_t k = 0; k < n; k++) {
            const struct s3l__ckpt_file *f = &c->files[order[k]];
            items[k] = (struct s3l_copy_item){f->staged, f->final, f->size};
        }
        struct s3l_error e2 = {0};
        int rc = s3l_store_copy_many(s, items, n, &e2);
        s3l_free(items);
        if (rc == 0)
            return 0;
    }
    int rc = 0;
    for (size_t k = 0; k < n && rc == 0; k++) {
        if (k > 0)
            s3l_store_event(s, S3L__EV_BETWEEN_COPIES);
        rc = copy_one(s, &c->files[order[k]], err);
    }
    return rc;
}

/*
 * Makes one stream's marker (mk: key and document, owned, for the markers' put) and says whether
 * its files are to be copied (*copy). In a recovery the marker is looked at first: when it
 * exists the copies were done (its bytes are checked by the put that follows, which finds it).
 * Right after this writer's own commit point it cannot exist yet (the epoch number is new in the
 * checkpoint every write of which is conditional, and markers follow commit points), so no
 * HeadObject is sent: the put-if-absent of the marker still compares the bytes if one turns out
 * to be there.
 */
static int stream_marker(struct s3l_store *s, struct s3l__ckpt *c, const char *table,
                         bool recovering, struct s3l_put_item *mk, bool *copy,
                         struct s3l_error *err)
{
    char *mkey = s3l__key_marker(table, c->pipeline, c->pending_epoch);
    char *doc = NULL;
    size_t len = 0;
    int rc = mkey ? s3l__marker_encode(c, table, &doc, &len) : S3L_ENOMEM;
    mk->key = mkey;
    mk->data = doc;
    mk->len = len;
    struct s3l_object_info info;
    struct s3l_error e2 = {0};
    int st = rc != 0 ? rc : recovering ? s3l_store_stat(s, mkey, &info, &e2) : S3L_ENOT_FOUND;
    *copy = rc == 0 && st == S3L_ENOT_FOUND;
    if (rc == 0 && st != 0 && st != S3L_ENOT_FOUND) {
        rc = st;
        if (err && err->code == 0)
            *err = e2;
    }
    return s3l__oom(err, rc, "putting a marker");
}

/*
 * The markers of the epoch's streams, after all their copies (event before-marker before the
 * first, after-marker after the last): put-if-absent, all at once on a store with batched puts
 * (S3: the PutObjects together; a marker depends only on its own stream's copies, all done), else
 * one after the other with the event between-markers between two. A marker that exists already
 * (a recovery repeating this step) must hold our bytes (s3l__marker_check).
 */
static int put_markers(struct s3l_store *s, struct s3l_put_item *mk, size_t n,
                       struct s3l_error *err)
{
    static const struct s3l_put_options po = {.if_none_match = true,
                                              .content_type = "application/json"};
    for (size_t i = 0; i < n; i++)
        mk[i].opts = &po;
    s3l_store_event(s, S3L__EV_BEFORE_MARKER);
    if (n >= 2 && s3l_store_puts_in_batches(s)) {
        s3l_store_put_many(s, mk, n, NULL);
    } else {
        for (size_t i = 0; i < n; i++) {
            if (i > 0)
                s3l_store_event(s, S3L__EV_BETWEEN_MARKERS);
            mk[i].rc = s3l_store_put(s, mk[i].key, mk[i].data, mk[i].len, &po, NULL, &mk[i].err);
            if (mk[i].rc && mk[i].rc != S3L_EPRECONDITION_FAILED)
                break; /* the others stay unsent: the epoch is not committed */
        }
    }
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        rc = mk[i].rc;
        if (rc == S3L_EPRECONDITION_FAILED)
            rc = s3l__marker_check(s, mk[i].key, mk[i].data, mk[i].len, err);
        else if (rc && err && err->code == 0)
            *err = mk[i].err;
    }
    if (rc == 0)
        s3l_store_event(s, S3L__EV_AFTER_MARKER);
    return rc;
}

/* Copies every stream's files (all at once, copy_files), then puts their markers (an entry per
 * distinct table, in the order of their first file). */
static int finish_streams(struct s3l_store *s, struct s3l__ckpt *c, bool recovering,
                          struct s3l_error *err)
{
    size_t nf = c->n_files ? c->n_files : 1;
    struct s3l_put_item *mk = s3l_calloc(nf, sizeof(*mk));
    size_t *order = s3l_calloc(nf, sizeof(*order));
    if (!mk || !order) {
        s3l_free(mk);
        s3l_free(order);
        return s3l_error_set(err, S3L_ENOMEM, "out of memory putting the markers of epoch %llu",
                             (unsigned long long)c->pending_epoch);
    }
    int rc = 0;
    size_t n = 0, n_copy = 0;
    for (size_t i = 0; i < c->n_files && rc == 0; i++) {
        bool seen = false, copy = false;
        for (size_t j = 0; j < i && !seen; j++)
            seen = strcmp(c->files[j].table, c->files[i].table) == 0;
        if (seen)
            continue;
        rc = stream_marker(s, c, c->files[i].table, recovering, &mk[n++], &copy, err);
        for (size_t j = i; copy && j < c->n_files; j++)
            if (strcmp(c->files[j].table, c->files[i].table) == 0)
                order[n_copy++] = j;
    }
    if (rc == 0 && n_copy)
        rc = copy_files(s, c, order, n_copy, err);
    if (rc == 0 && n)
        rc = put_markers(s, mk, n, err);
    for (size_t i = 0; i < n; i++) {
        s3l_free((char *)mk[i].key);
        s3l_free((char *)mk[i].data);
    }
    s3l_free(mk);
    s3l_free(order);
    return rc;
}

/* The staged files' deletion, on a thread of its own while the committed checkpoint is written
 * (its requests counted in the tally of the thread that started it). */
struct removal {
    struct s3l_store *s;
    const struct s3l__ckpt_file *files;
    size_t n;
    struct s3l__tally *tally;
    pthread_t th;
    uint64_t failed;       /* files whose deletion failed */
    struct s3l_error err;  /* the first failure */
};

/* Deletes the staged copies one by one, counting those that fail in r->failed. */
static void remove_each(struct removal *r)
{
    for (size_t i = 0; i < r->n; i++) {
        struct s3l_error e = {0};
        if (s3l_store_remove(r->s, r->files[i].staged, &e) != 0 && r->failed++ == 0)
            r->err = e;
    }
}

/*
 * Deletes the staged copies (one DeleteObjects on S3); a failure leaves them for gc, counted in
 * r->failed. A batch refused for good (403: no s3:DeleteObject) is tried again key by key, each
 * refusal as quick, so the count is exact; one that failed past the client's retries (5xx, a
 * lost connection) counts whole, as its keys' fate is unknown and a try per key would cost the
 * retries again for each.
 */
static void remove_staged(struct removal *r)
{
    const char **keys = s3l_calloc(r->n ? r->n : 1, sizeof(*keys));
    for (size_t i = 0; keys && i < r->n; i++)
        keys[i] = r->files[i].staged;
    if (!keys || r->n < 2) {
        remove_each(r);
    } else if (s3l_store_remove_many(r->s, keys, r->n, &r->err) != 0) {
        if (r->err.retryable) {
            r->failed = r->n;
        } else {
            s3l_error_clear(&r->err);
            remove_each(r);
        }
    }
    s3l_free(keys);
}

static void *removal_main(void *arg)
{
    struct removal *r = arg;
    s3l__tally_set(r->tally);
    remove_staged(r);
    return NULL;
}

int s3l__finish_pending(struct s3l_store *s, const struct s3l__dest_format *f, struct s3l__ckpt *c,
                        uint64_t mine, bool recovering, struct s3l__left *left,
                        struct s3l_error *err)
{
    int rc = 0;
    /* The records first: a reader or writer finding a copied file finds its columns recorded. */
    rc = write_records(s, f, c, err);
    if (rc == 0)
        rc = finish_streams(s, c, recovering, err);
    if (rc) {
        s3l_error_prefix(err, "committing epoch %llu", (unsigned long long)c->pending_epoch);
        return rc; /* not prefix's result: ENOMEM leaves err empty (code 0) */
    }
    /* Record the epoch as committed, keeping the staged keys to delete afterwards. */
    size_t n = c->n_files, n_schemas = c->n_schemas;
    struct s3l__ckpt_file *files = c->files;
    struct s3l__ckpt_schema *schemas = c->schemas;
    uint64_t epoch = c->pending_epoch, gen = c->pending_generation, before = c->committed_epoch;
    c->files = NULL;
    c->n_files = 0;
    c->schemas = NULL;
    c->n_schemas = 0;
    c->has_pending = false;
    c->pending_epoch = 0;
    c->pending_generation = 0;
    c->committed_epoch = epoch;
    /* Every marker is there: the staged copies are read by no step again (a recovery skips a
     * stream whose marker exists), so they are deleted while the epoch is recorded committed,
     * one round trip less; the deletion ends before after-commit. Without a thread, after. */
    struct removal rm = {.s = s, .files = files, .n = n, .tally = s3l__tally_current()};
    bool removing = n > 0 && pthread_create(&rm.th, NULL, removal_main, &rm) == 0;
    rc = s3l__ckpt_write(s, c, mine, err);
    if (removing)
        pthread_join(rm.th, NULL);
    else if (rc == 0)
        remove_staged(&rm);
    if (rm.failed && left) {
        if (left->n == 0)
            left->why = rm.err;
        left->n += rm.failed;
    }
    if (rc) {
        s3l_error_prefix(err, "committing epoch %llu: recording it committed",
                         (unsigned long long)epoch);
        /* Still pending as far as the store knows: restore it for the caller. */
        c->files = files;
        c->n_files = n;
        c->schemas = schemas;
        c->n_schemas = n_schemas;
        c->has_pending = true;
        c->pending_epoch = epoch;
        c->pending_generation = gen;
        c->committed_epoch = before;
        return rc;
    }
    s3l_store_event(s, S3L__EV_AFTER_COMMIT);
    for (size_t i = 0; i < n; i++) {
        s3l_free(files[i].table);
        s3l_free(files[i].staged);
        s3l_free(files[i].final);
    }
    s3l_free(files);
    s3l__ckpt_schemas_free(schemas, n_schemas);
    return 0;
}
