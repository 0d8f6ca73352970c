/*
 * The S3 client of libs3land: the operations the destination and the s3 store backend need,
 * signed with SigV4, sent over libcurl (multi interface, connections reused), answers parsed
 * with expat, every failure mapped to the taxonomy of include/s3l/error.h (docs/design.md section
 * 5).
 *
 * Addressing: virtual-hosted (https://BUCKET.s3.REGION.amazonaws.com/KEY) on AWS; path-style
 * (ENDPOINT/BUCKET/KEY) when an endpoint is set, unless path_style says otherwise. Retries:
 * THROTTLED, TRANSIENT and AUTH_EXPIRED answers (including a 200 whose body is an <Error>) are
 * retried with capped exponential backoff and full jitter, each attempt signed again with a fresh
 * date; RequestTimeTooSkewed corrects the clock from the server's Date header; SlowDown lowers
 * the number of requests in flight. Every other failure stops at once; err then carries the
 * S3 code, the HTTP status and the x-amz-request-id.
 *
 * Keys and buckets are NUL-terminated UTF-8, raw (not percent-encoded). Sizes are in bytes,
 * times in nanoseconds since the epoch. A client may be shared by threads: calls from several
 * threads run at once (their transfers share one libcurl multi handle and the max_in_flight
 * limit); a streaming upload (struct s3l_s3_upload) is used by one thread at a time.
 */
#ifndef S3L_S3_H
#define S3L_S3_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "s3l/error.h"

struct s3l_creds_provider; /* include/s3l/creds.h */

#define S3L_S3_CONFIG_VERSION 1
#define S3L_S3_ETAG_MAX 132
#define S3L_S3_KEY_MAX 1024   /* S3's limit on a key, in bytes of UTF-8 */
#define S3L_S3_DELETE_BATCH 1000 /* DeleteObjects takes at most this many keys per request */

/* The integrity header sent with every PutObject and UploadPart. */
enum s3l_s3_integrity {
    S3L_S3_INTEGRITY_MD5 = 0, /* Content-MD5 (RFC 1864); checked by AWS and by Ceph RGW */
    S3L_S3_INTEGRITY_CRC32C,  /* x-amz-checksum-crc32c; checked by AWS, ignored by RGW 16 */
    S3L_S3_INTEGRITY_NONE,
};

/*
 * Client configuration. Zero-initialise, set version = S3L_S3_CONFIG_VERSION, then set what
 * differs from the defaults. Strings are copied by s3l_s3_client_new. The library reads no
 * environment variable for these (AWS_REGION, AWS_ENDPOINT_URL_S3, S3LAND_TRACE act only through
 * the s3land CLI, which reads them and sets the fields: docs/cli.md, "Environment"); only the
 * default credentials chain (credentials below, include/s3l/creds.h) reads the AWS variables it
 * documents.
 */
struct s3l_s3_config {
    int version;
    /* The region signed into every request. NULL: "us-east-1". */
    const char *region;
    /* "http(s)://host[:port]". NULL: AWS (s3.REGION.amazonaws.com). */
    const char *endpoint;
    /* 0: decide (path-style when an endpoint is set, virtual-hosted on AWS); 1: path-style;
     * -1: virtual-hosted even with an endpoint (BUCKET.ENDPOINT-HOST). */
    int path_style;
    /* Keys given here are used as they are (static). NULL: from `credentials` below. */
    const char *access_key;
    const char *secret_key;
    const char *session_token;
    const char *ca_file;  /* PEM CA bundle to trust instead of the system's store; NULL: system */
    const char *resolve;  /* "HOST:PORT:ADDRESS" pinned for every request (CURLOPT_RESOLVE) */
    /* The request trace: called once per attempt with one JSON line (len bytes, ending in '\n'
     * and NUL-terminated, valid only during the call; docs/internals/s3.md, "Trace", gives its
     * fields), never holding a credential. NULL: no trace. Called from the thread driving the
     * client's transfers with the client's lock held: it must not call into the client. A
     * callback, not a path, so that the library opens no file of its own and an embedder may send
     * the lines to its log; the CLI appends them to $S3LAND_TRACE. */
    void (*trace)(void *trace_ctx, const char *line, size_t len);
    void *trace_ctx; /* passed back to trace */
    long connect_timeout_ms; /* 0: 10,000 */
    long low_speed_time_s;   /* 0: 30; a transfer under 1 byte/s for this long fails (TRANSIENT);
                                never applied to CompleteMultipartUpload */
    int max_attempts;        /* 0: 6 attempts in all (5 retries) */
    long backoff_base_ms;    /* 0: 100; attempt n waits uniform [0, min(max, base * 2^n)) */
    long backoff_max_ms;     /* 0: 10,000 */
    size_t max_response_bytes; /* 0: 16 MiB; cap on an XML answer (GetObject has its own cap) */
    size_t max_request_bytes;  /* 0: 5 GiB; PutObject / UploadPart bodies above fail TOO_LARGE */
    int max_in_flight;       /* 0: 4 (at most 64); requests at once, all callers together */
    enum s3l_s3_integrity integrity;
    bool sign_payload;       /* sign the body's SHA-256 instead of UNSIGNED-PAYLOAD */
    /* 0: max_in_flight + 1, + 2 with Content-MD5 (full parts are hashed two at a time, so one
     * waits for the next). Part buffers (part_size bytes each) that all the client's streaming
     * uploads may hold at once, recycled between parts and uploads; an upload with no part
     * travelling may always take one (none would come back), so with U uploads open their
     * buffers stay within part_size * (max_part_buffers + 2U); one upload alone:
     * part_size * max_part_buffers. */
    int max_part_buffers;
    /* Where the credentials come from when access_key and secret_key are NULL: a provider
     * (include/s3l/creds.h), borrowed (it must outlive the client, and be safe to call from the
     * client's driving thread: a cache is). NULL: the AWS SDKs' default chain
     * (s3l_creds_default_chain_new: environment, profiles, credential_process, container,
     * IMDS), cached, owned by the client. Asked once at s3l_s3_client_new, again when the held
     * credentials are 5 minutes from expiring, and after an AUTH_EXPIRED answer (once). */
    struct s3l_creds_provider *credentials;
};

