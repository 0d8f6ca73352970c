/*
 * Server-side copies that keep encryption and storage class. A copy carries no encryption of its
 * source: S3 encrypts the new object as the request asks, else with the bucket's default (S3 API
 * reference, CopyObject: "x-amz-server-side-encryption ... If you don't specify encryption
 * information in your copy request, the encryption setting of the target object is set to the
 * default encryption configuration of the destination bucket"), and the storage class likewise
 * (x-amz-storage-class, default STANDARD). So every copy is sent with the caller's SSE headers and
 * storage class. Ceph RGW 16 answers CopyObject of an SSE-KMS object 501 NotImplemented (with or
 * without the headers; ../shared/research and issue 11), while UploadPartCopy from it into a
 * multipart upload created with the SSE headers works: a copy that is not implemented becomes
 * CreateMultipartUpload (same headers) + UploadPartCopy ranges + Complete.
 */
#include <stdio.h>
#include <string.h>

#include "s3/s3_int.h"

/* What of the caller's options a copy sends: encryption and storage class only (content type and
 * metadata are copied from the source: x-amz-metadata-directive COPY, S3's default). */
static struct s3l_s3_put_options copy_opts(const struct s3l_s3_put_options *o)
{
    struct s3l_s3_put_options c = {0};
    if (o) {
        c.sse = o->sse;
        c.sse_kms_key_id = o->sse_kms_key_id;
        c.storage_class = o->storage_class;
    }
    return c;
}

int s3l_s3_copy_object_with(struct s3l_s3_client *c, const char *src_bucket,
                            const char *src_key, const char *bucket, const char *key,
                            const struct s3l_s3_put_options *opts, struct s3l_s3_object *out,
                            struct s3l_error *err)
{
    int rc = s3l__check_bucket(src_bucket, err);
    if (rc == 0)
        rc = s3l__check_bucket(bucket, err);
    if (rc == 0)
        rc = s3l__check_key(src_key, err);
    if (rc == 0)
        rc = s3l__check_key(key, err);
    if (rc != 0)
        return rc;
    struct s3l__http_req r = {.op = "CopyObject", .method = "PUT", .bucket = bucket, .key = key,
                              .error_in_200 = true, .no_low_speed = true};
    r.has_body = true; /* empty, with Content-Length: 0 */
    struct s3l_buf src;
    s3l_buf_init(&src, 8192);
    struct s3l_s3_put_options o = copy_opts(opts);
    rc = s3l__copy_source(&src, src_bucket, src_key);
    if (rc == 0)
        rc = s3l__http_add_header(&r, "x-amz-copy-source", (char *)src.ptr);
    if (rc == 0 && (rc = s3l__put_headers(&r, &o, true)) != 0)
        s3l_error_set(err, rc, "CopyObject %s: an option holds CR or LF", key);
    if (rc == 0)
        rc = s3l__run1(c, &r, err);
    if (rc == 0) {
        struct s3l_s3_object ob = {0};
        rc = s3l__xml_copy_result(r.resp.ptr, r.resp.len, ob.etag, &ob.mtime_ns, err);
        if (rc == 0 && out)
            *out = ob;
        if (rc != 0)
            s3l_error_prefix(err, "CopyObject %s", key);
    }
    s3l_buf_free(&src);
    s3l__http_req_cleanup(&r);
    return rc;
}

int s3l_s3_copy_object(struct s3l_s3_client *c, const char *src_bucket, const char *src_key,
                       const char *bucket, const char *key, struct s3l_s3_object *out,
                       struct s3l_error *err)
{
    return s3l_s3_copy_object_with(c, src_bucket, src_key, bucket, key, NULL, out, err);
}

int s3l_s3_copy_sized_with(struct s3l_s3_client *c, const char *src_bucket, const char *src_key,
                           uint64_t size, const char *bucket, const char *key, uint64_t threshold,
                           uint64_t part_size, const struct s3l_s3_put_options *opts,
                           struct s3l_s3_object *out, struct s3l_error *err)
{
    threshold = threshold ? threshold : (uint64_t)5 << 30;
    part_size = part_size ? part_size : (uint64_t)512 << 20;
    if (part_size < ((uint64_t)5 << 20))
        return s3l_error_set(err, S3L_EINVALID_CONFIG, "copy part size %llu is below 5 MiB",
                             (unsigned long long)part_size);
    struct s3l_s3_put_options o = copy_opts(opts);
    if (size <= threshold) {
        int rc = s3l_s3_copy_object_with(c, src_bucket, src_key, bucket, key, &o, out, err);
        if (rc == 0 && out)
            out->size = size;
        if (rc != S3L_EUNSUPPORTED)
            return rc;
        s3l_error_clear(err); /* RGW and SSE-KMS: the parts' way below works */
    }
    /* a part may be as large as the object when it is under the threshold */
    uint64_t ps = size <= threshold ? S3L_MAX(size, (uint64_t)1) : part_size;
    return s3l__copy_parts(c, src_bucket, src_key, bucket, key, size, ps, &o, out, err);
}

int s3l_s3_copy_sized(struct s3l_s3_client *c, const char *src_bucket, const char *src_key,
                      uint64_t size, const char *bucket, const char *key, uint64_t threshold,
                      uint64_t part_size, struct s3l_s3_object *out, struct s3l_error *err)
{
    return s3l_s3_copy_sized_with(c, src_bucket, src_key, size, bucket, key, threshold,
                                  part_size, NULL, out, err);
}

int s3l_s3_copy_with(struct s3l_s3_client *c, const char *src_bucket, const char *src_key,
                     const char *bucket, const char *key, uint64_t threshold, uint64_t part_size,
                     const struct s3l_s3_put_options *opts, struct s3l_s3_object *out,
                     struct s3l_error *err)
{
    if (part_size && part_size < ((uint64_t)5 << 20))
        return s3l_error_set(err, S3L_EINVALID_CONFIG, "copy part size %llu is below 5 MiB",
                             (unsigned long long)part_size);
    struct s3l_s3_object src;
    int rc = s3l_s3_head_object(c, src_bucket, src_key, &src, err);
    if (rc != 0)
        return rc;
    return s3l_s3_copy_sized_with(c, src_bucket, src_key, src.size, bucket, key, threshold,
                                  part_size, opts, out, err);
}

int s3l_s3_copy(struct s3l_s3_client *c, const char *src_bucket, const char *src_key,
                const char *bucket, const char *key, uint64_t threshold, uint64_t part_size,
                struct s3l_s3_object *out, struct s3l_error *err)
{
    return s3l_s3_copy_with(c, src_bucket, src_key, bucket, key, threshold, part_size, NULL, out,
                            err);
}

void s3l__kms_hint(const struct s3l_s3_put_options *opts, int rc, struct s3l_error *err)
{
    if (rc != S3L_EPERMISSION_DENIED || !opts || !opts->sse || strcmp(opts->sse, "aws:kms") != 0)
        return;
    size_t n = strlen(err->message);
    snprintf(err->message + n, sizeof(err->message) - n,
             "; a multipart upload with SSE-KMS needs kms:GenerateDataKey and kms:Decrypt on "
             "the key (%.100s), besides s3:PutObject",
             opts->sse_kms_key_id ? opts->sse_kms_key_id : "the bucket's default");
}
