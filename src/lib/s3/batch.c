/*
 * Requests sent together: n independent requests in one run of the transport (http.c), so they
 * travel at once, up to the client's in-flight limit, as the parts of an upload do (issue 14
 * item 2): an epoch's CopyObjects, its streams' markers (PutObjects), and the reads a start
 * needs (GetObject, HeadObject, the first page of ListObjectsV2), each item answered on its own.
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

/* ---- PutObjects at once ---------------------------------------------------------------------- */

struct put_req {
    struct s3l__http_req r;
    char b64[32];
};

/* Fills q as the PutObject of item it (s3l__put_object's request, its answer left to the run). */
static int put_request(struct s3l_s3_client *c, struct put_req *q, const char *bucket,
                       struct s3l_s3_put_item *it)
{
    int rc = s3l__check_key(it->key, &it->err);
    if (rc == 0 && it->len > c->max_request)
        rc = s3l_error_set(&it->err, S3L_ETOO_LARGE,
                           "PutObject %s: %zu bytes is over the cap of %zu", it->key, it->len,
                           c->max_request);
    if (rc != 0)
        return rc;
    q->r = (struct s3l__http_req){.op = "PutObject", .method = "PUT", .bucket = bucket,
                                  .key = it->key, .error_in_200 = true, .needs_etag = true};
    q->r.body = it->data;
    q->r.body_len = it->len;
    q->r.has_body = true;
    rc = s3l__integrity_header(c, &q->r, it->len ? it->data : "", it->len, q->b64);
    if (rc == 0)
        rc = s3l__put_headers(&q->r, it->opts, false);
    return rc ? s3l_error_set(&it->err, rc,
                              "PutObject %s: an option holds CR or LF, an empty If-Match, or too many headers",
                              it->key)
              : 0;
}

int s3l_s3_put_objects(struct s3l_s3_client *c, const char *bucket, struct s3l_s3_put_item *items,
                       size_t n)
{
    for (size_t i = 0; i < n; i++) {
        s3l_error_clear(&items[i].err);
        items[i].etag[0] = 0;
        items[i].rc = 0;
    }
    struct s3l_error berr = {0};
    int rc = s3l__check_bucket(bucket, &berr);
    struct put_req *q = rc == 0 && n ? s3l_calloc(n, sizeof(*q)) : NULL;
    struct s3l__http_req **reqs = q ? s3l_calloc(n, sizeof(*reqs)) : NULL;
    if (rc == 0 && n && !reqs)
        rc = s3l_error_set(&berr, S3L_ENOMEM, "out of memory sending %zu objects", n);
    size_t m = 0; /* requests prepared, in reqs[0..m) */
    for (size_t i = 0; rc == 0 && i < n; i++)
        if ((items[i].rc = put_request(c, &q[i], bucket, &items[i])) == 0)
            reqs[m++] = &q[i].r;
    if (rc == 0 && m) {
        struct s3l_error e = {0};
        s3l__http_run(c, reqs, m, &e); /* each request keeps its own rc and err */
    }
    int first = 0;
    for (size_t i = 0; i < n; i++) {
        if (rc != 0) {
            items[i].rc = rc;
            items[i].err = berr;
        } else if (items[i].rc == 0) {
            items[i].rc = q[i].r.rc;
            if (q[i].r.rc != 0)
                items[i].err = q[i].r.err;
            else
                memcpy(items[i].etag, q[i].r.etag, sizeof(items[i].etag));
        }
        first = first ? first : items[i].rc;
        if (q)
            s3l__http_req_cleanup(&q[i].r);
    }
    s3l_free(reqs);
    s3l_free(q);
    return first;
}

/* ---- reads at once --------------------------------------------------------------------------- */

