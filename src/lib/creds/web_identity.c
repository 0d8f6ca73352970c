/*
 * creds: web identity, botocore's AssumeRoleWithWebIdentityProvider (method
 * "assume-role-with-web-identity"): AWS_WEB_IDENTITY_TOKEN_FILE with AWS_ROLE_ARN (EKS IRSA),
 * or the profile's web_identity_token_file with role_arn. The environment is read first, then
 * the profile, as botocore does (its _get_config takes the environment variable over the
 * profile key).
 *
 * This build has no STS client yet: the setup is recognised and refused with S3L_EUNSUPPORTED
 * (the chain stops, as botocore's does), so no other identity is used in its place.
 */
#include "creds/creds.h"

#include <stdlib.h>

#include "util/util.h"

static const char *var(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

static int get(void *impl, struct s3l_credentials *out, struct s3l_error *err)
{
    const struct s3l__creds_opts *o = impl;
    struct s3l__profile p;
    int rc = s3l__profile_load(o, &p, err);
    if (rc != 0)
        return rc;
    /* a profile named in code turns the environment's settings off (botocore's
     * disable_env_vars) */
    const char *file = o->profile_explicit ? NULL : var("AWS_WEB_IDENTITY_TOKEN_FILE");
    const char *arn = o->profile_explicit ? NULL : var("AWS_ROLE_ARN");
    if (!file)
        file = s3l__profile_get(&p, "web_identity_token_file");
    if (!arn)
        arn = s3l__profile_get(&p, "role_arn");
    if (!file)
        rc = s3l_error_set(err, S3L_ENOT_FOUND, "AWS_WEB_IDENTITY_TOKEN_FILE not set");
    else if (!arn)
        rc = s3l_error_set(err, S3L_EINVALID_CONFIG,
                           "a web identity token file (%.200s) but no role ARN (AWS_ROLE_ARN or "
                           "role_arn in profile %.100s)",
                           file, o->profile);
    else
        rc = s3l_error_set(err, S3L_EUNSUPPORTED,
                           "web identity for role %.200s: STS AssumeRoleWithWebIdentity is not "
                           "built yet (issue 11)",
                           arn);
    s3l__profile_free(&p);
    return rc;
}

static const struct s3l_creds_provider_ops ops = {S3L_CREDS_PROVIDER_OPS_VERSION,
                                                  "assume-role-with-web-identity", get,
                                                  s3l__creds_opts_destroy};

int s3l__creds_web_identity_new(const struct s3l_creds_options *opts,
                                struct s3l_creds_provider **out, struct s3l_error *err)
{
    return s3l__creds_profile_provider_new(opts, &ops, out, err);
}
