/*
 * Multipart uploads (S3 API Reference: CreateMultipartUpload, UploadPart, UploadPartCopy,
 * CompleteMultipartUpload, AbortMultipartUpload, ListParts, ListMultipartUploads) and
 * DeleteObjects. Rules kept here: parts are numbered 1..10,000; a Complete names at least one
 * part (an empty object is a PutObject with Content-Length 0, never a zero-part upload); a
 * Complete is never abandoned for being slow; a 200 carrying an <Error> is that error.
 */
#include <stdio.h>
#include <stdlib.h>

#include "s3/s3_int.h"

static int check_upload(const char *bucket, const char *key, const char *upload_id,
                        struct s3l_error *err)
{
    int rc = s3l__check_bucket(bucket, err);
    if (rc == 0)
        rc = s3l__check_key(key, err);
    if (rc == 0 && (!upload_id || !*upload_id))
        rc = s3l_error_set(err, S3L_EINVALID_ARGUMENT, "upload of %s: no upload id", key);
    return rc;
}

int s3l_s3_create_multipart(struct s3l_s3_client *c, const char *bucket, const char *key,
                            const struct s3l_s3_put_options *opts, char **upload_id,
                            struct s3l_error *err)
{
    *upload_id = NULL;
    int rc = s3l__check_bucket(bucket, err);
    if (rc == 0)
        rc = s3l__check_key(key, err);
    if (rc != 0)
        return rc;
    struct s3l__http_req r = {.op = "CreateMultipartUpload", .method = "POST", .bucket = bucket,
                              .key = key, .has_body = true};
    s3l__http_add_query(&r, "uploads", "");
    if ((rc = s3l__put_headers(&r, opts, true)) != 0)
        s3l_error_set(err, rc, "CreateMultipartUpload %s: an option holds CR or LF", key);
    if (rc == 0 && (rc = s3l__run1(c, &r, err)) != 0)
        s3l__kms_hint(opts, rc, err); /* copy.c: which KMS permissions it takes */
    if (rc == 0 && (rc = s3l__xml_initiate(r.resp.ptr, r.resp.len, upload_id, err)) != 0)
        s3l_error_prefix(err, "CreateMultipartUpload %s", key);
    s3l__http_req_cleanup(&r);
    return rc;
}

int s3l__part_request(struct s3l_s3_client *c, struct s3l__http_req *r, const char *bucket,
                    const char *key, const char *upload_id, const void *data, size_t len,
                    char number[16], int n, char b64[32], const char *digest)
{
    CURL *easy = r->easy; /* a handle used before: curl keeps its buffers */
    memset(r, 0, sizeof(*r));
    r->easy = easy;
    r->op = "UploadPart";
    r->method = "PUT";
    r->bucket = bucket;
    r->key = key;
    r->body = data;
    r->body_len = len;
    r->has_body = true;
    snprintf(number, 16, "%d", n);
    s3l__http_add_query(r, "partNumber", number);
    s3l__http_add_query(r, "uploadId", upload_id);
    if (digest)
        return s3l__http_add_header(r, digest, b64);
    return s3l__integrity_header(c, r, len ? data : "", len, b64);
}

static int check_part(struct s3l_s3_client *c, const char *key, int number, size_t len,
                      struct s3l_error *err)
{
    if (number < 1 || number > 10000)
        return s3l_error_set(err, S3L_EINVALID_ARGUMENT,
                             "UploadPart %s: part number %d is outside 1..10000", key, number);
    if (len > c->max_request)
        return s3l_error_set(err, S3L_ETOO_LARGE, "UploadPart %s: part %d of %zu bytes is over "
                             "the cap of %zu", key, number, len, c->max_request);
    return 0;
}

int s3l_s3_upload_part(struct s3l_s3_client *c, const char *bucket, const char *key,
                       const char *upload_id, const void *data, size_t len,
                       struct s3l_s3_part *part, struct s3l_error *err)
{
    const void *d[1] = {data};
    return s3l_s3_upload_parts(c, bucket, key, upload_id, d, &len, part, 1, err);
}

struct part_slot {
    struct s3l__http_req r;
    char number[16];
    char b64[32];
};

