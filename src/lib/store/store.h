/*
 * store: internal header of the storage module (dispatch, URL parsing, the local backend).
 * The public API is include/s3l/store.h (open by URL, name checks) and include/s3l/sys/store.h
 * (the vtable and dispatch functions).
 */
#ifndef S3L_STORE_INTERNAL_H
#define S3L_STORE_INTERNAL_H

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

/* Frees the base fields (url) of a store; backends call it from destroy. */
void s3l__store_base_cleanup(struct s3l_store *s);

/*
 * The owner of what s3l_store_counts(s) reports (ops->counts_owner, else s): the tally of a
 * thread that counts its own requests on s is made for it (src/lib/util/util.h). Never fails.
 */
const void *s3l__store_counts_owner(struct s3l_store *s);

#endif
