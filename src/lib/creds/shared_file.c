/*
 * creds: keys in the shared credentials file, botocore's SharedCredentialProvider (method
 * "shared-credentials-file"): section [NAME] of ~/.aws/credentials (or
 * AWS_SHARED_CREDENTIALS_FILE). The key id decides, as in the environment.
 */
#include "creds/creds.h"

#include "util/util.h"

/* The profile's keys from the credentials file into out. */
static int keys(const struct s3l__profile *p, const struct s3l__creds_opts *o,
                struct s3l_credentials *out, struct s3l_error *err)
{
    const char *path = o->credentials_file;
    if (!p->creds_found)
        return s3l_error_set(err, S3L_ENOT_FOUND, "%s not found", path);
    if (!s3l__ini_has(&p->creds, o->profile))
        return s3l_error_set(err, S3L_ENOT_FOUND, "no [%.100s] in %s", o->profile, path);
    const char *ak = s3l__profile_creds(p, "aws_access_key_id");
    const char *sk = s3l__profile_creds(p, "aws_secret_access_key");
    const char *tok = s3l__profile_creds(p, "aws_security_token");
    if (!tok)
        tok = s3l__profile_creds(p, "aws_session_token");
    if (!ak)
        return s3l_error_set(err, S3L_ENOT_FOUND, "[%.100s] in %s has no aws_access_key_id",
                             o->profile, path);
    if (!sk)
        return s3l_error_set(err, S3L_EAUTH_INVALID,
                             "[%.100s] in %s has aws_access_key_id but no aws_secret_access_key",
                             o->profile, path);
    if (s3l__creds_fill(out, ak, sk, tok, 0, "shared-credentials-file") != 0)
        return s3l_error_set(err, S3L_ENOMEM, "out of memory for credentials");
    return 0;
}

static int get(void *impl, struct s3l_credentials *out, struct s3l_error *err)
{
    struct s3l__profile p;
    int rc = s3l__profile_load(impl, &p, err);
    if (rc != 0)
        return rc;
    rc = keys(&p, impl, out, err);
    s3l__profile_free(&p);
    return rc;
}

static const struct s3l_creds_provider_ops ops = {
    S3L_CREDS_PROVIDER_OPS_VERSION, "shared-credentials-file", get, s3l__creds_opts_destroy};

int s3l_creds_shared_file_new(const struct s3l_creds_options *opts,
                              struct s3l_creds_provider **out, struct s3l_error *err)
{
    return s3l__creds_profile_provider_new(opts, &ops, out, err);
}
