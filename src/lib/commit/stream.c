/*
 * Streams: one per table of the destination, with its lanes, its schema record and its dead
 * letters. Adding a stream checks that the table does not nest in or hold another one, then
 * merges its schema with URL/_openetl/schemas/T.json through the file format's schema_merge
 * (drift is refused at once) and keeps the merged record as pending, unwritten: the first epoch
 * with rows carries it through its commit point (dest.c) and writes it (protocol.c), so a run
 * that fails before committing leaves the record as it was (issue 10 item 14). Rejected records go,
 * one JSON line each with the reason, into one dead-letter file per stream and epoch, staged and
 * committed with the epoch's data (under the stream's dl_mu: any thread may reject).
 */
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commit/commit.h"
#include "s3l/store.h"
#include "util/util.h"

/* --- dead letters --- */

static char *reject_line(const void *record, size_t len, const char *reason)
{
    json_t *rec = json_stringn(record, len);
    const char *field = "record";
    if (!rec && s3l__utf8_valid(record, len, NULL))
        return NULL; /* valid text: json_stringn ran out of memory */
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
    char *text = o ? s3l__json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    json_decref(o);
    char *line = text ? s3l__key_fmt("%s\n", text) : NULL;
    s3l_free(text);
    return line;
}

int s3l_dest_reject(struct s3l_dest_stream *st, const void *record, size_t len, const char *reason,
                    struct s3l_error *err)
{
    struct s3l_dest *d = st->d;
    char *line = reject_line(record, len, reason);
    if (!line)
        return s3l_error_set(err, S3L_ENOMEM,
                             "out of memory rejecting a record of table %s", st->table);
    pthread_mutex_lock(&st->dl_mu);
    int rc = st->dl_sticky;
    if (rc == 0 && !st->dl.up)
        rc = s3l__dest_claim(d, err);
    if (rc == 0 && !st->dl.up) {
        char name[192];
        rc = s3l__name_deadletter(name, sizeof(name), d->pipeline, d->stage_epoch,
                                  d->generation);
        if (rc)
            rc = s3l_error_set(err, rc, "dead-letter file name of pipeline %s: too long",
                               d->pipeline);
        if (rc == 0)
            rc = s3l__staging_begin(d, &st->dl, st->table, name, true, err);
    }
    if (rc == 0)
        rc = s3l__staging_write(&st->dl, line, strlen(line), err);
    if (rc == 0)
        st->dl_rows++;
    else if (!st->dl_sticky)
        st->dl_sticky = rc;
    pthread_mutex_unlock(&st->dl_mu);
    s3l_free(line);
    return rc;
}

/* --- streams --- */

static void memo_drop(struct s3l_dest *d)
{
    s3l_free(d->memo.table);
    s3l_free(d->memo.text);
    s3l_free(d->memo.etag);
    memset(&d->memo, 0, sizeof(d->memo));
}

void s3l__dest_memo_free(struct s3l_dest *d)
{
    memo_drop(d);
}

/* Reads T's record (*rec: s3l_free, or NULL when there is none, then rc 0 and *exists false),
 * taking the one s3l_dest_read_record kept for T instead of reading again. */
static int read_record(struct s3l_dest *d, const char *table, uint8_t **rec, size_t *len,
                       struct s3l_object_info *info, bool *exists, struct s3l_error *err)
{
    *rec = NULL;
    *len = 0;
    *exists = false;
    if (d->memo.table && strcmp(d->memo.table, table) == 0) {
        *exists = d->memo.text != NULL;
        *rec = (uint8_t *)d->memo.text;
        *len = d->memo.len;
        snprintf(info->etag, sizeof(info->etag), "%s", d->memo.etag ? d->memo.etag : "");
        d->memo.text = NULL;
        memo_drop(d);
        return 0;
    }
    char *key = s3l__key_schema(table);
    if (!key)
        return s3l_error_set(err, S3L_ENOMEM,
                             "out of memory naming the schema record of table %s", table);
    struct s3l_error e2 = {0};
    int rc = s3l_store_get(d->store, key, 0, UINT64_MAX, S3L__DOC_MAX, rec, len, info, &e2);
    s3l_free(key);
    *exists = rc == 0;
    if (rc == S3L_ENOT_FOUND)
        return 0;
    if (rc && err && err->code == 0)
        *err = e2;
    return rc;
}

int s3l_dest_read_record(struct s3l_dest *d, const char *table, char **json, size_t *len,
                         struct s3l_error *err)
{
    /* The epoch finishing may be writing this record: wait for it. Its failure is left for the
     * next commit or sync, where a commit's failure is met. */
    s3l__dest_join(d);
    memo_drop(d);
    s3l__dest_read_ahead_stream(d->store, table); /* with the stream's two other reads */
    uint8_t *rec = NULL;
    struct s3l_object_info info;
    bool exists = false;
    int rc = read_record(d, table, &rec, len, &info, &exists, err);
    if (rc)
        return rc;
    d->memo.table = s3l_strdup(table);
    char *copy = exists ? s3l_strndup((const char *)rec, *len) : NULL;
    d->memo.etag = exists ? s3l_strdup(info.etag) : NULL;
    if (!d->memo.table || (exists && (!copy || !d->memo.etag))) {
        s3l_free(copy);
        s3l_free(rec);
        memo_drop(d);
        return s3l_error_set(err, S3L_ENOMEM, "out of memory reading the schema record of %s",
                             table);
    }
    d->memo.text = (char *)rec;
    d->memo.len = *len;
    if (!exists)
        return s3l_error_set(err, S3L_ENOT_FOUND, "table %s has no schema record", table);
    *json = copy;
    return 0;
}