int s3l_s3_upload_parts(struct s3l_s3_client *c, const char *bucket, const char *key,
                        const char *upload_id, const void *const *data, const size_t *len,
                        struct s3l_s3_part *parts, size_t n, struct s3l_error *err)
{
    int rc = check_upload(bucket, key, upload_id, err);
    for (size_t i = 0; rc == 0 && i < n; i++)
        rc = check_part(c, key, parts[i].number, len[i], err);
    if (rc != 0 || n == 0)
        return rc;
    struct part_slot *slots = s3l_calloc(n, sizeof(*slots));
    struct s3l__http_req **reqs = s3l_calloc(n, sizeof(*reqs));
    if (!slots || !reqs)
        rc = s3l_error_set(err, S3L_ENOMEM, "out of memory");
    for (size_t i = 0; rc == 0 && i < n; i++) {
        rc = s3l__part_request(c, &slots[i].r, bucket, key, upload_id, data[i], len[i],
                               slots[i].number, parts[i].number, slots[i].b64, NULL);
        reqs[i] = &slots[i].r;
    }
    if (rc == 0)
        rc = s3l__http_run(c, reqs, n, err);
    for (size_t i = 0; slots && i < n; i++) {
        if (slots[i].r.rc == 0 && slots[i].r.status) {
            memcpy(parts[i].etag, slots[i].r.etag, sizeof(parts[i].etag));
            parts[i].size = len[i];
            if (!parts[i].etag[0] && rc == 0)
                rc = s3l_error_set(err, S3L_ECORRUPT, "UploadPart %s part %d: no ETag in the "
                                   "answer", key, parts[i].number);
        }
        s3l__http_req_cleanup(&slots[i].r);
    }
    s3l_free(slots);
    s3l_free(reqs);
    return rc;
}

int s3l_s3_upload_part_copy(struct s3l_s3_client *c, const char *bucket, const char *key,
                            const char *upload_id, const char *src_bucket, const char *src_key,
                            uint64_t first, uint64_t last, struct s3l_s3_part *part,
                            struct s3l_error *err)
{
    int rc = check_upload(bucket, key, upload_id, err);
    if (rc == 0)
        rc = s3l__check_bucket(src_bucket, err);
    if (rc == 0)
        rc = s3l__check_key(src_key, err);
    if (rc == 0)
        rc = check_part(c, key, part->number, 0, err);
    if (rc == 0 && last < first)
        rc = s3l_error_set(err, S3L_EINVALID_ARGUMENT, "UploadPartCopy %s: empty range", key);
    if (rc != 0)
        return rc;
    struct s3l__http_req r = {.op = "UploadPartCopy", .method = "PUT", .bucket = bucket,
                              .key = key, .has_body = true, .error_in_200 = true,
                              .no_low_speed = true};
    char number[16], range[64];
    snprintf(number, sizeof(number), "%d", part->number);
    snprintf(range, sizeof(range), "bytes=%llu-%llu", (unsigned long long)first,
             (unsigned long long)last);
    s3l__http_add_query(&r, "partNumber", number);
    s3l__http_add_query(&r, "uploadId", upload_id);
    struct s3l_buf src;
    s3l_buf_init(&src, 8192);
    rc = s3l__copy_source(&src, src_bucket, src_key);
    if (rc == 0)
        rc = s3l__http_add_header(&r, "x-amz-copy-source", (char *)src.ptr);
    if (rc == 0)
        rc = s3l__http_add_header(&r, "x-amz-copy-source-range", range);
    if (rc == 0)
        rc = s3l__run1(c, &r, err);
    if (rc == 0) {
        rc = s3l__xml_copy_result(r.resp.ptr, r.resp.len, part->etag, NULL, err);
        part->size = last - first + 1;
        if (rc != 0)
            s3l_error_prefix(err, "UploadPartCopy %s part %d", key, part->number);
    }
    s3l_buf_free(&src);
    s3l__http_req_cleanup(&r);
    return rc;
}

