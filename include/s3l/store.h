/*
 * A store: where a destination lives, opened by URL, and the operations on it. The entry point
 * an embedder or the CLI uses to reach a destination, and what the library's modules above the
 * storage layer (the destination, the NDJSON sinks, the object source) call. struct s3l_store is
 * opaque here; a backend author implements one through s3l/sys/store.h (the vtable, the bases
 * backends embed, the wrapper hook), which nothing else includes.
 *
 * URLs: file:///ABSOLUTE/PATH (also file://localhost/ABSOLUTE/PATH; %XX escapes are decoded) for
 * a local directory, s3://BUCKET/PREFIX for S3 (the S3 backend, s3l/s3.h).
 *
 * Keys are relative to the root, '/'-separated, never starting with '/', never holding an empty,
 * "." or ".." segment or a NUL. An upload is invisible until published: begin, write, publish
 * (local: fsync, rename, fsync of the directory; S3: CompleteMultipartUpload or one PutObject)
 * or abort.
 *
 * Errors every operation may return (besides the ones listed per operation, here and at the op
 * of the same name in s3l/sys/store.h): S3L_ENOMEM; S3L_EIO for an unclassified OS failure;
 * S3L_EPERMISSION_DENIED (EACCES, EPERM, EROFS; S3 403); S3L_ENO_SPACE (ENOSPC, EDQUOT);
 * S3L_EAUTH_*, S3L_ETHROTTLED, S3L_ETRANSIENT (S3 only); S3L_EINVALID_ARGUMENT for a key that
 * breaks the rules above. Each message names the key (and for the local backend the path and
 * the syscall).
 *
 * Thread safety: the operations and the backends in this project may be called from several
 * threads at once on the same store; one upload handle is used by one thread at a time.
 */
#ifndef S3L_STORE_H
#define S3L_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "s3l/counts.h"
#include "s3l/error.h"

struct s3l_creds_provider; /* include/s3l/creds.h */

/* Capability bits. */
#define S3L_STORE_CAP_PUT_IF_ABSENT 0x1 /* put with if_none_match is atomic */
#define S3L_STORE_CAP_CONDITIONAL   0x2 /* put with if_match (ETag) is atomic */
#define S3L_STORE_CAP_MULTIPART     0x4 /* uploads stream as parts */
#define S3L_STORE_CAP_SERVER_COPY   0x8 /* copy happens in the store */
#define S3L_STORE_CAP_STAGED        0x10 /* upload_stage, staged_complete, staged_abort */

/*
 * What is known of one object. etag: opaque version token ("" when unknown), NUL-terminated:
 * two reads with the same etag saw the same bytes. The local backend's ETag is the lowercase hex
 * SHA-256 of the content for objects up to 1 MiB (checkpoints, markers, schema records: the
 * objects that conditional writes protect), else "s<size>-m<mtime_ns>-i<inode>" in hex.
 */
struct s3l_object_info {
    char *key; /* in list callbacks only; owned by the store, valid during the callback */
    uint64_t size;
    int64_t mtime_ns;
    char etag[132];
};

/*
 * Conditions and metadata for put and upload_begin. Zero-initialise.
 * if_none_match: the publish fails with S3L_EPRECONDITION_FAILED if the key exists (S3
 * If-None-Match: *; local: link(2) of the fsynced temp file). if_match: the publish fails with
 * S3L_EPRECONDITION_FAILED unless the key exists with this ETag (S3 If-Match; local: compare
 * and rename under flock(2) of a sibling lock file). Without either, publish replaces.
 */
struct s3l_put_options {
    bool if_none_match;
    const char *if_match;
    const char *content_type;
    /* upload_begin: the most bytes the upload will hold (0: unknown). The S3 backend picks its
     * part size from it (s3l_s3_part_size) and refuses one over S3's 5 TiB object limit with
     * S3L_ETOO_LARGE before anything is sent; the local backend ignores it. */
    uint64_t size_hint;
    /* upload_begin: bytes of every part but the last (0: the backend's own; the S3 backend
     * refuses one under 5 MiB, S3's minimum, with S3L_EINVALID_CONFIG). With size_hint, the
     * larger of this and what size_hint needs. The local backend ignores it. */
    uint64_t part_size;
};

/*
 * A staged upload (upload_stage): every byte is stored, nothing is visible, and the fields
 * below are all another process needs to complete it (staged_complete) or abort it
 * (staged_abort), so they are what a two-phase sink keeps in an engine's checkpoint.
 * upload_id: the backend's name of the upload (S3: CreateMultipartUpload's UploadId; local: 32
 * hex digits naming the staged file). token: what a completed object carries that proves it is
 * this upload's (S3: the x-amz-meta-s3land-upload value, 32 hex digits; local: the staged file's
 * ETag, which link(2) keeps). size: the bytes staged. parts: in increasing number, their sizes
 * summing to size; etag as the store's complete takes it back (S3: the UploadPart ETag in double
 * quotes; local: one part, the staged file's ETag). Strings are NUL-terminated and owned by the
 * struct: free with s3l_staged_cleanup.
 */
