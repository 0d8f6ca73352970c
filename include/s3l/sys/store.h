/*
 * The storage vtable, for people writing a storage backend (local file://, S3, test wrappers).
 *
 * A store is rooted at a URL (file:///abs/path, s3://bucket/prefix); keys are relative to that
 * root, '/'-separated, never starting with '/'. Backends embed struct s3l_store as their first
 * member. Callers never call ops directly: they use the s3l_store_* dispatch functions, which
 * count operations and bytes and give test wrappers one place to hook in.
 *
 * An upload is invisible until published: begin, write, publish (local: fsync, rename, fsync of
 * the directory; S3: CompleteMultipartUpload or one PutObject) or abort.
 */
#ifndef S3L_SYS_STORE_H
#define S3L_SYS_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "s3l/error.h"

#define S3L_STORE_OPS_VERSION 1

/* Capability bits. */
#define S3L_STORE_CAP_PUT_IF_ABSENT 0x1  /* put with if_none_match is atomic */
#define S3L_STORE_CAP_CONDITIONAL 0x2    /* put with if_match (ETag) is atomic */
#define S3L_STORE_CAP_MULTIPART 0x4      /* uploads stream as parts */
#define S3L_STORE_CAP_SERVER_COPY 0x8    /* copy happens in the store */

/* What is known of one object. etag: opaque version token ("" when unknown), NUL-terminated. */
struct s3l_object_info {
    char *key; /* in list callbacks only; owned by the store, valid during the callback */
    uint64_t size;
    int64_t mtime_ns;
    char etag[132];
};

/* Conditions and metadata for put and upload_begin. Zero-initialise. */
struct s3l_put_options {
    bool if_none_match;     /* fail with S3L_EPRECONDITION_FAILED (or S3L_EEXISTS) if the key exists */
    const char *if_match;   /* fail with S3L_EPRECONDITION_FAILED unless the ETag is this */
    const char *content_type;
};

struct s3l_store;
struct s3l_upload;

typedef int (*s3l_store_list_cb)(void *ctx, const struct s3l_object_info *info);

struct s3l_store_ops {
    int version; /* S3L_STORE_OPS_VERSION */
    const char *name;
    unsigned caps;
    int (*upload_begin)(struct s3l_store *s, const char *key, const struct s3l_put_options *opts,
                        struct s3l_upload **out, struct s3l_error *err);
    int (*upload_write)(struct s3l_upload *u, const void *data, size_t len, struct s3l_error *err);
    int (*upload_publish)(struct s3l_upload *u, struct s3l_object_info *info,
                          struct s3l_error *err);
    void (*upload_abort)(struct s3l_upload *u); /* also frees u */
    int (*put)(struct s3l_store *s, const char *key, const void *data, size_t len,
               const struct s3l_put_options *opts, struct s3l_object_info *info,
               struct s3l_error *err);
    int (*get)(struct s3l_store *s, const char *key, uint64_t offset, uint64_t len, size_t max,
               uint8_t **data, size_t *data_len, struct s3l_error *err);
    int (*stat)(struct s3l_store *s, const char *key, struct s3l_object_info *info,
                struct s3l_error *err);
    int (*list)(struct s3l_store *s, const char *prefix, s3l_store_list_cb cb, void *ctx,
                struct s3l_error *err);
    int (*remove)(struct s3l_store *s, const char *key, struct s3l_error *err);
    int (*copy)(struct s3l_store *s, const char *src_key, const char *dst_key,
                struct s3l_error *err);
    void (*destroy)(struct s3l_store *s);
};

/* The base every backend embeds first. */
struct s3l_store {
    const struct s3l_store_ops *ops;
    char *url; /* the root URL, canonical (no trailing slash) */
    uint64_t n_ops;
    uint64_t bytes_written;
};

/* An upload's base, embedded first by backends. */
struct s3l_upload {
    struct s3l_store *store;
    char *key;
    uint64_t size; /* bytes written so far */
};

#endif
