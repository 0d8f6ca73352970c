/*
 * The storage vtable, for people writing a storage backend (local file://, S3, test wrappers):
 * the ops a backend implements, the bases it embeds, and the wrapper hook. Everyone else uses
 * s3l/store.h (the opaque store and its operations), which this header includes; nothing in the
 * library outside store/ and s3/ includes this one (scripts/check-structure.mjs checks it).
 *
 * Backends embed struct s3l_store as their first member. Callers never call ops directly: they
 * use the s3l_store_* operations of s3l/store.h, which check keys, count operations and bytes
 * and give test wrappers one place to hook in. The key rules, the errors every op may return
 * and the thread-safety rules are s3l/store.h's.
 */
#ifndef S3L_SYS_STORE_H
#define S3L_SYS_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "s3l/counts.h"
#include "s3l/error.h"
#include "s3l/store.h"

#define S3L_STORE_OPS_VERSION 1

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
     * Optional (NULL: put, item by item). n independent puts (n >= 2), sent together (S3: the
     * PutObjects at once, up to the client's in-flight limit). Every item is tried and gets its
     * own rc and err (S3L_EPRECONDITION_FAILED for its failed condition); returns 0 when all
     * succeeded, else the first failing item's code.
     */
    int (*put_many)(struct s3l_store *s, struct s3l_put_item *items, size_t n);
    /*
     * Optional (NULL: nothing is read ahead; the local backend's reads are a few system calls).
     * Sends the n reads together and keeps their answers (successes and failures alike) for a
     * while, so that the next matching s3l_store_get (offset 0, to the end, the same max),
     * s3l_store_stat or s3l_store_list (the same prefix) is answered from them with no request.
     * What is kept is dropped by every write (put, upload, copy, remove, staged complete) to a
     * key it is for (a listing: to a key under its prefix), whether that write succeeds or not,
     * and after S3L_STORE_READ_AHEAD_NS. Never blocks for longer than the reads; never fails
     * (what could not be read is read again by the later call).
     */
    void (*read_ahead)(struct s3l_store *s, const struct s3l_read_item *items, size_t n);
    /*
     * Optional, with counts (NULL: s itself). The object that counts what counts reports, as the
     * owner of a thread's tally (src/lib/util/util.h): the S3 backend its client (an attempt is
     * counted where the client starts it), a sub-store its parent's owner. Never fails.
     */
    const void *(*counts_owner)(struct s3l_store *s);
};

/* How long what read_ahead kept may answer a read: 10 s, time for a start's reads (the open, the
 * streams) and short enough that what another writer changed meanwhile is read again. */
#define S3L_STORE_READ_AHEAD_NS (10ll * 1000 * 1000 * 1000)

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
