/*
 * store: internal header of the storage module (dispatch, URL parsing, the local backend).
 * The public API is include/s3l/store.h (open by URL, name checks) and include/s3l/sys/store.h
 * (the vtable and dispatch functions).
 */
#ifndef S3L_STORE_INTERNAL_H
#define S3L_STORE_INTERNAL_H

#include <pthread.h>

#include "s3l/store.h"
#include "s3l/sys/store.h"

/* Objects up to this size get a content ETag (hex SHA-256) from the local backend. */
#define S3L__LOCAL_HASH_ETAG_MAX (1u << 20)

/* Names the local backend hides from listings: its temp files and lock files. */
#define S3L__LOCAL_TMP_PREFIX  ".s3l-tmp-"
#define S3L__LOCAL_LOCK_PREFIX ".s3l-lock-"

/*
 * Opens the local backend rooted at the absolute directory root (no trailing slash, "/" alone
 * allowed). url is the canonical URL to record. create: mkdir -p the root.
 * Errors: S3L_ENOT_FOUND, S3L_EINVALID_CONFIG (not a directory), S3L_EPERMISSION_DENIED, ENOMEM.
 */
int s3l__store_local_open(const char *root, const char *url, bool create, struct s3l_store **out,
                          struct s3l_error *err);

/*
 * The S3 backend's entry point, implemented by src/lib/store/s3.c; opts->s3 may point to a
 * struct s3l_s3_store_options (include/s3l/s3.h).
 */
int s3l__store_s3_open(const char *url, const struct s3l_store_options *opts,
                       struct s3l_store **out, struct s3l_error *err);

/*
 * Parses a file:// URL into an absolute, normalised path (no trailing slash, no "." or empty
 * segments; ".." refused) and the canonical URL. Both owned by the caller (s3l_free).
 * S3L_EINVALID_CONFIG naming the URL; S3L_ENOMEM.
 */
int s3l__file_url_parse(const char *url, char **path, char **canonical, struct s3l_error *err);

/*
 * s3_ahead.c: the answers the S3 backend read ahead (ops->read_ahead), kept for the get, stat and
 * list calls that follow. Thread-safe. init: S3L_ENOMEM when the mutex cannot be made.
 */
struct s3l__ahead_entry;
struct s3l__ahead {
    pthread_mutex_t mu;
    struct s3l__ahead_entry **e;
    size_t n, cap;
};
int s3l__ahead_init(struct s3l__ahead *a);
void s3l__ahead_cleanup(struct s3l__ahead *a);
/* A new entry for one read (key copied; NULL: out of memory), then its answer: rc and err (a
 * failure), data (GET: taken over, NUL-terminated, len bytes) and info; a listing's objects one
 * by one (add: S3L_ENOMEM). keep takes the entry over (replacing one of the same read). */
struct s3l__ahead_entry *s3l__ahead_entry_new(enum s3l_read_kind kind, const char *key,
                                              size_t max);
void s3l__ahead_entry_set(struct s3l__ahead_entry *e, int rc, const struct s3l_error *err,
                          uint8_t *data, size_t len, const struct s3l_object_info *info);
int s3l__ahead_entry_add(struct s3l__ahead_entry *e, const struct s3l_object_info *info);
void s3l__ahead_entry_free(struct s3l__ahead_entry *e); /* one never kept; NULL: no-op */
void s3l__ahead_keep(struct s3l__ahead *a, struct s3l__ahead_entry *e);
/* Each: true when a kept answer served the call (its result in *rc, outputs filled as the op
 * would fill them), false when the call must go to the store. get: only a whole object (offset
 * 0, len UINT64_MAX) with the max it was read with. list: cb runs with no lock held. */
bool s3l__ahead_get(struct s3l__ahead *a, const char *key, uint64_t offset, uint64_t len,
                    size_t max, uint8_t **data, size_t *data_len, struct s3l_object_info *info,
                    struct s3l_error *err, int *rc);
bool s3l__ahead_stat(struct s3l__ahead *a, const char *key, struct s3l_object_info *info,
                     struct s3l_error *err, int *rc);
bool s3l__ahead_list(struct s3l__ahead *a, const char *prefix, s3l_store_list_cb cb, void *ctx,
                     struct s3l_error *err, int *rc);
/* Whether the read ahead *it must be sent: no answer of its kind for its key is kept (one kept is
 * not read again). An S3L_READ_GET_FRESH drops what is kept for its key and becomes a GET. */
bool s3l__ahead_wanted(struct s3l__ahead *a, struct s3l_read_item *it);
/* A write to key: drops what was kept for it, and every listing whose prefix key starts with. */
void s3l__ahead_forget(struct s3l__ahead *a, const char *key);

/* Frees the base fields (url) of a store; backends call it from destroy. */
void s3l__store_base_cleanup(struct s3l_store *s);

/*
 * The owner of what s3l_store_counts(s) reports (ops->counts_owner, else s): the tally of a
 * thread that counts its own requests on s is made for it (src/lib/util/util.h). Never fails.
 */
const void *s3l__store_counts_owner(struct s3l_store *s);

#endif