/* Fills r as item it's request; its borrowed strings are the item's or literals. */
static int read_request(struct s3l__http_req *r, const char *bucket, struct s3l_s3_read_item *it)
{
    if (it->kind == S3L_S3_READ_LIST) {
        *r = (struct s3l__http_req){.op = "ListObjectsV2", .method = "GET", .bucket = bucket,
                                    .prefix = it->key};
        /* s3l_s3_list_objects' query: a page of 1,000, keys URL-encoded (XML 1.0 cannot carry
         * every byte a key may hold) */
        s3l__http_add_query(r, "list-type", "2");
        s3l__http_add_query(r, "max-keys", "1000");
        s3l__http_add_query(r, "encoding-type", "url");
        if (*it->key)
            s3l__http_add_query(r, "prefix", it->key);
        return 0;
    }
    int rc = s3l__check_key(it->key, &it->err);
    if (rc != 0)
        return rc;
    bool get = it->kind == S3L_S3_READ_GET;
    *r = (struct s3l__http_req){.op = get ? "GetObject" : "HeadObject",
                                .method = get ? "GET" : "HEAD", .bucket = bucket, .key = it->key};
    if (get)
        r->max_response = it->max ? it->max : 1; /* 0 would mean the client default */
    return 0;
}

/* The answer of request r into item it (r succeeded). */
static void read_answer(struct s3l__http_req *r, struct s3l_s3_read_item *it)
{
    if (it->kind == S3L_S3_READ_LIST) {
        it->rc = s3l__xml_list_objects(r->resp.ptr, r->resp.len, &it->page, &it->err);
        if (it->rc != 0)
            s3l_error_prefix(&it->err, "ListObjectsV2 %s/%s", r->bucket, it->key);
        return;
    }
    s3l__object_from_head(r, &it->object);
    if (it->kind == S3L_S3_READ_HEAD)
        return;
    if (it->max == 0 && r->resp.len > 0) {
        it->rc = s3l_error_set(&it->err, S3L_ETOO_LARGE, "GetObject %s: answer over the cap of 0",
                               it->key);
        return;
    }
    it->object.size = r->have_content_length ? r->content_length : r->resp.len;
    if ((it->rc = s3l_buf_detach(&r->resp, &it->data, &it->len)) != 0)
        s3l_error_set(&it->err, it->rc, "out of memory");
}

void s3l_s3_read_objects(struct s3l_s3_client *c, const char *bucket,
                         struct s3l_s3_read_item *items, size_t n)
{
    struct s3l_error berr = {0};
    int rc = s3l__check_bucket(bucket, &berr);
    for (size_t i = 0; i < n; i++) {
        struct s3l_s3_read_item *it = &items[i];
        s3l_error_clear(&it->err);
        it->rc = 0;
        it->data = NULL;
        it->len = 0;
        memset(&it->object, 0, sizeof(it->object));
        memset(&it->page, 0, sizeof(it->page));
    }
    struct s3l__http_req *q = rc == 0 && n ? s3l_calloc(n, sizeof(*q)) : NULL;
    struct s3l__http_req **reqs = q ? s3l_calloc(n, sizeof(*reqs)) : NULL;
    if (rc == 0 && n && !reqs)
        rc = s3l_error_set(&berr, S3L_ENOMEM, "out of memory reading %zu objects", n);
    size_t m = 0;
    for (size_t i = 0; rc == 0 && i < n; i++)
        if ((items[i].rc = read_request(&q[i], bucket, &items[i])) == 0)
            reqs[m++] = &q[i];
    if (rc == 0 && m) {
        struct s3l_error e = {0};
        s3l__http_run(c, reqs, m, &e); /* each request keeps its own rc and err */
    }
    for (size_t i = 0; i < n; i++) {
        struct s3l_s3_read_item *it = &items[i];
        if (rc != 0) {
            it->rc = rc;
            it->err = berr;
            continue;
        }
        if (it->rc != 0)
            continue; /* never sent */
        it->rc = q[i].rc;
        if (it->rc == 0)
            read_answer(&q[i], it);
        else
            it->err = q[i].err;
        /* As s3l_s3_get_object and s3l_s3_head_object: a 403 may be a missing key under a
         * policy without s3:ListBucket on it (settle.c), asked after the batch, one by one. */
        if (it->rc == S3L_EPERMISSION_DENIED && it->kind != S3L_S3_READ_LIST)
            it->rc = s3l__settle_403(c, bucket, it->key, &it->err);
    }
    for (size_t i = 0; q && i < n; i++)
        s3l__http_req_cleanup(&q[i]);
    s3l_free(reqs);
    s3l_free(q);
}