struct s3l_staged_part {
    uint32_t number;
    uint64_t size;
    char etag[132];
};
struct s3l_staged {
    char *upload_id;
    char *token;
    uint64_t size;
    uint32_t n_parts;
    struct s3l_staged_part *parts;
};

/* Frees what st holds and zeroes it. NULL is a no-op. */
void s3l_staged_cleanup(struct s3l_staged *st);

struct s3l_store;
struct s3l_upload;

/* One copy of a batch (s3l_store_copy_many): src to dst, src's size in bytes as the caller knows
 * it (the checkpoint's). */
struct s3l_copy_item {
    const char *src;
    const char *dst;
    uint64_t size;
};

/* One put of a batch (s3l_store_put_many): key, its bytes (len, borrowed for the call) and
 * options (NULL: none), as s3l_store_put takes them; rc and err are the item's outcome, filled
 * by the call (err zeroed first). */
struct s3l_put_item {
    const char *key;
    const void *data;
    size_t len;
    const struct s3l_put_options *opts;
    int rc;
    struct s3l_error err;
};

/* What one read sent ahead asks for (s3l_store_read_ahead). */
enum s3l_read_kind {
    S3L_READ_GET,  /* get of the whole object (offset 0, to the end) with cap max */
    S3L_READ_STAT, /* stat */
    S3L_READ_LIST, /* list of every object under key as the prefix ("" for all) */
    S3L_READ_GET_FRESH /* as S3L_READ_GET, read even when an answer is kept (it replaces it) */
};
struct s3l_read_item {
    enum s3l_read_kind kind;
    const char *key;
    size_t max; /* S3L_READ_GET: the max of the get it stands for */
};

/* The store operations the dispatch functions count one by one (s3l_store.op_n). */
enum s3l_store_op {
    S3L_STORE_OP_UPLOAD,
    S3L_STORE_OP_UPLOAD_ABORT,
    S3L_STORE_OP_PUT,
    S3L_STORE_OP_GET,
    S3L_STORE_OP_STAT,
    S3L_STORE_OP_LIST,
    S3L_STORE_OP_REMOVE,
    S3L_STORE_OP_COPY,
    S3L_STORE_OP_REMOVE_MANY,
    S3L_STORE_N_OPS
};

/* Return non-zero to stop the listing; s3l_store_list then returns that value. The callback must
 * not call operations of the same store (a backend may hold a lock while it lists): collect the
 * keys, then act on them. */
typedef int (*s3l_store_list_cb)(void *ctx, const struct s3l_object_info *info);

/* A pending (started, neither completed nor aborted) multipart upload, for list_uploads. Valid
 * during the callback only. */
struct s3l_pending_upload {
    const char *key;       /* relative to the store root */
    const char *upload_id; /* the store's id of the upload */
    int64_t initiated_ns;  /* when it was started (store clock), ns since 1970; 0: unknown */
};
typedef int (*s3l_store_uploads_cb)(void *ctx, const struct s3l_pending_upload *u);

#define S3L_STORE_OPTIONS_VERSION 2

/* Options of s3l_store_open. Zero-initialise, then set version (1: the fields up to s3 only). */
struct s3l_store_options {
    int version;          /* S3L_STORE_OPTIONS_VERSION */
    bool create;          /* file://: create the root directory (and parents) if missing */
    const char *region;   /* s3://: region, or NULL for the configured/discovered one */
    const char *endpoint; /* s3://: an S3-compatible endpoint URL (path-style), or NULL */
    /* s3://: the S3 backend's own options (struct s3l_s3_store_options of s3l/s3.h: the client's
     * whole configuration, part sizes, encryption). When set, the fields below are not used. */
    const void *s3;
    /* Version 2, s3:// without s3 above: what an embedder sets without the S3 backend's header.
     * path_style as struct s3l_s3_config's (1 path-style, -1 virtual-hosted, 0 decide);
     * credentials borrowed (NULL: the client's default chain, s3l/creds.h); sse, sse_kms_key_id
     * and storage_class as struct s3l_s3_store_options' (NULL: not set; a value S3 does not list
     * is S3L_EINVALID_CONFIG before anything is sent). */
    int path_style;
    struct s3l_creds_provider *credentials;
    const char *sse;
    const char *sse_kms_key_id;
    const char *storage_class;
};

