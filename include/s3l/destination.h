/*
 * The Parquet table destination: lands rows of one or more tables (streams) under a store root,
 * exactly once per epoch, with the layout and protocol of docs/internals/commit.md (issue 3,
 * item 6; docs/design.md section 3). T below is "NAMESPACE/TABLE", or "TABLE" without a namespace.
 *
 *   URL/T/<pipeline>-<epoch %020>-g<generation %020>-<file %05>.parquet        lane 0
 *   URL/T/<pipeline>-<epoch %020>-g<generation %020>-<lane %05>-<file %05>.parquet  lanes 1..
 *   URL/_openetl/staging/<pipeline>/g<generation %020>/T/<same file name>
 *   URL/_openetl/markers/T/<pipeline>-<epoch %020>.json      put-if-absent, one per stream+epoch
 *   URL/_openetl/schemas/T.json                             the table's column record
 *   URL/_openetl/checkpoints/<pipeline>.json                the checkpoint (written atomically)
 *   URL/_openetl/deadletter/T/<pipeline>-<epoch %020>-g<generation %020>.ndjson
 *
 * Use: s3l_dest_open (bumps the generation, then commits a pending epoch left by a crash), read
 * s3l_dest_state to resume the inputs, s3l_dest_stream per table, s3l_dest_lane_sink per lane,
 * feed rows, s3l_dest_commit at every epoch boundary (with the input positions after it), or
 * s3l_dest_abort to drop the epoch in progress; s3l_dest_free.
 *
 * Threads: the row sinks of different lanes (of the same or different streams) and
 * s3l_dest_reject may be called from different threads at once; one lane sink is used by one
 * thread at a time. s3l_dest_open, s3l_dest_stream, s3l_dest_commit, s3l_dest_sync,
 * s3l_dest_abort, s3l_dest_gc and s3l_dest_free must not run concurrently with anything else on
 * the same destination. The destination runs one thread of its own while an epoch finishes (the
 * pipelined commit, s3l_dest_commit; for the length of a step it may start two more: the staged
 * delete beside the committed checkpoint write, and the completion of the next epoch's uploads
 * while a commit waits for the finish); every call above and the getters of the checkpoint
 * (s3l_dest_committed_epoch, s3l_dest_state) wait for it first.
 */
#ifndef S3L_DESTINATION_H
#define S3L_DESTINATION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "s3l/counts.h"

#include "s3l/error.h"
#include "s3l/parquet.h"
#include "s3l/pq_footer.h"
#include "s3l/row.h"
#include "s3l/schema.h"
#include "s3l/store.h"

/* 2: adds has_commit_interval and commit_interval_ms; 3: adds serial_commit (and the pipelined
 * commit, its default); 4: adds defer_commit_point. Callers of versions 1 and 2 are still
 * accepted; their commits are serial, as they were when those versions were current. */
#define S3L_DEST_OPTIONS_VERSION   4
#define S3L_DEST_DEFAULT_FILE_SIZE (256ull << 20)
#define S3L_DEST_MAX_LANES         256

/* Options of s3l_dest_open. Zero-initialise, then set version and pipeline_id. */
struct s3l_dest_options {
    int version;             /* S3L_DEST_OPTIONS_VERSION */
    const char *pipeline_id; /* required: 1..64 bytes of [A-Za-z0-9._-] (a UUID by default) */
    uint64_t file_size;      /* bytes at which a data file closes; 0: 256 MiB */
    unsigned lanes;          /* writers per table (1..256); 0: 1 */
    const char *disposition; /* NULL or "append"; "replace" and "merge" are refused */
    bool allow_type_changes; /* a changed column type updates the record instead of failing */
    const struct s3l_pq_options *parquet; /* NULL: s3l_pq_options_init defaults */
    size_t memory; /* bytes of the budget all writers share; 0: parquet.h default */
    /* Version 2: the writer's commit interval, recorded in the checkpoint when this writer claims
     * its generation, for gc's liveness rule (s3l_dest_gc_pipeline). Without it (false, or a
     * version 1 caller) the checkpoint keeps the interval it had. 0 ms: commits by rows only. */
    bool has_commit_interval;
    uint64_t commit_interval_ms;
    /* Version 3: true turns the pipelined commit off: s3l_dest_commit returns only once its
     * epoch is finished (files copied, markers and the committed checkpoint written), as before
     * issue 14 item 1, and reports that epoch. false (the default): see s3l_dest_commit. */
    bool serial_commit;
    /* Version 4, pipelined commits only: true hands the commit point to the committer's thread
     * too. s3l_dest_commit then returns once the epoch's files are closed (their last bytes
     * written to their uploads); the uploads' completion (on S3 the last part or the one
     * PutObject of a smaller file), the commit point and the finish run while the caller stages
     * the next epoch. The epoch is durable only once reported (info.epoch of a later
     * s3l_dest_commit, or s3l_dest_sync): a crash before leaves its rows to be read again, so a
     * caller that releases its input at s3l_dest_commit (acknowledges messages, deletes files)
     * must leave this false. The runner sets it (it re-reads its inputs from the recorded
     * positions). false (the default): the commit point is written before s3l_dest_commit
     * returns. */
    bool defer_commit_point;
};

