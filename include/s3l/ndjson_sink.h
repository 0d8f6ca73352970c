/*
 * The raw-object connector's sink, for stream engines that embed it: records in, NDJSON objects
 * on a store (s3:// or file://, through the store operations of s3l/store.h), one record per
 * line. Issue 13 is the specification; docs/internals/sink.md has the invariants, the names of
 * the objects and the loss window.
 *
 * The engine's calls, per checkpoint interval:
 *
 *     s3l_sink_open(options)            once
 *     s3l_sink_begin(ckpt)              before the interval's first record
 *     s3l_sink_write(record, len)       any number of times
 *     s3l_sink_prepare(ckpt)            at the barrier: the committable, as bytes
 *     ... the engine stores the bytes in its checkpoint ckpt ...
 *     s3l_sink_commit(bytes)            once the checkpoint is complete (also after a restore)
 *     s3l_sink_abort(bytes)             for a checkpoint the engine abandons
 *     s3l_sink_close(), s3l_sink_free() at the end of the stream
 *
 * Sinks: the rolling text sink (S3L_SINK_AT_MOST_ONCE, `s3_text_sink`) puts a part object each
 * time its buffer reaches rollover_bytes and at close; its committables are empty. The
 * two-phase sink (S3L_SINK_EXACTLY_ONCE, `s3_2pc_string_sink`) writes one object per (subtask,
 * checkpoint) as a staged upload of the store (s3l/store.h; S3: a multipart upload whose
 * parts stream as they fill), made visible only by s3l_sink_commit of the committable prepare
 * returned, from this process or from one the engine restored from its checkpoint.
 *
 * Thread safety: one sink is used by one thread at a time. Every error is also in err (may be
 * NULL), naming the key, the record or the byte at fault; messages never hold credentials.
 */
#ifndef S3L_NDJSON_SINK_H
#define S3L_NDJSON_SINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "s3l/error.h"
#include "s3l/store.h"

/* ------------------------------------------------------------------------------------------ */
/* The committable: what prepare hands the engine, what commit and abort take back.           */

#define S3L_COMMITTABLE_VERSION 1 /* the encoding's version; see s3l_committable_encode */

enum s3l_committable_kind {
    S3L_COMMITTABLE_EMPTY = 0,     /* nothing to publish (text sink; an empty interval) */
    S3L_COMMITTABLE_MULTIPART = 1, /* a multipart upload to complete (two-phase sink) */
};

/* Limits the decoder enforces (S3: keys up to 1024 bytes, parts numbered 1..10,000,
 * UploadPart; ETags as s3l_object_info holds them). */
#define S3L_COMMITTABLE_KEY_MAX   1024
#define S3L_COMMITTABLE_ID_MAX    1024
#define S3L_COMMITTABLE_TOKEN_MAX 64
#define S3L_COMMITTABLE_ETAG_MAX  131
#define S3L_COMMITTABLE_PARTS_MAX 10000

/* One uploaded part: its PartNumber (1..10,000), size in bytes and ETag as UploadPart answered
 * it (quotes included, as CompleteMultipartUpload takes it back). */
struct s3l_committable_part {
    uint32_t number;
    uint64_t size;
    char *etag; /* NUL-terminated */
};

/*
 * A committable, decoded. For S3L_COMMITTABLE_EMPTY every other field is zero or NULL.
 * key: the object's key relative to the store's root; upload_id: CreateMultipartUpload's
 * UploadId; token: the x-amz-meta-s3land-upload token the upload was created with (a HEAD of
 * the key settles a repeated CompleteMultipartUpload by it); parts: in increasing number, no
 * number twice; records and bytes: what the interval holds (bytes = the sum of the part sizes).
 */
struct s3l_committable {
    enum s3l_committable_kind kind;
    uint64_t checkpoint; /* the checkpoint id prepare was given */
    char *key;
    char *upload_id;
    char *token;
    uint32_t n_parts;
    struct s3l_committable_part *parts;
    uint64_t records;
    uint64_t bytes;
};

