/*
 * The transport's answers and retries (http.c drives the requests): an S3 or curl failure as an
 * error with its S3 code, status and request id (store text redacted of the client's secrets),
 * the retry rules of docs/design.md section 5 (capped exponential backoff with full jitter,
 * RequestTimeTooSkewed's clock correction, SlowDown's halving of the requests in flight), the
 * credentials of an attempt, and the trace line of a finished attempt (docs/internals/s3.md).
 */
#include <stdlib.h>

#include <openssl/crypto.h>

#include "os/os.h"
#include "s3/s3_int.h"

/* ------------------------------------------------------------------ answers and retries */

int s3l__s3_code_to_error(long status, const char *s3_code)
{
    static const struct {
        const char *code;
        int err;
    } map[] = {
        {"SlowDown", S3L_ETHROTTLED},
        {"Throttling", S3L_ETHROTTLED},
        {"ThrottlingException", S3L_ETHROTTLED},
        {"RequestLimitExceeded", S3L_ETHROTTLED},
        {"TooManyRequests", S3L_ETHROTTLED},
        {"ServiceUnavailable", S3L_ETRANSIENT},
        {"InternalError", S3L_ETRANSIENT},
        {"RequestTimeout", S3L_ETRANSIENT},
        /* the digest was computed from the very bytes we sent: a mismatch is damage in
         * transit, and sending them again heals it */
        {"BadDigest", S3L_ETRANSIENT},
        {"XAmzContentChecksumMismatch", S3L_ETRANSIENT},
        {"RequestTimeTooSkewed", S3L_ETRANSIENT},
        {"ExpiredToken", S3L_EAUTH_EXPIRED},
        {"TokenRefreshRequired", S3L_EAUTH_EXPIRED},
        {"InvalidAccessKeyId", S3L_EAUTH_INVALID},
        {"SignatureDoesNotMatch", S3L_EAUTH_INVALID},
        {"InvalidToken", S3L_EAUTH_INVALID},
        {"AccessDenied", S3L_EPERMISSION_DENIED},
        {"AllAccessDisabled", S3L_EPERMISSION_DENIED},
        {"NoSuchKey", S3L_ENOT_FOUND},
        {"NoSuchBucket", S3L_ENOT_FOUND},
        {"NoSuchUpload", S3L_ENOT_FOUND},
        {"PreconditionFailed", S3L_EPRECONDITION_FAILED},
        {"ConditionalRequestConflict", S3L_ECONFLICT},
        {"OperationAborted", S3L_ECONFLICT},
        {"BucketAlreadyExists", S3L_ECONFLICT},
        {"EntityTooLarge", S3L_ETOO_LARGE},
        {"PermanentRedirect", S3L_EINVALID_CONFIG},
        {"AuthorizationHeaderMalformed", S3L_EINVALID_CONFIG},
        {"InvalidBucketName", S3L_EINVALID_ARGUMENT},
        {"KeyTooLongError", S3L_EINVALID_ARGUMENT},
        {"NotImplemented", S3L_EUNSUPPORTED}, /* 501: RGW's CopyObject of SSE-KMS (copy.c) */
    };
    for (size_t i = 0; s3_code && i < S3L_ARRAY_LEN(map); i++)
        if (strcmp(map[i].code, s3_code) == 0)
            return map[i].err;
    if (status == 429)
        return S3L_ETHROTTLED;
    if (status >= 500)
        return S3L_ETRANSIENT;
    switch (status) {
    case 301:
    case 307:
        return S3L_EINVALID_CONFIG;
    case 304:
    case 412:
        return S3L_EPRECONDITION_FAILED;
    case 401:
        return S3L_EAUTH_INVALID;
    case 403:
        return S3L_EPERMISSION_DENIED;
    case 404:
        return S3L_ENOT_FOUND;
    case 409:
        return S3L_ECONFLICT;
    case 413:
        return S3L_ETOO_LARGE;
    default:
        return S3L_EINVALID_ARGUMENT;
    }
}