struct s3l_dest;
struct s3l_dest_stream;

/*
 * Checks a write disposition. NULL and "append" pass; "replace" and "merge" are refused with
 * S3L_EUNSUPPORTED and the reason (plain files cannot be replaced or merged atomically;
 * docs/design.md section 8); anything else S3L_EINVALID_CONFIG. s3l_dest_open calls it before
 * touching the store.
 */
int s3l_dest_check_disposition(const char *disposition, struct s3l_error *err);

/*
 * "NAMESPACE/TABLE" (or "TABLE" when ns is NULL or empty) into *out (s3l_free), after checking
 * both names with s3l_name_check and refusing "_openetl" (the destination's metadata root) as
 * either. This is the one place a table path is built. S3L_EINVALID_CONFIG naming the bad name
 * and why; S3L_ENOMEM.
 */
int s3l_dest_table_path(const char *ns, const char *table, char **out, struct s3l_error *err);

/*
 * The prefix under which scratch objects may be written to test a destination ("_openetl/check/":
 * inside the metadata root, so that no table and no reader ever sees them). Static storage.
 */
const char *s3l_dest_scratch_prefix(void);

/*
 * Opens the destination for pipeline o->pipeline_id on store (borrowed; must outlive the
 * destination). Reads the checkpoint, adds 1 to its generation and writes it back with a
 * conditional write (the lock of file://) before anything is staged; then, if the checkpoint holds
 * a pending epoch, commits it under the generation recorded with it (same copies, same names),
 * then removes dead writers' temp files from this pipeline's staging area (best effort; see
 * s3l_dest_gc for the rule). Errors: S3L_EUNSUPPORTED / S3L_EINVALID_CONFIG for the disposition or options (named);
 * S3L_ECORRUPT for a checkpoint that cannot be parsed (naming its key); S3L_EFENCED if a newer
 * writer took the pipeline during recovery; S3L_ECONFLICT for a marker that exists with other
 * content; the store's errors (s3l/store.h); S3L_ENOMEM.
 */
int s3l_dest_open(struct s3l_store *store, const struct s3l_dest_options *o, struct s3l_dest **out,
                  struct s3l_error *err);

/* This writer's generation (>= 1). */
uint64_t s3l_dest_generation(const struct s3l_dest *d);
/* The last committed epoch (0: none yet), after waiting for the epoch finishing, if any (its
 * failure is kept for the next s3l_dest_commit or s3l_dest_sync). The epoch in progress is this
 * + 1. */
uint64_t s3l_dest_committed_epoch(const struct s3l_dest *d);
/* The epoch s3l_dest_open found pending in the checkpoint and committed (recovery), or 0: a
 * caller learns it without reading the checkpoint a second time. */
uint64_t s3l_dest_recovered(const struct s3l_dest *d);
/* The staged files whose deletion failed since open (the epochs' staged_left, and a recovery's),
 * after waiting for the epoch finishing, if any; *why (may be NULL) gets the first failure's
 * message (owned by d, valid until s3l_dest_free), NULL when there is none. */
uint64_t s3l_dest_staged_left(const struct s3l_dest *d, const char **why);
/*
 * The runner's JSON value recorded with the last committed epoch (input positions), as compact
 * JSON text, or NULL when none was ever recorded, after waiting for the epoch finishing, if any.
 * Owned by d; valid until the next commit.
 */
const char *s3l_dest_state(const struct s3l_dest *d);