struct s3l_s3_client;

/*
 * Creates a client. Returns 0; S3L_EINVALID_CONFIG when the endpoint is not an http(s) URL, the
 * region is empty, or only one of access_key and secret_key is given (message names which);
 * the provider's failure when it gives no credentials (S3L_EAUTH_INVALID listing every source
 * tried, when the default chain finds none; see s3l_creds_provider_get); S3L_ENOMEM. *out is NULL
 * on failure.
 */
int s3l_s3_client_new(const struct s3l_s3_config *cfg, struct s3l_s3_client **out,
                      struct s3l_error *err);
void s3l_s3_client_free(struct s3l_s3_client *c); /* NULL is a no-op */

/*
 * Notes: things worth telling a user that are not failures. Today one: a bucket found in another
 * region than the client's (a 301 PermanentRedirect, a 400 AuthorizationHeaderMalformed naming
 * the region, or any failure carrying x-amz-bucket-region; S3 API reference, "Error
 * responses"). The request is sent once more, signed for the bucket's region (on AWS to
 * s3.REGION.amazonaws.com), and the client keeps that region for the rest of its life: the
 * handler hears of the move once per client (message: NUL-terminated, at most 399 bytes, valid
 * only during the call, naming the bucket and both regions; never a credential). It is called
 * from the thread driving the client's transfers with the client's lock held: it must not call
 * the client. A second redirect of the same request fails INVALID_CONFIG naming the region.
 */
typedef void (*s3l_s3_note_fn)(void *ctx, const char *message);
/* Sets the process's note handler (NULL: notes are dropped, the default). Set it before any
 * client is created; not safe to change while clients run. */
void s3l_s3_set_note_handler(s3l_s3_note_fn fn, void *ctx);

/* What the store told us of one object. */
struct s3l_s3_object {
    char *key;            /* owned by the list page it came from; NULL for a HEAD */
    uint64_t size;        /* bytes */
    int64_t mtime_ns;     /* Last-Modified, ns since the epoch; 0 when absent */
    char etag[S3L_S3_ETAG_MAX]; /* without quotes; "" when the store sent none */
    char upload_meta[128];      /* x-amz-meta-s3land-upload, "" when absent (HEAD only) */
};

/* Options of PutObject and CreateMultipartUpload. Zero-initialise. */
struct s3l_s3_put_options {
    bool if_none_match;          /* If-None-Match: * (PRECONDITION_FAILED if the key exists) */
    const char *if_match;        /* If-Match: ETAG, sent unquoted (RGW wants it so) */
    const char *content_type;
    const char *sse;             /* "AES256" (SSE-S3) or "aws:kms"; NULL: none */
    const char *sse_kms_key_id;  /* with sse "aws:kms" */
    const char *storage_class;   /* e.g. "STANDARD_IA"; NULL: the bucket's default */
    const char *upload_meta;     /* x-amz-meta-s3land-upload value; NULL: none */
};

/* Common results: every function returns 0 or a negative S3L_E* code and fills err:
 *   S3L_EINVALID_ARGUMENT  a bucket name or key S3 refuses (checked before sending: bucket
 *                          3-63 of [a-z0-9.-], key 1-1,024 bytes of valid UTF-8)
 *   S3L_EAUTH_INVALID, S3L_EAUTH_EXPIRED, S3L_EPERMISSION_DENIED, S3L_ENOT_FOUND,
 *   S3L_ETHROTTLED, S3L_ETRANSIENT (after the last attempt), S3L_ECONFLICT,
 *   S3L_EPRECONDITION_FAILED, S3L_EINVALID_CONFIG (wrong region: the message names the right
 *   one; endpoint unreachable by name or TLS refused), S3L_ECORRUPT (an answer that is not the
 *   XML expected: garbage or HTML), S3L_ETOO_LARGE (an answer over the cap), S3L_ENOMEM. */

