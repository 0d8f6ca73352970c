/*
 * creds: the few HTTP requests of the endpoint providers (container credentials, instance
 * metadata) and of the STS client (sts.c), straight through libcurl: creds may not include the
 * s3 module (s3 -> creds is the allowed direction). The endpoints' requests have a 1 s connect
 * and total timeout, so a laptop never waits for an instance that is not there, and never go
 * through a proxy; STS's take their own timeout and honour the proxy variables, as the SDKs do.
 */
#include "creds/creds.h"

#include <stdio.h>
#include <string.h>

#include <curl/curl.h>
#include <openssl/crypto.h>

#include "util/util.h"

struct sink {
    struct s3l_buf *b;
    int rc;
};

static size_t on_body(char *data, size_t size, size_t n, void *ctx)
{
    struct sink *s = ctx;
    if (s3l_buf_append(s->b, data, size * n) != 0) {
        s->rc = S3L_ETOO_LARGE;
        return 0;
    }
    return size * n;
}

int s3l__creds_http(const char *method, const char *url, const char *const *headers,
                    long *status, struct s3l_buf *body, char *reason, size_t reason_max,
                    struct s3l_error *err)
{
    struct s3l__creds_http_req rq = {method, url, headers, NULL, 0, 1000, true};
    return s3l__creds_http_do(&rq, status, body, reason, reason_max, err);
}

static void wipe_list(struct curl_slist *hl)
{
    for (struct curl_slist *i = hl; i; i = i->next)
        OPENSSL_cleanse(i->data, strlen(i->data)); /* an authorization token, an IMDS token */
    curl_slist_free_all(hl);
}

int s3l__creds_http_do(const struct s3l__creds_http_req *rq, long *status, struct s3l_buf *body,
                       char *reason, size_t reason_max, struct s3l_error *err)
{
    const char *method = rq->method, *url = rq->url;
    const char *const *headers = rq->headers;
    *status = 0;
    reason[0] = '\0';
    CURL *h = curl_easy_init();
    struct curl_slist *hl = NULL;
    for (int i = 0; headers && headers[i]; i++) {
        struct curl_slist *n = curl_slist_append(hl, headers[i]);
        if (!n) {
            wipe_list(hl);
            curl_easy_cleanup(h);
            return s3l_error_set(err, S3L_ENOMEM, "out of memory for an HTTP request");
        }
        hl = n;
    }
    if (!h) {
        wipe_list(hl);
        return s3l_error_set(err, S3L_ENOMEM, "out of memory for an HTTP request");
    }
    struct sink s = {body, 0};
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
    if (strcmp(method, "PUT") == 0 || strcmp(method, "POST") == 0) {
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, rq->body ? (const char *)rq->body : "");
        curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE, (long)rq->body_len);
    }
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hl);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, S3L_MIN(rq->timeout_ms, 5000L));
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, rq->timeout_ms);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    if (rq->no_proxy)
        curl_easy_setopt(h, CURLOPT_NOPROXY, "*"); /* link-local and loopback: never via a proxy */
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &s);
    CURLcode cc = curl_easy_perform(h);
    int rc = 0;
    if (s.rc != 0) {
        rc = s3l_error_set(err, s.rc, "answer of %.200s is over %d bytes", url,
                           S3L__CREDS_MAX_FILE);
    } else if (cc == CURLE_OPERATION_TIMEDOUT) {
        snprintf(reason, reason_max, "no answer in %ld s", rq->timeout_ms / 1000);
    } else if (cc != CURLE_OK) {
        snprintf(reason, reason_max, "%s", curl_easy_strerror(cc));
    } else {
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, status);
    }
    wipe_list(hl);
    curl_easy_cleanup(h);
    return rc;
}