/*
 * Encodes c as bytes an engine can store in its checkpoint. *out (s3l_free) holds, little
 * endian: the magic "S3LC", u16 version (S3L_COMMITTABLE_VERSION), u8 kind, u64 checkpoint,
 * then key, upload_id, token as (u32 length, bytes), u64 records, u64 bytes, u32 n_parts and
 * per part (u32 number, u64 size, u32 length, ETag bytes); last, the CRC-32 (ISO-HDLC, as zlib's
 * crc32) of everything before it, u32. Errors: S3L_EINVALID_ARGUMENT when c breaks the rules of
 * struct s3l_committable or the limits above (naming the field); S3L_ENOMEM. The same checks as
 * s3l_committable_decode, so whatever encodes also decodes.
 */
int s3l_committable_encode(const struct s3l_committable *c, uint8_t **out, size_t *out_len,
                           struct s3l_error *err);

/*
 * Decodes len bytes made by s3l_committable_encode into *c (zeroed first; free its contents
 * with s3l_committable_cleanup, also after a failure). Everything is checked before anything
 * is returned, so a committable is used whole or not at all. Errors, all S3L_ECORRUPT with a
 * message saying which: fewer bytes than a field needs ("truncated at byte N"), a magic other
 * than "S3LC" ("not an s3land sink committable"), a version other than 1 ("version V is not
 * one this build reads"), an unknown kind, a length or part count over the limits above, parts
 * out of order or numbered 0, a byte count that is not the sum of the part sizes, a string
 * holding a NUL, bytes after the checksum, a checksum that does not match. S3L_ENOMEM.
 */
int s3l_committable_decode(const uint8_t *data, size_t len, struct s3l_committable *c,
                           struct s3l_error *err);

/* Frees what s3l_committable_decode allocated in c and zeroes it. NULL is a no-op. */
void s3l_committable_cleanup(struct s3l_committable *c);

/* ------------------------------------------------------------------------------------------ */
/* The sink.                                                                                   */

#define S3L_SINK_OPTIONS_VERSION 1

enum s3l_sink_delivery {
    S3L_SINK_AT_MOST_ONCE = 0, /* the rolling text sink */
    S3L_SINK_EXACTLY_ONCE = 1, /* the two-phase sink */
};

/* How the text sink compresses each part object (the option `compression`). */
enum s3l_sink_compression {
    S3L_SINK_COMPRESSION_NONE = 0, /* plain lines, names `part-<n>` */
    S3L_SINK_COMPRESSION_GZIP = 1, /* one gzip member (RFC 1952, zlib level 6), `part-<n>.gz` */
    S3L_SINK_COMPRESSION_ZSTD = 2, /* one zstd frame (RFC 8878, level 3), `part-<n>.zst` */
};

/*
 * The option's value by name: "none", "gzip" or "zstd" (any case) into *out. NULL or "" is
 * none. S3L_EINVALID_CONFIG for another name, naming it and the three accepted.
 */
int s3l_sink_compression_parse(const char *name, enum s3l_sink_compression *out,
                               struct s3l_error *err);

#define S3L_SINK_ROLLOVER_DEFAULT (16u << 20) /* 16 MiB, the seed's rollover_bytes default */
#define S3L_SINK_PART_DEFAULT     (5u << 20)  /* 5 MiB: S3's minimum part, the seed's default */

