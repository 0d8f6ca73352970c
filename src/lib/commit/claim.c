/*
 * Claim and fencing, step 0 of the protocol (docs/internals/commit.md): a writer's generation is
 * the checkpoint's at open plus one, and it is written back, conditionally on the version read at
 * open, before the first thing this writer changes. A writer whose claim fails was overtaken by a
 * newer one and stops without staging anything; every later checkpoint write is conditional too
 * (checkpoint.c), so a writer overtaken after its claim is fenced at its next commit point.
 * A lane's first row starts the claim in the background (s3l__dest_claim_begin: on S3 its
 * PutObject travels while the first rows are encoded). No file is published under the staging
 * prefix before it succeeded: a publish (or seal) and a commit wait for it first
 * (s3l__dest_claim_wait). Before that, a file's bytes go only into its upload, which nothing sees
 * until it is completed (S3: a multipart upload's parts; file://: a temp file of a unique name,
 * held by flock): a writer found fenced aborts them (its lanes' uploads are dropped with the
 * failure), a killed one leaves them to gc (temp files; `gc --uploads` for pending uploads,
 * orphans once a later generation claimed). So two writers that opened the same checkpoint (the
 * same generation, the same staged names) never both publish a file: the second's claim fails
 * first.
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
 * this one would re-read): this one is fenced. The claim draws this writer's token (ck.writer),
 * which every checkpoint it writes carries: a claim whose answer was lost (the store wrote it,
 * the client's retry failed its condition) finds its own bytes and stands, while a writer that
 * opened the same checkpoint and claimed first holds other bytes, and this one is fenced.
 */
static int claim_now(struct s3l_dest *d, struct s3l_error *err)
{
    pthread_mutex_lock(&d->mu);
    int rc = 0;
    if (!d->claimed) {
        uint64_t before = d->ck.generation;
        d->claim_ns = s3l__os_now_ns();
        d->ck.generation = d->generation;
        struct s3l_error e2 = {0};
        char was[sizeof(d->ck.writer)];
        memcpy(was, d->ck.writer, sizeof(was));
        rc = s3l__ckpt_new_writer(&d->ck, &e2);
        if (rc == 0)
            rc = s3l__ckpt_write(d->store, &d->ck, d->generation, &e2);
        if (rc == S3L_ECONFLICT)
            rc = s3l_error_set(err, S3L_EFENCED,
                               "pipeline %s: another writer took the checkpoint since this one "
                               "opened; it stops without staging anything",
                               d->pipeline);
        else if (rc && err && err->code == 0)
            *err = e2;
        if (rc) {
            d->ck.generation = before;
            memcpy(d->ck.writer, was, sizeof(was));
        } else {
            d->claimed = true;
        }
    }
    pthread_mutex_unlock(&d->mu);
    return rc;
}

/* The background claim's thread (s3l__dest_claim_begin): the claim, its result kept for the
 * joiner. It takes no lock of the claim job (the joiner holds it while it joins). */
static void *claim_main(void *arg)
{
    struct s3l_dest *d = arg;
    d->claim_job.rc = claim_now(d, &d->claim_job.err);
    return NULL;
}

/* Joins the background claim if it runs (claim_job.mu held); its result, its message in err. */
static int claim_joined(struct s3l_dest *d, struct s3l_error *err)
{
    if (!d->claim_job.started)
        return 0;
    if (!d->claim_job.joined) {
        pthread_join(d->claim_job.th, NULL);
        d->claim_job.joined = true;
    }
    int rc = d->claim_job.rc;
    if (rc && err && err->code == 0)
        *err = d->claim_job.err;
    return rc;
}

int s3l__dest_claim_begin(struct s3l_dest *d, struct s3l_error *err)
{
    pthread_mutex_lock(&d->claim_job.mu);
    int rc = 0;
    if (d->claim_job.started) {
        rc = d->claim_job.joined ? claim_joined(d, err) : 0;
    } else {
        pthread_mutex_lock(&d->mu);
        bool claimed = d->claimed;
        pthread_mutex_unlock(&d->mu);
        if (!claimed) {
            d->claim_job.rc = 0;
            s3l_error_clear(&d->claim_job.err);
            d->claim_job.started = pthread_create(&d->claim_job.th, NULL, claim_main, d) == 0;
            if (!d->claim_job.started)
                rc = claim_now(d, err); /* no thread: the claim here, as before */
        }
    }
    pthread_mutex_unlock(&d->claim_job.mu);
    return rc;
}

int s3l__dest_claim_wait(struct s3l_dest *d, struct s3l_error *err)
{
    pthread_mutex_lock(&d->claim_job.mu);
    int rc = claim_joined(d, err);
    pthread_mutex_unlock(&d->claim_job.mu);
    return rc;
}

int s3l__dest_claim(struct s3l_dest *d, struct s3l_error *err)
{
    int rc = s3l__dest_claim_wait(d, err);
    return rc ? rc : claim_now(d, err);
}