/* PutObject: one request with Content-Length len (0 is an empty object). out may be NULL. */
int s3l_s3_put_object(struct s3l_s3_client *c, const char *bucket, const char *key,
                      const void *data, size_t len, const struct s3l_s3_put_options *opts,
                      struct s3l_s3_object *out, struct s3l_error *err);

/*
 * GetObject of bytes [offset, offset + len) (len 0: to the end). At most max bytes are accepted
 * (S3L_ETOO_LARGE above). *data (free with s3l_free; NUL-terminated, not counted) and *data_len
 * are set on success. out (may be NULL) gets size (whole object), ETag and mtime.
 */
int s3l_s3_get_object(struct s3l_s3_client *c, const char *bucket, const char *key,
                      uint64_t offset, uint64_t len, size_t max, uint8_t **data, size_t *data_len,
                      struct s3l_s3_object *out, struct s3l_error *err);

/*
 * HeadObject; NOT_FOUND when there is no such key.
 * GetObject and HeadObject answered 403 (S3 says 403, not 404, for a missing key when the caller
 * may not list it: a ListBucket granted only with an s3:prefix condition, say) are settled by a
 * ListObjectsV2 of that exact key (prefix = key, max-keys 1; one more request, allowed by such a
 * condition): absent, S3L_ENOT_FOUND (the message says how it was told); listed, or the list
 * refused too, S3L_EPERMISSION_DENIED stands, naming the operation, bucket, key and principal;
 * the list's S3L_EAUTH_INVALID / S3L_EAUTH_EXPIRED when it says the signature or the keys are
 * wrong (a HEAD's empty 403 cannot).
 */
int s3l_s3_head_object(struct s3l_s3_client *c, const char *bucket, const char *key,
                       struct s3l_s3_object *out, struct s3l_error *err);

/* HeadBucket; NOT_FOUND, PERMISSION_DENIED, or INVALID_CONFIG naming the bucket's region. */
int s3l_s3_head_bucket(struct s3l_s3_client *c, const char *bucket, struct s3l_error *err);

/*
 * Whether bucket can be reached, and its region, for a caller that may be granted nothing on the
 * bucket itself but a list under prefix ("" or "PREFIX/", ending in '/'; else
 * S3L_EINVALID_ARGUMENT). HeadBucket first; a 403 is settled by its x-amz-bucket-region header
 * (S3 sends it on a refused HeadBucket: the bucket exists, there), else by a ListObjectsV2 of
 * prefix with max-keys 1: under a policy granting ListBucket only with a `StringLike s3:prefix`
 * condition (PREFIX/ and a wildcard), HeadBucket (and GetBucketLocation) carry no s3:prefix and
 * are refused, the list is allowed. A bucket in another region is followed there first
 * (s3l_s3_set_note_handler).
 * region (64 bytes, NUL-terminated) gets the bucket's region: the header's, else the client's
 * after any redirect. Returns 0; S3L_ENOT_FOUND (no such bucket); the list's error when both
 * were refused (S3L_EPERMISSION_DENIED naming the bucket, the prefix and the principal; the
 * message says HeadBucket was refused too); any other HeadBucket failure as the common results.
 */
int s3l_s3_bucket_probe(struct s3l_s3_client *c, const char *bucket, const char *prefix,
                        char region[64], struct s3l_error *err);

/*
 * s3l_s3_bucket_probe for the bucket and prefix of an s3:// store (s3l_store_open): the
 * PREFIX/ of s3://BUCKET/PREFIX, "" for s3://BUCKET. S3L_EUNSUPPORTED for a store that is not
 * s3:// (message names its URL); otherwise as s3l_s3_bucket_probe.
 */
struct s3l_store;
int s3l_s3_store_bucket_probe(struct s3l_store *store, char region[64], struct s3l_error *err);

/* One page of ListObjectsV2. Free with s3l_s3_list_page_free. */
struct s3l_s3_list_page {
    struct s3l_s3_object *objects;
    size_t n_objects;
    char **prefixes; /* CommonPrefixes when a delimiter was given */
    size_t n_prefixes;
    bool truncated;
    char *next_token; /* NextContinuationToken, or NULL */
};
void s3l_s3_list_page_free(struct s3l_s3_list_page *p);

/*
 * ListObjectsV2: one page of keys under prefix (NULL or "": all) after continuation token
 * token (NULL: from the start), at most max_keys (0: 1,000). delimiter may be NULL.
 */
int s3l_s3_list_objects(struct s3l_s3_client *c, const char *bucket, const char *prefix,
                        const char *delimiter, const char *token, int max_keys,
                        struct s3l_s3_list_page *page, struct s3l_error *err);

/* Calls cb for every object under prefix, following continuation tokens; a non-zero cb return
 * stops the walk and is returned. */
typedef int (*s3l_s3_list_cb)(void *ctx, const struct s3l_s3_object *obj);
int s3l_s3_list_all(struct s3l_s3_client *c, const char *bucket, const char *prefix,
                    s3l_s3_list_cb cb, void *ctx, struct s3l_error *err);

/* DeleteObject. A missing key is success (S3 answers 204 either way). */
int s3l_s3_delete_object(struct s3l_s3_client *c, const char *bucket, const char *key,
                         struct s3l_error *err);

