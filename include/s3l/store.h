/*
 * Opening a store by URL: the entry point an embedder or the CLI uses to reach a destination.
 *
 * URLs: file:///ABSOLUTE/PATH (also file://localhost/ABSOLUTE/PATH; %XX escapes are decoded) for
 * a local directory, s3://BUCKET/PREFIX for S3 (wired in by the S3 backend). The operations on an
 * open store are in s3l/sys/store.h (s3l_store_put, s3l_store_list, ...).
 */
#ifndef S3L_STORE_H
#define S3L_STORE_H

#include <stdbool.h>
#include <stddef.h>

#include "s3l/error.h"
#include "s3l/sys/store.h"

#define S3L_STORE_OPTIONS_VERSION 1

/* Options of s3l_store_open. Zero-initialise, then set version. */
struct s3l_store_options {
    int version;          /* S3L_STORE_OPTIONS_VERSION */
    bool create;          /* file://: create the root directory (and parents) if missing */
    const char *region;   /* s3://: region, or NULL for the configured/discovered one */
    const char *endpoint; /* s3://: an S3-compatible endpoint URL (path-style), or NULL */
    const void *s3;       /* s3://: backend-specific options (the S3 backend documents them) */
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

#endif
