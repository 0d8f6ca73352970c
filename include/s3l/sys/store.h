/*
 * The storage vtable, for people writing a storage backend (local file://, S3, test wrappers).
 *
 * A store is rooted at a URL (file:///abs/path, s3://bucket/prefix); keys are relative to that
 * root, '/'-separated, never starting with '/', never holding an empty, "." or ".." segment or a
 * NUL. Backends embed struct s3l_store as their first member. Callers never call ops directly:
 * they use the s3l_store_* dispatch functions below, which check keys, count operations and bytes
 * and give test wrappers one place to hook in.
 *
 * An upload is invisible until published: begin, write, publish (local: fsync, rename, fsync of
 * the directory; S3: CompleteMultipartUpload or one PutObject) or abort.
 *
 * Errors every op may return (besides the ones listed per op): S3L_ENOMEM; S3L_EIO for an
 * unclassified OS failure; S3L_EPERMISSION_DENIED (EACCES, EPERM, EROFS; S3 403);
 * S3L_ENO_SPACE (ENOSPC, EDQUOT); S3L_EAUTH_*, S3L_ETHROTTLED, S3L_ETRANSIENT (S3 only);
 * S3L_EINVALID_ARGUMENT for a key that breaks the rules above. Each message names the key (and
 * for the local backend the path and the syscall).
 *
 * Thread safety: the dispatch functions and the backends in this project may be called from
 * several threads at once on the same store; one upload handle is used by one thread at a time.
 */
#ifndef S3L_SYS_STORE_H
#define S3L_SYS_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "s3l/counts.h"
#include "s3l/error.h"

#define S3L_STORE_OPS_VERSION 1

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

