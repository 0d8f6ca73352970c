/*
 * s3: the module's internal header. The S3 client is built from small layers, each in its own
 * file: S3's XML answers (xml.c), the libcurl multi transport (http.c), retries and the error
 * taxonomy (retry.c), the trace (trace.c) and the operations (client.c, multipart.c). URI
 * encoding, the SigV4 signer and the expat XML tree are util's (util/uri.c, sigv4.c, xml.c):
 * creds' STS client signs and parses too, and creds may not include s3 (docs/design.md).
 * Tests reach the layers through the s3l__ functions declared here and in util/util.h.
 * docs/internals/s3.md has the invariants.
 */
#ifndef S3L_S3_INT_H
#define S3L_S3_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "s3l/creds.h"
#include "s3l/error.h"
#include "s3l/s3.h"
#include "util/util.h"

/* An S3 <Error> answer. Fields are "" when absent. */
struct s3l__s3_error_body {
    char code[64];
    char message[256];
    char request_id[128];
    char region[64];      /* <Region> of a redirect or an AuthorizationHeaderMalformed */
    char server_time[64]; /* <ServerTime> of RequestTimeTooSkewed */
};

/* Whether body is an <Error> document; if so fills e. Never fails: garbage is "not an error". */
bool s3l__xml_error(const void *body, size_t len, struct s3l__s3_error_body *e);

/* Parsers of each answer into the public shapes of include/s3l/s3.h. Each returns 0, or
 * S3L_ECORRUPT when the document is not the one expected (the message says which root it has),
 * or S3L_ENOMEM. Outputs are zeroed first and owned by the caller. */
int s3l__xml_list_objects(const void *body, size_t len, struct s3l_s3_list_page *page,
                          struct s3l_error *err);
int s3l__xml_initiate(const void *body, size_t len, char **upload_id, struct s3l_error *err);
int s3l__xml_complete(const void *body, size_t len, char etag[S3L_S3_ETAG_MAX],
                      struct s3l_error *err);
int s3l__xml_copy_result(const void *body, size_t len, char etag[S3L_S3_ETAG_MAX],
                         int64_t *mtime_ns, struct s3l_error *err);
int s3l__xml_list_parts(const void *body, size_t len, struct s3l_s3_parts_page *page,
                        struct s3l_error *err);
int s3l__xml_list_uploads(const void *body, size_t len, struct s3l_s3_uploads_page *page,
                          struct s3l_error *err);
/* DeleteResult: the first <Error> entry, if any, is reported through e (key in e->message). */
int s3l__xml_delete_result(const void *body, size_t len, size_t *n_deleted,
                           struct s3l__s3_error_body *e, struct s3l_error *err);

/* Copies an ETag without its surrounding quotes (S3 sends them quoted, RGW sometimes not). */
void s3l__etag_copy(char dst[S3L_S3_ETAG_MAX], const char *src, size_t len);
/* ISO 8601 (2026-11-30T04:30:15.000Z) or RFC 7231 (Mon, 30 Nov 2026 04:30:15 GMT) to ns since
 * the epoch; 0 when it cannot be parsed. */
int64_t s3l__parse_time_ns(const char *s);

/* ------------------------------------------------------------------ client and transport */

#include <curl/curl.h>
#include <pthread.h>
#include <stdio.h>

