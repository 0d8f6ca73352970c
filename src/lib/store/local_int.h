/*
 * The local (file://) backend's internal header: the upload handle and the helpers that
 * local.c (the vtable, paths, ETags) shares with local_staged.c (staged uploads, completed by
 * id from any process). docs/internals/store.md describes both.
 */
#ifndef S3L_STORE_LOCAL_INT_H
#define S3L_STORE_LOCAL_INT_H

#include <stdbool.h>

#include "store/store.h"

/* Staged files: "<key's directory>/.s3l-mpu-<32 hex>", hidden from listings (".s3l-") and never
 * swept (not ".s3l-tmp-"): only staged_complete and staged_abort remove one. */
#define S3L__LOCAL_STAGED_PREFIX ".s3l-mpu-"

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

/* local_staged.c: the staged-upload ops of s3l/sys/store.h. */
int s3l__local_upload_stage(struct s3l_upload *u, struct s3l_staged *out, struct s3l_error *err);
int s3l__local_staged_complete(struct s3l_store *s, const char *key, const struct s3l_staged *st,
                               struct s3l_object_info *info, struct s3l_error *err);
int s3l__local_staged_abort(struct s3l_store *s, const char *key, const char *upload_id,
                            struct s3l_error *err);

#endif
