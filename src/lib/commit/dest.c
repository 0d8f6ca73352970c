/*
 * The table destination: open (claim and recovery of a pending epoch), the epoch's commit
 * (prepare: close and stage every lane's file; the commit point: the conditional checkpoint write
 * that records the pending epoch; then protocol.c finishes it), abort and free. The protocol is
 * docs/internals/commit.md; its other parts are claim.c, lane.c, stream.c and gc.c.
 * Pipelined commit (commit.md "Pipelined commit"): unless serial_commit, the finish of an epoch
 * runs on a thread of its own (the committer) while the caller stages the next epoch; every call
 * that touches what the committer owns (d->ck, the schema records) joins it first.
 */
#include <jansson.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "commit/commit.h"
#include "os/os.h"
#include "store/store.h"
#include "s3l/store.h"
#include "util/util.h"

/* --- the epoch --- */

static void reset_epoch(struct s3l_dest *d)
{
    for (size_t i = 0; i < d->n_streams; i++) {
        struct s3l_dest_stream *st = d->streams[i];
        for (unsigned j = 0; j < d->lanes; j++) {
            s3l__lane_drop(&st->lanes[j]);
            st->lanes[j].next_file = 0;
            st->lanes[j].sticky = 0;
            s3l_error_clear(&st->lanes[j].err);
        }
        s3l__staging_cleanup(&st->dl);
        st->dl_rows = 0;
        st->dl_sticky = 0;
    }
}

static void free_staged(struct s3l_dest *d, bool remove)
{
    for (size_t i = 0; i < d->n_staged; i++) {
        if (remove)
            s3l_store_remove(d->store, d->staged[i].staged, NULL);
        s3l_free(d->staged[i].table);
        s3l_free(d->staged[i].staged);
        s3l_free(d->staged[i].final);
    }
    d->n_staged = 0;
}

void s3l_dest_abort(struct s3l_dest *d)
{
    if (!d)
        return;
    s3l__dest_join(d); /* the epoch finishing is past its commit point: it is not dropped */
    reset_epoch(d);
    s3l__staging_abort_sealed(d);
    free_staged(d, true);
}

/* Step 2: close and stage every open file (sealed when the commit point is deferred: published
 * by the committer before it). A lane's sticky failure is returned first. */
static int prepare(struct s3l_dest *d, struct s3l_error *err)
{
    for (size_t i = 0; i < d->n_streams; i++) {
        struct s3l_dest_stream *st = d->streams[i];
        for (unsigned j = 0; j < d->lanes; j++)
            if (st->lanes[j].sticky)
                return s3l__lane_sticky_out(&st->lanes[j], err);
        if (st->dl_sticky)
            return s3l_error_set(err, st->dl_sticky, "dead-letter file of %s failed earlier",
                                 st->table);
    }
    for (size_t i = 0; i < d->n_streams; i++) {
        struct s3l_dest_stream *st = d->streams[i];
        for (unsigned j = 0; j < d->lanes; j++) {
            if (!st->lanes[j].w)
                continue;
            int rc = s3l__lane_close_file(&st->lanes[j], s3l__dest_seals(d), err);
            if (rc) {
                s3l_error_prefix(err, "staging a file of %s", st->table);
                return rc; /* not prefix's result: ENOMEM leaves err empty (code 0) */
            }
        }
        if (st->dl.up) {
            int rc = s3l__staging_publish(d, &st->dl, st->table, st->dl_rows, true,
                                          s3l__dest_seals(d), err);
            if (rc)
                return rc;
        }
    }
    return 0;
}

static void free_carried(struct s3l_dest *d)
{
    s3l__ckpt_schemas_free(d->ck.schemas, d->ck.n_schemas);
    d->ck.schemas = NULL;
    d->ck.n_schemas = 0;
}

static bool has_data_rows(const struct s3l_dest *d, const char *table)
{
    for (size_t i = 0; i < d->n_staged; i++)
        if (!d->staged[i].deadletter && d->staged[i].rows && strcmp(d->staged[i].table, table) == 0)
            return true;
    return false;
}

/*
 * The schema records this epoch carries into its commit point: the pending record of each stream
 * that staged data rows in it (a stream without rows keeps its record for a later epoch), as
 * compact JSON, the bytes a recovery decodes from the checkpoint too. S3L_ENOMEM.
 */
