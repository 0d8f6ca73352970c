/*
 * The checkpoint document and its conditional updates. The checkpoint is the commit point of the
 * protocol (docs/internals/commit.md): it holds the pipeline id, the current generation, the last
 * committed epoch, the pending epoch (its generation and every staged file: staged key, final key,
 * size, rows, SHA-256), the runner's opaque state (input positions) and, when known, the commit
 * interval of the writer that claimed the generation (gc's liveness rule). Every write is
 * conditional on the version read or written last (If-Match; put-if-absent when new), so a writer
 * whose generation was superseded learns it (S3L_EFENCED) instead of overwriting a newer one.
 */
#include <jansson.h>
#include <openssl/rand.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commit/commit.h"
#include "util/util.h"

void s3l__ckpt_schemas_free(struct s3l__ckpt_schema *schemas, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        s3l_free(schemas[i].table);
        s3l_free(schemas[i].record);
        s3l_free(schemas[i].etag);
        s3l_schema_free(schemas[i].schema);
    }
    s3l_free(schemas);
}

void s3l__ckpt_clear_pending(struct s3l__ckpt *c)
{
    for (size_t i = 0; i < c->n_files; i++) {
        s3l_free(c->files[i].table);
        s3l_free(c->files[i].staged);
        s3l_free(c->files[i].final);
    }
    s3l_free(c->files);
    c->files = NULL;
    c->n_files = 0;
    s3l__ckpt_schemas_free(c->schemas, c->n_schemas);
    c->schemas = NULL;
    c->n_schemas = 0;
    c->has_pending = false;
    c->pending_epoch = 0;
    c->pending_generation = 0;
}

void s3l__ckpt_cleanup(struct s3l__ckpt *c)
{
    s3l__ckpt_clear_pending(c);
    s3l_free(c->pipeline);
    s3l_free(c->state);
    memset(c, 0, sizeof(*c));
}

static json_t *file_json(const struct s3l__ckpt_file *f)
{
    return json_pack("{s:s, s:s, s:s, s:s, s:I, s:I, s:s}", "table", f->table, "kind",
                     f->deadletter ? "deadletter" : "data", "staged", f->staged, "final", f->final,
                     "size", (json_int_t)f->size, "rows", (json_int_t)f->rows, "sha256", f->sha256);
}