/* DeleteObjects in batches of S3L_S3_DELETE_BATCH. The first per-key error fails the call with
 * that key's code named in err. A DeleteObjects refused as a whole (403: Ceph RGW 16 wants
 * s3:DeleteObject on the bucket, which a policy granting it on PREFIX/ keys does not give) is
 * done key by key with DeleteObject, and so are the client's later ones. */
int s3l_s3_delete_objects(struct s3l_s3_client *c, const char *bucket, const char *const *keys,
                          size_t n, struct s3l_error *err);

/* CopyObject from src_bucket/src_key to bucket/key (server side, up to 5 GiB). A 200 carrying an
 * <Error> is that error. out may be NULL; out->etag is the new ETag. */
int s3l_s3_copy_object(struct s3l_s3_client *c, const char *src_bucket, const char *src_key,
                       const char *bucket, const char *key, struct s3l_s3_object *out,
                       struct s3l_error *err);

/*
 * CopyObject sent with opts' sse, sse_kms_key_id and storage_class (the other fields are not
 * used: content type and metadata are copied from the source). S3 gives a copy the encryption
 * and storage class its request names, else the destination bucket's defaults, never the
 * source's (S3 API reference, CopyObject, x-amz-server-side-encryption and
 * x-amz-storage-class): pass the staged file's settings to keep them. opts may be NULL. Errors
 * as s3l_s3_copy_object; S3L_EUNSUPPORTED for a 501 NotImplemented (Ceph RGW 16 on an SSE-KMS
 * source); S3L_EINVALID_ARGUMENT when an option holds CR or LF.
 */
int s3l_s3_copy_object_with(struct s3l_s3_client *c, const char *src_bucket,
                            const char *src_key, const char *bucket, const char *key,
                            const struct s3l_s3_put_options *opts, struct s3l_s3_object *out,
                            struct s3l_error *err);

/*
 * s3l_s3_copy with opts (sse, sse_kms_key_id, storage_class; NULL: none) on the CopyObject or
 * on the CreateMultipartUpload of the copy in parts. A CopyObject answered 501 NotImplemented
 * (S3L_EUNSUPPORTED: Ceph RGW 16 copying an SSE-KMS object) is done again as one multipart copy
 * (CreateMultipartUpload with the same headers, UploadPartCopy of the whole object, or of
 * part_size ranges above the threshold, CompleteMultipartUpload). Errors as s3l_s3_copy.
 */
int s3l_s3_copy_with(struct s3l_s3_client *c, const char *src_bucket, const char *src_key,
                     const char *bucket, const char *key, uint64_t threshold, uint64_t part_size,
                     const struct s3l_s3_put_options *opts, struct s3l_s3_object *out,
                     struct s3l_error *err);

/* CreateMultipartUpload; *upload_id is set (free with s3l_free). A PERMISSION_DENIED with
 * opts->sse "aws:kms" says in its message that kms:GenerateDataKey and kms:Decrypt on the key
 * are needed (S3 User Guide, "Multipart upload API and permissions": "the requester must have
 * permission to the kms:Decrypt and kms:GenerateDataKey actions on the key"). */
int s3l_s3_create_multipart(struct s3l_s3_client *c, const char *bucket, const char *key,
                            const struct s3l_s3_put_options *opts, char **upload_id,
                            struct s3l_error *err);

/* One part of a multipart upload: number 1..10,000, ETag (unquoted), size in bytes. */
struct s3l_s3_part {
    int number;
    char etag[S3L_S3_ETAG_MAX];
    uint64_t size;
};

/* UploadPart; part->number is read, part->etag and part->size are set. */
int s3l_s3_upload_part(struct s3l_s3_client *c, const char *bucket, const char *key,
                       const char *upload_id, const void *data, size_t len,
                       struct s3l_s3_part *part, struct s3l_error *err);

/* Parts sent at once (up to max_in_flight, lowered on SlowDown): data[i] of len[i] bytes as
 * parts[i].number. On failure the first error is returned; parts already sent stay sent. */
int s3l_s3_upload_parts(struct s3l_s3_client *c, const char *bucket, const char *key,
                        const char *upload_id, const void *const *data, const size_t *len,
                        struct s3l_s3_part *parts, size_t n, struct s3l_error *err);

/* UploadPartCopy of src bytes [first, last] (inclusive, as x-amz-copy-source-range says). */
int s3l_s3_upload_part_copy(struct s3l_s3_client *c, const char *bucket, const char *key,
                            const char *upload_id, const char *src_bucket, const char *src_key,
                            uint64_t first, uint64_t last, struct s3l_s3_part *part,
                            struct s3l_error *err);

/* CompleteMultipartUpload with parts in ascending number order. No low-speed timeout. out->etag
 * is the store's ETag ("" when the store sent an empty one, as Ceph RGW does). */
int s3l_s3_complete_multipart(struct s3l_s3_client *c, const char *bucket, const char *key,
                              const char *upload_id, const struct s3l_s3_part *parts, size_t n,
                              struct s3l_s3_object *out, struct s3l_error *err);