static int carry_records(struct s3l_dest *d)
{
    d->ck.schemas = s3l_calloc(d->n_streams ? d->n_streams : 1, sizeof(*d->ck.schemas));
    if (!d->ck.schemas)
        return S3L_ENOMEM;
    for (size_t i = 0; i < d->n_streams; i++) {
        struct s3l_dest_stream *st = d->streams[i];
        if (!st->pending_record || !has_data_rows(d, st->table))
            continue;
        /* The record's bytes as the format made them (the same bytes a write at open made). */
        struct s3l__ckpt_schema *cs = &d->ck.schemas[d->ck.n_schemas];
        cs->table = s3l_strdup(st->table);
        cs->record = s3l_strdup(st->pending_record);
        cs->etag = st->record_etag ? s3l_strdup(st->record_etag) : NULL;
        cs->schema = s3l_schema_copy(st->schema); /* for s3l__dest_records_recheck */
        d->ck.n_schemas++;
        if (!cs->table || !cs->record || (st->record_etag && !cs->etag) || !cs->schema)
            return S3L_ENOMEM;
    }
    return 0;
}

/* After the commit point: the carried records are the checkpoint's now, not the streams'. */
static void records_carried(struct s3l_dest *d)
{
    for (size_t i = 0; i < d->n_streams; i++)
        for (size_t j = 0; j < d->ck.n_schemas; j++)
            if (strcmp(d->streams[i]->table, d->ck.schemas[j].table) == 0) {
                s3l_free(d->streams[i]->pending_record);
                s3l_free(d->streams[i]->record_etag);
                d->streams[i]->pending_record = d->streams[i]->record_etag = NULL;
            }
}

static int set_state(struct s3l_dest *d, const char *state_json, char **old)
{
    *old = d->ck.state;
    if (!state_json) {
        *old = NULL;
        return 0;
    }
    d->ck.state = s3l_strdup(state_json);
    if (!d->ck.state) {
        d->ck.state = *old;
        return S3L_ENOMEM;
    }
    return 0;
}

/* Whether the runner's state text is the recorded one, compared as JSON values. */
static bool same_state(const char *recorded, const char *state_json)
{
    if (!recorded)
        return false;
    json_t *a = json_loads(recorded, JSON_DECODE_ANY, NULL);
    json_t *b = json_loads(state_json, JSON_DECODE_ANY, NULL);
    bool same = a && b && json_equal(a, b);
    json_decref(a);
    json_decref(b);
    return same;
}

bool s3l__dest_seals(const struct s3l_dest *d)
{
    return d->defer && !d->serial;
}

/* --- requests per epoch, and the committer --- */

/* The requests of the stager's side since the mark (the store's counts less the committer's).
 * Only while no finish runs. */
static void stager_since(struct s3l_dest *d, struct s3l_store_counts *out)
{
    struct s3l_store_counts now, tally, mine;
    s3l_store_counts(d->store, &now);
    s3l__tally_read(&d->tally, &tally);
    s3l_counts_diff(&now, &d->mark, out);
    s3l_counts_diff(&tally, &d->tally_mark, &mine);
    s3l_counts_diff(out, &mine, out);
}

/* Marks the store's counts and the committer's tally (only while no finish runs). */
static void mark_counts(struct s3l_dest *d)
{
    s3l_store_counts(d->store, &d->mark);
    s3l__tally_read(&d->tally, &d->tally_mark);
}

/* Drops the pending epoch from d->ck after a failure before or at its commit point: its files
 * (their staged copies removed when `remove`: never recorded) and the records it carried (the
 * streams keep theirs). */
static void drop_pending(struct s3l_dest *d, bool remove)
{
    for (size_t i = 0; remove && i < d->ck.n_files; i++)
        s3l_store_remove(d->store, d->ck.files[i].staged, NULL);
    s3l__ckpt_clear_pending(&d->ck);
}

/*
 * The end of step 2 and step 3 for the epoch set pending in d->ck: publish the uploads prepare
 * sealed, read the schema records it carries again (s3l__dest_records_recheck: another writer's
 * change of a column's type stops it here; event after-prepare after them), then the commit
 * point. *point: the commit point was attempted, so a failure leaves d broken (the write may have
 * happened even when it failed: a reply lost after the publish, an error after the rename; the
 * staged files may be pending now, so they are not deleted but left for recovery or gc). Before
 * it, the epoch is dropped from d->ck and its staged files removed.
 */
