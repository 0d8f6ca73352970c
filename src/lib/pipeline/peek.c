/*
 * Reading a destination's checkpoints without taking a pipeline over: what `s3land recover` and
 * `gc` look at, and how a rerun learns that every input is already committed (so that it writes
 * nothing at all). The document, its key and its reader are the destination's (commit/: layout.c
 * and checkpoint.c, docs/internals/commit.md); this file only reads them.
 */
#include <string.h>

#include "commit/commit.h"
#include "runner.h"

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

int s3l_pipeline_list(struct s3l_store *store, int (*cb)(void *ctx, const char *id), void *ctx,
                      struct s3l_error *err)
{
    return s3l__ckpt_list(store, cb, ctx, err);
}
