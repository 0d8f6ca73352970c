/*
 * creds: a role on top of other credentials (the CLI's --role-arn, a destination's aws.role):
 * STS AssumeRole (sts.c) signed with what the source provider gives, source "assume-role" as
 * botocore names every AssumeRole result. The source is asked at every get, so a refreshable
 * source (an instance role, a cache) stays fresh; put a cache (s3l_creds_cache_new) over this
 * provider so that AssumeRole is called again only 5 minutes before the role's Expiration.
 */
#include "creds/creds.h"

#include <string.h>

#include "util/util.h"

struct role {
    struct s3l_creds_provider *source;
    char *arn, *external_id, *session, *region, *endpoint;
    int duration;
};

static int get(void *impl, struct s3l_credentials *out, struct s3l_error *err)
{
    struct role *r = impl;
    struct s3l_credentials src = {0};
    struct s3l_error e = {0};
    int rc = s3l_creds_provider_get(r->source, &src, &e);
    if (rc != 0)
        return s3l_error_set(err, rc, "the credentials to assume role %.200s with: %s", r->arn,
                             e.message);
    struct s3l__sts_request rq = {0};
    rq.action = "AssumeRole";
    rq.role_arn = r->arn;
    rq.session_name = r->session;
    rq.external_id = r->external_id;
    rq.duration_seconds = r->duration;
    rq.signer = &src;
    rq.region = r->region;
    rq.endpoint = r->endpoint;
    rq.source = "assume-role";
    rc = s3l__sts_assume(&rq, out, err);
    s3l_credentials_cleanup(&src);
    return rc;
}

static void destroy(void *impl)
{
    struct role *r = impl;
    s3l_creds_provider_free(r->source);
    s3l_free(r->arn), s3l_free(r->external_id), s3l_free(r->session);
    s3l_free(r->region), s3l_free(r->endpoint);
    s3l_free(r);
}

static const struct s3l_creds_provider_ops ops = {S3L_CREDS_PROVIDER_OPS_VERSION, "assume-role",
                                                  get, destroy};

static bool dup_opt(char **dst, const char *src)
{
    *dst = src && *src ? s3l_strdup(src) : NULL;
    return !src || !*src || *dst;
}

int s3l_creds_role_new(const struct s3l_creds_role_options *ro, struct s3l_creds_provider *source,
                       struct s3l_creds_provider **out, struct s3l_error *err)
{
    *out = NULL;
    if (!ro || ro->version != S3L_CREDS_ROLE_OPTIONS_VERSION || !source || !ro->role_arn ||
        strncmp(ro->role_arn, "arn:", 4) != 0 || ro->duration_seconds < 0) {
        s3l_creds_provider_free(source);
        return s3l_error_set(err, S3L_EINVALID_ARGUMENT,
                             "role options: wrong version, no source, a role ARN that does not "
                             "start with arn:, or a negative duration");
    }
    struct role *r = s3l_calloc(1, sizeof(*r));
    if (!r) {
        s3l_creds_provider_free(source);
        return s3l_error_set(err, S3L_ENOMEM, "out of memory for a role provider");
    }
    r->source = source;
    r->duration = ro->duration_seconds;
    if (!dup_opt(&r->arn, ro->role_arn) || !dup_opt(&r->external_id, ro->external_id) ||
        !dup_opt(&r->session, ro->session_name) || !dup_opt(&r->region, ro->region) ||
        !dup_opt(&r->endpoint, ro->sts_endpoint)) {
        destroy(r);
        return s3l_error_set(err, S3L_ENOMEM, "out of memory for a role provider");
    }
    int rc = s3l_creds_provider_new(&ops, r, out, err);
    if (rc != 0)
        destroy(r);
    return rc;
}