struct s3l_store_ops {
    int version; /* S3L_STORE_OPS_VERSION */
    const char *name;
    unsigned caps;
    /* Starts an upload of key. Nothing is visible at key until publish. */
    int (*upload_begin)(struct s3l_store *s, const char *key, const struct s3l_put_options *opts,
                        struct s3l_upload **out, struct s3l_error *err);
    int (*upload_write)(struct s3l_upload *u, const void *data, size_t len, struct s3l_error *err);
    /*
     * Makes the object visible, atomically and durably, and fills info (may be NULL). Frees u
     * whatever the outcome. S3L_EPRECONDITION_FAILED when a condition of upload_begin fails.
     */
    int (*upload_publish)(struct s3l_upload *u, struct s3l_object_info *info,
                          struct s3l_error *err);
    void (*upload_abort)(struct s3l_upload *u); /* also frees u; nothing becomes visible */
    /* One-shot upload: as upload_begin + write + publish. */
    int (*put)(struct s3l_store *s, const char *key, const void *data, size_t len,
               const struct s3l_put_options *opts, struct s3l_object_info *info,
               struct s3l_error *err);
    /*
     * Reads bytes [offset, offset + len) of key (len UINT64_MAX: to the end) into *data (owned
     * by the caller, s3l_free; NUL-terminated, the NUL not counted in *data_len). info (may be
     * NULL) gets the size and ETag of the object version that was read. S3L_ENOT_FOUND;
     * S3L_ETOO_LARGE when more than max bytes would be returned.
     */
    int (*get)(struct s3l_store *s, const char *key, uint64_t offset, uint64_t len, size_t max,
               uint8_t **data, size_t *data_len, struct s3l_object_info *info,
               struct s3l_error *err);
    /* Size, mtime and ETag of key. S3L_ENOT_FOUND. */
    int (*stat)(struct s3l_store *s, const char *key, struct s3l_object_info *info,
                struct s3l_error *err);
    /* Every object whose key starts with prefix ("" for all), in byte order of keys. The
     * ETag may be "" (the local backend does not read contents to list). */
    int (*list)(struct s3l_store *s, const char *prefix, s3l_store_list_cb cb, void *ctx,
                struct s3l_error *err);
    /* Deletes key. A missing key is success (S3 DeleteObject semantics). */
    int (*remove)(struct s3l_store *s, const char *key, struct s3l_error *err);
    /* Copies src_key to dst_key, replacing dst_key atomically. S3L_ENOT_FOUND for src_key. */
    int (*copy)(struct s3l_store *s, const char *src_key, const char *dst_key,
                struct s3l_error *err);
    void (*destroy)(struct s3l_store *s);
    /*
     * Optional (may be NULL): a protocol step was reached. The destination announces each step
     * of its commit protocol by name (docs/internals/commit.md lists them); backends ignore it,
     * test wrappers use it to crash at a named point. Never fails.
     */
    void (*event)(struct s3l_store *s, const char *name);
    /*
     * Optional (may be NULL: nothing to sweep). Removes what writers that died left under
     * prefix ("" for the whole store) that is invisible to list: the local backend's temp files
     * (".s3l-tmp-*") that no live process holds and whose inode changed before before_ns (ns
     * since epoch; docs/internals/store.md gives the rule). Adds the number removed to
     * *removed (may be NULL). Best effort: a file that cannot be removed is skipped; errors
     * only for S3L_ENOMEM or an unreadable directory (S3L_EIO, S3L_EPERMISSION_DENIED).
     */
    int (*sweep)(struct s3l_store *s, const char *prefix, int64_t before_ns, uint64_t *removed,
                 struct s3l_error *err);
    /*
     * Optional (NULL: the dispatch layer's counts of store operations are reported). The
     * requests the backend sent since it was opened, by its own operation names (the S3
     * backend: S3 operations), into out (zeroed by the caller; unit, n, total and ops set
     * here). Thread-safe; never fails.
     */
    void (*counts)(struct s3l_store *s, struct s3l_store_counts *out);
    /*
     * Optional (NULL: copy). As copy, with the source's size in bytes known to the caller (from
     * the checkpoint), so a backend that would ask the store for it (S3: a HeadObject to choose
     * CopyObject or UploadPartCopy) does not. A wrong size is no corruption: the S3 backend then
     * picks the other method, which fails. S3L_ENOT_FOUND for src_key.
     */
    int (*copy_sized)(struct s3l_store *s, const char *src_key, uint64_t size,
                      const char *dst_key, struct s3l_error *err);
    /*
     * Optional (NULL: remove, key by key). Deletes n keys (n >= 2) in as few requests as the
     * store allows (S3: DeleteObjects, 1,000 keys a request). A missing key is success. The
     * first key that could not be deleted fails the call, naming it; the others may be gone.
     */
    int (*remove_many)(struct s3l_store *s, const char *const *keys, size_t n,
                       struct s3l_error *err);
    /*
     * Optional (NULL: copy_sized, item by item). n independent copies (n >= 2), sent together
     * (S3: the CopyObjects at once, up to the client's in-flight limit). 0 when all succeeded,
     * else the first failure (S3L_ENOT_FOUND for a missing source); the others may be done.
     */
    int (*copy_many)(struct s3l_store *s, const struct s3l_copy_item *items, size_t n,
                     struct s3l_error *err);
    /*
     * Optional, all three or none (S3L_STORE_CAP_STAGED). upload_stage: stores every byte
     * written to u durably but publishes nothing, fills *out (zeroed first) and frees u whatever
     * the outcome (on failure the upload is aborted). S3: the last parts are sent (a
     * multipart upload even for one small part: it is never a PutObject) and the upload is left
     * pending; local: fsync, then the temp file is renamed to a staged file that no sweep
     * removes. S3L_EINVALID_ARGUMENT for an upload of 0 bytes (nothing to stage: S3 needs a
     * part).
     */
    int (*upload_stage)(struct s3l_upload *u, struct s3l_staged *out, struct s3l_error *err);
    /*
     * Publishes the staged upload st of key, from this process or any other, idempotently: a
     * repeated complete of one that is already published succeeds. Done (0, info filled, may
     * be NULL) when the complete succeeds, or when it fails in a way that may mean "already
     * done" (S3: NoSuchUpload, 5xx after retries, a 200 with an empty ETag) and the object at
     * key carries st->token and st->size. Never publishes over another object: S3L_ECONFLICT,
     * naming key, when the object at key is not this upload's and the upload is gone;
     * S3L_ENOT_FOUND when neither the upload nor the object exists (aborted, or never made).
     */
    int (*staged_complete)(struct s3l_store *s, const char *key, const struct s3l_staged *st,
                           struct s3l_object_info *info, struct s3l_error *err);
    /* Drops the staged upload upload_id of key (S3: AbortMultipartUpload; local: unlink of the
     * staged file). One already gone (aborted, completed) is success. */
    int (*staged_abort)(struct s3l_store *s, const char *key, const char *upload_id,
                        struct s3l_error *err);
    /*
     * Optional (NULL: nothing to do). Lets what u sent already move on without waiting (S3: the
     * parts in flight; libcurl moves a body only while driven), for a writer that encodes
     * between two writes. Never blocks, never fails: a failure is u's, returned by its next
     * write or publish. Cheap when nothing travels, so callable every few rows.
     */
    void (*upload_progress)(struct s3l_upload *u);
    /*
     * Optional (NULL: the backend has no multipart uploads, as the local one). Every pending
     * multipart upload whose key starts with prefix, in key order (S3: ListMultipartUploads, page
     * by page; cb runs between pages). A non-zero cb result stops and is returned. The store's
     * errors: S3L_EPERMISSION_DENIED when the listing is refused (S3: s3:ListBucketMultipartUploads
     * not granted). An upload it lists is aborted with staged_abort (S3: AbortMultipartUpload).
     */
    int (*list_uploads)(struct s3l_store *s, const char *prefix, s3l_store_uploads_cb cb,
                        void *ctx, struct s3l_error *err);
    /*
     * Optional, with counts (NULL: s itself). The object that counts what counts reports, as the
     * owner of a thread's tally (src/lib/util/util.h): the S3 backend its client (an attempt is
     * counted where the client starts it), a sub-store its parent's owner. Never fails.
     */
    const void *(*counts_owner)(struct s3l_store *s);
};