/* AbortMultipartUpload. NOT_FOUND when the upload is gone. */
int s3l_s3_abort_multipart(struct s3l_s3_client *c, const char *bucket, const char *key,
                           const char *upload_id, struct s3l_error *err);

/* One page of ListParts after part number marker (0: from the start), at most max (0: 1,000). */
struct s3l_s3_parts_page {
    struct s3l_s3_part *parts;
    size_t n;
    bool truncated;
    int next_marker;
};
void s3l_s3_parts_page_free(struct s3l_s3_parts_page *p);
int s3l_s3_list_parts(struct s3l_s3_client *c, const char *bucket, const char *key,
                      const char *upload_id, int marker, int max, struct s3l_s3_parts_page *page,
                      struct s3l_error *err);

/* One page of ListMultipartUploads under prefix after (key_marker, upload_id_marker). Asks for
 * encoding-type=url and gives keys decoded. A prefix with a character XML 1.0 cannot carry is
 * sent up to it and the rest matched here, so a page may hold fewer than max uploads (even none)
 * while truncated is set: page on until it is not. */
struct s3l_s3_upload_info {
    char *key;
    char *upload_id;
    int64_t initiated_ns; /* <Initiated>, ns since 1970 (0 when absent or unparsable) */
};
struct s3l_s3_uploads_page {
    struct s3l_s3_upload_info *uploads;
    size_t n;
    bool truncated;
    char *next_key_marker;
    char *next_upload_id_marker;
};
void s3l_s3_uploads_page_free(struct s3l_s3_uploads_page *p);
int s3l_s3_list_uploads(struct s3l_s3_client *c, const char *bucket, const char *prefix,
                        const char *key_marker, const char *upload_id_marker, int max,
                        struct s3l_s3_uploads_page *page, struct s3l_error *err);

/* ------------------------------------------------------------------ streaming uploads */

/*
 * A streaming upload: bytes are written in any pieces; they become parts of part_size bytes
 * (0: 8 MiB; at least 5 MiB, S3's minimum for all parts but the last), sent up to the client's
 * max_in_flight at once while the next part fills, so memory is bounded by
 * part_size * (max_in_flight + 1) per upload (+ 1 with Content-MD5) and by the client's
 * max_part_buffers for all uploads together, never by the object. Transfers move on at every
 * write. A part's CRC32C is computed piece by piece as bytes arrive; Content-MD5s two full parts
 * at a time (1.7 times the speed of one MD5), so a full part is sent when the next one is full
 * too, or at publish. Part bytes are copied once (into the part buffer; none at all with
 * s3l_s3_upload_reserve) and handed to libcurl from there. Several uploads of one client may run
 * at once, from one thread or many.
 * Nothing is visible until publish. An object that fits in one part is one PutObject (an empty
 * object is a PutObject with Content-Length 0); a larger one is a multipart upload, created at
 * the first full part with x-amz-meta-s3land-upload set to a random token, so that a Complete
 * whose outcome is unknown (reset, 5xx, NoSuchUpload after a lost answer) is settled by a HEAD:
 * the object is ours when it carries our token and our size. Conditions (opts->if_none_match,
 * if_match) go on the PutObject, or on the Complete (AWS honours them there; RGW 16 ignores
 * them, so callers that need a conditional write on RGW keep those objects below part_size).
 */
struct s3l_s3_upload;

/* S3's limits on one object: at most 5 TiB, at most 10,000 parts (the S3 API Reference, "Amazon
 * S3 multipart upload limits"). */
#define S3L_S3_MAX_OBJECT (5ull << 40)
#define S3L_S3_MAX_PARTS 10000u

/*
 * The part size for a multipart upload of an object of at most object_size bytes, all parts but
 * the last of this size: min_part (bytes; 0: 8 MiB, the AWS CLI's and SDKs' default chunk size)
 * when 10,000 parts of it hold object_size, else the smallest whole number of MiB whose 10,000
 * parts hold it (as the AWS SDKs' transfer managers raise their part size to
 * ceil(size / 10,000); whole MiB leave room for a file that passes its size by a row). So
 * 78.125 GiB (10,000 x 8 MiB) takes 8 MiB parts, one byte more 9 MiB, 5 TiB 525 MiB (S3's part
 * limit is 5 GiB). Returns 0 when object_size exceeds S3L_S3_MAX_OBJECT: no part size can
 * upload it.
 */
uint64_t s3l_s3_part_size(uint64_t object_size, uint64_t min_part);

/* Starts an upload of bucket/key. opts (may be NULL) is copied. */
int s3l_s3_upload_begin(struct s3l_s3_client *c, const char *bucket, const char *key,
                        const struct s3l_s3_put_options *opts, size_t part_size,
                        struct s3l_s3_upload **out, struct s3l_error *err);

/* Appends len bytes. On failure the upload is poisoned: publish fails, abort cleans up. */
int s3l_s3_upload_write(struct s3l_s3_upload *u, const void *data, size_t len,
                        struct s3l_error *err);

