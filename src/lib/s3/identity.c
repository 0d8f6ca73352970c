/*
 * Who the client's requests are signed as (s3l_s3_caller_identity), for `s3land check`'s first
 * step: the credentials' source (botocore's method string), the access key id shown as its first
 * 4 and last 4 characters, and the principal's ARN from STS GetCallerIdentity (which needs no
 * permission), sent to AWS_ENDPOINT_URL_STS, else the client's own endpoint when it has one (Ceph
 * RGW serves STS on its S3 endpoint, when rgw_s3_auth_use_sts is on), else STS in the client's
 * region. A store without STS answers GetCallerIdentity with an error or not at all: then the ARN
 * of an assumed role (from its AssumeRole answer) or nothing, and why is said.
 */
#include <stdio.h>
#include <string.h>

#include "creds/creds.h"
#include "s3/s3_int.h"
#include "util/util.h"

/* A copy of s into *dst (NULL stays NULL); false when out of memory. */
static bool copy_str(char **dst, const char *s)
{
    *dst = s ? s3l_strdup(s) : NULL;
    return !s || *dst;
}

/* The client's keys as they sign now, copied under its lock (the copy is wiped by
 * s3l_credentials_cleanup). */
static int snapshot(struct s3l_s3_client *c, struct s3l_credentials *cr, char *endpoint,
                    size_t cap, char *region, size_t rcap)
{
    pthread_mutex_lock(&c->mu);
    bool ok = copy_str(&cr->access_key_id, c->access_key) &&
              copy_str(&cr->secret_access_key, c->secret_key) &&
              copy_str(&cr->session_token, c->session_token) &&
              copy_str(&cr->principal, c->principal);
    snprintf(cr->source, sizeof(cr->source), "%s", c->creds_source);
    int rc = ok ? 0 : S3L_ENOMEM;
    if (!c->aws)
        snprintf(endpoint, cap, "%s://%s", c->scheme, c->host);
    snprintf(region, rcap, "%s", c->region);
    pthread_mutex_unlock(&c->mu);
    return rc;
}

int s3l_s3_caller_identity(struct s3l_s3_client *c, struct s3l_s3_identity *out,
                           struct s3l_error *err)
{
    memset(out, 0, sizeof(*out));
    struct s3l_credentials cr = {0};
    char endpoint[300] = "", region[64] = "";
    if (snapshot(c, &cr, endpoint, sizeof(endpoint), region, sizeof(region)) != 0) {
        s3l_credentials_cleanup(&cr);
        return s3l_error_set(err, S3L_ENOMEM, "out of memory copying the credentials");
    }
    snprintf(out->source, sizeof(out->source), "%s", cr.source);
    s3l__creds_abbrev(cr.access_key_id, out->key_id, sizeof(out->key_id));
    if (cr.principal)
        snprintf(out->role_arn, sizeof(out->role_arn), "%s", cr.principal);
    char *arn = NULL;
    struct s3l_error e = {0};
    int rc = s3l_creds_caller_identity(&cr, region, NULL, endpoint[0] ? endpoint : NULL, &arn, &e);
    if (rc == 0) {
        snprintf(out->arn, sizeof(out->arn), "%s", arn);
        out->from_sts = true;
    } else if (rc == S3L_ENOMEM) {
        s3l_credentials_cleanup(&cr);
        return s3l_error_set(err, rc, "out of memory asking STS GetCallerIdentity");
    } else {
        snprintf(out->why_no_arn, sizeof(out->why_no_arn), "%.340s [%s]", e.message,
                 s3l_error_name(rc));
        if (cr.principal)
            snprintf(out->arn, sizeof(out->arn), "%s", cr.principal);
    }
    s3l_free(arn);
    s3l_credentials_cleanup(&cr);
    return 0;
}

void s3l_s3_client_region(struct s3l_s3_client *c, char *out, size_t cap)
{
    pthread_mutex_lock(&c->mu);
    snprintf(out, cap, "%s", c->region);
    pthread_mutex_unlock(&c->mu);
}