const char *s3l__http_what(const struct s3l__http_req *r)
{
    if (r->key && *r->key)
        return r->key;
    if (r->prefix && *r->prefix)
        return r->prefix; /* a list: the prefix is what it was refused */
    return r->bucket ? r->bucket : "";
}

/*
 * Removes credentials from text (cap bytes, NUL-terminated) that came from the store: a store may
 * echo a request header in its <Message> (a crafted one: "token ${x-amz-security-token} is
 * invalid"), or any text of its own. Every run of 8 or more bytes that is part of the secret
 * access key or the session token (a store may cut them), and the access key id whole, become
 * "[redacted]", before the text enters a message, the --json output or a trace line.
 */
static void redact(const struct s3l_s3_client *c, char *text, size_t cap)
{
    const char *secrets[3] = {c->secret_key, c->session_token, c->access_key};
    char out[S3L_ERROR_MESSAGE_MAX + 16];
    size_t o = 0, n = strlen(text);
    bool changed = false;
    for (size_t i = 0; i < n;) {
        size_t best = 0;
        for (int k = 0; k < 3; k++) {
            const char *sec = secrets[k];
            size_t len = sec ? strlen(sec) : 0;
            if (len == 0)
                continue;
            size_t need = k == 2 ? len : S3L_MIN(len, (size_t)8);
            for (size_t j = 0; j < len && (k != 2 || j == 0); j++) {
                size_t m = 0;
                while (i + m < n && j + m < len && text[i + m] == sec[j + m])
                    m++;
                if (m >= need && m > best)
                    best = m;
            }
        }
        if (best) {
            const char *mark = "[redacted]";
            for (size_t q = 0; mark[q] && o < sizeof(out) - 1; q++)
                out[o++] = mark[q];
            i += best;
            changed = true;
        } else if (o < sizeof(out) - 1) {
            out[o++] = text[i++];
        } else {
            i++;
        }
    }
    if (changed) {
        size_t k = S3L_MIN(o, cap - 1);
        memcpy(text, out, k);
        text[k] = 0;
    }
}

/* Appends to an access failure's message who was refused and where (issue 11, item 2): the
 * principal (the assumed role's ARN, or the access key id's first 4 and last 4 characters), the
 * credentials' source (botocore's method string), the bucket and the key. */
static void who_was_refused(const struct s3l_s3_client *c, struct s3l__http_req *r)
{
    char key[16] = "";
    const char *id = c->access_key ? c->access_key : "";
    size_t n = strlen(id);
    if (n <= 8)
        snprintf(key, sizeof(key), "%s", id);
    else
        snprintf(key, sizeof(key), "%.4s...%s", id, id + n - 4);
    size_t at = strlen(r->err.message);
    snprintf(r->err.message + at, sizeof(r->err.message) - at,
             "; as %.300s%s%s%s (credentials from %s), bucket %.63s, %s %.200s",
             c->principal ? c->principal : key, c->principal ? " (key " : "",
             c->principal ? key : "", c->principal ? ")" : "",
             c->creds_source[0] ? c->creds_source : "a provider", r->bucket ? r->bucket : "",
             r->key && *r->key ? "key"
             : r->prefix       ? "prefix"
                               : "key",
             r->key && *r->key         ? r->key
             : r->prefix && *r->prefix ? r->prefix
             : r->prefix               ? "(none: the bucket's root)"
                                       : "(none)");
}