static int record_point(struct s3l_dest *d, bool *point, struct s3l_error *err)
{
    *point = false;
    int rc = s3l__staging_publish_sealed(d, d->job.sealed, d->job.n_sealed, err);
    s3l_free(d->job.sealed);
    d->job.sealed = NULL;
    d->job.n_sealed = 0;
    if (rc == 0)
        rc = s3l__dest_records_recheck(d, err); /* a record another writer changed meanwhile */
    if (rc) {
        drop_pending(d, true);
        return rc;
    }
    s3l_store_event(d->store, S3L__EV_AFTER_PREPARE);
    *point = true;
    rc = s3l__ckpt_write(d->store, &d->ck, d->generation, err);
    if (rc) {
        s3l_error_prefix(err, "committing epoch %llu: writing its commit point",
                         (unsigned long long)d->ck.pending_epoch);
        drop_pending(d, false);
        return rc;
    }
    records_carried(d);
    return 0;
}

/* The committer's part of an epoch: its commit point first when d->job.with_point (deferred,
 * record_point), then step 4. *point as record_point's (true when the point was done before).
 * ci gets the staged files whose deletion failed (d->left counts them too). */
static int complete(struct s3l_dest *d, bool *point, struct s3l_dest_commit_info *ci,
                    struct s3l_error *err)
{
    *point = true;
    int rc = d->job.with_point ? record_point(d, point, err) : 0;
    if (rc)
        return rc;
    s3l_store_event(d->store, S3L__EV_AFTER_CHECKPOINT);
    uint64_t before = d->left.n;
    rc = s3l__finish_pending(d->store, &d->format, &d->ck, d->generation, false, &d->left, err);
    ci->staged_left = d->left.n - before;
    ci->staged_left_why = ci->staged_left ? d->left.why.message : NULL;
    return rc;
}

/* The committer: one epoch's completion, its requests counted in d->tally. */
static void *committer(void *arg)
{
    struct s3l_dest *d = arg;
    bool point;
    s3l__tally_set(&d->tally);
    d->job.rc = complete(d, &point, &d->job.info, &d->job.err);
    s3l__tally_set(NULL);
    pthread_mutex_lock(&d->job.mu);
    d->job.ended = true;
    pthread_cond_broadcast(&d->job.cv);
    pthread_mutex_unlock(&d->job.mu);
    return NULL;
}

bool s3l_dest_wait_finish(struct s3l_dest *d, uint64_t timeout_ms)
{
    if (!d->job.running)
        return true;
    if (timeout_ms == 0) { /* a look, no wait (the runner asks at its clock readings) */
        pthread_mutex_lock(&d->job.mu);
        bool ended = d->job.ended;
        pthread_mutex_unlock(&d->job.mu);
        return ended;
    }
    /* pthread_cond_timedwait's clock: CLOCK_REALTIME, s3l__os_now_ns's. */
    int64_t at = s3l__os_now_ns() + (int64_t)S3L_MIN(timeout_ms, (uint64_t)INT32_MAX) * 1000000;
    struct timespec until = {(time_t)(at / 1000000000), (long)(at % 1000000000)};
    pthread_mutex_lock(&d->job.mu);
    while (!d->job.ended && pthread_cond_timedwait(&d->job.cv, &d->job.mu, &until) == 0)
        ;
    bool ended = d->job.ended;
    pthread_mutex_unlock(&d->job.mu);
    return ended;
}

void s3l__dest_join(struct s3l_dest *d)
{
    s3l__dest_claim_wait(d, NULL); /* its failure is returned by the calls that need it */
    if (!d->job.running)
        return;
    pthread_join(d->job.th, NULL);
    d->job.running = false;
    if (d->job.rc) {
        /* As a finish on the caller's thread: only reopening recovers. */
        d->broken = d->failed = d->job.rc;
        d->failed_err = d->job.err;
        return;
    }
    struct s3l_store_counts tally, mine;
    s3l__tally_read(&d->tally, &tally);
    s3l_counts_diff(&tally, &d->job.tally_at, &mine);
    d->done = d->job.info;
    s3l__counts_add(&d->done.requests, &mine, &d->done.requests);
    d->has_done = true;
}