struct s3l_s3_client {
    char *region;
    char *scheme;         /* "https" or "http" */
    char *host;           /* endpoint host[:port], or "s3.REGION.amazonaws.com" on AWS */
    bool aws;             /* no endpoint was set */
    bool path_style;
    struct s3l_creds_provider *creds; /* where the keys below come from */
    bool own_creds;       /* creds is ours to free (static keys, the default chain) */
    bool creds_stale;     /* AUTH_EXPIRED seen: ask creds again before the next attempt */
    int64_t creds_expiration_ns; /* of the keys below, ns since the epoch; 0: never */
    char *access_key, *secret_key, *session_token;
    char creds_source[40]; /* botocore's method string of the keys above, for messages */
    char *principal;       /* the assumed role's ARN of the keys above, or NULL */
    char *ca_file;
    struct curl_slist *resolve;
    CURLM *multi;
    void (*trace)(void *ctx, const char *line, size_t len); /* cfg->trace, or NULL */
    void *trace_ctx;
    long connect_timeout_ms, low_speed_time_s, backoff_base_ms, backoff_max_ms;
    int max_attempts;
    size_t max_response, max_request;
    int max_in_flight;
    int in_flight_limit;  /* lowered on SlowDown, raised again after successes */
    int successes_since_slowdown;
    enum s3l_s3_integrity integrity;
    bool sign_payload;
    bool delete_objects_refused; /* DeleteObjects answered 403: delete key by key (atomic) */
    long clock_offset_s;  /* server time minus ours, learnt from RequestTimeTooSkewed */
    uint64_t rng;
    struct s3l__sigv4_cache key_cache;
    /* counters, for tests and the trace */
    uint64_t n_requests, n_retries, n_slowdowns;
    uint64_t op_n[S3L_S3_N_OPS]; /* attempts by operation (counts.c), under mu */
    /*
     * Sharing: a client serves several threads at once. mu guards everything above that changes
     * (limits, clock, credentials, key cache, counters), every request's state, the queue and
     * the pool below. The multi handle belongs to the one thread that has set `driving` (under
     * mu): it starts the queued requests of every thread, then pumps the transfers with mu
     * released (curl_multi_perform, curl_multi_poll), takes in the finished ones with mu held,
     * and clears `driving`. Other threads queue their requests, wake the driver
     * (curl_multi_wakeup, the one thread-safe multi call) and wait on cv, broadcast when a
     * request finishes; whoever needs a round next drives it. A thread that must touch the multi
     * itself (a cancel) counts itself in multi_waiters and waits until nobody drives.
     */
    pthread_mutex_t mu;
    pthread_cond_t cv; /* CLOCK_MONOTONIC */
    bool sync_ok;      /* mu and cv were initialised */
    bool driving;
    int multi_waiters;
    int n_waiting;     /* threads waiting on cv for another thread's round */
    int n_active;      /* requests in the multi handle, all threads together */
    struct s3l__http_req *queue_head, *queue_tail; /* waiting to start, oldest first */
    /* Part buffers of streaming uploads, recycled across parts and uploads so that a steady
     * upload faults in no new pages: at most max_bufs allocated at once (an upload holding
     * none may always take one, so that every upload moves), the free ones kept in pool. */
    void **pool;
    int n_pool, n_bufs, max_bufs;
    size_t pool_size;
};

#define S3L__MAX_HDRS 20
#define S3L__MAX_QUERY 8

/* One S3 request and, after s3l__http_run, its answer. Zero it, fill the inputs, run, then
 * s3l__http_req_cleanup. Inputs are borrowed and must outlive the run. */
