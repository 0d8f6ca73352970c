/*
 * creds: an sso_* profile (botocore's SSOProvider, method "sso"). s3land does not log in to IAM
 * Identity Center; such a profile is refused with the way that works: a credential_process
 * that prints the profile's credentials (the AWS CLI's `aws configure export-credentials
 * --profile NAME --format process`). Refusing, not skipping, keeps the chain from using another
 * identity than the profile's.
 */
#include "creds/creds.h"

#include "util/util.h"

static int get(void *impl, struct s3l_credentials *out, struct s3l_error *err)
{
    const struct s3l__creds_opts *o = impl;
    struct s3l__profile p;
    int rc = s3l__profile_load(o, &p, err);
    if (rc != 0)
        return rc;
    /* botocore's SSOProvider claims a profile by sso_role_name or sso_account_id */
    if (!s3l__profile_get(&p, "sso_role_name") && !s3l__profile_get(&p, "sso_account_id"))
        rc = s3l_error_set(err, S3L_ENOT_FOUND, "no sso_* in profile %.100s", o->profile);
    else
        rc = s3l_error_set(err, S3L_EUNSUPPORTED,
                           "profile %.100s is an SSO profile, which s3land cannot log in to; add "
                           "credential_process = aws configure export-credentials --profile "
                           "%.100s --format process (in a profile of its own)",
                           o->profile, o->profile);
    s3l__profile_free(&p);
    return rc;
}

static const struct s3l_creds_provider_ops ops = {S3L_CREDS_PROVIDER_OPS_VERSION, "sso", get,
                                                  s3l__creds_opts_destroy};

int s3l__creds_sso_new(const struct s3l_creds_options *opts, struct s3l_creds_provider **out,
                       struct s3l_error *err)
{
    return s3l__creds_profile_provider_new(opts, &ops, out, err);
}
