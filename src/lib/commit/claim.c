/*
 * Claim and fencing, step 0 of the protocol (docs/internals/commit.md): a writer's generation is
 * the checkpoint's at open plus one, and it is written back, conditionally on the version read at
 * open, before the first thing this writer changes. A writer whose claim fails was overtaken by a
 * newer one and stops without staging anything; every later checkpoint write is conditional too
 * (checkpoint.c), so a writer overtaken after its claim is fenced at its next commit point.
 */
#include <pthread.h>

#include "commit/commit.h"
#include "os/os.h"
#include "util/util.h"

/*
 * Writes this writer's generation into the checkpoint, conditionally on the version read at open,
 * before anything is staged. It is done at the first thing that needs it (staging a file, a dead
 * letter, a changed state, gc, a recovery), so that rerunning a finished command writes nothing at
 * all. A checkpoint changed since open means another writer started (and may have committed epochs
 * this one would re-read): this one is fenced.
 */
int s3l__dest_claim(struct s3l_dest *d, struct s3l_error *err)
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