/*
 * Lets the parts of u already sent move on without waiting (one round of the client's transfers,
 * or none when another thread is driving them or no part of u travels): libcurl sends a body
 * and takes in an answer only while driven, and a writer that encodes between two writes (a
 * Parquet row group) drives nothing. A full part held back for its Content-MD5 partner (MD5
 * integrity hashes two full parts at once) is sent alone first. Cheap when nothing travels (no
 * lock, no system call), so a writer may call it every few rows. Never blocks and never fails:
 * a part that failed poisons u as a failed write does, and the next write, stage or publish
 * returns its error. NULL: no-op.
 */
void s3l_s3_upload_progress(struct s3l_s3_upload *u);

/*
 * Zero-copy writing: *buf receives the free room of the part being filled (*room bytes, > 0,
 * at most the part size), for the caller to fill (read(2) straight into it, say); then
 * s3l_s3_upload_commit(u, n) appends its first n bytes (n <= *room; 0 is allowed). Nothing else
 * may be called on u in between. Errors as s3l_s3_upload_write (memory, a failed part).
 */
int s3l_s3_upload_reserve(struct s3l_s3_upload *u, void **buf, size_t *room,
                          struct s3l_error *err);
int s3l_s3_upload_commit(struct s3l_s3_upload *u, size_t n, struct s3l_error *err);

/* Makes the object visible (PutObject, or the last parts then CompleteMultipartUpload, then a
 * HEAD when the store's ETag is empty) and fills out (may be NULL). Frees u, also on failure
 * (a failed multipart upload is aborted). Never a low-speed timeout on the Complete. */
int s3l_s3_upload_publish(struct s3l_s3_upload *u, struct s3l_s3_object *out,
                          struct s3l_error *err);

/*
 * A staged upload (s3l_s3_upload_stage): a multipart upload with every part sent and none
 * completed. upload_id (owned: s3l_free), token (the x-amz-meta-s3land-upload value it was
 * created with), parts[n_parts] (owned: s3l_free; ETags unquoted) and size (bytes, the parts'
 * sum) are all s3l_s3_complete_staged needs, in this process or another.
 */
struct s3l_s3_staged {
    char *upload_id;
    char token[33];
    struct s3l_s3_part *parts;
    size_t n_parts;
    uint64_t size;
};

/*
 * Ends u without publishing: the last parts are sent (a multipart upload is created even for
 * one small part: never a PutObject), every part waited for, and the upload left pending; *out
 * (zeroed first) gets what completes it. Frees u whatever the outcome (on failure the upload is
 * aborted). Errors: u's earlier failure; S3L_EINVALID_ARGUMENT for 0 bytes written (S3 needs a
 * part); UploadPart's and CreateMultipartUpload's errors; S3L_ENOMEM.
 */
int s3l_s3_upload_stage(struct s3l_s3_upload *u, struct s3l_s3_staged *out,
                        struct s3l_error *err);

/*
 * Completes a staged upload of bucket/key, idempotently, as s3l_s3_upload_publish settles a
 * Complete: CompleteMultipartUpload with parts[n] (no low-speed timeout: a slow store is waited
 * for), and when it answers NoSuchUpload (AWS, after an earlier Complete), 5xx after the retries
 * (Ceph RGW, also for made-up upload ids) or 200 with an empty ETag (RGW's answer to a repeated
 * Complete), a HEAD of the key decides: done when the object carries token in
 * x-amz-meta-s3land-upload and is size bytes (never an ETag computed from the parts: not an MD5
 * under SSE-KMS). Otherwise: S3L_ENOT_FOUND when the upload is gone and no object is at the
 * key, S3L_ECONFLICT when the object there is not this upload's, or the Complete's own error;
 * every message names the key.
 */
int s3l_s3_complete_staged(struct s3l_s3_client *c, const char *bucket, const char *key,
                           const char *upload_id, const char *token, uint64_t size,
                           const struct s3l_s3_part *parts, size_t n, struct s3l_s3_object *out,
                           struct s3l_error *err);

/* Abandons the upload (AbortMultipartUpload when one was created) and frees u. NULL: no-op. */
void s3l_s3_upload_abort(struct s3l_s3_upload *u);

/* Bytes written so far. */
uint64_t s3l_s3_upload_size(const struct s3l_s3_upload *u);

/*
 * Server-side copy of src_bucket/src_key to bucket/key: CopyObject up to threshold bytes (0: 5 GiB,
 * S3's CopyObject limit), else a multipart upload of UploadPartCopy ranges of part_size (0: 512
 * MiB). S3L_ENOT_FOUND when the source is missing.
 */
int s3l_s3_copy(struct s3l_s3_client *c, const char *src_bucket, const char *src_key,
                const char *bucket, const char *key, uint64_t threshold, uint64_t part_size,
                struct s3l_s3_object *out, struct s3l_error *err);

/*
 * n CopyObjects within bucket, src_keys[i] to keys[i], sent together (up to max_in_flight at
 * once, each retried as any request): one round trip for all of them instead of n. Each source
 * must be at most 5 GiB (CopyObject's limit; larger ones: s3l_s3_copy). Returns 0 when every
 * copy succeeded, else the first failure (S3L_ENOT_FOUND for a missing source, the copy's S3
 * error; err names its key); the other copies may have happened.
 */