/*
 * Reads URL/_openetl/schemas/T.json and merges schema into it (drift is reported here, at once),
 * without writing: *merged (s3l_free) is the record the stream's first epoch with rows will carry
 * into its commit point, NULL when the record already covers schema; *etag (s3l_free) the ETag of
 * the record read, NULL when there was none (the write at finish is conditional on it).
 */
static int merge_schema(struct s3l_dest *d, const char *table, const struct s3l_schema *schema,
                        char **merged, char **etag, struct s3l_error *err)
{
    char *key = s3l__key_schema(table);
    if (!key)
        return s3l_error_set(err, S3L_ENOMEM,
                             "out of memory naming the schema record of table %s", table);
    uint8_t *rec = NULL;
    size_t len = 0;
    struct s3l_object_info info;
    bool exists = false;
    int rc = read_record(d, table, &rec, &len, &info, &exists, err);
    if (rc == 0) {
        char *url = s3l__key_url(d->store, key);
        rc = url ? d->format.schema_merge(d->format.ctx, table, url,
                                          exists ? (const char *)rec : NULL, len, schema,
                                          d->allow_type_changes, merged, err)
                 : s3l_error_set(err, S3L_ENOMEM, "out of memory merging the schema of %s", table);
        s3l_free(url);
        if (rc == 0 && *merged && exists && !(*etag = s3l_strdup(info.etag))) {
            s3l_free(*merged);
            *merged = NULL;
            rc = s3l_error_set(err, S3L_ENOMEM, "out of memory merging the schema of %s", table);
        }
    }
    s3l_free(rec);
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
        char *ns = s3l_strndup(table, (size_t)(slash - table));
        char *outer = ns ? s3l__key_schema(ns) : NULL;
        s3l_free(ns);
        struct s3l_object_info info;
        struct s3l_error e2 = {0};
        rc = outer ? s3l_store_stat(d->store, outer, &info, &e2)
                   : s3l_error_set(&e2, S3L_ENOMEM, "out of memory checking table %s", table);
        s3l_free(outer);
        if (rc == 0)
            return s3l_error_set(err, S3L_EINVALID_CONFIG,
                                 "table %s would lie inside the directory of table %.*s: readers "
                                 "of that table's directory would mix both tables' rows; choose "
                                 "another namespace",
                                 table, (int)(slash - table), table);
        if (rc != S3L_ENOT_FOUND) {
            if (err && err->code == 0)
                *err = e2;
            return rc;
        }
    }
    char *inner = s3l__key_schemas_under(table);
    rc = inner ? s3l_store_list(d->store, inner, found_one, NULL, err)
               : s3l_error_set(err, S3L_ENOMEM, "out of memory checking table %s", table);
    s3l_free(inner);
    if (rc == 1)
        return s3l_error_set(err, S3L_EINVALID_CONFIG,
                             "table %s: %s is already a namespace of other tables, whose files lie "
                             "in its directory; readers of it would mix their rows; choose another "
                             "table name",
                             table, table);
    return rc;
}

void s3l__stream_free(struct s3l_dest_stream *st)
{
    if (!st)
        return;
    for (unsigned i = 0; st->lanes && i < st->d->lanes; i++)
        s3l__lane_drop(&st->lanes[i]);
    s3l__staging_cleanup(&st->dl);
    pthread_mutex_destroy(&st->dl_mu);
    s3l_free(st->lanes);
    s3l_free(st->pending_record);
    s3l_free(st->record_etag);
    s3l_free(st->table);
    s3l_free(st);
}