/* Fills r->err from an S3 answer; returns the code. */
static int s3_failure(struct s3l_s3_client *c, struct s3l__http_req *r,
                      const struct s3l__s3_error_body *e, bool xml)
{
    const char *code = e->code[0] ? e->code : NULL;
    int rc = s3l__s3_code_to_error(r->status, code);
    if (!r->bucket_region[0]) /* one place for region.c to look */
        snprintf(r->bucket_region, sizeof(r->bucket_region), "%s", e->region);
    const char *region = r->bucket_region;
    s3l_error_clear(&r->err);
    if (rc == S3L_EINVALID_CONFIG && region[0]) { /* the region moves once (region.c) */
        bool again = strcmp(region, r->signed_region) == 0;
        s3l_error_set(&r->err, rc, "%s %s: bucket %s is in region %s, %s %s%s%s", r->op,
                      s3l__http_what(r), r->bucket ? r->bucket : "", region,
                      again ? "the store says, yet it refused a request signed for" : "not",
                      again ? region : r->signed_region, again ? "" : ": set the region to ",
                      again ? "" : region);
    } else if (!xml && r->status != 200 && r->resp.len > 0) {
        s3l_error_set(&r->err, rc, "%s %s: HTTP %ld with an answer that is not S3 XML%s%s", r->op,
                      s3l__http_what(r), r->status, r->request_id[0] ? ", request id " : "",
                      r->request_id);
    } else {
        s3l_error_set(&r->err, rc, "%s %s: %s (HTTP %ld%s%s)%s%.200s", r->op, s3l__http_what(r),
                      code ? code : "no S3 error code", r->status,
                      r->request_id[0] || e->request_id[0] ? ", request id " : "",
                      r->request_id[0] ? r->request_id : e->request_id, e->message[0] ? ": " : "",
                      e->message);
    }
    r->err.http_status = (int)r->status;
    snprintf(r->err.s3_code, sizeof(r->err.s3_code), "%s", code ? code : "");
    snprintf(r->err.request_id, sizeof(r->err.request_id), "%s",
             r->request_id[0] ? r->request_id : e->request_id);
    r->err.retryable = s3l_error_retryable(rc);
    /* Everything above but op and key came from the store: its code, message, request ids and
     * region. */
    redact(c, r->err.message, sizeof(r->err.message));
    redact(c, r->err.s3_code, sizeof(r->err.s3_code));
    redact(c, r->err.request_id, sizeof(r->err.request_id));
    if (rc == S3L_EAUTH_INVALID || rc == S3L_EAUTH_EXPIRED || rc == S3L_EPERMISSION_DENIED)
        who_was_refused(c, r);
    return rc;
}

static int curl_failure(struct s3l__http_req *r, CURLcode cc)
{
    int rc;
    const char *why = r->curl_err[0] ? r->curl_err : curl_easy_strerror(cc);
    s3l_error_clear(&r->err);
    if (r->too_large) {
        return s3l_error_set(&r->err, S3L_ETOO_LARGE,
                             "%s %s: the answer is over the cap of %zu "
                             "bytes",
                             r->op, s3l__http_what(r), r->resp_cap);
    }
    switch (cc) {
    case CURLE_URL_MALFORMAT:
    case CURLE_UNSUPPORTED_PROTOCOL:
        rc = S3L_EINVALID_CONFIG;
        break;
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_ISSUER_ERROR:
        rc = S3L_EINVALID_CONFIG; /* a TLS refusal does not heal by itself */
        break;
    case CURLE_OUT_OF_MEMORY:
        rc = S3L_ENOMEM;
        break;
    default:
        rc = S3L_ETRANSIENT; /* resets, timeouts, refused or unresolved endpoints */
        break;
    }
    s3l_error_set(&r->err, rc, "%s %s: %s", r->op, s3l__http_what(r), why);
    r->err.retryable = rc == S3L_ETRANSIENT;
    return rc;
}

