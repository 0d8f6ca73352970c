/*
 * commit: internal header of the exactly-once table destination: the checkpoint and marker
 * documents, the pluggable file codec (Parquet in production, a trivial one in tests), and the
 * destination's internals shared by its files. docs/internals/commit.md is the design note.
 */
#ifndef S3L_COMMIT_H
#define S3L_COMMIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "s3l/destination.h"
#include "s3l/parquet.h"
#include "s3l/row.h"
#include "s3l/schema.h"
#include "s3l/sys/store.h"

/* Cap on a checkpoint, marker or schema record read back. */
#define S3L__DOC_MAX (64u << 20)

/*
 * How files and schema records are encoded: the FORMAT vtable. A writer streams one file into
 * sink; the destination closes the file when size_estimate reaches file_size.
 * open: a writer of schema into sink (S3L_EINVALID_CONFIG, S3L_ENOMEM). row_sink: its rows.
 * rows: rows committed. size_estimate: bytes the file would have if closed now. close: writes the
 * rest (footer) into the sink. free: frees a writer, closed or not.
 * schema_merge: record (len bytes, NULL when there is none yet) merged with schema: *out is the
 * new record text (s3l_free) or NULL when the record already covers schema; S3L_ESCHEMA_DRIFT
 * naming table, column, old and new type and record_url (the record's full URL, to remove it)
 * unless allow; S3L_ECORRUPT for a bad record.
 * destroy: frees ctx (may be NULL).
 */
struct s3l__dest_codec {
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
    /* The row sinks of row_sink() take column batches (put_columns): lanes forward them. */
    bool column_batches;
};

/*
 * s3l_dest_open with an explicit codec (copied; the destination calls codec->destroy(ctx) when
 * it is freed, also on failure). Tests use it with a trivial codec.
 */
int s3l__dest_open_codec(struct s3l_store *store, const struct s3l_dest_options *o,
                         const struct s3l__dest_codec *codec, struct s3l_dest **out,
                         struct s3l_error *err);

/* The Parquet codec (format_parquet.c): writers share one budget of `memory` bytes. */
int s3l__codec_parquet(const struct s3l_pq_options *opts, size_t memory,
                       struct s3l__dest_codec *out, struct s3l_error *err);

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
    char *state; /* the runner's JSON value as compact text, or NULL */
    /* Not serialised: the version read or written last. */
    bool exists;
    char etag[132];
};

void s3l__ckpt_cleanup(struct s3l__ckpt *c);
void s3l__ckpt_clear_pending(struct s3l__ckpt *c);
/* Serialises c (compact JSON, keys in a fixed order). S3L_EINVALID_CONFIG for a bad state. */
int s3l__ckpt_encode(const struct s3l__ckpt *c, char **out, size_t *len, struct s3l_error *err);
/* Parses a checkpoint document; key names it in errors (S3L_ECORRUPT). */
int s3l__ckpt_decode(const char *text, size_t len, const char *key, struct s3l__ckpt *c,
                     struct s3l_error *err);
/* The checkpoint key of a pipeline (s3l_free). */
char *s3l__ckpt_key(const char *pipeline);
/* Reads the checkpoint of pipeline into *c (exists = false, zeroes when there is none). */
int s3l__ckpt_read(struct s3l_store *s, const char *pipeline, struct s3l__ckpt *c,
                   struct s3l_error *err);
/*
 * Writes c conditionally on the version c->etag (put-if-absent when !c->exists) and updates
 * c->etag. When the condition fails, re-reads: a higher generation than `mine` gives
 * S3L_EFENCED, anything else S3L_ECONFLICT.
 */
int s3l__ckpt_write(struct s3l_store *s, struct s3l__ckpt *c, uint64_t mine, struct s3l_error *err);

/* The marker key of (T, pipeline, epoch) (s3l_free). */
char *s3l__marker_key(const char *table, const char *pipeline, uint64_t epoch);
/*
 * The marker document of table T for the pending epoch of c: the pending files of T in order,
 * data then dead-letter. Deterministic bytes for the same input. S3L_ENOMEM.
 */
int s3l__marker_encode(const struct s3l__ckpt *c, const char *table, char **out, size_t *len);
/*
 * Writes the marker put-if-absent; an existing marker with the same bytes is success (a
 * recovery repeating the step), other bytes S3L_ECONFLICT.
 */
int s3l__marker_put(struct s3l_store *s, const char *key, const char *doc, size_t len,
                    struct s3l_error *err);
/* Parses a marker and calls cb with it (inspect.c). S3L_ECORRUPT naming key. */
int s3l__marker_decode(const char *text, size_t len, const char *key,
                       int (*cb)(void *ctx, const struct s3l_dest_marker *m), void *ctx,
                       struct s3l_error *err);

/* Protocol step names announced through s3l_store_event. */
#define S3L__EV_AFTER_STAGE      "after-stage"
#define S3L__EV_AFTER_PREPARE    "after-prepare"
#define S3L__EV_AFTER_CHECKPOINT "after-checkpoint"
#define S3L__EV_BETWEEN_COPIES   "between-copies"
#define S3L__EV_BEFORE_MARKER    "before-marker"
#define S3L__EV_AFTER_MARKER     "after-marker"
#define S3L__EV_AFTER_COMMIT     "after-commit"
#define S3L__EV_IN_GC            "in-gc"

/* Commits the pending epoch recorded in c: copies, markers, checkpoint, staged deletes. */
int s3l__finish_pending(struct s3l_store *s, struct s3l__ckpt *c, uint64_t mine,
                        struct s3l_error *err);

#endif