/*
 * Adds a stream writing table T = ns/table with schema (borrowed: it must outlive d). Checks the
 * schema against URL/_openetl/schemas/T.json (reads only); new columns or types are recorded
 * there with the first epoch of this stream that has rows, when that epoch commits, never before.
 * Errors: S3L_EINVALID_CONFIG for a bad name (s3l_name_check) or a table added twice;
 * S3L_ESCHEMA_DRIFT when a recorded column changed type (unless allow_type_changes), naming
 * table, column, old and new type, and saying to remove the record to accept it (the other
 * streams go on); S3L_ECORRUPT for an unreadable record; store errors; S3L_ENOMEM. Waits first
 * for an epoch finishing (it may be writing T's record); that epoch's failure is not returned
 * here but by the next s3l_dest_commit or s3l_dest_sync.
 */
int s3l_dest_stream(struct s3l_dest *d, const char *ns, const char *table,
                    const struct s3l_schema *schema, struct s3l_dest_stream **out,
                    struct s3l_error *err);

/*
 * The row sink of lane `lane` (0 .. lanes-1) of a stream; valid as long as d. A file is started
 * at the first row of an epoch (so a lane without rows writes nothing) and closed, staged, when
 * its size estimate reaches file_size. row_end returns S3L_EINVALID_INPUT for a row that does not
 * fit (dropped; the lane goes on); any other failure (store, codec) is sticky for the lane and
 * makes s3l_dest_commit fail. S3L_EINVALID_ARGUMENT for a lane out of range.
 */
int s3l_dest_lane_sink(struct s3l_dest_stream *st, unsigned lane, struct s3l_row_sink *out);

/*
 * Closes and stages the open file of lane `lane`, if any, as s3l_dest_commit would (step 2,
 * "prepare"), so that lanes fed from different threads close their files in parallel before the
 * commit; call it from the thread that feeds the lane, after its last row of the epoch. With
 * defer_commit_point (pipelined) the file is closed and its upload left to the commit's
 * committer, which completes it before the commit point. 0, the lane's earlier sticky failure,
 * or the failure staging the file (store, codec: then sticky, and s3l_dest_commit fails with it);
 * S3L_EINVALID_ARGUMENT for a lane out of range.
 */
int s3l_dest_lane_close(struct s3l_dest_stream *st, unsigned lane, struct s3l_error *err);

/*
 * Dead-letters a rejected record: appends {"reason": ..., "record": ...} as one NDJSON line to
 * the stream's dead-letter file of the epoch in progress ("record_hex" instead of "record" when
 * the bytes are not valid UTF-8). It is staged and committed with the epoch, listed in the
 * epoch's marker. Store errors; S3L_ENOMEM.
 */
int s3l_dest_reject(struct s3l_dest_stream *st, const void *record, size_t len, const char *reason,
                    struct s3l_error *err);

/* What one s3l_dest_commit (or s3l_dest_sync) reports: one finished epoch. */
struct s3l_dest_commit_info {
    uint64_t epoch;    /* the epoch finished, or 0 when there is none to report */
    uint64_t files;    /* data files committed */
    uint64_t rows;     /* data rows committed */
    uint64_t rejected; /* dead-lettered records committed */
    /* What the epoch cost the store (include/s3l/counts.h): its staging, from the end of the
     * s3l_dest_commit before it (or of s3l_dest_open, or the last s3l_dest_stream, whichever came
     * last), its commit point and its finish; in a run's first epoch also the claim (one
     * checkpoint write). When the finish runs on the committer's thread while the next epoch
     * stages, the committer's requests are counted apart (a tally of its thread: the store's
     * counts are store-wide), so each epoch gets exactly its own. A state-only commit's
     * requests are in no epoch's. A run's whole cost is s3l_store_counts of the store. */
    struct s3l_store_counts requests;
    /* The epoch this call handed to the committer (pipelined: its finish runs on; it is
     * reported later), or 0. */
    uint64_t finishing;
    /* The epoch's staged files whose deletion failed after it was recorded committed (the
     * table is complete; they are garbage under _openetl/staging/ that s3l_dest_gc removes once
     * deletes succeed): all of a batch delete that failed, as its answer does not say which
     * went. staged_left_why: the store's answer to the first such deletion since open (owned by
     * the destination, valid until s3l_dest_free), NULL when staged_left is 0. */
    uint64_t staged_left;
    const char *staged_left_why;
};