/* Classifies a finished attempt into r->rc / r->err. */
void s3l__http_finish_attempt(struct s3l_s3_client *c, struct s3l__http_req *r, CURLcode cc)
{
    curl_easy_getinfo(r->easy, CURLINFO_RESPONSE_CODE, &r->status);
    struct s3l__s3_error_body e;
    memset(&e, 0, sizeof(e));
    if (cc != CURLE_OK) {
        r->rc = curl_failure(r, cc);
    } else if (r->status >= 200 && r->status < 300) {
        r->rc = 0;
        if (r->error_in_200 && s3l__xml_error(r->resp.ptr, r->resp.len, &e)) {
            r->rc = s3_failure(c, r, &e, true);
            if (r->rc == S3L_EINVALID_ARGUMENT) /* an unknown code in a 200: try again */
                r->rc = r->err.code = S3L_ETRANSIENT;
        } else if (r->needs_etag && !r->etag[0]) {
            /* Retried as a lost answer: the write may have happened, and the conditional write
             * that follows learns it (412, then the caller's read). */
            r->rc = s3l_error_set(&r->err, S3L_ETRANSIENT,
                                  "%s %s: the store answered %ld without an ETag", r->op,
                                  r->key ? r->key : "", r->status);
        }
    } else if (r->status == 404 && r->not_found_ok) {
        r->rc = 0;
    } else {
        bool xml = s3l__xml_error(r->resp.ptr, r->resp.len, &e);
        if (!xml && r->resp.len == 0) { /* HEAD answers have no body: name the status */
            const char *name = r->status == 301   ? "PermanentRedirect"
                               : r->status == 403 ? "Forbidden"
                               : r->status == 404 ? "NotFound"
                               : r->status == 412 ? "PreconditionFailed"
                                                  : "";
            snprintf(e.code, sizeof(e.code), "%s", name);
        }
        r->rc = s3_failure(c, r, &e, xml);
    }
    if (r->rc == 0)
        s3l_error_clear(&r->err);
}

static uint64_t next_rand(struct s3l_s3_client *c)
{
    c->rng ^= c->rng << 13; /* xorshift64: jitter needs no cryptographic strength */
    c->rng ^= c->rng >> 7;
    c->rng ^= c->rng << 17;
    return c->rng;
}

/* Capped exponential backoff with full jitter: uniform in [0, min(max, base * 2^attempt)). */
static int64_t backoff_ms(struct s3l_s3_client *c, int attempt)
{
    int64_t cap = c->backoff_base_ms;
    for (int i = 1; i < attempt && cap < c->backoff_max_ms; i++)
        cap *= 2;
    cap = S3L_MIN(cap, (int64_t)c->backoff_max_ms);
    return cap > 0 ? (int64_t)(next_rand(c) % (uint64_t)cap) : 0;
}

int s3l__s3_refresh_creds(struct s3l_s3_client *c, struct s3l_error *err)
{
    struct s3l_credentials got = {0};
    int rc = s3l_creds_provider_get(c->creds, &got, err);
    if (rc != 0)
        return rc;
    if (c->secret_key)
        OPENSSL_cleanse(c->secret_key, strlen(c->secret_key));
    if (c->session_token)
        OPENSSL_cleanse(c->session_token, strlen(c->session_token));
    s3l_free(c->access_key), s3l_free(c->secret_key), s3l_free(c->session_token);
    /* the strings move to the client (s3l_malloc'ed, as include/s3l/creds.h says) */
    c->access_key = got.access_key_id, c->secret_key = got.secret_access_key;
    c->session_token = got.session_token;
    c->creds_expiration_ns = got.expiration_ns;
    snprintf(c->creds_source, sizeof(c->creds_source), "%s", got.source);
    s3l_free(c->principal);
    c->principal = got.principal;
    c->creds_stale = false;
    return 0;
}

/* Before an attempt: fresh credentials after AUTH_EXPIRED, or within 5 minutes of Expiration
 * (the cache behind c->creds answers from memory otherwise, so this costs nothing then). */
int s3l__http_current_creds(struct s3l_s3_client *c, struct s3l_error *err)
{
    const int64_t ahead = 300 * (int64_t)1000000000;
    if (!c->creds_stale &&
        (c->creds_expiration_ns == 0 || s3l__os_now_ns() < c->creds_expiration_ns - ahead))
        return 0;
    return s3l__s3_refresh_creds(c, err);
}

