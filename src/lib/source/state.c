/*
 * The object source's checkpoint state, as JSON (docs/internals/source.md):
 *
 *     {"version": 1, "done": ["part-0", "part-1"],
 *      "current": {"key": "part-2", "etag": "...", "offset": 1234, "line": 17}}
 *
 * done: the keys fully read, sorted bytewise (so equal states are equal texts); current: the
 * object in progress, or null. Decoding checks every field before anything is used, so a state
 * is taken whole or refused (CORRUPT, saying what is wrong), never half-applied.
 */
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "source/source.h"
#include "util/util.h"

#define STATE_VERSION 1

void s3l__source_state_cleanup(struct s3l__source_state *st)
{
    if (!st)
        return;
    for (size_t i = 0; i < st->n_done; i++)
        s3l_free(st->done[i]);
    s3l_free(st->done);
    s3l_free(st->cur_key);
    memset(st, 0, sizeof(*st));
}

static int by_bytes(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

bool s3l__source_state_done(const struct s3l__source_state *st, const char *key)
{
    return st->n_done &&
           bsearch(&key, st->done, st->n_done, sizeof(*st->done), by_bytes) != NULL;
}

static int corrupt(struct s3l_error *err, const char *what)
{
    return s3l_error_set(err, S3L_ECORRUPT, "object source state: %s", what);
}

static int decode_current(json_t *cur, struct s3l__source_state *st, struct s3l_error *err)
{
    json_t *key = json_object_get(cur, "key"), *etag = json_object_get(cur, "etag");
    json_t *off = json_object_get(cur, "offset"), *line = json_object_get(cur, "line");
    if (!json_is_string(key) || !json_is_string(etag) || !json_is_integer(off) ||
        !json_is_integer(line) || json_integer_value(off) < 0 || json_integer_value(line) < 1)
        return corrupt(err, "\"current\" needs key, etag (strings), offset >= 0 and line >= 1");
    const char *k = json_string_value(key), *e = json_string_value(etag);
    if (!s3l_store_key_valid(k) || strlen(k) != json_string_length(key))
        return corrupt(err, "\"current\" has a key the store's rules refuse");
    if (strlen(e) >= sizeof(st->cur_etag) || strlen(e) != json_string_length(etag))
        return corrupt(err, "\"current\" has an ETag over 131 bytes or holding a NUL");
    if (!(st->cur_key = s3l_strdup(k)))
        return s3l_error_set(err, S3L_ENOMEM, "out of memory for the object source state");
    memcpy(st->cur_etag, e, strlen(e) + 1);
    st->cur_offset = (uint64_t)json_integer_value(off);
    st->cur_line = (uint64_t)json_integer_value(line);
    return 0;
}

static int decode_done(json_t *done, struct s3l__source_state *st, struct s3l_error *err)
{
    size_t n = json_array_size(done);
    if (n && !(st->done = s3l_calloc(n, sizeof(*st->done))))
        return s3l_error_set(err, S3L_ENOMEM, "out of memory for the object source state");
    for (size_t i = 0; i < n; i++) {
        json_t *k = json_array_get(done, i);
        if (!json_is_string(k) || !s3l_store_key_valid(json_string_value(k)) ||
            strlen(json_string_value(k)) != json_string_length(k))
            return corrupt(err, "\"done\" holds something other than a valid key");
        if (i > 0 && strcmp(st->done[i - 1], json_string_value(k)) >= 0)
            return corrupt(err, "\"done\" is not sorted bytewise without duplicates");
        if (!(st->done[i] = s3l_strdup(json_string_value(k))))
            return s3l_error_set(err, S3L_ENOMEM, "out of memory for the object source state");
        st->n_done = i + 1;
    }
    return 0;
}

int s3l__source_state_decode(const char *json, size_t len, struct s3l__source_state *st,
                             struct s3l_error *err)
{
    memset(st, 0, sizeof(*st));
    bool nomem = false;
    json_error_t je;
    json_t *root = s3l__json_loadb(json, len, JSON_REJECT_DUPLICATES, &je, &nomem);
    if (!root)
        return nomem ? s3l_error_set(err, S3L_ENOMEM, "out of memory reading the state")
                     : s3l_error_set(err, S3L_ECORRUPT, "object source state: not JSON (%s)",
                                     je.text);
    json_t *ver = json_object_get(root, "version"), *done = json_object_get(root, "done");
    json_t *cur = json_object_get(root, "current");
    int rc = 0;
    if (!json_is_object(root) || !json_is_integer(ver))
        rc = corrupt(err, "not an object with a \"version\"");
    else if (json_integer_value(ver) != STATE_VERSION)
        rc = s3l_error_set(err, S3L_ECORRUPT,
                           "object source state: version %lld is not one this build reads",
                           (long long)json_integer_value(ver));
    else if (!json_is_array(done) || !(json_is_null(cur) || json_is_object(cur)))
        rc = corrupt(err, "\"done\" must be an array and \"current\" an object or null");
    if (rc == 0)
        rc = decode_done(done, st, err);
    if (rc == 0 && json_is_object(cur))
        rc = decode_current(cur, st, err);
    json_decref(root);
    if (rc)
        s3l__source_state_cleanup(st);
    return rc;
}

int s3l__source_state_encode(const char *const *done, size_t n_done, const char *cur_key,
                             const char *cur_etag, uint64_t cur_offset, uint64_t cur_line,
                             char **out, size_t *out_len, struct s3l_error *err)
{
    const char **sorted = n_done ? s3l_malloc(n_done * sizeof(*sorted)) : NULL;
    json_t *root = json_object(), *arr = json_array();
    int bad = !root || !arr || (n_done && !sorted);
    if (!bad && n_done) {
        memcpy(sorted, done, n_done * sizeof(*sorted));
        qsort(sorted, n_done, sizeof(*sorted), by_bytes);
    }
    for (size_t i = 0; !bad && i < n_done; i++)
        bad = json_array_append_new(arr, json_string(sorted[i])) != 0;
    json_t *cur = json_null();
    if (!bad && cur_key)
        cur = json_pack("{s:s, s:s, s:I, s:I}", "key", cur_key, "etag", cur_etag ? cur_etag : "",
                        "offset", (json_int_t)cur_offset, "line", (json_int_t)cur_line);
    bad = bad || !cur || json_object_set_new(root, "version", json_integer(STATE_VERSION)) ||
          json_object_set(root, "done", arr) || json_object_set(root, "current", cur);
    char *text = bad ? NULL : s3l__json_dumps(root, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(cur);
    json_decref(arr);
    json_decref(root);
    s3l_free(sorted);
    if (!text)
        return s3l_error_set(err, S3L_ENOMEM, "out of memory writing the object source state");
    /* s3l__json_dumps's text is the allocator's own (util/alloc.c): s3l_free frees it. */
    *out = text;
    *out_len = strlen(text);
    return 0;
}