struct s3l__http_req {
    const char *op;     /* S3 operation name: trace and error messages */
    const char *method; /* GET HEAD PUT POST DELETE */
    const char *bucket;
    const char *key;    /* NULL or "" for bucket-level requests */
    const char *prefix; /* a list's prefix, for messages only (sent as a query parameter) */
    struct s3l__kv query[S3L__MAX_QUERY];
    size_t n_query;
    struct s3l__kv headers[S3L__MAX_HDRS]; /* signed, besides host/date/sha256/token */
    size_t n_headers;
    const uint8_t *body;
    size_t body_len;
    bool has_body;        /* send a body (Content-Length body_len, 0 allowed) */
    size_t max_response;  /* 0: client default */
    bool no_low_speed;    /* CompleteMultipartUpload: never abandoned for being slow */
    bool error_in_200;    /* a 200 may carry an <Error> (Complete, Copy, UploadPartCopy; and
                           * PutObject: no store should, a broken gateway may) */
    bool needs_etag;      /* a 2xx without an ETag is a failure, retried (PutObject: the ETag is
                           * the next conditional write's If-Match) */
    bool not_found_ok;    /* 404 is an answer, not an error (DeleteObject on RGW, HEAD probe) */
    /* answer */
    long status;
    struct s3l_buf resp;
    char etag[S3L_S3_ETAG_MAX];
    char request_id[128];
    char bucket_region[64];
    char date[64];
    char last_modified[64];
    char upload_meta[128];
    char content_range[128];
    char signed_region[64]; /* the region the last attempt was signed for (region.c) */
    bool region_moved;      /* sent once more in the region an answer named (region.c) */
    uint64_t content_length;
    bool have_content_length;
    int attempts;
    int rc;
    struct s3l_error err;
    /* private to http.c */
    CURL *easy;
    struct curl_slist *slist;
    size_t body_off;
    int64_t next_at_ms;
    int64_t started_ms;
    int state;
    struct s3l__http_req *queue_next; /* in the client's queue of requests waiting to start */
    struct s3l__tally *tally; /* the submitting thread's (util.h), counted at each attempt */
    bool too_large;
    size_t resp_cap; /* the cap on a 2xx answer's body */
    char payload_hash[65];
    char curl_err[CURL_ERROR_SIZE];
};

/* Asks c->creds for credentials and makes them the ones requests are signed with (the old ones
 * wiped). With c->mu held, or before the client is shared. 0 or the provider's failure. */
int s3l__s3_refresh_creds(struct s3l_s3_client *c, struct s3l_error *err);

/* Runs n requests, at most c->in_flight_limit at once, each retried as include/s3l/s3.h says.
 * Returns 0 when all succeeded, else the first failing request's code with err copied from it;
 * each request's own rc and err are kept. */
int s3l__http_run(struct s3l_s3_client *c, struct s3l__http_req **reqs, size_t n,
                  struct s3l_error *err);
/* As s3l__http_run, but returns as soon as at most `allowed` requests are unfinished, having
 * pumped the transfers at least once; the rest keep their state in the multi handle and go on at
 * the next call with the same (or a grown) array. A request is reused only after it is done.
 * Returns the first failure among the finished requests. */
int s3l__http_drive(struct s3l_s3_client *c, struct s3l__http_req **reqs, size_t n,
                    size_t allowed, struct s3l_error *err);
bool s3l__http_done(struct s3l_s3_client *c, const struct s3l__http_req *r);
/* Stops a request that is still running or waiting (its rc becomes S3L_ESTATE). */
void s3l__http_cancel(struct s3l_s3_client *c, struct s3l__http_req *r);
void s3l__http_req_cleanup(struct s3l__http_req *r);
/* Frees what r's last run left (headers, answer) but keeps its curl handle for the next
 * request made in r (s3l__part_request keeps it): curl reuses its buffers. */
void s3l__http_req_reset(struct s3l__http_req *r);
/* Adds a header to r (names and values borrowed). Returns 0 or S3L_EINTERNAL when full. */
int s3l__http_add_header(struct s3l__http_req *r, const char *name, const char *value);
int s3l__http_add_query(struct s3l__http_req *r, const char *name, const char *value);

/* After a failed attempt (mu held): whether the answer names a region other than the one r was
 * signed for (r->bucket_region: the x-amz-bucket-region header, else the <Region> of the error
 * document) and r was not moved yet. If so the client moves there for good (its region, and its
 * host on AWS; the note handler hears of it once) and r is to be sent again at once (region.c). */
bool s3l__region_follow(struct s3l_s3_client *c, struct s3l__http_req *r);

/* Maps an HTTP status and S3 error code to the taxonomy (docs/design.md section 5). */
int s3l__s3_code_to_error(long status, const char *s3_code);

