/*
 * The raw-object connector's source: reads the NDJSON objects under a key prefix of a store
 * (s3:// or file://, through the store operations of s3l/store.h) and gives one record per
 * line, in a fixed order of the objects, resumable from a checkpoint state in the middle of an
 * object. It reads what the sinks of s3l/ndjson_sink.h write (part-<n>, sub<i>-part-<n>,
 * sub<N>-<run>-<ckpt>.ndjson) and any other object under the prefix; objects ending in .gz or
 * .zst (.zstd) are decompressed (gzip, RFC 1952; zstd, RFC 8878). Issue 13, Build item 4, is the
 * specification; docs/internals/source.md has the order, the state's format and the limits.
 *
 * Thread safety: one source is used by one thread at a time. Every error is also in err (may be
 * NULL), naming the object's key and, for a bad line, its line number.
 */
#ifndef S3L_OBJECT_SOURCE_H
#define S3L_OBJECT_SOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "s3l/error.h"
#include "s3l/store.h"

#define S3L_OBJECT_SOURCE_OPTIONS_VERSION 1
#define S3L_OBJECT_SOURCE_CHUNK_DEFAULT   (1u << 20) /* bytes per ranged GetObject */
#define S3L_OBJECT_SOURCE_CHUNK_MIN       (4u << 10)

/* Options of s3l_object_source_open. Zero-initialise, then set version, store and what differs. */
struct s3l_object_source_options {
    int version; /* S3L_OBJECT_SOURCE_OPTIONS_VERSION */
    /* Where the objects are (borrowed: it must outlive the source); s3l_store_open of
     * s3://bucket[/prefix] or file:///dir. Needs s3:ListBucket and s3:GetObject on S3. */
    struct s3l_store *store;
    /* Key prefix under the store's root ("" or NULL: every object). Matched as a string
     * prefix of keys (as ListObjectsV2's Prefix), so "logs/" and "logs/part-" both work. */
    const char *prefix;
    /* Bytes per ranged GetObject (0: 1 MiB; at least 4 KiB, else S3L_EINVALID_CONFIG). Memory
     * is this plus the reader's buffer (max_record_bytes + 2 MiB) and, for a compressed
     * object, the decoder's window; never the object's size. */
    size_t chunk_bytes;
    size_t max_record_bytes; /* longest line (0: 16 MiB) */
    /* A checkpoint state from s3l_object_source_state to resume from (state_len bytes, not
     * NUL-terminated necessarily), or NULL: from the first object. */
    const char *state;
    size_t state_len;
};

/* One line of an object. Every pointer is valid until the next s3l_object_source_next. */
struct s3l_object_line {
    const char *data; /* the line, its line end (LF, or CR LF) excluded; never a blank line */
    size_t len;
    const char *key;     /* the object's key, relative to the store's root */
    uint64_t line;       /* 1-based line number in the object (decompressed) */
    uint64_t offset;     /* byte offset of the line's first byte in the (decompressed) object */
    uint64_t end_offset; /* byte offset just after its line end */
};

struct s3l_object_source;

/*
 * Lists the objects under the prefix (ListObjectsV2 on S3), keeps the ones to read in the order
 * of s3l_object_key_compare and drops those s3l_object_key_readable refuses, and, with a state,
 * those it records as fully read. Pending multipart uploads are not objects: never listed, never
 * read. *out: s3l_object_source_free. Errors: S3L_EINVALID_CONFIG (bad options, chunk_bytes
 * under 4 KiB), S3L_ECORRUPT for a state that is not one this build wrote ("object source
 * state: ..."), S3L_ECONFLICT when the object in progress at the checkpoint is gone or was
 * replaced (its ETag changed: HeadObject), naming its key: it is never read again from its
 * start; the store's errors (S3L_EPERMISSION_DENIED without s3:ListBucket, S3L_ENOT_FOUND for a
 * missing file:// root, ...); S3L_ENOMEM.
 */
int s3l_object_source_open(const struct s3l_object_source_options *opts,
                           struct s3l_object_source **out, struct s3l_error *err);

/*
 * The next line into *out: 1 with a line, 0 after the last line of the last object. Objects
 * are read by ranged GetObjects of chunk_bytes each (a resumed one from its recorded byte
 * offset; a compressed one from its start, dropping the decompressed bytes before the offset).
 * Errors: S3L_EINVALID_INPUT for a line over max_record_bytes ("KEY line N: longer than the
 * maximum record size"; the next call goes on after it) and for corrupt gzip or zstd data
 * (naming the key and the compressed byte offset); S3L_ECONFLICT when an object's ETag
 * changes between its GETs (replaced while read), naming the key; the store's errors;
 * S3L_ENOMEM. After any error but the long line, the source is failed
 * (s3l_object_source_failed) and every later call returns the same error.
 */
int s3l_object_source_next(struct s3l_object_source *s, struct s3l_object_line *out,
                           struct s3l_error *err);

/* Whether the source stopped on a failure (every s3l_object_source_next returns it again):
 * false after a line over max_record_bytes, which the next call goes on after. */
bool s3l_object_source_failed(const struct s3l_object_source *s);

/*
 * The checkpoint state just after the last line returned (or skipped as too long): a JSON text
 * (*json, NUL-terminated, *len bytes; s3l_free) holding the keys of the objects fully read and
 * the key, ETag, decompressed byte offset and line number of the object in progress. Give it
 * back as options.state to resume there. Errors: S3L_ENOMEM.
 */
int s3l_object_source_state(const struct s3l_object_source *s, char **json, size_t *len,
                            struct s3l_error *err);

/* How many objects this source reads (listed, readable, not recorded as done). */
size_t s3l_object_source_count(const struct s3l_object_source *s);

/* Frees the source (not its store). NULL is a no-op. */
void s3l_object_source_free(struct s3l_object_source *s);

/*
 * The order of objects: negative, 0 or positive as key a comes before, is, or comes after key
 * b. Runs of decimal digits compare as numbers (part-2 before part-10; leading zeros do not
 * count, then shorter before longer), other bytes bytewise, with a digit run sorting where the
 * byte '0' would. A two-phase sink's name, sub<N>-<run>-<ckpt>.ndjson with <run> 13 digits of
 * milliseconds then 8 hex digits, compares its milliseconds apart from the hex digits, so a
 * subtask's objects come in run then checkpoint order. Keys equal by these rules are ordered
 * bytewise, so this is a total order. Never fails.
 */
int s3l_object_key_compare(const char *a, const char *b);

/* Whether the source reads key: false for a key with a segment named _openetl (the table
 * destination's metadata: checkpoints, markers, staging) and for a key ending in '/' (a folder
 * placeholder). Never fails. */
bool s3l_object_key_readable(const char *key);

#endif
