/*
 * creds: EC2 instance metadata, IMDSv2, botocore's InstanceMetadataProvider (method
 * "iam-role"). The steps are the EC2 User Guide's ("Retrieve security credentials from
 * instance metadata", "Use IMDSv2"):
 *   PUT /latest/api/token with X-aws-ec2-metadata-token-ttl-seconds: 21600 -> a session token;
 *   GET /latest/meta-data/iam/security-credentials/ -> the role name (first line);
 *   GET /latest/meta-data/iam/security-credentials/ROLE -> JSON with Code "Success",
 *   AccessKeyId, SecretAccessKey, Token, Expiration;
 * each GET with the token in X-aws-ec2-metadata-token. A token PUT answered 403, 404 or 405 is
 * an IMDSv1-only service: the GETs then go without a token, as botocore falls back.
 * AWS_EC2_METADATA_DISABLED=true turns the source off; AWS_EC2_METADATA_SERVICE_ENDPOINT moves
 * it. Every request has a 1 s timeout and no retry, so a machine that is not an instance loses
 * at most a second. Unlike the container endpoint, IMDS is never "configured": any failure is
 * "nothing here" (botocore returns no credentials and the chain ends).
 */
#include "creds/creds.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <openssl/crypto.h>

#include "util/util.h"

#define TOKEN_TTL_HEADER "X-aws-ec2-metadata-token-ttl-seconds: 21600"
#define CREDS_PATH "/latest/meta-data/iam/security-credentials/"

struct imds {
    char base[512];
    char token_header[1200]; /* "X-aws-ec2-metadata-token: ..." or "" (IMDSv1) */
};

static int step(struct imds *m, const char *method, const char *path, const char *what,
                struct s3l_buf *body, struct s3l_error *err)
{
    char url[1200];
    snprintf(url, sizeof(url), "%s%s", m->base, path);
    const char *put[] = {TOKEN_TTL_HEADER, NULL};
    const char *get[] = {m->token_header[0] ? m->token_header : NULL, NULL};
    long status = 0;
    char reason[128];
    s3l_buf_reset(body);
    int rc = s3l__creds_http(method, url, strcmp(method, "PUT") == 0 ? put : get, &status, body,
                             reason, sizeof(reason), err);
    if (rc != 0)
        return rc;
    if (status == 0)
        return s3l_error_set(err, S3L_ENOT_FOUND, "%s (%s): %s", m->base, what, reason);
    if (status != 200) {
        if (err)
            err->http_status = (int)status;
        return s3l_error_set(err, S3L_ENOT_FOUND, "%s answered HTTP %ld to %s", m->base, status,
                             what);
    }
    return 0;
}

static int token(struct imds *m, struct s3l_buf *body, struct s3l_error *err)
{
    struct s3l_error e = {0};
    int rc = step(m, "PUT", "/latest/api/token", "the token PUT", body, &e);
    if (rc == S3L_ENOT_FOUND &&
        (e.http_status == 403 || e.http_status == 404 || e.http_status == 405)) {
        m->token_header[0] = '\0'; /* IMDSv1 only: go on without a token */
        return 0;
    }
    if (rc != 0)
        return s3l_error_set(err, rc, "%s", e.message);
    if (body->len == 0 || body->len > 1000 || memchr(body->ptr, '\n', body->len))
        return s3l_error_set(err, S3L_ENOT_FOUND, "%s: a malformed session token", m->base);
    snprintf(m->token_header, sizeof(m->token_header), "X-aws-ec2-metadata-token: %s",
             (const char *)body->ptr);
    return 0;
}

static int fetch(struct imds *m, struct s3l_credentials *out, struct s3l_buf *body,
                 struct s3l_error *err)
{
    int rc = token(m, body, err);
    if (rc == 0)
        rc = step(m, "GET", CREDS_PATH, "the role name", body, err);
    if (rc != 0)
        return rc;
    char role[256];
    s3l__creds_first_line((const char *)body->ptr, body->len, role, sizeof(role));
    if (!role[0] || strchr(role, '/') || strchr(role, ' '))
        return s3l_error_set(err, S3L_ENOT_FOUND, "%s: the instance has no IAM role", m->base);
    char path[sizeof(CREDS_PATH) + sizeof(role)];
    snprintf(path, sizeof(path), "%s%s", CREDS_PATH, role);
    if ((rc = step(m, "GET", path, "the role's credentials", body, err)) != 0)
        return rc;
    if (strstr((const char *)body->ptr, "\"Code\"") &&
        !strstr((const char *)body->ptr, "\"Success\""))
        return s3l_error_set(err, S3L_ENOT_FOUND, "%s: role %s: Code is not Success", m->base,
                             role);
    rc = s3l__creds_from_json((const char *)body->ptr, body->len, "the instance metadata answer",
                              "Token", false, "iam-role", out, err);
    if (rc != S3L_EINVALID_CONFIG)
        return rc;
    if (err)
        err->code = S3L_ENOT_FOUND; /* a malformed answer is no credentials, as botocore's {} */
    return S3L_ENOT_FOUND;
}

static int get(void *impl, struct s3l_credentials *out, struct s3l_error *err)
{
    const char *off = getenv("AWS_EC2_METADATA_DISABLED");
    if (off && strcasecmp(off, "true") == 0)
        return s3l_error_set(err, S3L_ENOT_FOUND, "off (AWS_EC2_METADATA_DISABLED)");
    const char *ep = getenv("AWS_EC2_METADATA_SERVICE_ENDPOINT");
    struct imds m = {{0}, {0}};
    snprintf(m.base, sizeof(m.base), "%s", ep && *ep ? ep : "http://169.254.169.254");
    for (size_t n = strlen(m.base); n > 0 && m.base[n - 1] == '/'; n--)
        m.base[n - 1] = '\0';
    struct s3l_buf body;
    s3l_buf_init(&body, S3L__CREDS_MAX_FILE);
    /* one allocation for any usual answer: a realloc would leave the secret in freed memory */
    int rc = s3l_buf_reserve(&body, 64 * 1024) != 0
                 ? s3l_error_set(err, S3L_ENOMEM, "out of memory")
                 : fetch(&m, out, &body, err);
    if (body.ptr)
        OPENSSL_cleanse(body.ptr, body.len);
    s3l_buf_free(&body);
    OPENSSL_cleanse(m.token_header, sizeof(m.token_header));
    return rc;
}

static const struct s3l_creds_provider_ops ops = {S3L_CREDS_PROVIDER_OPS_VERSION, "iam-role",
                                                  get, NULL};

int s3l_creds_imds_new(struct s3l_creds_provider **out, struct s3l_error *err)
{
    return s3l_creds_provider_new(&ops, NULL, out, err);
}
