/*
 * creds: the container credentials endpoint, botocore's ContainerProvider (method
 * "container-role"), used by ECS tasks and EKS Pod Identity. The rules are the AWS SDKs'
 * ("Container credential provider" in the SDKs and Tools Reference Guide):
 * - AWS_CONTAINER_CREDENTIALS_RELATIVE_URI is a path on http://169.254.170.2, and wins;
 * - else AWS_CONTAINER_CREDENTIALS_FULL_URI: any https URL, or http only to a loopback host,
 *   169.254.170.2 (ECS) or 169.254.170.23 / fd00:ec2::23 (EKS Pod Identity), so that a token
 *   is never sent in clear across a network;
 * - the Authorization header is the content of AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE (read at
 *   every get: EKS rotates it), else AWS_CONTAINER_AUTHORIZATION_TOKEN;
 * - the answer is JSON with AccessKeyId, SecretAccessKey, Token, Expiration.
 * Once the variables are set the source is configured: a failure stops the chain (botocore
 * raises CredentialRetrievalError), it is not skipped.
 */
#include "creds/creds.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>
#include <openssl/crypto.h>

#include "os/os.h"
#include "util/util.h"

static const char *var(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

static bool allowed_http_host(const char *host)
{
    static const char *const ok[] = {"localhost", "169.254.170.2", "169.254.170.23",
                                     "[fd00:ec2::23]", "fd00:ec2::23", "[::1]", "::1"};
    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
        if (strcmp(host, ok[i]) == 0)
            return true;
    return strncmp(host, "127.", 4) == 0; /* 127.0.0.0/8 is loopback */
}

/* Checks FULL_URI's scheme and host. 0 or S3L_EINVALID_CONFIG. */
static int check_full_uri(const char *url, struct s3l_error *err)
{
    CURLU *u = curl_url();
    char *scheme = NULL, *host = NULL;
    int rc = 0;
    if (!u || curl_url_set(u, CURLUPART_URL, url, 0) != CURLUE_OK ||
        curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK ||
        curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK)
        rc = s3l_error_set(err, S3L_EINVALID_CONFIG,
                           "AWS_CONTAINER_CREDENTIALS_FULL_URI %.200s is not a URL", url);
    else if (strcmp(scheme, "https") != 0 &&
             !(strcmp(scheme, "http") == 0 && allowed_http_host(host)))
        rc = s3l_error_set(err, S3L_EINVALID_CONFIG,
                           "AWS_CONTAINER_CREDENTIALS_FULL_URI %.200s: http is allowed only to a "
                           "loopback address, 169.254.170.2 or 169.254.170.23; use https",
                           url);
    curl_free(scheme), curl_free(host);
    curl_url_cleanup(u);
    return rc;
}

/* The "Authorization: ..." header line into *line (s3l_malloc'ed), or NULL without a token. */
static int auth_header(char **line, struct s3l_error *err)
{
    *line = NULL;
    const char *file = var("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE");
    const char *tok = var("AWS_CONTAINER_AUTHORIZATION_TOKEN");
    struct s3l_buf b;
    s3l_buf_init(&b, 64 * 1024);
    int rc = 0;
    if (file) {
        struct s3l_error e = {0};
        if ((rc = s3l__os_read_file(file, 64 * 1024, &b, &e)) != 0)
            s3l_error_set(err, rc, "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE: %s", e.message);
        while (rc == 0 && b.len > 0 && (b.ptr[b.len - 1] == '\n' || b.ptr[b.len - 1] == '\r'))
            b.ptr[--b.len] = '\0';
        tok = (const char *)b.ptr;
    }
    if (rc == 0 && tok && (strchr(tok, '\n') || strchr(tok, '\r')))
        rc = s3l_error_set(err, S3L_EINVALID_CONFIG,
                           "the container authorization token holds a line break");
    if (rc == 0 && tok && *tok) {
        size_t n = strlen(tok) + sizeof("Authorization: ");
        if (!(*line = s3l_malloc(n)))
            rc = s3l_error_set(err, S3L_ENOMEM, "out of memory");
        else
            snprintf(*line, n, "Authorization: %s", tok);
    }
    if (b.ptr)
        OPENSSL_cleanse(b.ptr, b.len);
    s3l_buf_free(&b);
    return rc;
}

static int fetch(const char *url, struct s3l_credentials *out, struct s3l_error *err)
{
    char *auth = NULL;
    int rc = auth_header(&auth, err);
    struct s3l_buf body;
    s3l_buf_init(&body, S3L__CREDS_MAX_FILE);
    /* one allocation for any usual answer: a realloc would leave the secret in freed memory */
    if (rc == 0 && s3l_buf_reserve(&body, 64 * 1024) != 0)
        rc = s3l_error_set(err, S3L_ENOMEM, "out of memory");
    long status = 0;
    char reason[128] = "";
    for (int attempt = 0; rc == 0 && attempt < 3; attempt++) {
        const char *headers[] = {"Accept: application/json", auth, NULL};
        s3l_buf_reset(&body);
        rc = s3l__creds_http("GET", url, headers, &status, &body, reason, sizeof(reason), err);
        if (rc != 0 || (status >= 200 && status < 500))
            break; /* an answer; only silence and 5xx are tried again */
    }
    if (rc == 0 && status == 0)
        rc = s3l_error_set(err, S3L_ETRANSIENT, "container endpoint %.200s: %s", url, reason);
    else if (rc == 0 && status != 200)
        rc = s3l_error_set(err, status >= 500 ? S3L_ETRANSIENT : S3L_EAUTH_INVALID,
                           "container endpoint %.200s answered HTTP %ld", url, status);
    else if (rc == 0)
        rc = s3l__creds_from_json((const char *)body.ptr, body.len, "the container endpoint's "
                                  "answer", "Token", false, "container-role", out, err);
    if (auth)
        OPENSSL_cleanse(auth, strlen(auth)), s3l_free(auth);
    if (body.ptr)
        OPENSSL_cleanse(body.ptr, body.len);
    s3l_buf_free(&body);
    return rc;
}

static int get(void *impl, struct s3l_credentials *out, struct s3l_error *err)
{
    const char *rel = var("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI");
    const char *full = var("AWS_CONTAINER_CREDENTIALS_FULL_URI");
    if (!rel && !full)
        return s3l_error_set(err, S3L_ENOT_FOUND,
                             "AWS_CONTAINER_CREDENTIALS_*_URI not set");
    if (rel) {
        size_t n = strlen(rel) + 32;
        char *url = s3l_malloc(n);
        if (!url)
            return s3l_error_set(err, S3L_ENOMEM, "out of memory");
        snprintf(url, n, "http://169.254.170.2%s%s", rel[0] == '/' ? "" : "/", rel);
        int rc = fetch(url, out, err);
        s3l_free(url);
        return rc;
    }
    int rc = check_full_uri(full, err);
    return rc ? rc : fetch(full, out, err);
}

static const struct s3l_creds_provider_ops ops = {S3L_CREDS_PROVIDER_OPS_VERSION,
                                                  "container-role", get, NULL};

int s3l_creds_container_new(struct s3l_creds_provider **out, struct s3l_error *err)
{
    return s3l_creds_provider_new(&ops, NULL, out, err);
}