/* Options of s3l_sink_open. Zero-initialise, then set version, store and what differs. */
struct s3l_sink_options {
    int version; /* S3L_SINK_OPTIONS_VERSION */
    /* Where the objects go (borrowed: it must outlive the sink). Open it with s3l_store_open
     * (s3://bucket[/prefix] or file:///dir); the store must have S3L_STORE_CAP_PUT_IF_ABSENT. */
    struct s3l_store *store;
    enum s3l_sink_delivery delivery;
    /* Key prefix under the store's root ("" or NULL: none, and no leading slash). A key that
     * the store's key rules refuse is S3L_EINVALID_CONFIG at open. */
    const char *key_prefix;
    uint64_t rollover_bytes;      /* text sink: bytes per part object (0: 16 MiB) */
    int64_t rollover_interval_ms; /* text sink: a part is also put once its oldest record is
                                     this old (checked at each write and s3l_sink_poll; 0: off) */
    const char *content_type;     /* of each object (NULL: application/x-ndjson) */
    uint32_t subtask;             /* this sink's index, 0 .. parallelism - 1 */
    uint32_t parallelism;         /* subtasks of the job (0 or 1: names without sub<i>-) */
    /* The engine restores this sink from a checkpoint: the text sink lists its own parts
     * (needs s3:ListBucket) and numbers new ones after the highest. The two-phase sink needs
     * nothing: the engine commits the committables its checkpoint holds. */
    bool restore;
    /* Two-phase sink: bytes of every part but the last of an interval's upload (0: 5 MiB; at
     * least 5 MiB, S3's minimum, else S3L_EINVALID_CONFIG at open). Memory is about part_size
     * x (the client's parts in flight + 1), whatever the interval's size; an interval holds at
     * most part_size x 10,000 bytes (S3's part limit). */
    uint64_t part_size;
    /* Text sink: each part object is compressed whole (a gzip member or a zstd frame) and its
     * name ends `.gz` or `.zst`; rollover_bytes still counts the lines' bytes, before
     * compression. Content-Type stays content_type's and no Content-Encoding is set, so a
     * client downloads the compressed bytes as stored. The two-phase sink takes only
     * S3L_SINK_COMPRESSION_NONE (else S3L_EUNSUPPORTED at open). */
    enum s3l_sink_compression compression;
};

struct s3l_sink;

/*
 * Opens a sink. *out is freed with s3l_sink_free. The text sink, with restore set, lists
 * `<key_prefix>/part-` (or `sub<i>-part-`) and numbers its next part after the highest found.
 * The two-phase sink takes its run id here: the time in ms since the epoch, 13 digits, then 8
 * random hex digits, so its objects `<key_prefix>/sub<N>-<run>-<ckpt>.ndjson` sort by run and a
 * later run never meets an earlier run's object, even for a checkpoint id used again.
 * Errors: S3L_EINVALID_ARGUMENT for a NULL out, opts or store, a wrong version, an unknown
 * compression; S3L_EINVALID_CONFIG for subtask >= parallelism, a key prefix the store's key
 * rules refuse, a part_size under 5 MiB (two-phase); S3L_EUNSUPPORTED for a text sink on a
 * store without put-if-absent, a two-phase sink on one without staged uploads
 * (S3L_STORE_CAP_STAGED) or with a compression; S3L_ECODEC when the compression library cannot
 * start; the store's errors of list (restore); S3L_EINTERNAL when no random bytes come;
 * S3L_ENOMEM.
 */
int s3l_sink_open(const struct s3l_sink_options *opts, struct s3l_sink **out,
                  struct s3l_error *err);

/*
 * Announces the checkpoint interval ckpt, before its first record. The text sink only records
 * it (its part names do not depend on it); the two-phase sink names the interval's object by it
 * (the upload starts at the first record, so an empty interval makes no upload). S3L_ESTATE
 * after a failure or when an interval is already begun and not prepared; S3L_EINVALID_CONFIG
 * when the key would pass 1024 bytes.
 */
int s3l_sink_begin(struct s3l_sink *s, uint64_t ckpt, struct s3l_error *err);