/*
 * Opens the store rooted at url. opts may be NULL (defaults: no create). On success *out is a
 * store to free with s3l_store_free; its url field is the canonical URL (no trailing slash, no
 * "." segments, file:///... form). If a wrapper is registered (s3l_store_set_wrapper), *out is
 * the wrapped store.
 * Errors: S3L_EINVALID_CONFIG for a URL that is not file:///abs or s3://bucket[/prefix] (a
 * relative path, a ".." segment, a NUL, an unknown scheme, a control character in an s3://
 * bucket or prefix, which S3's XML answers cannot carry), naming the URL; S3L_ENOT_FOUND when
 * the local root does not exist and create is false; S3L_EINVALID_CONFIG when it is not a
 * directory; S3L_EPERMISSION_DENIED; S3L_EUNSUPPORTED for s3:// in a build without the S3
 * backend; S3L_ENOMEM.
 */
int s3l_store_open(const char *url, const struct s3l_store_options *opts, struct s3l_store **out,
                   struct s3l_error *err);

/*
 * A store rooted at prefix inside parent (store/sub.c): its key K is the parent's PREFIX + K, so a
 * whole destination (checkpoints, markers, tables) can live in a scratch area of another one
 * (`s3land check` writes its scratch table under "_openetl/check/<uuid>/"). prefix: one or more
 * valid key segments, each followed by '/' ("a/b/"). parent is borrowed: it must outlive *out,
 * which is freed with s3l_store_free (the parent stays open). Every operation goes through the
 * parent's dispatch functions (counted there); the caps are the parent's; url is the parent's
 * URL + "/" + the prefix without its last '/'. Errors: S3L_EINVALID_ARGUMENT for a prefix that is
 * not key segments ending in '/', S3L_ENOMEM.
 */
int s3l_store_sub_new(struct s3l_store *parent, const char *prefix, struct s3l_store **out,
                      struct s3l_error *err);

/* Destroys a store (and what a wrapper wraps). NULL is a no-op. */
void s3l_store_free(struct s3l_store *s);

/*
 * Checks a table or namespace name: it must not make a key escape its place. Refused with
 * S3L_EINVALID_CONFIG naming `what` ("table", "namespace") and the reason: empty, longer than
 * 255 bytes, ".", "..", starting with "/" (absolute), holding "/" or NUL (len counts bytes, so
 * an embedded NUL is seen), a control character (U+0000-U+001F, U+007F: a newline would break
 * line-oriented listings), a backslash, bytes that are not valid UTF-8 (RFC 3629 section 4), or
 * starting with ".s3l-" (the local backend's temp and lock files). The destination adds its own
 * rule (the reserved name of its metadata root, s3l_dest_table_path).
 * The message shows the name with such bytes escaped as \xNN and gives the bad byte's offset.
 * Spaces, unicode, "=" and leading underscores are fine.
 */
int s3l_name_check(const char *name, size_t len, const char *what, struct s3l_error *err);

/* ---- Operations ---------------------------------------------------------------------------- */

/*
 * The operations: each checks the key (S3L_EINVALID_ARGUMENT), counts one operation (and bytes),
 * and calls the backend's op of the same name (s3l/sys/store.h, where each op's shapes and
 * errors are given).
 */
int s3l_store_upload_begin(struct s3l_store *s, const char *key, const struct s3l_put_options *opts,
                           struct s3l_upload **out, struct s3l_error *err);
int s3l_store_upload_write(struct s3l_upload *u, const void *data, size_t len,
                           struct s3l_error *err);
int s3l_store_upload_publish(struct s3l_upload *u, struct s3l_object_info *info,
                             struct s3l_error *err);
void s3l_store_upload_abort(struct s3l_upload *u); /* NULL is a no-op */
/* The op upload_progress when the backend has one (not counted: it is no store operation). NULL
 * is a no-op. */
void s3l_store_upload_progress(struct s3l_upload *u);
int s3l_store_put(struct s3l_store *s, const char *key, const void *data, size_t len,
                  const struct s3l_put_options *opts, struct s3l_object_info *info,
                  struct s3l_error *err);
int s3l_store_get(struct s3l_store *s, const char *key, uint64_t offset, uint64_t len, size_t max,
                  uint8_t **data, size_t *data_len, struct s3l_object_info *info,
                  struct s3l_error *err);
int s3l_store_stat(struct s3l_store *s, const char *key, struct s3l_object_info *info,
                   struct s3l_error *err);
int s3l_store_list(struct s3l_store *s, const char *prefix, s3l_store_list_cb cb, void *ctx,
                   struct s3l_error *err);
int s3l_store_remove(struct s3l_store *s, const char *key, struct s3l_error *err);
int s3l_store_copy(struct s3l_store *s, const char *src_key, const char *dst_key,
                   struct s3l_error *err);