int s3l__ckpt_encode(const struct s3l__ckpt *c, char **out, size_t *len, struct s3l_error *err)
{
    json_t *state = NULL;
    if (c->state) {
        json_error_t je;
        bool nomem;
        state = s3l__json_loadb(c->state, strlen(c->state), JSON_DECODE_ANY, &je, &nomem);
        if (nomem)
            return s3l_error_set(err, S3L_ENOMEM, "out of memory encoding the checkpoint");
        if (!state)
            return s3l_error_set(err, S3L_EINVALID_CONFIG, "runner state is not JSON: %s (at %d)",
                                 je.text, je.position);
    }
    json_t *pending = json_null();
    int lost = 0; /* an append or set that failed (out of memory): the text would lack it */
    if (c->has_pending) {
        json_t *files = json_array();
        for (size_t i = 0; files && i < c->n_files; i++)
            lost |= json_array_append_new(files, file_json(&c->files[i]));
        pending = json_pack("{s:I, s:I, s:o}", "epoch", (json_int_t)c->pending_epoch, "generation",
                            (json_int_t)c->pending_generation, "files", files);
        /* "schemas" only when the epoch carries records: an epoch without keeps the bytes of
         * checkpoints written before the field existed. */
        json_t *schemas = c->n_schemas ? json_array() : NULL;
        int bad_rec = 0;
        for (size_t i = 0; schemas && i < c->n_schemas; i++) {
            /* The record's exact bytes, as a string: recovery writes the same bytes again. */
            json_t *rec = json_string(c->schemas[i].record);
            /* NULL is text that is not UTF-8, or no memory for the copy */
            bad_rec |= !rec && !s3l__utf8_valid((const uint8_t *)c->schemas[i].record,
                                                strlen(c->schemas[i].record), NULL);
            lost |= !rec;
            json_t *e = json_pack("{s:s, s:o*}", "table", c->schemas[i].table, "record", rec);
            if (e && c->schemas[i].etag)
                lost |= json_object_set_new(e, "etag", json_string(c->schemas[i].etag));
            lost |= json_array_append_new(schemas, e);
        }
        if (bad_rec) {
            json_decref(schemas);
            json_decref(pending);
            json_decref(state);
            return s3l_error_set(err, S3L_EINVALID_CONFIG, "a schema record is not UTF-8 text");
        }
        if (schemas && pending)
            lost |= json_object_set_new(pending, "schemas", schemas);
        else {
            lost |= c->n_schemas != 0;
            json_decref(schemas);
        }
    }
    json_t *doc = json_pack("{s:i, s:s, s:I, s:I, s:o, s:o}", "version", 1, "pipeline", c->pipeline,
                            "generation", (json_int_t)c->generation, "committed_epoch",
                            (json_int_t)c->committed_epoch, "pending", pending, "state",
                            state ? state : json_null());
    /* Last and only when known, so a checkpoint written before the field re-encodes to its own
     * bytes (issue 10 item 12). */
    if (doc && c->has_interval)
        lost |= json_object_set_new(doc, "commit_interval_ms",
                                    json_integer((json_int_t)c->commit_interval_ms)) != 0;
    if (doc && c->writer[0])
        lost |= json_object_set_new(doc, "writer", json_string(c->writer)) != 0;
    char *text = doc && !lost ? s3l__json_dumps(doc, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    json_decref(doc);
    if (!text)
        return s3l_error_set(err, S3L_ENOMEM, "out of memory encoding the checkpoint");
    *out = text;
    *len = strlen(*out);
    return 0;
}

static int bad(struct s3l_error *err, const char *key, const char *what)
{
    return s3l_error_set(err, S3L_ECORRUPT, "checkpoint %s: %s", key, what);
}

static int get_u64(json_t *o, const char *name, uint64_t *v)
{
    json_t *x = json_object_get(o, name);
    if (!json_is_integer(x) || json_integer_value(x) < 0)
        return -1;
    *v = (uint64_t)json_integer_value(x);
    return 0;
}

static char *get_str(json_t *o, const char *name)
{
    json_t *x = json_object_get(o, name);
    return json_is_string(x) ? s3l_strdup(json_string_value(x)) : NULL;
}

/* The pending epoch's optional "schemas": [{"table": T, "record": the record's text, "etag"?}...]. */
static int decode_schemas(json_t *a, const char *key, struct s3l__ckpt *c, struct s3l_error *err)
{
    if (!a)
        return 0; /* checkpoints written before the field, or an epoch carrying no record */
    if (!json_is_array(a))
        return bad(err, key, "pending schemas is not an array");
    size_t n = json_array_size(a);
    c->schemas = s3l_calloc(n ? n : 1, sizeof(*c->schemas));
    if (!c->schemas)
        return s3l_error_set(err, S3L_ENOMEM, "out of memory reading checkpoint %s", key);
    for (size_t i = 0; i < n; i++) {
        json_t *e = json_array_get(a, i), *rec = json_object_get(e, "record");
        struct s3l__ckpt_schema *cs = &c->schemas[i];
        c->n_schemas = i + 1;
        cs->table = get_str(e, "table");
        if (!cs->table || !json_is_string(rec))
            return bad(err, key, "a pending schema record lacks table or record");
        json_t *etag = json_object_get(e, "etag");
        if (etag && (!json_is_string(etag) || strlen(json_string_value(etag)) >= 132))
            return bad(err, key, "a pending schema record has a bad etag");
        if (etag && !(cs->etag = s3l_strdup(json_string_value(etag))))
            return s3l_error_set(err, S3L_ENOMEM, "out of memory reading checkpoint %s", key);
        /* The record's text must be a JSON record (an object or a list) to be written again. */
        bool nomem;
        json_t *parsed = s3l__json_loadb(json_string_value(rec), json_string_length(rec), 0,
                                         NULL, &nomem);
        bool ok = json_is_object(parsed) || json_is_array(parsed);
        json_decref(parsed);
        if (nomem)
            return s3l_error_set(err, S3L_ENOMEM, "out of memory reading checkpoint %s", key);
        if (!ok)
            return bad(err, key, "a pending schema record is not a JSON record");
        if (!(cs->record = s3l_strdup(json_string_value(rec))))
            return s3l_error_set(err, S3L_ENOMEM, "out of memory reading checkpoint %s", key);
    }
    return 0;
}

static int decode_pending(json_t *p, const char *key, struct s3l__ckpt *c, struct s3l_error *err)
{
    json_t *files = json_object_get(p, "files");
    if (get_u64(p, "epoch", &c->pending_epoch) ||
        get_u64(p, "generation", &c->pending_generation) || !json_is_array(files))
        return bad(err, key, "pending epoch lacks epoch, generation or files");
    size_t n = json_array_size(files);
    c->files = s3l_calloc(n ? n : 1, sizeof(*c->files));
    if (!c->files)
        return s3l_error_set(err, S3L_ENOMEM, "out of memory reading checkpoint %s", key);
    c->has_pending = true;
    for (size_t i = 0; i < n; i++) {
        json_t *f = json_array_get(files, i);
        struct s3l__ckpt_file *cf = &c->files[i];
        c->n_files = i + 1;
        cf->table = get_str(f, "table");
        cf->staged = get_str(f, "staged");
        cf->final = get_str(f, "final");
        json_t *sha = json_object_get(f, "sha256");
        json_t *kind = json_object_get(f, "kind");
        if (!cf->table || !cf->staged || !cf->final || get_u64(f, "size", &cf->size) ||
            get_u64(f, "rows", &cf->rows) || !json_is_string(sha) ||
            strlen(json_string_value(sha)) != 64 || !json_is_string(kind) ||
            !s3l_store_key_valid(cf->staged) || !s3l_store_key_valid(cf->final))
            return bad(err, key, "a pending file lacks table, keys, size, rows, kind or sha256");
        memcpy(cf->sha256, json_string_value(sha), 65);
        cf->deadletter = strcmp(json_string_value(kind), "deadletter") == 0;
    }
    return decode_schemas(json_object_get(p, "schemas"), key, c, err);
}

int s3l__ckpt_decode(const char *text, size_t len, const char *key, struct s3l__ckpt *c,
                     struct s3l_error *err)
{
    json_error_t je;
    bool nomem;
    json_t *doc = s3l__json_loadb(text, len, 0, &je, &nomem);
    if (nomem)
        return s3l_error_set(err, S3L_ENOMEM, "out of memory reading checkpoint %s", key);
    if (!doc)
        return s3l_error_set(err, S3L_ECORRUPT, "checkpoint %s: not JSON: %s (line %d)", key,
                             je.text, je.line);
    int rc = 0;
    json_t *version = json_object_get(doc, "version");
    json_t *pending = json_object_get(doc, "pending");
    json_t *state = json_object_get(doc, "state");
    if (!json_is_integer(version) || json_integer_value(version) != 1)
        rc = bad(err, key, "unknown version (expected 1)");
    else if (!(c->pipeline = get_str(doc, "pipeline")))
        rc = bad(err, key, "no pipeline");
    else if (get_u64(doc, "generation", &c->generation) ||
             get_u64(doc, "committed_epoch", &c->committed_epoch))
        rc = bad(err, key, "no generation or committed_epoch");
    else if (json_object_get(doc, "commit_interval_ms") &&
             get_u64(doc, "commit_interval_ms", &c->commit_interval_ms))
        rc = bad(err, key, "commit_interval_ms is not a non-negative integer");
    else if (pending && !json_is_null(pending))
        rc = decode_pending(pending, key, c, err);
    c->has_interval = rc == 0 && json_object_get(doc, "commit_interval_ms") != NULL;
    json_t *writer = json_object_get(doc, "writer");
    if (rc == 0 && writer) {
        const char *w = json_string_value(writer);
        if (!w || strlen(w) != 32 || strspn(w, "0123456789abcdef") != 32)
            rc = bad(err, key, "writer is not 32 hex digits");
        else
            memcpy(c->writer, w, 33);
    }
    if (rc == 0 && state && !json_is_null(state)) {
        char *t = s3l__json_dumps(state, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_ENCODE_ANY);
        c->state = t ? s3l_strdup(t) : NULL;
        s3l_free(t);
        if (!c->state)
            rc = S3L_ENOMEM;
    }
    json_decref(doc);
    return s3l__oom(err, rc, "reading a checkpoint");
}

int s3l__ckpt_read(struct s3l_store *s, const char *pipeline, struct s3l__ckpt *c,
                   struct s3l_error *err)
{
    char *key = s3l__key_checkpoint(pipeline);
    if (!key)
        return s3l_error_set(err, S3L_ENOMEM,
                             "out of memory naming the checkpoint of pipeline %s", pipeline);
    uint8_t *data = NULL;
    size_t len = 0;
    struct s3l_object_info info;
    struct s3l_error e2 = {0};
    memset(c, 0, sizeof(*c));
    int rc = s3l_store_get(s, key, 0, UINT64_MAX, S3L__DOC_MAX, &data, &len, &info, &e2);
    if (rc == S3L_ENOT_FOUND) {
        c->pipeline = s3l_strdup(pipeline);
        rc = c->pipeline ? 0
                         : s3l_error_set(err, S3L_ENOMEM, "out of memory reading checkpoint %s", key);
    } else if (rc) {
        if (err && err->code == 0)
            *err = e2;
    } else {
        rc = s3l__ckpt_decode((const char *)data, len, key, c, err);
        if (rc == 0 && strcmp(c->pipeline, pipeline) != 0)
            rc = bad(err, key, "it belongs to another pipeline");
        if (rc == 0) {
            c->exists = true;
            memcpy(c->etag, info.etag, sizeof(c->etag));
            c->mtime_ns = info.mtime_ns;
        }
    }
    if (rc)
        s3l__ckpt_cleanup(c);
    s3l_free(data);
    s3l_free(key);
    return rc;
}

int s3l__ckpt_peek(struct s3l_store *s, const char *pipeline, char **state, bool *pending,
                   uint64_t *committed_epoch, struct s3l_error *err)
{
    char *key = s3l__key_checkpoint(pipeline);
    if (!key)
        return s3l_error_set(err, S3L_ENOMEM, "out of memory reading the checkpoint of %s",
                             pipeline);
    uint8_t *data = NULL;
    size_t len = 0;
    struct s3l_error e2 = {0};
    int rc = s3l_store_get(s, key, 0, UINT64_MAX, S3L__DOC_MAX, &data, &len, NULL, &e2);
    if (rc) {
        if (rc != S3L_ENOT_FOUND && err && err->code == 0)
            *err = e2;
        s3l_free(key);
        return rc == S3L_ENOT_FOUND ? 0 : rc;
    }
    json_t *doc = json_loadb((const char *)data, len, 0, NULL);
    s3l_free(data);
    if (!json_is_object(doc))
        rc = bad(err, key, "not a JSON object");
    json_t *p = json_object_get(doc, "pending"), *st = json_object_get(doc, "state");
    uint64_t ce = 0;
    if (rc == 0 && pending)
        *pending = p && !json_is_null(p);
    if (rc == 0 && committed_epoch && get_u64(doc, "committed_epoch", &ce) == 0)
        *committed_epoch = ce;
    if (rc == 0 && state && st && !json_is_null(st)) {
        char *text = s3l__json_dumps(st, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_ENCODE_ANY);
        *state = text ? s3l_strdup(text) : NULL;
        s3l_free(text); /* jansson's allocation */
        if (!*state)
            rc = s3l_error_set(err, S3L_ENOMEM, "out of memory reading checkpoint %s", key);
    }
    json_decref(doc);
    s3l_free(key);
    return rc;
}

/*
 * After a conditional put of the checkpoint failed its condition (412): one read of what is
 * there. These very bytes: an attempt of this same put was done by the store and its answer
 * lost (a reset after the store acted: the client's retry then finds its own write, so the
 * condition fails), which is success (c takes the object's ETag and time). They are no other
 * writer's: they hold this writer's token (c->writer), also in its claim, which a writer that
 * opened the same checkpoint makes with the same generation but its own token. Else S3L_EFENCED
 * when it holds a higher generation than mine, S3L_ECONFLICT otherwise (a read or decode that
 * fails included).
 */
static int refused(struct s3l_store *s, const char *key, const char *text, size_t len,
                   struct s3l__ckpt *c, uint64_t mine, struct s3l_error *err)
{
    uint8_t *data = NULL;
    size_t n = 0;
    struct s3l_object_info info;
    bool read = s3l_store_get(s, key, 0, UINT64_MAX, S3L__DOC_MAX, &data, &n, &info, NULL) == 0;
    int rc = 0;
    if (read && n == len && memcmp(data, text, len) == 0) {
        c->exists = true;
        memcpy(c->etag, info.etag, sizeof(c->etag));
        c->mtime_ns = info.mtime_ns;
    } else {
        struct s3l__ckpt now = {0};
        struct s3l_error e3 = {0};
        if (read && s3l__ckpt_decode((const char *)data, n, key, &now, &e3) == 0 &&
            now.generation > mine)
            rc = s3l_error_set(err, S3L_EFENCED,
                               "pipeline %s: generation %llu took over from this writer "
                               "(generation %llu); it stops without committing",
                               c->pipeline, (unsigned long long)now.generation,
                               (unsigned long long)mine);
        else
            rc = s3l_error_set(err, S3L_ECONFLICT,
                               "checkpoint %s changed under this writer (generation %llu)", key,
                               (unsigned long long)mine);
        s3l__ckpt_cleanup(&now);
    }
    s3l_free(data);
    return rc;
}

int s3l__ckpt_write(struct s3l_store *s, struct s3l__ckpt *c, uint64_t mine, struct s3l_error *err)
{
    char *text = NULL, *key = s3l__key_checkpoint(c->pipeline);
    size_t len = 0;
    int rc = key ? s3l__ckpt_encode(c, &text, &len, err)
                 : s3l_error_set(err, S3L_ENOMEM, "out of memory writing a checkpoint");
    if (rc == 0) {
        struct s3l_put_options po = {0};
        po.if_none_match = !c->exists;
        po.if_match = c->exists ? c->etag : NULL;
        po.content_type = "application/json";
        struct s3l_object_info info;
        struct s3l_error e2 = {0};
        rc = s3l_store_put(s, key, text, len, &po, &info, &e2);
        if (rc == 0) {
            c->exists = true;
            memcpy(c->etag, info.etag, sizeof(c->etag));
            c->mtime_ns = info.mtime_ns;
        } else if (rc == S3L_EPRECONDITION_FAILED) {
            rc = refused(s, key, text, len, c, mine, err);
        } else if (err && err->code == 0) {
            *err = e2;
        }
    }
    s3l_free(text);
    s3l_free(key);
    return rc;
}

int s3l__ckpt_new_writer(struct s3l__ckpt *c, struct s3l_error *err)
{
    uint8_t r[16];
    if (RAND_bytes(r, sizeof(r)) != 1)
        return s3l_error_set(err, S3L_EINTERNAL, "the random generator failed (a writer's token)");
    s3l_hex_encode(r, sizeof(r), c->writer);
    return 0;
}
