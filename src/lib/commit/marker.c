/*
 * Markers: URL/_openetl/markers/T/<pipeline>-<epoch %020>.json, one per stream and committed
 * epoch, written put-if-absent after the epoch's files reached their final names. A marker holds
 * pipeline, table, epoch, generation, each file's key, size, row count and SHA-256, and the total
 * row count; dead-letter files are listed apart. A reader that trusts only files listed by a
 * marker (s3l_dest_list_files committed_only) never sees a half-committed epoch.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commit/commit.h"
#include "util/util.h"

int s3l__marker_encode(const struct s3l__ckpt *c, const char *table, char **out, size_t *len)
{
    json_t *files = json_array(), *dead = json_array();
    uint64_t rows = 0;
    int lost = 0; /* an entry not appended (out of memory): the marker would lack a file */
    for (size_t i = 0; files && dead && i < c->n_files; i++) {
        const struct s3l__ckpt_file *f = &c->files[i];
        if (strcmp(f->table, table) != 0)
            continue;
        json_t *o = json_pack("{s:s, s:I, s:I, s:s}", "key", f->final, "size", (json_int_t)f->size,
                              "rows", (json_int_t)f->rows, "sha256", f->sha256);
        lost |= json_array_append_new(f->deadletter ? dead : files, o);
        if (!f->deadletter)
            rows += f->rows;
    }
    json_t *doc = json_pack("{s:i, s:s, s:s, s:I, s:I, s:I, s:o, s:o}", "version", 1, "pipeline",
                            c->pipeline, "table", table, "epoch", (json_int_t)c->pending_epoch,
                            "generation", (json_int_t)c->pending_generation, "rows",
                            (json_int_t)rows, "files", files, "deadletter", dead);
    char *text = doc && !lost ? s3l__json_dumps(doc, JSON_INDENT(1) | JSON_PRESERVE_ORDER) : NULL;
    json_decref(doc);
    *out = text ? s3l_strdup(text) : NULL;
    s3l_free(text);
    if (!*out)
        return S3L_ENOMEM;
    *len = strlen(*out);
    return 0;
}

int s3l__marker_check(struct s3l_store *s, const char *key, const char *doc, size_t len,
                      struct s3l_error *err)
{
    /* It exists: a recovery repeating this step finds its own bytes. */
    uint8_t *old = NULL;
    size_t old_len = 0;
    int rc = s3l_store_get(s, key, 0, UINT64_MAX, S3L__DOC_MAX, &old, &old_len, NULL, err);
    if (rc == 0 && (old_len != len || memcmp(old, doc, len) != 0))
        rc = s3l_error_set(err, S3L_ECONFLICT,
                           "marker %s exists with other content (another writer committed this "
                           "epoch differently)",
                           key);
    s3l_free(old);
    return rc;
}

static int bad(struct s3l_error *err, const char *key, const char *what)
{
    return s3l_error_set(err, S3L_ECORRUPT, "marker %s: %s", key, what);
}

static int u64(json_t *o, const char *name, uint64_t *v)
{
    json_t *x = json_object_get(o, name);
    if (!json_is_integer(x) || json_integer_value(x) < 0)
        return -1;
    *v = (uint64_t)json_integer_value(x);
    return 0;
}

static int files_of(json_t *arr, struct s3l_dest_file **out, size_t *n)
{
    *n = json_array_size(arr);
    *out = s3l_calloc(*n ? *n : 1, sizeof(**out));
    if (!*out)
        return S3L_ENOMEM;
    for (size_t i = 0; i < *n; i++) {
        json_t *f = json_array_get(arr, i);
        struct s3l_dest_file *df = &(*out)[i];
        df->key = json_string_value(json_object_get(f, "key"));
        df->sha256 = json_string_value(json_object_get(f, "sha256"));
        if (!df->key || !df->sha256 || u64(f, "size", &df->size) || u64(f, "rows", &df->rows))
            return -1;
    }
    return 0;
}

int s3l__marker_decode(const char *text, size_t len, const char *key,
                       int (*cb)(void *ctx, const struct s3l_dest_marker *m), void *ctx,
                       struct s3l_error *err)
{
    json_error_t je;
    json_t *doc = json_loadb(text, len, 0, &je);
    if (!doc)
        return s3l_error_set(err, S3L_ECORRUPT, "marker %s: not JSON: %s (line %d)", key, je.text,
                             je.line);
    struct s3l_dest_marker m = {0};
    struct s3l_dest_file *files = NULL, *dead = NULL;
    m.key = key;
    m.pipeline = json_string_value(json_object_get(doc, "pipeline"));
    m.table = json_string_value(json_object_get(doc, "table"));
    int rc = 0;
    if (!m.pipeline || !m.table || u64(doc, "epoch", &m.epoch) ||
        u64(doc, "generation", &m.generation) || u64(doc, "rows", &m.rows) ||
        !json_is_array(json_object_get(doc, "files")) ||
        !json_is_array(json_object_get(doc, "deadletter")))
        rc = bad(err, key, "lacks pipeline, table, epoch, generation, rows or files");
    if (rc == 0) {
        rc = files_of(json_object_get(doc, "files"), &files, &m.n_files);
        if (rc == 0)
            rc = files_of(json_object_get(doc, "deadletter"), &dead, &m.n_deadletter);
        if (rc == -1)
            rc = bad(err, key, "a file lacks key, size, rows or sha256");
    }
    m.files = files;
    m.deadletter = dead;
    if (rc == 0)
        rc = cb(ctx, &m);
    s3l_free(files);
    s3l_free(dead);
    json_decref(doc);
    return s3l__oom(err, rc, "reading a marker");
}