/* After a failed attempt: whether to try again, and the adjustments the answer asks for. */
bool s3l__http_should_retry(struct s3l_s3_client *c, struct s3l__http_req *r, int64_t *delay)
{
    *delay = 0;
    if (!s3l_error_retryable(r->rc) || r->attempts >= c->max_attempts)
        return false;
    if (strcmp(r->err.s3_code, "RequestTimeTooSkewed") == 0) {
        int64_t server = s3l__parse_time_ns(r->date) / 1000000000;
        if (server > 0) {
            c->clock_offset_s = (long)(server - (s3l__os_now_ns() / 1000000000));
            return true; /* re-signed at once with the corrected clock */
        }
    }
    if (r->rc == S3L_EAUTH_EXPIRED) {
        if (r->attempts > 1)
            return false; /* refreshed once already: the new credentials are no better */
        s3l_creds_cache_invalidate(c->creds); /* a cache asks its source again */
        c->creds_stale = true;
        return true;
    }
    if (r->rc == S3L_ETHROTTLED) {
        c->n_slowdowns++;
        c->in_flight_limit = S3L_MAX(1, c->in_flight_limit / 2);
        c->successes_since_slowdown = 0;
    }
    *delay = backoff_ms(c, r->attempts);
    return true;
}

/* One JSON line per attempt to the client's trace callback (include/s3l/s3.h; fields in
 * docs/internals/s3.md, "Trace"). A line that cannot be built (out of memory) is dropped: the
 * trace is a diagnostic, never a reason to fail a request. */
void s3l__http_trace(struct s3l_s3_client *c, const struct s3l__http_req *r, int64_t ms)
{
    if (!c->trace)
        return;
    curl_off_t up = 0, down = 0;
    curl_easy_getinfo(r->easy, CURLINFO_SIZE_UPLOAD_T, &up);
    curl_easy_getinfo(r->easy, CURLINFO_SIZE_DOWNLOAD_T, &down);
    struct s3l_buf b;
    s3l_buf_init(&b, 64 * 1024); /* a 1,024-byte key escaped 6 to 1 fits */
    /* keys can hold any byte: write them JSON-escaped so that a line stays one line */
    int rc = s3l_buf_printf(&b, "{\"op\":\"%s\",\"bucket\":\"%s\",\"key\":\"", r->op,
                            r->bucket ? r->bucket : "");
    for (const unsigned char *k = (const unsigned char *)(r->key ? r->key : ""); rc == 0 && *k;
         k++) {
        if (*k == '"' || *k == '\\')
            rc = s3l_buf_printf(&b, "\\%c", *k);
        else if (*k < 0x20)
            rc = s3l_buf_printf(&b, "\\u%04x", *k);
        else
            rc = s3l_buf_append(&b, k, 1);
    }
    /* The request id is the store's text (a header): redacted, and kept to printable ASCII other
     * than quote and backslash so that the line stays JSON. */
    char rid[sizeof(r->request_id)];
    snprintf(rid, sizeof(rid), "%s", r->request_id);
    redact(c, rid, sizeof(rid));
    for (char *p = rid; *p; p++)
        if ((unsigned char)*p < 0x20 || (unsigned char)*p > 0x7e || *p == '"' || *p == '\\')
            *p = '?';
    if (rc == 0)
        rc = s3l_buf_printf(&b,
                            "\",\"status\":%ld,\"bytes_out\":%lld,\"bytes_in\":%lld,\"ms\":%lld,"
                            "\"request_id\":\"%s\",\"attempt\":%d,\"error\":\"%s\"}\n",
                            r->status, (long long)up, (long long)down, (long long)ms, rid,
                            r->attempts, r->rc ? s3l_error_name(r->rc) : "");
    if (rc == 0)
        c->trace(c->trace_ctx, (const char *)b.ptr, b.len);
    s3l_buf_free(&b);
}