int s3l__dest_join_err(struct s3l_dest *d, struct s3l_error *err)
{
    s3l__dest_join(d);
    int rc = d->failed;
    if (rc) {
        if (err && err->code == 0)
            *err = d->failed_err;
        d->failed = 0;
        s3l_error_clear(&d->failed_err);
    }
    return rc;
}

/*
 * The epoch set pending in d->ck completed (complete(): its files published, its commit point,
 * its finish) on the committer's thread, or here when serial (or when no thread can be started).
 * *handed: it went to the committer (ci is reported at its join). A failure here at or after the
 * commit point leaves d broken; the committer's, whatever it is, does at the join.
 */
static int hand_off(struct s3l_dest *d, struct s3l_dest_commit_info *ci, bool *handed,
                    struct s3l_error *err)
{
    *handed = false;
    bool point = false;
    int rc;
    if (!d->serial) {
        stager_since(d, &ci->requests);
        mark_counts(d);
        d->job.info = *ci;
        d->job.tally_at = d->tally_mark;
        d->job.rc = 0;
        d->job.ended = false;
        s3l_error_clear(&d->job.err);
        if (pthread_create(&d->job.th, NULL, committer, d) == 0) {
            d->job.running = true;
            *handed = true;
            return 0;
        }
        /* No thread: completed here, its requests counted from the mark just taken. */
        rc = complete(d, &point, ci, err);
        struct s3l_store_counts rest;
        stager_since(d, &rest);
        mark_counts(d);
        s3l__counts_add(&ci->requests, &rest, &ci->requests);
    } else {
        rc = complete(d, &point, ci, err);
        stager_since(d, &ci->requests);
        mark_counts(d);
    }
    if (rc && point)
        d->broken = rc;
    return rc;
}

/* Steps 3 and 4 for an epoch that staged files (with the end of step 2 when its uploads were
 * sealed): handed to the committer unless serial, from the commit point on, or from the
 * publishes on when deferred (defer_commit_point). A failure before the commit point drops the
 * epoch (the caller aborts); at or after it leaves d broken (only reopening recovers). */
static int commit_epoch(struct s3l_dest *d, struct s3l_dest_commit_info *ci, bool *handed,
                        struct s3l_error *err)
{
    *handed = false;
    for (size_t i = 0; i < d->n_staged; i++) {
        if (d->staged[i].deadletter) {
            ci->rejected += d->staged[i].rows;
        } else {
            ci->files++;
            ci->rows += d->staged[i].rows;
        }
    }
    ci->epoch = d->stage_epoch;
    /* The commit point covers the schema records too. */
    int rc = carry_records(d);
    if (rc) {
        free_carried(d); /* the streams keep theirs */
        return s3l_error_set(err, rc,
                             "out of memory carrying the schema records into the checkpoint");
    }
    d->ck.has_pending = true;
    d->ck.pending_epoch = ci->epoch;
    d->ck.pending_generation = d->generation;
    d->ck.files = d->staged;
    d->ck.n_files = d->n_staged;
    d->staged = NULL;
    d->n_staged = d->cap_staged = 0;
    d->job.sealed = d->sealed;
    d->job.n_sealed = d->n_sealed;
    d->sealed = NULL;
    d->n_sealed = d->cap_sealed = 0;
    /* The commit point here, unless deferred to the committer (then the files' uploads too). */
    d->job.with_point = s3l__dest_seals(d);
    bool point = false;
    rc = d->job.with_point ? 0 : record_point(d, &point, err);
    if (rc) {
        if (point)
            d->broken = rc;
        return rc;
    }
    /* The next epoch's files are named with its number from now on. */
    d->stage_epoch = ci->epoch + 1;
    rc = hand_off(d, ci, handed, err);
    if (rc && !d->broken)
        d->stage_epoch = ci->epoch; /* dropped before its commit point: staged again */
    return rc;
}

/*
 * Whether an idle writer should rewrite its checkpoint unchanged: it claimed its generation (a
 * writer that claimed nothing, such as a rerun with nothing new, never writes), it records a
 * commit interval, and its checkpoint was last written that long ago. gc takes a checkpoint
 * older than twice the interval for a dead writer (gc.c), so a live one must not look so.
 */