/*
 * Writes one record of len bytes as one line: a final "\n" of the record is kept as its line
 * end (not doubled), else one is added. S3L_EINVALID_INPUT for a record with a newline before
 * its last byte, naming the record (its 1-based number in this sink) and the byte offset; the
 * record is not written and the sink stays usable. The text sink puts a part object when its
 * buffer reaches rollover_bytes (or rollover_interval_ms passed since its oldest record):
 * `<key_prefix>/part-<n>` or `sub<i>-part-<n>` (then `.gz` or `.zst` with a compression; the
 * part compressed whole first), PutObject with If-None-Match: * (S3 API Reference, PutObject;
 * local: link(2)), the next free number on a conflict. A put's error
 * (the store's codes, naming the key) is returned and the sink is failed: later calls return
 * S3L_ESTATE, and the buffered records are lost (at most once; the engine replays). S3L_ESTATE
 * before begin.
 */
int s3l_sink_write(struct s3l_sink *s, const void *record, size_t len, struct s3l_error *err);

/*
 * The rollover_interval_ms check without a record: puts the buffer if its oldest record is that
 * old. For engines that call it from their timer. Errors as s3l_sink_write's puts.
 */
int s3l_sink_poll(struct s3l_sink *s, struct s3l_error *err);

/*
 * Ends the interval ckpt (the one begin announced) and returns its committable as bytes in
 * *out (s3l_free), encoded by s3l_committable_encode. The text sink flushes nothing and returns
 * an empty committable (kind S3L_COMMITTABLE_EMPTY): it has no barrier hook. The two-phase sink
 * stages the interval's upload (its last parts sent, every part waited for, nothing visible)
 * and returns a multipart committable (key, upload id, token, parts, records, bytes), or an empty
 * one for an interval without records (no object, no upload); then it announces the protocol
 * point "after_prepare" (s3l_store_event). A staging error fails the sink. S3L_ESTATE when no
 * interval is begun or after a failure; S3L_EINVALID_ARGUMENT when ckpt is not the begun one
 * (nothing is done: the interval stays begun); S3L_ENOMEM.
 */
int s3l_sink_prepare(struct s3l_sink *s, uint64_t ckpt, uint8_t **out, size_t *out_len,
                     struct s3l_error *err);

/*
 * Commits a committable prepare returned (this run's, or an earlier run's restored from the
 * engine's checkpoint). Decoded whole first: S3L_ECORRUPT as s3l_committable_decode, with
 * nothing done. An empty committable is done at once (0). A multipart one: the point
 * "before_commit" is announced, then the store completes the staged upload
 * (s3l_store_staged_complete; S3: CompleteMultipartUpload, never abandoned for a client-side
 * timeout), idempotently: a repeated commit, or one whose first attempt's answer was lost, is
 * settled by a HEAD of the key whose upload token and size must be the committable's (a
 * NoSuchUpload, a 5xx, RGW's 200 with an empty ETag). The object is published whole with all
 * its parts or not at all. Errors (the sink stays usable; the engine fails the job and
 * recovery commits again): the store's, naming the key and the checkpoint; S3L_ENOT_FOUND when
 * the upload is gone and no object is at the key; S3L_ECONFLICT when the object at the key is
 * not this upload's; S3L_ECORRUPT for a multipart committable without an upload token (nothing
 * could settle a repeated complete). Needs a store with staged uploads (else S3L_EUNSUPPORTED).
 */
int s3l_sink_commit(struct s3l_sink *s, const uint8_t *data, size_t len, struct s3l_error *err);

/* One committable's bytes, for s3l_sink_commit_group. */
struct s3l_committable_bytes {
    const uint8_t *data;
    size_t len;
};

/*
 * Commits n committables of the sinks of one commit_group, in order, with s3l_sink_commit. A
 * failure stops the call: *done (may be NULL) gets the number committed, and the error is the
 * failed one's (its message prefixed with its index); the rest are committed by recovery from
 * the same checkpoint. Not atomic across sinks: readers may see the first ones before the
 * others.
 */
int s3l_sink_commit_group(struct s3l_sink *s, const struct s3l_committable_bytes *c, size_t n,
                          size_t *done, struct s3l_error *err);

