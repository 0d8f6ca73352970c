/*
 * Requests sent together: n independent CopyObjects in one run of the transport (http.c), so
 * they travel at once, up to the client's in-flight limit, as the parts of an upload do (issue 14
 * item 2: an epoch's copies go out at once, not one after the other).
 */
#include <string.h>

#include "s3/s3_int.h"

struct copy_req {
    struct s3l__http_req r;
    struct s3l_buf src;
};

/* Fills q as CopyObject of src_key to key (both in bucket). */
static int copy_request(struct copy_req *q, const char *bucket, const char *src_key,
                        const char *key, struct s3l_error *err)
{
    int rc = s3l__check_key(src_key, err);
    if (rc == 0)
        rc = s3l__check_key(key, err);
    if (rc != 0)
        return rc;
    q->r = (struct s3l__http_req){.op = "CopyObject", .method = "PUT", .bucket = bucket,
                                  .key = key, .error_in_200 = true, .no_low_speed = true};
    q->r.has_body = true; /* empty, with Content-Length: 0 */
    s3l_buf_init(&q->src, 8192);
    rc = s3l__copy_source(&q->src, bucket, src_key);
    if (rc == 0)
        rc = s3l__http_add_header(&q->r, "x-amz-copy-source", (char *)q->src.ptr);
    return rc ? s3l_error_set(err, rc, "CopyObject %s: cannot prepare the request", key) : 0;
}

int s3l_s3_copy_objects(struct s3l_s3_client *c, const char *bucket, const char *const *src_keys,
                        const char *const *keys, size_t n, struct s3l_error *err)
{
    int rc = s3l__check_bucket(bucket, err);
    if (rc != 0 || n == 0)
        return rc;
    struct copy_req *q = s3l_calloc(n, sizeof(*q));
    struct s3l__http_req **reqs = s3l_calloc(n, sizeof(*reqs));
    if (!q || !reqs)
        rc = s3l_error_set(err, S3L_ENOMEM, "out of memory copying %zu objects", n);
    size_t made = 0;
    for (; rc == 0 && made < n; made++) {
        rc = copy_request(&q[made], bucket, src_keys[made], keys[made], err);
        reqs[made] = &q[made].r;
    }
    if (rc == 0)
        rc = s3l__http_run(c, reqs, n, err);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        struct s3l_s3_object o = {0};
        rc = s3l__xml_copy_result(q[i].r.resp.ptr, q[i].r.resp.len, o.etag, &o.mtime_ns, err);
        if (rc != 0)
            s3l_error_prefix(err, "CopyObject %s", keys[i]);
    }
    for (size_t i = 0; q && i < made; i++) {
        s3l_buf_free(&q[i].src);
        s3l__http_req_cleanup(&q[i].r);
    }
    s3l_free(reqs);
    s3l_free(q);
    return rc;
}