static bool heartbeat_due(const struct s3l_dest *d)
{
    if (!d->claimed || !d->ck.has_interval || d->ck.commit_interval_ms == 0)
        return false;
    int64_t interval_ns = (int64_t)(d->ck.commit_interval_ms * 1000000ull);
    return s3l__os_now_ns() - d->ck.mtime_ns >= interval_ns;
}

static void *publisher(void *arg)
{
    struct s3l_dest *d = arg;
    d->pub.rc = s3l__staging_publish_sealed(d, d->pub.sealed, d->pub.n_sealed, &d->pub.err);
    return NULL;
}

/*
 * Deferred, while the epoch before still finishes: step 2 now (prepare), and the completion of
 * the uploads it sealed on a thread of its own (*started; early_join waits for it), so that their
 * PutObjects (or last parts) travel during that finish instead of after it on the committer's
 * thread. The commit point still follows the finish before (the committer writes it after the
 * join). No claim wait is needed before the publish: the epoch finishing was handed over only
 * after its commit waited for this writer's claim (claim.c). Without a thread the uploads stay
 * sealed for the committer, as in a commit that finds nothing finishing. prepare's errors.
 */
static int early_publish(struct s3l_dest *d, bool *started, struct s3l_error *err)
{
    *started = false;
    int rc = prepare(d, err);
    if (rc || d->n_sealed == 0)
        return rc;
    d->pub.sealed = d->sealed; /* the thread's from here: d's list is emptied once it runs */
    d->pub.n_sealed = d->n_sealed;
    d->pub.rc = 0;
    s3l_error_clear(&d->pub.err);
    if (pthread_create(&d->pub.th, NULL, publisher, d) != 0) {
        d->pub.sealed = NULL; /* still d's */
        return 0;
    }
    d->sealed = NULL;
    d->n_sealed = d->cap_sealed = 0;
    *started = true;
    return 0;
}

/* Waits for early_publish's uploads: 0, or the first failure (the rest aborted), its message in
 * err ("staging KEY: ..."). Their files are in the staged list either way (an abort removes
 * them). */
static int early_join(struct s3l_dest *d, struct s3l_error *err)
{
    pthread_join(d->pub.th, NULL);
    s3l_free(d->pub.sealed);
    d->pub.sealed = NULL;
    d->pub.n_sealed = 0;
    if (d->pub.rc && err)
        *err = d->pub.err;
    return d->pub.rc;
}

/*
 * What a commit waits for before its own steps: the epoch finishing (its failure is this call's:
 * the run stops with it), then the claim a lane started, if any (a fenced writer stops there:
 * nothing of its was staged). Deferred, with the epoch before still finishing, this epoch's
 * files are closed and their uploads completed meanwhile (early_publish; *prepared: prepare ran
 * here). A failure of those uploads drops the epoch here, as a sealed upload failing on the
 * committer's thread does (record_point): before the commit point, so its staged files are
 * removed (those not completed were aborted), and d refuses further commits, so that a commit
 * retried without an abort cannot record keys that were never completed.
 */
static int wait_before(struct s3l_dest *d, bool *prepared, struct s3l_error *err)
{
    bool early = s3l__dest_seals(d) && !s3l_dest_wait_finish(d, 0), published = false;
    struct s3l_error perr = {0};
    int prc = early ? early_publish(d, &published, &perr) : 0;
    *prepared = early;
    int rc = s3l__dest_join_err(d, err);
    if (published)
        prc = early_join(d, &perr); /* prepare succeeded to start it */
    if (rc == 0 && prc) {
        rc = prc;
        if (err)
            *err = perr;
        if (published) {
            reset_epoch(d);
            free_staged(d, true);
            d->broken = rc;
        }
    }
    if (rc == 0)
        rc = s3l__dest_claim_wait(d, err);
    return rc;
}