/*
 * Ends the epoch in progress and commits it: closes and stages every open file (prepare),
 * records the pending epoch and state_json (the runner's input positions, any JSON value; NULL
 * keeps the previous one) in the checkpoint (the commit point), then finishes it: copies each
 * staged file to its final name, writes each stream's marker (put-if-absent), records the epoch
 * as committed and deletes the staged files. A stream without rows in the epoch gets no file and
 * no marker; when no stream has any, only the state is recorded. info may be NULL.
 * Pipelined (the default of version 3 options on; serial_commit, or versions 1 and 2, turn it
 * off): the finish runs on the destination's own thread and this call returns after the commit
 * point, so the caller stages the next epoch meanwhile (its rows are safe: a crash from here on
 * is recovered by the next open); with defer_commit_point it returns before the commit point,
 * which the committer writes after completing the epoch's uploads (the rows are safe only once
 * the epoch is reported; a failure there, before the commit point, is returned as the finish's
 * is, and removes the epoch's staged files). The next
 * s3l_dest_commit first waits for that finish, so at most one epoch finishes while one stages;
 * call s3l_dest_sync after the last commit of a run to wait for its finish. info then reports
 * the epoch whose finish this call waited for (epoch 0 when none: the first commit), and that
 * finish's failure is this call's error; the epoch handed over now is reported by the next
 * s3l_dest_commit or by s3l_dest_sync. Serial: info reports the epoch committed by this call.
 * Errors: a lane's sticky failure; the failure of the epoch finishing before (pipelined: with
 * its message, e.g. "committing epoch N: ..."); S3L_EFENCED when a newer generation owns the
 * pipeline (nothing is committed by this writer then); S3L_EINVALID_CONFIG for state_json that
 * is not JSON; S3L_ECONFLICT for a marker that exists with other content; store errors. After any
 * failure, s3l_dest_abort is safe: it deletes only files that cannot be pending. A failure at or
 * after the commit point (the checkpoint write may have happened) leaves d refusing further
 * commits (S3L_ESTATE); reopening recovers the epoch if it was recorded.
 */
int s3l_dest_commit(struct s3l_dest *d, const char *state_json, struct s3l_dest_commit_info *info,
                    struct s3l_error *err);

/*
 * Waits until the epoch the last s3l_dest_commit handed over (pipelined) is finished, and reports
 * it in info (may be NULL; epoch 0 when there was nothing to report: serial, or already
 * reported). 0, or that finish's failure (reported once; d refuses further commits then, as
 * after any failure past a commit point): the store's errors, S3L_EFENCED, S3L_ECONFLICT for a
 * marker or schema record that exists with other content, S3L_ENOMEM, with the message
 * "committing epoch N: ...". A run is done only when this returned 0.
 */
int s3l_dest_sync(struct s3l_dest *d, struct s3l_dest_commit_info *info, struct s3l_error *err);

/*
 * Waits at most timeout_ms milliseconds for the epoch the last s3l_dest_commit handed over
 * (pipelined) to end; true when none is finishing any more (s3l_dest_sync then returns at once),
 * false when it still is; 0 looks without waiting. Returns no error: s3l_dest_sync reports the
 * epoch and its failure. For a caller that keeps showing progress while it waits (the runner's
 * settle, every 0.5 s), or that reads on rather than wait (the runner's interval). Call it
 * from the caller's thread only, as every other call of d.
 */
bool s3l_dest_wait_finish(struct s3l_dest *d, uint64_t timeout_ms);

/* Drops the epoch in progress: aborts open files, deletes what it staged. Nothing is committed;
 * the next epoch reuses the number. An epoch finishing (pipelined) is past its commit point: it
 * is waited for, not dropped. Best effort (failures leave garbage for s3l_dest_gc). */
void s3l_dest_abort(struct s3l_dest *d);

/*
 * Removes staged files of this pipeline that can never commit: those of generations below this
 * writer's that the checkpoint does not hold as pending; then, anywhere in the destination, the
 * hidden temp files of uploads whose writer died (local backend: no live process holds them and
 * they are older than this writer's claim minus 1 s; docs/internals/store.md "Stale temp
 * files"). *removed (may be NULL) gets the count of both. Waits first for an epoch finishing
 * and returns its failure, if any. Store errors.
 */