/* The base every backend embeds first. */
struct s3l_store {
    const struct s3l_store_ops *ops;
    char *url;              /* the root URL, canonical (no trailing slash) */
    uint64_t n_ops;         /* counted by the dispatch functions (atomically) */
    uint64_t bytes_written; /* bytes given to upload_write and put */
    uint64_t bytes_read;    /* bytes returned by get */
    uint64_t op_n[S3L_STORE_N_OPS]; /* calls by operation (enum s3l_store_op), atomically */
};

/* An upload's base, embedded first by backends. */
struct s3l_upload {
    struct s3l_store *store;
    char *key;
    uint64_t size; /* bytes written so far */
};

/*
 * The dispatch functions: each checks the key (S3L_EINVALID_ARGUMENT), counts one operation in
 * s->n_ops (and bytes), and calls the op. Shapes and errors are those of the ops above.
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

/*
 * The wrapper registration hook (SQLite's VFS registration): every store that s3l_store_open
 * creates afterwards is passed to wrap(ctx, inner, &outer); the wrapper returns 0 with *outer a
 * store that owns inner (destroying outer destroys inner), or a negative code (the open fails and
 * inner is destroyed by s3l_store_open). NULL unregisters. Call it before any store is opened,
 * e.g. from a constructor in a test build (tests/support/crash_store.c). Not thread-safe.
 */
typedef int (*s3l_store_wrap_fn)(void *ctx, struct s3l_store *inner, struct s3l_store **outer,
                                 struct s3l_error *err);
void s3l_store_set_wrapper(s3l_store_wrap_fn wrap, void *ctx);

#endif
