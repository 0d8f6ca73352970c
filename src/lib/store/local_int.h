/*
 * The local (file://) backend's internal header: the store, the upload handle and the helpers
 * that local.c (the vtable, paths, ETags) shares with local_staged.c (staged uploads, completed
 * by id from any process) and local_walk.c (listing and the sweep). docs/internals/store.md.
 */
#ifndef S3L_STORE_LOCAL_INT_H
#define S3L_STORE_LOCAL_INT_H

#include <stdbool.h>

#include "store/store.h"

/* Staged files: "<key's directory>/.s3l-mpu-<32 hex>", hidden from listings (".s3l-") and never
 * swept (not ".s3l-tmp-"): only staged_complete and staged_abort remove one. */
#define S3L__LOCAL_STAGED_PREFIX ".s3l-mpu-"

struct local_store {
    struct s3l_store base;
    char *root; /* absolute, no trailing slash ("/" alone for the root directory) */
};

struct local_upload {
    struct s3l_upload base;
    int fd;
    char *tmp;  /* temp file path */
    char *path; /* target path */
    char *dir;  /* target's directory */
    bool if_none_match;
    char *if_match;
};

/* The on-disk path of key under the store's root (long components mapped); s3l_free. */
char *s3l__local_key_path(struct s3l_store *s, const char *key);
/* The directory part of path; s3l_free. */
char *s3l__local_dir_of(const char *path);
/* "a/b"; s3l_free. */
char *s3l__local_join(const char *a, const char *b);
/* Size, mtime and ETag (the backend's rule) of the regular file at path. S3L_ENOT_FOUND. */
int s3l__local_info(const char *path, struct s3l_object_info *info, struct s3l_error *err);
/* Frees u (closing its descriptor; the temp file is left as it is). */
void s3l__local_upload_free(struct local_upload *u);
/* The on-disk path of key under root (long components mapped); s3l_free; NULL: no memory. */
char *s3l__local_disk_path(const char *root, const char *key);
/* Whether the on-disk name is a mapped long component; *hex points at its hash. */
bool s3l__local_mapped_name(const char *name, const char **hex);
/* The full component of a mapped name from its sidecar in dir (s3l_free), or NULL when the
 * sidecar is missing or does not hash to the name. */
char *s3l__local_read_sidecar(const char *dir, const char *hex);
/* Removes dir's lock file when nothing else is in dir, under the lock (a lock file unlinked
 * while a publisher holds it would let two publishers pass If-Match). True when it is gone. */
bool s3l__local_prune_lock(const char *dir);

/* local_walk.c: the list and sweep ops of s3l/sys/store.h. */
int s3l__local_list(struct s3l_store *s, const char *prefix, s3l_store_list_cb cb, void *ctx,
                    struct s3l_error *err);
int s3l__local_sweep(struct s3l_store *s, const char *prefix, int64_t before_ns, uint64_t *removed,
                     struct s3l_error *err);

/* local_staged.c: the staged-upload ops of s3l/sys/store.h. */
int s3l__local_upload_stage(struct s3l_upload *u, struct s3l_staged *out, struct s3l_error *err);
int s3l__local_staged_complete(struct s3l_store *s, const char *key, const struct s3l_staged *st,
                               struct s3l_object_info *info, struct s3l_error *err);
int s3l__local_staged_abort(struct s3l_store *s, const char *key, const char *upload_id,
                            struct s3l_error *err);

#endif
