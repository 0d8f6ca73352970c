/*
 * Reading a destination's checkpoints without taking a pipeline over: what `s3land recover` and
 * `gc` look at, and how a rerun learns that every input is already committed (so that it writes
 * nothing at all). The document is the destination's (docs/internals/commit.md): an object with
 * "committed_epoch", "pending" (null or the pending epoch) and "state" (the runner's positions).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "runner.h"
#include "s3l/store.h"

#define CHECKPOINT_PREFIX "_openetl/checkpoints/"

int s3l_pipeline_peek(struct s3l_store *store, const char *id, char **state, bool *pending,
                      uint64_t *committed_epoch, struct s3l_error *err)
{
    if (state)
        *state = NULL;
    if (pending)
        *pending = false;
    if (committed_epoch)
        *committed_epoch = 0;
    char key[256];
    if (snprintf(key, sizeof(key), CHECKPOINT_PREFIX "%s.json", id) >= (int)sizeof(key))
        return s3l_error_set(err, S3L_EINVALID_ARGUMENT, "pipeline id %s is too long", id);
    uint8_t *data = NULL;
    size_t len = 0;
    int rc = s3l_store_get(store, key, 0, UINT64_MAX, 64u << 20, &data, &len, NULL, err);
    if (rc == S3L_ENOT_FOUND) {
        s3l_error_clear(err);
        return 0;
    }
    if (rc)
        return rc;
    json_error_t jerr;
    json_t *doc = json_loadb((const char *)data, len, 0, &jerr);
    s3l_free(data);
    if (!json_is_object(doc)) {
        json_decref(doc);
        return s3l_error_set(err, S3L_ECORRUPT, "checkpoint %s: not a JSON object", key);
    }
    json_t *p = json_object_get(doc, "pending"), *st = json_object_get(doc, "state");
    json_t *ce = json_object_get(doc, "committed_epoch");
    if (pending)
        *pending = p && !json_is_null(p);
    if (committed_epoch && json_is_integer(ce) && json_integer_value(ce) > 0)
        *committed_epoch = (uint64_t)json_integer_value(ce);
    if (state && st && !json_is_null(st)) {
        char *text = json_dumps(st, JSON_COMPACT | JSON_ENCODE_ANY);
        *state = text ? s3l_strdup(text) : NULL;
        free(text); /* jansson's allocation */
        if (!*state)
            rc = s3l_error_set(err, S3L_ENOMEM, "out of memory reading checkpoint %s", key);
    }
    json_decref(doc);
    return rc;
}

struct list_ctx {
    int (*cb)(void *ctx, const char *id);
    void *ctx;
};

static int on_object(void *ctx, const struct s3l_object_info *info)
{
    struct list_ctx *l = ctx;
    const char *name = info->key + strlen(CHECKPOINT_PREFIX);
    size_t n = strlen(name);
    if (strncmp(info->key, CHECKPOINT_PREFIX, strlen(CHECKPOINT_PREFIX)) != 0 || n <= 5 ||
        strcmp(name + n - 5, ".json") != 0 || memchr(name, '/', n))
        return 0;
    char id[256];
    if (n - 5 >= sizeof(id))
        return 0;
    memcpy(id, name, n - 5);
    id[n - 5] = 0;
    return l->cb(l->ctx, id);
}

int s3l_pipeline_list(struct s3l_store *store, int (*cb)(void *ctx, const char *id), void *ctx,
                      struct s3l_error *err)
{
    struct list_ctx l = {cb, ctx};
    return s3l_store_list(store, CHECKPOINT_PREFIX, on_object, &l, err);
}