static int complete_body(struct s3l_buf *b, const struct s3l_s3_part *parts, size_t n,
                         const char *key, struct s3l_error *err)
{
    int rc = s3l_buf_append_str(b, "<CompleteMultipartUpload "
                                   "xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">");
    for (size_t i = 0; rc == 0 && i < n; i++) {
        if (parts[i].number < 1 || parts[i].number > 10000 || !parts[i].etag[0] ||
            (i > 0 && parts[i].number <= parts[i - 1].number))
            return s3l_error_set(err, S3L_EINVALID_ARGUMENT,
                                 "CompleteMultipartUpload %s: part %zu (number %d) is out of "
                                 "order or has no ETag", key, i, parts[i].number);
        /* ETags are hex digits and '-': nothing to escape */
        rc = s3l_buf_printf(b, "<Part><PartNumber>%d</PartNumber><ETag>\"%s\"</ETag></Part>",
                            parts[i].number, parts[i].etag);
    }
    if (rc == 0)
        rc = s3l_buf_append_str(b, "</CompleteMultipartUpload>");
    return rc ? s3l_error_set(err, rc, "CompleteMultipartUpload %s: body too large", key) : 0;
}

int s3l_s3_complete_multipart(struct s3l_s3_client *c, const char *bucket, const char *key,
                              const char *upload_id, const struct s3l_s3_part *parts, size_t n,
                              struct s3l_s3_object *out, struct s3l_error *err)
{
    return s3l__complete(c, bucket, key, upload_id, parts, n, false, NULL, out, err);
}

int s3l__complete(struct s3l_s3_client *c, const char *bucket, const char *key,
                  const char *upload_id, const struct s3l_s3_part *parts, size_t n,
                  bool if_none_match, const char *if_match, struct s3l_s3_object *out,
                  struct s3l_error *err)
{
    int rc = check_upload(bucket, key, upload_id, err);
    if (rc == 0 && (n == 0 || n > 10000))
        rc = s3l_error_set(err, S3L_EINVALID_ARGUMENT,
                           "CompleteMultipartUpload %s: %zu parts (1..10000 allowed; an empty "
                           "object is a PutObject)", key, n);
    if (rc != 0)
        return rc;
    struct s3l_buf body;
    s3l_buf_init(&body, 2u << 20);
    rc = complete_body(&body, parts, n, key, err);
    struct s3l__http_req r = {.op = "CompleteMultipartUpload", .method = "POST",
                              .bucket = bucket, .key = key, .has_body = true,
                              .no_low_speed = true, .error_in_200 = true};
    r.body = body.ptr;
    r.body_len = body.len;
    s3l__http_add_query(&r, "uploadId", upload_id);
    if (if_none_match)
        s3l__http_add_header(&r, "If-None-Match", "*");
    if (if_match)
        s3l__http_add_header(&r, "If-Match", if_match);
    if (rc == 0)
        rc = s3l__run1(c, &r, err);
    if (rc == 0) {
        struct s3l_s3_object o = {0};
        rc = s3l__xml_complete(r.resp.ptr, r.resp.len, o.etag, err);
        if (rc == 0 && out)
            *out = o;
        if (rc != 0)
            s3l_error_prefix(err, "CompleteMultipartUpload %s", key);
    }
    s3l__http_req_cleanup(&r);
    s3l_buf_free(&body);
    return rc;
}

int s3l_s3_abort_multipart(struct s3l_s3_client *c, const char *bucket, const char *key,
                           const char *upload_id, struct s3l_error *err)
{
    int rc = check_upload(bucket, key, upload_id, err);
    if (rc != 0)
        return rc;
    struct s3l__http_req r = {.op = "AbortMultipartUpload", .method = "DELETE",
                              .bucket = bucket, .key = key};
    s3l__http_add_query(&r, "uploadId", upload_id);
    rc = s3l__run1(c, &r, err);
    s3l__http_req_cleanup(&r);
    return rc;
}

int s3l_s3_list_parts(struct s3l_s3_client *c, const char *bucket, const char *key,
                      const char *upload_id, int marker, int max, struct s3l_s3_parts_page *page,
                      struct s3l_error *err)
{
    memset(page, 0, sizeof(*page));
    int rc = check_upload(bucket, key, upload_id, err);
    if (rc != 0)
        return rc;
    struct s3l__http_req r = {.op = "ListParts", .method = "GET", .bucket = bucket, .key = key};
    char mk[16], mx[16];
    snprintf(mk, sizeof(mk), "%d", marker > 0 ? marker : 0);
    snprintf(mx, sizeof(mx), "%d", max > 0 && max <= 1000 ? max : 1000);
    s3l__http_add_query(&r, "uploadId", upload_id);
    s3l__http_add_query(&r, "max-parts", mx);
    if (marker > 0)
        s3l__http_add_query(&r, "part-number-marker", mk);
    rc = s3l__run1(c, &r, err);
    if (rc == 0 && (rc = s3l__xml_list_parts(r.resp.ptr, r.resp.len, page, err)) != 0)
        s3l_error_prefix(err, "ListParts %s", key);
    s3l__http_req_cleanup(&r);
    return rc;
}

/* Length of the part of s that XML 1.0 can carry: up to its first character outside Char (XML
 * 1.0 section 2.2: below 0x20, only tab, newline and carriage return are allowed). */
static size_t xml_char_len(const char *s)
{
    size_t i = 0;
    while (s[i] && ((unsigned char)s[i] >= 0x20 || s[i] == '\t' || s[i] == '\n' || s[i] == '\r'))
        i++;
    return i;
}

/* Drops the uploads whose key does not start with prefix (the answer was for a shorter one). */
static void keep_prefixed(struct s3l_s3_uploads_page *page, const char *prefix)
{
    size_t n = 0, plen = strlen(prefix);
    for (size_t i = 0; i < page->n; i++) {
        if (strncmp(page->uploads[i].key, prefix, plen) == 0) {
            page->uploads[n++] = page->uploads[i];
        } else {
            s3l_free(page->uploads[i].key);
            s3l_free(page->uploads[i].upload_id);
        }
    }
    page->n = n;
}

int s3l_s3_list_uploads(struct s3l_s3_client *c, const char *bucket, const char *prefix,
                        const char *key_marker, const char *upload_id_marker, int max,
                        struct s3l_s3_uploads_page *page, struct s3l_error *err)
{
    memset(page, 0, sizeof(*page));
    int rc = s3l__check_bucket(bucket, err);
    if (rc != 0)
        return rc;
    struct s3l__http_req r = {.op = "ListMultipartUploads", .method = "GET", .bucket = bucket,
                              .prefix = prefix ? prefix : ""};
    char mx[16];
    snprintf(mx, sizeof(mx), "%d", max > 0 && max <= 1000 ? max : 1000);
    s3l__http_add_query(&r, "uploads", "");
    s3l__http_add_query(&r, "max-uploads", mx);
    s3l__http_add_query(&r, "encoding-type", "url"); /* keys XML 1.0 cannot carry */
    /* RGW echoes <Prefix> unencoded even with encoding-type=url, as "&#x01;" for a control
     * character, which no XML 1.0 parser takes: such a prefix is sent up to that character and
     * the rest is matched here. */
    size_t keep = prefix ? xml_char_len(prefix) : 0;
    char *sent = keep > 0 ? s3l_malloc(keep + 1) : NULL;
    if (keep > 0 && !sent)
        rc = s3l_error_set(err, S3L_ENOMEM, "ListMultipartUploads %s: out of memory", bucket);
    if (sent) {
        memcpy(sent, prefix, keep);
        sent[keep] = 0;
        s3l__http_add_query(&r, "prefix", sent);
    }
    if (key_marker && *key_marker)
        s3l__http_add_query(&r, "key-marker", key_marker);
    if (upload_id_marker && *upload_id_marker)
        s3l__http_add_query(&r, "upload-id-marker", upload_id_marker);
    if (rc == 0)
        rc = s3l__run1(c, &r, err);
    if (rc == 0 && (rc = s3l__xml_list_uploads(r.resp.ptr, r.resp.len, page, err)) != 0)
        s3l_error_prefix(err, "ListMultipartUploads %s", bucket);
    if (rc == 0 && prefix && prefix[keep])
        keep_prefixed(page, prefix);
    s3l_free(sent);
    s3l__http_req_cleanup(&r);
    return rc;
}

/* XML text escaping of a key for the DeleteObjects body. */
static int append_escaped(struct s3l_buf *b, const char *s)
{
    int rc = 0;
    for (; rc == 0 && *s; s++) {
        switch (*s) {
        case '&': rc = s3l_buf_append_str(b, "&amp;"); break;
        case '<': rc = s3l_buf_append_str(b, "&lt;"); break;
        case '>': rc = s3l_buf_append_str(b, "&gt;"); break;
        case '"': rc = s3l_buf_append_str(b, "&quot;"); break;
        case '\'': rc = s3l_buf_append_str(b, "&apos;"); break;
        case '\r': rc = s3l_buf_append_str(b, "&#13;"); break;
        case '\n': rc = s3l_buf_append_str(b, "&#10;"); break;
        default: rc = s3l_buf_append_byte(b, (uint8_t)*s); break;
        }
    }
    return rc;
}

/* Key by key, each a DeleteObject (a missing key is success): the first refused key fails the
 * call, naming that key. */
static int delete_each(struct s3l_s3_client *c, const char *bucket, const char *const *keys,
                       size_t n, struct s3l_error *err)
{
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < n; i++)
        rc = s3l_s3_delete_object(c, bucket, keys[i], err);
    return rc;
}

