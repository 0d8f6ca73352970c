/*
 * Settling refusals that a prefix-conditioned policy makes (issue 11, item 3). The minimal
 * policy grants GetObject, PutObject, DeleteObject and AbortMultipartUpload on the keys under
 * BUCKET/PREFIX/, and ListBucket (and GetBucketLocation) on the bucket only with `StringLike
 * s3:prefix PREFIX/...`. Under it, S3 (and Ceph RGW 16) answer 403 where a wider policy gets 404
 * or 200: a GET or HEAD of a missing key (no ListBucket without s3:prefix), HeadBucket and
 * GetBucketLocation (they carry no s3:prefix). Both are told apart here with the one request the
 * policy grants, a ListObjectsV2 under PREFIX/; every list s3land makes starts with PREFIX/
 * (store/s3.c keys are PREFIX/ + a relative key). DeleteObjects refused as a whole is in
 * multipart.c.
 */
#include <pthread.h>
#include <stdarg.h>

#include "s3/s3_int.h"

/* Appends to err's message how a refusal was settled (the refusal's own text stays first). */
static void note(struct s3l_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void note(struct s3l_error *err, const char *fmt, ...)
{
    if (!err)
        return;
    size_t at = strlen(err->message);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message + at, sizeof(err->message) - at, fmt, ap);
    va_end(ap);
}

/*
 * A 403 on a GetObject or HeadObject of a key that may not exist (issue 11, item 3). S3 answers
 * a request for a missing key with 403, not 404, when the caller may not list it: "If you don't
 * have the s3:ListBucket permission, Amazon S3 returns an HTTP status code 403 Access Denied
 * error" (S3 API reference, GetObject and HeadObject, "Permissions"). Under a policy that grants
 * ListBucket only with a `StringLike s3:prefix` condition, the GET carries no s3:prefix, so the
 * condition is not met and every missing key is a 403 (Ceph RGW 16 does the same). A
 * ListObjectsV2 of that very key (prefix = the key, max-keys 1) carries it and is allowed; the
 * key, when it exists, is the first one listed (keys sort by their UTF-8 bytes and the key is a
 * prefix of every other key listed). So: listed absent, NOT_FOUND; listed present, the 403
 * stands (a real refusal: GetObject not granted on it); the list refused as well, the 403
 * stands, unless the list tells a sharper class (AUTH_INVALID, AUTH_EXPIRED: a HEAD's empty 403
 * cannot say "bad signature", the list's body can).
 */
int s3l__settle_403(struct s3l_s3_client *c, const char *bucket, const char *key,
                    struct s3l_error *err)
{
    struct s3l_s3_list_page p;
    struct s3l_error le = {0};
    int rc = s3l_s3_list_objects(c, bucket, key, NULL, NULL, 1, &p, &le);
    bool present = rc == 0 && p.n_objects > 0 && strcmp(p.objects[0].key, key) == 0;
    if (rc == 0)
        s3l_s3_list_page_free(&p);
    if (rc == S3L_EAUTH_INVALID || rc == S3L_EAUTH_EXPIRED || rc == S3L_ENOMEM) {
        if (err)
            *err = le;
        return rc;
    }
    if (rc != 0 || present) {
        note(err,
             rc ? " (a ListObjectsV2 of the key, to tell a missing key from a refused one, was "
                  "refused too: %s)"
                : " (the key exists: ListObjectsV2 lists it%s)",
             rc ? s3l_error_name(rc) : "");
        return S3L_EPERMISSION_DENIED;
    }
    /* The 403 was S3's way of saying "no such key" to a caller who may not list it. */
    s3l_error_clear(err);
    return s3l_error_set(err, S3L_ENOT_FOUND,
                         "%.200s in bucket %.63s: no such key (the store answered 403 "
                         "AccessDenied, and a ListObjectsV2 of the key says it is absent)",
                         key, bucket);
}

int s3l_s3_bucket_probe(struct s3l_s3_client *c, const char *bucket, const char *prefix,
                        char region[64], struct s3l_error *err)
{
    region[0] = 0;
    int rc = s3l__check_bucket(bucket, err);
    if (rc != 0)
        return rc;
    size_t pn = prefix ? strlen(prefix) : 0;
    if (pn > 0 && prefix[pn - 1] != '/')
        return s3l_error_set(err, S3L_EINVALID_ARGUMENT,
                             "bucket probe of %s: prefix \"%.200s\" must end with '/'", bucket,
                             prefix);
    struct s3l__http_req r = {.op = "HeadBucket", .method = "HEAD", .bucket = bucket};
    struct s3l_error he = {0};
    rc = s3l__run1(c, &r, &he);
    char said[64];
    snprintf(said, sizeof(said), "%s", r.bucket_region);
    s3l__http_req_cleanup(&r);
    if (rc == S3L_EPERMISSION_DENIED && !said[0]) {
        /* HeadBucket (s3:ListBucket without s3:prefix) denied by a prefix condition: a list under
         * the prefix is what the policy grants, and it reaches the bucket in its region too
         * (region.c follows it there). */
        struct s3l_s3_list_page p;
        struct s3l_error le = {0};
        rc = s3l_s3_list_objects(c, bucket, prefix, NULL, NULL, 1, &p, &le);
        if (rc != 0) {
            if (err)
                *err = le;
            note(err, " (HeadBucket was refused too, so the bucket may not be reached)");
            return rc;
        }
        s3l_s3_list_page_free(&p);
    } else if (rc != 0 && rc != S3L_EPERMISSION_DENIED) {
        if (err)
            *err = he;
        return rc;
    }
    /* 200, a 403 that names the bucket's region (x-amz-bucket-region: the bucket exists, there),
     * or the list worked. */
    pthread_mutex_lock(&c->mu);
    snprintf(region, 64, "%s", said[0] ? said : c->region);
    pthread_mutex_unlock(&c->mu);
    return 0;
}