/* http_answer.c: the answers and retries of the transport (http.c calls them, c->mu held).
 * what: the name of what r asked for, for messages: its key, else its prefix, else its bucket. */
const char *s3l__http_what(const struct s3l__http_req *r);
/* Classifies a finished attempt into r->rc and r->err (S3 code, status, request id; the store's
 * text redacted of the client's secrets). */
void s3l__http_finish_attempt(struct s3l_s3_client *c, struct s3l__http_req *r, CURLcode cc);
/* Before an attempt: fresh credentials after AUTH_EXPIRED or within 5 minutes of Expiration
 * (else the cache answers from memory). 0, or the provider's error in err. */
int s3l__http_current_creds(struct s3l_s3_client *c, struct s3l_error *err);
/* After a failed attempt: whether to try again (*delay: ms to wait first), with the adjustments
 * the answer asks for (clock skew, SlowDown's in-flight halving, the bucket's region). */
bool s3l__http_should_retry(struct s3l_s3_client *c, struct s3l__http_req *r, int64_t *delay);
/* One JSON line of a finished attempt to the client's trace callback, when it has one
 * (docs/internals/s3.md, "Trace"); ms: the attempt's duration. */
void s3l__http_trace(struct s3l_s3_client *c, const struct s3l__http_req *r, int64_t ms);

/* Checks a bucket name and a key against S3's rules before anything is sent. */
int s3l__check_bucket(const char *bucket, struct s3l_error *err);
int s3l__check_key(const char *key, struct s3l_error *err);

/* Base64 of n bytes into out (4 * ceil(n / 3) + 1 bytes). */
void s3l__base64(const uint8_t *in, size_t n, char *out);
/* CRC32C (Castagnoli, RFC 3720) of data. */
uint32_t s3l__crc32c(const void *data, size_t len);
/* CRC32C continued: crc is the CRC32C of the bytes before data (0 for none), as zlib's crc32(). */
uint32_t s3l__crc32c_update(uint32_t crc, const void *data, size_t len);

/*
 * The integrity value of one body (Content-MD5, RFC 1864, or x-amz-checksum-crc32c), computed
 * piece by piece while the part fills, so that each byte is hashed once while it is still in
 * the cache. begin (again for every part; the MD5 context is kept), update, end, free.
 */
struct s3l__digest {
    enum s3l_s3_integrity kind;
    struct s3l__md md; /* MD5 */
    uint32_t crc;
};
/* Returns 0, or S3L_ENOMEM / S3L_EINTERNAL when libcrypto fails. */
int s3l__digest_begin(struct s3l__digest *d, enum s3l_s3_integrity kind);
int s3l__digest_update(struct s3l__digest *d, const void *data, size_t len);
/* The header's name (NULL for S3L_S3_INTEGRITY_NONE) and base64 value (b64 >= 32 bytes). */
int s3l__digest_end(struct s3l__digest *d, const char **name, char *b64);
void s3l__digest_free(struct s3l__digest *d);

/* MD5 (RFC 1321) of m0 and of m1, both len bytes, computed together (md5x2.c): two
 * independent chains keep a core's ALUs busy where one leaves them idle. */
void s3l__md5x2(const void *m0, const void *m1, size_t len, uint8_t d0[16], uint8_t d1[16]);

/* Part buffers of size bytes from the client's pool (module comment of struct s3l_s3_client).
 * holding: how many the caller holds now. *buf is NULL when the cap is reached (wait for one of
 * the caller's own to come back). Returns 0 or S3L_ENOMEM. */
int s3l__buf_take(struct s3l_s3_client *c, size_t size, int holding, uint8_t **buf);
void s3l__buf_give(struct s3l_s3_client *c, uint8_t *buf, size_t size);

/* The index in s3l_s3_client_op_counts' order of S3 operation name op (counts.c); an unknown
 * name is "Other", the last. */