static int delete_batch(struct s3l_s3_client *c, const char *bucket, const char *const *keys,
                        size_t n, struct s3l_error *err)
{
    if (__atomic_load_n(&c->delete_objects_refused, __ATOMIC_RELAXED))
        return delete_each(c, bucket, keys, n, err); /* refused once already (below) */
    struct s3l_buf body;
    s3l_buf_init(&body, 16u << 20);
    int rc = s3l_buf_append_str(&body, "<Delete xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
                                       "<Quiet>true</Quiet>");
    for (size_t i = 0; rc == 0 && i < n; i++) {
        rc = s3l_buf_append_str(&body, "<Object><Key>");
        if (rc == 0)
            rc = append_escaped(&body, keys[i]);
        if (rc == 0)
            rc = s3l_buf_append_str(&body, "</Key></Object>");
    }
    if (rc == 0)
        rc = s3l_buf_append_str(&body, "</Delete>");
    struct s3l__http_req r = {.op = "DeleteObjects", .method = "POST", .bucket = bucket,
                              .has_body = true};
    r.body = body.ptr;
    r.body_len = body.len;
    s3l__http_add_query(&r, "delete", "");
    /* DeleteObjects requires an integrity header whatever the client's choice (S3 API); the
     * mode is passed, not set on the client, which other threads read meanwhile (a put of the
     * checkpoint while the staged files are deleted, commit.md step 4). */
    char b64[32];
    enum s3l_s3_integrity mode =
        c->integrity == S3L_S3_INTEGRITY_NONE ? S3L_S3_INTEGRITY_MD5 : c->integrity;
    if (rc == 0)
        rc = s3l__integrity_header_as(mode, &r, body.ptr, body.len, b64);
    if (rc == 0)
        rc = s3l__run1(c, &r, err);
    else
        s3l_error_set(err, rc, "DeleteObjects: cannot build the request");
    bool refused = rc == S3L_EPERMISSION_DENIED;
    if (refused) {
        /* The request itself refused. S3 authorises DeleteObjects key by key (s3:DeleteObject on
         * each: S3 API reference, DeleteObjects, "Permissions"), but Ceph RGW 16 asks for
         * s3:DeleteObject on the bucket, which a policy granting it on the keys under a prefix
         * does not give: so each key goes its own way (delete_each, after the cleanup below),
         * and the client remembers it (one refused DeleteObjects per client, not per batch). */
        __atomic_store_n(&c->delete_objects_refused, true, __ATOMIC_RELAXED);
        s3l_error_clear(err);
    } else if (rc == 0) {
        size_t deleted;
        struct s3l__s3_error_body e;
        rc = s3l__xml_delete_result(r.resp.ptr, r.resp.len, &deleted, &e, err);
        if (rc == 0 && e.code[0]) {
            rc = s3l__s3_code_to_error(403, e.code);
            s3l_error_set(err, rc, "DeleteObjects %s: %s (%s)", bucket, e.message, e.code);
            if (err)
                snprintf(err->s3_code, sizeof(err->s3_code), "%s", e.code);
        }
    }
    s3l__http_req_cleanup(&r);
    s3l_buf_free(&body);
    return refused ? delete_each(c, bucket, keys, n, err) : rc;
}

int s3l_s3_delete_objects(struct s3l_s3_client *c, const char *bucket, const char *const *keys,
                          size_t n, struct s3l_error *err)
{
    int rc = s3l__check_bucket(bucket, err);
    for (size_t i = 0; rc == 0 && i < n; i++)
        rc = s3l__check_key(keys[i], err);
    for (size_t i = 0; rc == 0 && i < n; i += S3L_S3_DELETE_BATCH)
        rc = delete_batch(c, bucket, keys + i, S3L_MIN((size_t)S3L_S3_DELETE_BATCH, n - i), err);
    return rc;
}