int s3l_dest_gc(struct s3l_dest *d, uint64_t *removed, struct s3l_error *err);

/*
 * The commit interval gc assumes for a checkpoint that records none (one written before the field
 * existed, issue 10 item 12): write's default --commit-interval, 60 s.
 */
#define S3L_DEST_GC_DEFAULT_INTERVAL_MS 60000u

/* What s3l_dest_gc_pipeline found and did. */
struct s3l_dest_gc_report {
    bool exists;            /* the pipeline has a checkpoint (without one nothing is staged) */
    bool claimed;           /* gc took the pipeline over: a new generation, a writer is fenced */
    bool forced;            /* claimed although it looked live (force) */
    bool live;              /* updated within twice its interval, or its interval is 0 */
    bool interval_recorded; /* false: the checkpoint records none; the default was assumed */
    uint64_t interval_ms;   /* the interval judged by (recorded or assumed); 0: by rows only */
    int64_t updated_ns;     /* the checkpoint's modification time on the store, ns since 1970 */
    int64_t now_ns;         /* gc's clock when it judged, ns since 1970 */
    uint64_t generation;    /* the generation the checkpoint holds after gc */
    bool recovered;         /* a pending epoch was committed (only when claimed) */
    uint64_t removed;       /* staged files and stale temp files removed */
};

/*
 * gc of one pipeline (`s3land gc`, issue 10 item 12). Reads its checkpoint and judges whether the
 * pipeline looks dead: its checkpoint (the store's modification time, against this host's clock)
 * is older than twice the commit interval recorded in it (S3L_DEST_GC_DEFAULT_INTERVAL_MS when it
 * records none; an interval of 0, commits by rows only, never looks dead). Dead, or with force:
 * claims it as a writer would (a new generation, so a writer still running is fenced at its next
 * commit with S3L_EFENCED), commits a pending epoch as recovery does, then removes every staged
 * file of a generation below the new one that is not pending, as s3l_dest_gc. Live without
 * force: claims nothing and changes no checkpoint; removes only staged files of generations below
 * the checkpoint's current one (their writers are fenced already), never a pending one. Both then
 * sweep stale temp files (s3l_dest_gc's rule). r is filled in every case that returns 0 (r->live
 * and the times say why gc did not claim). Errors: S3L_EFENCED when a writer changed the
 * checkpoint between gc's read and its claim (it is live: nothing removed); S3L_ECORRUPT for a
 * checkpoint that cannot be parsed (naming its key); S3L_EINVALID_CONFIG for a bad pipeline id;
 * the errors of recovery (s3l_dest_open) and the store's; S3L_ENOMEM.
 */
int s3l_dest_gc_pipeline(struct s3l_store *store, const char *pipeline, bool force,
                         struct s3l_dest_gc_report *r, struct s3l_error *err);

/* gc's age for check leftovers: a check removes its scratch area within seconds, so one older
 * than an hour was left by a check that was killed. */
#define S3L_DEST_CHECK_LEFTOVER_AGE_NS (3600ll * 1000000000ll)

/*
 * Removes what killed `s3land check` runs left under URL/_openetl/check/ (s3l_dest_scratch_prefix,
 * commit/gc.c): each scratch area (the objects under one _openetl/check/<id>/, or one object
 * directly under _openetl/check/) whose newest object was last modified more than min_age_ns
 * (ns) ago; an area with an object of unknown modification time is kept. Adds the number of
 * objects removed to *removed (may be NULL). Lists only under _openetl/check/. Errors: the
 * store's (list, remove_many: the first key that could not be removed); S3L_ENOMEM.
 */
int s3l_dest_gc_check_leftovers(struct s3l_store *s, int64_t min_age_ns, uint64_t *removed,
                                struct s3l_error *err);

/* What a pending multipart upload under a destination is to `gc --uploads` (issue 13 item 6). */
enum s3l_dest_upload_class {
    S3L_DEST_UPLOAD_HELD,   /* kept: a checkpoint or a live writer holds it, or keep lists it */
    S3L_DEST_UPLOAD_YOUNG,  /* kept: held by nothing, but younger than older_than */
    S3L_DEST_UPLOAD_ORPHAN, /* aborted by s3l_dest_uploads with abort */
};