int s3l_dest_commit(struct s3l_dest *d, const char *state_json, struct s3l_dest_commit_info *info,
                    struct s3l_error *err)
{
    struct s3l_dest_commit_info ci = {0};
    bool prepared;
    int rc = wait_before(d, &prepared, err);
    if (rc)
        return rc;
    if (d->broken)
        return s3l_error_set(err, S3L_ESTATE,
                             "an earlier commit failed after its commit point; reopen to recover");
    rc = prepared ? 0 : prepare(d, err);
    if (rc)
        return rc;
    char *old_state = NULL;
    rc = set_state(d, state_json, &old_state);
    if (rc)
        return s3l_error_set(err, rc, "out of memory keeping the runner's state");
    bool handed = false;
    if (d->n_staged == 0) {
        /* No stream had rows: no file, no marker; only the runner's positions move (and
         * nothing at all is written when they did not, unless a heartbeat is due). */
        s3l_store_event(d->store, S3L__EV_AFTER_PREPARE);
        if (state_json && !same_state(old_state, state_json)) {
            rc = s3l__dest_claim(d, err);
            if (rc == 0)
                rc = s3l__ckpt_write(d->store, &d->ck, d->generation, err);
        } else if (heartbeat_due(d)) {
            rc = s3l__ckpt_write(d->store, &d->ck, d->generation, err);
        }
    } else {
        rc = commit_epoch(d, &ci, &handed, err);
    }
    if (rc && !d->broken) {
        s3l_free(d->ck.state);
        d->ck.state = old_state;
    } else {
        s3l_free(old_state);
    }
    if (rc)
        return rc;
    reset_epoch(d);
    if (!handed && ci.epoch == 0) {
        stager_since(d, &ci.requests);
        mark_counts(d);
    }
    /* Pipelined, this call reports the epoch whose finish it saw end (the join above); the one
     * handed over now is reported by the next commit or s3l_dest_sync. Serial: this one. */
    struct s3l_dest_commit_info out = {0};
    bool have = d->has_done;
    if (have)
        out = d->done;
    d->has_done = false;
    if (!handed && ci.epoch) {
        if (have) {
            d->done = ci; /* finished here (no thread): reported next, after the one before */
            d->has_done = true;
        } else {
            out = ci;
        }
    }
    out.finishing = handed ? ci.epoch : 0;
    if (info)
        *info = out;
    return 0;
}

int s3l_dest_sync(struct s3l_dest *d, struct s3l_dest_commit_info *info, struct s3l_error *err)
{
    int rc = s3l__dest_join_err(d, err);
    if (info)
        *info = d->has_done ? d->done : (struct s3l_dest_commit_info){0};
    d->has_done = false;
    return rc;
}

/* --- open and free --- */

static int check_options(const struct s3l_dest_options *o, struct s3l_error *err)
{
    if (!o || o->version < 1 || o->version > S3L_DEST_OPTIONS_VERSION)
        return s3l_error_set(err, S3L_EINVALID_CONFIG, "destination options: bad version");
    int rc = s3l_dest_check_disposition(o->disposition, err);
    if (rc)
        return rc;
    rc = s3l__pipeline_id_check(o->pipeline_id, err);
    if (rc)
        return rc;
    if (o->lanes > S3L_DEST_MAX_LANES)
        return s3l_error_set(err, S3L_EINVALID_CONFIG, "lanes %u: at most %d", o->lanes,
                             S3L_DEST_MAX_LANES);
    return 0;
}

static void dest_free_fields(struct s3l_dest *d)
{
    s3l__dest_join(d);
    for (size_t i = 0; i < d->n_streams; i++)
        s3l__stream_free(d->streams[i]);
    s3l_free(d->streams);
    s3l__dest_memo_free(d);
    s3l__staging_abort_sealed(d);
    s3l_free(d->sealed);
    free_staged(d, false);
    s3l_free(d->staged);
    s3l__ckpt_cleanup(&d->ck);
    s3l_free(d->pipeline);
    if (d->format.destroy)
        d->format.destroy(d->format.ctx);
    pthread_mutex_destroy(&d->mu);
    pthread_mutex_destroy(&d->job.mu);
    pthread_mutex_destroy(&d->claim_job.mu);
    pthread_cond_destroy(&d->job.cv);
    s3l__tally_cleanup(&d->tally);
    s3l_free(d);
}

