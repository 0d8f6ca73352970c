/*
 * The stores of a run: the destination's and an object prefix's, opened from the run's access
 * options (endpoint, region, addressing, credentials, encryption, storage class) and counted and
 * freed here, so that the runner (pipeline/) reaches a store only through the destination's
 * module and never builds the store's or the S3 backend's options itself (docs/design.md: the
 * parts and their edges).
 */
#include "commit.h"
#include "s3l/store.h"

int s3l__store_access_open(const struct s3l__store_access *a, const char *url, bool create,
                           struct s3l_store **out, struct s3l_error *err)
{
    struct s3l_store_options so = {0};
    so.version = S3L_STORE_OPTIONS_VERSION;
    so.create = create;
    so.endpoint = a->endpoint;
    so.region = a->region;
    so.s3 = a->s3;
    so.path_style = a->path_style;
    so.credentials = a->credentials;
    so.sse = a->sse;
    so.sse_kms_key_id = a->sse_kms_key_id;
    so.storage_class = a->storage_class;
    return s3l_store_open(url, &so, out, err);
}

void s3l__store_access_counts(struct s3l_store *s, struct s3l_store_counts *out)
{
    s3l_store_counts(s, out);
}

uint64_t s3l__store_access_bytes_written(const struct s3l_store *s)
{
    return s3l_store_bytes_written(s);
}

void s3l__store_access_free(struct s3l_store *s)
{
    s3l_store_free(s);
}