/* Copies items[0..n) (ops->copy_many when n >= 2, each counted as a copy; else
 * s3l_store_copy_sized each, stopping at the first failure). Errors as ops->copy_many. */
int s3l_store_copy_many(struct s3l_store *s, const struct s3l_copy_item *items, size_t n,
                        struct s3l_error *err);
/* Puts items[0..n) (ops->put_many when n >= 2, each counted as a put; else s3l_store_put each,
 * every item tried). Every item's rc and err are filled; returns 0 when all succeeded, else the
 * first failing item's code with its err copied to err (may be NULL). A key that breaks the rules
 * above fails the whole call with S3L_EINVALID_ARGUMENT before anything is sent (every item's rc
 * then that code, its err naming the key). */
int s3l_store_put_many(struct s3l_store *s, struct s3l_put_item *items, size_t n,
                       struct s3l_error *err);
/* ops->read_ahead if set (items whose key breaks the rules above are left out); else nothing.
 * An answer kept from an earlier call is not read again, except for S3L_READ_GET_FRESH: then it
 * is dropped and read anew (and kept as an S3L_READ_GET's). Not counted as operations: the reads
 * it answers are counted when they are made. */
void s3l_store_read_ahead(struct s3l_store *s, const struct s3l_read_item *items, size_t n);
/* Deletes keys[0..n) (ops->remove_many when n >= 2, counted as one "remove_many"; else one
 * s3l_store_remove each). A missing key is success; the first failure is returned. */
int s3l_store_remove_many(struct s3l_store *s, const char *const *keys, size_t n,
                          struct s3l_error *err);
/* As s3l_store_copy, with the source's size known (ops->copy_sized, else ops->copy). */
int s3l_store_copy_sized(struct s3l_store *s, const char *src_key, uint64_t size,
                         const char *dst_key, struct s3l_error *err);
/*
 * What the store cost since it was opened (struct s3l_store_counts): the backend's requests
 * (ops->counts: S3 requests by S3 operation), else the store operations counted here. out is
 * overwritten. Thread-safe; never fails.
 */
void s3l_store_counts(struct s3l_store *s, struct s3l_store_counts *out);
/* Announces a protocol step (ops->event if set). Not counted as an operation. */
void s3l_store_event(struct s3l_store *s, const char *name);
/* ops->sweep if set (else 0, nothing removed); prefix "" or a valid key prefix (else
 * S3L_EINVALID_ARGUMENT, so it cannot leave the root). Not counted as
 * an operation: it touches only the backend's own hidden files. */
int s3l_store_sweep(struct s3l_store *s, const char *prefix, int64_t before_ns,
                    uint64_t *removed, struct s3l_error *err);

/* The staged-upload ops: S3L_EUNSUPPORTED (naming the backend) when the store has none. The
 * stage counts one operation; complete and abort one each. */
int s3l_store_upload_stage(struct s3l_upload *u, struct s3l_staged *out, struct s3l_error *err);
int s3l_store_staged_complete(struct s3l_store *s, const char *key, const struct s3l_staged *st,
                              struct s3l_object_info *info, struct s3l_error *err);
int s3l_store_staged_abort(struct s3l_store *s, const char *key, const char *upload_id,
                           struct s3l_error *err);

/* ops->list_uploads: S3L_EUNSUPPORTED (saying the backend has no multipart uploads) when the
 * backend has none; prefix "" or a valid key prefix (else S3L_EINVALID_ARGUMENT). Counted. */
int s3l_store_list_uploads(struct s3l_store *s, const char *prefix, s3l_store_uploads_cb cb,
                           void *ctx, struct s3l_error *err);

/* Whether key follows the key rules above. */
bool s3l_store_key_valid(const char *key);

/* What a caller may ask of an open store s (borrowed; valid while it is open). Never fail. */
/* The root URL, canonical (no trailing slash, file:///... form). */
const char *s3l_store_url(const struct s3l_store *s);
/* The backend's name ("local", "s3", or a wrapper's), for messages. */
const char *s3l_store_backend(const struct s3l_store *s);
/* The backend's capability bits (S3L_STORE_CAP_*). */
unsigned s3l_store_caps(const struct s3l_store *s);
/* Whether s3l_store_copy_many sends a batch at once (the backend has copy_many: S3 sends the
 * CopyObjects together) rather than copying one by one. */
bool s3l_store_copies_in_batches(const struct s3l_store *s);
/* Whether s3l_store_put_many sends a batch at once (the backend has put_many: S3 sends the
 * PutObjects together) rather than putting one by one. */
bool s3l_store_puts_in_batches(const struct s3l_store *s);
/* Bytes given to upload_write and put since the store was opened (read atomically). */
uint64_t s3l_store_bytes_written(const struct s3l_store *s);

#endif