/* One pending upload, judged. Valid during the callback only. */
struct s3l_dest_upload {
    const char *key;       /* relative to the destination's root */
    const char *upload_id;
    int64_t initiated_ns;  /* when it was started (store clock), ns since 1970; 0: unknown */
    const char *pipeline;  /* a Parquet staging upload of a pipeline with a checkpoint, or NULL */
    uint64_t generation;   /* with pipeline: the generation that staged it */
    enum s3l_dest_upload_class cls;
    const char *why;       /* one clause saying why it is held, kept or an orphan */
    bool aborted;          /* abort was asked and it is aborted (or was gone already) */
};

/* An upload the caller knows to be held by a checkpoint the library cannot read (s3land: a
 * `pipe` state file's committable). key: relative to the destination's root, or NULL for any
 * key with this upload_id; why: the clause shown (e.g. "held by pipe state FILE"). */
struct s3l_dest_upload_hold {
    const char *key;
    const char *upload_id;
    const char *why;
};

/* Options of s3l_dest_uploads. Zero-initialise. */
struct s3l_dest_uploads_options {
    int64_t older_than_ns;    /* an upload held by nothing is an orphan from this age on (ns) */
    const char *const *keep;  /* upload ids to keep whatever their age (engines' committables) */
    size_t n_keep;
    int64_t now_ns;           /* the clock ages are measured by (ns since 1970); 0: now */
    const char *pipeline;     /* non-NULL: only this pipeline's staging uploads are listed */
    const struct s3l_dest_upload_hold *holds; /* uploads held by the caller's checkpoints */
    size_t n_holds;
};

/* The default of older_than_ns that `s3land gc --uploads` gives: 7 days. */
#define S3L_DEST_UPLOADS_DEFAULT_AGE_NS (7LL * 24 * 3600 * 1000000000LL)

/*
 * Every pending multipart upload under the store root (ListMultipartUploads), judged against
 * every checkpoint of the destination, and given to cb (ctx, upload) in key order. The rule
 * (issue 13 item 6): a Parquet staging upload of generation G of a pipeline whose checkpoint
 * exists is HELD when the checkpoint's pending epoch holds its key or G is at or above the
 * checkpoint's generation (a writer that may be live), an ORPHAN when G is below (a killed or
 * fenced writer's); any other upload is HELD when o->keep lists its id, an o->holds entry names
 * its id (and its key, when the entry gives one; the upload's why is then the entry's), or a
 * checkpoint's text names it, an ORPHAN when it is at least o->older_than_ns old (by its
 * Initiated time against o->now_ns), else YOUNG (also when its age is unknown). With abort, each ORPHAN is aborted
 * before cb sees it (AbortMultipartUpload; one already gone counts as aborted). Run s3l_dest_gc
 * first to claim dead pipelines, so that a killed writer's current generation becomes older.
 * With o->pipeline, only the uploads under that pipeline's staging prefix are listed and judged
 * (`gc --uploads --pipeline-id`: no other upload is touched). A non-zero cb result stops and is
 * returned. Errors: S3L_EUNSUPPORTED when the store has no
 * multipart uploads (file://); S3L_EPERMISSION_DENIED when the listing is refused (no
 * s3:ListBucketMultipartUploads: nothing is aborted then) or an abort is; S3L_ECORRUPT for a
 * checkpoint that cannot be parsed; S3L_EINVALID_CONFIG for an o->pipeline that is not a
 * pipeline id; the store's errors; S3L_ENOMEM.
 */
int s3l_dest_uploads(struct s3l_store *s, const struct s3l_dest_uploads_options *o, bool abort,
                     int (*cb)(void *ctx, const struct s3l_dest_upload *u), void *ctx,
                     struct s3l_error *err);

/* Frees d (aborting an epoch in progress, after waiting for one finishing: call s3l_dest_sync
 * first to learn whether it finished). NULL is a no-op. */
void s3l_dest_free(struct s3l_dest *d);

/* --- Reading a destination (ls, inspect, schema): no pipeline needed. The callbacks below run
 * after the store's listing is complete, so they may call the store (e.g. read a footer). --- */

/* One file a marker lists. key: relative to the store root. */
struct s3l_dest_file {
    const char *key;
    uint64_t size;      /* bytes */
    uint64_t rows;      /* data rows, or dead-lettered records */
    const char *sha256; /* lowercase hex */
};

