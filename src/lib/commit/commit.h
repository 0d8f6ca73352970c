/*
 * commit: internal header of the exactly-once table destination: the checkpoint and marker
 * documents, the pluggable file format (Parquet in production, a trivial one in tests), and the
 * destination's internals shared by its files. docs/internals/commit.md is the design note.
 */
#ifndef S3L_COMMIT_H
#define S3L_COMMIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h> /* snprintf in most of commit/ (it came with openssl/evp.h before) */

#include <pthread.h>

#include "s3l/destination.h"
#include "s3l/parquet.h"
#include "s3l/row.h"
#include "s3l/schema.h"
#include "s3l/store.h"
#include "util/util.h"

/* Cap on a checkpoint, marker or schema record read back. */
#define S3L__DOC_MAX (64u << 20)

/*
 * The storage layout (layout.c): every key under URL/_openetl/ and URL/T/ (T = the table path of
 * s3l_dest_table_path) is built and parsed by these, and by nothing outside commit/. Key
 * builders return a new string (s3l_free) or NULL when out of memory.
 */
/* printf into a new string (s3l_free); NULL when out of memory. */
char *s3l__key_fmt(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;
/* A pipeline id: 1 to 64 of [A-Za-z0-9._-], not "." or "..". S3L_EINVALID_CONFIG naming it. */
int s3l__pipeline_id_check(const char *pipeline, struct s3l_error *err);
/*
 * The name of data file `file` of `lane` in epoch/generation (lane 0 has no lane field) and of
 * the dead-letter file of an epoch, into buf (cap bytes, NUL included); S3L_ETOO_LARGE when
 * they do not fit.
 */
int s3l__name_data(char *buf, size_t cap, const char *pipeline, uint64_t epoch, uint64_t gen,
                   unsigned lane, unsigned file, const char *ext);
int s3l__name_deadletter(char *buf, size_t cap, const char *pipeline, uint64_t epoch, uint64_t gen);
/* "T/": the table's directory, where final data files lie. */
char *s3l__key_table_prefix(const char *table);
/* "T/<name>": a data file's final key. */
char *s3l__key_final(const char *table, const char *name);
/* "_openetl/staging/<pipeline>/": all a pipeline stages, every generation. */
char *s3l__key_staging_prefix(const char *pipeline);
/* "_openetl/staging/<pipeline>/g<gen %020>/T/<name>": a staged file. */
char *s3l__key_staged(const char *pipeline, uint64_t gen, const char *table, const char *name);
/* The generation of a key under pipeline's staging prefix; false for any other key. */
bool s3l__key_staged_generation(const char *key, const char *pipeline, uint64_t *gen);
/* The pipeline (into pipeline, cap bytes with the NUL) and generation of any staged key; false
 * for any other key or an id that does not fit or is not a pipeline id. */
bool s3l__key_staged_parse(const char *key, char *pipeline, size_t cap, uint64_t *gen);
/* The table T of a key staged by pipeline: 1 and *table (s3l_free); 0 for another key; ENOMEM. */
int s3l__key_staged_table(const char *key, const char *pipeline, char **table);
/* "_openetl/deadletter/T/<name>": a dead-letter file's final key. */
char *s3l__key_deadletter(const char *table, const char *name);
/* "_openetl/markers/T/<pipeline>-<epoch %020>.json" and its prefix "_openetl/markers/T/". */
char *s3l__key_marker(const char *table, const char *pipeline, uint64_t epoch);
char *s3l__key_markers_prefix(const char *table);
/*
 * A marker key of table T (not of a table below it): its pipeline id (into pipeline, cap bytes
 * with the NUL) and epoch; false for any other key or an id that does not fit.
 */
bool s3l__key_marker_parse(const char *key, const char *table, char *pipeline, size_t cap,
                           uint64_t *epoch);
/* "_openetl/schemas/T.json"; the prefix of all records; "_openetl/schemas/T/" (tables in T). */
char *s3l__key_schema(const char *table);
const char *s3l__key_schemas_prefix(void);
char *s3l__key_schemas_under(const char *table);
/* The full URL of key on s (s3l_store_url, "/", key), for messages that name an object. NULL when
 * out of memory. */
char *s3l__key_url(struct s3l_store *s, const char *key);
/* A schema record key: 1 and its table T in *table (s3l_free); 0 for any other key; S3L_ENOMEM. */
int s3l__key_schema_parse(const char *key, char **table);
/* "_openetl/checkpoints/<pipeline>.json" and the prefix of all checkpoints. */
char *s3l__key_checkpoint(const char *pipeline);
const char *s3l__key_checkpoints_prefix(void);
/* The pipeline id of a checkpoint key (into pipeline, cap bytes with the NUL); false otherwise. */
bool s3l__key_checkpoint_parse(const char *key, char *pipeline, size_t cap);

/*
 * How files and schema records are encoded: the file format vtable ("codec" means compression
 * only: src/lib/codec). A writer streams one file into
 * sink; the destination closes the file when size_estimate reaches file_size.
 * open: a writer of schema into sink (S3L_EINVALID_CONFIG, S3L_ENOMEM). row_sink: its rows.
 * rows: rows committed. size_estimate: bytes the file would have if closed now. close: writes the
 * rest (footer) into the sink. free: frees a writer, closed or not.
 * schema_merge: record (len bytes, NULL when there is none yet) merged with schema: *out is the
 * new record text (s3l_free) or NULL when the record already covers schema; S3L_ESCHEMA_DRIFT
 * naming table, column, old and new type and record_url (the record's full URL, to remove it)
 * unless allow; S3L_ECORRUPT for a bad record.
 * record_union: (optional) the record `current` (clen bytes, as found in the store) with every
 * column of `carried` (the record an epoch carries, alen bytes) that it lacks appended, and a
 * struct both have grown by the nested fields carried adds; a column both have otherwise keeps
 * current's type. *out a new record text (s3l_free) or NULL when current already
 * has every column; S3L_ECORRUPT naming record_url for an unreadable record; S3L_ENOMEM.
 * destroy: frees ctx (may be NULL).
 */
struct s3l__dest_format {
    const char *ext; /* ".parquet" */
    void *ctx;
    int (*open)(void *ctx, const struct s3l_schema *schema, struct s3l_pq_sink sink, void **w,
                struct s3l_error *err);
    struct s3l_row_sink (*row_sink)(void *w);
    uint64_t (*rows)(void *w);
    uint64_t (*size_estimate)(void *w);
    int (*close)(void *w, struct s3l_error *err);
    void (*free)(void *w);
    int (*schema_merge)(void *ctx, const char *table, const char *record_url, const char *record,
                        size_t len, const struct s3l_schema *schema, bool allow, char **out,
                        struct s3l_error *err);
    void (*destroy)(void *ctx);
    int (*record_union)(void *ctx, const char *record_url, const char *current, size_t clen,
                        const char *carried, size_t alen, char **out, struct s3l_error *err);
    /* Optional (NULL: the lanes take rows one by one): rows [first, n_rows) of a column batch
     * (include/s3l/row.h) into w, stopping after the row at which size_estimate reaches
     * size_limit; *done: rows written. As s3l_pq_write_columns_until (include/s3l/parquet.h). */
    int (*put_columns)(void *w, size_t n_rows, const struct s3l_column_batch *cols, size_t first,
                       uint64_t size_limit, size_t *done, struct s3l_error *err);
};

/*
 * s3l_dest_open with an explicit file format (copied; the destination calls format->destroy(ctx)
 * when it is freed, also on failure). Tests use it with a trivial format.
 */
int s3l__dest_open_format(struct s3l_store *store, const struct s3l_dest_options *o,
                          const struct s3l__dest_format *format, struct s3l_dest **out,
                          struct s3l_error *err);

/* The Parquet format (format_parquet.c): writers share one budget of `memory` bytes. */
int s3l__format_parquet(const struct s3l_pq_options *opts, size_t memory,
                        struct s3l__dest_format *out, struct s3l_error *err);

/* One staged file of a pending epoch. */
struct s3l__ckpt_file {
    char *table;  /* T */
    char *staged; /* staged key */
    char *final;  /* final key */
    uint64_t size;
    uint64_t rows;
    char sha256[65];
    bool deadletter;
};

/* A schema record a pending epoch carries: written to _openetl/schemas/T.json before its copies. */
struct s3l__ckpt_schema {
    char *table;  /* T */
    char *record; /* the record as compact JSON text */
    char *etag;   /* the ETag of the record it was merged with; NULL when there was none */
    /* The stream's schema (a copy: the epoch's files hold these columns) when this writer
     * carries the record into its commit point; NULL in a checkpoint read back. Not encoded. */
    struct s3l_schema *schema;
};

/* The checkpoint document (URL/_openetl/checkpoints/<pipeline>.json). */
struct s3l__ckpt {
    char *pipeline;
    uint64_t generation;
    uint64_t committed_epoch;
    bool has_pending;
    uint64_t pending_epoch;
    uint64_t pending_generation;
    size_t n_files;
    struct s3l__ckpt_file *files;
    size_t n_schemas; /* the pending epoch's "schemas" (optional: absent when none) */
    struct s3l__ckpt_schema *schemas;
    char *state; /* the runner's JSON value as compact text, or NULL */
    /* "commit_interval_ms" (optional, issue 10 item 12): the commit interval of the writer that
     * claimed the generation, for gc's liveness rule; absent in checkpoints written before it. */
    bool has_interval;
    uint64_t commit_interval_ms; /* 0: that writer commits by rows only */
    /* "writer" (optional, last): a random token (32 hex digits) the writer that claimed the
     * generation draws at its claim, so that its writes are its own bytes and no other writer's
     * (s3l__ckpt_write's lost answer); "" in checkpoints written before it. */
    char writer[33];
    /* Not serialised: the version read or written last, and its modification time on the store
     * (ns since the Unix epoch; 0 when unknown or never read). */
    bool exists;
    char etag[132];
    int64_t mtime_ns;
};

void s3l__ckpt_cleanup(struct s3l__ckpt *c);
void s3l__ckpt_clear_pending(struct s3l__ckpt *c);
/* Frees n carried records (their fields) and the array. NULL is a no-op. */
void s3l__ckpt_schemas_free(struct s3l__ckpt_schema *schemas, size_t n);
/* Serialises c (compact JSON, keys in a fixed order). S3L_EINVALID_CONFIG for a bad state. */
int s3l__ckpt_encode(const struct s3l__ckpt *c, char **out, size_t *len, struct s3l_error *err);
/* Parses a checkpoint document; key names it in errors (S3L_ECORRUPT). */
int s3l__ckpt_decode(const char *text, size_t len, const char *key, struct s3l__ckpt *c,
                     struct s3l_error *err);
/* Reads the checkpoint of pipeline into *c (exists = false, zeroes when there is none). */
int s3l__ckpt_read(struct s3l_store *s, const char *pipeline, struct s3l__ckpt *c,
                   struct s3l_error *err);
/*
 * Reads only what the runner and `recover`/`gc` look at in pipeline's checkpoint, without taking
 * it over and without requiring the rest of the document: *state the runner's JSON value as
 * compact text (NULL when null or absent; s3l_free), *pending whether "pending" is non-null,
 * *committed_epoch (0 when absent). Each out pointer may be NULL and is left as the caller set
 * it when the checkpoint does not exist (success). S3L_ECORRUPT naming the key when it is not a
 * JSON object; the store's errors; S3L_ENOMEM.
 */
int s3l__ckpt_peek(struct s3l_store *s, const char *pipeline, char **state, bool *pending,
                   uint64_t *committed_epoch, struct s3l_error *err);
/*
 * Writes c conditionally on the version c->etag (put-if-absent when !c->exists) and updates
 * c->etag. When the condition fails, re-reads: a checkpoint holding these very bytes was written
 * by an attempt of this put whose answer was lost (the client's retry failed the condition on
 * it), which is success; a higher generation than `mine` gives S3L_EFENCED, anything else
 * S3L_ECONFLICT. The bytes are this writer's alone because c->writer holds the token it drew
 * at its claim (s3l__ckpt_new_writer): two writers that opened the same checkpoint claim the same
 * generation, but not with the same bytes, so a claim whose answer was lost is taken as written
 * and the other writer's is not (it is S3L_ECONFLICT: claim.c fences that writer).
 */
int s3l__ckpt_write(struct s3l_store *s, struct s3l__ckpt *c, uint64_t mine, struct s3l_error *err);
/* Draws c->writer: 16 random bytes (OpenSSL's RAND_bytes) as hex. S3L_EINTERNAL when the
 * generator fails. */
int s3l__ckpt_new_writer(struct s3l__ckpt *c, struct s3l_error *err);

/*
 * The marker document of table T for the pending epoch of c: the pending files of T in order,
 * data then dead-letter. Deterministic bytes for the same input. S3L_ENOMEM.
 */
int s3l__marker_encode(const struct s3l__ckpt *c, const char *table, char **out, size_t *len);
/* The check of a marker whose put-if-absent failed (S3L_EPRECONDITION_FAILED: it exists): 0 when
 * its bytes are doc's, S3L_ECONFLICT naming key when not, or the read's error. */
int s3l__marker_check(struct s3l_store *s, const char *key, const char *doc, size_t len,
                      struct s3l_error *err);
/* Parses a marker and calls cb with it (inspect.c). S3L_ECORRUPT naming key. */
int s3l__marker_decode(const char *text, size_t len, const char *key,
                       int (*cb)(void *ctx, const struct s3l_dest_marker *m), void *ctx,
                       struct s3l_error *err);

/*
 * The markers of table T by name only (no marker is read): cb gets each one's pipeline id and
 * epoch, in key order, after the listing ended (so cb may call the store). A non-zero cb result
 * stops and is returned. The store's listing errors; S3L_ENOMEM.
 */
int s3l__marker_names(struct s3l_store *s, const char *table,
                      int (*cb)(void *ctx, const char *pipeline, uint64_t epoch), void *ctx,
                      struct s3l_error *err);

/*
 * The pipeline ids that have a checkpoint in store s (inspect.c): cb gets each, in key order;
 * a non-zero cb result stops the listing and is returned. The store's listing errors.
 */
int s3l__ckpt_list(struct s3l_store *s, int (*cb)(void *ctx, const char *id), void *ctx,
                   struct s3l_error *err);

/*
 * The stores of a run (access.c): the destination's and an object prefix's, reached by the
 * runner through these only. struct s3l__store_access holds the run's access options as the
 * pipeline's options give them (include/s3l/pipeline.h: endpoint, region, path_style, the S3
 * backend's options s3, credentials, sse, sse_kms_key_id, storage_class), all borrowed.
 */
struct s3l__store_access {
    const char *endpoint;
    const char *region;
    int path_style;
    const void *s3;
    struct s3l_creds_provider *credentials;
    const char *sse;
    const char *sse_kms_key_id;
    const char *storage_class;
};
/* Opens the store at url as s3l_store_open does (create: a missing file:// root is made), with
 * a's options; its errors. *out is freed with s3l__store_access_free. */
int s3l__store_access_open(const struct s3l__store_access *a, const char *url, bool create,
                           struct s3l_store **out, struct s3l_error *err);
/* What the store cost since it was opened (s3l_store_counts). */
void s3l__store_access_counts(struct s3l_store *s, struct s3l_store_counts *out);
/* Bytes written to the store since it was opened (s3l_store_bytes_written). */
uint64_t s3l__store_access_bytes_written(const struct s3l_store *s);
/* Frees a store s3l__store_access_open opened; NULL is a no-op. */
void s3l__store_access_free(struct s3l_store *s);

/*
 * read_ahead.c: the reads of a start sent together through s3l_store_read_ahead (issue 14 item
 * 2), so that the calls that make them later are answered from what came back. _start: the
 * checkpoint of pipeline, the markers' listing of each of tables[0..n) (the landed-elsewhere
 * check's) and the stream reads of each of streams[0..n_streams), before the check and
 * s3l_dest_open: one round trip. _stream: table T's schema record, the listing of the records
 * under T/ and, for NS/T, NS's record (s3l_dest_stream's and s3l_dest_read_record's reads), those
 * not kept already. Never fail: what was not read ahead is read by its call.
 */
void s3l__dest_read_ahead_start(struct s3l_store *s, const char *pipeline,
                                const char *const *tables, size_t n, const char *const *streams,
                                size_t n_streams);
void s3l__dest_read_ahead_stream(struct s3l_store *s, const char *table);

/* Protocol step names announced through s3l_store_event. */
#define S3L__EV_AFTER_STAGE      "after-stage"
#define S3L__EV_AFTER_PREPARE    "after-prepare"
#define S3L__EV_AFTER_CHECKPOINT "after-checkpoint"
#define S3L__EV_BETWEEN_COPIES   "between-copies"
#define S3L__EV_BEFORE_MARKER    "before-marker"
#define S3L__EV_BETWEEN_MARKERS  "between-markers"
#define S3L__EV_AFTER_MARKER     "after-marker"
#define S3L__EV_AFTER_COMMIT     "after-commit"
#define S3L__EV_IN_GC            "in-gc"

/*
 * The destination's internals, shared by its files: dest.c (open, commit, abort, free), claim.c
 * (the generation claim and fencing), lane.c (staging with SHA-256, the row-sink forwarder),
 * stream.c (streams, schema records, dead letters), gc.c (garbage and stale temp files).
 */
/* A file being written into staging: the upload, its running SHA-256 and size (lane.c). */
struct s3l__staging {
    struct s3l_upload *up;
    struct s3l__md sha;
    uint64_t bytes;
    char *staged;
    char *final;
};

/* A file closed by a commit, its upload not yet published (lane.c, s3l__staging_publish). */
struct s3l__sealed {
    struct s3l_upload *up;
    const char *staged; /* its staged key (the staged list's, for messages) */
};

/* One writer of a stream: its open file and its sticky failure (lane.c). */
struct s3l__lane {
    struct s3l_dest_stream *st;
    unsigned index;
    unsigned next_file;
    void *w; /* the format's writer of the open file, or NULL */
    struct s3l_row_sink inner;
    struct s3l__staging f;
    unsigned rows_since_progress; /* rows since the upload of f was last let move on */
    int sticky;
    struct s3l_error err;
};

/* A table being written (stream.c): its lanes and its dead-letter file (under dl_mu). */
struct s3l_dest_stream {
    struct s3l_dest *d;
    char *table;
    const struct s3l_schema *schema;
    /* The record merged at open (the format's schema_merge), not yet written: NULL when the
     * record read already covered schema. Carried by the next epoch with data rows of this stream
     * into the checkpoint and written when that epoch finishes (protocol.c), never before. */
    char *pending_record;
    char *record_etag; /* the ETag of the record pending_record was merged with (NULL: none) */
    struct s3l__lane *lanes;
    pthread_mutex_t dl_mu;
    struct s3l__staging dl;
    uint64_t dl_rows;
    int dl_sticky;
};

/* Staged files whose deletion failed after their epoch was recorded committed: garbage (the
 * table is complete) that gc removes once deletes succeed. */
struct s3l__left {
    uint64_t n;            /* files whose deletion failed (all of a batch that failed) */
    struct s3l_error why;  /* the store's answer to the first such deletion */
};

/* The destination (dest.c); shared state under mu: the claim and the staged list. */
struct s3l_dest {
    struct s3l_store *store;
    struct s3l__dest_format format;
    char *pipeline;
    uint64_t file_size;
    unsigned lanes;
    bool allow_type_changes;
    uint64_t generation; /* this writer's: the checkpoint's at open + 1 */
    bool claimed;        /* the checkpoint holds this generation (step 0 done) */
    /* The claim started in the background by a lane's first row (claim.c), under its own mu:
     * joined (and its result kept) by the first s3l__dest_claim_wait. */
    struct {
        pthread_mutex_t mu;
        pthread_t th;
        bool started, joined;
        int rc;
        struct s3l_error err;
    } claim_job;
    int64_t claim_ns;    /* wall clock just before the claim was written (ns since epoch) */
    int broken;          /* a commit failed at or after its commit point: only reopening recovers */
    uint64_t recovered;  /* the epoch open found pending and committed, or 0 */
    /* Staged files whose deletion failed since open (recovery's included), and the first
     * failure: written by the finish (the committer's thread while an epoch finishes); why is
     * written once, before the join that reports it, and never again. */
    struct s3l__left left;
    struct s3l__ckpt ck;
    struct s3l_dest_stream **streams;
    size_t n_streams;
    pthread_mutex_t mu;
    struct s3l__ckpt_file *staged;
    size_t n_staged, cap_staged;
    /* The uploads of the staged files the commit closed (prepare, s3l_dest_lane_close), not yet
     * published: the commit publishes them first (on the committer's thread when pipelined). */
    struct s3l__sealed *sealed;
    size_t n_sealed, cap_sealed;
    /* The schema record s3l_dest_read_record read last (issue 14 item 2: read once, passed on):
     * the next s3l_dest_stream of that table merges with it instead of reading it again, and
     * drops it. table NULL: none held. text NULL: the table had no record. */
    struct {
        char *table, *text, *etag;
        size_t len;
    } memo;
    /* The store's counts at the end of open, of the last stream added or of the last commit
     * (its handoff, when pipelined), and the committer's tally then: an epoch's requests on the
     * stager's side are counted from there (struct s3l_dest_commit_info). Taken only while no
     * finish runs, so that the tally's difference is exactly the committer's share. */
    struct s3l_store_counts mark, tally_mark;
    /* The epoch being staged: lanes and dead letters name their files with it (ck belongs to
     * the committer while an epoch finishes). ck.committed_epoch + 1 whenever nothing finishes. */
    uint64_t stage_epoch;
    bool serial; /* s3l_dest_options.serial_commit (or version < 3): each commit finishes
                  * before it returns */
    bool defer;  /* s3l_dest_options.defer_commit_point: the committer publishes the files the
                  * commit closed and writes the commit point (only when not serial) */
    /* Pipelined commit (docs/internals/commit.md): the committer, one thread per finishing
     * epoch, which owns ck (and the epoch's files in it) from the handoff to the join. */
    struct {
        pthread_t th;
        bool running; /* started and not joined */
        int rc;       /* its finish's result, read after the join */
        bool with_point;            /* the committer publishes and writes the commit point */
        /* Set by the committer as its last step (under mu, cv signalled): joining will not
         * wait (s3l_dest_wait_finish). */
        bool ended;
        pthread_mutex_t mu;
        pthread_cond_t cv;
        struct s3l__sealed *sealed; /* the epoch's uploads to publish first (owned) */
        size_t n_sealed;
        struct s3l_error err;
        struct s3l_dest_commit_info info; /* the epoch: counts, requests of its staging */
        struct s3l_store_counts tally_at; /* the tally when it started */
    } job;
    /* The uploads a deferred commit sealed while the epoch before still finishes: completed on
     * a thread of their own (dest.c, early_publish) while s3l_dest_commit waits for that finish,
     * joined before it returns (commit.md "Pipelined commit"). */
    struct {
        pthread_t th;
        struct s3l__sealed *sealed; /* owned */
        size_t n_sealed;
        int rc;
        struct s3l_error err;
    } pub;
    struct s3l__tally tally; /* the committer's requests (owner: the store's counts owner) */
    bool has_done;           /* an epoch finished by the committer, not yet reported */
    struct s3l_dest_commit_info done;
    int failed; /* a finish that failed, its error not yet returned to the caller */
    struct s3l_error failed_err;
};

/*
 * Waits for the epoch the committer finishes, if any (pipelined commit). Its success leaves its
 * info for the next s3l_dest_commit or s3l_dest_sync to report; its failure makes d broken and
 * is kept (failed, failed_err) until a call that can return it does (s3l__dest_join_err).
 */
void s3l__dest_join(struct s3l_dest *d);
/* Whether the files a commit closes are sealed (defer_commit_point, pipelined): prepare and
 * s3l_dest_lane_close leave their uploads to the committer. */
bool s3l__dest_seals(const struct s3l_dest *d);
/* s3l__dest_join, then a kept failure is returned (once) with its message in err. */
int s3l__dest_join_err(struct s3l_dest *d, struct s3l_error *err);

/*
 * Opens d for o->pipeline_id with format (destroyed with d, also on failure) and reads the
 * checkpoint, without committing a pending epoch: gc judges the pipeline's liveness first
 * (gc.c). s3l__dest_open_format is this followed by s3l__dest_recover. Errors as s3l_dest_open
 * before recovery.
 */
int s3l__dest_open_lazy(struct s3l_store *store, const struct s3l_dest_options *o,
                        const struct s3l__dest_format *format, struct s3l_dest **out,
                        struct s3l_error *err);
/* Step 5 for a lazily opened d: claims and commits the pending epoch, if any, then sweeps this
 * pipeline's staging temp files. Errors as s3l_dest_open's recovery. */
int s3l__dest_recover(struct s3l_dest *d, struct s3l_error *err);
/* As s3l_dest_open with the Parquet format, recovering the pending epoch only when `recover`
 * (format_parquet.c). */
int s3l__dest_open_parquet(struct s3l_store *store, const struct s3l_dest_options *o, bool recover,
                           struct s3l_dest **out, struct s3l_error *err);

/*
 * Step 0 (claim.c): writes this writer's generation into the checkpoint, once, conditionally on
 * the version read at open. S3L_EFENCED when another writer took the checkpoint since; the
 * checkpoint write's errors.
 */
int s3l__dest_claim(struct s3l_dest *d, struct s3l_error *err);
/* The claim in the background (claim.c), from a lane's first row: started on a thread of its own
 * unless done or started already (no thread: done here). 0 while it runs; its failure once it was
 * waited for. s3l__dest_claim_wait joins it (0 when none ran) and returns its result, its message
 * in err, every time it is asked; s3l__dest_claim waits for it first. Thread-safe (lanes). */
int s3l__dest_claim_begin(struct s3l_dest *d, struct s3l_error *err);
int s3l__dest_claim_wait(struct s3l_dest *d, struct s3l_error *err);

/* Staging (lane.c): begin an upload of `name` of table under the staging prefix (a dead-letter
 * file when deadletter: its final key is under _openetl/deadletter/); write hashes and counts;
 * cleanup aborts and frees (a no-op on a zeroed f); publish adds it, with its size, rows and
 * SHA-256, to d's staged list (taking its keys), published now, or sealed when seal: its upload
 * goes to d->sealed, for the commit to publish before its commit point (commit.md "Pipelined
 * commit": the files closed by a commit are published by its committer). Store errors;
 * S3L_ENOMEM. */
int s3l__staging_begin(struct s3l_dest *d, struct s3l__staging *f, const char *table,
                       const char *name, bool deadletter, struct s3l_error *err);
int s3l__staging_write(struct s3l__staging *f, const void *data, size_t len, struct s3l_error *err);
void s3l__staging_cleanup(struct s3l__staging *f);
int s3l__staging_publish(struct s3l_dest *d, struct s3l__staging *f, const char *table,
                         uint64_t rows, bool deadletter, bool seal, struct s3l_error *err);
/* Publishes n sealed uploads in order (event after-stage after each), taking them: after a
 * failure the rest are aborted. The first failure, its message naming the staged key. */
int s3l__staging_publish_sealed(struct s3l_dest *d, struct s3l__sealed *sealed, size_t n,
                                struct s3l_error *err);
/* Aborts d's sealed uploads (an epoch dropped before its commit). */
void s3l__staging_abort_sealed(struct s3l_dest *d);

/* Lanes (lane.c): close and stage the open file (none staged when all its rows were refused),
 * sealed when seal (s3l__staging_publish); drop the open file unstaged; copy the lane's sticky
 * error into err and return its code. */
int s3l__lane_close_file(struct s3l__lane *l, bool seal, struct s3l_error *err);
void s3l__lane_drop(struct s3l__lane *l);
int s3l__lane_sticky_out(struct s3l__lane *l, struct s3l_error *err);

/* Frees a stream, its lanes' open files and its dead-letter upload dropped (stream.c). */
void s3l__stream_free(struct s3l_dest_stream *st);
/* Drops the schema record s3l_dest_read_record kept (stream.c). */
void s3l__dest_memo_free(struct s3l_dest *d);
/*
 * Before the commit point of the epoch pending in d->ck (dest.c record_point): reads again, at
 * once and fresh (not from answers read ahead), each schema record the epoch carries. A record
 * another writer changed since this writer merged with it at open is merged with the carried one
 * through the format's schema_merge, as the open would have: a column recorded there with
 * another type than this epoch's files hold is S3L_ESCHEMA_DRIFT (unless allow_type_changes). It
 * narrows, not closes, the race of two writers that opened a table before either recorded it:
 * what is left is the time between this read and the finish's conditional write of the record
 * (the commit point and one put), which writers started together often fall in (commit.md
 * "Schema records" has the measured rates). Other changes (columns added, the record removed) are left to the
 * finish's union. Also the store's failure to read, S3L_ECORRUPT for a record that is not a
 * schema, S3L_ENOMEM; err says the epoch is not committed. Costs one GetObject per carried
 * record (S3: all in one round trip), only in epochs that carry one (stream.c).
 */
int s3l__dest_records_recheck(struct s3l_dest *d, struct s3l_error *err);

/*
 * Removes hidden temp files of dead uploads under prefix changed before since minus a grace
 * (gc.c; docs/internals/store.md "Stale temp files"); *n (may be NULL) counts them.
 */
int s3l__dest_sweep_temps(struct s3l_dest *d, const char *prefix, int64_t since, uint64_t *n,
                          struct s3l_error *err);

/*
 * Commits the pending epoch recorded in c: its schema records (conditional writes, re-read and
 * re-merged through f->record_union on a race), then copies, markers, checkpoint, staged deletes.
 * Idempotent: run again on the same c (recovery) it writes the same bytes or finds them there.
 * recovering: c was found pending at open (a marker may exist: each stream's is looked at before
 * its copies); false right after this writer's commit point (no marker can exist: none is asked
 * for). A deletion of the staged files that fails is not the finish's failure: left (may be
 * NULL) counts the files and keeps the first answer (left->n 0 on entry: its why is set). The
 * store's errors; S3L_ECONFLICT when a record kept changing under it; S3L_ENOMEM.
 */
int s3l__finish_pending(struct s3l_store *s, const struct s3l__dest_format *f, struct s3l__ckpt *c,
                        uint64_t mine, bool recovering, struct s3l__left *left,
                        struct s3l_error *err);

#endif