int s3l_dest_stream(struct s3l_dest *d, const char *ns, const char *table,
                    const struct s3l_schema *schema, struct s3l_dest_stream **out,
                    struct s3l_error *err)
{
    char *t = NULL;
    /* The epoch finishing may be writing this table's record: wait for it first (its failure is
     * left for the next commit or sync, where a commit's failure is met). */
    s3l__dest_join(d);
    int rc = s3l_dest_table_path(ns, table, &t, err);
    if (rc)
        return rc;
    for (size_t i = 0; i < d->n_streams; i++)
        if (strcmp(d->streams[i]->table, t) == 0) {
            rc = s3l_error_set(err, S3L_EINVALID_CONFIG, "table %s added twice", t);
            s3l_free(t);
            return rc;
        }
    char *merged = NULL, *etag = NULL;
    /* Its three reads at once, unless s3l_dest_read_record sent them already (its memo). */
    if (!d->memo.table || strcmp(d->memo.table, t) != 0)
        s3l__dest_read_ahead_stream(d->store, t);
    rc = check_nesting(d, t, err);
    if (rc == 0)
        rc = merge_schema(d, t, schema, &merged, &etag, err);
    struct s3l_dest_stream *st = rc ? NULL : s3l_calloc(1, sizeof(*st));
    struct s3l_dest_stream **arr = NULL;
    if (rc == 0 && st) {
        st->d = d;
        st->table = t;
        t = NULL;
        st->schema = schema;
        st->pending_record = merged;
        st->record_etag = etag;
        merged = etag = NULL;
        pthread_mutex_init(&st->dl_mu, NULL);
        st->lanes = s3l_calloc(d->lanes, sizeof(*st->lanes));
        arr = s3l_realloc(d->streams, (d->n_streams + 1) * sizeof(*arr));
    }
    if (rc == 0 && (!st || !st->lanes || !arr)) {
        if (arr)
            d->streams = arr;
        s3l__stream_free(st);
        s3l_free(t);
        s3l_free(merged);
        s3l_free(etag);
        return s3l_error_set(err, S3L_ENOMEM,
                             "out of memory opening the stream of table %s", table);
    }
    s3l_free(merged);
    s3l_free(etag);
    s3l_free(t);
    if (rc)
        return rc;
    for (unsigned i = 0; i < d->lanes; i++) {
        st->lanes[i].st = st;
        st->lanes[i].index = i;
    }
    d->streams = arr;
    d->streams[d->n_streams++] = st;
    s3l_store_counts(d->store, &d->mark); /* its reads belong to the run's start */
    s3l__tally_read(&d->tally, &d->tally_mark);
    *out = st;
    return 0;
}

/* --- the records an epoch carries, read again before its commit point --- */

/*
 * Carried record cs against the record found now (cur, len bytes; NULL when there is none): 0
 * when it is the one cs was merged with at open, or another that takes every column of the
 * stream's schema (cs->schema: carry_records always copies it) with its type; else
 * schema_merge's error (S3L_ESCHEMA_DRIFT, S3L_ECORRUPT, S3L_ENOMEM).
 */
static int recheck_one(struct s3l_dest *d, const struct s3l__ckpt_schema *cs, const char *key,
                       const uint8_t *cur, size_t len, const char *etag, struct s3l_error *err)
{
    if (cur ? cs->etag && strcmp(etag, cs->etag) == 0 : !cs->etag)
        return 0; /* unchanged since the open */
    if (!cur)
        return 0; /* removed meanwhile: the finish writes ours (If-None-Match after a 412) */
    char *url = s3l__key_url(d->store, key), *merged = NULL;
    int rc = url ? d->format.schema_merge(d->format.ctx, cs->table, url, (const char *)cur, len,
                                          cs->schema, d->allow_type_changes, &merged, err)
                 : S3L_ENOMEM;
    s3l_free(merged);
    s3l_free(url);
    return s3l__oom(err, rc, "checking a schema record");
}

int s3l__dest_records_recheck(struct s3l_dest *d, struct s3l_error *err)
{
    size_t n = d->ck.n_schemas;
    if (n == 0)
        return 0;
    struct s3l_read_item *items = s3l_calloc(n, sizeof(*items));
    char **keys = s3l_calloc(n, sizeof(*keys));
    int rc = items && keys ? 0 : S3L_ENOMEM;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        keys[i] = s3l__key_schema(d->ck.schemas[i].table);
        items[i] = (struct s3l_read_item){S3L_READ_GET_FRESH, keys[i], S3L__DOC_MAX};
        rc = keys[i] ? 0 : S3L_ENOMEM;
    }
    if (rc == 0)
        s3l_store_read_ahead(d->store, items, n); /* S3: every record in one round trip */
    for (size_t i = 0; rc == 0 && i < n; i++) {
        uint8_t *cur = NULL;
        size_t len = 0;
        struct s3l_object_info info;
        memset(&info, 0, sizeof(info));
        struct s3l_error e2 = {0};
        rc = s3l_store_get(d->store, keys[i], 0, UINT64_MAX, S3L__DOC_MAX, &cur, &len, &info, &e2);
        const char *table = d->ck.schemas[i].table;
        if (rc == 0 || rc == S3L_ENOT_FOUND) {
            rc = recheck_one(d, &d->ck.schemas[i], keys[i], cur, len, info.etag, err);
            if (rc && err)
                s3l_error_prefix(err, "epoch %llu is not committed: another writer changed the "
                                      "schema record of table %s meanwhile (run again: a new "
                                      "run merges its rows with the record as it is now)",
                                 (unsigned long long)d->ck.pending_epoch, table);
        } else if (err && err->code == 0) {
            *err = e2;
            s3l_error_prefix(err, "epoch %llu is not committed: reading the schema record of "
                                  "table %s again",
                             (unsigned long long)d->ck.pending_epoch, table);
        }
        s3l_free(cur);
    }
    for (size_t i = 0; keys && i < n; i++)
        s3l_free(keys[i]);
    s3l_free(keys);
    s3l_free(items);
    return s3l__oom(err, rc, "reading the schema records again");
}