int s3l__s3_op_index(const char *op);
/* The name of the operation at index i of that order (static storage; out of range: "Other"). */
const char *s3l__s3_op_name(int i);

/* Shared by the operations (client.c, multipart.c). */
int s3l__run1(struct s3l_s3_client *c, struct s3l__http_req *r, struct s3l_error *err);
/* A 403 AccessDenied on GetObject / HeadObject of key (err holds it) settled by a ListObjectsV2
 * of that exact key (client.c): S3L_ENOT_FOUND when the list says absent (err replaced), else
 * S3L_EPERMISSION_DENIED (err kept, with a note), or the list's AUTH_INVALID / AUTH_EXPIRED /
 * ENOMEM (err replaced). */
int s3l__settle_403(struct s3l_s3_client *c, const char *bucket, const char *key,
                    struct s3l_error *err);
void s3l__object_from_head(const struct s3l__http_req *r, struct s3l_s3_object *o);
/* Adds Content-MD5 or x-amz-checksum-crc32c for data (the client's integrity choice); buf64
 * (>= 32 bytes) holds the value. */
int s3l__integrity_header(struct s3l_s3_client *c, struct s3l__http_req *r, const void *data,
                          size_t len, char *buf64);
/* The same with the mode given (DeleteObjects requires one whatever the client's choice): the
 * client is only read, so any thread may call it while others send. */
int s3l__integrity_header_as(enum s3l_s3_integrity mode, struct s3l__http_req *r,
                             const void *data, size_t len, char *buf64);
/* s3l_s3_put_object with the integrity header already computed (digest: its name, NULL to
 * compute it here). */
int s3l__put_object(struct s3l_s3_client *c, const char *bucket, const char *key,
                    const void *data, size_t len, const struct s3l_s3_put_options *opts,
                    const char *digest, const char *digest_b64, struct s3l_s3_object *out,
                    struct s3l_error *err);
/* SSE, storage class, metadata, content type; conditions too unless create. */
int s3l__put_headers(struct s3l__http_req *r, const struct s3l_s3_put_options *o, bool create);
/* CompleteMultipartUpload with optional conditions (AWS honours them; RGW 16 ignores them). */
int s3l__complete(struct s3l_s3_client *c, const char *bucket, const char *key,
                  const char *upload_id, const struct s3l_s3_part *parts, size_t n,
                  bool if_none_match, const char *if_match, struct s3l_s3_object *out,
                  struct s3l_error *err);
/* Fills r (zeroed first, but its curl handle kept for reuse) as UploadPart number n of data;
 * number and b64 are its storage and must outlive the run. digest: the integrity header already
 * computed into b64 by the caller (its name), or NULL to compute it here from data. Returns 0 or
 * the integrity header's failure. */
int s3l__part_request(struct s3l_s3_client *c, struct s3l__http_req *r, const char *bucket,
                      const char *key, const char *upload_id, const void *data, size_t len,
                      char number[16], int n, char b64[32], const char *digest);
/* A multipart copy (upload.c): CreateMultipartUpload with opts (NULL: none), UploadPartCopy of
 * src in part_size ranges, Complete; aborted on failure. */
int s3l__copy_parts(struct s3l_s3_client *c, const char *src_bucket, const char *src_key,
                    const char *bucket, const char *key, uint64_t size, uint64_t part_size,
                    const struct s3l_s3_put_options *opts, struct s3l_s3_object *out,
                    struct s3l_error *err);
/* After a failed CreateMultipartUpload (copy.c): a PERMISSION_DENIED under SSE-KMS (opts->sse
 * "aws:kms") gets the KMS permissions it needs appended to err's message. */
void s3l__kms_hint(const struct s3l_s3_put_options *opts, int rc, struct s3l_error *err);
/* x-amz-copy-source: /BUCKET/KEY with the key URI-encoded. */
int s3l__copy_source(struct s3l_buf *b, const char *src_bucket, const char *src_key);

#endif