/*
 * Drops a committable the engine abandons: a multipart one's upload is aborted
 * (s3l_store_staged_abort; S3: AbortMultipartUpload); one already gone (aborted before,
 * completed) is success, so an abandoned checkpoint never fails the job. An empty one: nothing
 * to do (0). S3L_ECORRUPT as s3l_committable_decode, with nothing done; the store's other errors.
 */
int s3l_sink_abort(struct s3l_sink *s, const uint8_t *data, size_t len, struct s3l_error *err);

/*
 * Ends the stream: the text sink puts what it buffers (as at a rollover; nothing when empty).
 * Errors as s3l_sink_write's puts; S3L_ESTATE after a failure. The two-phase sink has nothing
 * to put (the engine prepares and commits the last interval first): S3L_ESTATE when an interval
 * holds records not prepared. The sink must still be freed.
 */
int s3l_sink_close(struct s3l_sink *s, struct s3l_error *err);

/* What the sink has done: records written, part objects put (two-phase: parts staged) and
 * their bytes (the lines' bytes, before any compression). NULL fields skipped. */
void s3l_sink_stats(const struct s3l_sink *s, uint64_t *records, uint64_t *parts, uint64_t *bytes);

/*
 * Puts what the text sink buffers now, as a rollover would (nothing when empty), for a driver
 * that checkpoints its input after each part (s3land pipe): the records written so far are then
 * published. The two-phase sink publishes only by commit: S3L_ESTATE. Errors as
 * s3l_sink_write's puts; S3L_ESTATE after a failure.
 */
int s3l_sink_flush(struct s3l_sink *s, struct s3l_error *err);

/* The two-phase sink's run id (13 digits of ms, 8 hex digits: the `<run>` of its object names);
 * "" for the text sink. Owned by the sink. */
const char *s3l_sink_run_id(const struct s3l_sink *s);

/*
 * A driver's state file (s3land pipe's: run id, input offset, committables), written atomically
 * and durably: len bytes to a temp file beside path (path.tmp-<pid and counter>), fsync, rename
 * over path, fsync of the directory; the missing parent directories are made first (0755). After
 * a crash the file holds the old bytes or the new ones, whole. Errors (err names the syscall and
 * the path): S3L_EINVALID_ARGUMENT for a NULL or empty path, NULL data with len, a path over
 * 4,000 bytes; S3L_EPERMISSION_DENIED, S3L_ENO_SPACE, S3L_EIO, S3L_ENOMEM as the OS says (the
 * temp file is removed, path untouched).
 */
int s3l_sink_state_save(const char *path, const void *data, size_t len, struct s3l_error *err);
/* Reads the state file at path (at most max bytes) into *data (s3l_free; a NUL follows the
 * bytes, so text can be read as a string) and *len. S3L_ENOT_FOUND when there is none,
 * S3L_ETOO_LARGE over max, the read's errors. */
int s3l_sink_state_load(const char *path, size_t max, uint8_t **data, size_t *len,
                        struct s3l_error *err);

/* A sink's capability record: its factory name (the SQL binding's), what it delivers, and what
 * it needs to (text for people). */
struct s3l_sink_kind {
    const char *name;
    enum s3l_sink_delivery delivery;
    const char *needs;
};
/* The sinks' records ("s3_text_sink": at most once, needs s3:ListBucket to restore;
 * "s3_2pc_string_sink": exactly once): cb(ctx, kind) for each, in that order; cb's non-zero
 * result stops and is returned. */
int s3l_sink_kinds(int (*cb)(void *ctx, const struct s3l_sink_kind *kind), void *ctx);
/* "at_most_once" or "exactly_once". */
const char *s3l_sink_delivery_name(enum s3l_sink_delivery d);

/* Frees the sink; buffered records that close did not put are dropped (the two-phase sink
 * aborts an unprepared interval's upload). NULL is a no-op. */
void s3l_sink_free(struct s3l_sink *s);

#endif