/* One marker: a committed (stream, epoch). Valid during the callback only. */
struct s3l_dest_marker {
    const char *key;
    const char *pipeline;
    const char *table;
    uint64_t epoch;
    uint64_t generation;
    uint64_t rows; /* total data rows */
    size_t n_files;
    const struct s3l_dest_file *files;
    size_t n_deadletter;
    const struct s3l_dest_file *deadletter;
};

/* Calls cb(ctx, T) for every table with a schema record, in byte order. cb's non-zero result
 * stops the listing and is returned. Store errors. */
int s3l_dest_list_tables(struct s3l_store *s, int (*cb)(void *ctx, const char *table), void *ctx,
                         struct s3l_error *err);

/*
 * The tables pipeline writes or wrote: those with a marker of it, those its checkpoint's pending
 * epoch holds, and those it has files staged for (a run killed before its commit point). cb(ctx,
 * T) once per table, in byte order, after every listing ended (so cb may call the store); its
 * non-zero result stops and is returned. For messages (gc names pipelines by table): reads the
 * schema records' listing, each table's marker listing, the checkpoint and the pipeline's staging
 * listing. The store's errors; S3L_ECORRUPT for a checkpoint that cannot be parsed; S3L_ENOMEM.
 */
int s3l_dest_pipeline_tables(struct s3l_store *s, const char *pipeline,
                             int (*cb)(void *ctx, const char *table), void *ctx,
                             struct s3l_error *err);

/* Calls cb for every marker of table T, in key order (pipeline, then epoch). S3L_ECORRUPT for a
 * marker that cannot be parsed (naming its key); store errors. */
int s3l_dest_list_markers(struct s3l_store *s, const char *table,
                          int (*cb)(void *ctx, const struct s3l_dest_marker *m), void *ctx,
                          struct s3l_error *err);

/*
 * Calls cb for every data file directly under URL/T/ (not in sub-tables), in key order, with
 * committed = whether a marker lists it. committed_only: skip the others (files of an epoch
 * whose marker is not written yet). Errors as s3l_dest_list_markers.
 */
int s3l_dest_list_files(struct s3l_store *s, const char *table, bool committed_only,
                        int (*cb)(void *ctx, const struct s3l_object_info *info, bool committed),
                        void *ctx, struct s3l_error *err);

/*
 * The schema record of T (a table path, as s3l_dest_table_path makes it) as JSON text (*json:
 * s3l_free, NUL-terminated, *len bytes), read through d, which keeps what it read (the text and
 * its ETag, or that there is none): the next s3l_dest_stream of T merges with it instead of
 * reading it again (one GET of the record per run; the record changes only through an epoch of
 * this writer, or another writer's, whose race the conditional write at finish settles).
 * S3L_ENOT_FOUND when T has no record; store errors; S3L_ENOMEM. Waits first for an epoch
 * finishing, as s3l_dest_stream.
 */
int s3l_dest_read_record(struct s3l_dest *d, const char *table, char **json, size_t *len,
                         struct s3l_error *err);

/* The schema record of T as JSON text (*json: s3l_free, NUL-terminated). S3L_ENOT_FOUND. */
int s3l_dest_read_schema(struct s3l_store *s, const char *table, char **json, size_t *len,
                         struct s3l_error *err);

/*
 * Footers of a destination's files where they lie (commit/footer_store.c; the footer reader of
 * include/s3l/pq_footer.h reads from a byte source only). Where s3l_pq_read_store reads: an
 * object of a store (borrowed, as key).
 */
struct s3l_pq_store_src {
    struct s3l_store *store;
    const char *key;
};

/* A read function over a store object (ctx: a struct s3l_pq_store_src *), by ranged GETs; for
 * s3l_pq_footer_read and the page index readers. The store's errors; S3L_EIO when the object
 * returns fewer bytes than asked (it changed meanwhile). */
int s3l_pq_read_store(void *ctx, uint64_t off, void *buf, size_t len, struct s3l_error *err);

/*
 * As s3l_pq_footer_read, for object key of store: one stat for the size, then ranged GETs (one
 * for an object under 64 KiB). Messages name the key unless opts->name is set. The store's errors
 * (S3L_ENOT_FOUND for a missing key) and those of s3l_pq_footer_read.
 */
int s3l_pq_footer_read_store(struct s3l_store *store, const char *key,
                             const struct s3l_pq_footer_options *opts, struct s3l_pq_footer **out,
                             struct s3l_error *err);

#endif