int s3l_s3_copy_objects(struct s3l_s3_client *c, const char *bucket, const char *const *src_keys,
                        const char *const *keys, size_t n, struct s3l_error *err);

/*
 * One PutObject of a batch (s3l_s3_put_objects): key, its body (len bytes, borrowed until the
 * call returns) and options (NULL: none), as s3l_s3_put_object takes them; rc, err and etag are
 * the answer, filled by the call (etag without quotes, "" on failure).
 */
struct s3l_s3_put_item {
    const char *key;
    const void *data;
    size_t len;
    const struct s3l_s3_put_options *opts;
    int rc;
    struct s3l_error err;
    char etag[S3L_S3_ETAG_MAX];
};

/*
 * n PutObjects within bucket, sent together (up to the client's in-flight limit at once, each
 * retried as any request, each with its integrity header and conditions): one round trip for
 * all of them instead of n (issue 14 item 2: the markers of an epoch's streams). Every item is
 * sent and answered on its own: a failed one (S3L_EPRECONDITION_FAILED for a condition that
 * failed, or any error of s3l_s3_put_object, in the item's err naming its key) does not stop
 * the others. Returns 0 when every item succeeded, else the first failing item's code.
 */
int s3l_s3_put_objects(struct s3l_s3_client *c, const char *bucket, struct s3l_s3_put_item *items,
                       size_t n);

/* What one read of a batch (s3l_s3_read_objects) asks for. */
enum s3l_s3_read_kind {
    S3L_S3_READ_GET,  /* GetObject of the whole object, at most max bytes */
    S3L_S3_READ_HEAD, /* HeadObject */
    S3L_S3_READ_LIST  /* the first page (1,000 keys) of ListObjectsV2 under key as the prefix */
};

/*
 * One read of a batch: kind and key (the prefix for a list; "" lists the bucket), max for a
 * GET (the cap on the body; over it: S3L_ETOO_LARGE). Filled by the call: rc and err (as the
 * single operation would give them: S3L_ENOT_FOUND for a missing key, a 403 on GET/HEAD settled
 * as s3l_s3_get_object settles it); for a GET data (owned by the caller, s3l_free;
 * NUL-terminated, the NUL not counted in len) and object (size = the object's bytes, ETag,
 * Last-Modified); for a HEAD object; for a list page (s3l_s3_list_page_free; page.truncated
 * says whether more keys follow).
 */
struct s3l_s3_read_item {
    enum s3l_s3_read_kind kind;
    const char *key;
    size_t max;
    int rc;
    struct s3l_error err;
    uint8_t *data;
    size_t len;
    struct s3l_s3_object object;
    struct s3l_s3_list_page page;
};

/*
 * n independent reads within bucket, sent together (up to the client's in-flight limit at once,
 * each retried as any request): one round trip for a start's checkpoint, schema records and
 * listings instead of one each (issue 14 item 2). Each item gets its own answer (above); a 403
 * on a GET or HEAD is settled afterwards, one by one. Never fails as a whole: an item that
 * could not even be prepared (a bad key, no memory) has that error.
 */
void s3l_s3_read_objects(struct s3l_s3_client *c, const char *bucket,
                         struct s3l_s3_read_item *items, size_t n);

/* As s3l_s3_copy, with the source's size in bytes already known (from a checkpoint or a listing):
 * no HeadObject is sent to learn it, so a copy up to threshold is the one CopyObject request.
 * A wrong size only picks the other method: CopyObject refuses a source over 5 GiB (the error is
 * returned), UploadPartCopy ranges past the end fail with InvalidRange. */
int s3l_s3_copy_sized(struct s3l_s3_client *c, const char *src_bucket, const char *src_key,
                      uint64_t size, const char *bucket, const char *key, uint64_t threshold,
                      uint64_t part_size, struct s3l_s3_object *out, struct s3l_error *err);
/* s3l_s3_copy_sized with encryption and storage class as s3l_s3_copy_with sends them (and its
 * fallback to UploadPartCopy when CopyObject answers 501 NotImplemented). */
int s3l_s3_copy_sized_with(struct s3l_s3_client *c, const char *src_bucket, const char *src_key,
                           uint64_t size, const char *bucket, const char *key, uint64_t threshold,
                           uint64_t part_size, const struct s3l_s3_put_options *opts,
                           struct s3l_s3_object *out, struct s3l_error *err);

/*
 * Who the client signs as (`s3land check`'s first step). source: botocore's method string of the
 * credentials ("env", "shared-credentials-file", "assume-role", ...); key_id: the access key id
 * as its first 4 and last 4 characters ("AKIA...WXYZ"; whole when 8 or fewer); role_arn: the
 * assumed role's session ARN when the credentials came from AssumeRole or
 * AssumeRoleWithWebIdentity, else ""; arn: the caller's ARN from STS GetCallerIdentity (from_sts
 * true), else role_arn, else "" (then why_no_arn says what STS answered). All NUL-terminated.
 */
