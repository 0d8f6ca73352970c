/*
 * Reading a destination's checkpoints without taking a pipeline over: what `s3land recover` and
 * `gc` look at, and how a rerun learns that every input is already committed (so that it writes
 * nothing at all). The document, its key and its reader are the destination's (commit/: layout.c
 * and checkpoint.c, docs/internals/commit.md); this file only reads them.
 */
#include <string.h>

#include "commit/commit.h"
#include "runner.h"
#include "s3l/store.h"

int s3l_pipeline_peek(struct s3l_store *store, const char *id, char **state, bool *pending,
                      uint64_t *committed_epoch, struct s3l_error *err)
{
    if (state)
        *state = NULL;
    if (pending)
        *pending = false;
    if (committed_epoch)
        *committed_epoch = 0;
    return s3l__ckpt_peek(store, id, state, pending, committed_epoch, err);
}

struct list_ctx {
    int (*cb)(void *ctx, const char *id);
    void *ctx;
};

static int on_object(void *ctx, const struct s3l_object_info *info)
{
    struct list_ctx *l = ctx;
    char id[256];
    if (!s3l__key_checkpoint_parse(info->key, id, sizeof(id)))
        return 0;
    return l->cb(l->ctx, id);
}

int s3l_pipeline_list(struct s3l_store *store, int (*cb)(void *ctx, const char *id), void *ctx,
                      struct s3l_error *err)
{
    struct list_ctx l = {cb, ctx};
    return s3l_store_list(store, s3l__key_checkpoints_prefix(), on_object, &l, err);
}