int s3l__dest_open_lazy(struct s3l_store *store, const struct s3l_dest_options *o,
                        const struct s3l__dest_format *format, struct s3l_dest **out,
                        struct s3l_error *err)
{
    int rc = check_options(o, err);
    struct s3l_dest *d = rc ? NULL : s3l_calloc(1, sizeof(*d));
    if (!d) {
        if (format->destroy)
            format->destroy(format->ctx);
        return rc ? rc : s3l_error_set(err, S3L_ENOMEM, "out of memory opening a destination");
    }
    pthread_mutex_init(&d->mu, NULL);
    pthread_mutex_init(&d->job.mu, NULL);
    pthread_mutex_init(&d->claim_job.mu, NULL);
    pthread_cond_init(&d->job.cv, NULL);
    s3l_store_counts(store, &d->mark);
    s3l__tally_init(&d->tally, s3l__store_counts_owner(store), d->mark.unit);
    d->store = store;
    /* Versions 1 and 2 predate the pipelined commit: their commits finish before they return. */
    d->serial = o->version < 3 || o->serial_commit;
    d->defer = o->version >= 4 && o->defer_commit_point;
    d->format = *format;
    d->file_size = o->file_size ? o->file_size : S3L_DEST_DEFAULT_FILE_SIZE;
    d->lanes = o->lanes ? o->lanes : 1;
    d->allow_type_changes = o->allow_type_changes;
    d->pipeline = s3l_strdup(o->pipeline_id);
    rc = d->pipeline ? 0 : s3l_error_set(err, S3L_ENOMEM, "out of memory opening a destination");
    if (rc == 0)
        rc = s3l__ckpt_read(store, d->pipeline, &d->ck, err);
    if (rc) {
        dest_free_fields(d);
        return rc;
    }
    d->generation = d->ck.generation + 1;
    /* This writer's interval goes into every checkpoint it writes, from its claim on (version 2
     * options); without one the checkpoint keeps what it recorded. */
    if (o->version >= 2 && o->has_commit_interval) {
        d->ck.has_interval = true;
        d->ck.commit_interval_ms = o->commit_interval_ms;
    }
    d->stage_epoch = d->ck.committed_epoch + 1;
    mark_counts(d);
    *out = d;
    return 0;
}

int s3l__dest_recover(struct s3l_dest *d, struct s3l_error *err)
{
    if (!d->ck.has_pending)
        return 0;
    /* Step 5: a pending epoch is committed under the generation recorded with it, by a writer
     * that claimed its own generation first (so an older one is fenced). */
    d->recovered = d->ck.pending_epoch;
    int rc = s3l__dest_claim(d, err);
    if (rc == 0)
        rc = s3l__finish_pending(d->store, &d->format, &d->ck, d->generation, true, &d->left,
                                 err);
    if (rc == 0) {
        /* Recovery's housekeeping after a crash, cheap (this pipeline's staging area only) and
         * best effort: temp files of its killed writers. Only when a pending epoch was
         * recovered, so that opening after a clean run changes nothing; gc sweeps everything. */
        char *staging = s3l__key_staging_prefix(d->pipeline);
        if (staging)
            s3l__dest_sweep_temps(d, staging, s3l__os_now_ns(), NULL, NULL);
        s3l_free(staging);
    }
    d->stage_epoch = d->ck.committed_epoch + 1;
    mark_counts(d); /* an epoch's counts start after the recovery */
    return rc;
}

int s3l__dest_open_format(struct s3l_store *store, const struct s3l_dest_options *o,
                          const struct s3l__dest_format *format, struct s3l_dest **out,
                          struct s3l_error *err)
{
    struct s3l_dest *d = NULL;
    int rc = s3l__dest_open_lazy(store, o, format, &d, err);
    if (rc == 0)
        rc = s3l__dest_recover(d, err);
    if (rc) {
        if (d)
            dest_free_fields(d);
        return rc;
    }
    *out = d;
    return 0;
}

void s3l_dest_free(struct s3l_dest *d)
{
    if (!d)
        return;
    s3l_dest_abort(d);
    dest_free_fields(d);
}

uint64_t s3l_dest_generation(const struct s3l_dest *d)
{
    return d->generation;
}

/* The getters of what the checkpoint holds wait for the committer, which owns it meanwhile. */
uint64_t s3l_dest_committed_epoch(const struct s3l_dest *d)
{
    s3l__dest_join((struct s3l_dest *)d);
    return d->ck.committed_epoch;
}

uint64_t s3l_dest_recovered(const struct s3l_dest *d)
{
    return d->recovered;
}

uint64_t s3l_dest_staged_left(const struct s3l_dest *d, const char **why)
{
    s3l__dest_join((struct s3l_dest *)d);
    if (why)
        *why = d->left.n ? d->left.why.message : NULL;
    return d->left.n;
}

const char *s3l_dest_state(const struct s3l_dest *d)
{
    s3l__dest_join((struct s3l_dest *)d);
    return d->ck.state;
}