struct s3l_s3_identity {
    char source[40];
    char key_id[16];
    char role_arn[512];
    char arn[512];
    bool from_sts;
    char why_no_arn[400];
};

/*
 * Fills out for client c: STS GetCallerIdentity (no permission needed) signed with the client's
 * current credentials, sent to AWS_ENDPOINT_URL_STS, AWS_ENDPOINT_URL, else the client's own
 * endpoint when it has one (Ceph RGW serves STS there; a store without STS answers an error,
 * recorded in why_no_arn), else https://sts.REGION.amazonaws.com. A failing STS call is no
 * failure here: out says who the key is without it. Returns 0, or S3L_ENOMEM. Thread-safe.
 */
int s3l_s3_caller_identity(struct s3l_s3_client *c, struct s3l_s3_identity *out,
                           struct s3l_error *err);

/* The region the client signs for now, into out (cap bytes, NUL-terminated): the configured
 * one, or the bucket's after a redirect was followed (s3l_s3_set_note_handler). Thread-safe. */
void s3l_s3_client_region(struct s3l_s3_client *c, char *out, size_t cap);

/* Counters since the client was made: HTTP attempts sent, retries, SlowDown answers. */
void s3l_s3_client_counters(const struct s3l_s3_client *c, uint64_t *requests, uint64_t *retries,
                            uint64_t *slowdowns);

/* The S3 operations the client sends, in the order s3l_s3_client_op_counts reports them. */
#define S3L_S3_N_OPS 16

/*
 * Requests sent since the client was made, by S3 operation: names[i] (static strings, the S3 API
 * Reference's operation names: "PutObject", "GetObject", "HeadObject", "HeadBucket",
 * "ListObjectsV2", "DeleteObject", "DeleteObjects", "CopyObject", "CreateMultipartUpload",
 * "UploadPart", "UploadPartCopy", "CompleteMultipartUpload", "AbortMultipartUpload",
 * "ListParts", "ListMultipartUploads", and "Other" for anything else) and n[i] the HTTP
 * attempts of it (a retried request counts once per attempt, as the store and its bill see
 * it). Either array may be NULL; both hold S3L_S3_N_OPS entries. Returns the total, the same as
 * s3l_s3_client_counters' requests. Thread-safe (takes the client's lock).
 */
uint64_t s3l_s3_client_op_counts(struct s3l_s3_client *c, const char *names[S3L_S3_N_OPS],
                                 uint64_t n[S3L_S3_N_OPS]);

/* ------------------------------------------------------------------ the s3:// store backend */

#define S3L_S3_STORE_OPTIONS_VERSION 1

/*
 * Options of the s3 store backend, passed as struct s3l_store_options.s3 to s3l_store_open for an
 * s3://BUCKET/PREFIX URL (include/s3l/store.h). Zero-initialise and set version; NULL options
 * mean all defaults. client: the client's configuration (NULL: all defaults; no environment is read); the
 * store options' region and endpoint, when set, override it. part_size: 0 is 8 MiB.
 * copy_threshold: copies above it go by UploadPartCopy (0: 5 GiB); copy_part_size (0: 512 MiB).
 */
struct s3l_s3_store_options {
    int version;
    const struct s3l_s3_config *client;
    size_t part_size;
    uint64_t copy_threshold;
    uint64_t copy_part_size;
    /* Encryption, sent on every PutObject, CreateMultipartUpload and CopyObject of the store
     * (markers and checkpoints too; a copy keeps it: s3l_s3_copy_with): sse "AES256",
     * "aws:kms" or "aws:kms:dsse" (NULL: the bucket's default), sse_kms_key_id with aws:kms
     * (NULL: the account's aws/s3 key). storage_class (NULL: STANDARD, S3's default) on
     * objects outside "_openetl/" only, the destination's metadata root (docs/design.md: a
     * checkpoint is never in an archive class), so on the copies to the final keys, never on
     * staged files. Copied at open; checked by s3l_s3_sse_check (S3L_EINVALID_CONFIG). */
    const char *sse;
    const char *sse_kms_key_id;
    const char *storage_class;
};

/*
 * The S3 client, bucket and key prefix ("" or "PREFIX/") of store s when it is the s3 backend's
 * (s3l_store_open of an s3://BUCKET/PREFIX URL, without a wrapper); all borrowed from the store,
 * valid while it is open. Returns 0, or S3L_EUNSUPPORTED (another backend; *c etc. untouched).
 * For probes the store's vtable has no operation for (HeadBucket, GetCallerIdentity).
 */
struct s3l_store;
int s3l_s3_store_client(struct s3l_store *s, struct s3l_s3_client **c, const char **bucket,
                        const char **prefix);

/*
 * Checks encryption and storage class values against the S3 API reference's lists (sse.c names
 * them; NULL is "not set" for each). Returns 0, or S3L_EINVALID_CONFIG naming the value and the
 * valid ones; a KMS key id without sse aws:kms (or aws:kms:dsse) is refused too.
 */
int s3l_s3_sse_check(const char *sse, const char *kms_key_id, const char *storage_class,
                     struct s3l_error *err);

#endif
